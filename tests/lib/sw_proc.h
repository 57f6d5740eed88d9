/*
 * Test helpers for the Kafka integration tests: child processes (spawn,
 * wait with a deadline, signal), waiting for files, and a librdkafka
 * producer/consumer driven directly by the test. Tests only.
 */
#ifndef SW_PROC_H
#define SW_PROC_H

#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sw_types.h"

/** @brief Start argv[0] with argv; stdout/stderr to the given files (NULL: inherit). */
pid_t sw_proc_spawn(char *const argv[], const char *out_path, const char *err_path);

/** @brief Wait up to @p timeout_ms for @p pid. @returns exit status, 128+signal, or -1 on timeout. */
int sw_proc_wait(pid_t pid, int64_t timeout_ms);

/** @brief SIGKILL and reap (accepts 0). */
void sw_proc_kill(pid_t pid);

/**
 * @brief SIGKILL and reap every child that sw_proc_spawn() or
 *        sw_proc_spawn_io() started and nobody reaped yet: the cleanup
 *        of a test that failed half-way (a cmocka teardown).
 */
void sw_proc_kill_all(void);

/** @brief Wait for a non-empty file; @returns its first line (caller frees) or NULL. */
char *sw_proc_wait_file(const char *path, int64_t timeout_ms);

/** @brief Wait until @p path contains @p needle @p times times. */
bool sw_proc_wait_text(const char *path, const char *needle, int times, int64_t timeout_ms);

/** @brief Count occurrences of @p needle in file @p path. */
int sw_proc_count_text(const char *path, const char *needle);

/** @brief Milliseconds of a monotonic clock. */
int64_t sw_proc_now_ms(void);

/** A message read back by sw_kc_read(). */
typedef struct sw_kmsg_s {
    int32_t partition;
    int64_t offset;
    char *key; /**< NUL-terminated copy, NULL when null */
    size_t key_len;
    char *value; /**< NUL-terminated copy */
    size_t len;
    char *hdr_names[16];
    char *hdr_values[16];
    int nhdr;
} sw_kmsg_t;

/** @brief A producer to @p bootstrap (idempotent). */
rd_kafka_t *sw_kp_new(const char *bootstrap);

/** @brief Produce one message to an explicit partition (-1: by key). */
bool sw_kp_send(rd_kafka_t *rk, const char *topic, int32_t partition, const void *key,
                size_t keylen, const void *value, size_t len);

/** @brief Destroy a producer from sw_kp_new(). */
void sw_kp_destroy(rd_kafka_t *rk);

/** @brief Flush; @returns true when everything was delivered. */
bool sw_kp_flush(rd_kafka_t *rk, int64_t timeout_ms);

/**
 * @brief Read every partition of @p topic from the beginning until @p want
 *        messages arrived (then @p grace_ms more) or @p timeout_ms passed.
 * @returns the number read; *out is an array the caller frees with sw_kmsg_free().
 */
size_t sw_kc_read(const char *bootstrap, const char *topic, int partitions, size_t want,
                  int64_t grace_ms, int64_t timeout_ms, sw_kmsg_t **out);

/**
 * @brief Read every partition of @p topic from the beginning to its end:
 *        until each has reported its end after its last message (what the
 *        topic holds now), or @p timeout_ms passed.
 * @returns the number read; *out is an array the caller frees with sw_kmsg_free().
 */
size_t sw_kc_read_all(const char *bootstrap, const char *topic, int partitions, int64_t timeout_ms,
                      sw_kmsg_t **out);

/**
 * A reader of every partition of a topic from the beginning, polling in a
 * thread of its own from sw_kc_tail_start() on: it holds what a topic held
 * even when the mock cluster later drops a partition's oldest messages
 * (it keeps ~5 MiB a partition), which a read after the run would miss.
 */
typedef struct sw_kc_tail_s sw_kc_tail_t;

/** @brief Start reading @p topic (which may not exist yet). */
sw_kc_tail_t *sw_kc_tail_start(const char *bootstrap, const char *topic, int partitions);

/**
 * @brief Go on reading as sw_kc_read() (@p want, @p grace_ms), or with
 *        @p to_end as sw_kc_read_all(), for at most @p timeout_ms more; then
 *        stop and free @p t.
 * @returns everything read since the start; *out as sw_kc_read()'s.
 */
size_t sw_kc_tail_finish(sw_kc_tail_t *t, size_t want, int64_t grace_ms, int64_t timeout_ms,
                         bool to_end, sw_kmsg_t **out);

/** @brief Value of header @p name, or NULL. */
const char *sw_kmsg_header(const sw_kmsg_t *m, const char *name);

/** @brief Free messages read by sw_kc_read(). */
void sw_kmsg_free(sw_kmsg_t *m, size_t n);

/** @brief Sum of the committed offsets of @p group on @p topic's partitions. */
int64_t sw_kc_committed(const char *bootstrap, const char *group, const char *topic,
                        int partitions);

/**
 * @brief Wait until sw_kc_committed() reaches @p want. @returns the last
 *        sum read (>= @p want unless @p timeout_ms passed).
 */
int64_t sw_kc_wait_committed(const char *bootstrap, const char *group, const char *topic,
                             int partitions, int64_t want, int64_t timeout_ms);

/**
 * @brief Records of output messages whose source is @p src (a topic, or
 *        several separated by commas), partitions
 *        [plo, phi), as JSON arrays per job id ("" for the null job); Avro
 *        values are decoded first. Caller json_decref()s.
 */
json_t *sw_kt_group_by_job(sw_kmsg_t *m, size_t n, const char *src, int plo, int phi, bool avro);

/**
 * @brief The records an uninterrupted engine (default parameters) gives
 *        for these JSON lines, per job, without summaries. Caller json_decref()s.
 */
json_t *sw_kt_replay_by_job(char **lines, size_t *lens, int n);

/** @brief The same with a given window size. */
json_t *sw_kt_replay_by_job_w(char **lines, size_t *lens, int n, int64_t window_samples);

/** @brief Remove every summary record from a per-job object. */
void sw_kt_drop_summaries(json_t *by);

/** @brief Records in a per-job object. */
size_t sw_kt_count(json_t *by);

/**
 * @brief Start argv with a pipe to its stdin (*in_fd, caller closes);
 *        stdout/stderr to files.
 */
pid_t sw_proc_spawn_io(char *const argv[], int *in_fd, const char *out_path, const char *err_path);

#endif /* SW_PROC_H */
