/*
 * The control protocol of `stormwatch mock --control`
 * (src/kafka/sw_mock_control.c) against an in-process mock cluster of 3
 * brokers: every command that the fault tests use is carried out (and
 * accepted by librdkafka's mock API), and each kind of mistake is refused
 * with a message that names the wrong word and what was expected.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_log.h"
#include "sw_mock_control.h"
#include "sw_testlib.h"

static sw_log_t g_log;
static sw_kafka_ctx_t g_ctx;

static bool run(sw_mockctl_t *c, const char *cmd, char *err, size_t n)
{
    char line[256];
    snprintf(line, sizeof(line), "%s", cmd);
    err[0] = '\0';
    return sw_mockctl_line(c, line, err, n);
}

static void expect_error(sw_mockctl_t *c, const char *cmd, const char *needle)
{
    char err[512];
    if (run(c, cmd, err, sizeof(err))) SW_FAIL("\"%s\" was accepted", cmd);
    if (!strstr(err, needle)) SW_FAIL("\"%s\": error \"%s\" does not say \"%s\"", cmd, err, needle);
}

static void test_commands(void **state)
{
    (void)state;
    char err[512];
    sw_mock_t *m = sw_mock_new(3, &g_ctx, err, sizeof(err));
    if (!m) SW_FAIL("mock cluster: %s", err);
    sw_mockctl_t c = {.m = m, .brokers = 3};
    const char *ok[] = {"topic ctl.t 4",
                        "broker rtt 2 5",
                        "broker down 3",
                        "broker up 3",
                        "errors Produce 2 NOT_LEADER_FOR_PARTITION,REQUEST_TIMED_OUT",
                        "clear Produce",
                        "errors Fetch 1 _TRANSPORT",
                        "clear",
                        "leader ctl.t 0 2",
                        "coordinator group g1 1",
                        "coordinator transaction tx1 2",
                        "  broker   up   -1  "};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (!run(&c, ok[i], err, sizeof(err))) SW_FAIL("\"%s\" refused: %s", ok[i], err);
    SW_ASSERT_FALSE(c.quit);
    expect_error(&c, "", "empty command");
    expect_error(&c, "frobnicate 1", "unknown command \"frobnicate\"");
    expect_error(&c, "topic bad/name 1", "topic name \"bad/name\"");
    expect_error(&c, "topic ctl.u 0", "partitions");
    expect_error(&c, "broker down 4", "broker id \"4\" is not 1..3 or -1");
    expect_error(&c, "broker sideways 1", "usage: broker down|up BROKER");
    expect_error(&c, "errors Nope 1 REQUEST_TIMED_OUT", "Nope");
    expect_error(&c, "errors Produce 1 NOT_AN_ERROR", "unknown error name \"NOT_AN_ERROR\"");
    expect_error(&c, "errors Produce 0 REQUEST_TIMED_OUT", "count");
    expect_error(&c, "leader ctl.t 0 7", "broker id \"7\" is not 1..3 or -1 (no leader)");
    expect_error(&c, "coordinator cluster k 1", "usage: coordinator group|transaction");
    SW_ASSERT_TRUE(run(&c, "quit", err, sizeof(err)));
    SW_ASSERT_TRUE(c.quit);
    SW_ASSERT_TRUE(sw_mock_topic_name_ok("a.b_c-9", 7));
    SW_ASSERT_FALSE(sw_mock_topic_name_ok("..", 2));
    SW_ASSERT_FALSE(sw_mock_topic_name_ok("", 0));
    sw_mock_destroy(m);
}

int main(void)
{
    g_log = sw_log_make(SW_LOG_ERROR, "test_mock_control");
    g_ctx.log = &g_log;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
