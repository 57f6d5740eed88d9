/*
 * The container's memory limit from cgroup files (src/util/sw_cgroup.c):
 * v2's memory.max (a number or "max"), v1's memory.limit_in_bytes (a
 * number, or about 2^63 for none), neither.
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
