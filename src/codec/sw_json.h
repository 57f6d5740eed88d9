/*
 * Internal to the codecs: a strict, allocation-free JSON scanner over a
 * byte range. It accepts what Python's json.loads accepts (including NaN,
 * Infinity and -Infinity, and lone \u surrogates) and rejects the rest:
 * control characters in strings, bad escapes, invalid UTF-8, leading zeros,
 * trailing garbage. Errors carry a byte offset for "column N" messages.
 */
#ifndef SW_JSON_H
#define SW_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sw_event.h"
#include "sw_types.h"

/** Deepest nesting accepted. */
#define SW_JSON_MAX_DEPTH 256

/** Value types seen by the scanner. */
typedef enum sw_jtype_e {
    SW_J_ABSENT = 0, /**< key not present */
    SW_J_NULL,
    SW_J_TRUE,
    SW_J_FALSE,
    SW_J_INT,    /**< integer syntax that fits int64 */
    SW_J_BIGINT, /**< integer syntax beyond int64 */
    SW_J_FLOAT,  /**< fraction, exponent, NaN or +-Infinity */
    SW_J_STRING,
    SW_J_OBJECT,
    SW_J_ARRAY
} sw_jtype_t;

/** Scanner state over [p, end). */
typedef struct sw_jscan_s {
    const char *start; /**< beginning of the text (for offsets) */
    const char *p;     /**< current position */
    const char *end;   /**< one past the last byte */
    char *scratch;     /**< room for unescaped strings (>= text length) */
    size_t scratch_used;
    const char *err;    /**< static error text when a call fails */
    const char *err_at; /**< where the error was found */
} sw_jscan_t;

/** A scanned scalar or the span of a container. */
typedef struct sw_jval_s {
    sw_jtype_t type;
    const char *raw; /**< first byte of the value's text */
    size_t raw_len;  /**< length of the value's text */
    int64_t i;       /**< SW_J_INT value */
    sw_str_t s;      /**< SW_J_STRING value (unescaped) */
} sw_jval_t;

/** @brief Start scanning @p len bytes; @p scratch must hold @p len bytes. */
static inline void sw_jscan_init(sw_jscan_t *js, const char *text, size_t len, char *scratch)
{
    js->start = text;
    js->p = text;
    js->end = text + len;
    js->scratch = scratch;
    js->scratch_used = 0;
    js->err = NULL;
    js->err_at = text;
}

/** @brief Skip JSON whitespace (space, tab, CR, LF). */
static inline void sw_jscan_ws(sw_jscan_t *js)
{
    const char *p = js->p, *end = js->end;
    /* Common cases first: no whitespace, or the one space of ", " / ": ". */
    if (p < end && (unsigned char)*p > ' ') return;
    if (end - p >= 2 && *p == ' ' && (unsigned char)p[1] > ' ') {
        js->p = p + 1;
        return;
    }
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    js->p = p;
}

/**
 * @brief Scan the digits of a non-zero integer part at @p p (the first byte
 *        is 1-9). Eight digits at a time where the bytes allow.
 * @param mag  the value when at most 19 digits
 * @param big  set when there are 20 digits or more (beyond int64 anyway)
 * @returns the first byte after the digits.
 */
static inline const char *sw_json_digits(const char *p, const char *end, uint64_t *mag, bool *big)
{
    const char *d0 = p;
    uint64_t m = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (end - p >= 8) {
        uint64_t w;
        __builtin_memcpy(&w, p, 8);
        if ((((w & 0xF0F0F0F0F0F0F0F0ULL) |
              (((w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) !=
             0x3333333333333333ULL))
            break;
        w -= 0x3030303030303030ULL;
        w = (w * 10) + (w >> 8);
        w = (((w & 0x000000FF000000FFULL) * 0x000F424000000064ULL) +
             (((w >> 16) & 0x000000FF000000FFULL) * 0x0000271000000001ULL)) >>
            32;
        m = m * 100000000ULL + w;
        p += 8;
    }
#endif
    while (p < end && *p >= '0' && *p <= '9') {
        m = m * 10 + (unsigned)(*p - '0');
        p++;
    }
    *mag = m;
    *big = p - d0 > 19;
    return p;
}

/**
 * @brief Fast path for a plain integer value (no fraction, no exponent) at
 *        the cursor, filling @p v as sw_jscan_value() would.
 * @returns false, with the cursor unchanged, when the value is anything
 *          else; the caller then uses sw_jscan_value().
 */
static inline bool sw_jscan_int_fast(sw_jscan_t *js, sw_jval_t *v)
{
    const char *p = js->p, *end = js->end;
    bool neg = p < end && *p == '-';
    if (neg) p++;
    if (p >= end || *p < '1' || *p > '9') return false;
    uint64_t mag;
    bool big;
    p = sw_json_digits(p, end, &mag, &big);
    if (p < end && (*p == '.' || *p == 'e' || *p == 'E')) return false;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    v->raw = js->p;
    v->raw_len = (size_t)(p - js->p);
    if (big || mag > limit) {
        v->type = SW_J_BIGINT;
    } else {
        v->type = SW_J_INT;
        v->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    }
    js->p = p;
    return true;
}

/**
 * @brief First byte at or after @p p that is not plain ASCII string
 *        content: a quote, a backslash, a control character or a byte
 *        >= 0x80 (@p end when there is none). SSE2 looks at 16 bytes at a
 *        time: as signed bytes, both controls and bytes >= 0x80 compare
 *        below 0x20.
 */
static inline const char *sw_json_skip_plain(const char *p, const char *end)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i bslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                 _mm_cmplt_epi8(v, space));
        int mask = _mm_movemask_epi8(m);
        if (mask) return p + __builtin_ctz((unsigned)mask);
        p += 16;
    }
#endif
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
        p++;
    }
    return p;
}

/** @brief Consume byte @p c after whitespace. @returns false (error set) if absent. */
bool sw_jscan_expect(sw_jscan_t *js, char c, const char *what);

/** @brief Only whitespace may follow the value just scanned. @returns
 *         false (error "unexpected data after the value" set) otherwise. */
bool sw_jscan_end(sw_jscan_t *js);

/** @brief Scan a string at the cursor (unescaped into scratch when needed). */
bool sw_jscan_string(sw_jscan_t *js, sw_str_t *out);

/** @brief The 4 hex digits at @p p (before @p end) of a \u escape.
 *  @returns false when fewer than 4 or not hex. */
bool sw_json_hex4(const char *p, const char *end, uint32_t *out);

/** @brief Encode a code point (surrogates included, as WTF-8) into @p d
 *         (room for 4 bytes). @returns the bytes written. */
size_t sw_json_put_utf8(char *d, uint32_t cp);

/**
 * @brief Scan any value. Scalars are decoded into @p v; containers are
 *        validated and skipped (v->raw spans them).
 */
bool sw_jscan_value(sw_jscan_t *js, sw_jval_t *v, int depth);

/** @brief The type of a JSON value for messages: "null", "a boolean",
 *         "a number", "a string", "an array" or "an object". */
const char *sw_jtype_name(sw_jtype_t t);

/** @brief Byte offset of the cursor or error, for messages (0-based). */
static inline size_t sw_jscan_offset(const sw_jscan_t *js, const char *at)
{
    return (size_t)(at - js->start);
}

/**
 * @brief Append the members of the JSON object @p obj, except those named
 *        @p key, to @p out as `"k": v` separated by ", " (each copied as
 *        written). Stops quietly at the first thing that does not scan.
 * @returns how many members were appended.
 */
size_t sw_json_members_except(sw_str_t obj, const char *key, sw_buf_t *out);

/**
 * @brief Scan the metadata object at the cursor (on its '{') and find its
 *        phase_scope (SPEC 2; the last such key wins): *has_phase when one
 *        is an object with every typed field right, then *ps holds it.
 *        The JSON and the Avro decoders both read metadata through this.
 * @returns false (error set in @p js) when the object does not scan.
 */
bool sw_json_metadata_phase(sw_jscan_t *js, sw_phase_scope_t *ps, bool *has_phase, int depth);

/** @brief Whether metadata text may hold a phase_scope key (plain or
 *         escaped): a cheap filter before sw_json_text_phase(). */
bool sw_json_may_have_phase(sw_str_t text);

/**
 * @brief The phase scope the decoders read from metadata text @p text (a
 *        JSON object), into *ps; its strings point into @p text or
 *        @p scratch (room for text.len + 16 bytes).
 * @returns whether there is one (false too when the text does not scan).
 */
bool sw_json_text_phase(sw_str_t text, char *scratch, sw_phase_scope_t *ps);

#endif /* SW_JSON_H */
