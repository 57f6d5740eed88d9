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

/* The closing line of @p site, when it suppressed anything; the site's
 * window starts again at @p now. */
static void site_close(const sw_log_t *lg, sw_log_site_t *site, int64_t now)
{
    if (site->suppressed) {
        int64_t span = now - site->window_start_ms;
        if (span > SW_LOG_LIMIT_WINDOW_MS) span = SW_LOG_LIMIT_WINDOW_MS;
        long long secs = (span + 999) / 1000;
        sw_log(lg, site->level, "... and %llu more like it in the last %lld s (like: %s)",
               (unsigned long long)site->suppressed, secs < 1 ? 1 : secs, site->like);
    }
    site->window_start_ms = now;
    site->shown = 0;
    site->suppressed = 0;
}

/* The slot of call site @p key: its own, else a free one, else the one
 * whose window started first (closed before it is reused). */
static sw_log_site_t *site_of(const sw_log_t *lg, sw_log_limit_t *lim, const char *key, int64_t now)
{
    sw_log_site_t *oldest = &lim->sites[0];
    for (int i = 0; i < SW_LOG_LIMIT_SITES; i++) {
        sw_log_site_t *s = &lim->sites[i];
        if (s->key == key) return s;
        if (!s->key) {
            s->key = key;
            s->window_start_ms = now;
            return s;
        }
        if (s->window_start_ms < oldest->window_start_ms) oldest = s;
    }
    site_close(lg, oldest, now);
    memset(oldest, 0, sizeof(*oldest));
    oldest->key = key;
    oldest->window_start_ms = now;
    return oldest;
}

void sw_log_limited(const sw_log_t *lg, sw_log_limit_t *lim, sw_log_level_t level, const char *fmt,
                    ...)
{
    if (level > lg->level) return;
    int64_t now = sw_clock_ms();
    sw_log_site_t *site = site_of(lg, lim, fmt, now);
    if (now - site->window_start_ms >= SW_LOG_LIMIT_WINDOW_MS) site_close(lg, site, now);
    site->level = level;
    if (site->shown >= SW_LOG_LIMIT_BURST) {
        site->suppressed++;
        return;
    }
    site->shown++;
    va_list ap;
    va_start(ap, fmt);
    char like[sizeof(site->like)];
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(like, sizeof(like), fmt, cp);
    va_end(cp);
    if (n >= (int)sizeof(like)) memcpy(like + sizeof(like) - 4, "...", 4);
    memcpy(site->like, like, sizeof(like));
    vlog(lg, level, NULL, fmt, ap);
    va_end(ap);
}

void sw_log_limit_tick(const sw_log_t *lg, sw_log_limit_t *lim)
{
    int64_t now = sw_clock_ms();
    for (int i = 0; i < SW_LOG_LIMIT_SITES; i++) {
        sw_log_site_t *s = &lim->sites[i];
        if (s->key && s->suppressed && now - s->window_start_ms >= SW_LOG_LIMIT_WINDOW_MS)
            site_close(lg, s, now);
    }
}

void sw_log_limit_flush(const sw_log_t *lg, sw_log_limit_t *lim)
{
    int64_t now = sw_clock_ms();
    for (int i = 0; i < SW_LOG_LIMIT_SITES; i++)
        if (lim->sites[i].key && lim->sites[i].suppressed) site_close(lg, &lim->sites[i], now);
}
