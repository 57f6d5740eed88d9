/*
 * SPEC 8's section of a snapshot: every live job's ranks, deaths, open
 * crash and warning, read back into a restored detector. Pure: no I/O, no
 * clock, no globals.
 */
#include "sw_crash_int.h"

/* SW8b adds, per job, whether the crash was closed at the summary and its
 * death count; SW8a (without them) is still read. */
#define X8_MAGIC "SW8b"
#define X8_MAGIC_A "SW8a"

static void put_str(sw_buf_t *b, const char *s)
{
    sw_vput_u(b, s != NULL);
    if (s) sw_vput_bytes(b, sw_str(s));
}

void sw_crash_save(const sw_detector_t *det, sw_buf_t *out)
{
    sw_buf_put(out, X8_MAGIC, 4);
    sw_vput_i(out, det->params.silence_ms);
    sw_vput_i(out, det->params.oom_warn_ms);
    int64_t h = (int64_t)(det->params.oom_warn_headroom * 1e9 + 0.5);
    sw_vput_i(out, h);
    for (size_t i = 0; i < det->njobs; i++) {
        const job_t *j = det->jobs[i];
        if (!j) continue;
        const sw_cjob_t *cj = j->cj;
        sw_vput_u(out, cj != NULL);
        if (!cj) continue;
        sw_vput_u(out, cj->n);
        for (size_t k = 0; k < cj->n; k++) {
            const crank_t *c = &cj->r[k];
            sw_vput_i(out, c->rank);
            sw_vput_i(out, c->ri == CNIL ? -1 : (int64_t)c->ri);
            sw_vput_i(out, c->newest_ts);
            sw_vput_i(out, c_stop(cj, c));
            cdeath_t cd = cd_of(cj, c);
            sw_vput_i(out, cd.death_ts);
            sw_vput_i(out, cd.death_al);
            sw_vput_i(out, cd.death_pid);
            sw_vput_u(out, c->life);
            sw_vput_u(out, c->degraded);
        }
        sw_vput_u(out, cj->nheap);
        for (size_t k = 0; k < cj->nheap; k++) {
            sw_vput_i(out, cj->heap[k].deadline);
            sw_vput_u(out, cj->heap[k].ci);
        }
        sw_vput_u(out, cj->has_mrel);
        sw_vput_i(out, cj->mrel);
        sw_vput_u(out, cj->c_open);
        sw_vput_i(out, cj->crash);
        sw_vput_i(out, cj->c_rev);
        sw_vput_u(out, cj->ndead);
        for (size_t k = 0; k < cj->ndead; k++) sw_vput_u(out, cj->dead[k]);
        const sw_death_t *f = &cj->first;
        sw_vput_i(out, f->rank);
        sw_vput_u(out, f->cause);
        sw_vput_i(out, f->timestamp_ns);
        sw_vput_i(out, f->aligned_timestamp_ns);
        put_str(out, cj->f_host);
        sw_vput_u(out, f->has_device_id);
        sw_vput_i(out, f->device_id);
        sw_vput_u(out, f->has_local_rank);
        sw_vput_i(out, f->local_rank);
        sw_vput_i(out, f->pid);
        put_str(out, cj->f_sess);
        put_str(out, cj->f_reason);
        sw_vput_u(out, cj->nw);
        for (size_t k = 0; k < cj->nw; k++) {
            const cwarn_t *w = &cj->w[k];
            sw_vput_u(out, w->ci);
            sw_vput_i(out, w->total);
            sw_vput_i(out, w->used);
            sw_vput_i(out, w->ts);
            sw_vput_i(out, w->q_since);
            sw_vput_i(out, w->rate);
            sw_vput_i(out, w->eta_ms);
            sw_vput_u(out, w->npt);
            sw_vput_u(out, w->head);
            for (size_t p = 0; p < NPOINTS; p++) {
                sw_vput_i(out, w->pts[p]);
                sw_vput_i(out, w->pused[p]);
            }
            sw_vput_u(out, w->eligible);
        }
        sw_vput_u(out, cj->w_open);
        sw_vput_i(out, cj->warning);
        sw_vput_i(out, cj->w_rev);
        sw_vput_i(out, cj->w_nrev);
        sw_vput_u(out, cj->has_w_last);
        sw_vput_i(out, cj->w_last);
        sw_vput_i(out, cj->empty_since);
        sw_vput_u(out, cj->nnamed);
        for (size_t k = 0; k < cj->nnamed; k++) sw_vput_u(out, cj->named[k]);
        sw_vput_u(out, cj->c_ended);
        sw_vput_i(out, cj->c_died);
    }
}

static bool get_str(sw_vrd_t *r, char **out)
{
    *out = NULL;
    if (!sw_vget_u(r)) return !r->bad;
    sw_str_t s = sw_vget_bytes(r);
    if (r->bad || memchr(s.ptr, 0, s.len) || sw_utf8_bad_at(s.ptr, s.len, true) != s.len)
        return false;
    *out = sw_crash_strdup(s);
    return true;
}

static bool load_job(sw_detector_t *det, job_t *j, sw_vrd_t *r, bool v_b)
{
    sw_cjob_t *cj = sw_crash_cjob(j);
    uint64_t n = sw_vget_u(r);
    if (r->bad || n > (uint64_t)(r->end - r->p)) return false;
    for (uint64_t k = 0; k < n; k++) {
        int64_t rank = sw_vget_i(r);
        int64_t ri = sw_vget_i(r);
        if (r->bad || rank < 0 || sw_crash_rank_find(j, cj, rank) != CNIL) return false;
        if (ri != -1) {
            uint32_t got;
            if (ri < 0 || (uint64_t)ri >= j->nranks || !sw_imap_get(&j->rank_map, rank, &got) ||
                got != (uint32_t)ri || (ri < (int64_t)cj->cap_ri && cj->ri2ci[ri] != CNIL))
                return false;
        }
        uint32_t ci = sw_crash_rank_of(j, cj, rank, ri == -1 ? CNIL : (uint32_t)ri);
        crank_t *c = &cj->r[ci];
        c->newest_ts = sw_vget_i(r);
        int64_t stop = sw_vget_i(r);
        if (stop != INT64_MIN) cd_get(cj, c)->stop_ts = stop;
        int64_t death_ts = sw_vget_i(r);
        int64_t death_al = sw_vget_i(r);
        int64_t death_pid = sw_vget_i(r);
        if (death_ts || death_al || death_pid) {
            cdeath_t *cd = cd_get(cj, c);
            cd->death_ts = death_ts;
            cd->death_al = death_al;
            cd->death_pid = death_pid;
        }
        uint64_t life = sw_vget_u(r);
        c->degraded = sw_vget_u(r) != 0;
        if (r->bad || life > LIFE_SILENT) return false;
        c->life = (uint8_t)life;
        sw_crash_set_blind(det, cj, c);
    }
    uint64_t nh = sw_vget_u(r);
    if (r->bad || nh > cj->n) return false;
    for (uint64_t k = 0; k < nh; k++) {
        int64_t dl = sw_vget_i(r);
        uint64_t ci = sw_vget_u(r);
        if (r->bad || ci >= cj->n || cj->r[ci].hpos != CNIL) return false;
        SW_GROW(cj->heap, cj->nheap, cj->capheap, 4);
        sheap_t e = {dl, (uint32_t)ci};
        sw_crash_heap_set(cj, cj->nheap++, e);
    }
    for (size_t k = 1; k < cj->nheap; k++)
        if (cj->heap[(k - 1) / 2].deadline > cj->heap[k].deadline) return false;
    cj->has_mrel = sw_vget_u(r) != 0;
    cj->mrel = sw_vget_i(r);
    cj->c_open = sw_vget_u(r) != 0;
    cj->crash = sw_vget_i(r);
    cj->c_rev = sw_vget_i(r);
    uint64_t nd = sw_vget_u(r);
    if (r->bad || nd > cj->n || cj->crash < 0 || cj->c_rev < 0 || cj->crash > COUNT_MAX ||
        cj->c_rev > COUNT_MAX || (cj->c_open != (nd > 0)))
        return false;
    for (uint64_t k = 0; k < nd; k++) {
        uint64_t ci = sw_vget_u(r);
        if (r->bad || ci >= cj->n || c_dpos(cj, &cj->r[ci]) != CNIL || cj->r[ci].life == LIFE_ALIVE)
            return false;
        SW_GROW(cj->dead, cj->ndead, cj->capdead, 4);
        cd_get(cj, &cj->r[ci])->dpos = (uint32_t)cj->ndead;
        cj->dead[cj->ndead++] = (uint32_t)ci;
    }
    for (size_t k = 0; k < cj->n; k++)
        if ((cj->r[k].life != LIFE_ALIVE) != (c_dpos(cj, &cj->r[k]) != CNIL)) return false;
    sw_death_t *f = &cj->first;
    f->rank = sw_vget_i(r);
    uint64_t cause = sw_vget_u(r);
    f->timestamp_ns = sw_vget_i(r);
    f->aligned_timestamp_ns = sw_vget_i(r);
    if (!get_str(r, &cj->f_host)) return false;
    f->has_device_id = sw_vget_u(r) != 0;
    f->device_id = sw_vget_i(r);
    f->has_local_rank = sw_vget_u(r) != 0;
    f->local_rank = sw_vget_i(r);
    f->pid = sw_vget_i(r);
    if (!get_str(r, &cj->f_sess) || !get_str(r, &cj->f_reason) || cause > SW_DEATH_SILENT)
        return false;
    f->cause = (sw_death_cause_t)cause;
    if (cj->crash > 0 && !cj->f_host) return false;
    f->host = sw_str(cj->f_host ? cj->f_host : "");
    f->has_session = cj->f_sess != NULL;
    f->session_id = sw_str(cj->f_sess ? cj->f_sess : "");
    f->has_oom_reason = cj->f_reason != NULL;
    f->oom_reason = sw_str(cj->f_reason ? cj->f_reason : "");
    uint64_t nw = sw_vget_u(r);
    if (r->bad || nw > cj->n) return false;
    for (uint64_t k = 0; k < nw; k++) {
        SW_GROW(cj->w, cj->nw, cj->capw, 4);
        cwarn_t *w = &cj->w[cj->nw];
        memset(w, 0, sizeof(*w));
        uint64_t ci = sw_vget_u(r);
        if (r->bad || ci >= cj->n || c_w(cj, &cj->r[ci]) != CNIL) return false;
        w->ci = (uint32_t)ci;
        cd_get(cj, &cj->r[ci])->w = (uint32_t)cj->nw;
        w->total = sw_vget_i(r);
        w->used = sw_vget_i(r);
        w->ts = sw_vget_i(r);
        w->q_since = sw_vget_i(r);
        w->rate = sw_vget_i(r);
        w->eta_ms = sw_vget_i(r);
        uint64_t npt = sw_vget_u(r), head = sw_vget_u(r);
        if (npt > NPOINTS || head >= NPOINTS) return false;
        w->npt = (uint8_t)npt;
        w->head = (uint8_t)head;
        for (size_t p = 0; p < NPOINTS; p++) {
            w->pts[p] = sw_vget_i(r);
            w->pused[p] = sw_vget_i(r);
        }
        w->prev = w->next = CNIL;
        bool elig = sw_vget_u(r) != 0;
        cj->nw++;
        if (elig) sw_crash_elig_add(cj, (uint32_t)(cj->nw - 1));
    }
    cj->w_open = sw_vget_u(r) != 0;
    cj->warning = sw_vget_i(r);
    cj->w_rev = sw_vget_i(r);
    cj->w_nrev = sw_vget_i(r);
    cj->has_w_last = sw_vget_u(r) != 0;
    cj->w_last = sw_vget_i(r);
    cj->empty_since = sw_vget_i(r);
    uint64_t nn = sw_vget_u(r);
    if (r->bad || nn > SW_X8_WARN_MAX || cj->warning < 0 || cj->warning > COUNT_MAX ||
        cj->w_rev < 0 || cj->w_rev > COUNT_MAX || cj->w_nrev < 0)
        return false;
    for (uint64_t k = 0; k < nn; k++) {
        uint64_t wi = sw_vget_u(r);
        if (r->bad || wi >= cj->nw || cj->w[wi].named) return false;
        cj->w[wi].named = true;
        cj->named[cj->nnamed++] = (uint32_t)wi;
    }
    if (v_b) {
        cj->c_ended = sw_vget_u(r) != 0;
        cj->c_died = sw_vget_i(r);
        if (r->bad || (cj->c_ended && !cj->c_open) || cj->c_died < 0 || cj->c_died > COUNT_MAX)
            return false;
    } else {
        cj->c_died = (int64_t)cj->ndead; /* SW8a: the deaths it still holds */
    }
    /* The eligible list's order does not matter: records sort it. */
    return !r->bad;
}

bool sw_crash_load(sw_detector_t *det, sw_vrd_t *r)
{
    if (r->end - r->p < 4) return false;
    bool v_b = memcmp(r->p, X8_MAGIC, 4) == 0;
    if (!v_b && memcmp(r->p, X8_MAGIC_A, 4) != 0) return false;
    r->p += 4;
    int64_t s = sw_vget_i(r), w = sw_vget_i(r), h = sw_vget_i(r);
    if (r->bad || s != det->params.silence_ms || w != det->params.oom_warn_ms ||
        h != (int64_t)(det->params.oom_warn_headroom * 1e9 + 0.5))
        return false;
    for (size_t i = 0; i < det->njobs; i++) {
        job_t *j = det->jobs[i];
        if (!j) continue;
        bool has = sw_vget_u(r) != 0;
        if (r->bad) return false;
        if (has && !load_job(det, j, r, v_b)) return false;
    }
    return !r->bad;
}
