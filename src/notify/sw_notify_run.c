/*
 * `stormwatch notify` (see sw_notify_run.h): the consumer loop, records
 * decoded and decided, commits with the rebuild offset in their metadata,
 * rebalances, the notify DLQ topic, and the bounded stop. Decisions (what
 * a record means, when to re-send, how long to wait) come from
 * src/notify/sw_notify.h; the sinks, their retries, dead letters and the
 * Alertmanager re-sends are in sw_notify_sink.c.
 *
 * Records are handled one at a time, in partition order: a record is
 * offered to every sink in turn, each retried until it accepts or refuses
 * for good, and only then is its offset committable. A sink that keeps
 * failing therefore holds its partition back (nothing is skipped), while
 * the Alertmanager re-sends of open episodes go on during the waits.
 */
#include "sw_notify_run_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sw_alloc.h"
#include "sw_codec_avro.h"
#include "sw_codec_record.h"

#define METADATA_FMT "notify1:rebuild=%" SCNd64

static void commit(notify_t *n, const rd_kafka_topic_partition_list_t *only, bool sync);

/* The state of @p partition, grown on first use. */
static npart_t *npart(notify_t *n, int32_t partition)
{
    if (partition < 0) return NULL;
    if ((size_t)partition >= n->n_parts) {
        size_t want = (size_t)partition + 1;
        n->parts = sw_reallocarray(n->parts, want, sizeof(*n->parts));
        for (size_t i = n->n_parts; i < want; i++) n->parts[i] = (npart_t){false, -1, -1, false};
        n->n_parts = want;
    }
    return &n->parts[partition];
}

/* ---- records --------------------------------------------------------------- */

/* The record as JSON into n->json. @returns false with @p why. */
static bool record_json(notify_t *n, const rd_kafka_message_t *rkm, char *why, size_t why_size)
{
    n->json.len = 0;
    const unsigned char *p = rkm->payload;
    if (!p || rkm->len == 0) {
        snprintf(why, why_size, "empty value");
        return false;
    }
    if (sw_avro_is_framed(p, rkm->len)) {
        return sw_avro_decode_record_json(p, rkm->len, n->alert_schema_id, &n->json, why,
                                          why_size) == SW_OK;
    }
    sw_buf_put(&n->json, p, rkm->len);
    return true;
}

/* Handle one alert record. @returns false when a stop interrupted its
 * delivery (its offset is then not done: the next owner delivers it). */
static bool handle(notify_t *n, const rd_kafka_message_t *rkm)
{
    npart_t *pt = npart(n, rkm->partition);
    bool replay = rkm->offset < pt->replay_until;
    char why[512];
    sw_record_t rec;
    sw_arena_reset(&n->arena);
    if (!record_json(n, rkm, why, sizeof(why)) ||
        sw_record_parse_json(n->json.data, n->json.len, &n->arena, &rec, why, sizeof(why)) !=
            SW_OK) {
        if (!replay) {
            sw_log_limited(n->log, &n->lim_bad, SW_LOG_WARN,
                           "%s [%d] offset %lld: %s; dead-lettered", rd_kafka_topic_name(rkm->rkt),
                           (int)rkm->partition, (long long)rkm->offset, why);
            if (!sw_nsink_dlq(n, rkm, why, NULL, 0, NULL)) return false;
            pt->done = rkm->offset + 1;
            pt->dirty = true;
        }
        return true;
    }
    int conf = rec.episode_confidence;
    sw_notify_verdict_t v = sw_notify_decide(n->table, &rec, &conf);
    rec.episode_confidence = conf;
    if (!replay) sw_nrun_m_add(n, (sw_metric_t)(SW_M_NOTIFY_RECORDS + v), 1);
    if (!replay && (v == SW_NOTIFY_TRIGGER || v == SW_NOTIFY_RESOLVE)) {
        uint64_t gen = n->generation;
        for (int k = 0; k < SW_SINK__CNT; k++) {
            sink_t *s = &n->sinks[k];
            if (!s->on) continue;
            if (sw_nsink_deliver(n, s, rkm, &rec, n->json.data, n->json.len) == SW_DELIV_STOPPED)
                return false;
        }
        sw_nsink_set_paused(n, false);
        if (n->generation != gen) {
            /* A rebalance while it waited: the partition was revoked (its
             * next owner reads this record again from the committed
             * offset), maybe handed back (then re-read from there too). */
            sw_log(n->log, SW_LOG_INFO,
                   "%s [%d] offset %lld: rebalanced during its delivery; "
                   "left to the partition's owner",
                   rd_kafka_topic_name(rkm->rkt), (int)rkm->partition, (long long)rkm->offset);
            return true;
        }
        sw_log(n->log, SW_LOG_DEBUG, "%s [%d] offset %lld: %s delivered",
               rd_kafka_topic_name(rkm->rkt), (int)rkm->partition, (long long)rkm->offset,
               sw_notify_verdict_str(v));
    } else if (!replay && v == SW_NOTIFY_DUPLICATE) {
        n->duplicates++;
    }
    sw_notify_apply(n->table, &rec, v, conf, n->json.data, n->json.len, rkm->partition, rkm->offset,
                    sw_clock_ms());
    if (n->m)
        sw_metrics_set(n->m, SW_M_NOTIFY_OPEN_EPISODES, (int64_t)sw_notify_open_count(n->table));
    /* A record re-read to rebuild was committed before: the commit never
     * moves back. */
    if (replay) return true;
    pt->done = rkm->offset + 1;
    pt->dirty = true;
    /* A page is committed at once (synchronously): a crash after it can
     * only repeat the one record whose answer it did not see. */
    if (!replay && (v == SW_NOTIFY_TRIGGER || v == SW_NOTIFY_RESOLVE)) commit(n, NULL, true);
    return true;
}

/* ---- commits and rebalances ------------------------------------------------ */

/* Commit the done offsets of the assigned partitions (or of @p only), each
 * with its rebuild offset in the metadata. */
static void commit(notify_t *n, const rd_kafka_topic_partition_list_t *only, bool sync)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(4);
    for (size_t i = 0; i < n->n_parts; i++) {
        npart_t *pt = &n->parts[i];
        if (!pt->assigned || !pt->dirty || pt->done < 0) continue;
        if (only) {
            bool in = false;
            for (int k = 0; k < only->cnt; k++) in |= only->elems[k].partition == (int32_t)i;
            if (!in) continue;
        }
        rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(l, n->topic, (int32_t)i);
        tp->offset = pt->done;
        char md[64];
        snprintf(md, sizeof(md), "notify1:rebuild=%lld",
                 (long long)sw_notify_rebuild_offset(n->table, (int32_t)i, pt->done));
        tp->metadata = sw_strdup(md);
        tp->metadata_size = strlen(md);
        pt->dirty = false;
    }
    if (l->cnt) {
        rd_kafka_resp_err_t e = rd_kafka_commit(n->consumer, l, sync ? 0 : 1);
        sw_nrun_m_add(n, SW_M_COMMITS, 1);
        if (e) {
            sw_nrun_m_add(n, SW_M_COMMIT_ERRORS, 1);
            sw_log(n->log, SW_LOG_WARN, "offset commit failed: %s", rd_kafka_err2str(e));
            for (int k = 0; k < l->cnt; k++) npart(n, l->elems[k].partition)->dirty = true;
        }
    }
    rd_kafka_topic_partition_list_destroy(l);
    n->last_commit_ms = sw_clock_ms();
}

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *list, void *opaque)
{
    notify_t *n = ((sw_kafka_ctx_t *)opaque)->user;
    sw_nrun_m_add(n, SW_M_REBALANCES, 1);
    n->generation++;
    n->paused = false; /* a new assignment starts unpaused */
    /* Stashed messages belong to the old assignment: they are read again
     * from the committed offsets by whoever owns them now. */
    for (size_t i = 0; i < n->n_stash; i++) rd_kafka_message_destroy(n->stash[i]);
    n->n_stash = 0;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        n->assigned_once = true;
        rd_kafka_topic_partition_list_t *c = rd_kafka_topic_partition_list_copy(list);
        if (rd_kafka_committed(rk, c, 30000))
            sw_log(n->log, SW_LOG_WARN,
                   "cannot read the committed offsets; starting from "
                   "auto.offset.reset");
        for (int i = 0; i < list->cnt; i++) {
            rd_kafka_topic_partition_t *tp = &list->elems[i];
            const rd_kafka_topic_partition_t *ct = &c->elems[i];
            npart_t *pt = npart(n, tp->partition);
            pt->assigned = true;
            pt->dirty = false;
            pt->done = -1;
            pt->replay_until = -1;
            int64_t rebuild = -1;
            if (ct->offset >= 0) {
                char md[64] = "";
                if (ct->metadata && ct->metadata_size < sizeof(md))
                    memcpy(md, ct->metadata, ct->metadata_size);
                if (sscanf(md, METADATA_FMT, &rebuild) != 1 || rebuild < 0 || rebuild > ct->offset)
                    rebuild = ct->offset;
                pt->replay_until = ct->offset;
                pt->done = ct->offset;
                tp->offset = rebuild;
            }
            if (ct->offset >= 0) {
                sw_log(n->log, SW_LOG_INFO,
                       "assigned %s [%d]: committed offset %lld, rebuilding open episodes from "
                       "offset %lld",
                       tp->topic, (int)tp->partition, (long long)ct->offset, (long long)rebuild);
            } else {
                char aor[32] = "", off[32];
                size_t aor_n = sizeof(aor);
                if (rd_kafka_conf_get(rd_kafka_conf(rk), "auto.offset.reset", aor, &aor_n) !=
                    RD_KAFKA_CONF_OK)
                    aor[0] = '\0';
                sw_log(n->log, SW_LOG_INFO,
                       "assigned %s [%d]: no committed offset (%s); starting at "
                       "auto.offset.reset%s%s",
                       tp->topic, (int)tp->partition,
                       sw_kafka_offset_str(ct->offset, off, sizeof(off)), aor[0] ? "=" : "", aor);
            }
        }
        rd_kafka_topic_partition_list_destroy(c);
        rd_kafka_assign(rk, list);
    } else {
        if (!rd_kafka_assignment_lost(rk)) commit(n, list, true);
        for (int i = 0; i < list->cnt; i++) {
            npart_t *pt = npart(n, list->elems[i].partition);
            pt->assigned = false;
            sw_notify_drop_partition(n->table, list->elems[i].partition);
            sw_log(n->log, SW_LOG_INFO, "revoked %s [%d]", list->elems[i].topic,
                   (int)list->elems[i].partition);
        }
        rd_kafka_assign(rk, NULL);
    }
    size_t assigned = 0;
    for (size_t i = 0; i < n->n_parts; i++) assigned += n->parts[i].assigned;
    if (n->m) {
        sw_metrics_set(n->m, SW_M_ASSIGNED_PARTITIONS, (int64_t)assigned);
        sw_metrics_set(n->m, SW_M_NOTIFY_OPEN_EPISODES, (int64_t)sw_notify_open_count(n->table));
        sw_metrics_set_ready_state(n->m, assigned > 0, -1);
    }
}

/* Consumer lag (high watermark - next offset to deliver) over the
 * assignment, for stormwatch_consumer_total_lag and /readyz. */
static void publish_lag(notify_t *n)
{
    n->last_lag_ms = sw_clock_ms();
    if (!n->m) return;
    int64_t total = 0;
    size_t assigned = 0;
    for (size_t i = 0; i < n->n_parts; i++) {
        npart_t *pt = &n->parts[i];
        if (!pt->assigned) continue;
        assigned++;
        int64_t lo = -1, hi = -1;
        rd_kafka_get_watermark_offsets(n->consumer, n->topic, (int32_t)i, &lo, &hi);
        if (hi < 0) {
            total = -1;
            break;
        }
        int64_t at = pt->done >= 0 ? pt->done : lo;
        if (at < 0) at = 0;
        total += hi > at ? hi - at : 0;
    }
    sw_metrics_set_ready_state(n->m, assigned > 0, assigned ? total : -1);
}

/* notify.dlq.topic exists, or is created (topics.create=on: one partition,
 * cleanup.policy=delete, the broker's replication), as run does for its
 * topics; asks for every topic's metadata, so that no broker auto-creates
 * it with its defaults. @returns false (logged) when it is missing and
 * topics.create=off, or the metadata cannot be read. */
static bool ensure_dlq_topic(notify_t *n)
{
    const rd_kafka_metadata_t *md = NULL;
    rd_kafka_resp_err_t e = rd_kafka_metadata(n->producer, 1, NULL, &md, 10000);
    if (e) {
        sw_log(n->log, SW_LOG_ERROR, "cannot check topic \"%s\": %s", n->dlq_topic,
               rd_kafka_err2str(e));
        return false;
    }
    n->kctx.contacted = true;
    bool found = false;
    for (int i = 0; i < md->topic_cnt && !found; i++)
        found = !strcmp(md->topics[i].topic, n->dlq_topic) && !md->topics[i].err;
    rd_kafka_metadata_destroy(md);
    if (found) return true;
    if (!n->opts->set->delivery.topics_create) {
        sw_log(n->log, SW_LOG_ERROR,
               "topic \"%s\" (notify.dlq.topic) does not exist: create it (1 partition, "
               "cleanup.policy=delete) or set topics.create=on",
               n->dlq_topic);
        return false;
    }
    char err[256];
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(n->dlq_topic, 1, -1, err, sizeof(err));
    if (!nt) {
        sw_log(n->log, SW_LOG_ERROR, "cannot create topic \"%s\": %s", n->dlq_topic, err);
        return false;
    }
    sw_log(n->log, SW_LOG_INFO, "creating topic \"%s\" (notify.dlq.topic, topics.create=on)",
           n->dlq_topic);
    rd_kafka_NewTopic_set_config(nt, "cleanup.policy", "delete");
    if (!sw_kafka_has_controller(n->producer)) {
        rd_kafka_NewTopic_destroy(nt);
        sw_log(n->log, SW_LOG_WARN,
               "cannot create topic \"%s\": the cluster names no controller broker for the Admin "
               "API (librdkafka's mock cluster: `stormwatch mock` given this configuration's "
               "-c/-X creates it); dead letters wait until it exists: kafka-topics.sh "
               "--bootstrap-server %s --create --topic %s --partitions 1 --config "
               "cleanup.policy=delete",
               n->dlq_topic, n->opts->bootstrap, n->dlq_topic);
        return true;
    }
    rd_kafka_queue_t *q = rd_kafka_queue_new(n->producer);
    rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(n->producer,
                                                           RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_request_timeout(o, 10000, err, sizeof(err));
    rd_kafka_CreateTopics(n->producer, &nt, 1, o, q);
    rd_kafka_event_t *ev = NULL;
    for (int i = 0; i < 150 && !ev && sw_nrun_running(n); i++) ev = rd_kafka_queue_poll(q, 100);
    rd_kafka_resp_err_t ce = RD_KAFKA_RESP_ERR__TIMED_OUT;
    char text[256] = "no answer in 15 s";
    const rd_kafka_CreateTopics_result_t *res = ev ? rd_kafka_event_CreateTopics_result(ev) : NULL;
    size_t cnt = 0;
    const rd_kafka_topic_result_t **tr = res ? rd_kafka_CreateTopics_result_topics(res, &cnt)
                                             : NULL;
    if (cnt) {
        ce = rd_kafka_topic_result_error(tr[0]);
        snprintf(text, sizeof(text), "%s", rd_kafka_topic_result_error_string(tr[0]) ?: "");
    } else if (ev) {
        ce = rd_kafka_event_error(ev);
        snprintf(text, sizeof(text), "%s", rd_kafka_event_error_string(ev) ?: "");
    }
    if (ev) rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(o);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    if (!ce || ce == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        sw_log(n->log, SW_LOG_INFO, "created topic \"%s\" (topics.create=on)", n->dlq_topic);
        return true;
    }
    /* Not fatal: a dead letter that cannot be written is retried (its
     * record held back) until the topic exists. */
    sw_log(n->log, SW_LOG_WARN, "cannot create topic \"%s\": %s; dead letters wait until it exists",
           n->dlq_topic, text);
    return true;
}

/* The closing lines of the rate-limited warnings whose window ended (at
 * exit: all of them, @p flush). */
static void limits_tick(notify_t *n, bool flush)
{
    sw_log_limit_t *lims[] = {&n->lim_bad, &n->lim_retry, &n->kctx.lim_down, &n->kctx.lim_err};
    for (size_t i = 0; i < sizeof(lims) / sizeof(lims[0]); i++) {
        if (flush) sw_log_limit_flush(n->log, lims[i]);
        else sw_log_limit_tick(n->log, lims[i]);
    }
}

/* ---- setup, loop, stop -------------------------------------------------------- */

static int setup(notify_t *n)
{
    const sw_conf_t *conf = n->opts->conf;
    char err[512];
    for (int k = 0; k < SW_SINK__CNT; k++)
        if (!sw_nsink_setup(n, (sw_sink_t)k, err, sizeof(err))) {
            sw_log(n->log, SW_LOG_ERROR, "%s", err);
            return 2;
        }
    rd_kafka_conf_t *pc = sw_kafka_conf(conf, SW_KAFKA_PRODUCER, n->opts->bootstrap, NULL, &n->kctx,
                                        err, sizeof(err));
    if (!pc) {
        sw_log(n->log, SW_LOG_ERROR, "%s", err);
        return 2;
    }
    rd_kafka_conf_set_dr_msg_cb(pc, sw_nsink_dr_cb);
    /* First contact before any client, as run's (one line, at once). */
    if (!sw_kafka_wait_reachable(pc, n->log, n->opts->running)) {
        rd_kafka_conf_destroy(pc);
        return -1;
    }
    n->producer = rd_kafka_new(RD_KAFKA_PRODUCER, pc, err, sizeof(err));
    if (!n->producer) {
        rd_kafka_conf_destroy(pc);
        sw_log(n->log, SW_LOG_ERROR, "cannot create the producer: %s", err);
        return 2;
    }
    rd_kafka_conf_t *cc = sw_kafka_conf(conf, SW_KAFKA_CONSUMER, n->opts->bootstrap,
                                        n->opts->set->notify.group_id, &n->kctx, err, sizeof(err));
    if (!cc) {
        sw_log(n->log, SW_LOG_ERROR, "%s", err);
        return 2;
    }
    /* Eager assignment: every assignment rebuilds its partitions' episodes
     * from the committed metadata anyway, and an eager consumer can be
     * closed before its first assignment on every librdkafka version. */
    sw_kafka_set(cc, "partition.assignment.strategy", "range,roundrobin", err, sizeof(err));
    rd_kafka_conf_set_rebalance_cb(cc, rebalance_cb);
    n->consumer = rd_kafka_new(RD_KAFKA_CONSUMER, cc, err, sizeof(err));
    if (!n->consumer) {
        rd_kafka_conf_destroy(cc);
        sw_log(n->log, SW_LOG_ERROR, "cannot create the consumer: %s", err);
        return 2;
    }
    rd_kafka_poll_set_consumer(n->consumer);
    if (!ensure_dlq_topic(n)) return 1;
    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(topics, n->topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t e = rd_kafka_subscribe(n->consumer, topics);
    rd_kafka_topic_partition_list_destroy(topics);
    if (e) {
        sw_log(n->log, SW_LOG_ERROR, "cannot subscribe to %s: %s", n->topic, rd_kafka_err2str(e));
        return 1;
    }
    return 0;
}

static int stop(notify_t *n)
{
    int64_t t0 = sw_clock_ms();
    int64_t deadline = t0 + n->shutdown_ms;
    /* Stashed messages are not handled: the next owner reads them again. */
    for (size_t i = 0; i < n->n_stash; i++) rd_kafka_message_destroy(n->stash[i]);
    n->n_stash = 0;
    sw_log(n->log, SW_LOG_INFO,
           "stopping: committing, flushing dead letters, leaving the group "
           "(at most %lld ms, shutdown.timeout.ms)",
           (long long)n->shutdown_ms);
    commit(n, NULL, false);
    while (rd_kafka_outq_len(n->producer) > 0 && sw_clock_ms() < deadline &&
           !(n->opts->stops && *n->opts->stops > 1))
        rd_kafka_poll(n->producer, 50);
    /* The async commit's answer arrives through the consumer queue. */
    int64_t settle = sw_clock_ms() + 1000;
    while (sw_clock_ms() < settle && sw_clock_ms() < deadline &&
           !(n->opts->stops && *n->opts->stops > 1)) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(n->consumer, 50);
        if (m) rd_kafka_message_destroy(m); /* not handled: read again by the next owner */
        if (!rd_kafka_outq_len(n->producer)) break;
    }
    if (sw_clock_ms() >= deadline || (n->opts->stops && *n->opts->stops > 1)) {
        sw_log(n->log, SW_LOG_WARN,
               "stop cut short after %lld ms: the group drops this member "
               "after session.timeout.ms",
               (long long)(sw_clock_ms() - t0));
        rd_kafka_destroy_flags(n->consumer, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
        n->consumer = NULL;
        return 1;
    }
    rd_kafka_consumer_close(n->consumer);
    sw_log(n->log, SW_LOG_INFO,
           "stopped in %lld ms (%llu delivered, %llu duplicates skipped, %llu "
           "dead-lettered)",
           (long long)(sw_clock_ms() - t0), (unsigned long long)n->delivered,
           (unsigned long long)n->duplicates, (unsigned long long)n->dlq);
    return 0;
}

int sw_notify_run(const sw_notify_run_opts_t *opts)
{
    notify_t n;
    memset(&n, 0, sizeof(n));
    n.opts = opts;
    n.log = opts->log;
    n.m = opts->metrics;
    n.kctx.log = opts->log;
    n.kctx.user = &n;
    const sw_settings_t *set = opts->set;
    n.topic = set->kafka.output_topic;
    n.dlq_topic = set->notify.dlq_topic;
    n.alert_schema_id = set->format.schema_id_alert;
    n.backoff.base_ms = set->notify.retry_backoff_ms;
    n.backoff.max_ms = set->notify.retry_backoff_max_ms;
    n.commit_interval_ms = set->notify.commit_interval_ms;
    n.shutdown_ms = set->delivery.shutdown_timeout_ms;
    n.table = sw_notify_new(set->notify.alertmanager_resend_ms);
    n.am_opts = (sw_pager_opts_t){.format = SW_PAGER_ALERTMANAGER,
                                  .generator_url = set->pager.generator_url,
                                  .labels = set->pager.labels,
                                  .ends_after_ms = set->pager.ends_after_ms};
    n.pd_opts = (sw_pager_opts_t){.format = SW_PAGER_PAGERDUTY,
                                  .routing_key = set->pager.routing_key};
    n.rnd = (uint64_t)sw_nrun_wall_ns() ^ ((uint64_t)getpid() << 32) ^ UINT64_C(0x9e3779b97f4a7c15);
    if (!n.rnd) n.rnd = 1;
    n.lim_bad = (sw_log_limit_t){0};
    sw_buf_init(&n.resp.body);
    sw_buf_init(&n.body);
    sw_buf_init(&n.json);
    sw_arena_init(&n.arena);
    int rc = setup(&n);
    if (rc < 0) { /* stopped while waiting for the cluster */
        sw_log(n.log, SW_LOG_INFO, "stopped before the Kafka cluster answered");
        rc = 0;
    } else if (rc == 0) {
        sw_log(n.log, SW_LOG_INFO, "delivering %s (group %s) to the sinks; dead letters to %s",
               n.topic, set->notify.group_id, n.dlq_topic);
        n.last_commit_ms = sw_clock_ms();
        n.join_t0_ms = n.last_commit_ms;
        n.join_note_s = 10;
        while (sw_nrun_running(&n)) {
            if (n.m) sw_metrics_heartbeat(n.m, sw_clock_ms());
            sw_nsink_resend_due(&n);
            if (sw_clock_ms() - n.last_commit_ms >= n.commit_interval_ms) commit(&n, NULL, false);
            rd_kafka_poll(n.producer, 0);
            if (sw_clock_ms() - n.last_lag_ms >= 1000) {
                /* Alert records deleted by retention before they were read. */
                sw_kafka_account_resets(n.consumer, &n.kctx, n.m);
                publish_lag(&n);
                limits_tick(&n, false);
                /* As run says it: a slow first join is not silence. */
                if (!n.assigned_once && sw_clock_ms() - n.join_t0_ms >= n.join_note_s * 1000) {
                    sw_log(n.log, SW_LOG_INFO,
                           "waiting %lld s for the group's first assignment (joining a group that "
                           "is already consuming waits up to its members' session.timeout.ms)",
                           (long long)n.join_note_s);
                    n.join_note_s *= 2;
                }
            }
            rd_kafka_message_t *rkm = NULL;
            if (n.n_stash) {
                rkm = n.stash[0];
                memmove(n.stash, n.stash + 1, (n.n_stash - 1) * sizeof(*n.stash));
                n.n_stash--;
            } else {
                rkm = rd_kafka_consumer_poll(n.consumer, 100);
            }
            if (!rkm) continue;
            if (rkm->err) {
                if (rkm->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                    sw_log_limited(n.log, &n.lim_bad, SW_LOG_WARN, "consumer: %s",
                                   rd_kafka_message_errstr(rkm));
                rd_kafka_message_destroy(rkm);
                continue;
            }
            if (!npart(&n, rkm->partition)->assigned) {
                rd_kafka_message_destroy(rkm);
                continue;
            }
            bool ok = handle(&n, rkm);
            rd_kafka_message_destroy(rkm);
            if (!ok) break;
        }
        if (n.kctx.fatal) {
            sw_log(n.log, SW_LOG_ERROR, "fatal Kafka error: %s", n.kctx.fatal_reason);
            rc = 1;
        }
        int src = stop(&n);
        limits_tick(&n, true);
        if (!rc) rc = src;
    }
    if (n.consumer) rd_kafka_destroy(n.consumer);
    if (n.producer) {
        rd_kafka_flush(n.producer, 1000);
        rd_kafka_destroy(n.producer);
    }
    sw_nsink_destroy(&n);
    sw_notify_destroy(n.table);
    free(n.parts);
    free(n.stash);
    sw_buf_clear(&n.resp.body);
    sw_buf_clear(&n.body);
    sw_buf_clear(&n.json);
    sw_arena_clear(&n.arena);
    return rc;
}
