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
        cmocka_unit_test(test_alert_identity),
    };
    return cmocka_run_group_tests(tests, dec_new, dec_destroy);
}
