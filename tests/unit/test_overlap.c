/*
 * Storms as the field makes them (issue 36; SPEC 6 step 5, "one storm, one
 * episode", "storms in a row" and "no storm, no page"), judged against
 * `stormwatch gen`'s ground truth, family by family:
 *  - rows: storms in a row that do not overlap, under field noise (jitter
 *    0.3 of the interval, 1-5 % of samples lost, collector gaps of 2-5 s,
 *    host clocks skewed by up to 3 s), 64 to 2,048 ranks: every storm one
 *    episode naming its own rank (or a tie that holds it), never two;
 *  - single: one storm under the same noise, 48 to 512 ranks at 100 and
 *    250 ms: one episode naming its rank, never a second (a rank whose
 *    neighbours or own first samples were in a collector gap is no
 *    evidence of another storm);
 *  - no storm: a lone spike (--lone), slow leaks, a whole-job restart: no
 *    episode;
 *  - overlap: a first storm that is a slow wave over the ranks, a second
 *    one starting on another rank 10-20 s after it while the first has not
 *    reached every rank (gen --overlap); field: the same with noise; large:
 *    2,048 and 4,096 ranks overlapping; issue: the issue's case (48 ranks at
 *    250 ms, storms 12 s apart), 10 seeds. The engine does not yet trigger every
 *    such second storm on the event that first shows two of its ranks (some
 *    late): these families print what they measured and hold that no storm
 *    gives two episodes, none is missed (taken for the rest of the first)
 *    and no storm goes unseen by the generator (docs/semantics.md, "Storms
 *    that overlap").
 * A storm's expected trigger is the event that first shows two of its ranks
 * past their hit (the first sample of each rank at or after the generator's
 * planned hit). Each family prints jobs, storms, on time, late by how much,
 * early, missed, extra episodes, right first rank. SW_FIELD_SEEDS=N runs N
 * seeds per case instead of 1 (bench/field_sweep.sh: the longer sweep);
 * SW_FIELD_STRICT=1 checks every storm's outcome in every family.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_codec_telemetry.h"
#include "sw_detect.h"
#include "sw_gen.h"
#include "sw_testlib.h"

/* One record, for SW_FIELD_DEBUG. */
typedef struct drec_s {
    size_t line;
    int action, reason;
    int64_t episode, first, ts;
} drec_t;

typedef struct trig_s {
    int64_t episode;
    size_t line;
    int64_t first;
    int64_t *tied;
    size_t ntied;
} trig_t;

/* What a family measured. */
typedef struct fam_s {
    const char *name;
    bool strict; /* every storm one episode, named right (else measured, see fam_floor) */
    bool timely; /* and triggered on the event that first shows two of its ranks */
    size_t jobs, storms, on_time, late, early, right, extra, missed, paged_nostorm;
    int64_t late_max_ns, ranks_min, ranks_max;
} fam_t;

static size_t g_seeds = 1;
static bool g_strict;      /* SW_FIELD_STRICT=1: every storm's outcome is checked, not the floors */
static const char *g_only; /* SW_FIELD_ONLY=name: only that family runs (the others pass) */
static bool g_debug; /* SW_FIELD_DEBUG=1: a storm not on time prints its first ranks and records */

/* Whether family @p name is left out (SW_FIELD_ONLY). */
static bool fam_skip(const char *name)
{
    return g_only != NULL && *g_only != '\0' && strcmp(g_only, name) != 0;
}

/* SW_FIELD_DEBUG: storm k was not triggered on time (line @p got, expected
 * line @p want): its first ranks as the stream showed them, with the storm
 * before's hit on each (ms from storm k's first hit), and the records from
 * its first rank's event on. One job per case is assumed (truth[k].job). */
static void debug_storm(const sw_gen_opts_t *o, const sw_gen_t *gen, const sw_gen_storm_t *truth,
                        size_t nt, size_t k, const int64_t *hit, const int64_t *showline,
                        const drec_t *dr, size_t ndr, const int64_t *evrank, const int64_t *evts,
                        size_t got, size_t want)
{
    (void)gen;
    (void)nt;
    size_t R = (size_t)o->ranks;
    int64_t h0 = hit[k * R + (size_t)truth[k].rank];
    fprintf(stderr, "DEBUG seed %llu ranks %lld storm %zu rank %lld: got line %zu want %zu\n",
            (unsigned long long)o->seed, (long long)o->ranks, k, (long long)truth[k].rank, got,
            want);
    /* the first 6 ranks by show line */
    size_t last = 0;
    bool any = false;
    for (int n = 0; n < 6; n++) {
        int64_t best = -1;
        size_t bl = SIZE_MAX;
        for (size_t r = 0; r < R; r++) {
            int64_t l = showline[k * R + r];
            if (l < 0 || (any && (size_t)l <= last) || (size_t)l >= bl) continue;
            bl = (size_t)l;
            best = (int64_t)r;
        }
        if (best < 0) break;
        any = true;
        last = bl;
        int64_t prev = k > 0 ? hit[(k - 1) * R + (size_t)best] : -1;
        fprintf(stderr,
                "  rank %lld: hit %+lld ms, shown line %zu (ts %+lld ms), storm before hit it "
                "%+lld ms\n",
                (long long)best, (long long)((hit[k * R + (size_t)best] - h0) / 1000000), bl,
                (long long)((evts[bl] - h0) / 1000000),
                (long long)(prev >= 0 ? (prev - h0) / 1000000 : -999999));
    }
    for (size_t i = 0; i < ndr; i++) {
        if (dr[i].line + 2000 < want && dr[i].action != 0) continue;
        fprintf(
            stderr,
            "  rec line %zu: action %d ep %lld reason %d first %lld rank-of-event %lld ts %+lld ms\n",
            dr[i].line, dr[i].action, (long long)dr[i].episode, dr[i].reason,
            (long long)dr[i].first, (long long)evrank[dr[i].line],
            (long long)((dr[i].ts - h0) / 1000000));
    }
}

/* One generated job (or jobs) through the decoder and the engine, in
 * arrival order, judged against the generator's truth into @p f. */
static void run_case(const sw_gen_opts_t *o, sw_params_t p, bool storms_page, fam_t *f)
{
    char err[512];
    sw_gen_t *gen = sw_gen_new(o, err, sizeof(err));
    SW_CHECK(gen != NULL, "gen: %s", err);
    if (!gen) return;
    sw_check_case(
        "stormwatch gen --seed %llu --ranks %lld --samples %lld --interval-ms %lld "
        "--storms %lld --storm-gap-ms %lld --storm-at %g --spread-ms %lld "
        "--storm-rank -1 --jitter %g --loss %g --gaps %lld --skew-ms %lld%s%s%s "
        "--leaks %lld --leak-at %g | stormwatch replay --window-samples %lld",
        (unsigned long long)o->seed, (long long)o->ranks, (long long)o->samples,
        (long long)o->interval_ms, (long long)o->storms, (long long)o->storm_gap_ms, o->storm_at,
        (long long)o->spread_ms, o->jitter, o->loss, (long long)o->gaps, (long long)o->skew_ms,
        o->overlap ? " --overlap" : "", o->lone ? " --lone" : "",
        o->job_restart ? " --job-restart" : "", (long long)o->leaks, o->leak_at,
        (long long)p.window_samples);
    sw_buf_t text;
    sw_buf_init(&text);
    while (sw_gen_next(gen, &text)) {
    }
    const sw_gen_storm_t *truth;
    size_t nt = sw_gen_truth(gen, &truth);
    /* The planned hit of every storm on every rank (raw timestamps). */
    int64_t *hit = malloc((nt * (size_t)o->ranks + 1) * sizeof(*hit));
    for (size_t k = 0; k < nt; k++)
        for (int64_t r = 0; r < o->ranks; r++)
            hit[k * (size_t)o->ranks + (size_t)r] = sw_gen_hit_ts(gen, truth[k].job, truth[k].storm,
                                                                  r);
    /* Per storm: ranks seen past their hit, and the line of the second. */
    size_t *expect = calloc(nt + 1, sizeof(*expect));
    size_t *seen = calloc(nt + 1, sizeof(*seen));
    unsigned char *shown = calloc(nt * (size_t)o->ranks + 1, 1);
    int64_t *newest = NULL;
    size_t nlines = 0, capl = 0;
    trig_t *tr = NULL;
    size_t ntr = 0, captr = 0;
    int64_t episodes = 0;
    drec_t *dr = NULL;
    size_t ndr = 0, capdr = 0, capev = 0;
    int64_t *evrank = NULL, *evts = NULL;
    int64_t *showline = g_debug ? malloc((nt * (size_t)o->ranks + 1) * sizeof(*showline)) : NULL;
    for (size_t x = 0; g_debug && x < nt * (size_t)o->ranks; x++) showline[x] = -1;
    sw_detector_t *det = sw_detect_new(p);
    sw_tdec_t *dec = sw_tdec_new();
    int64_t hold_ns = 3500000000LL + 8 * o->interval_ms * 1000000;
    int64_t newest_ts = INT64_MIN;
    for (size_t i = 0; i < text.len;) {
        const char *nl = memchr(text.data + i, '\n', text.len - i);
        size_t end = nl ? (size_t)(nl - text.data) : text.len;
        sw_event_t ev;
        sw_err_t rc = sw_tdec_json(dec, text.data + i, end - i, &ev, err, sizeof(err));
        SW_CHECK(rc == SW_OK, "line %zu: %s", nlines + 1, err);
        if (rc != SW_OK) break;
        if (nlines == capl) {
            capl = capl ? 2 * capl : 4096;
            newest = realloc(newest, capl * sizeof(*newest));
        }
        if (ev.kind == SW_EV_SAMPLE) {
            if (ev.timestamp_ns > newest_ts) newest_ts = ev.timestamp_ns;
            int64_t job = 0;
            for (size_t k = 0; k < nt; k++)
                if (ev.has_job_id && strlen(truth[k].job_id) == ev.job_id.len &&
                    memcmp(truth[k].job_id, ev.job_id.ptr, ev.job_id.len) == 0)
                    job = truth[k].job;
            for (size_t k = 0; k < nt; k++) {
                if (truth[k].job != job) continue;
                int64_t h = hit[k * (size_t)o->ranks + (size_t)ev.rank];
                unsigned char *s = &shown[k * (size_t)o->ranks + (size_t)ev.rank];
                if (h < 0 || *s || ev.timestamp_ns < h || ev.timestamp_ns >= h + hold_ns) continue;
                *s = 1;
                if (showline) showline[k * (size_t)o->ranks + (size_t)ev.rank] = (int64_t)nlines;
                if (++seen[k] == 2) expect[k] = nlines;
            }
        }
        newest[nlines] = newest_ts;
        const sw_record_t *rec;
        SW_CHECK(sw_detect_feed_at(det, &ev, 0, (int64_t)nlines, &rec, err, sizeof(err)) == SW_OK,
                 "line %zu: %s", nlines + 1, err);
        if (rec && rec->episode > episodes) episodes = rec->episode;
        if (rec && g_debug) {
            if (ndr == capdr) {
                capdr = capdr ? 2 * capdr : 16;
                dr = realloc(dr, capdr * sizeof(*dr));
            }
            dr[ndr++] = (drec_t){nlines,
                                 (int)rec->action,
                                 (int)rec->resolve_reason,
                                 rec->episode,
                                 rec->analysis.n_suspects ? rec->analysis.suspects[0].rank : -1,
                                 ev.timestamp_ns};
        }
        if (g_debug && ev.kind == SW_EV_SAMPLE) {
            if (nlines >= capev) {
                capev = capev ? 2 * capev : 4096;
                while (capev <= nlines) capev *= 2;
                evrank = realloc(evrank, capev * sizeof(*evrank));
                evts = realloc(evts, capev * sizeof(*evts));
            }
            evrank[nlines] = ev.rank;
            evts[nlines] = ev.timestamp_ns;
        }
        if (rec && rec->action == SW_ACTION_TRIGGER) {
            if (ntr == captr) {
                captr = captr ? 2 * captr : 16;
                tr = realloc(tr, captr * sizeof(*tr));
            }
            trig_t *t = &tr[ntr++];
            t->episode = rec->episode;
            t->line = nlines;
            t->first = rec->analysis.n_suspects ? rec->analysis.suspects[0].rank : -1;
            t->ntied = rec->n_tied;
            t->tied = malloc((rec->n_tied + 1) * sizeof(*t->tied));
            if (rec->n_tied) memcpy(t->tied, rec->tied_ranks, rec->n_tied * sizeof(*t->tied));
        }
        nlines++;
        i = end + 1;
    }
    f->jobs += (size_t)o->jobs;
    if (f->ranks_min == 0 || o->ranks < f->ranks_min) f->ranks_min = o->ranks;
    if (o->ranks > f->ranks_max) f->ranks_max = o->ranks;
    if (!storms_page) {
        /* No storm, no page. */
        SW_CHECK(ntr == 0,
                 "no storm, yet %zu episode(s): the first triggered at line %zu naming %lld", ntr,
                 ntr ? tr[0].line + 1 : 0, ntr ? (long long)tr[0].first : -1LL);
        f->paged_nostorm += ntr;
    } else {
        f->storms += nt;
        if (g_strict || f->strict)
            SW_CHECK(episodes == (int64_t)nt, "%lld episodes for %zu storms", (long long)episodes,
                     nt);
        if (episodes > (int64_t)nt) f->extra += (size_t)(episodes - (int64_t)nt);
        for (size_t k = 0; k < nt; k++) {
            /* The episode of storm k: the first trigger at or after the
             * event of its first rank's rise that no earlier storm took. */
            const trig_t *t = k < ntr ? &tr[k] : NULL;
            SW_CHECK(seen[k] >= 2, "storm %zu: the stream shows %zu of its ranks", k, seen[k]);
            if (g_strict || f->strict)
                SW_CHECK(t != NULL, "storm %zu (rank %lld): no episode", k,
                         (long long)truth[k].rank);
            if (!t || seen[k] < 2) {
                f->missed++;
                continue;
            }
            bool right = t->first == truth[k].rank;
            for (size_t x = 0; x < t->ntied; x++) right = right || t->tied[x] == truth[k].rank;
            f->right += right;
            if (t->line == expect[k]) {
                f->on_time++;
            } else if (t->line > expect[k]) {
                int64_t by = newest[t->line] - newest[expect[k]];
                f->late++;
                if (by > f->late_max_ns) f->late_max_ns = by;
            } else {
                f->early++;
            }
            if (g_debug && t->line != expect[k])
                debug_storm(o, gen, truth, nt, k, hit, showline, dr, ndr, evrank, evts, t->line,
                            expect[k]);
            if (g_strict || f->timely)
                SW_CHECK(
                    t->line == expect[k],
                    "storm %zu (rank %lld): triggered on line %zu, the event that first shows two "
                    "of its ranks is line %zu (%+lld ms of job time)",
                    k, (long long)truth[k].rank, t->line + 1, expect[k] + 1,
                    (long long)((newest[t->line] - newest[expect[k]]) / 1000000));
            if (g_strict || f->strict)
                SW_CHECK(right, "storm %zu: its trigger names rank %lld (%zu tied), not rank %lld",
                         k, (long long)t->first, t->ntied, (long long)truth[k].rank);
        }
    }
    free(dr);
    free(evrank);
    free(evts);
    free(showline);
    for (size_t k = 0; k < ntr; k++) free(tr[k].tied);
    free(tr);
    free(newest);
    free(shown);
    free(seen);
    free(expect);
    free(hit);
    sw_tdec_destroy(dec);
    sw_detect_destroy(det);
    sw_buf_clear(&text);
    sw_gen_destroy(gen);
}

/* What an overlapping family must hold today: no storm gives two episodes,
 * no storm page is lost for no-storm jobs, and every storm has an episode
 * of its own (none missed: taken for the rest of the storm before, as at
 * 2,048-4,096 ranks or after a storm's hold before the rule of issue 36's
 * second pass); on time and right first rank are measured, not held (the
 * engine does not yet tell every overlapping storm on time). */
static void fam_floor(const fam_t *f)
{
    SW_CHECK(f->paged_nostorm == 0, "%s: %zu no-storm pages", f->name, f->paged_nostorm);
    SW_CHECK(f->extra == 0, "%s: %zu extra episodes for %zu storms", f->name, f->extra, f->storms);
    SW_CHECK(f->missed == 0, "%s: %zu of %zu storms missed (no episode of their own)", f->name,
             f->missed, f->storms);
}

static void fam_print(const fam_t *f)
{
    fprintf(stderr,
            "%-9s %3zu jobs (%lld-%lld ranks), %3zu storms: %3zu on time, %zu late (at most %lld "
            "ms), %zu early, %zu missed, %zu extra episodes, %3zu right first rank; no-storm "
            "pages %zu\n",
            f->name, f->jobs, (long long)f->ranks_min, (long long)f->ranks_max, f->storms,
            f->on_time, f->late, (long long)(f->late_max_ns / 1000000), f->early, f->missed,
            f->extra, f->right, f->paged_nostorm);
}

static sw_params_t params(int64_t window)
{
    sw_params_t p = sw_params_default();
    p.window_samples = window;
    p.stale_ms = 60000;
    return p;
}

/* A first storm that is a slow wave (its front takes about 1.5 gaps to go
 * round the ring) and a second one gap_ms after it. */
static sw_gen_opts_t wave(uint64_t seed, int64_t ranks, int64_t interval_ms, int64_t gap_ms)
{
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.seed = seed;
    o.ranks = ranks;
    o.interval_ms = interval_ms;
    o.storms = 2;
    o.overlap = true;
    o.storm_gap_ms = gap_ms;
    o.storm_rank = SW_GEN_STORM_RANK_RANDOM;
    /* rank at distance d is hit spread * (1 + d / 8) after the storm rank */
    o.spread_ms = gap_ms * 3 / 2 / (1 + ranks / 16);
    int64_t lead = 6000 / interval_ms; /* 6 s before the first storm */
    o.samples = lead + (gap_ms + 2 * o.spread_ms + 8000) / interval_ms;
    o.storm_at = (double)lead / (double)o.samples;
    o.jitter = 0.3;
    return o;
}

static void test_overlapping_waves(void **state)
{
    (void)state;
    sw_check_reset();
    fam_t f = {.name = "overlap"};
    if (fam_skip(f.name)) return;
    static const int64_t sizes[] = {48, 64, 256};
    static const int64_t ivs[] = {250, 100, 100};
    for (uint64_t s = 0; s < g_seeds; s++)
        for (size_t i = 0; i < 3; i++)
            for (int64_t gap = 10000; gap <= 20000; gap += 5000) {
                sw_gen_opts_t o = wave(1 + s * 7 + (uint64_t)gap / 5000, sizes[i], ivs[i], gap);
                run_case(&o, params(512), true, &f);
            }
    fam_print(&f);
    if (!g_strict) fam_floor(&f);
    SW_CHECK_END();
}

/* The issue's case (docs/semantics.md, "Storms that overlap"): 48 ranks at
 * 250 ms, a wave of 3 s per 8 ranks, storms 12 s apart, jitter 0.3; 10
 * seeds per seed of the sweep. */
static void test_issue_case(void **state)
{
    (void)state;
    sw_check_reset();
    fam_t f = {.name = "issue"};
    if (fam_skip(f.name)) return;
    for (uint64_t s = 0; s < 10 * g_seeds; s++) {
        sw_gen_opts_t o;
        sw_gen_opts_default(&o);
        o.seed = 1 + s;
        o.ranks = 48;
        o.interval_ms = 250;
        o.spread_ms = 3000;
        o.storms = 2;
        o.storm_gap_ms = 12000;
        o.overlap = true;
        o.storm_at = 0.3;
        o.samples = 400;
        o.storm_rank = SW_GEN_STORM_RANK_RANDOM;
        o.jitter = 0.3;
        run_case(&o, params(512), true, &f);
    }
    fam_print(&f);
    if (!g_strict) fam_floor(&f);
    SW_CHECK_END();
}

/* The issue's case on seeds where storm 2 starts on a rank storm 1 reached
 * about a second before, while storm 1's wave passes on to its neighbours
 * (one of them reached just before storm 2's rise): which of the rank's two
 * rises is storm 1's is read from the median of its neighbours' spikes, not
 * the nearest one, and storm 2 is triggered on time (docs/semantics.md,
 * "Storms that overlap"). Before, the nearest neighbour's spike fitted the
 * second rise, and storm 2 was triggered one event late (seed 4: rank 36,
 * reached by storm 1 at 42.02 s and rising again at 43.18 s, its neighbour
 * 34 reached at 43.11 s). */
static void test_issue_second_rise_median(void **state)
{
    (void)state;
    sw_check_reset();
    fam_t f = {.name = "issue median", .strict = true, .timely = true};
    if (fam_skip("issue")) return;
    static const uint64_t seeds[] = {4, 13};
    for (size_t s = 0; s < sizeof(seeds) / sizeof(*seeds); s++) {
        sw_gen_opts_t o;
        sw_gen_opts_default(&o);
        o.seed = seeds[s];
        o.ranks = 48;
        o.interval_ms = 250;
        o.spread_ms = 3000;
        o.storms = 2;
        o.storm_gap_ms = 12000;
        o.overlap = true;
        o.storm_at = 0.3;
        o.samples = 400;
        o.storm_rank = SW_GEN_STORM_RANK_RANDOM;
        o.jitter = 0.3;
        run_case(&o, params(512), true, &f);
    }
    SW_CHECK(f.on_time == 4, "%zu of 4 storms on time", f.on_time);
    SW_CHECK_END();
}

/* A member's two rises whose neighbours' median lies between them, near
 * neither by two tie lengths (the wave's noise): the rank rose twice, and a
 * storm reaches a rank once, so one rise is the next storm's whichever it
 * is; the rise nearer the median is the open storm's (docs/semantics.md,
 * "Storms that overlap"). Before, it could not tell: storm 2 was paged one
 * event late, on the event of its second rank (the issue's seed 10: rank
 * 27; the field's seed 123, 128 ranks with loss, gaps and skewed clocks:
 * rank 8, which storm 1 reached 0.5 s before storm 2, its neighbours'
 * median 0.3 s after the first rise and 0.2 s before the second). */
static void test_median_between_rises(void **state)
{
    (void)state;
    sw_check_reset();
    fam_t f = {.name = "median between", .strict = true, .timely = true};
    if (fam_skip("issue") && fam_skip("field")) return;
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.seed = 10;
    o.ranks = 48;
    o.interval_ms = 250;
    o.spread_ms = 3000;
    o.storms = 2;
    o.storm_gap_ms = 12000;
    o.overlap = true;
    o.storm_at = 0.3;
    o.samples = 400;
    o.storm_rank = SW_GEN_STORM_RANK_RANDOM;
    o.jitter = 0.3;
    run_case(&o, params(512), true, &f);
    o = wave(123, 128, 100, 16000);
    o.loss = 0.02;
    o.gaps = 2;
    o.skew_ms = 1000;
    run_case(&o, params(512), true, &f);
    SW_CHECK(f.on_time == 4 && f.early == 0, "%zu of 4 storms on time, %zu early", f.on_time,
             f.early);
    SW_CHECK_END();
}

/* A second storm that starts on a rank the first storm has not reached
 * (its rise taken into the open episode, the first storm's front near),
 * and the first storm reaches it seconds later: when its neighbours are
 * mostly not reached yet (their median "later than now") and the members
 * near spiked about the second rise, the second rise is the first storm's
 * arrival and the first rise the next storm's start (next_storm on that
 * sample). The first storm's neighbours that rise next are its tail, told
 * by their nearest ranks where its learnt front cannot tell (a 64-rank
 * job: its reach and speed cover half the ring), so storm 2 is triggered on
 * its own second rank, neither before nor after. Overlap seed 3, 64 ranks:
 * storm 2 on rank 40 at +0 s, storm 1 reaching it at +2.4 s and its
 * neighbour 37 at +2.6 s, storm 2's second rank 41 at +4.1 s. Before,
 * storm 2 was paged one event late (on rank 41's event); with the arrival
 * alone and not the tail, 1.5 s early (on rank 37's). */
static void test_front_arrives_now(void **state)
{
    (void)state;
    sw_check_reset();
    fam_t f = {.name = "arrives now", .strict = true, .timely = true};
    if (fam_skip("overlap")) return;
    sw_gen_opts_t o = wave(3, 64, 100, 10000);
    run_case(&o, params(512), true, &f);
    SW_CHECK(f.on_time == 2 && f.early == 0, "%zu of 2 storms on time, %zu early", f.on_time,
             f.early);
    SW_CHECK_END();
}

static void test_field_noise(void **state)
{
    (void)state;
    sw_check_reset();
    fam_t f = {.name = "field"};
    if (fam_skip(f.name)) return;
    static const int64_t sizes[] = {48, 128, 512};
    for (uint64_t s = 0; s < g_seeds; s++)
        for (size_t i = 0; i < 3; i++) {
            sw_gen_opts_t o = wave(100 + s * 11 + i, sizes[i], i ? 100 : 250,
                                   12000 + 4000 * (int64_t)i);
            o.loss = 0.01 + 0.01 * (double)i;
            o.gaps = 2;
            o.skew_ms = i == 2 ? 3000 : 1000;
            run_case(&o, params(512), true, &f);
        }
    fam_print(&f);
    if (!g_strict) fam_floor(&f);
    SW_CHECK_END();
}

static void test_large_jobs(void **state)
{
    (void)state;
    sw_check_reset();
    fam_t f = {.name = "large"};
    if (fam_skip(f.name)) return;
    for (uint64_t s = 0; s < g_seeds; s++) {
        sw_gen_opts_t o = wave(200 + s, 2048, 100, 12000);
        o.loss = 0.01;
        o.gaps = 1;
        o.samples = 60 + 120 + 60;
        o.storm_at = 0.25;
        run_case(&o, params(512), true, &f);
        o = wave(300 + s, 4096, 100, 10000);
        o.samples = 60 + 100 + 50;
        o.storm_at = 60.0 / 210.0;
        run_case(&o, params(512), true, &f);
    }
    fam_print(&f);
    if (!g_strict) fam_floor(&f);
    SW_CHECK_END();
}

/* Storms in a row that do not overlap, under field noise: the outcomes the
 * engine holds today, checked storm by storm. */
static void test_rows_in_noise(void **state)
{
    (void)state;
    sw_check_reset();
    fam_t f = {.name = "rows", .strict = true};
    if (fam_skip(f.name)) return;
    static const int64_t sizes[] = {64, 256, 2048};
    static const int64_t ivs[] = {250, 100, 100};
    for (uint64_t s = 0; s < g_seeds; s++)
        for (size_t i = 0; i < 3; i++) {
            sw_gen_opts_t o;
            sw_gen_opts_default(&o);
            o.seed = 500 + s * 13 + i;
            o.ranks = sizes[i];
            o.interval_ms = ivs[i];
            o.storms = 2;
            o.storm_rank = SW_GEN_STORM_RANK_RANDOM;
            o.jitter = 0.3;
            o.loss = 0.01 + 0.02 * (double)i;
            o.gaps = 2;
            o.skew_ms = 3000;
            o.samples = (int64_t)(60000 / ivs[i]);
            o.storm_at = 0.1;
            if (sizes[i] > 1024) o.spread_ms = 50; /* the whole ring within ~6 s */
            run_case(&o, params(512), true, &f);
        }
    fam_print(&f);
    SW_CHECK_END();
}

/* One storm under the field's noise (jitter 0.3, 1-5 % loss, collector
 * gaps, clocks skewed by up to 2 s), 48 to 512 ranks at 100 and 250 ms: one
 * episode naming its own rank (or a tie that holds it), never a second one.
 * A rank whose neighbours were in a collector gap when it rose must not
 * look like the start of another storm (docs/semantics.md, "Storms that
 * overlap"). */
static void test_single_in_noise(void **state)
{
    (void)state;
    sw_check_reset();
    fam_t f = {.name = "single", .strict = true};
    if (fam_skip(f.name)) return;
    static const int64_t sizes[] = {48, 64, 256, 512};
    for (uint64_t s = 0; s < g_seeds; s++)
        for (size_t i = 0; i < 4; i++)
            for (int64_t iv = 100; iv <= 250; iv += 150) {
                sw_gen_opts_t o;
                sw_gen_opts_default(&o);
                o.seed = 1 + s * 17 + i;
                o.ranks = sizes[i];
                o.interval_ms = iv;
                o.storms = 1;
                o.storm_rank = SW_GEN_STORM_RANK_RANDOM;
                o.jitter = 0.3;
                o.loss = 0.01 + 0.01 * (double)((s + i) % 5);
                o.gaps = 2;
                o.skew_ms = 2000;
                o.samples = 40000 / iv;
                o.storm_at = 0.3;
                run_case(&o, params(512), true, &f);
            }
    fam_print(&f);
    SW_CHECK_END();
}

static void test_no_storm_no_page(void **state)
{
    (void)state;
    sw_check_reset();
    fam_t f = {.name = "no storm"};
    if (fam_skip(f.name)) return;
    for (uint64_t s = 0; s < g_seeds; s++)
        for (int64_t ranks = 64; ranks <= 512; ranks *= 8) {
            sw_gen_opts_t o;
            sw_gen_opts_default(&o);
            o.seed = 400 + s;
            o.ranks = ranks;
            o.jitter = 0.3;
            o.loss = 0.02;
            o.storm_rank = SW_GEN_STORM_RANK_RANDOM;
            /* a lone spike */
            o.lone = true;
            o.storms = 1;
            o.samples = 600;
            o.storm_at = 0.3;
            run_case(&o, params(512), false, &f);
            /* slow leaks */
            o.lone = false;
            o.storms = 0;
            o.leaks = 4;
            o.leak_at = 0.05;
            o.samples = 1000;
            run_case(&o, params(512), false, &f);
            /* the whole job restarts */
            o.leaks = 0;
            o.job_restart = true;
            o.restart_at = 0.3;
            o.samples = 400;
            run_case(&o, params(512), false, &f);
        }
    fam_print(&f);
    SW_CHECK_END();
}

int main(void)
{
    /* SW_TEST_ONLY=CASE: that case only (cmocka's filter): CTest runs each
     * case as a test of its own, so that ctest -j spreads them. */
    const char *only = getenv("SW_TEST_ONLY");
    if (only) cmocka_set_test_filter(only);
    const char *n = getenv("SW_FIELD_SEEDS");
    if (n && atoi(n) > 0) g_seeds = (size_t)atoi(n);
    const char *strict = getenv("SW_FIELD_STRICT");
    g_strict = strict && strcmp(strict, "1") == 0;
    g_only = getenv("SW_FIELD_ONLY");
    const char *dbg = getenv("SW_FIELD_DEBUG");
    g_debug = dbg && strcmp(dbg, "1") == 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_in_noise),
        cmocka_unit_test(test_overlapping_waves),
        cmocka_unit_test(test_issue_case),
        cmocka_unit_test(test_issue_second_rise_median),
        cmocka_unit_test(test_median_between_rises),
        cmocka_unit_test(test_front_arrives_now),
        cmocka_unit_test(test_field_noise),
        cmocka_unit_test(test_large_jobs),
        cmocka_unit_test(test_single_in_noise),
        cmocka_unit_test(test_no_storm_no_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
