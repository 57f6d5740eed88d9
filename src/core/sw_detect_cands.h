/*
 * The engine's two per-job containers, inline because the engine's files
 * use them on their hot paths (sw_detect_cands.c and sw_detect_feed.c:
 * every sample; sw_detect_verdict.c: every record): the treap of candidates ordered by (time since the
 * rank's first sample, -peak, rank), its in-order iterator, and the min-heap
 * of ranks by newest timestamp for the staleness sweep. Internal to
 * src/core/sw_detect*.c.
 */
#ifndef SW_DETECT_CANDS_H
#define SW_DETECT_CANDS_H

#include "sw_detect_int.h"

/* ---- candidate treap ------------------------------------------------- */

/* Ranks @p a and @p b (indices; both have a candidate) in treap order. */
static inline bool t_less(const job_t *j, uint32_t a, uint32_t b)
{
    const rank_cand_t *ca = rk_cand(j, a), *cb = rk_cand(j, b);
    if (ca->rel != cb->rel) return ca->rel < cb->rel;
    if (ca->peak != cb->peak) return ca->peak > cb->peak;
    return j->ranks.v[a].rank < j->ranks.v[b].rank;
}

static inline void t_split(job_t *j, uint32_t t, uint32_t key, uint32_t *l, uint32_t *r)
{
    if (t == NIL) {
        *l = *r = NIL;
        return;
    }
    rank_cand_t *n = rk_cand(j, t);
    if (t_less(j, t, key)) {
        t_split(j, n->t_right, key, &n->t_right, r);
        *l = t;
    } else {
        t_split(j, n->t_left, key, l, &n->t_left);
        *r = t;
    }
}

static inline uint32_t t_merge(job_t *j, uint32_t a, uint32_t b)
{
    if (a == NIL) return b;
    if (b == NIL) return a;
    if (t_prio(a) > t_prio(b)) {
        rank_cand_t *ca = rk_cand(j, a);
        ca->t_right = t_merge(j, ca->t_right, b);
        return a;
    }
    rank_cand_t *cb = rk_cand(j, b);
    cb->t_left = t_merge(j, a, cb->t_left);
    return b;
}

static inline uint32_t t_insert(job_t *j, uint32_t t, uint32_t x)
{
    if (t == NIL) return x;
    if (t_prio(x) > t_prio(t)) {
        rank_cand_t *cx = rk_cand(j, x);
        t_split(j, t, x, &cx->t_left, &cx->t_right);
        return x;
    }
    rank_cand_t *n = rk_cand(j, t);
    if (t_less(j, x, t)) n->t_left = t_insert(j, n->t_left, x);
    else n->t_right = t_insert(j, n->t_right, x);
    return t;
}

static inline uint32_t t_erase(job_t *j, uint32_t t, uint32_t x)
{
    if (t == NIL) return NIL;
    rank_cand_t *n = rk_cand(j, t);
    if (t == x) return t_merge(j, n->t_left, n->t_right);
    if (t_less(j, x, t)) n->t_left = t_erase(j, n->t_left, x);
    else n->t_right = t_erase(j, n->t_right, x);
    return t;
}

/* In-order iteration from the smallest candidate. */
typedef struct titer_s {
    sw_detector_t *det;
    job_t *j;
    size_t n;
} titer_t;

static inline void titer_push_left(titer_t *it, uint32_t t)
{
    while (t != NIL) {
        SW_GROW(it->det->stack, it->n, it->det->capstack, 64);
        it->det->stack[it->n++] = t;
        t = rk_cand(it->j, t)->t_left;
    }
}

static inline void titer_begin(titer_t *it, sw_detector_t *det, job_t *j)
{
    it->det = det;
    it->j = j;
    it->n = 0;
    titer_push_left(it, j->cands.root);
}

static inline uint32_t titer_next(titer_t *it)
{
    if (!it->n) return NIL;
    uint32_t x = it->det->stack[--it->n];
    titer_push_left(it, rk_cand(it->j, x)->t_right);
    return x;
}

/* In-order iteration from the first candidate with rel > key: the path to
 * that lower bound is pushed in O(log n), then titer_next goes on as usual. */
static inline void titer_begin_after(titer_t *it, sw_detector_t *det, job_t *j, int64_t key)
{
    it->det = det;
    it->j = j;
    it->n = 0;
    for (uint32_t t = j->cands.root; t != NIL;) {
        const rank_cand_t *c = rk_cand(j, t);
        if (c->rel > key) {
            SW_GROW(det->stack, it->n, det->capstack, 64);
            det->stack[it->n++] = t;
            t = c->t_left;
        } else {
            t = c->t_right;
        }
    }
}

/* The candidate with the largest rel, NIL when there is none. */
static inline uint32_t t_last(const job_t *j)
{
    uint32_t t = j->cands.root;
    if (t == NIL) return NIL;
    while (rk_cand(j, t)->t_right != NIL) t = rk_cand(j, t)->t_right;
    return t;
}

/* ---- stale heap (min by newest timestamp) -----------------------------
 * Keys live in the heap array and positions in a compact array beside the
 * ranks, so a sift touches only these two small arrays. */

static inline void heap_set(job_t *j, size_t i, heap_ent_t e)
{
    j->cands.heap[i] = e;
    j->cands.hpos[e.ri] = (uint32_t)i;
}

static inline void heap_up(job_t *j, size_t i)
{
    heap_ent_t x = j->cands.heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (j->cands.heap[p].key <= x.key) break;
        heap_set(j, i, j->cands.heap[p]);
        i = p;
    }
    heap_set(j, i, x);
}

static inline void heap_down(job_t *j, size_t i)
{
    heap_ent_t x = j->cands.heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= j->cands.nheap) break;
        if (c + 1 < j->cands.nheap && j->cands.heap[c + 1].key < j->cands.heap[c].key) c++;
        if (j->cands.heap[c].key >= x.key) break;
        heap_set(j, i, j->cands.heap[c]);
        i = c;
    }
    heap_set(j, i, x);
}

/* Insert rank ri, or move it after its newest timestamp grew. */
static inline void sw_det_heap_update(job_t *j, uint32_t ri, int64_t key)
{
    uint32_t pos = j->cands.hpos[ri];
    if (pos == NIL) {
        SW_GROW(j->cands.heap, j->cands.nheap, j->cands.capheap, 2);
        heap_ent_t e = {key, ri};
        heap_set(j, j->cands.nheap++, e);
        heap_up(j, j->cands.nheap - 1);
        return;
    }
    j->cands.heap[pos].key = key;
    heap_down(j, pos);
}

static inline void heap_pop_top(job_t *j)
{
    j->cands.hpos[j->cands.heap[0].ri] = NIL;
    if (--j->cands.nheap) {
        heap_set(j, 0, j->cands.heap[j->cands.nheap]);
        heap_down(j, 0);
    }
}

/* ---- anchor --------------------------------------------- */

static inline int64_t anchor_first(const job_t *j, int64_t *anchor_rank)
{
    uint32_t ri;
    if (!sw_imap_get(&j->ranks.map, 0, &ri)) sw_imap_get(&j->ranks.map, j->ranks.min, &ri);
    if (anchor_rank) *anchor_rank = j->ranks.v[ri].rank;
    return j->ranks.v[ri].first_ts;
}

#endif /* SW_DETECT_CANDS_H */
