/* Delivery of the daemon (see sw_run.c for the design, sw_run_int.h). */
#include "sw_run_int.h"
#include "sw_run_out.h"

#include "sw_redact.h"

/* ---- bounded stop helpers ------------------------------------------------ */

/* A second SIGTERM/SIGINT: the stop is abandoned. */
bool sw_run_stop_abandoned(const run_t *r)
{
    return r->opts->stops && *r->opts->stops >= 2;
}

/* The stop is over: abandoned, or past shutdown.timeout.ms. */
bool sw_run_stop_over(const run_t *r)
{
    return r->stopping && (sw_run_stop_abandoned(r) || sw_clock_ms() >= r->stop_deadline);
}

/* Milliseconds a blocking call may take now: what is left of the stop
 * (at least 1), or @p normal outside a stop. */
int sw_run_stop_budget(const run_t *r, int normal)
{
    if (!r->stopping) return normal;
    int64_t left = r->stop_deadline - sw_clock_ms();
    return left < 1 ? 1 : left > normal && normal > 0 ? normal : (int)left;
}

/* Flush the producer until it is empty, in slices that notice a second
 * signal; outside a stop at most @p normal_ms. @returns true when empty. */
bool sw_run_flush_bounded(run_t *r, int normal_ms)
{
    int64_t until = sw_clock_ms() + normal_ms;
    while (rd_kafka_outq_len(r->producer) > 0) {
        if (sw_run_stop_over(r) || (!r->stopping && sw_clock_ms() >= until)) return false;
        rd_kafka_flush(r->producer, 100);
    }
    return true;
}

/* ---- the ledger (sw_ledger.h) ---------------------------------------- */

/* Nothing before this offset waits for an acknowledgement. */
int64_t sw_run_committable(const part_t *p)
{
    return sw_ledger_committable(&p->led, p->next);
}

/* The log message @p m of @p p came from: 1 when it is repartition p's
 * (repartition=auto), else 0. */
int sw_run_msg_src(const run_t *r, const part_t *p, const rd_kafka_message_t *m)
{
    return p->local && m->rkt && strcmp(rd_kafka_topic_name(m->rkt), r->rep_topic) == 0;
}

/* ---- metrics helpers (all tolerate a NULL registry) --------------------- */

void sw_run_m_add(run_t *r, sw_metric_t id, uint64_t n)
{
    if (r->m) sw_metrics_add(r->m, id, n);
}

void sw_run_m_set(run_t *r, sw_metric_t id, int64_t v)
{
    if (r->m) sw_metrics_set(r->m, id, v);
}

/* ---- partitions ------------------------------------------------------ */

part_t *sw_run_part_find(run_t *r, const char *topic, int32_t partition)
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

/* Readiness sees the output (sw_metrics_set_output_state): the oldest
 * undelivered record and whether the producer's queue is full. */
static void output_state(run_t *r, bool queue_full)
{
    if (r->m) sw_metrics_set_output_state(r->m, sw_tokens_oldest_ms(&r->undelivered), queue_full);
}

void sw_run_output_state(run_t *r)
{
    output_state(r, false);
}

/* Hand one message to the producer, retrying while its queue is full. */
bool sw_run_produce_msg(run_t *r, const char *topic, int32_t partition, const void *key,
                        size_t keylen, const void *value, size_t vlen, rd_kafka_headers_t *hdrs,
                        sw_token_t *tok)
{
    for (;;) {
        rd_kafka_resp_err_t err = rd_kafka_producev(
            r->producer, RD_KAFKA_V_TOPIC(topic),
            RD_KAFKA_V_PARTITION(partition >= 0 ? partition : RD_KAFKA_PARTITION_UA),
            RD_KAFKA_V_KEY(key, keylen), RD_KAFKA_V_VALUE((void *)value, vlen),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(hdrs),
            RD_KAFKA_V_OPAQUE(tok), RD_KAFKA_V_END);
        if (!err) {
            if (tok && tok->kind == SW_TOK_RECORD &&
                sw_tokens_add(&r->undelivered, tok, sw_clock_ms()))
                output_state(r, false);
            return true;
        }
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            output_state(r, true); /* not ready while we wait here */
            rd_kafka_poll(r->producer, 50);
            output_state(r, false);
            continue;
        }
        sw_log(r->log, SW_LOG_ERROR, "cannot produce to %s: %s", topic, rd_kafka_err2str(err));
        if (hdrs) rd_kafka_headers_destroy(hdrs);
        return false;
    }
}

/* A record caused by the message at @p offset of @p p's log @p src (0 the
 * input, 1 its repartition partition): pending until acknowledged. */
void sw_run_produce_record(run_t *r, part_t *p, int src, int64_t offset, const char *topic,
                           int32_t partition, const void *key, size_t keylen, const void *value,
                           size_t vlen, rd_kafka_headers_t *hdrs)
{
    sw_ledger_t *led = src ? &p->rled : &p->led;
    sw_token_t *tok = sw_token_new(p->id, SW_TOK_RECORD);
    tok->offset = offset;
    tok->src = (uint8_t)src;
    sw_ledger_add(led, offset);
    if (!sw_run_produce_msg(r, topic, partition, key, keylen, value, vlen, hdrs, tok)) {
        free(tok);
        sw_ledger_refuse(led); /* the pending entry never completes */
        r->failed = true;
        r->st.produce_errors++;
        sw_run_m_add(r, SW_M_PRODUCE_ERRORS, 1);
    }
}

void sw_run_hdr_add(rd_kafka_headers_t *h, const char *name, const char *value)
{
    rd_kafka_header_add(h, name, -1, value, -1);
}

/* A copy of the input message's headers (or none), for what we send on
 * with it: dead letters and forwarded copies keep the producer's headers. */
rd_kafka_headers_t *sw_run_input_headers(const rd_kafka_message_t *m)
{
    rd_kafka_headers_t *in = NULL;
    if (rd_kafka_message_headers(m, &in) == RD_KAFKA_RESP_ERR_NO_ERROR && in)
        return rd_kafka_headers_copy(in);
    return rd_kafka_headers_new(6);
}

/* Where a message of ours comes from (the message at @p offset of @p p's
 * log @p src): the headers the restore scan reads. */
void sw_run_hdr_add_source(rd_kafka_headers_t *h, const run_t *r, const part_t *p, int src,
                           int64_t offset)
{
    /* Source 1: repartition p (auto), or input p (an engine of auto gone on under on). */
    sw_run_hdr_add(h, "stormwatch.source.topic",
                   !src       ? p->topic
                   : p->local ? r->rep_topic
                              : r->set->kafka.input_topics.v[0]);
    sw_run_hdr_add_i64(h, "stormwatch.source.partition", p->partition);
    sw_run_hdr_add_i64(h, "stormwatch.source.offset", offset);
}

void sw_run_hdr_add_i64(rd_kafka_headers_t *h, const char *name, int64_t v)
{
    /* Decimal by hand: snprintf was ~4% of the daemon's instructions with
     * repartition=on (two of these per forwarded copy). */
    char tmp[24];
    size_t i = sizeof(tmp);
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[--i] = '-';
    rd_kafka_header_add(h, name, -1, tmp + i, (ssize_t)(sizeof(tmp) - i));
}

/* The topics whose end positions snapshots carry, by index: 0 output,
 * 1 dead letters, 2 repartition.topic (repartition=on); NULL past them. */
const char *sw_run_pos_topic(const run_t *r, int t, int *nparts)
{
    *nparts = 0;
    switch (t) {
    case 0: *nparts = r->out_parts; return r->out_topic;
    case 1: *nparts = r->dlq_parts; return r->dlq_topic;
    case 2:
        if (!r->rep_topic) return NULL;
        *nparts = r->rep_parts;
        return r->rep_topic;
    default: return NULL;
    }
}

/* A record of ours landed at @p offset of @p topic [@p partition]. */
void sw_run_note_position(run_t *r, const char *topic, int32_t partition, int64_t offset)
{
    if (!r->out_pos || offset < 0) return;
    int base = -1, n = 0;
    if (!strcmp(topic, r->out_topic)) base = 0, n = r->out_parts;
    else if (!strcmp(topic, r->dlq_topic)) base = r->out_parts, n = r->dlq_parts;
    else if (r->rep_topic && !strcmp(topic, r->rep_topic))
        base = r->out_parts + r->dlq_parts, n = r->rep_parts;
    if (base < 0 || partition < 0 || partition >= n) return;
    int64_t *pos = &r->out_pos[base + partition];
    if (*pos >= 0 && offset + 1 > *pos) *pos = offset + 1;
}

void sw_run_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    run_t *r = ((sw_kafka_ctx_t *)opaque)->user;
    sw_token_t *tok = m->_private;
    if (!tok) return;
    if (tok->kind == SW_TOK_RECORD && sw_tokens_del(&r->undelivered, tok)) output_state(r, false);
    if (r->stopping &&
        (m->err == RD_KAFKA_RESP_ERR__PURGE_QUEUE || m->err == RD_KAFKA_RESP_ERR__PURGE_INFLIGHT)) {
        free(tok); /* an abandoned stop purged it: logged as not committed */
        return;
    }
    part_t *p = tok->part_id < r->nparts ? r->parts[tok->part_id] : NULL;
    if (tok->kind == SW_TOK_MARKER) {
        if (m->err && p) r->local_mode->marker_failed(r, p, tok->offset, rd_kafka_err2str(m->err));
        free(tok);
        return;
    }
    if (tok->kind == SW_TOK_SNAPSHOT) {
        if (p && p->snap.active && p->snap.id == tok->snap_id) {
            if (m->err) {
                sw_log(r->log, SW_LOG_WARN,
                       "state snapshot of %s [%d] not stored (%s); retrying later", p->topic,
                       (int)p->partition, rd_kafka_err2str(m->err));
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
        sw_run_m_add(r, SW_M_PRODUCE_ERRORS, 1);
        sw_log(r->log, SW_LOG_ERROR,
               "record for %s [%d] offset %lld was not delivered to %s: %s; stopping without "
               "committing past it",
               p ? p->topic : "?", p ? (int)p->partition : -1, (long long)tok->offset,
               rd_kafka_topic_name(m->rkt), rd_kafka_err2str(m->err));
        if (p) sw_ledger_refuse(tok->src ? &p->rled : &p->led);
        r->failed = true;
    } else {
        r->st.delivered++;
        sw_run_m_add(r, SW_M_RECORDS_DELIVERED, 1);
        if (p) sw_ledger_ack(tok->src ? &p->rled : &p->led, tok->offset);
        sw_run_note_position(r, rd_kafka_topic_name(m->rkt), m->partition, m->offset);
    }
    free(tok);
}

bool sw_run_suppressed(run_t *r, part_t *p, int src, int64_t offset, int action)
{
    (void)r;
    uint32_t v;
    int64_t key = offset * 8 + action;
    sw_imap_t *sup = src ? &p->rsuppress : &p->suppress;
    if (!sup->count || !sw_imap_get(sup, key, &v)) return false;
    sw_imap_del(sup, key);
    p->suppressed++;
    return true;
}

void sw_run_send_dlq(run_t *r, part_t *p, const rd_kafka_message_t *m, dlq_kind_t kind,
                     const char *why)
{
    int src = sw_run_msg_src(r, p, m);
    sw_log_limited(r->log, &r->lim_bad, SW_LOG_WARN, "topic %s [%d] offset %lld: %s (sent to %s)",
                   src ? r->rep_topic : p->topic, (int)p->partition, (long long)m->offset, why,
                   r->dlq_topic);
    if (sw_run_suppressed(r, p, src, m->offset, SUPPRESS_DLQ)) return;
    r->st.dlq++;
    sw_run_m_add(r, (sw_metric_t)(SW_M_DLQ_DECODE + kind), 1);
    rd_kafka_headers_t *h = sw_run_input_headers(m);
    char *safe = sw_redact_dup(why); /* no URL credentials in a header */
    sw_run_hdr_add(h, "stormwatch.error", safe);
    free(safe);
    sw_run_hdr_add(h, "stormwatch.error.kind", k_dlq_kind[kind]);
    sw_run_hdr_add_source(h, r, p, src, m->offset);
    size_t len = m->len, room = r->max_value > m->key_len ? r->max_value - m->key_len : 0;
    if (len > room) {
        /* The input was bigger than we may produce (its topic allows more
         * than message.max.bytes): keep the head, say how long it was. */
        sw_run_hdr_add_i64(h, "stormwatch.truncated.from", (int64_t)len);
        len = room;
    }
    sw_run_produce_record(r, p, src, m->offset, r->dlq_topic, -1, m->key, m->key_len, m->payload,
                          len, h);
}

/* @p rec in the output format into r->value. @returns whether it is Avro. */
bool sw_run_encode_record(run_t *r, part_t *p, const sw_record_t *rec)
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
            sw_log(r->log, SW_LOG_WARN, "alert for %s [%d] offset %lld sent as JSON: %s", p->topic,
                   (int)p->partition, (long long)rec->cause_offset, err);
            r->value.len = 0;
            avro = false;
        }
    }
    if (!avro && !r->out_pager) sw_alert_json_record(&r->value, rec);
    return avro;
}

/* @p pend_offset: the offset the record waits on (the sample's; for an
 * idle summary the last processed one), of @p p's log @p src. @p engine_rec
 * is the engine's, borrowed: the record sent is a copy that says where it
 * comes from (its cause's log: repartition=auto feeds one engine from two). */
void sw_run_send_record(run_t *r, part_t *p, int src, int64_t pend_offset,
                        const sw_record_t *engine_rec)
{
    sw_record_t copy = *engine_rec, *rec = &copy;
    /* Source 1: repartition p (auto), or input p (an engine of auto gone
     * on under on: a job's summary names its last input, maybe there). */
    int csrc = p->local || p->foreign ? rec->cause_source : 0;
    rec->source.set = true;
    rec->source.topic = sw_str(!csrc      ? p->topic
                               : p->local ? r->rep_topic
                                          : r->set->kafka.input_topics.v[0]);
    rec->source.partition = p->partition;
    rec->source.offset = rec->cause_offset;
    if (rec->action != SW_ACTION_SUMMARY) {
        sw_buf_t line;
        sw_buf_init(&line);
        sw_record_summary(rec, &line);
        sw_log(r->log, SW_LOG_INFO, "%s", sw_buf_cstr(&line));
        sw_buf_clear(&line);
    }
    if (sw_run_suppressed(r, p, csrc, rec->cause_offset, (int)rec->action)) return;
    if (r->out_pager && sw_pager_decide(rec) == SW_PAGER_SKIP) {
        /* A summary without an open episode is no page. Nothing is produced,
         * so nothing enters the pending FIFO and its input offset commits as
         * if it had been delivered. */
        r->not_paged++;
        sw_run_m_add(r, SW_M_SUMMARIES_NOT_PAGED, 1);
        sw_log(r->log, SW_LOG_DEBUG,
               "%s [%d] offset %lld: job summary (episode %lld) not sent: no open episode to "
               "resolve, so no %s page (%llu so far)",
               p->topic, (int)p->partition, (long long)rec->cause_offset, (long long)rec->episode,
               sw_pager_format_str(r->pager.format), (unsigned long long)r->not_paged);
        return;
    }
    r->st.records[rec->action]++;
    sw_run_m_add(r, (sw_metric_t)(SW_M_RECORDS_OUT_TRIGGER + rec->action), 1);
    sw_metrics_first_cause(r->m, rec); /* repeat offenders by host (docs/fleet.md) */
    const sw_analysis_t *a = &rec->analysis;
    size_t keylen = a->has_job_id ? a->job_id.len : 0;
    bool avro = sw_run_encode_record(r, p, rec);
    sw_arena_t arena;
    sw_arena_init(&arena);
    if (r->value.len + keylen > r->max_value) {
        /* Over the producer's message.max.bytes the record could never be
         * sent (and a restart would meet it again): send it condensed. */
        size_t full = r->value.len;
        sw_record_t small;
        if (sw_record_condense(rec, &arena, &small)) {
            avro = sw_run_encode_record(r, p, &small);
            sw_run_m_add(r, SW_M_RECORDS_CONDENSED, 1);
        }
        sw_log(r->log, SW_LOG_WARN,
               "%s record for %s [%d] offset %lld is %zu bytes, over message.max.bytes: sent "
               "condensed (%zu bytes; rank lists, suspects and notes cut, as its last note says)",
               sw_action_str(rec->action), p->topic, (int)p->partition,
               (long long)rec->cause_offset, full, r->value.len);
        if (r->value.len + keylen > r->max_value) {
            sw_log(r->log, SW_LOG_ERROR,
                   "%s record for %s [%d] offset %lld is still %zu bytes condensed: not sent "
                   "(raise kafka.producer.message.max.bytes and the topic's max.message.bytes)",
                   sw_action_str(rec->action), p->topic, (int)p->partition,
                   (long long)rec->cause_offset, r->value.len);
            r->st.produce_errors++;
            sw_run_m_add(r, SW_M_PRODUCE_ERRORS, 1);
            sw_arena_clear(&arena);
            return;
        }
    }
    rd_kafka_headers_t *h = rd_kafka_headers_new(8);
    sw_run_hdr_add(h, "stormwatch.format",
                   r->out_pager ? sw_pager_format_str(r->pager.format)
                   : avro       ? "avro"
                                : "json");
    sw_run_hdr_add(h, "stormwatch.action", sw_action_str(rec->action));
    sw_run_hdr_add_source(h, r, p, csrc, rec->cause_offset);
    sw_run_hdr_add(h, "content-type", avro ? "application/vnd.confluent.avro" : "application/json");
    const char *key = a->has_job_id ? a->job_id.ptr : "";
    sw_run_produce_record(r, p, src, pend_offset, r->out_topic, -1, key, keylen, r->value.data,
                          r->value.len, h);
    sw_arena_clear(&arena);
}

/* ---- transactions (exactly_once) --------------------------------------- */

/* An error of the transactional API: fatal ones (fencing) stop the daemon. */
bool sw_run_txn_ok(run_t *r, rd_kafka_error_t *e, const char *what)
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

bool sw_run_txn_begin(run_t *r)
{
    if (!r->eos || r->in_txn || r->failed) return true;
    if (!sw_run_txn_ok(r, rd_kafka_begin_transaction(r->producer), "begin_transaction"))
        return false;
    r->in_txn = true;
    return true;
}

/* Commit the open transaction with @p offsets (may be empty). */
bool sw_run_txn_commit(run_t *r, rd_kafka_topic_partition_list_t *offsets)
{
    if (!r->in_txn) return false;
    if (offsets && offsets->cnt) {
        rd_kafka_consumer_group_metadata_t *cgmd = rd_kafka_consumer_group_metadata(r->consumer);
        rd_kafka_error_t *e = rd_kafka_send_offsets_to_transaction(r->producer, offsets, cgmd,
                                                                   sw_run_stop_budget(r, -1));
        rd_kafka_consumer_group_metadata_destroy(cgmd);
        if (!sw_run_txn_ok(r, e, "send_offsets_to_transaction")) return false;
    }
    r->in_txn = false;
    if (!sw_run_txn_ok(r, rd_kafka_commit_transaction(r->producer, sw_run_stop_budget(r, -1)),
                       "commit_transaction"))
        return false;
    return sw_run_txn_begin(r);
}

/* ---- snapshots and commits ---------------------------------------------- */

/* Commit @p list: in a transaction, or with the consumer. @returns true
 * when a synchronous commit (or transaction) was taken. */
bool sw_run_commit_list(run_t *r, rd_kafka_topic_partition_list_t *list, bool sync)
{
    if (!list->cnt) return true;
    r->st.commits++;
    sw_run_m_add(r, SW_M_COMMITS, 1);
    if (r->eos) {
        sw_run_flush_bounded(r, 60000);
        return sw_run_txn_commit(r, list);
    }
    rd_kafka_resp_err_t err = rd_kafka_commit(r->consumer, list, !sync);
    if (err && err != RD_KAFKA_RESP_ERR__NO_OFFSET) {
        sw_run_m_add(r, SW_M_COMMIT_ERRORS, 1);
        sw_log_limited(r->log, &r->lim_commit, SW_LOG_WARN, "offset commit failed: %s",
                       rd_kafka_err2str(err));
        return false;
    }
    return sync;
}

/* state.restore=off: commit what is done, for every partition (or @p only). */
bool sw_run_commit_plain(run_t *r, const rd_kafka_topic_partition_list_t *only, bool sync)
{
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(8);
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p) continue;
        int64_t off = sw_run_committable(p);
        if (off < 0) continue;
        if (only && !rd_kafka_topic_partition_list_find(only, p->topic, p->partition)) continue;
        rd_kafka_topic_partition_list_add(list, p->topic, p->partition)->offset = off;
        if (sync)
            sw_log(r->log, SW_LOG_INFO, "committing %s [%d] at offset %lld%s", p->topic,
                   (int)p->partition, (long long)off,
                   sw_ledger_pending(&p->led) ? " (records of later offsets still unacknowledged)"
                                              : "");
    }
    bool sent = list->cnt > 0;
    sw_run_commit_list(r, list, sync);
    rd_kafka_topic_partition_list_destroy(list);
    return sent;
}
