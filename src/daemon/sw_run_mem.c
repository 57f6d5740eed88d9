/*
 * Memory (see sw_run_int.h): one budget for the process, max.memory.bytes.
 *
 * Every engine accounts its state into one pool (sw_detect_pool_t, atomic
 * byte and job counts), whichever worker feeds it. An engine makes room
 * itself only by evicting its own jobs without evidence (no rank with two
 * samples: what a made-up job id costs). When that is not enough, the
 * worker stops the partition's range before the message (like a record
 * that must be sent first) with a request for the bytes it needs; before
 * the next pass, on the main thread, with every engine at rest, the
 * request is served here from the least valuable jobs of every engine:
 * jobs without evidence first, from the engines that hold the most, then
 * jobs with samples but no rising run and no open episode, fewest samples
 * first, each named in a WARN and counted
 * (stormwatch_jobs_evicted_with_evidence_total). A job with a rising run
 * or an open episode is never evicted. The message is then fed again: it
 * is taken, or refused for good (dead-lettered as limit with a reason
 * that says what was full, counted in stormwatch_jobs_refused_total and
 * said in a WARN once a second at most).
 *
 * Once a second (sw_run_memory_tick), what each engine holds beside its
 * jobs (job tables, the window pool's free slots) joins the account, and
 * state that grew past the budget without a new job (windows filling) is
 * brought back the same way.
 *
 * At start (sw_run_prefetch_fit), what librdkafka may prefetch
 * (queued.max.messages.kbytes per partition, over every partition this
 * member may be assigned, input and repartition) and the engines' budget
 * are checked against the container's memory limit (sw_cgroup_prefetch_kb):
 * when they do not fit, the prefetch is lowered, with a WARN.
 */
#include "sw_run_int.h"
#include "sw_run_mem.h"

#include "sw_cgroup.h"

/* Room made beyond a request, so that the next new jobs of a flood find
 * it without a request each: 1/64 of the budget, taken from jobs without
 * evidence only. */
static size_t slack_of(const run_t *r)
{
    return (size_t)(r->pool.limit / 64);
}

static void on_evict(void *opaque, const sw_detect_evictee_t *e)
{
    run_t *r = opaque;
    if (e->evidence == 0) return; /* one sample a rank: what a flood costs */
    sw_log_limited(r->log, &r->lim_mem, SW_LOG_WARN,
                   "max.memory.bytes (%lld) is full: job \"%.*s\" (%zu ranks, %llu samples, no "
                   "rising run or open episode) evicted to make room, nothing with less evidence "
                   "was left; its next samples start it again (raise max.memory.bytes and the "
                   "container's memory, or find what floods the input with job ids)",
                   (long long)r->pool.limit,
                   e->has_job_id ? (int)(e->job_id_len > 200 ? 200 : e->job_id_len) : 4,
                   e->has_job_id ? e->job_id : "null", e->ranks, (unsigned long long)e->retained);
}

static int64_t pool_used(const run_t *r)
{
    return atomic_load_explicit(&((run_t *)r)->pool.used, memory_order_relaxed);
}

static int by_accounted(const void *a, const void *b)
{
    size_t x = sw_detect_accounted((*(part_t *const *)a)->det);
    size_t y = sw_detect_accounted((*(part_t *const *)b)->det);
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Bring the pool to @p want bytes under the budget: jobs without evidence
 * down to @p slack more, from the engines that account the most; then jobs
 * with samples (no rising run, no open episode), the fewest samples of any
 * engine first, down to @p want only. Main thread, every engine at rest.
 * @returns whether the room is there (else nothing more may go). */
static bool make_room(run_t *r, size_t want, size_t slack)
{
    int64_t limit = r->pool.limit;
    int64_t target1 = limit - (int64_t)want, target0 = target1 - (int64_t)slack;
    if (pool_used(r) <= target0) return true;
    part_t **v = sw_malloc((r->nparts + 1) * sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; i < r->nparts; i++)
        if (r->parts[i] && r->parts[i]->det) v[n++] = r->parts[i];
    qsort(v, n, sizeof(*v), by_accounted);
    for (size_t i = 0; i < n && pool_used(r) > target0; i++)
        sw_detect_evict_bytes(v[i]->det, 0, (size_t)(pool_used(r) - target0), on_evict, r);
    while (pool_used(r) > target1) {
        part_t *best = NULL;
        uint64_t bv = UINT64_MAX, val;
        for (size_t i = 0; i < n; i++)
            if (sw_detect_evict_value(v[i]->det, 1, &val) && (!best || val < bv)) {
                best = v[i];
                bv = val;
            }
        if (!best || !sw_detect_evict_bytes(best->det, 1, 1, on_evict, r)) break;
    }
    free(v);
    return pool_used(r) <= target1;
}

void sw_run_mem_serve(run_t *r, void *const *jobs, size_t njobs)
{
    if (r->pool.limit <= 0) return;
    for (size_t i = 0; i < njobs; i++) {
        part_t *p = jobs[i];
        if (!p->w.room) continue;
        /* Room made may be taken by another engine in the next pass: the
         * event asks again then, unless nothing more could go. */
        sw_detect_room_served(p->det, !make_room(r, p->w.room, slack_of(r)));
        p->w.room = 0;
    }
}

void sw_run_memory_tick(run_t *r)
{
    uint64_t total = 0, refused = 0, jobs = 0;
    for (size_t i = 0; i < r->nparts; i++) {
        part_t *p = r->parts[i];
        if (!p || !p->det) continue;
        sw_detect_stats_t st;
        sw_detect_stats(p->det, &st);
        total += st.bytes;
        refused += st.refused_jobs;
        jobs += st.jobs;
        /* What the engine holds beside its jobs (job tables, the window
         * pool's free slots, the arena) counts too, as of this second. */
        size_t acct = sw_detect_accounted(p->det);
        int64_t fixed = st.bytes > acct ? (int64_t)(st.bytes - acct) : 0;
        if (r->pool.limit > 0)
            atomic_fetch_add_explicit(&r->pool.used, fixed - p->mem_fixed, memory_order_relaxed);
        p->mem_fixed = fixed;
    }
    if (r->pool.limit > 0) {
        int64_t used = pool_used(r);
        bool over = used > r->pool.limit;
        if (over != r->over_budget)
            sw_log(r->log, over ? SW_LOG_WARN : SW_LOG_INFO,
                   over ? "engine state %lld bytes is over max.memory.bytes (%lld): the jobs "
                          "with the least evidence of every engine are evicted"
                        : "engine state %lld bytes is back under max.memory.bytes (%lld)",
                   (long long)used, (long long)r->pool.limit);
        r->over_budget = over;
        if (over) make_room(r, 0, slack_of(r));
        /* What refusals cost, once a second at most. Engines come and go
         * with partitions: a smaller sum starts again. */
        if (refused < r->mem_refused) r->mem_refused = 0;
        if (refused > r->mem_refused)
            sw_log(r->log, SW_LOG_WARN,
                   "max.memory.bytes (%lld) is full: %llu new job%s refused (dead-lettered as "
                   "limit) since the last second; %lld bytes hold %llu jobs, each with samples "
                   "or a rising run or an open episode that were not evicted for them (raise "
                   "max.memory.bytes and the container's memory, or find what floods the input "
                   "with job ids)",
                   (long long)r->pool.limit, (unsigned long long)(refused - r->mem_refused),
                   refused - r->mem_refused == 1 ? "" : "s", (long long)pool_used(r),
                   (unsigned long long)jobs);
        r->mem_refused = refused;
    }
    if (total > r->trimmed_at) r->trimmed_at = total; /* the high mark since the last trim */
    if (r->trimmed_at > total + (32u << 20)) {
        malloc_trim(0);
        r->trimmed_at = total;
    }
}

void sw_run_mem_attach(run_t *r, part_t *p)
{
    if (p->det && r->pool.limit > 0) sw_detect_set_pool(p->det, &r->pool);
}

void sw_run_mem_detach(run_t *r, part_t *p)
{
    if (r->pool.limit > 0 && p->mem_fixed)
        atomic_fetch_sub_explicit(&r->pool.used, p->mem_fixed, memory_order_relaxed);
    p->mem_fixed = 0;
}

/* ---- prefetch against the container's limit ------------------------------- */

int64_t sw_run_prefetch_fit(run_t *r, int64_t kb, int partitions)
{
    int64_t limit = sw_cgroup_memory_limit("/sys/fs/cgroup");
    char why[600];
    int64_t fit = sw_cgroup_prefetch_kb(limit, r->set->engine.max_memory_bytes, kb, partitions, why,
                                        sizeof(why));
    if (fit != kb) sw_log(r->log, SW_LOG_WARN, "%s", why);
    else if (limit > 0)
        sw_log(r->log, SW_LOG_DEBUG,
               "prefetch %lld kB x %d partitions + max.memory.bytes %lld fit the container's "
               "memory limit %lld",
               (long long)kb, partitions, (long long)r->set->engine.max_memory_bytes,
               (long long)limit);
    return fit;
}
