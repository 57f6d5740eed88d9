/*
 * libFuzzer target for the Avro codecs: arbitrary bytes through
 * sw_avro_schema_id(), sw_avro_decode_event() (Confluent framing with id 1,
 * the id the message carries, and bare bodies) and
 * sw_avro_decode_record_json() (id 2 and bare). A decoded event must be
 * valid (SPEC 2); encoding it again succeeds or fails cleanly, and what it
 * encodes to decodes to the same event and encodes to the same bytes.
 * sw_event_json() (`stormwatch tail`) writes it as one JSON line that
 * decodes to the same event. Decoded record JSON must be valid JSON.
 * Decoded events also go through the stream engine. The same bytes framed
 * with the ids of two other writer schemas (an older subset with ints; a
 * reordered one with extra fields and another PhaseScope) decode through
 * resolution plans the fast way (sw_avro_decode_event_plan) and the plain
 * way (sw_avro_plan_rewrite, then the decoder): both accept the same
 * inputs and give the same event. Deterministic; writes nothing to stdout.
 *
 * Corpus generator (not used while fuzzing): with SW_FUZZ_GEN_CORPUS=DIR
 * and SW_FUZZ_FIXTURES=tests/fixtures, LLVMFuzzerInitialize() writes seed
 * messages into DIR (events and records made from the fixtures, with the
 * project's own encoders, plus hostile variants) and exits. With
 * SW_FUZZ_GEN_LONG=1 as well it writes only seeds with 10 MB strings
 * (scripts/fuzz.sh makes them at run time; they are not committed).
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "sw_codec_telemetry.h"
#include "sw_json.h"
#include "sw_schemas.h"
#include "sw_event_json.h"

#define EV_ID 1
#define REC_ID 2

static void feed_engine(const sw_event_t *ev)
{
    char err[256];
    sw_params_t params = sw_params_default();
    params.window_samples = 2;
    params.stale_ms = 1;
    sw_detector_t *det = sw_detect_new(params);
    fuzz_feed_count_t fed = {0, 0, 0, 0, 0};
    fuzz_rec_count_t seen = {{0, 0, 0, 0}};
    const sw_record_t *rec = NULL;
    sw_err_t rc = sw_detect_feed(det, ev, 0, &rec, err, sizeof(err));
    FUZZ_CHECK(rc == SW_OK || rc == SW_ERR_LIMIT || rc == SW_ERR_CLOCK,
               "sw_detect_feed returned %d", (int)rc);
    fuzz_count_feed(&fed, rc, ev);
    if (rec) fuzz_check_record(rec, &seen);
    sw_detect_finish(det, fuzz_record_cb, &seen);
    fuzz_check_stats(det, &fed, &seen, params.window_samples);
    sw_detect_destroy(det);
}

/* Re-encode a decoded event and decode that again. */
static void roundtrip(const sw_event_t *ev, int32_t id)
{
    char err[512], why[512];
    sw_buf_t enc1, enc2;
    sw_buf_init(&enc1);
    sw_buf_init(&enc2);
    sw_buf_puts(&enc1, "keep");
    sw_err_t rc = sw_avro_encode_event(ev, id, &enc1, err, sizeof(err));
    /* Everything a decoder accepted was UTF-8 and in range. */
    FUZZ_CHECK(rc == SW_OK, "a decoded event does not encode: %d: %s", (int)rc, err);
    FUZZ_CHECK(enc1.len > 4 && memcmp(enc1.data, "keep", 4) == 0, "encoder overwrote the buffer");
    sw_avro_dec_t *dec2 = sw_avro_dec_new();
    sw_event_t ev2;
    rc = sw_avro_decode_event(dec2, enc1.data + 4, enc1.len - 4, id, &ev2, err, sizeof(err));
    FUZZ_CHECK(rc == SW_OK, "re-encoded event does not decode: %d: %s", (int)rc, err);
    fuzz_check_event(&ev2, "avro re-decoded");
    /* The one allowed change: an event without a phase whose metadata text
     * holds a phase_scope (its typed scope was not a boundary) is written
     * with that key left out, or the decoder would take it. */
    bool meta_kept = ev2.metadata_json.len == ev->metadata_json.len &&
                     memcmp(ev2.metadata_json.ptr, ev->metadata_json.ptr, ev->metadata_json.len) ==
                         0;
    if (!meta_kept) {
        FUZZ_CHECK(!ev->has_phase, "metadata changed by re-encoding an event with a phase");
        sw_buf_t stripped;
        sw_buf_init(&stripped);
        sw_buf_putc(&stripped, '{');
        sw_json_members_except(ev->metadata_json, "phase_scope", &stripped);
        sw_buf_putc(&stripped, '}');
        FUZZ_CHECK(ev2.metadata_json.len == stripped.len &&
                       memcmp(ev2.metadata_json.ptr, stripped.data, stripped.len) == 0,
                   "re-encoding changed the metadata other than by leaving out phase_scope: %.*s",
                   (int)(ev2.metadata_json.len > 300 ? 300 : ev2.metadata_json.len),
                   ev2.metadata_json.ptr);
        sw_buf_clear(&stripped);
    }
    bool same = fuzz_same_event(ev, &ev2, meta_kept, why, sizeof(why));
    if (same) {
        rc = sw_avro_encode_event(&ev2, id, &enc2, err, sizeof(err));
        FUZZ_CHECK(rc == SW_OK, "second encoding failed: %s", err);
        FUZZ_CHECK(enc2.len == enc1.len - 4 && memcmp(enc2.data, enc1.data + 4, enc2.len) == 0,
                   "encode(decode(encode(ev))) != encode(ev)");
    }
    FUZZ_CHECK(same, "decode(encode(ev)) != ev: %s", why);
    sw_avro_dec_destroy(dec2);
    sw_buf_clear(&enc1);
    sw_buf_clear(&enc2);
}

static void check_event(sw_avro_dec_t *dec, const uint8_t *data, size_t size, int32_t id,
                        bool engine)
{
    char err[512];
    sw_event_t ev;
    err[0] = '\0';
    sw_err_t rc = sw_avro_decode_event(dec, data, size, id, &ev, err, sizeof(err));
    FUZZ_CHECK(rc == SW_OK || rc == SW_ERR_TRUNCATED || rc == SW_ERR_AVRO ||
                   rc == SW_ERR_INVALID_ARG,
               "sw_avro_decode_event returned %d", (int)rc);
    FUZZ_CHECK(rc == SW_OK || err[0] != '\0', "sw_avro_decode_event failed without a message");
    if (rc != SW_OK) return;
    fuzz_check_event(&ev, "avro");
    roundtrip(&ev, id);
    fuzz_check_event_json(&ev, "avro");
    if (engine) feed_engine(&ev);
}

static void check_record(const uint8_t *data, size_t size, int32_t id)
{
    char err[512];
    sw_buf_t out;
    sw_buf_init(&out);
    sw_buf_puts(&out, "pre");
    err[0] = '\0';
    sw_err_t rc = sw_avro_decode_record_json(data, size, id, &out, err, sizeof(err));
    FUZZ_CHECK(rc == SW_OK || rc == SW_ERR_TRUNCATED || rc == SW_ERR_AVRO,
               "sw_avro_decode_record_json returned %d", (int)rc);
    if (rc != SW_OK) {
        FUZZ_CHECK(err[0] != '\0', "sw_avro_decode_record_json failed without a message");
        FUZZ_CHECK(out.len == 3, "failed sw_avro_decode_record_json left output behind");
    } else {
        sw_arena_t arena;
        sw_arena_init(&arena);
        sw_jnode_t *root = sw_jdom_parse(out.data + 3, out.len - 3, &arena, err, sizeof(err));
        FUZZ_CHECK(root && root->type == SW_JN_OBJECT,
                   "decoded record is not a JSON object: %s: %.*s", root ? "" : err,
                   (int)(out.len - 3 > 300 ? 300 : out.len - 3), out.data + 3);
        sw_arena_clear(&arena);
    }
    sw_buf_clear(&out);
}

/* ------------------------------------------------------------------ */
/* Corpus generator                                                    */
/* ------------------------------------------------------------------ */

static const char *gen_dir;
static unsigned gen_count;

static void gen_write(const char *kind, const void *p, size_t n)
{
    char path[4096];
    uint64_t h = sw_hash_bytes(p, n, 0x5eed);
    snprintf(path, sizeof(path), "%s/%s-%016llx", gen_dir, kind, (unsigned long long)h);
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        perror(path);
        exit(1);
    }
    if (n && fwrite(p, 1, n, fp) != n) exit(1);
    fclose(fp);
    gen_count++;
}

static void gen_varint(sw_buf_t *b, uint64_t u)
{
    while (u >= 0x80) {
        sw_buf_putc(b, (char)(u | 0x80));
        u >>= 7;
    }
    sw_buf_putc(b, (char)u);
}

static void gen_long(sw_buf_t *b, int64_t v)
{
    gen_varint(b, ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0));
}

typedef struct gen_ctx_s {
    unsigned records;
    unsigned max_records;
} gen_ctx_t;

static void gen_record_cb(void *opaque, const sw_record_t *rec)
{
    gen_ctx_t *g = opaque;
    if (g->records >= g->max_records) return;
    char err[256];
    sw_buf_t b;
    sw_buf_init(&b);
    if (sw_avro_encode_record(rec, REC_ID, &b, err, sizeof(err)) == SW_OK) {
        gen_write("rec", b.data, b.len);
        g->records++;
    }
    sw_buf_clear(&b);
}

/* Events of one fixture file, and the records the engine makes of them. */
static void gen_fixture(const char *path, bool all_lines, gen_ctx_t *g)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return;
    sw_tdec_t *dec = sw_tdec_new();
    sw_detector_t *det = sw_detect_new(sw_params_default());
    char *line = NULL, err[512];
    size_t cap = 0;
    ssize_t n;
    unsigned lineno = 0;
    while ((n = getline(&line, &cap, fp)) > 0) {
        sw_event_t ev;
        lineno++;
        if (sw_tdec_json(dec, line, (size_t)n, &ev, err, sizeof(err)) != SW_OK) continue;
        if (all_lines || lineno % 97 == 1) {
            sw_buf_t b;
            sw_buf_init(&b);
            if (sw_avro_encode_event(&ev, lineno % 5 == 3 ? -1 : EV_ID, &b, err, sizeof(err)) ==
                SW_OK)
                gen_write(lineno % 5 == 3 ? "bare" : "ev", b.data, b.len);
            sw_buf_clear(&b);
        }
        const sw_record_t *rec = NULL;
        if (sw_detect_feed(det, &ev, lineno, &rec, err, sizeof(err)) == SW_OK && rec)
            gen_record_cb(g, rec);
    }
    sw_detect_finish(det, gen_record_cb, g);
    sw_detect_destroy(det);
    sw_tdec_destroy(dec);
    free(line);
    fclose(fp);
}

/* A phase event as a base for hostile variants. */
static sw_event_t gen_base_event(void)
{
    sw_event_t ev;
    memset(&ev, 0, sizeof(ev));
    ev.timestamp_ns = 0; /* one byte on the wire: easy to replace */
    ev.event_type = sw_str("sample");
    ev.kind = SW_EV_SAMPLE;
    ev.rank = 1;
    ev.world_size = 4;
    ev.has_job_id = true;
    ev.job_id = sw_str("job-1");
    ev.has_session_id = true;
    ev.session_id = sw_str("sess-1");
    ev.pid = 4000;
    ev.host = sw_str("node-0");
    ev.has_device_used = true;
    ev.device_used_bytes = 1073741824;
    ev.sampling_interval_ms = 100;
    ev.metadata_json = sw_str("{}");
    return ev;
}

static void gen_event(const sw_event_t *ev, int32_t id, const char *kind)
{
    char err[256];
    sw_buf_t b;
    sw_buf_init(&b);
    if (sw_avro_encode_event(ev, id, &b, err, sizeof(err)) == SW_OK) gen_write(kind, b.data, b.len);
    sw_buf_clear(&b);
}

/* Header + schema_version null + the given timestamp bytes + the rest of
 * the base encoding after its one-byte timestamp. */
static void gen_with_ts_bytes(const sw_buf_t *base, const void *ts, size_t n)
{
    sw_buf_t b;
    sw_buf_init(&b);
    sw_buf_put(&b, base->data, 6);
    sw_buf_put(&b, ts, n);
    sw_buf_put(&b, base->data + 7, base->len - 7);
    gen_write("hostile", b.data, b.len);
    sw_buf_clear(&b);
}

/* Replace the event_type length (offset 7, one byte for "sample"). */
static void gen_with_len(const sw_buf_t *base, int64_t len)
{
    sw_buf_t b;
    sw_buf_init(&b);
    sw_buf_put(&b, base->data, 7);
    gen_long(&b, len);
    sw_buf_put(&b, base->data + 8, base->len - 8);
    gen_write("hostile", b.data, b.len);
    sw_buf_clear(&b);
}

static void gen_hostile(void)
{
    char err[256];
    sw_event_t ev = gen_base_event();
    sw_buf_t base;
    sw_buf_init(&base);
    if (sw_avro_encode_event(&ev, EV_ID, &base, err, sizeof(err)) != SW_OK) exit(1);

    /* Empty and short messages, framing. */
    gen_write("hostile", "", 0);
    gen_write("hostile", "\0", 1);
    gen_write("hostile", "\0\0\0\0", 4);
    static const uint8_t ids[][5] = {{0, 0, 0, 0, 0},
                                     {0, 0, 0, 0, 2},
                                     {0, 0x7f, 0xff, 0xff, 0xff},
                                     {0, 0x80, 0, 0, 0},
                                     {0, 0xff, 0xff, 0xff, 0xff},
                                     {1, 0, 0, 0, 1},
                                     {0xff, 0, 0, 0, 1},
                                     {'{', '"', 'a', '"', ':'}};
    for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++) {
        sw_buf_t b;
        sw_buf_init(&b);
        sw_buf_put(&b, ids[k], 5);
        sw_buf_put(&b, base.data + 5, base.len - 5);
        gen_write("hostile", b.data, b.len);
        sw_buf_clear(&b);
    }
    /* Truncated at every length, and one trailing byte. */
    for (size_t n = 0; n < base.len; n++) gen_write("trunc", base.data, n);
    {
        sw_buf_t b;
        sw_buf_init(&b);
        sw_buf_put(&b, base.data, base.len);
        sw_buf_putc(&b, 0);
        gen_write("hostile", b.data, b.len);
        sw_buf_clear(&b);
    }
    /* Timestamps near 2^63 and -2^63, and malformed varints. */
    static const int64_t tss[] = {INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MIN + 1, -1, 1};
    for (size_t k = 0; k < sizeof(tss) / sizeof(tss[0]); k++) {
        sw_buf_t v;
        sw_buf_init(&v);
        gen_long(&v, tss[k]);
        gen_with_ts_bytes(&base, v.data, v.len);
        sw_buf_clear(&v);
    }
    static const uint8_t v10[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t v10big[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    static const uint8_t v11[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t vpad[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    gen_with_ts_bytes(&base, v10, sizeof(v10));
    gen_with_ts_bytes(&base, v10big, sizeof(v10big));
    gen_with_ts_bytes(&base, v11, sizeof(v11));
    gen_with_ts_bytes(&base, vpad, sizeof(vpad));
    /* String lengths: negative, huge, one too many, INT64 extremes. */
    static const int64_t lens[] = {-1, -6, 7, 1000, INT64_MAX, INT64_MIN, (int64_t)1 << 62, 0};
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) gen_with_len(&base, lens[k]);
    /* Invalid UTF-8 in event_type, in place ("sample" -> bytes). */
    static const char *bad_utf8[] = {"\xff", "\xc0", "\xed\xa0", "\xf4\x90", "\xe0\x80"};
    for (size_t k = 0; k < sizeof(bad_utf8) / sizeof(bad_utf8[0]); k++) {
        sw_buf_t b;
        sw_buf_init(&b);
        sw_buf_put(&b, base.data, base.len);
        memcpy(b.data + 8, bad_utf8[k], strlen(bad_utf8[k]));
        gen_write("hostile", b.data, b.len);
        sw_buf_clear(&b);
    }
    /* Union index out of range at schema_version (offset 5). */
    static const int64_t unions[] = {2, -1, 3, INT64_MAX};
    for (size_t k = 0; k < sizeof(unions) / sizeof(unions[0]); k++) {
        sw_buf_t b;
        sw_buf_init(&b);
        sw_buf_put(&b, base.data, 5);
        gen_long(&b, unions[k]);
        sw_buf_put(&b, base.data + 6, base.len - 6);
        gen_write("hostile", b.data, b.len);
        sw_buf_clear(&b);
    }
    /* Field values that break SPEC 2, and extremes that do not. */
    {
        sw_event_t e = ev;
        e.rank = e.world_size;
        gen_event(&e, EV_ID, "hostile");
        e = ev;
        e.rank = -1;
        gen_event(&e, EV_ID, "hostile");
        e = ev;
        e.world_size = 0;
        e.rank = 0;
        gen_event(&e, EV_ID, "hostile");
        e = ev;
        e.world_size = INT64_MAX;
        e.rank = INT64_MAX - 1;
        gen_event(&e, EV_ID, "hostile");
        e = ev;
        e.device_used_bytes = -1;
        gen_event(&e, EV_ID, "hostile");
        e = ev;
        e.device_used_bytes = INT64_MAX;
        e.timestamp_ns = INT64_MAX;
        gen_event(&e, EV_ID, "hostile");
        e = ev;
        e.has_device_used = false;
        gen_event(&e, EV_ID, "hostile");
        e = ev;
        e.sampling_interval_ms = -5;
        gen_event(&e, EV_ID, "hostile");
        e = ev;
        e.has_job_id = true;
        e.job_id = sw_str("");
        gen_event(&e, EV_ID, "hostile");
        e = ev;
        e.event_type = sw_str("");
        gen_event(&e, EV_ID, "hostile");
        e = ev;
        e.event_type = sw_str("SAMPLE");
        e.schema_version.set = true;
        e.schema_version.value = INT64_MIN;
        e.allocator_change_bytes.set = true;
        e.allocator_change_bytes.value = INT64_MIN;
        gen_event(&e, EV_ID, "hostile");
    }
    /* Metadata texts: NaN, Infinity, huge numbers, non-objects, deep
     * nesting (300 levels), bad JSON, a phase_scope that hides. */
    {
        static char deep[700];
        size_t n = 0;
        n += (size_t)snprintf(deep + n, sizeof(deep) - n, "{\"a\":");
        for (int i = 0; i < 300; i++) deep[n++] = '[';
        for (int i = 0; i < 300; i++) deep[n++] = ']';
        deep[n++] = '}';
        deep[n] = '\0';
        static char deep_ok[600];
        n = 0;
        n += (size_t)snprintf(deep_ok + n, sizeof(deep_ok) - n, "{\"a\":");
        for (int i = 0; i < 250; i++) deep_ok[n++] = '[';
        for (int i = 0; i < 250; i++) deep_ok[n++] = ']';
        deep_ok[n++] = '}';
        deep_ok[n] = '\0';
        const char *metas[] = {
            "{\"x\": NaN, \"y\": Infinity, \"z\": -Infinity}",
            "{\"big\": 123456789012345678901234567890, \"e\": 1e999999, "
            "\"neg\": -9223372036854775809}",
            "null",
            "[]",
            "\"text\"",
            "42",
            "{",
            "{}}",
            "{\"a\":1,}",
            " {} ",
            deep,
            deep_ok,
            "{\"phase_scope\": {\"action\": \"enter\", \"name\": \"train\", \"path\": [\"train\"], "
            "\"scope_id\": \"s1\", \"parent_scope_id\": null, \"thread_id\": 1, \"thread_name\": "
            "\"Main\", \"sequence\": 1, \"depth\": 1}}",
            "{\"phase_scope\": {\"action\": \"enter\", \"name\": \"\\ud800\", \"path\": "
            "[\"\\udc00x\", \"\", 1, null], \"scope_id\": \"s\\u0000\", \"thread_id\": "
            "-9223372036854775808, \"thread_name\": \"t\", \"sequence\": 9223372036854775807}}",
            "{\"phase_scope\": 1, \"phase_scope\": {}}",
        };
        for (size_t k = 0; k < sizeof(metas) / sizeof(metas[0]); k++) {
            sw_event_t e = ev;
            e.metadata_json = sw_str(metas[k]);
            gen_event(&e, EV_ID, "meta");
        }
        /* Typed phase: a boundary, and one with a bad action. */
        sw_event_t e = ev;
        e.event_type = sw_str("phase_enter");
        e.kind = SW_EV_PHASE_ENTER;
        e.has_phase = true;
        e.phase.enter = true;
        e.phase.name = sw_str("step");
        e.phase.path[0] = sw_str("train");
        e.phase.path[1] = sw_str("step");
        e.phase.path_len = 2;
        e.phase.scope_id = sw_str("scope-2");
        e.phase.has_parent = true;
        e.phase.parent_scope_id = sw_str("scope-1");
        e.phase.thread_id = 1;
        e.phase.thread_name = sw_str("MainThread");
        e.phase.sequence = 2;
        e.phase.has_depth = true;
        e.phase.depth = 2;
        e.metadata_json = sw_str(metas[12]);
        gen_event(&e, EV_ID, "phase");
        gen_event(&e, -1, "phase");
        for (int i = 2; i < SW_PHASE_PATH_MAX; i++) e.phase.path[i] = sw_str("p");
        e.phase.path_len = SW_PHASE_PATH_MAX;
        gen_event(&e, EV_ID, "phase");
    }
    /* Records: block counts and map keys. */
    {
        sw_buf_t b;
        sw_buf_init(&b);
        static const uint8_t hdr[5] = {0, 0, 0, 0, REC_ID};
        sw_buf_put(&b, hdr, 5);
        gen_long(&b, 0); /* action trigger */
        gen_long(&b, 1); /* job_id set */
        gen_long(&b, 3);
        sw_buf_put(&b, "job", 3);
        gen_long(&b, 1); /* episode */
        gen_long(&b, 0); /* revision */
        gen_long(&b, 0); /* event_timestamp_ns null */
        gen_long(&b, 2); /* world_size */
        size_t mark = b.len;
        static const int64_t counts[] = {-1, INT64_MIN, INT64_MAX, 1000000, -2};
        for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
            b.len = mark;
            gen_long(&b, counts[k]);
            if (counts[k] < 0 && counts[k] != INT64_MIN) gen_long(&b, k == 4 ? -3 : 1);
            gen_long(&b, 5);
            gen_long(&b, 0);
            gen_write("rechostile", b.data, b.len);
        }
        /* A map key that is not a decimal rank. */
        b.len = mark;
        gen_long(&b, 0); /* participating */
        gen_long(&b, 0); /* missing */
        gen_long(&b, 1);
        gen_long(&b, 3);
        sw_buf_put(&b, "-01", 3);
        gen_long(&b, 7);
        gen_long(&b, 0);
        gen_write("rechostile", b.data, b.len);
        sw_buf_clear(&b);
    }
    sw_buf_clear(&base);
}

/* Seeds with 10 MB strings and lengths. */
static void gen_long_seeds(void)
{
    const size_t big = 10u * 1000u * 1000u;
    char *s = malloc(big + 64);
    if (!s) exit(1);
    memset(s, 'a', big);
    s[big] = '\0';
    sw_event_t ev = gen_base_event();
    ev.event_type = (sw_str_t){s, big};
    ev.kind = SW_EV_OTHER;
    gen_event(&ev, EV_ID, "long");
    ev = gen_base_event();
    ev.has_job_id = true;
    ev.job_id = (sw_str_t){s, big};
    gen_event(&ev, EV_ID, "long");
    /* metadata {"k": "aaa..."} and a metadata of 10 MB of '['. */
    memcpy(s, "{\"k\": \"", 7);
    memcpy(s + big - 2, "\"}", 2);
    ev = gen_base_event();
    ev.metadata_json = (sw_str_t){s, big};
    gen_event(&ev, EV_ID, "long");
    memset(s, '[', big);
    ev.metadata_json = (sw_str_t){s, big};
    gen_event(&ev, EV_ID, "long");
    /* A string that claims 10 MB and has 5. */
    sw_buf_t b;
    sw_buf_init(&b);
    static const uint8_t hdr[5] = {0, 0, 0, 0, EV_ID};
    sw_buf_put(&b, hdr, 5);
    gen_long(&b, 0);
    gen_long(&b, 1);
    gen_long(&b, (int64_t)big);
    memset(s, 'b', big / 2);
    sw_buf_put(&b, s, big / 2);
    gen_write("long", b.data, b.len);
    /* A record whose job_id is 10 MB. */
    b.len = 0;
    static const uint8_t rhdr[5] = {0, 0, 0, 0, REC_ID};
    sw_buf_put(&b, rhdr, 5);
    gen_long(&b, 0);
    gen_long(&b, 1);
    gen_long(&b, (int64_t)big);
    memset(s, 'c', big);
    sw_buf_put(&b, s, big);
    for (int i = 0; i < 32; i++) gen_long(&b, 0);
    gen_write("long", b.data, b.len);
    sw_buf_clear(&b);
    free(s);
}

static void generate(const char *fixtures)
{
    if (fuzz_env_flag("SW_FUZZ_GEN_LONG")) {
        gen_long_seeds();
        fprintf(stderr, "fuzz_avro: wrote %u long seed files to %s\n", gen_count, gen_dir);
        return;
    }
    gen_ctx_t g = {0, 400};
    DIR *d = opendir(fixtures);
    if (!d) {
        perror(fixtures);
        exit(1);
    }
    struct dirent *de;
    char **names = NULL;
    size_t n = 0;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 6, ".jsonl") != 0) continue;
        if (strstr(de->d_name, ".stream.")) continue;
        names = realloc(names, (n + 1) * sizeof(*names));
        names[n++] = strdup(de->d_name);
    }
    closedir(d);
    /* Directory order is not stable: sort for a reproducible corpus. */
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
            char *t = names[k];
            names[k] = names[k - 1];
            names[k - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", fixtures, names[i]);
        /* Every line of the hand-written fixtures; a sample of gen*. */
        gen_fixture(path, strncmp(names[i], "gen", 3) != 0, &g);
        free(names[i]);
    }
    free(names);
    gen_hostile();
    fprintf(stderr, "fuzz_avro: wrote %u seed files to %s\n", gen_count, gen_dir);
}

/* Writer schemas of the resolution checks (ids 11 and 13). */
static const char k_writer_v1[] =
    "{\"type\":\"record\",\"name\":\"TelemetryEvent\",\"fields\":["
    "{\"name\":\"timestamp_ns\",\"type\":\"long\"},{\"name\":\"event_type\",\"type\":\"string\"},"
    "{\"name\":\"pid\",\"type\":[\"null\",\"int\"],\"default\":null},"
    "{\"name\":\"host\",\"type\":\"string\"},"
    "{\"name\":\"device_used_bytes\",\"type\":[\"null\",\"long\"],\"default\":null},"
    "{\"name\":\"metadata\",\"type\":[\"null\",\"bytes\"],\"default\":null},"
    "{\"name\":\"job_id\",\"type\":[\"null\",\"string\"],\"default\":null},"
    "{\"name\":\"rank\",\"type\":\"int\"},{\"name\":\"world_size\",\"type\":[\"null\",\"int\"]}]}";
static const char k_writer_v3[] =
    "{\"type\":\"record\",\"name\":\"TelemetryEvent\",\"fields\":["
    "{\"name\":\"gpu_model\",\"type\":\"string\"},"
    "{\"name\":\"job_id\",\"type\":[\"null\",\"string\"]},"
    "{\"name\":\"rank\",\"type\":[\"null\",\"long\"]},"
    "{\"name\":\"event_type\",\"type\":\"string\"},{\"name\":\"timestamp_ns\",\"type\":\"long\"},"
    "{\"name\":\"tags\",\"type\":{\"type\":\"map\",\"values\":[\"null\",\"double\",\"string\"]}},"
    "{\"name\":\"host\",\"type\":[\"null\",\"string\"]},"
    "{\"name\":\"device_used_bytes\",\"type\":[\"null\",\"long\"]},"
    "{\"name\":\"session_id\",\"type\":[\"null\",\"string\"]},"
    "{\"name\":\"phase_scope\",\"type\":[\"null\",{\"type\":\"record\",\"name\":\"PhaseScope\","
    "\"fields\":[{\"name\":\"name\",\"type\":\"string\"},{\"name\":\"action\",\"type\":\"string\"},"
    "{\"name\":\"path\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"
    "{\"name\":\"scope_id\",\"type\":\"string\"},"
    "{\"name\":\"parent_scope_id\",\"type\":[\"null\",\"string\"]},"
    "{\"name\":\"thread_id\",\"type\":\"int\"},{\"name\":\"thread_name\",\"type\":\"string\"},"
    "{\"name\":\"sequence\",\"type\":\"long\"}]}]},"
    "{\"name\":\"world_size\",\"type\":[\"null\",\"int\",\"string\"]}]}";
static sw_avro_plan_t *g_plans[2];

/* @p data framed with the plan's id: the fast and the plain way agree. */
static void check_plan(sw_avro_dec_t *dec, const sw_avro_plan_t *plan, const uint8_t *data,
                       size_t size)
{
    char err[512], err2[512];
    sw_event_t a, b;
    uint8_t *msg = malloc(size + 5);
    int32_t id = sw_avro_plan_id(plan);
    msg[0] = 0;
    msg[1] = (uint8_t)(id >> 24);
    msg[2] = (uint8_t)(id >> 16);
    msg[3] = (uint8_t)(id >> 8);
    msg[4] = (uint8_t)id;
    if (size) memcpy(msg + 5, data, size);
    err[0] = err2[0] = '\0';
    sw_err_t ra = sw_avro_decode_event_plan(dec, plan, msg, size + 5, &a, err, sizeof(err));
    FUZZ_CHECK(ra == SW_OK || err[0] != '\0', "plan decode failed without a message");
    sw_buf_t body, ja, jb;
    sw_buf_init(&body);
    sw_buf_init(&ja);
    sw_buf_init(&jb);
    sw_avro_dec_t *dec2 = sw_avro_dec_new();
    sw_err_t rb = sw_avro_plan_rewrite(plan, data, size, &body, err2, sizeof(err2));
    if (rb == SW_OK)
        rb = sw_avro_decode_event(dec2, body.data ? body.data : "", body.len, -1, &b, err2,
                                  sizeof(err2));
    FUZZ_CHECK((ra == SW_OK) == (rb == SW_OK), "plan decode %d (%s), rewrite + decode %d (%s)",
               (int)ra, err, (int)rb, err2);
    if (ra == SW_OK && rb == SW_OK) {
        fuzz_check_event(&a, "avro plan");
        sw_event_json(&ja, &a);
        sw_event_json(&jb, &b);
        FUZZ_CHECK(ja.len == jb.len && memcmp(ja.data, jb.data, ja.len) == 0,
                   "plan decode and rewrite + decode differ:\n%.*s\n%.*s", (int)ja.len, ja.data,
                   (int)jb.len, jb.data);
    }
    sw_avro_dec_destroy(dec2);
    sw_buf_clear(&body);
    sw_buf_clear(&ja);
    sw_buf_clear(&jb);
    free(msg);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    gen_dir = getenv("SW_FUZZ_GEN_CORPUS");
    if (gen_dir && *gen_dir) {
        const char *fixtures = getenv("SW_FUZZ_FIXTURES");
        generate(fixtures && *fixtures ? fixtures : "tests/fixtures");
        exit(0);
    }
    char err[512];
    const char *w[2] = {k_writer_v1, k_writer_v3};
    for (int i = 0; i < 2; i++) {
        g_plans[i] = sw_avro_plan_new(w[i], strlen(w[i]), sw_schema_telemetry_event,
                                      sw_schema_telemetry_event_len, 11 + 2 * i, err, sizeof(err));
        FUZZ_CHECK(g_plans[i] != NULL, "writer schema %d: %s", i, err);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Inputs over 1 MB (the 10 MB seeds): the record codecs' cost per byte
     * would exceed -timeout; the cheap record checks still run. */
    fuzz_deep_records = fuzz_deep_summaries = size > (1u << 20) ? 0 : FUZZ_DEEP_RECORDS;
    char err[256];
    int32_t id = -1;
    sw_err_t rc = sw_avro_schema_id(data, size, &id, err, sizeof(err));
    FUZZ_CHECK(rc == SW_OK || rc == SW_ERR_TRUNCATED || rc == SW_ERR_AVRO,
               "sw_avro_schema_id returned %d", (int)rc);
    if (rc == SW_OK) FUZZ_CHECK(id >= 0, "negative schema id %d", (int)id);

    /* A copy of exactly size bytes: ASan sees any read past the end. */
    uint8_t *copy = malloc(size ? size : 1);
    if (size) memcpy(copy, data, size);
    sw_avro_dec_t *dec = sw_avro_dec_new();
    check_event(dec, copy, size, EV_ID, true);
    if (rc == SW_OK && id != EV_ID) check_event(dec, copy, size, id, false);
    check_event(dec, copy, size, -1, true);
    check_record(copy, size, REC_ID);
    check_record(copy, size, -1);
    /* The body after a header, or all of it, as written by other schemas. */
    size_t skip = sw_avro_is_framed(copy, size) ? SW_AVRO_HEADER_LEN : 0;
    for (int i = 0; i < 2; i++) check_plan(dec, g_plans[i], copy + skip, size - skip);
    sw_avro_dec_destroy(dec);
    free(copy);
    return 0;
}
