/*
 * Internal to SPEC 8's files: sw_crash.c (ranks, silence, deaths, the
 * crash and its records), sw_crash_warn.c (warnings from capacity and
 * growth, SPEC 8.4) and sw_crash_snap.c (the snapshot section). Their
 * shared state (sw_cjob_t per job, sw_xout_t per detector) and helpers.
 * Pure: no I/O, no clock, no globals.
 */
#ifndef SW_CRASH_INT_H
#define SW_CRASH_INT_H

#include <stdlib.h>
#include <string.h>

#include "sw_crash.h"
#include "sw_detect_cands.h"

typedef struct sw_cjob_s sw_cjob_t;
typedef struct sw_xout_s sw_xout_t;

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
static inline cdeath_t cd_of(const sw_cjob_t *cj, const crank_t *c)
{
    cdeath_t none = {0, 0, 0, INT64_MIN, CNIL, CNIL};
    return c->d == CNIL ? none : cj->deaths[c->d];
}

/* Rank c's stop time, INT64_MIN none. */
static inline int64_t c_stop(const sw_cjob_t *cj, const crank_t *c)
{
    return c->d == CNIL ? INT64_MIN : cj->deaths[c->d].stop_ts;
}

/* Rank c's index in the warning table, CNIL none. */
static inline uint32_t c_w(const sw_cjob_t *cj, const crank_t *c)
{
    return c->d == CNIL ? CNIL : cj->deaths[c->d].w;
}

/* Rank c's index in the dead list, CNIL alive. */
static inline uint32_t c_dpos(const sw_cjob_t *cj, const crank_t *c)
{
    return c->d == CNIL ? CNIL : cj->deaths[c->d].dpos;
}

/* Rank c's death marks, created (zero) when it has none: for writing. */
static inline cdeath_t *cd_get(sw_cjob_t *cj, crank_t *c)
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
    const int64_t *blind; /* SPEC 8.5's blind ranks for SPEC 6's record (sw_crash_blind) */
    size_t n_blind;
    sw_arena_t arena;
};

/* ---- sw_crash_out.c ---------------------------------------------------- */

/* The next SPEC 8 record of the event last fed (*x8 its SPEC 8 part). */
sw_record_t *sw_crash_emit(sw_detector_t *det, job_t *j, sw_action_t action, const sw_event_t *ev,
                           int64_t offset, sw_x8_t **x8);

/* The job's blind ranks, sorted, into *ranks (in the record arena). */
void sw_crash_fill_blind(sw_xout_t *xo, const sw_cjob_t *cj, const int64_t **ranks, size_t *nr);

/* The storm (SPEC 6 episode) a SPEC 8 record refers to. */
void sw_crash_storm_ref(const job_t *j, sw_storm_ref_t *s);

/* ---- sw_crash.c -------------------------------------------------------- */

/* The job's SPEC 8 state, made on first use. */
sw_cjob_t *sw_crash_cjob(job_t *j);

/* The SPEC 8 rank of @p rank, CNIL none. */
uint32_t sw_crash_rank_find(const job_t *j, const sw_cjob_t *cj, int64_t rank);

/* The SPEC 8 rank of an event; links a SPEC 6 rank index when given. */
uint32_t sw_crash_rank_of(const job_t *j, sw_cjob_t *cj, int64_t rank, uint32_t ri);

/* Put entry @p e at position @p i of the silence heap. */
void sw_crash_heap_set(sw_cjob_t *cj, size_t i, sheap_t e);

/* Rank @p c's blindness (SPEC 8.5: degraded or silent) and the job's count. */
void sw_crash_set_blind(sw_detector_t *det, sw_cjob_t *cj, crank_t *c);

/* A NUL-terminated copy of @p s (caller frees). */
char *sw_crash_strdup(sw_str_t s);

/* ---- sw_crash_warn.c --------------------------------------------------- */

/* Put warning entry @p wi on the eligible list. */
void sw_crash_elig_add(sw_cjob_t *cj, uint32_t wi);

/* Rank ci's capacity, growth and eligibility from a sample near full.
 * @returns true when it became eligible or its projection got shorter. */
bool sw_crash_warn_sample(const sw_detector_t *det, sw_cjob_t *cj, uint32_t ci,
                          const sw_event_t *ev);

/* A sample far from full: the rank's estimate starts over. */
void sw_crash_warn_far(sw_cjob_t *cj, uint32_t wi, int64_t ts);

/* The job's warning after the event: opened, updated or closed. */
void sw_crash_warn_job(sw_detector_t *det, job_t *j, const sw_event_t *ev, int64_t offset,
                       uint32_t changed_w);

/* Close the open warning with @p end (a crash, the job's end). */
void sw_crash_warn_close(sw_detector_t *det, job_t *j, const sw_event_t *ev, int64_t offset,
                         sw_x8_end_t end);

#endif /* SW_CRASH_INT_H */
