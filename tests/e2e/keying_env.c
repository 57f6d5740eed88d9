/* The helpers of keying_env.h. */
#include "keying_env.h"

char g_dir[512];
char g_boot[1024];
sw_test_mock_t g_mock;
int g_baseline;             /* first causes right with job-keyed input */
const char *const *g_extra; /* more -X for the daemons (NULL-terminated), or NULL */

char *path_in(const char *name)
{
    static char buf[8][1024];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", g_dir, name);
    return buf[k];
}
const char *const k_keying[] = {"no key", "keyed by host", "job-keyed and unkeyed mixed",
                                "keyed by job"};

int make_input(input_t *in, uint64_t seed)
{
    sw_gen_opts_t go;
    sw_gen_opts_default(&go);
    go.jobs = NJOBS;
    go.ranks = NRANKS;
    go.samples = 150; /* 3 jobs of one partition stay under the mock's 5 MiB */
    go.seed = seed;
    go.storm_rank = SW_GEN_STORM_RANK_RANDOM;
    go.job_prefix = "kjob";
    return make_input_opts(in, &go);
}

int make_input_opts(input_t *in, const sw_gen_opts_t *gopts)
{
    sw_gen_opts_t go = *gopts;
    char err[256];
    sw_gen_t *gen = sw_gen_new(&go, err, sizeof(err));
    SW_ASSERT(gen, "%s", err);
    sw_tdec_t *dec = sw_tdec_new();
    sw_buf_t line;
    sw_buf_init(&line);
    size_t cap = 0;
    in->n = 0;
    in->m = NULL;
    while (sw_gen_next(gen, &line)) {
        sw_event_t ev;
        SW_ASSERT(sw_tdec_json(dec, line.data, line.len, &ev, err, sizeof(err)) == SW_OK, "%s",
                  err);
        if (in->n == cap) {
            cap = cap ? cap * 2 : 4096;
            in->m = realloc(in->m, cap * sizeof(*in->m));
        }
        msg_t *m = &in->m[in->n++];
        m->len = line.len && line.data[line.len - 1] == '\n' ? line.len - 1 : line.len;
        m->line = malloc(m->len + 1);
        memcpy(m->line, line.data, m->len);
        m->line[m->len] = '\0';
        snprintf(m->job, sizeof(m->job), "%.*s", (int)ev.job_id.len, ev.job_id.ptr);
        snprintf(m->host, sizeof(m->host), "%.*s", (int)ev.host.len, ev.host.ptr);
        m->rank = (int)ev.rank;
        line.len = 0;
    }
    const sw_gen_storm_t *st;
    size_t ns = sw_gen_truth(gen, &st);
    for (int j = 0; j < NJOBS; j++) in->truth[j] = -1;
    for (size_t i = 0; i < ns; i++)
        if (st[i].storm == 0 && st[i].job >= 0 && st[i].job < NJOBS)
            in->truth[st[i].job] = (int)st[i].rank;
    sw_buf_clear(&line);
    sw_tdec_destroy(dec);
    sw_gen_destroy(gen);
    return 0;
}

void free_input(input_t *in)
{
    for (size_t i = 0; i < in->n; i++) free(in->m[i].line);
    free(in->m);
}

/* Produce message i the way the scenario's producers would. */
bool send_one(rd_kafka_t *rk, const char *topic, const msg_t *m, size_t i, keying_t k)
{
    const char *key = NULL;
    size_t kl = 0;
    if (k == KEY_HOST) key = m->host, kl = strlen(m->host);
    if ((k == KEY_MIXED && m->rank % 2 == 0) || k == KEY_JOB) key = m->job, kl = strlen(m->job);
    /* Keyed messages where the Java client puts them; unkeyed ones spread
     * (round robin, as sticky and random partitioners do over time). */
    int32_t part = key ? sw_partition_of(SW_PARTITIONER_MURMUR2, key, kl, NPARTS)
                       : (int32_t)(i % NPARTS);
    return sw_kp_send(rk, topic, part, key, kl, m->line, m->len);
}

/* Instance @p tag of scenario @p sc (log run-SC-TAG.err), started: binary
 * @p bin (NULL: this build's; an older release's in a rolling update),
 * repartition=@p repartition (NULL: the binary's default), then g_extra. */
void start_daemon(sw_test_daemon_t *d, const char *bin, const char *tag, const char *sc,
                  const char *repartition)
{
    char name[200];
    snprintf(name, sizeof(name), "run-%s-%s", sc, tag);
    sw_test_daemon_init(d, "run", g_dir, name, g_boot);
    if (bin) d->argv[0] = (char *)bin;
    sw_test_daemon_x(d, "group.id=g%s", sc);
    sw_test_daemon_topics(d, sc);
    if (repartition) sw_test_daemon_x(d, "repartition=%s", repartition);
    static const char *const common[] = {"kafka.consumer.topic.metadata.refresh.interval.ms=1000",
                                         "commit.interval.ms=200", "snapshot.interval.ms=700",
                                         "job.idle.ms=3000", NULL};
    sw_test_daemon_xs(d, common);
    if (g_extra) sw_test_daemon_xs(d, g_extra);
    sw_test_daemon_start(d);
}

/* The job_id of a telemetry line ("" when null or missing). */
void line_job(const char *line, size_t len, char *job, size_t size)
{
    json_error_t e;
    json_t *v = json_loadb(line, len, 0, &e);
    const char *j = v ? json_string_value(json_object_get(v, "job_id")) : NULL;
    snprintf(job, size, "%s", j ? j : "");
    json_decref(v);
}

/* Each job's records on out.SC (from sources @p srcs, comma-separated)
 * against an uninterrupted engine fed the @p n events @p lines in that
 * order: one engine (one summary, one first episode), the same records,
 * and how often the first trigger names the storm's rank. A job that
 * differs leaves its events and records in the test's directory.
 * @returns 1 when @p expect_exact and a job differs, or when @p live and
 * fewer first causes are right than with job-keyed input. */
int judge(const char *sc, const input_t *in, char **lines, size_t *lens, size_t n, const char *srcs,
          bool expect_exact, bool live, const char *order)
{
    int failed = 0;
    json_t *want = sw_kt_replay_by_job(lines, lens, (int)n);
    size_t nwant = sw_kt_count(want) + NJOBS; /* and one summary per job */
    sw_kmsg_t *o;
    char otopic[100];
    snprintf(otopic, sizeof(otopic), "out.%s", sc);
    size_t no = sw_kc_read(g_boot, otopic, NPARTS, nwant, 4000, 90000, &o);
    json_t *got = sw_kt_group_by_job(o, no, srcs, 0, NPARTS, false);
    int right = 0, exact = 0, one_engine = 0;
    for (int j = 0; j < NJOBS; j++) {
        char job[32];
        snprintf(job, sizeof(job), "kjob-%d", j);
        json_t *g = json_object_get(got, job);
        size_t summaries = 0, episode1 = 0;
        int first_rank = -1;
        for (size_t k = 0; g && k < json_array_size(g); k++) {
            json_t *rec = json_array_get(g, k);
            const char *action = json_string_value(json_object_get(rec, "action"));
            if (action && !strcmp(action, "summary")) summaries++;
            if (action && !strcmp(action, "trigger")) {
                if (json_integer_value(json_object_get(rec, "episode")) == 1) episode1++;
                json_t *fc = json_array_get(json_object_get(rec, "first_cause_suspects"), 0);
                if (first_rank < 0 && fc)
                    first_rank = (int)json_integer_value(json_object_get(fc, "rank"));
            }
        }
        one_engine += summaries == 1 && episode1 <= 1;
        right += first_rank >= 0 && first_rank == in->truth[j];
        /* The same records as the replay, summaries aside. */
        json_t *only = json_object();
        json_object_set_new(only, job, g ? json_deep_copy(g) : json_array());
        sw_kt_drop_summaries(only);
        json_t *w = json_object_get(want, job);
        char why[512] = "";
        bool eq = sw_test_json_equal(json_object_get(only, job), w ? w : json_array(), true, why,
                                     sizeof(why));
        exact += eq;
        if (!eq) { /* for a look: the job's events in that order, and what came out */
            char fn[200];
            snprintf(fn, sizeof(fn), "%s-%s.events.jsonl", sc, job);
            FILE *f = fopen(path_in(fn), "w");
            for (size_t i = 0; f && i < n; i++) {
                char lj[64];
                if (!lines[i]) continue;
                line_job(lines[i], lens[i], lj, sizeof(lj));
                if (!strcmp(lj, job)) fprintf(f, "%.*s\n", (int)lens[i], lines[i]);
            }
            if (f) fclose(f);
            snprintf(fn, sizeof(fn), "%s-%s.records.json", sc, job);
            f = fopen(path_in(fn), "w");
            if (f) {
                json_dumpf(g ? g : json_array(), f, JSON_INDENT(1));
                fclose(f);
            }
        }
        if (expect_exact && (!eq || summaries != 1 || episode1 > 1)) {
            fprintf(stderr, "FAIL [%s] %s: %zu summaries, %zu first episodes; %s%s\n", sc, job,
                    summaries, episode1,
                    eq ? "records as the replay" : "records differ from the replay: ", why);
            failed = 1;
        }
        json_decref(only);
    }
    printf(
        "%-30s %2d/%d jobs by one engine, %2d/%d %s, first cause = the storm's rank in "
        "%2d/%d\n",
        sc, one_engine, NJOBS, exact, NJOBS, order, right, NJOBS);
    /* Live telemetry through the repartition topic must answer as well as
     * job-keyed input does (after a restart the backlog of several input
     * partitions is forwarded in bursts: reported only). A sanitizer build
     * forwards several times slower, which interleaves a job's ranks
     * differently: reported, not failed. */
    if (live && right < g_baseline) {
        bool slow = getenv("ASAN_OPTIONS") != NULL;
        fprintf(stderr, "%s [%s]: first cause right in %d of %d jobs, %d with job-keyed input\n",
                slow ? "NOTE (sanitizer build)" : "FAIL", sc, right, NJOBS, g_baseline);
        if (!slow) failed = 1;
    }
    json_decref(got);
    json_decref(want);
    sw_kmsg_free(o, no);
    return failed;
}

/* First-trigger ranks equal to the truth when each job's events arrive in
 * the order they were produced (job-keyed input, one partition per job). */
int baseline_right(const input_t *in)
{
    char **lines = calloc(in->n + 1, sizeof(*lines));
    size_t *lens = calloc(in->n + 1, sizeof(*lens));
    for (size_t i = 0; i < in->n; i++) lines[i] = in->m[i].line, lens[i] = in->m[i].len;
    json_t *by = sw_kt_replay_by_job(lines, lens, (int)in->n);
    int right = 0;
    for (int j = 0; j < NJOBS; j++) {
        char job[32];
        snprintf(job, sizeof(job), "kjob-%d", j);
        json_t *g = json_object_get(by, job);
        for (size_t k = 0; g && k < json_array_size(g); k++) {
            json_t *rec = json_array_get(g, k);
            if (strcmp(json_string_value(json_object_get(rec, "action")), "trigger")) continue;
            json_t *fc = json_array_get(json_object_get(rec, "first_cause_suspects"), 0);
            right += fc && json_integer_value(json_object_get(fc, "rank")) == in->truth[j];
            break;
        }
    }
    json_decref(by);
    free(lines);
    free(lens);
    return right;
}

int produce_all(const char *sc, const input_t *in, keying_t k, useconds_t pace_us, size_t from,
                size_t to)
{
    char topic[100];
    snprintf(topic, sizeof(topic), "in.%s", sc);
    rd_kafka_t *rk = sw_kp_new(g_boot);
    for (size_t i = from; i < to; i++) {
        SW_ASSERT(send_one(rk, topic, &in->m[i], i, k), "produce");
        if (pace_us && i % 192 == 191) {
            sw_kp_flush(rk, 30000);
            usleep(pace_us);
        }
    }
    SW_ASSERT(sw_kp_flush(rk, 60000), "flush");
    sw_kp_destroy(rk);
    (void)k_keying;
    return 0;
}

int stop(sw_test_daemon_t *d)
{
    return sw_test_daemon_stop(d, 60000);
}
char g_old_bin[2][1100]; /* the older releases' binaries (main) */

int start_mock(void)
{
    static const char *const sc[] = {"nokey",   "hostkey",   "mixed",     "kill",      "moving",
                                     "eos",     "off",       "akeyed",    "amixed",    "akill",
                                     "amoving", "switch",    "mixedmode", "rollback",  "upv030",
                                     "rbv030",  "upc765a81", "backforth", "rbc765a81", "apending"};
#define NSC (int)(sizeof(sc) / sizeof(sc[0]))
    static char topics[NSC * 5][100];
    const char *list[NSC * 5 + 1];
    int nt = 0;
    /* One scenario (SW_KEYING_ONLY, as ctest runs them): its topics only.
     * librdkafka 2.0.2's mock now and then never returned from creating
     * one of the 90 topics of every scenario (the mock's main thread waits
     * for its own thread): 5 topics start in well under a second. */
    const char *only = getenv("SW_KEYING_ONLY");
    for (int i = 0; i < NSC; i++) {
        if (only && strcmp(only, sc[i]) != 0) continue;
        const char *fmt[] = {"in.%s:8", "out.%s:8", "dlq.%s:8", "state.%s:1", "g%s.repartition:8"};
        for (int k = 0; k < 5; k++) {
            snprintf(topics[nt], sizeof(topics[nt]), fmt[k], sc[i]);
            list[nt] = topics[nt];
            nt++;
        }
    }
#undef NSC
    list[nt] = NULL;
    if (!sw_test_mock_start(&g_mock, g_dir, 0, false, list)) return 1;
    snprintf(g_boot, sizeof(g_boot), "%s", g_mock.boot);
    return 0;
}

input_t g_in;

/* The input, the mock cluster and the job-keyed baseline of every scenario. */
int keying_setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof(g_dir), "%s/keying", sw_test_tmp());
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", g_dir, g_dir);
    if (system(cmd) != 0) return -1;
    if (start_mock()) return -1;
    if (make_input(&g_in, 7)) return -1;
    g_baseline = baseline_right(&g_in);
    printf("%-30s first cause = the storm's rank in %2d/%d (each job's events in produced order)\n",
           "job-keyed (reference)", g_baseline, NJOBS);
    printf("test_keying: logs in %s\n", g_dir);
    return 0;
}

/* SW_KEYING_KEEP: the mock cluster is left running (to look at it). */
int keying_teardown(void **state)
{
    free_input(&g_in);
    if (getenv("SW_KEYING_KEEP")) {
        printf("mock cluster left running at %s (pid %d)\n", g_boot, (int)g_mock.pid);
        return 0;
    }
    return sw_test_kill_children(state);
}

/* The older release a rolling-update scenario runs (tests/e2e/old_binary.sh
 * builds it once and caches it): into g_old_bin[@p slot]. @returns 0, or
 * 77 (skip) when this clone does not hold it, 1 when it cannot be built. */
int old_binary(const char *rev, int slot)
{
    const char *script = getenv("SW_OLD_BINARY");
    if (!script) {
        fprintf(stderr, "SKIP: SW_OLD_BINARY (tests/e2e/old_binary.sh) not set\n");
        return 77;
    }
    char cmd[1400];
    snprintf(cmd, sizeof(cmd), "'%s' '%s'", script, rev);
    FILE *f = popen(cmd, "r");
    if (!f) return 1;
    char *line = fgets(g_old_bin[slot], sizeof(g_old_bin[slot]), f);
    int st = pclose(f);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    if (rc == 77) {
        fprintf(stderr, "SKIP: the release %s is not in this clone (see above)\n", rev);
        return 77;
    }
    if (rc != 0 || !line) {
        fprintf(stderr, "FAIL: the release %s could not be built (see above)\n", rev);
        return 1;
    }
    g_old_bin[slot][strcspn(g_old_bin[slot], "\n")] = '\0';
    return 0;
}

int keying_main(const struct CMUnitTest *tests, size_t n)
{
    /* The CI tier (SW_CI_ONLY: the rolling updates from older releases). */
    int gate = sw_test_ci_gate();
    if (gate) return gate;
    const char *only = getenv("SW_KEYING_ONLY");
    /* The rolling updates need an older release's binary: built (or found
     * in the cache) before the mock starts; 77 is ctest's SKIP. v0.3.0 by
     * its commit: a clone need not carry the tags (CI's did not). */
    if (only && (!strcmp(only, "upv030") || !strcmp(only, "rbv030") || !strcmp(only, "upc765a81") ||
                 !strcmp(only, "rbc765a81"))) {
        int rc = strstr(only, "c765a81")
                     ? old_binary("c765a81", 1)
                     : old_binary("a1751e416d2cfe6391461231edd6d10c6accd906", 0);
        if (rc) return rc;
    }
    char filter[64];
    if (only) {
        snprintf(filter, sizeof(filter), "test_%s", only);
        cmocka_set_test_filter(filter);
    }
    return _cmocka_run_group_tests("tests", tests, n, keying_setup, keying_teardown);
}
