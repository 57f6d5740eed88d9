/*
 * Stream engine (SPEC 6). Per job it keeps, incrementally:
 *  - per rank: a window (sw_window.c), first and newest timestamps, and
 *    the rank's first qualifying spike (its candidate);
 *  - the candidates in a treap ordered by (time since the rank's first
 *    sample, -peak, rank). That order equals the SPEC's aligned-time order
 *    for every anchor, because aligned = (spike - first) + anchor_first;
 *  - the count of timestamp gaps (their median is derived from the windows
 *    when asked, sw_gapmed.h) and a multiset of sampling intervals;
 *  - world-size claim counts with the current leader;
 *  - a min-heap of ranks by newest timestamp for the staleness sweep;
 *  - the lifecycle and the last signature. The signature's suspect list is
 *    re-read from the treap only when a candidate change touched the
 *    suspects' region (time <= onset), which is the only way it can change.
 * Records are built from this state in O(ranks + suspects) only when one is
 * emitted. This file keeps the jobs, sources, ranks, candidates and the
 * memory budget; the entry, sw_detect_feed_src() and its steps, is
 * sw_detect_feed.c. Pure: no I/O, no clock, no globals.
 */
#include "sw_detect_cands.h"

/* ---- job map --------------------------------------------------------- */

static uint64_t job_key_hash(const sw_detector_t *det, bool has, const char *p, size_t n)
{
    return has ? sw_siphash13(&det->params.hash_key, p, n) : 0x9e3779b97f4a7c15ULL;
}

bool sw_det_job_matches(const job_t *j, bool has, const char *p, size_t n)
{
    if (j->id.has != has) return false;
    return !has || (j->id.len == n && memcmp(j->id.str, p, n) == 0);
}

job_t *sw_det_jmap_find(const sw_detector_t *det, bool has, const char *p, size_t n)
{
    if (!det->jcap) return NULL;
    uint64_t h = job_key_hash(det, has, p, n);
    for (size_t i = h & (det->jcap - 1);; i = (i + 1) & (det->jcap - 1)) {
        job_t *j = det->jslots[i];
        if (!j) return NULL;
        if (j->id.hash == h && sw_det_job_matches(j, has, p, n)) return j;
    }
}

static void jmap_put_raw(job_t **slots, size_t cap, job_t *j)
{
    size_t i = j->id.hash & (cap - 1);
    while (slots[i]) i = (i + 1) & (cap - 1);
    slots[i] = j;
}

static void jmap_put(sw_detector_t *det, job_t *j)
{
    if ((det->live_jobs + 1) * 2 > det->jcap) {
        size_t cap = det->jcap ? det->jcap * 2 : 16;
        job_t **slots = sw_calloc(cap, sizeof(*slots));
        for (size_t i = 0; i < det->jcap; i++)
            if (det->jslots[i]) jmap_put_raw(slots, cap, det->jslots[i]);
        free(det->jslots);
        det->jslots = slots;
        det->jcap = cap;
    }
    jmap_put_raw(det->jslots, det->jcap, j);
}

static void jmap_del(sw_detector_t *det, job_t *j)
{
    size_t mask = det->jcap - 1, i = j->id.hash & mask;
    while (det->jslots[i] != j) i = (i + 1) & mask;
    for (size_t k = (i + 1) & mask; det->jslots[k]; k = (k + 1) & mask) {
        size_t home = det->jslots[k]->id.hash & mask;
        bool between = (i <= k) ? (home > i && home <= k) : (home > i || home <= k);
        if (!between) {
            det->jslots[i] = det->jslots[k];
            i = k;
        }
    }
    det->jslots[i] = NULL;
}

/* ---- sources ---------------------------------------------------------- */

static uint64_t src_hash(int64_t pid, int64_t interval, uint32_t host, uint32_t session)
{
    uint64_t h = (uint64_t)pid * 0x9e3779b97f4a7c15ULL;
    h ^= (uint64_t)interval + 0x632be59bd9b4e019ULL + (h << 6) + (h >> 2);
    h ^= ((uint64_t)host << 32 | session) + 0x8cb92ba72f3d8dd7ULL + (h << 6) + (h >> 2);
    return h ^ (h >> 29);
}

static void src_slots_put(job_t *j, uint32_t id)
{
    const sw_src_t *s = &j->src.v[id];
    size_t mask = j->src.nslots - 1;
    size_t i = src_hash(src_pid(j, id), src_interval(j, id), s->host, s->session) & mask;
    while (j->src.slots[i]) i = (i + 1) & mask;
    j->src.slots[i] = id + 1;
}

/* An event's device_id and local_rank as a source keeps them: INT64_MIN
 * when absent (a value of INT64_MIN sent reads as absent too). */
static inline int64_t ev_device(const sw_event_t *ev)
{
    return ev->device_id.set ? ev->device_id.value : INT64_MIN;
}

static inline int64_t ev_local_rank(const sw_event_t *ev)
{
    return ev->local_rank.set ? ev->local_rank.value : INT64_MIN;
}

/* src_nums_are() of a source with a marker (SW_SRC_UNSET, SW_SRC_WIDE):
 * every field read as sent. */
__attribute__((noinline)) static bool src_nums_marked(const job_t *j, uint32_t id,
                                                      const sw_event_t *ev)
{
    return src_pid(j, id) == ev->pid && src_interval(j, id) == ev->sampling_interval_ms &&
           src_device(j, id) == ev_device(ev) && src_local_rank(j, id) == ev_local_rank(ev);
}

/* Whether source @p id has the event's pid, sampling_interval_ms,
 * device_id and local_rank. Without a marker its int32 fields compare as
 * they are (a value int32 does not hold never equals one). */
static inline bool src_nums_are(const job_t *j, uint32_t id, const sw_event_t *ev)
{
    const sw_src_t *s = &j->src.v[id];
    if (s->pid <= SW_SRC_WIDE || s->interval_ms <= SW_SRC_WIDE || s->device_id <= SW_SRC_WIDE ||
        s->local_rank <= SW_SRC_WIDE)
        return src_nums_marked(j, id, ev);
    return s->pid == ev->pid && s->interval_ms == ev->sampling_interval_ms &&
           s->device_id == ev_device(ev) && s->local_rank == ev_local_rank(ev);
}

static bool src_is(const job_t *j, uint32_t id, const sw_event_t *ev)
{
    const sw_src_t *s = &j->src.v[id];
    if (!src_nums_are(j, id, ev)) return false;
    sw_str_t h = sw_intern_get(j->src.strs, s->host);
    if (h.len != ev->host.len || (h.len && memcmp(h.ptr, ev->host.ptr, h.len) != 0)) return false;
    if (!ev->has_session_id) return s->session == 0;
    sw_str_t t = sw_intern_get(j->src.strs, s->session);
    return s->session != 0 && t.len == ev->session_id.len &&
           (t.len == 0 || memcmp(t.ptr, ev->session_id.ptr, t.len) == 0);
}

static void src_remember(rank_t *r, uint32_t id)
{
    r->last_src = id;
    if (!rk_phase_pending(r)) r->phase_grp = NIL; /* a pending one follows its session */
}

/* Rank @p r's pending phase group (PHASE_PEND) made, with the session
 * end its newest_ts stands for; phase_grp then names it (it is of
 * last_src's session). */
void sw_det_phase_settle(job_t *j, rank_t *r)
{
    uint32_t g = sw_phase_group_sid(j->phase, r->phase_grp & ~PHASE_PEND, r->rank);
    sw_phase_touch(j->phase, g, r->newest_ts);
    r->phase_grp = g;
}

uint32_t sw_det_src_get(job_t *j, rank_t *r, const sw_event_t *ev)
{
    if (r->last_src != NIL && src_is(j, r->last_src, ev)) return r->last_src;
    uint32_t host = sw_intern_add(j->src.strs, ev->host);
    uint32_t session = ev->has_session_id ? sw_intern_add(j->src.strs, ev->session_id) : 0;
    if (j->src.nslots) {
        size_t mask = j->src.nslots - 1;
        size_t i = src_hash(ev->pid, ev->sampling_interval_ms, host, session) & mask;
        for (; j->src.slots[i]; i = (i + 1) & mask) {
            const sw_src_t *s = &j->src.v[j->src.slots[i] - 1];
            if (s->host == host && s->session == session &&
                src_nums_are(j, j->src.slots[i] - 1, ev)) {
                src_remember(r, j->src.slots[i] - 1);
                return r->last_src;
            }
        }
    }
    SW_GROW(j->src.v, j->src.n, j->src.cap, 2);
    uint32_t id = (uint32_t)j->src.n++;
    sw_src_t *s = &j->src.v[id];
    s->pid = sw_src_narrow(ev->pid);
    s->interval_ms = sw_src_narrow(ev->sampling_interval_ms);
    s->host = host;
    s->session = session;
    s->device_id = sw_src_narrow(ev_device(ev));
    s->local_rank = sw_src_narrow(ev_local_rank(ev));
    if (s->pid == SW_SRC_WIDE || s->interval_ms == SW_SRC_WIDE || s->device_id == SW_SRC_WIDE ||
        s->local_rank == SW_SRC_WIDE) {
        sw_src_wide_t *w = &j->src.wide;
        SW_GROW(w->v, SW_SRC_NCOL * w->n, w->cap, SW_SRC_NCOL);
        int64_t *row = &w->v[SW_SRC_NCOL * w->n];
        row[SW_SRC_COL_DEVICE] = ev_device(ev);
        row[SW_SRC_COL_LOCAL_RANK] = ev_local_rank(ev);
        row[SW_SRC_COL_PID] = ev->pid;
        row[SW_SRC_COL_INTERVAL] = ev->sampling_interval_ms;
        sw_imap_put(&w->map, id, (uint32_t)w->n++);
    }
    if (j->src.n * 2 > j->src.nslots) {
        free(j->src.slots);
        j->src.nslots = j->src.nslots ? j->src.nslots * 2 : 4;
        j->src.slots = sw_calloc(j->src.nslots, sizeof(*j->src.slots));
        for (uint32_t k = 0; k < j->src.n; k++) src_slots_put(j, k);
    } else {
        src_slots_put(j, id);
    }
    src_remember(r, id);
    return id;
}

/* A source of rank @p r with @p pid and @p session (interned): one of its
 * window's, or else one made for the purpose (empty host, no interval, no
 * device or local rank: a sample sent so would share it, as its values
 * are the same). For a restored rank's process. */
uint32_t sw_det_src_proc(job_t *j, const rank_t *r, int64_t pid, uint32_t session)
{
    if (r->last_src != NIL && src_pid(j, r->last_src) == pid &&
        j->src.v[r->last_src].session == session)
        return r->last_src;
    for (uint32_t k = 0; k < r->win.n; k++) {
        uint32_t s = r->win.slot[(r->win.head + k) % r->win.cap].src;
        if (src_pid(j, s) == pid && j->src.v[s].session == session) return s;
    }
    sw_event_t ev;
    memset(&ev, 0, sizeof(ev));
    ev.pid = pid;
    ev.host = (sw_str_t){"", 0};
    ev.has_session_id = session != 0;
    if (session) ev.session_id = sw_intern_get(j->src.strs, session);
    rank_t tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.last_src = tmp.phase_grp = NIL;
    return sw_det_src_get(j, &tmp, &ev);
}

void sw_det_src_last(job_t *j, rank_t *r, const rb_proc_t *p)
{
    if (!p->has_last) return;
    sw_event_t ev;
    memset(&ev, 0, sizeof(ev));
    ev.pid = p->l_pid;
    ev.sampling_interval_ms = p->l_interval;
    ev.host = sw_intern_get(j->src.strs, p->l_host);
    ev.has_session_id = p->l_session != 0;
    if (p->l_session) ev.session_id = sw_intern_get(j->src.strs, p->l_session);
    ev.device_id.set = p->l_device != INT64_MIN;
    ev.device_id.value = ev.device_id.set ? p->l_device : 0;
    ev.local_rank.set = p->l_local_rank != INT64_MIN;
    ev.local_rank.value = ev.local_rank.set ? p->l_local_rank : 0;
    if (r->last_src != NIL && src_is(j, r->last_src, &ev)) return;
    rank_t tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.last_src = tmp.phase_grp = NIL;
    r->last_src = sw_det_src_get(j, &tmp, &ev);
}

/* ---- jobs and ranks --------------------------------------------------- */

/* ---- every job, least recently active first (eviction candidates) -------
 * When max.jobs or the memory budget is reached, the job with the least
 * evidence near the least recently active end makes room for a new one
 * (evict_one), so that a flood of made-up job ids, of any rank count,
 * cannot lock out jobs that report like real ones. */

void sw_det_junk_add(sw_detector_t *det, job_t *j)
{
    j->in_junk = true;
    j->junk_next = NULL;
    j->junk_prev = det->junk_tail;
    if (det->junk_tail) det->junk_tail->junk_next = j;
    else det->junk_head = j;
    det->junk_tail = j;
}

void sw_det_junk_del(sw_detector_t *det, job_t *j)
{
    if (!j->in_junk) return;
    if (j->junk_prev) j->junk_prev->junk_next = j->junk_next;
    else det->junk_head = j->junk_next;
    if (j->junk_next) j->junk_next->junk_prev = j->junk_prev;
    else det->junk_tail = j->junk_prev;
    j->junk_prev = j->junk_next = NULL;
    j->in_junk = false;
}

/* Least recently active first: by the arrival number of the job's latest
 * event, then by creation (the list's order in a live engine, where every
 * event moves its job to the tail). */
static int junk_cmp(const void *a, const void *b)
{
    const job_t *x = *(job_t *const *)a, *y = *(job_t *const *)b;
    if (x->id.last_seq != y->id.last_seq) return x->id.last_seq < y->id.last_seq ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A restored engine orders its jobs as the live one did, so that
 * both evict the same jobs. */
void sw_det_junk_rebuild(sw_detector_t *det)
{
    size_t n = 0;
    for (size_t i = 0; i < det->njobs; i++) n += det->jobs[i] && det->jobs[i]->in_junk;
    if (!n) return;
    job_t **v = sw_malloc(n * sizeof(*v));
    n = 0;
    for (size_t i = 0; i < det->njobs; i++)
        if (det->jobs[i] && det->jobs[i]->in_junk) v[n++] = det->jobs[i];
    qsort(v, n, sizeof(*v), junk_cmp);
    det->junk_head = det->junk_tail = NULL;
    for (size_t i = 0; i < n; i++) sw_det_junk_add(det, v[i]);
    free(v);
}

job_t *sw_det_job_create(sw_detector_t *det, const sw_event_t *ev, int64_t offset)
{
    det->gen++;
    job_t *j = sw_calloc(1, sizeof(*j));
    j->id.last_off = offset;
    j->id.last_seq = det->arrivals;
    j->id.has = ev->has_job_id;
    if (ev->has_job_id) {
        j->id.str = sw_memdup0(ev->job_id.ptr, ev->job_id.len);
        j->id.len = ev->job_id.len;
    }
    j->id.hash = job_key_hash(det, ev->has_job_id, ev->job_id.ptr, ev->job_id.len);
    j->src.strs = sw_intern_new_keyed(det->params.hash_key);
    sw_imap_init(&j->ranks.map);
    sw_imap_init(&j->src.wide.map);
    sw_imap_init(&j->claims.map);
    sw_gapmed_init(&j->seen.gaps);
    sw_vcount_init(&j->seen.intervals);
    j->claims.leader = -1;
    j->cands.root = NIL;
    j->cands.free_head = NIL;
    j->sig.boundary = INT64_MAX;
    j->ep.trig_conf = -1;
    sw_arena_init(&j->verdict.arena);
    j->phase = sw_phase_new_shared(det->params.hash_key,
                                   j->src.strs); /* one interning of sessions */
    SW_GROW(det->jobs, det->njobs, det->capjobs, 16);
    j->idx = det->njobs;
    det->jobs[det->njobs++] = j;
    jmap_put(det, j);
    det->live_jobs++;
    if (det->pool) atomic_fetch_add_explicit(&det->pool->jobs, 1, memory_order_relaxed);
    sw_det_junk_add(det, j);
    return j;
}

static void job_destroy(sw_detector_t *det, job_t *j)
{
    if (!j) return;
    det->acct -= j->acct;
    if (det->pool) {
        atomic_fetch_sub_explicit(&det->pool->used, (int64_t)j->acct, memory_order_relaxed);
        atomic_fetch_sub_explicit(&det->pool->jobs, 1, memory_order_relaxed);
    }
    for (size_t i = 0; i < j->ranks.n; i++) sw_win_clear(&j->ranks.v[i].win, &det->winpool);
    sw_tguard_clear(&j->tguard);
    free(j->ranks.v);
    sw_imap_clear(&j->ranks.map);
    sw_imap_clear(&j->claims.map);
    free(j->claims.v);
    sw_gapmed_clear(&j->seen.gaps);
    sw_vcount_clear(&j->seen.intervals);
    free(j->cands.heap);
    free(j->cands.hpos);
    free(j->ranks.colds);
    free(j->cands.v);
    free(j->ranks.rb_floor);
    free(j->ranks.rb_proc);
    free(j->sig.v);
    free(j->ep.mem);
    free(j->pub.tie);
    free(j->ranks.sorted);
    free(j->src.v);
    free(j->src.slots);
    sw_imap_clear(&j->src.wide.map);
    free(j->src.wide.v);
    sw_phase_destroy(j->phase); /* before the sessions it borrows */
    sw_intern_destroy(j->src.strs);
    sw_arena_clear(&j->verdict.arena);
    sw_crash_job_free(j->cj);
    free(j->id.str);
    free(j);
}

/* How much a job has to lose (eviction, issue 28): 0 = no rank has two
 * samples in its window (one sample per rank is what a made-up job id
 * costs, whatever its rank count), 1 = samples but no rising run and no
 * open episode, 2 = a rising run or an open episode (never evicted). */
static int job_evidence(const job_t *j)
{
    if (sw_det_ep_open(j) || j->cands.n) return 2;
    return j->seen.insufficient >= j->ranks.n ? 0 : 1;
}

/* How far from the least recently active end eviction looks. */
#define EVICT_SCAN 256

static size_t job_bytes(const job_t *j);

/* Remove job @p j (no record: it had no onset). */
static void evict_job(sw_detector_t *det, job_t *j)
{
    det->gen++;
    sw_det_junk_del(det, j);
    jmap_del(det, j);
    /* A hole keeps the others in creation order (the order of the final
     * summaries); holes are compacted once they are half the array. */
    det->jobs[j->idx] = NULL;
    det->live_jobs--;
    det->st.evicted++;
    if (job_evidence(j)) det->st.evicted_evidence++;
    job_destroy(det, j);
    if (2 * (det->njobs - det->live_jobs) > det->njobs) {
        size_t k = 0;
        for (size_t i = 0; i < det->njobs; i++)
            if (det->jobs[i]) {
                det->jobs[i]->idx = k;
                det->jobs[k++] = det->jobs[i];
            }
        det->njobs = k;
    }
}

/* Evict the job with the least evidence among the EVICT_SCAN least
 * recently active (every job is in that list), never @p keep: the first
 * of evidence 0, else (@p max_evidence 1) the first of evidence 1. Only
 * evidence and order decide, so a restored engine evicts what the live
 * one would have. In a pool (@p max_evidence 0), only a job of one rank
 * at most without evidence, the least a job can be worth anywhere: what
 * is worth more is weighed against every engine's (sw_detect_evict_bytes).
 * @returns false when there is none. */
static job_t *least_valuable(const sw_detector_t *det, int evidence, const job_t *keep,
                             size_t max_ranks);

bool sw_det_evict_one(sw_detector_t *det, const job_t *keep, int max_evidence)
{
    if (max_evidence == 0) {
        job_t *v = least_valuable(det, 0, keep, 1);
        if (v) evict_job(det, v);
        return v != NULL;
    }
    job_t *j = NULL, *first1 = NULL;
    size_t seen = 0;
    for (job_t *c = det->junk_head; c && seen < EVICT_SCAN; c = c->junk_next, seen++) {
        if (c == keep) continue;
        int e = job_evidence(c);
        if (e == 0) {
            j = c;
            break;
        }
        if (e == 1 && !first1) first1 = c;
    }
    if (!j && max_evidence >= 1) j = first1;
    if (!j) return false;
    evict_job(det, j);
    return true;
}

/* The pool's choice (sw_detect_evict_bytes): among the EVICT_SCAN least
 * recently active, of evidence 0 the first with at most @p max_ranks ranks
 * (the pool's owner asks with the fewest ranks any engine holds, then
 * more: a many-rank job early in its life, one sample a rank so far,
 * outlives made-up ids of fewer ranks); of evidence 1, the one with the
 * fewest samples retained (the first of them). */
static job_t *least_valuable(const sw_detector_t *det, int evidence, const job_t *keep,
                             size_t max_ranks)
{
    job_t *best = NULL;
    size_t seen = 0;
    for (job_t *j = det->junk_head; j && seen < EVICT_SCAN; j = j->junk_next, seen++) {
        if (j == keep || job_evidence(j) != evidence) continue;
        if (evidence == 0) {
            if (j->ranks.n <= max_ranks) return j;
            continue;
        }
        if (!best || j->seen.retained < best->seen.retained) best = j;
    }
    return best;
}

static size_t job_bytes(const job_t *j)
{
    size_t b = sizeof(*j) + j->ranks.cap * (sizeof(rank_t) + sizeof(uint32_t)) +
               j->ranks.win_bytes + j->ranks.capcolds * sizeof(rank_cold_t) +
               j->cands.cap * sizeof(rank_cand_t) + sw_imap_bytes(&j->ranks.map) +
               sw_imap_bytes(&j->claims.map) + j->claims.cap * sizeof(claim_t) +
               sw_gapmed_bytes(&j->seen.gaps) + sw_vcount_bytes(&j->seen.intervals) +
               j->cands.capheap * sizeof(heap_ent_t) + j->sig.cap * sizeof(sig_ent_t) +
               j->ep.capmem * sizeof(uint32_t) + j->pub.captie * sizeof(int64_t) +
               (j->ranks.sorted ? j->ranks.n * sizeof(int64_t) : 0) +
               j->src.cap * sizeof(sw_src_t) + j->src.nslots * sizeof(uint32_t) +
               sw_imap_bytes(&j->src.wide.map) + j->src.wide.cap * sizeof(int64_t) +
               sw_intern_bytes(j->src.strs) + sw_phase_bytes(j->phase) + j->id.len +
               j->verdict.arena.total + sw_crash_job_bytes(j->cj) +
               (j->tguard.refused ? SW_TGUARD_REFUSED_MAX * sizeof(int64_t) : 0);
    return b;
}

/* Memory accounting where it grows (issue 28): a job's size is taken
 * again whenever it created a job, a rank or grew a window, and every
 * 256th event (sources, strings, claims and phase spans grow slowly). */
void sw_det_acct_job(sw_detector_t *det, job_t *j)
{
    size_t b = job_bytes(j);
    det->acct += b - j->acct;
    if (det->pool)
        atomic_fetch_add_explicit(&det->pool->used, (int64_t)b - (int64_t)j->acct,
                                  memory_order_relaxed);
    j->acct = b;
}

/* Whether adding @p more bytes takes the state over its budget (the
 * pool's, else the engine's own). */
static bool over_budget(const sw_detector_t *det, size_t more)
{
    if (det->pool)
        return atomic_load_explicit(&det->pool->used, memory_order_relaxed) + (int64_t)more >
               det->pool->limit;
    return det->budget && det->acct + more > det->budget;
}

/* Over the budget after adding @p more bytes: evict (never @p keep) until
 * under it, at most 16 jobs a time; in a pool, only jobs without evidence
 * (the pool's owner weighs the others against every engine's).
 * @returns false when still over. */
bool sw_det_budget_room(sw_detector_t *det, const job_t *keep, size_t more)
{
    if (!det->budget && !det->pool) return true;
    for (int k = 0; over_budget(det, more); k++)
        if (k == 16 || !sw_det_evict_one(det, keep, det->pool ? 0 : 1)) return false;
    return true;
}

/* In a pool, an event that needs @p more bytes the engine cannot free
 * itself asks the pool's owner for them once (sw_detect_room_wanted):
 * @returns true when it asks (the caller undoes the event's arrival). */
bool sw_det_room_ask(sw_detector_t *det, size_t more, bool served)
{
    if (!det->pool || served) return false;
    det->room_want = more;
    return true;
}

uint32_t sw_det_rank_create(sw_detector_t *det, job_t *j, int64_t rank)
{
    det->gen++; /* the rank table may move */
    if (j->ranks.n >= j->ranks.cap) {
        size_t cap = j->ranks.cap;
        SW_GROW(j->ranks.v, j->ranks.n, cap,
                2); /* small first: most flood jobs, and new jobs, have one rank */
        j->cands.hpos = sw_reallocarray(j->cands.hpos, cap, sizeof(*j->cands.hpos));
        j->ranks.cap = cap;
    }
    uint32_t ri = (uint32_t)j->ranks.n++;
    rank_t *r = &j->ranks.v[ri];
    memset(r, 0, sizeof(*r));
    r->rank = rank;
    sw_win_init(&r->win, (uint32_t)det->params.window_samples);
    j->ranks.win_bytes += sw_win_bytes(r->win.cap);
    r->cand = NIL;
    j->cands.hpos[ri] = NIL;
    r->last_src = NIL;
    r->phase_grp = NIL;
    r->proc_src = NIL;
    r->cold = NIL;
    sw_imap_put(&j->ranks.map, rank, ri);
    if (ri == 0 || rank < j->ranks.min) j->ranks.min = rank;
    if (ri == 0 || rank > j->ranks.max) j->ranks.max = rank;
    j->ranks.sorted_dirty = true;
    j->seen.insufficient++;
    return ri;
}

/* ---- public API -------------------------------------------------------- */

/* Copy a message into errstr without stdio. */
void sw_det_snprintf_like(char *errstr, size_t errstr_size, const char *msg)
{
    if (!errstr_size) return;
    size_t n = strlen(msg);
    if (n >= errstr_size) n = errstr_size - 1;
    memcpy(errstr, msg, n);
    errstr[n] = '\0';
}

/* "<a><v><b><limit>)" into errstr without stdio (v < 0: omitted). */
void sw_det_limit_error(char *errstr, size_t errstr_size, const char *a, int64_t v, const char *b,
                        int64_t limit)
{
    sw_buf_t buf;
    sw_buf_init(&buf);
    sw_buf_puts(&buf, a);
    if (v >= 0) sw_buf_put_i64(&buf, v);
    sw_buf_puts(&buf, b);
    sw_buf_put_i64(&buf, limit);
    sw_buf_putc(&buf, ')');
    if (errstr_size) {
        size_t n = buf.len < errstr_size - 1 ? buf.len : errstr_size - 1;
        memcpy(errstr, buf.data, n);
        errstr[n] = '\0';
    }
    sw_buf_clear(&buf);
}

/* Why a new job or rank (@p what) is refused for memory: what was full
 * and why nothing could go. */
void sw_det_memory_error(const sw_detector_t *det, char *errstr, size_t errstr_size,
                         const char *what)
{
    sw_buf_t buf;
    sw_buf_init(&buf);
    sw_buf_puts(&buf, what);
    sw_buf_puts(&buf, " would exceed max.memory.bytes (");
    if (det->pool) {
        sw_buf_put_i64(&buf, det->pool->limit);
        sw_buf_puts(&buf, " bytes, full: ");
        sw_buf_put_i64(&buf, atomic_load_explicit(&det->pool->used, memory_order_relaxed));
        sw_buf_puts(&buf, " bytes of ");
        sw_buf_put_i64(&buf, atomic_load_explicit(&det->pool->jobs, memory_order_relaxed));
        sw_buf_puts(&buf, " jobs in all engines");
    } else {
        sw_buf_puts(&buf, "this engine's budget ");
        sw_buf_put_i64(&buf, (int64_t)det->budget);
        sw_buf_puts(&buf, " bytes, full: ");
        sw_buf_put_i64(&buf, (int64_t)det->acct);
        sw_buf_puts(&buf, " bytes of ");
        sw_buf_put_i64(&buf, (int64_t)det->live_jobs);
        sw_buf_puts(&buf, " jobs");
    }
    sw_buf_puts(&buf,
                ", none of those that could go without losing a rising run or an open "
                "episode left)");
    sw_det_snprintf_like(errstr, errstr_size, sw_buf_cstr(&buf));
    sw_buf_clear(&buf);
}

sw_detector_t *sw_detect_new(sw_params_t params)
{
    sw_detector_t *det = sw_calloc(1, sizeof(*det));
    /* params.window_samples is in range (sw_detect_new()'s contract): no re-clamp. */
    det->params = params;
    det->stale_ns = params.stale_ms > 0 ? params.stale_ms * 1000000 : INT64_MAX;
    det->rebuild_x[0] = det->rebuild_x[1] = INT64_MIN;
    sw_buf_init(&det->warning);
    sw_arena_init(&det->arena);
    sw_winpool_init(&det->winpool, (uint32_t)params.window_samples);
    return det;
}

void sw_detect_destroy(sw_detector_t *det)
{
    if (!det) return;
    for (size_t i = 0; i < det->njobs; i++)
        if (det->jobs[i]) job_destroy(det, det->jobs[i]);
    free(det->jobs);
    free(det->jslots);
    free(det->stack);
    free(det->tmp_sig);
    free(det->tmp_rel);
    sw_winpool_clear(&det->winpool);
    sw_arena_clear(&det->arena);
    sw_buf_clear(&det->warning);
    sw_crash_out_free(det->xo);
    free(det);
}

/* A job's summary, then the SPEC 8 records that close its crash and
 * warning (sw_crash_summarised). */
static void summarise(sw_detector_t *det, job_t *j, sw_record_cb cb, void *opaque)
{
    sw_record_t *rec = sw_det_emit(det, j, SW_ACTION_SUMMARY, false, 0, j->id.last_off);
    sw_crash_summarised(det, j);
    rec->job_crash = sw_crash_job_crash(det);
    cb(opaque, rec);
    rec->job_crash = NULL; /* det->rec is reused by the next record */
    for (const sw_record_t *x = sw_crash_next(det); x; x = sw_crash_next(det)) cb(opaque, x);
}

void sw_detect_finish(sw_detector_t *det, sw_record_cb cb, void *opaque)
{
    for (size_t i = 0; i < det->njobs; i++) {
        job_t *j = det->jobs[i];
        if (!j || !j->id.has_sample) continue;
        summarise(det, j, cb, opaque);
    }
}

size_t sw_detect_expire(sw_detector_t *det, int64_t now_ms, int64_t idle_ms, sw_record_cb cb,
                        void *opaque)
{
    size_t expired = 0, k = 0;
    for (size_t i = 0; i < det->njobs; i++) {
        job_t *j = det->jobs[i];
        if (!j) continue;
        if (now_ms - j->id.last_ms >= idle_ms) {
            det->gen++;
            if (j->id.has_sample) summarise(det, j, cb, opaque);
            sw_det_junk_del(det, j);
            jmap_del(det, j);
            job_destroy(det, j);
            det->live_jobs--;
            expired++;
            continue;
        }
        j->idx = k;
        det->jobs[k++] = j;
    }
    det->njobs = k;
    return expired;
}

const char *sw_detect_warning(const sw_detector_t *det)
{
    return det->warning.len ? det->warning.data : NULL;
}

void sw_detect_set_pressure(sw_detector_t *det, bool over_budget)
{
    det->pressure = over_budget;
}

void sw_detect_set_budget(sw_detector_t *det, size_t max_bytes)
{
    det->budget = max_bytes;
}

size_t sw_detect_accounted(const sw_detector_t *det)
{
    return det->acct;
}

size_t sw_detect_evict(sw_detector_t *det, size_t max)
{
    size_t n = 0;
    while (n < max && sw_det_evict_one(det, NULL, 1)) n++;
    return n;
}

void sw_detect_set_pool(sw_detector_t *det, sw_detect_pool_t *pool)
{
    if (det->pool == pool) return;
    if (det->pool) {
        atomic_fetch_sub_explicit(&det->pool->used, (int64_t)det->acct, memory_order_relaxed);
        atomic_fetch_sub_explicit(&det->pool->jobs, (int64_t)det->live_jobs, memory_order_relaxed);
    }
    det->pool = pool;
    if (pool) {
        atomic_fetch_add_explicit(&pool->used, (int64_t)det->acct, memory_order_relaxed);
        atomic_fetch_add_explicit(&pool->jobs, (int64_t)det->live_jobs, memory_order_relaxed);
    }
}

size_t sw_detect_room_wanted(const sw_detector_t *det)
{
    return det->room_want;
}

void sw_detect_room_served(sw_detector_t *det, bool final)
{
    det->room_served = true;
    det->room_final = final;
}

bool sw_detect_evict_value(const sw_detector_t *det, int evidence, uint64_t *value)
{
    if (evidence != 0) {
        const job_t *j = least_valuable(det, evidence, NULL, SIZE_MAX);
        if (!j) return false;
        *value = j->seen.retained;
        return true;
    }
    bool any = false; /* evidence 0: the fewest ranks */
    size_t seen = 0;
    for (const job_t *j = det->junk_head; j && seen < EVICT_SCAN; j = j->junk_next, seen++)
        if (job_evidence(j) == 0 && (!any || j->ranks.n < *value)) {
            *value = j->ranks.n;
            any = true;
        }
    return any;
}

size_t sw_detect_evict_bytes(sw_detector_t *det, int evidence, size_t max_ranks, size_t bytes,
                             sw_detect_evict_cb cb, void *opaque)
{
    size_t freed = 0;
    job_t *j;
    while (freed < bytes && (j = least_valuable(det, evidence, NULL, max_ranks)) != NULL) {
        size_t b = j->acct;
        if (cb) {
            sw_detect_evictee_t e = {j->id.has,  j->id.str,        j->id.len, evidence,
                                     j->ranks.n, j->seen.retained, b};
            cb(opaque, &e);
        }
        evict_job(det, j);
        freed += b ? b : 1; /* a job not accounted yet still counts as progress */
    }
    return freed;
}

void sw_detect_stats(const sw_detector_t *det, sw_detect_stats_t *st)
{
    *st = det->st;
    st->jobs = det->live_jobs;
    st->ranks = 0;
    st->retained = 0;
    st->bytes = sizeof(*det) + det->capjobs * sizeof(job_t *) + det->jcap * sizeof(job_t *) +
                det->arena.total + det->capstack * sizeof(uint32_t) +
                det->captmp * (sizeof(sig_ent_t) + sizeof(int64_t)) +
                sw_winpool_slack(&det->winpool) + sw_crash_out_bytes(det->xo);
    st->blind_ranks = 0;
    for (size_t i = 0; i < det->njobs; i++) {
        const job_t *j = det->jobs[i];
        if (!j) continue;
        st->blind_ranks += sw_crash_job_blind(j->cj);
        st->ranks += j->ranks.n;
        st->retained += j->seen.retained;
        st->bytes += job_bytes(j);
    }
}

const sw_record_t *sw_detect_next(sw_detector_t *det)
{
    return sw_crash_next(det);
}

bool sw_detect_analysis(sw_detector_t *det, const char *job_id, sw_analysis_t *out)
{
    job_t *j = sw_det_jmap_find(det, job_id != NULL, job_id, job_id ? strlen(job_id) : 0);
    if (!j || !j->id.has_sample) return false;
    sw_det_build_analysis(det, j, false, out);
    return true;
}

bool sw_detect_spent(const sw_detector_t *det, const char *job_id, int64_t rank, int64_t *spent_ts)
{
    job_t *j = sw_det_jmap_find(det, job_id != NULL, job_id, job_id ? strlen(job_id) : 0);
    uint32_t ri;
    if (!j || !sw_imap_get(&j->ranks.map, rank, &ri)) return false;
    *spent_ts = rk_spent(j, &j->ranks.v[ri]);
    return true;
}

bool sw_detect_split(const sw_detector_t *det, const char *job_id, int64_t rank, int64_t *split_ts)
{
    job_t *j = sw_det_jmap_find(det, job_id != NULL, job_id, job_id ? strlen(job_id) : 0);
    uint32_t ri;
    if (!j || !sw_imap_get(&j->ranks.map, rank, &ri)) return false;
    *split_ts = rk_split(j, &j->ranks.v[ri]);
    return true;
}
