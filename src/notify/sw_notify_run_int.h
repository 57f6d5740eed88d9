/*
 * Internal to stormwatch notify (src/notify/sw_notify_run.c, the consumer
 * loop, commits and rebalances; src/notify/sw_notify_sink.c, the sinks,
 * their retries, dead letters and Alertmanager re-sends): the daemon's
 * state and the functions the two files share. Not for other files.
 */
#ifndef SW_NOTIFY_RUN_INT_H
#define SW_NOTIFY_RUN_INT_H

#include "sw_notify_run.h"

#include <inttypes.h>
#include <stdbool.h>

#include "sw_arena.h"
#include "sw_codec_pager.h"
#include "sw_kafka.h"
#include "sw_notify.h"
#include "sw_notify_http.h"

#define SW_NOTIFY_MAX_URLS 16
#define SW_NOTIFY_DUE_BATCH 64
#define SW_NOTIFY_DLQ_BODY_MAX 4096
_Static_assert(SW_SINK__CNT == SW_METRICS_SINKS, "sinks of sw_notify.h and sw_metrics.h");

/* One sink as configured. */
typedef struct sink_s {
    bool on;
    sw_sink_t kind;
    char *urls_buf;                       /* owned copy of the URLs, split in place */
    const char *urls[SW_NOTIFY_MAX_URLS]; /* POST targets (Alertmanager: .../api/v2/alerts) */
    char *am_targets[SW_NOTIFY_MAX_URLS]; /* owned, Alertmanager only */
    size_t n_urls;
    sw_notify_http_t *http;
    sw_notify_bucket_t bucket[SW_NOTIFY_MAX_URLS];
} sink_t;

/* What is known of one partition of the alert topic. */
typedef struct npart_s {
    bool assigned;
    int64_t replay_until; /* records below were delivered before: rebuild only */
    int64_t done;         /* next offset to commit (-1: nothing done yet) */
    bool dirty;           /* done moved since the last commit */
} npart_t;

typedef struct notify_s {
    const sw_notify_run_opts_t *opts;
    const sw_log_t *log;
    sw_metrics_t *m;
    sw_kafka_ctx_t kctx;
    rd_kafka_t *consumer;
    rd_kafka_t *producer;
    const char *topic; /* output.topic: the alerts */
    const char *dlq_topic;
    int32_t alert_schema_id;
    sink_t sinks[SW_SINK__CNT];
    sw_notify_backoff_t backoff;
    sw_notify_t *table;
    sw_pager_opts_t am_opts, pd_opts;
    npart_t *parts;
    size_t n_parts;
    int64_t commit_interval_ms;
    int64_t shutdown_ms;
    int64_t last_commit_ms;
    uint64_t rnd; /* xorshift state for the jitter */
    sw_notify_resp_t resp;
    sw_buf_t body;
    sw_buf_t json; /* the record as JSON (Avro decoded) */
    sw_arena_t arena;
    sw_log_limit_t lim_bad, lim_retry;
    uint64_t delivered, dlq, duplicates;
    uint64_t generation;        /* assignments and revocations so far */
    uint64_t dlq_failed;        /* dead letters the broker did not take */
    bool paused;                /* the assignment is paused (a delivery waits) */
    rd_kafka_message_t **stash; /* read while paused, handled next (in order) */
    size_t n_stash, cap_stash;
    int64_t last_lag_ms;
    bool assigned_once;  /* a rebalance callback assigned (maybe nothing) */
    int64_t join_t0_ms;  /* when the consumer started joining its group */
    int64_t join_note_s; /* the next "waiting N s for the first assignment" note */
} notify_t;

static inline bool sw_nrun_running(const notify_t *n)
{
    return *n->opts->running && !n->kctx.fatal;
}

/** @brief Add to a metric when the registry exists. */
void sw_nrun_m_add(notify_t *n, sw_metric_t id, uint64_t v);

/** @brief The next number of the jitter's xorshift generator. */
uint64_t sw_nrun_rnd(notify_t *n);

/** @brief ns since the Unix epoch. */
int64_t sw_nrun_wall_ns(void);

/** @brief Set up sink @p kind from the configuration (off when its URL is unset). */
bool sw_nsink_setup(notify_t *n, sw_sink_t kind, char *errstr, size_t errstr_size);

/** @brief Free every sink's client and URLs. */
void sw_nsink_destroy(notify_t *n);

/** @brief Pause or resume the whole assignment (while a delivery waits). */
void sw_nsink_set_paused(notify_t *n, bool pause);

/**
 * @brief Sleep @p ms in slices, re-sending due Alertmanager episodes and
 *        serving the consumer meanwhile (what it hands out is stashed).
 * @returns false when a stop came.
 */
bool sw_nsink_wait_ms(notify_t *n, int64_t ms);

/** Outcome of sw_nsink_deliver(). */
typedef enum sw_deliv_e { SW_DELIV_DONE, SW_DELIV_STOPPED } sw_deliv_t;

/**
 * @brief Deliver @p rec (its JSON @p json) to sink @p s: retried until some
 *        URL accepts, or dead-lettered when every URL refuses for good.
 */
sw_deliv_t sw_nsink_deliver(notify_t *n, sink_t *s, const rd_kafka_message_t *rkm,
                            const sw_record_t *rec, const char *json, size_t len);

/** @brief Re-send every due open episode to every Alertmanager URL, once each. */
void sw_nsink_resend_due(notify_t *n);

/**
 * @brief Dead-letter @p rkm (headers: reason, sink, HTTP status and body,
 *        source), retried until the broker acknowledges it.
 * @returns false when a stop came first.
 */
bool sw_nsink_dlq(notify_t *n, const rd_kafka_message_t *rkm, const char *reason, const char *sink,
                  long status, const sw_buf_t *answer);

/** @brief Delivery reports of the dead-letter producer (rd_kafka_conf_set_dr_msg_cb). */
void sw_nsink_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque);

#endif /* SW_NOTIFY_RUN_INT_H */
