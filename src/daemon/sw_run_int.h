/*
 * Internal to the daemon (src/daemon/sw_run*.c): its state and the
 * functions its files share. Not for other folders.
 *   sw_run.c       consuming, forwarding, rebalances, the stop, the loop
 *   sw_run_setup.c clients, the cluster, topics, the registry's alert id,
 *                  the subscription
 *   sw_run_out.c   delivery: pending offsets, producing, acknowledgements,
 *                  commits and transactions, the bounded-stop helpers
 *   sw_run_state.c state snapshots, origin snapshots, restore and the scan
 *                  of the output for records already sent
 *   sw_run_work.c  rounds over the partitions' queues, the worker threads
 *                  that decode and analyse, the schema registry's holds
 *   sw_run_idle.c  repartition=on: the forwarded time idle expiry counts in
 */
#ifndef SW_RUN_INT_H
#define SW_RUN_INT_H

#include "sw_run.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "sw_alloc.h"
#include "sw_codec_alert.h"
#include "sw_codec_avro.h"
#include "sw_codec_pager.h"
#include "sw_codec_telemetry.h"
#include "sw_detect.h"
#include "sw_imap.h"
#include "sw_kafka.h"
#include "sw_partition.h"
#include "sw_registry.h"
#include "sw_varint.h"

#define SNAP_CHUNK (512u * 1024u) /* bytes of compressed snapshot per message */
#define SUPPRESS_DLQ 6 /* "action" of dead letters in suppression keys (after sw_action_t) */
#define SUPPRESS_FWD 7 /* "action" of forwarded copies (repartition.topic) */

typedef struct pend_s {
    int64_t offset; /* input offset */
    uint32_t left;  /* records of that offset not yet acknowledged */
} pend_t;

typedef struct snapfl_s {
    bool active;  /* a snapshot is being written */
    bool failed;  /* one of its chunks was refused */
    int64_t x, y; /* taken at offset x; input from y rebuilds the windows */
    uint64_t id;
    uint32_t n, left;  /* chunks, chunks not yet acknowledged */
    int64_t first_off; /* state topic offset of chunk 0 */
} snapfl_t;

typedef enum pmode_e { PM_NORMAL, PM_REBUILD } pmode_t;

#define WORK_BATCH 256 /* messages taken from one partition's queue per round */

/* What a worker found for one message, applied by the main thread. */
typedef enum wkind_e {
    WK_NONE,
    WK_INVALID,
    WK_DECODE,
    WK_LIMIT,
    WK_CLOCK, /* refused by the engine's out-of-time guard */
    WK_FORWARD,
    WK_RECORD
} wkind_t;

typedef struct wout_s {
    uint32_t idx;           /* the message, in the partition's round */
    uint8_t kind;           /* wkind_t */
    bool miskeyed;          /* its key is not its job_id */
    bool has_job;           /* job: its job_id (miskeyed, or the key of a copy) */
    uint32_t job, job_len;  /* in the work area's text */
    uint32_t err, err_len;  /* the error (WK_INVALID, WK_DECODE, WK_LIMIT, WK_CLOCK) */
    const sw_record_t *rec; /* WK_RECORD: borrowed from the engine until it sees more */
} wout_t;

/* A partition's part of a round (sw_run_work.c). Between rounds it is
 * empty; during a pass only the one worker that took the partition
 * touches it and the partition's engine. */
typedef struct pwork_s {
    rd_kafka_message_t **m; /* the round's messages in offset order (NULL: done with) */
    size_t n, cap;
    size_t w0, w1; /* [w0, w1): the range decoded and analysed by a worker */
    size_t pos;    /* the next message of the range */
    wout_t *out;   /* what the range gave, in order */
    size_t nout, capout, applied;
    sw_buf_t text;        /* errors and job ids of out */
    uint64_t msgs, bytes; /* processed since the last apply */
    int64_t max_ts;       /* newest message timestamp among them (ms) */
    int64_t last;         /* offset of the last processed, -1 none */
} pwork_t;

typedef struct part_s {
    char *topic;
    int32_t partition;
    uint32_t id;  /* stable id carried by delivery tokens */
    bool forward; /* repartition=on, an input topic's partition: its messages
                                are forwarded to repartition.topic, not analysed here
                                (its engine stays empty; snapshots and suppression work
                                as for any partition) */
    sw_detector_t *det;
    int64_t next; /* next offset to process; -1 before the first */
    pend_t *q;    /* ring of pending offsets, ascending */
    size_t qhead, qn, qcap;
    bool failed; /* a record was refused: never commit past it */
    pmode_t mode;
    int64_t rebuild_x; /* rebuild mode: offsets below it refill windows */
    int64_t rebuild_y;
    uint64_t rebuilt;   /* samples re-inserted */
    int64_t restore_t0; /* when the restore started (ms) */
    sw_imap_t suppress; /* records already on the output: offset*8+action */
    uint64_t suppressed;
    snapfl_t snap;
    int64_t committed_x; /* snapshot offset of the last commit sent */
    int64_t confirmed_x; /* snapshot offset of the last commit the broker took */
    int64_t last_snap_ms;
    bool origin;       /* assigned without a usable snapshot: held (paused)
                                until its origin snapshot is committed */
    int64_t origin_x;  /* the offset the origin snapshot is taken at */
    int64_t held_from; /* lowest offset that reached us while held, -1 none */
    bool reg_hold;     /* paused until the schema registry gives reg_id */
    int32_t reg_id;    /* the writer schema id it waits for */
    sw_metrics_series_t *m_events, *m_lag, *m_miskeyed;
    sw_detect_stats_t mprev; /* engine counters last published */
    rd_kafka_queue_t *queue; /* its own queue (NULL: it comes through the consumer's) */
    pwork_t w;
} part_t;

typedef enum tok_kind_e { TOK_RECORD, TOK_SNAPSHOT } tok_kind_t;

typedef struct token_s {
    uint32_t part_id;
    tok_kind_t kind;
    uint32_t chunk;
    int64_t offset;              /* input offset (records) */
    uint64_t snap_id;            /* snapshots */
    int64_t produced_ms;         /* records: handed to the producer (sw_clock_ms) */
    struct token_s *prev, *next; /* records: run_t's list of undelivered ones */
} token_t;

typedef enum dlq_kind_e { DLQ_DECODE, DLQ_INVALID, DLQ_LIMIT, DLQ_FORMAT, DLQ_CLOCK } dlq_kind_t;
static const char *const k_dlq_kind[] = {"decode", "invalid", "limit", "format", "clock"};

typedef enum fmt_e { FMT_AUTO, FMT_JSON, FMT_AVRO } fmt_t;

struct run_s;
typedef struct sw_fwdclock_s sw_fwdclock_t; /* sw_run_idle.c */

/* A thread that decodes and analyses; workers[0] is the main thread. */
typedef struct sw_worker_s {
    struct run_s *r;
    pthread_t th;
    sw_tdec_t *tdec;
    sw_avro_dec_t *adec;
    sw_metrics_proc_t proc; /* processing times of this pass, published after it */
} sw_worker_t;

typedef struct run_s {
    token_t *undelivered, *undelivered_tail; /* records awaiting delivery, oldest first */
    bool assigned_once;                      /* a rebalance callback assigned (maybe nothing) */
    int64_t last_event_ms;                   /* newest input message timestamp seen, ms (metric) */
    sw_kafka_ctx_t kctx;
    const sw_run_opts_t *opts;
    const sw_settings_t *set; /* opts->set: the typed configuration */
    const sw_log_t *log;
    sw_metrics_t *m; /* may be NULL */
    sw_params_t params;
    int64_t idle_ms;
    int64_t commit_interval_ms;
    int64_t snapshot_interval_ms;
    bool restore;
    bool eos;
    fmt_t in_fmt;
    bool out_avro;
    bool out_pager;        /* output.format pagerduty or alertmanager */
    sw_pager_opts_t pager; /* its options (strings borrowed from the conf) */
    uint64_t not_paged;    /* summaries that were not a page (never produced) */
    int32_t schema_telemetry;
    int32_t schema_alert;
    size_t max_value; /* largest value we produce: message.max.bytes less room for headers */
    const char *out_topic;
    const char *dlq_topic;
    const char *state_topic;
    const char *rep_topic; /* repartition.topic, or NULL with repartition=off */
    char rep_topic_buf[320];
    int rep_parts; /* its partitions */
    int in_parts;  /* the first input topic's partitions, read once at start
                                (0: a pattern, missing, or unknown) */
    int out_parts, dlq_parts;
    /* Per output partition, then per dead-letter partition, then per
     * repartition.topic partition (repartition=on): an offset no
     * later record of ours can precede (end offset at start, then one past
     * each delivery); -1 = unknown. Snapshots record these. */
    int64_t *out_pos;
    rd_kafka_t *consumer;
    rd_kafka_t *producer;
    rd_kafka_t *reader; /* reads snapshots and the output back (restore) */
    part_t **parts;     /* indexed by id; NULL when revoked */
    size_t nparts;
    part_t *last; /* lookup cache */
    sw_tdec_t *tdec;
    sw_avro_dec_t *adec;
    sw_registry_t *reg;  /* writer schemas by id (registry, files, fixed id) */
    bool reg_plans;      /* Avro input through reg's plans, not the fixed id */
    uint64_t reg_errors; /* registry failures already counted in the metric */
    sw_buf_t value;
    bool failed; /* exit 1 */
    bool in_txn; /* exactly_once: a transaction is open */
    uint64_t snap_seq;
    sw_run_stats_t st;
    sw_log_limit_t lim_bad, lim_kafka, lim_commit, lim_snap, lim_key, lim_reg;
    part_t *expiring;      /* partition whose idle jobs are being summarised */
    bool stopping;         /* the stop sequence runs (see stop()) */
    int64_t stop_deadline; /* when the stop must be over (ms, sw_clock_ms) */
    int64_t shutdown_ms;   /* shutdown.timeout.ms */
    int commits_waiting;   /* stop: asynchronous commits not yet answered */
    int64_t memory_budget; /* max.memory.bytes (0: none) */
    uint64_t trimmed_at;   /* engine bytes at the last malloc_trim */
    bool over_budget;
    /* Rounds and workers (sw_run_work.c). */
    int wake[2]; /* pipe: a queue stopped being empty */
    sw_worker_t *workers;
    int nworkers;          /* the main thread included */
    pthread_mutex_t wlock; /* wgen, wbusy, wquit */
    pthread_cond_t wgo, wdone;
    uint64_t wgen; /* a pass starts: the workers take jobs */
    int wbusy;     /* workers still in the pass */
    bool wquit;
    pthread_mutex_t reg_lock; /* the registry's cache, during a pass */
    part_t **jobs;            /* the pass's partitions, largest range first */
    size_t njobs, capjobs;
    atomic_size_t jnext; /* the next job to take */
    int64_t pass_now;    /* stream time of the pass (ms) for idleness */

    /* repartition=on: the forwarded time idle expiry counts in (sw_run_idle.c). */
    sw_fwdclock_t *fwdclock;
} run_t;

/* ---- shared functions --------------------------------------------------- */

bool sw_run_stop_abandoned(const run_t *r);
bool sw_run_stop_over(const run_t *r);
int sw_run_stop_budget(const run_t *r, int normal);
bool sw_run_flush_bounded(run_t *r, int normal_ms);
void sw_run_pend_add(part_t *p, int64_t offset);
void sw_run_pend_done(part_t *p, int64_t offset);
int64_t sw_run_committable(const part_t *p);
void sw_run_m_add(run_t *r, sw_metric_t id, uint64_t n);
void sw_run_m_set(run_t *r, sw_metric_t id, int64_t v);
part_t *sw_run_part_new(run_t *r, const char *topic, int32_t partition);
void sw_run_part_destroy(run_t *r, part_t *p);
part_t *sw_run_part_find(run_t *r, const char *topic, int32_t partition);
bool sw_run_produce_msg(run_t *r, const char *topic, int32_t partition, const void *key,
                        size_t keylen, const void *value, size_t vlen, rd_kafka_headers_t *hdrs,
                        token_t *tok);
void sw_run_produce_record(run_t *r, part_t *p, int64_t offset, const char *topic,
                           int32_t partition, const void *key, size_t keylen, const void *value,
                           size_t vlen, rd_kafka_headers_t *hdrs);
void sw_run_hdr_add(rd_kafka_headers_t *h, const char *name, const char *value);
void sw_run_hdr_add_i64(rd_kafka_headers_t *h, const char *name, int64_t v);
rd_kafka_headers_t *sw_run_input_headers(const rd_kafka_message_t *m);
void sw_run_hdr_add_source(rd_kafka_headers_t *h, const part_t *p, int64_t offset);
void sw_run_note_position(run_t *r, const char *topic, int32_t partition, int64_t offset);
void sw_run_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque);
bool sw_run_suppressed(run_t *r, part_t *p, int64_t offset, int action);
/** Publish the output's readiness state now (once a second). */
void sw_run_output_state(run_t *r);
void sw_run_send_dlq(run_t *r, part_t *p, const rd_kafka_message_t *m, dlq_kind_t kind,
                     const char *why);
bool sw_run_encode_record(run_t *r, part_t *p, const sw_record_t *rec);
void sw_run_send_record(run_t *r, part_t *p, int64_t pend_offset, sw_record_t *rec);
bool sw_run_txn_ok(run_t *r, rd_kafka_error_t *e, const char *what);
bool sw_run_txn_begin(run_t *r);
bool sw_run_txn_commit(run_t *r, rd_kafka_topic_partition_list_t *offsets);
bool sw_run_commit_list(run_t *r, rd_kafka_topic_partition_list_t *list, bool sync);
bool sw_run_commit_plain(run_t *r, const rd_kafka_topic_partition_list_t *only, bool sync);
void sw_run_snapshot_start(run_t *r, part_t *p);
bool sw_run_snapshot_commit_ready(const part_t *p);
void sw_run_snapshot_commit(run_t *r, part_t *p, bool sync);
void sw_run_snapshots_tick(run_t *r, int64_t now);
void sw_run_snapshot_final(run_t *r, part_t *p);
void sw_run_restore_partition(run_t *r, part_t *p, const rd_kafka_topic_partition_t *c);
int64_t sw_run_start_offset(run_t *r, const part_t *p, const rd_kafka_topic_partition_t *c);
int sw_run_origin_snapshots(run_t *r, part_t **ps, int n, int64_t budget_ms);
void sw_run_origin_pause(run_t *r, part_t *p, bool pause);
void sw_run_origin_tick(run_t *r, part_t *p, int64_t now);
void sw_run_rebuild_finish(run_t *r, part_t *p);
int sw_run_topic_partitions(run_t *r, const char *topic);
const char *sw_run_pos_topic(const run_t *r, int t, int *nparts);
int sw_run_setup(run_t *r);
int sw_run_registry_alert_id(run_t *r);
void sw_run_registry_metrics(run_t *r);
void sw_run_registry_tick(run_t *r);
void sw_run_take_stray(run_t *r, rd_kafka_message_t *m);
bool sw_run_round(run_t *r);
int sw_run_workers_start(run_t *r, int64_t threads, char *why, size_t why_size);
void sw_run_workers_stop(run_t *r);
void sw_run_work_free(part_t *p);
void sw_run_part_queue(run_t *r, part_t *p);
void sw_run_part_queue_release(part_t *p);
int sw_run_wake_open(run_t *r);
void sw_run_wake_close(run_t *r);
void sw_run_wake_wait(run_t *r, int ms);
void sw_run_rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *list, void *opaque);
/** repartition=on, once a second: a step of the barrier that finds the
 *  forwarded time (sw_run_idle.c). */
void sw_run_idle_tick(run_t *r, int64_t now);
/** The clock idle expiry uses at @p now: the forwarded time with
 *  repartition=on (never more than 9 x job.idle.ms behind), else @p now. */
int64_t sw_run_idle_now(const run_t *r, int64_t now);
void sw_run_idle_free(run_t *r);
void sw_run_offset_commit_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                             rd_kafka_topic_partition_list_t *offsets, void *opaque);

#endif /* SW_RUN_INT_H */
