/*
 * Tests of the configuration module's values: defaults against
 * sw_params_default(), every error message form (exact text), good values,
 * the getters and list parsing, the engine parameters, every field of the
 * settings (enum properties, -X values, the exactly_once commit interval
 * rule) and the property table's fields. No Kafka, no network.
 */
#include "conf_dump.h"

static char *dump_of(const sw_conf_t *conf)
{
    return dump_of2(conf, false);
}

static void test_defaults(void **state)
{
    (void)state;
    sw_conf_t *conf = sw_conf_new();
    SW_ASSERT(conf != NULL, "sw_conf_new() failed: a table default fails validation");

    sw_buf_t want;
    sw_buf_init(&want);
    for (size_t i = 0; i < n_defaults; i++)
        sw_buf_printf(&want, "%s=%s\n", defaults[i].name, defaults[i].def);
    char *got = dump_of(conf);
    SW_ASSERT_STREQ(got, sw_buf_cstr(&want));
    free(got);
    sw_buf_clear(&want);

    sw_params_t p = sw_conf_params(conf), d = sw_params_default();
    SW_ASSERT_I64(p.spike_min_bytes, d.spike_min_bytes);
    SW_ASSERT(p.spike_fraction == d.spike_fraction, "got %.17g, want %.17g", p.spike_fraction,
              d.spike_fraction);
    SW_ASSERT_I64(p.skew_note_multiplier, d.skew_note_multiplier);
    SW_ASSERT_I64(p.window_samples, d.window_samples);
    SW_ASSERT_I64(p.stale_ms, d.stale_ms);
    SW_ASSERT_I64(p.max_jobs, d.max_jobs);
    SW_ASSERT_I64(p.max_ranks_per_job, d.max_ranks_per_job);
    SW_ASSERT_I64(p.silence_ms, d.silence_ms);
    SW_ASSERT_I64(p.oom_warn_ms, d.oom_warn_ms);
    SW_ASSERT_TRUE(p.oom_warn_headroom == d.oom_warn_headroom);

    /* The same values through the typed getters and the SW_DEFAULT_* macros. */
    static const struct {
        const char *name;
        int64_t want;
    } ints[] = {
        {"spike.min.bytes", SW_DEFAULT_SPIKE_MIN_BYTES},
        {"skew.note.multiplier", SW_DEFAULT_SKEW_NOTE_MULTIPLIER},
        {"window.samples", SW_DEFAULT_WINDOW_SAMPLES},
        {"stale.ms", SW_DEFAULT_STALE_MS},
        {"silence.ms", SW_DEFAULT_SILENCE_MS},
        {"oom.warn.ms", SW_DEFAULT_OOM_WARN_MS},
        {"max.jobs", SW_DEFAULT_MAX_JOBS},
        {"max.ranks.per.job", SW_DEFAULT_MAX_RANKS_PER_JOB},
    };
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        int64_t v = -1;
        SW_ASSERT_I64(sw_conf_get_i64(conf, ints[i].name, &v), SW_OK);
        SW_ASSERT(v == ints[i].want, "%s: got %lld, want %lld", ints[i].name, (long long)v,
                  (long long)ints[i].want);
    }
    double f = -1;
    SW_ASSERT_I64(sw_conf_get_dbl(conf, "spike.fraction", &f), SW_OK);
    SW_ASSERT(f == SW_DEFAULT_SPIKE_FRACTION, "spike.fraction: got %.17g", f);
    sw_conf_destroy(conf);
    sw_conf_destroy(NULL);
}

/* Every rejected value or name, with the exact message. */
static const struct {
    const char *name, *value;
    sw_conf_res_t res;
    const char *msg;
} bad[] = {
    {"windw.samples", "100", SW_CONF_UNKNOWN,
     "configuration property \"windw.samples\" is unknown; did you mean \"window.samples\"?" HINT},
    {"foo.bar", "1", SW_CONF_UNKNOWN, "configuration property \"foo.bar\" is unknown" HINT},
    {"spike", "1", SW_CONF_UNKNOWN,
     "configuration property \"spike\" is unknown; did you mean \"spike.fraction\" or "
     "\"spike.min.bytes\"?" HINT},
    {"max.job", "1", SW_CONF_UNKNOWN,
     "configuration property \"max.job\" is unknown; did you mean \"max.jobs\", "
     "\"max.ranks.per.job\" or \"max.memory.bytes\"?" HINT},
    {"max.ranks", "1", SW_CONF_UNKNOWN,
     "configuration property \"max.ranks\" is unknown; did you mean \"max.ranks.per.job\", "
     "\"max.jobs\" or \"max.memory.bytes\"?" HINT},
    {"input.topic", "a", SW_CONF_UNKNOWN,
     "configuration property \"input.topic\" is unknown; did you mean \"input.topics\", "
     "\"output.topic\" or \"input.format\"?" HINT},
    {"Window.Samples", "1", SW_CONF_UNKNOWN,
     "configuration property \"Window.Samples\" is unknown; did you mean \"window.samples\"?" HINT},
    {"", "1", SW_CONF_UNKNOWN, "configuration property name is empty" HINT},
    {"window.samples", "10k", SW_CONF_INVALID,
     "configuration property \"window.samples\": value \"10k\" is not an integer (expected "
     "1..1000000)"},
    {"window.samples", "", SW_CONF_INVALID,
     "configuration property \"window.samples\": value \"\" is not an integer (expected "
     "1..1000000)"},
    {"window.samples", " 5", SW_CONF_INVALID,
     "configuration property \"window.samples\": value \" 5\" is not an integer (expected "
     "1..1000000)"},
    {"window.samples", "5.0", SW_CONF_INVALID,
     "configuration property \"window.samples\": value \"5.0\" is not an integer (expected "
     "1..1000000)"},
    {"window.samples", "0", SW_CONF_INVALID,
     "configuration property \"window.samples\": value \"0\" is out of range (expected "
     "1..1000000)"},
    {"window.samples", "1000001", SW_CONF_INVALID,
     "configuration property \"window.samples\": value \"1000001\" is out of range (expected "
     "1..1000000)"},
    {"spike.min.bytes", "9223372036854775808", SW_CONF_INVALID,
     "configuration property \"spike.min.bytes\": value \"9223372036854775808\" is out of range "
     "(expected 0..9223372036854775807)"},
    {"stale.ms", "-1", SW_CONF_INVALID,
     "configuration property \"stale.ms\": value \"-1\" is out of range (expected "
     "0..1000000000000)"},
    {"spike.fraction", "abc", SW_CONF_INVALID,
     "configuration property \"spike.fraction\": value \"abc\" is not a number (expected 0..1)"},
    {"spike.fraction", "0.5x", SW_CONF_INVALID,
     "configuration property \"spike.fraction\": value \"0.5x\" is not a number (expected 0..1)"},
    {"spike.fraction", "nan", SW_CONF_INVALID,
     "configuration property \"spike.fraction\": value \"nan\" is not a number (expected 0..1)"},
    {"spike.fraction", "1.5", SW_CONF_INVALID,
     "configuration property \"spike.fraction\": value \"1.5\" is out of range (expected 0..1)"},
    {"input.format", "xml", SW_CONF_INVALID,
     "configuration property \"input.format\": value \"xml\" is not one of auto, json, avro"},
    {"input.format", "JSON", SW_CONF_INVALID,
     "configuration property \"input.format\": value \"JSON\" is not one of auto, json, avro"},
    {"log.level", "warning", SW_CONF_INVALID,
     "configuration property \"log.level\": value \"warning\" is not one of error, warn, info, "
     "debug"},
    {"input.topics", "a,,b", SW_CONF_INVALID,
     "configuration property \"input.topics\": value \"a,,b\" has an empty element (expected a "
     "comma-separated list of non-empty entries)"},
    {"input.topics", "a, ", SW_CONF_INVALID,
     "configuration property \"input.topics\": value \"a, \" has an empty element (expected a "
     "comma-separated list of non-empty entries)"},
    {"input.topics", "", SW_CONF_INVALID,
     "configuration property \"input.topics\": value \"\" has an empty element (expected a "
     "comma-separated list of non-empty entries)"},
    {"alertmanager.labels", "cluster", SW_CONF_INVALID,
     "configuration property \"alertmanager.labels\": value \"cluster\" has \"cluster\", "
     "expected name=value"},
    {"alertmanager.labels", "team=a,9x=b", SW_CONF_INVALID,
     "configuration property \"alertmanager.labels\": value \"team=a,9x=b\" has label name "
     "\"9x\", expected [a-zA-Z_][a-zA-Z0-9_]*"},
    {"alertmanager.labels", "severity=page", SW_CONF_INVALID,
     "configuration property \"alertmanager.labels\": value \"severity=page\" sets label "
     "\"severity\", which stormwatch sets itself"},
    {"alertmanager.labels", "team=a,team=b", SW_CONF_INVALID,
     "configuration property \"alertmanager.labels\": value \"team=a,team=b\" sets label "
     "\"team\" twice"},
    {"input.topics", "a,bad topic", SW_CONF_INVALID,
     "configuration property \"input.topics\": element \"bad topic\" is not a valid topic name "
     "(expected characters a-z A-Z 0-9 . _ -)"},
    {"output.topic", "", SW_CONF_INVALID,
     "configuration property \"output.topic\": value \"\" is empty (expected a topic name)"},
    {"group.id", "", SW_CONF_INVALID,
     "configuration property \"group.id\": value \"\" is empty (expected a non-empty string)"},
    {"metrics.listen", "9100", SW_CONF_INVALID,
     "configuration property \"metrics.listen\": value \"9100\" is not host:port (expected e.g. "
     "\"0.0.0.0:9100\", or empty to disable)"},
    {"window.samples", "1\n2", SW_CONF_INVALID,
     "configuration property \"window.samples\": value \"1\\x0a2\" is not an integer (expected "
     "1..1000000)"},
    {"kafka.", "x", SW_CONF_UNKNOWN,
     "configuration property \"kafka.\" lacks the librdkafka property name (expected "
     "kafka.<property>, kafka.consumer.<property> or kafka.producer.<property>)"},
    {"kafka.consumer.", "x", SW_CONF_UNKNOWN,
     "configuration property \"kafka.consumer.\" lacks the librdkafka property name (expected "
     "kafka.<property>, kafka.consumer.<property> or kafka.producer.<property>)"},
    {"kafka.producer.", "x", SW_CONF_UNKNOWN,
     "configuration property \"kafka.producer.\" lacks the librdkafka property name (expected "
     "kafka.<property>, kafka.consumer.<property> or kafka.producer.<property>)"},
};

static void test_bad_values(void **state)
{
    (void)state;
    sw_conf_t *conf = sw_conf_new();
    char *before = dump_of(conf);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char errstr[512] = "";
        sw_conf_res_t res = sw_conf_set(conf, bad[i].name, bad[i].value, errstr, sizeof(errstr));
        SW_ASSERT(res == bad[i].res, "case %zu (%s=%s): got %d, want %d", i, bad[i].name,
                  bad[i].value, res, bad[i].res);
        SW_ASSERT(strcmp(errstr, bad[i].msg) == 0, "case %zu\n  got:  %s\n  want: %s", i, errstr,
                  bad[i].msg);
        /* A rejected setting changes nothing. */
        char *after = dump_of(conf);
        SW_ASSERT(strcmp(before, after) == 0, "case %zu changed the conf:\n%s", i, after);
        free(after);
        /* errstr is optional. */
        SW_ASSERT_I64(sw_conf_set(conf, bad[i].name, bad[i].value, NULL, 0), bad[i].res);
    }
    free(before);

    /* Bool parsing (no property in the table is a bool today). */
    static const struct {
        const char *value;
        bool ok, want;
    } bools[] = {{"true", true, true},   {"yes", true, true},     {"1", true, true},
                 {"false", true, false}, {"no", true, false},     {"0", true, false},
                 {"TRUE", false, false}, {"maybe", false, false}, {"", false, false}};
    for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
        char errstr[256] = "";
        bool v = !bools[i].want;
        sw_conf_res_t res = sw_conf_parse_bool("x.enable", bools[i].value, &v, errstr,
                                               sizeof(errstr));
        SW_ASSERT((res == SW_CONF_OK) == bools[i].ok, "bool \"%s\": res %d", bools[i].value, res);
        if (bools[i].ok) {
            SW_ASSERT(v == bools[i].want, "bool \"%s\": got %d", bools[i].value, v);
        } else {
            char want[256];
            snprintf(want, sizeof(want),
                     "configuration property \"x.enable\": value \"%s\" is not a boolean "
                     "(expected true, false, yes, no, 1 or 0)",
                     bools[i].value);
            SW_ASSERT_STREQ(errstr, want);
        }
    }
    sw_conf_destroy(conf);
}

/* Accepted values and their canonical text in the dump. */
static void test_good_values(void **state)
{
    (void)state;
    static const struct {
        const char *name, *value, *dumped;
    } good[] = {
        {"window.samples", "1", "1"},
        {"window.samples", "+1000000", "1000000"},
        {"spike.min.bytes", "9223372036854775807", "9223372036854775807"},
        {"stale.ms", "0", "0"},
        {"spike.fraction", "0.25", "0.25"},
        {"spike.fraction", "1e-1", "0.1"},
        {"spike.fraction", "0", "0"},
        {"spike.fraction", "1", "1"},
        {"input.format", "avro", "avro"},
        {"processing.guarantee", "exactly_once", "exactly_once"},
        {"input.topics", " a , ^gpu\\..*,b ", "a,^gpu\\..*,b"},
        {"output.topic", "alerts_v2-x.y", "alerts_v2-x.y"},
        {"metrics.listen", ":9100", ":9100"},
        {"metrics.listen", "[::1]:9100", "[::1]:9100"},
        {"metrics.listen", "", ""},
        {"bootstrap.servers", "b1:9092,b2:9092", "b1:9092,b2:9092"},
    };
    sw_conf_t *conf = sw_conf_new();
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        char errstr[512] = "";
        sw_conf_res_t res = sw_conf_set(conf, good[i].name, good[i].value, errstr, sizeof(errstr));
        SW_ASSERT(res == SW_CONF_OK, "%s=%s: %d %s", good[i].name, good[i].value, res, errstr);
        char *d = dump_of2(conf, true), line[256];
        snprintf(line, sizeof(line), "\n%s=%s\n", good[i].name, good[i].dumped);
        SW_ASSERT_CONTAINS(d, line);
        free(d);
    }
    /* NULL resets to the default. */
    SW_ASSERT_I64(sw_conf_set(conf, "window.samples", NULL, NULL, 0), SW_CONF_OK);
    int64_t v = 0;
    SW_ASSERT_I64(sw_conf_get_i64(conf, "window.samples", &v), SW_OK);
    SW_ASSERT_I64(v, 512);
    /* Setting twice keeps the last value. */
    SW_ASSERT_I64(sw_conf_set(conf, "group.id", "first", NULL, 0), SW_CONF_OK);
    SW_ASSERT_I64(sw_conf_set(conf, "group.id", "second", NULL, 0), SW_CONF_OK);
    SW_ASSERT_STREQ(sw_conf_get_str(conf, "group.id"), "second");
    sw_conf_destroy(conf);
}

static void test_getters_and_lists(void **state)
{
    (void)state;
    sw_conf_t *conf = sw_conf_new();
    int64_t i = 7;
    double d = 7;
    bool b = true;
    SW_ASSERT_I64(sw_conf_get_i64(conf, "no.such", &i), SW_ERR_NOT_FOUND);
    SW_ASSERT_I64(sw_conf_get_i64(conf, "spike.fraction", &i), SW_ERR_INVALID_ARG);
    SW_ASSERT_I64(i, 7);
    SW_ASSERT_I64(sw_conf_get_dbl(conf, "window.samples", &d), SW_ERR_INVALID_ARG);
    SW_ASSERT_I64(sw_conf_get_bool(conf, "window.samples", &b), SW_ERR_INVALID_ARG);
    SW_ASSERT_I64(sw_conf_get_bool(conf, "no.such", &b), SW_ERR_NOT_FOUND);
    SW_ASSERT(sw_conf_get_str(conf, "window.samples") == NULL, "int read as string");
    SW_ASSERT(sw_conf_get_str(conf, "no.such") == NULL, "unknown read as string");
    SW_ASSERT(sw_conf_get_str(conf, "kafka.client.id") == NULL, "unset pass-through");
    SW_ASSERT_STREQ(sw_conf_get_str(conf, "input.format"), "auto");
    SW_ASSERT_STREQ(sw_conf_get_str(conf, "bootstrap.servers"), "");
    SW_ASSERT_I64(sw_conf_get_list_cnt(conf, "input.topics"), 1);
    SW_ASSERT_STREQ(sw_conf_get_list_elem(conf, "input.topics", 0), "stormwatch.telemetry");
    SW_ASSERT_I64(sw_conf_get_list_cnt(conf, "group.id"), 0);
    SW_ASSERT(sw_conf_get_list_elem(conf, "group.id", 0) == NULL, "non-list element");

    SW_ASSERT_I64(
        sw_conf_set(conf, "input.topics", "gpu.mem, ^gpu\\.rank[0-9]+$ ,\tother", NULL, 0),
        SW_CONF_OK);
    SW_ASSERT_I64(sw_conf_get_list_cnt(conf, "input.topics"), 3);
    SW_ASSERT_STREQ(sw_conf_get_list_elem(conf, "input.topics", 0), "gpu.mem");
    SW_ASSERT_STREQ(sw_conf_get_list_elem(conf, "input.topics", 1), "^gpu\\.rank[0-9]+$");
    SW_ASSERT_STREQ(sw_conf_get_list_elem(conf, "input.topics", 2), "other");
    SW_ASSERT(sw_conf_get_list_elem(conf, "input.topics", 3) == NULL, "past the end");

    SW_ASSERT_I64(sw_conf_set(conf, "kafka.client.id", "sw-1", NULL, 0), SW_CONF_OK);
    SW_ASSERT_STREQ(sw_conf_get_str(conf, "kafka.client.id"), "sw-1");
    sw_conf_destroy(conf);
}

static void test_params(void **state)
{
    (void)state;
    sw_conf_t *conf = sw_conf_new();
    static const char *const kv[][2] = {
        {"spike.min.bytes", "1024"}, {"spike.fraction", "0.5"}, {"skew.note.multiplier", "9"},
        {"window.samples", "64"},    {"stale.ms", "0"},         {"max.jobs", "0"},
        {"max.ranks.per.job", "16"}, {"job.idle.ms", "1"},
    };
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
        char errstr[256] = "";
        SW_ASSERT(sw_conf_set(conf, kv[i][0], kv[i][1], errstr, sizeof(errstr)) == SW_CONF_OK,
                  "%s=%s: %s", kv[i][0], kv[i][1], errstr);
    }
    sw_params_t p = sw_conf_params(conf);
    SW_ASSERT_I64(p.spike_min_bytes, 1024);
    SW_ASSERT(p.spike_fraction == 0.5, "spike_fraction %.17g", p.spike_fraction);
    SW_ASSERT_I64(p.skew_note_multiplier, 9);
    SW_ASSERT_I64(p.window_samples, 64);
    SW_ASSERT_I64(p.stale_ms, 0);
    SW_ASSERT_I64(p.max_jobs, 0);
    SW_ASSERT_I64(p.max_ranks_per_job, 16);
    sw_conf_destroy(conf);
}

/* Every row's typed field (offsetof and sizeof into sw_settings_t) fits
 * its type, and no two rows fill the same bytes: sw_conf_settings() fills
 * the fields from the rows alone. */
static void test_table_fields(void **state)
{
    (void)state;
    SW_ASSERT(sw_conf_nprops > 0, "an empty table");
    for (size_t i = 0; i < sw_conf_nprops; i++) {
        const prop_t *p = &sw_conf_props[i];
        SW_ASSERT(p->off + p->size <= sizeof(sw_settings_t), "%s: field past the struct", p->name);
        bool fits = false;
        switch (p->type) {
        case PROP_INT:
            fits = p->size == sizeof(int64_t) ||
                   (p->size == sizeof(int32_t) && p->min >= INT32_MIN && p->max <= INT32_MAX);
            break;
        case PROP_DBL: fits = p->size == sizeof(double); break;
        case PROP_STR: fits = p->size == sizeof(const char *); break;
        case PROP_BOOL: fits = p->size == sizeof(bool); break;
        case PROP_ENUM:
            fits = p->size == sizeof(int) ||
                   (p->size == sizeof(bool) && !strcmp(p->allowed[0], "on") &&
                    !strcmp(p->allowed[1], "off") && !p->allowed[2]);
            break;
        case PROP_LIST: fits = p->size == sizeof(sw_conf_strs_t); break;
        }
        SW_ASSERT(fits, "%s: a field of %zu bytes does not fit its type", p->name, p->size);
        for (size_t j = 0; j < i; j++) {
            const prop_t *q = &sw_conf_props[j];
            SW_ASSERT(p->off + p->size <= q->off || q->off + q->size <= p->off,
                      "%s and %s fill the same field", p->name, q->name);
        }
    }
}

/* The typed settings against the table: a fresh conf's defaults land in
 * every field, each allowed value of an enum property lands as its enum,
 * and values set with -X (and the exactly_once commit interval rule) are
 * what the fields hold. */
static void test_settings(void **state)
{
    (void)state;
    char errstr[512] = "";
    sw_conf_t *conf = sw_conf_new();
    sw_settings_t s;
    sw_conf_settings(conf, &s);
    SW_ASSERT_STREQ(s.kafka.bootstrap_servers, "");
    SW_ASSERT_STREQ(s.kafka.group_id, "stormwatch");
    SW_ASSERT_I64(s.kafka.input_topics.n, 1);
    SW_ASSERT_STREQ(s.kafka.input_topics.v[0], "stormwatch.telemetry");
    SW_ASSERT_STREQ(s.kafka.output_topic, "stormwatch.alerts");
    SW_ASSERT_STREQ(s.kafka.dlq_topic, "stormwatch.dlq");
    SW_ASSERT_I64(s.format.input, SW_IN_FORMAT_AUTO);
    SW_ASSERT_I64(s.format.output, SW_OUT_FORMAT_JSON);
    SW_ASSERT_I64(s.format.schema_id_telemetry, 1);
    SW_ASSERT_I64(s.format.schema_id_alert, 2);
    SW_ASSERT_I64(s.format.schema_ids_telemetry.n, 0);
    SW_ASSERT_I64(s.registry.urls.n, 0);
    SW_ASSERT_STREQ(s.registry.user_info, "");
    SW_ASSERT_STREQ(s.registry.ca_location, "");
    SW_ASSERT_STREQ(s.registry.cert_location, "");
    SW_ASSERT_STREQ(s.registry.key_location, "");
    SW_ASSERT_I64(s.registry.timeout_ms, 5000);
    SW_ASSERT(s.registry.auto_register, "auto.register.schemas defaults to true");
    SW_ASSERT_STREQ(s.pager.routing_key, "");
    SW_ASSERT_STREQ(s.pager.generator_url, "");
    SW_ASSERT_STREQ(s.pager.labels, "");
    SW_ASSERT_I64(s.pager.ends_after_ms, 900000);
    sw_params_t d = sw_params_default();
    SW_ASSERT(memcmp(&s.engine.params, &d, sizeof(d)) == 0, "engine params are the defaults");
    SW_ASSERT_I64(s.engine.job_idle_ms, 300000);
    SW_ASSERT_I64(s.engine.max_memory_bytes, 644245094);
    SW_ASSERT_I64(s.delivery.guarantee, SW_GUARANTEE_AT_LEAST_ONCE);
    SW_ASSERT_I64(s.delivery.commit_interval_ms, 1000);
    SW_ASSERT_I64(s.delivery.shutdown_timeout_ms, 30000);
    SW_ASSERT_I64(s.delivery.worker_threads, 0);
    SW_ASSERT(s.delivery.topics_create && s.delivery.state_restore && s.delivery.repartition &&
                  s.delivery.repartition_mode == SW_REPARTITION_AUTO,
              "topics.create and state.restore default to on, repartition to auto");
    SW_ASSERT_STREQ(s.delivery.state_topic, "stormwatch.state");
    SW_ASSERT_I64(s.delivery.snapshot_interval_ms, 10000);
    SW_ASSERT_STREQ(s.delivery.repartition_topic, "");
    SW_ASSERT_I64(s.delivery.repartition_partitioner, SW_REP_PARTITIONER_AUTO);
    SW_ASSERT_I64(s.ops.log_level, SW_LOG_INFO);
    SW_ASSERT_STREQ(s.ops.metrics_listen, "");
    SW_ASSERT_STREQ(s.ops.health_listen, "");
    SW_ASSERT_I64(s.ops.ready_max_lag, 10000);
    SW_ASSERT_I64(s.ops.mock_brokers, 3);
    SW_ASSERT_I64(s.ops.mock_partitions, 8);
    SW_ASSERT_STREQ(s.notify.group_id, "stormwatch-notify");
    SW_ASSERT_STREQ(s.notify.dlq_topic, "stormwatch.notify.dlq");
    SW_ASSERT_I64(s.notify.retry_backoff_ms, 500);
    SW_ASSERT_I64(s.notify.retry_backoff_max_ms, 60000);
    SW_ASSERT_I64(s.notify.commit_interval_ms, 1000);
    SW_ASSERT_I64(s.notify.alertmanager_resend_ms, 60000);
    SW_ASSERT_STREQ(s.notify.webhook_hmac_secret, "");
    SW_ASSERT_STREQ(s.notify.alertmanager.url, "");
    SW_ASSERT_STREQ(s.notify.pagerduty.url, "https://events.pagerduty.com/v2/enqueue");
    SW_ASSERT_STREQ(s.notify.webhook.url, "");
    const sw_settings_sink_t *sinks[] = {&s.notify.alertmanager, &s.notify.pagerduty,
                                         &s.notify.webhook};
    const double rates[] = {0, 2, 0};
    for (size_t k = 0; k < 3; k++) {
        SW_ASSERT_I64(sinks[k]->timeout_ms, 10000);
        SW_ASSERT_STREQ(sinks[k]->bearer_token, "");
        SW_ASSERT_STREQ(sinks[k]->basic_auth, "");
        SW_ASSERT_STREQ(sinks[k]->ca_location, "");
        SW_ASSERT(sinks[k]->rate_limit == rates[k], "sink %zu: rate %g", k, sinks[k]->rate_limit);
    }

    /* Every allowed value of the enum properties, set as with -X. */
    static const struct {
        const char *pair;
        int want;
        int field; /* 0 input, 1 output, 2 guarantee, 3 log level */
    } enums[] = {
        {"input.format=auto", SW_IN_FORMAT_AUTO, 0},
        {"input.format=json", SW_IN_FORMAT_JSON, 0},
        {"input.format=avro", SW_IN_FORMAT_AVRO, 0},
        {"output.format=json", SW_OUT_FORMAT_JSON, 1},
        {"output.format=avro", SW_OUT_FORMAT_AVRO, 1},
        {"output.format=pagerduty", SW_OUT_FORMAT_PAGERDUTY, 1},
        {"output.format=alertmanager", SW_OUT_FORMAT_ALERTMANAGER, 1},
        {"processing.guarantee=at_least_once", SW_GUARANTEE_AT_LEAST_ONCE, 2},
        {"processing.guarantee=exactly_once", SW_GUARANTEE_EXACTLY_ONCE, 2},
        {"log.level=error", SW_LOG_ERROR, 3},
        {"log.level=warn", SW_LOG_WARN, 3},
        {"log.level=info", SW_LOG_INFO, 3},
        {"log.level=debug", SW_LOG_DEBUG, 3},
    };
    for (size_t i = 0; i < sizeof(enums) / sizeof(enums[0]); i++) {
        SW_ASSERT(sw_conf_set_pair(conf, enums[i].pair, errstr, sizeof(errstr)) == SW_CONF_OK,
                  "%s: %s", enums[i].pair, errstr);
        sw_conf_settings(conf, &s);
        int got = enums[i].field == 0   ? (int)s.format.input
                  : enums[i].field == 1 ? (int)s.format.output
                  : enums[i].field == 2 ? (int)s.delivery.guarantee
                                        : (int)s.ops.log_level;
        SW_ASSERT(got == enums[i].want, "%s: got %d, want %d", enums[i].pair, got, enums[i].want);
    }
    /* exactly_once (set last above) with commit.interval.ms unset: 100 for
     * the daemon, the property's value for notify. */
    SW_ASSERT_I64(s.delivery.commit_interval_ms, 100);
    SW_ASSERT_I64(s.notify.commit_interval_ms, 1000);
    static const char *const pairs[] = {
        "commit.interval.ms=250",
        "topics.create=off",
        "state.restore=off",
        "repartition=off",
        "repartition.partitioner=fnv1a",
        "input.topics=a, ^b.*",
        "worker.threads=4",
        "window.samples=64",
        "schema.registry.url=http://r1:8081,https://r2",
        "auto.register.schemas=false",
        "webhook.rate.limit=2.5",
        "alertmanager.url=http://am:9093",
        "mock.partitions=3",
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
        SW_ASSERT(sw_conf_set_pair(conf, pairs[i], errstr, sizeof(errstr)) == SW_CONF_OK, "%s: %s",
                  pairs[i], errstr);
    sw_conf_settings(conf, &s);
    SW_ASSERT_I64(s.delivery.commit_interval_ms, 250);
    SW_ASSERT_I64(s.notify.commit_interval_ms, 250);
    SW_ASSERT(!s.delivery.topics_create && !s.delivery.state_restore && !s.delivery.repartition,
              "on/off properties set to off");
    SW_ASSERT_I64(s.delivery.repartition_mode, SW_REPARTITION_OFF);
    SW_ASSERT_I64(s.delivery.repartition_partitioner, SW_REP_PARTITIONER_FNV1A);
    SW_ASSERT_I64(s.kafka.input_topics.n, 2);
    SW_ASSERT_STREQ(s.kafka.input_topics.v[1], "^b.*");
    SW_ASSERT_I64(s.delivery.worker_threads, 4);
    SW_ASSERT_I64(s.engine.params.window_samples, 64);
    SW_ASSERT_I64(s.registry.urls.n, 2);
    SW_ASSERT_STREQ(s.registry.urls.v[1], "https://r2");
    SW_ASSERT(!s.registry.auto_register, "auto.register.schemas=false");
    SW_ASSERT(s.notify.webhook.rate_limit == 2.5, "webhook.rate.limit");
    SW_ASSERT_STREQ(s.notify.alertmanager.url, "http://am:9093");
    SW_ASSERT_I64(s.ops.mock_partitions, 3);

    /* Ranges for command-line options come from the table. */
    int64_t lo = -1, hi = -1;
    SW_ASSERT(sw_conf_range_i64("window.samples", &lo, &hi), "window.samples range");
    SW_ASSERT(lo == 1 && hi == 1000000, "window.samples: %lld..%lld", (long long)lo, (long long)hi);
    double dlo = -1, dhi = -1;
    SW_ASSERT(sw_conf_range_dbl("spike.fraction", &dlo, &dhi), "spike.fraction range");
    SW_ASSERT(dlo == 0.0 && dhi == 1.0, "spike.fraction: %g..%g", dlo, dhi);
    SW_ASSERT(!sw_conf_range_i64("spike.fraction", &lo, &hi), "a double is no int range");
    SW_ASSERT(!sw_conf_range_dbl("window.samples", &dlo, &dhi), "an int is no double range");
    SW_ASSERT(!sw_conf_range_i64("no.such", &lo, &hi), "unknown name");
    sw_conf_destroy(conf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),     cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_good_values),  cmocka_unit_test(test_getters_and_lists),
        cmocka_unit_test(test_params),       cmocka_unit_test(test_settings),
        cmocka_unit_test(test_table_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
