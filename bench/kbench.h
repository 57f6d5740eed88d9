/*
 * What sw_kbench's commands share (kbench.c, kbench_load.c,
 * kbench_latency.c): errors and times, option parsing, librdkafka
 * clients, GET /metrics, /proc, partition placement, and the commands.
 */
#ifndef KBENCH_H
#define KBENCH_H

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "sw_alloc.h"
#include "sw_codec_avro.h"
#include "sw_codec_telemetry.h"
#include "sw_gen.h"
#include "sw_partition.h"
#include "sw_types.h"

#define KB_MAX_GENS 8 /* --gen specs per load */
#define KB_MAX_X 32   /* -X properties per command */
#define KB_HTTP_MAX (16u * 1024u * 1024u)
#define KB_GIB ((int64_t)1024 * 1024 * 1024)

extern volatile sig_atomic_t stop;

void on_signal(int sig);

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void die(const char *fmt, ...);

/* Seconds since the epoch (comparable with bash's $EPOCHREALTIME). */
double now_real(void);

int64_t now_mono_us(void);

void sleep_ms(int ms);

long long parse_ll(const char *opt, const char *s, long long min, long long max);

double parse_dbl(const char *opt, const char *s, double min, double max);

/* ---- librdkafka helpers ------------------------------------------------ */

typedef struct kprops_s {
    const char *kv[KB_MAX_X];
    int n;
} kprops_t;

void kprops_add(kprops_t *kp, const char *kv);

void kset(rd_kafka_conf_t *kc, const char *name, const char *value);

/* Settings @p defs (NULL-terminated name/value pairs), then the user's -X. */
rd_kafka_conf_t *kconf(const char *bootstrap, const char *const *defs, const kprops_t *kp);

rd_kafka_t *knew(rd_kafka_type_t type, rd_kafka_conf_t *kc);

int topic_partitions(rd_kafka_t *rk, const char *topic);

/* ---- HTTP /metrics ------------------------------------------------------ */

typedef struct url_s {
    char host[256];
    char port[16];
    char path[512];
} url_t;

void url_parse(const char *s, url_t *u);

/* GET the URL into @p body (reset first). @returns false when the server
 * is not reachable or does not answer 200. */
bool http_get(const url_t *u, sw_buf_t *body);

/* Sum of the samples of metric @p name (exact family name) whose labels
 * contain @p label (NULL: every sample). @p text is NUL-terminated. */
double metric_sum(const char *text, const char *name, const char *label);

/* ---- /proc ------------------------------------------------------------- */

/* VmRSS and VmHWM of @p pid in KiB. @returns false when it is gone. */
bool proc_rss(long pid, long long *rss_kib, long long *hwm_kib);

/* user+system CPU seconds of @p pid (all threads). */
double proc_cpu_s(long pid);

double self_cpu_s(void);

/* Events the daemon's engines consumed, from its /metrics: the engine
 * stage of stormwatch_events_in_total (with repartition=on the forward
 * stage counts the input messages once more). */
double engine_events(const char *text);

/* Where a producer puts a job's message (--place): "index" the job's n-th
 * partition, keyed by its job_id (jobs spread evenly: the default);
 * "murmur2" keyed by its job_id where Kafka's clients put that key; "none"
 * without a key, spread over the partitions message by message. */
typedef enum place_e { PLACE_INDEX, PLACE_MURMUR2, PLACE_NONE } place_t;

place_t parse_place(const char *s);

int32_t place_part(place_t pl, const char *job, size_t len, uint64_t job_index, uint64_t msg_index,
                   int partitions);

/* The commands (kbench_load.c: load, count; kbench_latency.c: watch, latency). */
int cmd_load(int argc, char **argv);
int cmd_count(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_latency(int argc, char **argv);

#endif /* KBENCH_H */
