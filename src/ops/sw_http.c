/*
 * The HTTP endpoint (see sw_http.h). We create, bind and listen on the
 * socket ourselves, so bind errors carry errno's text and port 0 can be
 * read back. A gate thread accepts every connection and hands it to
 * libmicrohttpd only once its request head has arrived (peeked, not read):
 * a head must be complete within GATE_HEAD_MS of the accept, and when
 * GATE_MAX connections wait the oldest is closed to admit a new one. Slow
 * clients (a slowloris from any number of addresses) thus hold nothing
 * that a probe needs: a probe's head arrives at once and is served at
 * once. libmicrohttpd serves from its own thread (epoll where available,
 * so descriptor numbers above FD_SETSIZE are fine). The request handler
 * only reads the registry; it must not block.
 */
#include "sw_http.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "sw_alloc.h"
#include "sw_log.h"
#include "sw_mhd_dl.h"

/* The gate: connections wait here for their request head. */
#define GATE_MAX 512      /* waiting connections; the oldest goes for a new one */
#define GATE_HEAD_MS 2000 /* a request head must arrive within this */
#define GATE_PEEK 8192    /* a longer head goes on as it is (MHD answers it) */
#define GATE_REPEEK_MS 20 /* a partial head is looked at again after this */

typedef struct gate_conn_s {
    int fd;
    int64_t since_ms;     /* accepted at (monotonic) */
    int64_t next_peek_ms; /* 0: wait for data (poll) */
    struct sockaddr_storage sa;
    socklen_t sl;
} gate_conn_t;

struct sw_http_s {
    struct MHD_Daemon *mhd;
    int listen_fd;
    int wake[2]; /* a byte in wake[1] stops the gate thread */
    pthread_t gate;
    bool gate_started;
    gate_conn_t *pend; /* waiting connections, oldest first */
    size_t npend;
    uint64_t gate_dropped; /* closed without a complete head (slow, or the oldest) */
    sw_metrics_t *m;       /* borrowed */
    int64_t max_lag;       /* messages */
    int64_t stale_ms;
    int port;
    pthread_mutex_t log_lock;
    bool starting;          /* log into start_err, not stderr (log_lock) */
    char start_err[512];    /* last libmicrohttpd message while starting */
    sw_log_t mhd_log;       /* libmicrohttpd's messages after starting */
    sw_log_limit_t mhd_lim; /* rate limit: a flood of bad requests is one line a while */
    bool probes_only;       /* /healthz and /readyz only (health.listen) */
};

static const char k_ctype_metrics[] = "text/plain; version=0.0.4; charset=utf-8";
static const char k_ctype_text[] = "text/plain; charset=utf-8";

/* libmicrohttpd's messages: kept for the error text while starting, one
 * stderr line (in the logger's format) afterwards. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    sw_http_t *h = cls;
    char line[512];
    vsnprintf(line, sizeof(line), fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    pthread_mutex_lock(&h->log_lock);
    if (h->starting) {
        snprintf(h->start_err, sizeof(h->start_err), "%s", line);
    } else {
        /* Rate-limited like every other log line: malformed requests are
         * the client's, and a flood of them must not flood the log. */
        sw_log_limited(&h->mhd_log, &h->mhd_lim, SW_LOG_WARN, "%s", line);
    }
    pthread_mutex_unlock(&h->log_lock);
}

/* ---- requests -------------------------------------------------------- */

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned int status, const char *ctype,
                               const char *body, bool allow_hdr)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(body), (void *)body,
                                                                MHD_RESPMEM_MUST_COPY);
    if (!resp) return MHD_NO; /* out of memory: drop the connection */
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    if (allow_hdr) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result respond_metrics(sw_http_t *h, struct MHD_Connection *conn)
{
    sw_buf_t out;
    sw_buf_init(&out);
    sw_metrics_render(h->m, &out);
    /* The response takes the buffer; libmicrohttpd frees it when sent. */
    struct MHD_Response *resp = MHD_create_response_from_buffer_with_free_callback(out.len,
                                                                                   out.data, free);
    if (!resp) {
        sw_buf_clear(&out);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, k_ctype_metrics);
    enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* A probe's answer. On the probe listener the connection is closed after
 * it: a kept-alive connection would be one the gate no longer watches. */
static enum MHD_Result respond_check(struct MHD_Connection *conn, bool ok, const char *why,
                                     bool close_after)
{
    char body[320];
    snprintf(body, sizeof(body), "%s\n", ok ? "ok" : why);
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(body), (void *)body,
                                                                MHD_RESPMEM_MUST_COPY);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, k_ctype_text);
    if (close_after) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(conn, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
                                             resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    (void)version;
    (void)upload_data;
    sw_http_t *h = cls;
    /* Answer only once the whole request is read: a response queued on
     * the first call (headers only) makes libmicrohttpd close the
     * connection, and scrapers reuse theirs. Bodies are discarded. */
    if (!*req_cls) {
        *req_cls = h;
        return MHD_YES;
    }
    if (*upload_data_size) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    enum { R_METRICS, R_HEALTHZ, R_READYZ, R_NONE } route = R_NONE;
    if (strcmp(url, "/metrics") == 0 && !h->probes_only) route = R_METRICS;
    else if (strcmp(url, "/healthz") == 0) route = R_HEALTHZ;
    else if (strcmp(url, "/readyz") == 0) route = R_READYZ;
    if (route == R_NONE)
        return respond(conn, MHD_HTTP_NOT_FOUND, k_ctype_text, "not found\n", false);
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return respond(conn, MHD_HTTP_METHOD_NOT_ALLOWED, k_ctype_text, "method not allowed\n",
                       true);
    char why[256] = "";
    switch (route) {
    case R_METRICS: return respond_metrics(h, conn);
    case R_HEALTHZ: {
        bool ok = sw_metrics_check_health(h->m, sw_clock_ms(), h->stale_ms, why, sizeof(why));
        return respond_check(conn, ok, why, h->probes_only);
    }
    case R_READYZ: {
        bool ok = sw_metrics_check_ready(h->m, h->max_lag, why, sizeof(why));
        return respond_check(conn, ok, why, h->probes_only);
    }
    default: return MHD_NO;
    }
}

/* ---- starting and stopping ------------------------------------------- */

/* Split @p addr into host and port. @returns false with errstr set. */
static bool parse_listen(const char *addr, char *host, size_t host_size, char *port,
                         size_t port_size, char *errstr, size_t errstr_size)
{
    const char *colon;
    const char *h0 = addr, *h1;
    if (addr[0] == '[') {
        const char *rb = strchr(addr, ']');
        if (!rb || rb[1] != ':') goto bad;
        h0 = addr + 1;
        h1 = rb;
        colon = rb + 1;
    } else {
        colon = strrchr(addr, ':');
        if (!colon) goto bad;
        h1 = colon;
        if (memchr(addr, ':', (size_t)(colon - addr))) {
            snprintf(errstr, errstr_size,
                     "metrics.listen \"%s\": an IPv6 address needs brackets, e.g. "
                     "\"[::1]:9090\"",
                     addr);
            return false;
        }
    }
    const char *p = colon + 1;
    char *end = NULL;
    errno = 0;
    long v = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : -1;
    if (v < 0 || v > 65535 || errno || !end || *end || end - p > 5) {
        snprintf(errstr, errstr_size,
                 "metrics.listen \"%s\": port \"%s\" is not an integer (expected 0..65535)", addr,
                 p);
        return false;
    }
    size_t hl = (size_t)(h1 - h0);
    if (hl >= host_size) {
        snprintf(errstr, errstr_size, "metrics.listen \"%s\": host name too long", addr);
        return false;
    }
    memcpy(host, h0, hl);
    host[hl] = '\0';
    snprintf(port, port_size, "%ld", v);
    return true;
bad:
    snprintf(errstr, errstr_size, "metrics.listen \"%s\": expected host:port or :port", addr);
    return false;
}

/* A listening socket on the first address of @p addr that binds.
 * @returns the descriptor, or -1 with errstr set. */
static int listen_socket(const char *addr, char *errstr, size_t errstr_size)
{
    char host[256], port[8];
    if (!parse_listen(addr, host, sizeof(host), port, sizeof(port), errstr, errstr_size)) return -1;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host[0] ? host : "0.0.0.0", port, &hints, &res);
    if (gai) {
        snprintf(errstr, errstr_size, "metrics.listen \"%s\": cannot resolve \"%s\": %s", addr,
                 host, gai_strerror(gai));
        return -1;
    }
    int fd = -1, first_errno = 0;
    const char *first_what = NULL;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        const char *what = "cannot create a socket";
        int s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (s >= 0) {
            int one = 1;
            /* Rebind at once after a restart (TIME_WAIT); Linux still
             * refuses a port another socket listens on. */
            setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
            what = "cannot bind";
            if (bind(s, ai->ai_addr, ai->ai_addrlen) == 0) {
                what = "cannot listen";
                if (listen(s, 64) == 0) {
                    fd = s;
                    break;
                }
            }
        }
        if (!first_what) {
            first_what = what;
            first_errno = errno;
        }
        if (s >= 0) close(s);
    }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(errstr, errstr_size, "metrics.listen \"%s\": %s: %s", addr,
                 first_what ? first_what : "cannot bind",
                 first_what ? strerror(first_errno) : "no address");
    return fd;
}

/* ---- the gate ---------------------------------------------------------- */

/* Close waiting connection @p i; @p dropped: by us (slow, or the oldest). */
static void gate_close(sw_http_t *h, size_t i, bool dropped)
{
    close(h->pend[i].fd);
    memmove(&h->pend[i], &h->pend[i + 1], (h->npend - i - 1) * sizeof(*h->pend));
    h->npend--;
    h->gate_dropped += dropped;
}

static void gate_accept(sw_http_t *h, int64_t now)
{
    for (int k = 0; k < 256; k++) {
        gate_conn_t c;
        c.sl = sizeof(c.sa);
        c.fd = accept4(h->listen_fd, (struct sockaddr *)&c.sa, &c.sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c.fd < 0) {
            /* Out of descriptors: the oldest waiting connection makes room. */
            if ((errno == EMFILE || errno == ENFILE) && h->npend) {
                gate_close(h, 0, true);
                continue;
            }
            return;
        }
        if (h->npend == GATE_MAX) gate_close(h, 0, true);
        c.since_ms = now;
        c.next_peek_ms = 0;
        h->pend[h->npend++] = c;
    }
}

/* Look at connection @p i's head without reading it. @returns true when
 * the connection left the gate (handed to libmicrohttpd or closed). */
static bool gate_peek(sw_http_t *h, size_t i, char *buf, int64_t now)
{
    gate_conn_t *c = &h->pend[i];
    ssize_t n = recv(c->fd, buf, GATE_PEEK, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        c->next_peek_ms = 0;
        return false;
    }
    if (n <= 0) { /* closed by the client, or an error */
        gate_close(h, i, false);
        return true;
    }
    if (n < GATE_PEEK && !memmem(buf, (size_t)n, "\r\n\r\n", 4) &&
        !memmem(buf, (size_t)n, "\n\n", 2)) {
        c->next_peek_ms = now + GATE_REPEEK_MS; /* the data stays readable: no poll */
        return false;
    }
    gate_conn_t done = *c;
    memmove(&h->pend[i], &h->pend[i + 1], (h->npend - i - 1) * sizeof(*h->pend));
    h->npend--;
    /* libmicrohttpd owns the descriptor now (it closes it on failure). */
    MHD_add_connection(h->mhd, done.fd, (const struct sockaddr *)&done.sa, done.sl);
    return true;
}

static void *gate_run(void *opaque)
{
    sw_http_t *h = opaque;
    struct pollfd *pfd = sw_calloc(GATE_MAX + 2, sizeof(*pfd));
    size_t *idx = sw_calloc(GATE_MAX, sizeof(*idx));
    char *buf = sw_malloc(GATE_PEEK);
    for (;;) {
        int64_t now = sw_clock_ms();
        /* Heads that did not arrive in time. */
        for (size_t i = 0; i < h->npend;)
            if (now - h->pend[i].since_ms >= GATE_HEAD_MS) gate_close(h, i, true);
            else i++;
        int64_t wait_ms = 200;
        pfd[0] = (struct pollfd){.fd = h->wake[0], .events = POLLIN};
        pfd[1] = (struct pollfd){.fd = h->listen_fd, .events = POLLIN};
        nfds_t n = 2;
        for (size_t i = 0; i < h->npend; i++) {
            const gate_conn_t *c = &h->pend[i];
            int64_t due = c->since_ms + GATE_HEAD_MS - now;
            if (c->next_peek_ms) {
                int64_t p = c->next_peek_ms - now;
                if (p < due) due = p;
                continue;
            }
            if (due < wait_ms) wait_ms = due;
            idx[n - 2] = i;
            pfd[n++] = (struct pollfd){.fd = c->fd, .events = POLLIN};
        }
        for (size_t i = 0; i < h->npend; i++)
            if (h->pend[i].next_peek_ms && h->pend[i].next_peek_ms - now < wait_ms)
                wait_ms = h->pend[i].next_peek_ms - now;
        if (wait_ms < 0) wait_ms = 0;
        int rc = poll(pfd, n, (int)wait_ms);
        if (rc < 0 && errno != EINTR) break;
        if (pfd[0].revents) break;
        now = sw_clock_ms();
        /* Connections polled for data, then those due for another look;
         * from the last so that removals keep the indexes valid. */
        for (nfds_t k = n; k-- > 2;)
            if (pfd[k].revents) gate_peek(h, idx[k - 2], buf, now);
        for (size_t i = h->npend; i-- > 0;)
            if (h->pend[i].next_peek_ms && h->pend[i].next_peek_ms <= now)
                gate_peek(h, i, buf, now);
        if (pfd[1].revents) gate_accept(h, now);
    }
    free(buf);
    free(idx);
    free(pfd);
    return NULL;
}

static sw_http_t *http_start(const char *prop, const char *addr, sw_metrics_t *m, int64_t max_lag,
                             int64_t stale_ms, bool probes_only, char *errstr, size_t errstr_size);

sw_http_t *sw_http_start(const char *addr, sw_metrics_t *m, int64_t max_lag, int64_t stale_ms,
                         char *errstr, size_t errstr_size)
{
    return http_start("metrics.listen", addr, m, max_lag, stale_ms, false, errstr, errstr_size);
}

sw_http_t *sw_http_start_probes(const char *addr, sw_metrics_t *m, int64_t max_lag,
                                int64_t stale_ms, char *errstr, size_t errstr_size)
{
    return http_start("health.listen", addr, m, max_lag, stale_ms, true, errstr, errstr_size);
}

static sw_http_t *http_start(const char *prop, const char *addr, sw_metrics_t *m, int64_t max_lag,
                             int64_t stale_ms, bool probes_only, char *errstr, size_t errstr_size)
{
    if (!addr || !m) {
        snprintf(errstr, errstr_size, "%s: no address or no registry given", prop);
        return NULL;
    }
    if (max_lag < 0 || stale_ms <= 0) {
        snprintf(errstr, errstr_size,
                 "%s \"%s\": max lag %lld and stale time %lld ms must be >= 0 and > 0", prop, addr,
                 (long long)max_lag, (long long)stale_ms);
        return NULL;
    }
    int fd = listen_socket(addr, errstr, errstr_size);
    if (fd < 0) {
        /* The address helpers name metrics.listen: name the real property. */
        if (strcmp(prop, "metrics.listen") != 0 && strncmp(errstr, "metrics.listen", 14) == 0) {
            char rest[512];
            snprintf(rest, sizeof(rest), "%s", errstr + 14);
            snprintf(errstr, errstr_size, "%s%s", prop, rest);
        }
        return NULL;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int port = -1;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET) port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        else if (ss.ss_family == AF_INET6) port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }

    sw_http_t *h = sw_calloc(1, sizeof(*h));
    h->listen_fd = fd;
    h->wake[0] = h->wake[1] = -1;
    h->m = m;
    h->max_lag = max_lag;
    h->stale_ms = stale_ms;
    h->port = port;
    h->probes_only = probes_only;
    pthread_mutex_init(&h->log_lock, NULL);
    h->mhd_log = sw_log_make(SW_LOG_WARN, "metrics http");
    h->starting = true;
    /* The logger comes first so that no message goes to MHD's own. On
     * failure libmicrohttpd closes fd on almost every path; the few early
     * ones (out of descriptors or memory) leave it open, and we would
     * rather leak it there than close a number another thread reused. */
    h->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_AUTO |
                                  MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC,
                              0, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
                              /* Room for many scrapers, but no one address may
                               * hold more than a few (keep-alive connections,
                               * whose heads the gate no longer sees); probes
                               * have their own listener (health.listen). */
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned int)(probes_only ? 64 : 256),
                              MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                              (unsigned int)(probes_only ? 16 : 32), MHD_OPTION_CONNECTION_TIMEOUT,
                              (unsigned int)(probes_only ? 5 : 10), MHD_OPTION_END);
    pthread_mutex_lock(&h->log_lock);
    h->starting = false;
    pthread_mutex_unlock(&h->log_lock);
    if (!h->mhd) {
        snprintf(errstr, errstr_size, "%s \"%s\": cannot start the HTTP server: %s", prop, addr,
                 h->start_err[0]       ? h->start_err
                 : sw_mhd_load_error() ? sw_mhd_load_error()
                                       : "libmicrohttpd gave no reason");
        goto err;
    }
    h->pend = sw_calloc(GATE_MAX, sizeof(*h->pend));
    int fl = fcntl(fd, F_GETFL); /* the gate accepts until EAGAIN */
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0 || pipe2(h->wake, O_CLOEXEC) != 0 ||
        pthread_create(&h->gate, NULL, gate_run, h) != 0) {
        snprintf(errstr, errstr_size, "%s \"%s\": cannot start the HTTP server: %s", prop, addr,
                 strerror(errno));
        goto err;
    }
    h->gate_started = true;
    return h;
err:
    sw_http_stop(h);
    return NULL;
}

int sw_http_port(const sw_http_t *h)
{
    return h->port;
}

void sw_http_stop(sw_http_t *h)
{
    if (!h) return;
    if (h->gate_started) {
        ssize_t w;
        do w = write(h->wake[1], "x", 1);
        while (w < 0 && errno == EINTR);
        pthread_join(h->gate, NULL);
    }
    for (size_t i = 0; i < h->npend; i++) close(h->pend[i].fd);
    free(h->pend);
    for (int k = 0; k < 2; k++)
        if (h->wake[k] >= 0) close(h->wake[k]);
    if (h->mhd) MHD_stop_daemon(h->mhd); /* joins its thread */
    if (h->listen_fd >= 0) close(h->listen_fd);
    pthread_mutex_destroy(&h->log_lock);
    free(h);
}
