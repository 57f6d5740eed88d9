/*
 * The one codec of the daemon's state snapshots (src/daemon/sw_run_state.c
 * writes and reads them; sw_run.c's commit callback reads the metadata):
 *  - the commit metadata that names a committed snapshot, stored with the
 *    input partition's committed offset: "sw1:FIRST:CHUNKS:ID:X" (FIRST the
 *    state topic offset of chunk 0, CHUNKS its chunks, ID the snapshot id
 *    in their headers, X the input offset it is as of; a cut inside X
 *    cannot be seen, and is harmless: restore takes X from the envelope);
 *  - the envelope around the engine's snapshot (sw_detect_snapshot), zlib-
 *    compressed before it is cut into chunks: "SWE1", then varints: X, Y
 *    (input from Y rebuilds the windows), the output positions (topic
 *    index, partition, offset: where the next owner scans for records
 *    already sent), the suppression keys (offset * 8 + action), the
 *    engine's bytes; "SWE2" (repartition=auto: an engine fed from input p
 *    and repartition p) continues with the repartition side: XR, YR and its
 *    suppression keys. Then, when the engine's bytes are in the layout the
 *    previous release reads (sw_detect_snapshot_compat), its extension (a
 *    length and the bytes): v0.3.0 reads nothing after the parts above, so
 *    it restores the engine's body and suppresses what was sent.
 * Pure: no librdkafka, no clock, no I/O. Whatever the bytes, parsing gives
 * a value or an error, never a crash (tests/unit/test_snapcodec.c, fuzzed by
 * tests/fuzz/fuzz_restore.c).
 */
#ifndef SW_SNAPCODEC_H
#define SW_SNAPCODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"
#include "sw_types.h"

/** Longest commit metadata this codec writes (and reads). */
#define SW_SNAPMETA_MAX 128

/** A committed snapshot, as the commit metadata names it. */
typedef struct sw_snapref_s {
    int64_t first;   /**< state topic offset of chunk 0 (>= 0) */
    uint32_t chunks; /**< chunks (>= 1) */
    uint64_t id;     /**< snapshot id (the chunks' stormwatch.snapshot.id) */
    int64_t x;       /**< input offset the snapshot is as of (>= 0) */
} sw_snapref_t;

/**
 * @brief @p ref as commit metadata into @p buf (NUL-terminated).
 * @returns its length (< SW_SNAPMETA_MAX for any value).
 */
size_t sw_snapmeta_encode(const sw_snapref_t *ref, char *buf, size_t size);

/**
 * @brief Parse commit metadata (@p len bytes, not NUL-terminated).
 * @returns SW_OK; SW_ERR_NOT_FOUND when there is none (empty, or another
 *          writer's metadata: no "sw" version prefix); SW_ERR_PARSE when it
 *          is ours but unusable (an unknown version, a missing or extra
 *          field, a negative offset, zero chunks, cut short), with
 *          @p errstr saying what and quoting it.
 */
sw_err_t sw_snapmeta_parse(const void *md, size_t len, sw_snapref_t *ref, char *errstr,
                           size_t errstr_size);

/** Where the next owner starts its scan of one output partition. */
typedef struct sw_snappos_s {
    int topic; /**< 0 output, 1 dead letters, 2 repartition.topic */
    int partition;
    int64_t offset; /**< no record of ours of later input precedes it */
} sw_snappos_t;

/** A snapshot envelope's contents. */
typedef struct sw_snapenv_s {
    int64_t x, y;
    sw_snappos_t *pos; /**< parse: caller frees with sw_snapenv_clear() */
    size_t npos;
    int64_t *sup; /**< suppression keys (parse: as pos) */
    size_t nsup;
    sw_str_t engine; /**< the engine's snapshot (parse: borrowed from the input) */
    bool two;        /**< "SWE2": the repartition side below is set */
    int64_t xr, yr;  /**< repartition p: as of xr, rebuilt from yr */
    int64_t *rsup;   /**< its suppression keys (parse: as pos) */
    size_t nrsup;
    sw_str_t ext; /**< the engine's extension (sw_detect_snapshot_compat), or none
                       (len 0; parse: borrowed from the input) */
} sw_snapenv_t;

/** @brief @p env, compressed, appended to @p out. @returns false when zlib refuses. */
bool sw_snapenv_pack(const sw_snapenv_t *env, sw_buf_t *out);

/**
 * @brief Inflate @p z (@p zlen bytes) into @p raw, then parse it into @p env
 *        (whose engine bytes point into @p raw).
 * @returns SW_OK; SW_ERR_PARSE when corrupt (zlib, no "SWE1", cut short),
 *          with @p errstr saying which; @p env is then empty.
 */
sw_err_t sw_snapenv_unpack(const void *z, size_t zlen, sw_buf_t *raw, sw_snapenv_t *env,
                           char *errstr, size_t errstr_size);

/** @brief Free what sw_snapenv_unpack() allocated. */
void sw_snapenv_clear(sw_snapenv_t *env);

#endif /* SW_SNAPCODEC_H */
