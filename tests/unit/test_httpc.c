/*
 * The one libcurl client (src/net/sw_httpc.c) against an in-process
 * libmicrohttpd server on loopback: a GET and a POST send the user agent,
 * the caller's headers, auth and no Expect; the status, the body and a
 * Retry-After come back; an answer over body_max is cut or refused, as
 * asked; a slow answer times out; a refused connection says why without
 * the URL's credentials.
 */
#include <microhttpd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sw_httpc.h"
#include "sw_testlib.h"

#define BIG_LEN 100000

typedef struct conn_s {
    sw_buf_t body;
} conn_t;

static const char *hdr(struct MHD_Connection *c, const char *name)
{
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
    return v ? v : "-";
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, const char *text,
                              size_t len, const char *retry_after)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)text,
                                                                MHD_RESPMEM_MUST_COPY);
    if (retry_after) MHD_add_response_header(resp, "Retry-After", retry_after);
    enum MHD_Result ret = MHD_queue_response(c, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result on_req(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)cls;
    (void)version;
    conn_t *cc = *con_cls;
    if (!cc) {
        cc = calloc(1, sizeof(*cc));
        sw_buf_init(&cc->body);
        *con_cls = cc;
        return MHD_YES;
    }
    if (*upload_size) {
        sw_buf_put(&cc->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    if (!strcmp(url, "/retry")) return answer(c, 429, "slow down", 9, "120");
    if (!strcmp(url, "/big")) {
        char *big = malloc(BIG_LEN);
        memset(big, 'x', BIG_LEN);
        enum MHD_Result ret = answer(c, 200, big, BIG_LEN, NULL);
        free(big);
        return ret;
    }
    if (!strcmp(url, "/slow")) usleep(1500 * 1000); /* the client gives up after 300 ms */
    char text[8192];
    int n = snprintf(text, sizeof(text), "%s ua=%s expect=%s type=%s auth=%s body=%s", method,
                     hdr(c, "User-Agent"), hdr(c, "Expect"), hdr(c, "Content-Type"),
                     hdr(c, "Authorization"), sw_buf_cstr(&cc->body));
    return answer(c, 200, text, (size_t)n, NULL);
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    conn_t *cc = *con_cls;
    if (cc) {
        sw_buf_clear(&cc->body);
        free(cc);
        *con_cls = NULL;
    }
}

static struct MHD_Daemon *g_srv;
static char g_base[64];

static int srv_start(void **state)
{
    (void)state;
    g_srv = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0,
        NULL, NULL, on_req, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_END);
    if (!g_srv) return -1;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(g_srv, MHD_DAEMON_INFO_BIND_PORT);
    if (!info || !info->port) return -1;
    snprintf(g_base, sizeof(g_base), "http://127.0.0.1:%u", (unsigned)info->port);
    return 0;
}

static int srv_stop(void **state)
{
    (void)state;
    MHD_stop_daemon(g_srv);
    return 0;
}

static sw_httpc_t *client(const sw_httpc_opts_t *o)
{
    char err[256] = "";
    sw_httpc_t *c = sw_httpc_new(o, err, sizeof(err));
    if (!c) fprintf(stderr, "sw_httpc_new: %s\n", err);
    return c;
}

static long req(sw_httpc_t *c, const char *path, const char *const *hdrs, size_t n,
                const char *body, sw_httpc_resp_t *resp)
{
    char url[128];
    snprintf(url, sizeof(url), "%s%s", g_base, path);
    return sw_httpc_request(c, url, hdrs, n, body, body ? strlen(body) : 0, resp);
}

static void test_get_post(void **state)
{
    (void)state;
    sw_httpc_opts_t o = {
        .user_agent = "ua/1", .timeout_ms = 5000, .body_max = 4096, .bearer_token = "tok"};
    sw_httpc_t *c = client(&o);
    SW_ASSERT_NOT_NULL(c);
    sw_httpc_resp_t resp;
    sw_httpc_resp_init(&resp);
    SW_ASSERT_I64(req(c, "/echo", NULL, 0, NULL, &resp), 200);
    SW_ASSERT_STREQ(sw_buf_cstr(&resp.body), "GET ua=ua/1 expect=- type=- auth=Bearer tok body=");
    SW_ASSERT_STREQ(resp.retry_after, "");
    SW_ASSERT_TRUE(resp.elapsed_ns > 0);
    /* A POST bigger than curl's 100-continue threshold still sends no Expect. */
    sw_buf_t big;
    sw_buf_init(&big);
    for (int i = 0; i < 300; i++) sw_buf_puts(&big, "abcd");
    const char *hdrs[] = {"Content-Type: application/json"};
    SW_ASSERT_I64(req(c, "/echo", hdrs, 1, sw_buf_cstr(&big), &resp), 200);
    SW_ASSERT_CONTAINS(sw_buf_cstr(&resp.body), "POST ua=ua/1 expect=- type=application/json");
    SW_ASSERT_CONTAINS(sw_buf_cstr(&resp.body), sw_buf_cstr(&big));
    sw_buf_clear(&big);
    sw_httpc_destroy(c);
    /* Basic auth instead of a bearer token. */
    o = (sw_httpc_opts_t){
        .user_agent = "ua/2", .timeout_ms = 5000, .body_max = 4096, .basic_auth = "user:pw"};
    c = client(&o);
    SW_ASSERT_I64(req(c, "/echo", NULL, 0, "x", &resp), 200);
    SW_ASSERT_STREQ(sw_buf_cstr(&resp.body),
                    "POST ua=ua/2 expect=- type=application/x-www-form-urlencoded "
                    "auth=Basic dXNlcjpwdw== body=x");
    sw_httpc_destroy(c);
    sw_httpc_resp_clear(&resp);
}

static void test_retry_after(void **state)
{
    (void)state;
    sw_httpc_opts_t o = {.user_agent = "ua", .timeout_ms = 5000, .body_max = 4096};
    sw_httpc_t *c = client(&o);
    sw_httpc_resp_t resp;
    sw_httpc_resp_init(&resp);
    SW_ASSERT_I64(req(c, "/retry", NULL, 0, "{}", &resp), 429);
    SW_ASSERT_STREQ(resp.retry_after, "120");
    SW_ASSERT_STREQ(sw_buf_cstr(&resp.body), "slow down");
    /* The next answer does not keep it. */
    SW_ASSERT_I64(req(c, "/echo", NULL, 0, NULL, &resp), 200);
    SW_ASSERT_STREQ(resp.retry_after, "");
    sw_httpc_destroy(c);
    sw_httpc_resp_clear(&resp);
}

static void test_body_max(void **state)
{
    (void)state;
    sw_httpc_opts_t o = {.user_agent = "ua", .timeout_ms = 5000, .body_max = 1000};
    sw_httpc_t *c = client(&o);
    sw_httpc_resp_t resp;
    sw_httpc_resp_init(&resp);
    /* Cut: the status stands, the first body_max bytes are kept. */
    SW_ASSERT_I64(req(c, "/big", NULL, 0, NULL, &resp), 200);
    SW_ASSERT_I64(resp.body.len, 1000);
    SW_ASSERT_FALSE(resp.body_over);
    sw_httpc_destroy(c);
    /* Refused: no status, body_over says why. */
    o.body_max_fails = true;
    c = client(&o);
    SW_ASSERT_I64(req(c, "/big", NULL, 0, NULL, &resp), 0);
    SW_ASSERT_TRUE(resp.body_over);
    SW_ASSERT_TRUE(resp.error[0] != '\0');
    /* Under the cap it is an ordinary answer. */
    SW_ASSERT_I64(req(c, "/echo", NULL, 0, NULL, &resp), 200);
    SW_ASSERT_FALSE(resp.body_over);
    sw_httpc_destroy(c);
    sw_httpc_resp_clear(&resp);
}

static void test_timeout_refused(void **state)
{
    (void)state;
    sw_httpc_opts_t o = {.user_agent = "ua", .timeout_ms = 300, .body_max = 4096};
    sw_httpc_t *c = client(&o);
    sw_httpc_resp_t resp;
    sw_httpc_resp_init(&resp);
    SW_ASSERT_I64(req(c, "/slow", NULL, 0, NULL, &resp), 0);
    SW_ASSERT_TRUE(resp.timed_out);
    SW_ASSERT_TRUE(resp.elapsed_ns < INT64_C(1400) * 1000000);
    /* Nothing listens on port 1; the password stays out of the reason. */
    SW_ASSERT_I64(sw_httpc_request(c, "http://user:s3cret@127.0.0.1:1/x", NULL, 0, NULL, 0, &resp),
                  0);
    SW_ASSERT_FALSE(resp.timed_out);
    SW_ASSERT_TRUE(resp.error[0] != '\0');
    SW_ASSERT_LACKS(resp.error, "s3cret");
    /* Only http and https. */
    SW_ASSERT_I64(sw_httpc_request(c, "file:///etc/passwd", NULL, 0, NULL, 0, &resp), 0);
    SW_ASSERT_I64(resp.body.len, 0);
    sw_httpc_destroy(c);
    sw_httpc_resp_clear(&resp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_post),
        cmocka_unit_test(test_retry_after),
        cmocka_unit_test(test_body_max),
        cmocka_unit_test(test_timeout_refused),
    };
    return cmocka_run_group_tests(tests, srv_start, srv_stop);
}
