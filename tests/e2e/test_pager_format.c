/*
 * Pager formats (sw_codec_pager): every record the engine gives for every
 * shared fixture, encoded as a PagerDuty Events API v2 event and as an
 * Alertmanager v2 alert, parsed back with jansson and checked field by
 * field against the SPEC record and a lifecycle model kept here (which
 * summaries page, dedup keys per episode, labels per episode). Also: RFC
 * 3339 times against gmtime_r over the whole int64 range, summary cuts on
 * UTF-8 boundaries, PagerDuty's size limits and the Alertmanager shape.
 */
#include "pager_check.h"

/* RFC 3339 from gmtime_r: the oracle for sw_buf_put_rfc3339(). */
static void rfc_oracle(int64_t ns, char *out, size_t n)
{
    int64_t s = ns / 1000000000, f = ns % 1000000000;
    if (f < 0) {
        f += 1000000000;
        s--;
    }
    time_t t = (time_t)s;
    struct tm tm;
    SW_ASSERT_NOT_NULL(gmtime_r(&t, &tm));
    snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long long)f);
}

static const char *rfc(int64_t ns, sw_buf_t *b)
{
    b->len = 0;
    sw_buf_put_rfc3339(b, ns);
    return sw_buf_cstr(b);
}

static bool utf8_valid(const char *s, size_t n)
{
    json_t *v = json_stringn(s, n); /* jansson refuses invalid UTF-8 */
    bool ok = v != NULL;
    json_decref(v);
    return ok;
}

/* ---- the fixture run ------------------------------------------------------- */

typedef struct model_s {
    json_t *open;   /* job key -> true while an episode is open */
    json_t *keys;   /* "job\x1fepisode" -> PagerDuty dedup key */
    json_t *owners; /* dedup key -> "job\x1fepisode" */
    json_t *labels; /* "job\x1fepisode" -> Alertmanager labels */
    json_t *ranks;  /* "job\x1fepisode" -> first-cause rank of the trigger */
    int n[4];       /* records by action */
    int summary_resolves, summary_skips, rank_changes;
    const char *name;
} model_t;

static void job_key(const sw_record_t *rec, char *out, size_t n)
{
    const sw_analysis_t *a = &rec->analysis;
    if (a->has_job_id) snprintf(out, n, "j:%.*s", (int)a->job_id.len, a->job_id.ptr);
    else snprintf(out, n, "null");
}

static void check_pd(model_t *m, const sw_record_t *rec, json_t *spec, const char *ep_key,
                     bool resolves, const sw_buf_t *body)
{
    json_t *pd = parse_buf(body->data, body->len);
    SW_ASSERT_TRUE(json_is_object(pd));
    SW_ASSERT_I64(json_object_size(pd), 4);
    SW_ASSERT_STREQ(str_of(pd, "routing_key"), ROUTING_KEY);
    SW_ASSERT_STREQ(str_of(pd, "event_action"), resolves ? "resolve" : "trigger");
    const char *dk = str_of(pd, "dedup_key");
    SW_ASSERT_TRUE(strlen(dk) <= SW_PAGER_DEDUP_KEY_MAX);
    /* Short job ids: the record's own dedup key. */
    SW_ASSERT_STREQ(dk, str_of(spec, "dedup_key"));
    json_t *known = json_object_get(m->keys, ep_key);
    if (known) {
        SW_ASSERT_STREQ(dk, json_string_value(known));
    } else {
        json_t *owner = json_object_get(m->owners, dk);
        if (owner)
            SW_FAIL("%s: dedup key %s of %s already used by %s", m->name, dk, ep_key,
                    json_string_value(owner));
        json_object_set_new(m->keys, ep_key, json_string(dk));
        json_object_set_new(m->owners, dk, json_string(ep_key));
    }
    json_t *p = json_object_get(pd, "payload");
    SW_ASSERT_TRUE(json_is_object(p));
    const char *summary = str_of(p, "summary");
    SW_ASSERT_TRUE(*summary && strlen(summary) <= SW_PAGER_SUMMARY_MAX);
    /* The title: what happened first, the action last. */
    sw_buf_t title;
    sw_buf_init(&title);
    sw_pager_title(rec, &title);
    SW_ASSERT_STREQ(summary, sw_buf_cstr(&title));
    sw_buf_clear(&title);
    SW_ASSERT_TRUE(strncmp(summary, "Memory storm in job ", 20) == 0);
    char tail[64];
    snprintf(tail, sizeof(tail), "episode %lld, %s)", (long long)rec->episode,
             sw_action_str(rec->action));
    SW_ASSERT_CONTAINS(summary, tail);
    if (rec->action == SW_ACTION_SUMMARY)
        SW_ASSERT_CONTAINS(summary, " ended (job idle or input ended)");
    else if (rec->action == SW_ACTION_RESOLVE) SW_ASSERT_CONTAINS(summary, " ended");
    else if (rec->analysis.n_suspects && rec->analysis.has_onset)
        SW_ASSERT_CONTAINS(summary, " moved first (lead ");
    const char *sev = str_of(p, "severity");
    SW_ASSERT_TRUE(!strcmp(sev, "critical") || !strcmp(sev, "error") || !strcmp(sev, "warning") ||
                   !strcmp(sev, "info"));
    SW_ASSERT_STREQ(sev, str_of(spec, "severity"));
    /* The SPEC severity rule seen from here. */
    if (rec->action == SW_ACTION_RESOLVE || rec->action == SW_ACTION_SUMMARY)
        SW_ASSERT_STREQ(sev, "info");
    else if (rec->analysis.n_suspects && rec->analysis.suspects[0].confidence == SW_CONFIDENCE_HIGH)
        SW_ASSERT_STREQ(sev, "critical");
    /* The affected system: the first cause's host, else the job. */
    const sw_analysis_t *an = &rec->analysis;
    char want_src[300];
    if (an->n_suspects && an->suspects[0].has_source && an->suspects[0].host.len)
        snprintf(want_src, sizeof(want_src), "%.*s", (int)an->suspects[0].host.len,
                 an->suspects[0].host.ptr);
    else if (an->has_job_id)
        snprintf(want_src, sizeof(want_src), "job %.*s", (int)an->job_id.len, an->job_id.ptr);
    else snprintf(want_src, sizeof(want_src), "job <null>");
    SW_ASSERT_STREQ(str_of(p, "source"), want_src);
    char want_ts[64];
    rfc_oracle(rec->has_event_ts ? rec->event_timestamp_ns : NOW_NS, want_ts, sizeof(want_ts));
    SW_ASSERT_STREQ(str_of(p, "timestamp"), want_ts);
    SW_ASSERT_STREQ(str_of(p, "component"), "stormwatch");
    json_t *jid = json_object_get(spec, "job_id");
    SW_ASSERT_STREQ(str_of(p, "group"), json_is_null(jid) ? "<null>" : json_string_value(jid));
    SW_ASSERT_STREQ(str_of(p, "class"), "gpu-memory-storm");
    json_t *cd = json_object_get(p, "custom_details");
    SW_ASSERT_TRUE(json_is_object(cd));
    SW_ASSERT_TRUE(json_equal(cd, spec));
    SW_ASSERT_I64(json_object_size(p), 8);
    json_decref(pd);
}

static void check_am(model_t *m, const sw_record_t *rec, json_t *spec, const char *ep_key,
                     bool resolves, const sw_buf_t *body)
{
    json_t *am = parse_buf(body->data, body->len);
    SW_ASSERT_TRUE(json_is_array(am));
    SW_ASSERT_I64(json_array_size(am), 1);
    json_t *al = json_array_get(am, 0);
    json_t *labels = json_object_get(al, "labels"), *ann = json_object_get(al, "annotations");
    SW_ASSERT_TRUE(json_is_object(labels) && json_is_object(ann));
    const char *k;
    json_t *v;
    json_object_foreach(labels, k, v) SW_ASSERT_TRUE(json_is_string(v));
    json_object_foreach(ann, k, v) SW_ASSERT_TRUE(json_is_string(v));
    SW_ASSERT_I64(json_object_size(labels), 5);
    /* Routing label: the trigger's severity for the whole episode. */
    SW_ASSERT_STREQ(str_of(labels, "severity"), sw_record_episode_severity(rec));
    SW_ASSERT_STREQ(str_of(labels, "alertname"), "GPUMemoryStorm");
    json_t *jid = json_object_get(spec, "job_id");
    SW_ASSERT_STREQ(str_of(labels, "job_id"),
                    json_is_null(jid) ? "<null>" : json_string_value(jid));
    char ep[24];
    snprintf(ep, sizeof(ep), "%lld", (long long)rec->episode);
    SW_ASSERT_STREQ(str_of(labels, "episode"), ep);
    SW_ASSERT_STREQ(str_of(labels, "dedup_key"), str_of(spec, "dedup_key"));
    /* One alert per episode: the same labels from trigger to resolve. */
    json_t *first = json_object_get(m->labels, ep_key);
    if (first) {
        if (!json_equal(first, labels)) {
            char *a = json_dumps(first, 0), *b = json_dumps(labels, 0);
            SW_FAIL("%s: labels changed within %s: %s -> %s", m->name, ep_key, a, b);
        }
    } else {
        json_object_set(m->labels, ep_key, labels);
    }
    SW_ASSERT_STREQ(str_of(ann, "current_severity"), str_of(spec, "severity"));
    SW_ASSERT_STREQ(str_of(ann, "action"), sw_action_str(rec->action));
    SW_ASSERT_TRUE(*str_of(ann, "summary") && *str_of(ann, "description"));
    if (rec->analysis.n_suspects) {
        char r[24];
        snprintf(r, sizeof(r), "%lld", (long long)rec->analysis.suspects[0].rank);
        SW_ASSERT_STREQ(str_of(ann, "first_cause_rank"), r);
    }
    char want_ts[64];
    rfc_oracle(rec->has_event_ts ? rec->event_timestamp_ns : NOW_NS, want_ts, sizeof(want_ts));
    SW_ASSERT_STREQ(str_of(al, "startsAt"), want_ts);
    json_t *ends = json_object_get(al, "endsAt");
    if (resolves) SW_ASSERT_STREQ(json_string_value(ends), want_ts);
    else SW_ASSERT_NULL(ends);
    SW_ASSERT_STREQ(str_of(al, "generatorURL"), GEN_URL);
    json_decref(am);
}

static void on_record(model_t *m, const sw_record_t *rec_in)
{
    sw_record_t rec = *rec_in;
    rec.source.set = true;
    rec.source.topic = sw_str("gpu.telemetry");
    rec.source.partition = 3;
    rec.source.offset = rec.cause_offset;
    m->n[rec.action]++;

    char job[256], ep_key[300];
    job_key(&rec, job, sizeof(job));
    snprintf(ep_key, sizeof(ep_key), "%s\x1f%lld", job, (long long)rec.episode);
    bool was_open = json_is_true(json_object_get(m->open, job));
    /* The model: what should page. */
    bool skip = false, resolves = false;
    switch (rec.action) {
    case SW_ACTION_TRIGGER:
        SW_ASSERT_FALSE(was_open);
        json_object_set_new(m->open, job, json_true());
        break;
    case SW_ACTION_UPDATE: SW_ASSERT_TRUE(was_open); break;
    case SW_ACTION_RESOLVE:
        SW_ASSERT_TRUE(was_open);
        json_object_set_new(m->open, job, json_false());
        resolves = true;
        break;
    case SW_ACTION_SUMMARY:
        resolves = was_open;
        skip = !was_open;
        if (was_open) m->summary_resolves++;
        else m->summary_skips++;
        break;
    case SW_ACTION_CRASH:
    case SW_ACTION_WARNING: break; /* SPEC 8 records come from sw_detect_next(), not here */
    }
    /* Labels must not hold the first-cause rank: count how often it moves. */
    if (rec.analysis.n_suspects && rec.action != SW_ACTION_SUMMARY) {
        json_t *r0 = json_object_get(m->ranks, ep_key);
        if (!r0) json_object_set_new(m->ranks, ep_key, json_integer(rec.analysis.suspects[0].rank));
        else if (json_integer_value(r0) != rec.analysis.suspects[0].rank) m->rank_changes++;
    }
    SW_ASSERT_I64(sw_pager_decide(&rec), skip       ? SW_PAGER_SKIP
                                         : resolves ? SW_PAGER_RESOLVE
                                                    : SW_PAGER_TRIGGER);

    sw_buf_t spec_txt, body;
    sw_buf_init(&spec_txt);
    sw_buf_init(&body);
    sw_alert_json_record(&spec_txt, &rec);
    json_t *spec = parse_buf(spec_txt.data, spec_txt.len);

    sw_pager_opts_t po = {SW_PAGER_PAGERDUTY, ROUTING_KEY, GEN_URL, NOW_NS, NULL, 0};
    sw_pager_action_t act = sw_pager_encode(&rec, &po, &body);
    SW_ASSERT_I64(act, sw_pager_decide(&rec));
    if (skip) SW_ASSERT_I64(body.len, 0);
    else check_pd(m, &rec, spec, ep_key, resolves, &body);

    body.len = 0;
    po.format = SW_PAGER_ALERTMANAGER;
    SW_ASSERT_I64(sw_pager_encode(&rec, &po, &body), act);
    if (skip) SW_ASSERT_I64(body.len, 0);
    else check_am(m, &rec, spec, ep_key, resolves, &body);

    json_decref(spec);
    sw_buf_clear(&spec_txt);
    sw_buf_clear(&body);
}

static void on_summary(void *opaque, const sw_record_t *rec)
{
    /* SPEC 8's closing records after a summary: checked in test_crash_texts. */
    if (sw_action_is_x8(rec->action)) return;
    on_record(opaque, rec);
}

static void run_fixture(model_t *m, const char *name)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/%s.params.json", sw_test_fixtures(), name);
    json_error_t e;
    json_t *pj = json_load_file(path, 0, &e);
    SW_ASSERT_NOT_NULL(pj);
    sw_params_t params = sw_params_default();
    params.window_samples = json_integer_value(json_object_get(pj, "window.samples"));
    params.stale_ms = json_integer_value(json_object_get(pj, "stale.ms"));
    json_decref(pj);
    snprintf(path, sizeof(path), "%s/%s.jsonl", sw_test_fixtures(), name);
    sw_buf_t in;
    sw_buf_init(&in);
    SW_ASSERT_TRUE(sw_test_read_file(path, &in));
    sw_tdec_t *dec = sw_tdec_new();
    sw_detector_t *det = sw_detect_new(params);
    json_object_clear(m->open);
    m->name = name;
    for (size_t i = 0; i < in.len;) {
        char *nl = memchr(in.data + i, '\n', in.len - i);
        size_t end = nl ? (size_t)(nl - in.data) : in.len;
        sw_event_t ev;
        char err[256];
        const sw_record_t *rec = NULL;
        if (end > i && sw_tdec_json(dec, in.data + i, end - i, &ev, err, sizeof(err)) == SW_OK &&
            sw_detect_feed(det, &ev, 0, &rec, err, sizeof(err)) == SW_OK && rec)
            on_record(m, rec);
        i = end + 1;
    }
    sw_detect_finish(det, on_summary, m);
    sw_detect_destroy(det);
    sw_tdec_destroy(dec);
    sw_buf_clear(&in);
}

static void test_fixtures(void **state)
{
    (void)state;
    model_t m;
    memset(&m, 0, sizeof(m));
    m.open = json_object();
    m.keys = json_object();
    m.owners = json_object();
    m.labels = json_object();
    m.ranks = json_object();
    DIR *d = opendir(sw_test_fixtures());
    SW_ASSERT_NOT_NULL(d);
    struct dirent *de;
    int cases = 0;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 13 || strcmp(de->d_name + len - 12, ".params.json") != 0) continue;
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)(len - 12), de->d_name);
        /* Episodes of different fixtures may share job ids: keys are
         * checked per fixture. */
        json_object_clear(m.keys);
        json_object_clear(m.owners);
        json_object_clear(m.labels);
        json_object_clear(m.ranks);
        run_fixture(&m, name);
        cases++;
    }
    closedir(d);
    printf(
        "%d fixtures: %d trigger, %d update, %d resolve, %d summary records; summaries: %d "
        "resolve an open episode, %d skipped; first-cause rank moved within an episode %d "
        "times (annotations, not labels)\n",
        cases, m.n[0], m.n[1], m.n[2], m.n[3], m.summary_resolves, m.summary_skips, m.rank_changes);
    SW_ASSERT_TRUE(cases >= 10);
    /* Every branch of the mapping was exercised. */
    SW_ASSERT_TRUE(m.n[0] > 0 && m.n[1] > 0 && m.n[2] > 0);
    SW_ASSERT_TRUE(m.summary_resolves > 0 && m.summary_skips > 0);
    json_decref(m.open);
    json_decref(m.keys);
    json_decref(m.owners);
    json_decref(m.labels);
    json_decref(m.ranks);
}

/* ---- hand-made records ----------------------------------------------------- */

typedef struct fake_s {
    sw_record_t rec;
    sw_suspect_t sus[2];
    int64_t *ranks;
    sw_rank_val_t *vals;
} fake_t;

/* A trigger of a 2-rank job with one suspect. */
static void fake_init(fake_t *f, const char *job, size_t job_len)
{
    memset(f, 0, sizeof(*f));
    static const int64_t part[2] = {0, 1};
    sw_analysis_t *a = &f->rec.analysis;
    f->rec.action = SW_ACTION_TRIGGER;
    f->rec.episode = 1;
    f->rec.episode_confidence = SW_CONFIDENCE_HIGH;
    f->rec.episode_open = true;
    f->rec.has_event_ts = true;
    f->rec.event_timestamp_ns = INT64_C(1700000000123456789);
    a->has_job_id = job != NULL;
    a->job_id = (sw_str_t){job, job_len};
    a->world_size = 2;
    a->participating = part;
    a->n_participating = 2;
    a->anchor_rank = 0;
    a->has_onset = true;
    a->onset_ns = UINT64_C(1700000000000000000);
    f->sus[0].rank = 1;
    f->sus[0].confidence = SW_CONFIDENCE_HIGH;
    f->sus[0].lead_over_cluster_onset_ns = 250000000;
    f->sus[0].peak_delta_bytes = INT64_C(4) << 30;
    f->sus[0].supporting_ranks = 1;
    a->suspects = f->sus;
    a->n_suspects = 1;
}

static void fake_clear(fake_t *f)
{
    free(f->ranks);
    free(f->vals);
}

static json_t *encode(const sw_record_t *rec, sw_pager_format_t fmt, size_t *len)
{
    sw_pager_opts_t po = {fmt, ROUTING_KEY, NULL, NOW_NS, NULL, 0};
    sw_buf_t b;
    sw_buf_init(&b);
    SW_ASSERT_I64_NE(sw_pager_encode(rec, &po, &b), SW_PAGER_SKIP);
    if (len) *len = b.len;
    json_t *v = parse_buf(b.data, b.len);
    sw_buf_clear(&b);
    return v;
}

static void test_rfc3339(void **state)
{
    (void)state;
    sw_buf_t b;
    sw_buf_init(&b);
    static const struct {
        int64_t ns;
        const char *want;
    } known[] = {
        {0, "1970-01-01T00:00:00.000000000Z"},
        {1, "1970-01-01T00:00:00.000000001Z"},
        {-1, "1969-12-31T23:59:59.999999999Z"},
        {-1000000000, "1969-12-31T23:59:59.000000000Z"},
        {-1000000001, "1969-12-31T23:59:58.999999999Z"},
        {INT64_C(1700000000123456789), "2023-11-14T22:13:20.123456789Z"},
        {INT64_C(951782400) * 1000000000, "2000-02-29T00:00:00.000000000Z"},
        {INT64_C(951868799) * 1000000000 + 999999999, "2000-02-29T23:59:59.999999999Z"},
        {INT64_C(4107456000) * 1000000000, "2100-02-28T00:00:00.000000000Z"},
        {INT64_C(4107542400) * 1000000000, "2100-03-01T00:00:00.000000000Z"},
        {INT64_C(-2203891200) * 1000000000, "1900-03-01T00:00:00.000000000Z"},
        {INT64_MAX, "2262-04-11T23:47:16.854775807Z"},
        {INT64_MIN, "1677-09-21T00:12:43.145224192Z"},
        {INT64_MIN + 1, "1677-09-21T00:12:43.145224193Z"},
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        SW_ASSERT_STREQ(rfc(known[i].ns, &b), known[i].want);
    /* Against gmtime_r over the whole range (64-bit time_t), and every
     * instant parses back with strptime-free arithmetic: lengths fixed. */
    uint64_t x = 0x9e3779b97f4a7c15u;
    char want[64];
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int64_t ns = (int64_t)x;
        if (i % 4 == 1) ns %= INT64_C(86400000000000) * 800; /* near the epoch */
        rfc_oracle(ns, want, sizeof(want));
        const char *got = rfc(ns, &b);
        if (strcmp(got, want) != 0) SW_FAIL("%lld: got %s, want %s", (long long)ns, got, want);
        SW_ASSERT_I64(strlen(got), 30);
    }
    sw_buf_clear(&b);
}

static void test_utf8_cut(void **state)
{
    (void)state;
    SW_ASSERT_I64(sw_pager_utf8_cut("abc", 3, 5), 3);
    SW_ASSERT_I64(sw_pager_utf8_cut("abc", 3, 2), 2);
    SW_ASSERT_I64(sw_pager_utf8_cut("a\xc3\xa9", 3, 2), 1);
    SW_ASSERT_I64(sw_pager_utf8_cut("a\xe2\x80\xa6z", 5, 3), 1);
    SW_ASSERT_I64(sw_pager_utf8_cut("a\xf0\x9f\x94\xa5z", 6, 4), 1);
    SW_ASSERT_I64(sw_pager_utf8_cut("a\xf0\x9f\x94\xa5z", 6, 5), 5);
    /* Not UTF-8: a run of continuation bytes is cut where asked. */
    SW_ASSERT_I64(sw_pager_utf8_cut("\x80\x80\x80\x80\x80\x80", 6, 4), 4);

    /* The summary of a job whose id puts the cut inside every kind of
     * sequence, at every offset. */
    static const char *const chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x94\xa5",
                                        "\xed\xa0\x80" /* lone surrogate, WTF-8 */};
    for (size_t c = 0; c < 4; c++) {
        for (size_t pad = 0; pad < 4; pad++) {
            sw_buf_t job, full;
            sw_buf_init(&job);
            sw_buf_init(&full);
            for (size_t k = 0; k < pad; k++) sw_buf_putc(&job, 'a');
            while (job.len < 1500) sw_buf_puts(&job, chars[c]);
            fake_t f;
            fake_init(&f, job.data, job.len);
            sw_pager_title(&f.rec, &full);
            json_t *pd = encode(&f.rec, SW_PAGER_PAGERDUTY, NULL);
            const char *s = str_of(json_object_get(pd, "payload"), "summary");
            size_t n = strlen(s);
            SW_ASSERT_TRUE(n <= SW_PAGER_SUMMARY_MAX && n >= SW_PAGER_SUMMARY_MAX - 6);
            SW_ASSERT_TRUE(utf8_valid(s, n));
            SW_ASSERT_MEMEQ(s + n - 3, "\xe2\x80\xa6", 3);
            if (c < 3) SW_ASSERT_MEMEQ(s, full.data, n - 3); /* a prefix, then "..." */
            /* The same line in Alertmanager's annotations. */
            json_t *am = encode(&f.rec, SW_PAGER_ALERTMANAGER, NULL);
            SW_ASSERT_STREQ(
                str_of(json_object_get(json_array_get(am, 0), "annotations"), "summary"), s);
            const char *dk = str_of(pd, "dedup_key");
            SW_ASSERT_TRUE(strlen(dk) <= SW_PAGER_DEDUP_KEY_MAX && utf8_valid(dk, strlen(dk)));
            json_decref(pd);
            json_decref(am);
            sw_buf_clear(&job);
            sw_buf_clear(&full);
            fake_clear(&f);
        }
    }
    /* Lone surrogates (WTF-8 from the decoder) become U+FFFD, a pair stays
     * a pair, and an escaped backslash before "ud800" is left alone. */
    static const struct {
        const char *job, *group;
    } sur[] = {
        {"a\xed\xa0\x80"
         "b",
         "a\xef\xbf\xbd"
         "b"},
        {"\xed\xb0\x80", "\xef\xbf\xbd"},
        {"\xed\xa0\x80\xed\xb0\x80", "\xf0\x90\x80\x80"},
        {"x\\ud800", "x\\ud800"},
    };
    for (size_t i = 0; i < sizeof(sur) / sizeof(sur[0]); i++) {
        fake_t g;
        fake_init(&g, sur[i].job, strlen(sur[i].job));
        json_t *pd = encode(&g.rec, SW_PAGER_PAGERDUTY, NULL);
        SW_ASSERT_STREQ(str_of(json_object_get(pd, "payload"), "group"), sur[i].group);
        json_t *am = encode(&g.rec, SW_PAGER_ALERTMANAGER, NULL);
        SW_ASSERT_STREQ(str_of(json_object_get(json_array_get(am, 0), "labels"), "job_id"),
                        sur[i].group);
        json_decref(pd);
        json_decref(am);
        fake_clear(&g);
    }
    /* A short title is whole: what happened, where, then the action; the
     * source is the first cause's host, or the job without one. */
    fake_t f;
    fake_init(&f, "job-a", 5);
    json_t *pd = encode(&f.rec, SW_PAGER_PAGERDUTY, NULL);
    SW_ASSERT_STREQ(str_of(json_object_get(pd, "payload"), "summary"),
                    "Memory storm in job job-a: rank 1 moved first (lead 250 ms, high confidence, "
                    "phase unknown, +4.00 GiB, 1 rank at onset; episode 1, trigger)");
    SW_ASSERT_STREQ(str_of(json_object_get(pd, "payload"), "source"), "job job-a");
    json_decref(pd);
    f.sus[0].has_source = true;
    f.sus[0].host = sw_str("node-000");
    f.sus[0].has_device_id = true;
    f.sus[0].device_id = 3;
    f.rec.action = SW_ACTION_RESOLVE;
    f.rec.resolve_reason = SW_RESOLVE_SUSPECT_LOST;
    f.rec.resolve_rank = 1;
    pd = encode(&f.rec, SW_PAGER_PAGERDUTY, NULL);
    SW_ASSERT_STREQ(str_of(json_object_get(pd, "payload"), "summary"),
                    "Memory storm in job job-a ended: rank 1 on node-000 GPU 3 had moved first "
                    "(the spike of rank 1 left its window; episode 1, resolve)");
    SW_ASSERT_STREQ(str_of(json_object_get(pd, "payload"), "source"), "node-000");
    json_decref(pd);
    sw_buf_t full;
    sw_buf_init(&full);
    sw_buf_clear(&full);
    fake_clear(&f);
}

static void test_long_job_dedup_key(void **state)
{
    (void)state;
    char *job = malloc(2000), *other = malloc(2000);
    memset(job, 'x', 2000);
    memcpy(other, job, 2000);
    other[1999] = 'y'; /* differs only past what the key keeps */
    fake_t f;
    fake_init(&f, job, 2000);
    sw_buf_t k1, k2, k3, k4;
    sw_buf_init(&k1);
    sw_buf_init(&k2);
    sw_buf_init(&k3);
    sw_buf_init(&k4);
    sw_pager_dedup_key(&f.rec, &k1);
    f.rec.action = SW_ACTION_UPDATE;
    f.rec.revision = 3;
    f.sus[0].rank = 0; /* an update that moves the first cause */
    sw_pager_dedup_key(&f.rec, &k2);
    f.rec.episode = 2;
    sw_pager_dedup_key(&f.rec, &k3);
    f.rec.episode = 1;
    f.rec.analysis.job_id.ptr = other;
    sw_pager_dedup_key(&f.rec, &k4);
    SW_ASSERT_TRUE(k1.len <= SW_PAGER_DEDUP_KEY_MAX && k3.len <= SW_PAGER_DEDUP_KEY_MAX);
    SW_ASSERT_STREQ(sw_buf_cstr(&k1), sw_buf_cstr(&k2));
    SW_ASSERT_STRNE(sw_buf_cstr(&k1), sw_buf_cstr(&k3));
    SW_ASSERT_STRNE(sw_buf_cstr(&k1), sw_buf_cstr(&k4));
    SW_ASSERT_TRUE(strncmp(sw_buf_cstr(&k1), "stormwatch/xxxx", 15) == 0);
    /* Short ids: exactly the record's dedup key. */
    fake_t g;
    fake_init(&g, NULL, 0);
    k1.len = k2.len = 0;
    sw_pager_dedup_key(&g.rec, &k1);
    sw_record_dedup_key(&g.rec, &k2);
    SW_ASSERT_STREQ(sw_buf_cstr(&k1), sw_buf_cstr(&k2));
    SW_ASSERT_STREQ(sw_buf_cstr(&k1), "stormwatch/<null>/episode/1");
    sw_buf_clear(&k1);
    sw_buf_clear(&k2);
    sw_buf_clear(&k3);
    sw_buf_clear(&k4);
    fake_clear(&f);
    fake_clear(&g);
    free(job);
    free(other);
}

/* A job of @p n ranks: participating ranks and both maps hold all of them. */
static void fake_big(fake_t *f, size_t n)
{
    f->ranks = malloc(n * sizeof(*f->ranks));
    f->vals = malloc(n * sizeof(*f->vals));
    for (size_t i = 0; i < n; i++) {
        f->ranks[i] = (int64_t)i;
        f->vals[i] = (sw_rank_val_t){(int64_t)i, INT64_C(-1234567890123)};
    }
    sw_analysis_t *a = &f->rec.analysis;
    a->world_size = (int64_t)n;
    a->participating = f->ranks;
    a->n_participating = n;
    a->counts = f->vals;
    a->n_counts = n;
    a->offsets = f->vals;
    a->n_offsets = n;
}

static void test_size_limit(void **state)
{
    (void)state;
    /* A 131072-rank job: its trigger lists every participating rank, its
     * summary (that resolves) carries both maps in full. */
    for (int summary = 0; summary <= 1; summary++) {
        fake_t f;
        fake_init(&f, "big-job", 7);
        fake_big(&f, 131072);
        if (summary) {
            f.rec.action = SW_ACTION_SUMMARY;
            f.rec.has_event_ts = false;
        }
        size_t len;
        json_t *pd = encode(&f.rec, SW_PAGER_PAGERDUTY, &len);
        SW_ASSERT_TRUE(len <= SW_PAGER_EVENT_MAX);
        SW_ASSERT_STREQ(str_of(pd, "event_action"), summary ? "resolve" : "trigger");
        json_t *cd = json_object_get(json_object_get(pd, "payload"), "custom_details");
        SW_ASSERT_NOT_NULL(strstr(str_of(cd, "truncated"), "512 KB"));
        SW_ASSERT_NOT_NULL(strstr(str_of(cd, "truncated"), "131072 participating"));
        SW_ASSERT_I64(json_object_size(json_object_get(cd, "rank_sample_counts")), 0);
        SW_ASSERT_I64(json_object_size(json_object_get(cd, "alignment_offsets_ns")), 0);
        SW_ASSERT_I64(json_array_size(json_object_get(cd, "participating_ranks")), 0);
        /* What matters for the page is still there. */
        SW_ASSERT_I64(json_array_size(json_object_get(cd, "first_cause_suspects")), 1);
        SW_ASSERT_I64(json_integer_value(json_object_get(cd, "world_size")), 131072);
        SW_ASSERT_STREQ(str_of(cd, "dedup_key"), str_of(pd, "dedup_key"));
        json_decref(pd);
        fake_clear(&f);
    }
    /* A small record is never cut. */
    fake_t s;
    fake_init(&s, "small", 5);
    json_t *pd = encode(&s.rec, SW_PAGER_PAGERDUTY, NULL);
    SW_ASSERT_NULL(json_object_get(
        json_object_get(json_object_get(pd, "payload"), "custom_details"), "truncated"));
    json_decref(pd);
    /* A job id of 600 KB: only the lifecycle fields fit. */
    size_t n = 600 * 1024;
    char *job = malloc(n);
    memset(job, 'j', n);
    fake_t f;
    fake_init(&f, job, n);
    size_t len;
    pd = encode(&f.rec, SW_PAGER_PAGERDUTY, &len);
    SW_ASSERT_TRUE(len <= SW_PAGER_EVENT_MAX);
    json_t *p = json_object_get(pd, "payload");
    json_t *cd = json_object_get(p, "custom_details");
    SW_ASSERT_NOT_NULL(strstr(str_of(cd, "truncated"), "only the lifecycle fields"));
    SW_ASSERT_STREQ(str_of(cd, "action"), "trigger");
    SW_ASSERT_I64(json_integer_value(json_object_get(cd, "episode")), 1);
    SW_ASSERT_I64(json_integer_value(json_object_get(cd, "first_cause_rank")), 1);
    SW_ASSERT_TRUE(strlen(str_of(cd, "job_id")) <= 1024);
    SW_ASSERT_TRUE(strlen(str_of(p, "group")) <= 1024);
    SW_ASSERT_TRUE(strlen(str_of(p, "summary")) <= SW_PAGER_SUMMARY_MAX);
    SW_ASSERT_TRUE(strlen(str_of(pd, "dedup_key")) <= SW_PAGER_DEDUP_KEY_MAX);
    json_decref(pd);
    fake_clear(&f);
    fake_clear(&s);
    free(job);
}

static void test_alertmanager_shape(void **state)
{
    (void)state;
    fake_t f;
    fake_init(&f, "job-7", 5);
    sw_pager_opts_t po = {SW_PAGER_ALERTMANAGER, NULL, NULL, NOW_NS, NULL, 0};
    sw_buf_t b;
    sw_buf_init(&b);
    /* Trigger, an update that moves the first cause and the severity, then
     * a resolve: one alert (same labels), endsAt only on the resolve. */
    json_t *labels = NULL;
    for (int step = 0; step < 3; step++) {
        if (step == 1) {
            f.rec.action = SW_ACTION_UPDATE;
            f.rec.revision = 1;
            f.sus[0].rank = 0;
            f.sus[0].confidence = SW_CONFIDENCE_LOW;
        } else if (step == 2) {
            f.rec.action = SW_ACTION_RESOLVE;
            f.rec.revision = 2;
            f.rec.analysis.has_onset = false;
            f.rec.event_timestamp_ns += 5000000000;
        }
        b.len = 0;
        SW_ASSERT_I64(sw_pager_encode(&f.rec, &po, &b),
                      step == 2 ? SW_PAGER_RESOLVE : SW_PAGER_TRIGGER);
        json_t *am = parse_buf(b.data, b.len);
        json_t *al = json_array_get(am, 0);
        SW_ASSERT_I64(json_array_size(am), 1);
        if (!labels) labels = json_incref(json_object_get(al, "labels"));
        else SW_ASSERT_TRUE(json_equal(labels, json_object_get(al, "labels")));
        json_t *ann = json_object_get(al, "annotations");
        SW_ASSERT_STREQ(str_of(ann, "first_cause_rank"), step == 0 ? "1" : "0");
        SW_ASSERT_STREQ(str_of(ann, "current_severity"), step == 0   ? "critical"
                                                         : step == 1 ? "warning"
                                                                     : "info");
        SW_ASSERT_NULL(json_object_get(al, "generatorURL")); /* not configured */
        if (step == 2) SW_ASSERT_STREQ(str_of(al, "endsAt"), "2023-11-14T22:13:25.123456789Z");
        else SW_ASSERT_NULL(json_object_get(al, "endsAt")); /* ends.after.ms = 0 */
        json_decref(am);
    }
    /* The severity label stays the trigger's; the first cause is no label. */
    SW_ASSERT_STREQ(str_of(labels, "severity"), "critical");
    SW_ASSERT_NULL(json_object_get(labels, "first_cause_rank"));
    json_decref(labels);
    /* Summaries: skipped without an open episode, a resolve with one. */
    f.rec.action = SW_ACTION_SUMMARY;
    f.rec.has_event_ts = false;
    f.rec.episode_open = false;
    f.rec.analysis.has_onset = true; /* evidence of an ended episode: still no page */
    b.len = 0;
    SW_ASSERT_I64(sw_pager_encode(&f.rec, &po, &b), SW_PAGER_SKIP);
    SW_ASSERT_I64(b.len, 0);
    f.rec.episode_open = true;
    SW_ASSERT_I64(sw_pager_encode(&f.rec, &po, &b), SW_PAGER_RESOLVE);
    json_t *am = parse_buf(b.data, b.len);
    char want[64];
    rfc_oracle(NOW_NS, want, sizeof(want));
    SW_ASSERT_STREQ(str_of(json_array_get(am, 0), "endsAt"), want);
    json_decref(am);
    /* alertmanager.ends.after.ms: a firing alert ends that far ahead of
     * now, so Alertmanager's resolve_timeout cannot end a long episode;
     * static labels join the alert's own. */
    f.rec.action = SW_ACTION_UPDATE;
    f.rec.has_event_ts = true;
    po.ends_after_ms = 900000;
    po.labels = "cluster=a100-east,team=ml_infra";
    b.len = 0;
    SW_ASSERT_I64(sw_pager_encode(&f.rec, &po, &b), SW_PAGER_TRIGGER);
    am = parse_buf(b.data, b.len);
    rfc_oracle(NOW_NS + INT64_C(900000) * 1000000, want, sizeof(want));
    SW_ASSERT_STREQ(str_of(json_array_get(am, 0), "endsAt"), want);
    json_t *lab = json_object_get(json_array_get(am, 0), "labels");
    SW_ASSERT_STREQ(str_of(lab, "cluster"), "a100-east");
    SW_ASSERT_STREQ(str_of(lab, "team"), "ml_infra");
    SW_ASSERT_STREQ(str_of(lab, "severity"), "critical");
    json_decref(am);
    f.rec.action = SW_ACTION_SUMMARY;
    f.rec.has_event_ts = false;
    f.rec.episode = 0; /* never had an episode: never a page */
    SW_ASSERT_I64(sw_pager_decide(&f.rec), SW_PAGER_SKIP);
    sw_buf_clear(&b);
    fake_clear(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc3339),
        cmocka_unit_test(test_utf8_cut),
        cmocka_unit_test(test_long_job_dedup_key),
        cmocka_unit_test(test_size_limit),
        cmocka_unit_test(test_alertmanager_shape),
        cmocka_unit_test(test_fixtures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
