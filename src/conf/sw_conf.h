/*
 * Configuration of `stormwatch run`: librdkafka-style `name=value`
 * properties, all described by one static table in sw_conf_table.c that
 * drives validation, the typed settings, `-X list`, `-X dump` and the README. Kafka pass-through
 * properties (`kafka.*`) are stored verbatim for the Kafka layer. This
 * module parses and stores; it never creates Kafka handles or prints.
 *
 * Precedence, lowest first: built-in defaults, then the file given with -c
 * (sw_conf_load_file()), then the environment (sw_conf_load_env()), then
 * `-X name=value` on the command line (sw_conf_set()/sw_conf_set_pair()).
 * Callers apply the sources in that order; the module keeps the value set
 * last.
 *
 * Environment variables read (all through sw_conf_load_env()):
 * - STORMWATCH_<NAME>: property <name> of the table, upper-cased with '.'
 *   turned into '_' (STORMWATCH_WINDOW_SAMPLES sets window.samples);
 * - STORMWATCH_KAFKA_<P>, STORMWATCH_KAFKA_CONSUMER_<P>,
 *   STORMWATCH_KAFKA_PRODUCER_<P>: kafka.<p>, kafka.consumer.<p>,
 *   kafka.producer.<p>, where <p> is lower-cased with '_' turned into '.'
 *   (STORMWATCH_KAFKA_SASL_PASSWORD sets kafka.sasl.password).
 * Every other STORMWATCH_* variable is an error.
 */
#ifndef SW_CONF_H
#define SW_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_analysis.h"
#include "sw_err.h"
#include "sw_log.h"
#include "sw_types.h"

/** Result of sw_conf_set(), as rd_kafka_conf_res_t. */
typedef enum sw_conf_res_e {
    SW_CONF_OK = 0,       /**< value stored */
    SW_CONF_INVALID = -1, /**< known name, unacceptable value */
    SW_CONF_UNKNOWN = -2  /**< no such property */
} sw_conf_res_t;

/** Where a Kafka pass-through property goes. */
typedef enum sw_conf_scope_e {
    SW_CONF_SCOPE_BOTH = 0,     /**< kafka.<p>: consumer and producer */
    SW_CONF_SCOPE_CONSUMER = 1, /**< kafka.consumer.<p> */
    SW_CONF_SCOPE_PRODUCER = 2  /**< kafka.producer.<p> */
} sw_conf_scope_t;

/** One Kafka pass-through property (strings borrowed from the conf). */
typedef struct sw_conf_kafka_s {
    sw_conf_scope_t scope; /**< handles it applies to */
    const char *name;      /**< full name, e.g. "kafka.consumer.fetch.max.bytes" */
    const char *rk_name;   /**< librdkafka name, e.g. "fetch.max.bytes" */
    const char *value;     /**< value exactly as set (may be secret) */
    bool secret;           /**< sw_conf_is_secret(name) */
} sw_conf_kafka_t;

/** The configuration (opaque). */
typedef struct sw_conf_s sw_conf_t;

/**
 * @brief A configuration holding the default of every property.
 * @returns caller frees with sw_conf_destroy(); NULL only if a default of
 *          the built-in table fails its own validation (a bug the tests catch).
 */
sw_conf_t *sw_conf_new(void);

/** @brief Free @p conf and everything it holds; NULL is accepted. */
void sw_conf_destroy(sw_conf_t *conf);

/**
 * @brief Set property @p name to @p value (librdkafka rd_kafka_conf_set()).
 * @param name a table property or a pass-through name: kafka.<p> (consumer
 *        and producer), kafka.consumer.<p> or kafka.producer.<p>, <p> not
 *        empty. Pass-through values are stored verbatim; librdkafka checks
 *        them when the Kafka layer applies them.
 * @param value the text, not trimmed; NULL resets a table property to its
 *        default and removes a pass-through property.
 * @param errstr on failure, one sentence naming the property, quoting the
 *        value (never for secrets) and saying what was expected; unknown
 *        names get up to three suggestions. May be NULL when errstr_size is 0.
 * @returns SW_CONF_OK; SW_CONF_INVALID (bad value) or SW_CONF_UNKNOWN (bad
 *          name), and then @p conf is unchanged.
 * @remark Setting a property again replaces its value; a pass-through
 *         property set again moves to the end of the sw_conf_kafka_next()
 *         order. Pointers previously returned for this property by the
 *         getters become invalid.
 */
sw_conf_res_t sw_conf_set(sw_conf_t *conf, const char *name, const char *value, char *errstr,
                          size_t errstr_size);

/**
 * @brief sw_conf_set() for one `name=value` argument of -X (split at the
 *        first '='; neither side trimmed).
 * @returns as sw_conf_set(); a missing '=' or empty name is SW_CONF_INVALID
 *          with `expected property=value, got "..."` in @p errstr (what
 *          follows a secret name is redacted).
 */
sw_conf_res_t sw_conf_set_pair(sw_conf_t *conf, const char *pair, char *errstr, size_t errstr_size);

/**
 * @brief Append @p text (an argument or configuration line as the user gave
 *        it) quoted for an error message: everything after a word that names
 *        a secret property is replaced by `[redacted]`, whatever separates
 *        them (`kafka.sasl.password VALUE`, `kafka.sasl.password:VALUE`),
 *        and the user information of URLs too.
 * @param b appended to; @p text borrowed during the call.
 */
void sw_conf_put_arg(sw_buf_t *b, const char *text);

/**
 * @brief Length of the property name at the start of @p arg (the longest
 *        prefix of [A-Za-z0-9._-]): what an error may show of an argument
 *        without its value.
 */
size_t sw_conf_arg_name_len(const char *arg);

/**
 * @brief Apply a configuration file: `name=value` lines split at the first
 *        '=', name and value trimmed of surrounding whitespace; blank lines
 *        and lines whose first non-blank character is '#' are skipped. There
 *        are no trailing comments ('#' may be part of a value, e.g. a
 *        password). A UTF-8 byte order mark and CRLF line ends are accepted.
 * @param path borrowed for the call; named as given in error messages.
 * @returns SW_OK; SW_ERR_IO (cannot open or read: `cannot read
 *          configuration file "PATH": REASON`), SW_ERR_PARSE (a line without
 *          '=' or with an empty name: `PATH:LINE: expected property=value,
 *          got "..."`), SW_ERR_NOT_FOUND (unknown name) or
 *          SW_ERR_INVALID_ARG (bad value); the last two are sw_conf_set()'s
 *          message prefixed with `PATH:LINE: `.
 * @remark Stops at the first error; lines before it stay applied.
 */
sw_err_t sw_conf_load_file(sw_conf_t *conf, const char *path, char *errstr, size_t errstr_size);

/**
 * @brief Apply the STORMWATCH_* variables of @p envp (see the file comment
 *        for the mapping); other variables are ignored. Values are not
 *        trimmed. Table properties and STORMWATCH_KAFKA_<P> are applied
 *        before the scoped STORMWATCH_KAFKA_CONSUMER_/PRODUCER_ forms, so
 *        the more specific one is applied later.
 * @param envp NULL-terminated "NAME=value" array (main passes environ);
 *        NULL means no variables. Borrowed for the call.
 * @returns SW_OK; SW_ERR_NOT_FOUND for a STORMWATCH_* variable that maps
 *          to no property (the message names the variable and suggests
 *          close ones) or SW_ERR_INVALID_ARG for a bad value (sw_conf_set()'s
 *          message prefixed with `environment variable NAME: `).
 * @remark Stops at the first error; variables before it stay applied.
 */
sw_err_t sw_conf_load_env(sw_conf_t *conf, char *const *envp, char *errstr, size_t errstr_size);

/**
 * @brief The i-th STORMWATCH_* variable sw_conf_load_env() passed over as a
 *        Kubernetes service link (the variables Kubernetes injects for a
 *        Service named stormwatch-*: <SVC>_SERVICE_HOST, <SVC>_SERVICE_PORT
 *        [_<NAME>], <SVC>_PORT, <SVC>_PORT_<n>_<PROTO>[_PROTO|_PORT|_ADDR],
 *        each with a value of the shape Kubernetes writes).
 * @returns the variable's name (borrowed: valid until sw_conf_destroy()),
 *          or NULL when i is past the last one.
 */
const char *sw_conf_ignored_env(const sw_conf_t *conf, size_t i);

/**
 * @brief Whether a table property was set by the user (a file, the
 *        environment or -X, even to its default value) rather than left at
 *        its default. false for unknown names.
 */
bool sw_conf_is_set(const sw_conf_t *conf, const char *name);

/**
 * @brief Whether pass-through properties of scope @p scope reach a Kafka
 *        handle of kind @p handle (SW_CONF_SCOPE_CONSUMER or
 *        SW_CONF_SCOPE_PRODUCER; SW_CONF_SCOPE_BOTH for one that is
 *        neither, an admin client): kafka.<p> reaches every handle,
 *        kafka.consumer.<p> and kafka.producer.<p> their own kind.
 */
bool sw_conf_scope_reaches(sw_conf_scope_t scope, sw_conf_scope_t handle);

/**
 * @brief sw_conf_is_set()'s twin for the pass-through properties: whether
 *        the user set librdkafka's @p rk_name (e.g. "partitioner") for
 *        handles of kind @p handle (sw_conf_scope_reaches()).
 */
bool sw_conf_passthrough_is_set(const sw_conf_t *conf, sw_conf_scope_t handle, const char *rk_name);

/**
 * @brief Current value of an int property.
 * @returns SW_OK; SW_ERR_NOT_FOUND (no such property) or
 *          SW_ERR_INVALID_ARG (not an int property), *valp then untouched.
 */
sw_err_t sw_conf_get_i64(const sw_conf_t *conf, const char *name, int64_t *valp);

/** @brief Current value of a double property; errors as sw_conf_get_i64(). */
sw_err_t sw_conf_get_dbl(const sw_conf_t *conf, const char *name, double *valp);

/** @brief Current value of a bool property; errors as sw_conf_get_i64(). */
sw_err_t sw_conf_get_bool(const sw_conf_t *conf, const char *name, bool *valp);

/**
 * @brief Current value of a string or enum property, or of a pass-through
 *        property by its full name.
 * @returns borrowed: valid until @p name is set again or @p conf is
 *          destroyed; NULL for an unknown name, a pass-through property
 *          that is not set, or a property of another type.
 */
const char *sw_conf_get_str(const sw_conf_t *conf, const char *name);

/**
 * @brief Number of elements of a list property.
 * @returns the count (>= 1 for a list property); 0 for an unknown name or a
 *          property of another type.
 */
size_t sw_conf_get_list_cnt(const sw_conf_t *conf, const char *name);

/**
 * @brief Element @p idx of a list property, trimmed (topics starting with
 *        '^' are regexes, passed on as they are).
 * @returns borrowed: valid until @p name is set again or @p conf is
 *          destroyed; NULL when @p idx >= sw_conf_get_list_cnt().
 */
const char *sw_conf_get_list_elem(const sw_conf_t *conf, const char *name, size_t idx);

/**
 * @brief Rules that involve more than one property, for after every source
 *        is applied: pagerduty.routing.key is required when output.format is
 *        pagerduty.
 * @returns SW_OK, or SW_ERR_INVALID_ARG with one sentence naming the
 *          property that is missing (never a secret value) in @p errstr.
 */
sw_err_t sw_conf_check(const sw_conf_t *conf, char *errstr, size_t errstr_size);

/** @brief The analysis parameters (SPEC 4) from the current values. */
sw_params_t sw_conf_params(const sw_conf_t *conf);

/* ---- Typed settings ------------------------------------------------------
 * Every table property as a typed field, filled once by sw_conf_settings()
 * from the table's current values, each through its row's offsetof() (a
 * new property: its row in sw_conf_table.c and its field here): enums
 * instead of their text, on/off as bool, lists as arrays. Code below the CLI reads these fields, never a
 * property by name. The enums list their values in the order of the
 * table's allowed values (test_conf checks each one).
 */

/** input.format */
typedef enum sw_in_format_e {
    SW_IN_FORMAT_AUTO = 0, /**< auto: Confluent-framed Avro or JSON, per record */
    SW_IN_FORMAT_JSON = 1,
    SW_IN_FORMAT_AVRO = 2
} sw_in_format_t;

/** output.format */
typedef enum sw_out_format_e {
    SW_OUT_FORMAT_JSON = 0,
    SW_OUT_FORMAT_AVRO = 1,
    SW_OUT_FORMAT_PAGERDUTY = 2,
    SW_OUT_FORMAT_ALERTMANAGER = 3
} sw_out_format_t;

/** processing.guarantee */
/** repartition (the order of its values in the property table) */
typedef enum sw_repartition_e {
    SW_REPARTITION_ON = 0,  /**< every input message takes the hop */
    SW_REPARTITION_OFF = 1, /**< none does: the engines read the input */
    SW_REPARTITION_AUTO = 2 /**< only those not on their job's partition (docs/keying-auto.md) */
} sw_repartition_t;

/** repartition.partitioner (the order of its values in the property table) */
typedef enum sw_rep_partitioner_e {
    SW_REP_PARTITIONER_AUTO = 0,    /**< recorded, kept (murmur2) or detected */
    SW_REP_PARTITIONER_MURMUR2 = 1, /**< the others: sw_partitioner_t + 1 */
    SW_REP_PARTITIONER_CRC32 = 2,
    SW_REP_PARTITIONER_FNV1A = 3
} sw_rep_partitioner_t;

typedef enum sw_guarantee_e {
    SW_GUARANTEE_AT_LEAST_ONCE = 0,
    SW_GUARANTEE_EXACTLY_ONCE = 1
} sw_guarantee_t;

/** The elements of a list property, trimmed (borrowed, see sw_settings_t). */
typedef struct sw_conf_strs_s {
    const char *const *v; /**< n elements */
    size_t n;
} sw_conf_strs_t;

/** Kafka cluster, group and the daemon's topics. */
typedef struct sw_settings_kafka_s {
    const char *bootstrap_servers; /**< bootstrap.servers ("" = the embedded mock cluster) */
    const char *group_id;          /**< group.id */
    sw_conf_strs_t input_topics;   /**< input.topics (>= 1; '^' starts a regex) */
    const char *output_topic;      /**< output.topic */
    const char *dlq_topic;         /**< dlq.topic */
} sw_settings_kafka_t;

/** Record encodings and fixed Avro schema ids. */
typedef struct sw_settings_format_s {
    sw_in_format_t input;                /**< input.format */
    sw_out_format_t output;              /**< output.format */
    int32_t schema_id_telemetry;         /**< avro.schema.id.telemetry */
    int32_t schema_id_alert;             /**< avro.schema.id.alert */
    sw_conf_strs_t schema_ids_telemetry; /**< avro.schema.ids.telemetry: ID=PATH each (checked) */
} sw_settings_format_t;

/** The Confluent Schema Registry client (schema.registry.*). */
typedef struct sw_settings_registry_s {
    sw_conf_strs_t urls;       /**< schema.registry.url (0 elements: no registry) */
    const char *user_info;     /**< schema.registry.basic.auth.user.info (secret; "" none) */
    const char *ca_location;   /**< schema.registry.ssl.ca.location */
    const char *cert_location; /**< schema.registry.ssl.certificate.location */
    const char *key_location;  /**< schema.registry.ssl.key.location */
    int64_t timeout_ms;        /**< schema.registry.request.timeout.ms */
    bool auto_register;        /**< auto.register.schemas */
} sw_settings_registry_t;

/** The pager bodies of output.format=pagerduty|alertmanager (run, notify, replay). */
typedef struct sw_settings_pager_s {
    const char *routing_key;   /**< pagerduty.routing.key (secret; "" unset) */
    const char *generator_url; /**< alertmanager.generator.url ("" none) */
    const char *labels;        /**< alertmanager.labels ("" none) */
    int64_t ends_after_ms;     /**< alertmanager.ends.after.ms (0: no endsAt) */
} sw_settings_pager_t;

/** The stream engines. */
typedef struct sw_settings_engine_s {
    sw_params_t params;       /**< SPEC 4 (as sw_conf_params(); hash_key zero) */
    int64_t job_idle_ms;      /**< job.idle.ms */
    int64_t max_memory_bytes; /**< max.memory.bytes (0: no budget) */
} sw_settings_engine_t;

/** The daemon's delivery, state and threads. */
typedef struct sw_settings_delivery_s {
    sw_guarantee_t guarantee;          /**< processing.guarantee */
    int64_t commit_interval_ms;        /**< commit.interval.ms as the daemon applies it: 100
                                       with exactly_once when the property is not set */
    int64_t shutdown_timeout_ms;       /**< shutdown.timeout.ms */
    int worker_threads;                /**< worker.threads (0: the CPUs this process may use) */
    bool topics_create;                /**< topics.create=on */
    bool state_restore;                /**< state.restore=on */
    const char *state_topic;           /**< state.topic */
    int64_t snapshot_interval_ms;      /**< snapshot.interval.ms */
    sw_repartition_t repartition_mode; /**< repartition */
    bool repartition;                  /**< repartition=on or auto: a repartition topic is used */
    const char *repartition_topic; /**< repartition.topic as set ("" = <group.id>.repartition) */
    sw_rep_partitioner_t repartition_partitioner; /**< repartition.partitioner */
} sw_settings_delivery_t;

/** Logging, the HTTP endpoints and the embedded mock cluster. */
typedef struct sw_settings_ops_s {
    sw_log_level_t log_level;   /**< log.level */
    const char *metrics_listen; /**< metrics.listen ("" off) */
    const char *health_listen;  /**< health.listen ("" off) */
    int64_t ready_max_lag;      /**< ready.max.lag */
    int64_t metrics_hosts_max;  /**< metrics.hosts.max */
    int mock_brokers;           /**< mock.brokers */
    int mock_partitions;        /**< mock.partitions */
} sw_settings_ops_t;

/** One sink of stormwatch notify (<sink>.* properties). */
typedef struct sw_settings_sink_s {
    const char *url;          /**< alertmanager.url (comma-separated), pagerduty.url or
                                   webhook.url; "" leaves the sink off (PagerDuty: off
                                   while pagerduty.routing.key is unset) */
    int64_t timeout_ms;       /**< <sink>.timeout.ms */
    const char *bearer_token; /**< <sink>.auth.bearer.token (secret; "" none) */
    const char *basic_auth;   /**< <sink>.auth.basic (secret; "" none) */
    const char *ca_location;  /**< <sink>.ssl.ca.location ("" the system's) */
    double rate_limit;        /**< <sink>.rate.limit (0: none) */
} sw_settings_sink_t;

/** stormwatch notify. */
typedef struct sw_settings_notify_s {
    const char *group_id;            /**< notify.group.id */
    const char *dlq_topic;           /**< notify.dlq.topic */
    int64_t retry_backoff_ms;        /**< notify.retry.backoff.ms */
    int64_t retry_backoff_max_ms;    /**< notify.retry.backoff.max.ms */
    int64_t commit_interval_ms;      /**< commit.interval.ms as set (notify has no transactions) */
    int64_t alertmanager_resend_ms;  /**< alertmanager.resend.ms */
    const char *webhook_hmac_secret; /**< webhook.hmac.secret (secret; "" none) */
    sw_settings_sink_t alertmanager;
    sw_settings_sink_t pagerduty;
    sw_settings_sink_t webhook;
} sw_settings_notify_t;

/**
 * Every table property, typed. Pass-through kafka.* properties are not
 * here: sw_conf_kafka_next() hands them to the Kafka layer.
 * Strings and list arrays are borrowed from the conf they were filled from:
 * valid until that property is set again or the conf is destroyed (fill
 * the settings after the last sw_conf_set*()/sw_conf_load_*()).
 */
typedef struct sw_settings_s {
    sw_settings_kafka_t kafka;
    sw_settings_format_t format;
    sw_settings_registry_t registry;
    sw_settings_pager_t pager;
    sw_settings_engine_t engine;
    sw_settings_delivery_t delivery;
    sw_settings_ops_t ops;
    sw_settings_notify_t notify;
} sw_settings_t;

/** @brief Fill @p set from the current values of @p conf (see sw_settings_t). */
void sw_conf_settings(const sw_conf_t *conf, sw_settings_t *set);

/**
 * @brief The range of an int property of the table, for a command-line
 *        option that sets the same quantity (replay's --window-samples).
 * @returns false (and *minp, *maxp untouched) for an unknown name or a
 *          property of another type.
 */
bool sw_conf_range_i64(const char *name, int64_t *minp, int64_t *maxp);

/** @brief The range of a double property; as sw_conf_range_i64(). */
bool sw_conf_range_dbl(const char *name, double *minp, double *maxp);

/**
 * @brief Iterate over the pass-through properties in the order they were
 *        last set. Apply them in this order: a later setting then wins,
 *        also across scopes (kafka.x after kafka.consumer.x wins for the
 *        consumer).
 * @param idx cursor: set to 0 before the first call.
 * @param kprop filled on success; its strings are borrowed until the next
 *        sw_conf_set*()/sw_conf_load_*() call or sw_conf_destroy().
 * @returns true with *kprop filled, false after the last one.
 * @code
 *   size_t i = 0; sw_conf_kafka_t kp;
 *   while (sw_conf_kafka_next(conf, &i, &kp)) ...
 * @endcode
 */
bool sw_conf_kafka_next(const sw_conf_t *conf, size_t *idx, sw_conf_kafka_t *kprop);

/**
 * @brief Whether the value of property @p name must never be shown: table
 *        properties flagged secret, and pass-through names whose librdkafka
 *        part is sasl.password, sasl.oauthbearer.client.secret,
 *        sasl.oauthbearer.config, ssl.key.password, ssl.key.pem,
 *        ssl.keystore.password, ends in ".password" or contains "secret".
 *        Works for names that are not set, or not valid, as well.
 */
bool sw_conf_is_secret(const char *name);

/**
 * @brief Append the property table for `stormwatch run -X list` to @p out:
 *        name, type, range or allowed values, default and description, one
 *        property per line, then the pass-through forms.
 */
void sw_conf_list(sw_buf_t *out);

/**
 * @brief Append every property with its current value to @p out, one
 *        `name=value` line each: the table in table order, then the
 *        pass-through properties in sw_conf_kafka_next() order. Secret
 *        values are shown as `[redacted]`.
 */
void sw_conf_dump(const sw_conf_t *conf, sw_buf_t *out);

/** @brief Append the property table as Markdown (for the README) to @p out. */
void sw_conf_markdown(sw_buf_t *out);

/**
 * @brief Parse a bool value the way bool properties do: true, false, yes,
 *        no, 1 or 0 (lower-case).
 * @param name property name used in the message.
 * @returns SW_CONF_OK with *valp set, or SW_CONF_INVALID with
 *          `configuration property "NAME": value "V" is not a boolean
 *          (expected true, false, yes, no, 1 or 0)` (value redacted when
 *          @p name is secret).
 */
sw_conf_res_t sw_conf_parse_bool(const char *name, const char *value, bool *valp, char *errstr,
                                 size_t errstr_size);

#endif /* SW_CONF_H */
