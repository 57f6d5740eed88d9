/*
 * The daemon (see sw_run.h).
 *
 * Delivery: per assigned partition, a FIFO of input offsets that still have
 * records (alerts, summaries, dead letters) waiting for the broker's
 * acknowledgement. Everything before the oldest such offset is done.
 *
 * Commits, with state.restore=off: the oldest waiting offset (or the next
 * offset) every commit.interval.ms — at-least-once, never lossy.
 *
 * Commits, with state.restore=on (default): every snapshot.interval.ms the
 * partition's engine state without its windows is written to state.topic
 * as of offset X (sw_detect_snapshot), together with the end offsets of
 * the output and dead-letter topics at that moment. Once the snapshot and
 * every record of the input before X are acknowledged, the committed
 * offset becomes Y = the oldest input offset any retained sample came from
 * (sw_detect_min_offset), with the snapshot's location in the commit
 * metadata. When a partition is assigned (restart after a crash or
 * kill -9, rebalance), its state is rebuilt: the snapshot is read back, the
 * input from Y to X refills the windows (sw_detect_rebuild), and from X on
 * the engine runs normally; the records it produces again are compared
 * with what the output and dead-letter topics already hold past the
 * snapshot's end offsets (by source partition, offset and action) and not
 * sent twice. The output therefore equals that of an uninterrupted run.
 *
 * processing.guarantee=exactly_once wraps the same flow in Kafka
 * transactions: records, snapshots and offsets commit atomically.
 */
#include "sw_run.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "sw_alloc.h"
#include "sw_codec_alert.h"
#include "sw_codec_avro.h"
#include "sw_codec_pager.h"
#include "sw_codec_telemetry.h"
#include "sw_detect.h"
#include "sw_imap.h"
#include "sw_kafka.h"
#include "sw_varint.h"

#define SNAP_CHUNK (512u * 1024u)   /* bytes of compressed snapshot per message */
#define SUPPRESS_DLQ 4              /* "action" of dead letters in suppression keys */

typedef struct pend_s {
    int64_t offset;   /* input offset */
    uint32_t left;    /* records of that offset not yet acknowledged */
} pend_t;

typedef struct snapfl_s {
    bool active;       /* a snapshot is being written */
    bool failed;       /* one of its chunks was refused */
    int64_t x, y;      /* taken at offset x; input from y rebuilds the windows */
    uint64_t id;
    uint32_t n, left;  /* chunks, chunks not yet acknowledged */
    int64_t first_off; /* state topic offset of chunk 0 */
} snapfl_t;

typedef enum pmode_e { PM_NORMAL, PM_REBUILD } pmode_t;

typedef struct part_s {
    char *topic;
    int32_t partition;
    uint32_t id;             /* stable id carried by delivery tokens */
    sw_detector_t *det;
    int64_t next;            /* next offset to process; -1 before the first */
    pend_t *q;               /* ring of pending offsets, ascending */
    size_t qhead, qn, qcap;
    bool failed;             /* a record was refused: never commit past it */
    pmode_t mode;
    int64_t rebuild_x;       /* rebuild mode: offsets below it refill windows */
    int64_t rebuild_y;
    uint64_t rebuilt;        /* samples re-inserted */
    int64_t restore_t0;      /* when the restore started (ms) */
    sw_imap_t suppress;      /* records already on the output: offset*8+action */
    uint64_t suppressed;
    snapfl_t snap;
    int64_t committed_x;     /* snapshot offset of the last commit sent */
    int64_t confirmed_x;     /* snapshot offset of the last commit the broker took */
    int64_t last_snap_ms;
    bool origin;             /* assigned without a usable snapshot: held (paused)
                                until its origin snapshot is committed */
    int64_t origin_x;        /* the offset the origin snapshot is taken at */
    int64_t held_from;       /* lowest offset that reached us while held, -1 none */
    sw_metrics_series_t *m_events, *m_lag;
    sw_detect_stats_t mprev; /* engine counters last published */
} part_t;

typedef enum tok_kind_e { TOK_RECORD, TOK_SNAPSHOT } tok_kind_t;

typedef struct token_s {
    uint32_t part_id;
    tok_kind_t kind;
    uint32_t chunk;
    int64_t offset;   /* input offset (records) */
    uint64_t snap_id; /* snapshots */
} token_t;

typedef enum dlq_kind_e { DLQ_DECODE, DLQ_INVALID, DLQ_LIMIT, DLQ_FORMAT } dlq_kind_t;
static const char *const k_dlq_kind[] = {"decode", "invalid", "limit", "format"};

typedef enum fmt_e { FMT_AUTO, FMT_JSON, FMT_AVRO } fmt_t;

typedef struct run_s {
    bool assigned_once;      /* a rebalance callback assigned (maybe nothing) */
    int64_t last_event_ms;   /* newest input message timestamp seen, ms (metric) */
    sw_kafka_ctx_t kctx;
    const sw_run_opts_t *opts;
    const sw_log_t *log;
    sw_metrics_t *m;         /* may be NULL */
    sw_params_t params;
    int64_t idle_ms;
    int64_t commit_interval_ms;
    int64_t snapshot_interval_ms;
    bool restore;
    bool eos;
    fmt_t in_fmt;
    bool out_avro;
    bool out_pager;          /* output.format pagerduty or alertmanager */
    sw_pager_opts_t pager;   /* its options (strings borrowed from the conf) */
    uint64_t not_paged;      /* summaries that were not a page (never produced) */
    int32_t schema_telemetry;
    int32_t schema_alert;
    size_t max_value;     /* largest value we produce: message.max.bytes less room for headers */
    const char *out_topic;
    const char *dlq_topic;
    const char *state_topic;
    int out_parts, dlq_parts;
    /* Per output partition, then per dead-letter partition: an offset no
     * later record of ours can precede (end offset at start, then one past
     * each delivery); -1 = unknown. Snapshots record these. */
    int64_t *out_pos;
    rd_kafka_t *consumer;
    rd_kafka_t *producer;
    rd_kafka_t *reader;      /* reads snapshots and the output back (restore) */
    part_t **parts;          /* indexed by id; NULL when revoked */
    size_t nparts;
    part_t *last;            /* lookup cache */
    sw_tdec_t *tdec;
    sw_avro_dec_t *adec;
    sw_buf_t value;
    bool failed;             /* exit 1 */
    bool in_txn;             /* exactly_once: a transaction is open */
    uint64_t snap_seq;
    sw_run_stats_t st;
    sw_log_limit_t lim_bad, lim_kafka, lim_commit, lim_snap;
    part_t *expiring;        /* partition whose idle jobs are being summarised */
    bool stopping;           /* the stop sequence runs (see stop()) */
    int64_t stop_deadline;   /* when the stop must be over (ms, sw_clock_ms) */
    int64_t shutdown_ms;     /* shutdown.timeout.ms */
    int commits_waiting;     /* stop: asynchronous commits not yet answered */
    int64_t memory_budget;   /* max.memory.bytes (0: none) */
    uint64_t trimmed_at;     /* engine bytes at the last malloc_trim */
    bool over_budget;
} run_t;

/* ---- bounded stop helpers ------------------------------------------------ */

/* A second SIGTERM/SIGINT: the stop is abandoned. */
static bool stop_abandoned(const run_t *r)
{
    return r->opts->stops && *r->opts->stops >= 2;
}

/* The stop is over: abandoned, or past shutdown.timeout.ms. */
static bool stop_over(const run_t *r)
{
    return r->stopping && (stop_abandoned(r) || sw_clock_ms() >= r->stop_deadline);
}

/* Milliseconds a blocking call may take now: what is left of the stop
 * (at least 1), or @p normal outside a stop. */
static int stop_budget(const run_t *r, int normal)
{
    if (!r->stopping) return normal;
    int64_t left = r->stop_deadline - sw_clock_ms();
    return left < 1 ? 1 : left > normal && normal > 0 ? normal : (int)left;
}

/* Flush the producer until it is empty, in slices that notice a second
 * signal; outside a stop at most @p normal_ms. @returns true when empty. */
static bool flush_bounded(run_t *r, int normal_ms)
{
    int64_t until = sw_clock_ms() + normal_ms;
    while (rd_kafka_outq_len(r->producer) > 0) {
        if (stop_over(r) || (!r->stopping && sw_clock_ms() >= until)) return false;
        rd_kafka_flush(r->producer, 100);
    }
    return true;
}

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

/* Nothing before this offset waits for an acknowledgement. */
static int64_t committable(const part_t *p)
{
    if (p->qn) return p->q[p->qhead].offset;
    return p->next;
}

/* ---- metrics helpers (all tolerate a NULL registry) --------------------- */

static void m_add(run_t *r, sw_metric_t id, uint64_t n)
{
    if (r->m) sw_metrics_add(r->m, id, n);
}

static void m_set(run_t *r, sw_metric_t id, int64_t v)
{
    if (r->m) sw_metrics_set(r->m, id, v);
}

/* ---- partitions ------------------------------------------------------ */

static part_t *part_new(run_t *r, const char *topic, int32_t partition)
{
    part_t *p = sw_calloc(1, sizeof(*p));
    p->topic = sw_strdup(topic);
    p->partition = partition;
    p->next = -1;
    p->mode = PM_NORMAL;
    p->committed_x = -1;
    p->confirmed_x = -1;
    p->held_from = -1;
    p->last_snap_ms = sw_clock_ms();
    sw_imap_init(&p->suppress);
    p->id = (uint32_t)r->nparts;
    r->parts = sw_reallocarray(r->parts, r->nparts + 1, sizeof(*r->parts));
    r->parts[r->nparts++] = p;
    r->st.partitions++;
    if (r->m) {
        p->m_events = sw_metrics_events_in(r->m, topic);
        p->m_lag = sw_metrics_lag_add(r->m, topic, partition);
    }
    return p;
}

static void part_destroy(run_t *r, part_t *p)
{
    r->parts[p->id] = NULL;
    if (r->last == p) r->last = NULL;
    r->st.partitions--;
    if (r->m && p->det) {
        sw_detect_stats_t cur;
        sw_detect_stats(p->det, &cur);
        sw_metrics_engine_counters(r->m, &p->mprev, &cur);
    }
    if (r->m && p->m_lag) sw_metrics_lag_remove(r->m, p->m_lag);
    sw_detect_destroy(p->det);
    sw_imap_clear(&p->suppress);
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

/* Hand one message to the producer, retrying while its queue is full. */
static bool produce_msg(run_t *r, const char *topic, int32_t partition, const void *key,
                        size_t keylen, const void *value, size_t vlen, rd_kafka_headers_t *hdrs,
                        token_t *tok)
{
    for (;;) {
        rd_kafka_resp_err_t err = rd_kafka_producev(
            r->producer, RD_KAFKA_V_TOPIC(topic),
            RD_KAFKA_V_PARTITION(partition >= 0 ? partition : RD_KAFKA_PARTITION_UA),
            RD_KAFKA_V_KEY(key, keylen), RD_KAFKA_V_VALUE((void *)value, vlen),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(hdrs),
            RD_KAFKA_V_OPAQUE(tok), RD_KAFKA_V_END);
        if (!err) return true;
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            rd_kafka_poll(r->producer, 50);
            continue;
        }
        sw_log(r->log, SW_LOG_ERROR, "cannot produce to %s: %s", topic, rd_kafka_err2str(err));
        if (hdrs) rd_kafka_headers_destroy(hdrs);
        return false;
    }
}

/* A record caused by input @p offset of @p p: pending until acknowledged. */
static void produce_record(run_t *r, part_t *p, int64_t offset, const char *topic, const void *key,
                           size_t keylen, const void *value, size_t vlen, rd_kafka_headers_t *hdrs)
{
    token_t *tok = sw_calloc(1, sizeof(*tok));
    tok->part_id = p->id;
    tok->kind = TOK_RECORD;
    tok->offset = offset;
    pend_add(p, offset);
    if (!produce_msg(r, topic, -1, key, keylen, value, vlen, hdrs, tok)) {
        free(tok);
        p->failed = true; /* the pending entry never completes */
        r->failed = true;
        r->st.produce_errors++;
        m_add(r, SW_M_PRODUCE_ERRORS, 1);
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

/* A record of ours landed at @p offset of @p topic [@p partition]. */
static void note_position(run_t *r, const char *topic, int32_t partition, int64_t offset)
{
    if (!r->out_pos || offset < 0) return;
    int base = !strcmp(topic, r->out_topic) ? 0 : !strcmp(topic, r->dlq_topic) ? r->out_parts : -1;
    int n = base == 0 ? r->out_parts : r->dlq_parts;
    if (base < 0 || partition < 0 || partition >= n) return;
    int64_t *pos = &r->out_pos[base + partition];
    if (*pos >= 0 && offset + 1 > *pos) *pos = offset + 1;
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    run_t *r = ((sw_kafka_ctx_t *)opaque)->user;
    token_t *tok = m->_private;
    if (!tok) return;
    if (r->stopping && (m->err == RD_KAFKA_RESP_ERR__PURGE_QUEUE ||
                        m->err == RD_KAFKA_RESP_ERR__PURGE_INFLIGHT)) {
        free(tok); /* an abandoned stop purged it: logged as not committed */
        return;
    }
    part_t *p = tok->part_id < r->nparts ? r->parts[tok->part_id] : NULL;
    if (tok->kind == TOK_SNAPSHOT) {
        if (p && p->snap.active && p->snap.id == tok->snap_id) {
            if (m->err) {
                sw_log(r->log, SW_LOG_WARN, "state snapshot of %s [%d] not stored (%s); retrying later",
                       p->topic, (int)p->partition, rd_kafka_err2str(m->err));
                p->snap.failed = true;
            } else {
                if (tok->chunk == 0) p->snap.first_off = m->offset;
                if (p->snap.left) p->snap.left--;
            }
        }
        free(tok);
        return;
    }
    if (m->err) {
        r->st.produce_errors++;
        m_add(r, SW_M_PRODUCE_ERRORS, 1);
        sw_log(r->log, SW_LOG_ERROR,
               "record for %s [%d] offset %lld was not delivered to %s: %s; stopping without "
               "committing past it",
               p ? p->topic : "?", p ? (int)p->partition : -1, (long long)tok->offset,
               rd_kafka_topic_name(m->rkt), rd_kafka_err2str(m->err));
        if (p) p->failed = true;
        r->failed = true;
    } else {
        r->st.delivered++;
        m_add(r, SW_M_RECORDS_DELIVERED, 1);
        if (p) pend_done(p, tok->offset);
        note_position(r, rd_kafka_topic_name(m->rkt), m->partition, m->offset);
    }
    free(tok);
}

static bool suppressed(run_t *r, part_t *p, int64_t offset, int action)
{
    (void)r;
    uint32_t v;
    int64_t key = offset * 8 + action;
    if (!p->suppress.count || !sw_imap_get(&p->suppress, key, &v)) return false;
    sw_imap_del(&p->suppress, key);
    p->suppressed++;
    return true;
}

static void send_dlq(run_t *r, part_t *p, const rd_kafka_message_t *m, dlq_kind_t kind,
                     const char *why)
{
    sw_log_limited(r->log, &r->lim_bad, SW_LOG_WARN, "topic %s [%d] offset %lld: %s (sent to %s)",
                   p->topic, (int)p->partition, (long long)m->offset, why, r->dlq_topic);
    if (suppressed(r, p, m->offset, SUPPRESS_DLQ)) return;
    r->st.dlq++;
    m_add(r, (sw_metric_t)(SW_M_DLQ_DECODE + kind), 1);
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
    size_t len = m->len, room = r->max_value > m->key_len ? r->max_value - m->key_len : 0;
    if (len > room) {
        /* The input was bigger than we may produce (its topic allows more
         * than message.max.bytes): keep the head, say how long it was. */
        hdr_add_i64(h, "stormwatch.truncated.from", (int64_t)len);
        len = room;
    }
    produce_record(r, p, m->offset, r->dlq_topic, m->key, m->key_len, m->payload, len, h);
}

/* @p rec in the output format into r->value. @returns whether it is Avro. */
static bool encode_record(run_t *r, part_t *p, const sw_record_t *rec)
{
    r->value.len = 0;
    bool avro = r->out_avro;
    if (r->out_pager) {
        r->pager.now_ns = sw_wall_ms() * INT64_C(1000000);
        sw_pager_encode(rec, &r->pager, &r->value);
    }
    if (avro) {
        char err[256];
        if (sw_avro_encode_record(rec, r->schema_alert, &r->value, err, sizeof(err)) != SW_OK) {
            /* Never lose an alert to a format limit: fall back to JSON. */
            sw_log(r->log, SW_LOG_WARN, "alert for %s [%d] offset %lld sent as JSON: %s",
                   p->topic, (int)p->partition, (long long)rec->cause_offset, err);
            r->value.len = 0;
            avro = false;
        }
    }
    if (!avro && !r->out_pager) sw_alert_json_record(&r->value, rec);
    return avro;
}

/* @p pend_offset: the offset the record waits on (the sample's; for an
 * idle summary the last processed one). */
static void send_record(run_t *r, part_t *p, int64_t pend_offset, sw_record_t *rec)
{
    rec->source.set = true;
    rec->source.topic = sw_str(p->topic);
    rec->source.partition = p->partition;
    rec->source.offset = rec->cause_offset;
    if (rec->action != SW_ACTION_SUMMARY) {
        sw_buf_t line;
        sw_buf_init(&line);
        sw_record_summary(rec, &line);
        sw_log(r->log, SW_LOG_INFO, "%s", sw_buf_cstr(&line));
        sw_buf_clear(&line);
    }
    if (suppressed(r, p, rec->cause_offset, (int)rec->action)) return;
    if (r->out_pager && sw_pager_decide(rec) == SW_PAGER_SKIP) {
        /* A summary without an open episode is no page. Nothing is produced,
         * so nothing enters the pending FIFO and its input offset commits as
         * if it had been delivered. */
        r->not_paged++;
        m_add(r, SW_M_SUMMARIES_NOT_PAGED, 1);
        sw_log(r->log, SW_LOG_DEBUG,
               "%s [%d] offset %lld: job summary (episode %lld) not sent: no open episode to "
               "resolve, so no %s page (%llu so far)",
               p->topic, (int)p->partition, (long long)rec->cause_offset, (long long)rec->episode,
               sw_pager_format_str(r->pager.format), (unsigned long long)r->not_paged);
        return;
    }
    r->st.records[rec->action]++;
    m_add(r, (sw_metric_t)(SW_M_RECORDS_OUT_TRIGGER + rec->action), 1);
    const sw_analysis_t *a = &rec->analysis;
    size_t keylen = a->has_job_id ? a->job_id.len : 0;
    bool avro = encode_record(r, p, rec);
    sw_arena_t arena;
    sw_arena_init(&arena);
    if (r->value.len + keylen > r->max_value) {
        /* Over the producer's message.max.bytes the record could never be
         * sent (and a restart would meet it again): send it condensed. */
        size_t full = r->value.len;
        sw_record_t small;
        if (sw_record_condense(rec, &arena, &small)) {
            avro = encode_record(r, p, &small);
            m_add(r, SW_M_RECORDS_CONDENSED, 1);
        }
        sw_log(r->log, SW_LOG_WARN,
               "%s record for %s [%d] offset %lld is %zu bytes, over message.max.bytes: sent "
               "condensed (%zu bytes; rank lists, suspects and notes cut, as its last note says)",
               sw_action_str(rec->action), p->topic, (int)p->partition, (long long)rec->cause_offset,
               full, r->value.len);
        if (r->value.len + keylen > r->max_value) {
            sw_log(r->log, SW_LOG_ERROR,
                   "%s record for %s [%d] offset %lld is still %zu bytes condensed: not sent "
                   "(raise kafka.producer.message.max.bytes and the topic's max.message.bytes)",
                   sw_action_str(rec->action), p->topic, (int)p->partition,
                   (long long)rec->cause_offset, r->value.len);
            r->st.produce_errors++;
            m_add(r, SW_M_PRODUCE_ERRORS, 1);
            sw_arena_clear(&arena);
            return;
        }
    }
    rd_kafka_headers_t *h = rd_kafka_headers_new(8);
    hdr_add(h, "stormwatch.format",
            r->out_pager ? sw_pager_format_str(r->pager.format) : avro ? "avro" : "json");
    hdr_add(h, "stormwatch.action", sw_action_str(rec->action));
    hdr_add(h, "stormwatch.source.topic", p->topic);
    hdr_add_i64(h, "stormwatch.source.partition", p->partition);
    hdr_add_i64(h, "stormwatch.source.offset", rec->cause_offset);
    hdr_add(h, "content-type", avro ? "application/vnd.confluent.avro" : "application/json");
    const char *key = a->has_job_id ? a->job_id.ptr : "";
    produce_record(r, p, pend_offset, r->out_topic, key, keylen, r->value.data, r->value.len, h);
    sw_arena_clear(&arena);
}

/* ---- consuming ------------------------------------------------------- */

static bool decode(run_t *r, const rd_kafka_message_t *m, sw_event_t *ev, char *err, size_t errsz,
                   sw_err_t *rc)
{
    const unsigned char *v = m->payload;
    size_t n = m->len;
    if (!v || n == 0) {
        snprintf(err, errsz, "empty message");
        *rc = SW_ERR_PARSE;
        return false;
    }
    fmt_t fmt = r->in_fmt;
    if (fmt == FMT_AUTO) fmt = v[0] == 0 ? FMT_AVRO : FMT_JSON;
    if (fmt == FMT_AVRO) *rc = sw_avro_decode_event(r->adec, v, n, r->schema_telemetry, ev, err, errsz);
    else *rc = sw_tdec_json(r->tdec, (const char *)v, n, ev, err, errsz);
    return *rc == SW_OK;
}

static void rebuild_finish(run_t *r, part_t *p)
{
    sw_detect_rebuild_done(p->det);
    p->mode = PM_NORMAL;
    sw_log(r->log, SW_LOG_INFO,
           "%s [%d]: state restored: snapshot at offset %lld, windows rebuilt from offset %lld "
           "(%llu samples) in %lld ms; %zu records already on the output will not be sent again",
           p->topic, (int)p->partition, (long long)p->rebuild_x, (long long)p->rebuild_y,
           (unsigned long long)p->rebuilt, (long long)(sw_clock_ms() - p->restore_t0),
           p->suppress.count);
}

static void handle(run_t *r, const rd_kafka_message_t *m)
{
    if (m->err) {
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return;
        sw_log_limited(r->log, &r->lim_kafka, SW_LOG_WARN, "consumer: %s",
                       rd_kafka_message_errstr(m));
        return;
    }
    part_t *p = part_find(r, rd_kafka_topic_name(m->rkt), m->partition);
    if (!p) return; /* not ours (fetched before a revocation finished) */
    if (p->origin) { /* held (paused): read again from here once released */
        if (p->held_from < 0 || m->offset < p->held_from) p->held_from = m->offset;
        return;
    }
    char err[512];
    sw_event_t ev;
    sw_err_t rc;
    if (p->mode == PM_REBUILD) {
        if (p->next < 0 && m->offset > p->rebuild_y)
            sw_log(r->log, SW_LOG_WARN,
                   "%s [%d]: input from offset %lld to %lld is gone (retention); windows are "
                   "rebuilt from what is left",
                   p->topic, (int)p->partition, (long long)p->rebuild_y, (long long)m->offset - 1);
        if (m->offset < p->rebuild_x) {
            p->next = m->offset + 1;
            if (decode(r, m, &ev, err, sizeof(err), &rc) && sw_detect_rebuild(p->det, &ev, m->offset))
                p->rebuilt++;
            if (p->next == p->rebuild_x) rebuild_finish(r, p);
            return;
        }
        rebuild_finish(r, p);
    }
    uint64_t t0 = sw_metrics_now_ns();
    r->st.messages++;
    r->st.bytes += m->len;
    if (p->m_events) sw_metrics_series_add(p->m_events, 1);
    m_add(r, SW_M_INPUT_BYTES, m->len);
    if (r->m) {
        /* The newest message's timestamp (CreateTime or LogAppendTime). */
        int64_t ts_ms = rd_kafka_message_timestamp(m, NULL);
        if (ts_ms > r->last_event_ms) {
            r->last_event_ms = ts_ms;
            sw_metrics_set_double(r->m, SW_M_LAST_EVENT_TIMESTAMP, (double)ts_ms / 1000.0);
        }
    }
    p->next = m->offset + 1;
    if (!decode(r, m, &ev, err, sizeof(err), &rc)) {
        bool invalid = rc == SW_ERR_INVALID_ARG;
        if (invalid) {
            r->st.invalid++;
            m_add(r, SW_M_INVALID_EVENTS, 1);
        } else {
            r->st.decode_errors++;
            m_add(r, SW_M_DECODE_ERRORS, 1);
        }
        send_dlq(r, p, m, invalid ? DLQ_INVALID : DLQ_DECODE, err);
    } else {
        const sw_record_t *rec;
        if (sw_detect_feed_at(p->det, &ev, sw_clock_ms(), m->offset, &rec, err, sizeof(err)) != SW_OK) {
            r->st.limited++;
            m_add(r, SW_M_LIMIT_REJECTS, 1);
            send_dlq(r, p, m, DLQ_LIMIT, err);
        } else if (rec) {
            send_record(r, p, m->offset, (sw_record_t *)rec);
        }
    }
    if (r->m) sw_metrics_observe_ns(r->m, sw_metrics_now_ns() - t0);
}

static void on_expired(void *opaque, const sw_record_t *rec)
{
    run_t *r = opaque;
    part_t *p = r->expiring;
    /* A summary waits like a record of the last processed offset, so that
     * offset is not committed before the summary is acknowledged. */
    send_record(r, p, p->next - 1, (sw_record_t *)rec);
}

/* Once a second: the engines' memory against max.memory.bytes. Over it,
 * each engine evicts its oldest one-rank jobs, and new jobs do the same
 * before they are refused. When much was freed (jobs expired or evicted),
 * the allocator returns it to the system, so that RSS follows. */
static void memory_tick(run_t *r)
{
    uint64_t total = 0;
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p || !p->det) continue;
        sw_detect_stats_t st;
        sw_detect_stats(p->det, &st);
        total += st.bytes;
    }
    bool over = r->memory_budget > 0 && total > (uint64_t)r->memory_budget;
    if (over != r->over_budget)
        sw_log(r->log, over ? SW_LOG_WARN : SW_LOG_INFO,
               over ? "engine state %llu bytes is over max.memory.bytes (%lld): new jobs evict "
                      "the oldest one-rank jobs"
                    : "engine state %llu bytes is back under max.memory.bytes (%lld)",
               (unsigned long long)total, (long long)r->memory_budget);
    r->over_budget = over;
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p || !p->det) continue;
        sw_detect_set_pressure(p->det, over);
        if (over) sw_detect_evict(p->det, 1000);
    }
    if (total > r->trimmed_at) r->trimmed_at = total; /* the high mark since the last trim */
    if (r->trimmed_at > total + (32u << 20)) {
        malloc_trim(0);
        r->trimmed_at = total;
    }
}

static void expire_idle(run_t *r)
{
    int64_t now = sw_clock_ms();
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p || p->next < 0 || p->mode != PM_NORMAL) continue;
        r->expiring = p;
        size_t n = sw_detect_expire(p->det, now, r->idle_ms, on_expired, r);
        if (n) sw_log(r->log, SW_LOG_INFO, "%zu idle job%s of %s [%d] summarised and freed", n,
                      n == 1 ? "" : "s", p->topic, (int)p->partition);
    }
    r->expiring = NULL;
}

/* ---- transactions (exactly_once) --------------------------------------- */

/* An error of the transactional API: fatal ones (fencing) stop the daemon. */
static bool txn_ok(run_t *r, rd_kafka_error_t *e, const char *what)
{
    if (!e) return true;
    sw_log(r->log, SW_LOG_ERROR,
           "exactly_once: %s failed: %s%s; stopping (a restart resumes from the last committed "
           "transaction)",
           what, rd_kafka_error_string(e),
           rd_kafka_error_is_fatal(e) ? " (fatal: this producer was fenced by a newer instance or "
                                        "the transaction coordinator refused it)"
                                      : "");
    rd_kafka_error_destroy(e);
    r->failed = true;
    return false;
}

static bool txn_begin(run_t *r)
{
    if (!r->eos || r->in_txn || r->failed) return true;
    if (!txn_ok(r, rd_kafka_begin_transaction(r->producer), "begin_transaction")) return false;
    r->in_txn = true;
    return true;
}

/* Commit the open transaction with @p offsets (may be empty). */
static bool txn_commit(run_t *r, rd_kafka_topic_partition_list_t *offsets)
{
    if (!r->in_txn) return false;
    if (offsets && offsets->cnt) {
        rd_kafka_consumer_group_metadata_t *cgmd = rd_kafka_consumer_group_metadata(r->consumer);
        rd_kafka_error_t *e =
            rd_kafka_send_offsets_to_transaction(r->producer, offsets, cgmd, stop_budget(r, -1));
        rd_kafka_consumer_group_metadata_destroy(cgmd);
        if (!txn_ok(r, e, "send_offsets_to_transaction")) return false;
    }
    r->in_txn = false;
    if (!txn_ok(r, rd_kafka_commit_transaction(r->producer, stop_budget(r, -1)), "commit_transaction"))
        return false;
    return txn_begin(r);
}

/* ---- snapshots and commits ---------------------------------------------- */

/* Commit @p list: in a transaction, or with the consumer. @returns true
 * when a synchronous commit (or transaction) was taken. */
static bool commit_list(run_t *r, rd_kafka_topic_partition_list_t *list, bool sync)
{
    if (!list->cnt) return true;
    r->st.commits++;
    m_add(r, SW_M_COMMITS, 1);
    if (r->eos) {
        flush_bounded(r, 60000);
        return txn_commit(r, list);
    }
    rd_kafka_resp_err_t err = rd_kafka_commit(r->consumer, list, !sync);
    if (err && err != RD_KAFKA_RESP_ERR__NO_OFFSET) {
        m_add(r, SW_M_COMMIT_ERRORS, 1);
        sw_log_limited(r->log, &r->lim_commit, SW_LOG_WARN, "offset commit failed: %s",
                       rd_kafka_err2str(err));
        return false;
    }
    return sync;
}

/* state.restore=off: commit what is done, for every partition (or @p only). */
static bool commit_plain(run_t *r, const rd_kafka_topic_partition_list_t *only, bool sync)
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
    bool sent = list->cnt > 0;
    commit_list(r, list, sync);
    rd_kafka_topic_partition_list_destroy(list);
    return sent;
}

/* Wait until the cluster answers a metadata request, saying why not
 * (broker unreachable, authentication, TLS, authorization) every few
 * seconds, until it answers or a stop is requested. @returns false on a
 * stop or a fatal error. */
static bool wait_cluster(run_t *r)
{
    int64_t t0 = sw_clock_ms();
    int attempts = 0;
    for (;;) {
        const rd_kafka_metadata_t *md = NULL;
        rd_kafka_resp_err_t e = rd_kafka_metadata(r->producer, 0, NULL, &md, 2000);
        if (!e) {
            rd_kafka_metadata_destroy(md);
            if (attempts)
                sw_log(r->log, SW_LOG_INFO, "the Kafka cluster answers (after %lld ms)",
                       (long long)(sw_clock_ms() - t0));
            return true;
        }
        attempts++;
        rd_kafka_poll(r->producer, 0); /* serves the error callback: the reason */
        if (r->kctx.fatal || !*r->opts->running) return false;
        int last = r->kctx.last_err ? r->kctx.last_err : e;
        const char *kind = sw_kafka_err_kind(last);
        sw_log(r->log, SW_LOG_WARN,
               "cannot reach the Kafka cluster at %s: %s (%s%s%s); retrying (%lld s so far)",
               r->opts->bootstrap, kind ? kind : rd_kafka_err2name((rd_kafka_resp_err_t)last),
               rd_kafka_err2name((rd_kafka_resp_err_t)last), r->kctx.last_err ? ": " : "",
               r->kctx.last_err ? r->kctx.last_reason : "", (long long)(sw_clock_ms() - t0) / 1000);
        for (int i = 0; i < 30 && *r->opts->running; i++) usleep(100000);
        if (!*r->opts->running) return false;
    }
}

/* Partitions of @p topic: 0 when it does not exist; -1 (with *why) when
 * the cluster could not say or refused to. Asks for every topic's
 * metadata: a request naming the topic would make a broker with
 * auto.create.topics.enable create it with the broker's defaults. */
static int topic_check(run_t *r, const char *topic, const char **why)
{
    const rd_kafka_metadata_t *md = NULL;
    int n = -1;
    rd_kafka_resp_err_t e = rd_kafka_metadata(r->producer, 1, NULL, &md, 10000);
    if (!e) {
        n = 0;
        for (int i = 0; i < md->topic_cnt; i++) {
            if (strcmp(md->topics[i].topic, topic) != 0) continue;
            e = md->topics[i].err;
            if (!e) n = md->topics[i].partition_cnt;
            else if (e != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) n = -1;
            break;
        }
    }
    if (md) rd_kafka_metadata_destroy(md);
    if (n < 0 && why) {
        const char *kind = sw_kafka_err_kind(e);
        *why = kind ? kind : rd_kafka_err2str(e);
    }
    return n;
}

static int topic_partitions(run_t *r, const char *topic)
{
    const rd_kafka_metadata_t *md = NULL;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(r->producer, topic, NULL);
    int n = 0;
    if (rd_kafka_metadata(r->producer, 0, rkt, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (md->topic_cnt == 1 && !md->topics[0].err) n = md->topics[0].partition_cnt;
        rd_kafka_metadata_destroy(md);
    }
    rd_kafka_topic_destroy(rkt);
    return n;
}

/* Where the next owner scans the output and dead-letter topics for records
 * of inputs at or after the snapshot: offsets that none of them can
 * precede. Known from the end offsets at start and the delivery reports
 * since, so a snapshot asks the brokers nothing (a position still unknown
 * is asked for once). @returns false when a broker could not say. */
static bool output_positions(run_t *r, sw_buf_t *out)
{
    sw_vput_u(out, (uint64_t)(r->out_parts + r->dlq_parts));
    for (int t = 0; t < 2; t++) {
        const char *topic = t ? r->dlq_topic : r->out_topic;
        int n = t ? r->dlq_parts : r->out_parts;
        for (int q = 0; q < n; q++) {
            int64_t *pos = &r->out_pos[(t ? r->out_parts : 0) + q];
            int64_t lo, hi;
            if (*pos < 0) {
                if (rd_kafka_query_watermark_offsets(r->producer, topic, q, &lo, &hi, 5000))
                    return false;
                *pos = hi;
            }
            sw_vput_u(out, (uint64_t)t);
            sw_vput_u(out, (uint64_t)q);
            sw_vput_i(out, *pos);
        }
    }
    return true;
}

/* Whether a suppression key (offset * 8 + action) still matters for a
 * snapshot as of offset @p x (see snapshot_start). */
static bool carry_suppressed(int64_t key, int64_t x, int64_t y)
{
    /* A summary names its job's last input, which is at or after y (the
     * oldest input a retained sample came from) while the job is alive. */
    return key / 8 >= x || (key % 8 == SW_ACTION_SUMMARY && key / 8 >= y);
}

/* Start writing a snapshot of @p p as of its next offset. */
static void snapshot_start(run_t *r, part_t *p)
{
    int64_t x = p->next, y;
    if (!sw_detect_min_offset(p->det, &y) || y > x) y = x;
    sw_buf_t env;
    sw_buf_init(&env);
    sw_buf_put(&env, "SWE1", 4);
    sw_vput_i(&env, x);
    sw_vput_i(&env, y);
    if (!output_positions(r, &env)) {
        sw_log_limited(r->log, &r->lim_snap, SW_LOG_WARN,
                       "%s [%d]: snapshot postponed: the output topics' end offsets are unknown",
                       p->topic, (int)p->partition);
        sw_buf_clear(&env);
        return;
    }
    /* Records a previous owner already sent that this one has not made
     * again yet: they lie before this snapshot's positions, so the next
     * owner must learn them from here. Those of inputs at or after x, and
     * summaries of inputs at or after y: a job's idle summary names its last input
     * but is made later, when the job has been idle for job.idle.ms, so a
     * job alive in this snapshot may be summarised again by the next
     * owner although its summary is on the output already. */
    size_t nsup = 0;
    for (size_t k = 0; k < p->suppress.cap; k++)
        if (p->suppress.vals[k] != UINT32_MAX && carry_suppressed(p->suppress.keys[k], x, y)) nsup++;
    sw_vput_u(&env, nsup);
    for (size_t k = 0; k < p->suppress.cap; k++)
        if (p->suppress.vals[k] != UINT32_MAX && carry_suppressed(p->suppress.keys[k], x, y))
            sw_vput_i(&env, p->suppress.keys[k]);
    sw_buf_t snap;
    sw_buf_init(&snap);
    sw_detect_snapshot(p->det, x, &snap);
    sw_vput_bytes(&env, (sw_str_t){snap.data, snap.len});
    sw_buf_clear(&snap);
    uLongf zlen = compressBound(env.len);
    unsigned char *z = sw_malloc(zlen);
    if (compress2(z, &zlen, (const Bytef *)env.data, env.len, 1) != Z_OK) {
        sw_log(r->log, SW_LOG_ERROR, "%s [%d]: cannot compress the snapshot", p->topic, (int)p->partition);
        free(z);
        sw_buf_clear(&env);
        return;
    }
    sw_buf_clear(&env);
    snapfl_t *s = &p->snap;
    memset(s, 0, sizeof(*s));
    s->active = true;
    s->x = x;
    s->y = y;
    s->id = ((uint64_t)sw_wall_ms() << 16) ^ ((uint64_t)getpid() << 40) ^ ++r->snap_seq;
    s->n = (uint32_t)((zlen + SNAP_CHUNK - 1) / SNAP_CHUNK);
    s->left = s->n;
    s->first_off = -1;
    char key[300];
    snprintf(key, sizeof(key), "%s/%d", p->topic, (int)p->partition);
    for (uint32_t i = 0; i < s->n; i++) {
        size_t off = (size_t)i * SNAP_CHUNK, len = zlen - off < SNAP_CHUNK ? zlen - off : SNAP_CHUNK;
        rd_kafka_headers_t *h = rd_kafka_headers_new(3);
        char v[32];
        snprintf(v, sizeof(v), "%llu", (unsigned long long)s->id);
        hdr_add(h, "stormwatch.snapshot.id", v);
        snprintf(v, sizeof(v), "%u/%u", i, s->n);
        hdr_add(h, "stormwatch.snapshot.chunk", v);
        token_t *tok = sw_calloc(1, sizeof(*tok));
        tok->part_id = p->id;
        tok->kind = TOK_SNAPSHOT;
        tok->chunk = i;
        tok->snap_id = s->id;
        if (!produce_msg(r, r->state_topic, 0, key, strlen(key), z + off, len, h, tok)) {
            free(tok);
            s->failed = true;
            break;
        }
    }
    free(z);
    p->last_snap_ms = sw_clock_ms();
}

/* Commit the snapshot of @p p once it and the input before it are safe. */
static bool snapshot_commit_ready(const part_t *p)
{
    return p->snap.active && !p->snap.failed && p->snap.left == 0 && committable(p) >= p->snap.x &&
           !p->failed;
}

static void snapshot_commit(run_t *r, part_t *p, bool sync)
{
    snapfl_t *s = &p->snap;
    char md[128];
    snprintf(md, sizeof(md), "sw1:%lld:%u:%llu:%lld", (long long)s->first_off, s->n,
             (unsigned long long)s->id, (long long)s->x);
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(list, p->topic, p->partition);
    tp->offset = s->y;
    tp->metadata = sw_strdup(md);
    tp->metadata_size = strlen(md);
    p->committed_x = s->x;
    s->active = false;
    if (commit_list(r, list, sync) && sync) {
        p->confirmed_x = s->x;
        sw_log(r->log, SW_LOG_INFO, "%s [%d]: committed offset %lld with the state as of offset %lld",
               p->topic, (int)p->partition, (long long)s->y, (long long)s->x);
    }
    rd_kafka_topic_partition_list_destroy(list);
}

static void origin_tick(run_t *r, part_t *p, int64_t now);

static void snapshots_tick(run_t *r, int64_t now)
{
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (p && p->origin) {
            origin_tick(r, p, now);
            continue;
        }
        if (!p || p->mode != PM_NORMAL || p->next < 0) continue;
        if (p->snap.active && p->snap.failed) p->snap.active = false;
        if (snapshot_commit_ready(p)) snapshot_commit(r, p, false);
        if (!p->snap.active && p->next > p->committed_x &&
            now - p->last_snap_ms >= r->snapshot_interval_ms)
            snapshot_start(r, p);
    }
}

/* A final snapshot of @p p, flushed and committed now (revocation, stop). */
static void snapshot_final(run_t *r, part_t *p)
{
    if (p->mode != PM_NORMAL || p->next < 0 || p->failed) return;
    if (p->next <= p->confirmed_x) return; /* nothing new since the last commit */
    for (int attempt = 0; attempt < 3; attempt++) {
        p->snap.active = false; /* any snapshot in flight is superseded */
        snapshot_start(r, p);
        if (!p->snap.active) continue;
        rd_kafka_flush(r->producer, 30000);
        if (!snapshot_commit_ready(p)) continue;
        snapshot_commit(r, p, true);
        if (p->confirmed_x >= p->snap.x) return;
    }
    sw_log(r->log, SW_LOG_WARN,
           "%s [%d]: the final snapshot could not be committed; the next owner rebuilds from "
           "offset %lld's snapshot and skips what the output already holds",
           p->topic, (int)p->partition, (long long)p->confirmed_x);
}

/* ---- restore ---------------------------------------------------------- */

/* Read the @p n chunks of snapshot @p id from the state topic at @p first. */
static bool read_snapshot(run_t *r, const char *key, int64_t first, uint32_t n, uint64_t id,
                          sw_buf_t *out, char *err, size_t errsz)
{
    rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(tp, r->state_topic, 0)->offset = first;
    rd_kafka_assign(r->reader, tp);
    rd_kafka_topic_partition_list_destroy(tp);
    uint32_t got = 0;
    int64_t deadline = sw_clock_ms() + 30000;
    char want_id[32];
    snprintf(want_id, sizeof(want_id), "%llu", (unsigned long long)id);
    while (got < n && sw_clock_ms() < deadline) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(r->reader, 100);
        if (!m) continue;
        if (m->err) {
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                snprintf(err, errsz, "reading %s: %s", r->state_topic, rd_kafka_message_errstr(m));
                rd_kafka_message_destroy(m);
                break;
            }
            rd_kafka_message_destroy(m);
            continue;
        }
        rd_kafka_headers_t *h;
        const void *v;
        size_t vs;
        bool mine = m->key_len == strlen(key) && memcmp(m->key, key, m->key_len) == 0 &&
                    !rd_kafka_message_headers(m, &h) &&
                    !rd_kafka_header_get_last(h, "stormwatch.snapshot.id", &v, &vs) &&
                    vs == strlen(want_id) && memcmp(v, want_id, vs) == 0;
        if (mine) {
            sw_buf_put(out, m->payload, m->len);
            got++;
        }
        rd_kafka_message_destroy(m);
    }
    rd_kafka_assign(r->reader, NULL);
    if (got < n && !*err)
        snprintf(err, errsz, "only %u of %u chunks of snapshot %s found in %s from offset %lld", got,
                 n, want_id, r->state_topic, (long long)first);
    return got == n;
}

/* Note what the output and dead-letter topics hold past the snapshot for
 * source partition @p p: those records are not sent again. */
static void scan_output(run_t *r, part_t *p, sw_vrd_t *rd)
{
    uint64_t npos = sw_vget_u(rd);
    rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new((int)npos + 1);
    int64_t *end = sw_calloc(npos + 1, sizeof(*end));
    int need = 0;
    for (uint64_t i = 0; i < npos && !rd->bad; i++) {
        int t = (int)sw_vget_u(rd);
        int q = (int)sw_vget_u(rd);
        int64_t from = sw_vget_i(rd);
        const char *topic = t ? r->dlq_topic : r->out_topic;
        int64_t lo, hi;
        if (rd_kafka_query_watermark_offsets(r->reader, topic, q, &lo, &hi, 10000) || hi <= from)
            continue;
        rd_kafka_topic_partition_list_add(tp, topic, q)->offset = from;
        end[tp->cnt - 1] = hi;
        need++;
    }
    if (!need) {
        rd_kafka_topic_partition_list_destroy(tp);
        free(end);
        return;
    }
    rd_kafka_assign(r->reader, tp);
    char src_part[16];
    snprintf(src_part, sizeof(src_part), "%d", (int)p->partition);
    int64_t deadline = sw_clock_ms() + 60000;
    int done = 0;
    while (done < need && sw_clock_ms() < deadline) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(r->reader, 100);
        if (!m) continue;
        if (!m->err) {
            const char *topic = rd_kafka_topic_name(m->rkt);
            rd_kafka_headers_t *h;
            const void *v;
            size_t vs;
            if (!rd_kafka_message_headers(m, &h)) {
                char buf[3][256];
                const char *names[3] = {"stormwatch.source.topic", "stormwatch.source.partition",
                                        "stormwatch.source.offset"};
                bool ok = true;
                for (int k = 0; k < 3 && ok; k++) {
                    ok = !rd_kafka_header_get_last(h, names[k], &v, &vs) && vs < sizeof(buf[k]);
                    if (ok) {
                        memcpy(buf[k], v, vs);
                        buf[k][vs] = '\0';
                    }
                }
                if (ok && !strcmp(buf[0], p->topic) && !strcmp(buf[1], src_part)) {
                    int action = SUPPRESS_DLQ;
                    if (!strcmp(topic, r->out_topic)) {
                        action = -1;
                        if (!rd_kafka_header_get_last(h, "stormwatch.action", &v, &vs))
                            for (int a = 0; a < 4; a++)
                                if (vs == strlen(sw_action_str((sw_action_t)a)) &&
                                    !memcmp(v, sw_action_str((sw_action_t)a), vs))
                                    action = a;
                    }
                    if (action >= 0) sw_imap_put(&p->suppress, atoll(buf[2]) * 8 + action, 1);
                }
            }
            for (int k = 0; k < tp->cnt; k++)
                if (!strcmp(tp->elems[k].topic, topic) && tp->elems[k].partition == m->partition &&
                    m->offset + 1 >= end[k] && end[k] >= 0) {
                    end[k] = -1;
                    done++;
                }
        }
        rd_kafka_message_destroy(m);
    }
    rd_kafka_assign(r->reader, NULL);
    rd_kafka_topic_partition_list_destroy(tp);
    free(end);
}

/* Rebuild @p p's state from its committed snapshot, if there is one. */
static void restore_partition(run_t *r, part_t *p, const rd_kafka_topic_partition_t *c)
{
    p->det = NULL;
    char err[512] = "";
    long long first;
    unsigned n;
    unsigned long long id;
    long long x;
    char md[160] = "";
    if (c && c->metadata && c->metadata_size && c->metadata_size < sizeof(md))
        memcpy(md, c->metadata, c->metadata_size);
    if (!r->restore || sscanf(md, "sw1:%lld:%u:%llu:%lld", &first, &n, &id, &x) != 4) {
        p->det = sw_detect_new(r->params);
        p->origin = r->restore;
        if (r->restore)
            sw_log(r->log, SW_LOG_INFO, "%s [%d]: no state snapshot committed; starting empty at %s",
                   p->topic, (int)p->partition,
                   c && c->offset >= 0 ? "the committed offset" : "the earliest offset");
        return;
    }
    p->restore_t0 = sw_clock_ms();
    char key[300];
    snprintf(key, sizeof(key), "%s/%d", p->topic, (int)p->partition);
    sw_buf_t z, env;
    sw_buf_init(&z);
    sw_buf_init(&env);
    if (read_snapshot(r, key, first, n, id, &z, err, sizeof(err))) {
        /* Inflate (the size is not stored: grow until it fits). */
        uLongf cap = z.len * 4 + 4096;
        for (;;) {
            sw_buf_reserve(&env, cap);
            uLongf len = cap;
            int zr = uncompress((Bytef *)env.data, &len, (const Bytef *)z.data, z.len);
            if (zr == Z_BUF_ERROR) {
                cap *= 2;
                continue;
            }
            if (zr == Z_OK) env.len = len;
            else snprintf(err, sizeof(err), "snapshot %llu is corrupt (zlib error %d)", id, zr);
            break;
        }
    }
    sw_vrd_t rd = {(const uint8_t *)env.data, (const uint8_t *)env.data + env.len, false};
    if (env.len >= 4 && memcmp(env.data, "SWE1", 4) == 0) {
        rd.p += 4;
        int64_t sx = sw_vget_i(&rd), sy = sw_vget_i(&rd);
        scan_output(r, p, &rd);
        uint64_t nsup = sw_vget_u(&rd);
        for (uint64_t k = 0; k < nsup && !rd.bad; k++) sw_imap_put(&p->suppress, sw_vget_i(&rd), 1);
        sw_str_t snap = sw_vget_bytes(&rd);
        int64_t nx;
        if (!rd.bad)
            p->det = sw_detect_restore(r->params, snap.ptr, snap.len, sw_clock_ms(), &nx, err, sizeof(err));
        if (p->det) {
            p->rebuild_x = sx;
            p->rebuild_y = sy;
            p->mode = PM_REBUILD;
            if (c->offset >= sx) rebuild_finish(r, p); /* nothing to re-read */
        }
    } else if (!*err) {
        snprintf(err, sizeof(err), "snapshot %llu has no envelope", id);
    }
    if (!p->det) {
        sw_log(r->log, SW_LOG_ERROR,
               "%s [%d]: cannot restore the state (%s); starting empty at the committed offset %lld",
               p->topic, (int)p->partition, err, (long long)c->offset);
        sw_imap_clear(&p->suppress);
        p->det = sw_detect_new(r->params);
        p->origin = true;
    }
    sw_buf_clear(&z);
    sw_buf_clear(&env);
}

/* Where consumption of a partition without a usable snapshot starts: the
 * committed offset, else where auto.offset.reset points (-1: unknown). */
static int64_t start_offset(run_t *r, const part_t *p, const rd_kafka_topic_partition_t *c)
{
    if (c && c->offset >= 0) return c->offset;
    char reset[32] = "earliest";
    size_t n = sizeof(reset);
    rd_kafka_conf_get(rd_kafka_conf(r->consumer), "auto.offset.reset", reset, &n);
    int64_t lo, hi;
    if (rd_kafka_query_watermark_offsets(r->reader, p->topic, p->partition, &lo, &hi, 10000))
        return -1;
    return strcmp(reset, "latest") == 0 || strcmp(reset, "end") == 0 || strcmp(reset, "largest") == 0
               ? hi
               : lo;
}

/* The origin snapshots: a partition assigned without a usable snapshot
 * gets one of its empty engine, as of the offset where it starts, with the
 * output topics' end offsets, committed before its first message is
 * processed. A kill at any later moment then restores from it and finds
 * everything sent since on the output: no record is sent twice, even in a
 * partition's first seconds. Called in the rebalance callback, before the
 * partitions are assigned, bounded by @p budget_ms. A partition whose
 * origin could not be committed now (a rebalance in progress, brokers
 * unreachable) stays held: assigned but paused, and origin_tick() retries
 * until the commit is confirmed. @returns the partitions held. */
static int origin_snapshots(run_t *r, part_t **ps, int n, int64_t budget_ms)
{
    int64_t t0 = sw_clock_ms(), deadline = t0 + budget_ms;
    for (int i = 0; i < n; i++) {
        ps[i]->snap.active = false;
        ps[i]->origin_x = ps[i]->next;
        if (ps[i]->next >= 0) snapshot_start(r, ps[i]);
    }
    for (;;) {
        int waiting = 0;
        for (int i = 0; i < n; i++)
            if (ps[i]->snap.active && !ps[i]->snap.failed && ps[i]->snap.left) waiting++;
        if (!waiting || sw_clock_ms() >= deadline) break;
        rd_kafka_poll(r->producer, 20);
    }
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(n);
    for (int i = 0; i < n; i++) {
        part_t *p = ps[i];
        if (!snapshot_commit_ready(p)) continue;
        char md[128];
        snprintf(md, sizeof(md), "sw1:%lld:%u:%llu:%lld", (long long)p->snap.first_off, p->snap.n,
                 (unsigned long long)p->snap.id, (long long)p->snap.x);
        rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(list, p->topic, p->partition);
        tp->offset = p->snap.x;
        tp->metadata = sw_strdup(md);
        tp->metadata_size = strlen(md);
    }
    bool taken = list->cnt && commit_list(r, list, true);
    int ok = 0, held = 0;
    for (int i = 0; i < n; i++) {
        part_t *p = ps[i];
        p->last_snap_ms = sw_clock_ms();
        if (taken && rd_kafka_topic_partition_list_find(list, p->topic, p->partition)) {
            p->committed_x = p->confirmed_x = p->snap.x;
            p->snap.active = false;
            p->origin = false;
            ok++;
            continue;
        }
        p->snap.active = false; /* origin_tick() takes a new one */
        held++;
        sw_log(r->log, SW_LOG_INFO,
               "%s [%d]: held until its origin snapshot is committed (%s); retrying", p->topic,
               (int)p->partition,
               p->next < 0 ? "its start offset is unknown" : "the commit was not taken yet");
    }
    rd_kafka_topic_partition_list_destroy(list);
    if (ok)
        sw_log(r->log, SW_LOG_INFO, "origin snapshots committed for %d new partition%s in %lld ms",
               ok, ok == 1 ? "" : "s", (long long)(sw_clock_ms() - t0));
    return held;
}

/* Pause (@p pause) or resume the held partition @p p. */
static void origin_pause(run_t *r, part_t *p, bool pause)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, p->topic, p->partition);
    rd_kafka_resp_err_t e = pause ? rd_kafka_pause_partitions(r->consumer, l)
                                  : rd_kafka_resume_partitions(r->consumer, l);
    if (e)
        sw_log(r->log, SW_LOG_WARN, "%s [%d]: cannot %s the partition: %s", p->topic, (int)p->partition,
               pause ? "pause" : "resume", rd_kafka_err2str(e));
    rd_kafka_topic_partition_list_destroy(l);
}

/* A held partition: take its origin snapshot again until a commit of it
 * is confirmed, then consume it from where it starts. */
static void origin_tick(run_t *r, part_t *p, int64_t now)
{
    if (p->origin_x < 0) { /* the start offset was unknown: ask again */
        if (now - p->last_snap_ms < 1000) return;
        p->last_snap_ms = now;
        p->origin_x = p->next = start_offset(r, p, NULL);
        if (p->origin_x < 0) return;
    }
    if (p->confirmed_x >= p->origin_x) {
        p->origin = false;
        if (p->held_from >= 0) {
            rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
            rd_kafka_topic_partition_list_add(l, p->topic, p->partition)->offset = p->held_from;
            rd_kafka_error_t *e = rd_kafka_seek_partitions(r->consumer, l, 5000);
            if (e) rd_kafka_error_destroy(e);
            rd_kafka_topic_partition_list_destroy(l);
        }
        origin_pause(r, p, false);
        sw_log(r->log, SW_LOG_INFO, "%s [%d]: origin snapshot committed; consuming from offset %lld",
               p->topic, (int)p->partition, (long long)p->origin_x);
        return;
    }
    if (p->snap.active && p->snap.failed) p->snap.active = false;
    if (p->snap.active) {
        if (snapshot_commit_ready(p)) snapshot_commit(r, p, r->eos);
        return;
    }
    if (p->committed_x >= p->origin_x) return; /* a commit of it is in flight */
    if (now - p->last_snap_ms < 200) return;
    p->next = p->origin_x;
    snapshot_start(r, p);
}

/* ---- rebalances -------------------------------------------------------- */

/* The consumer handle a stop could not destroy (bug 4312 below): kept
 * reachable on purpose, so that leak checkers do not report what the
 * process exit reclaims. The one file-scope variable of the daemon. */
static rd_kafka_t *g_undestroyed_consumer;

/* librdkafka before 2.3.0 asserts in rd_kafka_sticky_assignor_state_destroy
 * when a cooperative-sticky consumer that has joined its group (the group
 * chose the protocol) is destroyed before its first assignment (upstream
 * issue 4312). At stop, give the assignment a moment to arrive (it is
 * normally in flight: SyncGroup follows JoinGroup), and report whether
 * closing and destroying the consumer would still abort. */
static bool consumer_close_would_abort(run_t *r)
{
    if (r->assigned_once || rd_kafka_version() >= 0x020300ff) return false;
    int64_t until = sw_clock_ms() + 5000;
    while (!r->assigned_once && strcmp(rd_kafka_rebalance_protocol(r->consumer), "NONE") != 0 &&
           sw_clock_ms() < until && !stop_over(r)) {
        /* Serves the rebalance callback; a message that arrives now is not
         * processed, so its offset is not committed (it is read again). */
        rd_kafka_message_t *m = rd_kafka_consumer_poll(r->consumer, 100);
        if (m) rd_kafka_message_destroy(m);
    }
    return !r->assigned_once && strcmp(rd_kafka_rebalance_protocol(r->consumer), "COOPERATIVE") == 0;
}

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *list, void *opaque)
{
    run_t *r = ((sw_kafka_ctx_t *)opaque)->user;
    bool cooperative = strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
    r->st.rebalances++;
    m_add(r, SW_M_REBALANCES, 1);
    if (r->m) sw_metrics_set_ready_state(r->m, r->st.partitions > 0, -1);
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        r->assigned_once = true;
        rd_kafka_topic_partition_list_t *c = rd_kafka_topic_partition_list_copy(list);
        if (r->restore && rd_kafka_committed(rk, c, 30000))
            sw_log(r->log, SW_LOG_WARN, "cannot read the committed offsets; starting empty");
        part_t **fresh = sw_calloc((size_t)list->cnt + 1, sizeof(*fresh));
        int nfresh = 0;
        for (int i = 0; i < list->cnt; i++) {
            part_t *p = part_new(r, list->elems[i].topic, list->elems[i].partition);
            sw_log(r->log, SW_LOG_INFO, "assigned %s [%d]", p->topic, (int)p->partition);
            restore_partition(r, p, &c->elems[i]);
            if (p->origin) {
                p->next = start_offset(r, p, &c->elems[i]);
                fresh[nfresh++] = p;
            }
        }
        int held = nfresh ? origin_snapshots(r, fresh, nfresh, 15000) : 0;
        rd_kafka_topic_partition_list_destroy(c);
        rd_kafka_error_t *e = NULL;
        if (cooperative) e = rd_kafka_incremental_assign(rk, list);
        else rd_kafka_assign(rk, list);
        if (e) {
            sw_log(r->log, SW_LOG_ERROR, "assign failed: %s", rd_kafka_error_string(e));
            rd_kafka_error_destroy(e);
        }
        for (int i = 0; held && i < nfresh; i++)
            if (fresh[i]->origin) origin_pause(r, fresh[i], true);
        free(fresh);
        m_set(r, SW_M_ASSIGNED_PARTITIONS, (int64_t)r->st.partitions);
        return;
    }
    /* Revocation: finish in-flight work for these partitions first. */
    bool lost = rd_kafka_assignment_lost(rk);
    if (!lost && !r->stopping) { /* a stop has done this already, within its deadline */
        if (r->restore) {
            for (int i = 0; i < list->cnt; i++) {
                part_t *p = part_find(r, list->elems[i].topic, list->elems[i].partition);
                if (p && !p->origin) snapshot_final(r, p);
            }
        } else {
            rd_kafka_flush(r->producer, 60000);
            commit_plain(r, list, true);
        }
    }
    for (int i = 0; i < list->cnt; i++) {
        part_t *p = part_find(r, list->elems[i].topic, list->elems[i].partition);
        sw_log(r->log, SW_LOG_INFO, "%s %s [%d]", lost ? "lost" : "revoked", list->elems[i].topic,
               (int)list->elems[i].partition);
        if (p && p->origin) origin_pause(r, p, false); /* a later owner starts unpaused */
        if (p) part_destroy(r, p);
    }
    rd_kafka_error_t *e = NULL;
    if (cooperative) e = rd_kafka_incremental_unassign(rk, list);
    else rd_kafka_assign(rk, NULL);
    if (e) {
        sw_log(r->log, SW_LOG_ERROR, "unassign failed: %s", rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
    }
    m_set(r, SW_M_ASSIGNED_PARTITIONS, (int64_t)r->st.partitions);
}

/* The broker's answer to a commit, partition by partition: a snapshot
 * commit that failed is taken again at the next tick. */
static void offset_commit_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                             rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
    (void)rk;
    run_t *r = ((sw_kafka_ctx_t *)opaque)->user;
    if (r->commits_waiting > 0) r->commits_waiting--;
    if (err && err != RD_KAFKA_RESP_ERR__NO_OFFSET) {
        m_add(r, SW_M_COMMIT_ERRORS, 1);
        sw_log_limited(r->log, &r->lim_commit, SW_LOG_WARN, "offset commit failed: %s",
                       rd_kafka_err2str(err));
    }
    for (int i = 0; offsets && i < offsets->cnt; i++) {
        const rd_kafka_topic_partition_t *tp = &offsets->elems[i];
        part_t *p = part_find(r, tp->topic, tp->partition);
        if (!p) continue;
        long long x;
        char md[160] = "";
        if (tp->metadata && tp->metadata_size < sizeof(md)) memcpy(md, tp->metadata, tp->metadata_size);
        bool snap = sscanf(md, "sw1:%*d:%*u:%*u:%lld", &x) == 1;
        if (!err && !tp->err) {
            if (snap && x > p->confirmed_x) p->confirmed_x = x;
        } else if (snap && p->committed_x == x) {
            p->committed_x = p->confirmed_x; /* not taken: snapshot and commit again */
        }
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

/* The topics the daemon writes (output, dead letters, state): created
 * when missing and topics.create=on (Admin API, cleanup.policy=delete,
 * the broker's replication factor), else an error that names them and
 * says how to create them. @returns 0, or 1 (logged). */
static int ensure_topics(run_t *r)
{
    const sw_conf_t *conf = r->opts->conf;
    bool create = strcmp(sw_conf_get_str(conf, "topics.create"), "on") == 0;
    /* Partitions for output and dead letters: the (first) input topic's. */
    int in_parts = 0;
    const char *in0 = sw_conf_get_list_elem(conf, "input.topics", 0);
    if (in0 && in0[0] != '^') in_parts = topic_check(r, in0, NULL);
    if (in_parts < 1) in_parts = 1;
    struct {
        const char *name;
        int parts;
        const char *retention_ms; /* NULL: the broker's default */
    } want[3] = {{r->out_topic, in_parts, NULL}, {r->dlq_topic, in_parts, NULL},
                 {r->state_topic, 1, "604800000"}};
    int nwant = r->restore ? 3 : 2;
    rd_kafka_NewTopic_t *nt[3];
    const char *names[3];
    int n = 0;
    for (int i = 0; i < nwant; i++) {
        const char *why = NULL;
        int p = topic_check(r, want[i].name, &why);
        if (p < 0) {
            sw_log(r->log, SW_LOG_ERROR, "cannot check topic \"%s\": %s", want[i].name, why);
            goto fail;
        }
        if (p > 0) continue;
        if (!create) {
            sw_log(r->log, SW_LOG_ERROR,
                   "topic \"%s\" does not exist: create it (%d partition%s, cleanup.policy=delete; "
                   "see README, Topics an operator creates) or set topics.create=on",
                   want[i].name, want[i].parts, want[i].parts == 1 ? "" : "s");
            goto fail;
        }
        char err[256];
        nt[n] = rd_kafka_NewTopic_new(want[i].name, want[i].parts, -1, err, sizeof(err));
        if (!nt[n]) {
            sw_log(r->log, SW_LOG_ERROR, "cannot create topic \"%s\": %s", want[i].name, err);
            goto fail;
        }
        names[n] = want[i].name;
        rd_kafka_NewTopic_set_config(nt[n], "cleanup.policy", "delete");
        if (want[i].retention_ms) rd_kafka_NewTopic_set_config(nt[n], "retention.ms", want[i].retention_ms);
        n++;
    }
    if (!n) return 0;
    rd_kafka_queue_t *q = rd_kafka_queue_new(r->producer);
    rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(r->producer, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    char err[256];
    rd_kafka_AdminOptions_set_request_timeout(o, 10000, err, sizeof(err));
    rd_kafka_CreateTopics(r->producer, nt, (size_t)n, o, q);
    rd_kafka_event_t *ev = NULL;
    for (int i = 0; i < 150 && !ev && *r->opts->running; i++) ev = rd_kafka_queue_poll(q, 100);
    int bad = 0;
    const rd_kafka_CreateTopics_result_t *res = ev ? rd_kafka_event_CreateTopics_result(ev) : NULL;
    const rd_kafka_topic_result_t **tr = NULL;
    size_t cnt = 0;
    if (res) tr = rd_kafka_CreateTopics_result_topics(res, &cnt);
    for (int i = 0; i < n; i++) {
        const char *name = names[i];
        rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR__TIMED_OUT;
        const char *text = ev ? rd_kafka_event_error_string(ev) : "no answer in 15 s";
        for (size_t k = 0; k < cnt; k++)
            if (!strcmp(rd_kafka_topic_result_name(tr[k]), name)) {
                e = rd_kafka_topic_result_error(tr[k]);
                text = rd_kafka_topic_result_error_string(tr[k]);
            }
        if (!e || e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
            sw_log(r->log, SW_LOG_INFO, "created topic \"%s\" (topics.create=on)", name);
            continue;
        }
        /* No Admin API answer (an old broker, a cluster without a
         * controller such as librdkafka's mock): a broker that creates
         * topics on first use still can, with its defaults. */
        if (e != RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED &&
            e != RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED && topic_partitions(r, name) > 0) {
            sw_log(r->log, SW_LOG_WARN,
                   "topic \"%s\" could not be created through the Admin API (%s%s%s); the broker "
                   "auto-created it with its defaults (check its partitions and cleanup.policy)",
                   name, rd_kafka_err2name(e), text ? ": " : "", text ? text : "");
            continue;
        }
        bad = 1;
        sw_log(r->log, SW_LOG_ERROR,
               "cannot create topic \"%s\": %s%s%s (create it yourself, see README, Topics an "
               "operator creates)",
               name, rd_kafka_err2name(e), text ? ": " : "", text ? text : "");
    }
    if (ev) rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(o);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy_array(nt, (size_t)n);
    if (bad) return 1;
    /* Until the metadata shows them (a new topic takes a moment). */
    for (int i = 0; i < nwant; i++)
        for (int k = 0; k < 50 && topic_check(r, want[i].name, NULL) < 1; k++) usleep(100000);
    return 0;
fail:
    rd_kafka_NewTopic_destroy_array(nt, (size_t)n);
    return 1;
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
    if (r->eos) {
        char tid[512], host[128] = "host";
        gethostname(host, sizeof(host) - 1);
        snprintf(tid, sizeof(tid), "stormwatch-%s-%s-%d", sw_conf_get_str(conf, "group.id"), host,
                 (int)getpid());
        if (sw_kafka_set(pc, "transactional.id", tid, err, sizeof(err))) {
            sw_log(r->log, SW_LOG_ERROR, "%s", err);
            rd_kafka_conf_destroy(pc);
            return 2;
        }
    }
    /* Topics are checked and created by ensure_topics(), with their
     * settings, never auto-created by a broker's defaults. */
    sw_kafka_set(pc, "allow.auto.create.topics", "false", err, sizeof(err));
    rd_kafka_conf_set_dr_msg_cb(pc, dr_cb);
    /* What the producer takes at most (key, value and headers together):
     * records are kept under it with room for the headers we add. */
    char mmb[32];
    size_t mmb_len = sizeof(mmb);
    long max_bytes = 1000000;
    if (rd_kafka_conf_get(pc, "message.max.bytes", mmb, &mmb_len) == RD_KAFKA_CONF_OK)
        max_bytes = strtol(mmb, NULL, 10);
    r->max_value = max_bytes > 16384 ? (size_t)max_bytes - 8192 : (size_t)max_bytes / 2;
    r->producer = rd_kafka_new(RD_KAFKA_PRODUCER, pc, err, sizeof(err));
    if (!r->producer) {
        rd_kafka_conf_destroy(pc);
        sw_log(r->log, SW_LOG_ERROR, "cannot create the producer: %s", err);
        return 2;
    }
    if (r->eos) {
        if (!txn_ok(r, rd_kafka_init_transactions(r->producer, 60000), "init_transactions"))
            return 1;
        if (!txn_begin(r)) return 1;
    }
    rd_kafka_conf_t *cc = sw_kafka_conf(conf, SW_KAFKA_CONSUMER, r->opts->bootstrap, NULL,
                                        &r->kctx, err, sizeof(err));
    if (!cc) {
        sw_log(r->log, SW_LOG_ERROR, "%s", err);
        return 2;
    }
    if (r->eos) sw_kafka_set(cc, "isolation.level", "read_committed", err, sizeof(err));
    rd_kafka_conf_set_rebalance_cb(cc, rebalance_cb);
    rd_kafka_conf_set_offset_commit_cb(cc, offset_commit_cb);
    r->consumer = rd_kafka_new(RD_KAFKA_CONSUMER, cc, err, sizeof(err));
    if (!r->consumer) {
        rd_kafka_conf_destroy(cc);
        sw_log(r->log, SW_LOG_ERROR, "cannot create the consumer: %s", err);
        return 2;
    }
    rd_kafka_poll_set_consumer(r->consumer);
    if (!wait_cluster(r)) return r->kctx.fatal ? 1 : -1;
    if (ensure_topics(r)) return 1;
    if (r->restore) {
        rd_kafka_conf_t *rc = sw_kafka_conf(conf, SW_KAFKA_CONSUMER, r->opts->bootstrap,
                                            "stormwatch-state-reader", &r->kctx, err, sizeof(err));
        if (rc && r->eos) sw_kafka_set(rc, "isolation.level", "read_committed", err, sizeof(err));
        r->reader = rc ? rd_kafka_new(RD_KAFKA_CONSUMER, rc, err, sizeof(err)) : NULL;
        if (!r->reader) {
            sw_log(r->log, SW_LOG_ERROR, "cannot create the state reader: %s", err);
            return 2;
        }
        r->out_parts = topic_partitions(r, r->out_topic);
        r->dlq_parts = topic_partitions(r, r->dlq_topic);
        /* End offsets now: every later record of ours lands at or after. */
        r->out_pos = sw_malloc(((size_t)(r->out_parts + r->dlq_parts) + 1) * sizeof(*r->out_pos));
        for (int t = 0, k = 0; t < 2; t++)
            for (int q = 0; q < (t ? r->dlq_parts : r->out_parts); q++, k++) {
                int64_t lo, hi;
                r->out_pos[k] = rd_kafka_query_watermark_offsets(r->producer, t ? r->dlq_topic : r->out_topic,
                                                                 q, &lo, &hi, 10000)
                                    ? -1
                                    : hi;
            }
    }
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

/* Once a second: lag per partition, readiness and engine gauges. */
static void publish_metrics(run_t *r)
{
    if (!r->m) return;
    int64_t total_lag = 0;
    sw_detect_stats_t sum;
    memset(&sum, 0, sizeof(sum));
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p) continue;
        int64_t lo, hi;
        if (p->next >= 0 &&
            !rd_kafka_get_watermark_offsets(r->consumer, p->topic, p->partition, &lo, &hi) && hi >= 0) {
            int64_t lag = hi > p->next ? hi - p->next : 0;
            if (p->m_lag) sw_metrics_series_set(p->m_lag, lag);
            total_lag += lag;
        }
        sw_detect_stats_t cur;
        sw_detect_stats(p->det, &cur);
        sw_metrics_engine_counters(r->m, &p->mprev, &cur);
        p->mprev = cur;
        sum.jobs += cur.jobs;
        sum.ranks += cur.ranks;
        sum.retained += cur.retained;
        sum.bytes += cur.bytes;
    }
    sw_metrics_engine_gauges(r->m, &sum);
    m_set(r, SW_M_ASSIGNED_PARTITIONS, (int64_t)r->st.partitions);
    m_set(r, SW_M_CONSUMER_TOTAL_LAG, total_lag);
    sw_metrics_set_ready_state(r->m, r->st.partitions > 0, total_lag);
}

/* Log what a stop leaves uncommitted: the next owner of each such
 * partition reads it again from its committed offset (nothing is lost;
 * with state.restore=on, records already on the output are not re-sent). */
static void log_uncommitted(run_t *r)
{
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p || p->next < 0) continue;
        bool done = r->restore ? p->confirmed_x >= p->next : (p->qn == 0 && !r->commits_waiting);
        if (done) continue;
        sw_log(r->log, SW_LOG_WARN,
               "%s [%d]: not committed past offset %lld (input read up to %lld; %zu offsets with "
               "unacknowledged records): its next owner reads it again from the committed offset",
               p->topic, (int)p->partition, (long long)(r->restore ? p->confirmed_x : committable(p)),
               (long long)p->next - 1, p->qn);
    }
}

/* The stop, within shutdown.timeout.ms whatever the partition count, in
 * priority order: flush the records, take the final snapshots, commit
 * (asynchronously, answers awaited in slices), leave the group. A second
 * signal or the deadline ends it where it is: what was not committed is
 * logged and left to the next owner, and the consumer is destroyed
 * without the close handshake (the group drops this member after
 * session.timeout.ms). @returns 0 (complete), 1 (deadline) or 130
 * (second signal). */
static int stop(run_t *r)
{
    r->stopping = true;
    r->stop_deadline = sw_clock_ms() + r->shutdown_ms;
    int64_t t0 = sw_clock_ms();
    sw_log(r->log, SW_LOG_INFO,
           "stopping: flushing records, then snapshots and commits (at most %lld ms, "
           "shutdown.timeout.ms; a second signal stops at once)",
           (long long)r->shutdown_ms);
    bool flushed = flush_bounded(r, 0);
    if (!flushed && !stop_abandoned(r))
        sw_log(r->log, SW_LOG_ERROR, "%d records still unacknowledged at the stop deadline",
               rd_kafka_outq_len(r->producer));
    r->commits_waiting = 0;
    if (flushed && r->restore) {
        for (size_t i = 0; i < r->nparts; i++) {
            part_t *p = r->parts[i];
            if (!p || p->origin || p->mode != PM_NORMAL || p->next < 0 || p->failed ||
                p->next <= p->confirmed_x)
                continue;
            p->snap.active = false; /* any snapshot in flight is superseded */
            snapshot_start(r, p);
        }
        flush_bounded(r, 0);
        for (size_t i = 0; i < r->nparts && !stop_over(r); i++) {
            part_t *p = r->parts[i];
            if (!p || !snapshot_commit_ready(p)) continue;
            snapshot_commit(r, p, r->eos);
            if (!r->eos) r->commits_waiting++;
        }
    } else if (flushed && !r->failed && !r->eos) {
        if (commit_plain(r, NULL, false)) r->commits_waiting++;
    } else if (flushed && !r->failed) {
        commit_plain(r, NULL, true);
    }
    /* Commit answers arrive through the consumer's queue. A message read
     * now is not processed, so its offset is not committed. */
    while (r->commits_waiting > 0 && !stop_over(r)) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(r->consumer, 100);
        if (m) rd_kafka_message_destroy(m);
    }
    if (r->eos && r->in_txn && !stop_over(r)) {
        flush_bounded(r, 0);
        txn_commit(r, NULL);
    }
    if (stop_over(r)) {
        bool second = stop_abandoned(r);
        sw_log(r->log, second ? SW_LOG_WARN : SW_LOG_ERROR,
               second ? "second stop signal: stopping now, after %lld ms"
                      : "the stop took shutdown.timeout.ms (%lld ms) without finishing; stopping "
                        "now (are the brokers reachable?)",
               (long long)(sw_clock_ms() - t0));
        log_uncommitted(r);
        /* No close handshake: it would wait for the brokers. */
        rd_kafka_destroy_flags(r->consumer, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
        r->consumer = NULL;
        rd_kafka_purge(r->producer, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        /* Their delivery reports free what each message carried. */
        for (int i = 0; i < 20 && rd_kafka_outq_len(r->producer) > 0; i++) rd_kafka_poll(r->producer, 10);
        rd_kafka_poll(r->producer, 0);
        return second ? 130 : 1;
    }
    if (consumer_close_would_abort(r)) {
        /* Leave the handle to the process exit: the group forgets this
         * member after session.timeout.ms; it owned no partition. */
        sw_log(r->log, SW_LOG_WARN,
               "stopping before the first assignment: the consumer is not closed (librdkafka "
               "%s aborts destroying a cooperative-sticky consumer in that state, upstream "
               "issue 4312, fixed in 2.3.0); the group drops this member after "
               "session.timeout.ms",
               rd_kafka_version_str());
        g_undestroyed_consumer = r->consumer;
        r->consumer = NULL;
    } else {
        /* Closing revokes every partition (already flushed, snapshotted
         * and committed above) and leaves the group. */
        rd_kafka_consumer_close(r->consumer);
    }
    sw_log(r->log, SW_LOG_INFO, "stopped in %lld ms", (long long)(sw_clock_ms() - t0));
    return 0;
}

int sw_run(const sw_run_opts_t *opts)
{
    run_t r;
    memset(&r, 0, sizeof(r));
    r.opts = opts;
    r.log = opts->log;
    r.m = opts->metrics;
    r.kctx.log = opts->log;
    r.kctx.user = &r;
    const sw_conf_t *conf = opts->conf;
    r.params = sw_conf_params(conf);
    sw_hash_key_random(&r.params.hash_key); /* input strings cannot be chosen to collide */
    sw_conf_get_i64(conf, "job.idle.ms", &r.idle_ms);
    sw_conf_get_i64(conf, "commit.interval.ms", &r.commit_interval_ms);
    sw_conf_get_i64(conf, "shutdown.timeout.ms", &r.shutdown_ms);
    sw_conf_get_i64(conf, "max.memory.bytes", &r.memory_budget);
    m_set(&r, SW_M_MEMORY_BUDGET, r.memory_budget);
    /* Transactions hold alerts until they commit: Kafka Streams' 100 ms
     * unless the user chose an interval. */
    if (!strcmp(sw_conf_get_str(conf, "processing.guarantee"), "exactly_once") &&
        !sw_conf_is_set(conf, "commit.interval.ms"))
        r.commit_interval_ms = 100;
    sw_conf_get_i64(conf, "snapshot.interval.ms", &r.snapshot_interval_ms);
    r.restore = strcmp(sw_conf_get_str(conf, "state.restore"), "on") == 0;
    r.eos = strcmp(sw_conf_get_str(conf, "processing.guarantee"), "exactly_once") == 0;
    int64_t v;
    sw_conf_get_i64(conf, "avro.schema.id.telemetry", &v);
    r.schema_telemetry = (int32_t)v;
    sw_conf_get_i64(conf, "avro.schema.id.alert", &v);
    r.schema_alert = (int32_t)v;
    const char *inf = sw_conf_get_str(conf, "input.format");
    r.in_fmt = !strcmp(inf, "json") ? FMT_JSON : !strcmp(inf, "avro") ? FMT_AVRO : FMT_AUTO;
    r.out_avro = strcmp(sw_conf_get_str(conf, "output.format"), "avro") == 0;
    r.out_pager = sw_pager_format_parse(sw_conf_get_str(conf, "output.format"), &r.pager.format);
    r.pager.routing_key = sw_conf_get_str(conf, "pagerduty.routing.key");
    r.pager.generator_url = sw_conf_get_str(conf, "alertmanager.generator.url");
    r.pager.labels = sw_conf_get_str(conf, "alertmanager.labels");
    sw_conf_get_i64(conf, "alertmanager.ends.after.ms", &r.pager.ends_after_ms);
    r.out_topic = sw_conf_get_str(conf, "output.topic");
    r.dlq_topic = sw_conf_get_str(conf, "dlq.topic");
    r.state_topic = sw_conf_get_str(conf, "state.topic");
    r.tdec = sw_tdec_new();
    r.adec = sw_avro_dec_new();
    sw_buf_init(&r.value);

    char cerr[512];
    int rc = 2;
    if (sw_conf_check(conf, cerr, sizeof(cerr)) != SW_OK)
        sw_log(r.log, SW_LOG_ERROR, "%s", cerr); /* before any Kafka handle exists */
    else
        rc = setup(&r);
    if (rc < 0) { /* stopped while waiting for the cluster */
        sw_log(r.log, SW_LOG_INFO, "stopped before the Kafka cluster answered");
        rc = 0;
    } else if (rc == 0) {
        sw_log(r.log, SW_LOG_INFO,
               "consuming %s as group %s; alerts to %s, dead letters to %s; %s%s",
               sw_conf_get_list_elem(conf, "input.topics", 0), sw_conf_get_str(conf, "group.id"),
               r.out_topic, r.dlq_topic,
               r.restore ? "state snapshots in " : "no state restore",
               r.restore ? r.state_topic : "");
        int64_t last_commit = sw_clock_ms(), last_tick = last_commit, last_stats = last_commit;
        uint64_t stats_msgs = 0;
        /* Wait for one message, then take what else is queued in one batch
         * (one queue lock per batch, not per message; a batch call with a
         * timeout would wait for a full batch). Rebalance callbacks run
         * inside these calls; messages of a partition revoked meanwhile are
         * not ours any more and are skipped. */
        rd_kafka_queue_t *cq = rd_kafka_queue_get_consumer(r.consumer);
        rd_kafka_message_t *batch[256];
        int64_t last_snap_tick = 0;
        int64_t join_t0 = sw_clock_ms(), join_note_s = 10;
        while (*opts->running && !r.kctx.fatal && !r.failed) {
            ssize_t got = 0;
            rd_kafka_message_t *first = rd_kafka_consumer_poll(r.consumer, 100);
            if (first) {
                batch[got++] = first;
                ssize_t more = rd_kafka_consume_batch_queue(cq, 0, batch + 1, sizeof(batch) / sizeof(batch[0]) - 1);
                if (more > 0) got += more;
            }
            for (ssize_t i = 0; i < got; i++) {
                if (!r.failed) handle(&r, batch[i]);
                rd_kafka_message_destroy(batch[i]);
            }
            rd_kafka_poll(r.producer, 0);
            int64_t now = sw_clock_ms();
            if (r.m) sw_metrics_heartbeat(r.m, now);
            if (now - last_tick >= 1000) {
                if (!r.assigned_once && now - join_t0 >= join_note_s * 1000) {
                    sw_log(r.log, SW_LOG_INFO,
                           "waiting %lld s for the group's first assignment (joining a group that "
                           "is already consuming waits up to its members' session.timeout.ms)",
                           (long long)join_note_s);
                    join_note_s *= 2;
                }
                expire_idle(&r);
                memory_tick(&r);
                publish_metrics(&r);
                last_tick = now;
            }
            if (r.restore) {
                if (now != last_snap_tick) snapshots_tick(&r, now); /* at most once a millisecond */
                last_snap_tick = now;
            } else if (now - last_commit >= r.commit_interval_ms) {
                commit_plain(&r, NULL, false);
                last_commit = now;
            }
            if (now - last_stats >= 30000) log_stats(&r, &stats_msgs, &last_stats);
        }
        rd_kafka_queue_destroy(cq);
        int stop_rc = stop(&r);
        log_stats(&r, &stats_msgs, &last_stats);
        rc = r.kctx.fatal || r.failed ? 1 : stop_rc;
        if (r.kctx.fatal) sw_log(r.log, SW_LOG_ERROR, "stopped after a fatal error: %s", r.kctx.fatal_reason);
    }
    if (r.consumer) rd_kafka_destroy(r.consumer);
    if (r.reader) rd_kafka_destroy(r.reader);
    if (r.producer) rd_kafka_destroy(r.producer);
    for (size_t i = 0; i < r.nparts; i++)
        if (r.parts[i]) part_destroy(&r, r.parts[i]);
    free(r.parts);
    free(r.out_pos);
    sw_tdec_destroy(r.tdec);
    sw_avro_dec_destroy(r.adec);
    sw_buf_clear(&r.value);
    return rc;
}
