/*
 * Avro binary <-> sw_event_t / sw_record_t for exactly the two schemas of
 * schemas/ (see sw_codec_avro.h). The encoders append to a buffer and
 * check everything that can fail before the first byte, so a failed call
 * leaves the buffer as it was. The decoders never read past the end, never
 * allocate per element and report the byte offset of the first problem.
 * No I/O, no libavro: tests check this file against Avro C.
 */
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

static bool utf8_ok(sw_str_t s)
{
    return s.len == 0 || sw_utf8_bad_at(s.ptr, s.len, false) == s.len;
}

/* ------------------------------------------------------------------ */
/* Writer                                                              */
/* ------------------------------------------------------------------ */

static void put_varint(sw_buf_t *out, uint64_t u)
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
static void put_long(sw_buf_t *out, int64_t v)
{
    put_varint(out, ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0));
}

static void put_str(sw_buf_t *out, sw_str_t s)
{
    put_long(out, (int64_t)s.len);
    sw_buf_put(out, s.ptr, s.len);
}

static void put_cstr(sw_buf_t *out, const char *s)
{
    put_str(out, sw_str(s));
}

/* A string that must be UTF-8 on the wire: invalid bytes (in practice the
 * WTF-8 lone surrogates the JSON scanner keeps) become U+FFFD. */
static void put_str_clean(sw_buf_t *out, sw_str_t s)
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

static void put_opt_long(sw_buf_t *out, bool set, int64_t v)
{
    put_long(out, set ? 1 : 0);
    if (set) put_long(out, v);
}

static void put_opt_str(sw_buf_t *out, bool set, sw_str_t s)
{
    put_long(out, set ? 1 : 0);
    if (set) put_str(out, s);
}

static void put_opt_str_clean(sw_buf_t *out, bool set, sw_str_t s)
{
    put_long(out, set ? 1 : 0);
    if (set) put_str_clean(out, s);
}

static void put_header(sw_buf_t *out, int32_t schema_id)
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
    const char *field;         /* field being read, for messages */
    const char *prefix;        /* enclosing record fields ("source."), or "" */
    const char *outer;         /* array field that holds it, or NULL */
    size_t index;              /* element of outer */
    sw_err_t err;
    char *errstr;
    size_t errstr_size;
} rd_t;

static void rd_init(rd_t *rd, const void *data, size_t len, char *errstr, size_t errstr_size)
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

static size_t rd_off(const rd_t *rd, const unsigned char *at)
{
    /* A field converted while resolving a writer schema lies outside the
     * message: no offset (compared as integers, not as pointers). */
    uintptr_t a = (uintptr_t)at, b = (uintptr_t)rd->base;
    if (a < b || a > (uintptr_t)rd->limit) return 0;
    return (size_t)(a - b);
}

static size_t rd_left(const rd_t *rd)
{
    return (size_t)(rd->end - rd->p);
}

/* "field \"x\"" or "field \"suspects[2].x\"", for messages. */
static const char *rd_name(const rd_t *rd, char *buf, size_t size)
{
    if (rd->outer)
        snprintf(buf, size, "field \"%s[%zu].%s%s\"", rd->outer, rd->index, rd->prefix, rd->field);
    else snprintf(buf, size, "field \"%s%s\"", rd->prefix, rd->field);
    return buf;
}

static bool rd_fail(rd_t *rd, sw_err_t err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool rd_fail(rd_t *rd, sw_err_t err, const char *fmt, ...)
{
    if (rd->err) return false;
    rd->err = err;
    va_list ap;
    va_start(ap, fmt);
    if (rd->errstr && rd->errstr_size) vsnprintf(rd->errstr, rd->errstr_size, fmt, ap);
    va_end(ap);
    return false;
}

static bool rd_truncated(rd_t *rd, const unsigned char *at, const char *detail)
{
    char nm[160];
    return rd_fail(rd, SW_ERR_TRUNCATED, "Avro: truncated at byte %zu while reading %s%s",
                   rd_off(rd, at), rd_name(rd, nm, sizeof(nm)), detail);
}

/* The careful decoder: bounds and length checked byte by byte. */
__attribute__((noinline)) static bool rd_varint_slow(rd_t *rd, uint64_t *out)
{
    const unsigned char *s = rd->p;
    uint64_t v = 0;
    char nm[160];
    for (int i = 0;; i++) {
        if (rd->p >= rd->end) return rd_truncated(rd, s, "");
        unsigned char b = *rd->p++;
        if (i == 9) {
            if (b & 0x80)
                return rd_fail(rd, SW_ERR_AVRO,
                               "Avro: varint longer than 10 bytes at byte %zu in %s", rd_off(rd, s),
                               rd_name(rd, nm, sizeof(nm)));
            if (b > 1)
                return rd_fail(rd, SW_ERR_AVRO,
                               "Avro: varint at byte %zu in %s does not fit in 64 bits",
                               rd_off(rd, s), rd_name(rd, nm, sizeof(nm)));
        }
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) break;
    }
    *out = v;
    return true;
}

/* Most varints end well before the buffer does: decode those without a
 * bounds check per byte; anything else (9+ bytes, near the end) takes the
 * careful path from the start. */
static inline bool rd_varint(rd_t *rd, uint64_t *out)
{
    const unsigned char *p = rd->p;
    if (rd->end - p >= 10) {
        uint64_t v = 0;
        for (unsigned i = 0; i < 9; i++) {
            uint64_t b = p[i];
            v |= (b & 0x7f) << (7 * i);
            if (b < 0x80) {
                rd->p = p + i + 1;
                *out = v;
                return true;
            }
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

static bool rd_int(rd_t *rd, int32_t *out)
{
    const unsigned char *s = rd->p;
    int64_t v = 0;
    char nm[160];
    if (!rd_long(rd, &v)) return false;
    if (v < INT32_MIN || v > INT32_MAX)
        return rd_fail(rd, SW_ERR_AVRO,
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
        return rd_fail(rd, SW_ERR_AVRO, "Avro: negative string length %lld at byte %zu in %s",
                       (long long)n, rd_off(rd, s), rd_name(rd, nm, sizeof(nm)));
    if ((uint64_t)n > rd_left(rd)) {
        snprintf(detail, sizeof(detail), " (string of %lld bytes, %zu left)", (long long)n,
                 rd_left(rd));
        return rd_truncated(rd, s, detail);
    }
    return rd_fail(rd, SW_ERR_AVRO, "Avro: invalid UTF-8 at byte %zu in %s",
                   rd_off(rd, rd->p + bad), rd_name(rd, nm, sizeof(nm)));
}

static inline bool rd_str(rd_t *rd, sw_str_t *out)
{
    const unsigned char *s = rd->p;
    int64_t n = 0;
    if (!rd_long(rd, &n)) return false;
    if (n < 0 || (uint64_t)n > rd_left(rd)) return rd_str_fail(rd, s, n, 0);
    size_t bad = sw_utf8_bad_at(rd->p, (size_t)n, false);
    if (bad != (size_t)n) return rd_str_fail(rd, s, n, bad);
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
        return rd_fail(rd, SW_ERR_AVRO,
                       "Avro: %s index %lld at byte %zu in %s is out of range (expected 0..%lld)",
                       what, (long long)v, rd_off(rd, s), rd_name(rd, nm, sizeof(nm)),
                       (long long)(n - 1));
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
static bool rd_block(rd_t *rd, int64_t *count)
{
    const unsigned char *s = rd->p;
    int64_t c = 0;
    char nm[160], detail[80];
    if (!rd_long(rd, &c)) return false;
    if (c < 0) {
        /* A negative count is followed by the block's size in bytes. */
        int64_t size = 0;
        if (c == INT64_MIN)
            return rd_fail(rd, SW_ERR_AVRO,
                           "Avro: block count %lld at byte %zu in %s is out of range", (long long)c,
                           rd_off(rd, s), rd_name(rd, nm, sizeof(nm)));
        c = -c;
        if (!rd_long(rd, &size)) return false;
        if (size < 0)
            return rd_fail(rd, SW_ERR_AVRO, "Avro: negative block size %lld at byte %zu in %s",
                           (long long)size, rd_off(rd, s), rd_name(rd, nm, sizeof(nm)));
        if ((uint64_t)size > rd_left(rd)) {
            snprintf(detail, sizeof(detail), " (block of %lld bytes, %zu left)", (long long)size,
                     rd_left(rd));
            return rd_truncated(rd, s, detail);
        }
    }
    if ((uint64_t)c > rd_left(rd)) {
        snprintf(detail, sizeof(detail), " (block of %lld items, %zu bytes left)", (long long)c,
                 rd_left(rd));
        return rd_truncated(rd, s, detail);
    }
    *count = c;
    return true;
}

static bool rd_header(rd_t *rd, int32_t expected)
{
    if (expected < 0) return true;
    size_t len = rd_left(rd);
    if (len == 0)
        return rd_fail(rd, SW_ERR_TRUNCATED,
                       "Avro: empty message, truncated at byte 0 (expected magic byte 0 and a "
                       "4-byte schema id)");
    if (rd->p[0] != SW_AVRO_MAGIC)
        return rd_fail(rd, SW_ERR_AVRO,
                       "Avro: magic byte is %u, expected 0 (Confluent wire format)",
                       (unsigned)rd->p[0]);
    if (len < SW_AVRO_HEADER_LEN)
        return rd_fail(rd, SW_ERR_TRUNCATED,
                       "Avro: truncated at byte %zu while reading the schema id "
                       "(message of %zu bytes)",
                       len, len);
    uint32_t id = (uint32_t)rd->p[1] << 24 | (uint32_t)rd->p[2] << 16 | (uint32_t)rd->p[3] << 8 |
                  rd->p[4];
    if ((int64_t)id != expected)
        return rd_fail(rd, SW_ERR_AVRO, "unknown schema id %lld (expected %ld)", (long long)id,
                       (long)expected);
    rd->p += SW_AVRO_HEADER_LEN;
    return true;
}

static bool rd_done(rd_t *rd)
{
    if (rd->p == rd->end) return true;
    return rd_fail(rd, SW_ERR_AVRO, "Avro: %zu trailing bytes at byte %zu after the record",
                   rd_left(rd), rd_off(rd, rd->p));
}

sw_err_t sw_avro_schema_id(const void *data, size_t len, int32_t *schema_id, char *errstr,
                           size_t errstr_size)
{
    const unsigned char *p = data;
    rd_t rd;
    rd_init(&rd, data, len, errstr, errstr_size);
    if (len == 0 || p[0] != SW_AVRO_MAGIC || len < SW_AVRO_HEADER_LEN) {
        rd_header(&rd, 0);
        return rd.err;
    }
    uint32_t id = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
    if (id > (uint32_t)INT32_MAX) {
        snprintf(errstr, errstr_size, "Avro: schema id %lu is out of range (expected 0..%ld)",
                 (unsigned long)id, (long)INT32_MAX);
        return SW_ERR_AVRO;
    }
    *schema_id = (int32_t)id;
    return SW_OK;
}

/* ------------------------------------------------------------------ */
/* TelemetryEvent: encoder                                             */
/* ------------------------------------------------------------------ */

/* Whether the decoder would find a phase scope in metadata text @p text. */
static bool meta_holds_phase(sw_str_t text)
{
    if (!sw_json_may_have_phase(text)) return false;
    char *scratch = sw_malloc(text.len + 16);
    sw_phase_scope_t ps;
    bool has = sw_json_text_phase(text, scratch, &ps);
    free(scratch);
    return has;
}

static bool phase_utf8_ok(const sw_phase_scope_t *ps)
{
    if (!utf8_ok(ps->name) || !utf8_ok(ps->scope_id) || !utf8_ok(ps->thread_name)) return false;
    if (ps->has_parent && !utf8_ok(ps->parent_scope_id)) return false;
    for (int i = 0; i < ps->path_len && i < SW_PHASE_PATH_MAX; i++)
        if (!utf8_ok(ps->path[i])) return false;
    return true;
}

static void put_phase_scope(sw_buf_t *out, const sw_phase_scope_t *ps)
{
    int n = ps->path_len < 0 ? 0 : ps->path_len;
    if (n > SW_PHASE_PATH_MAX) n = SW_PHASE_PATH_MAX;
    put_cstr(out, ps->enter ? "enter" : "exit");
    put_str(out, ps->name);
    if (n > 0) {
        put_long(out, n);
        for (int i = 0; i < n; i++) put_str(out, ps->path[i]);
    }
    put_long(out, 0);
    put_opt_long(out, ps->has_depth, ps->depth);
    put_str(out, ps->scope_id);
    put_opt_str(out, ps->has_parent, ps->parent_scope_id);
    put_long(out, ps->thread_id);
    put_str(out, ps->thread_name);
    put_long(out, ps->sequence);
}

sw_err_t sw_avro_encode_event(const sw_event_t *ev, int32_t schema_id, sw_buf_t *out,
                              char *errstr, size_t errstr_size)
{
    /* Every check before the first byte, so that out is unchanged on error. */
    bool has_meta = ev->metadata_json.len > 0;
    const struct {
        const char *name;
        bool set;
        sw_str_t s;
    } strs[] = {
        {"event_type", true, ev->event_type},
        {"collector", ev->collector.set, ev->collector.value},
        {"host", true, ev->host},
        {"context", ev->context.set, ev->context.value},
        {"metadata", has_meta, ev->metadata_json},
        {"job_id", ev->has_job_id, ev->job_id},
        {"session_id", ev->has_session_id, ev->session_id},
    };
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        if (!strs[i].set || strs[i].s.len == 0) continue;
        size_t bad = sw_utf8_bad_at(strs[i].s.ptr, strs[i].s.len, false);
        if (bad != strs[i].s.len) {
            snprintf(errstr, errstr_size,
                     "field \"%s\" is not valid UTF-8 (byte 0x%02x at offset %zu), "
                     "expected a UTF-8 string",
                     strs[i].name, (unsigned)(unsigned char)strs[i].s.ptr[bad], bad);
            return SW_ERR_INVALID_ARG;
        }
    }
    bool typed = ev->has_phase && phase_utf8_ok(&ev->phase);
    /* The decoder takes the metadata's phase_scope when the typed field is
     * null: an event without a phase (its typed scope was not a boundary)
     * must not gain the one its text holds, so that key is left out. */
    sw_str_t meta = ev->metadata_json;
    sw_buf_t stripped;
    sw_buf_init(&stripped);
    if (!ev->has_phase && has_meta && meta_holds_phase(meta)) {
        sw_buf_putc(&stripped, '{');
        sw_json_members_except(meta, "phase_scope", &stripped);
        sw_buf_putc(&stripped, '}');
        meta = (sw_str_t){stripped.data, stripped.len};
    }

    sw_buf_reserve(out, 128 + ev->metadata_json.len + ev->host.len + ev->event_type.len);
    put_header(out, schema_id);
    put_opt_long(out, ev->schema_version.set, ev->schema_version.value);
    put_long(out, ev->timestamp_ns);
    put_str(out, ev->event_type);
    put_opt_str(out, ev->collector.set, ev->collector.value);
    put_opt_long(out, true, ev->sampling_interval_ms);
    put_opt_long(out, true, ev->pid);
    put_opt_str(out, true, ev->host);
    put_opt_long(out, ev->device_id.set, ev->device_id.value);
    put_opt_long(out, ev->allocator_allocated_bytes.set, ev->allocator_allocated_bytes.value);
    put_opt_long(out, ev->allocator_reserved_bytes.set, ev->allocator_reserved_bytes.value);
    put_opt_long(out, ev->allocator_active_bytes.set, ev->allocator_active_bytes.value);
    put_opt_long(out, ev->allocator_inactive_bytes.set, ev->allocator_inactive_bytes.value);
    put_opt_long(out, ev->allocator_change_bytes.set, ev->allocator_change_bytes.value);
    put_opt_long(out, ev->has_device_used, ev->device_used_bytes);
    put_opt_long(out, ev->device_free_bytes.set, ev->device_free_bytes.value);
    put_opt_long(out, ev->device_total_bytes.set, ev->device_total_bytes.value);
    put_opt_str(out, ev->context.set, ev->context.value);
    put_opt_str(out, has_meta, meta);
    put_opt_str(out, ev->has_job_id, ev->job_id);
    put_opt_long(out, true, ev->rank);
    put_opt_long(out, ev->local_rank.set, ev->local_rank.value);
    put_opt_long(out, true, ev->world_size);
    put_opt_str(out, ev->has_session_id, ev->session_id);
    put_long(out, typed ? 1 : 0);
    if (typed) put_phase_scope(out, &ev->phase);
    sw_buf_clear(&stripped);
    return SW_OK;
}

/* ------------------------------------------------------------------ */
/* TelemetryEvent: decoder                                             */
/* ------------------------------------------------------------------ */

struct sw_avro_dec_s {
    char *scratch;      /* unescaped JSON strings of the metadata text */
    size_t scratch_cap; /* bytes */
    sw_buf_t resolved;  /* a body rewritten into the reader's layout */
};

sw_avro_dec_t *sw_avro_dec_new(void)
{
    return sw_calloc(1, sizeof(sw_avro_dec_t));
}

void sw_avro_dec_destroy(sw_avro_dec_t *dec)
{
    if (!dec) return;
    free(dec->scratch);
    sw_buf_clear(&dec->resolved);
    free(dec);
}

static bool rd_opt_long(rd_t *rd, const char *field, sw_opt_i64_t *o)
{
    rd->field = field;
    o->set = false;
    o->value = 0;
    if (!rd_opt(rd, &o->set)) return false;
    return !o->set || rd_long(rd, &o->value);
}

static bool rd_opt_str(rd_t *rd, const char *field, sw_opt_str_t *o)
{
    rd->field = field;
    o->set = false;
    o->value = sw_str("");
    if (!rd_opt(rd, &o->set)) return false;
    return !o->set || rd_str(rd, &o->value);
}

/* A nullable long with a SPEC 2 default. */
static bool rd_long_or(rd_t *rd, const char *field, int64_t dflt, int64_t *v)
{
    sw_opt_i64_t o;
    if (!rd_opt_long(rd, field, &o)) return false;
    *v = o.set ? o.value : dflt;
    return true;
}

/* The typed PhaseScope; *ok says whether it is a well-formed boundary as
 * the JSON decoder would judge it (action enter/exit, <= 32 path items). */
static bool rd_phase_scope(rd_t *rd, sw_phase_scope_t *ps, bool *ok)
{
    sw_str_t action = {0}, el = {0};
    bool overflow = false, set = false;
    memset(ps, 0, sizeof(*ps));
    rd->field = "phase_scope.action";
    if (!rd_str(rd, &action)) return false;
    rd->field = "phase_scope.name";
    if (!rd_str(rd, &ps->name)) return false;
    rd->field = "phase_scope.path";
    for (;;) {
        int64_t n = 0;
        if (!rd_block(rd, &n)) return false;
        if (n == 0) break;
        for (int64_t i = 0; i < n; i++) {
            if (!rd_str(rd, &el)) return false;
            if (el.len == 0) continue; /* only non-empty strings form the path */
            if (ps->path_len < SW_PHASE_PATH_MAX) ps->path[ps->path_len++] = el;
            else overflow = true;
        }
    }
    rd->field = "phase_scope.depth";
    if (!rd_opt(rd, &ps->has_depth)) return false;
    if (ps->has_depth && !rd_long(rd, &ps->depth)) return false;
    rd->field = "phase_scope.scope_id";
    if (!rd_str(rd, &ps->scope_id)) return false;
    rd->field = "phase_scope.parent_scope_id";
    if (!rd_opt(rd, &set)) return false;
    ps->has_parent = set;
    if (set && !rd_str(rd, &ps->parent_scope_id)) return false;
    rd->field = "phase_scope.thread_id";
    if (!rd_long(rd, &ps->thread_id)) return false;
    rd->field = "phase_scope.thread_name";
    if (!rd_str(rd, &ps->thread_name)) return false;
    rd->field = "phase_scope.sequence";
    if (!rd_long(rd, &ps->sequence)) return false;
    if (action.len == 5 && memcmp(action.ptr, "enter", 5) == 0) ps->enter = true;
    else if (action.len == 4 && memcmp(action.ptr, "exit", 4) == 0) ps->enter = false;
    else overflow = true; /* not a boundary action: ignored like malformed JSON */
    *ok = !overflow;
    return true;
}

/* Check the metadata text (a JSON object, or null = {}) and find its
 * phase_scope. Sets ev->metadata_json to the object's text. */
static sw_err_t meta_parse(sw_avro_dec_t *dec, sw_str_t text, sw_event_t *ev,
                           sw_phase_scope_t *ps, bool *has_phase, char *errstr,
                           size_t errstr_size)
{
    *has_phase = false;
    if (text.len == 2 && text.ptr[0] == '{' && text.ptr[1] == '}') {
        ev->metadata_json = text;
        return SW_OK;
    }
    if (dec->scratch_cap < text.len + 16) {
        dec->scratch_cap = text.len + 16 > 4096 ? text.len + 16 : 4096;
        free(dec->scratch);
        dec->scratch = sw_malloc(dec->scratch_cap);
    }
    sw_jscan_t js;
    sw_jval_t top;
    bool ok = false;
    sw_jscan_init(&js, text.ptr, text.len, dec->scratch);
    sw_jscan_ws(&js);
    if (js.p < js.end && *js.p == '{') {
        top.type = SW_J_OBJECT;
        top.raw = js.p;
        ok = sw_json_metadata_phase(&js, ps, has_phase, 1);
        top.raw_len = (size_t)(js.p - top.raw);
    } else {
        ok = sw_jscan_value(&js, &top, 1);
    }
    if (ok) {
        sw_jscan_ws(&js);
        if (js.p != js.end) {
            js.err = "unexpected data after the value";
            js.err_at = js.p;
            ok = false;
        }
    }
    if (!ok) {
        *has_phase = false;
        snprintf(errstr, errstr_size, "field \"metadata\" is not valid JSON: %s at column %zu",
                 js.err, sw_jscan_offset(&js, js.err_at) + 1);
        return SW_ERR_INVALID_ARG;
    }
    if (top.type == SW_J_NULL) {
        ev->metadata_json = sw_str("{}");
        return SW_OK;
    }
    if (top.type != SW_J_OBJECT) {
        size_t n = top.raw_len;
        if (n > 60)
            snprintf(errstr, errstr_size,
                     "field \"metadata\" is %.57s..., expected an object or null (got %s)", top.raw,
                     sw_jtype_name(top.type));
        else
            snprintf(errstr, errstr_size,
                     "field \"metadata\" is %.*s, expected an object or null (got %s)", (int)n,
                     top.raw, sw_jtype_name(top.type));
        return SW_ERR_INVALID_ARG;
    }
    ev->metadata_json.ptr = top.raw;
    ev->metadata_json.len = top.raw_len;
    return SW_OK;
}

/* Field @p i of the reader schema: from its span when the body was resolved
 * from another writer schema (sw_avro_plan_fields), else where the
 * previous field ended. */
#define SEEK(i)                                      \
    do {                                             \
        if (sp) {                                    \
            rd->p = sp[i].p;                         \
            rd->end = sp[i].end;                     \
        }                                            \
    } while (0)

/* The TelemetryEvent fields after the header, in the reader's order;
 * @p sp: NULL (one body in the reader's layout) or one span per field. */
static sw_err_t decode_fields(sw_avro_dec_t *dec, rd_t *rd, const sw_avro_span_t *sp,
                              sw_event_t *ev, char *errstr, size_t errstr_size)
{
    sw_opt_i64_t dev_used;
    sw_opt_str_t host, meta, job, sess;
    bool typed = false, typed_ok = false;
    SEEK(0);
    if (!rd_opt_long(rd, "schema_version", &ev->schema_version)) return rd->err;
    SEEK(1);
    rd->field = "timestamp_ns";
    if (!rd_long(rd, &ev->timestamp_ns)) return rd->err;
    SEEK(2);
    rd->field = "event_type";
    if (!rd_str(rd, &ev->event_type)) return rd->err;
    SEEK(3);
    if (!rd_opt_str(rd, "collector", &ev->collector)) return rd->err;
    SEEK(4);
    if (!rd_long_or(rd, "sampling_interval_ms", 0, &ev->sampling_interval_ms)) return rd->err;
    SEEK(5);
    if (!rd_long_or(rd, "pid", -1, &ev->pid)) return rd->err;
    SEEK(6);
    if (!rd_opt_str(rd, "host", &host)) return rd->err;
    ev->host = host.set ? host.value : sw_str("unknown");
    SEEK(7);
    if (!rd_opt_long(rd, "device_id", &ev->device_id)) return rd->err;
    SEEK(8);
    if (!rd_opt_long(rd, "allocator_allocated_bytes", &ev->allocator_allocated_bytes)) return rd->err;
    SEEK(9);
    if (!rd_opt_long(rd, "allocator_reserved_bytes", &ev->allocator_reserved_bytes)) return rd->err;
    SEEK(10);
    if (!rd_opt_long(rd, "allocator_active_bytes", &ev->allocator_active_bytes)) return rd->err;
    SEEK(11);
    if (!rd_opt_long(rd, "allocator_inactive_bytes", &ev->allocator_inactive_bytes)) return rd->err;
    SEEK(12);
    if (!rd_opt_long(rd, "allocator_change_bytes", &ev->allocator_change_bytes)) return rd->err;
    SEEK(13);
    if (!rd_opt_long(rd, "device_used_bytes", &dev_used)) return rd->err;
    ev->has_device_used = dev_used.set;
    ev->device_used_bytes = dev_used.value;
    SEEK(14);
    if (!rd_opt_long(rd, "device_free_bytes", &ev->device_free_bytes)) return rd->err;
    SEEK(15);
    if (!rd_opt_long(rd, "device_total_bytes", &ev->device_total_bytes)) return rd->err;
    SEEK(16);
    if (!rd_opt_str(rd, "context", &ev->context)) return rd->err;
    SEEK(17);
    if (!rd_opt_str(rd, "metadata", &meta)) return rd->err;
    SEEK(18);
    if (!rd_opt_str(rd, "job_id", &job)) return rd->err;
    ev->has_job_id = job.set;
    ev->job_id = job.value;
    SEEK(19);
    if (!rd_long_or(rd, "rank", 0, &ev->rank)) return rd->err;
    SEEK(20);
    if (!rd_opt_long(rd, "local_rank", &ev->local_rank)) return rd->err;
    SEEK(21);
    if (!rd_long_or(rd, "world_size", 1, &ev->world_size)) return rd->err;
    SEEK(22);
    if (!rd_opt_str(rd, "session_id", &sess)) return rd->err;
    ev->has_session_id = sess.set;
    ev->session_id = sess.value;
    SEEK(23);
    rd->field = "phase_scope";
    if (!rd_opt(rd, &typed)) return rd->err;
    if (typed && !rd_phase_scope(rd, &ev->phase, &typed_ok)) return rd->err;
    if (!sp && !rd_done(rd)) return rd->err;

    /* SPEC 2 ranges first, in the JSON decoder's order, then metadata
     * (last there too). */
    ev->kind = sw_event_kind(ev->event_type);
    sw_err_t err = sw_event_validate(ev, errstr, errstr_size);
    if (err) return err;
    if (!meta.set) {
        ev->metadata_json = sw_str("{}");
        ev->has_phase = typed && typed_ok;
        return SW_OK;
    }
    if (typed) {
        /* The typed field wins; the text is still checked. */
        sw_phase_scope_t ignored;
        bool ignored_has = false;
        err = meta_parse(dec, meta.value, ev, &ignored, &ignored_has, errstr, errstr_size);
        ev->has_phase = typed_ok;
    } else {
        err = meta_parse(dec, meta.value, ev, &ev->phase, &ev->has_phase, errstr, errstr_size);
    }
    return err;
}

#undef SEEK

/* Reader fields of the telemetry schema (decode_fields reads 24). */
#define EVENT_FIELDS 24

sw_err_t sw_avro_decode_event(sw_avro_dec_t *dec, const void *data, size_t len,
                              int32_t expected_schema_id, sw_event_t *ev, char *errstr,
                              size_t errstr_size)
{
    rd_t rd;
    rd_init(&rd, data, len, errstr, errstr_size);
    memset(ev, 0, sizeof(*ev));
    if (!rd_header(&rd, expected_schema_id)) return rd.err;
    return decode_fields(dec, &rd, NULL, ev, errstr, errstr_size);
}

/* ------------------------------------------------------------------ */
/* FirstCauseAlert: encoder                                            */
/* ------------------------------------------------------------------ */

static int i64_cmp(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Index of rank in v (ascending by rank), or n. */
static size_t find_rank(const sw_rank_val_t *v, size_t n, int64_t rank)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].rank < rank) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && v[lo].rank == rank ? lo : n;
}

static void put_map_entry(sw_buf_t *out, const sw_rank_val_t *e)
{
    char key[24];
    int n = snprintf(key, sizeof(key), "%lld", (long long)e->rank);
    put_str(out, (sw_str_t){key, (size_t)n});
    put_long(out, e->value);
}

/* A rank map; alerts keep only the suspects' ranks and the anchor, as
 * put_map() of sw_codec_alert.c does. */
static void put_rank_map(sw_buf_t *out, const sw_analysis_t *a, const sw_rank_val_t *v, size_t n,
                         bool trim)
{
    if (!trim) {
        if (n) {
            put_long(out, (int64_t)n);
            for (size_t i = 0; i < n; i++) put_map_entry(out, &v[i]);
        }
        put_long(out, 0);
        return;
    }
    size_t nk = 0, nsel = 0;
    int64_t small[16];
    size_t small_sel[16];
    size_t cap = a->n_suspects + 1;
    int64_t *keys = cap <= 16 ? small : sw_malloc(cap * sizeof(*keys));
    size_t *sel = cap <= 16 ? small_sel : sw_malloc(cap * sizeof(*sel));
    if (a->anchor_rank >= 0) keys[nk++] = a->anchor_rank;
    for (size_t i = 0; i < a->n_suspects; i++) keys[nk++] = a->suspects[i].rank;
    qsort(keys, nk, sizeof(*keys), i64_cmp);
    for (size_t k = 0; k < nk; k++) {
        if (k && keys[k] == keys[k - 1]) continue;
        size_t i = find_rank(v, n, keys[k]);
        if (i < n) sel[nsel++] = i;
    }
    if (nsel) {
        put_long(out, (int64_t)nsel);
        for (size_t k = 0; k < nsel; k++) put_map_entry(out, &v[sel[k]]);
    }
    put_long(out, 0);
    if (keys != small) free(keys);
    if (sel != small_sel) free(sel);
}

static void put_phase_attr(sw_buf_t *out, const sw_phase_attr_t *ph)
{
    if (ph->resolution == SW_PHASE_NONE) {
        put_long(out, 0);
        return;
    }
    bool unique = ph->resolution == SW_PHASE_UNIQUE;
    put_long(out, 1);
    put_long(out, unique ? 0 : 1); /* PhaseResolution */
    if (ph->n_paths) {
        put_long(out, (int64_t)ph->n_paths);
        for (size_t i = 0; i < ph->n_paths; i++) put_str_clean(out, ph->paths[i]);
    }
    put_long(out, 0);
    bool summary = !unique && ph->has_summary;
    put_long(out, summary ? 1 : 0);
    if (summary) {
        put_str_clean(out, ph->summary_path);
        put_cstr(out, "heuristic");
    }
    put_opt_str(out, unique, sw_str("heuristic"));
    put_opt_str_clean(out, unique, ph->path);
    put_opt_str_clean(out, unique, ph->scope_id);
    put_opt_long(out, unique, ph->thread_id);
    put_opt_str_clean(out, unique, ph->thread_name);
}

static void put_i64_array(sw_buf_t *out, const int64_t *v, size_t n)
{
    if (n) {
        put_long(out, (int64_t)n);
        for (size_t i = 0; i < n; i++) put_long(out, v[i]);
    }
    put_long(out, 0);
}

static void put_suspect_where(sw_buf_t *out, const sw_suspect_t *s);

static void put_suspect(sw_buf_t *out, const sw_suspect_t *s)
{
    put_long(out, s->rank);
    put_long(out, s->first_spike_timestamp_ns);
    put_long(out, (int64_t)s->aligned_first_spike_timestamp_ns); /* checked <= INT64_MAX */
    put_long(out, s->peak_delta_bytes);
    put_long(out, s->spike_window_samples);
    put_long(out, s->lead_over_cluster_onset_ns);
    put_long(out, (int64_t)s->confidence); /* low, medium, high = 0, 1, 2 */
    put_long(out, s->peak_delta_bytes); /* evidence.device_used_delta_bytes */
    put_long(out, s->supporting_ranks);
    put_phase_attr(out, &s->phase);
    if (!s->n_timeline) {
        put_long(out, 0); /* timeline: null */
        put_suspect_where(out, s);
        return;
    }
    put_long(out, 1);
    put_i64_array(out, s->timeline_aligned_ns, s->n_timeline);
    put_i64_array(out, s->timeline_used, s->n_timeline);
    put_long(out, s->timeline_window);
    put_long(out, (int64_t)s->timeline_spike_start);
    put_long(out, (int64_t)s->timeline_spike);
    put_suspect_where(out, s);
}

/* Where the spike ran: host, pid, device_id, local_rank, session_id. */
static void put_suspect_where(sw_buf_t *out, const sw_suspect_t *s)
{
    put_opt_str_clean(out, s->has_source, s->host);
    put_opt_long(out, s->has_source, s->pid);
    put_opt_long(out, s->has_source && s->has_device_id, s->device_id);
    put_opt_long(out, s->has_source && s->has_local_rank, s->local_rank);
    put_opt_str_clean(out, s->has_source && s->has_session, s->session_id);
}

static sw_err_t too_big(char *errstr, size_t errstr_size, const char *field, uint64_t v)
{
    snprintf(errstr, errstr_size,
             "field \"%s\" is %llu, expected at most 9223372036854775807 (an Avro long)", field,
             (unsigned long long)v);
    return SW_ERR_INVALID_ARG;
}

sw_err_t sw_avro_encode_record(const sw_record_t *rec, int32_t schema_id, sw_buf_t *out,
                               char *errstr, size_t errstr_size)
{
    /* Every check before the first byte, so that out is unchanged on error.
     * Enum values outside the schema's symbols are refused, not clamped. */
    const sw_analysis_t *a = &rec->analysis;
    if (rec->action < SW_ACTION_TRIGGER || rec->action > SW_ACTION_SUMMARY) {
        snprintf(errstr, errstr_size, "field \"action\" is %d, expected 0..3 (trigger..summary)",
                 (int)rec->action);
        return SW_ERR_INVALID_ARG;
    }
    if (a->has_onset && a->onset_ns > (uint64_t)INT64_MAX)
        return too_big(errstr, errstr_size, "cluster_onset_timestamp_ns", a->onset_ns);
    for (size_t i = 0; i < a->n_suspects; i++) {
        const sw_suspect_t *s = &a->suspects[i];
        if (s->aligned_first_spike_timestamp_ns > (uint64_t)INT64_MAX) {
            char field[96];
            snprintf(field, sizeof(field),
                     "first_cause_suspects[%zu].aligned_first_spike_timestamp_ns", i);
            return too_big(errstr, errstr_size, field, s->aligned_first_spike_timestamp_ns);
        }
        if (s->confidence < SW_CONFIDENCE_LOW || s->confidence > SW_CONFIDENCE_HIGH ||
            s->phase.resolution < SW_PHASE_NONE || s->phase.resolution > SW_PHASE_AMBIGUOUS) {
            snprintf(errstr, errstr_size,
                     "first_cause_suspects[%zu]: confidence %d or phase resolution %d is not "
                     "a known value",
                     i, (int)s->confidence, (int)s->phase.resolution);
            return SW_ERR_INVALID_ARG;
        }
    }

    put_header(out, schema_id);
    put_long(out, (int64_t)rec->action);
    put_opt_str_clean(out, a->has_job_id, a->job_id);
    put_long(out, rec->episode);
    put_long(out, rec->revision);
    put_opt_long(out, rec->has_event_ts, rec->event_timestamp_ns);
    put_long(out, a->world_size);
    put_i64_array(out, a->participating, a->n_participating);
    put_i64_array(out, a->missing, a->n_missing);
    bool trim = rec->action != SW_ACTION_SUMMARY;
    put_rank_map(out, a, a->counts, a->n_counts, trim);
    put_rank_map(out, a, a->offsets, a->n_offsets, trim);
    put_opt_long(out, a->has_onset, (int64_t)a->onset_ns);
    if (a->n_suspects) {
        put_long(out, (int64_t)a->n_suspects);
        for (size_t i = 0; i < a->n_suspects; i++) put_suspect(out, &a->suspects[i]);
    }
    put_long(out, 0);
    if (a->n_notes) {
        put_long(out, (int64_t)a->n_notes);
        for (size_t i = 0; i < a->n_notes; i++) put_str_clean(out, a->notes[i]);
    }
    put_long(out, 0);
    put_cstr(out, sw_record_severity(rec));
    sw_buf_t tmp;
    sw_buf_init(&tmp);
    sw_record_dedup_key(rec, &tmp);
    put_str_clean(out, (sw_str_t){tmp.data, tmp.len});
    tmp.len = 0;
    sw_record_summary(rec, &tmp);
    put_str_clean(out, (sw_str_t){tmp.data, tmp.len});
    sw_buf_clear(&tmp);
    put_long(out, rec->source.set ? 1 : 0);
    if (rec->source.set) {
        put_str_clean(out, rec->source.topic);
        put_long(out, rec->source.partition);
        put_long(out, rec->source.offset);
    }
    bool resolve = rec->action == SW_ACTION_RESOLVE && rec->resolve_reason != SW_RESOLVE_NONE;
    put_opt_str(out, resolve, sw_str(sw_resolve_reason_str(rec->resolve_reason)));
    put_opt_long(out, resolve && rec->resolve_rank >= 0, rec->resolve_rank);
    bool summary = rec->action == SW_ACTION_SUMMARY;
    put_long(out, summary ? 1 : 0);
    if (summary) sw_buf_putc(out, rec->episode_open ? 1 : 0); /* Avro boolean: one byte */
    return SW_OK;
}

/* ------------------------------------------------------------------ */
/* FirstCauseAlert: decoder to JSON                                    */
/* ------------------------------------------------------------------ */

static const char *const k_actions[] = {"trigger", "update", "resolve", "summary"};
static const char *const k_confidences[] = {"low", "medium", "high"};

static bool js_long(rd_t *rd, sw_jw_t *jw, const char *field)
{
    int64_t v = 0;
    rd->field = field;
    if (!rd_long(rd, &v)) return false;
    sw_jw_key(jw, field);
    sw_jw_i64(jw, v);
    return true;
}

static bool js_opt_long(rd_t *rd, sw_jw_t *jw, const char *field)
{
    bool set = false;
    int64_t v = 0;
    rd->field = field;
    if (!rd_opt(rd, &set)) return false;
    sw_jw_key(jw, field);
    if (!set) {
        sw_jw_null(jw);
        return true;
    }
    if (!rd_long(rd, &v)) return false;
    sw_jw_i64(jw, v);
    return true;
}

static bool js_str(rd_t *rd, sw_jw_t *jw, const char *field)
{
    sw_str_t s = {0};
    rd->field = field;
    if (!rd_str(rd, &s)) return false;
    sw_jw_key(jw, field);
    sw_jw_str(jw, s);
    return true;
}

static bool js_opt_str(rd_t *rd, sw_jw_t *jw, const char *field)
{
    bool set = false;
    sw_str_t s = {0};
    rd->field = field;
    if (!rd_opt(rd, &set)) return false;
    sw_jw_key(jw, field);
    if (!set) {
        sw_jw_null(jw);
        return true;
    }
    if (!rd_str(rd, &s)) return false;
    sw_jw_str(jw, s);
    return true;
}

static bool js_long_array(rd_t *rd, sw_jw_t *jw, const char *field)
{
    rd->field = field;
    sw_jw_key(jw, field);
    sw_jw_arr(jw);
    for (;;) {
        int64_t n = 0, v = 0;
        if (!rd_block(rd, &n)) return false;
        if (n == 0) break;
        for (int64_t i = 0; i < n; i++) {
            if (!rd_long(rd, &v)) return false;
            sw_jw_i64(jw, v);
        }
    }
    sw_jw_end_arr(jw);
    return true;
}

static bool js_str_array(rd_t *rd, sw_jw_t *jw, const char *field, const char *key)
{
    rd->field = field;
    sw_jw_key(jw, key);
    sw_jw_arr(jw);
    for (;;) {
        int64_t n = 0;
        sw_str_t s = {0};
        if (!rd_block(rd, &n)) return false;
        if (n == 0) break;
        for (int64_t i = 0; i < n; i++) {
            if (!rd_str(rd, &s)) return false;
            sw_jw_str(jw, s);
        }
    }
    sw_jw_end_arr(jw);
    return true;
}

/* A decimal rank: "0" or [1-9][0-9]* that fits in int64. */
static bool parse_rank_key(sw_str_t k, int64_t *rank)
{
    if (k.len == 0 || k.len > 19 || (k.len > 1 && k.ptr[0] == '0')) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < k.len; i++) {
        if (k.ptr[i] < '0' || k.ptr[i] > '9') return false;
        v = v * 10 + (uint64_t)(k.ptr[i] - '0');
    }
    if (v > (uint64_t)INT64_MAX) return false;
    *rank = (int64_t)v;
    return true;
}

static bool js_rank_map(rd_t *rd, sw_jw_t *jw, const char *field)
{
    rd->field = field;
    sw_jw_key(jw, field);
    sw_jw_obj(jw);
    for (;;) {
        int64_t n = 0, v = 0, rank = 0;
        sw_str_t key = {0};
        if (!rd_block(rd, &n)) return false;
        if (n == 0) break;
        for (int64_t i = 0; i < n; i++) {
            const unsigned char *at = rd->p;
            if (!rd_str(rd, &key)) return false;
            if (!parse_rank_key(key, &rank)) {
                char shown[24], nm[160];
                size_t m = key.len < sizeof(shown) - 1 ? key.len : sizeof(shown) - 1;
                for (size_t j = 0; j < m; j++) {
                    unsigned char c = (unsigned char)key.ptr[j];
                    shown[j] = c < 0x20 || c >= 0x7f || c == '"' ? '?' : (char)c;
                }
                shown[m] = '\0';
                return rd_fail(rd, SW_ERR_AVRO,
                               "Avro: map key \"%s%s\" at byte %zu in %s is not a decimal rank",
                               shown, key.len > m ? "..." : "", rd_off(rd, at),
                               rd_name(rd, nm, sizeof(nm)));
            }
            if (!rd_long(rd, &v)) return false;
            sw_jw_key_i64(jw, rank);
            sw_jw_i64(jw, v);
        }
    }
    sw_jw_end_obj(jw);
    return true;
}

/* PhaseAttribution: Avro lists phase_summary before the unique fields,
 * sw_alert_json_record() writes it after them, so those are held until
 * the record is read. Null members are left out, as there. */
static bool js_phase_attr(rd_t *rd, sw_jw_t *jw)
{
    bool set, has_summary = false;
    int res = 0;
    sw_str_t sum_path = {0}, sum_src = {0};
    bool has[5] = {false};
    sw_str_t strs[5] = {{0}};
    int64_t thread_id = 0;
    static const char *const names[5] = {"phase_source", "phase_path", "scope_id", "thread_id",
                                         "thread_name"};
    static const char *const fields[5] = {"phase_attribution.phase_source",
                                          "phase_attribution.phase_path",
                                          "phase_attribution.scope_id",
                                          "phase_attribution.thread_id",
                                          "phase_attribution.thread_name"};

    rd->field = "phase_attribution";
    sw_jw_key(jw, "phase_attribution");
    if (!rd_opt(rd, &set)) return false;
    if (!set) {
        sw_jw_null(jw);
        return true;
    }
    sw_jw_obj(jw);
    rd->field = "phase_attribution.phase_resolution";
    if (!rd_index(rd, 2, "enum", &res)) return false;
    sw_jw_key(jw, "phase_resolution");
    sw_jw_cstr(jw, res == 0 ? "unique" : "ambiguous");
    if (!js_str_array(rd, jw, "phase_attribution.phase_paths", "phase_paths")) return false;
    rd->field = "phase_attribution.phase_summary";
    if (!rd_opt(rd, &has_summary)) return false;
    if (has_summary) {
        rd->field = "phase_attribution.phase_summary.phase_path";
        if (!rd_str(rd, &sum_path)) return false;
        rd->field = "phase_attribution.phase_summary.source";
        if (!rd_str(rd, &sum_src)) return false;
    }
    for (int i = 0; i < 5; i++) {
        rd->field = fields[i];
        if (!rd_opt(rd, &has[i])) return false;
        if (!has[i]) continue;
        if (i == 3 ? !rd_long(rd, &thread_id) : !rd_str(rd, &strs[i])) return false;
    }
    for (int i = 0; i < 5; i++) {
        if (!has[i]) continue;
        sw_jw_key(jw, names[i]);
        if (i == 3) sw_jw_i64(jw, thread_id);
        else sw_jw_str(jw, strs[i]);
    }
    if (has_summary) {
        sw_jw_key(jw, "phase_summary");
        sw_jw_obj(jw);
        sw_jw_key(jw, "phase_path");
        sw_jw_str(jw, sum_path);
        sw_jw_key(jw, "source");
        sw_jw_str(jw, sum_src);
        sw_jw_end_obj(jw);
    }
    sw_jw_end_obj(jw);
    return true;
}

static bool js_suspect(rd_t *rd, sw_jw_t *jw)
{
    int conf = 0;
    sw_jw_obj(jw);
    if (!js_long(rd, jw, "rank") || !js_long(rd, jw, "first_spike_timestamp_ns") ||
        !js_long(rd, jw, "aligned_first_spike_timestamp_ns") ||
        !js_long(rd, jw, "peak_delta_bytes") || !js_long(rd, jw, "spike_window_samples") ||
        !js_long(rd, jw, "lead_over_cluster_onset_ns"))
        return false;
    rd->field = "confidence";
    if (!rd_index(rd, 3, "enum", &conf)) return false;
    sw_jw_key(jw, "confidence");
    sw_jw_cstr(jw, k_confidences[conf]);
    sw_jw_key(jw, "evidence");
    sw_jw_obj(jw);
    rd->prefix = "evidence.";
    if (!js_long(rd, jw, "device_used_delta_bytes") ||
        !js_long(rd, jw, "supporting_ranks_at_or_before_onset"))
        return false;
    rd->prefix = "";
    sw_jw_end_obj(jw);
    if (!js_phase_attr(rd, jw)) return false;
    bool set = false;
    rd->field = "timeline";
    if (!rd_opt(rd, &set)) return false;
    if (set) {
        sw_jw_key(jw, "timeline");
        sw_jw_obj(jw);
        rd->prefix = "timeline.";
        if (!js_long_array(rd, jw, "aligned_timestamp_ns") ||
            !js_long_array(rd, jw, "device_used_bytes") || !js_long(rd, jw, "window_samples") ||
            !js_long(rd, jw, "spike_start_index") || !js_long(rd, jw, "spike_index"))
            return false;
        rd->prefix = "";
        sw_jw_end_obj(jw);
    }
    /* Where it ran: written flat, all five, when the host is set. */
    bool has[5] = {false};
    sw_str_t strs[5] = {{0}};
    int64_t longs[5] = {0};
    static const char *const names[5] = {"host", "pid", "device_id", "local_rank", "session_id"};
    for (int i = 0; i < 5; i++) {
        rd->field = names[i];
        if (!rd_opt(rd, &has[i])) return false;
        if (!has[i]) continue;
        if (i == 0 || i == 4 ? !rd_str(rd, &strs[i]) : !rd_long(rd, &longs[i])) return false;
    }
    if (has[0]) {
        for (int i = 0; i < 5; i++) {
            sw_jw_key(jw, names[i]);
            if (!has[i]) sw_jw_null(jw);
            else if (i == 0 || i == 4) sw_jw_str(jw, strs[i]);
            else sw_jw_i64(jw, longs[i]);
        }
    }
    sw_jw_end_obj(jw);
    return true;
}

static bool rd_bool(rd_t *rd, bool *out)
{
    const unsigned char *at = rd->p;
    if (rd->p >= rd->end) return rd_truncated(rd, at, "a boolean");
    unsigned char c = *rd->p++;
    if (c > 1) {
        char nm[160];
        return rd_fail(rd, SW_ERR_AVRO, "Avro: boolean byte %u at byte %zu in %s is not 0 or 1",
                       (unsigned)c, rd_off(rd, at), rd_name(rd, nm, sizeof(nm)));
    }
    *out = c == 1;
    return true;
}

static bool js_record(rd_t *rd, sw_jw_t *jw)
{
    int action = 0;
    bool set = false;
    sw_jw_obj(jw);
    rd->field = "action";
    if (!rd_index(rd, 4, "enum", &action)) return false;
    sw_jw_key(jw, "action");
    sw_jw_cstr(jw, k_actions[action]);
    if (!js_opt_str(rd, jw, "job_id") || !js_long(rd, jw, "episode") ||
        !js_long(rd, jw, "revision") || !js_opt_long(rd, jw, "event_timestamp_ns") ||
        !js_long(rd, jw, "world_size") || !js_long_array(rd, jw, "participating_ranks") ||
        !js_long_array(rd, jw, "missing_ranks") || !js_rank_map(rd, jw, "rank_sample_counts") ||
        !js_rank_map(rd, jw, "alignment_offsets_ns") ||
        !js_opt_long(rd, jw, "cluster_onset_timestamp_ns"))
        return false;

    rd->field = "first_cause_suspects";
    sw_jw_key(jw, "first_cause_suspects");
    sw_jw_arr(jw);
    size_t idx = 0;
    for (;;) {
        int64_t n = 0;
        rd->outer = NULL;
        rd->field = "first_cause_suspects";
        if (!rd_block(rd, &n)) return false;
        if (n == 0) break;
        for (int64_t i = 0; i < n; i++, idx++) {
            rd->outer = "first_cause_suspects";
            rd->index = idx;
            if (!js_suspect(rd, jw)) return false;
        }
    }
    rd->outer = NULL;
    sw_jw_end_arr(jw);

    if (!js_str_array(rd, jw, "notes", "notes") || !js_str(rd, jw, "severity") ||
        !js_str(rd, jw, "dedup_key") || !js_str(rd, jw, "summary"))
        return false;
    rd->field = "source";
    if (!rd_opt(rd, &set)) return false;
    if (set) {
        int32_t partition = 0;
        sw_jw_key(jw, "source");
        sw_jw_obj(jw);
        rd->prefix = "source.";
        if (!js_str(rd, jw, "topic")) return false;
        rd->field = "partition";
        if (!rd_int(rd, &partition)) return false;
        sw_jw_key(jw, "partition");
        sw_jw_i64(jw, partition);
        if (!js_long(rd, jw, "offset")) return false;
        rd->prefix = "";
        sw_jw_end_obj(jw);
    }
    /* Extra keys written only where they apply, as sw_alert_json_record. */
    sw_str_t reason = {0};
    int64_t lost = 0;
    rd->field = "resolve_reason";
    if (!rd_opt(rd, &set)) return false;
    if (set) {
        if (!rd_str(rd, &reason)) return false;
        sw_jw_key(jw, "resolve_reason");
        sw_jw_str(jw, reason);
    }
    rd->field = "resolve_lost_rank";
    if (!rd_opt(rd, &set)) return false;
    if (set) {
        if (!rd_long(rd, &lost)) return false;
        sw_jw_key(jw, "resolve_lost_rank");
        sw_jw_i64(jw, lost);
    }
    rd->field = "episode_open";
    if (!rd_opt(rd, &set)) return false;
    if (set) {
        bool open = false;
        if (!rd_bool(rd, &open)) return false;
        sw_jw_key(jw, "episode_open");
        sw_jw_bool(jw, open);
    }
    sw_jw_end_obj(jw);
    return rd_done(rd);
}

sw_err_t sw_avro_decode_record_json(const void *data, size_t len, int32_t expected_schema_id,
                                    sw_buf_t *json_out, char *errstr, size_t errstr_size)
{
    rd_t rd;
    sw_jw_t jw;
    size_t mark = json_out->len;
    rd_init(&rd, data, len, errstr, errstr_size);
    if (!rd_header(&rd, expected_schema_id)) return rd.err;
    sw_jw_init(&jw, json_out, 0);
    if (!js_record(&rd, &jw)) {
        json_out->len = mark;
        return rd.err;
    }
    return SW_OK;
}

/* ------------------------------------------------------------------ */
/* Resolved writer schemas                                             */
/* ------------------------------------------------------------------ */

/* The body after the Confluent header of @p plan's id, rewritten into the
 * reader's layout in @p into (reset first). */
static sw_err_t plan_body(const sw_avro_plan_t *plan, const void *data, size_t len, sw_buf_t *into,
                          char *errstr, size_t errstr_size)
{
    rd_t rd;
    rd_init(&rd, data, len, errstr, errstr_size);
    if (!rd_header(&rd, sw_avro_plan_id(plan))) return rd.err;
    into->len = 0;
    return sw_avro_plan_rewrite(plan, rd.p, rd_left(&rd), into, errstr, errstr_size);
}

/* A message about the rewritten body: say so, since its offsets are not
 * the message's. */
static void plan_errstr(const sw_avro_plan_t *plan, char *errstr, size_t errstr_size)
{
    if (!errstr || !errstr_size) return;
    char tmp[512];
    snprintf(tmp, sizeof(tmp), "%s", errstr);
    snprintf(errstr, errstr_size, "%s (body resolved from writer schema id %ld)", tmp,
             (long)sw_avro_plan_id(plan));
}

sw_err_t sw_avro_decode_event_plan(sw_avro_dec_t *dec, const sw_avro_plan_t *plan,
                                   const void *data, size_t len, sw_event_t *ev, char *errstr,
                                   size_t errstr_size)
{
    if (sw_avro_plan_identity(plan))
        return sw_avro_decode_event(dec, data, len, sw_avro_plan_id(plan), ev, errstr,
                                    errstr_size);
    memset(ev, 0, sizeof(*ev));
    if (sw_avro_plan_nfields(plan) == EVENT_FIELDS) {
        /* One pass over the writer's fields; each reader field is decoded
         * where it lies (no copy unless it must be converted). */
        sw_avro_span_t spans[EVENT_FIELDS];
        rd_t rd;
        rd_init(&rd, data, len, errstr, errstr_size);
        if (!rd_header(&rd, sw_avro_plan_id(plan))) return rd.err;
        sw_err_t err = sw_avro_plan_fields(plan, rd.p, rd_left(&rd), spans, &dec->resolved,
                                           errstr, errstr_size);
        if (err) return err;
        err = decode_fields(dec, &rd, spans, ev, errstr, errstr_size);
        if (err && err != SW_ERR_INVALID_ARG) plan_errstr(plan, errstr, errstr_size);
        return err;
    }
    sw_err_t err = plan_body(plan, data, len, &dec->resolved, errstr, errstr_size);
    if (err) return err;
    err = sw_avro_decode_event(dec, dec->resolved.data, dec->resolved.len, -1, ev, errstr,
                               errstr_size);
    /* SPEC 2 messages (INVALID_ARG) name fields, not offsets: kept as they are. */
    if (err && err != SW_ERR_INVALID_ARG) plan_errstr(plan, errstr, errstr_size);
    return err;
}

sw_err_t sw_avro_decode_record_json_plan(const sw_avro_plan_t *plan, const void *data, size_t len,
                                         sw_buf_t *json_out, char *errstr, size_t errstr_size)
{
    if (sw_avro_plan_identity(plan))
        return sw_avro_decode_record_json(data, len, sw_avro_plan_id(plan), json_out, errstr,
                                          errstr_size);
    sw_buf_t body;
    sw_buf_init(&body);
    sw_err_t err = plan_body(plan, data, len, &body, errstr, errstr_size);
    if (!err) {
        err = sw_avro_decode_record_json(body.data, body.len, -1, json_out, errstr, errstr_size);
        if (err) plan_errstr(plan, errstr, errstr_size);
    }
    sw_buf_clear(&body);
    return err;
}
