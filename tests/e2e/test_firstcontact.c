/*
 * First contact (issue 40), as a newcomer meets it: the daemons facing a
 * cluster that refuses or does not resolve say so at once, in one line
 * naming each address, without librdkafka's own lines; `stormwatch mock`
 * as a process gives `run -b` the topics it needs as the docs require
 * them, without the Admin API's stall; a state topic of 4 partitions is
 * said once with the command that fixes it; a flood of undecodable
 * records is 10 lines and one "... and N more like it" line, each naming
 * the setting that resolves an unknown schema id. (produce and tail:
 * tests/e2e/test_tools_tail.c, test_failures.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <librdkafka/rdkafka.h>

#include "sw_daemon.h"
#include "sw_proc.h"
#include "sw_testlib.h"

/* A fresh directory under the tests' tmp for case @p name. */
static void case_dir(char *dir, size_t size, const char *name)
{
    snprintf(dir, size, "%s/firstcontact/%s", sw_test_tmp(), name);
    char cmd[2 * 1024 + 64];
    SW_ASSERT_TRUE(strlen(dir) < 1024);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    SW_ASSERT_I64(system(cmd), 0);
}

/* Partitions of @p topic on the cluster at @p boot (0: no such topic). */
static int partitions_of(const char *boot, const char *topic)
{
    char err[256];
    rd_kafka_conf_t *kc = rd_kafka_conf_new();
    rd_kafka_conf_set(kc, "bootstrap.servers", boot, err, sizeof(err));
    rd_kafka_conf_set(kc, "log_level", "0", err, sizeof(err));
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, kc, err, sizeof(err));
    if (!rk) return -1;
    const rd_kafka_metadata_t *md = NULL;
    int n = -1;
    /* Every topic: naming one could make the mock create it. */
    if (rd_kafka_metadata(rk, 1, NULL, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        n = 0;
        for (int i = 0; i < md->topic_cnt; i++)
            if (!strcmp(md->topics[i].topic, topic)) n = md->topics[i].partition_cnt;
        rd_kafka_metadata_destroy(md);
    }
    rd_kafka_destroy(rk);
    return n;
}

/* A daemon (run or notify) against addresses that refuse and do not
 * resolve: one ERROR line naming both within 10 s (the bound is the
 * feature: librdkafka alone takes socket.timeout.ms, 60 s), no librdkafka
 * line at the default log level, and SIGTERM still stops it at once. */
static void unreachable(const char *cmd)
{
    char dir[1024];
    case_dir(dir, sizeof(dir), cmd);
    sw_test_daemon_t d;
    sw_test_daemon_init(&d, cmd, dir, "unreachable", NULL);
    sw_test_daemon_x(&d, "bootstrap.servers=127.0.0.1:1,nosuchhost.invalid:9092");
    if (!strcmp(cmd, "notify")) sw_test_daemon_x(&d, "webhook.url=http://127.0.0.1:1/hook");
    int64_t t0 = sw_proc_now_ms();
    SW_ASSERT_TRUE(sw_test_daemon_start(&d));
    /* The needle with the command's name. */
    char needle[300];
    snprintf(needle, sizeof(needle),
             "ERROR stormwatch %s: cannot reach the Kafka cluster: 127.0.0.1:1 refused the "
             "connection; nosuchhost.invalid:9092 does not resolve (",
             cmd);
    bool said = sw_test_daemon_wait_log(&d, needle, 1, 10000);
    int64_t took = sw_proc_now_ms() - t0;
    int64_t t1 = sw_proc_now_ms();
    int rc = sw_test_daemon_stop(&d, 30000);
    int64_t stop_ms = sw_proc_now_ms() - t1;
    if (!said) SW_FAIL("no one-line diagnosis within 10 s (see %s)", d.log);
    printf("%s, nothing reachable: said in %lld ms; SIGTERM: exit %d after %lld ms\n", cmd,
           (long long)took, rc, (long long)stop_ms);
    SW_ASSERT_TRUE(took < 10000);
    SW_ASSERT_I64(sw_test_daemon_count(&d, "librdkafka"), 0);
    SW_ASSERT_I64(sw_test_daemon_count(&d, " ERROR "), 1);
    SW_ASSERT_I64(sw_test_daemon_count(&d, "check bootstrap.servers"), 1);
    SW_ASSERT_I64(sw_test_daemon_count(&d, "stopped before the Kafka cluster answered"), 1);
    SW_ASSERT_I64(rc, 0);
}

static void test_run_unreachable(void **state)
{
    (void)state;
    unreachable("run");
}

static void test_notify_unreachable(void **state)
{
    (void)state;
    unreachable("notify");
}

/* `stormwatch mock` without topics, then `run -b`: the daemon's topics
 * exist as the docs require (state: 1 partition; input, repartition:
 * mock.partitions), no Admin API wait, no auto-created topic. Then 32
 * Avro records of an unknown writer schema id: 10 warnings, each naming
 * the settings that resolve it, and one closing "... and 22 more like it"
 * line when the window ends, though no further record comes. */
static void test_mock_process(void **state)
{
    (void)state;
    char dir[1024];
    case_dir(dir, sizeof(dir), "mock");
    sw_test_mock_t mock;
    if (!sw_test_mock_start(&mock, dir, 0, false, NULL)) SW_FAIL("the mock did not start");
    SW_ASSERT_I64(partitions_of(mock.boot, "stormwatch.state"), 1);
    SW_ASSERT_I64(partitions_of(mock.boot, "stormwatch.notify.dlq"), 1);
    SW_ASSERT_I64(partitions_of(mock.boot, "stormwatch.telemetry"), 8);
    SW_ASSERT_I64(partitions_of(mock.boot, "stormwatch.repartition"), 8);
    sw_test_daemon_t d;
    sw_test_daemon_init(&d, "run", dir, "run", mock.boot);
    int64_t t0 = sw_proc_now_ms();
    SW_ASSERT_TRUE(sw_test_daemon_start(&d));
    bool ready = sw_test_daemon_wait_log(&d, "INFO stormwatch run: consuming ", 1, 30000);
    int64_t took = sw_proc_now_ms() - t0;
    if (!ready) SW_FAIL("run -b MOCK did not start consuming (see %s)", d.log);
    printf("mock process, then run -b: consuming after %lld ms\n", (long long)took);
    /* The stall was the Admin API's 10 s request timeout. */
    SW_ASSERT_TRUE(took < 9000);
    SW_ASSERT_I64(sw_test_daemon_count(&d, "Admin API"), 0);
    SW_ASSERT_I64(sw_test_daemon_count(&d, "auto-created"), 0);
    SW_ASSERT_I64(sw_test_daemon_count(&d, " WARN "), 0);
    SW_ASSERT_I64(partitions_of(mock.boot, "stormwatch.state"), 1);

    /* 32 records written with schema id 7; run expects 1. */
    char in[1200], cmd[4000];
    snprintf(in, sizeof(in), "%s/avro7.jsonl", dir);
    snprintf(cmd, sizeof(cmd),
             "for i in 1 2 3 4; do cat '%s/two_jobs.jsonl'; done > '%s' && '%s' produce -q -b '%s' "
             "-t stormwatch.telemetry --format avro --schema-id 7 '%s'",
             sw_test_fixtures(), in, sw_test_bin(), mock.boot, in);
    SW_ASSERT_I64(system(cmd), 0);
    bool closed = sw_test_daemon_wait_log(&d, "... and 22 more like it in the last 10 s", 1, 30000);
    int rc = sw_test_daemon_stop(&d, 30000);
    sw_test_mock_stop(&mock);
    if (!closed) SW_FAIL("no closing \"... and 22 more like it\" line (see %s)", d.log);
    SW_ASSERT_I64(sw_test_daemon_count(&d,
                                       "unknown schema id 7 (expected 1): set "
                                       "schema.registry.url to look writer schemas up, or add "
                                       "7=PATH.avsc to avro.schema.ids.telemetry"),
                  10);
    SW_ASSERT_I64(sw_test_daemon_count(&d, "more like it"), 1);
    SW_ASSERT_I64(rc, 0);
}

/* A state topic created with 4 partitions beforehand: said once, with
 * the kafka-topics.sh lines that recreate it with 1; the daemon runs. */
static void test_state_topic_partitions(void **state)
{
    (void)state;
    char dir[1024];
    case_dir(dir, sizeof(dir), "state4");
    sw_test_mock_t mock;
    static const char *const topics[] = {"stormwatch.state:4", NULL};
    if (!sw_test_mock_start(&mock, dir, 1, false, topics)) SW_FAIL("the mock did not start");
    SW_ASSERT_I64(partitions_of(mock.boot, "stormwatch.state"), 4);
    sw_test_daemon_t d;
    sw_test_daemon_init(&d, "run", dir, "run", mock.boot);
    SW_ASSERT_TRUE(sw_test_daemon_start(&d));
    bool ready = sw_test_daemon_wait_log(&d, "INFO stormwatch run: consuming ", 1, 30000);
    int rc = sw_test_daemon_stop(&d, 30000);
    sw_test_mock_stop(&mock);
    if (!ready) SW_FAIL("run did not start consuming (see %s)", d.log);
    char fix[3000];
    snprintf(fix, sizeof(fix),
             "topic \"stormwatch.state\" (state.topic) has 4 partitions; state snapshots use "
             "partition 0 only and the topic should have 1: recreate it while no stormwatch run of "
             "the group runs (the snapshots are rebuilt from the input): kafka-topics.sh "
             "--bootstrap-server %s --delete --topic stormwatch.state; kafka-topics.sh "
             "--bootstrap-server %s --create --topic stormwatch.state --partitions 1 --config "
             "cleanup.policy=delete --config retention.ms=604800000",
             mock.boot, mock.boot);
    SW_ASSERT_I64(sw_test_daemon_count(&d, fix), 1);
    SW_ASSERT_I64(sw_test_daemon_count(&d, "has 4 partitions"), 1);
    SW_ASSERT_I64(rc, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_run_unreachable, sw_test_kill_children),
        cmocka_unit_test_teardown(test_notify_unreachable, sw_test_kill_children),
        cmocka_unit_test_teardown(test_mock_process, sw_test_kill_children),
        cmocka_unit_test_teardown(test_state_topic_partitions, sw_test_kill_children),
    };
    return cmocka_run_group_tests_name("test_firstcontact", tests, NULL, NULL);
}
