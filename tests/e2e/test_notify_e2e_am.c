/*
 * `stormwatch notify` end to end with Alertmanager, each case with its own
 * mock cluster (a `stormwatch mock` process) and its own notify group:
 *  - alertmanager: a real Alertmanager (Debian's prometheus-alertmanager,
 *    own config with a 3 s resolve_timeout, own storage, no clustering):
 *    telemetry -> run -> alert topic -> notify -> Alertmanager (it counts
 *    the firing and resolved alerts it received); an episode longer than
 *    resolve_timeout and endsAt stays active with the expected labels; an
 *    Alertmanager restarted (empty storage) mid-episode gets it back; the
 *    resolve ends it.
 *  - alertmanager_crash: SPEC 8.6's crash and warning records through
 *    notify: their alerts go up and are taken down by their closes.
 *  - am_outage: an Alertmanager answering 500 for 10 s (scaled backoff):
 *    memory flat, nothing committed or dead-lettered meanwhile, every record
 *    accepted once after, a stop during an outage bounded and lossless.
 */
#include "notify_env.h"

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

/* A real Alertmanager (resolve_timeout @p resolve; every alert to a
 * blackhole receiver, grouped for 1 s), instance @p tag, in test @p name's
 * environment @p e, started. @returns false (the test is skipped; under
 * CI=true it fails) when Alertmanager is not installed. */
static bool am_env(env_t *e, const char *name, am_t *am, const char *resolve, const char *tag)
{
    if (access(AM_BIN, X_OK) != 0) {
        const char *ci = getenv("CI");
        if (ci && !strcmp(ci, "true")) SW_FAIL("%s is not installed", AM_BIN);
        print_message("skipped: %s is not installed (scripts/install-deps.sh test)\n", AM_BIN);
        return false;
    }
    env_start(e, name);
    memset(am, 0, sizeof(*am));
    am->port = free_port();
    snprintf(am->conf, sizeof(am->conf), "%s/alertmanager.yml", e->dir);
    FILE *f = fopen(am->conf, "w");
    SW_ASSERT_NOT_NULL(f);
    fprintf(f,
            "global:\n  resolve_timeout: %s\nroute:\n  receiver: blackhole\n  group_wait: 1s\n"
            "receivers:\n  - name: blackhole\n",
            resolve);
    fclose(f);
    am_start(e, am, tag);
    return true;
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
    env_t e;
    am_t am;
    if (!am_env(&e, "am", &am, "3s", "1")) return;

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
    env_t e;
    am_t am;
    if (!am_env(&e, "amcrash", &am, "5m", "c")) return;
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
        cmocka_unit_test_teardown(test_am_outage, sw_test_kill_children),
        cmocka_unit_test_teardown(test_alertmanager, sw_test_kill_children),
        cmocka_unit_test_teardown(test_alertmanager_crash, sw_test_kill_children),
    };
    /* SW_NOTIFY_ONLY=NAME runs one case (e.g. test_kill9). */
    if (getenv("SW_NOTIFY_ONLY")) cmocka_set_test_filter(getenv("SW_NOTIFY_ONLY"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
