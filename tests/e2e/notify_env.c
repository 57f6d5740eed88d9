/* The helpers of notify_env.h. */
#include "notify_env.h"

void env_start(env_t *e, const char *name)
{
    snprintf(e->dir, sizeof(e->dir), "%s/notify-%s", sw_test_tmp(), name);
    char cmd[2200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", e->dir, e->dir);
    SW_ASSERT_I64(system(cmd), 0);
    static const char *const topics[] = {"tel:2",  "alerts:2",           "dlq:1",
                                         "ndlq:1", "stormwatch.state:1", NULL};
    if (!sw_test_mock_start(&e->mock, e->dir, 1, false, topics))
        SW_FAIL("the mock cluster did not start (see %s)", e->mock.err);
    e->boot = e->mock.boot;
}

void env_stop(env_t *e)
{
    sw_test_mock_stop(&e->mock); /* only the mock this test started */
}

int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    SW_ASSERT_I64(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    SW_ASSERT_I64(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    close(fd);
    return ntohs(sa.sin_port);
}

/* Lines of a file (caller frees each and the array). */
int read_lines(const char *path, char ***out)
{
    sw_buf_t b;
    sw_buf_init(&b);
    SW_ASSERT_TRUE(sw_test_read_file(path, &b));
    int n = 0, cap = 0;
    char **v = NULL;
    const char *p = sw_buf_cstr(&b), *end = b.data + b.len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (len) {
            if (n == cap) v = realloc(v, (size_t)(cap = cap ? cap * 2 : 64) * sizeof(*v));
            v[n++] = strndup(p, len);
        }
        p += len + 1;
    }
    sw_buf_clear(&b);
    *out = v;
    return n;
}

void free_lines(char **v, int n)
{
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* @p line with every "job-14" replaced by @p job (caller frees). */
char *rename_job(const char *line, const char *job)
{
    sw_buf_t b;
    sw_buf_init(&b);
    const char *p = line, *q;
    while ((q = strstr(p, "job-14")) != NULL) {
        sw_buf_put(&b, p, (size_t)(q - p));
        sw_buf_puts(&b, job);
        p = q + 6;
    }
    sw_buf_puts(&b, p);
    char *s = strdup(sw_buf_cstr(&b));
    sw_buf_clear(&b);
    return s;
}

void produce(const char *boot, const char *topic, int32_t partition, const char *key, char **values,
             int n)
{
    rd_kafka_t *rk = sw_kp_new(boot);
    for (int i = 0; i < n; i++)
        SW_ASSERT_TRUE(
            sw_kp_send(rk, topic, partition, key, strlen(key), values[i], strlen(values[i])));
    SW_ASSERT_TRUE(sw_kp_flush(rk, 10000));
    sw_kp_destroy(rk);
}

bool wait_committed(const char *boot, const char *group, const char *topic, int parts, int64_t want,
                    int64_t timeout_ms)
{
    return sw_kc_wait_committed(boot, group, topic, parts, want, timeout_ms) >= want;
}

/* notify as TAG with the common settings plus @p extra (NULL-terminated -X
 * values), started. */
void start_notify(sw_test_daemon_t *d, const env_t *e, const char *group, const char *tag,
                  char *const *extra)
{
    sw_test_daemon_init(d, "notify", e->dir, tag, e->boot);
    sw_test_daemon_x(d, "notify.group.id=%s", group);
    static const char *const common[] = {"output.topic=alerts", "notify.dlq.topic=ndlq",
                                         "log.level=debug", "commit.interval.ms=200", NULL};
    sw_test_daemon_xs(d, common);
    sw_test_daemon_xs(d, (const char *const *)extra);
    sw_test_daemon_start(d);
}

enum MHD_Result on_req(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                       const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    (void)method;
    srv_t *s = cls;
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
    const char *body = sw_buf_cstr(&cc->body);
    bool pd = strcmp(url, "/pd") == 0;
    pthread_mutex_lock(&s->lock);
    int idx = pd ? s->n_pd++ : s->n_wh++;
    ans_t a = ANS_OK;
    if (pd && idx < s->n_pd_script) a = s->pd_script[idx];
    if (!pd && idx < s->n_wh_script) a = s->wh_script[idx];
    if (s->down) a = ANS_500;
    int status = a == ANS_OK ? (pd ? 202 : 200) : a == ANS_429 ? 429 : a == ANS_503 ? 503 : 500;
    /* PagerDuty answers 400 to a bad routing key: here, to job-bad. */
    if (pd && a == ANS_OK && strstr(body, "job-bad")) status = 400;
    req_t *r = s->n < 512 ? &s->reqs[s->n++] : NULL;
    if (r) {
        snprintf(r->path, sizeof(r->path), "%s", url);
        r->body = strdup(body);
        const char *sig = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Stormwatch-Signature");
        snprintf(r->signature, sizeof(r->signature), "%s", sig ? sig : "");
        const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
        snprintf(r->auth, sizeof(r->auth), "%s", auth ? auth : "");
        r->status = a == ANS_TIMEOUT || a == ANS_KILL ? 0 : status;
        r->at_ms = sw_proc_now_ms();
    }
    pid_t victim = a == ANS_KILL ? s->kill_pid : 0;
    pthread_mutex_unlock(&s->lock);
    if (a == ANS_TIMEOUT) usleep(1500000); /* the client gives up after 500 ms */
    if (victim > 0) kill(victim, SIGKILL);
    const char *text = status == 400 ? "{\"status\":\"invalid event\",\"message\":\"Event object "
                                       "is invalid\",\"errors\":[\"Invalid routing key\"]}"
                                     : "{\"status\":\"success\"}";
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(text), (void *)text,
                                                                MHD_RESPMEM_MUST_COPY);
    if (status == 429) MHD_add_response_header(resp, "Retry-After", "1");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return ret;
}

void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
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

void srv_start(srv_t *s)
{
    pthread_mutex_init(&s->lock, NULL);
    s->port = free_port();
    s->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
                            (uint16_t)s->port, NULL, NULL, on_req, s, MHD_OPTION_NOTIFY_COMPLETED,
                            on_done, s, MHD_OPTION_END);
    SW_ASSERT_NOT_NULL(s->d);
}

void srv_stop(srv_t *s)
{
    MHD_stop_daemon(s->d);
    for (int i = 0; i < s->n; i++) free(s->reqs[i].body);
    pthread_mutex_destroy(&s->lock);
}

/* The records `stormwatch replay` gives for gen14 with window.samples=32
 * and stale.ms=0 (trigger, resolve, trigger, and a summary that closes the
 * open second episode), for job @p job. */
int job_records(const env_t *e, const char *job, char ***out)
{
    char path[1200], cmd[4000];
    snprintf(path, sizeof(path), "%s/gen14.records.jsonl", e->dir);
    snprintf(cmd, sizeof(cmd),
             "'%s' replay --window-samples 32 --stale-ms 0 '%s/gen14.jsonl' > '%s'", sw_test_bin(),
             sw_test_fixtures(), path);
    SW_ASSERT_I64(system(cmd), 0);
    char **lines;
    int n = read_lines(path, &lines);
    SW_ASSERT_I64(n, 4);
    for (int i = 0; i < n; i++) {
        char *r = rename_job(lines[i], job);
        free(lines[i]);
        lines[i] = r;
    }
    *out = lines;
    return n;
}
