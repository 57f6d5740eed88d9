/*
 * The one libcurl client of stormwatch: the schema registry client and
 * notify's sinks send every request through it, so timeouts, the cap on an
 * answer's size, TLS files, auth, what is read back (status, body,
 * Retry-After) and the redaction of URL credentials in errors are decided
 * once. It sends and reports; retries, fail-over between URLs and what an
 * answer means are the caller's.
 */
#ifndef SW_HTTPC_H
#define SW_HTTPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_types.h"

/** Settings of one client (strings borrowed: must outlive the client). */
typedef struct sw_httpc_opts_s {
    const char *user_agent;    /**< User-Agent header, e.g. "stormwatch/1.0" */
    int64_t timeout_ms;        /**< whole request, connection included, ms (> 0) */
    const char *basic_auth;    /**< "user:password" (secret); NULL or "": none */
    const char *bearer_token;  /**< Authorization: Bearer (secret); NULL or "": none */
    const char *ca_location;   /**< PEM CA file for https; NULL or "": the system's */
    const char *cert_location; /**< PEM client certificate; NULL or "": none */
    const char *key_location;  /**< PEM key of cert_location; NULL or "": none */
    size_t body_max;           /**< bytes of an answer's body kept (> 0) */
    bool body_max_fails;       /**< a longer body ends the request (status 0,
                                    body_over) instead of being cut to body_max */
} sw_httpc_opts_t;

/** What one request got back. */
typedef struct sw_httpc_resp_s {
    long status;          /**< HTTP status; 0 when no (complete) answer, see error */
    char retry_after[64]; /**< the Retry-After header, trimmed ("" when none) */
    sw_buf_t body;        /**< the answer's body, at most body_max bytes */
    bool body_over;       /**< body_max_fails and the body passed body_max */
    bool timed_out;       /**< timeout_ms passed before the answer ended */
    char error[256];      /**< why status is 0 (libcurl's reason, URL credentials redacted) */
    int64_t elapsed_ns;   /**< time the request took, ns */
} sw_httpc_resp_t;

typedef struct sw_httpc_s sw_httpc_t;

/**
 * @brief A client: one libcurl easy handle, kept between requests so that
 *        connections are reused. libcurl's global initialisation is done
 *        once per process, by the first call from any thread.
 * @returns caller frees with sw_httpc_destroy(); NULL with @p errstr when
 *          libcurl cannot be initialised.
 */
sw_httpc_t *sw_httpc_new(const sw_httpc_opts_t *opts, char *errstr, size_t errstr_size);

/** @brief Free @p c (NULL accepted). */
void sw_httpc_destroy(sw_httpc_t *c);

/** @brief Prepare @p resp for sw_httpc_request() (its body buffer is reused). */
void sw_httpc_resp_init(sw_httpc_resp_t *resp);

/** @brief Free what @p resp holds; it may be initialised again. */
void sw_httpc_resp_clear(sw_httpc_resp_t *resp);

/**
 * @brief One request to @p url (http:// or https:// only; redirects are
 *        not followed): a GET, or a POST of @p body when it is not NULL.
 * @param headers @p n_headers extra "Name: value" lines (borrowed during
 *        the call), e.g. the Content-Type of the body; "Expect:" is always
 *        sent empty (no 100-continue round trip).
 * @param resp filled (initialised with sw_httpc_resp_init()).
 * @returns resp->status: the HTTP status, or 0 with resp->error (and
 *          resp->body_over or resp->timed_out when that was why).
 * @remark One request at a time per client (one thread, or the caller's lock).
 */
long sw_httpc_request(sw_httpc_t *c, const char *url, const char *const *headers, size_t n_headers,
                      const char *body, size_t len, sw_httpc_resp_t *resp);

#endif /* SW_HTTPC_H */
