/*
 * The stream engine (sw_detect) against a deliberately naive model of
 * SPEC 6 written here: windows are sorted arrays, and at every sample the
 * model recomputes Analysis A from scratch (candidates by the seed's scan,
 * median by sorting, world size by counting claims). On random streams
 * with late samples, duplicates, staleness, several jobs, null job ids,
 * missing ranks, restarts and phase events: after every event Analysis A
 * with nothing spent (what a summary says) must be identical (as JSON
 * text); every trigger and update must carry exactly the model's Analysis
 * A with the runs the engine has spent left out (each rank's first
 * qualifying spike in a run based at or after its spent mark: the
 * incremental search against a scan); every resolve must carry the onset
 * and suspects of the episode's last trigger or update; and the counters
 * must follow the lifecycle (episode + 1 and revision 0 at a trigger,
 * revision + 1 otherwise, at most 4 updates an episode, a resolve only of
 * an open episode). The lifecycle's decisions themselves are held against
 * generated ground truth (tests/unit/test_episodes.c).
 * Also: table-driven cases for dedup, stale ranks, late samples, window
 * eviction, limits and the lifecycle.
 */
#include "detect_streams.h"

/* ---- the naive model ---------------------------------------------------- */

typedef struct msample_s {
    int64_t ts, used, pid, interval_ms;
    char host[16];
    bool has_session;
    char session[16];
} msample_t;

typedef struct mrank_s {
    int64_t rank, first, newest;
    int64_t spent; /* the engine's spent mark (runs based before it do not count) */
    int64_t split; /* the engine's split of a spent run (sw_detect_split) */
    bool trunc;    /* the oldest run lost its base to an eviction */
    int64_t orig;  /* that base's time (the run's identity) */
    msample_t *w;
    size_t n;
} mrank_t;

typedef struct mjob_s {
    bool has_id;
    char id[16];
    bool has_sample;
    mrank_t ranks[64];
    size_t nranks;
    int64_t claims[100000];
    size_t nclaims;
    int64_t newest;
    bool has_newest;
    /* the lifecycle as the records say it (checked for consistency) */
    bool open;
    int64_t episode, revision, updates;
    sw_buf_t verdict; /* onset and suspects of the last trigger or update (JSON) */
    sw_phase_t *phase;
} mjob_t;

typedef struct model_s {
    sw_params_t p;
    mjob_t *jobs[16];
    size_t njobs;
    sw_arena_t arena;
} model_t;

static int ms_cmp(const msample_t *a, const msample_t *b)
{
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
    return strcmp(a->host, b->host);
}

static mjob_t *model_job(model_t *m, const sw_event_t *ev)
{
    for (size_t i = 0; i < m->njobs; i++) {
        mjob_t *j = m->jobs[i];
        if (j->has_id == ev->has_job_id &&
            (!j->has_id ||
             (strlen(j->id) == ev->job_id.len && !memcmp(j->id, ev->job_id.ptr, ev->job_id.len))))
            return j;
    }
    mjob_t *j = calloc(1, sizeof(*j));
    sw_buf_init(&j->verdict);
    j->has_id = ev->has_job_id;
    if (ev->has_job_id) memcpy(j->id, ev->job_id.ptr, ev->job_id.len);
    j->phase = sw_phase_new();
    m->jobs[m->njobs++] = j;
    return j;
}

static int i64cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int rank_cmp(const void *a, const void *b)
{
    return i64cmp(&((const mrank_t *)a)->rank, &((const mrank_t *)b)->rank);
}

static int cand_cmp(const void *a, const void *b)
{
    return sw_cand_cmp(a, b);
}

/* A suspect's excerpt: at most min(250, max(8, 4096 / suspects)) points;
 * pinned are the spike's rising run (all of it when it fills at most half
 * the budget, else its base and spike sample) and the last sample; the
 * other b = budget - pinned points are the unpinned ones of ordinal
 * floor(k * unpinned / b), k = 0 .. b-1. */
static void model_timeline(sw_arena_t *arena, const mrank_t *r, size_t at, size_t steps,
                           int64_t offset, size_t nsus, sw_suspect_t *s)
{
    size_t max = 4096 / nsus;
    if (max > 250) max = 250;
    if (max < 8) max = 8;
    size_t n = r->n, base = at - steps;
    bool *pin = sw_arena_calloc(arena, n, sizeof(*pin));
    bool *take = sw_arena_calloc(arena, n, sizeof(*take));
    if (steps + 1 <= max / 2) {
        for (size_t k = base; k <= at; k++) pin[k] = true;
    } else {
        pin[base] = pin[at] = true;
    }
    pin[n - 1] = true;
    size_t npin = 0;
    for (size_t k = 0; k < n; k++) npin += pin[k];
    if (n <= max) {
        for (size_t k = 0; k < n; k++) take[k] = true;
    } else {
        size_t b = max - npin, unp = n - npin, u = 0;
        for (size_t k = 0; k < n; k++) {
            if (pin[k]) {
                take[k] = true;
                continue;
            }
            for (size_t q = 0; q < b; q++)
                if ((size_t)((unsigned __int128)q * unp / b) == u) take[k] = true;
            u++;
        }
    }
    int64_t *t = sw_arena_alloc(arena, n * sizeof(*t));
    int64_t *used = sw_arena_alloc(arena, n * sizeof(*used));
    size_t got = 0;
    for (size_t k = 0; k < n; k++) {
        if (!take[k]) continue;
        if (k == base) s->timeline_spike_start = got;
        if (k == at) s->timeline_spike = got;
        t[got] = (int64_t)((uint64_t)r->w[k].ts - (uint64_t)offset);
        used[got++] = r->w[k].used;
    }
    s->n_timeline = got;
    s->timeline_aligned_ns = t;
    s->timeline_used = used;
    s->timeline_window = (int64_t)n;
}

/* Analysis A (SPEC 6 step 4) from scratch; with use_spent a rank's
 * candidate is its first qualifying spike in a rising run whose base is at
 * or after its spent mark (the runs before are spent).
 * *max_aligned (when not NULL) gets the latest aligned time among A's
 * candidates (0 when none). */
static void model_analysis(model_t *m, mjob_t *j, bool use_spent, sw_analysis_t *out,
                           uint64_t *max_aligned)
{
    sw_arena_reset(&m->arena);
    mrank_t *rs = sw_arena_alloc(&m->arena, j->nranks * sizeof(*rs));
    memcpy(rs, j->ranks, j->nranks * sizeof(*rs));
    qsort(rs, j->nranks, sizeof(*rs), rank_cmp);
    size_t n = j->nranks;
    int64_t *ranks = sw_arena_alloc(&m->arena, n * sizeof(int64_t));
    int64_t *counts = sw_arena_alloc(&m->arena, n * sizeof(int64_t));
    int64_t *offsets = sw_arena_alloc(&m->arena, n * sizeof(int64_t));
    /* world size: most common claim, ties to the first seen (distinct
     * values are few: count them in first-seen order) */
    int64_t declared = 1;
    size_t best = 0;
    int64_t vals[64];
    size_t cnt[64], nv = 0;
    for (size_t i = 0; i < j->nclaims; i++) {
        size_t k = 0;
        while (k < nv && vals[k] != j->claims[i]) k++;
        if (k == nv) {
            vals[nv] = j->claims[i];
            cnt[nv++] = 0;
        }
        cnt[k]++;
    }
    for (size_t k = 0; k < nv; k++)
        if (cnt[k] > best) {
            best = cnt[k];
            declared = vals[k];
        }
    int64_t ws = declared > rs[n - 1].rank + 1 ? declared : rs[n - 1].rank + 1;
    size_t anchor = 0; /* sorted: rank 0 first when present */
    /* 16-byte aligned (the arena aligns to 8) */
    sw_i128 *gaps = (sw_i128 *)(((uintptr_t)sw_arena_alloc(&m->arena, 4097 * sizeof(sw_i128)) +
                                 15) &
                                ~(uintptr_t)15);
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        ranks[i] = rs[i].rank;
        counts[i] = (int64_t)rs[i].n;
        offsets[i] = rs[i].first - rs[anchor].first;
        for (size_t k = 1; k < rs[i].n; k++)
            if (rs[i].w[k].ts - rs[i].w[k - 1].ts > 0)
                gaps[ng++] = rs[i].w[k].ts - rs[i].w[k - 1].ts;
    }
    if (!ng)
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < rs[i].n; k++)
                if (rs[i].w[k].interval_ms > 0)
                    gaps[ng++] = (sw_i128)rs[i].w[k].interval_ms * 1000000;
    /* sort i128 by hand */
    for (size_t a = 1; a < ng; a++)
        for (size_t b = a; b > 0 && gaps[b - 1] > gaps[b]; b--) {
            sw_i128 t = gaps[b];
            gaps[b] = gaps[b - 1];
            gaps[b - 1] = t;
        }
    sw_i128 median = ng ? sw_median_of(gaps[(ng - 1) / 2], gaps[ng / 2], ng) : 0;
    sw_cand_t *cands = sw_arena_alloc(&m->arena, n * sizeof(*cands));
    size_t *spike_at = sw_arena_alloc(&m->arena, n * sizeof(*spike_at));
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        const mrank_t *r = &rs[i];
        spike_at[i] = 0;
        if (r->n < 2) continue;
        int64_t mx = r->w[0].used;
        for (size_t k = 1; k < r->n; k++)
            if (r->w[k].used > mx) mx = r->w[k].used;
        int64_t t;
        if (!sw_spike_threshold(mx, m->p.spike_min_bytes, m->p.spike_fraction, &t)) continue;
        int64_t cum = 0, steps = 0;
        for (size_t k = 1; k < r->n; k++) {
            int64_t d = r->w[k].used - r->w[k - 1].used;
            if (d <= 0) {
                cum = steps = 0;
                continue;
            }
            cum += d;
            steps++;
            if (cum < t) continue;
            int64_t base = k - (size_t)steps == 0 && r->trunc ? r->orig
                                                              : r->w[k - (size_t)steps].ts;
            size_t b = k - (size_t)steps, q = k, l = 0;
            if (use_spent && base < r->spent) {
                /* a spent run: skip the rest of it, unless a split at or
                 * after the spent mark makes its part from there a run */
                size_t e = k;
                while (e + 1 < r->n && r->w[e + 1].used > r->w[e].used) e++;
                for (size_t x = b + 1; r->split != INT64_MIN && r->split >= r->spent && x < e; x++)
                    if (r->w[x].ts == r->split) l = x;
                for (q = l ? l + 1 : e + 1; q <= e && r->w[q].used - r->w[l].used < t; q++) {
                }
                if (!l || q > e) {
                    k = e;
                    cum = steps = 0;
                    continue;
                }
                cum = r->w[q].used - r->w[l].used;
                steps = (int64_t)(q - l);
                k = q;
            }
            sw_cand_t *c = &cands[nc++];
            c->rank = r->rank;
            c->spike_ts = r->w[k].ts;
            c->aligned = (uint64_t)r->w[k].ts - (uint64_t)offsets[i];
            c->peak = cum;
            c->samples = steps;
            c->has_session = r->w[k].has_session;
            c->session = sw_arena_str(&m->arena, sw_str(r->w[k].session));
            c->has_source = true;
            c->host = sw_arena_str(&m->arena, sw_str(r->w[k].host));
            c->pid = r->w[k].pid;
            c->has_device_id = c->has_local_rank = false;
            spike_at[i] = k;
            break;
        }
    }
    qsort(cands, nc, sizeof(*cands), cand_cmp);
    if (max_aligned) *max_aligned = nc ? cands[nc - 1].aligned : 0;
    for (size_t c = 0; max_aligned && c < nc; c++)
        if (cands[c].aligned > *max_aligned) *max_aligned = cands[c].aligned;
    sw_assemble_in_t in;
    memset(&in, 0, sizeof(in));
    in.has_job_id = j->has_id;
    in.job_id = sw_arena_str(&m->arena, sw_str(j->id));
    in.world_size = ws;
    in.ranks = ranks;
    in.counts = counts;
    in.offsets = offsets;
    in.n_ranks = n;
    in.anchor_rank = rs[anchor].rank;
    in.median_ns = median;
    in.skew_multiplier = m->p.skew_note_multiplier;
    in.cands = cands;
    in.n_cands = nc;
    in.n_cands_total = nc;
    in.phase = j->phase;
    sw_assemble(&in, &m->arena, out);
    /* Timeline excerpts, by the documented rule spelled out naively. */
    sw_suspect_t *sus = (sw_suspect_t *)out->suspects;
    for (size_t s = 0; s < out->n_suspects; s++) {
        size_t i = 0;
        while (rs[i].rank != sus[s].rank) i++;
        model_timeline(&m->arena, &rs[i], spike_at[i], (size_t)sus[s].spike_window_samples,
                       offsets[i], out->n_suspects, &sus[s]);
    }
}

/* One event through the model's windows. @returns true for a sample
 * that is no duplicate. */
static bool model_feed(model_t *m, const sw_event_t *ev)
{
    mjob_t *j = model_job(m, ev);
    sw_phase_add(j->phase, ev);
    if (ev->kind != SW_EV_SAMPLE) return false;
    mrank_t *r = NULL;
    for (size_t i = 0; i < j->nranks; i++)
        if (j->ranks[i].rank == ev->rank) r = &j->ranks[i];
    msample_t x;
    memset(&x, 0, sizeof(x));
    x.ts = ev->timestamp_ns;
    x.used = ev->device_used_bytes;
    x.pid = ev->pid;
    x.interval_ms = ev->sampling_interval_ms;
    memcpy(x.host, ev->host.ptr, ev->host.len);
    x.has_session = ev->has_session_id;
    if (ev->has_session_id) memcpy(x.session, ev->session_id.ptr, ev->session_id.len);
    if (r) {
        for (size_t k = 0; k < r->n; k++)
            if (ms_cmp(&r->w[k], &x) == 0) return false; /* duplicate */
    } else {
        r = &j->ranks[j->nranks++];
        memset(r, 0, sizeof(*r));
        r->rank = ev->rank;
        r->first = r->newest = x.ts;
        r->w = calloc((size_t)m->p.window_samples + 1, sizeof(msample_t));
    }
    if (x.ts < r->first) r->first = x.ts;
    if (x.ts > r->newest) r->newest = x.ts;
    if (ev->world_size > 1) j->claims[j->nclaims++] = ev->world_size;
    if (!j->has_newest || x.ts > j->newest) j->newest = x.ts;
    j->has_newest = j->has_sample = true;
    size_t pos = 0;
    while (pos < r->n && ms_cmp(&r->w[pos], &x) < 0) pos++;
    if (r->n == (size_t)m->p.window_samples) {
        if (pos == 0) goto stale; /* older than a full window: no change */
        /* The oldest sample leaves first; when it was the base of a run
         * that goes on, the run keeps that base's time as its identity. */
        if (!r->trunc && r->n >= 3 && r->w[0].used < r->w[1].used && r->w[1].used < r->w[2].used) {
            r->trunc = true;
            r->orig = r->w[0].ts;
        }
        memmove(r->w, r->w + 1, (r->n - 1) * sizeof(msample_t));
        r->n--;
        pos--;
    }
    memmove(r->w + pos + 1, r->w + pos, (r->n - pos) * sizeof(msample_t));
    r->w[pos] = x;
    r->n++;
    if (r->n < 2 || r->w[1].used <= r->w[0].used) r->trunc = false;
stale:
    if (m->p.stale_ms > 0)
        for (size_t i = 0; i < j->nranks; i++)
            if (j->ranks[i].newest < j->newest - m->p.stale_ms * 1000000) {
                j->ranks[i].n = 0;
                j->ranks[i].trunc = false;
            }
    return true;
}

static void model_clear(model_t *m)
{
    for (size_t i = 0; i < m->njobs; i++) {
        for (size_t k = 0; k < m->jobs[i]->nranks; k++) free(m->jobs[i]->ranks[k].w);
        sw_phase_destroy(m->jobs[i]->phase);
        sw_buf_clear(&m->jobs[i]->verdict);
        free(m->jobs[i]);
    }
    sw_arena_clear(&m->arena);
}

static void analysis_json(const sw_analysis_t *a, sw_buf_t *out)
{
    out->len = 0;
    sw_alert_json_analysis(out, a, 0);
    sw_buf_cstr(out);
}

static sw_detect_stats_t g_total; /* summed over runs: proves the paths ran */

/* The onset and suspects of @p an as JSON text. */
static void verdict_json(const sw_analysis_t *an, sw_buf_t *out)
{
    sw_analysis_t v;
    memset(&v, 0, sizeof(v));
    v.has_onset = an->has_onset;
    v.onset_ns = an->onset_ns;
    v.suspects = an->suspects;
    v.n_suspects = an->n_suspects;
    v.anchor_rank = -1;
    analysis_json(&v, out);
}

/* A record of the engine against the model (see the file comment). */
static void check_record(sw_detector_t *det, model_t *m, const sw_event_t *ev,
                         const sw_record_t *got, uint64_t seed, size_t i, sw_buf_t *a, sw_buf_t *b)
{
    mjob_t *mj = model_job(m, ev);
    char id[16];
    if (ev->has_job_id) memcpy(id, ev->job_id.ptr, ev->job_id.len), id[ev->job_id.len] = '\0';
    switch (got->action) {
    case SW_ACTION_TRIGGER:
        SW_ASSERT(!mj->open && got->episode == mj->episode + 1 && got->revision == 0,
                  "seed %llu event %zu: trigger of episode %lld rev %lld (open %d, episode %lld)",
                  (unsigned long long)seed, i, (long long)got->episode, (long long)got->revision,
                  mj->open, (long long)mj->episode);
        mj->open = true;
        mj->episode = got->episode;
        mj->revision = 0;
        mj->updates = 0;
        break;
    case SW_ACTION_UPDATE:
        SW_ASSERT(mj->open && got->episode == mj->episode && got->revision == mj->revision + 1 &&
                      ++mj->updates <= 4,
                  "seed %llu event %zu: update rev %lld of episode %lld (open %d, rev %lld, "
                  "updates %lld)",
                  (unsigned long long)seed, i, (long long)got->revision, (long long)got->episode,
                  mj->open, (long long)mj->revision, (long long)mj->updates);
        mj->revision++;
        break;
    case SW_ACTION_RESOLVE:
        SW_ASSERT(mj->open && got->episode == mj->episode && got->revision == mj->revision + 1,
                  "seed %llu event %zu: resolve rev %lld of episode %lld", (unsigned long long)seed,
                  i, (long long)got->revision, (long long)got->episode);
        mj->open = false;
        mj->revision++;
        verdict_json(&got->analysis, a);
        if (strcmp(a->data, mj->verdict.data) != 0)
            SW_FAIL("seed %llu event %zu: the resolve's verdict\n%s\nis not the last answer\n%s\n",
                    (unsigned long long)seed, i, a->data, mj->verdict.data);
        return;
    default: SW_FAIL("seed %llu event %zu: a summary while feeding", (unsigned long long)seed, i);
    }
    /* Trigger or update: Analysis A with the engine's spent runs left out. */
    for (size_t k = 0; k < mj->nranks; k++)
        SW_ASSERT_TRUE(sw_detect_spent(det, ev->has_job_id ? id : NULL, mj->ranks[k].rank,
                                       &mj->ranks[k].spent) &&
                       sw_detect_split(det, ev->has_job_id ? id : NULL, mj->ranks[k].rank,
                                       &mj->ranks[k].split));
    sw_analysis_t ma;
    model_analysis(m, mj, true, &ma, NULL);
    analysis_json(&got->analysis, a);
    analysis_json(&ma, b);
    if (strcmp(a->data, b->data) != 0)
        SW_FAIL("seed %llu event %zu (%s):\nengine: %s\nmodel:  %s\n", (unsigned long long)seed, i,
                sw_action_str(got->action), a->data, b->data);
    SW_ASSERT(got->n_tied >= 1 && got->analysis.n_suspects >= 1, "no tied rank or no suspect");
    verdict_json(&got->analysis, &mj->verdict);
}

/* An event with its own copy of its strings, so that it survives the
 * generation of the next one (gen_event reuses g's buffers). */
typedef struct evslot_s {
    sw_event_t ev;
    char job[8], host[8], session[8], scope[16];
} evslot_t;

static sw_str_t keep_str(sw_str_t v, char *buf, size_t size)
{
    SW_ASSERT_TRUE(v.len < size);
    memcpy(buf, v.ptr, v.len);
    buf[v.len] = '\0';
    return sw_str(buf);
}

static void slot_fill(gen_t *g, evslot_t *sl, int nranks, int njobs)
{
    gen_event(g, &sl->ev, nranks, njobs);
    sl->ev.job_id = keep_str(sl->ev.job_id, sl->job, sizeof(sl->job));
    sl->ev.host = keep_str(sl->ev.host, sl->host, sizeof(sl->host));
    sl->ev.session_id = keep_str(sl->ev.session_id, sl->session, sizeof(sl->session));
    if (sl->ev.has_phase)
        sl->ev.phase.scope_id = keep_str(sl->ev.phase.scope_id, sl->scope, sizeof(sl->scope));
}

/* @p pipelined: feed like replay does, announcing each event with
 * sw_detect_prefetch before the previous one is fed (and now and then a
 * decoy that is never fed); the records must not change. */
static void differential(uint64_t seed, int nranks, int njobs, int64_t window, int64_t stale_ms,
                         int64_t scale, size_t events, bool ordered, size_t *records_seen,
                         bool pipelined)
{
    sw_params_t p = sw_params_default();
    p.window_samples = window;
    p.stale_ms = stale_ms;
    p.spike_min_bytes = 500;
    p.spike_fraction = 0.1;
    p.skew_note_multiplier = 5;
    sw_detector_t *det = sw_detect_new(p);
    model_t m;
    memset(&m, 0, sizeof(m));
    m.p = p;
    gen_t g;
    memset(&g, 0, sizeof(g));
    g.s = seed;
    g.scale = scale;
    g.ordered = ordered;
    g.sticky = g_sticky;
    g.wide = g_wide;
    sw_buf_t a, b;
    sw_buf_init(&a);
    sw_buf_init(&b);
    char err[128];
    evslot_t slots[3];
    int cur = 0;
    slot_fill(&g, &slots[cur], nranks, njobs);
    uint64_t ds = seed * 7 + 1;
    for (size_t i = 0; i < events; i++) {
        if (pipelined && i + 1 < events) {
            slot_fill(&g, &slots[cur ^ 1], nranks, njobs);
            sw_detect_prefetch(det, &slots[cur ^ 1].ev);
            if (rng(&ds) % 20 == 0) { /* a decoy: announced, never fed */
                gen_t g2 = g;
                slot_fill(&g2, &slots[2], nranks, njobs);
                sw_detect_prefetch(det, &slots[2].ev);
            }
        } else if (!pipelined && i) {
            slot_fill(&g, &slots[cur], nranks, njobs);
        }
        sw_event_t ev = slots[cur].ev;
        const sw_record_t *got;
        SW_ASSERT_I64(sw_detect_feed(det, &slots[cur].ev, 0, &got, err, sizeof(err)), SW_OK);
        if (pipelined) cur ^= 1;
        model_feed(&m, &ev);
        if (got) {
            (*records_seen)++;
            check_record(det, &m, &ev, got, seed, i, &a, &b);
        }
        /* Analysis A of this event's job, after every event. */
        char id[16];
        if (ev.has_job_id) memcpy(id, ev.job_id.ptr, ev.job_id.len), id[ev.job_id.len] = '\0';
        sw_analysis_t ea;
        if (!sw_detect_analysis(det, ev.has_job_id ? id : NULL, &ea)) continue;
        mjob_t *mj = model_job(&m, &ev);
        SW_ASSERT(mj->has_sample, "the model has no sample of the event's job");
        analysis_json(&ea, &a);
        sw_analysis_t ma;
        model_analysis(&m, mj, false, &ma, NULL);
        analysis_json(&ma, &b);
        if (strcmp(a.data, b.data) != 0) {
            SW_FAIL("seed %llu event %zu analysis:\nengine: %s\nmodel:  %s\n",
                    (unsigned long long)seed, i, a.data, b.data);
        }
    }
    sw_detect_stats_t st;
    sw_detect_stats(det, &st);
    g_total.stale_windows += st.stale_windows;
    g_total.duplicates += st.duplicates;
    g_total.late += st.late;
    g_total.too_old += st.too_old;
    g_total.phase_dropped += st.phase_dropped;
    for (int k = 0; k < 4; k++) g_total.records[k] += st.records[k];
    sw_buf_clear(&a);
    sw_buf_clear(&b);
    model_clear(&m);
    sw_detect_destroy(det);
}

static void test_differential(void **state)
{
    (void)state;
    size_t records = 0;
    for (uint64_t seed = 1; seed <= 64; seed++) {
        int nranks = 2 + (int)(seed % 5);
        int njobs = 1 + (int)(seed % 3);
        int64_t window = 2 + (int64_t)(seed % 9);
        /* Toy nanosecond steps (staleness never fires), then millisecond
         * steps with stale.ms of 1-5 s (ranks go stale and come back). */
        differential(seed, nranks, njobs, window, 0, 1, 3000, false, &records, seed % 2 == 0);
        differential(seed + 1000, nranks, njobs, window, 1000 + (int64_t)(seed % 5) * 1000, 1000000,
                     3000, false, &records, seed % 2 == 1);
    }
    /* Long jobs whose events arrive in order, a third of them phase
     * boundaries: the engine folds each rank's phase index behind its full
     * window, the model keeps everything; records must not differ. */
    for (uint64_t seed = 1; seed <= 4; seed++)
        differential(seed + 2000, 2, 1, 4 + (int64_t)seed * 3, 0, 1000000, 15000, true, &records,
                     seed % 2 == 0);
    fprintf(stderr,
            "differential: %zu records compared (%llu trigger, %llu update, %llu resolve); "
            "%llu stale windows, %llu duplicates, %llu late (%llu too old), %llu phase boundaries "
            "folded\n",
            records, (unsigned long long)g_total.records[0], (unsigned long long)g_total.records[1],
            (unsigned long long)g_total.records[2], (unsigned long long)g_total.stale_windows,
            (unsigned long long)g_total.duplicates, (unsigned long long)g_total.late,
            (unsigned long long)g_total.too_old, (unsigned long long)g_total.phase_dropped);
    SW_ASSERT_TRUE(records > 300);
    SW_ASSERT_TRUE(g_total.records[SW_ACTION_UPDATE] > 12);
    SW_ASSERT_TRUE(g_total.records[SW_ACTION_RESOLVE] > 100);
    SW_ASSERT_TRUE(g_total.stale_windows > 100);
    SW_ASSERT_TRUE(g_total.duplicates > 100);
    SW_ASSERT_TRUE(g_total.too_old > 100);
    SW_ASSERT_TRUE(g_total.phase_dropped > 1000);
}

/* Pids and intervals int32 does not hold, or that are its markers: the
 * engine keeps them apart (SW_SRC_WIDE) and orders, groups and shows
 * samples by the values sent, as the model does; through restores too. */
static void test_wide_numbers(void **state)
{
    (void)state;
    size_t records = 0;
    g_wide = true;
    for (uint64_t seed = 1; seed <= 24; seed++) {
        int nranks = 2 + (int)(seed % 5);
        int64_t window = 2 + (int64_t)(seed % 9);
        differential(seed + 6000, nranks, 1 + (int)(seed % 2), window, 0, 1, 4000, false, &records,
                     seed % 2 == 0);
    }
    size_t compared = 0, rebuilt = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        sw_params_t p = sw_params_default();
        p.window_samples = 2 + (int64_t)(seed % 9);
        p.spike_min_bytes = 500;
        for (long snap_at = 50; snap_at < 1500; snap_at += 211)
            compared += restore_equal(seed + 6000, 3, 1, p, 1, 1, 1500, snap_at, &rebuilt);
    }
    g_wide = false;
    fprintf(stderr, "wide numbers: %zu records against the model, %zu after restores\n", records,
            compared);
    SW_ASSERT_TRUE(records > 30 && compared > 30);
}

/* Sessions that last: the engine keeps a rank's phase group pending (its
 * newest sample is the session end) until another session, a sample
 * without one, a boundary or a snapshot needs it made. Attributions
 * against the model, which makes every group at once, and snapshots
 * taken while groups are pending. */
static void test_phase_pending(void **state)
{
    (void)state;
    size_t records = 0;
    g_sticky = true;
    for (uint64_t seed = 1; seed <= 16; seed++) {
        int nranks = 2 + (int)(seed % 5);
        int njobs = 1 + (int)(seed % 3);
        int64_t window = 2 + (int64_t)(seed % 9);
        differential(seed + 3000, nranks, njobs, window, 0, 1, 3000, false, &records,
                     seed % 2 == 0);
        differential(seed + 4000, nranks, njobs, window, 1000 + (int64_t)(seed % 5) * 1000, 1000000,
                     3000, false, &records, seed % 2 == 1);
    }
    for (uint64_t seed = 1; seed <= 2; seed++)
        differential(seed + 5000, 2, 1, 4 + (int64_t)seed * 3, 0, 1000000, 15000, true, &records,
                     false);
    SW_ASSERT_TRUE(records > 100);
    size_t compared = 0, rebuilt = 0;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        int nranks = 2 + (int)(seed % 5);
        int njobs = 1 + (int)(seed % 3);
        sw_params_t p = sw_params_default();
        p.window_samples = 2 + (int64_t)(seed % 9);
        p.stale_ms = seed % 2 ? 2000 : 0;
        p.spike_min_bytes = 500;
        int64_t scale = seed % 2 ? 1000000 : 1;
        for (long snap_at = 5; snap_at < 1500; snap_at += 97 + (long)(seed * 13 % 61))
            compared += restore_equal(seed, nranks, njobs, p, scale, 1, 1500, snap_at, &rebuilt);
    }
    g_sticky = false;
    /* A snapshot writes pending groups as the groups they stand for: the
     * phase section of samples alone (ranks in order, one session each,
     * late samples, a session that changes) is what an index fed every
     * event saves. */
    sw_detector_t *det = sw_detect_new(sw_params_default());
    sw_phase_t *ph = sw_phase_new();
    sw_event_t ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = SW_EV_SAMPLE;
    ev.event_type = sw_str("sample");
    ev.has_job_id = true;
    ev.job_id = sw_str("pend");
    ev.host = sw_str("h");
    ev.has_device_used = true;
    ev.device_used_bytes = 1000;
    ev.has_session_id = true;
    const int64_t ts[] = {500, 700, 600, 900, 300, 1100, 1000};
    const char *sess[] = {"a", "a", "a", "a", "b", "b", "a"};
    const sw_record_t *rec;
    char err[128];
    for (int64_t rk = 0; rk < 3; rk++)
        for (size_t k = 0; k < sizeof(ts) / sizeof(ts[0]); k++) {
            if (rk > 0 && k >= 4) break; /* ranks 1 and 2 keep session "a" */
            ev.rank = rk;
            ev.timestamp_ns = ts[k] + rk;
            ev.session_id = sw_str(sess[k]);
            SW_ASSERT_I64(sw_detect_feed(det, &ev, 0, &rec, err, sizeof(err)), SW_OK);
            sw_phase_add(ph, &ev);
        }
    sw_buf_t snap, want;
    sw_buf_init(&snap);
    sw_buf_init(&want);
    sw_detect_snapshot(det, 0, &snap);
    sw_phase_save(ph, &want);
    SW_ASSERT(want.len > 16 && memmem(snap.data, snap.len, want.data, want.len) != NULL,
              "the snapshot lacks the phase groups its samples made");
    sw_buf_clear(&snap);
    sw_buf_clear(&want);
    sw_phase_destroy(ph);
    sw_detect_destroy(det);
    fprintf(stderr, "phase pending: %zu records against the model, %zu after restores\n", records,
            compared);
    SW_ASSERT_TRUE(compared > 100);
}

int main(void)
{
    /* SW_TEST_ONLY=CASE: that case only (cmocka's filter): CTest runs each
     * case as a test of its own, so that ctest -j spreads them. */
    const char *only = getenv("SW_TEST_ONLY");
    if (only) cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_differential),
        cmocka_unit_test(test_phase_pending),
        cmocka_unit_test(test_wide_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
