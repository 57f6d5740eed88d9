/*
 * The out-of-time guard (SPEC 6, before step 1; src/core/sw_tguard.h):
 * table-driven cases of the rule, then the engine fed a generated job with
 * one corrupted clock value (2^63 - 1, +10^15 ns, 1 ns) at several places,
 * as a known rank and as a new one: every record equals the run without
 * it, and the sample is refused (SW_ERR_CLOCK) and counted. A whole job
 * that jumps (a restart on another clock) is followed after a short streak.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_codec_alert.h"
#include "sw_codec_telemetry.h"
#include "sw_detect.h"
#include "sw_gen.h"
#include "sw_tguard.h"
#include "sw_testlib.h"

#define H SW_TGUARD_SLACK_NS
#define T0 1763700000000000000LL

typedef struct step_s {
    int64_t rank, ts;
    bool want;
} step_t;

typedef struct gcase_s {
    const char *name;
    step_t steps[12];
    size_t n;
} gcase_t;

static void test_rule(void **state)
{
    (void)state;
    static const gcase_t cases[] = {
        {"first sample of a job is taken, whatever it is", {{0, INT64_MAX, true}}, 1},
        {"a job with one rank is not judged; a second rank is",
         {{0, 0, true},
          {0, INT64_MAX / 2, true},
          {0, 1, true},
          {1, INT64_MAX, false},
          {1, INT64_MAX / 2 + 7, true}},
         5},
        {"within 1 h of the rank, both ways",
         {{0, T0, true},
          {1, T0, true},
          {0, T0 + H, true},
          {0, T0 - H, true},
          {0, T0 + 2 * H + 1, false}},
         5},
        {"2^63-1, 1 ns, +10^15 ns mid-job",
         {{0, T0, true},
          {1, T0 + 5, true},
          {0, INT64_MAX, false},
          {1, 1, false},
          {0, T0 + 1000000000000000LL, false},
          {0, INT64_MIN, false},
          {1, T0 + 10, true}},
         7},
        {"a new rank: within 1 h of the job",
         {{0, T0, true},
          {1, T0 + 1000, true},
          {2, T0 - H / 2, true},
          {3, INT64_MAX, false},
          {4, 1, false}},
         5},
        {"a quiet rank catches up with the job",
         {{0, T0, true},
          {1, T0, true},
          {0, T0 + 3 * H, false},
          {1, T0 + H / 2, true},
          {1, T0 + H, true},
          {1, T0 + 2 * H, true},
          {0, T0 + 2 * H, true},
          {0, T0 + 5 * H, false}},
         8},
        {"a whole-job jump: 4 agreeing refusals from 2 ranks, then the others follow",
         {{0, T0, true},
          {1, T0, true},
          {2, T0, true},
          {0, T0 + 100 * H, false},
          {1, T0 + 100 * H + 5, false},
          {0, T0 + 100 * H + 10, false},
          {1, T0 + 100 * H + 15, true},
          {2, T0 + 100 * H + 20, true},
          {0, T0 + 100 * H + 30, true},
          {2, T0 - 50 * H, false}},
         10},
        {"one rank repeating a bad value is no jump",
         {{0, T0, true},
          {1, T0, true},
          {1, INT64_MAX, false},
          {1, INT64_MAX, false},
          {1, INT64_MAX, false},
          {1, INT64_MAX, false},
          {1, INT64_MAX, false},
          {0, T0 + 1, true}},
         8},
        {"refusals that disagree never add up",
         {{0, T0, true},
          {1, T0, true},
          {0, 1, false},
          {1, INT64_MAX, false},
          {0, 1, false},
          {1, INT64_MAX, false},
          {0, T0 + 10 * H, false},
          {1, 1, false}},
         8},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        sw_tguard_t g;
        memset(&g, 0, sizeof(g));
        /* The rank table the engine keeps: first and newest of what was taken. */
        sw_tguard_rank_t rk[8];
        memset(rk, 0, sizeof(rk));
        uint64_t nranks = 0;
        for (size_t i = 0; i < cases[c].n; i++) {
            const step_t *s = &cases[c].steps[i];
            bool got = sw_tguard_check(&g, &rk[s->rank], s->rank, s->ts, nranks);
            SW_ASSERT(got == s->want, "case \"%s\" step %zu (rank %lld ts %lld): got %d want %d",
                      cases[c].name, i, (long long)s->rank, (long long)s->ts, got, s->want);
            if (!got) continue;
            sw_tguard_rank_t *r = &rk[s->rank];
            if (!r->known) {
                *r = (sw_tguard_rank_t){true, s->ts, s->ts};
                nranks++;
            }
            if (s->ts < r->first_ts) r->first_ts = s->ts;
            if (s->ts > r->newest_ts) r->newest_ts = s->ts;
        }
    }
}

/* ---- the engine ------------------------------------------------------------ */

typedef struct lines_s {
    sw_buf_t text;
    size_t *start;
    size_t n;
} lines_t;

static void gen_lines(lines_t *l)
{
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.ranks = 8;
    o.samples = 300;
    o.jobs = 2;
    o.late = 0.02;
    o.duplicates = 0.01;
    char err[256];
    sw_gen_t *gen = sw_gen_new(&o, err, sizeof(err));
    SW_ASSERT_NOT_NULL(gen);
    sw_buf_init(&l->text);
    while (sw_gen_next(gen, &l->text)) {
    }
    sw_gen_destroy(gen);
    l->start = NULL;
    l->n = 0;
    size_t cap = 0;
    for (size_t i = 0; i < l->text.len;) {
        if (l->n == cap)
            l->start = realloc(l->start, (cap = cap ? 2 * cap : 1024) * sizeof(size_t));
        l->start[l->n++] = i;
        const char *nl = memchr(l->text.data + i, '\n', l->text.len - i);
        i = nl ? (size_t)(nl - l->text.data) + 1 : l->text.len;
    }
}

static void decode(sw_tdec_t *dec, const lines_t *l, size_t i, sw_event_t *ev)
{
    size_t end = i + 1 < l->n ? l->start[i + 1] - 1 : l->text.len - 1;
    char err[256];
    SW_ASSERT_I64(
        sw_tdec_json(dec, l->text.data + l->start[i], end - l->start[i], ev, err, sizeof(err)),
        SW_OK);
}

static void on_summary(void *opaque, const sw_record_t *rec)
{
    sw_alert_json_record(opaque, rec);
    sw_buf_putc(opaque, '\n');
}

/* Feed every line; before line @p at (unless SIZE_MAX) feed a copy of the
 * sample at line @p from with its timestamp @p bad_ts and rank @p rank
 * (-1: its own). Every record and the summaries into @p out. */
static void feed_all(const lines_t *l, size_t at, size_t from, int64_t bad_ts, int64_t rank,
                     sw_buf_t *out, sw_detect_stats_t *st)
{
    sw_params_t p = sw_params_default();
    sw_detector_t *det = sw_detect_new(p);
    sw_tdec_t *dec = sw_tdec_new();
    char err[256];
    const sw_record_t *rec;
    for (size_t i = 0; i < l->n; i++) {
        sw_event_t ev;
        if (i == at) {
            decode(dec, l, from, &ev);
            SW_ASSERT_I64(ev.kind, SW_EV_SAMPLE);
            ev.timestamp_ns = bad_ts;
            if (rank >= 0) ev.rank = rank;
            SW_ASSERT_I64(sw_detect_feed(det, &ev, 0, &rec, err, sizeof(err)), SW_ERR_CLOCK);
            SW_ASSERT_NULL(rec);
            SW_ASSERT_NOT_NULL(strstr(err, "out of time"));
        }
        decode(dec, l, i, &ev);
        SW_ASSERT_I64(sw_detect_feed(det, &ev, 0, &rec, err, sizeof(err)), SW_OK);
        if (rec) on_summary(out, rec);
    }
    sw_detect_finish(det, on_summary, out);
    sw_detect_stats(det, st);
    sw_tdec_destroy(dec);
    sw_detect_destroy(det);
}

static void test_one_bad_clock(void **state)
{
    (void)state;
    lines_t l;
    gen_lines(&l);
    sw_buf_t want, got;
    sw_buf_init(&want);
    sw_buf_init(&got);
    sw_detect_stats_t st;
    feed_all(&l, SIZE_MAX, 0, 0, -1, &want, &st);
    SW_ASSERT_I64(st.clock_refused, 0);
    SW_ASSERT_NOT_NULL(strstr(want.data, "\"action\": \"trigger\""));
    /* A sample line in the first tenth, the middle and near the end. */
    sw_tdec_t *dec = sw_tdec_new();
    size_t cases = 0;
    for (int where = 1; where <= 9; where += 4) {
        size_t at = l.n * (size_t)where / 10;
        sw_event_t ev;
        size_t from = at;
        for (decode(dec, &l, from, &ev); ev.kind != SW_EV_SAMPLE; decode(dec, &l, ++from, &ev)) {
        }
        int64_t bad[] = {INT64_MAX, ev.timestamp_ns + 1000000000000000LL, 1};
        for (size_t b = 0; b < 3; b++)
            for (int64_t rank = -1; rank <= 8; rank += 9) { /* its own rank; a new one */
                got.len = 0;
                feed_all(&l, at, from, bad[b], rank, &got, &st);
                SW_ASSERT(st.clock_refused == 1, "%llu refused",
                          (unsigned long long)st.clock_refused);
                SW_ASSERT(got.len == want.len && memcmp(got.data, want.data, want.len) == 0,
                          "at line %zu, timestamp %lld, rank %lld: records differ", at,
                          (long long)bad[b], (long long)rank);
                cases++;
            }
    }
    SW_ASSERT_I64(cases, 18);
    sw_tdec_destroy(dec);
    sw_buf_clear(&want);
    sw_buf_clear(&got);
    sw_buf_clear(&l.text);
    free(l.start);
}

/* The whole job restarts on a clock one day later: after a streak of at
 * most 3 refused samples per job, everything is taken again. */
static void test_job_jump(void **state)
{
    (void)state;
    lines_t l;
    gen_lines(&l);
    sw_detector_t *det = sw_detect_new(sw_params_default());
    sw_tdec_t *dec = sw_tdec_new();
    char err[256];
    const sw_record_t *rec;
    uint64_t refused = 0, taken_after = 0;
    for (size_t i = 0; i < l.n; i++) {
        sw_event_t ev;
        decode(dec, &l, i, &ev);
        bool after = i >= l.n / 2;
        if (after) ev.timestamp_ns += 86400LL * 1000000000LL;
        sw_err_t rc = sw_detect_feed(det, &ev, 0, &rec, err, sizeof(err));
        SW_ASSERT(rc == SW_OK || (rc == SW_ERR_CLOCK && after), "line %zu: %s", i, err);
        if (rc == SW_ERR_CLOCK) refused++;
        else if (after && i > l.n / 2 + 64) taken_after++;
    }
    SW_ASSERT(refused <= 2 * (SW_TGUARD_JUMP_SAMPLES - 1), "%llu refused",
              (unsigned long long)refused);
    SW_ASSERT_TRUE(taken_after > l.n / 2 - 200);
    sw_tdec_destroy(dec);
    sw_detect_destroy(det);
    sw_buf_clear(&l.text);
    free(l.start);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule),
        cmocka_unit_test(test_one_bad_clock),
        cmocka_unit_test(test_job_jump),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
