/*
 * sw_kbench: the Kafka-side driver of bench/kafka.sh and bench/soak.sh.
 * Subcommands: `load` (synthetic telemetry from sw_gen, as Confluent Avro,
 * one job per partition, optionally throttled by the daemon's /metrics),
 * `count` (a count-only consumer: the librdkafka baseline), `watch` (polls
 * /metrics and /proc/PID/status, records when a count is reached, writes a
 * time series) and `latency` (produces the sample that completes a storm
 * and times the trigger on the output topic). Measures only: it never
 * decides what counts as an alert and is not part of the daemon.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "sw_alloc.h"
#include "sw_codec_avro.h"
#include "sw_codec_telemetry.h"
#include "sw_gen.h"
#include "sw_partition.h"
#include "sw_types.h"

#define KB_MAX_GENS 8 /* --gen specs per load */
#define KB_MAX_X 32   /* -X properties per command */
#define KB_HTTP_MAX (16u * 1024u * 1024u)
#define KB_GIB ((int64_t)1024 * 1024 * 1024)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sw_kbench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

/* Seconds since the epoch (comparable with bash's $EPOCHREALTIME). */
static double now_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t now_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static long long parse_ll(const char *opt, const char *s, long long min, long long max)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno == ERANGE || v < min || v > max)
        die("%s \"%s\" is not an integer in %lld..%lld", opt, s, min, max);
    return v;
}

static double parse_dbl(const char *opt, const char *s, double min, double max)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !(v >= min && v <= max))
        die("%s \"%s\" is not a number in %g..%g", opt, s, min, max);
    return v;
}

/* ---- librdkafka helpers ------------------------------------------------ */

typedef struct kprops_s {
    const char *kv[KB_MAX_X];
    int n;
} kprops_t;

static void kprops_add(kprops_t *kp, const char *kv)
{
    if (kp->n == KB_MAX_X) die("too many -X properties (at most %d)", KB_MAX_X);
    if (!strchr(kv, '=')) die("-X \"%s\": expected PROP=VALUE", kv);
    kp->kv[kp->n++] = kv;
}

static void kset(rd_kafka_conf_t *kc, const char *name, const char *value)
{
    char err[512];
    if (rd_kafka_conf_set(kc, name, value, err, sizeof(err)) != RD_KAFKA_CONF_OK)
        die("librdkafka property \"%s\"=\"%s\": %s", name, value, err);
}

/* Settings @p defs (NULL-terminated name/value pairs), then the user's -X. */
static rd_kafka_conf_t *kconf(const char *bootstrap, const char *const *defs, const kprops_t *kp)
{
    rd_kafka_conf_t *kc = rd_kafka_conf_new();
    kset(kc, "bootstrap.servers", bootstrap);
    kset(kc, "client.id", "sw_kbench");
    for (int i = 0; defs && defs[i]; i += 2) kset(kc, defs[i], defs[i + 1]);
    for (int i = 0; kp && i < kp->n; i++) {
        char name[256];
        const char *eq = strchr(kp->kv[i], '=');
        size_t n = (size_t)(eq - kp->kv[i]);
        if (n >= sizeof(name)) die("-X \"%s\": name too long", kp->kv[i]);
        memcpy(name, kp->kv[i], n);
        name[n] = '\0';
        kset(kc, name, eq + 1);
    }
    return kc;
}

static rd_kafka_t *knew(rd_kafka_type_t type, rd_kafka_conf_t *kc)
{
    char err[512];
    rd_kafka_t *rk = rd_kafka_new(type, kc, err, sizeof(err));
    if (!rk) die("cannot create a Kafka client: %s", err);
    return rk;
}

static int topic_partitions(rd_kafka_t *rk, const char *topic)
{
    const rd_kafka_metadata_t *md = NULL;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    int n = 0;
    for (int attempt = 0; attempt < 50 && n <= 0; attempt++) {
        if (rd_kafka_metadata(rk, 0, rkt, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            if (md->topic_cnt == 1 && !md->topics[0].err) n = md->topics[0].partition_cnt;
            rd_kafka_metadata_destroy(md);
        }
        if (n <= 0) sleep_ms(100);
    }
    rd_kafka_topic_destroy(rkt);
    if (n <= 0) die("topic \"%s\" does not exist", topic);
    return n;
}

/* ---- HTTP /metrics ------------------------------------------------------ */

typedef struct url_s {
    char host[256];
    char port[16];
    char path[512];
} url_t;

static void url_parse(const char *s, url_t *u)
{
    if (strncmp(s, "http://", 7) != 0) die("URL \"%s\": expected http://HOST:PORT/PATH", s);
    const char *h = s + 7, *slash = strchr(h, '/'), *colon = strchr(h, ':');
    if (!slash) slash = h + strlen(h);
    if (!colon || colon > slash || colon == h) die("URL \"%s\": expected http://HOST:PORT/PATH", s);
    snprintf(u->host, sizeof(u->host), "%.*s", (int)(colon - h), h);
    snprintf(u->port, sizeof(u->port), "%.*s", (int)(slash - colon - 1), colon + 1);
    snprintf(u->path, sizeof(u->path), "%s", *slash ? slash : "/");
}

/* GET the URL into @p body (reset first). @returns false when the server
 * is not reachable or does not answer 200. */
static bool http_get(const url_t *u, sw_buf_t *body)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(u->host, u->port, &hints, &res) != 0 || !res) return false;
    int fd = socket(res->ai_family, res->ai_socktype, res->ai_protocol);
    if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
        if (fd >= 0) close(fd);
        freeaddrinfo(res);
        return false;
    }
    freeaddrinfo(res);
    char req[1024];
    int n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n",
                     u->path, u->host);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return false;
    }
    body->len = 0;
    for (;;) {
        sw_buf_reserve(body, 65536);
        ssize_t r = read(fd, body->data + body->len, body->cap - body->len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        body->len += (size_t)r;
        if (body->len > KB_HTTP_MAX) break;
    }
    close(fd);
    const char *text = sw_buf_cstr(body);
    if (strncmp(text, "HTTP/1.", 7) != 0 || strncmp(text + 8, " 200", 4) != 0) return false;
    const char *hdr_end = strstr(text, "\r\n\r\n");
    if (!hdr_end) return false;
    size_t skip = (size_t)(hdr_end + 4 - text);
    memmove(body->data, body->data + skip, body->len - skip);
    body->len -= skip;
    sw_buf_cstr(body);
    return true;
}

/* Sum of the samples of metric @p name (exact family name) whose labels
 * contain @p label (NULL: every sample). @p text is NUL-terminated. */
static double metric_sum(const char *text, const char *name, const char *label)
{
    size_t nl = strlen(name);
    double sum = 0;
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n');
        if (*line != '#' && strncmp(line, name, nl) == 0 && (line[nl] == '{' || line[nl] == ' ')) {
            const char *sp = eol ? eol : line + strlen(line);
            while (sp > line && sp[-1] != ' ') sp--;
            bool match = true;
            if (label) {
                const char *lb = line + nl, *le = memchr(lb, '}', (size_t)(sp - lb));
                match = false;
                if (*lb == '{' && le) {
                    size_t ll = strlen(label);
                    for (const char *q = lb; q + ll <= le; q++)
                        if (memcmp(q, label, ll) == 0) {
                            match = true;
                            break;
                        }
                }
            }
            if (match) sum += strtod(sp, NULL);
        }
        line = eol ? eol + 1 : NULL;
    }
    return sum;
}

/* ---- /proc ------------------------------------------------------------- */

/* VmRSS and VmHWM of @p pid in KiB. @returns false when it is gone. */
static bool proc_rss(long pid, long long *rss_kib, long long *hwm_kib)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    *rss_kib = *hwm_kib = -1;
    while (fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "VmRSS:", 6)) *rss_kib = strtoll(line + 6, NULL, 10);
        else if (!strncmp(line, "VmHWM:", 6)) *hwm_kib = strtoll(line + 6, NULL, 10);
    }
    fclose(f);
    return *rss_kib >= 0;
}

/* user+system CPU seconds of @p pid (all threads). */
static double proc_cpu_s(long pid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    if (!p) return -1;
    /* fields after the command: state(3) ... utime(14) stime(15) */
    unsigned long long ut = 0, st = 0;
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double self_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

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

/* Events the daemon's engines consumed, from its /metrics: the engine
 * stage of stormwatch_events_in_total (with repartition=on the forward
 * stage counts the input messages once more). */
static double engine_events(const char *text)
{
    return metric_sum(text, "stormwatch_events_in_total", "stage=\"engine\"");
}

/* Events the daemon consumed, from its /metrics; -1 when unreachable. */
static double consumed_events(const url_t *u, sw_buf_t *body)
{
    if (!http_get(u, body)) return -1;
    return engine_events(body->data);
}

/* Where a producer puts a job's message (--place): "index" the job's n-th
 * partition, keyed by its job_id (jobs spread evenly: the default);
 * "murmur2" keyed by its job_id where Kafka's clients put that key; "none"
 * without a key, spread over the partitions message by message. */
typedef enum place_e { PLACE_INDEX, PLACE_MURMUR2, PLACE_NONE } place_t;

static place_t parse_place(const char *s)
{
    if (!strcmp(s, "index")) return PLACE_INDEX;
    if (!strcmp(s, "murmur2")) return PLACE_MURMUR2;
    if (!strcmp(s, "none")) return PLACE_NONE;
    die("--place must be index, murmur2 or none (got \"%s\")", s);
    return PLACE_INDEX;
}

static int32_t place_part(place_t pl, const char *job, size_t len, uint64_t job_index,
                          uint64_t msg_index, int partitions)
{
    if (pl == PLACE_MURMUR2) return sw_partition_of(SW_PARTITIONER_MURMUR2, job, len, partitions);
    if (pl == PLACE_NONE) return (int32_t)(msg_index % (uint64_t)partitions);
    return (int32_t)(job_index % (uint64_t)partitions);
}

static int cmd_load(int argc, char **argv)
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

static int cmd_count(int argc, char **argv)
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

/* ---- watch ---------------------------------------------------------------- */

static int cmd_watch(int argc, char **argv)
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

static int cmd_latency(int argc, char **argv)
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

/* ---- main ------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(
        f,
        "Usage: sw_kbench COMMAND [OPTIONS]   (bench driver; see bench/README.md)\n"
        "\n"
        "  load    -b BOOT -t TOPIC [-P PARTS] [--json] --gen SPEC [--gen SPEC]... [-X p=v]...\n"
        "          [--throttle-url URL --max-ahead N] [--progress] [--schema-id N]\n"
        "          [--place index|murmur2|none]\n"
        "          generate telemetry (sw_gen) and produce it as Confluent Avro; job k of\n"
        "          the run (first-seen order) goes to partition k %% PARTS keyed by its\n"
        "          job_id (--place murmur2: where Kafka's clients put that key; none:\n"
        "          no key, message n to partition n %% PARTS); SPEC is\n"
        "          jobs=J,ranks=R,samples=S[,prefix=P,seed=N,storms=N,storm_at=F,\n"
        "          spread_ms=MS,interval_ms=MS,delay=N (start after N events)]; with\n"
        "          --throttle-url (the daemon's /metrics) it stays at most N events\n"
        "          ahead of what the daemon consumed\n"
        "  count   -b BOOT -t TOPIC -n N -g GROUP [-X p=v]...  count-only consumer\n"
        "  watch   --url URL [--pid PID] [-n N] [--interval-ms MS] [--tail-ms MS]\n"
        "          [--tsv FILE] [--t0 EPOCH_S]  poll /metrics (+ /proc/PID) until the\n"
        "          events-in counter reaches N (then MS more), or until SIGTERM\n"
        "  latency -b BOOT -t IN -o OUT [--storms N] [--ranks R] [--warmup N]\n"
        "          [--gap-min-ms MS --gap-max-ms MS] [--observer-wait-ms MS] [--raw FILE]\n"
        "          [--place index|murmur2|none]  (storm i's partition, as load's)\n"
        "          storm i: quiet history, rank 0 crosses, a random quiet gap, then rank 1's\n"
        "          crossing sample; time from just before producing it until its trigger\n"
        "          is read from OUT\n"
        "\n"
        "Results are printed as key=value lines on standard output.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    const char *cmd = argv[1];
    argc--;
    argv++;
    optind = 1;
    if (!strcmp(cmd, "load")) return cmd_load(argc, argv);
    if (!strcmp(cmd, "count")) return cmd_count(argc, argv);
    if (!strcmp(cmd, "watch")) return cmd_watch(argc, argv);
    if (!strcmp(cmd, "latency")) return cmd_latency(argc, argv);
    fprintf(stderr, "sw_kbench: unknown command \"%s\"\n", cmd);
    usage(stderr);
    return 2;
}
