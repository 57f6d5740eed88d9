/*
 * Avro binary <-> sw_event_t (schemas/telemetry_event.avsc), the Confluent
 * header, and events through resolved writer schemas (see sw_codec_avro.h;
 * alert records are in sw_codec_avro_alert.c). The encoders append to a buffer and
 * check everything that can fail before the first byte, so a failed call
 * leaves the buffer as it was. The decoders never read past the end, never
 * allocate per element and report the byte offset of the first problem.
 * No I/O, no libavro: tests check these files against Avro C.
 */
#include "sw_codec_avro_int.h"

#include <stddef.h>

#include "sw_event_meta.h"

/* ---- the reader's failures (see sw_codec_avro_int.h) ---- */

bool sw_avro_rd_fail(rd_t *rd, sw_err_t err, const char *fmt, ...)
{
    if (rd->err) return false;
    rd->err = err;
    va_list ap;
    va_start(ap, fmt);
    if (rd->errstr && rd->errstr_size) vsnprintf(rd->errstr, rd->errstr_size, fmt, ap);
    va_end(ap);
    return false;
}

bool sw_avro_rd_truncated(rd_t *rd, const unsigned char *at, const char *detail)
{
    char nm[160];
    return sw_avro_rd_fail(rd, SW_ERR_TRUNCATED, "Avro: truncated at byte %zu while reading %s%s",
                           rd_off(rd, at), rd_name(rd, nm, sizeof(nm)), detail);
}

bool sw_avro_is_framed(const void *data, size_t len)
{
    return len >= SW_AVRO_HEADER_LEN && ((const unsigned char *)data)[0] == SW_AVRO_MAGIC;
}

sw_err_t sw_avro_schema_id(const void *data, size_t len, int32_t *schema_id, char *errstr,
                           size_t errstr_size)
{
    const unsigned char *p = data;
    if (len == 0 || p[0] != SW_AVRO_MAGIC || len < SW_AVRO_HEADER_LEN) {
        rd_t rd; /* the header's message */
        rd_init(&rd, data, len, errstr, errstr_size);
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

sw_err_t sw_avro_encode_event(const sw_event_t *ev, int32_t schema_id, sw_buf_t *out, char *errstr,
                              size_t errstr_size)
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
    /* The event's oom_reason, unescaped (sw_event_meta_oom()). */
    char oom_reason[SW_EVENT_REASON_BUF];
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
static sw_err_t meta_parse(sw_avro_dec_t *dec, sw_str_t text, sw_event_t *ev, sw_phase_scope_t *ps,
                           bool *has_phase, char *errstr, size_t errstr_size)
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
    if (ok) ok = sw_jscan_end(&js);
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

/* What reading the reader's fields leaves for decode_finish(). */
typedef struct slots_s {
    sw_opt_str_t meta;
    bool typed, typed_ok; /* phase_scope non-null; a well-formed boundary */
} slots_t;

/* Reader field @p i of TelemetryEvent (0..23) at rd->p, into @p ev (or
 * @p f). Inlined with a constant @p i where the fields come in the
 * reader's order, as one jump table where they come in a writer's. */
static inline __attribute__((always_inline)) bool read_slot(rd_t *rd, int i, sw_event_t *ev,
                                                            slots_t *f)
{
    sw_opt_i64_t o;
    sw_opt_str_t str;
    switch (i) {
    case 0: return rd_opt_long(rd, "schema_version", &ev->schema_version);
    case 1: rd->field = "timestamp_ns"; return rd_long(rd, &ev->timestamp_ns);
    case 2: rd->field = "event_type"; return rd_str(rd, &ev->event_type);
    case 3: return rd_opt_str(rd, "collector", &ev->collector);
    case 4: return rd_long_or(rd, "sampling_interval_ms", 0, &ev->sampling_interval_ms);
    case 5: return rd_long_or(rd, "pid", -1, &ev->pid);
    case 6:
        if (!rd_opt_str(rd, "host", &str)) return false;
        ev->host = str.set ? str.value : sw_str("unknown");
        return true;
    case 7: return rd_opt_long(rd, "device_id", &ev->device_id);
    case 8: return rd_opt_long(rd, "allocator_allocated_bytes", &ev->allocator_allocated_bytes);
    case 9: return rd_opt_long(rd, "allocator_reserved_bytes", &ev->allocator_reserved_bytes);
    case 10: return rd_opt_long(rd, "allocator_active_bytes", &ev->allocator_active_bytes);
    case 11: return rd_opt_long(rd, "allocator_inactive_bytes", &ev->allocator_inactive_bytes);
    case 12: return rd_opt_long(rd, "allocator_change_bytes", &ev->allocator_change_bytes);
    case 13:
        if (!rd_opt_long(rd, "device_used_bytes", &o)) return false;
        ev->has_device_used = o.set;
        ev->device_used_bytes = o.value;
        return true;
    case 14: return rd_opt_long(rd, "device_free_bytes", &ev->device_free_bytes);
    case 15: return rd_opt_long(rd, "device_total_bytes", &ev->device_total_bytes);
    case 16: return rd_opt_str(rd, "context", &ev->context);
    case 17: return rd_opt_str(rd, "metadata", &f->meta);
    case 18:
        if (!rd_opt_str(rd, "job_id", &str)) return false;
        ev->has_job_id = str.set;
        ev->job_id = str.value;
        return true;
    case 19: return rd_long_or(rd, "rank", 0, &ev->rank);
    case 20: return rd_opt_long(rd, "local_rank", &ev->local_rank);
    case 21: return rd_long_or(rd, "world_size", 1, &ev->world_size);
    case 22:
        if (!rd_opt_str(rd, "session_id", &str)) return false;
        ev->has_session_id = str.set;
        ev->session_id = str.value;
        return true;
    case 23:
        rd->field = "phase_scope";
        if (!rd_opt(rd, &f->typed)) return false;
        return !f->typed || rd_phase_scope(rd, &ev->phase, &f->typed_ok);
    default: return false;
    }
}

/* After every field is read: SPEC 2 ranges first, in the JSON decoder's
 * order, then metadata (last there too). */
static inline __attribute__((always_inline)) sw_err_t decode_finish(sw_avro_dec_t *dec,
                                                                    sw_event_t *ev,
                                                                    const slots_t *f, char *errstr,
                                                                    size_t errstr_size)
{
    ev->kind = sw_event_kind(ev->event_type);
    /* v4: a null counter is the backend's capability (SPEC 2), not absent. */
    ev->counterless = ev->kind == SW_EV_SAMPLE && !ev->has_device_used && ev->schema_version.set &&
                      ev->schema_version.value >= 4;
    sw_err_t err = sw_event_validate(ev, errstr, errstr_size);
    if (err) return err;
    if (!f->meta.set) {
        ev->metadata_json = sw_str("{}");
        ev->has_phase = f->typed && f->typed_ok;
        sw_event_meta_oom(ev, dec->oom_reason);
        return SW_OK;
    }
    if (f->typed) {
        /* The typed field wins; the text is still checked. */
        sw_phase_scope_t ignored;
        bool ignored_has = false;
        err = meta_parse(dec, f->meta.value, ev, &ignored, &ignored_has, errstr, errstr_size);
        ev->has_phase = f->typed_ok;
    } else {
        err = meta_parse(dec, f->meta.value, ev, &ev->phase, &ev->has_phase, errstr, errstr_size);
    }
    if (!err) sw_event_meta_oom(ev, dec->oom_reason);
    return err;
}

/* Field @p i of the reader schema: from its span when the body was resolved
 * from another writer schema (sw_avro_plan_fields), else where the
 * previous field ended. */
#define SLOT(i)                                        \
    do {                                               \
        if (sp) {                                      \
            rd->p = sp[i].p;                           \
            rd->end = sp[i].end;                       \
        }                                              \
        if (!read_slot(rd, i, ev, &f)) return rd->err; \
    } while (0)

/* The TelemetryEvent fields after the header, in the reader's order;
 * @p sp: NULL (one body in the reader's layout) or one span per field. */
static sw_err_t decode_fields(sw_avro_dec_t *dec, rd_t *rd, const sw_avro_span_t *sp,
                              sw_event_t *ev, char *errstr, size_t errstr_size)
{
    slots_t f = {.typed = false};
    SLOT(0);
    SLOT(1);
    SLOT(2);
    SLOT(3);
    SLOT(4);
    SLOT(5);
    SLOT(6);
    SLOT(7);
    SLOT(8);
    SLOT(9);
    SLOT(10);
    SLOT(11);
    SLOT(12);
    SLOT(13);
    SLOT(14);
    SLOT(15);
    SLOT(16);
    SLOT(17);
    SLOT(18);
    SLOT(19);
    SLOT(20);
    SLOT(21);
    SLOT(22);
    SLOT(23);
    if (!sp && !rd_done(rd)) return rd->err;
    return decode_finish(dec, ev, &f, errstr, errstr_size);
}

#undef SLOT

/* Reader fields of the telemetry schema (decode_fields reads 24). */
#define EVENT_FIELDS 24

/* Zero @p ev but its phase scope (632 of its 1008 bytes): the scope is
 * read only when has_phase is set, and both places that set it
 * (rd_phase_scope, the metadata's json_phase_scope) clear it first. */
static void event_clear(sw_event_t *ev)
{
    _Static_assert(offsetof(sw_event_t, schema_version) ==
                       offsetof(sw_event_t, phase) + sizeof(sw_phase_scope_t),
                   "a field between phase and schema_version would be left unset");
    memset(ev, 0, offsetof(sw_event_t, phase));
    memset(&ev->schema_version, 0, sizeof(*ev) - offsetof(sw_event_t, schema_version));
}

sw_err_t sw_avro_decode_event(sw_avro_dec_t *dec, const void *data, size_t len,
                              int32_t expected_schema_id, sw_event_t *ev, char *errstr,
                              size_t errstr_size)
{
    rd_t rd;
    rd_init(&rd, data, len, errstr, errstr_size);
    event_clear(ev);
    if (!rd_header(&rd, expected_schema_id)) return rd.err;
    return decode_fields(dec, &rd, NULL, ev, errstr, errstr_size);
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

/* Each reader field's read as its own function, for the steps of other
 * shapes (phase_scope), the defaults and the converted fields. */
typedef bool (*slot_fn_t)(rd_t *rd, sw_event_t *ev, slots_t *f);

#define SLOT_FN(i)                                             \
    static bool slot_##i(rd_t *rd, sw_event_t *ev, slots_t *f) \
    {                                                          \
        return read_slot(rd, i, ev, f);                        \
    }
SLOT_FN(0)
SLOT_FN(1)
SLOT_FN(2)
SLOT_FN(3)
SLOT_FN(4)
SLOT_FN(5)
SLOT_FN(6)
SLOT_FN(7)
SLOT_FN(8)
SLOT_FN(9)
SLOT_FN(10)
SLOT_FN(11)
SLOT_FN(12)
SLOT_FN(13)
SLOT_FN(14)
SLOT_FN(15)
SLOT_FN(16)
SLOT_FN(17)
SLOT_FN(18)
SLOT_FN(19)
SLOT_FN(20)
SLOT_FN(21)
SLOT_FN(22)
SLOT_FN(23)
#undef SLOT_FN

static const slot_fn_t k_slot_fn[EVENT_FIELDS] = {
    slot_0,  slot_1,  slot_2,  slot_3,  slot_4,  slot_5,  slot_6,  slot_7,
    slot_8,  slot_9,  slot_10, slot_11, slot_12, slot_13, slot_14, slot_15,
    slot_16, slot_17, slot_18, slot_19, slot_20, slot_21, slot_22, slot_23,
};

/* Where step_fast() puts reader field i: what read_slot() does for it, as
 * data (test_avro_resolve's differential test decodes every field both
 * ways). */
typedef struct slot_dst_s {
    int16_t val;        /* offset of the value, an int64_t or an sw_str_t */
    int16_t flag;       /* offset of the bool "not null", or -1 (none) */
    bool in_f;          /* offsets in slots_t, not in sw_event_t */
    int64_t dflt;       /* a null long's value */
    const char *dflt_s; /* a null string's value ... */
    size_t dflt_len;    /* ... and its bytes */
} slot_dst_t;

#define DST_LONG(m, d) offsetof(sw_event_t, m), -1, false, d, "", 0
#define DST_STR(m, d) offsetof(sw_event_t, m), -1, false, 0, d, sizeof(d) - 1
#define DST_FLAG(m, flag) offsetof(sw_event_t, m), offsetof(sw_event_t, flag), false, 0, "", 0
#define DST_OPT(m) DST_FLAG(m.value, m.set)

static const slot_dst_t k_dst[EVENT_FIELDS] = {
    {DST_OPT(schema_version)},
    {DST_LONG(timestamp_ns, 0)},
    {DST_STR(event_type, "")},
    {DST_OPT(collector)},
    {DST_LONG(sampling_interval_ms, 0)},
    {DST_LONG(pid, -1)},
    {DST_STR(host, "unknown")},
    {DST_OPT(device_id)},
    {DST_OPT(allocator_allocated_bytes)},
    {DST_OPT(allocator_reserved_bytes)},
    {DST_OPT(allocator_active_bytes)},
    {DST_OPT(allocator_inactive_bytes)},
    {DST_OPT(allocator_change_bytes)},
    {DST_FLAG(device_used_bytes, has_device_used)},
    {DST_OPT(device_free_bytes)},
    {DST_OPT(device_total_bytes)},
    {DST_OPT(context)},
    {offsetof(slots_t, meta.value), offsetof(slots_t, meta.set), true, 0, "", 0},
    {DST_FLAG(job_id, has_job_id)},
    {DST_LONG(rank, 0)},
    {DST_OPT(local_rank)},
    {DST_LONG(world_size, 1)},
    {DST_FLAG(session_id, has_session_id)},
    {0, -1, false, 0, "", 0}, /* phase_scope: a step of another shape */
};

#undef DST_LONG
#undef DST_STR
#undef DST_FLAG
#undef DST_OPT

/* Writer fields to convert after the pass (see decode_steps). */
typedef struct conv_s {
    const unsigned char *at[EVENT_FIELDS], *end[EVENT_FIELDS];
    int slot[EVENT_FIELDS];
    size_t n;
} conv_t;

/* What one pass of the steps works with. */
typedef struct pass_s {
    const sw_avro_plan_t *plan;
    rd_t *rd; /* the strict reader; its p is set before step_careful() */
    sw_event_t *ev;
    slots_t *f;
    conv_t cv;
} pass_t;

/* Step @p st (writer field @p k) at rd->p, the careful way: what
 * step_fast() leaves (a value near the body's end, a union index of more
 * than one byte, a step of another shape). A read is the reader field's
 * own (the fixed path's code), a skip the resolver's; a field to convert
 * is skipped and noted. */
__attribute__((noinline)) static bool step_careful(pass_t *ps, size_t k, const sw_avro_step_t *st)
{
    rd_t *rd = ps->rd;
    const unsigned char *at = rd->p;
    switch (st->op) {
    case SW_AVRO_STEP_READ_VARINT:
    case SW_AVRO_STEP_READ_OPT_VARINT:
    case SW_AVRO_STEP_READ_LEN:
    case SW_AVRO_STEP_READ_OPT_LEN:
    case SW_AVRO_STEP_READ: return k_slot_fn[st->slot](rd, ps->ev, ps->f);
    default: break;
    }
    if (!sw_avro_plan_skip(ps->plan, k, &rd->p, rd->end)) return false;
    if (st->op == SW_AVRO_STEP_CONVERT) {
        conv_t *cv = &ps->cv;
        cv->at[cv->n] = at;
        cv->end[cv->n] = rd->p;
        cv->slot[cv->n++] = st->slot;
    }
    return true;
}

/* The fast reads of the steps, at @p p before @p end: a varint of one
 * byte anywhere, a longer one while 10 bytes are left (no bounds check
 * per byte). @returns the end of the value, or NULL for "ask the careful
 * path" (which also says whether the value is malformed). */
static inline const unsigned char *fast_long(const unsigned char *p, const unsigned char *end,
                                             int64_t *v)
{
    uint64_t u = 0;
    if (p < end && *p < 0x80) {
        u = *p++;
    } else if (end - p < 10 || !(p = varint_word(p, &u))) {
        return NULL;
    }
    *v = (int64_t)((u >> 1) ^ (0 - (u & 1)));
    return p;
}

/* A UTF-8 string (the strict reader's check: rd_str). */
static inline const unsigned char *fast_str(const unsigned char *p, const unsigned char *end,
                                            sw_str_t *s)
{
    int64_t n = 0;
    p = fast_long(p, end, &n);
    if (!p || n < 0 || n > end - p) return NULL;
    if (!ascii16(p, (size_t)n, (size_t)(end - p)) &&
        sw_utf8_bad_at(p, (size_t)n, false) != (size_t)n)
        return NULL;
    s->ptr = (const char *)p;
    s->len = (size_t)n;
    return p + n;
}

/* The union index of ["null", T] at @p p: branch 0 or 1 in one byte
 * (@p set: not null); NULL for anything else (the careful path's). */
static inline const unsigned char *fast_opt(const unsigned char *p, const unsigned char *end,
                                            bool *set)
{
    if (p >= end || (*p | 2) != 2) return NULL;
    *set = *p != 0;
    return p + 1;
}

/* Reader field @p slot's value @p v (a long) or @p s (a string), and its
 * flag when it has one (a false flag rewrites the zero it already is). */
static inline void put_long_at(int slot, sw_event_t *ev, slots_t *f, bool set, int64_t v)
{
    const slot_dst_t *d = &k_dst[slot];
    char *base = d->in_f ? (char *)f : (char *)ev;
    if (d->flag >= 0) *(bool *)(base + d->flag) = set;
    *(int64_t *)(void *)(base + d->val) = set ? v : d->dflt;
}

static inline void put_str_at(int slot, sw_event_t *ev, slots_t *f, bool set, sw_str_t s)
{
    const slot_dst_t *d = &k_dst[slot];
    char *base = d->in_f ? (char *)f : (char *)ev;
    if (d->flag >= 0) *(bool *)(base + d->flag) = set;
    *(sw_str_t *)(void *)(base + d->val) = set ? s : (sw_str_t){d->dflt_s, d->dflt_len};
}

/* Step @p st at @p p, the common shapes inline: a nullable or plain long
 * or string read into its reader field, or skipped. @returns the end of
 * the value, or NULL for step_careful(), which does it all again (nothing
 * is written here before the value is read). */
static inline __attribute__((always_inline)) const unsigned char *
step_fast(const sw_avro_step_t *st, const unsigned char *p, const unsigned char *end,
          sw_event_t *ev, slots_t *f)
{
    bool set = true;
    int64_t v = 0;
    sw_str_t s = {0};
    switch (st->op) {
    case SW_AVRO_STEP_READ_OPT_VARINT:
        if (!(p = fast_opt(p, end, &set))) return NULL;
        __attribute__((fallthrough));
    case SW_AVRO_STEP_READ_VARINT:
        if (set && !(p = fast_long(p, end, &v))) return NULL;
        put_long_at(st->slot, ev, f, set, v);
        return p;
    case SW_AVRO_STEP_READ_OPT_LEN:
        if (!(p = fast_opt(p, end, &set))) return NULL;
        __attribute__((fallthrough));
    case SW_AVRO_STEP_READ_LEN:
        if (set && !(p = fast_str(p, end, &s))) return NULL;
        put_str_at(st->slot, ev, f, set, s);
        return p;
    case SW_AVRO_STEP_SKIP_OPT_VARINT:
        if (!(p = fast_opt(p, end, &set))) return NULL;
        __attribute__((fallthrough));
    case SW_AVRO_STEP_SKIP_VARINT: return set ? fast_long(p, end, &v) : p;
    case SW_AVRO_STEP_SKIP_OPT_LEN:
        if (!(p = fast_opt(p, end, &set))) return NULL;
        __attribute__((fallthrough));
    case SW_AVRO_STEP_SKIP_LEN:
        if (!set) return p;
        if (!(p = fast_long(p, end, &v)) || v < 0 || v > end - p) return NULL;
        return p + v;
    default: return NULL;
    }
}

/* A body of @p plan's writer schema (rd at its first byte) in one forward
 * pass, by the plan's compiled steps: each writer field read straight into
 * its reader field, skipped, or (after the pass) converted; then the
 * reader fields the writer lacks from their defaults. @returns false when
 * the body is malformed (no message: the caller decodes it again the
 * careful way).
 * The steps of the common shapes (nullable longs and strings) are read
 * inline, with where each value goes as data (k_dst), so a step costs a
 * jump through one switch instead of a call (the call per field through a
 * table of per-field functions was ~300 of the ~615 instructions per
 * event that v3 paid above the fixed path). One switch in a loop: its few
 * targets repeat in a pattern the branch predictor learns (v3 ran faster
 * than the fixed path); the same steps unrolled 32 times, each with its
 * own switch, took 9% more instructions, 40 KB more code and ran at 0.82
 * of the fixed path. */
static bool decode_steps(sw_avro_dec_t *dec, const sw_avro_plan_t *plan, rd_t *rd, sw_event_t *ev,
                         slots_t *f)
{
    size_t n = 0, nd = 0;
    const sw_avro_step_t *st = sw_avro_plan_steps(plan, &n);
    pass_t ps;
    ps.plan = plan;
    ps.rd = rd;
    ps.ev = ev;
    ps.f = f;
    ps.cv.n = 0;
    const unsigned char *p = rd->p, *end = rd->end, *q;
    for (size_t k = 0; k < n; k++) {
        if ((q = step_fast(&st[k], p, end, ev, f)) != NULL) {
            p = q;
            continue;
        }
        rd->p = p;
        if (!step_careful(&ps, k, &st[k])) return false;
        p = rd->p;
    }
    if (p != end) return false; /* trailing bytes */
    const sw_avro_default_t *ds = sw_avro_plan_defaults(plan, &nd);
    for (size_t j = 0; j < nd; j++) {
        rd->p = ds[j].span.p;
        rd->end = ds[j].span.end;
        if (!k_slot_fn[ds[j].slot](rd, ev, f)) return false;
    }
    conv_t *cv = &ps.cv;
    if (!cv->n) return true;
    /* Converted into the scratch buffer, which may move while it grows:
     * offsets first, decoded when every conversion is done. */
    size_t ofs[EVENT_FIELDS];
    sw_buf_t *scratch = &dec->resolved;
    scratch->len = 0;
    for (size_t j = 0; j < cv->n; j++) {
        ofs[j] = scratch->len;
        if (!sw_avro_plan_convert(plan, (size_t)cv->slot[j], cv->at[j], cv->end[j], scratch))
            return false;
    }
    const unsigned char *sb = (const unsigned char *)(scratch->data ? scratch->data : "");
    for (size_t j = 0; j < cv->n; j++) {
        rd->p = sb + ofs[j];
        rd->end = sb + scratch->len;
        if (!k_slot_fn[cv->slot[j]](rd, ev, f)) return false;
    }
    return true;
}

sw_err_t sw_avro_decode_event_plan(sw_avro_dec_t *dec, const sw_avro_plan_t *plan, const void *data,
                                   size_t len, sw_event_t *ev, char *errstr, size_t errstr_size)
{
    if (sw_avro_plan_identity(plan))
        return sw_avro_decode_event(dec, data, len, sw_avro_plan_id(plan), ev, errstr, errstr_size);
    event_clear(ev);
    if (sw_avro_plan_nfields(plan) == EVENT_FIELDS) {
        rd_t rd;
        rd_init(&rd, data, len, errstr, errstr_size);
        if (!rd_header(&rd, sw_avro_plan_id(plan))) return rd.err;
        slots_t f = {.typed = false};
        if (decode_steps(dec, plan, &rd, ev, &f)) {
            sw_err_t err = decode_finish(dec, ev, &f, errstr, errstr_size);
            if (err && err != SW_ERR_INVALID_ARG) plan_errstr(plan, errstr, errstr_size);
            return err;
        }
        /* Malformed: again the careful way, whose message names the
         * field and the byte. One pass over the writer's fields finds
         * where each reader field lies; each is decoded there. */
        event_clear(ev);
        sw_avro_span_t spans[EVENT_FIELDS];
        rd_init(&rd, data, len, errstr, errstr_size);
        rd.p += SW_AVRO_HEADER_LEN;
        sw_err_t err = sw_avro_plan_fields(plan, rd.p, rd_left(&rd), spans, &dec->resolved, errstr,
                                           errstr_size);
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
