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
        fprintf(stderr, "the registry stub did not start (see %s)\n", err);
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
    char cmd[8192];
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

/* What the cases share: the mock cluster, the registry stub, the daemon
 * (started by the group setup with phase 1 and an unknown id on in.sr), the
 * JSON path's alerts. The cases tell one story in order: a case that
 * needs an earlier one which did not pass is skipped (the group has
 * failed already). */
static pid_t g_stub = -1;
static sw_test_mock_t g_mock = {.ctl = -1};
static sw_test_daemon_t g_daemon; /* pid 0: not running */
static rd_kafka_t *g_rk;
static char **g_l13, **g_l2;
static size_t *g_n13, *g_n2;
static int g_c13, g_c2;
static json_t *g_want1, *g_want_all; /* phase 1's alerts; both phases' */
static size_t g_want1_n, g_want_n;
static char g_url[200], g_stublog[600], g_p2[600];
static unsigned g_passed; /* bit K: case K passed */

static void needs(unsigned cases)
{
    if ((g_passed & cases) != cases) {
        printf("skipped: an earlier case it builds on did not pass\n");
        skip();
    }
}

static void passed(int k)
{
    g_passed |= 1u << k;
}

static void test_phase1_alerts(void **state)
{
    (void)state;
    printf("phase 1: %d events (v1/v2/v3), %zu alerts expected\n", g_c13, g_want1_n);
    sw_kmsg_t *m = NULL;
    size_t got = sw_kc_read(g_boot, "out.sr", 1, g_want1_n, 2000, 60000, &m);
    SW_ASSERT(got == g_want1_n, "phase 1: %zu alerts on out.sr, expected %zu (see %s)", got,
              g_want1_n, g_daemon.log);
    sw_kmsg_free(m, got);
    passed(1);
}

static void test_unknown_id_dead_lettered(void **state)
{
    (void)state;
    sw_kmsg_t *d = NULL;
    size_t nd = sw_kc_read(g_boot, "dlq.sr", 1, 1, 1500, 30000, &d);
    SW_ASSERT(nd == 1 && strstr(hdr(&d[0]), "unknown schema id 99") && strstr(hdr(&d[0]), "40403"),
              "unknown id: %zu dead letters, reason \"%s\"", nd, nd ? hdr(&d[0]) : "");
    printf("unknown id: dead-lettered: %s: ok\n", sw_kmsg_header(&d[0], "stormwatch.error"));
    sw_kmsg_free(d, nd);
    passed(2);
}

/* Registry down: phase 2 carries id 14, never seen before. */
static void test_registry_down_holds(void **state)
{
    (void)state;
    needs(1u << 1 | 1u << 2);
    int mport = sw_test_daemon_metrics_port(&g_daemon, 0);
    sw_proc_kill(g_stub);
    g_stub = -1;
    SW_ASSERT(produce_file(g_rk, g_p2, "job-22") == 0 && sw_kp_flush(g_rk, 30000),
              "produce phase 2");
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
    sw_kmsg_t *m = NULL, *d = NULL;
    size_t nd = sw_kc_read(g_boot, "dlq.sr", 1, 2, 1000, 5000, &d);
    sw_kmsg_free(d, nd);
    size_t got = sw_kc_read(g_boot, "out.sr", 1, g_want1_n + 1, 1000, 5000, &m);
    sw_kmsg_free(m, got);
    SW_ASSERT(saw_held && saw_unready && errors >= 1 && up == 0 && nd == 1 && got == g_want1_n,
              "registry down: held partition seen %d, /readyz 503 seen %d, errors %g, up %g, "
              "%zu dead letters (want 1), %zu alerts (want %zu)",
              saw_held, saw_unready, errors, up, nd, got, g_want1_n);
    printf(
        "registry down 10 s: partition held, /readyz 503, %g registry errors, no dead letters: ok\n",
        errors);
    passed(3);
}

/* The registry back: phase 2 consumed; one registration, its id frames
 * every record; the alerts equal the JSON path's. */
static void test_registry_back(void **state)
{
    (void)state;
    needs(1u << 3);
    SW_ASSERT((g_stub = start_stub(g_port)) > 0, "the registry stub did not start again");
    sw_kmsg_t *m = NULL;
    size_t got = sw_kc_read(g_boot, "out.sr", 1, g_want_n, 2000, 60000, &m);
    SW_ASSERT(got == g_want_n, "after the outage: %zu alerts, expected %zu (see %s)", got, g_want_n,
              g_daemon.log);
    int regs = sw_proc_count_text(g_stublog, "POST /subjects/out.sr-value/versions");
    int32_t alert_id = -1;
    for (size_t i = 0; i < got; i++) {
        int32_t id = -1;
        char why[256];
        if (sw_avro_schema_id(m[i].value, m[i].len, &id, why, sizeof(why)) != SW_OK) id = -2;
        if (i == 0) alert_id = id;
        SW_ASSERT(id == alert_id && id >= 0, "record %zu has schema id %d, record 0 has %d", i, id,
                  alert_id);
        /* The test helper reads the fixed id 2. */
        m[i].value[1] = m[i].value[2] = m[i].value[3] = 0;
        m[i].value[4] = 2;
    }
    char needle[100];
    snprintf(needle, sizeof(needle), "alert schema: id %d under subject out.sr-value",
             (int)alert_id);
    SW_ASSERT(regs == 1 && alert_id != 2 && sw_test_daemon_wait_log(&g_daemon, needle, 1, 1000),
              "registration: %d POSTs, id %d, log line \"%s\" missing?", regs, (int)alert_id,
              needle);
    json_t *by = sw_kt_group_by_job(m, got, "sr.repartition", 0, 1, true);
    sw_kt_drop_summaries(by);
    char why[1024];
    SW_ASSERT(sw_test_json_equal(by, g_want_all, true, why, sizeof(why)),
              "alerts differ from the JSON path: %s", why);
    printf(
        "%zu alerts equal the JSON path's; alert schema registered once (id %d) and on every "
        "record: ok\n",
        g_want_n, (int)alert_id);
    json_decref(by);
    sw_kmsg_free(m, got);
    passed(4);
}

/* tail with the registry decodes what the daemon wrote. */
static void test_tail_decodes(void **state)
{
    (void)state;
    needs(1u << 4);
    char cmd[8192];
    sw_buf_t tout;
    sw_buf_init(&tout);
    snprintf(cmd, sizeof(cmd), "'%s' tail -t out.sr -b '%s' -e -X '%s'", sw_test_bin(), g_boot,
             g_url);
    int trc = sw_test_run(cmd, &tout);
    size_t lines = 0;
    for (size_t i = 0; i < tout.len; i++) lines += tout.data[i] == '\n';
    const char *t = sw_buf_cstr(&tout);
    SW_ASSERT(trc == 0 && lines == g_want_n && !strstr(t, "undecodable") && strstr(t, "\"action\""),
              "tail: exit %d, %zu lines (want %zu):\n%.2000s", trc, lines, g_want_n, t);
    printf("tail decodes the %zu records through the registry: ok\n", lines);
    sw_buf_clear(&tout);
    passed(5);
}

/* produce --format avro registers telemetry_event.avsc under in.p-value; tail decodes. */
static void test_produce_avro(void **state)
{
    (void)state;
    needs(1u << 4);
    char cmd[8192];
    sw_buf_t tout;
    sw_buf_init(&tout);
    snprintf(cmd, sizeof(cmd),
             "'%s' produce -q -t in.p -b '%s' --format avro -X '%s' '%s/gen22.jsonl' && "
             "'%s' tail -t in.p -b '%s' -e -X '%s'",
             sw_test_bin(), g_boot, g_url, sw_test_fixtures(), sw_test_bin(), g_boot, g_url);
    int trc = sw_test_run(cmd, &tout);
    size_t lines = 0;
    for (size_t i = 0; i < tout.len; i++) lines += tout.data[i] == '\n';
    const char *t = sw_buf_cstr(&tout);
    int regs = sw_proc_count_text(g_stublog, "POST /subjects/in.p-value/versions");
    SW_ASSERT(trc == 0 && (int)lines == g_c2 && !strstr(t, "undecodable") &&
                  strstr(t, "\"event_type\"") && regs == 1,
              "produce/tail: exit %d, %zu lines (want %d), %d registrations:\n%.1000s", trc, lines,
              g_c2, regs, t);
    printf("produce --format avro registered in.p-value once; tail decodes its %zu events: ok\n",
           lines);
    sw_buf_clear(&tout);
    passed(6);
}

/* Without a registry (air-gapped): avro.schema.ids.telemetry maps ids to files. */
static void test_ids_without_registry(void **state)
{
    (void)state;
    needs(1u << 4);
    sw_test_daemon_stop(&g_daemon, 30000);
    char ids[4000];
    snprintf(ids, sizeof(ids),
             "avro.schema.ids.telemetry=11=%s/registry/telemetry_v1.avsc,13=%s/registry/"
             "telemetry_v3.avsc,14=%s/registry/telemetry_v4.avsc",
             g_src, g_src, g_src);
    sw_test_daemon_init(&g_daemon, "run", g_dir, "ids", g_boot);
    const char *const iprops[] = {
        "input.topics=in.sr", "output.topic=out.ids", "dlq.topic=dlq.ids",           "group.id=ids",
        "input.format=avro",  "output.format=avro",   "avro.schema.id.telemetry=12", ids,
        "state.restore=off",  "topics.create=off",    "window.samples=10",           NULL};
    sw_test_daemon_xs(&g_daemon, iprops);
    sw_test_daemon_start(&g_daemon);
    sw_kmsg_t *m = NULL, *d = NULL;
    size_t got = sw_kc_read(g_boot, "out.ids", 1, g_want_n, 2000, 60000, &m);
    size_t nd = sw_kc_read(g_boot, "dlq.ids", 1, 1, 1500, 30000, &d);
    json_t *by = sw_kt_group_by_job(m, got, "ids.repartition", 0, 1, true);
    sw_kt_drop_summaries(by);
    char why[1024];
    bool same = sw_test_json_equal(by, g_want_all, true, why, sizeof(why));
    const char *reason = nd ? hdr(&d[0]) : "";
    SW_ASSERT(got == g_want_n && same && nd == 1 &&
                  strstr(reason, "unknown schema id 99 (expected 12, 11, 13 or 14)"),
              "ids mode: %zu alerts (want %zu), equal %d (%s), %zu dead letters: %s", got, g_want_n,
              same, same ? "" : why, nd, reason);
    printf("avro.schema.ids.telemetry without a registry: the same %zu alerts; %s: ok\n", got,
           reason);
    json_decref(by);
    sw_kmsg_free(m, got);
    sw_kmsg_free(d, nd);
    passed(7);
}

/* A schema file that cannot be read is a configuration error (exit 2). */
static void test_bad_schema_file(void **state)
{
    (void)state;
    char cmd[8192];
    sw_buf_t tout;
    sw_buf_init(&tout);
    snprintf(
        cmd, sizeof(cmd),
        "'%s' run -X bootstrap.servers=127.0.0.1:1 -X avro.schema.ids.telemetry=5=/nonexistent.avsc "
        "2>&1; echo \"exit $?\"",
        sw_test_bin());
    sw_test_run(cmd, &tout);
    const char *t = sw_buf_cstr(&tout);
    SW_ASSERT(strstr(t, "exit 2") && strstr(t, "element \"5=/nonexistent.avsc\": cannot read"),
              "bad schema file: %s", t);
    printf("a missing schema file: exit 2 naming it: ok\n");
    sw_buf_clear(&tout);
    passed(8);
}

/* The mock cluster and the stub; phase 1 and an unknown id on in.sr; the
 * daemon; the alerts the JSON path gives for both phases. */
static int registry_setup(void **state)
{
    (void)state;
    const char *tmp = sw_test_tmp();
    snprintf(g_dir, sizeof(g_dir), "%s/registry", tmp);
    snprintf(g_src, sizeof(g_src), "%s/..", sw_test_fixtures());
    char cmd[8192];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", g_dir, g_dir);
    SW_ASSERT(system(cmd) == 0, "cannot create %s", g_dir);
    SW_ASSERT(system("/usr/bin/python3 -c 'import avro.io' 2>/dev/null") == 0,
              "python3-avro is not installed (scripts/install-deps.sh test)");
    char p1[600];
    path_in(p1, sizeof(p1), "phase1.bin");
    path_in(g_p2, sizeof(g_p2), "phase2.bin");
    path_in(g_stublog, sizeof(g_stublog), "stub.log");
    /* Phase 1: job-25 in v1, v2, v3 by turns; phase 2: job-22 in v4 (a new id). */
    char s3[2400];
    snprintf(s3, sizeof(s3),
             "--schema 11=telemetry_v1.avsc --schema 12=../../schemas/telemetry_event.avsc "
             "--schema 13=telemetry_v3.avsc");
    SW_ASSERT(!encode("gen25", s3, p1) && !encode("gen22", "--schema 14=telemetry_v4.avsc", g_p2),
              "sr_encode.py");
    static const char *const topics[] = {"in.sr:1", "out.sr:1", "dlq.sr:1", "out.ids:1",
                                         "dlq.ids:1", "in.p:1",
                                         /* repartition=on (default): each group's internal topic,
                                          * so both stages decode through the registry */
                                         "sr.repartition:1", "ids.repartition:1", NULL};
    SW_ASSERT(sw_test_mock_start(&g_mock, g_dir, 0, false, topics),
              "the mock cluster did not start");
    snprintf(g_boot, sizeof(g_boot), "%s", g_mock.boot);
    SW_ASSERT((g_stub = start_stub(0)) > 0, "the registry stub did not start");

    /* Input: phase 1, then one message with an id the registry does not know. */
    g_rk = sw_kp_new(g_boot);
    produce_file(g_rk, p1, "job-25");
    const char unknown[] = {0, 0, 0, 0, 99, 2, 4, 'x'};
    SW_ASSERT(sw_kp_send(g_rk, "in.sr", 0, "job-25", 6, unknown, sizeof(unknown)), "produce");
    SW_ASSERT(sw_kp_flush(g_rk, 30000), "flush");

    snprintf(g_url, sizeof(g_url), "schema.registry.url=http://127.0.0.1:%d", g_port);
    sw_test_daemon_init(&g_daemon, "run", g_dir, "run", g_boot);
    static const char *const props[] = {"input.topics=in.sr",         "output.topic=out.sr",
                                        "dlq.topic=dlq.sr",           "group.id=sr",
                                        "input.format=avro",          "output.format=avro",
                                        "state.restore=off",          "topics.create=off",
                                        "metrics.listen=127.0.0.1:0", "commit.interval.ms=200",
                                        "window.samples=10",          NULL};
    sw_test_daemon_xs(&g_daemon, props);
    sw_test_daemon_x(&g_daemon, "%s", g_url);
    sw_test_daemon_start(&g_daemon);

    /* Expected: the JSON path (the engine fed the fixture lines). */
    g_c13 = read_lines_of("gen25", &g_l13, &g_n13);
    g_c2 = read_lines_of("gen22", &g_l2, &g_n2);
    SW_ASSERT(g_c13 > 0 && g_c2 > 0, "cannot read the gen25 and gen22 fixtures");
    g_want1 = sw_kt_replay_by_job_w(g_l13, g_n13, g_c13, 10);
    g_want1_n = count_records(g_want1);
    json_t *want2 = sw_kt_replay_by_job_w(g_l2, g_n2, g_c2, 10);
    g_want_n = g_want1_n + count_records(want2);
    g_want_all = json_deep_copy(g_want1);
    json_object_update(g_want_all, want2);
    json_decref(want2);
    return 0;
}

static int registry_teardown(void **state)
{
    for (int i = 0; i < g_c13; i++) free(g_l13[i]);
    for (int i = 0; i < g_c2; i++) free(g_l2[i]);
    free(g_l13);
    free(g_n13);
    free(g_l2);
    free(g_n2);
    json_decref(g_want1);
    json_decref(g_want_all);
    if (g_rk) sw_kp_destroy(g_rk);
    sw_test_daemon_stop(&g_daemon, 30000);
    if (g_stub > 0) sw_proc_kill(g_stub);
    sw_test_mock_stop(&g_mock);
    printf("test_registry: logs in %s\n", g_dir);
    return sw_test_kill_children(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phase1_alerts),
        cmocka_unit_test(test_unknown_id_dead_lettered),
        cmocka_unit_test(test_registry_down_holds),
        cmocka_unit_test(test_registry_back),
        cmocka_unit_test(test_tail_decodes),
        cmocka_unit_test(test_produce_avro),
        cmocka_unit_test(test_ids_without_registry),
        cmocka_unit_test(test_bad_schema_file),
    };
    return cmocka_run_group_tests(tests, registry_setup, registry_teardown);
}
