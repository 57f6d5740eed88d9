/*
 * Right answers whatever the producers' keys (repartition=on, then auto),
 * with `stormwatch run` as processes on the mock cluster:
 *  - 12 jobs of 16 ranks with a storm each, produced to 8 partitions the
 *    way common shippers do: without a key (spread over the partitions),
 *    keyed by host, and a mix of job-keyed and unkeyed producers for the
 *    same jobs; two instances in one group;
 *  - once more with one instance killed (kill -9) twice while it forwards,
 *    and restarted; and with a second instance joining and the first
 *    leaving while it forwards (partitions of both stages move); and with
 *    processing.guarantee=exactly_once.
 * For every job: exactly one engine's records (one summary; its records in
 * one output partition), equal to an uninterrupted engine fed that job's
 * events in the order the repartition topic holds them; every input
 * message forwarded exactly once (none lost, none twice, also across the
 * kills); and how often the first trigger names the rank the storm
 * started on (the generator's truth) is reported.
 * With repartition=off the same no-key input gives wrong answers: that
 * run is measured too, to show what the default prevents.
 * repartition=auto (the default) again: job-keyed (nothing forwarded),
 * mixed keys with two instances, killed twice, and moving between
 * instances; each job's records equal an engine fed the order the
 * markers fix, rebuilt by the test from the two logs alone; and a new
 * group whose first member is killed while still undecided: the next one
 * detects the partitioner (the snapshot rule does not take the undecided
 * member's origin snapshots for a group from before the record).
 */
#include "keying_env.h"

static int cmp_kmsg(const void *a, const void *b)
{
    const sw_kmsg_t *x = a, *y = b;
    if (x->partition != y->partition) return x->partition < y->partition ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The scenario's repartition topic, read from its start while the
 * scenario runs (the mock drops a partition's oldest messages past ~5 MiB:
 * a read after the run could miss what the engines read). */
static sw_kc_tail_t *g_rep_tail;

/* A tail a failed scenario left running: stopped, its messages dropped. */
static void rep_tail_drop(void)
{
    if (!g_rep_tail) return;
    sw_kmsg_t *m;
    size_t n = sw_kc_tail_finish(g_rep_tail, 0, 0, 0, false, &m);
    sw_kmsg_free(m, n);
    g_rep_tail = NULL;
}

static void rep_tail_start(const char *sc)
{
    rep_tail_drop();
    char topic[100];
    snprintf(topic, sizeof(topic), "g%s.repartition", sc);
    g_rep_tail = sw_kc_tail_start(g_boot, topic, NPARTS);
}

/* The repartition topic as sw_kc_read() (or, @p to_end, sw_kc_read_all())
 * would read it, from the scenario's tail when there is one. */
static size_t rep_read(const char *topic, size_t want, int64_t grace_ms, int64_t timeout_ms,
                       bool to_end, sw_kmsg_t **out)
{
    if (g_rep_tail) {
        sw_kc_tail_t *t = g_rep_tail;
        g_rep_tail = NULL;
        return sw_kc_tail_finish(t, want, grace_ms, timeout_ms, to_end, out);
    }
    return to_end ? sw_kc_read_all(g_boot, topic, NPARTS, timeout_ms, out)
                  : sw_kc_read(g_boot, topic, NPARTS, want, grace_ms, timeout_ms, out);
}

/* Check a scenario's output against the repartition topic's order. */
static int check(const char *sc, const input_t *in, bool expect_exact, bool live)
{
    int failed = 0;
    char topic[100];
    snprintf(topic, sizeof(topic), "g%s.repartition", sc);
    sw_kmsg_t *r;
    size_t nr = rep_read(topic, in->n, 3000, 120000, false, &r);
    qsort(r, nr, sizeof(*r), cmp_kmsg);
    /* Every input message forwarded exactly once, keyed by its job, in its
     * job's partition. */
    char *seen = calloc(in->n * NPARTS + 1, 1);
    size_t twice = 0, wrong_place = 0, unknown = 0;
    char **lines = calloc(nr + 1, sizeof(*lines));
    size_t *lens = calloc(nr + 1, sizeof(*lens));
    for (size_t i = 0; i < nr; i++) {
        const char *sp = sw_kmsg_header(&r[i], "stormwatch.source.partition");
        const char *so = sw_kmsg_header(&r[i], "stormwatch.source.offset");
        long long p = sp ? atoll(sp) : -1, o = so ? atoll(so) : -1;
        if (p < 0 || p >= NPARTS || o < 0 || (size_t)o >= in->n) {
            unknown++;
            continue;
        }
        if (seen[(size_t)o * NPARTS + (size_t)p]++) twice++;
        if (!r[i].key || sw_partition_of(SW_PARTITIONER_MURMUR2, r[i].key, r[i].key_len, NPARTS) !=
                             r[i].partition)
            wrong_place++;
        lines[i] = r[i].value;
        lens[i] = r[i].len;
    }
    size_t distinct = nr - twice - unknown;
    if (distinct != in->n || twice || unknown || wrong_place) {
        fprintf(stderr,
                "FAIL [%s]: %zu of %zu input messages forwarded, %zu twice, %zu without their "
                "source, %zu in a partition that is not their job's\n",
                sc, distinct, in->n, twice, unknown, wrong_place);
        failed = 1;
    }
    /* What an uninterrupted engine gives for the events in that order. */
    failed |= judge(sc, in, lines, lens, nr, topic, expect_exact, live,
                    "equal to the replay of the repartition topic");
    sw_kmsg_free(r, nr);
    free(lines);
    free(lens);
    free(seen);
    return failed;
}

/* ---- repartition=auto ------------------------------------------------------ */

/* The order repartition=auto's engines had, rebuilt from the two logs
 * (sorted by partition and offset): per partition p, repartition p in
 * order, a copy where it stands, a marker releasing input p below its
 * offset, of which what is keyed by its job_id on its job's partition was
 * analysed (the rest was forwarded). @p fate per input message: 1 analysed
 * where it is, 2 copied (and counted). */
static void auto_order(const sw_kmsg_t *im, size_t ni, const sw_kmsg_t *rm, size_t nr, char **lines,
                       size_t *lens, char *fate, size_t *nl, size_t *kept, size_t *copies,
                       size_t *twice, size_t *stray)
{
    for (int q = 0; q < NPARTS; q++) {
        size_t ii = 0; /* the next input message of partition q to release */
        while (ii < ni && im[ii].partition < q) ii++;
        for (size_t i = 0; i < nr; i++) {
            if (rm[i].partition != q) continue;
            const char *mk = sw_kmsg_header(&rm[i], "stormwatch.marker");
            if (mk) {
                int64_t upto = atoll(mk);
                for (; ii < ni && im[ii].partition == q && im[ii].offset < upto; ii++) {
                    char job[64];
                    line_job(im[ii].value, im[ii].len, job, sizeof(job));
                    bool here = im[ii].key && !strcmp(im[ii].key, job) &&
                                sw_partition_of(SW_PARTITIONER_MURMUR2, job, strlen(job), NPARTS) ==
                                    q;
                    if (!here) continue;
                    fate[ii] = 1;
                    (*kept)++;
                    lines[*nl] = im[ii].value;
                    lens[(*nl)++] = im[ii].len;
                }
                continue;
            }
            const char *sp = sw_kmsg_header(&rm[i], "stormwatch.source.partition");
            const char *so = sw_kmsg_header(&rm[i], "stormwatch.source.offset");
            sw_kmsg_t key = {.partition = sp ? atoi(sp) : -1, .offset = so ? atoll(so) : -1};
            const sw_kmsg_t *hit = bsearch(&key, im, ni, sizeof(*im), cmp_kmsg);
            size_t at = hit ? (size_t)(hit - im) : ni;
            if (at == ni) {
                (*stray)++;
                continue;
            }
            if (fate[at]) (*twice)++;
            fate[at] = 2;
            (*copies)++;
            lines[*nl] = rm[i].value;
            lens[(*nl)++] = rm[i].len;
        }
    }
}

/* Check a repartition=auto scenario. The order each engine must have seen
 * is rebuilt from the logs alone, as docs/keying-auto.md states it: per
 * partition p, repartition p in order, a copy where it stands, a marker
 * releasing input p below its offset (what is keyed by its job_id on its
 * job's partition is analysed, the rest was forwarded). Every job's
 * records must equal an uninterrupted engine fed that order; every input
 * message analysed exactly once (kept here, or one copy elsewhere). */
static int check_auto(const char *sc, const input_t *in, bool live, bool expect_local)
{
    int failed = 0;
    char itopic[100], rtopic[100], srcs[220];
    snprintf(itopic, sizeof(itopic), "in.%s", sc);
    snprintf(rtopic, sizeof(rtopic), "g%s.repartition", sc);
    snprintf(srcs, sizeof(srcs), "%s,%s", itopic, rtopic);
    sw_kmsg_t *im, *rm;
    size_t ni = sw_kc_read(g_boot, itopic, NPARTS, in->n, 1000, 60000, &im);
    qsort(im, ni, sizeof(*im), cmp_kmsg);
    /* Until every input message is accounted for (analysed where it is, or
     * its copy in the repartition topic), or 90 s. */
    size_t nr = 0, nl = 0, kept = 0, copies = 0, twice = 0, lost = 0, stray = 0;
    rm = NULL;
    char **lines = calloc(ni + 1, sizeof(*lines));
    size_t *lens = calloc(ni + 1, sizeof(*lens));
    char *fate = calloc(ni + 1, 1); /* 1 analysed here, 2 copied */
    int64_t deadline = sw_proc_now_ms() + 90000;
    for (;;) {
        nr = rep_read(rtopic, 0, 0, 30000, true, &rm);
        qsort(rm, nr, sizeof(*rm), cmp_kmsg);
        lines = realloc(lines, (ni + nr + 1) * sizeof(*lines));
        lens = realloc(lens, (ni + nr + 1) * sizeof(*lens));
        memset(fate, 0, ni + 1);
        nl = kept = copies = twice = lost = stray = 0;
        auto_order(im, ni, rm, nr, lines, lens, fate, &nl, &kept, &copies, &twice, &stray);
        for (size_t i = 0; i < ni; i++) lost += !fate[i];
        if (!lost || sw_proc_now_ms() > deadline) break;
        sw_kmsg_free(rm, nr);
        usleep(500000);
    }
    if (ni != in->n || lost || twice || stray || (expect_local && copies)) {
        fprintf(stderr,
                "FAIL [%s]: %zu input messages read back of %zu; %zu analysed where they are, "
                "%zu copies (%zu twice, %zu of unknown source), %zu neither\n",
                sc, ni, in->n, kept, copies, twice, stray, lost);
        failed = 1;
    }
    failed |= judge(sc, in, lines, lens, nl, srcs, true, live,
                    "equal to the replay of the marker order");
    printf("  (%zu analysed where they are, %zu copies)\n", kept, copies);
    sw_kmsg_free(rm, nr);
    sw_kmsg_free(im, ni);
    free(lines);
    free(lens);
    free(fate);
    return failed;
}

/* The scenario's output checked as its mode has it (live: telemetry
 * produced at the ranks' rate). */
static int verify(const char *sc, const input_t *in, const char *mode, keying_t k, bool live)
{
    return strcmp(mode, "auto") == 0 ? check_auto(sc, in, live, k == KEY_JOB)
                                     : check(sc, in, true, live);
}

/* Two instances of repartition=@p mode, every message produced, then checked. */
static int scenario_two(const char *sc, const char *mode, keying_t k, const input_t *in)
{
    sw_test_daemon_t a, b;
    rep_tail_start(sc);
    start_daemon(&a, NULL, "a", sc, mode);
    start_daemon(&b, NULL, "b", sc, mode);
    bool joined = sw_test_daemon_wait_assigned(&a, 1, 120000) &&
                  sw_test_daemon_wait_assigned(&b, 1, 120000);
    if (!joined) {
        sw_test_daemon_kill(&a);
        sw_test_daemon_kill(&b);
        fprintf(stderr, "FAIL [%s]: the instances were not both assigned (see %s, %s)\n", sc, a.log,
                b.log);
        return 1;
    }
    /* At the rate the ranks sample (16 x 12 ranks at 10 Hz): live telemetry. */
    int failed = produce_all(sc, in, k, 100000, 0, in->n);
    failed |= verify(sc, in, mode, k, true);
    int ra = stop(&a), rb = stop(&b);
    if (ra != 0 || rb != 0) {
        fprintf(stderr, "FAIL [%s]: exit statuses %d and %d after SIGTERM\n", sc, ra, rb);
        failed = 1;
    }
    printf("  (repartition=%s, %s, two instances)\n", mode, k_keying[k]);
    return failed;
}

/* One instance of repartition=@p mode, mixed keys, killed twice while
 * it forwards (and, with auto, analyses). */
static int scenario_kill(const char *sc, const char *mode, const input_t *in)
{
    sw_test_daemon_t a;
    rep_tail_start(sc);
    start_daemon(&a, NULL, "a", sc, mode);
    SW_ASSERT(sw_test_daemon_wait_assigned(&a, 1, 120000), "not assigned (see %s)", a.log);
    size_t third = in->n / 3;
    int failed = produce_all(sc, in, KEY_MIXED, 30000, 0, third);
    sw_test_daemon_kill(
        &a); /* mid-forwarding: the input is produced faster than... at most seconds ago */
    sw_test_daemon_start(&a);
    failed |= produce_all(sc, in, KEY_MIXED, 30000, third, 2 * third);
    usleep(800000); /* the second kill point */
    sw_test_daemon_kill(&a);
    sw_test_daemon_start(&a);
    failed |= produce_all(sc, in, KEY_MIXED, 0, 2 * third, in->n);
    failed |= verify(sc, in, mode, KEY_MIXED, false);
    if (stop(&a) != 0) {
        fprintf(stderr, "FAIL [%s]: no clean exit after SIGTERM\n", sc);
        failed = 1;
    }
    printf(
        "  (repartition=%s, job-keyed and unkeyed mixed, one instance killed twice while "
        "forwarding: %d restores)\n",
        mode, sw_test_daemon_count(&a, "state restored"));
    return failed;
}

/* Live, keyed as @p k; a second instance joins a third of the way in and
 * the first leaves at two thirds: partitions of both stages (with auto:
 * input p and the repartition p that follows it) move twice while
 * messages are being forwarded. */
static int scenario_rebalance(const char *sc, const char *mode, keying_t k, const input_t *in)
{
    sw_test_daemon_t a, b;
    rep_tail_start(sc);
    start_daemon(&a, NULL, "a", sc, mode);
    SW_ASSERT(sw_test_daemon_wait_assigned(&a, 1, 120000), "not assigned (see %s)", a.log);
    size_t third = in->n / 3;
    int failed = produce_all(sc, in, k, 100000, 0, third);
    start_daemon(&b, NULL, "b", sc, mode);
    failed |= produce_all(sc, in, k, 100000, third, 2 * third);
    if (!sw_test_daemon_wait_assigned(&b, 1, 120000)) {
        fprintf(stderr, "FAIL [%s]: the second instance was never assigned (see %s)\n", sc, b.log);
        failed = 1;
    }
    if (stop(&a) != 0) {
        fprintf(stderr, "FAIL [%s]: the first instance did not stop cleanly\n", sc);
        failed = 1;
    }
    failed |= produce_all(sc, in, k, 100000, 2 * third, in->n);
    failed |= verify(sc, in, mode, k, false);
    if (stop(&b) != 0) failed = 1;
    int moved = sw_test_daemon_count(&a, "revoked") + sw_test_daemon_count(&b, "restored");
    printf(
        "  (repartition=%s, %s, a second instance joins and the first leaves while "
        "forwarding: %d revocations and restores)\n",
        mode, k_keying[k], moved);
    if (moved < 2) {
        fprintf(stderr, "FAIL [%s]: no partition moved (see %s, %s)\n", sc, a.log, b.log);
        failed = 1;
    }
    return failed;
}

/* processing.guarantee=exactly_once: the forwarded copies go out in the
 * same transactions as the input offsets, and the engines read the
 * repartition topic read_committed. Mixed keys, live, one instance. (The
 * mock cluster's transactions are not real: this runs the transactional
 * path, it cannot prove atomicity.) */
static int scenario_eos(const char *sc, const input_t *in)
{
    sw_test_daemon_t a;
    rep_tail_start(sc);
    static const char *const eos[] = {"processing.guarantee=exactly_once", NULL};
    g_extra = eos;
    start_daemon(&a, NULL, "a", sc, "on");
    g_extra = NULL;
    SW_ASSERT(sw_test_daemon_wait_assigned(&a, 1, 120000), "not assigned (see %s)", a.log);
    int failed = produce_all(sc, in, KEY_MIXED, 100000, 0, in->n);
    failed |= check(sc, in, true, true);
    if (stop(&a) != 0) {
        fprintf(stderr, "FAIL [%s]: no clean exit after SIGTERM (see %s)\n", sc, a.log);
        failed = 1;
    }
    printf("  (job-keyed and unkeyed mixed, processing.guarantee=exactly_once)\n");
    return failed;
}

/* repartition=off with unkeyed input: what the default prevents. */
static int scenario_off(const char *sc, const input_t *in)
{
    sw_test_daemon_t a;
    start_daemon(&a, NULL, "a", sc, "off");
    SW_ASSERT(sw_test_daemon_wait_assigned(&a, 1, 120000), "not assigned (see %s)", a.log);
    int failed = produce_all(sc, in, KEY_NONE, 0, 0, in->n);
    /* No repartition topic: wait for every job's summaries (several per
     * job: each partition's engine saw part of it), then count. */
    char otopic[100];
    snprintf(otopic, sizeof(otopic), "out.%s", sc);
    sw_kmsg_t *o;
    size_t no = sw_kc_read(g_boot, otopic, NPARTS, NJOBS * NPARTS, 5000, 60000, &o);
    size_t summaries = 0;
    for (size_t i = 0; i < no; i++) summaries += strstr(o[i].value, "\"summary\"") != NULL;
    sw_kmsg_free(o, no);
    bool warned = sw_test_daemon_count(&a, "is not its job_id") > 0;
    if (!warned || summaries <= NJOBS) {
        fprintf(stderr,
                "FAIL [%s]: repartition=off with unkeyed input: %zu summaries for %d jobs, "
                "warning %s\n",
                sc, summaries, NJOBS, warned ? "logged" : "missing");
        failed = 1;
    }
    printf(
        "%-30s repartition=off, no key: %zu summaries for %d jobs (jobs split over engines), "
        "mis-keyed input warned about\n",
        sc, summaries, NJOBS);
    if (stop(&a) != 0) failed = 1;
    return failed;
}

/* repartition=auto, a new group whose first member is killed while still
 * undecided (no input yet: it would decide after 30 s), its origin
 * snapshots committed and no record written. The member started next must
 * not take those snapshots for a group from before the record (v0.3.0's,
 * kept on murmur2 "so that no job moves") but detect the producers'
 * partitioner from their keys and record it: in CI a member decided
 * murmur2 by that rule and a later one the fnv1a that partition 0's next
 * owner detected, one group on two partitioners. */
static int scenario_pending(const char *sc, const input_t *in)
{
    sw_test_daemon_t a, b;
    rep_tail_start(sc);
    start_daemon(&a, NULL, "a", sc, "auto");
    if (!sw_test_daemon_wait_log(&a, "origin snapshots committed", 1, 120000)) {
        sw_test_daemon_kill(&a);
        fprintf(stderr, "FAIL [%s]: no origin snapshot committed (see %s)\n", sc, a.log);
        return 1;
    }
    int failed = 0;
    if (sw_test_daemon_count(&a, "recorded for group")) {
        fprintf(stderr, "FAIL [%s]: the first member decided without input (see %s)\n", sc, a.log);
        failed = 1;
    }
    sw_test_daemon_kill(&a); /* undecided: the group has snapshots and no record */
    start_daemon(&b, NULL, "b", sc, "auto");
    if (!sw_test_daemon_wait_assigned(&b, 1, 120000)) {
        sw_test_daemon_kill(&b);
        fprintf(stderr, "FAIL [%s]: the second member was never assigned (see %s)\n", sc, b.log);
        return 1;
    }
    failed |= produce_all(sc, in, KEY_JOB, 0, 0, in->n);
    bool detected = sw_test_daemon_wait_log(&b, "recorded for group", 1, 90000);
    int by_rule = sw_test_daemon_count(&b, "snapshots predate the record");
    if (!detected || by_rule) {
        fprintf(stderr, "FAIL [%s]: the member started after an undecided one %s (see %s)\n", sc,
                by_rule ? "took its origin snapshots for a group from before the record"
                        : "never detected and recorded the producers' partitioner",
                b.log);
        failed = 1;
    }
    failed |= verify(sc, in, "auto", KEY_JOB, false);
    if (stop(&b) != 0) {
        fprintf(stderr, "FAIL [%s]: no clean exit after SIGTERM (see %s)\n", sc, b.log);
        failed = 1;
    }
    printf(
        "  (repartition=auto, job-keyed, a new group's undecided first member killed: the "
        "next one detected the partitioner)\n");
    return failed;
}

/* One case per scenario: it reports each difference, then fails once. */
#define SCENARIO(name, call)                                             \
    static void test_##name(void **state)                                \
    {                                                                    \
        (void)state;                                                     \
        SW_ASSERT((call) == 0, "scenario %s failed (see above)", #name); \
    }
SCENARIO(nokey, scenario_two("nokey", "on", KEY_NONE, &g_in))
SCENARIO(hostkey, scenario_two("hostkey", "on", KEY_HOST, &g_in))
SCENARIO(mixed, scenario_two("mixed", "on", KEY_MIXED, &g_in))
SCENARIO(kill, scenario_kill("kill", "on", &g_in))
SCENARIO(moving, scenario_rebalance("moving", "on", KEY_NONE, &g_in))
SCENARIO(eos, scenario_eos("eos", &g_in))
SCENARIO(off, scenario_off("off", &g_in))
SCENARIO(akeyed, scenario_two("akeyed", "auto", KEY_JOB, &g_in))
SCENARIO(amixed, scenario_two("amixed", "auto", KEY_MIXED, &g_in))
SCENARIO(akill, scenario_kill("akill", "auto", &g_in))
SCENARIO(amoving, scenario_rebalance("amoving", "auto", KEY_MIXED, &g_in))
SCENARIO(apending, scenario_pending("apending", &g_in))
#undef SCENARIO

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nokey),   cmocka_unit_test(test_hostkey),
        cmocka_unit_test(test_mixed),   cmocka_unit_test(test_kill),
        cmocka_unit_test(test_moving),  cmocka_unit_test(test_eos),
        cmocka_unit_test(test_off),     cmocka_unit_test(test_akeyed),
        cmocka_unit_test(test_amixed),  cmocka_unit_test(test_akill),
        cmocka_unit_test(test_amoving), cmocka_unit_test(test_apending),
    };
    int rc = keying_main(tests, sizeof(tests) / sizeof(tests[0]));
    rep_tail_drop();
    return rc;
}
