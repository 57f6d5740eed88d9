/*
 * The default worker.threads under a CPU quota, end to end: `stormwatch
 * run` started in a child cgroup limited to half a CPU (cgroup v1
 * cpu.cfs_quota_us=50000, or v2 cpu.max "50000 100000") logs
 * "worker.threads=1 (cgroup ... = 0.5 CPUs, rounded up)". Needs a cgroup
 * it can create and join (root, or a delegated subtree); elsewhere the case
 * is skipped and says why. The parser itself is tested in test_cpus.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sw_daemon.h"
#include "sw_testlib.h"

/* Write @p text to @p path; false (errno kept) when it cannot. */
static bool put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return false;
    bool ok = fputs(text, f) >= 0;
    if (fclose(f) != 0) ok = false;
    return ok;
}

/* This process's cgroup path for v2 ("0::") or v1's cpu controller. */
static bool own_path(bool v2, char *out, size_t size)
{
    char line[1024];
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return false;
    bool found = false;
    while (!found && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = '\0';
        const char *ctl = c1 + 1;
        bool hit = v2 ? (*ctl == '\0' && strcmp(line, "0:") == 0)
                      : (strcmp(ctl, "cpu") == 0 || strstr(ctl, "cpu,") == ctl ||
                         strstr(ctl, ",cpu,") != NULL ||
                         (strlen(ctl) > 4 && strcmp(ctl + strlen(ctl) - 4, ",cpu") == 0));
        if (hit) {
            snprintf(out, size, "%s", strcmp(c2 + 1, "/") == 0 ? "" : c2 + 1);
            found = true;
        }
    }
    fclose(f);
    return found;
}

static void test_run_under_quota(void **state)
{
    (void)state;
    struct stat st;
    bool v2 = stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0;
    char mount[256], own[1024], parent[1400], child[1500], path[1600], why[2000] = "";
    if (v2) {
        snprintf(mount, sizeof(mount), "/sys/fs/cgroup");
    } else {
        snprintf(mount, sizeof(mount), "/sys/fs/cgroup/cpu");
        if (stat(mount, &st) != 0) snprintf(mount, sizeof(mount), "/sys/fs/cgroup/cpu,cpuacct");
    }
    if (stat(mount, &st) != 0 || !own_path(v2, own, sizeof(own))) {
        printf(
            "skipped: no cgroup cpu controller at /sys/fs/cgroup (v2) or "
            "/sys/fs/cgroup/cpu (v1)\n");
        skip();
    }
    snprintf(parent, sizeof(parent), "%s%s", mount, own);
    snprintf(child, sizeof(child), "%s/stormwatch-test-%ld", parent, (long)getpid());
    if (mkdir(child, 0755) != 0 && errno != EEXIST) {
        printf("skipped: cannot create a child cgroup %s: %s\n", child, strerror(errno));
        skip();
    }
    if (v2) {
        snprintf(path, sizeof(path), "%s/cpu.max", child);
        if (stat(path, &st) != 0) {
            snprintf(path, sizeof(path), "%s/cgroup.subtree_control", parent);
            put(path, "+cpu"); /* fails when the parent holds processes */
            snprintf(path, sizeof(path), "%s/cpu.max", child);
        }
        if (!put(path, "50000 100000"))
            snprintf(why, sizeof(why), "cannot write %s: %s", path, strerror(errno));
    } else {
        snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", child);
        if (!put(path, "50000"))
            snprintf(why, sizeof(why), "cannot write %s: %s", path, strerror(errno));
    }
    if (why[0]) {
        rmdir(child);
        printf("skipped: %s\n", why);
        skip();
    }

    char dir[1200], pid[32], cmd[2500];
    snprintf(dir, sizeof(dir), "%s/cgroup", sw_test_tmp());
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    SW_ASSERT_I64(system(cmd), 0);
    static const char *const topics[] = {"cg.in:2", "cg.out:1", "cg.dlq:1", NULL};
    sw_test_mock_t mock;
    SW_ASSERT_TRUE(sw_test_mock_start(&mock, dir, 0, false, topics));
    sw_test_daemon_t d;
    sw_test_daemon_init(&d, "run", dir, "run", mock.boot);
    static const char *const props[] = {"input.topics=cg.in",
                                        "output.topic=cg.out",
                                        "dlq.topic=cg.dlq",
                                        "group.id=cg",
                                        "repartition=off",
                                        "state.restore=off",
                                        NULL};
    sw_test_daemon_xs(&d, props);
    unsetenv("STORMWATCH_WORKER_THREADS");

    /* The daemon inherits the cgroup this process is in when it forks:
     * join the child, start it, go back. */
    char procs[1600];
    snprintf(procs, sizeof(procs), "%s/cgroup.procs", child);
    snprintf(pid, sizeof(pid), "%ld", (long)getpid());
    if (!put(procs, pid)) {
        snprintf(why, sizeof(why), "cannot join %s: %s", child, strerror(errno));
        sw_test_mock_stop(&mock);
        rmdir(child);
        printf("skipped: %s\n", why);
        skip();
    }
    bool started = sw_test_daemon_start(&d);
    snprintf(procs, sizeof(procs), "%s/cgroup.procs", parent);
    bool back = put(procs, pid);
    SW_ASSERT(back, "cannot move back to %s: %s", parent, strerror(errno));
    SW_ASSERT_TRUE(started);

    char needle[300];
    snprintf(needle, sizeof(needle),
             "worker.threads=1 (cgroup %s 50000/100000 = 0.5 CPUs, rounded up)",
             v2 ? "cpu.max" : "cpu.cfs_quota_us/cpu.cfs_period_us");
    bool seen = sw_test_daemon_wait_log(&d, needle, 1, 60000);
    sw_buf_t log;
    sw_buf_init(&log);
    sw_test_read_file(d.log, &log);
    sw_buf_putc(&log, '\0');
    int status = sw_test_daemon_stop(&d, 30000);
    sw_test_mock_stop(&mock);
    rmdir(child);
    SW_ASSERT(seen, "no \"%s\" in %s:\n%s", needle, d.log, log.data);
    SW_ASSERT_I64(status, 0);
    sw_buf_clear(&log);
    printf("ok - run in a cgroup of 0.5 CPUs: worker.threads=1, said so\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_run_under_quota, sw_test_kill_children),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
