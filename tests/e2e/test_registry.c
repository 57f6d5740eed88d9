/*
 * Schema Registry support end to end: `stormwatch run` on the mock cluster
 * (`stormwatch mock`) with schema.registry.url pointing at
 * tests/registry/sr_stub.py, a stand-in for the Confluent Schema Registry
 * (its REST subset, error codes and content type). Telemetry encoded by an
 * independent Avro implementation (python3-avro, tests/registry/sr_encode.py)
 * with three writer schemas (v1: older, fewer fields, ints; v2: today's;
 * v3: reordered plus an extra field) through one topic gives the alerts the
 * JSON path gives; an unknown id is dead-lettered with a reason naming it;
 * with the registry down for 10 s, messages of a new id are not
 * dead-lettered, the partition waits (/readyz not ready, metrics) and is
 * consumed once the registry is back; the alert schema is registered once
 * under out.sr-value and its id frames every record; `tail` decodes them.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sw_codec_avro.h"
#include "sw_daemon.h"
#include "sw_proc.h"
#include "sw_testlib.h"

static char g_dir[512], g_boot[1024], g_src[1024];
static int g_port;

static void path_in(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", g_dir, name);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static pid_t start_stub(int port)
{
    char pf[600], log[600], st[600], s11[1200], s12[1200], s13[1200], s14[1200], ports[32],
        stub[1200];
    path_in(pf, sizeof(pf), "stub.port");
    path_in(log, sizeof(log), "stub.log");
    path_in(st, sizeof(st), "stub.state");
    unlink(pf);
    snprintf(stub, sizeof(stub), "%s/registry/sr_stub.py", g_src);
    snprintf(s11, sizeof(s11), "11=%s/registry/telemetry_v1.avsc", g_src);
    snprintf(s12, sizeof(s12), "12=%s/../schemas/telemetry_event.avsc", g_src);
    snprintf(s13, sizeof(s13), "13=%s/registry/telemetry_v3.avsc", g_src);
    snprintf(s14, sizeof(s14), "14=%s/registry/telemetry_v4.avsc", g_src);
    snprintf(ports, sizeof(ports), "%d", port);
    char *argv[] = {
        "/usr/bin/python3", stub, "--port",   ports, "--port-file", pf,  "--log",    log,
        "--state",          st,   "--schema", s11,   "--schema",    s12, "--schema", s13,
        "--schema",         s14,  NULL};
    char out[600], err[600];
    path_in(out, sizeof(out), "stub.out");
    path_in(err, sizeof(err), "stub.err");
    pid_t pid = sw_proc_spawn(argv, out, err);
    char *got = sw_proc_wait_file(pf, 20000);
    if (!got) {
        fprintf(stderr, "FAIL: the registry stub did not start (see %s)\n", err);
        sw_proc_kill(pid);
        return -1;
    }
    g_port = atoi(got);
    free(got);
    return pid;
}

/* Messages of an sr_encode.py output file. */
static int read_msgs(const char *path, sw_buf_t *all, size_t *off, size_t *len, int cap)
{
    if (!sw_test_read_file(path, all)) return -1;
    int n = 0;
    for (size_t i = 0; i + 4 <= all->len && n < cap;) {
        const unsigned char *p = (const unsigned char *)all->data + i;
        size_t l = (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
        off[n] = i + 4;
        len[n++] = l;
        i += 4 + l;
    }
    return n;
}

static int encode(const char *fixture, const char *schemas, const char *out)
{
    char cmd[4096];
    snprintf(cmd, sizeof(cmd),
             "cd '%s/registry' && /usr/bin/python3 sr_encode.py %s '%s/%s.jsonl' '%s' >/dev/null",
             g_src, schemas, sw_test_fixtures(), fixture, out);
    return system(cmd);
}

static int produce_file(rd_kafka_t *rk, const char *path, const char *key)
{
    sw_buf_t all;
    sw_buf_init(&all);
    static size_t off[4096], len[4096];
    int n = read_msgs(path, &all, off, len, 4096);
    SW_ASSERT(n > 0, "no messages in %s", path);
    for (int i = 0; i < n; i++)
        SW_ASSERT(sw_kp_send(rk, "in.sr", 0, key, strlen(key), all.data + off[i], len[i]),
                  "produce");
    sw_buf_clear(&all);
    return 0;
}

static int read_lines_of(const char *fixture, char ***lines, size_t **lens)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/%s.jsonl", sw_test_fixtures(), fixture);
    sw_buf_t b;
    sw_buf_init(&b);
    if (!sw_test_read_file(path, &b)) return -1;
    int n = 0;
    *lines = NULL;
    *lens = NULL;
    for (size_t i = 0; i < b.len;) {
        char *nl = memchr(b.data + i, '\n', b.len - i);
        size_t end = nl ? (size_t)(nl - b.data) : b.len;
        if (end > i) {
            *lines = realloc(*lines, (size_t)(n + 1) * sizeof(char *));
            *lens = realloc(*lens, (size_t)(n + 1) * sizeof(size_t));
            (*lines)[n] = strndup(b.data + i, end - i);
            (*lens)[n++] = end - i;
        }
        i = end + 1;
    }
    sw_buf_clear(&b);
    return n;
}

static size_t count_records(json_t *by)
{
    const char *k;
    json_t *v;
    size_t n = 0;
    json_object_foreach(by, k, v) n += json_array_size(v);
    return n;
}

static const char *hdr(const sw_kmsg_t *m)
{
    const char *v = sw_kmsg_header(m, "stormwatch.error");
    return v ? v : "";
}

static int metric_of(int mport, const char *series, double *v)
{
    sw_buf_t body;
    sw_buf_init(&body);
    int st = sw_test_http_get(mport, "/metrics", &body);
    *v = st == 200 ? sw_test_metric(sw_buf_cstr(&body), series) : -1;
    sw_buf_clear(&body);
    return st;
}

int main(void)
{
    const char *tmp = sw_test_tmp();
    snprintf(g_dir, sizeof(g_dir), "%s/registry", tmp);
    snprintf(g_src, sizeof(g_src), "%s/..", sw_test_fixtures());
    char cmd[8192];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", g_dir, g_dir);
    if (system(cmd) != 0) return 1;
    if (system("/usr/bin/python3 -c 'import avro.io' 2>/dev/null") != 0) {
        fprintf(stderr, "FAIL: python3-avro is not installed (scripts/install-deps.sh test)\n");
        return 1;
    }
    int failed = 1;
    pid_t stub = -1;
    sw_test_mock_t mock = {.ctl = -1};
    static sw_test_daemon_t daemon; /* pid 0: not running */
    char **l13 = NULL, **l2 = NULL;
    size_t *n13 = NULL, *n2 = NULL;
    int c13 = 0, c2 = 0;
    json_t *want1 = NULL;
    sw_buf_t tout;
    sw_buf_init(&tout);
    char p1[600], p2[600], stublog[600];
    path_in(p1, sizeof(p1), "phase1.bin");
    path_in(p2, sizeof(p2), "phase2.bin");
    path_in(stublog, sizeof(stublog), "stub.log");
    /* Phase 1: job-25 in v1, v2, v3 by turns; phase 2: job-22 in v4 (a new id). */
    char s3[2400];
    snprintf(s3, sizeof(s3),
             "--schema 11=telemetry_v1.avsc --schema 12=../../schemas/telemetry_event.avsc "
             "--schema 13=telemetry_v3.avsc");
    if (encode("gen25", s3, p1) || encode("gen22", "--schema 14=telemetry_v4.avsc", p2)) {
        fprintf(stderr, "FAIL: sr_encode.py\n");
        return 1;
    }
    static const char *const topics[] = {"in.sr:1", "out.sr:1", "dlq.sr:1", "out.ids:1",
                                         "dlq.ids:1", "in.p:1",
                                         /* repartition=on (default): each group's internal topic,
                                          * so both stages decode through the registry */
                                         "sr.repartition:1", "ids.repartition:1", NULL};
    if (!sw_test_mock_start(&mock, g_dir, 0, false, topics)) goto out;
    snprintf(g_boot, sizeof(g_boot), "%s", mock.boot);
    if ((stub = start_stub(0)) < 0) goto out;
    int port = g_port;

    /* Input: phase 1, then one message with an id the registry does not know. */
    rd_kafka_t *rk = sw_kp_new(g_boot);
    if (produce_file(rk, p1, "job-25")) goto out;
    const char unknown[] = {0, 0, 0, 0, 99, 2, 4, 'x'};
    if (!sw_kp_send(rk, "in.sr", 0, "job-25", 6, unknown, sizeof(unknown))) goto out;
    if (!sw_kp_flush(rk, 30000)) goto out;

    char url[200];
    snprintf(url, sizeof(url), "schema.registry.url=http://127.0.0.1:%d", port);
    sw_test_daemon_init(&daemon, "run", g_dir, "run", g_boot);
    static const char *const props[] = {"input.topics=in.sr",         "output.topic=out.sr",
                                        "dlq.topic=dlq.sr",           "group.id=sr",
                                        "input.format=avro",          "output.format=avro",
                                        "state.restore=off",          "topics.create=off",
                                        "metrics.listen=127.0.0.1:0", "commit.interval.ms=200",
                                        "window.samples=10",          NULL};
    sw_test_daemon_xs(&daemon, props);
    sw_test_daemon_x(&daemon, "%s", url);
    sw_test_daemon_start(&daemon);

    /* Expected: the JSON path (the engine fed the fixture lines). */
    c13 = read_lines_of("gen25", &l13, &n13);
    c2 = read_lines_of("gen22", &l2, &n2);
    if (c13 <= 0 || c2 <= 0) goto out;
    want1 = sw_kt_replay_by_job_w(l13, n13, c13, 10);
    size_t want1_n = count_records(want1);
    printf("phase 1: %d events (v1/v2/v3), %zu alerts expected\n", c13, want1_n);

    sw_kmsg_t *m = NULL, *d = NULL;
    size_t got = sw_kc_read(g_boot, "out.sr", 1, want1_n, 2000, 60000, &m);
    if (got != want1_n) {
        fprintf(stderr, "FAIL phase 1: %zu alerts on out.sr, expected %zu (see %s)\n", got, want1_n,
                daemon.log);
        goto out;
    }
    sw_kmsg_free(m, got);
    size_t nd = sw_kc_read(g_boot, "dlq.sr", 1, 1, 1500, 30000, &d);
    if (nd != 1 || !strstr(hdr(&d[0]), "unknown schema id 99") || !strstr(hdr(&d[0]), "40403")) {
        fprintf(stderr, "FAIL unknown id: %zu dead letters, reason \"%s\"\n", nd,
                nd ? hdr(&d[0]) : "");
        goto out;
    }
    printf("unknown id: dead-lettered: %s: ok\n", sw_kmsg_header(&d[0], "stormwatch.error"));
    sw_kmsg_free(d, nd);

    /* Registry down: phase 2 carries id 14, never seen before. */
    int mport = sw_test_daemon_metrics_port(&daemon, 0);
    sw_proc_kill(stub);
    stub = -1;
    if (produce_file(rk, p2, "job-22") || !sw_kp_flush(rk, 30000)) goto out;
    int64_t t0 = sw_proc_now_ms();
    bool saw_held = false, saw_unready = false;
    while (sw_proc_now_ms() - t0 < 10000) {
        double held = -1;
        if (mport > 0 &&
            metric_of(mport, "stormwatch_schema_registry_held_partitions", &held) == 200 &&
            held == 1)
            saw_held = true;
        sw_buf_t body;
        sw_buf_init(&body);
        if (mport > 0 && sw_test_http_get(mport, "/readyz", &body) == 503 &&
            strstr(sw_buf_cstr(&body), "schema registry"))
            saw_unready = true;
        sw_buf_clear(&body);
        sleep_ms(250);
    }
    double errors = -1, up = -1;
    metric_of(mport, "stormwatch_schema_registry_errors_total", &errors);
    metric_of(mport, "stormwatch_schema_registry_up", &up);
    nd = sw_kc_read(g_boot, "dlq.sr", 1, 2, 1000, 5000, &d);
    sw_kmsg_free(d, nd);
    got = sw_kc_read(g_boot, "out.sr", 1, want1_n + 1, 1000, 5000, &m);
    sw_kmsg_free(m, got);
    if (!saw_held || !saw_unready || errors < 1 || up != 0 || nd != 1 || got != want1_n) {
        fprintf(
            stderr,
            "FAIL registry down: held partition seen %d, /readyz 503 seen %d, errors %g, up %g, "
            "%zu dead letters (want 1), %zu alerts (want %zu)\n",
            saw_held, saw_unready, errors, up, nd, got, want1_n);
        goto out;
    }
    printf(
        "registry down 10 s: partition held, /readyz 503, %g registry errors, no dead letters: ok\n",
        errors);

    if ((stub = start_stub(port)) < 0) goto out;
    json_t *want2 = sw_kt_replay_by_job_w(l2, n2, c2, 10);
    size_t want_n = want1_n + count_records(want2);
    json_object_update(want1, want2);
    json_decref(want2);
    got = sw_kc_read(g_boot, "out.sr", 1, want_n, 2000, 60000, &m);
    if (got != want_n) {
        fprintf(stderr, "FAIL after the outage: %zu alerts, expected %zu (see %s)\n", got, want_n,
                daemon.log);
        goto out;
    }
    /* One registration; its id frames every record. */
    int regs = sw_proc_count_text(stublog, "POST /subjects/out.sr-value/versions");
    int32_t alert_id = -1;
    for (size_t i = 0; i < got; i++) {
        int32_t id = -1;
        char why[256];
        if (sw_avro_schema_id(m[i].value, m[i].len, &id, why, sizeof(why)) != SW_OK) id = -2;
        if (i == 0) alert_id = id;
        if (id != alert_id || id < 0) {
            fprintf(stderr, "FAIL: record %zu has schema id %d, record 0 has %d\n", i, id,
                    alert_id);
            goto out;
        }
        /* The test helper reads the fixed id 2. */
        m[i].value[1] = m[i].value[2] = m[i].value[3] = 0;
        m[i].value[4] = 2;
    }
    char needle[100];
    snprintf(needle, sizeof(needle), "alert schema: id %d under subject out.sr-value",
             (int)alert_id);
    if (regs != 1 || alert_id == 2 || !sw_test_daemon_wait_log(&daemon, needle, 1, 1000)) {
        fprintf(stderr, "FAIL registration: %d POSTs, id %d, log line \"%s\" missing?\n", regs,
                (int)alert_id, needle);
        goto out;
    }
    json_t *by = sw_kt_group_by_job(m, got, "sr.repartition", 0, 1, true);
    sw_kt_drop_summaries(by);
    char why[1024];
    if (!sw_test_json_equal(by, want1, true, why, sizeof(why))) {
        fprintf(stderr, "FAIL: alerts differ from the JSON path: %s\n", why);
        goto out;
    }
    printf(
        "%zu alerts equal the JSON path's; alert schema registered once (id %d) and on every "
        "record: ok\n",
        want_n, (int)alert_id);
    json_decref(by);
    sw_kmsg_free(m, got);

    /* tail with the registry decodes what the daemon wrote. */
    snprintf(cmd, sizeof(cmd), "'%s' tail -t out.sr -b '%s' -e -X '%s'", sw_test_bin(), g_boot,
             url);
    int trc = sw_test_run(cmd, &tout);
    size_t lines = 0;
    for (size_t i = 0; i < tout.len; i++) lines += tout.data[i] == '\n';
    const char *t = sw_buf_cstr(&tout);
    if (trc != 0 || lines != want_n || strstr(t, "undecodable") || !strstr(t, "\"action\"")) {
        fprintf(stderr, "FAIL tail: exit %d, %zu lines (want %zu):\n%.2000s\n", trc, lines, want_n,
                t);
        goto out;
    }
    printf("tail decodes the %zu records through the registry: ok\n", lines);

    /* produce --format avro registers telemetry_event.avsc under in.p-value; tail decodes. */
    snprintf(cmd, sizeof(cmd),
             "'%s' produce -q -t in.p -b '%s' --format avro -X '%s' '%s/gen22.jsonl' && "
             "'%s' tail -t in.p -b '%s' -e -X '%s'",
             sw_test_bin(), g_boot, url, sw_test_fixtures(), sw_test_bin(), g_boot, url);
    trc = sw_test_run(cmd, &tout);
    lines = 0;
    for (size_t i = 0; i < tout.len; i++) lines += tout.data[i] == '\n';
    t = sw_buf_cstr(&tout);
    regs = sw_proc_count_text(stublog, "POST /subjects/in.p-value/versions");
    if (trc != 0 || (int)lines != c2 || strstr(t, "undecodable") || !strstr(t, "\"event_type\"") ||
        regs != 1) {
        fprintf(stderr,
                "FAIL produce/tail: exit %d, %zu lines (want %d), %d registrations:\n%.1000s\n",
                trc, lines, c2, regs, t);
        goto out;
    }
    printf("produce --format avro registered in.p-value once; tail decodes its %zu events: ok\n",
           lines);
    sw_buf_clear(&tout);

    /* Without a registry (air-gapped): avro.schema.ids.telemetry maps ids to files. */
    sw_test_daemon_stop(&daemon, 30000);
    char ids[4000];
    snprintf(ids, sizeof(ids),
             "avro.schema.ids.telemetry=11=%s/registry/telemetry_v1.avsc,13=%s/registry/"
             "telemetry_v3.avsc,14=%s/registry/telemetry_v4.avsc",
             g_src, g_src, g_src);
    sw_test_daemon_init(&daemon, "run", g_dir, "ids", g_boot);
    const char *const iprops[] = {
        "input.topics=in.sr", "output.topic=out.ids", "dlq.topic=dlq.ids",           "group.id=ids",
        "input.format=avro",  "output.format=avro",   "avro.schema.id.telemetry=12", ids,
        "state.restore=off",  "topics.create=off",    "window.samples=10",           NULL};
    sw_test_daemon_xs(&daemon, iprops);
    sw_test_daemon_start(&daemon);
    got = sw_kc_read(g_boot, "out.ids", 1, want_n, 2000, 60000, &m);
    nd = sw_kc_read(g_boot, "dlq.ids", 1, 1, 1500, 30000, &d);
    by = sw_kt_group_by_job(m, got, "ids.repartition", 0, 1, true);
    sw_kt_drop_summaries(by);
    bool same = sw_test_json_equal(by, want1, true, why, sizeof(why));
    const char *reason = nd ? hdr(&d[0]) : "";
    if (got != want_n || !same || nd != 1 ||
        !strstr(reason, "unknown schema id 99 (expected 12, 11, 13 or 14)")) {
        fprintf(stderr,
                "FAIL ids mode: %zu alerts (want %zu), equal %d (%s), %zu dead letters: %s\n", got,
                want_n, same, same ? "" : why, nd, reason);
        goto out;
    }
    printf("avro.schema.ids.telemetry without a registry: the same %zu alerts; %s: ok\n", got,
           reason);
    json_decref(by);
    sw_kmsg_free(m, got);
    sw_kmsg_free(d, nd);

    /* A schema file that cannot be read is a configuration error (exit 2). */
    snprintf(
        cmd, sizeof(cmd),
        "'%s' run -X bootstrap.servers=127.0.0.1:1 -X avro.schema.ids.telemetry=5=/nonexistent.avsc "
        "2>&1; echo \"exit $?\"",
        sw_test_bin());
    sw_test_run(cmd, &tout);
    t = sw_buf_cstr(&tout);
    if (!strstr(t, "exit 2") || !strstr(t, "element \"5=/nonexistent.avsc\": cannot read")) {
        fprintf(stderr, "FAIL bad schema file: %s\n", t);
        goto out;
    }
    printf("a missing schema file: exit 2 naming it: ok\n");
    sw_buf_clear(&tout);
    sw_kp_destroy(rk);
    failed = 0;
out:
    for (int i = 0; i < c13; i++) free(l13[i]);
    for (int i = 0; i < c2; i++) free(l2[i]);
    free(l13);
    free(n13);
    free(l2);
    free(n2);
    json_decref(want1);
    sw_buf_clear(&tout);
    sw_test_daemon_stop(&daemon, 30000);
    if (stub > 0) sw_proc_kill(stub);
    sw_test_mock_stop(&mock);
    printf("test_registry: %s (logs in %s)\n", failed ? "FAILED" : "all passed", g_dir);
    return failed;
}
