/*
 * JSON -> sw_event_t. One pass over the line: known keys are captured
 * (last occurrence wins, as in Python's json), everything else is
 * validated and skipped. Validation runs after the object is complete so
 * that it sees the final value of each field. No I/O.
 */
#include "sw_codec_telemetry.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_json.h"

enum field_e {
    F_TIMESTAMP_NS,
    F_EVENT_TYPE,
    F_RANK,
    F_WORLD_SIZE,
    F_JOB_ID,
    F_SESSION_ID,
    F_PID,
    F_HOST,
    F_DEVICE_USED_BYTES,
    F_SAMPLING_INTERVAL_MS,
    F_METADATA,
    F_SCHEMA_VERSION,
    F_DEVICE_ID,
    F_LOCAL_RANK,
    F_ALLOC_ALLOCATED,
    F_ALLOC_RESERVED,
    F_ALLOC_ACTIVE,
    F_ALLOC_INACTIVE,
    F_ALLOC_CHANGE,
    F_DEVICE_FREE,
    F_DEVICE_TOTAL,
    F_COLLECTOR,
    F_CONTEXT,
    F__CNT
};

/* A hand-laid table (clang-format 14 boxes its initializer macro). */
// clang-format off
static const struct {
    const char *name;
    size_t len;
} k_fields[F__CNT] = {
#define FLD(s) {s, sizeof(s) - 1}
    FLD("timestamp_ns"), FLD("event_type"), FLD("rank"), FLD("world_size"),
    FLD("job_id"), FLD("session_id"), FLD("pid"), FLD("host"),
    FLD("device_used_bytes"), FLD("sampling_interval_ms"), FLD("metadata"),
    FLD("schema_version"), FLD("device_id"), FLD("local_rank"),
    FLD("allocator_allocated_bytes"), FLD("allocator_reserved_bytes"),
    FLD("allocator_active_bytes"), FLD("allocator_inactive_bytes"),
    FLD("allocator_change_bytes"), FLD("device_free_bytes"), FLD("device_total_bytes"),
    FLD("collector"), FLD("context"),
#undef FLD
};
// clang-format on

#define SEQ_MAX 40  /* keys of a line the fast path predicts */
#define TPAT_MAX 32 /* longest text between two values in a template */
#define TVAL_MAX 32 /* longest value a template predicts */

/* One key of a template: the text from the end of the previous value (or
 * the start of the line) to the start of this key's value, e.g.
 * `, "rank": `, and the key's field; then, while it stays the same from
 * line to line, the value's text and what it decodes to. */
typedef struct tstep_s {
    char pat[TPAT_MAX + TVAL_MAX]; /* the text before the value, the value; zero-padded */
    uint64_t gmask;                /* one bit per byte of the text before the value */
    uint64_t vmask;                /* ... and of the predicted value (0: none) */
    uint8_t len;                   /* bytes of the text before the value */
    uint8_t vlen;                  /* bytes of the predicted value (0: none) */
    uint8_t slot;                  /* the field's entry of f[] (F__CNT: unknown key) */
    uint8_t vtype;                 /* sw_jtype_t of the predicted value */
    int64_t vi;                    /* its integer */
} tstep_t;

/* A run of the compiled template: text that is the same on every line
 * (the text between values and the predicted values), then one value
 * that is read. */
typedef struct run_s {
    const char *text; /* in run_text */
    sw_jval_t *v;     /* the value's entry of run_f */
    uint16_t len;     /* bytes of text */
    uint16_t mask;    /* under 16 bytes: one bit per byte of text */
    uint16_t need;    /* bytes from the run's start for run_text_at() and run_value() */
    uint8_t slot;     /* the value's field (F__CNT: an unknown key) */
} run_t;

struct sw_tdec_s {
    char *scratch;
    size_t scratch_cap;
    /* Producers write keys in a fixed order: next[f] is the field that
     * followed field f last time (next[F__CNT]: the first field), tried
     * with one compare before the general key scan. */
    int8_t next[F__CNT + 1];
    /* The fast path's prediction: seq[k] is the field of the k-th key of
     * the last line (-1: an unknown key, or none yet). */
    int8_t seq[SEQ_MAX];
    /* The template path's model of a line (see tdec_tmpl()): the bytes
     * before each value, as in the last line the fast path read. */
    tstep_t tmpl[SEQ_MAX];
    uint8_t ntmpl;               /* steps; 0: no template */
    char tmpl_scratch[TVAL_MAX]; /* room for parsing a predicted value */
    uint8_t nabsent;             /* fields no step sets ... */
    uint8_t absent[F__CNT];      /* ... which */
    /* The template compiled into runs of fixed text (see tdec_runs()). */
    bool runs_stale;     /* the steps changed since: compile again */
    uint8_t nruns;       /* 0: none */
    run_t runs[SEQ_MAX]; /* each: fixed text, then a value read */
    run_t tail;          /* fixed text after the last value read (len 0: none) */
    /* The event of a line the runs read (its fields that only predicted
     * values decide are those of every such line), and the fields that
     * runs_event() decides again on each, one bit per field. */
    bool ev0_ok;
    uint32_t recheck;
    sw_event_t ev0;
    char run_text[SEQ_MAX * (TPAT_MAX + TVAL_MAX) + 16]; /* the runs' text, then slack */
    sw_jval_t run_f[F__CNT + 1]; /* f[] before the values read: predicted and absent */
    bool general_only;           /* tests: skip tdec_tmpl() and tdec_fast() */
    uint64_t general_lines;      /* lines decoded by the general path */
    uint64_t tmpl_lines;         /* lines decoded by the template path */
    /* The last metadata object other than {} that the fast paths scanned
     * and found without a phase scope (v4's memory_capabilities): a line
     * with the same bytes there skips the scan. */
    size_t meta_len; /* 0: none */
    char meta_memo[1024];
};

/* The order in which stormlog's producers (and `stormwatch gen`) write the
 * keys of a TelemetryEvent: the decoder's prediction before it has read a
 * line, and the key it tries after the one its last line had next. */
static const int8_t k_stormlog_order[F__CNT] = {
    F_SCHEMA_VERSION,  F_TIMESTAMP_NS,      F_EVENT_TYPE,     F_COLLECTOR,
    F_SAMPLING_INTERVAL_MS, F_PID,          F_HOST,           F_DEVICE_ID,
    F_ALLOC_ALLOCATED, F_ALLOC_RESERVED,    F_ALLOC_ACTIVE,   F_ALLOC_INACTIVE,
    F_ALLOC_CHANGE,    F_DEVICE_USED_BYTES, F_DEVICE_FREE,    F_DEVICE_TOTAL,
    F_CONTEXT,         F_METADATA,          F_JOB_ID,         F_RANK,
    F_LOCAL_RANK,      F_WORLD_SIZE,        F_SESSION_ID,
};
/* k_stormlog_next[f]: the field after f in that order (-1: f is last);
 * [F__CNT]: the first. */
static const int8_t k_stormlog_next[F__CNT + 1] = {
    [F__CNT] = F_SCHEMA_VERSION,
    [F_SCHEMA_VERSION] = F_TIMESTAMP_NS,
    [F_TIMESTAMP_NS] = F_EVENT_TYPE,
    [F_EVENT_TYPE] = F_COLLECTOR,
    [F_COLLECTOR] = F_SAMPLING_INTERVAL_MS,
    [F_SAMPLING_INTERVAL_MS] = F_PID,
    [F_PID] = F_HOST,
    [F_HOST] = F_DEVICE_ID,
    [F_DEVICE_ID] = F_ALLOC_ALLOCATED,
    [F_ALLOC_ALLOCATED] = F_ALLOC_RESERVED,
    [F_ALLOC_RESERVED] = F_ALLOC_ACTIVE,
    [F_ALLOC_ACTIVE] = F_ALLOC_INACTIVE,
    [F_ALLOC_INACTIVE] = F_ALLOC_CHANGE,
    [F_ALLOC_CHANGE] = F_DEVICE_USED_BYTES,
    [F_DEVICE_USED_BYTES] = F_DEVICE_FREE,
    [F_DEVICE_FREE] = F_DEVICE_TOTAL,
    [F_DEVICE_TOTAL] = F_CONTEXT,
    [F_CONTEXT] = F_METADATA,
    [F_METADATA] = F_JOB_ID,
    [F_JOB_ID] = F_RANK,
    [F_RANK] = F_LOCAL_RANK,
    [F_LOCAL_RANK] = F_WORLD_SIZE,
    [F_WORLD_SIZE] = F_SESSION_ID,
    [F_SESSION_ID] = -1,
};

sw_tdec_t *sw_tdec_new(void)
{
    sw_tdec_t *dec = sw_calloc(1, sizeof(sw_tdec_t));
    memcpy(dec->next, k_stormlog_next, sizeof(dec->next));
    memset(dec->seq, -1, sizeof(dec->seq));
    memcpy(dec->seq, k_stormlog_order, sizeof(k_stormlog_order));
    return dec;
}

void sw_tdec_set_fast(sw_tdec_t *dec, bool on)
{
    dec->general_only = !on;
}

uint64_t sw_tdec_general_lines(const sw_tdec_t *dec)
{
    return dec->general_lines;
}

uint64_t sw_tdec_tmpl_lines(const sw_tdec_t *dec)
{
    return dec->tmpl_lines;
}

void sw_tdec_destroy(sw_tdec_t *dec)
{
    if (!dec) return;
    free(dec->scratch);
    free(dec);
}

bool sw_tdec_blank(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f' && c != '\v') return false;
    }
    return true;
}

sw_ev_kind_t sw_event_kind(sw_str_t t)
{
    /* Case-folded "sample": ASCII letters in either case, and U+017F
     * (long s, C5 BF) which Python's casefold() maps to 's'. */
    static const char k_sample[] = "sample";
    if (t.len == 6 && memcmp(t.ptr, k_sample, 6) == 0) return SW_EV_SAMPLE; /* the usual case */
    size_t i = 0, k = 0;
    while (k < 6 && i < t.len) {
        unsigned char c = (unsigned char)t.ptr[i];
        if (k == 0 && c == 0xc5 && i + 1 < t.len && (unsigned char)t.ptr[i + 1] == 0xbf) {
            i += 2;
            k++;
            continue;
        }
        if (c >= 'A' && c <= 'Z') c = (unsigned char)(c + 32);
        if (c != (unsigned char)k_sample[k]) break;
        i++;
        k++;
    }
    if (k == 6 && i == t.len) return SW_EV_SAMPLE;
    if (t.len == 11 && memcmp(t.ptr, "phase_enter", 11) == 0) return SW_EV_PHASE_ENTER;
    if (t.len == 10 && memcmp(t.ptr, "phase_exit", 10) == 0) return SW_EV_PHASE_EXIT;
    return SW_EV_OTHER;
}

/* Fields by key length, as id + 1 (0 ends a list): a key costs one
 * table lookup and at most four compares. */
static const uint8_t k_by_len[26][5] = {
    [3] = {F_PID + 1},
    [4] = {F_RANK + 1, F_HOST + 1},
    [6] = {F_JOB_ID + 1},
    [7] = {F_CONTEXT + 1},
    [8] = {F_METADATA + 1},
    [9] = {F_DEVICE_ID + 1, F_COLLECTOR + 1},
    [10] = {F_EVENT_TYPE + 1, F_WORLD_SIZE + 1, F_SESSION_ID + 1, F_LOCAL_RANK + 1},
    [12] = {F_TIMESTAMP_NS + 1},
    [14] = {F_SCHEMA_VERSION + 1},
    [17] = {F_DEVICE_USED_BYTES + 1, F_DEVICE_FREE + 1},
    [18] = {F_DEVICE_TOTAL + 1},
    [20] = {F_SAMPLING_INTERVAL_MS + 1},
    [22] = {F_ALLOC_ACTIVE + 1, F_ALLOC_CHANGE + 1},
    [24] = {F_ALLOC_RESERVED + 1, F_ALLOC_INACTIVE + 1},
    [25] = {F_ALLOC_ALLOCATED + 1},
};

/* Equality of n >= 1 bytes with word loads (keys are short). */
static inline bool bytes_eq(const char *a, const char *b, size_t n)
{
    uint64_t x, y;
    if (n < 8) {
        for (size_t i = 0; i < n; i++)
            if (a[i] != b[i]) return false;
        return true;
    }
    for (size_t i = 0; i + 8 <= n; i += 8) {
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y) return false;
    }
    memcpy(&x, a + n - 8, 8);
    memcpy(&y, b + n - 8, 8);
    return x == y;
}

static int field_id(sw_str_t k)
{
    if (k.len >= 26) return -1;
    for (const uint8_t *c = k_by_len[k.len]; *c; c++)
        if (bytes_eq(k_fields[*c - 1].name, k.ptr, k.len)) return *c - 1;
    return -1;
}

/* The value text quoted in messages: the raw JSON, shortened. */
static void quote_raw(char *dst, size_t dstsize, const sw_jval_t *v)
{
    size_t n = v->raw_len;
    if (n > 60) {
        snprintf(dst, dstsize, "%.57s...", v->raw);
        return;
    }
    snprintf(dst, dstsize, "%.*s", (int)n, v->raw);
}

static sw_err_t field_error(char *errstr, size_t errstr_size, const char *field, const sw_jval_t *v,
                            const char *expected)
{
    char shown[72];
    if (v->type == SW_J_ABSENT) snprintf(shown, sizeof(shown), "missing");
    else quote_raw(shown, sizeof(shown), v);
    snprintf(errstr, errstr_size, "field \"%s\" is %s, expected %s%s", field, shown, expected,
             v->type == SW_J_BIGINT ? " (the value does not fit in 64 bits)" : "");
    return SW_ERR_INVALID_ARG;
}

/* The identifier bounds (SW_IDENT_MAX), after SPEC 2's rules. */
static sw_err_t ident_bounds(const sw_event_t *ev, char *errstr, size_t errstr_size)
{
    if (ev->event_type.len <= SW_IDENT_MAX && ev->job_id.len <= SW_IDENT_MAX &&
        ev->host.len <= SW_IDENT_MAX && ev->session_id.len <= SW_IDENT_MAX)
        return SW_OK; /* the usual case, whatever is set */
    const struct {
        const char *name;
        bool set;
        sw_str_t s;
    } ids[] = {{"event_type", true, ev->event_type},
               {"job_id", ev->has_job_id, ev->job_id},
               {"host", true, ev->host},
               {"session_id", ev->has_session_id, ev->session_id}};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
        if (ids[i].set && ids[i].s.len > SW_IDENT_MAX) {
            snprintf(errstr, errstr_size,
                     "field \"%s\" is %zu bytes long, expected at most %d (identifiers are "
                     "bounded so that every alert fits in a Kafka message)",
                     ids[i].name, ids[i].s.len, SW_IDENT_MAX);
            return SW_ERR_INVALID_ARG;
        }
    return SW_OK;
}

/* TelemetryEvent v4 and later: memory counters may be null. */
static bool counters_nullable(const sw_jval_t *schema_version)
{
    return schema_version->type == SW_J_INT && schema_version->i >= 4;
}

/* Shared by JSON and Avro paths: SPEC 2 rules over captured values. */
static sw_err_t validate(const sw_jval_t *f, sw_event_t *ev, char *errstr, size_t errstr_size)
{
    const sw_jval_t *v;

    v = &f[F_TIMESTAMP_NS];
    if (v->type != SW_J_INT || v->i < 0)
        return field_error(errstr, errstr_size, "timestamp_ns", v, "an integer >= 0");
    ev->timestamp_ns = v->i;

    v = &f[F_EVENT_TYPE];
    if (v->type != SW_J_STRING || v->s.len == 0)
        return field_error(errstr, errstr_size, "event_type", v, "a non-empty string");
    ev->event_type = v->s;
    ev->kind = sw_event_kind(v->s);

    v = &f[F_WORLD_SIZE];
    if (v->type == SW_J_ABSENT) ev->world_size = 1;
    else if (v->type != SW_J_INT || v->i < 1)
        return field_error(errstr, errstr_size, "world_size", v, "an integer >= 1");
    else ev->world_size = v->i;

    v = &f[F_RANK];
    if (v->type == SW_J_ABSENT) {
        ev->rank = 0;
    } else if (v->type != SW_J_INT || v->i < 0) {
        return field_error(errstr, errstr_size, "rank", v, "an integer >= 0");
    } else if (v->i >= ev->world_size) {
        char exp[64];
        snprintf(exp, sizeof(exp), "an integer < world_size (%lld)", (long long)ev->world_size);
        return field_error(errstr, errstr_size, "rank", v, exp);
    } else {
        ev->rank = v->i;
    }

    v = &f[F_JOB_ID];
    ev->has_job_id = false;
    ev->job_id.ptr = NULL;
    ev->job_id.len = 0;
    if (v->type == SW_J_STRING && v->s.len > 0) {
        ev->has_job_id = true;
        ev->job_id = v->s;
    } else if (v->type != SW_J_ABSENT && v->type != SW_J_NULL) {
        return field_error(errstr, errstr_size, "job_id", v, "null or a non-empty string");
    }

    v = &f[F_SESSION_ID];
    ev->has_session_id = false;
    ev->session_id.ptr = NULL;
    ev->session_id.len = 0;
    if (v->type == SW_J_STRING) {
        ev->has_session_id = true;
        ev->session_id = v->s;
    } else if (v->type != SW_J_ABSENT && v->type != SW_J_NULL) {
        return field_error(errstr, errstr_size, "session_id", v, "null or a string");
    }

    v = &f[F_PID];
    if (v->type == SW_J_ABSENT) ev->pid = -1;
    else if (v->type != SW_J_INT) return field_error(errstr, errstr_size, "pid", v, "an integer");
    else ev->pid = v->i;

    v = &f[F_HOST];
    if (v->type == SW_J_ABSENT) ev->host = sw_str("unknown");
    else if (v->type != SW_J_STRING) return field_error(errstr, errstr_size, "host", v, "a string");
    else ev->host = v->s;

    v = &f[F_DEVICE_USED_BYTES];
    ev->has_device_used = false;
    ev->counterless = false;
    ev->device_used_bytes = 0;
    if (v->type == SW_J_ABSENT) {
        if (ev->kind == SW_EV_SAMPLE)
            return field_error(errstr, errstr_size, "device_used_bytes", v,
                               "an integer >= 0 (required for a sample)");
    } else if (v->type == SW_J_NULL && counters_nullable(&f[F_SCHEMA_VERSION])) {
        /* v4: the backend lacks the counter (metadata.memory_capabilities). */
        ev->counterless = ev->kind == SW_EV_SAMPLE;
    } else if (v->type != SW_J_INT || v->i < 0) {
        return field_error(errstr, errstr_size, "device_used_bytes", v, "an integer >= 0");
    } else {
        ev->has_device_used = true;
        ev->device_used_bytes = v->i;
    }

    v = &f[F_SAMPLING_INTERVAL_MS];
    if (v->type == SW_J_ABSENT) ev->sampling_interval_ms = 0;
    else if (v->type != SW_J_INT || v->i < 0)
        return field_error(errstr, errstr_size, "sampling_interval_ms", v, "an integer >= 0");
    else ev->sampling_interval_ms = v->i;

    v = &f[F_METADATA];
    if (v->type != SW_J_ABSENT && v->type != SW_J_NULL && v->type != SW_J_OBJECT) {
        char exp[64];
        snprintf(exp, sizeof(exp), "an object or null (got %s)", sw_jtype_name(v->type));
        return field_error(errstr, errstr_size, "metadata", v, exp);
    }
    if (v->type == SW_J_OBJECT) {
        ev->metadata_json.ptr = v->raw;
        ev->metadata_json.len = v->raw_len;
    } else {
        ev->metadata_json = sw_str("{}");
        ev->has_phase = false;
    }
    return SW_OK;
}

static void carry_i64(sw_opt_i64_t *o, const sw_jval_t *v)
{
    o->set = v->type == SW_J_INT;
    o->value = o->set ? v->i : 0;
}

static void carry_str(sw_opt_str_t *o, const sw_jval_t *v)
{
    o->set = v->type == SW_J_STRING;
    if (o->set) o->value = v->s;
    else o->value = sw_str("");
}

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

static inline bool is_digit(char c)
{
    return c >= '0' && c <= '9';
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
FAST_INLINE const char *fast_value(sw_tdec_t *dec, const char *p, const char *text,
                                   const char *end, int id, sw_jval_t *v, sw_event_t *ev,
                                   sw_jscan_t *js)
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

/* Whether the value text [v, e) can be predicted, and as what: a plain
 * string, an integer, a literal or the empty metadata object. */
static bool tmpl_value(tstep_t *st, const char *v, const char *e, char *scratch)
{
    size_t n = (size_t)(e - v);
    if (n == 0 || n > TVAL_MAX) return false;
    sw_jval_t jv;
    sw_jscan_t js;
    sw_jscan_init(&js, v, n, scratch);
    if (*v == '{') {
        if (n != 2 || v[1] != '}') return false;
        jv.type = SW_J_OBJECT;
    } else if (!sw_jscan_value(&js, &jv, 1) || js.p != e) {
        return false;
    }
    if (jv.type == SW_J_STRING && (jv.s.ptr != v + 1 || jv.s.len != n - 2)) return false;
    if (jv.type == SW_J_BIGINT || jv.type == SW_J_FLOAT || jv.type == SW_J_ARRAY) return false;
    st->vtype = (uint8_t)jv.type;
    st->vi = jv.type == SW_J_INT ? jv.i : 0;
    st->vlen = (uint8_t)n;
    memcpy(st->pat + st->len, v, n);
    st->vmask = st->len + n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (st->len + n)) - 1;
    return true;
}

/* The template of a line the fast path read: gap[k] is where the text
 * before the k-th value starts (the line's start, or the end of the value
 * before), val[k] where the value starts, gap[nkeys] where the last one
 * ends; nothing when a gap is too long. */
static void tmpl_learn(sw_tdec_t *dec, unsigned nkeys, const char *const *gap,
                       const char *const *val, const int8_t *ids)
{
    dec->ntmpl = 0;
    dec->nruns = 0;
    if (nkeys > SEQ_MAX) return;
    bool set[F__CNT] = {false};
    for (unsigned k = 0; k < nkeys; k++) {
        size_t n = (size_t)(val[k] - gap[k]);
        if (n > TPAT_MAX) return;
        tstep_t *st = &dec->tmpl[k];
        memset(st->pat, 0, sizeof(st->pat));
        memcpy(st->pat, gap[k], n);
        st->len = (uint8_t)n;
        st->gmask = ((uint64_t)1 << n) - 1;
        st->vlen = 0;
        st->vmask = 0;
        st->slot = ids[k] >= 0 ? (uint8_t)ids[k] : F__CNT;
        if (ids[k] >= 0) set[ids[k]] = true;
        (void)tmpl_value(st, val[k], gap[k + 1], dec->tmpl_scratch);
    }
    dec->nabsent = 0;
    for (int i = 0; i < F__CNT; i++)
        if (!set[i]) dec->absent[dec->nabsent++] = (uint8_t)i;
    dec->ntmpl = (uint8_t)nkeys;
    dec->runs_stale = true;
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
    if (AGAIN(F_ALLOC_ALLOCATED))
        carry_i64(&ev->allocator_allocated_bytes, &f[F_ALLOC_ALLOCATED]);
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

/* Whether an integer's digits may end before byte c (the text after a
 * value read by the runs): c is no digit and does not make it a float. */
static bool int_may_end(char c)
{
    return !is_digit(c) && c != '.' && c != 'e' && c != 'E';
}

/* The steps compiled into runs: the text of steps with a predicted value
 * is joined to the text of the step after them, so that a line costs one
 * compare per value read, and the predicted values (with the absent
 * fields) are decoded once into run_f, their text pointing into
 * run_text. Text after the last value read (predicted values and the
 * text between them) is the tail, compared before the closing '}'. No
 * runs when a field has two keys (its value is the last one's, which the
 * runs cannot tell). */
static void runs_compile(sw_tdec_t *dec)
{
    dec->runs_stale = false;
    dec->nruns = 0;
    dec->ev0_ok = false;
    bool seen[F__CNT + 1] = {false};
    for (unsigned k = 0; k < dec->ntmpl; k++) {
        uint8_t slot = dec->tmpl[k].slot;
        if (slot < F__CNT && seen[slot]) return;
        seen[slot] = true;
    }
    if (!dec->ntmpl) return;
    for (int i = 0; i <= F__CNT; i++) dec->run_f[i].type = SW_J_ABSENT;
    size_t at = 0, start = 0;
    unsigned nruns = 0;
    for (unsigned k = 0; k < dec->ntmpl; k++) {
        const tstep_t *st = &dec->tmpl[k];
        memcpy(dec->run_text + at, st->pat, st->len);
        at += st->len;
        if (st->vlen) {
            sw_jval_t *v = &dec->run_f[st->slot];
            memcpy(dec->run_text + at, st->pat + st->len, st->vlen);
            v->type = (sw_jtype_t)st->vtype;
            v->raw = dec->run_text + at;
            v->raw_len = st->vlen;
            v->i = st->vi;
            v->s.ptr = v->raw + 1;
            v->s.len = (size_t)st->vlen - 2; /* meaningful for a string */
            at += st->vlen;
            continue;
        }
        run_t *r = &dec->runs[nruns++];
        r->text = dec->run_text + start;
        r->len = (uint16_t)(at - start);
        r->mask = r->len < 16 ? (uint16_t)((1u << r->len) - 1) : 0xffff;
        /* Values within 16 bytes of the line's start (the texts and a
         * byte per value before them) take the other branch: run_value()
         * reads 16 bytes before an integer's end. */
        r->need = at + nruns - 1 < 16 ? UINT16_MAX
                                      : (uint16_t)((r->len < 16 ? 16 : r->len) + 33);
        r->slot = st->slot;
        r->v = &dec->run_f[st->slot];
        start = at;
    }
    if (!nruns) return; /* nothing read: the steps do it */
    /* run_value() leaves the end of an integer to the text after it. */
    for (unsigned k = 1; k < nruns; k++)
        if (!int_may_end(dec->runs[k].text[0])) return;
    if (at > start && !int_may_end(dec->run_text[start])) return;
    run_t *r = &dec->tail;
    r->text = dec->run_text + start;
    r->len = (uint16_t)(at - start);
    r->mask = r->len < 16 ? (uint16_t)((1u << r->len) - 1) : 0xffff;
    r->need = r->len < 16 ? 16 : r->len;
    r->slot = F__CNT;
    r->v = NULL;
    memset(dec->run_text + at, 0, 16);
    dec->nruns = (uint8_t)nruns;
    /* runs_event() decides the fields read again, rank when world_size
     * is read, device_used_bytes when event_type or schema_version is. */
    uint32_t m = 0;
    for (unsigned k = 0; k < nruns; k++)
        if (dec->runs[k].slot < F__CNT) m |= 1u << dec->runs[k].slot;
    if (m & (1u << F_WORLD_SIZE)) m |= 1u << F_RANK;
    if (m & (1u << F_EVENT_TYPE | 1u << F_SCHEMA_VERSION)) m |= 1u << F_DEVICE_USED_BYTES;
    dec->recheck = m;
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
FAST_INLINE const char *run_value(sw_tdec_t *dec, const char *p, const char *text,
                                  const char *end, const run_t *r, sw_event_t *ev,
                                  sw_jscan_t *js)
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
            dm |= (uint32_t)_mm_movemask_epi8(
                      _mm_cmpeq_epi8(_mm_min_epu8(t1, _mm_set1_epi8(9)), t1))
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
        uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(s0, quote), _mm_cmpeq_epi8(s0, bslash)),
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
        } else if (prev >= 0 && (nx = k_stormlog_next[prev]) >= 0 && nx != id &&
                   nx != dec->next[prev] && key_at(p, end, nx)) {
            id = nx;
            p += k_keypat[id].len;
            if (kth < SEQ_MAX) dec->seq[kth] = (int8_t)id;
        } else {
            const char *k = p + 1;
            const char *q = sw_json_skip_plain(k, end);
            if (q >= end || *q != '"' || q + 1 >= end || q[1] != ':') return false;
            id = field_id((sw_str_t){k, (size_t)(q - k)});
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
    tmpl_learn(dec, kth + 1, gap, val, dec->seq);
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
        if (dec->runs_stale) runs_compile(dec);
        if (ok) {
            dec->tmpl_lines++;
            goto validate;
        }
        ev->has_phase = false;
    }
    for (int i = 0; i < F__CNT; i++) f[i].type = SW_J_ABSENT;
    if (!dec->general_only && tdec_fast(dec, text, len, f, ev)) {
        if (dec->runs_stale) runs_compile(dec);
        goto validate;
    }
    /* The general path, from the start (the fast one may have filled some
     * of f[] and the phase scope). */
    for (int i = 0; i < F__CNT; i++) f[i].type = SW_J_ABSENT;
    ev->has_phase = false;
    dec->general_lines++;
    sw_jscan_t js;
    sw_jscan_init(&js, text, len, dec->scratch);

    sw_jscan_ws(&js);
    if (js.p >= js.end || *js.p != '{') {
        sw_jval_t top;
        if (js.p < js.end && sw_jscan_value(&js, &top, 0)) {
            sw_jscan_ws(&js);
            if (js.p == js.end) {
                snprintf(errstr, errstr_size, "not a JSON object: the line is %s",
                         sw_jtype_name(top.type));
                return SW_ERR_PARSE;
            }
        }
        snprintf(errstr, errstr_size, "not valid JSON: %s at column %zu",
                 js.err ? js.err : "expected '{'",
                 sw_jscan_offset(&js, js.err ? js.err_at : js.p) + 1);
        return SW_ERR_PARSE;
    }
    js.p++;
    sw_jscan_ws(&js);
    bool ok = true;
    if (js.p < js.end && *js.p == '}') {
        js.p++;
    } else {
        int prev = F__CNT;
        for (;;) {
            sw_jscan_ws(&js);
            int id = dec->next[prev];
            size_t klen = id >= 0 ? k_fields[id].len : 0;
            if (id >= 0 && (size_t)(js.end - js.p) > klen + 1 && js.p[0] == '"' &&
                js.p[klen + 1] == '"' && bytes_eq(js.p + 1, k_fields[id].name, klen)) {
                js.p += klen + 2; /* the predicted key, byte for byte */
            } else {
                sw_str_t key;
                if (!(ok = sw_jscan_string(&js, &key))) break;
                id = field_id(key);
            }
            if (id >= 0) {
                dec->next[prev] = (int8_t)id;
                prev = id;
            }
            if (js.p < js.end && *js.p == ':') js.p++;
            else if (!(ok = sw_jscan_expect(&js, ':', "expected ':' after object key"))) break;
            sw_jscan_ws(&js);
            sw_jval_t skipped;
            sw_jval_t *v = id >= 0 ? &f[id] : &skipped;
            if (id == F_METADATA && js.p < js.end && *js.p == '{') {
                v->type = SW_J_OBJECT;
                v->raw = js.p;
                if (!(ok = sw_json_metadata_phase(&js, &ev->phase, &ev->has_phase, 1))) break;
                v->raw_len = (size_t)(js.p - v->raw);
            } else if (!sw_jscan_int_fast(&js, v)) {
                if (!(ok = sw_jscan_value(&js, v, 1))) break;
            }
            sw_jscan_ws(&js);
            if (js.p < js.end && *js.p == ',') {
                js.p++;
                continue;
            }
            ok = sw_jscan_expect(&js, '}', "expected ',' or '}' in object");
            break;
        }
    }
    if (ok) {
        sw_jscan_ws(&js);
        if (js.p != js.end) {
            js.err = "unexpected data after the object";
            js.err_at = js.p;
            ok = false;
        }
    }
    if (!ok) {
        snprintf(errstr, errstr_size, "not valid JSON: %s at column %zu", js.err,
                 sw_jscan_offset(&js, js.err_at) + 1);
        return SW_ERR_PARSE;
    }
validate:;
    sw_err_t err;
    if (f == dec->run_f && dec->ev0_ok && runs_event(dec, ev)) goto bounds;
    err = validate(f, ev, errstr, errstr_size);
    if (err) return err;
    carry_i64(&ev->schema_version, &f[F_SCHEMA_VERSION]);
    carry_i64(&ev->device_id, &f[F_DEVICE_ID]);
    carry_i64(&ev->local_rank, &f[F_LOCAL_RANK]);
    carry_i64(&ev->allocator_allocated_bytes, &f[F_ALLOC_ALLOCATED]);
    carry_i64(&ev->allocator_reserved_bytes, &f[F_ALLOC_RESERVED]);
    carry_i64(&ev->allocator_active_bytes, &f[F_ALLOC_ACTIVE]);
    carry_i64(&ev->allocator_inactive_bytes, &f[F_ALLOC_INACTIVE]);
    carry_i64(&ev->allocator_change_bytes, &f[F_ALLOC_CHANGE]);
    carry_i64(&ev->device_free_bytes, &f[F_DEVICE_FREE]);
    carry_i64(&ev->device_total_bytes, &f[F_DEVICE_TOTAL]);
    carry_str(&ev->collector, &f[F_COLLECTOR]);
    carry_str(&ev->context, &f[F_CONTEXT]);
    if (f == dec->run_f && !dec->ev0_ok) {
        dec->ev0 = *ev; /* its phase scope is not used */
        dec->ev0_ok = true;
    }
bounds:
    if ((ev->event_type.len | ev->job_id.len | ev->host.len | ev->session_id.len) > SW_IDENT_MAX)
        return ident_bounds(ev, errstr, errstr_size); /* the usual case is checked inline */
    return SW_OK;
}

sw_err_t sw_event_validate(const sw_event_t *ev, char *errstr, size_t errstr_size)
{
    /* Avro types the fields, so only ranges are left to check. */
    char shown[32];
    if (ev->timestamp_ns < 0) {
        snprintf(shown, sizeof(shown), "%lld", (long long)ev->timestamp_ns);
        snprintf(errstr, errstr_size, "field \"timestamp_ns\" is %s, expected an integer >= 0",
                 shown);
        return SW_ERR_INVALID_ARG;
    }
    if (ev->event_type.len == 0) {
        snprintf(errstr, errstr_size, "field \"event_type\" is \"\", expected a non-empty string");
        return SW_ERR_INVALID_ARG;
    }
    if (ev->world_size < 1) {
        snprintf(errstr, errstr_size, "field \"world_size\" is %lld, expected an integer >= 1",
                 (long long)ev->world_size);
        return SW_ERR_INVALID_ARG;
    }
    if (ev->rank < 0) {
        snprintf(errstr, errstr_size, "field \"rank\" is %lld, expected an integer >= 0",
                 (long long)ev->rank);
        return SW_ERR_INVALID_ARG;
    }
    if (ev->rank >= ev->world_size) {
        snprintf(errstr, errstr_size,
                 "field \"rank\" is %lld, expected an integer < world_size (%lld)",
                 (long long)ev->rank, (long long)ev->world_size);
        return SW_ERR_INVALID_ARG;
    }
    if (ev->has_job_id && ev->job_id.len == 0) {
        snprintf(errstr, errstr_size,
                 "field \"job_id\" is \"\", expected null or a non-empty string");
        return SW_ERR_INVALID_ARG;
    }
    if (ev->kind == SW_EV_SAMPLE && !ev->has_device_used && !ev->counterless) {
        snprintf(
            errstr, errstr_size,
            "field \"device_used_bytes\" is missing, expected an integer >= 0 (required for a sample)");
        return SW_ERR_INVALID_ARG;
    }
    if (ev->has_device_used && ev->device_used_bytes < 0) {
        snprintf(errstr, errstr_size,
                 "field \"device_used_bytes\" is %lld, expected an integer >= 0",
                 (long long)ev->device_used_bytes);
        return SW_ERR_INVALID_ARG;
    }
    if (ev->sampling_interval_ms < 0) {
        snprintf(errstr, errstr_size,
                 "field \"sampling_interval_ms\" is %lld, expected an integer >= 0",
                 (long long)ev->sampling_interval_ms);
        return SW_ERR_INVALID_ARG;
    }
    return ident_bounds(ev, errstr, errstr_size);
}
