/*
 * The hand-written Avro record codec (src/codec/sw_codec_avro.c) against
 * Avro C: every stream record of the fixtures encodes to what
 * sw_alert_json_record() writes; malformed records fail with a precise
 * message and never crash.
 */
#include "avro_ref.h"

#define REC_SCHEMA_ID 42

/* The suspects of an Avro C view in sw_alert_json_record()'s shape. */
static void suspects_drop_nulls(json_t *arr)
{
    size_t i;
    json_t *s;
    json_array_foreach(arr, i, s)
    {
        if (json_is_null(json_object_get(s, "timeline"))) json_object_del(s, "timeline");
        /* Where it ran: all five keys, or none when there is no host. */
        if (json_is_null(json_object_get(s, "host"))) {
            static const char *const where[] = {"host", "pid", "device_id", "local_rank",
                                                "session_id"};
            for (size_t k = 0; k < 5; k++) json_object_del(s, where[k]);
        }
        json_t *pa = json_object_get(s, "phase_attribution");
        if (!json_is_object(pa)) continue;
        const char *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(pa, tmp, k, v) if (json_is_null(v)) json_object_del(pa, k);
    }
}

/* Avro C view of an alert in sw_alert_json_record()'s shape: null
 * members of phase_attribution, a null timeline and a null source are
 * left out there (in the verdict's suspects too). */
static void alert_drop_nulls(json_t *rec)
{
    static const char *const extras[] = {
        "source",     "resolve_reason", "resolve_lost_rank", "episode_open",
        "tied_ranks", "verdict",        "blind_ranks",       "x8"};
    for (size_t k = 0; k < sizeof(extras) / sizeof(extras[0]); k++)
        if (json_is_null(json_object_get(rec, extras[k]))) json_object_del(rec, extras[k]);
    suspects_drop_nulls(json_object_get(rec, "first_cause_suspects"));
    suspects_drop_nulls(json_object_get(json_object_get(rec, "verdict"), "first_cause_suspects"));
}

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

static int check_record_one(ctx_t *ctx, const sw_record_t *rec, const char *where)
{
    sw_buf_t json, msg, back;
    char err[512], why[1024];
    sw_buf_init(&json);
    sw_buf_init(&msg);
    sw_buf_init(&back);
    sw_alert_json_record(&json, rec);
    sw_err_t rc = sw_avro_encode_record(rec, REC_SCHEMA_ID, &msg, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "%s: encode: %s", where, err);
    if (msg.len > ctx->longest_rec.len) {
        ctx->longest_rec.len = 0;
        sw_buf_put(&ctx->longest_rec, msg.data, msg.len);
    }
    json_error_t je;
    json_t *want = json_loadb(json.data, json.len, JSON_ALLOW_NUL, &je);
    SW_ASSERT(want != NULL, "%s: sw_alert_json_record output does not parse: %s", where, je.text);

    /* Avro C's reading. */
    json_t *got = avro_c_json(&ctx->rec_val, msg.data + 5, msg.len - 5, why, sizeof(why));
    SW_ASSERT(got != NULL, "%s: %s", where, why);
    alert_drop_nulls(got);
    bool same = sw_test_json_equal(got, want, false, why, sizeof(why));
    json_decref(got);
    SW_ASSERT(same, "%s: Avro C view differs from sw_alert_json_record: %s (avro != json)", where,
              why);

    /* Ours: the same text, byte for byte. */
    sw_buf_puts(&back, "prefix:");
    rc = sw_avro_decode_record_json(msg.data, msg.len, REC_SCHEMA_ID, &back, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "%s: decode: %s", where, err);
    json_t *mine = json_loadb(back.data + 7, back.len - 7, JSON_ALLOW_NUL, &je);
    SW_ASSERT(mine != NULL, "%s: decoded JSON does not parse: %s", where, je.text);
    same = sw_test_json_equal(mine, want, false, why, sizeof(why));
    json_decref(mine);
    json_decref(want);
    SW_ASSERT(same, "%s: sw_avro_decode_record_json differs: %s (decoded != json)", where, why);
    SW_ASSERT(back.len - 7 == json.len && memcmp(back.data + 7, json.data, json.len) == 0,
              "%s: same JSON value but different text:\n  %s\n  %s", where, sw_buf_cstr(&back) + 7,
              sw_buf_cstr(&json));

    for (size_t i = 0; i < rec->analysis.n_suspects; i++) {
        const sw_phase_attr_t *ph = &rec->analysis.suspects[i].phase;
        if (ph->resolution == SW_PHASE_UNIQUE) ctx->n_unique++;
        if (ph->resolution == SW_PHASE_AMBIGUOUS) ctx->n_ambiguous++;
        if (ph->resolution == SW_PHASE_AMBIGUOUS && ph->has_summary) ctx->n_phase_summary++;
    }
    sw_buf_clear(&json);
    sw_buf_clear(&msg);
    sw_buf_clear(&back);
    return 0;
}

/* Each record as the engine made it (no source) and as run would send it. */
static int check_record(ctx_t *ctx, const sw_record_t *rec, const char *fixture)
{
    char where[256];
    ctx->n_records++;
    snprintf(where, sizeof(where), "%s record %zu (%s)", fixture, ctx->n_records,
             sw_action_str(rec->action));
    if (check_record_one(ctx, rec, where)) return 1;
    sw_record_t copy = *rec;
    copy.source.set = true;
    copy.source.topic = sw_str("gpu.mem");
    copy.source.partition = 3;
    copy.source.offset = 18233;
    return check_record_one(ctx, &copy, where);
}

typedef struct summary_arg_s {
    ctx_t *ctx;
    const char *fixture;
} summary_arg_t;

static void on_summary(void *opaque, const sw_record_t *rec)
{
    summary_arg_t *arg = opaque;
    /* SPEC 6's records only, as the feed loop checks them: the SPEC 8
     * records that close a crash or warning after a summary have their
     * own Avro checks (test_codecs in test_crash). */
    if (sw_action_is_x8(rec->action)) return;
    arg->ctx->rec_failures += check_record(arg->ctx, rec, arg->fixture);
}

static void fixture_params(const char *name, sw_params_t *p)
{
    char path[4096];
    size_t n = strlen(name) - 6; /* ".jsonl" */
    snprintf(path, sizeof(path), "%s/%.*s.params.json", sw_test_fixtures(), (int)n, name);
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j) return;
    json_t *w = json_object_get(j, "window.samples"), *s = json_object_get(j, "stale.ms");
    if (json_is_integer(w)) p->window_samples = json_integer_value(w);
    if (json_is_integer(s)) p->stale_ms = json_integer_value(s);
    json_decref(j);
}

static int run_stream(ctx_t *ctx, const char *name)
{
    char path[4096], err[512];
    sw_buf_t text;
    sw_buf_init(&text);
    snprintf(path, sizeof(path), "%s/%s", sw_test_fixtures(), name);
    SW_ASSERT(sw_test_read_file(path, &text), "cannot read %s", path);
    sw_params_t p = sw_params_default();
    fixture_params(name, &p);
    sw_detector_t *det = sw_detect_new(p);
    size_t i = 0;
    int failed = 0;
    while (i < text.len && !failed) {
        const char *nl = memchr(text.data + i, '\n', text.len - i);
        size_t end = nl ? (size_t)(nl - text.data) : text.len;
        sw_event_t ev;
        const sw_record_t *rec = NULL;
        if (!sw_tdec_blank(text.data + i, end - i) &&
            sw_tdec_json(ctx->tdec, text.data + i, end - i, &ev, err, sizeof(err)) == SW_OK &&
            sw_detect_feed(det, &ev, 0, &rec, err, sizeof(err)) == SW_OK && rec)
            failed |= check_record(ctx, rec, name);
        i = end + 1;
    }
    summary_arg_t arg = {ctx, name};
    if (!failed) sw_detect_finish(det, on_summary, &arg);
    sw_detect_destroy(det);
    sw_buf_clear(&text);
    return failed;
}

static void test_fixture_records(void **state)
{
    ctx_t *ctx = *state;
    char **names;
    size_t n = list_fixtures(&names);
    int failed = 0;
    for (size_t f = 0; f < n && !failed; f++) failed |= run_stream(ctx, names[f]);
    for (size_t f = 0; f < n; f++) free(names[f]);
    free(names);
    SW_ASSERT(!failed && !ctx->rec_failures, "see the failures above");
    SW_ASSERT(ctx->n_records > 100, "only %zu records checked", ctx->n_records);
    SW_ASSERT(ctx->n_unique > 0 && ctx->n_ambiguous > 0 && ctx->n_phase_summary > 0,
              "phase attributions seen: %zu unique, %zu ambiguous, %zu with summary", ctx->n_unique,
              ctx->n_ambiguous, ctx->n_phase_summary);
    printf("records: %zu stream records (x2 with source) match sw_alert_json_record\n",
           ctx->n_records);
}

static int expect_rec_error(const sw_buf_t *msg, sw_err_t want_rc, const char *want, int line)
{
    char err[512] = "";
    sw_buf_t out;
    sw_buf_init(&out);
    sw_buf_puts(&out, "keep");
    sw_err_t rc = sw_avro_decode_record_json(msg->data, msg->len, REC_SCHEMA_ID, &out, err,
                                             sizeof(err));
    bool ok = rc == want_rc && strstr(err, want) && out.len == 4;
    if (!ok)
        fprintf(stderr,
                "%s:%d: FAIL: rc %d (want %d), output %zu bytes, error \"%s\" lacks \"%s\"\n",
                __FILE__, line, rc, want_rc, out.len, err, want);
    sw_buf_clear(&out);
    return ok ? 0 : 1;
}

static void test_record_errors(void **state)
{
    ctx_t *ctx = *state;
    int failed = 0;
    char err[512];
    sw_buf_t b, out;
    sw_buf_init(&b);
    sw_buf_init(&out);

    /* Unsigned timestamps beyond an Avro long are refused, never wrapped. */
    sw_suspect_t s;
    memset(&s, 0, sizeof(s));
    s.rank = 1;
    s.first_spike_timestamp_ns = 10;
    s.aligned_first_spike_timestamp_ns = (uint64_t)INT64_MAX + 1;
    s.peak_delta_bytes = 1 << 30;
    s.spike_window_samples = 2;
    s.confidence = SW_CONFIDENCE_HIGH;
    s.supporting_ranks = 1;
    int64_t ranks[2] = {0, 1};
    sw_rank_val_t counts[2] = {{0, 5}, {1, 6}};
    sw_record_t rec;
    memset(&rec, 0, sizeof(rec));
    rec.action = SW_ACTION_TRIGGER;
    rec.episode = 1;
    rec.has_event_ts = true;
    rec.event_timestamp_ns = 10;
    rec.analysis.has_job_id = true;
    rec.analysis.job_id = sw_str("j");
    rec.analysis.world_size = 2;
    rec.analysis.participating = ranks;
    rec.analysis.n_participating = 2;
    rec.analysis.counts = counts;
    rec.analysis.n_counts = 2;
    rec.analysis.offsets = counts;
    rec.analysis.n_offsets = 2;
    rec.analysis.anchor_rank = 0;
    rec.analysis.has_onset = true;
    rec.analysis.onset_ns = 5;
    rec.analysis.suspects = &s;
    rec.analysis.n_suspects = 1;
    sw_err_t rc = sw_avro_encode_record(&rec, REC_SCHEMA_ID, &b, err, sizeof(err));
    SW_ASSERT(
        rc == SW_ERR_INVALID_ARG && b.len == 0 &&
            strstr(
                err,
                "field \"first_cause_suspects[0].aligned_first_spike_timestamp_ns\" is 9223372036854775808"),
        "rc %d, %zu bytes: %s", rc, b.len, err);
    s.aligned_first_spike_timestamp_ns = (uint64_t)INT64_MAX;
    rec.analysis.onset_ns = UINT64_MAX;
    rc = sw_avro_encode_record(&rec, REC_SCHEMA_ID, &b, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_INVALID_ARG && b.len == 0 &&
                  strstr(err, "field \"cluster_onset_timestamp_ns\" is 18446744073709551615"),
              "rc %d: %s", rc, err);
    rec.analysis.onset_ns = (uint64_t)INT64_MAX;
    SW_ASSERT_I64(check_record_one(ctx, &rec, "INT64_MAX timestamps"), 0);
    rec.action = (sw_action_t)7;
    rc = sw_avro_encode_record(&rec, REC_SCHEMA_ID, &b, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_INVALID_ARG && b.len == 0 && strstr(err, "field \"action\" is 7"),
              "rc %d: %s", rc, err);
    rec.action = SW_ACTION_TRIGGER;

    /* A lone surrogate in a job id becomes U+FFFD, and the alert is sent. */
    rec.analysis.job_id = sw_str("j\xed\xa0\x80x");
    rc = sw_avro_encode_record(&rec, REC_SCHEMA_ID, &b, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "%s", err);
    rc = sw_avro_decode_record_json(b.data, b.len, REC_SCHEMA_ID, &out, err, sizeof(err));
    SW_ASSERT(rc == SW_OK && strstr(sw_buf_cstr(&out), "\"job_id\": \"j\xef\xbf\xbdx\""),
              "rc %d: %s", rc, rc ? err : out.data);

    /* Framing and body errors. */
    rc = sw_avro_decode_record_json("", 0, REC_SCHEMA_ID, &out, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_TRUNCATED, "rc %d", rc);
    b.len = 0;
    tb_header(&b, 9);
    failed |= expect_rec_error(&b, SW_ERR_AVRO, "unknown schema id 9 (expected 42)", __LINE__);
    b.len = 0;
    tb_header(&b, REC_SCHEMA_ID);
    tb_long(&b, 6); /* 4 and 5 are SPEC 8's crash and warning */
    failed |= expect_rec_error(
        &b, SW_ERR_AVRO,
        "Avro: enum index 6 at byte 5 in field \"action\" is out of range (expected 0..5)",
        __LINE__);
    b.len = 5;
    tb_long(&b, 0); /* trigger */
    tb_long(&b, 0); /* job_id null */
    tb_long(&b, 1); /* episode */
    tb_long(&b, 0); /* revision */
    tb_long(&b, 0); /* event_timestamp_ns null */
    tb_long(&b, 2); /* world_size */
    tb_long(&b, 0); /* participating */
    tb_long(&b, 0); /* missing */
    size_t key_at = b.len + 1;
    tb_long(&b, 1);
    tb_str(&b, "01");
    tb_long(&b, 3);
    tb_long(&b, 0);
    char want[200];
    snprintf(
        want, sizeof(want),
        "Avro: map key \"01\" at byte %zu in field \"rank_sample_counts\" is not a decimal rank",
        key_at);
    failed |= expect_rec_error(&b, SW_ERR_AVRO, want, __LINE__);

    /* Every truncation point of the longest fixture record, and trailing
     * bytes after it. */
    const sw_buf_t *m = &ctx->longest_rec;
    SW_ASSERT(m->len > 100, "no long record message kept (%zu bytes)", m->len);
    for (size_t cut = 0; cut < m->len; cut++) {
        b.len = 0;
        sw_buf_put(&b, m->data, cut);
        if (expect_rec_error(&b, SW_ERR_TRUNCATED, "truncated at byte", __LINE__)) {
            SW_FAIL("  (cut at %zu of %zu)", cut, m->len);
        }
    }
    b.len = 0;
    sw_buf_put(&b, m->data, m->len);
    sw_buf_put(&b, "\0", 1);
    snprintf(want, sizeof(want), "Avro: 1 trailing bytes at byte %zu after the record", m->len);
    failed |= expect_rec_error(&b, SW_ERR_AVRO, want, __LINE__);
    for (size_t i = 5; i < m->len; i++) {
        static const unsigned char vals[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
        for (size_t k = 0; k < sizeof(vals); k++) {
            b.len = 0;
            sw_buf_put(&b, m->data, m->len);
            b.data[i] = (char)vals[k];
            out.len = 0;
            err[0] = '\0';
            rc = sw_avro_decode_record_json(b.data, b.len, REC_SCHEMA_ID, &out, err, sizeof(err));
            SW_ASSERT(rc == SW_OK ? out.len > 0 : err[0] && out.len == 0,
                      "byte %zu = 0x%02x: rc %d, %zu bytes out", i, vals[k], rc, out.len);
        }
    }
    sw_buf_clear(&b);
    sw_buf_clear(&out);
    SW_ASSERT(!failed, "see the failures above");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_records),
        cmocka_unit_test(test_record_errors),
    };
    return cmocka_run_group_tests(tests, ctx_new, ctx_destroy);
}
