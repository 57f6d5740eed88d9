/*
 * Switching repartition modes and rolling updates, with `stormwatch run` as
 * processes on the mock cluster, job-keyed live input:
 *  - on -> auto (switch), auto -> on (rollback), auto -> on -> auto
 *    (backforth) after SIGTERM with storms open: every job's records equal
 *    to the replay of its events, none sent twice, engines going on from
 *    the group's snapshots;
 *  - a mixed group (mixedmode): an instance of auto joins one of on,
 *    follows it, switches to auto by itself when on stops; a third starts
 *    as auto at once;
 *  - Kubernetes-style rolling updates against older releases' binaries
 *    (tests/e2e/old_binary.sh builds and caches them): v0.3.0 -> this
 *    build and its rollback, c765a81 -> this build (asserted clean), the
 *    rollback to c765a81 (measured, printed).
 */
#include "keying_env.h"

/* Records on out.SC sent more than once (the same bytes twice). */
static size_t resent(const char *sc, size_t *total)
{
    char otopic[100];
    snprintf(otopic, sizeof(otopic), "out.%s", sc);
    sw_kmsg_t *o;
    size_t no = sw_kc_read_all(g_boot, otopic, NPARTS, 30000, &o), dup = 0;
    for (size_t i = 0; i < no; i++)
        for (size_t k = 0; k < i; k++)
            if (o[k].len == o[i].len && !memcmp(o[k].value, o[i].value, o[i].len)) {
                dup++;
                break;
            }
    sw_kmsg_free(o, no);
    *total = no;
    return dup;
}

/* An upgrade from repartition=on to auto (issue 35), or the rollback
 * from auto to on: job-keyed input, live; one instance of the first mode
 * takes the first half and is stopped (SIGTERM) with storms open, then
 * one instance of the other goes on from the group's snapshots: every
 * job's records equal to the replay of its events (job-keyed: the order
 * they were produced), none sent twice, no storm paged twice. */
static int scenario_switch(const char *sc, const input_t *in, const char *from, const char *to,
                           const char *then)
{
    char **lines = calloc(in->n + 1, sizeof(*lines));
    size_t *lens = calloc(in->n + 1, sizeof(*lens));
    for (size_t i = 0; i < in->n; i++) lines[i] = in->m[i].line, lens[i] = in->m[i].len;
    /* The switch where half the jobs have paged: the earliest prefix of the
     * input whose replay holds NJOBS / 2 triggers (bisection). */
    size_t lo = 0, hi = in->n, want = 0;
    while (hi - lo > 192) {
        size_t mid = lo + (hi - lo) / 2;
        json_t *by = sw_kt_replay_by_job(lines, lens, (int)mid);
        int triggers = 0;
        const char *job;
        json_t *g;
        json_object_foreach(by, job, g)
        {
            for (size_t k = 0; k < json_array_size(g); k++)
                triggers += !strcmp(
                    json_string_value(json_object_get(json_array_get(g, k), "action")), "trigger");
        }
        if (triggers >= NJOBS / 2) hi = mid, want = sw_kt_count(by);
        else lo = mid;
        json_decref(by);
    }
    /* Jobs stay alive across the switch (the restart takes seconds). */
    static const char *const idle[] = {"job.idle.ms=15000", NULL};
    g_extra = idle;
    sw_test_daemon_t a, b;
    start_daemon(&a, NULL, from, sc, from);
    SW_ASSERT(sw_test_daemon_wait_assigned(&a, 1, 120000), "not assigned (see %s)", a.log);
    int failed = produce_all(sc, in, KEY_JOB, 100000, 0, hi);
    /* Until the `on` engines have analysed that prefix: its records out. */
    char otopic[100];
    snprintf(otopic, sizeof(otopic), "out.%s", sc);
    sw_kmsg_t *o;
    size_t before = sw_kc_read(g_boot, otopic, NPARTS, want, 0, 30000, &o);
    sw_kmsg_free(o, before);
    if (stop(&a) != 0) {
        fprintf(stderr, "FAIL [%s]: the repartition=%s instance did not stop cleanly\n", sc, from);
        failed = 1;
    }
    start_daemon(&b, NULL, to, sc, to);
    SW_ASSERT(sw_test_daemon_wait_assigned(&b, 1, 120000), "not assigned (see %s)", b.log);
    /* With @p then: half of the rest, then a third instance in that mode. */
    size_t mid = then ? hi + (in->n - hi) / 2 : in->n;
    failed |= produce_all(sc, in, KEY_JOB, 100000, hi, mid);
    sw_test_daemon_t c;
    int c_engines = 0, c_unused = 0;
    if (then) {
        if (stop(&b) != 0) {
            fprintf(stderr, "FAIL [%s]: the repartition=%s instance did not stop cleanly\n", sc,
                    to);
            failed = 1;
        }
        start_daemon(&c, NULL, then, sc, then);
        SW_ASSERT(sw_test_daemon_wait_assigned(&c, 1, 120000), "not assigned (see %s)", c.log);
        failed |= produce_all(sc, in, KEY_JOB, 100000, mid, in->n);
    }
    g_extra = NULL;
    printf("  (switched at input message %zu of %zu, %zu of %zu records out before)\n", hi, in->n,
           before, want);
    char srcs[220];
    snprintf(srcs, sizeof(srcs), "in.%s,g%s.repartition", sc, sc);
    bool back = !strcmp(to, "on"); /* a rollback: auto's engines go on under on */
    failed |= judge(sc, in, lines, lens, in->n, srcs, true, false,
                    "equal to the replay of the input");
    size_t total, dup = resent(sc, &total);
    int engines = sw_test_daemon_count(&b, back ? "last read by repartition=auto: its engine"
                                                : "restored the repartition=on engine");
    printf("  (repartition=%s, then %s after SIGTERM: %zu records, %zu sent twice; %d %s)\n", from,
           to, total, dup, engines,
           back ? "engines of `auto` went on under `on`" : "engines of `on` went on under `auto`");
    if (back && engines < 1) {
        fprintf(stderr, "FAIL [%s]: no engine of auto went on under on\n", sc);
        failed = 1;
    }
    if (then) {
        c_engines = sw_test_daemon_count(&c, "restored the repartition=on engine");
        c_unused = sw_test_daemon_count(&c, "cannot be used");
        printf("  (then %s at input message %zu: %d engines of `on` went on, %d could not)\n", then,
               mid, c_engines, c_unused);
        if (c_engines < 1 || c_unused) {
            fprintf(stderr, "FAIL [%s]: %d engines went on under %s, %d could not (see %s)\n", sc,
                    c_engines, then, c_unused, c.log);
            failed = 1;
        }
    }
    if (dup) {
        fprintf(stderr, "FAIL [%s]: %zu records sent twice across the switch\n", sc, dup);
        failed = 1;
    }
    if (stop(then ? &c : &b) != 0) failed = 1;
    free(lines);
    free(lens);
    return failed;
}

/* Dead letters on dlq.SC. */
static size_t dead_letters(const char *sc)
{
    char topic[100];
    snprintf(topic, sizeof(topic), "dlq.%s", sc);
    sw_kmsg_t *o;
    size_t n = sw_kc_read_all(g_boot, topic, NPARTS, 30000, &o);
    sw_kmsg_free(o, n);
    return n;
}

/* A mixed group (issue 35 point 1): an instance of `on` runs, one of
 * `auto` joins it (a rolling update whose new pods run auto beside an old
 * one); the new one reads the group's announcements, runs as on beside
 * it (no marker written, nothing analysed twice), and when the `on`
 * instance is stopped (SIGTERM) it switches to auto by itself (a graceful
 * stop and a start as auto from the snapshots); then a third instance of
 * `auto` joins and starts as auto at once. Job-keyed, live input: every
 * job's records equal the replay of its events, none sent twice, no dead
 * letter. */
static int scenario_mixedmode(const char *sc, const input_t *in)
{
    char **lines = calloc(in->n + 1, sizeof(*lines));
    size_t *lens = calloc(in->n + 1, sizeof(*lens));
    for (size_t i = 0; i < in->n; i++) lines[i] = in->m[i].line, lens[i] = in->m[i].len;
    size_t third = in->n / 3;
    static const char *const idle[] = {"job.idle.ms=30000", NULL};
    g_extra = idle; /* jobs stay alive across the switches */
    sw_test_daemon_t a, b, c;
    start_daemon(&a, NULL, "on", sc, "on");
    SW_ASSERT(sw_test_daemon_wait_assigned(&a, 1, 120000), "not assigned (see %s)", a.log);
    start_daemon(&b, NULL, "auto", sc, "auto");
    int failed = 0;
    bool followed = sw_test_daemon_wait_log(&b, "runs as repartition=on", 1, 60000);
    SW_ASSERT(sw_test_daemon_wait_assigned(&b, 1, 120000), "not assigned (see %s)", b.log);
    failed |= produce_all(sc, in, KEY_JOB, 100000, 0, third);
    if (stop(&a) != 0) {
        fprintf(stderr, "FAIL [%s]: the repartition=on instance did not stop cleanly\n", sc);
        failed = 1;
    }
    int64_t t0 = sw_clock_ms();
    failed |= produce_all(sc, in, KEY_JOB, 100000, third, 2 * third);
    bool switched = sw_test_daemon_wait_log(&b, "starting again as repartition=auto", 1, 90000);
    int64_t switch_ms = sw_clock_ms() - t0;
    start_daemon(&c, NULL, "auto2", sc, "auto");
    g_extra = NULL;
    bool c_auto = sw_test_daemon_wait_assigned(&c, 1, 120000);
    failed |= produce_all(sc, in, KEY_JOB, 100000, 2 * third, in->n);
    char srcs[220];
    snprintf(srcs, sizeof(srcs), "in.%s,g%s.repartition", sc, sc);
    failed |= judge(sc, in, lines, lens, in->n, srcs, true, false,
                    "equal to the replay of the input");
    size_t total, dup = resent(sc, &total), dl = dead_letters(sc);
    int c_followed = sw_test_daemon_count(&c, "runs as repartition=on");
    printf(
        "  (on + auto: auto followed on: %s; on stopped, auto switched by itself: %s after "
        "%.1f s; a third member started as %s; %zu records, %zu sent twice, %zu dead "
        "letters)\n",
        followed ? "yes" : "NO", switched ? "yes" : "NO", (double)switch_ms / 1000.0,
        c_followed ? "on" : "auto", total, dup, dl);
    if (!followed || !switched || !c_auto || c_followed || dup || dl) {
        fprintf(stderr,
                "FAIL [%s]: followed %d, switched %d, third assigned %d (followed on %d), %zu "
                "records sent twice, %zu dead letters\n",
                sc, followed, switched, c_auto, c_followed, dup, dl);
        failed = 1;
    }
    if (stop(&b) != 0) failed = 1;
    if (stop(&c) != 0) failed = 1;
    free(lines);
    free(lens);
    return failed;
}

/* ---- rolling updates against older releases' binaries ------------------------ */

/* What the rolling updates compare (issue 35's table), over every job. */
typedef struct roll_row_s {
    size_t lost, dup, diff, extra, paged_twice, storms, dead, records;
} roll_row_t;

/* Each job's records on out.SC against the replay of its events in the
 * order they were produced (job-keyed: one partition per job), summaries
 * aside: a record sent again as it was (duplicated), one the replay has
 * whose action and episode came out otherwise (different), not at all
 * (lost), or one the replay does not have (extra); a storm paged twice is
 * a trigger more than the replay's for its job. */
static void roll_judge(const char *sc, const input_t *in, roll_row_t *row)
{
    memset(row, 0, sizeof(*row));
    char **lines = calloc(in->n + 1, sizeof(*lines));
    size_t *lens = calloc(in->n + 1, sizeof(*lens));
    for (size_t i = 0; i < in->n; i++) lines[i] = in->m[i].line, lens[i] = in->m[i].len;
    json_t *want = sw_kt_replay_by_job(lines, lens, (int)in->n);
    size_t nwant = sw_kt_count(want) + NJOBS;
    char otopic[100], srcs[220];
    snprintf(otopic, sizeof(otopic), "out.%s", sc);
    snprintf(srcs, sizeof(srcs), "in.%s,g%s.repartition", sc, sc);
    sw_kmsg_t *o;
    size_t no = sw_kc_read(g_boot, otopic, NPARTS, nwant, 4000, 90000, &o);
    json_t *got = sw_kt_group_by_job(o, no, srcs, 0, NPARTS, false);
    sw_kt_drop_summaries(got);
    for (int j = 0; j < NJOBS; j++) {
        char job[32];
        snprintf(job, sizeof(job), "kjob-%d", j);
        json_t *g = json_object_get(got, job), *w = json_object_get(want, job);
        size_t ng = g ? json_array_size(g) : 0, nw = w ? json_array_size(w) : 0;
        char *used = calloc(ng + 1, 1), *gone = calloc(ng + 1, 1), why[256];
        size_t gtrig = 0, wtrig = 0;
        for (size_t k = 0; k < ng; k++) {
            json_t *a = json_array_get(g, k);
            gtrig += !strcmp(json_string_value(json_object_get(a, "action")), "trigger");
            for (size_t e = 0; e < k && !gone[k]; e++)
                if (!gone[e] && sw_test_json_equal(a, json_array_get(g, e), false, why, 8))
                    gone[k] = 1, row->dup++;
        }
        row->records += ng;
        for (size_t k = 0; k < nw; k++) {
            json_t *b = json_array_get(w, k);
            const char *act = json_string_value(json_object_get(b, "action"));
            wtrig += !strcmp(act, "trigger");
            size_t hit = ng;
            for (size_t e = 0; e < ng && hit == ng; e++)
                if (!gone[e] && !used[e] &&
                    sw_test_json_equal(json_array_get(g, e), b, true, why, sizeof(why)))
                    hit = e;
            for (size_t e = 0; e < ng && hit == ng; e++) {
                json_t *a = json_array_get(g, e);
                if (!gone[e] && !used[e] &&
                    !strcmp(json_string_value(json_object_get(a, "action")), act) &&
                    json_integer_value(json_object_get(a, "episode")) ==
                        json_integer_value(json_object_get(b, "episode"))) {
                    hit = e;
                    row->diff++;
                }
            }
            if (hit == ng) row->lost++;
            else used[hit] = 1;
        }
        for (size_t e = 0; e < ng; e++) row->extra += !gone[e] && !used[e];
        row->storms += wtrig;
        if (gtrig > wtrig) row->paged_twice += gtrig - wtrig < wtrig ? gtrig - wtrig : wtrig;
        free(used);
        free(gone);
    }
    row->dead = dead_letters(sc);
    json_decref(got);
    json_decref(want);
    sw_kmsg_free(o, no);
    free(lines);
    free(lens);
}

/* Instance @p tag of a rolling update, binary @p bin at its defaults
 * (repartition too), with its metrics port for /readyz. */
static void start_roll(sw_test_daemon_t *d, const char *tag, const char *sc, const char *bin)
{
    static const char *const roll[] = {"job.idle.ms=15000", "metrics.listen=127.0.0.1:0", NULL};
    g_extra = roll;
    start_daemon(d, bin, tag, sc, NULL);
    g_extra = NULL;
}

/* Up: assigned partitions and /readyz 200 (what a Kubernetes readiness
 * probe waits for before the rollout stops an old pod). */
static bool roll_ready(sw_test_daemon_t *d)
{
    int port = sw_test_daemon_metrics_port(d, 60000);
    return sw_test_daemon_wait_assigned(d, 1, 120000) && port > 0 &&
           sw_test_daemon_wait_ready(d, port, 120000);
}

typedef struct roll_prod_s {
    const char *sc;
    const input_t *in;
    int failed;
} roll_prod_t;

/* The producers, at a live pace through the whole rollout. */
static void *roll_produce(void *arg)
{
    roll_prod_t *rp = arg;
    char topic[100];
    snprintf(topic, sizeof(topic), "in.%s", rp->sc);
    rd_kafka_t *rk = sw_kp_new(g_boot);
    for (size_t i = 0; i < rp->in->n; i++) {
        if (!send_one(rk, topic, &rp->in->m[i], i, KEY_JOB)) rp->failed = 1;
        if (i % 192 == 191) {
            sw_kp_flush(rk, 30000);
            usleep(300000);
        }
    }
    if (!sw_kp_flush(rk, 60000)) rp->failed = 1;
    sw_kp_destroy(rk);
    return NULL;
}

static input_t g_in3; /* 3 storms per job (the table) */

/* A Kubernetes-style RollingUpdate (maxSurge 1, maxUnavailable 0) of two
 * instances from binary @p from to binary @p to (NULL: this build), both
 * at their defaults, job-keyed live input produced throughout: start one
 * of @p to, wait until it holds partitions and /readyz is 200, SIGTERM
 * one of @p from, again. Each job's records against the replay; the row
 * is printed, and must be clean when @p assert_clean. */
static int scenario_rolling(const char *sc, const char *what, const char *from, const char *to,
                            bool assert_clean)
{
    if (g_in3.n == 0) {
        sw_gen_opts_t go;
        sw_gen_opts_default(&go);
        go.jobs = NJOBS;
        go.ranks = NRANKS;
        /* 3 jobs of one partition stay under the mock's 5 MiB: 165 samples;
         * 3 storms fit in them after 15% with a 100 ms spread */
        go.samples = 165;
        go.storms = 3;
        go.storm_at = 0.15;
        go.spread_ms = 100;
        go.seed = 7;
        go.storm_rank = SW_GEN_STORM_RANK_RANDOM;
        go.job_prefix = "kjob";
        if (make_input_opts(&g_in3, &go)) return 1;
    }
    if ((from && !*from) || (to && !*to)) {
        printf("%s: SKIP (no older binary: run it as test_keying_%s, which builds one)\n", sc, sc);
        return 0;
    }
    const input_t *in = &g_in3;
    int failed = 0;
    sw_test_daemon_t a[2], b[2];
    start_roll(&a[0], "from0", sc, from);
    start_roll(&a[1], "from1", sc, from);
    if (!roll_ready(&a[0]) || !roll_ready(&a[1])) {
        fprintf(stderr, "FAIL [%s]: the first instances are not up (see %s, %s)\n", sc, a[0].log,
                a[1].log);
        sw_test_daemon_kill(&a[0]);
        sw_test_daemon_kill(&a[1]);
        return 1;
    }
    roll_prod_t rp = {sc, in, 0};
    pthread_t th;
    SW_ASSERT(pthread_create(&th, NULL, roll_produce, &rp) == 0, "thread");
    usleep(3000000); /* storms open as the rollout starts */
    for (int k = 0; k < 2; k++) {
        char tag[16];
        snprintf(tag, sizeof(tag), "to%d", k);
        start_roll(&b[k], tag, sc, to);
        if (!roll_ready(&b[k])) {
            fprintf(stderr, "%s [%s]: %s is not up (see %s)\n", assert_clean ? "FAIL" : "NOTE", sc,
                    tag, b[k].log);
            if (assert_clean) failed = 1;
        }
        int st = stop(&a[k]);
        /* An older binary's own stop is not this release's: said, not failed
         * (c765a81 may crash there: librdkafka < 2.3.0's sticky assignor). */
        if (st != 0)
            fprintf(stderr, "%s [%s]: exit status %d after SIGTERM (see %s)\n",
                    from ? "NOTE (older binary)" : "FAIL", sc, st, a[k].log);
        if (st != 0 && !from) failed = 1;
    }
    pthread_join(th, NULL);
    failed |= rp.failed;
    roll_row_t row;
    roll_judge(sc, in, &row);
    printf("| %s | %zu | %zu | %zu | %zu | %zu/%zu | %zu |\n", what, row.lost, row.dup, row.diff,
           row.extra, row.paged_twice, row.storms, row.dead);
    printf(
        "  (%s: %zu records besides summaries; lost, duplicated, different, extra, storms "
        "paged twice, dead letters)\n",
        sc, row.records);
    /* Every snapshot restored by the binary that took its partition over
     * (an older one after a rollback reads this release's: issue 35). */
    int refused = 0, restored = 0;
    for (int k = 0; k < 2; k++) {
        refused += sw_test_daemon_count(&a[k], "cannot restore the state");
        refused += sw_test_daemon_count(&b[k], "cannot restore the state");
        restored += sw_test_daemon_count(&b[k], "state restored");
    }
    printf("  (%s: %d snapshots restored by the new instances, %d refused)\n", sc, restored,
           refused);
    if (assert_clean && (refused || !restored)) {
        fprintf(stderr, "FAIL [%s]: %d snapshots refused, %d restored (logs in %s)\n", sc, refused,
                restored, g_dir);
        failed = 1;
    }
    if (assert_clean &&
        (row.lost || row.dup || row.diff || row.extra || row.paged_twice || row.dead)) {
        fprintf(stderr, "FAIL [%s]: %s is not clean (logs in %s)\n", sc, what, g_dir);
        failed = 1;
    }
    for (int k = 0; k < 2; k++) {
        int st = stop(&b[k]);
        if (st != 0)
            fprintf(stderr, "%s [%s]: exit status %d after SIGTERM (see %s)\n",
                    to ? "NOTE (older binary)" : "FAIL", sc, st, b[k].log);
        if (st != 0 && !to) failed = 1;
    }
    return failed;
}

/* One case per scenario: it reports each difference, then fails once. */
#define SCENARIO(name, call)                                             \
    static void test_##name(void **state)                                \
    {                                                                    \
        (void)state;                                                     \
        SW_ASSERT((call) == 0, "scenario %s failed (see above)", #name); \
    }
SCENARIO(switch, scenario_switch("switch", &g_in, "on", "auto", NULL))
SCENARIO(rollback, scenario_switch("rollback", &g_in, "auto", "on", NULL))
SCENARIO(backforth, scenario_switch("backforth", &g_in, "auto", "on", "auto"))
SCENARIO(mixedmode, scenario_mixedmode("mixedmode", &g_in))
SCENARIO(upv030,
         scenario_rolling("upv030", "v0.3.0 -> this release, defaults", g_old_bin[0], NULL, true))
/* The rollback: v0.3.0 restores every snapshot this release writes (its
 * layout, the rest in an extension it does not read) and sends nothing
 * again. */
SCENARIO(rbv030, scenario_rolling("rbv030", "this release -> v0.3.0 (rollback), defaults", NULL,
                                  g_old_bin[0], true))
/* A new member follows c765a81's `on` while a c765a81 member holds input
 * partitions (none of them announced), idle or not, and switches to auto
 * only once they are all gone (docs/operating.md). */
SCENARIO(upc765a81, scenario_rolling("upc765a81", "c765a81 (on) -> this release, defaults",
                                     g_old_bin[1], NULL, true))
/* The rollback to c765a81 (an `on`-only release that reads SWE1 envelopes
 * only): measured, printed. */
SCENARIO(rbc765a81, scenario_rolling("rbc765a81", "this release -> c765a81 (rollback), defaults",
                                     NULL, g_old_bin[1], false))
#undef SCENARIO

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_switch),    cmocka_unit_test(test_mixedmode),
        cmocka_unit_test(test_rollback),  cmocka_unit_test(test_upv030),
        cmocka_unit_test(test_rbv030),    cmocka_unit_test(test_upc765a81),
        cmocka_unit_test(test_backforth), cmocka_unit_test(test_rbc765a81),
    };
    return keying_main(tests, sizeof(tests) / sizeof(tests[0]));
}
