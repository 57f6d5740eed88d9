/*
 * Pager formats (sw_codec_pager) from the outside: the human text of SPEC 8
 * records in every pager format, the routing key kept out of -X dump,
 * errors and logs, the config error without a routing key, and one daemon
 * run (mock cluster in another process) with output.format=pagerduty.
 */
#include "pager_check.h"

/* ---- configuration and the binary ------------------------------------------ */

/* 28 characters: with a 4-character suffix, a 32-character routing key. */
#define SECRET "S3cr3tR0utingK3y7f1e00000000"

static void test_conf_check(void **state)
{
    (void)state;
    char err[512];
    sw_conf_t *conf = sw_conf_new();
    SW_ASSERT_I64(sw_conf_check(conf, err, sizeof(err)), SW_OK);
    SW_ASSERT_I64(sw_conf_set(conf, "output.format", "pagerduty", err, sizeof(err)), SW_CONF_OK);
    SW_ASSERT_I64(sw_conf_check(conf, err, sizeof(err)), SW_ERR_INVALID_ARG);
    SW_ASSERT_NOT_NULL(
        strstr(err, "\"pagerduty.routing.key\" is required with output.format=pagerduty"));
    SW_ASSERT_I64(sw_conf_set(conf, "pagerduty.routing.key", SECRET "abcd", err, sizeof(err)),
                  SW_CONF_OK);
    SW_ASSERT_I64(sw_conf_check(conf, err, sizeof(err)), SW_OK);
    SW_ASSERT_TRUE(sw_conf_is_secret("pagerduty.routing.key"));
    sw_buf_t out;
    sw_buf_init(&out);
    sw_conf_dump(conf, &out);
    SW_ASSERT_NOT_NULL(strstr(sw_buf_cstr(&out), "\npagerduty.routing.key=[redacted, set]\n"));
    SW_ASSERT_NULL(strstr(sw_buf_cstr(&out), SECRET));
    /* Alertmanager needs no key; its URL is checked. */
    SW_ASSERT_I64(sw_conf_set(conf, "output.format", "alertmanager", err, sizeof(err)), SW_CONF_OK);
    SW_ASSERT_I64(sw_conf_set(conf, "pagerduty.routing.key", NULL, err, sizeof(err)), SW_CONF_OK);
    SW_ASSERT_I64(sw_conf_check(conf, err, sizeof(err)), SW_OK);
    SW_ASSERT_I64(sw_conf_set(conf, "alertmanager.generator.url", "grafana/d/x", err, sizeof(err)),
                  SW_CONF_INVALID);
    SW_ASSERT_STREQ(err,
                    "configuration property \"alertmanager.generator.url\": value "
                    "\"grafana/d/x\" is not an http:// or https:// URL without blanks (or "
                    "empty)");
    SW_ASSERT_I64(sw_conf_set(conf, "alertmanager.generator.url", GEN_URL, err, sizeof(err)),
                  SW_CONF_OK);
    /* A bad secret value is never echoed. */
    char long_key[300];
    memset(long_key, 'K', sizeof(long_key) - 1);
    long_key[sizeof(long_key) - 1] = '\0';
    SW_ASSERT_I64(sw_conf_set(conf, "pagerduty.routing.key", long_key, err, sizeof(err)),
                  SW_CONF_INVALID);
    SW_ASSERT_NULL(strstr(err, "KKKK"));
    SW_ASSERT_NOT_NULL(strstr(err, "[redacted]"));
    sw_buf_clear(&out);
    sw_conf_destroy(conf);
}

/* Run a shell command, stdout and stderr together. */
static int run_cmd(sw_buf_t *out, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    out->len = 0;
    int rc = sw_test_run(cmd, out);
    sw_buf_cstr(out);
    return rc;
}

static void test_binary_secrets(void **state)
{
    (void)state;
    const char *bin = sw_test_bin();
    sw_buf_t out;
    sw_buf_init(&out);
    char dir[1024], conf_path[1100];
    snprintf(dir, sizeof(dir), "%s/pager", sw_test_tmp());
    snprintf(conf_path, sizeof(conf_path), "%s/pager.conf", dir);
    SW_ASSERT_I64(run_cmd(&out,
                          "mkdir -p '%s' && printf 'output.format = pagerduty\\n"
                          "pagerduty.routing.key = %sfile\\n' > '%s'",
                          dir, SECRET, conf_path),
                  0);
    /* -X, a file and the environment: dumped redacted. */
    for (int i = 0; i < 3; i++) {
        int rc;
        if (i == 0)
            rc = run_cmd(&out,
                         "'%s' run -X output.format=pagerduty -X pagerduty.routing.key=%sxxxx "
                         "-X dump 2>&1",
                         bin, SECRET);
        else if (i == 1) rc = run_cmd(&out, "'%s' run -c '%s' -X dump 2>&1", bin, conf_path);
        else
            rc = run_cmd(&out,
                         "STORMWATCH_PAGERDUTY_ROUTING_KEY=%s-env "
                         "STORMWATCH_OUTPUT_FORMAT=pagerduty '%s' run -X dump 2>&1",
                         SECRET, bin);
        SW_ASSERT_I64(rc, 0);
        if (!strstr(out.data, "\npagerduty.routing.key=[redacted, set]\n") ||
            strstr(out.data, SECRET))
            SW_FAIL("dump %d shows the key or lacks the redacted line:\n%s", i, out.data);
    }
    /* No key: a config error naming the property, exit 2, nothing connects
     * (the bootstrap address is a closed port). */
    int64_t t0 = sw_proc_now_ms();
    int rc = run_cmd(
        &out, "'%s' run -X output.format=pagerduty -X bootstrap.servers=127.0.0.1:9 2>&1", bin);
    SW_ASSERT_I64(rc, 2);
    SW_ASSERT_NOT_NULL(
        strstr(out.data, "\"pagerduty.routing.key\" is required with output.format=pagerduty"));
    SW_ASSERT_TRUE(sw_proc_now_ms() - t0 < 10000);
    /* A misspelled secret: refused by dump as by run, the value never printed. */
    rc = run_cmd(&out, "'%s' run -X kafka.sasl.pasword=%s -X dump 2>&1", bin, SECRET);
    SW_ASSERT_I64(rc, 2);
    SW_ASSERT_NULL(strstr(out.data, SECRET));
    rc = run_cmd(&out, "STORMWATCH_KAFKA_SSL_KEY_PASSWRD=%s '%s' run -X dump 2>&1", SECRET, bin);
    SW_ASSERT_I64(rc, 2);
    SW_ASSERT_NULL(strstr(out.data, SECRET));
    SW_ASSERT_NOT_NULL(strstr(out.data, "kafka.ssl.key.passwrd"));
    /* -X dump runs run's checks: the same configuration, the same exit 2. */
    rc = run_cmd(&out, "'%s' run -X output.format=pagerduty -X dump 2>&1", bin);
    SW_ASSERT_I64(rc, 2);
    SW_ASSERT_NOT_NULL(
        strstr(out.data, "\"pagerduty.routing.key\" is required with output.format=pagerduty"));
    /* PagerDuty keys are 32 characters; it answers 400 to others. */
    rc = run_cmd(&out,
                 "'%s' run -X output.format=pagerduty -X pagerduty.routing.key=%s -X dump 2>&1",
                 bin, SECRET);
    SW_ASSERT_I64(rc, 2);
    SW_ASSERT_NOT_NULL(
        strstr(out.data, "is 28 characters long (expected the 32-character integration key"));
    SW_ASSERT_NULL(strstr(out.data, SECRET));
    /* A bad value: the error never quotes the secret. */
    rc = run_cmd(&out,
                 "'%s' run -X 'pagerduty.routing.key=%s has blanks but is far too long for a "
                 "routing key: %0250d' 2>&1",
                 bin, SECRET, 0);
    SW_ASSERT_I64(rc, 2);
    SW_ASSERT_NOT_NULL(strstr(out.data, "pagerduty.routing.key"));
    SW_ASSERT_NULL(strstr(out.data, SECRET));
    /* The preview writes the same bodies offline. */
    char fx[1200];
    snprintf(fx, sizeof(fx), "%s/gen13.jsonl", sw_test_fixtures());
    rc = run_cmd(&out,
                 "'%s' replay --window-samples 8 --stale-ms 0 --output-format pagerduty "
                 "--routing-key %s '%s'",
                 bin, ROUTING_KEY, fx);
    SW_ASSERT_I64(rc, 0);
    json_t *lines = sw_test_parse_lines(out.data, out.len, NULL, 0);
    SW_ASSERT_NOT_NULL(lines);
    SW_ASSERT_TRUE(json_array_size(lines) >= 2);
    size_t i;
    json_t *v;
    json_array_foreach(lines, i, v) SW_ASSERT_STREQ(str_of(v, "routing_key"), ROUTING_KEY);
    json_decref(lines);
    /* The text preview: one line per record, its action first, then the
     * title the pager bodies carry (a trigger's is its summary). */
    sw_buf_t js;
    sw_buf_init(&js);
    rc = run_cmd(&js, "'%s' replay --window-samples 8 --stale-ms 0 '%s'", bin, fx);
    SW_ASSERT_I64(rc, 0);
    json_t *recs = sw_test_parse_lines(js.data, js.len, NULL, 0);
    SW_ASSERT_NOT_NULL(recs);
    rc = run_cmd(&js, "'%s' replay --window-samples 8 --stale-ms 0 --output-format text '%s'", bin,
                 fx);
    SW_ASSERT_I64(rc, 0);
    size_t nl = 0;
    for (size_t k = 0; k < js.len; k++) nl += js.data[k] == '\n';
    SW_ASSERT_I64((int64_t)nl, (int64_t)json_array_size(recs));
    const char *line = js.data;
    json_array_foreach(recs, i, v)
    {
        const char *act = str_of(v, "action");
        SW_ASSERT_TRUE(strncmp(line, act, strlen(act)) == 0 && line[strlen(act)] == ' ');
        /* A storm record's title; a summary that closes no open episode
         * says what the job showed instead. */
        bool closes = strcmp(act, "summary") != 0 ||
                      json_is_true(json_object_get(v, "episode_open"));
        SW_ASSERT_NOT_NULL(strstr(line, closes ? "Memory storm in job "
                                               : " summarised (input ended or job idle, "));
        line = strchr(line, '\n') + 1;
    }
    json_decref(recs);
    sw_buf_clear(&js);
    rc = run_cmd(&out, "'%s' replay --output-format xml '%s' 2>&1", bin, fx);
    SW_ASSERT_I64(rc, 2);
    SW_ASSERT_NOT_NULL(strstr(out.data, "--output-format"));
    sw_buf_clear(&out);
}

/* ---- one daemon run ---------------------------------------------------------- */

static int read_file_lines(const char *path, char ***lines)
{
    sw_buf_t b;
    sw_buf_init(&b);
    if (!sw_test_read_file(path, &b)) return -1;
    int n = 0;
    *lines = NULL;
    for (size_t i = 0; i < b.len;) {
        char *nl = memchr(b.data + i, '\n', b.len - i);
        size_t end = nl ? (size_t)(nl - b.data) : b.len;
        if (end > i) {
            *lines = realloc(*lines, (size_t)(n + 1) * sizeof(char *));
            (*lines)[n++] = strndup(b.data + i, end - i);
        }
        i = end + 1;
    }
    sw_buf_clear(&b);
    return n;
}

static void test_daemon(void **state)
{
    (void)state;
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/pager-run", sw_test_tmp());
    char cmd[2200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    SW_ASSERT_I64(system(cmd), 0);
    sw_test_mock_t mock;
    static const char *const topics[] = {"in.pd:2", "out.pd:2", "dlq.pd:1", "stormwatch.state:1",
                                         NULL};
    if (!sw_test_mock_start(&mock, dir, 1, false, topics))
        SW_FAIL("the mock cluster did not start");
    const char *boot = mock.boot;
    /* Partition 0: gen13 (its lifecycle records as in gen13.stream.jsonl;
     * the last episode is still open when the job goes idle, so its summary
     * resolves). Partition 1: a quiet job whose summary is no page. */
    char fx[1200];
    snprintf(fx, sizeof(fx), "%s/gen13.jsonl", sw_test_fixtures());
    char **lines = NULL;
    int n = read_file_lines(fx, &lines);
    SW_ASSERT_TRUE(n > 0);
    rd_kafka_t *rk = sw_kp_new(boot);
    for (int i = 0; i < n; i++)
        SW_ASSERT_TRUE(sw_kp_send(rk, "in.pd", 0, "job-13", 6, lines[i], strlen(lines[i])));
    int quiet = 3;
    for (int i = 0; i < quiet; i++) {
        char ev[256];
        snprintf(ev, sizeof(ev),
                 "{\"timestamp_ns\": %d000000000, \"event_type\": \"sample\", \"job_id\": "
                 "\"quiet\", \"rank\": 0, \"world_size\": 1, \"device_used_bytes\": 1000}",
                 i + 1);
        SW_ASSERT_TRUE(sw_kp_send(rk, "in.pd", 1, "quiet", 5, ev, strlen(ev)));
    }
    SW_ASSERT_TRUE(sw_kp_flush(rk, 10000));
    sw_kp_destroy(rk);

    /* The key goes in through the environment, as the README advises. */
    sw_test_daemon_t d;
    sw_test_daemon_init(&d, "run", dir, "run", boot);
    static const char *const props[] = {
        "input.topics=in.pd", "output.topic=out.pd",     "dlq.topic=dlq.pd",
        "group.id=pager",     "output.format=pagerduty", "window.samples=8",
        "stale.ms=0",         "state.restore=off",       "commit.interval.ms=200",
        "repartition=off", /* headers name the input partition */
        "job.idle.ms=1500",   "log.level=debug",         NULL};
    sw_test_daemon_xs(&d, props);
    setenv("STORMWATCH_PAGERDUTY_ROUTING_KEY", SECRET "abcd", 1);
    sw_test_daemon_start(&d);
    unsetenv("STORMWATCH_PAGERDUTY_ROUTING_KEY");

    /* The bodies `replay --output-format pagerduty` writes for gen13 with the
     * same parameters (run gives the same records on the same arrival order;
     * the stream fixture binds only its summary); nothing for the quiet job. */
    char sfx[1200];
    snprintf(sfx, sizeof(sfx), "%s/gen13.jsonl", sw_test_fixtures());
    sw_buf_t rb;
    sw_buf_init(&rb);
    SW_ASSERT_I64(run_cmd(&rb,
                          "'%s' replay --window-samples 8 --stale-ms 0 --output-format "
                          "pagerduty '%s' 2>/dev/null",
                          sw_test_bin(), sfx),
                  0);
    json_t *bodies = sw_test_parse_lines(rb.data, rb.len, NULL, 0);
    sw_buf_clear(&rb);
    SW_ASSERT_NOT_NULL(bodies);
    size_t want = json_array_size(bodies);
    SW_ASSERT_TRUE(want >= 2);
    SW_ASSERT_STREQ(str_of(json_array_get(bodies, 0), "event_action"), "trigger");
    sw_kmsg_t *m;
    size_t got = sw_kc_read(boot, "out.pd", 2, want, 3000, 60000, &m);
    /* Every input offset gets committed, the skipped summary's included. */
    int64_t committed = sw_kc_wait_committed(boot, "pager", "in.pd", 2, n + quiet, 20000);
    bool skipped_logged = sw_test_daemon_wait_log(&d, "not sent: no open episode", 1, 10000);
    int rc = sw_test_daemon_stop(&d, 30000);
    sw_test_mock_stop(&mock);

    if (got != want) SW_FAIL("%zu records on out.pd, expected %zu (see %s)", got, want, d.log);
    SW_ASSERT_I64(rc, 0);
    SW_ASSERT_I64(committed, n + quiet);
    SW_ASSERT_TRUE(skipped_logged);
    for (size_t i = 0; i < got; i++) {
        json_t *rp = json_array_get(bodies, i);
        json_t *rcd = json_object_get(json_object_get(rp, "payload"), "custom_details");
        SW_ASSERT_I64(m[i].partition, 0); /* the job's key */
        SW_ASSERT_STREQ(sw_kmsg_header(&m[i], "stormwatch.format"), "pagerduty");
        SW_ASSERT_STREQ(sw_kmsg_header(&m[i], "content-type"), "application/json");
        json_t *pd = parse_buf(m[i].value, m[i].len);
        SW_ASSERT_STREQ(str_of(pd, "routing_key"), SECRET "abcd");
        SW_ASSERT_STREQ(str_of(pd, "event_action"), str_of(rp, "event_action"));
        json_t *p = json_object_get(pd, "payload");
        json_t *cd = json_object_get(p, "custom_details");
        /* the first cause's host, as the record names it */
        json_t *fc = json_array_get(json_object_get(cd, "first_cause_suspects"), 0);
        char want_src[300];
        if (fc && json_is_string(json_object_get(fc, "host")))
            snprintf(want_src, sizeof(want_src), "%s", str_of(fc, "host"));
        else snprintf(want_src, sizeof(want_src), "job job-13");
        SW_ASSERT_STREQ(str_of(p, "source"), want_src);
        if (i == 0) SW_ASSERT_STRNE(want_src, "job job-13"); /* gen13's trigger names a host */
        SW_ASSERT_STREQ(str_of(p, "group"), "job-13");
        SW_ASSERT_STREQ(str_of(pd, "dedup_key"), str_of(cd, "dedup_key"));
        SW_ASSERT_STREQ(sw_kmsg_header(&m[i], "stormwatch.action"), str_of(cd, "action"));
        SW_ASSERT_STREQ(str_of(cd, "action"), str_of(rcd, "action"));
        json_decref(pd);
    }
    json_decref(bodies);
    sw_kmsg_free(m, got);
    for (int i = 0; i < n; i++) free(lines[i]);
    free(lines);
    /* The secret is in the records (PagerDuty wants it in the body), never
     * in the log. */
    SW_ASSERT_I64(sw_test_daemon_count(&d, SECRET), 0);
    SW_ASSERT_I64(sw_proc_count_text(d.out, SECRET), 0);
}

/* True when @p s holds a run of 13 or more digits: a raw epoch time in
 * ms or ns, which human text must not carry. */
static bool has_raw_time(const char *s)
{
    size_t run = 0;
    for (; *s; s++) {
        run = (*s >= '0' && *s <= '9') ? run + 1 : 0;
        if (run >= 13) return true;
    }
    return false;
}

/* The human text of SPEC 8 records (SPEC 8.6 "a crash ends"): a revision
 * names whom it replaces and by how much, counts and blind ranks are
 * stated, times are ISO 8601, the close resolves in every pager format. */
static void test_crash_texts(void **state)
{
    (void)state;
    int64_t t4 = INT64_C(1796173323456000000); /* 2026-12-02T01:02:03.456Z */
    sw_x8_t x;
    memset(&x, 0, sizeof(x));
    x.number = 1;
    x.open = true;
    x.first.rank = 14;
    x.first.cause = SW_DEATH_OOM;
    x.first.timestamp_ns = t4 - INT64_C(2100000000);
    x.first.aligned_timestamp_ns = t4 - INT64_C(2100000000);
    x.first.host = sw_str("node-3");
    x.first.has_device_id = true;
    x.first.device_id = 6;
    x.first.pid = 77;
    x.deaths = 3;
    x.deaths_total = 3;
    x.has_previous = true;
    x.previous_rank = 4;
    x.previous_aligned_ns = t4;
    int64_t dead[] = {14, 4, 5}, blind[] = {9, 11};
    x.dead_ranks = dead;
    x.n_dead = 3;
    sw_record_t rec;
    memset(&rec, 0, sizeof(rec));
    rec.action = SW_ACTION_CRASH;
    rec.analysis.has_job_id = true;
    rec.analysis.job_id = sw_str("crash-0");
    rec.analysis.anchor_rank = -1;
    rec.episode = 1;
    rec.revision = 1;
    rec.has_event_ts = true;
    rec.event_timestamp_ns = t4 + INT64_C(5000000000);
    rec.x8 = &x;
    rec.blind_ranks = blind;
    rec.n_blind = 2;
    sw_buf_t b;
    sw_buf_init(&b);
    sw_pager_title(&rec, &b);
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b),
                       "first death revised: rank 14 on node-3 GPU 6 died 2.1 s "
                       "before rank 4, which was named first (out of memory) at "
                       "2026-12-02T01:02:01.356Z; 3 ranks dead");
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "blind (collector degraded or silent): ranks 9, 11");
    SW_ASSERT_FALSE(has_raw_time(sw_buf_cstr(&b)));
    sw_pager_opts_t po = {SW_PAGER_ALERTMANAGER, ROUTING_KEY, GEN_URL, NOW_NS, NULL, 0};
    b.len = 0;
    SW_ASSERT_I64(sw_pager_encode(&rec, &po, &b), SW_PAGER_TRIGGER);
    json_t *am = parse_buf(b.data, b.len);
    const char *desc = json_string_value(
        json_object_get(json_object_get(json_array_get(am, 0), "annotations"), "description"));
    SW_ASSERT_NOT_NULL(desc);
    SW_ASSERT_CONTAINS(desc, "First death revised: rank 14 died 2.1 s before rank 4");
    SW_ASSERT_CONTAINS(desc, "2026-12-02T01:02:01.356Z");
    SW_ASSERT_FALSE(has_raw_time(desc));
    json_decref(am);
    /* JSON: previous_first_death in ns, parsed back. */
    b.len = 0;
    sw_alert_json_record(&b, &rec);
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b),
                       "\"previous_first_death\": {\"rank\": 4, "
                       "\"aligned_timestamp_ns\": 1796173323456000000}");
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "\"open\": true");

    /* The close: the final answer, resolved in both formats. */
    x.open = false;
    x.has_previous = false;
    x.end = SW_X8_END_JOB;
    x.deaths = 5;
    x.deaths_total = 5;
    rec.revision = 2;
    rec.has_event_ts = false;
    b.len = 0;
    sw_pager_title(&rec, &b);
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "crash 1: over, the job was summarised");
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "final answer: rank 14 on node-3 GPU 6 died first");
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "5 ranks dead");
    SW_ASSERT_I64(sw_pager_decide(&rec), SW_PAGER_RESOLVE);
    b.len = 0;
    SW_ASSERT_I64(sw_pager_encode(&rec, &po, &b), SW_PAGER_RESOLVE);
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "\"alertname\": \"GPURankCrash\"");
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "\"severity\": \"critical\"");
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "Crash 1 is over (the job was summarised");
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "\"endsAt\"");
    po.format = SW_PAGER_PAGERDUTY;
    b.len = 0;
    SW_ASSERT_I64(sw_pager_encode(&rec, &po, &b), SW_PAGER_RESOLVE);
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "\"event_action\": \"resolve\"");
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "\"dedup_key\": \"stormwatch/crash-0/crash/1\"");
    b.len = 0;
    sw_alert_json_record(&b, &rec);
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "\"open\": false");
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "\"closed_by\": \"job_summarised\"");

    /* A warning a crash closed: resolved under its own dedup key. */
    sw_x8_t w;
    memset(&w, 0, sizeof(w));
    w.number = 2;
    w.end = SW_X8_END_CRASH;
    w.closed_by_crash = 1;
    sw_record_t wr = rec;
    wr.action = SW_ACTION_WARNING;
    wr.x8 = &w;
    wr.n_blind = 0;
    b.len = 0;
    SW_ASSERT_I64(sw_pager_encode(&wr, &po, &b), SW_PAGER_RESOLVE);
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "\"dedup_key\": \"stormwatch/crash-0/warning/2\"");
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "closed, crash 1 opened");

    /* A storm-free job's summary says what was seen. */
    sw_record_t sum;
    memset(&sum, 0, sizeof(sum));
    sum.action = SW_ACTION_SUMMARY;
    sum.analysis = rec.analysis;
    sum.analysis.n_participating = 16;
    x.open = true;
    sum.job_crash = &x;
    b.len = 0;
    sw_pager_title(&sum, &b);
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b),
                       "Job crash-0 summarised (input ended or job idle, 16 "
                       "ranks): no memory storm; crash 1 (closed by this "
                       "summary): rank 14 died first (out of memory)");
    SW_ASSERT_TRUE(strstr(sw_buf_cstr(&b), "Memory storm in job") == NULL);
    sum.job_crash = NULL;
    b.len = 0;
    sw_pager_title(&sum, &b);
    SW_ASSERT_CONTAINS(sw_buf_cstr(&b), "no memory storm; no crash");
    sw_buf_clear(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crash_texts),
        cmocka_unit_test(test_conf_check),
        cmocka_unit_test(test_binary_secrets),
        cmocka_unit_test_teardown(test_daemon, sw_test_kill_children),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
