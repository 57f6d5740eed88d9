/*
 * sw_mset: random inserts and removals checked against a sorted array;
 * every order statistic is compared after each step (block splits, merges
 * and Fenwick rebuilds all get exercised).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_mset.h"
#include "sw_testlib.h"

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void ref_insert(int64_t *v, size_t *n, int64_t x)
{
    size_t i = *n;
    while (i > 0 && v[i - 1] > x) {
        v[i] = v[i - 1];
        i--;
    }
    v[i] = x;
    (*n)++;
}

static void run(uint64_t seed, size_t steps, int64_t range)
{
    sw_mset_t ms;
    sw_mset_init(&ms);
    int64_t *ref = malloc(steps * sizeof(*ref));
    size_t n = 0;
    uint64_t s = seed;
    for (size_t step = 0; step < steps; step++) {
        bool ins = n == 0 || rng(&s) % 100 < 55;
        if (ins) {
            int64_t x = (int64_t)(rng(&s) % (uint64_t)range) - range / 4;
            sw_mset_insert(&ms, x);
            ref_insert(ref, &n, x);
        } else {
            size_t i = rng(&s) % n;
            int64_t x = ref[i];
            SW_ASSERT_TRUE(sw_mset_remove(&ms, x));
            memmove(ref + i, ref + i + 1, (n - i - 1) * sizeof(*ref));
            n--;
        }
        SW_ASSERT_I64(sw_mset_size(&ms), n);
        if (step % 97 == 0 || n < 8)
            for (size_t k = 0; k < n; k++) SW_ASSERT_I64(sw_mset_kth(&ms, k), ref[k]);
        else if (n) SW_ASSERT_I64(sw_mset_kth(&ms, n / 2), ref[n / 2]);
    }
    /* Removing a value that is not there fails and changes nothing. */
    SW_ASSERT_FALSE(sw_mset_remove(&ms, range * 10));
    SW_ASSERT_I64(sw_mset_size(&ms), n);
    free(ref);
    sw_mset_clear(&ms);
}

static void test_small_range_many_duplicates(void **state)
{
    (void)state;
    run(1, 20000, 7);
}

static void test_wide_range(void **state)
{
    (void)state;
    run(2, 20000, 1000000000);
}

static void test_grow_then_drain(void **state)
{
    (void)state;
    sw_mset_t ms;
    sw_mset_init(&ms);
    for (int64_t i = 0; i < 5000; i++) sw_mset_insert(&ms, (i * 7919) % 5000);
    for (int64_t k = 0; k < 5000; k++) SW_ASSERT_I64(sw_mset_kth(&ms, (size_t)k), k);
    for (int64_t i = 0; i < 5000; i += 2) SW_ASSERT_TRUE(sw_mset_remove(&ms, i));
    for (int64_t k = 0; k < 2500; k++) SW_ASSERT_I64(sw_mset_kth(&ms, (size_t)k), 2 * k + 1);
    for (int64_t i = 1; i < 5000; i += 2) SW_ASSERT_TRUE(sw_mset_remove(&ms, i));
    SW_ASSERT_I64(sw_mset_size(&ms), 0);
    SW_ASSERT_I64(ms.nb, 0);
    sw_mset_clear(&ms);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_range_many_duplicates),
        cmocka_unit_test(test_wide_range),
        cmocka_unit_test(test_grow_then_drain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
