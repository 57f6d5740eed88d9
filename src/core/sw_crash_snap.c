/*
 * SPEC 8's section of a snapshot: every live job's ranks, deaths, open
 * crash and warning, read back into a restored detector. The scalar parts
 * (the crash, its first death, each warning rank's estimate, the warning)
 * are written and read from one description each, a table of fields; a
 * read that fails jumps to one place (err_parse). Pure: no I/O, no clock,
 * no globals.
 */
#include <stddef.h>

#include "sw_crash_int.h"

/* SW8b adds, per job, whether the crash was closed at the summary and its
 * death count; SW8a (without them) is still read. */
#define X8_MAGIC "SW8b"
#define X8_MAGIC_A "SW8a"

/* ---- descriptions of the scalar parts ------------------------------------ */

typedef enum x8f_kind_e {
    X8F_I64,  /* int64_t, zigzag varint */
    X8F_BOOL, /* bool, varint 0/1 (read: any non-zero is true) */
    X8F_ENUM, /* an enum, varint, at most max */
    X8F_STR   /* char * (NULL: absent), a flag then the bytes; UTF-8 without NUL */
} x8f_kind_t;

typedef struct x8f_s {
    size_t off;
    x8f_kind_t kind;
    uint64_t max; /* X8F_ENUM: its largest value */
} x8f_t;

_Static_assert(sizeof(sw_death_cause_t) == sizeof(int), "X8F_ENUM reads an enum as an int");

#define X8F(type, field, kind)         \
    {                                  \
        offsetof(type, field), kind, 0 \
    }
#define X8F_E(type, field, max)              \
    {                                        \
        offsetof(type, field), X8F_ENUM, max \
    }
#define X8F_N(tab) (sizeof(tab) / sizeof((tab)[0]))

/* The open crash (its dead list follows). */
static const x8f_t crash_fields[] = {
    X8F(sw_cjob_t, has_mrel, X8F_BOOL), X8F(sw_cjob_t, mrel, X8F_I64),
    X8F(sw_cjob_t, c_open, X8F_BOOL),   X8F(sw_cjob_t, crash, X8F_I64),
    X8F(sw_cjob_t, c_rev, X8F_I64),
};

/* The crash's first death (SPEC 8.3); its strings are the job's f_*. */
static const x8f_t first_fields[] = {
    X8F(sw_cjob_t, first.rank, X8F_I64),
    X8F_E(sw_cjob_t, first.cause, SW_DEATH_SILENT),
    X8F(sw_cjob_t, first.timestamp_ns, X8F_I64),
    X8F(sw_cjob_t, first.aligned_timestamp_ns, X8F_I64),
    X8F(sw_cjob_t, f_host, X8F_STR),
    X8F(sw_cjob_t, first.has_device_id, X8F_BOOL),
    X8F(sw_cjob_t, first.device_id, X8F_I64),
    X8F(sw_cjob_t, first.has_local_rank, X8F_BOOL),
    X8F(sw_cjob_t, first.local_rank, X8F_I64),
    X8F(sw_cjob_t, first.pid, X8F_I64),
    X8F(sw_cjob_t, f_sess, X8F_STR),
    X8F(sw_cjob_t, f_reason, X8F_STR),
};

/* A warning rank's latest capacity sample and estimate (after its rank). */
static const x8f_t wrank_fields[] = {
    X8F(cwarn_t, total, X8F_I64),   X8F(cwarn_t, used, X8F_I64), X8F(cwarn_t, ts, X8F_I64),
    X8F(cwarn_t, q_since, X8F_I64), X8F(cwarn_t, rate, X8F_I64), X8F(cwarn_t, eta_ms, X8F_I64),
};

/* The job's warning (its named list follows). */
static const x8f_t warning_fields[] = {
    X8F(sw_cjob_t, w_open, X8F_BOOL),     X8F(sw_cjob_t, warning, X8F_I64),
    X8F(sw_cjob_t, w_rev, X8F_I64),       X8F(sw_cjob_t, w_nrev, X8F_I64),
    X8F(sw_cjob_t, has_w_last, X8F_BOOL), X8F(sw_cjob_t, w_last, X8F_I64),
    X8F(sw_cjob_t, empty_since, X8F_I64),
};

static void put_fields(sw_buf_t *out, const void *base, const x8f_t *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *p = (const char *)base + f[i].off;
        switch (f[i].kind) {
        case X8F_I64: sw_vput_i(out, *(const int64_t *)p); break;
        case X8F_BOOL: sw_vput_u(out, *(const bool *)p); break;
        case X8F_ENUM: sw_vput_u(out, (uint64_t) * (const int *)p); break;
        case X8F_STR: {
            const char *s = *(char *const *)p;
            sw_vput_u(out, s != NULL);
            if (s) sw_vput_bytes(out, sw_str(s));
            break;
        }
        }
    }
}

/* Read the fields back; a malformed one sets r->bad (strings are copied). */
static void get_fields(sw_vrd_t *r, void *base, const x8f_t *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *p = (char *)base + f[i].off;
        switch (f[i].kind) {
        case X8F_I64: *(int64_t *)p = sw_vget_i(r); break;
        case X8F_BOOL: *(bool *)p = sw_vget_u(r) != 0; break;
        case X8F_ENUM: {
            uint64_t v = sw_vget_u(r);
            if (v > f[i].max) r->bad = true;
            else *(int *)p = (int)v;
            break;
        }
        case X8F_STR: {
            char **out = (char **)p;
            *out = NULL;
            if (!sw_vget_u(r)) break;
            sw_str_t s = sw_vget_bytes(r);
            if (r->bad || memchr(s.ptr, 0, s.len) || sw_utf8_bad_at(s.ptr, s.len, true) != s.len)
                r->bad = true;
            else *out = sw_crash_strdup(s);
            break;
        }
        }
    }
}

/* ---- save ------------------------------------------------------------------ */

void sw_crash_save(const sw_detector_t *det, sw_buf_t *out)
{
    sw_crash_save_as(det, out, NULL);
}

void sw_crash_save_as(const sw_detector_t *det, sw_buf_t *out, sw_buf_t *ext)
{
    sw_buf_put(out, ext ? X8_MAGIC_A : X8_MAGIC, 4);
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
        put_fields(out, cj, crash_fields, X8F_N(crash_fields));
        sw_vput_u(out, cj->ndead);
        for (size_t k = 0; k < cj->ndead; k++) sw_vput_u(out, cj->dead[k]);
        put_fields(out, cj, first_fields, X8F_N(first_fields));
        sw_vput_u(out, cj->nw);
        for (size_t k = 0; k < cj->nw; k++) {
            const cwarn_t *w = &cj->w[k];
            sw_vput_u(out, w->ci);
            put_fields(out, w, wrank_fields, X8F_N(wrank_fields));
            sw_vput_u(out, w->npt);
            sw_vput_u(out, w->head);
            for (size_t p = 0; p < NPOINTS; p++) {
                sw_vput_i(out, w->pts[p]);
                sw_vput_i(out, w->pused[p]);
            }
            sw_vput_u(out, w->eligible);
        }
        put_fields(out, cj, warning_fields, X8F_N(warning_fields));
        sw_vput_u(out, cj->nnamed);
        for (size_t k = 0; k < cj->nnamed; k++) sw_vput_u(out, cj->named[k]);
        sw_buf_t *more = ext ? ext : out; /* SW8b's fields */
        sw_vput_u(more, cj->c_ended);
        sw_vput_i(more, cj->c_died);
    }
}

/* ---- load ------------------------------------------------------------------ */

/* A check of what was read: false (or a malformed read) goes to err_parse. */
#define X8_CHECK(cond)                         \
    do {                                       \
        if (r->bad || !(cond)) goto err_parse; \
    } while (0)

/* The ranks: their deaths, stops, life and collector state. */
static bool load_ranks(sw_detector_t *det, job_t *j, sw_cjob_t *cj, sw_vrd_t *r)
{
    uint64_t n = sw_vget_u(r);
    X8_CHECK(n <= (uint64_t)(r->end - r->p));
    for (uint64_t k = 0; k < n; k++) {
        int64_t rank = sw_vget_i(r);
        int64_t ri = sw_vget_i(r);
        X8_CHECK(rank >= 0 && sw_crash_rank_find(j, cj, rank) == CNIL);
        if (ri != -1) {
            uint32_t got;
            X8_CHECK(ri >= 0 && (uint64_t)ri < j->ranks.n &&
                     sw_imap_get(&j->ranks.map, rank, &got) && got == (uint32_t)ri &&
                     !(ri < (int64_t)cj->cap_ri && cj->ri2ci[ri] != CNIL));
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
        X8_CHECK(life <= LIFE_SILENT);
        c->life = (uint8_t)life;
        sw_crash_set_blind(det, cj, c);
    }
    uint64_t nh = sw_vget_u(r);
    X8_CHECK(nh <= cj->n);
    for (uint64_t k = 0; k < nh; k++) {
        int64_t dl = sw_vget_i(r);
        uint64_t ci = sw_vget_u(r);
        X8_CHECK(ci < cj->n && cj->r[ci].hpos == CNIL);
        SW_GROW(cj->heap, cj->nheap, cj->capheap, 4);
        sheap_t e = {dl, (uint32_t)ci};
        sw_crash_heap_set(cj, cj->nheap++, e);
    }
    for (size_t k = 1; k < cj->nheap; k++)
        X8_CHECK(cj->heap[(k - 1) / 2].deadline <= cj->heap[k].deadline);
    return true;
err_parse:
    return false;
}

/* The open crash, its dead list and first death. */
static bool load_crash(sw_cjob_t *cj, sw_vrd_t *r)
{
    get_fields(r, cj, crash_fields, X8F_N(crash_fields));
    uint64_t nd = sw_vget_u(r);
    X8_CHECK(nd <= cj->n && cj->crash >= 0 && cj->c_rev >= 0 && cj->crash <= COUNT_MAX &&
             cj->c_rev <= COUNT_MAX && cj->c_open == (nd > 0));
    for (uint64_t k = 0; k < nd; k++) {
        uint64_t ci = sw_vget_u(r);
        X8_CHECK(ci < cj->n && c_dpos(cj, &cj->r[ci]) == CNIL && cj->r[ci].life != LIFE_ALIVE);
        SW_GROW(cj->dead, cj->ndead, cj->capdead, 4);
        cd_get(cj, &cj->r[ci])->dpos = (uint32_t)cj->ndead;
        cj->dead[cj->ndead++] = (uint32_t)ci;
    }
    for (size_t k = 0; k < cj->n; k++)
        X8_CHECK((cj->r[k].life != LIFE_ALIVE) == (c_dpos(cj, &cj->r[k]) != CNIL));
    get_fields(r, cj, first_fields, X8F_N(first_fields));
    X8_CHECK(cj->crash == 0 || cj->f_host);
    sw_death_t *f = &cj->first;
    f->host = sw_str(cj->f_host ? cj->f_host : "");
    f->has_session = cj->f_sess != NULL;
    f->session_id = sw_str(cj->f_sess ? cj->f_sess : "");
    f->has_oom_reason = cj->f_reason != NULL;
    f->oom_reason = sw_str(cj->f_reason ? cj->f_reason : "");
    return true;
err_parse:
    return false;
}

/* The warning table, the warning and its named ranks. */
static bool load_warning(sw_cjob_t *cj, sw_vrd_t *r)
{
    uint64_t nw = sw_vget_u(r);
    X8_CHECK(nw <= cj->n);
    for (uint64_t k = 0; k < nw; k++) {
        SW_GROW(cj->w, cj->nw, cj->capw, 4);
        cwarn_t *w = &cj->w[cj->nw];
        memset(w, 0, sizeof(*w));
        uint64_t ci = sw_vget_u(r);
        X8_CHECK(ci < cj->n && c_w(cj, &cj->r[ci]) == CNIL);
        w->ci = (uint32_t)ci;
        cd_get(cj, &cj->r[ci])->w = (uint32_t)cj->nw;
        get_fields(r, w, wrank_fields, X8F_N(wrank_fields));
        uint64_t npt = sw_vget_u(r), head = sw_vget_u(r);
        X8_CHECK(npt <= NPOINTS && head < NPOINTS);
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
    get_fields(r, cj, warning_fields, X8F_N(warning_fields));
    uint64_t nn = sw_vget_u(r);
    X8_CHECK(nn <= SW_X8_WARN_MAX && cj->warning >= 0 && cj->warning <= COUNT_MAX &&
             cj->w_rev >= 0 && cj->w_rev <= COUNT_MAX && cj->w_nrev >= 0);
    for (uint64_t k = 0; k < nn; k++) {
        uint64_t wi = sw_vget_u(r);
        X8_CHECK(wi < cj->nw && !cj->w[wi].named);
        cj->w[wi].named = true;
        cj->named[cj->nnamed++] = (uint32_t)wi;
    }
    /* The eligible list's order does not matter: records sort it. */
    return true;
err_parse:
    return false;
}

static bool load_job(sw_detector_t *det, job_t *j, sw_vrd_t *r, bool v_b)
{
    sw_cjob_t *cj = sw_crash_cjob(j);
    X8_CHECK(load_ranks(det, j, cj, r) && load_crash(cj, r) && load_warning(cj, r));
    if (v_b) {
        cj->c_ended = sw_vget_u(r) != 0;
        cj->c_died = sw_vget_i(r);
        X8_CHECK(!(cj->c_ended && !cj->c_open) && cj->c_died >= 0 && cj->c_died <= COUNT_MAX);
    } else {
        cj->c_died = (int64_t)cj->ndead; /* SW8a: the deaths it still holds */
    }
    X8_CHECK(true);
    return true;
err_parse:
    return false;
}

bool sw_crash_load_ext(sw_detector_t *det, sw_vrd_t *r)
{
    for (size_t i = 0; i < det->njobs; i++) {
        sw_cjob_t *cj = det->jobs[i] ? det->jobs[i]->cj : NULL;
        if (!cj) continue;
        cj->c_ended = sw_vget_u(r) != 0;
        cj->c_died = sw_vget_i(r);
        X8_CHECK(!(cj->c_ended && !cj->c_open) && cj->c_died >= 0 && cj->c_died <= COUNT_MAX);
    }
    return true;
err_parse:
    return false;
}

bool sw_crash_load(sw_detector_t *det, sw_vrd_t *r)
{
    X8_CHECK(r->end - r->p >= 4);
    bool v_b = memcmp(r->p, X8_MAGIC, 4) == 0;
    X8_CHECK(v_b || memcmp(r->p, X8_MAGIC_A, 4) == 0);
    r->p += 4;
    int64_t s = sw_vget_i(r), w = sw_vget_i(r), h = sw_vget_i(r);
    X8_CHECK(s == det->params.silence_ms && w == det->params.oom_warn_ms &&
             h == (int64_t)(det->params.oom_warn_headroom * 1e9 + 0.5));
    for (size_t i = 0; i < det->njobs; i++) {
        job_t *j = det->jobs[i];
        if (!j) continue;
        bool has = sw_vget_u(r) != 0;
        X8_CHECK(!has || load_job(det, j, r, v_b));
    }
    X8_CHECK(true);
    return true;
err_parse:
    return false;
}
