/*
 * Consuming (see sw_run_int.h): rounds over the partitions' own queues,
 * and the worker threads that decode and analyse.
 *
 * Each assigned partition has its own librdkafka queue (not forwarded to
 * the consumer's), so that one read takes a slice of every partition that
 * has data. A round, on the main thread:
 *  1. takes up to WORK_BATCH messages of each partition's queue;
 *  2. sorts out what must happen on the main thread, message by message in
 *     offset order: held partitions (origin snapshot, schema registry),
 *     registry lookups, state rebuilds. What is left of each partition is
 *     one contiguous range for the workers;
 *  3. runs a pass: the worker threads (and the main thread) take partitions
 *     one at a time, largest first, and decode and analyse each range in
 *     offset order, writing what they find into the partition's own work
 *     area (records, dead letters, copies to forward, counters). A worker
 *     never produces, commits, logs or touches shared state;
 *  4. applies the results on the main thread, which alone produces,
 *     commits and snapshots. An engine's record is borrowed until that
 *     engine sees the next event, so a worker stops its partition at a
 *     record; the partition goes on in the next pass of the same round,
 *     after the record was sent.
 * Between rounds nothing runs on the workers: rebalances, snapshots, idle
 * expiry and memory pressure see every engine at rest, as with one thread.
 */
#include "sw_run_int.h"
#include "sw_run_work.h"
#include "sw_run_mem.h"
#include "sw_run_out.h"
#include "sw_run_state.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>

#include "sw_cpus.h"

/* ---- decoding ----------------------------------------------------------- */

/* The plan of writer schema @p id in the round's table (filled before the
 * pass: plan_note). Lock-free: the table does not change during a pass. */
static sw_err_t plan_of(const plantab_t *pt, int32_t id, const sw_avro_plan_t **plan, char *err,
                        size_t errsz)
{
    uint32_t k;
    if (!sw_imap_get(&pt->idx, id, &k)) {
        snprintf(err, errsz, "schema id %ld: not looked up before the pass", (long)id);
        return SW_ERR_AVRO;
    }
    if (pt->plan[k]) {
        *plan = pt->plan[k];
        return SW_OK;
    }
    snprintf(err, errsz, "%s", pt->text.data + pt->why[k]);
    return pt->err[k];
}

/* Whether message @p v is Confluent Avro under the pass's input.format. */
static bool is_avro(const pass_t *ps, const unsigned char *v, size_t n)
{
    return ps->in_fmt == FMT_AVRO || (ps->in_fmt == FMT_AUTO && sw_avro_is_framed(v, n));
}

bool sw_run_decode(const pass_t *ps, sw_worker_t *w, const rd_kafka_message_t *m, sw_event_t *ev,
                   char *err, size_t errsz, sw_err_t *rc)
{
    const unsigned char *v = m->payload;
    size_t n = m->len;
    if (!v || n == 0) {
        snprintf(err, errsz, "empty message");
        *rc = SW_ERR_PARSE;
        return false;
    }
    if (!is_avro(ps, v, n)) {
        *rc = sw_tdec_json(w->tdec, (const char *)v, n, ev, err, errsz);
    } else if (!ps->reg_plans) {
        *rc = sw_avro_decode_event(w->adec, v, n, ps->schema_telemetry, ev, err, errsz);
        int32_t id = 0;
        char tmp[8];
        /* An id other than avro.schema.id.telemetry: say what resolves it. */
        if (*rc && sw_avro_schema_id(v, n, &id, tmp, sizeof(tmp)) == SW_OK &&
            id != ps->schema_telemetry) {
            size_t k = strlen(err);
            snprintf(err + k, errsz - k,
                     ": set schema.registry.url to look writer schemas up, or add %ld=PATH.avsc to "
                     "avro.schema.ids.telemetry",
                     (long)id);
        }
    } else {
        /* Writer schema by id, from the round's table: the main thread
         * looked every id of the round up before the pass (a registry
         * that cannot answer yet holds the partition instead), so no
         * worker waits for the registry or for a lock. */
        int32_t id = 0;
        const sw_avro_plan_t *plan = NULL;
        *rc = sw_avro_schema_id(v, n, &id, err, errsz);
        if (!*rc) *rc = plan_of(ps->plans, id, &plan, err, errsz);
        if (*rc == SW_ERR_NOT_FOUND || *rc == SW_ERR_IO) *rc = SW_ERR_AVRO;
        if (!*rc) *rc = sw_avro_decode_event_plan(w->adec, plan, v, n, ev, err, errsz);
    }
    return *rc == SW_OK;
}

/* ---- the round's plan table ------------------------------------------------ */

static void plans_put(plantab_t *pt, int32_t id, const sw_avro_plan_t *plan, sw_err_t err,
                      const char *why)
{
    if (pt->n == pt->cap) {
        pt->cap = pt->cap ? pt->cap * 2 : 8;
        pt->plan = sw_reallocarray(pt->plan, pt->cap, sizeof(*pt->plan));
        pt->err = sw_reallocarray(pt->err, pt->cap, sizeof(*pt->err));
        pt->why = sw_reallocarray(pt->why, pt->cap, sizeof(*pt->why));
    }
    size_t k = pt->n++;
    pt->plan[k] = plan;
    pt->err[k] = err;
    pt->why[k] = (uint32_t)pt->text.len;
    sw_buf_puts(&pt->text, why ? why : "");
    sw_buf_putc(&pt->text, '\0');
    sw_imap_put(&pt->idx, id, (uint32_t)k);
}

/* After a round: empty (kept allocated), then the registry may free the
 * plans that left its cache meanwhile. */
static void plans_reset(run_t *r)
{
    plantab_t *pt = &r->plans;
    if (pt->n) {
        sw_imap_clear(&pt->idx);
        pt->n = 0;
        pt->text.len = 0;
    }
    if (r->reg) sw_registry_reclaim(r->reg);
}

void sw_run_plans_free(run_t *r)
{
    plantab_t *pt = &r->plans;
    sw_imap_clear(&pt->idx);
    free(pt->plan);
    free(pt->err);
    free(pt->why);
    sw_buf_clear(&pt->text);
    memset(pt, 0, sizeof(*pt));
}

/* ---- the schema registry ------------------------------------------------ */

/* Publish the registry's counters (errors, up, partitions waiting: held
 * after a failure, not while an id's first fetch is under way). */
void sw_run_registry_metrics(run_t *r)
{
    if (!r->m || !r->reg || !sw_registry_remote(r->reg)) return;
    uint64_t errors = 0;
    bool up = false;
    sw_registry_stats(r->reg, &errors, &up);
    if (errors > r->reg_errors)
        sw_run_m_add(r, SW_M_SCHEMA_REGISTRY_ERRORS, errors - r->reg_errors);
    r->reg_errors = errors;
    sw_run_m_set(r, SW_M_SCHEMA_REGISTRY_UP, up ? 1 : 0);
    int64_t held = 0;
    for (size_t i = 0; i < r->nparts; i++)
        if (r->parts[i] && r->parts[i]->hold.reg && r->parts[i]->hold.reg_warned) held++;
    sw_run_m_set(r, SW_M_SCHEMA_REGISTRY_HELD, held);
}

/* The writer schema of Avro message @p m into the round's table (each id
 * once a round). Never waits for the registry: the fetcher thread asks it.
 * @returns true when the registry cannot give it now (not fetched yet, or
 * the registry is down: @p id and @p err say which), so that the message
 * must wait. */
static bool plan_unready(run_t *r, const rd_kafka_message_t *m, int32_t *id, bool *pending,
                         char *err, size_t errsz)
{
    *pending = false;
    const unsigned char *v = m->payload;
    if (!r->pass.reg_plans || !v || m->len == 0 || !is_avro(&r->pass, v, m->len)) return false;
    uint32_t k;
    const sw_avro_plan_t *plan = NULL;
    if (sw_avro_schema_id(v, m->len, id, err, errsz) != SW_OK) return false;
    if (sw_imap_get(&r->plans.idx, *id, &k)) return false; /* this round knows it */
    sw_err_t rc = sw_registry_lookup(r->reg, *id, &plan, err, errsz);
    if ((rc != SW_ERR_IO && rc != SW_ERR_PENDING) || !sw_registry_remote(r->reg)) {
        plans_put(&r->plans, *id, rc == SW_OK ? plan : NULL, rc, rc == SW_OK ? NULL : err);
        return false;
    }
    *pending = rc == SW_ERR_PENDING; /* the first fetch of an id: no news */
    return true;
}

/* Where auto.offset.reset points in @p topic [@p partition] now (-1: unknown). */
int64_t sw_run_reset_offset(run_t *r, const char *topic, int32_t partition)
{
    char reset[32] = "earliest";
    size_t n = sizeof(reset);
    rd_kafka_conf_get(rd_kafka_conf(r->consumer), "auto.offset.reset", reset, &n);
    int64_t lo, hi;
    if (rd_kafka_query_watermark_offsets(r->reader, topic, partition, &lo, &hi, 10000)) return -1;
    return strcmp(reset, "latest") == 0 || strcmp(reset, "end") == 0 ||
                   strcmp(reset, "largest") == 0
               ? hi
               : lo;
}

/* Pause (@p pause) or resume the held partition @p p: the origin hold
 * (sw_run_state.c), the registry hold (here). */
void sw_run_origin_pause(run_t *r, part_t *p, bool pause)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, p->topic, p->partition);
    rd_kafka_resp_err_t e = pause ? rd_kafka_pause_partitions(r->consumer, l)
                                  : rd_kafka_resume_partitions(r->consumer, l);
    if (e)
        sw_log(r->log, SW_LOG_WARN, "%s [%d]: cannot %s the partition: %s", p->topic,
               (int)p->partition, pause ? "pause" : "resume", rd_kafka_err2str(e));
    rd_kafka_topic_partition_list_destroy(l);
}

/* plan_unready() for a message read from a partition's queue: a schema
 * the registry cannot give now holds (pauses) the partition at this
 * offset, to be read again once the fetcher has an answer; good data is
 * never dead-lettered for an outage. @returns true when the message waits. */
bool sw_run_registry_wait(run_t *r, part_t *p, const rd_kafka_message_t *m)
{
    int32_t id = 0;
    char err[512];
    bool pending;
    if (!plan_unready(r, m, &id, &pending, err, sizeof(err))) return false;
    /* The first fetch of an id is no news; a failure is. */
    sw_hold_registry(&p->hold, id, m->offset, !pending);
    sw_run_origin_pause(r, p, true);
    if (p->hold.reg_warned)
        sw_log_limited(r->log, &r->lim_reg, SW_LOG_WARN,
                       "%s [%d] offset %lld: waiting for writer schema id %ld: %s; the partition "
                       "is paused until the registry answers",
                       p->topic, (int)p->partition, (long long)m->offset, (long)id, err);
    sw_run_registry_metrics(r);
    return true;
}

/* plan_unready() for a message repartition=auto already holds (sw_run_local.c):
 * it stays where it is and the partition's processing stops before it
 * until a later round finds the schema. @returns true when it waits. */
bool sw_run_registry_unready(run_t *r, part_t *p, const rd_kafka_message_t *m)
{
    int32_t id = 0;
    char err[512];
    bool pending;
    if (!plan_unready(r, m, &id, &pending, err, sizeof(err))) return false;
    if (!pending)
        sw_log_limited(r->log, &r->lim_reg, SW_LOG_WARN,
                       "%s [%d]: waiting for writer schema id %ld: %s; the partition's analysis "
                       "waits until the registry answers",
                       p->topic, (int)p->partition, (long)id, err);
    return true;
}

/* Held partitions: once the fetcher has an answer for their id (a plan, or
 * a final "unknown id"), consume again from the held offset. Asks nothing
 * itself (a lookup queues the id again when its answer was a failure). */
void sw_run_registry_tick(run_t *r)
{
    if (!r->pass.reg_plans || !sw_registry_remote(r->reg)) return;
    bool any = false;
    for (size_t i = 0; i < r->nparts && !any; i++) any = r->parts[i] && r->parts[i]->hold.reg;
    if (!any) return; /* publish_metrics() keeps the gauges current */
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p || !p->hold.reg) continue;
        const sw_avro_plan_t *plan = NULL;
        char err[512];
        /* An id that waits alone (a too slow answer) holds only its own
         * partition: the others are fetched meanwhile. */
        sw_err_t rc = sw_registry_lookup(r->reg, p->hold.reg_id, &plan, err, sizeof(err));
        if (rc == SW_ERR_IO || rc == SW_ERR_PENDING) {
            if (!p->hold.reg_warned && rc == SW_ERR_IO) {
                /* The first fetch failed: now it waits for the registry. */
                p->hold.reg_warned = true;
                sw_log_limited(r->log, &r->lim_reg, SW_LOG_WARN,
                               "%s [%d] offset %lld: waiting for writer schema id %ld: %s; the "
                               "partition is paused until the registry answers",
                               p->topic, (int)p->partition, (long long)p->hold.from,
                               (long)p->hold.reg_id, err);
            }
            continue;
        }
        int64_t from;
        if (sw_hold_registry_release(&p->hold, &from)) {
            rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
            rd_kafka_topic_partition_list_add(l, p->topic, p->partition)->offset = from;
            rd_kafka_error_t *e = rd_kafka_seek_partitions(r->consumer, l, 5000);
            if (e) rd_kafka_error_destroy(e);
            rd_kafka_topic_partition_list_destroy(l);
            sw_run_origin_pause(r, p, false);
        }
        sw_log(r->log, p->hold.reg_warned ? SW_LOG_INFO : SW_LOG_DEBUG,
               "%s [%d]: schema registry answers %sfor writer schema id %ld; consuming from "
               "offset %lld",
               p->topic, (int)p->partition, p->hold.reg_warned ? "again " : "",
               (long)p->hold.reg_id, (long long)from);
    }
    sw_run_registry_metrics(r);
}

void sw_run_rebuild_finish(run_t *r, part_t *p)
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

/* ---- what the main thread applies ----------------------------------------- */

/* A message whose key is not its job_id (no key, or another key): its
 * job's events may sit in several partitions and be analysed by several
 * engines, each with part of the ranks. Counted and said (rate-limited),
 * with what was seen, so that the producers can be fixed. A null job_id's
 * key is the empty key. */
static bool miskeyed(const rd_kafka_message_t *m, const sw_event_t *ev)
{
    size_t jl = ev->has_job_id ? ev->job_id.len : 0;
    return !(m->key_len == jl && (!jl || memcmp(m->key, ev->job_id.ptr, jl) == 0));
}

static void note_miskeyed(run_t *r, part_t *p, const rd_kafka_message_t *m, bool has_job,
                          const char *job, size_t job_len)
{
    r->st.miskeyed++;
    if (p->m_miskeyed) sw_metrics_series_add(p->m_miskeyed, 1);
    if (p->forward || p->local) return; /* repartition=on, auto: forwarded keyed by its job_id */
    char key[80];
    if (!m->key) {
        snprintf(key, sizeof(key), "no key");
    } else {
        size_t n = 0;
        const unsigned char *k = m->key;
        key[n++] = '"';
        for (size_t i = 0; i < m->key_len && n < 64; i++)
            key[n++] = k[i] >= 32 && k[i] < 127 ? (char)k[i] : '?';
        if (m->key_len > 62) key[n++] = '.', key[n++] = '.';
        key[n++] = '"';
        key[n] = '\0';
    }
    sw_log_limited(r->log, &r->lim_key, SW_LOG_WARN,
                   "%s [%d] offset %lld: message key %s is not its job_id \"%.*s\": a job's events "
                   "must all be keyed by its job_id, or the job is split over engines and its "
                   "answers are wrong: key the producers by job_id or set repartition=on "
                   "(README, Keying; %llu such messages so far)",
                   p->topic, (int)p->partition, (long long)m->offset, key,
                   has_job ? (int)(job_len > 200 ? 200 : job_len) : 4, has_job ? job : "null",
                   (unsigned long long)r->st.miskeyed);
}

bool sw_run_is_peer_marker(const rd_kafka_message_t *m)
{
    rd_kafka_headers_t *h;
    const void *v;
    size_t n;
    return m->len == 0 && !rd_kafka_message_headers(m, &h) &&
           !rd_kafka_header_get_last(h, "stormwatch.marker", &v, &n);
}

/* A member in another mode than repartition=auto read an auto member's
 * marker (headers only) from the repartition topic: the group is mixed
 * (a rolling update between modes, or one member configured apart). The
 * marker is skipped, counted, said once, and the member is not ready
 * while such markers keep coming (sw_run_peer_tick). */
static void note_peer_marker(run_t *r, part_t *p, const rd_kafka_message_t *m)
{
    r->peer_markers++;
    r->peer_marker_ms = sw_clock_ms();
    sw_run_m_add(r, SW_M_PEER_MARKERS, 1);
    sw_run_m_set(r, SW_M_GROUP_MIXED, 1);
    if (r->peer_markers == 1)
        sw_log(r->log, SW_LOG_WARN,
               "a member of this group runs repartition=auto: its markers in %s [%d] (first at "
               "offset %lld) are skipped by this member (repartition=%s), not dead-lettered; "
               "while both modes run, a job may be analysed in two places: run every member of "
               "group %s in one mode (docs/operating.md, Upgrades); /readyz says \"mixed "
               "group\" until no marker came for a minute",
               p->topic, (int)p->partition, (long long)m->offset, r->rep_topic ? "on" : "off",
               r->set->kafka.group_id);
}

void sw_run_peer_tick(run_t *r, int64_t now)
{
    if (r->peer_marker_ms && now - r->peer_marker_ms > 60000) {
        r->peer_marker_ms = 0;
        sw_run_m_set(r, SW_M_GROUP_MIXED, 0);
        sw_log(r->log, SW_LOG_INFO,
               "no marker of a repartition=auto member for a minute (%llu skipped in all): the "
               "group is no longer mixed",
               (unsigned long long)r->peer_markers);
    }
}

/* repartition=on: the input message @p m goes to repartition.topic
 * unchanged — value, key replaced by its job_id @p key, the producer's
 * headers followed by where it came from — in the partition Kafka's
 * murmur2 gives its job_id, so that every event of a job, whatever its
 * producer keyed, reaches one partition and one engine. Pending (not
 * committed past) until the broker has it; never sent twice across a
 * restore (the copies past the snapshot are found by their source
 * headers, like records). */
static void forward_msg(run_t *r, part_t *p, const rd_kafka_message_t *m, const char *key,
                        size_t keylen, sw_fwd_reason_t reason)
{
    if (m->len + keylen > r->max_value) {
        char why[160];
        snprintf(why, sizeof(why),
                 "cannot forward to %s: %zu bytes of value and key exceed what the producer may "
                 "send (message.max.bytes)",
                 r->rep_topic, m->len + keylen);
        sw_run_send_dlq(r, p, m, DLQ_LIMIT, why);
        return;
    }
    if (sw_run_suppressed(r, p, 0, m->offset, SUPPRESS_FWD)) return;
    rd_kafka_headers_t *h = sw_run_input_headers(m);
    sw_run_hdr_add_source(h, r, p, 0, m->offset);
    /* repartition=auto: the group's partitioner, where its engine analyses
     * the job's local messages; repartition=on: murmur2, as always. */
    int32_t q = sw_run_owner_partition(p->local ? r->part : SW_PARTITIONER_MURMUR2, key, keylen,
                                       r->rep_parts);
    r->st.forwarded++;
    sw_run_m_add(r, (sw_metric_t)(SW_M_FORWARDED_UNKEYED + (int)reason), 1);
    sw_run_produce_record(r, p, 0, m->offset, r->rep_topic, q, key, keylen, m->payload, m->len, h);
}

/* ---- a partition's work area ------------------------------------------------ */

static void text_put(pwork_t *pw, uint32_t *at, uint32_t *len, const char *s, size_t n)
{
    *at = (uint32_t)pw->text.len;
    *len = (uint32_t)n;
    sw_buf_put(&pw->text, s, n);
    sw_buf_putc(&pw->text, '\0');
}

static void out_push(pwork_t *pw, const wout_t *o)
{
    SW_GROW(pw->out, pw->nout, pw->capout, 16);
    pw->out[pw->nout++] = *o;
}

/* Destroy the round's messages and empty the work area (kept allocated). */
static void work_reset(pwork_t *pw)
{
    for (size_t i = 0; i < pw->n; i++)
        if (pw->m[i]) rd_kafka_message_destroy(pw->m[i]);
    pw->n = pw->w0 = pw->w1 = pw->pos = 0;
    pw->nout = pw->applied = 0;
    pw->text.len = 0;
    pw->msgs = pw->bytes = 0;
    pw->max_ts = -1;
    pw->last = -1;
    pw->rlast = -1;
    pw->room = 0;
}

void sw_run_work_free(part_t *p)
{
    pwork_t *pw = &p->w;
    work_reset(pw);
    free(pw->m);
    free(pw->src);
    free(pw->out);
    sw_buf_clear(&pw->text);
    memset(pw, 0, sizeof(*pw));
}

static void work_push(pwork_t *pw, rd_kafka_message_t *m)
{
    SW_GROW(pw->m, pw->n, pw->cap, WORK_BATCH);
    pw->m[pw->n++] = m;
}

/* repartition=auto: message @p m of log @p src next in the round's order. */
void sw_run_work_push_src(pwork_t *pw, rd_kafka_message_t *m, int src)
{
    SW_GROW(pw->m, pw->n, pw->cap, WORK_BATCH);
    if (pw->srccap < pw->cap) {
        pw->src = sw_reallocarray(pw->src, pw->cap, sizeof(*pw->src));
        pw->srccap = pw->cap;
    }
    pw->src[pw->n] = (uint8_t)src;
    pw->m[pw->n++] = m;
}

/* repartition=auto: whether input message @p m (event @p ev) is analysed
 * where it is: keyed by its job_id (a null one: no key) and on the
 * partition the group's partitioner gives its job. The others are
 * forwarded. */
bool sw_run_local_keeps(const pass_t *ps, const part_t *p, const rd_kafka_message_t *m,
                        const sw_event_t *ev)
{
    size_t jl = ev->has_job_id ? ev->job_id.len : 0;
    if (m->key_len != jl || (jl && memcmp(m->key, ev->job_id.ptr, jl) != 0)) return false;
    return sw_run_owner_partition(ps->part, ev->job_id.ptr, jl, ps->rep_parts) == p->partition;
}

/* ---- the workers ----------------------------------------------------------- */

/* One partition's range, in offset order, up to its end or its next
 * record. Touches only the partition's engine and work area. The range's
 * counters stay in locals until it stops: part_t's are written back once,
 * not per message (each partition is its own allocation, so the next one
 * in the heap, read by another worker, may share their cache line). */
static void work_partition(const pass_t *ps, sw_worker_t *w, part_t *p)
{
    pwork_t *pw = &p->w;
    char err[512];
    size_t pos = pw->pos, end = pw->w1;
    uint64_t msgs = 0, bytes = 0;
    int64_t max_ts = pw->max_ts, last = pw->last, rlast = pw->rlast;
    uint64_t jk_in = 0, jk_fwd = 0, jk_fit[SW_PARTITIONER__CNT] = {0};
    /* One clock read per message: its end is the next one's start. */
    uint64_t t0 = ps->m ? sw_metrics_now_ns() : 0;
    while (pos < end) {
        size_t i = pos++;
        rd_kafka_message_t *m = pw->m[i];
        if (m->err) continue; /* said by the main thread when the round took it */
        msgs++;
        bytes += m->len;
        int64_t ts = rd_kafka_message_timestamp(m, NULL);
        if (ts > max_ts) max_ts = ts;
        /* repartition=auto: input p (0) and repartition p (1) in one order */
        int src = p->local ? pw->src[i] : 0;
        int64_t last0 = last, rlast0 = rlast; /* a room request takes the message back */
        if (src) rlast = m->offset;
        else last = m->offset;
        sw_event_t ev;
        sw_err_t rc;
        wout_t o;
        memset(&o, 0, sizeof(o));
        o.idx = (uint32_t)i;
        o.kind = WK_NONE;
        if (!p->local && sw_run_is_peer_marker(m)) {
            o.kind = WK_PEER_MARKER; /* a repartition=auto member's: not an event */
        } else if (!sw_run_decode(ps, w, m, &ev, err, sizeof(err), &rc)) {
            o.kind = rc == SW_ERR_INVALID_ARG ? WK_INVALID : WK_DECODE;
            text_put(pw, &o.err, &o.err_len, err, strlen(err));
        } else {
            o.miskeyed = miskeyed(m, &ev);
            /* repartition=auto: what is not on its job's partition takes the
             * hop; a copy (src 1) is on it by construction. */
            bool fwd = p->forward || (p->local && !src && !sw_run_local_keeps(ps, p, m, &ev));
            if ((o.miskeyed || fwd) && ev.has_job_id) {
                o.has_job = true;
                text_put(pw, &o.job, &o.job_len, ev.job_id.ptr, ev.job_id.len);
            }
            const sw_record_t *rec = NULL;
            if (p->local && !src && !o.miskeyed && ev.has_job_id) jk_in++;
            if (fwd) {
                o.kind = WK_FORWARD;
                if (p->forward) {
                    o.reason = FWD_REPARTITION_ON;
                } else if (!m->key) {
                    o.reason = FWD_UNKEYED;
                } else if (o.miskeyed || !ev.has_job_id) {
                    o.reason = FWD_OTHER_KEY;
                } else {
                    /* Keyed by its job_id: which candidates place it here. */
                    unsigned bits = sw_partition_fits(m->key, m->key_len, p->partition,
                                                      ps->rep_parts);
                    o.reason = bits & ~(1u << ps->part) ? FWD_OTHER_PARTITIONER : FWD_MISPLACED;
                    jk_fwd++;
                    for (int c = 0; c < SW_PARTITIONER__CNT; c++) jk_fit[c] += (bits >> c) & 1u;
                }
            } else if ((rc = sw_detect_feed_src(p->det, &ev, ps->now_ms, src, m->offset, &rec, err,
                                                sizeof(err))) != SW_OK) {
                if (rc == SW_ERR_LIMIT && (pw->room = sw_detect_room_wanted(p->det)) > 0) {
                    /* The memory pool is full and this engine has nothing
                     * without evidence to free: stop before the message
                     * (nothing changed) until the main thread made room in
                     * the other engines (sw_run_mem.c); fed again then. */
                    pos = i;
                    msgs--;
                    bytes -= m->len;
                    last = last0;
                    rlast = rlast0;
                    break;
                }
                o.kind = rc == SW_ERR_CLOCK ? WK_CLOCK : WK_LIMIT;
                text_put(pw, &o.err, &o.err_len, err, strlen(err));
            } else if (rec) {
                o.kind = WK_RECORD;
                o.rec = rec;
            }
            const char *warning = fwd ? NULL : sw_detect_warning(p->det);
            if (warning) sw_log(ps->log, SW_LOG_WARN, "%s", warning); /* once per job */
            /* SPEC 8's records of the same event follow SPEC 6's, each its
             * own output of this message (all borrowed until the engine
             * sees more, which it does not before they are sent). */
            const sw_record_t *x = o.kind == WK_LIMIT || fwd ? NULL : sw_detect_next(p->det);
            if (x && o.kind != WK_RECORD) {
                o.kind = WK_RECORD;
                o.rec = x;
                x = sw_detect_next(p->det);
            }
            for (; x; x = sw_detect_next(p->det)) {
                out_push(pw, &o);
                o.miskeyed = false;
                o.rec = x;
            }
        }
        if (o.kind != WK_NONE || o.miskeyed) {
            out_push(pw, &o);
        } else {
            rd_kafka_message_destroy(m); /* nothing refers to it any more */
            pw->m[i] = NULL;
        }
        if (ps->m) {
            uint64_t t1 = sw_metrics_now_ns();
            sw_metrics_proc_add(&w->proc, t1 - t0); /* no atomics shared by the workers */
            t0 = t1;
        }
        if (o.kind == WK_RECORD) break; /* sent before its engine sees more */
    }
    pw->pos = pos;
    pw->msgs += msgs;
    pw->bytes += bytes;
    pw->max_ts = max_ts;
    pw->last = last;
    pw->rlast = rlast;
    pw->jk_in += jk_in;
    pw->jk_fwd += jk_fwd;
    for (int c = 0; c < SW_PARTITIONER__CNT; c++) pw->jk_fit[c] += jk_fit[c];
}

/* sw_sched_work_fn: one partition of a pass, on worker @p wi. */
static void work_job(const void *pass, int wi, void *job)
{
    const pass_t *ps = pass;
    work_partition(ps, &ps->workers[wi], job);
}

/* The CPUs this process may run on (its affinity mask). */
static int cpus_allowed(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int sw_run_workers_start(run_t *r, int64_t threads, char *why, size_t why_size)
{
    int n;
    if (threads > 0) {
        n = (int)threads;
        snprintf(why, why_size, "as set");
    } else {
        /* worker.threads=0: the cgroup's CPU quota rounded up, bounded by
         * the affinity mask (a container limited to 1.5 CPUs on a 64-CPU
         * node gets 2 threads, not 64 that the quota throttles). */
        char src[400];
        n = sw_cpus_default_threads("/sys/fs/cgroup", "/proc/self/cgroup", cpus_allowed(), src,
                                    sizeof(src));
        if (n > 64) n = 64;
        snprintf(why, why_size, "%s%s", src, n == 64 ? ", at most 64" : "");
    }
    char err[200];
    r->sched = sw_sched_new(n, work_job, &r->nworkers, err, sizeof(err));
    if (r->nworkers < n) sw_log(r->log, SW_LOG_WARN, "%s; going on with %d", err, r->nworkers);
    r->workers = sw_calloc((size_t)r->nworkers, sizeof(*r->workers));
    r->workers[0].tdec = r->tdec; /* the main thread: the run's own decoders */
    r->workers[0].adec = r->adec;
    for (int i = 1; i < r->nworkers; i++) {
        r->workers[i].tdec = sw_tdec_new();
        r->workers[i].adec = sw_avro_dec_new();
    }
    r->pass.workers = r->workers;
    return r->nworkers;
}

void sw_run_workers_stop(run_t *r)
{
    if (!r->sched) return;
    sw_sched_destroy(r->sched);
    r->sched = NULL;
    for (int i = 1; i < r->nworkers; i++) {
        sw_tdec_destroy(r->workers[i].tdec);
        sw_avro_dec_destroy(r->workers[i].adec);
    }
    free(r->workers);
    r->workers = NULL;
    r->pass.workers = NULL;
    r->nworkers = 0;
}

/* The workers' processing times of a round into the histogram (the
 * workers are at rest: the round waited for them). */
static void publish_proc(run_t *r)
{
    if (!r->m) return;
    for (int i = 0; i < r->nworkers; i++) sw_metrics_observe_proc(r->m, &r->workers[i].proc);
}

/* ---- the main thread's parts of a round -------------------------------------- */

/* What the workers found in @p p since the last apply, in offset order. */
static void apply(run_t *r, part_t *p)
{
    pwork_t *pw = &p->w;
    r->st.messages += pw->msgs;
    r->st.bytes += pw->bytes;
    if (p->m_events && pw->msgs) sw_metrics_series_add(p->m_events, pw->msgs);
    if (pw->bytes) sw_run_m_add(r, SW_M_INPUT_BYTES, pw->bytes);
    if (r->m && pw->max_ts > r->last_event_ms) {
        /* The newest message's timestamp (CreateTime or LogAppendTime). */
        r->last_event_ms = pw->max_ts;
        sw_metrics_set_double(r->m, SW_M_LAST_EVENT_TIMESTAMP, (double)pw->max_ts / 1000.0);
    }
    if (pw->last >= 0) p->next = pw->last + 1;
    if (pw->rlast >= 0 && pw->rlast + 1 > p->rnext) p->rnext = pw->rlast + 1;
    pw->msgs = pw->bytes = 0;
    r->jk_in += pw->jk_in;
    r->jk_fwd += pw->jk_fwd;
    for (int c = 0; c < SW_PARTITIONER__CNT; c++) r->jk_fit[c] += pw->jk_fit[c];
    pw->jk_in = pw->jk_fwd = 0;
    memset(pw->jk_fit, 0, sizeof(pw->jk_fit));
    for (; pw->applied < pw->nout && !r->failed; pw->applied++) {
        const wout_t *o = &pw->out[pw->applied];
        const rd_kafka_message_t *m = pw->m[o->idx];
        const char *text = pw->text.data;
        if (o->miskeyed) note_miskeyed(r, p, m, o->has_job, text + o->job, o->job_len);
        switch ((wkind_t)o->kind) {
        case WK_INVALID:
            r->st.invalid++;
            sw_run_m_add(r, SW_M_INVALID_EVENTS, 1);
            sw_run_send_dlq(r, p, m, DLQ_INVALID, text + o->err);
            break;
        case WK_DECODE:
            r->st.decode_errors++;
            sw_run_m_add(r, SW_M_DECODE_ERRORS, 1);
            sw_run_send_dlq(r, p, m, DLQ_DECODE, text + o->err);
            break;
        case WK_LIMIT:
            r->st.limited++;
            sw_run_m_add(r, SW_M_LIMIT_REJECTS, 1);
            sw_run_send_dlq(r, p, m, DLQ_LIMIT, text + o->err);
            break;
        case WK_CLOCK:
            r->st.clock_refused++;
            sw_run_send_dlq(r, p, m, DLQ_CLOCK, text + o->err);
            break;
        case WK_FORWARD:
            forward_msg(r, p, m, o->has_job ? text + o->job : "", o->has_job ? o->job_len : 0,
                        (sw_fwd_reason_t)o->reason);
            break;
        case WK_RECORD:
            if (r->m && o->rec->action == SW_ACTION_TRIGGER) {
                /* Alert latency: the triggering message's timestamp to now. */
                int64_t ts = rd_kafka_message_timestamp(m, NULL);
                if (ts > 0) sw_metrics_observe_alert_latency(r->m, sw_wall_ms() - ts);
            }
            sw_run_send_record(r, p, p->local ? pw->src[o->idx] : 0, m->offset, o->rec);
            break;
        case WK_PEER_MARKER: note_peer_marker(r, p, m); break;
        case WK_NONE: break;
        }
    }
}

/* An error the consumer delivered as a message (end of partition: none). */
void sw_run_note_consumer_error(run_t *r, const rd_kafka_message_t *m)
{
    if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
        sw_log_limited(r->log, &r->lim_kafka, SW_LOG_WARN, "consumer: %s",
                       rd_kafka_message_errstr(m));
}

/* Step 2 of a round for @p p: its messages in offset order, up to the range
 * the workers take. @returns whether there is such a range. */
static bool sort_out(run_t *r, part_t *p)
{
    pwork_t *pw = &p->w;
    bool open = false;
    char err[512];
    for (size_t i = 0; i < pw->n; i++) {
        const rd_kafka_message_t *m = pw->m[i];
        if (m->err) {
            sw_run_note_consumer_error(r, m);
            continue; /* inside the range, the workers pass over it */
        }
        if (sw_hold_held(&p->hold)) { /* paused: read again from here once released */
            sw_hold_note(&p->hold, m->offset);
            continue;
        }
        if (sw_run_registry_wait(r, p, m)) continue;
        if (p->mode == PM_REBUILD) {
            if (p->next < 0 && m->offset > p->rebuild_y)
                sw_log(r->log, SW_LOG_WARN,
                       "%s [%d]: input from offset %lld to %lld is gone (retention); windows are "
                       "rebuilt from what is left",
                       p->topic, (int)p->partition, (long long)p->rebuild_y,
                       (long long)m->offset - 1);
            if (m->offset < p->rebuild_x) {
                sw_event_t ev;
                sw_err_t rc;
                p->next = m->offset + 1;
                if (sw_run_decode(&r->pass, &r->workers[0], m, &ev, err, sizeof(err), &rc) &&
                    sw_detect_rebuild(p->det, &ev, m->offset))
                    p->rebuilt++;
                if (p->next == p->rebuild_x) sw_run_rebuild_finish(r, p);
                continue;
            }
            sw_run_rebuild_finish(r, p);
        }
        /* Analysed normally: the rebuild, if any, is over, and a hold only
         * ever comes after (everything after it is held), so the range is
         * contiguous. */
        if (!open) pw->w0 = i;
        open = true;
        pw->w1 = i + 1;
    }
    pw->pos = pw->w0;
    return open;
}

/* A message the consumer's own queue gave (only before a partition's queue
 * was split off; rebalances and errors come that way too): it joins its
 * partition's next round. */
void sw_run_take_stray(run_t *r, rd_kafka_message_t *m)
{
    if (m->err) {
        sw_run_note_consumer_error(r, m);
        rd_kafka_message_destroy(m);
        return;
    }
    part_t *p = sw_run_part_find(r, rd_kafka_topic_name(m->rkt), m->partition);
    if (!p) { /* not ours (fetched before a revocation finished) */
        rd_kafka_message_destroy(m);
        return;
    }
    work_push(&p->w, m);
}

/* The round's hooks (sw_sched.h), on the main thread. */
static size_t job_left(const void *job)
{
    const part_t *p = job;
    return p->w.w1 - p->w.pos;
}

static void pass_begin(void *ctx, void *const *jobs, size_t njobs)
{
    run_t *r = ctx;
    sw_run_mem_serve(r, jobs, njobs); /* room a range stopped for, from every engine */
    r->pass.now_ms = sw_clock_ms();   /* the pass clock, for idleness */
}

static void job_apply(void *ctx, void *job)
{
    apply(ctx, job);
}

static bool round_stop(void *ctx)
{
    const run_t *r = ctx;
    return r->failed;
}

bool sw_run_round(run_t *r)
{
    bool more = false;
    r->njobs = 0;
    if (r->capjobs < r->nparts) {
        r->jobs = sw_reallocarray(r->jobs, r->nparts, sizeof(*r->jobs));
        r->capjobs = r->nparts;
    }
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p) continue;
        pwork_t *pw = &p->w;
        if (p->queue && (!p->local || r->local_mode->may_read(p))) {
            SW_GROW(pw->m, pw->n + WORK_BATCH - 1, pw->cap, WORK_BATCH);
            ssize_t got = rd_kafka_consume_batch_queue(p->queue, 0, pw->m + pw->n, WORK_BATCH);
            if (got > 0) pw->n += (size_t)got;
            if (got == WORK_BATCH) more = true;
        }
        if (p->local ? r->local_mode->sort_out(r, p, &more) : pw->n && sort_out(r, p))
            r->jobs[r->njobs++] = p;
    }
    sw_sched_hooks_t h = {job_left, pass_begin, job_apply, round_stop, r};
    sw_sched_round(r->sched, &r->pass, r->jobs, r->njobs, &h);
    r->njobs = 0;
    publish_proc(r);
    for (size_t i = 0; i < r->nparts; i++)
        if (r->parts[i]) work_reset(&r->parts[i]->w);
    plans_reset(r); /* no worker holds a plan now */
    return more;
}

/* ---- partition queues and wake-ups ------------------------------------------ */

/* Called for each partition of an assignment before it is assigned: its
 * messages stay in its own queue (read by rounds), and the queue says when
 * it stops being empty. */
void sw_run_part_queue(run_t *r, part_t *p)
{
    p->queue = rd_kafka_queue_get_partition(r->consumer, p->topic, p->partition);
    if (!p->queue) return; /* stays forwarded to the consumer's queue: sw_run_take_stray */
    rd_kafka_queue_forward(p->queue, NULL);
    rd_kafka_queue_io_event_enable(p->queue, r->wake[1], "p", 1);
}

void sw_run_part_queue_release(part_t *p)
{
    if (!p->queue) return;
    rd_kafka_queue_io_event_enable(p->queue, -1, NULL, 0);
    rd_kafka_queue_destroy(p->queue);
    p->queue = NULL;
}

int sw_run_wake_open(run_t *r)
{
    r->wake[0] = r->wake[1] = -1;
    if (pipe2(r->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        sw_log(r->log, SW_LOG_ERROR, "cannot create the wake-up pipe: %s", strerror(errno));
        return -1;
    }
    return 0;
}

void sw_run_wake_close(run_t *r)
{
    for (int i = 0; i < 2; i++)
        if (r->wake[i] >= 0) close(r->wake[i]);
    r->wake[0] = r->wake[1] = -1;
}

void sw_run_wake_fetched(void *opaque)
{
    run_t *r = opaque;
    ssize_t n = write(r->wake[1], "r", 1); /* full pipe: the loop wakes anyway */
    (void)n;
}

/* Sleep until a queue has something (or @p ms pass), then empty the pipe. */
void sw_run_wake_wait(run_t *r, int ms)
{
    if (ms > 0) {
        struct pollfd pfd = {.fd = r->wake[0], .events = POLLIN};
        (void)poll(&pfd, 1, ms); /* a signal ends it early: the loop looks at running */
    }
    char buf[256];
    while (read(r->wake[0], buf, sizeof(buf)) > 0) {
    }
}
