/*
 * `stormwatch run` as an operator sees it, against the mock cluster in a
 * separate process:
 *  - /healthz answers from the start, /readyz only once partitions are
 *    assigned and the lag is small; /metrics, scraped while telemetry
 *    flows and after, counts exactly what was sent: events in per topic,
 *    dead letters, records out per action, samples retained, ranks and
 *    jobs tracked, the processing-time histogram, lag per partition;
 *  - secrets given with -X, in a config file and in the environment never
 *    appear in `-X dump`, in the log (debug level, librdkafka debug on) or
 *    in /metrics, while the non-secret values next to them do.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sw_codec_telemetry.h"
#include "sw_daemon.h"
#include "sw_detect.h"
#include "sw_gen.h"
#include "sw_proc.h"
#include "sw_testlib.h"

static char g_dir[512];
static char g_boot[1024];

static const char *const k_secrets[] = {"PW-s3cret-one", "KEY-s3cret-two", "KS-s3cret-three",
                                        "FILE-s3cret-four"};

static int read_file(const char *path, sw_buf_t *out)
{
    out->len = 0;
    return sw_test_read_file(path, out) ? 0 : 1;
}

static int check_no_secret(const char *what, const char *text)
{
    int failed = 0;
    for (size_t i = 0; i < sizeof(k_secrets) / sizeof(k_secrets[0]); i++) {
        if (strstr(text, k_secrets[i])) {
            fprintf(stderr, "FAIL: %s shows the secret %s\n", what, k_secrets[i]);
            failed = 1;
        }
    }
    return failed;
}

/* The daemon as TAG, with the arguments `-X dump` and the real run share,
 * then @p last (a -X value, or NULL). @returns false when the config file
 * cannot be written. */
static bool daemon_init(sw_test_daemon_t *d, const char *tag, const char *last)
{
    char conf[600];
    snprintf(conf, sizeof(conf), "%s/ops.conf", g_dir);
    FILE *f = fopen(conf, "w");
    if (!f) return false;
    fprintf(f,
            "# secrets in a file, as a Kubernetes Secret mount would give them\n"
            "kafka.ssl.keystore.password=%s\nkafka.sasl.username=file-user\n",
            k_secrets[3]);
    fclose(f);
    sw_test_daemon_init(d, "run", g_dir, tag, g_boot);
    sw_test_daemon_arg(d, "-c");
    sw_test_daemon_arg(d, conf);
    static const char *const xs[] = {"group.id=gops",
                                     "input.topics=in.ops",
                                     "output.topic=out.ops",
                                     "dlq.topic=dlq.ops",
                                     "state.topic=state.ops",
                                     "metrics.listen=127.0.0.1:0",
                                     "log.level=debug",
                                     "job.idle.ms=2000",
                                     "commit.interval.ms=200",
                                     "repartition=off", /* the mis-keyed warning of that mode */
                                     "kafka.debug=conf,security,generic",
                                     "kafka.sasl.password=PW-s3cret-one",
                                     "kafka.producer.ssl.key.password=KEY-s3cret-two",
                                     NULL};
    sw_test_daemon_xs(d, xs);
    sw_test_daemon_xs(d, (const char *const[]){last, NULL});
    return true;
}

static void test_dump(void **state)
{
    (void)state;
    sw_test_daemon_t d;
    SW_ASSERT(daemon_init(&d, "dump", "dump"), "cannot write the config file");
    SW_ASSERT(sw_test_daemon_start(&d) && sw_test_daemon_wait_exit(&d, 20000) == 0,
              "-X dump failed (see %s)", d.log);
    sw_buf_t out;
    sw_buf_init(&out);
    SW_ASSERT(read_file(d.out, &out) == 0, "no dump output");
    int failed = check_no_secret("-X dump", out.data);
    if (!strstr(out.data, "kafka.sasl.password=[redacted, set]") ||
        !strstr(out.data, "kafka.producer.ssl.key.password=[redacted, set]") ||
        !strstr(out.data, "kafka.ssl.keystore.password=[redacted, set]") ||
        !strstr(out.data, "kafka.consumer.ssl.key.password=[redacted, set]") ||
        !strstr(out.data, "kafka.sasl.username=file-user")) {
        fprintf(stderr,
                "FAIL: -X dump does not list the secrets as redacted or the user name:\n%s\n",
                out.data);
        failed = 1;
    }
    sw_buf_clear(&out);
    printf("secrets in -X dump: %s\n", failed ? "FAILED" : "redacted");
    SW_ASSERT(!failed, "see the failures above");
}

static void test_daemon(void **state)
{
    (void)state;
    sw_test_daemon_t d;
    SW_ASSERT(daemon_init(&d, "run", NULL), "cannot write the config file");
    sw_test_daemon_start(&d);
    int port = sw_test_daemon_metrics_port(&d, 20000);
    SW_ASSERT(port > 0, "no metrics endpoint logged (see %s)", d.log);
    sw_buf_t log, body;
    sw_buf_init(&log);
    sw_buf_init(&body);
    int failed = 0;
    int st = sw_test_http_get(port, "/healthz", &body);
    if (st != 200) {
        fprintf(stderr, "FAIL: /healthz answered %d at start\n", st);
        failed = 1;
    }
    SW_ASSERT(sw_test_daemon_wait_assigned(&d, 1, 30000), "daemon did not join");
    /* Ready once assigned and caught up (the topic is empty). */
    if (!sw_test_daemon_wait_ready(&d, port, 20000)) {
        st = sw_test_http_get(port, "/readyz", &body);
        fprintf(stderr, "FAIL: /readyz answered %d after the assignment: %s\n", st, body.data);
        failed = 1;
    }

    /* Telemetry with a storm, and bad records among it. */
    sw_gen_opts_t go;
    sw_gen_opts_default(&go);
    go.ranks = 6;
    go.samples = 300;
    go.job_prefix = "opsjob";
    char err[256];
    sw_gen_t *gen = sw_gen_new(&go, err, sizeof(err));
    SW_ASSERT(gen, "%s", err);
    rd_kafka_t *rk = sw_kp_new(g_boot);
    sw_params_t params = sw_params_default();
    sw_detector_t *det = sw_detect_new(params);
    sw_tdec_t *dec = sw_tdec_new();
    sw_buf_t line;
    sw_buf_init(&line);
    uint64_t sent = 0, bad = 0, records[4] = {0}, samples = 0, miskeyed = 0;
    int scraped_midway = 0;
    while (sw_gen_next(gen, &line)) {
        if (sent % 400 == 200) {
            SW_ASSERT(sw_kp_send(rk, "in.ops", 0, "opsjob-0", 8, "{\"not\": \"telemetry\"}", 20),
                      "produce");
            sent++;
            bad++;
        }
        sw_event_t ev;
        SW_ASSERT(sw_tdec_json(dec, line.data, line.len, &ev, err, sizeof(err)) == SW_OK, "%s",
                  err);
        const sw_record_t *rec;
        SW_ASSERT(sw_detect_feed(det, &ev, 0, &rec, err, sizeof(err)) == SW_OK, "%s", err);
        if (rec) records[rec->action]++;
        samples += ev.kind == SW_EV_SAMPLE;
        /* Now and then keyed by host, or not keyed (on the same partition,
         * so the answer is unchanged): counted as mis-keyed and warned. */
        bool by_host = sent % 500 == 250, no_key = sent % 500 == 450;
        const void *key = by_host  ? (const void *)"node-000"
                          : no_key ? NULL
                                   : (const void *)ev.job_id.ptr;
        size_t keylen = by_host ? 8 : no_key ? 0 : ev.job_id.len;
        miskeyed += by_host || no_key;
        SW_ASSERT(sw_kp_send(rk, "in.ops", 0, key, keylen, line.data, line.len - 1), "produce");
        sent++;
        line.len = 0;
        if (sent == 1000) {
            /* A scrape while telemetry flows must work and be consistent. */
            SW_ASSERT(sw_kp_flush(rk, 30000), "flush");
            usleep(300000);
            st = sw_test_http_get(port, "/metrics", &body);
            scraped_midway = st == 200 && sw_test_metric(body.data, "stormwatch_up") == 1;
        }
    }
    records[SW_ACTION_SUMMARY] = 1; /* once idle */
    SW_ASSERT(sw_kp_flush(rk, 30000), "flush");
    sw_kp_destroy(rk);
    uint64_t want = records[0] + records[1] + records[2] + records[3];
    SW_ASSERT(records[SW_ACTION_TRIGGER] >= 1, "the generated storm gave no trigger");
    sw_kmsg_t *m;
    size_t got = sw_kc_read(g_boot, "out.ops", 2, want, 500, 60000, &m);
    sw_kmsg_free(m, got);
    if (got != want) {
        fprintf(stderr, "FAIL: %zu records on the output, expected %llu\n", got,
                (unsigned long long)want);
        failed = 1;
    }
    if (!scraped_midway) {
        fprintf(stderr, "FAIL: scraping /metrics while telemetry flowed failed\n");
        failed = 1;
    }
    /* Counters settle at the next publication (every second). */
    int64_t deadline = sw_proc_now_ms() + 15000;
    do {
        usleep(300000);
        st = sw_test_http_get(port, "/metrics", &body);
    } while (sw_proc_now_ms() < deadline &&
             (sw_test_metric(body.data,
                             "stormwatch_events_in_total{topic=\"in.ops\",stage=\"engine\"}") !=
                  (double)sent ||
              sw_test_metric(body.data, "stormwatch_consumer_total_lag") != 0 ||
              sw_test_metric(body.data, "stormwatch_records_out_total{action=\"summary\"}") != 1));
    char series[128];
    struct {
        const char *series;
        double want;
    } exact[] = {
        {"stormwatch_up", 1},
        {"stormwatch_events_in_total{topic=\"in.ops\",stage=\"engine\"}", (double)sent},
        {"stormwatch_dlq_records_total{kind=\"invalid\"}", (double)bad},
        {"stormwatch_dlq_records_total{kind=\"decode\"}", 0},
        {"stormwatch_records_out_total{action=\"trigger\"}", (double)records[0]},
        {"stormwatch_records_out_total{action=\"update\"}", (double)records[1]},
        {"stormwatch_records_out_total{action=\"resolve\"}", (double)records[2]},
        {"stormwatch_records_out_total{action=\"summary\"}", 1},
        {"stormwatch_consumer_total_lag", 0},
        {"stormwatch_assigned_partitions", 2},
        {"stormwatch_jobs_tracked", 0}, /* the job went idle: state freed */
        {"stormwatch_retained_samples", 0},
        {"stormwatch_event_processing_seconds_count", (double)sent},
        /* One alert latency per trigger, each within a minute (produced
         * during this test). */
        {"stormwatch_alert_latency_seconds_count", (double)records[SW_ACTION_TRIGGER]},
        {"stormwatch_alert_latency_seconds_bucket{le=\"60\"}", (double)records[SW_ACTION_TRIGGER]},
        {"stormwatch_miskeyed_messages_total{topic=\"in.ops\"}", (double)miskeyed},
    };
    for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
        double v = sw_test_metric(body.data, exact[i].series);
        if (v != exact[i].want) {
            fprintf(stderr, "FAIL: %s is %g, expected %g\n", exact[i].series, v, exact[i].want);
            failed = 1;
        }
    }
    /* The newest input message's timestamp: produced during this test. */
    double last_ts = sw_test_metric(body.data, "stormwatch_last_event_timestamp_seconds");
    double now_s = (double)time(NULL);
    if (!(last_ts > now_s - 600 && last_ts <= now_s + 5)) {
        fprintf(stderr, "FAIL: stormwatch_last_event_timestamp_seconds is %f, now is %f\n", last_ts,
                now_s);
        failed = 1;
    }
    snprintf(series, sizeof(series), "stormwatch_consumer_lag{topic=\"in.ops\",partition=\"0\"}");
    if (sw_test_metric(body.data, series) != 0) {
        fprintf(stderr, "FAIL: %s is %g\n", series, sw_test_metric(body.data, series));
        failed = 1;
    }
    if (sw_test_metric(body.data, "stormwatch_rebalances_total") < 1 ||
        sw_test_metric(body.data, "stormwatch_decode_errors_total") +
                sw_test_metric(body.data, "stormwatch_invalid_events_total") !=
            (double)bad) {
        fprintf(stderr, "FAIL: rebalances %g, decode errors %g + invalid %g (expected %llu bad)\n",
                sw_test_metric(body.data, "stormwatch_rebalances_total"),
                sw_test_metric(body.data, "stormwatch_decode_errors_total"),
                sw_test_metric(body.data, "stormwatch_invalid_events_total"),
                (unsigned long long)bad);
        failed = 1;
    }
    /* No schema registry configured: none of its families (an `up == 0`
     * rule would fire where there is nothing to be down); no notify ones. */
    if (strstr(body.data, "stormwatch_schema_registry_") ||
        strstr(body.data, "stormwatch_notify_")) {
        fprintf(stderr, "FAIL: schema registry or notify families without a registry or notify\n");
        failed = 1;
    }
    failed |= check_no_secret("/metrics", body.data);
    if (failed) fprintf(stderr, "--- /metrics ---\n%s\n", body.data);
    printf("metrics scraped during and after %llu events (%llu bad, %llu records): %s\n",
           (unsigned long long)sent, (unsigned long long)bad, (unsigned long long)want,
           failed ? "FAILED" : "ok");

    SW_ASSERT(sw_test_daemon_stop(&d, 30000) == 0, "daemon did not exit 0 after SIGTERM");
    SW_ASSERT(read_file(d.log, &log) == 0, "no log");
    int lf = check_no_secret("the log", log.data);
    if (!strstr(log.data, "file-user") && !strstr(log.data, "DEBUG")) {
        fprintf(stderr, "FAIL: the log is not at debug level\n");
        lf = 1;
    }
    printf("secrets in the debug log (%zu bytes): %s\n", log.len, lf ? "FAILED" : "absent");
    if (!strstr(log.data, "offset ") ||
        !strstr(log.data, ": message key \"node-000\" is not its job_id \"")) {
        fprintf(stderr, "FAIL: no warning naming a message keyed by host\n");
        failed = 1;
    }
    printf("mis-keyed messages: %llu counted and warned about\n", (unsigned long long)miskeyed);
    failed |= lf;
    sw_buf_clear(&line);
    sw_buf_clear(&log);
    sw_buf_clear(&body);
    sw_tdec_destroy(dec);
    sw_detect_destroy(det);
    sw_gen_destroy(gen);
    SW_ASSERT(!failed, "see the failures above");
}

/* The mock cluster of both cases; the group's teardown ends it with
 * whatever a failed case left running. */
static int ops_setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof(g_dir), "%s/ops", sw_test_tmp());
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", g_dir, g_dir);
    if (system(cmd) != 0) return -1;
    static sw_test_mock_t mock;
    if (!sw_test_mock_start(
            &mock, g_dir, 0, false,
            (const char *const[]){"in.ops:2", "out.ops:2", "dlq.ops:2", "state.ops:1", NULL}))
        return -1;
    snprintf(g_boot, sizeof(g_boot), "%s", mock.boot);
    /* A secret in the environment too (what a container would get). */
    setenv("STORMWATCH_KAFKA_CONSUMER_SSL_KEY_PASSWORD", "KS-s3cret-three", 1);
    printf("test_ops: logs in %s\n", g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dump),
        cmocka_unit_test(test_daemon),
    };
    return cmocka_run_group_tests(tests, ops_setup, sw_test_kill_children);
}
