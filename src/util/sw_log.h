/*
 * Logging for the long-running commands: one line per message on stderr,
 * "2026-11-21T06:00:00.123Z WARN message", filtered by level, with a
 * per-key rate limit for messages that could flood (bad records). The
 * logger is an object passed around; nothing here is global.
 */
#ifndef SW_LOG_H
#define SW_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum sw_log_level_e {
    SW_LOG_ERROR = 0,
    SW_LOG_WARN = 1,
    SW_LOG_INFO = 2,
    SW_LOG_DEBUG = 3
} sw_log_level_t;

/** Call sites one sw_log_limit_t tells apart (its format strings). */
#define SW_LOG_LIMIT_SITES 8
/** Messages shown per call site and window, and the window (ms). */
#define SW_LOG_LIMIT_BURST 10
#define SW_LOG_LIMIT_WINDOW_MS 10000

/** Rate limit state of one call site (one format string). */
typedef struct sw_log_site_s {
    const char *key;         /**< the call site's format string; NULL: a free slot */
    int64_t window_start_ms; /**< start of the current window (monotonic ms) */
    uint32_t shown;          /**< messages shown in the window */
    uint64_t suppressed;     /**< messages not shown in the window */
    sw_log_level_t level;    /**< the level of the closing line */
    char like[120];          /**< the start of the last shown message, for the closing line */
} sw_log_site_t;

/**
 * Rate limit state for messages that could flood (a zeroed one is ready):
 * each call site (format string) may show SW_LOG_LIMIT_BURST messages per
 * SW_LOG_LIMIT_WINDOW_MS; what it suppressed is said by one closing line,
 * "... and N more like it in the last M s", when its window ends (at its
 * next message, or sw_log_limit_tick()) or at sw_log_limit_flush().
 */
typedef struct sw_log_limit_s {
    sw_log_site_t sites[SW_LOG_LIMIT_SITES];
} sw_log_limit_t;

/** A logger. */
typedef struct sw_log_s {
    sw_log_level_t level; /**< messages above this level are dropped */
    FILE *out;            /**< borrowed; stderr by default */
    const char *prefix;   /**< e.g. "stormwatch run" (borrowed) */
} sw_log_t;

/** @brief A logger at @p level writing to stderr. */
sw_log_t sw_log_make(sw_log_level_t level, const char *prefix);

/** @brief Parse "error", "warn", "info" or "debug". @returns false when unknown. */
bool sw_log_parse_level(const char *s, sw_log_level_t *level);

/** @brief Log one message (printf format). */
void sw_log(const sw_log_t *lg, sw_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/**
 * @brief Log with a rate limit: at most SW_LOG_LIMIT_BURST messages per
 *        SW_LOG_LIMIT_WINDOW_MS per call site (@p fmt) of @p lim; the
 *        others are counted and said by one closing line (see
 *        sw_log_limit_t). Not thread-safe: one thread per @p lim.
 */
void sw_log_limited(const sw_log_t *lg, sw_log_limit_t *lim, sw_log_level_t level, const char *fmt,
                    ...) __attribute__((format(printf, 4, 5)));

/**
 * @brief The closing lines of @p lim's call sites whose window ended with
 *        messages suppressed (a caller's periodic tick: a flood that stops
 *        is still summed up, not left to the final count).
 */
void sw_log_limit_tick(const sw_log_t *lg, sw_log_limit_t *lim);

/** @brief Every closing line of @p lim now, windows ended or not (at exit). */
void sw_log_limit_flush(const sw_log_t *lg, sw_log_limit_t *lim);

/** @brief Milliseconds of a monotonic clock (for rates and idleness). */
int64_t sw_clock_ms(void);

/** @brief Milliseconds since the Unix epoch (for timestamps in messages). */
int64_t sw_wall_ms(void);

/** @brief Nanoseconds of the monotonic clock (for durations). */
int64_t sw_clock_ns(void);

/** @brief Nanoseconds since the Unix epoch. */
int64_t sw_wall_ns(void);

#endif /* SW_LOG_H */
