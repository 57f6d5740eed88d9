/*
 * Tests of the metrics registry: the exposition format (HELP/TYPE once per
 * family, label escaping, fixed and dynamic label families, cumulative
 * histogram buckets with +Inf == _count, exact sums), consistency while one
 * thread updates and another renders, and the health and readiness rules.
 */
#include "http_check.h"

#define HIST "stormwatch_event_processing_seconds"

/* The bucket bounds the format promises, in ns and as rendered. */
static const uint64_t k_bound_ns[] = {1000,    2500,     5000,      10000,     25000,
                                      50000,   100000,   250000,    500000,    1000000,
                                      2500000, 10000000, 100000000, UINT64_MAX};
static const char *const k_le[] = {"1e-06",  "2.5e-06", "5e-06",   "1e-05",  "2.5e-05",
                                   "5e-05",  "0.0001",  "0.00025", "0.0005", "0.001",
                                   "0.0025", "0.01",    "0.1",     "+Inf"};
#define N_BUCKETS ((int)(sizeof(k_le) / sizeof(k_le[0])))

#define ASSERT_SAMPLE(text, series, want)                                                         \
    do {                                                                                          \
        double v_ = 0;                                                                            \
        SW_ASSERT(sample_value((text), (series), &v_), "no sample %s in:\n%s", (series), (text)); \
        SW_ASSERT(v_ == (double)(want), "%s: got %.17g, want %.17g", (series), v_,                \
                  (double)(want));                                                                \
    } while (0)

static const char *render(const sw_metrics_t *m, sw_buf_t *out)
{
    out->len = 0;
    sw_metrics_render(m, out);
    return sw_buf_cstr(out);
}

/* Histogram of one rendering: per-bucket (not cumulative) counts; checks
 * cumulative order and +Inf == _count. */
static int read_histogram(const char *text, uint64_t per[N_BUCKETS], uint64_t *count, double *sum)
{
    double prev = 0, c = 0;
    for (int b = 0; b < N_BUCKETS; b++) {
        char series[128];
        snprintf(series, sizeof(series), HIST "_bucket{le=\"%s\"}", k_le[b]);
        double v;
        SW_ASSERT(sample_value(text, series, &v), "no %s", series);
        SW_ASSERT(v >= prev, "%s = %.0f below the previous bucket %.0f", series, v, prev);
        per[b] = (uint64_t)(v - prev);
        prev = v;
    }
    SW_ASSERT(sample_value(text, HIST "_count", &c), "no _count");
    SW_ASSERT(sample_value(text, HIST "_sum", sum), "no _sum");
    SW_ASSERT(c == prev, "le=\"+Inf\" %.0f != _count %.0f", prev, c);
    *count = (uint64_t)c;
    return 0;
}

/* ---- registry tests ---------------------------------------------------- */

/* One record for sw_metrics_first_cause(): a trigger naming @p host first,
 * or a crash whose first death ran on it. */
static void first_cause_n(sw_metrics_t *m, sw_action_t action, int64_t revision, const char *host,
                          const char *job, int64_t number, int64_t at_ns)
{
    sw_suspect_t sus;
    memset(&sus, 0, sizeof(sus));
    sus.rank = 3;
    sus.has_source = true;
    sus.host = sw_str(host);
    sw_x8_t x;
    memset(&x, 0, sizeof(x));
    x.number = number;
    x.open = true;
    x.first.rank = 3;
    x.first.host = sw_str(host);
    sw_record_t rec;
    memset(&rec, 0, sizeof(rec));
    rec.action = action;
    rec.revision = revision;
    rec.episode = number;
    rec.has_event_ts = true;
    rec.event_timestamp_ns = at_ns;
    rec.analysis.has_job_id = true;
    rec.analysis.job_id = sw_str(job);
    if (action == SW_ACTION_TRIGGER || action == SW_ACTION_UPDATE) {
        rec.analysis.suspects = &sus;
        rec.analysis.n_suspects = 1;
    }
    if (action == SW_ACTION_CRASH) rec.x8 = &x;
    sw_metrics_first_cause(m, &rec);
}

static void first_cause(sw_metrics_t *m, sw_action_t action, int64_t revision, const char *host,
                        const char *job, int64_t at_ns)
{
    first_cause_n(m, action, revision, host, job, 1, at_ns);
}

/* The repeat offenders: counts by host and kind, at most metrics.hosts.max
 * hosts with series of their own (the rest under host="_other"), and the
 * distinct jobs per host over the last day (repeats of a job, later
 * revisions and closing records count nothing; a day-old job drops out). */
static void test_first_cause_hosts(void **state)
{
    (void)state;
    sw_metrics_t *m = sw_metrics_new();
    sw_metrics_set_host_limit(m, 3);
    sw_buf_t out;
    sw_buf_init(&out);
    int64_t now = sw_wall_ms() * INT64_C(1000000), h = INT64_C(3600000000000);
    /* node-bad starts storms in four jobs, one of them twice, one 25 h ago */
    first_cause(m, SW_ACTION_TRIGGER, 0, "node-bad", "j1", now - 2 * h);
    first_cause(m, SW_ACTION_TRIGGER, 0, "node-bad", "j2", now - h);
    first_cause(m, SW_ACTION_TRIGGER, 0, "node-bad", "j2", now - h / 2);
    first_cause(m, SW_ACTION_TRIGGER, 0, "node-bad", "j3", now);
    first_cause(m, SW_ACTION_TRIGGER, 0, "node-bad", "j0", now - 25 * h);
    first_cause(m, SW_ACTION_TRIGGER, 1, "node-bad", "j4", now); /* a revision of nothing */
    first_cause(m, SW_ACTION_UPDATE, 0, "node-bad", "j5", now);  /* an update of nothing */
    first_cause(m, SW_ACTION_UPDATE, 2, "node-bad", "j3", now);  /* same host: nothing */
    first_cause(m, SW_ACTION_CRASH, 0, "node-bad", "j3", now);   /* a death */
    first_cause(m, SW_ACTION_CRASH, 1, "node-bad", "j6", now);   /* a revision: not counted */
    first_cause(m, SW_ACTION_TRIGGER, 0, "node-a", "j7", now);
    first_cause(m, SW_ACTION_TRIGGER, 0, "we\"ird\\host", "j8", now);
    /* over the limit of 3 hosts: under _other, storms and deaths */
    first_cause(m, SW_ACTION_TRIGGER, 0, "node-x", "j9", now);
    first_cause(m, SW_ACTION_TRIGGER, 0, "node-y", "j10", now);
    first_cause(m, SW_ACTION_CRASH, 0, "node-z", "j11", now);
    first_cause(m, SW_ACTION_TRIGGER, 0, "_other", "j12", now); /* never a host of its own */
    /* a late marker revises j20's first death from node-a to node-bad: the
     * job moves to node-bad's distinct jobs; node-a's counter keeps it */
    first_cause_n(m, SW_ACTION_CRASH, 0, "node-a", "j20", 1, now);
    first_cause_n(m, SW_ACTION_CRASH, 1, "node-bad", "j20", 1, now);
    first_cause_n(m, SW_ACTION_CRASH, 2, "node-bad", "j20", 1, now); /* again: nothing */
    /* an update moves j7's episode 2 from node-a to node-bad */
    first_cause_n(m, SW_ACTION_TRIGGER, 0, "node-a", "j7", 2, now);
    first_cause_n(m, SW_ACTION_UPDATE, 1, "node-bad", "j7", 2, now);
    first_cause(m, SW_ACTION_TRIGGER, 0, "", "j13", now); /* no host: nothing */
    const char *text = render(m, &out);
    SW_ASSERT_I64(check_exposition(text), 0);
    SW_ASSERT_CONTAINS(text, "# TYPE stormwatch_first_cause_host_total counter\n");
    SW_ASSERT_CONTAINS(text,
                       "stormwatch_first_cause_host_total{host=\"node-a\",kind=\"storm\"} 2\n"
                       "stormwatch_first_cause_host_total{host=\"node-a\",kind=\"death\"} 1\n");
    SW_ASSERT_CONTAINS(text,
                       "stormwatch_first_cause_host_total{host=\"node-bad\",kind=\"storm\"} 6\n"
                       "stormwatch_first_cause_host_total{host=\"node-bad\",kind=\"death\"} 2\n");
    SW_ASSERT_CONTAINS(
        text, "stormwatch_first_cause_host_total{host=\"we\\\"ird\\\\host\",kind=\"storm\"} 1\n");
    SW_ASSERT_CONTAINS(text,
                       "stormwatch_first_cause_host_total{host=\"_other\",kind=\"storm\"} 2\n"
                       "stormwatch_first_cause_host_total{host=\"_other\",kind=\"death\"} 1\n");
    SW_ASSERT(!strstr(text, "node-x") && !strstr(text, "node-z"),
              "hosts over the limit have no series");
    SW_ASSERT_CONTAINS(text, "# TYPE stormwatch_first_cause_host_jobs gauge\n");
    SW_ASSERT_CONTAINS(text,
                       "stormwatch_first_cause_host_jobs{host=\"node-bad\",kind=\"storm\"} 4\n"
                       "stormwatch_first_cause_host_jobs{host=\"node-bad\",kind=\"death\"} 2\n");
    SW_ASSERT_CONTAINS(text,
                       "stormwatch_first_cause_host_jobs{host=\"node-a\",kind=\"storm\"} 1\n"
                       "stormwatch_first_cause_host_jobs{host=\"node-a\",kind=\"death\"} 0\n");
    SW_ASSERT(!strstr(text, "stormwatch_first_cause_host_jobs{host=\"_other\""),
              "no distinct-jobs gauge for the overflow");
    /* 0: every host under _other */
    sw_metrics_t *z = sw_metrics_new();
    sw_metrics_set_host_limit(z, 0);
    first_cause(z, SW_ACTION_TRIGGER, 0, "node-a", "j1", now);
    text = render(z, &out);
    SW_ASSERT_CONTAINS(text,
                       "stormwatch_first_cause_host_total{host=\"_other\",kind=\"storm\"} 1\n");
    SW_ASSERT(!strstr(text, "node-a"), "limit 0: no host series");
    sw_metrics_destroy(z);
    sw_buf_clear(&out);
    sw_metrics_destroy(m);
}

static void test_render_format(void **state)
{
    (void)state;
    sw_metrics_t *m = sw_metrics_new();
    sw_buf_t out;
    sw_buf_init(&out);

    sw_metrics_add(m, SW_M_DECODE_ERRORS, 3);
    sw_metrics_add(m, SW_M_INPUT_BYTES, 1234567);
    sw_metrics_add(m, SW_M_RECORDS_OUT_TRIGGER + SW_ACTION_RESOLVE, 2);
    sw_metrics_add(m, SW_M_RECORDS_OUT_TRIGGER + SW_ACTION_TRIGGER, 1);
    sw_metrics_add(m, SW_M_DLQ_LIMIT, 4);
    sw_metrics_set(m, SW_M_ASSIGNED_PARTITIONS, 6);
    sw_metrics_set_double(m, SW_M_LAST_EVENT_TIMESTAMP, 1732168800.125);
    sw_metrics_set_ready_state(m, true, 12);
    sw_metrics_series_t *b = sw_metrics_events_in(m, "b.topic", false);
    sw_metrics_series_t *weird = sw_metrics_events_in(m, "we\"ird\\topic\nx", false);
    sw_metrics_series_t *a = sw_metrics_events_in(m, "a.topic", false);
    sw_metrics_series_t *af = sw_metrics_events_in(m, "a.topic", true);
    SW_ASSERT(sw_metrics_events_in(m, "b.topic", false) == b, "same topic, different series");
    SW_ASSERT(af != a, "same topic, another stage: another series");
    sw_metrics_series_add(af, 7);
    sw_metrics_series_add(b, 2);
    sw_metrics_series_add(weird, 5);
    sw_metrics_series_add(a, 1);
    sw_metrics_series_t *l1 = sw_metrics_lag_add(m, "t", 1);
    sw_metrics_series_t *l0 = sw_metrics_lag_add(m, "t", 0);
    sw_metrics_series_t *l10 = sw_metrics_lag_add(m, "t", 10);

    const char *text = render(m, &out);
    SW_ASSERT_I64(check_exposition(text), 0);
    SW_ASSERT_CONTAINS(text,
                       "# HELP stormwatch_decode_errors_total Input messages that could not "
                       "be decoded (sent to the DLQ).\n"
                       "# TYPE stormwatch_decode_errors_total counter\n"
                       "stormwatch_decode_errors_total 3\n");
    SW_ASSERT_CONTAINS(text, "# TYPE stormwatch_up gauge\nstormwatch_up 1\n");
    SW_ASSERT_CONTAINS(text, "\nstormwatch_build_info{version=\"" SW_VERSION "\"} 1\n");
    SW_ASSERT_CONTAINS(text, "\nstormwatch_input_bytes_total 1234567\n");
    SW_ASSERT_CONTAINS(text,
                       "# TYPE stormwatch_records_out_total counter\n"
                       "stormwatch_records_out_total{action=\"trigger\"} 1\n"
                       "stormwatch_records_out_total{action=\"update\"} 0\n"
                       "stormwatch_records_out_total{action=\"resolve\"} 2\n"
                       "stormwatch_records_out_total{action=\"summary\"} 0\n");
    SW_ASSERT_CONTAINS(text,
                       "stormwatch_dlq_records_total{kind=\"decode\"} 0\n"
                       "stormwatch_dlq_records_total{kind=\"invalid\"} 0\n"
                       "stormwatch_dlq_records_total{kind=\"limit\"} 4\n"
                       "stormwatch_dlq_records_total{kind=\"format\"} 0\n");
    /* Topics sorted; quote, backslash and newline escaped. */
    SW_ASSERT_CONTAINS(
        text,
        "# TYPE stormwatch_events_in_total counter\n"
        "stormwatch_events_in_total{topic=\"a.topic\",stage=\"engine\"} 1\n"
        "stormwatch_events_in_total{topic=\"a.topic\",stage=\"forward\"} 7\n"
        "stormwatch_events_in_total{topic=\"b.topic\",stage=\"engine\"} 2\n"
        "stormwatch_events_in_total{topic=\"we\\\"ird\\\\topic\\nx\",stage=\"engine\"} 5\n");
    SW_ASSERT_CONTAINS(text, "\nstormwatch_assigned_partitions 6\n");
    SW_ASSERT_CONTAINS(text, "\nstormwatch_consumer_total_lag 12\n");
    SW_ASSERT_CONTAINS(text,
                       "# TYPE stormwatch_last_event_timestamp_seconds gauge\n"
                       "stormwatch_last_event_timestamp_seconds 1732168800.125\n");
    SW_ASSERT_CONTAINS(text, "# TYPE " HIST " histogram\n" HIST "_bucket{le=\"1e-06\"} 0\n");
    SW_ASSERT_CONTAINS(text, HIST "_bucket{le=\"+Inf\"} 0\n" HIST "_sum 0\n" HIST "_count 0\n");
    double start = 0;
    SW_ASSERT(sample_value(text, "process_start_time_seconds", &start), "no start time");
    double now = (double)sw_wall_ms() / 1000.0;
    SW_ASSERT(start <= now && start > now - 60, "start time %.3f, now %.3f", start, now);
    /* Lag series are hidden until measured. */
    SW_ASSERT_CONTAINS(text, "# TYPE stormwatch_consumer_lag gauge\n# HELP");
    SW_ASSERT_LACKS(text, "stormwatch_consumer_lag{");

    sw_metrics_series_set(l1, 7);
    sw_metrics_series_set(l0, 0);
    sw_metrics_series_set(l10, 3);
    SW_ASSERT(sw_metrics_lag_add(m, "t", 1) == l1, "second reference, different series");
    text = render(m, &out);
    SW_ASSERT_I64(check_exposition(text), 0);
    SW_ASSERT_CONTAINS(text,
                       "# TYPE stormwatch_consumer_lag gauge\n"
                       "stormwatch_consumer_lag{topic=\"t\",partition=\"0\"} 0\n"
                       "stormwatch_consumer_lag{topic=\"t\",partition=\"1\"} 7\n"
                       "stormwatch_consumer_lag{topic=\"t\",partition=\"10\"} 3\n");
    sw_metrics_lag_remove(m, l1); /* one reference left */
    sw_metrics_lag_remove(m, l0);
    text = render(m, &out);
    SW_ASSERT_LACKS(text, "partition=\"0\"");
    SW_ASSERT_CONTAINS(text,
                       "stormwatch_consumer_lag{topic=\"t\",partition=\"1\"} 7\n"
                       "stormwatch_consumer_lag{topic=\"t\",partition=\"10\"} 3\n");
    sw_metrics_lag_remove(m, l1);
    sw_metrics_lag_remove(m, NULL);
    text = render(m, &out);
    SW_ASSERT_LACKS(text, "partition=\"1\"");
    SW_ASSERT_CONTAINS(text, "stormwatch_consumer_lag{topic=\"t\",partition=\"10\"} 3\n");

    /* Engine stats: gauges from the total, counters from deltas. */
    sw_detect_stats_t prev, cur, tot;
    memset(&prev, 0, sizeof(prev));
    memset(&tot, 0, sizeof(tot));
    cur = prev;
    cur.duplicates = 5;
    cur.late = 2;
    sw_metrics_engine_counters(m, &prev, &cur);
    prev = cur;
    cur.duplicates = 9;
    sw_metrics_engine_counters(m, &prev, &cur);
    tot.jobs = 3;
    tot.ranks = 48;
    tot.retained = 4096;
    tot.bytes = 1 << 20;
    sw_metrics_engine_gauges(m, &tot);
    text = render(m, &out);
    ASSERT_SAMPLE(text, "stormwatch_duplicate_samples_total", 9);
    ASSERT_SAMPLE(text, "stormwatch_late_samples_total", 2);
    ASSERT_SAMPLE(text, "stormwatch_jobs_tracked", 3);
    ASSERT_SAMPLE(text, "stormwatch_ranks_tracked", 48);
    ASSERT_SAMPLE(text, "stormwatch_retained_samples", 4096);
    ASSERT_SAMPLE(text, "stormwatch_engine_state_bytes", 1 << 20);
    SW_ASSERT(sw_metrics_get(m, SW_M_DUPLICATE_SAMPLES) == 9, "get: %g",
              sw_metrics_get(m, SW_M_DUPLICATE_SAMPLES));
    SW_ASSERT_I64(sw_metrics_series_get(l10), 3);
    SW_ASSERT_I64(sw_metrics_series_get(weird), 5);

    sw_metrics_lag_remove(m, l10);
    sw_buf_clear(&out);
    sw_metrics_destroy(m);
    sw_metrics_destroy(NULL);
}

static void test_histogram(void **state)
{
    (void)state;
    sw_metrics_t *m = sw_metrics_new();
    sw_buf_t out;
    sw_buf_init(&out);
    /* Bounds are inclusive (le): 1000 ns is in le="1e-06". */
    const uint64_t obs[] = {0, 1000, 1001, 2500, 100000000, 100000001, 5000000000u};
    for (size_t i = 0; i < sizeof(obs) / sizeof(obs[0]); i++) sw_metrics_observe_ns(m, obs[i]);
    const char *text = render(m, &out);
    SW_ASSERT_I64(check_exposition(text), 0);
    const char *want_hist = HIST
        "_bucket{le=\"1e-06\"} 2\n" HIST "_bucket{le=\"2.5e-06\"} 4\n" HIST
        "_bucket{le=\"5e-06\"} 4\n" HIST "_bucket{le=\"1e-05\"} 4\n" HIST
        "_bucket{le=\"2.5e-05\"} 4\n" HIST "_bucket{le=\"5e-05\"} 4\n" HIST
        "_bucket{le=\"0.0001\"} 4\n" HIST "_bucket{le=\"0.00025\"} 4\n" HIST
        "_bucket{le=\"0.0005\"} 4\n" HIST "_bucket{le=\"0.001\"} 4\n" HIST
        "_bucket{le=\"0.0025\"} 4\n" HIST "_bucket{le=\"0.01\"} 4\n" HIST
        "_bucket{le=\"0.1\"} 5\n" HIST "_bucket{le=\"+Inf\"} 7\n" HIST "_sum 5.200004502\n" HIST
        "_count 7\n";
    SW_ASSERT_CONTAINS(text, want_hist);
    /* The same observations gathered by sw_metrics_proc_add() and
     * published at once render the same. */
    sw_metrics_t *m2 = sw_metrics_new();
    sw_buf_t out2;
    sw_buf_init(&out2);
    sw_metrics_proc_t acc;
    memset(&acc, 0, sizeof(acc));
    for (size_t i = 0; i < sizeof(obs) / sizeof(obs[0]); i++) sw_metrics_proc_add(&acc, obs[i]);
    sw_metrics_observe_proc(m2, &acc);
    SW_ASSERT_I64(acc.count, 0);
    SW_ASSERT_CONTAINS(render(m2, &out2), want_hist);
    sw_metrics_observe_proc(m2, &acc); /* empty: changes nothing */
    SW_ASSERT_CONTAINS(render(m2, &out2), want_hist);
    sw_buf_clear(&out2);
    sw_metrics_destroy(m2);
    /* Reading folds one shard into the other: nothing is lost or doubled
     * across many reads interleaved with observations. */
    uint64_t total = 7, total_ns = 5200004502u;
    for (int round = 0; round < 20; round++) {
        for (int k = 0; k <= round; k++) {
            uint64_t ns = (uint64_t)(k + 1) * 3000u;
            sw_metrics_observe_ns(m, ns);
            total++;
            total_ns += ns;
        }
        text = render(m, &out);
        uint64_t per[N_BUCKETS], count;
        double sum;
        SW_ASSERT_I64(read_histogram(text, per, &count, &sum), 0);
        SW_ASSERT_I64(count, total);
        SW_ASSERT(sum == (double)total_ns / 1e9, "round %d: _sum %.17g, want %.17g", round, sum,
                  (double)total_ns / 1e9);
        text = render(m, &out);
        SW_ASSERT_I64(read_histogram(text, per, &count, &sum), 0);
        SW_ASSERT_I64(count, total);
    }
    sw_buf_clear(&out);
    sw_metrics_destroy(m);
}

/* One writer hammering counters, a series, the histogram and the label
 * table while the reader renders. */
typedef struct hammer_s {
    sw_metrics_t *m;
    sw_metrics_series_t *topic;
    atomic_bool stop;
    uint64_t iterations; /* written by the writer, read after the join */
} hammer_t;

/* Observation values, one per bucket index (0: none). */
static const uint64_t k_obs_ns[] = {500, 2000, 20000, 300000, 5000000, 200000000};
static const int k_obs_bucket[] = {0, 1, 4, 8, 11, 13};
#define N_OBS 6

static void *hammer(void *arg)
{
    hammer_t *hm = arg;
    uint64_t i = 0;
    sw_metrics_proc_t acc; /* every other observation, published in batches */
    memset(&acc, 0, sizeof(acc));
    while (!atomic_load(&hm->stop) || i < 200000) {
        sw_metrics_add(hm->m, SW_M_DECODE_ERRORS, 1);
        sw_metrics_series_add(hm->topic, 1);
        if (i % 2) sw_metrics_proc_add(&acc, k_obs_ns[i % N_OBS]);
        else sw_metrics_observe_ns(hm->m, k_obs_ns[i % N_OBS]);
        if (i % 97 == 0) sw_metrics_observe_proc(hm->m, &acc);
        sw_metrics_set(hm->m, SW_M_JOBS_TRACKED, (int64_t)i);
        if (i % 256 == 0) {
            sw_metrics_series_t *lag = sw_metrics_lag_add(hm->m, "hammer", (int32_t)(i % 8));
            sw_metrics_series_set(lag, (int64_t)i);
            sw_metrics_lag_remove(hm->m, lag);
        }
        i++;
    }
    sw_metrics_observe_proc(hm->m, &acc);
    hm->iterations = i;
    return NULL;
}

static int check_obs_sum(const uint64_t per[N_BUCKETS], double sum, int render_no)
{
    uint64_t want_ns = 0;
    for (int b = 0; b < N_BUCKETS; b++) {
        int k = -1;
        for (int j = 0; j < N_OBS; j++)
            if (k_obs_bucket[j] == b) k = j;
        SW_ASSERT(k >= 0 || per[b] == 0, "render %d: %llu observations in empty bucket %s",
                  render_no, (unsigned long long)per[b], k_le[b]);
        if (k >= 0) want_ns += per[b] * k_obs_ns[k];
    }
    SW_ASSERT(sum == (double)want_ns / 1e9, "render %d: _sum %.17g, buckets say %.17g", render_no,
              sum, (double)want_ns / 1e9);
    return 0;
}

static void test_concurrency(void **state)
{
    (void)state;
    /* The table above must match the bounds the test expects. */
    for (int j = 0; j < N_OBS; j++) {
        int b = 0;
        while (k_obs_ns[j] > k_bound_ns[b]) b++;
        SW_ASSERT_I64(b, k_obs_bucket[j]);
    }
    hammer_t hm;
    memset(&hm, 0, sizeof(hm));
    hm.m = sw_metrics_new();
    hm.topic = sw_metrics_events_in(hm.m, "gpu.mem", false);
    atomic_init(&hm.stop, false);
    pthread_t th;
    SW_ASSERT(pthread_create(&th, NULL, hammer, &hm) == 0, "pthread_create");
    sw_buf_t out;
    sw_buf_init(&out);
    double last_errors = 0, last_events = 0;
    uint64_t last_count = 0, first_count = 0;
    int rc = 0;
    for (int r = 0; r < 1000 && !rc; r++) {
        const char *text = render(hm.m, &out);
        rc = check_exposition(text);
        uint64_t per[N_BUCKETS], count;
        double sum, errors, events;
        if (!rc) rc = read_histogram(text, per, &count, &sum);
        if (!rc) rc = check_obs_sum(per, sum, r);
        if (rc) {
            fprintf(stderr, "render %d failed\n", r);
            break;
        }
        if (!sample_value(text, "stormwatch_decode_errors_total", &errors) ||
            !sample_value(text, "stormwatch_events_in_total{topic=\"gpu.mem\",stage=\"engine\"}",
                          &events)) {
            fprintf(stderr, "render %d: counters missing\n", r);
            rc = 1;
            break;
        }
        if (errors < last_errors || events < last_events || count < last_count) {
            fprintf(stderr, "render %d: a counter went down (%g < %g, %g < %g, %llu < %llu)\n", r,
                    errors, last_errors, events, last_events, (unsigned long long)count,
                    (unsigned long long)last_count);
            rc = 1;
        }
        last_errors = errors;
        last_events = events;
        last_count = count;
        if (r == 0) first_count = count;
    }
    atomic_store(&hm.stop, true);
    pthread_join(th, NULL);
    SW_ASSERT(rc == 0, "a render beside the writer failed (see above)");
    /* Counts only grow, so the first and last renders bound them all. */
    SW_ASSERT(last_count > 0 && first_count < hm.iterations,
              "renders did not overlap the writer (saw %llu..%llu of %llu)",
              (unsigned long long)first_count, (unsigned long long)last_count,
              (unsigned long long)hm.iterations);

    const char *text = render(hm.m, &out);
    SW_ASSERT_I64(check_exposition(text), 0);
    uint64_t per[N_BUCKETS], count;
    double sum;
    SW_ASSERT_I64(read_histogram(text, per, &count, &sum), 0);
    SW_ASSERT_I64(check_obs_sum(per, sum, -1), 0);
    SW_ASSERT_I64(count, hm.iterations);
    for (int j = 0; j < N_OBS; j++) {
        uint64_t want = hm.iterations / N_OBS + ((uint64_t)j < hm.iterations % N_OBS);
        SW_ASSERT_I64(per[k_obs_bucket[j]], want);
    }
    ASSERT_SAMPLE(text, "stormwatch_decode_errors_total", hm.iterations);
    ASSERT_SAMPLE(text, "stormwatch_events_in_total{topic=\"gpu.mem\",stage=\"engine\"}",
                  hm.iterations);
    ASSERT_SAMPLE(text, "stormwatch_jobs_tracked", hm.iterations - 1);
    SW_ASSERT_LACKS(text, "topic=\"hammer\"");
    sw_buf_clear(&out);
    sw_metrics_destroy(hm.m);
}

static void test_health_rules(void **state)
{
    (void)state;
    sw_metrics_t *m = sw_metrics_new();
    char why[256] = "";
    SW_ASSERT(!sw_metrics_check_health(m, 5000, 30000, why, sizeof(why)), "healthy before a beat");
    SW_ASSERT_STREQ(why, "no heartbeat yet");
    sw_metrics_heartbeat(m, 1000);
    SW_ASSERT(sw_metrics_check_health(m, 1000, 30000, why, sizeof(why)), "unhealthy at once");
    SW_ASSERT(sw_metrics_check_health(m, 30999, 30000, why, sizeof(why)), "unhealthy at 29.999 s");
    SW_ASSERT(!sw_metrics_check_health(m, 31000, 30000, why, sizeof(why)), "healthy at 30 s");
    SW_ASSERT_STREQ(why, "stale: last heartbeat 30.0 s ago (limit 30.0 s)");
    sw_metrics_heartbeat(m, 31000);
    SW_ASSERT(sw_metrics_check_health(m, 31500, 30000, why, sizeof(why)), "a new beat counts");

    SW_ASSERT(!sw_metrics_check_ready(m, 100, why, sizeof(why)), "ready without partitions");
    SW_ASSERT_STREQ(why, "no partitions assigned");
    sw_metrics_set_ready_state(m, true, -1);
    SW_ASSERT(!sw_metrics_check_ready(m, 100, why, sizeof(why)), "ready with unknown lag");
    SW_ASSERT_STREQ(why, "consumer lag unknown");
    sw_metrics_set_ready_state(m, true, 100);
    SW_ASSERT(sw_metrics_check_ready(m, 100, why, sizeof(why)), "not ready at the limit");
    sw_metrics_set_ready_state(m, true, 12345);
    SW_ASSERT(!sw_metrics_check_ready(m, 1000, why, sizeof(why)), "ready while lagging");
    SW_ASSERT_STREQ(why, "lagging: 12345 messages behind (limit 1000)");
    SW_ASSERT_I64(sw_metrics_get(m, SW_M_CONSUMER_TOTAL_LAG), 12345);
    sw_metrics_set_ready_state(m, false, 0);
    SW_ASSERT(!sw_metrics_check_ready(m, 1000, why, sizeof(why)), "ready after revocation");
    SW_ASSERT_STREQ(why, "no partitions assigned");
    sw_metrics_destroy(m);
}

/* `stormwatch ship`'s registry: its own families and the process's only;
 * not ready while reading is paused. */
static void test_ship_registry(void **state)
{
    (void)state;
    sw_metrics_t *m = sw_metrics_new();
    sw_metrics_enable_ship(m);
    sw_metrics_set_ready_state(m, true, 0);
    sw_metrics_add(m, SW_M_SHIP_EVENTS, 7);
    sw_metrics_add(m, SW_M_SHIP_LOST_BYTES, 120);
    sw_metrics_set(m, SW_M_SHIP_PAUSED, 1);
    sw_buf_t out;
    sw_buf_init(&out);
    sw_metrics_render(m, &out);
    const char *t = sw_buf_cstr(&out);
    SW_ASSERT_CONTAINS(t, "\nstormwatch_ship_events_total 7\n");
    SW_ASSERT_CONTAINS(t, "\nstormwatch_ship_lost_bytes_total 120\n");
    SW_ASSERT_CONTAINS(t, "\nstormwatch_ship_paused 1\n");
    SW_ASSERT_CONTAINS(t, "\nstormwatch_up 1\n");
    SW_ASSERT_CONTAINS(t, "stormwatch_output_oldest_undelivered_age_seconds");
    SW_ASSERT_LACKS(t, "stormwatch_events_in_total");
    SW_ASSERT_LACKS(t, "stormwatch_notify_");
    SW_ASSERT_LACKS(t, "stormwatch_commits_total");
    char why[256] = "";
    SW_ASSERT(sw_metrics_check_ready(m, 0, why, sizeof(why)), "not ready: %s", why);
    sw_metrics_set_output_state(m, 0, true);
    SW_ASSERT(!sw_metrics_check_ready(m, 0, why, sizeof(why)), "ready while paused");
    SW_ASSERT_STREQ(why, "kafka unreachable or slow: reading paused (in-flight limit reached)");
    sw_buf_clear(&out);
    sw_metrics_destroy(m);
    /* run's registry has no ship family. */
    m = sw_metrics_new();
    sw_buf_init(&out);
    sw_metrics_render(m, &out);
    SW_ASSERT_LACKS(sw_buf_cstr(&out), "stormwatch_ship_");
    sw_buf_clear(&out);
    sw_metrics_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_format), cmocka_unit_test(test_first_cause_hosts),
        cmocka_unit_test(test_histogram),     cmocka_unit_test(test_concurrency),
        cmocka_unit_test(test_health_rules),  cmocka_unit_test(test_ship_registry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
