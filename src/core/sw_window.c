/*
 * Per-rank window (see sw_window.h).
 *
 * A run is a maximal stretch of strictly rising device_used: a base sample
 * followed by one or more samples each above the previous. Its gain is the
 * last value minus the base value. The reference's first qualifying spike
 * is, exactly, inside the first run whose gain reaches the threshold, at
 * the first sample of that run whose rise from the base reaches it. Runs
 * only change at the two ends of the window on in-order traffic: appending
 * extends or opens the last run, evicting the oldest sample moves the
 * first run's base. Both are point updates of the gain tree.
 */
#include "sw_window.h"

#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_analysis.h"
#include "sw_assemble.h"

static uint32_t pow2_at_least(uint32_t x)
{
    uint32_t p = 1;
    while (p < x) p *= 2;
    return p;
}

#define RTREE(w) sw_win_rtree(w)
#define DQ(w) sw_win_dq(w)
#define RBASE(w) sw_win_rbase(w)
#define REND(w) sw_win_rend(w)

size_t sw_win_bytes(uint32_t cap)
{
    uint32_t rcap = pow2_at_least(cap / 2 ? cap / 2 : 1);
    return (size_t)cap * (sizeof(sw_wslot_t) + sizeof(uint32_t)) +
           (size_t)rcap * (2 * sizeof(uint32_t) + 2 * sizeof(int64_t));
}

void sw_winpool_init(sw_winpool_t *pool, uint32_t max)
{
    memset(pool, 0, sizeof(*pool));
    pool->max = max;
    size_t block = (sw_win_bytes(max) + 63) & ~(size_t)63;
    if (block <= SW_WINPOOL_CHUNK / 8) pool->block = block;
}

void sw_winpool_clear(sw_winpool_t *pool)
{
    for (size_t i = 0; i < pool->nchunks; i++) free(pool->chunks[i]);
    free(pool->chunks);
    memset(pool, 0, sizeof(*pool));
}

size_t sw_winpool_slack(const sw_winpool_t *pool)
{
    return pool->nchunks * SW_WINPOOL_CHUNK - pool->in_use * pool->block;
}

static void *pool_get(sw_winpool_t *pool)
{
    void *p = pool->free_head;
    if (p) {
        memcpy(&pool->free_head, p, sizeof(void *));
    } else {
        if (pool->left < pool->block) {
            SW_GROW(pool->chunks, pool->nchunks, pool->capchunks, 4);
            pool->cur = sw_malloc_huge(SW_WINPOOL_CHUNK);
            pool->chunks[pool->nchunks++] = pool->cur;
            pool->left = SW_WINPOOL_CHUNK;
        }
        p = pool->cur;
        pool->cur += pool->block;
        pool->left -= pool->block;
    }
    pool->in_use++;
    return p;
}

static void pool_put(sw_winpool_t *pool, void *p)
{
    memcpy(p, &pool->free_head, sizeof(void *));
    pool->free_head = p;
    pool->in_use--;
}

/* Point the arrays into one allocation of @p cap slots: a pool block for a
 * full-size window when there is a pool, else the heap. */
static void win_alloc(sw_win_t *win, uint32_t cap, sw_winpool_t *pool)
{
    win->cap = cap;
    win->rcap = pow2_at_least(cap / 2 ? cap / 2 : 1);
    bool full = pool && cap == pool->max;
    win->pooled = pool && pool->block && full && pool->heap_full >= SW_WINPOOL_CHUNK / pool->block;
    if (pool && full && !win->pooled) pool->heap_full++;
    win->slot = win->pooled ? pool_get(pool) : sw_malloc(sw_win_bytes(cap));
    int64_t *rtree = sw_win_rtree(win);
    for (uint32_t i = 0; i < 2 * win->rcap; i++) rtree[i] = -1;
    win->cand_valid = false;
}

/* First slots of a window: enough for a rank that reports rarely. */
#define WIN_FIRST_CAP 4u

void sw_win_init(sw_win_t *win, uint32_t max)
{
    memset(win, 0, sizeof(*win));
    win_alloc(win, max < WIN_FIRST_CAP ? max : WIN_FIRST_CAP, NULL);
}

void sw_win_prefetch(const sw_win_t *win)
{
    if (!win->n) return;
    const int64_t *rtree = RTREE(win);
    const uint32_t *dq = DQ(win), *rbase = RBASE(win), *rend = REND(win);
    uint32_t last = win->head + win->n - 1;
    if (last >= win->cap) last -= win->cap;
    /* The newest slot, and the oldest when a full ring drops it (its
     * neighbour), the ends of the maximum's queue, the gain leaves of the
     * newest and oldest runs (and the run slots an append writes). */
    __builtin_prefetch(&win->slot[last], 1);
    if (win->n == win->cap) __builtin_prefetch(&win->slot[win->head], 1);
    __builtin_prefetch(&dq[win->dq_head], 1);
    uint32_t dq_tail = win->dq_head + (win->dq_n ? win->dq_n - 1 : 0);
    __builtin_prefetch(&dq[dq_tail >= win->cap ? dq_tail - win->cap : dq_tail], 1);
    uint32_t tail = (win->rhead + win->rn - (win->tail_open ? 1 : 0)) & (win->rcap - 1);
    __builtin_prefetch(&rtree[win->rcap + tail], 1);
    __builtin_prefetch(&rend[tail], 1);
    if (win->rn && win->n == win->cap) {
        __builtin_prefetch(&rtree[win->rcap + win->rhead], 1);
        __builtin_prefetch(&rbase[win->rhead], 1);
    }
}

void sw_win_clear(sw_win_t *win, sw_winpool_t *pool)
{
    if (win->pooled) pool_put(pool, win->slot);
    else free(win->slot);
    memset(win, 0, sizeof(*win));
}

static inline uint32_t slot(const sw_win_t *win, uint32_t i)
{
    uint32_t s = win->head + i;
    return s >= win->cap ? s - win->cap : s;
}

static inline uint32_t logical(const sw_win_t *win, uint32_t s)
{
    return s >= win->head ? s - win->head : s + win->cap - win->head;
}

void sw_win_min_offsets(const sw_win_t *win, int64_t min[2])
{
    min[0] = min[1] = INT64_MAX;
    for (uint32_t i = 0; i < win->n; i++) {
        int64_t o = win->slot[slot(win, i)].off;
        int k = (int)(o & 1);
        if (o < min[k]) min[k] = o;
    }
}

/* (timestamp, pid, host) order of SPEC 3.2. */
static int key_cmp(const sw_win_ctx_t *ctx, int64_t ts_a, uint32_t src_a, int64_t ts_b,
                   uint32_t src_b)
{
    if (ts_a != ts_b) return ts_a < ts_b ? -1 : 1;
    if (src_a == src_b) return 0;
    const sw_src_t *a = &ctx->srcs[src_a], *b = &ctx->srcs[src_b];
    if (a->pid != b->pid) {
        if (a->pid != SW_SRC_WIDE && b->pid != SW_SRC_WIDE) return a->pid < b->pid ? -1 : 1;
        int64_t pa = sw_src_field(ctx->wide, src_a, a->pid, SW_SRC_COL_PID);
        int64_t pb = sw_src_field(ctx->wide, src_b, b->pid, SW_SRC_COL_PID);
        return pa < pb ? -1 : 1; /* not equal: one holds in int32, the other does not */
    }
    if (a->pid == SW_SRC_WIDE) {
        int64_t pa = sw_src_field(ctx->wide, src_a, a->pid, SW_SRC_COL_PID);
        int64_t pb = sw_src_field(ctx->wide, src_b, b->pid, SW_SRC_COL_PID);
        if (pa != pb) return pa < pb ? -1 : 1;
    }
    if (a->host == b->host) return 0;
    return sw_str_cmp(sw_intern_get(ctx->strs, a->host), sw_intern_get(ctx->strs, b->host));
}

/* Lower bound of the key among retained samples; *equal says whether the
 * sample there has the same key. */
static uint32_t lower_bound(const sw_win_t *win, const sw_win_ctx_t *ctx, int64_t ts, uint32_t src,
                            bool *equal)
{
    uint32_t lo = 0, hi = win->n;
    if (win->n) {
        uint32_t last = slot(win, win->n - 1);
        int c = key_cmp(ctx, win->slot[last].ts, win->slot[last].src, ts, src);
        if (c < 0) {
            *equal = false;
            return win->n;
        }
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t s = slot(win, mid);
        if (key_cmp(ctx, win->slot[s].ts, win->slot[s].src, ts, src) < 0) lo = mid + 1;
        else hi = mid;
    }
    *equal = false;
    if (lo < win->n) {
        uint32_t s = slot(win, lo);
        *equal = key_cmp(ctx, win->slot[s].ts, win->slot[s].src, ts, src) == 0;
    }
    return lo;
}

bool sw_win_has(const sw_win_t *win, const sw_win_ctx_t *ctx, int64_t ts, uint32_t src)
{
    bool equal;
    lower_bound(win, ctx, ts, src, &equal);
    return equal;
}

static void tree_set(sw_win_t *win, uint32_t i, int64_t v)
{
    int64_t *rt = RTREE(win);
    uint32_t p = win->rcap + i;
    rt[p] = v;
    for (p /= 2; p >= 1; p /= 2) {
        int64_t l = rt[2 * p], r = rt[2 * p + 1];
        int64_t m = l > r ? l : r;
        if (rt[p] == m) return; /* ancestors already hold their max */
        rt[p] = m;
    }
}

static void tree_rebuild(sw_win_t *win)
{
    int64_t *rt = RTREE(win);
    for (uint32_t p = win->rcap - 1; p >= 1; p--) {
        int64_t l = rt[2 * p], r = rt[2 * p + 1];
        rt[p] = l > r ? l : r;
    }
}

/* First leaf in [l, r) of node (covering [nl, nr)) with gain >= t, or -1. */
static int64_t tree_first_ge(const sw_win_t *win, uint32_t node, uint32_t nl, uint32_t nr,
                             uint32_t l, uint32_t r, int64_t t)
{
    if (nr <= l || r <= nl || RTREE(win)[node] < t) return -1;
    if (nr - nl == 1) return nl;
    uint32_t mid = nl + (nr - nl) / 2;
    int64_t x = tree_first_ge(win, 2 * node, nl, mid, l, r, t);
    if (x >= 0) return x;
    return tree_first_ge(win, 2 * node + 1, mid, nr, l, r, t);
}

static inline void gap_add(const sw_win_ctx_t *ctx, int64_t d)
{
    if (d > 0) sw_gapmed_add(ctx->gaps, d);
}

static inline void gap_del(const sw_win_ctx_t *ctx, int64_t d)
{
    if (d > 0) sw_gapmed_del(ctx->gaps, d);
}

/* Source @p src's sampling_interval_ms as sent. */
static inline int64_t ctx_interval(const sw_win_ctx_t *ctx, uint32_t src)
{
    return sw_src_field(ctx->wide, src, ctx->srcs[src].interval_ms, SW_SRC_COL_INTERVAL);
}

static inline void interval_add(const sw_win_ctx_t *ctx, uint32_t src)
{
    int64_t iv = ctx_interval(ctx, src);
    if (iv > 0) sw_vcount_insert(ctx->intervals, iv);
}

static inline void interval_del(const sw_win_ctx_t *ctx, uint32_t src)
{
    int64_t iv = ctx_interval(ctx, src);
    if (iv > 0) sw_vcount_remove(ctx->intervals, iv);
}

/* Drop the oldest sample (@p keep_iv: leave its sampling interval counted,
 * for a sample of the same source that takes its place). */
static void pop_front(sw_win_t *win, const sw_win_ctx_t *ctx, bool keep_iv)
{
    uint32_t h = win->head;
    uint32_t s1 = slot(win, 1);
    /* The base of a run that goes on leaves: the run keeps that base's time
     * as its identity (run_base_ts). */
    if (!win->hr_trunc && win->n >= 3 && win->slot[h].used < win->slot[s1].used &&
        win->slot[s1].used < win->slot[slot(win, 2)].used) {
        win->hr_trunc = true;
        win->hr_orig = win->slot[h].ts;
    }
    if (win->n >= 2) gap_del(ctx, win->slot[s1].ts - win->slot[h].ts);
    if (!keep_iv) interval_del(ctx, win->slot[h].src);
    if (win->rn && win->hr_base == h) {
        uint32_t r = win->rhead;
        if (win->cand_run == r) win->cand_valid = false;
        if (win->hr_end == s1) {
            tree_set(win, r, -1);
            win->rhead = (win->rhead + 1) & (win->rcap - 1);
            win->rn--;
            if (win->rn) {
                win->hr_base = RBASE(win)[win->rhead];
                win->hr_end = REND(win)[win->rhead];
            } else {
                win->tail_open = false;
            }
        } else {
            /* The base moves up one rising step: the gain loses that step. */
            RBASE(win)[r] = s1;
            win->hr_base = s1;
            tree_set(win, r, RTREE(win)[win->rcap + r] - (win->slot[s1].used - win->slot[h].used));
        }
    }
    if (win->dq_n && DQ(win)[win->dq_head] == h) {
        win->dq_head = win->dq_head + 1 == win->cap ? 0 : win->dq_head + 1;
        win->dq_n--;
        if (win->dq_n) win->top_used = win->slot[DQ(win)[win->dq_head]].used;
    }
    win->head = h + 1 == win->cap ? 0 : h + 1;
    win->n--;
    /* The oldest run may change identity (run_base_ts). */
    if (win->rn && win->cand_run == win->rhead) win->cand_valid = false;
}

/* Append the newest sample (@p iv_kept: its sampling interval is counted
 * already, by the sample it replaces). */
static void push_back(sw_win_t *win, const sw_win_ctx_t *ctx, int64_t ts, int64_t used,
                      uint32_t src, int64_t off, bool iv_kept)
{
    uint32_t s = slot(win, win->n);
    if (win->n) {
        uint32_t last = slot(win, win->n - 1);
        gap_add(ctx, ts - win->slot[last].ts);
        int64_t step = used - win->slot[last].used;
        if (step > 0) {
            /* Gains grow by the step (exact: base <= last < used). */
            uint32_t tail = (win->rhead + win->rn - 1) & (win->rcap - 1);
            if (win->tail_open) {
                REND(win)[tail] = s;
                if (win->rn == 1) win->hr_end = s;
                tree_set(win, tail, RTREE(win)[win->rcap + tail] + step);
            } else {
                tail = (win->rhead + win->rn) & (win->rcap - 1);
                RBASE(win)[tail] = last;
                REND(win)[tail] = s;
                if (win->rn++ == 0) {
                    win->hr_base = last;
                    win->hr_end = s;
                }
                win->tail_open = true;
                tree_set(win, tail, step);
            }
        } else {
            win->tail_open = false;
        }
    }
    if (!iv_kept) interval_add(ctx, src);
    while (win->dq_n) {
        uint32_t b = win->dq_head + win->dq_n - 1;
        if (b >= win->cap) b -= win->cap;
        if (win->slot[DQ(win)[b]].used > used) break;
        win->dq_n--;
    }
    uint32_t b = win->dq_head + win->dq_n;
    if (b >= win->cap) b -= win->cap;
    DQ(win)[b] = s;
    if (win->dq_n++ == 0) win->top_used = used;
    win->slot[s].ts = ts;
    win->slot[s].used = used;
    win->slot[s].off = off;
    win->slot[s].src = src;
    win->n++;
}

/* Recompute runs and the sliding maximum from the samples: O(n). */
static void rebuild(sw_win_t *win)
{
    int64_t *rtree = RTREE(win);
    uint32_t *dq = DQ(win), *rbase = RBASE(win), *rend = REND(win);
    for (uint32_t i = 0; i < win->rcap; i++) rtree[win->rcap + i] = -1;
    win->rhead = 0;
    win->rn = 0;
    win->dq_head = 0;
    win->dq_n = 0;
    for (uint32_t i = 0; i < win->n; i++) {
        uint32_t s = slot(win, i);
        int64_t u = win->slot[s].used;
        if (i) {
            uint32_t prev = slot(win, i - 1);
            if (u > win->slot[prev].used) {
                if (win->rn && rend[win->rn - 1] == prev) {
                    rend[win->rn - 1] = s;
                } else {
                    rbase[win->rn] = prev;
                    rend[win->rn] = s;
                    win->rn++;
                }
                rtree[win->rcap + win->rn - 1] = u - win->slot[rbase[win->rn - 1]].used;
            }
        }
        while (win->dq_n && win->slot[dq[win->dq_n - 1]].used <= u) win->dq_n--;
        dq[win->dq_n++] = s;
    }
    if (win->dq_n) win->top_used = win->slot[dq[0]].used;
    if (win->rn) {
        win->hr_base = rbase[0];
        win->hr_end = rend[0];
    }
    win->tail_open = win->rn && rend[win->rn - 1] == slot(win, win->n - 1);
    tree_rebuild(win);
    win->cand_valid = false;
}

/* Double the slots (up to max): the samples move to the start of the new
 * ring, runs and maximum are recomputed. O(n), amortised O(1) a sample. */
static void grow(sw_win_t *win, sw_winpool_t *pool)
{
    sw_win_t old = *win;
    uint32_t cap = old.cap > pool->max / 2 ? pool->max : old.cap * 2;
    win_alloc(win, cap, pool);
    for (uint32_t i = 0; i < old.n; i++) {
        uint32_t s = slot(&old, i);
        win->slot[i] = old.slot[s];
    }
    win->head = 0;
    win->n = old.n;
    free(old.slot); /* a growing window is never pooled */
    rebuild(win);
}

/* An oldest run that lost its base keeps its identity while it still
 * starts on the oldest sample. */
static inline void trunc_check(sw_win_t *win)
{
    if (win->hr_trunc && (win->n < 2 || win->slot[slot(win, 1)].used <= win->slot[win->head].used))
        win->hr_trunc = false;
}

static sw_win_res_t win_insert(sw_win_t *win, const sw_win_ctx_t *ctx, int64_t ts, int64_t used,
                               uint32_t src, int64_t off);

sw_win_res_t sw_win_insert(sw_win_t *win, const sw_win_ctx_t *ctx, int64_t ts, int64_t used,
                           uint32_t src, int64_t off)
{
    sw_win_res_t res = win_insert(win, ctx, ts, used, src, off);
    trunc_check(win);
    return res;
}

static sw_win_res_t win_insert(sw_win_t *win, const sw_win_ctx_t *ctx, int64_t ts, int64_t used,
                               uint32_t src, int64_t off)
{
    bool equal;
    uint32_t pos = lower_bound(win, ctx, ts, src, &equal);
    if (equal) return SW_WIN_DUP;
    if (win->n == win->cap && win->cap < ctx->pool->max) grow(win, ctx->pool);
    /* A full window's newest sample from the source of its oldest (a
     * steady rank): the job's count of sampling intervals would lose one
     * and gain it back; it is left alone. */
    bool same_iv = false;
    if (win->n == win->cap) {
        if (pos == 0) return SW_WIN_TOO_OLD;
        same_iv = pos == win->n && win->slot[win->head].src == src;
        pop_front(win, ctx, same_iv);
        pos--;
    }
    if (pos == win->n) {
        push_back(win, ctx, ts, used, src, off, same_iv);
        return SW_WIN_APPENDED;
    }
    /* Late sample inside the window: fix the gaps around it, shift the
     * newer samples one slot, then rebuild runs and maximum. */
    uint32_t sp = slot(win, pos);
    if (pos > 0) {
        uint32_t prev = slot(win, pos - 1);
        gap_del(ctx, win->slot[sp].ts - win->slot[prev].ts);
        gap_add(ctx, ts - win->slot[prev].ts);
    }
    gap_add(ctx, win->slot[sp].ts - ts);
    interval_add(ctx, src);
    for (uint32_t i = win->n; i > pos; i--) {
        uint32_t to = slot(win, i), from = slot(win, i - 1);
        win->slot[to] = win->slot[from];
    }
    win->slot[sp].ts = ts;
    win->slot[sp].used = used;
    win->slot[sp].off = off;
    win->slot[sp].src = src;
    win->n++;
    rebuild(win);
    return SW_WIN_INSERTED;
}

void sw_win_gaps_hist(const sw_win_t *win, uint64_t *hist)
{
    for (uint32_t i = 1; i < win->n; i++) {
        int64_t d = win->slot[slot(win, i)].ts - win->slot[slot(win, i - 1)].ts;
        if (d > 0) sw_gapmed_hist_add(hist, d);
    }
}

void sw_win_gaps_keep(const sw_win_t *win, sw_gapmed_t *gm)
{
    for (uint32_t i = 1; i < win->n; i++) {
        int64_t d = win->slot[slot(win, i)].ts - win->slot[slot(win, i - 1)].ts;
        if (d > 0) sw_gapmed_rebuild_add(gm, d);
    }
}

void sw_win_empty(sw_win_t *win, const sw_win_ctx_t *ctx)
{
    for (uint32_t i = 0; i < win->n; i++) {
        uint32_t s = slot(win, i);
        if (i) gap_del(ctx, win->slot[s].ts - win->slot[slot(win, i - 1)].ts);
        interval_del(ctx, win->slot[s].src);
    }
    win->n = 0;
    win->head = 0;
    win->hr_trunc = false;
    rebuild(win);
}

/* The identity of run @p r: its base sample's timestamp, or for the oldest
 * run after its base was evicted, the timestamp that base had. */
static int64_t run_base_ts(const sw_win_t *win, uint32_t r)
{
    if (r == win->rhead && win->hr_trunc) return win->hr_orig;
    return win->slot[RBASE(win)[r]].ts;
}

/* The spike inside run @p r (ring index): its first sample whose rise from
 * the base reaches @p threshold. */
static void run_spike(const sw_win_t *win, uint32_t r, int64_t threshold, sw_win_cand_t *out)
{
    uint32_t base = RBASE(win)[r];
    uint32_t lb = logical(win, base), le = logical(win, REND(win)[r]);
    int64_t target = win->slot[base].used;
    uint32_t lo = lb + 1, hi = le;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (win->slot[slot(win, mid)].used - target >= threshold) hi = mid;
        else lo = mid + 1;
    }
    uint32_t s = slot(win, lo);
    out->spike_ts = win->slot[s].ts;
    out->peak = win->slot[s].used - target;
    out->samples = lo - lb;
    out->src = win->slot[s].src;
    out->base_ts = run_base_ts(win, r);
    out->rise_ns = win->slot[s].ts - win->slot[base].ts;
}

/* Ring position (0..rn) of the first run whose base is at or after ts:
 * bases grow along the ring. */
static uint32_t runs_from(const sw_win_t *win, int64_t ts)
{
    uint32_t lo = 0, hi = win->rn;
    if (ts == INT64_MIN) return 0;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t r = (win->rhead + mid) & (win->rcap - 1);
        if (run_base_ts(win, r) < ts) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

bool sw_win_candidate(sw_win_t *win, sw_win_cc_t *cc, int64_t min_bytes, double fraction,
                      int64_t spent_ts, sw_win_cand_t *out)
{
    return sw_win_candidate_split(win, cc, min_bytes, fraction, spent_ts, INT64_MIN, out);
}

/* Logical index of the sample with timestamp ts (the first one), or n. */
static uint32_t sample_at(const sw_win_t *win, int64_t ts)
{
    uint32_t lo = 0, hi = win->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (win->slot[slot(win, mid)].ts < ts) lo = mid + 1;
        else hi = mid;
    }
    return lo < win->n && win->slot[slot(win, lo)].ts == ts ? lo : win->n;
}

/* The split part of a spent run (sw_win_candidate_split): the rising
 * stretch from the sample at split_ts, when its run is spent and the
 * stretch alone reaches the threshold. @p r receives its run. */
static bool split_spike(const sw_win_t *win, int64_t spent_ts, int64_t split_ts, int64_t threshold,
                        uint32_t *r, sw_win_cand_t *out)
{
    uint32_t l = sample_at(win, split_ts);
    if (l >= win->n || l + 1 >= win->n) return false;
    /* Its run: the last one based before it (bases grow along the ring). */
    uint32_t lo = 0, hi = win->rn;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t rr = (win->rhead + mid) & (win->rcap - 1);
        if (logical(win, RBASE(win)[rr]) < l) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return false;
    uint32_t rr = (win->rhead + lo - 1) & (win->rcap - 1);
    uint32_t le = logical(win, REND(win)[rr]);
    if (le <= l || run_base_ts(win, rr) >= spent_ts) return false; /* not inside, or unspent */
    int64_t target = win->slot[slot(win, l)].used;
    if (win->slot[slot(win, le)].used - target < threshold) return false;
    uint32_t a = l + 1, b = le;
    while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        if (win->slot[slot(win, mid)].used - target >= threshold) b = mid;
        else a = mid + 1;
    }
    const sw_wslot_t *s = &win->slot[slot(win, a)];
    out->spike_ts = s->ts;
    out->peak = s->used - target;
    out->samples = a - l;
    out->src = s->src;
    out->base_ts = split_ts;
    out->rise_ns = s->ts - split_ts;
    *r = rr;
    return true;
}

bool sw_win_steep_tail(const sw_win_t *win, int64_t min_bytes, double fraction, int64_t held_ts,
                       int64_t after_ts, int64_t max_step_ns, int64_t quiet_ns, int64_t *base_ts)
{
    if (win->n < 2) return false;
    int64_t threshold;
    if (!sw_spike_threshold(win->top_used, min_bytes, fraction, &threshold)) return false;
    int64_t steep = threshold / 8 > 0 ? threshold / 8 : 1;
    uint32_t i = win->n - 1;
    int64_t top = win->slot[slot(win, i)].used;
    /* A step across missing samples (longer than max_step_ns) is no step
     * seen: the rise stops there, its start unknown. */
    while (i > 0 && win->slot[slot(win, i)].used - win->slot[slot(win, i - 1)].used >= steep &&
           win->slot[slot(win, i)].ts - win->slot[slot(win, i - 1)].ts <= max_step_ns)
        i--;
    const sw_wslot_t *b = &win->slot[slot(win, i)];
    if (i == win->n - 1 || top - b->used < threshold || i < 2) return false;
    /* A rise of its own: a pause before it, after after_ts. The step into
     * the base is seen (not across missing samples) and not a steep rise
     * (the walk stopped there); the step before it is no steep rise
     * either or, across missing samples, rose by less than half a
     * threshold (what the memory did in the gap is unknown, but it did
     * not climb into this rise). A rise that only slowed for a step is one
     * rise. */
    const sw_wslot_t *p1 = &win->slot[slot(win, i - 1)], *p2 = &win->slot[slot(win, i - 2)];
    bool gap = p1->ts - p2->ts > max_step_ns;
    if (p2->ts <= after_ts || b->ts - p1->ts > max_step_ns ||
        p1->used - p2->used >= (gap ? threshold / 2 : steep))
        return false;
    /* Stacked on the rise before, or settled since: memory that fell back
     * below the sample at held_ts (by half a threshold) at any sample
     * since, and rose again, repeats a rise (a restart, a retry, a rank
     * swinging up and down) unless it stayed quiet for quiet_ns before
     * this base: no steep step in that time (the rise before ended and
     * the memory settled, as after a storm's hold). O(samples since
     * held_ts), on a steep tail only. */
    uint32_t h = sample_at(win, held_ts);
    if (h >= i) return false;
    int64_t held = win->slot[slot(win, h)].used;
    bool fell = false;
    for (uint32_t k = h + 1; k <= i && !fell; k++)
        fell = win->slot[slot(win, k)].used < held - threshold / 2;
    if (fell) {
        if (b->ts - win->slot[slot(win, h)].ts <= quiet_ns) return false;
        for (uint32_t k = i; k > h && b->ts - win->slot[slot(win, k - 1)].ts <= quiet_ns; k--)
            if (win->slot[slot(win, k)].used - win->slot[slot(win, k - 1)].used >= steep)
                return false;
    }
    *base_ts = b->ts;
    return true;
}

bool sw_win_candidate_split(sw_win_t *win, sw_win_cc_t *cc, int64_t min_bytes, double fraction,
                            int64_t spent_ts, int64_t split_ts, sw_win_cand_t *out)
{
    if (!cc) win->cand_valid = false;
    if (win->n < 2 || win->rn == 0) return false;
    int64_t threshold;
    if (!sw_spike_threshold(win->top_used, min_bytes, fraction, &threshold)) return false;
    if (RTREE(win)[1] < threshold) return false; /* the largest run gain */
    if (win->cand_valid && cc->thr == threshold && cc->from == spent_ts && cc->split == split_ts) {
        *out = cc->cand;
        return true;
    }
    /* A split part comes before every unspent run: its run is spent. */
    uint32_t sr;
    if (split_ts != INT64_MIN && split_ts >= spent_ts &&
        split_spike(win, spent_ts, split_ts, threshold, &sr, out)) {
        if (cc) {
            cc->cand = *out;
            cc->thr = threshold;
            cc->from = spent_ts;
            cc->split = split_ts;
            win->cand_run = sr;
            win->cand_valid = true;
        }
        return true;
    }
    /* Runs occupy ring slots [rhead, rhead + rn), possibly wrapping; the
     * unspent ones start k runs after the head. */
    uint32_t k = runs_from(win, spent_ts);
    if (k == win->rn) return false;
    uint32_t start = win->rhead + k, end = win->rhead + win->rn;
    int64_t r = -1;
    if (start < win->rcap)
        r = tree_first_ge(win, 1, 0, win->rcap, start, end < win->rcap ? end : win->rcap,
                          threshold);
    if (r < 0 && end > win->rcap) {
        uint32_t from = start > win->rcap ? start - win->rcap : 0;
        r = tree_first_ge(win, 1, 0, win->rcap, from, end - win->rcap, threshold);
    }
    if (r < 0) return false;
    run_spike(win, (uint32_t)r, threshold, out);
    if (cc) {
        cc->cand = *out;
        cc->thr = threshold;
        cc->from = spent_ts;
        cc->split = split_ts;
        win->cand_run = (uint32_t)r;
        win->cand_valid = true;
    }
    return true;
}

bool sw_win_tail_spike(const sw_win_t *win, int64_t min_bytes, double fraction, int64_t from_ts,
                       sw_win_cand_t *out)
{
    if (win->n < 2 || win->rn == 0) return false;
    int64_t threshold;
    if (!sw_spike_threshold(win->top_used, min_bytes, fraction, &threshold)) return false;
    uint32_t r = (win->rhead + win->rn - 1) & (win->rcap - 1);
    if (RTREE(win)[win->rcap + r] < threshold || run_base_ts(win, r) < from_ts) return false;
    run_spike(win, r, threshold, out);
    return true;
}

bool sw_win_slow_rise(const sw_win_t *win, int64_t min_bytes, double fraction,
                      const sw_win_cand_t *c, int64_t span_ns)
{
    if (c->rise_ns <= span_ns || win->n == 0) return false;
    int64_t threshold;
    if (!sw_spike_threshold(win->top_used, min_bytes, fraction, &threshold)) return false;
    /* The spike sample and the last sample at or before spike - span (both
     * inside the run, which started earlier): binary searches by time. */
    int64_t t0 = c->spike_ts - span_ns;
    uint32_t lo = 0, hi = win->n, at = 0, from = 0;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (win->slot[slot(win, mid)].ts <= c->spike_ts) lo = mid + 1;
        else hi = mid;
    }
    at = lo ? lo - 1 : 0;
    lo = 0;
    hi = at;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (win->slot[slot(win, mid)].ts <= t0) lo = mid + 1;
        else hi = mid;
    }
    from = lo ? lo - 1 : 0;
    return win->slot[slot(win, at)].used - win->slot[slot(win, from)].used < threshold;
}

size_t sw_pick_points(size_t n, const size_t *pinned, size_t npinned, size_t max, uint32_t *out)
{
    if (n <= max) {
        for (size_t i = 0; i < n; i++) out[i] = (uint32_t)i;
        return n;
    }
    if (npinned > max) npinned = max;
    /* Unpinned points number m; the k-th chosen is the floor(k*m/b)-th of
     * them, so the b picks spread evenly and start with the first. */
    size_t m = n - npinned, b = max - npinned, k = 0, u = 0, p = 0, got = 0;
    size_t next = 0;
    for (size_t i = 0; i < n && got < max; i++) {
        if (p < npinned && pinned[p] == i) {
            out[got++] = (uint32_t)i;
            p++;
            continue;
        }
        if (k < b && u == next) {
            out[got++] = (uint32_t)i;
            k++;
            next = (size_t)(((unsigned __int128)k * m) / b);
        }
        u++;
    }
    return got;
}

void sw_win_excerpt(const sw_win_t *win, const sw_win_ctx_t *ctx, int64_t spike_ts,
                    uint32_t spike_src, int64_t steps, int64_t offset, uint32_t *idx,
                    sw_win_excerpt_t *x)
{
    x->n = 0;
    x->spike_start = x->spike = 0;
    if (win->n == 0) return;
    bool equal;
    uint32_t at = lower_bound(win, ctx, spike_ts, spike_src, &equal);
    if (at >= win->n) at = win->n - 1;
    uint32_t base = steps > 0 && (uint64_t)steps <= at ? at - (uint32_t)steps : 0;
    /* Pinned: the whole rising run when it takes at most half the budget,
     * else its base and its spike sample; and the last sample. */
    size_t pins[SW_TIMELINE_MAX_POINTS / 2 + 1], np = 0;
    size_t run = (size_t)(at - base) + 1;
    if (run <= x->max / 2 && run < sizeof(pins) / sizeof(pins[0])) {
        for (uint32_t i = base; i <= at; i++) pins[np++] = i;
    } else {
        pins[np++] = base;
        if (at != base) pins[np++] = at;
    }
    if (win->n - 1 != at) pins[np++] = win->n - 1;
    size_t got = sw_pick_points(win->n, pins, np, x->max, idx);
    for (size_t k = 0; k < got; k++) {
        const sw_wslot_t *sl = &win->slot[slot(win, idx[k])];
        x->aligned[k] = (int64_t)((uint64_t)sl->ts - (uint64_t)offset);
        x->used[k] = sl->used;
        if (idx[k] == base) x->spike_start = k;
        if (idx[k] == at) x->spike = k;
    }
    x->n = got;
}
