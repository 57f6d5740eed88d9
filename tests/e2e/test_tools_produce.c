/*
 * The Kafka tools around the daemon, as real processes against
 * `stormwatch mock`: produce (JSON, Avro, --raw, keys) read back with tail
 * and beside kcat; plus sw_event_json() round trips over every valid
 * fixture line, in process. Every wait has a deadline; every child is
 * killed on the way out, failure or not.
 */
#include "tools_run.h"

/* Lines of a buffer (the text is split in place). */
static size_t split_lines(sw_buf_t *b, char ***lines)
{
    size_t n = 0, cap = 64;
    *lines = malloc(cap * sizeof(char *));
    char *p = b->data, *end = b->data + b->len;
    while (p && p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl) *nl = '\0';
        if (*p) {
            if (n == cap) *lines = realloc(*lines, (cap *= 2) * sizeof(char *));
            (*lines)[n++] = p;
        }
        p = nl ? nl + 1 : NULL;
    }
    return n;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

/* sw_event_json(line's event) must decode to the same event, straight
 * and through Avro (encode, decode, print). One line; a valid object
 * (counted in *checked; a line that does not decode is not checked). */
static void roundtrip_line(sw_tdec_t *d1, sw_tdec_t *d2, sw_avro_dec_t *adec, const char *where,
                           const char *line, size_t len, size_t *checked)
{
    char errstr[512], why[512];
    sw_event_t ev, back, via;
    if (sw_tdec_json(d1, line, len, &ev, errstr, sizeof(errstr)) != SW_OK) return;
    sw_buf_t out, enc;
    sw_buf_init(&out);
    sw_buf_init(&enc);
    sw_event_json(&out, &ev);
    sw_buf_cstr(&out);
    /* sw_tdec_json below is the strict parser (Python's rules: lone
     * surrogates allowed, which jansson refuses). */
    if (out.len == 0 || out.data[0] != '{' || memchr(out.data, '\n', out.len)) {
        SW_FAIL("%s: expected a one-line JSON object, got %s", where, out.data);
    }
    if (sw_tdec_json(d2, out.data, out.len, &back, errstr, sizeof(errstr)) != SW_OK) {
        SW_FAIL("%s: output does not decode: %s\n  output: %s", where, errstr, out.data);
    }
    if (!sw_test_event_eq(&ev, &back, why, sizeof(why))) {
        SW_FAIL("%s: round trip differs: %s\n  output: %s", where, why, out.data);
    }
    if (sw_avro_encode_event(&ev, 1, &enc, errstr, sizeof(errstr)) == SW_OK) {
        if (sw_avro_decode_event(adec, enc.data, enc.len, 1, &via, errstr, sizeof(errstr))) {
            SW_FAIL("%s: Avro does not decode: %s", where, errstr);
        }
        out.len = 0;
        sw_event_json(&out, &via);
        sw_buf_cstr(&out);
        if (sw_tdec_json(d2, out.data, out.len, &back, errstr, sizeof(errstr)) != SW_OK ||
            !sw_test_event_eq(&ev, &back, why, sizeof(why))) {
            SW_FAIL("%s: via Avro: %s\n  output: %s", where, errstr[0] ? errstr : why, out.data);
        }
    }
    (*checked)++;
    sw_buf_clear(&out);
    sw_buf_clear(&enc);
}

static void test_event_json_fixtures(void **state)
{
    (void)state;
    const char *dir = sw_test_fixtures();
    DIR *d = opendir(dir);
    SW_ASSERT(d != NULL, "cannot open fixtures dir %s", dir);
    sw_tdec_t *d1 = sw_tdec_new(), *d2 = sw_tdec_new();
    sw_avro_dec_t *adec = sw_avro_dec_new();
    sw_buf_t text;
    sw_buf_init(&text);
    size_t checked = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t nl = strlen(de->d_name);
        if (nl < 6 || strcmp(de->d_name + nl - 6, ".jsonl") || strstr(de->d_name, ".stream."))
            continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (!sw_test_read_file(path, &text)) continue;
        size_t i = 0, lineno = 0;
        while (i < text.len) {
            const char *e = memchr(text.data + i, '\n', text.len - i);
            size_t end = e ? (size_t)(e - text.data) : text.len;
            char where[1100];
            snprintf(where, sizeof(where), "%s:%zu", de->d_name, ++lineno);
            roundtrip_line(d1, d2, adec, where, text.data + i, end - i, &checked);
            i = end + 1;
        }
    }
    closedir(d);
    /* Corners the fixtures lack: a lone surrogate, an escaped key, absent
     * and null fields, a non-sample without device_used_bytes. */
    static const char *const extra[] = {
        "{\"timestamp_ns\": 5, \"event_type\": \"sample\", \"device_used_bytes\": 1, "
        "\"host\": \"h\\ud800x\\u00e9\\n\", \"job_id\": \"j\\udc00\", \"metadata\": null}",
        "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"metadata\": {\"a\": [1, {}], "
        "\"phase\\u005fscope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"n\", \"\", 3], "
        "\"scope_id\": \"s\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 2}}}",
        "{\"timestamp_ns\": 0, \"event_type\": \"note\", \"rank\": 2, \"world_size\": 3, "
        "\"session_id\": \"\", \"context\": \"c\", \"collector\": null}",
    };
    for (size_t k = 0; k < sizeof(extra) / sizeof(extra[0]); k++) {
        size_t before = checked;
        roundtrip_line(d1, d2, adec, extra[k], extra[k], strlen(extra[k]), &checked);
        SW_ASSERT(checked != before, "extra line %zu does not decode: %s", k, extra[k]);
    }
    sw_buf_clear(&text);
    sw_tdec_destroy(d1);
    sw_tdec_destroy(d2);
    sw_avro_dec_destroy(adec);
    SW_ASSERT(checked > 10000, "only %zu fixture lines checked", checked);
    printf("ok - sw_event_json round trips (%zu lines, straight and via Avro)\n", checked);
}

/* A typed phase scope from Avro whose metadata text lacks it: the JSON
 * must still carry "phase_scope" (and the other members), and decode to
 * the same scope. */
static void test_event_json_typed_phase(void **state)
{
    (void)state;
    static const char line[] =
        "{\"timestamp_ns\": 7, \"event_type\": \"phase_exit\", \"metadata\": {\"phase_scope\": "
        "{\"action\": \"exit\", \"name\": \"fwd\", \"path\": [\"train\", \"fwd\"], \"depth\": 2, "
        "\"scope_id\": \"s1\", \"parent_scope_id\": \"s0\", \"thread_id\": 3, \"thread_name\": "
        "\"main\", \"sequence\": 9}}}";
    char errstr[512], why[512];
    sw_tdec_t *dec = sw_tdec_new();
    sw_avro_dec_t *adec = sw_avro_dec_new();
    sw_event_t ev, via, back;
    sw_buf_t enc, out;
    sw_buf_init(&enc);
    sw_buf_init(&out);
    SW_ASSERT(sw_tdec_json(dec, line, sizeof(line) - 1, &ev, errstr, sizeof(errstr)) == SW_OK, "%s",
              errstr);
    SW_ASSERT(ev.has_phase, "the source line has no phase scope");
    sw_event_t typed = ev;
    typed.metadata_json = sw_str("{\"k\": \"v\"}");
    if (sw_avro_encode_event(&typed, 1, &enc, errstr, sizeof(errstr)) ||
        sw_avro_decode_event(adec, enc.data, enc.len, 1, &via, errstr, sizeof(errstr))) {
        SW_FAIL("Avro: %s", errstr);
    }
    sw_event_json(&out, &via);
    sw_buf_cstr(&out);
    if (!strstr(out.data, "\"phase_scope\": {") || !strstr(out.data, "\"k\": \"v\"")) {
        SW_FAIL("expected metadata with \"k\" and \"phase_scope\", got %s", out.data);
    }
    if (sw_tdec_json(dec, out.data, out.len, &back, errstr, sizeof(errstr)) != SW_OK) {
        SW_FAIL("output does not decode: %s: %s", errstr, out.data);
    }
    /* Same event except the metadata text, which now holds the scope. */
    back.metadata_json = ev.metadata_json;
    sw_event_t want = ev;
    if (!back.has_phase || !sw_test_event_eq(&want, &back, why, sizeof(why))) {
        SW_FAIL("typed scope lost: %s: %s", back.has_phase ? why : "no phase scope", out.data);
    }
    printf("ok - typed phase scope kept in metadata\n");
    sw_buf_clear(&enc);
    sw_buf_clear(&out);
    sw_tdec_destroy(dec);
    sw_avro_dec_destroy(adec);
}

/* Events no JSON line gives but Avro can: metadata text over several
 * lines (written on one line, breaks as spaces), and no phase although
 * the metadata text holds a good phase_scope (the typed field was not a
 * boundary): the JSON must not grow a phase. */
static void test_event_json_corners(void **state)
{
    (void)state;
    static const char line[] = "{\"timestamp_ns\": 7, \"event_type\": \"phase_enter\"}";
    static const char meta_nl[] = "{\"a\":\r\n [1,\n2], \"s\": \"x\\ny\"}";
    static const char meta_ps[] =
        "{\"k\": 1, \"phase_scope\": {\"action\": \"enter\", \"name\": \"n\", \"path\": [\"n\"], "
        "\"scope_id\": \"s\", \"thread_id\": 1, \"thread_name\": \"t\", \"sequence\": 2}}";
    char errstr[512], why[512];
    sw_tdec_t *dec = sw_tdec_new();
    sw_event_t ev, back;
    sw_buf_t out;
    sw_buf_init(&out);
    if (sw_tdec_json(dec, line, sizeof(line) - 1, &ev, errstr, sizeof(errstr)) != SW_OK) {
        SW_FAIL("%s", errstr);
    }
    ev.metadata_json = sw_str(meta_nl);
    sw_event_json(&out, &ev);
    sw_buf_cstr(&out);
    if (memchr(out.data, '\n', out.len) || memchr(out.data, '\r', out.len) ||
        !strstr(out.data, "\"metadata\": {\"a\":   [1, 2], \"s\": \"x\\ny\"}")) {
        SW_FAIL("expected the metadata on one line, got %s", out.data);
    }
    if (sw_tdec_json(dec, out.data, out.len, &back, errstr, sizeof(errstr)) != SW_OK) {
        SW_FAIL("does not decode: %s: %s", errstr, out.data);
    }
    back.metadata_json = ev.metadata_json;
    if (!sw_test_event_eq(&ev, &back, why, sizeof(why))) {
        SW_FAIL("%s: %s", why, out.data);
    }

    ev.metadata_json = sw_str(meta_ps);
    ev.has_phase = false;
    out.len = 0;
    sw_event_json(&out, &ev);
    sw_buf_cstr(&out);
    if (sw_tdec_json(dec, out.data, out.len, &back, errstr, sizeof(errstr)) != SW_OK ||
        back.has_phase || !strstr(out.data, "\"metadata\": {\"k\": 1}")) {
        SW_FAIL("expected no phase and metadata {\"k\": 1}, got %s (%s)", out.data,
                back.has_phase ? "has a phase" : errstr);
    }
    printf("ok - sw_event_json: metadata line breaks, a phase_scope the event does not have\n");
    sw_buf_clear(&out);
    sw_tdec_destroy(dec);
}

/* Non-blank lines of a file, as a sorted array over *text. */
static size_t file_lines(const char *path, sw_buf_t *text, char ***lines)
{
    if (!sw_test_read_file(path, text)) return 0;
    size_t n = split_lines(text, lines);
    return n;
}

/* JSON: produce then tail gives back exactly the input lines, each key's
 * lines in input order, with the content-type header. */
static void test_json_roundtrip(void **state)
{
    mock_t *mk = *state;
    FIXTURE(src, "gen6.jsonl");
    sw_buf_t in_text, out, env;
    sw_buf_init(&in_text);
    sw_buf_init(&out);
    sw_buf_init(&env);
    char **in = NULL, **got = NULL;
    size_t n_in = file_lines(src, &in_text, &in);
    SW_ASSERT(n_in == 1555, "gen6.jsonl: expected 1555 lines, got %zu", n_in);
    produce_ok(mk, "t", "json", src, false, 1555);
    tail_n(mk, "t", 1555, "--from=beginning", &out);
    size_t n_got = split_lines(&out, &got);
    qsort(in, n_in, sizeof(char *), cmp_str);
    qsort(got, n_got, sizeof(char *), cmp_str);
    for (size_t i = 0; i < n_in; i++)
        if (i >= n_got || strcmp(in[i], got[i])) {
            SW_FAIL("sorted line %zu differs:\n  input: %.200s\n  tail:  %.200s", i, in[i],
                    i < n_got ? got[i] : "(none)");
        }

    /* The envelope: key = job_id, per key the input order, the header. */
    tail_n(mk, "t", 1555, "--envelope", &env);
    char why[256];
    json_t *recs = sw_test_parse_lines(env.data, env.len, why, sizeof(why));
    if (!recs) {
        SW_FAIL("envelope lines are not JSON: %s", why);
    }
    /* Input order per key: the i-th record of a key is the i-th line of
     * that job in the file. */
    sw_buf_t raw;
    sw_buf_init(&raw);
    sw_test_read_file(src, &raw);
    json_t *src_lines = sw_test_parse_lines(raw.data, raw.len, why, sizeof(why));
    sw_buf_clear(&raw);
    json_t *by_key = json_object();
    size_t i;
    json_t *line;
    json_array_foreach(src_lines, i, line)
    {
        json_t *jid = json_object_get(line, "job_id");
        const char *k = json_is_string(jid) ? json_string_value(jid) : "";
        json_t *arr = json_object_get(by_key, k);
        if (!arr) json_object_set_new(by_key, k, arr = json_array());
        json_array_append(arr, line);
    }
    json_t *seen = json_object();
    json_t *rec;
    json_array_foreach(recs, i, rec)
    {
        const char *k = json_string_value(json_object_get(rec, "key"));
        const char *ct = json_string_value(
            json_object_get(json_object_get(rec, "headers"), "content-type"));
        json_t *want_list = k ? json_object_get(by_key, k) : NULL;
        json_int_t pos = json_integer_value(json_object_get(seen, k ? k : ""));
        json_object_set_new(seen, k ? k : "", json_integer(pos + 1));
        json_t *want = want_list ? json_array_get(want_list, (size_t)pos) : NULL;
        char diff[512] = "";
        if (!k || !want || !ct || strcmp(ct, "application/json") ||
            !sw_test_json_equal(json_object_get(rec, "value"), want, false, diff, sizeof(diff)) ||
            json_integer_value(json_object_get(rec, "partition")) < 0 ||
            json_integer_value(json_object_get(rec, "partition")) > 3) {
            char *s = json_dumps(rec, JSON_COMPACT);
            SW_FAIL(
                "record %zu: expected key = job_id, content-type application/json and input "
                "line %lld of that key %s; got %.300s",
                i, (long long)pos, diff, s);
        }
    }
    json_decref(seen);
    json_decref(by_key);
    json_decref(src_lines);
    json_decref(recs);
    printf("ok - produce json + tail: 1555 lines back, per-key order kept\n");
    free(in);
    free(got);
    sw_buf_clear(&in_text);
    sw_buf_clear(&out);
    sw_buf_clear(&env);
}

/* Avro: every printed event decodes to the source line's event. */
static void test_avro_roundtrip(void **state)
{
    mock_t *mk = *state;
    FIXTURE(src, "gen6.jsonl");
    make_topic(mk, "tav", 3);
    produce_ok(mk, "tav", "avro", src, false, 1555);
    sw_buf_t in_text, out, want_buf, env;
    sw_buf_init(&in_text);
    sw_buf_init(&out);
    sw_buf_init(&want_buf);
    sw_buf_init(&env);
    char **in = NULL, **got = NULL, **want = NULL;
    sw_tdec_t *d1 = sw_tdec_new(), *d2 = sw_tdec_new();
    size_t n_in = file_lines(src, &in_text, &in);
    tail_n(mk, "tav", 1555, "--schema-id-telemetry=1", &out);
    size_t n_got = split_lines(&out, &got);
    /* Pair lines up by sw_event_json() of the source event. */
    char errstr[512], why[512];
    for (size_t i = 0; i < n_in; i++) {
        sw_event_t ev;
        SW_ASSERT(sw_tdec_json(d1, in[i], strlen(in[i]), &ev, errstr, sizeof(errstr)) == SW_OK,
                  "%s", errstr);
        sw_event_json(&want_buf, &ev);
        sw_buf_putc(&want_buf, '\n');
    }
    size_t n_want = split_lines(&want_buf, &want);
    qsort(want, n_want, sizeof(char *), cmp_str);
    qsort(got, n_got, sizeof(char *), cmp_str);
    /* The source lines in the same order as want. */
    char **src_sorted = malloc(n_in * sizeof(char *));
    for (size_t i = 0; i < n_in; i++) {
        sw_event_t ev;
        sw_buf_t tmp;
        sw_buf_init(&tmp);
        sw_tdec_json(d1, in[i], strlen(in[i]), &ev, errstr, sizeof(errstr));
        sw_event_json(&tmp, &ev);
        sw_buf_cstr(&tmp);
        char **hit = bsearch(&tmp.data, want, n_want, sizeof(char *), cmp_str);
        src_sorted[hit ? (size_t)(hit - want) : 0] = in[i];
        sw_buf_clear(&tmp);
    }
    SW_ASSERT(n_got == n_in, "tail printed %zu events, expected %zu", n_got, n_in);
    for (size_t i = 0; i < n_in; i++) {
        sw_event_t a, b;
        if (sw_tdec_json(d1, src_sorted[i], strlen(src_sorted[i]), &a, errstr, sizeof(errstr)) ||
            sw_tdec_json(d2, got[i], strlen(got[i]), &b, errstr, sizeof(errstr))) {
            SW_FAIL("printed event %zu does not decode: %s: %.300s", i, errstr, got[i]);
        } else if (!sw_test_event_eq(&a, &b, why, sizeof(why))) {
            SW_FAIL(
                "printed event differs from its source line: %s\n"
                "  source: %.300s\n  tail:   %.300s",
                why, src_sorted[i], got[i]);
        }
    }
    free(src_sorted);
    /* Keys and the Avro content type. */
    tail_n(mk, "tav", 1, "--envelope", &env);
    if (!strstr(env.data, "\"content-type\": \"application/vnd.confluent.avro\"") ||
        !strstr(env.data, "\"key\": \"")) {
        SW_FAIL("expected an Avro content-type and a string key, got %s", env.data);
    }
    /* -J: kcat's envelope plus the schema id and the decoded value. */
    tail_n(mk, "tav", 1, "-J", &env);
    json_t *jl = sw_test_parse_lines(env.data, env.len, why, sizeof(why));
    SW_ASSERT(jl && json_array_size(jl) == 1, "tail -J: %s: %s", why, env.data);
    json_t *j0 = json_array_get(jl, 0);
    SW_ASSERT_I64(json_integer_value(json_object_get(j0, "schema_id")), 1);
    SW_ASSERT_TRUE(json_is_string(json_object_get(j0, "payload_base64")) &&
                   !json_object_get(j0, "payload"));
    SW_ASSERT_TRUE(json_is_string(json_object_get(json_object_get(j0, "value"), "job_id")));
    SW_ASSERT_TRUE(json_is_array(json_object_get(j0, "headers")));
    json_decref(jl);
    printf("ok - produce avro + tail: 1555 events decode to their source events\n");
    free(in);
    free(got);
    free(want);
    sw_tdec_destroy(d1);
    sw_tdec_destroy(d2);
    sw_buf_clear(&in_text);
    sw_buf_clear(&out);
    sw_buf_clear(&want_buf);
    sw_buf_clear(&env);
}

static int b64_val(char c)
{
    const char *t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = c ? strchr(t, c) : NULL;
    return p ? (int)(p - t) : -1;
}

static void b64_decode(const char *s, sw_buf_t *out)
{
    uint32_t acc = 0;
    int bits = 0;
    out->len = 0;
    for (; *s && *s != '='; s++) {
        int v = b64_val(*s);
        if (v < 0) break;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            sw_buf_putc(out, (char)(acc >> bits));
        }
    }
    sw_buf_cstr(out);
}

/* --raw sends invalid lines untouched with an empty key; without it they
 * are reported as FILE:LINE and skipped. The null job has an empty key
 * (not a null one) and stays on one partition. */
static void test_raw_and_keys(void **state)
{
    mock_t *mk = *state;
    FIXTURE(src, "invalid_lines.jsonl");
    make_topic(mk, "raw", 1);
    make_topic(mk, "skip", 1);
    make_topic(mk, "nulljob", 4);
    sw_buf_t text, out, err, val;
    sw_buf_init(&text);
    sw_buf_init(&out);
    sw_buf_init(&err);
    sw_buf_init(&val);
    char **in = NULL;
    size_t n_in = file_lines(src, &text, &in);
    sw_tdec_t *dec = sw_tdec_new();
    size_t n_valid = 0;
    char errstr[512];
    for (size_t i = 0; i < n_in; i++) {
        sw_event_t ev;
        n_valid += sw_tdec_json(dec, in[i], strlen(in[i]), &ev, errstr, sizeof(errstr)) == SW_OK;
    }
    sw_tdec_destroy(dec);
    SW_ASSERT(n_valid > 0 && n_valid < n_in, "invalid_lines.jsonl: %zu of %zu valid", n_valid,
              n_in);

    /* Skipped, each named FILE:LINE. */
    char *argv[] = {(char *)sw_test_bin(), "produce", "-b", mk->bootstrap, "-t", "skip",
                    (char *)src,           NULL};
    int st = run(argv, NULL, &out, &err);
    char want[64];
    snprintf(want, sizeof(want), "produced %zu messages to skip", n_valid);
    if (st != 0 || !strstr(err.data, want) || !strstr(err.data, "invalid_lines.jsonl:2: ")) {
        SW_FAIL(
            "expected exit 0, \"%s\" and \"invalid_lines.jsonl:2: \", "
            "got exit %d:\n%s",
            want, st, err.data);
    }

    /* Sent as they are. */
    produce_ok(mk, "raw", "json", src, true, (int)n_in);
    tail_n(mk, "raw", (int)n_in, "--envelope", &out);
    char why[256];
    json_t *recs = sw_test_parse_lines(out.data, out.len, why, sizeof(why));
    SW_ASSERT(recs, "tail output is not JSON lines: %s", why);
    for (size_t i = 0; i < n_in; i++) {
        /* One partition: the file's order. */
        json_t *rec = json_array_get(recs, i);
        json_t *v = json_object_get(rec, "value");
        const char *key = json_string_value(json_object_get(rec, "key"));
        if (json_is_true(json_object_get(v, "undecodable"))) {
            b64_decode(json_string_value(json_object_get(v, "value_base64")), &val);
        } else {
            json_error_t je;
            json_t *want_v = json_loads(in[i], 0, &je);
            char diff[256] = "";
            bool same = want_v && sw_test_json_equal(v, want_v, false, diff, sizeof(diff));
            json_decref(want_v);
            val.len = 0;
            if (same) sw_buf_puts(&val, in[i]);
            sw_buf_cstr(&val);
        }
        if (strcmp(val.data, in[i]) || !key) {
            char *s = json_dumps(rec, JSON_COMPACT);
            SW_FAIL("record %zu: expected line %zu as sent, got %.300s", i, i + 1, s);
        }
    }
    /* Line 2 is not JSON at all: shown as undecodable, key empty. */
    json_t *r2 = json_array_get(recs, 1);
    if ((!json_is_true(json_object_get(json_object_get(r2, "value"), "undecodable")) ||
         strcmp(json_string_value(json_object_get(r2, "key")), ""))) {
        char *s = json_dumps(r2, JSON_COMPACT);
        SW_FAIL("expected line 2 undecodable with key \"\", got %s", s);
    }
    json_decref(recs);

    /* The null job: empty key on the wire, one partition. */
    FIXTURE(nul, "null_job_id.jsonl");
    produce_ok(mk, "nulljob", "json", nul, false, 5);
    tail_n(mk, "nulljob", 5, "--envelope", &out);
    recs = sw_test_parse_lines(out.data, out.len, why, sizeof(why));
    SW_ASSERT(recs, "tail output is not JSON lines: %s", why);
    json_int_t part = -1;
    size_t i;
    json_t *rec;
    json_array_foreach(recs, i, rec)
    {
        json_t *k = json_object_get(rec, "key");
        json_int_t p = json_integer_value(json_object_get(rec, "partition"));
        if (!json_is_string(k) || strcmp(json_string_value(k), "") || (part >= 0 && p != part)) {
            char *s = json_dumps(rec, JSON_COMPACT);
            SW_FAIL("expected key \"\" on partition %lld, got %.300s", (long long)part, s);
        }
        part = p;
    }
    json_decref(recs);
    printf("ok - invalid lines skipped / sent raw; null job: empty key, one partition\n");
    free(in);
    sw_buf_clear(&text);
    sw_buf_clear(&out);
    sw_buf_clear(&err);
    sw_buf_clear(&val);
}

static size_t count_lines(const char *text)
{
    size_t n = 0;
    for (const char *p = text; p && *p; p++) n += *p == '\n';
    return n;
}

static int64_t now_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* kcat on PATH, or NULL. */
static const char *find_kcat(char *buf, size_t size)
{
    const char *path = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof(dirs), "%s", path ? path : "/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(buf, size, "%s/kcat", d);
        if (access(buf, X_OK) == 0) return buf;
    }
    return NULL;
}

/* Lines of @p text sorted (the partitions' order differs between runs). */
static void sort_lines(const char *text, sw_buf_t *out)
{
    char *copy = strdup(text);
    char **lines = NULL;
    size_t n = 0;
    for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        lines = realloc(lines, (n + 1) * sizeof(*lines));
        lines[n++] = l;
    }
    qsort(lines, n, sizeof(*lines), cmp_str);
    out->len = 0;
    for (size_t i = 0; i < n; i++) {
        sw_buf_puts(out, lines[i]);
        sw_buf_putc(out, '\n');
    }
    sw_buf_cstr(out);
    free(lines);
    free(copy);
}

/* kcat -J lines and tail -J lines: the same records, field for field. */
static bool same_json_lines(const char *a, const char *b, char *why, size_t why_size)
{
    json_t *ja = sw_test_parse_lines(a, strlen(a), why, why_size);
    json_t *jb = ja ? sw_test_parse_lines(b, strlen(b), why, why_size) : NULL;
    bool ok = ja && jb && json_array_size(ja) == json_array_size(jb);
    if (ja && jb && !ok)
        snprintf(why, why_size, "%zu records against %zu", json_array_size(ja),
                 json_array_size(jb));
    /* match each of a with one of b (order across partitions differs) */
    for (size_t i = 0; ok && i < json_array_size(ja); i++) {
        json_t *x = json_array_get(ja, i);
        bool found = false;
        for (size_t j = 0; j < json_array_size(jb) && !found; j++)
            found = json_equal(x, json_array_get(jb, j));
        if (!found) {
            char *d = json_dumps(x, JSON_COMPACT);
            snprintf(why, why_size, "kcat's %s has no equal in tail's output", d);
            free(d);
            ok = false;
        }
    }
    json_decref(ja);
    json_decref(jb);
    return ok;
}

/* tail -J, -f, -o e@MS and -G side by side with kcat on the same mock
 * topic (skipped without kcat, a failure with CI=true). librdkafka 2.0's
 * mock cluster answers every time lookup with -1 (no such record), so
 * -o s@MS starts at the end and e@MS reads to the end there: compared
 * with kcat, not with real broker semantics. */
static void test_kcat_parity(void **state)
{
    mock_t *mk = *state;
    char kcat[1024];
    if (!find_kcat(kcat, sizeof(kcat))) {
        const char *ci = getenv("CI");
        if (ci && !strcmp(ci, "true")) SW_FAIL("kcat is not installed (CI=true: required)");
        printf("skipped: kcat is not installed (apt-get install kcat)\n");
        skip();
    }
    make_topic(mk, "kc", 2);
    char in0[600], in1[600];
    tmp_path(in0, sizeof(in0), "kc0.txt");
    tmp_path(in1, sizeof(in1), "kc1.txt");
    FILE *f = fopen(in0, "w");
    SW_ASSERT_NOT_NULL(f);
    fputs("job-1\t{\"rank\": 1, \"x\": \"caf\xc3\xa9\"}\njob-2\tplain text\n", f);
    fclose(f);
    f = fopen(in1, "w");
    SW_ASSERT_NOT_NULL(f);
    fputs("{\"no\": \"key\"}\n", f);
    fclose(f);
    sw_buf_t out, err, ko, to, a, b;
    sw_buf_init(&out);
    sw_buf_init(&err);
    sw_buf_init(&ko);
    sw_buf_init(&to);
    sw_buf_init(&a);
    sw_buf_init(&b);
    char *p0[] = {kcat, "-b", mk->bootstrap, "-P", "-t",     "kc", "-p", "0", "-K",
                  "\t", "-H", "h1=one",      "-H", "h2=two", "-l", in0,  NULL};
    char *p1[] = {kcat, "-b", mk->bootstrap, "-P", "-t", "kc", "-p", "1", "-l", in1, NULL};
    SW_ASSERT(run(p0, NULL, &out, &err) == 0, "kcat -P: %s", err.data);
    SW_ASSERT(run(p1, NULL, &out, &err) == 0, "kcat -P: %s", err.data);
    char why[1024];

    /* -J */
    char *kj[] = {kcat, "-b", mk->bootstrap, "-C", "-t", "kc", "-J", "-e", "-q", NULL};
    char *tj[] = {(char *)sw_test_bin(), "tail", "-b", mk->bootstrap, "-t", "kc", "-J", "-e", NULL};
    SW_ASSERT(run(kj, NULL, &ko, &err) == 0, "kcat -J: %s", err.data);
    SW_ASSERT(run(tj, NULL, &to, &err) == 0, "tail -J: %s", err.data);
    SW_ASSERT(count_lines(ko.data) == 3, "kcat -J printed %s", ko.data);
    SW_ASSERT(same_json_lines(ko.data, to.data, why, sizeof(why)), "-J: %s\nkcat:\n%s\ntail:\n%s",
              why, ko.data, to.data);

    /* -f with every token and escape */
    const char *fmt = "%t|%p|%o|%k|%K|%s|%S|%T|%h|%%\\t\\\\\\n";
    char *kf[] = {kcat, "-b", mk->bootstrap, "-C", "-t", "kc", "-f", (char *)fmt, "-e", "-q", NULL};
    char *tf[] = {(char *)sw_test_bin(), "tail", "-b", mk->bootstrap, "-t", "kc", "-f",
                  (char *)fmt,           "-e",   NULL};
    SW_ASSERT(run(kf, NULL, &ko, &err) == 0, "kcat -f: %s", err.data);
    SW_ASSERT(run(tf, NULL, &to, &err) == 0, "tail -f: %s", err.data);
    sort_lines(ko.data, &a);
    sort_lines(to.data, &b);
    SW_ASSERT(a.len > 0 && !strcmp(a.data, b.data), "-f: kcat:\n%s\ntail:\n%s", a.data, b.data);
    SW_ASSERT_CONTAINS(b.data, "kc|0|0|job-1|5|{\"rank\": 1, \"x\": \"caf\xc3\xa9\"}|");
    SW_ASSERT_CONTAINS(b.data, "|h1=one,h2=two|%\t\\");

    /* -o e@MS (after every record: everything, then exit) and s@MS */
    char e_at[64], s_at[64];
    snprintf(e_at, sizeof(e_at), "e@%lld", (long long)(now_wall_ms() + 3600 * 1000));
    snprintf(s_at, sizeof(s_at), "s@%lld", (long long)(now_wall_ms() - 3600 * 1000));
    for (int k = 0; k < 2; k++) {
        char *ke[] = {kcat, "-b", mk->bootstrap,   "-C", "-t", "kc",
                      "-J", "-o", k ? s_at : e_at, "-e", "-q", NULL};
        char *te[] = {(char *)sw_test_bin(), "tail", "-b", mk->bootstrap, "-t", "kc", "-J", "-o",
                      k ? s_at : e_at,       "-e",   NULL};
        SW_ASSERT(run(ke, NULL, &ko, &err) == 0, "kcat -o %s: %s", ke[8], err.data);
        SW_ASSERT(run(te, NULL, &to, &err) == 0, "tail -o %s: %s", te[8], err.data);
        SW_ASSERT(same_json_lines(ko.data, to.data, why, sizeof(why)),
                  "-o %s: %s\nkcat:\n%s\ntail:\n%s", ke[8], why, ko.data, to.data);
        if (!k) SW_ASSERT(count_lines(to.data) == 3, "-o %s printed %s", te[8], to.data);
    }

    /* -G: a balanced consumer reads every record once and commits: a
     * second run of the same group finds nothing new. */
    char *tg[] = {
        (char *)sw_test_bin(), "tail",  "-b", mk->bootstrap, "-t", "kc", "-G", "kcg", "-J", "-e",
        "--timeout",           "20000", NULL};
    SW_ASSERT(run(tg, NULL, &to, &err) == 0, "tail -G: %s", err.data);
    SW_ASSERT(same_json_lines(ko.data, to.data, why, sizeof(why)) || count_lines(to.data) == 3,
              "-G: %s\n%s", why, to.data);
    SW_ASSERT(count_lines(to.data) == 3, "tail -G printed:\n%s", to.data);
    char *tg2[] = {
        (char *)sw_test_bin(), "tail", "-b", mk->bootstrap, "-t", "kc", "-G", "kcg", "-J",
        "--timeout",           "4000", NULL};
    SW_ASSERT(run(tg2, NULL, &to, &err) == 0, "tail -G again: %s", err.data);
    SW_ASSERT(count_lines(to.data) == 0, "tail -G again printed:\n%s", to.data);

    /* errors name the input */
    char *bad[] = {
        (char *)sw_test_bin(), "tail", "-b", mk->bootstrap, "-t", "kc", "-f", "%t %x", NULL};
    SW_ASSERT_I64(run(bad, NULL, &out, &err), 2);
    SW_ASSERT_CONTAINS(err.data, "unsupported token \"%x\" at position 4");
    char *badg[] = {
        (char *)sw_test_bin(), "tail", "-b", mk->bootstrap, "-t", "kc", "-G", "g", "-p", "1", NULL};
    SW_ASSERT_I64(run(badg, NULL, &out, &err), 2);
    SW_ASSERT_CONTAINS(err.data, "-p is not allowed");
    printf("ok - tail -J, -f, -o e@/s@ as kcat; -G reads once and commits\n");
    sw_buf_clear(&out);
    sw_buf_clear(&err);
    sw_buf_clear(&ko);
    sw_buf_clear(&to);
    sw_buf_clear(&a);
    sw_buf_clear(&b);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest events[] = {
        cmocka_unit_test(test_event_json_fixtures),
        cmocka_unit_test(test_event_json_typed_phase),
        cmocka_unit_test(test_event_json_corners),
    };
    const struct CMUnitTest kafka[] = {
        KAFKA_CASE(test_json_roundtrip),
        KAFKA_CASE(test_avro_roundtrip),
        KAFKA_CASE(test_raw_and_keys),
        KAFKA_CASE(test_kcat_parity),
    };
    int failed = cmocka_run_group_tests_name("sw_event_json", events, NULL, NULL);
    failed += cmocka_run_group_tests_name("produce and read back", kafka, mock_setup,
                                          mock_teardown);
    return failed ? 1 : 0;
}
