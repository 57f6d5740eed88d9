/*
 * Gap median with a lazy bracket (see sw_gapmed.h). The bracket leaves a
 * margin of n/64 gaps on each side of the two middle ranks, so the median
 * must move that many ranks before a rebuild: in-order traffic from a
 * steady sampling rate hardly moves it. A bracket nobody asks about for
 * two turnovers of the gaps is dropped, so a job without open episodes
 * pays only the counter; one that has become much wider than its margins
 * (built over a few gaps, or the gaps moved) is rebuilt once the gaps have
 * turned over since its last rebuild. Every rebuild, O(n), thus follows
 * Omega(n) changes.
 */
#include "sw_gapmed.h"

#include <string.h>

void sw_gapmed_init(sw_gapmed_t *gm)
{
    memset(gm, 0, sizeof(*gm));
    sw_mset_init(&gm->mid);
}

void sw_gapmed_invalidate(sw_gapmed_t *gm)
{
    sw_mset_clear(&gm->mid);
    gm->valid = false;
    gm->lo = gm->hi = 0;
    gm->n_below = gm->n_above = 0;
    gm->ops = 0;
    gm->built_ops = 0;
}

void sw_gapmed_clear(sw_gapmed_t *gm)
{
    sw_gapmed_invalidate(gm);
    gm->n = 0;
}

void sw_gapmed_change(sw_gapmed_t *gm, int64_t v, bool add)
{
    uint32_t b = sw_gapmed_bucket(v);
    if (b < gm->lo) {
        if (add) {
            gm->n_below++;
        } else if (gm->n_below) {
            gm->n_below--;
        } else {
            sw_gapmed_invalidate(gm); /* not a gap that was added: start over */
            return;
        }
    } else if (b > gm->hi) {
        if (add) {
            gm->n_above++;
        } else if (gm->n_above) {
            gm->n_above--;
        } else {
            sw_gapmed_invalidate(gm);
            return;
        }
    } else if (add) {
        sw_mset_insert(&gm->mid, v);
    } else if (!sw_mset_remove(&gm->mid, v)) {
        sw_gapmed_invalidate(gm);
        return;
    }
    gm->built_ops++;
    /* Unused for two turnovers: a rebuild later costs less than keeping it. */
    if (++gm->ops > 2 * gm->n + 1024) sw_gapmed_invalidate(gm);
}

bool sw_gapmed_middle(sw_gapmed_t *gm, int64_t *a, int64_t *b)
{
    size_t n = gm->n;
    if (!gm->valid || n == 0) return false;
    size_t nm = sw_mset_size(&gm->mid);
    if (gm->n_below + nm + gm->n_above != n) {
        sw_gapmed_invalidate(gm); /* the passes missed a gap: never answer wrong */
        return false;
    }
    size_t k1 = (n - 1) / 2, k2 = n / 2;
    if (k1 < gm->n_below || k2 >= gm->n_below + nm) return false;
    if (nm > n / 4 + 64 && gm->built_ops > n) return false; /* too wide: tighten */
    gm->ops = 0;
    *a = sw_mset_kth(&gm->mid, k1 - gm->n_below);
    *b = k2 == k1 ? *a : sw_mset_kth(&gm->mid, k2 - gm->n_below);
    return true;
}

void sw_gapmed_rebuild_begin(sw_gapmed_t *gm, const uint64_t *hist)
{
    sw_gapmed_invalidate(gm);
    uint64_t total = 0;
    for (uint32_t i = 0; i < SW_GAPMED_BUCKETS; i++) total += hist[i];
    gm->n = (size_t)total; /* the windows are the truth */
    size_t n = gm->n;
    size_t k1 = n ? (n - 1) / 2 : 0, k2 = n / 2;
    size_t margin = n / 64 + 8;
    /* Whole buckets below, as many as leave margin gaps under rank k1. */
    uint32_t lo = 0;
    uint64_t below = 0;
    if (k1 >= margin) {
        uint64_t lim = k1 - margin;
        while (lo < SW_GAPMED_BUCKETS - 1 && below + hist[lo] <= lim) below += hist[lo++];
    }
    /* The same above rank k2. */
    uint32_t hi = SW_GAPMED_BUCKETS - 1;
    uint64_t above = 0;
    size_t over = n ? n - 1 - k2 : 0;
    if (over >= margin) {
        uint64_t lim = over - margin;
        while (hi > lo && above + hist[hi] <= lim) above += hist[hi--];
    }
    gm->lo = lo;
    gm->hi = hi;
    gm->n_below = (size_t)below;
    gm->n_above = (size_t)above;
    gm->valid = true;
}
