/*
 * libcurl POSTs for the notify sinks (see sw_notify_http.h). One easy
 * handle per URL, kept between requests so connections are reused. No
 * decisions: the caller classifies the answer with sw_notify_classify().
 */
#include "sw_notify_http.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>
#include <time.h>

#include "sw_alloc.h"
#include "sw_log.h"
#include "sw_notify.h"

#define BODY_MAX (64 * 1024)

struct sw_notify_http_s {
    sw_notify_http_opts_t opts;
    CURL **easy; /* one per URL */
};

static size_t on_body(char *p, size_t size, size_t nmemb, void *opaque)
{
    sw_notify_resp_t *resp = opaque;
    size_t n = size * nmemb;
    if (resp->body.len < BODY_MAX)
        sw_buf_put(&resp->body, p, resp->body.len + n > BODY_MAX ? BODY_MAX - resp->body.len : n);
    return n;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *opaque)
{
    sw_notify_resp_t *resp = opaque;
    size_t n = size * nmemb;
    static const char name[] = "retry-after:";
    if (n > sizeof(name) - 1 && strncasecmp(p, name, sizeof(name) - 1) == 0) {
        size_t vl = n - (sizeof(name) - 1);
        const char *v = p + sizeof(name) - 1;
        while (vl && (*v == ' ' || *v == '\t')) v++, vl--;
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' ')) vl--;
        if (vl >= sizeof(resp->retry_after)) vl = sizeof(resp->retry_after) - 1;
        memcpy(resp->retry_after, v, vl);
        resp->retry_after[vl] = '\0';
    }
    return n;
}

sw_notify_http_t *sw_notify_http_new(const sw_notify_http_opts_t *opts, char *errstr,
                                     size_t errstr_size)
{
    static int inited;
    if (!inited) {
        /* Called from the main thread before any other thread uses curl. */
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
            sw_errfmt(errstr, errstr_size, "libcurl could not be initialised");
            return NULL;
        }
        inited = 1;
    }
    sw_notify_http_t *h = sw_calloc(1, sizeof(*h));
    h->opts = *opts;
    h->easy = sw_calloc(opts->n_urls ? opts->n_urls : 1, sizeof(*h->easy));
    for (size_t i = 0; i < opts->n_urls; i++) {
        h->easy[i] = curl_easy_init();
        if (!h->easy[i]) {
            sw_errfmt(errstr, errstr_size, "libcurl: cannot create a handle for %s", opts->urls[i]);
            sw_notify_http_destroy(h);
            return NULL;
        }
    }
    return h;
}

void sw_notify_http_destroy(sw_notify_http_t *h)
{
    if (!h) return;
    for (size_t i = 0; i < h->opts.n_urls; i++)
        if (h->easy[i]) curl_easy_cleanup(h->easy[i]);
    free(h->easy);
    free(h);
}

long sw_notify_http_post(sw_notify_http_t *h, size_t url_idx, const char *body, size_t len,
                         sw_notify_resp_t *resp)
{
    resp->status = 0;
    resp->retry_after[0] = '\0';
    resp->error[0] = '\0';
    resp->body.len = 0;
    resp->elapsed_ns = 0;
    CURL *c = h->easy[url_idx];
    curl_easy_reset(c);
    struct curl_slist *hdrs = NULL;
    hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
    hdrs = curl_slist_append(hdrs, "Expect:");
    char line[512];
    if (h->opts.bearer_token && *h->opts.bearer_token) {
        snprintf(line, sizeof(line), "Authorization: Bearer %s", h->opts.bearer_token);
        hdrs = curl_slist_append(hdrs, line);
    }
    if (h->opts.hmac_secret && *h->opts.hmac_secret) {
        char sig[72];
        sw_notify_signature(h->opts.hmac_secret, body, len, sig);
        snprintf(line, sizeof(line), "X-Stormwatch-Signature: %s", sig);
        hdrs = curl_slist_append(hdrs, line);
    }
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, h->opts.urls[url_idx]);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "stormwatch-notify/" SW_VERSION);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)h->opts.timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)h->opts.timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, resp);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, resp);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    if (h->opts.basic_auth && *h->opts.basic_auth) {
        curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(c, CURLOPT_USERPWD, h->opts.basic_auth);
    }
    if (h->opts.ca_location && *h->opts.ca_location)
        curl_easy_setopt(c, CURLOPT_CAINFO, h->opts.ca_location);
    int64_t t0 = sw_clock_ns();
    CURLcode rc = curl_easy_perform(c);
    resp->elapsed_ns = sw_clock_ns() - t0;
    if (rc == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
    } else {
        snprintf(resp->error, sizeof(resp->error), "%s", *errbuf ? errbuf : curl_easy_strerror(rc));
        resp->status = 0;
    }
    curl_slist_free_all(hdrs);
    return resp->status;
}
