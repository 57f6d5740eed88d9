/*
 * sw_kbench watch (polls /metrics and /proc/PID/status, records when a count
 * is reached, writes a time series) and latency (produces the sample that
 * completes a storm and times the trigger on the output topic).
 */
#include "kbench.h"

/* ---- watch ---------------------------------------------------------------- */

int cmd_watch(int argc, char **argv)
{
    static const struct option opts[] = {
        {"url", required_argument, NULL, 'u'},
        {"pid", required_argument, NULL, 'p'},
        {"count", required_argument, NULL, 'n'},
        {"interval-ms", required_argument, NULL, 'i'},
        {"tail-ms", required_argument, NULL, 'L'},
        {"tsv", required_argument, NULL, 'o'},
        {"timeout-ms", required_argument, NULL, 'T'},
        {"t0", required_argument, NULL, 'z'},
        {NULL, 0, NULL, 0},
    };
    const char *urls = NULL, *tsv = NULL;
    long pid = 0;
    long long want = 0, interval_ms = 20, tail_ms = 0, timeout_ms = 600000;
    double t0 = now_real();
    int c;
    while ((c = getopt_long(argc, argv, "u:p:n:i:L:o:T:z:", opts, NULL)) != -1) {
        switch (c) {
        case 'u': urls = optarg; break;
        case 'p': pid = (long)parse_ll("--pid", optarg, 1, INT32_MAX); break;
        case 'n': want = parse_ll("--count", optarg, 1, INT64_MAX); break;
        case 'i': interval_ms = parse_ll("--interval-ms", optarg, 1, 3600000); break;
        case 'L': tail_ms = parse_ll("--tail-ms", optarg, 0, INT64_MAX); break;
        case 'o': tsv = optarg; break;
        case 'T': timeout_ms = parse_ll("--timeout-ms", optarg, 1, INT64_MAX); break;
        case 'z': t0 = parse_dbl("--t0", optarg, 0, 1e12); break;
        default: return 2;
        }
    }
    if (!urls) die("watch: --url is required");
    url_t url;
    url_parse(urls, &url);
    FILE *out = NULL;
    if (tsv) {
        out = fopen(tsv, "w");
        if (!out) die("%s: %s", tsv, strerror(errno));
        fprintf(out,
                "t_s\tevents\trss_kib\thwm_kib\tretained\tjobs\tranks\tengine_bytes\tlag\t"
                "limit_rejects\trecords_out\tsummaries\tdlq\tcpu_s\n");
    }
    long long p05 = (want * 5 + 99) / 100, p95 = (want * 95 + 99) / 100;
    double t_up = 0, t_first = 0, t_05 = 0, t_95 = 0, t_done = 0;
    double cpu_05 = 0, cpu_95 = 0, cpu_done = 0, ev = 0, last_ev = 0, t_inc = 0, stall_s = 0;
    double gap_max_s = 0;
    long long max_rss = 0;
    sw_buf_t body;
    sw_buf_init(&body);
    int64_t deadline = now_mono_us() + timeout_ms * 1000, next = now_mono_us();
    int rc = 0;
    while (!stop) {
        int64_t now_us = now_mono_us();
        if (now_us > deadline) {
            fprintf(stderr, "sw_kbench watch: timeout after %lld ms at %.0f events\n", timeout_ms,
                    ev);
            rc = 1;
            break;
        }
        if (now_us < next) {
            sleep_ms((int)((next - now_us + 999) / 1000));
            continue;
        }
        next += interval_ms * 1000;
        long long rss = -1, hwm = -1;
        if (pid && !proc_rss(pid, &rss, &hwm)) {
            fprintf(stderr, "sw_kbench watch: process %ld is gone\n", pid);
            rc = 1;
            break;
        }
        if (rss > max_rss) max_rss = rss;
        double t = now_real();
        if (!http_get(&url, &body)) continue; /* not up yet */
        if (!t_up) t_up = t;
        const char *x = body.data;
        ev = engine_events(x);
        double cpu = pid ? proc_cpu_s(pid) : -1;
        if (ev > 0 && !t_first) t_first = t;
        /* Stalls: >= 100 ms without progress while the count is not reached. */
        if (ev > last_ev) {
            if (t_inc && (!want || last_ev < (double)want)) {
                if (t - t_inc >= 0.1) stall_s += t - t_inc;
                if (t - t_inc > gap_max_s) gap_max_s = t - t_inc;
            }
            t_inc = t;
            last_ev = ev;
        }
        if (want && ev >= (double)p05 && !t_05) t_05 = t, cpu_05 = cpu;
        if (want && ev >= (double)p95 && !t_95) t_95 = t, cpu_95 = cpu;
        if (want && ev >= (double)want && !t_done) t_done = t, cpu_done = cpu;
        if (out) {
            fprintf(
                out,
                "%.3f\t%.0f\t%lld\t%lld\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\n",
                t - t0, ev, rss, hwm, metric_sum(x, "stormwatch_retained_samples", NULL),
                metric_sum(x, "stormwatch_jobs_tracked", NULL),
                metric_sum(x, "stormwatch_ranks_tracked", NULL),
                metric_sum(x, "stormwatch_engine_state_bytes", NULL),
                metric_sum(x, "stormwatch_consumer_total_lag", NULL),
                metric_sum(x, "stormwatch_limit_rejects_total", NULL),
                metric_sum(x, "stormwatch_records_out_total", NULL),
                metric_sum(x, "stormwatch_records_out_total", "action=\"summary\""),
                metric_sum(x, "stormwatch_dlq_records_total", NULL), cpu);
            fflush(out);
        }
        if (t_done && (now_real() - t_done) * 1000 >= (double)tail_ms) break;
    }
    printf(
        "events=%.0f\nt_start=%.6f\nt_up=%.6f\nt_first=%.6f\nt_05=%.6f\nt_95=%.6f\n"
        "t_done=%.6f\ncpu_05=%.3f\ncpu_95=%.3f\ncpu_done=%.3f\nmax_rss_kib=%lld\n"
        "gap_max_ms=%.1f\nstall_s=%.3f\n",
        ev, t0, t_up, t_first, t_05, t_95, t_done, cpu_05, cpu_95, cpu_done, max_rss,
        gap_max_s * 1000, stall_s);
    if (out) fclose(out);
    sw_buf_clear(&body);
    return rc;
}

/* ---- latency -------------------------------------------------------------- */

/* One sample of job @p job as Confluent Avro in @p enc. */
static void lat_sample(sw_tdec_t *dec, sw_buf_t *json, sw_buf_t *enc, const char *job, int rank,
                       int ranks, int64_t ts_ns, int64_t used_bytes)
{
    json->len = 0;
    sw_buf_printf(json,
                  "{\"schema_version\": 3, \"timestamp_ns\": %lld, \"event_type\": \"sample\", "
                  "\"job_id\": \"%s\", \"rank\": %d, \"world_size\": %d, \"pid\": %d, "
                  "\"host\": \"lat-%03d\", \"device_used_bytes\": %lld, "
                  "\"device_total_bytes\": %lld, \"sampling_interval_ms\": 100}",
                  (long long)ts_ns, job, rank, ranks, 1000 + rank, rank / 8, (long long)used_bytes,
                  (long long)(80 * KB_GIB));
    sw_event_t ev;
    char err[512];
    if (sw_tdec_json(dec, json->data, json->len, &ev, err, sizeof(err)) != SW_OK)
        die("latency sample: %s", err);
    enc->len = 0;
    if (sw_avro_encode_event(&ev, 1, enc, err, sizeof(err)) != SW_OK)
        die("latency sample: %s", err);
}

static void lat_produce(rd_kafka_t *rk, const char *topic, int32_t part, const char *job,
                        const sw_buf_t *enc)
{
    for (;;) {
        rd_kafka_resp_err_t e = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(part),
            RD_KAFKA_V_KEY(job, job ? strlen(job) : 0), RD_KAFKA_V_VALUE(enc->data, enc->len),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        if (!e) return;
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) die("produce: %s", rd_kafka_err2str(e));
        rd_kafka_poll(rk, 10);
    }
}

static bool hdr_is(rd_kafka_message_t *m, const char *name, const char *value)
{
    rd_kafka_headers_t *h = NULL;
    const void *v;
    size_t n;
    return rd_kafka_message_headers(m, &h) == RD_KAFKA_RESP_ERR_NO_ERROR && h &&
           rd_kafka_header_get_last(h, name, &v, &n) == RD_KAFKA_RESP_ERR_NO_ERROR &&
           n == strlen(value) && memcmp(v, value, n) == 0;
}

/* "event_timestamp_ns": N of a JSON alert (-1 when absent or not JSON). */
static int64_t json_event_ts(const rd_kafka_message_t *m)
{
    static const char key[] = "\"event_timestamp_ns\":";
    const char *p = m->payload, *end = p + m->len;
    for (; p && p + sizeof(key) - 1 < end; p++) {
        if (memcmp(p, key, sizeof(key) - 1) != 0) continue;
        p += sizeof(key) - 1;
        while (p < end && *p == ' ') p++;
        char num[32];
        size_t n = 0;
        while (p < end && n < sizeof(num) - 1 && (*p == '-' || (*p >= '0' && *p <= '9')))
            num[n++] = *p++;
        num[n] = '\0';
        return n ? strtoll(num, NULL, 10) : -1;
    }
    return -1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted @p v. */
static int64_t pct(const int64_t *v, size_t n, double p)
{
    size_t k = (size_t)ceil(p / 100.0 * (double)n);
    if (k < 1) k = 1;
    if (k > n) k = n;
    return v[k - 1];
}

int cmd_latency(int argc, char **argv)
{
    static const struct option opts[] = {
        {"bootstrap", required_argument, NULL, 'b'},
        {"topic", required_argument, NULL, 't'},
        {"output", required_argument, NULL, 'o'},
        {"storms", required_argument, NULL, 'n'},
        {"ranks", required_argument, NULL, 'r'},
        {"warmup", required_argument, NULL, 'w'},
        {"gap-min-ms", required_argument, NULL, 'm'},
        {"gap-max-ms", required_argument, NULL, 'M'},
        {"timeout-ms", required_argument, NULL, 'T'},
        {"raw", required_argument, NULL, 'R'},
        {"observer-wait-ms", required_argument, NULL, 'W'},
        {"job-prefix", required_argument, NULL, 'j'},
        {"seed", required_argument, NULL, 's'},
        {"place", required_argument, NULL, 'L'},
        {NULL, 0, NULL, 0},
    };
    const char *bootstrap = NULL, *in = NULL, *outt = NULL, *raw = NULL, *prefix = "lat";
    place_t place = PLACE_INDEX;
    long long storms = 200, ranks = 4, warmup = 3, gap_min = 50, gap_max = 300, timeout_ms = 10000;
    long long obs_wait = 1, seed = 1;
    kprops_t kp = {{0}, 0};
    int c;
    while ((c = getopt_long(argc, argv, "b:t:o:n:r:w:m:M:T:R:W:j:s:X:L:", opts, NULL)) != -1) {
        switch (c) {
        case 'L': place = parse_place(optarg); break;
        case 'b': bootstrap = optarg; break;
        case 't': in = optarg; break;
        case 'o': outt = optarg; break;
        case 'n': storms = parse_ll("--storms", optarg, 1, 1000000); break;
        case 'r': ranks = parse_ll("--ranks", optarg, 2, 100000); break;
        case 'w': warmup = parse_ll("--warmup", optarg, 0, 1000); break;
        case 'm': gap_min = parse_ll("--gap-min-ms", optarg, 0, 600000); break;
        case 'M': gap_max = parse_ll("--gap-max-ms", optarg, 0, 600000); break;
        case 'T': timeout_ms = parse_ll("--timeout-ms", optarg, 1, 3600000); break;
        case 'R': raw = optarg; break;
        case 'W': obs_wait = parse_ll("--observer-wait-ms", optarg, 0, 300000); break;
        case 'j': prefix = optarg; break;
        case 's': seed = parse_ll("--seed", optarg, 0, INT32_MAX); break;
        case 'X': kprops_add(&kp, optarg); break;
        default: return 2;
        }
    }
    if (!bootstrap || !in || !outt) die("latency: -b, -t and -o are required");
    if (gap_max < gap_min) die("--gap-max-ms must be >= --gap-min-ms");
    srand((unsigned)seed);
    static const char *const pdefs[] = {"linger.ms", "0", NULL};
    rd_kafka_t *prod = knew(RD_KAFKA_PRODUCER, kconf(bootstrap, pdefs, &kp));
    int in_parts = topic_partitions(prod, in), out_parts = topic_partitions(prod, outt);

    /* The observer: no group, every output partition from its end now,
     * short broker waits (the mock holds an empty fetch for the whole
     * fetch.wait.max.ms, which would otherwise be measured). */
    char wait_s[32], group[128];
    snprintf(wait_s, sizeof(wait_s), "%lld", obs_wait);
    snprintf(group, sizeof(group), "sw-kbench-observer-%d", (int)getpid());
    /* read_committed: with exactly_once an alert counts once its
     * transaction commits, as a pager reading the topic sees it. */
    const char *cdefs[] = {"group.id",
                           group,
                           "enable.auto.commit",
                           "false",
                           "enable.partition.eof",
                           "false",
                           "fetch.wait.max.ms",
                           wait_s,
                           "fetch.error.backoff.ms",
                           "5",
                           "isolation.level",
                           "read_committed",
                           NULL};
    rd_kafka_t *obs = knew(RD_KAFKA_CONSUMER, kconf(bootstrap, cdefs, NULL));
    rd_kafka_poll_set_consumer(obs);
    rd_kafka_topic_partition_list_t *tl = rd_kafka_topic_partition_list_new(out_parts);
    for (int p = 0; p < out_parts; p++) {
        int64_t lo = 0, hi = 0;
        rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(obs, outt, p, &lo, &hi, 10000);
        if (e) die("watermarks of %s [%d]: %s", outt, p, rd_kafka_err2str(e));
        rd_kafka_topic_partition_list_add(tl, outt, p)->offset = hi;
    }
    rd_kafka_assign(obs, tl);
    rd_kafka_topic_partition_list_destroy(tl);

    FILE *rf = NULL;
    if (raw) {
        rf = fopen(raw, "w");
        if (!rf) die("%s: %s", raw, strerror(errno));
        fprintf(rf, "storm\tjob\tpartition\tgap_ms\tlatency_us\tother_records\tsent_at_s\n");
    }
    sw_tdec_t *dec = sw_tdec_new();
    sw_buf_t json, enc;
    sw_buf_init(&json);
    sw_buf_init(&enc);
    int64_t *lat = sw_calloc((size_t)storms, sizeof(*lat));
    size_t nlat = 0;
    long long missed = 0, other = 0, wrong_cause = 0, total = storms + warmup;
    const int hist = 4; /* quiet samples per rank before the storm */
    for (long long i = 0; i < total && !stop; i++) {
        char job[128];
        snprintf(job, sizeof(job), "%s-%d-%lld", prefix, (int)getpid(), i);
        int32_t part = place_part(place, job, strlen(job), (uint64_t)i, (uint64_t)i, in_parts);
        int64_t base = INT64_C(1700000000000000000) + i * INT64_C(1000000000000);
        int64_t quiet = 10 * KB_GIB, spike = 20 * KB_GIB;
        for (int k = 0; k < hist; k++)
            for (int r = 0; r < ranks; r++) {
                lat_sample(dec, &json, &enc, job, r, (int)ranks,
                           base + k * INT64_C(100000000) + r * 1000, quiet + r * 4096 + k);
                lat_produce(prod, in, part, place == PLACE_NONE ? NULL : job, &enc);
            }
        /* rank 0 crosses first: a candidate, but no cluster onset yet */
        lat_sample(dec, &json, &enc, job, 0, (int)ranks, base + hist * INT64_C(100000000), spike);
        lat_produce(prod, in, part, place == PLACE_NONE ? NULL : job, &enc);
        rd_kafka_flush(prod, 10000);
        long long gap = gap_min + (gap_max > gap_min ? rand() % (gap_max - gap_min + 1) : 0);
        /* Quiet: nothing is produced; read whatever arrives meanwhile. */
        int64_t gap_end = now_mono_us() + gap * 1000;
        long long seen_other = 0;
        while (now_mono_us() < gap_end) {
            rd_kafka_message_t *m = rd_kafka_consumer_poll(
                obs, (int)((gap_end - now_mono_us()) / 1000) + 1);
            if (m) {
                if (!m->err) seen_other++;
                rd_kafka_message_destroy(m);
            }
        }
        /* rank 1 completes the second crossing: this sample causes the trigger */
        int64_t ts = base + hist * INT64_C(100000000) + 1000;
        lat_sample(dec, &json, &enc, job, 1, (int)ranks, ts, spike);
        double sent_at = now_real();
        int64_t t_send = now_mono_us();
        lat_produce(prod, in, part, place == PLACE_NONE ? NULL : job, &enc);
        rd_kafka_poll(prod, 0);
        int64_t t_recv = 0, give_up = t_send + timeout_ms * 1000;
        while (!stop && now_mono_us() < give_up) {
            rd_kafka_message_t *m = rd_kafka_consumer_poll(obs, 100);
            if (!m) continue;
            int64_t t = now_mono_us();
            bool hit = !m->err && m->key_len == strlen(job) &&
                       memcmp(m->key, job, m->key_len) == 0 &&
                       hdr_is(m, "stormwatch.action", "trigger");
            if (hit && json_event_ts(m) != ts) {
                /* not the sample we timed (or not JSON): reported, still timed */
                if (i >= warmup) wrong_cause++;
                fprintf(stderr,
                        "sw_kbench latency: trigger of %s caused by timestamp %lld, not %lld\n",
                        job, (long long)json_event_ts(m), (long long)ts);
            }
            if (!hit && !m->err) seen_other++;
            rd_kafka_message_destroy(m);
            if (hit) {
                t_recv = t;
                break;
            }
        }
        rd_kafka_poll(prod, 0);
        if (i < warmup) continue;
        other += seen_other;
        if (!t_recv) {
            missed++;
            fprintf(stderr, "sw_kbench latency: no trigger for %s within %lld ms\n", job,
                    timeout_ms);
        } else {
            lat[nlat++] = t_recv - t_send;
        }
        if (rf)
            fprintf(rf, "%lld\t%s\t%d\t%lld\t%lld\t%lld\t%.3f\n", i - warmup, job, (int)part, gap,
                    t_recv ? (long long)(t_recv - t_send) : -1LL, seen_other, sent_at);
    }
    qsort(lat, nlat, sizeof(*lat), cmp_i64);
    double sum = 0;
    for (size_t k = 0; k < nlat; k++) sum += (double)lat[k];
    printf("storms=%zu\nmissed=%lld\nother_records=%lld\nwrong_cause=%lld\n", nlat, missed, other,
           wrong_cause);
    if (nlat)
        printf("min_us=%lld\np50_us=%lld\np90_us=%lld\np99_us=%lld\nmax_us=%lld\nmean_us=%.0f\n",
               (long long)lat[0], (long long)pct(lat, nlat, 50), (long long)pct(lat, nlat, 90),
               (long long)pct(lat, nlat, 99), (long long)lat[nlat - 1], sum / (double)nlat);
    if (rf) fclose(rf);
    free(lat);
    sw_tdec_destroy(dec);
    sw_buf_clear(&json);
    sw_buf_clear(&enc);
    rd_kafka_consumer_close(obs);
    rd_kafka_destroy(obs);
    rd_kafka_flush(prod, 5000);
    rd_kafka_destroy(prod);
    return missed || stop ? 1 : 0;
}
