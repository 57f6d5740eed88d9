/*
 * The JSON Lines decoder (sw_tdec_json) against SPEC 2 and SPEC 5:
 *  - a table of lines -> outcome: a valid event (the decoded fields are
 *    rendered as JSON and compared with the expected fields, SPEC 7
 *    style, naming the first differing field) or an error code with the
 *    exact message (a trailing '*' in the table means "starts with");
 *  - byte-level checks that JSON cannot express (WTF-8 surrogates, NUL);
 *  - the key prediction of the decoder across lines with reordered keys.
 * Every failure prints file:line, the case, the expression and the actual
 * against the expected value; all cases run, then the test fails.
 */
#include "json_render.h"

#define SAMPLE "\"timestamp_ns\": 1, \"event_type\": \"sample\", \"device_used_bytes\": 5"

typedef struct json_case_s {
    const char *name;
    const char *line;
    sw_err_t want_err;
    const char *want; /* SW_OK: expected fields (JSON); else the message ('*' = prefix) */
} json_case_t;

static const json_case_t k_cases[] = {
    /* -- valid events: defaults and every field ------------------------- */
    {"defaults when absent", "{" SAMPLE "}", SW_OK,
     "{\"timestamp_ns\": 1, \"event_type\": \"sample\", \"kind\": \"sample\", \"rank\": 0,"
     " \"world_size\": 1, \"job_id\": null, \"session_id\": null, \"pid\": -1,"
     " \"host\": \"unknown\", \"device_used_bytes\": 5, \"sampling_interval_ms\": 0,"
     " \"metadata\": \"{}\", \"phase\": null, \"boundary_ok\": false, \"schema_version\": null,"
     " \"device_id\": null, \"local_rank\": null, \"allocator_allocated_bytes\": null,"
     " \"allocator_reserved_bytes\": null, \"allocator_active_bytes\": null,"
     " \"allocator_inactive_bytes\": null, \"allocator_change_bytes\": null,"
     " \"device_free_bytes\": null, \"device_total_bytes\": null, \"collector\": null,"
     " \"context\": null}"},
    {"every field (v3 line)",
     "{\"schema_version\": 3, \"timestamp_ns\": 1763700000000000000, \"event_type\": \"sample\","
     " \"collector\": \"stormlog.cuda_tracker\", \"sampling_interval_ms\": 100, \"pid\": 4000,"
     " \"host\": \"h0\", \"device_id\": 2, \"allocator_allocated_bytes\": 268435456,"
     " \"allocator_reserved_bytes\": 536870912, \"allocator_active_bytes\": null,"
     " \"allocator_inactive_bytes\": 7, \"allocator_change_bytes\": -12,"
     " \"device_used_bytes\": 1073741824, \"device_free_bytes\": 84825604096,"
     " \"device_total_bytes\": 85899345920, \"context\": \"step 3\", \"metadata\": {},"
     " \"job_id\": \"a\", \"rank\": 3, \"local_rank\": 1, \"world_size\": 8, \"session_id\": \"s0\"}",
     SW_OK,
     "{\"timestamp_ns\": 1763700000000000000, \"event_type\": \"sample\", \"kind\": \"sample\","
     " \"rank\": 3, \"world_size\": 8, \"job_id\": \"a\", \"session_id\": \"s0\", \"pid\": 4000,"
     " \"host\": \"h0\", \"device_used_bytes\": 1073741824, \"sampling_interval_ms\": 100,"
     " \"metadata\": \"{}\", \"phase\": null, \"boundary_ok\": false, \"schema_version\": 3,"
     " \"device_id\": 2, \"local_rank\": 1, \"allocator_allocated_bytes\": 268435456,"
     " \"allocator_reserved_bytes\": 536870912, \"allocator_active_bytes\": null,"
     " \"allocator_inactive_bytes\": 7, \"allocator_change_bytes\": -12,"
     " \"device_free_bytes\": 84825604096, \"device_total_bytes\": 85899345920,"
     " \"collector\": \"stormlog.cuda_tracker\", \"context\": \"step 3\"}"},
    {"carried fields of the wrong type are not validated",
     "{" BASE ", \"device_total_bytes\": \"big\", \"allocator_change_bytes\": 1.5,"
     " \"collector\": 5, \"context\": null, \"schema_version\": 99999999999999999999}",
     SW_OK,
     "{\"device_total_bytes\": null, \"allocator_change_bytes\": null, \"collector\": null,"
     " \"context\": null, \"schema_version\": null}"},
    {"non-sample without device_used_bytes", "{" BASE "}", SW_OK,
     "{\"kind\": \"other\", \"device_used_bytes\": null, \"counterless\": false}"},
    /* -- TelemetryEvent v4: null counters where the backend lacks them --- */
    {"v4 sample with device_used_bytes null is counterless",
     "{\"schema_version\": 4, \"timestamp_ns\": 1, \"event_type\": \"sample\","
     " \"allocator_allocated_bytes\": null, \"device_used_bytes\": null,"
     " \"device_free_bytes\": null, \"device_total_bytes\": null, \"metadata\":"
     " {\"memory_capabilities\": {\"backend\": \"rocm\", \"supports_device_used\": false}}}",
     SW_OK,
     "{\"kind\": \"sample\", \"device_used_bytes\": null, \"counterless\": true,"
     " \"schema_version\": 4, \"allocator_allocated_bytes\": null, \"device_total_bytes\": null,"
     " \"metadata\": \"{\\\"memory_capabilities\\\": {\\\"backend\\\": \\\"rocm\\\","
     " \\\"supports_device_used\\\": false}}\"}"},
    {"v4 sample with device_used_bytes is an ordinary sample",
     "{\"schema_version\": 4, " SAMPLE ", \"allocator_active_bytes\": null}", SW_OK,
     "{\"device_used_bytes\": 5, \"counterless\": false, \"schema_version\": 4}"},
    {"v4 non-sample with device_used_bytes null is not counterless",
     "{\"schema_version\": 4, " BASE ", \"device_used_bytes\": null}", SW_OK,
     "{\"kind\": \"other\", \"device_used_bytes\": null, \"counterless\": false}"},
    {"empty strings where allowed",
     "{" BASE ", \"session_id\": \"\", \"host\": \"\", \"job_id\": null}", SW_OK,
     "{\"session_id\": \"\", \"host\": \"\", \"job_id\": null}"},
    {"session_id null", "{" BASE ", \"session_id\": null}", SW_OK, "{\"session_id\": null}"},
    {"rank below world_size, keys in any order", "{\"rank\": 3, " BASE ", \"world_size\": 4}",
     SW_OK, "{\"rank\": 3, \"world_size\": 4}"},
    {"pid may be negative and extreme", "{" BASE ", \"pid\": -9223372036854775808}", SW_OK,
     "{\"pid\": -9223372036854775808}"},
    {"largest int64",
     "{\"timestamp_ns\": 9223372036854775807, \"event_type\": \"sample\","
     " \"device_used_bytes\": 9223372036854775807}",
     SW_OK, "{\"timestamp_ns\": 9223372036854775807, \"device_used_bytes\": 9223372036854775807}"},
    {"-0 is the integer 0", "{\"timestamp_ns\": -0, \"event_type\": \"x\", \"rank\": -0}", SW_OK,
     "{\"timestamp_ns\": 0, \"rank\": 0}"},
    {"zero values",
     "{\"timestamp_ns\": 0, \"event_type\": \"sample\", \"device_used_bytes\": 0,"
     " \"sampling_interval_ms\": 0}",
     SW_OK, "{\"timestamp_ns\": 0, \"device_used_bytes\": 0, \"sampling_interval_ms\": 0}"},
    {"metadata raw text kept byte for byte",
     "{" BASE ", \"metadata\": {\"a\": [1, {\"b\": null}],  \"c\":\"\\u00e9\"}}", SW_OK,
     "{\"metadata\": \"{\\\"a\\\": [1, {\\\"b\\\": null}],  \\\"c\\\":\\\"\\\\u00e9\\\"}\","
     " \"phase\": null}"},
    {"metadata null is {}", "{" BASE ", \"metadata\": null}", SW_OK, "{\"metadata\": \"{}\"}"},
    {"metadata with NaN and Infinity inside",
     "{" BASE ", \"metadata\": {\"x\": NaN, \"y\": [-Infinity]}}", SW_OK,
     "{\"metadata\": \"{\\\"x\\\": NaN, \\\"y\\\": [-Infinity]}\"}"},
    {"NaN and Infinity in unknown fields",
     "{" BASE ", \"loss\": NaN, \"a\": Infinity, \"b\": -Infinity, \"c\": 1e400}", SW_OK,
     "{\"timestamp_ns\": 1}"},
    {"unknown fields of every type are skipped",
     "{" BASE ", \"u\": {\"rank\": -1, \"k\": [true, false, null, \"s\", 1.5e-3]}, \"v\": []}",
     SW_OK, "{\"rank\": 0}"},
    {"duplicate keys: the last wins (bad then good)",
     "{" BASE ", \"rank\": 5, \"rank\": 0, \"pid\": null, \"pid\": 3}", SW_OK,
     "{\"rank\": 0, \"pid\": 3}"},
    {"duplicate metadata: the last wins (phase then plain)",
     "{\"timestamp_ns\": 1, \"event_type\": \"phase_enter\", \"session_id\": \"s\","
     " \"metadata\": {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"p\"],"
     " \"scope_id\": \"a\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}},"
     " \"metadata\": {\"k\": 1}}",
     SW_OK, "{\"metadata\": \"{\\\"k\\\": 1}\", \"phase\": null, \"boundary_ok\": false}"},
    {"duplicate metadata: null after a phase",
     "{\"timestamp_ns\": 1, \"event_type\": \"phase_enter\","
     " \"session_id\": \"s\", \"metadata\": {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\","
     " \"path\": [\"p\"], \"scope_id\": \"a\", \"thread_id\": 1, \"thread_name\": \"t\","
     " \"sequence\": 1}}, \"metadata\": null}",
     SW_OK, "{\"metadata\": \"{}\", \"phase\": null, \"boundary_ok\": false}"},
    {"escaped key names are recognised",
     "{\"timestamp_ns\": 1, \"event_type\": \"x\", \"world_size\": 4, \"r\\u0061nk\": 2,"
     " \"\\u0068ost\": \"h\\/1\"}",
     SW_OK, "{\"rank\": 2, \"host\": \"h/1\"}"},
    {"key names are case-sensitive", "{" BASE ", \"Rank\": 7, \"RANK\": 8}", SW_OK,
     "{\"rank\": 0}"},
    {"escapes in strings",
     "{" BASE ", \"host\": \"q\\\"b\\\\s\\/f\\bf\\fn\\nr\\rt\\tu\\u00e9\\u20ac\"}", SW_OK,
     "{\"host\": \"q\\\"b\\\\s/f\\bf\\fn\\nr\\rt\\tu\\u00e9\\u20ac\"}"},
    {"surrogate pair decoded to UTF-8", "{" BASE ", \"host\": \"\\ud83d\\ude00!\"}", SW_OK,
     "{\"host\": \"\\ud83d\\ude00!\"}"},
    {"raw UTF-8 accepted", "{" BASE ", \"host\": \"h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}", SW_OK,
     "{\"host\": \"h\\u00e9\\u20ac\\ud83d\\ude00\"}"},
    {"DEL is not a control character", "{" BASE ", \"host\": \"a\x7f\"}", SW_OK,
     "{\"host\": \"a\\u007f\"}"},
    {"whitespace around everything, CR at the end",
     " \t{ \"timestamp_ns\" :\t1 ,\"event_type\"\n:\"x\" , \"rank\" : 0 } \r", SW_OK,
     "{\"timestamp_ns\": 1, \"rank\": 0}"},
    {"event_type Sample",
     "{\"timestamp_ns\": 1, \"event_type\": \"Sample\", \"device_used_bytes\": 1}", SW_OK,
     "{\"kind\": \"sample\"}"},
    {"event_type SAMPLE",
     "{\"timestamp_ns\": 1, \"event_type\": \"SAMPLE\", \"device_used_bytes\": 1}", SW_OK,
     "{\"kind\": \"sample\"}"},
    {"event_type with U+017F (escaped)",
     "{\"timestamp_ns\": 1, \"event_type\": \"\\u017fample\", \"device_used_bytes\": 1}", SW_OK,
     "{\"kind\": \"sample\", \"event_type\": \"\\u017fample\"}"},
    {"event_type with U+017F (raw)",
     "{\"timestamp_ns\": 1, \"event_type\": \"\xc5\xbf"
     "ample\", \"device_used_bytes\": 1}",
     SW_OK, "{\"kind\": \"sample\"}"},
    {"Phase_enter is not a phase boundary",
     "{\"timestamp_ns\": 1, \"event_type\": \"Phase_enter\"}", SW_OK, "{\"kind\": \"other\"}"},

    /* -- phase_scope ----------------------------------------------------- */
    {"phase_enter with every scope field, path filtered",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"other\": 1, \"phase_scope\": {\"action\": \"enter\", \"name\": \"fwd\", \"path\": [\"train\","
     " \"\", 7, null, \"fwd\", [\"x\"], {\"y\": \"z\"}, true], \"depth\": 99, \"scope_id\": \"sc1\","
     " \"parent_scope_id\": \"p0\", \"thread_id\": 12, \"thread_name\": \"Main\", \"sequence\": 3,"
     " \"extra\": [1]}}}",
     SW_OK,
     "{\"kind\": \"phase_enter\", \"boundary_ok\": true, \"phase\": {\"action\": \"enter\","
     " \"name\": \"fwd\", \"path\": [\"train\", \"fwd\"], \"scope_id\": \"sc1\","
     " \"parent_scope_id\": \"p0\", \"thread_id\": 12, \"thread_name\": \"Main\", \"sequence\": 3,"
     " \"depth\": 99}}"},
    {"phase_exit, parent null, depth not an integer",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_exit\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"exit\", \"name\": \"n\", \"path\": [\"a\", \"b\", \"c\"],"
     " \"depth\": \"deep\", \"scope_id\": \"\", \"parent_scope_id\": null, \"thread_id\": -4,"
     " \"thread_name\": \"\", \"sequence\": -1}}}",
     SW_OK,
     "{\"kind\": \"phase_exit\", \"boundary_ok\": true, \"phase\": {\"action\": \"exit\","
     " \"path\": [\"a\", \"b\", \"c\"], \"scope_id\": \"\", \"parent_scope_id\": null,"
     " \"thread_id\": -4, \"sequence\": -1, \"depth\": null}}"},
    {"action/type mismatch: a valid event, not a boundary",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_exit\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"a\"], \"scope_id\": \"x\","
     " \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}",
     SW_OK,
     "{\"kind\": \"phase_exit\", \"phase\": {\"action\": \"enter\"}, \"boundary_ok\": false}"},
    {"null session: not a boundary",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": null, \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"a\"], \"scope_id\": \"x\","
     " \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}",
     SW_OK, "{\"boundary_ok\": false}"},
    {"blank name via U+3000: not a boundary",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"\\u3000 \\t\\u00a0\\u2028\", \"path\": [\"a\"],"
     " \"scope_id\": \"x\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}",
     SW_OK, "{\"phase\": {\"name\": \"\\u3000 \\t\\u00a0\\u2028\"}, \"boundary_ok\": false}"},
    {"name with one non-space character is fine",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"\\u3000x\\u3000\", \"path\": [\"a\"],"
     " \"scope_id\": \"x\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}",
     SW_OK, "{\"boundary_ok\": true}"},
    {"empty name: not a boundary",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"\", \"path\": [\"a\"],"
     " \"scope_id\": \"x\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}",
     SW_OK, "{\"boundary_ok\": false}"},
    {"path without non-empty strings: not a boundary",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"\", 1, null, [\"a\"]],"
     " \"scope_id\": \"x\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}",
     SW_OK, "{\"boundary_ok\": false}"},
    {"empty path: not a boundary",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [],"
     " \"scope_id\": \"x\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}",
     SW_OK, "{\"boundary_ok\": false}"},
    {"path not a list: not a boundary",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": \"a\","
     " \"scope_id\": \"x\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}",
     SW_OK, "{\"boundary_ok\": false}"},
    {"thread_id not an integer: not a boundary",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"a\"],"
     " \"scope_id\": \"x\", \"thread_id\": 1.0, \"thread_name\": \"t\", \"sequence\": 1}}}",
     SW_OK, "{\"boundary_ok\": false}"},
    {"sequence missing: not a boundary",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"a\"],"
     " \"scope_id\": \"x\", \"thread_id\": 1, \"thread_name\": \"t\"}}}",
     SW_OK, "{\"boundary_ok\": false}"},
    {"scope_id not a string: not a boundary",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"a\"],"
     " \"scope_id\": 7, \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}",
     SW_OK, "{\"boundary_ok\": false}"},
    {"thread_name null: not a boundary",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"a\"],"
     " \"scope_id\": \"x\", \"thread_id\": 1, \"thread_name\": null, \"sequence\": 1}}}",
     SW_OK, "{\"boundary_ok\": false}"},
    {"parent_scope_id a number: not a boundary",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"a\"], \"parent_scope_id\": 3,"
     " \"scope_id\": \"x\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}",
     SW_OK, "{\"boundary_ok\": false}"},
    {"action in upper case: not a boundary",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"Enter\", \"name\": \"n\", \"path\": [\"a\"],"
     " \"scope_id\": \"x\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}",
     SW_OK, "{\"boundary_ok\": false}"},
    {"phase_scope not an object: no phase",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": [\"enter\"]}}",
     SW_OK, "{\"phase\": null, \"boundary_ok\": false}"},
    {"duplicate path: the last wins",
     "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"session_id\": \"s\", \"metadata\":"
     " {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"a\", \"b\"], \"path\": [\"c\"],"
     " \"scope_id\": \"x\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}",
     SW_OK, "{\"phase\": {\"path\": [\"c\"]}, \"boundary_ok\": true}"},
    {"phase_scope on a sample is parsed but the sample is no boundary",
     "{\"timestamp_ns\": 5, \"event_type\": \"sample\", \"device_used_bytes\": 1, \"session_id\": \"s\","
     " \"metadata\": {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"a\"],"
     " \"scope_id\": \"x\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 1}}}",
     SW_OK, "{\"kind\": \"sample\", \"boundary_ok\": false}"},

    /* -- SPEC 2 invalid events: exact messages ---------------------------- */
    {"rank negative", "{" SAMPLE ", \"rank\": -3}", SW_ERR_INVALID_ARG,
     "field \"rank\" is -3, expected an integer >= 0"},
    {"rank not below world_size", "{" SAMPLE ", \"rank\": 2, \"world_size\": 2}",
     SW_ERR_INVALID_ARG, "field \"rank\" is 2, expected an integer < world_size (2)"},
    {"rank 1 with the default world_size", "{" BASE ", \"rank\": 1}", SW_ERR_INVALID_ARG,
     "field \"rank\" is 1, expected an integer < world_size (1)"},
    {"rank a string", "{" BASE ", \"rank\": \"0\"}", SW_ERR_INVALID_ARG,
     "field \"rank\" is \"0\", expected an integer >= 0"},
    {"rank a float", "{" BASE ", \"rank\": 1.0}", SW_ERR_INVALID_ARG,
     "field \"rank\" is 1.0, expected an integer >= 0"},
    {"rank with an exponent", "{" BASE ", \"rank\": 1e0}", SW_ERR_INVALID_ARG,
     "field \"rank\" is 1e0, expected an integer >= 0"},
    {"rank true", "{" BASE ", \"rank\": true}", SW_ERR_INVALID_ARG,
     "field \"rank\" is true, expected an integer >= 0"},
    {"rank null", "{" BASE ", \"rank\": null}", SW_ERR_INVALID_ARG,
     "field \"rank\" is null, expected an integer >= 0"},
    {"duplicate keys: the last wins (good then bad)", "{" BASE ", \"rank\": 0, \"rank\": -1}",
     SW_ERR_INVALID_ARG, "field \"rank\" is -1, expected an integer >= 0"},
    {"world_size 0", "{" BASE ", \"world_size\": 0}", SW_ERR_INVALID_ARG,
     "field \"world_size\" is 0, expected an integer >= 1"},
    {"world_size null", "{" BASE ", \"world_size\": null}", SW_ERR_INVALID_ARG,
     "field \"world_size\" is null, expected an integer >= 1"},
    {"pid null", "{" BASE ", \"pid\": null}", SW_ERR_INVALID_ARG,
     "field \"pid\" is null, expected an integer"},
    {"pid -Infinity", "{" BASE ", \"pid\": -Infinity}", SW_ERR_INVALID_ARG,
     "field \"pid\" is -Infinity, expected an integer"},
    {"pid beyond 64 bits", "{" BASE ", \"pid\": 9223372036854775808}", SW_ERR_INVALID_ARG,
     "field \"pid\" is 9223372036854775808, expected an integer (the value does not fit in 64 bits)"},
    {"pid below -2^63", "{" BASE ", \"pid\": -9223372036854775809}", SW_ERR_INVALID_ARG,
     "field \"pid\" is -9223372036854775809, expected an integer (the value does not fit in 64 bits)"},
    {"job_id empty", "{" BASE ", \"job_id\": \"\"}", SW_ERR_INVALID_ARG,
     "field \"job_id\" is \"\", expected null or a non-empty string"},
    {"job_id a number", "{" BASE ", \"job_id\": 7}", SW_ERR_INVALID_ARG,
     "field \"job_id\" is 7, expected null or a non-empty string"},
    {"session_id a number", "{" BASE ", \"session_id\": 5}", SW_ERR_INVALID_ARG,
     "field \"session_id\" is 5, expected null or a string"},
    {"host null", "{" BASE ", \"host\": null}", SW_ERR_INVALID_ARG,
     "field \"host\" is null, expected a string"},
    {"host an object", "{" BASE ", \"host\": {\"a\": 1}}", SW_ERR_INVALID_ARG,
     "field \"host\" is {\"a\": 1}, expected a string"},
    {"long values are shortened in messages",
     "{" BASE
     ", \"host\": [1111111111, 2222222222, 3333333333, 4444444444, 5555555555, 6666666666]}",
     SW_ERR_INVALID_ARG,
     "field \"host\" is [1111111111, 2222222222, 3333333333, 4444444444, 55555555..., expected a string"},
    {"timestamp_ns fraction", "{\"timestamp_ns\": 1.5, \"event_type\": \"x\"}", SW_ERR_INVALID_ARG,
     "field \"timestamp_ns\" is 1.5, expected an integer >= 0"},
    {"timestamp_ns missing", "{\"event_type\": \"sample\", \"device_used_bytes\": 1}",
     SW_ERR_INVALID_ARG, "field \"timestamp_ns\" is missing, expected an integer >= 0"},
    {"timestamp_ns a string", "{\"timestamp_ns\": \"1\", \"event_type\": \"x\"}",
     SW_ERR_INVALID_ARG, "field \"timestamp_ns\" is \"1\", expected an integer >= 0"},
    {"world_size a float", "{" BASE ", \"world_size\": 2.0}", SW_ERR_INVALID_ARG,
     "field \"world_size\" is 2.0, expected an integer >= 1"},
    {"timestamp_ns negative", "{\"timestamp_ns\": -1, \"event_type\": \"x\"}", SW_ERR_INVALID_ARG,
     "field \"timestamp_ns\" is -1, expected an integer >= 0"},
    {"timestamp_ns NaN", "{\"timestamp_ns\": NaN, \"event_type\": \"x\"}", SW_ERR_INVALID_ARG,
     "field \"timestamp_ns\" is NaN, expected an integer >= 0"},
    {"timestamp_ns Infinity", "{\"timestamp_ns\": Infinity, \"event_type\": \"x\"}",
     SW_ERR_INVALID_ARG, "field \"timestamp_ns\" is Infinity, expected an integer >= 0"},
    {"timestamp_ns beyond 64 bits (20 digits)",
     "{\"timestamp_ns\": 99999999999999999999, \"event_type\": \"x\"}", SW_ERR_INVALID_ARG,
     "field \"timestamp_ns\" is 99999999999999999999, expected an integer >= 0 (the value does not "
     "fit in 64 bits)"},
    {"timestamp_ns 2^63", "{\"timestamp_ns\": 9223372036854775808, \"event_type\": \"x\"}",
     SW_ERR_INVALID_ARG,
     "field \"timestamp_ns\" is 9223372036854775808, expected an integer >= 0 (the value does not "
     "fit in 64 bits)"},
    {"timestamp_ns -0.0 is a float", "{\"timestamp_ns\": -0.0, \"event_type\": \"x\"}",
     SW_ERR_INVALID_ARG, "field \"timestamp_ns\" is -0.0, expected an integer >= 0"},
    {"event_type missing", "{\"timestamp_ns\": 1}", SW_ERR_INVALID_ARG,
     "field \"event_type\" is missing, expected a non-empty string"},
    {"event_type empty", "{\"timestamp_ns\": 1, \"event_type\": \"\"}", SW_ERR_INVALID_ARG,
     "field \"event_type\" is \"\", expected a non-empty string"},
    {"event_type a number", "{\"timestamp_ns\": 1, \"event_type\": 5}", SW_ERR_INVALID_ARG,
     "field \"event_type\" is 5, expected a non-empty string"},
    {"device_used_bytes missing on a sample", "{\"timestamp_ns\": 1, \"event_type\": \"sample\"}",
     SW_ERR_INVALID_ARG,
     "field \"device_used_bytes\" is missing, expected an integer >= 0 (required for a sample)"},
    {"device_used_bytes missing on a U+017F sample",
     "{\"timestamp_ns\": 1, \"event_type\": \"\\u017fAMPLE\"}", SW_ERR_INVALID_ARG,
     "field \"device_used_bytes\" is missing, expected an integer >= 0 (required for a sample)"},
    {"device_used_bytes null on a sample",
     "{\"timestamp_ns\": 1, \"event_type\": \"sample\","
     " \"device_used_bytes\": null}",
     SW_ERR_INVALID_ARG, "field \"device_used_bytes\" is null, expected an integer >= 0"},
    {"device_used_bytes null on a v3 sample",
     "{\"schema_version\": 3, \"timestamp_ns\": 1, \"event_type\": \"sample\","
     " \"device_used_bytes\": null}",
     SW_ERR_INVALID_ARG, "field \"device_used_bytes\" is null, expected an integer >= 0"},
    {"device_used_bytes missing on a v4 sample (absent is not null)",
     "{\"schema_version\": 4, \"timestamp_ns\": 1, \"event_type\": \"sample\"}", SW_ERR_INVALID_ARG,
     "field \"device_used_bytes\" is missing, expected an integer >= 0 (required for a sample)"},
    {"device_used_bytes negative on a non-sample", "{" BASE ", \"device_used_bytes\": -1}",
     SW_ERR_INVALID_ARG, "field \"device_used_bytes\" is -1, expected an integer >= 0"},
    {"sampling_interval_ms negative", "{" BASE ", \"sampling_interval_ms\": -1}",
     SW_ERR_INVALID_ARG, "field \"sampling_interval_ms\" is -1, expected an integer >= 0"},
    {"sampling_interval_ms float", "{" BASE ", \"sampling_interval_ms\": 100.0}",
     SW_ERR_INVALID_ARG, "field \"sampling_interval_ms\" is 100.0, expected an integer >= 0"},
    {"metadata an array", "{" BASE ", \"metadata\": [1]}", SW_ERR_INVALID_ARG,
     "field \"metadata\" is [1], expected an object or null (got an array)"},
    {"metadata a string", "{" BASE ", \"metadata\": \"{}\"}", SW_ERR_INVALID_ARG,
     "field \"metadata\" is \"{}\", expected an object or null (got a string)"},
    {"metadata a number", "{" BASE ", \"metadata\": 0}", SW_ERR_INVALID_ARG,
     "field \"metadata\" is 0, expected an object or null (got a number)"},
    {"metadata false", "{" BASE ", \"metadata\": false}", SW_ERR_INVALID_ARG,
     "field \"metadata\" is false, expected an object or null (got a boolean)"},
    {"empty object", "{}", SW_ERR_INVALID_ARG,
     "field \"timestamp_ns\" is missing, expected an integer >= 0"},

    /* -- JSON syntax ------------------------------------------------------ */
    {"not an object: array", "[1, 2]", SW_ERR_PARSE, "not a JSON object: the line is an array"},
    {"not an object: number", "5", SW_ERR_PARSE, "not a JSON object: the line is a number"},
    {"not an object: string", "\"s\"", SW_ERR_PARSE, "not a JSON object: the line is a string"},
    {"not an object: null", "null", SW_ERR_PARSE, "not a JSON object: the line is null"},
    {"not an object: true", " true ", SW_ERR_PARSE, "not a JSON object: the line is a boolean"},
    {"empty line text", "", SW_ERR_PARSE, "not valid JSON: *"},
    {"trailing data (column 9)", "{\"a\":1} x", SW_ERR_PARSE,
     "not valid JSON: unexpected data after the object at column 9"},
    {"two objects", "{\"timestamp_ns\": 1, \"event_type\": \"x\"}{}", SW_ERR_PARSE,
     "not valid JSON: unexpected data after the object at column 39"},
    {"trailing comma (column 8)", "{\"a\":1,}", SW_ERR_PARSE,
     "not valid JSON: expected a string at column 8"},
    {"trailing comma in an array", "{" BASE ", \"a\": [1,]}", SW_ERR_PARSE, "not valid JSON: *"},
    {"leading zero (column 7)", "{\"a\":01}", SW_ERR_PARSE,
     "not valid JSON: expected ',' or '}' in object at column 7"},
    {"leading zero in a known field", "{\"timestamp_ns\": 01, \"event_type\": \"x\"}", SW_ERR_PARSE,
     "not valid JSON: *"},
    {"leading zero, negative", "{" BASE ", \"a\": -01}", SW_ERR_PARSE, "not valid JSON: *"},
    {"bad escape (column 7)", "{\"a\":\"\\x\"}", SW_ERR_PARSE,
     "not valid JSON: invalid escape in string at column 7"},
    {"short \\u escape", "{" BASE ", \"h\": \"\\u12\"}", SW_ERR_PARSE,
     "not valid JSON: invalid \\u escape in string at column *"},
    {"non-hex \\u escape", "{" BASE ", \"h\": \"\\u12G4\"}", SW_ERR_PARSE,
     "not valid JSON: invalid \\u escape in string at column *"},
    {"control character in a string", "{" BASE ", \"h\": \"a\tb\"}", SW_ERR_PARSE,
     "not valid JSON: control character in string at column 47"},
    {"control byte 0x01 in a string", "{" BASE ", \"h\": \"a\x01\"}", SW_ERR_PARSE,
     "not valid JSON: control character in string at column 47"},
    {"invalid UTF-8: lone continuation byte", "{" BASE ", \"h\": \"\x80\"}", SW_ERR_PARSE,
     "not valid JSON: invalid UTF-8 in string at column 46"},
    {"invalid UTF-8: 0xff", "{" BASE ", \"h\": \"\xff\"}", SW_ERR_PARSE,
     "not valid JSON: invalid UTF-8 in string at column 46"},
    {"invalid UTF-8: overlong NUL (c0 80)", "{" BASE ", \"h\": \"\xc0\x80\"}", SW_ERR_PARSE,
     "not valid JSON: invalid UTF-8 in string at column 46"},
    {"invalid UTF-8: overlong 3 bytes (e0 80 80)", "{" BASE ", \"h\": \"\xe0\x80\x80\"}",
     SW_ERR_PARSE, "not valid JSON: invalid UTF-8 in string at column 46"},
    {"invalid UTF-8: overlong 4 bytes (f0 80 80 80)", "{" BASE ", \"h\": \"\xf0\x80\x80\x80\"}",
     SW_ERR_PARSE, "not valid JSON: invalid UTF-8 in string at column 46"},
    {"invalid UTF-8: encoded surrogate (ed a0 80)", "{" BASE ", \"h\": \"\xed\xa0\x80\"}",
     SW_ERR_PARSE, "not valid JSON: invalid UTF-8 in string at column 46"},
    {"invalid UTF-8: beyond U+10FFFF (f4 90 80 80)", "{" BASE ", \"h\": \"\xf4\x90\x80\x80\"}",
     SW_ERR_PARSE, "not valid JSON: invalid UTF-8 in string at column 46"},
    {"invalid UTF-8: truncated sequence", "{" BASE ", \"h\": \"\xe2\x82\"}", SW_ERR_PARSE,
     "not valid JSON: invalid UTF-8 in string at column 46"},
    {"invalid UTF-8 in a key", "{" BASE ", \"\xc3\": 1}", SW_ERR_PARSE,
     "not valid JSON: invalid UTF-8 in string at column *"},
    {"invalid UTF-8 after an escape (slow path)", "{" BASE ", \"h\": \"\\n\xc0\x80\"}",
     SW_ERR_PARSE, "not valid JSON: invalid UTF-8 in string at column 48"},
    {"unterminated string", "{" BASE ", \"h\": \"abc", SW_ERR_PARSE,
     "not valid JSON: unterminated string at column 45"},
    {"missing colon", "{\"a\" 1}", SW_ERR_PARSE,
     "not valid JSON: expected ':' after object key at column 6"},
    {"unterminated object", "{" BASE, SW_ERR_PARSE, "not valid JSON: *"},
    {"unbalanced array", "{\"a\": [1, 2}", SW_ERR_PARSE,
     "not valid JSON: expected ',' or ']' in array at column 12"},
    {"single quotes", "{'timestamp_ns': 1}", SW_ERR_PARSE, "not valid JSON: *"},
    {"unquoted key", "{timestamp_ns: 1}", SW_ERR_PARSE, "not valid JSON: *"},
    {"bad literal", "{" BASE ", \"a\": tru}", SW_ERR_PARSE,
     "not valid JSON: invalid literal at column 45"},
    {"-NaN is not JSON", "{" BASE ", \"a\": -NaN}", SW_ERR_PARSE, "not valid JSON: *"},
    {"nan in lower case is not JSON", "{" BASE ", \"a\": nan}", SW_ERR_PARSE, "not valid JSON: *"},
    {"+1 is not JSON", "{" BASE ", \"a\": +1}", SW_ERR_PARSE, "not valid JSON: *"},
    {"1. is not JSON", "{" BASE ", \"a\": 1.}", SW_ERR_PARSE, "not valid JSON: *"},
    {".5 is not JSON", "{" BASE ", \"a\": .5}", SW_ERR_PARSE, "not valid JSON: *"},
    {"1e is not JSON", "{" BASE ", \"a\": 1e}", SW_ERR_PARSE, "not valid JSON: *"},
    {"hex is not JSON", "{" BASE ", \"a\": 0x10}", SW_ERR_PARSE, "not valid JSON: *"},
    {"UTF-8 BOM before the object", "\xef\xbb\xbf{" BASE "}", SW_ERR_PARSE, "not valid JSON: *"},
    {"form feed is not JSON whitespace", "{" BASE ",\f\"a\": 1}", SW_ERR_PARSE,
     "not valid JSON: *"},
    {"syntax error wins over field errors", "{\"rank\": -1, \"a\": }", SW_ERR_PARSE,
     "not valid JSON: unexpected character at column 19"},
};

static void test_table(void **state)
{
    (void)state;
    sw_check_reset();
    sw_tdec_t *dec = sw_tdec_new();
    sw_tdec_t *fast = sw_tdec_new(), *slow = sw_tdec_new();
    sw_tdec_set_fast(slow, false);
    for (size_t i = 0; i < sizeof(k_cases) / sizeof(k_cases[0]); i++) {
        const json_case_t *c = &k_cases[i];
        sw_check_case("%s", c->name);
        (void)check_same(__FILE__, __LINE__, fast, slow, c->line, strlen(c->line));
        sw_event_t ev;
        char err[512] = "";
        sw_err_t rc = sw_tdec_json(dec, c->line, strlen(c->line), &ev, err, sizeof(err));
        SW_CHECK(rc == c->want_err, "got %d (%s) \"%s\", expected %d (%s)", (int)rc, sw_err2str(rc),
                 err, (int)c->want_err, sw_err2str(c->want_err));
        if (rc != c->want_err) continue;
        if (rc == SW_OK) {
            check_fields(__FILE__, __LINE__, &ev, c->want);
            continue;
        }
        size_t wl = strlen(c->want);
        if (wl && c->want[wl - 1] == '*')
            SW_CHECK(strncmp(err, c->want, wl - 1) == 0,
                     "message \"%s\", expected a prefix \"%.*s\"", err, (int)(wl - 1), c->want);
        else SW_CHECK(strcmp(err, c->want) == 0, "message \"%s\", expected \"%s\"", err, c->want);
    }
    fprintf(stderr, "%zu decoder cases\n", sizeof(k_cases) / sizeof(k_cases[0]));
    sw_tdec_destroy(dec);
    sw_tdec_destroy(fast);
    sw_tdec_destroy(slow);
    end_test();
}

/* ---- byte-level checks ----------------------------------------------------- */

typedef struct bytes_case_s {
    const char *name;
    const char *line;
    const char *want; /* expected host bytes */
    size_t want_len;
} bytes_case_t;

static const bytes_case_t k_bytes[] = {
    {"lone high surrogate kept as WTF-8", "{" BASE ", \"host\": \"\\ud800\"}", "\xed\xa0\x80", 3},
    {"lone low surrogate kept as WTF-8", "{" BASE ", \"host\": \"a\\udc00b\"}",
     "a\xed\xb0\x80"
     "b",
     5},
    {"high surrogate before a non-surrogate escape", "{" BASE ", \"host\": \"\\ud800\\u0041\"}",
     "\xed\xa0\x80"
     "A",
     4},
    {"two high surrogates", "{" BASE ", \"host\": \"\\uD800\\uDBFF\"}", "\xed\xa0\x80\xed\xaf\xbf",
     6},
    {"low then high: not a pair", "{" BASE ", \"host\": \"\\udc00\\ud800\"}",
     "\xed\xb0\x80\xed\xa0\x80", 6},
    {"surrogate pair U+10FFFF", "{" BASE ", \"host\": \"\\udbff\\udfff\"}", "\xf4\x8f\xbf\xbf", 4},
    {"surrogate pair U+1F600 in upper-case hex", "{" BASE ", \"host\": \"\\uD83D\\uDE00\"}",
     "\xf0\x9f\x98\x80", 4},
    {"escaped NUL inside a string", "{" BASE ", \"host\": \"a\\u0000b\"}", "a\0b", 3},
    {"U+0080 and U+07FF and U+0800", "{" BASE ", \"host\": \"\\u0080\\u07ff\\u0800\"}",
     "\xc2\x80\xdf\xbf\xe0\xa0\x80", 7},
};

static void test_bytes(void **state)
{
    (void)state;
    sw_check_reset();
    sw_tdec_t *dec = sw_tdec_new();
    for (size_t i = 0; i < sizeof(k_bytes) / sizeof(k_bytes[0]); i++) {
        const bytes_case_t *c = &k_bytes[i];
        sw_check_case("%s", c->name);
        sw_event_t ev;
        char err[256] = "";
        sw_err_t rc = sw_tdec_json(dec, c->line, strlen(c->line), &ev, err, sizeof(err));
        SW_CHECK(rc == SW_OK, "got %d \"%s\", expected SW_OK", (int)rc, err);
        if (rc == SW_OK) CHECK_BYTES(ev.host, c->want, c->want_len);
    }
    sw_tdec_destroy(dec);
    end_test();
}

/* ---- key prediction ---------------------------------------------------------- */

typedef struct seq_step_s {
    const char *line;
    const char *want; /* expected fields */
} seq_step_t;

#define LINE_A                                                                            \
    "{\"timestamp_ns\": 100, \"event_type\": \"sample\", \"rank\": 1, \"world_size\": 4," \
    " \"job_id\": \"ja\", \"session_id\": \"sa\", \"pid\": 7, \"host\": \"ha\","          \
    " \"device_used_bytes\": 10, \"sampling_interval_ms\": 5, \"device_total_bytes\": 99}"
#define WANT_A                                                                             \
    "{\"timestamp_ns\": 100, \"kind\": \"sample\", \"rank\": 1, \"world_size\": 4,"        \
    " \"job_id\": \"ja\", \"session_id\": \"sa\", \"pid\": 7, \"host\": \"ha\","           \
    " \"device_used_bytes\": 10, \"sampling_interval_ms\": 5, \"device_total_bytes\": 99," \
    " \"device_free_bytes\": null}"

static const seq_step_t k_seq[] = {
    {LINE_A, WANT_A},
    /* the same fields in reverse order, with other values */
    {"{\"device_free_bytes\": 98, \"sampling_interval_ms\": 6, \"device_used_bytes\": 20,"
     " \"host\": \"hb\", \"pid\": 8, \"session_id\": \"sb\", \"job_id\": \"jb\", \"world_size\": 2,"
     " \"rank\": 0, \"event_type\": \"other\", \"timestamp_ns\": 200}",
     "{\"timestamp_ns\": 200, \"kind\": \"other\", \"rank\": 0, \"world_size\": 2,"
     " \"job_id\": \"jb\", \"session_id\": \"sb\", \"pid\": 8, \"host\": \"hb\","
     " \"device_used_bytes\": 20, \"sampling_interval_ms\": 6, \"device_total_bytes\": null,"
     " \"device_free_bytes\": 98}"},
    {LINE_A, WANT_A},
    /* a key that starts like the predicted one, and unknown keys between */
    {"{\"timestamp_ns\": 300, \"event_type\": \"sample\", \"rankx\": 3, \"rank\": 2,"
     " \"world_sizes\": 1, \"world_size\": 3, \"zz\": 1, \"job_id\": \"jc\", \"session\": \"no\","
     " \"pid\": 9, \"hos\": \"no\", \"host\": \"hc\", \"device_used_bytes\": 30}",
     "{\"timestamp_ns\": 300, \"rank\": 2, \"world_size\": 3, \"job_id\": \"jc\","
     " \"session_id\": null, \"pid\": 9, \"host\": \"hc\", \"device_used_bytes\": 30,"
     " \"sampling_interval_ms\": 0, \"device_total_bytes\": null}"},
    /* the predicted key with an escape, then a predicted key as a value */
    {"{\"timestamp_ns\": 400, \"event_type\": \"sample\", \"r\\u0061nk\": 1, \"world_size\": 2,"
     " \"job_id\": \"rank\", \"pid\": 1, \"host\": \"pid\", \"device_used_bytes\": 40}",
     "{\"timestamp_ns\": 400, \"rank\": 1, \"world_size\": 2, \"job_id\": \"rank\", \"pid\": 1,"
     " \"host\": \"pid\", \"device_used_bytes\": 40}"},
    /* fewer keys: nothing is left over from the previous lines */
    {"{\"event_type\": \"x\", \"timestamp_ns\": 500}",
     "{\"timestamp_ns\": 500, \"rank\": 0, \"world_size\": 1, \"job_id\": null, \"session_id\": null,"
     " \"pid\": -1, \"host\": \"unknown\", \"device_used_bytes\": null, \"sampling_interval_ms\": 0,"
     " \"device_total_bytes\": null, \"metadata\": \"{}\", \"phase\": null}"},
    {LINE_A, WANT_A},
    /* the predicted key cut off by the end of the line */
    {"{\"timestamp_ns\": 600, \"event_type\": \"x\", \"ra", NULL},
    {LINE_A, WANT_A},
};

static void test_key_prediction(void **state)
{
    (void)state;
    sw_check_reset();
    sw_tdec_t *dec = sw_tdec_new();
    char name[64];
    for (size_t i = 0; i < sizeof(k_seq) / sizeof(k_seq[0]); i++) {
        snprintf(name, sizeof(name), "prediction step %zu", i + 1);
        sw_check_case("%s", name);
        sw_event_t ev;
        char err[256] = "";
        sw_err_t rc = sw_tdec_json(dec, k_seq[i].line, strlen(k_seq[i].line), &ev, err,
                                   sizeof(err));
        if (!k_seq[i].want) {
            SW_CHECK(rc == SW_ERR_PARSE, "got %d \"%s\", expected SW_ERR_PARSE", (int)rc, err);
            continue;
        }
        SW_CHECK(rc == SW_OK, "got %d \"%s\", expected SW_OK", (int)rc, err);
        if (rc == SW_OK) check_fields(__FILE__, __LINE__, &ev, k_seq[i].want);
    }
    /* A fresh decoder gives the same results as the trained one. */
    for (size_t i = 0; i < sizeof(k_seq) / sizeof(k_seq[0]); i++) {
        if (!k_seq[i].want) continue;
        sw_tdec_t *fresh = sw_tdec_new();
        snprintf(name, sizeof(name), "fresh decoder, step %zu", i + 1);
        sw_check_case("%s", name);
        sw_event_t ev;
        char err[256] = "";
        sw_err_t rc = sw_tdec_json(fresh, k_seq[i].line, strlen(k_seq[i].line), &ev, err,
                                   sizeof(err));
        SW_CHECK(rc == SW_OK, "got %d \"%s\", expected SW_OK", (int)rc, err);
        if (rc == SW_OK) check_fields(__FILE__, __LINE__, &ev, k_seq[i].want);
        sw_tdec_destroy(fresh);
    }
    sw_tdec_destroy(dec);
    end_test();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_key_prediction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
