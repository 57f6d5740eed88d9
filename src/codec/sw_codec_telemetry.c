/*
 * JSON -> sw_event_t, the general path: any JSON object, one pass over
 * the line: known keys are captured (last occurrence wins, as in Python's
 * json), everything else is validated and skipped. Validation runs after
 * the object is complete so that it sees the final value of each field,
 * with the messages of SPEC 2. The decoder's entry, sw_tdec_json(), and
 * its fast paths are in sw_codec_telemetry_fast.c. No I/O.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_codec_telemetry_int.h"

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

sw_tdec_t *sw_tdec_new(void)
{
    sw_tdec_t *dec = sw_calloc(1, sizeof(sw_tdec_t));
    memcpy(dec->next, sw_tdec_stormlog_next, sizeof(dec->next));
    memset(dec->seq, -1, sizeof(dec->seq));
    memcpy(dec->seq, sw_tdec_stormlog_order, sizeof(sw_tdec_stormlog_order));
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

int sw_tdec_field_id(sw_str_t k)
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
sw_err_t sw_tdec_ident_bounds(const sw_event_t *ev, char *errstr, size_t errstr_size)
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

sw_err_t sw_tdec_validate(const sw_jval_t *f, sw_event_t *ev, char *errstr, size_t errstr_size)
{
    sw_err_t err = validate(f, ev, errstr, errstr_size);
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
    return SW_OK;
}

sw_err_t sw_tdec_general(sw_tdec_t *dec, const char *text, size_t len, sw_jval_t *f, sw_event_t *ev,
                         char *errstr, size_t errstr_size)
{
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
                id = sw_tdec_field_id(key);
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
    return sw_tdec_ident_bounds(ev, errstr, errstr_size);
}
