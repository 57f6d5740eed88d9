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
#include "sw_crash_int.h"

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

sw_cjob_t *sw_crash_cjob(job_t *j)
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
uint32_t sw_crash_rank_find(const job_t *j, const sw_cjob_t *cj, int64_t rank)
{
    uint32_t ri, ci;
    if (sw_imap_get(&j->ranks.map, rank, &ri) && ri < cj->cap_ri && cj->ri2ci[ri] != CNIL)
        return cj->ri2ci[ri];
    return sw_imap_get(&cj->map, rank, &ci) ? ci : CNIL;
}

/* The SPEC 8 rank of an event; links a SPEC 6 rank index when given. */
uint32_t sw_crash_rank_of(const job_t *j, sw_cjob_t *cj, int64_t rank, uint32_t ri)
{
    if (ri != CNIL && ri < cj->cap_ri && cj->ri2ci[ri] != CNIL) return cj->ri2ci[ri];
    uint32_t ci;
    if (ri != CNIL) {
        if (!sw_imap_get(&cj->map, rank, &ci)) ci = crank_add(cj, rank, false);
    } else {
        ci = sw_crash_rank_find(j, cj, rank);
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

void sw_crash_heap_set(sw_cjob_t *cj, size_t i, sheap_t e)
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
        sw_crash_heap_set(cj, i, cj->heap[p]);
        i = p;
    }
    sw_crash_heap_set(cj, i, x);
}

static void sh_down(sw_cjob_t *cj, size_t i)
{
    sheap_t x = cj->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= cj->nheap) break;
        if (c + 1 < cj->nheap && cj->heap[c + 1].deadline < cj->heap[c].deadline) c++;
        if (cj->heap[c].deadline >= x.deadline) break;
        sw_crash_heap_set(cj, i, cj->heap[c]);
        i = c;
    }
    sw_crash_heap_set(cj, i, x);
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
    sw_crash_heap_set(cj, cj->nheap++, e);
    sh_up(cj, cj->nheap - 1);
}

static void sh_pop(sw_cjob_t *cj)
{
    cj->r[cj->heap[0].ci].hpos = CNIL;
    if (--cj->nheap) {
        sw_crash_heap_set(cj, 0, cj->heap[cj->nheap]);
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
        int64_t iv = rk_interval(j, &j->ranks.v[c->ri]);
        if (iv > 0 && iv <= INT64_MAX / 10 && iv * 10 > ms) ms = iv * 10;
    }
    return ms > INT64_MAX / 1000000 ? INT64_MAX : ms * 1000000;
}

/* The rank's offset (SPEC 6, now): first - anchor first; 0 without one. */
static int64_t rank_offset(const job_t *j, const crank_t *c)
{
    if (c->ri == CNIL || !j->id.has_sample) return 0;
    return (int64_t)((uint64_t)j->ranks.v[c->ri].first_ts - (uint64_t)anchor_first(j, NULL));
}

static int64_t rel_of(const job_t *j, const crank_t *c, int64_t ts)
{
    return sat_add(ts, -j->ranks.v[c->ri].first_ts);
}

void sw_crash_set_blind(sw_detector_t *det, sw_cjob_t *cj, crank_t *c)
{
    bool b = c->degraded || c->life == LIFE_SILENT;
    if (b == c->blind) return;
    c->blind = b;
    (void)det;
    if (b) cj->nblind++;
    else cj->nblind--;
}

/* ---- the crash record (the records' queue: sw_crash_out.c) ------------ */

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
    sw_record_t *rec = sw_crash_emit(det, j, SW_ACTION_CRASH, ev, offset, &x);
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

/* ---- deaths (SPEC 8.2, 8.3) ------------------------------------------ */

char *sw_crash_strdup(sw_str_t s)
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
    cj->f_host = sw_crash_strdup(host);
    cj->f_sess = has_sess ? sw_crash_strdup(sess) : NULL;
    cj->f_reason = has_reason ? sw_crash_strdup(reason) : NULL;
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
    sw_crash_set_blind(det, cj, c);
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
    sw_crash_set_blind(det, cj, c);
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
    if (c->ri == CNIL || j->ranks.v[c->ri].last_src == NIL) return;
    uint32_t id = j->ranks.v[c->ri].last_src;
    const sw_src_t *src = &j->src.v[id];
    s->host = sw_intern_get(j->src.strs, src->host);
    s->pid = src_pid(j, id);
    s->dev = src_device(j, id);
    s->has_dev = s->dev != INT64_MIN;
    s->lr = src_local_rank(j, id);
    s->has_lr = s->lr != INT64_MIN;
    s->has_sess = src->session != 0;
    s->sess = sw_intern_get(j->src.strs, src->session);
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

/* ---- the per-event hook ----------------------------------------------- */

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
        sw_crash_storm_ref(j, &x->storm);
    }
    if (cj->c_open && !cj->c_ended) {
        cj->c_rev++;
        cj->c_ended = true;
        emit_crash(det, j, NULL, j->id.last_off, 0, SW_X8_END_JOB);
    }
    sw_crash_warn_close(det, j, NULL, j->id.last_off, SW_X8_END_JOB);
}

void sw_crash_feed(sw_detector_t *det, job_t *j, uint32_t ri, const sw_event_t *ev, bool blind,
                   int64_t offset)
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
        return; /* a phase event of a job SPEC 8 has not met: nothing to track */
    }
    bool hard;
    /* max.ranks.per.job bounds SPEC 8's ranks as SPEC 6's: a marker of a
     * rank beyond it is not tracked (SPEC 6 takes the event, as any
     * non-sample; limit_rejects counts only refused events). */
    if (!sample && ev->rank >= sw_det_rank_limit(det, &hard)) return;
    sw_cjob_t *cj = sw_crash_cjob(j);
    uint32_t ci = sw_crash_rank_of(j, cj, ev->rank, sample ? ri : CNIL);
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
    sw_crash_set_blind(det, cj, c);

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
        if (det->xo->closed_warning) sw_crash_warn_close(det, j, ev, offset, SW_X8_END_CRASH);
    }
    uint32_t changed = CNIL;
    if (near && c->life == LIFE_ALIVE && sw_crash_warn_sample(det, cj, ci, ev))
        changed = c_w(cj, c);
    else if (cap && !near && c_w(cj, c) != CNIL)
        sw_crash_warn_far(cj, c_w(cj, c), ev->timestamp_ns);
    if (cj->nw) sw_crash_warn_job(det, j, ev, offset, changed);
    if (blind) sw_crash_fill_blind(det->xo, cj, &det->xo->blind, &det->xo->n_blind);
}
