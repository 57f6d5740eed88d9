/*
 * libcurl requests for the registry and notify (see sw_httpc.h): one easy
 * handle per client, reset and set up the same way for every request.
 * Decides nothing about the answer; never exits.
 */
#include "sw_httpc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sw_alloc.h"
#include "sw_curl_dl.h"
#include "sw_err.h"
#include "sw_log.h"
#include "sw_redact.h"

struct sw_httpc_s {
    sw_httpc_opts_t opts;
    CURL *easy;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc; /* written once, under global_once */

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

sw_httpc_t *sw_httpc_new(const sw_httpc_opts_t *opts, char *errstr, size_t errstr_size)
{
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK) {
        sw_errfmt(errstr, errstr_size, "libcurl could not be initialised: %s",
                  curl_easy_strerror(global_rc));
        return NULL;
    }
    sw_httpc_t *c = sw_calloc(1, sizeof(*c));
    c->opts = *opts;
    c->easy = curl_easy_init();
    if (!c->easy) {
        sw_errfmt(errstr, errstr_size, "libcurl: cannot create a handle");
        sw_httpc_destroy(c);
        return NULL;
    }
    return c;
}

void sw_httpc_destroy(sw_httpc_t *c)
{
    if (!c) return;
    if (c->easy) curl_easy_cleanup(c->easy);
    free(c);
}

void sw_httpc_resp_init(sw_httpc_resp_t *resp)
{
    memset(resp, 0, sizeof(*resp));
    sw_buf_init(&resp->body);
}

void sw_httpc_resp_clear(sw_httpc_resp_t *resp)
{
    sw_buf_clear(&resp->body);
}

typedef struct sink_s {
    sw_httpc_resp_t *resp;
    size_t max;
    bool fail;
} sink_t;

static size_t on_body(char *p, size_t size, size_t nmemb, void *opaque)
{
    sink_t *s = opaque;
    size_t n = size * nmemb;
    sw_buf_t *b = &s->resp->body;
    if (b->len + n > s->max) {
        if (s->fail) {
            s->resp->body_over = true;
            return 0; /* curl stops reading: CURLE_WRITE_ERROR */
        }
        if (b->len < s->max) sw_buf_put(b, p, s->max - b->len);
        return n; /* the rest is read and dropped */
    }
    sw_buf_put(b, p, n);
    return n;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *opaque)
{
    sw_httpc_resp_t *resp = opaque;
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

static bool set(const char *s)
{
    return s && *s;
}

long sw_httpc_request(sw_httpc_t *c, const char *url, const char *const *headers, size_t n_headers,
                      const char *body, size_t len, sw_httpc_resp_t *resp)
{
    const sw_httpc_opts_t *o = &c->opts;
    resp->status = 0;
    resp->retry_after[0] = '\0';
    resp->body.len = 0;
    resp->body_over = resp->timed_out = false;
    resp->error[0] = '\0';
    resp->elapsed_ns = 0;
    CURL *e = c->easy;
    curl_easy_reset(e);
    struct curl_slist *hdrs = curl_slist_append(NULL, "Expect:");
    for (size_t i = 0; i < n_headers; i++) hdrs = curl_slist_append(hdrs, headers[i]);
    char line[4200];
    if (set(o->bearer_token)) {
        snprintf(line, sizeof(line), "Authorization: Bearer %s", o->bearer_token);
        hdrs = curl_slist_append(hdrs, line);
    }
    char errbuf[CURL_ERROR_SIZE] = "";
    sink_t sink = {resp, o->body_max, o->body_max_fails};
    curl_easy_setopt(e, CURLOPT_URL, url);
    if (body) {
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(e, CURLOPT_USERAGENT, o->user_agent);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)o->timeout_ms);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)o->timeout_ms);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, resp);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    if (set(o->basic_auth)) {
        curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(e, CURLOPT_USERPWD, o->basic_auth);
    }
    if (set(o->ca_location)) curl_easy_setopt(e, CURLOPT_CAINFO, o->ca_location);
    if (set(o->cert_location)) curl_easy_setopt(e, CURLOPT_SSLCERT, o->cert_location);
    if (set(o->key_location)) curl_easy_setopt(e, CURLOPT_SSLKEY, o->key_location);
    int64_t t0 = sw_clock_ns();
    CURLcode rc = curl_easy_perform(e);
    resp->elapsed_ns = sw_clock_ns() - t0;
    if (rc == CURLE_OK) {
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &resp->status);
    } else {
        resp->timed_out = rc == CURLE_OPERATION_TIMEDOUT;
        /* libcurl may quote the URL; its user information stays out. */
        sw_redact_urls(*errbuf ? errbuf : curl_easy_strerror(rc), resp->error, sizeof(resp->error));
        resp->status = 0;
    }
    curl_slist_free_all(hdrs);
    return resp->status;
}
