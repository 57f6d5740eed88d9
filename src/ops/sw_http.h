/*
 * The HTTP endpoint of `stormwatch run` (libmicrohttpd, one internal
 * polling thread): GET /metrics (Prometheus text format 0.0.4 from a
 * sw_metrics_t), GET /healthz (liveness: the daemon loop's heartbeat is
 * recent) and GET /readyz (readiness: partitions assigned, lag small).
 * HEAD works like GET; other methods get 405, other paths 404. The server
 * only reads the registry; it never touches Kafka or the engine.
 *
 * Use (sw_cmd_run.c or sw_run()): after the configuration is checked and
 * before the consumer starts,
 *     m = sw_metrics_new();
 *     h = sw_http_start(listen, m, max_lag, SW_HTTP_STALE_MS_DEFAULT,
 *                       errstr, sizeof(errstr));
 *     if (!h) { print errstr; exit 2 (a bad address) }
 *     log "metrics on port %d", sw_http_port(h);
 *     ... sw_run() feeding m (see sw_metrics.h) ...
 *     sw_http_stop(h); sw_metrics_destroy(m);
 */
#ifndef SW_HTTP_H
#define SW_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "sw_metrics.h"

typedef struct sw_http_s sw_http_t;

/** Age after which the daemons' heartbeat counts as stale (/healthz 503):
 *  longer than any one blocking step of their loops (a bounded stop of
 *  30 s, a rebalance, a retried HTTP delivery), so liveness restarts only a
 *  loop that is really stuck. */
#define SW_HTTP_STALE_MS_DEFAULT 90000

/**
 * @brief Bind and start serving in a background thread.
 * @param listen   "host:port", ":port" (all IPv4 interfaces, 0.0.0.0) or
 *                 "[v6addr]:port"; the host may be a name (getaddrinfo;
 *                 the first address that binds wins); port 0 picks a free
 *                 port (see sw_http_port()). Borrowed during the call.
 * @param m        borrowed: must outlive sw_http_stop().
 * @param max_lag  /readyz is 200 while the total lag is at most this many
 *                 messages (>= 0).
 * @param stale_ms /healthz is 503 once the last sw_metrics_heartbeat() is
 *                 this old (> 0; SW_HTTP_STALE_MS_DEFAULT).
 * @returns the server (caller frees with sw_http_stop()), or NULL with
 *          @p errstr naming the address, e.g.
 *          `metrics.listen "127.0.0.1:9090": cannot bind: Address already in use`.
 * @remark Server errors after the start (accept failures, out of
 *         connections) go to stderr as one line each.
 */
sw_http_t *sw_http_start(const char *listen, sw_metrics_t *m, int64_t max_lag, int64_t stale_ms,
                         char *errstr, size_t errstr_size);

/**
 * @brief A second server for the probes only (/healthz, /readyz; /metrics
 *        is 404): clients flooding the metrics port (slow, many) cannot
 *        starve the liveness probe. Same arguments; errors name
 *        health.listen.
 */
sw_http_t *sw_http_start_probes(const char *listen, sw_metrics_t *m, int64_t max_lag,
                                int64_t stale_ms, char *errstr, size_t errstr_size);

/** @brief The port actually bound (the chosen one when asked for 0). */
int sw_http_port(const sw_http_t *h);

/**
 * @brief Stop serving: close the listening socket and every connection,
 *        join the thread, free @p h (accepts NULL). The registry is not
 *        read after this returns.
 */
void sw_http_stop(sw_http_t *h);

#endif /* SW_HTTP_H */
