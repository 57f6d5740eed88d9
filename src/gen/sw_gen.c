/*
 * The synthetic telemetry generator (see sw_gen.h): its options and their
 * checks, its life, and delivery. Events leave through a heap over ranks
 * keyed by arrival time; each rank queues a few produced events
 * (sw_gen_model.c produces them, sw_gen_write.c writes them). No I/O, no
 * clock, no globals.
 */
#include "sw_gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_gen_int.h"

#define MAX_RANKS 131072
#define MAX_SAMPLES 100000000
#define MAX_JOBS 100000
#define MAX_TOTAL_RANKS 262144
#define MAX_STORMS 10000
#define MAX_TRUTH 1048576
#define MAX_MS 3600000
#define MAX_PREFIX 64

/* ---- queues -------------------------------------------------------------- */

static inline bool ev_before(const gev_t *a, const gev_t *b)
{
    if (a->arrival_ns != b->arrival_ns) return a->arrival_ns < b->arrival_ns;
    if (a->order != b->order) return a->order < b->order;
    return !a->dup && b->dup;
}

static void pend_push(grank_t *rk, const gev_t *ev)
{
    SW_GROW(rk->pend, rk->npend, rk->cap, 4);
    uint32_t i = rk->npend++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!ev_before(ev, &rk->pend[parent])) break;
        rk->pend[i] = rk->pend[parent];
        i = parent;
    }
    rk->pend[i] = *ev;
}

static void pend_pop(grank_t *rk, gev_t *out)
{
    *out = rk->pend[0];
    gev_t last = rk->pend[--rk->npend];
    uint32_t i = 0, n = rk->npend;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && ev_before(&rk->pend[c + 1], &rk->pend[c])) c++;
        if (!ev_before(&rk->pend[c], &last)) break;
        rk->pend[i] = rk->pend[c];
        i = c;
    }
    if (n) rk->pend[i] = last;
}

/*
 * Queue produced events until the next one to produce cannot arrive before
 * the earliest queued one (its arrival is at least its true time, and true
 * times only grow), so the queue head is the rank's next delivery.
 */
static void rank_refill(sw_gen_t *gen, grank_t *rk)
{
    while (rk->has_next && (rk->npend == 0 || rk->next.true_ns <= rk->pend[0].arrival_ns)) {
        pend_push(rk, &rk->next);
        if (rk->next.kind == GK_SAMPLE && gen->opts.duplicates > 0 &&
            u01(rnd(rk->key, rk->next.order, T_DUP)) < gen->opts.duplicates) {
            gev_t copy = rk->next;
            copy.dup = true;
            copy.late = false;
            copy.arrival_ns += (int64_t)(u01(rnd(rk->key, rk->next.order, T_DUP_BY)) *
                                         (double)gen->interval_ns);
            pend_push(rk, &copy);
        }
        rk->has_next = sw_gen_rank_produce(gen, rk, &rk->next);
    }
}

static inline bool hent_before(const hent_t *a, const hent_t *b)
{
    return a->arrival_ns != b->arrival_ns ? a->arrival_ns < b->arrival_ns : a->idx < b->idx;
}

static void heap_down(sw_gen_t *gen, size_t i)
{
    hent_t *h = gen->heap;
    size_t n = gen->nheap;
    hent_t x = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && hent_before(&h[c + 1], &h[c])) c++;
        if (!hent_before(&h[c], &x)) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/* ---- public API ---------------------------------------------------------- */

void sw_gen_opts_default(sw_gen_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->ranks = 8;
    opts->samples = 600;
    opts->jobs = 1;
    opts->seed = 1;
    opts->storm_rank = SW_GEN_STORM_RANK_DEFAULT;
    opts->storms = 1;
    opts->interval_ms = 100;
    opts->jitter = 0.02;
    opts->skew_ms = 50;
    opts->start_ns = 1763700000000000000LL;
    opts->storm_at = 0.5;
    opts->spread_ms = 300;
    opts->storm_bytes = 8 * GIB;
    opts->phases = false;
    opts->duplicates = 0.0;
    opts->late = 0.0;
    opts->restart_at = 0.2;
    opts->leak_at = 0.2;
    opts->job_prefix = "job";
    opts->schema_version = 3;
    opts->fleet_hosts = 0;
    opts->bad_host = -1;
}

#define CHECK(cond, ...)                                \
    do {                                                \
        if (!(cond)) {                                  \
            snprintf(errstr, errstr_size, __VA_ARGS__); \
            return false;                               \
        }                                               \
    } while (0)

static bool in_range(double v, double lo, double hi)
{
    return v >= lo && v <= hi; /* false for NaN */
}

/* Every range, then the options that depend on each other. */
static bool opts_check(const sw_gen_opts_t *o, char *errstr, size_t errstr_size)
{
    CHECK(o->ranks >= 1 && o->ranks <= MAX_RANKS, "--ranks %lld is out of range (expected 1..%d)",
          (long long)o->ranks, MAX_RANKS);
    CHECK(o->samples >= 1 && o->samples <= MAX_SAMPLES,
          "--samples %lld is out of range (expected 1..%d)", (long long)o->samples, MAX_SAMPLES);
    CHECK(o->jobs >= 1 && o->jobs <= MAX_JOBS, "--jobs %lld is out of range (expected 1..%d)",
          (long long)o->jobs, MAX_JOBS);
    CHECK(o->jobs * o->ranks <= MAX_TOTAL_RANKS,
          "--jobs %lld with --ranks %lld make %lld ranks in all (expected at most %d)",
          (long long)o->jobs, (long long)o->ranks, (long long)(o->jobs * o->ranks),
          MAX_TOTAL_RANKS);
    CHECK(o->storms >= 0 && o->storms <= MAX_STORMS,
          "--storms %lld is out of range (expected 0..%d)", (long long)o->storms, MAX_STORMS);
    CHECK(o->jobs * o->storms <= MAX_TRUTH,
          "--jobs %lld with --storms %lld make %lld storms in all (expected at most %d)",
          (long long)o->jobs, (long long)o->storms, (long long)(o->jobs * o->storms), MAX_TRUTH);
    CHECK(o->storm_rank == SW_GEN_STORM_RANK_DEFAULT || o->storm_rank == SW_GEN_STORM_RANK_RANDOM ||
              (o->storm_rank >= 0 && o->storm_rank < o->ranks),
          "--storm-rank %lld is out of range for --ranks %lld (expected -1 for a random rank, or "
          "0..%lld)",
          (long long)o->storm_rank, (long long)o->ranks, (long long)(o->ranks - 1));
    CHECK(o->interval_ms >= 1 && o->interval_ms <= MAX_MS,
          "--interval-ms %lld is out of range (expected 1..%d)", (long long)o->interval_ms, MAX_MS);
    CHECK(in_range(o->jitter, 0.0, 0.45), "--jitter %g is out of range (expected 0..0.45)",
          o->jitter);
    CHECK(o->skew_ms >= 0 && o->skew_ms <= MAX_MS,
          "--skew-ms %lld is out of range (expected 0..%d)", (long long)o->skew_ms, MAX_MS);
    CHECK(in_range(o->storm_at, 0.0, 1.0), "--storm-at %g is out of range (expected 0..1)",
          o->storm_at);
    CHECK(o->spread_ms >= 0 && o->spread_ms <= MAX_MS,
          "--spread-ms %lld is out of range (expected 0..%d)", (long long)o->spread_ms, MAX_MS);
    CHECK(o->storm_bytes >= STORM_BYTES_MIN && o->storm_bytes <= STORM_BYTES_MAX,
          "--storm-bytes %lld is out of range (expected %lld..%lld, 2..40 GiB)",
          (long long)o->storm_bytes, (long long)STORM_BYTES_MIN, (long long)STORM_BYTES_MAX);
    CHECK(in_range(o->duplicates, 0.0, 1.0), "--duplicates %g is out of range (expected 0..1)",
          o->duplicates);
    CHECK(in_range(o->late, 0.0, 1.0), "--late %g is out of range (expected 0..1)", o->late);
    CHECK(o->rise_samples >= 0 && o->rise_samples <= RISE_MAX,
          "--rise-samples %lld is out of range (expected 0..%d)", (long long)o->rise_samples,
          RISE_MAX);
    CHECK(o->storm_gap_ms >= 0 && o->storm_gap_ms <= MAX_MS,
          "--storm-gap-ms %lld is out of range (expected 0..%d)", (long long)o->storm_gap_ms,
          MAX_MS);
    CHECK(o->tie_ranks >= 0 && o->tie_ranks <= o->ranks,
          "--tie-ranks %lld is out of range for --ranks %lld (expected 0..%lld)",
          (long long)o->tie_ranks, (long long)o->ranks, (long long)o->ranks);
    CHECK(o->schema_version == 3 || o->schema_version == 4,
          "--schema-version %lld is not supported (expected 3 or 4)", (long long)o->schema_version);
    CHECK(o->late_first_ms >= 0 && o->late_first_ms <= 60000,
          "--late-first-ms %lld is out of range (expected 0..60000)", (long long)o->late_first_ms);
    CHECK(o->restarts >= 0 && o->restarts <= o->ranks,
          "--restarts %lld is out of range for --ranks %lld (expected 0..%lld)",
          (long long)o->restarts, (long long)o->ranks, (long long)o->ranks);
    CHECK(o->leaks >= 0 && o->leaks <= o->ranks,
          "--leaks %lld is out of range for --ranks %lld (expected 0..%lld)", (long long)o->leaks,
          (long long)o->ranks, (long long)o->ranks);
    CHECK(in_range(o->restart_at, 0.0, 1.0), "--restart-at %g is out of range (expected 0..1)",
          o->restart_at);
    CHECK(in_range(o->leak_at, 0.0, 1.0), "--leak-at %g is out of range (expected 0..1)",
          o->leak_at);
    CHECK(in_range(o->loss, 0.0, 0.5), "--loss %g is out of range (expected 0..0.5)", o->loss);
    CHECK(o->gaps >= 0 && o->gaps <= GAPS_MAX, "--gaps %lld is out of range (expected 0..%d)",
          (long long)o->gaps, GAPS_MAX);
    CHECK(!o->overlap || (o->storm_gap_ms > 0 && o->storms <= OVERLAP_MAX_STORMS),
          "--overlap needs --storm-gap-ms and at most %d --storms (got %lld, %lld)",
          OVERLAP_MAX_STORMS, (long long)o->storm_gap_ms, (long long)o->storms);
    int64_t per_job = (o->ranks + 7) / 8;
    CHECK(o->fleet_hosts == 0 || (o->fleet_hosts >= per_job && o->fleet_hosts <= 100000),
          "--fleet-hosts %lld is out of range for --ranks %lld (expected 0, or %lld..100000: "
          "every host of a job is another fleet host)",
          (long long)o->fleet_hosts, (long long)o->ranks, (long long)per_job);
    CHECK(o->bad_host == -1 ||
              (o->fleet_hosts > 0 && o->bad_host >= 0 && o->bad_host < o->fleet_hosts),
          "--bad-host %lld needs --fleet-hosts N and 0 <= bad host < N (--fleet-hosts is %lld)",
          (long long)o->bad_host, (long long)o->fleet_hosts);
    CHECK(o->job_prefix != NULL, "--job-prefix is missing (expected 1..%d characters)", MAX_PREFIX);
    size_t plen = strlen(o->job_prefix);
    CHECK(plen >= 1 && plen <= MAX_PREFIX,
          "--job-prefix \"%s\" has %zu characters (expected 1..%d)", o->job_prefix, plen,
          MAX_PREFIX);
    for (size_t i = 0; i < plen; i++) {
        unsigned char c = (unsigned char)o->job_prefix[i];
        CHECK(c >= 0x20 && c < 0x7f && c != '"' && c != '\\',
              "--job-prefix \"%s\": character %zu is not allowed (expected printable ASCII "
              "without '\"' and '\\')",
              o->job_prefix, i + 1);
    }

    int64_t interval_ns = o->interval_ms * MS_NS, skew_ns = o->skew_ms * MS_NS;
    CHECK(o->start_ns >= skew_ns + interval_ns && o->start_ns <= INT64_MAX / 2,
          "--start-ns %lld is out of range for --skew-ms %lld and --interval-ms %lld (expected "
          "%lld..%lld, so that no timestamp is negative)",
          (long long)o->start_ns, (long long)o->skew_ms, (long long)o->interval_ms,
          (long long)(skew_ns + interval_ns), (long long)(INT64_MAX / 2));
    CHECK((double)o->start_ns + ((double)o->samples + 16.0) * (double)interval_ns +
                  (double)skew_ns <
              9.0e18,
          "--samples %lld at --interval-ms %lld from --start-ns %lld run past the largest "
          "timestamp (2^63-1 ns)",
          (long long)o->samples, (long long)o->interval_ms, (long long)o->start_ns);

    int64_t climb_max = 10 + (5000 + o->interval_ms - 1) / o->interval_ms; /* climb, settle */
    int64_t leak_n = LEAK_MS / o->interval_ms < 20 ? 20 : LEAK_MS / o->interval_ms;
    int64_t quiet = (QUIET_MS + o->interval_ms - 1) / o->interval_ms;
    int64_t first_at = o->storms ? (int64_t)(o->storm_at * (double)o->samples) : o->samples;
    if (o->restarts || o->job_restart) {
        int64_t at = (int64_t)(o->restart_at * (double)o->samples);
        CHECK(at >= 2 && at + climb_max + (o->storms ? quiet : 0) <= first_at,
              "--restart-at %g puts the restarts at sample %lld: they need %lld samples (and "
              "%lld quiet ones before a storm) from there, before sample %lld",
              o->restart_at, (long long)at, (long long)climb_max, (long long)quiet,
              (long long)first_at);
    }
    if (o->leaks) {
        int64_t at = (int64_t)(o->leak_at * (double)o->samples);
        CHECK(at >= 2 && at + leak_n + (o->storms ? quiet : 0) <= first_at,
              "--leak-at %g puts the leaks at sample %lld: they need %lld samples (and %lld quiet "
              "ones before a storm) from there, before sample %lld",
              o->leak_at, (long long)at, (long long)leak_n, (long long)quiet, (long long)first_at);
    }
    if (o->storms == 0) return true;
    int64_t first = (int64_t)(o->storm_at * (double)o->samples);
    CHECK(first >= 2,
          "--storm-at %g puts the first storm at sample %lld of --samples %lld (expected at "
          "least 2 samples before it)",
          o->storm_at, (long long)first, (long long)o->samples);
    double spread_ns = (double)o->spread_ms * (double)MS_NS;
    double max_delay = spread_ns * (1.0 + (double)(o->ranks / 2) / 8.0) + spread_ns / 2.0;
    int64_t rise_span = (int64_t)ceil((max_delay + (double)interval_ns) / (double)interval_ns) + 4;
    int64_t hold = (HOLD_MS + o->interval_ms - 1) / o->interval_ms;
    int64_t span = rise_span + hold + 8;
    int64_t spacing = (o->samples - first) / o->storms;
    if (o->storm_gap_ms > 0 && o->storms > 1 && !o->overlap) {
        int64_t gap = o->storm_gap_ms / o->interval_ms;
        CHECK(first + (o->storms - 1) * gap + rise_span <= o->samples,
              "--storms %lld every --storm-gap-ms %lld from --storm-at %g do not fit in --samples "
              "%lld",
              (long long)o->storms, (long long)o->storm_gap_ms, o->storm_at, (long long)o->samples);
        spacing = gap;
    }
    if (o->overlap) /* storms may overlap: each must start in the timeline */
        CHECK(o->storm_gap_ms >= o->interval_ms && first + (o->storms - 1) * spacing < o->samples,
              "--overlap: --storms %lld every --storm-gap-ms %lld from --storm-at %g do not fit "
              "in --samples %lld",
              (long long)o->storms, (long long)o->storm_gap_ms, o->storm_at, (long long)o->samples);
    else if (o->storms == 1)
        CHECK(spacing >= rise_span,
              "--samples %lld is too short for a storm at --storm-at %g: the spread over --ranks "
              "%lld at --spread-ms %lld needs %lld samples after sample %lld, %lld are left",
              (long long)o->samples, o->storm_at, (long long)o->ranks, (long long)o->spread_ms,
              (long long)rise_span, (long long)first, (long long)spacing);
    else
        CHECK(spacing >= span,
              "--storms %lld do not fit: --samples %lld from --storm-at %g leave %lld samples per "
              "storm, one storm needs %lld (spread over --ranks %lld at --spread-ms %lld, then a "
              "3 s hold at --interval-ms %lld); raise --samples or lower --storms, --storm-at or "
              "--spread-ms",
              (long long)o->storms, (long long)o->samples, o->storm_at, (long long)spacing,
              (long long)span, (long long)o->ranks, (long long)o->spread_ms,
              (long long)o->interval_ms);
    return true;
}

sw_gen_t *sw_gen_new(const sw_gen_opts_t *opts, char *errstr, size_t errstr_size)
{
    if (!opts_check(opts, errstr, errstr_size)) return NULL;
    sw_gen_t *gen = sw_calloc(1, sizeof(*gen));
    gen->opts = *opts;
    gen->prefix = sw_strdup(opts->job_prefix);
    gen->opts.job_prefix = gen->prefix;
    const sw_gen_opts_t *o = &gen->opts;
    gen->interval_ns = o->interval_ms * MS_NS;
    gen->jit_ns = o->jitter * (double)gen->interval_ns;
    gen->skew_ns = o->skew_ms * MS_NS;
    gen->spread_ns = o->spread_ms * MS_NS;
    gen->hold = (HOLD_MS + o->interval_ms - 1) / o->interval_ms;
    gen->hosts_per_job = (o->ranks + 7) / 8;
    gen->seed_key = mix64(o->seed ^ 0x5377676e53656564ULL);
    if (o->storms > 0) {
        gen->first_onset = (int64_t)(o->storm_at * (double)o->samples);
        gen->spacing = (o->samples - gen->first_onset) / o->storms;
        if (o->storm_gap_ms > 0 && o->storms > 1) gen->spacing = o->storm_gap_ms / o->interval_ms;
    }

    size_t plen = strlen(gen->prefix), per = plen + 1 + 21;
    gen->job_id_buf = sw_malloc((size_t)o->jobs * per);
    gen->job_ids = sw_calloc((size_t)o->jobs, sizeof(*gen->job_ids));
    gen->job_id_len = sw_calloc((size_t)o->jobs, sizeof(*gen->job_id_len));
    for (int64_t j = 0; j < o->jobs; j++) {
        char *s = gen->job_id_buf + (size_t)j * per;
        int len = snprintf(s, per, "%s-%lld", gen->prefix, (long long)j);
        gen->job_ids[j] = s;
        gen->job_id_len[j] = (size_t)len;
        if ((size_t)len > gen->max_job_id_len) gen->max_job_id_len = (size_t)len;
    }

    gen->nranks = (size_t)(o->jobs * o->ranks);
    gen->ranks = sw_calloc(gen->nranks, sizeof(*gen->ranks));
    for (int64_t j = 0; j < o->jobs; j++)
        for (int64_t r = 0; r < o->ranks; r++)
            sw_gen_rank_init(gen, &gen->ranks[j * o->ranks + r], (int32_t)j, (int32_t)r);

    gen->ntruth = (size_t)(o->jobs * o->storms);
    gen->truth = sw_calloc(gen->ntruth ? gen->ntruth : 1, sizeof(*gen->truth));
    sw_gen_truth_build(gen);
    sw_gen_others_build(gen);

    for (size_t n = 0; n < gen->nranks && (o->overlap || o->gaps); n++)
        sw_gen_field_build(gen, &gen->ranks[n]);

    gen->heap = sw_calloc(gen->nranks, sizeof(*gen->heap));
    for (size_t n = 0; n < gen->nranks; n++) {
        grank_t *rk = &gen->ranks[n];
        sw_gen_storm_plan(gen, rk, 0, &rk->plan);
        rk->has_next = sw_gen_rank_produce(gen, rk, &rk->next);
        rank_refill(gen, rk);
        if (rk->npend) {
            gen->heap[gen->nheap].arrival_ns = rk->pend[0].arrival_ns;
            gen->heap[gen->nheap].idx = (uint32_t)n;
            gen->nheap++;
        }
    }
    for (size_t i = gen->nheap / 2; i-- > 0;) heap_down(gen, i);
    return gen;
}

void sw_gen_destroy(sw_gen_t *gen)
{
    if (!gen) return;
    if (gen->ranks)
        for (size_t n = 0; n < gen->nranks; n++) {
            free(gen->ranks[n].pend);
            free(gen->ranks[n].ov);
            free(gen->ranks[n].gap);
        }
    free(gen->ranks);
    free(gen->heap);
    free(gen->truth);
    free(gen->other);
    free(gen->job_ids);
    free(gen->job_id_len);
    free(gen->job_id_buf);
    free(gen->prefix);
    free(gen);
}

bool sw_gen_next(sw_gen_t *gen, sw_buf_t *out)
{
    if (gen->nheap == 0) return false;
    hent_t *top = &gen->heap[0];
    grank_t *rk = &gen->ranks[top->idx];
    gev_t ev;
    pend_pop(rk, &ev);
    size_t before = out->len;
    sw_gen_format_event(gen, rk, &ev, out);
    gen->st.events++;
    gen->st.bytes += out->len - before;
    if (ev.kind == GK_SAMPLE) {
        gen->st.samples++;
        gen->st.duplicates += ev.dup;
        gen->st.late += ev.late;
    } else {
        gen->st.phases++;
    }
    rank_refill(gen, rk);
    if (rk->npend) {
        top->arrival_ns = rk->pend[0].arrival_ns;
    } else {
        gen->heap[0] = gen->heap[--gen->nheap];
    }
    if (gen->nheap) heap_down(gen, 0);
    return true;
}

size_t sw_gen_truth(const sw_gen_t *gen, const sw_gen_storm_t **storms)
{
    *storms = gen->truth;
    return gen->ntruth;
}

size_t sw_gen_truth_other(const sw_gen_t *gen, const sw_gen_other_t **out)
{
    *out = gen->other;
    return gen->nother;
}

int64_t sw_gen_hit_ts(const sw_gen_t *gen, int64_t job, int64_t storm, int64_t rank)
{
    const sw_gen_opts_t *o = &gen->opts;
    if (job < 0 || job >= o->jobs || storm < 0 || storm >= o->storms || rank < 0 ||
        rank >= o->ranks)
        return -1;
    const grank_t *rk = &gen->ranks[job * o->ranks + rank];
    gplan_t pl;
    sw_gen_storm_plan(gen, rk, storm, &pl);
    if (pl.h >= pl.drop) return -1; /* never reached (--lone) */
    return sw_gen_sample_true_ns(gen, rk, pl.h) + rk->skew_ns;
}

bool sw_gen_lost(const sw_gen_t *gen, int64_t job, int64_t rank, int64_t i)
{
    const sw_gen_opts_t *o = &gen->opts;
    if (job < 0 || job >= o->jobs || rank < 0 || rank >= o->ranks) return false;
    return sw_gen_rank_lost(gen, &gen->ranks[job * o->ranks + rank], i);
}

void sw_gen_stats(const sw_gen_t *gen, sw_gen_stats_t *st)
{
    *st = gen->st;
}
