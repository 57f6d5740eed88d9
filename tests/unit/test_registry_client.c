/*
 * The schema registry client (src/registry/sw_registry.c) against
 * tests/registry/sr_stub.py, the stand-in for the Confluent Schema Registry:
 * a known id resolves (and is asked once), an unknown id is final with the
 * registry's 40403 in the reason, an unresolvable schema names the field,
 * a dead first URL falls through to the second, basic auth is sent, a
 * 401 or a wrong URL's 404 is "try again" (never final), the backoff
 * answers without a request, subjects register once and are looked up
 * (40401 for a missing subject); with the fetcher thread no lookup waits
 * for an answer, however slow.
 */
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sw_daemon.h"
#include "sw_log.h"
#include "sw_proc.h"
#include "sw_registry.h"
#include "sw_schemas.h"
#include "sw_testlib.h"

static char g_dir[600], g_log[700];

static pid_t start_stub(const char *src, int *port, const char *user_info)
{
    char pf[700], stub[1200], s1[1200], s2[1200], out[700], err[700];
    snprintf(pf, sizeof(pf), "%s/port", g_dir);
    snprintf(stub, sizeof(stub), "%s/registry/sr_stub.py", src);
    snprintf(s1, sizeof(s1), "7=%s/registry/telemetry_v1.avsc", src);
    snprintf(s2, sizeof(s2), "8=%s/../schemas/first_cause_alert.avsc", src);
    snprintf(out, sizeof(out), "%s/stub.out", g_dir);
    snprintf(err, sizeof(err), "%s/stub.err", g_dir);
    unlink(pf);
    char *argv[] = {"/usr/bin/python3",
                    stub,
                    "--port-file",
                    pf,
                    "--log",
                    g_log,
                    "--schema",
                    s1,
                    "--schema",
                    s2,
                    "--user-info",
                    (char *)user_info,
                    NULL};
    if (!user_info) argv[10] = NULL;
    pid_t pid = sw_proc_spawn(argv, out, err);
    char *p = sw_proc_wait_file(pf, 20000);
    if (!p) return -1;
    *port = atoi(p);
    free(p);
    return pid;
}

static sw_registry_t *client(const char *u1, const char *u2, const char *user_info)
{
    const char *urls[2] = {u1, u2};
    sw_registry_conf_t rc = {.urls = urls,
                             .n_urls = u2 ? 2 : 1,
                             .user_info = user_info,
                             .timeout_ms = 2000,
                             .reader = sw_schema_telemetry_event,
                             .reader_len = sw_schema_telemetry_event_len};
    return sw_registry_new(&rc);
}

static void run(int port)
{
    char url[100], dead[100], wrong[120], err[1024];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    snprintf(dead, sizeof(dead), "http://127.0.0.1:1");
    snprintf(wrong, sizeof(wrong), "http://127.0.0.1:%d/nope/", port);
    const sw_avro_plan_t *plan = NULL;

    /* A dead first URL, then the stub; auth sent. */
    sw_registry_t *reg = client(dead, url, "u:p");
    SW_ASSERT(sw_registry_remote(reg), "no URLs");
    sw_err_t rc = sw_registry_plan(reg, 7, &plan, err, sizeof(err));
    SW_ASSERT(rc == SW_OK && plan && !sw_avro_plan_identity(plan), "id 7: rc %d: %s", rc, err);
    SW_ASSERT(sw_registry_plan(reg, 7, &plan, err, sizeof(err)) == SW_OK, "cached: %s", err);
    SW_ASSERT_I64(sw_proc_count_text(g_log, "GET /schemas/ids/7"), 1);
    rc = sw_registry_plan(reg, 99, &plan, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_NOT_FOUND, "id 99: rc %d", rc);
    SW_ASSERT_CONTAINS(err, "unknown schema id 99");
    SW_ASSERT_CONTAINS(err, "40403");
    SW_ASSERT(sw_registry_plan(reg, 99, &plan, err, sizeof(err)) == SW_ERR_NOT_FOUND, "99 again");
    SW_ASSERT_I64(sw_proc_count_text(g_log, "GET /schemas/ids/99"), 1);
    /* The alert schema is no TelemetryEvent: final, naming both names. */
    rc = sw_registry_plan(reg, 8, &plan, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_AVRO, "id 8: rc %d", rc);
    SW_ASSERT_CONTAINS(err, "writer schema id 8: record name \"FirstCauseAlert\"");

    /* Subjects: lookup of a missing one, register twice, lookup. */
    int32_t id = -1, id2 = -2, id3 = -3;
    rc = sw_registry_subject_id(reg, "alerts-value", sw_schema_first_cause_alert, false, &id, err,
                                sizeof(err));
    SW_ASSERT(rc == SW_ERR_NOT_FOUND, "lookup before register: rc %d %s", rc, err);
    SW_ASSERT_CONTAINS(err, "40401");
    SW_ASSERT(sw_registry_subject_id(reg, "alerts-value", sw_schema_first_cause_alert, true, &id,
                                     err, sizeof(err)) == SW_OK,
              "%s", err);
    SW_ASSERT(sw_registry_subject_id(reg, "alerts-value", sw_schema_first_cause_alert, true, &id2,
                                     err, sizeof(err)) == SW_OK,
              "%s", err);
    SW_ASSERT(sw_registry_subject_id(reg, "alerts-value", sw_schema_first_cause_alert, false, &id3,
                                     err, sizeof(err)) == SW_OK,
              "%s", err);
    SW_ASSERT(id == 8 && id2 == 8 && id3 == 8, "ids %d %d %d (the stub has it as 8)", id, id2, id3);
    uint64_t errors = 0;
    bool up = false;
    sw_registry_stats(reg, &errors, &up);
    SW_ASSERT(up && errors == 0, "up %d errors %llu", up, (unsigned long long)errors);
    sw_registry_destroy(reg);

    /* Without auth: 401, not final; then the backoff answers alone. */
    reg = client(url, NULL, "");
    rc = sw_registry_plan(reg, 7, &plan, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_IO, "401: rc %d: %s", rc, err);
    SW_ASSERT_CONTAINS(err, "HTTP 401");
    int before = sw_proc_count_text(g_log, "GET /schemas/ids/7");
    rc = sw_registry_plan(reg, 7, &plan, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_IO && sw_registry_backoff_ms(reg) > 0, "backoff: rc %d", rc);
    SW_ASSERT_CONTAINS(err, "next attempt in");
    SW_ASSERT_I64(sw_proc_count_text(g_log, "GET /schemas/ids/7"), before);
    sw_registry_stats(reg, &errors, &up);
    SW_ASSERT(!up && errors == 1, "up %d errors %llu", up, (unsigned long long)errors);
    sw_registry_destroy(reg);

    /* A wrong base URL (the stub's plain 404): not final either. */
    reg = client(wrong, NULL, "u:p");
    rc = sw_registry_plan(reg, 7, &plan, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_IO, "wrong URL: rc %d: %s", rc, err);
    SW_ASSERT_CONTAINS(err, "expected 200, or 404 with error_code 40403");
    sw_registry_destroy(reg);

    /* Nothing listening at all. */
    reg = client(dead, NULL, "");
    rc = sw_registry_plan(reg, 7, &plan, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_IO, "dead: rc %d", rc);
    sw_registry_destroy(reg);
}

/* The stub is started here, its exit in any case left to the teardown. */
static void test_registry_client(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof(g_dir), "%s/registry_client", sw_test_tmp());
    snprintf(g_log, sizeof(g_log), "%s/stub.log", g_dir);
    char cmd[1400], src[1100];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", g_dir, g_dir);
    SW_ASSERT(system(cmd) == 0, "%s", cmd);
    snprintf(src, sizeof(src), "%s/..", sw_test_fixtures());
    int port = 0;
    pid_t stub = start_stub(src, &port, "u:p");
    SW_ASSERT(stub >= 0, "the registry stub did not start (%s)", g_dir);
    run(port);
    sw_proc_kill(stub);
}

/* ---- hostile answers (issue 28) -------------------------------------------- */

/* A registry in a thread that answers id 1 with 2 MiB, id 2 with one byte
 * of a body that never ends, id 7 with the telemetry schema; it counts the
 * requests per id. Bounded: each connection at most 3 s, the thread ends
 * with g_hstop. */
static atomic_bool g_hstop;
static atomic_int g_hreq[8];
static atomic_int g_hgaveup; /* endless answers (id 2) ended: the client gave up */
static int g_hfd;

static void *hostile_run(void *opaque)
{
    (void)opaque;
    char req[2048];
    while (!atomic_load(&g_hstop)) {
        struct pollfd pf = {g_hfd, POLLIN, 0};
        if (poll(&pf, 1, 100) <= 0) continue;
        int c = accept(g_hfd, NULL, NULL);
        if (c < 0) continue;
        ssize_t n = recv(c, req, sizeof(req) - 1, 0);
        req[n > 0 ? n : 0] = '\0';
        int id = 0;
        sscanf(req, "GET /schemas/ids/%d", &id);
        if (id >= 0 && id < 8) atomic_fetch_add(&g_hreq[id], 1);
        char head[256];
        if (id == 1) {
            size_t big = 2u << 20;
            snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", big);
            send(c, head, strlen(head), MSG_NOSIGNAL);
            char *body = malloc(big);
            memset(body, 'a', big);
            send(c, body, big, MSG_NOSIGNAL);
            free(body);
        } else if (id == 2) {
            snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{");
            send(c, head, strlen(head), MSG_NOSIGNAL);
            struct pollfd cp = {c, POLLIN, 0};
            poll(&cp, 1, 3000); /* until the client gives up */
            atomic_fetch_add(&g_hgaveup, 1);
        } else if (id == 7) {
            sw_buf_t b;
            sw_buf_init(&b);
            sw_buf_puts(&b, "{\"schema\": \"");
            for (unsigned k = 0; k < sw_schema_telemetry_event_len; k++) {
                char ch = sw_schema_telemetry_event[k];
                if (ch == '"' || ch == '\\') sw_buf_putc(&b, '\\');
                if (ch == '\n') sw_buf_puts(&b, "\\n");
                else sw_buf_putc(&b, ch);
            }
            sw_buf_puts(&b, "\"}");
            snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", b.len);
            send(c, head, strlen(head), MSG_NOSIGNAL);
            send(c, b.data, b.len, MSG_NOSIGNAL);
            sw_buf_clear(&b);
        } else {
            static const char nf[] =
                "HTTP/1.1 404 Not Found\r\nContent-Length: 51\r\n\r\n"
                "{\"error_code\": 40403, \"message\": \"Schema not found\"}";
            send(c, nf, sizeof(nf) - 1, MSG_NOSIGNAL);
        }
        close(c);
    }
    return NULL;
}

/* The hostile registry on a loopback port (its request counters zeroed)
 * and a client of it with a 400 ms timeout. */
static sw_registry_t *hostile_start(pthread_t *th)
{
    g_hfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof(sa);
    SW_ASSERT(bind(g_hfd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(g_hfd, 16) == 0 &&
                  getsockname(g_hfd, (struct sockaddr *)&sa, &sl) == 0,
              "cannot listen");
    for (int i = 0; i < 8; i++) atomic_store(&g_hreq[i], 0);
    atomic_store(&g_hgaveup, 0);
    atomic_store(&g_hstop, false);
    pthread_create(th, NULL, hostile_run, NULL);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(sa.sin_port));
    const char *urls[1] = {url};
    sw_registry_conf_t rc = {.urls = urls,
                             .n_urls = 1,
                             .user_info = "",
                             .timeout_ms = 400,
                             .reader = sw_schema_telemetry_event,
                             .reader_len = sw_schema_telemetry_event_len};
    return sw_registry_new(&rc);
}

/* Destroys the client, then stops the hostile registry. */
static void hostile_stop(sw_registry_t *reg, pthread_t th)
{
    sw_registry_destroy(reg);
    atomic_store(&g_hstop, true);
    pthread_join(th, NULL);
    close(g_hfd);
}

static void test_hostile_answers(void **state)
{
    (void)state;
    pthread_t th;
    char err[600];
    sw_registry_t *reg = hostile_start(&th);
    const sw_avro_plan_t *plan = NULL;
    /* Oversized: final at once, asked once. */
    sw_err_t e = sw_registry_plan(reg, 1, &plan, err, sizeof(err));
    SW_ASSERT(e == SW_ERR_AVRO && strstr(err, "exceeds"), "id 1: rc %d: %s", e, err);
    SW_ASSERT_I64(sw_registry_plan(reg, 1, &plan, err, sizeof(err)), SW_ERR_AVRO);
    SW_ASSERT_I64(atomic_load(&g_hreq[1]), 1);
    /* Endless: this id waits, id 7 is fetched at once meanwhile. */
    int64_t t0 = sw_clock_ms();
    e = sw_registry_plan(reg, 2, &plan, err, sizeof(err));
    SW_ASSERT(e == SW_ERR_IO && strstr(err, "did not end"), "id 2: rc %d: %s", e, err);
    SW_ASSERT(sw_clock_ms() - t0 < 2000, "a slow answer took %lld ms",
              (long long)(sw_clock_ms() - t0));
    e = sw_registry_plan(reg, 7, &plan, err, sizeof(err));
    SW_ASSERT(e == SW_OK, "id 7 behind a slow id: rc %d: %s", e, err);
    SW_ASSERT_I64(sw_registry_plan(reg, 2, &plan, err, sizeof(err)), SW_ERR_IO); /* backing off */
    SW_ASSERT_I64(atomic_load(&g_hreq[2]), 1);
    /* Three slow answers: final (dead letters), never asked again. */
    int64_t deadline = sw_clock_ms() + 20000;
    while ((e = sw_registry_plan(reg, 2, &plan, err, sizeof(err))) == SW_ERR_IO &&
           sw_clock_ms() < deadline)
        usleep(50000);
    SW_ASSERT(e == SW_ERR_AVRO && strstr(err, "final"), "id 2 after strikes: rc %d: %s", e, err);
    int asked = atomic_load(&g_hreq[2]);
    SW_ASSERT_I64(asked, 3);
    SW_ASSERT_I64(sw_registry_plan(reg, 2, &plan, err, sizeof(err)), SW_ERR_AVRO);
    SW_ASSERT_I64(atomic_load(&g_hreq[2]), 3);
    printf(
        "hostile registry: a 2 MiB answer final at once; an endless answer waited alone "
        "(id 7 fetched meanwhile), final after %d requests\n",
        asked);
    hostile_stop(reg, th);
}

static atomic_int g_fetched;

static void on_fetched(void *opaque)
{
    (void)opaque;
    atomic_fetch_add(&g_fetched, 1);
}

/* With the fetcher thread (what the daemon uses): a lookup never waits for
 * the registry, not even for an endless answer (a lookup made while one is
 * being received returns before the client gives up on it); the id behind
 * a slow one is fetched meanwhile; an oversized answer and three slow ones
 * are final; every answer calls the fetched callback. Progress, not time:
 * on a loaded machine a request may time out (400 ms) and be asked again,
 * so ids 1 and 7 are asked at least once and at most 3 times (the strikes
 * that make an id final). */
static void test_fetcher(void **state)
{
    (void)state;
    pthread_t th;
    char err[600];
    sw_registry_t *reg = hostile_start(&th);
    SW_ASSERT_I64(sw_registry_fetcher_start(reg, on_fetched, NULL), SW_OK);
    const sw_avro_plan_t *plan = NULL;
    /* A bound for a broken client only (each id ends within 3 strikes). */
    int64_t deadline = sw_clock_ms() + 120000;
    sw_err_t e1 = SW_ERR_IO, e2 = SW_ERR_IO, e7 = SW_ERR_IO;
    int during = 0; /* lookups that returned while an endless answer was held */
    /* Not yet: SW_ERR_PENDING (a first fetch) or SW_ERR_IO (backing off). */
#define NOT_YET(e) ((e) == SW_ERR_IO || (e) == SW_ERR_PENDING)
    while ((NOT_YET(e1) || NOT_YET(e2) || NOT_YET(e7)) && sw_clock_ms() < deadline) {
        int asked = atomic_load(&g_hreq[2]), gave_up = atomic_load(&g_hgaveup);
        e2 = sw_registry_lookup(reg, 2, &plan, err, sizeof(err)); /* the endless one first */
        /* An endless answer was held before the lookup and still is after
         * it: the lookup did not wait for that answer. */
        if (asked > gave_up && atomic_load(&g_hreq[2]) == asked &&
            atomic_load(&g_hgaveup) == gave_up && NOT_YET(e2))
            during++;
        e7 = sw_registry_lookup(reg, 7, &plan, err, sizeof(err));
        e1 = sw_registry_lookup(reg, 1, &plan, err, sizeof(err));
        usleep(10000); /* the poll interval */
    }
    SW_ASSERT(e7 == SW_OK, "id 7: rc %d", e7);
    SW_ASSERT(e1 == SW_ERR_AVRO, "id 1 (oversized): rc %d", e1);
    e2 = sw_registry_lookup(reg, 2, &plan, err, sizeof(err));
    SW_ASSERT(e2 == SW_ERR_AVRO && strstr(err, "final"), "id 2 (endless): rc %d: %s", e2, err);
    SW_ASSERT(during > 0, "no lookup returned while an endless answer was being received");
    SW_ASSERT_I64(atomic_load(&g_hreq[2]), 3);
    int asked1 = atomic_load(&g_hreq[1]), asked7 = atomic_load(&g_hreq[7]);
    SW_ASSERT(asked1 >= 1 && asked1 <= 3, "id 1 asked %d times (1..3 expected)", asked1);
    SW_ASSERT(asked7 >= 1 && asked7 <= 3, "id 7 asked %d times (1..3 expected)", asked7);
    SW_ASSERT(atomic_load(&g_fetched) >= 5, "fetched callbacks: %d", atomic_load(&g_fetched));
    printf(
        "fetcher: %d lookups returned while an endless answer was held; id 7 known behind it "
        "(asked %d time(s)); ids 1 (asked %d) and 2 final\n",
        during, asked7, asked1);
    hostile_stop(reg, th); /* stops the fetcher too */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_registry_client, sw_test_kill_children),
        cmocka_unit_test(test_hostile_answers),
        cmocka_unit_test(test_fetcher),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
