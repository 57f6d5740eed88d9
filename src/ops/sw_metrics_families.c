/*
 * The metric families of stormwatch's daemons (see sw_metrics_int.h): one
 * row per exported series or dynamic family, with its name, type, help
 * text and the source of its value, and which daemon (run, notify, ship)
 * exports it. A new metric is an id in sw_metrics.h and a row here; the
 * registry (sw_metrics.c) renders whatever this table lists.
 */
#include "sw_metrics_int.h"

#include <string.h>

#include "sw_analysis.h"
#include "sw_metrics.h"

#ifndef SW_VERSION
#define SW_VERSION "unknown"
#endif

/* The fixed-label ids follow sw_action_t, so callers may add the action. */
_Static_assert(SW_M_RECORDS_OUT_TRIGGER + SW_ACTION_UPDATE == SW_M_RECORDS_OUT_UPDATE &&
                   SW_M_RECORDS_OUT_TRIGGER + SW_ACTION_RESOLVE == SW_M_RECORDS_OUT_RESOLVE &&
                   SW_M_RECORDS_OUT_TRIGGER + SW_ACTION_SUMMARY == SW_M_RECORDS_OUT_SUMMARY &&
                   SW_M_RECORDS_OUT_TRIGGER + SW_ACTION_CRASH == SW_M_RECORDS_OUT_CRASH &&
                   SW_M_RECORDS_OUT_TRIGGER + SW_ACTION_WARNING == SW_M_RECORDS_OUT_WARNING,
               "records_out ids must follow sw_action_t");

/* Families `notify` exports besides its own stormwatch_notify_* ones: the
 * process, the consumer group and its lag, skipped input. */
int sw_metrics_row_owner(const desc_t *d)
{
    if (strncmp(d->name, "stormwatch_notify_", 18) == 0) return OWN_NOTIFY;
    if (strncmp(d->name, "stormwatch_ship_", 16) == 0) return OWN_SHIP;
    switch (d->src) {
    case SRC_SKIPPED: return OWN_BOTH;
    case SRC_SCALAR: break;
    default: return OWN_RUN;
    }
    switch (d->id) {
    case SW_M_UP:
    case SW_M_BUILD_INFO:
    case SW_M_START_TIME: return OWN_BOTH | OWN_SHIP;
    case SW_M_OUTPUT_OLDEST_AGE: return OWN_RUN | OWN_SHIP;
    case SW_M_REBALANCES:
    case SW_M_COMMITS:
    case SW_M_COMMIT_ERRORS:
    case SW_M_ASSIGNED_PARTITIONS:
    case SW_M_CONSUMER_TOTAL_LAG: return OWN_BOTH;
    default: return OWN_RUN;
    }
}

/* The schema registry's families exist only where one is configured
 * (sw_metrics_enable_registry()): without one there is nothing to be up. */
bool sw_metrics_registry_row(const desc_t *d)
{
    return d->src == SRC_SCALAR &&
           (d->id == SW_M_SCHEMA_REGISTRY_ERRORS || d->id == SW_M_SCHEMA_REGISTRY_UP ||
            d->id == SW_M_SCHEMA_REGISTRY_HELD);
}

/* Initializer macros, kept on their lines (clang-format 14 boxes them). */
// clang-format off
#define SCALAR(n, t, i, h) {n, t, SRC_SCALAR, i, NULL, NULL, h}
#define LABELLED(n, t, i, ln, lv, h) {n, t, SRC_SCALAR, i, ln, lv, h}
// clang-format on

const desc_t sw_metrics_desc[] = {
    SCALAR("stormwatch_up", MT_GAUGE, SW_M_UP, "1 while the daemon runs."),
    LABELLED("stormwatch_build_info", MT_GAUGE, SW_M_BUILD_INFO, "version", SW_VERSION,
             "Always 1; the label gives the stormwatch version."),
    SCALAR("process_start_time_seconds", MT_GAUGE_DOUBLE, SW_M_START_TIME,
           "Start time of the process since the Unix epoch, in seconds."),
    {"stormwatch_events_in_total", MT_COUNTER, SRC_EVENTS_IN, -1, NULL, NULL,
     "Input messages consumed, by topic and stage: forward (an input topic's messages copied "
     "to the repartition topic, repartition=on) or engine (messages the engines analyse: the "
     "repartition topic's, or the input's with repartition=off). Each event is counted once "
     "per stage it passes."},
    {"stormwatch_input_skipped_messages_total", MT_COUNTER, SRC_SKIPPED, -1, NULL, NULL,
     "Messages never read because their offsets were out of range (deleted by retention "
     "before they were consumed; auto.offset.reset moved past them): data lost, by topic and "
     "partition."},
    {"stormwatch_first_cause_host_total", MT_COUNTER, SRC_FIRST_CAUSE, -1, NULL, NULL,
     "Storm episodes by the host of their trigger's first suspect (kind=storm) and crashes by "
     "the host of their first death as the crash opened (kind=death); at most "
     "metrics.hosts.max hosts get series of their own, later ones are counted under "
     "host=\"_other\" (docs/fleet.md)."},
    {"stormwatch_first_cause_host_jobs", MT_GAUGE, SRC_FIRST_CAUSE_JOBS, -1, NULL, NULL,
     "Distinct jobs in which the host was named first (kind=storm: a storm's first cause; "
     "kind=death: a crash's first death) during the last 24 hours of event time, up to 64; "
     "not for host=\"_other\". StormwatchRepeatOffenderHost fires at 3 storm jobs."},
    {"stormwatch_miskeyed_messages_total", MT_COUNTER, SRC_MISKEYED, -1, NULL, NULL,
     "Input messages whose key is not their job_id (no key, or another key), by input topic: "
     "their job may be analysed by several engines (key telemetry by job_id)."},
    SCALAR("stormwatch_input_bytes_total", MT_COUNTER, SW_M_INPUT_BYTES,
           "Bytes of input message values consumed."),
    SCALAR("stormwatch_decode_errors_total", MT_COUNTER, SW_M_DECODE_ERRORS,
           "Input messages that could not be decoded (sent to the DLQ)."),
    SCALAR("stormwatch_invalid_events_total", MT_COUNTER, SW_M_INVALID_EVENTS,
           "Decoded input events that broke the event rules (sent to the DLQ)."),
    SCALAR("stormwatch_limit_rejects_total", MT_COUNTER, SW_M_LIMIT_REJECTS,
           "Input events refused by max.jobs or max.ranks.per.job (sent to the DLQ)."),
    LABELLED("stormwatch_dlq_records_total", MT_COUNTER, SW_M_DLQ_DECODE, "kind", "decode",
             "Records sent to the dead-letter topic, by kind of error."),
    LABELLED("stormwatch_dlq_records_total", MT_COUNTER, SW_M_DLQ_INVALID, "kind", "invalid", NULL),
    LABELLED("stormwatch_dlq_records_total", MT_COUNTER, SW_M_DLQ_LIMIT, "kind", "limit", NULL),
    LABELLED("stormwatch_dlq_records_total", MT_COUNTER, SW_M_DLQ_FORMAT, "kind", "format", NULL),
    LABELLED("stormwatch_dlq_records_total", MT_COUNTER, SW_M_DLQ_CLOCK, "kind", "clock", NULL),
    SCALAR("stormwatch_duplicate_samples_total", MT_COUNTER, SW_M_DUPLICATE_SAMPLES,
           "Samples dropped as duplicates by the engine."),
    SCALAR("stormwatch_late_samples_total", MT_COUNTER, SW_M_LATE_SAMPLES,
           "Samples older than their rank's newest sample."),
    SCALAR("stormwatch_settings_warnings_total", MT_COUNTER, SW_M_SETTINGS_WARNINGS,
           "Jobs warned that stale.ms or window.samples cannot work for them (once per job "
           "and kind; the log says which)."),
    SCALAR("stormwatch_counterless_samples_total", MT_COUNTER, SW_M_COUNTERLESS_SAMPLES,
           "TelemetryEvent v4 samples without device_used_bytes (the backend lacks the "
           "counter): skipped, and noted in their job's records."),
    SCALAR("stormwatch_jobs_evicted_total", MT_COUNTER, SW_M_JOBS_EVICTED,
           "Jobs with the least evidence evicted to make room (max.jobs or max.memory.bytes)."),
    SCALAR("stormwatch_jobs_evicted_with_evidence_total", MT_COUNTER, SW_M_JOBS_EVICTED_EVIDENCE,
           "Of the jobs evicted, those with samples (a rank with two or more, no rising run, no "
           "open episode): their records may differ from replay's (the log names them)."),
    SCALAR("stormwatch_jobs_refused_total", MT_COUNTER, SW_M_JOBS_REFUSED,
           "New jobs refused because max.memory.bytes was full of jobs that could not go "
           "(their events dead-lettered as limit)."),
    SCALAR("stormwatch_peer_markers_skipped_total", MT_COUNTER, SW_M_PEER_MARKERS,
           "Markers of a group member running repartition=auto skipped by a member in another "
           "mode (the group is mixed)."),
    SCALAR("stormwatch_repartition_direct_messages_total", MT_COUNTER, SW_M_DIRECT_MESSAGES,
           "repartition=auto: input messages analysed without waiting for their marker, while "
           "the repartition topic did not give markers back within 500 ms (docs/keying-auto.md)."),
    SCALAR("stormwatch_repartition_direct_reordered_total", MT_COUNTER, SW_M_DIRECT_REORDERED,
           "repartition=auto: copies from other partitions read after input analysed directly: a "
           "restore from an older snapshot may see them in another order (docs/keying-auto.md)."),
    SCALAR("stormwatch_rank_deaths_total", MT_COUNTER, SW_M_RANK_DEATHS,
           "Rank deaths the engines learnt of (death markers and silent ranks, SPEC 8)."),
    SCALAR("stormwatch_watchdog_errors_total", MT_COUNTER, SW_M_WATCHDOG_ERRORS,
           "error/critical events that are not death markers (NCCL watchdog and the like)."),
    LABELLED("stormwatch_forwarded_messages_total", MT_COUNTER, SW_M_FORWARDED_UNKEYED, "reason",
             "unkeyed",
             "Input messages forwarded to the repartition topic keyed by their job_id, by reason: "
             "unkeyed (no key), other_key (a key that is not its job_id), other_partitioner "
             "(keyed by its job_id, but placed by a partitioner other than the group's: "
             "repartition.partitioner), misplaced (keyed by its job_id where no candidate "
             "partitioner puts it: a partition count change, a producer that picks partitions), "
             "repartition_on (repartition=on forwards every message)."),
    LABELLED("stormwatch_forwarded_messages_total", MT_COUNTER, SW_M_FORWARDED_OTHER_KEY, "reason",
             "other_key", NULL),
    LABELLED("stormwatch_forwarded_messages_total", MT_COUNTER, SW_M_FORWARDED_OTHER_PARTITIONER,
             "reason", "other_partitioner", NULL),
    LABELLED("stormwatch_forwarded_messages_total", MT_COUNTER, SW_M_FORWARDED_MISPLACED, "reason",
             "misplaced", NULL),
    LABELLED("stormwatch_forwarded_messages_total", MT_COUNTER, SW_M_FORWARDED_REPARTITION_ON,
             "reason", "repartition_on", NULL),
    SCALAR("stormwatch_memory_budget_bytes", MT_GAUGE, SW_M_MEMORY_BUDGET,
           "max.memory.bytes: the engines' memory budget (0 = none)."),
    SCALAR("stormwatch_jobs_tracked", MT_GAUGE, SW_M_JOBS_TRACKED, "Jobs the engines track now."),
    SCALAR("stormwatch_ranks_tracked", MT_GAUGE, SW_M_RANKS_TRACKED,
           "Ranks the engines track now."),
    SCALAR("stormwatch_retained_samples", MT_GAUGE, SW_M_RETAINED_SAMPLES,
           "Samples held in all rank windows now."),
    SCALAR("stormwatch_engine_state_bytes", MT_GAUGE, SW_M_ENGINE_STATE_BYTES,
           "Bytes of engine state now."),
    SCALAR("stormwatch_blind_ranks", MT_GAUGE, SW_M_BLIND_RANKS,
           "Ranks blind now: collector degraded or silent (SPEC 8.5)."),
    {"stormwatch_event_processing_seconds", MT_HISTOGRAM, SRC_HISTOGRAM, -1, NULL, NULL,
     "Time to process one input message (decode, engine, produce), in seconds."},
    LABELLED("stormwatch_records_out_total", MT_COUNTER, SW_M_RECORDS_OUT_TRIGGER, "action",
             "trigger", "Alert records produced, by action."),
    LABELLED("stormwatch_records_out_total", MT_COUNTER, SW_M_RECORDS_OUT_UPDATE, "action",
             "update", NULL),
    LABELLED("stormwatch_records_out_total", MT_COUNTER, SW_M_RECORDS_OUT_RESOLVE, "action",
             "resolve", NULL),
    LABELLED("stormwatch_records_out_total", MT_COUNTER, SW_M_RECORDS_OUT_SUMMARY, "action",
             "summary", NULL),
    LABELLED("stormwatch_records_out_total", MT_COUNTER, SW_M_RECORDS_OUT_CRASH, "action", "crash",
             NULL),
    LABELLED("stormwatch_records_out_total", MT_COUNTER, SW_M_RECORDS_OUT_WARNING, "action",
             "warning", NULL),
    {"stormwatch_alert_latency_seconds", MT_HISTOGRAM, SRC_ALERT_HISTOGRAM, -1, NULL, NULL,
     "Alert latency: from the Kafka timestamp of the input message that completed a trigger "
     "(normally when its producer wrote it) to the trigger record handed to the producer, in "
     "seconds."},
    SCALAR("stormwatch_records_delivered_total", MT_COUNTER, SW_M_RECORDS_DELIVERED,
           "Records (alerts and dead letters) acknowledged by the broker."),
    SCALAR("stormwatch_produce_errors_total", MT_COUNTER, SW_M_PRODUCE_ERRORS,
           "Records the broker did not take."),
    SCALAR("stormwatch_records_condensed_total", MT_COUNTER, SW_M_RECORDS_CONDENSED,
           "Records over the producer's message.max.bytes, sent condensed."),
    SCALAR("stormwatch_summaries_not_paged_total", MT_COUNTER, SW_M_SUMMARIES_NOT_PAGED,
           "Job summaries a pager format did not send (no open episode to resolve)."),
    /* stormwatch notify. Two labels: the first is written into the label
     * name (a fixed, safe text), the second is the escaped value. */
    LABELLED("stormwatch_notify_deliveries_total", MT_COUNTER, SW_M_NOTIFY_DELIVERED,
             "sink=\"alertmanager\",outcome", "accepted",
             "Alert records delivered by stormwatch notify, by sink and outcome (accepted: "
             "2xx; permanent: refused for good and dead-lettered)."),
    LABELLED("stormwatch_notify_deliveries_total", MT_COUNTER, SW_M_NOTIFY_DELIVERED_AM_PERMANENT,
             "sink=\"alertmanager\",outcome", "permanent", NULL),
    LABELLED("stormwatch_notify_deliveries_total", MT_COUNTER, SW_M_NOTIFY_DELIVERED_PD_ACCEPTED,
             "sink=\"pagerduty\",outcome", "accepted", NULL),
    LABELLED("stormwatch_notify_deliveries_total", MT_COUNTER, SW_M_NOTIFY_DELIVERED_PD_PERMANENT,
             "sink=\"pagerduty\",outcome", "permanent", NULL),
    LABELLED("stormwatch_notify_deliveries_total", MT_COUNTER, SW_M_NOTIFY_DELIVERED_WH_ACCEPTED,
             "sink=\"webhook\",outcome", "accepted", NULL),
    LABELLED("stormwatch_notify_deliveries_total", MT_COUNTER, SW_M_NOTIFY_DELIVERED_WH_PERMANENT,
             "sink=\"webhook\",outcome", "permanent", NULL),
    LABELLED("stormwatch_notify_retries_total", MT_COUNTER, SW_M_NOTIFY_RETRIES, "sink",
             "alertmanager",
             "Requests stormwatch notify will retry (429, 408, 5xx, timeout, "
             "network error), by sink."),
    LABELLED("stormwatch_notify_retries_total", MT_COUNTER, SW_M_NOTIFY_RETRIES_PD, "sink",
             "pagerduty", NULL),
    LABELLED("stormwatch_notify_retries_total", MT_COUNTER, SW_M_NOTIFY_RETRIES_WH, "sink",
             "webhook", NULL),
    LABELLED("stormwatch_notify_records_total", MT_COUNTER, SW_M_NOTIFY_RECORDS, "verdict", "skip",
             "Alert records read by stormwatch notify, by what they meant: skip (nothing to "
             "page), duplicate (already delivered), trigger, resolve."),
    LABELLED("stormwatch_notify_records_total", MT_COUNTER, SW_M_NOTIFY_RECORDS_DUPLICATE,
             "verdict", "duplicate", NULL),
    LABELLED("stormwatch_notify_records_total", MT_COUNTER, SW_M_NOTIFY_RECORDS_TRIGGER, "verdict",
             "trigger", NULL),
    LABELLED("stormwatch_notify_records_total", MT_COUNTER, SW_M_NOTIFY_RECORDS_RESOLVE, "verdict",
             "resolve", NULL),
    SCALAR("stormwatch_notify_resends_total", MT_COUNTER, SW_M_NOTIFY_RESENDS,
           "Open episodes re-sent to Alertmanager (every alertmanager.resend.ms)."),
    SCALAR("stormwatch_notify_resend_errors_total", MT_COUNTER, SW_M_NOTIFY_RESEND_ERRORS,
           "Re-sends no Alertmanager accepted (tried again at the next interval)."),
    SCALAR("stormwatch_notify_dlq_records_total", MT_COUNTER, SW_M_NOTIFY_DLQ,
           "Records stormwatch notify dead-lettered (undecodable, or refused for good)."),
    SCALAR("stormwatch_notify_open_episodes", MT_GAUGE, SW_M_NOTIFY_OPEN_EPISODES,
           "Episodes open now (kept and re-sent to Alertmanager)."),
    {"stormwatch_notify_request_duration_seconds", MT_HISTOGRAM, SRC_REQ_HISTOGRAM, -1, NULL, NULL,
     "Time of each stormwatch notify HTTP request (every attempt, re-sends included), "
     "by sink, in seconds."},
    SCALAR("stormwatch_rebalances_total", MT_COUNTER, SW_M_REBALANCES,
           "Consumer group assignments and revocations."),
    SCALAR("stormwatch_schema_registry_errors_total", MT_COUNTER, SW_M_SCHEMA_REGISTRY_ERRORS,
           "Schema registry requests that failed (unreachable, timeout, 5xx, auth)."),
    SCALAR("stormwatch_schema_registry_up", MT_GAUGE, SW_M_SCHEMA_REGISTRY_UP,
           "1 when the last schema registry request succeeded, 0 when it failed."),
    SCALAR("stormwatch_schema_registry_held_partitions", MT_GAUGE, SW_M_SCHEMA_REGISTRY_HELD,
           "Input partitions paused until the schema registry answers (not ready while > 0)."),
    SCALAR("stormwatch_assigned_partitions", MT_GAUGE, SW_M_ASSIGNED_PARTITIONS,
           "Input partitions assigned to this instance now."),
    SCALAR("stormwatch_repartition_waiting_partitions", MT_GAUGE, SW_M_REPARTITION_WAITING,
           "repartition=auto: partitions whose input waits over 500 ms for markers the "
           "repartition topic does not give back, and that hold copies, so cannot go on "
           "without them: not ready while > 0."),
    SCALAR("stormwatch_group_mixed", MT_GAUGE, SW_M_GROUP_MIXED,
           "1 while a member of the consumer group runs another repartition mode (its markers "
           "were seen in the last minute): not ready until the group agrees."),
    SCALAR("stormwatch_repartition_following", MT_GAUGE, SW_M_REPARTITION_FOLLOWING,
           "1 while this member, configured repartition=auto, runs as on because a member of "
           "its group runs on (or an earlier release that does not announce its mode); it "
           "switches to auto by itself once they are gone."),
    {"stormwatch_consumer_lag", MT_GAUGE, SRC_LAG, -1, NULL, NULL,
     "Messages behind the high watermark, by assigned partition."},
    SCALAR("stormwatch_consumer_total_lag", MT_GAUGE, SW_M_CONSUMER_TOTAL_LAG,
           "Messages behind the high watermarks, over all assigned partitions."),
    SCALAR("stormwatch_commits_total", MT_COUNTER, SW_M_COMMITS, "Offset commits sent."),
    SCALAR("stormwatch_commit_errors_total", MT_COUNTER, SW_M_COMMIT_ERRORS,
           "Offset commits that failed."),
    SCALAR("stormwatch_last_event_timestamp_seconds", MT_GAUGE_DOUBLE, SW_M_LAST_EVENT_TIMESTAMP,
           "Timestamp of the newest input message since the Unix epoch, in seconds."),
    SCALAR("stormwatch_output_oldest_undelivered_age_seconds", MT_GAUGE_DOUBLE,
           SW_M_OUTPUT_OLDEST_AGE,
           "Age of the oldest record (alert, dead letter, forwarded copy) still waiting for "
           "its delivery acknowledgement; 0 when none waits. Over 5 s: not ready."),
    SCALAR("stormwatch_ship_events_total", MT_COUNTER, SW_M_SHIP_EVENTS,
           "Lines of the followed files delivered to Kafka (acknowledged)."),
    SCALAR("stormwatch_ship_bytes_total", MT_COUNTER, SW_M_SHIP_BYTES,
           "Bytes of the lines delivered (the file's bytes, newline included)."),
    SCALAR("stormwatch_ship_lost_bytes_total", MT_COUNTER, SW_M_SHIP_LOST_BYTES,
           "Bytes of segments never read: pruned, deleted or truncated before they were "
           "shipped (each loss is logged with the file and byte range)."),
    SCALAR("stormwatch_ship_lost_segments_total", MT_COUNTER, SW_M_SHIP_LOST_SEGMENTS,
           "Segments with lost bytes."),
    SCALAR("stormwatch_ship_invalid_lines_total", MT_COUNTER, SW_M_SHIP_INVALID_LINES,
           "Lines that are not valid telemetry (logged with file:line): sent as they are "
           "with an empty key (the daemon dead-letters them), or skipped with --invalid skip; "
           "over-long lines are always skipped."),
    SCALAR("stormwatch_ship_failed_events_total", MT_COUNTER, SW_M_SHIP_FAILED,
           "Lines Kafka refused for good (a permanent delivery error; logged with file:line)."),
    SCALAR("stormwatch_ship_truncations_total", MT_COUNTER, SW_M_SHIP_TRUNCATIONS,
           "Followed files truncated in place."),
    SCALAR("stormwatch_ship_rotations_total", MT_COUNTER, SW_M_SHIP_ROTATIONS,
           "Segments renamed, or carried on by another file (a copy, its gzip)."),
    SCALAR("stormwatch_ship_checkpoints_total", MT_COUNTER, SW_M_SHIP_CHECKPOINTS,
           "Checkpoint files written."),
    SCALAR("stormwatch_ship_checkpoint_errors_total", MT_COUNTER, SW_M_SHIP_CHECKPOINT_ERRORS,
           "Checkpoint writes that failed."),
    SCALAR("stormwatch_ship_segments", MT_GAUGE, SW_M_SHIP_SEGMENTS, "Segments followed now."),
    SCALAR("stormwatch_ship_lag_bytes", MT_GAUGE, SW_M_SHIP_LAG_BYTES,
           "Bytes in the followed files not read yet (compressed bytes for gzip)."),
    SCALAR("stormwatch_ship_inflight_messages", MT_GAUGE, SW_M_SHIP_INFLIGHT,
           "Messages sent and not yet acknowledged."),
    SCALAR("stormwatch_ship_inflight_bytes", MT_GAUGE, SW_M_SHIP_INFLIGHT_BYTES,
           "Bytes of the messages sent and not yet acknowledged."),
    SCALAR("stormwatch_ship_paused", MT_GAUGE, SW_M_SHIP_PAUSED,
           "1 while reading is paused: the in-flight limit is reached (Kafka unreachable or "
           "slow); not ready then."),
};
const size_t sw_metrics_ndesc = sizeof(sw_metrics_desc) / sizeof(sw_metrics_desc[0]);
