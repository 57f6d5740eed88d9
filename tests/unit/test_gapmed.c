/*
 * sw_gapmed: random adds and removals (narrow ranges full of duplicates,
 * wide ranges, nanosecond gaps with jitter, a drifting median, values near
 * INT64_MAX) checked against a sorted array: after every step the two
 * middle values must equal the reference's, whether the bracket answered or
 * had to be rebuilt. The test also checks that both happen (the bracket is
 * not rebuilt every time, and a median that moves forces a rebuild), that
 * an unqueried bracket is dropped, and that the buckets are monotonic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_gapmed.h"
#include "sw_testlib.h"

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef enum { NARROW, WIDE, JITTER, DRIFT, HUGE } mode_t_;

static int64_t draw(uint64_t *s, mode_t_ mode, size_t step)
{
    switch (mode) {
    case NARROW: return 1 + (int64_t)(rng(s) % 7);
    case WIDE: return 1 + (int64_t)(rng(s) % 1000000000);
    case JITTER: return 100000000 - 2000000 + (int64_t)(rng(s) % 4000001);
    case DRIFT: return 1000 + (int64_t)step * 50 + (int64_t)(rng(s) % 20000);
    case HUGE: return INT64_MAX - (int64_t)(rng(s) % 1000);
    }
    return 1;
}

typedef struct counts_s {
    size_t answered, rebuilt, even, odd;
    size_t narrow; /* answers from a bracket holding at most n/4 + 64 values */
} counts_t;

/* Rebuild from the reference's values, in the order of the array. */
static void rebuild(sw_gapmed_t *gm, const int64_t *v, size_t n, uint64_t *hist)
{
    memset(hist, 0, SW_GAPMED_BUCKETS * sizeof(*hist));
    for (size_t i = 0; i < n; i++) sw_gapmed_hist_add(hist, v[i]);
    sw_gapmed_rebuild_begin(gm, hist);
    SW_ASSERT_I64(sw_gapmed_size(gm), n);
    for (size_t i = n; i-- > 0;) sw_gapmed_rebuild_add(gm, v[i]);
}

static void check(sw_gapmed_t *gm, const int64_t *ref, size_t n, uint64_t *hist, counts_t *c)
{
    SW_ASSERT_I64(sw_gapmed_size(gm), n);
    if (!n) return;
    if (gm->valid) SW_ASSERT_I64(gm->n_below + sw_mset_size(&gm->mid) + gm->n_above, n);
    int64_t a = 0, b = 0;
    if (sw_gapmed_middle(gm, &a, &b)) {
        c->answered++;
        if (sw_mset_size(&gm->mid) <= n / 4 + 64) c->narrow++;
    } else {
        rebuild(gm, ref, n, hist);
        SW_ASSERT_TRUE(sw_gapmed_middle(gm, &a, &b));
        c->rebuilt++;
    }
    SW_ASSERT_I64(a, ref[(n - 1) / 2]);
    SW_ASSERT_I64(b, ref[n / 2]);
    if (n % 2) c->odd++;
    else c->even++;
}

/* @p quiet: steps without a query after each queried stretch. */
static counts_t run(uint64_t seed, mode_t_ mode, size_t steps, size_t target, size_t quiet)
{
    sw_gapmed_t gm;
    sw_gapmed_init(&gm);
    uint64_t *hist = malloc(SW_GAPMED_BUCKETS * sizeof(*hist));
    int64_t *ref = malloc((steps + 1) * sizeof(*ref));
    size_t n = 0;
    uint64_t s = seed;
    counts_t c = {0, 0, 0, 0, 0};
    for (size_t step = 0; step < steps; step++) {
        /* Grow to about target values, then hover around it. */
        bool add = n == 0 || (n < target ? rng(&s) % 100 < 80 : rng(&s) % 100 < 50);
        if (add) {
            int64_t x = draw(&s, mode, step);
            size_t i = n;
            while (i > 0 && ref[i - 1] > x) {
                ref[i] = ref[i - 1];
                i--;
            }
            ref[i] = x;
            n++;
            sw_gapmed_add(&gm, x);
        } else {
            /* Oldest-first removal for the drift, random otherwise. */
            size_t i = mode == DRIFT ? rng(&s) % (n < 8 ? n : 8) : rng(&s) % n;
            sw_gapmed_del(&gm, ref[i]);
            memmove(ref + i, ref + i + 1, (n - i - 1) * sizeof(*ref));
            n--;
        }
        if (quiet && (step / quiet) % 2) {
            SW_ASSERT_I64(sw_gapmed_size(&gm), n);
            continue;
        }
        check(&gm, ref, n, hist, &c);
    }
    free(ref);
    free(hist);
    sw_gapmed_clear(&gm);
    return c;
}

static void test_narrow_duplicates(void **state)
{
    (void)state;
    counts_t c = run(1, NARROW, 30000, 3000, 0);
    SW_ASSERT_TRUE(c.answered > 10 * c.rebuilt);
    SW_ASSERT_TRUE(c.even > 1000 && c.odd > 1000);
}

static void test_wide(void **state)
{
    (void)state;
    counts_t c = run(2, WIDE, 30000, 5000, 0);
    SW_ASSERT_TRUE(c.narrow > c.answered * 9 / 10);
    SW_ASSERT_TRUE(c.answered > 10 * c.rebuilt);
    SW_ASSERT_TRUE(c.even > 1000 && c.odd > 1000);
}

static void test_jitter(void **state)
{
    (void)state;
    counts_t c = run(3, JITTER, 30000, 5000, 0);
    SW_ASSERT_TRUE(c.narrow > c.answered * 9 / 10);
    SW_ASSERT_TRUE(c.answered > 10 * c.rebuilt);
    SW_ASSERT_TRUE(c.even > 1000 && c.odd > 1000);
}

/* The median keeps moving up: the bracket must be rebuilt, repeatedly. */
static void test_drift(void **state)
{
    (void)state;
    counts_t c = run(4, DRIFT, 30000, 2000, 0);
    fprintf(stderr, "drift: %zu answered, %zu rebuilt\n", c.answered, c.rebuilt);
    SW_ASSERT_TRUE(c.rebuilt > 5);
    SW_ASSERT_TRUE(c.answered > c.rebuilt);
}

static void test_huge_values(void **state)
{
    (void)state;
    counts_t c = run(5, HUGE, 10000, 2000, 0);
    SW_ASSERT_TRUE(c.answered > c.rebuilt);
}

/* Long stretches without a query: the bracket is dropped and rebuilt. */
static void test_quiet_stretches(void **state)
{
    (void)state;
    counts_t c = run(6, JITTER, 40000, 500, 3000);
    SW_ASSERT_TRUE(c.rebuilt > 3);
}

static void test_unknown_removal_invalidates(void **state)
{
    (void)state;
    sw_gapmed_t gm;
    sw_gapmed_init(&gm);
    uint64_t *hist = malloc(SW_GAPMED_BUCKETS * sizeof(*hist));
    int64_t ref[1000];
    for (size_t i = 0; i < 1000; i++) {
        ref[i] = 1000 + (int64_t)i;
        sw_gapmed_add(&gm, ref[i]);
    }
    rebuild(&gm, ref, 1000, hist);
    int64_t a, b;
    SW_ASSERT_TRUE(sw_gapmed_middle(&gm, &a, &b));
    SW_ASSERT_I64(a, 1499);
    SW_ASSERT_I64(b, 1500);
    /* 1500 was added, 1500 + 0.5 never: the bracket no longer trusts itself. */
    sw_gapmed_add(&gm, 5);
    sw_gapmed_del(&gm, 1500);
    SW_ASSERT_TRUE(gm.valid);
    gm.n++;
    sw_gapmed_del(&gm, 1500); /* a second time: not there */
    SW_ASSERT_FALSE(gm.valid);
    SW_ASSERT_FALSE(sw_gapmed_middle(&gm, &a, &b));
    free(hist);
    sw_gapmed_clear(&gm);
}

static void test_buckets_monotonic(void **state)
{
    (void)state;
    uint64_t s = 9;
    SW_ASSERT_TRUE(sw_gapmed_bucket(INT64_MAX) < SW_GAPMED_BUCKETS);
    for (int64_t v = 1; v < 5000; v++)
        SW_ASSERT_TRUE(sw_gapmed_bucket(v) <= sw_gapmed_bucket(v + 1));
    for (int i = 0; i < 100000; i++) {
        int64_t a = 1 + (int64_t)(rng(&s) >> (1 + rng(&s) % 63));
        int64_t b = 1 + (int64_t)(rng(&s) >> (1 + rng(&s) % 63));
        if (a > b) {
            int64_t t = a;
            a = b;
            b = t;
        }
        SW_ASSERT_TRUE(sw_gapmed_bucket(a) <= sw_gapmed_bucket(b));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_narrow_duplicates),
        cmocka_unit_test(test_wide),
        cmocka_unit_test(test_jitter),
        cmocka_unit_test(test_drift),
        cmocka_unit_test(test_huge_values),
        cmocka_unit_test(test_quiet_stretches),
        cmocka_unit_test(test_unknown_removal_invalidates),
        cmocka_unit_test(test_buckets_monotonic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
