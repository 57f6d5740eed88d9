/*
 * The JSON Lines decoder (sw_tdec_json) at its edges and the event
 * classification (sw_event_kind, sw_phase_boundary_ok):
 *  - nesting limits, 1 MB strings, blank lines, event kinds;
 *  - the fast path against the general path (sw_tdec_set_fast): edge cases
 *    of numbers, strings, keys and whitespace, and every prefix and
 *    one-byte mutation of a generated line give the same result (code,
 *    message, event) both ways; plain lines take the fast path and unusual
 *    ones the general path.
 * Every failure prints file:line, the case, the expression and the actual
 * against the expected value; all cases run, then the test fails.
 */
#include "json_render.h"

#define CHECK_I64(got, want)                                                                 \
    SW_CHECK((int64_t)(got) == (int64_t)(want), "got %lld, expected %lld", (long long)(got), \
             (long long)(want))

/* ---- nesting, long strings, many path elements ----------------------------- */

/* {"timestamp_ns": 1, "event_type": "x", "metadata": {"a": [[...]]}}
 * with @p levels levels of nesting in all (the line's object is level 1). */
static char *nested_line(int levels, const char *where)
{
    sw_buf_t b;
    sw_buf_init(&b);
    int inner;
    if (strcmp(where, "metadata") == 0) {
        sw_buf_puts(&b, "{" BASE ", \"metadata\": {\"a\": ");
        inner = levels - 2;
    } else if (strcmp(where, "phase_scope") == 0) {
        sw_buf_puts(&b, "{" BASE ", \"metadata\": {\"phase_scope\": {\"x\": ");
        inner = levels - 3;
    } else if (strcmp(where, "path") == 0) {
        sw_buf_puts(&b, "{" BASE ", \"metadata\": {\"phase_scope\": {\"path\": ");
        inner = levels - 3;
    } else {
        sw_buf_puts(&b, "{" BASE ", \"a\": ");
        inner = levels - 1;
    }
    for (int i = 0; i < inner; i++) sw_buf_putc(&b, '[');
    for (int i = 0; i < inner; i++) sw_buf_putc(&b, ']');
    if (strcmp(where, "top") == 0) sw_buf_puts(&b, "}");
    else if (strcmp(where, "metadata") == 0) sw_buf_puts(&b, "}}");
    else sw_buf_puts(&b, "}}}");
    sw_buf_cstr(&b);
    return b.data;
}

static void test_nesting(void **state)
{
    (void)state;
    sw_check_reset();
    static const struct {
        const char *where;
        int levels;
        bool ok;
    } cases[] = {
        {"top", 2, true},           {"top", 200, true},          {"top", 256, true},
        {"top", 257, false},        {"top", 300, false},         {"top", 5000, false},
        {"metadata", 200, true},    {"metadata", 256, true},     {"metadata", 257, false},
        {"phase_scope", 256, true}, {"phase_scope", 257, false}, {"path", 256, true},
        {"path", 257, false},
    };
    sw_tdec_t *dec = sw_tdec_new();
    char name[96];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(name, sizeof(name), "nesting %d levels in %s", cases[i].levels, cases[i].where);
        sw_check_case("%s", name);
        char *line = nested_line(cases[i].levels, cases[i].where);
        sw_event_t ev;
        char err[256] = "";
        sw_err_t rc = sw_tdec_json(dec, line, strlen(line), &ev, err, sizeof(err));
        if (cases[i].ok) {
            SW_CHECK(rc == SW_OK, "got %d \"%s\", expected SW_OK", (int)rc, err);
        } else {
            SW_CHECK(rc == SW_ERR_PARSE, "got %d \"%s\", expected SW_ERR_PARSE", (int)rc, err);
            SW_CHECK(strstr(err, "nesting deeper than 256 levels") != NULL,
                     "message \"%s\", expected it to mention the nesting limit", err);
        }
        free(line);
    }
    sw_tdec_destroy(dec);
    end_test();
}

static void test_long_strings(void **state)
{
    (void)state;
    sw_check_reset();
    const size_t n = 1u << 20;
    sw_tdec_t *dec = sw_tdec_new();
    sw_buf_t b;
    sw_buf_init(&b);
    sw_event_t ev;
    char err[256] = "";

    /* 1 MiB plain string (fast path), in a carried field: identifiers
     * (event_type, job_id, host, session_id) are bounded, see below. */
    sw_check_case("1 MiB plain string");
    sw_buf_puts(&b, "{" BASE ", \"context\": \"");
    for (size_t i = 0; i < n; i++) sw_buf_putc(&b, (char)('a' + i % 26));
    sw_buf_puts(&b, "\"}");
    sw_err_t rc = sw_tdec_json(dec, b.data, b.len, &ev, err, sizeof(err));
    SW_CHECK(rc == SW_OK, "got %d \"%s\"", (int)rc, err);
    if (rc == SW_OK) {
        CHECK_I64(ev.context.value.len, n);
        SW_CHECK(ev.context.value.ptr[0] == 'a' &&
                     ev.context.value.ptr[n - 1] == (char)('a' + (n - 1) % 26),
                 "first/last bytes %c/%c", ev.context.value.ptr[0], ev.context.value.ptr[n - 1]);
    }

    /* 1 MiB of escapes (slow path, scratch space) then a short line on the
     * same decoder */
    sw_check_case("1 MiB of escapes");
    b.len = 0;
    sw_buf_puts(&b, "{" BASE ", \"collector\": \"");
    for (size_t i = 0; i < n / 2; i++) sw_buf_puts(&b, i % 2 ? "\\n" : "\\u00e9");
    sw_buf_puts(&b, "\", \"host\": \"x\\ty\"}");
    rc = sw_tdec_json(dec, b.data, b.len, &ev, err, sizeof(err));
    SW_CHECK(rc == SW_OK, "got %d \"%s\"", (int)rc, err);
    if (rc == SW_OK) {
        CHECK_I64(ev.collector.value.len, (n / 4) * 2 + (n / 4) * 1);
        SW_CHECK(memcmp(ev.collector.value.ptr, "\xc3\xa9\n\xc3\xa9\n", 6) == 0,
                 "collector starts with %02x", (unsigned char)ev.collector.value.ptr[0]);
        CHECK_BYTES(ev.host, "x\ty", 3);
    }

    /* Identifiers longer than SW_IDENT_MAX bytes make the event invalid,
     * naming the field and its length (a 600 KB job_id would make an
     * unsendable alert). */
    static const char *const ids[] = {"job_id", "host", "session_id", "event_type"};
    for (size_t k = 0; k < 4; k++) {
        for (size_t len = SW_IDENT_MAX; len <= SW_IDENT_MAX + 1; len++) {
            static char nm[80];
            snprintf(nm, sizeof(nm), "%s of %zu bytes", ids[k], len);
            sw_check_case("%s", nm);
            b.len = 0;
            sw_buf_printf(&b, "{\"timestamp_ns\": 1, \"%s\": \"", ids[k]);
            for (size_t i = 0; i < len; i++) sw_buf_putc(&b, 'j');
            if (strcmp(ids[k], "event_type") != 0) sw_buf_puts(&b, "\", \"event_type\": \"x\"}");
            else sw_buf_puts(&b, "\"}");
            rc = sw_tdec_json(dec, b.data, b.len, &ev, err, sizeof(err));
            if (len <= SW_IDENT_MAX) {
                SW_CHECK(rc == SW_OK, "got %d \"%s\"", (int)rc, err);
            } else {
                char want[200];
                snprintf(want, sizeof(want),
                         "field \"%s\" is %zu bytes long, expected at most %d (identifiers are "
                         "bounded so that every alert fits in a Kafka message)",
                         ids[k], len, SW_IDENT_MAX);
                SW_CHECK(rc == SW_ERR_INVALID_ARG && strcmp(err, want) == 0, "got %d \"%s\"",
                         (int)rc, err);
            }
        }
    }
    sw_check_case("short line after long ones");
    const char *shortl = "{\"timestamp_ns\": 7, \"event_type\": \"x\", \"host\": \"\\u0041\"}";
    rc = sw_tdec_json(dec, shortl, strlen(shortl), &ev, err, sizeof(err));
    SW_CHECK(rc == SW_OK, "got %d \"%s\"", (int)rc, err);
    if (rc == SW_OK) CHECK_BYTES(ev.host, "A", 1);

    /* Many path elements: 32 are kept; more than SW_PHASE_PATH_MAX (32)
     * is an implementation limit (SPEC 5 names none): the event stays
     * valid, the boundary is ignored rather than truncated. */
    for (int count = 31; count <= 40; count++) {
        static char nm[64];
        snprintf(nm, sizeof(nm), "phase path of %d elements", count);
        sw_check_case("%s", nm);
        b.len = 0;
        sw_buf_puts(
            &b,
            "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\","
            " \"metadata\": {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [");
        for (int i = 0; i < count; i++) sw_buf_printf(&b, "%s\"p%d\", \"\"", i ? ", " : "", i);
        sw_buf_puts(
            &b,
            "], \"scope_id\": \"x\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}");
        rc = sw_tdec_json(dec, b.data, b.len, &ev, err, sizeof(err));
        SW_CHECK(rc == SW_OK, "got %d \"%s\", expected a valid event", (int)rc, err);
        if (rc != SW_OK) continue;
        if (count <= SW_PHASE_PATH_MAX) {
            SW_CHECK(ev.has_phase && sw_phase_boundary_ok(&ev), "has_phase %d, boundary_ok %d",
                     ev.has_phase, sw_phase_boundary_ok(&ev));
            CHECK_I64(ev.phase.path_len, count);
            char last[8];
            snprintf(last, sizeof(last), "p%d", count - 1);
            CHECK_BYTES(ev.phase.path[count - 1], last, strlen(last));
        } else {
            SW_CHECK(!sw_phase_boundary_ok(&ev), "boundary_ok %d for %d path elements",
                     sw_phase_boundary_ok(&ev), count);
        }
    }
    sw_buf_clear(&b);
    sw_tdec_destroy(dec);
    end_test();
}

/* ---- the fast path's edges ------------------------------------------------- */

/* A line as stormwatch gen writes it (every field, v3 order). */
#define GEN_LINE                                                                                 \
    "{\"schema_version\": 3, \"timestamp_ns\": 1763699999954941461, \"event_type\": \"sample\"," \
    " \"collector\": \"stormlog.cuda_tracker\", \"sampling_interval_ms\": 100, \"pid\": 4901,"   \
    " \"host\": \"node-112\", \"device_id\": 5, \"allocator_allocated_bytes\": 33117223640,"     \
    " \"allocator_reserved_bytes\": 33409538572, \"allocator_active_bytes\": null,"              \
    " \"allocator_inactive_bytes\": null, \"allocator_change_bytes\": 0,"                        \
    " \"device_used_bytes\": 33946409484, \"device_free_bytes\": 51952936436,"                   \
    " \"device_total_bytes\": 85899345920, \"context\": null, \"metadata\": {},"                 \
    " \"job_id\": \"job-0\", \"rank\": 901, \"local_rank\": 5, \"world_size\": 1024,"            \
    " \"session_id\": \"sess-0-901\"}"

#define PHASE_LINE                                                                                  \
    "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"   \
    " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"fwd\", \"path\": [\"train\", \"fwd\"]," \
    " \"scope_id\": \"sc1\", \"parent_scope_id\": null, \"thread_id\": 12, \"thread_name\": \"M\"," \
    " \"sequence\": 3}}, \"rank\": 0}"

/* A TelemetryEvent v4 sample as stormwatch gen writes it: allocator
 * counters null, memory_capabilities in metadata. */
#define V4_LINE                                                                                  \
    "{\"schema_version\": 4, \"timestamp_ns\": 1763700000008809369, \"event_type\": \"sample\"," \
    " \"collector\": \"stormlog.cuda_tracker\", \"sampling_interval_ms\": 100, \"pid\": 4352,"   \
    " \"host\": \"node-044\", \"device_id\": 0, \"allocator_allocated_bytes\": null,"            \
    " \"allocator_reserved_bytes\": null, \"allocator_active_bytes\": null,"                     \
    " \"allocator_inactive_bytes\": null, \"allocator_change_bytes\": null,"                     \
    " \"device_used_bytes\": 30428395690, \"device_free_bytes\": 55470950230,"                   \
    " \"device_total_bytes\": 85899345920, \"context\": null, \"metadata\": " V4_META            \
    ","                                                                                          \
    " \"job_id\": \"job-0\", \"rank\": 352, \"local_rank\": 0, \"world_size\": 1024,"            \
    " \"session_id\": \"sess-0-352\"}"
#define V4_META                                                                               \
    "{\"memory_capabilities\": {\"backend\": \"cuda\", \"telemetry_collector\":"              \
    " \"stormlog.tracker\", \"sampling_source\": \"nvml\", \"supports_allocator_allocated\":" \
    " false, \"supports_allocator_reserved\": false, \"supports_allocator_active\": false,"   \
    " \"supports_allocator_inactive\": false, \"supports_device_used\": true,"                \
    " \"supports_device_free\": true, \"supports_device_total\": true}}"

/* A TelemetryEvent v2 sample: SPEC 2's fields only, metadata last (the
 * runs end in text after the last value read). */
#define V2_LINE                                                                          \
    "{\"timestamp_ns\": 1763699999954941461, \"event_type\": \"sample\", \"rank\": 901," \
    " \"world_size\": 1024, \"job_id\": \"job-0\", \"session_id\": \"sess-0-901\","      \
    " \"pid\": 4901, \"host\": \"node-112\", \"device_used_bytes\": 33946409484,"        \
    " \"sampling_interval_ms\": 100, \"metadata\": {}}"

typedef struct fast_case_s {
    const char *name;
    const char *line;
    int general;      /* 1: the fast path gives this line to the general path */
    const char *want; /* SW_OK: expected fields; else the message; NULL: compare only */
} fast_case_t;

static const fast_case_t k_fast[] = {
    /* plain lines: the fast path decodes them */
    {"generated line", GEN_LINE, 0,
     "{\"timestamp_ns\": 1763699999954941461, \"kind\": \"sample\", \"rank\": 901,"
     " \"world_size\": 1024, \"job_id\": \"job-0\", \"session_id\": \"sess-0-901\","
     " \"pid\": 4901, \"host\": \"node-112\", \"device_used_bytes\": 33946409484,"
     " \"sampling_interval_ms\": 100, \"metadata\": \"{}\", \"schema_version\": 3,"
     " \"allocator_active_bytes\": null, \"allocator_change_bytes\": 0,"
     " \"device_total_bytes\": 85899345920, \"collector\": \"stormlog.cuda_tracker\","
     " \"context\": null}"},
    {"no spaces at all", "{\"timestamp_ns\":1,\"event_type\":\"x\",\"rank\":0}", 0,
     "{\"timestamp_ns\": 1, \"rank\": 0}"},
    {"phase scope through the metadata scanner", PHASE_LINE, 0,
     "{\"boundary_ok\": true, \"phase\": {\"name\": \"fwd\", \"path\": [\"train\", \"fwd\"]}}"},
    {"trailing CR and spaces", "{" BASE ", \"rank\": 0} \r", 0, "{\"rank\": 0}"},
    {"leading whitespace", " \t{" BASE "}", 0, "{\"timestamp_ns\": 1}"},
    /* strings */
    {"escapes in a value", "{" BASE ", \"host\": \"a\\\"b\\\\c\\/d\\n\\u00e9\\ud83d\\ude00\"}", 0,
     "{\"host\": \"a\\\"b\\\\c/d\\n\\u00e9\\ud83d\\ude00\"}"},
    {"escape after 20 plain bytes", "{" BASE ", \"host\": \"abcdefghijklmnopqrst\\tu\"}", 0,
     "{\"host\": \"abcdefghijklmnopqrst\\tu\"}"},
    {"raw UTF-8 in a value", "{" BASE ", \"job_id\": \"j\xc3\xa9\"}", 0,
     "{\"job_id\": \"j\\u00e9\"}"},
    {"invalid UTF-8 in a value", "{" BASE ", \"host\": \"a\xc0\x80\"}", 1,
     "not valid JSON: invalid UTF-8 in string at column 50"},
    {"control character in a value", "{" BASE ", \"host\": \"a\x1f\"}", 1,
     "not valid JSON: control character in string at column 50"},
    {"unterminated value at the end", "{" BASE ", \"host\": \"abc", 1,
     "not valid JSON: unterminated string at column 48"},
    {"16-byte plain value ending at the line's end", "{" BASE ", \"host\": \"0123456789abcdef", 1,
     "not valid JSON: unterminated string at column 48"},
    {"escaped event_type U+017F",
     "{\"timestamp_ns\": 1, \"event_type\": \"\\u017fample\","
     " \"device_used_bytes\": 1}",
     0, "{\"kind\": \"sample\"}"},
    /* keys */
    {"escaped key",
     "{\"timestamp_ns\": 1, \"event_type\": \"x\", \"world_size\": 3, \"r\\u0061nk\": 2}", 1,
     "{\"rank\": 2}"},
    {"unknown keys with scalars",
     "{" BASE ", \"u\": 1, \"v\": \"s\", \"w\": null, \"x\": 1.5e3,"
     " \"y\": true, \"z\": false, \"rank\": 0}",
     0, "{\"rank\": 0}"},
    {"unknown key with an object", "{" BASE ", \"u\": {\"rank\": 5}, \"rank\": 0}", 1,
     "{\"rank\": 0}"},
    {"unknown key with an array", "{" BASE ", \"u\": [1], \"rank\": 0}", 1, "{\"rank\": 0}"},
    {"prefix of a known key", "{" BASE ", \"ran\": 9, \"rank\": 0}", 0, "{\"rank\": 0}"},
    {"known key plus a byte", "{" BASE ", \"rankk\": 9}", 0, "{\"rank\": 0}"},
    {"known key cut at the end", "{" BASE ", \"rank", 1, "not valid JSON: *"},
    {"known key, colon missing", "{" BASE ", \"rank\" 1}", 1,
     "not valid JSON: expected ':' after object key at column 47"},
    {"space before the colon", "{" BASE ", \"rank\" : 1, \"world_size\": 2}", 1, "{\"rank\": 1}"},
    {"non-ASCII key", "{" BASE ", \"r\xc3\xa9\": 1}", 1, "{\"rank\": 0}"},
    /* duplicate keys: the last wins */
    {"duplicate rank", "{" BASE ", \"rank\": -1, \"rank\": 0}", 0, "{\"rank\": 0}"},
    {"duplicate rank, bad last", "{" BASE ", \"rank\": 0, \"rank\": -1}", 0,
     "field \"rank\" is -1, expected an integer >= 0"},
    {"duplicate event_type",
     "{\"timestamp_ns\": 1, \"event_type\": \"x\", \"event_type\": \"sample\","
     " \"device_used_bytes\": 2}",
     0, "{\"kind\": \"sample\"}"},
    {"duplicate metadata: phase, then {}",
     "{\"timestamp_ns\": 1, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"p\"], \"scope_id\": \"a\","
     " \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}, \"metadata\": {}}",
     0, "{\"metadata\": \"{}\", \"phase\": null}"},
    {"duplicate metadata: phase, then null",
     "{\"timestamp_ns\": 1, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"p\"], \"scope_id\": \"a\","
     " \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}, \"metadata\": null}",
     0, "{\"metadata\": \"{}\", \"phase\": null}"},
    {"duplicate metadata: {}, then a phase",
     "{\"timestamp_ns\": 1, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\": {},"
     " \"metadata\": {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"p\"],"
     " \"scope_id\": \"a\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}",
     0, "{\"boundary_ok\": true}"},
    {"metadata { } with a space", "{" BASE ", \"metadata\": { }}", 0, "{\"metadata\": \"{ }\"}"},
    {"metadata, bad inside", "{" BASE ", \"metadata\": {\"a\": 01}}", 1, "not valid JSON: *"},
    {"metadata an array", "{" BASE ", \"metadata\": [1]}", 1,
     "field \"metadata\" is [1], expected an object or null (got an array)"},
    /* numbers */
    {"negative integers",
     "{" BASE ", \"pid\": -42, \"allocator_change_bytes\": -9223372036854775808}", 0,
     "{\"pid\": -42, \"allocator_change_bytes\": -9223372036854775808}"},
    {"-0", "{\"timestamp_ns\": -0, \"event_type\": \"x\"}", 0, "{\"timestamp_ns\": 0}"},
    {"0", "{\"timestamp_ns\": 0, \"event_type\": \"x\"}", 0, "{\"timestamp_ns\": 0}"},
    {"int64 max", "{\"timestamp_ns\": 9223372036854775807, \"event_type\": \"x\"}", 0,
     "{\"timestamp_ns\": 9223372036854775807}"},
    {"2^63", "{\"timestamp_ns\": 9223372036854775808, \"event_type\": \"x\"}", 0,
     "field \"timestamp_ns\" is 9223372036854775808, expected an integer >= 0 (the value does not "
     "fit in 64 bits)"},
    {"-2^63 - 1", "{" BASE ", \"pid\": -9223372036854775809}", 0,
     "field \"pid\" is -9223372036854775809, expected an integer (the value does not fit in 64 "
     "bits)"},
    {"2^64", "{\"timestamp_ns\": 18446744073709551616, \"event_type\": \"x\"}", 0,
     "field \"timestamp_ns\" is 18446744073709551616, expected an integer >= 0 (the value does "
     "not fit in 64 bits)"},
    {"19 nines", "{\"timestamp_ns\": 9999999999999999999, \"event_type\": \"x\"}", 0,
     "field \"timestamp_ns\" is 9999999999999999999, expected an integer >= 0 (the value does "
     "not fit in 64 bits)"},
    {"30 digits", "{\"timestamp_ns\": 100000000000000000000000000000, \"event_type\": \"x\"}", 0,
     "field \"timestamp_ns\" is 100000000000000000000000000000, expected an integer >= 0 (the "
     "value does not fit in 64 bits)"},
    {"big carried value", "{" BASE ", \"device_total_bytes\": 99999999999999999999}", 0,
     "{\"device_total_bytes\": null}"},
    {"exponent", "{" BASE ", \"rank\": 1e0}", 0, "field \"rank\" is 1e0, expected an integer >= 0"},
    {"exponent with sign", "{" BASE ", \"world_size\": 1E+2}", 0,
     "field \"world_size\" is 1E+2, expected an integer >= 1"},
    {"fraction and exponent", "{" BASE ", \"pid\": -1.5e-3}", 0,
     "field \"pid\" is -1.5e-3, expected an integer"},
    {"0e0 and 0.0", "{" BASE ", \"device_id\": 0e0, \"local_rank\": 0.0}", 0,
     "{\"device_id\": null, \"local_rank\": null}"},
    {"1. is not JSON", "{" BASE ", \"rank\": 1.}", 1,
     "not valid JSON: invalid number at column 48"},
    {"1e is not JSON", "{" BASE ", \"rank\": 1e}", 1,
     "not valid JSON: invalid number at column 48"},
    {"1e+ is not JSON", "{" BASE ", \"rank\": 1e+}", 1,
     "not valid JSON: invalid number at column 48"},
    {"- alone", "{" BASE ", \"rank\": -}", 1, "not valid JSON: invalid number at column 48"},
    {"leading zero", "{" BASE ", \"rank\": 01}", 1,
     "not valid JSON: expected ',' or '}' in object at column 49"},
    {"negative leading zero", "{" BASE ", \"rank\": -01}", 1,
     "not valid JSON: expected ',' or '}' in object at column 50"},
    {"NaN", "{" BASE ", \"rank\": NaN}", 1, "field \"rank\" is NaN, expected an integer >= 0"},
    {"-Infinity", "{" BASE ", \"pid\": -Infinity}", 1,
     "field \"pid\" is -Infinity, expected an integer"},
    {"number at the very end", "{" BASE ", \"rank\": 12", 1, "not valid JSON: *"},
    /* literals */
    {"true where an integer goes", "{" BASE ", \"rank\": true}", 0,
     "field \"rank\" is true, expected an integer >= 0"},
    {"false as event_type", "{\"timestamp_ns\": 1, \"event_type\": false}", 0,
     "field \"event_type\" is false, expected a non-empty string"},
    {"null job_id", "{" BASE ", \"job_id\": null}", 0, "{\"job_id\": null}"},
    {"nul", "{" BASE ", \"job_id\": nul}", 1, "not valid JSON: invalid literal at column 50"},
    {"null cut at the end", "{" BASE ", \"job_id\": nu", 1,
     "not valid JSON: invalid literal at column 50"},
    /* structure and whitespace */
    {"empty object", "{}", 1, "field \"timestamp_ns\" is missing, expected an integer >= 0"},
    {"two spaces after a comma", "{" BASE ",  \"rank\": 0}", 1, "{\"rank\": 0}"},
    {"tab after a colon", "{" BASE ", \"rank\":\t0}", 1, "{\"rank\": 0}"},
    {"space before a comma", "{" BASE " , \"rank\": 0}", 1, "{\"rank\": 0}"},
    {"newline inside", "{" BASE ",\n\"rank\": 0}", 1, "{\"rank\": 0}"},
    {"trailing comma", "{" BASE ",}", 1, "not valid JSON: expected a string at column 39"},
    {"data after the object", "{" BASE "} x", 1,
     "not valid JSON: unexpected data after the object at column 40"},
    {"two objects", "{" BASE "}{}", 1,
     "not valid JSON: unexpected data after the object at column 39"},
    {"no closing brace", "{" BASE, 1, "not valid JSON: *"},
    {"not an object", "[1]", 1, "not a JSON object: the line is an array"},
};

/* Every prefix of @p line, and @p line with each byte replaced by each of
 * a few significant bytes, decode the same both ways. */
static void mutate_line(sw_tdec_t *fast, sw_tdec_t *slow, const char *line)
{
    static const char k_subst[] = " \t\"\\-+.0159eE,:{}[]ntfxu\x80\xc3\x01";
    size_t len = strlen(line);
    char *buf = malloc(len ? len : 1); /* exactly the line: ASan sees reads past it */
    char name[96];
    for (size_t n = 0; n <= len; n++) {
        snprintf(name, sizeof(name), "prefix of %zu bytes", n);
        sw_check_case("%s", name);
        /* A heap copy of exactly n bytes: ASan sees any read past the end. */
        char *cut = malloc(n ? n : 1);
        memcpy(cut, line, n);
        (void)check_same(__FILE__, __LINE__, fast, slow, cut, n);
        free(cut);
    }
    for (size_t i = 0; i < len; i++) {
        for (size_t k = 0; k < sizeof(k_subst) - 1; k++) {
            memcpy(buf, line, len);
            buf[i] = k_subst[k];
            snprintf(name, sizeof(name), "byte %zu replaced by 0x%02x", i,
                     (unsigned char)k_subst[k]);
            sw_check_case("%s", name);
            /* Decoded after the real line: its template is tried first. */
            (void)check_same(__FILE__, __LINE__, fast, slow, buf, len);
        }
        /* and the byte deleted */
        memcpy(buf, line, i);
        memcpy(buf + i, line + i + 1, len - i - 1);
        snprintf(name, sizeof(name), "byte %zu deleted", i);
        sw_check_case("%s", name);
        (void)check_same(__FILE__, __LINE__, fast, slow, buf, len - 1);
        /* keep the fast decoder's key prediction trained on the real line */
        (void)check_same(__FILE__, __LINE__, fast, slow, line, len);
    }
    free(buf);
}

/* The template paths: every value of a generated line replaced by each of
 * many values (numbers of every length and kind, strings, literals,
 * containers, malformed tokens), each decoded right after the line itself
 * (so the template is the line's, with every value predicted), then twice
 * more (the value no longer predicted, read by the runs), from a heap copy
 * of exactly its size (ASan sees any read past either end), the same both
 * ways. */
static void template_values(sw_tdec_t *fast, sw_tdec_t *slow, const char *line)
{
    static const char *const k_vals[] = {
        "0",
        "-0",
        "7",
        "-7",
        "10",
        "100",
        "1234567",
        "12345678",
        "123456789",
        "123456789012345",
        "1234567890123456",
        "12345678901234567",
        "123456789012345678",
        "1234567890123456789",
        "9223372036854775807",
        "9223372036854775808",
        "9999999999999999999",
        "12345678901234567890",
        "123456789012345678901234",
        "-9223372036854775808",
        "-9223372036854775809",
        "1.5",
        "12345678901.25",
        "1e3",
        "1E+2",
        "12345678901e2",
        "1234567890123456.5",
        "1234567890123456789.5",
        "01",
        "-01",
        "1.",
        "1e",
        "-",
        "null",
        "nul",
        "true",
        "false",
        "\"x\"",
        "\"\"",
        "\"a\\\"b\"",
        "\"\\u00e9\"",
        "\"\xc3\xa9\"",
        "\"\x01\"",
        "\"0123456789012345678901234567890123456789\"",
        "{}",
        "{ }",
        "{\"a\": 1}",
        "[1]",
        "[]",
        "NaN",
        "Infinity",
        "-Infinity",
        "\"unterminated",
        "1 ",
        " 1",
        "1,",
        "2}",
    };
    size_t len = strlen(line);
    char name[160];
    size_t variants = 0;
    /* Each value: after ": " up to the next ", \"" or the final '}'. */
    for (const char *v = strstr(line, ": "); v; v = strstr(v + 1, ": ")) {
        const char *vs = v + 2;
        const char *ve = strstr(vs, ", \"");
        if (!ve) ve = line + len - 1;
        if (*vs == '{' && ve - vs > 2) continue; /* a metadata object with members */
        for (size_t k = 0; k < sizeof(k_vals) / sizeof(k_vals[0]); k++) {
            size_t vl = strlen(k_vals[k]);
            size_t n = (size_t)(vs - line) + vl + (size_t)(line + len - ve);
            char *buf = malloc(n);
            memcpy(buf, line, (size_t)(vs - line));
            memcpy(buf + (vs - line), k_vals[k], vl);
            memcpy(buf + (vs - line) + vl, ve, (size_t)(line + len - ve));
            snprintf(name, sizeof(name), "value at byte %zu replaced by %s", (size_t)(vs - line),
                     k_vals[k]);
            sw_check_case("%s", name);
            /* The line twice: the second time by its own template. */
            (void)check_same(__FILE__, __LINE__, fast, slow, line, len);
            uint64_t t0 = sw_tdec_tmpl_lines(fast);
            (void)check_same(__FILE__, __LINE__, fast, slow, line, len);
            SW_CHECK(sw_tdec_tmpl_lines(fast) == t0 + 1, "the line again: %llu template lines",
                     (unsigned long long)(sw_tdec_tmpl_lines(fast) - t0));
            (void)check_same(__FILE__, __LINE__, fast, slow, buf, n);
            /* Twice more: the template now reads that value (or gave the
             * line up); then the line again with the value read. */
            (void)check_same(__FILE__, __LINE__, fast, slow, buf, n);
            (void)check_same(__FILE__, __LINE__, fast, slow, buf, n);
            (void)check_same(__FILE__, __LINE__, fast, slow, line, len);
            free(buf);
            variants++;
        }
    }
    SW_CHECK(variants > 50, "%zu variants", variants);
}

/* The metadata object a decoder saw before is compared, not scanned: a
 * v4 line, then its metadata replaced (a phase scope, one that is not
 * typed, a changed byte, a shorter or longer object, one cut short, an
 * escape), each between lines with the object seen before, from heap
 * copies of exactly their size; the same both ways. */
static void metadata_memo(sw_tdec_t *fast, sw_tdec_t *slow)
{
    static const char *const k_meta[] = {
        V4_META,
        "{\"phase_scope\": {\"action\": \"enter\", \"name\": \"fwd\", \"path\": [\"train\","
        " \"fwd\"], \"scope_id\": \"sc1\", \"parent_scope_id\": null, \"thread_id\": 12,"
        " \"thread_name\": \"M\", \"sequence\": 3}}",
        "{\"phase_scope\": {\"action\": \"enter\", \"name\": \"fwd\", \"path\": [\"train\"]}}",
        "{\"phase_scope\": {\"action\": \"leave\", \"name\": \"fwd\", \"path\": [\"train\"],"
        " \"scope_id\": \"sc1\", \"thread_id\": 12, \"thread_name\": \"M\", \"sequence\": 3}}",
        "{\"phase_scope\": {\"acti\\u006fn\": \"exit\", \"name\": \"fwd\", \"path\": [\"t\"],"
        " \"scope_id\": \"sc1\", \"thread_id\": 1.5, \"thread_name\": \"M\", \"sequence\": 3}}",
        "{\"memory_capabilities\": {\"backend\": \"cuda\"}}",
        "{\"memory_capabilities\": {\"backend\": \"cudb\", \"telemetry_collector\":"
        " \"stormlog.tracker\", \"sampling_source\": \"nvml\", \"supports_allocator_allocated\":"
        " false, \"supports_allocator_reserved\": false, \"supports_allocator_active\": false,"
        " \"supports_allocator_inactive\": false, \"supports_device_used\": true,"
        " \"supports_device_free\": true, \"supports_device_total\": true}}",
        "{\"memory_capabilities\": {\"backend\": \"cuda\", \"telemetry_collector\":"
        " \"stormlog.tracker\", \"sampling_source\": \"nvml\", \"supports_allocator_allocated\":"
        " false, \"supports_allocator_reserved\": false, \"supports_allocator_active\": false,"
        " \"supports_allocator_inactive\": false, \"supports_device_used\": true,"
        " \"supports_device_free\": true, \"supports_device_total\": true}, \"x\": 1}",
        "{\"memory_capabilities\": {\"backend\": \"cuda\", \"telemetry_collector\":"
        " \"stormlog.tracker\", \"sampling_source\": \"nvml\", \"supports_allocator_allocated\":"
        " false, \"supports_allocator_reserved\": false, \"supports_allocator_active\": false,"
        " \"supports_allocator_inactive\": false, \"supports_device_used\": true,"
        " \"supports_device_free\": true, \"supports_device_total\": true}",
        "{\"memory_capabilities\": {\"backend\": \"cu\\u0064a\"}}",
        "{}",
        "null",
    };
    const char *line = V4_LINE;
    size_t len = strlen(line);
    const char *ms = strstr(line, V4_META);
    size_t ml = strlen(V4_META);
    for (size_t k = 0; k < sizeof(k_meta) / sizeof(k_meta[0]); k++) {
        size_t vl = strlen(k_meta[k]);
        size_t n = len - ml + vl;
        char *buf = malloc(n);
        memcpy(buf, line, (size_t)(ms - line));
        memcpy(buf + (ms - line), k_meta[k], vl);
        memcpy(buf + (ms - line) + vl, ms + ml, len - (size_t)(ms - line) - ml);
        char *orig = malloc(len);
        memcpy(orig, line, len);
        sw_check_case("metadata replaced by %.60s", k_meta[k]);
        (void)check_same(__FILE__, __LINE__, fast, slow, orig, len);
        (void)check_same(__FILE__, __LINE__, fast, slow, buf, n);
        (void)check_same(__FILE__, __LINE__, fast, slow, buf, n);
        (void)check_same(__FILE__, __LINE__, fast, slow, orig, len);
        /* Only the object's first bytes: the line ends inside it. */
        (void)check_same(__FILE__, __LINE__, fast, slow, buf, (size_t)(ms - line) + vl / 2);
        (void)check_same(__FILE__, __LINE__, fast, slow, orig, len);
        free(orig);
        free(buf);
    }
}

static void test_fast_path(void **state)
{
    (void)state;
    sw_check_reset();
    sw_tdec_t *fast = sw_tdec_new(), *slow = sw_tdec_new();
    sw_tdec_set_fast(slow, false);
    for (size_t i = 0; i < sizeof(k_fast) / sizeof(k_fast[0]); i++) {
        const fast_case_t *c = &k_fast[i];
        sw_check_case("%s", c->name);
        size_t len = strlen(c->line);
        /* Twice: with the key prediction of the previous line, then of this one. */
        for (int round = 0; round < 2; round++) {
            uint64_t before = sw_tdec_general_lines(fast);
            sw_err_t rc = check_same(__FILE__, __LINE__, fast, slow, c->line, len);
            uint64_t general = sw_tdec_general_lines(fast) - before;
            SW_CHECK(general == (uint64_t)c->general, "%s path, expected the %s path",
                     general ? "general" : "fast", c->general ? "general" : "fast");
            if (!c->want || round) continue;
            if (rc == SW_OK) {
                sw_event_t ev;
                char err[512] = "";
                sw_tdec_t *fresh = sw_tdec_new();
                SW_CHECK(sw_tdec_json(fresh, c->line, len, &ev, err, sizeof(err)) == SW_OK, "%s",
                         err);
                check_fields(__FILE__, __LINE__, &ev, c->want);
                sw_tdec_destroy(fresh);
            } else {
                sw_event_t ev;
                char err[512] = "";
                (void)sw_tdec_json(fast, c->line, len, &ev, err, sizeof(err));
                size_t wl = strlen(c->want);
                if (wl && c->want[wl - 1] == '*')
                    SW_CHECK(strncmp(err, c->want, wl - 1) == 0,
                             "message \"%s\", expected a prefix \"%.*s\"", err, (int)(wl - 1),
                             c->want);
                else
                    SW_CHECK(strcmp(err, c->want) == 0, "message \"%s\", expected \"%s\"", err,
                             c->want);
            }
        }
    }
    SW_CHECK(sw_tdec_general_lines(slow) > 0, "the general decoder took no line");
    mutate_line(fast, slow, GEN_LINE);
    mutate_line(fast, slow, PHASE_LINE);
    template_values(fast, slow, GEN_LINE);
    template_values(fast, slow, PHASE_LINE);
    template_values(fast, slow, V4_LINE);
    template_values(fast, slow, V2_LINE);
    template_values(fast, slow, "{\"a\": 1,\"rank\":2, \"timestamp_ns\": 3,\"event_type\":\"x\"}");
    metadata_memo(fast, slow);
    mutate_line(fast, slow,
                "{\"timestamp_ns\": -0, \"event_type\": \"s\\u00e9\", \"pid\": 1.5e-3,"
                " \"rank\": 0, \"host\": null, \"job_id\": true, \"metadata\": {}}");
    fprintf(stderr, "%zu fast path cases, prefixes and mutations of 3 lines\n",
            sizeof(k_fast) / sizeof(k_fast[0]));
    sw_tdec_destroy(fast);
    sw_tdec_destroy(slow);
    end_test();
}

/* ---- event kinds and blank lines ------------------------------------------- */

static void test_event_kind(void **state)
{
    (void)state;
    sw_check_reset();
    static const struct {
        const char *type;
        size_t len; /* 0: strlen */
        sw_ev_kind_t want;
    } cases[] = {
        {"sample", 0, SW_EV_SAMPLE},
        {"Sample", 0, SW_EV_SAMPLE},
        {"SAMPLE", 0, SW_EV_SAMPLE},
        {"sAmPlE", 0, SW_EV_SAMPLE},
        {"\xc5\xbf"
         "ample",
         0, SW_EV_SAMPLE}, /* U+017F LATIN SMALL LETTER LONG S */
        {"\xc5\xbf"
         "AMPLE",
         0, SW_EV_SAMPLE},
        {"sampl", 0, SW_EV_OTHER},
        {"samples", 0, SW_EV_OTHER},
        {"sample ", 0, SW_EV_OTHER},
        {" sample", 0, SW_EV_OTHER},
        {"s\xc5\xbf"
         "mple",
         0, SW_EV_OTHER},
        {"\xc5\xbf", 0, SW_EV_OTHER},
        {"\xc5", 0, SW_EV_OTHER},
        {"\xc5\xbe"
         "ample",
         0, SW_EV_OTHER}, /* U+017E is not an s */
        {"\xef\xbd\x93"
         "ample",
         0, SW_EV_OTHER}, /* fullwidth s folds to itself */
        {"sample\0", 7, SW_EV_OTHER},
        {"", 0, SW_EV_OTHER},
        {"phase_enter", 0, SW_EV_PHASE_ENTER},
        {"phase_exit", 0, SW_EV_PHASE_EXIT},
        {"Phase_enter", 0, SW_EV_OTHER},
        {"PHASE_EXIT", 0, SW_EV_OTHER},
        {"phase_enter ", 0, SW_EV_OTHER},
        {"phase_exi", 0, SW_EV_OTHER},
        {"phase_enterx", 0, SW_EV_OTHER},
        {"oom", 0, SW_EV_OTHER},
    };
    char name[96];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].type);
        snprintf(name, sizeof(name), "event kind of \"%s\" (%zu bytes)", cases[i].type, len);
        sw_check_case("%s", name);
        sw_str_t t = {cases[i].type, len};
        sw_ev_kind_t k = sw_event_kind(t);
        SW_CHECK(k == cases[i].want, "got %s, expected %s", kind_name(k), kind_name(cases[i].want));
    }

    static const struct {
        const char *text;
        bool blank;
    } blanks[] = {
        {"", true},       {" ", true},    {"\t \r", true}, {"\r", true},
        {" \f\v ", true}, {" x ", false}, {"{}", false},   {"\xc2\xa0", false},
    };
    for (size_t i = 0; i < sizeof(blanks) / sizeof(blanks[0]); i++) {
        snprintf(name, sizeof(name), "sw_tdec_blank case %zu", i + 1);
        sw_check_case("%s", name);
        bool got = sw_tdec_blank(blanks[i].text, strlen(blanks[i].text));
        SW_CHECK(got == blanks[i].blank, "got %d, expected %d for \"%s\"", got, blanks[i].blank,
                 blanks[i].text);
    }
    end_test();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nesting),
        cmocka_unit_test(test_long_strings),
        cmocka_unit_test(test_event_kind),
        cmocka_unit_test(test_fast_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
