/*
 * Loading a library's functions at first use (src/util/sw_dl.c): all or
 * none into the caller's table, the missing library or function named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sw_dl.h"
#include "sw_testlib.h"

typedef struct {
    size_t (*len)(const char *);
    int (*cmp)(const char *, const char *);
} api_t;

static size_t stand_in_len(const char *s)
{
    (void)s;
    return 999;
}

static const sw_dl_sym_t good[] = {
    {"strlen", offsetof(api_t, len)},
    {"strcmp", offsetof(api_t, cmp)},
};

static void test_loads_every_function(void **state)
{
    (void)state;
    api_t api = {stand_in_len, NULL};
    char err[256] = "";
    void *h = sw_dl_load("libc.so.6", good, 2, &api, sizeof(api), err, sizeof(err));
    SW_ASSERT_NOT_NULL(h);
    SW_ASSERT_STREQ(err, "");
    SW_ASSERT_I64((int64_t)api.len("four"), 4);
    SW_ASSERT_TRUE(api.cmp("a", "b") < 0);
}

static void test_missing_function_leaves_table(void **state)
{
    (void)state;
    static const sw_dl_sym_t bad[] = {
        {"strlen", offsetof(api_t, len)},
        {"sw_no_such_function", offsetof(api_t, cmp)},
    };
    api_t api = {stand_in_len, NULL};
    char err[256] = "";
    SW_ASSERT_NULL(sw_dl_load("libc.so.6", bad, 2, &api, sizeof(api), err, sizeof(err)));
    SW_ASSERT_STREQ(err, "libc.so.6 lacks a function: sw_no_such_function");
    /* All or none: the stand-in found first is still in place. */
    SW_ASSERT_TRUE(api.len == stand_in_len);
    SW_ASSERT_NULL(api.cmp);
}

static void test_missing_library_named(void **state)
{
    (void)state;
    api_t api = {stand_in_len, NULL};
    char err[256] = "";
    SW_ASSERT_NULL(sw_dl_load("libsw-absent.so.9", good, 2, &api, sizeof(api), err, sizeof(err)));
    SW_ASSERT_CONTAINS(err, "libsw-absent.so.9");
    SW_ASSERT_TRUE(api.len == stand_in_len);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loads_every_function),
        cmocka_unit_test(test_missing_function_leaves_table),
        cmocka_unit_test(test_missing_library_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
