/*
 * SPEC 8's records (sw_xout_t, per detector): the queue of the records an
 * event made (a crash record, a warning record, the ones a summary closes),
 * their common part, and what SPEC 6's record borrows (the blind ranks, the
 * job's crash for a summary's title). Below the crash (sw_crash.c) and the
 * warning (sw_crash_warn.c), which fill the records they emit here.
 * Pure: no I/O, no clock, no globals.
 */
#include "sw_crash_int.h"

/* ---- the queue ---------------------------------------------------------- */

void sw_crash_out_free(sw_xout_t *xo)
{
    if (!xo) return;
    sw_arena_clear(&xo->arena);
    free(xo);
}

size_t sw_crash_out_bytes(const sw_xout_t *xo)
{
    return xo ? sizeof(*xo) + xo->arena.total : 0;
}

void sw_crash_begin(sw_detector_t *det)
{
    if (!det->xo) {
        det->xo = sw_calloc(1, sizeof(*det->xo));
        sw_arena_init(&det->xo->arena);
    }
    det->xo->n = det->xo->next = 0;
    det->xo->crash_pending = det->xo->crash_opened = false;
    det->xo->closed_warning = 0;
    det->xo->has_prev = false;
    det->xo->has_job_crash = false;
    det->xo->blind = NULL;
    det->xo->n_blind = 0;
    sw_arena_reset(&det->xo->arena);
}

void sw_crash_blind(const sw_detector_t *det, const int64_t **ranks, size_t *n)
{
    *ranks = det->xo->blind;
    *n = det->xo->n_blind;
}

const sw_x8_t *sw_crash_job_crash(const sw_detector_t *det)
{
    return det->xo && det->xo->has_job_crash ? &det->xo->job_crash : NULL;
}

const sw_record_t *sw_crash_next(sw_detector_t *det)
{
    sw_xout_t *xo = det->xo;
    if (!xo || xo->next >= xo->n) return NULL;
    return &xo->rec[xo->next++];
}

/* ---- records ----------------------------------------------------------- */

static int i64cmp(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

void sw_crash_fill_blind(sw_xout_t *xo, const sw_cjob_t *cj, const int64_t **ranks, size_t *nr)
{
    *ranks = NULL;
    *nr = 0;
    if (!cj || !cj->nblind) return;
    int64_t *v = sw_arena_alloc(&xo->arena, cj->nblind * sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < cj->n && n < cj->nblind; i++)
        if (cj->r[i].blind) v[n++] = cj->r[i].rank;
    qsort(v, n, sizeof(*v), i64cmp);
    *ranks = v;
    *nr = n < SW_X8_BLIND_MAX ? n : SW_X8_BLIND_MAX;
}

void sw_crash_storm_ref(const job_t *j, sw_storm_ref_t *s)
{
    memset(s, 0, sizeof(*s));
    if (j->ep.no <= 0) return;
    s->set = true;
    s->episode = j->ep.no;
    s->open = sw_det_ep_open(j);
    if (j->verdict.has && j->verdict.n) {
        s->has_rank = true;
        s->first_cause_rank = j->verdict.sus[0].rank;
        s->has_onset = true;
        s->onset_ns = j->verdict.onset;
    }
}

sw_record_t *sw_crash_emit(sw_detector_t *det, job_t *j, sw_action_t action, const sw_event_t *ev,
                           int64_t offset, sw_x8_t **x8)
{
    sw_xout_t *xo = det->xo;
    if (xo->n == XOUT_MAX) return NULL; /* cannot happen: at most 3 per event */
    sw_record_t *rec = &xo->rec[xo->n];
    *x8 = &xo->x8[xo->n];
    xo->n++;
    memset(rec, 0, sizeof(*rec));
    memset(*x8, 0, sizeof(**x8));
    rec->action = action;
    rec->analysis.has_job_id = j->id.has;
    rec->analysis.job_id.ptr = j->id.str ? j->id.str : "";
    rec->analysis.job_id.len = j->id.len;
    rec->analysis.anchor_rank = -1;
    rec->has_event_ts = ev != NULL; /* none: closed at the job's summary */
    rec->event_timestamp_ns = ev ? ev->timestamp_ns : 0;
    rec->cause_offset = tag_offset(offset); /* a tag (det_tag) */
    rec->cause_source = tag_source(offset);
    rec->resolve_rank = -1;
    rec->episode_confidence = -2;
    rec->x8 = *x8;
    sw_crash_storm_ref(j, &(*x8)->storm);
    sw_crash_fill_blind(xo, j->cj, &rec->blind_ranks, &rec->n_blind);
    det->st.records[action]++;
    return rec;
}
