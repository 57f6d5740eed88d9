/*
 * Internal to the synthetic telemetry generator (sw_gen*.c, not the crash
 * scenarios of sw_gen_crash.c): its constants, the rank and event records,
 * the hash streams, and what its three files share.
 *   sw_gen.c        options and their checks, the generator's life, the
 *                   delivery queues (a heap over ranks by arrival time)
 *   sw_gen_model.c  what a rank produces: its memory model, the storm plans
 *                   and their ground truth, restarts, leaks, losses, gaps
 *   sw_gen_write.c  the writer: one event as a JSON line, the truth lines
 * Pure: no I/O, no clock, no globals.
 */
#ifndef SW_GEN_INT_H
#define SW_GEN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_gen.h"

#define MIB ((int64_t)1 << 20)
#define GIB ((int64_t)1 << 30)
#define MS_NS ((int64_t)1000000)

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

/* ---- sw_gen_model.c -------------------------------------------------------- */

/* True time of sample i of rk (its start, the interval, jitter). */
int64_t sw_gen_sample_true_ns(const sw_gen_t *gen, const grank_t *rk, int64_t i);

/* The plan of storm k on rk (pl->h >= pl->drop: the storm never reaches it). */
void sw_gen_storm_plan(const sw_gen_t *gen, const grank_t *rk, int64_t k, gplan_t *pl);

/* --overlap: the first sample at or after h where storm k may rise on rk. */
int64_t sw_gen_overlap_clear(const sw_gen_t *gen, const grank_t *rk, int64_t k, int64_t h);

/* Whether sample i of rk is lost (--loss, --gaps). */
bool sw_gen_rank_lost(const sw_gen_t *gen, const grank_t *rk, int64_t i);

/* Produce rk's next event in true-time order. @returns false when it has none. */
bool sw_gen_rank_produce(const sw_gen_t *gen, grank_t *rk, gev_t *ev);

/* A rank's seeded parameters (start, skew, baseline, sawtooth). */
void sw_gen_rank_init(sw_gen_t *gen, grank_t *rk, int32_t job, int32_t rank);

/* gen->truth: every storm's rank and onset, then its first other rank hit. */
void sw_gen_truth_build(sw_gen_t *gen);

/* gen->other: the restarts and leaks (and the late collectors of storm ranks). */
void sw_gen_others_build(sw_gen_t *gen);

/* rk's --overlap plans and --gaps (after sw_gen_truth_build()). */
void sw_gen_field_build(sw_gen_t *gen, grank_t *rk);

/* ---- sw_gen_write.c -------------------------------------------------------- */

/* Append ev of rk as one JSON line (with '\n') to out. */
void sw_gen_format_event(const sw_gen_t *gen, const grank_t *rk, const gev_t *ev, sw_buf_t *out);

#endif /* SW_GEN_INT_H */
