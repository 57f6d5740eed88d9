/*
 * The daemon (see sw_run.h).
 *
 * Delivery bookkeeping, per assigned partition: a FIFO of input offsets
 * that still have records (alerts or DLQ) waiting for the broker's
 * acknowledgement. The committable offset is the oldest such offset, or
 * the next offset to process when nothing waits; so an offset is committed
 * only after every record caused by the input before it is acknowledged.
 * A record the broker refuses never completes: commits stop below it and
 * the daemon stops with exit 1, so a restart processes that input again.
 * On revocation the producer is flushed and the partition's offsets are
 * committed before the partition is given up.
 */
#include "stormwatch/sw_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stormwatch/sw_alloc.h"
#include "stormwatch/sw_codec_alert.h"
#include "stormwatch/sw_codec_avro.h"
#include "stormwatch/sw_codec_telemetry.h"
#include "stormwatch/sw_detect.h"
#include "stormwatch/sw_kafka.h"

typedef struct pend_s {
    int64_t offset;   /* input offset */
    uint32_t left;    /* records of that offset not yet acknowledged */
} pend_t;

typedef struct part_s {
    char *topic;
    int32_t partition;
    uint32_t id;             /* stable id carried by delivery tokens */
    sw_detector_t *det;
    int64_t next;            /* next offset to process; -1 before the first */
    pend_t *q;               /* ring of pending offsets, ascending */
    size_t qhead, qn, qcap;
    bool failed;             /* a record was refused: never commit past it */
} part_t;

typedef struct token_s {
    uint32_t part_id;
    int64_t offset;
} token_t;

typedef enum dlq_kind_e { DLQ_DECODE, DLQ_INVALID, DLQ_LIMIT, DLQ_FORMAT } dlq_kind_t;
static const char *const k_dlq_kind[] = {"decode", "invalid", "limit", "format"};

typedef enum fmt_e { FMT_AUTO, FMT_JSON, FMT_AVRO } fmt_t;

typedef struct run_s {
    sw_kafka_ctx_t kctx;
    const sw_run_opts_t *opts;
    const sw_log_t *log;
    sw_params_t params;
    int64_t idle_ms;
    int64_t commit_interval_ms;
    fmt_t in_fmt;
    bool out_avro;
    int32_t schema_telemetry;
    int32_t schema_alert;
    const char *out_topic;
    const char *dlq_topic;
    rd_kafka_t *consumer;
    rd_kafka_t *producer;
    part_t **parts;          /* indexed by id; NULL when revoked */
    size_t nparts;
    part_t *last;            /* lookup cache */
    sw_tdec_t *tdec;
    sw_avro_dec_t *adec;
    sw_buf_t value;
    sw_buf_t key;
    bool failed;             /* exit 1 */
    sw_run_stats_t st;
    sw_log_limit_t lim_bad, lim_kafka, lim_commit;
    part_t *expiring;        /* partition whose idle jobs are being summarised */
} run_t;

/* ---- pending offsets ------------------------------------------------- */

static void pend_add(part_t *p, int64_t offset)
{
    if (p->qn) {
        pend_t *tail = &p->q[(p->qhead + p->qn - 1) % p->qcap];
        if (tail->offset == offset) {
            tail->left++;
            return;
        }
    }
    if (p->qn == p->qcap) {
        size_t cap = p->qcap ? p->qcap * 2 : 16;
        pend_t *q = sw_malloc(cap * sizeof(*q));
        for (size_t i = 0; i < p->qn; i++) q[i] = p->q[(p->qhead + i) % p->qcap];
        free(p->q);
        p->q = q;
        p->qcap = cap;
        p->qhead = 0;
    }
    pend_t *e = &p->q[(p->qhead + p->qn) % p->qcap];
    e->offset = offset;
    e->left = 1;
    p->qn++;
}

static void pend_done(part_t *p, int64_t offset)
{
    /* Acknowledgements come nearly in order: search from the head. */
    for (size_t i = 0; i < p->qn; i++) {
        pend_t *e = &p->q[(p->qhead + i) % p->qcap];
        if (e->offset != offset) continue;
        if (e->left) e->left--;
        break;
    }
    while (p->qn && p->q[p->qhead].left == 0) {
        p->qhead = (p->qhead + 1) % p->qcap;
        p->qn--;
    }
}

/* The offset to commit: nothing before it waits for an acknowledgement. */
static int64_t committable(const part_t *p)
{
    if (p->qn) return p->q[p->qhead].offset;
    return p->next;
}

/* ---- partitions ------------------------------------------------------ */

static part_t *part_new(run_t *r, const char *topic, int32_t partition)
{
    part_t *p = sw_calloc(1, sizeof(*p));
    p->topic = sw_strdup(topic);
    p->partition = partition;
    p->det = sw_detect_new(r->params);
    p->next = -1;
    p->id = (uint32_t)r->nparts;
    r->parts = sw_reallocarray(r->parts, r->nparts + 1, sizeof(*r->parts));
    r->parts[r->nparts++] = p;
    r->st.partitions++;
    return p;
}

static void part_destroy(run_t *r, part_t *p)
{
    r->parts[p->id] = NULL;
    if (r->last == p) r->last = NULL;
    r->st.partitions--;
    sw_detect_destroy(p->det);
    free(p->q);
    free(p->topic);
    free(p);
}

static part_t *part_find(run_t *r, const char *topic, int32_t partition)
{
    if (r->last && r->last->partition == partition && strcmp(r->last->topic, topic) == 0)
        return r->last;
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (p && p->partition == partition && strcmp(p->topic, topic) == 0) return r->last = p;
    }
    return NULL;
}

/* ---- producing ------------------------------------------------------- */

/* Hand one message to the producer, retrying while its queue is full; the
 * record counts as pending for (p, offset) until acknowledged. */
static bool produce(run_t *r, part_t *p, int64_t offset, const char *topic, const void *key,
                    size_t keylen, const void *value, size_t vlen, rd_kafka_headers_t *hdrs)
{
    token_t *tok = sw_malloc(sizeof(*tok));
    tok->part_id = p->id;
    tok->offset = offset;
    pend_add(p, offset);
    for (;;) {
        rd_kafka_resp_err_t err = rd_kafka_producev(
            r->producer, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, keylen),
            RD_KAFKA_V_VALUE((void *)value, vlen), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_OPAQUE(tok), RD_KAFKA_V_END);
        if (!err) return true;
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            rd_kafka_poll(r->producer, 50);
            continue;
        }
        sw_log(r->log, SW_LOG_ERROR, "cannot produce to %s: %s", topic, rd_kafka_err2str(err));
        rd_kafka_headers_destroy(hdrs);
        free(tok);
        p->failed = true; /* the pending entry never completes */
        r->failed = true;
        r->st.produce_errors++;
        return false;
    }
}

static void hdr_add(rd_kafka_headers_t *h, const char *name, const char *value)
{
    rd_kafka_header_add(h, name, -1, value, -1);
}

static void hdr_add_i64(rd_kafka_headers_t *h, const char *name, int64_t v)
{
    char tmp[32];
    snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
    hdr_add(h, name, tmp);
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    run_t *r = ((sw_kafka_ctx_t *)opaque)->user;
    token_t *tok = m->_private;
    if (!tok) return;
    part_t *p = tok->part_id < r->nparts ? r->parts[tok->part_id] : NULL;
    if (m->err) {
        r->st.produce_errors++;
        sw_log(r->log, SW_LOG_ERROR,
               "record for %s [%d] offset %lld was not delivered to %s: %s; stopping without "
               "committing past it",
               p ? p->topic : "?", p ? (int)p->partition : -1, (long long)tok->offset,
               rd_kafka_topic_name(m->rkt), rd_kafka_err2str(m->err));
        if (p) p->failed = true;
        r->failed = true;
    } else {
        r->st.delivered++;
        if (p) pend_done(p, tok->offset);
    }
    free(tok);
}

static void send_dlq(run_t *r, part_t *p, const rd_kafka_message_t *m, dlq_kind_t kind,
                     const char *why)
{
    r->st.dlq++;
    rd_kafka_headers_t *in = NULL;
    rd_kafka_headers_t *h = NULL;
    if (rd_kafka_message_headers(m, &in) == RD_KAFKA_RESP_ERR_NO_ERROR && in)
        h = rd_kafka_headers_copy(in);
    else
        h = rd_kafka_headers_new(6);
    hdr_add(h, "stormwatch.error", why);
    hdr_add(h, "stormwatch.error.kind", k_dlq_kind[kind]);
    hdr_add(h, "stormwatch.source.topic", p->topic);
    hdr_add_i64(h, "stormwatch.source.partition", p->partition);
    hdr_add_i64(h, "stormwatch.source.offset", m->offset);
    sw_log_limited(r->log, &r->lim_bad, SW_LOG_WARN, "topic %s [%d] offset %lld: %s (sent to %s)",
                   p->topic, (int)p->partition, (long long)m->offset, why, r->dlq_topic);
    produce(r, p, m->offset, r->dlq_topic, m->key, m->key_len, m->payload, m->len, h);
}

static void send_record(run_t *r, part_t *p, int64_t offset, sw_record_t *rec)
{
    rec->source.set = true;
    rec->source.topic = sw_str(p->topic);
    rec->source.partition = p->partition;
    rec->source.offset = offset;
    r->st.records[rec->action]++;
    r->value.len = 0;
    bool avro = r->out_avro;
    if (avro) {
        char err[256];
        if (sw_avro_encode_record(rec, r->schema_alert, &r->value, err, sizeof(err)) != SW_OK) {
            /* Never lose an alert to a format limit: fall back to JSON. */
            sw_log(r->log, SW_LOG_WARN, "alert for %s [%d] offset %lld sent as JSON: %s",
                   p->topic, (int)p->partition, (long long)offset, err);
            r->value.len = 0;
            avro = false;
        }
    }
    if (!avro) sw_alert_json_record(&r->value, rec);
    rd_kafka_headers_t *h = rd_kafka_headers_new(8);
    hdr_add(h, "stormwatch.format", avro ? "avro" : "json");
    hdr_add(h, "stormwatch.action", sw_action_str(rec->action));
    hdr_add(h, "stormwatch.source.topic", p->topic);
    hdr_add_i64(h, "stormwatch.source.partition", p->partition);
    hdr_add_i64(h, "stormwatch.source.offset", offset);
    hdr_add(h, "content-type", avro ? "application/vnd.confluent.avro" : "application/json");
    const sw_analysis_t *a = &rec->analysis;
    const char *key = a->has_job_id ? a->job_id.ptr : "";
    size_t keylen = a->has_job_id ? a->job_id.len : 0;
    if (rec->action != SW_ACTION_SUMMARY) {
        sw_buf_t line;
        sw_buf_init(&line);
        sw_record_summary(rec, &line);
        sw_log(r->log, SW_LOG_INFO, "%s", sw_buf_cstr(&line));
        sw_buf_clear(&line);
    }
    produce(r, p, offset, r->out_topic, key, keylen, r->value.data, r->value.len, h);
}

/* ---- consuming ------------------------------------------------------- */

static void handle(run_t *r, const rd_kafka_message_t *m)
{
    if (m->err) {
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return;
        sw_log_limited(r->log, &r->lim_kafka, SW_LOG_WARN, "consumer: %s",
                       rd_kafka_message_errstr(m));
        return;
    }
    const char *topic = rd_kafka_topic_name(m->rkt);
    part_t *p = part_find(r, topic, m->partition);
    if (!p) {
        /* Not ours (a message fetched before a revocation finished). */
        return;
    }
    r->st.messages++;
    r->st.bytes += m->len;
    p->next = m->offset + 1;

    char err[512];
    sw_event_t ev;
    const unsigned char *v = m->payload;
    size_t n = m->len;
    sw_err_t rc;
    if (!v || n == 0) {
        r->st.decode_errors++;
        send_dlq(r, p, m, DLQ_DECODE, "empty message");
        return;
    }
    fmt_t fmt = r->in_fmt;
    if (fmt == FMT_AUTO) fmt = v[0] == 0 ? FMT_AVRO : FMT_JSON;
    if (fmt == FMT_AVRO)
        rc = sw_avro_decode_event(r->adec, v, n, r->schema_telemetry, &ev, err, sizeof(err));
    else
        rc = sw_tdec_json(r->tdec, (const char *)v, n, &ev, err, sizeof(err));
    if (rc != SW_OK) {
        bool invalid = rc == SW_ERR_INVALID_ARG;
        if (invalid) r->st.invalid++;
        else r->st.decode_errors++;
        send_dlq(r, p, m, invalid ? DLQ_INVALID : DLQ_DECODE, err);
        return;
    }
    const sw_record_t *rec;
    if (sw_detect_feed(p->det, &ev, sw_clock_ms(), &rec, err, sizeof(err)) != SW_OK) {
        r->st.limited++;
        send_dlq(r, p, m, DLQ_LIMIT, err);
        return;
    }
    if (rec) send_record(r, p, m->offset, (sw_record_t *)rec);
}

static void on_expired(void *opaque, const sw_record_t *rec)
{
    run_t *r = opaque;
    part_t *p = r->expiring;
    /* A summary waits like a record of the last processed offset, so that
     * offset is not committed before the summary is acknowledged. */
    send_record(r, p, p->next - 1, (sw_record_t *)rec);
}

static void expire_idle(run_t *r)
{
    int64_t now = sw_clock_ms();
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p || p->next < 0) continue;
        r->expiring = p;
        size_t n = sw_detect_expire(p->det, now, r->idle_ms, on_expired, r);
        if (n) sw_log(r->log, SW_LOG_INFO, "%zu idle job%s of %s [%d] summarised and freed", n,
                      n == 1 ? "" : "s", p->topic, (int)p->partition);
    }
    r->expiring = NULL;
}

/* ---- commits and rebalances ------------------------------------------ */

/* Commit the committable offset of every partition in @p only (or of all
 * when only is NULL). */
static void commit(run_t *r, const rd_kafka_topic_partition_list_t *only, bool sync)
{
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(8);
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p) continue;
        int64_t off = committable(p);
        if (off < 0) continue;
        if (only && !rd_kafka_topic_partition_list_find(only, p->topic, p->partition)) continue;
        rd_kafka_topic_partition_list_add(list, p->topic, p->partition)->offset = off;
        if (sync)
            sw_log(r->log, SW_LOG_INFO, "committing %s [%d] at offset %lld%s", p->topic,
                   (int)p->partition, (long long)off,
                   p->qn ? " (records of later offsets still unacknowledged)" : "");
    }
    if (list->cnt) {
        rd_kafka_resp_err_t err = rd_kafka_commit(r->consumer, list, !sync);
        r->st.commits++;
        if (err && err != RD_KAFKA_RESP_ERR__NO_OFFSET)
            sw_log_limited(r->log, &r->lim_commit, SW_LOG_WARN, "offset commit failed: %s",
                           rd_kafka_err2str(err));
    }
    rd_kafka_topic_partition_list_destroy(list);
}

static void offset_commit_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                             rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
    (void)rk;
    (void)offsets;
    run_t *r = ((sw_kafka_ctx_t *)opaque)->user;
    if (err && err != RD_KAFKA_RESP_ERR__NO_OFFSET)
        sw_log_limited(r->log, &r->lim_commit, SW_LOG_WARN, "offset commit failed: %s",
                       rd_kafka_err2str(err));
}

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *list, void *opaque)
{
    run_t *r = ((sw_kafka_ctx_t *)opaque)->user;
    bool cooperative = strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
    r->st.rebalances++;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        for (int i = 0; i < list->cnt; i++) {
            part_new(r, list->elems[i].topic, list->elems[i].partition);
            sw_log(r->log, SW_LOG_INFO, "assigned %s [%d]", list->elems[i].topic,
                   (int)list->elems[i].partition);
        }
        rd_kafka_error_t *e = NULL;
        if (cooperative) e = rd_kafka_incremental_assign(rk, list);
        else rd_kafka_assign(rk, list);
        if (e) {
            sw_log(r->log, SW_LOG_ERROR, "assign failed: %s", rd_kafka_error_string(e));
            rd_kafka_error_destroy(e);
        }
        return;
    }
    /* Revocation: finish in-flight work for these partitions first. */
    bool lost = rd_kafka_assignment_lost(rk);
    rd_kafka_flush(r->producer, 60000);
    if (!lost) commit(r, list, true);
    for (int i = 0; i < list->cnt; i++) {
        part_t *p = part_find(r, list->elems[i].topic, list->elems[i].partition);
        sw_log(r->log, SW_LOG_INFO, "%s %s [%d]", lost ? "lost" : "revoked", list->elems[i].topic,
               (int)list->elems[i].partition);
        if (p) part_destroy(r, p);
    }
    rd_kafka_error_t *e = NULL;
    if (cooperative) e = rd_kafka_incremental_unassign(rk, list);
    else rd_kafka_assign(rk, NULL);
    if (e) {
        sw_log(r->log, SW_LOG_ERROR, "unassign failed: %s", rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
    }
}

/* ---- setup and main loop --------------------------------------------- */

static int subscribe(run_t *r)
{
    const sw_conf_t *conf = r->opts->conf;
    size_t n = sw_conf_get_list_cnt(conf, "input.topics");
    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new((int)n);
    for (size_t i = 0; i < n; i++)
        rd_kafka_topic_partition_list_add(topics, sw_conf_get_list_elem(conf, "input.topics", i),
                                          RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t err = rd_kafka_subscribe(r->consumer, topics);
    rd_kafka_topic_partition_list_destroy(topics);
    if (err) {
        sw_log(r->log, SW_LOG_ERROR, "cannot subscribe: %s", rd_kafka_err2str(err));
        return 1;
    }
    return 0;
}

static int setup(run_t *r)
{
    const sw_conf_t *conf = r->opts->conf;
    char err[512];
    rd_kafka_conf_t *pc = sw_kafka_conf(conf, SW_KAFKA_PRODUCER, r->opts->bootstrap, NULL, &r->kctx,
                                        err, sizeof(err));
    if (!pc) {
        sw_log(r->log, SW_LOG_ERROR, "%s", err);
        return 2;
    }
    rd_kafka_conf_set_dr_msg_cb(pc, dr_cb);
    r->producer = rd_kafka_new(RD_KAFKA_PRODUCER, pc, err, sizeof(err));
    if (!r->producer) {
        rd_kafka_conf_destroy(pc);
        sw_log(r->log, SW_LOG_ERROR, "cannot create the producer: %s", err);
        return 2;
    }
    rd_kafka_conf_t *cc = sw_kafka_conf(conf, SW_KAFKA_CONSUMER, r->opts->bootstrap, NULL,
                                        &r->kctx, err, sizeof(err));
    if (!cc) {
        sw_log(r->log, SW_LOG_ERROR, "%s", err);
        return 2;
    }
    rd_kafka_conf_set_rebalance_cb(cc, rebalance_cb);
    rd_kafka_conf_set_offset_commit_cb(cc, offset_commit_cb);
    r->consumer = rd_kafka_new(RD_KAFKA_CONSUMER, cc, err, sizeof(err));
    if (!r->consumer) {
        rd_kafka_conf_destroy(cc);
        sw_log(r->log, SW_LOG_ERROR, "cannot create the consumer: %s", err);
        return 2;
    }
    rd_kafka_poll_set_consumer(r->consumer);
    return subscribe(r);
}

static void log_stats(run_t *r, uint64_t *last_messages, int64_t *last_ms)
{
    int64_t now = sw_clock_ms();
    double secs = (double)(now - *last_ms) / 1000.0;
    sw_log(r->log, SW_LOG_INFO,
           "%llu messages (%.0f/s), %llu alerts (%llu trigger, %llu update, %llu resolve), "
           "%llu summaries, %llu to the DLQ, %llu partitions",
           (unsigned long long)r->st.messages,
           secs > 0 ? (double)(r->st.messages - *last_messages) / secs : 0.0,
           (unsigned long long)(r->st.records[0] + r->st.records[1] + r->st.records[2]),
           (unsigned long long)r->st.records[0], (unsigned long long)r->st.records[1],
           (unsigned long long)r->st.records[2], (unsigned long long)r->st.records[3],
           (unsigned long long)r->st.dlq, (unsigned long long)r->st.partitions);
    *last_messages = r->st.messages;
    *last_ms = now;
}

int sw_run(const sw_run_opts_t *opts)
{
    run_t r;
    memset(&r, 0, sizeof(r));
    r.opts = opts;
    r.log = opts->log;
    r.kctx.log = opts->log;
    r.kctx.user = &r;
    const sw_conf_t *conf = opts->conf;
    r.params = sw_conf_params(conf);
    sw_conf_get_i64(conf, "job.idle.ms", &r.idle_ms);
    sw_conf_get_i64(conf, "commit.interval.ms", &r.commit_interval_ms);
    int64_t v;
    sw_conf_get_i64(conf, "avro.schema.id.telemetry", &v);
    r.schema_telemetry = (int32_t)v;
    sw_conf_get_i64(conf, "avro.schema.id.alert", &v);
    r.schema_alert = (int32_t)v;
    const char *inf = sw_conf_get_str(conf, "input.format");
    r.in_fmt = !strcmp(inf, "json") ? FMT_JSON : !strcmp(inf, "avro") ? FMT_AVRO : FMT_AUTO;
    r.out_avro = strcmp(sw_conf_get_str(conf, "output.format"), "avro") == 0;
    r.out_topic = sw_conf_get_str(conf, "output.topic");
    r.dlq_topic = sw_conf_get_str(conf, "dlq.topic");
    r.tdec = sw_tdec_new();
    r.adec = sw_avro_dec_new();
    sw_buf_init(&r.value);
    sw_buf_init(&r.key);

    int rc = setup(&r);
    if (rc == 0) {
        sw_log(r.log, SW_LOG_INFO, "consuming %s as group %s; alerts to %s, dead letters to %s",
               sw_conf_get_str(conf, "input.topics") ? sw_conf_get_str(conf, "input.topics") : "?",
               sw_conf_get_str(conf, "group.id"), r.out_topic, r.dlq_topic);
        int64_t last_commit = sw_clock_ms(), last_expire = last_commit, last_stats = last_commit;
        uint64_t stats_msgs = 0;
        while (*opts->running && !r.kctx.fatal && !r.failed) {
            rd_kafka_message_t *m = rd_kafka_consumer_poll(r.consumer, 100);
            if (m) {
                handle(&r, m);
                rd_kafka_message_destroy(m);
            }
            rd_kafka_poll(r.producer, 0);
            int64_t now = sw_clock_ms();
            if (now - last_expire >= 1000) {
                expire_idle(&r);
                last_expire = now;
            }
            if (now - last_commit >= r.commit_interval_ms) {
                commit(&r, NULL, false);
                last_commit = now;
            }
            if (now - last_stats >= 30000) log_stats(&r, &stats_msgs, &last_stats);
        }
        sw_log(r.log, SW_LOG_INFO, "stopping: flushing the producer and committing offsets");
        if (rd_kafka_flush(r.producer, 60000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
            sw_log(r.log, SW_LOG_ERROR, "%d records still unacknowledged after 60 s",
                   rd_kafka_outq_len(r.producer));
            r.failed = true;
        }
        commit(&r, NULL, true);
        rd_kafka_consumer_close(r.consumer);
        log_stats(&r, &stats_msgs, &last_stats);
        rc = r.kctx.fatal || r.failed ? 1 : 0;
        if (r.kctx.fatal) sw_log(r.log, SW_LOG_ERROR, "stopped after a fatal error: %s", r.kctx.fatal_reason);
    }
    if (r.consumer) rd_kafka_destroy(r.consumer);
    if (r.producer) rd_kafka_destroy(r.producer);
    for (size_t i = 0; i < r.nparts; i++)
        if (r.parts[i]) part_destroy(&r, r.parts[i]);
    free(r.parts);
    sw_tdec_destroy(r.tdec);
    sw_avro_dec_destroy(r.adec);
    sw_buf_clear(&r.value);
    sw_buf_clear(&r.key);
    return rc;
}
