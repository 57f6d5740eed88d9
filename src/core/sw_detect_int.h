/*
 * Internal to the stream engine (src/core/sw_detect*.c): its state and the
 * functions its files share. Not for other modules. Pure, like the engine.
 *   sw_detect.c         jobs, ranks, sources, the memory budget, the public API
 *   sw_detect_feed.c    one event through the engine, in named steps
 *   sw_detect_verdict.c signature, analysis, verdict and the lifecycle
 *   sw_detect_overlap.c the spreading storm's front and the next storm's evidence
 *   sw_detect_state.c   snapshots, restore and the rebuild of the windows
 *   sw_detect_cands.c   a rank's candidate, re-derived from its window
 *   sw_detect_cands.h   the candidate treap and stale heap (inline)
 * A job (job_t) is its parts, each a struct it owns by value: id (who and
 * its latest input), src (sources), ranks, seen (what the samples showed),
 * claims, cands (candidates, stale heap), sig (the answer now), ep (the open
 * episode), pub (the answer published), verdict; and SPEC 8's cj, tguard.
 */
#ifndef SW_DETECT_INT_H
#define SW_DETECT_INT_H

#include "sw_detect.h"

#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_arena.h"
#include "sw_gapmed.h"
#include "sw_imap.h"
#include "sw_intern.h"
#include "sw_phase.h"
#include "sw_tguard.h"
#include "sw_assemble.h"
#include "sw_mset.h"
#include "sw_varint.h"
#include "sw_window.h"
#include "sw_crash.h"

#define NIL UINT32_MAX

#define COUNT_MAX (INT64_MAX / 2) /* bound of a restored episode or revision */

/* Where a sample came from, in one int64: its input offset and its source
 * (sw_detect_feed_src). The windows, the jobs' latest events, the guard's
 * refusals and the records' causes keep tags; tags of one source order as
 * its offsets, tags of different sources do not order. */
static inline int64_t det_tag(int src, int64_t offset)
{
    return (int64_t)((uint64_t)offset << 1) | (int64_t)src;
}
static inline int64_t tag_offset(int64_t tag)
{
    return tag >> 1;
}
static inline int tag_source(int64_t tag)
{
    return (int)(tag & 1);
}

typedef struct rank_s {
    /* Fields ordered without holes: a wide job holds one record per rank. */
    /* Hot: touched by every sample of the rank. */
    int64_t rank;
    int64_t first_ts;  /* smallest non-duplicate sample timestamp ever */
    int64_t newest_ts; /* largest non-duplicate sample timestamp ever */
    sw_win_t win;
    uint32_t last_src;  /* last source of this rank (lookup cache), NIL none */
    uint32_t phase_grp; /* phase group of last_src's session, NIL none; or
                           PHASE_PEND | session: see rk_phase_pending() */
    uint32_t proc_src;  /* a source with the pid and session of the rank's newest
                           sample: its process (NIL only while restoring) */
    uint32_t cand;      /* its candidate: index in job_t.cands.v, NIL: none */
    bool in_verdict;    /* one of the open episode's verdict suspects */
    /* The lifecycle's marks (docs/semantics.md, "Episodes"); the cold ones
     * out of line (rank_cold_t), for the ranks that ever needed them. */
    bool warm;     /* climbing after a restart: its runs so far are spent */
    uint32_t cold; /* index in job_t.ranks.colds, NIL: all of them zero (spent_ts INT64_MIN) */
} rank_t;

/* A rank's candidate (its first qualifying spike in an unspent run), out
 * of line: made when the rank has one, freed when it has none, so that the
 * ranks of a wide job that never spike hold none of it. Changed only when
 * the rank's spike changes. */
typedef struct rank_cand_s {
    int64_t rel; /* spike timestamp - the rank's first_ts */
    int64_t spike_ts;
    int64_t peak;
    int64_t base; /* base timestamp of the candidate's rising run */
    uint32_t samples;
    uint32_t src;
    uint32_t t_left, t_right; /* candidate treap of rank indices (priorities:
                                 t_prio()); t_left links the free list */
    bool aged;                /* that base left the window (the run goes on) */
    sw_win_cc_t cc;           /* the window's cached candidate (sw_win_candidate) */
} rank_cand_t;

/* A rank's cold lifecycle marks: created the first time one is set (an
 * episode's member, a restart, a spent run, a restore), zero until then
 * (spent_ts INT64_MIN). */
typedef struct rank_cold_s {
    int64_t spent_ts;   /* rising runs based before this are spent (INT64_MIN: none) */
    int64_t ep_no;      /* the episode the run based at ep_base was part of (0: none) */
    int64_t ep_base;    /* base timestamp of that run */
    int64_t ep_rel;     /* its spike's rel when it joined (the front's time, issue 36) */
    int64_t warm_hi;    /* warm: highest device_used since the restart */
    int64_t warm_hi_ts; /* warm: when it last rose by half a threshold */
    int64_t rs_ev_used; /* restore: the window's hr_orig, set after the rebuild */
    int64_t split_ts;   /* a second steep rise inside a spent run starts at this sample
                           and counts as a run of its own (INT64_MIN: none; issue 36) */
    bool rs_has_ev;     /* and hr_trunc */
} rank_cold_t;

/* Restoring: a rank's process as the snapshot gave it (rank_t.proc_src
 * is found once the windows are rebuilt). */
typedef struct rb_proc_s {
    int64_t pid;
    uint32_t session; /* interned; 0 = null */
    /* Its last source (rank_t.last_src) as the snapshot gave it (SWS6):
     * where a rank whose window has emptied last reported from, which a
     * crash record names. */
    bool has_last;
    uint32_t l_host, l_session;                        /* interned; session 0 = null */
    int64_t l_pid, l_interval, l_device, l_local_rank; /* INT64_MIN: absent */
} rb_proc_t;

typedef struct heap_ent_s {
    int64_t key; /* the rank's newest timestamp */
    uint32_t ri; /* index in ranks */
} heap_ent_t;

typedef struct claim_s {
    int64_t ws;
    uint64_t count;
    uint64_t first; /* order of first claim */
} claim_t;

typedef struct sig_ent_s {
    int64_t rank;
    int64_t spike_ts;
} sig_ent_t;

/* ---- the job and its parts ------------------------------------------------
 * A job owns its parts by value; each groups the fields one concern
 * reads and writes (docs/DEVELOPING.md: where a change goes). */

/* Who the job is and its latest input. */
typedef struct job_ident_s {
    uint64_t hash;        /* of the job id (the job map's key) */
    bool has;             /* the events carry a job_id */
    char *str;            /* the job_id (owned), NULL when !has */
    size_t len;           /* its length (bytes) */
    int64_t last_off;     /* input tag (det_tag) of its latest event */
    uint64_t last_seq;    /* det->arrivals at its latest event: recency across sources */
    int64_t last_ms;      /* stream time of its latest event (ms) */
    bool has_sample;      /* it got a sample (not only other events) */
    uint64_t counterless; /* v4 samples without device_used_bytes (SPEC 2: counted, noted) */
} job_ident_t;

/* The job's sources (host, pid, session, device of its samples). */
typedef struct job_srcs_s {
    sw_intern_t *strs; /* hosts and sessions */
    sw_src_t *v;
    size_t n, cap;
    uint32_t *slots; /* hash slots: source id + 1, 0 = empty */
    size_t nslots;
    sw_src_wide_t wide; /* the sources' values int32 does not hold (SW_SRC_WIDE) */
} job_srcs_t;

/* The job's ranks: their records, cold marks and restore data. */
typedef struct job_ranks_s {
    rank_t *v;
    size_t n, cap;
    sw_imap_t map; /* rank -> index in v */
    int64_t min, max;
    rank_cold_t *colds; /* the ranks' cold marks (rank_t.cold) */
    size_t ncolds, capcolds;
    int64_t *rb_floor;  /* restoring: by rank, SW_DETECT_SOURCES offsets from which
                           its window's samples came (INT64_MAX: none of that source);
                           NULL otherwise */
    rb_proc_t *rb_proc; /* restoring: by rank, its process; NULL otherwise */
    size_t win_bytes;   /* storage of the ranks' windows (they grow) */
    int64_t *sorted;    /* participating ranks ascending (cache) */
    bool sorted_dirty;
} job_ranks_t;

/* What the samples showed across the ranks. */
typedef struct job_seen_s {
    bool has_newest;
    int64_t newest_ts;   /* newest sample timestamp of the job */
    size_t insufficient; /* ranks with fewer than two retained samples */
    uint64_t retained;
    sw_gapmed_t gaps; /* median of the windows' positive gaps */
    sw_vcount_t intervals;
    int64_t first_min_ts; /* smallest first timestamp of a rank (clock skew) */
    int64_t first_max_ts; /* largest */
    uint8_t warned;       /* SW_DET_WARN_* given for this job */
} job_seen_t;

/* The world sizes the ranks claimed. */
typedef struct job_claims_s {
    claim_t *v;
    size_t n, cap;
    sw_imap_t map; /* world_size -> index in v */
    uint64_t seq;
    int64_t leader; /* index in v, -1 none */
} job_claims_t;

/* The ranks' candidates (a treap by rel) and the stale heap. */
typedef struct job_cands_s {
    uint32_t root;      /* treap root, NIL: empty */
    size_t n;           /* ranks with a candidate (records in use) */
    rank_cand_t *v;     /* the ranks' candidates (rank_t.cand) */
    size_t cap, nrec;   /* records allocated, records ever handed out */
    uint32_t free_head; /* freed records (linked by t_left), NIL none */
    heap_ent_t *heap;
    size_t nheap, capheap;
    uint32_t *hpos; /* per rank: heap index, NIL when absent */
} job_cands_t;

/* The signature: the answer now (SPEC 6), from the candidates. */
typedef struct job_sig_s {
    bool valid;
    uint64_t onset;
    sw_confidence_t conf;
    int64_t boundary; /* candidates up to this rel make the answer; INT64_MAX when none */
    int64_t rel0;     /* rel of the earliest candidate */
    size_t earliest;  /* suspects at the earliest time */
    sig_ent_t *v;
    size_t n, cap;
    bool dirty;        /* a candidate up to boundary changed since it was made */
    int64_t tie_ns;    /* the tie width used for the signature (one interval) */
    int64_t onset_rel; /* rel of the onset candidate */
    int64_t first, onset_rank, onset_base; /* the answer now: first rank, onset's run */
} job_sig_t;

/* Where a job's episode lifecycle is (docs/semantics.md, "Episodes");
 * changed only by sw_det_job_set_state(). */
typedef enum sw_ep_state_e {
    SW_EP_QUIET,   /* no episode yet */
    SW_EP_OPEN,    /* an episode is open (trigger, then updates) */
    SW_EP_PENDING, /* open, and a changed answer waits for ep.pend_ts to be due */
    SW_EP_CLOSED,  /* the last episode resolved as the next storm started */
    SW_EP_AGED,    /* the last episode resolved as its evidence aged out */
    SW_EP_STATE_CNT
} sw_ep_state_t;

/* The open episode (SPEC 6 step 5): the ranks whose run is part of it
 * (rank_cold_t.ep_no/ep_base), the rel of its latest member's spike, a
 * change that waits, and the front of a spreading storm (issue 36). */
typedef struct job_ep_s {
    sw_ep_state_t state;  /* the lifecycle (sw_det_job_set_state) */
    int64_t no, revision; /* the episode's number and its record's revision */
    uint32_t *mem;
    size_t nmem, capmem;
    int64_t first_rel, last_rel;
    bool aged;             /* the last episode ended as its evidence aged out (set with the
                  state, kept while the next one is open) */
    int64_t aged_last_rel; /* then: its last_rel */
    int64_t n_updates;     /* updates of the open episode */
    int64_t pend_ts;       /* SW_EP_PENDING: the job's newest timestamp when the answer changed */
    int64_t front_reach;   /* the open episode's front: the farthest (in ranks) a joining
                              rank was from the nearest earlier member (issue 36) */
    int64_t front_npr;     /* and its speed: the fewest ns per rank from its first member */
    int64_t old_reach, old_npr; /* those of the episode before the open one */
    int trig_conf;              /* episode_confidence of the records (sw_analysis.h) */
} job_ep_t;

/* The answer last published (trigger or update). */
typedef struct job_pub_s {
    int64_t first, onset_rank, onset_base;
    int64_t rel0; /* its first spike's rel */
    sw_confidence_t conf;
    sig_ent_t *tie; /* its tied ranks (rank, run base), ascending */
    size_t ntie, captie;
} job_pub_t;

/* The verdict (SPEC 6 step 5): onset and suspects of the open episode's
 * last trigger or update record, deep-copied into arena. */
typedef struct job_verdict_s {
    bool has;
    uint64_t onset;
    sw_suspect_t *sus;
    size_t n;
    int64_t *tie; /* the verdict's tied ranks */
    size_t ntie;
    sw_arena_t arena;
    bool touched; /* a verdict rank's candidate may have changed */
} job_verdict_t;

typedef struct job_s {
    job_ident_t id;
    job_srcs_t src;
    job_ranks_t ranks;
    job_seen_t seen;
    job_claims_t claims;
    job_cands_t cands;
    job_sig_t sig;
    job_ep_t ep;
    job_pub_t pub;
    job_verdict_t verdict;
    sw_phase_t *phase;
    struct sw_cjob_s *cj;                /* SPEC 8 state (sw_crash.c), NULL until it has any */
    sw_tguard_t tguard;                  /* the out-of-time guard (sw_tguard.h) */
    size_t idx;                          /* position in det->jobs */
    struct job_s *junk_prev, *junk_next; /* in det's list of jobs, least recently active first */
    bool in_junk;
    size_t acct; /* job_bytes() when last accounted (det->acct) */
} job_t;

typedef struct sw_announced_s {
    const sw_event_t *ev; /* NULL: none */
    job_t *j;
    uint32_t ri;
    uint64_t gen;
} sw_announced_t;

struct sw_detector_s {
    sw_params_t params;
    int64_t stale_ns;
    job_t **jobs; /* creation order; NULL holes after evictions */
    size_t njobs, capjobs, live_jobs;
    job_t **jslots; /* job map slots */
    size_t jcap;
    sw_arena_t arena;
    sw_winpool_t winpool; /* storage of full windows (huge pages) */
    sw_record_t rec;
    uint32_t *stack; /* treap traversal */
    size_t capstack;
    sig_ent_t *tmp_sig;
    int64_t *tmp_rel;
    size_t captmp;
    sw_detect_stats_t st;
    uint64_t arrivals;                    /* events fed (stands in for offsets) */
    int64_t rebuild_x[SW_DETECT_SOURCES]; /* restoring: per source, offsets below
                                             this rebuild windows (INT64_MIN: not) */
    job_t *junk_head, *junk_tail;         /* every job, least recently active first:
                                     eviction looks there for the least
                                     evidence (sw_detect.c, evict_one) */
    bool pressure;                        /* over the memory budget (sw_detect_set_pressure) */
    size_t acct;                          /* sum of the jobs' acct: state that grows with jobs */
    size_t budget;                        /* sw_detect_set_budget(); 0: none */
    sw_detect_pool_t *pool; /* the process's budget (sw_detect_set_pool); NULL: none */
    size_t room_want;       /* bytes the last refused event asked the pool for */
    bool room_served;       /* the pool's owner made what room it could */
    bool room_final;        /* ... and nothing more can go */
    /* The events announced by sw_detect_prefetch (the last one, pf, and
     * the one before, cur, normally the event being fed): job and rank,
     * valid while gen is unchanged (gen moves whenever a job or a rank
     * table is created, moved or freed). */
    uint64_t gen;
    sw_announced_t pf, cur;
    bool pf_win_done;     /* pf's window lines were requested */
    job_t *pf_last_j;     /* the job the last announced event found (valid while */
    uint64_t pf_last_gen; /* gen is pf_last_gen): the next one's is often it */
    sw_buf_t warning;     /* the warning of the last event fed ("" none) */
    struct sw_xout_s *xo; /* SPEC 8 records of the event being fed (sw_crash_out.c) */
};

/* Warnings, once per job each (sw_detect_warning). */
#define SW_DET_WARN_STALE_INTERVAL 1u
#define SW_DET_WARN_STALE_SKEW 2u
#define SW_DET_WARN_STALE_DELAY 4u
#define SW_DET_WARN_WINDOW_SPREAD 8u

/* Updates per episode, at most (SPEC 6 step 5, few records). */
#define SW_DET_MAX_UPDATES 4

/* ---- small helpers --------------------------------------------------- */

static inline uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* The cold marks of rank @p r (zero when it has no record). */
static inline int64_t rk_ep_no(const job_t *j, const rank_t *r)
{
    return r->cold == NIL ? 0 : j->ranks.colds[r->cold].ep_no;
}

static inline int64_t rk_ep_base(const job_t *j, const rank_t *r)
{
    return r->cold == NIL ? 0 : j->ranks.colds[r->cold].ep_base;
}

static inline int64_t rk_ep_rel(const job_t *j, const rank_t *r)
{
    return r->cold == NIL ? 0 : j->ranks.colds[r->cold].ep_rel;
}

static inline int64_t rk_spent(const job_t *j, const rank_t *r)
{
    return r->cold == NIL ? INT64_MIN : j->ranks.colds[r->cold].spent_ts;
}

static inline int64_t rk_split(const job_t *j, const rank_t *r)
{
    return r->cold == NIL ? INT64_MIN : j->ranks.colds[r->cold].split_ts;
}

/* Rank @p r's cold marks, created (zero) when it has none: for writing.
 * The pointer is valid until the next call (the table may move). */
static inline rank_cold_t *rk_cold(job_t *j, rank_t *r)
{
    if (r->cold == NIL) {
        SW_GROW(j->ranks.colds, j->ranks.ncolds, j->ranks.capcolds, 4);
        memset(&j->ranks.colds[j->ranks.ncolds], 0, sizeof(j->ranks.colds[0]));
        j->ranks.colds[j->ranks.ncolds].spent_ts = INT64_MIN;
        j->ranks.colds[j->ranks.ncolds].split_ts = INT64_MIN;
        r->cold = (uint32_t)j->ranks.ncolds++;
    }
    return &j->ranks.colds[r->cold];
}

/* rank_t.phase_grp of a rank whose phase group (SPEC 5: its session
 * end) is not made yet. A group only matters once its (session, rank)
 * has a boundary, and a wide job's ranks nearly all have none: a rank
 * whose every sample so far came with one session keeps that group's
 * session end as its own newest_ts, with the session in the low bits
 * (interned ids stay far below the bit). The group is made when it
 * matters: a sample of another session or of none, any other event of
 * that (session, rank) (sw_det_phase_settle), or a snapshot, which
 * writes it as the group it stands for. */
#define PHASE_PEND 0x80000000u

/* Whether rank @p r's phase group is pending (PHASE_PEND). */
static inline bool rk_phase_pending(const rank_t *r)
{
    return r->phase_grp != NIL && (r->phase_grp & PHASE_PEND);
}

/* Rank @p ri's candidate; it must have one. */
static inline rank_cand_t *rk_cand(const job_t *j, uint32_t ri)
{
    return &j->cands.v[j->ranks.v[ri].cand];
}

/* Rank @p r's candidate; it must have one. */
static inline rank_cand_t *rc_of(const job_t *j, const rank_t *r)
{
    return &j->cands.v[r->cand];
}

/* Source @p id's device_id as sent, INT64_MIN when absent. */
static inline int64_t src_device(const job_t *j, uint32_t id)
{
    return sw_src_field(&j->src.wide, id, j->src.v[id].device_id, SW_SRC_COL_DEVICE);
}

/* Source @p id's local_rank as sent, INT64_MIN when absent. */
static inline int64_t src_local_rank(const job_t *j, uint32_t id)
{
    return sw_src_field(&j->src.wide, id, j->src.v[id].local_rank, SW_SRC_COL_LOCAL_RANK);
}

/* Source @p id's pid as sent. */
static inline int64_t src_pid(const job_t *j, uint32_t id)
{
    return sw_src_field(&j->src.wide, id, j->src.v[id].pid, SW_SRC_COL_PID);
}

/* Source @p id's sampling_interval_ms as sent. */
static inline int64_t src_interval(const job_t *j, uint32_t id)
{
    return sw_src_field(&j->src.wide, id, j->src.v[id].interval_ms, SW_SRC_COL_INTERVAL);
}

/* Rank @p r's sampling interval: its last source's (ms; 0 before any). */
static inline int64_t rk_interval(const job_t *j, const rank_t *r)
{
    return r->last_src == NIL ? 0 : src_interval(j, r->last_src);
}

/* Rank r's sampling interval in ns (its latest source's), at least 1 ms. */
static inline int64_t rank_interval_ns(const job_t *j, const rank_t *r)
{
    int64_t iv = rk_interval(j, r);
    int64_t ms = iv > 0 && iv < INT64_MAX / 1000000 ? iv : 1;
    return ms * 1000000;
}

/* Treap priority of rank index @p ri (fixed, pseudo-random). */
static inline uint32_t t_prio(uint32_t ri)
{
    return mix32(ri * 2654435761U + 1);
}

/* ---- shared functions ---------------------------------------------------- */

job_t *sw_det_jmap_find(const sw_detector_t *det, bool has, const char *p, size_t n);
uint32_t sw_det_src_get(job_t *j, rank_t *r, const sw_event_t *ev);
uint32_t sw_det_src_proc(job_t *j, const rank_t *r, int64_t pid, uint32_t session);
/* Rank @p r's last source set to the one a snapshot named (@p p->has_last),
 * made when no source of the job has it; the phase state is left as is. */
void sw_det_src_last(job_t *j, rank_t *r, const rb_proc_t *p);
void sw_det_junk_rebuild(sw_detector_t *det);
job_t *sw_det_job_create(sw_detector_t *det, const sw_event_t *ev, int64_t offset);
uint32_t sw_det_rank_create(sw_detector_t *det, job_t *j, int64_t rank);
/* Rank @p ri's candidate re-derived, the treap kept in step (sw_detect_cands.c). */
void sw_det_cand_refresh(sw_detector_t *det, job_t *j, uint32_t ri);
void sw_det_phase_settle(job_t *j, rank_t *r);
void sw_det_verdict_mark(job_t *j, bool on);
void sw_det_job_set_state(sw_detector_t *det, job_t *j, sw_ep_state_t state, const char *reason);

/* Whether the job has an open episode (SW_EP_OPEN or SW_EP_PENDING). */
static inline bool sw_det_ep_open(const job_t *j)
{
    return j->ep.state == SW_EP_OPEN || j->ep.state == SW_EP_PENDING;
}
const sw_record_t *sw_det_lifecycle(sw_detector_t *det, job_t *j, uint32_t ri, int64_t ts,
                                    int64_t off);
sw_record_t *sw_det_emit(sw_detector_t *det, job_t *j, sw_action_t action, bool has_ts, int64_t ts,
                         int64_t cause_offset);
void sw_det_build_analysis(sw_detector_t *det, job_t *j, bool use_spent, sw_analysis_t *out);
void sw_det_warn_check(sw_detector_t *det, job_t *j, const rank_t *r, int64_t ts);

/* The job's world size: the leading claim's, or the highest rank seen + 1
 * when larger. */
static inline int64_t sw_det_world_size(const job_t *j)
{
    int64_t declared = j->claims.leader >= 0 ? j->claims.v[j->claims.leader].ws : 1;
    int64_t observed = j->ranks.max + 1;
    return declared > observed ? declared : observed;
}

/* Storms that overlap (sw_detect_overlap.c): the spreading storm's front. */
void sw_det_front_learn(job_t *j, const rank_t *r);
void sw_det_tail_spend(sw_detector_t *det, job_t *j, uint32_t ri, int64_t old);
bool sw_det_open_spread(const job_t *j, const rank_t *r);
bool sw_det_front_foreign(const job_t *j, const rank_t *r);
bool sw_det_front_tail(const job_t *j, const rank_t *r, int64_t old, int64_t rel);
bool sw_det_second_rise(sw_detector_t *det, job_t *j, rank_t *r);
void sw_det_snprintf_like(char *errstr, size_t errstr_size, const char *msg);

/* max.ranks.per.job, or (0 = unlimited) the hard ceiling (*hard). */
static inline int64_t sw_det_rank_limit(const sw_detector_t *det, bool *hard)
{
    int64_t max_ranks = det->params.max_ranks_per_job;
    *hard = max_ranks <= 0 || max_ranks > SW_WORLD_SIZE_MAX;
    return *hard ? SW_WORLD_SIZE_MAX : max_ranks;
}

/* sw_detect.c's jobs and memory budget, for sw_detect_feed.c. */

/* What a new job or rank adds before its first window grows (bytes). */
#define ACCT_NEW_JOB 2048
#define ACCT_NEW_RANK (sizeof(rank_t) + 64)

bool sw_det_job_matches(const job_t *j, bool has, const char *p, size_t n);
void sw_det_limit_error(char *errstr, size_t errstr_size, const char *a, int64_t v, const char *b,
                        int64_t limit);
void sw_det_memory_error(const sw_detector_t *det, char *errstr, size_t errstr_size,
                         const char *what);
bool sw_det_budget_room(sw_detector_t *det, const job_t *keep, size_t more);
bool sw_det_room_ask(sw_detector_t *det, size_t more, bool served);
bool sw_det_evict_one(sw_detector_t *det, const job_t *keep, int max_evidence);
void sw_det_acct_job(sw_detector_t *det, job_t *j);
void sw_det_junk_add(sw_detector_t *det, job_t *j);
void sw_det_junk_del(sw_detector_t *det, job_t *j);

#endif /* SW_DETECT_INT_H */
