/*
 * Utility code every module may use: error texts, aborting allocators,
 * the growable byte buffer and string views. The allocators print one
 * line to stderr before abort(); nothing else here does I/O.
 */
#include "sw_alloc.h"
#include "sw_err.h"
#include "sw_types.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t sw_utf8_seq(const unsigned char *p, size_t n, bool allow_surrogates)
{
    unsigned char c = p[0];
    if (c < 0x80) return 1;
    size_t len = c >= 0xc2 && c <= 0xdf   ? 2
                 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4
                                          : 0;
    if (len == 0 || len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    if (c == 0xe0 && p[1] < 0xa0) return 0;                       /* overlong */
    if (c == 0xf0 && p[1] < 0x90) return 0;                       /* overlong */
    if (c == 0xf4 && p[1] > 0x8f) return 0;                       /* > U+10FFFF */
    if (c == 0xed && p[1] >= 0xa0 && !allow_surrogates) return 0; /* surrogate */
    return len;
}

size_t sw_utf8_bad_at(const void *data, size_t len, bool allow_surrogates)
{
    const unsigned char *p = data;
    size_t i = 0;
    /* ASCII eight bytes at a time. */
    while (i + 8 <= len) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        if (w & 0x8080808080808080ULL) break;
        i += 8;
    }
    while (i < len) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = sw_utf8_seq(p + i, len - i, allow_surrogates);
        if (!k) return i;
        i += k;
    }
    return len;
}

const char *sw_err2str(sw_err_t err)
{
    switch (err) {
    case SW_OK: return "success";
    case SW_ERR_INVALID_ARG: return "invalid argument";
    case SW_ERR_PARSE: return "parse error";
    case SW_ERR_IO: return "I/O error";
    case SW_ERR_LIMIT: return "limit reached";
    case SW_ERR_TRUNCATED: return "truncated input";
    case SW_ERR_NOT_FOUND: return "not found";
    case SW_ERR_STATE: return "invalid state";
    case SW_ERR_KAFKA: return "Kafka error";
    case SW_ERR_AVRO: return "Avro error";
    case SW_ERR_CLOCK: return "out of time";
    case SW_ERR_PENDING: return "pending";
    case SW_ERR__CNT: break;
    }
    return "unknown error";
}

static void oom(size_t size)
{
    fprintf(stderr, "stormwatch: out of memory allocating %zu bytes\n", size);
    abort();
}

void *sw_malloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p) oom(size);
    return p;
}

void *sw_calloc(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
    if (!p) oom(nmemb * size);
    return p;
}

void *sw_realloc(void *ptr, size_t size)
{
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    void *p = realloc(ptr, size);
    if (!p) oom(size);
    return p;
}

void *sw_reallocarray(void *ptr, size_t nmemb, size_t size)
{
    if (size && nmemb > SIZE_MAX / size) oom(SIZE_MAX);
    return sw_realloc(ptr, nmemb * size);
}

char *sw_strdup(const char *s)
{
    return sw_memdup0(s, strlen(s));
}

char *sw_memdup0(const void *p, size_t len)
{
    char *d = sw_malloc(len + 1);
    if (len) memcpy(d, p, len);
    d[len] = '\0';
    return d;
}

bool sw_str_eq(sw_str_t a, sw_str_t b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

int sw_str_cmp(sw_str_t a, sw_str_t b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (c) return c;
    return a.len < b.len ? -1 : a.len > b.len ? 1 : 0;
}

uint64_t sw_hash_bytes(const void *p, size_t len, uint64_t seed)
{
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ULL ^ seed;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
        s += 8;
        len -= 8;
    }
    while (len--) h = (h ^ *s++) * 0x100000001b3ULL;
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ULL;
    h ^= h >> 32;
    return h;
}

void sw_buf_init(sw_buf_t *buf)
{
    buf->data = NULL;
    buf->len = 0;
    buf->cap = 0;
}

void sw_buf_clear(sw_buf_t *buf)
{
    free(buf->data);
    sw_buf_init(buf);
}

void sw_buf_reserve(sw_buf_t *buf, size_t extra)
{
    if (buf->len + extra + 1 <= buf->cap) return;
    size_t cap = buf->cap ? buf->cap : 256;
    while (cap < buf->len + extra + 1) cap *= 2;
    buf->data = sw_realloc(buf->data, cap);
    buf->cap = cap;
}

void sw_buf_put(sw_buf_t *buf, const void *p, size_t len)
{
    if (!len) return;
    sw_buf_reserve(buf, len);
    memcpy(buf->data + buf->len, p, len);
    buf->len += len;
}

void sw_buf_puts(sw_buf_t *buf, const char *s)
{
    sw_buf_put(buf, s, strlen(s));
}

void sw_buf_put_u64(sw_buf_t *buf, uint64_t v)
{
    char tmp[24];
    int i = 24;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    sw_buf_put(buf, tmp + i, (size_t)(24 - i));
}

void sw_buf_put_i64(sw_buf_t *buf, int64_t v)
{
    if (v < 0) {
        sw_buf_putc(buf, '-');
        sw_buf_put_u64(buf, (uint64_t)0 - (uint64_t)v);
    } else {
        sw_buf_put_u64(buf, (uint64_t)v);
    }
}

void sw_buf_put_rfc3339(sw_buf_t *out, int64_t ns)
{
    /* Floor division, so that times before 1970 count back from the epoch;
     * none of these steps can overflow for any int64 input. */
    int64_t secs = ns / 1000000000, frac = ns % 1000000000;
    if (frac < 0) {
        frac += 1000000000;
        secs--;
    }
    int64_t days = secs / 86400, sod = secs % 86400;
    if (sod < 0) {
        sod += 86400;
        days--;
    }
    /* Civil date of a day count (proleptic Gregorian calendar, 400-year
     * eras starting on March 1st so that the leap day comes last). */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;                                      /* 0..146096 */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* 0..399 */
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* 0..365 */
    int64_t mp = (5 * doy + 2) / 153;                                    /* 0..11, March = 0 */
    int64_t day = doy - (153 * mp + 2) / 5 + 1;
    int64_t month = mp < 10 ? mp + 3 : mp - 9;
    int64_t year = yoe + era * 400 + (month <= 2);
    sw_buf_printf(out, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%09lldZ", (long long)year,
                  (long long)month, (long long)day, (long long)(sod / 3600),
                  (long long)(sod / 60 % 60), (long long)(sod % 60), (long long)frac);
}

size_t sw_edit_distance_ci(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 255 || m > 255) return SIZE_MAX;
    size_t row[256], prev[256];
    for (size_t j = 0; j <= m; j++) prev[j] = j;
    for (size_t i = 1; i <= n; i++) {
        row[0] = i;
        int ca = tolower((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= m; j++) {
            size_t sub = prev[j - 1] + (ca == tolower((unsigned char)b[j - 1]) ? 0 : 1);
            size_t del = prev[j] + 1, ins = row[j - 1] + 1;
            row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, row, (m + 1) * sizeof(*row));
    }
    return prev[m];
}

void sw_errfmt(char *errstr, size_t errstr_size, const char *fmt, ...)
{
    if (!errstr || errstr_size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errstr, errstr_size, fmt, ap);
    va_end(ap);
}

void sw_buf_printf(sw_buf_t *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n > 0) {
        sw_buf_reserve(buf, (size_t)n);
        vsnprintf(buf->data + buf->len, (size_t)n + 1, fmt, ap2);
        buf->len += (size_t)n;
    }
    va_end(ap2);
}

const char *sw_buf_cstr(sw_buf_t *buf)
{
    sw_buf_reserve(buf, 0);
    buf->data[buf->len] = '\0';
    return buf->data;
}
