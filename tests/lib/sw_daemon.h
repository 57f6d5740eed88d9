/*
 * The one daemon fixture of the e2e tests: librdkafka's mock cluster as a
 * `stormwatch mock` process, and `stormwatch run` / `notify` processes with
 * their output in a test's directory. Starting waits for what the process
 * writes (the mock's bootstrap file), never for a fixed time; the waits read
 * the daemon's log (its stderr) and give up at once when the process has
 * exited; stopping is SIGTERM with a deadline, then SIGKILL. Every process
 * is tracked by sw_proc (sw_proc_kill_all() ends what a failed test left).
 * Tests only.
 */
#ifndef SW_DAEMON_H
#define SW_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/** A mock cluster started by sw_test_mock_start(). */
typedef struct sw_test_mock_s {
    pid_t pid;       /**< 0 once stopped */
    int ctl;         /**< stdin of a --control mock (sw_test_mock_cmd()), else -1 */
    char boot[1024]; /**< its bootstrap.servers */
    char out[1100];  /**< DIR/mock.out: its stdout (control answers) */
    char err[1100];  /**< DIR/mock.err */
} sw_test_mock_t;

/**
 * @brief Start `stormwatch mock --bootstrap-file DIR/bootstrap` with
 *        @p topics ("name:partitions", NULL-terminated), @p brokers
 *        brokers (0: the mock's default) and with @p control its control
 *        channel; wait up to 30 s for its bootstrap address.
 * @returns false (said on stderr, the process killed) when it did not start.
 */
bool sw_test_mock_start(sw_test_mock_t *m, const char *dir, int brokers, bool control,
                        const char *const *topics);

/** @brief One control command to a --control mock; true when it answered "ok". */
bool sw_test_mock_cmd(sw_test_mock_t *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** @brief Kill the mock and reap it (idempotent). */
void sw_test_mock_stop(sw_test_mock_t *m);

#define SW_TEST_DAEMON_MAX_ARGS 96

/**
 * A `stormwatch run` or `notify` process: built with sw_test_daemon_init()
 * and sw_test_daemon_x(), then started (and restarted) with
 * sw_test_daemon_start(). argv points into the struct: do not copy it.
 */
typedef struct sw_test_daemon_s {
    pid_t pid;      /**< 0 when not running */
    int status;     /**< once reaped: exit status or 128+signal; -1 before */
    char log[1100]; /**< DIR/TAG.err: its stderr, which the waits read */
    char out[1100]; /**< DIR/TAG.out: its stdout */
    int argc;
    char *argv[SW_TEST_DAEMON_MAX_ARGS + 1];
    char strs[8192]; /**< the arguments' text */
    size_t used;
} sw_test_daemon_t;

/**
 * @brief `stormwatch CMD` with its log in DIR/TAG.err; with @p boot, the
 *        arguments start with bootstrap.servers=@p boot and
 *        kafka.consumer.session.timeout.ms=6000 (the mock's groups then
 *        rebalance within seconds).
 */
void sw_test_daemon_init(sw_test_daemon_t *d, const char *cmd, const char *dir, const char *tag,
                         const char *boot);

/** @brief Append one argument as is (e.g. "-c", a path). */
void sw_test_daemon_arg(sw_test_daemon_t *d, const char *arg);

/** @brief Append "-X" and the formatted property (e.g. "group.id=g.%s"). */
void sw_test_daemon_x(sw_test_daemon_t *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** @brief Append "-X" and each of the NULL-terminated @p props (NULL: none). */
void sw_test_daemon_xs(sw_test_daemon_t *d, const char *const *props);

/** @brief The topics of one scenario: input.topics=in.<s>, output.topic=out.<s>,
 *         dlq.topic=dlq.<s>, state.topic=state.<s>. */
void sw_test_daemon_topics(sw_test_daemon_t *d, const char *s);

/** @brief Start (or start again, the log truncated). @returns false when it cannot fork. */
bool sw_test_daemon_start(sw_test_daemon_t *d);

/**
 * @brief Wait until the log holds @p needle @p times times. @returns false
 *        after @p timeout_ms, or as soon as the process has exited.
 */
bool sw_test_daemon_wait_log(sw_test_daemon_t *d, const char *needle, int times,
                             int64_t timeout_ms);

/**
 * @brief Wait until the daemon has logged @p partitions assignments
 *        ("assigned TOPIC [N]" lines, counted over its life).
 */
bool sw_test_daemon_wait_assigned(sw_test_daemon_t *d, int partitions, int64_t timeout_ms);

/** @brief The metrics port it logged (metrics.listen=127.0.0.1:0); 0 when none within @p timeout_ms. */
int sw_test_daemon_metrics_port(sw_test_daemon_t *d, int64_t timeout_ms);

/** @brief Wait until GET /readyz on @p port answers 200. */
bool sw_test_daemon_wait_ready(sw_test_daemon_t *d, int port, int64_t timeout_ms);

/** @brief Occurrences of @p needle in its log. */
int sw_test_daemon_count(const sw_test_daemon_t *d, const char *needle);

/** @brief Whether it still runs (reaps it when it has exited). */
bool sw_test_daemon_running(sw_test_daemon_t *d);

/** @brief Wait for its exit; on a timeout SIGKILL it and return -1. @returns its status. */
int sw_test_daemon_wait_exit(sw_test_daemon_t *d, int64_t timeout_ms);

/** @brief SIGTERM, then sw_test_daemon_wait_exit(). @returns its status, -1 on a timeout. */
int sw_test_daemon_stop(sw_test_daemon_t *d, int64_t timeout_ms);

/** @brief SIGKILL and reap (idempotent). */
void sw_test_daemon_kill(sw_test_daemon_t *d);

/**
 * @brief A cmocka teardown (cmocka_unit_test_teardown(CASE,
 *        sw_test_kill_children)): kill what a failed case left running,
 *        its mock cluster and daemons (sw_proc_kill_all()).
 */
int sw_test_kill_children(void **state);

#endif /* SW_DAEMON_H */
