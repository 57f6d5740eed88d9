/*
 * POSTs for the notify sinks (see sw_notify_http.h) through sw_httpc: one
 * client per URL, kept between requests so connections are reused. No
 * decisions: the caller classifies the answer with sw_notify_classify().
 */
#include "sw_notify_http.h"

#include <stdio.h>
#include <stdlib.h>

#include "sw_alloc.h"
#include "sw_notify.h"

#define BODY_MAX (64 * 1024)

struct sw_notify_http_s {
    sw_notify_http_opts_t opts;
    sw_httpc_t **httpc; /* one per URL, so that each keeps its connection */
};

sw_notify_http_t *sw_notify_http_new(const sw_notify_http_opts_t *opts, char *errstr,
                                     size_t errstr_size)
{
    sw_notify_http_t *h = sw_calloc(1, sizeof(*h));
    h->opts = *opts;
    h->httpc = sw_calloc(opts->n_urls ? opts->n_urls : 1, sizeof(*h->httpc));
    const sw_httpc_opts_t ho = {
        .user_agent = "stormwatch-notify/" SW_VERSION,
        .timeout_ms = opts->timeout_ms,
        .basic_auth = opts->basic_auth,
        .bearer_token = opts->bearer_token,
        .ca_location = opts->ca_location,
        .body_max = BODY_MAX, /* kept for the log and the dead letter; the rest is read */
    };
    for (size_t i = 0; i < opts->n_urls; i++) {
        h->httpc[i] = sw_httpc_new(&ho, errstr, errstr_size);
        if (!h->httpc[i]) {
            sw_notify_http_destroy(h);
            return NULL;
        }
    }
    return h;
}

void sw_notify_http_destroy(sw_notify_http_t *h)
{
    if (!h) return;
    for (size_t i = 0; i < h->opts.n_urls; i++) sw_httpc_destroy(h->httpc[i]);
    free(h->httpc);
    free(h);
}

long sw_notify_http_post(sw_notify_http_t *h, size_t url_idx, const char *body, size_t len,
                         sw_notify_resp_t *resp)
{
    const char *hdrs[2] = {"Content-Type: application/json"};
    size_t n = 1;
    char sig_line[128];
    if (h->opts.hmac_secret && *h->opts.hmac_secret) {
        char sig[72];
        sw_notify_signature(h->opts.hmac_secret, body, len, sig);
        snprintf(sig_line, sizeof(sig_line), "X-Stormwatch-Signature: %s", sig);
        hdrs[n++] = sig_line;
    }
    return sw_httpc_request(h->httpc[url_idx], h->opts.urls[url_idx], hdrs, n, body, len, resp);
}
