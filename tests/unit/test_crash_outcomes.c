/*
 * SPEC 8 (src/core/sw_crash.c) against the ground truth of `gen --crash`
 * (src/gen/sw_gen_crash.c): every outcome of 8.6 at 8, 64 and 1024 ranks
 * over seeds, sampling intervals and per-host arrival orders, against an
 * independent model of the input's aligned times; the negative controls.
 */
#include "crash_run.h"

#define S_NS INT64_C(1000000000)

/* ---- an independent model of the input's aligned times ------------------------ */

typedef struct model_s {
    int64_t ranks;
    int64_t *first, *newest; /* first sample, newest event (any type); INT64_MIN none */
    int64_t *iv_ns;
    bool has_mrel;
    int64_t mrel;
    int64_t silence_ns;
} model_t;

static void model_init(model_t *m, int64_t ranks)
{
    memset(m, 0, sizeof(*m));
    m->ranks = ranks;
    m->first = malloc((size_t)ranks * sizeof(int64_t));
    m->newest = malloc((size_t)ranks * sizeof(int64_t));
    m->iv_ns = calloc((size_t)ranks, sizeof(int64_t));
    for (int64_t r = 0; r < ranks; r++) m->first[r] = m->newest[r] = INT64_MIN;
    m->silence_ns = 30 * S_NS;
}

static void model_free(model_t *m)
{
    free(m->first);
    free(m->newest);
    free(m->iv_ns);
}

/* The anchor's first sample (rank 0, else the lowest rank seen). */
static int64_t model_anchor(const model_t *m)
{
    for (int64_t r = 0; r < m->ranks; r++)
        if (m->first[r] != INT64_MIN) return m->first[r];
    return 0;
}

static void model_event(model_t *m, const sw_event_t *ev)
{
    int64_t r = ev->rank;
    if (ev->kind == SW_EV_SAMPLE) {
        if (m->first[r] == INT64_MIN || ev->timestamp_ns < m->first[r])
            m->first[r] = ev->timestamp_ns;
        m->iv_ns[r] = ev->sampling_interval_ms * 1000000;
    }
    if (ev->timestamp_ns > m->newest[r]) m->newest[r] = ev->timestamp_ns;
    if (m->first[r] != INT64_MIN) {
        int64_t rel = m->newest[r] - m->first[r];
        if (!m->has_mrel || rel > m->mrel) m->mrel = rel;
        m->has_mrel = true;
    }
}

static bool model_silent(const model_t *m, int64_t r)
{
    if (m->first[r] == INT64_MIN || !m->has_mrel) return false;
    int64_t thr = m->silence_ns > 10 * m->iv_ns[r] ? m->silence_ns : 10 * m->iv_ns[r];
    return m->mrel - (m->newest[r] - m->first[r]) > thr;
}

/* ---- 8.6 outcomes of one generated job ------------------------------------------ */

typedef struct exp_crash_s {
    size_t line;
    int64_t rank;
} exp_crash_t;

typedef struct outcome_s {
    size_t jobs, crash_records, warned, lead_min_s_x10;
    double min_lead_s;
} outcome_t;

static void check_job(const sw_genx_opts_t *o, outcome_t *out)
{
    char errstr[256];
    sw_genx_t *g = sw_genx_new(o, errstr, sizeof(errstr));
    SW_ASSERT(g != NULL, "%s", errstr);
    const sw_genx_truth_t *t = sw_genx_truth(g, 0);
    sw_check_case("%s ranks=%lld seed=%llu interval=%lld", sw_genx_scenario_str(o->scenario),
                  (long long)o->ranks, (unsigned long long)o->seed, (long long)o->interval_ms);
    sw_detector_t *det = sw_detect_new(sw_params_default());
    sw_tdec_t *dec = sw_tdec_new();
    model_t m;
    model_init(&m, o->ranks);
    runlog_t l;
    memset(&l, 0, sizeof(l));
    /* What the model expects, line by line: a crash record whenever a death
     * becomes known (a marker arrives; a silent rank's silence holds) with
     * an aligned time earlier than every death known before. */
    size_t nd = t->n_deaths;
    bool *known = calloc(nd + 1, sizeof(bool));
    exp_crash_t *exp = calloc(nd + 1, sizeof(exp_crash_t));
    size_t nexp = 0;
    bool have_best = false;
    int64_t best = 0;
    bool *watchdog_line = NULL;
    size_t cap_lines = 0;
    sw_buf_t buf;
    sw_buf_init(&buf);
    size_t line = 0;
    int64_t *line_true = NULL; /* true time of each line (skew removed) */
    while (sw_genx_next(g, &buf)) {
        const char *p = buf.data;
        size_t n = buf.len - 1;
        sw_event_t ev;
        char err[256];
        SW_ASSERT(sw_tdec_json(dec, p, n, &ev, err, sizeof(err)) == SW_OK, "%s", err);
        if (line >= cap_lines) {
            cap_lines = cap_lines ? cap_lines * 2 : 1 << 16;
            watchdog_line = realloc(watchdog_line, cap_lines * sizeof(bool));
            line_true = realloc(line_true, cap_lines * sizeof(int64_t));
        }
        bool is_error = ev.event_type.len == 5 && memcmp(ev.event_type.ptr, "error", 5) == 0;
        watchdog_line[line] = is_error && ev.context.set &&
                              memmem(ev.context.value.ptr, ev.context.value.len, "Watchdog", 8);
        line_true[line] = ev.timestamp_ns - t->host_skew_ns[ev.rank / t->ranks_per_host];
        model_event(&m, &ev);
        int64_t anchor = model_anchor(&m);
        bool marker = ev.kind != SW_EV_SAMPLE && !watchdog_line[line] &&
                      (is_error || (ev.event_type.len == 3) ||
                       (ev.event_type.len == 8 && memcmp(ev.event_type.ptr, "critical", 8) == 0));
        bool any_new = false;
        int64_t new_best = INT64_MAX, new_rank = -1;
        for (size_t k = 0; k < nd; k++) {
            const sw_genx_death_t *d = &t->deaths[k];
            if (known[k]) continue;
            int64_t al;
            if (!d->silent && marker && ev.rank == d->rank) {
                al = ev.timestamp_ns - (m.first[d->rank] - anchor);
            } else if (d->silent && model_silent(&m, d->rank)) {
                al = m.newest[d->rank] - (m.first[d->rank] - anchor);
            } else {
                continue;
            }
            known[k] = true;
            any_new = true;
            if (al < new_best) {
                new_best = al;
                new_rank = d->rank;
            }
        }
        if (any_new && (!have_best || new_best < best)) {
            exp[nexp].line = line;
            exp[nexp].rank = new_rank;
            nexp++;
            have_best = true;
            best = new_best;
        }
        feed_line(det, dec, p, n, line, &l, false);
        buf.len = 0;
        line++;
    }
    sw_detect_finish(det, on_summary, &l);
    /* 8.6 bullets 1-3. */
    size_t ncrash = 0, nclose = 0;
    xrec_t *last = NULL;
    for (size_t i = 0; i < l.n; i++) {
        xrec_t *x = &l.v[i];
        if (x->action != SW_ACTION_CRASH) continue;
        if (!x->open) {
            /* "A crash ends": one closing record, the crash's last, with
             * its final answer; here at the summary (nobody comes back),
             * after the summary record. */
            nclose++;
            SW_CHECK(last && x->number == last->number && x->revision == last->revision + 1 &&
                         x->first_rank == last->first_rank,
                     "closing crash record (crash %lld revision %lld rank %lld) does not carry "
                     "the last answer",
                     (long long)x->number, (long long)x->revision, (long long)x->first_rank);
            SW_CHECK((x->line == AT_SUMMARY && x->after_summary && x->end == SW_X8_END_JOB) ||
                         (x->line != AT_SUMMARY && x->end == SW_X8_END_ALIVE),
                     "crash closed on line %zu (end %d): expected after the job's summary, or "
                     "when every dead rank is back",
                     x->line, x->end);
            SW_CHECK(i + 1 == l.n || l.v[i + 1].action == SW_ACTION_WARNING,
                     "a crash record after the crash closed");
            continue;
        }
        SW_CHECK(nclose == 0, "an open crash record after its close");
        /* A revision names the first death it replaces: the one before. */
        SW_CHECK(x->has_previous == (ncrash > 0) &&
                     (!x->has_previous || (last && x->previous_rank == last->first_rank)),
                 "crash record %zu: previous_first_death %lld, the record before named %lld",
                 ncrash, (long long)x->previous_rank, last ? (long long)last->first_rank : -1LL);
        SW_CHECK(!watchdog_line[x->line], "crash record caused by a watchdog error (line %zu)",
                 x->line);
        SW_CHECK(x->number == 1, "crash %lld: one crash expected", (long long)x->number);
        SW_CHECK(x->revision == (int64_t)ncrash, "crash record %zu has revision %lld", ncrash,
                 (long long)x->revision);
        if (ncrash < nexp) {
            SW_CHECK(x->line == exp[ncrash].line && x->first_rank == exp[ncrash].rank,
                     "crash record %zu: line %zu rank %lld, expected line %zu rank %lld", ncrash,
                     x->line, (long long)x->first_rank, exp[ncrash].line,
                     (long long)exp[ncrash].rank);
        }
        ncrash++;
        last = x;
    }
    SW_CHECK(ncrash == nexp, "%zu crash records, the arrivals make %zu", ncrash, nexp);
    SW_CHECK(nclose == (ncrash > 0), "%zu closing crash records for %s crash", nclose,
             ncrash ? "one" : "no");
    SW_CHECK(ncrash <= 3, "%zu crash records (at most 3 in generated jobs)", ncrash);
    if (nd) {
        SW_CHECK(last && last->first_rank == t->deaths[0].rank,
                 "last crash record names rank %lld, the first death was rank %lld",
                 last ? (long long)last->first_rank : -1LL, (long long)t->deaths[0].rank);
    } else {
        SW_CHECK(ncrash == 0, "%zu crash records in a job where nobody died", ncrash);
    }
    /* 8.6 bullet 4. */
    size_t nwarn = 0, wopen = 0, wclose = 0;
    bool warned = false;
    for (size_t i = 0; i < l.n; i++) {
        xrec_t *x = &l.v[i];
        if (x->action != SW_ACTION_WARNING) continue;
        nwarn++;
        if (x->open && x->revision == 0) wopen++;
        if (!x->open) {
            /* Every warning closes with a record; one that a crash closed
             * right after that crash's first record. */
            wclose++;
            SW_CHECK(x->end != SW_X8_END_CRASH ||
                         (i > 0 && l.v[i - 1].action == SW_ACTION_CRASH && l.v[i - 1].open &&
                          l.v[i - 1].revision == 0 && l.v[i - 1].line == x->line),
                     "warning %lld closed by a crash, not right after the crash opened",
                     (long long)x->number);
        }
        if (!x->open || t->warn_rank < 0) continue;
        for (size_t k = 0; k < x->nw; k++) {
            if (x->wranks[k] != t->warn_rank) continue;
            double lead = (double)(t->deaths[0].true_ns - line_true[x->line]) / 1e9;
            if (!warned && lead < out->min_lead_s) out->min_lead_s = lead;
            if (line_true[x->line] <= t->warn_by_true_ns) warned = true;
        }
    }
    SW_CHECK(wopen == wclose, "%zu warnings opened, %zu closed: one left to expire", wopen, wclose);
    if (t->expect_warning)
        SW_CHECK(warned, "rank %lld was not named by a warning 30 s before its death",
                 (long long)t->warn_rank);
    else
        SW_CHECK(nwarn == 0, "%zu warning records in a %s job", nwarn,
                 sw_genx_scenario_str(o->scenario));
    out->jobs++;
    out->crash_records += ncrash;
    out->warned += warned;
    free(known);
    free(exp);
    free(watchdog_line);
    free(line_true);
    sw_buf_clear(&buf);
    log_clear(&l);
    model_free(&m);
    sw_tdec_destroy(dec);
    sw_detect_destroy(det);
    sw_genx_destroy(g);
}

static const int64_t intervals[] = {50, 100, 200, 500, 1000};

/* SW_CRASH_SEEDS=N multiplies the seeds (a longer sweep by hand). */
static void run_outcomes(int64_t ranks, uint64_t seeds, const sw_genx_scenario_t *sc, size_t nsc)
{
    sw_check_reset();
    const char *more = getenv("SW_CRASH_SEEDS");
    if (more && atoi(more) > 1) seeds *= (uint64_t)atoi(more);
    const char *only = getenv("SW_CRASH_RANKS");
    if (only && atoll(only) != ranks) return;
    outcome_t out;
    memset(&out, 0, sizeof(out));
    out.min_lead_s = 1e9;
    for (size_t s = 0; s < nsc; s++) {
        for (uint64_t seed = 1; seed <= seeds; seed++) {
            sw_genx_opts_t o;
            sw_genx_opts_default(&o);
            o.scenario = sc[s];
            o.ranks = ranks;
            o.seed = seed * 7919 + (uint64_t)ranks;
            o.interval_ms = ranks >= 1024 ? 1000 : intervals[(seed + s) % 5];
            if (ranks >= 1024 && SANITIZED) o.watchdog_s = 120;
            if (ranks >= 64 && o.interval_ms < 200) o.interval_ms = 200;
            check_job(&o, &out);
        }
    }
    printf(
        "SPEC 8.6 at %lld ranks: %zu jobs, %zu crash records, %zu ranks warned in time "
        "(shortest warning lead %.1f s before the death)\n",
        (long long)ranks, out.jobs, out.crash_records, out.warned, out.min_lead_s);
    SW_CHECK_END();
}

static const sw_genx_scenario_t all_sc[] = {SW_GENX_CASCADE, SW_GENX_SILENT_FIRST, SW_GENX_NOCAP,
                                            SW_GENX_PLATEAU, SW_GENX_PEAK,         SW_GENX_OUTAGE};

static void test_outcomes_8(void **state)
{
    (void)state;
    run_outcomes(8, 10, all_sc, 6);
}

static void test_outcomes_64(void **state)
{
    (void)state;
    run_outcomes(64, 3, all_sc, 6);
}

static void test_outcomes_1024(void **state)
{
    (void)state;
    static const sw_genx_scenario_t sc[] = {SW_GENX_CASCADE, SW_GENX_SILENT_FIRST};
    run_outcomes(1024, 1, sc, 2);
}

int main(void)
{
    /* SW_TEST_ONLY=CASE: that case only (cmocka's filter): CTest runs each
     * case as a test of its own, so that ctest -j spreads them. */
    const char *only = getenv("SW_TEST_ONLY");
    if (only) cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outcomes_8),
        cmocka_unit_test(test_outcomes_64),
        cmocka_unit_test(test_outcomes_1024),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
