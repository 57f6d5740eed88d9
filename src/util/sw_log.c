/*
 * Logger (see sw_log.h). Each message is formatted into one buffer and
 * written with a single fputs so lines from threads do not interleave.
 */
#include "sw_log.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "sw_redact.h"

static const char *const k_level_names[] = {"ERROR", "WARN", "INFO", "DEBUG"};

sw_log_t sw_log_make(sw_log_level_t level, const char *prefix)
{
    sw_log_t lg = {level, stderr, prefix};
    return lg;
}

bool sw_log_parse_level(const char *s, sw_log_level_t *level)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *level = (sw_log_level_t)i;
            return true;
        }
    return false;
}

int64_t sw_clock_ms(void)
{
    return sw_clock_ns() / 1000000;
}

int64_t sw_wall_ms(void)
{
    return sw_wall_ns() / 1000000;
}

int64_t sw_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t sw_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void vlog(const sw_log_t *lg, sw_log_level_t level, const char *suffix, const char *fmt,
                 va_list ap)
{
    char line[2048];
    int64_t now = sw_wall_ms();
    time_t secs = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof(line) - n, ".%03dZ %s %s%s", (int)(now % 1000),
                          k_level_names[level], lg->prefix ? lg->prefix : "",
                          lg->prefix ? ": " : "");
    if (n < sizeof(line)) n += (size_t)vsnprintf(line + n, sizeof(line) - n, fmt, ap);
    if (n >= sizeof(line) - 2) n = sizeof(line) - 2;
    if (suffix) {
        size_t k = strlen(suffix);
        if (n + k < sizeof(line) - 2) {
            memcpy(line + n, suffix, k);
            n += k;
        }
    }
    line[n++] = '\n';
    line[n] = '\0';
    if (sw_redact_needed(line)) { /* a URL's user:password never reaches a log */
        char safe[sizeof(line)];
        sw_redact_urls(line, safe, sizeof(safe));
        fputs(safe, lg->out ? lg->out : stderr);
        return;
    }
    fputs(line, lg->out ? lg->out : stderr);
}

void sw_log(const sw_log_t *lg, sw_log_level_t level, const char *fmt, ...)
{
    if (level > lg->level) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(lg, level, NULL, fmt, ap);
    va_end(ap);
}

void sw_log_limited(const sw_log_t *lg, sw_log_limit_t *lim, sw_log_level_t level, const char *fmt,
                    ...)
{
    if (level > lg->level) return;
    int64_t now = sw_clock_ms();
    if (now - lim->window_start_ms >= 10000) {
        lim->window_start_ms = now;
        lim->shown = 0;
    }
    if (lim->shown >= 10) {
        lim->suppressed++;
        return;
    }
    lim->shown++;
    char suffix[96] = "";
    if (lim->suppressed) {
        snprintf(suffix, sizeof(suffix), " (%llu similar messages suppressed)",
                 (unsigned long long)lim->suppressed);
        lim->suppressed = 0;
    }
    va_list ap;
    va_start(ap, fmt);
    vlog(lg, level, suffix[0] ? suffix : NULL, fmt, ap);
    va_end(ap);
}
