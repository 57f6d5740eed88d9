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

#include "sw_proc.h"
#include "sw_testlib.h"

static void test_stop_before_assignment(void **state)
{
    (void)state;
    const char *bin = sw_test_bin();
    char dir[1024], boot_path[1100], out_path[1100], err_path[1100];
    snprintf(dir, sizeof(dir), "%s/stop", sw_test_tmp());
    char mk[1200];
    snprintf(mk, sizeof(mk), "mkdir -p '%s'", dir);
    assert_int_equal(system(mk), 0);
    snprintf(boot_path, sizeof(boot_path), "%s/bootstrap", dir);
    unlink(boot_path);
    char *margv[] = {(char *)bin, "mock", "--brokers", "1", "--bootstrap-file", boot_path,
                     "--topic", "in.stop:4", "--topic", "out.stop:1", "--topic", "dlq.stop:1",
                     "--topic", "stormwatch.state:1", NULL};
    snprintf(out_path, sizeof(out_path), "%s/mock.out", dir);
    snprintf(err_path, sizeof(err_path), "%s/mock.err", dir);
    pid_t mock = sw_proc_spawn(margv, out_path, err_path);
    char *boot = sw_proc_wait_file(boot_path, 20000);
    if (!boot) {
        sw_proc_kill(mock);
        fail_msg("the mock cluster did not start (see %s)", err_path);
    }
    char bs[1100];
    snprintf(bs, sizeof(bs), "bootstrap.servers=%s", boot);
    char *argv_run[] = {(char *)bin, "run", "-X", bs, "-X", "input.topics=in.stop", "-X",
                        "output.topic=out.stop", "-X", "dlq.topic=dlq.stop", "-X",
                        "group.id=stopper", "-X", "kafka.consumer.session.timeout.ms=6000", NULL};
    /* A holds the group, so that B's join is a rebalance with a window
     * between JoinGroup and SyncGroup. */
    char a_err[1100];
    snprintf(out_path, sizeof(out_path), "%s/a.out", dir);
    snprintf(a_err, sizeof(a_err), "%s/a.err", dir);
    unlink(a_err);
    pid_t a = sw_proc_spawn(argv_run, out_path, a_err);
    if (!sw_proc_wait_text(a_err, "assigned", 1, 60000)) {
        sw_proc_kill(a);
        sw_proc_kill(mock);
        fail_msg("the first instance was not assigned (see %s)", a_err);
    }
    int stops = 0, before_assignment = 0;
    for (int i = 0; i < 12; i++) {
        char b_err[1100];
        snprintf(out_path, sizeof(out_path), "%s/b%d.out", dir, i);
        snprintf(b_err, sizeof(b_err), "%s/b%d.err", dir, i);
        unlink(b_err); /* a previous run's log must not answer the waits below */
        pid_t b = sw_proc_spawn(argv_run, out_path, b_err);
        /* From its first log line (signal handlers are in place by then;
         * a sanitizer build starts slowly): 0.1 s to ~4 s, before, during
         * and after the join. */
        if (!sw_proc_wait_text(b_err, "consuming", 1, 60000)) {
            sw_proc_kill(b);
            sw_proc_kill(a);
            sw_proc_kill(mock);
            fail_msg("instance %d did not start (see %s)", i, b_err);
        }
        usleep((useconds_t)(100000 + i * 330000));
        bool was_assigned = sw_proc_count_text(b_err, "assigned") > 0;
        kill(b, SIGTERM);
        int rc = sw_proc_wait(b, 60000);
        if (rc < 0) sw_proc_kill(b);
        if (rc != 0) {
            sw_proc_kill(a);
            sw_proc_kill(mock);
            fail_msg("stop %d (after %d ms) exited %d, expected 0 (see %s)", i, 100 + i * 330, rc,
                     b_err);
        }
        stops++;
        before_assignment += !was_assigned;
    }
    kill(a, SIGTERM);
    int rc = sw_proc_wait(a, 60000);
    if (rc < 0) sw_proc_kill(a);
    sw_proc_kill(mock);
    free(boot);
    printf("stops: %d, %d of them before the instance's first assignment; all exited 0\n", stops,
           before_assignment);
    assert_int_equal(rc, 0);
    assert_true(before_assignment >= 3);
}
/* No broker at the bootstrap address: the daemon says so (not "the state
 * topic does not exist"), keeps retrying, and stops at once on SIGTERM. */
static void test_unreachable_cluster(void **state)
{
    (void)state;
    const char *bin = sw_test_bin();
    char dir[1024], out_path[1100], err_path[1100];
    snprintf(dir, sizeof(dir), "%s/stop", sw_test_tmp());
    char mk[1200];
    snprintf(mk, sizeof(mk), "mkdir -p '%s'", dir);
    assert_int_equal(system(mk), 0);
    snprintf(out_path, sizeof(out_path), "%s/unreachable.out", dir);
    snprintf(err_path, sizeof(err_path), "%s/unreachable.err", dir);
    char *argv_run[] = {(char *)bin, "run", "-X", "bootstrap.servers=127.0.0.1:1", NULL};
    unlink(err_path); /* a previous run's log must not answer the wait below */
    pid_t d = sw_proc_spawn(argv_run, out_path, err_path);
    bool said = sw_proc_wait_text(err_path, "cannot reach the Kafka cluster at 127.0.0.1:1: broker unreachable", 2,
                                  60000);
    int64_t t0 = sw_proc_now_ms();
    kill(d, SIGTERM);
    int rc = sw_proc_wait(d, 30000);
    int64_t took = sw_proc_now_ms() - t0;
    if (rc < 0) sw_proc_kill(d);
    if (!said) fail_msg("no diagnosis of the unreachable broker, twice, in %s", err_path);
    assert_int_equal(sw_proc_count_text(err_path, "does not exist"), 0);
    assert_int_equal(sw_proc_count_text(err_path, "stopped before the Kafka cluster answered"), 1);
    printf("unreachable cluster: diagnosed and retried; SIGTERM: exit %d after %lld ms\n", rc, (long long)took);
    assert_int_equal(rc, 0);
    assert_true(took < 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unreachable_cluster),
        cmocka_unit_test(test_stop_before_assignment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
