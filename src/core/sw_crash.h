/*
 * SPEC 8, "from storm to crash", beside the stream engine: death markers,
 * silent ranks, the first death of a crash (with late-arrival revision),
 * warnings from device capacity and growth, blind ranks. The engine
 * (sw_detect_feed.c) calls sw_crash_feed() once per event, after SPEC 6's step
 * 5, and reads the records it made with sw_crash_next(). Internal to
 * src/core; pure like the engine: no I/O, no clock, no globals.
 */
#ifndef SW_CRASH_H
#define SW_CRASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_analysis.h"
#include "sw_event.h"
#include "sw_types.h"
#include "sw_varint.h"

struct sw_detector_s;
struct job_s;
struct sw_cjob_s; /* a job's SPEC 8 state (sw_crash_int.h) */
struct sw_xout_s; /* the detector's SPEC 8 records (sw_crash_int.h) */

/**
 * @brief Feed one event of job @p j (SPEC 8), after SPEC 6 handled it.
 * @param ri    the event's SPEC 6 rank index when it is a non-duplicate
 *              sample (UINT32_MAX otherwise).
 * @param blind SPEC 6 made a record (not a summary) for this event: list
 *              the job's blind ranks for it (SPEC 8.5, sw_crash_blind()).
 */
void sw_crash_feed(struct sw_detector_s *det, struct job_s *j, uint32_t ri, const sw_event_t *ev,
                   bool blind, int64_t offset);

/** @brief The blind ranks (sorted) the event last fed listed for SPEC 6's
 *         record; none unless sw_crash_feed() was asked for them. */
void sw_crash_blind(const struct sw_detector_s *det, const int64_t **ranks, size_t *n);

/**
 * @brief The job is summarised (SPEC 6 step 6: end of input, job idle):
 *        its open crash and open warning close with a record each (read
 *        them with sw_crash_next(), after the summary). Forgets the records
 *        of the event last fed.
 */
void sw_crash_summarised(struct sw_detector_s *det, struct job_s *j);

/** @brief After sw_crash_summarised(): the job's latest crash as it stood
 *         before the summary (for the summary's title), NULL none. */
const sw_x8_t *sw_crash_job_crash(const struct sw_detector_s *det);

/** @brief The next SPEC 8 record of the event last fed, or NULL. */
const sw_record_t *sw_crash_next(struct sw_detector_s *det);

/** @brief Forget the records of the previous event (start of a feed). */
void sw_crash_begin(struct sw_detector_s *det);

/** @brief Free a job's SPEC 8 state (accepts NULL). */
void sw_crash_job_free(struct sw_cjob_s *cj);

/** @brief Free the detector's record buffers (accepts NULL). */
void sw_crash_out_free(struct sw_xout_s *xo);

/** @brief Bytes of the record buffers. */
size_t sw_crash_out_bytes(const struct sw_xout_s *xo);

/** @brief Bytes of a job's SPEC 8 state. */
size_t sw_crash_job_bytes(const struct sw_cjob_s *cj);

/** @brief Ranks blind now in the job. */
size_t sw_crash_job_blind(const struct sw_cjob_s *cj);

/** @brief Append the SPEC 8 section of a snapshot (every live job in order). */
void sw_crash_save(const struct sw_detector_s *det, sw_buf_t *out);

/** @brief Read it back into a restored detector. @returns false when malformed. */
bool sw_crash_load(struct sw_detector_s *det, sw_vrd_t *r);

/** @brief sw_crash_save() as SW8a (v0.3.0 reads it), SW8b's fields (per job
 *         with SPEC 8's state, in order) into @p ext; @p ext NULL: SW8b. */
void sw_crash_save_as(const struct sw_detector_s *det, sw_buf_t *out, sw_buf_t *ext);

/** @brief Read SW8b's fields that sw_crash_save_as() put into its @p ext
 *         into a detector restored from the SW8a section. @returns false
 *         when malformed. */
bool sw_crash_load_ext(struct sw_detector_s *det, sw_vrd_t *r);

#endif /* SW_CRASH_H */
