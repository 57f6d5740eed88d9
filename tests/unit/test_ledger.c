/*
 * The daemon's delivery ledger (src/daemon/sw_ledger.c), without Kafka: a
 * commit names at most the oldest input offset with an unacknowledged
 * record, whatever order the acknowledgements come in; an offset whose
 * records are all acknowledged no longer holds it back; a refused record
 * holds it for good; a refused snapshot commit is sent again; the tokens
 * of undelivered records give the age of the oldest, however they leave.
 * No clock: times are arguments. Runs in milliseconds (also under TSan).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sw_ledger.h"
#include "sw_testlib.h"

static void test_commit_below_oldest(void **state)
{
    (void)state;
    sw_ledger_t l;
    sw_ledger_init(&l);
    SW_ASSERT_I64(sw_ledger_committable(&l, -1), -1); /* nothing processed yet */
    SW_ASSERT_I64(sw_ledger_committable(&l, 10), 10); /* nothing waits: the next offset */
    sw_ledger_add(&l, 10);
    sw_ledger_add(&l, 10); /* a trigger and its crash record */
    sw_ledger_add(&l, 12);
    sw_ledger_add(&l, 15);
    SW_ASSERT_I64(sw_ledger_pending(&l), 3);
    SW_ASSERT_I64(sw_ledger_committable(&l, 16), 10);
    sw_ledger_ack(&l, 12); /* out of order: 10 still waits */
    SW_ASSERT_I64(sw_ledger_committable(&l, 16), 10);
    sw_ledger_ack(&l, 10);
    SW_ASSERT_I64(sw_ledger_committable(&l, 16), 10); /* one of its two records left */
    sw_ledger_ack(&l, 10);
    SW_ASSERT_I64(sw_ledger_committable(&l, 16), 15); /* 12 was acknowledged before */
    sw_ledger_ack(&l, 99);                            /* not ours: ignored */
    sw_ledger_ack(&l, 15);
    SW_ASSERT_I64(sw_ledger_pending(&l), 0);
    SW_ASSERT_I64(sw_ledger_committable(&l, 16), 16);
    sw_ledger_clear(&l);
}

/* Many offsets through the ring (it grows and wraps), acknowledged in a
 * scrambled order: the committable offset never passes an unacknowledged
 * one and never goes back. */
static void test_ring_scrambled(void **state)
{
    (void)state;
    enum { N = 1000 };
    sw_ledger_t l;
    sw_ledger_init(&l);
    static bool acked[N];
    uint64_t x = 88172645463325252ull;
    int64_t last = -1;
    int64_t base = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            acked[i] = false;
            sw_ledger_add(&l, base + i);
        }
        for (int done = 0; done < N;) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int i = (int)(x % N);
            if (acked[i]) continue;
            acked[i] = true;
            done++;
            sw_ledger_ack(&l, base + i);
            int64_t c = sw_ledger_committable(&l, base + N);
            int first = 0;
            while (first < N && acked[first]) first++;
            SW_ASSERT_I64(c, base + first);
            SW_ASSERT(c >= last, "committable went back from %lld to %lld", (long long)last,
                      (long long)c);
            last = c;
        }
        base += N;
    }
    SW_ASSERT_I64(sw_ledger_pending(&l), 0);
    sw_ledger_clear(&l);
}

static void test_refused_record(void **state)
{
    (void)state;
    sw_ledger_t l;
    sw_ledger_init(&l);
    sw_ledger_add(&l, 5);
    sw_ledger_add(&l, 6);
    sw_ledger_refuse(&l); /* 5's record never comes back */
    sw_ledger_ack(&l, 6);
    SW_ASSERT_TRUE(l.failed);
    SW_ASSERT_I64(sw_ledger_committable(&l, 100), 5);
    sw_ledger_clear(&l);
}

static void test_commit_answers(void **state)
{
    (void)state;
    sw_ledger_t l;
    sw_ledger_init(&l);
    SW_ASSERT_I64(l.committed_x, -1);
    SW_ASSERT_I64(l.confirmed_x, -1);
    sw_ledger_commit_sent(&l, 100);
    sw_ledger_commit_answer(&l, 100, true);
    SW_ASSERT_I64(l.confirmed_x, 100);
    sw_ledger_commit_sent(&l, 200);
    sw_ledger_commit_answer(&l, 200, false); /* refused: unsent, taken again */
    SW_ASSERT_I64(l.committed_x, 100);
    SW_ASSERT_I64(l.confirmed_x, 100);
    sw_ledger_commit_sent(&l, 300);
    sw_ledger_commit_answer(&l, 200, false); /* an older one's refusal changes nothing */
    SW_ASSERT_I64(l.committed_x, 300);
    sw_ledger_commit_answer(&l, 300, true);
    sw_ledger_commit_answer(&l, 250, true); /* a late answer never moves it back */
    SW_ASSERT_I64(l.confirmed_x, 300);
    sw_ledger_clear(&l);
}

static void test_tokens(void **state)
{
    (void)state;
    sw_tokens_t ts = {0};
    SW_ASSERT_I64(sw_tokens_oldest_ms(&ts), 0);
    sw_token_t *a = sw_token_new(1, SW_TOK_RECORD), *b = sw_token_new(1, SW_TOK_RECORD),
               *c = sw_token_new(2, SW_TOK_RECORD);
    SW_ASSERT_TRUE(sw_tokens_add(&ts, a, 1000)); /* the oldest now */
    SW_ASSERT_FALSE(sw_tokens_add(&ts, b, 2000));
    SW_ASSERT_FALSE(sw_tokens_add(&ts, c, 3000));
    SW_ASSERT_I64(sw_tokens_oldest_ms(&ts), 1000);
    SW_ASSERT_FALSE(sw_tokens_del(&ts, b)); /* from the middle */
    SW_ASSERT_I64(sw_tokens_oldest_ms(&ts), 1000);
    SW_ASSERT_TRUE(sw_tokens_del(&ts, a));
    SW_ASSERT_I64(sw_tokens_oldest_ms(&ts), 3000);
    SW_ASSERT_TRUE(sw_tokens_del(&ts, c));
    SW_ASSERT_I64(ts.n, 0);
    SW_ASSERT_I64(sw_tokens_oldest_ms(&ts), 0);
    SW_ASSERT_NULL(ts.tail);
    free(a);
    free(b);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commit_below_oldest),
        cmocka_unit_test(test_ring_scrambled),
        cmocka_unit_test(test_refused_record),
        cmocka_unit_test(test_commit_answers),
        cmocka_unit_test(test_tokens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
