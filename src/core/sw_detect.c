/*
 * Stream engine (SPEC 6). Per job it keeps, incrementally:
 *  - per rank: a window (sw_window.c), first and newest timestamps, and
 *    the rank's first qualifying spike (its candidate);
 *  - the candidates in a treap ordered by (time since the rank's first
 *    sample, -peak, rank). That order equals the SPEC's aligned-time order
 *    for every anchor, because aligned = (spike - first) + anchor_first;
 *  - multisets of timestamp gaps and sampling intervals for the median;
 *  - world-size claim counts with the current leader;
 *  - a min-heap of ranks by newest timestamp for the staleness sweep;
 *  - the lifecycle and the last signature. The signature's suspect list is
 *    re-read from the treap only when a candidate change touched the
 *    suspects' region (time <= onset), which is the only way it can change.
 * Records are built from this state in O(ranks + suspects) only when one is
 * emitted. Pure: no I/O, no clock, no globals.
 */#include "sw_detect_int.h"

/* ---- job map --------------------------------------------------------- */

static uint64_t job_key_hash(const sw_detector_t *det, bool has, const char *p, size_t n)
{
    return has ? sw_siphash13(&det->params.hash_key, p, n) : 0x9e3779b97f4a7c15ULL;
}

static bool job_matches(const job_t *j, bool has, const char *p, size_t n)
{
    if (j->has_job_id != has) return false;
    return !has || (j->job_id_len == n && memcmp(j->job_id, p, n) == 0);
}

job_t *sw_det_jmap_find(const sw_detector_t *det, bool has, const char *p, size_t n)
{
    if (!det->jcap) return NULL;
    uint64_t h = job_key_hash(det, has, p, n);
    for (size_t i = h & (det->jcap - 1);; i = (i + 1) & (det->jcap - 1)) {
        job_t *j = det->jslots[i];
        if (!j) return NULL;
        if (j->hash == h && job_matches(j, has, p, n)) return j;
    }
}

static void jmap_put_raw(job_t **slots, size_t cap, job_t *j)
{
    size_t i = j->hash & (cap - 1);
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
    size_t mask = det->jcap - 1, i = j->hash & mask;
    while (det->jslots[i] != j) i = (i + 1) & mask;
    for (size_t k = (i + 1) & mask; det->jslots[k]; k = (k + 1) & mask) {
        size_t home = det->jslots[k]->hash & mask;
        bool between = (i <= k) ? (home > i && home <= k) : (home > i || home <= k);
        if (!between) {
            det->jslots[i] = det->jslots[k];
            i = k;
        }
    }
    det->jslots[i] = NULL;
}

/* ---- candidate treap ------------------------------------------------- */

static bool t_less(const rank_t *a, const rank_t *b)
{
    if (a->c_rel != b->c_rel) return a->c_rel < b->c_rel;
    if (a->c_peak != b->c_peak) return a->c_peak > b->c_peak;
    return a->rank < b->rank;
}

static void t_split(job_t *j, uint32_t t, const rank_t *key, uint32_t *l, uint32_t *r)
{
    if (t == NIL) {
        *l = *r = NIL;
        return;
    }
    rank_t *n = &j->ranks[t];
    if (t_less(n, key)) {
        t_split(j, n->t_right, key, &n->t_right, r);
        *l = t;
    } else {
        t_split(j, n->t_left, key, l, &n->t_left);
        *r = t;
    }
}

static uint32_t t_merge(job_t *j, uint32_t a, uint32_t b)
{
    if (a == NIL) return b;
    if (b == NIL) return a;
    if (j->ranks[a].t_prio > j->ranks[b].t_prio) {
        j->ranks[a].t_right = t_merge(j, j->ranks[a].t_right, b);
        return a;
    }
    j->ranks[b].t_left = t_merge(j, a, j->ranks[b].t_left);
    return b;
}

static uint32_t t_insert(job_t *j, uint32_t t, uint32_t x)
{
    if (t == NIL) return x;
    rank_t *n = &j->ranks[t], *nx = &j->ranks[x];
    if (nx->t_prio > n->t_prio) {
        t_split(j, t, nx, &nx->t_left, &nx->t_right);
        return x;
    }
    if (t_less(nx, n)) n->t_left = t_insert(j, n->t_left, x);
    else n->t_right = t_insert(j, n->t_right, x);
    return t;
}

static uint32_t t_erase(job_t *j, uint32_t t, uint32_t x)
{
    if (t == NIL) return NIL;
    if (t == x) return t_merge(j, j->ranks[t].t_left, j->ranks[t].t_right);
    rank_t *n = &j->ranks[t];
    if (t_less(&j->ranks[x], n)) n->t_left = t_erase(j, n->t_left, x);
    else n->t_right = t_erase(j, n->t_right, x);
    return t;
}

/* In-order iteration from the smallest candidate. */
typedef struct titer_s {
    sw_detector_t *det;
    job_t *j;
    size_t n;
} titer_t;

static void titer_push_left(titer_t *it, uint32_t t)
{
    while (t != NIL) {
        GROW(it->det->stack, it->n, it->det->capstack, 64);
        it->det->stack[it->n++] = t;
        t = it->j->ranks[t].t_left;
    }
}

static void titer_begin(titer_t *it, sw_detector_t *det, job_t *j)
{
    it->det = det;
    it->j = j;
    it->n = 0;
    titer_push_left(it, j->t_root);
}

static uint32_t titer_next(titer_t *it)
{
    if (!it->n) return NIL;
    uint32_t x = it->det->stack[--it->n];
    titer_push_left(it, it->j->ranks[x].t_right);
    return x;
}

/* In-order iteration from the first candidate with rel > key: the path to
 * that lower bound is pushed in O(log n), then titer_next goes on as usual. */
static void titer_begin_after(titer_t *it, sw_detector_t *det, job_t *j, int64_t key)
{
    it->det = det;
    it->j = j;
    it->n = 0;
    for (uint32_t t = j->t_root; t != NIL;) {
        if (j->ranks[t].c_rel > key) {
            GROW(det->stack, it->n, det->capstack, 64);
            det->stack[it->n++] = t;
            t = j->ranks[t].t_left;
        } else {
            t = j->ranks[t].t_right;
        }
    }
}

/* The candidate with the largest rel, NIL when there is none. */
static uint32_t t_last(const job_t *j)
{
    uint32_t t = j->t_root;
    if (t == NIL) return NIL;
    while (j->ranks[t].t_right != NIL) t = j->ranks[t].t_right;
    return t;
}

/* ---- stale heap (min by newest timestamp) -----------------------------
 * Keys live in the heap array and positions in a compact array beside the
 * ranks, so a sift touches only these two small arrays. */

static void heap_set(job_t *j, size_t i, heap_ent_t e)
{
    j->heap[i] = e;
    j->hpos[e.ri] = (uint32_t)i;
}

static void heap_up(job_t *j, size_t i)
{
    heap_ent_t x = j->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (j->heap[p].key <= x.key) break;
        heap_set(j, i, j->heap[p]);
        i = p;
    }
    heap_set(j, i, x);
}

static void heap_down(job_t *j, size_t i)
{
    heap_ent_t x = j->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= j->nheap) break;
        if (c + 1 < j->nheap && j->heap[c + 1].key < j->heap[c].key) c++;
        if (j->heap[c].key >= x.key) break;
        heap_set(j, i, j->heap[c]);
        i = c;
    }
    heap_set(j, i, x);
}

/* Insert rank ri, or move it after its newest timestamp grew. */
void sw_det_heap_update(job_t *j, uint32_t ri, int64_t key)
{
    uint32_t pos = j->hpos[ri];
    if (pos == NIL) {
        GROW(j->heap, j->nheap, j->capheap, 2);
        heap_ent_t e = {key, ri};
        heap_set(j, j->nheap++, e);
        heap_up(j, j->nheap - 1);
        return;
    }
    j->heap[pos].key = key;
    heap_down(j, pos);
}

static void heap_pop_top(job_t *j)
{
    j->hpos[j->heap[0].ri] = NIL;
    if (--j->nheap) {
        heap_set(j, 0, j->heap[j->nheap]);
        heap_down(j, 0);
    }
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
    const sw_src_t *s = &j->srcs[id];
    size_t mask = j->src_nslots - 1;
    size_t i = src_hash(s->pid, s->interval_ms, s->host, s->session) & mask;
    while (j->src_slots[i]) i = (i + 1) & mask;
    j->src_slots[i] = id + 1;
}

static inline int64_t ev_device(const sw_event_t *ev)
{
    return ev->device_id.set ? ev->device_id.value : SW_SRC_UNSET;
}

static inline int64_t ev_local_rank(const sw_event_t *ev)
{
    return ev->local_rank.set ? ev->local_rank.value : SW_SRC_UNSET;
}

static bool src_is(const job_t *j, uint32_t id, const sw_event_t *ev)
{
    const sw_src_t *s = &j->srcs[id];
    if (s->pid != ev->pid || s->interval_ms != ev->sampling_interval_ms ||
        s->device_id != ev_device(ev) || s->local_rank != ev_local_rank(ev))
        return false;
    if (!sw_str_eq(sw_intern_get(j->strs, s->host), ev->host)) return false;
    if (!ev->has_session_id) return s->session == 0;
    return s->session != 0 && sw_str_eq(sw_intern_get(j->strs, s->session), ev->session_id);
}

/* The rank's inline copy of its last source matches the event. */
static inline bool src_cached(const rank_t *r, const sw_event_t *ev)
{
    if (r->last_src == NIL || !r->c_inline || r->c_pid != ev->pid || r->c_dev != ev_device(ev) ||
        r->c_lrank != ev_local_rank(ev) ||
        r->c_interval != ev->sampling_interval_ms || r->c_host_len != ev->host.len ||
        memcmp(r->c_host, ev->host.ptr, ev->host.len) != 0)
        return false;
    if (!ev->has_session_id) return r->c_sess_null;
    return !r->c_sess_null && r->c_sess_len == ev->session_id.len &&
           memcmp(r->c_sess, ev->session_id.ptr, ev->session_id.len) == 0;
}

static void src_remember(rank_t *r, uint32_t id, const sw_event_t *ev)
{
    r->last_src = id;
    r->phase_grp = NIL;
    r->c_pid = ev->pid;
    r->c_dev = ev_device(ev);
    r->c_lrank = ev_local_rank(ev);
    r->c_interval = ev->sampling_interval_ms;
    r->c_inline = ev->host.len <= SRC_HOST_MAX && ev->session_id.len <= SRC_SESS_MAX;
    if (!r->c_inline) return;
    r->c_host_len = (uint8_t)ev->host.len;
    if (ev->host.len) memcpy(r->c_host, ev->host.ptr, ev->host.len);
    r->c_sess_null = !ev->has_session_id;
    r->c_sess_len = (uint8_t)ev->session_id.len;
    if (ev->session_id.len) memcpy(r->c_sess, ev->session_id.ptr, ev->session_id.len);
}

uint32_t sw_det_src_get(job_t *j, rank_t *r, const sw_event_t *ev)
{
    if (src_cached(r, ev)) return r->last_src;
    if (r->last_src != NIL && !r->c_inline && src_is(j, r->last_src, ev)) return r->last_src;
    uint32_t host = sw_intern_add(j->strs, ev->host);
    uint32_t session = ev->has_session_id ? sw_intern_add(j->strs, ev->session_id) : 0;
    if (j->src_nslots) {
        size_t mask = j->src_nslots - 1;
        size_t i = src_hash(ev->pid, ev->sampling_interval_ms, host, session) & mask;
        for (; j->src_slots[i]; i = (i + 1) & mask) {
            const sw_src_t *s = &j->srcs[j->src_slots[i] - 1];
            if (s->pid == ev->pid && s->interval_ms == ev->sampling_interval_ms &&
                s->host == host && s->session == session && s->device_id == ev_device(ev) &&
                s->local_rank == ev_local_rank(ev)) {
                src_remember(r, j->src_slots[i] - 1, ev);
                return r->last_src;
            }
        }
    }
    GROW(j->srcs, j->nsrcs, j->capsrcs, 2);
    uint32_t id = (uint32_t)j->nsrcs++;
    j->srcs[id].pid = ev->pid;
    j->srcs[id].interval_ms = ev->sampling_interval_ms;
    j->srcs[id].host = host;
    j->srcs[id].session = session;
    j->srcs[id].device_id = ev_device(ev);
    j->srcs[id].local_rank = ev_local_rank(ev);
    if (j->nsrcs * 2 > j->src_nslots) {
        free(j->src_slots);
        j->src_nslots = j->src_nslots ? j->src_nslots * 2 : 4;
        j->src_slots = sw_calloc(j->src_nslots, sizeof(*j->src_slots));
        for (uint32_t k = 0; k < j->nsrcs; k++) src_slots_put(j, k);
    } else {
        src_slots_put(j, id);
    }
    src_remember(r, id, ev);
    return id;
}

/* ---- jobs and ranks --------------------------------------------------- */

/* ---- the one-rank jobs (eviction candidates) ---------------------------
 * A job with at most one rank can never trigger (an onset needs two ranks)
 * and holds little that matters: when max.jobs or the memory budget is
 * reached, the oldest of them makes room for a new job, so that a flood
 * of made-up job ids cannot lock out jobs that report like real ones. */

static void junk_add(sw_detector_t *det, job_t *j)
{
    j->in_junk = true;
    j->junk_next = NULL;
    j->junk_prev = det->junk_tail;
    if (det->junk_tail) det->junk_tail->junk_next = j;
    else det->junk_head = j;
    det->junk_tail = j;
}

static void junk_del(sw_detector_t *det, job_t *j)
{
    if (!j->in_junk) return;
    if (j->junk_prev) j->junk_prev->junk_next = j->junk_next;
    else det->junk_head = j->junk_next;
    if (j->junk_next) j->junk_next->junk_prev = j->junk_prev;
    else det->junk_tail = j->junk_prev;
    j->junk_prev = j->junk_next = NULL;
    j->in_junk = false;
}

/* Least recently active first: by the offset of the job's latest event,
 * then by creation (the list's order in a live engine, where every event
 * moves its job to the tail). */
static int junk_cmp(const void *a, const void *b)
{
    const job_t *x = *(job_t *const *)a, *y = *(job_t *const *)b;
    if (x->last_off != y->last_off) return x->last_off < y->last_off ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A restored engine orders its one-rank jobs as the live one did, so that
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
    for (size_t i = 0; i < n; i++) junk_add(det, v[i]);
    free(v);
}

job_t *sw_det_job_create(sw_detector_t *det, const sw_event_t *ev, int64_t offset)
{
    job_t *j = sw_calloc(1, sizeof(*j));
    j->first_off = j->last_off = offset;
    j->has_job_id = ev->has_job_id;
    if (ev->has_job_id) {
        j->job_id = sw_memdup0(ev->job_id.ptr, ev->job_id.len);
        j->job_id_len = ev->job_id.len;
    }
    j->hash = job_key_hash(det, ev->has_job_id, ev->job_id.ptr, ev->job_id.len);
    j->strs = sw_intern_new_keyed(det->params.hash_key);
    sw_imap_init(&j->rank_map);
    sw_imap_init(&j->claim_map);
    sw_mset_init(&j->gaps);
    sw_vcount_init(&j->intervals);
    j->claim_leader = -1;
    j->t_root = NIL;
    j->sig_boundary = INT64_MAX;
    j->excl_key = INT64_MIN;
    j->trig_conf = -1;
    sw_arena_init(&j->v_arena);
    j->phase = sw_phase_new_keyed(det->params.hash_key);
    GROW(det->jobs, det->njobs, det->capjobs, 16);
    j->idx = det->njobs;
    det->jobs[det->njobs++] = j;
    jmap_put(det, j);
    det->live_jobs++;
    junk_add(det, j);
    return j;
}

static void job_destroy(job_t *j)
{
    if (!j) return;
    for (size_t i = 0; i < j->nranks; i++) sw_win_clear(&j->ranks[i].win);
    free(j->ranks);
    sw_imap_clear(&j->rank_map);
    sw_imap_clear(&j->claim_map);
    free(j->claims);
    sw_mset_clear(&j->gaps);
    sw_vcount_clear(&j->intervals);
    free(j->heap);
    free(j->hpos);
    free(j->sig);
    free(j->sorted);
    free(j->srcs);
    free(j->src_slots);
    sw_intern_destroy(j->strs);
    sw_phase_destroy(j->phase);
    sw_arena_clear(&j->v_arena);
    free(j->job_id);
    free(j);
}

/* Evict the least recently active one-rank job (no record: it never had
 * an onset).
 * @returns false when there is none. */
static bool evict_one(sw_detector_t *det)
{
    job_t *j = det->junk_head;
    if (!j) return false;
    junk_del(det, j);
    jmap_del(det, j);
    /* A hole keeps the others in creation order (the order of the final
     * summaries); holes are compacted once they are half the array. */
    det->jobs[j->idx] = NULL;
    det->live_jobs--;
    job_destroy(j);
    det->st.evicted++;
    if (2 * (det->njobs - det->live_jobs) > det->njobs) {
        size_t k = 0;
        for (size_t i = 0; i < det->njobs; i++)
            if (det->jobs[i]) {
                det->jobs[i]->idx = k;
                det->jobs[k++] = det->jobs[i];
            }
        det->njobs = k;
    }
    return true;
}

static size_t job_bytes(const job_t *j)
{
    size_t b = sizeof(*j) + j->capranks * (sizeof(rank_t) + sizeof(uint32_t)) +
               j->win_bytes +
               sw_imap_bytes(&j->rank_map) + sw_imap_bytes(&j->claim_map) +
               j->capclaims * sizeof(claim_t) + sw_mset_bytes(&j->gaps) +
               sw_vcount_bytes(&j->intervals) + j->capheap * sizeof(heap_ent_t) +
               j->capsig * sizeof(sig_ent_t) + (j->sorted ? j->nranks * sizeof(int64_t) : 0) +
               j->capsrcs * sizeof(sw_src_t) + j->src_nslots * sizeof(uint32_t) +
               sw_intern_bytes(j->strs) + sw_phase_bytes(j->phase) + j->job_id_len +
               j->v_arena.total;
    return b;
}

uint32_t sw_det_rank_create(sw_detector_t *det, job_t *j, int64_t rank, int64_t offset)
{
    if (j->nranks >= j->capranks) {
        size_t cap = j->capranks;
        GROW(j->ranks, j->nranks, cap, 2); /* small first: most flood jobs, and new jobs, have one rank */
        j->hpos = sw_reallocarray(j->hpos, cap, sizeof(*j->hpos));
        j->capranks = cap;
    }
    uint32_t ri = (uint32_t)j->nranks++;
    if (j->nranks == 2) junk_del(det, j); /* a second rank: a job that may trigger */
    rank_t *r = &j->ranks[ri];
    memset(r, 0, sizeof(*r));
    r->rank = rank;
    r->empty_off = offset - 1;
    sw_win_init(&r->win, (uint32_t)det->params.window_samples);
    j->win_bytes += sw_win_bytes(r->win.cap);
    r->t_left = r->t_right = NIL;
    r->t_prio = mix32(ri * 2654435761U + 1);
    j->hpos[ri] = NIL;
    r->last_src = NIL;
    r->phase_grp = NIL;
    sw_imap_put(&j->rank_map, rank, ri);
    if (ri == 0 || rank < j->min_rank) j->min_rank = rank;
    if (ri == 0 || rank > j->max_rank) j->max_rank = rank;
    j->sorted_dirty = true;
    j->insufficient++;
    return ri;
}

static void claim_add(job_t *j, int64_t ws)
{
    uint32_t ci;
    if (!sw_imap_get(&j->claim_map, ws, &ci)) {
        GROW(j->claims, j->nclaims, j->capclaims, 4);
        ci = (uint32_t)j->nclaims++;
        j->claims[ci].ws = ws;
        j->claims[ci].count = 0;
        j->claims[ci].first = j->claim_seq;
        sw_imap_put(&j->claim_map, ws, ci);
    }
    j->claim_seq++;
    claim_t *c = &j->claims[ci];
    c->count++;
    if (j->claim_leader < 0) {
        j->claim_leader = ci;
        return;
    }
    const claim_t *l = &j->claims[j->claim_leader];
    if (c->count > l->count || (c->count == l->count && c->first < l->first))
        j->claim_leader = ci;
}

static int64_t job_world_size(const job_t *j)
{
    int64_t declared = j->claim_leader >= 0 ? j->claims[j->claim_leader].ws : 1;
    int64_t observed = j->max_rank + 1;
    return declared > observed ? declared : observed;
}

static int64_t anchor_first(const job_t *j, int64_t *anchor_rank)
{
    uint32_t ri;
    if (!sw_imap_get(&j->rank_map, 0, &ri)) sw_imap_get(&j->rank_map, j->min_rank, &ri);
    if (anchor_rank) *anchor_rank = j->ranks[ri].rank;
    return j->ranks[ri].first_ts;
}

/* horizon - anchor first, clamped: candidates with rel <= it are behind
 * the horizon. INT64_MIN without a horizon (rel is never negative). */
static int64_t horizon_key(const job_t *j)
{
    if (!j->has_horizon || !j->has_sample) return INT64_MIN;
    sw_i128 k = (sw_i128)j->horizon - (sw_i128)anchor_first(j, NULL);
    if (k < INT64_MIN) return INT64_MIN;
    if (k > INT64_MAX) return INT64_MAX;
    return (int64_t)k;
}

/* Bring n_excl in step with the current horizon and anchor. */
static void excl_sync(sw_detector_t *det, job_t *j)
{
    int64_t key = horizon_key(j);
    if (j->excl_valid && key == j->excl_key) return;
    size_t n = 0;
    if (key != INT64_MIN) {
        titer_t it;
        titer_begin(&it, det, j);
        for (uint32_t x = titer_next(&it); x != NIL && j->ranks[x].c_rel <= key; x = titer_next(&it))
            n++;
    }
    j->n_excl = n;
    j->excl_key = key;
    j->excl_valid = true;
    j->v_touched = true;
}

/* Candidates of analysis A: those beyond the horizon. */
static size_t cands_eff(const job_t *j)
{
    return j->ncands - j->n_excl;
}

static sw_i128 job_median(job_t *j)
{
    size_t n = sw_mset_size(&j->gaps);
    if (n)
        return sw_median_of(sw_mset_kth(&j->gaps, (n - 1) / 2), sw_mset_kth(&j->gaps, n / 2), n);
    n = sw_vcount_size(&j->intervals);
    if (n)
        return sw_median_of((sw_i128)sw_vcount_kth(&j->intervals, (n - 1) / 2) * 1000000,
                            (sw_i128)sw_vcount_kth(&j->intervals, n / 2) * 1000000, n);
    return 0;
}

/* Re-derive rank ri's candidate and keep the treap in step. */
void sw_det_cand_refresh(sw_detector_t *det, job_t *j, uint32_t ri)
{
    rank_t *r = &j->ranks[ri];
    sw_win_cand_t wc;
    bool has = sw_win_candidate(&r->win, det->params.spike_min_bytes, det->params.spike_fraction,
                                &wc);
    int64_t rel = has ? wc.spike_ts - r->first_ts : 0;
    if (has == r->has_cand && (!has || (rel == r->c_rel && wc.peak == r->c_peak))) {
        if (has) {
            r->c_spike_ts = wc.spike_ts;
            r->c_samples = wc.samples;
            r->c_src = wc.src;
        }
        return;
    }
    if (r->in_verdict) j->v_touched = true;
    if (r->has_cand) {
        if (r->c_rel <= j->sig_boundary) j->region_dirty = true;
        j->t_root = t_erase(j, j->t_root, ri);
        r->t_left = r->t_right = NIL;
        j->ncands--;
        if (j->excl_valid && r->c_rel <= j->excl_key) j->n_excl--;
    }
    r->has_cand = has;
    if (!has) return;
    r->c_rel = rel;
    r->c_spike_ts = wc.spike_ts;
    r->c_peak = wc.peak;
    r->c_samples = wc.samples;
    r->c_src = wc.src;
    if (rel <= j->sig_boundary) j->region_dirty = true;
    j->t_root = t_insert(j, j->t_root, ri);
    j->ncands++;
    if (j->excl_valid && rel <= j->excl_key) j->n_excl++;
}

static void window_changed(job_t *j, uint32_t n_before, uint32_t n_after)
{
    j->retained += n_after;
    j->retained -= n_before;
    if (n_before < 2 && n_after >= 2) j->insufficient--;
    else if (n_before >= 2 && n_after < 2) j->insufficient++;
}

static void stale_sweep(sw_detector_t *det, job_t *j, int64_t offset)
{
    while (j->nheap) {
        if (j->newest_ts - j->heap[0].key <= det->stale_ns) break;
        uint32_t ri = j->heap[0].ri;
        rank_t *r = &j->ranks[ri];
        heap_pop_top(j);
        sw_win_ctx_t ctx = {j->srcs, j->strs, &j->gaps, &j->intervals};
        uint32_t n_before = r->win.n;
        sw_win_empty(&r->win, &ctx);
        r->empty_off = offset;
        window_changed(j, n_before, 0);
        sw_det_cand_refresh(det, j, ri);
        det->st.stale_windows++;
    }
}

/* ---- signature and records -------------------------------------------- */

/* Re-read the suspects from the treap into tmp_sig/tmp_rel.
 * @returns their number; *boundary is the onset candidate's rel. */
static size_t collect_suspects(sw_detector_t *det, job_t *j, int64_t *boundary)
{
    titer_t it;
    titer_begin_after(&it, det, j, j->excl_key);
    size_t n = 0;
    *boundary = INT64_MAX;
    for (uint32_t x = titer_next(&it); x != NIL; x = titer_next(&it)) {
        const rank_t *r = &j->ranks[x];
        if (n >= 2 && r->c_rel > *boundary) break;
        if (n + 1 > det->captmp) {
            det->captmp = det->captmp ? det->captmp * 2 : 64;
            det->tmp_sig = sw_reallocarray(det->tmp_sig, det->captmp, sizeof(*det->tmp_sig));
            det->tmp_rel = sw_reallocarray(det->tmp_rel, det->captmp, sizeof(*det->tmp_rel));
        }
        det->tmp_sig[n].rank = r->rank;
        det->tmp_sig[n].spike_ts = r->c_spike_ts;
        det->tmp_rel[n] = r->c_rel;
        n++;
        if (n == 2) *boundary = r->c_rel;
    }
    return n;
}

static sw_confidence_t job_confidence(job_t *j)
{
    bool sparse = (uint64_t)job_world_size(j) > j->nranks || j->insufficient > 0;
    uint64_t lead = (uint64_t)(j->sig_boundary - j->sig_rel0);
    sw_i128 median = j->sig_earliest == 1 && !sparse ? job_median(j) : 0;
    return sw_earliest_confidence(cands_eff(j), j->sig_earliest, sparse, lead, median);
}

/* Refresh the signature (onset, suspects, earliest confidence) of an open
 * job with an onset. @returns true when it changed. */
static bool sig_refresh(sw_detector_t *det, job_t *j)
{
    bool changed = !j->sig_valid;
    if (j->region_dirty || !j->sig_valid) {
        int64_t boundary;
        size_t n = collect_suspects(det, j, &boundary);
        if (n != j->nsig || memcmp(det->tmp_sig, j->sig, n * sizeof(*j->sig)) != 0) {
            changed = true;
            GROW(j->sig, n, j->capsig, 8);
            memcpy(j->sig, det->tmp_sig, n * sizeof(*j->sig));
            j->nsig = n;
        }
        j->sig_boundary = boundary;
        j->sig_rel0 = det->tmp_rel[0];
        j->sig_earliest = 0;
        while (j->sig_earliest < n && det->tmp_rel[j->sig_earliest] == j->sig_rel0)
            j->sig_earliest++;
        j->region_dirty = false;
    }
    uint64_t onset = (uint64_t)j->sig_boundary + (uint64_t)anchor_first(j, NULL);
    sw_confidence_t conf = job_confidence(j);
    if (onset != j->sig_onset || conf != j->sig_conf) changed = true;
    j->sig_onset = onset;
    j->sig_conf = conf;
    j->sig_valid = true;
    return changed;
}

static void sig_reset(job_t *j)
{
    j->sig_valid = false;
    j->sig_boundary = INT64_MAX;
    j->nsig = 0;
    j->region_dirty = false;
}

static int i64_cmp(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Each suspect's timeline excerpt, from its window. The budget shrinks
 * with many suspects so that a record stays small. */
static void add_timelines(sw_detector_t *det, job_t *j, int64_t afirst, sw_analysis_t *out)
{
    if (out->n_suspects == 0) return;
    size_t max = SW_TIMELINE_RECORD_POINTS / out->n_suspects;
    if (max > SW_TIMELINE_MAX_POINTS) max = SW_TIMELINE_MAX_POINTS;
    if (max < SW_TIMELINE_MIN_POINTS) max = SW_TIMELINE_MIN_POINTS;
    uint32_t *idx = sw_arena_alloc(&det->arena, max * sizeof(*idx));
    /* The suspects live in the detector's arena: this is their last step. */
    sw_suspect_t *sus = (sw_suspect_t *)out->suspects;
    sw_win_ctx_t ctx = {j->srcs, j->strs, &j->gaps, &j->intervals};
    for (size_t i = 0; i < out->n_suspects; i++) {
        uint32_t ri;
        if (!sw_imap_get(&j->rank_map, sus[i].rank, &ri)) continue;
        const rank_t *r = &j->ranks[ri];
        sw_win_excerpt_t x;
        x.max = max;
        x.aligned = sw_arena_alloc(&det->arena, max * sizeof(*x.aligned));
        x.used = sw_arena_alloc(&det->arena, max * sizeof(*x.used));
        sw_win_excerpt(&r->win, &ctx, r->c_spike_ts, r->c_src, r->c_samples,
                       (int64_t)((uint64_t)r->first_ts - (uint64_t)afirst), idx, &x);
        sus[i].n_timeline = x.n;
        sus[i].timeline_aligned_ns = x.aligned;
        sus[i].timeline_used = x.used;
        sus[i].timeline_spike_start = x.spike_start;
        sus[i].timeline_spike = x.spike;
        sus[i].timeline_window = r->win.n;
    }
}

/* Analysis A of SPEC 6 step 4 from the incremental state; without
 * use_horizon every candidate counts (summaries, step 6). */
static void build_analysis(sw_detector_t *det, job_t *j, bool use_horizon, sw_analysis_t *out)
{
    sw_arena_reset(&det->arena);
    if (j->sorted_dirty) {
        j->sorted = sw_reallocarray(j->sorted, j->nranks, sizeof(*j->sorted));
        for (size_t i = 0; i < j->nranks; i++) j->sorted[i] = j->ranks[i].rank;
        qsort(j->sorted, j->nranks, sizeof(*j->sorted), i64_cmp);
        j->sorted_dirty = false;
    }
    int64_t anchor_rank;
    int64_t afirst = anchor_first(j, &anchor_rank);
    int64_t *counts = sw_arena_alloc(&det->arena, j->nranks * sizeof(*counts));
    int64_t *offsets = sw_arena_alloc(&det->arena, j->nranks * sizeof(*offsets));
    for (size_t i = 0; i < j->nranks; i++) {
        uint32_t ri;
        sw_imap_get(&j->rank_map, j->sorted[i], &ri);
        counts[i] = j->ranks[ri].win.n;
        offsets[i] = j->ranks[ri].first_ts - afirst;
    }
    /* Candidates up to the last suspect, in order. */
    titer_t it;
    if (use_horizon) {
        excl_sync(det, j);
        titer_begin_after(&it, det, j, j->excl_key);
    } else {
        titer_begin(&it, det, j);
    }
    size_t cap = 8, n = 0;
    sw_cand_t *cands = sw_arena_alloc(&det->arena, cap * sizeof(*cands));
    int64_t boundary = INT64_MAX;
    for (uint32_t x = titer_next(&it); x != NIL; x = titer_next(&it)) {
        const rank_t *r = &j->ranks[x];
        if (n >= 2 && r->c_rel > boundary) break;
        if (n == cap) {
            sw_cand_t *bigger = sw_arena_alloc(&det->arena, cap * 2 * sizeof(*cands));
            memcpy(bigger, cands, n * sizeof(*cands));
            cands = bigger;
            cap *= 2;
        }
        sw_cand_t *c = &cands[n++];
        c->rank = r->rank;
        c->spike_ts = r->c_spike_ts;
        c->aligned = (uint64_t)r->c_rel + (uint64_t)afirst;
        c->peak = r->c_peak;
        c->samples = r->c_samples;
        const sw_src_t *src = &j->srcs[r->c_src];
        c->has_session = src->session != 0;
        c->session = sw_intern_get(j->strs, src->session);
        c->has_source = true;
        c->host = sw_intern_get(j->strs, src->host);
        c->pid = src->pid;
        c->has_device_id = src->device_id != SW_SRC_UNSET;
        c->device_id = src->device_id;
        c->has_local_rank = src->local_rank != SW_SRC_UNSET;
        c->local_rank = src->local_rank;
        if (n == 2) boundary = r->c_rel;
    }
    sw_assemble_in_t in;
    memset(&in, 0, sizeof(in));
    in.has_job_id = j->has_job_id;
    in.job_id.ptr = j->job_id;
    in.job_id.len = j->job_id_len;
    in.world_size = job_world_size(j);
    in.ranks = j->sorted;
    in.counts = counts;
    in.offsets = offsets;
    in.n_ranks = j->nranks;
    in.anchor_rank = anchor_rank;
    in.median_ns = job_median(j);
    in.skew_multiplier = det->params.skew_note_multiplier;
    in.cands = cands;
    in.n_cands = n;
    in.n_cands_total = use_horizon ? cands_eff(j) : j->ncands;
    in.phase = j->phase;
    sw_assemble(&in, &det->arena, out);
    add_timelines(det, j, afirst, out);
}

static sw_record_t *emit(sw_detector_t *det, job_t *j, sw_action_t action, bool has_ts,
                         int64_t ts, int64_t cause_offset)
{
    sw_record_t *rec = &det->rec;
    build_analysis(det, j, action != SW_ACTION_SUMMARY, &rec->analysis);
    rec->resolve_reason = SW_RESOLVE_NONE;
    rec->resolve_rank = -1;
    rec->episode_open = j->open;
    rec->episode_confidence = j->episode > 0 ? j->trig_conf : -2;
    rec->action = action;
    rec->episode = j->episode;
    rec->revision = j->revision;
    rec->has_event_ts = has_ts;
    rec->event_timestamp_ns = has_ts ? ts : 0;
    rec->cause_offset = cause_offset;
    memset(&rec->source, 0, sizeof(rec->source));
    det->st.records[action]++;
    return rec;
}

/* ---- the verdict ------------------------------------------------------ */

static const int64_t *copy_i64s(sw_arena_t *a, const int64_t *v, size_t n)
{
    if (!n) return NULL;
    int64_t *c = sw_arena_alloc(a, n * sizeof(*c));
    memcpy(c, v, n * sizeof(*c));
    return c;
}

/* A deep copy of one suspect (strings, phase labels, timeline) in @p a. */
static void suspect_copy(sw_arena_t *a, const sw_suspect_t *in, sw_suspect_t *out)
{
    *out = *in;
    out->session_id = sw_arena_str(a, in->session_id);
    out->host = sw_arena_str(a, in->host);
    if (in->phase.n_paths) {
        sw_str_t *paths = sw_arena_alloc(a, in->phase.n_paths * sizeof(*paths));
        for (size_t i = 0; i < in->phase.n_paths; i++) paths[i] = sw_arena_str(a, in->phase.paths[i]);
        out->phase.paths = paths;
    } else {
        out->phase.paths = NULL;
    }
    out->phase.summary_path = sw_arena_str(a, in->phase.summary_path);
    out->phase.path = sw_arena_str(a, in->phase.path);
    out->phase.scope_id = sw_arena_str(a, in->phase.scope_id);
    out->phase.thread_name = sw_arena_str(a, in->phase.thread_name);
    out->timeline_aligned_ns = copy_i64s(a, in->timeline_aligned_ns, in->n_timeline);
    out->timeline_used = copy_i64s(a, in->timeline_used, in->n_timeline);
}

/* Mark (or unmark) the ranks of the verdict's suspects. */
void sw_det_verdict_mark(job_t *j, bool on)
{
    for (size_t i = 0; i < j->v_n; i++) {
        uint32_t ri;
        if (sw_imap_get(&j->rank_map, j->v_sus[i].rank, &ri)) j->ranks[ri].in_verdict = on;
    }
}

static void verdict_clear(job_t *j)
{
    sw_det_verdict_mark(j, false);
    sw_arena_reset(&j->v_arena);
    j->v_sus = NULL;
    j->v_n = 0;
    j->has_verdict = false;
    j->v_touched = false;
}

/* The record's onset and suspects become the episode's verdict. */
static void verdict_store(job_t *j, const sw_analysis_t *a)
{
    verdict_clear(j);
    j->has_verdict = true;
    j->v_onset = a->onset_ns;
    j->v_n = a->n_suspects;
    j->v_sus = a->n_suspects ? sw_arena_alloc(&j->v_arena, a->n_suspects * sizeof(*j->v_sus)) : NULL;
    for (size_t i = 0; i < a->n_suspects; i++) suspect_copy(&j->v_arena, &a->suspects[i], &j->v_sus[i]);
    sw_det_verdict_mark(j, true);
}

/* A verdict suspect (rank r, first spike t) is lost when A has no
 * candidate of rank r with first_spike_timestamp_ns <= t: its rank has no
 * candidate, or only one behind the horizon, or a later one. Only a
 * candidate change of a verdict rank (or a moved horizon key) can change
 * the answer, so it is re-read only then. @returns the lost rank, or -1. */
static int64_t verdict_lost(job_t *j)
{
    if (!j->v_touched) return -1;
    for (size_t i = 0; i < j->v_n; i++) {
        uint32_t ri;
        const sw_suspect_t *v = &j->v_sus[i];
        if (!sw_imap_get(&j->rank_map, v->rank, &ri)) return v->rank;
        const rank_t *r = &j->ranks[ri];
        if (!r->has_cand || r->c_rel <= j->excl_key || r->c_spike_ts > v->first_spike_timestamp_ns)
            return v->rank;
    }
    j->v_touched = false;
    return -1;
}

/* SPEC 6 step 5. */
static const sw_record_t *lifecycle(sw_detector_t *det, job_t *j, int64_t ts, int64_t off)
{
    excl_sync(det, j);
    bool onset = cands_eff(j) >= 2;
    if (!j->open) {
        if (!onset) return NULL;
        j->episode++;
        j->revision = 0;
        j->open = true;
        sig_reset(j);
        sig_refresh(det, j);
        /* The episode's severity is the trigger's, whatever follows. */
        j->trig_conf = -1;
        sw_record_t *rec = emit(det, j, SW_ACTION_TRIGGER, true, ts, off);
        j->trig_conf = rec->analysis.n_suspects ? (int)rec->analysis.suspects[0].confidence : -1;
        rec->episode_confidence = j->trig_conf;
        verdict_store(j, &rec->analysis);
        return rec;
    }
    int64_t lost = onset ? verdict_lost(j) : -1;
    if (!onset || lost >= 0) {
        j->revision++;
        j->open = false;
        sw_record_t *rec = emit(det, j, SW_ACTION_RESOLVE, true, ts, off);
        rec->resolve_reason = onset ? SW_RESOLVE_SUSPECT_LOST : SW_RESOLVE_ONSET_GONE;
        rec->resolve_rank = lost;
        /* The horizon moves past every candidate of A and the verdict. */
        uint64_t h = j->has_horizon ? j->horizon : 0;
        uint32_t last = cands_eff(j) ? t_last(j) : NIL;
        if (last != NIL) {
            uint64_t a = (uint64_t)j->ranks[last].c_rel + (uint64_t)anchor_first(j, NULL);
            if (a > h) h = a;
        }
        for (size_t i = 0; i < j->v_n; i++)
            if (j->v_sus[i].aligned_first_spike_timestamp_ns > h)
                h = j->v_sus[i].aligned_first_spike_timestamp_ns;
        j->has_horizon = true;
        j->horizon = h;
        j->excl_valid = false;
        /* The record says the verdict it closes; the verdict's memory stays
         * valid until the next trigger, after this record is consumed. */
        rec->analysis.has_onset = true;
        rec->analysis.onset_ns = j->v_onset;
        rec->analysis.suspects = j->v_sus;
        rec->analysis.n_suspects = j->v_n;
        sw_det_verdict_mark(j, false);
        j->v_touched = false;
        sig_reset(j);
        return rec;
    }
    if (!sig_refresh(det, j)) return NULL;
    j->revision++;
    sw_record_t *rec = emit(det, j, SW_ACTION_UPDATE, true, ts, off);
    verdict_store(j, &rec->analysis);
    return rec;
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
static void limit_error(char *errstr, size_t errstr_size, const char *a, int64_t v, const char *b,
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

sw_detector_t *sw_detect_new(sw_params_t params)
{
    sw_detector_t *det = sw_calloc(1, sizeof(*det));
    if (params.window_samples < 1) params.window_samples = 1;
    if (params.window_samples > UINT32_MAX / 4) params.window_samples = UINT32_MAX / 4;
    det->params = params;
    det->stale_ns = params.stale_ms > 0 ? params.stale_ms * 1000000 : INT64_MAX;
    det->rebuild_x = INT64_MIN;
    sw_arena_init(&det->arena);
    return det;
}

void sw_detect_destroy(sw_detector_t *det)
{
    if (!det) return;
    for (size_t i = 0; i < det->njobs; i++)
        if (det->jobs[i]) job_destroy(det->jobs[i]);
    free(det->jobs);
    free(det->jslots);
    free(det->stack);
    free(det->tmp_sig);
    free(det->tmp_rel);
    sw_arena_clear(&det->arena);
    free(det);
}

sw_err_t sw_detect_feed(sw_detector_t *det, const sw_event_t *ev, int64_t now_ms,
                        const sw_record_t **rec, char *errstr, size_t errstr_size)
{
    /* Without input offsets the arrival number stands in for them. */
    return sw_detect_feed_at(det, ev, now_ms, (int64_t)det->arrivals, rec, errstr, errstr_size);
}

/* max.ranks.per.job, or (0 = unlimited) the hard ceiling (*hard). */
int64_t sw_det_rank_limit(const sw_detector_t *det, bool *hard)
{
    int64_t max_ranks = det->params.max_ranks_per_job;
    *hard = max_ranks <= 0 || max_ranks > SW_WORLD_SIZE_MAX;
    return *hard ? SW_WORLD_SIZE_MAX : max_ranks;
}

sw_err_t sw_detect_feed_at(sw_detector_t *det, const sw_event_t *ev, int64_t now_ms,
                           int64_t offset, const sw_record_t **rec, char *errstr,
                           size_t errstr_size)
{
    det->arrivals++;
    *rec = NULL;
    bool sample = ev->kind == SW_EV_SAMPLE;
    bool hard;
    int64_t max_ranks = sw_det_rank_limit(det, &hard);
    if (sample && (ev->rank >= max_ranks || ev->world_size > max_ranks)) {
        det->st.limit_rejects++;
        bool ws = ev->world_size > max_ranks;
        limit_error(errstr, errstr_size, ws ? "world_size " : "rank ", ws ? ev->world_size : ev->rank,
                    hard ? " exceeds the largest supported world size (" : " exceeds max.ranks.per.job (",
                    max_ranks);
        return SW_ERR_LIMIT;
    }
    job_t *j = sw_det_jmap_find(det, ev->has_job_id, ev->job_id.ptr, ev->job_id.len);
    if (!j) {
        bool full = det->params.max_jobs > 0 && det->live_jobs >= (size_t)det->params.max_jobs;
        if ((full || det->pressure) && !evict_one(det)) {
            det->st.limit_rejects++;
            if (full)
                limit_error(errstr, errstr_size, "a new job would exceed max.jobs", -1, " (",
                            det->params.max_jobs);
            else
                limit_error(errstr, errstr_size,
                            "a new job would exceed max.memory.bytes (jobs tracked, each with two "
                            "ranks or more: ",
                            -1, "", (int64_t)det->live_jobs);
            return SW_ERR_LIMIT;
        }
        j = sw_det_job_create(det, ev, offset);
    }
    det->st.events++;
    j->last_ms = now_ms;
    j->last_off = offset;
    if (j->in_junk && j != det->junk_tail) { /* least recently active first */
        junk_del(det, j);
        junk_add(det, j);
    }
    if (!sample) {
        sw_phase_add(j->phase, ev);
        return SW_OK;
    }
    det->st.samples++;

    uint32_t ri;
    bool new_rank = false;
    if (!sw_imap_get(&j->rank_map, ev->rank, &ri)) {
        ri = sw_det_rank_create(det, j, ev->rank, offset);
        new_rank = true;
    }
    rank_t *r = &j->ranks[ri];
    uint32_t src = sw_det_src_get(j, r, ev);
    int64_t ts = ev->timestamp_ns;
    /* The phase index sees every event, duplicates included (SPEC 6); a
     * sample only extends its group's session end. */
    if (ev->has_session_id) {
        if (r->phase_grp == NIL) r->phase_grp = sw_phase_group(j->phase, ev->session_id, ev->rank);
        sw_phase_touch(j->phase, r->phase_grp, ts);
    }
    sw_win_ctx_t ctx = {j->srcs, j->strs, &j->gaps, &j->intervals};
    uint32_t n_before = r->win.n;
    /* Step 1 (duplicate) and 2 (insert) in one search: a duplicate leaves
     * the window untouched and stops here. */
    uint32_t cap_before = r->win.cap;
    sw_win_res_t wr = sw_win_insert(&r->win, &ctx, ts, ev->device_used_bytes, src, offset);
    if (r->win.cap != cap_before) j->win_bytes += sw_win_bytes(r->win.cap) - sw_win_bytes(cap_before);
    if (wr == SW_WIN_DUP) {
        det->st.duplicates++;
        return SW_OK;
    }
    bool first_changed = false;
    if (new_rank) {
        r->first_ts = r->newest_ts = ts;
    } else {
        if (ts < r->newest_ts) det->st.late++;
        if (ts < r->first_ts) {
            r->first_ts = ts;
            first_changed = true;
        }
        if (ts > r->newest_ts) r->newest_ts = ts;
    }
    if (wr == SW_WIN_TOO_OLD) det->st.too_old++;
    if (ev->world_size > 1) claim_add(j, ev->world_size);
    if (!j->has_newest || ts > j->newest_ts) {
        j->newest_ts = ts;
        j->has_newest = true;
    }
    j->has_sample = true;
    window_changed(j, n_before, r->win.n);
    /* Phase spans that closed before this rank's full window can no longer
     * be attributed (a later sample older than the window is too old). */
    if (r->phase_grp != NIL && sw_win_full(&r->win) && sw_phase_fold_due(j->phase, r->phase_grp))
        det->st.phase_dropped += sw_phase_fold(j->phase, ev->rank, r->win.slot[r->win.head].ts);
    if (r->win.n) sw_det_heap_update(j, ri, r->newest_ts);
    if (wr != SW_WIN_TOO_OLD || first_changed) sw_det_cand_refresh(det, j, ri);
    /* Step 3: staleness. */
    stale_sweep(det, j, offset);
    /* Steps 4-5. */
    *rec = lifecycle(det, j, ts, offset);
    return SW_OK;
}

void sw_detect_prefetch(sw_detector_t *det, const sw_event_t *ev)
{
    if (ev->kind != SW_EV_SAMPLE) return;
    job_t *j = sw_det_jmap_find(det, ev->has_job_id, ev->job_id.ptr, ev->job_id.len);
    uint32_t ri;
    if (!j || !sw_imap_get(&j->rank_map, ev->rank, &ri)) return;
    const rank_t *r = &j->ranks[ri];
    /* Reading r waits for its first line; everything after is issued
     * without waiting and lands while the current event is processed. */
    __builtin_prefetch((const char *)r + 64, 1);
    __builtin_prefetch((const char *)r + 128, 1);
    sw_win_prefetch(&r->win);
    if (r->phase_grp != NIL) __builtin_prefetch(sw_phase_group_addr(j->phase, r->phase_grp), 1);
    if (j->hpos[ri] != NIL) __builtin_prefetch(&j->heap[j->hpos[ri]], 1);
}

void sw_detect_finish(sw_detector_t *det, sw_record_cb cb, void *opaque)
{
    for (size_t i = 0; i < det->njobs; i++) {
        job_t *j = det->jobs[i];
        if (!j || !j->has_sample) continue;
        cb(opaque, emit(det, j, SW_ACTION_SUMMARY, false, 0, j->last_off));
    }
}

size_t sw_detect_expire(sw_detector_t *det, int64_t now_ms, int64_t idle_ms, sw_record_cb cb,
                        void *opaque)
{
    size_t expired = 0, k = 0;
    for (size_t i = 0; i < det->njobs; i++) {
        job_t *j = det->jobs[i];
        if (!j) continue;
        if (now_ms - j->last_ms >= idle_ms) {
            if (j->has_sample) cb(opaque, emit(det, j, SW_ACTION_SUMMARY, false, 0, j->last_off));
            junk_del(det, j);
            jmap_del(det, j);
            job_destroy(j);
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

void sw_detect_set_pressure(sw_detector_t *det, bool over_budget)
{
    det->pressure = over_budget;
}

size_t sw_detect_evict(sw_detector_t *det, size_t max)
{
    size_t n = 0;
    while (n < max && evict_one(det)) n++;
    return n;
}

void sw_detect_stats(const sw_detector_t *det, sw_detect_stats_t *st)
{
    *st = det->st;
    st->jobs = det->live_jobs;
    st->ranks = 0;
    st->retained = 0;
    st->bytes = sizeof(*det) + det->capjobs * sizeof(job_t *) + det->jcap * sizeof(job_t *) +
                det->arena.total + det->capstack * sizeof(uint32_t) +
                det->captmp * (sizeof(sig_ent_t) + sizeof(int64_t));
    for (size_t i = 0; i < det->njobs; i++) {
        const job_t *j = det->jobs[i];
        if (!j) continue;
        st->ranks += j->nranks;
        st->retained += j->retained;
        st->bytes += job_bytes(j);
    }
}

bool sw_detect_analysis(sw_detector_t *det, const char *job_id, sw_analysis_t *out)
{
    job_t *j = sw_det_jmap_find(det, job_id != NULL, job_id, job_id ? strlen(job_id) : 0);
    if (!j || !j->has_sample) return false;
    build_analysis(det, j, false, out);
    return true;
}

