/*
 * `stormwatch notify` end to end, each case with its own mock cluster (a
 * `stormwatch mock` process) and its own notify group:
 *  - alertmanager: a real Alertmanager (Debian's prometheus-alertmanager,
 *    own config with a 3 s resolve_timeout, own storage, no clustering):
 *    telemetry -> run -> alert topic -> notify -> Alertmanager (it counts
 *    the firing and resolved alerts it received); an episode longer than
 *    resolve_timeout and endsAt stays active with the expected labels; an
 *    Alertmanager restarted (empty storage) mid-episode gets it back; the
 *    resolve ends it.
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
 *  - am_outage: an Alertmanager answering 500 for 10 s (scaled backoff):
 *    memory flat, nothing committed or dead-lettered meanwhile, every record
 *    accepted once after, a stop during an outage bounded and lossless.
 *  - stop_retrying: SIGTERM while a sink refuses connections stops at once
 *    (exit 0) without committing the undelivered record; a missing
 *    notify.dlq.topic is created.
 *  - kill9: notify is killed (SIGKILL) while a webhook request is in
 *    flight, then restarted: it rebuilds the open episode from the commit
 *    metadata, delivers every record exactly once and skips duplicates
 *    produced afterwards; a clean restart with two open episodes re-reads
 *    them without sending or committing backwards.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "sw_daemon.h"
#include "sw_notify.h"
#include "sw_proc.h"
#include "sw_testlib.h"

#define ROUTING_KEY "0123456789abcdef0123456789abcdef"
#define HMAC_SECRET "webhook-s3cret"
#define AM_BIN "/usr/bin/prometheus-alertmanager"

/* ---- helpers ------------------------------------------------------------- */

/* sw_proc_wait(), and SIGKILL when the process did not exit in time. (The
 * cases' processes are tracked by sw_proc: the teardown,
 * sw_test_kill_children, kills what an assertion left running.) */
static int reap(pid_t pid, int64_t timeout_ms)
{
    int rc = sw_proc_wait(pid, timeout_ms);
    if (rc < 0) sw_proc_kill(pid);
    return rc;
}

typedef struct env_s {
    char dir[1024];
    const char *boot;
    sw_test_mock_t mock;
} env_t;

static void env_start(env_t *e, const char *name)
{
    snprintf(e->dir, sizeof(e->dir), "%s/notify-%s", sw_test_tmp(), name);
    char cmd[2200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", e->dir, e->dir);
    SW_ASSERT_I64(system(cmd), 0);
    static const char *const topics[] = {"tel:2",  "alerts:2",           "dlq:1",
                                         "ndlq:1", "stormwatch.state:1", NULL};
    if (!sw_test_mock_start(&e->mock, e->dir, 1, false, topics))
        SW_FAIL("the mock cluster did not start (see %s)", e->mock.err);
    e->boot = e->mock.boot;
}

static void env_stop(env_t *e)
{
    sw_test_mock_stop(&e->mock); /* only the mock this test started */
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    SW_ASSERT_I64(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    SW_ASSERT_I64(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    close(fd);
    return ntohs(sa.sin_port);
}

/* Lines of a file (caller frees each and the array). */
static int read_lines(const char *path, char ***out)
{
    sw_buf_t b;
    sw_buf_init(&b);
    SW_ASSERT_TRUE(sw_test_read_file(path, &b));
    int n = 0, cap = 0;
    char **v = NULL;
    const char *p = sw_buf_cstr(&b), *end = b.data + b.len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (len) {
            if (n == cap) v = realloc(v, (size_t)(cap = cap ? cap * 2 : 64) * sizeof(*v));
            v[n++] = strndup(p, len);
        }
        p += len + 1;
    }
    sw_buf_clear(&b);
    *out = v;
    return n;
}

static void free_lines(char **v, int n)
{
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* @p line with every "job-14" replaced by @p job (caller frees). */
static char *rename_job(const char *line, const char *job)
{
    sw_buf_t b;
    sw_buf_init(&b);
    const char *p = line, *q;
    while ((q = strstr(p, "job-14")) != NULL) {
        sw_buf_put(&b, p, (size_t)(q - p));
        sw_buf_puts(&b, job);
        p = q + 6;
    }
    sw_buf_puts(&b, p);
    char *s = strdup(sw_buf_cstr(&b));
    sw_buf_clear(&b);
    return s;
}

static void produce(const char *boot, const char *topic, int32_t partition, const char *key,
                    char **values, int n)
{
    rd_kafka_t *rk = sw_kp_new(boot);
    for (int i = 0; i < n; i++)
        SW_ASSERT_TRUE(
            sw_kp_send(rk, topic, partition, key, strlen(key), values[i], strlen(values[i])));
    SW_ASSERT_TRUE(sw_kp_flush(rk, 10000));
    sw_kp_destroy(rk);
}

static bool wait_committed(const char *boot, const char *group, const char *topic, int parts,
                           int64_t want, int64_t timeout_ms)
{
    return sw_kc_wait_committed(boot, group, topic, parts, want, timeout_ms) >= want;
}

/* notify as TAG with the common settings plus @p extra (NULL-terminated -X
 * values), started. */
static void start_notify(sw_test_daemon_t *d, const env_t *e, const char *group, const char *tag,
                         char *const *extra)
{
    sw_test_daemon_init(d, "notify", e->dir, tag, e->boot);
    sw_test_daemon_x(d, "notify.group.id=%s", group);
    static const char *const common[] = {"output.topic=alerts", "notify.dlq.topic=ndlq",
                                         "log.level=debug", "commit.interval.ms=200", NULL};
    sw_test_daemon_xs(d, common);
    sw_test_daemon_xs(d, (const char *const *)extra);
    sw_test_daemon_start(d);
}

/* ---- the scripted HTTP server ----------------------------------------------- */

typedef enum ans_e { ANS_OK, ANS_429, ANS_500, ANS_503, ANS_TIMEOUT, ANS_KILL } ans_t;

typedef struct req_s {
    char path[16];
    char *body;
    char signature[80];
    char auth[128]; /* the Authorization header */
    int status;     /* what the client was answered (0: never saw an answer) */
    int64_t at_ms;  /* arrival */
} req_t;

typedef struct srv_s {
    struct MHD_Daemon *d;
    int port;
    pthread_mutex_t lock;
    req_t reqs[512];
    int n;
    const ans_t *pd_script, *wh_script; /* by request number, then ANS_OK */
    int n_pd_script, n_wh_script;
    int n_pd, n_wh;
    pid_t kill_pid;    /* ANS_KILL: SIGKILL this process */
    volatile int down; /* every request answered 500 (an outage), under lock */
} srv_t;

typedef struct conn_s {
    sw_buf_t body;
} conn_t;

static enum MHD_Result on_req(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)version;
    (void)method;
    srv_t *s = cls;
    conn_t *cc = *con_cls;
    if (!cc) {
        cc = calloc(1, sizeof(*cc));
        sw_buf_init(&cc->body);
        *con_cls = cc;
        return MHD_YES;
    }
    if (*upload_size) {
        sw_buf_put(&cc->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    const char *body = sw_buf_cstr(&cc->body);
    bool pd = strcmp(url, "/pd") == 0;
    pthread_mutex_lock(&s->lock);
    int idx = pd ? s->n_pd++ : s->n_wh++;
    ans_t a = ANS_OK;
    if (pd && idx < s->n_pd_script) a = s->pd_script[idx];
    if (!pd && idx < s->n_wh_script) a = s->wh_script[idx];
    if (s->down) a = ANS_500;
    int status = a == ANS_OK ? (pd ? 202 : 200) : a == ANS_429 ? 429 : a == ANS_503 ? 503 : 500;
    /* PagerDuty answers 400 to a bad routing key: here, to job-bad. */
    if (pd && a == ANS_OK && strstr(body, "job-bad")) status = 400;
    req_t *r = s->n < 512 ? &s->reqs[s->n++] : NULL;
    if (r) {
        snprintf(r->path, sizeof(r->path), "%s", url);
        r->body = strdup(body);
        const char *sig = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Stormwatch-Signature");
        snprintf(r->signature, sizeof(r->signature), "%s", sig ? sig : "");
        const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
        snprintf(r->auth, sizeof(r->auth), "%s", auth ? auth : "");
        r->status = a == ANS_TIMEOUT || a == ANS_KILL ? 0 : status;
        r->at_ms = sw_proc_now_ms();
    }
    pid_t victim = a == ANS_KILL ? s->kill_pid : 0;
    pthread_mutex_unlock(&s->lock);
    if (a == ANS_TIMEOUT) usleep(1500000); /* the client gives up after 500 ms */
    if (victim > 0) kill(victim, SIGKILL);
    const char *text = status == 400 ? "{\"status\":\"invalid event\",\"message\":\"Event object "
                                       "is invalid\",\"errors\":[\"Invalid routing key\"]}"
                                     : "{\"status\":\"success\"}";
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(text), (void *)text,
                                                                MHD_RESPMEM_MUST_COPY);
    if (status == 429) MHD_add_response_header(resp, "Retry-After", "1");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    conn_t *cc = *con_cls;
    if (cc) {
        sw_buf_clear(&cc->body);
        free(cc);
        *con_cls = NULL;
    }
}

static void srv_start(srv_t *s)
{
    pthread_mutex_init(&s->lock, NULL);
    s->port = free_port();
    s->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
                            (uint16_t)s->port, NULL, NULL, on_req, s, MHD_OPTION_NOTIFY_COMPLETED,
                            on_done, s, MHD_OPTION_END);
    SW_ASSERT_NOT_NULL(s->d);
}

static void srv_stop(srv_t *s)
{
    MHD_stop_daemon(s->d);
    for (int i = 0; i < s->n; i++) free(s->reqs[i].body);
    pthread_mutex_destroy(&s->lock);
}

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

/* The records `stormwatch replay` gives for gen14 with window.samples=32
 * and stale.ms=0 (trigger, resolve, trigger, and a summary that closes the
 * open second episode), for job @p job. */
static int job_records(const env_t *e, const char *job, char ***out)
{
    char path[1200], cmd[4000];
    snprintf(path, sizeof(path), "%s/gen14.records.jsonl", e->dir);
    snprintf(cmd, sizeof(cmd),
             "'%s' replay --window-samples 32 --stale-ms 0 '%s/gen14.jsonl' > '%s'", sw_test_bin(),
             sw_test_fixtures(), path);
    SW_ASSERT_I64(system(cmd), 0);
    char **lines;
    int n = read_lines(path, &lines);
    SW_ASSERT_I64(n, 4);
    for (int i = 0; i < n; i++) {
        char *r = rename_job(lines[i], job);
        free(lines[i]);
        lines[i] = r;
    }
    *out = lines;
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

/* ---- Alertmanager answering 500 (issue 28, point 8) ------------------------- */

/* "job/episode/action/revision" of an Alertmanager body (one alert). */
static void am_key(const char *json, char *out, size_t n)
{
    json_error_t je;
    json_t *v = json_loads(json, 0, &je);
    json_t *a = json_array_get(v, 0);
    if (!a) SW_FAIL("Alertmanager body is not an array of alerts: %s", json);
    json_t *l = json_object_get(a, "labels"), *an = json_object_get(a, "annotations");
    snprintf(out, n, "%s/%s/%s/%s", json_string_value(json_object_get(l, "job_id")),
             json_string_value(json_object_get(l, "episode")),
             json_string_value(json_object_get(an, "action")),
             json_string_value(json_object_get(an, "revision")));
    json_decref(v);
}

/* The resident set of process @p pid now (VmRSS), in KiB; 0 when gone. */
static long rss_kib(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    sw_buf_t b;
    sw_buf_init(&b);
    long kib = 0;
    if (sw_test_read_file(path, &b)) {
        const char *p = strstr(sw_buf_cstr(&b), "VmRSS:");
        if (p) kib = strtol(p + 6, NULL, 10);
    }
    sw_buf_clear(&b);
    return kib;
}

/* Accepted Alertmanager requests, each key once; fails on a key accepted
 * twice. @returns how many. */
static int am_accepted_once(srv_t *s, json_t *seen)
{
    int n = 0;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->n; i++) {
        req_t *r = &s->reqs[i];
        if (strcmp(r->path, "/api/v2/alerts") || r->status != 200) continue;
        char key[512];
        am_key(r->body, key, sizeof(key));
        if (json_object_get(seen, key)) {
            pthread_mutex_unlock(&s->lock);
            SW_FAIL("Alertmanager accepted twice: %s", key);
        }
        json_object_set_new(seen, key, json_true());
        n++;
    }
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* An Alertmanager that answers 500 for OUTAGE_MS while 32 records wait
 * (the real 10 minutes, at notify's defaults: bench/notify_outage.sh,
 * docs/hostile.md section 8; here the backoff is scaled down to 20-200 ms,
 * so the outage sees ~50 retries): notify's memory does not grow with the
 * retries, nothing is dead-lettered, every record is accepted exactly once
 * after the recovery, and a stop during an outage is bounded and leaves
 * the undelivered record to the next start. */
#define OUTAGE_MS 10000
static void test_am_outage(void **state)
{
    (void)state;
    env_t e;
    env_start(&e, "amdown");
    srv_t s;
    memset(&s, 0, sizeof(s));
    s.down = 1;
    srv_start(&s);
    char **a;
    int na = job_records(&e, "job-14", &a);
    int want = 0;
    for (int j = 0; j < 8; j++) {
        char job[16];
        snprintf(job, sizeof(job), "job-D%d", j);
        char *v[4];
        for (int i = 0; i < na; i++) v[i] = rename_job(a[i], job);
        produce(e.boot, "alerts", j % 2, job, v, na);
        for (int i = 0; i < na; i++) free(v[i]);
        want += na;
    }
    char am_url[128];
    snprintf(am_url, sizeof(am_url), "alertmanager.url=http://127.0.0.1:%d", s.port);
    char *extra[] = {am_url,
                     "alertmanager.timeout.ms=1000",
                     "alertmanager.resend.ms=3600000",
                     "alertmanager.ends.after.ms=7200000",
                     "notify.retry.backoff.ms=20",
                     "notify.retry.backoff.max.ms=200",
                     "shutdown.timeout.ms=5000",
                     NULL};
    sw_test_daemon_t n;
    start_notify(&n, &e, "amdown", "notify", extra);
    SW_ASSERT_TRUE(sw_test_daemon_wait_log(&n, "retrying", 1, 60000));
    int64_t t0 = sw_proc_now_ms();
    long rss0 = rss_kib(n.pid), peak = rss0;
    while (sw_proc_now_ms() - t0 < OUTAGE_MS) {
        usleep(250000);
        long k = rss_kib(n.pid);
        if (k > peak) peak = k;
    }
    /* Read while Alertmanager still answers 500: once it is back, a retry
     * may be delivered and committed before the group's offsets are read. */
    int64_t committed_down = sw_kc_committed(e.boot, "amdown", "alerts", 2);
    pthread_mutex_lock(&s.lock);
    int during = s.n;
    s.down = 0;
    pthread_mutex_unlock(&s.lock);
    int64_t t1 = sw_proc_now_ms();
    bool all = wait_committed(e.boot, "amdown", "alerts", 2, want, 60000);
    int64_t drain_ms = sw_proc_now_ms() - t1;
    json_t *seen = json_object();
    int accepted = am_accepted_once(&s, seen);
    json_decref(seen);
    print_message(
        "Alertmanager down %d ms: %d requests answered 500, %lld records committed; "
        "notify RSS %ld KiB -> peak %ld KiB; back: %d/%d records accepted once in %lld "
        "ms\n",
        OUTAGE_MS, during, (long long)committed_down, rss0, peak, accepted, want,
        (long long)drain_ms);
    /* Down again: a stop while a record is retried is bounded, and the
     * record is not committed, so the next start delivers it. */
    s.down = 1;
    char *one[1] = {rename_job(a[0], "job-E")};
    produce(e.boot, "alerts", 0, "job-E", one, 1);
    bool retrying = false;
    for (int64_t until = sw_proc_now_ms() + 30000; !retrying && sw_proc_now_ms() < until;) {
        usleep(50000);
        pthread_mutex_lock(&s.lock);
        for (int i = during; i < s.n && !retrying; i++)
            retrying = s.reqs[i].status == 500 && strstr(s.reqs[i].body, "job-E");
        pthread_mutex_unlock(&s.lock);
    }
    int64_t t2 = sw_proc_now_ms();
    int rc = sw_test_daemon_stop(&n, 20000);
    int64_t stop_ms = sw_proc_now_ms() - t2;
    int64_t committed_stop = sw_kc_committed(e.boot, "amdown", "alerts", 2);
    s.down = 0;
    sw_test_daemon_t n2;
    start_notify(&n2, &e, "amdown", "notify2", extra);
    bool last = wait_committed(e.boot, "amdown", "alerts", 2, want + 1, 60000);
    int rc2 = sw_test_daemon_stop(&n2, 20000);
    seen = json_object();
    int accepted2 = am_accepted_once(&s, seen);
    json_decref(seen);
    size_t ndl = 0;
    sw_kmsg_t *dl = NULL;
    ndl = sw_kc_read(e.boot, "ndlq", 1, 1, 500, 3000, &dl);
    sw_kmsg_free(dl, ndl);
    env_stop(&e);
    print_message(
        "down again: stop in %lld ms (exit %d), %lld committed; the next start "
        "delivered the waiting record: %s\n",
        (long long)stop_ms, rc, (long long)committed_stop, last ? "yes" : "no");
    if (during < 20) SW_FAIL("only %d requests during the outage: notify stopped retrying", during);
    if (committed_down != 0)
        SW_FAIL("%lld records committed while Alertmanager answered 500",
                (long long)committed_down);
    if (peak > rss0 + 8192)
        SW_FAIL("notify's RSS grew from %ld KiB to %ld KiB during the outage", rss0, peak);
    if (!all || accepted != want)
        SW_FAIL("after the outage %d of %d records accepted (see %s)", accepted, want, n.log);
    if (!retrying) SW_FAIL("the record after the recovery was not tried (see %s)", n.log);
    SW_ASSERT_I64(rc, 0);
    if (stop_ms > 5000) SW_FAIL("the stop during the outage took %lld ms", (long long)stop_ms);
    SW_ASSERT_I64(committed_stop, want);
    if (!last || accepted2 != want + 1)
        SW_FAIL("the record left by the stop was not delivered by the next start (see %s)", n2.log);
    SW_ASSERT_I64(rc2, 0);
    SW_ASSERT_I64((int64_t)ndl, 0); /* nothing dead-lettered */
    free(one[0]);
    free_lines(a, na);
    srv_stop(&s);
}

/* ---- Alertmanager ------------------------------------------------------------ */

typedef struct am_s {
    pid_t pid;
    int port;
    char conf[1200];
} am_t;

static pid_t am_start(const env_t *e, am_t *am, const char *tag)
{
    char storage[1300], listen[64], out[1300], err[1300], conf_arg[1300], st_arg[1400];
    snprintf(storage, sizeof(storage), "%s/am-%s", e->dir, tag);
    snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", am->port);
    snprintf(conf_arg, sizeof(conf_arg), "--config.file=%s", am->conf);
    snprintf(st_arg, sizeof(st_arg), "--storage.path=%s", storage);
    snprintf(out, sizeof(out), "%s/am-%s.out", e->dir, tag);
    snprintf(err, sizeof(err), "%s/am-%s.err", e->dir, tag);
    char *argv[] = {AM_BIN, conf_arg, st_arg, listen, "--cluster.listen-address=", NULL};
    am->pid = sw_proc_spawn(argv, out, err);
    sw_buf_t body;
    sw_buf_init(&body);
    int64_t deadline = sw_proc_now_ms() + 20000;
    while (sw_proc_now_ms() < deadline && sw_test_http_get(am->port, "/-/ready", &body) != 200)
        usleep(100000);
    sw_buf_clear(&body);
    return am->pid;
}

/* The alert of job @p job that Alertmanager holds as active, or NULL
 * (caller json_decref()s). */
static json_t *am_alert(int port, const char *job)
{
    sw_buf_t body;
    sw_buf_init(&body);
    json_t *found = NULL;
    if (sw_test_http_get(port, "/api/v2/alerts", &body) == 200) {
        json_error_t je;
        json_t *arr = json_loads(sw_buf_cstr(&body), 0, &je);
        size_t i;
        json_t *al;
        json_array_foreach(arr, i, al)
        {
            json_t *labels = json_object_get(al, "labels");
            const char *state = json_string_value(
                json_object_get(json_object_get(al, "status"), "state"));
            if (!strcmp(json_string_value(json_object_get(labels, "job_id")) ?: "", job) && state &&
                !strcmp(state, "active"))
                found = json_incref(al);
        }
        json_decref(arr);
    }
    sw_buf_clear(&body);
    return found;
}

static json_t *am_wait_alert(int port, const char *job, bool want, int64_t timeout_ms)
{
    int64_t deadline = sw_proc_now_ms() + timeout_ms;
    for (;;) {
        json_t *al = am_alert(port, job);
        if ((al != NULL) == want || sw_proc_now_ms() >= deadline) return al;
        json_decref(al);
        usleep(200000);
    }
}

static double am_metric(int port, const char *series)
{
    sw_buf_t body;
    sw_buf_init(&body);
    double v = -1;
    if (sw_test_http_get(port, "/metrics", &body) == 200)
        v = sw_test_metric(sw_buf_cstr(&body), series);
    sw_buf_clear(&body);
    return v;
}

static void test_alertmanager(void **state)
{
    (void)state;
    if (access(AM_BIN, X_OK) != 0) {
        const char *ci = getenv("CI");
        if (ci && !strcmp(ci, "true")) SW_FAIL("%s is not installed", AM_BIN);
        print_message("skipped: %s is not installed (scripts/install-deps.sh test)\n", AM_BIN);
        return;
    }
    env_t e;
    env_start(&e, "am");
    am_t am;
    memset(&am, 0, sizeof(am));
    am.port = free_port();
    snprintf(am.conf, sizeof(am.conf), "%s/alertmanager.yml", e.dir);
    FILE *f = fopen(am.conf, "w");
    SW_ASSERT_NOT_NULL(f);
    fputs(
        "global:\n  resolve_timeout: 3s\nroute:\n  receiver: blackhole\n  group_wait: 1s\n"
        "receivers:\n  - name: blackhole\n",
        f);
    fclose(f);
    am_start(&e, &am, "1");

    /* An HA pair whose first member is down: every record still lands
     * (the second accepts it), and the re-sends go to both. */
    char am_url[160];
    snprintf(am_url, sizeof(am_url), "alertmanager.url=http://127.0.0.1:%d, http://127.0.0.1:%d/",
             free_port(), am.port);
    char *extra[] = {am_url, "alertmanager.resend.ms=1000", "alertmanager.ends.after.ms=4000",
                     "alertmanager.labels=cluster=e2e", NULL};
    sw_test_daemon_t n;
    start_notify(&n, &e, "am", "notify", extra);

    /* Telemetry -> run -> alerts (Confluent Avro, which notify decodes):
     * gen14 gives two episodes (trigger, resolve, trigger, and the summary
     * that ends the second). */
    char fx[1200];
    snprintf(fx, sizeof(fx), "%s/gen14.jsonl", sw_test_fixtures());
    char **tel;
    int ntel = read_lines(fx, &tel);
    produce(e.boot, "tel", 0, "job-14", tel, ntel);
    free_lines(tel, ntel);
    sw_test_daemon_t run;
    sw_test_daemon_init(&run, "run", e.dir, "run", e.boot);
    static const char *const rprops[] = {
        "input.topics=tel",   "output.topic=alerts",        "dlq.topic=dlq",
        "group.id=am-run",    "window.samples=32",          "stale.ms=0",
        "state.restore=off",  "commit.interval.ms=200",     "job.idle.ms=1500",
        "output.format=avro", "metrics.listen=127.0.0.1:0", NULL};
    sw_test_daemon_xs(&run, rprops);
    sw_test_daemon_start(&run);
    const char *err = run.log;
    bool piped = wait_committed(e.boot, "am", "alerts", 2, 4, 60000);
    /* run's /metrics leaves notify's families out. */
    sw_buf_t rm;
    sw_buf_init(&rm);
    int rport = sw_test_daemon_metrics_port(&run, 0);
    int rstatus = rport ? sw_test_http_get(rport, "/metrics", &rm) : 0;
    bool run_clean = rstatus == 200 && strstr(sw_buf_cstr(&rm), "stormwatch_up") &&
                     !strstr(sw_buf_cstr(&rm), "stormwatch_notify_");
    sw_buf_clear(&rm);
    sw_test_daemon_stop(&run, 30000);
    double firing = am_metric(
        am.port, "alertmanager_alerts_received_total{status=\"firing\",version=\"v2\"}");
    double resolved = am_metric(
        am.port, "alertmanager_alerts_received_total{status=\"resolved\",version=\"v2\"}");
    json_t *gone = am_alert(am.port, "job-14");

    /* A long episode: its trigger alone, straight onto the alert topic. */
    char **lg;
    job_records(&e, "long-1", &lg);
    produce(e.boot, "alerts", 1, "long-1", &lg[0], 1);
    json_t *al = am_wait_alert(am.port, "long-1", true, 20000);
    int64_t t0 = sw_proc_now_ms();
    bool labels_ok = false;
    if (al) {
        json_t *l = json_object_get(al, "labels");
        labels_ok = !strcmp(json_string_value(json_object_get(l, "alertname")), "GPUMemoryStorm") &&
                    !strcmp(json_string_value(json_object_get(l, "episode")), "1") &&
                    !strcmp(json_string_value(json_object_get(l, "severity")), "critical") &&
                    !strcmp(json_string_value(json_object_get(l, "cluster")), "e2e") &&
                    !strcmp(json_string_value(json_object_get(l, "dedup_key")),
                            "stormwatch/long-1/episode/1");
    }
    json_decref(al);
    /* Longer than resolve_timeout (3 s) and endsAt (4 s): still active. */
    while (sw_proc_now_ms() - t0 < 8000) usleep(200000);
    json_t *still = am_alert(am.port, "long-1");
    /* Alertmanager restarted with empty storage: the re-sends bring it back. */
    kill(am.pid, SIGTERM);
    reap(am.pid, 20000);
    am_start(&e, &am, "2");
    json_t *empty_at_start = am_alert(am.port, "long-1");
    json_t *back = am_wait_alert(am.port, "long-1", true, 10000);
    /* The resolve ends it. */
    produce(e.boot, "alerts", 1, "long-1", &lg[1], 1);
    json_t *after = am_wait_alert(am.port, "long-1", false, 10000);
    int rc = sw_test_daemon_stop(&n, 30000);
    kill(am.pid, SIGTERM);
    reap(am.pid, 20000);
    env_stop(&e);
    const char *nerr = n.log;
    if (!piped) SW_FAIL("notify did not commit run's 4 records (see %s and %s)", err, nerr);
    if (firing < 2 || resolved < 2)
        SW_FAIL("Alertmanager received %g firing and %g resolved alerts, expected >= 2 each",
                firing, resolved);
    if (!run_clean)
        SW_FAIL("run's /metrics (port %d, HTTP %d) is missing or has notify's families", rport,
                rstatus);
    if (gone) SW_FAIL("job-14's episodes all ended, yet Alertmanager holds one active");
    if (!labels_ok) SW_FAIL("long-1's alert missing or with unexpected labels (see %s)", nerr);
    if (!still) SW_FAIL("long-1 was auto-resolved by Alertmanager after 8 s (see %s)", nerr);
    if (empty_at_start)
        print_message("note: the restarted Alertmanager had long-1 before the first re-send\n");
    if (!back) SW_FAIL("the restarted Alertmanager did not get long-1 back (see %s)", nerr);
    if (after) SW_FAIL("long-1 still active after its resolve (see %s)", nerr);
    SW_ASSERT_I64(rc, 0);
    json_decref(still);
    json_decref(back);
    json_decref(empty_at_start);
    free_lines(lg, 4);
}

/* Active alerts of job @p job named @p alertname that Alertmanager lists. */
static int am_count(int port, const char *job, const char *alertname)
{
    sw_buf_t body;
    sw_buf_init(&body);
    int n = -1;
    if (sw_test_http_get(port, "/api/v2/alerts", &body) == 200) {
        json_error_t je;
        json_t *arr = json_loads(sw_buf_cstr(&body), 0, &je);
        size_t i;
        json_t *al;
        n = 0;
        json_array_foreach(arr, i, al)
        {
            json_t *labels = json_object_get(al, "labels");
            const char *state = json_string_value(
                json_object_get(json_object_get(al, "status"), "state"));
            const char *name = json_string_value(json_object_get(labels, "alertname"));
            if (!strcmp(json_string_value(json_object_get(labels, "job_id")) ?: "", job) && state &&
                !strcmp(state, "active") && name && !strcmp(name, alertname))
                n++;
        }
        json_decref(arr);
    }
    sw_buf_clear(&body);
    return n;
}

/* Wait until Alertmanager lists @p crash crash and @p warn warning alerts
 * of @p job as active; true when it did within @p timeout_ms. */
static bool am_wait_counts(int port, const char *job, int crash, int warn, int64_t timeout_ms,
                           int *got_crash, int *got_warn)
{
    int64_t deadline = sw_proc_now_ms() + timeout_ms;
    for (;;) {
        *got_crash = am_count(port, job, "GPURankCrash");
        *got_warn = am_count(port, job, "GPUMemoryNearlyFull");
        if ((*got_crash == crash && *got_warn == warn) || sw_proc_now_ms() >= deadline)
            return *got_crash == crash && *got_warn == warn;
        usleep(200000);
    }
}

/* SPEC 8.6 "a crash ends" through notify into a real Alertmanager: a
 * cascade's records (a warning, the crash that closes it, the warning's
 * close, the summary and the crash's close) put the warning and then the
 * crash alert up, the warning's close takes the warning down at once (not
 * at its endsAt), and once the job is over nothing of it is active. The
 * firing alerts' endsAt lies 10 min ahead: only a resolve can end them. */
static void test_alertmanager_crash(void **state)
{
    (void)state;
    if (access(AM_BIN, X_OK) != 0) {
        const char *ci = getenv("CI");
        if (ci && !strcmp(ci, "true")) SW_FAIL("%s is not installed", AM_BIN);
        print_message("skipped: %s is not installed (scripts/install-deps.sh test)\n", AM_BIN);
        return;
    }
    env_t e;
    env_start(&e, "amcrash");
    am_t am;
    memset(&am, 0, sizeof(am));
    am.port = free_port();
    snprintf(am.conf, sizeof(am.conf), "%s/alertmanager.yml", e.dir);
    FILE *f = fopen(am.conf, "w");
    SW_ASSERT_NOT_NULL(f);
    fputs(
        "global:\n  resolve_timeout: 5m\nroute:\n  receiver: blackhole\n  group_wait: 1s\n"
        "receivers:\n  - name: blackhole\n",
        f);
    fclose(f);
    am_start(&e, &am, "c");
    char am_url[96];
    snprintf(am_url, sizeof(am_url), "alertmanager.url=http://127.0.0.1:%d", am.port);
    char *extra[] = {am_url, "alertmanager.resend.ms=1000", "alertmanager.ends.after.ms=600000",
                     NULL};
    sw_test_daemon_t n;
    start_notify(&n, &e, "amc", "notify", extra);

    /* The cascade's records, as replay writes them. */
    char tel[1200], recs[1200], cmd[4000];
    snprintf(tel, sizeof(tel), "%s/cascade.jsonl", e.dir);
    snprintf(recs, sizeof(recs), "%s/cascade.records.jsonl", e.dir);
    snprintf(cmd, sizeof(cmd),
             "'%s' gen --crash cascade --ranks 16 --seed 3 --watchdog-s 60 > '%s' 2>/dev/null && "
             "'%s' replay '%s' > '%s' 2>/dev/null",
             sw_test_bin(), tel, sw_test_bin(), tel, recs);
    SW_ASSERT_I64(system(cmd), 0);
    char **lines;
    int nl = read_lines(recs, &lines);
    /* Split: up to the crash's first record, the warning's close, the rest. */
    int crash_at = -1, wclose_at = -1, crash_close_at = -1, ncrash = 0, nwarn = 0;
    for (int i = 0; i < nl; i++) {
        bool crash = strstr(lines[i], "\"action\": \"crash\"") != NULL;
        bool warn = strstr(lines[i], "\"action\": \"warning\"") != NULL;
        bool closing = strstr(lines[i], "\"open\": false") != NULL;
        ncrash += crash;
        nwarn += warn;
        if (crash && !closing && crash_at < 0) crash_at = i;
        if (warn && closing && wclose_at < 0) wclose_at = i;
        if (crash && closing) crash_close_at = i;
    }
    print_message(
        "cascade: %d records, %d crash, %d warning; crash at %d, warning closed at %d, "
        "crash closed at %d\n",
        nl, ncrash, nwarn, crash_at, wclose_at, crash_close_at);
    SW_ASSERT(crash_at >= 1 && wclose_at == crash_at + 1 && crash_close_at == nl - 1,
              "unexpected cascade records (see %s)", recs);

    int c1, w1, c2, w2, c3, w3;
    produce(e.boot, "alerts", 0, "crash-0", lines, crash_at + 1);
    bool up = am_wait_counts(am.port, "crash-0", 1, 1, 20000, &c1, &w1);
    produce(e.boot, "alerts", 0, "crash-0", &lines[wclose_at], 1);
    bool warn_gone = am_wait_counts(am.port, "crash-0", 1, 0, 15000, &c2, &w2);
    produce(e.boot, "alerts", 0, "crash-0", &lines[wclose_at + 1], nl - wclose_at - 1);
    bool all_gone = am_wait_counts(am.port, "crash-0", 0, 0, 15000, &c3, &w3);
    double resolved = am_metric(
        am.port, "alertmanager_alerts_received_total{status=\"resolved\",version=\"v2\"}");
    int rc = sw_test_daemon_stop(&n, 30000);
    kill(am.pid, SIGTERM);
    reap(am.pid, 20000);
    env_stop(&e);
    print_message(
        "Alertmanager active (crash, warning): %d/%d with the crash open, %d/%d after "
        "the warning's close, %d/%d once the job is over; %g resolved received\n",
        c1, w1, c2, w2, c3, w3, resolved);
    if (!up)
        SW_FAIL("expected 1 crash and 1 warning alert active, got %d and %d (see %s)", c1, w1,
                n.log);
    if (!warn_gone)
        SW_FAIL("after the warning's close: %d crash, %d warning alerts active (see %s)", c2, w2,
                n.log);
    if (!all_gone)
        SW_FAIL(
            "after the job's summary and the crash's close: %d crash, %d warning alerts "
            "still active (see %s)",
            c3, w3, n.log);
    if (resolved < 2) SW_FAIL("Alertmanager received %g resolved alerts, expected >= 2", resolved);
    SW_ASSERT_I64(rc, 0);
    free_lines(lines, nl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conf_errors),
        cmocka_unit_test_teardown(test_pagerduty_webhook, sw_test_kill_children),
        cmocka_unit_test_teardown(test_kill9, sw_test_kill_children),
        cmocka_unit_test_teardown(test_stop_retrying, sw_test_kill_children),
        cmocka_unit_test_teardown(test_am_outage, sw_test_kill_children),
        cmocka_unit_test_teardown(test_rebalance, sw_test_kill_children),
        cmocka_unit_test_teardown(test_alertmanager, sw_test_kill_children),
        cmocka_unit_test_teardown(test_alertmanager_crash, sw_test_kill_children),
    };
    /* SW_NOTIFY_ONLY=NAME runs one case (e.g. test_kill9). */
    if (getenv("SW_NOTIFY_ONLY")) cmocka_set_test_filter(getenv("SW_NOTIFY_ONLY"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
