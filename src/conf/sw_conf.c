/*
 * Configuration: one static table (prop_table) describes every property
 * and drives defaults, validation, `-X list`, `-X dump` and the README
 * table. kafka.* pass-through properties are kept verbatim, in the order
 * they were last set. Errors go to the caller's errstr, never to stdio;
 * a secret value never appears in an error or a dump. No Kafka handles.
 */
#include "sw_conf.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "sw_alloc.h"

typedef enum prop_type_e {
    PROP_INT,  /**< int64, range min..max */
    PROP_DBL,  /**< double, range dmin..dmax */
    PROP_STR,  /**< string, length min..max characters */
    PROP_BOOL, /**< true/false/yes/no/1/0 */
    PROP_ENUM, /**< one of allowed[] */
    PROP_LIST  /**< comma-separated, non-empty trimmed elements */
} prop_type_t;

#define PROP_F_SECRET 0x1u   /* value never shown */
#define PROP_F_TOPIC 0x2u    /* Kafka topic name (list: each non-^ element) */
#define PROP_F_HOSTPORT 0x4u /* empty, or HOST:PORT with PORT 0..65535 */
#define PROP_F_URL 0x8u      /* empty, or an http:// or https:// URL */
#define PROP_F_LABELS 0x10u  /* empty, or name=value,... Alertmanager labels */
#define PROP_F_URLS 0x20u    /* empty, or comma-separated http:// or https:// URLs */
#define PROP_F_EMPTY 0x40u   /* list: may be empty (no elements) */
#define PROP_F_IDFILE 0x80u  /* list: each element ID=PATH, ID 0..2147483647 */

typedef struct prop_s {
    const char *name;
    prop_type_t type;
    int64_t min;                /**< int: least value; string: least length */
    int64_t max;                /**< int: greatest value; string: greatest length */
    double dmin;                /**< double: least value */
    double dmax;                /**< double: greatest value */
    const char *const *allowed; /**< enum: NULL-terminated values */
    const char *defval;         /**< default, as text (parsed by sw_conf_new()) */
    const char *desc;           /**< one line, no '|' (Markdown) */
    unsigned flags;             /**< PROP_F_* */
} prop_t;

/* Index of each property in prop_table, so code reads values without a
 * name lookup that could miss. */
enum prop_id {
    P_BOOTSTRAP_SERVERS,
    P_GROUP_ID,
    P_INPUT_TOPICS,
    P_OUTPUT_TOPIC,
    P_DLQ_TOPIC,
    P_INPUT_FORMAT,
    P_OUTPUT_FORMAT,
    P_AVRO_SCHEMA_ID_TELEMETRY,
    P_AVRO_SCHEMA_ID_ALERT,
    P_AVRO_SCHEMA_IDS_TELEMETRY,
    P_SCHEMA_REGISTRY_URL,
    P_SCHEMA_REGISTRY_USER_INFO,
    P_SCHEMA_REGISTRY_CA,
    P_SCHEMA_REGISTRY_CERT,
    P_SCHEMA_REGISTRY_KEY,
    P_SCHEMA_REGISTRY_TIMEOUT_MS,
    P_AUTO_REGISTER_SCHEMAS,
    P_PAGERDUTY_ROUTING_KEY,
    P_ALERTMANAGER_GENERATOR_URL,
    P_ALERTMANAGER_LABELS,
    P_ALERTMANAGER_ENDS_AFTER_MS,
    P_WINDOW_SAMPLES,
    P_STALE_MS,
    P_SPIKE_MIN_BYTES,
    P_SPIKE_FRACTION,
    P_SKEW_NOTE_MULTIPLIER,
    P_JOB_IDLE_MS,
    P_MAX_JOBS,
    P_MAX_RANKS_PER_JOB,
    P_MAX_MEMORY_BYTES,
    P_PROCESSING_GUARANTEE,
    P_COMMIT_INTERVAL_MS,
    P_SHUTDOWN_TIMEOUT_MS,
    P_TOPICS_CREATE,
    P_STATE_RESTORE,
    P_STATE_TOPIC,
    P_REPARTITION,
    P_REPARTITION_TOPIC,
    P_SNAPSHOT_INTERVAL_MS,
    P_METRICS_LISTEN,
    P_HEALTH_LISTEN,
    P_READY_MAX_LAG,
    P_LOG_LEVEL,
    P_MOCK_BROKERS,
    P_MOCK_PARTITIONS,
    P_NOTIFY_GROUP_ID,
    P_NOTIFY_DLQ_TOPIC,
    P_NOTIFY_RETRY_BACKOFF_MS,
    P_NOTIFY_RETRY_BACKOFF_MAX_MS,
    P_ALERTMANAGER_URL,
    P_ALERTMANAGER_RESEND_MS,
    P_ALERTMANAGER_TIMEOUT_MS,
    P_ALERTMANAGER_AUTH_BEARER_TOKEN,
    P_ALERTMANAGER_AUTH_BASIC,
    P_ALERTMANAGER_SSL_CA_LOCATION,
    P_ALERTMANAGER_RATE_LIMIT,
    P_PAGERDUTY_URL,
    P_PAGERDUTY_TIMEOUT_MS,
    P_PAGERDUTY_AUTH_BEARER_TOKEN,
    P_PAGERDUTY_AUTH_BASIC,
    P_PAGERDUTY_SSL_CA_LOCATION,
    P_PAGERDUTY_RATE_LIMIT,
    P_WEBHOOK_URL,
    P_WEBHOOK_HMAC_SECRET,
    P_WEBHOOK_TIMEOUT_MS,
    P_WEBHOOK_AUTH_BEARER_TOKEN,
    P_WEBHOOK_AUTH_BASIC,
    P_WEBHOOK_SSL_CA_LOCATION,
    P_WEBHOOK_RATE_LIMIT,
    P__CNT
};

static const char *const input_formats[] = {"auto", "json", "avro", NULL};
static const char *const output_formats[] = {"json", "avro", "pagerduty", "alertmanager", NULL};
static const char *const guarantees[] = {"at_least_once", "exactly_once", NULL};
static const char *const log_levels[] = {"error", "warn", "info", "debug", NULL};
static const char *const on_off[] = {"on", "off", NULL};

#define INT_PROP(N, LO, HI, DEF, DESC) \
    {.name = N, .type = PROP_INT, .min = LO, .max = HI, .defval = DEF, .desc = DESC}
#define DBL_PROP(N, LO, HI, DEF, DESC) \
    {.name = N, .type = PROP_DBL, .dmin = LO, .dmax = HI, .defval = DEF, .desc = DESC}
#define STR_PROP(N, LO, HI, FL, DEF, DESC)                                            \
    {.name = N, .type = PROP_STR, .min = LO, .max = HI, .flags = FL, .defval = DEF, \
     .desc = DESC}
#define ENUM_PROP(N, ALLOWED, DEF, DESC) \
    {.name = N, .type = PROP_ENUM, .allowed = ALLOWED, .defval = DEF, .desc = DESC}
#define BOOL_PROP(N, DEF, DESC) {.name = N, .type = PROP_BOOL, .defval = DEF, .desc = DESC}
#define LIST_PROP(N, FL, DEF, DESC) \
    {.name = N, .type = PROP_LIST, .flags = FL, .defval = DEF, .desc = DESC}

/* Kafka limits: topic names are 1..249 characters of [a-zA-Z0-9._-]. */
#define TOPIC_MAX_LEN 249

static const prop_t prop_table[P__CNT] = {
    [P_BOOTSTRAP_SERVERS] = STR_PROP("bootstrap.servers", 0, 65535, 0, "",
        "Kafka bootstrap servers (host:port,...); empty starts the embedded mock cluster."),
    [P_GROUP_ID] = STR_PROP("group.id", 1, 65535, 0, "stormwatch",
        "Kafka consumer group; instances with the same group share the input partitions."),
    [P_INPUT_TOPICS] = LIST_PROP("input.topics", PROP_F_TOPIC, "stormwatch.telemetry",
        "Comma-separated telemetry topics to consume; entries starting with ^ are regexes."),
    [P_OUTPUT_TOPIC] = STR_PROP("output.topic", 1, TOPIC_MAX_LEN, PROP_F_TOPIC,
        "stormwatch.alerts", "Topic that receives first-cause alerts and job summaries."),
    [P_DLQ_TOPIC] = STR_PROP("dlq.topic", 1, TOPIC_MAX_LEN, PROP_F_TOPIC, "stormwatch.dlq",
        "Dead-letter topic for input records that cannot be decoded."),
    [P_INPUT_FORMAT] = ENUM_PROP("input.format", input_formats, "auto",
        "Encoding of input records; auto tells Confluent-framed Avro from JSON per record."),
    [P_OUTPUT_FORMAT] = ENUM_PROP("output.format", output_formats, "json",
        "Encoding of output records: JSON, Avro in the Confluent wire format, or the request "
        "body of a PagerDuty Events API v2 event or an Alertmanager v2 alert (see Paging)."),
    [P_AVRO_SCHEMA_ID_TELEMETRY] = INT_PROP("avro.schema.id.telemetry", 0, 2147483647, "1",
        "Confluent schema id of schemas/telemetry_event.avsc (Avro input)."),
    [P_AVRO_SCHEMA_ID_ALERT] = INT_PROP("avro.schema.id.alert", 0, 2147483647, "2",
        "Confluent schema id of schemas/first_cause_alert.avsc (Avro output) without "
        "schema.registry.url; with it, the id the registry gives for <output.topic>-value."),
    [P_AVRO_SCHEMA_IDS_TELEMETRY] = LIST_PROP("avro.schema.ids.telemetry",
        PROP_F_EMPTY | PROP_F_IDFILE, "",
        "Further accepted writer schemas of Avro input without a registry, as "
        "id=path.avsc,... (each resolved against schemas/telemetry_event.avsc at start); "
        "with schema.registry.url these ids are not looked up."),
    [P_SCHEMA_REGISTRY_URL] = LIST_PROP("schema.registry.url", PROP_F_EMPTY | PROP_F_URL, "",
        "Confluent Schema Registry URLs (http:// or https://, comma-separated, tried in "
        "order); set, Avro input is read with any schema id it knows and Avro output "
        "registers or looks up first_cause_alert.avsc under <output.topic>-value."),
    [P_SCHEMA_REGISTRY_USER_INFO] = STR_PROP("schema.registry.basic.auth.user.info", 0, 4096,
        PROP_F_SECRET, "", "USER:PASSWORD for HTTP basic authentication to the registry; empty: none."),
    [P_SCHEMA_REGISTRY_CA] = STR_PROP("schema.registry.ssl.ca.location", 0, 4096, 0, "",
        "CA certificate file (PEM) that verifies an https registry; empty: the system's."),
    [P_SCHEMA_REGISTRY_CERT] = STR_PROP("schema.registry.ssl.certificate.location", 0, 4096, 0,
        "", "Client certificate file (PEM) for TLS client authentication to the registry."),
    [P_SCHEMA_REGISTRY_KEY] = STR_PROP("schema.registry.ssl.key.location", 0, 4096, 0, "",
        "Private key file (PEM) of schema.registry.ssl.certificate.location."),
    [P_SCHEMA_REGISTRY_TIMEOUT_MS] = INT_PROP("schema.registry.request.timeout.ms", 100,
        600000, "5000", "Timeout in ms of one registry request (per URL)."),
    [P_AUTO_REGISTER_SCHEMAS] = BOOL_PROP("auto.register.schemas", "true",
        "true: register first_cause_alert.avsc under <output.topic>-value (POST "
        "/subjects/{subject}/versions, which returns the existing id when it is registered); "
        "false: only look it up (POST /subjects/{subject}), as Confluent's serializers."),
    [P_PAGERDUTY_ROUTING_KEY] = STR_PROP("pagerduty.routing.key", 0, 255, PROP_F_SECRET, "",
        "Integration (routing) key of the PagerDuty service's Events API v2 integration; "
        "required with output.format=pagerduty, where every output record carries it."),
    [P_ALERTMANAGER_GENERATOR_URL] = STR_PROP("alertmanager.generator.url", 0, 2048, PROP_F_URL,
        "", "generatorURL of the alerts written with output.format=alertmanager (a link for "
        "the people paged); empty leaves it out."),
    [P_ALERTMANAGER_LABELS] = STR_PROP("alertmanager.labels", 0, 4096, PROP_F_LABELS, "",
        "Static labels added to every alert written with output.format=alertmanager, as "
        "name=value,... (e.g. cluster=a100-east,team=ml-infra) for routing; names as "
        "Prometheus labels, not alertname, job_id, episode, dedup_key or severity."),
    [P_ALERTMANAGER_ENDS_AFTER_MS] = INT_PROP("alertmanager.ends.after.ms", 0,
        INT64_C(604800000), "900000",
        "endsAt of a firing Alertmanager alert, this many ms after it is written, so that an "
        "episode longer than Alertmanager's resolve_timeout is not auto-resolved; 0 leaves "
        "endsAt out (Alertmanager then applies resolve_timeout)."),
    [P_WINDOW_SAMPLES] = INT_PROP("window.samples", 1, 1000000, "512",
        "Samples kept per rank in the sliding analysis window."),
    [P_STALE_MS] = INT_PROP("stale.ms", 0, INT64_C(1000000000000), "60000",
        "Empty a rank's window once its newest sample lags the job's newest by this many ms "
        "(0 = never stale)."),
    [P_SPIKE_MIN_BYTES] = INT_PROP("spike.min.bytes", 0, INT64_MAX, "67108864",
        "Spike threshold floor in bytes; a rank's threshold is the larger of this and "
        "spike.fraction of its peak."),
    [P_SPIKE_FRACTION] = DBL_PROP("spike.fraction", 0.0, 1.0, "0.10",
        "Spike threshold as a fraction of the rank's peak device memory use."),
    [P_SKEW_NOTE_MULTIPLIER] = INT_PROP("skew.note.multiplier", 1, 1000000, "5",
        "Note a rank's clock offset when it exceeds this many median sampling intervals."),
    [P_JOB_IDLE_MS] = INT_PROP("job.idle.ms", 1, INT64_C(1000000000000), "300000",
        "Wall-clock idleness in ms after which a job's summary is emitted and its state "
        "freed."),
    [P_MAX_JOBS] = INT_PROP("max.jobs", 0, 100000000, "10000",
        "Jobs tracked at once; events of further jobs are rejected (0 = unlimited)."),
    [P_MAX_RANKS_PER_JOB] = INT_PROP("max.ranks.per.job", 0, 16777216, "131072",
        "Samples with a rank >= this or a larger world_size are rejected (0 = up to "
        "16777216, the largest supported world size)."),
    [P_MAX_MEMORY_BYTES] = INT_PROP("max.memory.bytes", 0, 1099511627776, "805306368",
        "Budget for the engines' state across all partitions (0 = none; the default fits the "
        "shipped manifests' 1 GiB limit with room for librdkafka's buffers). Over it, new jobs "
        "evict the oldest one-rank jobs (they can never trigger) and are refused only when "
        "there are none; checked every second."),
    [P_PROCESSING_GUARANTEE] = ENUM_PROP("processing.guarantee", guarantees, "at_least_once",
        "at_least_once commits offsets after alerts are delivered; exactly_once uses Kafka "
        "transactions."),
    [P_COMMIT_INTERVAL_MS] = INT_PROP("commit.interval.ms", 10, 3600000, "1000",
        "Interval in ms between offset commits (or transaction commits); unset with "
        "processing.guarantee=exactly_once it is 100 (as Kafka Streams), so alerts wait at "
        "most ~100 ms for their transaction."),
    [P_SHUTDOWN_TIMEOUT_MS] = INT_PROP("shutdown.timeout.ms", 100, 3600000, "30000",
        "Total time a stop (SIGTERM, SIGINT) may take, whatever the partition count: records "
        "are flushed first, then state snapshots, then offset commits; what is not done by "
        "then is left to the next owner (nothing is lost). A second signal stops at once."),
    [P_TOPICS_CREATE] = ENUM_PROP("topics.create", on_off, "on",
        "on: create the topics the daemon writes when they are missing (state.topic with one "
        "partition, output.topic and dlq.topic with the input's partition count; cleanup.policy "
        "delete, broker-default replication), through the Admin API, as Kafka Streams does; off: "
        "a missing one is an error naming it."),
    [P_STATE_RESTORE] = ENUM_PROP("state.restore", on_off, "on",
        "on: snapshot per-partition state to state.topic and rebuild it when a partition is "
        "assigned (restart, rebalance), so alerts are neither lost nor repeated; off: start "
        "empty."),
    [P_STATE_TOPIC] = STR_PROP("state.topic", 1, TOPIC_MAX_LEN, PROP_F_TOPIC, "stormwatch.state",
        "Topic (one partition) that holds the state snapshots referenced by committed offsets."),
    [P_REPARTITION] = ENUM_PROP("repartition", on_off, "on",
        "on: every input message is forwarded, bytes and headers unchanged, to repartition.topic "
        "keyed by its job_id (murmur2, as Kafka's clients place keys) and the engines read only "
        "that topic, so each job is analysed by one engine whatever the producers' keys; off: "
        "the engines read the input topics directly (one hop less; right only when every "
        "producer keys by job_id: mis-keyed input is counted and logged). See README, Keying."),
    [P_REPARTITION_TOPIC] = STR_PROP("repartition.topic", 0, TOPIC_MAX_LEN, PROP_F_TOPIC, "",
        "Internal topic the input is forwarded through with repartition=on (partitions: the "
        "input's count; retention 7 days); empty: <group.id>.repartition."),
    [P_SNAPSHOT_INTERVAL_MS] = INT_PROP("snapshot.interval.ms", 100, 3600000, "10000",
        "Interval in ms between state snapshots; offsets are committed with each one."),
    [P_METRICS_LISTEN] = STR_PROP("metrics.listen", 0, 1024, PROP_F_HOSTPORT, "",
        "host:port of the HTTP metrics endpoint; empty disables it."),
    [P_HEALTH_LISTEN] = STR_PROP("health.listen", 0, 1024, PROP_F_HOSTPORT, "",
        "host:port of a second HTTP server that answers only /healthz and /readyz (point "
        "Kubernetes probes there: clients flooding the metrics port cannot starve them); empty: "
        "the probes are served on metrics.listen only. Needs metrics.listen."),
    [P_READY_MAX_LAG] = INT_PROP("ready.max.lag", 0, 1000000000000, "10000",
        "/readyz reports ready while the total consumer lag is at most this many messages."),
    [P_LOG_LEVEL] = ENUM_PROP("log.level", log_levels, "info",
        "Least severe log level written to stderr."),
    [P_MOCK_BROKERS] = INT_PROP("mock.brokers", 1, 16, "3",
        "Brokers of the embedded mock cluster (when bootstrap.servers is empty)."),
    [P_MOCK_PARTITIONS] = INT_PROP("mock.partitions", 1, 1024, "8",
        "Partitions of each topic of the embedded mock cluster."),
    /* stormwatch notify (see README "Paging"): it reads output.topic. */
    [P_NOTIFY_GROUP_ID] = STR_PROP("notify.group.id", 1, 65535, 0, "stormwatch-notify",
        "Kafka consumer group of stormwatch notify on output.topic (separate from group.id)."),
    [P_NOTIFY_DLQ_TOPIC] = STR_PROP("notify.dlq.topic", 1, TOPIC_MAX_LEN, PROP_F_TOPIC,
        "stormwatch.notify.dlq", "Dead-letter topic of stormwatch notify: alert records that "
        "cannot be decoded, and records a sink refused for good (HTTP status and body in the "
        "headers)."),
    [P_NOTIFY_RETRY_BACKOFF_MS] = INT_PROP("notify.retry.backoff.ms", 1, 3600000, "500",
        "First retry delay of a failed delivery (5xx, 408, 429, timeout, network error); each "
        "retry doubles it, with jitter, up to notify.retry.backoff.max.ms. A Retry-After wins."),
    [P_NOTIFY_RETRY_BACKOFF_MAX_MS] = INT_PROP("notify.retry.backoff.max.ms", 1, 3600000,
        "60000", "Longest retry delay of a failed delivery; retries go on until the sink "
        "accepts or refuses for good, or notify stops."),
    [P_ALERTMANAGER_URL] = STR_PROP("alertmanager.url", 0, 8192, PROP_F_URLS, "",
        "Alertmanager base URLs for stormwatch notify, comma-separated (every member of an HA "
        "cluster; alerts are POSTed to each at /api/v2/alerts); empty disables the sink."),
    [P_ALERTMANAGER_RESEND_MS] = INT_PROP("alertmanager.resend.ms", 1000, 3600000, "60000",
        "stormwatch notify re-sends every open episode to Alertmanager this often (endsAt "
        "alertmanager.ends.after.ms ahead), so it never auto-resolves and survives "
        "Alertmanager restarts; must be below alertmanager.ends.after.ms."),
    [P_ALERTMANAGER_TIMEOUT_MS] = INT_PROP("alertmanager.timeout.ms", 100, 600000, "10000",
        "Timeout of one request to Alertmanager, connection included."),
    [P_ALERTMANAGER_AUTH_BEARER_TOKEN] = STR_PROP("alertmanager.auth.bearer.token", 0, 4096,
        PROP_F_SECRET, "", "Bearer token sent to Alertmanager (Authorization header); empty: none."),
    [P_ALERTMANAGER_AUTH_BASIC] = STR_PROP("alertmanager.auth.basic", 0, 4096, PROP_F_SECRET, "",
        "user:password for HTTP basic auth to Alertmanager; empty: none."),
    [P_ALERTMANAGER_SSL_CA_LOCATION] = STR_PROP("alertmanager.ssl.ca.location", 0, 4096, 0, "",
        "CA certificates (PEM file) to verify Alertmanager's https certificate; empty: the "
        "system's."),
    [P_ALERTMANAGER_RATE_LIMIT] = DBL_PROP("alertmanager.rate.limit", 0.0, 100000.0, "0",
        "Most requests per second to each Alertmanager (0 = no limit)."),
    [P_PAGERDUTY_URL] = STR_PROP("pagerduty.url", 0, 2048, PROP_F_URL,
        "https://events.pagerduty.com/v2/enqueue", "PagerDuty Events API v2 endpoint of "
        "stormwatch notify; the sink is on when pagerduty.routing.key is set."),
    [P_PAGERDUTY_TIMEOUT_MS] = INT_PROP("pagerduty.timeout.ms", 100, 600000, "10000",
        "Timeout of one request to PagerDuty, connection included."),
    [P_PAGERDUTY_AUTH_BEARER_TOKEN] = STR_PROP("pagerduty.auth.bearer.token", 0, 4096,
        PROP_F_SECRET, "", "Bearer token sent to pagerduty.url (a proxy in front of it); empty: none."),
    [P_PAGERDUTY_AUTH_BASIC] = STR_PROP("pagerduty.auth.basic", 0, 4096, PROP_F_SECRET, "",
        "user:password for HTTP basic auth to pagerduty.url; empty: none."),
    [P_PAGERDUTY_SSL_CA_LOCATION] = STR_PROP("pagerduty.ssl.ca.location", 0, 4096, 0, "",
        "CA certificates (PEM file) to verify pagerduty.url; empty: the system's."),
    [P_PAGERDUTY_RATE_LIMIT] = DBL_PROP("pagerduty.rate.limit", 0.0, 100000.0, "2",
        "Most requests per second to PagerDuty (its Events API allows about 120 a minute per "
        "routing key; 0 = no limit)."),
    [P_WEBHOOK_URL] = STR_PROP("webhook.url", 0, 2048, PROP_F_URL, "",
        "URL that stormwatch notify POSTs each paging record to, as JSON; empty disables the "
        "sink."),
    [P_WEBHOOK_HMAC_SECRET] = STR_PROP("webhook.hmac.secret", 0, 4096, PROP_F_SECRET, "",
        "When set, each webhook request carries X-Stormwatch-Signature: sha256=<hex "
        "HMAC-SHA256 of the body under this secret>."),
    [P_WEBHOOK_TIMEOUT_MS] = INT_PROP("webhook.timeout.ms", 100, 600000, "10000",
        "Timeout of one webhook request, connection included."),
    [P_WEBHOOK_AUTH_BEARER_TOKEN] = STR_PROP("webhook.auth.bearer.token", 0, 4096, PROP_F_SECRET,
        "", "Bearer token sent to webhook.url (Authorization header); empty: none."),
    [P_WEBHOOK_AUTH_BASIC] = STR_PROP("webhook.auth.basic", 0, 4096, PROP_F_SECRET, "",
        "user:password for HTTP basic auth to webhook.url; empty: none."),
    [P_WEBHOOK_SSL_CA_LOCATION] = STR_PROP("webhook.ssl.ca.location", 0, 4096, 0, "",
        "CA certificates (PEM file) to verify webhook.url; empty: the system's."),
    [P_WEBHOOK_RATE_LIMIT] = DBL_PROP("webhook.rate.limit", 0.0, 100000.0, "0",
        "Most requests per second to webhook.url (0 = no limit)."),
};

/** Current value of one table property. */
typedef struct conf_val_s {
    char *text;    /**< canonical text (owned): dump, get_str */
    int64_t i;     /**< PROP_INT */
    double d;      /**< PROP_DBL */
    bool b;        /**< PROP_BOOL */
    char **elems;  /**< PROP_LIST elements (owned) */
    size_t n_elems;
    bool set;      /**< set by the user (file, environment, -X), not the default */
} conf_val_t;

/** One pass-through property. */
typedef struct kprop_s {
    sw_conf_scope_t scope;
    char *name;    /**< full name (owned) */
    size_t rk_off; /**< librdkafka name = name + rk_off */
    char *value;   /**< owned */
} kprop_t;

struct sw_conf_s {
    conf_val_t vals[P__CNT]; /**< indexed by enum prop_id */
    kprop_t *kprops;         /**< order of last set */
    size_t n_kprops;
    size_t cap_kprops;
    char **ignored_env;      /**< Kubernetes service-link variables passed over */
    size_t n_ignored_env;
};

#define LIST_HINT "see 'stormwatch run -X list'"
#define REDACTED "[redacted]"
/* -X dump: whether a secret is set, never its value. */
#define REDACTED_SET "[redacted, set]"
#define REDACTED_UNSET "[redacted, unset]"

/* ------------------------------------------------------------------------ */
/* Small helpers. */

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* Copy a finished message into the caller's errstr (may be NULL/0) and
 * free it. */
static void err_out(sw_buf_t *msg, char *errstr, size_t errstr_size)
{
    if (errstr && errstr_size) snprintf(errstr, errstr_size, "%s", sw_buf_cstr(msg));
    sw_buf_clear(msg);
}

/* Append @p s in double quotes, escaping quotes, backslashes and control
 * characters so that a message stays on one line. */
static void put_quoted(sw_buf_t *b, const char *s)
{
    sw_buf_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            sw_buf_putc(b, '\\');
            sw_buf_putc(b, (char)c);
        } else if (c < 0x20 || c == 0x7f) {
            sw_buf_printf(b, "\\x%02x", c);
        } else {
            sw_buf_putc(b, (char)c);
        }
    }
    sw_buf_putc(b, '"');
}

static bool has_suffix_ci(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* Whether a name (the librdkafka part of a pass-through property, or any
 * other name) carries a secret, case-insensitively. */
static bool name_looks_secret(const char *name)
{
    static const char *const secrets[] = {
        "sasl.password",         "sasl.oauthbearer.client.secret", "sasl.oauthbearer.config",
        "ssl.key.password",      "ssl.key.pem",                    "ssl.keystore.password",
        NULL};
    for (size_t i = 0; secrets[i]; i++) {
        size_t n = strlen(name), m = strlen(secrets[i]);
        /* The name itself, or any dotted suffix of it. */
        if (has_suffix_ci(name, secrets[i]) && (n == m || name[n - m - 1] == '.')) return true;
    }
    /* Anything that looks like one: a misspelled secret (kafka.sasl.pasword)
     * must not be printed either. Over-redacting a path is harmless. */
    static const char *const parts[] = {"pass", "pasw", "pwd", "secret", "key", "token",
                                        "credential", NULL};
    for (size_t i = 0; parts[i]; i++)
        if (strcasestr(name, parts[i])) return true;
    return false;
}

static const prop_t *prop_find(const char *name, size_t *idxp)
{
    for (size_t i = 0; i < P__CNT; i++) {
        if (strcmp(prop_table[i].name, name) == 0) {
            if (idxp) *idxp = i;
            return &prop_table[i];
        }
    }
    return NULL;
}

static bool prop_secret(const prop_t *prop)
{
    return (prop->flags & PROP_F_SECRET) != 0;
}

/* Split a pass-through name: false when @p name does not start with
 * "kafka."; else the scope and the offset of the librdkafka part (which
 * may be empty). */
static bool kafka_split(const char *name, sw_conf_scope_t *scopep, size_t *offp)
{
    static const char both[] = "kafka.", cons[] = "kafka.consumer.", prod[] = "kafka.producer.";
    if (strncmp(name, both, sizeof(both) - 1) != 0) return false;
    if (strncmp(name, cons, sizeof(cons) - 1) == 0) {
        *scopep = SW_CONF_SCOPE_CONSUMER;
        *offp = sizeof(cons) - 1;
    } else if (strncmp(name, prod, sizeof(prod) - 1) == 0) {
        *scopep = SW_CONF_SCOPE_PRODUCER;
        *offp = sizeof(prod) - 1;
    } else {
        *scopep = SW_CONF_SCOPE_BOTH;
        *offp = sizeof(both) - 1;
    }
    return true;
}

bool sw_conf_is_secret(const char *name)
{
    if (!name) return false;
    const prop_t *prop = prop_find(name, NULL);
    if (prop) return prop_secret(prop) || name_looks_secret(name);
    sw_conf_scope_t scope;
    size_t off;
    if (kafka_split(name, &scope, &off)) return name_looks_secret(name + off);
    return name_looks_secret(name);
}

/* ------------------------------------------------------------------------ */
/* Suggestions for unknown names. */


/* Length of the first dotted component including its '.', or 0. */
static size_t first_component_len(const char *s)
{
    const char *dot = strchr(s, '.');
    return dot ? (size_t)(dot - s) + 1 : 0;
}

/* Up to three table properties close to @p name: edit distance <= 3 or a
 * name that starts with @p name (3+ characters) first, then names with the
 * same first dotted component; by edit distance, then table order.
 * @returns the count. */
static size_t suggest(const char *name, size_t out[3])
{
    size_t n_out = 0, dist[3];
    size_t len = strlen(name), comp = first_component_len(name);
    for (size_t i = 0; i < P__CNT; i++) {
        const char *cand = prop_table[i].name;
        size_t d = len <= 255 ? sw_edit_distance_ci(name, cand) : 1000;
        if (d > 999) d = 999;
        bool strong = d <= 3 || (len >= 3 && strncasecmp(cand, name, len) == 0);
        if (!strong && !(comp > 1 && strncasecmp(name, cand, comp) == 0)) continue;
        if (!strong) d += 1000;
        /* Insert into the sorted top three (stable: table order on ties). */
        size_t pos = n_out;
        while (pos > 0 && dist[pos - 1] > d) pos--;
        if (pos >= 3) continue;
        size_t last = n_out < 3 ? n_out : 2;
        for (size_t k = last; k > pos; k--) {
            out[k] = out[k - 1];
            dist[k] = dist[k - 1];
        }
        out[pos] = i;
        dist[pos] = d;
        if (n_out < 3) n_out++;
    }
    return n_out;
}

/* Append `; did you mean "a", "b" or "c"?` for @p name (nothing when no
 * property is close). With @p env, names are shown as environment
 * variables. @returns whether anything was appended. */
static bool put_suggestions(sw_buf_t *b, const char *name, bool env)
{
    size_t idx[3];
    size_t n = suggest(name, idx);
    if (n == 0) return false;
    sw_buf_puts(b, "; did you mean ");
    for (size_t k = 0; k < n; k++) {
        if (k > 0) sw_buf_puts(b, k + 1 == n ? " or " : ", ");
        if (env) {
            sw_buf_puts(b, "STORMWATCH_");
            for (const char *p = prop_table[idx[k]].name; *p; p++)
                sw_buf_putc(b, *p == '.' ? '_' : (char)toupper((unsigned char)*p));
        } else {
            put_quoted(b, prop_table[idx[k]].name);
        }
    }
    sw_buf_putc(b, '?');
    return true;
}

static void unknown_err(const char *name, char *errstr, size_t errstr_size)
{
    sw_buf_t msg;
    sw_buf_init(&msg);
    sw_buf_puts(&msg, "configuration property ");
    put_quoted(&msg, name);
    sw_buf_puts(&msg, " is unknown");
    put_suggestions(&msg, name, false);
    sw_buf_puts(&msg, " (" LIST_HINT ")");
    err_out(&msg, errstr, errstr_size);
}

/* ------------------------------------------------------------------------ */
/* Values. */

static void val_clear(conf_val_t *val)
{
    free(val->text);
    for (size_t k = 0; k < val->n_elems; k++) free(val->elems[k]);
    free(val->elems);
    memset(val, 0, sizeof(*val));
}

static void put_range(sw_buf_t *b, const prop_t *prop)
{
    if (prop->type == PROP_INT)
        sw_buf_printf(b, "%lld..%lld", (long long)prop->min, (long long)prop->max);
    else
        sw_buf_printf(b, "%g..%g", prop->dmin, prop->dmax);
}

/* `configuration property "NAME": value "V" ` (or `value [redacted] ` for
 * secrets), ready for the reason. */
static void value_err_start(sw_buf_t *msg, const char *name, const char *value, bool secret)
{
    sw_buf_puts(msg, "configuration property ");
    put_quoted(msg, name);
    sw_buf_puts(msg, ": value ");
    if (secret)
        sw_buf_puts(msg, REDACTED);
    else
        put_quoted(msg, value);
    sw_buf_putc(msg, ' ');
}

/* Shortest "%g" text that reads back as exactly @p d. */
static char *dbl_text(double d)
{
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
        if (strtod(tmp, NULL) == d) break;
    }
    return sw_strdup(tmp);
}

/* Kafka topic name rules; NULL when fine, else the reason. */
static const char *topic_problem(const char *s, size_t len)
{
    if (len == 0) return "is empty (expected a topic name)";
    if (len > TOPIC_MAX_LEN) return "is longer than 249 characters (expected a topic name)";
    if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
        return "is not a valid topic name (\".\" and \"..\" are reserved)";
    for (size_t k = 0; k < len; k++) {
        unsigned char c = (unsigned char)s[k];
        if (!isalnum(c) && c != '.' && c != '_' && c != '-')
            return "is not a valid topic name (expected characters a-z A-Z 0-9 . _ -)";
    }
    return NULL;
}

/* Empty, or http(s)://REST with a non-empty REST of printable ASCII without
 * blanks (Alertmanager refuses an alert whose generatorURL is no URI). */
static bool url_ok(const char *s)
{
    if (!*s) return true;
    size_t pre = strncmp(s, "http://", 7) == 0 ? 7 : strncmp(s, "https://", 8) == 0 ? 8 : 0;
    if (!pre || !s[pre]) return false;
    for (const char *p = s + pre; *p; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f) return false;
    return true;
}

/* Empty, or comma-separated URLs (each url_ok(), blanks around commas
 * allowed, no empty element). */
static bool urls_ok(const char *s)
{
    if (!*s) return true;
    char one[2049];
    for (const char *p = s;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len && (*p == ' ' || *p == '\t')) p++, len--;
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t')) len--;
        if (!len || len >= sizeof(one)) return false;
        memcpy(one, p, len);
        one[len] = '\0';
        if (!url_ok(one)) return false;
        if (!comma) return true;
        p = comma + 1;
    }
}

/* Empty, or name=value,... with Prometheus label names ([a-zA-Z_][a-zA-Z0-9_]*, no
 * leading "__"), each once, none of the labels the alert itself sets, and
 * values of printable ASCII without ',' (which separates them). */
static bool labels_ok(const char *s, char *why, size_t why_size)
{
    static const char *const reserved[] = {"alertname", "job_id", "episode", "dedup_key",
                                           "severity"};
    const char *p = s;
    char seen[4096] = ",";
    while (*p) {
        const char *eq = strchr(p, '='), *comma = strchr(p, ',');
        if (!comma) comma = p + strlen(p);
        if (!eq || eq > comma || eq == p) {
            snprintf(why, why_size, "has \"%.*s\", expected name=value", (int)(comma - p), p);
            return false;
        }
        size_t n = (size_t)(eq - p);
        bool name_ok = (isalpha((unsigned char)p[0]) || p[0] == '_') &&
                       !(n >= 2 && p[0] == '_' && p[1] == '_');
        for (size_t k = 1; k < n && name_ok; k++)
            name_ok = isalnum((unsigned char)p[k]) || p[k] == '_';
        if (!name_ok) {
            snprintf(why, why_size, "has label name \"%.*s\", expected [a-zA-Z_][a-zA-Z0-9_]*",
                     (int)n, p);
            return false;
        }
        for (size_t k = 0; k < sizeof(reserved) / sizeof(reserved[0]); k++)
            if (strlen(reserved[k]) == n && strncmp(p, reserved[k], n) == 0) {
                snprintf(why, why_size, "sets label \"%s\", which stormwatch sets itself",
                         reserved[k]);
                return false;
            }
        char key[260];
        snprintf(key, sizeof(key), ",%.*s,", (int)(n < 256 ? n : 256), p);
        if (strstr(seen, key)) {
            snprintf(why, why_size, "sets label \"%.*s\" twice", (int)n, p);
            return false;
        }
        if (strlen(seen) + strlen(key) < sizeof(seen)) strcat(seen, key + 1);
        for (const char *v = eq + 1; v < comma; v++)
            if ((unsigned char)*v < 0x20 || (unsigned char)*v >= 0x7f) {
                snprintf(why, why_size, "has a control or non-ASCII byte in label \"%.*s\"",
                         (int)n, p);
                return false;
            }
        p = *comma ? comma + 1 : comma;
    }
    return true;
}

/* Empty, or HOST:PORT with a decimal PORT of 0..65535. */
static bool hostport_ok(const char *s)
{
    if (!*s) return true;
    const char *colon = strrchr(s, ':');
    if (!colon || !colon[1] || strlen(colon + 1) > 5) return false;
    long port = 0;
    for (const char *p = colon + 1; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        port = port * 10 + (*p - '0');
    }
    return port <= 65535;
}

sw_conf_res_t sw_conf_parse_bool(const char *name, const char *value, bool *valp, char *errstr,
                                 size_t errstr_size)
{
    static const char *const yes[] = {"true", "yes", "1"}, *const no[] = {"false", "no", "0"};
    for (size_t k = 0; k < 3; k++) {
        if (strcmp(value, yes[k]) == 0) {
            *valp = true;
            return SW_CONF_OK;
        }
        if (strcmp(value, no[k]) == 0) {
            *valp = false;
            return SW_CONF_OK;
        }
    }
    sw_buf_t msg;
    sw_buf_init(&msg);
    value_err_start(&msg, name, value, sw_conf_is_secret(name));
    sw_buf_puts(&msg, "is not a boolean (expected true, false, yes, no, 1 or 0)");
    err_out(&msg, errstr, errstr_size);
    return SW_CONF_INVALID;
}

/* An ID=PATH element of avro.schema.ids.telemetry, or why it is not. */
static const char *idfile_problem(const char *el)
{
    const char *eq = strchr(el, '=');
    if (!eq || eq == el || !eq[1]) return "is not ID=PATH (e.g. 7=schemas/telemetry_v1.avsc)";
    char *end = NULL;
    errno = 0;
    long long id = strtoll(el, &end, 10);
    if (end != eq || errno || id < 0 || id > 2147483647)
        return "has an ID that is not an integer 0..2147483647";
    return NULL;
}

/* Split a list value into trimmed elements; every element must be
 * non-empty (and a topic or ^regex with PROP_F_TOPIC). On error @p msg
 * holds the reason and @p val is cleared. */
static bool list_parse(const prop_t *prop, const char *value, conf_val_t *val, sw_buf_t *msg)
{
    bool secret = prop_secret(prop);
    const char *p = value;
    if (prop->flags & PROP_F_EMPTY) {
        const char *q = value;
        while (is_blank(*q)) q++;
        if (!*q) {
            val->text = sw_strdup("");
            return true;
        }
    }
    for (;;) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        const char *s = p, *e = end;
        while (s < e && is_blank(*s)) s++;
        while (e > s && is_blank(e[-1])) e--;
        const char *why = NULL;
        if (s == e)
            why = "has an empty element (expected a comma-separated list of non-empty entries)";
        else if ((prop->flags & PROP_F_TOPIC) && *s == '^' && e - s == 1)
            why = "has an empty regex \"^\" (expected ^ followed by a pattern)";
        if (why) {
            value_err_start(msg, prop->name, value, secret);
            sw_buf_puts(msg, why);
            val_clear(val);
            return false;
        }
        char *el = sw_memdup0(s, (size_t)(e - s));
        if ((prop->flags & PROP_F_URL) && !url_ok(el))
            why = "is not an http:// or https:// URL without blanks";
        else if (prop->flags & PROP_F_IDFILE)
            why = idfile_problem(el);
        free(el);
        if (!why && (prop->flags & PROP_F_TOPIC) && *s != '^')
            why = topic_problem(s, (size_t)(e - s));
        if (why) {
            char *elem = sw_memdup0(s, (size_t)(e - s));
            sw_buf_puts(msg, "configuration property ");
            put_quoted(msg, prop->name);
            sw_buf_puts(msg, ": element ");
            if (secret)
                sw_buf_puts(msg, REDACTED);
            else
                put_quoted(msg, elem);
            sw_buf_printf(msg, " %s", why);
            free(elem);
            val_clear(val);
            return false;
        }
        val->elems = sw_reallocarray(val->elems, val->n_elems + 1, sizeof(*val->elems));
        val->elems[val->n_elems++] = sw_memdup0(s, (size_t)(e - s));
        if (!*end) break;
        p = end + 1;
    }
    /* Canonical text: elements joined by ','. */
    sw_buf_t text;
    sw_buf_init(&text);
    for (size_t k = 0; k < val->n_elems; k++) {
        if (k) sw_buf_putc(&text, ',');
        sw_buf_puts(&text, val->elems[k]);
    }
    val->text = sw_strdup(sw_buf_cstr(&text));
    sw_buf_clear(&text);
    return true;
}

/* Parse @p value for @p prop into a fresh @p val. @returns SW_CONF_OK, or
 * SW_CONF_INVALID with the message in errstr and @p val left empty. */
static sw_conf_res_t prop_parse(const prop_t *prop, const char *value, conf_val_t *val,
                                char *errstr, size_t errstr_size)
{
    memset(val, 0, sizeof(*val));
    bool secret = prop_secret(prop);
    sw_buf_t msg;
    sw_buf_init(&msg);

    switch (prop->type) {
    case PROP_INT: {
        char *end = NULL;
        errno = 0;
        long long v = 0;
        /* strtoll would skip leading blanks; a value must be exact. */
        if (*value && !is_blank(*value)) v = strtoll(value, &end, 10);
        if (!end || end == value || *end) {
            value_err_start(&msg, prop->name, value, secret);
            sw_buf_puts(&msg, "is not an integer (expected ");
            put_range(&msg, prop);
            sw_buf_putc(&msg, ')');
            goto err;
        }
        if (errno == ERANGE || v < prop->min || v > prop->max) {
            value_err_start(&msg, prop->name, value, secret);
            sw_buf_puts(&msg, "is out of range (expected ");
            put_range(&msg, prop);
            sw_buf_putc(&msg, ')');
            goto err;
        }
        val->i = (int64_t)v;
        char tmp[24];
        snprintf(tmp, sizeof(tmp), "%lld", v);
        val->text = sw_strdup(tmp);
        return SW_CONF_OK;
    }
    case PROP_DBL: {
        char *end = NULL;
        double d = 0;
        if (*value && !is_blank(*value)) d = strtod(value, &end);
        if (!end || end == value || *end || isnan(d)) {
            value_err_start(&msg, prop->name, value, secret);
            sw_buf_puts(&msg, "is not a number (expected ");
            put_range(&msg, prop);
            sw_buf_putc(&msg, ')');
            goto err;
        }
        if (!(d >= prop->dmin && d <= prop->dmax)) {
            value_err_start(&msg, prop->name, value, secret);
            sw_buf_puts(&msg, "is out of range (expected ");
            put_range(&msg, prop);
            sw_buf_putc(&msg, ')');
            goto err;
        }
        val->d = d;
        val->text = dbl_text(d);
        return SW_CONF_OK;
    }
    case PROP_BOOL:
        if (sw_conf_parse_bool(prop->name, value, &val->b, errstr, errstr_size) != SW_CONF_OK)
            return SW_CONF_INVALID;
        val->text = sw_strdup(val->b ? "true" : "false");
        return SW_CONF_OK;
    case PROP_ENUM:
        for (size_t k = 0; prop->allowed[k]; k++) {
            if (strcmp(value, prop->allowed[k]) == 0) {
                val->text = sw_strdup(value);
                return SW_CONF_OK;
            }
        }
        value_err_start(&msg, prop->name, value, secret);
        sw_buf_puts(&msg, "is not one of ");
        for (size_t k = 0; prop->allowed[k]; k++)
            sw_buf_printf(&msg, "%s%s", k ? ", " : "", prop->allowed[k]);
        goto err;
    case PROP_STR: {
        size_t len = strlen(value);
        const char *why = NULL;
        char lab_err[160];
        if (prop->flags & PROP_F_TOPIC) {
            if (len > 0 || prop->min > 0) why = topic_problem(value, len);
        } else if ((prop->flags & PROP_F_HOSTPORT) && !hostport_ok(value)) {
            why = "is not host:port (expected e.g. \"0.0.0.0:9100\", or empty to disable)";
        } else if ((prop->flags & PROP_F_URL) && !url_ok(value)) {
            why = "is not an http:// or https:// URL without blanks (or empty)";
        } else if ((prop->flags & PROP_F_URLS) && !urls_ok(value)) {
            why = "is not a comma-separated list of http:// or https:// URLs without blanks "
                  "(or empty)";
        } else if ((prop->flags & PROP_F_LABELS) && !labels_ok(value, lab_err, sizeof(lab_err))) {
            why = lab_err;
        } else if ((int64_t)len < prop->min || (int64_t)len > prop->max) {
            value_err_start(&msg, prop->name, value, secret);
            if (len == 0)
                sw_buf_puts(&msg, "is empty (expected a non-empty string)");
            else
                sw_buf_printf(&msg, "is %zu characters long (expected %lld..%lld)", len,
                              (long long)prop->min, (long long)prop->max);
            goto err;
        }
        if (why) {
            value_err_start(&msg, prop->name, value, secret);
            sw_buf_puts(&msg, why);
            goto err;
        }
        val->text = sw_strdup(value);
        return SW_CONF_OK;
    }
    case PROP_LIST:
        if (!list_parse(prop, value, val, &msg)) goto err;
        return SW_CONF_OK;
    }
    sw_buf_puts(&msg, "configuration property ");
    put_quoted(&msg, prop->name);
    sw_buf_puts(&msg, " has an unknown type");
err:
    err_out(&msg, errstr, errstr_size);
    val_clear(val);
    return SW_CONF_INVALID;
}

/* ------------------------------------------------------------------------ */
/* Lifecycle and setting. */

sw_conf_t *sw_conf_new(void)
{
    sw_conf_t *conf = sw_calloc(1, sizeof(*conf));
    for (size_t i = 0; i < P__CNT; i++) {
        /* A missing table row or a default that fails its own check is a
         * bug; test_conf catches it through this NULL. */
        if (!prop_table[i].name || !prop_table[i].defval) goto err;
        if (prop_parse(&prop_table[i], prop_table[i].defval, &conf->vals[i], NULL, 0) !=
            SW_CONF_OK)
            goto err;
    }
    return conf;
err:
    sw_conf_destroy(conf);
    return NULL;
}

static void kprop_clear(kprop_t *kp)
{
    free(kp->name);
    free(kp->value);
}

void sw_conf_destroy(sw_conf_t *conf)
{
    if (!conf) return;
    for (size_t i = 0; i < P__CNT; i++) val_clear(&conf->vals[i]);
    for (size_t k = 0; k < conf->n_kprops; k++) kprop_clear(&conf->kprops[k]);
    free(conf->kprops);
    for (size_t k = 0; k < conf->n_ignored_env; k++) free(conf->ignored_env[k]);
    free(conf->ignored_env);
    free(conf);
}

bool sw_conf_is_set(const sw_conf_t *conf, const char *name)
{
    size_t idx;
    return prop_find(name, &idx) && conf->vals[idx].set;
}

const char *sw_conf_ignored_env(const sw_conf_t *conf, size_t i)
{
    return i < conf->n_ignored_env ? conf->ignored_env[i] : NULL;
}

static kprop_t *kprop_find(const sw_conf_t *conf, const char *name)
{
    for (size_t k = 0; k < conf->n_kprops; k++)
        if (strcmp(conf->kprops[k].name, name) == 0) return &conf->kprops[k];
    return NULL;
}

static void kprop_remove(sw_conf_t *conf, const char *name)
{
    kprop_t *kp = kprop_find(conf, name);
    if (!kp) return;
    size_t k = (size_t)(kp - conf->kprops);
    kprop_clear(kp);
    memmove(kp, kp + 1, (conf->n_kprops - k - 1) * sizeof(*kp));
    conf->n_kprops--;
}

sw_conf_res_t sw_conf_set(sw_conf_t *conf, const char *name, const char *value, char *errstr,
                          size_t errstr_size)
{
    if (!name || !*name) {
        if (errstr && errstr_size)
            snprintf(errstr, errstr_size, "configuration property name is empty (" LIST_HINT ")");
        return SW_CONF_UNKNOWN;
    }
    size_t idx;
    const prop_t *prop = prop_find(name, &idx);
    if (prop) {
        conf_val_t val;
        sw_conf_res_t res =
            prop_parse(prop, value ? value : prop->defval, &val, errstr, errstr_size);
        if (res != SW_CONF_OK) return res;
        val_clear(&conf->vals[idx]);
        conf->vals[idx] = val;
        conf->vals[idx].set = value != NULL;
        return SW_CONF_OK;
    }

    sw_conf_scope_t scope;
    size_t off;
    if (!kafka_split(name, &scope, &off)) {
        unknown_err(name, errstr, errstr_size);
        return SW_CONF_UNKNOWN;
    }
    if (!name[off]) {
        sw_buf_t msg;
        sw_buf_init(&msg);
        sw_buf_puts(&msg, "configuration property ");
        put_quoted(&msg, name);
        sw_buf_puts(&msg, " lacks the librdkafka property name (expected kafka.<property>, "
                          "kafka.consumer.<property> or kafka.producer.<property>)");
        err_out(&msg, errstr, errstr_size);
        return SW_CONF_UNKNOWN;
    }
    /* Remove, then append: the order is that of the last setting. */
    kprop_remove(conf, name);
    if (!value) return SW_CONF_OK;
    if (conf->n_kprops == conf->cap_kprops) {
        conf->cap_kprops = conf->cap_kprops ? conf->cap_kprops * 2 : 8;
        conf->kprops = sw_reallocarray(conf->kprops, conf->cap_kprops, sizeof(*conf->kprops));
    }
    kprop_t *kp = &conf->kprops[conf->n_kprops++];
    kp->scope = scope;
    kp->name = sw_strdup(name);
    kp->rk_off = off;
    kp->value = sw_strdup(value);
    return SW_CONF_OK;
}

/* Append @p text quoted for a "got ..." message; when it starts with a
 * secret property name, everything after that name is redacted. */
static void put_got(sw_buf_t *b, const char *text)
{
    size_t n = 0;
    while (text[n] && (isalnum((unsigned char)text[n]) || text[n] == '.' || text[n] == '_' ||
                       text[n] == '-'))
        n++;
    char *token = sw_memdup0(text, n);
    if (text[n] && sw_conf_is_secret(token)) {
        sw_buf_t tmp;
        sw_buf_init(&tmp);
        sw_buf_printf(&tmp, "%s %s", token, REDACTED);
        put_quoted(b, sw_buf_cstr(&tmp));
        sw_buf_clear(&tmp);
    } else {
        put_quoted(b, text);
    }
    free(token);
}

sw_conf_res_t sw_conf_set_pair(sw_conf_t *conf, const char *pair, char *errstr,
                               size_t errstr_size)
{
    const char *eq = pair ? strchr(pair, '=') : NULL;
    if (!eq || eq == pair) {
        sw_buf_t msg;
        sw_buf_init(&msg);
        if (!eq) {
            sw_buf_puts(&msg, "expected property=value, got ");
            put_got(&msg, pair ? pair : "");
        } else {
            sw_buf_puts(&msg, "expected property=value, got an empty property name");
        }
        err_out(&msg, errstr, errstr_size);
        return SW_CONF_INVALID;
    }
    char *name = sw_memdup0(pair, (size_t)(eq - pair));
    sw_conf_res_t res = sw_conf_set(conf, name, eq + 1, errstr, errstr_size);
    free(name);
    return res;
}

static sw_err_t res2err(sw_conf_res_t res)
{
    if (res == SW_CONF_OK) return SW_OK;
    return res == SW_CONF_UNKNOWN ? SW_ERR_NOT_FOUND : SW_ERR_INVALID_ARG;
}

/* ------------------------------------------------------------------------ */
/* Loading. */

sw_err_t sw_conf_load_file(sw_conf_t *conf, const char *path, char *errstr, size_t errstr_size)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        int e = errno;
        sw_buf_t msg;
        sw_buf_init(&msg);
        sw_buf_puts(&msg, "cannot read configuration file ");
        put_quoted(&msg, path);
        sw_buf_printf(&msg, ": %s", strerror(e));
        err_out(&msg, errstr, errstr_size);
        return SW_ERR_IO;
    }
    char *line = NULL, sub[1024];
    size_t cap = 0;
    ssize_t n;
    long lineno = 0;
    sw_err_t err = SW_OK;
    sw_buf_t msg;
    sw_buf_init(&msg);

    while ((n = getline(&line, &cap, fp)) != -1) {
        lineno++;
        char *s = line, *e = line + n;
        if (lineno == 1 && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) s += 3;
        if (memchr(s, '\0', (size_t)(e - s))) {
            sw_buf_printf(&msg, "%s:%ld: line contains a NUL byte", path, lineno);
            err = SW_ERR_PARSE;
            break;
        }
        while (s < e && is_blank(*s)) s++;
        while (e > s && is_blank(e[-1])) e--;
        *e = '\0';
        if (s == e || *s == '#') continue;
        char *eq = strchr(s, '=');
        char *ne = eq;
        while (ne && ne > s && is_blank(ne[-1])) ne--;
        if (!eq || ne == s) {
            sw_buf_printf(&msg, "%s:%ld: expected property=value, got ", path, lineno);
            if (eq)
                sw_buf_puts(&msg, "an empty property name");
            else
                put_got(&msg, s);
            err = SW_ERR_PARSE;
            break;
        }
        *ne = '\0';
        char *value = eq + 1;
        while (is_blank(*value)) value++;
        sw_conf_res_t res = sw_conf_set(conf, s, value, sub, sizeof(sub));
        if (res != SW_CONF_OK) {
            sw_buf_printf(&msg, "%s:%ld: %s", path, lineno, sub);
            err = res2err(res);
            break;
        }
    }
    if (err == SW_OK && ferror(fp)) {
        sw_buf_puts(&msg, "cannot read configuration file ");
        put_quoted(&msg, path);
        sw_buf_printf(&msg, ": %s", strerror(errno));
        err = SW_ERR_IO;
    }
    free(line);
    fclose(fp);
    if (err != SW_OK)
        err_out(&msg, errstr, errstr_size);
    else
        sw_buf_clear(&msg);
    return err;
}

#define ENV_PREFIX "STORMWATCH_"

/* Which pass of sw_conf_load_env() handles a variable name (after the
 * prefix): 0 for table properties and KAFKA_<P>, 1 for the scoped forms. */
static int env_pass(const char *var)
{
    return strncmp(var, "KAFKA_CONSUMER_", 15) == 0 || strncmp(var, "KAFKA_PRODUCER_", 15) == 0;
}

/* Whether @p var (of @p len bytes) is the environment form of @p name. */
static bool env_matches(const char *var, size_t len, const char *name)
{
    size_t k = 0;
    for (; name[k]; k++) {
        char want = name[k] == '.' ? '_' : (char)toupper((unsigned char)name[k]);
        if (k >= len || var[k] != want) return false;
    }
    return k == len;
}

/* Append the lower-cased, '_' -> '.' form of var[0..len). */
static void put_env_name(sw_buf_t *b, const char *var, size_t len)
{
    for (size_t k = 0; k < len; k++)
        sw_buf_putc(b, var[k] == '_' ? '.' : (char)tolower((unsigned char)var[k]));
}

/* put_quoted() of the first @p len bytes of @p s. */
static void put_quoted_n(sw_buf_t *b, const char *s, size_t len)
{
    char *copy = sw_malloc(len + 1);
    memcpy(copy, s, len);
    copy[len] = '\0';
    put_quoted(b, copy);
    free(copy);
}

/* [0-9]+ over s[0..n). */
static bool all_digits(const char *s, size_t n)
{
    if (!n) return false;
    for (size_t k = 0; k < n; k++)
        if (!isdigit((unsigned char)s[k])) return false;
    return true;
}

/* An IP address as Kubernetes writes one (IPv4 or IPv6 characters). */
static bool ip_like(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s) && *s != '.' && *s != ':') return false;
    return true;
}

static bool ends_with(const char *s, size_t n, const char *suf, size_t *pre)
{
    size_t k = strlen(suf);
    if (n < k || strncmp(s + n - k, suf, k) != 0) return false;
    *pre = n - k;
    return true;
}

/* Whether var[0..len) = value is a variable Kubernetes injects for a
 * Service whose name starts with "stormwatch" (service links, e.g. the
 * stormwatch-metrics Service gives STORMWATCH_METRICS_SERVICE_HOST=10.0.0.7,
 * STORMWATCH_METRICS_PORT=tcp://10.0.0.7:9464 and
 * STORMWATCH_METRICS_PORT_9464_TCP_ADDR=10.0.0.7): the name's shape and the
 * value's shape must both match, so that a mistyped property stays an
 * error. */
static bool service_link_var(const char *var, size_t len, const char *value)
{
    size_t pre;
    bool url = strncmp(value, "tcp://", 6) == 0 || strncmp(value, "udp://", 6) == 0 ||
               strncmp(value, "sctp://", 7) == 0;
    bool digits = all_digits(value, strlen(value));
    if (ends_with(var, len, "SERVICE_HOST", &pre) && (pre == 0 || var[pre - 1] == '_'))
        return ip_like(value);
    if (ends_with(var, len, "SERVICE_PORT", &pre) && (pre == 0 || var[pre - 1] == '_'))
        return digits;
    /* <SVC>_SERVICE_PORT_<PORTNAME> */
    const char *sp = NULL;
    for (const char *p = var; p + 13 <= var + len; p++)
        if (strncmp(p, "SERVICE_PORT_", 13) == 0 && (p == var || p[-1] == '_')) sp = p;
    if (sp && sp + 13 < var + len) return digits;
    /* <SVC>_PORT_<n>_<PROTO>[_PROTO|_PORT|_ADDR] */
    for (const char *p = var; p + 5 < var + len; p++) {
        if (strncmp(p, "PORT_", 5) != 0 || (p != var && p[-1] != '_')) continue;
        const char *n = p + 5, *e = var + len, *q = n;
        while (q < e && isdigit((unsigned char)*q)) q++;
        if (q == n || q >= e || *q != '_') continue;
        q++;
        size_t rest = (size_t)(e - q);
        static const char *const protos[] = {"TCP", "UDP", "SCTP"};
        for (size_t k = 0; k < 3; k++) {
            size_t pl = strlen(protos[k]);
            if (rest < pl || strncmp(q, protos[k], pl) != 0) continue;
            const char *tail = q + pl;
            size_t tl = (size_t)(e - tail);
            if (tl == 0) return url;
            if (tl == 6 && !strncmp(tail, "_PROTO", 6))
                return !strcmp(value, "tcp") || !strcmp(value, "udp") || !strcmp(value, "sctp");
            if (tl == 5 && !strncmp(tail, "_PORT", 5)) return digits;
            if (tl == 5 && !strncmp(tail, "_ADDR", 5)) return ip_like(value);
        }
    }
    /* <SVC>_PORT */
    if (ends_with(var, len, "PORT", &pre) && (pre == 0 || var[pre - 1] == '_')) return url;
    return false;
}

/* Apply one STORMWATCH_ variable: @p var points after the prefix, its
 * name ends at @p eq. */
static sw_err_t env_apply(sw_conf_t *conf, const char *entry, const char *var, const char *eq,
                          char *errstr, size_t errstr_size)
{
    size_t len = (size_t)(eq - var);
    sw_buf_t name, msg;
    sw_buf_init(&name);
    sw_buf_init(&msg);
    sw_err_t err = SW_OK;
    static const struct {
        const char *env, *prop;
    } kmap[] = {{"KAFKA_CONSUMER_", "kafka.consumer."},
                {"KAFKA_PRODUCER_", "kafka.producer."},
                {"KAFKA_", "kafka."}};
    bool mapped = false;
    for (size_t k = 0; k < 3 && !mapped; k++) {
        size_t pl = strlen(kmap[k].env);
        if (len >= pl && strncmp(var, kmap[k].env, pl) == 0) {
            sw_buf_puts(&name, kmap[k].prop);
            put_env_name(&name, var + pl, len - pl);
            mapped = true;
        }
    }
    for (size_t i = 0; i < P__CNT && !mapped; i++) {
        if (env_matches(var, len, prop_table[i].name)) {
            sw_buf_puts(&name, prop_table[i].name);
            mapped = true;
        }
    }
    if (!mapped && service_link_var(var, len, eq + 1)) {
        /* Kubernetes injects these for every Service of the namespace
         * (unless the pod sets enableServiceLinks: false): not ours. */
        conf->ignored_env = sw_reallocarray(conf->ignored_env, conf->n_ignored_env + 1,
                                            sizeof(*conf->ignored_env));
        conf->ignored_env[conf->n_ignored_env++] = sw_memdup0(entry, (size_t)(eq - entry));
        sw_buf_clear(&name);
        return SW_OK;
    }
    if (!mapped) {
        put_env_name(&name, var, len);
        sw_buf_puts(&msg, "environment variable ");
        put_quoted_n(&msg, entry, (size_t)(eq - entry));
        sw_buf_puts(&msg, " does not name a configuration property");
        put_suggestions(&msg, sw_buf_cstr(&name), true);
        sw_buf_puts(&msg, " (" LIST_HINT ")");
        err_out(&msg, errstr, errstr_size);
        sw_buf_clear(&name);
        return SW_ERR_NOT_FOUND;
    }
    char sub[1024];
    sw_conf_res_t res = sw_conf_set(conf, sw_buf_cstr(&name), eq + 1, sub, sizeof(sub));
    if (res != SW_CONF_OK) {
        sw_buf_puts(&msg, "environment variable ");
        put_quoted_n(&msg, entry, (size_t)(eq - entry));
        sw_buf_printf(&msg, ": %s", sub);
        err_out(&msg, errstr, errstr_size);
        err = res2err(res);
    }
    sw_buf_clear(&name);
    sw_buf_clear(&msg);
    return err;
}

sw_err_t sw_conf_load_env(sw_conf_t *conf, char *const *envp, char *errstr, size_t errstr_size)
{
    if (!envp) return SW_OK;
    const size_t pl = sizeof(ENV_PREFIX) - 1;
    for (int pass = 0; pass < 2; pass++) {
        for (char *const *ep = envp; *ep; ep++) {
            const char *entry = *ep;
            if (strncmp(entry, ENV_PREFIX, pl) != 0) continue;
            const char *var = entry + pl, *eq = strchr(var, '=');
            if (!eq) continue;
            if (env_pass(var) != pass) continue;
            sw_err_t err = env_apply(conf, entry, var, eq, errstr, errstr_size);
            if (err != SW_OK) return err;
        }
    }
    return SW_OK;
}

/* ------------------------------------------------------------------------ */
/* Getters. */

static sw_err_t get_val(const sw_conf_t *conf, const char *name, prop_type_t type,
                        const conf_val_t **valp)
{
    size_t idx;
    const prop_t *prop = prop_find(name, &idx);
    if (!prop) return SW_ERR_NOT_FOUND;
    if (prop->type != type) return SW_ERR_INVALID_ARG;
    *valp = &conf->vals[idx];
    return SW_OK;
}

sw_err_t sw_conf_get_i64(const sw_conf_t *conf, const char *name, int64_t *valp)
{
    const conf_val_t *val;
    sw_err_t err = get_val(conf, name, PROP_INT, &val);
    if (err == SW_OK) *valp = val->i;
    return err;
}

sw_err_t sw_conf_get_dbl(const sw_conf_t *conf, const char *name, double *valp)
{
    const conf_val_t *val;
    sw_err_t err = get_val(conf, name, PROP_DBL, &val);
    if (err == SW_OK) *valp = val->d;
    return err;
}

sw_err_t sw_conf_get_bool(const sw_conf_t *conf, const char *name, bool *valp)
{
    const conf_val_t *val;
    sw_err_t err = get_val(conf, name, PROP_BOOL, &val);
    if (err == SW_OK) *valp = val->b;
    return err;
}

const char *sw_conf_get_str(const sw_conf_t *conf, const char *name)
{
    const conf_val_t *val;
    if (get_val(conf, name, PROP_STR, &val) == SW_OK ||
        get_val(conf, name, PROP_ENUM, &val) == SW_OK)
        return val->text;
    const kprop_t *kp = kprop_find(conf, name);
    return kp ? kp->value : NULL;
}

size_t sw_conf_get_list_cnt(const sw_conf_t *conf, const char *name)
{
    const conf_val_t *val;
    return get_val(conf, name, PROP_LIST, &val) == SW_OK ? val->n_elems : 0;
}

const char *sw_conf_get_list_elem(const sw_conf_t *conf, const char *name, size_t idx)
{
    const conf_val_t *val;
    if (get_val(conf, name, PROP_LIST, &val) != SW_OK || idx >= val->n_elems) return NULL;
    return val->elems[idx];
}

sw_params_t sw_conf_params(const sw_conf_t *conf)
{
    sw_params_t p;
    p.spike_min_bytes = conf->vals[P_SPIKE_MIN_BYTES].i;
    p.spike_fraction = conf->vals[P_SPIKE_FRACTION].d;
    p.skew_note_multiplier = conf->vals[P_SKEW_NOTE_MULTIPLIER].i;
    p.window_samples = conf->vals[P_WINDOW_SAMPLES].i;
    p.stale_ms = conf->vals[P_STALE_MS].i;
    p.max_jobs = conf->vals[P_MAX_JOBS].i;
    p.max_ranks_per_job = conf->vals[P_MAX_RANKS_PER_JOB].i;
    return p;
}

sw_err_t sw_conf_check(const sw_conf_t *conf, char *errstr, size_t errstr_size)
{
    /* Each property alone was checked when it was set; these rules need two.
     * Messages name properties, never a secret value. */
    if (strcmp(conf->vals[P_OUTPUT_FORMAT].text, "pagerduty") == 0 &&
        !*conf->vals[P_PAGERDUTY_ROUTING_KEY].text) {
        if (errstr && errstr_size)
            snprintf(errstr, errstr_size,
                     "configuration property \"%s\" is required with output.format=pagerduty "
                     "(expected the integration key of the PagerDuty service's Events API v2 "
                     "integration)",
                     prop_table[P_PAGERDUTY_ROUTING_KEY].name);
        return SW_ERR_INVALID_ARG;
    }
    /* PagerDuty answers 400 to any other key: say so before connecting
     * (the length only; the value is a secret). */
    size_t klen = strlen(conf->vals[P_PAGERDUTY_ROUTING_KEY].text);
    if (strcmp(conf->vals[P_OUTPUT_FORMAT].text, "pagerduty") == 0 && klen != 32) {
        if (errstr && errstr_size)
            snprintf(errstr, errstr_size,
                     "configuration property \"%s\": value [redacted] is %zu characters long "
                     "(expected the 32-character integration key of a PagerDuty Events API v2 "
                     "integration)",
                     prop_table[P_PAGERDUTY_ROUTING_KEY].name, klen);
        return SW_ERR_INVALID_ARG;
    }
    return SW_OK;
}

bool sw_conf_kafka_next(const sw_conf_t *conf, size_t *idx, sw_conf_kafka_t *kprop)
{
    if (*idx >= conf->n_kprops) return false;
    const kprop_t *kp = &conf->kprops[(*idx)++];
    kprop->scope = kp->scope;
    kprop->name = kp->name;
    kprop->rk_name = kp->name + kp->rk_off;
    kprop->value = kp->value;
    kprop->secret = sw_conf_is_secret(kp->name);
    return true;
}

/* ------------------------------------------------------------------------ */
/* Output generated from the table. */

static const char *type_name(prop_type_t type)
{
    switch (type) {
    case PROP_INT: return "int";
    case PROP_DBL: return "double";
    case PROP_STR: return "string";
    case PROP_BOOL: return "bool";
    case PROP_ENUM: return "enum";
    case PROP_LIST: return "list";
    }
    return "?";
}

/* Range or allowed values of @p prop as shown by -X list and Markdown. */
static void put_values(sw_buf_t *b, const prop_t *prop)
{
    switch (prop->type) {
    case PROP_INT:
    case PROP_DBL: put_range(b, prop); return;
    case PROP_BOOL: sw_buf_puts(b, "true, false"); return;
    case PROP_ENUM:
        for (size_t k = 0; prop->allowed[k]; k++)
            sw_buf_printf(b, "%s%s", k ? ", " : "", prop->allowed[k]);
        return;
    case PROP_STR:
        if (prop->flags & PROP_F_TOPIC)
            sw_buf_puts(b, prop->min > 0 ? "topic name" : "topic name or empty");
        else if (prop->flags & PROP_F_HOSTPORT)
            sw_buf_puts(b, "host:port or empty");
        else if (prop->flags & PROP_F_URL)
            sw_buf_puts(b, "http(s) URL or empty");
        else if (prop->flags & PROP_F_URLS)
            sw_buf_puts(b, "http(s) URLs, comma-separated, or empty");
        else if (prop->min > 0)
            sw_buf_puts(b, "non-empty");
        else
            sw_buf_puts(b, "any");
        return;
    case PROP_LIST:
        sw_buf_puts(b, (prop->flags & PROP_F_TOPIC) ? "topics or ^regexes, comma-separated"
                                                     : "comma-separated");
        return;
    }
}

static void put_default(sw_buf_t *b, const prop_t *prop)
{
    if (*prop->defval)
        sw_buf_puts(b, prop->defval);
    else
        sw_buf_puts(b, "\"\"");
}

static void put_desc(sw_buf_t *b, const prop_t *prop)
{
    sw_buf_puts(b, prop->desc);
    if (prop_secret(prop)) sw_buf_puts(b, " (secret)");
}

#define KAFKA_ROWS 3
static const char *const kafka_rows[KAFKA_ROWS][2] = {
    {"kafka.<p>", "librdkafka property <p> for the consumer and the producer."},
    {"kafka.consumer.<p>", "librdkafka property <p> for the consumer only."},
    {"kafka.producer.<p>", "librdkafka property <p> for the producer only."},
};

void sw_conf_list(sw_buf_t *out)
{
    static const char *const head[5] = {"Property", "Type", "Range/values", "Default",
                                        "Description"};
    size_t w[4];
    for (size_t c = 0; c < 4; c++) w[c] = strlen(head[c]);
    sw_buf_t cell;
    sw_buf_init(&cell);
    for (size_t i = 0; i < P__CNT; i++) {
        const prop_t *prop = &prop_table[i];
        size_t lens[4];
        lens[0] = strlen(prop->name);
        lens[1] = strlen(type_name(prop->type));
        cell.len = 0;
        put_values(&cell, prop);
        lens[2] = cell.len;
        cell.len = 0;
        put_default(&cell, prop);
        lens[3] = cell.len;
        for (size_t c = 0; c < 4; c++)
            if (lens[c] > w[c]) w[c] = lens[c];
    }
    for (size_t k = 0; k < KAFKA_ROWS; k++)
        if (strlen(kafka_rows[k][0]) > w[0]) w[0] = strlen(kafka_rows[k][0]);

    sw_buf_printf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", (int)w[0], head[0], (int)w[1], head[1],
                  (int)w[2], head[2], (int)w[3], head[3], head[4]);
    for (size_t i = 0; i < P__CNT; i++) {
        const prop_t *prop = &prop_table[i];
        sw_buf_printf(out, "%-*s  %-*s  ", (int)w[0], prop->name, (int)w[1],
                      type_name(prop->type));
        cell.len = 0;
        put_values(&cell, prop);
        sw_buf_printf(out, "%-*s  ", (int)w[2], sw_buf_cstr(&cell));
        cell.len = 0;
        put_default(&cell, prop);
        sw_buf_printf(out, "%-*s  ", (int)w[3], sw_buf_cstr(&cell));
        put_desc(out, prop);
        sw_buf_putc(out, '\n');
    }
    sw_buf_clear(&cell);
    for (size_t k = 0; k < KAFKA_ROWS; k++)
        sw_buf_printf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", (int)w[0], kafka_rows[k][0],
                      (int)w[1], "string", (int)w[2], "checked by librdkafka", (int)w[3], "-",
                      kafka_rows[k][1]);
    sw_buf_puts(out,
                "\nPrecedence, lowest first: defaults, -c FILE, environment, -X name=value.\n"
                "Environment: STORMWATCH_<NAME> sets <name> ('.' -> '_', upper case, e.g. "
                "STORMWATCH_WINDOW_SAMPLES);\n"
                "STORMWATCH_KAFKA_[CONSUMER_|PRODUCER_]<P> sets kafka.[consumer.|producer.]<p> "
                "(<p> lower-cased, '_' -> '.').\n"
                "Secret values (kafka.*.sasl.password, *.password, *secret*, ...) are shown "
                "as " REDACTED " by -X dump.\n");
}

/* Append @p s with '|' escaped for a Markdown table cell. */
static void put_md(sw_buf_t *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') sw_buf_putc(b, '\\');
        sw_buf_putc(b, *s);
    }
}

void sw_conf_markdown(sw_buf_t *out)
{
    sw_buf_t cell;
    sw_buf_init(&cell);
    sw_buf_puts(out, "| Property | Type | Range / values | Default | Description |\n"
                     "|---|---|---|---|---|\n");
    for (size_t i = 0; i < P__CNT; i++) {
        const prop_t *prop = &prop_table[i];
        sw_buf_printf(out, "| `%s` | %s | ", prop->name, type_name(prop->type));
        cell.len = 0;
        put_values(&cell, prop);
        put_md(out, sw_buf_cstr(&cell));
        sw_buf_puts(out, " | ");
        if (*prop->defval) {
            sw_buf_putc(out, '`');
            put_md(out, prop->defval);
            sw_buf_putc(out, '`');
        } else {
            sw_buf_puts(out, "(empty)");
        }
        sw_buf_puts(out, " | ");
        cell.len = 0;
        put_desc(&cell, prop);
        put_md(out, sw_buf_cstr(&cell));
        sw_buf_puts(out, " |\n");
    }
    sw_buf_clear(&cell);
    for (size_t k = 0; k < KAFKA_ROWS; k++)
        sw_buf_printf(out, "| `%s` | string | checked by librdkafka | - | %s |\n",
                      kafka_rows[k][0], kafka_rows[k][1]);
}

void sw_conf_dump(const sw_conf_t *conf, sw_buf_t *out)
{
    for (size_t i = 0; i < P__CNT; i++) {
        const prop_t *prop = &prop_table[i];
        sw_buf_printf(out, "%s=%s\n", prop->name,
                      !sw_conf_is_secret(prop->name) ? conf->vals[i].text
                      : *conf->vals[i].text         ? REDACTED_SET
                                                    : REDACTED_UNSET);
    }
    for (size_t k = 0; k < conf->n_kprops; k++) {
        const kprop_t *kp = &conf->kprops[k];
        sw_buf_printf(out, "%s=%s\n", kp->name,
                      !sw_conf_is_secret(kp->name) ? kp->value
                      : *kp->value                 ? REDACTED_SET
                                                   : REDACTED_UNSET);
    }
    for (size_t k = 0; k < conf->n_ignored_env; k++)
        sw_buf_printf(out, "# ignored: %s (a Kubernetes service link variable)\n",
                      conf->ignored_env[k]);
}
