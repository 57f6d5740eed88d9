/*
 * Internal: compact binary encoding for state snapshots. Unsigned LEB128
 * varints, zigzag for signed values, length-prefixed bytes. The reader
 * never reads past its end: a short or malformed input sets bad and
 * yields zeros. Pure: no I/O.
 */
#ifndef SW_VARINT_H
#define SW_VARINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sw_types.h"

static inline void sw_vput_u(sw_buf_t *b, uint64_t v)
{
    while (v >= 0x80) {
        sw_buf_putc(b, (char)(v | 0x80));
        v >>= 7;
    }
    sw_buf_putc(b, (char)v);
}

static inline void sw_vput_i(sw_buf_t *b, int64_t v)
{
    sw_vput_u(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static inline void sw_vput_bytes(sw_buf_t *b, sw_str_t s)
{
    sw_vput_u(b, s.len);
    sw_buf_put(b, s.ptr, s.len);
}

/** A reader over [p, end). */
typedef struct sw_vrd_s {
    const uint8_t *p;
    const uint8_t *end;
    bool bad;
} sw_vrd_t;

static inline uint64_t sw_vget_u(sw_vrd_t *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) break;
        uint8_t c = *r->p++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) return v;
    }
    r->bad = true;
    return 0;
}

static inline int64_t sw_vget_i(sw_vrd_t *r)
{
    uint64_t u = sw_vget_u(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static inline sw_str_t sw_vget_bytes(sw_vrd_t *r)
{
    sw_str_t s = {"", 0};
    uint64_t n = sw_vget_u(r);
    if (r->bad || n > (uint64_t)(r->end - r->p)) {
        r->bad = true;
        return s;
    }
    s.ptr = (const char *)r->p;
    s.len = (size_t)n;
    r->p += n;
    return s;
}

#endif /* SW_VARINT_H */
