/*
 * Crash, rebalance and fault safety of `stormwatch run`, on librdkafka's
 * mock cluster in a separate process driven through its control channel.
 * In every scenario the alert records on the output topic must equal those
 * of an uninterrupted run, job by job: none lost, none repeated, same
 * episode and revision numbers, and exactly one summary per job.
 *  - kill -9 at several points while telemetry is still arriving (kill9,
 *    and crash: SPEC 8 records across the kills);
 *  - a second instance joins in the middle of the storms, then leaves;
 *  - broker round-trip delays, request errors on Produce, Fetch,
 *    OffsetCommit, JoinGroup and SyncGroup, leader moves, a broker down
 *    and up, while the storms are processed;
 *  - exactly_once: the transactional call flow, and a fenced producer
 *    stopping the daemon with exit 1 and a clear message;
 *  - a bounded stop (stop);
 *  - readiness that sees the output: the output topic's leaders gone
 *    (input, state, dead letters and coordinator up), /readyz turns 503
 *    within 10 s, 200 again once delivery resumes, nothing lost.
 */
#include "faults_env.h"

static char *path_in(const char *name)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", g_dir, name);
    return buf[k];
}

/* One control command to the mock; @returns true when it answered "ok". */
#define mock_cmd(...) sw_test_mock_cmd(&g_mock, __VA_ARGS__)

static pid_t produce_in_child(const stream_t *s, const char *t, useconds_t pace_us)
{
    pid_t pid = fork();
    if (pid == 0) _exit(produce(s, t, 0, s->l.n, pace_us) ? 1 : 0);
    return pid;
}

static int restored_count(const char *prefix, int n)
{
    int total = 0;
    for (int i = 0; i < n; i++) {
        char tag[64];
        snprintf(tag, sizeof(tag), "run-%s%d.err", prefix, i);
        total += sw_proc_count_text(path_in(tag), "state restored");
    }
    return total;
}

/* Wait until the daemon @p d (started with metrics.listen=127.0.0.1:0) has
 * taken in @p want events (stormwatch_events_in_total, all its series): the
 * progress of a daemon that commits nothing yet. */
static void wait_events_in(sw_test_daemon_t *d, double want, const char *what)
{
    int port = sw_test_daemon_metrics_port(d, JOIN_WAIT_MS);
    SW_ASSERT(port > 0, "%s: no metrics port in %s", what, d->log);
    static const char name[] = "stormwatch_events_in_total";
    sw_buf_t body;
    sw_buf_init(&body);
    double got = 0;
    for (int64_t until = sw_proc_now_ms() + PROGRESS_WAIT_MS;;) {
        got = 0;
        if (sw_test_http_get(port, "/metrics", &body) == 200 && body.data) {
            for (const char *p = body.data; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                const char *sp = strchr(p, ' '), *nl = strchr(p, '\n');
                if (strncmp(p, name, sizeof(name) - 1) || !sp || (nl && sp > nl)) continue;
                if (p[sizeof(name) - 1] != '{' && p[sizeof(name) - 1] != ' ') continue;
                const char *v = p; /* the value: after the line's last space */
                for (const char *q = sp; q && (!nl || q < nl); q = strchr(q + 1, ' ')) v = q + 1;
                got += strtod(v, NULL);
            }
        }
        if (got >= want || sw_proc_now_ms() > until) break;
        usleep(100000); /* the poll interval */
    }
    sw_buf_clear(&body);
    SW_ASSERT(got >= want, "%s: %s took in %.0f events in %d s, %.0f awaited", what, d->log, got,
              PROGRESS_WAIT_MS / 1000, want);
}

/* Messages on @p topic (the sum of its partitions' high watermarks), -1 when
 * the cluster does not answer. */
static int64_t topic_end(const char *topic)
{
    rd_kafka_t *rk = sw_kp_new(g_boot);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    const struct rd_kafka_metadata *md = NULL;
    int partitions = 0;
    if (rd_kafka_metadata(rk, 0, rkt, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR &&
        md->topic_cnt == 1 && !md->topics[0].err)
        partitions = md->topics[0].partition_cnt;
    if (md) rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(rkt);
    int64_t sum = partitions > 0 ? 0 : -1;
    for (int p = 0; p < partitions && sum >= 0; p++) {
        int64_t lo, hi;
        if (rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi, 10000)) sum = -1;
        else sum += hi;
    }
    sw_kp_destroy(rk);
    return sum;
}

/* Wait until @p topic holds more than @p than messages. */
static void wait_topic_beyond(const char *topic, int64_t than, const char *what)
{
    int64_t end = -1;
    for (int64_t until = sw_proc_now_ms() + PROGRESS_WAIT_MS;;) {
        end = topic_end(topic);
        if (end > than || sw_proc_now_ms() > until) break;
        usleep(100000); /* the poll interval */
    }
    SW_ASSERT(end > than, "%s: %s still holds %lld messages after %d s", what, topic,
              (long long)end, PROGRESS_WAIT_MS / 1000);
}

/* Wait until the daemon @p d has logged @p needle @p times (a state it
 * reached, e.g. what it logs when the brokers go down). */
static void wait_log(sw_test_daemon_t *d, const char *needle, int times, const char *what)
{
    SW_ASSERT(sw_test_daemon_wait_log(d, needle, times, PROGRESS_WAIT_MS),
              "%s: \"%s\" not logged %d time(s) in %d s (see %s)", what, needle, times,
              PROGRESS_WAIT_MS / 1000, d->log);
}

/* ---- scenarios ----------------------------------------------------------- */

static int test_kill9(void)
{
    stream_t s;
    if (make_stream(&s, "kj", 4, 16, 400, 3, 21)) return 1;
    /* The first commits are refused: the first assignment cannot commit
     * its origin snapshots at once, so its partitions are held (paused)
     * until a retry is taken, then consumed. */
    SW_ASSERT(mock_cmd("errors OffsetCommit 3 REBALANCE_IN_PROGRESS,COORDINATOR_NOT_AVAILABLE,"
                       "REBALANCE_IN_PROGRESS"),
              "mock refused the fault");
    pid_t prod = produce_in_child(&s, "k", 100000); /* ~25 s of telemetry */
    const int rounds = 4;
    /* The kill points: records of the ~25 s stream committed (each
     * instance takes in a part of it, then is killed). */
    static const int kill_at[] = {1500, 2200, 4500, 5600};
    for (int i = 0; i < rounds; i++) {
        char tag[16];
        snprintf(tag, sizeof(tag), "k%d", i);
        sw_test_daemon_t d;
        daemon_start(&d, "k", tag, NULL, NULL);
        SW_ASSERT(sw_test_daemon_wait_assigned(&d, 1, JOIN_WAIT_MS), "instance %d did not join", i);
        wait_consumed("k", kill_at[i], "the kill point");
        sw_test_daemon_kill(&d);
    }
    sw_test_daemon_t d;
    daemon_start(&d, "k", "k4", NULL, NULL);
    SW_ASSERT(sw_proc_wait(prod, 180000) == 0, "telemetry could not be produced");
    int failed = check_output(&s, "k", "kill -9 at 4 points mid-stream");
    SW_ASSERT(stop(&d) == 0, "the last instance did not exit 0 after SIGTERM");
    int restores = restored_count("k", rounds + 1);
    printf("  kill -9 points: %d, partition restores from snapshots: %d\n", rounds, restores);
    SW_ASSERT(restores >= rounds, "only %d restores after %d kills", restores, rounds);
    int held = sw_proc_count_text(path_in("run-k0.err"),
                                  "held until its origin snapshot is committed");
    int released = sw_proc_count_text(path_in("run-k0.err"),
                                      "origin snapshot committed; consuming");
    printf("  first commits refused: %d partitions held, %d released after a retry\n", held,
           released);
    SW_ASSERT(held >= 1 && released == held, "held %d, released %d (see %s)", held, released,
              path_in("run-k0.err"));
    free_stream(&s);
    return failed;
}

/* SPEC 8 under kill -9: a generated cascade whose first crash record is
 * revised by a marker that arrives later (a host delivering late). The
 * daemon is killed between the first crash record and its revision, then
 * started again: the output holds each crash record once, revision 0 then
 * 1, the warning once, and no record twice. */
static void count_record(void *opaque, const sw_record_t *rec)
{
    (void)rec;
    (*(size_t *)opaque)++;
}

static int test_crash_kill9(void)
{
    stream_t s;
    memset(&s, 0, sizeof(s));
    size_t cut = 0, want_x8 = 0;
    uint64_t seed;
    char err[256];
    for (seed = 1; seed < 200 && !cut; seed++) {
        sw_genx_opts_t o;
        sw_genx_opts_default(&o);
        o.ranks = 16;
        o.seed = seed;
        o.watchdog_s = 60;
        o.interval_ms = 1000; /* ~1.7 MB: under the mock's 5 MiB per partition */
        sw_genx_t *g = sw_genx_new(&o, err, sizeof(err));
        SW_ASSERT(g, "%s", err);
        free_stream(&s);
        memset(&s, 0, sizeof(s));
        snprintf(s.prefix, sizeof(s.prefix), "crash");
        s.jobs = 1;
        sw_buf_t line;
        sw_buf_init(&line);
        sw_params_t p = sw_params_default();
        p.window_samples = 100;
        sw_detector_t *det = sw_detect_new(p);
        sw_tdec_t *dec = sw_tdec_new();
        int crashes = 0;
        size_t first = 0, second = 0;
        want_x8 = 0;
        while (sw_genx_next(g, &line)) {
            int at = s.l.n;
            sw_test_lines_add(&s.l, line.data, line.len - 1);
            sw_event_t ev;
            const sw_record_t *rec;
            SW_ASSERT(sw_tdec_json(dec, s.l.v[at], s.l.len[at], &ev, err, sizeof(err)) == SW_OK,
                      "%s", err);
            sw_detect_feed(det, &ev, 0, &rec, err, sizeof(err));
            for (const sw_record_t *x = sw_detect_next(det); x; x = sw_detect_next(det)) {
                want_x8++;
                if (x->action != SW_ACTION_CRASH) continue;
                if (crashes == 0) first = (size_t)at;
                if (crashes == 1) second = (size_t)at;
                crashes++;
            }
            line.len = 0;
        }
        sw_buf_clear(&line);
        /* What the job's end adds once it is idle: its summary, then the
         * records that close what is still open (the crash's own closing
         * record, SPEC 8.6 "a crash ends"). */
        size_t at_end = 0;
        sw_detect_finish(det, count_record, &at_end);
        want_x8 += at_end;
        sw_tdec_destroy(dec);
        sw_detect_destroy(det);
        sw_genx_destroy(g);
        /* A revision that comes well after the first record. */
        if (crashes == 2 && second > first + 50) cut = (first + second) / 2;
    }
    SW_ASSERT(cut, "no generated cascade with a revised crash record");
    printf("crash under kill -9: seed %llu, %d events, killed after event %zu\n",
           (unsigned long long)(seed - 1), s.l.n, cut);
    SW_ASSERT(produce(&s, "x", 0, (int)cut, 0) == 0, "produce");
    sw_test_daemon_t d;
    daemon_start(&d, "x", "x0", "metrics.listen=127.0.0.1:0", NULL);
    SW_ASSERT(sw_test_daemon_wait_log(&d, "CRASH job crash-0", 1, JOIN_WAIT_MS),
              "the first crash record was not sent (see %s)", d.log);
    /* Killed once it has taken in all that was produced and written a
     * snapshot after that (snapshot.interval.ms=300; the commits stay behind
     * here, held by the open crash, so the restart restores one). The
     * snapshot may have begun just before: the output must be right
     * whichever snapshot the restart finds. */
    wait_events_in(&d, (double)cut, "x0 takes in the records before the kill");
    int64_t state_end = topic_end("state.x");
    SW_ASSERT(state_end >= 0, "state.x: no answer from the cluster");
    wait_topic_beyond("state.x", state_end, "a snapshot after the last record");
    sw_test_daemon_kill(&d);
    SW_ASSERT(produce(&s, "x", (int)cut, s.l.n, 0) == 0, "produce");
    daemon_start(&d, "x", "x1", NULL, NULL);
    sw_kmsg_t *m;
    size_t got_n = sw_kc_read(g_boot, "out.x", 4, want_x8, 4000, 180000, &m);
    SW_ASSERT(stop(&d) == 0, "the restarted instance did not exit 0 after SIGTERM");
    int failed = 0, crash_rev[4] = {0}, warnings = 0, summaries = 0;
    char seen[64][48];
    size_t nseen = 0;
    for (size_t i = 0; i < got_n; i++) {
        json_error_t e;
        json_t *v = json_loadb(m[i].value, m[i].len, 0, &e);
        const char *act = json_string_value(json_object_get(v, "action"));
        long long rev = (long long)json_integer_value(json_object_get(v, "revision"));
        long long num = (long long)json_integer_value(
            json_object_get(v, act && !strcmp(act, "warning") ? "warning" : "crash"));
        if (act && !strcmp(act, "crash") && rev >= 0 && rev < 4) crash_rev[rev]++;
        if (act && !strcmp(act, "warning")) warnings++;
        if (act && !strcmp(act, "summary")) summaries++;
        char key[48];
        snprintf(key, sizeof(key), "%s/%lld/%lld/%lld", act ? act : "?", num,
                 (long long)json_integer_value(json_object_get(v, "episode")), rev);
        for (size_t k = 0; k < nseen; k++)
            if (!strcmp(seen[k], key)) {
                fprintf(stderr, "FAIL crash kill -9: record %s sent twice\n", key);
                failed = 1;
            }
        if (nseen < 64) snprintf(seen[nseen++], sizeof(seen[0]), "%s", key);
        json_decref(v);
    }
    sw_kmsg_free(m, got_n);
    printf(
        "  output: %zu records, crash revision 0: %d, revision 1: %d, warnings %d, summaries "
        "%d; restores %d\n",
        got_n, crash_rev[0], crash_rev[1], warnings, summaries, restored_count("x", 2));
    SW_ASSERT(crash_rev[0] == 1 && crash_rev[1] == 1, "crash records: %d at revision 0, %d at 1",
              crash_rev[0], crash_rev[1]);
    SW_ASSERT(got_n == want_x8, "%zu records on the output, %zu expected", got_n, want_x8);
    SW_ASSERT(restored_count("x", 2) >= 1, "the restart restored no snapshot");
    free_stream(&s);
    return failed;
}

static int test_rebalance(void)
{
    stream_t s;
    if (make_stream(&s, "rj", 4, 16, 400, 3, 22)) return 1;
    sw_test_daemon_t a, b;
    daemon_start(&a, "r", "rA", NULL, NULL);
    SW_ASSERT(sw_test_daemon_wait_assigned(&a, 4, JOIN_WAIT_MS), "A did not take 4 partitions");
    pid_t prod = produce_in_child(&s, "r", 60000); /* ~15 s */
    wait_consumed("r", s.l.n / 5, "B joins a fifth into the telemetry");
    daemon_start(&b, "r", "rB", NULL, NULL);
    SW_ASSERT(sw_test_daemon_wait_assigned(&b, 1, JOIN_WAIT_MS), "B was never assigned");
    /* B restores what it took and consumes (the group takes in another
     * fifth), then leaves mid-storm. */
    SW_ASSERT(sw_test_daemon_wait_log(&b, "state restored", 1, PROGRESS_WAIT_MS),
              "B restored no partition (see %s)", b.log);
    wait_consumed("r", 2 * s.l.n / 5, "B leaves mid-storm");
    SW_ASSERT(stop(&b) == 0, "B did not exit 0 when leaving");
    SW_ASSERT(sw_proc_wait(prod, 120000) == 0, "telemetry could not be produced");
    int failed = check_output(&s, "r", "second instance joins and leaves mid-storm");
    SW_ASSERT(stop(&a) == 0, "A did not exit 0");
    /* B restoring a partition from a snapshot proves that one moved to it;
     * A restoring proves that one came back after B left. */
    int to_b = sw_test_daemon_count(&b, "state restored");
    int to_a = sw_test_daemon_count(&a, "state restored");
    SW_ASSERT(to_b >= 1 && to_a >= 1, "no partition moved (B restored %d, A restored %d)", to_b,
              to_a);
    printf("  partitions moved between instances: %d to B, %d back to A; revoked %d, lost %d\n",
           to_b, to_a,
           sw_test_daemon_count(&a, " run: revoked ") + sw_test_daemon_count(&b, " run: revoked "),
           sw_test_daemon_count(&a, " run: lost ") + sw_test_daemon_count(&b, " run: lost "));
    free_stream(&s);
    return failed;
}

/* How long broker 2 stays down in test_broker_faults(). */
#define OUTAGE_MS 3000

static int test_broker_faults(void)
{
    stream_t s;
    if (make_stream(&s, "fj", 4, 16, 400, 3, 23)) return 1;
    /* The faults stall the telemetry itself for seconds: jobs must not go
     * idle meanwhile (in production job.idle.ms is minutes). */
    sw_test_daemon_t d, d2;
    daemon_start(&d, "f", "f0", "job.idle.ms=15000", NULL);
    SW_ASSERT(sw_test_daemon_wait_assigned(&d, 4, JOIN_WAIT_MS), "daemon did not join");
    pid_t prod = produce_in_child(&s, "f", 80000); /* ~20 s */
    int faults = 0;
#define FAULT(...)                                                \
    do {                                                          \
        SW_ASSERT(mock_cmd(__VA_ARGS__), "mock refused a fault"); \
        faults++;                                                 \
    } while (0)
    /* Each fault once the daemon has taken in a further 1/32 of the stream
     * (~0.6 s of telemetry) under the one before: a step is progress made
     * through the faults, not time. */
    int step = s.l.n / 32;
    wait_consumed("f", 2 * step, "before the faults");
    FAULT("broker rtt -1 300");
    wait_consumed("f", 4 * step, "under 300 ms round trips");
    FAULT("broker rtt -1 0");
    FAULT("errors Produce 8 NOT_LEADER_FOR_PARTITION,REQUEST_TIMED_OUT");
    wait_consumed("f", 5 * step, "through Produce errors");
    FAULT("errors Fetch 8 NOT_LEADER_FOR_PARTITION");
    wait_consumed("f", 6 * step, "through Fetch errors");
    FAULT("errors OffsetCommit 4 REQUEST_TIMED_OUT");
    wait_consumed("f", 7 * step, "through OffsetCommit errors");
    FAULT("leader in.f 0 2");
    FAULT("leader out.f 1 3");
    wait_consumed("f", 8 * step, "after the leaders moved");
    FAULT("broker down 2");
    /* The outage's length is the fault itself (what a broker restart
     * lasts), not a wait for something to happen: pacing. */
    usleep(OUTAGE_MS * 1000);
    FAULT("broker up 2");
    wait_consumed("f", 10 * step, "after the broker came back");
    /* A second instance joins while joins and syncs fail a few times. */
    FAULT("errors JoinGroup 3 COORDINATOR_NOT_AVAILABLE");
    FAULT("errors SyncGroup 2 REBALANCE_IN_PROGRESS");
    daemon_start(&d2, "f", "f1", "job.idle.ms=15000", NULL);
    SW_ASSERT(sw_test_daemon_wait_assigned(&d2, 1, JOIN_WAIT_MS), "joining under errors failed");
    wait_consumed("f", 12 * step, "two instances");
    SW_ASSERT(stop(&d2) == 0, "the second instance did not exit 0");
#undef FAULT
    SW_ASSERT(sw_proc_wait(prod, 180000) == 0, "telemetry could not be produced");
    int64_t t0 = sw_proc_now_ms();
    int failed = check_output(&s, "f", "broker and request faults during storms");
    SW_ASSERT(sw_test_daemon_running(&d), "the daemon died during the faults (log %s)", d.log);
    SW_ASSERT(stop(&d) == 0, "the daemon did not exit 0 after the faults");
    printf("  faults injected: %d; output complete %.1f s after the last telemetry\n", faults,
           (double)(sw_proc_now_ms() - t0) / 1000.0);
    free_stream(&s);
    return failed;
}

static int test_exactly_once(void)
{
    stream_t s;
    if (make_stream(&s, "ej", 4, 8, 300, 2, 24)) return 1;
    sw_test_daemon_t d;
    daemon_start(&d, "e", "e0", "processing.guarantee=exactly_once", NULL);
    SW_ASSERT(sw_test_daemon_wait_assigned(&d, 4, JOIN_WAIT_MS), "daemon did not join");
    if (produce(&s, "e", 0, s.l.n, 0)) return 1;
    int failed = check_output(&s, "e", "exactly_once transactions on the mock cluster");
    SW_ASSERT(stop(&d) == 0, "exactly_once daemon did not exit 0");
    /* A fenced producer must stop the daemon, loudly. */
    daemon_start(&d, "e", "e1", "processing.guarantee=exactly_once", NULL);
    SW_ASSERT(sw_test_daemon_wait_assigned(&d, 4, JOIN_WAIT_MS), "restart did not join");
    SW_ASSERT(mock_cmd("errors EndTxn 1 PRODUCER_FENCED"), "mock refused the fault");
    if (produce(&s, "e", 0, 200, 0)) return 1;
    int rc = sw_test_daemon_wait_exit(&d, 60000);
    SW_ASSERT(rc == 1, "a fenced exactly_once daemon exited %d, expected 1", rc);
    SW_ASSERT(sw_test_daemon_count(&d, "exactly_once: commit_transaction failed") == 1,
              "no clear message about the failed transaction in %s", d.log);
    printf("  fenced producer: exit 1 with a clear message: ok\n");
    free_stream(&s);
    return failed;
}

/* ---- bounded stop --------------------------------------------------------- */

/* Stop a daemon with the brokers gone: within shutdown.timeout.ms whatever
 * is left to commit (exit 1), and at once on a second signal (exit 130);
 * then, brokers back, a restart completes the output exactly once. */
static int test_bounded_stop(void)
{
    stream_t s;
    if (make_stream(&s, "sj", 4, 16, 400, 3, 31)) return 1;
    /* No periodic snapshot: the stop has state to snapshot and commit. */
    sw_test_daemon_t d;
    daemon_start_xs(&d, "s", "s0",
                    (const char *const[]){"shutdown.timeout.ms=3000",
                                          "snapshot.interval.ms=3600000",
                                          "metrics.listen=127.0.0.1:0", NULL});
    SW_ASSERT(sw_test_daemon_wait_assigned(&d, 4, JOIN_WAIT_MS), "s0 did not take 4 partitions");
    if (produce(&s, "s", 0, s.l.n / 3, 0)) return 1;
    wait_events_in(&d, s.l.n / 3, "s0 takes in the first third");
    SW_ASSERT(mock_cmd("broker down -1"), "mock refused broker down");
    /* The stop starts once the daemon has seen the brokers go (its clients
     * log librdkafka's all-brokers-down error, sw_kafka.c). */
    wait_log(&d, "_ALL_BROKERS_DOWN", 1, "s0 sees the brokers down");
    int64_t t0 = sw_proc_now_ms();
    int rc = sw_test_daemon_stop(&d, 60000);
    int64_t took = sw_proc_now_ms() - t0;
    printf("  brokers down, SIGTERM, shutdown.timeout.ms=3000: exit %d after %lld ms\n", rc,
           (long long)took);
    SW_ASSERT(rc == 1 && took < 8000, "the stop with the brokers gone exited %d after %lld ms", rc,
              (long long)took);
    SW_ASSERT(sw_test_daemon_count(&d, "the stop took shutdown.timeout.ms") == 1,
              "no message about the stop deadline in %s", d.log);
    SW_ASSERT(mock_cmd("broker up -1"), "mock refused broker up");

    /* A second signal: at once. */
    daemon_start(&d, "s", "s1", "snapshot.interval.ms=3600000",
                 "metrics.listen=127.0.0.1:0"); /* shutdown.timeout.ms: 30 s */
    SW_ASSERT(sw_test_daemon_wait_assigned(&d, 4, JOIN_WAIT_MS), "s1 did not take 4 partitions");
    if (produce(&s, "s", s.l.n / 3, 2 * s.l.n / 3, 0)) return 1;
    /* s1 reads from what s0 committed (its stop could not commit) to the
     * end of the second third. */
    int64_t from = sw_kc_committed(g_boot, "g.s", "in.s", 4);
    wait_events_in(&d, (double)(2 * s.l.n / 3 - (from > 0 ? from : 0)),
                   "s1 takes in the second third");
    SW_ASSERT(mock_cmd("broker down -1"), "mock refused broker down");
    wait_log(&d, "_ALL_BROKERS_DOWN", 1, "s1 sees the brokers down");
    t0 = sw_proc_now_ms();
    kill(d.pid, SIGTERM);
    /* The second signal once the first one's stop runs (sw_run.c logs
     * "stopping: ..." as it begins), and 500 ms after the first: pacing, a
     * signal within 300 ms of the first is the same request (main.c,
     * SAME_STOP_MS: timeout(1) signals the process, then its group). */
    wait_log(&d, "stopping: flushing records", 1, "s1 begins its stop");
    while (sw_proc_now_ms() - t0 < 500) usleep(10000);
    rc = sw_test_daemon_stop(&d, 60000); /* the second SIGTERM */
    took = sw_proc_now_ms() - t0;
    printf(
        "  brokers down, SIGTERM, then SIGTERM once stopping (>= 500 ms): exit %d after %lld ms\n",
        rc, (long long)took);
    SW_ASSERT(rc == 130 && took < 3000, "a second signal exited %d after %lld ms", rc,
              (long long)took);
    SW_ASSERT(sw_test_daemon_count(&d, "second stop signal: stopping now") == 1,
              "no message about the second signal in %s", d.log);
    SW_ASSERT(mock_cmd("broker up -1"), "mock refused broker up");

    /* Brokers back: the restart finishes the work, nothing lost or repeated. */
    daemon_start(&d, "s", "s2", NULL, NULL);
    SW_ASSERT(sw_test_daemon_wait_assigned(&d, 1, JOIN_WAIT_MS), "s2 was never assigned");
    if (produce(&s, "s", 2 * s.l.n / 3, s.l.n, 0)) return 1;
    int failed = check_output(&s, "s", "stops with the brokers gone, then a restart");
    SW_ASSERT(stop(&d) == 0, "s2 did not exit 0 after SIGTERM");
    SW_ASSERT(sw_test_daemon_count(&d, "stopped in ") == 1, "no 'stopped in' line");
    free_stream(&s);
    return failed;
}

/* Readiness sees the output (issue 28): every partition of out.o without a
 * leader while the input is consumed; /readyz must say "output stalled"
 * (503) within 10 s of the telemetry, with the oldest-undelivered gauge
 * over 5 s, and 200 again once the leaders are back; the output then
 * equals an uninterrupted run. */
static int test_readyz_output(void)
{
    stream_t s;
    if (make_stream(&s, "oj", 2, 8, 300, 2, 31)) return 1;
    sw_test_daemon_t d;
    daemon_start(&d, "o", "o0", "metrics.listen=127.0.0.1:0", NULL);
    int port = sw_test_daemon_metrics_port(&d, 30000);
    SW_ASSERT(port > 0, "no metrics port (log %s)", d.log);
    SW_ASSERT(sw_test_daemon_wait_ready(&d, port, JOIN_WAIT_MS), "never ready (log %s)", d.log);
    for (int p = 0; p < 4; p++)
        SW_ASSERT(mock_cmd("leader out.o %d -1", p), "mock refused the leader change");
    SW_ASSERT(produce(&s, "o", 0, s.l.n, 0) == 0, "telemetry could not be produced");
    int64_t t0 = sw_proc_now_ms(), t503 = -1;
    sw_buf_t body;
    sw_buf_init(&body);
    int failed = 0;
    while (sw_proc_now_ms() - t0 < 20000) {
        int st = sw_test_http_get(port, "/readyz", &body);
        if (st == 503 && body.data && strstr(body.data, "output stalled")) {
            t503 = sw_proc_now_ms() - t0;
            break;
        }
        usleep(250000); /* the poll interval */
    }
    double gauge = -1;
    if (sw_test_http_get(port, "/metrics", &body) == 200 && body.data) {
        static const char name[] = "\nstormwatch_output_oldest_undelivered_age_seconds ";
        const char *g = strstr(body.data, name);
        if (g) gauge = strtod(g + sizeof(name) - 1, NULL);
    }
    printf(
        "  output leaders down: /readyz 503 (output stalled) after %lld ms; oldest "
        "undelivered record %.1f s old\n",
        (long long)t503, gauge);
    if (t503 < 0 || t503 > 10000) {
        fprintf(stderr, "FAIL readyz: not 503 \"output stalled\" within 10 s (log %s)\n", d.log);
        failed = 1;
    }
    if (gauge < 4.0) { /* published once a second */
        fprintf(stderr, "FAIL readyz: oldest undelivered gauge %.1f, expected >= 4\n", gauge);
        failed = 1;
    }
    for (int p = 0; p < 4; p++)
        SW_ASSERT(mock_cmd("leader out.o %d 1", p), "mock refused the leader change");
    int64_t t1 = sw_proc_now_ms();
    bool ready = sw_test_daemon_wait_ready(&d, port, 60000);
    printf("  leaders back: /readyz 200 after %lld ms\n", (long long)(sw_proc_now_ms() - t1));
    if (!ready) {
        fprintf(stderr, "FAIL readyz: not ready again within 60 s of the leaders' return\n");
        failed = 1;
    }
    sw_buf_clear(&body);
    failed |= check_output(&s, "o", "output leaders down, then back");
    SW_ASSERT(stop(&d) == 0, "the daemon did not exit 0");
    free_stream(&s);
    return failed;
}

/* One case per scenario: it reports each difference, then fails once. */
#define SCENARIO(name, call)                                             \
    static void scenario_##name(void **state)                            \
    {                                                                    \
        (void)state;                                                     \
        SW_ASSERT((call) == 0, "scenario %s failed (see above)", #name); \
    }
SCENARIO(kill9, test_kill9())
SCENARIO(crash, test_crash_kill9())
SCENARIO(rebalance, test_rebalance())
SCENARIO(faults, test_broker_faults())
SCENARIO(eos, test_exactly_once())
SCENARIO(stop, test_bounded_stop())
SCENARIO(readyz, test_readyz_output())
#undef SCENARIO

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scenario_kill9),     cmocka_unit_test(scenario_crash),
        cmocka_unit_test(scenario_rebalance), cmocka_unit_test(scenario_faults),
        cmocka_unit_test(scenario_eos),       cmocka_unit_test(scenario_stop),
        cmocka_unit_test(scenario_readyz),
    };
    return faults_main(tests, sizeof(tests) / sizeof(tests[0]));
}
