/*
 * The metrics registry of `stormwatch run`: counters, gauges, labelled
 * series and one latency histogram, rendered in the Prometheus text format
 * (0.0.4) for the HTTP endpoint (sw_http.h), plus the liveness/readiness
 * state behind /healthz and /readyz. The daemon thread writes, the HTTP
 * thread reads: every value update is a C11 atomic operation; a mutex
 * guards only the label tables (series added or removed) and rendering.
 * The registry is an object; nothing here is global. No I/O.
 *
 * Where the daemon (src/daemon/sw_run.c) calls what:
 *
 *  - sw_run() start:  m = sw_metrics_new() (the caller of sw_run() may own
 *    it and pass it in the options, so that the HTTP server outlives the
 *    Kafka handles); sw_metrics_destroy() after sw_http_stop().
 *  - main loop, every iteration: sw_metrics_heartbeat(m, sw_clock_ms()).
 *  - main loop, once per second (next to expire_idle()):
 *      for each assigned partition p, lag = high watermark - p->next
 *      (rd_kafka_get_watermark_offsets(); when p->next < 0 use the committed
 *      offset, or skip: lag unknown), clamped at 0:
 *      sw_metrics_series_set(p->m_lag, lag); total += lag;
 *      sw_metrics_set(m, SW_M_ASSIGNED_PARTITIONS, r->st.partitions);
 *      sw_metrics_set_ready_state(m, r->st.partitions > 0, total or -1);
 *      sw_detect_stats(p->det, &st);
 *      sw_metrics_engine_counters(m, &p->m_seen, &st); p->m_seen = st;
 *      sum st over partitions into tot; sw_metrics_engine_gauges(m, &tot).
 *  - part_new():  p->m_events = sw_metrics_events_in(m, topic, p->forward);
 *                 p->m_lag = sw_metrics_lag_add(m, topic, partition).
 *  - part_destroy(): publish the engine counter deltas one last time, then
 *                 sw_metrics_lag_remove(m, p->m_lag) (p->m_events stays).
 *  - rebalance_cb(): sw_metrics_add(m, SW_M_REBALANCES, 1); after the
 *                 (un)assignment SW_M_ASSIGNED_PARTITIONS and
 *                 sw_metrics_set_ready_state(m, r->st.partitions > 0, -1)
 *                 (lag unknown until the next measurement).
 *  - handle(), after part_find() succeeded:
 *      t0 = sw_metrics_now_ns();
 *      sw_metrics_series_add(p->m_events, 1);
 *      sw_metrics_add(m, SW_M_INPUT_BYTES, m->len);
 *      ... decode errors: SW_M_DECODE_ERRORS; invalid: SW_M_INVALID_EVENTS;
 *      limit: SW_M_LIMIT_REJECTS (not from the engine's stats: counted once);
 *      optionally rd_kafka_message_timestamp() -> sw_metrics_set_double(m,
 *      SW_M_LAST_EVENT_TIMESTAMP, ts_ms / 1000.0);
 *      on every return path: sw_metrics_observe_ns(m, sw_metrics_now_ns() - t0).
 *  - send_dlq():    sw_metrics_add(m, SW_M_DLQ_DECODE + kind, 1) (dlq_kind_t
 *                   order: decode, invalid, limit, format).
 *  - send_record(): sw_metrics_add(m, SW_M_RECORDS_OUT_TRIGGER + rec->action, 1);
 *                   sw_metrics_first_cause(m, rec) (repeat offenders by host);
 *                   a trigger: sw_metrics_observe_alert_latency() from the
 *                   Kafka timestamp of the message that completed it.
 *  - dr_cb():       SW_M_RECORDS_DELIVERED, or SW_M_PRODUCE_ERRORS on m->err;
 *    produce():     SW_M_PRODUCE_ERRORS when rd_kafka_producev() fails.
 *  - commit():      SW_M_COMMITS per rd_kafka_commit() call;
 *                   SW_M_COMMIT_ERRORS when it (or offset_commit_cb) fails.
 */
#ifndef SW_METRICS_H
#define SW_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_detect.h"
#include "sw_types.h"

typedef struct sw_metrics_s sw_metrics_t;

/** One series of a labelled family (events by topic, lag by partition). */
typedef struct sw_metrics_series_s sw_metrics_series_t;

/**
 * Unlabelled (or fixed-label) metrics. Names, help texts and types live in
 * one table in sw_metrics_families.c; the comment gives the exported name.
 */
typedef enum sw_metric_e {
    /* counters: sw_metrics_add() */
    SW_M_INPUT_BYTES = 0,             /**< stormwatch_input_bytes_total */
    SW_M_DECODE_ERRORS,               /**< stormwatch_decode_errors_total */
    SW_M_INVALID_EVENTS,              /**< stormwatch_invalid_events_total */
    SW_M_LIMIT_REJECTS,               /**< stormwatch_limit_rejects_total */
    SW_M_DLQ_DECODE,                  /**< stormwatch_dlq_records_total{kind="decode"} */
    SW_M_DLQ_INVALID,                 /**< ...{kind="invalid"} */
    SW_M_DLQ_LIMIT,                   /**< ...{kind="limit"} */
    SW_M_DLQ_FORMAT,                  /**< ...{kind="format"} */
    SW_M_DLQ_CLOCK,                   /**< ...{kind="clock"} (out-of-time samples) */
    SW_M_DUPLICATE_SAMPLES,           /**< stormwatch_duplicate_samples_total */
    SW_M_LATE_SAMPLES,                /**< stormwatch_late_samples_total */
    SW_M_JOBS_EVICTED,                /**< stormwatch_jobs_evicted_total */
    SW_M_JOBS_EVICTED_EVIDENCE,       /**< stormwatch_jobs_evicted_with_evidence_total */
    SW_M_JOBS_REFUSED,                /**< stormwatch_jobs_refused_total (max.memory.bytes full) */
    SW_M_PEER_MARKERS,                /**< stormwatch_peer_markers_skipped_total (mixed group) */
    SW_M_DIRECT_MESSAGES,             /**< stormwatch_repartition_direct_messages_total */
    SW_M_DIRECT_REORDERED,            /**< stormwatch_repartition_direct_reordered_total */
    SW_M_SETTINGS_WARNINGS,           /**< stormwatch_settings_warnings_total */
    SW_M_COUNTERLESS_SAMPLES,         /**< stormwatch_counterless_samples_total */
    SW_M_RANK_DEATHS,                 /**< stormwatch_rank_deaths_total (SPEC 8) */
    SW_M_WATCHDOG_ERRORS,             /**< stormwatch_watchdog_errors_total (SPEC 8) */
    SW_M_FORWARDED_UNKEYED,           /**< stormwatch_forwarded_messages_total{reason="unkeyed"} */
    SW_M_FORWARDED_OTHER_KEY,         /**< ...{reason="other_key"}: a key that is not its job_id */
    SW_M_FORWARDED_OTHER_PARTITIONER, /**< ...{reason="other_partitioner"} */
    SW_M_FORWARDED_MISPLACED,         /**< ...{reason="misplaced"}: placed by no candidate */
    SW_M_FORWARDED_REPARTITION_ON,    /**< ...{reason="repartition_on"}: every message */
    SW_M_MEMORY_BUDGET,               /**< stormwatch_memory_budget_bytes */
    SW_M_RECORDS_OUT_TRIGGER,         /**< stormwatch_records_out_total{action="trigger"};
                                    + sw_action_t gives the other actions */
    SW_M_RECORDS_OUT_UPDATE,          /**< ...{action="update"} */
    SW_M_RECORDS_OUT_RESOLVE,         /**< ...{action="resolve"} */
    SW_M_RECORDS_OUT_SUMMARY,         /**< ...{action="summary"} */
    SW_M_RECORDS_OUT_CRASH,           /**< ...{action="crash"} (SPEC 8) */
    SW_M_RECORDS_OUT_WARNING,         /**< ...{action="warning"} (SPEC 8) */
    SW_M_RECORDS_DELIVERED,           /**< stormwatch_records_delivered_total */
    SW_M_PRODUCE_ERRORS,              /**< stormwatch_produce_errors_total */
    SW_M_RECORDS_CONDENSED,           /**< stormwatch_records_condensed_total */
    SW_M_SUMMARIES_NOT_PAGED,         /**< stormwatch_summaries_not_paged_total */
    SW_M_COMMITS,                     /**< stormwatch_commits_total */
    SW_M_COMMIT_ERRORS,               /**< stormwatch_commit_errors_total */
    SW_M_REBALANCES,                  /**< stormwatch_rebalances_total */
    /* stormwatch notify: deliveries by sink (sw_sink_t order) and outcome:
     * SW_M_NOTIFY_DELIVERED + 2 * sink + (permanent ? 1 : 0) */
    SW_M_NOTIFY_DELIVERED, /**< stormwatch_notify_deliveries_total{sink="alertmanager",outcome="accepted"} */
    SW_M_NOTIFY_DELIVERED_AM_PERMANENT, /**< ...{sink="alertmanager",outcome="permanent"} */
    SW_M_NOTIFY_DELIVERED_PD_ACCEPTED,  /**< ...{sink="pagerduty",outcome="accepted"} */
    SW_M_NOTIFY_DELIVERED_PD_PERMANENT, /**< ...{sink="pagerduty",outcome="permanent"} */
    SW_M_NOTIFY_DELIVERED_WH_ACCEPTED,  /**< ...{sink="webhook",outcome="accepted"} */
    SW_M_NOTIFY_DELIVERED_WH_PERMANENT, /**< ...{sink="webhook",outcome="permanent"} */
    SW_M_NOTIFY_RETRIES,    /**< stormwatch_notify_retries_total{sink="alertmanager"}; + sink */
    SW_M_NOTIFY_RETRIES_PD, /**< ...{sink="pagerduty"} */
    SW_M_NOTIFY_RETRIES_WH, /**< ...{sink="webhook"} */
    SW_M_NOTIFY_RECORDS,    /**< stormwatch_notify_records_total{verdict="skip"};
                                    + sw_notify_verdict_t */
    SW_M_NOTIFY_RECORDS_DUPLICATE, /**< ...{verdict="duplicate"} */
    SW_M_NOTIFY_RECORDS_TRIGGER,   /**< ...{verdict="trigger"} */
    SW_M_NOTIFY_RECORDS_RESOLVE,   /**< ...{verdict="resolve"} */
    SW_M_NOTIFY_RESENDS,           /**< stormwatch_notify_resends_total (Alertmanager re-sends) */
    SW_M_NOTIFY_RESEND_ERRORS,     /**< stormwatch_notify_resend_errors_total */
    SW_M_NOTIFY_DLQ,               /**< stormwatch_notify_dlq_records_total */
    SW_M_SCHEMA_REGISTRY_ERRORS,   /**< stormwatch_schema_registry_errors_total */
    SW_M_SCHEMA_REGISTRY_UP,       /**< stormwatch_schema_registry_up (1 after a
                                    request succeeded, 0 after one failed) */
    SW_M_SCHEMA_REGISTRY_HELD,     /**< stormwatch_schema_registry_held_partitions:
                                    paused until the registry answers; not
                                    ready while > 0 */
    /* stormwatch ship (sw_metrics_enable_ship()) */
    SW_M_SHIP_EVENTS,            /**< stormwatch_ship_events_total (delivered) */
    SW_M_SHIP_BYTES,             /**< stormwatch_ship_bytes_total (bytes of the lines delivered) */
    SW_M_SHIP_LOST_BYTES,        /**< stormwatch_ship_lost_bytes_total */
    SW_M_SHIP_LOST_SEGMENTS,     /**< stormwatch_ship_lost_segments_total */
    SW_M_SHIP_INVALID_LINES,     /**< stormwatch_ship_invalid_lines_total */
    SW_M_SHIP_FAILED,            /**< stormwatch_ship_failed_events_total */
    SW_M_SHIP_TRUNCATIONS,       /**< stormwatch_ship_truncations_total */
    SW_M_SHIP_ROTATIONS,         /**< stormwatch_ship_rotations_total */
    SW_M_SHIP_CHECKPOINTS,       /**< stormwatch_ship_checkpoints_total */
    SW_M_SHIP_CHECKPOINT_ERRORS, /**< stormwatch_ship_checkpoint_errors_total */
    /* integer gauges: sw_metrics_set() */
    SW_M_JOBS_TRACKED,          /**< stormwatch_jobs_tracked */
    SW_M_RANKS_TRACKED,         /**< stormwatch_ranks_tracked */
    SW_M_RETAINED_SAMPLES,      /**< stormwatch_retained_samples */
    SW_M_ENGINE_STATE_BYTES,    /**< stormwatch_engine_state_bytes */
    SW_M_BLIND_RANKS,           /**< stormwatch_blind_ranks (SPEC 8.5) */
    SW_M_ASSIGNED_PARTITIONS,   /**< stormwatch_assigned_partitions */
    SW_M_GROUP_MIXED,           /**< stormwatch_group_mixed: 1 while a member of the
                                    group runs another repartition mode; not ready */
    SW_M_REPARTITION_FOLLOWING, /**< stormwatch_repartition_following: 1 while this member,
                                    configured auto, runs as on (a member of the group runs on) */
    SW_M_REPARTITION_WAITING,   /**< stormwatch_repartition_waiting_partitions: input
                                    waiting for markers that do not come back and
                                    that cannot go without them; not ready while > 0 */
    SW_M_NOTIFY_OPEN_EPISODES,  /**< stormwatch_notify_open_episodes */
    SW_M_CONSUMER_TOTAL_LAG,    /**< stormwatch_consumer_total_lag (messages);
                                    set by sw_metrics_set_ready_state() */
    SW_M_SHIP_SEGMENTS,         /**< stormwatch_ship_segments (followed now) */
    SW_M_SHIP_LAG_BYTES,        /**< stormwatch_ship_lag_bytes (in view, not read yet) */
    SW_M_SHIP_INFLIGHT,         /**< stormwatch_ship_inflight_messages */
    SW_M_SHIP_INFLIGHT_BYTES,   /**< stormwatch_ship_inflight_bytes */
    SW_M_SHIP_PAUSED,           /**< stormwatch_ship_paused (1: reading stopped, in-flight full) */
    SW_M_UP,                    /**< stormwatch_up (1, set by sw_metrics_new()) */
    SW_M_BUILD_INFO,            /**< stormwatch_build_info{version} (1) */
    /* double gauges: sw_metrics_set_double() */
    SW_M_LAST_EVENT_TIMESTAMP, /**< stormwatch_last_event_timestamp_seconds
                                    (Unix time of the newest message) */
    SW_M_START_TIME,           /**< process_start_time_seconds (Unix time,
                                    set by sw_metrics_new()) */
    SW_M_OUTPUT_OLDEST_AGE,    /**< stormwatch_output_oldest_undelivered_age_seconds
                                    (set by sw_metrics_set_output_state()) */
    SW_M__CNT
} sw_metric_t;

/** Sinks of stormwatch notify, in sw_sink_t order (src/notify/sw_notify.h):
 *  the sink label of stormwatch_notify_request_duration_seconds. */
#define SW_METRICS_SINKS 3

/**
 * @brief One HTTP request of notify to sink @p sink (0 alertmanager,
 *        1 pagerduty, 2 webhook) took @p ns: observed in the histogram
 *        stormwatch_notify_request_duration_seconds{sink} (buckets 5 ms to
 *        10 s). Out-of-range sinks are ignored.
 */
void sw_metrics_observe_request(sw_metrics_t *m, unsigned sink, uint64_t ns);

/**
 * @brief Make this the registry of `stormwatch notify`: it renders the
 *        stormwatch_notify_* families and the ones both daemons have (up,
 *        build_info, process start time, rebalances, commits, assigned
 *        partitions, total lag, skipped input), none of `run`'s engine,
 *        input and output families. Without it (`run`) no notify family
 *        is rendered.
 */
void sw_metrics_enable_notify(sw_metrics_t *m);

/**
 * @brief A schema registry is configured (schema.registry.url): render
 *        stormwatch_schema_registry_{up,errors_total,held_partitions}.
 *        Without one they are absent, so that `up == 0` never fires where
 *        there is no registry to be down.
 */
void sw_metrics_enable_registry(sw_metrics_t *m);

/**
 * @brief Make this the registry of `stormwatch ship`: /metrics renders the
 *        stormwatch_ship_* families and the process's; /readyz is not
 *        ready while reading is paused (sw_metrics_set_output_state()).
 */
void sw_metrics_enable_ship(sw_metrics_t *m);

/**
 * @brief @p n messages of @p topic [@p partition] were skipped: their
 *        offsets were out of range (deleted by retention) and the consumer
 *        moved on by auto.offset.reset. Adds to
 *        stormwatch_input_skipped_messages_total{topic,partition} (the
 *        series appears at the first skip). Takes the mutex; accepts NULL.
 */
void sw_metrics_input_skipped(sw_metrics_t *m, const char *topic, int32_t partition, uint64_t n);

/**
 * @brief One trigger record took @p ms from its input message's Kafka
 *        timestamp to the producer: observed in the histogram
 *        stormwatch_alert_latency_seconds (buckets 10 ms to 60 s; a negative
 *        value, a producer's clock ahead of ours, counts as 0). One writer
 *        (the daemon's main thread); accepts NULL.
 */
void sw_metrics_observe_alert_latency(sw_metrics_t *m, int64_t ms);

/** @brief New registry: every value 0, up = 1, build_info = 1, start time now.
 *  @returns caller frees with sw_metrics_destroy(). */
sw_metrics_t *sw_metrics_new(void);

/** @brief Free the registry and every series (accepts NULL). Stop the HTTP
 *         server (sw_http_stop()) first: it reads the registry. */
void sw_metrics_destroy(sw_metrics_t *m);

/**
 * @brief Add @p n to a counter. Lock-free; any thread.
 * @remark Calling it on a gauge is a programming error (assert).
 */
void sw_metrics_add(sw_metrics_t *m, sw_metric_t id, uint64_t n);

/** @brief Set an integer gauge. Lock-free; any thread. */
void sw_metrics_set(sw_metrics_t *m, sw_metric_t id, int64_t v);

/** @brief Set a double gauge (SW_M_LAST_EVENT_TIMESTAMP). Lock-free. */
void sw_metrics_set_double(sw_metrics_t *m, sw_metric_t id, double v);

/** @brief Current value of any scalar metric, as exported (for tests and
 *         logs; counters above 2^53 lose precision). */
double sw_metrics_get(const sw_metrics_t *m, sw_metric_t id);

/**
 * @brief The series stormwatch_events_in_total{topic=@p topic,stage=...},
 *        stage "forward" when @p forward (an input partition whose messages
 *        are forwarded to the repartition topic), else "engine" (messages
 *        the engines analyse); created on first use (takes the mutex: call
 *        it at assignment, not per event).
 * @returns borrowed: valid until sw_metrics_destroy(); the same pointer for
 *          the same topic. Counters are never removed (they must not reset).
 */
sw_metrics_series_t *sw_metrics_events_in(sw_metrics_t *m, const char *topic, bool forward);

/** @brief The series stormwatch_miskeyed_messages_total{topic=@p topic};
 *         as sw_metrics_events_in() (add with sw_metrics_series_add()). */
sw_metrics_series_t *sw_metrics_miskeyed(sw_metrics_t *m, const char *topic);

/**
 * @brief Reference the gauge stormwatch_consumer_lag{topic,partition}
 *        (created on first reference; takes the mutex). It is not exported
 *        until the first sw_metrics_series_set() with a value >= 0.
 * @returns borrowed: valid until the matching sw_metrics_lag_remove().
 */
sw_metrics_series_t *sw_metrics_lag_add(sw_metrics_t *m, const char *topic, int32_t partition);

/**
 * @brief Drop a reference taken by sw_metrics_lag_add(); the series leaves
 *        the output with its last reference (on revocation). @p s is
 *        invalid afterwards. Accepts NULL.
 */
void sw_metrics_lag_remove(sw_metrics_t *m, sw_metrics_series_t *s);

/** @brief Add to a counter series (events_in). Lock-free. */
void sw_metrics_series_add(sw_metrics_series_t *s, uint64_t n);

/** @brief Set a gauge series (consumer_lag); a negative value means
 *         unknown and hides the series. Lock-free. */
void sw_metrics_series_set(sw_metrics_series_t *s, int64_t v);

/** @brief Current value of a series (for tests). */
int64_t sw_metrics_series_get(const sw_metrics_series_t *s);

/** @brief Nanoseconds of CLOCK_MONOTONIC, to time one event. */
uint64_t sw_metrics_now_ns(void);

/**
 * @brief Record one event's processing time in the histogram
 *        stormwatch_event_processing_seconds (buckets 1 us .. 100 ms).
 *        Lock-free (four atomic adds); any number of threads.
 */
void sw_metrics_observe_ns(sw_metrics_t *m, uint64_t ns);

/** Buckets of stormwatch_event_processing_seconds (13 bounds and +Inf). */
#define SW_METRICS_PROC_BUCKETS 14

/** Processing times gathered by one thread, not yet in the histogram. */
typedef struct sw_metrics_proc_s {
    uint64_t bucket[SW_METRICS_PROC_BUCKETS]; /**< observations per bucket */
    uint64_t sum_ns;                          /**< their sum, ns */
    uint64_t count;                           /**< observations */
} sw_metrics_proc_t;

/**
 * @brief Add one event's processing time to @p acc: no atomics, for the
 *        thread that owns @p acc (sw_metrics_observe_proc() publishes it).
 */
void sw_metrics_proc_add(sw_metrics_proc_t *acc, uint64_t ns);

/**
 * @brief Publish what @p acc gathered to the histogram as if each time had
 *        been given to sw_metrics_observe_ns() (four atomic adds per bucket
 *        instead of per event), then zero @p acc. Any number of threads.
 */
void sw_metrics_observe_proc(sw_metrics_t *m, sw_metrics_proc_t *acc);

/**
 * @brief Publish the engine's size gauges (jobs, ranks, retained samples,
 *        state bytes) from @p total, the sum of sw_detect_stats() over the
 *        assigned partitions.
 */
void sw_metrics_engine_gauges(sw_metrics_t *m, const sw_detect_stats_t *total);

/**
 * @brief Add the engine counters that grew from @p prev to @p cur of one
 *        partition's engine (duplicate and late samples). Keep @p cur as
 *        the next @p prev; a zeroed @p prev for a new engine.
 */
void sw_metrics_engine_counters(sw_metrics_t *m, const sw_detect_stats_t *prev,
                                const sw_detect_stats_t *cur);

/** @brief The daemon loop is alive at @p now_ms (sw_clock_ms(): monotonic). */
void sw_metrics_heartbeat(sw_metrics_t *m, int64_t now_ms);

/**
 * @brief Readiness inputs: whether any partition is assigned and the total
 *        lag in messages (negative: unknown). A known lag also sets
 *        SW_M_CONSUMER_TOTAL_LAG.
 */
void sw_metrics_set_ready_state(sw_metrics_t *m, bool assigned, int64_t total_lag);

/** Readiness turns false when a record waits longer than this for its
 *  delivery acknowledgement (ms; README "Health and readiness"). */
#define SW_METRICS_OUTPUT_STALL_MS 5000

/**
 * @brief Output readiness inputs: @p oldest_ms, the time (sw_clock_ms())
 *        the oldest record still waiting for its delivery acknowledgement
 *        was handed to the producer (0: none waits), and whether the
 *        producer's queue is full now. Also sets SW_M_OUTPUT_OLDEST_AGE.
 */
void sw_metrics_set_output_state(sw_metrics_t *m, int64_t oldest_ms, bool queue_full);

/**
 * @brief Liveness: the last heartbeat is younger than @p stale_ms at
 *        @p now_ms (monotonic).
 * @returns true when alive; otherwise @p why gets one line without a
 *          newline ("no heartbeat yet", "stale: last heartbeat 31.2 s ago
 *          (limit 30.0 s)").
 */
bool sw_metrics_check_health(const sw_metrics_t *m, int64_t now_ms, int64_t stale_ms, char *why,
                             size_t why_size);

/**
 * @brief Readiness: a partition is assigned, the output delivers (no
 *        record has waited over SW_METRICS_OUTPUT_STALL_MS for its
 *        acknowledgement, the producer queue is not full) and the known
 *        total lag is at most @p max_lag messages.
 * @returns true when ready; otherwise @p why gets one line without a
 *          newline ("no partitions assigned", "consumer lag unknown",
 *          "lagging: 12345 messages behind (limit 1000)", "output stalled:
 *          ...").
 */
bool sw_metrics_check_ready(const sw_metrics_t *m, int64_t max_lag, char *why, size_t why_size);

/**
 * @brief Append every metric in the Prometheus text exposition format
 *        0.0.4 to @p out: "# HELP" and "# TYPE" once per family, label
 *        values escaped, histogram buckets cumulative with le="+Inf" equal
 *        to _count. A histogram's buckets, _sum and _count are one
 *        consistent snapshot; different metrics are read one by one.
 * @remark Safe against concurrent updates; takes the registry mutex.
 */
void sw_metrics_render(const sw_metrics_t *m, sw_buf_t *out);

/** Hosts with series of their own in stormwatch_first_cause_host_* unless
 *  metrics.hosts.max says otherwise. */
#define SW_METRICS_HOSTS_DEFAULT 200

/** @brief At most @p max_hosts hosts get stormwatch_first_cause_host_*
 *         series of their own (metrics.hosts.max); later ones are counted
 *         under host="_other". 0: every host under "_other". */
void sw_metrics_set_host_limit(sw_metrics_t *m, int64_t max_hosts);

/**
 * @brief The repeat offenders (docs/fleet.md): a trigger counts a storm on
 *        its first suspect's host, a crash as it opens a death on its first
 *        death's host; an update or a later crash record that names another
 *        host moves the episode or crash there (sw_hosts_add()); other
 *        records and records without a host count nothing. Called by the
 *        daemon for every record it sends (send_record()). Accepts m NULL.
 */
void sw_metrics_first_cause(sw_metrics_t *m, const sw_record_t *rec);

#endif /* SW_METRICS_H */
