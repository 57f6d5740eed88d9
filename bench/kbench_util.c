/* sw_kbench's shared helpers (kbench.h). */
#include "kbench.h"

volatile sig_atomic_t stop;

void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}
void die(const char *fmt, ...)
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
double now_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t now_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

long long parse_ll(const char *opt, const char *s, long long min, long long max)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno == ERANGE || v < min || v > max)
        die("%s \"%s\" is not an integer in %lld..%lld", opt, s, min, max);
    return v;
}

double parse_dbl(const char *opt, const char *s, double min, double max)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !(v >= min && v <= max))
        die("%s \"%s\" is not a number in %g..%g", opt, s, min, max);
    return v;
}

void kprops_add(kprops_t *kp, const char *kv)
{
    if (kp->n == KB_MAX_X) die("too many -X properties (at most %d)", KB_MAX_X);
    if (!strchr(kv, '=')) die("-X \"%s\": expected PROP=VALUE", kv);
    kp->kv[kp->n++] = kv;
}

void kset(rd_kafka_conf_t *kc, const char *name, const char *value)
{
    char err[512];
    if (rd_kafka_conf_set(kc, name, value, err, sizeof(err)) != RD_KAFKA_CONF_OK)
        die("librdkafka property \"%s\"=\"%s\": %s", name, value, err);
}

/* Settings @p defs (NULL-terminated name/value pairs), then the user's -X. */
rd_kafka_conf_t *kconf(const char *bootstrap, const char *const *defs, const kprops_t *kp)
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

rd_kafka_t *knew(rd_kafka_type_t type, rd_kafka_conf_t *kc)
{
    char err[512];
    rd_kafka_t *rk = rd_kafka_new(type, kc, err, sizeof(err));
    if (!rk) die("cannot create a Kafka client: %s", err);
    return rk;
}

int topic_partitions(rd_kafka_t *rk, const char *topic)
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

void url_parse(const char *s, url_t *u)
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
bool http_get(const url_t *u, sw_buf_t *body)
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
double metric_sum(const char *text, const char *name, const char *label)
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
bool proc_rss(long pid, long long *rss_kib, long long *hwm_kib)
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
double proc_cpu_s(long pid)
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

double self_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Events the daemon's engines consumed, from its /metrics: the engine
 * stage of stormwatch_events_in_total (with repartition=on the forward
 * stage counts the input messages once more). */
double engine_events(const char *text)
{
    return metric_sum(text, "stormwatch_events_in_total", "stage=\"engine\"");
}

place_t parse_place(const char *s)
{
    if (!strcmp(s, "index")) return PLACE_INDEX;
    if (!strcmp(s, "murmur2")) return PLACE_MURMUR2;
    if (!strcmp(s, "none")) return PLACE_NONE;
    die("--place must be index, murmur2 or none (got \"%s\")", s);
    return PLACE_INDEX;
}

int32_t place_part(place_t pl, const char *job, size_t len, uint64_t job_index, uint64_t msg_index,
                   int partitions)
{
    if (pl == PLACE_MURMUR2) return sw_partition_of(SW_PARTITIONER_MURMUR2, job, len, partitions);
    if (pl == PLACE_NONE) return (int32_t)(msg_index % (uint64_t)partitions);
    return (int32_t)(job_index % (uint64_t)partitions);
}
