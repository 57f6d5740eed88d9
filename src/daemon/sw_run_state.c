/* State snapshots and restore of the daemon (see sw_run.c, sw_run_int.h). */
#include "sw_run_int.h"
#include "sw_run_state.h"
#include "sw_run_local.h"
#include "sw_run_mem.h"
#include "sw_run_out.h"
#include "sw_run_work.h"

/* Where the next owner scans the output and dead-letter topics for records
 * of inputs at or after the snapshot: offsets that none of them can
 * precede. Known from the end offsets at start and the delivery reports
 * since, so a snapshot asks the brokers nothing (a position still unknown
 * is asked for once). @returns the positions (caller frees), or NULL when
 * a broker could not say. */
static sw_snappos_t *output_positions(run_t *r, size_t *npos)
{
    int nt = r->rep_topic ? 3 : 2;
    *npos = (size_t)(r->out_parts + r->dlq_parts + (r->rep_topic ? r->rep_parts : 0));
    sw_snappos_t *pos = sw_calloc(*npos ? *npos : 1, sizeof(*pos));
    for (int t = 0, k = 0; t < nt; t++) {
        int n;
        const char *topic = sw_run_pos_topic(r, t, &n);
        for (int q = 0; q < n; q++, k++) {
            int64_t *at = &r->out_pos[k];
            int64_t lo, hi;
            if (*at < 0) {
                if (rd_kafka_query_watermark_offsets(r->producer, topic, q, &lo, &hi, 5000)) {
                    free(pos);
                    return NULL;
                }
                *at = hi;
            }
            pos[k] = (sw_snappos_t){t, q, *at};
        }
    }
    return pos;
}

/* Whether a suppression key (offset * 8 + action) still matters for a
 * snapshot as of offset @p x (see snapshot_start). */
static bool carry_suppressed(int64_t key, int64_t x, int64_t y)
{
    /* A summary names its job's last input, which is at or after y (the
     * oldest input a retained sample came from) while the job is alive. */
    return key / 8 >= x || (key % 8 == SW_ACTION_SUMMARY && key / 8 >= y);
}

/* The keys of @p sup a snapshot as of (@p x, @p y) carries (caller frees). */
static int64_t *carried(const sw_imap_t *sup, int64_t x, int64_t y, size_t *n)
{
    int64_t *keys = sw_calloc(sup->count + 1, sizeof(*keys));
    *n = 0;
    for (size_t k = 0; k < sup->cap; k++)
        if (sup->vals[k] != UINT32_MAX && carry_suppressed(sup->keys[k], x, y))
            keys[(*n)++] = sup->keys[k];
    return keys;
}

/* Start writing a snapshot of @p p as of its next offset. */
void sw_run_snapshot_start(run_t *r, part_t *p)
{
    /* repartition=auto: source 1 is repartition p; an engine that went on
     * from auto's under on (p->foreign): source 1 is input p. */
    bool two = p->local || p->foreign;
    int64_t x = p->next, y, xr = p->foreign ? p->fx : p->rnext, yr = -1;
    if (!sw_detect_min_offset_src(p->det, 0, &y) || y > x) y = x;
    if (two && (!sw_detect_min_offset_src(p->det, 1, &yr) || yr > xr)) yr = xr;
    sw_snapenv_t env;
    memset(&env, 0, sizeof(env));
    env.x = x;
    env.y = y;
    env.two = two; /* the other source's side too */
    env.xr = xr;
    env.yr = yr;
    env.pos = output_positions(r, &env.npos);
    if (!env.pos) {
        sw_log_limited(r->log, &r->lim_snap, SW_LOG_WARN,
                       "%s [%d]: snapshot postponed: the output topics' end offsets are unknown",
                       p->topic, (int)p->partition);
        return;
    }
    /* Records a previous owner already sent that this one has not made
     * again yet: they lie before this snapshot's positions, so the next
     * owner must learn them from here. Those of inputs at or after x, and
     * summaries of inputs at or after y: a job's idle summary names its last input
     * but is made later, when the job has been idle for job.idle.ms, so a
     * job alive in this snapshot may be summarised again by the next
     * owner although its summary is on the output already. */
    env.sup = carried(&p->suppress, x, y, &env.nsup);
    if (two) env.rsup = carried(&p->rsuppress, xr, yr, &env.nrsup);
    /* In the layout the previous release reads, and an extension beside
     * it (sw_detect_snapshot_compat): a rollback's older binary restores
     * it and suppresses what was sent, whenever it takes the partition
     * over (docs/operating.md, Rollback). */
    sw_buf_t snap, ext, zb;
    sw_buf_init(&snap);
    sw_buf_init(&ext);
    sw_buf_init(&zb);
    sw_detect_snapshot_compat(p->det, (int64_t[SW_DETECT_SOURCES]){x, two ? xr : 0}, &snap, &ext);
    env.engine = (sw_str_t){snap.data, snap.len};
    env.ext = (sw_str_t){ext.data, ext.len};
    bool packed = sw_snapenv_pack(&env, &zb);
    sw_buf_clear(&snap);
    sw_buf_clear(&ext);
    free(env.pos);
    free(env.sup);
    free(env.rsup);
    if (!packed) {
        sw_log(r->log, SW_LOG_ERROR, "%s [%d]: cannot compress the snapshot", p->topic,
               (int)p->partition);
        sw_buf_clear(&zb);
        return;
    }
    const unsigned char *z = (const unsigned char *)zb.data;
    size_t zlen = zb.len;
    snapfl_t *s = &p->snap;
    memset(s, 0, sizeof(*s));
    s->active = true;
    s->x = x;
    s->y = y;
    s->xr = xr;
    s->id = ((uint64_t)sw_wall_ms() << 16) ^ ((uint64_t)getpid() << 40) ^ ++r->snap_seq;
    s->n = (uint32_t)((zlen + SNAP_CHUNK - 1) / SNAP_CHUNK);
    s->left = s->n;
    s->first_off = -1;
    char key[300];
    snprintf(key, sizeof(key), "%s/%d", p->topic, (int)p->partition);
    for (uint32_t i = 0; i < s->n; i++) {
        size_t off = (size_t)i * SNAP_CHUNK,
               len = zlen - off < SNAP_CHUNK ? zlen - off : SNAP_CHUNK;
        rd_kafka_headers_t *h = rd_kafka_headers_new(3);
        char v[32];
        snprintf(v, sizeof(v), "%llu", (unsigned long long)s->id);
        sw_run_hdr_add(h, "stormwatch.snapshot.id", v);
        snprintf(v, sizeof(v), "%u/%u", i, s->n);
        sw_run_hdr_add(h, "stormwatch.snapshot.chunk", v);
        sw_token_t *tok = sw_token_new(p->id, SW_TOK_SNAPSHOT);
        tok->chunk = i;
        tok->snap_id = s->id;
        if (!sw_run_produce_msg(r, r->state_topic, 0, key, strlen(key), z + off, len, h, tok)) {
            free(tok);
            s->failed = true;
            break;
        }
    }
    sw_buf_clear(&zb);
    p->last_snap_ms = sw_clock_ms();
}

/* Commit the snapshot of @p p once it and the input before it are safe. */
bool sw_run_snapshot_commit_ready(const part_t *p)
{
    return p->snap.active && !p->snap.failed && p->snap.left == 0 &&
           sw_run_committable(p) >= p->snap.x && !p->led.failed &&
           (!p->local ||
            (sw_ledger_committable(&p->rled, p->rnext) >= p->snap.xr && !p->rled.failed));
}

/* repartition=auto: repartition p's commit in the group beside input p's
 * snapshot, at the position the snapshot is as of, marked "swauto1" (not
 * an `on` engine's snapshot): a later start knows the group left `on`
 * (sw_run_members.c), and a binary running on (an older one after a
 * rollback, or this one following on) refuses it by name and starts that
 * partition's engine empty there, after every copy auto has analysed. */
static void add_auto_mark(const run_t *r, const part_t *p, int64_t xr,
                          rd_kafka_topic_partition_list_t *list)
{
    if (!p->local || xr < 0) return;
    char md[64];
    snprintf(md, sizeof(md), "swauto1:%lld", (long long)xr);
    rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(list, r->rep_topic,
                                                                       p->partition);
    tp->offset = xr;
    tp->metadata = sw_strdup(md);
    tp->metadata_size = strlen(md);
}

void sw_run_snapshot_commit(run_t *r, part_t *p, bool sync)
{
    snapfl_t *s = &p->snap;
    char md[SW_SNAPMETA_MAX];
    sw_snapref_t ref = {s->first_off, s->n, s->id, s->x};
    sw_snapmeta_encode(&ref, md, sizeof(md));
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(list, p->topic,
                                                                       p->partition);
    tp->offset = s->y;
    tp->metadata = sw_strdup(md);
    tp->metadata_size = strlen(md);
    add_auto_mark(r, p, s->xr, list);
    sw_ledger_commit_sent(&p->led, s->x);
    sw_ledger_commit_sent(&p->rled, s->xr);
    s->active = false;
    if (sw_run_commit_list(r, list, sync) && sync) {
        sw_ledger_commit_answer(&p->led, s->x, true);
        sw_ledger_commit_answer(&p->rled, s->xr, true);
        sw_log(r->log, SW_LOG_INFO,
               "%s [%d]: committed offset %lld with the state as of offset %lld", p->topic,
               (int)p->partition, (long long)s->y, (long long)s->x);
    }
    rd_kafka_topic_partition_list_destroy(list);
}

void sw_run_origin_tick(run_t *r, part_t *p, int64_t now);

void sw_run_snapshots_tick(run_t *r, int64_t now)
{
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (p && p->hold.origin) {
            sw_run_origin_tick(r, p, now);
            continue;
        }
        if (!p || p->mode != PM_NORMAL || p->next < 0) continue;
        if (p->snap.active && p->snap.failed) p->snap.active = false;
        if (sw_run_snapshot_commit_ready(p)) sw_run_snapshot_commit(r, p, false);
        if (!p->snap.active && (p->next > p->led.committed_x || p->rnext > p->rled.committed_x) &&
            now - p->last_snap_ms >= r->set->delivery.snapshot_interval_ms)
            sw_run_snapshot_start(r, p);
    }
}

/* A final snapshot of @p p, flushed and committed now (revocation, stop). */
void sw_run_snapshot_final(run_t *r, part_t *p)
{
    if (p->mode != PM_NORMAL || p->next < 0 || p->led.failed) return;
    if (p->next <= p->led.confirmed_x && !sw_run_local_snapshot_due(p))
        return; /* nothing new since the last commit */
    for (int attempt = 0; attempt < 3; attempt++) {
        p->snap.active = false; /* any snapshot in flight is superseded */
        sw_run_snapshot_start(r, p);
        if (!p->snap.active) continue;
        rd_kafka_flush(r->producer, 30000);
        if (!sw_run_snapshot_commit_ready(p)) continue;
        sw_run_snapshot_commit(r, p, true);
        if (p->led.confirmed_x >= p->snap.x && !sw_run_local_snapshot_due(p)) return;
    }
    sw_log(r->log, SW_LOG_WARN,
           "%s [%d]: the final snapshot could not be committed; the next owner rebuilds from "
           "offset %lld's snapshot and skips what the output already holds",
           p->topic, (int)p->partition, (long long)p->led.confirmed_x);
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
        snprintf(err, errsz, "only %u of %u chunks of snapshot %s found in %s from offset %lld",
                 got, n, want_id, r->state_topic, (long long)first);
    return got == n;
}

/* The one input topic repartition=auto pairs with the repartition topic
 * partition for partition (NULL: several, or a pattern). */
static const char *one_input(const run_t *r)
{
    const sw_conf_strs_t *in = &r->set->kafka.input_topics;
    return in->n == 1 && in->v[0][0] != '^' ? in->v[0] : NULL;
}

/* Refill @p p's windows, source @p src, from @p topic [@p p's partition]
 * offsets [@p from, @p to), read now by the reader (a restore, in the
 * rebalance callback). @p keyed: only messages keyed by their job_id
 * (what repartition=auto analysed where it was; the engine passes over
 * jobs it does not hold). @returns false when the range could not be read
 * in time (@p err says why). */
static bool rebuild_range(run_t *r, part_t *p, const char *topic, int src, int64_t from, int64_t to,
                          bool keyed, char *err, size_t errsz)
{
    if (from >= to) return true;
    int64_t lo, hi;
    if (rd_kafka_query_watermark_offsets(r->reader, topic, p->partition, &lo, &hi, 10000)) {
        snprintf(err, errsz, "the offsets of %s [%d] are unknown", topic, (int)p->partition);
        return false;
    }
    if (from < lo) from = lo; /* gone (retention): rebuilt from what is left */
    if (to > hi) to = hi;
    if (from >= to) return true;
    rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(tp, topic, p->partition)->offset = from;
    rd_kafka_assign(r->reader, tp);
    rd_kafka_topic_partition_list_destroy(tp);
    int64_t at = from, deadline = sw_clock_ms() + 60000;
    while (at < to && sw_clock_ms() < deadline) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(r->reader, 100);
        if (!m) continue;
        if (m->err) {
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                snprintf(err, errsz, "reading %s [%d]: %s", topic, (int)p->partition,
                         rd_kafka_message_errstr(m));
                rd_kafka_message_destroy(m);
                break;
            }
            if (m->offset > at) at = m->offset; /* past transaction markers */
            rd_kafka_message_destroy(m);
            continue;
        }
        at = m->offset + 1;
        sw_event_t ev;
        sw_err_t rc;
        char why[256];
        if (m->offset < to &&
            sw_run_decode(&r->pass, &r->workers[0], m, &ev, why, sizeof(why), &rc)) {
            size_t jl = ev.has_job_id ? ev.job_id.len : 0;
            bool key_ok = m->key_len == jl && (!jl || !memcmp(m->key, ev.job_id.ptr, jl));
            if ((!keyed || key_ok) && sw_detect_rebuild_src(p->det, &ev, src, m->offset))
                p->rebuilt++;
        }
        rd_kafka_message_destroy(m);
    }
    rd_kafka_assign(r->reader, NULL);
    if (at < to && !*err)
        snprintf(err, errsz, "%s [%d] read up to offset %lld of %lld in time", topic,
                 (int)p->partition, (long long)at, (long long)to);
    return at >= to;
}

/* @p env's engine with its extension when the envelope has one
 * (sw_detect_snapshot_compat), its sources placed as @p place; @p expect
 * NULL, or the next offsets (as placed) the envelope says it is as of.
 * NULL when it cannot be restored (@p err says why). */
static sw_detector_t *load_engine(const run_t *r, const sw_snapenv_t *env, sw_detect_place_t place,
                                  const int64_t *expect, char *err, size_t errsz)
{
    sw_detect_image_t img = {.body = env->engine.ptr,
                             .body_len = env->engine.len,
                             .ext = env->ext.ptr,
                             .ext_len = env->ext.len,
                             .place = place,
                             .expect = expect};
    return sw_detect_load(r->params, &img, sw_clock_ms(), NULL, err, errsz);
}

/* Note what the output and dead-letter topics hold past the snapshot for
 * source partition @p p: those records are not sent again. */
static void scan_output(run_t *r, part_t *p, const sw_snapenv_t *env)
{
    size_t npos = env->npos;
    rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new((int)npos + 1);
    int64_t *end = sw_calloc(npos + 1, sizeof(*end));
    int need = 0;
    for (size_t i = 0; i < npos; i++) {
        int t = env->pos[i].topic;
        int q = env->pos[i].partition;
        int64_t from = env->pos[i].offset;
        int tn;
        const char *topic = sw_run_pos_topic(r, t, &tn);
        int64_t lo, hi;
        if (!topic || q < 0 || q >= tn) continue; /* a topic this run does not write */
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
                /* Source 1: repartition p (auto), or input p (an auto engine under on) */
                const char *one = p->local ? r->rep_topic : p->foreign ? one_input(r) : NULL;
                int src = !ok || strcmp(buf[1], src_part) ? -1
                          : !strcmp(buf[0], p->topic)     ? 0
                          : one && !strcmp(buf[0], one)   ? 1
                                                          : -1;
                if (src >= 0) {
                    int action = SUPPRESS_DLQ;
                    if (r->rep_topic && !strcmp(topic, r->rep_topic)) action = SUPPRESS_FWD;
                    if (!strcmp(topic, r->out_topic)) {
                        action = -1;
                        if (!rd_kafka_header_get_last(h, "stormwatch.action", &v, &vs))
                            for (int a = 0; a < SW_ACTION_CNT; a++)
                                if (vs == strlen(sw_action_str((sw_action_t)a)) &&
                                    !memcmp(v, sw_action_str((sw_action_t)a), vs))
                                    action = a;
                    }
                    if (action >= 0)
                        sw_imap_put(src ? &p->rsuppress : &p->suppress, atoll(buf[2]) * 8 + action,
                                    1);
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

/* repartition=auto restoring input p from a snapshot of another mode (an
 * `on` forwarder's: no repartition side, an empty engine): the `on`
 * engine of repartition p left its own snapshot, committed with the
 * group's offset of repartition p. Its engine goes on as source 1 (its
 * offsets are repartition p's, as the copies' under `auto`), and what it
 * sent is suppressed by source 1: the keys it carried and what the output
 * holds past its positions. Repartition p is then rebuilt from that
 * engine's window start to its snapshot, and read on from there: nothing
 * it sent is sent again, no storm it had open opens again. @returns false
 * (nothing changed) when there is no such snapshot or it cannot be used:
 * repartition p is then read from the group's committed offset as is. */
static bool restore_on_engine(run_t *r, part_t *p)
{
    sw_detect_stats_t st;
    sw_detect_stats(p->det, &st);
    if (st.jobs) return false; /* not an `on` forwarder's empty engine */
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, r->rep_topic, p->partition);
    char err[512] = "";
    sw_snapref_t ref;
    const rd_kafka_topic_partition_t *c = &l->elems[0];
    bool ok = !rd_kafka_committed(r->consumer, l, 10000) && !c->err && c->offset >= 0 &&
              sw_snapmeta_parse(c->metadata, c->metadata_size, &ref, err, sizeof(err)) == SW_OK;
    int64_t committed = c->offset;
    rd_kafka_topic_partition_list_destroy(l);
    if (!ok) return false;
    char key[300];
    snprintf(key, sizeof(key), "%s/%d", r->rep_topic, (int)p->partition);
    sw_buf_t z, raw;
    sw_buf_init(&z);
    sw_buf_init(&raw);
    sw_snapenv_t env;
    memset(&env, 0, sizeof(env));
    sw_detector_t *det = NULL;
    /* Repartition p's offsets (its source 0) become source 1; an engine of
     * auto gone on under on (adopt_auto) goes back to auto's layout, input
     * p as source 0 again (as of env.xr). */
    if (read_snapshot(r, key, ref.first, ref.chunks, ref.id, &z, err, sizeof(err)) &&
        sw_snapenv_unpack(z.data, z.len, &raw, &env, err, sizeof(err)) == SW_OK)
        det = load_engine(r, &env, env.two ? SW_DETECT_PLACE_SWAPPED : SW_DETECT_PLACE_AS_ONE,
                          (int64_t[SW_DETECT_SOURCES]){env.two ? env.xr : 0, env.x}, err,
                          sizeof(err));
    if (det) {
        sw_detect_destroy(p->det);
        p->det = det;
        /* The keys it carried are repartition p's offsets: source 1's; those
         * of its second source (input p, adopt_auto) source 0's. */
        for (size_t k = 0; k < env.nsup; k++) sw_imap_put(&p->rsuppress, env.sup[k], 1);
        for (size_t k = 0; k < env.nrsup; k++) sw_imap_put(&p->suppress, env.rsup[k], 1);
        scan_output(r, p, &env);
        char e1[300] = "";
        if (env.two && !rebuild_range(r, p, p->topic, 0, env.yr, env.xr, true, e1, sizeof(e1)))
            sw_log(r->log, SW_LOG_WARN, "%s [%d]: windows rebuilt in part: %s", p->topic,
                   (int)p->partition, e1);
        p->rnext = env.x;
        p->rebuild_rx = env.x;
        p->rebuild_ry = env.y < committed ? env.y : committed;
        sw_log(r->log, SW_LOG_INFO,
               "%s [%d]: restored the repartition=on engine of %s [%d] (snapshot %llu, as of "
               "offset %lld) as its repartition side; what it sent is not sent again",
               p->topic, (int)p->partition, r->rep_topic, (int)p->partition,
               (unsigned long long)ref.id, (long long)env.x);
    } else {
        sw_log(r->log, SW_LOG_WARN,
               "%s [%d]: the repartition=on engine's snapshot of %s [%d] cannot be used (%s); "
               "reading it from the committed offset %lld without that engine's state",
               p->topic, (int)p->partition, r->rep_topic, (int)p->partition, err,
               (long long)committed);
    }
    sw_snapenv_clear(&env);
    sw_buf_clear(&z);
    sw_buf_clear(&raw);
    return det != NULL;
}

/* repartition=on starting repartition p where repartition=auto left it
 * (its commit is auto's mark, add_auto_mark): the engine of auto that
 * analysed repartition p is input p's, in input p's snapshot committed
 * with the mark. It goes on here: its sources trade places (repartition p
 * is what this engine is fed, source 0; input p's samples stay as source
 * 1), its windows are refilled from both logs now, and what it sent is
 * suppressed by source: every storm it had open stays open, nothing it
 * paged is paged again. @returns false (nothing changed) when there is no
 * such snapshot or it cannot be used: the engine then starts empty. */
static bool adopt_auto(run_t *r, part_t *p, const rd_kafka_topic_partition_t *c)
{
    const char *in = one_input(r);
    if (!in) return false;
    char err[512] = "";
    sw_snapref_t ref;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, in, p->partition);
    const rd_kafka_topic_partition_t *ic = &l->elems[0];
    bool ok = !rd_kafka_committed(r->consumer, l, 10000) && !ic->err && ic->offset >= 0 &&
              sw_snapmeta_parse(ic->metadata, ic->metadata_size, &ref, err, sizeof(err)) == SW_OK;
    rd_kafka_topic_partition_list_destroy(l);
    if (!ok) {
        sw_log(r->log, SW_LOG_WARN,
               "%s [%d]: no snapshot of repartition=auto committed for %s [%d]%s%s; storms it had "
               "open may page once more",
               p->topic, (int)p->partition, in, (int)p->partition, *err ? ": " : "", err);
        return false;
    }
    p->restore_t0 = sw_clock_ms();
    char key[300];
    snprintf(key, sizeof(key), "%s/%d", in, (int)p->partition);
    sw_buf_t z, raw;
    sw_buf_init(&z);
    sw_buf_init(&raw);
    sw_snapenv_t env;
    memset(&env, 0, sizeof(env));
    sw_detector_t *det = NULL;
    if (read_snapshot(r, key, ref.first, ref.chunks, ref.id, &z, err, sizeof(err)) &&
        sw_snapenv_unpack(z.data, z.len, &raw, &env, err, sizeof(err)) == SW_OK) {
        if (!env.two)
            snprintf(err, sizeof(err), "snapshot %llu is not repartition=auto's",
                     (unsigned long long)ref.id);
        else if (env.xr != c->offset)
            snprintf(err, sizeof(err),
                     "snapshot %llu is as of offset %lld of %s [%d], the mark of %lld",
                     (unsigned long long)ref.id, (long long)env.xr, p->topic, (int)p->partition,
                     (long long)c->offset);
        else /* its sources trade places: repartition p is source 0 here */
            det = load_engine(r, &env, SW_DETECT_PLACE_SWAPPED,
                              (int64_t[SW_DETECT_SOURCES]){env.xr, env.x}, err, sizeof(err));
    }
    if (det) {
        p->det = det;
        p->foreign = true;
        p->fx = env.x;
        for (size_t k = 0; k < env.nrsup; k++) sw_imap_put(&p->suppress, env.rsup[k], 1);
        for (size_t k = 0; k < env.nsup; k++) sw_imap_put(&p->rsuppress, env.sup[k], 1);
        scan_output(r, p, &env);
        char e1[300] = "", e2[300] = "";
        bool full = rebuild_range(r, p, in, 1, env.y, env.x, true, e1, sizeof(e1));
        full &= rebuild_range(r, p, p->topic, 0, env.yr, env.xr, false, e2, sizeof(e2));
        if (!full)
            sw_log(r->log, SW_LOG_WARN, "%s [%d]: windows rebuilt in part: %s%s%s", p->topic,
                   (int)p->partition, e1, *e1 && *e2 ? "; " : "", e2);
        p->next = env.xr;
        p->rebuild_x = env.xr;
        p->rebuild_y = env.yr;
        sw_log(r->log, SW_LOG_INFO,
               "%s [%d]: last read by repartition=auto: its engine (%s [%d]'s snapshot %llu, as "
               "of offsets %lld and %lld) goes on here; what it sent is not sent again",
               p->topic, (int)p->partition, in, (int)p->partition, (unsigned long long)ref.id,
               (long long)env.x, (long long)env.xr);
        sw_run_rebuild_finish(r, p);
    } else {
        sw_log(r->log, SW_LOG_WARN,
               "%s [%d]: repartition=auto's engine in %s [%d]'s snapshot cannot be used (%s); "
               "starting empty: storms it had open may page once more",
               p->topic, (int)p->partition, in, (int)p->partition, err);
    }
    sw_snapenv_clear(&env);
    sw_buf_clear(&z);
    sw_buf_clear(&raw);
    return det != NULL;
}

/* Rebuild @p p's state from its committed snapshot, if there is one. */
void sw_run_restore_partition(run_t *r, part_t *p, const rd_kafka_topic_partition_t *c)
{
    p->det = NULL;
    char err[512] = "";
    sw_snapref_t ref;
    sw_err_t mrc = c ? sw_snapmeta_parse(c->metadata, c->metadata_size, &ref, err, sizeof(err))
                     : SW_ERR_NOT_FOUND;
    if (mrc == SW_ERR_PARSE && c->metadata_size > 8 && !memcmp(c->metadata, "swauto1:", 8)) {
        /* repartition p after repartition=auto (add_auto_mark): its jobs'
         * state is in input p's snapshot, every copy before the offset
         * analysed there. */
        if (r->restore && !p->local && !p->forward && adopt_auto(r, p, c)) {
            sw_run_mem_attach(r, p);
            return;
        }
        sw_log(r->log, SW_LOG_INFO,
               "%s [%d]: last read by repartition=auto (its state is input %d's): starting "
               "empty at offset %lld, after every copy it analysed",
               p->topic, (int)p->partition, (int)p->partition, (long long)c->offset);
        mrc = SW_ERR_NOT_FOUND;
    }
    if (p->local) p->rnext = -1; /* below: from the snapshot, else from where it starts */
    if (!r->restore || mrc == SW_ERR_NOT_FOUND) {
        p->det = sw_detect_new(r->params);
        p->hold.origin = r->restore;
        if (p->local) p->rnext = sw_run_local_rep_start(r, p);
        if (r->restore)
            sw_log(r->log, SW_LOG_INFO,
                   "%s [%d]: no state snapshot committed; starting empty at %s", p->topic,
                   (int)p->partition,
                   c && c->offset >= 0 ? "the committed offset" : "the earliest offset");
        sw_run_mem_attach(r, p);
        return;
    }
    p->restore_t0 = sw_clock_ms();
    char key[300];
    snprintf(key, sizeof(key), "%s/%d", p->topic, (int)p->partition);
    sw_buf_t z, raw;
    sw_buf_init(&z);
    sw_buf_init(&raw);
    sw_snapenv_t env;
    memset(&env, 0, sizeof(env));
    if (mrc == SW_OK &&
        read_snapshot(r, key, ref.first, ref.chunks, ref.id, &z, err, sizeof(err)) &&
        sw_snapenv_unpack(z.data, z.len, &raw, &env, err, sizeof(err)) == SW_OK) {
        /* A snapshot of two sources where one partition is read: input p's
         * of repartition=auto, now forwarded under on (its engine went on
         * in repartition p's: adopt_auto), or repartition p's under on
         * with auto's input samples (adopt_auto's, snapshotted since). */
        bool two_here = !p->local && env.two;
        p->foreign = two_here && !p->forward && one_input(r);
        scan_output(r, p, &env);
        for (size_t k = 0; k < env.nsup; k++) sw_imap_put(&p->suppress, env.sup[k], 1);
        for (size_t k = 0; (p->local || p->foreign) && k < env.nrsup; k++)
            sw_imap_put(&p->rsuppress, env.rsup[k], 1);
        if (two_here && p->forward) {
            p->det = sw_detect_new(r->params); /* forwarded from x on, as auto left it */
            sw_log(r->log, SW_LOG_INFO,
                   "%s [%d]: last analysed by repartition=auto up to offset %lld: forwarded from "
                   "there (its engine goes on in %s [%d]'s)",
                   p->topic, (int)p->partition, (long long)env.x, r->rep_topic, (int)p->partition);
        } else {
            p->det = load_engine(r, &env,
                                 p->local || p->foreign ? SW_DETECT_PLACE_TWO : SW_DETECT_PLACE_ONE,
                                 NULL, err, sizeof(err));
        }
        if (p->det && p->foreign) {
            char e1[300] = "";
            if (!rebuild_range(r, p, one_input(r), 1, env.yr, env.xr, true, e1, sizeof(e1)))
                sw_log(r->log, SW_LOG_WARN, "%s [%d]: windows rebuilt in part: %s", p->topic,
                       (int)p->partition, e1);
            p->fx = env.xr;
        }
        if (p->det) {
            p->rebuild_x = env.x;
            p->rebuild_y = env.y;
            p->mode = PM_REBUILD;
            if (p->local) {
                /* Input below x and repartition p below xr are done: the
                 * windows are refilled from y and yr. A snapshot of another
                 * mode has no repartition side: it is read from where it
                 * starts. */
                p->next = env.x;
                p->rebuilding_in = c->offset < env.x;
                if (env.two) {
                    p->rnext = p->rebuild_rx = env.xr;
                    p->rebuild_ry = env.yr >= 0 ? env.yr : p->rnext;
                } else if (!restore_on_engine(r, p)) {
                    p->rnext = p->rebuild_rx = p->rebuild_ry = sw_run_local_rep_start(r, p);
                }
                p->rebuilding_rep = p->rebuild_ry < p->rebuild_rx;
                sw_ledger_commit_sent(&p->rled, p->rnext);
                sw_ledger_commit_answer(&p->rled, p->rnext, true);
                if (!p->rebuilding_in && !p->rebuilding_rep) sw_run_rebuild_finish(r, p);
            } else if (c->offset >= env.x) {
                sw_run_rebuild_finish(r, p); /* nothing to re-read */
            }
        }
    }
    if (!p->det) {
        char what[40] = "";
        if (mrc == SW_OK)
            snprintf(what, sizeof(what), "snapshot %llu: ", (unsigned long long)ref.id);
        sw_log(r->log, SW_LOG_ERROR,
               "%s [%d]: cannot restore the state (%s%s); starting empty at the committed offset "
               "%lld",
               p->topic, (int)p->partition, what, err, (long long)c->offset);
        sw_imap_clear(&p->suppress);
        sw_imap_clear(&p->rsuppress);
        p->foreign = false;
        p->det = sw_detect_new(r->params);
        p->hold.origin = true;
        p->mode = PM_NORMAL;
        p->rebuilding_in = p->rebuilding_rep = false;
        if (p->local) p->rnext = sw_run_local_rep_start(r, p);
    }
    sw_snapenv_clear(&env);
    sw_buf_clear(&z);
    sw_buf_clear(&raw);
    sw_run_mem_attach(r, p); /* the process's one budget (sw_run_mem.c) */
}

/* Where consumption of a partition without a usable snapshot starts: the
 * committed offset, else where auto.offset.reset points (-1: unknown). */
int64_t sw_run_start_offset(run_t *r, const part_t *p, const rd_kafka_topic_partition_t *c)
{
    if (c && c->offset >= 0) return c->offset;
    return sw_run_reset_offset(r, p->topic, p->partition);
}

/* The origin snapshots: a partition assigned without a usable snapshot
 * gets one of its empty engine, as of the offset where it starts, with the
 * output topics' end offsets, committed before its first message is
 * processed. A kill at any later moment then restores from it and finds
 * everything sent since on the output: no record is sent twice, even in a
 * partition's first seconds. Called in the rebalance callback, before the
 * partitions are assigned, bounded by @p budget_ms. A partition whose
 * origin could not be committed now (a rebalance in progress, brokers
 * unreachable) stays held: assigned but paused, and sw_run_origin_tick() retries
 * until the commit is confirmed. @returns the partitions held. */
int sw_run_origin_snapshots(run_t *r, part_t **ps, int n, int64_t budget_ms)
{
    int64_t t0 = sw_clock_ms(), deadline = t0 + budget_ms;
    for (int i = 0; i < n; i++) {
        ps[i]->snap.active = false;
        ps[i]->hold.origin_x = ps[i]->next;
        if (ps[i]->next >= 0) sw_run_snapshot_start(r, ps[i]);
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
        if (!sw_run_snapshot_commit_ready(p)) continue;
        char md[SW_SNAPMETA_MAX];
        sw_snapref_t ref = {p->snap.first_off, p->snap.n, p->snap.id, p->snap.x};
        sw_snapmeta_encode(&ref, md, sizeof(md));
        rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(list, p->topic,
                                                                           p->partition);
        tp->offset = p->snap.x;
        tp->metadata = sw_strdup(md);
        tp->metadata_size = strlen(md);
        add_auto_mark(r, p, p->snap.xr, list);
    }
    bool taken = list->cnt && sw_run_commit_list(r, list, true);
    int ok = 0, held = 0;
    for (int i = 0; i < n; i++) {
        part_t *p = ps[i];
        p->last_snap_ms = sw_clock_ms();
        if (taken && rd_kafka_topic_partition_list_find(list, p->topic, p->partition)) {
            sw_ledger_commit_sent(&p->led, p->snap.x);
            sw_ledger_commit_answer(&p->led, p->snap.x, true);
            sw_ledger_commit_sent(&p->rled, p->snap.xr);
            sw_ledger_commit_answer(&p->rled, p->snap.xr, true);
            p->snap.active = false;
            p->hold.origin = false;
            ok++;
            continue;
        }
        p->snap.active = false; /* sw_run_origin_tick() takes a new one */
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

/* A held partition: take its origin snapshot again until a commit of it
 * is confirmed, then consume it from where it starts (the steps:
 * sw_hold_origin_step()). */
void sw_run_origin_tick(run_t *r, part_t *p, int64_t now)
{
    sw_hold_t *h = &p->hold;
    for (;;) {
        sw_hold_snap_t s = {p->snap.active,     p->snap.failed,     sw_run_snapshot_commit_ready(p),
                            p->led.committed_x, p->led.confirmed_x, p->last_snap_ms};
        switch (sw_hold_origin_step(h, &s, now)) {
        case SW_HOLD_WAIT: return;
        case SW_HOLD_ASK_START:
            p->last_snap_ms = now;
            h->origin_x = p->next = sw_run_start_offset(r, p, NULL);
            if (h->origin_x < 0) return;
            continue;
        case SW_HOLD_DROP: p->snap.active = false; continue;
        case SW_HOLD_COMMIT: sw_run_snapshot_commit(r, p, r->eos); return;
        case SW_HOLD_SNAPSHOT:
            p->next = h->origin_x;
            sw_run_snapshot_start(r, p);
            return;
        case SW_HOLD_RELEASE:
            if (h->from >= 0) {
                rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
                rd_kafka_topic_partition_list_add(l, p->topic, p->partition)->offset = h->from;
                rd_kafka_error_t *e = rd_kafka_seek_partitions(r->consumer, l, 5000);
                if (e) rd_kafka_error_destroy(e);
                rd_kafka_topic_partition_list_destroy(l);
            }
            sw_run_origin_pause(r, p, false);
            sw_log(r->log, SW_LOG_INFO,
                   "%s [%d]: origin snapshot committed; consuming from offset %lld", p->topic,
                   (int)p->partition, (long long)h->origin_x);
            return;
        }
    }
}
