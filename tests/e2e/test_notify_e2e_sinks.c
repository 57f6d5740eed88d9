/*
 * `stormwatch notify` end to end with PagerDuty and a webhook, each case with
 * its own mock cluster (a `stormwatch mock` process) and its own notify group:
 *  - pagerduty_webhook: an in-test HTTP server (libmicrohttpd) scripts 429
 *    with Retry-After, 500, 503, a timeout and 400; records are produced
 *    twice: every page is accepted exactly once per sink, Retry-After is
 *    honoured, the 400 and an undecodable record are dead-lettered with
 *    status, body and reason, webhook signatures and auth headers (basic,
 *    bearer) check out, the webhook rate limit holds, metrics and probes
 *    answer.
 *  - conf_errors: configuration errors before connecting (exit 2, the
 *    property named, secrets never quoted), -X dump.
 *  - rebalance: a second instance joins; the partition that changes hands
 *    is rebuilt by its new owner: repeats are skipped, resolves sent once.
 *  - stop_retrying: SIGTERM while a sink refuses connections stops at once
 *    (exit 0) without committing the undelivered record; a missing
 *    notify.dlq.topic is created.
 *  - kill9: notify is killed (SIGKILL) while a webhook request is in
 *    flight, then restarted: it rebuilds the open episode from the commit
 *    metadata, delivers every record exactly once and skips duplicates
 *    produced afterwards; a clean restart with two open episodes re-reads
 *    them without sending or committing backwards.
 */
#include "notify_env.h"

#define ROUTING_KEY "0123456789abcdef0123456789abcdef"
#define HMAC_SECRET "webhook-s3cret"

/* "job/episode/revision/action" of a webhook body (the record). */
static void record_key(const char *json, char *out, size_t n)
{
    json_error_t je;
    json_t *v = json_loads(json, 0, &je);
    if (!v) SW_FAIL("webhook body is not JSON: %s", json);
    snprintf(out, n, "%s/%lld/%lld/%s", json_string_value(json_object_get(v, "job_id")),
             (long long)json_integer_value(json_object_get(v, "episode")),
             (long long)json_integer_value(json_object_get(v, "revision")),
             json_string_value(json_object_get(v, "action")));
    json_decref(v);
}

/* "dedup_key/event_action" of a PagerDuty body. */
static void pd_key(const char *json, char *out, size_t n)
{
    json_error_t je;
    json_t *v = json_loads(json, 0, &je);
    if (!v) SW_FAIL("PagerDuty body is not JSON: %s", json);
    SW_ASSERT_STREQ(json_string_value(json_object_get(v, "routing_key")), ROUTING_KEY);
    snprintf(out, n, "%s/%s", json_string_value(json_object_get(v, "dedup_key")),
             json_string_value(json_object_get(v, "event_action")));
    json_decref(v);
}

/* Accepted requests to @p path, keyed; fails on a key accepted twice. */
static int accepted_once(srv_t *s, const char *path, json_t *seen)
{
    int n = 0;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->n; i++) {
        req_t *r = &s->reqs[i];
        if (strcmp(r->path, path) || r->status < 200 || r->status >= 300) continue;
        char key[512];
        if (!strcmp(path, "/pd")) pd_key(r->body, key, sizeof(key));
        else record_key(r->body, key, sizeof(key));
        if (json_object_get(seen, key)) {
            pthread_mutex_unlock(&s->lock);
            SW_FAIL("%s accepted twice: %s", path, key);
        }
        json_object_set_new(seen, key, json_true());
        n++;
    }
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* ---- PagerDuty and webhook ------------------------------------------------- */

static void test_pagerduty_webhook(void **state)
{
    (void)state;
    env_t e;
    env_start(&e, "pd");
    srv_t s;
    memset(&s, 0, sizeof(s));
    static const ans_t pd_script[] = {ANS_429, ANS_500, ANS_TIMEOUT};
    static const ans_t wh_script[] = {ANS_503};
    s.pd_script = pd_script;
    s.n_pd_script = 3;
    s.wh_script = wh_script;
    s.n_wh_script = 1;
    srv_start(&s);

    /* job-A's six records, all of them again (at-least-once input), a
     * trigger PagerDuty refuses (400), a value that is no record. */
    char **a;
    int na = job_records(&e, "job-A", &a);
    char **bad;
    job_records(&e, "job-bad", &bad);
    char *vals[16];
    int nv = 0;
    SW_ASSERT_I64(na, 4);
    for (int i = 0; i < na; i++) vals[nv++] = a[i];
    for (int i = 0; i < na; i++) vals[nv++] = a[i];
    vals[nv++] = bad[0];
    vals[nv++] = "this is not an alert record";
    produce(e.boot, "alerts", 0, "job-A", vals, nv);

    char pd_url[128], wh_url[128];
    snprintf(pd_url, sizeof(pd_url), "pagerduty.url=http://127.0.0.1:%d/pd", s.port);
    snprintf(wh_url, sizeof(wh_url), "webhook.url=http://127.0.0.1:%d/wh", s.port);
    char *extra[] = {pd_url,
                     wh_url,
                     "pagerduty.routing.key=" ROUTING_KEY,
                     "webhook.hmac.secret=" HMAC_SECRET,
                     "pagerduty.timeout.ms=500",
                     "notify.retry.backoff.ms=20",
                     "notify.retry.backoff.max.ms=200",
                     "pagerduty.rate.limit=0",
                     "metrics.listen=127.0.0.1:0",
                     "pagerduty.auth.basic=pd-user:pd-pass",
                     "webhook.auth.bearer.token=wh-token",
                     "webhook.rate.limit=2",
                     NULL};
    sw_test_daemon_t n;
    start_notify(&n, &e, "pd", "notify", extra);
    bool done = wait_committed(e.boot, "pd", "alerts", 2, nv, 60000);
    sw_kmsg_t *dl = NULL;
    size_t ndl = sw_kc_read(e.boot, "ndlq", 1, 2, 500, 20000, &dl);
    /* Metrics and probes while it runs: caught up, so ready. */
    int mport = sw_test_daemon_metrics_port(&n, 0);
    sw_buf_t mbody, rbody;
    sw_buf_init(&mbody);
    sw_buf_init(&rbody);
    sw_test_daemon_wait_ready(&n, mport, 5000);
    int ready = mport ? sw_test_http_get(mport, "/readyz", &rbody) : 0;
    int healthy = mport ? sw_test_http_get(mport, "/healthz", &rbody) : 0;
    if (mport) sw_test_http_get(mport, "/metrics", &mbody);
    int rc = sw_test_daemon_stop(&n, 30000);
    env_stop(&e);
    const char *err_path = n.log;
    if (!done) SW_FAIL("notify did not commit all %d records (see %s)", nv, err_path);
    SW_ASSERT_I64(rc, 0);

    /* PagerDuty: 2 triggers and 2 resolves of job-A (the summary resolves
     * episode 2), each accepted once. */
    json_t *seen = json_object();
    SW_ASSERT_I64(accepted_once(&s, "/pd", seen), 4);
    SW_ASSERT_NOT_NULL(json_object_get(seen, "stormwatch/job-A/episode/2/resolve"));
    json_decref(seen);
    /* Webhook: job-A's four records and job-bad's trigger. */
    seen = json_object();
    SW_ASSERT_I64(accepted_once(&s, "/wh", seen), 5);
    SW_ASSERT_NOT_NULL(json_object_get(seen, "job-A/2/0/summary"));
    SW_ASSERT_NOT_NULL(json_object_get(seen, "job-bad/1/0/trigger"));
    json_decref(seen);
    /* Retry-After: 1 was waited for (backoff alone is at most 200 ms); every
     * signature is the HMAC of its body. */
    int64_t t429 = -1, t_next = -1, wh_first = -1, wh_last = -1;
    int pd_seen = 0, wh_seen = 0;
    for (int i = 0; i < s.n; i++) {
        req_t *r = &s.reqs[i];
        if (!strcmp(r->path, "/pd")) {
            /* base64("pd-user:pd-pass") */
            SW_ASSERT_STREQ(r->auth, "Basic cGQtdXNlcjpwZC1wYXNz");
            if (pd_seen == 0) t429 = r->at_ms;
            if (pd_seen == 1) t_next = r->at_ms;
            pd_seen++;
        } else {
            SW_ASSERT_STREQ(r->auth, "Bearer wh-token");
            if (wh_first < 0) wh_first = r->at_ms;
            wh_last = r->at_ms;
            wh_seen++;
            char want[72];
            sw_notify_signature(HMAC_SECRET, r->body, strlen(r->body), want);
            SW_ASSERT_STREQ(r->signature, want);
        }
    }
    /* webhook.rate.limit=2: a burst of 2, then one request per 500 ms. */
    SW_ASSERT_I64(wh_seen, 6);
    if (wh_last - wh_first < 1900)
        SW_FAIL("6 webhook requests within %lld ms at 2 per second",
                (long long)(wh_last - wh_first));
    if (t_next - t429 < 950)
        SW_FAIL("retried %lld ms after a 429 with Retry-After: 1", (long long)(t_next - t429));
    /* Dead letters: PagerDuty's 400 with its body, and the undecodable value. */
    SW_ASSERT_I64(ndl, 2);
    bool got400 = false, gotbad = false;
    for (size_t i = 0; i < ndl; i++) {
        const char *st = sw_kmsg_header(&dl[i], "stormwatch.notify.http.status");
        const char *why = sw_kmsg_header(&dl[i], "stormwatch.notify.reason");
        SW_ASSERT_NOT_NULL(why);
        if (st && !strcmp(st, "400")) {
            got400 = true;
            SW_ASSERT_STREQ(sw_kmsg_header(&dl[i], "stormwatch.notify.sink"), "pagerduty");
            SW_ASSERT_NOT_NULL(strstr(sw_kmsg_header(&dl[i], "stormwatch.notify.http.body"),
                                      "Invalid routing key"));
            SW_ASSERT_NOT_NULL(strstr(dl[i].value, "job-bad"));
        } else {
            gotbad = true;
            SW_ASSERT_NOT_NULL(strstr(why, "not JSON"));
            SW_ASSERT_STREQ(dl[i].value, "this is not an alert record");
            SW_ASSERT_STREQ(sw_kmsg_header(&dl[i], "stormwatch.source.offset"), "9");
        }
    }
    SW_ASSERT_TRUE(got400 && gotbad);
    SW_ASSERT_I64(healthy, 200);
    if (ready != 200) SW_FAIL("/readyz answered %d: %s", ready, sw_buf_cstr(&rbody));
    const char *mt = sw_buf_cstr(&mbody);
    SW_ASSERT_TRUE(
        sw_test_metric(
            mt, "stormwatch_notify_deliveries_total{sink=\"pagerduty\",outcome=\"accepted\"}") ==
        4);
    SW_ASSERT_TRUE(
        sw_test_metric(
            mt, "stormwatch_notify_deliveries_total{sink=\"pagerduty\",outcome=\"permanent\"}") ==
        1);
    SW_ASSERT_TRUE(
        sw_test_metric(
            mt, "stormwatch_notify_deliveries_total{sink=\"webhook\",outcome=\"accepted\"}") == 5);
    SW_ASSERT_TRUE(sw_test_metric(mt, "stormwatch_notify_retries_total{sink=\"pagerduty\"}") >= 3);
    SW_ASSERT_TRUE(sw_test_metric(mt, "stormwatch_notify_retries_total{sink=\"webhook\"}") >= 1);
    SW_ASSERT_TRUE(sw_test_metric(mt, "stormwatch_notify_records_total{verdict=\"duplicate\"}") ==
                   4);
    SW_ASSERT_TRUE(sw_test_metric(mt, "stormwatch_notify_dlq_records_total") == 2);
    /* Every PagerDuty attempt timed: 429, 500, the timeout, 4 accepted, the 400. */
    SW_ASSERT_TRUE(
        sw_test_metric(
            mt, "stormwatch_notify_request_duration_seconds_count{sink=\"pagerduty\"}") == 8);
    SW_ASSERT_TRUE(
        sw_test_metric(
            mt,
            "stormwatch_notify_request_duration_seconds_bucket{sink=\"pagerduty\",le=\"+Inf\"}") ==
        8);
    SW_ASSERT_TRUE(
        sw_test_metric(mt, "stormwatch_notify_request_duration_seconds_sum{sink=\"pagerduty\"}") >=
        0.5);
    sw_buf_clear(&mbody);
    sw_buf_clear(&rbody);
    /* The routing key and the credentials never reach the log. */
    SW_ASSERT_I64(sw_proc_count_text(err_path, ROUTING_KEY), 0);
    SW_ASSERT_I64(sw_proc_count_text(err_path, "pd-pass"), 0);
    SW_ASSERT_I64(sw_proc_count_text(err_path, "wh-token"), 0);
    SW_ASSERT_TRUE(sw_proc_count_text(err_path, "retrying") >= 1);
    sw_kmsg_free(dl, ndl);
    free_lines(a, na);
    free_lines(bad, 4);
    srv_stop(&s);
}

/* ---- kill -9 ----------------------------------------------------------------- */

static void test_kill9(void **state)
{
    (void)state;
    env_t e;
    env_start(&e, "kill9");
    srv_t s;
    memset(&s, 0, sizeof(s));
    /* The 4th webhook request kills notify before it is answered. */
    static const ans_t wh_script[] = {ANS_OK, ANS_OK, ANS_OK, ANS_KILL};
    s.wh_script = wh_script;
    s.n_wh_script = 4;
    srv_start(&s);
    char **a, **b;
    int na = job_records(&e, "job-A", &a);
    job_records(&e, "job-B", &b);
    /* A and B interleaved on one partition: A trigger, B trigger, A resolve,
     * B resolve (the kill), ... */
    char *vals[8];
    for (int i = 0; i < 4; i++) {
        vals[2 * i] = a[i];
        vals[2 * i + 1] = b[i];
    }
    produce(e.boot, "alerts", 0, "k", vals, 8);
    char wh_url[128];
    snprintf(wh_url, sizeof(wh_url), "webhook.url=http://127.0.0.1:%d/wh", s.port);
    char *extra[] = {wh_url, "notify.retry.backoff.ms=20", "notify.retry.backoff.max.ms=200", NULL};
    sw_test_daemon_t n1, n2, n3;
    start_notify(&n1, &e, "k9", "notify1", extra);
    pthread_mutex_lock(&s.lock);
    s.kill_pid = n1.pid;
    pthread_mutex_unlock(&s.lock);
    sw_test_daemon_wait_exit(&n1, 60000);
    /* Killed in flight: 3 records committed (one synchronous commit per page). */
    SW_ASSERT_I64(sw_kc_committed(e.boot, "k9", "alerts", 2), 3);
    /* A new group's first assignment is said in words, not as -1001. */
    SW_ASSERT_TRUE(sw_proc_count_text(n1.log,
                                      "no committed offset (none); starting at "
                                      "auto.offset.reset=") >= 1);
    SW_ASSERT_I64(sw_proc_count_text(n1.log, "-1001"), 0);
    start_notify(&n2, &e, "k9", "notify2", extra);
    bool done = wait_committed(e.boot, "k9", "alerts", 2, 8, 60000);
    /* Duplicates after the restart: A's first resolve, B's first trigger. */
    char *dups[] = {a[1], b[0]};
    produce(e.boot, "alerts", 0, "k", dups, 2);
    bool done2 = done && wait_committed(e.boot, "k9", "alerts", 2, 10, 30000);
    /* Two episodes left open (offsets 10 and 11), then a clean restart:
     * the third start re-reads both without sending them and without ever
     * committing backwards, and knows a repeat of one as a duplicate. */
    char **c, **d;
    job_records(&e, "job-C", &c);
    job_records(&e, "job-D", &d);
    char *opens[] = {c[0], d[0]};
    produce(e.boot, "alerts", 0, "k", opens, 2);
    bool done3 = done2 && wait_committed(e.boot, "k9", "alerts", 2, 12, 30000);
    int rc = sw_test_daemon_stop(&n2, 30000);
    start_notify(&n3, &e, "k9", "notify3", extra);
    const char *err3 = n3.log;
    bool rebuilt = sw_test_daemon_wait_log(
        &n3, "committed offset 12, rebuilding open episodes from offset 10", 1, 30000);
    int64_t low = 12, until = sw_proc_now_ms() + 1500;
    while (rebuilt && sw_proc_now_ms() < until) {
        int64_t c0 = sw_kc_committed(e.boot, "k9", "alerts", 2);
        if (c0 < low) low = c0;
        usleep(100000);
    }
    char *again[] = {d[0]};
    produce(e.boot, "alerts", 0, "k", again, 1);
    bool done4 = rebuilt && wait_committed(e.boot, "k9", "alerts", 2, 13, 30000);
    int rc3 = sw_test_daemon_stop(&n3, 30000);
    env_stop(&e);
    const char *err2 = n2.log;
    if (!done2) SW_FAIL("notify did not catch up after the restart (see %s)", err2);
    if (!done3) SW_FAIL("notify did not deliver C and D (see %s)", err2);
    SW_ASSERT_I64(rc, 0);
    /* B's episode 1 was open at offset 1 when the commit said 3. */
    SW_ASSERT_TRUE(sw_proc_count_text(
                       err2, "committed offset 3, rebuilding open episodes from offset 1") == 1);
    if (!rebuilt) SW_FAIL("the third start did not rebuild from offset 10 (see %s)", err3);
    if (low < 12) SW_FAIL("the rebuild committed offset %lld, below 12", (long long)low);
    if (!done4) SW_FAIL("the repeat of D's trigger was not committed (see %s)", err3);
    SW_ASSERT_I64(rc3, 0);
    json_t *seen = json_object();
    SW_ASSERT_I64(accepted_once(&s, "/wh", seen), 10);
    json_decref(seen);
    free_lines(c, 4);
    free_lines(d, 4);
    free_lines(a, na);
    free_lines(b, 4);
    srv_stop(&s);
}

/* ---- configuration errors -------------------------------------------------------- */

/* Run `stormwatch notify ARGS` (no cluster needed: every error comes
 * before connecting); @returns its exit status, stderr in @p err. */
static int notify_cli(const char *args, sw_buf_t *err)
{
    char path[1200], cmd[4000];
    snprintf(path, sizeof(path), "%s/notify-cli.err", sw_test_tmp());
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && '%s' notify %s 2>'%s'", sw_test_tmp(),
             sw_test_bin(), args, path);
    sw_buf_t out;
    sw_buf_init(&out);
    int rc = sw_test_run(cmd, &out);
    sw_buf_clear(&out);
    err->len = 0;
    sw_test_read_file(path, err);
    sw_buf_cstr(err);
    return rc;
}

static void test_conf_errors(void **state)
{
    (void)state;
    static const struct {
        const char *args;
        const char *want;
    } cases[] = {
        {"-b 127.0.0.1:9", "no sink configured"},
        {"-b 127.0.0.1:9 -X alertmanager.url=ftp://am:9093",
         "\"alertmanager.url\": value \"ftp://am:9093\" is not a comma-separated list"},
        {"-b 127.0.0.1:9 -X alertmanager.url=http://am:9093,", "is not a comma-separated list"},
        {"-b 127.0.0.1:9 -X alertmanager.url=http://am:9093 -X alertmanager.resend.ms=900000",
         "\"alertmanager.resend.ms\": value \"900000\" is not below alertmanager.ends.after.ms"},
        {"-b 127.0.0.1:9 -X pagerduty.routing.key=short-secret-key",
         "\"pagerduty.routing.key\": value [redacted] is 16 characters long"},
        {"-b 127.0.0.1:9 -X webhook.url=http://h/x -X notify.retry.backoff.ms=5000 "
         "-X notify.retry.backoff.max.ms=100",
         "\"notify.retry.backoff.max.ms\": value \"100\" is below"},
        {"-X webhook.url=http://h/x", "bootstrap.servers is empty"},
        {"-X webhook.rate.limit=-1", "\"webhook.rate.limit\": value \"-1\" is out of range"},
    };
    sw_buf_t err;
    sw_buf_init(&err);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = notify_cli(cases[i].args, &err);
        if (rc != 2 || !strstr(err.data, cases[i].want))
            SW_FAIL("notify %s: exit %d, stderr \"%s\", want exit 2 and \"%s\"", cases[i].args, rc,
                    err.data, cases[i].want);
        SW_ASSERT_NULL(strstr(err.data, "short-secret-key"));
    }
    /* -X dump: secrets redacted, the notify settings shown. */
    sw_buf_t out;
    sw_buf_init(&out);
    char cmd[2000];
    snprintf(cmd, sizeof(cmd),
             "'%s' notify -b 127.0.0.1:9 -X webhook.url=http://h/x -X webhook.hmac.secret=s3cr3t "
             "-X dump",
             sw_test_bin());
    SW_ASSERT_I64(sw_test_run(cmd, &out), 0);
    const char *d = sw_buf_cstr(&out);
    SW_ASSERT_NOT_NULL(strstr(d, "\nwebhook.url=http://h/x\n"));
    SW_ASSERT_NOT_NULL(strstr(d, "\nwebhook.hmac.secret=[redacted, set]\n"));
    SW_ASSERT_NULL(strstr(d, "s3cr3t"));
    sw_buf_clear(&out);
    sw_buf_clear(&err);
}

/* ---- rebalance ---------------------------------------------------------------- */

static void test_rebalance(void **state)
{
    (void)state;
    env_t e;
    env_start(&e, "rebalance");
    srv_t s;
    memset(&s, 0, sizeof(s));
    srv_start(&s);
    char **a, **b;
    int na = job_records(&e, "job-A", &a);
    job_records(&e, "job-B", &b);
    /* One open episode per partition, delivered by the first instance. */
    produce(e.boot, "alerts", 0, "job-A", &a[0], 1);
    produce(e.boot, "alerts", 1, "job-B", &b[0], 1);
    char wh_url[128];
    snprintf(wh_url, sizeof(wh_url), "webhook.url=http://127.0.0.1:%d/wh", s.port);
    char *extra[] = {wh_url, NULL};
    sw_test_daemon_t n1, n2;
    start_notify(&n1, &e, "rb", "notify1", extra);
    bool first = wait_committed(e.boot, "rb", "alerts", 2, 2, 60000);
    /* A second instance: the group splits the two partitions; the one that
     * changes hands is rebuilt by its new owner from the commit metadata. */
    start_notify(&n2, &e, "rb", "notify2", extra);
    const char *err1 = n1.log, *err2 = n2.log;
    bool split = sw_test_daemon_wait_log(
        &n2, "committed offset 1, rebuilding open episodes from offset 0", 1, 60000);
    /* Repeats of both triggers (skipped by whichever owns them), then the
     * resolves (each sent once). */
    produce(e.boot, "alerts", 0, "job-A", &a[0], 1);
    produce(e.boot, "alerts", 1, "job-B", &b[0], 1);
    produce(e.boot, "alerts", 0, "job-A", &a[1], 1);
    produce(e.boot, "alerts", 1, "job-B", &b[1], 1);
    bool done = split && wait_committed(e.boot, "rb", "alerts", 2, 6, 60000);
    kill(n2.pid, SIGTERM);
    kill(n1.pid, SIGTERM);
    int rc2 = sw_test_daemon_wait_exit(&n2, 30000), rc1 = sw_test_daemon_wait_exit(&n1, 30000);
    env_stop(&e);
    if (!first) SW_FAIL("the first instance did not deliver the triggers (see %s)", err1);
    if (!split) SW_FAIL("the second instance did not take over a partition (see %s)", err2);
    if (!done)
        SW_FAIL("the records after the rebalance were not all committed (see %s, %s)", err1, err2);
    SW_ASSERT_I64(rc1, 0);
    SW_ASSERT_I64(rc2, 0);
    json_t *seen = json_object();
    SW_ASSERT_I64(accepted_once(&s, "/wh", seen), 4);
    SW_ASSERT_NOT_NULL(json_object_get(seen, "job-A/1/1/resolve"));
    SW_ASSERT_NOT_NULL(json_object_get(seen, "job-B/1/1/resolve"));
    json_decref(seen);
    free_lines(a, na);
    free_lines(b, 4);
    srv_stop(&s);
}

/* ---- stop while a sink is down ----------------------------------------------- */

static void test_stop_retrying(void **state)
{
    (void)state;
    env_t e;
    env_start(&e, "stop");
    char **a;
    int na = job_records(&e, "job-A", &a);
    produce(e.boot, "alerts", 0, "job-A", a, 1);
    /* Nothing listens there: connection refused, retried forever. */
    char wh_url[128];
    snprintf(wh_url, sizeof(wh_url), "webhook.url=http://127.0.0.1:%d/wh", free_port());
    char *extra[] = {wh_url,
                     "notify.retry.backoff.ms=100",
                     "notify.retry.backoff.max.ms=400",
                     "shutdown.timeout.ms=5000",
                     "notify.dlq.topic=ndlq-created",
                     NULL};
    sw_test_daemon_t n;
    start_notify(&n, &e, "stop", "notify", extra);
    const char *err_path = n.log;
    bool retrying = sw_test_daemon_wait_log(&n, "retrying", 2, 30000);
    int64_t t0 = sw_proc_now_ms();
    int rc = sw_test_daemon_stop(&n, 20000);
    int64_t took = sw_proc_now_ms() - t0;
    int64_t committed = sw_kc_committed(e.boot, "stop", "alerts", 2);
    env_stop(&e);
    if (!retrying) SW_FAIL("notify did not retry the refused connection (see %s)", err_path);
    /* A missing notify.dlq.topic is created (topics.create=on); the mock
     * cluster of librdkafka 2.0 cannot, which is not fatal. */
    SW_ASSERT_I64(sw_proc_count_text(err_path, "creating topic \"ndlq-created\""), 1);
    SW_ASSERT_I64(rc, 0);
    if (took > 5000) SW_FAIL("the stop took %lld ms (shutdown.timeout.ms=5000)", (long long)took);
    /* Not delivered, so not committed: the next start delivers it. */
    SW_ASSERT_I64(committed, 0);
    free_lines(a, na);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conf_errors),
        cmocka_unit_test_teardown(test_pagerduty_webhook, sw_test_kill_children),
        cmocka_unit_test_teardown(test_kill9, sw_test_kill_children),
        cmocka_unit_test_teardown(test_stop_retrying, sw_test_kill_children),
        cmocka_unit_test_teardown(test_rebalance, sw_test_kill_children),
    };
    /* SW_NOTIFY_ONLY=NAME runs one case (e.g. test_kill9). */
    if (getenv("SW_NOTIFY_ONLY")) cmocka_set_test_filter(getenv("SW_NOTIFY_ONLY"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
