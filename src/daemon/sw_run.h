/*
 * The daemon behind `stormwatch run`: a consumer group reading telemetry,
 * one stream engine per assigned partition (jobs never span partitions
 * after keying), alert records to the output topic, undecodable or invalid
 * input to the dead-letter topic, at-least-once delivery (an input offset
 * is committed only after every record caused by earlier input has been
 * acknowledged). Stops on the running flag, flushing and committing.
 */
#ifndef SW_RUN_H
#define SW_RUN_H

#include <signal.h>
#include <stdint.h>

#include "sw_conf.h"
#include "sw_log.h"
#include "sw_metrics.h"

/** Counters of a running daemon (for logs and metrics). */
typedef struct sw_run_stats_s {
    uint64_t messages;      /**< input messages consumed */
    uint64_t bytes;         /**< input bytes consumed */
    uint64_t decode_errors; /**< input that could not be decoded */
    uint64_t invalid;       /**< decoded input that broke SPEC 2 */
    uint64_t limited;       /**< input refused by max.jobs / max.ranks.per.job */
    uint64_t clock_refused; /**< samples refused as out of time (dead letters of kind clock) */
    uint64_t miskeyed;      /**< input whose key is not its job_id */
    uint64_t forwarded;     /**< input forwarded to repartition.topic */
    uint64_t dlq;           /**< records sent to the DLQ */
    uint64_t records[SW_ACTION_CNT]; /**< alert records by action */
    uint64_t delivered;              /**< records acknowledged by the broker */
    uint64_t produce_errors;         /**< records the broker did not take */
    uint64_t commits;                /**< offset commits sent */
    uint64_t rebalances;             /**< assignments and revocations */
    uint64_t partitions;             /**< partitions assigned now */
} sw_run_stats_t;

/** Options of sw_run(). */
typedef struct sw_run_opts_s {
    const sw_conf_t *conf;          /**< borrowed: its kafka.* pass-through properties and
                                           sw_conf_check() */
    const sw_settings_t *set;       /**< borrowed: sw_conf_settings() of conf, which the
                                           daemon reads instead of property names */
    const char *bootstrap;          /**< bootstrap.servers to use (borrowed) */
    volatile sig_atomic_t *running; /**< cleared by someone else to stop */
    const sw_log_t *log;            /**< borrowed */
    sw_metrics_t *metrics;          /**< borrowed; NULL: no metrics */
    volatile sig_atomic_t *stops;   /**< stop requests so far (NULL: none); a
                                           second one abandons the stop at once */
} sw_run_opts_t;

/**
 * @brief Run the daemon until *running becomes 0 or a fatal error.
 * @returns 0 after a clean shutdown, 1 after a runtime failure (fatal Kafka
 *          error, a record the broker did not take) or a stop that did not
 *          finish within shutdown.timeout.ms, 130 after a second stop
 *          request, 2 when the Kafka configuration is refused.
 */
int sw_run(const sw_run_opts_t *opts);

/**
 * @brief The repartition topic @p set names (repartition.topic, or
 *        "<group.id>.repartition" when that is empty) into @p buf.
 * @returns false, with buf "", when repartition=off.
 */
bool sw_run_repartition_topic(const sw_settings_t *set, char *buf, size_t size);

#endif /* SW_RUN_H */
