/*
 * Internal to the core: one rank's window of retained samples (SPEC 6),
 * kept in (timestamp, pid, host) order in a ring that grows with the
 * samples held (doubling, up to window.samples), so that a rank that has
 * sent four samples costs four slots, not window.samples.
 * Beside the samples it maintains, incrementally, what the first-spike
 * search needs: the rising runs of device_used with their gains in a max
 * segment tree, and a sliding maximum of device_used. It also keeps the
 * job's gap median (sw_gapmed.h) and multiset of sampling intervals in
 * step with its contents. In-order samples cost O(log W); a late sample
 * that lands inside the window costs O(W) for this rank only.
 * Pure: no I/O, no globals.
 */
#ifndef SW_WINDOW_H
#define SW_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_alloc.h"
#include "sw_gapmed.h"
#include "sw_imap.h"
#include "sw_intern.h"
#include "sw_mset.h"

/** A sample source of a job: what orders and describes a sample besides
 *  its timestamp and device_used. Its numbers as int32: a wide job holds
 *  a source per rank, and real pids, intervals, device ids and local ranks
 *  are small; a value int32 does not hold is SW_SRC_WIDE, kept apart
 *  (sw_src_wide_t), read through sw_src_field(). */
typedef struct sw_src_s {
    int32_t pid;
    int32_t interval_ms; /**< sampling_interval_ms */
    uint32_t host;       /**< interned in the job's table */
    uint32_t session;    /**< interned; 0 = null */
    int32_t device_id;   /**< SW_SRC_UNSET when absent (shown, not analysed) */
    int32_t local_rank;  /**< likewise */
} sw_src_t;

/** device_id / local_rank of a source that did not send one. */
#define SW_SRC_UNSET INT32_MIN
/** device_id / local_rank that int32 does not hold (nor the two markers):
 *  the source table's owner keeps it apart (a wide job holds a source per
 *  rank, and real device ids and local ranks are small). */
#define SW_SRC_WIDE (INT32_MIN + 1)

/** Columns of sw_src_wide_t. */
#define SW_SRC_COL_DEVICE 0
#define SW_SRC_COL_LOCAL_RANK 1
#define SW_SRC_COL_PID 2
#define SW_SRC_COL_INTERVAL 3
#define SW_SRC_NCOL 4

/** The values of a job's sources that int32 does not hold: a row per
 *  source with any SW_SRC_WIDE field, its four values as sent. */
typedef struct sw_src_wide_s {
    sw_imap_t map; /**< source id -> row */
    int64_t *v;    /**< [SW_SRC_NCOL * row + column] */
    size_t n, cap; /**< rows; int64s allocated */
} sw_src_wide_t;

/** @brief Field @p v of source @p id as sent (@p col: its column), given
 *         the job's table @p wide; INT64_MIN when unset. */
static inline int64_t sw_src_field(const sw_src_wide_t *wide, uint32_t id, int32_t v, size_t col)
{
    if (v > SW_SRC_WIDE) return v; /* the common case first: one compare */
    if (v == SW_SRC_UNSET) return INT64_MIN;
    uint32_t row = 0;
    sw_imap_get(&wide->map, id, &row);
    return wide->v[SW_SRC_NCOL * (size_t)row + col];
}

/** @brief @p v (INT64_MIN: unset) as a source keeps it. */
static inline int32_t sw_src_narrow(int64_t v)
{
    if (v == INT64_MIN) return SW_SRC_UNSET;
    if (v >= (int64_t)SW_SRC_WIDE + 1 && v <= INT32_MAX) return (int32_t)v;
    return SW_SRC_WIDE;
}

/**
 * Storage for full-size windows (window.samples slots): blocks of one size
 * carved from huge-page backed chunks (sw_malloc_huge), reused through a
 * free list. The engine touches one rank's window per sample among
 * thousands; in 4 KiB pages each of those touches is a TLB miss. Windows
 * still growing, windows too large for a chunk, and the first chunk's
 * worth of full windows use the heap.
 */
typedef struct sw_winpool_s {
    uint32_t max;  /**< window.samples of its windows (not kept per window) */
    size_t block;  /**< bytes of a block; 0 = pool unused */
    char **chunks; /**< chunks of SW_WINPOOL_CHUNK bytes */
    size_t nchunks, capchunks;
    char *cur;        /**< unused tail of the newest chunk */
    size_t left;      /**< its bytes */
    void *free_head;  /**< freed blocks, linked through their first bytes */
    size_t in_use;    /**< blocks handed out */
    size_t heap_full; /**< full-size windows put on the heap: the pool
                            starts once they fill a chunk, so that a small
                            engine never holds a mostly empty chunk */
} sw_winpool_t;

/** Bytes of one pool chunk. */
#define SW_WINPOOL_CHUNK SW_HUGE_BYTES

/** @brief Set up a pool for windows of @p max samples (no allocation):
 *         every window of an engine has it, sw_win_insert() too. */
void sw_winpool_init(sw_winpool_t *pool, uint32_t max);
/** @brief Free the chunks; every window from the pool must be gone. */
void sw_winpool_clear(sw_winpool_t *pool);
/** @brief Bytes held in chunks but not by a window. */
size_t sw_winpool_slack(const sw_winpool_t *pool);

/** What the window needs from its job. */
typedef struct sw_win_ctx_s {
    const sw_src_t *srcs;      /**< the job's source table */
    const sw_intern_t *strs;   /**< host strings */
    const sw_src_wide_t *wide; /**< its values int32 does not hold (NULL: none) */
    sw_gapmed_t *gaps;         /**< positive consecutive timestamp gaps */
    sw_vcount_t *intervals;    /**< sampling_interval_ms > 0 of retained samples */
    sw_winpool_t *pool;        /**< storage of full windows, and their window.samples:
                                  required by sw_win_insert(); elsewhere NULL = the heap */
} sw_win_ctx_t;

/** A retained sample: what every insert compares and moves, in one half
 *  cache line (the newest and the oldest of a full ring are neighbours). */
typedef struct sw_wslot_s {
    int64_t ts;   /**< timestamp_ns */
    int64_t used; /**< device_used_bytes */
    int64_t off;  /**< where the sample came from, offset and source (state restore) */
    uint32_t src; /**< source id */
    uint32_t pad_;
} sw_wslot_t;

/** A rank's first qualifying spike inside its window. */
typedef struct sw_win_cand_s {
    int64_t spike_ts; /**< timestamp of the spike sample */
    int64_t peak;     /**< rise from the run's base, bytes */
    uint32_t samples; /**< rising steps up to the spike (< window.samples) */
    uint32_t src;     /**< source of the spike sample */
    int64_t base_ts;  /**< timestamp of the run's base sample (for a run whose
                           base was evicted, of its base before that): what
                           identifies the spike while its crossing sample moves
                           and while it ages out */
    int64_t rise_ns;  /**< spike timestamp - base sample timestamp */
} sw_win_cand_t;

/** The window; fields are private to sw_window.c and sw_detect.c, ordered
 *  without holes (a wide job holds one per rank). */
typedef struct sw_win_s {
    uint32_t cap;      /**< slots allocated (grows to window.samples, the pool's max) */
    uint32_t head;     /**< slot of the oldest sample */
    uint32_t n;        /**< samples retained */
    uint32_t cand_run; /**< when cand_valid: ring index of the cached candidate's run */
    sw_wslot_t *slot;  /**< [cap] samples; also the one allocation behind the
                           arrays (sw_win_rtree() and the others below) */
    uint32_t dq_head, dq_n;
    uint32_t rcap; /**< runs ring size, power of two >= cap / 2 */
    uint32_t rhead, rn;
    /* Copies that spare every sample the lines they come from. */
    uint32_t hr_base; /**< rbase[rhead] when rn > 0 */
    uint32_t hr_end;  /**< rend[rhead] when rn > 0 */
    bool pooled;      /**< the storage is a block of a sw_winpool */
    bool tail_open;   /**< the newest run ends at the newest sample */
    bool hr_trunc;    /**< the oldest run lost its base to an eviction */
    bool cand_valid;  /**< the caller's sw_win_cc_t holds the last candidate found */
    int64_t top_used; /**< used of the dq head (the maximum) when dq_n > 0 */
    int64_t hr_orig;  /**< when hr_trunc: the timestamp of the oldest run's base before that */
} sw_win_t;

/** The last candidate sw_win_candidate() found, kept by the caller (out of
 *  the window: a wide job holds one window per rank, and most ranks never
 *  have a candidate) while nothing it depends on changed: the threshold,
 *  spent_ts and the run it lies in (only the oldest run can change under a
 *  found candidate: the runs before it do not qualify, and appending only
 *  extends or adds runs after it). Valid while the window's cand_valid is
 *  set; the window clears that flag whenever the run changes. */
typedef struct sw_win_cc_s {
    int64_t thr;   /**< threshold it was found with */
    int64_t from;  /**< spent_ts it was found with */
    int64_t split; /**< split_ts it was found with (sw_win_candidate_split) */
    sw_win_cand_t cand;
} sw_win_cc_t;

/* The arrays behind the samples, in this order (computed, not stored: a
 * wide job holds one window per rank). */
/** @brief [2 * rcap] max segment tree of run gains (-1 = none). */
static inline int64_t *sw_win_rtree(const sw_win_t *win)
{
    return (int64_t *)(void *)(win->slot + win->cap);
}

/** @brief [cap] ring of slots with decreasing used (sliding max). */
static inline uint32_t *sw_win_dq(const sw_win_t *win)
{
    return (uint32_t *)(void *)(sw_win_rtree(win) + 2 * (size_t)win->rcap);
}

/** @brief [rcap] slot of each run's base sample. */
static inline uint32_t *sw_win_rbase(const sw_win_t *win)
{
    return sw_win_dq(win) + win->cap;
}

/** @brief [rcap] slot of each run's last sample. */
static inline uint32_t *sw_win_rend(const sw_win_t *win)
{
    return sw_win_rbase(win) + win->rcap;
}

/** @brief The largest gain of a rising run in the window (-1: none): no
 *         candidate while it is below every threshold (sw_win_candidate). */
static inline int64_t sw_win_max_gain(const sw_win_t *win)
{
    return sw_win_rtree(win)[1];
}

/** Outcome of sw_win_insert(). */
typedef enum sw_win_res_e {
    SW_WIN_APPENDED = 0, /**< newest sample, added at the end */
    SW_WIN_INSERTED = 1, /**< late sample, added inside the window */
    SW_WIN_TOO_OLD = 2,  /**< late sample older than a full window: no change */
    SW_WIN_DUP = 3       /**< same (timestamp, pid, host) retained: no change */
} sw_win_res_t;

/** @brief Set up a window of at most @p max samples (max >= 1); storage
 *         for a few is allocated now, the rest as samples arrive. */
void sw_win_init(sw_win_t *win, uint32_t max);

/** @brief True when the window holds @p max (window.samples) samples. */
static inline bool sw_win_full(const sw_win_t *win, uint32_t max)
{
    return win->n == max;
}

/** @brief Free the window's storage (to @p pool when it came from there;
 *         NULL when no pool was ever used). */
void sw_win_clear(sw_win_t *win, sw_winpool_t *pool);

/** @brief True when a sample with this (timestamp, source) key is retained. */
bool sw_win_has(const sw_win_t *win, const sw_win_ctx_t *ctx, int64_t ts, uint32_t src);

/**
 * @brief Insert a sample, keeping only the window.samples greatest. The
 *        context's multisets are updated for what enters and leaves.
 */
sw_win_res_t sw_win_insert(sw_win_t *win, const sw_win_ctx_t *ctx, int64_t ts, int64_t used,
                           uint32_t src, int64_t off);

/**
 * @brief Choose at most @p max of @p n ordered points: the pinned indices
 *        (ascending, distinct, < n) always, the others spread evenly over
 *        the rest of the budget (the first of them included).
 * @param out receives the chosen indices, ascending; room for min(n, max).
 * @returns the number chosen (n when n <= max).
 */
size_t sw_pick_points(size_t n, const size_t *pinned, size_t npinned, size_t max, uint32_t *out);

/** A timeline excerpt being filled (arrays with room for max points). */
typedef struct sw_win_excerpt_s {
    size_t max;         /**< budget, >= 3 */
    int64_t *aligned;   /**< out: timestamp - offset */
    int64_t *used;      /**< out: device_used */
    size_t n;           /**< out: points */
    size_t spike_start; /**< out: index of the spike's base sample */
    size_t spike;       /**< out: index of the spike sample */
} sw_win_excerpt_t;

/**
 * @brief Down-sampled excerpt of the window: the spike (the sample with key
 *        (@p spike_ts, @p spike_src), @p steps rising steps after its base),
 *        the last sample, and evenly spread others.
 * @param offset subtracted from each timestamp (wrapping, like the aligned
 *        spike time).
 * @param idx scratch of x->max entries.
 */
void sw_win_excerpt(const sw_win_t *win, const sw_win_ctx_t *ctx, int64_t spike_ts,
                    uint32_t spike_src, int64_t steps, int64_t offset, uint32_t *idx,
                    sw_win_excerpt_t *x);

/** @brief Smallest `off` among retained samples, by the low bit of `off`
 *         (the engine keeps its source there): min[b] is INT64_MAX when no
 *         sample has low bit b. */
void sw_win_min_offsets(const sw_win_t *win, int64_t min[2]);

/** @brief Empty the window (staleness), taking its values out of the multisets. */
void sw_win_empty(sw_win_t *win, const sw_win_ctx_t *ctx);

/**
 * @brief The first qualifying spike (SPEC 3.3 over the window) among the
 *        rising runs whose base (sw_win_cand_t.base_ts) is at or after
 *        @p spent_ts (runs that start earlier are spent; INT64_MIN: none is). The answer is
 *        kept in @p cc (and the window's cand_valid set) until the threshold,
 *        @p spent_ts or its run changes. The caller passes the same @p cc
 *        while cand_valid is set, or clears cand_valid before passing
 *        another; NULL: no cache (cand_valid is cleared).
 * @returns false when there is none.
 */
bool sw_win_candidate(sw_win_t *win, sw_win_cc_t *cc, int64_t min_bytes, double fraction,
                      int64_t spent_ts, sw_win_cand_t *out);

/**
 * @brief sw_win_candidate() with a split: a spent run that holds a sample
 *        at @p split_ts (spent_ts <= split_ts: that sample is not spent)
 *        counts from that sample on, as a run of its own based there (the
 *        second steep rise of a run that went on rising between two storms,
 *        sw_win_steep_tail). INT64_MIN: no split (sw_win_candidate).
 */
bool sw_win_candidate_split(sw_win_t *win, sw_win_cc_t *cc, int64_t min_bytes, double fraction,
                            int64_t spent_ts, int64_t split_ts, sw_win_cand_t *out);

/**
 * @brief The steep rise that ends at the newest sample: the samples before
 *        it walked back while each step rises by at least an eighth of the
 *        threshold. When that rise reaches the threshold and its base (the
 *        sample it starts from) follows a pause (the two steps before it,
 *        after @p after_ts, are not steep rises) and every sample from @p held_ts to it held what
 *        that one held (less an eighth of the threshold), its base's timestamp
 *        goes to @p base_ts. A step longer than @p max_step_ns (across
 *        missing samples) ends the walk: what rose before it is not seen.
 *        O(steps of the rise); O(1) when the newest step is not steep
 *        (most samples).
 */
bool sw_win_steep_tail(const sw_win_t *win, int64_t min_bytes, double fraction, int64_t held_ts,
                       int64_t after_ts, int64_t max_step_ns, int64_t *base_ts);

/**
 * @brief The spike of the newest rising run when that run qualifies on its
 *        own (its gain reaches the threshold) and starts at or after
 *        @p from_ts. O(log W); leaves the cached candidate alone.
 * @returns false when there is none.
 */
bool sw_win_tail_spike(const sw_win_t *win, int64_t min_bytes, double fraction, int64_t from_ts,
                       sw_win_cand_t *out);

/**
 * @brief Whether spike @p c (found by sw_win_candidate) is a slow rise: its
 *        run took longer than @p span_ns to reach it, and the last
 *        @p span_ns before it rose by less than the threshold (a leak, not
 *        a storm). O(log W).
 */
bool sw_win_slow_rise(const sw_win_t *win, int64_t min_bytes, double fraction,
                      const sw_win_cand_t *c, int64_t span_ns);

/** @brief Count each positive gap between consecutive retained samples
 *         in @p hist (first pass of sw_gapmed's rebuild). */
void sw_win_gaps_hist(const sw_win_t *win, uint64_t *hist);

/** @brief Offer each positive gap to @p gm (second pass of its rebuild). */
void sw_win_gaps_keep(const sw_win_t *win, sw_gapmed_t *gm);

/** @brief Bytes allocated for a window of @p cap samples. */
size_t sw_win_bytes(uint32_t cap);

/** @brief Prefetch what the next insert into @p win will touch. */
void sw_win_prefetch(const sw_win_t *win);

#endif /* SW_WINDOW_H */
