/*
 * The round/pass scheduler of `stormwatch run` (used by sw_run_work.c).
 *
 * A round hands a set of jobs (the partitions with messages to decode and
 * analyse) to passes: in a pass, the worker threads and the calling thread
 * take jobs one at a time, largest first (left()), and work() runs each on
 * exactly one thread; the pass ends when every job taken is done. Then,
 * on the calling thread alone, apply() sees each job in turn (the daemon
 * sends what the pass found); a job with work left (it stopped at a record
 * that had to be sent first) goes on in the next pass. Between passes and
 * rounds no worker runs, so the caller owns every job again.
 *
 * Threads: the calling thread is worker 0; workers 1.. are threads of their
 * own that wait for a pass. Everything a pass gives them (the pass pointer,
 * the job list) is published under the scheduler's lock; what work() writes
 * into a job is seen by apply() after the pass (the lock again). A worker
 * sees a pass only as the const pointer given to sw_sched_round().
 *
 * Pure: no librdkafka, no clock, no I/O; tests/unit/test_sched.c (also under
 * ThreadSanitizer).
 */
#ifndef SW_SCHED_H
#define SW_SCHED_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sw_sched_s sw_sched_t;

/** Work on @p job during a pass, on worker @p worker (0: the caller's thread). */
typedef void (*sw_sched_work_fn)(const void *pass, int worker, void *job);

/** What a round asks of its caller (each called on the caller's thread). */
typedef struct sw_sched_hooks_s {
    /** Work @p job has left this round (0: done). */
    size_t (*left)(const void *job);
    /** Before each pass, with the jobs in the order they are taken (may be NULL). */
    void (*begin)(void *ctx, void *const *jobs, size_t njobs);
    /** After each pass, each job of it in turn. */
    void (*apply)(void *ctx, void *job);
    /** Before each pass: true ends the round (may be NULL). */
    bool (*stop)(void *ctx);
    void *ctx;
} sw_sched_hooks_t;

/**
 * @brief A scheduler with @p threads workers in all (the caller's thread
 *        included; at least 1).
 * @param started set to the workers running: fewer than asked when a
 *        thread could not start (@p errstr then says why).
 * @returns caller frees with sw_sched_destroy().
 */
sw_sched_t *sw_sched_new(int threads, sw_sched_work_fn work, int *started, char *errstr,
                         size_t errstr_size);

/** @brief Stop and join the threads, free (accepts NULL). */
void sw_sched_destroy(sw_sched_t *s);

/** @brief The workers, the caller's thread included. */
int sw_sched_threads(const sw_sched_t *s);

/**
 * @brief One round over @p jobs (reordered and overwritten): passes until
 *        no job has work left or hooks->stop() says so.
 * @param pass borrowed by the workers during each pass (what they see).
 * @returns the passes run.
 */
size_t sw_sched_round(sw_sched_t *s, const void *pass, void **jobs, size_t njobs,
                      const sw_sched_hooks_t *hooks);

#endif /* SW_SCHED_H */
