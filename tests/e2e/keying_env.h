/*
 * What the test_keying_* tests share: the generated input (12 jobs of 16
 * ranks with a storm each; its truth), producing it keyed the way common
 * shippers do, the scenario's mock cluster and instances, and the judge:
 * each job's records on the output topic against an uninterrupted engine
 * fed that job's events in a given order (one engine, one summary, the same
 * records, first causes counted).
 */
#ifndef KEYING_ENV_H
#define KEYING_ENV_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sw_codec_telemetry.h"
#include "sw_daemon.h"
#include "sw_gen.h"
#include "sw_log.h"
#include "sw_partition.h"
#include "sw_proc.h"
#include "sw_testlib.h"

#define NPARTS 8
#define NJOBS 12
#define NRANKS 16
extern char g_dir[512];
extern char g_boot[1024];
extern sw_test_mock_t g_mock;
extern int g_baseline;
extern const char *const *g_extra;

char *path_in(const char *name);

typedef enum keying_e { KEY_NONE, KEY_HOST, KEY_MIXED, KEY_JOB } keying_t;
extern const char *const k_keying[];

typedef struct msg_s {
    char *line;
    size_t len;
    char job[64];
    char host[64];
    int rank;
} msg_t;

typedef struct input_s {
    msg_t *m;
    size_t n;
    int truth[NJOBS]; /* storm rank per job index */
} input_t;

int make_input(input_t *in, uint64_t seed);

int make_input_opts(input_t *in, const sw_gen_opts_t *gopts);

void free_input(input_t *in);

/* Produce message i the way the scenario's producers would. */
bool send_one(rd_kafka_t *rk, const char *topic, const msg_t *m, size_t i, keying_t k);

/* Instance @p tag of scenario @p sc (log run-SC-TAG.err), started: binary
 * @p bin (NULL: this build's; an older release's in a rolling update),
 * repartition=@p repartition (NULL: the binary's default), then g_extra. */
void start_daemon(sw_test_daemon_t *d, const char *bin, const char *tag, const char *sc,
                  const char *repartition);

/* The job_id of a telemetry line ("" when null or missing). */
void line_job(const char *line, size_t len, char *job, size_t size);

/* Each job's records on out.SC (from sources @p srcs, comma-separated)
 * against an uninterrupted engine fed the @p n events @p lines in that
 * order: one engine (one summary, one first episode), the same records,
 * and how often the first trigger names the storm's rank. A job that
 * differs leaves its events and records in the test's directory.
 * @returns 1 when @p expect_exact and a job differs, or when @p live and
 * fewer first causes are right than with job-keyed input. */
int judge(const char *sc, const input_t *in, char **lines, size_t *lens, size_t n, const char *srcs,
          bool expect_exact, bool live, const char *order);

/* First-trigger ranks equal to the truth when each job's events arrive in
 * the order they were produced (job-keyed input, one partition per job). */
int baseline_right(const input_t *in);

int produce_all(const char *sc, const input_t *in, keying_t k, useconds_t pace_us, size_t from,
                size_t to);

int stop(sw_test_daemon_t *d);
extern char g_old_bin[2][1100];

int start_mock(void);
extern input_t g_in;

/* The input, the mock cluster and the job-keyed baseline of every scenario. */
int keying_setup(void **state);

/* SW_KEYING_KEEP: the mock cluster is left running (to look at it). */
int keying_teardown(void **state);

/* The older release a rolling-update scenario runs (tests/e2e/old_binary.sh
 * builds it once and caches it): into g_old_bin[@p slot]. @returns 0, or
 * 77 (skip) when this clone does not hold it, 1 when it cannot be built. */
int old_binary(const char *rev, int slot);

/* A keying test binary's main: the CI tier's gate, SW_KEYING_ONLY=NAME
 * (that scenario only; a rolling update first builds or finds its older
 * release), then @p tests with keying_setup()/keying_teardown().
 * @returns the exit status. */
int keying_main(const struct CMUnitTest *tests, size_t n);

#endif /* KEYING_ENV_H */
