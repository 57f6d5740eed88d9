/*
 * The property table of stormwatch's configuration (see sw_conf.h): every
 * property once, with its type, range, default and description. Defaults,
 * validation, `-X list`, `-X dump` and README's property list all come
 * from here.
 */
#include <stddef.h>

#include "sw_conf_int.h"

/* Allowed values, in the order of the typed enums of sw_conf.h
 * (sw_in_format_t, sw_out_format_t, sw_guarantee_t, sw_log_level_t; on_off:
 * "on" first), which sw_conf_settings() maps by position. */
static const char *const input_formats[] = {"auto", "json", "avro", NULL};
static const char *const output_formats[] = {"json", "avro", "pagerduty", "alertmanager", NULL};
static const char *const guarantees[] = {"at_least_once", "exactly_once", NULL};
static const char *const log_levels[] = {"error", "warn", "info", "debug", NULL};
static const char *const on_off[] = {"on", "off", NULL};

/* The table and its initializer macros are laid out by hand (one property per
 * entry, its description below). */
// clang-format off
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


const prop_t sw_conf_props[P__CNT] = {
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
    [P_WINDOW_SAMPLES] = INT_PROP("window.samples", 1, SW_WINDOW_SAMPLES_MAX, "512",
        "Samples kept per rank in the sliding analysis window."),
    [P_STALE_MS] = INT_PROP("stale.ms", 0, INT64_C(1000000000000), "60000",
        "Empty a rank's window once its newest sample lags the job's newest by this many ms "
        "(0 = never stale)."),
    [P_SILENCE_MS] = INT_PROP("silence.ms", 1, INT64_C(1000000000000), "30000",
        "A rank is silent (a death, docs/semantics.md) once the job's newest aligned event time passes "
        "its own by more than this many ms, or 10 sampling intervals if longer, without a stop."),
    [P_OOM_WARN_MS] = INT_PROP("oom.warn.ms", 1, INT64_C(1000000000000), "120000",
        "Warn (docs/semantics.md) when a rank's GPU is projected to fill within this many ms; also the "
        "least event time between two warning records of a job."),
    [P_OOM_WARN_HEADROOM] = DBL_PROP("oom.warn.headroom", 0.0, 1.0, "0.10",
        "... and its headroom (device_total_bytes - device_used_bytes) is under this fraction "
        "of device_total_bytes."),
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
    [P_MAX_MEMORY_BYTES] = INT_PROP("max.memory.bytes", 0, 1099511627776, "644245094",
        "Budget for the engines' state across all partitions (0 = none). Unset, `run` takes 60% "
        "of the container's cgroup memory limit, else this default (60% of the shipped "
        "manifests' 1 GiB). Enforced where the state grows: a new job or rank that would pass "
        "it first evicts the jobs with the least evidence (no rank with two samples, then no "
        "rising run or open episode, least recently active first) and is refused only when "
        "none can go."),
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
    [P_WORKER_THREADS] = INT_PROP("worker.threads", 0, 64, "0",
        "Threads that decode and analyse the assigned partitions' messages (each partition is "
        "analysed by one thread at a time, in offset order); 0: the cgroup CPU quota rounded up "
        "(cpu.max, or cpu.cfs_quota_us/cpu.cfs_period_us), at most the CPUs this process may "
        "run on; the start log says which. Consuming, producing, commits and snapshots stay on "
        "the main thread."),
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
// clang-format on
