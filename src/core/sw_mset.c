/*
 * Order-statistic multiset (see sw_mset.h). Blocks split in half when full
 * and merge with a neighbour when both together fit in half a block, so a
 * block is on average at least a quarter full. Structural changes mark the
 * Fenwick tree dirty; it is rebuilt (O(blocks)) at the next query.
 */
#include "sw_mset.h"

#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"

#define B SW_MSET_BLOCK

void sw_mset_init(sw_mset_t *ms)
{
    memset(ms, 0, sizeof(*ms));
}

void sw_mset_clear(sw_mset_t *ms)
{
    for (size_t i = 0; i < ms->nb; i++) free(ms->blk[i]);
    free(ms->blk);
    free(ms->cnt);
    free(ms->mins);
    free(ms->fen);
    sw_mset_init(ms);
}

size_t sw_mset_bytes(const sw_mset_t *ms)
{
    return ms->nb * B * sizeof(int64_t) +
           ms->capb * (sizeof(int64_t *) + sizeof(uint32_t) * 2 + sizeof(int64_t));
}

/* Index of the last block whose first value is <= v (0 when none). */
static size_t find_block(const sw_mset_t *ms, int64_t v)
{
    size_t lo = 0, hi = ms->nb;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ms->mins[mid] <= v) lo = mid + 1;
        else hi = mid;
    }
    return lo ? lo - 1 : 0;
}

static void fen_add(sw_mset_t *ms, size_t b, int d)
{
    if (ms->fen_dirty) return;
    for (size_t i = b + 1; i <= ms->nb; i += i & (~i + 1))
        ms->fen[i] = (uint32_t)((int)ms->fen[i] + d);
}

static void fen_build(sw_mset_t *ms)
{
    ms->fen[0] = 0;
    for (size_t i = 1; i <= ms->nb; i++) ms->fen[i] = ms->cnt[i - 1];
    for (size_t i = 1; i <= ms->nb; i++) {
        size_t j = i + (i & (~i + 1));
        if (j <= ms->nb) ms->fen[j] += ms->fen[i];
    }
    ms->fen_dirty = false;
}

static void ensure_cap(sw_mset_t *ms, size_t nb)
{
    if (nb <= ms->capb) return;
    size_t cap = ms->capb ? ms->capb * 2 : 4;
    while (cap < nb) cap *= 2;
    ms->blk = sw_reallocarray(ms->blk, cap, sizeof(*ms->blk));
    ms->cnt = sw_reallocarray(ms->cnt, cap, sizeof(*ms->cnt));
    ms->mins = sw_reallocarray(ms->mins, cap, sizeof(*ms->mins));
    ms->fen = sw_reallocarray(ms->fen, cap + 1, sizeof(*ms->fen));
    ms->capb = cap;
}

/* Open a hole for a block at index i. */
static void blocks_open(sw_mset_t *ms, size_t i)
{
    ensure_cap(ms, ms->nb + 1);
    size_t tail = ms->nb - i;
    memmove(ms->blk + i + 1, ms->blk + i, tail * sizeof(*ms->blk));
    memmove(ms->cnt + i + 1, ms->cnt + i, tail * sizeof(*ms->cnt));
    memmove(ms->mins + i + 1, ms->mins + i, tail * sizeof(*ms->mins));
    ms->nb++;
    ms->fen_dirty = true;
}

/* Remove block i (already freed or moved). */
static void blocks_close(sw_mset_t *ms, size_t i)
{
    size_t tail = ms->nb - i - 1;
    memmove(ms->blk + i, ms->blk + i + 1, tail * sizeof(*ms->blk));
    memmove(ms->cnt + i, ms->cnt + i + 1, tail * sizeof(*ms->cnt));
    memmove(ms->mins + i, ms->mins + i + 1, tail * sizeof(*ms->mins));
    ms->nb--;
    ms->fen_dirty = true;
}

void sw_mset_insert(sw_mset_t *ms, int64_t v)
{
    if (ms->nb == 0) {
        blocks_open(ms, 0);
        ms->blk[0] = sw_malloc(B * sizeof(int64_t));
        ms->cnt[0] = 0;
    }
    size_t b = find_block(ms, v);
    int64_t *a = ms->blk[b];
    uint32_t c = ms->cnt[b];
    /* Upper bound inside the block keeps equal values in arrival order. */
    size_t lo = 0, hi = c;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] <= v) lo = mid + 1;
        else hi = mid;
    }
    memmove(a + lo + 1, a + lo, (c - lo) * sizeof(*a));
    a[lo] = v;
    ms->cnt[b] = ++c;
    ms->mins[b] = a[0];
    ms->n++;
    if (c < B) {
        fen_add(ms, b, 1);
        return;
    }
    /* Full: move the upper half into a new block after b. */
    blocks_open(ms, b + 1);
    int64_t *nblk = sw_malloc(B * sizeof(int64_t));
    uint32_t half = B / 2;
    memcpy(nblk, a + half, (B - half) * sizeof(*a));
    ms->blk[b + 1] = nblk;
    ms->cnt[b + 1] = B - half;
    ms->mins[b + 1] = nblk[0];
    ms->cnt[b] = half;
}

bool sw_mset_remove(sw_mset_t *ms, int64_t v)
{
    if (ms->nb == 0) return false;
    size_t b = find_block(ms, v);
    int64_t *a = ms->blk[b];
    uint32_t c = ms->cnt[b];
    /* Take the last equal value: with many equal values the move below
     * is then short. */
    size_t lo = 0, hi = c;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] <= v) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0 || a[lo - 1] != v) return false;
    lo--;
    memmove(a + lo, a + lo + 1, (c - lo - 1) * sizeof(*a));
    ms->cnt[b] = --c;
    ms->n--;
    if (c == 0) {
        free(a);
        blocks_close(ms, b);
        return true;
    }
    ms->mins[b] = a[0];
    if (b + 1 < ms->nb && c + ms->cnt[b + 1] <= B / 2) {
        memcpy(a + c, ms->blk[b + 1], ms->cnt[b + 1] * sizeof(*a));
        ms->cnt[b] += ms->cnt[b + 1];
        free(ms->blk[b + 1]);
        blocks_close(ms, b + 1);
    } else if (b > 0 && c + ms->cnt[b - 1] <= B / 2) {
        int64_t *p = ms->blk[b - 1];
        memcpy(p + ms->cnt[b - 1], a, c * sizeof(*a));
        ms->cnt[b - 1] += c;
        free(a);
        blocks_close(ms, b);
    } else {
        fen_add(ms, b, -1);
    }
    return true;
}

int64_t sw_mset_kth(sw_mset_t *ms, size_t k)
{
    if (ms->fen_dirty) fen_build(ms);
    size_t pos = 0, step = 1;
    while (step * 2 <= ms->nb) step *= 2;
    for (; step; step /= 2) {
        if (pos + step <= ms->nb && ms->fen[pos + step] <= k) {
            pos += step;
            k -= ms->fen[pos];
        }
    }
    /* pos is the 0-based block holding the answer. */
    return ms->blk[pos][k];
}

/* ---- sw_vcount ---------------------------------------------------------- */

void sw_vcount_init(sw_vcount_t *vc)
{
    vc->nd = 0;
    vc->n = 0;
    vc->big = false;
    sw_mset_init(&vc->ms);
}

void sw_vcount_clear(sw_vcount_t *vc)
{
    sw_mset_clear(&vc->ms);
    sw_vcount_init(vc);
}

/* Index of the first distinct value >= v (small mode). */
static size_t vc_lower(const sw_vcount_t *vc, int64_t v)
{
    size_t lo = 0, hi = vc->nd;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (vc->val[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

void sw_vcount_insert(sw_vcount_t *vc, int64_t v)
{
    vc->n++;
    if (vc->big) {
        sw_mset_insert(&vc->ms, v);
        return;
    }
    size_t i = vc_lower(vc, v);
    if (i < vc->nd && vc->val[i] == v) {
        vc->cnt[i]++;
        return;
    }
    if (vc->nd == SW_VCOUNT_SMALL) {
        /* Too many distinct values: move them all into the block set. */
        for (size_t k = 0; k < vc->nd; k++)
            for (uint64_t c = 0; c < vc->cnt[k]; c++) sw_mset_insert(&vc->ms, vc->val[k]);
        sw_mset_insert(&vc->ms, v);
        vc->big = true;
        vc->nd = 0;
        return;
    }
    memmove(vc->val + i + 1, vc->val + i, (vc->nd - i) * sizeof(*vc->val));
    memmove(vc->cnt + i + 1, vc->cnt + i, (vc->nd - i) * sizeof(*vc->cnt));
    vc->val[i] = v;
    vc->cnt[i] = 1;
    vc->nd++;
}

bool sw_vcount_remove(sw_vcount_t *vc, int64_t v)
{
    if (vc->big) {
        if (!sw_mset_remove(&vc->ms, v)) return false;
        if (--vc->n == 0) sw_vcount_clear(vc); /* back to small mode */
        return true;
    }
    size_t i = vc_lower(vc, v);
    if (i == vc->nd || vc->val[i] != v) return false;
    vc->n--;
    if (--vc->cnt[i]) return true;
    memmove(vc->val + i, vc->val + i + 1, (vc->nd - i - 1) * sizeof(*vc->val));
    memmove(vc->cnt + i, vc->cnt + i + 1, (vc->nd - i - 1) * sizeof(*vc->cnt));
    vc->nd--;
    return true;
}

int64_t sw_vcount_kth(sw_vcount_t *vc, size_t k)
{
    if (vc->big) return sw_mset_kth(&vc->ms, k);
    for (size_t i = 0; i < vc->nd; i++) {
        if (k < vc->cnt[i]) return vc->val[i];
        k -= vc->cnt[i];
    }
    return 0; /* k >= size: caller error */
}
