/*
 * `stormwatch demo`: the whole pipeline in one process on the embedded
 * mock cluster. Synthetic telemetry with injected storms (as from
 * `stormwatch gen`) is produced to the input topic, the daemon (sw_run, in
 * a thread) filters it, and each record arriving on the output topic is
 * printed in a readable form beside the generator's ground truth. Exits by
 * itself: 0 when every storm was attributed to the rank where it was
 * injected, 1 otherwise.
 *
 * The embedded cluster keeps about 5 MiB per partition and deletes the
 * oldest beyond; a job keyed by its job_id sits in one partition, and one
 * demo job is about 6 MB. So the producer keys as docs/producing.md
 * recommends (job_id, murmur2: nothing is forwarded) and starts only once
 * the filter has its partitions, and it stays at most DEMO_AHEAD bytes
 * ahead of what the filter has consumed (its input bytes counter): nothing
 * is deleted before it is read, and every run prints the same leads.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_codec_record.h"
#include "sw_codec_telemetry.h"
#include "sw_conf.h"
#include "sw_gen.h"
#include "sw_gen_crash.h"
#include "sw_jdom.h"
#include "sw_kafka.h"
#include "sw_log.h"
#include "sw_run.h"
#include "sw_cli.h"
#include "sw_cmds.h"

#define T_IN "stormwatch.telemetry"
#define T_OUT "stormwatch.alerts"
#define T_DLQ "stormwatch.dlq"
#define DEMO_AHEAD (2u << 20) /* bytes produced and not yet consumed, at most */

typedef struct demo_s {
    sw_run_opts_t ro;
    sw_settings_t set;
    volatile sig_atomic_t run_flag;
    int rc;
} demo_t;

typedef struct job_seen_s {
    char id[64];
    int64_t truth_rank; /* rank the storm was injected on */
    int64_t named_rank; /* first suspect of the first trigger, -1 none */
    bool summary;
    /* The SPEC 8 job (a cascade): its truth and what the records said. */
    const sw_genx_truth_t *x;
    bool warned;        /* a warning named the filling rank 30 s before its death */
    int64_t crash_rank; /* first death of the last crash record, -1 none */
    bool crash_closed;  /* the crash's closing record (open false) arrived */
} job_seen_t;

/* A warning or crash record of the cascade job, checked against its truth. */
static const char *check_x8(job_seen_t *js, const sw_jnode_t *rec, sw_action_t action, char *buf,
                            size_t size)
{
    const sw_genx_truth_t *t = js->x;
    if (action == SW_ACTION_CRASH) {
        int64_t r = sw_jdom_int(sw_jdom_get(sw_jdom_get(rec, "first_death"), "rank"), -1);
        js->crash_rank = r;
        const sw_jnode_t *open = sw_jdom_get(rec, "open");
        if (open && open->type == SW_JN_BOOL && !open->b) {
            /* The close: its final answer and the deaths of the whole crash. */
            js->crash_closed = true;
            int64_t total = sw_jdom_int(sw_jdom_get(rec, "deaths_total"), -1);
            snprintf(buf, size,
                     r == t->deaths[0].rank && total == (int64_t)t->n_deaths
                         ? "  [final: rank %lld died first, %lld deaths: correct]"
                         : "  [final answer differs from the truth: rank %lld, %lld deaths]",
                     (long long)t->deaths[0].rank, (long long)t->n_deaths);
            return buf;
        }
        snprintf(buf, size,
                 r == t->deaths[0].rank ? "  [rank %lld died first: correct]"
                                        : "  [NOT the first death (rank %lld was)]",
                 (long long)(r == t->deaths[0].rank ? r : t->deaths[0].rank));
        return buf;
    }
    const sw_jnode_t *ranks = sw_jdom_get(rec, "ranks");
    for (size_t i = 0; ranks && i < ranks->n; i++) {
        if (sw_jdom_int(sw_jdom_get(&ranks->items[i], "rank"), -1) != t->warn_rank) continue;
        /* The record's event time on the true clock: its host's skew off. */
        int64_t ev = sw_jdom_int(sw_jdom_get(rec, "event_timestamp_ns"), 0);
        int64_t lead = INT64_MIN;
        for (size_t h = 0; h < t->n_hosts; h++) {
            int64_t l = t->deaths[0].true_ns - (ev - t->host_skew_ns[h]);
            if (lead == INT64_MIN || l < lead) lead = l; /* the least lead any host gives */
        }
        bool ok = lead >= 30 * INT64_C(1000000000);
        js->warned |= ok;
        snprintf(buf, size,
                 ok ? "  [rank %lld warned %.0f s before it died: correct]"
                    : "  [rank %lld warned only %.0f s before it died]",
                 (long long)t->warn_rank, (double)lead / 1e9);
        return buf;
    }
    return "";
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: stormwatch demo [--jobs J] [--ranks R] [--samples N] [--seed S]\n"
            "                       [--timeout-ms MS] [--verbose]\n"
            "\n"
            "Runs the whole pipeline on an embedded Kafka cluster: synthetic telemetry\n"
            "with one injected memory storm per job is produced to " T_IN
            ",\n"
            "the filter (stormwatch run) reads it, and every alert on " T_OUT
            " is\n"
            "printed as it arrives, beside where the storm was really injected. Exits 0\n"
            "when every storm was attributed to its true first rank.\n"
            "\n"
            "  --jobs J          training jobs (default 3)\n"
            "  --ranks R         ranks per job (default 16)\n"
            "  --samples N       samples per rank (default 400)\n"
            "  --seed S          generator seed (default 7)\n"
            "  --timeout-ms MS   give up after MS (default 120000)\n"
            "  --verbose         show the filter's own log\n");
}

static void *daemon_thread(void *arg)
{
    demo_t *d = arg;
    d->rc = sw_run(&d->ro);
    return NULL;
}

static job_seen_t *job_find(job_seen_t *jobs, size_t n, sw_str_t id)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(jobs[i].id) == id.len && memcmp(jobs[i].id, id.ptr, id.len) == 0)
            return &jobs[i];
    return NULL;
}

/* One readable line per record; remembers what each job's alerts named. */
static void show(const rd_kafka_message_t *m, job_seen_t *jobs, size_t njobs, int64_t t0)
{
    sw_arena_t arena;
    sw_arena_init(&arena);
    char err[256];
    sw_jnode_t *rec = sw_jdom_parse(m->payload, m->len, &arena, err, sizeof(err));
    if (!rec) {
        printf("  (unreadable record at offset %lld: %s)\n", (long long)m->offset, err);
        sw_arena_clear(&arena);
        return;
    }
    sw_record_head_t head; /* the codec reads the record's head */
    const char *bad_key;
    const sw_jnode_t *bad_val;
    bool known = rec->type == SW_JN_OBJECT &&
                 sw_record_head(rec, &head, &bad_key, &bad_val) == SW_OK;
    sw_action_t action = known ? head.action : SW_ACTION_CNT;
    sw_str_t job = known && head.has_job_id ? head.job_id : sw_str("<null>");
    sw_str_t severity = sw_jdom_str(sw_jdom_get(rec, "severity"), "?");
    sw_str_t summary = sw_jdom_str(sw_jdom_get(rec, "summary"), "");
    const sw_jnode_t *top = sw_jdom_at(sw_jdom_get(rec, "first_cause_suspects"), 0);
    job_seen_t *js = job_find(jobs, njobs, job);
    const char *check = "";
    if (js && action == SW_ACTION_TRIGGER && top) {
        int64_t rank = sw_jdom_int(sw_jdom_get(top, "rank"), -1);
        if (js->named_rank < 0) js->named_rank = rank;
        check = rank == js->truth_rank ? "  [injected on this rank: correct]"
                                       : "  [NOT the rank the storm was injected on]";
    }
    char xbuf[160];
    if (js && js->x && known && sw_action_is_x8(action))
        check = check_x8(js, rec, action, xbuf, sizeof(xbuf));
    if (js && action == SW_ACTION_SUMMARY) js->summary = true;
    printf("%6.2fs  %-8.*s %.*s%s\n", (double)(sw_clock_ms() - t0) / 1000.0, (int)severity.len,
           severity.ptr, (int)summary.len, summary.ptr, check);
    fflush(stdout);
    sw_arena_clear(&arena);
}

int sw_cmd_demo(int argc, char **argv, const sw_stop_t *stop)
{
    static const struct option opts[] = {
        {"jobs", required_argument, NULL, 'j'},
        {"ranks", required_argument, NULL, 'r'},
        {"samples", required_argument, NULL, 'n'},
        {"seed", required_argument, NULL, 's'},
        {"timeout-ms", required_argument, NULL, 't'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int64_t jobs = 3, ranks = 16, samples = 400, seed = 7, timeout_ms = 120000;
    bool verbose = false;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'j': ok = sw_cli_i64("demo", "--jobs", optarg, 1, 64, &jobs); break;
        case 'r': ok = sw_cli_i64("demo", "--ranks", optarg, 2, 4096, &ranks); break;
        case 'n': ok = sw_cli_i64("demo", "--samples", optarg, 100, 100000, &samples); break;
        case 's': ok = sw_cli_i64("demo", "--seed", optarg, 0, INT64_MAX, &seed); break;
        case 't':
            ok = sw_cli_i64("demo", "--timeout-ms", optarg, 1000, 3600000, &timeout_ms);
            break;
        case 'v': verbose = true; break;
        case 'h': usage(stdout); return SW_EXIT_OK;
        default: return sw_cli_bad_option("demo", argc, argv, optind, optopt);
        }
        if (!ok) return SW_EXIT_USAGE;
    }
    volatile sig_atomic_t *running = stop->running;
    char err[512];
    int rc = SW_EXIT_RUNTIME;
    sw_log_t log = sw_log_make(verbose ? SW_LOG_INFO : SW_LOG_WARN, "stormwatch run");
    sw_kafka_ctx_t kctx = {.log = &log};
    sw_conf_t *conf = NULL;
    sw_gen_t *gen = NULL;
    sw_genx_t *xgen = NULL;
    rd_kafka_t *prod = NULL, *cons = NULL;
    sw_metrics_t *metrics = NULL;
    job_seen_t *seen = NULL;
    demo_t d;
    memset(&d, 0, sizeof(d));
    bool started = false;
    pthread_t th;

    /* 1. The telemetry, and where each storm really starts. */
    sw_gen_opts_t go;
    sw_gen_opts_default(&go);
    go.jobs = jobs;
    go.ranks = ranks;
    go.samples = samples;
    go.seed = (uint64_t)seed;
    go.storm_rank = SW_GEN_STORM_RANK_RANDOM;
    go.phases = true;
    go.storm_at = 0.4;
    gen = sw_gen_new(&go, err, sizeof(err));
    if (!gen) {
        fprintf(stderr, "stormwatch demo: %s\n", err);
        rc = SW_EXIT_USAGE;
        goto done;
    }
    const sw_gen_storm_t *truth;
    size_t ntruth = sw_gen_truth(gen, &truth);
    seen = sw_calloc((size_t)jobs + 1, sizeof(*seen));
    for (size_t i = 0; i < ntruth && i < (size_t)jobs; i++) {
        snprintf(seen[i].id, sizeof(seen[i].id), "%s", truth[i].job_id);
        seen[i].truth_rank = truth[i].rank;
        seen[i].named_rank = -1;
    }
    /* ... and one SPEC 8 cascade: a rank fills its GPU and dies, others
     * follow, the survivors' watchdogs fire a minute later. */
    sw_genx_opts_t xo;
    sw_genx_opts_default(&xo);
    xo.ranks = 8;
    xo.seed = (uint64_t)seed;
    xo.watchdog_s = 60;
    xgen = sw_genx_new(&xo, err, sizeof(err));
    if (!xgen) {
        fprintf(stderr, "stormwatch demo: %s\n", err);
        rc = SW_EXIT_USAGE;
        goto done;
    }
    job_seen_t *xs = &seen[jobs];
    xs->x = sw_genx_truth(xgen, 0);
    snprintf(xs->id, sizeof(xs->id), "%s", xs->x->job_id);
    xs->named_rank = xs->truth_rank = -1;
    xs->crash_rank = -1;
    size_t njobs = (size_t)jobs + 1;

    /* 2. The embedded cluster and the filter. */
    sw_mock_t *mock = sw_mock_new(3, &kctx, err, sizeof(err));
    if (!mock) {
        fprintf(stderr, "stormwatch demo: %s\n", err);
        goto done;
    }
    if (sw_mock_topic(mock, T_IN, 8, err, sizeof(err)) ||
        sw_mock_topic(mock, T_OUT, 4, err, sizeof(err)) ||
        sw_mock_topic(mock, T_DLQ, 4, err, sizeof(err)) ||
        sw_mock_topic(mock, "stormwatch.state", 1, err, sizeof(err)) ||
        sw_mock_topic(mock, "stormwatch.repartition", 8, err, sizeof(err))) {
        fprintf(stderr, "stormwatch demo: %s\n", err);
        sw_mock_destroy(mock);
        goto done;
    }
    const char *boot = sw_mock_bootstrap(mock);
    printf("stormwatch demo: embedded Kafka cluster (3 brokers) at %s\n", boot);
    conf = sw_conf_new();
    sw_conf_set(conf, "job.idle.ms", "2000", err, sizeof(err));
    sw_conf_set(conf, "kafka.consumer.session.timeout.ms", "6000", err, sizeof(err));
    sw_conf_set(conf, "commit.interval.ms", "500", err, sizeof(err));
    sw_conf_settings(conf, &d.set);
    d.ro.conf = conf;
    d.ro.set = &d.set;
    d.ro.bootstrap = boot;
    d.ro.running = &d.run_flag;
    d.ro.log = &log;
    d.ro.metrics = metrics = sw_metrics_new(); /* the filter's progress paces the producer */
    d.run_flag = 1;
    if (pthread_create(&th, NULL, daemon_thread, &d) != 0) {
        fprintf(stderr, "stormwatch demo: cannot start the filter thread\n");
        sw_mock_destroy(mock);
        goto done;
    }
    started = true;

    /* 3. Produce the telemetry, keyed by job_id and placed by murmur2 (the
     * Java client's partitioner, docs/producing.md). */
    rd_kafka_conf_t *pc = sw_kafka_conf(NULL, SW_KAFKA_PRODUCER, boot, NULL, &kctx, err,
                                        sizeof(err));
    if (pc) sw_kafka_set(pc, "linger.ms", "20", err, sizeof(err));
    if (pc) sw_kafka_set(pc, "partitioner", "murmur2_random", err, sizeof(err));
    prod = pc ? rd_kafka_new(RD_KAFKA_PRODUCER, pc, err, sizeof(err)) : NULL;
    if (!prod) {
        fprintf(stderr, "stormwatch demo: producer: %s\n", err);
        goto stop;
    }
    printf(
        "stormwatch demo: producing %lld jobs x %lld ranks x %lld samples of telemetry "
        "(with phases) to %s\n",
        (long long)jobs, (long long)ranks, (long long)samples, T_IN);
    for (size_t i = 0; i < (size_t)jobs; i++)
        printf("  %s: storm injected on rank %lld\n", seen[i].id, (long long)seen[i].truth_rank);
    printf(
        "  %s: rank %lld fills its GPU and dies first (out of memory), then %zu more rank%s "
        "(%zu deaths in all; each crash record counts the deaths known when it is sent, the "
        "record that closes the crash all of them); watchdog errors from the survivors %lld s "
        "later\n",
        xs->id, (long long)xs->x->deaths[0].rank, xs->x->n_deaths - 1,
        xs->x->n_deaths == 2 ? "" : "s", xs->x->n_deaths, (long long)xo.watchdog_s);
    fflush(stdout);
    /* Once the filter has its partitions (a fresh group starts at the
     * log's beginning: nothing produced before is lost, but the log must
     * not outgrow the cluster's retention meanwhile). */
    char why[200];
    int64_t ready_by = sw_clock_ms() + 60000;
    while (*running && !d.rc && !sw_metrics_check_ready(metrics, INT64_MAX, why, sizeof(why)) &&
           sw_clock_ms() < ready_by)
        rd_kafka_poll(prod, 20);
    int64_t t0 = sw_clock_ms();
    uint64_t sent_bytes = 0;
    sw_tdec_t *dec = sw_tdec_new();
    sw_buf_t line;
    sw_buf_init(&line);
    uint64_t nprod = 0;
    for (bool storms = true; *running;) {
        if (storms && !sw_gen_next(gen, &line)) storms = false;
        if (!storms && !sw_genx_next(xgen, &line)) break;
        sw_event_t ev;
        if (sw_tdec_json(dec, line.data, line.len, &ev, err, sizeof(err)) == SW_OK) {
            while (*running && !d.rc &&
                   sent_bytes > (uint64_t)sw_metrics_get(metrics, SW_M_INPUT_BYTES) + DEMO_AHEAD)
                rd_kafka_poll(prod, 2);
            sent_bytes += line.len;
            for (;;) {
                rd_kafka_resp_err_t e = rd_kafka_producev(
                    prod, RD_KAFKA_V_TOPIC(T_IN),
                    RD_KAFKA_V_KEY(ev.has_job_id ? ev.job_id.ptr : "",
                                   ev.has_job_id ? ev.job_id.len : 0),
                    RD_KAFKA_V_VALUE(line.data, line.len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                    RD_KAFKA_V_END);
                if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) break;
                rd_kafka_poll(prod, 10);
            }
            nprod++;
        }
        line.len = 0;
    }
    rd_kafka_flush(prod, 30000);
    sw_buf_clear(&line);
    sw_tdec_destroy(dec);
    printf("stormwatch demo: %llu events produced in %.1f s; alerts as they arrive on %s:\n",
           (unsigned long long)nprod, (double)(sw_clock_ms() - t0) / 1000.0, T_OUT);
    fflush(stdout);

    /* 4. Read the alerts until every job has its summary. */
    rd_kafka_conf_t *cc = sw_kafka_conf(NULL, SW_KAFKA_CONSUMER, boot, "stormwatch-demo-viewer",
                                        &kctx, err, sizeof(err));
    cons = cc ? rd_kafka_new(RD_KAFKA_CONSUMER, cc, err, sizeof(err)) : NULL;
    if (!cons) {
        fprintf(stderr, "stormwatch demo: consumer: %s\n", err);
        goto stop;
    }
    rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new(4);
    for (int p = 0; p < 4; p++)
        rd_kafka_topic_partition_list_add(tp, T_OUT, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_assign(cons, tp);
    rd_kafka_topic_partition_list_destroy(tp);
    int64_t deadline = sw_clock_ms() + timeout_ms;
    size_t done_jobs = 0;
    while (*running && done_jobs < njobs && sw_clock_ms() < deadline && !d.rc) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(cons, 200);
        if (!m) continue;
        if (!m->err) show(m, seen, njobs, t0);
        rd_kafka_message_destroy(m);
        done_jobs = 0;
        /* A job is done at its summary; the cascade once its crash closed
         * too (the closing record follows the summary). */
        for (size_t i = 0; i < njobs; i++)
            done_jobs += seen[i].summary &&
                         (!seen[i].x || seen[i].crash_rank < 0 || seen[i].crash_closed);
    }
    bool all = done_jobs == njobs;
    size_t correct = 0;
    for (size_t i = 0; i < (size_t)jobs; i++) correct += seen[i].named_rank == seen[i].truth_rank;
    printf("stormwatch demo: %zu of %lld storms attributed to the rank they were injected on%s\n",
           correct, (long long)jobs, all ? "" : " (timed out before every job's summary)");
    bool x_ok = xs->warned && xs->crash_rank == xs->x->deaths[0].rank && xs->crash_closed;
    printf("stormwatch demo: cascade %s: %s, %s\n", xs->id,
           xs->warned ? "warned 30 s or more before the first death" : "NOT warned in time",
           xs->crash_rank == xs->x->deaths[0].rank ? "first death named" : "first death NOT named");
    rc = correct == (size_t)jobs && all && x_ok ? SW_EXIT_OK : SW_EXIT_RUNTIME;
stop:
    if (cons) {
        rd_kafka_consumer_close(cons);
        rd_kafka_destroy(cons);
    }
    if (prod) rd_kafka_destroy(prod);
    if (started) {
        d.run_flag = 0;
        pthread_join(th, NULL);
        if (d.rc) {
            fprintf(stderr, "stormwatch demo: the filter stopped with status %d\n", d.rc);
            rc = SW_EXIT_RUNTIME;
        }
    }
    sw_mock_destroy(mock);
    sw_metrics_destroy(metrics);
done:
    sw_gen_destroy(gen);
    sw_genx_destroy(xgen);
    sw_conf_destroy(conf);
    free(seen);
    return rc;
}
