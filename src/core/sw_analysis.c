/*
 * Shared analysis pieces: defaults, enum texts, the spike threshold, the
 * median rule, confidence, and the final assembly of suspects and notes
 * (SPEC 3). Used by the batch analysis and the stream engine so that both
 * follow one implementation of the rules. Pure: no I/O, no globals.
 */
#include "sw_assemble.h"

#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"

sw_params_t sw_params_default(void)
{
    sw_params_t p;
    memset(&p, 0, sizeof(p)); /* hash_key zero, as sw_analysis.h says */
    p.spike_min_bytes = SW_DEFAULT_SPIKE_MIN_BYTES;
    p.spike_fraction = SW_DEFAULT_SPIKE_FRACTION;
    p.skew_note_multiplier = SW_DEFAULT_SKEW_NOTE_MULTIPLIER;
    p.window_samples = SW_DEFAULT_WINDOW_SAMPLES;
    p.stale_ms = SW_DEFAULT_STALE_MS;
    p.max_jobs = SW_DEFAULT_MAX_JOBS;
    p.max_ranks_per_job = SW_DEFAULT_MAX_RANKS_PER_JOB;
    p.silence_ms = SW_DEFAULT_SILENCE_MS;
    p.oom_warn_ms = SW_DEFAULT_OOM_WARN_MS;
    p.oom_warn_headroom = SW_DEFAULT_OOM_WARN_HEADROOM;
    return p;
}

const char *sw_confidence_str(sw_confidence_t c)
{
    switch (c) {
    case SW_CONFIDENCE_HIGH: return "high";
    case SW_CONFIDENCE_MEDIUM: return "medium";
    case SW_CONFIDENCE_LOW: break;
    }
    return "low";
}

const char *sw_resolve_reason_str(sw_resolve_reason_t r)
{
    switch (r) {
    case SW_RESOLVE_SUSPECT_LOST: return "suspect_lost";
    case SW_RESOLVE_ONSET_GONE: return "onset_gone";
    case SW_RESOLVE_NEXT_STORM: return "next_storm";
    default: return "";
    }
}

const char *sw_x8_end_str(sw_x8_end_t e, bool crash)
{
    switch (e) {
    case SW_X8_END_ALIVE: return crash ? "alive_again" : "no_rank_qualifies";
    case SW_X8_END_JOB: return "job_summarised";
    case SW_X8_END_CRASH: return "crash";
    default: return "";
    }
}

sw_x8_end_t sw_x8_end_parse(sw_str_t s)
{
    if (sw_str_eq(s, sw_str("alive_again")) || sw_str_eq(s, sw_str("no_rank_qualifies")))
        return SW_X8_END_ALIVE;
    if (sw_str_eq(s, sw_str("job_summarised"))) return SW_X8_END_JOB;
    if (sw_str_eq(s, sw_str("crash"))) return SW_X8_END_CRASH;
    return SW_X8_END_NONE;
}

const char *sw_action_str(sw_action_t a)
{
    switch (a) {
    case SW_ACTION_TRIGGER: return "trigger";
    case SW_ACTION_UPDATE: return "update";
    case SW_ACTION_RESOLVE: return "resolve";
    case SW_ACTION_CRASH: return "crash";
    case SW_ACTION_WARNING: return "warning";
    case SW_ACTION_SUMMARY: break;
    }
    return "summary";
}

int sw_cand_cmp(const sw_cand_t *a, const sw_cand_t *b)
{
    if (a->aligned != b->aligned) return a->aligned < b->aligned ? -1 : 1;
    if (a->peak != b->peak) return a->peak > b->peak ? -1 : 1;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return 0;
}

sw_i128 sw_median_of(sw_i128 lo, sw_i128 hi, size_t n)
{
    if (n == 0) return 0;
    if (n % 2) return lo;
    /* Python's statistics.median: (a + b) / 2 as a float, then int()
     * truncates. a + b is exact; the double rounds once, halving is exact. */
    double d = (double)(lo + hi) / 2.0;
    return (sw_i128)d;
}

bool sw_spike_threshold(int64_t max_used, int64_t min_bytes, double fraction, int64_t *threshold)
{
    double prod = (double)max_used * fraction;
    /* Any rise is at most INT64_MAX; a product at or past 2^63 can never
     * be reached (Python's int() would be exact and larger). */
    if (!(prod < 9223372036854775808.0)) return false;
    int64_t t = (int64_t)prod;
    *threshold = t > min_bytes ? t : min_bytes;
    return true;
}

sw_confidence_t sw_earliest_confidence(size_t n_cands_total, size_t earliest_count, bool sparse,
                                       uint64_t lead, sw_i128 median_ns)
{
    if (n_cands_total < 2) return SW_CONFIDENCE_LOW;
    if (earliest_count == 1 && !sparse && (median_ns <= 0 || (sw_i128)lead >= median_ns))
        return SW_CONFIDENCE_HIGH;
    return sparse ? SW_CONFIDENCE_LOW : SW_CONFIDENCE_MEDIUM;
}

/* Notes under construction: deduplicated, first occurrence kept. */
sw_str_t sw_counterless_note(sw_arena_t *arena, sw_buf_t *tmp, uint64_t n)
{
    tmp->len = 0;
    sw_buf_puts(tmp, "Samples without device_used_bytes were skipped (backend capability): ");
    sw_buf_put_i64(tmp, (int64_t)n);
    sw_buf_puts(tmp, ".");
    return sw_arena_str(arena, (sw_str_t){tmp->data, tmp->len});
}

typedef struct notes_s {
    sw_str_t *v;
    size_t n, cap;
    sw_arena_t *arena;
} notes_t;

static void notes_add(notes_t *nt, sw_str_t s)
{
    for (size_t i = 0; i < nt->n; i++)
        if (sw_str_eq(nt->v[i], s)) return;
    if (nt->n == nt->cap) {
        size_t cap = nt->cap ? nt->cap * 2 : 8;
        sw_str_t *v = sw_arena_alloc(nt->arena, cap * sizeof(*v));
        if (nt->n) memcpy(v, nt->v, nt->n * sizeof(*v));
        nt->v = v;
        nt->cap = cap;
    }
    nt->v[nt->n++] = s;
}

static void notes_add_c(notes_t *nt, const char *s)
{
    notes_add(nt, sw_str(s));
}

/* "<prefix>1, 3." built in a scratch buffer, copied to the arena. */
static void notes_add_list(notes_t *nt, sw_buf_t *tmp, const char *prefix, const int64_t *v,
                           size_t n)
{
    tmp->len = 0;
    sw_buf_puts(tmp, prefix);
    for (size_t i = 0; i < n; i++) {
        if (i) sw_buf_put(tmp, ", ", 2);
        sw_buf_put_i64(tmp, v[i]);
    }
    sw_buf_putc(tmp, '.');
    sw_str_t s = {tmp->data, tmp->len};
    notes_add(nt, sw_arena_str(nt->arena, s));
}

void sw_assemble(const sw_assemble_in_t *in, sw_arena_t *arena, sw_analysis_t *out)
{
    memset(out, 0, sizeof(*out));
    out->has_job_id = in->has_job_id;
    out->job_id = in->job_id;
    out->world_size = in->world_size;
    out->participating = in->ranks;
    out->n_participating = in->n_ranks;
    out->anchor_rank = in->n_ranks ? in->anchor_rank : -1;

    sw_rank_val_t *counts = sw_arena_alloc(arena, in->n_ranks * sizeof(*counts));
    sw_rank_val_t *offsets = sw_arena_alloc(arena, in->n_ranks * sizeof(*offsets));
    for (size_t i = 0; i < in->n_ranks; i++) {
        counts[i].rank = offsets[i].rank = in->ranks[i];
        counts[i].value = in->counts[i];
        offsets[i].value = in->offsets[i];
    }
    out->counts = counts;
    out->n_counts = in->n_ranks;
    out->offsets = offsets;
    out->n_offsets = in->n_ranks;

    /* Missing ranks: [0, world_size) minus the participating ranks. */
    size_t n_missing = 0;
    if (in->world_size > 0 && (uint64_t)in->world_size > in->n_ranks) {
        size_t cap = (size_t)in->world_size - in->n_ranks;
        int64_t *missing = sw_arena_alloc(arena, cap * sizeof(*missing));
        size_t j = 0;
        for (int64_t r = 0; r < in->world_size && n_missing < cap; r++) {
            while (j < in->n_ranks && in->ranks[j] < r) j++;
            if (j < in->n_ranks && in->ranks[j] == r) continue;
            missing[n_missing++] = r;
        }
        out->missing = missing;
    }
    out->n_missing = n_missing;

    size_t n_insufficient = 0;
    int64_t *insufficient = sw_arena_alloc(arena, in->n_ranks * sizeof(*insufficient));
    for (size_t i = 0; i < in->n_ranks; i++)
        if (in->counts[i] < 2) insufficient[n_insufficient++] = in->ranks[i];

    notes_t nt = {NULL, 0, 0, arena};
    sw_buf_t tmp;
    sw_buf_init(&tmp);
    for (size_t i = 0; i < in->n_pre_notes; i++) notes_add_c(&nt, in->pre_notes[i]);
    if (n_missing)
        notes_add_list(&nt, &tmp, "Missing rank data for ranks: ", out->missing, n_missing);
    if (in->median_ns > 0) {
        sw_i128 limit = (sw_i128)in->skew_multiplier * in->median_ns;
        for (size_t i = 0; i < in->n_ranks; i++) {
            sw_i128 off = in->offsets[i];
            if (off < 0) off = -off;
            if (off <= limit) continue;
            tmp.len = 0;
            sw_buf_puts(&tmp, "Rank ");
            sw_buf_put_i64(&tmp, in->ranks[i]);
            sw_buf_puts(&tmp, " starts ");
            sw_buf_put_i64(&tmp, in->offsets[i]);
            sw_buf_puts(&tmp, " ns from the anchor; first-sample alignment may be approximate.");
            sw_str_t s = {tmp.data, tmp.len};
            notes_add(&nt, sw_arena_str(arena, s));
        }
    }

    size_t n_total = in->n_ranks >= 2 ? in->n_cands_total : 0;
    if (in->n_ranks == 1) {
        notes_add_c(&nt, "At least two ranks are required for cross-rank first-cause analysis.");
    } else if (in->n_ranks >= 2) {
        if (n_insufficient)
            notes_add_list(&nt, &tmp,
                           "Some ranks have fewer than two samples and cannot contribute to "
                           "spike detection: ",
                           insufficient, n_insufficient);
        if (n_total == 0) notes_add_c(&nt, "No qualifying cross-rank spikes were detected.");
        else if (n_total == 1)
            notes_add_c(&nt, "Only one rank produced a qualifying spike; confidence is limited.");
    }
    if (in->counterless) notes_add(&nt, sw_counterless_note(arena, &tmp, in->counterless));
    sw_buf_clear(&tmp);
    out->notes = nt.v;
    out->n_notes = nt.n;

    if (n_total == 0 || in->n_cands == 0) return;
    uint64_t cutoff = n_total >= 2 ? in->cands[1].aligned : in->cands[0].aligned;
    out->has_onset = n_total >= 2;
    out->onset_ns = out->has_onset ? cutoff : 0;
    size_t n_sus = 0, earliest_count = 0;
    while (n_sus < in->n_cands && in->cands[n_sus].aligned <= cutoff) n_sus++;
    uint64_t earliest = in->cands[0].aligned;
    for (size_t i = 0; i < n_sus && in->cands[i].aligned == earliest; i++) earliest_count++;
    bool sparse = n_missing > 0 || n_insufficient > 0;
    sw_confidence_t top = sw_earliest_confidence(
        n_total, earliest_count, sparse, out->has_onset ? cutoff - earliest : 0, in->median_ns);
    sw_suspect_t *sus = sw_arena_calloc(arena, n_sus, sizeof(*sus));
    for (size_t i = 0; i < n_sus; i++) {
        const sw_cand_t *c = &in->cands[i];
        sw_suspect_t *s = &sus[i];
        s->rank = c->rank;
        s->first_spike_timestamp_ns = c->spike_ts;
        s->aligned_first_spike_timestamp_ns = c->aligned;
        s->peak_delta_bytes = c->peak;
        s->spike_window_samples = c->samples;
        s->lead_over_cluster_onset_ns = out->has_onset ? (int64_t)(cutoff - c->aligned) : 0;
        s->confidence = c->aligned == earliest ? top : SW_CONFIDENCE_LOW;
        s->supporting_ranks = (int64_t)n_sus;
        s->has_session = c->has_session;
        s->session_id = c->session;
        s->has_source = c->has_source;
        s->host = c->host;
        s->pid = c->pid;
        s->has_device_id = c->has_device_id;
        s->device_id = c->device_id;
        s->has_local_rank = c->has_local_rank;
        s->local_rank = c->local_rank;
        if (c->has_session && in->phase)
            sw_phase_resolve(in->phase, c->session, c->rank, c->spike_ts, arena, &s->phase);
    }
    out->suspects = sus;
    out->n_suspects = n_sus;
}

/* ---- condensing a record for a size-limited output ---------------------- */

static bool has_rank(const int64_t *v, size_t n, int64_t rank)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == rank) return true;
    return false;
}

/* The entries of map @p v whose rank is the anchor or a kept suspect. */
static size_t condense_map(const sw_analysis_t *a, const sw_rank_val_t *v, size_t n,
                           sw_arena_t *arena, const sw_rank_val_t **out)
{
    int64_t keys[SW_CONDENSE_SUSPECTS + 1];
    size_t nk = 0;
    if (a->anchor_rank >= 0) keys[nk++] = a->anchor_rank;
    for (size_t i = 0; i < a->n_suspects; i++) keys[nk++] = a->suspects[i].rank;
    sw_rank_val_t *kept = sw_arena_alloc(arena, (nk ? nk : 1) * sizeof(*kept));
    size_t m = 0;
    for (size_t i = 0; i < n && m < nk; i++)
        if (has_rank(keys, nk, v[i].rank)) kept[m++] = v[i];
    *out = kept;
    return m;
}

/* @p note cut to about SW_CONDENSE_NOTE_BYTES at a ", " list separator,
 * ending "... and N more." (N: the items left out). */
static bool condense_note(sw_str_t note, sw_arena_t *arena, sw_buf_t *tmp, sw_str_t *out)
{
    *out = note;
    if (note.len <= SW_CONDENSE_NOTE_BYTES) return false;
    size_t cut = SW_CONDENSE_NOTE_BYTES;
    while (cut > 0 && !(note.ptr[cut] == ',' && cut + 1 < note.len && note.ptr[cut + 1] == ' '))
        cut--;
    if (cut == 0) {
        /* Not a list: cut at a UTF-8 character boundary. */
        cut = SW_CONDENSE_NOTE_BYTES;
        while (cut > 0 && ((unsigned char)note.ptr[cut] & 0xC0) == 0x80) cut--;
        tmp->len = 0;
        sw_buf_put(tmp, note.ptr, cut);
        sw_buf_printf(tmp, "... (%zu more bytes).", note.len - cut);
    } else {
        size_t more = 1;
        for (size_t i = cut + 1; i + 1 < note.len; i++)
            if (note.ptr[i] == ',' && note.ptr[i + 1] == ' ') more++;
        tmp->len = 0;
        sw_buf_put(tmp, note.ptr, cut);
        sw_buf_printf(tmp, " and %zu more.", more);
    }
    *out = sw_arena_str(arena, (sw_str_t){tmp->data, tmp->len});
    return true;
}

bool sw_record_condense(const sw_record_t *in, sw_arena_t *arena, sw_record_t *out)
{
    *out = *in;
    const sw_analysis_t *a = &in->analysis;
    sw_analysis_t *c = &out->analysis;
    bool cut = false;
    sw_buf_t what, tmp;
    sw_buf_init(&what);
    sw_buf_init(&tmp);
    sw_buf_puts(&what, "This record was condensed to fit the output's message size limit:");
    const char *sep = " ";
    if (a->n_participating > SW_CONDENSE_RANKS) {
        c->n_participating = SW_CONDENSE_RANKS;
        sw_buf_printf(&what, "%sparticipating_ranks lists the first %d of %zu ranks", sep,
                      SW_CONDENSE_RANKS, a->n_participating);
        sep = "; ";
        cut = true;
    }
    if (a->n_missing > SW_CONDENSE_RANKS) {
        c->n_missing = SW_CONDENSE_RANKS;
        sw_buf_printf(&what, "%smissing_ranks lists the first %d of %zu ranks", sep,
                      SW_CONDENSE_RANKS, a->n_missing);
        sep = "; ";
        cut = true;
    }
    if (a->n_suspects > SW_CONDENSE_SUSPECTS) {
        c->n_suspects = SW_CONDENSE_SUSPECTS;
        sw_buf_printf(&what, "%sfirst_cause_suspects holds the earliest %d of %zu", sep,
                      SW_CONDENSE_SUSPECTS, a->n_suspects);
        sep = "; ";
        cut = true;
    }
    size_t nc = condense_map(c, a->counts, a->n_counts, arena, &c->counts);
    size_t no = condense_map(c, a->offsets, a->n_offsets, arena, &c->offsets);
    if (nc < a->n_counts || no < a->n_offsets) {
        sw_buf_printf(&what,
                      "%srank_sample_counts and alignment_offsets_ns hold the anchor and "
                      "the suspects only (%zu ranks in the full record)",
                      sep, a->n_counts);
        sep = "; ";
        cut = true;
    }
    c->n_counts = nc;
    c->n_offsets = no;
    size_t n_notes = a->n_notes > SW_CONDENSE_NOTES ? SW_CONDENSE_NOTES : a->n_notes;
    sw_str_t *notes = sw_arena_alloc(arena, (n_notes + 1) * sizeof(*notes));
    bool notes_cut = false;
    for (size_t i = 0; i < n_notes; i++)
        notes_cut |= condense_note(a->notes[i], arena, &tmp, &notes[i]);
    if (n_notes < a->n_notes) {
        sw_buf_printf(&what, "%snotes holds the first %d of %zu notes", sep, SW_CONDENSE_NOTES,
                      a->n_notes);
        sep = "; ";
        cut = true;
    }
    if (notes_cut) {
        sw_buf_printf(&what, "%slong notes are shortened", sep);
        cut = true;
    }
    if (cut) {
        sw_buf_putc(&what, '.');
        notes[n_notes] = sw_arena_str(arena, (sw_str_t){what.data, what.len});
        c->notes = notes;
        c->n_notes = n_notes + 1;
    } else {
        *out = *in;
    }
    sw_buf_clear(&what);
    sw_buf_clear(&tmp);
    return cut;
}

static int size_cmp(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return a < b ? -1 : a > b;
}

/* Index of rank in v (ascending by rank), or n. */
static size_t find_rank(const sw_rank_val_t *v, size_t n, int64_t rank)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].rank < rank) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && v[lo].rank == rank ? lo : n;
}

size_t sw_analysis_kept_ranks(const sw_analysis_t *a, const sw_rank_val_t *v, size_t n, size_t *sel)
{
    size_t nsel = 0;
    if (a->anchor_rank >= 0) {
        size_t i = find_rank(v, n, a->anchor_rank);
        if (i < n) sel[nsel++] = i;
    }
    for (size_t k = 0; k < a->n_suspects; k++) {
        size_t i = find_rank(v, n, a->suspects[k].rank);
        if (i < n) sel[nsel++] = i;
    }
    /* Ascending rank = ascending index (v is sorted); each once. */
    qsort(sel, nsel, sizeof(*sel), size_cmp);
    size_t w = 0;
    for (size_t k = 0; k < nsel; k++)
        if (!w || sel[k] != sel[w - 1]) sel[w++] = sel[k];
    return w;
}
