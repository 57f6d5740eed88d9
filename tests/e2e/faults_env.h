/*
 * What the test_faults_* tests share: the mock cluster of a scenario (every
 * scenario's topics, its control channel), its telemetry produced job by
 * job, the daemons, progress-based waits (committed offsets, events taken
 * in, topic ends, log lines) and the output held against an uninterrupted
 * run, job by job.
 */
#ifndef FAULTS_ENV_H
#define FAULTS_ENV_H

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sw_codec_telemetry.h"
#include "sw_daemon.h"
#include "sw_lines.h"
#include "sw_detect.h"
#include "sw_gen.h"
#include "sw_gen_crash.h"
#include "sw_partition.h"
#include "sw_proc.h"
#include "sw_testlib.h"

extern char g_boot[1024];
extern sw_test_mock_t g_mock;
/* repartition=on scenarios: records come from rep.<t> (their source headers);
 * repartition=auto ones: from in.<t> or rep.<t>. */
extern bool g_rep, g_auto;
extern char g_dir[512];

/* A scenario's telemetry: storm jobs "<prefix><k>", job k on partition k. */
typedef struct stream_s {
    sw_test_lines_t l;
    int jobs;
    char prefix[16];
} stream_t;

int make_stream(stream_t *s, const char *prefix, int jobs, int ranks, int samples, int storms,
                uint64_t seed);

void free_stream(stream_t *s);

/* Produce lines [from, to) of @p s to in.<t>, job j on partition j, with a
 * pause of @p pace_us every 100 messages. */
int produce(const stream_t *s, const char *t, int from, int to, useconds_t pace_us);

/* `stormwatch run` on topics in.<t>, out.<t>, ... as group g.<t>, its log
 * in run-<tag>.err; @p extra1 and @p extra2 are -X values or NULL. */
void daemon_start_xs(sw_test_daemon_t *d, const char *t, const char *tag, const char *const *extra);

void daemon_start(sw_test_daemon_t *d, const char *t, const char *tag, const char *extra1,
                  const char *extra2);

int stop(sw_test_daemon_t *d);

/* The output of topic out.<t> against an uninterrupted run of @p s. */
int check_output(const stream_t *s, const char *t, const char *what);

/* Joining a group that is already consuming takes the mock coordinator
 * several rounds: the members learn of the rebalance at their next heartbeat
 * (3 s), the coordinator waits session.timeout.ms - 1 s for them to rejoin,
 * and librdkafka 2.0.2's mock sometimes answers the cooperative SyncGroup
 * with ILLEGAL_GENERATION, so the whole assignment is lost and one more round
 * follows. Under CI load that has taken more than 30 s. */
#define JOIN_WAIT_MS 120000

/* The bound of a wait for progress: it fails only when the daemon makes
 * none (the waits return as soon as the progress is there). */
#define PROGRESS_WAIT_MS 180000

/* Wait until group g.<t> has committed @p want records of in.<t> (the sum of
 * its 4 partitions' committed offsets): a scenario's next step comes after
 * the daemon has taken in that much of the telemetry, whatever the load. An
 * absolute count, so that a step the daemon is already past goes on at once
 * (as a fixed sleep did when the daemon ran ahead of it). */
void wait_consumed(const char *t, int64_t want, const char *what);

/* The mock cluster of every scenario (one directory per SW_FAULTS_ONLY). */
int faults_setup(void **state);

/** @brief A fault test's main (the CI tier's skip, SW_FAULTS_ONLY's filter). */
int faults_main(const struct CMUnitTest *tests, size_t n);

#endif /* FAULTS_ENV_H */
