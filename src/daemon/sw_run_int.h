/*
 * Internal to the daemon (src/daemon/sw_run*.c): its state (run_t, part_t)
 * and sw_run.c's few shared functions. Each room's functions are declared
 * in its own header (sw_run_out.h, sw_run_work.h, sw_run_state.h,
 * sw_run_local.h, sw_run_keying.h, sw_run_members.h, sw_run_mem.h,
 * sw_run_idle.h, sw_run_setup.h), included by the rooms that call them.
 * Not for other folders.
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
 *   sw_run_local.c repartition=auto: an input partition and its repartition
 *                  partition merged into one engine by markers
 *   sw_run_keying.c repartition=auto: the group's partitioner
 *   sw_run_members.c what the group's members run (version, mode)
 *   sw_run_mem.c   one memory budget for the process
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
#include "sw_hold.h"
#include "sw_kafka.h"
#include "sw_ledger.h"
#include "sw_partition.h"
#include "sw_registry.h"
#include "sw_sched.h"
#include "sw_snapcodec.h"
#include "sw_varint.h"

#define SNAP_CHUNK (512u * 1024u) /* bytes of compressed snapshot per message */
#define SUPPRESS_DLQ 6 /* "action" of dead letters in suppression keys (after sw_action_t) */
#define SUPPRESS_FWD 7 /* "action" of forwarded copies (repartition.topic) */

/* A partition's snapshot in flight (the state side, sw_run_state.c; the
 * delivery reports of its chunks, sw_run_out.c, set first_off, count left
 * down and set failed). */
typedef struct snapfl_s {
    bool active;  /* a snapshot is being written */
    bool failed;  /* one of its chunks was refused */
    int64_t x, y; /* taken at offset x; input from y rebuilds the windows */
    int64_t xr;   /* repartition=auto: the repartition partition's x */
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
    WK_RECORD,
    WK_PEER_MARKER /* a marker of a repartition=auto member (a mixed group): skipped */
} wkind_t;

typedef struct wout_s {
    uint32_t idx;           /* the message, in the partition's round */
    uint8_t kind;           /* wkind_t */
    bool miskeyed;          /* its key is not its job_id */
    uint8_t reason;         /* WK_FORWARD: sw_fwd_reason_t */
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
    uint8_t *src;           /* repartition=auto: each message's log (0 input, 1 repartition) */
    size_t srccap;
    size_t n, cap;
    size_t w0, w1; /* [w0, w1): the range decoded and analysed by a worker */
    size_t pos;    /* the next message of the range */
    wout_t *out;   /* what the range gave, in order */
    size_t nout, capout, applied;
    sw_buf_t text;        /* errors and job ids of out */
    uint64_t msgs, bytes; /* processed since the last apply */
    int64_t max_ts;       /* newest message timestamp among them (ms) */
    int64_t last;         /* offset of the last processed, -1 none */
    int64_t rlast;        /* repartition=auto: the same of the repartition partition */
    size_t room;          /* bytes its engine asked the memory pool for: the range stopped
                             before the message, which is fed again after the main thread
                             made room (sw_run_mem.c) */
    /* repartition=auto, since the last apply: input keyed by its job_id,
     * those of it forwarded, and of those how many each candidate
     * partitioner places where they are (the WARN's evidence). */
    uint64_t jk_in, jk_fwd, jk_fit[SW_PARTITIONER__CNT];
} pwork_t;

/* Why an input message took the hop (stormwatch_forwarded_messages_total's
 * reason label). */
typedef enum sw_fwd_reason_e {
    FWD_UNKEYED,           /* no key */
    FWD_OTHER_KEY,         /* a key other than its job_id */
    FWD_OTHER_PARTITIONER, /* its job_id, placed by another candidate partitioner */
    FWD_MISPLACED,         /* its job_id, placed by none at this count (a count
                              change, a producer that picks partitions) */
    FWD_REPARTITION_ON,    /* repartition=on: every message */
    FWD__CNT
} sw_fwd_reason_t;

/* Messages held in arrival order (repartition=auto: sw_run_local.c). */
typedef struct msgq_s {
    rd_kafka_message_t **m;
    size_t head, n, cap;
    size_t bytes; /* values and keys held, and librdkafka's bytes beside each */
} msgq_t;

/* An assigned input partition. Created and destroyed by the rebalance
 * callback (sw_run.c), which runs inside rd_kafka_consumer_poll() on the
 * main thread, like every delivery report and commit answer: the main
 * thread alone touches a partition, except during a pass (sw_sched.h),
 * when the one worker that took it has its engine (det) and its work area
 * (w), and nothing else; the main thread then leaves both alone until the
 * pass is over. Each group below names the file that writes it. */
typedef struct part_s {
    /* Identity: set by part_new() (sw_run.c), read by all, never changed. */
    char *topic;
    int32_t partition;
    uint32_t id;  /* stable id carried by delivery tokens */
    bool forward; /* repartition=on, an input topic's partition: its messages
                     are forwarded to repartition.topic, not analysed here
                     (its engine stays empty; snapshots and suppression work
                     as for any partition) */
    /* Work side (sw_run_work.c): the engine and the round's work area,
     * the worker's during a pass, the main thread's otherwise; next is
     * moved by the main thread when it applies a pass. */
    sw_detector_t *det;
    pwork_t w;
    int64_t next;            /* next offset to process; -1 before the first */
    rd_kafka_queue_t *queue; /* its own queue (NULL: it comes through the consumer's) */
    /* Output side (sw_run_out.c): what may be committed. */
    sw_ledger_t led; /* pending offsets, refusals, snapshot commits (sw_ledger.h) */
    /* State side (sw_run_state.c): the snapshot flow, restore and the
     * records already on the output; the delivery reports of snapshot
     * chunks (sw_run_out.c) count snap.left down and set snap.failed. */
    snapfl_t snap;
    int64_t last_snap_ms;
    pmode_t mode;      /* PM_REBUILD until the windows are refilled (sw_run_work.c ends it) */
    int64_t rebuild_x; /* rebuild mode: offsets below it refill windows */
    int64_t rebuild_y;
    uint64_t rebuilt;   /* samples re-inserted */
    int64_t restore_t0; /* when the restore started (ms) */
    /* repartition=on, a repartition partition whose engine went on from
     * repartition=auto's engine of input p (sw_run_state.c, adopt_auto):
     * source 1 of its engine is input p (its samples and latest inputs
     * analysed under auto, as of input offset fx; rsuppress holds the
     * records of that source already sent). */
    bool foreign;
    int64_t fx;
    sw_imap_t suppress; /* records already on the output: offset*8+action
                           (consulted and emptied by sw_run_out.c as it sends) */
    uint64_t suppressed;
    /* Holds (sw_hold.h): the origin hold by the state side, the registry
     * hold by the work side. */
    sw_hold_t hold;
    /* repartition=auto (sw_run_local.c): input p analysed here with
     * repartition p, read by the mirror consumer, one engine for both, the
     * order fixed by the markers this partition writes to repartition p. */
    bool local;
    rd_kafka_queue_t *rqueue; /* repartition p's queue (the mirror's) */
    int64_t rnext;            /* next repartition offset to process; -1 before the first */
    int64_t in_read;          /* one past the last input offset read into fifo */
    int64_t mk_need;          /* a marker waits for input up to this (read beyond fifo's bound) */
    int64_t marked;           /* input offsets below it have their marker written */
    int64_t inflight;         /* the last marker written, until it is read back (-1: none) */
    msgq_t fifo;              /* input read, waiting for its marker */
    msgq_t rheld;             /* repartition messages read, not yet processed */
    sw_ledger_t rled;         /* records caused by repartition messages; its commit
                                 offsets are the xr of led's (snapshot commits) */
    sw_imap_t rsuppress;      /* their records already on the output */
    bool rebuilding_in, rebuilding_rep; /* a restore's rebuild of each log is not over */
    /* The repartition topic unavailable (sw_run_local.c, direct()): */
    int64_t marker_ms;  /* when the marker in flight was written (sw_clock_ms) */
    uint64_t copies;    /* copies read from repartition p since it was assigned */
    uint64_t mk_unread; /* markers written and not read back yet */
    int64_t rep_hi;     /* repartition p's end offset when a marker last came back */
    bool direct;        /* input analysed without waiting for its marker */
    bool rwaiting;      /* input waits for markers that do not come back (a gauge) */
    bool marker_warned; /* that wait was said at WARN (over MARKER_WARN_MS) */
    int64_t mem_fixed;  /* engine bytes beside its jobs, in the memory pool (sw_run_mem.c) */
    bool direct_after;  /* a direct spell ended: copies read before the next marker
                           back are counted as possibly out of replay's order */
    int64_t rebuild_rx, rebuild_ry; /* the repartition side's x and y */
    /* Metrics (sw_run.c): series of the thread-safe registry; mprev is
     * what the main thread last published of the engine's counters. */
    sw_metrics_series_t *m_events, *m_lag, *m_miskeyed;
    sw_detect_stats_t mprev;
} part_t;

typedef enum dlq_kind_e { DLQ_DECODE, DLQ_INVALID, DLQ_LIMIT, DLQ_FORMAT, DLQ_CLOCK } dlq_kind_t;
static const char *const k_dlq_kind[] = {"decode", "invalid", "limit", "format", "clock"};

typedef enum fmt_e { FMT_AUTO, FMT_JSON, FMT_AVRO } fmt_t;

typedef struct sw_fwdclock_s sw_fwdclock_t; /* sw_run_idle.c */

/* repartition=auto's hooks for the rooms below it, which never name
 * sw_run_local.c (as librdkafka calls its assignors, rd_kafka_assignor_t):
 * the round (sw_run_work.c) asks whether to read more of a partition and
 * has its input sorted out; delivery (sw_run_out.c) tells it that a marker
 * failed. sw_run_local.c defines them (sw_run_local_mode), sw_run()
 * installs them; called only for a partition with p->local. */
struct run_s;
typedef struct sw_run_mode_s {
    bool (*may_read)(const part_t *p);
    bool (*sort_out)(struct run_s *r, part_t *p, bool *more);
    void (*marker_failed)(struct run_s *r, part_t *p, int64_t i, const char *why);
} sw_run_mode_t;

/* A round's writer-schema plans by id (sw_run_work.c). Written by the
 * main thread only, while no pass runs (sort_out: each id of the round
 * once, from the registry's cache); read by the workers without a lock
 * during the passes, when it does not change; emptied after the round.
 * Its plans are borrowed from the registry until sw_registry_reclaim(),
 * which the main thread calls after emptying it. */
typedef struct plantab_s {
    sw_imap_t idx;               /* id -> slot */
    const sw_avro_plan_t **plan; /* by slot; NULL: a final error */
    sw_err_t *err;               /* by slot: SW_OK, or the error for the dead letter */
    uint32_t *why;               /* by slot: offset of its error text in text */
    size_t n, cap;
    sw_buf_t text;
} plantab_t;

/* What a pass needs, and the only thing a worker sees of the run (as a
 * const pointer). Written by the main thread between passes (the pass
 * clock when a pass starts, the jobs when a round sorts out); read by the
 * workers during a pass. */
typedef struct pass_s {
    fmt_t in_fmt;                /* input.format */
    bool reg_plans;              /* Avro through plans (plans), not the fixed id */
    int32_t schema_telemetry;    /* the fixed id (avro.schema.id.telemetry) */
    const plantab_t *plans;      /* the round's plans (reg_plans) */
    int64_t now_ms;              /* stream time of the pass (ms) for idleness */
    int rep_parts;               /* repartition=auto: a job's partition is part's hash mod this */
    sw_partitioner_t part;       /* repartition=auto: the group's partitioner (run_t's part) */
    const sw_log_t *log;         /* thread-safe: a new job's engine warning */
    sw_metrics_t *m;             /* may be NULL; workers only time themselves when set */
    struct sw_worker_s *workers; /* by worker index: each touches only its own */
} pass_t;

/* What one worker (sw_sched.h's worker index; 0 is the main thread) has of
 * its own: decoders and its processing times of this round, published by
 * the main thread after the passes. */
typedef struct sw_worker_s {
    sw_tdec_t *tdec;
    sw_avro_dec_t *adec;
    sw_metrics_proc_t proc; /* processing times of this pass, published after it */
    /* Workers sit side by side in one array: without this gap the
     * histogram one writes per message shared a cache line with the
     * decoders the next one reads per message. */
    unsigned char gap[64];
} sw_worker_t;

/* The daemon. One, on sw_run()'s stack; the main thread (the consume loop,
 * and the librdkafka callbacks it serves: rebalances, delivery reports,
 * commit answers) alone reads and writes it, except where a group says
 * otherwise. The workers see only pass (a const pointer) and their own
 * entry of workers; the registry's fetcher thread only the registry (its
 * own lock) and wake[1]. Each group names the file that writes it. */
typedef struct run_s {
    /* Settings: written once by sw_run() (sw_run.c) and sw_run_setup()
     * before the loop starts; read-only after. */
    const sw_run_opts_t *opts;
    const sw_settings_t *set; /* opts->set: the typed configuration */
    const sw_log_t *log;      /* thread-safe */
    sw_metrics_t *m;          /* may be NULL; thread-safe (the HTTP server reads it) */
    sw_params_t params;
    /* The intervals, job.idle.ms, shutdown.timeout.ms and max.memory.bytes
     * are read from set, never copied. */
    bool restore;
    bool eos;
    bool out_avro;
    bool out_pager;        /* output.format pagerduty or alertmanager */
    sw_pager_opts_t pager; /* its options (strings borrowed from the conf); now_ns
                              is stamped by sw_run_encode_record() */
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
    /* Clients (sw_run_setup.c), made before the loop, destroyed after. */
    sw_kafka_ctx_t kctx; /* fatal: set by librdkafka's error callback, on the
                            thread that serves the handle's queue (the main one) */
    rd_kafka_t *consumer;
    rd_kafka_t *producer;
    rd_kafka_t *reader; /* reads snapshots and the output back (restore) */
    rd_kafka_t *mirror; /* repartition=auto: reads repartition p for whoever owns input p
                            (never joins a group: assigned by the rebalance callback) */
    rd_kafka_t *mprod;  /* repartition=auto: writes the markers (linger.ms=0) */
    bool rep_auto;      /* repartition=auto in effect */
    const sw_run_mode_t *local_mode; /* its hooks (sw_run_local.c), installed by sw_run() */
    /* repartition=auto: the group's partitioner, one function for every
     * member (sw_run_local.c): where a job is analysed and where its
     * forwarded copies go. Undecided (part_pending), no marker is written,
     * so nothing is analysed or forwarded. */
    sw_partitioner_t part;
    bool part_pending;
    char part_why[200];   /* why this one (the start line) */
    int64_t part_t0;      /* ms: pending since (the decider's waits) */
    int64_t part_seen;    /* ms: the decider first held input (-1: not yet) */
    int64_t part_sampled; /* ms: the decider last read the whole topic's keys */
    int64_t part_poll;    /* ms: the record last looked for / refreshed */
    bool part_recorded;   /* this member wrote the record once */
    bool part_unread;     /* pending because the group's commits could not be read: read again */
    bool part_snaps;      /* decided by the snapshot rule: writes the record, owner of 0 or not */
    uint64_t jk_in, jk_fwd, jk_fit[SW_PARTITIONER__CNT]; /* pwork_t's, summed */
    bool jk_warned; /* the WARN of most job-keyed input hopping, said */
    /* The group's members (sw_run_members.c): versions and modes announced
     * as commits of <group.id>.members; a member configured auto runs as
     * on while a member of the group runs on, then switches by itself. */
    rd_kafka_t *members; /* commits of <group.id>.members (never joins) */
    uint64_t member_id;  /* this process's (the same across a switch) */
    int mode_pref;       /* repartition as configured: 0 off, 1 on, 2 auto */
    int mode_as;         /* this run: -1 first start, 1 follows on, 2 auto after on */
    int mode_next;       /* -1; 1: stop and start as on; 2: as auto */
    bool mode_follow;    /* configured auto, running as on */
    int64_t mem_poll;    /* ms: last announcement and reading */
    size_t mem_owned;    /* partitions owned at the last announcement */
    int64_t mem_t0;      /* ms: this run's start */
    int64_t mem_on_ms;   /* ms: an `on` member last seen */
    int mem_held;        /* input partitions held by a member that does not announce */
    int64_t *mem_off;    /* the group's commits last read: input, then repartition */
    int64_t *mem_gone;   /* per input partition: ms since when no announcement names it (0) */
    sw_registry_t *reg;  /* writer schemas by id; thread-safe (its own lock),
                            requests on its fetcher thread once the loop runs */
    /* The members' reading (sw_run_members.c), never waited for: admin
     * ListConsumerGroupOffsets of both groups, results on mem_q. */
    rd_kafka_queue_t *mem_q;
    int mem_wait;  /* results of the reading in flight not yet in (0: none) */
    bool mem_fail; /* one of them failed */
    rd_kafka_topic_partition_list_t *mem_got[2]; /* announcements, the group's commits */
    /* Partitions (sw_run.c's rebalance callback adds and removes them). */
    part_t **parts; /* indexed by id; NULL when revoked */
    size_t nparts;
    part_t *last;       /* lookup cache (sw_run_part_find) */
    bool assigned_once; /* a rebalance callback assigned (maybe nothing) */
    /* Output side (sw_run_out.c): producing, delivery, commits. */
    sw_tokens_t undelivered; /* records awaiting delivery, oldest first (sw_ledger.h) */
    /* Per output partition, then per dead-letter partition, then per
     * repartition.topic partition (repartition=on): an offset no
     * later record of ours can precede (end offset at start, then one past
     * each delivery); -1 = unknown. Snapshots (sw_run_state.c) record these. */
    int64_t *out_pos;
    sw_buf_t value;      /* the record being encoded */
    bool in_txn;         /* exactly_once: a transaction is open */
    uint64_t not_paged;  /* summaries that were not a page (never produced) */
    int commits_waiting; /* stop: asynchronous commits not yet answered (sw_run.c) */
    /* State side (sw_run_state.c). */
    uint64_t snap_seq;
    /* Work side (sw_run_work.c): rounds, passes, the registry's holds. */
    int wake[2];          /* pipe: a queue (or the registry's fetcher) has news; the
                             write end is written by librdkafka's threads and the
                             fetcher thread, the read end by the loop */
    sw_sched_t *sched;    /* the worker threads, rounds and passes (sw_sched.h) */
    sw_worker_t *workers; /* by worker index (pass.workers): each worker writes
                             only its own entry, during a pass */
    int nworkers;         /* the main thread included */
    pass_t pass;          /* the workers' view (they get &pass as const): written
                             between passes only */
    plantab_t plans;      /* the round's writer-schema plans, behind pass.plans */
    void **jobs;          /* a round's partitions (part_t *) */
    size_t njobs, capjobs;
    sw_tdec_t *tdec; /* the main thread's decoders (workers[0]) */
    sw_avro_dec_t *adec;
    uint64_t reg_errors;   /* registry failures already counted in the metric */
    int64_t last_event_ms; /* newest input message timestamp seen, ms (metric) */
    /* The loop and the stop (sw_run.c); failed and st are written by
     * every side, on the main thread. */
    bool failed;           /* exit 1 */
    bool stopping;         /* the stop sequence runs (see stop()) */
    int64_t stop_deadline; /* when the stop must be over (ms, sw_clock_ms) */
    part_t *expiring;      /* partition whose idle jobs are being summarised */
    uint64_t trimmed_at;   /* engine bytes at the last malloc_trim */
    bool over_budget;
    /* Memory (sw_run_mem.c): one budget for every engine (max.memory.bytes),
     * written by the workers' engines atomically, evicted from on the main
     * thread between passes. */
    sw_detect_pool_t pool;
    int64_t prefetch_kb;  /* queued.max.messages.kbytes lowered to fit (0: as set) */
    int64_t prefetch_msg; /* queued.min.messages: one a kB (0: as set) */
    uint64_t mem_refused; /* jobs refused for memory, said in the last WARN */
    /* A mixed group (sw_run_work.c): markers of repartition=auto members
     * seen by a member in another mode. */
    uint64_t peer_markers;
    int64_t peer_marker_ms; /* when the last one was seen (sw_clock_ms; 0: never) */
    sw_run_stats_t st;
    sw_log_limit_t lim_bad, lim_kafka, lim_commit, lim_snap, lim_key, lim_reg, lim_mem;
    char rep_fix[1400]; /* the command that gives the repartition topic the input's count */
    /* repartition=on: the forwarded time idle expiry counts in
     * (sw_run_idle.c, once a second on the main thread). */
    sw_fwdclock_t *fwdclock;
} run_t;

/* ---- shared (each room's own functions: sw_run_<room>.h) -------------- */

/* A job's owner partition: of the repartition topic's @p rep_parts, the
 * one partitioner @p part gives its job_id (@p job, @p len bytes; no key
 * or a null job_id is the empty one). Where repartition=auto analyses
 * the job and where its forwarded copies go (murmur2 under on). The one
 * place this is computed. */
static inline int32_t sw_run_owner_partition(sw_partitioner_t part, const void *job, size_t len,
                                             int rep_parts)
{
    return sw_partition_of(part, len ? job : "", len, rep_parts);
}

#endif /* SW_RUN_INT_H */
