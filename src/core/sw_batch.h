/*
 * The batch analysis of SPEC 3 (`stormwatch analyze`): exactly the seed's
 * summarize_cross_rank_analysis over all valid events, with the phase index
 * of SPEC 5 built from the same events. Events are added one at a time and
 * only the fields the analysis needs are kept. Pure: no I/O, no globals.
 */
#ifndef SW_BATCH_H
#define SW_BATCH_H

#include <stddef.h>

#include "sw_analysis.h"
#include "sw_arena.h"
#include "sw_err.h"
#include "sw_event.h"

typedef struct sw_batch_s sw_batch_t;

/** @brief New empty analysis. @returns caller frees with sw_batch_destroy(). */
sw_batch_t *sw_batch_new(sw_params_t params);

/** @brief Free (accepts NULL). */
void sw_batch_destroy(sw_batch_t *b);

/**
 * @brief Add one valid event (copies what it keeps).
 * @returns SW_OK, or SW_ERR_LIMIT for a sample whose world_size or rank is
 *          beyond SW_WORLD_SIZE_MAX (nothing added; @p errstr says which).
 */
sw_err_t sw_batch_add(sw_batch_t *b, const sw_event_t *ev, char *errstr, size_t errstr_size);

/**
 * @brief Run the analysis over every event added so far.
 * @param arena receives the result's arrays.
 * @remark strings in *out are borrowed from @p b and @p arena: valid until
 *         @p b is destroyed or the arena reset.
 */
void sw_batch_run(sw_batch_t *b, sw_arena_t *arena, sw_analysis_t *out);

/** @brief Number of events added. */
size_t sw_batch_events(const sw_batch_t *b);

#endif /* SW_BATCH_H */
