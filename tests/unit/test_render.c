/*
 * How `stormwatch tail` shows a record (src/codec/sw_tail_render.c), without
 * a cluster or a registry (a message view and a plan lookup stand in): JSON kept as one line (whitespace outside strings
 * removed), Confluent Avro telemetry decoded by its schema id to the same
 * JSON as the event decoder writes, an unknown schema id and bytes that are
 * neither JSON nor Avro shown as {"undecodable": true, ...} with the exact
 * bytes in base64 (checked against RFC 4648's vectors), a null value as null;
 * the envelope, kcat -J's line and kcat -f's tokens of one message with
 * headers (a repeated name, a null value) and no timestamp; an Avro value
 * through the plan lookup (an id it knows, one it does not, "ask later").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "sw_codec_avro.h"
#include "sw_codec_telemetry.h"
#include "sw_event_json.h"
#include "sw_schemas.h"
#include "sw_tail_render.h"
#include "sw_testlib.h"

static const char k_line[] =
    "{\"schema_version\": 2, \"event_type\": \"sample\", \"timestamp_ns\": 1763700000100000000, "
    "\"job_id\": \"job-1\", \"rank\": 3, \"world_size\": 8, \"host\": \"node-7\", \"pid\": 42, "
    "\"device_used_bytes\": 1073741824}";

static char *render(sw_render_t *rd, const void *p, size_t n)
{
    sw_buf_t out;
    sw_buf_init(&out);
    sw_render_value(rd, &out, p, n);
    sw_buf_putc(&out, '\0');
    return out.data;
}

static void test_json_one_line(void **state)
{
    (void)state;
    sw_render_t *rd = sw_render_new(1, 2, NULL, NULL);
    const char *pretty = "  {\n  \"a\": [1,\n 2],\r\n \"s\": \"two  words\\\" \\n\"\n}\n";
    char *got = render(rd, pretty, strlen(pretty));
    SW_ASSERT_STREQ(got, "{\"a\":[1,2],\"s\":\"two  words\\\" \\n\"}");
    free(got);
    const char *flat = "{\"a\": 1}";
    got = render(rd, flat, strlen(flat));
    SW_ASSERT_STREQ(got, "{\"a\": 1}"); /* a line as it is */
    free(got);
    got = render(rd, NULL, 0);
    SW_ASSERT_STREQ(got, "null");
    free(got);
    sw_render_destroy(rd);
}

static void test_avro_telemetry(void **state)
{
    (void)state;
    sw_tdec_t *dec = sw_tdec_new();
    sw_event_t ev;
    char err[512];
    SW_ASSERT_I64(sw_tdec_json(dec, k_line, strlen(k_line), &ev, err, sizeof(err)), SW_OK);
    sw_buf_t msg, want;
    sw_buf_init(&msg);
    sw_buf_init(&want);
    SW_ASSERT_I64(sw_avro_encode_event(&ev, 7, &msg, err, sizeof(err)), SW_OK);
    sw_event_json(&want, &ev);
    sw_buf_putc(&want, '\0');
    sw_render_t *rd = sw_render_new(7, 8, NULL, NULL);
    char *got = render(rd, msg.data, msg.len);
    SW_ASSERT_STREQ(got, want.data);
    free(got);
    sw_render_destroy(rd);
    /* The same bytes where 7 is not a known id. */
    rd = sw_render_new(1, 2, NULL, NULL);
    got = render(rd, msg.data, msg.len);
    json_error_t je;
    json_t *v = json_loads(got, 0, &je);
    SW_ASSERT_NOT_NULL(v);
    SW_ASSERT_TRUE(json_is_true(json_object_get(v, "undecodable")));
    SW_ASSERT_NOT_NULL(
        strstr(json_string_value(json_object_get(v, "error")),
               "Avro schema id 7 is neither the telemetry id (1) nor the alert id (2)"));
    json_decref(v);
    free(got);
    sw_render_destroy(rd);
    sw_buf_clear(&msg);
    sw_buf_clear(&want);
    sw_tdec_destroy(dec);
}

static void test_undecodable_base64(void **state)
{
    (void)state;
    /* RFC 4648 section 10: BASE64("foob") = "Zm9vYg==", "fooba" = "Zm9vYmE=",
     * "foobar" = "Zm9vYmFy"; none of them is JSON. */
    static const struct {
        const char *in, *b64;
    } k[] = {{"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
    sw_render_t *rd = sw_render_new(1, 2, NULL, NULL);
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
        char *got = render(rd, k[i].in, strlen(k[i].in));
        json_error_t je;
        json_t *v = json_loads(got, 0, &je);
        SW_ASSERT_NOT_NULL(v);
        SW_ASSERT_TRUE(json_is_true(json_object_get(v, "undecodable")));
        SW_ASSERT_STREQ(json_string_value(json_object_get(v, "value_base64")), k[i].b64);
        SW_ASSERT_NOT_NULL(strstr(json_string_value(json_object_get(v, "error")), "not JSON"));
        json_decref(v);
        free(got);
    }
    /* Invalid UTF-8 and a truncated Avro header: still one JSON value. */
    const unsigned char bad[] = {0x00, 0x00, 0x01};
    char *got = render(rd, bad, sizeof(bad));
    json_error_t je;
    json_t *v = json_loads(got, 0, &je);
    SW_ASSERT_NOT_NULL(v);
    SW_ASSERT_STREQ(json_string_value(json_object_get(v, "value_base64")), "AAAB");
    json_decref(v);
    free(got);
    sw_render_destroy(rd);
}

/* kcat -f formats: the tokens and escapes kcat knows pass, anything else
 * is named with its position. */
static void test_format_check(void **state)
{
    (void)state;
    static const struct {
        const char *fmt, *err;
    } k[] = {
        {"%t %p %o %k %s %T %h %S %K %%\\n\\t\\r\\\\", NULL},
        {"plain", NULL},
        {"", NULL},
        {"%s %x", "unsupported token \"%x\" at position 4"},
        {"abc%", "unsupported token \"%\" at position 4"},
        {"%s\\q", "unsupported escape \"\\q\" at position 3"},
        {"x\\", "unsupported escape \"\\\" at position 2"},
    };
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
        char err[300] = "";
        sw_err_t rc = sw_render_format_check(k[i].fmt, err, sizeof(err));
        if (!k[i].err) {
            SW_ASSERT(rc == SW_OK, "\"%s\": %s", k[i].fmt, err);
        } else {
            SW_ASSERT(rc == SW_ERR_PARSE, "\"%s\" passed", k[i].fmt);
            SW_ASSERT_CONTAINS(err, k[i].err);
        }
    }
}

/* A message as sw_cmd_tail.c would view it. */
static sw_msg_view_t view(const void *payload, size_t len)
{
    static const sw_msg_header_t h[3] = {{"a", "1", 1}, {"n", NULL, 0}, {"a", "2", 1}};
    sw_msg_view_t v = {.topic = "gpu.mem",
                       .partition = 3,
                       .offset = 18233,
                       .tstype = SW_MSG_TS_CREATE,
                       .timestamp_ms = 1763700000100,
                       .broker = 2,
                       .key = "job-1",
                       .key_len = 5,
                       .payload = payload,
                       .len = len,
                       .headers = h,
                       .nheaders = 3};
    return v;
}

static void test_message_view(void **state)
{
    (void)state;
    sw_render_t *rd = sw_render_new(1, 2, NULL, NULL);
    sw_buf_t line;
    sw_buf_init(&line);
    const char *val = "{\"x\": 1}";
    sw_msg_view_t v = view(val, strlen(val));
    sw_render_message(rd, &line, false, &v);
    SW_ASSERT_STREQ(sw_buf_cstr(&line), "{\"x\": 1}\n");
    sw_render_message(rd, &line, true, &v);
    SW_ASSERT_STREQ(sw_buf_cstr(&line),
                    "{\"topic\": \"gpu.mem\", \"partition\": 3, \"offset\": 18233, "
                    "\"timestamp_ms\": 1763700000100, \"key\": \"job-1\", \"headers\": {\"n\": "
                    "null, \"a\": \"2\"}, \"value\": {\"x\": 1}}\n");
    sw_render_kcat_json(rd, &line, &v);
    SW_ASSERT_STREQ(sw_buf_cstr(&line),
                    "{\"topic\": \"gpu.mem\", \"partition\": 3, \"offset\": 18233, \"tstype\": "
                    "\"create\", \"ts\": 1763700000100, \"broker\": 2, \"headers\": [\"a\", "
                    "\"1\", \"n\", null, \"a\", \"2\"], \"key\": \"job-1\", \"payload\": "
                    "\"{\\\"x\\\": 1}\"}\n");
    sw_render_format("%t/%p@%o %k=%s (%K,%S) %T [%h]%%\\n", &line, &v);
    SW_ASSERT_STREQ(sw_buf_cstr(&line),
                    "gpu.mem/3@18233 job-1={\"x\": 1} (5,8) 1763700000100 [a=1,n=,a=2]%\n");
    /* No timestamp, no key, no value, no headers. */
    v.tstype = SW_MSG_TS_NONE;
    v.key = NULL;
    v.payload = NULL;
    v.nheaders = 0;
    sw_render_message(rd, &line, true, &v);
    SW_ASSERT_STREQ(sw_buf_cstr(&line),
                    "{\"topic\": \"gpu.mem\", \"partition\": 3, \"offset\": 18233, "
                    "\"timestamp_ms\": null, \"key\": null, \"headers\": {}, \"value\": null}\n");
    sw_render_format("%T %K %S", &line, &v);
    SW_ASSERT_STREQ(sw_buf_cstr(&line), "-1 -1 -1");
    sw_buf_clear(&line);
    sw_render_destroy(rd);
}

/* The plan lookup: id 7 is the telemetry schema, 9 is "ask later",
 * anything else unknown; every lookup is counted. */
typedef struct plans_s {
    sw_avro_plan_t *telemetry;
    int asked_alert, asked_event;
} plans_t;

static sw_err_t lookup(void *opaque, int32_t id, bool alert, const sw_avro_plan_t **plan, char *why,
                       size_t why_size)
{
    plans_t *ps = opaque;
    if (alert) ps->asked_alert++;
    else ps->asked_event++;
    if (id == 9) {
        snprintf(why, why_size, "schema id 9: the registry is unreachable");
        return SW_ERR_IO;
    }
    if (id == 7 && !alert) {
        *plan = ps->telemetry;
        return SW_OK;
    }
    snprintf(why, why_size, "unknown schema id %ld", (long)id);
    return SW_ERR_NOT_FOUND;
}

static void test_plan_lookup(void **state)
{
    (void)state;
    char err[512];
    plans_t ps = {0};
    ps.telemetry = sw_avro_plan_new(sw_schema_telemetry_event, sw_schema_telemetry_event_len,
                                    sw_schema_telemetry_event, sw_schema_telemetry_event_len, 7,
                                    err, sizeof(err));
    SW_ASSERT(ps.telemetry != NULL, "%s", err);
    sw_tdec_t *dec = sw_tdec_new();
    sw_event_t ev;
    SW_ASSERT_I64(sw_tdec_json(dec, k_line, strlen(k_line), &ev, err, sizeof(err)), SW_OK);
    sw_buf_t msg, want;
    sw_buf_init(&msg);
    sw_buf_init(&want);
    SW_ASSERT_I64(sw_avro_encode_event(&ev, 7, &msg, err, sizeof(err)), SW_OK);
    sw_event_json(&want, &ev);
    sw_buf_putc(&want, '\0');
    sw_render_t *rd = sw_render_new(1, 2, lookup, &ps);
    char *got = render(rd, msg.data, msg.len); /* not the alert: the telemetry plan */
    SW_ASSERT_STREQ(got, want.data);
    free(got);
    SW_ASSERT_I64(ps.asked_alert, 1);
    SW_ASSERT_I64(ps.asked_event, 1);
    msg.data[4] = 9; /* "ask later": the event plan is not asked */
    got = render(rd, msg.data, msg.len);
    SW_ASSERT_CONTAINS(got, "unreachable");
    SW_ASSERT_CONTAINS(got, "\"undecodable\": true");
    free(got);
    SW_ASSERT_I64(ps.asked_alert, 2);
    SW_ASSERT_I64(ps.asked_event, 1);
    msg.data[4] = 5; /* unknown to both */
    got = render(rd, msg.data, msg.len);
    SW_ASSERT_CONTAINS(got, "unknown schema id 5");
    free(got);
    sw_render_destroy(rd);
    sw_avro_plan_destroy(ps.telemetry);
    sw_buf_clear(&msg);
    sw_buf_clear(&want);
    sw_tdec_destroy(dec);
}

/* --text: every action of an alert record on one human line (a crash's
 * revision included), other values as their JSON. */
static void test_text_lines(void **state)
{
    (void)state;
    sw_render_t *rd = sw_render_new(1, 2, NULL, NULL);
    sw_buf_t line;
    sw_buf_init(&line);
    const char *crash =
        "{\"action\": \"crash\", \"job_id\": \"crash-0\", \"crash\": 1, \"revision\": 1, \"event_timestamp_ns\": 1763700234263134005, \"open\": true, \"first_death\": {\"rank\": 30, \"cause\": \"oom\", \"timestamp_ns\": 1763700234263134005, \"aligned_timestamp_ns\": 1763700233585167240, \"host\": \"node-003\", \"device_id\": 6, \"local_rank\": 6, \"pid\": 4030, \"session_id\": \"sess-crash-0-30\", \"oom_reason\": null}, \"deaths\": 3, \"dead_ranks\": [30, 4, 16], \"storm\": null, \"previous_first_death\": {\"rank\": 4, \"aligned_timestamp_ns\": 1763700233994053579}, \"deaths_total\": 3, \"severity\": \"critical\", \"dedup_key\": \"stormwatch/crash-0/crash/1\", \"summary\": \"CRASH job crash-0 crash 1: first death revised: rank 30 on node-003 GPU 6 died 409 ms before rank 4, which was named first (out of memory) at 2025-11-21T04:43:54.263Z; 3 ranks dead\"}";
    sw_msg_view_t v = view(crash, strlen(crash));
    sw_render_text(rd, &line, &v);
    const char *t = sw_buf_cstr(&line);
    const char *want = "crash    CRASH job crash-0 crash 1: first death revised: rank 30 ";
    SW_ASSERT_TRUE(strncmp(t, want, strlen(want)) == 0);
    SW_ASSERT_CONTAINS(t, "died 409 ms before rank 4, which was named first");
    SW_ASSERT_CONTAINS(t, "; 3 ranks dead");
    SW_ASSERT_TRUE(strchr(t, '\n') == t + line.len - 1);
    const char *tel = "{\"timestamp_ns\": 1, \"event_type\": \"sample\"}";
    v = view(tel, strlen(tel));
    sw_render_text(rd, &line, &v);
    SW_ASSERT_STREQ(sw_buf_cstr(&line), "{\"timestamp_ns\": 1, \"event_type\": \"sample\"}\n");
    sw_buf_clear(&line);
    sw_render_destroy(rd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_check),       cmocka_unit_test(test_text_lines),
        cmocka_unit_test(test_json_one_line),      cmocka_unit_test(test_avro_telemetry),
        cmocka_unit_test(test_undecodable_base64), cmocka_unit_test(test_message_view),
        cmocka_unit_test(test_plan_lookup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
