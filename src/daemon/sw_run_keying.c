/*
 * repartition=auto: the group's partitioner (see sw_run_int.h,
 * docs/keying-auto.md, docs/producing.md). A message keyed by its job_id
 * is analysed where it is when the partitioner the group uses places the
 * key there; every other message is forwarded to the partition that
 * partitioner gives its job_id. So that one job is never analysed by two
 * engines, that partitioner is one function for the whole group, across
 * members and restarts:
 *  - repartition.partitioner=murmur2|crc32|fnv1a: as set (alike on every
 *    member, like the group's other settings);
 *  - auto: the group's record, a commit of the mirror consumer's group
 *    (<group.id>.mirror, which never joins, so the commit is its own) on
 *    repartition.topic [0] with metadata "swpart1:NAME";
 *  - auto without a record but with snapshots from before the record
 *    committed (a group of v0.3.0, which ran auto with murmur2 and wrote
 *    no record, or of repartition=on): murmur2, which those snapshots were
 *    made with, so that no job moves. Only such snapshots count: every
 *    snapshot this release commits under auto (the origin snapshots of a
 *    member still undecided included) marks repartition p's commit
 *    "swauto1" in the same commit (sw_run_state.c, add_auto_mark), which
 *    v0.3.0 never wrote; input p's snapshot beside that mark is this
 *    release's own, written while the group had no record, and says
 *    nothing of the producers. A member that decides by this rule writes
 *    the record at once (owner of partition 0 or not), so that no later
 *    member finds the v0.3.0 snapshots all replaced and detects another
 *    partitioner;
 *  - auto in a new group: undecided. No marker is written anywhere, so
 *    nothing is analysed or forwarded (input waits in the FIFOs). The one
 *    member that owns input partition 0 (the group gives it to one member
 *    at a time, and fences a former owner's commits only in the group it
 *    joined: the record is written once it owns partition 0 in the current
 *    assignment) samples the distinct keys in its FIFOs (and, when they do
 *    not tell, those of every input partition's latest messages), chooses the
 *    candidate that places them where they are (sw_partitioner_choose):
 *    at once when one candidate alone does; on a tie (keys two candidates
 *    place alike) or input without keys after 2 s of input, the first of
 *    murmur2, crc32, fnv1a; otherwise (mixed producers) the best fit after
 *    10 s of input; with no input there at all, murmur2 after 30 s. It
 *    records the choice; the others read the record every 500 ms until it
 *    is there. Partition 0's owner reads it too before deciding (a member
 *    may have written it by the snapshot rule meanwhile), and a member
 *    pending because the group's commits could not be read applies the
 *    snapshot rule once they can.
 * Whoever owns partition 0 writes the record again every hour (a group's
 * commits expire after offsets.retention.minutes without one), and within
 * 500 ms of owning it when this member has not written it yet.
 */
#include "sw_run_int.h"
#include "sw_run_keying.h"
#include "sw_run_out.h"

#define RECORD_PREFIX "swpart1:"
#define POLL_MS 500            /* undecided: how often the record is looked for */
#define REFRESH_MS 3600000     /* decided: how often partition 0's owner writes it again */
#define DECIDE_TIE_MS 2000     /* input whose keys every best candidate places: wait this */
#define DECIDE_SEEN_MS 10000   /* with input but no clear answer, decide after this */
#define DECIDE_ANYWAY_MS 30000 /* with no input in partition 0's owner, after this */
#define SAMPLE_KEYS 4096       /* distinct keys looked at, at most */
#define TOPIC_SAMPLE 64        /* the latest messages of each input partition read for keys */
#define TOPIC_SAMPLE_MS 2000   /* how often the decider reads them, while it may */
#define WARN_AFTER 1000        /* job-keyed input messages before the WARN may fire */

/* The group's record, if any, into *p. @returns 1 found, 0 none, -1 unknown. */
static int read_record(run_t *r, sw_partitioner_t *p)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, r->rep_topic, 0);
    int found = -1;
    if (!rd_kafka_committed(r->mirror, l, 5000) && !l->elems[0].err) {
        const rd_kafka_topic_partition_t *c = &l->elems[0];
        char name[32];
        size_t pl = strlen(RECORD_PREFIX);
        found = 0;
        if (c->metadata && c->metadata_size > pl && c->metadata_size - pl < sizeof(name) &&
            memcmp(c->metadata, RECORD_PREFIX, pl) == 0) {
            memcpy(name, (const char *)c->metadata + pl, c->metadata_size - pl);
            name[c->metadata_size - pl] = '\0';
            if (sw_partitioner_parse(name, p)) found = 1;
            else
                sw_log(r->log, SW_LOG_WARN,
                       "group %s.mirror's record of the producers' partitioner names \"%s\", "
                       "which this version does not know: taken as none",
                       r->set->kafka.group_id, name);
        }
    }
    rd_kafka_topic_partition_list_destroy(l);
    return found;
}

/* Write the group's record (synchronously). @returns whether it is stored. */
static bool write_record(run_t *r, sw_partitioner_t p)
{
    char md[64];
    int n = snprintf(md, sizeof(md), RECORD_PREFIX "%s", sw_partitioner_name(p));
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_t *t = rd_kafka_topic_partition_list_add(l, r->rep_topic, 0);
    t->offset = 0;
    t->metadata = sw_malloc((size_t)n);
    memcpy(t->metadata, md, (size_t)n);
    t->metadata_size = (size_t)n;
    rd_kafka_resp_err_t e = rd_kafka_commit(r->mirror, l, 0);
    if (!e && l->elems[0].err) e = l->elems[0].err;
    rd_kafka_topic_partition_list_destroy(l);
    if (e)
        sw_log_limited(r->log, &r->lim_kafka, SW_LOG_WARN,
                       "cannot record the producers' partitioner (%s) for group %s: %s; trying "
                       "again",
                       sw_partitioner_name(p), r->set->kafka.group_id, rd_kafka_err2str(e));
    return !e;
}

/* Whether any input partition has a committed snapshot from before the
 * record: input q's commit is a snapshot ("sw...") and repartition q's
 * commit in the group does not carry this release's mark ("swauto1:",
 * committed with every snapshot of auto). @returns 1, 0, or -1 when the
 * group did not answer. */
static int have_snapshots(run_t *r)
{
    const char *topic = r->set->kafka.input_topics.v[0];
    int n = r->in_parts;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(2 * n);
    for (int q = 0; q < n; q++) rd_kafka_topic_partition_list_add(l, topic, q);
    for (int q = 0; q < n; q++) rd_kafka_topic_partition_list_add(l, r->rep_topic, q);
    int any = -1;
    if (!rd_kafka_committed(r->consumer, l, 10000)) {
        any = 0;
        for (int q = 0; q < n; q++) {
            const rd_kafka_topic_partition_t *in = &l->elems[q], *rep = &l->elems[n + q];
            bool snap = !in->err && in->metadata_size >= 2 && memcmp(in->metadata, "sw", 2) == 0;
            bool ours = !rep->err && rep->metadata_size >= 8 &&
                        memcmp(rep->metadata, "swauto1:", 8) == 0;
            if (snap && !ours) any = 1;
        }
    }
    rd_kafka_topic_partition_list_destroy(l);
    return any;
}

static void decided(run_t *r, sw_partitioner_t p)
{
    r->part = p;
    r->pass.part = p;
    r->part_pending = false;
}

/* Decided by the snapshot rule: murmur2, recorded at once (and again
 * every 500 ms until stored: sw_run_keying_tick). */
static void by_snapshots(run_t *r)
{
    decided(r, SW_PARTITIONER_MURMUR2);
    r->part_snaps = true;
    snprintf(r->part_why, sizeof(r->part_why),
             "the group's snapshots predate the record: kept, so that no job moves, and recorded "
             "(repartition.partitioner changes it)");
    if (write_record(r, r->part)) r->part_recorded = true;
}

void sw_run_keying_start(run_t *r)
{
    sw_rep_partitioner_t set = r->set->delivery.repartition_partitioner;
    decided(r, SW_PARTITIONER_MURMUR2);
    if (set != SW_REP_PARTITIONER_AUTO) {
        decided(r, (sw_partitioner_t)(set - 1));
        snprintf(r->part_why, sizeof(r->part_why), "as set (repartition.partitioner)");
        return;
    }
    sw_partitioner_t p;
    int rec = read_record(r, &p);
    if (rec == 1) {
        decided(r, p);
        snprintf(r->part_why, sizeof(r->part_why),
                 "the group's record (%s.mirror), detected from its producers' keys",
                 r->set->kafka.group_id);
        return;
    }
    int snaps = rec == 0 ? have_snapshots(r) : -1;
    if (snaps == 1) {
        by_snapshots(r);
        return;
    }
    r->part_pending = true;
    r->part_unread = snaps < 0;
    r->part_t0 = sw_clock_ms();
    r->part_seen = -1;
    snprintf(r->part_why, sizeof(r->part_why),
             "%s: the owner of %s [0] detects it from the keys it reads and records it; "
             "nothing is analysed until then",
             r->part_unread ? "the group's record could not be read yet" : "a new group",
             r->set->kafka.input_topics.v[0]);
}

/* Distinct keys by bytes (qsort). */
typedef struct skey_s {
    const void *key;
    size_t len;
    int32_t partition;
} skey_t;

static int skey_cmp(const void *a, const void *b)
{
    const skey_t *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->len ? memcmp(x->key, y->key, x->len) : 0;
}

/* The latest TOPIC_SAMPLE messages of every input partition, read with the
 * state reader (which no restore uses meanwhile: both run on the main
 * thread): the decider's own partitions may hold few keys or none while
 * the other members' hold input. @returns how many are in @p got. */
static size_t sample_topic(run_t *r, rd_kafka_message_t **got, size_t max)
{
    const char *topic = r->set->kafka.input_topics.v[0];
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(r->in_parts);
    int64_t want = 0;
    for (int q = 0; q < r->in_parts; q++) {
        int64_t lo, hi;
        if (rd_kafka_query_watermark_offsets(r->reader, topic, q, &lo, &hi, 2000) || hi <= lo)
            continue;
        int64_t from = hi - lo > TOPIC_SAMPLE ? hi - TOPIC_SAMPLE : lo;
        rd_kafka_topic_partition_list_add(l, topic, q)->offset = from;
        want += hi - from;
    }
    size_t n = 0;
    if (l->cnt) {
        rd_kafka_assign(r->reader, l);
        int64_t deadline = sw_clock_ms() + 1500;
        while ((int64_t)n < want && n < max && sw_clock_ms() < deadline) {
            rd_kafka_message_t *m = rd_kafka_consumer_poll(r->reader, 100);
            if (!m) continue;
            if (m->err) rd_kafka_message_destroy(m);
            else got[n++] = m;
        }
        rd_kafka_assign(r->reader, NULL);
    }
    rd_kafka_topic_partition_list_destroy(l);
    return n;
}

/* Partition 0's owner, undecided: choose from the keys its FIFOs hold,
 * and, when they do not tell, the keys of the input topic's latest
 * messages. */
static void decide(run_t *r, int64_t now)
{
    skey_t *keys = sw_calloc(SAMPLE_KEYS, sizeof(*keys));
    size_t nk = 0, ntop = 0;
    uint64_t seen = 0;
    rd_kafka_message_t **top = NULL;
    for (size_t i = 0; i < r->nparts; i++) {
        const part_t *p = r->parts[i];
        if (!p || !p->local) continue;
        for (size_t k = 0; k < p->fifo.n; k++) {
            const rd_kafka_message_t *m = p->fifo.m[(p->fifo.head + k) % p->fifo.cap];
            if (m->err) continue;
            seen++;
            if (m->key && nk < SAMPLE_KEYS) keys[nk++] = (skey_t){m->key, m->key_len, m->partition};
        }
    }
    uint32_t fit[SW_PARTITIONER__CNT], distinct;
    bool clear;
    sw_partitioner_t p;
    for (int pass = 0;; pass++) {
        qsort(keys, nk, sizeof(*keys), skey_cmp);
        memset(fit, 0, sizeof(fit));
        distinct = 0;
        for (size_t k = 0; k < nk; k++) {
            if (k && !skey_cmp(&keys[k - 1], &keys[k])) continue;
            distinct++;
            unsigned bits = sw_partition_fits(keys[k].key, keys[k].len, keys[k].partition,
                                              r->rep_parts);
            for (int c = 0; c < SW_PARTITIONER__CNT; c++) fit[c] += (bits >> c) & 1u;
        }
        p = sw_partitioner_choose(fit, distinct, &clear);
        /* Unclear from its own input: the whole topic's latest keys once
         * in a while (the input of the other members' partitions too). */
        if (pass || clear || r->rep_parts == 1 || now - r->part_sampled < TOPIC_SAMPLE_MS) break;
        r->part_sampled = now;
        size_t max = (size_t)r->in_parts * TOPIC_SAMPLE;
        top = sw_calloc(max ? max : 1, sizeof(*top));
        ntop = sample_topic(r, top, max);
        for (size_t k = 0; k < ntop; k++) {
            seen++;
            if (top[k]->key && nk < SAMPLE_KEYS)
                keys[nk++] = (skey_t){top[k]->key, top[k]->key_len, top[k]->partition};
        }
    }
    for (size_t k = 0; k < ntop; k++) rd_kafka_message_destroy(top[k]);
    free(top);
    free(keys);
    if (seen && r->part_seen < 0) r->part_seen = now;
    int64_t waited = now - r->part_t0, fed = r->part_seen < 0 ? -1 : now - r->part_seen;
    const char *how;
    if (r->rep_parts == 1) how = "one partition: every partitioner places every key there";
    else if (clear) how = "it places them where they are, the others do not";
    else if (fit[p] == distinct && fed >= DECIDE_TIE_MS)
        how = distinct ? "a tie after 2 s of input: the first of murmur2, crc32, fnv1a"
                       : "2 s of input without keys: Kafka's default";
    else if (fed >= DECIDE_SEEN_MS) how = "the best fit after 10 s of input";
    else if (waited >= DECIDE_ANYWAY_MS) how = "no input here for 30 s: Kafka's default";
    else return; /* more input first */
    if (!write_record(r, p)) return;
    decided(r, p);
    r->part_recorded = true;
    snprintf(r->part_why, sizeof(r->part_why), "detected from %u distinct keys and recorded",
             distinct);
    sw_log(r->log, SW_LOG_INFO,
           "repartition=auto: the producers place job_id keys with %s (of %u distinct keys read, "
           "murmur2 places %u where they are, crc32 %u, fnv1a %u: %s); recorded for group %s, "
           "whose members all use it from now on",
           sw_partitioner_name(p), distinct, fit[SW_PARTITIONER_MURMUR2], fit[SW_PARTITIONER_CRC32],
           fit[SW_PARTITIONER_FNV1A], how, r->set->kafka.group_id);
}

void sw_run_keying_tick(run_t *r, int64_t now)
{
    if (!r->rep_auto || !r->mirror) return;
    if (now - r->part_poll < (r->part_pending || !r->part_recorded ? POLL_MS : REFRESH_MS)) return;
    r->part_poll = now;
    const part_t *p0 = sw_run_part_find(r, r->set->kafka.input_topics.v[0], 0);
    if (!r->part_pending) {
        if ((p0 || r->part_snaps) && write_record(r, r->part)) r->part_recorded = true;
        return;
    }
    sw_partitioner_t p;
    int rec = read_record(r, &p);
    if (rec == 1) {
        decided(r, p);
        snprintf(r->part_why, sizeof(r->part_why),
                 "the group's record, written by the owner of "
                 "partition 0");
        sw_log(r->log, SW_LOG_INFO,
               "repartition=auto: the group recorded %s as its producers' partitioner; analysing",
               sw_partitioner_name(p));
        return;
    }
    if (r->part_unread) { /* the start could not tell a new group: the snapshot rule now */
        int snaps = rec == 0 ? have_snapshots(r) : -1;
        if (snaps < 0) return;
        r->part_unread = false;
        if (snaps == 1) {
            by_snapshots(r);
            sw_log(r->log, SW_LOG_INFO, "repartition=auto: murmur2 (%s); analysing", r->part_why);
            return;
        }
    }
    if (p0) decide(r, now);
}

void sw_run_keying_warn(run_t *r)
{
    if (!r->rep_auto || r->part_pending || r->jk_warned || r->jk_in < WARN_AFTER ||
        r->jk_fwd * 2 <= r->jk_in)
        return;
    r->jk_warned = true;
    int best = 0;
    for (int c = 1; c < SW_PARTITIONER__CNT; c++)
        if (r->jk_fit[c] > r->jk_fit[best]) best = c;
    char fix[400];
    if (best != (int)r->part && r->jk_fit[best] * 10 >= r->jk_fwd * 9)
        snprintf(fix, sizeof(fix),
                 "%llu of them are where %s puts them: set repartition.partitioner=%s on every "
                 "member (it moves every job: change it while no storm is open), or have the "
                 "producers use %s (docs/producing.md)",
                 (unsigned long long)r->jk_fit[best], sw_partitioner_name((sw_partitioner_t)best),
                 sw_partitioner_name((sw_partitioner_t)best), sw_partitioner_name(r->part));
    else
        snprintf(fix, sizeof(fix),
                 "no one partitioner places them where they are at %d partitions: the producers "
                 "mix partitioners, pick partitions themselves, or the partition count changed "
                 "(docs/producing.md)",
                 r->rep_parts);
    sw_log(r->log, SW_LOG_WARN,
           "%s: %llu of %llu messages keyed by their job_id took the hop through %s because %s "
           "(the group's partitioner, %s) does not place them where they are; %s",
           r->set->kafka.input_topics.v[0], (unsigned long long)r->jk_fwd,
           (unsigned long long)r->jk_in, r->rep_topic, sw_partitioner_name(r->part), r->part_why,
           fix);
}
