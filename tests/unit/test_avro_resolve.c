/*
 * Avro schema resolution (src/codec/sw_avro_resolve.c): the project's own
 * schema resolves to the identity; an older writer schema (fewer fields,
 * ints, non-union strings) and a newer one (an extra field, reordered
 * fields) decode to the same sw_event_t as today's schema; a schema that
 * cannot be resolved, a union branch the reader cannot take and a
 * truncated body fail with messages naming the id and the field. Bodies are
 * written by hand here, byte by byte, from the Avro specification.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_avro_resolve.h"
#include "sw_codec_avro.h"
#include "sw_schemas.h"
#include "sw_testlib.h"

static void put_long(sw_buf_t *b, int64_t v)
{
    uint64_t u = ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
    while (u >= 0x80) {
        sw_buf_putc(b, (char)(u | 0x80));
        u >>= 7;
    }
    sw_buf_putc(b, (char)u);
}

static void put_str(sw_buf_t *b, const char *s)
{
    put_long(b, (int64_t)strlen(s));
    sw_buf_puts(b, s);
}

static void put_header(sw_buf_t *b, int32_t id)
{
    char h[5] = {0, (char)(id >> 24), (char)(id >> 16), (char)(id >> 8), (char)id};
    sw_buf_put(b, h, 5);
}

/* v1: what an older producer registered: no optional carried fields,
 * ints, host and device_used_bytes not nullable. */
static const char k_v1[] =
    "{\"type\":\"record\",\"name\":\"TelemetryEvent\",\"namespace\":\"io.stormwatch\",\"fields\":["
    "{\"name\":\"timestamp_ns\",\"type\":\"long\"},"
    "{\"name\":\"event_type\",\"type\":\"string\"},"
    "{\"name\":\"pid\",\"type\":\"int\"},"
    "{\"name\":\"host\",\"type\":\"string\"},"
    "{\"name\":\"device_used_bytes\",\"type\":\"long\"},"
    "{\"name\":\"job_id\",\"type\":[\"null\",\"string\"],\"default\":null},"
    "{\"name\":\"rank\",\"type\":\"int\"},"
    "{\"name\":\"world_size\",\"type\":\"int\"}]}";

/* v3: a newer producer: an extra field first, fields reordered. */
static const char k_v3[] =
    "{\"type\":\"record\",\"name\":\"TelemetryEvent\",\"namespace\":\"io.stormwatch\",\"fields\":["
    "{\"name\":\"gpu_model\",\"type\":[\"null\",\"string\"],\"default\":null},"
    "{\"name\":\"job_id\",\"type\":[\"null\",\"string\"],\"default\":null},"
    "{\"name\":\"rank\",\"type\":[\"null\",\"long\"],\"default\":null},"
    "{\"name\":\"world_size\",\"type\":[\"null\",\"long\"],\"default\":null},"
    "{\"name\":\"event_type\",\"type\":\"string\"},"
    "{\"name\":\"timestamp_ns\",\"type\":\"long\"},"
    "{\"name\":\"tags\",\"type\":{\"type\":\"map\",\"values\":\"double\"},\"default\":{}},"
    "{\"name\":\"host\",\"type\":[\"null\",\"string\"],\"default\":null},"
    "{\"name\":\"device_used_bytes\",\"type\":[\"null\",\"long\"],\"default\":null},"
    "{\"name\":\"pid\",\"type\":[\"null\",\"long\"],\"default\":null}]}";

/* The same event in today's schema (via our encoder), v1 and v3. */
static void make_event(sw_event_t *ev)
{
    memset(ev, 0, sizeof(*ev));
    ev->timestamp_ns = 1700000000123456789LL;
    ev->event_type = sw_str("sample");
    ev->kind = sw_event_kind(ev->event_type);
    ev->pid = 4242;
    ev->host = sw_str("node-7");
    ev->has_device_used = true;
    ev->device_used_bytes = 123456789012LL;
    ev->has_job_id = true;
    ev->job_id = sw_str("job-a");
    ev->rank = 3;
    ev->world_size = 8;
    ev->metadata_json = sw_str("{}");
}

static void make_v1(sw_buf_t *b, int32_t id)
{
    put_header(b, id);
    put_long(b, 1700000000123456789LL);
    put_str(b, "sample");
    put_long(b, 4242);
    put_str(b, "node-7");
    put_long(b, 123456789012LL);
    put_long(b, 1);
    put_str(b, "job-a");
    put_long(b, 3);
    put_long(b, 8);
}

static void make_v3(sw_buf_t *b, int32_t id)
{
    put_header(b, id);
    put_long(b, 1);
    put_str(b, "H100");
    put_long(b, 1);
    put_str(b, "job-a");
    put_long(b, 1);
    put_long(b, 3);
    put_long(b, 1);
    put_long(b, 8);
    put_str(b, "sample");
    put_long(b, 1700000000123456789LL);
    put_long(b, -2); /* a map block of 2 entries with its byte size */
    put_long(b, 2 * (1 + 3 + 8));
    put_str(b, "abc");
    sw_buf_put(b, "\0\0\0\0\0\0\xf0\x3f", 8);
    put_str(b, "xyz");
    sw_buf_put(b, "\0\0\0\0\0\0\0\x40", 8);
    put_long(b, 0);
    put_long(b, 1);
    put_str(b, "node-7");
    put_long(b, 1);
    put_long(b, 123456789012LL);
    put_long(b, 1);
    put_long(b, 4242);
}

static void check_same(const char *what, const sw_event_t *got, const sw_event_t *want)
{
    char why[256];
    SW_ASSERT(sw_test_event_eq(got, want, why, sizeof(why)), "%s: %s", what, why);
    SW_ASSERT_I64(got->pid, want->pid);
    SW_ASSERT_I64(got->device_used_bytes, want->device_used_bytes);
    SW_ASSERT(got->collector.set == false && got->context.set == false, "%s: carried fields", what);
}

static void test_identity(void **state)
{
    sw_avro_dec_t *dec = *state;
    char err[512] = "";
    sw_avro_plan_t *plan = sw_avro_plan_new(
        sw_schema_telemetry_event, sw_schema_telemetry_event_len, sw_schema_telemetry_event,
        sw_schema_telemetry_event_len, 7, err, sizeof(err));
    SW_ASSERT(plan, "%s", err);
    SW_ASSERT(sw_avro_plan_identity(plan), "own schema is not the identity");
    sw_event_t ev, back;
    make_event(&ev);
    sw_buf_t msg;
    sw_buf_init(&msg);
    SW_ASSERT(sw_avro_encode_event(&ev, 7, &msg, err, sizeof(err)) == SW_OK, "%s", err);
    SW_ASSERT(sw_avro_decode_event_plan(dec, plan, msg.data, msg.len, &back, err, sizeof(err)) ==
                  SW_OK,
              "%s", err);
    check_same("identity", &back, &ev);
    /* The header must carry the plan's id. */
    msg.data[4] = 8;
    SW_ASSERT(sw_avro_decode_event_plan(dec, plan, msg.data, msg.len, &back, err, sizeof(err)) ==
                  SW_ERR_AVRO,
              "wrong id accepted");
    SW_ASSERT_CONTAINS(err, "schema id 8");
    sw_buf_clear(&msg);
    sw_avro_plan_destroy(plan);
}

static void test_versions(void **state)
{
    sw_avro_dec_t *dec = *state;
    const struct {
        const char *name, *schema;
        void (*make)(sw_buf_t *, int32_t);
        int32_t id;
    } v[] = {{"v1", k_v1, make_v1, 11}, {"v3", k_v3, make_v3, 13}};
    sw_event_t want, got;
    make_event(&want);
    for (size_t i = 0; i < 2; i++) {
        char err[512] = "";
        sw_avro_plan_t *plan = sw_avro_plan_new(
            v[i].schema, strlen(v[i].schema), sw_schema_telemetry_event,
            sw_schema_telemetry_event_len, v[i].id, err, sizeof(err));
        SW_ASSERT(plan, "%s: %s", v[i].name, err);
        SW_ASSERT(!sw_avro_plan_identity(plan), "%s: identity", v[i].name);
        sw_buf_t msg;
        sw_buf_init(&msg);
        v[i].make(&msg, v[i].id);
        sw_err_t rc = sw_avro_decode_event_plan(dec, plan, msg.data, msg.len, &got, err,
                                                sizeof(err));
        SW_ASSERT(rc == SW_OK, "%s: %s", v[i].name, err);
        check_same(v[i].name, &got, &want);
        /* Every truncation fails cleanly, naming the id. */
        for (size_t n = 5; n < msg.len; n++) {
            rc = sw_avro_decode_event_plan(dec, plan, msg.data, n, &got, err, sizeof(err));
            SW_ASSERT(rc == SW_ERR_TRUNCATED || rc == SW_ERR_AVRO, "%s cut at %zu: rc %d",
                      v[i].name, n, rc);
            char want_id[40];
            snprintf(want_id, sizeof(want_id), "writer schema id %d", (int)v[i].id);
            SW_ASSERT_CONTAINS(err, want_id);
        }
        sw_buf_clear(&msg);
        sw_avro_plan_destroy(plan);
    }
}

static void test_unresolvable(void **state)
{
    (void)state;
    const struct {
        const char *schema, *want;
    } c[] = {
        /* timestamp_ns is required by the reader and has no default */
        {"{\"type\":\"record\",\"name\":\"TelemetryEvent\",\"fields\":["
         "{\"name\":\"event_type\",\"type\":\"string\"}]}",
         "writer schema id 9: reader field \"timestamp_ns\" is not in the writer schema and has "
         "no default"},
        {"{\"type\":\"record\",\"name\":\"TelemetryEvent\",\"fields\":["
         "{\"name\":\"timestamp_ns\",\"type\":\"long\"},{\"name\":\"event_type\",\"type\":\"string\"},"
         "{\"name\":\"rank\",\"type\":\"string\"}]}",
         "writer schema id 9: field \"rank\": writer type \"string\" cannot be read as reader type "
         "[\"null\", \"long\"]"},
        {"{\"type\":\"record\",\"name\":\"Other\",\"fields\":[]}",
         "writer schema id 9: record name \"Other\" is not the reader's \"TelemetryEvent\""},
        {"{\"type\":\"record\",\"name\":\"TelemetryEvent\",\"fields\":[{\"name\":\"x\",\"type\":\"Nope\"}]}",
         "writer schema id 9: field \"x\": unknown type \"Nope\""},
        {"{\"type\":", "writer schema id 9: not valid JSON"},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        char err[512] = "";
        sw_avro_plan_t *plan = sw_avro_plan_new(c[i].schema, strlen(c[i].schema),
                                                sw_schema_telemetry_event,
                                                sw_schema_telemetry_event_len, 9, err, sizeof(err));
        SW_ASSERT(!plan, "case %zu resolved", i);
        SW_ASSERT_CONTAINS(err, c[i].want);
    }
}

/* A writer union branch without a reader counterpart fails only when written. */
static void test_lazy_branch(void **state)
{
    sw_avro_dec_t *dec = *state;
    static const char schema[] =
        "{\"type\":\"record\",\"name\":\"TelemetryEvent\",\"fields\":["
        "{\"name\":\"timestamp_ns\",\"type\":\"long\"},{\"name\":\"event_type\",\"type\":\"string\"},"
        "{\"name\":\"rank\",\"type\":[\"null\",\"int\",\"boolean\"]}]}";
    char err[512] = "";
    sw_avro_plan_t *plan = sw_avro_plan_new(schema, strlen(schema), sw_schema_telemetry_event,
                                            sw_schema_telemetry_event_len, 21, err, sizeof(err));
    SW_ASSERT(plan, "%s", err);
    sw_buf_t msg;
    sw_buf_init(&msg);
    sw_event_t ev;
    for (int branch = 1; branch <= 2; branch++) {
        msg.len = 0;
        put_header(&msg, 21);
        put_long(&msg, 5);
        put_str(&msg, "sample");
        put_long(&msg, branch);
        if (branch == 1) put_long(&msg, 0);
        else sw_buf_putc(&msg, 1);
        sw_err_t rc = sw_avro_decode_event_plan(dec, plan, msg.data, msg.len, &ev, err,
                                                sizeof(err));
        if (branch == 1) {
            /* device_used_bytes is absent: a sample without it breaks SPEC 2, not Avro */
            SW_ASSERT(rc == SW_OK || rc == SW_ERR_INVALID_ARG, "%s", err);
        } else {
            SW_ASSERT(rc == SW_ERR_AVRO, "boolean branch accepted");
            SW_ASSERT_CONTAINS(err, "writer schema id 21");
            SW_ASSERT_CONTAINS(err, "field \"rank\": writer union branch 2 (\"boolean\")");
        }
    }
    sw_buf_clear(&msg);
    sw_avro_plan_destroy(plan);
}

/* The alert schema resolves to the identity against itself. */
static void test_alert_identity(void **state)
{
    (void)state;
    char err[512] = "";
    sw_avro_plan_t *plan = sw_avro_plan_new(
        sw_schema_first_cause_alert, sw_schema_first_cause_alert_len, sw_schema_first_cause_alert,
        sw_schema_first_cause_alert_len, 3, err, sizeof(err));
    SW_ASSERT(plan, "%s", err);
    SW_ASSERT(sw_avro_plan_identity(plan), "alert schema is not the identity");
    sw_avro_plan_destroy(plan);
}

/* ---- differential: random writer schemas against the reader's layout ---- */

/* The reader's fields (schemas/telemetry_event.avsc) by kind. */
enum { RK_LONG, RK_STR, RK_OPT_LONG, RK_OPT_STR, RK_PHASE };
static const struct {
    const char *name;
    int kind;
} k_rf[24] = {
    {"schema_version", RK_OPT_LONG},
    {"timestamp_ns", RK_LONG},
    {"event_type", RK_STR},
    {"collector", RK_OPT_STR},
    {"sampling_interval_ms", RK_OPT_LONG},
    {"pid", RK_OPT_LONG},
    {"host", RK_OPT_STR},
    {"device_id", RK_OPT_LONG},
    {"allocator_allocated_bytes", RK_OPT_LONG},
    {"allocator_reserved_bytes", RK_OPT_LONG},
    {"allocator_active_bytes", RK_OPT_LONG},
    {"allocator_inactive_bytes", RK_OPT_LONG},
    {"allocator_change_bytes", RK_OPT_LONG},
    {"device_used_bytes", RK_OPT_LONG},
    {"device_free_bytes", RK_OPT_LONG},
    {"device_total_bytes", RK_OPT_LONG},
    {"context", RK_OPT_STR},
    {"metadata", RK_OPT_STR},
    {"job_id", RK_OPT_STR},
    {"rank", RK_OPT_LONG},
    {"local_rank", RK_OPT_LONG},
    {"world_size", RK_OPT_LONG},
    {"session_id", RK_OPT_STR},
    {"phase_scope", RK_PHASE},
};

static const char k_phase_type[] =
    "[\"null\",{\"type\":\"record\",\"name\":\"PhaseScope\",\"fields\":["
    "{\"name\":\"action\",\"type\":\"string\"},{\"name\":\"name\",\"type\":\"string\"},"
    "{\"name\":\"path\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"
    "{\"name\":\"depth\",\"type\":[\"null\",\"long\"],\"default\":null},"
    "{\"name\":\"scope_id\",\"type\":\"string\"},"
    "{\"name\":\"parent_scope_id\",\"type\":[\"null\",\"string\"],\"default\":null},"
    "{\"name\":\"thread_id\",\"type\":\"long\"},{\"name\":\"thread_name\",\"type\":\"string\"},"
    "{\"name\":\"sequence\",\"type\":\"long\"}]}]";

static uint64_t rnd_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int64_t rnd(uint64_t *s, int64_t n)
{
    return (int64_t)(rnd_next(s) % (uint64_t)n);
}

static const char *rnd_str(uint64_t *s)
{
    static const char *k[] = {
        "node-7",        "a", "job-\xc3\xa9t\xc3\xa9", "x-0123456789abcdef-0123456789", "gpu",
        "H100 80GB HBM3"};
    return k[rnd(s, 6)];
}

static int64_t rnd_long(uint64_t *s)
{
    switch (rnd(s, 4)) {
    case 0: return rnd(s, 64);
    case 1: return rnd(s, 1 << 20);
    case 2: return rnd(s, INT64_C(1) << 40);
    default: return 1700000000000000000LL + rnd(s, INT64_C(1) << 40);
    }
}

/* Reader field @p i of one random event, in the reader's layout. */
static void rnd_field(uint64_t *s, size_t i, sw_buf_t *b)
{
    static const char *types[] = {"sample",      "sample",     "sample",
                                  "phase_enter", "phase_exit", "job_start"};
    static const char *metas[] = {"{}", "{\"k\":1}",
                                  "{\"phase_scope\":{\"action\":\"enter\",\"name\":\"fwd\","
                                  "\"scope_id\":\"s1\",\"thread_id\":1,\"thread_name\":\"t\","
                                  "\"sequence\":3,\"path\":[\"fwd\"]}}"};
    bool set = rnd(s, 4) != 0;
    switch (k_rf[i].kind) {
    case RK_LONG: put_long(b, rnd_long(s)); return;
    case RK_STR: put_str(b, types[rnd(s, 6)]); return;
    case RK_OPT_LONG:
        if (i == 13) set = rnd(s, 10) != 0; /* device_used_bytes: mostly there */
        put_long(b, set ? 1 : 0);
        if (!set) return;
        if (i == 19) put_long(b, rnd(s, 4));           /* rank */
        else if (i == 21) put_long(b, 4 + rnd(s, 60)); /* world_size */
        else put_long(b, rnd_long(s));
        return;
    case RK_OPT_STR:
        put_long(b, set ? 1 : 0);
        if (set) put_str(b, i == 17 ? metas[rnd(s, 3)] : rnd_str(s));
        return;
    default: /* phase_scope */
        put_long(b, set ? 1 : 0);
        if (!set) return;
        put_str(b, rnd(s, 2) ? "enter" : "exit");
        put_str(b, "fwd");
        for (int64_t n = rnd(s, 3); n > 0; n = 0) {
            put_long(b, n);
            for (int64_t k = 0; k < n; k++) put_str(b, rnd_str(s));
        }
        put_long(b, 0);
        put_long(b, 0);
        put_str(b, "s1");
        put_long(b, 1);
        put_str(b, "s0");
        put_long(b, rnd_long(s));
        put_str(b, "main");
        put_long(b, rnd_long(s));
        return;
    }
}

/* A writer-only field of a random type: its type and one value. */
static void rnd_extra(uint64_t *s, size_t n, sw_buf_t *schema, sw_buf_t *body)
{
    char head[64];
    snprintf(head, sizeof(head), "{\"name\":\"extra%zu\",\"type\":", n);
    sw_buf_puts(schema, head);
    switch (rnd(s, 8)) {
    case 0:
        sw_buf_puts(schema, "\"string\"}");
        put_str(body, rnd_str(s));
        break;
    case 1:
        sw_buf_puts(schema, "[\"null\",\"string\"]}");
        if (rnd(s, 2)) put_long(body, 0);
        else put_long(body, 1), put_str(body, rnd_str(s));
        break;
    case 2:
        sw_buf_puts(schema, "\"long\"}");
        put_long(body, rnd_long(s));
        break;
    case 3:
        sw_buf_puts(schema, "{\"type\":\"map\",\"values\":\"double\"}}");
        put_long(body, 1);
        put_str(body, "k");
        sw_buf_put(body, "\0\0\0\0\0\0\xf0\x3f", 8);
        put_long(body, 0);
        break;
    case 4:
        sw_buf_puts(schema, "{\"type\":\"array\",\"items\":\"int\"}}");
        put_long(body, -2); /* a block with its byte size */
        put_long(body, 2);
        put_long(body, 5);
        put_long(body, -7);
        put_long(body, 0);
        break;
    case 5:
        sw_buf_puts(schema, "\"boolean\"}");
        sw_buf_putc(body, 1);
        break;
    case 6:
        sw_buf_puts(schema, "\"float\"}");
        sw_buf_put(body, "\0\0\x80\x3f", 4);
        break;
    default:
        sw_buf_puts(schema, "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\"]}}");
        put_long(body, 1);
        break;
    }
}

/* Field @p i (reader bytes @p c, @p n of them) written with a random
 * writer type that resolves to the reader's: the type into @p schema,
 * the value into @p body. */
static void rnd_writer_field(uint64_t *s, size_t i, const unsigned char *c, size_t n,
                             sw_buf_t *schema, sw_buf_t *body)
{
    char head[80];
    snprintf(head, sizeof(head), "{\"name\":\"%s\",\"type\":", k_rf[i].name);
    sw_buf_puts(schema, head);
    int kind = k_rf[i].kind;
    bool set = kind == RK_LONG || kind == RK_STR || c[0] == 2;
    /* A value that fits in an int may be written as one. */
    int64_t v = 0;
    bool small = false;
    if (kind == RK_LONG || (kind == RK_OPT_LONG && set)) {
        const unsigned char *p = kind == RK_LONG ? c : c + 1;
        uint64_t u = 0;
        for (int k = 0; k < 10; k++) {
            u |= (uint64_t)(p[k] & 0x7f) << (7 * k);
            if (p[k] < 0x80) break;
        }
        v = (int64_t)((u >> 1) ^ (0 - (u & 1)));
        small = v >= INT32_MIN && v <= INT32_MAX;
    }
    const char *num = small && rnd(s, 2) ? "\"int\"" : "\"long\"";
    const char *txt = rnd(s, 3) ? "\"string\"" : "\"bytes\"";
    switch (kind) {
    case RK_LONG:
    case RK_STR:
        if (rnd(s, 3) == 0) { /* a union the reader takes one branch of */
            snprintf(head, sizeof(head), "[\"null\",%s]}", kind == RK_LONG ? num : txt);
            sw_buf_puts(schema, head);
            put_long(body, 1);
        } else {
            snprintf(head, sizeof(head), "%s}", kind == RK_LONG ? num : txt);
            sw_buf_puts(schema, head);
        }
        sw_buf_put(body, c, n);
        return;
    case RK_OPT_LONG:
    case RK_OPT_STR: {
        const char *t = kind == RK_OPT_LONG ? num : txt;
        int64_t how = rnd(s, set ? 3 : 2);
        if (how == 0) { /* the reader's layout */
            snprintf(head, sizeof(head), "[\"null\",%s],\"default\":null}", t);
            sw_buf_puts(schema, head);
            sw_buf_put(body, c, n);
        } else if (how == 1) { /* the branches the other way round */
            snprintf(head, sizeof(head), "[%s,\"null\"]}", t);
            sw_buf_puts(schema, head);
            put_long(body, set ? 0 : 1);
            sw_buf_put(body, c + 1, n - 1);
        } else { /* not a union: into the reader's union */
            snprintf(head, sizeof(head), "%s}", t);
            sw_buf_puts(schema, head);
            sw_buf_put(body, c + 1, n - 1);
        }
        return;
    }
    default:
        sw_buf_puts(schema, k_phase_type);
        sw_buf_puts(schema, ",\"default\":null}");
        sw_buf_put(body, c, n);
        return;
    }
}

/* Random events through random writer schemas (the reader's fields in a
 * random order, some left out, ints for longs, unions the other way
 * round or none, bytes for strings, writer-only fields of every type)
 * decode to the same event, or fail the same way, as the same values in
 * the reader's layout (the fields left out: their default, null). Each
 * through both resolved paths: the compiled steps
 * (sw_avro_decode_event_plan) and the rewrite into the reader's layout
 * (sw_avro_plan_rewrite, then the fixed-schema decoder). */
static void test_differential(void **state)
{
    sw_avro_dec_t *dec = *state;
    sw_avro_dec_t *dec2 = sw_avro_dec_new();
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    size_t ok = 0, resolved = 0;
    for (int round = 0; round < 3000; round++) {
        sw_buf_t reader, chunk[24], schema, body, msg, rew;
        size_t order[24 + 8];
        sw_buf_init(&reader);
        sw_buf_init(&schema);
        sw_buf_init(&body);
        sw_buf_init(&msg);
        sw_buf_init(&rew);
        /* The event's fields in the reader's layout; some left out. */
        bool absent[24];
        for (size_t i = 0; i < 24; i++) {
            sw_buf_init(&chunk[i]);
            rnd_field(&seed, i, &chunk[i]);
            absent[i] = k_rf[i].kind != RK_LONG && k_rf[i].kind != RK_STR && rnd(&seed, 6) == 0;
            if (absent[i]) sw_buf_putc(&reader, 0);
            else sw_buf_put(&reader, chunk[i].data, chunk[i].len);
        }
        /* The writer's order: a shuffle, writer-only fields among them (>= 24). */
        size_t nw = 0, nextra = (size_t)rnd(&seed, 4);
        for (size_t i = 0; i < 24; i++)
            if (!absent[i]) order[nw++] = i;
        for (size_t e = 0; e < nextra; e++) order[nw++] = 24 + e;
        int mode = (int)rnd(&seed, 3); /* 0: shuffled, 1: reversed, 2: reader's order */
        for (size_t i = 0; mode == 0 && i + 1 < nw; i++) {
            size_t j = i + (size_t)rnd(&seed, (int64_t)(nw - i));
            size_t t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (size_t i = 0; mode == 1 && i < nw / 2; i++) {
            size_t t = order[i];
            order[i] = order[nw - 1 - i];
            order[nw - 1 - i] = t;
        }
        sw_buf_puts(&schema, "{\"type\":\"record\",\"name\":\"TelemetryEvent\",\"fields\":[");
        for (size_t k = 0; k < nw; k++) {
            if (k) sw_buf_putc(&schema, ',');
            if (order[k] >= 24) rnd_extra(&seed, order[k] - 24, &schema, &body);
            else
                rnd_writer_field(&seed, order[k], (const unsigned char *)chunk[order[k]].data,
                                 chunk[order[k]].len, &schema, &body);
        }
        sw_buf_puts(&schema, "]}");
        char err[512] = "", err2[512] = "", err3[512] = "";
        sw_avro_plan_t *plan = sw_avro_plan_new(schema.data, schema.len, sw_schema_telemetry_event,
                                                sw_schema_telemetry_event_len, 40, err,
                                                sizeof(err));
        SW_ASSERT(plan, "round %d: %s\n%.*s", round, err, (int)schema.len, schema.data);
        resolved += !sw_avro_plan_identity(plan);
        put_header(&msg, 40);
        sw_buf_put(&msg, body.data, body.len);
        sw_event_t want, got, got2;
        sw_err_t rc_want = sw_avro_decode_event(dec2, reader.data, reader.len, -1, &want, err,
                                                sizeof(err));
        sw_err_t rc = sw_avro_decode_event_plan(dec, plan, msg.data, msg.len, &got, err2,
                                                sizeof(err2));
        SW_ASSERT(rc == rc_want, "round %d: rc %d, in the reader's layout %d (%s / %s)\n%.*s",
                  round, rc, rc_want, err2, err, (int)schema.len, schema.data);
        sw_err_t rc2 = sw_avro_plan_rewrite(plan, body.data, body.len, &rew, err3, sizeof(err3));
        SW_ASSERT(rc2 == SW_OK, "round %d: rewrite: %s", round, err3);
        rc2 = sw_avro_decode_event(dec2, rew.data, rew.len, -1, &got2, err3, sizeof(err3));
        SW_ASSERT(rc2 == rc_want, "round %d: rewritten rc %d, want %d", round, rc2, rc_want);
        if (rc == SW_OK) {
            char why[256];
            SW_ASSERT(sw_test_event_eq(&got, &want, why, sizeof(why)), "round %d: %s\n%.*s", round,
                      why, (int)schema.len, schema.data);
            SW_ASSERT(sw_test_event_eq(&got2, &want, why, sizeof(why)), "round %d: rewrite: %s",
                      round, why);
            SW_ASSERT_I64(got.counterless, want.counterless);
            ok++;
        } else {
            SW_ASSERT(strcmp(err, err2) == 0 || rc == SW_ERR_INVALID_ARG,
                      "round %d: \"%s\" vs \"%s\"", round, err2, err);
        }
        /* Cut anywhere, the message fails as the careful decoder says. */
        size_t cut = SW_AVRO_HEADER_LEN + (size_t)rnd(&seed, (int64_t)body.len);
        rc = sw_avro_decode_event_plan(dec, plan, msg.data, cut, &got, err2, sizeof(err2));
        SW_ASSERT(rc == SW_ERR_TRUNCATED || rc == SW_ERR_AVRO, "round %d cut at %zu: rc %d", round,
                  cut, rc);
        SW_ASSERT_CONTAINS(err2, "writer schema id 40");
        sw_avro_plan_destroy(plan);
        for (size_t i = 0; i < 24; i++) sw_buf_clear(&chunk[i]);
        sw_buf_clear(&reader);
        sw_buf_clear(&schema);
        sw_buf_clear(&body);
        sw_buf_clear(&msg);
        sw_buf_clear(&rew);
    }
    /* Most rounds are valid events through a plan that is not the identity. */
    SW_ASSERT(ok > 2000 && resolved > 2500, "%zu valid, %zu resolved of 3000", ok, resolved);
    sw_avro_dec_destroy(dec2);
}

static int dec_new(void **state)
{
    *state = sw_avro_dec_new();
    return *state ? 0 : -1;
}

static int dec_destroy(void **state)
{
    sw_avro_dec_destroy(*state);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity),       cmocka_unit_test(test_versions),
        cmocka_unit_test(test_lazy_branch),    cmocka_unit_test(test_unresolvable),
        cmocka_unit_test(test_alert_identity), cmocka_unit_test(test_differential),
    };
    return cmocka_run_group_tests(tests, dec_new, dec_destroy);
}
