/*
 * Tests of the HTTP endpoint: real HTTP over loopback with a small socket
 * client (routes, status codes, headers, bind errors, port 0, repeated
 * start/stop without leaking descriptors, a log flood, slow clients and
 * slowloris from many addresses).
 */
#include "http_check.h"

/* ---- a tiny HTTP client ------------------------------------------------ */

typedef struct resp_s {
    int status;
    char head[2048]; /* status line and headers */
    char body[65536];
    size_t body_len;
} resp_t;

/* Send @p raw over a fresh connection and read to EOF (5 s deadline per
 * read) into @p in. @returns 0, or -1 with a message. */
static int http_raw(int port, const char *raw, sw_buf_t *in)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    SW_ASSERT(fd >= 0, "socket: %s", strerror(errno));
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        fprintf(stderr, "connect to port %d: %s\n", port, strerror(errno));
        close(fd);
        return -1;
    }
    size_t n = strlen(raw);
    if (send(fd, raw, n, MSG_NOSIGNAL) != (ssize_t)n) {
        fprintf(stderr, "send: %s\n", strerror(errno));
        close(fd);
        return -1;
    }
    char chunk[4096];
    ssize_t got;
    while ((got = recv(fd, chunk, sizeof(chunk), 0)) > 0) sw_buf_put(in, chunk, (size_t)got);
    if (got < 0) fprintf(stderr, "recv: %s\n", strerror(errno));
    close(fd);
    sw_buf_cstr(in);
    return got < 0 ? -1 : 0;
}

/* One request (Connection: close), split into status, headers and body.
 * @returns 0, or -1 with a message. */
static int http(int port, const char *method, const char *path, const char *body, resp_t *r)
{
    memset(r, 0, sizeof(*r));
    char req[512];
    snprintf(req, sizeof(req),
             "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
             "Content-Length: %zu\r\n\r\n%s",
             method, path, body ? strlen(body) : 0, body ? body : "");
    sw_buf_t in;
    sw_buf_init(&in);
    int rc = http_raw(port, req, &in);
    const char *text = sw_buf_cstr(&in);
    const char *sep = strstr(text, "\r\n\r\n");
    if (!rc && (!sep || sscanf(text, "HTTP/1.%*d %d", &r->status) != 1)) {
        fprintf(stderr, "not an HTTP response: %s\n", text);
        rc = -1;
    }
    if (!rc) {
        size_t hl = (size_t)(sep - text) + 2;
        snprintf(r->head, sizeof(r->head), "%.*s", (int)hl, text);
        r->body_len = in.len - hl - 2;
        if (r->body_len >= sizeof(r->body)) rc = -1;
        else memcpy(r->body, sep + 4, r->body_len + 1);
    }
    sw_buf_clear(&in);
    return rc;
}

/* The value of a response header, or "" (case-insensitive name). */
static const char *header(const resp_t *r, const char *name, char *out, size_t out_size)
{
    out[0] = '\0';
    size_t nl = strlen(name);
    for (const char *p = strstr(r->head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n")) {
        const char *l = p + 2;
        if (strncasecmp(l, name, nl) == 0 && l[nl] == ':') {
            const char *v = l + nl + 1;
            while (*v == ' ') v++;
            const char *e = strstr(v, "\r\n");
            snprintf(out, out_size, "%.*s", (int)(e ? e - v : (long)strlen(v)), v);
            break;
        }
    }
    return out;
}

#define ASSERT_HTTP(port, method, path, want_status, want_body)                                 \
    do {                                                                                        \
        resp_t *r_ = &g_resp;                                                                   \
        SW_ASSERT(http((port), (method), (path), NULL, r_) == 0, "%s %s failed", (method),      \
                  (path));                                                                      \
        SW_ASSERT(r_->status == (want_status), "%s %s: status %d, want %d; body: %s", (method), \
                  (path), r_->status, (want_status), r_->body);                                 \
        if (want_body) SW_ASSERT_STREQ(r_->body, (const char *)(want_body));                    \
    } while (0)

static resp_t g_resp;

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

/* ---- HTTP tests --------------------------------------------------------- */

static void test_http_routes(void **state)
{
    (void)state;
    sw_metrics_t *m = sw_metrics_new();
    char err[256] = "";
    sw_http_t *h = sw_http_start("127.0.0.1:0", m, 100, 30000, err, sizeof(err));
    SW_ASSERT(h, "start: %s", err);
    int port = sw_http_port(h);
    SW_ASSERT(port > 0 && port < 65536, "port %d", port);
    char hv[256];

    sw_metrics_add(m, SW_M_COMMITS, 42);
    SW_ASSERT(http(port, "GET", "/metrics", NULL, &g_resp) == 0, "GET /metrics");
    SW_ASSERT_I64(g_resp.status, 200);
    SW_ASSERT_STREQ(header(&g_resp, "Content-Type", hv, sizeof(hv)),
                    "text/plain; version=0.0.4; charset=utf-8");
    sw_buf_t want;
    sw_buf_init(&want);
    sw_metrics_render(m, &want);
    SW_ASSERT_STREQ(g_resp.body, sw_buf_cstr(&want));
    sw_buf_clear(&want);
    SW_ASSERT_I64(check_exposition(g_resp.body), 0);
    SW_ASSERT_CONTAINS(g_resp.body, "\nstormwatch_commits_total 42\n");
    ASSERT_HTTP(port, "GET", "/metrics?name[]=up", 200, NULL);
    SW_ASSERT_CONTAINS(g_resp.body, "\nstormwatch_up 1\n");
    ASSERT_HTTP(port, "HEAD", "/metrics", 200, "");

    ASSERT_HTTP(port, "GET", "/", 404, "not found\n");
    ASSERT_HTTP(port, "GET", "/metricsx", 404, "not found\n");
    ASSERT_HTTP(port, "DELETE", "/healthz", 405, "method not allowed\n");
    SW_ASSERT_STREQ(header(&g_resp, "Allow", hv, sizeof(hv)), "GET, HEAD");
    SW_ASSERT(http(port, "POST", "/metrics", "a=b&c=d", &g_resp) == 0, "POST /metrics");
    SW_ASSERT_I64(g_resp.status, 405);
    SW_ASSERT_STREQ(g_resp.body, "method not allowed\n");

    /* Liveness follows the heartbeat (same monotonic clock as the server). */
    ASSERT_HTTP(port, "GET", "/healthz", 503, "no heartbeat yet\n");
    SW_ASSERT_STREQ(header(&g_resp, "Content-Type", hv, sizeof(hv)), "text/plain; charset=utf-8");
    sw_metrics_heartbeat(m, sw_clock_ms());
    ASSERT_HTTP(port, "GET", "/healthz", 200, "ok\n");
    sw_metrics_heartbeat(m, sw_clock_ms() - 45000);
    ASSERT_HTTP(port, "GET", "/healthz", 503, NULL);
    SW_ASSERT(strncmp(g_resp.body, "stale: last heartbeat 45.", 25) == 0 &&
                  strstr(g_resp.body, " s ago (limit 30.0 s)\n"),
              "body: %s", g_resp.body);
    sw_metrics_heartbeat(m, sw_clock_ms());
    ASSERT_HTTP(port, "GET", "/healthz", 200, "ok\n");

    /* Readiness: not assigned -> assigned and caught up -> lagging. */
    ASSERT_HTTP(port, "GET", "/readyz", 503, "no partitions assigned\n");
    sw_metrics_set_ready_state(m, true, 5);
    ASSERT_HTTP(port, "GET", "/readyz", 200, "ok\n");
    sw_metrics_set_ready_state(m, true, 12345);
    ASSERT_HTTP(port, "GET", "/readyz", 503, "lagging: 12345 messages behind (limit 100)\n");
    sw_metrics_set_ready_state(m, true, 100);
    ASSERT_HTTP(port, "GET", "/readyz", 200, "ok\n");

    /* Keep-alive (as Prometheus scrapes): pipelined requests on one
     * connection, each answered in turn; a body is read and dropped. */
    sw_buf_t in;
    sw_buf_init(&in);
    SW_ASSERT(http_raw(port,
                       "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                       "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\na=b&c=d"
                       "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
                       "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                       &in) == 0,
              "pipelined requests");
    char statuses[64] = "";
    for (const char *p = strstr(in.data, "HTTP/1.1 "); p; p = strstr(p + 1, "HTTP/1.1 "))
        snprintf(statuses + strlen(statuses), sizeof(statuses) - strlen(statuses), "%.3s ", p + 9);
    SW_ASSERT(strcmp(statuses, "200 405 404 200 ") == 0, "statuses \"%s\" on one connection:\n%s",
              statuses, in.data);
    sw_buf_clear(&in);

    sw_http_stop(h);
    sw_http_stop(NULL);
    sw_metrics_destroy(m);
}

static void test_bind_errors(void **state)
{
    (void)state;
    sw_metrics_t *m = sw_metrics_new();
    char err[256] = "", want[256], addr[64];
    sw_http_t *h = sw_http_start("127.0.0.1:0", m, 0, 1000, err, sizeof(err));
    SW_ASSERT(h, "start: %s", err);
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", sw_http_port(h));
    SW_ASSERT(!sw_http_start(addr, m, 0, 1000, err, sizeof(err)), "bound %s twice", addr);
    snprintf(want, sizeof(want), "metrics.listen \"%s\": cannot bind: Address already in use",
             addr);
    SW_ASSERT_STREQ(err, want);
    /* The first server still answers. */
    ASSERT_HTTP(sw_http_port(h), "GET", "/readyz", 503, "no partitions assigned\n");
    sw_http_stop(h);

#define PORT_ERR(a, p) \
    "metrics.listen \"" a "\": port \"" p "\" is not an integer (expected 0..65535)"
    static const struct {
        const char *listen, *err;
    } bad[] = {
        {"", "metrics.listen \"\": expected host:port or :port"},
        {"9090", "metrics.listen \"9090\": expected host:port or :port"},
        {"[::1:80", "metrics.listen \"[::1:80\": expected host:port or :port"},
        {"[::1]80", "metrics.listen \"[::1]80\": expected host:port or :port"},
        {":http", PORT_ERR(":http", "http")},
        {":65536", PORT_ERR(":65536", "65536")},
        {":-1", PORT_ERR(":-1", "-1")},
        {"host:", PORT_ERR("host:", "")},
        {":80x", PORT_ERR(":80x", "80x")},
        {"::1:80",
         "metrics.listen \"::1:80\": an IPv6 address needs brackets, e.g. \"[::1]:9090\""},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        sw_http_t *hb = sw_http_start(bad[i].listen, m, 0, 1000, err, sizeof(err));
        SW_ASSERT(!hb, "\"%s\" accepted", bad[i].listen);
        SW_ASSERT_STREQ(err, bad[i].err);
    }
    SW_ASSERT(!sw_http_start(":0", m, 0, 0, err, sizeof(err)), "stale 0 accepted");
    SW_ASSERT_STREQ(err,
                    "metrics.listen \":0\": max lag 0 and stale time 0 ms must be >= 0 and > 0");
    SW_ASSERT(!sw_http_start(":0", m, -1, 1000, err, sizeof(err)), "max lag -1 accepted");
    SW_ASSERT(!sw_http_start(NULL, m, 0, 1000, err, sizeof(err)), "NULL accepted");
    sw_metrics_destroy(m);
}

static void test_port_zero(void **state)
{
    (void)state;
    sw_metrics_t *m = sw_metrics_new();
    char err[256] = "";
    sw_http_t *h1 = sw_http_start(":0", m, 0, 1000, err, sizeof(err));
    SW_ASSERT(h1, "start: %s", err);
    sw_http_t *h2 = sw_http_start("localhost:0", m, 0, 1000, err, sizeof(err));
    SW_ASSERT(h2, "start: %s", err);
    SW_ASSERT(sw_http_port(h1) > 0 && sw_http_port(h2) > 0 && sw_http_port(h1) != sw_http_port(h2),
              "ports %d and %d", sw_http_port(h1), sw_http_port(h2));
    sw_metrics_heartbeat(m, sw_clock_ms());
    ASSERT_HTTP(sw_http_port(h1), "GET", "/healthz", 200, "ok\n");
    /* localhost may resolve to ::1 first; reach it over IPv4 only when
     * that is what was bound. */
    sw_http_stop(h2);
    /* IPv6, where the host has it. */
    h2 = sw_http_start("[::1]:0", m, 0, 1000, err, sizeof(err));
    if (h2) {
        SW_ASSERT(sw_http_port(h2) > 0, "IPv6 port %d", sw_http_port(h2));
        sw_http_stop(h2);
    } else {
        SW_ASSERT(strstr(err, "cannot bind") || strstr(err, "cannot create a socket") ||
                      strstr(err, "cannot resolve"),
                  "IPv6 start failed oddly: %s", err);
        printf("     (no IPv6 loopback here: %s)\n", err);
    }
    sw_http_stop(h1);
    sw_metrics_destroy(m);
}

/* Stop and start on the same port many times; descriptors do not leak
 * (ASan's leak check covers memory). */
static void test_restart(void **state)
{
    (void)state;
    sw_metrics_t *m = sw_metrics_new();
    char err[256] = "", addr[64];
    sw_http_t *h = sw_http_start("127.0.0.1:0", m, 0, 1000, err, sizeof(err));
    SW_ASSERT(h, "start: %s", err);
    int port = sw_http_port(h);
    ASSERT_HTTP(port, "GET", "/metrics", 200, NULL);
    sw_http_stop(h);
    int fds = count_fds();
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
    for (int i = 0; i < 40; i++) {
        /* The port has connections in TIME_WAIT: SO_REUSEADDR lets us rebind. */
        h = sw_http_start(addr, m, 0, 1000, err, sizeof(err));
        SW_ASSERT(h, "restart %d: %s", i, err);
        SW_ASSERT_I64(sw_http_port(h), port);
        sw_metrics_add(m, SW_M_REBALANCES, 1);
        ASSERT_HTTP(port, "GET", "/metrics", 200, NULL);
        double v = 0;
        SW_ASSERT(sample_value(g_resp.body, "stormwatch_rebalances_total", &v) && v == i + 1,
                  "restart %d: rebalances %g", i, v);
        if (i % 2) ASSERT_HTTP(port, "GET", "/readyz", 503, NULL);
        sw_http_stop(h);
    }
    SW_ASSERT_I64(count_fds(), fds);
    sw_metrics_destroy(m);
}

/* A flood of malformed requests: libmicrohttpd's complaints go through the
 * rate-limited log (at most 10 lines per 10 s, then a count), not one line
 * per request. */
static void test_log_flood(void **state)
{
    (void)state;
    sw_metrics_t *m = sw_metrics_new();
    char err[256] = "";
    char path[1024];
    snprintf(path, sizeof(path), "%s/http-flood.log", getenv("SW_TMP") ? getenv("SW_TMP") : "/tmp");
    mkdir(getenv("SW_TMP") ? getenv("SW_TMP") : "/tmp", 0755);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    SW_ASSERT(saved >= 0 && fd >= 0, "redirect stderr to %s", path);
    dup2(fd, 2);
    close(fd);
    sw_http_t *h = sw_http_start("127.0.0.1:0", m, 100, 30000, err, sizeof(err));
    int port = h ? sw_http_port(h) : 0;
    int sent = 0;
    for (int i = 0; h && i < 300; i++) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a;
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) == 0) {
            static const char bad[] = "GET /metrics HTTP/1.1\r\nthis line has no colon\r\n\r\n";
            if (write(s, bad, sizeof(bad) - 1) == (ssize_t)(sizeof(bad) - 1)) sent++;
            char buf[512];
            while (read(s, buf, sizeof(buf)) > 0) {
            }
        }
        if (s >= 0) close(s);
    }
    /* Probes are still answered. */
    int probe = h ? http(port, "GET", "/metrics", NULL, &g_resp) : -1;
    sw_http_stop(h);
    sw_metrics_destroy(m);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    SW_ASSERT(h, "start: %s", err);
    SW_ASSERT(sent == 300, "sent %d malformed requests", sent);
    SW_ASSERT(probe == 0 && g_resp.status == 200, "/metrics answered during the flood");
    sw_buf_t log;
    sw_buf_init(&log);
    SW_ASSERT(sw_test_read_file(path, &log), "read %s", path);
    size_t lines = 0;
    for (size_t i = 0; i < log.len; i++) lines += log.data[i] == '\n';
    printf("log flood: 300 malformed requests, %zu log lines\n", lines);
    SW_ASSERT(lines >= 1 && lines <= 12, "%zu log lines for 300 malformed requests:\n%s", lines,
              sw_buf_cstr(&log));
    sw_buf_clear(&log);
}

/* Slow clients: 200 connections to the metrics port that send a header
 * line every 2 s and never finish their request. The metrics server lets
 * no address hold more than 32 of them; the probe server (health.listen)
 * answers every /healthz and /readyz meanwhile. */
static int slow_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    send(fd, "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL);
    return fd;
}

static void test_slow_clients(void **state)
{
    (void)state;
    sw_metrics_t *m = sw_metrics_new();
    sw_metrics_heartbeat(m, sw_clock_ms());
    char err[256] = "";
    sw_http_t *h = sw_http_start("127.0.0.1:0", m, 100, 30000, err, sizeof(err));
    SW_ASSERT(h, "start: %s", err);
    sw_http_t *p = sw_http_start_probes("127.0.0.1:0", m, 100, 30000, err, sizeof(err));
    SW_ASSERT(p, "start probes: %s", err);
    SW_ASSERT(!sw_http_start_probes("127.0.0.1:x", m, 100, 30000, err, sizeof(err)),
              "bad port accepted");
    SW_ASSERT_CONTAINS(err, "health.listen \"127.0.0.1:x\"");
    int mport = sw_http_port(h), pport = sw_http_port(p);
    enum { N = 200 };
    int fds[N], open_n = 0;
    for (int i = 0; i < N; i++) {
        fds[i] = slow_connect(mport);
        open_n += fds[i] >= 0;
    }
    int answered = 0, probes = 0, refused_metrics = 0;
    for (int round = 0; round < 12; round++) {
        for (int i = 0; i < N; i++)
            if (fds[i] >= 0 && send(fds[i], "X-Slow: 1\r\n", 11, MSG_NOSIGNAL) < 0) {
                close(fds[i]);
                fds[i] = -1;
            }
        for (int k = 0; k < 2; k++) {
            probes++;
            if (http(pport, "GET", k ? "/readyz" : "/healthz", NULL, &g_resp) == 0 &&
                (g_resp.status == 200 || (k && g_resp.status == 503)))
                answered++;
        }
        usleep(1000000);
    }
    /* The probe server serves no metrics. */
    ASSERT_HTTP(pport, "GET", "/metrics", 404, NULL);
    int still = 0;
    for (int i = 0; i < N; i++)
        if (fds[i] >= 0) {
            char c;
            ssize_t r = recv(fds[i], &c, 1, MSG_DONTWAIT);
            if (r == 0) refused_metrics++; /* closed by the server */
            else still++;
            close(fds[i]);
        }
    printf(
        "slow clients: %d connected, %d still open after 12 s (per-address cap 32); probes "
        "answered %d of %d\n",
        open_n, still, answered, probes);
    SW_ASSERT(answered == probes, "the probe server answered %d of %d probes", answered, probes);
    SW_ASSERT(still <= 40, "%d slow connections held the metrics server", still);
    sw_http_stop(p);
    sw_http_stop(h);
    sw_metrics_destroy(m);
    (void)refused_metrics;
}

/* A spread-out slowloris (issue 28): 200 slow connections to each
 * listener from 8 loopback addresses (127.0.0.2-9), re-opened as soon as
 * the server closes one, each sending a header line every 250 ms and
 * never finishing. Meanwhile /healthz is probed on both listeners from
 * 127.0.0.1: at least 95% of the probes are answered 200 within 2 s. */
static int slow_connect_from(int port, int src)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(0x7f000000u | (uint32_t)src);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    send(fd, "GET /healthz HTTP/1.1\r\n", 24, MSG_NOSIGNAL);
    return fd;
}

/* GET /healthz with every step bounded by 2 s. @returns the status, or
 * -1; *ms the time it took. */
static int probe_timed(int port, int64_t *ms)
{
    int64_t t0 = sw_clock_ms();
    int fd = socket(AF_INET, SOCK_STREAM, 0), status = -1;
    *ms = 0;
    if (fd < 0) return -1;
    struct timeval tv = {2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof(req) - 1)) {
        char buf[256];
        size_t n = 0;
        ssize_t r;
        while (n < sizeof(buf) - 1 && sw_clock_ms() - t0 < 2000 &&
               (r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0)) > 0)
            n += (size_t)r;
        buf[n] = '\0';
        if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1) status = -1;
    }
    close(fd);
    *ms = sw_clock_ms() - t0;
    return status;
}

static void test_slowloris_many_addresses(void **state)
{
    (void)state;
    /* 127.0.0.2-9 must be usable as sources (Linux routes 127/8 to lo). */
    int chk = slow_connect_from(9, 9);
    if (chk < 0) {
        printf("slowloris: cannot bind 127.0.0.9 here; skipped\n");
        skip();
    }
    close(chk);
    sw_metrics_t *m = sw_metrics_new();
    sw_metrics_heartbeat(m, sw_clock_ms());
    char err[256] = "";
    sw_http_t *srv[2];
    srv[0] = sw_http_start_probes("127.0.0.1:0", m, 100, 600000, err, sizeof(err));
    SW_ASSERT(srv[0], "start probes: %s", err);
    srv[1] = sw_http_start("127.0.0.1:0", m, 100, 600000, err, sizeof(err));
    SW_ASSERT(srv[1], "start: %s", err);
    enum { N = 200, ROUNDS = 40 };
    int fds[2][N];
    uint64_t reopened = 0;
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < N; i++) fds[s][i] = slow_connect_from(sw_http_port(srv[s]), 2 + i % 8);
    int ok[2] = {0, 0}, probes[2] = {0, 0};
    int64_t worst[2] = {0, 0};
    for (int round = 0; round < ROUNDS; round++) {
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < N; i++) {
                char c;
                if (fds[s][i] >= 0 && (send(fds[s][i], "X-a: b\r\n", 8, MSG_NOSIGNAL) < 0 ||
                                       recv(fds[s][i], &c, 1, MSG_DONTWAIT) == 0)) {
                    close(fds[s][i]);
                    fds[s][i] = -1;
                }
                if (fds[s][i] < 0) {
                    fds[s][i] = slow_connect_from(sw_http_port(srv[s]), 2 + i % 8);
                    reopened++;
                }
            }
        for (int s = 0; s < 2; s++) {
            int64_t ms = 0;
            int st = probe_timed(sw_http_port(srv[s]), &ms);
            probes[s]++;
            if (st == 200 && ms <= 2000) ok[s]++;
            if (ms > worst[s]) worst[s] = ms;
        }
        usleep(250000);
    }
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < N; i++)
            if (fds[s][i] >= 0) close(fds[s][i]);
    printf(
        "slowloris: 2 x %d slow connections from 8 addresses (%llu re-opened after the "
        "server closed them): /healthz answered within 2 s %d of %d (health.listen, worst "
        "%lld ms) and %d of %d (metrics.listen, worst %lld ms)\n",
        N, (unsigned long long)reopened, ok[0], probes[0], (long long)worst[0], ok[1], probes[1],
        (long long)worst[1]);
    for (int s = 0; s < 2; s++)
        SW_ASSERT(ok[s] * 100 >= probes[s] * 95, "listener %d: %d of %d probes answered in time", s,
                  ok[s], probes[s]);
    SW_ASSERT(reopened > 0, "no slow connection was ever closed by the server");
    sw_http_stop(srv[1]);
    sw_http_stop(srv[0]);
    sw_metrics_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_routes),
        cmocka_unit_test(test_bind_errors),
        cmocka_unit_test(test_port_zero),
        cmocka_unit_test(test_restart),
        cmocka_unit_test(test_log_flood),
        cmocka_unit_test(test_slow_clients),
        cmocka_unit_test(test_slowloris_many_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
