/*
 * Idle expiry with repartition=on (see sw_run.c, sw_run_int.h): a job's
 * silence counts only while its input is being forwarded.
 *
 * With repartition=on a job's events reach its engine through the
 * forwarders of the input partitions, which may live in another instance.
 * When a forwarder dies (kill -9), its input waits until the group gives
 * the partition to a member again and that member restores it:
 * session.timeout.ms and more. The engine, alive elsewhere, saw silence:
 * with job.idle.ms shorter than that outage it summarised a job whose
 * events were still to come, and the rest of the job opened a second one
 * (a second summary; records of the first one's episodes lost). With
 * repartition=off the engine dies with its input and its restored jobs
 * start idle from the restore, so no run was ever told apart from an
 * uninterrupted one by a kill.
 *
 * So the engines' idleness is measured in *forwarded time* F: a moment T
 * such that every input message produced before T has been forwarded,
 * acknowledged and read by this instance's engines. A barrier finds it:
 *  1. at T, the end offset of every input partition (all of the group's
 *     input, whoever forwards it);
 *  2. wait until the group's committed offsets reach those ends (a
 *     forwarder commits only offsets whose copies were acknowledged);
 *  3. then the end offsets of this instance's repartition partitions, and
 *     wait until its engines have read that far; then F = T.
 * One barrier at a time, looked at once a second (at most four bounded
 * requests: the input's partitions, their ends, the committed offsets,
 * the repartition partitions' ends). A job expires when it has been
 * idle for job.idle.ms in forwarded time, or for 10 x job.idle.ms by the
 * wall clock (an input partition that nobody forwards must not keep every
 * job forever). While this instance's engines hold no job, F is now.
 */
#include "sw_run_int.h"
#include "sw_run_idle.h"
#include "sw_run_out.h"

#include <regex.h>

#define IDLE_WALL_FACTOR 10 /* a job expires after this many job.idle.ms regardless */
#define IDLE_REQ_MS 1000    /* each request of a barrier: bounded, the loop waits on it */
#define INPUTS_MS 30000     /* the input topics' partitions are looked up again after this */

struct sw_fwdclock_s {
    int64_t until_ms;                        /* F (sw_clock_ms); -1 none yet */
    int64_t t0;                              /* the pending barrier's moment T; -1 none */
    rd_kafka_topic_partition_list_t *ends;   /* step 2: input partitions and their ends at T */
    rd_kafka_topic_partition_list_t *reads;  /* step 3: our engine partitions, ends to read */
    rd_kafka_topic_partition_list_t *inputs; /* the input partitions, as of inputs_ms */
    int64_t inputs_ms;
};

static void barrier_drop(sw_fwdclock_t *fc)
{
    if (fc->ends) rd_kafka_topic_partition_list_destroy(fc->ends);
    if (fc->reads) rd_kafka_topic_partition_list_destroy(fc->reads);
    fc->ends = fc->reads = NULL;
    fc->t0 = -1;
}

void sw_run_idle_free(run_t *r)
{
    if (!r->fwdclock) return;
    barrier_drop(r->fwdclock);
    if (r->fwdclock->inputs) rd_kafka_topic_partition_list_destroy(r->fwdclock->inputs);
    free(r->fwdclock);
    r->fwdclock = NULL;
}

/* Whether @p topic is one of input.topics: a name, or a match of one of
 * the @p nre compiled ^regex entries @p re. */
static bool is_input(const run_t *r, const regex_t *re, size_t nre, const char *topic)
{
    const sw_conf_strs_t *in = &r->set->kafka.input_topics;
    for (size_t i = 0; i < in->n; i++)
        if (in->v[i][0] != '^' && !strcmp(in->v[i], topic)) return true;
    for (size_t i = 0; i < nre; i++)
        if (regexec(&re[i], topic, 0, NULL, 0) == 0) return true;
    return false;
}

/* Every partition of the input topics (the cluster's metadata, asked
 * again every INPUTS_MS), at its end offset now (step 1). @returns NULL
 * when the cluster did not answer. */
static rd_kafka_topic_partition_list_t *input_ends(run_t *r, int64_t now)
{
    sw_fwdclock_t *fc = r->fwdclock;
    if (!fc->inputs || now - fc->inputs_ms >= INPUTS_MS) {
        const rd_kafka_metadata_t *md = NULL;
        if (rd_kafka_metadata(r->consumer, 1, NULL, &md, IDLE_REQ_MS)) return NULL;
        const sw_conf_strs_t *names = &r->set->kafka.input_topics;
        regex_t *re = sw_calloc(names->n + 1, sizeof(*re));
        size_t nre = 0;
        for (size_t i = 0; i < names->n; i++) /* as the consumer subscribed them */
            if (names->v[i][0] == '^' && !regcomp(&re[nre], names->v[i], REG_EXTENDED | REG_NOSUB))
                nre++;
        rd_kafka_topic_partition_list_t *in = rd_kafka_topic_partition_list_new(16);
        for (int t = 0; t < md->topic_cnt; t++) {
            const rd_kafka_metadata_topic_t *mt = &md->topics[t];
            if (mt->err || !strcmp(mt->topic, r->rep_topic) || !is_input(r, re, nre, mt->topic))
                continue;
            for (int q = 0; q < mt->partition_cnt; q++)
                rd_kafka_topic_partition_list_add(in, mt->topic, mt->partitions[q].id);
        }
        for (size_t i = 0; i < nre; i++) regfree(&re[i]);
        free(re);
        rd_kafka_metadata_destroy(md);
        if (fc->inputs) rd_kafka_topic_partition_list_destroy(fc->inputs);
        fc->inputs = in;
        fc->inputs_ms = now;
    }
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_copy(fc->inputs);
    for (int i = 0; i < l->cnt; i++) l->elems[i].offset = RD_KAFKA_OFFSET_END;
    if (l->cnt && rd_kafka_offsets_for_times(r->consumer, l, IDLE_REQ_MS)) {
        rd_kafka_topic_partition_list_destroy(l);
        return NULL;
    }
    return l;
}

/* How far partition @p c of the group is done: its committed offset, or
 * the input offset its committed snapshot is as of, when later (a
 * partition that analyses with repartition=auto commits the oldest offset
 * its windows need, far behind what it has done). */
static int64_t done_up_to(const rd_kafka_topic_partition_t *c)
{
    sw_snapref_t ref;
    char why[200];
    if (sw_snapmeta_parse(c->metadata, c->metadata_size, &ref, why, sizeof(why)) == SW_OK &&
        ref.x > c->offset)
        return ref.x;
    return c->offset;
}

/* Step 2: the group's committed offsets have reached @p ends. */
static bool forwarded(run_t *r, const rd_kafka_topic_partition_list_t *ends)
{
    if (!ends->cnt) return true;
    rd_kafka_topic_partition_list_t *c = rd_kafka_topic_partition_list_copy(ends);
    bool ok = rd_kafka_committed(r->consumer, c, IDLE_REQ_MS) == RD_KAFKA_RESP_ERR_NO_ERROR;
    for (int i = 0; ok && i < c->cnt; i++)
        ok = !ends->elems[i].err && !c->elems[i].err &&
             (ends->elems[i].offset <= 0 || done_up_to(&c->elems[i]) >= ends->elems[i].offset);
    rd_kafka_topic_partition_list_destroy(c);
    return ok;
}

/* Step 3: this instance's engine partitions at their end offsets now. */
static rd_kafka_topic_partition_list_t *engine_ends(run_t *r)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(8);
    for (size_t i = 0; i < r->nparts; i++) {
        const part_t *p = r->parts[i];
        if (!p || p->forward) continue;
        rd_kafka_topic_partition_list_add(l, p->topic, p->partition)->offset = RD_KAFKA_OFFSET_END;
        if (p->local) /* repartition=auto: and the repartition partition it reads */
            rd_kafka_topic_partition_list_add(l, r->rep_topic, p->partition)->offset =
                RD_KAFKA_OFFSET_END;
    }
    if (l->cnt && rd_kafka_offsets_for_times(r->consumer, l, IDLE_REQ_MS)) {
        rd_kafka_topic_partition_list_destroy(l);
        return NULL;
    }
    return l;
}

/* Step 3 done: every engine partition still ours has read up to its end. */
static bool read_up(run_t *r, const rd_kafka_topic_partition_list_t *reads)
{
    for (int i = 0; i < reads->cnt; i++) {
        const rd_kafka_topic_partition_t *tp = &reads->elems[i];
        bool rep = r->rep_auto && !strcmp(tp->topic, r->rep_topic);
        part_t *p = rep ? NULL : sw_run_part_find(r, tp->topic, tp->partition);
        for (size_t k = 0; rep && k < r->nparts && !p; k++)
            if (r->parts[k] && r->parts[k]->local && r->parts[k]->partition == tp->partition)
                p = r->parts[k];
        int64_t next = p ? (rep ? p->rnext : p->next) : -1;
        /* A partition restoring or not yet read holds no job that can
         * expire (its restored jobs are idle from the restore on). */
        if (p && p->mode == PM_NORMAL && next >= 0 && !tp->err && next < tp->offset) return false;
    }
    return true;
}

static bool engines_hold_jobs(run_t *r)
{
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p || p->forward || !p->det) continue;
        sw_detect_stats_t st;
        sw_detect_stats(p->det, &st);
        if (st.jobs) return true;
    }
    return false;
}

void sw_run_idle_tick(run_t *r, int64_t now)
{
    if (!r->rep_topic) return;
    if (!r->fwdclock) {
        r->fwdclock = sw_calloc(1, sizeof(*r->fwdclock));
        r->fwdclock->until_ms = -1;
        r->fwdclock->t0 = -1;
    }
    sw_fwdclock_t *fc = r->fwdclock;
    if (!engines_hold_jobs(r)) { /* nothing can expire: jobs to come are newer than now */
        barrier_drop(fc);
        fc->until_ms = now;
        return;
    }
    if (fc->t0 < 0) {
        fc->ends = input_ends(r, now);
        if (!fc->ends) return;
        fc->t0 = now;
    }
    if (fc->ends) {
        if (!forwarded(r, fc->ends)) return;
        rd_kafka_topic_partition_list_destroy(fc->ends);
        fc->ends = NULL;
        fc->reads = engine_ends(r);
        if (!fc->reads) {
            barrier_drop(fc); /* start again */
            return;
        }
    }
    if (fc->reads && read_up(r, fc->reads)) {
        if (fc->t0 > fc->until_ms) fc->until_ms = fc->t0;
        barrier_drop(fc);
    }
}

int64_t sw_run_idle_now(const run_t *r, int64_t now)
{
    if (!r->rep_topic) return now;
    int64_t wall = now - (IDLE_WALL_FACTOR - 1) * r->set->engine.job_idle_ms;
    int64_t f = r->fwdclock ? r->fwdclock->until_ms : -1;
    return f > wall ? f : wall;
}
