/*
 * Stopping before the first assignment never aborts. librdkafka before
 * 2.3.0 (Debian 12 ships 2.0.2) asserts when a cooperative-sticky consumer
 * that has joined its group is destroyed before its first assignment
 * (upstream issue 4312); the daemon works around it. Here a second
 * instance joins a group that a first one holds (its join waits for the
 * rebalance) and is stopped with SIGTERM at spread moments of its join,
 * again and again: every stop must exit 0, never by a signal. And with no
 * broker at all, the daemon diagnoses it, retries, and stops at once.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sw_daemon.h"
#include "sw_proc.h"
#include "sw_testlib.h"

static void test_stop_before_assignment(void **state)
{
    (void)state;
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/stop", sw_test_tmp());
    char mk[1200];
    snprintf(mk, sizeof(mk), "mkdir -p '%s'", dir);
    SW_ASSERT_I64(system(mk), 0);
    sw_test_mock_t mock;
    static const char *const topics[] = {"in.stop:4", "out.stop:1", "dlq.stop:1",
                                         "stormwatch.state:1", NULL};
    if (!sw_test_mock_start(&mock, dir, 1, false, topics))
        SW_FAIL("the mock cluster did not start");
    static const char *const props[] = {"input.topics=in.stop", "output.topic=out.stop",
                                        "dlq.topic=dlq.stop", "group.id=stopper", NULL};
    /* A holds the group, so that B's join is a rebalance with a window
     * between JoinGroup and SyncGroup. */
    sw_test_daemon_t a, b;
    sw_test_daemon_init(&a, "run", dir, "a", mock.boot);
    sw_test_daemon_xs(&a, props);
    sw_test_daemon_start(&a);
    if (!sw_test_daemon_wait_assigned(&a, 1, 60000))
        SW_FAIL("the first instance was not assigned (see %s)", a.log);
    int stops = 0, before_assignment = 0;
    for (int i = 0; i < 12; i++) {
        char tag[16];
        snprintf(tag, sizeof(tag), "b%d", i);
        sw_test_daemon_init(&b, "run", dir, tag, mock.boot);
        sw_test_daemon_xs(&b, props);
        sw_test_daemon_start(&b);
        /* From its first log line (signal handlers are in place by then;
         * a sanitizer build starts slowly): 0.1 s to ~4 s, before, during
         * and after the join. */
        if (!sw_test_daemon_wait_log(&b, "consuming", 1, 60000))
            SW_FAIL("instance %d did not start (see %s)", i, b.log);
        usleep((useconds_t)(100000 + i * 330000)); /* the stop moment */
        bool was_assigned = sw_test_daemon_count(&b, ": assigned ") > 0;
        int rc = sw_test_daemon_stop(&b, 60000);
        if (rc != 0)
            SW_FAIL("stop %d (after %d ms) exited %d, expected 0 (see %s)", i, 100 + i * 330, rc,
                    b.log);
        stops++;
        before_assignment += !was_assigned;
    }
    int rc = sw_test_daemon_stop(&a, 60000);
    sw_test_mock_stop(&mock);
    printf("stops: %d, %d of them before the instance's first assignment; all exited 0\n", stops,
           before_assignment);
    SW_ASSERT_I64(rc, 0);
    SW_ASSERT_TRUE(before_assignment >= 3);
}
/* No broker at the bootstrap address: the daemon says so (not "the state
 * topic does not exist"), keeps retrying, and stops at once on SIGTERM. */
static void test_unreachable_cluster(void **state)
{
    (void)state;
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/stop", sw_test_tmp());
    char mk[1200];
    snprintf(mk, sizeof(mk), "mkdir -p '%s'", dir);
    SW_ASSERT_I64(system(mk), 0);
    sw_test_daemon_t d;
    sw_test_daemon_init(&d, "run", dir, "unreachable", NULL);
    sw_test_daemon_x(&d, "bootstrap.servers=127.0.0.1:1");
    sw_test_daemon_start(&d);
    bool said = sw_test_daemon_wait_log(
        &d, "cannot reach the Kafka cluster: 127.0.0.1:1 refused the connection", 1, 60000);
    int64_t t0 = sw_proc_now_ms();
    int rc = sw_test_daemon_stop(&d, 30000);
    int64_t took = sw_proc_now_ms() - t0;
    if (!said) SW_FAIL("no diagnosis of the unreachable broker in %s", d.log);
    SW_ASSERT_I64(sw_test_daemon_count(&d, "does not exist"), 0);
    SW_ASSERT_I64(sw_test_daemon_count(&d, "stopped before the Kafka cluster answered"), 1);
    printf("unreachable cluster: diagnosed and retried; SIGTERM: exit %d after %lld ms\n", rc,
           (long long)took);
    SW_ASSERT_I64(rc, 0);
    SW_ASSERT_TRUE(took < 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_unreachable_cluster, sw_test_kill_children),
        cmocka_unit_test_teardown(test_stop_before_assignment, sw_test_kill_children),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
