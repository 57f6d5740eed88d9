/*
 * SPEC 8.4: warnings from device capacity and growth. Per rank near its
 * capacity, a few rate points and the projected time to full; the ranks
 * that qualify long enough are eligible, the soonest named in the job's
 * warning record. Pure: no I/O, no clock, no globals.
 */
#include "sw_crash_int.h"

static int weta_cmp(const sw_cjob_t *cj, uint32_t a, uint32_t b)
{
    const cwarn_t *x = &cj->w[a], *y = &cj->w[b];
    if (x->eta_ms != y->eta_ms) return x->eta_ms < y->eta_ms ? -1 : 1;
    int64_t ra = cj->r[x->ci].rank, rb = cj->r[y->ci].rank;
    return ra < rb ? -1 : ra > rb;
}

/* The eligible ranks by projected time, at most SW_X8_WARN_MAX, into named. */
static void pick_named(sw_cjob_t *cj)
{
    for (size_t i = 0; i < cj->nnamed; i++) cj->w[cj->named[i]].named = false;
    size_t n = 0;
    for (uint32_t wi = cj->e_head; wi != CNIL; wi = cj->w[wi].next) {
        size_t p = n < SW_X8_WARN_MAX ? n++ : SW_X8_WARN_MAX;
        if (p == SW_X8_WARN_MAX) {
            if (weta_cmp(cj, wi, cj->named[p - 1]) >= 0) continue;
            p--;
        }
        while (p > 0 && weta_cmp(cj, wi, cj->named[p - 1]) < 0) {
            cj->named[p] = cj->named[p - 1];
            p--;
        }
        cj->named[p] = wi;
    }
    cj->nnamed = n;
    for (size_t i = 0; i < n; i++) cj->w[cj->named[i]].named = true;
}

static void emit_warning(sw_detector_t *det, job_t *j, const sw_event_t *ev, int64_t offset,
                         bool open, sw_x8_end_t end)
{
    sw_cjob_t *cj = j->cj;
    sw_x8_t *x;
    sw_record_t *rec = sw_crash_emit(det, j, SW_ACTION_WARNING, ev, offset, &x);
    if (!rec) return;
    rec->episode = cj->warning;
    rec->revision = cj->w_rev;
    x->number = cj->warning;
    x->open = open;
    x->end = open ? SW_X8_END_NONE : end;
    x->closed_by_crash = end == SW_X8_END_CRASH ? cj->crash : 0;
    cj->w_last = cj->mrel;
    cj->has_w_last = true;
    if (!open) return;
    sw_warn_rank_t *wr = sw_arena_alloc(&det->xo->arena, SW_X8_WARN_MAX * sizeof(*wr));
    for (size_t i = 0; i < cj->nnamed; i++) {
        const cwarn_t *w = &cj->w[cj->named[i]];
        const crank_t *c = &cj->r[w->ci];
        sw_warn_rank_t *o = &wr[i];
        memset(o, 0, sizeof(*o));
        o->rank = c->rank;
        o->host = sw_str("unknown");
        if (c->ri != CNIL && j->ranks.v[c->ri].last_src != NIL) {
            const sw_src_t *s = &j->src.v[j->ranks.v[c->ri].last_src];
            o->host = sw_intern_get(j->src.strs, s->host);
            o->device_id = src_device(j, j->ranks.v[c->ri].last_src);
            o->has_device_id = o->device_id != INT64_MIN;
        }
        o->used_bytes = w->used;
        o->total_bytes = w->total;
        o->headroom_bytes = w->total > w->used ? w->total - w->used : 0;
        o->rate_bytes_per_s = w->rate;
        o->eta_ms = w->eta_ms;
    }
    x->wranks = wr;
    x->n_wranks = cj->nnamed;
}

void sw_crash_elig_add(sw_cjob_t *cj, uint32_t wi)
{
    cwarn_t *w = &cj->w[wi];
    w->eligible = true;
    w->prev = CNIL;
    w->next = cj->e_head;
    if (cj->e_head != CNIL) cj->w[cj->e_head].prev = wi;
    cj->e_head = wi;
    cj->n_elig++;
}

static void elig_del(sw_cjob_t *cj, uint32_t wi)
{
    cwarn_t *w = &cj->w[wi];
    if (w->prev != CNIL) cj->w[w->prev].next = w->next;
    else cj->e_head = w->next;
    if (w->next != CNIL) cj->w[w->next].prev = w->prev;
    w->eligible = false;
    cj->n_elig--;
}

/* Update rank ci's capacity, growth and eligibility from a sample.
 * @returns true when it became eligible or its projection got shorter. */
bool sw_crash_warn_sample(const sw_detector_t *det, sw_cjob_t *cj, uint32_t ci,
                          const sw_event_t *ev)
{
    crank_t *c = &cj->r[ci];
    if (c_w(cj, c) == CNIL) {
        SW_GROW(cj->w, cj->nw, cj->capw, 4);
        uint32_t nwi = (uint32_t)cj->nw++;
        cd_get(cj, c)->w = nwi;
        cwarn_t *w = &cj->w[nwi];
        memset(w, 0, sizeof(*w));
        w->ci = ci;
        w->q_since = INT64_MIN;
        w->eta_ms = -1;
        w->prev = w->next = CNIL;
        w->ts = INT64_MIN;
    }
    uint32_t wi = c_w(cj, c);
    cwarn_t *w = &cj->w[wi];
    int64_t ts = ev->timestamp_ns;
    if (ts <= w->ts) return false; /* late: the estimate follows the newest samples */
    w->ts = ts;
    w->total = ev->device_total_bytes.value;
    w->used = ev->device_used_bytes;
    /* A rate point every POINT_NS; the slope runs from the oldest point
     * at least MIN_SPAN_NS old. */
    size_t last = (w->head + NPOINTS - 1) % NPOINTS;
    if (w->npt == 0 || ts - w->pts[last] >= POINT_NS) {
        w->pts[w->head] = ts;
        w->pused[w->head] = w->used;
        w->head = (uint8_t)((w->head + 1) % NPOINTS);
        if (w->npt < NPOINTS) w->npt++;
    }
    size_t oldest = (w->head + NPOINTS - w->npt) % NPOINTS;
    int64_t span = ts - w->pts[oldest];
    double rate = 0;
    if (w->npt >= 2 && span >= MIN_SPAN_NS)
        rate = ((double)w->used - (double)w->pused[oldest]) * 1e9 / (double)span;
    int64_t headroom = w->total > w->used ? w->total - w->used : 0; /* used > total: full */
    w->rate = rate > 9e18 ? INT64_MAX : (int64_t)rate;
    double eta = headroom == 0 ? 0 : rate > 0 ? (double)headroom * 1000.0 / rate : -1;
    int64_t old_eta = w->eta_ms;
    w->eta_ms = eta < 0 ? -1 : eta > 9e15 ? INT64_C(9000000000000000) : (int64_t)eta;
    double frac = det->params.oom_warn_headroom;
    double warn_ms = (double)det->params.oom_warn_ms;
    bool strict = headroom < frac * (double)w->total && eta >= 0 && eta <= warn_ms;
    bool relaxed = headroom < 1.5 * frac * (double)w->total && eta >= 0 && eta <= 2 * warn_ms;
    if (strict) {
        if (w->q_since == INT64_MIN) w->q_since = ts;
    } else if (!(w->eligible && relaxed)) {
        w->q_since = INT64_MIN;
    }
    bool was = w->eligible;
    bool now = was ? relaxed : (strict && ts - w->q_since >= PERSIST_NS);
    if (now && !was) sw_crash_elig_add(cj, wi);
    if (!now && was) elig_del(cj, wi);
    return now && (!was || (old_eta >= 0 && w->eta_ms < old_eta));
}

/* A sample far from full: the rank's estimate starts over next time. */
void sw_crash_warn_far(sw_cjob_t *cj, uint32_t wi, int64_t ts)
{
    cwarn_t *w = &cj->w[wi];
    if (ts <= w->ts) return;
    w->ts = ts;
    w->npt = 0;
    w->head = 0;
    w->q_since = INT64_MIN;
    w->eta_ms = -1;
    if (w->eligible) elig_del(cj, wi);
}

void sw_crash_warn_job(sw_detector_t *det, job_t *j, const sw_event_t *ev, int64_t offset,
                       uint32_t changed_w)
{
    sw_cjob_t *cj = j->cj;
    if (cj->c_open) return; /* no warning opens while a crash is open */
    int64_t warn_ns = det->params.oom_warn_ms * 1000000;
    if (!cj->w_open) {
        if (!cj->n_elig) return;
        if (cj->has_w_last && cj->mrel - cj->w_last < warn_ns) return; /* one per oom.warn.ms */
        cj->w_open = true;
        cj->warning++;
        cj->w_rev = 0;
        cj->w_nrev = 0;
        cj->empty_since = INT64_MIN;
        pick_named(cj);
        emit_warning(det, j, ev, offset, true, SW_X8_END_NONE);
        return;
    }
    if (cj->n_elig) {
        cj->empty_since = INT64_MIN;
        if (changed_w == CNIL || cj->w[changed_w].named || cj->w_nrev >= MAX_REVISIONS) return;
        int64_t eta = cj->w[changed_w].eta_ms;
        for (size_t i = 0; i < cj->nnamed; i++) {
            const cwarn_t *n = &cj->w[cj->named[i]];
            if (n->eligible && n->eta_ms <= eta) return;
        }
        cj->w_rev++;
        cj->w_nrev++;
        pick_named(cj);
        emit_warning(det, j, ev, offset, true, SW_X8_END_NONE);
        return;
    }
    /* Hysteresis: it closes after oom.warn.ms without an eligible rank. */
    if (cj->empty_since == INT64_MIN) cj->empty_since = cj->mrel;
    if (cj->mrel - cj->empty_since < warn_ns) return;
    cj->w_open = false;
    cj->w_rev++;
    for (size_t i = 0; i < cj->nnamed; i++) cj->w[cj->named[i]].named = false;
    cj->nnamed = 0;
    emit_warning(det, j, ev, offset, false, SW_X8_END_ALIVE);
}

/* Close the open warning with a record of its own (a crash opened, or the
 * job was summarised), as the hysteresis closes it. */
void sw_crash_warn_close(sw_detector_t *det, job_t *j, const sw_event_t *ev, int64_t offset,
                         sw_x8_end_t end)
{
    sw_cjob_t *cj = j->cj;
    if (!cj->w_open) return;
    cj->w_open = false;
    cj->w_rev++;
    for (size_t i = 0; i < cj->nnamed; i++) cj->w[cj->named[i]].named = false;
    cj->nnamed = 0;
    emit_warning(det, j, ev, offset, false, end);
}
