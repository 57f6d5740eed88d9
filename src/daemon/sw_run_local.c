/*
 * repartition=auto (see sw_run_int.h, docs/keying-auto.md): the engine of
 * input partition p also reads repartition partition p, and the
 * repartition log alone fixes the order in which it sees the two.
 *
 * A round reads input p into a FIFO, not into the engine, and writes a
 * marker to repartition p: "input p up to offset i" (headers only; see
 * MARKER_BATCH for how often). Repartition p is then read strictly in
 * order: a copy (a message another partition forwarded) is analysed
 * where it stands; a marker releases the FIFO's messages below its i,
 * each analysed if it is keyed by its job_id on its job's partition, else
 * forwarded (the hop) to its job's repartition partition. (A message
 * whose key is not one of p's, read while nothing waits in the FIFO, is
 * forwarded at once: it can never be analysed here.) The order the
 * engine saw is therefore the repartition log's, which a restart reads
 * again from the snapshot's positions (X_in, X_rep): the dead owner's
 * markers release exactly what they released before, between the same
 * copies, and records past the snapshot equal an uninterrupted run's.
 * When a marker names input this owner has not read yet (a restart reads
 * the two logs at different speeds), the repartition side waits there.
 *
 * Ownership: the group assigns input partitions only; the rebalance
 * callback assigns repartition p to the mirror consumer (sw_run_setup.c:
 * a consumer of its own group id that never joins) with input p and
 * unassigns it with it, so whoever owns input p reads repartition p.
 * Its position lives in p's snapshot (SWE2), committed with input p.
 */
#include "sw_run_int.h"
#include "sw_run_local.h"
#include "sw_run_out.h"
#include "sw_run_setup.h"
#include "sw_run_state.h"
#include "sw_run_work.h"

#define LOCAL_FIFO_MAX 16384        /* input read and not yet released: reading pauses above */
#define LOCAL_FIFO_BYTES (4u << 20) /* ... or above this many bytes of it (also repartition's) */
/* What a message read costs beside its value and key: librdkafka keeps
 * about 400 bytes of its own with each. Counted in a queue's bytes, so
 * that a flood of small messages (130-byte one-sample job ids) held for
 * markers is bounded by what it costs, not by its payload (16,384 such
 * messages a partition over 32 partitions held 290 MiB beside the
 * engines' budget: a backlog flood's RSS peaked at 885 MiB with 279 MiB of
 * engine state). */
#define LOCAL_MSG_COST 512
/* A marker not back within this long (while input waits for it): the
 * repartition topic is taken as unavailable (see direct_ok). */
#define DIRECT_AFTER_MS 500
/* A marker's round trip longer than this is an outage worth a WARN; a
 * shorter one (a slow first round trip at start, a loaded machine) is said at
 * INFO: the gauge and the counters show it either way. */
#define MARKER_WARN_MS 5000
#define LOCAL_REP_BATCH 1024 /* repartition messages taken per round */
/* A marker is written when input waits for one and no earlier marker of
 * the partition is still on its way back, or once this much input waits:
 * live input spread over many partitions then takes about one marker per
 * partition and round trip, not one per round (a round may read a
 * message or two of each), and a lone sample's marker leaves at once. */
#define MARKER_BATCH 256

/* ---- a queue of messages -------------------------------------------------- */

static void q_push(msgq_t *q, rd_kafka_message_t *m)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 256;
        rd_kafka_message_t **a = sw_reallocarray(NULL, cap, sizeof(*a));
        for (size_t i = 0; i < q->n; i++) a[i] = q->m[(q->head + i) % q->cap];
        free(q->m);
        q->m = a;
        q->cap = cap;
        q->head = 0;
    }
    q->m[(q->head + q->n++) % q->cap] = m;
    q->bytes += m->len + m->key_len + LOCAL_MSG_COST;
}

static rd_kafka_message_t *q_front(const msgq_t *q)
{
    return q->n ? q->m[q->head] : NULL;
}

static rd_kafka_message_t *q_pop(msgq_t *q)
{
    rd_kafka_message_t *m = q->m[q->head];
    q->head = (q->head + 1) % q->cap;
    q->n--;
    q->bytes -= m->len + m->key_len + LOCAL_MSG_COST;
    return m;
}

static void q_free(msgq_t *q)
{
    while (q->n) rd_kafka_message_destroy(q_pop(q));
    free(q->m);
    memset(q, 0, sizeof(*q));
}

void sw_run_local_free(part_t *p)
{
    q_free(&p->fifo);
    q_free(&p->rheld);
}

bool sw_run_local_may_read(const part_t *p)
{
    /* Beyond the bound when a marker waits for input not read yet (one a
     * member with a larger FIFO wrote): it releases what it covers. */
    return (p->fifo.n < LOCAL_FIFO_MAX && p->fifo.bytes < LOCAL_FIFO_BYTES) ||
           p->in_read < p->mk_need;
}

/* ---- markers ------------------------------------------------------------ */

/* Whether @p m is a marker; *i its input offset, or -1 when it is another
 * input topic's (a repartition topic shared by mistake: passed over). */
static bool marker_of(const part_t *p, const rd_kafka_message_t *m, int64_t *i)
{
    rd_kafka_headers_t *h;
    const void *v;
    size_t n;
    if (rd_kafka_message_headers(m, &h) || rd_kafka_header_get_last(h, "stormwatch.marker", &v, &n))
        return false;
    char num[24];
    *i = -1;
    if (n == 0 || n >= sizeof(num)) return true;
    memcpy(num, v, n);
    num[n] = '\0';
    if (!rd_kafka_header_get_last(h, "stormwatch.marker.topic", &v, &n) && n == strlen(p->topic) &&
        memcmp(v, p->topic, n) == 0)
        *i = strtoll(num, NULL, 10);
    return true;
}

/* "Input p up to in_read" to repartition p, through the marker producer
 * (linger.ms=0: input waits for its marker's round trip). A marker the
 * broker refused is written again (markers say "up to", so one more is
 * harmless). */
static void write_marker(run_t *r, part_t *p)
{
    rd_kafka_headers_t *h = rd_kafka_headers_new(2);
    sw_run_hdr_add(h, "stormwatch.marker.topic", p->topic);
    sw_run_hdr_add_i64(h, "stormwatch.marker", p->in_read);
    sw_token_t *tok = sw_token_new(p->id, SW_TOK_MARKER);
    tok->offset = p->in_read;
    rd_kafka_resp_err_t e = rd_kafka_producev(
        r->mprod, RD_KAFKA_V_TOPIC(r->rep_topic), RD_KAFKA_V_PARTITION(p->partition),
        RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_OPAQUE(tok), RD_KAFKA_V_END);
    if (e) {
        rd_kafka_headers_destroy(h);
        free(tok);
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL)
            sw_run_local_marker_failed(r, p, p->in_read, rd_kafka_err2str(e));
        return; /* the next round writes it */
    }
    if (p->inflight < 0) p->marker_ms = sw_clock_ms(); /* else: the wait goes on */
    p->marked = p->in_read;
    p->inflight = p->in_read;
    p->mk_unread++;
}

void sw_run_local_marker_failed(run_t *r, part_t *p, int64_t i, const char *why)
{
    sw_log_limited(r->log, &r->lim_kafka, SW_LOG_WARN,
                   "%s [%d]: the marker for input up to offset %lld was not stored in %s (%s); "
                   "writing it again",
                   p->topic, (int)p->partition, (long long)i, r->rep_topic, why);
    if (p->marked >= i) p->marked = i - 1;
    if (p->inflight == i) p->inflight = -1;
}

/* ---- a round ---------------------------------------------------------------- */

/* Restore: one message of log @p src back into the windows. Input that
 * was forwarded, not analysed here, is passed over as the feed did. */
static void rebuild_one(run_t *r, part_t *p, int src, const rd_kafka_message_t *m)
{
    sw_event_t ev;
    sw_err_t rc;
    char err[512];
    if (!sw_run_decode(&r->pass, &r->workers[0], m, &ev, err, sizeof(err), &rc)) return;
    if (!src && !sw_run_local_keeps(&r->pass, p, m, &ev)) return;
    if (sw_detect_rebuild_src(p->det, &ev, src, m->offset)) p->rebuilt++;
}

/* Whether input message @p m's key is one of this partition's (the
 * group's partitioner, sw_run_keying.c; no key counts as the empty one).
 * Only such a message can be analysed here: the others are forwarded.
 * Undecided, any may be. */
static bool key_here(const run_t *r, const part_t *p, const rd_kafka_message_t *m)
{
    if (r->part_pending) return true;
    return sw_run_owner_partition(r->part, m->key, m->key ? m->key_len : 0, r->rep_parts) ==
           p->partition;
}

/* The input this round read (in the work area: the round put it there):
 * into the FIFO, or back into the windows while a restore rebuilds. */
static void take_input(run_t *r, part_t *p)
{
    pwork_t *pw = &p->w;
    size_t n = pw->n;
    pw->n = 0; /* the work area fills again below, in the round's order */
    for (size_t k = 0; k < n; k++) {
        rd_kafka_message_t *m = pw->m[k];
        pw->m[k] = NULL;
        bool keep = false;
        if (m->err) {
            sw_run_note_consumer_error(r, m);
        } else if (sw_hold_held(&p->hold)) { /* paused: read again from here once released */
            sw_hold_note(&p->hold, m->offset);
        } else if (p->rebuilding_in && m->offset < p->rebuild_x) {
            if (!sw_run_registry_wait(r, p, m)) { /* else held: read again once released */
                rebuild_one(r, p, 0, m);
                if (m->offset + 1 >= p->rebuild_x) p->rebuilding_in = false;
            }
        } else if (p->in_read < 0 || m->offset >= p->in_read) {
            p->rebuilding_in = false; /* past the snapshot (or what retention left) */
            if (p->fifo.n || key_here(r, p, m)) {
                if (!p->fifo.n && p->inflight < 0) p->marker_ms = sw_clock_ms(); /* waits now */
                q_push(&p->fifo, m);
                keep = true;
            } else if (!sw_run_registry_wait(r, p, m)) { /* else held: read again */
                /* Not keyed to this partition, so never analysed here: it is
                 * forwarded now, in input order (nothing read before it
                 * waits), without a marker. */
                sw_run_work_push_src(pw, m, 0);
                keep = true;
            }
            if (keep) p->in_read = m->offset + 1;
        }
        if (!keep) rd_kafka_message_destroy(m);
    }
}

/* ---- the repartition topic unavailable -------------------------------------
 * Input waits for its marker's round trip through repartition p. When the
 * marker does not come back within DIRECT_AFTER_MS (the partition's leader
 * is gone, say) and repartition p holds no copy from other partitions —
 * none was read since it was assigned, and its end offset, as last known,
 * leaves room for this partition's own markers only — the order the
 * markers would fix is input order, which any later reader of the two logs
 * sees again: the input is then analysed directly ("direct"), without its
 * marker, until a marker comes back. A copy another member forwarded
 * during the outage and that lands only after it is the one case a
 * restore from a snapshot older than the outage may see in another order:
 * counted (stormwatch_repartition_direct_reordered_total) and said. When
 * repartition p holds copies, its input waits, and the partition is
 * counted in stormwatch_repartition_waiting_partitions (not ready). */

/* Our marker came back: the repartition topic answers again. */
static void marker_back(run_t *r, part_t *p)
{
    int64_t lo = -5, hi = -5;
    if (!rd_kafka_get_watermark_offsets(r->mirror, r->rep_topic, p->partition, &lo, &hi) && hi >= 0)
        p->rep_hi = hi; /* what copies_possible() knows when the leader is gone */
    if (p->mk_unread) p->mk_unread--;
    p->marker_ms = sw_clock_ms(); /* progress: the next wait counts from here */
    p->marker_warned = false;
    if (p->direct) {
        p->direct = false;
        p->direct_after = true;
        sw_log(r->log, SW_LOG_INFO,
               "%s [%d]: markers come back through %s [%d] again: its input waits for them as "
               "before",
               p->topic, (int)p->partition, r->rep_topic, (int)p->partition);
    } else if (p->inflight < 0) {
        p->direct_after = false; /* a marker written after the spell is back */
    }
}

/* A copy from another partition, read from repartition p. */
static void copy_read(run_t *r, part_t *p, const rd_kafka_message_t *m)
{
    p->copies++;
    if (!p->direct && !p->direct_after) return;
    sw_run_m_add(r, SW_M_DIRECT_REORDERED, 1);
    sw_log_limited(r->log, &r->lim_kafka, SW_LOG_WARN,
                   "%s [%d] offset %lld: a copy forwarded by another partition arrived after this "
                   "partition's input was analysed without markers (the repartition topic was "
                   "unavailable): a restore from a snapshot older than that spell may analyse it "
                   "in another order",
                   r->rep_topic, (int)p->partition, (long long)m->offset);
}

/* Whether repartition p may hold a copy not read yet: messages between
 * the next offset to read and its end offset (the mirror's last known)
 * that are not this partition's own markers, or copies read and held. */
static bool copies_possible(run_t *r, const part_t *p, char *why, size_t why_size)
{
    if (p->copies) {
        snprintf(why, why_size, "%llu copies from other partitions read from it",
                 (unsigned long long)p->copies);
        return true;
    }
    for (size_t k = 0; k < p->rheld.n; k++) {
        const rd_kafka_message_t *m = p->rheld.m[(p->rheld.head + k) % p->rheld.cap];
        int64_t i;
        if (!m->err && !marker_of(p, m, &i)) {
            snprintf(why, why_size, "a copy from another partition read and waiting");
            return true;
        }
    }
    int64_t lo = -1, hi = -1;
    if (rd_kafka_get_watermark_offsets(r->mirror, r->rep_topic, p->partition, &lo, &hi) || hi < 0)
        hi = p->rep_hi; /* the leader is gone: as last known */
    if (hi < 0 || p->rnext < 0) {
        snprintf(why, why_size, "its end offset is not known");
        return true;
    }
    int64_t from = p->rnext;
    if (hi - from <= (int64_t)p->mk_unread + (int64_t)p->rheld.n) return false;
    snprintf(why, why_size,
             "%lld messages past offset %lld not read yet, more than this partition's %llu "
             "markers",
             (long long)(hi - from - (int64_t)p->rheld.n), (long long)from,
             (unsigned long long)p->mk_unread);
    return true;
}

/* Input waits for a marker that has not come back within DIRECT_AFTER_MS:
 * analyse it directly when that keeps the order (see above), else wait,
 * counted. @returns whether the partition's input goes on directly. */
static bool direct_ok(run_t *r, part_t *p, int64_t now, bool *waiting)
{
    *waiting = false;
    if (r->part_pending) return false; /* nothing is analysed before the partitioner is known */
    if (p->direct) return true;
    if (!p->fifo.n || p->rebuilding_in || p->rebuilding_rep || p->mode == PM_REBUILD ||
        sw_hold_held(&p->hold) || now - p->marker_ms < DIRECT_AFTER_MS)
        return false;
    char why[200];
    if (copies_possible(r, p, why, sizeof(why))) {
        bool long_wait = now - p->marker_ms >= MARKER_WARN_MS;
        if (!p->rwaiting || (long_wait && !p->marker_warned))
            sw_log(r->log, long_wait ? SW_LOG_WARN : SW_LOG_INFO,
                   "%s [%d]: no marker back through %s [%d] for %lld ms; its input waits (%zu "
                   "messages, %zu bytes, reading pauses at %u or %u MiB): repartition [%d] may "
                   "hold copies from other partitions, whose order the markers fix (%s)",
                   p->topic, (int)p->partition, r->rep_topic, (int)p->partition,
                   (long long)(now - p->marker_ms), p->fifo.n, p->fifo.bytes, LOCAL_FIFO_MAX,
                   LOCAL_FIFO_BYTES >> 20, (int)p->partition, why);
        if (long_wait) p->marker_warned = true;
        *waiting = true;
        return false;
    }
    p->direct = true;
    sw_log(r->log, SW_LOG_INFO,
           "%s [%d]: no marker back through %s [%d] for %lld ms (is its leader available?): "
           "the input is analysed directly until one comes back (repartition [%d] holds no copy "
           "from other partitions, so input order is the order markers would fix)",
           p->topic, (int)p->partition, r->rep_topic, (int)p->partition,
           (long long)(now - p->marker_ms), (int)p->partition);
    return true;
}

/* Repartition p in order into the round's work: copies where they stand,
 * markers releasing the FIFO. Stops where it must wait: a marker past the
 * input read so far, a schema the registry has not given yet, the input's
 * rebuild. */
static void follow_repartition(run_t *r, part_t *p, bool *more)
{
    pwork_t *pw = &p->w;
    if (p->rqueue && p->rheld.n < LOCAL_FIFO_MAX && p->rheld.bytes < LOCAL_FIFO_BYTES) {
        rd_kafka_message_t *b[LOCAL_REP_BATCH];
        ssize_t got = rd_kafka_consume_batch_queue(p->rqueue, 0, b, LOCAL_REP_BATCH);
        for (ssize_t k = 0; k < got; k++) q_push(&p->rheld, b[k]);
        if (got == LOCAL_REP_BATCH) *more = true;
    }
    rd_kafka_message_t *m;
    while ((m = q_front(&p->rheld)) != NULL && !r->failed) {
        if (m->err) {
            sw_run_note_consumer_error(r, m);
            rd_kafka_message_destroy(q_pop(&p->rheld));
            continue;
        }
        int64_t i = -1;
        bool marker = marker_of(p, m, &i);
        if (p->rebuilding_rep && m->offset < p->rebuild_rx) {
            if (!marker && sw_run_registry_unready(r, p, m)) break;
            if (!marker) rebuild_one(r, p, 1, m);
            if (m->offset + 1 >= p->rebuild_rx) p->rebuilding_rep = false;
            rd_kafka_message_destroy(q_pop(&p->rheld));
            continue;
        }
        p->rebuilding_rep = false;
        if (p->mode == PM_REBUILD) {
            if (p->rebuilding_in) break; /* both logs up to the snapshot first */
            sw_run_rebuild_finish(r, p);
        }
        if (marker) {
            p->mk_need = i;
            if (i > p->in_read) break;  /* the input is behind this marker: wait for it */
            if (r->part_pending) break; /* what it releases is decided by the partitioner */
            if (p->inflight >= 0 && i >= p->inflight) p->inflight = -1; /* ours came back */
            if (i >= 0) marker_back(r, p);
            rd_kafka_message_t *im;
            bool wait = false;
            while ((im = q_front(&p->fifo)) != NULL && im->offset < i) {
                if ((wait = sw_run_registry_unready(r, p, im))) break;
                sw_run_work_push_src(pw, q_pop(&p->fifo), 0);
            }
            if (wait) break;
            if (m->offset + 1 > p->rnext) p->rnext = m->offset + 1;
            rd_kafka_message_destroy(q_pop(&p->rheld));
            continue;
        }
        if (sw_run_registry_unready(r, p, m)) break;
        copy_read(r, p, m);
        sw_run_work_push_src(pw, q_pop(&p->rheld), 1);
    }
}

bool sw_run_local_sort_out(run_t *r, part_t *p, bool *more)
{
    pwork_t *pw = &p->w;
    take_input(r, p);
    /* Held (origin snapshot, registry): only what was taken before the
     * hold goes on; nothing more is read until it is released. */
    if (!sw_hold_held(&p->hold)) {
        follow_repartition(r, p, more); /* first: a marker back lets the next one go */
        if (!p->rebuilding_in && !r->part_pending && p->fifo.n && p->in_read > p->marked &&
            (p->inflight < 0 || p->in_read - p->marked >= MARKER_BATCH))
            write_marker(r, p);
        if (p->mode == PM_REBUILD && !p->rebuilding_in && !p->rebuilding_rep)
            sw_run_rebuild_finish(r, p); /* both rebuilds over without a later message */
        bool waiting;
        if (direct_ok(r, p, sw_clock_ms(), &waiting)) {
            rd_kafka_message_t *im;
            uint64_t n = 0;
            while ((im = q_front(&p->fifo)) != NULL && !sw_run_registry_unready(r, p, im)) {
                sw_run_work_push_src(pw, q_pop(&p->fifo), 0);
                n++;
            }
            if (n) sw_run_m_add(r, SW_M_DIRECT_MESSAGES, n);
        }
        p->rwaiting = waiting;
    }
    if (!pw->n) return false;
    pw->w0 = 0;
    pw->w1 = pw->n;
    pw->pos = 0;
    return true;
}

/* ---- ownership ---------------------------------------------------------- */

/* Where repartition p is read from when no snapshot of this mode says: the
 * group's committed offset of it (left by repartition=on), else where
 * auto.offset.reset points. */
int64_t sw_run_local_rep_start(run_t *r, const part_t *p)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, r->rep_topic, p->partition);
    int64_t at = -1;
    if (!rd_kafka_committed(r->consumer, l, 10000) && !l->elems[0].err) at = l->elems[0].offset;
    rd_kafka_topic_partition_list_destroy(l);
    if (at >= 0) return at;
    at = sw_run_reset_offset(r, r->rep_topic, p->partition);
    return at >= 0 ? at : 0; /* unknown: from the start (the mirror resets to the earliest kept) */
}

/* Input p was assigned: repartition p goes to the mirror, from where the
 * restore (or the start) says, into a queue of its own. */
void sw_run_local_assign(run_t *r, part_t *p)
{
    int64_t x = p->mode == PM_REBUILD ? p->rebuild_x : p->next;
    p->in_read = p->marked = x;
    p->rqueue = rd_kafka_queue_get_partition(r->mirror, r->rep_topic, p->partition);
    if (p->rqueue) {
        rd_kafka_queue_forward(p->rqueue, NULL);
        rd_kafka_queue_io_event_enable(p->rqueue, r->wake[1], "p", 1);
    }
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    int64_t from = p->rebuilding_rep ? p->rebuild_ry : p->rnext;
    rd_kafka_topic_partition_list_add(l, r->rep_topic, p->partition)->offset =
        from >= 0 ? from : RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_error_t *e = rd_kafka_incremental_assign(r->mirror, l);
    if (e) {
        sw_log(r->log, SW_LOG_ERROR, "%s [%d]: cannot read %s [%d]: %s", p->topic,
               (int)p->partition, r->rep_topic, (int)p->partition, rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        r->failed = true;
    } else {
        sw_log(r->log, SW_LOG_INFO, "%s [%d]: reading %s [%d] from offset %lld with it", p->topic,
               (int)p->partition, r->rep_topic, (int)p->partition, (long long)from);
    }
    rd_kafka_topic_partition_list_destroy(l);
}

/* Input p was revoked (or the run ends): so is repartition p. */
void sw_run_local_release(run_t *r, part_t *p)
{
    if (p->rqueue) {
        rd_kafka_queue_io_event_enable(p->rqueue, -1, NULL, 0);
        rd_kafka_queue_destroy(p->rqueue);
        p->rqueue = NULL;
    }
    if (!r->mirror || r->stopping) return; /* the mirror goes with the run */
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, r->rep_topic, p->partition);
    rd_kafka_error_t *e = rd_kafka_incremental_unassign(r->mirror, l);
    if (e) rd_kafka_error_destroy(e);
    rd_kafka_topic_partition_list_destroy(l);
}

bool sw_run_local_snapshot_due(const part_t *p)
{
    return p->local && p->rnext > p->rled.confirmed_x;
}

const sw_run_mode_t sw_run_local_mode = {
    .may_read = sw_run_local_may_read,
    .sort_out = sw_run_local_sort_out,
    .marker_failed = sw_run_local_marker_failed,
};
