/*
 * The synthetic telemetry generator (see sw_gen.h). Every random value is a
 * hash of (seed, job, rank, index, purpose), so any sample can be computed
 * on its own. Events leave through a heap over ranks keyed by arrival time;
 * each rank queues a few produced events. No I/O, no clock, no globals.
 */
#include "sw_gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_analysis.h"

#define MIB ((int64_t)1 << 20)
#define GIB ((int64_t)1 << 30)
#define MS_NS ((int64_t)1000000)

#define MAX_RANKS 131072
#define MAX_SAMPLES 100000000
#define MAX_JOBS 100000
#define MAX_TOTAL_RANKS 262144
#define MAX_STORMS 10000
#define MAX_TRUTH 1048576
#define MAX_MS 3600000
#define MAX_PREFIX 64

#define BASE_MIN (28 * GIB) /* model + optimizer state, per rank */
#define BASE_MAX (36 * GIB)
#define SAW_MIN (1434 * MIB) /* activation sawtooth of one training step */
#define SAW_MAX (1638 * MIB)
#define NOISE (24 * MIB)      /* uniform noise, +-NOISE */
#define CTX_BYTES (512 * MIB) /* device_used - allocator_reserved */
#define FRAG_MIN (192 * MIB)  /* allocator_reserved - allocator_allocated */
#define FRAG_SPAN (128 * MIB)
#define STEP_SAMPLES 10 /* samples per training step */
#define FWD_SAMPLES 5   /* the forward phase: first half of a step */
#define HOLD_MS 3000    /* a storm holds ~3 s, then memory drops back */
#define NET_MAX_NS (5 * MS_NS)
#define STORM_BYTES_MIN (2 * GIB)
#define STORM_BYTES_MAX (40 * GIB)
#define PID_BASE 4000

/* Purposes of random draws: one hash stream each. */
enum {
    T_START = 1,
    T_SKEW,
    T_BASE,
    T_AMP,
    T_JIT,
    T_NOISE,
    T_FRAG,
    T_NET,
    T_LATE,
    T_LATE_BY,
    T_DUP,
    T_DUP_BY,
    T_SPREAD,
    T_RISE_LEN,
    T_RISE_FIRST,
    T_RISE_MID,
    T_STORM_RANK,
    T_CLIMB,
    T_LOW,
    T_LOSS,   /* the field's cases (issue 36): new streams after the others, */
    T_GAP_AT, /* so that earlier options draw what they drew */
    T_GAP_LEN
};

#define OVERLAP_MAX_STORMS 64 /* --overlap: every rank keeps a plan per storm */
#define GAPS_MAX 8            /* --gaps */
#define GAP_MIN_MS 2000       /* a collector gap lasts 2-5 s */
#define GAP_SPAN_MS 3000

#define RISE_MAX 8            /* --rise-samples */
#define RESTART_LOW (1 * GIB) /* device memory of a process that just started */
#define LEAK_BYTES (6 * GIB)  /* a slow leak's rise */
#define LEAK_MS 60000         /* over this long */
#define QUIET_MS 10000        /* restarts and leaks end this long before a storm */
#define INC_PID_STEP 500000   /* pid of a restarted process: + this */

typedef enum gkind_e {
    GK_SAMPLE = 0,
    GK_FWD_ENTER,
    GK_FWD_EXIT,
    GK_BWD_ENTER,
    GK_BWD_EXIT
} gkind_t;

/* One generated event, not yet formatted. */
typedef struct gev_s {
    int64_t arrival_ns;                        /* true time + network delay (+ late delay) */
    uint64_t order;                            /* production order within the rank (tie-break) */
    int64_t true_ns;                           /* on the common clock */
    int64_t ts_ns;                             /* raw timestamp: true time + the rank's skew */
    int64_t used, reserved, allocated, change; /* bytes (samples only) */
    int64_t step;                              /* training step (phase events) */
    int64_t seq;                               /* phase_scope.sequence */
    uint8_t kind;                              /* gkind_t */
    bool dup;                                  /* a re-emitted copy */
    bool late;                                 /* delayed by 2-5 intervals */
    uint8_t inc;                               /* process incarnation (restarts) */
} gev_t;

/* A rank's plan for one storm, in sample indexes. */
typedef struct gplan_s {
    int64_t storm;       /* storm index; >= opts.storms: no more storms */
    int64_t h;           /* first rising sample */
    int len;             /* rising samples, 2 or 3 (or --rise-samples) */
    int64_t v[RISE_MAX]; /* device_used of the rising samples */
    int64_t elev;        /* bytes added to the normal pattern while holding */
    int64_t v0;          /* device_used of the sample before the rise (normal pattern) */
    int64_t drop;        /* first sample back to the normal pattern */
} gplan_t;

typedef struct grank_s {
    uint64_t key; /* hash key of (seed, job, rank) */
    int32_t job, rank;
    int64_t start_ns;   /* true time of sample 0 before jitter */
    int64_t skew_ns;    /* added to every raw timestamp */
    int64_t base, amp;  /* baseline and sawtooth amplitude, bytes */
    int64_t next_i;     /* next sample to produce */
    int ph;             /* phase events already produced before next_i */
    bool closed;        /* the final phase exit was produced */
    int64_t seq;        /* last phase sequence number */
    uint64_t order;     /* events produced */
    bool has_prev;      /* prev_alloc is set */
    int64_t prev_alloc; /* allocator_allocated_bytes of the previous sample */
    gplan_t plan;       /* current or next storm */
    int64_t restart_i;  /* sample where the new process starts, -1 none */
    int64_t climb;      /* its samples of climbing */
    int64_t leak_i;     /* first leaking sample, -1 none */
    int64_t leak_n;     /* leaking samples */
    int64_t late_ns;    /* every arrival this late (a late collector) */
    gplan_t *ov;        /* --overlap: the plan of every storm, NULL otherwise */
    int64_t *gap;       /* --gaps: [2 * gaps] first sample and length of each, NULL none */
    bool has_next;      /* next holds the produced, unqueued event */
    gev_t next;
    gev_t *pend; /* min-heap by (arrival, order, dup) */
    uint32_t npend, cap;
} grank_t;

typedef struct hent_s {
    int64_t arrival_ns;
    uint32_t idx;
} hent_t;

struct sw_gen_s {
    sw_gen_opts_t opts;
    char *prefix;     /* owned copy of opts.job_prefix */
    char *job_id_buf; /* all job ids, NUL-separated */
    char **job_ids;   /* into job_id_buf */
    size_t *job_id_len;
    size_t max_job_id_len;
    int64_t interval_ns;
    double jit_ns; /* max |jitter| */
    int64_t skew_ns;
    int64_t spread_ns;
    int64_t hold;        /* samples a storm holds */
    int64_t first_onset; /* sample of the first storm on the storm rank */
    int64_t spacing;     /* samples between storms */
    int64_t hosts_per_job;
    uint64_t seed_key;
    grank_t *ranks; /* jobs * ranks, job-major */
    size_t nranks;
    hent_t *heap; /* ranks with queued events, by (arrival, idx) */
    size_t nheap;
    sw_gen_storm_t *truth;
    size_t ntruth;
    sw_gen_other_t *other;
    size_t nother;
    sw_gen_stats_t st;
};

/* ---- randomness ---------------------------------------------------------- */

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* splitmix64 output number idx of the stream (key, tag). */
static inline uint64_t rnd(uint64_t key, uint64_t idx, uint64_t tag)
{
    return mix64(key + idx * 0x9e3779b97f4a7c15ULL + tag * 0xd1b54a32d192ed03ULL);
}

/* Uniform in [0, 1). */
static inline double u01(uint64_t r)
{
    return (double)(r >> 11) * (1.0 / 9007199254740992.0);
}

/* ---- the model ----------------------------------------------------------- */

static inline int64_t sample_true_ns(const sw_gen_t *gen, const grank_t *rk, int64_t i)
{
    double u = u01(rnd(rk->key, (uint64_t)i, T_JIT));
    return rk->start_ns + i * gen->interval_ns + (int64_t)llround((2.0 * u - 1.0) * gen->jit_ns);
}

/* True time of the phase boundary before sample i: halfway from sample
 * i-1, so jitter (< 0.45 interval) never moves a sample across it. */
static inline int64_t boundary_true_ns(const sw_gen_t *gen, const grank_t *rk, int64_t i)
{
    return rk->start_ns + i * gen->interval_ns - gen->interval_ns / 2;
}

/* Baseline + sawtooth + noise. A strictly rising run of it rises by at
 * most amp + 2 * NOISE < 1.7 GiB, below 10% of the 28 GiB minimum
 * baseline: normal dynamics never make a qualifying spike (SPEC 3.3). */
static inline int64_t normal_used(const grank_t *rk, int64_t i)
{
    int64_t saw = rk->amp * (i % STEP_SAMPLES) / (STEP_SAMPLES - 1);
    int64_t noise = (int64_t)(u01(rnd(rk->key, (uint64_t)i, T_NOISE)) * (double)(2 * NOISE + 1)) -
                    NOISE;
    return rk->base + saw + noise;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* Threshold of SPEC 3.3 for a rank whose largest device_used is max_used. */
static int64_t spike_threshold(int64_t max_used)
{
    return max64(SW_DEFAULT_SPIKE_MIN_BYTES,
                 (int64_t)((double)max_used * SW_DEFAULT_SPIKE_FRACTION));
}

static int64_t ring_distance(int64_t a, int64_t b, int64_t n)
{
    int64_t d = a > b ? a - b : b - a;
    return n - d < d ? n - d : d;
}

static void storm_plan(const sw_gen_t *gen, const grank_t *rk, int64_t k, gplan_t *pl);

/* --overlap: storm k reaches a rank no sooner than 2 samples after the
 * previous storm's rise on it ends (nor rises into it): a rank hit by two
 * storms rises twice, with a pause between (two rises back to back on one
 * sample are one rise, whatever caused them). */
static int64_t overlap_clear(const sw_gen_t *gen, const grank_t *rk, int64_t k, int64_t h)
{
    if (!gen->opts.overlap || k == 0) return h;
    gplan_t pp;
    storm_plan(gen, rk, k - 1, &pp);
    if (pp.h < pp.drop && h + RISE_MAX + 2 > pp.h && h < pp.h + pp.len + 2) h = pp.h + pp.len + 2;
    return h;
}

/*
 * The plan of storm k on rk. The rise goes from v0 = normal(h-1) to
 * v0 + storm_bytes; the first step alone crosses the rank's threshold (an
 * upper bound of it), so the analysis puts the spike on sample h, and the
 * rest of the rise stays below a lower bound of it, so a window that has
 * lost sample h finds no spike in what remains. The hold level stays below
 * the peak, so the rising run ends there.
 */
static void storm_plan(const sw_gen_t *gen, const grank_t *rk, int64_t k, gplan_t *pl)
{
    memset(pl, 0, sizeof(*pl));
    pl->storm = k;
    if (k >= gen->opts.storms) {
        pl->h = pl->drop = INT64_MAX;
        return;
    }
    const sw_gen_storm_t *t = &gen->truth[(size_t)rk->job * (size_t)gen->opts.storms + (size_t)k];
    uint64_t kk = (uint64_t)k;
    int64_t h;
    int64_t off = ((int64_t)rk->rank - t->rank + gen->opts.ranks) % gen->opts.ranks;
    if (gen->opts.lone && rk->rank != t->rank) {
        /* A lone spike: this storm never reaches the rank (a plan that is
         * over before it starts; the next storm's comes after it). */
        pl->h = pl->drop = 0;
        return;
    }
    if (rk->rank == t->rank) {
        h = t->onset_sample;
    } else if (off < gen->opts.tie_ranks) {
        /* tied: hit on the storm rank's own sample time */
        h = (t->onset_true_ns - rk->start_ns) / gen->interval_ns - 1;
        if (h < 1) h = 1;
        while (sample_true_ns(gen, rk, h) < t->onset_true_ns) h++;
    } else {
        int64_t d = ring_distance(rk->rank, t->rank, gen->opts.ranks);
        double delay = (double)gen->spread_ns * (1.0 + (double)d / 8.0) +
                       u01(rnd(rk->key, kk, T_SPREAD)) * (double)gen->spread_ns / 2.0;
        int64_t hit = t->onset_true_ns + (int64_t)delay;
        h = (hit - rk->start_ns) / gen->interval_ns - 1;
        if (h < 1) h = 1;
        while (sample_true_ns(gen, rk, h) < hit) h++;
    }
    h = overlap_clear(gen, rk, k, h);
    int64_t storm = gen->opts.storm_bytes;
    int64_t v0 = normal_used(rk, h - 1);
    /* Overlapping storms may stack on a rank: its peak (and threshold) is
     * then that of two storms. */
    int64_t stack = gen->opts.overlap ? 2 : 1;
    int64_t thr_hi = spike_threshold(rk->base + rk->amp + NOISE + stack * storm) + MIB;
    int64_t thr_lo = spike_threshold(rk->base - NOISE + storm) - MIB;
    int64_t lo = max64(thr_hi, storm - thr_lo + MIB), hi = storm - 2 * MIB;
    int64_t first = lo <= hi ? lo + (int64_t)((double)(hi - lo) * 0.5 *
                                              u01(rnd(rk->key, kk, T_RISE_FIRST)))
                             : storm / 10 * 6; /* too small to be sure of detection */
    pl->h = h;
    pl->v0 = v0;
    if (gen->opts.rise_samples > 0) {
        /* Equal steps: the crossing sample moves as the window's maximum
         * (and with it the threshold) grows during the rise. */
        pl->len = (int)gen->opts.rise_samples;
        for (int q = 0; q < pl->len; q++) pl->v[q] = v0 + storm * (q + 1) / pl->len;
        pl->elev = storm - (rk->amp + 2 * NOISE + MIB);
        pl->drop = h + pl->len + gen->hold;
        return;
    }
    pl->len = 2 + (int)(rnd(rk->key, kk, T_RISE_LEN) & 1);
    pl->v[0] = v0 + first;
    if (pl->len == 3) {
        double f = 0.3 + 0.4 * u01(rnd(rk->key, kk, T_RISE_MID));
        pl->v[1] = v0 + first + max64(1, (int64_t)((double)(storm - first) * f));
    }
    pl->v[pl->len - 1] = v0 + storm;
    pl->elev = storm - (rk->amp + 2 * NOISE + MIB);
    pl->drop = h + pl->len + gen->hold;
}

/* --overlap: the normal pattern plus what every storm adds at sample i.
 * A rise reaches its planned values over whatever the other storms add
 * (its first step alone still crosses the threshold, planned for two
 * stacked storms); a hold adds its elevation. */
static int64_t overlap_used(const sw_gen_t *gen, const grank_t *rk, int64_t i)
{
    int64_t normal = normal_used(rk, i), used = normal;
    bool rising = false;
    for (int64_t k = 0; k < gen->opts.storms; k++) {
        const gplan_t *pl = &rk->ov[k];
        if (i < pl->h || i >= pl->drop) continue;
        if (i < pl->h + pl->len) {
            used += pl->v[i - pl->h] - (rising ? pl->v0 : normal);
            rising = true;
        } else {
            used += pl->elev;
        }
    }
    return used;
}

static int64_t sample_used(const sw_gen_t *gen, grank_t *rk, int64_t i)
{
    if (rk->restart_i >= 0 && i >= rk->restart_i && i < rk->restart_i + rk->climb) {
        /* A new process: from ~1 GiB strictly up to its working set. */
        int64_t low = RESTART_LOW + (int64_t)(rnd(rk->key, 0, T_LOW) % (uint64_t)(256 * MIB));
        int64_t target = normal_used(rk, rk->restart_i + rk->climb);
        return low + (target - low) * (i - rk->restart_i + 1) / (rk->climb + 1);
    }
    if (rk->leak_i >= 0 && i >= rk->leak_i && i < rk->leak_i + rk->leak_n)
        return normal_used(rk, rk->leak_i) + LEAK_BYTES * (i - rk->leak_i + 1) / rk->leak_n;
    if (rk->ov) return overlap_used(gen, rk, i);
    while (i >= rk->plan.drop) storm_plan(gen, rk, rk->plan.storm + 1, &rk->plan);
    if (i < rk->plan.h) return normal_used(rk, i);
    if (i < rk->plan.h + rk->plan.len) return rk->plan.v[i - rk->plan.h];
    return normal_used(rk, i) + rk->plan.elev;
}

static bool phase_event(grank_t *rk, gev_t *ev, gkind_t kind, int64_t step, int64_t true_ns)
{
    memset(ev, 0, sizeof(*ev));
    ev->kind = (uint8_t)kind;
    ev->order = rk->order++;
    ev->step = step;
    ev->seq = ++rk->seq;
    ev->true_ns = true_ns;
    ev->ts_ns = true_ns + rk->skew_ns;
    ev->inc = rk->restart_i >= 0 && rk->next_i >= rk->restart_i;
    ev->arrival_ns = true_ns + rk->late_ns +
                     (int64_t)(rnd(rk->key, ev->order, T_NET) % (uint64_t)(NET_MAX_NS + 1));
    return true;
}

/* Whether sample i of rk is lost: to --loss, or inside one of its
 * collector gaps (--gaps). */
static bool rank_lost(const sw_gen_t *gen, const grank_t *rk, int64_t i)
{
    if (gen->opts.loss > 0 && u01(rnd(rk->key, (uint64_t)i, T_LOSS)) < gen->opts.loss) return true;
    for (int64_t g = 0; rk->gap && g < gen->opts.gaps; g++)
        if (i >= rk->gap[2 * g] && i < rk->gap[2 * g] + rk->gap[2 * g + 1]) return true;
    return false;
}

/*
 * Produce the rank's next event in true-time order: per sample, the phase
 * boundaries before it (forward enters at the start of a step, backward at
 * its half), then the sample; after the last sample, the exit of the open
 * scope. @returns false when the rank has nothing more.
 */
static bool rank_produce(const sw_gen_t *gen, grank_t *rk, gev_t *ev)
{
    const int64_t n = gen->opts.samples;
    int64_t i = rk->next_i;
    if (i >= n) {
        if (!gen->opts.phases || rk->closed) return false;
        rk->closed = true;
        int64_t p = n % STEP_SAMPLES;
        gkind_t kind = p >= 1 && p <= FWD_SAMPLES ? GK_FWD_EXIT : GK_BWD_EXIT;
        return phase_event(rk, ev, kind, (n - 1) / STEP_SAMPLES, boundary_true_ns(gen, rk, n));
    }
    if (gen->opts.phases) {
        int64_t p = i % STEP_SAMPLES, step = i / STEP_SAMPLES;
        if (p == 0) {
            if (rk->ph == 0) {
                rk->ph = 1;
                if (i > 0)
                    return phase_event(rk, ev, GK_BWD_EXIT, step - 1, boundary_true_ns(gen, rk, i));
            }
            if (rk->ph == 1) {
                rk->ph = 2;
                return phase_event(rk, ev, GK_FWD_ENTER, step, boundary_true_ns(gen, rk, i) + 1);
            }
        } else if (p == FWD_SAMPLES) {
            if (rk->ph == 0) {
                rk->ph = 1;
                return phase_event(rk, ev, GK_FWD_EXIT, step, boundary_true_ns(gen, rk, i));
            }
            if (rk->ph == 1) {
                rk->ph = 2;
                return phase_event(rk, ev, GK_BWD_ENTER, step, boundary_true_ns(gen, rk, i) + 1);
            }
        }
    }
    if ((gen->opts.loss > 0 || rk->gap) && rank_lost(gen, rk, i)) {
        /* Lost (--loss, --gaps): never sent; phase events still are. The
         * next sample that is not lost comes next (one call deep). */
        while (i < n && rank_lost(gen, rk, i)) i++;
        rk->next_i = i;
        rk->ph = 0;
        return rank_produce(gen, rk, ev);
    }
    memset(ev, 0, sizeof(*ev));
    ev->kind = GK_SAMPLE;
    ev->order = rk->order++;
    ev->true_ns = sample_true_ns(gen, rk, i);
    ev->ts_ns = ev->true_ns + rk->skew_ns;
    ev->used = sample_used(gen, rk, i);
    ev->inc = rk->restart_i >= 0 && i >= rk->restart_i;
    ev->reserved = ev->used - CTX_BYTES;
    ev->allocated = ev->reserved - FRAG_MIN -
                    (int64_t)(rnd(rk->key, (uint64_t)i, T_FRAG) % (uint64_t)FRAG_SPAN);
    ev->change = rk->has_prev ? ev->allocated - rk->prev_alloc : 0;
    rk->has_prev = true;
    rk->prev_alloc = ev->allocated;
    ev->arrival_ns = ev->true_ns + rk->late_ns +
                     (int64_t)(rnd(rk->key, ev->order, T_NET) % (uint64_t)(NET_MAX_NS + 1));
    if (gen->opts.late > 0 && u01(rnd(rk->key, ev->order, T_LATE)) < gen->opts.late) {
        double by = (2.0 + 3.0 * u01(rnd(rk->key, ev->order, T_LATE_BY))) *
                    (double)gen->interval_ns;
        ev->arrival_ns += (int64_t)by;
        ev->late = true;
    }
    rk->next_i = i + 1;
    rk->ph = 0;
    return true;
}

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
        rk->has_next = rank_produce(gen, rk, &rk->next);
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

/* ---- formatting ---------------------------------------------------------- */

static const char dig2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static inline int dec_digits(uint64_t v)
{
    int n = 1;
    while (v >= 10000) {
        v /= 10000;
        n += 4;
    }
    return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* Digits written in place from the end, two at a time. */
static inline char *put_u64(char *p, uint64_t v)
{
    char *e = p + dec_digits(v), *q = e;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        q -= 2;
        q[0] = dig2[d];
        q[1] = dig2[d + 1];
    }
    if (v >= 10) {
        q[-2] = dig2[v * 2];
        q[-1] = dig2[v * 2 + 1];
    } else {
        q[-1] = (char)('0' + v);
    }
    return e;
}

static inline char *put_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

#define PUT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) += sizeof(lit) - 1)

/* Longest line without the job id: literals ~700 bytes plus 20 integers. */
#define LINE_MAX_BYTES 1400

static char *put_phase_meta(char *p, const grank_t *rk, const gev_t *ev)
{
    bool enter = ev->kind == GK_FWD_ENTER || ev->kind == GK_BWD_ENTER;
    bool fwd = ev->kind == GK_FWD_ENTER || ev->kind == GK_FWD_EXIT;
    PUT(p, "{\"phase_scope\": {\"action\": \"");
    if (enter) PUT(p, "enter");
    else PUT(p, "exit");
    if (fwd) PUT(p, "\", \"name\": \"forward\", \"path\": [\"train\", \"forward\"]");
    else PUT(p, "\", \"name\": \"backward\", \"path\": [\"train\", \"backward\"]");
    PUT(p, ", \"depth\": 2, \"scope_id\": \"s-");
    p = put_u64(p, (uint64_t)rk->job);
    *p++ = '-';
    p = put_u64(p, (uint64_t)rk->rank);
    *p++ = '-';
    p = put_u64(p, (uint64_t)ev->step);
    if (fwd) PUT(p, "-fwd");
    else PUT(p, "-bwd");
    PUT(p,
        "\", \"parent_scope_id\": null, \"thread_id\": 1, \"thread_name\": \"MainThread\", "
        "\"sequence\": ");
    p = put_i64(p, ev->seq);
    PUT(p, "}}");
    return p;
}

static void format_event(const sw_gen_t *gen, const grank_t *rk, const gev_t *ev, sw_buf_t *out)
{
    sw_buf_reserve(out, LINE_MAX_BYTES + gen->max_job_id_len);
    char *p = out->data + out->len;
    const int64_t ranks = gen->opts.ranks;
    int64_t local = rk->rank % 8;
    int64_t host = (int64_t)rk->job * gen->hosts_per_job + rk->rank / 8;
    if (gen->opts.fleet_hosts > 0) {
        int64_t bad_slot = gen->opts.storms > 0 ? gen->truth[rk->job * gen->opts.storms].rank / 8
                                                : 0;
        host = sw_gen_fleet_host(rk->job, rk->rank / 8, gen->hosts_per_job, gen->opts.fleet_hosts,
                                 gen->opts.bad_host, bad_slot);
    }
    bool v4 = gen->opts.schema_version >= 4;
    PUT(p, "{\"schema_version\": ");
    p = put_i64(p, gen->opts.schema_version);
    PUT(p, ", \"timestamp_ns\": ");
    p = put_i64(p, ev->ts_ns);
    switch ((gkind_t)ev->kind) {
    case GK_SAMPLE: PUT(p, ", \"event_type\": \"sample\""); break;
    case GK_FWD_ENTER:
    case GK_BWD_ENTER: PUT(p, ", \"event_type\": \"phase_enter\""); break;
    case GK_FWD_EXIT:
    case GK_BWD_EXIT: PUT(p, ", \"event_type\": \"phase_exit\""); break;
    }
    PUT(p, ", \"collector\": \"stormlog.cuda_tracker\", \"sampling_interval_ms\": ");
    p = put_i64(p, gen->opts.interval_ms);
    PUT(p, ", \"pid\": ");
    p = put_i64(p, PID_BASE + (int64_t)rk->job * ranks + rk->rank + ev->inc * INC_PID_STEP);
    PUT(p, ", \"host\": \"node-");
    if (host < 100) *p++ = '0';
    if (host < 10) *p++ = '0';
    p = put_i64(p, host);
    PUT(p, "\", \"device_id\": ");
    p = put_i64(p, local);
    if (v4) {
        /* A v4 backend that reads device memory only (NVML), no allocator. */
        PUT(p,
            ", \"allocator_allocated_bytes\": null, \"allocator_reserved_bytes\": null, "
            "\"allocator_active_bytes\": null, \"allocator_inactive_bytes\": null, "
            "\"allocator_change_bytes\": null");
    } else {
        PUT(p, ", \"allocator_allocated_bytes\": ");
        p = put_i64(p, ev->allocated);
        PUT(p, ", \"allocator_reserved_bytes\": ");
        p = put_i64(p, ev->reserved);
        PUT(p,
            ", \"allocator_active_bytes\": null, \"allocator_inactive_bytes\": null, "
            "\"allocator_change_bytes\": ");
        p = put_i64(p, ev->change);
    }
    PUT(p, ", \"device_used_bytes\": ");
    p = put_i64(p, ev->used);
    PUT(p, ", \"device_free_bytes\": ");
    p = put_i64(p, SW_GEN_DEVICE_TOTAL_BYTES - ev->used);
    PUT(p, ", \"device_total_bytes\": ");
    p = put_i64(p, SW_GEN_DEVICE_TOTAL_BYTES);
    PUT(p, ", \"context\": null, \"metadata\": ");
    if (ev->kind != GK_SAMPLE) p = put_phase_meta(p, rk, ev);
    else if (!v4) PUT(p, "{}");
    else
        PUT(p,
            "{\"memory_capabilities\": {\"backend\": \"cuda\", \"telemetry_collector\": "
            "\"stormlog.tracker\", \"sampling_source\": \"nvml\", "
            "\"supports_allocator_allocated\": false, \"supports_allocator_reserved\": false, "
            "\"supports_allocator_active\": false, \"supports_allocator_inactive\": false, "
            "\"supports_device_used\": true, \"supports_device_free\": true, "
            "\"supports_device_total\": true}}");
    PUT(p, ", \"job_id\": \"");
    size_t jl = gen->job_id_len[rk->job];
    memcpy(p, gen->job_ids[rk->job], jl);
    p += jl;
    PUT(p, "\", \"rank\": ");
    p = put_i64(p, rk->rank);
    PUT(p, ", \"local_rank\": ");
    p = put_i64(p, local);
    PUT(p, ", \"world_size\": ");
    p = put_i64(p, ranks);
    PUT(p, ", \"session_id\": \"sess-");
    p = put_i64(p, rk->job);
    *p++ = '-';
    p = put_i64(p, rk->rank);
    if (ev->inc) PUT(p, "-r1");
    PUT(p, "\"}\n");
    out->len = (size_t)(p - out->data);
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

int64_t sw_gen_fleet_host(int64_t job, int64_t slot, int64_t per_job, int64_t fleet,
                          int64_t bad_host, int64_t bad_slot)
{
    if (bad_host < 0) return (job * per_job + slot) % fleet;
    if (slot == bad_slot) return bad_host;
    if (fleet < 2) return bad_host;
    /* the other slots rotate over the fleet without the bad host */
    int64_t i = slot < bad_slot ? slot : slot - 1;
    int64_t k = (job * (per_job - 1) + i) % (fleet - 1);
    return k < bad_host ? k : k + 1;
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

static void rank_init(sw_gen_t *gen, grank_t *rk, int32_t job, int32_t rank)
{
    memset(rk, 0, sizeof(*rk));
    rk->job = job;
    rk->rank = rank;
    rk->restart_i = rk->leak_i = -1;
    rk->key = mix64(gen->seed_key ^ mix64(((uint64_t)(uint32_t)job << 32) | (uint32_t)rank));
    rk->start_ns = gen->opts.start_ns +
                   (int64_t)(u01(rnd(rk->key, 0, T_START)) * (double)gen->interval_ns);
    rk->skew_ns = (int64_t)llround((2.0 * u01(rnd(rk->key, 0, T_SKEW)) - 1.0) *
                                   (double)gen->skew_ns);
    rk->base = BASE_MIN + (int64_t)(u01(rnd(rk->key, 0, T_BASE)) * (double)(BASE_MAX - BASE_MIN));
    rk->amp = SAW_MIN + (int64_t)(u01(rnd(rk->key, 0, T_AMP)) * (double)(SAW_MAX - SAW_MIN));
}

/* Restarts and leaks (on ranks counted from the middle of the ring, away
 * from the default storm rank) and the late collectors of storm ranks. */
static void others_build(sw_gen_t *gen)
{
    const sw_gen_opts_t *o = &gen->opts;
    int64_t nr = o->job_restart ? o->ranks : o->restarts;
    gen->other = sw_calloc((size_t)(o->jobs * (nr + o->leaks)) + 1, sizeof(*gen->other));
    int64_t r_at = (int64_t)(o->restart_at * (double)o->samples);
    int64_t l_at = (int64_t)(o->leak_at * (double)o->samples);
    int64_t leak_n = LEAK_MS / o->interval_ms < 20 ? 20 : LEAK_MS / o->interval_ms;
    for (int64_t j = 0; j < o->jobs; j++) {
        grank_t *job = &gen->ranks[j * o->ranks];
        for (int64_t k = 0; k < nr + o->leaks; k++) {
            bool leak = k >= nr;
            int64_t r = o->job_restart && !leak ? k
                                                : (o->ranks / 2 + (leak ? k - nr : k)) % o->ranks;
            grank_t *rk = &job[r];
            sw_gen_other_t *t = &gen->other[gen->nother++];
            t->job_id = gen->job_ids[j];
            t->job = j;
            t->rank = r;
            if (leak) {
                rk->leak_i = l_at;
                rk->leak_n = leak_n;
                t->kind = SW_GEN_LEAK;
                t->start_timestamp_ns = sample_true_ns(gen, rk, l_at) + rk->skew_ns;
                t->end_timestamp_ns = sample_true_ns(gen, rk, l_at + leak_n - 1) + rk->skew_ns;
            } else {
                rk->restart_i = r_at;
                rk->climb = 5 + (int64_t)(rnd(rk->key, 0, T_CLIMB) % 6);
                t->kind = SW_GEN_RESTART;
                t->start_timestamp_ns = sample_true_ns(gen, rk, r_at) + rk->skew_ns;
                t->end_timestamp_ns = sample_true_ns(gen, rk, r_at + rk->climb - 1) + rk->skew_ns;
            }
        }
        for (int64_t k = 0; k < o->storms; k++)
            job[gen->truth[j * o->storms + k].rank].late_ns = o->late_first_ms * MS_NS;
    }
}

/* Storm ranks and onsets first (every plan needs its storm's onset), then
 * the earliest other rank of each storm. */
static void truth_build(sw_gen_t *gen)
{
    const sw_gen_opts_t *o = &gen->opts;
    int64_t def_rank = o->ranks >= 4 ? 3 : o->ranks - 1;
    for (int64_t j = 0; j < o->jobs; j++) {
        uint64_t job_key = mix64(gen->seed_key ^ mix64(((uint64_t)j << 32) | 0xffffffffULL));
        for (int64_t k = 0; k < o->storms; k++) {
            sw_gen_storm_t *t = &gen->truth[j * o->storms + k];
            t->job_id = gen->job_ids[j];
            t->job = j;
            t->storm = k;
            t->rank = o->storm_rank >= 0 ? o->storm_rank
                      : o->storm_rank == SW_GEN_STORM_RANK_RANDOM
                          ? (int64_t)(rnd(job_key, (uint64_t)k, T_STORM_RANK) % (uint64_t)o->ranks)
                          : def_rank;
            const grank_t *rs = &gen->ranks[j * o->ranks + t->rank];
            t->onset_sample = overlap_clear(gen, rs, k, gen->first_onset + k * gen->spacing);
            t->onset_true_ns = sample_true_ns(gen, rs, t->onset_sample);
            t->onset_timestamp_ns = t->onset_true_ns + rs->skew_ns;
        }
    }
    for (size_t n = 0; n < gen->ntruth; n++) {
        sw_gen_storm_t *t = &gen->truth[n];
        int64_t best_true = INT64_MAX;
        t->first_hit_rank = -1;
        t->first_hit_timestamp_ns = -1;
        t->tie_ranks = o->tie_ranks > 1 ? o->tie_ranks : 1;
        t->end_true_ns = t->onset_true_ns;
        for (int64_t r = 0; r < o->ranks && !o->lone; r++) {
            if (r == t->rank) continue;
            const grank_t *rk = &gen->ranks[t->job * o->ranks + r];
            gplan_t pl;
            storm_plan(gen, rk, t->storm, &pl);
            int64_t tt = sample_true_ns(gen, rk, pl.h);
            if (tt > t->end_true_ns) t->end_true_ns = tt;
            if (tt < best_true) {
                best_true = tt;
                t->first_hit_rank = r;
                t->first_hit_timestamp_ns = tt + rk->skew_ns;
            }
        }
    }
}

/* --overlap: every storm's plan of the rank; --gaps: its collector gaps,
 * each 2-5 s at a seeded sample, left out when it would hide the rise of
 * a storm that starts on this rank (the first rank must be seen to be
 * named; its neighbours' rises may be hidden). */
static void field_build(sw_gen_t *gen, grank_t *rk)
{
    const sw_gen_opts_t *o = &gen->opts;
    if (o->overlap) {
        rk->ov = sw_calloc((size_t)o->storms + 1, sizeof(*rk->ov));
        for (int64_t k = 0; k < o->storms; k++) storm_plan(gen, rk, k, &rk->ov[k]);
    }
    if (!o->gaps) return;
    rk->gap = sw_calloc((size_t)(2 * o->gaps), sizeof(*rk->gap));
    int64_t guard = (2000 + o->interval_ms - 1) / o->interval_ms + RISE_MAX;
    for (int64_t g = 0; g < o->gaps; g++) {
        int64_t at = (int64_t)(rnd(rk->key, (uint64_t)g, T_GAP_AT) % (uint64_t)o->samples);
        double ms = GAP_MIN_MS + u01(rnd(rk->key, (uint64_t)g, T_GAP_LEN)) * GAP_SPAN_MS;
        int64_t len = (int64_t)(ms / (double)o->interval_ms) + 1;
        for (int64_t k = 0; k < o->storms; k++) {
            const sw_gen_storm_t *t = &gen->truth[(size_t)rk->job * (size_t)o->storms + (size_t)k];
            if (t->rank == rk->rank && at < t->onset_sample + guard &&
                at + len > t->onset_sample - 2)
                len = 0;
        }
        rk->gap[2 * g] = at;
        rk->gap[2 * g + 1] = len;
    }
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
            rank_init(gen, &gen->ranks[j * o->ranks + r], (int32_t)j, (int32_t)r);

    gen->ntruth = (size_t)(o->jobs * o->storms);
    gen->truth = sw_calloc(gen->ntruth ? gen->ntruth : 1, sizeof(*gen->truth));
    truth_build(gen);
    others_build(gen);

    for (size_t n = 0; n < gen->nranks && (o->overlap || o->gaps); n++)
        field_build(gen, &gen->ranks[n]);

    gen->heap = sw_calloc(gen->nranks, sizeof(*gen->heap));
    for (size_t n = 0; n < gen->nranks; n++) {
        grank_t *rk = &gen->ranks[n];
        storm_plan(gen, rk, 0, &rk->plan);
        rk->has_next = rank_produce(gen, rk, &rk->next);
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
    format_event(gen, rk, &ev, out);
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

void sw_gen_other_json(const sw_gen_other_t *o, sw_buf_t *out)
{
    sw_buf_puts(out, o->kind == SW_GEN_LEAK ? "{\"kind\": \"leak\"" : "{\"kind\": \"restart\"");
    sw_buf_puts(out, ", \"job_id\": \"");
    sw_buf_puts(out, o->job_id);
    sw_buf_puts(out, "\", \"rank\": ");
    sw_buf_put_i64(out, o->rank);
    sw_buf_puts(out, ", \"start_timestamp_ns\": ");
    sw_buf_put_i64(out, o->start_timestamp_ns);
    sw_buf_puts(out, ", \"end_timestamp_ns\": ");
    sw_buf_put_i64(out, o->end_timestamp_ns);
    sw_buf_puts(out, "}\n");
}

void sw_gen_truth_json(const sw_gen_storm_t *storm, sw_buf_t *out)
{
    /* Job ids are printable ASCII without '"' or '\\' (checked by sw_gen_new). */
    sw_buf_puts(out, "{\"job_id\": \"");
    sw_buf_puts(out, storm->job_id);
    sw_buf_puts(out, "\", \"storm\": ");
    sw_buf_put_i64(out, storm->storm);
    sw_buf_puts(out, ", \"rank\": ");
    sw_buf_put_i64(out, storm->rank);
    sw_buf_puts(out, ", \"onset_timestamp_ns\": ");
    sw_buf_put_i64(out, storm->onset_timestamp_ns);
    sw_buf_puts(out, ", \"first_hit_rank\": ");
    if (storm->first_hit_rank < 0) sw_buf_puts(out, "null");
    else sw_buf_put_i64(out, storm->first_hit_rank);
    sw_buf_puts(out, ", \"first_hit_timestamp_ns\": ");
    if (storm->first_hit_rank < 0) sw_buf_puts(out, "null");
    else sw_buf_put_i64(out, storm->first_hit_timestamp_ns);
    if (storm->tie_ranks > 1) {
        sw_buf_puts(out, ", \"tie_ranks\": ");
        sw_buf_put_i64(out, storm->tie_ranks);
    }
    sw_buf_puts(out, "}\n");
}

int64_t sw_gen_hit_ts(const sw_gen_t *gen, int64_t job, int64_t storm, int64_t rank)
{
    const sw_gen_opts_t *o = &gen->opts;
    if (job < 0 || job >= o->jobs || storm < 0 || storm >= o->storms || rank < 0 ||
        rank >= o->ranks)
        return -1;
    const grank_t *rk = &gen->ranks[job * o->ranks + rank];
    gplan_t pl;
    storm_plan(gen, rk, storm, &pl);
    if (pl.h >= pl.drop) return -1; /* never reached (--lone) */
    return sample_true_ns(gen, rk, pl.h) + rk->skew_ns;
}

bool sw_gen_lost(const sw_gen_t *gen, int64_t job, int64_t rank, int64_t i)
{
    const sw_gen_opts_t *o = &gen->opts;
    if (job < 0 || job >= o->jobs || rank < 0 || rank >= o->ranks) return false;
    return rank_lost(gen, &gen->ranks[job * o->ranks + rank], i);
}

void sw_gen_stats(const sw_gen_t *gen, sw_gen_stats_t *st)
{
    *st = gen->st;
}
