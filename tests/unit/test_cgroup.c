/*
 * The container's memory limit from cgroup files (src/util/sw_cgroup.c):
 * v2's memory.max (a number or "max"), v1's memory.limit_in_bytes (a
 * number, or about 2^63 for none), neither; and what a consumer may
 * prefetch within a limit (sw_cgroup_prefetch_kb, issue 35).
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

#include "sw_cgroup.h"
#include "sw_testlib.h"

static void put(const char *dir, const char *file, const char *text)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    SW_ASSERT_NOT_NULL(f);
    fputs(text, f);
    fclose(f);
}

static void test_limits(void **state)
{
    (void)state;
    char dir[900], cmd[2000];
    snprintf(dir, sizeof(dir), "%s/test_cgroup_%d", sw_test_tmp(), (int)getpid());
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s/memory'", dir, dir);
    SW_ASSERT_I64(system(cmd), 0);
    SW_ASSERT_I64(sw_cgroup_memory_limit(dir), 0); /* no files */
    put(dir, "memory/memory.limit_in_bytes", "9223372036854771712\n");
    SW_ASSERT_I64(sw_cgroup_memory_limit(dir), 0); /* v1 without a limit */
    put(dir, "memory/memory.limit_in_bytes", "536870912\n");
    SW_ASSERT_I64(sw_cgroup_memory_limit(dir), 536870912);
    put(dir, "memory.max", "max\n");
    SW_ASSERT_I64(sw_cgroup_memory_limit(dir), 536870912); /* v2 says none: v1's */
    put(dir, "memory.max", "1073741824\n");
    SW_ASSERT_I64(sw_cgroup_memory_limit(dir), 1073741824);
    put(dir, "memory.max", "garbage");
    SW_ASSERT_I64(sw_cgroup_memory_limit(dir), 536870912);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    SW_ASSERT_I64(system(cmd), 0);
}

/* The shipped pod (issue 35): 1 GiB, a 614 MiB engine budget, 12 input and
 * 12 repartition partitions. 32 MiB a partition (768 MiB) does not fit and
 * is lowered to what does; the shipped 6 MiB does. */
static void test_prefetch(void **state)
{
    (void)state;
    const int64_t gib = 1LL << 30, budget = 644245094;
    char why[600];
    int64_t kb = sw_cgroup_prefetch_kb(gib, budget, 32768, 24, why, sizeof(why));
    SW_ASSERT(kb < 32768 && kb >= SW_PREFETCH_MIN_KB, "lowered to %lld", (long long)kb);
    SW_ASSERT(kb * 1024 * 24 + budget <= gib - gib / 4, "%lld kB does not fit", (long long)kb);
    SW_ASSERT(kb * 1024 * 24 + budget > gib - gib / 4 - 24 * 1024, "%lld kB: not the largest",
              (long long)kb);
    SW_ASSERT_NOT_NULL(strstr(why, "32768 over 24 partitions"));
    SW_ASSERT_I64(sw_cgroup_prefetch_kb(gib, budget, 6144, 24, why, sizeof(why)), 6144);
    SW_ASSERT_STREQ(why, "");
    /* No limit, no partitions known: as set. */
    SW_ASSERT_I64(sw_cgroup_prefetch_kb(0, budget, 65536, 24, why, sizeof(why)), 65536);
    SW_ASSERT_I64(sw_cgroup_prefetch_kb(gib, budget, 65536, 0, why, sizeof(why)), 65536);
    /* A budget that leaves nothing: the floor, and the reason says to lower it. */
    kb = sw_cgroup_prefetch_kb(gib, gib, 4096, 64, why, sizeof(why));
    SW_ASSERT_I64(kb, SW_PREFETCH_MIN_KB);
    SW_ASSERT_NOT_NULL(strstr(why, "lower max.memory.bytes"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_prefetch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
