/*
 * Helpers shared by the tests: semantic JSON comparison (SPEC 7) that
 * reports the path of the first difference and both values, running the
 * stormwatch binary, and reading files. Tests only.
 */
#ifndef SW_TESTLIB_H
#define SW_TESTLIB_H

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

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

/**
 * @brief The CI tier (docs/DEVELOPING.md): true when CI=true (`.ci/run`,
 *        `CI=true make test`). A test runs its long seeds only then.
 */
bool sw_test_ci(void);

/**
 * @brief A test registered in the CI tier only (SW_CI_ONLY=1 in its CTest
 *        environment, label ci): 77 (CTest's skip) with a line saying so
 *        when CI is not true, else 0 (run it). Call first in main().
 */
int sw_test_ci_gate(void);

/**
 * @brief Remove SPEC 8's records (action crash or warning) from an array
 *        of records, in place: SPEC 7's comparisons of SPEC 6 outputs skip
 *        them. @returns how many were removed (0 for NULL).
 */
size_t sw_test_drop_x8(json_t *records);

/** @brief Parse JSON Lines; @returns an array (caller json_decref) or NULL. */
json_t *sw_test_parse_lines(const char *text, size_t len, char *why, size_t why_size);

/*
 * The assertions of every test (one style): each prints FILE:LINE, the
 * expression and a message (with both values where there are two) on
 * stderr, then fails the running cmocka case (_fail: the case ends there,
 * its teardown runs; outside a case the program exits non-zero). They can
 * be used in helpers of any return type.
 */
_Noreturn void sw_test_fail_(const char *file, int line);
void sw_test_say_(const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* clang-format 14 splits "a && b" inside these macro arguments as "a &&b". */
// clang-format off
/** Assertion with a printf-style message. */
#define SW_ASSERT(cond, ...) SW_ASSERT_EXPR_(cond, #cond, __VA_ARGS__)

/* SW_ASSERT with the expression's text given (what the wrappers print). */
#define SW_ASSERT_EXPR_(cond, text, ...)                         \
    do {                                                         \
        if (!(cond)) {                                           \
            sw_test_say_(__FILE__, __LINE__, text, __VA_ARGS__); \
            sw_test_fail_(__FILE__, __LINE__);                   \
        }                                                        \
    } while (0)

/** Unconditional failure with a printf-style message. */
#define SW_FAIL(...)                                              \
    do {                                                          \
        sw_test_say_(__FILE__, __LINE__, NULL, __VA_ARGS__);      \
        sw_test_fail_(__FILE__, __LINE__);                        \
    } while (0)

#define SW_ASSERT_TRUE(cond) SW_ASSERT_EXPR_(cond, #cond, "is false")
#define SW_ASSERT_FALSE(cond) SW_ASSERT_EXPR_(!(cond), #cond, "is true")
#define SW_ASSERT_NULL(p)                                                      \
    do {                                                                       \
        const void *p_ = (p);                                                  \
        SW_ASSERT_EXPR_(p_ == NULL, #p, "is %p, want NULL", (const void *)p_); \
    } while (0)
#define SW_ASSERT_NOT_NULL(p) SW_ASSERT_EXPR_((p) != NULL, #p, "is NULL")

/* Assertions on strings and integers with both values in the message. */
#define SW_ASSERT_STREQ(got, want)                                                       \
    do {                                                                                 \
        const char *g_ = (got), *w_ = (want);                                            \
        SW_ASSERT(g_ && w_ && strcmp(g_, w_) == 0, "%s\n  got:  \"%s\"\n  want: \"%s\"", \
                  #got, g_ ? g_ : "(null)", w_ ? w_ : "(null)");                         \
    } while (0)

#define SW_ASSERT_STRNE(got, other)                                                      \
    do {                                                                                 \
        const char *g_ = (got), *o_ = (other);                                           \
        SW_ASSERT(g_ && o_ && strcmp(g_, o_) != 0, "%s is \"%s\", want anything else",  \
                  #got, g_ ? g_ : "(null)");                                             \
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

#define SW_ASSERT_I64_NE(got, other)                                      \
    do {                                                                  \
        long long g_ = (long long)(got), o_ = (long long)(other);         \
        SW_ASSERT(g_ != o_, "%s: got %lld, want anything else", #got, g_); \
    } while (0)

/** @p n bytes at @p got equal those at @p want (the first difference said). */
#define SW_ASSERT_MEMEQ(got, want, n)                                                       \
    do {                                                                                    \
        const unsigned char *g_ = (const void *)(got), *w_ = (const void *)(want);          \
        size_t n_ = (n), i_ = 0;                                                            \
        while (i_ < n_ && g_[i_] == w_[i_]) i_++;                                           \
        SW_ASSERT(i_ == n_, "%s: byte %zu of %zu is 0x%02x, want 0x%02x", #got, i_, n_,     \
                  i_ < n_ ? g_[i_] : 0, i_ < n_ ? w_[i_] : 0);                              \
    } while (0)
// clang-format on

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

/*
 * SW_CHECK: a check that reports and counts, and lets the test go on; the
 * case then fails once, at its SW_CHECK_END(). The count and the name of
 * the case being checked (printed with each failure) live in sw_testlib.c,
 * one for the program: sw_check_reset() at the start of a test,
 * sw_check_case() as it moves from one input to the next.
 */
#define SW_CHECK(cond, ...)                                                    \
    do {                                                                       \
        if (!(cond)) sw_check_report_(__FILE__, __LINE__, #cond, __VA_ARGS__); \
    } while (0)

/** Fail the running case when any SW_CHECK failed since sw_check_reset(). */
#define SW_CHECK_END()                                         \
    do {                                                       \
        int n_ = sw_check_failures();                          \
        if (n_) SW_FAIL("%d check(s) failed (see above)", n_); \
    } while (0)

/** @brief Zero the count of failed checks and clear the case name. */
void sw_check_reset(void);

/** @brief Name (printf-style) the case the next failed checks report. */
void sw_check_case(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** @brief Failed checks since sw_check_reset(). */
int sw_check_failures(void);

/**
 * @brief Report one failed check ("FILE:LINE: FAIL [CASE] (EXPR): MESSAGE",
 *        without "(EXPR)" when @p expr is NULL) and count it. What SW_CHECK
 *        calls; also for checks a test reports itself.
 */
void sw_check_report_(const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* SW_TESTLIB_H */
