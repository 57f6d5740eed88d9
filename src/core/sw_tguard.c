/*
 * The out-of-time guard (SPEC 6, before step 1); the rule is in
 * sw_tguard.h. Comparisons are made with saturating arithmetic: the values
 * judged are arbitrary 64-bit timestamps (2^63 - 1, 1, negative).
 */
#include "sw_tguard.h"

#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"

static int64_t sat_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
    return a + b;
}

static bool within(int64_t ts, int64_t lo, int64_t hi)
{
    return ts >= sat_add(lo, -SW_TGUARD_SLACK_NS) && ts <= sat_add(hi, SW_TGUARD_SLACK_NS);
}

static void take(sw_tguard_t *g, int64_t ts, bool jump)
{
    if (!g->has || ts < g->lo) g->lo = ts;
    if (!g->has || ts > g->hi) g->hi = ts;
    g->has = true;
    g->taken++;
    if (jump) {
        g->has_jump = true;
        g->jump_ts = ts;
        g->streak = 0;
    } else if (g->has_jump && within(ts, g->jump_ts, g->jump_ts) && ts > g->jump_ts) {
        g->jump_ts = ts; /* the jumped clock runs on */
    }
}

static bool in_time(const sw_tguard_t *g, const sw_tguard_rank_t *rk, int64_t ts, uint64_t nranks)
{
    if (!g->has) return true;
    if (rk->known && nranks <= 1) return true; /* no other rank to disagree with */
    if (rk->known && within(ts, rk->first_ts, rk->newest_ts)) return true;
    if (!rk->known && within(ts, g->lo, g->hi)) return true;
    if (rk->known && ts > rk->newest_ts && ts <= sat_add(g->hi, SW_TGUARD_SLACK_NS)) return true;
    return g->has_jump && within(ts, g->jump_ts, g->jump_ts);
}

bool sw_tguard_check(sw_tguard_t *g, const sw_tguard_rank_t *rk, int64_t rank, int64_t ts,
                     uint64_t nranks)
{
    if (in_time(g, rk, ts, nranks)) {
        take(g, ts, false);
        return true;
    }
    uint64_t life = 2 * nranks + 16;
    if (g->streak && (!within(ts, g->streak_ts, g->streak_ts) || g->taken - g->streak_at > life))
        g->streak = 0;
    if (!g->streak) {
        g->streak_ts = ts;
        g->streak_rank = rank;
        g->streak_ranks2 = false;
        g->streak_at = g->taken;
    } else if (rank != g->streak_rank) {
        g->streak_ranks2 = true;
    }
    g->streak++;
    if (g->streak >= SW_TGUARD_JUMP_SAMPLES && g->streak_ranks2) {
        take(g, ts, true);
        return true;
    }
    return false;
}

void sw_tguard_refused_add(sw_tguard_t *g, int64_t offset)
{
    if (!g->refused) g->refused = sw_malloc(SW_TGUARD_REFUSED_MAX * sizeof(*g->refused));
    if (g->nrefused == SW_TGUARD_REFUSED_MAX) {
        memmove(g->refused, g->refused + 1, (SW_TGUARD_REFUSED_MAX - 1) * sizeof(*g->refused));
        g->nrefused--;
    }
    /* Kept ascending for the lookup: from one source this appends; an
     * engine fed from two inserts the other source's refusals in place. */
    uint32_t at = g->nrefused;
    while (at > 0 && g->refused[at - 1] > offset) at--;
    memmove(g->refused + at + 1, g->refused + at, (g->nrefused - at) * sizeof(*g->refused));
    g->refused[at] = offset;
    g->nrefused++;
}

bool sw_tguard_was_refused(const sw_tguard_t *g, int64_t offset)
{
    uint32_t lo = 0, hi = g->nrefused;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->refused[mid] < offset) lo = mid + 1;
        else hi = mid;
    }
    return lo < g->nrefused && g->refused[lo] == offset;
}

void sw_tguard_clear(sw_tguard_t *g)
{
    free(g->refused);
    g->refused = NULL;
    g->nrefused = 0;
}

void sw_tguard_restore(sw_tguard_t *g, int64_t lo, int64_t hi)
{
    g->has = true;
    g->lo = lo;
    g->hi = hi;
}

void sw_tguard_save(const sw_tguard_t *g, sw_buf_t *out)
{
    sw_vput_u(out, (uint64_t)g->has | (uint64_t)g->has_jump << 1 | (uint64_t)g->streak_ranks2 << 2);
    sw_vput_i(out, g->lo);
    sw_vput_i(out, g->hi);
    sw_vput_i(out, g->jump_ts);
    sw_vput_u(out, g->taken);
    sw_vput_u(out, g->streak);
    sw_vput_i(out, g->streak_ts);
    sw_vput_i(out, g->streak_rank);
    sw_vput_u(out, g->streak_at);
    sw_vput_u(out, g->nrefused);
    for (uint32_t i = 0; i < g->nrefused; i++) sw_vput_i(out, g->refused[i]);
}

bool sw_tguard_load(sw_tguard_t *g, sw_vrd_t *r)
{
    uint64_t flags = sw_vget_u(r);
    g->has = flags & 1;
    g->has_jump = flags & 2;
    g->streak_ranks2 = flags & 4;
    g->lo = sw_vget_i(r);
    g->hi = sw_vget_i(r);
    g->jump_ts = sw_vget_i(r);
    g->taken = sw_vget_u(r);
    uint64_t streak = sw_vget_u(r);
    g->streak_ts = sw_vget_i(r);
    g->streak_rank = sw_vget_i(r);
    g->streak_at = sw_vget_u(r);
    if (flags > 7 || streak > UINT32_MAX || g->streak_at > g->taken || (g->has && g->lo > g->hi))
        r->bad = true;
    g->streak = (uint32_t)streak;
    uint64_t nref = sw_vget_u(r);
    if (nref > SW_TGUARD_REFUSED_MAX) r->bad = true;
    sw_tguard_clear(g);
    for (uint64_t i = 0; i < nref && !r->bad; i++) {
        int64_t off = sw_vget_i(r);
        if (g->nrefused && off <= g->refused[g->nrefused - 1]) r->bad = true;
        else sw_tguard_refused_add(g, off);
    }
    return !r->bad;
}
