/* The helpers of faults_env.h. */
#include "faults_env.h"

char g_boot[1024];
sw_test_mock_t g_mock;
/* repartition=on scenarios: records come from rep.<t> (their source headers);
 * repartition=auto ones: from in.<t> or rep.<t>. */
bool g_rep, g_auto;
char g_dir[512];

int make_stream(stream_t *s, const char *prefix, int jobs, int ranks, int samples, int storms,
                uint64_t seed)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->prefix, sizeof(s->prefix), "%s", prefix);
    s->jobs = jobs;
    sw_test_gen_storms(&s->l, prefix, jobs, ranks, samples, storms, seed);
    return 0;
}

void free_stream(stream_t *s)
{
    sw_test_lines_free(&s->l);
}

/* Produce lines [from, to) of @p s to in.<t>, job j on partition j, with a
 * pause of @p pace_us every 100 messages. */
int produce(const stream_t *s, const char *t, int from, int to, useconds_t pace_us)
{
    char topic[64];
    snprintf(topic, sizeof(topic), "in.%s", t);
    rd_kafka_t *rk = sw_kp_new(g_boot);
    sw_tdec_t *dec = sw_tdec_new();
    char err[256];
    size_t plen = strlen(s->prefix) + 1;
    for (int i = from; i < to; i++) {
        sw_event_t ev;
        SW_ASSERT(sw_tdec_json(dec, s->l.v[i], s->l.len[i], &ev, err, sizeof(err)) == SW_OK, "%s",
                  err);
        int part = atoi(ev.job_id.ptr + plen);
        SW_ASSERT(sw_kp_send(rk, topic, part, ev.job_id.ptr, ev.job_id.len, s->l.v[i], s->l.len[i]),
                  "produce");
        if (pace_us && i % 100 == 99) {
            rd_kafka_poll(rk, 0);
            usleep(pace_us); /* pacing: telemetry at a rate, waits for nothing */
        }
    }
    SW_ASSERT(sw_kp_flush(rk, 120000), "test producer could not deliver");
    sw_kp_destroy(rk);
    sw_tdec_destroy(dec);
    return 0;
}

/* `stormwatch run` on topics in.<t>, out.<t>, ... as group g.<t>, its log
 * in run-<tag>.err; @p extra1 and @p extra2 are -X values or NULL. */
void daemon_start_xs(sw_test_daemon_t *d, const char *t, const char *tag, const char *const *extra)
{
    char name[64];
    snprintf(name, sizeof(name), "run-%s", tag);
    sw_test_daemon_init(d, "run", g_dir, name, g_boot);
    sw_test_daemon_x(d, "group.id=g.%s", t);
    sw_test_daemon_topics(d, t);
    /* repartition=off: records are compared per input partition (their
     * source headers); the forwarding stage under kill -9 is test_keying's. */
    static const char *const common[] = {"window.samples=100",
                                         "repartition=off",
                                         "kafka.consumer.topic.metadata.refresh.interval.ms=1000",
                                         "snapshot.interval.ms=300",
                                         "job.idle.ms=3000",
                                         "log.level=info",
                                         NULL};
    sw_test_daemon_xs(d, common);
    sw_test_daemon_xs(d, extra);
    sw_test_daemon_start(d);
}

void daemon_start(sw_test_daemon_t *d, const char *t, const char *tag, const char *extra1,
                  const char *extra2)
{
    daemon_start_xs(d, t, tag, (const char *const[]){extra1, extra2, NULL});
}

int stop(sw_test_daemon_t *d)
{
    return sw_test_daemon_stop(d, 60000);
}

/* The output of topic out.<t> against an uninterrupted run of @p s. */
int check_output(const stream_t *s, const char *t, const char *what)
{
    json_t *want = sw_kt_replay_by_job_w(s->l.v, s->l.len, s->l.n, 100);
    size_t want_n = sw_kt_count(want);
    char topic[64], src[64];
    snprintf(topic, sizeof(topic), "out.%s", t);
    if (g_auto) snprintf(src, sizeof(src), "in.%s,rep.%s", t, t);
    else snprintf(src, sizeof(src), "%s.%s", g_rep ? "rep" : "in", t);
    sw_kmsg_t *m;
    size_t got_n = sw_kc_read(g_boot, topic, 4, want_n + (size_t)s->jobs, 4000, 180000, &m);
    json_t *got = sw_kt_group_by_job(m, got_n, src, 0, 4, false);
    /* Exactly one summary per job, last. */
    int failed = 0;
    const char *job;
    json_t *arr;
    json_object_foreach(got, job, arr)
    {
        size_t summaries = 0;
        for (size_t i = 0; i < json_array_size(arr); i++) {
            json_t *a = json_object_get(json_array_get(arr, i), "action");
            summaries += json_is_string(a) && !strcmp(json_string_value(a), "summary");
        }
        if (summaries != 1) {
            fprintf(stderr, "FAIL %s: job %s has %zu summaries, expected 1\n", what, job,
                    summaries);
            failed = 1;
        }
    }
    sw_kt_drop_summaries(got);
    char why[1024];
    if (sw_kt_count(got) != want_n || !sw_test_json_equal(got, want, true, why, sizeof(why))) {
        fprintf(stderr, "FAIL %s: %zu alert records, expected %zu exactly once: %s\n", what,
                sw_kt_count(got), want_n, sw_kt_count(got) == want_n ? why : "count differs");
        failed = 1;
    }
    if (want_n < (size_t)s->jobs * 4) {
        fprintf(stderr, "FAIL %s: the generated storms gave only %zu records\n", what, want_n);
        failed = 1;
    }
    if (failed) {
        /* Keep what the output holds for the post-mortem. */
        char path[1100];
        snprintf(path, sizeof(path), "%s/out-%s.txt", g_dir, t);
        FILE *f = fopen(path, "w");
        for (size_t i = 0; f && i < got_n; i++) {
            json_error_t e;
            json_t *v = json_loadb(m[i].value, m[i].len, 0, &e);
            fprintf(f, "p%d@%lld src=%s/%s action=%s job=%s ep=%lld rev=%lld\n",
                    (int)m[i].partition, (long long)m[i].offset,
                    sw_kmsg_header(&m[i], "stormwatch.source.partition"),
                    sw_kmsg_header(&m[i], "stormwatch.source.offset"),
                    sw_kmsg_header(&m[i], "stormwatch.action"),
                    json_string_value(json_object_get(v, "job_id")),
                    (long long)json_integer_value(json_object_get(v, "episode")),
                    (long long)json_integer_value(json_object_get(v, "revision")));
            json_decref(v);
        }
        if (f) fclose(f);
        fprintf(stderr, "  output records written to %s\n", path);
    }
    size_t alerts_got = sw_kt_count(got);
    json_decref(got);
    json_decref(want);
    sw_kmsg_free(m, got_n);
    printf("%s: %zu alert records + %d summaries compared (output held %zu alert records): %s\n",
           what, want_n, s->jobs, alerts_got, failed ? "FAILED" : "ok");
    return failed;
}

/* Wait until group g.<t> has committed @p want records of in.<t> (the sum of
 * its 4 partitions' committed offsets): a scenario's next step comes after
 * the daemon has taken in that much of the telemetry, whatever the load. An
 * absolute count, so that a step the daemon is already past goes on at once
 * (as a fixed sleep did when the daemon ran ahead of it). */
void wait_consumed(const char *t, int64_t want, const char *what)
{
    char group[64], topic[64];
    snprintf(group, sizeof(group), "g.%s", t);
    snprintf(topic, sizeof(topic), "in.%s", t);
    int64_t got = sw_kc_wait_committed(g_boot, group, topic, 4, want, PROGRESS_WAIT_MS);
    SW_ASSERT(got >= want, "%s: %s committed %lld of %s's records in %d s, %lld awaited", what,
              group, (long long)got, topic, PROGRESS_WAIT_MS / 1000, (long long)want);
}

/* The mock cluster of every scenario (one directory per SW_FAULTS_ONLY). */
int faults_setup(void **state)
{
    (void)state;
    const char *sel = getenv("SW_FAULTS_ONLY");
    snprintf(g_dir, sizeof(g_dir), "%s/faults%s%s", sw_test_tmp(), sel ? "-" : "", sel ? sel : "");
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", g_dir, g_dir);
    if (system(cmd) != 0) return -1;
    static const char *const topics[] = {
        "in.k:4", "out.k:4", "dlq.k:4", "state.k:1", "in.r:4", "out.r:4", "dlq.r:4", "state.r:1",
        "in.f:4", "out.f:4", "dlq.f:4", "state.f:1", "in.e:4", "out.e:4", "dlq.e:4", "state.e:1",
        "in.c:4", "out.c:4", "dlq.c:4", "state.c:1", "in.d:4", "out.d:4", "dlq.d:4", "state.d:1",
        "in.s:4", "out.s:4", "dlq.s:4", "state.s:1", "in.m:4", "out.m:4", "dlq.m:4", "state.m:1",
        "in.n:4", "out.n:4", "dlq.n:4", "state.n:1", "in.x:4", "out.x:4", "dlq.x:4", "state.x:1",
        "in.o:4", "out.o:4", "dlq.o:4", "state.o:1", "in.w:4", "out.w:4", "dlq.w:4", "state.w:1",
        "in.g:4", "out.g:4", "dlq.g:4", "state.g:1", NULL};
    if (!sw_test_mock_start(&g_mock, g_dir, 0, true, topics)) return -1;
    snprintf(g_boot, sizeof(g_boot), "%s", g_mock.boot);
    printf("test_faults: logs in %s\n", g_dir);
    return 0;
}

/* A fault test's main: the CI tier's skip, SW_FAULTS_ONLY's filter, then
 * @p tests with faults_setup(). */
int faults_main(const struct CMUnitTest *tests, size_t n)
{
    /* The CI tier (tests/CMakeLists.txt: more chaos seeds): skipped (77)
     * unless CI=true. */
    int gate = sw_test_ci_gate();
    if (gate) return gate;
    /* SW_FAULTS_ONLY=NAME: that scenario only (one CTest test each), by
     * cmocka's filter on scenario_NAME. */
    const char *only = getenv("SW_FAULTS_ONLY");
    char filter[64];
    if (only) {
        snprintf(filter, sizeof(filter), "scenario_%s", only);
        cmocka_set_test_filter(filter);
    }
    return _cmocka_run_group_tests("tests", tests, n, faults_setup, sw_test_kill_children);
}
