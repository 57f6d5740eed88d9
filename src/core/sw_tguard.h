/*
 * The out-of-time guard of SPEC section 6 (before step 1): decides, per
 * job, whether a sample's timestamp is plausible for its rank. It keeps a
 * few numbers per job and is told each decision's context (the rank's own
 * first and newest timestamps, the job's rank count); it never touches the
 * engine's windows. Pure: no I/O, no clock, no globals.
 *
 * The rule (README "Out-of-time samples", docs/semantics.md): with H = 1 h,
 *  - the job's first sample is taken (nothing to compare it with), and so
 *    is every sample of its rank while the job has that one rank (no other
 *    rank's window to empty; a one-rank job never triggers);
 *  - a sample within [first - H, newest + H] of its own rank is taken;
 *  - a sample of a new rank is taken within [lo - H, hi + H], lo and hi
 *    being the smallest and largest timestamps the job has taken;
 *  - a sample of a known rank later than its rank's newest + H is taken up
 *    to hi + H (the rank catches up with a job that moved on);
 *  - a sample within H of the job's last accepted jump is taken;
 *  - anything else is refused. Refused samples that agree with each other
 *    (each within H of the first of them) are a *streak*; the 4th of a
 *    streak, when the streak spans two ranks or more, is taken as a *jump*: the whole job's clock moved (a restart
 *    on another clock), and its other ranks then follow by the rules above.
 *    A streak is forgotten once the job has taken 2 x ranks + 16 samples
 *    since it started, so scattered corrupt values never add up to a jump.
 */
#ifndef SW_TGUARD_H
#define SW_TGUARD_H

#include <stdbool.h>
#include <stdint.h>

#include "sw_varint.h"

#define SW_TGUARD_SLACK_NS (3600LL * 1000000000LL) /**< H: 1 h in ns */
#define SW_TGUARD_JUMP_SAMPLES 4                   /**< refused samples that make a jump */

/** Per-job state of the guard; zero-initialised = a job without samples. */
typedef struct sw_tguard_s {
    bool has;            /**< the job took a sample */
    int64_t lo, hi;      /**< smallest / largest timestamp taken (ns) */
    bool has_jump;       /**< a jump was taken */
    int64_t jump_ts;     /**< the last jump's timestamp (ns), moved by the
                             samples taken near it */
    uint64_t taken;      /**< samples taken */
    uint32_t streak;     /**< refused samples in the current streak */
    int64_t streak_ts;   /**< the streak's first timestamp (ns) */
    int64_t streak_rank; /**< the streak's first rank */
    bool streak_ranks2;  /**< the streak spans two ranks or more */
    uint64_t streak_at;  /**< taken when the streak started */
    int64_t *refused;    /**< where the newest refused samples came from (the engine's
                              tags: offset and source), ascending, at most
                              SW_TGUARD_REFUSED_MAX (NULL before the first; when full the
                              smallest goes): a state rebuild skips them, as the live
                              engine did */
    uint32_t nrefused;   /**< entries of refused */
} sw_tguard_t;

/** Refused offsets a guard remembers for the state rebuild. */
#define SW_TGUARD_REFUSED_MAX 256

/** @brief Remember that the sample at input @p offset was refused
 *         (the smallest of a full list is forgotten). */
void sw_tguard_refused_add(sw_tguard_t *g, int64_t offset);

/** @brief Whether the sample at @p offset is one of the refused remembered. */
bool sw_tguard_was_refused(const sw_tguard_t *g, int64_t offset);

/** @brief Free what the guard holds (it accepts a zeroed guard). */
void sw_tguard_clear(sw_tguard_t *g);

/** What the guard knows of the sample's rank. */
typedef struct sw_tguard_rank_s {
    bool known;        /**< the rank had a sample */
    int64_t first_ts;  /**< its smallest timestamp (ns) */
    int64_t newest_ts; /**< its largest timestamp (ns) */
} sw_tguard_rank_t;

/**
 * @brief Judge a sample at @p ts of rank @p rank and remember the verdict.
 * @param nranks ranks the job has now (sizes the streak's lifetime).
 * @returns true: the sample goes on to step 1; false: refused, nothing of
 *          the engine may change because of it.
 */
bool sw_tguard_check(sw_tguard_t *g, const sw_tguard_rank_t *rk, int64_t rank, int64_t ts,
                     uint64_t nranks);

/**
 * @brief Set a guard from restored state (a job restored from a snapshot):
 *        the smallest first and largest newest timestamps of its ranks.
 */
void sw_tguard_restore(sw_tguard_t *g, int64_t lo, int64_t hi);

/** @brief Append the guard's state (state snapshots). */
void sw_tguard_save(const sw_tguard_t *g, sw_buf_t *out);

/**
 * @brief Read what sw_tguard_save() wrote.
 * @returns false (r->bad set) when the data is malformed.
 */
bool sw_tguard_load(sw_tguard_t *g, sw_vrd_t *r);

#endif /* SW_TGUARD_H */
