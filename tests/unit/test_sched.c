/*
 * The daemon's round/pass scheduler (src/daemon/sw_sched.c), without
 * Kafka: with 1, 2, 3 and 5 workers, over many rounds of jobs of uneven
 * sizes with "records" that end a job's turn in a pass, every item is
 * worked on exactly once and in order within its job, a job is never on
 * two threads at once, apply() runs on the caller's thread only and sees
 * every pass's work finished, passes take jobs largest first, a round
 * needs as many passes as its job with most records (+1), and stop() ends
 * a round. Runs in about a second (also under ThreadSanitizer).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sw_sched.h"
#include "sw_testlib.h"

#define MAX_ITEMS 300

typedef struct job_s {
    int n;                  /* items */
    bool record[MAX_ITEMS]; /* the item ends the job's turn in a pass */
    int done[MAX_ITEMS];    /* times worked on */
    int order[MAX_ITEMS];   /* when, within the job (must ascend) */
    int pos, seq;
    atomic_int on; /* threads on it now (must stay <= 1) */
    int max_on;
    int workers_seen; /* bit per worker */
} job_t;

typedef struct ctx_s {
    pthread_t main;
    int applies, begins, bad_order, off_main;
    int unfinished; /* apply() saw a job still being worked on */
    int stop_after; /* passes, then stop() (0: never) */
    int passes;
} ctx_t;

typedef struct pass_s {
    int id;
} pass_t;

static void work(const void *pass, int worker, void *arg)
{
    (void)pass;
    job_t *j = arg;
    int on = atomic_fetch_add(&j->on, 1) + 1;
    if (on > j->max_on) j->max_on = on;
    j->workers_seen |= 1 << worker;
    while (j->pos < j->n) {
        int i = j->pos++;
        j->done[i]++;
        j->order[i] = j->seq++;
        if (j->record[i]) break; /* sent before the job goes on */
    }
    atomic_fetch_sub(&j->on, 1);
}

static size_t left(const void *arg)
{
    const job_t *j = arg;
    return (size_t)(j->n - j->pos);
}

static void begin(void *arg, void *const *jobs, size_t njobs)
{
    ctx_t *c = arg;
    c->begins++;
    c->passes++;
    for (size_t i = 1; i < njobs; i++)
        if (left(jobs[i - 1]) < left(jobs[i])) c->bad_order++;
}

static void apply(void *arg, void *job)
{
    ctx_t *c = arg;
    job_t *j = job;
    c->applies++;
    if (!pthread_equal(pthread_self(), c->main)) c->off_main++;
    if (atomic_load(&j->on) != 0) c->unfinished++;
}

static bool stop(void *arg)
{
    ctx_t *c = arg;
    return c->stop_after && c->passes >= c->stop_after;
}

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
    return g_rng;
}

static void rounds_with(int threads)
{
    char err[200];
    int started = 0;
    sw_sched_t *s = sw_sched_new(threads, work, &started, err, sizeof(err));
    SW_ASSERT(started == threads, "%d of %d workers: %s", started, threads, err);
    SW_ASSERT_I64(sw_sched_threads(s), threads);
    enum { JOBS = 12, ROUNDS = 150 };
    static job_t jobs[JOBS];
    int seen_workers = 0;
    for (int round = 0; round < ROUNDS; round++) {
        void *list[JOBS];
        size_t n = 1 + rnd() % JOBS;
        int most_records = 0;
        for (size_t k = 0; k < n; k++) {
            job_t *j = &jobs[k];
            memset(j, 0, sizeof(*j));
            j->n = (int)(rnd() % MAX_ITEMS);
            int records = 0;
            for (int i = 0; i < j->n; i++) {
                j->record[i] = rnd() % 37 == 0;
                records += j->record[i] && i + 1 < j->n;
            }
            if (records > most_records) most_records = records;
            list[k] = j;
        }
        ctx_t c = {.main = pthread_self()};
        sw_sched_hooks_t h = {left, begin, apply, stop, &c};
        pass_t p = {round};
        size_t passes = sw_sched_round(s, &p, list, n, &h);
        SW_ASSERT(c.bad_order == 0, "round %d: a pass took a smaller job before a larger", round);
        SW_ASSERT(c.off_main == 0, "round %d: apply() off the caller's thread", round);
        SW_ASSERT(c.unfinished == 0, "round %d: apply() saw a job still worked on", round);
        SW_ASSERT((int)passes <= most_records + 1, "round %d: %zu passes for %d records", round,
                  passes, most_records);
        for (size_t k = 0; k < n; k++) {
            job_t *j = &jobs[k];
            SW_ASSERT(j->max_on <= 1, "round %d job %zu: on %d threads at once", round, k,
                      j->max_on);
            SW_ASSERT_I64(j->pos, j->n);
            for (int i = 0; i < j->n; i++) {
                SW_ASSERT(j->done[i] == 1, "round %d job %zu item %d: worked on %d times", round, k,
                          i, j->done[i]);
                SW_ASSERT_I64(j->order[i], i);
            }
            seen_workers |= j->workers_seen;
        }
    }
    /* A round that stop() ends after one pass leaves the work where it was. */
    job_t *j = &jobs[0];
    memset(j, 0, sizeof(*j));
    j->n = 10;
    j->record[2] = true;
    void *one[1] = {j};
    ctx_t c = {.main = pthread_self(), .stop_after = 1};
    sw_sched_hooks_t h = {left, begin, apply, stop, &c};
    pass_t p = {-1};
    SW_ASSERT_I64(sw_sched_round(s, &p, one, 1, &h), 1);
    SW_ASSERT_I64(j->pos, 3);
    sw_sched_destroy(s);
    print_message("%d workers: %d rounds, every item once, in order; workers used: %#x\n", threads,
                  ROUNDS, seen_workers);
}

static void test_rounds(void **state)
{
    (void)state;
    rounds_with(1);
    rounds_with(2);
    rounds_with(3);
    rounds_with(5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
