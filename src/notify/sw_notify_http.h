/*
 * The HTTP client of `stormwatch notify`: one POST of a JSON body to one
 * URL of a sink, through the project's libcurl client (sw_httpc.h) with the
 * sink's timeout, auth (bearer token or basic), TLS CA file and, for
 * webhooks, the HMAC-SHA256 signature header. It reports what the server
 * answered (status, Retry-After, body) and decides nothing: retries,
 * dead-lettering and pacing are sw_notify.h's.
 */
#ifndef SW_NOTIFY_HTTP_H
#define SW_NOTIFY_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"
#include "sw_httpc.h"
#include "sw_types.h"

/** Settings of one sink (strings borrowed: must outlive the client). */
typedef struct sw_notify_http_opts_s {
    const char *const *urls; /**< one or more URLs (an Alertmanager HA pair) */
    size_t n_urls;
    int64_t timeout_ms;       /**< whole request, connection included */
    const char *bearer_token; /**< NULL or "": no Authorization: Bearer */
    const char *basic_auth;   /**< "user:password"; NULL or "": none */
    const char *ca_location;  /**< PEM CA file for https; NULL or "": system CAs */
    const char *hmac_secret;  /**< NULL or "": unsigned; else X-Stormwatch-Signature */
} sw_notify_http_opts_t;

/** What one request got back (the body: its first 64 KiB). */
typedef sw_httpc_resp_t sw_notify_resp_t;

typedef struct sw_notify_http_s sw_notify_http_t;

/**
 * @brief A client for one sink (libcurl's global init is done once per
 *        process by the first call).
 * @returns caller frees with sw_notify_http_destroy(); NULL with errstr.
 */
sw_notify_http_t *sw_notify_http_new(const sw_notify_http_opts_t *opts, char *errstr,
                                     size_t errstr_size);

/** @brief Free @p h (NULL accepted). */
void sw_notify_http_destroy(sw_notify_http_t *h);

/**
 * @brief POST @p body (application/json) to URL number @p url_idx.
 * @param resp filled (its body buffer reused: sw_buf_init() it once,
 *        sw_buf_clear() when done).
 * @returns resp->status (0: no answer).
 */
long sw_notify_http_post(sw_notify_http_t *h, size_t url_idx, const char *body, size_t len,
                         sw_notify_resp_t *resp);

#endif /* SW_NOTIFY_HTTP_H */
