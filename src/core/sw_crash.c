/*
 * SPEC 8 beside the stream engine. Per job: each rank's newest event time,
 * life (alive, dead of oom, silent), collector state and capacity; a lazy
 * min-heap of silence deadlines (a rank is re-keyed only when it reaches
 * the top, so an in-order event costs O(1) and each rank O(log n) once per
 * silence period); the open crash with its first death; the warning with
 * its list of qualifying ranks. Records are built only when emitted.
 * Never changes SPEC 6 state; reads it (offsets, sources, the episode).
 * Pure: no I/O, no clock, no globals.
 */
#include "sw_crash.h"

#include <stdlib.h>
#include <string.h>

#include "sw_detect_cands.h"

#define CNIL UINT32_MAX
#define PERSIST_NS INT64_C(5000000000)  /* a rank qualifies this long before it warns */
#define POINT_NS INT64_C(2500000000)    /* rate points at least this far apart */
#define NPOINTS 6                       /* ... kept per rank: a 12.5-15 s slope */
#define MIN_SPAN_NS INT64_C(5000000000) /* shortest span of a rate estimate */
#define MAX_REVISIONS 3

enum { LIFE_ALIVE = 0, LIFE_OOM = 1, LIFE_SILENT = 2 };

typedef struct crank_s {
    int64_t rank;
    uint32_t ri;       /* SPEC 6 rank index, CNIL while the rank had no sample */
    uint32_t hpos;     /* silence heap position, CNIL when absent */
    int64_t newest_ts; /* newest event timestamp (any type), INT64_MIN none */
    uint32_t d;        /* index in the job's death marks (cdeath_t), CNIL: none */
    uint8_t life;
    bool degraded;
    bool blind;
} crank_t;

/* A rank's last death and stop, and its warning state, out of line (few
 * ranks die, stop or near their capacity): created when it first needs one
 * of them (or is restored with marks), kept after it revives. */
typedef struct cdeath_s {
    int64_t death_ts;  /* d while dead */
    int64_t death_al;  /* aligned d */
    int64_t death_pid; /* the pid that died (oom) */
    int64_t stop_ts;   /* a stop at this time (INT64_MIN none): not silent */
    uint32_t dpos;     /* index in the job's dead list, CNIL alive */
    uint32_t w;        /* index in the warning table, CNIL none */
} cdeath_t;

typedef struct cwarn_s {
    uint32_t ci;
    int64_t total, used, ts; /* the rank's latest sample with a capacity */
    int64_t q_since;         /* start of its qualifying run, INT64_MIN none */
    int64_t rate, eta_ms;    /* last estimate (bytes/s, ms; eta -1 = none) */
    int64_t pts[NPOINTS], pused[NPOINTS];
    uint8_t npt, head;
    bool eligible, named;
    uint32_t prev, next; /* eligible list */
} cwarn_t;

typedef struct sheap_s {
    int64_t deadline; /* rel of newest event + threshold (maybe stale-low) */
    uint32_t ci;
} sheap_t;

struct sw_cjob_s {
    crank_t *r;
    size_t n, cap;
    sw_imap_t map;   /* rank -> ci, of the ranks met without a SPEC 6 rank index */
    uint32_t *ri2ci; /* SPEC 6 rank index -> ci */
    size_t cap_ri;
    sheap_t *heap;
    size_t nheap, capheap;
    bool has_mrel;
    int64_t mrel; /* newest event time of the job, relative (aligned - anchor first) */
    size_t nblind;
    /* crash */
    bool c_open;
    bool c_ended; /* its closing record went out at the job's summary (ranks still dead) */
    int64_t crash, c_rev;
    int64_t c_died; /* deaths during the open crash */
    uint32_t *dead; /* ci of dead ranks */
    size_t ndead, capdead;
    cdeath_t *deaths; /* crank_t.d */
    size_t ndeaths, capdeaths;
    sw_death_t first; /* strings in f_* below */
    char *f_host, *f_sess, *f_reason;
    /* warning */
    cwarn_t *w;
    size_t nw, capw;
    uint32_t e_head; /* eligible list (w index) */
    size_t n_elig;
    bool w_open;
    int64_t warning, w_rev, w_nrev;
    bool has_w_last;
    int64_t w_last;      /* mrel of the last warning record */
    int64_t empty_since; /* mrel since when no rank is eligible (INT64_MIN: some is) */
    uint32_t named[SW_X8_WARN_MAX];
    size_t nnamed;
};

/* Rank c's death marks: zeros when it never died. */
static cdeath_t cd_of(const sw_cjob_t *cj, const crank_t *c)
{
    cdeath_t none = {0, 0, 0, INT64_MIN, CNIL, CNIL};
    return c->d == CNIL ? none : cj->deaths[c->d];
}

/* Rank c's stop time, INT64_MIN none. */
static int64_t c_stop(const sw_cjob_t *cj, const crank_t *c)
{
    return c->d == CNIL ? INT64_MIN : cj->deaths[c->d].stop_ts;
}

/* Rank c's index in the warning table, CNIL none. */
static uint32_t c_w(const sw_cjob_t *cj, const crank_t *c)
{
    return c->d == CNIL ? CNIL : cj->deaths[c->d].w;
}

/* Rank c's index in the dead list, CNIL alive. */
static uint32_t c_dpos(const sw_cjob_t *cj, const crank_t *c)
{
    return c->d == CNIL ? CNIL : cj->deaths[c->d].dpos;
}

/* Rank c's death marks, created (zero) when it has none: for writing. */
static cdeath_t *cd_get(sw_cjob_t *cj, crank_t *c)
{
    if (c->d == CNIL) {
        SW_GROW(cj->deaths, cj->ndeaths, cj->capdeaths, 4);
        memset(&cj->deaths[cj->ndeaths], 0, sizeof(cj->deaths[0]));
        cj->deaths[cj->ndeaths].stop_ts = INT64_MIN;
        cj->deaths[cj->ndeaths].dpos = CNIL;
        cj->deaths[cj->ndeaths].w = CNIL;
        c->d = (uint32_t)cj->ndeaths++;
    }
    return &cj->deaths[c->d];
}

#define XOUT_MAX 4
struct sw_xout_s {
    sw_record_t rec[XOUT_MAX];
    sw_x8_t x8[XOUT_MAX];
    size_t n, next;
    bool crash_pending;     /* the event made a crash record due */
    bool crash_opened;      /* ... which opens the crash */
    int64_t closed_warning; /* ... and closed this warning (0 none) */
    bool has_prev;          /* ... and replaced this first death (a revision) */
    sw_x8_t job_crash;      /* a summarised job's latest crash (sw_crash_job_crash) */
    bool has_job_crash;
    int64_t prev_rank, prev_al;
    sw_arena_t arena;
};

/* ---- classification (SPEC 8.1) ----------------------------------------- */

static bool ieq(sw_str_t s, const char *lit)
{
    size_t n = strlen(lit);
    if (s.len != n) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s.ptr[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
        if (c != lit[i]) return false;
    }
    return true;
}

static bool icontains(sw_str_t s, const char *lit)
{
    size_t n = strlen(lit);
    for (size_t i = 0; i + n <= s.len; i++) {
        size_t k = 0;
        for (; k < n; k++) {
            char c = s.ptr[i + k];
            if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
            if (c != lit[k]) break;
        }
        if (k == n) return true;
    }
    return false;
}

sw_x8_kind_t sw_crash_kind(const sw_event_t *ev)
{
    sw_str_t t = ev->event_type;
    if (t.len < 3 || t.len > 19) return SW_X8_NONE;
    if (ieq(t, "oom")) return SW_X8_DEATH;
    if (ieq(t, "error") || ieq(t, "critical")) {
        if (ev->oom_marker) return SW_X8_DEATH;
        if (ev->context.set && icontains(ev->context.value, "out of memory")) return SW_X8_DEATH;
        return SW_X8_ERROR;
    }
    if (ieq(t, "collector_degraded")) return SW_X8_DEGRADED;
    if (ieq(t, "collector_recovered")) return SW_X8_RECOVERED;
    if (ieq(t, "stop")) return SW_X8_STOP;
    return SW_X8_NONE;
}

/* ---- per-job state ------------------------------------------------------ */

void sw_crash_job_free(sw_cjob_t *cj)
{
    if (!cj) return;
    free(cj->r);
    sw_imap_clear(&cj->map);
    free(cj->ri2ci);
    free(cj->heap);
    free(cj->dead);
    free(cj->deaths);
    free(cj->w);
    free(cj->f_host);
    free(cj->f_sess);
    free(cj->f_reason);
    free(cj);
}

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

size_t sw_crash_job_bytes(const sw_cjob_t *cj)
{
    if (!cj) return 0;
    return sizeof(*cj) + cj->cap * sizeof(crank_t) + sw_imap_bytes(&cj->map) +
           cj->cap_ri * sizeof(uint32_t) + cj->capheap * sizeof(sheap_t) +
           cj->capdead * sizeof(uint32_t) + cj->capdeaths * sizeof(cdeath_t) +
           cj->capw * sizeof(cwarn_t) + (cj->f_host ? strlen(cj->f_host) + 1 : 0) +
           (cj->f_sess ? strlen(cj->f_sess) + 1 : 0) +
           (cj->f_reason ? strlen(cj->f_reason) + 1 : 0);
}

size_t sw_crash_job_blind(const sw_cjob_t *cj)
{
    return cj ? cj->nblind : 0;
}

static sw_cjob_t *cjob_get(job_t *j)
{
    if (!j->cj) {
        j->cj = sw_calloc(1, sizeof(*j->cj));
        j->cj->empty_since = INT64_MIN;
        j->cj->e_head = CNIL;
    }
    return j->cj;
}

static uint32_t crank_add(sw_cjob_t *cj, int64_t rank, bool mapped)
{
    SW_GROW(cj->r, cj->n, cj->cap, 4);
    uint32_t ci = (uint32_t)cj->n++;
    crank_t *c = &cj->r[ci];
    memset(c, 0, sizeof(*c));
    c->rank = rank;
    c->ri = c->hpos = c->d = CNIL;
    c->newest_ts = INT64_MIN;
    if (mapped) sw_imap_put(&cj->map, rank, ci);
    return ci;
}

/* The SPEC 8 rank of @p rank, CNIL none: through its SPEC 6 rank index
 * when it has one (ri2ci: a wide job's ranks cost no map entry here),
 * else through the map. */
static uint32_t crank_find(const job_t *j, const sw_cjob_t *cj, int64_t rank)
{
    uint32_t ri, ci;
    if (sw_imap_get(&j->rank_map, rank, &ri) && ri < cj->cap_ri && cj->ri2ci[ri] != CNIL)
        return cj->ri2ci[ri];
    return sw_imap_get(&cj->map, rank, &ci) ? ci : CNIL;
}

/* The SPEC 8 rank of an event; links a SPEC 6 rank index when given. */
static uint32_t crank_of(const job_t *j, sw_cjob_t *cj, int64_t rank, uint32_t ri)
{
    if (ri != CNIL && ri < cj->cap_ri && cj->ri2ci[ri] != CNIL) return cj->ri2ci[ri];
    uint32_t ci;
    if (ri != CNIL) {
        if (!sw_imap_get(&cj->map, rank, &ci)) ci = crank_add(cj, rank, false);
    } else {
        ci = crank_find(j, cj, rank);
        if (ci == CNIL) ci = crank_add(cj, rank, true);
    }
    if (ri != CNIL) {
        if (ri >= cj->cap_ri) {
            size_t cap = cj->cap_ri ? cj->cap_ri : 4;
            while (cap <= ri) cap *= 2;
            cj->ri2ci = sw_reallocarray(cj->ri2ci, cap, sizeof(*cj->ri2ci));
            for (size_t i = cj->cap_ri; i < cap; i++) cj->ri2ci[i] = CNIL;
            cj->cap_ri = cap;
        }
        cj->ri2ci[ri] = ci;
        cj->r[ci].ri = ri;
    }
    return ci;
}

/* ---- silence heap ---------------------------------------------------- */

static void sh_set(sw_cjob_t *cj, size_t i, sheap_t e)
{
    cj->heap[i] = e;
    cj->r[e.ci].hpos = (uint32_t)i;
}

static void sh_up(sw_cjob_t *cj, size_t i)
{
    sheap_t x = cj->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (cj->heap[p].deadline <= x.deadline) break;
        sh_set(cj, i, cj->heap[p]);
        i = p;
    }
    sh_set(cj, i, x);
}

static void sh_down(sw_cjob_t *cj, size_t i)
{
    sheap_t x = cj->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= cj->nheap) break;
        if (c + 1 < cj->nheap && cj->heap[c + 1].deadline < cj->heap[c].deadline) c++;
        if (cj->heap[c].deadline >= x.deadline) break;
        sh_set(cj, i, cj->heap[c]);
        i = c;
    }
    sh_set(cj, i, x);
}

static void sh_push(sw_cjob_t *cj, uint32_t ci, int64_t deadline)
{
    crank_t *c = &cj->r[ci];
    if (c->hpos != CNIL) {
        /* Keys may stay low (lazy); only a lower deadline moves now. */
        if (deadline < cj->heap[c->hpos].deadline) {
            cj->heap[c->hpos].deadline = deadline;
            sh_up(cj, c->hpos);
        }
        return;
    }
    SW_GROW(cj->heap, cj->nheap, cj->capheap, 4);
    sheap_t e = {deadline, ci};
    sh_set(cj, cj->nheap++, e);
    sh_up(cj, cj->nheap - 1);
}

static void sh_pop(sw_cjob_t *cj)
{
    cj->r[cj->heap[0].ci].hpos = CNIL;
    if (--cj->nheap) {
        sh_set(cj, 0, cj->heap[cj->nheap]);
        sh_down(cj, 0);
    }
}

/* ---- helpers over SPEC 6 state -------------------------------------- */

static int64_t sat_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
    return a + b;
}

/* max(silence.ms, 10 x the rank's sampling interval), ns. */
static inline int64_t silence_ns(const sw_detector_t *det, const job_t *j, const crank_t *c)
{
    int64_t ms = det->params.silence_ms;
    if (c->ri != CNIL) {
        int64_t iv = rk_interval(j, &j->ranks[c->ri]);
        if (iv > 0 && iv <= INT64_MAX / 10 && iv * 10 > ms) ms = iv * 10;
    }
    return ms > INT64_MAX / 1000000 ? INT64_MAX : ms * 1000000;
}

/* The rank's offset (SPEC 6, now): first - anchor first; 0 without one. */
static int64_t rank_offset(const job_t *j, const crank_t *c)
{
    if (c->ri == CNIL || !j->has_sample) return 0;
    return (int64_t)((uint64_t)j->ranks[c->ri].first_ts - (uint64_t)anchor_first(j, NULL));
}

static int64_t rel_of(const job_t *j, const crank_t *c, int64_t ts)
{
    return sat_add(ts, -j->ranks[c->ri].first_ts);
}

static void set_blind(sw_detector_t *det, sw_cjob_t *cj, crank_t *c)
{
    bool b = c->degraded || c->life == LIFE_SILENT;
    if (b == c->blind) return;
    c->blind = b;
    (void)det;
    if (b) cj->nblind++;
    else cj->nblind--;
}

/* ---- records ----------------------------------------------------------- */

static int i64cmp(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

static void fill_blind(sw_xout_t *xo, const sw_cjob_t *cj, sw_record_t *rec)
{
    rec->blind_ranks = NULL;
    rec->n_blind = 0;
    if (!cj || !cj->nblind) return;
    int64_t *v = sw_arena_alloc(&xo->arena, cj->nblind * sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < cj->n && n < cj->nblind; i++)
        if (cj->r[i].blind) v[n++] = cj->r[i].rank;
    qsort(v, n, sizeof(*v), i64cmp);
    rec->blind_ranks = v;
    rec->n_blind = n < SW_X8_BLIND_MAX ? n : SW_X8_BLIND_MAX;
}

static void storm_ref(const job_t *j, sw_storm_ref_t *s)
{
    memset(s, 0, sizeof(*s));
    if (j->episode <= 0) return;
    s->set = true;
    s->episode = j->episode;
    s->open = j->open;
    if (j->has_verdict && j->v_n) {
        s->has_rank = true;
        s->first_cause_rank = j->v_sus[0].rank;
        s->has_onset = true;
        s->onset_ns = j->v_onset;
    }
}

static sw_record_t *x_emit(sw_detector_t *det, job_t *j, sw_action_t action, const sw_event_t *ev,
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
    rec->analysis.has_job_id = j->has_job_id;
    rec->analysis.job_id.ptr = j->job_id ? j->job_id : "";
    rec->analysis.job_id.len = j->job_id_len;
    rec->analysis.anchor_rank = -1;
    rec->has_event_ts = ev != NULL; /* none: closed at the job's summary */
    rec->event_timestamp_ns = ev ? ev->timestamp_ns : 0;
    rec->cause_offset = tag_offset(offset); /* a tag (det_tag) */
    rec->cause_source = tag_source(offset);
    rec->resolve_rank = -1;
    rec->episode_confidence = -2;
    rec->x8 = *x8;
    storm_ref(j, &(*x8)->storm);
    fill_blind(xo, j->cj, rec);
    det->st.records[action]++;
    return rec;
}

static int dead_cmp_al(const sw_cjob_t *cj, uint32_t a, uint32_t b)
{
    const crank_t *x = &cj->r[a], *y = &cj->r[b];
    int64_t xa = cd_of(cj, x).death_al, ya = cd_of(cj, y).death_al;
    if (xa != ya) return xa < ya ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* A copy of @p s in the event's record arena: a record owns what it names,
 * so a later death of the same event (first_set() replaces the job's
 * strings) leaves the records already queued intact. */
static sw_str_t xo_str(sw_xout_t *xo, sw_str_t s)
{
    if (!s.len) return s;
    char *p = sw_arena_alloc(&xo->arena, s.len);
    memcpy(p, s.ptr, s.len);
    return (sw_str_t){p, s.len};
}

/* The crash record: open, or (@p end set) the one that closes the crash
 * with its final answer. */
static void emit_crash(sw_detector_t *det, job_t *j, const sw_event_t *ev, int64_t offset,
                       int64_t closed_warning, sw_x8_end_t end)
{
    sw_cjob_t *cj = j->cj;
    sw_x8_t *x;
    sw_record_t *rec = x_emit(det, j, SW_ACTION_CRASH, ev, offset, &x);
    if (!rec) return;
    rec->episode = cj->crash;
    rec->revision = cj->c_rev;
    x->number = cj->crash;
    x->open = end == SW_X8_END_NONE;
    x->end = end;
    x->first = cj->first;
    x->first.host = xo_str(det->xo, cj->first.host);
    x->first.session_id = xo_str(det->xo, cj->first.session_id);
    x->first.oom_reason = xo_str(det->xo, cj->first.oom_reason);
    x->deaths = (int64_t)cj->ndead;
    x->deaths_total = cj->c_died;
    x->closed_warning = closed_warning;
    if (x->open && det->xo->has_prev && !det->xo->crash_opened) {
        x->has_previous = true;
        x->previous_rank = det->xo->prev_rank;
        x->previous_aligned_ns = det->xo->prev_al;
    }
    /* The earliest SW_X8_DEAD_MAX by aligned death time: a partial
     * selection, then a sort of those few. */
    size_t k = cj->ndead < SW_X8_DEAD_MAX ? cj->ndead : SW_X8_DEAD_MAX;
    uint32_t *sel = sw_arena_alloc(&det->xo->arena, (k ? k : 1) * sizeof(*sel));
    size_t n = 0;
    for (size_t i = 0; i < cj->ndead; i++) {
        uint32_t ci = cj->dead[i];
        size_t p = n < k ? n++ : k;
        if (p == k) {
            if (dead_cmp_al(cj, ci, sel[k - 1]) >= 0) continue;
            p = k - 1;
        }
        while (p > 0 && dead_cmp_al(cj, ci, sel[p - 1]) < 0) {
            sel[p] = sel[p - 1];
            p--;
        }
        sel[p] = ci;
    }
    int64_t *ranks = sw_arena_alloc(&det->xo->arena, (k ? k : 1) * sizeof(*ranks));
    for (size_t i = 0; i < n; i++) ranks[i] = cj->r[sel[i]].rank;
    x->dead_ranks = ranks;
    x->n_dead = n;
}

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
    sw_record_t *rec = x_emit(det, j, SW_ACTION_WARNING, ev, offset, &x);
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
        if (c->ri != CNIL && j->ranks[c->ri].last_src != NIL) {
            const sw_src_t *s = &j->srcs[j->ranks[c->ri].last_src];
            o->host = sw_intern_get(j->strs, s->host);
            o->device_id = src_device(j, j->ranks[c->ri].last_src);
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

/* ---- deaths (SPEC 8.2, 8.3) ------------------------------------------ */

static char *dup_str(sw_str_t s)
{
    char *p = sw_malloc(s.len + 1);
    if (s.len) memcpy(p, s.ptr, s.len);
    p[s.len] = '\0';
    return p;
}

static void first_set(sw_cjob_t *cj, const crank_t *c, sw_death_cause_t cause, sw_str_t host,
                      bool has_dev, int64_t dev, bool has_lr, int64_t lr, int64_t pid,
                      bool has_sess, sw_str_t sess, bool has_reason, sw_str_t reason)
{
    free(cj->f_host);
    free(cj->f_sess);
    free(cj->f_reason);
    cj->f_host = dup_str(host);
    cj->f_sess = has_sess ? dup_str(sess) : NULL;
    cj->f_reason = has_reason ? dup_str(reason) : NULL;
    sw_death_t *f = &cj->first;
    memset(f, 0, sizeof(*f));
    f->rank = c->rank;
    f->cause = cause;
    f->timestamp_ns = cd_of(cj, c).death_ts;
    f->aligned_timestamp_ns = cd_of(cj, c).death_al;
    f->host = sw_str(cj->f_host);
    f->has_device_id = has_dev;
    f->device_id = dev;
    f->has_local_rank = has_lr;
    f->local_rank = lr;
    f->pid = pid;
    f->has_session = has_sess;
    f->session_id = has_sess ? sw_str(cj->f_sess) : sw_str("");
    f->has_oom_reason = has_reason;
    f->oom_reason = has_reason ? sw_str(cj->f_reason) : sw_str("");
}

/* Source details of a death: the marker's, or the rank's last sample's. */
typedef struct dsrc_s {
    sw_str_t host;
    bool has_dev, has_lr, has_sess, has_reason;
    int64_t dev, lr, pid;
    sw_str_t sess, reason;
} dsrc_t;

static void died(sw_detector_t *det, job_t *j, uint32_t ci, int life, int64_t d, const dsrc_t *src,
                 const sw_event_t *ev, int64_t offset)
{
    sw_cjob_t *cj = j->cj;
    crank_t *c = &cj->r[ci];
    c->life = (uint8_t)life;
    cdeath_t *cd = cd_get(cj, c);
    cd->death_ts = d;
    cd->death_al = sat_add(d, -rank_offset(j, c));
    cd->death_pid = src->pid;
    SW_GROW(cj->dead, cj->ndead, cj->capdead, 4);
    cd->dpos = (uint32_t)cj->ndead;
    cj->dead[cj->ndead++] = ci;
    set_blind(det, cj, c);
    det->st.deaths++;
    /* A death after the crash was closed at the job's summary opens the
     * next one (a job that resumes after its summary). */
    bool first = !cj->c_open || cj->c_ended;
    cj->c_died = first ? 1 : cj->c_died + 1;
    if (!first && cd->death_al >= cj->first.aligned_timestamp_ns) return; /* only counted */
    if (first) {
        cj->c_open = true;
        cj->c_ended = false;
        cj->crash++;
        cj->c_rev = 0;
        det->xo->crash_opened = true;
        /* A crash closes the warning: the crash record says which, and
         * the warning's closing record follows it (sw_crash_feed). */
        if (cj->w_open) det->xo->closed_warning = cj->warning;
    } else if (!det->xo->crash_opened && !det->xo->crash_pending) {
        cj->c_rev++; /* one revision per event, however many deaths it made known */
        /* The record says whom it replaces: the first death named before
         * this event. */
        det->xo->has_prev = true;
        det->xo->prev_rank = cj->first.rank;
        det->xo->prev_al = cj->first.aligned_timestamp_ns;
    }
    det->xo->crash_pending = true;
    first_set(cj, c, life == LIFE_OOM ? SW_DEATH_OOM : SW_DEATH_SILENT, src->host, src->has_dev,
              src->dev, src->has_lr, src->lr, src->pid, src->has_sess, src->sess, src->has_reason,
              src->reason);
    (void)ev;
    (void)offset;
}

static void revive(sw_detector_t *det, job_t *j, uint32_t ci, const sw_event_t *ev, int64_t offset)
{
    sw_cjob_t *cj = j->cj;
    crank_t *c = &cj->r[ci];
    uint32_t p = c_dpos(cj, c);
    cj->dead[p] = cj->dead[--cj->ndead];
    cd_get(cj, &cj->r[cj->dead[p]])->dpos = p;
    cd_get(cj, c)->dpos = CNIL;
    c->life = LIFE_ALIVE;
    set_blind(det, cj, c);
    if (cj->ndead) return;
    /* The crash is over: every dead rank is back. Its closing record
     * carries the final answer (unless the job's summary closed it). */
    if (!cj->c_ended) {
        cj->c_rev++;
        emit_crash(det, j, ev, offset, 0, SW_X8_END_ALIVE);
    }
    cj->c_open = cj->c_ended = false;
}

static void src_of_rank(const job_t *j, const crank_t *c, dsrc_t *s)
{
    memset(s, 0, sizeof(*s));
    s->host = sw_str("unknown");
    s->pid = -1;
    if (c->ri == CNIL || j->ranks[c->ri].last_src == NIL) return;
    uint32_t id = j->ranks[c->ri].last_src;
    const sw_src_t *src = &j->srcs[id];
    s->host = sw_intern_get(j->strs, src->host);
    s->pid = src_pid(j, id);
    s->dev = src_device(j, id);
    s->has_dev = s->dev != INT64_MIN;
    s->lr = src_local_rank(j, id);
    s->has_lr = s->lr != INT64_MIN;
    s->has_sess = src->session != 0;
    s->sess = sw_intern_get(j->strs, src->session);
}

/* Pop every rank whose silence deadline the job's time has passed. */
static void silence_sweep(sw_detector_t *det, job_t *j, const sw_event_t *ev, int64_t offset)
{
    sw_cjob_t *cj = j->cj;
    while (cj->nheap && cj->heap[0].deadline < cj->mrel) {
        uint32_t ci = cj->heap[0].ci;
        sh_pop(cj);
        crank_t *c = &cj->r[ci];
        if (c->life != LIFE_ALIVE || c->ri == CNIL) continue;
        int64_t dl = sat_add(rel_of(j, c, c->newest_ts), silence_ns(det, j, c));
        if (dl >= cj->mrel) {
            sh_push(cj, ci, dl); /* it reported since: re-key */
            continue;
        }
        if (c_stop(cj, c) != INT64_MIN && c_stop(cj, c) >= c->newest_ts) continue; /* stopped */
        dsrc_t s;
        src_of_rank(j, c, &s);
        died(det, j, ci, LIFE_SILENT, c->newest_ts, &s, ev, offset);
    }
}

/* ---- warnings (SPEC 8.4) ---------------------------------------------- */

static void elig_add(sw_cjob_t *cj, uint32_t wi)
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
static bool warn_sample(const sw_detector_t *det, sw_cjob_t *cj, uint32_t ci, const sw_event_t *ev)
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
    if (now && !was) elig_add(cj, wi);
    if (!now && was) elig_del(cj, wi);
    return now && (!was || (old_eta >= 0 && w->eta_ms < old_eta));
}

/* A sample far from full: the rank's estimate starts over next time. */
static void warn_far(sw_cjob_t *cj, uint32_t wi, int64_t ts)
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

static void warn_job(sw_detector_t *det, job_t *j, const sw_event_t *ev, int64_t offset,
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
static void close_warning(sw_detector_t *det, job_t *j, const sw_event_t *ev, int64_t offset,
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

/* ---- the per-event hook ----------------------------------------------- */

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
    sw_arena_reset(&det->xo->arena);
}

const sw_x8_t *sw_crash_job_crash(const sw_detector_t *det)
{
    return det->xo && det->xo->has_job_crash ? &det->xo->job_crash : NULL;
}

void sw_crash_summarised(sw_detector_t *det, job_t *j)
{
    sw_crash_begin(det);
    sw_cjob_t *cj = j->cj;
    if (!cj) return;
    if (cj->crash > 0) {
        sw_x8_t *x = &det->xo->job_crash;
        memset(x, 0, sizeof(*x));
        det->xo->has_job_crash = true;
        x->number = cj->crash;
        x->open = cj->c_open && !cj->c_ended;
        x->first = cj->first;
        x->first.host = xo_str(det->xo, cj->first.host);
        x->first.session_id = xo_str(det->xo, cj->first.session_id);
        x->first.oom_reason = xo_str(det->xo, cj->first.oom_reason);
        x->deaths = (int64_t)cj->ndead;
        x->deaths_total = cj->c_died;
        storm_ref(j, &x->storm);
    }
    if (cj->c_open && !cj->c_ended) {
        cj->c_rev++;
        cj->c_ended = true;
        emit_crash(det, j, NULL, j->last_off, 0, SW_X8_END_JOB);
    }
    close_warning(det, j, NULL, j->last_off, SW_X8_END_JOB);
}

const sw_record_t *sw_crash_next(sw_detector_t *det)
{
    sw_xout_t *xo = det->xo;
    if (!xo || xo->next >= xo->n) return NULL;
    return &xo->rec[xo->next++];
}

void sw_crash_feed(sw_detector_t *det, job_t *j, uint32_t ri, const sw_event_t *ev,
                   sw_record_t *rec6, int64_t offset)
{
    bool sample = ev->kind == SW_EV_SAMPLE;
    sw_x8_kind_t kind = sample ? SW_X8_NONE : sw_crash_kind(ev);
    bool cap = sample && ri != CNIL && ev->device_total_bytes.set &&
               ev->device_total_bytes.value > 0;
    /* Growth is tracked only near full (headroom under twice
     * oom.warn.headroom): a sample far from it costs this compare. */
    bool near = cap && (double)(ev->device_total_bytes.value - ev->device_used_bytes) <
                           2 * det->params.oom_warn_headroom * (double)ev->device_total_bytes.value;
    if (!j->cj && !sample && kind == SW_X8_NONE) {
        if (rec6) rec6->n_blind = 0;
        return; /* a phase event of a job SPEC 8 has not met: nothing to track */
    }
    bool hard;
    /* max.ranks.per.job bounds SPEC 8's ranks as SPEC 6's: a marker of a
     * rank beyond it is not tracked (SPEC 6 takes the event, as any
     * non-sample; limit_rejects counts only refused events). */
    if (!sample && ev->rank >= sw_det_rank_limit(det, &hard)) return;
    sw_cjob_t *cj = cjob_get(j);
    uint32_t ci = crank_of(j, cj, ev->rank, sample ? ri : CNIL);
    crank_t *c = &cj->r[ci];
    int64_t ts = ev->timestamp_ns;
    if (kind == SW_X8_ERROR) det->st.watchdog++;

    /* A rank that reports again: silent -> alive; oom -> alive only as a
     * new process (a sample from another pid after its death). An error,
     * death marker or stop is a last word, never a return. */
    bool reports = kind == SW_X8_NONE || kind == SW_X8_DEGRADED || kind == SW_X8_RECOVERED;
    if (c->life == LIFE_SILENT && reports && ts > cd_of(cj, c).death_ts)
        revive(det, j, ci, ev, offset);
    else if (c->life == LIFE_OOM && sample && ev->pid != cd_of(cj, c).death_pid &&
             ts > cd_of(cj, c).death_ts)
        revive(det, j, ci, ev, offset);
    if (ts > c->newest_ts) c->newest_ts = ts;
    if (kind == SW_X8_STOP && ts >= c->newest_ts) cd_get(cj, c)->stop_ts = ts;
    if (sample && c_stop(cj, c) != INT64_MIN && ts > c_stop(cj, c))
        cj->deaths[c->d].stop_ts = INT64_MIN;
    if (kind == SW_X8_DEGRADED) c->degraded = true;
    if (kind == SW_X8_RECOVERED) c->degraded = false;
    set_blind(det, cj, c);

    /* The job's time, relative to the anchor's first sample. */
    if (c->ri != CNIL) {
        int64_t rel = rel_of(j, c, c->newest_ts);
        if (!cj->has_mrel || rel > cj->mrel) {
            cj->mrel = rel;
            cj->has_mrel = true;
        }
        if (c->life == LIFE_ALIVE) sh_push(cj, ci, sat_add(rel, silence_ns(det, j, c)));
    }

    if (kind == SW_X8_DEATH) {
        if (c->life == LIFE_ALIVE) {
            dsrc_t s;
            memset(&s, 0, sizeof(s));
            s.host = ev->host;
            s.pid = ev->pid;
            s.has_dev = ev->device_id.set;
            s.dev = ev->device_id.value;
            s.has_lr = ev->local_rank.set;
            s.lr = ev->local_rank.value;
            s.has_sess = ev->has_session_id;
            s.sess = ev->session_id;
            s.has_reason = ev->has_oom_reason;
            s.reason = ev->oom_reason;
            died(det, j, ci, LIFE_OOM, ts, &s, ev, offset);
        }
    }
    if (cj->has_mrel) silence_sweep(det, j, ev, offset);
    if (det->xo->crash_pending) {
        emit_crash(det, j, ev, offset, det->xo->closed_warning, SW_X8_END_NONE);
        if (det->xo->closed_warning) close_warning(det, j, ev, offset, SW_X8_END_CRASH);
    }
    uint32_t changed = CNIL;
    if (near && c->life == LIFE_ALIVE && warn_sample(det, cj, ci, ev)) changed = c_w(cj, c);
    else if (cap && !near && c_w(cj, c) != CNIL) warn_far(cj, c_w(cj, c), ev->timestamp_ns);
    if (cj->nw) warn_job(det, j, ev, offset, changed);
    if (rec6 && rec6->action != SW_ACTION_SUMMARY) fill_blind(det->xo, cj, rec6);
}

/* ---- snapshots ---------------------------------------------------------- */

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
    *out = dup_str(s);
    return true;
}

static bool load_job(sw_detector_t *det, job_t *j, sw_vrd_t *r, bool v_b)
{
    sw_cjob_t *cj = cjob_get(j);
    uint64_t n = sw_vget_u(r);
    if (r->bad || n > (uint64_t)(r->end - r->p)) return false;
    for (uint64_t k = 0; k < n; k++) {
        int64_t rank = sw_vget_i(r);
        int64_t ri = sw_vget_i(r);
        if (r->bad || rank < 0 || crank_find(j, cj, rank) != CNIL) return false;
        if (ri != -1) {
            uint32_t got;
            if (ri < 0 || (uint64_t)ri >= j->nranks || !sw_imap_get(&j->rank_map, rank, &got) ||
                got != (uint32_t)ri || (ri < (int64_t)cj->cap_ri && cj->ri2ci[ri] != CNIL))
                return false;
        }
        uint32_t ci = crank_of(j, cj, rank, ri == -1 ? CNIL : (uint32_t)ri);
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
        set_blind(det, cj, c);
    }
    uint64_t nh = sw_vget_u(r);
    if (r->bad || nh > cj->n) return false;
    for (uint64_t k = 0; k < nh; k++) {
        int64_t dl = sw_vget_i(r);
        uint64_t ci = sw_vget_u(r);
        if (r->bad || ci >= cj->n || cj->r[ci].hpos != CNIL) return false;
        SW_GROW(cj->heap, cj->nheap, cj->capheap, 4);
        sheap_t e = {dl, (uint32_t)ci};
        sh_set(cj, cj->nheap++, e);
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
        if (elig) elig_add(cj, (uint32_t)(cj->nw - 1));
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
