/*
 * The property table of stormwatch's configuration (see sw_conf.h): every
 * property once, with its type, range, default, the typed field of
 * sw_settings_t it fills and its description. Defaults, validation, the
 * typed settings, `-X list`, `-X dump` and docs/properties.md's list all come
 * from here: a new property is one row (and its field in sw_settings_t).
 */
#include <stddef.h>

#include "sw_conf_int.h"

/* Allowed values, in the order of the typed enums of sw_conf.h
 * (sw_in_format_t, sw_out_format_t, sw_guarantee_t, sw_log_level_t,
 * sw_repartition_t; on_off:
 * "on" first), which sw_conf_settings() maps by position. */
static const char *const input_formats[] = {"auto", "json", "avro", NULL};
static const char *const output_formats[] = {"json", "avro", "pagerduty", "alertmanager", NULL};
static const char *const guarantees[] = {"at_least_once", "exactly_once", NULL};
static const char *const log_levels[] = {"error", "warn", "info", "debug", NULL};
static const char *const on_off[] = {"on", "off", NULL};
static const char *const repartitions[] = {"on", "off", "auto", NULL};
static const char *const rep_partitioners[] = {"auto", "murmur2", "crc32", "fnv1a", NULL};

/* The table and its initializer macros are laid out by hand (one property per
 * entry, its description below). */
// clang-format off
/* F: the typed field of sw_settings_t the property fills (sw_conf_settings()). */
#define FIELD(F) .off = offsetof(sw_settings_t, F), .size = sizeof(((sw_settings_t *)0)->F)
#define INT_PROP(N, F, LO, HI, DEF, DESC) \
    {.name = N, FIELD(F), .type = PROP_INT, .min = LO, .max = HI, .defval = DEF, .desc = DESC}
#define DBL_PROP(N, F, LO, HI, DEF, DESC) \
    {.name = N, FIELD(F), .type = PROP_DBL, .dmin = LO, .dmax = HI, .defval = DEF, .desc = DESC}
#define STR_PROP(N, F, LO, HI, FL, DEF, DESC)                                                  \
    {.name = N, FIELD(F), .type = PROP_STR, .min = LO, .max = HI, .flags = FL, .defval = DEF, \
     .desc = DESC}
#define ENUM_PROP(N, F, ALLOWED, DEF, DESC) \
    {.name = N, FIELD(F), .type = PROP_ENUM, .allowed = ALLOWED, .defval = DEF, .desc = DESC}
#define BOOL_PROP(N, F, DEF, DESC) \
    {.name = N, FIELD(F), .type = PROP_BOOL, .defval = DEF, .desc = DESC}
#define LIST_PROP(N, F, FL, DEF, DESC) \
    {.name = N, FIELD(F), .type = PROP_LIST, .flags = FL, .defval = DEF, .desc = DESC}


const prop_t sw_conf_props[] = {
    STR_PROP("bootstrap.servers", kafka.bootstrap_servers, 0, 65535, 0, "",
        "Kafka bootstrap servers (host:port,...); empty starts the embedded mock cluster."),
    STR_PROP("group.id", kafka.group_id, 1, 65535, 0, "stormwatch",
        "Kafka consumer group; instances with the same group share the input partitions."),
    LIST_PROP("input.topics", kafka.input_topics, PROP_F_TOPIC, "stormwatch.telemetry",
        "Comma-separated telemetry topics to consume; entries starting with ^ are regexes."),
    STR_PROP("output.topic", kafka.output_topic, 1, TOPIC_MAX_LEN, PROP_F_TOPIC,
        "stormwatch.alerts", "Topic that receives first-cause alerts and job summaries."),
    STR_PROP("dlq.topic", kafka.dlq_topic, 1, TOPIC_MAX_LEN, PROP_F_TOPIC, "stormwatch.dlq",
        "Dead-letter topic for input records that cannot be decoded."),
    ENUM_PROP("input.format", format.input, input_formats, "auto",
        "Encoding of input records; auto tells Confluent-framed Avro from JSON per record."),
    ENUM_PROP("output.format", format.output, output_formats, "json",
        "Encoding of output records: JSON, Avro in the Confluent wire format, or the request "
        "body of a PagerDuty Events API v2 event or an Alertmanager v2 alert (see Paging)."),
    INT_PROP("avro.schema.id.telemetry", format.schema_id_telemetry, 0, 2147483647, "1",
        "Confluent schema id of schemas/telemetry_event.avsc (Avro input)."),
    INT_PROP("avro.schema.id.alert", format.schema_id_alert, 0, 2147483647, "2",
        "Confluent schema id of schemas/first_cause_alert.avsc (Avro output) without "
        "schema.registry.url; with it, the id the registry gives for <output.topic>-value."),
    LIST_PROP("avro.schema.ids.telemetry", format.schema_ids_telemetry,
        PROP_F_EMPTY | PROP_F_IDFILE, "",
        "Further accepted writer schemas of Avro input without a registry, as "
        "id=path.avsc,... (each resolved against schemas/telemetry_event.avsc at start); "
        "with schema.registry.url these ids are not looked up."),
    LIST_PROP("schema.registry.url", registry.urls, PROP_F_EMPTY | PROP_F_URL, "",
        "Confluent Schema Registry URLs (http:// or https://, comma-separated, tried in "
        "order); set, Avro input is read with any schema id it knows and Avro output "
        "registers or looks up first_cause_alert.avsc under <output.topic>-value."),
    STR_PROP("schema.registry.basic.auth.user.info", registry.user_info, 0, 4096,
        PROP_F_SECRET, "", "USER:PASSWORD for HTTP basic authentication to the registry; empty: none."),
    STR_PROP("schema.registry.ssl.ca.location", registry.ca_location, 0, 4096, 0, "",
        "CA certificate file (PEM) that verifies an https registry; empty: the system's."),
    STR_PROP("schema.registry.ssl.certificate.location", registry.cert_location, 0, 4096, 0,
        "", "Client certificate file (PEM) for TLS client authentication to the registry."),
    STR_PROP("schema.registry.ssl.key.location", registry.key_location, 0, 4096, 0, "",
        "Private key file (PEM) of schema.registry.ssl.certificate.location."),
    INT_PROP("schema.registry.request.timeout.ms", registry.timeout_ms, 100,
        600000, "5000", "Timeout in ms of one registry request (per URL)."),
    BOOL_PROP("auto.register.schemas", registry.auto_register, "true",
        "true: register first_cause_alert.avsc under <output.topic>-value (POST "
        "/subjects/{subject}/versions, which returns the existing id when it is registered); "
        "false: only look it up (POST /subjects/{subject}), as Confluent's serializers."),
    STR_PROP("pagerduty.routing.key", pager.routing_key, 0, 255, PROP_F_SECRET, "",
        "Integration (routing) key of the PagerDuty service's Events API v2 integration; "
        "required with output.format=pagerduty, where every output record carries it."),
    STR_PROP("alertmanager.generator.url", pager.generator_url, 0, 2048, PROP_F_URL,
        "", "generatorURL of the alerts written with output.format=alertmanager (a link for "
        "the people paged); empty leaves it out."),
    STR_PROP("alertmanager.labels", pager.labels, 0, 4096, PROP_F_LABELS, "",
        "Static labels added to every alert written with output.format=alertmanager, as "
        "name=value,... (e.g. cluster=a100-east,team=ml-infra) for routing; names as "
        "Prometheus labels, not alertname, job_id, episode, dedup_key or severity."),
    INT_PROP("alertmanager.ends.after.ms", pager.ends_after_ms, 0,
        INT64_C(604800000), "900000",
        "endsAt of a firing Alertmanager alert, this many ms after it is written, so that an "
        "episode longer than Alertmanager's resolve_timeout is not auto-resolved; 0 leaves "
        "endsAt out (Alertmanager then applies resolve_timeout)."),
    INT_PROP("window.samples", engine.params.window_samples, 1, SW_WINDOW_SAMPLES_MAX, "512",
        "Samples kept per rank in the sliding analysis window."),
    INT_PROP("stale.ms", engine.params.stale_ms, 0, INT64_C(1000000000000), "60000",
        "Empty a rank's window once its newest sample lags the job's newest by this many ms "
        "(0 = never stale)."),
    INT_PROP("silence.ms", engine.params.silence_ms, 1, INT64_C(1000000000000), "30000",
        "A rank is silent (a death, docs/semantics.md) once the job's newest aligned event time passes "
        "its own by more than this many ms, or 10 sampling intervals if longer, without a stop."),
    INT_PROP("oom.warn.ms", engine.params.oom_warn_ms, 1, INT64_C(1000000000000), "120000",
        "Warn (docs/semantics.md) when a rank's GPU is projected to fill within this many ms; also the "
        "least event time between two warning records of a job."),
    DBL_PROP("oom.warn.headroom", engine.params.oom_warn_headroom, 0.0, 1.0, "0.10",
        "... and its headroom (device_total_bytes - device_used_bytes) is under this fraction "
        "of device_total_bytes."),
    INT_PROP("spike.min.bytes", engine.params.spike_min_bytes, 0, INT64_MAX, "67108864",
        "Spike threshold floor in bytes; a rank's threshold is the larger of this and "
        "spike.fraction of its peak."),
    DBL_PROP("spike.fraction", engine.params.spike_fraction, 0.0, 1.0, "0.10",
        "Spike threshold as a fraction of the rank's peak device memory use."),
    INT_PROP("skew.note.multiplier", engine.params.skew_note_multiplier, 1, 1000000, "5",
        "Note a rank's clock offset when it exceeds this many median sampling intervals."),
    INT_PROP("job.idle.ms", engine.job_idle_ms, 1, INT64_C(1000000000000), "300000",
        "Wall-clock idleness in ms after which a job's summary is emitted and its state "
        "freed (repartition=on or auto: counted while the input is forwarded, at most 10x; "
        "docs/hostile.md section 7)."),
    INT_PROP("max.jobs", engine.params.max_jobs, 0, 100000000, "10000",
        "Jobs tracked at once; events of further jobs are rejected (0 = unlimited)."),
    INT_PROP("max.ranks.per.job", engine.params.max_ranks_per_job, 0, 16777216, "131072",
        "Samples with a rank >= this or a larger world_size are rejected (0 = up to "
        "16777216, the largest supported world size)."),
    INT_PROP("max.memory.bytes", engine.max_memory_bytes, 0, 1099511627776, "644245094",
        "Budget for the engines' state across all partitions (0 = none). Unset, `run` takes 60% "
        "of the container's cgroup memory limit, else this default (60% of the shipped "
        "manifests' 1 GiB). Enforced where the state grows: a new job or rank that would pass "
        "it first evicts the jobs with the least evidence (no rank with two samples, then no "
        "rising run or open episode, least recently active first) and is refused only when "
        "none can go."),
    ENUM_PROP("processing.guarantee", delivery.guarantee, guarantees, "at_least_once",
        "at_least_once commits offsets after alerts are delivered; exactly_once uses Kafka "
        "transactions."),
    INT_PROP("commit.interval.ms", delivery.commit_interval_ms, 10, 3600000, "1000",
        "Interval in ms between offset commits (or transaction commits); unset with "
        "processing.guarantee=exactly_once it is 100 (as Kafka Streams), so alerts wait at "
        "most ~100 ms for their transaction."),
    INT_PROP("shutdown.timeout.ms", delivery.shutdown_timeout_ms, 100, 3600000, "30000",
        "Total time a stop (SIGTERM, SIGINT) may take, whatever the partition count: records "
        "are flushed first, then state snapshots, then offset commits; what is not done by "
        "then is left to the next owner (nothing is lost). A second signal stops at once."),
    INT_PROP("worker.threads", delivery.worker_threads, 0, 64, "0",
        "Threads that decode and analyse the assigned partitions' messages (each partition is "
        "analysed by one thread at a time, in offset order); 0: the cgroup CPU quota rounded up "
        "(cpu.max, or cpu.cfs_quota_us/cpu.cfs_period_us), at most the CPUs this process may "
        "run on; the start log says which. Consuming, producing, commits and snapshots stay on "
        "the main thread."),
    ENUM_PROP("topics.create", delivery.topics_create, on_off, "on",
        "on: create the topics the daemon writes when they are missing (state.topic with one "
        "partition, output.topic and dlq.topic with the input's partition count; cleanup.policy "
        "delete, broker-default replication), through the Admin API, as Kafka Streams does; off: "
        "a missing one is an error naming it."),
    ENUM_PROP("state.restore", delivery.state_restore, on_off, "on",
        "on: snapshot per-partition state to state.topic and rebuild it when a partition is "
        "assigned (restart, rebalance), so alerts are neither lost nor repeated; off: start "
        "empty."),
    STR_PROP("state.topic", delivery.state_topic, 1, TOPIC_MAX_LEN, PROP_F_TOPIC, "stormwatch.state",
        "Topic (one partition) that holds the state snapshots referenced by committed offsets."),
    ENUM_PROP("repartition", delivery.repartition_mode, repartitions, "auto",
        "on: every input message is forwarded, bytes and headers unchanged, to repartition.topic "
        "keyed by its job_id (murmur2, as Kafka's clients place keys) and the engines read only "
        "that topic, so each job is analysed by one engine whatever the producers' keys; off: "
        "the engines read the input topics directly (one hop less; right only when every "
        "producer keys by job_id: mis-keyed input is counted and logged); auto: a message keyed "
        "by its job_id on its job's partition is analysed where it is, only the others are "
        "forwarded, and the engine of partition p reads input p and repartition p in the order "
        "a marker per round fixes (one input topic with the repartition topic's partition count, "
        "state.restore=on, at_least_once; otherwise it runs as on). See README, Keying."),
    ENUM_PROP("repartition.partitioner", delivery.repartition_partitioner, rep_partitioners, "auto",
        "With repartition=auto: the partitioner the producers place job_id keys with, which "
        "decides where a job is analysed (one function for the whole group): murmur2 (Java "
        "client, kafka-python, franz-go, kafkajs), crc32 (librdkafka's default consistent_random: "
        "kcat, confluent-kafka, Fluent Bit, Vector, rsyslog omkafka) or fnv1a (Sarama, "
        "kafka-go); auto: the group's choice recorded in Kafka, else murmur2 where snapshots "
        "exist already, else the first member that owns input partition 0 detects it from the "
        "keys it reads and records it. Set it alike on every member. See docs/producing.md."),
    STR_PROP("repartition.topic", delivery.repartition_topic, 0, TOPIC_MAX_LEN, PROP_F_TOPIC, "",
        "Internal topic the input is forwarded through with repartition=on or auto (partitions: "
        "the input's count; retention 7 days); empty: <group.id>.repartition."),
    INT_PROP("snapshot.interval.ms", delivery.snapshot_interval_ms, 100, 3600000, "10000",
        "Interval in ms between state snapshots; offsets are committed with each one."),
    STR_PROP("metrics.listen", ops.metrics_listen, 0, 1024, PROP_F_HOSTPORT, "",
        "host:port of the HTTP metrics endpoint; empty disables it."),
    STR_PROP("health.listen", ops.health_listen, 0, 1024, PROP_F_HOSTPORT, "",
        "host:port of a second HTTP server that answers only /healthz and /readyz (point "
        "Kubernetes probes there: clients flooding the metrics port cannot starve them); empty: "
        "the probes are served on metrics.listen only. Needs metrics.listen."),
    INT_PROP("metrics.hosts.max", ops.metrics_hosts_max, 0, 100000, "200",
        "Most hosts with series of their own in stormwatch_first_cause_host_total and "
        "stormwatch_first_cause_host_jobs (the repeat offenders, docs/fleet.md); later hosts "
        "are counted under host=\"_other\". 0: every host under \"_other\"."),
    INT_PROP("ready.max.lag", ops.ready_max_lag, 0, 1000000000000, "10000",
        "/readyz reports ready while the total consumer lag is at most this many messages."),
    ENUM_PROP("log.level", ops.log_level, log_levels, "info",
        "Least severe log level written to stderr."),
    INT_PROP("mock.brokers", ops.mock_brokers, 1, 16, "3",
        "Brokers of the embedded mock cluster (when bootstrap.servers is empty)."),
    INT_PROP("mock.partitions", ops.mock_partitions, 1, 1024, "8",
        "Partitions of each topic of the embedded mock cluster."),
    /* stormwatch notify (see README "Paging"): it reads output.topic. */
    STR_PROP("notify.group.id", notify.group_id, 1, 65535, 0, "stormwatch-notify",
        "Kafka consumer group of stormwatch notify on output.topic (separate from group.id)."),
    STR_PROP("notify.dlq.topic", notify.dlq_topic, 1, TOPIC_MAX_LEN, PROP_F_TOPIC,
        "stormwatch.notify.dlq", "Dead-letter topic of stormwatch notify: alert records that "
        "cannot be decoded, and records a sink refused for good (HTTP status and body in the "
        "headers)."),
    INT_PROP("notify.retry.backoff.ms", notify.retry_backoff_ms, 1, 3600000, "500",
        "First retry delay of a failed delivery (5xx, 408, 429, timeout, network error); each "
        "retry doubles it, with jitter, up to notify.retry.backoff.max.ms. A Retry-After wins."),
    INT_PROP("notify.retry.backoff.max.ms", notify.retry_backoff_max_ms, 1, 3600000,
        "60000", "Longest retry delay of a failed delivery; retries go on until the sink "
        "accepts or refuses for good, or notify stops."),
    STR_PROP("alertmanager.url", notify.alertmanager.url, 0, 8192, PROP_F_URLS, "",
        "Alertmanager base URLs for stormwatch notify, comma-separated (every member of an HA "
        "cluster; alerts are POSTed to each at /api/v2/alerts); empty disables the sink."),
    INT_PROP("alertmanager.resend.ms", notify.alertmanager_resend_ms, 1000, 3600000, "60000",
        "stormwatch notify re-sends every open episode to Alertmanager this often (endsAt "
        "alertmanager.ends.after.ms ahead), so it never auto-resolves and survives "
        "Alertmanager restarts; must be below alertmanager.ends.after.ms."),
    INT_PROP("alertmanager.timeout.ms", notify.alertmanager.timeout_ms, 100, 600000, "10000",
        "Timeout of one request to Alertmanager, connection included."),
    STR_PROP("alertmanager.auth.bearer.token", notify.alertmanager.bearer_token, 0, 4096,
        PROP_F_SECRET, "", "Bearer token sent to Alertmanager (Authorization header); empty: none."),
    STR_PROP("alertmanager.auth.basic", notify.alertmanager.basic_auth, 0, 4096, PROP_F_SECRET, "",
        "user:password for HTTP basic auth to Alertmanager; empty: none."),
    STR_PROP("alertmanager.ssl.ca.location", notify.alertmanager.ca_location, 0, 4096, 0, "",
        "CA certificates (PEM file) to verify Alertmanager's https certificate; empty: the "
        "system's."),
    DBL_PROP("alertmanager.rate.limit", notify.alertmanager.rate_limit, 0.0, 100000.0, "0",
        "Most requests per second to each Alertmanager (0 = no limit)."),
    STR_PROP("pagerduty.url", notify.pagerduty.url, 0, 2048, PROP_F_URL,
        "https://events.pagerduty.com/v2/enqueue", "PagerDuty Events API v2 endpoint of "
        "stormwatch notify; the sink is on when pagerduty.routing.key is set."),
    INT_PROP("pagerduty.timeout.ms", notify.pagerduty.timeout_ms, 100, 600000, "10000",
        "Timeout of one request to PagerDuty, connection included."),
    STR_PROP("pagerduty.auth.bearer.token", notify.pagerduty.bearer_token, 0, 4096,
        PROP_F_SECRET, "", "Bearer token sent to pagerduty.url (a proxy in front of it); empty: none."),
    STR_PROP("pagerduty.auth.basic", notify.pagerduty.basic_auth, 0, 4096, PROP_F_SECRET, "",
        "user:password for HTTP basic auth to pagerduty.url; empty: none."),
    STR_PROP("pagerduty.ssl.ca.location", notify.pagerduty.ca_location, 0, 4096, 0, "",
        "CA certificates (PEM file) to verify pagerduty.url; empty: the system's."),
    DBL_PROP("pagerduty.rate.limit", notify.pagerduty.rate_limit, 0.0, 100000.0, "2",
        "Most requests per second to PagerDuty (its Events API allows about 120 a minute per "
        "routing key; 0 = no limit)."),
    STR_PROP("webhook.url", notify.webhook.url, 0, 2048, PROP_F_URL, "",
        "URL that stormwatch notify POSTs each paging record to, as JSON; empty disables the "
        "sink."),
    STR_PROP("webhook.hmac.secret", notify.webhook_hmac_secret, 0, 4096, PROP_F_SECRET, "",
        "When set, each webhook request carries X-Stormwatch-Signature: sha256=<hex "
        "HMAC-SHA256 of the body under this secret>."),
    INT_PROP("webhook.timeout.ms", notify.webhook.timeout_ms, 100, 600000, "10000",
        "Timeout of one webhook request, connection included."),
    STR_PROP("webhook.auth.bearer.token", notify.webhook.bearer_token, 0, 4096, PROP_F_SECRET,
        "", "Bearer token sent to webhook.url (Authorization header); empty: none."),
    STR_PROP("webhook.auth.basic", notify.webhook.basic_auth, 0, 4096, PROP_F_SECRET, "",
        "user:password for HTTP basic auth to webhook.url; empty: none."),
    STR_PROP("webhook.ssl.ca.location", notify.webhook.ca_location, 0, 4096, 0, "",
        "CA certificates (PEM file) to verify webhook.url; empty: the system's."),
    DBL_PROP("webhook.rate.limit", notify.webhook.rate_limit, 0.0, 100000.0, "0",
        "Most requests per second to webhook.url (0 = no limit)."),
};
// clang-format on

const size_t sw_conf_nprops = sizeof(sw_conf_props) / sizeof(sw_conf_props[0]);
