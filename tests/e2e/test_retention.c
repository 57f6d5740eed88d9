/*
 * Input deleted by retention before it was read, as an operator sees it:
 * `stormwatch run` and `stormwatch notify` commit an offset, stop, and while
 * they are away the topic outgrows what the broker keeps (librdkafka's mock
 * cluster keeps the newest 5 MiB of a partition and deletes older messages,
 * as retention.bytes would). When they come back their committed offset is
 * out of range; auto.offset.reset moves them to the beginning of what is
 * left. Each must count exactly the messages it never saw in
 * stormwatch_input_skipped_messages_total{topic,partition} (the low
 * watermark minus the committed offset) and say so at WARN, with the
 * offsets, as data loss.
 *
 * Also the parser of librdkafka's reset line, over the real texts
 * (librdkafka 2.0 and 2.x with leader epochs) and lines it must not take.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sw_daemon.h"
#include "sw_kafka.h"
#include "sw_proc.h"
#include "sw_testlib.h"

static char g_dir[512];
static char g_boot[1024];

static void test_parse(void **state)
{
    (void)state;
    sw_kafka_reset_t rs;
    /* librdkafka 2.0.2, as the mock cluster makes it say (seen here). */
    SW_ASSERT(
        sw_kafka_parse_reset("OFFSET",
                             "[thrd:main]: in.ret [3]: offset reset (at offset 5, broker 1) "
                             "to cached BEGINNING offset 3001: fetch failed due to requested "
                             "offset not available on the broker: Broker: Offset out of range",
                             &rs),
        "2.0.2 line not taken");
    SW_ASSERT(strcmp(rs.topic, "in.ret") == 0, "topic %s", rs.topic);
    SW_ASSERT_I64(rs.partition, 3);
    SW_ASSERT_I64(rs.from, 5);
    SW_ASSERT_I64(rs.to, 3001);
    SW_ASSERT(!rs.end, "beginning");
    SW_ASSERT_I64(sw_kafka_reset_skipped(&rs), 2996);
    /* Later librdkafka: leader epochs, a logical offset not yet resolved. */
    SW_ASSERT(sw_kafka_parse_reset("OFFSET",
                                   "[thrd:main]: gpu.telemetry [0]: offset reset (at offset 8 "
                                   "(leader epoch 8), broker 1) to offset END (leader epoch -1): "
                                   "fetch failed due to requested offset not available on the "
                                   "broker: Broker: Offset out of range",
                                   &rs),
              "2.x line not taken");
    SW_ASSERT(strcmp(rs.topic, "gpu.telemetry") == 0, "topic %s", rs.topic);
    SW_ASSERT_I64(rs.from, 8);
    SW_ASSERT_I64(rs.to, -1);
    SW_ASSERT(rs.end, "end");
    /* Beyond the log's end, back to the beginning: nothing skipped. */
    SW_ASSERT(
        sw_kafka_parse_reset("OFFSET",
                             "[thrd:main]: t [0]: offset reset (at offset 900, broker 1) to "
                             "cached BEGINNING offset 0: fetch failed due to requested offset "
                             "not available on the broker: Broker: Offset out of range",
                             &rs),
        "beyond-the-end line not taken");
    SW_ASSERT_I64(sw_kafka_reset_skipped(&rs), 0);
    /* Not a reset after out of range: another facility, no committed offset. */
    SW_ASSERT(!sw_kafka_parse_reset("FETCH",
                                    "[thrd:main]: t [0]: offset reset (at offset 5, broker 1) to "
                                    "cached BEGINNING offset 9: Broker: Offset out of range",
                                    &rs),
              "other facility taken");
    SW_ASSERT(!sw_kafka_parse_reset("OFFSET",
                                    "[thrd:main]: t [0]: offset reset (at offset INVALID) to "
                                    "BEGINNING: no previously committed offset available",
                                    &rs),
              "initial reset taken");
}

/* Wait until /metrics on @p port has @p series == @p want; its last value. */
static double wait_metric(int port, const char *series, double want, int64_t timeout_ms,
                          sw_buf_t *body)
{
    int64_t deadline = sw_proc_now_ms() + timeout_ms;
    double v = -1;
    do {
        if (sw_test_http_get(port, "/metrics", body) == 200) v = sw_test_metric(body->data, series);
        if (v == want) break;
        usleep(200000);
    } while (sw_proc_now_ms() < deadline);
    return v;
}

static char g_dr_err[256];

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    if (m->err && !g_dr_err[0])
        snprintf(g_dr_err, sizeof(g_dr_err), "%s", rd_kafka_err2str(m->err));
}

/* @p n messages of 1 KiB (not telemetry: each is dead-lettered) to topic [0]. */
static void flood(const char *topic, int n)
{
    char err[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    rd_kafka_conf_set(c, "bootstrap.servers", g_boot, err, sizeof(err));
    rd_kafka_conf_set(c, "linger.ms", "5", err, sizeof(err));
    rd_kafka_conf_set_dr_msg_cb(c, dr_cb);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof(err));
    SW_ASSERT(rk, "producer: %s", err);
    char v[1024];
    memset(v, 'x', sizeof(v));
    g_dr_err[0] = '\0';
    for (int i = 0; i < n; i++) {
        while (rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                                 RD_KAFKA_V_KEY("k", 1), RD_KAFKA_V_VALUE(v, sizeof(v)),
                                 RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                 RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
            rd_kafka_poll(rk, 10);
        rd_kafka_poll(rk, 0);
    }
    rd_kafka_resp_err_t e = rd_kafka_flush(rk, 60000);
    rd_kafka_destroy(rk);
    SW_ASSERT(e == RD_KAFKA_RESP_ERR_NO_ERROR && !g_dr_err[0], "producing to %s: %s %s", topic,
              rd_kafka_err2str(e), g_dr_err);
}

static int64_t low_watermark(const char *topic)
{
    rd_kafka_t *rk = sw_kp_new(g_boot);
    int64_t lo = -1, hi = -1;
    rd_kafka_query_watermark_offsets(rk, topic, 0, &lo, &hi, 10000);
    sw_kp_destroy(rk);
    return lo;
}

/* One daemon: one message read and committed, stopped, the topic flooded
 * past what the mock keeps, started again. */
static void scenario(const char *cmd, const char *topic, const char *const *props,
                     const char *read_one)
{
    sw_test_daemon_t d;
    sw_test_daemon_init(&d, cmd, g_dir, cmd, g_boot);
    sw_test_daemon_xs(&d, props);
    flood(topic, 1);
    SW_ASSERT(sw_test_daemon_start(&d), "cannot start %s", cmd);
    int port = sw_test_daemon_metrics_port(&d, 20000);
    SW_ASSERT(port > 0, "no metrics endpoint (see %s)", d.log);
    SW_ASSERT(sw_test_daemon_wait_assigned(&d, 1, 30000), "%s did not join (see %s)", cmd, d.log);
    sw_buf_t body;
    sw_buf_init(&body);
    char series[256];
    /* The one message read (and dead-lettered), its offset committed. */
    SW_ASSERT(wait_metric(port, read_one, 1, 30000, &body) == 1,
              "%s did not dead-letter offset 0 (%s; see %s)", cmd, read_one, d.log);
    usleep(1500000); /* commit.interval.ms=200; the stop commits too */
    SW_ASSERT_I64(sw_test_daemon_stop(&d, 30000), 0);

    flood(topic, 6000); /* 6 MiB: the mock keeps the newest 5 */
    int64_t lo = low_watermark(topic);
    SW_ASSERT(lo > 1, "the mock kept everything (low watermark %lld)", (long long)lo);

    SW_ASSERT(sw_test_daemon_start(&d), "cannot restart %s", cmd);
    port = sw_test_daemon_metrics_port(&d, 20000);
    SW_ASSERT(port > 0, "no metrics endpoint after the restart (see %s)", d.log);
    snprintf(series, sizeof(series),
             "stormwatch_input_skipped_messages_total{topic=\"%s\",partition=\"0\"}", topic);
    double got = wait_metric(port, series, (double)(lo - 1), 30000, &body);
    if (got != (double)(lo - 1)) fprintf(stderr, "--- /metrics ---\n%s\n", body.data);
    SW_ASSERT(got == (double)(lo - 1), "%s: %s is %g, expected %lld (offsets 1 to %lld deleted)",
              cmd, series, got, (long long)(lo - 1), (long long)(lo - 1));
    char line[256];
    snprintf(line, sizeof(line),
             "data loss: %s [0]: offsets 1 to %lld (%lld messages) were deleted", topic,
             (long long)(lo - 1), (long long)(lo - 1));
    SW_ASSERT(sw_test_daemon_wait_log(&d, line, 1, 5000), "%s: no WARN \"%s\" (see %s)", cmd, line,
              d.log);
    SW_ASSERT(sw_test_daemon_count(&d, "WARN") >= 1, "not at WARN");
    printf("%s: offsets 1..%lld deleted while it was away: counted %g, warned as data loss\n", cmd,
           (long long)(lo - 1), got);
    SW_ASSERT_I64(sw_test_daemon_stop(&d, 30000), 0);
    sw_buf_clear(&body);
}

static void test_run(void **state)
{
    (void)state;
    static const char *const props[] = {"group.id=gret",
                                        "input.topics=in.ret",
                                        "output.topic=out.ret",
                                        "dlq.topic=dlq.ret",
                                        "state.topic=state.ret",
                                        "repartition=off",
                                        "state.restore=off",
                                        "metrics.listen=127.0.0.1:0",
                                        "log.level=debug",
                                        "commit.interval.ms=200",
                                        NULL};
    scenario("run", "in.ret", props, "stormwatch_dlq_records_total{kind=\"decode\"}");
}

static void test_notify(void **state)
{
    (void)state;
    static const char *const props[] = {
        "notify.group.id=gnret",      "output.topic=alerts.ret",
        "notify.dlq.topic=ndlq.ret",  "alertmanager.url=http://127.0.0.1:9",
        "metrics.listen=127.0.0.1:0", "log.level=debug",
        "commit.interval.ms=200",     NULL};
    scenario("notify", "alerts.ret", props, "stormwatch_notify_dlq_records_total");
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof(g_dir), "%s/retention", sw_test_tmp());
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", g_dir, g_dir);
    if (system(cmd) != 0) return -1;
    static sw_test_mock_t mock;
    if (!sw_test_mock_start(&mock, g_dir, 0, false,
                            (const char *const[]){"in.ret:1", "out.ret:1", "dlq.ret:1",
                                                  "state.ret:1", "alerts.ret:1", "ndlq.ret:1",
                                                  NULL}))
        return -1;
    snprintf(g_boot, sizeof(g_boot), "%s", mock.boot);
    printf("test_retention: logs in %s\n", g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_run),
        cmocka_unit_test(test_notify),
    };
    return cmocka_run_group_tests(tests, setup, sw_test_kill_children);
}
