/*
 * Helpers shared by the CLI commands: option value parsing with messages
 * that name the option and the value, and the loop that reads telemetry
 * files, reports invalid lines as FILE:LINE and hands valid events on.
 */
#ifndef SW_CLI_H
#define SW_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sw_conf.h"
#include "sw_event.h"

/** Exit codes of every command. */
#define SW_EXIT_OK 0
#define SW_EXIT_RUNTIME 1
#define SW_EXIT_USAGE 2

/** @brief Parse an integer option; prints the error. @returns false on error. */
bool sw_cli_i64(const char *cmd, const char *opt, const char *value, int64_t min, int64_t max,
                int64_t *out);

/** @brief Parse a real option in [min, max]; prints the error. */
bool sw_cli_dbl(const char *cmd, const char *opt, const char *value, double min, double max,
                double *out);

/**
 * @brief Parse a --log-level value (error, warn, info or debug); prints
 *        `stormwatch CMD: option --log-level: ...` on error.
 */
bool sw_cli_log_level(const char *cmd, const char *value, sw_log_level_t *level);

/**
 * @brief sw_cli_i64() for an option that sets the same quantity as int
 *        property @p prop of the configuration table: the range is the
 *        property's (e.g. replay's --window-samples, window.samples).
 */
bool sw_cli_prop_i64(const char *cmd, const char *opt, const char *prop, const char *value,
                     int64_t *out);

/** @brief sw_cli_dbl() with the range of double property @p prop of the table. */
bool sw_cli_prop_dbl(const char *cmd, const char *opt, const char *prop, const char *value,
                     double *out);

/**
 * @brief The table's defaults as typed settings (a configuration nothing
 *        was set in), for the defaults of the offline commands' options.
 * @returns valid for the rest of the process (built on first use; not
 *          thread-safe: call from the main thread).
 */
const sw_settings_t *sw_cli_defaults(void);

/**
 * @brief The daemon commands' (run, notify) configuration into @p conf, in
 *        the order that makes later sources win: -c @p config_file (may be
 *        NULL), the STORMWATCH_* environment, -b @p brokers (may be NULL),
 *        then each -X NAME=VALUE of @p xs. Errors are printed as
 *        "stormwatch CMD: ..."; a -X error names the property, never the
 *        value (it may be a secret). @returns false on error.
 */
bool sw_cli_conf_load(const char *cmd, sw_conf_t *conf, const char *config_file,
                      const char *brokers, char *const *xs, int nx);

/** The command line of the daemon commands (run, notify). */
typedef struct sw_cli_daemon_args_s {
    const char *config_file;    /**< -c FILE, or NULL */
    const char *brokers;        /**< -b BROKERS, or NULL */
    const char *bootstrap_file; /**< --bootstrap-file FILE (run), or NULL */
    char **xs;                  /**< each -X NAME=VALUE in order (borrowed from argv; the
                                     array is the caller's to free()) */
    int nx;
    bool list, dump, markdown; /**< -X list, -X dump, -X markdown (run) */
} sw_cli_daemon_args_t;

/**
 * @brief Parse run's (@p run) or notify's options into @p a: -c, -b, -X
 *        (list, dump or NAME=VALUE), -h; run also --bootstrap-file and
 *        -X markdown. Prints the help, -X list or -X markdown itself.
 * @returns -1 to go on; else the exit status (help or a list printed, or
 *          a usage error printed). Either way the caller frees a->xs.
 */
int sw_cli_daemon_args(const char *cmd, bool run, int argc, char **argv, void (*usage)(FILE *),
                       sw_cli_daemon_args_t *a);

/**
 * @brief Whether librdkafka takes @p conf's Kafka properties for both the
 *        consumer (group @p set kafka.group_id) and the producer; prints
 *        `stormwatch CMD: ...` when not. Logs go to @p log.
 */
bool sw_cli_kafka_check(const char *cmd, const sw_conf_t *conf, const sw_settings_t *set,
                        const char *bootstrap, const sw_log_t *log);

/**
 * @brief The schema registry's id (@p set registry) for telemetry_event.avsc
 *        under the subject "<@p topic>-value", as Confluent's serializers
 *        take it: registered unless auto.register.schemas=false (produce and
 *        ship with -X schema.registry.url and no --schema-id). Prints
 *        `stormwatch CMD: schema id of subject S: why` when there is none.
 * @returns SW_EXIT_OK with @p *id set, or SW_EXIT_RUNTIME.
 */
int sw_cli_telemetry_schema_id(const char *cmd, const sw_settings_t *set, const char *topic,
                               int32_t *id);

struct sw_mock_s;

/**
 * @brief The topics `run` and `notify` read and write under @p set,
 *        created in the mock cluster @p m as the docs require them (what
 *        run's embedded cluster and `stormwatch mock` share): each input
 *        topic (not a pattern), output.topic, dlq.topic and the repartition
 *        topic (repartition on or auto) with @p partitions partitions,
 *        state.topic and notify.dlq.topic with 1. A name @p skip says
 *        exists already (NULL: none) is left as it is.
 * @returns false with @p errstr naming the topic.
 */
bool sw_cli_mock_topics(struct sw_mock_s *m, const sw_settings_t *set, int partitions,
                        bool (*skip)(void *opaque, const char *name), void *opaque, char *errstr,
                        size_t errstr_size);

/** @brief Report an unknown option or a missing argument; @returns SW_EXIT_USAGE. */
int sw_cli_bad_option(const char *cmd, int argc, char **argv, int optind_, int optopt_);

/** Called for each valid event; return false to stop reading (fatal). */
typedef bool (*sw_cli_event_cb)(void *opaque, const sw_event_t *ev, const char *file,
                                uint64_t line);

/** Counters of one read. */
typedef struct sw_cli_read_stats_s {
    uint64_t lines;   /**< non-blank lines read */
    uint64_t valid;   /**< valid events handed on */
    uint64_t invalid; /**< invalid lines skipped */
    uint64_t bytes;   /**< bytes read from files (compressed for gzip) */
} sw_cli_read_stats_t;

/**
 * @brief Read every file in turn ("-" = stdin; none = stdin) and call @p cb
 *        for each valid event. Invalid lines are reported on stderr as
 *        FILE:LINE: message and skipped, or are fatal with @p strict.
 * @returns SW_EXIT_OK, SW_EXIT_USAGE (strict and an invalid line, or input
 *          of which no line is valid: "no valid telemetry in FILE (N invalid
 *          lines)") or SW_EXIT_RUNTIME (unreadable or truncated input, or
 *          cb failed).
 */
int sw_cli_read_events(const char *cmd, char **files, int nfiles, bool strict, sw_cli_event_cb cb,
                       void *opaque, sw_cli_read_stats_t *stats);

/** Told about the event that will be handed on next (see sw_detect_prefetch). */
typedef void (*sw_cli_prefetch_cb)(void *opaque, const sw_event_t *next);

/**
 * @brief As sw_cli_read_events(), one event ahead: each event is decoded
 *        while the previous one is still to be handed on, and @p prefetch
 *        is called with it first, so the consumer can start loading the
 *        state it will need. Events are handed on in the same order.
 */
int sw_cli_read_events_ahead(const char *cmd, char **files, int nfiles, bool strict,
                             sw_cli_event_cb cb, sw_cli_prefetch_cb prefetch, void *opaque,
                             sw_cli_read_stats_t *stats);

/** What a JSON line looks like, for telling a user they fed the wrong file. */
typedef enum sw_cli_kind_e {
    SW_CLI_KIND_OTHER = 0,     /**< anything else */
    SW_CLI_KIND_TELEMETRY = 1, /**< an object with timestamp_ns and event_type */
    SW_CLI_KIND_RECORD = 2,    /**< an alert record (action, episode, first_cause_suspects) */
    SW_CLI_KIND_ANALYSIS = 3   /**< analyze's output (participating_ranks, no action) */
} sw_cli_kind_t;

/** @brief The kind of one input line (parsed as JSON; OTHER when it is not). */
sw_cli_kind_t sw_cli_line_kind(const char *line, size_t len);

/** Lines of a file looked at before deciding it is of the wrong kind. */
#define SW_CLI_SNIFF_LINES 3

#endif /* SW_CLI_H */
