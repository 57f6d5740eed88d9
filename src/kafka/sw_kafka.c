/*
 * Kafka plumbing (see sw_kafka.h). Only this module, the daemon and the
 * Kafka tools include librdkafka.
 */
#include "sw_kafka.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "sw_alloc.h"

struct sw_mock_s {
    rd_kafka_t *rk; /* hosts the cluster */
    rd_kafka_mock_cluster_t *mcluster;
    int brokers;
    char *bootstrap;
};

/* ---- offset resets (auto.offset.reset after "Offset out of range") ------ */

static const char *after(const char *s, const char *what)
{
    const char *p = strstr(s, what);
    return p ? p + strlen(what) : NULL;
}

bool sw_kafka_parse_reset(const char *fac, const char *text, sw_kafka_reset_t *out)
{
    if (!fac || strcmp(fac, "OFFSET") != 0 || !text) return false;
    if (!strstr(text, "Offset out of range") && !strstr(text, "OFFSET_OUT_OF_RANGE")) return false;
    /* "[thrd:main]: " precedes the topic in librdkafka's own text. */
    const char *t = text;
    const char *th = strstr(t, "]: ");
    if (strncmp(t, "[thrd:", 6) == 0 && th) t = th + 3;
    const char *br = strstr(t, " [");
    const char *at = after(t, "]: offset reset (at offset ");
    if (!br || !at || (size_t)(br - t) >= sizeof(out->topic)) return false;
    memset(out, 0, sizeof(*out));
    memcpy(out->topic, t, (size_t)(br - t));
    char *end = NULL;
    long part = strtol(br + 2, &end, 10);
    if (end == br + 2 || *end != ']' || part < 0) return false;
    out->partition = (int32_t)part;
    long long from = strtoll(at, &end, 10);
    if (end == at || from < 0) return false;
    out->from = from;
    /* " to [cached ]BEGINNING|END[ offset N]" or " to offset BEGINNING" */
    const char *to = strstr(end, ") to ");
    if (!to) return false;
    to += 5;
    const char *colon = strchr(to, ':');
    size_t tl = colon ? (size_t)(colon - to) : strlen(to);
    char where[128];
    snprintf(where, sizeof(where), "%.*s", (int)(tl < sizeof(where) ? tl : sizeof(where) - 1), to);
    if (strstr(where, "END")) out->end = true;
    else if (!strstr(where, "BEGINNING")) return false;
    out->to = -1;
    const char *num = strstr(where, "offset ");
    while (num) {
        long long v = strtoll(num + 7, &end, 10);
        if (end != num + 7 && v >= 0) {
            out->to = v;
            break;
        }
        num = strstr(num + 7, "offset ");
    }
    return true;
}

uint64_t sw_kafka_reset_skipped(const sw_kafka_reset_t *rs)
{
    return rs->to > rs->from ? (uint64_t)(rs->to - rs->from) : 0;
}

static void lock_resets(sw_kafka_ctx_t *ctx)
{
    int free_ = 0;
    while (!atomic_compare_exchange_weak(&ctx->resets_lock, &free_, 1)) free_ = 0;
}

static void note_reset(sw_kafka_ctx_t *ctx, const sw_kafka_reset_t *rs)
{
    lock_resets(ctx);
    if (ctx->n_resets < SW_KAFKA_RESETS) ctx->resets[ctx->n_resets++] = *rs;
    else ctx->resets_dropped++;
    atomic_store(&ctx->resets_lock, 0);
}

uint64_t sw_kafka_account_resets(rd_kafka_t *consumer, sw_kafka_ctx_t *ctx, sw_metrics_t *m)
{
    if (!ctx) return 0;
    sw_kafka_reset_t rs[SW_KAFKA_RESETS];
    lock_resets(ctx);
    size_t n = ctx->n_resets;
    uint64_t dropped = ctx->resets_dropped;
    memcpy(rs, ctx->resets, n * sizeof(*rs));
    ctx->n_resets = 0;
    ctx->resets_dropped = 0;
    atomic_store(&ctx->resets_lock, 0);
    if (dropped)
        sw_log(ctx->log, SW_LOG_WARN,
               "%llu more offset resets (out of range) than could be accounted; "
               "stormwatch_input_skipped_messages_total misses them",
               (unsigned long long)dropped);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        sw_kafka_reset_t *r = &rs[i];
        if (r->to < 0) {
            int64_t lo = -1, hi = -1;
            if (rd_kafka_query_watermark_offsets(consumer, r->topic, r->partition, &lo, &hi,
                                                 5000) == RD_KAFKA_RESP_ERR_NO_ERROR)
                r->to = r->end ? hi : lo;
        }
        uint64_t skipped = sw_kafka_reset_skipped(r);
        if (r->to < 0) {
            sw_log(ctx->log, SW_LOG_WARN,
                   "data loss possible: %s [%d]: offset %lld is out of range (deleted by "
                   "retention?); auto.offset.reset moved the consumer to the %s of the log, "
                   "which could not be read to count what was skipped",
                   r->topic, (int)r->partition, (long long)r->from, r->end ? "end" : "beginning");
        } else if (skipped) {
            sw_log(ctx->log, SW_LOG_WARN,
                   "data loss: %s [%d]: offsets %lld to %lld (%llu messages) were deleted by "
                   "retention before they were read; auto.offset.reset moved the consumer to the "
                   "%s of the log, offset %lld (stormwatch_input_skipped_messages_total)",
                   r->topic, (int)r->partition, (long long)r->from, (long long)r->to - 1,
                   (unsigned long long)skipped, r->end ? "end" : "beginning", (long long)r->to);
            if (m) sw_metrics_input_skipped(m, r->topic, r->partition, skipped);
            total += skipped;
        } else {
            sw_log(ctx->log, SW_LOG_WARN,
                   "%s [%d]: offset %lld is beyond the log (out of range); auto.offset.reset "
                   "moved the consumer back to offset %lld: nothing skipped, messages from there "
                   "are read again",
                   r->topic, (int)r->partition, (long long)r->from, (long long)r->to);
        }
    }
    return total;
}

static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    sw_kafka_ctx_t *ctx = rd_kafka_opaque(rk);
    if (!ctx) return;
    sw_kafka_reset_t rs;
    if (rd_kafka_type(rk) == RD_KAFKA_CONSUMER && sw_kafka_parse_reset(fac, buf, &rs))
        note_reset(ctx, &rs);
    if (!ctx->log) return;
    sw_log_level_t lv = level <= 3   ? SW_LOG_ERROR
                        : level == 4 ? SW_LOG_WARN
                        : level <= 6 ? SW_LOG_INFO
                                     : SW_LOG_DEBUG;
    /* A broker's failure (facility FAIL) is logged and then handed to the
     * error callback with its code (librdkafka's broker_set_error does
     * both): the callback decides how loud it is, the log line is the
     * same news again and stays at debug. */
    if (fac && strcmp(fac, "FAIL") == 0) lv = SW_LOG_DEBUG;
    sw_log(ctx->log, lv, "librdkafka %s %s: %s", rd_kafka_name(rk), fac, buf);
}

static void error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    sw_kafka_ctx_t *ctx = opaque;
    if (err == RD_KAFKA_RESP_ERR__FATAL) {
        char text[200];
        rd_kafka_resp_err_t orig = rd_kafka_fatal_error(rk, text, sizeof(text));
        if (ctx) {
            snprintf(ctx->fatal_reason, sizeof(ctx->fatal_reason), "%s: %s",
                     rd_kafka_err2name(orig), text);
            ctx->fatal = true;
            sw_log(ctx->log, SW_LOG_ERROR, "fatal Kafka error on %s: %s", rd_kafka_name(rk),
                   ctx->fatal_reason);
        }
        return;
    }
    if (!ctx || !ctx->log) return;
    ctx->last_err = err;
    snprintf(ctx->last_reason, sizeof(ctx->last_reason), "%s", reason);
    const char *name = rd_kafka_err2name((rd_kafka_resp_err_t)err);
    switch ((rd_kafka_resp_err_t)err) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__RESOLVE:
        /* One broker's connection, retried by librdkafka on its own and
         * repeated with every retry: at debug. What the operator needs is
         * the summary: first contact's line (sw_kafka_probe, the daemons'
         * wait), or "all brokers are down" below. */
        sw_log(ctx->log, SW_LOG_DEBUG, "Kafka %s: %s: %s", rd_kafka_name(rk), name, reason);
        return;
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
        /* Before the first answer the caller's own line says it. */
        if (!ctx->contacted) {
            sw_log(ctx->log, SW_LOG_DEBUG, "Kafka %s: %s: %s", rd_kafka_name(rk), name, reason);
            return;
        }
        sw_log_limited(ctx->log, &ctx->lim_down, SW_LOG_WARN,
                       "Kafka %s: %s: %s (librdkafka reconnects by itself)", rd_kafka_name(rk),
                       name, reason);
        return;
    default:
        sw_log_limited(ctx->log, &ctx->lim_err, SW_LOG_ERROR, "Kafka %s: %s: %s", rd_kafka_name(rk),
                       name, reason);
        return;
    }
}

const char *sw_kafka_err_kind(int err)
{
    switch ((rd_kafka_resp_err_t)err) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR__TIMED_OUT: return "broker unreachable";
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR_ILLEGAL_SASL_STATE:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM: return "authentication failed";
    case RD_KAFKA_RESP_ERR__SSL: return "TLS failed";
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED: return "not authorized";
    default: return NULL;
    }
}

sw_err_t sw_kafka_set(rd_kafka_conf_t *kc, const char *name, const char *value, char *errstr,
                      size_t errstr_size)
{
    char rkerr[512];
    if (rd_kafka_conf_set(kc, name, value, rkerr, sizeof(rkerr)) != RD_KAFKA_CONF_OK) {
        snprintf(errstr, errstr_size, "librdkafka property \"%s\": %s", name, rkerr);
        return SW_ERR_INVALID_ARG;
    }
    return SW_OK;
}

rd_kafka_conf_t *sw_kafka_conf(const sw_conf_t *conf, sw_kafka_role_t role, const char *bootstrap,
                               const char *group_id, sw_kafka_ctx_t *ctx, char *errstr,
                               size_t errstr_size)
{
    rd_kafka_conf_t *kc = rd_kafka_conf_new();
    struct kv {
        const char *k, *v;
    };
    static const struct kv consumer[] = {
        {"enable.auto.commit", "false"},
        {"enable.auto.offset.store", "false"},
        {"auto.offset.reset", "earliest"},
        {"partition.assignment.strategy", "cooperative-sticky"},
        {"enable.partition.eof", "false"},
        {"client.id", "stormwatch"},
        /* Alert latency: a broker that holds an empty fetch for its full
         * wait (librdkafka's mock cluster does) would add up to this much;
         * real brokers answer as soon as data arrives. */
        {"fetch.wait.max.ms", "5"},
        /* librdkafka 2.0 stops fetching while this many messages wait in
         * the consumer queue and looks again only about once a second: keep
         * over a second of input queued (memory stays bounded by
         * queued.max.messages.kbytes). */
        {"queued.min.messages", "1000000"},
        /* The daemon reads each partition's own queue, and librdkafka then
         * applies this bound per partition: its 64 MiB default let 32
         * partitions prefetch over 1 GiB under a flood (issue 28: peak RSS
         * 1,399 MiB at 50,000 msg/s; 386 MiB with 4 MiB). 4 MiB a
         * partition still holds over a second of input at 100 MB/s over
         * 32 partitions. */
        {"queued.max.messages.kbytes", "4096"},
        {NULL, NULL},
    };
    static const struct kv producer[] = {
        {"enable.idempotence", "true"},
        {"linger.ms", "2"},
        {"client.id", "stormwatch"},
        {NULL, NULL},
    };
    static const struct kv admin[] = {
        {"client.id", "stormwatch"},
        {NULL, NULL},
    };
    const struct kv *defs = role == SW_KAFKA_CONSUMER   ? consumer
                            : role == SW_KAFKA_PRODUCER ? producer
                                                        : admin;
    for (const struct kv *d = defs; d->k; d++)
        if (sw_kafka_set(kc, d->k, d->v, errstr, errstr_size)) goto err;
    if (bootstrap && *bootstrap &&
        sw_kafka_set(kc, "bootstrap.servers", bootstrap, errstr, errstr_size))
        goto err;
    if (role == SW_KAFKA_CONSUMER && group_id &&
        sw_kafka_set(kc, "group.id", group_id, errstr, errstr_size))
        goto err;
    if (conf) {
        sw_conf_scope_t handle = role == SW_KAFKA_CONSUMER   ? SW_CONF_SCOPE_CONSUMER
                                 : role == SW_KAFKA_PRODUCER ? SW_CONF_SCOPE_PRODUCER
                                                             : SW_CONF_SCOPE_BOTH;
        size_t idx = 0;
        sw_conf_kafka_t kp;
        while (sw_conf_kafka_next(conf, &idx, &kp)) {
            if (!sw_conf_scope_reaches(kp.scope, handle)) continue;
            char rkerr[512];
            if (rd_kafka_conf_set(kc, kp.rk_name, kp.value, rkerr, sizeof(rkerr)) !=
                RD_KAFKA_CONF_OK) {
                /* librdkafka's text may echo the value: not for secrets. */
                if (kp.secret)
                    snprintf(errstr, errstr_size,
                             "configuration property \"%s\": librdkafka refused the value",
                             kp.name);
                else
                    snprintf(errstr, errstr_size, "configuration property \"%s\": %s", kp.name,
                             rkerr);
                goto err;
            }
        }
    }
    rd_kafka_conf_set_log_cb(kc, log_cb);
    rd_kafka_conf_set_error_cb(kc, error_cb);
    rd_kafka_conf_set_opaque(kc, ctx);
    return kc;
err:
    rd_kafka_conf_destroy(kc);
    return NULL;
}

sw_mock_t *sw_mock_new(int brokers, sw_kafka_ctx_t *ctx, char *errstr, size_t errstr_size)
{
    sw_mock_t *m = sw_calloc(1, sizeof(*m));
    rd_kafka_conf_t *kc = rd_kafka_conf_new();
    char rkerr[512];
    rd_kafka_conf_set(kc, "client.id", "stormwatch-mock", NULL, 0);
    /* The host client never connects anywhere: keep its warnings quiet. */
    rd_kafka_conf_set(kc, "log_level", "3", NULL, 0);
    rd_kafka_conf_set_log_cb(kc, log_cb);
    rd_kafka_conf_set_opaque(kc, ctx);
    m->rk = rd_kafka_new(RD_KAFKA_PRODUCER, kc, rkerr, sizeof(rkerr));
    if (!m->rk) {
        snprintf(errstr, errstr_size, "cannot create the mock cluster's host client: %s", rkerr);
        rd_kafka_conf_destroy(kc);
        free(m);
        return NULL;
    }
    m->mcluster = rd_kafka_mock_cluster_new(m->rk, brokers);
    if (!m->mcluster) {
        snprintf(errstr, errstr_size, "cannot start a mock cluster of %d brokers", brokers);
        rd_kafka_destroy(m->rk);
        free(m);
        return NULL;
    }
    m->brokers = brokers;
    m->bootstrap = sw_strdup(rd_kafka_mock_cluster_bootstraps(m->mcluster));
    return m;
}

const char *sw_mock_bootstrap(const sw_mock_t *m)
{
    return m->bootstrap;
}

rd_kafka_mock_cluster_t *sw_mock_cluster(sw_mock_t *m)
{
    return m->mcluster;
}

int sw_mock_brokers(const sw_mock_t *m)
{
    return m->brokers;
}

sw_err_t sw_mock_topic(sw_mock_t *m, const char *topic, int partitions, char *errstr,
                       size_t errstr_size)
{
    int rf = m->brokers < 3 ? m->brokers : 3;
    rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(m->mcluster, topic, partitions, rf);
    if (err) {
        snprintf(errstr, errstr_size, "cannot create topic \"%s\" (%d partitions): %s", topic,
                 partitions, rd_kafka_err2str(err));
        return SW_ERR_KAFKA;
    }
    return SW_OK;
}

void sw_mock_destroy(sw_mock_t *m)
{
    if (!m) return;
    if (m->mcluster) rd_kafka_mock_cluster_destroy(m->mcluster);
    if (m->rk) rd_kafka_destroy(m->rk);
    free(m->bootstrap);
    free(m);
}

sw_err_t sw_write_file_atomic(const char *path, const char *text, char *errstr, size_t errstr_size)
{
    size_t n = strlen(path) + 16;
    char *tmp = sw_malloc(n);
    snprintf(tmp, n, "%s.tmp%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    bool ok = f != NULL;
    if (ok) {
        ok = fprintf(f, "%s\n", text) >= 0;
        ok = fclose(f) == 0 && ok;
    }
    if (!ok) {
        snprintf(errstr, errstr_size, "%s: cannot write: %s", tmp, strerror(errno));
        unlink(tmp);
        free(tmp);
        return SW_ERR_IO;
    }
    if (rename(tmp, path) != 0) {
        snprintf(errstr, errstr_size, "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return SW_ERR_IO;
    }
    free(tmp);
    return SW_OK;
}

bool sw_kafka_tool_prop(sw_conf_t *conf, const char *pair, sw_kafka_role_t role, const char *cmd)
{
    bool producer = role == SW_KAFKA_PRODUCER;
    const char *other = producer ? "kafka.consumer." : "kafka.producer.";
    char errstr[512];
    if (strncmp(pair, other, 15) == 0) {
        fprintf(stderr,
                "stormwatch %s: option -X: \"%.*s\" configures the %s, and %s has only a %s\n", cmd,
                (int)sw_conf_arg_name_len(pair), pair, producer ? "consumer" : "producer", cmd,
                producer ? "producer" : "consumer");
        return false;
    }
    /* kcat-style: a bare librdkafka name (acks=all, fetch.wait.max.ms=10)
     * is the one client's property; kafka.* and bootstrap.servers as in run. */
    sw_buf_t full;
    sw_buf_init(&full);
    /* The registry's properties are stormwatch's (named as Confluent's clients name them). */
    bool ours = strncmp(pair, "schema.registry.", 16) == 0 ||
                strncmp(pair, "auto.register.schemas=", 22) == 0;
    if (strncmp(pair, "kafka.", 6) != 0 && strncmp(pair, "bootstrap.servers=", 18) != 0 && !ours) {
        if (!strchr(pair, '=')) {
            sw_buf_t got; /* a secret's value after the name is not shown */
            sw_buf_init(&got);
            sw_conf_put_arg(&got, pair);
            fprintf(stderr, "stormwatch %s: option -X: %s is not NAME=VALUE (or list)\n", cmd,
                    sw_buf_cstr(&got));
            sw_buf_clear(&got);
            return false;
        }
        sw_buf_puts(&full, producer ? "kafka.producer." : "kafka.consumer.");
        sw_buf_puts(&full, pair);
        pair = sw_buf_cstr(&full);
    }
    sw_conf_res_t res = sw_conf_set_pair(conf, pair, errstr, sizeof(errstr));
    sw_buf_clear(&full);
    if (res != SW_CONF_OK) {
        fprintf(stderr, "stormwatch %s: option -X: %s\n", cmd, errstr);
        return false;
    }
    return true;
}

const char *sw_kafka_tool_bootstrap(const sw_conf_t *conf, const sw_settings_t *set,
                                    const char *opt, sw_kafka_role_t role, const char *cmd)
{
    if (opt && *opt) return opt;
    const char *v = set->kafka.bootstrap_servers;
    if (*v) return v;
    const char *own = role == SW_KAFKA_PRODUCER ? "kafka.producer.bootstrap.servers"
                                                : "kafka.consumer.bootstrap.servers";
    if (sw_conf_get_str(conf, "kafka.bootstrap.servers") || sw_conf_get_str(conf, own))
        return ""; /* the pass-through sets it */
    fprintf(stderr,
            "stormwatch %s: no Kafka bootstrap servers: give -b HOST:PORT or set "
            "STORMWATCH_BOOTSTRAP_SERVERS\n",
            cmd);
    return NULL;
}

sw_err_t sw_kafka_reachable(rd_kafka_t *rk, const char *bootstrap, char *errstr, size_t errstr_size)
{
    /* Refused or unresolvable addresses answer at once: no need to wait
     * for librdkafka's socket.timeout.ms to say so. */
    const rd_kafka_conf_t *pc = rd_kafka_conf(rk);
    if (pc && sw_kafka_probe(pc, errstr, errstr_size) != SW_OK) return SW_ERR_KAFKA;
    char buf[32];
    size_t n = sizeof(buf);
    long long timeout_ms = 60000; /* librdkafka's default */
    const rd_kafka_conf_t *kc = rd_kafka_conf(rk);
    if (kc && rd_kafka_conf_get(kc, "socket.timeout.ms", buf, &n) == RD_KAFKA_CONF_OK) {
        char *end;
        long long v = strtoll(buf, &end, 10);
        if (*end == '\0' && v > 0) timeout_ms = v;
    }
    /* Brokers only (no topic): any broker that answers will do. */
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, NULL, &md, (int)timeout_ms);
    if (md) rd_kafka_metadata_destroy(md);
    sw_kafka_ctx_t *ctx = rd_kafka_opaque(rk);
    if (!err) {
        if (ctx) ctx->contacted = true;
        return SW_OK;
    }
    snprintf(errstr, errstr_size,
             "cannot reach the Kafka cluster at %s within socket.timeout.ms=%lld: %s%s", bootstrap,
             timeout_ms, rd_kafka_err2str(err),
             err == RD_KAFKA_RESP_ERR__TIMED_OUT || err == RD_KAFKA_RESP_ERR__TRANSPORT
                 ? " (check bootstrap.servers, the network and the listener the brokers advertise)"
                 : "");
    return SW_ERR_KAFKA;
}

const char *sw_kafka_offset_str(int64_t offset, char *buf, size_t size)
{
    switch (offset) {
    case RD_KAFKA_OFFSET_BEGINNING: snprintf(buf, size, "beginning"); break;
    case RD_KAFKA_OFFSET_END: snprintf(buf, size, "end"); break;
    case RD_KAFKA_OFFSET_STORED: snprintf(buf, size, "stored"); break;
    case RD_KAFKA_OFFSET_INVALID: snprintf(buf, size, "none"); break;
    default: snprintf(buf, size, "%lld", (long long)offset); break;
    }
    return buf;
}

bool sw_kafka_has_controller(rd_kafka_t *rk)
{
    int32_t ctl = rd_kafka_controllerid(rk, 2000);
    if (ctl < 0) return false;
    const rd_kafka_metadata_t *md = NULL;
    bool found = false;
    if (rd_kafka_metadata(rk, 0, NULL, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR)
        for (int i = 0; i < md->broker_cnt && !found; i++) found = md->brokers[i].id == ctl;
    if (md) rd_kafka_metadata_destroy(md);
    return found;
}

/* ---- first contact: a TCP probe of bootstrap.servers ------------------------ */

/* Addresses of bootstrap.servers probed at most, and sockets per address
 * (a name may resolve to several: localhost is ::1 and 127.0.0.1). */
#define PROBE_ADDRS 32
#define PROBE_SOCKS 8
/* How often a probe looks at the stop flag while it waits (ms). */
#define PROBE_TICK_MS 100

typedef struct probe_addr_s {
    char name[256]; /* as given, without a PROTOCOL:// prefix */
    int gai;        /* getaddrinfo's error; 0: resolved */
    int gai_errno;  /* errno when gai is EAI_SYSTEM */
    int refused;    /* sockets refused (ECONNREFUSED) */
    int failed;     /* sockets failed otherwise; last_errno says why */
    int last_errno; /* the latest failure other than a refusal */
    int pending;    /* sockets still connecting */
    int nsock;      /* sockets opened */
    bool accepted;  /* one connection was accepted */
} probe_addr_t;

/* A property of @p kc as a number; @p def when unset or not a number. */
static long long conf_ll(const rd_kafka_conf_t *kc, const char *name, long long def)
{
    char buf[64];
    size_t n = sizeof(buf);
    if (rd_kafka_conf_get(kc, name, buf, &n) != RD_KAFKA_CONF_OK) return def;
    char *end;
    long long v = strtoll(buf, &end, 10);
    return end != buf && *end == '\0' ? v : def;
}

/* Split "HOST:PORT", "[V6]:PORT", "HOST" (port 9092), after an optional
 * "PROTOCOL://", as librdkafka reads an address of bootstrap.servers.
 * @returns false when @p tok names no host. */
static bool probe_split(const char *tok, char *host, size_t hsz, char *port, size_t psz)
{
    const char *p = strstr(tok, "://");
    if (p) tok = p + 3;
    const char *colon = NULL;
    size_t hl;
    if (tok[0] == '[') {
        const char *rb = strchr(tok, ']');
        if (!rb) return false;
        hl = (size_t)(rb - tok - 1);
        if (hl == 0 || hl >= hsz) return false;
        memcpy(host, tok + 1, hl);
        host[hl] = '\0';
        colon = rb[1] == ':' ? rb + 1 : NULL;
    } else {
        colon = strchr(tok, ':');
        if (colon && strchr(colon + 1, ':')) colon = NULL; /* a bare IPv6 address */
        hl = colon ? (size_t)(colon - tok) : strlen(tok);
        if (hl == 0 || hl >= hsz) return false;
        memcpy(host, tok, hl);
        host[hl] = '\0';
    }
    snprintf(port, psz, "%s", colon && colon[1] ? colon + 1 : "9092");
    return true;
}

/* What @p a answered, for the message. */
static void probe_answer(const probe_addr_t *a, long long bound_ms, sw_buf_t *out)
{
    char buf[400];
    if (a->gai)
        snprintf(buf, sizeof(buf), "%s does not resolve (%s)", a->name,
                 a->gai == EAI_SYSTEM ? strerror(a->gai_errno) : gai_strerror(a->gai));
    else if (a->pending)
        snprintf(buf, sizeof(buf), "%s did not answer within %lld ms", a->name, bound_ms);
    else if (a->refused) /* the host answered: nothing listens there */
        snprintf(buf, sizeof(buf), "%s refused the connection", a->name);
    else if (a->failed)
        snprintf(buf, sizeof(buf), "%s cannot be connected to (%s)", a->name,
                 strerror(a->last_errno));
    else snprintf(buf, sizeof(buf), "%s has no address", a->name);
    sw_buf_puts(out, buf);
}

/* A connection attempt of @p a that ended with @p err (0: accepted). */
static void probe_done(probe_addr_t *a, int err)
{
    if (!err) a->accepted = true;
    else if (err == ECONNREFUSED) a->refused++;
    else {
        a->failed++;
        a->last_errno = err;
    }
}

/* sw_kafka_probe(), stopped early when *@p running is cleared (NULL:
 * never). @returns 1 accepted (or cannot judge), 0 unreachable (errstr
 * says why), -1 stopped. */
static int probe_run(const rd_kafka_conf_t *kc, volatile sig_atomic_t *running, char *errstr,
                     size_t errstr_size)
{
    /* A client of test.mock.num.brokers talks to its own mock cluster. */
    if (conf_ll(kc, "test.mock.num.brokers", 0) > 0) return 1;
    size_t blen = 0;
    if (rd_kafka_conf_get(kc, "bootstrap.servers", NULL, &blen) != RD_KAFKA_CONF_OK || blen < 2)
        return 1; /* none: librdkafka says so */
    char *servers = sw_malloc(blen + 1);
    rd_kafka_conf_get(kc, "bootstrap.servers", servers, &blen);
    long long bound_ms = conf_ll(kc, "socket.connection.setup.timeout.ms", 30000);
    long long sock_ms = conf_ll(kc, "socket.timeout.ms", 60000);
    if (sock_ms > 0 && sock_ms < bound_ms) bound_ms = sock_ms;
    if (bound_ms < 100) bound_ms = 100;
    char fam[16] = "any";
    size_t fl = sizeof(fam);
    rd_kafka_conf_get(kc, "broker.address.family", fam, &fl);

    probe_addr_t *addrs = sw_calloc(PROBE_ADDRS, sizeof(*addrs));
    struct pollfd fds[PROBE_ADDRS * PROBE_SOCKS];
    int owner[PROBE_ADDRS * PROBE_SOCKS];
    int naddr = 0, nfd = 0, rc = 0;
    bool accepted = false;
    char *save = NULL;
    for (char *tok = strtok_r(servers, ", \t", &save); tok && naddr < PROBE_ADDRS && !accepted;
         tok = strtok_r(NULL, ", \t", &save)) {
        char host[256], port[32];
        if (!probe_split(tok, host, sizeof(host), port, sizeof(port))) continue;
        probe_addr_t *a = &addrs[naddr++];
        const char *shown = strstr(tok, "://");
        snprintf(a->name, sizeof(a->name), "%s", shown ? shown + 3 : tok);
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_protocol = IPPROTO_TCP};
        hints.ai_family = !strcmp(fam, "v4") ? AF_INET : !strcmp(fam, "v6") ? AF_INET6 : AF_UNSPEC;
        struct addrinfo *res = NULL;
        errno = 0;
        a->gai = getaddrinfo(host, port, &hints, &res);
        if (a->gai) {
            a->gai_errno = errno;
            continue;
        }
        for (struct addrinfo *ai = res; ai && a->nsock < PROBE_SOCKS && !accepted;
             ai = ai->ai_next) {
            int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                            ai->ai_protocol);
            if (fd < 0) {
                probe_done(a, errno);
                continue;
            }
            a->nsock++;
            if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                probe_done(a, 0);
                accepted = true;
                close(fd);
            } else if (errno == EINPROGRESS) {
                fds[nfd] = (struct pollfd){.fd = fd, .events = POLLOUT};
                owner[nfd++] = naddr - 1;
                a->pending++;
            } else {
                probe_done(a, errno);
                close(fd);
            }
        }
        freeaddrinfo(res);
    }
    int64_t deadline = sw_clock_ms() + bound_ms;
    int open = nfd;
    while (open > 0 && !accepted) {
        if (running && !*running) {
            rc = -1;
            break;
        }
        int64_t left = deadline - sw_clock_ms();
        if (left <= 0) break;
        int n = poll(fds, (nfds_t)nfd, (int)(left < PROBE_TICK_MS ? left : PROBE_TICK_MS));
        if (n < 0 && errno != EINTR) break;
        for (int i = 0; n > 0 && i < nfd; i++) {
            if (fds[i].fd < 0 || !fds[i].revents) continue;
            int err = 0;
            socklen_t el = sizeof(err);
            if (getsockopt(fds[i].fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0) err = errno;
            probe_addr_t *a = &addrs[owner[i]];
            a->pending--;
            probe_done(a, err);
            if (!err) accepted = true;
            close(fds[i].fd);
            fds[i].fd = -1;
            open--;
        }
    }
    for (int i = 0; i < nfd; i++)
        if (fds[i].fd >= 0) close(fds[i].fd);
    if (accepted || naddr == 0) rc = 1;
    if (rc == 0) {
        sw_buf_t msg;
        sw_buf_init(&msg);
        sw_buf_puts(&msg, "cannot reach the Kafka cluster: ");
        bool slow = false;
        for (int i = 0; i < naddr; i++) {
            if (i) sw_buf_puts(&msg, "; ");
            probe_answer(&addrs[i], bound_ms, &msg);
            slow = slow || (!addrs[i].gai && addrs[i].pending);
        }
        sw_buf_puts(&msg, slow ? "; check bootstrap.servers and the network"
                               : "; check bootstrap.servers");
        snprintf(errstr, errstr_size, "%s", sw_buf_cstr(&msg));
        sw_buf_clear(&msg);
    }
    free(addrs);
    free(servers);
    return rc;
}

sw_err_t sw_kafka_probe(const rd_kafka_conf_t *kc, char *errstr, size_t errstr_size)
{
    return probe_run(kc, NULL, errstr, errstr_size) == 0 ? SW_ERR_KAFKA : SW_OK;
}

bool sw_kafka_wait_reachable(const rd_kafka_conf_t *kc, const sw_log_t *log,
                             volatile sig_atomic_t *running)
{
    char said[1024] = "", now[1024];
    int64_t t0 = sw_clock_ms(), said_ms = 0;
    for (;;) {
        int rc = probe_run(kc, running, now, sizeof(now));
        if (rc < 0) return false;
        if (rc > 0) {
            if (said[0])
                sw_log(log, SW_LOG_INFO, "the Kafka cluster accepts connections (after %lld ms)",
                       (long long)(sw_clock_ms() - t0));
            return true;
        }
        int64_t at = sw_clock_ms();
        if (strcmp(now, said) != 0) {
            sw_log(log, SW_LOG_ERROR, "%s; retrying every 2 s", now);
            snprintf(said, sizeof(said), "%s", now);
            said_ms = at;
        } else if (at - said_ms >= 30000) {
            sw_log(log, SW_LOG_WARN, "still %s (%lld s so far); retrying every 2 s", now,
                   (long long)(at - t0) / 1000);
            said_ms = at;
        }
        for (int i = 0; i < 2000 / PROBE_TICK_MS && *running; i++) usleep(PROBE_TICK_MS * 1000);
        if (!*running) return false;
    }
}

sw_err_t sw_kafka_producer_new(const sw_conf_t *conf, const char *bootstrap, sw_kafka_ctx_t *ctx,
                               void (*dr_msg_cb)(rd_kafka_t *, const rd_kafka_message_t *, void *),
                               const char *topic, rd_kafka_t **rk, rd_kafka_topic_t **rkt,
                               char *errstr, size_t errstr_size)
{
    rd_kafka_conf_t *kc = sw_kafka_conf(conf, SW_KAFKA_PRODUCER, bootstrap, NULL, ctx, errstr,
                                        errstr_size);
    if (!kc) return SW_ERR_INVALID_ARG;
    rd_kafka_conf_set_dr_msg_cb(kc, dr_msg_cb);
    *rk = rd_kafka_new(RD_KAFKA_PRODUCER, kc, errstr, errstr_size);
    if (!*rk) {
        rd_kafka_conf_destroy(kc);
        return SW_ERR_INVALID_ARG;
    }
    *rkt = rd_kafka_topic_new(*rk, topic, NULL);
    if (!*rkt) {
        snprintf(errstr, errstr_size, "topic \"%s\": %s", topic,
                 rd_kafka_err2str(rd_kafka_last_error()));
        return SW_ERR_INVALID_ARG;
    }
    return SW_OK;
}
