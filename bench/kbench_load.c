/*
 * sw_kbench load (synthetic telemetry from sw_gen, as Confluent Avro, one job
 * per partition, optionally throttled by the daemon's /metrics) and count (a
 * count-only consumer: the librdkafka baseline).
 */
#include "kbench.h"

/* ---- load --------------------------------------------------------------- */

/* Job id -> dense index, in first-seen order (open addressing). */
typedef struct jobmap_s {
    char **keys;
    uint32_t *idx;
    size_t cap, n;
} jobmap_t;

static uint32_t jobmap_get(jobmap_t *jm, sw_str_t id)
{
    if (2 * (jm->n + 1) > jm->cap) {
        size_t cap = jm->cap ? jm->cap * 2 : 1024;
        char **keys = sw_calloc(cap, sizeof(*keys));
        uint32_t *idx = sw_calloc(cap, sizeof(*idx));
        for (size_t i = 0; i < jm->cap; i++) {
            if (!jm->keys[i]) continue;
            size_t h = sw_hash_bytes(jm->keys[i], strlen(jm->keys[i]), 0) & (cap - 1);
            while (keys[h]) h = (h + 1) & (cap - 1);
            keys[h] = jm->keys[i];
            idx[h] = jm->idx[i];
        }
        free(jm->keys);
        free(jm->idx);
        jm->keys = keys;
        jm->idx = idx;
        jm->cap = cap;
    }
    size_t h = sw_hash_bytes(id.ptr, id.len, 0) & (jm->cap - 1);
    while (jm->keys[h]) {
        if (strlen(jm->keys[h]) == id.len && memcmp(jm->keys[h], id.ptr, id.len) == 0)
            return jm->idx[h];
        h = (h + 1) & (jm->cap - 1);
    }
    jm->keys[h] = sw_memdup0(id.ptr, id.len);
    jm->idx[h] = (uint32_t)jm->n++;
    return jm->idx[h];
}

static void jobmap_clear(jobmap_t *jm)
{
    for (size_t i = 0; i < jm->cap; i++) free(jm->keys[i]);
    free(jm->keys);
    free(jm->idx);
    memset(jm, 0, sizeof(*jm));
}

typedef struct loadgen_s {
    sw_gen_t *gen;
    uint64_t total; /* expected events */
    uint64_t emitted;
    uint64_t delay; /* starts once this many events of the others are out */
    bool done;
    char spec[256];
} loadgen_t;

/* "jobs=4,ranks=1024,samples=600,prefix=a,seed=1,storms=1,storm_at=0.5,
 *  spread_ms=300,interval_ms=100" */
static void gen_spec(const char *spec, loadgen_t *lg)
{
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    char *copy = sw_strdup(spec), *save = NULL, prefix[64] = "job";
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) die("--gen \"%s\": \"%s\" is not key=value", spec, tok);
        *eq = '\0';
        const char *k = tok, *v = eq + 1;
        if (!strcmp(k, "jobs")) o.jobs = parse_ll("--gen jobs", v, 1, 100000);
        else if (!strcmp(k, "ranks")) o.ranks = parse_ll("--gen ranks", v, 1, 131072);
        else if (!strcmp(k, "samples")) o.samples = parse_ll("--gen samples", v, 1, 100000000);
        else if (!strcmp(k, "seed")) o.seed = (uint64_t)parse_ll("--gen seed", v, 0, INT64_MAX);
        else if (!strcmp(k, "storms")) o.storms = parse_ll("--gen storms", v, 0, 10000);
        else if (!strcmp(k, "storm_at")) o.storm_at = parse_dbl("--gen storm_at", v, 0, 1);
        else if (!strcmp(k, "spread_ms")) o.spread_ms = parse_ll("--gen spread_ms", v, 0, 3600000);
        else if (!strcmp(k, "interval_ms"))
            o.interval_ms = parse_ll("--gen interval_ms", v, 1, 3600000);
        else if (!strcmp(k, "prefix")) snprintf(prefix, sizeof(prefix), "%s", v);
        else if (!strcmp(k, "delay"))
            lg->delay = (uint64_t)parse_ll("--gen delay", v, 0, INT64_MAX);
        else
            die("--gen \"%s\": unknown key \"%s\" (jobs, ranks, samples, seed, storms, storm_at, "
                "spread_ms, interval_ms, prefix, delay)",
                spec, k);
    }
    o.job_prefix = prefix;
    char err[512];
    lg->gen = sw_gen_new(&o, err, sizeof(err));
    if (!lg->gen) die("--gen \"%s\": %s", spec, err);
    lg->total = (uint64_t)(o.jobs * o.ranks * o.samples);
    snprintf(lg->spec, sizeof(lg->spec), "%s", spec);
    free(copy);
}

typedef struct load_s {
    uint64_t delivered, failed;
    rd_kafka_resp_err_t last_err;
} load_t;

static void load_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    load_t *ld = opaque;
    if (m->err) {
        ld->failed++;
        ld->last_err = m->err;
    } else {
        ld->delivered++;
    }
}

/* Events the daemon consumed, from its /metrics; -1 when unreachable. */
static double consumed_events(const url_t *u, sw_buf_t *body)
{
    if (!http_get(u, body)) return -1;
    return engine_events(body->data);
}

int cmd_load(int argc, char **argv)
{
    static const struct option opts[] = {
        {"bootstrap", required_argument, NULL, 'b'},
        {"topic", required_argument, NULL, 't'},
        {"partitions", required_argument, NULL, 'P'},
        {"gen", required_argument, NULL, 'g'},
        {"throttle-url", required_argument, NULL, 'u'},
        {"max-ahead", required_argument, NULL, 'a'},
        {"progress", no_argument, NULL, 'p'},
        {"schema-id", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},
        {"place", required_argument, NULL, 'L'},
        {NULL, 0, NULL, 0},
    };
    const char *bootstrap = NULL, *topic = NULL, *throttle = NULL;
    place_t place = PLACE_INDEX;
    bool json = false; /* the generated JSON line as the value, not Confluent Avro */
    int partitions = 0, ngens = 0, c;
    long long max_ahead = 100000, schema_id = 1;
    bool progress = false;
    loadgen_t gens[KB_MAX_GENS];
    kprops_t kp = {{0}, 0};
    memset(gens, 0, sizeof(gens));
    while ((c = getopt_long(argc, argv, "b:t:P:g:u:a:ps:X:jL:", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'L': place = parse_place(optarg); break;
        case 'b': bootstrap = optarg; break;
        case 't': topic = optarg; break;
        case 'P': partitions = (int)parse_ll("--partitions", optarg, 0, 100000); break;
        case 'g':
            if (ngens == KB_MAX_GENS) die("at most %d --gen", KB_MAX_GENS);
            gen_spec(optarg, &gens[ngens++]);
            break;
        case 'u': throttle = optarg; break;
        case 'a': max_ahead = parse_ll("--max-ahead", optarg, 1, INT64_MAX); break;
        case 'p': progress = true; break;
        case 's': schema_id = parse_ll("--schema-id", optarg, 0, INT32_MAX); break;
        case 'X': kprops_add(&kp, optarg); break;
        default: return 2;
        }
    }
    if (!bootstrap || !topic || !ngens) die("load: -b, -t and at least one --gen are required");
    url_t url;
    if (throttle) url_parse(throttle, &url);

    static const char *const pdefs[] = {
        "linger.ms",
        "20",
        "batch.num.messages",
        "20000",
        "queue.buffering.max.messages",
        "1000000",
        "queue.buffering.max.kbytes",
        "1048576",
        NULL,
    };
    load_t ld = {0, 0, RD_KAFKA_RESP_ERR_NO_ERROR};
    rd_kafka_conf_t *kc = kconf(bootstrap, pdefs, &kp);
    rd_kafka_conf_set_dr_msg_cb(kc, load_dr_cb);
    rd_kafka_conf_set_opaque(kc, &ld);
    rd_kafka_t *rk = knew(RD_KAFKA_PRODUCER, kc);
    int nparts = topic_partitions(rk, topic);
    if (!partitions) partitions = nparts;
    if (partitions > nparts) die("--partitions %d: topic %s has %d", partitions, topic, nparts);

    sw_tdec_t *dec = sw_tdec_new();
    sw_buf_t line, enc, body;
    sw_buf_init(&line);
    sw_buf_init(&enc);
    sw_buf_init(&body);
    jobmap_t jobs;
    memset(&jobs, 0, sizeof(jobs));
    uint64_t *part_events = sw_calloc((size_t)partitions, sizeof(*part_events));
    uint64_t *part_bytes = sw_calloc((size_t)partitions, sizeof(*part_bytes));
    uint64_t queued = 0, bytes = 0, total = 0, waits = 0;
    for (int g = 0; g < ngens; g++) total += gens[g].total;
    double t0 = now_real(), last_progress = t0, waited_s = 0, base = 0;
    /* The daemon may have consumed earlier loads: count from here. */
    if (throttle) base = consumed_events(&url, &body);
    if (base < 0) base = 0;
    rd_kafka_headers_t *hdr_proto = rd_kafka_headers_new(1);
    rd_kafka_header_add(hdr_proto, "content-type", -1,
                        json ? "application/json" : "application/vnd.confluent.avro", -1);
    char err[512];
    while (!stop) {
        /* Interleave the generators in proportion to their sizes. */
        int pick = -1;
        double best = 2;
        for (int g = 0; g < ngens; g++) {
            if (gens[g].done || queued < gens[g].delay) continue;
            double f = (double)gens[g].emitted / (double)(gens[g].total ? gens[g].total : 1);
            if (f < best) best = f, pick = g;
        }
        if (pick < 0) {
            bool left = false; /* a delayed generator whose turn never came */
            for (int g = 0; g < ngens; g++) left = left || !gens[g].done;
            if (left) die("--gen delay is larger than the other generators' events");
            break;
        }
        line.len = 0;
        if (!sw_gen_next(gens[pick].gen, &line)) {
            gens[pick].done = true;
            continue;
        }
        gens[pick].emitted++;
        sw_event_t ev;
        if (sw_tdec_json(dec, line.data, line.len - 1, &ev, err, sizeof(err)) != SW_OK)
            die("generated line does not decode: %s", err);
        enc.len = 0;
        if (json) sw_buf_put(&enc, line.data, line.len - 1);
        else if (sw_avro_encode_event(&ev, (int32_t)schema_id, &enc, err, sizeof(err)) != SW_OK)
            die("cannot encode: %s", err);
        uint32_t j = jobmap_get(&jobs, ev.has_job_id ? ev.job_id : sw_str(""));
        int32_t part = place_part(place, ev.job_id.ptr, ev.has_job_id ? ev.job_id.len : 0, j,
                                  queued, partitions);
        size_t keylen = place == PLACE_NONE ? 0 : ev.job_id.len;
        /* librdkafka owns the headers only once producev succeeds */
        rd_kafka_headers_t *hdrs = rd_kafka_headers_copy(hdr_proto);
        for (;;) {
            rd_kafka_resp_err_t e = rd_kafka_producev(
                rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(part),
                RD_KAFKA_V_KEY(keylen ? ev.job_id.ptr : NULL, keylen),
                RD_KAFKA_V_VALUE(enc.data, enc.len), RD_KAFKA_V_HEADERS(hdrs),
                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
            if (!e) break;
            if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) die("produce: %s", rd_kafka_err2str(e));
            rd_kafka_poll(rk, 10);
        }
        queued++;
        bytes += enc.len;
        part_events[part]++;
        part_bytes[part] += enc.len + ev.job_id.len + 60; /* + record overhead */
        if ((queued & 1023) == 0) {
            rd_kafka_poll(rk, 0);
            /* Stay at most max_ahead events ahead of the daemon. */
            while (throttle && !stop) {
                double done = consumed_events(&url, &body);
                if (done >= 0 && (double)queued - (done - base) <= (double)max_ahead) break;
                if (done < 0 && queued < (uint64_t)max_ahead) break;
                double w0 = now_real();
                rd_kafka_poll(rk, 20);
                waited_s += now_real() - w0;
                waits++;
            }
            double now = now_real();
            if (progress && now - last_progress >= 5) {
                fprintf(stderr, "sw_kbench load: %llu / %llu events queued (%.0f/s)\n",
                        (unsigned long long)queued, (unsigned long long)total,
                        (double)queued / (now - t0));
                last_progress = now;
            }
        }
    }
    rd_kafka_headers_destroy(hdr_proto);
    rd_kafka_flush(rk, 300000);
    double t1 = now_real();
    /* Did the mock keep everything? (its log start offset moves when it
     * drops old message sets: > 5 MiB per partition) */
    int64_t lo_max = 0, hi_sum = 0;
    uint64_t pmax_ev = 0, pmax_bytes = 0;
    for (int p = 0; p < partitions; p++) {
        int64_t lo = 0, hi = 0;
        if (rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi, 10000) == 0) {
            if (lo > lo_max) lo_max = lo;
            hi_sum += hi;
        }
        if (part_events[p] > pmax_ev) pmax_ev = part_events[p];
        if (part_bytes[p] > pmax_bytes) pmax_bytes = part_bytes[p];
    }
    printf(
        "events=%llu\ndelivered=%llu\nfailed=%llu\nvalue_bytes=%llu\navg_value_bytes=%.1f\n"
        "jobs=%zu\npartitions_used=%d\nmax_partition_events=%llu\nmax_partition_bytes_est=%llu\n"
        "seconds=%.3f\nrate=%.0f\nthrottle_waits=%llu\nthrottle_wait_s=%.3f\n"
        "topic_high_watermark_sum=%lld\ntopic_max_low_watermark=%lld\n",
        (unsigned long long)queued, (unsigned long long)ld.delivered, (unsigned long long)ld.failed,
        (unsigned long long)bytes, queued ? (double)bytes / (double)queued : 0.0, jobs.n,
        (int)(jobs.n < (size_t)partitions ? jobs.n : (size_t)partitions),
        (unsigned long long)pmax_ev, (unsigned long long)pmax_bytes, t1 - t0,
        (double)queued / (t1 - t0), (unsigned long long)waits, waited_s, (long long)hi_sum,
        (long long)lo_max);
    if (ld.failed)
        fprintf(stderr, "sw_kbench load: %llu messages not delivered (%s)\n",
                (unsigned long long)ld.failed, rd_kafka_err2str(ld.last_err));
    int rc = ld.failed || stop ? 1 : 0;
    rd_kafka_destroy(rk);
    for (int g = 0; g < ngens; g++) sw_gen_destroy(gens[g].gen);
    sw_tdec_destroy(dec);
    sw_buf_clear(&line);
    sw_buf_clear(&enc);
    sw_buf_clear(&body);
    jobmap_clear(&jobs);
    free(part_events);
    free(part_bytes);
    return rc;
}

/* ---- count ---------------------------------------------------------------- */

int cmd_count(int argc, char **argv)
{
    static const struct option opts[] = {
        {"bootstrap", required_argument, NULL, 'b'},  {"topic", required_argument, NULL, 't'},
        {"count", required_argument, NULL, 'n'},      {"group", required_argument, NULL, 'g'},
        {"timeout-ms", required_argument, NULL, 'T'}, {NULL, 0, NULL, 0},
    };
    double t_start = now_real();
    const char *bootstrap = NULL, *topic = NULL, *group = NULL;
    long long want = 0, timeout_ms = 600000;
    kprops_t kp = {{0}, 0};
    int c;
    while ((c = getopt_long(argc, argv, "b:t:n:g:T:X:", opts, NULL)) != -1) {
        switch (c) {
        case 'b': bootstrap = optarg; break;
        case 't': topic = optarg; break;
        case 'n': want = parse_ll("--count", optarg, 1, INT64_MAX); break;
        case 'g': group = optarg; break;
        case 'T': timeout_ms = parse_ll("--timeout-ms", optarg, 1, INT64_MAX); break;
        case 'X': kprops_add(&kp, optarg); break;
        default: return 2;
        }
    }
    if (!bootstrap || !topic || !want || !group) die("count: -b, -t, -n and -g are required");
    /* The daemon's consumer settings that matter for fetching (sw_kafka.c),
     * everything else librdkafka's defaults. */
    const char *cdefs[] = {
        "group.id",
        group,
        "auto.offset.reset",
        "earliest",
        "enable.auto.commit",
        "false",
        "enable.partition.eof",
        "false",
        "partition.assignment.strategy",
        "cooperative-sticky",
        NULL,
    };
    rd_kafka_t *rk = knew(RD_KAFKA_CONSUMER, kconf(bootstrap, cdefs, &kp));
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_partition_list_t *tl = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(tl, topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t err = rd_kafka_subscribe(rk, tl);
    rd_kafka_topic_partition_list_destroy(tl);
    if (err) die("subscribe: %s", rd_kafka_err2str(err));
    long long n = 0, p05 = (want * 5 + 99) / 100, p95 = (want * 95 + 99) / 100;
    double t_first = 0, t_05 = 0, t_95 = 0, t_done = 0, cpu_05 = 0, cpu_95 = 0;
    uint64_t bytes = 0;
    /* Stalls: gaps of >= 100 ms between two messages once data flows. */
    int64_t deadline = now_mono_us() + timeout_ms * 1000, last_us = 0, gap_max_us = 0;
    double stall_s = 0;
    while (!stop && n < want && now_mono_us() < deadline) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
        if (!m) continue;
        if (!m->err) {
            int64_t t_us = now_mono_us();
            if (last_us && t_us - last_us > gap_max_us) gap_max_us = t_us - last_us;
            if (last_us && t_us - last_us >= 100000) stall_s += (double)(t_us - last_us) / 1e6;
            last_us = t_us;
            n++;
            bytes += m->len;
            if (n == 1) t_first = now_real();
            if (n == p05) t_05 = now_real(), cpu_05 = self_cpu_s();
            if (n == p95) t_95 = now_real(), cpu_95 = self_cpu_s();
        }
        rd_kafka_message_destroy(m);
    }
    t_done = now_real();
    double cpu_done = self_cpu_s();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf(
        "events=%lld\nbytes=%llu\nt_start=%.6f\nt_first=%.6f\nt_05=%.6f\nt_95=%.6f\n"
        "t_done=%.6f\ncpu_05=%.3f\ncpu_95=%.3f\ncpu_done=%.3f\ngap_max_ms=%.1f\nstall_s=%.3f\n"
        "max_rss_kib=%ld\n",
        n, (unsigned long long)bytes, t_start, t_first, t_05, t_95, t_done, cpu_05, cpu_95,
        cpu_done, (double)gap_max_us / 1000.0, stall_s, ru.ru_maxrss);
    fflush(stdout);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    return n == want ? 0 : 1;
}
