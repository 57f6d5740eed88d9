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
#include <time.h>
#include <unistd.h>

#include "sw_run_int.h"
#include "sw_run_idle.h"
#include "sw_run_keying.h"
#include "sw_run_local.h"
#include "sw_run_mem.h"
#include "sw_run_members.h"
#include "sw_run_out.h"
#include "sw_run_setup.h"
#include "sw_run_state.h"
#include "sw_run_work.h"

#include "sw_schemas.h"

static void on_expired(void *opaque, const sw_record_t *rec)
{
    run_t *r = opaque;
    part_t *p = r->expiring;
    /* A summary waits like a record of the last processed offset, so that
     * offset is not committed before the summary is acknowledged. */
    sw_run_send_record(r, p, 0, p->next - 1, rec);
}

/* The closing lines of the rate-limited warnings whose window ended (at
 * exit: all of them, @p flush). */
static void limits_tick(run_t *r, bool flush)
{
    sw_log_limit_t *lims[] = {&r->lim_bad,  &r->lim_kafka,     &r->lim_commit,
                              &r->lim_snap, &r->lim_key,       &r->lim_reg,
                              &r->lim_mem,  &r->kctx.lim_down, &r->kctx.lim_err};
    for (size_t i = 0; i < sizeof(lims) / sizeof(lims[0]); i++) {
        if (flush) sw_log_limit_flush(r->log, lims[i]);
        else sw_log_limit_tick(r->log, lims[i]);
    }
}

static void expire_idle(run_t *r)
{
    /* repartition=on: idle in forwarded time (sw_run_idle.c), so that a
     * forwarder's outage is not taken for the end of its jobs. */
    int64_t now = sw_run_idle_now(r, sw_clock_ms());
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p || p->next < 0 || p->mode != PM_NORMAL) continue;
        r->expiring = p;
        size_t n = sw_detect_expire(p->det, now, r->set->engine.job_idle_ms, on_expired, r);
        if (n)
            sw_log(r->log, SW_LOG_INFO, "%zu idle job%s of %s [%d] summarised and freed", n,
                   n == 1 ? "" : "s", p->topic, (int)p->partition);
    }
    r->expiring = NULL;
}

/* ---- rebalances -------------------------------------------------------- */

/* The consumer handle a stop could not destroy (bug 4312 below): kept
 * reachable on purpose, so that leak checkers do not report what the
 * process exit reclaims. The one file-scope variable of the daemon. */
static rd_kafka_t *g_undestroyed_consumer;

/* The consumer's rebalance protocol: "NONE" when librdkafka cannot say
 * (rd_kafka_rebalance_protocol() returns NULL when its group handle does
 * not answer, as while a consumer that was dropped from its group stops:
 * a strcmp of it crashed stops in a rolling update, SIGSEGV in libc). */
static const char *rebalance_protocol(rd_kafka_t *rk)
{
    const char *p = rd_kafka_rebalance_protocol(rk);
    return p ? p : "NONE";
}

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
    while (!r->assigned_once && strcmp(rebalance_protocol(r->consumer), "NONE") != 0 &&
           sw_clock_ms() < until && !sw_run_stop_over(r)) {
        /* Serves the rebalance callback; a message that arrives now is not
         * processed, so its offset is not committed (it is read again). */
        rd_kafka_message_t *m = rd_kafka_consumer_poll(r->consumer, 100);
        if (m) rd_kafka_message_destroy(m);
    }
    return !r->assigned_once && strcmp(rebalance_protocol(r->consumer), "COOPERATIVE") == 0;
}

/* ---- partitions ------------------------------------------------------ */

/* A partition the rebalance callback assigned, each room's part of it
 * empty, and its metric series. */
static part_t *part_new(run_t *r, const char *topic, int32_t partition)
{
    part_t *p = sw_calloc(1, sizeof(*p));
    p->topic = sw_strdup(topic);
    p->partition = partition;
    p->forward = r->rep_topic && strcmp(topic, r->rep_topic) != 0 && !r->rep_auto;
    p->local = r->rep_auto;
    p->next = -1;
    p->rnext = -1;
    p->rep_hi = -1;
    p->inflight = -1;
    sw_ledger_init(&p->rled);
    sw_imap_init(&p->rsuppress);
    p->w.rlast = -1;
    p->mode = PM_NORMAL;
    sw_ledger_init(&p->led);
    sw_hold_init(&p->hold);
    p->w.max_ts = -1;
    p->w.last = -1;
    p->last_snap_ms = sw_clock_ms();
    sw_imap_init(&p->suppress);
    p->id = (uint32_t)r->nparts;
    r->parts = sw_reallocarray(r->parts, r->nparts + 1, sizeof(*r->parts));
    r->parts[r->nparts++] = p;
    r->st.partitions++;
    if (r->m) {
        p->m_events = sw_metrics_events_in(r->m, topic, p->forward);
        p->m_miskeyed = sw_metrics_miskeyed(r->m, topic);
        p->m_lag = sw_metrics_lag_add(r->m, topic, partition);
    }
    return p;
}

/* A partition revoked, lost, or left at the end: every room's part of it. */
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
    sw_run_part_queue_release(p);
    if (p->local) sw_run_local_release(r, p);
    sw_run_work_free(p);
    sw_run_local_free(p);
    sw_run_mem_detach(r, p);
    sw_detect_destroy(p->det);
    sw_imap_clear(&p->suppress);
    sw_imap_clear(&p->rsuppress);
    sw_ledger_clear(&p->led);
    sw_ledger_clear(&p->rled);
    free(p->topic);
    free(p);
}

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *list, void *opaque)
{
    run_t *r = ((sw_kafka_ctx_t *)opaque)->user;
    bool cooperative = strcmp(rebalance_protocol(rk), "COOPERATIVE") == 0;
    r->st.rebalances++;
    sw_run_m_add(r, SW_M_REBALANCES, 1);
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
            sw_run_part_queue(r, p); /* before the assignment: its messages stay in its queue */
            sw_log(r->log, SW_LOG_INFO, "assigned %s [%d]", p->topic, (int)p->partition);
            sw_run_restore_partition(r, p, &c->elems[i]);
            if (p->hold.origin) {
                p->next = sw_run_start_offset(r, p, &c->elems[i]);
                fresh[nfresh++] = p;
            }
            if (p->local) sw_run_local_assign(r, p); /* repartition p goes with input p */
        }
        int held = nfresh ? sw_run_origin_snapshots(r, fresh, nfresh, 15000) : 0;
        rd_kafka_topic_partition_list_destroy(c);
        rd_kafka_error_t *e = NULL;
        if (cooperative) e = rd_kafka_incremental_assign(rk, list);
        else rd_kafka_assign(rk, list);
        if (e) {
            sw_log(r->log, SW_LOG_ERROR, "assign failed: %s", rd_kafka_error_string(e));
            rd_kafka_error_destroy(e);
        }
        for (int i = 0; held && i < nfresh; i++)
            if (fresh[i]->hold.origin) sw_run_origin_pause(r, fresh[i], true);
        free(fresh);
        sw_run_m_set(r, SW_M_ASSIGNED_PARTITIONS, (int64_t)r->st.partitions);
        return;
    }
    /* Revocation: finish in-flight work for these partitions first. */
    bool lost = rd_kafka_assignment_lost(rk);
    if (!lost && !r->stopping) { /* a stop has done this already, within its deadline */
        if (r->restore) {
            for (int i = 0; i < list->cnt; i++) {
                part_t *p = sw_run_part_find(r, list->elems[i].topic, list->elems[i].partition);
                if (p && !p->hold.origin) sw_run_snapshot_final(r, p);
            }
        } else {
            rd_kafka_flush(r->producer, 60000);
            sw_run_commit_plain(r, list, true);
        }
    }
    for (int i = 0; i < list->cnt; i++) {
        part_t *p = sw_run_part_find(r, list->elems[i].topic, list->elems[i].partition);
        sw_log(r->log, SW_LOG_INFO, "%s %s [%d]", lost ? "lost" : "revoked", list->elems[i].topic,
               (int)list->elems[i].partition);
        if (p && sw_hold_held(&p->hold))
            sw_run_origin_pause(r, p, false); /* a later owner starts unpaused */
        if (p) part_destroy(r, p);
    }
    rd_kafka_error_t *e = NULL;
    if (cooperative) e = rd_kafka_incremental_unassign(rk, list);
    else rd_kafka_assign(rk, NULL);
    if (e) {
        sw_log(r->log, SW_LOG_ERROR, "unassign failed: %s", rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
    }
    sw_run_m_set(r, SW_M_ASSIGNED_PARTITIONS, (int64_t)r->st.partitions);
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
        sw_run_m_add(r, SW_M_COMMIT_ERRORS, 1);
        sw_log_limited(r->log, &r->lim_commit, SW_LOG_WARN, "offset commit failed: %s",
                       rd_kafka_err2str(err));
    }
    for (int i = 0; offsets && i < offsets->cnt; i++) {
        const rd_kafka_topic_partition_t *tp = &offsets->elems[i];
        part_t *p = sw_run_part_find(r, tp->topic, tp->partition);
        if (!p) continue;
        sw_snapref_t ref;
        char why[200];
        if (sw_snapmeta_parse(tp->metadata, tp->metadata_size, &ref, why, sizeof(why)) == SW_OK) {
            bool taken = !err && !tp->err;
            /* repartition=auto: the answer to the last commit sent is also
             * its repartition position's */
            if (ref.x == p->led.committed_x)
                sw_ledger_commit_answer(&p->rled, p->rled.committed_x, taken);
            sw_ledger_commit_answer(&p->led, ref.x, taken);
        }
    }
}

/* ---- setup and main loop --------------------------------------------- */

/* The group consumer's callbacks, which sw_run_setup() registers. */
static const sw_run_group_cbs_t group_cbs = {rebalance_cb, offset_commit_cb};

static void log_stats(run_t *r, uint64_t *last_messages, int64_t *last_ms)
{
    int64_t now = sw_clock_ms();
    double secs = (double)(now - *last_ms) / 1000.0;
    sw_log(r->log, SW_LOG_INFO,
           "%llu messages (%.0f/s), %llu alerts (%llu trigger, %llu update, %llu resolve), "
           "%llu summaries, %llu crash, %llu warning, %llu to the DLQ, %llu partitions",
           (unsigned long long)r->st.messages,
           secs > 0 ? (double)(r->st.messages - *last_messages) / secs : 0.0,
           (unsigned long long)(r->st.records[0] + r->st.records[1] + r->st.records[2]),
           (unsigned long long)r->st.records[0], (unsigned long long)r->st.records[1],
           (unsigned long long)r->st.records[2], (unsigned long long)r->st.records[3],
           (unsigned long long)r->st.records[SW_ACTION_CRASH],
           (unsigned long long)r->st.records[SW_ACTION_WARNING], (unsigned long long)r->st.dlq,
           (unsigned long long)r->st.partitions);
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
            !rd_kafka_get_watermark_offsets(r->consumer, p->topic, p->partition, &lo, &hi) &&
            hi >= 0) {
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
        sum.blind_ranks += cur.blind_ranks;
    }
    sw_metrics_engine_gauges(r->m, &sum);
    int64_t rwaiting = 0;
    for (size_t i = 0; i < r->nparts; i++) rwaiting += r->parts[i] && r->parts[i]->rwaiting;
    sw_run_m_set(r, SW_M_REPARTITION_WAITING, rwaiting);
    sw_run_m_set(r, SW_M_ASSIGNED_PARTITIONS, (int64_t)r->st.partitions);
    sw_run_m_set(r, SW_M_CONSUMER_TOTAL_LAG, total_lag);
    sw_metrics_set_ready_state(r->m, r->st.partitions > 0, total_lag);
    sw_run_output_state(r); /* the oldest undelivered record's age, as a gauge */
}

/* Log what a stop leaves uncommitted: the next owner of each such
 * partition reads it again from its committed offset (nothing is lost;
 * with state.restore=on, records already on the output are not re-sent). */
static void log_uncommitted(run_t *r)
{
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p || p->next < 0) continue;
        bool done = r->restore ? p->led.confirmed_x >= p->next
                               : (sw_ledger_pending(&p->led) == 0 && !r->commits_waiting);
        if (done) continue;
        sw_log(r->log, SW_LOG_WARN,
               "%s [%d]: not committed past offset %lld (input read up to %lld; %zu offsets with "
               "unacknowledged records): its next owner reads it again from the committed offset",
               p->topic, (int)p->partition,
               (long long)(r->restore ? p->led.confirmed_x : sw_run_committable(p)),
               (long long)p->next - 1, sw_ledger_pending(&p->led));
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
    r->stop_deadline = sw_clock_ms() + r->set->delivery.shutdown_timeout_ms;
    int64_t t0 = sw_clock_ms();
    sw_log(r->log, SW_LOG_INFO,
           "stopping: flushing records, then snapshots and commits (at most %lld ms, "
           "shutdown.timeout.ms; a second signal stops at once)",
           (long long)r->set->delivery.shutdown_timeout_ms);
    bool flushed = sw_run_flush_bounded(r, 0);
    if (!flushed && !sw_run_stop_abandoned(r))
        sw_log(r->log, SW_LOG_ERROR, "%d records still unacknowledged at the stop deadline",
               rd_kafka_outq_len(r->producer));
    r->commits_waiting = 0;
    if (flushed && r->restore) {
        for (size_t i = 0; i < r->nparts; i++) {
            part_t *p = r->parts[i];
            if (!p || p->hold.origin || p->mode != PM_NORMAL || p->next < 0 || p->led.failed ||
                p->rled.failed || (p->next <= p->led.confirmed_x && !sw_run_local_snapshot_due(p)))
                continue;
            p->snap.active = false; /* any snapshot in flight is superseded */
            sw_run_snapshot_start(r, p);
        }
        sw_run_flush_bounded(r, 0);
        for (size_t i = 0; i < r->nparts && !sw_run_stop_over(r); i++) {
            part_t *p = r->parts[i];
            if (!p || !sw_run_snapshot_commit_ready(p)) continue;
            sw_run_snapshot_commit(r, p, r->eos);
            if (!r->eos) r->commits_waiting++;
        }
    } else if (flushed && !r->failed && !r->eos) {
        if (sw_run_commit_plain(r, NULL, false)) r->commits_waiting++;
    } else if (flushed && !r->failed) {
        sw_run_commit_plain(r, NULL, true);
    }
    /* Commit answers arrive through the consumer's queue. A message read
     * now is not processed, so its offset is not committed. */
    while (r->commits_waiting > 0 && !sw_run_stop_over(r)) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(r->consumer, 100);
        if (m) rd_kafka_message_destroy(m);
    }
    if (r->eos && r->in_txn && !sw_run_stop_over(r)) {
        sw_run_flush_bounded(r, 0);
        sw_run_txn_commit(r, NULL);
    }
    if (sw_run_stop_over(r)) {
        bool second = sw_run_stop_abandoned(r);
        sw_log(r->log, second ? SW_LOG_WARN : SW_LOG_ERROR,
               second ? "second stop signal: stopping now, after %lld ms"
                      : "the stop took shutdown.timeout.ms (%lld ms) without finishing; stopping "
                        "now (are the brokers reachable?)",
               (long long)(sw_clock_ms() - t0));
        log_uncommitted(r);
        /* No close handshake: it would wait for the brokers. */
        for (size_t i = 0; i < r->nparts; i++)
            if (r->parts[i]) {
                sw_run_part_queue_release(r->parts[i]);
                sw_run_local_release(r, r->parts[i]);
                sw_run_local_free(r->parts[i]); /* messages before their handles */
            }
        rd_kafka_destroy_flags(r->consumer, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
        r->consumer = NULL;
        rd_kafka_purge(r->producer, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        /* Their delivery reports free what each message carried. */
        for (int i = 0; i < 20 && rd_kafka_outq_len(r->producer) > 0; i++)
            rd_kafka_poll(r->producer, 10);
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

/* The engines' debug trace (each job's lifecycle, "job J: A -> B
 * (reason, episode N)") into the log at debug (log.level=debug): @p opaque
 * is the run_t. Called on the thread feeding the engine; the log is
 * thread-safe. */
static void engine_trace(void *opaque, const char *line)
{
    const run_t *r = opaque;
    sw_log(r->log, SW_LOG_DEBUG, "engine: %s", line);
}

/* One run of the daemon, as configured, or (@p as, sw_run_members.c) as a
 * follower of the group's mode; @p next says how to start again when the
 * group's mode changed under this run (-1: it did not). */
static int run_once(const sw_run_opts_t *opts, uint64_t member_id, int as, int *next)
{
    run_t r;
    memset(&r, 0, sizeof(r));
    r.opts = opts;
    r.member_id = member_id;
    r.mode_as = as;
    r.mode_next = -1;
    r.wake[0] = r.wake[1] = -1;
    r.log = opts->log;
    r.m = opts->metrics;
    r.pass.m = r.m;
    r.pass.log = r.log;
    r.pass.plans = &r.plans;
    r.kctx.log = opts->log;
    r.kctx.user = &r;
    const sw_conf_t *conf = opts->conf;
    const sw_settings_t *set = opts->set;
    r.set = set;
    r.params = set->engine.params;
    sw_hash_key_random(&r.params.hash_key); /* input strings cannot be chosen to collide */
    if (r.log->level >= SW_LOG_DEBUG) {     /* only when it would be shown */
        r.params.trace = engine_trace;
        r.params.trace_opaque = &r;
    }
    r.pool.limit = set->engine.max_memory_bytes; /* one budget for every engine (sw_run_mem.c) */
    sw_run_m_set(&r, SW_M_MEMORY_BUDGET, set->engine.max_memory_bytes);
    r.restore = set->delivery.state_restore;
    r.eos = set->delivery.guarantee == SW_GUARANTEE_EXACTLY_ONCE;
    r.pass.schema_telemetry = set->format.schema_id_telemetry;
    r.schema_alert = set->format.schema_id_alert;
    r.pass.in_fmt = set->format.input == SW_IN_FORMAT_JSON   ? FMT_JSON
                    : set->format.input == SW_IN_FORMAT_AVRO ? FMT_AVRO
                                                             : FMT_AUTO;
    r.out_avro = set->format.output == SW_OUT_FORMAT_AVRO;
    r.out_pager = set->format.output == SW_OUT_FORMAT_PAGERDUTY ||
                  set->format.output == SW_OUT_FORMAT_ALERTMANAGER;
    if (r.out_pager)
        r.pager.format = set->format.output == SW_OUT_FORMAT_PAGERDUTY ? SW_PAGER_PAGERDUTY
                                                                       : SW_PAGER_ALERTMANAGER;
    r.pager.routing_key = set->pager.routing_key;
    r.pager.generator_url = set->pager.generator_url;
    r.pager.labels = set->pager.labels;
    r.pager.ends_after_ms = set->pager.ends_after_ms;
    r.out_topic = set->kafka.output_topic;
    r.dlq_topic = set->kafka.dlq_topic;
    r.state_topic = set->delivery.state_topic;
    if (sw_run_repartition_topic(set, r.rep_topic_buf, sizeof(r.rep_topic_buf)))
        r.rep_topic = r.rep_topic_buf;
    r.rep_auto = set->delivery.repartition_mode == SW_REPARTITION_AUTO; /* sw_run_setup() checks */
    r.local_mode = &sw_run_local_mode;
    r.tdec = sw_tdec_new();
    r.adec = sw_avro_dec_new();
    sw_buf_init(&r.value);

    char cerr[1024];
    int rc = 2;
    bool kafka_stage = false; /* past the registry's wait, in sw_run_setup() */
    /* Avro input through plans whenever more than the one fixed id can
     * arrive (a registry, or avro.schema.ids.telemetry); otherwise the
     * fixed-id path, as before. */
    r.pass.reg_plans = set->registry.urls.n > 0 || set->format.schema_ids_telemetry.n > 0;
    if (sw_conf_check(conf, cerr, sizeof(cerr)) != SW_OK) {
        sw_log(r.log, SW_LOG_ERROR, "%s", cerr); /* before any Kafka handle exists */
    } else if (sw_run_wake_open(&r) != 0) {
        rc = 1;
    } else if (!(r.reg = sw_registry_from_settings(
                     set, sw_schema_telemetry_event, sw_schema_telemetry_event_len,
                     r.pass.schema_telemetry, true, cerr, sizeof(cerr)))) {
        sw_log(r.log, SW_LOG_ERROR, "%s", cerr);
    } else {
        rc = 0;
        /* The registry's metrics exist only where one is configured. */
        if (r.m && sw_registry_remote(r.reg)) sw_metrics_enable_registry(r.m);
        if (r.out_avro && sw_registry_remote(r.reg)) rc = sw_run_registry_alert_id(&r);
        if (rc == 0) {
            kafka_stage = true;
            rc = sw_run_setup(&r, &group_cbs);
        }
    }
    if (rc < 0) { /* stopped while waiting for the cluster (or the registry) */
        sw_log(r.log, SW_LOG_INFO, "stopped before the %s answered",
               kafka_stage ? "Kafka cluster" : "schema registry");
        rc = 0;
    } else if (rc == 0) {
        sw_log(r.log, SW_LOG_INFO,
               "consuming %s%s%s as group %s; alerts to %s, dead letters to %s; %s%s",
               set->kafka.input_topics.v[0],
               r.rep_auto    ? " with "
               : r.rep_topic ? " through "
                             : " (repartition=off)",
               r.rep_topic ? r.rep_topic : "", set->kafka.group_id, r.out_topic, r.dlq_topic,
               r.restore ? "state snapshots in " : "no state restore",
               r.restore ? r.state_topic : "");
        if (r.rep_auto)
            sw_log(r.log, SW_LOG_INFO,
                   "repartition=auto: a message keyed by its job_id is analysed where it is when "
                   "%s places its key there (%s)%s",
                   r.part_pending ? "the producers' partitioner (undecided yet)"
                                  : sw_partitioner_name(r.part),
                   r.part_why,
                   r.part_pending ? "" : "; other messages take the hop to that partition");
        int64_t last_commit = sw_clock_ms(), last_tick = last_commit, last_stats = last_commit;
        uint64_t stats_msgs = 0;
        /* Rounds (sw_run_work.c): each partition's queue is read on its
         * own, and its messages are decoded and analysed on the worker
         * threads. The consumer's queue brings rebalances (their callbacks
         * run inside rd_kafka_consumer_poll) and errors; the pipe wakes the
         * loop when any queue stops being empty, the producer's delivery
         * reports included. */
        rd_kafka_queue_t *cq = rd_kafka_queue_get_consumer(r.consumer);
        rd_kafka_queue_t *pq = rd_kafka_queue_get_main(r.producer);
        rd_kafka_queue_io_event_enable(cq, r.wake[1], "c", 1);
        rd_kafka_queue_io_event_enable(pq, r.wake[1], "d", 1);
        char why[600];
        int nw = sw_run_workers_start(&r, set->delivery.worker_threads, why, sizeof(why));
        sw_log(r.log, SW_LOG_INFO, "worker.threads=%d (%s): %d thread%s decode and analyse", nw,
               why, nw, nw == 1 ? "" : "s");
        /* Registry requests on a thread of their own: the loop never waits
         * for the registry (sw_run_work.c holds a partition instead). */
        if (sw_registry_remote(r.reg) &&
            sw_registry_fetcher_start(r.reg, sw_run_wake_fetched, &r) != SW_OK)
            sw_log(r.log, SW_LOG_WARN,
                   "cannot start the schema registry's fetcher thread: requests are made by "
                   "the consume loop");
        int64_t last_snap_tick = 0;
        int64_t join_t0 = sw_clock_ms(), join_note_s = 10;
        bool more = false;
        while (*opts->running && !r.kctx.fatal && !r.failed && r.mode_next < 0) {
            sw_run_wake_wait(&r, more ? 0 : 100);
            rd_kafka_message_t *sm;
            while (*opts->running && (sm = rd_kafka_consumer_poll(r.consumer, 0)) != NULL)
                sw_run_take_stray(&r, sm);
            more = sw_run_round(&r);
            rd_kafka_poll(r.producer, 0);
            if (r.mirror) rd_kafka_poll(r.mirror, 0); /* its errors (messages: queues) */
            if (r.mprod) rd_kafka_poll(r.mprod, 0);   /* the markers' delivery reports */
            sw_run_registry_tick(&r);
            int64_t now = sw_clock_ms();
            sw_run_keying_tick(&r, now);
            sw_run_members_tick(&r, now);
            if (r.m) sw_metrics_heartbeat(r.m, now);
            if (now - last_tick >= 1000) {
                if (!r.assigned_once && now - join_t0 >= join_note_s * 1000) {
                    sw_log(r.log, SW_LOG_INFO,
                           "waiting %lld s for the group's first assignment (joining a group that "
                           "is already consuming waits up to its members' session.timeout.ms)",
                           (long long)join_note_s);
                    join_note_s *= 2;
                }
                /* Input deleted by retention before it was read. */
                sw_kafka_account_resets(r.consumer, &r.kctx, r.m);
                sw_run_idle_tick(&r, now);
                sw_run_keying_warn(&r);
                expire_idle(&r);
                sw_run_memory_tick(&r);
                sw_run_peer_tick(&r, now);
                sw_run_registry_metrics(&r);
                publish_metrics(&r);
                limits_tick(&r, false);
                last_tick = now;
            }
            if (r.restore) {
                if (now != last_snap_tick)
                    sw_run_snapshots_tick(&r, now); /* at most once a millisecond */
                last_snap_tick = now;
            } else if (now - last_commit >=
                       set->delivery.commit_interval_ms /* 100 with exactly_once unless set */) {
                sw_run_commit_plain(&r, NULL, false);
                last_commit = now;
            }
            if (now - last_stats >= 30000) log_stats(&r, &stats_msgs, &last_stats);
        }
        sw_run_workers_stop(&r);
        rd_kafka_queue_io_event_enable(cq, -1, NULL, 0);
        rd_kafka_queue_io_event_enable(pq, -1, NULL, 0);
        rd_kafka_queue_destroy(cq);
        rd_kafka_queue_destroy(pq);
        sw_run_members_leave(&r);
        int stop_rc = stop(&r);
        /* After the bounded stop (a request in flight ends within
         * schema.registry.request.timeout.ms), before the pipe closes. */
        sw_registry_fetcher_stop(r.reg);
        log_stats(&r, &stats_msgs, &last_stats);
        limits_tick(&r, true);
        rc = r.kctx.fatal || r.failed ? 1 : stop_rc;
        if (r.kctx.fatal)
            sw_log(r.log, SW_LOG_ERROR, "stopped after a fatal error: %s", r.kctx.fatal_reason);
    }
    r.stopping = true;                    /* the mirror goes with the run: no unassignments */
    for (size_t i = 0; i < r.nparts; i++) /* queue handles would keep the consumers alive */
        if (r.parts[i]) {
            sw_run_part_queue_release(r.parts[i]);
            sw_run_local_release(&r, r.parts[i]);
            sw_run_local_free(r.parts[i]); /* messages before their handles */
        }
    sw_run_members_stop(&r);
    if (r.consumer) rd_kafka_destroy(r.consumer);
    if (r.mirror) rd_kafka_destroy_flags(r.mirror, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    if (r.mprod) { /* markers not yet written are the next owner's to write */
        rd_kafka_purge(r.mprod, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        for (int i = 0; i < 50 && rd_kafka_outq_len(r.mprod) > 0; i++) rd_kafka_poll(r.mprod, 10);
        rd_kafka_poll(r.mprod, 0); /* their reports free their tokens */
        rd_kafka_destroy(r.mprod);
    }
    if (r.reader) rd_kafka_destroy(r.reader);
    if (r.producer) rd_kafka_destroy(r.producer);
    for (size_t i = 0; i < r.nparts; i++)
        if (r.parts[i]) part_destroy(&r, r.parts[i]);
    free(r.parts);
    free(r.jobs);
    sw_run_plans_free(&r);
    sw_run_idle_free(&r);
    free(r.out_pos);
    sw_run_wake_close(&r);
    sw_tdec_destroy(r.tdec);
    sw_avro_dec_destroy(r.adec);
    sw_registry_destroy(r.reg);
    sw_buf_clear(&r.value);
    *next = r.mode_next;
    return rc;
}

int sw_run(const sw_run_opts_t *opts)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t member_id = ((uint64_t)getpid() << 40) ^ (uint64_t)ts.tv_sec * 1000000007u ^
                         (uint64_t)ts.tv_nsec;
    int as = -1;
    for (;;) {
        int next = -1;
        int rc = run_once(opts, member_id, as, &next);
        if (next < 0 || rc != 0 || !*opts->running) return rc;
        sw_log(opts->log, SW_LOG_INFO, "starting again as repartition=%s (the group's mode)",
               next == 1 ? "on" : "auto");
        as = next;
    }
}
