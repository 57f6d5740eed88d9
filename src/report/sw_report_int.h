/*
 * Internal to the report (src/report/sw_report*.c): the model of the
 * records and the functions the files share. Not for other folders.
 *   sw_report_model.c  records parsed and validated, kept per job and episode
 *   sw_report_chart.c  text helpers and the SVG chart of an episode
 *   sw_report.c        the HTML page
 */
#ifndef SW_REPORT_INT_H
#define SW_REPORT_INT_H

#include "sw_report.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sw_alloc.h"
#include "sw_analysis.h"
#include "sw_arena.h"
#include "sw_jdom.h"

/* ------------------------------------------------------------------ */
/* Model                                                               */
/* ------------------------------------------------------------------ */

typedef enum act_e { ACT_TRIGGER = 0, ACT_UPDATE, ACT_RESOLVE, ACT_SUMMARY } act_t;

/* How a suspect's phase was given. */
typedef enum phase_kind_e {
    PHASE_UNKNOWN = 0, /* null or absent attribution */
    PHASE_UNIQUE,      /* phase_path */
    PHASE_HEURISTIC,   /* ambiguous, phase_summary.phase_path */
    PHASE_AMBIGUOUS    /* ambiguous without a summary: phase_paths only */
} phase_kind_t;

typedef struct susp_s {
    int64_t rank;
    bool has_aligned;
    int64_t aligned_ns; /* aligned_first_spike_timestamp_ns */
    bool has_delta;
    int64_t peak_delta_bytes;
    bool has_lead;
    int64_t lead_ns;       /* lead_over_cluster_onset_ns */
    int64_t spike_samples; /* spike_window_samples, -1 when absent */
    sw_str_t confidence;   /* owned; len 0: unknown */
    sw_str_t host;         /* owned; len 0: not in the record */
    int64_t device_id;     /* -1 when absent */
    phase_kind_t phase_kind;
    sw_str_t phase; /* owned label (paths joined by " | " when ambiguous) */
    /* Timeline excerpt; n_tl == 0: none (or unusable, see tl_problem). */
    size_t n_tl;
    int64_t *tl_ns;      /* aligned timestamps (owned) */
    int64_t *tl_used;    /* device_used_bytes (owned) */
    int64_t tl_window;   /* window_samples, -1 when absent */
    int64_t tl_start;    /* spike_start_index, -1 when absent or out of range */
    int64_t tl_spike;    /* spike_index, -1 when absent or out of range */
    sw_str_t tl_problem; /* owned; why a timeline present in the record is not drawn */
} susp_t;

typedef struct rec_s {
    act_t act;
    int64_t episode;
    int64_t revision;
    bool has_event;
    int64_t event_ns;
    bool has_onset;
    int64_t onset_ns;
    int64_t world_size;      /* -1 when absent */
    int64_t n_participating; /* -1 when absent */
    int64_t *missing;        /* owned */
    size_t n_missing;
    sw_str_t severity, dedup_key, summary; /* owned, len 0 when absent */
    sw_str_t resolve_reason;               /* owned; resolve records: why the episode ended */
    int64_t resolve_lost_rank;             /* -1 when absent */
    bool has_source;
    sw_str_t source_topic; /* owned */
    int64_t source_partition, source_offset;
    sw_str_t *notes; /* owned, each owned */
    size_t n_notes;
    susp_t *sus; /* owned */
    size_t n_sus;
    size_t n_counts; /* rank_sample_counts entries */
    int64_t counts_min, counts_max, counts_sum;
    bool has_offset;
    int64_t offset_max_abs_ns; /* largest |alignment offset| and its rank */
    sw_str_t offset_max_rank;  /* owned key */
    uint64_t seq;              /* arrival order over the whole report */
    size_t file;               /* index into the report's file names */
    uint64_t lineno;
} rec_t;

typedef struct ep_s {
    int64_t episode;
    rec_t **recs; /* trigger/update/resolve in arrival order */
    size_t n, cap;
    uint64_t dups; /* records dropped as duplicates */
} ep_t;

/* A SPEC 8 record (crash or warning), as the page lists it. */
typedef struct x8item_s {
    int act; /* SW_ACTION_CRASH or SW_ACTION_WARNING */
    int64_t number, revision;
    bool has_event;
    int64_t event_ns;
    bool open;
    char *summary; /* owned: the record's human line (made when absent) */
    char *detail;  /* owned: dead ranks, or ranks close to full, and blind ranks */
    /* crash: the first death, as the fleet page groups it */
    int64_t fd_rank;   /* -1: not a crash */
    char *fd_host;     /* owned; NULL when the record has no host */
    int64_t fd_device; /* -1 when absent */
    bool fd_silent;
    int64_t fd_ts;      /* the first death's timestamp_ns (its rank's clock) */
    int64_t fd_aligned; /* ... and its aligned_timestamp_ns */
    int64_t deaths;     /* crash: ranks dead then */
    int64_t *dead;      /* owned: crash dead_ranks */
    size_t n_dead;
    int64_t *blind; /* owned: blind_ranks */
    size_t n_blind;
    int64_t *w_rank; /* owned: warning ranks, by projected time */
    int64_t *w_used, *w_total, *w_eta_ms;
    size_t n_w;
} x8item_t;

/* A mark on a crash chart, from the job's telemetry (--telemetry). */
typedef enum cmark_kind_e { CM_MARKER = 0, CM_SILENT, CM_WATCHDOG } cmark_kind_t;
typedef struct cmark_s {
    int64_t ts; /* the rank's own clock */
    int64_t rank;
    cmark_kind_t kind;
} cmark_t;

/* The telemetry behind a job's crash chart: the first dead rank's samples
 * in the window before its death, the other dead ranks' deaths and the
 * watchdog errors after it. */
typedef struct ctl_s {
    int64_t crash; /* the crash charted (its number) */
    int64_t rank;  /* its final first death */
    int64_t death_ts;
    int64_t *ts, *used, *total; /* samples, ascending ts (total -1: absent) */
    size_t n, cap;
    cmark_t *marks;
    size_t n_marks, cap_marks;
    uint64_t marks_dropped;
    int64_t *last_ts; /* per dead rank of the crash record (dead[]), newest event; -1 none */
    int64_t world;    /* largest world_size seen, 0 none */
    uint64_t events;  /* telemetry events of this job read */
} ctl_t;

typedef struct job_s {
    sw_str_t id;   /* owned */
    x8item_t *x8s; /* SPEC 8 records in arrival order, repeats dropped */
    size_t n_x8, cap_x8;
    bool is_null;
    ep_t *eps;
    size_t n_eps, cap_eps;
    ctl_t *ctl;   /* crash chart telemetry (NULL: none read) */
    rec_t **sums; /* summaries in arrival order */
    size_t n_sums, cap_sums;
    uint64_t *sum_hashes; /* line hashes of the summaries (duplicates) */
} job_t;

struct sw_report_s {
    job_t **jobs; /* in order of first appearance */
    size_t n_jobs, cap_jobs;
    uint32_t *slots; /* open addressing: job index + 1, 0 = empty */
    size_t n_slots;
    char **files; /* distinct input names, in order */
    size_t n_files;
    uint64_t records;
    uint64_t dups;
    sw_arena_t arena;       /* scratch for one record's DOM */
    struct sw_tdec_s *tdec; /* telemetry decoder, made on first use */
};

/* ---- shared functions ---------------------------------------------------- */

rec_t *sw_report_ep_chart(const ep_t *ep);
void sw_report_esc(sw_buf_t *out, sw_str_t s);
void sw_report_escc(sw_buf_t *out, const char *s);
void sw_report_put_utc(sw_buf_t *out, int64_t ns);
void sw_report_put_rel(sw_buf_t *out, int64_t ns);
void sw_report_put_ranks(sw_buf_t *out, const int64_t *ranks, size_t n, size_t max);
sw_str_t sw_report_sev_of(const rec_t *r);
const char *sw_report_sev_class(sw_str_t sev);
void sw_report_put_job_name(sw_buf_t *out, const job_t *job);
void sw_report_put_phase(sw_buf_t *out, const susp_t *s);
int64_t sw_report_rel_ns(int64_t t, int64_t onset);
void sw_report_put_chart(sw_buf_t *out, const job_t *job, const ep_t *ep, const rec_t *r,
                         unsigned chart_no);
job_t *sw_report_job_find(const sw_report_t *rep, sw_str_t id, bool is_null);
double sw_report_nice_step(double raw);
void sw_report_put_trim(sw_buf_t *out, double v, int decimals);
/* sw_report_crash.c: a job's crashes (chart, facts, rank map); the
 * telemetry reader behind the chart. */
void sw_report_put_crashes(sw_buf_t *out, const job_t *job, size_t j, unsigned *chart_no);
const x8item_t *sw_report_crash_final(const job_t *job, int64_t number);
/* sw_report_fleet.c: the repeat offenders (hosts and GPUs named first cause
 * or first death); returns false (and writes nothing) when no record names
 * a host. */
bool sw_report_put_fleet(sw_buf_t *out, const sw_report_t *rep);
/* Jobs whose records name a host as first cause or first death. */
size_t sw_report_fleet_jobs(const sw_report_t *rep);

#endif /* SW_REPORT_INT_H */
