/*
 * Tests of the configuration module's sources and outputs: file and
 * environment loading, precedence, pass-through order, secret redaction and
 * the generated -X list / Markdown output. No Kafka, no network.
 */
#include "conf_dump.h"
#include "sw_kafka.h"

/* Write @p text to a scratch file; @p path receives its name. */
static void write_file(char *path, size_t path_size, const char *name, const char *text)
{
    snprintf(path, path_size, "%s/conf_%ld_%s", sw_test_tmp(), (long)getpid(), name);
    FILE *fp = fopen(path, "w");
    SW_ASSERT(fp != NULL, "cannot write %s", path);
    fputs(text, fp);
    fclose(fp);
}

static void test_file(void **state)
{
    (void)state;
    char path[1024], errstr[512], want[1200];
    sw_conf_t *conf = sw_conf_new();

    /* BOM, comments, blank lines, CRLF, blanks around '=', '=' in a value,
     * '#' inside a value, duplicate key (last wins). */
    write_file(path, sizeof(path), "good.conf",
               "\xef\xbb\xbf# stormwatch test\n"
               "\n"
               "   # indented comment\n"
               "window.samples = 100\r\n"
               "\t\n"
               "input.topics=a, ^b.*\n"
               "kafka.sasl.username = user=x#1\n"
               "kafka.consumer.sasl.password=p#ss w0rd\n"
               "window.samples=200\n");
    errstr[0] = '\0';
    sw_err_t err = sw_conf_load_file(conf, path, errstr, sizeof(errstr));
    SW_ASSERT(err == SW_OK, "load %s: %d %s", path, err, errstr);
    int64_t v = 0;
    sw_conf_get_i64(conf, "window.samples", &v);
    SW_ASSERT_I64(v, 200);
    SW_ASSERT_I64(sw_conf_get_list_cnt(conf, "input.topics"), 2);
    SW_ASSERT_STREQ(sw_conf_get_list_elem(conf, "input.topics", 1), "^b.*");
    SW_ASSERT_STREQ(sw_conf_get_str(conf, "kafka.sasl.username"), "user=x#1");
    SW_ASSERT_STREQ(sw_conf_get_str(conf, "kafka.consumer.sasl.password"), "p#ss w0rd");
    unlink(path);

    /* Malformed line: file:line and the line, quoted. */
    write_file(path, sizeof(path), "bad.conf",
               "# header\nstale.ms=5\nwindow.samples 100\nmax.jobs=1\n");
    err = sw_conf_load_file(conf, path, errstr, sizeof(errstr));
    SW_ASSERT_I64(err, SW_ERR_PARSE);
    snprintf(want, sizeof(want), "%s:3: expected property=value, got \"window.samples 100\"", path);
    SW_ASSERT_STREQ(errstr, want);
    /* Lines before the error stay applied, lines after do not. */
    sw_conf_get_i64(conf, "stale.ms", &v);
    SW_ASSERT_I64(v, 5);
    sw_conf_get_i64(conf, "max.jobs", &v);
    SW_ASSERT_I64(v, 10000);
    unlink(path);

    /* Empty property name. */
    write_file(path, sizeof(path), "noname.conf", " = 5\n");
    SW_ASSERT_I64(sw_conf_load_file(conf, path, errstr, sizeof(errstr)), SW_ERR_PARSE);
    snprintf(want, sizeof(want), "%s:1: expected property=value, got an empty property name", path);
    SW_ASSERT_STREQ(errstr, want);
    unlink(path);

    /* Unknown name with a suggestion. */
    write_file(path, sizeof(path), "unknown.conf", "\n# x\nwindw.samples=100\n");
    SW_ASSERT_I64(sw_conf_load_file(conf, path, errstr, sizeof(errstr)), SW_ERR_NOT_FOUND);
    snprintf(want, sizeof(want),
             "%s:3: configuration property \"windw.samples\" is unknown; did you mean "
             "\"window.samples\"?" HINT,
             path);
    SW_ASSERT_STREQ(errstr, want);
    unlink(path);

    /* Bad value. */
    write_file(path, sizeof(path), "value.conf", "input.format = xml\n");
    SW_ASSERT_I64(sw_conf_load_file(conf, path, errstr, sizeof(errstr)), SW_ERR_INVALID_ARG);
    snprintf(want, sizeof(want),
             "%s:1: configuration property \"input.format\": value \"xml\" is not one of auto, "
             "json, avro",
             path);
    SW_ASSERT_STREQ(errstr, want);
    unlink(path);

    /* A malformed secret line is not echoed. */
    write_file(path, sizeof(path), "secret.conf", "kafka.sasl.password hunter2\n");
    SW_ASSERT_I64(sw_conf_load_file(conf, path, errstr, sizeof(errstr)), SW_ERR_PARSE);
    snprintf(want, sizeof(want),
             "%s:1: expected property=value, got \"kafka.sasl.password [redacted]\"", path);
    SW_ASSERT_STREQ(errstr, want);
    unlink(path);

    /* Missing file: the message names the path. */
    snprintf(path, sizeof(path), "%s/conf_%ld_missing.conf", sw_test_tmp(), (long)getpid());
    SW_ASSERT_I64(sw_conf_load_file(conf, path, errstr, sizeof(errstr)), SW_ERR_IO);
    snprintf(want, sizeof(want), "cannot read configuration file \"%s\": No such file or directory",
             path);
    SW_ASSERT_STREQ(errstr, want);
    sw_conf_destroy(conf);
}

static void test_env(void **state)
{
    (void)state;
    char errstr[512] = "";
    sw_conf_t *conf = sw_conf_new();
    char *env[] = {
        "PATH=/usr/bin",
        "STORMWATCH_KAFKA_CONSUMER_FETCH_MAX_BYTES=1048576",
        "STORMWATCH_WINDOW_SAMPLES=100",
        "STORMWATCHX=1",
        "STORMWATCH_KAFKA_SASL_PASSWORD=hunter2",
        "STORMWATCH_KAFKA_PRODUCER_LINGER_MS=5",
        "STORMWATCH_INPUT_TOPICS=a,^b",
        "STORMWATCH_AVRO_SCHEMA_ID_ALERT=42",
        "STORMWATCH_NO_EQUALS",
        NULL,
    };
    sw_err_t err = sw_conf_load_env(conf, env, errstr, sizeof(errstr));
    SW_ASSERT(err == SW_OK, "%d %s", err, errstr);
    int64_t v = 0;
    sw_conf_get_i64(conf, "window.samples", &v);
    SW_ASSERT_I64(v, 100);
    sw_conf_get_i64(conf, "avro.schema.id.alert", &v);
    SW_ASSERT_I64(v, 42);
    /* What the user set, and what is a default (exactly_once's commit
     * interval of 100 ms applies only to an unset commit.interval.ms). */
    SW_ASSERT(sw_conf_is_set(conf, "window.samples"), "window.samples set by the environment");
    SW_ASSERT(!sw_conf_is_set(conf, "commit.interval.ms"),
              "commit.interval.ms left at its default");
    SW_ASSERT(!sw_conf_is_set(conf, "no.such.property"), "unknown names are not set");
    /* Its pass-through twin, by librdkafka's name, for one kind of handle:
     * kafka.<p> reaches every kind, kafka.<kind>.<p> its own. */
    SW_ASSERT(sw_conf_passthrough_is_set(conf, SW_CONF_SCOPE_CONSUMER, "fetch.max.bytes"),
              "kafka.consumer.fetch.max.bytes reaches consumers");
    SW_ASSERT(!sw_conf_passthrough_is_set(conf, SW_CONF_SCOPE_PRODUCER, "fetch.max.bytes"),
              "kafka.consumer.fetch.max.bytes does not reach producers");
    SW_ASSERT(sw_conf_passthrough_is_set(conf, SW_CONF_SCOPE_PRODUCER, "linger.ms"),
              "kafka.producer.linger.ms reaches producers");
    SW_ASSERT(!sw_conf_passthrough_is_set(conf, SW_CONF_SCOPE_BOTH, "linger.ms"),
              "kafka.producer.linger.ms does not reach an admin client");
    for (int h = SW_CONF_SCOPE_BOTH; h <= SW_CONF_SCOPE_PRODUCER; h++)
        SW_ASSERT(sw_conf_passthrough_is_set(conf, (sw_conf_scope_t)h, "sasl.password"),
                  "kafka.sasl.password reaches handle kind %d", h);
    SW_ASSERT(!sw_conf_passthrough_is_set(conf, SW_CONF_SCOPE_PRODUCER, "partitioner"),
              "an unset pass-through property is not set");
    SW_ASSERT(!sw_conf_passthrough_is_set(conf, SW_CONF_SCOPE_PRODUCER, "kafka.producer.linger.ms"),
              "by librdkafka's name only");
    SW_ASSERT_I64(sw_conf_get_list_cnt(conf, "input.topics"), 2);
    SW_ASSERT_STREQ(sw_conf_get_list_elem(conf, "input.topics", 1), "^b");

    /* Pass-through: unscoped first, then scoped, each in environ order. */
    static const struct {
        sw_conf_scope_t scope;
        const char *name, *rk_name, *value;
    } want[] = {
        {SW_CONF_SCOPE_BOTH, "kafka.sasl.password", "sasl.password", "hunter2"},
        {SW_CONF_SCOPE_CONSUMER, "kafka.consumer.fetch.max.bytes", "fetch.max.bytes", "1048576"},
        {SW_CONF_SCOPE_PRODUCER, "kafka.producer.linger.ms", "linger.ms", "5"},
    };
    size_t it = 0, n = 0;
    sw_conf_kafka_t kp;
    while (sw_conf_kafka_next(conf, &it, &kp)) {
        SW_ASSERT(n < 3, "extra pass-through property %s", kp.name);
        SW_ASSERT_I64(kp.scope, want[n].scope);
        SW_ASSERT_STREQ(kp.name, want[n].name);
        SW_ASSERT_STREQ(kp.rk_name, want[n].rk_name);
        SW_ASSERT_STREQ(kp.value, want[n].value);
        SW_ASSERT(kp.secret == (n == 0), "%s: secret %d", kp.name, kp.secret);
        n++;
    }
    SW_ASSERT_I64(n, 3);

    /* Unknown STORMWATCH_ variables name the variable. */
    static const struct {
        const char *var;
        sw_err_t err;
        const char *msg;
    } bad_env[] = {
        {"STORMWATCH_WINDW_SAMPLES=1", SW_ERR_NOT_FOUND,
         "environment variable \"STORMWATCH_WINDW_SAMPLES\" does not name a configuration property; "
         "did you mean STORMWATCH_WINDOW_SAMPLES?" HINT},
        {"STORMWATCH_BOGUS=1", SW_ERR_NOT_FOUND,
         "environment variable \"STORMWATCH_BOGUS\" does not name a configuration property" HINT},
        {"STORMWATCH_window_samples=1", SW_ERR_NOT_FOUND,
         "environment variable \"STORMWATCH_window_samples\" does not name a configuration property; "
         "did you mean STORMWATCH_WINDOW_SAMPLES?" HINT},
        {"STORMWATCH_WINDOW_SAMPLES=10k", SW_ERR_INVALID_ARG,
         "environment variable \"STORMWATCH_WINDOW_SAMPLES\": configuration property "
         "\"window.samples\": value \"10k\" is not an integer (expected 1..1000000)"},
        {"STORMWATCH_KAFKA_=1", SW_ERR_NOT_FOUND,
         "environment variable \"STORMWATCH_KAFKA_\": configuration property \"kafka.\" lacks the "
         "librdkafka property name (expected kafka.<property>, kafka.consumer.<property> or "
         "kafka.producer.<property>)"},
    };
    for (size_t i = 0; i < sizeof(bad_env) / sizeof(bad_env[0]); i++) {
        char *one[] = {(char *)bad_env[i].var, NULL};
        err = sw_conf_load_env(conf, one, errstr, sizeof(errstr));
        SW_ASSERT_I64(err, bad_env[i].err);
        SW_ASSERT_STREQ(errstr, bad_env[i].msg);
    }
    SW_ASSERT_I64(sw_conf_load_env(conf, NULL, errstr, sizeof(errstr)), SW_OK);

    /* Kubernetes service links of Services named stormwatch and
     * stormwatch-metrics (what a pod in the namespace gets unless
     * enableServiceLinks is false) are passed over, and dump says so. */
    char *k8s[] = {
        "STORMWATCH_METRICS_SERVICE_HOST=10.96.12.7",
        "STORMWATCH_METRICS_SERVICE_PORT=9464",
        "STORMWATCH_METRICS_SERVICE_PORT_METRICS=9464",
        "STORMWATCH_METRICS_PORT=tcp://10.96.12.7:9464",
        "STORMWATCH_METRICS_PORT_9464_TCP=tcp://10.96.12.7:9464",
        "STORMWATCH_METRICS_PORT_9464_TCP_PROTO=tcp",
        "STORMWATCH_METRICS_PORT_9464_TCP_PORT=9464",
        "STORMWATCH_METRICS_PORT_9464_TCP_ADDR=10.96.12.7",
        "STORMWATCH_SERVICE_HOST=fd00::12",
        "STORMWATCH_PORT=tcp://[fd00::12]:8080",
        NULL,
    };
    err = sw_conf_load_env(conf, k8s, errstr, sizeof(errstr));
    SW_ASSERT(err == SW_OK, "service links refused: %s", errstr);
    size_t ni = 0;
    while (sw_conf_ignored_env(conf, ni)) ni++;
    SW_ASSERT_I64(ni, 10);
    SW_ASSERT_STREQ(sw_conf_ignored_env(conf, 3), "STORMWATCH_METRICS_PORT");
    sw_buf_t dump;
    sw_buf_init(&dump);
    sw_conf_dump(conf, &dump);
    SW_ASSERT_CONTAINS(
        sw_buf_cstr(&dump),
        "# ignored: STORMWATCH_METRICS_PORT_9464_TCP_ADDR (a Kubernetes service link "
        "variable)");
    sw_buf_clear(&dump);
    /* The same names with values Kubernetes never writes stay errors. */
    static const char *const not_links[] = {
        "STORMWATCH_METRICS_PORT=9464", "STORMWATCH_METRICS_SERVICE_HOST=metrics.local",
        "STORMWATCH_METRICS_PORT_9464_TCP_PROTO=http", "STORMWATCH_WINDOW_SAMPLE=tcp://1.2.3.4:5"};
    for (size_t i = 0; i < sizeof(not_links) / sizeof(not_links[0]); i++) {
        char *one[] = {(char *)not_links[i], NULL};
        SW_ASSERT(sw_conf_load_env(conf, one, errstr, sizeof(errstr)) == SW_ERR_NOT_FOUND,
                  "%s accepted", not_links[i]);
    }
    sw_conf_destroy(conf);
}

/* defaults < file < environment < -X; pass-through order follows the last
 * setting across scopes. */
static void test_precedence(void **state)
{
    (void)state;
    char path[1024], errstr[512] = "";
    sw_conf_t *conf = sw_conf_new();
    write_file(path, sizeof(path), "prec.conf",
               "window.samples=100\nstale.ms=1\nmax.jobs=7\n"
               "kafka.consumer.client.id=file-c\nkafka.client.id=file\n");
    SW_ASSERT(sw_conf_load_file(conf, path, errstr, sizeof(errstr)) == SW_OK, "%s", errstr);
    unlink(path);
    char *env[] = {"STORMWATCH_WINDOW_SAMPLES=200", "STORMWATCH_STALE_MS=2", NULL};
    SW_ASSERT(sw_conf_load_env(conf, env, errstr, sizeof(errstr)) == SW_OK, "%s", errstr);
    SW_ASSERT(sw_conf_set_pair(conf, "window.samples=300", errstr, sizeof(errstr)) == SW_CONF_OK,
              "%s", errstr);
    SW_ASSERT(sw_conf_set_pair(conf, "kafka.consumer.client.id=cli-c", errstr, sizeof(errstr)) ==
                  SW_CONF_OK,
              "%s", errstr);

    sw_params_t p = sw_conf_params(conf);
    SW_ASSERT_I64(p.window_samples, 300);                             /* -X */
    SW_ASSERT_I64(p.stale_ms, 2);                                     /* environment */
    SW_ASSERT_I64(p.max_jobs, 7);                                     /* file */
    SW_ASSERT_I64(p.max_ranks_per_job, SW_DEFAULT_MAX_RANKS_PER_JOB); /* default */

    /* kafka.consumer.client.id was set again last: it moved to the end. */
    size_t it = 0;
    sw_conf_kafka_t kp;
    SW_ASSERT(sw_conf_kafka_next(conf, &it, &kp), "first pass-through");
    SW_ASSERT_STREQ(kp.name, "kafka.client.id");
    SW_ASSERT_STREQ(kp.value, "file");
    SW_ASSERT(sw_conf_kafka_next(conf, &it, &kp), "second pass-through");
    SW_ASSERT_STREQ(kp.name, "kafka.consumer.client.id");
    SW_ASSERT_STREQ(kp.value, "cli-c");
    SW_ASSERT(!sw_conf_kafka_next(conf, &it, &kp), "only two pass-through properties");

    /* NULL removes a pass-through property. */
    SW_ASSERT_I64(sw_conf_set(conf, "kafka.client.id", NULL, NULL, 0), SW_CONF_OK);
    it = 0;
    SW_ASSERT(sw_conf_kafka_next(conf, &it, &kp), "one left");
    SW_ASSERT_STREQ(kp.name, "kafka.consumer.client.id");
    SW_ASSERT(!sw_conf_kafka_next(conf, &it, &kp), "only one left");

    /* -X pairs: malformed forms. */
    SW_ASSERT_I64(sw_conf_set_pair(conf, "window.samples", errstr, sizeof(errstr)),
                  SW_CONF_INVALID);
    SW_ASSERT_STREQ(errstr, "expected property=value, got \"window.samples\"");
    SW_ASSERT_I64(sw_conf_set_pair(conf, "=5", errstr, sizeof(errstr)), SW_CONF_INVALID);
    SW_ASSERT_STREQ(errstr, "expected property=value, got an empty property name");
    SW_ASSERT_I64(sw_conf_set_pair(conf, "windw.samples=5", errstr, sizeof(errstr)),
                  SW_CONF_UNKNOWN);
    SW_ASSERT_STREQ(errstr,
                    "configuration property \"windw.samples\" is unknown; did you mean "
                    "\"window.samples\"?" HINT);
    sw_conf_destroy(conf);
}

static void test_secrets(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        bool secret;
    } names[] = {
        {"kafka.sasl.password", true},
        {"kafka.consumer.sasl.password", true},
        {"kafka.producer.sasl.oauthbearer.client.secret", true},
        {"kafka.sasl.oauthbearer.config", true},
        {"kafka.ssl.key.password", true},
        {"kafka.ssl.key.pem", true},
        {"kafka.ssl.keystore.password", true},
        {"kafka.ssl.truststore.password", true},
        {"kafka.some.new.secret.thing", true},
        {"kafka.SASL.PASSWORD", true},
        {"kafka.ssl.certificate.pem", false},
        {"kafka.ssl.ca.pem", false},
        {"kafka.sasl.username", false},
        /* Names that look like a secret are redacted, a path too: a
         * misspelled secret must never be printed. */
        {"kafka.ssl.key.location", true},
        {"kafka.sasl.pasword", true},
        {"kafka.ssl.key.passwrd", true},
        {"kafka.sasl.oauthbearer.token.endpoint.url", true},
        {"kafka.sasl.kerberos.keytab", true},
        {"kafka.client.id", false},
        {"sasl.password", true}, /* unknown, but never echo it */
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        SW_ASSERT(sw_conf_is_secret(names[i].name) == names[i].secret, "%s: want %d", names[i].name,
                  names[i].secret);
    /* The table's secrets are the properties whose dump is redacted (the
     * routing key, notify's tokens, passwords and HMAC secret, the
     * registry's basic auth, and the key file's path by its name); the check
     * runs on all. */
    for (size_t i = 0; i < n_defaults; i++)
        SW_ASSERT(sw_conf_is_secret(defaults[i].name) ==
                      (strcmp(defaults[i].def, "[redacted, unset]") == 0),
                  "%s: secret is %d", defaults[i].name, sw_conf_is_secret(defaults[i].name));

    sw_conf_t *conf = sw_conf_new();
    static const char *const kv[][2] = {
        {"kafka.sasl.password", "hunter2"},
        {"kafka.consumer.ssl.key.password", "keypass9"},
        {"kafka.producer.sasl.oauthbearer.client.secret", "oauth-s3cr3t"},
        {"kafka.ssl.key.pem", "-----BEGIN PRIVATE KEY-----"},
        {"kafka.ssl.certificate.pem", "-----BEGIN CERTIFICATE-----"},
        {"kafka.sasl.username", "alice"},
    };
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
        SW_ASSERT_I64(sw_conf_set(conf, kv[i][0], kv[i][1], NULL, 0), SW_CONF_OK);
    char *d = dump_of2(conf, true);
    SW_ASSERT_CONTAINS(d, "\nkafka.sasl.password=[redacted, set]\n");
    SW_ASSERT_CONTAINS(d, "\nkafka.consumer.ssl.key.password=[redacted, set]\n");
    SW_ASSERT_CONTAINS(d, "\nkafka.producer.sasl.oauthbearer.client.secret=[redacted, set]\n");
    SW_ASSERT_CONTAINS(d, "\nkafka.ssl.key.pem=[redacted, set]\n");
    SW_ASSERT_CONTAINS(d, "\nkafka.ssl.certificate.pem=-----BEGIN CERTIFICATE-----\n");
    SW_ASSERT_CONTAINS(d, "\nkafka.sasl.username=alice\n");
    SW_ASSERT_LACKS(d, "hunter2");
    SW_ASSERT_LACKS(d, "keypass9");
    SW_ASSERT_LACKS(d, "s3cr3t");
    SW_ASSERT_LACKS(d, "PRIVATE");
    free(d);

    /* Errors about a secret value never quote it. */
    char errstr[512] = "";
    bool b;
    SW_ASSERT_I64(sw_conf_parse_bool("kafka.sasl.password", "hunter2", &b, errstr, sizeof(errstr)),
                  SW_CONF_INVALID);
    SW_ASSERT_STREQ(errstr,
                    "configuration property \"kafka.sasl.password\": value [redacted] is not "
                    "a boolean (expected true, false, yes, no, 1 or 0)");
    SW_ASSERT_I64(sw_conf_set_pair(conf, "kafka.sasl.password:hunter2", errstr, sizeof(errstr)),
                  SW_CONF_INVALID);
    SW_ASSERT_LACKS(errstr, "hunter2");
    SW_ASSERT_STREQ(errstr, "expected property=value, got \"kafka.sasl.password [redacted]\"");
    SW_ASSERT_I64(sw_conf_set(conf, "kafka.sasl.passwrd.x", "hunter2", errstr, sizeof(errstr)),
                  SW_CONF_OK);
    SW_ASSERT_I64(sw_conf_set(conf, "sasl.password", "hunter2", errstr, sizeof(errstr)),
                  SW_CONF_UNKNOWN);
    SW_ASSERT_LACKS(errstr, "hunter2");
    char *env[] = {"STORMWATCH_SASL_PASSWORD=hunter2", NULL};
    SW_ASSERT_I64(sw_conf_load_env(conf, env, errstr, sizeof(errstr)), SW_ERR_NOT_FOUND);
    SW_ASSERT_LACKS(errstr, "hunter2");
    SW_ASSERT_CONTAINS(errstr, "STORMWATCH_SASL_PASSWORD");
    /* Every spelling of NAME VALUE hides the value (issue 28). */
    static const char *const spellings[] = {
        "kafka.sasl.password hunter2", "kafka.sasl.password:hunter2",
        " kafka.sasl.password\thunter2", "kafka.sasl.password hunter2=x",
        "x kafka.consumer.sasl.password hunter2"};
    for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
        SW_ASSERT_I64(sw_conf_set_pair(conf, spellings[i], errstr, sizeof(errstr)),
                      SW_CONF_INVALID);
        SW_ASSERT_LACKS(errstr, "hunter2");
        SW_ASSERT_CONTAINS(errstr, "[redacted]");
    }
    /* URL credentials: dump and errors. */
    SW_ASSERT_I64(sw_conf_set(conf, "schema.registry.url", "http://alice:hunter2@127.0.0.1:8081",
                              errstr, sizeof(errstr)),
                  SW_CONF_OK);
    d = dump_of2(conf, true);
    SW_ASSERT_CONTAINS(d, "\nschema.registry.url=http://[redacted]@127.0.0.1:8081\n");
    SW_ASSERT_LACKS(d, "hunter2");
    free(d);
    SW_ASSERT_I64(
        sw_conf_set(conf, "schema.registry.url", "ftp://alice:hunter2@h", errstr, sizeof(errstr)),
        SW_CONF_INVALID);
    SW_ASSERT_LACKS(errstr, "hunter2");
    sw_conf_destroy(conf);
    static const char *const urls[][2] = {
        {"http://u:p@h:1/x", "http://[redacted]@h:1/x"},
        /* A raw '/' in a password ends no authority: redacted to the last '@'. */
        {"a https://u@h, b http://v:w/x@k/p", "a https://[redacted]@h, b http://[redacted]@k/p"},
        {"http://h/a", "http://h/a"},
        {"no url: a@b", "no url: a@b"},
        {"x=http://u:p@h,http://u2:p2@h2", "x=http://[redacted]@h,http://[redacted]@h2"},
    };
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        char *r = sw_redact_dup(urls[i][0]);
        SW_ASSERT_STREQ(r, urls[i][1]);
        SW_ASSERT_I64(sw_redact_needed(urls[i][0]), strcmp(urls[i][0], urls[i][1]) != 0);
        free(r);
    }
}

/* The pass-through properties reach the Kafka handles of their scope
 * (sw_kafka_conf through sw_conf_scope_reaches): kafka.<p> every handle,
 * kafka.consumer.<p> and kafka.producer.<p> their own kind only. */
static void test_passthrough_handles(void **state)
{
    (void)state;
    char err[512] = "";
    sw_conf_t *conf = sw_conf_new();
    SW_ASSERT_I64(sw_conf_set(conf, "kafka.producer.linger.ms", "7", err, sizeof(err)), SW_CONF_OK);
    SW_ASSERT_I64(sw_conf_set(conf, "kafka.consumer.fetch.max.bytes", "1048577", err, sizeof(err)),
                  SW_CONF_OK);
    SW_ASSERT_I64(sw_conf_set(conf, "kafka.client.id", "sw-test", err, sizeof(err)), SW_CONF_OK);
    static const struct {
        sw_kafka_role_t role;
        const char *linger, *fetch; /* NULL: librdkafka's default */
    } want[] = {{SW_KAFKA_CONSUMER, NULL, "1048577"},
                {SW_KAFKA_PRODUCER, "7", NULL},
                {SW_KAFKA_ADMIN, NULL, NULL}};
    rd_kafka_conf_t *dflt = rd_kafka_conf_new();
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        sw_kafka_ctx_t ctx;
        memset(&ctx, 0, sizeof(ctx));
        rd_kafka_conf_t *kc = sw_kafka_conf(conf, want[i].role, NULL, NULL, &ctx, err, sizeof(err));
        SW_ASSERT(kc != NULL, "role %d: %s", (int)want[i].role, err);
        const char *names[3] = {"linger.ms", "fetch.max.bytes", "client.id"};
        const char *vals[3] = {want[i].linger, want[i].fetch, "sw-test"};
        for (int k = 0; k < 3; k++) {
            char got[64], def[64];
            size_t gl = sizeof(got), dl = sizeof(def);
            SW_ASSERT(rd_kafka_conf_get(kc, names[k], got, &gl) == RD_KAFKA_CONF_OK, "%s",
                      names[k]);
            SW_ASSERT(rd_kafka_conf_get(dflt, names[k], def, &dl) == RD_KAFKA_CONF_OK, "%s",
                      names[k]);
            SW_ASSERT(vals[k] ? !strcmp(got, vals[k]) : !strcmp(got, def),
                      "role %d: %s is %s (librdkafka's default %s)", (int)want[i].role, names[k],
                      got, def);
        }
        rd_kafka_conf_destroy(kc);
    }
    rd_kafka_conf_destroy(dflt);
    sw_conf_destroy(conf);
}

static void test_list_and_markdown(void **state)
{
    (void)state;
    sw_buf_t list, md;
    sw_buf_init(&list);
    sw_buf_init(&md);
    sw_conf_list(&list);
    sw_conf_markdown(&md);
    const char *l = sw_buf_cstr(&list), *m = sw_buf_cstr(&md);
    for (size_t i = 0; i < n_defaults; i++) {
        char row[128];
        /* -X list: every property starts a line. */
        snprintf(row, sizeof(row), "\n%s ", defaults[i].name);
        SW_ASSERT_CONTAINS(l, row);
        snprintf(row, sizeof(row), "\n| `%s` |", defaults[i].name);
        SW_ASSERT_CONTAINS(m, row);
    }
    /* Types, ranges, allowed values, defaults and pass-through forms. */
    static const char *const in_list[] = {
        "window.samples",
        "1..1000000",
        "0..9223372036854775807",
        "auto, json, avro",
        "at_least_once, exactly_once",
        "error, warn, info, debug",
        "0..1",
        "0.10",
        "67108864",
        "kafka.<p>",
        "kafka.consumer.<p>",
        "kafka.producer.<p>",
        "STORMWATCH_WINDOW_SAMPLES",
        "empty starts the embedded mock cluster",
        "list",
        "enum",
        "double",
        "int",
        "string",
    };
    for (size_t i = 0; i < sizeof(in_list) / sizeof(in_list[0]); i++)
        SW_ASSERT_CONTAINS(l, in_list[i]);
    SW_ASSERT_CONTAINS(m, "| Property | Type | Range / values | Default | Description |\n|---|");
    SW_ASSERT_CONTAINS(m, "| `input.format` | enum | auto, json, avro | `auto` |");
    SW_ASSERT_CONTAINS(m, "| `window.samples` | int | 1..1000000 | `512` | ");
    SW_ASSERT_CONTAINS(m, "| `bootstrap.servers` | string | any | (empty) | ");
    SW_ASSERT_CONTAINS(m, "| `kafka.consumer.<p>` |");
    /* Every Markdown line is a table row with five cells. */
    size_t rows = 0;
    for (const char *p = m; *p; rows++) {
        const char *nl = strchr(p, '\n');
        SW_ASSERT(nl != NULL, "unterminated Markdown line: %s", p);
        size_t pipes = 0;
        for (const char *q = p; q < nl; q++)
            if (*q == '|' && (q == p || q[-1] != '\\')) pipes++;
        SW_ASSERT(*p == '|' && pipes == 6, "bad Markdown row: %.*s", (int)(nl - p), p);
        p = nl + 1;
    }
    SW_ASSERT_I64(rows, 2 + n_defaults + 3);
    sw_buf_clear(&list);
    sw_buf_clear(&md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_env),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_secrets),
        cmocka_unit_test(test_passthrough_handles),
        cmocka_unit_test(test_list_and_markdown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
