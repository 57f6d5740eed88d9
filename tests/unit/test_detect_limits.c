/*
 * The stream engine's limits (issues 28 and 35): floods of made-up job ids
 * evicted before real jobs, the job pool shared across engines (a young
 * many-rank job kept), and the memory budget held where memory grows.
 */
#include "detect_streams.h"

/* A flood of made-up job ids interleaved with real jobs, with max.jobs far
 * below the flood: fakes of 1, 2 and 8 ranks (one sample per rank, the
 * cheapest way to look like a job) are evicted to make room, never a job
 * that reports like a real one, and the real jobs' records are exactly
 * those of a run without the flood (issue 28: two-rank fakes used to be
 * kept and starve real jobs). Then the memory-budget path: under pressure
 * a new job evicts the least recently active job with the least evidence
 * (no rank with two samples; then no rising run and no open episode), and
 * is refused only when every candidate has a rising run. */
static void test_flood_evicts_fake_jobs(void **state)
{
    (void)state;
    uint64_t evicted = 0;
    size_t compared = 0;
    static const int fake_ranks[] = {1, 2, 8};
    for (uint64_t seed = 1; seed <= 6; seed++) {
        int franks = fake_ranks[seed % 3];
        sw_params_t p = sw_params_default();
        p.window_samples = 8;
        p.spike_min_bytes = 500;
        outlog_t want = {0}, got = {0};
        for (int flood = 0; flood < 2; flood++) {
            sw_params_t q = p;
            q.max_jobs = flood ? 64 : 0;
            sw_detector_t *det = sw_detect_new(q);
            run_flooded(det, seed, flood ? 4 : 0, franks, flood ? &got : &want, NULL);
            sw_detect_stats_t st;
            sw_detect_stats(det, &st);
            if (flood) {
                SW_ASSERT(st.jobs <= 64, "%llu jobs", (unsigned long long)st.jobs);
                SW_ASSERT_I64(st.limit_rejects, 0);
                evicted += st.evicted;
            }
            sw_detect_destroy(det);
        }
        SW_ASSERT(got.n == want.n, "fakes of %d ranks: %zu records of real jobs, want %zu", franks,
                  got.n, want.n);
        for (size_t k = 0; k < want.n; k++) SW_ASSERT_STREQ(got.v[k], want.v[k]);
        compared += want.n;
        out_clear(&want);
        out_clear(&got);
    }
    printf(
        "flood: %zu records of real jobs equal with and without 72,000 flood jobs of 1, 2 and "
        "8 ranks; %llu evicted\n",
        compared, (unsigned long long)evicted);
    SW_ASSERT_TRUE(compared > 20);
    SW_ASSERT_TRUE(evicted > 60000);

    /* Memory pressure: the least evidence goes first, whatever the rank count. */
    sw_params_t p = sw_params_default();
    p.spike_min_bytes = 500;
    sw_detector_t *det = sw_detect_new(p);
    sw_event_t ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = SW_EV_SAMPLE;
    ev.event_type = sw_str("sample");
    ev.has_job_id = true;
    ev.host = sw_str("h");
    ev.has_device_used = true;
    ev.world_size = 2;
    ev.sampling_interval_ms = 100;
    const sw_record_t *rec;
    char err[256];
    int64_t off = 0;
#define FEED(id, rk, ts, used, want)                                                          \
    do {                                                                                      \
        ev.job_id = sw_str(id);                                                               \
        ev.rank = (rk);                                                                       \
        ev.timestamp_ns = (ts);                                                               \
        ev.device_used_bytes = (used);                                                        \
        SW_ASSERT_I64(sw_detect_feed_at(det, &ev, 0, off++, &rec, err, sizeof(err)), (want)); \
    } while (0)
    for (int t = 1; t <= 3; t++) FEED("storm", 0, t, t == 3 ? 5000 : 1000, SW_OK); /* rising run */
    for (int t = 1; t <= 3; t++)
        for (int r = 0; r < 2; r++) FEED("quiet", r, t, 1000, SW_OK); /* two samples a rank */
    for (int r = 0; r < 2; r++) FEED("fake2", r, 1, 1000, SW_OK);     /* one sample a rank */
    sw_detect_set_pressure(det, true);
    sw_analysis_t a;
    FEED("new1", 0, 1, 1000, SW_OK); /* evicts fake2, not the older quiet */
    SW_ASSERT_FALSE(sw_detect_analysis(det, "fake2", &a));
    SW_ASSERT_TRUE(sw_detect_analysis(det, "quiet", &a));
    FEED("new2", 0, 1, 1000, SW_OK); /* evicts new1 */
    SW_ASSERT_FALSE(sw_detect_analysis(det, "new1", &a));
    FEED("new2", 0, 2, 1000, SW_OK); /* new2 has evidence now */
    FEED("new3", 0, 1, 1000, SW_OK); /* no job without evidence: the oldest quiet one goes */
    SW_ASSERT_FALSE(sw_detect_analysis(det, "quiet", &a));
    SW_ASSERT_TRUE(sw_detect_analysis(det, "new2", &a));
    SW_ASSERT_TRUE(sw_detect_analysis(det, "storm", &a));
    sw_detect_stats_t st;
    sw_detect_stats(det, &st);
    SW_ASSERT_I64(st.evicted, 3);
    SW_ASSERT_I64(st.jobs, 3); /* storm, new2, new3 */
    sw_detect_destroy(det);
    /* Only a job with a rising run: a new job is refused, then taken
     * once the pressure is off. */
    det = sw_detect_new(p);
    for (int t = 1; t <= 3; t++) FEED("storm", 0, t, t == 3 ? 5000 : 1000, SW_OK);
    sw_detect_set_pressure(det, true);
    FEED("last", 0, 1, 1000, SW_ERR_LIMIT);
    SW_ASSERT_NOT_NULL(strstr(err, "max.memory.bytes"));
    sw_detect_set_pressure(det, false);
    FEED("last", 0, 1, 1000, SW_OK);
#undef FEED
    sw_detect_destroy(det);
}

static void note_evictee(void *opaque, const sw_detect_evictee_t *e)
{
    int *evidence = opaque;
    *evidence = e->evidence;
}

/* One budget for two engines (issue 35): engine B, whose jobs all have
 * evidence, asks for room for a new job instead of refusing it or
 * evicting its own; the room comes from engine A's one-sample jobs, then
 * from a job with samples (fewest first), never from a rising run; with
 * nothing left the job is refused for good, saying what was full. */
static void test_pool_across_engines(void **state)
{
    (void)state;
    sw_params_t p = sw_params_default();
    p.spike_min_bytes = 500;
    sw_detector_t *a = sw_detect_new(p), *b = sw_detect_new(p);
    sw_detect_pool_t pool;
    memset(&pool, 0, sizeof(pool));
    sw_event_t ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = SW_EV_SAMPLE;
    ev.event_type = sw_str("sample");
    ev.has_job_id = true;
    ev.host = sw_str("h");
    ev.has_device_used = true;
    ev.world_size = 1;
    ev.sampling_interval_ms = 100;
    const sw_record_t *rec;
    char err[256], id[32];
    int64_t off = 0;
#define FEEDD(det, jid, ts, used)                                                                 \
    (ev.job_id = sw_str(jid), ev.rank = 0, ev.timestamp_ns = (ts), ev.device_used_bytes = (used), \
     sw_detect_feed_at((det), &ev, 0, off++, &rec, err, sizeof(err)))
    /* B: a job with a rising run and a quiet one with samples. */
    for (int t = 1; t <= 3; t++) SW_ASSERT_I64(FEEDD(b, "storm", t, t == 3 ? 5000 : 1000), SW_OK);
    for (int t = 1; t <= 3; t++) SW_ASSERT_I64(FEEDD(b, "quiet", t, 1000), SW_OK);
    /* A: 50 one-sample jobs. */
    for (int k = 0; k < 50; k++) {
        snprintf(id, sizeof(id), "f%d", k);
        SW_ASSERT_I64(FEEDD(a, id, 1, 1000), SW_OK);
    }
    sw_detect_set_pool(a, &pool);
    sw_detect_set_pool(b, &pool);
    SW_ASSERT_I64(pool.used, (int64_t)(sw_detect_accounted(a) + sw_detect_accounted(b)));
    SW_ASSERT_I64(pool.jobs, 52);
    pool.limit = pool.used; /* full */
    SW_ASSERT_I64(FEEDD(b, "new", 1, 1000), SW_ERR_LIMIT);
    size_t want = sw_detect_room_wanted(b);
    SW_ASSERT_TRUE(want > 0);
    sw_analysis_t an;
    SW_ASSERT_TRUE(sw_detect_analysis(b, "quiet", &an)); /* B evicted nothing of its own */
    int evidence = -1;
    SW_ASSERT_TRUE(sw_detect_evict_bytes(a, 0, SIZE_MAX, want, note_evictee, &evidence) >= want);
    SW_ASSERT_I64(evidence, 0);
    sw_detect_room_served(b, false);
    off--;
    SW_ASSERT_I64(FEEDD(b, "new", 1, 1000), SW_OK);
    SW_ASSERT_I64(sw_detect_room_wanted(b), 0);
    /* No job without evidence anywhere: the job with the fewest samples. */
    uint64_t value;
    SW_ASSERT_TRUE(sw_detect_evict_bytes(a, 0, SIZE_MAX, SIZE_MAX, NULL, NULL) > 0);
    SW_ASSERT_FALSE(sw_detect_evict_value(a, 0, &value));
    SW_ASSERT_TRUE(sw_detect_evict_value(b, 1, &value));
    SW_ASSERT_I64(value, 3); /* quiet's samples ("new" has one: evidence 0) */
    SW_ASSERT_TRUE(sw_detect_evict_bytes(b, 1, SIZE_MAX, 1, note_evictee, &evidence) > 0);
    SW_ASSERT_I64(evidence, 1);
    SW_ASSERT_FALSE(sw_detect_analysis(b, "quiet", &an));
    SW_ASSERT_TRUE(sw_detect_analysis(b, "storm", &an)); /* a rising run never goes */
    SW_ASSERT_FALSE(sw_detect_evict_value(b, 1, &value));
    sw_detect_stats_t st;
    sw_detect_stats(b, &st);
    SW_ASSERT_I64(st.evicted_evidence, 1);
    /* Full again with nothing that may go: asked once, then refused for good. */
    SW_ASSERT_TRUE(sw_detect_evict_bytes(b, 0, SIZE_MAX, SIZE_MAX, NULL, NULL) > 0); /* "new" */
    pool.limit = pool.used;
    SW_ASSERT_I64(FEEDD(b, "last", 1, 1000), SW_ERR_LIMIT);
    SW_ASSERT_TRUE(sw_detect_room_wanted(b) > 0);
    sw_detect_room_served(b, true); /* nothing more can go */
    off--;
    SW_ASSERT_I64(FEEDD(b, "last", 1, 1000), SW_ERR_LIMIT);
    SW_ASSERT_I64(sw_detect_room_wanted(b), 0);
    SW_ASSERT_NOT_NULL(strstr(err, "max.memory.bytes"));
    SW_ASSERT_NOT_NULL(strstr(err, "jobs in all engines"));
    sw_detect_stats(b, &st);
    SW_ASSERT_I64(st.refused_jobs, 1);
#undef FEEDD
    sw_detect_destroy(a);
    sw_detect_destroy(b);
    SW_ASSERT_I64(pool.used, 0);
    SW_ASSERT_I64(pool.jobs, 0);
}

/* A real many-rank job early in its life (one sample a rank so far) is
 * worth more than made-up ids of fewer ranks, in any engine (issue 35):
 * its engine, full, asks the pool instead of evicting it, and the pool's
 * owner sees the fewest ranks in the other engine. */
static void test_pool_young_job(void **state)
{
    (void)state;
    sw_params_t p = sw_params_default();
    sw_detector_t *a = sw_detect_new(p), *b = sw_detect_new(p);
    sw_detect_pool_t pool;
    memset(&pool, 0, sizeof(pool));
    sw_event_t ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = SW_EV_SAMPLE;
    ev.event_type = sw_str("sample");
    ev.has_job_id = true;
    ev.host = sw_str("h");
    ev.has_device_used = true;
    ev.device_used_bytes = 1000;
    ev.sampling_interval_ms = 100;
    const sw_record_t *rec;
    char err[256], id[32];
    int64_t off = 0;
    /* A: the young job of 16 ranks, one sample each, then two 2-rank ids
     * (the least recently active is the young job). */
    ev.world_size = 16;
    ev.job_id = sw_str("young");
    for (int k = 0; k < 16; k++) {
        ev.rank = k;
        ev.timestamp_ns = 1;
        SW_ASSERT_I64(sw_detect_feed_at(a, &ev, 0, off++, &rec, err, sizeof(err)), SW_OK);
    }
    ev.world_size = 2;
    for (int f = 0; f < 2; f++)
        for (int k = 0; k < 2; k++) {
            snprintf(id, sizeof(id), "a%d", f);
            ev.job_id = sw_str(id);
            ev.rank = k;
            SW_ASSERT_I64(sw_detect_feed_at(a, &ev, 0, off++, &rec, err, sizeof(err)), SW_OK);
        }
    /* B: 20 one-rank ids. */
    ev.world_size = 1;
    ev.rank = 0;
    for (int f = 0; f < 20; f++) {
        snprintf(id, sizeof(id), "b%d", f);
        ev.job_id = sw_str(id);
        SW_ASSERT_I64(sw_detect_feed_at(b, &ev, 0, off++, &rec, err, sizeof(err)), SW_OK);
    }
    sw_detect_set_pool(a, &pool);
    sw_detect_set_pool(b, &pool);
    uint64_t va = 0, vb = 0;
    SW_ASSERT_TRUE(sw_detect_evict_value(a, 0, &va));
    SW_ASSERT_TRUE(sw_detect_evict_value(b, 0, &vb));
    SW_ASSERT_I64(va, 2);
    SW_ASSERT_I64(vb, 1);
    /* Full: a new one-rank job in A evicts nothing of A's (none of one
     * rank) and asks the pool. */
    pool.limit = pool.used;
    ev.job_id = sw_str("new");
    SW_ASSERT_I64(sw_detect_feed_at(a, &ev, 0, off, &rec, err, sizeof(err)), SW_ERR_LIMIT);
    SW_ASSERT_TRUE(sw_detect_room_wanted(a) > 0);
    sw_analysis_t an;
    SW_ASSERT_TRUE(sw_detect_analysis(a, "young", &an));
    SW_ASSERT_TRUE(sw_detect_analysis(a, "a0", &an));
    /* At most 2 ranks: the 2-rank ids go, never the young job. */
    SW_ASSERT_TRUE(sw_detect_evict_bytes(a, 0, 2, SIZE_MAX, NULL, NULL) > 0);
    SW_ASSERT_FALSE(sw_detect_analysis(a, "a0", &an));
    SW_ASSERT_FALSE(sw_detect_analysis(a, "a1", &an));
    SW_ASSERT_TRUE(sw_detect_analysis(a, "young", &an));
    SW_ASSERT_TRUE(sw_detect_evict_value(a, 0, &va));
    SW_ASSERT_I64(va, 16);
    SW_ASSERT_I64(sw_detect_evict_bytes(a, 0, 15, SIZE_MAX, NULL, NULL), 0);
    sw_detect_destroy(a);
    sw_detect_destroy(b);
    SW_ASSERT_I64(pool.used, 0);
}

/* The budget where memory grows (issue 28): 200,000 one-sample job ids of
 * 1, 2 or 8 ranks among 3 real jobs, with a budget of 4 MiB and no
 * once-a-second check: the accounted state never passes the budget by more
 * than one job, the real jobs' records equal a run without the flood, and
 * a new rank is refused only when nothing can go. */
static void test_budget_where_memory_grows(void **state)
{
    (void)state;
    const size_t budget = 4u << 20;
    sw_params_t p = sw_params_default();
    p.window_samples = 8;
    p.spike_min_bytes = 500;
    p.max_jobs = 0;
    outlog_t want = {0}, got = {0};
    size_t peak = 0;
    uint64_t evicted = 0;
    for (int flood = 0; flood < 2; flood++) {
        sw_detector_t *det = sw_detect_new(p);
        if (flood) sw_detect_set_budget(det, budget);
        run_flooded(det, 7, flood ? 24 : 0, 0, flood ? &got : &want, &peak);
        sw_detect_stats_t st;
        sw_detect_stats(det, &st);
        if (flood) evicted = st.evicted;
        sw_detect_destroy(det);
    }
    printf(
        "budget: 72,000 fake jobs of 1, 2, 8 ranks in a 4 MiB budget: peak accounted %zu "
        "bytes, %llu evicted, %zu real records equal\n",
        peak, (unsigned long long)evicted, want.n);
    SW_ASSERT(peak <= budget + 64 * 1024, "accounted state reached %zu bytes", peak);
    SW_ASSERT_TRUE(evicted > 60000);
    SW_ASSERT(got.n == want.n, "%zu real records, want %zu", got.n, want.n);
    for (size_t k = 0; k < want.n; k++) SW_ASSERT_STREQ(got.v[k], want.v[k]);
    out_clear(&want);
    out_clear(&got);
}

int main(void)
{
    /* SW_TEST_ONLY=CASE: that case only (cmocka's filter): CTest runs each
     * case as a test of its own, so that ctest -j spreads them. */
    const char *only = getenv("SW_TEST_ONLY");
    if (only) cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flood_evicts_fake_jobs),
        cmocka_unit_test(test_budget_where_memory_grows),
        cmocka_unit_test(test_pool_across_engines),
        cmocka_unit_test(test_pool_young_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
