/*
 * The holds of an input partition (src/daemon/sw_hold.c), with an
 * injected clock: the origin hold asks for an unknown start offset at most
 * once a second, takes its snapshot, commits it when ready, drops a failed
 * one and retries after 200 ms, waits while a commit is in flight, takes a
 * refused commit again, and releases once a commit at or past its offset is
 * confirmed; the registry hold remembers the lowest offset that arrived
 * while held and resumes from it, unless the origin hold still holds.
 * Runs in milliseconds (also under ThreadSanitizer).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sw_hold.h"
#include "sw_testlib.h"

/* The partition as the daemon has it: the hold and its snapshot flow. */
typedef struct part_s {
    sw_hold_t h;
    sw_hold_snap_t s;
    int64_t next;
    int64_t start; /* what the start offset query answers (-1: unknown) */
    int asks, snapshots, commits, drops, releases;
} part_t;

/* What sw_run_origin_tick does with each step (without Kafka). */
static sw_hold_act_t tick(part_t *p, int64_t now)
{
    for (;;) {
        sw_hold_act_t a = sw_hold_origin_step(&p->h, &p->s, now);
        switch (a) {
        case SW_HOLD_ASK_START:
            p->asks++;
            p->s.last_snap_ms = now;
            p->h.origin_x = p->next = p->start;
            if (p->h.origin_x < 0) return a;
            continue;
        case SW_HOLD_DROP:
            p->drops++;
            p->s.active = false;
            continue;
        case SW_HOLD_COMMIT:
            p->commits++;
            p->s.committed_x = p->h.origin_x;
            p->s.active = false;
            return a;
        case SW_HOLD_SNAPSHOT:
            p->snapshots++;
            p->s.active = true;
            p->s.failed = false;
            p->s.ready = false;
            p->s.last_snap_ms = now;
            return a;
        case SW_HOLD_RELEASE: p->releases++; return a;
        case SW_HOLD_WAIT: return a;
        }
    }
}

static void init(part_t *p, int64_t origin_x, int64_t start)
{
    memset(p, 0, sizeof(*p));
    sw_hold_init(&p->h);
    p->h.origin = true;
    p->h.origin_x = origin_x;
    p->s.committed_x = p->s.confirmed_x = -1;
    p->start = start;
}

static void test_origin_happy(void **state)
{
    (void)state;
    part_t p;
    init(&p, 100, 100);
    SW_ASSERT_TRUE(sw_hold_held(&p.h));
    SW_ASSERT_I64(tick(&p, 1000), SW_HOLD_SNAPSHOT); /* last snapshot long ago */
    SW_ASSERT_I64(tick(&p, 1010), SW_HOLD_WAIT);     /* chunks in flight */
    p.s.ready = true;
    SW_ASSERT_I64(tick(&p, 1020), SW_HOLD_COMMIT);
    SW_ASSERT_I64(tick(&p, 1030), SW_HOLD_WAIT); /* the commit in flight */
    SW_ASSERT_I64(tick(&p, 5000), SW_HOLD_WAIT); /* however long it takes */
    p.s.confirmed_x = 100;
    SW_ASSERT_I64(tick(&p, 5010), SW_HOLD_RELEASE);
    SW_ASSERT_FALSE(p.h.origin);
    SW_ASSERT_FALSE(sw_hold_held(&p.h));
    SW_ASSERT_I64(p.snapshots, 1);
    SW_ASSERT_I64(p.commits, 1);
}

static void test_origin_failures(void **state)
{
    (void)state;
    part_t p;
    init(&p, 100, 100);
    p.s.last_snap_ms = 1000; /* just tried (in the rebalance callback) */
    SW_ASSERT_I64(tick(&p, 1100), SW_HOLD_WAIT);
    SW_ASSERT_I64(tick(&p, 1200), SW_HOLD_SNAPSHOT); /* 200 ms later */
    p.s.failed = true;                               /* a chunk was refused */
    SW_ASSERT_I64(tick(&p, 1250), SW_HOLD_WAIT);     /* dropped; too soon again */
    SW_ASSERT_I64(p.drops, 1);
    SW_ASSERT_FALSE(p.s.active);
    SW_ASSERT_I64(tick(&p, 1400), SW_HOLD_SNAPSHOT);
    p.s.ready = true;
    SW_ASSERT_I64(tick(&p, 1410), SW_HOLD_COMMIT);
    /* The broker refused the commit: the ledger makes it unsent again. */
    p.s.committed_x = p.s.confirmed_x;
    SW_ASSERT_I64(tick(&p, 1420), SW_HOLD_WAIT); /* 200 ms after the last one */
    SW_ASSERT_I64(tick(&p, 1600), SW_HOLD_SNAPSHOT);
    p.s.ready = true;
    SW_ASSERT_I64(tick(&p, 1610), SW_HOLD_COMMIT);
    p.s.confirmed_x = 120; /* a later snapshot's commit covers it */
    SW_ASSERT_I64(tick(&p, 1620), SW_HOLD_RELEASE);
    SW_ASSERT_I64(p.snapshots, 3);
}

static void test_origin_unknown_start(void **state)
{
    (void)state;
    part_t p;
    init(&p, -1, -1); /* the start offset could not be asked for */
    p.s.last_snap_ms = 0;
    SW_ASSERT_I64(tick(&p, 500), SW_HOLD_WAIT); /* asked less than a second ago */
    SW_ASSERT_I64(tick(&p, 1000), SW_HOLD_ASK_START);
    SW_ASSERT_I64(p.asks, 1);
    SW_ASSERT_I64(tick(&p, 1999), SW_HOLD_WAIT);
    p.start = 42;                                /* the brokers answer again */
    SW_ASSERT_I64(tick(&p, 2000), SW_HOLD_WAIT); /* asked; 200 ms before a snapshot */
    SW_ASSERT_I64(p.asks, 2);
    SW_ASSERT_I64(p.next, 42);
    SW_ASSERT_I64(tick(&p, 2200), SW_HOLD_SNAPSHOT);
    p.s.ready = true;
    SW_ASSERT_I64(tick(&p, 2210), SW_HOLD_COMMIT);
    p.s.confirmed_x = 42;
    SW_ASSERT_I64(tick(&p, 2220), SW_HOLD_RELEASE);
}

static void test_registry_hold(void **state)
{
    (void)state;
    sw_hold_t h;
    sw_hold_init(&h);
    SW_ASSERT_FALSE(sw_hold_held(&h));
    sw_hold_registry(&h, 13, 500, false);
    SW_ASSERT_TRUE(sw_hold_held(&h));
    sw_hold_note(&h, 510); /* the rest of the round, later rounds */
    sw_hold_note(&h, 499); /* an older one fetched before the pause */
    int64_t from = 0;
    SW_ASSERT_TRUE(sw_hold_registry_release(&h, &from));
    SW_ASSERT_I64(from, 499);
    SW_ASSERT_I64(h.from, -1);
    SW_ASSERT_FALSE(sw_hold_held(&h));
    /* Held by both: the registry's answer leaves it to the origin hold,
     * which resumes from the lowest offset. */
    h.origin = true;
    h.origin_x = 700;
    sw_hold_registry(&h, 14, 720, true);
    sw_hold_note(&h, 710);
    SW_ASSERT_FALSE(sw_hold_registry_release(&h, &from));
    SW_ASSERT_I64(from, 710);
    SW_ASSERT_I64(h.from, 710);
    SW_ASSERT_TRUE(sw_hold_held(&h));
    sw_hold_snap_t s = {false, false, false, 700, 700, 0};
    SW_ASSERT_I64(sw_hold_origin_step(&h, &s, 10000), SW_HOLD_RELEASE);
    SW_ASSERT_FALSE(sw_hold_held(&h));
    SW_ASSERT_I64(h.from, 710);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_origin_happy),
        cmocka_unit_test(test_origin_failures),
        cmocka_unit_test(test_origin_unknown_start),
        cmocka_unit_test(test_registry_hold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
