/*
 * Randomized properties over synthetic telemetry (sw_gen, decoded by the
 * JSON decoder as `stormwatch` would):
 *  1. stream = batch: for seeded random sizes (2..64 ranks, 50..400
 *     samples per rank, with and without phases, one job, no duplicates,
 *     no late samples), the summary that the stream engine (sw_detect with
 *     window.samples above the samples per rank and stale.ms 0) emits at
 *     the end carries exactly the analysis of the batch analysis
 *     (sw_batch), except the batch's "Ignored non-sample events" note when
 *     phase events exist. Compared as the JSON text of
 *     sw_alert_json_analysis().
 *  2. determinism: the same events through two fresh engines give the
 *     same records, byte for byte;
 *  3. duplicates: every sample delivered twice in a row gives the same
 *     records as every sample once, and each copy is counted.
 * A failure prints the seed and sizes, so a case can be replayed with
 * `stormwatch gen --seed S --ranks R --samples N [--phases] ...`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_batch.h"
#include "sw_codec_alert.h"
#include "sw_codec_telemetry.h"
#include "sw_detect.h"
#include "sw_gen.h"
#include "sw_testlib.h"

static const char k_ignored[] = "Ignored non-sample events during cross-rank analysis.";

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* ---- generated input ---------------------------------------------------- */

typedef struct input_s {
    sw_buf_t text;  /* the JSON lines */
    size_t *starts; /* line offsets */
    size_t nlines;
    sw_gen_opts_t opts;
    char desc[200]; /* how to regenerate it */
} input_t;

/* Draw sizes from @p seed and generate. @returns false when no option set
 * fits (never expected). */
static bool make_input(uint64_t seed, int64_t max_ranks, int64_t max_samples, input_t *in)
{
    memset(in, 0, sizeof(*in));
    sw_buf_init(&in->text);
    uint64_t s = seed * 7919 + 17;
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.seed = seed;
    o.ranks = 2 + (int64_t)(splitmix(&s) % (uint64_t)(max_ranks - 1));
    o.samples = 50 + (int64_t)(splitmix(&s) % (uint64_t)(max_samples - 49));
    o.phases = splitmix(&s) % 2 == 0;
    o.storms = (int64_t)(splitmix(&s) % 3);
    o.storm_rank = splitmix(&s) % 2 ? SW_GEN_STORM_RANK_RANDOM : SW_GEN_STORM_RANK_DEFAULT;
    o.skew_ms = (int64_t)(splitmix(&s) % 200);
    o.jitter = (double)(splitmix(&s) % 40) / 100.0;
    o.jobs = 1;
    o.duplicates = 0;
    o.late = 0;
    char err[512];
    sw_gen_t *gen = NULL;
    /* Storms need room: fewer storms until they fit. */
    while (!(gen = sw_gen_new(&o, err, sizeof(err)))) {
        if (o.storms == 0) {
            fprintf(stderr, "seed %llu: %s\n", (unsigned long long)seed, err);
            return false;
        }
        o.storms--;
    }
    in->opts = o;
    snprintf(
        in->desc, sizeof(in->desc),
        "--seed %llu --ranks %lld --samples %lld --storms %lld --storm-rank %lld --skew-ms %lld "
        "--jitter %.2f%s",
        (unsigned long long)seed, (long long)o.ranks, (long long)o.samples, (long long)o.storms,
        (long long)o.storm_rank, (long long)o.skew_ms, o.jitter, o.phases ? " --phases" : "");
    while (sw_gen_next(gen, &in->text)) {
    }
    sw_gen_destroy(gen);
    size_t cap = 1024;
    in->starts = malloc(cap * sizeof(*in->starts));
    for (size_t i = 0; i < in->text.len;) {
        if (in->nlines == cap) in->starts = realloc(in->starts, (cap *= 2) * sizeof(*in->starts));
        in->starts[in->nlines++] = i;
        const char *nl = memchr(in->text.data + i, '\n', in->text.len - i);
        i = nl ? (size_t)(nl - in->text.data) + 1 : in->text.len;
    }
    return true;
}

static void free_input(input_t *in)
{
    sw_buf_clear(&in->text);
    free(in->starts);
}

static bool decode_line(sw_tdec_t *dec, const input_t *in, size_t i, sw_event_t *ev)
{
    size_t end = i + 1 < in->nlines ? in->starts[i + 1] : in->text.len;
    const char *p = in->text.data + in->starts[i];
    size_t len = end - in->starts[i];
    while (len && (p[len - 1] == '\n' || p[len - 1] == '\r')) len--;
    char err[256];
    sw_err_t rc = sw_tdec_json(dec, p, len, ev, err, sizeof(err));
    SW_CHECK(rc == SW_OK, "line %zu of `stormwatch gen %s` does not decode: %s", i + 1, in->desc,
             err);
    return rc == SW_OK;
}

/* ---- records ------------------------------------------------------------ */

typedef struct records_s {
    sw_buf_t json; /* every record, one per line */
    size_t n;
    sw_buf_t summary; /* analysis of the last summary (JSON text) */
    size_t nsummaries;
} records_t;

/* What a suspect's timeline excerpt must satisfy, whatever the samples:
 * the budget, time order, the spike where the suspect says it is, the
 * whole window counted. */
static void check_timeline(const sw_analysis_t *a, const sw_suspect_t *s)
{
    size_t budget = 4096 / a->n_suspects;
    budget = budget > 250 ? 250 : budget < 8 ? 8 : budget;
    SW_CHECK(s->n_timeline > 0, "rank %lld: no timeline", (long long)s->rank);
    if (!s->n_timeline) return;
    SW_CHECK(s->n_timeline <= budget, "rank %lld: %zu points > %zu", (long long)s->rank,
             s->n_timeline, budget);
    for (size_t k = 0; k < a->n_counts; k++)
        if (a->counts[k].rank == s->rank) {
            SW_CHECK(s->timeline_window == a->counts[k].value,
                     "rank %lld: window %lld != count %lld", (long long)s->rank,
                     (long long)s->timeline_window, (long long)a->counts[k].value);
            SW_CHECK(s->n_timeline == (size_t)(s->timeline_window < (int64_t)budget
                                                   ? s->timeline_window
                                                   : (int64_t)budget),
                     "rank %lld: %zu points of %lld", (long long)s->rank, s->n_timeline,
                     (long long)s->timeline_window);
        }
    for (size_t k = 1; k < s->n_timeline; k++)
        SW_CHECK(s->timeline_aligned_ns[k - 1] <= s->timeline_aligned_ns[k],
                 "rank %lld: point %zu out of order", (long long)s->rank, k);
    size_t sp = s->timeline_spike, st = s->timeline_spike_start;
    SW_CHECK(st <= sp && sp < s->n_timeline, "rank %lld: spike indices %zu, %zu",
             (long long)s->rank, st, sp);
    if (!(st <= sp && sp < s->n_timeline)) return;
    SW_CHECK((uint64_t)s->timeline_aligned_ns[sp] == s->aligned_first_spike_timestamp_ns,
             "rank %lld: spike point at %lld, suspect at %llu", (long long)s->rank,
             (long long)s->timeline_aligned_ns[sp],
             (unsigned long long)s->aligned_first_spike_timestamp_ns);
    SW_CHECK(s->timeline_used[sp] - s->timeline_used[st] == s->peak_delta_bytes,
             "rank %lld: excerpt rise %lld != peak %lld", (long long)s->rank,
             (long long)(s->timeline_used[sp] - s->timeline_used[st]),
             (long long)s->peak_delta_bytes);
    if ((size_t)s->spike_window_samples + 1 <= budget / 2)
        SW_CHECK(sp - st == (size_t)s->spike_window_samples,
                 "rank %lld: run of %zu points, %lld steps", (long long)s->rank, sp - st + 1,
                 (long long)s->spike_window_samples);
}

static void on_summary(void *opaque, const sw_record_t *rec)
{
    records_t *r = opaque;
    sw_alert_json_record(&r->json, rec);
    sw_buf_putc(&r->json, '\n');
    r->n++;
    r->nsummaries++;
    /* The batch analysis has no timeline excerpts: check them here, then
     * compare the rest. */
    const sw_analysis_t *a = &rec->analysis;
    sw_suspect_t *bare = calloc(a->n_suspects + 1, sizeof(*bare));
    for (size_t i = 0; i < a->n_suspects; i++) {
        const sw_suspect_t *s = &a->suspects[i];
        check_timeline(a, s);
        bare[i] = *s;
        bare[i].n_timeline = 0;
    }
    sw_analysis_t copy = *a;
    copy.suspects = bare;
    r->summary.len = 0;
    sw_alert_json_analysis(&r->summary, &copy, 0);
    sw_buf_cstr(&r->summary);
    free(bare);
}

/* Feed the input (each sample @p copies times in a row) into a fresh
 * engine; collect every record. */
static void run_stream(const input_t *in, sw_params_t p, int copies, records_t *r,
                       sw_detect_stats_t *st)
{
    memset(r, 0, sizeof(*r));
    sw_buf_init(&r->json);
    sw_buf_init(&r->summary);
    sw_detector_t *det = sw_detect_new(p);
    sw_tdec_t *dec = sw_tdec_new();
    char err[256];
    for (size_t i = 0; i < in->nlines; i++) {
        sw_event_t ev;
        if (!decode_line(dec, in, i, &ev)) break;
        int k = ev.kind == SW_EV_SAMPLE ? copies : 1;
        for (int c = 0; c < k; c++) {
            const sw_record_t *rec = NULL;
            sw_err_t rc = sw_detect_feed(det, &ev, 0, &rec, err, sizeof(err));
            SW_CHECK(rc == SW_OK, "line %zu: feed failed: %s", i + 1, err);
            if (c > 0) SW_CHECK(rec == NULL, "line %zu: a duplicate caused a record", i + 1);
            if (rec) {
                sw_alert_json_record(&r->json, rec);
                sw_buf_putc(&r->json, '\n');
                r->n++;
            }
        }
    }
    sw_detect_finish(det, on_summary, r);
    sw_buf_cstr(&r->json);
    if (st) sw_detect_stats(det, st);
    sw_tdec_destroy(dec);
    sw_detect_destroy(det);
}

static void free_records(records_t *r)
{
    sw_buf_clear(&r->json);
    sw_buf_clear(&r->summary);
}

/* Print the first differing value of two JSON texts. */
static void show_diff(const char *got, const char *want)
{
    json_error_t e;
    json_t *a = json_loads(got, 0, &e), *b = json_loads(want, 0, &e);
    char why[1024] = "unparsable";
    if (a && b) sw_test_json_equal(a, b, false, why, sizeof(why));
    fprintf(stderr,
            "  first difference: %s (stream != batch)\n  stream: %.2000s\n  batch:  %.2000s\n", why,
            got, want);
    json_decref(a);
    json_decref(b);
}

/* ---- property 1: stream summary = batch ------------------------------------ */

static void test_stream_equals_batch(void **state)
{
    (void)state;
    sw_check_reset();
    int with_phases = 0, with_suspects = 0, with_onset = 0, attributed = 0;
    size_t total_events = 0;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        input_t in;
        sw_check_case("seed %llu", (unsigned long long)seed);
        if (!make_input(seed, 64, 400, &in)) {
            SW_CHECK(false, "no generator options fit");
            continue;
        }
        sw_check_case("stormwatch gen %s", in.desc);
        total_events += in.nlines;

        /* batch */
        sw_params_t p = sw_params_default();
        sw_batch_t *b = sw_batch_new(p);
        sw_tdec_t *dec = sw_tdec_new();
        size_t nonsample = 0;
        for (size_t i = 0; i < in.nlines; i++) {
            sw_event_t ev;
            if (!decode_line(dec, &in, i, &ev)) break;
            if (ev.kind != SW_EV_SAMPLE) nonsample++;
            SW_CHECK(sw_batch_add(b, &ev, NULL, 0) == SW_OK, "batch refused line %zu", i + 1);
        }
        sw_tdec_destroy(dec);
        sw_arena_t arena;
        sw_arena_init(&arena);
        sw_analysis_t ba;
        sw_batch_run(b, &arena, &ba);
        /* the one expected difference: the batch's note on non-samples */
        SW_CHECK((nonsample > 0) == in.opts.phases, "%zu non-sample events with phases=%d",
                 nonsample, in.opts.phases);
        sw_str_t *notes = sw_arena_alloc(&arena, (ba.n_notes + 1) * sizeof(*notes));
        size_t nn = 0, ignored = 0;
        for (size_t k = 0; k < ba.n_notes; k++) {
            if (sw_str_eq(ba.notes[k], sw_str(k_ignored))) ignored++;
            else notes[nn++] = ba.notes[k];
        }
        SW_CHECK(ignored == (nonsample > 0 ? 1u : 0u), "the batch has %zu \"Ignored\" notes",
                 ignored);
        ba.notes = notes;
        ba.n_notes = nn;
        sw_buf_t bj;
        sw_buf_init(&bj);
        sw_alert_json_analysis(&bj, &ba, 0);
        sw_buf_cstr(&bj);

        /* stream */
        p.window_samples = in.opts.samples + 1 + (int64_t)(seed % 3);
        p.stale_ms = 0;
        records_t r;
        run_stream(&in, p, 1, &r, NULL);
        SW_CHECK(r.nsummaries == 1, "%zu summaries, expected 1", r.nsummaries);
        if (r.nsummaries == 1 && strcmp(r.summary.data, bj.data) != 0) {
            SW_CHECK(false, "the stream summary differs from the batch analysis");
            show_diff(r.summary.data, bj.data);
        }
        with_phases += in.opts.phases;
        with_suspects += ba.n_suspects > 0;
        with_onset += ba.has_onset;
        for (size_t k = 0; k < ba.n_suspects; k++)
            attributed += ba.suspects[k].phase.resolution != SW_PHASE_NONE;
        free_records(&r);
        sw_buf_clear(&bj);
        sw_arena_clear(&arena);
        sw_batch_destroy(b);
        free_input(&in);
    }
    fprintf(stderr,
            "stream = batch: 30 inputs, %zu events; %d with phases, %d with suspects, %d with "
            "an onset, %d suspects with a phase attribution\n",
            total_events, with_phases, with_suspects, with_onset, attributed);
    /* the inputs must exercise what they are meant to */
    sw_check_case("coverage of the random inputs");
    SW_CHECK(with_phases >= 5 && with_phases <= 25, "%d of 30 inputs with phases", with_phases);
    SW_CHECK(with_onset >= 10, "only %d of 30 inputs have a cluster onset", with_onset);
    SW_CHECK(attributed >= 5, "only %d suspects have a phase attribution", attributed);
    SW_CHECK_END();
}

/* ---- properties 2 and 3: determinism, duplicates ------------------------- */

static void test_determinism_and_duplicates(void **state)
{
    (void)state;
    sw_check_reset();
    size_t total_records = 0;
    for (uint64_t seed = 101; seed <= 112; seed++) {
        input_t in;
        sw_check_case("seed %llu", (unsigned long long)seed);
        if (!make_input(seed, 24, 250, &in)) {
            SW_CHECK(false, "no generator options fit");
            continue;
        }
        sw_check_case("stormwatch gen %s", in.desc);
        sw_params_t p = sw_params_default();
        /* small windows so that records come and go during the stream */
        p.window_samples = 8 + (int64_t)(seed % 24);
        p.stale_ms = seed % 2 ? 0 : 500;

        records_t a, b, d;
        sw_detect_stats_t sa, sd;
        run_stream(&in, p, 1, &a, &sa);
        run_stream(&in, p, 1, &b, NULL);
        SW_CHECK(a.n > 0, "no records at all");
        SW_CHECK(a.n == b.n && strcmp(a.json.data, b.json.data) == 0,
                 "two runs over the same events differ (%zu vs %zu records)", a.n, b.n);

        run_stream(&in, p, 2, &d, &sd);
        if (!(a.n == d.n && strcmp(a.json.data, d.json.data) == 0)) {
            SW_CHECK(false, "every sample twice gives other records (%zu vs %zu)", d.n, a.n);
            /* the first differing record */
            const char *x = a.json.data, *y = d.json.data;
            while (*x && *x == *y) {
                x++;
                y++;
            }
            while (x > a.json.data && x[-1] != '\n') x--, y--;
            fprintf(stderr, "  once:  %.1500s\n  twice: %.1500s\n", x, y);
        }
        SW_CHECK(sd.duplicates == sa.samples && sd.samples == 2 * sa.samples,
                 "duplicates %llu, samples %llu (once: %llu samples)",
                 (unsigned long long)sd.duplicates, (unsigned long long)sd.samples,
                 (unsigned long long)sa.samples);
        SW_CHECK(sa.duplicates == 0, "%llu duplicates counted without any",
                 (unsigned long long)sa.duplicates);
        total_records += a.n;
        free_records(&a);
        free_records(&b);
        free_records(&d);
        free_input(&in);
    }
    fprintf(stderr, "determinism and duplicates: 12 inputs, %zu records compared\n", total_records);
    SW_CHECK_END();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_equals_batch),
        cmocka_unit_test(test_determinism_and_duplicates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
