/*
 * The notify decisions (src/notify/sw_notify.c) and the record parser they
 * rely on (src/codec/sw_codec_record.c): every fixture record parses and
 * writes back the same JSON; the episode table dedups, opens, closes,
 * schedules Alertmanager re-sends and says where to rebuild from; answers
 * are classified; backoff stays in its bounds and honours Retry-After; the
 * rate-limit bucket; SHA-256 and HMAC-SHA256 against FIPS 180-2 and RFC
 * 4231 vectors. No network, no clock.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_codec_alert.h"
#include "sw_codec_avro.h"
#include "sw_codec_pager.h"
#include "sw_codec_record.h"
#include "sw_notify.h"
#include "sw_testlib.h"

static void hex(const uint8_t *d, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_sha256_hmac(void **state)
{
    (void)state;
    uint8_t d[SW_SHA256_LEN];
    char h[65];
    sw_sha256("abc", 3, d);
    hex(d, sizeof(d), h);
    SW_ASSERT_STREQ(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sw_sha256(two, strlen(two), d);
    hex(d, sizeof(d), h);
    SW_ASSERT_STREQ(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* RFC 4231 test case 2 */
    const char *data = "what do ya want for nothing?";
    sw_hmac_sha256("Jefe", 4, data, strlen(data), d);
    hex(d, sizeof(d), h);
    SW_ASSERT_STREQ(h, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    /* RFC 4231 test case 6: a key longer than the block is hashed first. */
    uint8_t key[131];
    memset(key, 0xaa, sizeof(key));
    const char *big = "Test Using Larger Than Block-Size Key - Hash Key First";
    sw_hmac_sha256(key, sizeof(key), big, strlen(big), d);
    hex(d, sizeof(d), h);
    SW_ASSERT_STREQ(h, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    char sig[72];
    sw_notify_signature("Jefe", data, strlen(data), sig);
    SW_ASSERT_STREQ(sig, "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

static void test_classify_backoff(void **state)
{
    (void)state;
    static const struct {
        long status;
        sw_notify_outcome_t want;
    } cases[] = {
        {200, SW_NOTIFY_ACCEPTED},  {202, SW_NOTIFY_ACCEPTED},  {0, SW_NOTIFY_RETRY},
        {408, SW_NOTIFY_RETRY},     {429, SW_NOTIFY_RETRY},     {500, SW_NOTIFY_RETRY},
        {503, SW_NOTIFY_RETRY},     {400, SW_NOTIFY_PERMANENT}, {403, SW_NOTIFY_PERMANENT},
        {413, SW_NOTIFY_PERMANENT}, {404, SW_NOTIFY_PERMANENT}, {301, SW_NOTIFY_PERMANENT},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (sw_notify_classify(cases[i].status) != cases[i].want)
            SW_FAIL("status %ld: got %s", cases[i].status,
                    sw_notify_outcome_str(sw_notify_classify(cases[i].status)));
    }
    sw_notify_backoff_t b = {100, 1000};
    for (uint64_t rnd = 0; rnd < 2000; rnd += 7) {
        int64_t d0 = sw_notify_backoff_ms(&b, 0, rnd * 2654435761u, -1);
        SW_ASSERT_TRUE(d0 >= 50 && d0 <= 100);
        int64_t d2 = sw_notify_backoff_ms(&b, 2, rnd * 2654435761u, -1);
        SW_ASSERT_TRUE(d2 >= 200 && d2 <= 400);
        int64_t d9 = sw_notify_backoff_ms(&b, 60, rnd * 2654435761u, -1);
        SW_ASSERT_TRUE(d9 >= 500 && d9 <= 1000);
    }
    /* Jitter: not every delay the same. */
    SW_ASSERT_I64_NE(sw_notify_backoff_ms(&b, 3, 1, -1), sw_notify_backoff_ms(&b, 3, 400, -1));
    /* Retry-After wins, even over max. */
    SW_ASSERT_I64(sw_notify_backoff_ms(&b, 0, 5, 5000), 5000);
    int64_t ms = -1;
    SW_ASSERT_TRUE(sw_notify_retry_after("120", 0, &ms));
    SW_ASSERT_I64(ms, 120000);
    SW_ASSERT_TRUE(sw_notify_retry_after(" 0", 0, &ms));
    SW_ASSERT_I64(ms, 0);
    /* 2015-10-21T07:28:00Z = 1445412480 s */
    SW_ASSERT_TRUE(sw_notify_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412470000, &ms));
    SW_ASSERT_I64(ms, 10000);
    SW_ASSERT_TRUE(sw_notify_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 1445412490000, &ms));
    SW_ASSERT_I64(ms, 0);
    /* The obsolete HTTP-date forms a server may still send (RFC 9110 5.6.7). */
    SW_ASSERT_TRUE(sw_notify_retry_after("Wednesday, 21-Oct-15 07:28:00 GMT", 1445412470000, &ms));
    SW_ASSERT_I64(ms, 10000);
    SW_ASSERT_TRUE(sw_notify_retry_after("Wed Oct 21 07:28:00 2015", 1445412470000, &ms));
    SW_ASSERT_I64(ms, 10000);
    SW_ASSERT_FALSE(sw_notify_retry_after("soon", 0, &ms));
    SW_ASSERT_FALSE(sw_notify_retry_after("-3", 0, &ms));
    SW_ASSERT_FALSE(sw_notify_retry_after("12abc", 0, &ms));
}

static void test_bucket(void **state)
{
    (void)state;
    sw_notify_bucket_t b;
    sw_notify_bucket_init(&b, 2.0, 1000);
    SW_ASSERT_I64(sw_notify_bucket_take(&b, 1000), 0);
    SW_ASSERT_I64(sw_notify_bucket_take(&b, 1000), 0);
    int64_t wait = sw_notify_bucket_take(&b, 1000);
    SW_ASSERT_TRUE(wait > 0 && wait <= 501);
    SW_ASSERT_I64(sw_notify_bucket_take(&b, 1000 + wait), 0);
    sw_notify_bucket_init(&b, 0, 0);
    for (int i = 0; i < 100; i++) SW_ASSERT_I64(sw_notify_bucket_take(&b, 0), 0);
}

/* A record of job @p job with the given lifecycle fields, as JSON. */
static void make_json(sw_buf_t *out, const char *action, const char *job, int64_t episode,
                      int64_t revision, const char *severity, bool episode_open)
{
    out->len = 0;
    sw_buf_printf(
        out,
        "{\"action\":\"%s\",\"job_id\":\"%s\",\"episode\":%lld,\"revision\":%lld,"
        "\"event_timestamp_ns\":1763700001098721310,\"world_size\":2,"
        "\"participating_ranks\":[0,1],\"missing_ranks\":[],"
        "\"rank_sample_counts\":{\"0\":3,\"1\":3},\"alignment_offsets_ns\":{\"0\":0,\"1\":5},"
        "\"cluster_onset_timestamp_ns\":1763700001095714459,\"first_cause_suspects\":[],"
        "\"notes\":[],\"severity\":\"%s\",\"episode_open\":%s}",
        action, job, (long long)episode, (long long)revision, severity,
        episode_open ? "true" : "false");
}

typedef struct step_s {
    const char *action;
    const char *job;
    int64_t episode, revision;
    const char *severity;
    bool episode_open; /* summaries */
    sw_notify_verdict_t want;
    int want_confidence;
    size_t want_open; /* open episodes after the step */
} step_t;

static void test_episode_table(void **state)
{
    (void)state;
    static const step_t steps[] = {
        {"trigger", "a", 1, 0, "critical", true, SW_NOTIFY_TRIGGER, 2, 1},
        {"trigger", "a", 1, 0, "critical", true, SW_NOTIFY_DUPLICATE, 2, 1},
        {"trigger", "b", 1, 0, "warning", true, SW_NOTIFY_TRIGGER, 0, 2},
        /* an update with a lower severity keeps the trigger's */
        {"update", "a", 1, 1, "warning", true, SW_NOTIFY_TRIGGER, 2, 2},
        {"update", "a", 1, 1, "warning", true, SW_NOTIFY_DUPLICATE, 2, 2},
        {"trigger", "a", 1, 0, "critical", true, SW_NOTIFY_DUPLICATE, 2, 2},
        {"resolve", "a", 1, 2, "info", false, SW_NOTIFY_RESOLVE, 2, 1},
        {"resolve", "a", 1, 2, "info", false, SW_NOTIFY_DUPLICATE, 2, 1},
        {"update", "a", 1, 1, "warning", true, SW_NOTIFY_DUPLICATE, 2, 1},
        /* a summary after the resolve: nothing open, nothing to page */
        {"summary", "a", 1, 2, "info", false, SW_NOTIFY_SKIP, 2, 1},
        /* b goes idle in the middle of its storm: the summary closes it, once */
        {"summary", "b", 1, 0, "info", true, SW_NOTIFY_RESOLVE, 0, 0},
        {"summary", "b", 1, 0, "info", true, SW_NOTIFY_DUPLICATE, 0, 0},
        {"trigger", "a", 2, 0, "error", true, SW_NOTIFY_TRIGGER, 1, 1},
        /* a job never seen: its resolve still goes out */
        {"resolve", "c", 4, 3, "info", false, SW_NOTIFY_RESOLVE, -2, 1},
        {"summary", "d", 0, 0, "info", false, SW_NOTIFY_SKIP, -2, 1},
    };
    sw_notify_t *n = sw_notify_new(1000);
    sw_arena_t arena;
    sw_arena_init(&arena);
    sw_buf_t js;
    sw_buf_init(&js);
    char err[256];
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        const step_t *s = &steps[i];
        make_json(&js, s->action, s->job, s->episode, s->revision, s->severity, s->episode_open);
        sw_record_t rec;
        sw_arena_reset(&arena);
        if (sw_record_parse_json(js.data, js.len, &arena, &rec, err, sizeof(err)) != SW_OK)
            SW_FAIL("step %zu: %s", i, err);
        int conf = 99;
        sw_notify_verdict_t v = sw_notify_decide(n, &rec, &conf);
        if (v != s->want)
            SW_FAIL("step %zu (%s %s %lld/%lld): got %s, want %s", i, s->action, s->job,
                    (long long)s->episode, (long long)s->revision, sw_notify_verdict_str(v),
                    sw_notify_verdict_str(s->want));
        if (v == SW_NOTIFY_TRIGGER || v == SW_NOTIFY_RESOLVE)
            if (conf != s->want_confidence)
                SW_FAIL("step %zu: confidence %d, want %d", i, conf, s->want_confidence);
        sw_notify_apply(n, &rec, v, conf, js.data, js.len, 0, (int64_t)i * 10, 0);
        if (sw_notify_open_count(n) != s->want_open)
            SW_FAIL("step %zu: %zu open, want %zu", i, sw_notify_open_count(n), s->want_open);
    }
    /* Only a/2 is open, opened by step 12 at offset 120. */
    SW_ASSERT_I64(sw_notify_rebuild_offset(n, 0, 1000), 120);
    SW_ASSERT_I64(sw_notify_rebuild_offset(n, 1, 1000), 1000);
    /* Re-sends: due 1000 ms after the apply (now 0), then every 1000 ms. */
    sw_notify_episode_t due[4];
    SW_ASSERT_I64(sw_notify_next_due(n), 1000);
    SW_ASSERT_I64(sw_notify_due(n, 999, due, 4), 0);
    SW_ASSERT_I64(sw_notify_due(n, 1000, due, 4), 1);
    SW_ASSERT_I64(due[0].episode_confidence, 1);
    SW_ASSERT_I64(due[0].first_offset, 120);
    SW_ASSERT_NOT_NULL(strstr(due[0].json, "\"episode\":2"));
    SW_ASSERT_I64(sw_notify_due(n, 1500, due, 4), 0);
    SW_ASSERT_I64(sw_notify_next_due(n), 2000);
    sw_notify_all_due(n, 1600);
    SW_ASSERT_I64(sw_notify_due(n, 1600, due, 4), 1);
    /* Revoked: forgotten. */
    sw_notify_drop_partition(n, 0);
    SW_ASSERT_I64(sw_notify_open_count(n), 0);
    SW_ASSERT_I64(sw_notify_next_due(n), INT64_MAX);
    make_json(&js, "trigger", "a", 2, 0, "error", true);
    sw_record_t rec;
    sw_arena_reset(&arena);
    SW_ASSERT_I64(sw_record_parse_json(js.data, js.len, &arena, &rec, err, sizeof(err)), SW_OK);
    int conf;
    SW_ASSERT_I64(sw_notify_decide(n, &rec, &conf), SW_NOTIFY_TRIGGER);
    sw_buf_clear(&js);
    sw_arena_clear(&arena);
    sw_notify_destroy(n);
}

/* Many jobs: the table grows and still finds each. */
static void test_many_jobs(void **state)
{
    (void)state;
    sw_notify_t *n = sw_notify_new(1000);
    sw_arena_t arena;
    sw_arena_init(&arena);
    sw_buf_t js, job;
    sw_buf_init(&js);
    sw_buf_init(&job);
    char err[256];
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 3000; i++) {
            job.len = 0;
            sw_buf_printf(&job, "job-%d", i);
            make_json(&js, "trigger", sw_buf_cstr(&job), 1, 0, "critical", true);
            sw_record_t rec;
            sw_arena_reset(&arena);
            SW_ASSERT_I64(sw_record_parse_json(js.data, js.len, &arena, &rec, err, sizeof(err)),
                          SW_OK);
            int conf;
            sw_notify_verdict_t v = sw_notify_decide(n, &rec, &conf);
            SW_ASSERT_I64(v, pass == 0 ? SW_NOTIFY_TRIGGER : SW_NOTIFY_DUPLICATE);
            sw_notify_apply(n, &rec, v, conf, js.data, js.len, i % 4, i, 0);
        }
    }
    SW_ASSERT_I64(sw_notify_open_count(n), 3000);
    sw_notify_drop_partition(n, 1);
    SW_ASSERT_I64(sw_notify_open_count(n), 2250);
    sw_buf_clear(&js);
    sw_buf_clear(&job);
    sw_arena_clear(&arena);
    sw_notify_destroy(n);
}

/* Every record of every fixture parses and writes back as the same JSON. */
static void test_parse_roundtrip(void **state)
{
    (void)state;
    DIR *d = opendir(sw_test_fixtures());
    SW_ASSERT_NOT_NULL(d);
    struct dirent *de;
    size_t n_records = 0;
    sw_arena_t arena;
    sw_arena_init(&arena);
    while ((de = readdir(d)) != NULL) {
        size_t nl = strlen(de->d_name);
        if (nl < 13 || strcmp(de->d_name + nl - 13, ".stream.jsonl") != 0) continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", sw_test_fixtures(), de->d_name);
        sw_buf_t text;
        sw_buf_init(&text);
        SW_ASSERT_TRUE(sw_test_read_file(path, &text));
        const char *p = text.data, *end = text.data + text.len;
        while (p < end) {
            const char *nlp = memchr(p, '\n', (size_t)(end - p));
            size_t len = nlp ? (size_t)(nlp - p) : (size_t)(end - p);
            if (len) {
                sw_record_t rec;
                char err[256];
                sw_arena_reset(&arena);
                if (sw_record_parse_json(p, len, &arena, &rec, err, sizeof(err)) != SW_OK)
                    SW_FAIL("%s: %s", de->d_name, err);
                sw_buf_t out;
                sw_buf_init(&out);
                sw_alert_json_record(&out, &rec);
                json_error_t je;
                json_t *want = json_loadb(p, len, 0, &je);
                json_t *got = json_loadb(out.data, out.len, 0, &je);
                SW_ASSERT_NOT_NULL(want);
                SW_ASSERT_NOT_NULL(got);
                char why[512];
                if (!sw_test_json_equal(got, want, true, why, sizeof(why)))
                    SW_FAIL("%s: %s\n%.*s", de->d_name, why, (int)out.len, out.data);
                /* The same record through Avro (what notify reads when run
                 * writes output.format=avro): encoded, decoded to JSON,
                 * parsed again, it writes the same JSON. */
                sw_buf_t avro, json2, out2;
                sw_buf_init(&avro);
                sw_buf_init(&json2);
                sw_buf_init(&out2);
                if (sw_avro_encode_record(&rec, 2, &avro, err, sizeof(err)) != SW_OK)
                    SW_FAIL("%s: avro encode: %s", de->d_name, err);
                if (sw_avro_decode_record_json(avro.data, avro.len, 2, &json2, err, sizeof(err)) !=
                    SW_OK)
                    SW_FAIL("%s: avro decode: %s", de->d_name, err);
                sw_arena_t arena2;
                sw_arena_init(&arena2);
                sw_record_t rec2;
                if (sw_record_parse_json(json2.data, json2.len, &arena2, &rec2, err, sizeof(err)) !=
                    SW_OK)
                    SW_FAIL("%s: parse of the Avro-decoded record: %s", de->d_name, err);
                sw_alert_json_record(&out2, &rec2);
                json_t *got2 = json_loadb(out2.data, out2.len, 0, &je);
                SW_ASSERT_NOT_NULL(got2);
                if (!sw_test_json_equal(got2, want, true, why, sizeof(why)))
                    SW_FAIL("%s (Avro): %s", de->d_name, why);
                json_decref(got2);
                sw_arena_clear(&arena2);
                sw_buf_clear(&avro);
                sw_buf_clear(&json2);
                sw_buf_clear(&out2);
                json_decref(want);
                json_decref(got);
                sw_buf_clear(&out);
                n_records++;
            }
            p += len + 1;
        }
        sw_buf_clear(&text);
    }
    closedir(d);
    sw_arena_clear(&arena);
    SW_ASSERT_TRUE(n_records >= 20);
}

static void test_parse_errors(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        const char *want;
    } cases[] = {
        {"not json", "not JSON"},
        {"[1]", "not a JSON object"},
        {"{\"job_id\":\"a\",\"episode\":1,\"revision\":0}", "key \"action\" is missing"},
        {"{\"action\":\"page\",\"job_id\":\"a\",\"episode\":1,\"revision\":0}",
         "key \"action\" is not"},
        {"{\"action\":\"trigger\",\"episode\":1,\"revision\":0}", "key \"job_id\" is missing"},
        {"{\"action\":\"trigger\",\"job_id\":\"a\",\"revision\":0}", "key \"episode\" is missing"},
        {"{\"action\":\"trigger\",\"job_id\":\"a\",\"episode\":-1,\"revision\":0}",
         "key \"episode\" is not an integer >= 0"},
        {"{\"action\":\"trigger\",\"job_id\":\"a\",\"episode\":1,\"revision\":0,"
         "\"first_cause_suspects\":[{\"rank\":1,\"confidence\":\"sure\"}]}",
         "key \"confidence\""},
        {"{\"action\":\"trigger\",\"job_id\":\"a\",\"episode\":1,\"revision\":0,"
         "\"rank_sample_counts\":{\"x\":1}}",
         "key \"rank_sample_counts\""},
    };
    sw_arena_t arena;
    sw_arena_init(&arena);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sw_record_t rec;
        char err[256] = "";
        sw_arena_reset(&arena);
        sw_err_t e = sw_record_parse_json(cases[i].json, strlen(cases[i].json), &arena, &rec, err,
                                          sizeof(err));
        if (e == SW_OK || !strstr(err, cases[i].want))
            SW_FAIL("case %zu: err %d \"%s\", want \"%s\"", i, (int)e, err, cases[i].want);
    }
    sw_arena_clear(&arena);
}

/* SPEC 8.6 "a crash ends": a cascade's records through the table. The
 * crash ends the warning's re-sends, the warning's own close still
 * resolves it; the summary ends the crash's re-sends, its close resolves
 * it, once. */
static void test_crash_lifecycle(void **state)
{
    (void)state;
    static const char fd[] =
        "\"first_death\": {\"rank\": 4, \"cause\": \"oom\", \"timestamp_ns\": 5, "
        "\"aligned_timestamp_ns\": 5, \"host\": \"h\", \"device_id\": null, \"local_rank\": null, "
        "\"pid\": 1, \"session_id\": null, \"oom_reason\": null}";
    char recs[6][640];
    snprintf(recs[0], sizeof(recs[0]),
             "{\"action\": \"warning\", \"job_id\": \"x\", \"warning\": 1, \"revision\": 0, "
             "\"event_timestamp_ns\": 1, \"open\": true, \"ranks\": []}");
    snprintf(recs[1], sizeof(recs[1]),
             "{\"action\": \"crash\", \"job_id\": \"x\", \"crash\": 1, \"revision\": 0, "
             "\"event_timestamp_ns\": 5, \"open\": true, %s, \"deaths\": 1, \"dead_ranks\": [4], "
             "\"closed_warning\": 1}",
             fd);
    snprintf(recs[2], sizeof(recs[2]),
             "{\"action\": \"warning\", \"job_id\": \"x\", \"warning\": 1, \"revision\": 1, "
             "\"event_timestamp_ns\": 5, \"open\": false, \"ranks\": [], \"closed_by\": \"crash\", "
             "\"closed_by_crash\": 1}");
    snprintf(recs[3], sizeof(recs[3]),
             "{\"action\": \"crash\", \"job_id\": \"x\", \"crash\": 1, \"revision\": 1, "
             "\"event_timestamp_ns\": null, \"open\": false, %s, \"deaths\": 1, \"dead_ranks\": "
             "[4], \"closed_by\": \"job_summarised\"}",
             fd);
    sw_buf_t sum;
    sw_buf_init(&sum);
    make_json(&sum, "summary", "x", 0, 0, "info", false);
    const char *order[] = {recs[0], recs[1], recs[2], sw_buf_cstr(&sum), recs[3], recs[3]};
    static const sw_notify_verdict_t want[] = {SW_NOTIFY_TRIGGER, SW_NOTIFY_TRIGGER,
                                               SW_NOTIFY_RESOLVE, SW_NOTIFY_SKIP,
                                               SW_NOTIFY_RESOLVE, SW_NOTIFY_DUPLICATE};
    static const size_t open_after[] = {1, 1, 1, 0, 0, 0};
    sw_notify_t *n = sw_notify_new(1000);
    sw_arena_t arena;
    sw_arena_init(&arena);
    for (size_t i = 0; i < 6; i++) {
        sw_record_t rec;
        char err[256];
        sw_arena_reset(&arena);
        SW_ASSERT(sw_record_parse_json(order[i], strlen(order[i]), &arena, &rec, err,
                                       sizeof(err)) == SW_OK,
                  "record %zu: %s", i, err);
        int conf;
        sw_notify_verdict_t v = sw_notify_decide(n, &rec, &conf);
        SW_ASSERT(v == want[i], "record %zu: %s, expected %s", i, sw_notify_verdict_str(v),
                  sw_notify_verdict_str(want[i]));
        sw_notify_apply(n, &rec, v, conf, order[i], strlen(order[i]), 0, (int64_t)i, 0);
        SW_ASSERT_I64((int64_t)sw_notify_open_count(n), (int64_t)open_after[i]);
    }
    sw_arena_clear(&arena);
    sw_buf_clear(&sum);
    sw_notify_destroy(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_hmac),  cmocka_unit_test(test_classify_backoff),
        cmocka_unit_test(test_bucket),       cmocka_unit_test(test_episode_table),
        cmocka_unit_test(test_many_jobs),    cmocka_unit_test(test_parse_roundtrip),
        cmocka_unit_test(test_parse_errors), cmocka_unit_test(test_crash_lifecycle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
