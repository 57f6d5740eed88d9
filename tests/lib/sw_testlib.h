/*
 * Helpers shared by the tests: semantic JSON comparison (SPEC 7) that
 * reports the path of the first difference and both values, running the
 * stormwatch binary, and reading files. Tests only.
 */
#ifndef SW_TESTLIB_H
#define SW_TESTLIB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "sw_event.h"
#include "sw_types.h"

/**
 * @brief SPEC 7 equality of @p got and @p want: same keys (order free),
 *        same array order, exact integers. With @p allow_extra, objects of
 *        @p got may have keys @p want lacks (SPEC 6: extra keys are
 *        ignored). On a difference, @p why gets "PATH: GOT != WANT".
 */
bool sw_test_json_equal(json_t *got, json_t *want, bool allow_extra, char *why, size_t why_size);

/** @brief Read a whole file. @returns false when it cannot be read. */
bool sw_test_read_file(const char *path, sw_buf_t *out);

/**
 * @brief Run a shell command, capturing stdout into @p out (stderr passes
 *        through). @returns the exit status, or -1.
 */
int sw_test_run(const char *cmd, sw_buf_t *out);

/** @brief The stormwatch binary (SW_BIN), the fixtures dir, a scratch dir. */
const char *sw_test_bin(void);
const char *sw_test_fixtures(void);
const char *sw_test_tmp(void);

/** @brief Parse JSON Lines; @returns an array (caller json_decref) or NULL. */
json_t *sw_test_parse_lines(const char *text, size_t len, char *why, size_t why_size);

/** Assertion that prints file, line, expression and a message, then fails. */
#define SW_ASSERT(cond, ...)                                                      \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: FAIL (%s): ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
            return 1;                                                             \
        }                                                                         \
    } while (0)

/* Assertions on strings and integers with both values in the message. */
#define SW_ASSERT_STREQ(got, want)                                                       \
    do {                                                                                 \
        const char *g_ = (got), *w_ = (want);                                            \
        SW_ASSERT(g_ && w_ && strcmp(g_, w_) == 0, "%s\n  got:  \"%s\"\n  want: \"%s\"", \
                  #got, g_ ? g_ : "(null)", w_ ? w_ : "(null)");                         \
    } while (0)

#define SW_ASSERT_CONTAINS(hay, needle)                                                       \
    do {                                                                                      \
        const char *h_ = (hay), *n_ = (needle);                                               \
        SW_ASSERT(h_ && strstr(h_, n_), "%s lacks \"%s\":\n%s", #hay, n_, h_ ? h_ : "(null)"); \
    } while (0)

#define SW_ASSERT_LACKS(hay, needle)                                         \
    do {                                                                     \
        const char *h_ = (hay), *n_ = (needle);                              \
        SW_ASSERT(!strstr(h_, n_), "%s contains \"%s\":\n%s", #hay, n_, h_); \
    } while (0)

#define SW_ASSERT_I64(got, want)                                      \
    do {                                                              \
        long long g_ = (long long)(got), w_ = (long long)(want);      \
        SW_ASSERT(g_ == w_, "%s: got %lld, want %lld", #got, g_, w_); \
    } while (0)

/** @brief GET http://127.0.0.1:@p port@p path; @returns the status code
 *         (0 on error), the body in *body. */
int sw_test_http_get(int port, const char *path, sw_buf_t *body);

/** @brief The metrics port a daemon logged ("... (port N)") in log file
 *         @p log_path; 0 when there is none. */
int sw_test_metrics_port(const char *log_path);

/** @brief Value of the Prometheus sample line that starts with @p series
 *         (name and labels as rendered); -1 when absent. */
double sw_test_metric(const char *text, const char *series);

/** @brief Field-by-field equality of two events (optional fields only
 *         when set); @p why names the first difference. */
bool sw_test_event_eq(const sw_event_t *a, const sw_event_t *b, char *why, size_t n);

/**
 * A check that reports and counts, and lets the test go on (a cmocka test
 * then fails once at its end). The test file defines `int g_fail` (the
 * count) and `g_case` (a string naming the case being checked).
 */
#define SW_CHECK(cond, ...)                                                                \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: FAIL [%s] (%s): ", __FILE__, __LINE__, g_case, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
            g_fail++;                                                                      \
        }                                                                                  \
    } while (0)

#endif /* SW_TESTLIB_H */
