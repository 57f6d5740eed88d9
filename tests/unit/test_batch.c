/*
 * The batch analysis (sw_batch_*, SPEC 3) on hand-made inputs, one table
 * row per rule of SPEC 3 "points easy to get wrong": threshold truncation
 * and the double product, the median (even counts, above 2^53, fallbacks),
 * candidate order, suspects, confidence, the job_id filter, notes (order
 * and deduplication), world-size claims, the skew note, the anchor, the
 * per-rank sample order, empty and degenerate inputs. Each expectation is
 * the whole analysis derived by hand from the seed's rules, as JSON
 * (single quotes stand for double quotes), compared as SPEC 7 says with
 * the output of sw_alert_json_analysis(); a failure names the case and
 * the path of the first differing value.
 *
 * Events are written in a small notation, ';' between events:
 *   t=TS r=RANK w=WORLD u=USED j=JOB s=SESSION p=PID h=HOST i=INTERVAL_MS e=TYPE
 * e defaults to sample, r to 0, u to 0 for samples; w defaults to r+1
 * (a claim that never exceeds the observed world size); j, s, p, h, i
 * are absent unless given. An event that starts with '{' is a raw JSON
 * line (single quotes for double quotes). Every event goes through the
 * JSON decoder first, as in `stormwatch analyze`.
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
#include "sw_detect.h"
#include "sw_codec_alert.h"
#include "sw_codec_telemetry.h"
#include "sw_testlib.h"

/* Parameters of a case; zero fields take the SPEC 4 defaults. */
typedef struct bparams_s {
    int64_t min_bytes;
    double fraction;
    int64_t skew;
} bparams_t;

typedef struct batch_case_s {
    const char *name;
    bparams_t params;
    const char *events;
    const char *want;
} batch_case_t;

#define DEFAULTS \
    {            \
        0, 0, 0  \
    }
#define SMALL     \
    {             \
        100, 0, 0 \
    } /* 100-byte floor: small numbers in the cases */

/* Notes, spelled once. */
#define N_IGNORED "'Ignored non-sample events during cross-rank analysis.'"
#define N_NOSAMPLE "'No sample telemetry events were available for distributed analysis.'"
#define N_NOEVENTS "'No telemetry events were provided.'"
#define N_MULTI "'Multiple job_id values were observed; filtering to the most common value.'"
#define N_NOSPIKE "'No qualifying cross-rank spikes were detected.'"
#define N_ONE "'Only one rank produced a qualifying spike; confidence is limited.'"
#define N_TWO "'At least two ranks are required for cross-rank first-cause analysis.'"
#define N_FEW(list) \
    "'Some ranks have fewer than two samples and cannot contribute to spike detection: " list ".'"
#define N_MISSING(list) "'Missing rank data for ranks: " list ".'"
#define N_SKEW(rank, off) \
    "'Rank " rank " starts " off " ns from the anchor; first-sample alignment may be approximate.'"

/* One suspect. */
#define SUSPECT(rank, ts, aligned, peak, n, lead, conf, support, phase)                     \
    "{'rank': " rank ", 'first_spike_timestamp_ns': " ts                                    \
    ", 'aligned_first_spike_timestamp_ns': " aligned ", 'peak_delta_bytes': " peak          \
    ", 'spike_window_samples': " n ", 'lead_over_cluster_onset_ns': " lead                  \
    ", 'confidence': '" conf                                                                \
    "', 'evidence': "                                                                       \
    "{'device_used_delta_bytes': " peak ", 'supporting_ranks_at_or_before_onset': " support \
    "}, "                                                                                   \
    "'phase_attribution': " phase "}"

static const batch_case_t k_cases[] = {
    /* -- SPEC 3.3: threshold ------------------------------------------------ */
    {"threshold truncates the double product (rise = threshold - 1: no spike)", DEFAULTS,
     /* max 671088659 * 0.10 = 67108865.9 -> 67108865 (> the 64 MiB floor 67108864) */
     "t=0 u=671088659; t=10 u=0; t=20 u=67108865;"
     "t=0 r=1 u=671088659; t=10 r=1 u=0; t=20 r=1 u=67108864",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 3, '1': 3}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [" SUSPECT(
         "0", "20", "20", "67108865", "1", "0", "low", "1", "null") "], 'notes': [" N_ONE "]}"},
    {"threshold is the double product above 2^53 (not M/10, not exact)", DEFAULTS,
     /* M1 = 864691128455135233: double product 86469112845513536, M1/10 = ...523;
      * M2 = 4611686018427388027: double product 461168601842738816, exact
      * product with the double 0.1 = ...828. Rises: T (spike) and T-1 (none). */
     "t=0 u=864691128455135233; t=10 u=0; t=20 u=86469112845513536;"
     "t=0 r=1 u=864691128455135233; t=10 r=1 u=0; t=20 r=1 u=86469112845513535;"
     "t=0 r=2 u=4611686018427388027; t=10 r=2 u=0; t=20 r=2 u=461168601842738816;"
     "t=0 r=3 u=4611686018427388027; t=10 r=3 u=0; t=20 r=3 u=461168601842738815",
     "{'job_id': null, 'world_size': 4, 'participating_ranks': [0, 1, 2, 3], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 3, '1': 3, '2': 3, '3': 3},"
     " 'alignment_offsets_ns': {'0': 0, '1': 0, '2': 0, '3': 0},"
     " 'cluster_onset_timestamp_ns': 20, 'first_cause_suspects': [" SUSPECT(
         "2", "20", "20", "461168601842738816", "1", "0", "medium", "2",
         "null") ", " SUSPECT("0", "20", "20", "86469112845513536", "1", "0", "medium", "2",
                              "null") "], 'notes': []}"},
    {"cumulative rise over several steps; a drop or a flat step restarts it", SMALL,
     "t=0 u=0; t=10 u=40; t=20 u=80; t=30 u=120;"
     "t=0 r=1 u=0; t=10 r=1 u=60; t=20 r=1 u=50; t=30 r=1 u=110; t=40 r=1 u=170;"
     "t=0 r=2 u=0; t=10 r=2 u=60; t=20 r=2 u=60; t=30 r=2 u=120",
     "{'job_id': null, 'world_size': 3, 'participating_ranks': [0, 1, 2], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 4, '1': 5, '2': 4},"
     " 'alignment_offsets_ns': {'0': 0, '1': 0, '2': 0},"
     " 'cluster_onset_timestamp_ns': 40, 'first_cause_suspects': [" SUSPECT(
         "0", "30", "30", "120", "3", "10", "high", "2",
         "null") ", " SUSPECT("1", "40", "40", "120", "2", "0", "low", "2",
                              "null") "], 'notes': []}"},
    {"fraction and skew multiplier from the parameters",
     {100, 0.5, 2},
     /* rank 0 max 1000 -> threshold 500: rise 499 is no spike; rank 1 max
      * 300 -> threshold 150; median 10, skew limit 2*10 */
     "t=0 u=1000; t=10 u=0; t=20 u=499;"
     "t=21 r=1 u=0; t=31 r=1 u=150; t=41 r=1 u=300",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 3, '1': 3}, 'alignment_offsets_ns': {'0': 0, '1': 21},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [" SUSPECT(
         "1", "31", "10", "150", "1", "0", "low", "1",
         "null") "], 'notes': [" N_SKEW("1", "21") ", " N_ONE "]}"},

    /* -- SPEC 3.4: median ----------------------------------------------------- */
    {"even median truncates (10, 11 -> 10): offset 51 > 5*10", SMALL, "t=0; t=10; t=21; t=51 r=1",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 3, '1': 1}, 'alignment_offsets_ns': {'0': 0, '1': 51},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_SKEW("1", "51") ", " N_FEW("1") ", " N_NOSPIKE "]}"},
    {"skew note is strictly greater: offset 50 = 5*10", SMALL, "t=0; t=10; t=21; t=50 r=1",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 3, '1': 1}, 'alignment_offsets_ns': {'0': 0, '1': 50},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_FEW("1") ", " N_NOSPIKE "]}"},
    {"even median above 2^53: trunc(double(a+b)/2) = 2^53+2, offset 5*(2^53+2): no note", SMALL,
     /* gaps 2^53+1 and 2^53+2: a+b = 2^54+3 -> double 2^54+4 -> 2^53+2 (exact floor: 2^53+1) */
     "t=0; t=9007199254740993; t=18014398509481987; t=45035996273704970 r=1",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 3, '1': 1},"
     " 'alignment_offsets_ns': {'0': 0, '1': 45035996273704970},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_FEW("1") ", " N_NOSPIKE "]}"},
    {"even median above 2^53: offset 5*(2^53+2)+1 gets the note", SMALL,
     "t=0; t=9007199254740993; t=18014398509481987; t=45035996273704971 r=1",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 3, '1': 1},"
     " 'alignment_offsets_ns': {'0': 0, '1': 45035996273704971},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_SKEW("1", "45035996273704971") ", " N_FEW("1") ", " N_NOSPIKE "]}"},
    {"median falls back to sampling_interval_ms (no positive gap): 2 ms", SMALL,
     /* intervals 1, 2, 4 ms (0 ignored) -> median 2000000, limit 10000000 */
     "t=0 p=1 i=1; t=0 p=2 i=2; t=10000001 r=1 p=1 i=4; t=10000001 r=1 p=2 i=0",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 2, '1': 2}, 'alignment_offsets_ns': {'0': 0, '1': 10000001},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_SKEW("1", "10000001") ", " N_NOSPIKE "]}"},
    {"median fallback, even count (1 and 2 ms -> 1.5 ms): offset 7500001", SMALL,
     "t=0 p=1 i=1; t=0 p=2 i=0; t=7500001 r=1 p=1 i=2; t=7500001 r=1 p=2",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 2, '1': 2}, 'alignment_offsets_ns': {'0': 0, '1': 7500001},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_SKEW("1", "7500001") ", " N_NOSPIKE "]}"},
    {"median 0 without gaps or intervals: no skew note at any offset", SMALL,
     "t=0 p=1; t=0 p=2; t=1000000000000000 r=1 p=1; t=1000000000000000 r=1 p=2",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 2, '1': 2},"
     " 'alignment_offsets_ns': {'0': 0, '1': 1000000000000000},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_NOSPIKE "]}"},
    {"no positive gap: every spike aligns to the anchor's start (tie, medium)", SMALL,
     /* all gaps 0 (pids order the samples), no interval: median 0 */
     "t=5 p=1 u=0; t=5 p=2 u=500; t=5 r=1 p=1 u=0; t=5 r=1 p=2 u=0; t=5 r=1 p=3 u=500",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 2, '1': 3}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': 5, 'first_cause_suspects': [" SUSPECT(
         "0", "5", "5", "500", "1", "0", "medium", "2",
         "null") ", " SUSPECT("1", "5", "5", "500", "1", "0", "medium", "2",
                              "null") "], 'notes': []}"},

    /* -- SPEC 3.7: candidates, suspects, confidence -------------------------- */
    {"candidate order: aligned, then bigger peak, then lower rank", SMALL,
     "t=0 u=0; t=10 u=200; t=0 r=1 u=0; t=10 r=1 u=200; t=0 r=2 u=0; t=10 r=2 u=300",
     "{'job_id': null, 'world_size': 3, 'participating_ranks': [0, 1, 2], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 2, '1': 2, '2': 2},"
     " 'alignment_offsets_ns': {'0': 0, '1': 0, '2': 0},"
     " 'cluster_onset_timestamp_ns': 10, 'first_cause_suspects': [" SUSPECT(
         "2", "10", "10", "300", "1", "0", "medium", "3",
         "null") ", " SUSPECT("0", "10", "10", "200", "1", "0", "medium", "3",
                              "null") ", " SUSPECT("1", "10", "10", "200", "1", "0", "medium", "3",
                                                   "null") "], 'notes': []}"},
    {"suspects: every candidate at the onset time, not the later ones", SMALL,
     "t=0 u=0; t=10 u=500; t=20 u=500; t=30 u=500; t=40 u=500;"
     "t=0 r=1 u=0; t=10 r=1 u=0; t=20 r=1 u=0; t=30 r=1 u=500; t=40 r=1 u=500;"
     "t=0 r=2 u=0; t=10 r=2 u=0; t=20 r=2 u=0; t=30 r=2 u=500; t=40 r=2 u=500;"
     "t=0 r=3 u=0; t=10 r=3 u=0; t=20 r=3 u=0; t=30 r=3 u=0; t=40 r=3 u=500",
     "{'job_id': null, 'world_size': 4, 'participating_ranks': [0, 1, 2, 3], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 5, '1': 5, '2': 5, '3': 5},"
     " 'alignment_offsets_ns': {'0': 0, '1': 0, '2': 0, '3': 0},"
     " 'cluster_onset_timestamp_ns': 30, 'first_cause_suspects': [" SUSPECT(
         "0", "10", "10", "500", "1", "20", "high", "3",
         "null") ", " SUSPECT("1", "30", "30", "500", "1", "0", "low", "3",
                              "null") ", " SUSPECT("2", "30", "30", "500", "1", "0", "low", "3",
                                                   "null") "], 'notes': []}"},
    {"confidence: lead < median gives medium", SMALL,
     /* gaps 100 x5 and 130 -> median 100; lead 30 */
     "t=0 u=0; t=100 u=500; t=200 u=500; t=300 u=500;"
     "t=0 r=1 u=0; t=130 r=1 u=500; t=230 r=1 u=500; t=330 r=1 u=500",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 4, '1': 4}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': 130, 'first_cause_suspects': [" SUSPECT(
         "0", "100", "100", "500", "1", "30", "medium", "2",
         "null") ", " SUSPECT("1", "130", "130", "500", "1", "0", "low", "2",
                              "null") "], 'notes': []}"},
    {"confidence: lead = median gives high", SMALL,
     /* gaps 100 x3, 200, 100 x2 -> median 100; lead 100 */
     "t=0 u=0; t=100 u=500; t=200 u=500; t=300 u=500;"
     "t=0 r=1 u=0; t=200 r=1 u=500; t=300 r=1 u=500; t=400 r=1 u=500",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 4, '1': 4}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': 200, 'first_cause_suspects': [" SUSPECT(
         "0", "100", "100", "500", "1", "100", "high", "2",
         "null") ", " SUSPECT("1", "200", "200", "500", "1", "0", "low", "2",
                              "null") "], 'notes': []}"},
    {"confidence: a missing rank makes the evidence sparse (low)", SMALL,
     "t=0 w=8 u=0; t=10 w=8 u=500; t=20 w=8 u=500; t=30 w=8 u=500;"
     "t=0 r=1 w=8 u=0; t=10 r=1 w=8 u=0; t=20 r=1 w=8 u=0; t=30 r=1 w=8 u=500",
     "{'job_id': null, 'world_size': 8, 'participating_ranks': [0, 1],"
     " 'missing_ranks': [2, 3, 4, 5, 6, 7],"
     " 'rank_sample_counts': {'0': 4, '1': 4}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': 30, 'first_cause_suspects': [" SUSPECT(
         "0", "10", "10", "500", "1", "20", "low", "2",
         "null") ", " SUSPECT("1", "30", "30", "500", "1", "0", "low", "2",
                              "null") "], 'notes': [" N_MISSING("2, 3, 4, 5, 6, 7") "]}"},
    {"confidence: a rank with one sample makes the evidence sparse (low)", SMALL,
     "t=0 u=0; t=10 u=500; t=20 u=500; t=30 u=500;"
     "t=0 r=1 u=0; t=10 r=1 u=0; t=20 r=1 u=0; t=30 r=1 u=500; t=0 r=2 u=9",
     "{'job_id': null, 'world_size': 3, 'participating_ranks': [0, 1, 2], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 4, '1': 4, '2': 1},"
     " 'alignment_offsets_ns': {'0': 0, '1': 0, '2': 0},"
     " 'cluster_onset_timestamp_ns': 30, 'first_cause_suspects': [" SUSPECT(
         "0", "10", "10", "500", "1", "20", "low", "2",
         "null") ", " SUSPECT("1", "30", "30", "500", "1", "0", "low", "2",
                              "null") "], 'notes': [" N_FEW("2") "]}"},
    {"earliest tie with sparse evidence: low for both", SMALL,
     "t=0 w=3 u=0; t=10 w=3 u=500; t=0 r=1 w=3 u=0; t=10 r=1 w=3 u=500",
     "{'job_id': null, 'world_size': 3, 'participating_ranks': [0, 1], 'missing_ranks': [2],"
     " 'rank_sample_counts': {'0': 2, '1': 2}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': 10, 'first_cause_suspects': [" SUSPECT(
         "0", "10", "10", "500", "1", "0", "low", "2",
         "null") ", " SUSPECT("1", "10", "10", "500", "1", "0", "low", "2",
                              "null") "], 'notes': [" N_MISSING("2") "]}"},

    /* -- SPEC 3.1: job_id filter ---------------------------------------------- */
    {"job_id tie: the first seen wins; null samples dropped when filtering", SMALL,
     "t=0 j=a; t=5 j=b; t=10 j=a; t=0 r=2 w=3; t=5 r=1 j=b; t=0 r=1 j=a; t=15 r=1 j=b; t=10 r=2 w=3",
     "{'job_id': 'a', 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 2, '1': 1}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_MULTI ", " N_FEW("1") ", " N_NOSPIKE "]}"},
    {"job_id: the most common wins over the first seen", SMALL,
     "t=0 j=a; t=10 j=a; t=0 r=1 j=b; t=10 r=1 j=b; t=20 r=1 j=b",
     "{'job_id': 'b', 'world_size': 2, 'participating_ranks': [1], 'missing_ranks': [0],"
     " 'rank_sample_counts': {'1': 3}, 'alignment_offsets_ns': {'1': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_MULTI ", " N_MISSING("0") ", " N_TWO "]}"},
    {"job_id: one distinct id keeps the null samples, no note", SMALL,
     "t=0 j=a; t=10 j=a; t=0 r=1; t=10 r=1",
     "{'job_id': 'a', 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 2, '1': 2}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_NOSPIKE "]}"},
    {"job_id: only null ids", SMALL, "t=0; t=10; t=0 r=1; t=10 r=1",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 2, '1': 2}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_NOSPIKE "]}"},
    {"job_id: ids of non-sample events do not count", SMALL,
     "t=1 e=oom j=z; t=2 e=oom j=z; t=3 e=oom j=z; t=0 j=b; t=0 j=a; t=10 j=a; t=0 r=1 j=a",
     "{'job_id': 'a', 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 2, '1': 1}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_IGNORED ", " N_MULTI ", " N_FEW("1") ", " N_NOSPIKE "]}"},

    /* -- SPEC 3.5: world size --------------------------------------------- */
    {"world size: claims <= 1 are ignored", SMALL,
     "t=0 w=1; t=10 w=1; t=20 w=1; t=0 r=1 w=4; t=10 r=1 w=4",
     "{'job_id': null, 'world_size': 4, 'participating_ranks': [0, 1], 'missing_ranks': [2, 3],"
     " 'rank_sample_counts': {'0': 3, '1': 2}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_MISSING("2, 3") ", " N_NOSPIKE "]}"},
    {"world size: claim tie goes to the first seen in arrival order", SMALL,
     "t=10 r=1 w=4; t=0 w=3; t=0 r=1 w=3; t=10 w=4",
     "{'job_id': null, 'world_size': 4, 'participating_ranks': [0, 1], 'missing_ranks': [2, 3],"
     " 'rank_sample_counts': {'0': 2, '1': 2}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_MISSING("2, 3") ", " N_NOSPIKE "]}"},
    {"world size: the most common claim (tie: first seen), not the largest", SMALL,
     "t=0 w=6; t=10 w=5; t=0 r=4 w=5; t=10 r=4 w=9; t=20 r=4 w=6",
     "{'job_id': null, 'world_size': 6, 'participating_ranks': [0, 4], 'missing_ranks': [1, 2, 3, 5],"
     " 'rank_sample_counts': {'0': 2, '4': 3}, 'alignment_offsets_ns': {'0': 0, '4': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_MISSING("1, 2, 3, 5") ", " N_NOSPIKE "]}"},
    {"world size: at least the observed ranks", SMALL,
     "t=0 w=3; t=10 w=3; t=20 w=3; t=0 r=4 w=5; t=10 r=4 w=5",
     "{'job_id': null, 'world_size': 5, 'participating_ranks': [0, 4], 'missing_ranks': [1, 2, 3],"
     " 'rank_sample_counts': {'0': 3, '4': 2}, 'alignment_offsets_ns': {'0': 0, '4': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_MISSING("1, 2, 3") ", " N_NOSPIKE "]}"},

    /* -- SPEC 3.6: anchor and alignment ------------------------------------ */
    {"anchor is the lowest rank without rank 0; negative offsets align", SMALL,
     "t=100 r=2 u=0; t=110 r=2 u=500; t=40 r=5 u=0; t=50 r=5 u=500",
     "{'job_id': null, 'world_size': 6, 'participating_ranks': [2, 5],"
     " 'missing_ranks': [0, 1, 3, 4], 'rank_sample_counts': {'2': 2, '5': 2},"
     " 'alignment_offsets_ns': {'2': 0, '5': -60},"
     " 'cluster_onset_timestamp_ns': 110, 'first_cause_suspects': [" SUSPECT(
         "2", "110", "110", "500", "1", "0", "low", "2",
         "null") ", " SUSPECT("5", "50", "110", "500", "1", "0", "low", "2",
                              "null") "], 'notes': [" N_MISSING("0, 1, 3, 4") ", " N_SKEW("5",
                                                                                          "-60") "]}"},
    {"anchor is rank 0 even when it starts last", SMALL,
     "t=1000 u=0; t=1010 u=0; t=1020 u=500; t=0 r=1 u=0; t=10 r=1 u=500; t=20 r=1 u=500",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 3, '1': 3}, 'alignment_offsets_ns': {'0': 0, '1': -1000},"
     " 'cluster_onset_timestamp_ns': 1020, 'first_cause_suspects': [" SUSPECT(
         "1", "10", "1010", "500", "1", "10", "high", "2",
         "null") ", " SUSPECT("0", "1020", "1020", "500", "1", "0", "low", "2",
                              "null") "], 'notes': [" N_SKEW("1", "-1000") "]}"},

    /* -- SPEC 3.2: sample order --------------------------------------------- */
    {"samples ordered by (timestamp, pid, host), hosts as strings, stable", SMALL,
     /* rank 0: host a before b; rank 1: "host10" before "host9"; rank 2: pid -1
      * (absent) before 5; rank 3: equal keys keep arrival order */
     "t=0 p=1 h=b u=500; t=0 p=1 h=a u=0; t=10 p=1 h=a u=500;"
     "t=0 r=1 p=1 h=host9 u=0; t=0 r=1 p=1 h=host10 u=500; t=10 r=1 p=1 h=host9 u=500;"
     "t=0 r=2 p=5 u=0; t=0 r=2 u=500; t=10 r=2 p=5 u=500;"
     "t=0 r=3 p=1 h=x u=0; t=0 r=3 p=1 h=x u=500; t=10 r=3 p=1 h=x u=500",
     "{'job_id': null, 'world_size': 4, 'participating_ranks': [0, 1, 2, 3], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 3, '1': 3, '2': 3, '3': 3},"
     " 'alignment_offsets_ns': {'0': 0, '1': 0, '2': 0, '3': 0},"
     " 'cluster_onset_timestamp_ns': 0, 'first_cause_suspects': [" SUSPECT(
         "0", "0", "0", "500", "1", "0", "medium", "2",
         "null") ", " SUSPECT("3", "0", "0", "500", "1", "0", "medium", "2",
                              "null") "], 'notes': []}"},
    {"one (pid, host) keeps arrival order whatever else of its samples differs", SMALL,
     /* rank 0: session b (interval 5) arrives before session a (interval 7)
      * at the same time, pid and host: b first, so a's rise at t=0 is the
      * spike (t=10 if the sources' other fields ordered them) */
     "t=0 p=1 h=x s=b i=5 u=0; t=0 p=1 h=x s=a i=7 u=500; t=10 p=1 h=x s=a i=7 u=500;"
     "t=0 r=1 u=0; t=10 r=1 u=0",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 3, '1': 2}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [" SUSPECT(
         "0", "0", "0", "500", "1", "0", "low", "1", "null") "], 'notes': [" N_ONE "]}"},
    {"timestamps order before pids and arrival", SMALL,
     "t=20 p=0 u=500; t=10 p=9 u=0; t=30 p=0 u=0; t=10 r=1 u=0; t=20 r=1 u=0",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 3, '1': 2}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [" SUSPECT(
         "0", "20", "20", "500", "1", "0", "low", "1", "null") "], 'notes': [" N_ONE "]}"},

    /* -- SPEC 3.1: notes ---------------------------------------------------- */
    {"every note kind, in order", SMALL,
     "t=200 r=2 w=6; t=210 r=2 w=6; t=1 e=oom j=a;"
     "t=0 w=6 j=a u=0; t=10 w=6 j=a u=0; t=20 w=6 j=a u=500;"
     "t=100 r=1 w=6 j=a; t=110 r=1 w=6 j=a; t=0 r=3 w=6 j=a; t=5 w=6 j=b;"
     "t=200 r=2 w=6 j=a; t=210 r=2 w=6 j=a",
     "{'job_id': 'a', 'world_size': 6, 'participating_ranks': [0, 1, 2, 3], 'missing_ranks': [4, 5],"
     " 'rank_sample_counts': {'0': 3, '1': 2, '2': 2, '3': 1},"
     " 'alignment_offsets_ns': {'0': 0, '1': 100, '2': 200, '3': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [" SUSPECT(
         "0", "20", "20", "500", "1", "0", "low", "1",
         "null") "], 'notes': [" N_IGNORED ", " N_MULTI
                 ", " N_MISSING("4, 5") ", " N_SKEW("1", "100") ", " N_SKEW("2", "200") ", " N_FEW(
                     "3") ", " N_ONE "]}"},
    {"empty input", DEFAULTS, "",
     "{'job_id': null, 'world_size': 0, 'participating_ranks': [], 'missing_ranks': [],"
     " 'rank_sample_counts': {}, 'alignment_offsets_ns': {}, 'cluster_onset_timestamp_ns': null,"
     " 'first_cause_suspects': [], 'notes': [" N_NOEVENTS ", " N_NOSAMPLE "]}"},
    {"only non-sample events (notes deduplicated)", DEFAULTS,
     "t=1 e=oom j=a r=1 w=4; t=2 e=phase_enter; t=3 e=Phase_exit",
     "{'job_id': null, 'world_size': 0, 'participating_ranks': [], 'missing_ranks': [],"
     " 'rank_sample_counts': {}, 'alignment_offsets_ns': {}, 'cluster_onset_timestamp_ns': null,"
     " 'first_cause_suspects': [], 'notes': [" N_IGNORED ", " N_NOSAMPLE "]}"},
    {"single rank", SMALL, "t=0 u=0; t=10 u=500; t=20 u=500",
     "{'job_id': null, 'world_size': 1, 'participating_ranks': [0], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 3}, 'alignment_offsets_ns': {'0': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [], 'notes': [" N_TWO "]}"},
    {"single rank with one sample", SMALL, "t=7 r=3 u=1",
     "{'job_id': null, 'world_size': 4, 'participating_ranks': [3], 'missing_ranks': [0, 1, 2],"
     " 'rank_sample_counts': {'3': 1}, 'alignment_offsets_ns': {'3': 0},"
     " 'cluster_onset_timestamp_ns': null, 'first_cause_suspects': [],"
     " 'notes': [" N_MISSING("0, 1, 2") ", " N_TWO "]}"},
    {"case-folded sample types are samples", SMALL,
     "t=0 e=SAMPLE u=0; t=10 e=Sample u=500; t=0 r=1 e=\\u017fample u=0; t=10 r=1 e=sAmPlE u=500",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 2, '1': 2}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': 10, 'first_cause_suspects': [" SUSPECT(
         "0", "10", "10", "500", "1", "0", "medium", "2",
         "null") ", " SUSPECT("1", "10", "10", "500", "1", "0", "medium", "2",
                              "null") "], 'notes': []}"},

    /* -- SPEC 5 through the batch analysis ------------------------------------ */
    {"phase attribution of suspects (unique; no phases in the other session)", SMALL,
     "t=0 s=s0 u=0;"
     "{'timestamp_ns': 5, 'event_type': 'phase_enter', 'session_id': 's0', 'metadata': {'phase_scope':"
     " {'action': 'enter', 'name': 'fwd', 'path': ['train', 'fwd'], 'scope_id': 'f1',"
     " 'parent_scope_id': null, 'thread_id': 1, 'thread_name': 'Main', 'sequence': 1}}};"
     "t=10 s=s0 u=500;"
     "{'timestamp_ns': 15, 'event_type': 'phase_exit', 'session_id': 's0', 'metadata': {'phase_scope':"
     " {'action': 'exit', 'name': 'fwd', 'path': ['train', 'fwd'], 'scope_id': 'f1',"
     " 'parent_scope_id': null, 'thread_id': 1, 'thread_name': 'MainX', 'sequence': 2}}};"
     "t=0 r=1 s=s1 u=0; t=20 r=1 s=s1 u=500",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 2, '1': 2}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': 20, 'first_cause_suspects': [" SUSPECT(
         "0", "10", "10", "500", "1", "10", "medium", "2",
         "{'phase_resolution': 'unique', 'phase_paths': ['train / fwd'], 'phase_source':"
         " 'heuristic', 'phase_path': 'train / fwd', 'scope_id': 'f1', 'thread_id': 1,"
         " 'thread_name': 'MainX'}") ", " SUSPECT("1", "20", "20", "500", "1", "0", "low", "2",
                                                  "null") "], 'notes': [" N_IGNORED "]}"},
    {"an open span ends at the session end its samples extend (the rank's session "
     "changes)",
     SMALL,
     "{'timestamp_ns': 5, 'event_type': 'phase_enter', 'session_id': 's0', 'metadata': {'phase_scope':"
     " {'action': 'enter', 'name': 'fwd', 'path': ['train'], 'scope_id': 'f1',"
     " 'thread_id': 1, 'thread_name': 'Main', 'sequence': 1}}};"
     "t=0 s=s1 u=0; t=10 s=s0 u=0; t=20 s=s0 u=500; t=0 r=1 s=s2 u=0; t=30 r=1 s=s2 u=500",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 3, '1': 2}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': 30, 'first_cause_suspects': [" SUSPECT(
         "0", "20", "20", "500", "1", "10", "high", "2",
         "{'phase_resolution': 'unique', 'phase_paths': ['train'], 'phase_source':"
         " 'heuristic', 'phase_path': 'train', 'scope_id': 'f1', 'thread_id': 1,"
         " 'thread_name': 'Main'}") ", " SUSPECT("1", "30", "30", "500", "1", "0", "low", "2",
                                                 "null") "], 'notes': [" N_IGNORED "]}"},
    {"a spike sample without session_id has no attribution", SMALL,
     "{'timestamp_ns': 0, 'event_type': 'phase_enter', 'session_id': 's0', 'metadata': {'phase_scope':"
     " {'action': 'enter', 'name': 'fwd', 'path': ['train'], 'scope_id': 'f1',"
     " 'thread_id': 1, 'thread_name': 'Main', 'sequence': 1}}};"
     "t=0 s=s0 u=0; t=10 u=500; t=20 s=s0 u=500; t=0 r=1 u=0; t=20 r=1 u=500",
     "{'job_id': null, 'world_size': 2, 'participating_ranks': [0, 1], 'missing_ranks': [],"
     " 'rank_sample_counts': {'0': 3, '1': 2}, 'alignment_offsets_ns': {'0': 0, '1': 0},"
     " 'cluster_onset_timestamp_ns': 20, 'first_cause_suspects': [" SUSPECT(
         "0", "10", "10", "500", "1", "10", "high", "2",
         "null") ", " SUSPECT("1", "20", "20", "500", "1", "0", "low", "2",
                              "null") "], 'notes': [" N_IGNORED "]}"},
};

/* ---- the notation -------------------------------------------------------------- */

/* Copy with single quotes turned into double quotes. */
static void put_quoted(sw_buf_t *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) sw_buf_putc(b, s[i] == '\'' ? '"' : s[i]);
}

/* One event of the notation -> one JSON line in @p out. @returns false on
 * a notation error (a bug in the table). */
static bool event_line(const char *s, size_t n, sw_buf_t *out)
{
    out->len = 0;
    while (n && *s == ' ') s++, n--;
    while (n && s[n - 1] == ' ') n--;
    if (n && *s == '{') {
        put_quoted(out, s, n);
        sw_buf_cstr(out);
        return true;
    }
    const char *val[128] = {0};
    size_t vlen[128] = {0};
    size_t i = 0;
    while (i < n) {
        while (i < n && s[i] == ' ') i++;
        if (i >= n) break;
        if (i + 1 >= n || s[i + 1] != '=') return false;
        unsigned char k = (unsigned char)s[i];
        size_t j = i + 2;
        while (j < n && s[j] != ' ') j++;
        if (k >= 128) return false;
        val[k] = s + i + 2;
        vlen[k] = j - i - 2;
        i = j;
    }
    if (!val['t']) return false;
    const char *type = val['e'] ? val['e'] : "sample";
    size_t tlen = val['e'] ? vlen['e'] : 6;
    bool sample = tlen == 6 && strncmp(type, "sample", 6) == 0;
    long long rank = val['r'] ? strtoll(val['r'], NULL, 10) : 0;
    sw_buf_printf(out, "{\"timestamp_ns\": %.*s, \"event_type\": \"%.*s\"", (int)vlen['t'],
                  val['t'], (int)tlen, type);
    if (val['r']) sw_buf_printf(out, ", \"rank\": %lld", rank);
    if (val['w']) sw_buf_printf(out, ", \"world_size\": %.*s", (int)vlen['w'], val['w']);
    else if (rank > 0) sw_buf_printf(out, ", \"world_size\": %lld", rank + 1);
    if (val['u']) sw_buf_printf(out, ", \"device_used_bytes\": %.*s", (int)vlen['u'], val['u']);
    else if (sample || (tlen == 6 && strncasecmp(type, "sample", 6) == 0))
        sw_buf_puts(out, ", \"device_used_bytes\": 0");
    if (val['j']) sw_buf_printf(out, ", \"job_id\": \"%.*s\"", (int)vlen['j'], val['j']);
    if (val['s']) sw_buf_printf(out, ", \"session_id\": \"%.*s\"", (int)vlen['s'], val['s']);
    if (val['p']) sw_buf_printf(out, ", \"pid\": %.*s", (int)vlen['p'], val['p']);
    if (val['h']) sw_buf_printf(out, ", \"host\": \"%.*s\"", (int)vlen['h'], val['h']);
    if (val['i']) sw_buf_printf(out, ", \"sampling_interval_ms\": %.*s", (int)vlen['i'], val['i']);
    sw_buf_putc(out, '}');
    sw_buf_cstr(out);
    return true;
}

static sw_params_t case_params(bparams_t bp)
{
    sw_params_t p = sw_params_default();
    if (bp.min_bytes) p.spike_min_bytes = bp.min_bytes;
    if (bp.fraction != 0) p.spike_fraction = bp.fraction;
    if (bp.skew) p.skew_note_multiplier = bp.skew;
    return p;
}

/* Feed the case's events; @returns the number of events, or -1. */
static int feed_case(const batch_case_t *c, sw_batch_t *b, sw_tdec_t *dec, sw_buf_t *line)
{
    const char *p = c->events;
    int n = 0;
    while (*p) {
        const char *semi = strchr(p, ';');
        size_t len = semi ? (size_t)(semi - p) : strlen(p);
        if (!event_line(p, len, line)) {
            SW_CHECK(false, "bad event notation \"%.*s\"", (int)len, p);
            return -1;
        }
        sw_event_t ev;
        char err[256];
        sw_err_t rc = sw_tdec_json(dec, line->data, line->len, &ev, err, sizeof(err));
        SW_CHECK(rc == SW_OK, "event %d \"%s\" did not decode: %s", n + 1, line->data, err);
        if (rc != SW_OK) return -1;
        SW_ASSERT_I64(sw_batch_add(b, &ev, NULL, 0), SW_OK);
        n++;
        p = semi ? semi + 1 : p + len;
    }
    return n;
}

static void test_table(void **state)
{
    (void)state;
    sw_check_reset();
    sw_tdec_t *dec = sw_tdec_new();
    sw_buf_t line, got, want_text;
    sw_buf_init(&line);
    sw_buf_init(&got);
    sw_buf_init(&want_text);
    size_t ncases = sizeof(k_cases) / sizeof(k_cases[0]);
    for (size_t i = 0; i < ncases; i++) {
        const batch_case_t *c = &k_cases[i];
        sw_check_case("%s", c->name);
        sw_batch_t *b = sw_batch_new(case_params(c->params));
        int n = feed_case(c, b, dec, &line);
        if (n < 0) {
            sw_batch_destroy(b);
            continue;
        }
        SW_CHECK(sw_batch_events(b) == (size_t)n, "sw_batch_events %zu, expected %d",
                 sw_batch_events(b), n);
        sw_arena_t arena;
        sw_arena_init(&arena);
        sw_analysis_t a;
        sw_batch_run(b, &arena, &a);
        got.len = 0;
        sw_alert_json_analysis(&got, &a, 0);
        sw_buf_cstr(&got);
        want_text.len = 0;
        put_quoted(&want_text, c->want, strlen(c->want));
        sw_buf_cstr(&want_text);

        json_error_t jerr;
        json_t *jg = json_loads(got.data, 0, &jerr);
        SW_CHECK(jg != NULL, "output is not JSON (%s): %s", jerr.text, got.data);
        json_t *jw = json_loads(want_text.data, 0, &jerr);
        SW_CHECK(jw != NULL, "expectation is not JSON (%s): %s", jerr.text, want_text.data);
        char why[1024];
        if (jg && jw)
            SW_CHECK(sw_test_json_equal(jg, jw, false, why, sizeof(why)),
                     "%s (got != expected)\n  got:      %s\n  expected: %s", why, got.data,
                     want_text.data);
        json_decref(jg);
        json_decref(jw);

        /* Running again over the same events gives the same result. */
        sw_arena_t arena2;
        sw_arena_init(&arena2);
        sw_analysis_t a2;
        sw_batch_run(b, &arena2, &a2);
        sw_buf_t again;
        sw_buf_init(&again);
        sw_alert_json_analysis(&again, &a2, 0);
        sw_buf_cstr(&again);
        SW_CHECK(strcmp(again.data, got.data) == 0, "second run differs:\n  %s\n  %s", again.data,
                 got.data);
        sw_buf_clear(&again);
        sw_arena_clear(&arena2);
        sw_arena_clear(&arena);
        sw_batch_destroy(b);
    }
    fprintf(stderr, "%zu batch cases\n", ncases);
    sw_buf_clear(&line);
    sw_buf_clear(&got);
    sw_buf_clear(&want_text);
    sw_tdec_destroy(dec);
    SW_CHECK_END();
}

/* Events may be added after a run: the next run sees all of them. */
static void test_incremental(void **state)
{
    (void)state;
    sw_check_reset();
    sw_check_case("add after run");
    sw_params_t p = sw_params_default();
    p.spike_min_bytes = 100;
    sw_batch_t *b = sw_batch_new(p);
    sw_tdec_t *dec = sw_tdec_new();
    static const char *const lines[] = {
        "{\"timestamp_ns\": 0, \"event_type\": \"sample\", \"device_used_bytes\": 0}",
        "{\"timestamp_ns\": 10, \"event_type\": \"sample\", \"device_used_bytes\": 500}",
        "{\"timestamp_ns\": 0, \"event_type\": \"sample\", \"device_used_bytes\": 0, \"rank\": 1, \"world_size\": 2}",
        "{\"timestamp_ns\": 20, \"event_type\": \"sample\", \"device_used_bytes\": 500, \"rank\": 1, \"world_size\": 2}",
    };
    sw_arena_t arena;
    sw_arena_init(&arena);
    for (size_t i = 0; i < 4; i++) {
        sw_event_t ev;
        char err[128];
        sw_err_t rc = sw_tdec_json(dec, lines[i], strlen(lines[i]), &ev, err, sizeof(err));
        SW_CHECK(rc == SW_OK, "line %zu: %s", i + 1, err);
        SW_ASSERT_I64(sw_batch_add(b, &ev, NULL, 0), SW_OK);
        sw_analysis_t a;
        sw_arena_reset(&arena);
        sw_batch_run(b, &arena, &a);
        SW_CHECK(a.n_participating == (i < 2 ? 1u : 2u), "after %zu events: %zu ranks", i + 1,
                 a.n_participating);
        if (i == 3) {
            /* gaps 10 and 20: median 15 > lead 10, so medium */
            SW_CHECK(a.has_onset && a.onset_ns == 20, "onset %d/%llu, expected 20", a.has_onset,
                     (unsigned long long)a.onset_ns);
            SW_CHECK(a.n_suspects == 2 && a.suspects[0].rank == 0 &&
                         a.suspects[0].confidence == SW_CONFIDENCE_MEDIUM,
                     "%zu suspects, first rank %lld confidence %s", a.n_suspects,
                     a.n_suspects ? (long long)a.suspects[0].rank : -1LL,
                     a.n_suspects ? sw_confidence_str(a.suspects[0].confidence) : "-");
            SW_CHECK(a.anchor_rank == 0, "anchor %lld", (long long)a.anchor_rank);
        }
    }
    sw_arena_clear(&arena);
    sw_tdec_destroy(dec);
    sw_batch_destroy(b);
    SW_CHECK_END();
}

/* A world_size (or rank) beyond SW_WORLD_SIZE_MAX is refused with a
 * message, nothing else changes; at the ceiling it is accepted and the
 * missing list is exact. The stream engine refuses the same samples. */
static void test_world_size_ceiling(void **state)
{
    (void)state;
    static const struct {
        int64_t rank, ws;
        sw_err_t want;
        const char *msg;
    } cases[] = {
        {0, INT64_MAX, SW_ERR_LIMIT,
         "world_size 9223372036854775807 exceeds the largest supported world size (16777216)"},
        {0, SW_WORLD_SIZE_MAX + 1, SW_ERR_LIMIT, "world_size 16777217 exceeds"},
        {SW_WORLD_SIZE_MAX, INT64_MAX, SW_ERR_LIMIT, "world_size 9223372036854775807"},
        {1, SW_WORLD_SIZE_MAX, SW_OK, ""},
    };
    sw_params_t p = sw_params_default();
    p.max_ranks_per_job = 0; /* unlimited: the ceiling still holds */
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        sw_batch_t *b = sw_batch_new(p);
        sw_detector_t *det = sw_detect_new(p);
        sw_event_t ev;
        memset(&ev, 0, sizeof(ev));
        ev.kind = SW_EV_SAMPLE;
        ev.event_type = sw_str("sample");
        ev.host = sw_str("h");
        ev.pid = -1;
        ev.timestamp_ns = 5;
        ev.device_used_bytes = 7;
        ev.rank = cases[c].rank;
        ev.world_size = cases[c].ws;
        char err[160] = "";
        SW_ASSERT_I64(sw_batch_add(b, &ev, err, sizeof(err)), cases[c].want);
        SW_ASSERT_NOT_NULL(strstr(err, cases[c].msg));
        const sw_record_t *rec;
        char derr[160] = "";
        SW_ASSERT_I64(sw_detect_feed(det, &ev, 0, &rec, derr, sizeof(derr)), cases[c].want);
        SW_ASSERT_NOT_NULL(strstr(derr, cases[c].msg));
        sw_arena_t arena;
        sw_arena_init(&arena);
        sw_analysis_t a;
        sw_batch_run(b, &arena, &a);
        if (cases[c].want == SW_OK) {
            SW_ASSERT_I64(a.world_size, SW_WORLD_SIZE_MAX);
            SW_ASSERT_I64(a.n_missing, SW_WORLD_SIZE_MAX - 1);
            SW_ASSERT_I64(a.missing[0], 0);
            SW_ASSERT_I64(a.missing[1], 2);
        } else {
            SW_ASSERT_I64(a.n_participating, 0);
        }
        sw_arena_clear(&arena);
        sw_detect_destroy(det);
        sw_batch_destroy(b);
    }
}

/* A record too big for a Kafka message, condensed: lists, suspects, maps
 * and notes cut as documented, a note saying so, the rest shared. */
static void test_condense(void **state)
{
    (void)state;
    const int64_t n_ranks = 2000, ws = 200000;
    sw_params_t p = sw_params_default();
    p.max_ranks_per_job = 0;
    sw_batch_t *b = sw_batch_new(p);
    for (int64_t r = 0; r < n_ranks; r++)
        for (int k = 0; k < 2; k++) {
            sw_event_t ev;
            memset(&ev, 0, sizeof(ev));
            ev.kind = SW_EV_SAMPLE;
            ev.event_type = sw_str("sample");
            ev.host = sw_str("h");
            ev.pid = -1;
            ev.timestamp_ns = 1000 + 100 * k;
            ev.has_device_used = true;
            ev.device_used_bytes = k ? INT64_C(10) << 30 : INT64_C(1) << 30;
            ev.rank = r;
            ev.world_size = ws;
            char err[160] = "";
            SW_ASSERT_I64(sw_batch_add(b, &ev, err, sizeof(err)), SW_OK);
        }
    sw_arena_t arena;
    sw_arena_init(&arena);
    sw_record_t full, small;
    memset(&full, 0, sizeof(full));
    full.action = SW_ACTION_SUMMARY;
    sw_batch_run(b, &arena, &full.analysis);
    const sw_analysis_t *a = &full.analysis, *c = &small.analysis;
    SW_ASSERT_I64(a->n_participating, n_ranks);
    SW_ASSERT_I64(a->n_missing, ws - n_ranks);
    SW_ASSERT_TRUE(a->n_suspects > SW_CONDENSE_SUSPECTS);
    sw_buf_t big, out;
    sw_buf_init(&big);
    sw_buf_init(&out);
    sw_alert_json_record(&big, &full);
    SW_ASSERT_TRUE(big.len > 1000000);

    SW_ASSERT_TRUE(sw_record_condense(&full, &arena, &small));
    SW_ASSERT_I64(c->n_participating, SW_CONDENSE_RANKS);
    SW_ASSERT_I64(c->n_missing, SW_CONDENSE_RANKS);
    SW_ASSERT_I64(c->missing[0], n_ranks);
    SW_ASSERT_I64(c->n_suspects, SW_CONDENSE_SUSPECTS);
    SW_ASSERT(c->suspects == a->suspects, "got %p, want %p", (void *)c->suspects,
              (void *)a->suspects); /* the earliest, shared */
    SW_ASSERT_TRUE(c->n_counts <= SW_CONDENSE_SUSPECTS + 1 && c->n_counts == c->n_offsets);
    for (size_t i = 0; i < c->n_counts; i++) {
        bool kept = c->counts[i].rank == c->anchor_rank;
        for (size_t s = 0; s < c->n_suspects; s++) kept |= c->suspects[s].rank == c->counts[i].rank;
        SW_ASSERT_TRUE(kept);
    }
    SW_ASSERT_I64(c->n_notes, a->n_notes + 1);
    /* The missing-ranks note: cut at a list item, counting the rest. */
    sw_str_t miss = c->notes[0];
    SW_ASSERT_TRUE(miss.len < SW_CONDENSE_NOTE_BYTES + 32);
    char tail[64];
    size_t listed = 0;
    for (size_t i = 0; i + 1 < miss.len; i++)
        listed += miss.ptr[i] == ',' && miss.ptr[i + 1] == ' ';
    snprintf(tail, sizeof(tail), " and %lld more.",
             (long long)(ws - n_ranks) - (long long)(listed + 1));
    SW_ASSERT_TRUE(miss.len > strlen(tail) &&
                   memcmp(miss.ptr + miss.len - strlen(tail), tail, strlen(tail)) == 0);
    sw_str_t last = c->notes[c->n_notes - 1];
    const char *want[] = {"condensed to fit",
                          "participating_ranks lists the first 1024 of 2000",
                          "missing_ranks lists the first 1024 of 198000",
                          "first_cause_suspects holds the earliest 64 of",
                          "rank_sample_counts and alignment_offsets_ns hold the anchor",
                          "long notes are shortened"};
    char *text = strndup(last.ptr, last.len);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        SW_ASSERT_NOT_NULL(strstr(text, want[i]));
    free(text);
    sw_alert_json_record(&out, &small);
    SW_ASSERT_TRUE(out.len < 100000);

    /* A small record is left alone. */
    sw_record_t tiny = full, same;
    tiny.analysis.n_participating = 3;
    tiny.analysis.n_missing = 2;
    tiny.analysis.n_suspects = 1;
    tiny.analysis.n_counts = tiny.analysis.n_offsets = 0;
    tiny.analysis.n_notes = 0;
    tiny.analysis.anchor_rank = 0;
    SW_ASSERT_FALSE(sw_record_condense(&tiny, &arena, &same));
    SW_ASSERT_MEMEQ(&same, &tiny, sizeof(tiny));
    sw_buf_clear(&big);
    sw_buf_clear(&out);
    sw_arena_clear(&arena);
    sw_batch_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_incremental),
        cmocka_unit_test(test_world_size_ceiling),
        cmocka_unit_test(test_condense),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
