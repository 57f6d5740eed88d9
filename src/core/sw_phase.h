/*
 * The phase index of SPEC section 5: phase boundary events grouped by
 * (session_id, rank), replayed into spans, and the attribution of a
 * timestamp to the active span. Pure: no I/O, no clock, no globals.
 */
#ifndef SW_PHASE_H
#define SW_PHASE_H

#include <stddef.h>
#include <stdint.h>

#include "sw_analysis.h"
#include "sw_hash.h"
#include "sw_arena.h"
#include "sw_event.h"
#include "sw_intern.h"

typedef struct sw_phase_s sw_phase_t;

/** @brief New empty index. @returns caller frees with sw_phase_destroy(). */
sw_phase_t *sw_phase_new(void);

/** @brief As sw_phase_new(), its strings hashed with @p key (sw_hash.h). */
sw_phase_t *sw_phase_new_keyed(sw_hash_key_t key);

/**
 * @brief As sw_phase_new_keyed(), with its sessions interned in
 *        @p sessions (borrowed: must outlive the index; NULL: its own
 *        table), so that a caller that interns them already can name a
 *        group by its id (sw_phase_group_sid()).
 */
sw_phase_t *sw_phase_new_shared(sw_hash_key_t key, sw_intern_t *sessions);

/** @brief Free the index (accepts NULL). */
void sw_phase_destroy(sw_phase_t *ph);

/**
 * @brief Add one event of any type. Every event with a string session_id
 *        extends its group's session end; a well-formed boundary
 *        (sw_phase_boundary_ok()) is also recorded. Copies what it keeps.
 */
void sw_phase_add(sw_phase_t *ph, const sw_event_t *ev);

/**
 * @brief Index of the (session, rank) group, created when new: a handle
 *        for sw_phase_touch(), stable while the index lives.
 */
uint32_t sw_phase_group(sw_phase_t *ph, sw_str_t session, int64_t rank);

/** @brief sw_phase_group() of a session interned in the table given to
 *         sw_phase_new_shared() (id >= 1). */
uint32_t sw_phase_group_sid(sw_phase_t *ph, uint32_t session, int64_t rank);

/** @brief The (session, rank) group of a session interned in the table
 *         given to sw_phase_new_shared(), UINT32_MAX when it has none (none
 *         is created). */
uint32_t sw_phase_find_sid(const sw_phase_t *ph, uint32_t session, int64_t rank);

/**
 * @brief sw_phase_add() of an event with a session_id whose (session,
 *        rank) group is @p group (from sw_phase_group()): no lookup.
 */
void sw_phase_add_to(sw_phase_t *ph, uint32_t group, const sw_event_t *ev);

/**
 * @brief What sw_phase_add() does for an event that is not a boundary,
 *        given its group: extend the session end to @p ts_ns.
 */
void sw_phase_touch(sw_phase_t *ph, uint32_t group, int64_t ts_ns);

/**
 * @brief Whether @p group has gathered enough boundaries since its last
 *        fold for sw_phase_fold() to be worth its cost (amortized O(1) per
 *        boundary).
 */
bool sw_phase_fold_due(const sw_phase_t *ph, uint32_t group);

/**
 * @brief Forget, for every session of @p rank, what cannot change an
 *        attribution at a time >= @p horizon_ns: spans closed before it.
 *        Boundaries before the horizon are replayed once (SPEC 5) and only
 *        the enters still open at the horizon are kept; boundaries at or
 *        after it are kept as they are. Attributions at times >= the
 *        horizon are unchanged as long as no boundary older than the
 *        horizon arrives later. Strings no longer referenced are released
 *        once enough have accumulated. Strings from earlier
 *        sw_phase_resolve() calls become invalid.
 * @returns boundaries dropped.
 */
size_t sw_phase_fold(sw_phase_t *ph, int64_t rank, int64_t horizon_ns);

/** @brief Address of a group's state, for prefetching (not to be dereferenced). */
const void *sw_phase_group_addr(const sw_phase_t *ph, uint32_t group);

/**
 * @brief True when @p ev is a phase boundary the index uses: kind enter or
 *        exit, a string session_id, a phase_scope whose action matches the
 *        kind, a non-blank name and a non-empty path.
 */
bool sw_phase_boundary_ok(const sw_event_t *ev);

/**
 * @brief Attribute timestamp @p ts_ns of (session, rank).
 * @param arena receives the labels array of the result.
 * @param out   filled; resolution SW_PHASE_NONE when no span is active.
 * @remark strings in *out are borrowed from the index (valid while it lives
 *         and no event is added) and from @p arena.
 */
void sw_phase_resolve(sw_phase_t *ph, sw_str_t session, int64_t rank, int64_t ts_ns,
                      sw_arena_t *arena, sw_phase_attr_t *out);

/** @brief Append the whole index to @p out (state snapshots). */
void sw_phase_save(const sw_phase_t *ph, sw_buf_t *out);

/** A group its owner keeps outside the index until it matters: a session
 *  (interned as for sw_phase_group_sid()), a rank and its session end. */
typedef struct sw_phase_pend_s {
    uint32_t session;
    int64_t rank;
    int64_t end_ts;
} sw_phase_pend_t;

/**
 * @brief sw_phase_save() of the index with @p n more groups without
 *        boundaries, none of them in the index, written after its own as
 *        if it held them (sw_phase_load() creates them).
 */
void sw_phase_save_with(const sw_phase_t *ph, const sw_phase_pend_t *more, size_t n, sw_buf_t *out);

/**
 * @brief Add what sw_phase_save() wrote, read from @p *data (advanced past
 *        it) into an empty index. @returns false when the data is malformed.
 */
bool sw_phase_load(sw_phase_t *ph, const uint8_t **data, const uint8_t *end);

/** @brief Number of boundaries recorded. */
size_t sw_phase_boundaries(const sw_phase_t *ph);

/** @brief Bytes of memory held by the index (a borrowed session table not counted). */
size_t sw_phase_bytes(const sw_phase_t *ph);

#endif /* SW_PHASE_H */
