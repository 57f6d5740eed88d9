/*
 * Internal to the Avro codec (sw_codec_avro.c: telemetry events and the
 * Confluent header; sw_codec_avro_alert.c: alert records): the writer and
 * the strict reader both use, inline because the event decoder is on the
 * daemon's hot path. Pure: no I/O.
 */
#ifndef SW_CODEC_AVRO_INT_H
#define SW_CODEC_AVRO_INT_H

#include "sw_codec_avro.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_codec_alert.h"
#include "sw_codec_telemetry.h"
#include "sw_jw.h"
#include "sw_json.h"

/* ------------------------------------------------------------------ */
/* UTF-8                                                               */
/* ------------------------------------------------------------------ */

static inline bool utf8_ok(sw_str_t s)
{
    return s.len == 0 || sw_utf8_bad_at(s.ptr, s.len, false) == s.len;
}

/* ------------------------------------------------------------------ */
/* Writer                                                              */
/* ------------------------------------------------------------------ */

static inline void put_varint(sw_buf_t *out, uint64_t u)
{
    char tmp[10];
    size_t n = 0;
    while (u >= 0x80) {
        tmp[n++] = (char)(u | 0x80);
        u >>= 7;
    }
    tmp[n++] = (char)u;
    sw_buf_put(out, tmp, n);
}

/* long and int share the zig-zag varint encoding. */
static inline void put_long(sw_buf_t *out, int64_t v)
{
    put_varint(out, ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0));
}

static inline void put_str(sw_buf_t *out, sw_str_t s)
{
    put_long(out, (int64_t)s.len);
    sw_buf_put(out, s.ptr, s.len);
}

static inline void put_cstr(sw_buf_t *out, const char *s)
{
    put_str(out, sw_str(s));
}

/* A string that must be UTF-8 on the wire: invalid bytes (in practice the
 * WTF-8 lone surrogates the JSON scanner keeps) become U+FFFD. */
static inline void put_str_clean(sw_buf_t *out, sw_str_t s)
{
    size_t bad = s.len ? sw_utf8_bad_at(s.ptr, s.len, false) : 0;
    if (bad == s.len) {
        put_str(out, s);
        return;
    }
    sw_buf_t tmp;
    sw_buf_init(&tmp);
    const unsigned char *p = (const unsigned char *)s.ptr, *end = p + s.len;
    sw_buf_put(&tmp, p, bad);
    p += bad;
    while (p < end) {
        size_t n = sw_utf8_seq(p, (size_t)(end - p), false);
        if (n) {
            sw_buf_put(&tmp, p, n);
            p += n;
            continue;
        }
        sw_buf_put(&tmp, "\xef\xbf\xbd", 3);
        /* One replacement for a whole encoded surrogate. */
        if (p[0] == 0xed && end - p >= 3 && (p[1] & 0xc0) == 0x80 && (p[2] & 0xc0) == 0x80) p += 3;
        else p++;
    }
    put_str(out, (sw_str_t){tmp.data, tmp.len});
    sw_buf_clear(&tmp);
}

static inline void put_opt_long(sw_buf_t *out, bool set, int64_t v)
{
    put_long(out, set ? 1 : 0);
    if (set) put_long(out, v);
}

static inline void put_opt_str(sw_buf_t *out, bool set, sw_str_t s)
{
    put_long(out, set ? 1 : 0);
    if (set) put_str(out, s);
}

static inline void put_opt_str_clean(sw_buf_t *out, bool set, sw_str_t s)
{
    put_long(out, set ? 1 : 0);
    if (set) put_str_clean(out, s);
}

static inline void put_header(sw_buf_t *out, int32_t schema_id)
{
    if (schema_id < 0) return;
    uint32_t id = (uint32_t)schema_id;
    char h[SW_AVRO_HEADER_LEN] = {SW_AVRO_MAGIC, (char)(id >> 24), (char)(id >> 16),
                                  (char)(id >> 8), (char)id};
    sw_buf_put(out, h, sizeof(h));
}

/* ------------------------------------------------------------------ */
/* Reader                                                              */
/* ------------------------------------------------------------------ */

/* Strict reader over [base, end). The first failure is kept in err and
 * errstr; every rd_* returns false from then on. */
typedef struct rd_s {
    const unsigned char *base; /* start of the message: offsets count from here */
    const unsigned char *p;
    const unsigned char *end;
    const unsigned char *limit; /* end of the message (end may be a field's) */
    const char *field;          /* field being read, for messages */
    const char *prefix;         /* enclosing record fields ("source."), or "" */
    const char *outer;          /* array field that holds it, or NULL */
    size_t index;               /* element of outer */
    sw_err_t err;
    char *errstr;
    size_t errstr_size;
} rd_t;

/* The first failure of a read (kept in rd->err and rd->errstr; every rd_*
 * returns false from then on). @returns false. */
bool sw_avro_rd_fail(rd_t *rd, sw_err_t err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The message ended at @p at while reading the current field. */
bool sw_avro_rd_truncated(rd_t *rd, const unsigned char *at, const char *detail);

static inline void rd_init(rd_t *rd, const void *data, size_t len, char *errstr, size_t errstr_size)
{
    rd->base = data ? data : (const void *)""; /* no arithmetic on NULL */
    rd->p = rd->base;
    rd->end = rd->base + len;
    rd->limit = rd->end;
    rd->field = "";
    rd->prefix = "";
    rd->outer = NULL;
    rd->index = 0;
    rd->err = SW_OK;
    rd->errstr = errstr;
    rd->errstr_size = errstr_size;
}

static inline size_t rd_off(const rd_t *rd, const unsigned char *at)
{
    /* A field converted while resolving a writer schema lies outside the
     * message: no offset (compared as integers, not as pointers). */
    uintptr_t a = (uintptr_t)at, b = (uintptr_t)rd->base;
    if (a < b || a > (uintptr_t)rd->limit) return 0;
    return (size_t)(a - b);
}

static inline size_t rd_left(const rd_t *rd)
{
    return (size_t)(rd->end - rd->p);
}

/* "field \"x\"" or "field \"suspects[2].x\"", for messages. */
static inline const char *rd_name(const rd_t *rd, char *buf, size_t size)
{
    if (rd->outer)
        snprintf(buf, size, "field \"%s[%zu].%s%s\"", rd->outer, rd->index, rd->prefix, rd->field);
    else snprintf(buf, size, "field \"%s%s\"", rd->prefix, rd->field);
    return buf;
}

/* The careful decoder: bounds and length checked byte by byte. */
__attribute__((noinline, unused)) static bool rd_varint_slow(rd_t *rd, uint64_t *out)
{
    const unsigned char *s = rd->p;
    uint64_t v = 0;
    char nm[160];
    for (int i = 0;; i++) {
        if (rd->p >= rd->end) return sw_avro_rd_truncated(rd, s, "");
        unsigned char b = *rd->p++;
        if (i == 9) {
            if (b & 0x80)
                return sw_avro_rd_fail(rd, SW_ERR_AVRO,
                                       "Avro: varint longer than 10 bytes at byte %zu in %s",
                                       rd_off(rd, s), rd_name(rd, nm, sizeof(nm)));
            if (b > 1)
                return sw_avro_rd_fail(rd, SW_ERR_AVRO,
                                       "Avro: varint at byte %zu in %s does not fit in 64 bits",
                                       rd_off(rd, s), rd_name(rd, nm, sizeof(nm)));
        }
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) break;
    }
    *out = v;
    return true;
}

/* A varint of 2 to 9 bytes at @p p, with 10 bytes readable there:
 * @returns its end, or NULL when it takes 10 bytes (for the careful
 * path). On little-endian machines the first eight bytes are read as one
 * word: the first byte without its high bit ends the varint, and the
 * 7-bit groups are packed in three steps, with no loop and no branch per
 * byte (byte counts and nanosecond timestamps take 5 to 9 bytes; this was
 * ~10% of the daemon's instructions per event). */
static inline const unsigned char *varint_word(const unsigned char *p, uint64_t *out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t stop = ~w & UINT64_C(0x8080808080808080);
    unsigned n = stop ? (unsigned)__builtin_ctzll(stop) / 8 + 1 : 9; /* bytes, 2..9 */
    if (n < 8) w &= (UINT64_C(1) << (8 * n)) - 1;
    w &= UINT64_C(0x7f7f7f7f7f7f7f7f);
    w = ((w & UINT64_C(0x7f007f007f007f00)) >> 1) | (w & UINT64_C(0x007f007f007f007f));
    w = ((w & UINT64_C(0x3fff00003fff0000)) >> 2) | (w & UINT64_C(0x00003fff00003fff));
    w = ((w & UINT64_C(0x0fffffff00000000)) >> 4) | (w & UINT64_C(0x000000000fffffff));
    if (n == 9) {
        if (p[8] >= 0x80) return NULL; /* 10 bytes */
        w |= (uint64_t)p[8] << 56;
    }
    *out = w;
    return p + n;
#else
    uint64_t v = 0;
    for (unsigned i = 0; i < 9; i++) {
        uint64_t b = p[i];
        v |= (b & 0x7f) << (7 * i);
        if (b < 0x80) {
            *out = v;
            return p + i + 1;
        }
    }
    return NULL;
#endif
}

/* Most varints end well before the buffer does: decode those without a
 * bounds check per byte (varint_word); anything else (10 bytes, near the
 * end) takes the careful path from the start. */
static inline bool rd_varint(rd_t *rd, uint64_t *out)
{
    const unsigned char *p = rd->p;
    if (rd->end - p >= 10) {
        if (p[0] < 0x80) { /* lengths, ranks, small ids */
            rd->p = p + 1;
            *out = p[0];
            return true;
        }
        const unsigned char *e = varint_word(p, out);
        if (e) {
            rd->p = e;
            return true;
        }
    }
    return rd_varint_slow(rd, out);
}

static inline bool rd_long(rd_t *rd, int64_t *out)
{
    uint64_t u = 0;
    if (!rd_varint(rd, &u)) return false;
    /* Zig-zag; the final conversion is a bit copy (two's complement). */
    *out = (int64_t)((u >> 1) ^ (0 - (u & 1)));
    return true;
}

static inline bool rd_int(rd_t *rd, int32_t *out)
{
    const unsigned char *s = rd->p;
    int64_t v = 0;
    char nm[160];
    if (!rd_long(rd, &v)) return false;
    if (v < INT32_MIN || v > INT32_MAX)
        return sw_avro_rd_fail(rd, SW_ERR_AVRO,
                               "Avro: int value %lld at byte %zu in %s does not fit in 32 bits",
                               (long long)v, rd_off(rd, s), rd_name(rd, nm, sizeof(nm)));
    *out = (int32_t)v;
    return true;
}

/* Why the string of length @p n at @p s cannot be read (@p bad: offset of
 * the first invalid UTF-8 byte, or n). */
__attribute__((noinline)) static bool rd_str_fail(rd_t *rd, const unsigned char *s, int64_t n,
                                                  size_t bad)
{
    char nm[160], detail[80];
    if (n < 0)
        return sw_avro_rd_fail(rd, SW_ERR_AVRO,
                               "Avro: negative string length %lld at byte %zu in %s", (long long)n,
                               rd_off(rd, s), rd_name(rd, nm, sizeof(nm)));
    if ((uint64_t)n > rd_left(rd)) {
        snprintf(detail, sizeof(detail), " (string of %lld bytes, %zu left)", (long long)n,
                 rd_left(rd));
        return sw_avro_rd_truncated(rd, s, detail);
    }
    return sw_avro_rd_fail(rd, SW_ERR_AVRO, "Avro: invalid UTF-8 at byte %zu in %s",
                           rd_off(rd, rd->p + bad), rd_name(rd, nm, sizeof(nm)));
}

/* Whether the @p n bytes at @p p are ASCII, for short strings (hosts, ids,
 * event types) with 16 bytes (@p left) readable there, in two word loads;
 * false means "check them fully", not "invalid". */
static inline bool ascii16(const unsigned char *p, size_t n, size_t left)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n > 16 || left < 16) return false;
    uint64_t lo, hi;
    memcpy(&lo, p, 8);
    memcpy(&hi, p + 8, 8);
    if (n < 8) {
        lo &= (UINT64_C(1) << (8 * n)) - 1;
        hi = 0;
    } else if (n < 16) {
        hi &= (UINT64_C(1) << (8 * (n - 8))) - 1;
    }
    return !((lo | hi) & UINT64_C(0x8080808080808080));
#else
    (void)p;
    (void)n;
    (void)left;
    return false;
#endif
}

/* ascii16() at rd->p. */
static inline bool rd_ascii16(const rd_t *rd, size_t n)
{
    return ascii16(rd->p, n, rd_left(rd));
}

static inline bool rd_str(rd_t *rd, sw_str_t *out)
{
    const unsigned char *s = rd->p;
    int64_t n = 0;
    if (!rd_long(rd, &n)) return false;
    if (n < 0 || (uint64_t)n > rd_left(rd)) return rd_str_fail(rd, s, n, 0);
    if (!rd_ascii16(rd, (size_t)n)) {
        size_t bad = sw_utf8_bad_at(rd->p, (size_t)n, false);
        if (bad != (size_t)n) return rd_str_fail(rd, s, n, bad);
    }
    out->ptr = (const char *)rd->p;
    out->len = (size_t)n;
    rd->p += n;
    return true;
}

/* Union branch or enum symbol index in [0, n). */
__attribute__((noinline)) static bool rd_index_slow(rd_t *rd, int64_t n, const char *what, int *out)
{
    const unsigned char *s = rd->p;
    int64_t v = 0;
    char nm[160];
    if (!rd_long(rd, &v)) return false;
    if (v < 0 || v >= n)
        return sw_avro_rd_fail(
            rd, SW_ERR_AVRO,
            "Avro: %s index %lld at byte %zu in %s is out of range (expected 0..%lld)", what,
            (long long)v, rd_off(rd, s), rd_name(rd, nm, sizeof(nm)), (long long)(n - 1));
    *out = (int)v;
    return true;
}

/* An index is nearly always one byte (zig-zag 0 .. 63). */
static inline bool rd_index(rd_t *rd, int64_t n, const char *what, int *out)
{
    if (rd->p < rd->end && *rd->p < 0x80) {
        int64_t v = (int64_t)(*rd->p >> 1) ^ -(int64_t)(*rd->p & 1);
        if (v >= 0 && v < n) {
            rd->p++;
            *out = (int)v;
            return true;
        }
    }
    return rd_index_slow(rd, n, what, out);
}

/* Is the next union ["null", T] non-null? */
static inline bool rd_opt(rd_t *rd, bool *set)
{
    int b = 0;
    if (!rd_index(rd, 2, "union", &b)) return false;
    *set = b == 1;
    return true;
}

/* Item count of the next array/map block (0 = end). Every item of these
 * schemas takes at least one byte, which bounds the count by what is left. */
static inline bool rd_block(rd_t *rd, int64_t *count)
{
    const unsigned char *s = rd->p;
    int64_t c = 0;
    char nm[160], detail[80];
    if (!rd_long(rd, &c)) return false;
    if (c < 0) {
        /* A negative count is followed by the block's size in bytes. */
        int64_t size = 0;
        if (c == INT64_MIN)
            return sw_avro_rd_fail(rd, SW_ERR_AVRO,
                                   "Avro: block count %lld at byte %zu in %s is out of range",
                                   (long long)c, rd_off(rd, s), rd_name(rd, nm, sizeof(nm)));
        c = -c;
        if (!rd_long(rd, &size)) return false;
        if (size < 0)
            return sw_avro_rd_fail(rd, SW_ERR_AVRO,
                                   "Avro: negative block size %lld at byte %zu in %s",
                                   (long long)size, rd_off(rd, s), rd_name(rd, nm, sizeof(nm)));
        if ((uint64_t)size > rd_left(rd)) {
            snprintf(detail, sizeof(detail), " (block of %lld bytes, %zu left)", (long long)size,
                     rd_left(rd));
            return sw_avro_rd_truncated(rd, s, detail);
        }
    }
    if ((uint64_t)c > rd_left(rd)) {
        snprintf(detail, sizeof(detail), " (block of %lld items, %zu bytes left)", (long long)c,
                 rd_left(rd));
        return sw_avro_rd_truncated(rd, s, detail);
    }
    *count = c;
    return true;
}

static inline bool rd_header(rd_t *rd, int32_t expected)
{
    if (expected < 0) return true;
    size_t len = rd_left(rd);
    if (len == 0)
        return sw_avro_rd_fail(
            rd, SW_ERR_TRUNCATED,
            "Avro: empty message, truncated at byte 0 (expected magic byte 0 and a "
            "4-byte schema id)");
    if (rd->p[0] != SW_AVRO_MAGIC)
        return sw_avro_rd_fail(rd, SW_ERR_AVRO,
                               "Avro: magic byte is %u, expected 0 (Confluent wire format)",
                               (unsigned)rd->p[0]);
    if (len < SW_AVRO_HEADER_LEN)
        return sw_avro_rd_fail(rd, SW_ERR_TRUNCATED,
                               "Avro: truncated at byte %zu while reading the schema id "
                               "(message of %zu bytes)",
                               len, len);
    uint32_t id = (uint32_t)rd->p[1] << 24 | (uint32_t)rd->p[2] << 16 | (uint32_t)rd->p[3] << 8 |
                  rd->p[4];
    if ((int64_t)id != expected)
        return sw_avro_rd_fail(rd, SW_ERR_AVRO, "unknown schema id %lld (expected %ld)",
                               (long long)id, (long)expected);
    rd->p += SW_AVRO_HEADER_LEN;
    return true;
}

static inline bool rd_done(rd_t *rd)
{
    if (rd->p == rd->end) return true;
    return sw_avro_rd_fail(rd, SW_ERR_AVRO, "Avro: %zu trailing bytes at byte %zu after the record",
                           rd_left(rd), rd_off(rd, rd->p));
}

#endif /* SW_CODEC_AVRO_INT_H */
