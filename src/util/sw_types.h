/*
 * Small value types shared by the core and the codecs: a length-counted
 * string view (JSON strings may contain NUL), and a growable byte buffer.
 * Nothing here does I/O.
 */
#ifndef SW_TYPES_H
#define SW_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** A borrowed string: @c ptr is not NUL-terminated in general. */
typedef struct sw_str_s {
    const char *ptr; /**< first byte (may be NULL when len == 0) */
    size_t len;      /**< length in bytes */
} sw_str_t;

/** @brief View of a NUL-terminated C string. */
static inline sw_str_t sw_str(const char *s)
{
    sw_str_t r = {s, s ? __builtin_strlen(s) : 0};
    return r;
}

/** @brief Byte-wise equality of two views. */
bool sw_str_eq(sw_str_t a, sw_str_t b);

/** @brief Whether @p n bytes at @p a and @p b are equal; the usual
 *         identifiers (4-32 bytes: hosts, job ids, session UUIDs) in two to
 *         four word compares, without a call. */
static inline bool sw_bytes_eq(const char *a, const char *b, size_t n)
{
    if (n > 16 && n <= 32) {
        uint64_t x[4], y[4];
        __builtin_memcpy(&x[0], a, 16);
        __builtin_memcpy(&y[0], b, 16);
        __builtin_memcpy(&x[2], a + n - 16, 16);
        __builtin_memcpy(&y[2], b + n - 16, 16);
        return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3])) == 0;
    }
    if (n >= 8 && n <= 16) {
        uint64_t x, y, z, w;
        __builtin_memcpy(&x, a, 8);
        __builtin_memcpy(&y, b, 8);
        __builtin_memcpy(&z, a + n - 8, 8);
        __builtin_memcpy(&w, b + n - 8, 8);
        return x == y && z == w;
    }
    if (n >= 4 && n < 8) {
        uint32_t x, y, z, w;
        __builtin_memcpy(&x, a, 4);
        __builtin_memcpy(&y, b, 4);
        __builtin_memcpy(&z, a + n - 4, 4);
        __builtin_memcpy(&w, b + n - 4, 4);
        return x == y && z == w;
    }
    return n == 0 || __builtin_memcmp(a, b, n) == 0;
}

/** @brief Byte-wise order (same as code-point order for UTF-8): <0, 0, >0. */
int sw_str_cmp(sw_str_t a, sw_str_t b);

/**
 * @brief Length of the UTF-8 sequence at @p p (at most @p n bytes there),
 *        or 0 when none starts there. Strict: no overlong forms, nothing
 *        past U+10FFFF; encoded surrogates (U+D800..DFFF) only with
 *        @p allow_surrogates (WTF-8: how the JSON decoder keeps lone ones).
 */
size_t sw_utf8_seq(const unsigned char *p, size_t n, bool allow_surrogates);

/** @brief Offset of the first byte that does not start a sequence
 *         (sw_utf8_seq()), or @p len when all are valid. */
size_t sw_utf8_bad_at(const void *data, size_t len, bool allow_surrogates);

/** @brief FNV-1a style 64-bit hash of a byte string. */
uint64_t sw_hash_bytes(const void *p, size_t len, uint64_t seed);

/** @brief Levenshtein distance of two NUL-terminated strings, ignoring ASCII
 *         case (for "did you mean" suggestions). SIZE_MAX when either is
 *         longer than 255 bytes. */
size_t sw_edit_distance_ci(const char *a, const char *b);

/** A growable byte buffer. Fields are public for fast appends. */
typedef struct sw_buf_s {
    char *data; /**< bytes (owned); NUL-terminated after sw_buf_cstr() */
    size_t len; /**< used bytes */
    size_t cap; /**< allocated bytes */
} sw_buf_t;

/** @brief Initialise an empty buffer (no allocation). */
void sw_buf_init(sw_buf_t *buf);
/** @brief Free the buffer's storage; it is empty and reusable afterwards. */
void sw_buf_clear(sw_buf_t *buf);
/** @brief Make room for @p extra more bytes. */
void sw_buf_reserve(sw_buf_t *buf, size_t extra);
/** @brief Append bytes. */
void sw_buf_put(sw_buf_t *buf, const void *p, size_t len);
/** @brief Append a NUL-terminated string. */
void sw_buf_puts(sw_buf_t *buf, const char *s);
/** @brief Append one byte. */
static inline void sw_buf_putc(sw_buf_t *buf, char c)
{
    if (buf->len + 1 > buf->cap) sw_buf_reserve(buf, 1);
    buf->data[buf->len++] = c;
}
/** @brief Append a signed decimal integer. */
void sw_buf_put_i64(sw_buf_t *buf, int64_t v);
/** @brief Append an unsigned decimal integer. */
void sw_buf_put_u64(sw_buf_t *buf, uint64_t v);
/**
 * @brief Append @p ns (since the Unix epoch, any int64 value, negative
 *        included) as RFC 3339 UTC with nine fraction digits:
 *        "2023-11-14T22:13:20.123456789Z".
 */
void sw_buf_put_rfc3339(sw_buf_t *buf, int64_t ns);
/** @brief Append printf-formatted text. */
void sw_buf_printf(sw_buf_t *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** @brief NUL-terminate and return the data (borrowed: valid until the next append). */
const char *sw_buf_cstr(sw_buf_t *buf);

#endif /* SW_TYPES_H */
