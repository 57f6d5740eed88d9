/*
 * Credentials inside URLs (scheme://USER:PASSWORD@host/...) never leave
 * the process: every log line, configuration dump, error message, metric
 * label and dead-letter header that may carry a URL passes through here.
 * Pure text rewriting; no I/O.
 */
#ifndef SW_REDACT_H
#define SW_REDACT_H

#include <stdbool.h>
#include <stddef.h>

/** What replaces the user information of a URL. */
#define SW_REDACT_USERINFO "[redacted]"

/**
 * @brief Whether @p s holds a URL with user information ("://...@" before
 *        the URL's path).
 */
bool sw_redact_needed(const char *s);

/**
 * @brief Copy @p in into @p out (out_size bytes, NUL-terminated, cut when
 *        too long) with the user information of every URL replaced by
 *        SW_REDACT_USERINFO: "http://u:p@h:1/x" -> "http://[redacted]@h:1/x".
 * @returns the length written.
 */
size_t sw_redact_urls(const char *in, char *out, size_t out_size);

/**
 * @brief @p s with the user information of its URLs redacted.
 * @returns caller frees with free(); never NULL.
 */
char *sw_redact_dup(const char *s);

#endif /* SW_REDACT_H */
