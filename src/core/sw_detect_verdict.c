/*
 * The engine's answers (SPEC 6): the signature re-read from the candidate
 * treap, the analysis a record carries, the verdict an episode keeps and
 * the lifecycle that decides trigger, update and resolve. Built only when
 * a candidate change touches the suspects or a record is emitted. Pure.
 */
#include "sw_detect_cands.h"

static int64_t job_world_size(const job_t *j)
{
    int64_t declared = j->claim_leader >= 0 ? j->claims[j->claim_leader].ws : 1;
    int64_t observed = j->max_rank + 1;
    return declared > observed ? declared : observed;
}

/* Bring n_excl in step with the current horizon and anchor. */
static void excl_sync(sw_detector_t *det, job_t *j)
{
    int64_t key = horizon_key(j);
    if (j->excl_valid && key == j->excl_key) return;
    size_t n = 0;
    if (key != INT64_MIN) {
        titer_t it;
        titer_begin(&it, det, j);
        for (uint32_t x = titer_next(&it); x != NIL && j->ranks[x].c_rel <= key;
             x = titer_next(&it))
            n++;
    }
    j->n_excl = n;
    j->excl_key = key;
    j->excl_valid = true;
    j->v_touched = true;
}

/* Candidates of analysis A: those beyond the horizon. */
static size_t cands_eff(const job_t *j)
{
    return j->ncands - j->n_excl;
}

/* The two middle gaps of the job, from the gap median's bracket or, when
 * it cannot answer, after rebuilding it from the windows (O(retained)). */
static void gaps_middle(job_t *j, int64_t *a, int64_t *b)
{
    if (sw_gapmed_middle(&j->gaps, a, b)) return;
    /* The histogram lives only for the rebuild (rare): a small engine does
     * not keep its ~440 KB. */
    uint64_t *hist = sw_calloc(SW_GAPMED_BUCKETS, sizeof(*hist));
    for (size_t i = 0; i < j->nranks; i++) sw_win_gaps_hist(&j->ranks[i].win, hist);
    sw_gapmed_rebuild_begin(&j->gaps, hist);
    free(hist);
    for (size_t i = 0; i < j->nranks; i++) sw_win_gaps_keep(&j->ranks[i].win, &j->gaps);
    /* The rebuild takes its count from the first pass, so the second
     * answers whatever the updates before it did. */
    *a = *b = 0;
    (void)sw_gapmed_middle(&j->gaps, a, b);
}

static sw_i128 job_median(job_t *j)
{
    size_t n = sw_gapmed_size(&j->gaps);
    if (n) {
        int64_t a, b;
        gaps_middle(j, &a, &b);
        return sw_median_of(a, b, n);
    }
    n = sw_vcount_size(&j->intervals);
    if (n)
        return sw_median_of((sw_i128)sw_vcount_kth(&j->intervals, (n - 1) / 2) * 1000000,
                            (sw_i128)sw_vcount_kth(&j->intervals, n / 2) * 1000000, n);
    return 0;
}

/* ---- signature and records -------------------------------------------- */

/* Re-read the suspects from the treap into tmp_sig/tmp_rel.
 * @returns their number; *boundary is the onset candidate's rel. */
static size_t collect_suspects(sw_detector_t *det, job_t *j, int64_t *boundary)
{
    titer_t it;
    titer_begin_after(&it, det, j, j->excl_key);
    size_t n = 0;
    *boundary = INT64_MAX;
    for (uint32_t x = titer_next(&it); x != NIL; x = titer_next(&it)) {
        const rank_t *r = &j->ranks[x];
        if (n >= 2 && r->c_rel > *boundary) break;
        if (n + 1 > det->captmp) {
            det->captmp = det->captmp ? det->captmp * 2 : 64;
            det->tmp_sig = sw_reallocarray(det->tmp_sig, det->captmp, sizeof(*det->tmp_sig));
            det->tmp_rel = sw_reallocarray(det->tmp_rel, det->captmp, sizeof(*det->tmp_rel));
        }
        det->tmp_sig[n].rank = r->rank;
        det->tmp_sig[n].spike_ts = r->c_spike_ts;
        det->tmp_rel[n] = r->c_rel;
        n++;
        if (n == 2) *boundary = r->c_rel;
    }
    return n;
}

static sw_confidence_t job_confidence(job_t *j)
{
    bool sparse = (uint64_t)job_world_size(j) > j->nranks || j->insufficient > 0;
    uint64_t lead = (uint64_t)(j->sig_boundary - j->sig_rel0);
    sw_i128 median = j->sig_earliest == 1 && !sparse ? job_median(j) : 0;
    return sw_earliest_confidence(cands_eff(j), j->sig_earliest, sparse, lead, median);
}

/* Refresh the signature (onset, suspects, earliest confidence) of an open
 * job with an onset. @returns true when it changed. */
static bool sig_refresh(sw_detector_t *det, job_t *j)
{
    bool changed = !j->sig_valid;
    if (j->region_dirty || !j->sig_valid) {
        int64_t boundary;
        size_t n = collect_suspects(det, j, &boundary);
        if (n != j->nsig || memcmp(det->tmp_sig, j->sig, n * sizeof(*j->sig)) != 0) {
            changed = true;
            SW_GROW(j->sig, n, j->capsig, 8);
            memcpy(j->sig, det->tmp_sig, n * sizeof(*j->sig));
            j->nsig = n;
        }
        j->sig_boundary = boundary;
        j->sig_rel0 = det->tmp_rel[0];
        j->sig_earliest = 0;
        while (j->sig_earliest < n && det->tmp_rel[j->sig_earliest] == j->sig_rel0)
            j->sig_earliest++;
        j->region_dirty = false;
    }
    uint64_t onset = (uint64_t)j->sig_boundary + (uint64_t)anchor_first(j, NULL);
    sw_confidence_t conf = job_confidence(j);
    if (onset != j->sig_onset || conf != j->sig_conf) changed = true;
    j->sig_onset = onset;
    j->sig_conf = conf;
    j->sig_valid = true;
    return changed;
}

static void sig_reset(job_t *j)
{
    j->sig_valid = false;
    j->sig_boundary = INT64_MAX;
    j->nsig = 0;
    j->region_dirty = false;
}

static int i64_cmp(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Each suspect's timeline excerpt, from its window. The budget shrinks
 * with many suspects so that a record stays small. */
static void add_timelines(sw_detector_t *det, job_t *j, int64_t afirst, sw_analysis_t *out)
{
    if (out->n_suspects == 0) return;
    size_t max = SW_TIMELINE_RECORD_POINTS / out->n_suspects;
    if (max > SW_TIMELINE_MAX_POINTS) max = SW_TIMELINE_MAX_POINTS;
    if (max < SW_TIMELINE_MIN_POINTS) max = SW_TIMELINE_MIN_POINTS;
    uint32_t *idx = sw_arena_alloc(&det->arena, max * sizeof(*idx));
    /* The suspects live in the detector's arena: this is their last step. */
    sw_suspect_t *sus = (sw_suspect_t *)out->suspects;
    sw_win_ctx_t ctx = {j->srcs, j->strs, &j->gaps, &j->intervals, NULL};
    for (size_t i = 0; i < out->n_suspects; i++) {
        uint32_t ri;
        if (!sw_imap_get(&j->rank_map, sus[i].rank, &ri)) continue;
        const rank_t *r = &j->ranks[ri];
        sw_win_excerpt_t x;
        x.max = max;
        x.aligned = sw_arena_alloc(&det->arena, max * sizeof(*x.aligned));
        x.used = sw_arena_alloc(&det->arena, max * sizeof(*x.used));
        sw_win_excerpt(&r->win, &ctx, r->c_spike_ts, r->c_src, r->c_samples,
                       (int64_t)((uint64_t)r->first_ts - (uint64_t)afirst), idx, &x);
        sus[i].n_timeline = x.n;
        sus[i].timeline_aligned_ns = x.aligned;
        sus[i].timeline_used = x.used;
        sus[i].timeline_spike_start = x.spike_start;
        sus[i].timeline_spike = x.spike;
        sus[i].timeline_window = r->win.n;
    }
}

/* Analysis A of SPEC 6 step 4 from the incremental state; without
 * use_horizon every candidate counts (summaries, step 6). */
void sw_det_build_analysis(sw_detector_t *det, job_t *j, bool use_horizon, sw_analysis_t *out)
{
    sw_arena_reset(&det->arena);
    if (j->sorted_dirty) {
        j->sorted = sw_reallocarray(j->sorted, j->nranks, sizeof(*j->sorted));
        for (size_t i = 0; i < j->nranks; i++) j->sorted[i] = j->ranks[i].rank;
        qsort(j->sorted, j->nranks, sizeof(*j->sorted), i64_cmp);
        j->sorted_dirty = false;
    }
    int64_t anchor_rank;
    int64_t afirst = anchor_first(j, &anchor_rank);
    int64_t *counts = sw_arena_alloc(&det->arena, j->nranks * sizeof(*counts));
    int64_t *offsets = sw_arena_alloc(&det->arena, j->nranks * sizeof(*offsets));
    for (size_t i = 0; i < j->nranks; i++) {
        uint32_t ri;
        sw_imap_get(&j->rank_map, j->sorted[i], &ri);
        counts[i] = j->ranks[ri].win.n;
        offsets[i] = j->ranks[ri].first_ts - afirst;
    }
    /* Candidates up to the last suspect, in order. */
    titer_t it;
    if (use_horizon) {
        excl_sync(det, j);
        titer_begin_after(&it, det, j, j->excl_key);
    } else {
        titer_begin(&it, det, j);
    }
    size_t cap = 8, n = 0;
    sw_cand_t *cands = sw_arena_alloc(&det->arena, cap * sizeof(*cands));
    int64_t boundary = INT64_MAX;
    for (uint32_t x = titer_next(&it); x != NIL; x = titer_next(&it)) {
        const rank_t *r = &j->ranks[x];
        if (n >= 2 && r->c_rel > boundary) break;
        if (n == cap) {
            sw_cand_t *bigger = sw_arena_alloc(&det->arena, cap * 2 * sizeof(*cands));
            memcpy(bigger, cands, n * sizeof(*cands));
            cands = bigger;
            cap *= 2;
        }
        sw_cand_t *c = &cands[n++];
        c->rank = r->rank;
        c->spike_ts = r->c_spike_ts;
        c->aligned = (uint64_t)r->c_rel + (uint64_t)afirst;
        c->peak = r->c_peak;
        c->samples = r->c_samples;
        const sw_src_t *src = &j->srcs[r->c_src];
        c->has_session = src->session != 0;
        c->session = sw_intern_get(j->strs, src->session);
        c->has_source = true;
        c->host = sw_intern_get(j->strs, src->host);
        c->pid = src->pid;
        c->has_device_id = src->device_id != SW_SRC_UNSET;
        c->device_id = src->device_id;
        c->has_local_rank = src->local_rank != SW_SRC_UNSET;
        c->local_rank = src->local_rank;
        if (n == 2) boundary = r->c_rel;
    }
    sw_assemble_in_t in;
    memset(&in, 0, sizeof(in));
    in.has_job_id = j->has_job_id;
    in.job_id.ptr = j->job_id;
    in.job_id.len = j->job_id_len;
    in.world_size = job_world_size(j);
    in.ranks = j->sorted;
    in.counts = counts;
    in.offsets = offsets;
    in.n_ranks = j->nranks;
    in.anchor_rank = anchor_rank;
    in.median_ns = job_median(j);
    in.skew_multiplier = det->params.skew_note_multiplier;
    in.cands = cands;
    in.n_cands = n;
    in.n_cands_total = use_horizon ? cands_eff(j) : j->ncands;
    in.phase = j->phase;
    sw_assemble(&in, &det->arena, out);
    add_timelines(det, j, afirst, out);
}

sw_record_t *sw_det_emit(sw_detector_t *det, job_t *j, sw_action_t action, bool has_ts, int64_t ts,
                         int64_t cause_offset)
{
    sw_record_t *rec = &det->rec;
    sw_det_build_analysis(det, j, action != SW_ACTION_SUMMARY, &rec->analysis);
    rec->resolve_reason = SW_RESOLVE_NONE;
    rec->resolve_rank = -1;
    rec->blind_ranks = NULL; /* SPEC 8.5: filled in by sw_crash_feed() */
    rec->n_blind = 0;
    rec->x8 = NULL;
    rec->episode_open = j->open;
    rec->episode_confidence = j->episode > 0 ? j->trig_conf : -2;
    rec->action = action;
    rec->episode = j->episode;
    rec->revision = j->revision;
    rec->has_event_ts = has_ts;
    rec->event_timestamp_ns = has_ts ? ts : 0;
    rec->cause_offset = cause_offset;
    memset(&rec->source, 0, sizeof(rec->source));
    det->st.records[action]++;
    return rec;
}

/* ---- the verdict ------------------------------------------------------ */

static const int64_t *copy_i64s(sw_arena_t *a, const int64_t *v, size_t n)
{
    if (!n) return NULL;
    int64_t *c = sw_arena_alloc(a, n * sizeof(*c));
    memcpy(c, v, n * sizeof(*c));
    return c;
}

/* A deep copy of one suspect (strings, phase labels, timeline) in @p a. */
static void suspect_copy(sw_arena_t *a, const sw_suspect_t *in, sw_suspect_t *out)
{
    *out = *in;
    out->session_id = sw_arena_str(a, in->session_id);
    out->host = sw_arena_str(a, in->host);
    if (in->phase.n_paths) {
        sw_str_t *paths = sw_arena_alloc(a, in->phase.n_paths * sizeof(*paths));
        for (size_t i = 0; i < in->phase.n_paths; i++)
            paths[i] = sw_arena_str(a, in->phase.paths[i]);
        out->phase.paths = paths;
    } else {
        out->phase.paths = NULL;
    }
    out->phase.summary_path = sw_arena_str(a, in->phase.summary_path);
    out->phase.path = sw_arena_str(a, in->phase.path);
    out->phase.scope_id = sw_arena_str(a, in->phase.scope_id);
    out->phase.thread_name = sw_arena_str(a, in->phase.thread_name);
    out->timeline_aligned_ns = copy_i64s(a, in->timeline_aligned_ns, in->n_timeline);
    out->timeline_used = copy_i64s(a, in->timeline_used, in->n_timeline);
}

/* Mark (or unmark) the ranks of the verdict's suspects. */
void sw_det_verdict_mark(job_t *j, bool on)
{
    for (size_t i = 0; i < j->v_n; i++) {
        uint32_t ri;
        if (sw_imap_get(&j->rank_map, j->v_sus[i].rank, &ri)) j->ranks[ri].in_verdict = on;
    }
}

static void verdict_clear(job_t *j)
{
    sw_det_verdict_mark(j, false);
    sw_arena_reset(&j->v_arena);
    j->v_sus = NULL;
    j->v_n = 0;
    j->has_verdict = false;
    j->v_touched = false;
}

/* The record's onset and suspects become the episode's verdict. */
static void verdict_store(job_t *j, const sw_analysis_t *a)
{
    verdict_clear(j);
    j->has_verdict = true;
    j->v_onset = a->onset_ns;
    j->v_n = a->n_suspects;
    j->v_sus = a->n_suspects ? sw_arena_alloc(&j->v_arena, a->n_suspects * sizeof(*j->v_sus))
                             : NULL;
    for (size_t i = 0; i < a->n_suspects; i++)
        suspect_copy(&j->v_arena, &a->suspects[i], &j->v_sus[i]);
    sw_det_verdict_mark(j, true);
}

/* A verdict suspect (rank r, first spike t) is lost when A has no
 * candidate of rank r with first_spike_timestamp_ns <= t: its rank has no
 * candidate, or only one behind the horizon, or a later one. Only a
 * candidate change of a verdict rank (or a moved horizon key) can change
 * the answer, so it is re-read only then. @returns the lost rank, or -1. */
static int64_t verdict_lost(job_t *j)
{
    if (!j->v_touched) return -1;
    for (size_t i = 0; i < j->v_n; i++) {
        uint32_t ri;
        const sw_suspect_t *v = &j->v_sus[i];
        if (!sw_imap_get(&j->rank_map, v->rank, &ri)) return v->rank;
        const rank_t *r = &j->ranks[ri];
        if (!r->has_cand || r->c_rel <= j->excl_key || r->c_spike_ts > v->first_spike_timestamp_ns)
            return v->rank;
    }
    j->v_touched = false;
    return -1;
}

/* SPEC 6 step 5. */
const sw_record_t *sw_det_lifecycle(sw_detector_t *det, job_t *j, int64_t ts, int64_t off)
{
    excl_sync(det, j);
    bool onset = cands_eff(j) >= 2;
    if (!j->open) {
        if (!onset) return NULL;
        j->episode++;
        j->revision = 0;
        j->open = true;
        sig_reset(j);
        sig_refresh(det, j);
        /* The episode's severity is the trigger's, whatever follows. */
        j->trig_conf = -1;
        sw_record_t *rec = sw_det_emit(det, j, SW_ACTION_TRIGGER, true, ts, off);
        j->trig_conf = rec->analysis.n_suspects ? (int)rec->analysis.suspects[0].confidence : -1;
        rec->episode_confidence = j->trig_conf;
        verdict_store(j, &rec->analysis);
        return rec;
    }
    int64_t lost = onset ? verdict_lost(j) : -1;
    if (!onset || lost >= 0) {
        j->revision++;
        j->open = false;
        sw_record_t *rec = sw_det_emit(det, j, SW_ACTION_RESOLVE, true, ts, off);
        rec->resolve_reason = onset ? SW_RESOLVE_SUSPECT_LOST : SW_RESOLVE_ONSET_GONE;
        rec->resolve_rank = lost;
        /* The horizon moves past every candidate of A and the verdict. */
        uint64_t h = j->has_horizon ? j->horizon : 0;
        uint32_t last = cands_eff(j) ? t_last(j) : NIL;
        if (last != NIL) {
            uint64_t a = (uint64_t)j->ranks[last].c_rel + (uint64_t)anchor_first(j, NULL);
            if (a > h) h = a;
        }
        for (size_t i = 0; i < j->v_n; i++)
            if (j->v_sus[i].aligned_first_spike_timestamp_ns > h)
                h = j->v_sus[i].aligned_first_spike_timestamp_ns;
        j->has_horizon = true;
        j->horizon = h;
        j->excl_valid = false;
        /* The record says the verdict it closes; the verdict's memory stays
         * valid until the next trigger, after this record is consumed. */
        rec->analysis.has_onset = true;
        rec->analysis.onset_ns = j->v_onset;
        rec->analysis.suspects = j->v_sus;
        rec->analysis.n_suspects = j->v_n;
        sw_det_verdict_mark(j, false);
        j->v_touched = false;
        sig_reset(j);
        return rec;
    }
    if (!sig_refresh(det, j)) return NULL;
    j->revision++;
    sw_record_t *rec = sw_det_emit(det, j, SW_ACTION_UPDATE, true, ts, off);
    verdict_store(j, &rec->analysis);
    return rec;
}
