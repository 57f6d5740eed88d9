/*
 * The cgroup CPU quota behind the default worker.threads
 * (src/util/sw_cpus.c), over fake /sys/fs/cgroup trees holding what the
 * kernel writes: cgroup v2 cpu.max ("max 100000", "150000 100000") at the
 * root and in nested cgroups named by /proc/self/cgroup, cgroup v1
 * cpu.cfs_quota_us / cpu.cfs_period_us (-1 = none) in the cpu and
 * cpu,cpuacct mounts, a container whose own cgroup is the mount root, the
 * bound by the CPUs allowed, and malformed files named in the error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "sw_cpus.h"
#include "sw_testlib.h"

typedef struct {
    const char *path; /* under the fake root; "self" is the cgroup list */
    const char *text;
} file_t;

typedef struct {
    const char *name;
    file_t files[6];
    int allowed;
    int want_threads;
    double want_cpus;     /* -1: sw_cpus_quota fails */
    const char *want_why; /* a part of the clause */
} case_t;

/* Real contents: cpu.max as cgroup v2 writes it, the v1 files, and
 * /proc/self/cgroup lines as on a v1 host (this build machine), a v2 host
 * and a Kubernetes pod. */
static const case_t k_cases[] = {
    {"v2 no quota",
     {{"cgroup.controllers", "cpuset cpu io memory pids\n"},
      {"cpu.max", "max 100000\n"},
      {"self", "0::/\n"}},
     8,
     8,
     0,
     "no cgroup CPU quota; the 8 CPUs this process may use"},
    {"v2 1.5 CPUs",
     {{"cgroup.controllers", "cpu\n"}, {"cpu.max", "150000 100000\n"}, {"self", "0::/\n"}},
     8,
     2,
     1.5,
     "cgroup cpu.max 150000/100000 = 1.5 CPUs, rounded up"},
    {"v2 exactly 2",
     {{"cgroup.controllers", "cpu\n"}, {"cpu.max", "200000 100000\n"}, {"self", "0::/\n"}},
     8,
     2,
     2.0,
     "cgroup cpu.max 200000/100000 = 2 CPUs"},
    {"v2 nested pod",
     {{"cgroup.controllers", "cpu\n"},
      {"kubepods.slice/cpu.max", "max 100000\n"},
      {"kubepods.slice/pod-a.slice/cpu.max", "250000 100000\n"},
      {"kubepods.slice/pod-a.slice/cri-c1.scope/cpu.max", "max 100000\n"},
      {"self", "0::/kubepods.slice/pod-a.slice/cri-c1.scope\n"}},
     16,
     3,
     2.5,
     "cgroup cpu.max 250000/100000 = 2.5 CPUs, rounded up"},
    {"v2 smallest level wins",
     {{"cgroup.controllers", "cpu\n"},
      {"a/cpu.max", "50000 50000\n"},
      {"a/b/cpu.max", "300000 100000\n"},
      {"self", "0::/a/b\n"}},
     16,
     1,
     1.0,
     "cgroup cpu.max 50000/50000 = 1 CPU"},
    {"v2 namespaced container (own cgroup is the root)",
     {{"cgroup.controllers", "cpu\n"},
      {"cpu.max", "50000 100000\n"},
      {"self", "0::/system.slice/docker-abc.scope\n"}},
     4,
     1,
     0.5,
     "cgroup cpu.max 50000/100000 = 0.5 CPUs, rounded up"},
    {"v2 bounded by affinity",
     {{"cgroup.controllers", "cpu\n"}, {"cpu.max", "800000 100000\n"}, {"self", "0::/\n"}},
     2,
     2,
     8.0,
     "= 8 CPUs, bounded by the 2 CPUs this process may use"},
    {"v1 none",
     {{"cpu,cpuacct/cpu.cfs_quota_us", "-1\n"},
      {"cpu,cpuacct/cpu.cfs_period_us", "100000\n"},
      {"self", "4:cpu,cpuacct:/\n3:memory:/\n0::/\n"}},
     2,
     2,
     0,
     "no cgroup CPU quota"},
    {"v1 child cgroup",
     {{"cpu/cpu.cfs_quota_us", "-1\n"},
      {"cpu/cpu.cfs_period_us", "100000\n"},
      {"cpu/swtest/cpu.cfs_quota_us", "50000\n"},
      {"cpu/swtest/cpu.cfs_period_us", "100000\n"},
      {"self",
       "9:name=systemd:/\n4:memory:/process_api/b0f8\n3:cpuset:/\n2:cpuacct:/\n"
       "1:cpu:/swtest\n0::/\n"}},
     2,
     1,
     0.5,
     "cgroup cpu.cfs_quota_us/cpu.cfs_period_us 50000/100000 = 0.5 CPUs, rounded up"},
    {"no cgroup mounted", {{"self", "0::/\n"}}, 3, 3, 0, "no cgroup CPU quota"},
    {"v2 malformed cpu.max",
     {{"cgroup.controllers", "cpu\n"}, {"cpu.max", "150000\n"}, {"self", "0::/\n"}},
     2,
     2,
     -1,
     "cpu.max: expected \"max PERIOD\" or \"QUOTA PERIOD\" (microseconds), got \"150000\""},
    {"v2 negative period",
     {{"cgroup.controllers", "cpu\n"}, {"cpu.max", "150000 -5\n"}, {"self", "0::/\n"}},
     2,
     2,
     -1,
     "got \"150000 -5\""},
    {"v1 malformed quota",
     {{"cpu/cpu.cfs_quota_us", "lots\n"},
      {"cpu/cpu.cfs_period_us", "100000\n"},
      {"self", "1:cpu:/\n"}},
     2,
     2,
     -1,
     "cpu.cfs_quota_us: expected -1 or a positive number of microseconds, got \"lots\""},
};

static void put_file(const char *root, const char *rel, const char *text)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(k_cases) / sizeof(k_cases[0]); i++) {
        const case_t *c = &k_cases[i];
        char root[1024], self[1100], cmd[2200];
        snprintf(root, sizeof(root), "%s/cpus-%zu", sw_test_tmp(), i);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", root, root);
        SW_ASSERT_I64(system(cmd), 0);
        snprintf(self, sizeof(self), "%s/self", root);
        for (size_t j = 0; j < 6 && c->files[j].path; j++)
            put_file(root, c->files[j].path, c->files[j].text);
        double cpus = 123;
        char src[200], err[600], why[800];
        sw_err_t rc = sw_cpus_quota(root, self, &cpus, src, sizeof(src), err, sizeof(err));
        fprintf(stderr, "case %s\n", c->name);
        if (c->want_cpus < 0) {
            SW_ASSERT_I64(rc, SW_ERR_PARSE);
            SW_ASSERT_CONTAINS(err, c->want_why);
            SW_ASSERT_CONTAINS(err, root); /* the file's full path */
        } else {
            SW_ASSERT_I64(rc, SW_OK);
            SW_ASSERT(cpus == c->want_cpus, "cpus %g, want %g", cpus, c->want_cpus);
        }
        int n = sw_cpus_default_threads(root, self, c->allowed, why, sizeof(why));
        SW_ASSERT_I64(n, c->want_threads);
        SW_ASSERT_CONTAINS(why, c->want_why);
        if (c->want_cpus < 0) SW_ASSERT_CONTAINS(why, "cgroup quota unreadable");
        if (c->want_cpus > 0 && (double)(int)c->want_cpus == c->want_cpus)
            SW_ASSERT_LACKS(why, "rounded up");
    }
}

/* This machine's own cgroup: whatever it is, the answer is between 1 and
 * the CPUs allowed and says where it came from. */
static void test_this_machine(void **state)
{
    (void)state;
    char why[800];
    int n = sw_cpus_default_threads("/sys/fs/cgroup", "/proc/self/cgroup", 64, why, sizeof(why));
    SW_ASSERT(n >= 1 && n <= 64, "%d threads", n);
    SW_ASSERT(strstr(why, "cgroup") != NULL, "why \"%s\"", why);
    printf("this machine: %d (%s)\n", n, why);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_this_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
