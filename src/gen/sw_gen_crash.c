/*
 * `stormwatch gen --crash`: synthetic failures for SPEC 8 with their ground
 * truth. Every rank is a small state machine of events in true-clock order
 * (samples, an outage, a death marker, a watchdog error, a stop); a heap
 * over the ranks merges them in arrival order = true time + the delivery
 * delay of the rank's host, so each host's events keep their order and the
 * hosts interleave as their delays say. Timestamps are written on each
 * host's own (skewed) clock. Pure: writes into buffers, no I/O.
 */
#include "sw_gen_crash.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_gen.h"

#define GIB ((int64_t)1 << 30)
#define TOTAL_BYTES ((int64_t)80 * GIB)
#define RANKS_PER_HOST 8
#define S_NS INT64_C(1000000000)
#define MS_NS INT64_C(1000000)
#define MAX_RECORDS 3 /* crash records a generated job may need (SPEC 8.6) */

enum { EV_SAMPLE, EV_DEGRADED, EV_RECOVERED, EV_MARKER, EV_WATCHDOG, EV_STOP, EV_NONE };
enum { PROF_FLAT, PROF_RAMP, PROF_PLATEAU, PROF_PEAK };

typedef struct xrank_s {
    int32_t job, rank;
    int64_t k;          /* next sample index */
    int64_t samples_to; /* samples strictly before this true time (job-relative) */
    int after;          /* event after the samples: EV_MARKER, EV_WATCHDOG, EV_STOP, EV_NONE */
    int64_t after_at;
    bool after_done;
    int64_t o_from, o_to; /* collector outage [from, to), 0/0 none */
    int o_state;          /* 0 before, 1 degraded sent, 2 recovered sent */
    int prof;
    double base, target;
    int64_t t_a, t_b; /* ramp/plateau rise from t_a to t_b; peaks every t_a, t_b long */
    int64_t pid;
    int next_kind;   /* the event the heap holds for this rank */
    int64_t next_at; /* its true time, job-relative */
} xrank_t;

typedef struct xjob_s {
    char job_id[64];
    int64_t t0;
    sw_genx_truth_t truth;
    sw_genx_death_t deaths[8];
    int64_t *skew, *delay;
    int64_t *outages;
    size_t n_out;
    bool cap;
    int64_t bad_slot; /* host slot of the first death (0 without one) */
} xjob_t;

typedef struct hent_s {
    int64_t key; /* arrival time */
    uint32_t xi;
} hent_t;

struct sw_genx_s {
    sw_genx_opts_t o;
    xjob_t *jobs;
    xrank_t *r;
    size_t nr;
    hent_t *heap;
    size_t nheap;
};

static const char *const scen_names[SW_GENX__CNT] = {"cascade", "silent-first", "nocap",
                                                     "plateau", "peak",         "outage"};

const char *sw_genx_scenario_str(sw_genx_scenario_t s)
{
    return s < SW_GENX__CNT ? scen_names[s] : "?";
}

bool sw_genx_scenario_parse(const char *s, sw_genx_scenario_t *out)
{
    for (int i = 0; i < SW_GENX__CNT; i++)
        if (strcmp(s, scen_names[i]) == 0) {
            *out = (sw_genx_scenario_t)i;
            return true;
        }
    return false;
}

void sw_genx_opts_default(sw_genx_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->scenario = SW_GENX_CASCADE;
    o->ranks = 8;
    o->jobs = 1;
    o->seed = 1;
    o->interval_ms = 200;
    o->skew_ms = 3000;
    o->delay_ms = 10000;
    o->watchdog_s = 600;
    o->start_ns = INT64_C(1763700000000000000);
    o->job_prefix = "crash";
    o->fleet_hosts = 0;
    o->bad_host = -1;
}

/* ---- randomness: splitmix64 of (seed, tags) ------------------------------ */

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t h4(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
    return mix64(mix64(mix64(mix64(seed) ^ a) ^ b) ^ c);
}

static double u01(uint64_t h)
{
    return (double)(h >> 11) / 9007199254740992.0;
}

static double unif(const sw_genx_t *g, uint64_t a, uint64_t b, uint64_t c, double lo, double hi)
{
    return lo + (hi - lo) * u01(h4(g->o.seed, a, b, c));
}

/* Tags of the random draws. */
enum {
    T_SKEW = 1,
    T_DELAY,
    T_VICTIM,
    T_BASE,
    T_RAMP,
    T_PRE,
    T_NDEATH,
    T_DEATHR,
    T_DELTA,
    T_SILENT,
    T_JIT,
    T_NOISE,
    T_WD,
    T_PROF,
    T_OUT,
    T_MARK,
    T_PEAK,
    T_STOP
};

/* ---- per-rank timelines ------------------------------------------------- */

static int64_t sample_at(const sw_genx_t *g, const xrank_t *x, int64_t k)
{
    int64_t iv = g->o.interval_ms * MS_NS;
    uint64_t tag = ((uint64_t)x->job << 32) | (uint32_t)x->rank;
    if (k == 0) return (int64_t)unif(g, T_JIT, tag, 0, 0, 5e6);
    double j = unif(g, T_JIT, tag, (uint64_t)k, -0.01, 0.01) * (double)iv;
    return k * iv + (int64_t)j;
}

static bool in_outage(const xrank_t *x, int64_t t)
{
    return x->o_to > x->o_from && t >= x->o_from && t < x->o_to;
}

/* The rank's next event (kind, job-relative true time). */
static void plan_next(const sw_genx_t *g, xrank_t *x)
{
    int64_t ts = sample_at(g, x, x->k);
    while (ts < x->samples_to && in_outage(x, ts)) ts = sample_at(g, x, ++x->k);
    int kind = EV_NONE;
    int64_t at = INT64_MAX;
    if (ts < x->samples_to) {
        kind = EV_SAMPLE;
        at = ts;
    }
    if (x->o_to > x->o_from) {
        if (x->o_state == 0 && x->o_from <= at && x->o_from < x->samples_to) {
            kind = EV_DEGRADED;
            at = x->o_from;
        } else if (x->o_state == 1 && x->o_to <= at && x->o_to < x->samples_to) {
            kind = EV_RECOVERED;
            at = x->o_to;
        }
    }
    if (kind == EV_NONE && !x->after_done && x->after != EV_NONE) {
        kind = x->after;
        at = x->after_at;
    }
    x->next_kind = kind;
    x->next_at = at;
}

static double frac_at(const sw_genx_t *g, const xrank_t *x, int64_t t, int64_t k)
{
    uint64_t tag = ((uint64_t)x->job << 32) | (uint32_t)x->rank;
    double noise = unif(g, T_NOISE, tag, (uint64_t)k, -0.002, 0.002);
    double f = x->base;
    switch (x->prof) {
    case PROF_RAMP:
        if (t >= x->t_a)
            f = x->base + (1.0 - x->base) * (double)(t - x->t_a) / (double)(x->t_b - x->t_a);
        if (f > 1.0) f = 1.0;
        return f + (f > 0.999 ? 0 : noise);
    case PROF_PLATEAU:
        if (t >= x->t_b) f = x->target;
        else if (t > x->t_a)
            f = x->base + (x->target - x->base) * (double)(t - x->t_a) / (double)(x->t_b - x->t_a);
        return f + noise;
    case PROF_PEAK: {
        /* Every t_a ns a peak of t_b ns to target (noise kept below it). */
        int64_t n = t / x->t_a, in = t - n * x->t_a;
        if (n > 0 && in < x->t_b) return x->target - 0.002 + noise * 0.5;
        return f + noise;
    }
    default: return f + noise;
    }
}

/* ---- lines ------------------------------------------------------------------ */

static void line_head(sw_buf_t *out, const sw_genx_t *g, const xjob_t *jb, const xrank_t *x,
                      int64_t ts, const char *type, int64_t iv)
{
    int64_t host = x->rank / RANKS_PER_HOST;
    if (g->o.fleet_hosts > 0)
        host = sw_gen_fleet_host(x->job, host, (g->o.ranks + RANKS_PER_HOST - 1) / RANKS_PER_HOST,
                                 g->o.fleet_hosts, g->o.bad_host, jb->bad_slot);
    sw_buf_printf(out,
                  "{\"schema_version\": 3, \"timestamp_ns\": %lld, \"event_type\": \"%s\", "
                  "\"collector\": \"stormlog.cuda_tracker\", \"sampling_interval_ms\": %lld, "
                  "\"pid\": %lld, \"host\": \"node-%03lld\", \"device_id\": %d, ",
                  (long long)ts, type, (long long)iv, (long long)x->pid, (long long)host,
                  (int)(x->rank % RANKS_PER_HOST));
}

static void line_tail(sw_buf_t *out, const xjob_t *jb, const xrank_t *x, int64_t world)
{
    sw_buf_printf(out,
                  "\"job_id\": \"%s\", \"rank\": %d, \"local_rank\": %d, \"world_size\": %lld, "
                  "\"session_id\": \"sess-%s-%d\"}\n",
                  jb->job_id, (int)x->rank, (int)(x->rank % RANKS_PER_HOST), (long long)world,
                  jb->job_id, (int)x->rank);
}

static void emit(sw_genx_t *g, xrank_t *x, sw_buf_t *out)
{
    xjob_t *jb = &g->jobs[x->job];
    int host = x->rank / RANKS_PER_HOST;
    int64_t t = x->next_at;
    int64_t ts = jb->t0 + t + jb->skew[host];
    int64_t iv = g->o.interval_ms;
    uint64_t tag = ((uint64_t)x->job << 32) | (uint32_t)x->rank;
    switch (x->next_kind) {
    case EV_SAMPLE: {
        double f = frac_at(g, x, t, x->k);
        int64_t used = (int64_t)(f * (double)TOTAL_BYTES);
        if (used > TOTAL_BYTES) used = TOTAL_BYTES;
        if (used < 0) used = 0;
        line_head(out, g, jb, x, ts, "sample", iv);
        sw_buf_printf(out, "\"device_used_bytes\": %lld, ", (long long)used);
        if (jb->cap)
            sw_buf_printf(out, "\"device_free_bytes\": %lld, \"device_total_bytes\": %lld, ",
                          (long long)(TOTAL_BYTES - used), (long long)TOTAL_BYTES);
        sw_buf_puts(out, "\"context\": null, \"metadata\": {}, ");
        x->k++;
        break;
    }
    case EV_DEGRADED:
    case EV_RECOVERED:
        line_head(out, g, jb, x, ts,
                  x->next_kind == EV_DEGRADED ? "collector_degraded" : "collector_recovered", iv);
        sw_buf_printf(out, "\"context\": \"%s\", \"metadata\": {\"backend\": \"nvml\"}, ",
                      x->next_kind == EV_DEGRADED ? "NVML query failed: GPU is lost"
                                                  : "NVML queries succeed again");
        x->o_state++;
        break;
    case EV_MARKER: {
        int v = (int)(h4(g->o.seed, T_MARK, tag, 0) % 3);
        const char *reason =
            "CUDA out of memory. Tried to allocate 2.00 GiB. GPU %d has a total capacity of "
            "79.15 GiB of which 112.00 MiB is free. Process %lld has 79.03 GiB memory in use.";
        char rs[256];
        snprintf(rs, sizeof(rs), reason, x->rank % RANKS_PER_HOST, (long long)x->pid);
        if (v == 0) {
            line_head(out, g, jb, x, ts, "error", iv);
            sw_buf_printf(out,
                          "\"context\": \"flight recorder: OOM\", \"metadata\": {\"oom_reason\": "
                          "\"%s\", \"oom_dump_path\": \"/var/lib/stormlog/oom/%s-r%d.pickle\"}, ",
                          rs, jb->job_id, (int)x->rank);
        } else if (v == 1) {
            line_head(out, g, jb, x, ts, "oom", iv);
            sw_buf_printf(out,
                          "\"context\": null, \"metadata\": {\"oom_dump_path\": "
                          "\"/var/lib/stormlog/oom/%s-r%d.pickle\"}, ",
                          jb->job_id, (int)x->rank);
        } else {
            line_head(out, g, jb, x, ts, "critical", iv);
            sw_buf_printf(out, "\"context\": \"torch.OutOfMemoryError: %s\", \"metadata\": {}, ",
                          rs);
        }
        x->after_done = true;
        break;
    }
    case EV_WATCHDOG:
        line_head(out, g, jb, x, ts, "error", iv);
        sw_buf_printf(out,
                      "\"context\": \"[Rank %d] Watchdog caught collective operation timeout: "
                      "WorkNCCL(SeqNum=%llu, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, "
                      "Timeout(ms)=%lld) ran for %lld milliseconds before timing out.\", "
                      "\"metadata\": {\"source\": \"ProcessGroupNCCL\"}, ",
                      (int)x->rank, (unsigned long long)(48000 + x->k),
                      (long long)g->o.watchdog_s * 1000, (long long)g->o.watchdog_s * 1000 + 35);
        x->after_done = true;
        break;
    case EV_STOP:
        line_head(out, g, jb, x, ts, "stop", iv);
        sw_buf_puts(out, "\"context\": null, \"metadata\": {}, ");
        x->after_done = true;
        break;
    default: return;
    }
    line_tail(out, jb, x, g->o.ranks);
}

/* ---- arrival heap ----------------------------------------------------------- */

static int64_t arrival(const sw_genx_t *g, const xrank_t *x)
{
    const xjob_t *jb = &g->jobs[x->job];
    return jb->t0 + x->next_at + jb->delay[x->rank / RANKS_PER_HOST];
}

static bool h_less(const sw_genx_t *g, hent_t a, hent_t b)
{
    if (a.key != b.key) return a.key < b.key;
    (void)g;
    return a.xi < b.xi;
}

static void h_push(sw_genx_t *g, hent_t e)
{
    size_t i = g->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!h_less(g, e, g->heap[p])) break;
        g->heap[i] = g->heap[p];
        i = p;
    }
    g->heap[i] = e;
}

static hent_t h_pop(sw_genx_t *g)
{
    hent_t top = g->heap[0], x = g->heap[--g->nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= g->nheap) break;
        if (c + 1 < g->nheap && h_less(g, g->heap[c + 1], g->heap[c])) c++;
        if (!h_less(g, g->heap[c], x)) break;
        g->heap[i] = g->heap[c];
        i = c;
    }
    if (g->nheap) g->heap[i] = x;
    return top;
}

/* ---- jobs ------------------------------------------------------------------------ */

static int death_cmp(const void *pa, const void *pb)
{
    const sw_genx_death_t *a = pa, *b = pb;
    return a->true_ns < b->true_ns ? -1 : a->true_ns > b->true_ns;
}

/* Crash records the arrival order of the markers gives (SPEC 8.6): one,
 * plus one per marker that arrives earlier in time than every one before
 * it; the silent first death of silent-first adds its own. */
static int records_needed(const sw_genx_t *g, const xjob_t *jb)
{
    const sw_genx_truth_t *t = &jb->truth;
    int n = 0;
    int64_t best = INT64_MAX;
    bool used[8] = {false};
    for (size_t round = 0; round < t->n_deaths; round++) {
        size_t pick = SIZE_MAX;
        int64_t at = INT64_MAX;
        for (size_t i = 0; i < t->n_deaths; i++) {
            if (used[i] || t->deaths[i].silent) continue;
            int64_t a = t->deaths[i].true_ns + jb->delay[t->deaths[i].rank / RANKS_PER_HOST];
            if (a < at) {
                at = a;
                pick = i;
            }
        }
        if (pick == SIZE_MAX) break;
        used[pick] = true;
        if (t->deaths[pick].true_ns < best) {
            best = t->deaths[pick].true_ns;
            n++;
        }
    }
    if (t->deaths[0].silent) n++;
    (void)g;
    return n;
}

static void job_setup(sw_genx_t *g, size_t ji, xrank_t *xr)
{
    const sw_genx_opts_t *o = &g->o;
    xjob_t *jb = &g->jobs[ji];
    int64_t R = o->ranks;
    size_t nh = (size_t)((R + RANKS_PER_HOST - 1) / RANKS_PER_HOST);
    snprintf(jb->job_id, sizeof(jb->job_id), "%s-%zu", o->job_prefix, ji);
    jb->t0 = o->start_ns + (int64_t)ji * 1700 * MS_NS;
    jb->skew = sw_calloc(nh, sizeof(int64_t));
    jb->delay = sw_calloc(nh, sizeof(int64_t));
    for (size_t h = 0; h < nh; h++) {
        jb->skew[h] = (int64_t)unif(g, T_SKEW, ji, h, -(double)o->skew_ms, (double)o->skew_ms) *
                      MS_NS;
        jb->delay[h] = (int64_t)unif(g, T_DELAY, ji, h, 0, (double)o->delay_ms) * MS_NS;
    }
    sw_genx_scenario_t sc = o->scenario;
    jb->cap = sc != SW_GENX_NOCAP;
    sw_genx_truth_t *t = &jb->truth;
    memset(t, 0, sizeof(*t));
    t->job_id = jb->job_id;
    t->scenario = sc;
    t->ranks = R;
    t->ranks_per_host = RANKS_PER_HOST;
    t->warn_rank = -1;
    t->host_skew_ns = jb->skew;
    t->host_delay_ns = jb->delay;
    t->n_hosts = nh;
    int64_t iv = o->interval_ms * MS_NS;
    for (int64_t r = 0; r < R; r++) {
        xrank_t *x = &xr[r];
        memset(x, 0, sizeof(*x));
        x->job = (int32_t)ji;
        x->rank = (int32_t)r;
        x->pid = 4000 + r + (int64_t)ji * 100000;
        x->prof = PROF_FLAT;
        x->base = unif(g, T_BASE, ji, (uint64_t)r, 0.55, 0.70);
        x->after = EV_NONE;
    }
    bool crash = sc == SW_GENX_CASCADE || sc == SW_GENX_SILENT_FIRST || sc == SW_GENX_NOCAP;
    if (crash) {
        int64_t v = (int64_t)(h4(o->seed, T_VICTIM, ji, 0) % (uint64_t)R);
        xrank_t *xv = &xr[v];
        jb->bad_slot = v / RANKS_PER_HOST;
        xv->prof = PROF_RAMP;
        xv->base = unif(g, T_BASE, ji, (uint64_t)v, 0.70, 0.78);
        /* 85% to full takes 60-120 s: the ramp from base is that times
         * (1 - base) / 0.15. */
        double r85 = unif(g, T_RAMP, ji, 0, 60.0, 120.0);
        int64_t ramp = (int64_t)(r85 * (1.0 - xv->base) / 0.15 * 1e9);
        xv->t_a = (int64_t)unif(g, T_PRE, ji, 0, 30.0, 40.0) * S_NS;
        xv->t_b = xv->t_a + ramp;
        int64_t t_death = xv->t_b;
        /* Later deaths, 0.05-1.5 s after each other (at most 5 s after the
         * first); silent ones at least an interval plus 0.1 s after it, so
         * that their last sample is later than the first death. */
        int64_t maxk = R - 1 < 4 ? R - 1 : 4;
        int64_t nk = 1 + (int64_t)(h4(o->seed, T_NDEATH, ji, 0) % (uint64_t)maxk);
        size_t nd = 0;
        jb->deaths[nd++] = (sw_genx_death_t){v, sc == SW_GENX_SILENT_FIRST, t_death, 0, 0};
        double delta = 0;
        for (int64_t i = 0; i < nk; i++) {
            int64_t r;
            uint64_t salt = 0;
            bool taken;
            do {
                r = (int64_t)(h4(o->seed, T_DEATHR, ji, (uint64_t)i * 131 + salt++) % (uint64_t)R);
                taken = false;
                for (size_t k = 0; k < nd; k++) taken |= jb->deaths[k].rank == r;
            } while (taken);
            delta += unif(g, T_DELTA, ji, (uint64_t)i, 0.05, 1.5);
            if (delta > 5.0) delta = 5.0 - 0.05 * (double)(nk - i);
            bool silent = u01(h4(o->seed, T_SILENT, ji, (uint64_t)i)) < 0.4;
            double d = delta;
            if (silent && d < (double)o->interval_ms / 1000.0 + 0.1)
                d = (double)o->interval_ms / 1000.0 + 0.1 + 0.01 * (double)i;
            jb->deaths[nd++] = (sw_genx_death_t){r, silent, t_death + (int64_t)(d * 1e9), 0, 0};
        }
        qsort(jb->deaths, nd, sizeof(jb->deaths[0]), death_cmp);
        t->deaths = jb->deaths;
        t->n_deaths = nd;
        /* Delivery delays that need more crash records than SPEC 8.6's
         * generated jobs allow are redrawn (then forced into death order). */
        for (int tries = 0; records_needed(g, jb) > MAX_RECORDS; tries++) {
            for (size_t k = 0; k < nd; k++) {
                size_t h = (size_t)(jb->deaths[k].rank / RANKS_PER_HOST);
                jb->delay[h] = tries < 50
                                   ? (int64_t)unif(g, T_DELAY, ji, h + 7919 * (size_t)(tries + 1),
                                                   0, (double)o->delay_ms) *
                                         MS_NS
                                   : (int64_t)k * MS_NS;
            }
        }
        int64_t wd = t_death + o->watchdog_s * S_NS;
        t->watchdog_true_ns = jb->t0 + wd;
        for (int64_t r = 0; r < R; r++) {
            xrank_t *x = &xr[r];
            x->samples_to = wd;
            x->after = EV_WATCHDOG;
            x->after_at = wd + (int64_t)unif(g, T_WD, ji, (uint64_t)r, 0, 2e9);
        }
        for (size_t k = 0; k < nd; k++) {
            sw_genx_death_t *d = &jb->deaths[k];
            xrank_t *x = &xr[d->rank];
            x->samples_to = d->true_ns;
            x->after = d->silent ? EV_NONE : EV_MARKER;
            x->after_at = d->true_ns;
            int64_t kk = 0;
            while (sample_at(g, x, kk + 1) < d->true_ns) kk++;
            d->last_sample_true_ns = jb->t0 + sample_at(g, x, kk);
            d->timestamp_ns = jb->t0 + d->true_ns + jb->skew[d->rank / RANKS_PER_HOST];
            d->true_ns += jb->t0;
        }
        if (jb->cap) {
            t->warn_rank = v;
            t->warn_by_true_ns = jb->t0 + t_death - 30 * S_NS;
            t->expect_warning = true;
        }
    } else {
        int64_t end = 180 * S_NS;
        for (int64_t r = 0; r < R; r++) {
            xrank_t *x = &xr[r];
            x->samples_to = end;
            x->after = EV_STOP;
            x->after_at = end + (int64_t)unif(g, T_STOP, ji, (uint64_t)r, 0, 2e8);
            uint64_t pick = h4(o->seed, T_PROF, ji, (uint64_t)r);
            bool chosen = (pick % 2 == 0) || r == 0;
            if (sc == SW_GENX_PLATEAU && chosen) {
                x->prof = PROF_PLATEAU;
                x->target = unif(g, T_PROF, ji, (uint64_t)r + 1000000, 0.80, 0.878);
                x->t_a = (int64_t)unif(g, T_PROF, ji, (uint64_t)r + 2000000, 20, 60) * S_NS;
                x->t_b = x->t_a +
                         (int64_t)unif(g, T_PROF, ji, (uint64_t)r + 3000000, 20, 60) * S_NS;
            } else if (sc == SW_GENX_PEAK && chosen) {
                x->prof = PROF_PEAK;
                x->base = unif(g, T_PEAK, ji, (uint64_t)r, 0.80, 0.87);
                x->target = unif(g, T_PEAK, ji, (uint64_t)r + 1000000, 0.89, 0.92);
                x->t_a = (int64_t)unif(g, T_PEAK, ji, (uint64_t)r + 2000000, 20, 40) * S_NS;
                x->t_b = (int64_t)(unif(g, T_PEAK, ji, (uint64_t)r + 3000000, 0.3, 1.8) * 1e9);
            }
        }
        if (sc == SW_GENX_OUTAGE) {
            size_t n = (size_t)(R / 8 > 0 ? R / 8 : 1);
            jb->outages = sw_calloc(n, sizeof(int64_t));
            for (size_t i = 0; i < n; i++) {
                int64_t r = (int64_t)(h4(o->seed, T_OUT, ji, i) % (uint64_t)R);
                xrank_t *x = &xr[r];
                if (x->o_to > x->o_from) continue;
                x->o_from = (int64_t)(unif(g, T_OUT, ji, i + 100, 30, 100) * 1e9);
                x->o_to = x->o_from + (int64_t)(unif(g, T_OUT, ji, i + 200, 3, 20) * 1e9);
                jb->outages[jb->n_out++] = r;
            }
            t->outage_ranks = jb->outages;
            t->n_outages = jb->n_out;
        }
    }
    (void)iv;
}

sw_genx_t *sw_genx_new(const sw_genx_opts_t *o, char *errstr, size_t errstr_size)
{
    if (o->ranks < 2 || o->ranks > 131072) {
        snprintf(errstr, errstr_size, "--ranks %lld: a crash scenario needs 2..131072 ranks",
                 (long long)o->ranks);
        return NULL;
    }
    if (o->jobs < 1 || o->jobs * o->ranks > 262144) {
        snprintf(errstr, errstr_size, "--jobs %lld x --ranks %lld: at most 262144 ranks in all",
                 (long long)o->jobs, (long long)o->ranks);
        return NULL;
    }
    if (o->interval_ms < 50 || o->interval_ms > 1000) {
        snprintf(errstr, errstr_size,
                 "--interval-ms %lld: crash scenarios sample every 50..1000 ms",
                 (long long)o->interval_ms);
        return NULL;
    }
    if (o->skew_ms < 0 || o->skew_ms > 3000 || o->delay_ms < 0 || o->delay_ms > 10000 ||
        o->watchdog_s < 60 || o->watchdog_s > 3600) {
        snprintf(errstr, errstr_size,
                 "crash scenarios take --skew-ms 0..3000, a delivery delay of 0..10000 ms and "
                 "a watchdog of 60..3600 s");
        return NULL;
    }
    int64_t per_job = (o->ranks + RANKS_PER_HOST - 1) / RANKS_PER_HOST;
    if ((o->fleet_hosts != 0 && (o->fleet_hosts < per_job || o->fleet_hosts > 100000)) ||
        (o->bad_host != -1 &&
         (o->fleet_hosts == 0 || o->bad_host < 0 || o->bad_host >= o->fleet_hosts))) {
        snprintf(errstr, errstr_size,
                 "--fleet-hosts %lld / --bad-host %lld: the fleet needs %lld..100000 hosts for "
                 "--ranks %lld, and the bad host one of them (0..fleet-1)",
                 (long long)o->fleet_hosts, (long long)o->bad_host, (long long)per_job,
                 (long long)o->ranks);
        return NULL;
    }
    sw_genx_t *g = sw_calloc(1, sizeof(*g));
    g->o = *o;
    g->nr = (size_t)(o->jobs * o->ranks);
    g->jobs = sw_calloc((size_t)o->jobs, sizeof(*g->jobs));
    g->r = sw_calloc(g->nr, sizeof(*g->r));
    g->heap = sw_calloc(g->nr, sizeof(*g->heap));
    for (size_t j = 0; j < (size_t)o->jobs; j++) job_setup(g, j, &g->r[j * (size_t)o->ranks]);
    for (size_t i = 0; i < g->nr; i++) {
        plan_next(g, &g->r[i]);
        if (g->r[i].next_kind != EV_NONE) h_push(g, (hent_t){arrival(g, &g->r[i]), (uint32_t)i});
    }
    return g;
}

void sw_genx_destroy(sw_genx_t *g)
{
    if (!g) return;
    for (size_t j = 0; j < (size_t)g->o.jobs; j++) {
        free(g->jobs[j].skew);
        free(g->jobs[j].delay);
        free(g->jobs[j].outages);
    }
    free(g->jobs);
    free(g->r);
    free(g->heap);
    free(g);
}

bool sw_genx_next(sw_genx_t *g, sw_buf_t *out)
{
    if (!g->nheap) return false;
    hent_t e = h_pop(g);
    xrank_t *x = &g->r[e.xi];
    emit(g, x, out);
    plan_next(g, x);
    if (x->next_kind != EV_NONE) h_push(g, (hent_t){arrival(g, x), e.xi});
    return true;
}

const sw_genx_truth_t *sw_genx_truth(const sw_genx_t *g, size_t job)
{
    return job < (size_t)g->o.jobs ? &g->jobs[job].truth : NULL;
}

void sw_genx_truth_json(const sw_genx_truth_t *t, sw_buf_t *out)
{
    sw_buf_printf(out, "{\"job_id\": \"%s\", \"scenario\": \"%s\", \"ranks\": %lld, ", t->job_id,
                  sw_genx_scenario_str(t->scenario), (long long)t->ranks);
    if (t->n_deaths)
        sw_buf_printf(out, "\"first_death_rank\": %lld, \"first_death_true_ns\": %lld, ",
                      (long long)t->deaths[0].rank, (long long)t->deaths[0].true_ns);
    else sw_buf_puts(out, "\"first_death_rank\": null, \"first_death_true_ns\": null, ");
    sw_buf_puts(out, "\"deaths\": [");
    for (size_t i = 0; i < t->n_deaths; i++)
        sw_buf_printf(out,
                      "%s{\"rank\": %lld, \"cause\": \"%s\", \"true_ns\": %lld, \"timestamp_ns\": "
                      "%lld, \"last_sample_true_ns\": %lld}",
                      i ? ", " : "", (long long)t->deaths[i].rank,
                      t->deaths[i].silent ? "silent" : "oom", (long long)t->deaths[i].true_ns,
                      (long long)t->deaths[i].timestamp_ns,
                      (long long)t->deaths[i].last_sample_true_ns);
    sw_buf_puts(out, "], ");
    if (t->warn_rank >= 0)
        sw_buf_printf(out, "\"warn_rank\": %lld, \"warn_by_true_ns\": %lld, ",
                      (long long)t->warn_rank, (long long)t->warn_by_true_ns);
    else sw_buf_puts(out, "\"warn_rank\": null, \"warn_by_true_ns\": null, ");
    sw_buf_printf(out, "\"expect_warning\": %s, \"watchdog_true_ns\": ",
                  t->expect_warning ? "true" : "false");
    if (t->watchdog_true_ns) sw_buf_printf(out, "%lld", (long long)t->watchdog_true_ns);
    else sw_buf_puts(out, "null");
    sw_buf_printf(out, ", \"ranks_per_host\": %lld, \"host_skew_ns\": [",
                  (long long)t->ranks_per_host);
    for (size_t h = 0; h < t->n_hosts; h++)
        sw_buf_printf(out, "%s%lld", h ? ", " : "", (long long)t->host_skew_ns[h]);
    sw_buf_puts(out, "], \"host_delay_ns\": [");
    for (size_t h = 0; h < t->n_hosts; h++)
        sw_buf_printf(out, "%s%lld", h ? ", " : "", (long long)t->host_delay_ns[h]);
    sw_buf_puts(out, "], \"outage_ranks\": [");
    for (size_t i = 0; i < t->n_outages; i++)
        sw_buf_printf(out, "%s%lld", i ? ", " : "", (long long)t->outage_ranks[i]);
    sw_buf_puts(out, "]}\n");
}
