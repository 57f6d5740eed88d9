/* Test helpers for processes and Kafka (see sw_proc.h). */
#include "sw_proc.h"

#include "sw_codec_alert.h"
#include "sw_codec_avro.h"
#include "sw_codec_telemetry.h"
#include "sw_detect.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int64_t sw_proc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The children started and not reaped yet, for sw_proc_kill_all(). */
static pid_t g_children[64];

static pid_t track(pid_t pid)
{
    for (size_t i = 0; pid > 0 && i < sizeof(g_children) / sizeof(g_children[0]); i++)
        if (!g_children[i]) {
            g_children[i] = pid;
            break;
        }
    return pid;
}

static void untrack(pid_t pid)
{
    for (size_t i = 0; i < sizeof(g_children) / sizeof(g_children[0]); i++)
        if (g_children[i] == pid) g_children[i] = 0;
}

void sw_proc_kill_all(void)
{
    for (size_t i = 0; i < sizeof(g_children) / sizeof(g_children[0]); i++)
        if (g_children[i]) sw_proc_kill(g_children[i]);
}

pid_t sw_proc_spawn(char *const argv[], const char *out_path, const char *err_path)
{
    pid_t pid = fork();
    if (pid != 0) return track(pid);
    if (out_path) {
        int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) dup2(fd, 1);
    }
    if (err_path) {
        int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) dup2(fd, 2);
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    execv(argv[0], argv);
    _exit(127);
}

pid_t sw_proc_spawn_io(char *const argv[], int *in_fd, const char *out_path, const char *err_path)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    pid_t pid = fork();
    if (pid != 0) {
        close(fds[0]);
        *in_fd = fds[1];
        return track(pid);
    }
    close(fds[1]);
    dup2(fds[0], 0);
    close(fds[0]);
    if (out_path) {
        int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) dup2(fd, 1);
    }
    if (err_path) {
        int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) dup2(fd, 2);
    }
    execv(argv[0], argv);
    _exit(127);
}

int sw_proc_wait(pid_t pid, int64_t timeout_ms)
{
    int64_t deadline = sw_proc_now_ms() + timeout_ms;
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            untrack(pid);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        if (r < 0) return -1;
        if (sw_proc_now_ms() >= deadline) return -1;
        nap_ms(20);
    }
}

void sw_proc_kill(pid_t pid)
{
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    untrack(pid);
}

char *sw_proc_wait_file(const char *path, int64_t timeout_ms)
{
    int64_t deadline = sw_proc_now_ms() + timeout_ms;
    while (sw_proc_now_ms() < deadline) {
        FILE *f = fopen(path, "r");
        if (f) {
            char line[4096];
            if (fgets(line, sizeof(line), f)) {
                fclose(f);
                line[strcspn(line, "\r\n")] = '\0';
                if (line[0]) return strdup(line);
            } else {
                fclose(f);
            }
        }
        nap_ms(20);
    }
    return NULL;
}

int sw_proc_count_text(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int n = 0;
    char line[8192];
    while (fgets(line, sizeof(line), f))
        for (const char *p = line; (p = strstr(p, needle)) != NULL; p++) n++;
    fclose(f);
    return n;
}

bool sw_proc_wait_text(const char *path, const char *needle, int times, int64_t timeout_ms)
{
    int64_t deadline = sw_proc_now_ms() + timeout_ms;
    while (sw_proc_now_ms() < deadline) {
        if (sw_proc_count_text(path, needle) >= times) return true;
        nap_ms(50);
    }
    return false;
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    if (m->err) {
        int *failed = rd_kafka_opaque(rk);
        if (failed) (*failed)++;
    }
}

rd_kafka_t *sw_kp_new(const char *bootstrap)
{
    char err[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, err, sizeof(err));
    rd_kafka_conf_set(c, "enable.idempotence", "true", err, sizeof(err));
    rd_kafka_conf_set(c, "linger.ms", "5", err, sizeof(err));
    rd_kafka_conf_set(c, "log_level", "2", err, sizeof(err));
    rd_kafka_conf_set_dr_msg_cb(c, dr_cb);
    int *failed = calloc(1, sizeof(int));
    rd_kafka_conf_set_opaque(c, failed);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, sizeof(err));
    if (!rk) fprintf(stderr, "test producer: %s\n", err);
    return rk;
}

bool sw_kp_send(rd_kafka_t *rk, const char *topic, int32_t partition, const void *key,
                size_t keylen, const void *value, size_t len)
{
    for (;;) {
        rd_kafka_resp_err_t e = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(topic),
            RD_KAFKA_V_PARTITION(partition < 0 ? RD_KAFKA_PARTITION_UA : partition),
            RD_KAFKA_V_KEY(key, keylen), RD_KAFKA_V_VALUE((void *)value, len),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            rd_kafka_poll(rk, 20);
            continue;
        }
        if (e) fprintf(stderr, "test producer: %s\n", rd_kafka_err2str(e));
        return e == RD_KAFKA_RESP_ERR_NO_ERROR;
    }
}

void sw_kp_destroy(rd_kafka_t *rk)
{
    if (!rk) return;
    int *failed = rd_kafka_opaque(rk);
    rd_kafka_destroy(rk);
    free(failed);
}

bool sw_kp_flush(rd_kafka_t *rk, int64_t timeout_ms)
{
    bool ok = rd_kafka_flush(rk, (int)timeout_ms) == RD_KAFKA_RESP_ERR_NO_ERROR;
    int *failed = rd_kafka_opaque(rk);
    ok = ok && failed && *failed == 0;
    return ok;
}

/* A consumer reading every partition of a topic from the beginning, and
 * what it has read. */
typedef struct kc_reader_s {
    rd_kafka_t *rk;
    sw_kmsg_t *v;
    size_t n, cap;
    int partitions;
    bool *at_end; /* a partition at its end since its last message */
    int ends;
} kc_reader_t;

static bool kc_open(kc_reader_t *r, const char *bootstrap, const char *topic, int partitions)
{
    char err[512];
    memset(r, 0, sizeof(*r));
    r->cap = 64;
    r->v = calloc(r->cap, sizeof(*r->v));
    r->partitions = partitions;
    r->at_end = calloc((size_t)partitions + 1, sizeof(*r->at_end));
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, err, sizeof(err));
    rd_kafka_conf_set(c, "group.id", "stormwatch-test-reader", err, sizeof(err));
    rd_kafka_conf_set(c, "enable.auto.commit", "false", err, sizeof(err));
    rd_kafka_conf_set(c, "log_level", "2", err, sizeof(err));
    rd_kafka_conf_set(c, "enable.partition.eof", "true", err, sizeof(err));
    r->rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof(err));
    if (!r->rk) return false;
    rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new(partitions);
    for (int p = 0; p < partitions; p++)
        rd_kafka_topic_partition_list_add(tp, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_assign(r->rk, tp);
    rd_kafka_topic_partition_list_destroy(tp);
    return true;
}

/* One poll; @returns true when a message was read. */
static bool kc_poll(kc_reader_t *r, int ms)
{
    rd_kafka_message_t *m = rd_kafka_consumer_poll(r->rk, ms);
    if (!m) return false;
    bool in_range = m->partition >= 0 && m->partition < r->partitions, got = !m->err;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF && in_range && !r->at_end[m->partition]) {
        r->at_end[m->partition] = true;
        r->ends++;
    }
    if (got && in_range && r->at_end[m->partition]) {
        r->at_end[m->partition] = false;
        r->ends--;
    }
    if (got) {
        if (r->n == r->cap) {
            r->cap *= 2;
            r->v = realloc(r->v, r->cap * sizeof(*r->v));
        }
        sw_kmsg_t *x = &r->v[r->n++];
        memset(x, 0, sizeof(*x));
        x->partition = m->partition;
        x->offset = m->offset;
        if (m->key) {
            x->key = strndup(m->key, m->key_len);
            x->key_len = m->key_len;
        }
        x->value = malloc(m->len + 1);
        if (m->len) memcpy(x->value, m->payload, m->len);
        x->value[m->len] = '\0';
        x->len = m->len;
        rd_kafka_headers_t *h;
        if (rd_kafka_message_headers(m, &h) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            const char *name;
            const void *val;
            size_t vs;
            for (size_t i = 0; x->nhdr < 16 && !rd_kafka_header_get_all(h, i, &name, &val, &vs);
                 i++) {
                x->hdr_names[x->nhdr] = strdup(name);
                x->hdr_values[x->nhdr] = val ? strndup(val, vs) : strdup("");
                x->nhdr++;
            }
        }
    }
    rd_kafka_message_destroy(m);
    return got;
}

/* Poll until @p want messages were read (then @p grace_ms more), or with
 * @p to_end until every partition has reported its end since its last
 * message, or @p timeout_ms passed; then close. */
static size_t kc_finish(kc_reader_t *r, size_t want, int64_t grace_ms, int64_t timeout_ms,
                        bool to_end, sw_kmsg_t **out)
{
    int64_t deadline = sw_proc_now_ms() + timeout_ms, grace_end = -1;
    while (r->rk) {
        int64_t now = sw_proc_now_ms();
        if (now >= deadline) break;
        if (grace_end >= 0 && now >= grace_end) break;
        if (to_end && r->ends == r->partitions) break;
        if (!to_end && r->n >= want && grace_end < 0) grace_end = now + grace_ms;
        kc_poll(r, 50);
    }
    if (r->rk) {
        rd_kafka_consumer_close(r->rk);
        rd_kafka_destroy(r->rk);
    }
    free(r->at_end);
    *out = r->v;
    return r->n;
}

size_t sw_kc_read(const char *bootstrap, const char *topic, int partitions, size_t want,
                  int64_t grace_ms, int64_t timeout_ms, sw_kmsg_t **out)
{
    kc_reader_t r;
    kc_open(&r, bootstrap, topic, partitions);
    return kc_finish(&r, want, grace_ms, timeout_ms, false, out);
}

size_t sw_kc_read_all(const char *bootstrap, const char *topic, int partitions, int64_t timeout_ms,
                      sw_kmsg_t **out)
{
    kc_reader_t r;
    kc_open(&r, bootstrap, topic, partitions);
    return kc_finish(&r, (size_t)-1, 0, timeout_ms, true, out);
}

/* A reader polling in a thread of its own until sw_kc_tail_finish(). */
struct sw_kc_tail_s {
    kc_reader_t r;
    pthread_t thread;
    bool running; /* the thread was started */
    atomic_bool stop;
};

static void *kc_tail_main(void *arg)
{
    sw_kc_tail_t *t = arg;
    while (!atomic_load(&t->stop)) kc_poll(&t->r, 50);
    return NULL;
}

sw_kc_tail_t *sw_kc_tail_start(const char *bootstrap, const char *topic, int partitions)
{
    sw_kc_tail_t *t = calloc(1, sizeof(*t));
    atomic_init(&t->stop, false);
    t->running = kc_open(&t->r, bootstrap, topic, partitions) &&
                 pthread_create(&t->thread, NULL, kc_tail_main, t) == 0;
    return t;
}

size_t sw_kc_tail_finish(sw_kc_tail_t *t, size_t want, int64_t grace_ms, int64_t timeout_ms,
                         bool to_end, sw_kmsg_t **out)
{
    atomic_store(&t->stop, true);
    if (t->running) pthread_join(t->thread, NULL);
    size_t n = kc_finish(&t->r, to_end ? (size_t)-1 : want, grace_ms, timeout_ms, to_end, out);
    free(t);
    return n;
}

const char *sw_kmsg_header(const sw_kmsg_t *m, const char *name)
{
    for (int i = m->nhdr - 1; i >= 0; i--)
        if (strcmp(m->hdr_names[i], name) == 0) return m->hdr_values[i];
    return NULL;
}

void sw_kmsg_free(sw_kmsg_t *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(m[i].key);
        free(m[i].value);
        for (int k = 0; k < m[i].nhdr; k++) {
            free(m[i].hdr_names[k]);
            free(m[i].hdr_values[k]);
        }
    }
    free(m);
}

int64_t sw_kc_committed(const char *bootstrap, const char *group, const char *topic, int partitions)
{
    char err[512];
    rd_kafka_conf_t *c = rd_kafka_conf_new();
    rd_kafka_conf_set(c, "bootstrap.servers", bootstrap, err, sizeof(err));
    rd_kafka_conf_set(c, "group.id", group, err, sizeof(err));
    rd_kafka_conf_set(c, "log_level", "2", err, sizeof(err));
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof(err));
    if (!rk) return -1;
    rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new(partitions);
    for (int p = 0; p < partitions; p++) rd_kafka_topic_partition_list_add(tp, topic, p);
    int64_t sum = 0;
    if (rd_kafka_committed(rk, tp, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        for (int i = 0; i < tp->cnt; i++)
            if (tp->elems[i].offset >= 0) sum += tp->elems[i].offset;
    } else {
        sum = -1;
    }
    rd_kafka_topic_partition_list_destroy(tp);
    rd_kafka_destroy(rk);
    return sum;
}

int64_t sw_kc_wait_committed(const char *bootstrap, const char *group, const char *topic,
                             int partitions, int64_t want, int64_t timeout_ms)
{
    int64_t deadline = sw_proc_now_ms() + timeout_ms, got;
    while ((got = sw_kc_committed(bootstrap, group, topic, partitions)) < want &&
           sw_proc_now_ms() < deadline)
        nap_ms(200);
    return got;
}

/* Whether topic @p t is one of the comma-separated @p list. */
static bool topic_listed(const char *list, const char *t)
{
    size_t tl = strlen(t);
    for (const char *s = list; *s;) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == tl && !memcmp(s, t, n)) return true;
        if (!e) break;
        s = e + 1;
    }
    return false;
}

/* Records of messages from source topic @p src, grouped per job id. */
json_t *sw_kt_group_by_job(sw_kmsg_t *m, size_t n, const char *src, int plo, int phi, bool avro)
{
    json_t *by = json_object();
    for (size_t i = 0; i < n; i++) {
        const char *st = sw_kmsg_header(&m[i], "stormwatch.source.topic");
        const char *sp = sw_kmsg_header(&m[i], "stormwatch.source.partition");
        if (!st || !topic_listed(src, st) || !sp) continue;
        if (atoi(sp) < plo || atoi(sp) >= phi) continue;
        json_error_t e;
        json_t *v;
        if (avro) {
            sw_buf_t js;
            sw_buf_init(&js);
            char err[256];
            if (sw_avro_decode_record_json(m[i].value, m[i].len, 2, &js, err, sizeof(err)) !=
                SW_OK) {
                fprintf(stderr, "undecodable Avro alert: %s\n", err);
                sw_buf_clear(&js);
                continue;
            }
            v = json_loadb(js.data, js.len, 0, &e);
            sw_buf_clear(&js);
        } else {
            v = json_loadb(m[i].value, m[i].len, 0, &e);
        }
        if (!v) continue;
        json_t *jid = json_object_get(v, "job_id");
        const char *job = json_is_string(jid) ? json_string_value(jid) : "";
        json_t *arr = json_object_get(by, job);
        if (!arr) {
            arr = json_array();
            json_object_set_new(by, job, arr);
        }
        json_array_append_new(arr, v);
    }
    return by;
}

/* Records an uninterrupted engine gives for these events, as JSON per job. */
json_t *sw_kt_replay_by_job(char **lines, size_t *lens, int n)
{
    return sw_kt_replay_by_job_w(lines, lens, n, SW_DEFAULT_WINDOW_SAMPLES);
}

json_t *sw_kt_replay_by_job_w(char **lines, size_t *lens, int n, int64_t window_samples)
{
    sw_params_t p = sw_params_default();
    p.window_samples = window_samples;
    sw_detector_t *det = sw_detect_new(p);
    sw_tdec_t *dec = sw_tdec_new();
    json_t *by = json_object();
    sw_buf_t js;
    sw_buf_init(&js);
    char err[256];
    for (int i = 0; i < n; i++) {
        sw_event_t ev;
        const sw_record_t *rec;
        if (sw_tdec_json(dec, lines[i], lens[i], &ev, err, sizeof(err)) != SW_OK) continue;
        sw_detect_feed(det, &ev, 0, &rec, err, sizeof(err));
        /* SPEC 6's record, then SPEC 8's of the same event (as run sends them). */
        for (rec = rec ? rec : sw_detect_next(det); rec; rec = sw_detect_next(det)) {
            js.len = 0;
            sw_alert_json_record(&js, rec);
            json_error_t e;
            json_t *v = json_loadb(js.data, js.len, 0, &e);
            const char *job = rec->analysis.has_job_id
                                  ? json_string_value(json_object_get(v, "job_id"))
                                  : "";
            json_t *arr = json_object_get(by, job);
            if (!arr) {
                arr = json_array();
                json_object_set_new(by, job, arr);
            }
            json_array_append_new(arr, v);
        }
    }
    sw_tdec_destroy(dec);
    sw_buf_clear(&js);
    sw_detect_destroy(det);
    return by;
}

void sw_kt_drop_summaries(json_t *by)
{
    const char *job;
    json_t *arr;
    json_object_foreach(by, job, arr)
    {
        for (size_t i = json_array_size(arr); i-- > 0;) {
            json_t *a = json_object_get(json_array_get(arr, i), "action");
            if (json_is_string(a) && !strcmp(json_string_value(a), "summary"))
                json_array_remove(arr, i);
        }
    }
}

size_t sw_kt_count(json_t *by)
{
    size_t n = 0;
    const char *job;
    json_t *arr;
    json_object_foreach(by, job, arr) n += json_array_size(arr);
    return n;
}
