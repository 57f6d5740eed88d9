/*
 * Floods, an absent repartition leader and a mixed group (issue 35), on
 * librdkafka's mock cluster in a separate process, `stormwatch run` at its
 * defaults (repartition=auto) unless said:
 *  - flood: a backlog (all input produced before the daemon starts) of
 *    one-sample job ids (1, 2 or 8 ranks, one message per rank) beside 4
 *    real 16-rank storm jobs, keyed by job id, on 32 partitions, with a
 *    max.memory.bytes the flood overfills: every real job's records equal
 *    replay's, no real job is evicted, nothing is refused (a flood job can
 *    always go; before issue 35 an engine reached late refused them: 492
 *    dead letters of kind limit at 8 MiB), and peak RSS stays under the limit. Scaled down here (SW_FLOOD_JOBS ids, default 20,000, in
 *    SW_FLOOD_BUDGET bytes, default 16 MiB, limit SW_FLOOD_LIMIT_MIB,
 *    default 160); bench/flood_backlog.sh runs the full size (500,000 ids
 *    at the defaults, SW_FLOOD_RUNS times).
 *  - outage: the repartition topic's leaders gone for 20 s while job-keyed
 *    input arrives: no trigger waits over a second (the alert latency
 *    histogram), and the output equals replay's.
 *  - mixed: a repartition=on member reads a repartition=auto member's
 *    markers: skipped and counted, not dead-lettered, /readyz says "mixed
 *    group".
 * SW_FLOODS_ONLY=NAME runs one of them (one CTest test each).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sw_codec_telemetry.h"
#include "sw_daemon.h"
#include "sw_lines.h"
#include "sw_partition.h"
#include "sw_proc.h"
#include "sw_testlib.h"

static char g_boot[1024];
static sw_test_mock_t g_mock;
static char g_dir[512];

#define mock_cmd(...) sw_test_mock_cmd(&g_mock, __VA_ARGS__)

/* Produce @p l to @p topic, each line keyed by its job id on murmur2's
 * partition of it (as a Kafka Java producer places keys), pausing
 * @p pace_us every 100 messages. */
static int produce(const sw_test_lines_t *l, const char *topic, int parts, int from, int to,
                   useconds_t pace_us)
{
    rd_kafka_t *rk = sw_kp_new(g_boot);
    sw_tdec_t *dec = sw_tdec_new();
    char err[256];
    for (int i = from; i < to; i++) {
        sw_event_t ev;
        SW_ASSERT(sw_tdec_json(dec, l->v[i], l->len[i], &ev, err, sizeof(err)) == SW_OK, "%s", err);
        int32_t q = sw_partition_of(SW_PARTITIONER_MURMUR2, ev.job_id.ptr, ev.job_id.len, parts);
        SW_ASSERT(sw_kp_send(rk, topic, q, ev.job_id.ptr, ev.job_id.len, l->v[i], l->len[i]),
                  "produce");
        if (i % 100 == 99) {
            rd_kafka_poll(rk, 0);
            if (pace_us) usleep(pace_us);
        }
    }
    SW_ASSERT(sw_kp_flush(rk, 300000), "test producer could not deliver");
    sw_kp_destroy(rk);
    sw_tdec_destroy(dec);
    return 0;
}

static void daemon_start(sw_test_daemon_t *d, const char *t, const char *tag,
                         const char *const *extra)
{
    char name[64];
    snprintf(name, sizeof(name), "run-%s", tag);
    sw_test_daemon_init(d, "run", g_dir, name, g_boot);
    sw_test_daemon_x(d, "group.id=g.%s", t);
    sw_test_daemon_topics(d, t);
    static const char *const common[] = {"metrics.listen=127.0.0.1:0",
                                         "kafka.consumer.topic.metadata.refresh.interval.ms=1000",
                                         "log.level=info", NULL};
    sw_test_daemon_xs(d, common);
    if (extra) sw_test_daemon_xs(d, extra);
    sw_test_daemon_start(d);
}

/* The sum of every series of family @p name whose labels contain @p label. */
static double metric_sum(const char *text, const char *name, const char *label)
{
    double s = 0;
    size_t n = strlen(name);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, name, n) || (p[n] != '{' && p[n] != ' ')) continue;
        const char *eol = strchr(p, '\n');
        const char *sp = p[n] == ' ' ? p + n : strstr(p, "} ");
        if (!sp || (eol && sp > eol)) continue;
        if (label) {
            const char *lb = strstr(p, label);
            if (!lb || (eol && lb > eol)) continue;
        }
        s += strtod(sp + (p[n] == ' ' ? 1 : 2), NULL);
    }
    return s;
}

static bool get_metrics(int port, sw_buf_t *body)
{
    return sw_test_http_get(port, "/metrics", body) == 200 && body->data;
}

/* A field of process @p pid's status ("VmHWM:" its peak RSS, "VmRSS:"
 * now), KiB; -1 unknown. */
static long vm_kib(pid_t pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long v = -1;
    size_t n = strlen(field);
    if (!f) return -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, field, n)) v = strtol(line + n, NULL, 10);
    fclose(f);
    return v;
}

static long vm_hwm_kib(pid_t pid)
{
    return vm_kib(pid, "VmHWM:");
}

/* Records of jobs whose id starts with @p prefix, against replay's of
 * @p real (summaries left out: idle ones come when the test stops). */
static int check_real(const sw_test_lines_t *real, int64_t window, const char *t,
                      const char *src_fmt, const char *prefix, int parts, const char *what)
{
    json_t *want = sw_kt_replay_by_job_w(real->v, real->len, real->n, window);
    size_t want_n = sw_kt_count(want);
    char topic[64], src[128];
    snprintf(topic, sizeof(topic), "out.%s", t);
    snprintf(src, sizeof(src), src_fmt, t, t);
    sw_kmsg_t *m;
    size_t got_n = sw_kc_read(g_boot, topic, parts, want_n, 4000, 120000, &m);
    json_t *all = sw_kt_group_by_job(m, got_n, src, 0, parts, false);
    json_t *got = json_object();
    const char *job;
    json_t *arr;
    json_object_foreach(all, job, arr)
    {
        if (!strncmp(job, prefix, strlen(prefix))) json_object_set(got, job, arr);
    }
    sw_kt_drop_summaries(got);
    char why[1024];
    int failed = 0;
    if (sw_kt_count(got) != want_n || !sw_test_json_equal(got, want, true, why, sizeof(why))) {
        fprintf(stderr, "FAIL %s: %zu records of the real jobs, replay gives %zu: %s\n", what,
                sw_kt_count(got), want_n, sw_kt_count(got) == want_n ? why : "count differs");
        failed = 1;
    }
    if (want_n < 4) {
        fprintf(stderr, "FAIL %s: the generated storms gave only %zu records\n", what, want_n);
        failed = 1;
    }
    printf("  %s: %zu records of the real jobs, %s replay's\n", what, sw_kt_count(got),
           failed ? "NOT equal to" : "equal to");
    sw_kmsg_free(m, got_n);
    json_decref(all);
    json_decref(got);
    json_decref(want);
    return failed;
}

/* Dead letters of dlq.<t> by kind (stormwatch.error.kind), and how many
 * name a job id starting with @p prefix (their key). */
static size_t dlq_report(const char *t, int parts, const char *prefix, size_t *real, size_t *limit)
{
    char topic[64];
    snprintf(topic, sizeof(topic), "dlq.%s", t);
    sw_kmsg_t *m;
    size_t n = sw_kc_read(g_boot, topic, parts, SIZE_MAX, 1500, 5000, &m);
    static const char *const kinds[] = {"decode", "invalid", "limit", "format", "clock"};
    size_t by[5] = {0};
    *real = 0;
    const char *why_limit = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *k = sw_kmsg_header(&m[i], "stormwatch.error.kind");
        for (int j = 0; k && j < 5; j++) by[j] += !strcmp(k, kinds[j]);
        if (m[i].key && !strncmp(m[i].key, prefix, strlen(prefix))) (*real)++;
        if (k && !strcmp(k, "limit") && !why_limit)
            why_limit = sw_kmsg_header(&m[i], "stormwatch.error");
    }
    printf(
        "  dead letters: %zu (decode %zu, invalid %zu, limit %zu, format %zu, clock %zu); of "
        "real jobs %zu\n",
        n, by[0], by[1], by[2], by[3], by[4], *real);
    if (why_limit) printf("  a limit dead letter says: %s\n", why_limit);
    if (limit) *limit = by[2];
    sw_kmsg_free(m, n);
    return n;
}

static long env_long(const char *name, long def)
{
    const char *s = getenv(name);
    return s && *s ? strtol(s, NULL, 10) : def;
}

/* ---- flood -------------------------------------------------------------- */

static int flood_once(int run, const sw_test_lines_t *all, const sw_test_lines_t *real, long budget,
                      long limit_mib)
{
    char t[16], tag[32];
    snprintf(t, sizeof(t), "fl%d", run);
    snprintf(tag, sizeof(tag), "flood%d", run);
    /* All made here: a broker that auto-creates the repartition topic (the
     * mock's controller can time out the Admin API under load) would give
     * it the broker's partition count. */
    char topics[5][64];
    snprintf(topics[0], sizeof(topics[0]), "topic in.%s 32", t);
    snprintf(topics[1], sizeof(topics[1]), "topic out.%s 32", t);
    snprintf(topics[2], sizeof(topics[2]), "topic dlq.%s 32", t);
    snprintf(topics[3], sizeof(topics[3]), "topic state.%s 1", t);
    snprintf(topics[4], sizeof(topics[4]), "topic g.%s.repartition 32", t);
    for (int i = 0; i < 5; i++) SW_ASSERT(mock_cmd("%s", topics[i]), "mock: %s", topics[i]);
    char in[64];
    snprintf(in, sizeof(in), "in.%s", t);
    int64_t t0 = sw_proc_now_ms();
    SW_ASSERT(produce(all, in, 32, 0, all->n, 0) == 0, "flood could not be produced");
    printf("  run %d: %d messages produced before the start in %lld ms\n", run, all->n,
           (long long)(sw_proc_now_ms() - t0));
    /* The mock keeps 5 MiB and 100,000 messages a partition, dropping the
     * oldest beyond: the flood must fit, or the real jobs lose input. */
    rd_kafka_t *rk = sw_kp_new(g_boot);
    int64_t kept = 0;
    for (int q = 0; q < 32; q++) {
        int64_t lo = 0, hi = 0;
        SW_ASSERT(!rd_kafka_query_watermark_offsets(rk, in, q, &lo, &hi, 10000), "watermarks");
        kept += hi - lo;
    }
    sw_kp_destroy(rk);
    SW_ASSERT(kept == all->n, "the mock kept %lld of %d messages (5 MiB a partition): fewer ids",
              (long long)kept, all->n);
    sw_test_daemon_t d;
    char bx[64], px[80];
    snprintf(bx, sizeof(bx), "max.memory.bytes=%ld", budget);
    long pkb = env_long("SW_FLOOD_PREFETCH_KB", 0); /* 0: the default */
    snprintf(px, sizeof(px), "kafka.consumer.queued.max.messages.kbytes=%ld", pkb);
    const char *extra[4] = {NULL, NULL, NULL, NULL};
    int ne = 0;
    if (budget > 0) extra[ne++] = bx;
    if (pkb > 0) extra[ne++] = px;
    const char *x = getenv("SW_FLOOD_X"); /* one more property (bench/flood_backlog.sh) */
    if (x && *x) extra[ne++] = x;
    daemon_start(&d, t, tag, extra);
    int port = sw_test_daemon_metrics_port(&d, 30000);
    SW_ASSERT(port > 0, "no metrics port (log %s)", d.log);
    sw_buf_t body;
    sw_buf_init(&body);
    double done = 0, peak_state = 0;
    /* What the RSS is made of at its highest sample: the engines' state
     * then, and the input read but not yet analysed (lag is what is not
     * yet read). */
    long rss_peak = 0;
    double rss_state = 0, rss_done = 0;
    int64_t t1 = sw_proc_now_ms(), rss_ms = 0;
    while (sw_proc_now_ms() - t1 < 600000 && sw_test_daemon_running(&d)) {
        if (get_metrics(port, &body)) {
            done = metric_sum(body.data, "stormwatch_events_in_total", in);
            double st = metric_sum(body.data, "stormwatch_engine_state_bytes", NULL);
            if (st > peak_state) peak_state = st;
            long rss = vm_kib(d.pid, "VmRSS:");
            if (rss > rss_peak) {
                rss_peak = rss;
                rss_state = st;
                rss_done = done;
                rss_ms = sw_proc_now_ms() - t1;
            }
            if (done >= all->n) break;
        }
        usleep(200000);
    }
    printf(
        "  run %d: highest RSS sampled %ld MiB at %lld ms: engine state %.1f MiB, %.0f of %d "
        "messages analysed\n",
        run, rss_peak / 1024, (long long)rss_ms, rss_state / 1048576.0, rss_done, all->n);
    long hwm = vm_hwm_kib(d.pid);
    usleep(1500000); /* the engines' counters are published once a second */
    double evicted = 0, evidence = 0, refused = 0;
    if (get_metrics(port, &body)) {
        evicted = metric_sum(body.data, "stormwatch_jobs_evicted_total", NULL);
        evidence = metric_sum(body.data, "stormwatch_jobs_evicted_with_evidence_total", NULL);
        refused = metric_sum(body.data, "stormwatch_jobs_refused_total", NULL);
    }
    printf(
        "  run %d: %.0f of %d messages analysed in %lld ms; peak RSS %ld MiB (limit %ld), "
        "engine state peak %.1f MiB (max.memory.bytes %.1f MiB); %.0f jobs evicted, %.0f with "
        "evidence, %.0f refused\n",
        run, done, all->n, (long long)(sw_proc_now_ms() - t1), hwm / 1024, limit_mib,
        peak_state / 1048576.0, (double)budget / 1048576.0, evicted, evidence, refused);
    sw_buf_clear(&body);
    int failed = 0;
    if (done < all->n) {
        fprintf(stderr, "FAIL flood: only %.0f of %d messages analysed (log %s)\n", done, all->n,
                d.log);
        failed = 1;
    }
    if (hwm < 0 || hwm / 1024 >= limit_mib) {
        fprintf(stderr, "FAIL flood: peak RSS %ld MiB, limit %ld MiB\n", hwm / 1024, limit_mib);
        failed = 1;
    }
    failed |= check_real(real, 512, t, "in.%s,g.%s.repartition", "real", 32, "flood");
    size_t real_dlq, limit_dlq;
    dlq_report(t, 32, "real", &real_dlq, &limit_dlq);
    /* At full size nothing is refused; scaled down, an engine's fixed tables
     * are a large part of the budget and a flood event may find nothing
     * left to evict for a moment: counted, not a failure. */
    bool full = budget <= 0 || budget >= (64L << 20);
    if (real_dlq || (full && limit_dlq) || evidence > 0) {
        fprintf(stderr,
                "FAIL flood: %zu dead letters of the real jobs, %zu refused for memory, %.0f jobs "
                "with evidence evicted (a flood job could always go)\n",
                real_dlq, limit_dlq, evidence);
        failed = 1;
    }
    if (evicted < 1) {
        fprintf(stderr, "FAIL flood: nothing evicted: the flood did not fill max.memory.bytes\n");
        failed = 1;
    }
    if (sw_test_daemon_stop(&d, 60000) != 0) {
        fprintf(stderr, "FAIL flood: the daemon did not exit 0 (log %s)\n", d.log);
        failed = 1;
    }
    return failed;
}

static int test_flood(void)
{
    long jobs = env_long("SW_FLOOD_JOBS", 20000);
    long budget = env_long("SW_FLOOD_BUDGET", 16L << 20); /* 0: the daemon's default */
    /* Under AddressSanitizer the daemon's RSS holds the shadow memory and the
     * quarantine of freed blocks (about 2-3x): the bound there is the
     * budget's share scaled so, still far below what an unbounded flood
     * takes (the release build checks 160 MiB). */
#if defined(__SANITIZE_ADDRESS__)
    long limit_mib = env_long("SW_FLOOD_LIMIT_MIB", 480);
#else
    long limit_mib = env_long("SW_FLOOD_LIMIT_MIB", 160);
#endif
    long runs = env_long("SW_FLOOD_RUNS", 1);
    long rank_cycle = env_long("SW_FLOOD_RANKS", 3); /* 3: 1, 2, 8 ranks in turn; 1: one rank */
    sw_test_lines_t real = {0}, all = {0};
    sw_test_gen_storms(&real, "realjob", 4, 16, 200, 3, 35); /* 4 partitions (murmur2) */
    /* The flood, the real jobs' lines spread through it. */
    char buf[400];
    int ri = 0;
    long every = real.n ? jobs / real.n + 1 : jobs;
    for (long i = 0; i < jobs; i++) {
        int k = rank_cycle == 1 ? 1 : (int[]){1, 2, 8}[i % 3];
        for (int r = 0; r < k; r++) {
            /* Short: the mock keeps 5 MiB a partition. */
            int n = snprintf(buf, sizeof(buf),
                             "{\"timestamp_ns\":%lld,\"event_type\":\"sample\",\"rank\":%d,"
                             "\"world_size\":%d,\"job_id\":\"f%ld\",\"device_used_bytes\":1}",
                             1763700000000000000LL + i, r, k, i);
            sw_test_lines_add(&all, buf, (size_t)n);
        }
        if (i % every == 0)
            for (int c = 0; c < 8 && ri < real.n; c++, ri++)
                sw_test_lines_add(&all, real.v[ri], real.len[ri]);
    }
    for (; ri < real.n; ri++) sw_test_lines_add(&all, real.v[ri], real.len[ri]);
    printf(
        "flood: %ld one-sample job ids (%d messages with the real jobs') beside 4 real jobs "
        "(%d messages), 32 partitions, backlog; %ld run%s\n",
        jobs, all.n, real.n, runs, runs == 1 ? "" : "s");
    int failed = 0, held = 0;
    for (long run = 0; run < runs; run++) {
        int f = flood_once((int)run, &all, &real, budget, limit_mib);
        held += !f;
        failed |= f;
    }
    printf("flood: %d of %ld runs held\n", held, runs);
    sw_test_lines_free(&real);
    sw_test_lines_free(&all);
    return failed;
}

/* ---- the repartition leader down ------------------------------------------ */

static int latency_over_1s(const char *text, double *count)
{
    double le1 = metric_sum(text, "stormwatch_alert_latency_seconds_bucket", "le=\"1\"");
    *count = metric_sum(text, "stormwatch_alert_latency_seconds_count", NULL);
    static const char *const les[] = {"1", "2.5", "5", "10", "30", "60"};
    printf("  alert latencies (cumulative):");
    for (int i = 0; i < 6; i++) {
        char lb[32];
        snprintf(lb, sizeof(lb), "le=\"%s\"", les[i]);
        printf(" <= %s s: %.0f;", les[i],
               metric_sum(text, "stormwatch_alert_latency_seconds_bucket", lb));
    }
    printf(" all: %.0f\n", *count);
    return (int)(*count - le1);
}

static int test_outage(void)
{
    const char *t = "ou";
    sw_test_lines_t l = {0};
    sw_test_gen_storms(&l, "oj", 4, 8, 400, 3, 41);
    sw_test_daemon_t d;
    daemon_start(&d, t, "ou0", (const char *const[]){"window.samples=100", NULL});
    int port = sw_test_daemon_metrics_port(&d, 30000);
    SW_ASSERT(port > 0, "no metrics port (log %s)", d.log);
    SW_ASSERT(sw_test_daemon_wait_ready(&d, port, 60000), "never ready (log %s)", d.log);
    /* A tenth live, then the repartition topic's leaders go for 20 s while
     * the rest arrives, paced over about 25 s. */
    int cut = l.n / 10;
    SW_ASSERT(produce(&l, "in.ou", 4, 0, cut, 20000) == 0, "produce");
    sw_buf_t body;
    sw_buf_init(&body);
    int64_t tw = sw_proc_now_ms();
    while (sw_proc_now_ms() - tw < 30000 && get_metrics(port, &body) &&
           metric_sum(body.data, "stormwatch_events_in_total", "in.ou") < cut)
        usleep(100000);
    for (int p = 0; p < 4; p++)
        SW_ASSERT(mock_cmd("leader g.ou.repartition %d -1", p), "mock refused the leader change");
    int64_t t0 = sw_proc_now_ms();
    pid_t pid = fork();
    if (pid == 0) _exit(produce(&l, "in.ou", 4, cut, l.n, (useconds_t)(25000000LL * 100 / l.n)));
    while (sw_proc_now_ms() - t0 < 20000) usleep(100000);
    double count = 0, direct = 0;
    int slow = -1;
    if (get_metrics(port, &body)) {
        slow = latency_over_1s(body.data, &count);
        direct = metric_sum(body.data, "stormwatch_repartition_direct_messages_total", NULL);
    }
    printf(
        "outage: repartition leaders down 20 s: %.0f triggers and updates meanwhile, %d over "
        "1 s; %.0f messages analysed directly\n",
        count, slow, direct);
    for (int p = 0; p < 4; p++)
        SW_ASSERT(mock_cmd("leader g.ou.repartition %d 1", p), "mock refused the leader change");
    int st = 0;
    waitpid(pid, &st, 0);
    SW_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "producer failed");
    int failed = check_real(&l, 100, t, "in.%s,g.%s.repartition", "oj", 4, "outage");
    int64_t t1 = sw_proc_now_ms();
    while (sw_proc_now_ms() - t1 < 10000 && get_metrics(port, &body) &&
           metric_sum(body.data, "stormwatch_events_in_total", "in.ou") < l.n)
        usleep(200000);
    if (get_metrics(port, &body)) slow = latency_over_1s(body.data, &count);
    printf("outage: in all %.0f alert latencies, %d over 1 s\n", count, slow);
    if (slow != 0 || count < 4) {
        fprintf(stderr, "FAIL outage: %d of %.0f triggers waited over 1 s (log %s)\n", slow, count,
                d.log);
        failed = 1;
    }
    size_t real_dlq;
    if (dlq_report(t, 4, "oj", &real_dlq, NULL)) failed = 1;
    sw_buf_clear(&body);
    if (sw_test_daemon_stop(&d, 60000) != 0) failed = 1;
    sw_test_lines_free(&l);
    return failed;
}

/* ---- a mixed group ------------------------------------------------------------ */

static int test_mixed(void)
{
    const char *t = "mx";
    sw_test_lines_t l = {0};
    sw_test_gen_storms(&l, "mj", 4, 8, 200, 2, 43);
    sw_test_daemon_t a, b;
    daemon_start(&a, t, "mx-auto", NULL);
    int pa = sw_test_daemon_metrics_port(&a, 30000);
    SW_ASSERT(pa > 0 && sw_test_daemon_wait_ready(&a, pa, 60000), "auto never ready (%s)", a.log);
    SW_ASSERT(produce(&l, "in.mx", 4, 0, l.n / 2, 0) == 0, "produce");
    /* An on member joins: it reads the repartition topic, markers included. */
    daemon_start(&b, t, "mx-on", (const char *const[]){"repartition=on", NULL});
    int pb = sw_test_daemon_metrics_port(&b, 30000);
    SW_ASSERT(pb > 0, "no metrics port (log %s)", b.log);
    SW_ASSERT(produce(&l, "in.mx", 4, l.n / 2, l.n, 2000) == 0, "produce");
    sw_buf_t body;
    sw_buf_init(&body);
    int64_t t0 = sw_proc_now_ms();
    double skipped = 0, mixed = 0;
    int ready = 0;
    while (sw_proc_now_ms() - t0 < 60000) {
        if (get_metrics(pb, &body)) {
            skipped = metric_sum(body.data, "stormwatch_peer_markers_skipped_total", NULL);
            mixed = metric_sum(body.data, "stormwatch_group_mixed", NULL);
        }
        ready = sw_test_http_get(pb, "/readyz", &body);
        if (skipped > 0 && mixed > 0 && ready == 503 && body.data &&
            strstr(body.data, "mixed group"))
            break;
        usleep(250000);
    }
    printf(
        "mixed: the on member skipped %.0f markers, stormwatch_group_mixed %.0f, /readyz %d "
        "(%s)\n",
        skipped, mixed, ready, body.data ? body.data : "");
    int failed = 0;
    if (skipped < 1 || mixed < 1 || ready != 503) {
        fprintf(stderr, "FAIL mixed: markers not seen as a peer's (logs %s, %s)\n", a.log, b.log);
        failed = 1;
    }
    size_t n = 0, real;
    n = dlq_report(t, 4, "mj", &real, NULL);
    if (n) {
        fprintf(stderr, "FAIL mixed: %zu dead letters\n", n);
        failed = 1;
    }
    if (sw_test_daemon_count(&b, "a member of this group runs repartition=auto") != 1) {
        fprintf(stderr, "FAIL mixed: the on member did not say once that the group is mixed\n");
        failed = 1;
    }
    sw_buf_clear(&body);
    sw_test_daemon_stop(&b, 60000);
    sw_test_daemon_stop(&a, 60000);
    sw_test_lines_free(&l);
    return failed;
}

static int floods_setup(void **state)
{
    (void)state;
    const char *sel = getenv("SW_FLOODS_ONLY");
    snprintf(g_dir, sizeof(g_dir), "%s/floods%s%s", sw_test_tmp(), sel ? "-" : "", sel ? sel : "");
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", g_dir, g_dir);
    if (system(cmd) != 0) return -1;
    static const char *const topics[] = {
        "in.ou:4", "out.ou:4", "dlq.ou:4", "state.ou:1", "g.ou.repartition:4",
        "in.mx:4", "out.mx:4", "dlq.mx:4", "state.mx:1", "g.mx.repartition:4",
        NULL};
    if (!sw_test_mock_start(&g_mock, g_dir, 3, true, topics)) return -1;
    snprintf(g_boot, sizeof(g_boot), "%s", g_mock.boot);
    printf("test_floods: logs in %s\n", g_dir);
    return 0;
}

#define SCENARIO(name, call)                                             \
    static void scenario_##name(void **state)                            \
    {                                                                    \
        (void)state;                                                     \
        SW_ASSERT((call) == 0, "scenario %s failed (see above)", #name); \
    }
SCENARIO(flood, test_flood())
SCENARIO(outage, test_outage())
SCENARIO(mixed, test_mixed())
#undef SCENARIO

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scenario_flood),
        cmocka_unit_test(scenario_outage),
        cmocka_unit_test(scenario_mixed),
    };
    const char *only = getenv("SW_FLOODS_ONLY");
    char filter[64];
    if (only) {
        snprintf(filter, sizeof(filter), "scenario_%s", only);
        cmocka_set_test_filter(filter);
    }
    return cmocka_run_group_tests(tests, floods_setup, sw_test_kill_children);
}
