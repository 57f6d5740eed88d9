/*
 * The engine's answers (SPEC 6): the signature re-read from the candidate
 * treap, the analysis a record carries, the verdict an episode keeps and
 * the lifecycle that decides trigger, update and resolve. Built only when
 * a candidate change touches the suspects or a record is emitted. Pure.
 */
#include "sw_detect_cands.h"

/* The two middle gaps of the job, from the gap median's bracket or, when
 * it cannot answer, after rebuilding it from the windows (O(retained)). */
static void gaps_middle(job_t *j, int64_t *a, int64_t *b)
{
    if (sw_gapmed_middle(&j->seen.gaps, a, b)) return;
    /* The histogram lives only for the rebuild (rare): a small engine does
     * not keep its ~440 KB. */
    uint64_t *hist = sw_calloc(SW_GAPMED_BUCKETS, sizeof(*hist));
    for (size_t i = 0; i < j->ranks.n; i++) sw_win_gaps_hist(&j->ranks.v[i].win, hist);
    sw_gapmed_rebuild_begin(&j->seen.gaps, hist);
    free(hist);
    for (size_t i = 0; i < j->ranks.n; i++) sw_win_gaps_keep(&j->ranks.v[i].win, &j->seen.gaps);
    /* The rebuild takes its count from the first pass, so the second
     * answers whatever the updates before it did. */
    *a = *b = 0;
    (void)sw_gapmed_middle(&j->seen.gaps, a, b);
}

static sw_i128 job_median(job_t *j)
{
    size_t n = sw_gapmed_size(&j->seen.gaps);
    if (n) {
        int64_t a, b;
        gaps_middle(j, &a, &b);
        return sw_median_of(a, b, n);
    }
    n = sw_vcount_size(&j->seen.intervals);
    if (n)
        return sw_median_of((sw_i128)sw_vcount_kth(&j->seen.intervals, (n - 1) / 2) * 1000000,
                            (sw_i128)sw_vcount_kth(&j->seen.intervals, n / 2) * 1000000, n);
    return 0;
}

/* ---- signature and records -------------------------------------------- */

/* The answer of the open episode (docs/semantics.md): the first rank, the
 * ranks tied with it (aligned spikes within one sampling interval of its
 * own), the onset candidate and the first suspect's confidence. Tied ranks
 * and the onset are named by their rising run's base, which stays put
 * while a rise that takes several samples moves its crossing sample. They
 * are re-read from the treap, in O(tie + suspects), only when a candidate
 * change touched that region. */

static int sig_rank_cmp(const void *pa, const void *pb)
{
    const sig_ent_t *a = pa, *b = pb;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static sw_confidence_t job_confidence(job_t *j)
{
    bool sparse = (uint64_t)sw_det_world_size(j) > j->ranks.n || j->seen.insufficient > 0;
    uint64_t lead = (uint64_t)(j->sig.onset_rel - j->sig.rel0);
    sw_i128 median = j->sig.earliest == 1 && !sparse ? job_median(j) : 0;
    return sw_earliest_confidence(j->cands.n, j->sig.earliest, sparse, lead, median);
}

/* One sampling interval: the job's median, at least 1 ns. */
static int64_t job_tie_ns(job_t *j)
{
    sw_i128 m = job_median(j);
    if (m < 1) return 1;
    return m > INT64_MAX / 4 ? INT64_MAX / 4 : (int64_t)m;
}

/* Re-read the answer of a job with an onset into j->sig.v and s_*. */
static void sig_collect(sw_detector_t *det, job_t *j)
{
    j->sig.tie_ns = job_tie_ns(j);
    titer_t it;
    titer_begin(&it, det, j);
    size_t n = 0, ntie = 0;
    int64_t onset_rel = INT64_MAX, tie_end = INT64_MAX;
    j->sig.earliest = 0;
    for (uint32_t x = titer_next(&it); x != NIL; x = titer_next(&it)) {
        const rank_t *r = &j->ranks.v[x];
        const rank_cand_t *c = rc_of(j, r);
        if (n >= 2 && c->rel > onset_rel && c->rel > tie_end) break;
        if (n == 0) {
            j->sig.rel0 = c->rel;
            j->sig.first = r->rank;
            tie_end = c->rel > INT64_MAX - j->sig.tie_ns ? INT64_MAX : c->rel + j->sig.tie_ns;
        }
        if (n == 1) {
            onset_rel = c->rel;
            j->sig.onset_rank = r->rank;
            j->sig.onset_base = c->base;
        }
        if (c->rel == j->sig.rel0) j->sig.earliest++;
        if (c->rel <= tie_end) {
            SW_GROW(j->sig.v, ntie, j->sig.cap, 8);
            j->sig.v[ntie].rank = r->rank;
            j->sig.v[ntie].spike_ts = 0; /* a tie is named by its ranks */
            ntie++;
        }
        n++;
    }
    qsort(j->sig.v, ntie, sizeof(*j->sig.v), sig_rank_cmp);
    j->sig.n = ntie;
    j->sig.onset_rel = onset_rel;
    j->sig.boundary = onset_rel > tie_end ? onset_rel : tie_end;
    j->sig.dirty = false;
    j->sig.valid = true;
}

/* Read the answer of an open job with an onset (j->sig.v, s_*, sig_conf). */
static void sig_refresh(sw_detector_t *det, job_t *j)
{
    if (j->sig.dirty || !j->sig.valid) sig_collect(det, j);
    j->sig.conf = job_confidence(j);
}

/* The answer now becomes the published one. */
static void sig_publish(job_t *j)
{
    SW_GROW(j->pub.tie, j->sig.n, j->pub.captie, 8);
    memcpy(j->pub.tie, j->sig.v, j->sig.n * sizeof(*j->sig.v));
    j->pub.ntie = j->sig.n;
    j->pub.first = j->sig.first;
    j->pub.onset_rank = j->sig.onset_rank;
    j->pub.onset_base = j->sig.onset_base;
    j->pub.rel0 = j->sig.rel0;
    j->pub.conf = j->sig.conf;
}

static void sig_reset(job_t *j)
{
    j->sig.valid = false;
    j->sig.boundary = INT64_MAX;
    j->sig.n = 0;
    j->sig.dirty = false;
}
static int i64_cmp(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Each suspect's timeline excerpt, from its window, around the spike the
 * candidate @p c names. The budget shrinks with many suspects so that a
 * record stays small. */
static void add_timelines(sw_detector_t *det, job_t *j, int64_t afirst, const sw_cand_t *c,
                          const uint32_t *c_src, sw_analysis_t *out)
{
    if (out->n_suspects == 0) return;
    size_t max = SW_TIMELINE_RECORD_POINTS / out->n_suspects;
    if (max > SW_TIMELINE_MAX_POINTS) max = SW_TIMELINE_MAX_POINTS;
    if (max < SW_TIMELINE_MIN_POINTS) max = SW_TIMELINE_MIN_POINTS;
    uint32_t *idx = sw_arena_alloc(&det->arena, max * sizeof(*idx));
    /* The suspects live in the detector's arena: this is their last step. */
    sw_suspect_t *sus = (sw_suspect_t *)out->suspects;
    sw_win_ctx_t ctx = {j->src.v,      j->src.strs,        &j->src.wide,
                        &j->seen.gaps, &j->seen.intervals, NULL};
    for (size_t i = 0; i < out->n_suspects; i++) {
        uint32_t ri;
        if (!sw_imap_get(&j->ranks.map, sus[i].rank, &ri)) continue;
        const rank_t *r = &j->ranks.v[ri];
        sw_win_excerpt_t x;
        x.max = max;
        x.aligned = sw_arena_alloc(&det->arena, max * sizeof(*x.aligned));
        x.used = sw_arena_alloc(&det->arena, max * sizeof(*x.used));
        sw_win_excerpt(&r->win, &ctx, c[i].spike_ts, c_src[i], c[i].samples,
                       (int64_t)((uint64_t)r->first_ts - (uint64_t)afirst), idx, &x);
        sus[i].n_timeline = x.n;
        sus[i].timeline_aligned_ns = x.aligned;
        sus[i].timeline_used = x.used;
        sus[i].timeline_spike_start = x.spike_start;
        sus[i].timeline_spike = x.spike;
        sus[i].timeline_window = r->win.n;
    }
}

/* A candidate of rank @p r for the record: its spike @p wc, rel @p rel. */
static void cand_fill(const job_t *j, const rank_t *r, int64_t afirst, int64_t rel,
                      const sw_win_cand_t *wc, sw_cand_t *c)
{
    c->rank = r->rank;
    c->spike_ts = wc->spike_ts;
    c->aligned = (uint64_t)rel + (uint64_t)afirst;
    c->peak = wc->peak;
    c->samples = wc->samples;
    const sw_src_t *src = &j->src.v[wc->src];
    c->has_session = src->session != 0;
    c->session = sw_intern_get(j->src.strs, src->session);
    c->has_source = true;
    c->host = sw_intern_get(j->src.strs, src->host);
    c->pid = src_pid(j, wc->src);
    c->device_id = src_device(j, wc->src);
    c->has_device_id = c->device_id != INT64_MIN;
    c->local_rank = src_local_rank(j, wc->src);
    c->has_local_rank = c->local_rank != INT64_MIN;
}

typedef struct fullc_s {
    sw_cand_t c;
    uint32_t src;
} fullc_t;

static int fullc_cmp(const void *a, const void *b)
{
    return sw_cand_cmp(&((const fullc_t *)a)->c, &((const fullc_t *)b)->c);
}

/* Analysis A of SPEC 6 step 4 from the incremental state. With use_spent
 * the lifecycle's spent runs are no candidates (triggers, updates,
 * resolves: the treap); without, every candidate of the windows counts
 * (summaries, step 6): each rank's first spike is searched again, O(n log
 * n), which only a summary pays. */
void sw_det_build_analysis(sw_detector_t *det, job_t *j, bool use_spent, sw_analysis_t *out)
{
    sw_arena_reset(&det->arena);
    if (j->ranks.sorted_dirty) {
        j->ranks.sorted = sw_reallocarray(j->ranks.sorted, j->ranks.n, sizeof(*j->ranks.sorted));
        for (size_t i = 0; i < j->ranks.n; i++) j->ranks.sorted[i] = j->ranks.v[i].rank;
        qsort(j->ranks.sorted, j->ranks.n, sizeof(*j->ranks.sorted), i64_cmp);
        j->ranks.sorted_dirty = false;
    }
    int64_t anchor_rank;
    int64_t afirst = anchor_first(j, &anchor_rank);
    int64_t *counts = sw_arena_alloc(&det->arena, j->ranks.n * sizeof(*counts));
    int64_t *offsets = sw_arena_alloc(&det->arena, j->ranks.n * sizeof(*offsets));
    for (size_t i = 0; i < j->ranks.n; i++) {
        uint32_t ri;
        sw_imap_get(&j->ranks.map, j->ranks.sorted[i], &ri);
        counts[i] = j->ranks.v[ri].win.n;
        offsets[i] = j->ranks.v[ri].first_ts - afirst;
    }
    /* Candidates up to the last suspect, in order. */
    size_t n = 0, total = 0;
    sw_cand_t *cands;
    uint32_t *c_src;
    if (use_spent) {
        size_t cap = 8;
        cands = sw_arena_alloc(&det->arena, cap * sizeof(*cands));
        c_src = sw_arena_alloc(&det->arena, cap * sizeof(*c_src));
        titer_t it;
        titer_begin(&it, det, j);
        int64_t boundary = INT64_MAX;
        for (uint32_t x = titer_next(&it); x != NIL; x = titer_next(&it)) {
            const rank_t *r = &j->ranks.v[x];
            const rank_cand_t *rc = rc_of(j, r);
            if (n >= 2 && rc->rel > boundary) break;
            if (n == cap) {
                sw_cand_t *bigger = sw_arena_alloc(&det->arena, cap * 2 * sizeof(*cands));
                uint32_t *bsrc = sw_arena_alloc(&det->arena, cap * 2 * sizeof(*c_src));
                memcpy(bigger, cands, n * sizeof(*cands));
                memcpy(bsrc, c_src, n * sizeof(*c_src));
                cands = bigger;
                c_src = bsrc;
                cap *= 2;
            }
            sw_win_cand_t wc = {rc->spike_ts, rc->peak, rc->samples, rc->src, rc->base, 0};
            cand_fill(j, r, afirst, rc->rel, &wc, &cands[n]);
            c_src[n] = rc->src;
            n++;
            if (n == 2) boundary = rc->rel;
        }
        total = j->cands.n;
    } else {
        /* The ranks with a candidate first, then room for just those: a
         * wide job's ranks mostly have none (the cache of a rank with a
         * candidate record keeps the answer, so its second search is a
         * lookup; the few others search again). */
        uint32_t *has = sw_arena_alloc(&det->arena, (j->ranks.n + 1) * sizeof(*has));
        size_t nhas = 0;
        for (size_t i = 0; i < j->ranks.n; i++) {
            rank_t *r = &j->ranks.v[i];
            sw_win_cand_t wc;
            if (sw_win_candidate(&r->win, r->cand != NIL ? &rc_of(j, r)->cc : NULL,
                                 det->params.spike_min_bytes, det->params.spike_fraction, INT64_MIN,
                                 &wc))
                has[nhas++] = (uint32_t)i;
        }
        fullc_t *all = sw_arena_alloc(&det->arena, (nhas + 1) * sizeof(*all));
        for (size_t k = 0; k < nhas; k++) {
            rank_t *r = &j->ranks.v[has[k]];
            sw_win_cand_t wc;
            sw_win_candidate(&r->win, r->cand != NIL ? &rc_of(j, r)->cc : NULL,
                             det->params.spike_min_bytes, det->params.spike_fraction, INT64_MIN,
                             &wc);
            cand_fill(j, r, afirst, wc.spike_ts - r->first_ts, &wc, &all[total].c);
            all[total].src = wc.src;
            total++;
        }
        qsort(all, total, sizeof(*all), fullc_cmp);
        cands = sw_arena_alloc(&det->arena, (total + 1) * sizeof(*cands));
        c_src = sw_arena_alloc(&det->arena, (total + 1) * sizeof(*c_src));
        for (; n < total && (n < 2 || all[n].c.aligned <= cands[1].aligned); n++) {
            cands[n] = all[n].c;
            c_src[n] = all[n].src;
        }
    }
    sw_assemble_in_t in;
    memset(&in, 0, sizeof(in));
    in.has_job_id = j->id.has;
    in.job_id.ptr = j->id.str;
    in.job_id.len = j->id.len;
    in.world_size = sw_det_world_size(j);
    in.ranks = j->ranks.sorted;
    in.counts = counts;
    in.offsets = offsets;
    in.n_ranks = j->ranks.n;
    in.anchor_rank = anchor_rank;
    in.median_ns = job_median(j);
    in.skew_multiplier = det->params.skew_note_multiplier;
    in.cands = cands;
    in.n_cands = n;
    in.n_cands_total = total;
    in.phase = j->phase;
    in.counterless = j->id.counterless;
    sw_assemble(&in, &det->arena, out);
    add_timelines(det, j, afirst, cands, c_src, out);
}
sw_record_t *sw_det_emit(sw_detector_t *det, job_t *j, sw_action_t action, bool has_ts, int64_t ts,
                         int64_t cause_offset)
{
    sw_record_t *rec = &det->rec;
    sw_det_build_analysis(det, j, action != SW_ACTION_SUMMARY, &rec->analysis);
    rec->resolve_reason = SW_RESOLVE_NONE;
    rec->resolve_rank = -1;
    rec->blind_ranks = NULL; /* SPEC 8.5: set from sw_crash_blind() */
    rec->n_blind = 0;
    rec->x8 = NULL;
    rec->episode_open = j->ep.open;
    rec->episode_confidence = j->ep.no > 0 ? j->ep.trig_conf : -2;
    rec->action = action;
    rec->episode = j->ep.no;
    rec->revision = j->ep.revision;
    rec->has_event_ts = has_ts;
    rec->event_timestamp_ns = has_ts ? ts : 0;
    rec->cause_offset = tag_offset(cause_offset); /* a tag (det_tag) */
    rec->cause_source = tag_source(cause_offset);
    rec->tied_ranks = NULL;
    rec->n_tied = 0;
    /* A summary that closes a job mid-episode carries its verdict. */
    rec->has_verdict = action == SW_ACTION_SUMMARY && j->ep.open && j->verdict.has;
    rec->verdict_onset_ns = rec->has_verdict ? j->verdict.onset : 0;
    rec->verdict = rec->has_verdict ? j->verdict.sus : NULL;
    rec->n_verdict = rec->has_verdict ? j->verdict.n : 0;
    if (rec->has_verdict) {
        rec->tied_ranks = j->verdict.tie;
        rec->n_tied = j->verdict.ntie;
    }
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
    for (size_t i = 0; i < j->verdict.n; i++) {
        uint32_t ri;
        if (sw_imap_get(&j->ranks.map, j->verdict.sus[i].rank, &ri)) j->ranks.v[ri].in_verdict = on;
    }
}

static void verdict_clear(job_t *j)
{
    sw_det_verdict_mark(j, false);
    sw_arena_reset(&j->verdict.arena);
    j->verdict.sus = NULL;
    j->verdict.n = 0;
    j->verdict.tie = NULL;
    j->verdict.ntie = 0;
    j->verdict.has = false;
    j->verdict.touched = false;
}

/* The record's onset and suspects become the episode's verdict. */
static void verdict_store(job_t *j, const sw_analysis_t *a)
{
    verdict_clear(j);
    j->verdict.has = true;
    j->verdict.onset = a->onset_ns;
    j->verdict.n = a->n_suspects;
    j->verdict.sus = a->n_suspects ? sw_arena_alloc(&j->verdict.arena,
                                                    a->n_suspects * sizeof(*j->verdict.sus))
                                   : NULL;
    for (size_t i = 0; i < a->n_suspects; i++)
        suspect_copy(&j->verdict.arena, &a->suspects[i], &j->verdict.sus[i]);
    sw_det_verdict_mark(j, true);
}

/* A verdict suspect is lost when its rank's candidate is no longer the run
 * the episode named (that run left the window, went stale or was spent), or
 * is that run with another spike because its base left the window (the
 * rise is measured from a later sample: the evidence ages out, and must
 * not rewrite the answer). A rise whose crossing sample moves while its
 * base is in the window keeps its run, and so its suspect. Only
 * a candidate change of a verdict rank can change the answer, so it is
 * re-read only then. @returns the lost rank, or -1. */
static int64_t verdict_lost(job_t *j)
{
    if (!j->verdict.touched) return -1;
    for (size_t i = 0; i < j->verdict.n; i++) {
        uint32_t ri;
        const sw_suspect_t *v = &j->verdict.sus[i];
        if (!sw_imap_get(&j->ranks.map, v->rank, &ri)) return v->rank;
        const rank_t *r = &j->ranks.v[ri];
        if (r->cand == NIL || rk_ep_no(j, r) != j->ep.no) return v->rank;
        const rank_cand_t *c = rc_of(j, r);
        if ((c->base != rk_ep_base(j, r) && c->base != INT64_MIN) ||
            (c->aged && c->spike_ts != v->first_spike_timestamp_ns))
            return v->rank;
    }
    j->verdict.touched = false;
    return -1;
}

/* ---- warnings --------------------------------------------------------- */

static void warn(sw_detector_t *det, job_t *j, unsigned kind, const char *what, int64_t v,
                 const char *unit, const char *advice)
{
    j->seen.warned |= (uint8_t)kind;
    det->st.warnings++;
    sw_buf_t *b = &det->warning;
    b->len = 0;
    sw_buf_puts(b, "job ");
    if (j->id.has) {
        sw_buf_putc(b, '"');
        sw_buf_put(b, j->id.str, j->id.len);
        sw_buf_putc(b, '"');
    } else {
        sw_buf_puts(b, "null");
    }
    sw_buf_puts(b, ": ");
    sw_buf_puts(b, what);
    sw_buf_put_i64(b, v);
    sw_buf_puts(b, unit);
    sw_buf_puts(b, advice);
    sw_buf_cstr(b);
}

void sw_det_warn_check(sw_detector_t *det, job_t *j, const rank_t *r, int64_t ts)
{
    int64_t stale_ms = det->params.stale_ms;
    if (stale_ms <= 0 || (j->seen.warned & 7u) == 7u) return;
    int64_t riv = rk_interval(j, r);
    if (!(j->seen.warned & SW_DET_WARN_STALE_INTERVAL) && riv > 0 && riv <= INT64_MAX / 5 &&
        stale_ms < 5 * riv) {
        warn(det, j, SW_DET_WARN_STALE_INTERVAL, "stale.ms is below 5 sampling intervals of ", riv,
             " ms: windows empty between samples and nothing can page; raise stale.ms (0 = "
             "never stale)",
             "");
        return;
    }
    int64_t skew = (int64_t)((uint64_t)j->seen.first_max_ts - (uint64_t)j->seen.first_min_ts);
    if (!(j->seen.warned & SW_DET_WARN_STALE_SKEW) && skew > det->stale_ns && skew > 0) {
        warn(det, j, SW_DET_WARN_STALE_SKEW, "stale.ms is below the clock skew of its ranks (",
             skew / 1000000,
             " ms between first samples): ranks go stale for their clock alone; raise stale.ms",
             "");
        return;
    }
    int64_t delay = (int64_t)((uint64_t)j->seen.newest_ts - (uint64_t)ts);
    if (!(j->seen.warned & SW_DET_WARN_STALE_DELAY) && delay > det->stale_ns && delay > 0)
        warn(det, j, SW_DET_WARN_STALE_DELAY, "stale.ms is below the delivery delay of rank ",
             r->rank,
             " (a sample arrived more than stale.ms behind the job's newest): its window "
             "empties before its spikes count; raise stale.ms",
             "");
}

/* ---- the lifecycle (SPEC 6 step 5; docs/semantics.md) ------------------- */

/* Whether @p rank is in the tie @p tie (sorted by rank). */
static bool tie_has(const sig_ent_t *tie, size_t n, int64_t rank)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tie[mid].rank < rank) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && tie[lo].rank == rank;
}

/* Whether the current tie (j->sig.v) has a rank the published one lacks. */
static bool tie_grows(const job_t *j)
{
    size_t a = 0;
    for (size_t b = 0; b < j->sig.n; b++) {
        while (a < j->pub.ntie && j->pub.tie[a].rank < j->sig.v[b].rank) a++;
        if (a == j->pub.ntie || j->pub.tie[a].rank != j->sig.v[b].rank) return true;
    }
    return false;
}

/* The current tie becomes its union with the published one (both sorted by
 * rank); the published first spike stays the earliest one published. */
static void tie_union(job_t *j)
{
    size_t n = j->sig.n + j->pub.ntie;
    sig_ent_t *u = sw_reallocarray(NULL, n ? n : 1, sizeof(*u));
    size_t a = 0, b = 0, k = 0;
    while (a < j->pub.ntie || b < j->sig.n) {
        if (b == j->sig.n || (a < j->pub.ntie && j->pub.tie[a].rank < j->sig.v[b].rank))
            u[k++] = j->pub.tie[a++];
        else {
            if (a < j->pub.ntie && j->pub.tie[a].rank == j->sig.v[b].rank) a++;
            u[k++] = j->sig.v[b++];
        }
    }
    free(j->sig.v);
    j->sig.v = u;
    j->sig.n = k;
    j->sig.cap = n ? n : 1;
    if (j->pub.rel0 < j->sig.rel0) j->sig.rel0 = j->pub.rel0;
}

static void member_add(sw_detector_t *det, job_t *j, uint32_t ri)
{
    rank_t *r = &j->ranks.v[ri];
    if (rk_ep_no(j, r) != j->ep.no) sw_det_front_learn(j, r);
    rank_cold_t *c = rk_cold(j, r);
    if (c->ep_no != j->ep.no) {
        SW_GROW(j->ep.mem, j->ep.nmem, j->ep.capmem, 16);
        j->ep.mem[j->ep.nmem++] = ri;
        c->ep_no = j->ep.no;
    }
    const rank_cand_t *rc = rk_cand(j, ri);
    c->ep_base = rc->base;
    c->ep_rel = rc->rel;
    if (j->ep.nmem == 1 || rc->rel < j->ep.first_rel) j->ep.first_rel = rc->rel;
    if (j->ep.nmem == 1 || rc->rel > j->ep.last_rel) j->ep.last_rel = rc->rel;
    /* A window that spans less time than the storm's spread loses the
     * storm's first spikes before its last ranks are hit. */
    int64_t spread = j->ep.last_rel - j->ep.first_rel;
    int64_t riv = rk_interval(j, r);
    int64_t iv = riv > 0 && riv < INT64_MAX / 1000000 / 4 ? riv * 1000000 : 0;
    if (!(j->seen.warned & SW_DET_WARN_WINDOW_SPREAD) && iv > 0 &&
        det->params.window_samples < INT64_MAX / iv && spread > det->params.window_samples * iv)
        warn(det, j, SW_DET_WARN_WINDOW_SPREAD,
             "window.samples spans less time than the spread of a storm (", spread / 1000000,
             " ms from its first rank to its last): the storm's first spikes leave the windows "
             "before it ends; raise window.samples",
             "");
}

/* The run of rank r based at base_ts starts clearly after every run of
 * the open episode: more than 2 s, or 3 sampling intervals when they are
 * longer, after its latest member's spike. Such a run is a new storm. */
static bool clearly_after(const job_t *j, const rank_t *r, int64_t base_ts)
{
    if (base_ts == INT64_MIN) return false;
    int64_t riv = rk_interval(j, r);
    int64_t iv = riv > 0 && riv < INT64_MAX / 4000000 ? riv * 1000000 : 1000000;
    int64_t gap = 3 * iv > 2000000000 ? 3 * iv : 2000000000;
    sw_i128 rel = (sw_i128)base_ts - r->first_ts;
    return rel > (sw_i128)j->ep.last_rel + gap;
}

/* The tied ranks of the answer just emitted, for the record. */
static void rec_tie(sw_detector_t *det, const sig_ent_t *tie, size_t n, sw_record_t *rec)
{
    int64_t *v = n ? sw_arena_alloc(&det->arena, n * sizeof(*v)) : NULL;
    for (size_t i = 0; i < n; i++) v[i] = tie[i].rank;
    rec->tied_ranks = v;
    rec->n_tied = n;
}

static void verdict_tie_store(job_t *j)
{
    j->verdict.ntie = j->pub.ntie;
    j->verdict.tie = j->pub.ntie
                         ? sw_arena_alloc(&j->verdict.arena, j->pub.ntie * sizeof(*j->verdict.tie))
                         : NULL;
    for (size_t i = 0; i < j->pub.ntie; i++) j->verdict.tie[i] = j->pub.tie[i].rank;
}

static const sw_record_t *trigger(sw_detector_t *det, job_t *j, int64_t ts, int64_t off)
{
    /* An episode that aged out while its storm still spread, then another
     * one for the same storm: the window spans less time than the storm. */
    uint32_t x0 = j->cands.root;
    while (x0 != NIL && rk_cand(j, x0)->t_left != NIL) x0 = rk_cand(j, x0)->t_left;
    if (j->ep.aged && x0 != NIL && !(j->seen.warned & SW_DET_WARN_WINDOW_SPREAD) &&
        !clearly_after(j, &j->ranks.v[x0],
                       rk_cand(j, x0)->base == INT64_MIN
                           ? INT64_MIN
                           : rk_cand(j, x0)->rel + j->ranks.v[x0].first_ts))
        warn(
            det, j, SW_DET_WARN_WINDOW_SPREAD,
            "window.samples spans less time than the spread of a storm (an episode aged out "
            "and the same storm opened another; ",
            llabs(rk_cand(j, x0)->rel / 1000000 - j->ep.aged_last_rel / 1000000),
            " ms between their spikes): the storm's first spikes leave the windows before it ends; "
            "raise window.samples",
            "");
    j->ep.no++;
    j->ep.revision = 0;
    j->ep.open = true;
    j->ep.nmem = 0;
    j->ep.n_updates = 0;
    j->ep.pend = false;
    j->ep.old_reach = j->ep.front_reach; /* the storm before's front, for its tail */
    j->ep.old_npr = j->ep.front_npr;
    j->ep.front_reach = 0;
    j->ep.front_npr = INT64_MAX;
    /* Every candidate now is part of the storm. */
    titer_t it;
    titer_begin(&it, det, j);
    for (uint32_t x = titer_next(&it); x != NIL; x = titer_next(&it)) member_add(det, j, x);
    sig_reset(j);
    sig_refresh(det, j);
    sig_publish(j);
    /* The episode's severity is the trigger's, whatever follows. */
    j->ep.trig_conf = -1;
    sw_record_t *rec = sw_det_emit(det, j, SW_ACTION_TRIGGER, true, ts, off);
    j->ep.trig_conf = rec->analysis.n_suspects ? (int)rec->analysis.suspects[0].confidence : -1;
    rec->episode_confidence = j->ep.trig_conf;
    verdict_store(j, &rec->analysis);
    verdict_tie_store(j);
    rec_tie(det, j->pub.tie, j->pub.ntie, rec);
    return rec;
}

static const sw_record_t *resolve(sw_detector_t *det, job_t *j, int64_t ts, int64_t off,
                                  sw_resolve_reason_t why, int64_t lost)
{
    j->ep.revision++;
    j->ep.open = false;
    j->ep.pend = false;
    j->ep.aged = why != SW_RESOLVE_NEXT_STORM;
    j->ep.aged_last_rel = j->ep.last_rel;
    sw_record_t *rec = sw_det_emit(det, j, SW_ACTION_RESOLVE, true, ts, off);
    rec->resolve_reason = why;
    rec->resolve_rank = lost;
    /* The record says the verdict it closes; the verdict's memory stays
     * valid until the next trigger, after this record is consumed. */
    rec->analysis.has_onset = true;
    rec->analysis.onset_ns = j->verdict.onset;
    rec->analysis.suspects = j->verdict.sus;
    rec->analysis.n_suspects = j->verdict.n;
    rec->tied_ranks = j->verdict.tie;
    rec->n_tied = j->verdict.ntie;
    sw_det_verdict_mark(j, false);
    j->verdict.touched = false;
    /* The storm's runs are spent: each member's run, and nothing after it
     * (a rank whose run of this storm left its window may hold the next
     * storm's run already). */
    for (size_t i = 0; i < j->ep.nmem; i++) {
        rank_t *r = &j->ranks.v[j->ep.mem[i]];
        int64_t ep_base = rk_ep_base(j, r);
        if (rk_ep_no(j, r) != j->ep.no || ep_base == INT64_MAX) continue;
        if (ep_base + 1 > rk_spent(j, r)) {
            rk_cold(j, r)->spent_ts = ep_base + 1;
            sw_det_cand_refresh(det, j, j->ep.mem[i]);
        }
    }
    j->ep.nmem = 0;
    sig_reset(j);
    return rec;
}

const sw_record_t *sw_det_lifecycle(sw_detector_t *det, job_t *j, uint32_t ri, int64_t ts,
                                    int64_t off)
{
    rank_t *r = &j->ranks.v[ri];
    if (!j->ep.open) {
        /* After an episode ended by ageing out, a run that does not start
         * clearly after its storm's latest spike is that storm's tail, not
         * a new storm: it is spent, and the tail goes on (the window spans
         * less time than the storm's spread). */
        for (int k = 0; k < 4 && j->ep.aged && r->cand != NIL && rc_of(j, r)->base != INT64_MIN &&
                        rc_of(j, r)->base != INT64_MAX && !clearly_after(j, r, rc_of(j, r)->base);
             k++) {
            if (rc_of(j, r)->rel > j->ep.last_rel) j->ep.last_rel = rc_of(j, r)->rel;
            if (!(j->seen.warned & SW_DET_WARN_WINDOW_SPREAD))
                warn(
                    det, j, SW_DET_WARN_WINDOW_SPREAD,
                    "window.samples spans less time than the spread of a storm (an episode aged "
                    "out while the storm still spread; ",
                    llabs(rc_of(j, r)->rel / 1000000 - j->ep.aged_last_rel / 1000000),
                    " ms from its latest spike a rank joined it): the storm's first spikes leave the windows "
                    "before it ends; raise window.samples",
                    "");
            rk_cold(j, r)->spent_ts = rc_of(j, r)->base + 1;
            sw_det_cand_refresh(det, j, ri);
        }
        /* After a next storm, the storm before still spreads: its tail. */
        if (!j->ep.aged && r->cand != NIL && sw_det_front_tail(j, r, j->ep.no, rc_of(j, r)->rel))
            sw_det_tail_spend(det, j, ri, j->ep.no);
        return j->cands.n >= 2 ? trigger(det, j, ts, off) : NULL;
    }
    /* The fed rank's run: part of this storm, or the start of the next? */
    bool next = false;
    bool member = r->cand != NIL && rk_ep_no(j, r) == j->ep.no;
    if (member && rc_of(j, r)->base == INT64_MIN)
        rk_cold(j, r)->ep_base = INT64_MIN; /* its run lost its start to the window: the same run */
    if (r->cand != NIL) {
        const rank_cand_t *c = rc_of(j, r);
        if (member && c->base == rk_ep_base(j, r)) {
            if (c->rel > j->ep.last_rel) j->ep.last_rel = c->rel;
            sw_win_cand_t t;
            next = c->base < INT64_MAX && /* == its ep_base */
                   sw_win_tail_spike(&r->win, det->params.spike_min_bytes,
                                     det->params.spike_fraction, c->base + 1, &t) &&
                   clearly_after(j, r, t.base_ts);
            next = next || sw_det_second_rise(det, j, r);
        } else if (clearly_after(j, r, c->base)) {
            next = !sw_det_open_spread(j, r);
            if (!next) member_add(det, j, ri);
        } else if (!member && sw_det_front_tail(j, r, j->ep.no - 1, c->rel)) {
            sw_det_tail_spend(det, j, ri, j->ep.no - 1);
        } else if (!member && sw_det_front_foreign(j, r)) {
            next = true;
        } else {
            member_add(det, j, ri);
        }
    }
    if (next) return resolve(det, j, ts, off, SW_RESOLVE_NEXT_STORM, -1);
    bool onset = j->cands.n >= 2;
    int64_t lost = onset ? verdict_lost(j) : -1;
    if (!onset || lost >= 0)
        return resolve(det, j, ts, off, onset ? SW_RESOLVE_SUSPECT_LOST : SW_RESOLVE_ONSET_GONE,
                       lost);
    /* An update when the answer changed (docs/semantics.md, "Update"): at
     * once for a first spike earlier than the published one by more than a
     * tie from a rank outside the published tie (a first rank that arrived
     * late: the tie starts again from it); else when ranks join the tie,
     * once that has stood for half a sampling interval of the job's time,
     * so that ranks arriving in one sample make one update, not one each.
     * A published tie only grows (a rank's crossing sample moves later
     * while its storm still rises, and evidence that ages out must not
     * rewrite the answer). At most 4 updates an episode, the last kept
     * for a new first rank (one outside the tie, earlier than its first). */
    if (j->ep.n_updates >= SW_DET_MAX_UPDATES) {
        j->ep.pend = false;
        return NULL;
    }
    sig_refresh(det, j);
    bool new_first = j->sig.rel0 < j->pub.rel0 && !tie_has(j->pub.tie, j->pub.ntie, j->sig.first);
    bool now = new_first && j->sig.rel0 < j->pub.rel0 - j->sig.tie_ns;
    if (!new_first && (j->ep.n_updates >= SW_DET_MAX_UPDATES - 1 || !tie_grows(j))) {
        j->ep.pend = false;
        return NULL;
    }
    if (!now) {
        if (!j->ep.pend) {
            j->ep.pend = true;
            j->ep.pend_ts = j->seen.newest_ts;
        }
        if ((uint64_t)j->seen.newest_ts - (uint64_t)j->ep.pend_ts < (uint64_t)(j->sig.tie_ns / 2))
            return NULL;
        tie_union(j);
    }
    j->ep.pend = false;
    j->ep.revision++;
    j->ep.n_updates++;
    sig_publish(j);
    j->sig.valid = false; /* j->sig.v may hold the union: read the answer again */
    sw_record_t *rec = sw_det_emit(det, j, SW_ACTION_UPDATE, true, ts, off);
    verdict_store(j, &rec->analysis);
    verdict_tie_store(j);
    rec_tie(det, j->pub.tie, j->pub.ntie, rec);
    return rec;
}
