/*
 * JSON -> sw_event_t, the decoder's entry and its fast paths: the
 * compiled runs, the template, and the fast scanner, which hand a line
 * they cannot read to the general path (sw_codec_telemetry.c). Their hot
 * helpers call each other within this file so that they inline. No I/O.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_codec_telemetry_int.h"

/* ---- the fast paths ------------------------------------------------------
 *
 * Lines as producers write them: `{"key": value, "key": value}` with at
 * most one space after '{', ':' and ',', keys without escapes, values that
 * are strings, numbers, null/true/false, and a metadata object. One pass
 * with a local cursor and no call per token for these; a string with an
 * escape or non-ASCII bytes, and a metadata object other than {}, go
 * through the general scanner's functions from where they start. Anything
 * else (other whitespace, an empty object, a container under another key,
 * NaN/Infinity, a malformed token, bytes after the object) makes
 * tdec_fast() give up, and sw_tdec_json() decodes the line again with the
 * general path. The fast path fills f[] exactly as the general path would
 * (type, raw text, value), so validation, its messages and the event are
 * the same; it only decides sooner.
 *
 * Before it, the template path (tdec_tmpl()): producers also write the
 * same keys in the same order with the same separators on every line, so
 * the text between two values is the same from line to line. A line the
 * fast path read becomes the template: for each key, the bytes from the
 * end of the previous value to the start of its own (`, "rank": `, at
 * most 32), compared with the next line's in one step (two 16-byte SSE2
 * compares). The values between them are read by the fast path's own
 * code (fast_value()). Every byte of a line is thus either a template
 * byte that the fast path accepted in the same place, or part of a value
 * read as the fast path reads it; anything else (a differing byte, a
 * value the fast path would give up on, more or fewer keys) sends the
 * line to the fast path, and from there perhaps to the general path. */

/* The hot helpers of the fast paths, inline even where GCC's size
 * estimate would call them. */
#define FAST_INLINE __attribute__((always_inline)) static inline

/* `"key":` of every field, padded to 32 bytes for two 16-byte compares;
 * mask has one bit per byte of the pattern. */
/* A hand-laid table (clang-format 14 boxes its initializer macro). */
// clang-format off
static const struct {
    char pat[32];
    uint32_t mask;
    uint8_t len;
} k_keypat[F__CNT] = {
#define KP(s) {"\"" s "\":", ((uint32_t)1 << (sizeof(s) + 2)) - 1, sizeof(s) + 2}
    KP("timestamp_ns"), KP("event_type"), KP("rank"), KP("world_size"),
    KP("job_id"), KP("session_id"), KP("pid"), KP("host"),
    KP("device_used_bytes"), KP("sampling_interval_ms"), KP("metadata"),
    KP("schema_version"), KP("device_id"), KP("local_rank"),
    KP("allocator_allocated_bytes"), KP("allocator_reserved_bytes"),
    KP("allocator_active_bytes"), KP("allocator_inactive_bytes"),
    KP("allocator_change_bytes"), KP("device_free_bytes"), KP("device_total_bytes"),
    KP("collector"), KP("context"),
#undef KP
};
// clang-format on

/* Whether the 32-byte pattern pat (mask: the bytes that count, len: how
 * many) is at p. */
FAST_INLINE bool pat_at(const char *p, const char *end, const char *pat, uint32_t mask, size_t len)
{
#if defined(__SSE2__)
    if (end - p >= 32) {
        __m128i e0 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)p),
                                    _mm_loadu_si128((const __m128i *)(const void *)pat));
        __m128i e1 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 16)),
                                    _mm_loadu_si128((const __m128i *)(const void *)(pat + 16)));
        uint32_t eq = (uint32_t)_mm_movemask_epi8(e0) | (uint32_t)_mm_movemask_epi8(e1) << 16;
        return (eq & mask) == mask;
    }
#else
    (void)mask;
#endif
    return (size_t)(end - p) >= len && memcmp(p, pat, len) == 0;
}

/* Whether the `"key":` of field id is at p. */
static inline bool key_at(const char *p, const char *end, int id)
{
    return pat_at(p, end, k_keypat[id].pat, k_keypat[id].mask, k_keypat[id].len);
}

/* Where a string's plain content that starts at p ends (see
 * sw_json_skip_plain()); near the end of the line, one compare of the
 * line's last 16 bytes instead of a loop. */
FAST_INLINE const char *str_end(const char *p, const char *text, const char *end)
{
#if defined(__SSE2__)
    if (end - p < 16 && end - text >= 16) {
        const char *b = end - 16;
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)b);
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                              _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                                 _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
        unsigned mask = (unsigned)_mm_movemask_epi8(m) >> (p - b);
        return mask ? p + __builtin_ctz(mask) : end;
    }
#else
    (void)text;
#endif
    return sw_json_skip_plain(p, end);
}

#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Eight ASCII digits minus '0' (the first in the lowest byte) as their
 * value. */
static inline uint64_t swar8(uint64_t w)
{
    w = (w * 10) + (w >> 8);
    return (((w & 0x000000FF000000FFULL) * 0x000F424000000064ULL) +
            (((w >> 16) & 0x000000FF000000FFULL) * 0x0000271000000001ULL)) >>
           32;
}

/* The 1-15 digits at p (16 bytes readable, the first a digit) without a
 * loop: one SSE2 compare finds how many there are, two 8-byte words
 * convert them. @returns false (nothing read) for 16 digits or more. */
static inline bool digits15(const char **pp, uint64_t *mag)
{
    static const uint64_t k_pow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
    const char *p = *pp;
    __m128i t = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), _mm_set1_epi8('0'));
    __m128i isd = _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(9)), t);
    unsigned n = (unsigned)__builtin_ctz(~(unsigned)_mm_movemask_epi8(isd));
    if (n >= 16) return false;
    /* Bytes past the digits (and their borrows) are shifted out; zeros
     * come in as leading digits. */
    uint64_t lo;
    memcpy(&lo, p, 8);
    lo -= 0x3030303030303030ULL;
    if (n <= 8) {
        *mag = swar8(lo << (8 * (8 - n)));
    } else {
        uint64_t hi;
        memcpy(&hi, p + 8, 8);
        hi -= 0x3030303030303030ULL;
        *mag = swar8(lo) * k_pow10[n - 8] + swar8(hi << (8 * (16 - n)));
    }
    *pp = p + n;
    return true;
}

/* The value of the n (1..16) ASCII digits that end at q + 16, bytes
 * before them ignored: SSE2 multiply-adds, pairs, then fours, then
 * eights of digits. */
FAST_INLINE uint64_t digits_at_end(const char *q, unsigned n)
{
    /* From k_last + n: 16 - n zero bytes, then n bytes of ones. */
    static const uint8_t k_last[32] = {0,    0,    0,    0,    0,    0,    0,    0,
                                       0,    0,    0,    0,    0,    0,    0,    0,
                                       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    __m128i v = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)q), _mm_set1_epi8('0'));
    v = _mm_and_si128(v, _mm_loadu_si128((const __m128i *)(const void *)(k_last + n)));
    __m128i d2 = _mm_add_epi16(
        _mm_mullo_epi16(_mm_and_si128(v, _mm_set1_epi16(0xff)), _mm_set1_epi16(10)),
        _mm_srli_epi16(v, 8));
    __m128i d4 = _mm_madd_epi16(d2, _mm_set1_epi32(0x00010064)); /* x100 + x1 */
    d4 = _mm_packs_epi32(d4, d4);
    __m128i d8 = _mm_madd_epi16(d4, _mm_set1_epi32(0x00012710)); /* x10000 + x1 */
    uint64_t hi = (uint32_t)_mm_cvtsi128_si32(d8);
    uint64_t lo = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(d8, 4));
    return hi * 100000000ULL + lo;
}

/* The usual integer at *pp: 1-19 digits, the first not 0, 16 bytes
 * readable from *pp and 16 before it, not followed by '.', 'e' or 'E'.
 * @returns false (nothing read) for anything else. */
FAST_INLINE bool sse_int(const char **pp, const char *text, const char *end, sw_jval_t *v)
{
    const char *p = *pp;
    if (end - p < 16) return false;
    if (!is_digit(p[1])) { /* one digit: a device, a local rank */
        if (p[1] == '.' || (p[1] | 0x20) == 'e') return false;
        v->type = SW_J_INT;
        v->i = *p - '0';
        *pp = p + 1;
        return true;
    }
    if (p - text < 16) return false;
    __m128i t = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), _mm_set1_epi8('0'));
    __m128i isd = _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(9)), t);
    unsigned n = (unsigned)__builtin_ctz(~(unsigned)_mm_movemask_epi8(isd));
    uint64_t mag = digits_at_end(p + n - 16, n);
    if (n == 16) {
        while (n < 19 && p + n < end && is_digit(p[n])) mag = mag * 10 + (unsigned)(p[n++] - '0');
        if (p + n < end && is_digit(p[n])) return false; /* 20 digits or more */
    }
    const char *q = p + n;
    if (q < end && (*q == '.' || (*q | 0x20) == 'e')) return false;
    if (mag > (uint64_t)INT64_MAX) {
        v->type = SW_J_BIGINT;
    } else {
        v->type = SW_J_INT;
        v->i = (int64_t)mag;
    }
    *pp = q;
    return true;
}
#endif

/* A number at *pp as scan_number() reads it (integers as sw_jscan_int_fast
 * does), except NaN/Infinity and malformed numbers: false for those. */
static inline bool fast_number(const char **pp, const char *end, sw_jval_t *v)
{
    const char *p = *pp;
    bool neg = *p == '-';
    if (neg) p++;
    if (p >= end || !is_digit(*p)) return false;
    uint64_t mag = 0;
    bool big = false;
    if (*p == '0') {
        p++;
    } else {
#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (end - p < 16 || !digits15(&p, &mag))
#endif
            p = sw_json_digits(p, end, &mag, &big);
    }
    if (p < end && (*p == '.' || (*p | 0x20) == 'e')) {
        if (*p == '.') {
            p++;
            if (p >= end || !is_digit(*p)) return false;
            while (p < end && is_digit(*p)) p++;
        }
        if (p < end && (*p == 'e' || *p == 'E')) {
            p++;
            if (p < end && (*p == '+' || *p == '-')) p++;
            if (p >= end || !is_digit(*p)) return false;
            while (p < end && is_digit(*p)) p++;
        }
        v->type = SW_J_FLOAT;
    } else {
        uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        if (big || mag > limit) {
            v->type = SW_J_BIGINT;
        } else {
            v->type = SW_J_INT;
            v->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
        }
    }
    *pp = p;
    return true;
}

static inline bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The value at p (< end) of field id (-1: unknown) into *v, and for
 * metadata the phase scope into ev. @returns the byte after it, or NULL
 * when the general path must decide. Every value of both fast paths goes
 * through here. */
__attribute__((noinline)) static const char *fast_value_any(sw_tdec_t *dec, const char *p,
                                                            const char *text, const char *end,
                                                            int id, sw_jval_t *v, sw_event_t *ev,
                                                            sw_jscan_t *js)
{
    v->raw = p;
    switch (*p) {
    case '"': {
        const char *q = str_end(p + 1, text, end);
        if (q < end && *q == '"') {
            v->s.ptr = p + 1;
            v->s.len = (size_t)(q - p - 1);
            p = q + 1;
        } else {
            js->p = p;
            if (!sw_jscan_string(js, &v->s)) return NULL;
            p = js->p;
        }
        v->type = SW_J_STRING;
        break;
    }
    case 'n':
        if (end - p < 4 || memcmp(p, "null", 4) != 0) return NULL;
        v->type = SW_J_NULL;
        p += 4;
        break;
    case 't':
        if (end - p < 4 || memcmp(p, "true", 4) != 0) return NULL;
        v->type = SW_J_TRUE;
        p += 4;
        break;
    case 'f':
        if (end - p < 5 || memcmp(p, "false", 5) != 0) return NULL;
        v->type = SW_J_FALSE;
        p += 5;
        break;
    case '{':
        if (id != F_METADATA) return NULL;
        if (end - p >= 2 && p[1] == '}') {
            ev->has_phase = false;
            p += 2;
        } else if (dec->meta_len && (size_t)(end - p) >= dec->meta_len &&
                   memcmp(p, dec->meta_memo, dec->meta_len) == 0) {
            /* The object of an earlier line, byte for byte: it scans the
             * same, to the same end, without a phase scope. */
            ev->has_phase = false;
            p += dec->meta_len;
        } else {
            js->p = p;
            if (!sw_json_metadata_phase(js, &ev->phase, &ev->has_phase, 1)) return NULL;
            if (!ev->has_phase && (size_t)(js->p - p) <= sizeof(dec->meta_memo)) {
                dec->meta_len = (size_t)(js->p - p);
                memcpy(dec->meta_memo, p, dec->meta_len);
            }
            p = js->p;
        }
        v->type = SW_J_OBJECT;
        break;
    default:
#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (*p >= '1' && *p <= '9' && sse_int(&p, text, end, v)) break;
#endif
        if (!fast_number(&p, end, v)) return NULL;
        break;
    }
    v->raw_len = (size_t)(p - v->raw);
    return p;
}

/* fast_value_any() with the usual values inline: a plain string, an
 * integer, null. */
FAST_INLINE const char *fast_value(sw_tdec_t *dec, const char *p, const char *text, const char *end,
                                   int id, sw_jval_t *v, sw_event_t *ev, sw_jscan_t *js)
{
    const char *s = p;
    if (*p == '"') {
        const char *q = str_end(p + 1, text, end);
        if (q >= end || *q != '"') return fast_value_any(dec, s, text, end, id, v, ev, js);
        v->s.ptr = p + 1;
        v->s.len = (size_t)(q - p - 1);
        v->type = SW_J_STRING;
        p = q + 1;
#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    } else if (*p >= '1' && *p <= '9') {
        if (!sse_int(&p, text, end, v)) return fast_value_any(dec, s, text, end, id, v, ev, js);
#endif
    } else if (*p == 'n' && end - p >= 4 && memcmp(p, "null", 4) == 0) {
        v->type = SW_J_NULL;
        p += 4;
    } else {
        return fast_value_any(dec, s, text, end, id, v, ev, js);
    }
    v->raw = s;
    v->raw_len = (size_t)(p - s);
    return p;
}

/* The 64 bytes at p (end - p >= 64) equal pat's where mask has a bit. */
FAST_INLINE bool pat64_at(const char *p, const char *pat, uint64_t mask)
{
#if defined(__SSE2__)
    uint64_t eq = 0;
    for (int i = 0; i < 4; i++)
        eq |= (uint64_t)(uint32_t)_mm_movemask_epi8(
                  _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i)),
                                 _mm_loadu_si128((const __m128i *)(const void *)(pat + 16 * i))))
              << (16 * i);
    return (eq & mask) == mask;
#else
    for (int i = 0; i < 64; i++)
        if (((mask >> i) & 1) && p[i] != pat[i]) return false;
    return true;
#endif
}

/* Whether the text of step st is at p: the text before the value and,
 * when @p whole, the predicted value too. */
FAST_INLINE bool step_at(const char *p, const char *end, const tstep_t *st, bool whole)
{
    if (!whole) return pat_at(p, end, st->pat, (uint32_t)st->gmask, st->len);
    size_t n = (size_t)st->len + st->vlen;
    if (end - p >= 64) return pat64_at(p, st->pat, st->vmask);
    return (size_t)(end - p) >= n && memcmp(p, st->pat, n) == 0;
}

/* The line into f[] (and ev->phase/has_phase from metadata) by the
 * template, or false when the line differs from it (f[] then needs
 * resetting). f[] holds SW_J_ABSENT for the fields the template lacks; its
 * entry F__CNT takes the values of unknown keys. A predicted value that
 * differs is read, and no longer predicted. */
static bool tdec_tmpl(sw_tdec_t *dec, const char *text, size_t len, sw_jval_t *f, sw_event_t *ev)
{
    const char *p = text, *end = text + len;
    sw_jscan_t js;
    sw_jscan_init(&js, text, len, dec->scratch);
    for (unsigned k = 0; k < dec->ntmpl; k++) {
        tstep_t *st = &dec->tmpl[k];
        sw_jval_t *v = &f[st->slot];
        if (st->vlen && step_at(p, end, st, true)) {
            const char *s = p + st->len;
            v->type = (sw_jtype_t)st->vtype;
            v->raw = s;
            v->raw_len = st->vlen;
            v->i = st->vi;
            v->s.ptr = s + 1;
            v->s.len = (size_t)st->vlen - 2; /* meaningful for a string */
            if (st->vtype == SW_J_OBJECT) ev->has_phase = false;
            p = s + st->vlen;
            continue;
        }
        if (!step_at(p, end, st, false)) return false;
        if (st->vlen) dec->runs_stale = true;
        st->vlen = 0;
        p += st->len;
        if (p >= end) return false;
        p = fast_value(dec, p, text, end, st->slot, v, ev, &js);
        if (!p) return false;
    }
    if (p >= end || *p != '}') return false;
    p++;
    while (p < end && is_ws(*p)) p++;
    return p == end;
}

/* The event of a line the runs read, when it is valid: dec->ev0 with the
 * fields of dec->recheck decided as validate() and the carries decide
 * them (validate()'s order: world_size before rank, event_type before
 * device_used_bytes). Sets what they set, except has_phase (the reading
 * did). @returns false when a field is not the usual valid case; then
 * validate() decides the line, with its message. */
static bool runs_event(const sw_tdec_t *dec, sw_event_t *ev)
{
    const sw_jval_t *f = dec->run_f, *v;
    uint32_t m = dec->recheck;
    memcpy(ev, &dec->ev0, offsetof(sw_event_t, has_phase));
    memcpy(&ev->schema_version, &dec->ev0.schema_version,
           sizeof(sw_event_t) - offsetof(sw_event_t, schema_version));
#define AGAIN(x) (m & (1u << (x)))
    if (AGAIN(F_TIMESTAMP_NS)) {
        v = &f[F_TIMESTAMP_NS];
        if (v->type != SW_J_INT || v->i < 0) return false;
        ev->timestamp_ns = v->i;
    }
    if (AGAIN(F_EVENT_TYPE)) {
        v = &f[F_EVENT_TYPE];
        if (v->type != SW_J_STRING || v->s.len == 0) return false;
        ev->event_type = v->s;
        ev->kind = sw_event_kind(v->s);
    }
    if (AGAIN(F_WORLD_SIZE)) {
        v = &f[F_WORLD_SIZE];
        if (v->type != SW_J_INT || v->i < 1) return false;
        ev->world_size = v->i;
    }
    if (AGAIN(F_RANK)) {
        v = &f[F_RANK];
        if (v->type == SW_J_ABSENT) ev->rank = 0;
        else if (v->type != SW_J_INT || v->i < 0 || v->i >= ev->world_size) return false;
        else ev->rank = v->i;
    }
    if (AGAIN(F_JOB_ID)) {
        v = &f[F_JOB_ID];
        if (v->type != SW_J_STRING || v->s.len == 0) return false;
        ev->has_job_id = true;
        ev->job_id = v->s;
    }
    if (AGAIN(F_SESSION_ID)) {
        v = &f[F_SESSION_ID];
        if (v->type != SW_J_STRING) return false;
        ev->has_session_id = true;
        ev->session_id = v->s;
    }
    if (AGAIN(F_PID)) {
        v = &f[F_PID];
        if (v->type != SW_J_INT) return false;
        ev->pid = v->i;
    }
    if (AGAIN(F_HOST)) {
        v = &f[F_HOST];
        if (v->type != SW_J_STRING) return false;
        ev->host = v->s;
    }
    if (AGAIN(F_DEVICE_USED_BYTES)) {
        v = &f[F_DEVICE_USED_BYTES];
        ev->has_device_used = false;
        ev->counterless = false;
        ev->device_used_bytes = 0;
        if (v->type == SW_J_INT && v->i >= 0) {
            ev->has_device_used = true;
            ev->device_used_bytes = v->i;
        } else if (v->type == SW_J_NULL && counters_nullable(&f[F_SCHEMA_VERSION])) {
            ev->counterless = ev->kind == SW_EV_SAMPLE;
        } else if (v->type != SW_J_ABSENT || ev->kind == SW_EV_SAMPLE) {
            return false;
        }
    }
    if (AGAIN(F_SAMPLING_INTERVAL_MS)) {
        v = &f[F_SAMPLING_INTERVAL_MS];
        if (v->type != SW_J_INT || v->i < 0) return false;
        ev->sampling_interval_ms = v->i;
    }
    if (AGAIN(F_METADATA)) {
        v = &f[F_METADATA];
        if (v->type != SW_J_OBJECT) return false;
        ev->metadata_json.ptr = v->raw;
        ev->metadata_json.len = v->raw_len;
    }
    if (AGAIN(F_SCHEMA_VERSION)) carry_i64(&ev->schema_version, &f[F_SCHEMA_VERSION]);
    if (AGAIN(F_DEVICE_ID)) carry_i64(&ev->device_id, &f[F_DEVICE_ID]);
    if (AGAIN(F_LOCAL_RANK)) carry_i64(&ev->local_rank, &f[F_LOCAL_RANK]);
    if (AGAIN(F_ALLOC_ALLOCATED)) carry_i64(&ev->allocator_allocated_bytes, &f[F_ALLOC_ALLOCATED]);
    if (AGAIN(F_ALLOC_RESERVED)) carry_i64(&ev->allocator_reserved_bytes, &f[F_ALLOC_RESERVED]);
    if (AGAIN(F_ALLOC_ACTIVE)) carry_i64(&ev->allocator_active_bytes, &f[F_ALLOC_ACTIVE]);
    if (AGAIN(F_ALLOC_INACTIVE)) carry_i64(&ev->allocator_inactive_bytes, &f[F_ALLOC_INACTIVE]);
    if (AGAIN(F_ALLOC_CHANGE)) carry_i64(&ev->allocator_change_bytes, &f[F_ALLOC_CHANGE]);
    if (AGAIN(F_DEVICE_FREE)) carry_i64(&ev->device_free_bytes, &f[F_DEVICE_FREE]);
    if (AGAIN(F_DEVICE_TOTAL)) carry_i64(&ev->device_total_bytes, &f[F_DEVICE_TOTAL]);
    if (AGAIN(F_COLLECTOR)) carry_str(&ev->collector, &f[F_COLLECTOR]);
    if (AGAIN(F_CONTEXT)) carry_str(&ev->context, &f[F_CONTEXT]);
#undef AGAIN
    return true;
}

#if defined(__SSE2__)
/* The 16 bytes at a and b compared: one bit per byte that is equal. */
FAST_INLINE __m128i eq16(const char *a, const char *b)
{
    return _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)a),
                          _mm_loadu_si128((const __m128i *)(const void *)b));
}
#endif

/* Whether the text of run r is at p, with r->need bytes readable. */
FAST_INLINE bool run_text_at(const char *p, const run_t *r)
{
    size_t n = r->len;
    const char *c = r->text;
#if defined(__SSE2__)
    if (n <= 16) return ((unsigned)_mm_movemask_epi8(eq16(p, c)) & r->mask) == r->mask;
    /* 16-byte chunks, the last one ending with the text. */
    __m128i eq = _mm_and_si128(eq16(p, c), eq16(p + n - 16, c + n - 16));
    if (n > 32) {
        eq = _mm_and_si128(eq, eq16(p + 16, c + 16));
        for (size_t i = 32; i + 16 < n; i += 16) eq = _mm_and_si128(eq, eq16(p + i, c + i));
    }
    return _mm_movemask_epi8(eq) == 0xffff;
#else
    return memcmp(p, c, n) == 0;
#endif
}

/* Whether the text of run r is at p (< end), near the line's end. */
FAST_INLINE bool run_at(const char *p, const char *end, const run_t *r)
{
    size_t n = r->len;
    if ((size_t)(end - p) < n) return false;
#if defined(__SSE2__)
    if (n >= 16) return run_text_at(p, r); /* its chunks end with the text */
#endif
    return memcmp(p, r->text, n) == 0;
}

/* The value at p of a run (33 bytes readable, and 16 before it), as
 * fast_value() reads it
 * (the same f[] entry), with its usual kinds in a few steps: an integer
 * of 1-19 digits without sign (SSE2 finds them; up to 8 are converted
 * in one word),
 * a plain string of up to 31 bytes, 0, and metadata {}. The byte after
 * an integer is not looked at here: the text of the next run (or the
 * tail, or the closing '}') starts there and is no digit, '.', 'e' or
 * 'E' (runs_compile() checks), so a number that goes on fails that
 * compare and the line goes to the other paths. */
FAST_INLINE const char *run_value(sw_tdec_t *dec, const char *p, const char *text, const char *end,
                                  const run_t *r, sw_event_t *ev, sw_jscan_t *js)
{
#if defined(__SSE2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    sw_jval_t *v = r->v;
    const char *q = p; /* the digits */
    (void)text;
    if ((unsigned)(*q - '1') < 9) {
        __m128i t0 = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)q),
                                  _mm_set1_epi8('0'));
        uint32_t dm = (uint32_t)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_min_epu8(t0, _mm_set1_epi8(9)), t0));
        if (dm == 0xffff) { /* 16 digits or more: the next 16 bytes too */
            __m128i t1 = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(const void *)(q + 16)),
                                      _mm_set1_epi8('0'));
            dm |=
                (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(t1, _mm_set1_epi8(9)), t1))
                << 16;
        }
        unsigned n = (unsigned)__builtin_ctzll(~(uint64_t)dm);
        uint64_t mag;
        if (n <= 8) { /* pids, ranks, devices: one word */
            uint64_t w;
            memcpy(&w, q, 8);
            /* The digits to the top, zeros in as leading digits; the
             * subtraction's borrows (from the bytes after the digits
             * only) are shifted out. */
            mag = swar8((w - 0x3030303030303030ULL) << (8 * (8 - n)));
        } else if (n <= 16) {
            mag = digits_at_end(q + n - 16, n);
        } else if (n <= 19) {
            mag = digits_at_end(q + n - 32, n - 16) * 10000000000000000ULL +
                  digits_at_end(q + n - 16, 16);
            if (mag > (uint64_t)INT64_MAX) { /* 18 digits or fewer always fit */
                v->type = SW_J_BIGINT;
                v->raw = p;
                v->raw_len = n;
                return q + n;
            }
        } else {
            goto other;
        }
        v->raw = p;
        v->raw_len = n;
        v->type = SW_J_INT;
        v->i = (int64_t)mag;
        return q + n;
    }
    if (*p == '"') {
        /* The content's first byte that is a quote, a backslash, a
         * control or >= 0x80 (signed below 0x20). */
        __m128i s0 = _mm_loadu_si128((const __m128i *)(const void *)(p + 1));
        const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
        const __m128i space = _mm_set1_epi8(0x20);
        uint32_t m = (uint32_t)_mm_movemask_epi8(
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(s0, quote), _mm_cmpeq_epi8(s0, bslash)),
                         _mm_cmplt_epi8(s0, space)));
        if (!m) { /* 16 bytes or more: the next 16 too */
            __m128i s1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 17));
            m = (uint32_t)_mm_movemask_epi8(_mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(s1, quote), _mm_cmpeq_epi8(s1, bslash)),
                    _mm_cmplt_epi8(s1, space)))
                << 16;
        }
        if (m) {
            unsigned n = (unsigned)__builtin_ctz(m);
            if (p[1 + n] == '"') {
                v->s.ptr = p + 1;
                v->s.len = n;
                v->type = SW_J_STRING;
                v->raw = p;
                v->raw_len = (size_t)n + 2;
                return p + n + 2;
            }
        }
    } else if (*p == '0') { /* fast_number()'s 0; what follows is the next text's */
        v->type = SW_J_INT;
        v->i = 0;
        v->raw = p;
        v->raw_len = 1;
        return p + 1;
    } else if (*p == '{' && p[1] == '}' && r->slot == F_METADATA) {
        ev->has_phase = false;
        v->type = SW_J_OBJECT;
        v->raw = p;
        v->raw_len = 2;
        return p + 2;
    }
other:
#endif
    return fast_value(dec, p, text, end, r->slot, r->v, ev, js);
}

/* The line into run_f by the runs, or false when it differs from them.
 * Only the values read are written: the other entries of run_f keep what
 * runs_compile() put there (no run reads into them: no field has two
 * keys). Predicted values take their event strings from run_text (the
 * decoder's: sw_tdec_json() allows it). */
static bool tdec_runs(sw_tdec_t *dec, const char *text, size_t len, sw_event_t *ev)
{
    const char *p = text, *end = text + len;
    sw_jscan_t js;
    sw_jscan_init(&js, text, len, dec->scratch);
    for (unsigned k = 0; k < dec->nruns; k++) {
        const run_t *r = &dec->runs[k];
        if (end - p >= r->need) {
            if (!run_text_at(p, r)) return false;
            p = run_value(dec, p + r->len, text, end, r, ev, &js);
        } else {
            if (!run_at(p, end, r)) return false;
            p += r->len;
            if (p >= end) return false;
            p = fast_value(dec, p, text, end, r->slot, r->v, ev, &js);
        }
        if (!p) return false;
    }
    if (dec->tail.len) {
        const run_t *r = &dec->tail;
        if (end - p >= r->need ? !run_text_at(p, r) : !run_at(p, end, r)) return false;
        p += dec->tail.len;
    }
    if (p >= end || *p != '}') return false;
    p++;
    while (p < end && is_ws(*p)) p++;
    return p == end;
}

/* The line into f[] (and ev->phase/has_phase from metadata), or false
 * when the general path must decide it; see above. A line read becomes
 * the template. */
static bool tdec_fast(sw_tdec_t *dec, const char *text, size_t len, sw_jval_t *f, sw_event_t *ev)
{
    const char *p = text, *end = text + len;
    const char *gap[SEQ_MAX + 1], *val[SEQ_MAX];
    sw_jscan_t js;
    sw_jscan_init(&js, text, len, dec->scratch);
    while (p < end && is_ws(*p)) p++;
    if (p >= end || *p != '{') return false;
    p++;
    if (p < end && *p == ' ') p++;
    const char *gs = text; /* where the text before the next value starts */
    unsigned kth;
    int prev = F__CNT; /* the field of the key before (F__CNT: none yet; -1: unknown) */
    for (kth = 0;; kth++) {
        if (p >= end || *p != '"') return false;
        int id = kth < SEQ_MAX ? dec->seq[kth] : -1;
        int nx;
        if (id >= 0 && key_at(p, end, id)) {
            p += k_keypat[id].len;
        } else if (prev >= 0 && (nx = dec->next[prev]) >= 0 && nx != id && key_at(p, end, nx)) {
            /* A key left out or added before this one shifts the positions
             * seq predicts, not the key that follows the one before. */
            id = nx;
            p += k_keypat[id].len;
            if (kth < SEQ_MAX) dec->seq[kth] = (int8_t)id;
        } else if (prev >= 0 && (nx = sw_tdec_stormlog_next[prev]) >= 0 && nx != id &&
                   nx != dec->next[prev] && key_at(p, end, nx)) {
            id = nx;
            p += k_keypat[id].len;
            if (kth < SEQ_MAX) dec->seq[kth] = (int8_t)id;
        } else {
            const char *k = p + 1;
            const char *q = sw_json_skip_plain(k, end);
            if (q >= end || *q != '"' || q + 1 >= end || q[1] != ':') return false;
            id = sw_tdec_field_id((sw_str_t){k, (size_t)(q - k)});
            p = q + 2;
            if (kth < SEQ_MAX) dec->seq[kth] = (int8_t)id;
            if (id >= 0 && prev >= 0) dec->next[prev] = (int8_t)id;
        }
        prev = id;
        if (p < end && *p == ' ') p++;
        if (p >= end) return false;
        if (kth < SEQ_MAX) {
            gap[kth] = gs;
            val[kth] = p;
        }
        sw_jval_t skipped;
        p = fast_value(dec, p, text, end, id, id >= 0 ? &f[id] : &skipped, ev, &js);
        if (!p) return false;
        gs = p;
        if (p < end && *p == ',') {
            p++;
            if (p < end && *p == ' ') p++;
            continue;
        }
        if (p < end && *p == '}') {
            p++;
            break;
        }
        return false;
    }
    while (p < end && is_ws(*p)) p++;
    if (p != end) return false;
    if (kth + 1 <= SEQ_MAX) gap[kth + 1] = gs;
    sw_tdec_tmpl_learn(dec, kth + 1, gap, val, dec->seq);
    return true;
}

sw_err_t sw_tdec_json(sw_tdec_t *dec, const char *text, size_t len, sw_event_t *ev, char *errstr,
                      size_t errstr_size)
{
    if (dec->scratch_cap < len + 16) {
        dec->scratch_cap = len + 16 > 4096 ? len + 16 : 4096;
        free(dec->scratch);
        dec->scratch = sw_malloc(dec->scratch_cap);
    }
    sw_jval_t fl[F__CNT + 1]; /* [F__CNT]: the template path's unknown keys */
    sw_jval_t *f = fl;
    /* Every field of *ev is assigned by validate() and the carry_*() calls;
     * the phase scope only when has_phase. No memset: it is ~1 KiB. */
    ev->has_phase = false;
    if (!dec->general_only && dec->nruns) {
        if (tdec_runs(dec, text, len, ev)) {
            f = dec->run_f;
            dec->tmpl_lines++;
            goto validate;
        }
        ev->has_phase = false;
    }
    if (!dec->general_only && dec->ntmpl) {
        /* The template sets its fields; only the others start absent. */
        for (unsigned i = 0; i < dec->nabsent; i++) f[dec->absent[i]].type = SW_J_ABSENT;
        bool ok = tdec_tmpl(dec, text, len, f, ev);
        if (dec->runs_stale) sw_tdec_runs_compile(dec);
        if (ok) {
            dec->tmpl_lines++;
            goto validate;
        }
        ev->has_phase = false;
    }
    for (int i = 0; i < F__CNT; i++) f[i].type = SW_J_ABSENT;
    if (!dec->general_only && tdec_fast(dec, text, len, f, ev)) {
        if (dec->runs_stale) sw_tdec_runs_compile(dec);
        goto validate;
    }
    /* The general path, from the start (the fast one may have filled some
     * of f[] and the phase scope). */
    for (int i = 0; i < F__CNT; i++) f[i].type = SW_J_ABSENT;
    ev->has_phase = false;
    sw_err_t err = sw_tdec_general(dec, text, len, f, ev, errstr, errstr_size);
    if (err) return err;
validate:
    if (f == dec->run_f && dec->ev0_ok && runs_event(dec, ev)) goto bounds;
    err = sw_tdec_validate(f, ev, errstr, errstr_size);
    if (err) return err;
    if (f == dec->run_f && !dec->ev0_ok) {
        dec->ev0 = *ev; /* its phase scope is not used */
        dec->ev0_ok = true;
    }
bounds:
    if ((ev->event_type.len | ev->job_id.len | ev->host.len | ev->session_id.len) > SW_IDENT_MAX) {
        err = sw_tdec_ident_bounds(ev, errstr, errstr_size); /* the usual case is checked inline */
        if (err) return err;
    }
    sw_event_meta_oom(ev, dec->oom_reason);
    return SW_OK;
}
