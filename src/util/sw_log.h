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

/** Rate limit state for one kind of message. */
typedef struct sw_log_limit_s {
    int64_t window_start_ms; /**< start of the current 10 s window */
    uint32_t shown;          /**< messages shown in the window */
    uint64_t suppressed;     /**< messages not shown since the last summary */
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
 * @brief Log with a rate limit: at most 10 messages per 10 s per @p lim;
 *        the next shown message says how many were suppressed.
 */
void sw_log_limited(const sw_log_t *lg, sw_log_limit_t *lim, sw_log_level_t level, const char *fmt,
                    ...) __attribute__((format(printf, 4, 5)));

/** @brief Milliseconds of a monotonic clock (for rates and idleness). */
int64_t sw_clock_ms(void);

/** @brief Milliseconds since the Unix epoch (for timestamps in messages). */
int64_t sw_wall_ms(void);

/** @brief Nanoseconds of the monotonic clock (for durations). */
int64_t sw_clock_ns(void);

/** @brief Nanoseconds since the Unix epoch. */
int64_t sw_wall_ns(void);

#endif /* SW_LOG_H */
