/*
 * Telemetry lines held in memory for the Kafka tests (what they produce, then
 * what their expected output is computed from), and the generator's storm
 * jobs as such lines. Tests only.
 */
#ifndef SW_LINES_H
#define SW_LINES_H

#include <stddef.h>
#include <stdint.h>

/** Lines without their newline; v[i] is NUL-terminated, len[i] its length. */
typedef struct sw_test_lines_s {
    char **v;
    size_t *len;
    int n, cap;
} sw_test_lines_t;

/** @brief Append a copy of the @p n bytes at @p s. */
void sw_test_lines_add(sw_test_lines_t *l, const char *s, size_t n);

/** @brief Free every line and the arrays; @p l is then empty. */
void sw_test_lines_free(sw_test_lines_t *l);

/**
 * @brief Append the generator's lines for @p jobs storm jobs (job ids
 *        "<prefix><k>", @p ranks ranks, @p samples samples a rank,
 *        @p storms storms from 15 % in, on a random rank each, from
 *        @p seed); fails the test when the options are refused.
 */
void sw_test_gen_storms(sw_test_lines_t *l, const char *prefix, int jobs, int ranks, int samples,
                        int storms, uint64_t seed);

#endif /* SW_LINES_H */
