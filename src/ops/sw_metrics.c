/*
 * The metrics registry (see sw_metrics.h). Scalars are an array of atomics
 * indexed by sw_metric_t; one table (sw_metrics_families.c) gives every
 * exported family its name, type, help text and where its value lives, and
 * the renderer walks that table. Labelled series sit in small sorted tables
 * under the mutex; their values are atomics, so updates through a series
 * pointer never lock.
 */
#include "sw_metrics.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sw_alloc.h"
#include "sw_analysis.h"
#include "sw_log.h"
#include "sw_metrics_hosts.h"
#include "sw_metrics_int.h"
#include "sw_redact.h"

static const char *const k_type_names[] = {"counter", "gauge", "gauge", "histogram"};

/* Labelled families with a dynamic label set. */
enum { FAM_EVENTS_IN, FAM_LAG, FAM_MISKEYED, FAM_SKIPPED, FAM__CNT };

/* Histogram bucket upper bounds in nanoseconds, and as rendered. */
#define N_BOUNDS 13
#define N_BUCKETS (N_BOUNDS + 1)
static const uint64_t k_bound_ns[N_BOUNDS] = {1000,    2500,     5000,     10000,  25000,
                                              50000,   100000,   250000,   500000, 1000000,
                                              2500000, 10000000, 100000000};
static const char *const k_bound_le[N_BUCKETS] = {
    "1e-06",   "2.5e-06", "5e-06", "1e-05",  "2.5e-05", "5e-05", "0.0001",
    "0.00025", "0.0005",  "0.001", "0.0025", "0.01",    "0.1",   "+Inf"};

/* Request histogram bounds (Prometheus' default buckets), ns and as rendered. */
#define N_REQ_BOUNDS 11
#define N_REQ_BUCKETS (N_REQ_BOUNDS + 1)
static const uint64_t k_req_bound_ns[N_REQ_BOUNDS] = {
    5000000,   10000000,   25000000,    50000000,    100000000,   250000000,
    500000000, 1000000000, 2500000000u, 5000000000u, 10000000000u};
static const char *const k_req_le[N_REQ_BUCKETS] = {
    "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"};
static const char *const k_sink_names[SW_METRICS_SINKS] = {"alertmanager", "pagerduty", "webhook"};

/* Alert latency bounds, ms and as rendered. */
#define N_ALERT_BOUNDS 12
#define N_ALERT_BUCKETS (N_ALERT_BOUNDS + 1)
static const int64_t k_alert_bound_ms[N_ALERT_BOUNDS] = {10,   25,   50,   100,   250,   500,
                                                         1000, 2500, 5000, 10000, 30000, 60000};
static const char *const k_alert_le[N_ALERT_BUCKETS] = {
    "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60", "+Inf"};

/* One of the two shards of the histogram; count is raised last. */
typedef struct hshard_s {
    _Atomic uint64_t bucket[N_BUCKETS]; /* observations per bucket (not cumulative) */
    _Atomic uint64_t sum_ns;            /* sum of observations, ns */
    _Atomic uint64_t count;             /* observations completed in this shard */
} hshard_t;

#define HOT_BIT (UINT64_C(1) << 63)

struct sw_metrics_series_s {
    _Atomic uint64_t value; /* counter, or int64 gauge bits */
    int fam;                /* FAM_* */
    char *topic;
    const char *stage; /* events_in: "forward" or "engine" (static); else NULL */
    int32_t partition; /* -1 for events_in and miskeyed */
    int refs;          /* lag references (mutex) */
    char *labels;      /* rendered pairs, e.g. topic="a",partition="3" */
};

typedef struct family_s {
    sw_metrics_series_t **v; /* sorted by topic, partition */
    size_t n, cap;
} family_t;

struct sw_metrics_s {
    _Atomic uint64_t val[SW_M__CNT]; /* counters; gauges as int64 or double bits */
    /* notify's request histogram: one writer (the daemon thread); the count
     * is the sum of the buckets, so le="+Inf" always equals _count. */
    _Atomic uint64_t req_bucket[SW_METRICS_SINKS][N_REQ_BUCKETS];
    _Atomic uint64_t req_sum_ns[SW_METRICS_SINKS];
    /* run's alert latency histogram: one writer (the daemon's main thread);
     * the count is the sum of the buckets. */
    _Atomic uint64_t alert_bucket[N_ALERT_BUCKETS];
    _Atomic uint64_t alert_sum_ms;
    _Atomic bool notify;     /* notify's registry: render its families only */
    _Atomic bool registry;   /* a schema registry is configured */
    _Atomic bool ship;       /* ship's registry: render its families only */
    mtype_t type[SW_M__CNT]; /* from sw_metrics_desc */
    /* Histogram, two shards (as Prometheus' Go client): observers add to
     * the hot shard; a reader flips the hot bit, waits until the observers
     * that started before the flip are done with the now cold shard, reads
     * it and folds it into the hot one. Observers never wait. */
    _Atomic uint64_t hist_started; /* bit 63: hot shard; below: observations begun */
    hshard_t shard[2];
    _Atomic int64_t heartbeat_ms; /* monotonic; INT64_MIN before the first */
    _Atomic bool assigned;
    _Atomic int64_t total_lag;     /* messages; negative: unknown */
    _Atomic int64_t out_oldest_ms; /* monotonic; 0: no record waits for delivery */
    _Atomic bool out_queue_full;   /* the producer's queue is full now */
    pthread_mutex_t lock;          /* families and histogram reads */
    family_t fam[FAM__CNT];
    sw_hosts_t *hosts; /* repeat offenders (mutex) */
};

/* ---- scalars --------------------------------------------------------- */

static uint64_t dbits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof(u));
    return u;
}

static double bitsd(uint64_t u)
{
    double v;
    memcpy(&v, &u, sizeof(v));
    return v;
}

sw_metrics_t *sw_metrics_new(void)
{
    sw_metrics_t *m = sw_calloc(1, sizeof(*m));
    bool seen[SW_M__CNT] = {false};
    for (size_t i = 0; i < sw_metrics_ndesc; i++) {
        const desc_t *d = &sw_metrics_desc[i];
        if (d->src != SRC_SCALAR) continue;
        /* A table error is a programming error: every id exactly once. */
        assert(d->id >= 0 && d->id < SW_M__CNT && !seen[d->id]);
        seen[d->id] = true;
        m->type[d->id] = d->type;
    }
    (void)seen; /* only read by the assert: a Release build (NDEBUG) still compiles */
    for (int id = 0; id < SW_M__CNT; id++) {
        assert(seen[id]);
        atomic_init(&m->val[id], m->type[id] == MT_GAUGE_DOUBLE ? dbits(0.0) : 0);
    }
    atomic_init(&m->hist_started, 0);
    for (int s = 0; s < 2; s++) {
        for (int b = 0; b < N_BUCKETS; b++) atomic_init(&m->shard[s].bucket[b], 0);
        atomic_init(&m->shard[s].sum_ns, 0);
        atomic_init(&m->shard[s].count, 0);
    }
    atomic_init(&m->heartbeat_ms, INT64_MIN);
    atomic_init(&m->assigned, false);
    atomic_init(&m->total_lag, -1);
    atomic_init(&m->notify, false);
    atomic_init(&m->registry, false);
    atomic_init(&m->ship, false);
    for (int b = 0; b < N_ALERT_BUCKETS; b++) atomic_init(&m->alert_bucket[b], 0);
    atomic_init(&m->alert_sum_ms, 0);
    atomic_init(&m->out_oldest_ms, 0);
    atomic_init(&m->out_queue_full, false);
    pthread_mutex_init(&m->lock, NULL);
    m->hosts = sw_hosts_new(SW_METRICS_HOSTS_DEFAULT);
    sw_metrics_set(m, SW_M_UP, 1);
    sw_metrics_set(m, SW_M_BUILD_INFO, 1);
    sw_metrics_set_double(m, SW_M_START_TIME, ((double)sw_wall_ms() / 1000.0));
    return m;
}

static void series_free(sw_metrics_series_t *s)
{
    free(s->topic);
    free(s->labels);
    free(s);
}

void sw_metrics_destroy(sw_metrics_t *m)
{
    if (!m) return;
    for (int f = 0; f < FAM__CNT; f++) {
        for (size_t i = 0; i < m->fam[f].n; i++) series_free(m->fam[f].v[i]);
        free(m->fam[f].v);
    }
    sw_hosts_destroy(m->hosts);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

void sw_metrics_add(sw_metrics_t *m, sw_metric_t id, uint64_t n)
{
    assert(id >= 0 && id < SW_M__CNT && m->type[id] == MT_COUNTER);
    atomic_fetch_add_explicit(&m->val[id], n, memory_order_relaxed);
}

void sw_metrics_set(sw_metrics_t *m, sw_metric_t id, int64_t v)
{
    assert(id >= 0 && id < SW_M__CNT && m->type[id] == MT_GAUGE);
    atomic_store_explicit(&m->val[id], (uint64_t)v, memory_order_relaxed);
}

void sw_metrics_set_double(sw_metrics_t *m, sw_metric_t id, double v)
{
    assert(id >= 0 && id < SW_M__CNT && m->type[id] == MT_GAUGE_DOUBLE);
    atomic_store_explicit(&m->val[id], dbits(v), memory_order_relaxed);
}

/* The registry is never defined const: readers cast it away to reach the
 * atomics and the mutex; nothing observable changes. */
static sw_metrics_t *unconst(const sw_metrics_t *m)
{
    return (sw_metrics_t *)m;
}

static double scalar_value(sw_metrics_t *m, int id)
{
    uint64_t u = atomic_load_explicit(&m->val[id], memory_order_relaxed);
    switch (m->type[id]) {
    case MT_COUNTER: return (double)u;
    case MT_GAUGE: return (double)(int64_t)u;
    default: return bitsd(u);
    }
}

double sw_metrics_get(const sw_metrics_t *m, sw_metric_t id)
{
    assert(id >= 0 && id < SW_M__CNT);
    return scalar_value(unconst(m), id);
}

/* ---- labelled series ------------------------------------------------- */

static void put_escaped(sw_buf_t *out, const char *text)
{
    char *safe = sw_redact_dup(text); /* no URL credentials in a label */
    for (const char *s = safe; *s; s++) {
        if (*s == '\\') sw_buf_puts(out, "\\\\");
        else if (*s == '"') sw_buf_puts(out, "\\\"");
        else if (*s == '\n') sw_buf_puts(out, "\\n");
        else sw_buf_putc(out, *s);
    }
    free(safe);
}

static int series_cmp(const sw_metrics_series_t *s, const char *topic, const char *stage,
                      int32_t partition)
{
    int c = strcmp(s->topic, topic);
    if (c) return c;
    c = strcmp(s->stage ? s->stage : "", stage ? stage : "");
    if (c) return c;
    return (s->partition > partition) - (s->partition < partition);
}

/* Find or create a series; caller holds the mutex. */
static sw_metrics_series_t *family_get(sw_metrics_t *m, int fam, const char *topic,
                                       const char *stage, int32_t partition)
{
    family_t *f = &m->fam[fam];
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = series_cmp(f->v[mid], topic, stage, partition);
        if (c == 0) return f->v[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    sw_metrics_series_t *s = sw_calloc(1, sizeof(*s));
    s->fam = fam;
    s->topic = sw_strdup(topic);
    s->stage = stage;
    s->partition = partition;
    atomic_init(&s->value, fam == FAM_LAG ? (uint64_t)INT64_C(-1) : 0);
    sw_buf_t lb;
    sw_buf_init(&lb);
    sw_buf_puts(&lb, "topic=\"");
    put_escaped(&lb, topic);
    sw_buf_putc(&lb, '"');
    if (stage) sw_buf_printf(&lb, ",stage=\"%s\"", stage);
    if (fam == FAM_LAG || fam == FAM_SKIPPED)
        sw_buf_printf(&lb, ",partition=\"%d\"", (int)partition);
    s->labels = sw_memdup0(lb.data, lb.len);
    sw_buf_clear(&lb);
    SW_GROW(f->v, f->n, f->cap, 8);
    memmove(&f->v[lo + 1], &f->v[lo], (f->n - lo) * sizeof(*f->v));
    f->v[lo] = s;
    f->n++;
    return s;
}

sw_metrics_series_t *sw_metrics_events_in(sw_metrics_t *m, const char *topic, bool forward)
{
    pthread_mutex_lock(&m->lock);
    sw_metrics_series_t *s = family_get(m, FAM_EVENTS_IN, topic, forward ? "forward" : "engine",
                                        -1);
    pthread_mutex_unlock(&m->lock);
    return s;
}

sw_metrics_series_t *sw_metrics_miskeyed(sw_metrics_t *m, const char *topic)
{
    pthread_mutex_lock(&m->lock);
    sw_metrics_series_t *s = family_get(m, FAM_MISKEYED, topic, NULL, -1);
    pthread_mutex_unlock(&m->lock);
    return s;
}

void sw_metrics_input_skipped(sw_metrics_t *m, const char *topic, int32_t partition, uint64_t n)
{
    if (!m) return;
    pthread_mutex_lock(&m->lock);
    sw_metrics_series_t *s = family_get(m, FAM_SKIPPED, topic, NULL, partition);
    pthread_mutex_unlock(&m->lock);
    atomic_fetch_add_explicit(&s->value, n, memory_order_relaxed);
}

sw_metrics_series_t *sw_metrics_lag_add(sw_metrics_t *m, const char *topic, int32_t partition)
{
    pthread_mutex_lock(&m->lock);
    sw_metrics_series_t *s = family_get(m, FAM_LAG, topic, NULL, partition);
    s->refs++;
    pthread_mutex_unlock(&m->lock);
    return s;
}

void sw_metrics_lag_remove(sw_metrics_t *m, sw_metrics_series_t *s)
{
    if (!s) return;
    assert(s->fam == FAM_LAG);
    pthread_mutex_lock(&m->lock);
    if (--s->refs == 0) {
        family_t *f = &m->fam[FAM_LAG];
        for (size_t i = 0; i < f->n; i++) {
            if (f->v[i] != s) continue;
            memmove(&f->v[i], &f->v[i + 1], (f->n - i - 1) * sizeof(*f->v));
            f->n--;
            break;
        }
        series_free(s);
    }
    pthread_mutex_unlock(&m->lock);
}

void sw_metrics_series_add(sw_metrics_series_t *s, uint64_t n)
{
    assert(s->fam == FAM_EVENTS_IN || s->fam == FAM_MISKEYED);
    atomic_fetch_add_explicit(&s->value, n, memory_order_relaxed);
}

void sw_metrics_series_set(sw_metrics_series_t *s, int64_t v)
{
    assert(s->fam == FAM_LAG);
    atomic_store_explicit(&s->value, (uint64_t)v, memory_order_relaxed);
}

int64_t sw_metrics_series_get(const sw_metrics_series_t *s)
{
    return (int64_t)atomic_load_explicit(&((sw_metrics_series_t *)s)->value, memory_order_relaxed);
}

/* ---- histogram ------------------------------------------------------- */

uint64_t sw_metrics_now_ns(void)
{
    return (uint64_t)sw_clock_ns();
}

void sw_metrics_observe_ns(sw_metrics_t *m, uint64_t ns)
{
    int b = 0;
    while (b < N_BOUNDS && ns > k_bound_ns[b]) b++;
    /* acq_rel: pairs with the reader's flip, so a shard the reader zeroed
     * is seen zeroed before we add to it. */
    uint64_t n = atomic_fetch_add_explicit(&m->hist_started, 1, memory_order_acq_rel);
    hshard_t *sh = &m->shard[n >> 63];
    atomic_fetch_add_explicit(&sh->bucket[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&sh->sum_ns, ns, memory_order_relaxed);
    /* release: a reader that sees the count sees the bucket and the sum. */
    atomic_fetch_add_explicit(&sh->count, 1, memory_order_release);
}

void sw_metrics_proc_add(sw_metrics_proc_t *acc, uint64_t ns)
{
    int b = 0;
    while (b < N_BOUNDS && ns > k_bound_ns[b]) b++;
    acc->bucket[b]++;
    acc->sum_ns += ns;
    acc->count++;
}

void sw_metrics_observe_proc(sw_metrics_t *m, sw_metrics_proc_t *acc)
{
    _Static_assert(SW_METRICS_PROC_BUCKETS == N_BUCKETS, "bucket counts differ");
    if (!acc->count) return;
    /* As sw_metrics_observe_ns(), for count observations at once: begun
     * together, completed together. */
    uint64_t n = atomic_fetch_add_explicit(&m->hist_started, acc->count, memory_order_acq_rel);
    hshard_t *sh = &m->shard[n >> 63];
    for (int b = 0; b < N_BUCKETS; b++)
        if (acc->bucket[b])
            atomic_fetch_add_explicit(&sh->bucket[b], acc->bucket[b], memory_order_relaxed);
    atomic_fetch_add_explicit(&sh->sum_ns, acc->sum_ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&sh->count, acc->count, memory_order_release);
    memset(acc, 0, sizeof(*acc));
}

/* A consistent snapshot of all observations so far. Caller holds the
 * mutex (one reader at a time). Waits only for observations in flight. */
static void hist_snapshot(sw_metrics_t *m, uint64_t bucket[N_BUCKETS], uint64_t *sum_ns,
                          uint64_t *count)
{
    uint64_t n = atomic_fetch_add_explicit(&m->hist_started, HOT_BIT, memory_order_acq_rel) +
                 HOT_BIT;
    uint64_t started = n & ~HOT_BIT;
    hshard_t *hot = &m->shard[n >> 63];
    hshard_t *cold = &m->shard[(n >> 63) ^ 1];
    /* The cold shard holds every observation begun before the flip (the
     * previous read folded everything into it while it was hot). */
    while (atomic_load_explicit(&cold->count, memory_order_acquire) != started) sched_yield();
    for (int b = 0; b < N_BUCKETS; b++) {
        bucket[b] = atomic_load_explicit(&cold->bucket[b], memory_order_relaxed);
        atomic_fetch_add_explicit(&hot->bucket[b], bucket[b], memory_order_relaxed);
        atomic_store_explicit(&cold->bucket[b], 0, memory_order_relaxed);
    }
    *sum_ns = atomic_load_explicit(&cold->sum_ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&hot->sum_ns, *sum_ns, memory_order_relaxed);
    atomic_store_explicit(&cold->sum_ns, 0, memory_order_relaxed);
    *count = started;
    atomic_store_explicit(&cold->count, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&hot->count, started, memory_order_release);
}

/* ---- engine, health, readiness --------------------------------------- */

void sw_metrics_engine_gauges(sw_metrics_t *m, const sw_detect_stats_t *total)
{
    sw_metrics_set(m, SW_M_JOBS_TRACKED, (int64_t)total->jobs);
    sw_metrics_set(m, SW_M_RANKS_TRACKED, (int64_t)total->ranks);
    sw_metrics_set(m, SW_M_RETAINED_SAMPLES, (int64_t)total->retained);
    sw_metrics_set(m, SW_M_ENGINE_STATE_BYTES, (int64_t)total->bytes);
    sw_metrics_set(m, SW_M_BLIND_RANKS, (int64_t)total->blind_ranks);
}

void sw_metrics_engine_counters(sw_metrics_t *m, const sw_detect_stats_t *prev,
                                const sw_detect_stats_t *cur)
{
    /* Engine counters only grow; a smaller value means a new engine was
     * paired with an old prev: count it from zero rather than wrap. */
    uint64_t d = cur->duplicates >= prev->duplicates ? cur->duplicates - prev->duplicates
                                                     : cur->duplicates;
    uint64_t l = cur->late >= prev->late ? cur->late - prev->late : cur->late;
    uint64_t e = cur->evicted >= prev->evicted ? cur->evicted - prev->evicted : cur->evicted;
    if (d) sw_metrics_add(m, SW_M_DUPLICATE_SAMPLES, d);
    if (l) sw_metrics_add(m, SW_M_LATE_SAMPLES, l);
    if (e) sw_metrics_add(m, SW_M_JOBS_EVICTED, e);
    uint64_t ee = cur->evicted_evidence >= prev->evicted_evidence
                      ? cur->evicted_evidence - prev->evicted_evidence
                      : cur->evicted_evidence;
    if (ee) sw_metrics_add(m, SW_M_JOBS_EVICTED_EVIDENCE, ee);
    uint64_t rj = cur->refused_jobs >= prev->refused_jobs ? cur->refused_jobs - prev->refused_jobs
                                                          : cur->refused_jobs;
    if (rj) sw_metrics_add(m, SW_M_JOBS_REFUSED, rj);
    uint64_t w = cur->warnings >= prev->warnings ? cur->warnings - prev->warnings : cur->warnings;
    if (w) sw_metrics_add(m, SW_M_SETTINGS_WARNINGS, w);
    uint64_t c = cur->counterless >= prev->counterless ? cur->counterless - prev->counterless
                                                       : cur->counterless;
    if (c) sw_metrics_add(m, SW_M_COUNTERLESS_SAMPLES, c);
    uint64_t dd = cur->deaths >= prev->deaths ? cur->deaths - prev->deaths : cur->deaths;
    uint64_t wd = cur->watchdog >= prev->watchdog ? cur->watchdog - prev->watchdog : cur->watchdog;
    if (dd) sw_metrics_add(m, SW_M_RANK_DEATHS, dd);
    if (wd) sw_metrics_add(m, SW_M_WATCHDOG_ERRORS, wd);
}

void sw_metrics_heartbeat(sw_metrics_t *m, int64_t now_ms)
{
    atomic_store_explicit(&m->heartbeat_ms, now_ms, memory_order_relaxed);
}

void sw_metrics_set_ready_state(sw_metrics_t *m, bool assigned, int64_t total_lag)
{
    atomic_store_explicit(&m->assigned, assigned, memory_order_relaxed);
    atomic_store_explicit(&m->total_lag, total_lag < 0 ? -1 : total_lag, memory_order_relaxed);
    if (total_lag >= 0) sw_metrics_set(m, SW_M_CONSUMER_TOTAL_LAG, total_lag);
}

bool sw_metrics_check_health(const sw_metrics_t *m, int64_t now_ms, int64_t stale_ms, char *why,
                             size_t why_size)
{
    int64_t hb = atomic_load_explicit(&unconst(m)->heartbeat_ms, memory_order_relaxed);
    if (hb == INT64_MIN) {
        snprintf(why, why_size, "no heartbeat yet");
        return false;
    }
    int64_t age = now_ms - hb;
    if (age < stale_ms) return true;
    snprintf(why, why_size, "stale: last heartbeat %.1f s ago (limit %.1f s)", (double)age / 1000.0,
             (double)stale_ms / 1000.0);
    return false;
}

void sw_metrics_set_output_state(sw_metrics_t *m, int64_t oldest_ms, bool queue_full)
{
    atomic_store_explicit(&m->out_oldest_ms, oldest_ms, memory_order_relaxed);
    atomic_store_explicit(&m->out_queue_full, queue_full, memory_order_relaxed);
    int64_t age = oldest_ms > 0 ? sw_clock_ms() - oldest_ms : 0;
    sw_metrics_set_double(m, SW_M_OUTPUT_OLDEST_AGE, age > 0 ? (double)age / 1000.0 : 0.0);
}

bool sw_metrics_check_ready(const sw_metrics_t *m, int64_t max_lag, char *why, size_t why_size)
{
    sw_metrics_t *mm = unconst(m);
    if (!atomic_load_explicit(&mm->assigned, memory_order_relaxed)) {
        snprintf(why, why_size, "no partitions assigned");
        return false;
    }
    /* The output: computed here, so that it holds while the daemon's loop
     * waits on a full producer queue. */
    if (atomic_load_explicit(&mm->out_queue_full, memory_order_relaxed)) {
        snprintf(why, why_size,
                 atomic_load_explicit(&mm->ship, memory_order_relaxed)
                     ? "kafka unreachable or slow: reading paused (in-flight limit reached)"
                     : "output stalled: the producer queue is full");
        return false;
    }
    int64_t oldest = atomic_load_explicit(&mm->out_oldest_ms, memory_order_relaxed);
    int64_t age = oldest > 0 ? sw_clock_ms() - oldest : 0;
    if (age > SW_METRICS_OUTPUT_STALL_MS) {
        snprintf(why, why_size,
                 "output stalled: a record has waited %.1f s for its delivery (limit %.1f s)",
                 (double)age / 1000.0, SW_METRICS_OUTPUT_STALL_MS / 1000.0);
        return false;
    }
    if (sw_metrics_get(m, SW_M_GROUP_MIXED) > 0) {
        snprintf(why, why_size,
                 "mixed group: a member runs another repartition mode (its markers are skipped; "
                 "stormwatch_group_mixed)");
        return false;
    }
    double rwait = sw_metrics_get(m, SW_M_REPARTITION_WAITING);
    if (rwait > 0) {
        snprintf(why, why_size,
                 "%.0f partitions wait for the repartition topic: their markers do not come back "
                 "and they hold copies from other partitions, so their input waits",
                 rwait);
        return false;
    }
    double held = sw_metrics_get(m, SW_M_SCHEMA_REGISTRY_HELD);
    if (held > 0) {
        snprintf(why, why_size, "%.0f partitions wait for the schema registry", held);
        return false;
    }
    int64_t lag = atomic_load_explicit(&mm->total_lag, memory_order_relaxed);
    if (lag < 0) {
        snprintf(why, why_size, "consumer lag unknown");
        return false;
    }
    if (lag <= max_lag) return true;
    snprintf(why, why_size, "lagging: %lld messages behind (limit %lld)", (long long)lag,
             (long long)max_lag);
    return false;
}

/* ---- rendering ------------------------------------------------------- */

/* Shortest text that reads back as the same double; Prometheus spellings
 * for the special values. */
static void put_double(sw_buf_t *out, double v)
{
    if (isnan(v)) {
        sw_buf_puts(out, "NaN");
        return;
    }
    if (isinf(v)) {
        sw_buf_puts(out, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    char tmp[32];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
        if (strtod(tmp, NULL) == v) break;
    }
    sw_buf_puts(out, tmp);
}

static void put_help(sw_buf_t *out, const char *name, const char *help)
{
    sw_buf_printf(out, "# HELP %s ", name);
    for (const char *p = help; *p; p++) {
        if (*p == '\\') sw_buf_puts(out, "\\\\");
        else if (*p == '\n') sw_buf_puts(out, "\\n");
        else sw_buf_putc(out, *p);
    }
    sw_buf_putc(out, '\n');
}

static void render_scalar(sw_metrics_t *m, const desc_t *d, sw_buf_t *out)
{
    sw_buf_puts(out, d->name);
    if (d->lname) {
        sw_buf_printf(out, "{%s=\"", d->lname);
        put_escaped(out, d->lvalue);
        sw_buf_puts(out, "\"}");
    }
    sw_buf_putc(out, ' ');
    uint64_t u = atomic_load_explicit(&m->val[d->id], memory_order_relaxed);
    if (d->type == MT_COUNTER) sw_buf_put_u64(out, u);
    else if (d->type == MT_GAUGE) sw_buf_put_i64(out, (int64_t)u);
    else put_double(out, bitsd(u));
    sw_buf_putc(out, '\n');
}

static void render_family(sw_metrics_t *m, const desc_t *d, int fam, sw_buf_t *out)
{
    const family_t *f = &m->fam[fam];
    for (size_t i = 0; i < f->n; i++) {
        const sw_metrics_series_t *s = f->v[i];
        uint64_t u = atomic_load_explicit(&f->v[i]->value, memory_order_relaxed);
        if (fam == FAM_LAG && (int64_t)u < 0) continue; /* unknown yet */
        sw_buf_printf(out, "%s{%s} ", d->name, s->labels);
        if (fam == FAM_LAG) sw_buf_put_i64(out, (int64_t)u);
        else sw_buf_put_u64(out, u);
        sw_buf_putc(out, '\n');
    }
}

void sw_metrics_set_host_limit(sw_metrics_t *m, int64_t max_hosts)
{
    if (!m) return;
    pthread_mutex_lock(&m->lock);
    sw_hosts_set_limit(m->hosts, max_hosts);
    pthread_mutex_unlock(&m->lock);
}

void sw_metrics_first_cause(sw_metrics_t *m, const sw_record_t *rec)
{
    if (!m) return;
    sw_str_t host = {NULL, 0};
    sw_hosts_kind_t kind;
    int64_t number = rec->episode;
    if ((rec->action == SW_ACTION_TRIGGER || rec->action == SW_ACTION_UPDATE) &&
        rec->analysis.n_suspects > 0 && rec->analysis.suspects[0].has_source) {
        host = rec->analysis.suspects[0].host;
        kind = SW_HOSTS_STORM;
    } else if (rec->action == SW_ACTION_CRASH && rec->x8) {
        host = rec->x8->first.host;
        kind = SW_HOSTS_DEATH;
        number = rec->x8->number;
    } else {
        return;
    }
    bool revision = rec->action == SW_ACTION_UPDATE || rec->revision > 0 ||
                    (rec->action == SW_ACTION_CRASH && !rec->x8->open);
    sw_str_t job = rec->analysis.has_job_id ? rec->analysis.job_id : sw_str("");
    pthread_mutex_lock(&m->lock);
    sw_hosts_add(m->hosts, host, kind, job, number, revision, rec->event_timestamp_ns);
    pthread_mutex_unlock(&m->lock);
}

void sw_metrics_enable_notify(sw_metrics_t *m)
{
    atomic_store_explicit(&m->notify, true, memory_order_relaxed);
}

void sw_metrics_enable_ship(sw_metrics_t *m)
{
    atomic_store_explicit(&m->ship, true, memory_order_relaxed);
}

void sw_metrics_enable_registry(sw_metrics_t *m)
{
    atomic_store_explicit(&m->registry, true, memory_order_relaxed);
}

void sw_metrics_observe_request(sw_metrics_t *m, unsigned sink, uint64_t ns)
{
    if (!m || sink >= SW_METRICS_SINKS) return;
    int b = 0;
    while (b < N_REQ_BOUNDS && ns > k_req_bound_ns[b]) b++;
    atomic_fetch_add_explicit(&m->req_sum_ns[sink], ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->req_bucket[sink][b], 1, memory_order_release);
}

static void render_req_histogram(sw_metrics_t *m, const desc_t *d, sw_buf_t *out)
{
    for (int k = 0; k < SW_METRICS_SINKS; k++) {
        uint64_t cum = 0;
        for (int b = 0; b < N_REQ_BUCKETS; b++) {
            cum += atomic_load_explicit(&m->req_bucket[k][b], memory_order_acquire);
            sw_buf_printf(out, "%s_bucket{sink=\"%s\",le=\"%s\"} ", d->name, k_sink_names[k],
                          k_req_le[b]);
            sw_buf_put_u64(out, cum);
            sw_buf_putc(out, '\n');
        }
        sw_buf_printf(out, "%s_sum{sink=\"%s\"} ", d->name, k_sink_names[k]);
        put_double(out,
                   (double)atomic_load_explicit(&m->req_sum_ns[k], memory_order_relaxed) / 1e9);
        sw_buf_printf(out, "\n%s_count{sink=\"%s\"} ", d->name, k_sink_names[k]);
        sw_buf_put_u64(out, cum);
        sw_buf_putc(out, '\n');
    }
}

void sw_metrics_observe_alert_latency(sw_metrics_t *m, int64_t ms)
{
    if (!m) return;
    if (ms < 0) ms = 0; /* producer clocks ahead of ours */
    int b = 0;
    while (b < N_ALERT_BOUNDS && ms > k_alert_bound_ms[b]) b++;
    atomic_fetch_add_explicit(&m->alert_sum_ms, (uint64_t)ms, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->alert_bucket[b], 1, memory_order_release);
}

static void render_alert_histogram(sw_metrics_t *m, const desc_t *d, sw_buf_t *out)
{
    uint64_t cum = 0;
    for (int b = 0; b < N_ALERT_BUCKETS; b++) {
        cum += atomic_load_explicit(&m->alert_bucket[b], memory_order_acquire);
        sw_buf_printf(out, "%s_bucket{le=\"%s\"} ", d->name, k_alert_le[b]);
        sw_buf_put_u64(out, cum);
        sw_buf_putc(out, '\n');
    }
    sw_buf_printf(out, "%s_sum ", d->name);
    put_double(out, (double)atomic_load_explicit(&m->alert_sum_ms, memory_order_relaxed) / 1e3);
    sw_buf_printf(out, "\n%s_count ", d->name);
    sw_buf_put_u64(out, cum);
    sw_buf_putc(out, '\n');
}

static void render_histogram(sw_metrics_t *m, const desc_t *d, sw_buf_t *out)
{
    uint64_t bucket[N_BUCKETS], sum_ns, count;
    hist_snapshot(m, bucket, &sum_ns, &count);
    uint64_t cum = 0;
    for (int b = 0; b < N_BUCKETS; b++) {
        cum += bucket[b];
        sw_buf_printf(out, "%s_bucket{le=\"%s\"} ", d->name, k_bound_le[b]);
        sw_buf_put_u64(out, cum);
        sw_buf_putc(out, '\n');
    }
    /* cum == count: the snapshot is consistent, so le="+Inf" == _count. */
    sw_buf_printf(out, "%s_sum ", d->name);
    put_double(out, (double)sum_ns / 1e9);
    sw_buf_printf(out, "\n%s_count ", d->name);
    sw_buf_put_u64(out, count);
    sw_buf_putc(out, '\n');
}

void sw_metrics_render(const sw_metrics_t *cm, sw_buf_t *out)
{
    sw_metrics_t *m = unconst(cm);
    pthread_mutex_lock(&m->lock);
    int own = atomic_load_explicit(&m->notify, memory_order_relaxed) ? OWN_NOTIFY : OWN_RUN;
    if (atomic_load_explicit(&m->ship, memory_order_relaxed)) own = OWN_SHIP;
    bool registry = atomic_load_explicit(&m->registry, memory_order_relaxed);
    for (size_t i = 0; i < sw_metrics_ndesc; i++) {
        const desc_t *d = &sw_metrics_desc[i];
        if (!(sw_metrics_row_owner(d) & own)) continue;
        if (!registry && sw_metrics_registry_row(d)) continue;
        if (d->help) {
            put_help(out, d->name, d->help);
            sw_buf_printf(out, "# TYPE %s %s\n", d->name, k_type_names[d->type]);
        }
        switch (d->src) {
        case SRC_SCALAR: render_scalar(m, d, out); break;
        case SRC_EVENTS_IN: render_family(m, d, FAM_EVENTS_IN, out); break;
        case SRC_LAG: render_family(m, d, FAM_LAG, out); break;
        case SRC_MISKEYED: render_family(m, d, FAM_MISKEYED, out); break;
        case SRC_SKIPPED: render_family(m, d, FAM_SKIPPED, out); break;
        case SRC_ALERT_HISTOGRAM: render_alert_histogram(m, d, out); break;
        case SRC_FIRST_CAUSE:
        case SRC_FIRST_CAUSE_JOBS:
            sw_hosts_render(m->hosts, d->name, d->src == SRC_FIRST_CAUSE_JOBS,
                            sw_wall_ms() * INT64_C(1000000), out);
            break;
        case SRC_HISTOGRAM: render_histogram(m, d, out); break;
        case SRC_REQ_HISTOGRAM: render_req_histogram(m, d, out); break;
        }
    }
    pthread_mutex_unlock(&m->lock);
}
