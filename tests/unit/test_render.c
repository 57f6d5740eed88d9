/*
 * How `stormwatch tail` shows a record's value (src/kafka/sw_tail_render.c),
 * without a cluster: JSON kept as one line (whitespace outside strings
 * removed), Confluent Avro telemetry decoded by its schema id to the same
 * JSON as the event decoder writes, an unknown schema id and bytes that are
 * neither JSON nor Avro shown as {"undecodable": true, ...} with the exact
 * bytes in base64 (checked against RFC 4648's vectors), a null value as null.
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_check),
        cmocka_unit_test(test_json_one_line),
        cmocka_unit_test(test_avro_telemetry),
        cmocka_unit_test(test_undecodable_base64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
