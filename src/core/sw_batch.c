/*
 * Batch analysis (SPEC 3), a straight transcription of the reference:
 * select samples, pick the most common job_id, group by rank, align on the
 * anchor's first sample, find each rank's first qualifying spike, rank the
 * candidates. It is also the oracle the stream engine is tested against.
 * Pure: no I/O, no globals.
 */
#include "sw_batch.h"

#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_imap.h"
#include "sw_intern.h"
#include "sw_phase.h"
#include "sw_assemble.h"

/* Where a sample comes from (40 bytes): what a rank's samples repeat from
 * one to the next, kept once (sw_batch_t.srcs) and named by index. */
typedef struct bsrc_s {
    int64_t pid;
    int64_t interval_ms;
    int64_t device_id, local_rank; /* INT64_MIN when absent (shown, not analysed) */
    uint32_t host;                 /* interned */
    uint32_t session;              /* interned; 0 = null */
} bsrc_t;

/* A sample as added (32 bytes): what the analysis reads, in arrival
 * order (its index is its arrival); the rest is its source's. Every byte
 * of this array is a fresh page the kernel zeroes: at 72 bytes a sample
 * that zeroing was a fifth of analyze's CPU time. */
typedef struct bsample_s {
    int64_t ts;
    int64_t used;
    int32_t rank;       /* < SW_WORLD_SIZE_MAX */
    int32_t world_size; /* a claim of 1 or less as 1 (never counted) */
    uint32_t job;       /* interned; 0 = null */
    uint32_t src;       /* index in srcs */
} bsample_t;

/* A sample in the run's sorted copy (32 bytes): the sort keys and what the
 * per-rank pass reads; the rest is read from the added sample (arrival)
 * for the few spikes. skey orders sources as (pid, host) do: equal keys
 * for equal (pid, host). */
typedef struct ssample_s {
    int64_t ts;
    int64_t used;
    int32_t rank;
    int32_t world_size;
    uint32_t skey;
    uint32_t arrival;
} ssample_t;

/* An interned id and its string (the table's copy: it never moves). */
typedef struct cached_s {
    sw_str_t s;
    uint32_t id;
} cached_t;

/* The last sample of a rank: its interned host and session (id 0 = none
 * yet) and the phase group of (session, rank) (group 0 = none yet, else
 * the group's index + 1), so that a sample of a known (session, rank)
 * extends its session end without hashing anything. */
typedef struct rank_cache_s {
    cached_t host;
    cached_t session;
    int64_t rank;           /* of the group */
    uint32_t group_session; /* interned session of the group */
    uint32_t group;
    uint32_t src; /* the source of the last sample here (index + 1; 0 = none yet) */
} rank_cache_t;

struct sw_batch_s {
    sw_params_t params;
    sw_intern_t *strs;
    bsample_t *s;
    size_t n, cap;
    size_t s_map; /* bytes of s when it is of sw_huge_grow() (0: of malloc) */
    bsrc_t *srcs; /* the samples' sources */
    size_t nsrcs, capsrcs;
    size_t n_events;
    sw_phase_t *phase;
    uint64_t *counterless; /* counterless samples by interned job id (0: null job) */
    size_t ncounterless;   /* entries of counterless */
    /* Samples per interned job id ([id], id 0 unused) and the index of
     * each job's first sample; the most common job so far (ties: the first
     * seen) and how many jobs have samples. */
    size_t *jcount;
    uint32_t *jfirst;
    size_t njobs; /* entries of jcount and jfirst */
    uint32_t leader, distinct;
    int64_t max_rank;    /* of every sample; -1 = none */
    uint32_t last_job;   /* interned job_id of the last sample; 0 = none yet */
    sw_str_t last_job_s; /* its string (the table's copy) */
    /* What the last sample of each rank had (by rank mod RANK_CACHE): a
     * rank's samples repeat them. */
    rank_cache_t *rank_cache;
};

#define RANK_CACHE 4096 /* entries of rank_cache (a power of two) */

/* The id of s, compared first with the string of *c (what the same rank
 * had last time), hashed only when it differs. */
static inline uint32_t intern_cached(sw_batch_t *b, cached_t *c, sw_str_t s)
{
    if (c->id && c->s.len == s.len && sw_bytes_eq(c->s.ptr, s.ptr, s.len)) return c->id;
    c->id = sw_intern_add(b->strs, s);
    c->s = sw_intern_get(b->strs, c->id);
    return c->id;
}

/* A batch's samples nearly all carry one job_id: comparing with the last
 * one is cheaper than hashing it. */
static uint32_t intern_job(sw_batch_t *b, sw_str_t job)
{
    if (b->last_job && b->last_job_s.len == job.len &&
        sw_bytes_eq(b->last_job_s.ptr, job.ptr, job.len))
        return b->last_job;
    b->last_job = sw_intern_add(b->strs, job);
    b->last_job_s = sw_intern_get(b->strs, b->last_job);
    return b->last_job;
}

/* One more sample of job @p job (interned, not 0), the @p arrival-th: the
 * running most common job (ties: the first seen) of SPEC 3.1. */
static void count_job(sw_batch_t *b, uint32_t job, uint32_t arrival)
{
    if (job >= b->njobs) {
        size_t n = (size_t)job + 16;
        b->jcount = sw_reallocarray(b->jcount, n, sizeof(*b->jcount));
        b->jfirst = sw_reallocarray(b->jfirst, n, sizeof(*b->jfirst));
        memset(b->jcount + b->njobs, 0, (n - b->njobs) * sizeof(*b->jcount));
        memset(b->jfirst + b->njobs, 0, (n - b->njobs) * sizeof(*b->jfirst));
        b->njobs = n;
    }
    if (b->jcount[job]++ == 0) {
        b->jfirst[job] = arrival;
        b->distinct++;
    }
    uint32_t l = b->leader;
    if (!l || b->jcount[job] > b->jcount[l] ||
        (b->jcount[job] == b->jcount[l] && b->jfirst[job] < b->jfirst[l]))
        b->leader = job;
}

/* Free the sample array (from SAMPLES_HUGE bytes on, of sw_huge_grow()). */
static void free_samples(sw_batch_t *b)
{
    if (b->s_map) sw_huge_free(b->s, b->s_map);
    else free(b->s);
    b->s = NULL;
    b->s_map = 0;
}

/* Room for more samples: doubled. From SAMPLES_HUGE bytes on the array is
 * a block of sw_huge_grow() (huge pages; on Linux it grows without a copy,
 * where copying into a new block at each doubling wrote and zeroed as many
 * bytes again as the array holds). */
#define SAMPLES_HUGE ((size_t)4 << 20)
static void grow_samples(sw_batch_t *b)
{
    size_t cap = b->cap ? b->cap * 2 : 1024;
    size_t bytes = cap * sizeof(*b->s);
    if (bytes < SAMPLES_HUGE) {
        b->s = sw_reallocarray(b->s, cap, sizeof(*b->s));
        b->cap = cap;
        return;
    }
    if (b->s_map) {
        b->s = sw_huge_grow(b->s, &b->s_map, bytes);
    } else {
        size_t m = 0;
        bsample_t *s = sw_huge_grow(NULL, &m, bytes);
        if (b->n) memcpy(s, b->s, b->n * sizeof(*b->s));
        free(b->s);
        b->s = s;
        b->s_map = m;
    }
    b->cap = b->s_map / sizeof(*b->s);
}

sw_batch_t *sw_batch_new(sw_params_t params)
{
    sw_batch_t *b = sw_calloc(1, sizeof(*b));
    b->params = params;
    b->strs = sw_intern_new_keyed(params.hash_key);
    b->phase = sw_phase_new_keyed(params.hash_key);
    b->rank_cache = sw_calloc(RANK_CACHE, sizeof(*b->rank_cache));
    b->max_rank = -1;
    return b;
}

void sw_batch_destroy(sw_batch_t *b)
{
    if (!b) return;
    sw_intern_destroy(b->strs);
    sw_phase_destroy(b->phase);
    free_samples(b);
    free(b->srcs);
    free(b->counterless);
    free(b->rank_cache);
    free(b->jcount);
    free(b->jfirst);
    free(b);
}

size_t sw_batch_events(const sw_batch_t *b)
{
    return b->n_events;
}

sw_err_t sw_batch_add(sw_batch_t *b, const sw_event_t *ev, char *errstr, size_t errstr_size)
{
    if (ev->kind == SW_EV_SAMPLE &&
        (ev->world_size > SW_WORLD_SIZE_MAX || ev->rank >= SW_WORLD_SIZE_MAX)) {
        bool ws = ev->world_size > SW_WORLD_SIZE_MAX;
        sw_errfmt(errstr, errstr_size, "%s %lld exceeds the largest supported world size (%d)",
                  ws ? "world_size" : "rank", (long long)(ws ? ev->world_size : ev->rank),
                  SW_WORLD_SIZE_MAX);
        return SW_ERR_LIMIT;
    }
    if (ev->counterless) {
        /* Dropped like an invalid event, but counted for its job (SPEC 2). */
        uint32_t job = ev->has_job_id ? sw_intern_add(b->strs, ev->job_id) : 0;
        if (job >= b->ncounterless) {
            size_t n = (size_t)job + 16;
            b->counterless = sw_realloc(b->counterless, n * sizeof(*b->counterless));
            memset(b->counterless + b->ncounterless, 0,
                   (n - b->ncounterless) * sizeof(*b->counterless));
            b->ncounterless = n;
        }
        b->counterless[job]++;
        return SW_OK;
    }
    b->n_events++;
    if (ev->kind != SW_EV_SAMPLE) {
        /* A boundary in the session the rank's samples had: their group. */
        const rank_cache_t *rc = &b->rank_cache[(uint64_t)ev->rank & (RANK_CACHE - 1)];
        if (ev->has_session_id && rc->group && rc->rank == ev->rank &&
            rc->group_session == rc->session.id && rc->session.s.len == ev->session_id.len &&
            sw_bytes_eq(rc->session.s.ptr, ev->session_id.ptr, ev->session_id.len))
            sw_phase_add_to(b->phase, rc->group - 1, ev);
        else sw_phase_add(b->phase, ev);
        return SW_OK;
    }
    if (b->n == b->cap) grow_samples(b);
    bsample_t *s = &b->s[b->n];
    s->ts = ev->timestamp_ns;
    s->used = ev->device_used_bytes;
    s->rank = (int32_t)ev->rank;
    s->world_size = ev->world_size > 1 ? (int32_t)ev->world_size : 1;
    rank_cache_t *rc = &b->rank_cache[(uint64_t)ev->rank & (RANK_CACHE - 1)];
    uint32_t host = intern_cached(b, &rc->host, ev->host);
    s->job = ev->has_job_id ? intern_job(b, ev->job_id) : 0;
    uint32_t session = 0;
    if (ev->has_session_id) {
        /* What sw_phase_add() does for a sample (SPEC 5: it extends its
         * group's session end), the group looked up only when new. */
        session = intern_cached(b, &rc->session, ev->session_id);
        if (!rc->group || rc->rank != ev->rank || rc->group_session != session) {
            rc->group = sw_phase_group(b->phase, ev->session_id, ev->rank) + 1;
            rc->rank = ev->rank;
            rc->group_session = session;
        }
        sw_phase_touch(b->phase, rc->group - 1, ev->timestamp_ns);
    }
    int64_t dev = ev->device_id.set ? ev->device_id.value : INT64_MIN;
    int64_t lr = ev->local_rank.set ? ev->local_rank.value : INT64_MIN;
    /* The source of the last sample here, when this one has the same. */
    const bsrc_t *c = rc->src ? &b->srcs[rc->src - 1] : NULL;
    if (!c || c->host != host || c->session != session || c->pid != ev->pid ||
        c->interval_ms != ev->sampling_interval_ms || c->device_id != dev || c->local_rank != lr) {
        SW_GROW(b->srcs, b->nsrcs, b->capsrcs, 64);
        bsrc_t *o = &b->srcs[b->nsrcs++];
        o->pid = ev->pid;
        o->interval_ms = ev->sampling_interval_ms;
        o->device_id = dev;
        o->local_rank = lr;
        o->host = host;
        o->session = session;
        rc->src = (uint32_t)b->nsrcs;
    }
    s->src = rc->src - 1;
    if (s->job) count_job(b, s->job, (uint32_t)b->n);
    if (s->rank > b->max_rank) b->max_rank = s->rank;
    b->n++;
    return SW_OK;
}

/* Samples of one rank in (timestamp, pid, host) order, stable: skey
 * orders (pid, host). */
static int sample_cmp(const void *pa, const void *pb)
{
    const ssample_t *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    if (a->skey != b->skey) return a->skey < b->skey ? -1 : 1;
    return a->arrival < b->arrival ? -1 : a->arrival > b->arrival;
}

/* Sample i of src as the sorted copy has it (@p skey: by source). */
static inline void to_sorted(ssample_t *o, const bsample_t *src, size_t i, const uint32_t *skey)
{
    o->ts = src[i].ts;
    o->used = src[i].used;
    o->rank = src[i].rank;
    o->world_size = src[i].world_size;
    o->skey = skey[src[i].src];
    o->arrival = (uint32_t)i;
}

/* The samples of src to analyse (all, or with @p filter those of job
 * leader: @p n of them), sources replaced by their sort key (@p skey), in
 * sample_cmp order, in a new array (caller frees). @p maxr is at least
 * their largest rank. They arrive mostly in
 * time order per rank: when the ranks are dense enough, a stable counting
 * sort by rank (which keeps arrival order, the comparator's last key) and
 * then a check of each rank's run, sorted with sample_cmp only when out of
 * order. The result is the same as qsort with sample_cmp (a total order:
 * arrivals differ). Large arrays are asked for huge pages: a page fault
 * per 4 KiB of them cost analyze as much as its parsing. */
static ssample_t *samples_sorted(const bsample_t *src, size_t nsrc, bool filter, uint32_t leader,
                                 size_t n, int64_t maxr, const uint32_t *skey)
{
    size_t bytes = n * sizeof(ssample_t);
    ssample_t *out = bytes >= SW_HUGE_BYTES ? sw_malloc_huge(bytes) : sw_malloc(bytes ? bytes : 1);
    if (n < 2 || maxr < 0 || (uint64_t)maxr >= 4 * (uint64_t)n + 1024) {
        size_t k = 0;
        for (size_t i = 0; i < nsrc; i++) {
            if (filter && src[i].job != leader) continue;
            to_sorted(&out[k++], src, i, skey);
        }
        qsort(out, n, sizeof(*out), sample_cmp);
        return out;
    }
    size_t nr = (size_t)maxr + 1;
    size_t *start = sw_calloc(nr + 1, sizeof(*start));
    for (size_t i = 0; i < nsrc; i++)
        if (!filter || src[i].job == leader) start[src[i].rank + 1]++;
    for (size_t r = 0; r < nr; r++) start[r + 1] += start[r];
    size_t *at = sw_malloc(nr * sizeof(*at));
    memcpy(at, start, nr * sizeof(*at));
    for (size_t i = 0; i < nsrc; i++) {
        if (filter && src[i].job != leader) continue;
        to_sorted(&out[at[src[i].rank]++], src, i, skey);
    }
    for (size_t r = 0; r < nr; r++) {
        size_t a = start[r], b = start[r + 1];
        for (size_t i = a + 1; i < b; i++)
            if (sample_cmp(&out[i - 1], &out[i]) > 0) {
                qsort(out + a, b - a, sizeof(*out), sample_cmp);
                break;
            }
    }
    free(at);
    free(start);
    return out;
}

typedef struct host_ord_s {
    sw_str_t s;
    uint32_t id;
} host_ord_t;

static int host_ord_cmp(const void *pa, const void *pb)
{
    return sw_str_cmp(((const host_ord_t *)pa)->s, ((const host_ord_t *)pb)->s);
}

/* A source in (pid, host order) order. */
typedef struct src_ord_s {
    int64_t pid;
    uint32_t host; /* sort order */
    uint32_t src;
} src_ord_t;

static int src_ord_cmp(const void *pa, const void *pb)
{
    const src_ord_t *a = pa, *b = pb;
    if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
    if (a->host != b->host) return a->host < b->host ? -1 : 1;
    return 0;
}

/* Sort key of each source (caller frees): sources of the same (pid,
 * host) get the same key, the keys in (pid, host string) order. */
static uint32_t *source_keys(const sw_batch_t *b)
{
    /* Hosts compare as strings: replace ids by their sorted order. */
    uint32_t nh = sw_intern_count(b->strs);
    host_ord_t *ho = sw_malloc((size_t)nh * sizeof(*ho) + 1);
    uint32_t *order = sw_calloc((size_t)nh + 1, sizeof(*order));
    for (uint32_t id = 1; id <= nh; id++) {
        ho[id - 1].s = sw_intern_get(b->strs, id);
        ho[id - 1].id = id;
    }
    qsort(ho, nh, sizeof(*ho), host_ord_cmp);
    for (uint32_t k = 0; k < nh; k++) order[ho[k].id] = k;
    free(ho);
    src_ord_t *so = sw_malloc(b->nsrcs * sizeof(*so) + 1);
    for (size_t i = 0; i < b->nsrcs; i++) {
        so[i].pid = b->srcs[i].pid;
        so[i].host = order[b->srcs[i].host];
        so[i].src = (uint32_t)i;
    }
    free(order);
    qsort(so, b->nsrcs, sizeof(*so), src_ord_cmp);
    uint32_t *skey = sw_malloc(b->nsrcs * sizeof(*skey) + 1);
    uint32_t k = 0;
    for (size_t i = 0; i < b->nsrcs; i++) {
        if (i && src_ord_cmp(&so[i - 1], &so[i]) != 0) k++;
        skey[so[i].src] = k;
    }
    free(so);
    return skey;
}

static int cand_qsort_cmp(const void *a, const void *b)
{
    return sw_cand_cmp(a, b);
}

/* The k-th smallest of v[0..n) (0-based), v reordered so that v[k] holds
 * it, everything before it is <= and everything after it >= (Hoare's
 * selection with a median-of-three pivot; O(n) expected). */
static int64_t select_kth(int64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t a = v[lo], b = v[mid], c = v[hi];
        int64_t pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t i = lo, j = hi;
        for (;;) {
            while (v[i] < pivot) i++;
            while (pivot < v[j]) j--;
            if (i >= j) break;
            int64_t t = v[i];
            v[i] = v[j];
            v[j] = t;
            i++;
            j--;
        }
        /* v[lo..j] <= pivot <= v[j+1..hi] */
        if (k <= j) hi = j;
        else lo = j + 1;
    }
    return v[k];
}

/* Median of SPEC 3.4 of v[0..n) times @p scale (> 0), v reordered in
 * place: the two middle order statistics by selection, no full sort.
 * Scaling keeps the order, so the values are selected unscaled (the
 * intervals in ms) and only the two middle ones scaled, in 128 bits
 * (in ns they can exceed 64 bits). */
static sw_i128 median_scaled(int64_t *v, size_t n, int64_t scale)
{
    if (!n) return 0;
    size_t k = (n - 1) / 2;
    int64_t lo = select_kth(v, n, k);
    int64_t hi = lo;
    if (n % 2 == 0) { /* the smallest of what lies above position k */
        hi = v[k + 1];
        for (size_t i = k + 2; i < n; i++)
            if (v[i] < hi) hi = v[i];
    }
    return sw_median_of((sw_i128)lo * scale, (sw_i128)hi * scale, n);
}

/* First qualifying spike of one rank's ordered samples (the reference's
 * _find_rank_spike_candidate). @returns the spike's index, or n for none. */
static size_t find_candidate(const ssample_t *s, size_t n, const sw_params_t *p, int64_t offset,
                             sw_cand_t *c)
{
    if (n < 2) return n;
    int64_t max_used = s[0].used;
    for (size_t i = 1; i < n; i++)
        if (s[i].used > max_used) max_used = s[i].used;
    int64_t threshold;
    if (!sw_spike_threshold(max_used, p->spike_min_bytes, p->spike_fraction, &threshold)) return n;
    int64_t cum = 0, steps = 0;
    for (size_t i = 1; i < n; i++) {
        int64_t delta = s[i].used - s[i - 1].used;
        if (delta <= 0) {
            cum = 0;
            steps = 0;
            continue;
        }
        cum += delta;
        steps++;
        if (cum < threshold) continue;
        c->rank = s[i].rank;
        c->spike_ts = s[i].ts;
        c->aligned = (uint64_t)s[i].ts - (uint64_t)offset;
        c->peak = cum;
        c->samples = steps;
        return i;
    }
    return n;
}

void sw_batch_run(sw_batch_t *b, sw_arena_t *arena, sw_analysis_t *out)
{
    static const char *const k_none = "No telemetry events were provided.";
    static const char *const k_ignored = "Ignored non-sample events during cross-rank analysis.";
    static const char *const k_nosample =
        "No sample telemetry events were available for distributed analysis.";
    static const char *const k_multi =
        "Multiple job_id values were observed; filtering to the most common value.";
    const char *pre[2];
    size_t npre = 0;

    memset(out, 0, sizeof(*out));
    out->anchor_rank = -1;
    if (b->n_events == 0 || b->n == 0) {
        /* No job was chosen: every counterless sample of the input counts. */
        uint64_t skipped = 0;
        for (size_t i = 0; i < b->ncounterless; i++) skipped += b->counterless[i];
        sw_str_t *notes = sw_arena_alloc(arena, 3 * sizeof(*notes));
        size_t nn = 0;
        if (b->n_events == 0) notes[nn++] = sw_str(k_none);
        else notes[nn++] = sw_str(k_ignored);
        notes[nn++] = sw_str(k_nosample);
        if (skipped) {
            sw_buf_t tmp;
            sw_buf_init(&tmp);
            notes[nn++] = sw_counterless_note(arena, &tmp, skipped);
            sw_buf_clear(&tmp);
        }
        out->notes = notes;
        out->n_notes = nn;
        return;
    }
    if (b->n != b->n_events) pre[npre++] = k_ignored;

    /* Most common job_id among samples (counted as they came); ties go to
     * the first seen. */
    uint32_t leader = b->leader;
    bool filter = b->distinct > 1;
    if (filter) pre[npre++] = k_multi;

    uint32_t *skey = source_keys(b);
    size_t n = filter ? b->jcount[leader] : b->n;
    ssample_t *s = samples_sorted(b->s, b->n, filter, leader, n, b->max_rank, skey);
    free(skey);

    /* One pass over the ranks in ascending order, each rank's samples read
     * while they are in cache: its group, the world size claims, the
     * positive gaps of the median interval, its alignment offset and its
     * candidate. The anchor is the first rank (rank 0 when present). */
    size_t capg = b->max_rank >= 0 && (uint64_t)b->max_rank < n ? (size_t)b->max_rank + 1 : n;
    int64_t *ranks = sw_arena_alloc(arena, capg * sizeof(*ranks));
    int64_t *counts = sw_arena_alloc(arena, capg * sizeof(*counts));
    int64_t *offsets = sw_arena_alloc(arena, capg * sizeof(*offsets));
    sw_cand_t *cands = sw_arena_alloc(arena, capg * sizeof(*cands));
    size_t ngroups = 0, nc = 0;

    /* World size: most common claim > 1 (first seen wins ties), at least
     * the observed max rank + 1. */
    sw_imap_t claims;
    sw_imap_init(&claims);
    size_t *ccount = sw_calloc(n + 1, sizeof(*ccount));
    uint32_t *cfirst = sw_calloc(n + 1, sizeof(*cfirst));
    int64_t *cvalue = sw_calloc(n + 1, sizeof(*cvalue));
    uint32_t nclaims = 0;
    uint32_t last_ci = UINT32_MAX; /* the claim of the last sample: they repeat */
    int64_t *gaps = sw_malloc(n * sizeof(*gaps));
    size_t nv = 0;
    int64_t anchor_ts = s[0].ts;
    for (size_t i = 0; i < n;) {
        size_t a = i;
        int64_t rank = s[a].rank;
        for (; i < n && s[i].rank == rank; i++) {
            if (i > a && s[i].ts - s[i - 1].ts > 0) gaps[nv++] = s[i].ts - s[i - 1].ts;
            if (s[i].world_size <= 1) continue;
            uint32_t ci = last_ci;
            if (ci != UINT32_MAX && cvalue[ci] == s[i].world_size) {
                if (s[i].arrival < cfirst[ci]) cfirst[ci] = s[i].arrival;
            } else if (!sw_imap_get(&claims, s[i].world_size, &ci)) {
                ci = nclaims++;
                cvalue[ci] = s[i].world_size;
                cfirst[ci] = s[i].arrival;
                sw_imap_put(&claims, s[i].world_size, ci);
            } else if (s[i].arrival < cfirst[ci]) {
                cfirst[ci] = s[i].arrival;
            }
            ccount[ci]++;
            last_ci = ci;
        }
        size_t g = ngroups++;
        ranks[g] = rank;
        counts[g] = (int64_t)(i - a);
        offsets[g] = s[a].ts - anchor_ts;
        sw_cand_t *c = &cands[nc];
        size_t at = find_candidate(&s[a], i - a, &b->params, offsets[g], c);
        if (at == i - a) continue;
        const bsrc_t *spike = &b->srcs[b->s[s[a + at].arrival].src];
        c->has_session = spike->session != 0;
        c->session = sw_intern_get(b->strs, spike->session);
        c->has_source = true;
        c->host = sw_intern_get(b->strs, spike->host);
        c->pid = spike->pid;
        c->has_device_id = spike->device_id != INT64_MIN;
        c->device_id = spike->device_id;
        c->has_local_rank = spike->local_rank != INT64_MIN;
        c->local_rank = spike->local_rank;
        nc++;
    }
    int64_t declared = 1;
    uint32_t best = UINT32_MAX;
    for (uint32_t ci = 0; ci < nclaims; ci++)
        if (best == UINT32_MAX || ccount[ci] > ccount[best] ||
            (ccount[ci] == ccount[best] && cfirst[ci] < cfirst[best]))
            best = ci;
    if (best != UINT32_MAX) declared = cvalue[best];
    sw_imap_clear(&claims);
    free(ccount);
    free(cfirst);
    free(cvalue);
    int64_t observed = ranks[ngroups - 1] + 1;
    int64_t world_size = declared > observed ? declared : observed;
    size_t anchor_g = 0;

    /* Median sampling interval. */
    sw_i128 median;
    if (nv) {
        median = median_scaled(gaps, nv, 1);
    } else { /* the declared intervals, in ns */
        int64_t *vals = sw_malloc(n * sizeof(*vals));
        for (size_t i = 0; i < n; i++) {
            int64_t iv = b->srcs[b->s[s[i].arrival].src].interval_ms;
            if (iv > 0) vals[nv++] = iv;
        }
        median = median_scaled(vals, nv, 1000000);
        free(vals);
    }
    free(gaps);

    qsort(cands, nc, sizeof(*cands), cand_qsort_cmp);

    sw_assemble_in_t in;
    memset(&in, 0, sizeof(in));
    in.has_job_id = leader != 0;
    in.job_id = sw_intern_get(b->strs, leader);
    in.world_size = world_size;
    in.ranks = ranks;
    in.counts = counts;
    in.offsets = offsets;
    in.n_ranks = ngroups;
    in.anchor_rank = ranks[anchor_g];
    in.median_ns = median;
    in.skew_multiplier = b->params.skew_note_multiplier;
    in.cands = cands;
    in.n_cands = nc;
    in.n_cands_total = nc;
    in.phase = b->phase;
    in.pre_notes = pre;
    in.n_pre_notes = npre;
    in.counterless = leader < b->ncounterless ? b->counterless[leader] : 0;
    sw_assemble(&in, arena, out);
    free(s);
}
