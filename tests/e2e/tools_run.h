/*
 * What the test_tools_* tests share: running the stormwatch binary as a child
 * with deadlines, and the mock cluster of the Kafka cases (each under 30 s).
 */
#ifndef TOOLS_RUN_H
#define TOOLS_RUN_H

#include <dirent.h>
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "sw_codec_alert.h"
#include "sw_codec_avro.h"
#include "sw_codec_telemetry.h"
#include "sw_detect.h"
#include "sw_event_json.h"
#include "sw_testlib.h"

/* Time allowed to any one command (ms); every test stays well under 30 s. */
#define CMD_TIMEOUT_MS 20000

/* ------------------------------------------------------------------ */
/* Processes                                                           */
/* ------------------------------------------------------------------ */

int64_t now_ms(void);

void nap_ms(int ms);

/* Start argv with stdin from in_fd or in_path (else /dev/null) and stdout,
 * stderr to out_fd / the given paths (else inherited). The child dies
 * with the test (PR_SET_PDEATHSIG). @returns the pid or -1. */
pid_t spawn(char *const argv[], int in_fd, const char *in_path, int out_fd, const char *out_path,
            const char *err_path);

/* Wait for pid until the deadline. @returns its exit status, 128+signal,
 * or -1 when it is still running (it is left running). */
int wait_child(pid_t pid, int64_t timeout_ms);

void kill_child(pid_t pid);

/* A scratch path unique to this process. */
void tmp_path(char *out, size_t n, const char *name);

/* Run argv to completion (killed after CMD_TIMEOUT_MS), stdin from
 * in_path, capturing stdout and stderr. @returns the exit status, or -1
 * on timeout. */
int run(char *const argv[], const char *in_path, sw_buf_t *out, sw_buf_t *err);

/* Read one line from fd into buf (without the newline) by the deadline. */
bool read_line(int fd, sw_buf_t *pending, sw_buf_t *line, int64_t timeout_ms);

/* ------------------------------------------------------------------ */
/* The mock cluster                                                    */
/* ------------------------------------------------------------------ */

typedef struct mock_s {
    pid_t pid;
    int ctl; /* its stdin */
    int out; /* its stdout */
    sw_buf_t pending;
    char bootstrap[512];
    char file[512];
} mock_t;

void mock_start(mock_t *mk);

/* Send one control command; *answer gets the reply line. */
bool mock_cmd(mock_t *mk, const char *cmd, char *answer, size_t n);

void mock_kill(mock_t *mk);

/* ------------------------------------------------------------------ */
/* produce and tail                                                    */
/* ------------------------------------------------------------------ */

/* Declare char VAR[] holding the path of fixture NAME. */
#define FIXTURE(var, name) \
    char var[1024];        \
    snprintf(var, sizeof(var), "%s/%s", sw_test_fixtures(), name)

/* Create a topic through the control protocol. */
void make_topic(mock_t *mk, const char *name, int partitions);

/* produce FILE to TOPIC (extra args before the file); expects exit 0
 * and the summary line naming n messages. */
void produce_ok(mock_t *mk, const char *topic, const char *format, const char *file, bool raw,
                int n);

/* tail -t TOPIC --count n (and extra); the lines in *out. */
void tail_n(mock_t *mk, const char *topic, int n, const char *extra, sw_buf_t *out);

/* The mock cluster of the Kafka cases (their state); stopped by the
 * group teardown, whatever a failed case left. */
int mock_setup(void **state);

int mock_teardown(void **state);

/* Every Kafka case stays under 30 s: its setup and teardown. */
int case_start(void **state);
int case_end(void **state);
#define KAFKA_CASE(f) cmocka_unit_test_setup_teardown(f, case_start, case_end)

#endif /* TOOLS_RUN_H */
