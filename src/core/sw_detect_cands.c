/*
 * A rank's candidate (SPEC 6: its first qualifying spike in an unspent run)
 * and the job's treap of candidates (sw_detect_cands.h): re-derived from the
 * rank's window whenever the window or the rank's spent and split marks
 * change. Below the lifecycle (sw_detect_verdict.c), the storms that overlap
 * (sw_detect_overlap.c), the per-sample path (sw_detect_feed.c) and the
 * restore (sw_detect_state.c), which all call sw_det_cand_refresh().
 * Pure: no I/O, no clock, no globals.
 */
#include "sw_detect_cands.h"

/* A rising run that needs more than this to reach its spike, and did not
 * rise by a threshold in the last stretch of this length, is a leak, not a
 * storm: 10 s, or 10 sampling intervals when they are longer. */
static int64_t leak_ns(const job_t *j, const rank_t *r)
{
    int64_t iv = rank_interval_ns(j, r);
    return iv > INT64_MAX / 10 ? INT64_MAX : (10 * iv > 10000000000 ? 10 * iv : 10000000000);
}

/* A candidate record for rank ri, which has none; its window's cache is
 * @p cc (the one the window's cand_valid speaks of). */
static void cand_make(job_t *j, uint32_t ri, const sw_win_cc_t *cc)
{
    uint32_t ci = j->cands.free_head;
    if (ci != NIL) {
        j->cands.free_head = j->cands.v[ci].t_left;
    } else {
        SW_GROW(j->cands.v, j->cands.nrec, j->cands.cap, 4);
        ci = (uint32_t)j->cands.nrec++;
    }
    rank_cand_t *c = &j->cands.v[ci];
    c->t_left = c->t_right = NIL;
    c->cc = *cc;
    j->ranks.v[ri].cand = ci;
}

/* Rank ri's candidate record back to the free list (with its window's
 * cache). */
static void cand_drop(job_t *j, uint32_t ri)
{
    rank_t *r = &j->ranks.v[ri];
    j->cands.v[r->cand].t_left = j->cands.free_head;
    j->cands.free_head = r->cand;
    r->cand = NIL;
    r->win.cand_valid = false;
}

/* Re-derive rank ri's candidate (its first qualifying spike in an unspent
 * run; leaks are spent as they are found) and keep the treap in step. A
 * rank without a candidate record searches with a scratch cache, kept
 * when it gets one. */
void sw_det_cand_refresh(sw_detector_t *det, job_t *j, uint32_t ri)
{
    rank_t *r = &j->ranks.v[ri];
    bool had = r->cand != NIL;
    sw_win_cc_t scratch;
    sw_win_cc_t *cc = had ? &rc_of(j, r)->cc : &scratch;
    sw_win_cand_t wc;
    bool has;
    for (;;) {
        has = sw_win_candidate_split(&r->win, cc, det->params.spike_min_bytes,
                                     det->params.spike_fraction, rk_spent(j, r), rk_split(j, r),
                                     &wc);
        if (!has || wc.base_ts == INT64_MAX ||
            !sw_win_slow_rise(&r->win, det->params.spike_min_bytes, det->params.spike_fraction, &wc,
                              leak_ns(j, r)))
            break;
        rk_cold(j, r)->spent_ts = wc.base_ts + 1;
    }
    int64_t rel = has ? wc.spike_ts - r->first_ts : 0;
    if (has && had) {
        rank_cand_t *c = rc_of(j, r);
        if (rel == c->rel && wc.peak == c->peak) {
            if (r->in_verdict && wc.base_ts != c->base) j->verdict.touched = true;
            c->spike_ts = wc.spike_ts;
            c->samples = wc.samples;
            c->src = wc.src;
            c->base = wc.base_ts;
            c->aged = wc.base_ts != wc.spike_ts - wc.rise_ns;
            return;
        }
    }
    if (!has && !had) {
        r->win.cand_valid = false; /* a slow rise may have been cached in scratch */
        return;
    }
    if (r->in_verdict) j->verdict.touched = true;
    if (had) {
        rank_cand_t *c = rc_of(j, r);
        if (c->rel <= j->sig.boundary) j->sig.dirty = true;
        j->cands.root = t_erase(j, j->cands.root, ri);
        c->t_left = c->t_right = NIL;
        j->cands.n--;
        if (!has) {
            cand_drop(j, ri);
            return;
        }
    } else {
        cand_make(j, ri, &scratch);
    }
    rank_cand_t *c = rc_of(j, r);
    c->rel = rel;
    c->spike_ts = wc.spike_ts;
    c->peak = wc.peak;
    c->samples = wc.samples;
    c->src = wc.src;
    c->base = wc.base_ts;
    c->aged = wc.base_ts != wc.spike_ts - wc.rise_ns;
    if (rel <= j->sig.boundary) j->sig.dirty = true;
    j->cands.root = t_insert(j, j->cands.root, ri);
    j->cands.n++;
}
