/*
 * The `stormwatch notify` daemon: a consumer group on the alert topic
 * (output.topic; JSON or Confluent Avro records) that delivers each record
 * to the configured sinks (Alertmanager, PagerDuty, webhook) and commits
 * an offset only once every sink has accepted, or refused for good (then
 * the record goes to notify.dlq.topic), every record before it. What to
 * send when lives in src/notify/sw_notify.h; this file is the Kafka and
 * HTTP plumbing around it.
 */
#ifndef SW_NOTIFY_RUN_H
#define SW_NOTIFY_RUN_H

#include <signal.h>

#include "sw_conf.h"
#include "sw_log.h"
#include "sw_metrics.h"

/** Options of sw_notify_run() (all borrowed for the call). */
typedef struct sw_notify_run_opts_s {
    const sw_conf_t *conf;          /**< its kafka.* pass-through properties */
    const sw_settings_t *set;       /**< sw_conf_settings() of conf: read instead of names */
    const char *bootstrap;          /**< bootstrap.servers to use */
    volatile sig_atomic_t *running; /**< cleared (SIGTERM/SIGINT) to stop */
    volatile sig_atomic_t *stops;   /**< stop requests so far; a second abandons the stop */
    const sw_log_t *log;
    sw_metrics_t *metrics; /**< NULL: no metrics */
} sw_notify_run_opts_t;

/**
 * @brief Check the notify settings of @p set (a sink configured, URLs,
 *        alertmanager.resend.ms below alertmanager.ends.after.ms, the
 *        PagerDuty routing key's length) before anything connects.
 * @returns SW_OK, or SW_ERR_INVALID_ARG with one sentence naming the
 *          property (never a secret value).
 */
sw_err_t sw_notify_check_settings(const sw_settings_t *set, char *errstr, size_t errstr_size);

/**
 * @brief Run until *opts->running is cleared (or a fatal Kafka error).
 * @returns 0 after a clean stop, 1 on a runtime failure, 2 on a setup
 *          error (a Kafka property librdkafka refused).
 * @remark Restart and rebalance: each commit carries, in its metadata, the
 *         offset of the record that opened the oldest episode still open
 *         in that partition; a new owner re-reads from there without
 *         sending anything up to the committed offset, which rebuilds the
 *         open episodes and the dedup state.
 */
int sw_notify_run(const sw_notify_run_opts_t *opts);

#endif /* SW_NOTIFY_RUN_H */
