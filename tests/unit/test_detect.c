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
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_codec_alert.h"
#include "sw_detect.h"
#include "sw_phase.h"
#include "sw_assemble.h"
#include "sw_testlib.h"

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

/* ---- random streams ------------------------------------------------------ */

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef struct gen_s {
    uint64_t s;
    int64_t scale; /* multiplies time steps: 1 = toy ns, 1000000 = ms steps */
    int64_t now[4][8];
    int64_t used[4][8];
    char job[4][8], host[8][8], session[8][8], scope[16];
    int64_t seq;
    const char *path[2];
    bool ordered; /* nothing late, a third of the events phase boundaries */
    bool sticky;  /* a rank's sessions last (a few samples without one, and
                     now and then another): its phase group stays pending
                     in the engine for long stretches (PHASE_PEND) */
    bool alt[8];  /* sticky: the rank is in its second session */
    bool wide;    /* pids and intervals also outside int32 (SW_SRC_WIDE) */
} gen_t;

/* gen_t.sticky of the streams that follow (set by the tests that want it). */
static bool g_sticky;
/* Restores of two-source engines swap their sources (sw_detect_swap_sources:
 * repartition=auto's engine going on under on) and are fed so from then on. */
static bool g_swap;
static bool g_compat; /* snapshots in the previous release's layout and an extension */
/* gen_t.wide of the streams that follow. */
static bool g_wide;

/* A random event; strings live in g. */
static void gen_event(gen_t *g, sw_event_t *ev, int nranks, int njobs)
{
    memset(ev, 0, sizeof(*ev));
    int jb = (int)(rng(&g->s) % (uint64_t)njobs);
    int rk = (int)(rng(&g->s) % (uint64_t)nranks);
    ev->has_job_id = jb != 0;
    snprintf(g->job[jb], sizeof(g->job[jb]), "j%d", jb);
    ev->job_id = sw_str(g->job[jb]);
    ev->rank = rk;
    uint64_t wsr = rng(&g->s) % 10;
    ev->world_size = wsr < 6 ? nranks : wsr < 8 ? nranks + 2 : rk + 1;
    ev->pid = 100 + rk + (rng(&g->s) % 400 == 0 ? 1 : 0); /* a restart, now and then */
    snprintf(g->host[rk], sizeof(g->host[rk]), "h%d", rk + (rng(&g->s) % 25 == 0 ? 1 : 0));
    ev->host = sw_str(g->host[rk]);
    if (g->sticky) {
        ev->has_session_id = rng(&g->s) % 150 != 0;
        if (rng(&g->s) % 250 == 0) g->alt[rk] = !g->alt[rk];
        snprintf(g->session[rk], sizeof(g->session[rk]), "%c%d", g->alt[rk] ? 'u' : 's', rk);
    } else {
        ev->has_session_id = rng(&g->s) % 10 != 0;
        snprintf(g->session[rk], sizeof(g->session[rk]), "s%d", rk);
    }
    ev->session_id = sw_str(g->session[rk]);
    ev->sampling_interval_ms = rng(&g->s) % 7 == 0 ? 0 : 100;
    if (g->wide && rng(&g->s) % 5 == 0)
        ev->sampling_interval_ms = rng(&g->s) % 2 ? ((int64_t)1 << 33) : INT32_MIN;
    /* time: mostly forward, some late, some big jumps, some duplicates */
    uint64_t t = rng(&g->s) % 100;
    int64_t *now = &g->now[jb][rk];
    if (t < 80) *now += (50 + (int64_t)(rng(&g->s) % 100)) * g->scale;
    else if (t < 83) *now += (3000 + (int64_t)(rng(&g->s) % 3000)) * g->scale;
    ev->timestamp_ns = *now;
    if (!g->ordered && t >= 83 && t < 93 && *now > 1000 * g->scale)
        ev->timestamp_ns = *now - (int64_t)(rng(&g->s) % 800) * g->scale;
    if (g->wide) {
        /* pids int32 does not hold, or its markers; a late sample now and
         * then from another process of the rank (at timestamps the first
         * has too: toy steps) */
        static const int64_t pids[] = {INT64_MIN,        INT32_MIN, INT32_MIN + 1,
                                       (int64_t)1 << 40, INT64_MAX, -5};
        bool late = ev->timestamp_ns != *now && rng(&g->s) % 2;
        ev->pid = pids[(rk + (late ? 1 : 0)) % 6];
    }
    /* memory */
    int64_t *u = &g->used[jb][rk];
    uint64_t mv = rng(&g->s) % 10;
    if (mv < 4) *u -= (int64_t)(rng(&g->s) % 300);
    else if (mv < 8) *u += (int64_t)(rng(&g->s) % 200);
    else *u += (int64_t)(rng(&g->s) % 1500);
    if (*u < 1000 || *u > 6000) *u = 2000;
    ev->device_used_bytes = *u;
    ev->has_device_used = true;
    uint64_t kind = rng(&g->s) % 100;
    if (g->ordered) kind = kind < 65 ? 0 : 85 + kind % 10;
    if (kind < 85) {
        ev->event_type = sw_str("sample");
        ev->kind = SW_EV_SAMPLE;
    } else if (kind < 95) {
        bool enter = kind < 91;
        ev->event_type = sw_str(enter ? "phase_enter" : "phase_exit");
        ev->kind = enter ? SW_EV_PHASE_ENTER : SW_EV_PHASE_EXIT;
        ev->has_phase = true;
        ev->phase.enter = enter;
        ev->phase.name = sw_str("p");
        ev->phase.path_len = 1 + (int)(rng(&g->s) % 2);
        ev->phase.path[0] = sw_str("train");
        ev->phase.path[1] = sw_str(rng(&g->s) % 2 ? "fwd" : "bwd");
        snprintf(g->scope, sizeof(g->scope), "S%d", (int)(rng(&g->s) % 4));
        ev->phase.scope_id = sw_str(g->scope);
        ev->phase.thread_id = (int64_t)(rng(&g->s) % 2);
        ev->phase.thread_name = sw_str("T");
        ev->phase.sequence = g->seq++;
    } else {
        ev->event_type = sw_str("warning");
        ev->kind = SW_EV_OTHER;
    }
}

static void analysis_json(const sw_analysis_t *a, sw_buf_t *out)
{
    out->len = 0;
    sw_alert_json_analysis(out, a, 0);
    sw_buf_cstr(out);
}

/* SPEC 6's record: SPEC 8.5's blind_ranks (a rank of the random streams
 * that goes quiet is silent) is left out; test_crash checks it. */
static void record_json(const sw_record_t *r, sw_buf_t *out)
{
    sw_record_t six = *r;
    six.n_blind = 0;
    six.blind_ranks = NULL;
    out->len = 0;
    sw_alert_json_record(out, &six);
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

/* ---- state restore --------------------------------------------------------- */

typedef struct outlog_s {
    char **v;
    size_t n, cap;
} outlog_t;

static void out_push(outlog_t *o, const char *s)
{
    if (o->n == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 64;
        o->v = realloc(o->v, o->cap * sizeof(*o->v));
    }
    o->v[o->n++] = strdup(s);
}

static void out_clear(outlog_t *o)
{
    for (size_t i = 0; i < o->n; i++) free(o->v[i]);
    free(o->v);
    memset(o, 0, sizeof(*o));
}

typedef struct sumctx_s {
    outlog_t *log;
    sw_buf_t *buf;
} sumctx_t;

static void on_summary(void *opaque, const sw_record_t *rec)
{
    sumctx_t *c = opaque;
    record_json(rec, c->buf);
    out_push(c->log, c->buf->data);
}

/* Event indexes just after a trigger, an update or a resolve (restore
 * points mid-episode, and just after an episode ended and spent its runs). */
typedef struct marks_s {
    long at[64];
    size_t n;
} marks_t;

/* An event's source when a stream is fed from two: either, at random, but
 * the same for samples of one rank with one timestamp. (Which of two
 * duplicates a window keeps depends on which came first, and a rebuild
 * that reads the sources in another interleaving could keep the other.
 * A real duplicate is a sample sent twice, equal in both copies; the
 * generator's duplicates differ in device_used_bytes.) */
static int source_of(const sw_event_t *ev)
{
    uint64_t h = (uint64_t)ev->timestamp_ns * 0x9E3779B97F4A7C15ull ^
                 (uint64_t)ev->rank * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)ev->job_id.len;
    h ^= h >> 29;
    return (int)(h * 0xBF58476D1CE4E5B9ull >> 63);
}

/* Re-insert events [0, upto) of the stream into a restored detector: with
 * one source from offset y[0]; with two, source 1 first and then source 0
 * (each in its order, from its y), an interleaving the live engine never
 * saw. */
static void rebuild_stream(sw_detector_t *det, uint64_t seed, int nranks, int njobs, int64_t scale,
                           int sources, size_t upto, const int64_t y[2], size_t *rebuilt)
{
    for (int pass = sources - 1; pass >= 0; pass--) {
        gen_t g2;
        memset(&g2, 0, sizeof(g2));
        g2.s = seed;
        g2.scale = scale;
        g2.sticky = g_sticky;
        g2.wide = g_wide;
        int64_t off[2] = {0, 0};
        for (size_t k = 0; k < upto; k++) {
            sw_event_t ev2;
            gen_event(&g2, &ev2, nranks, njobs);
            int s = sources == 2 ? source_of(&ev2) : 0;
            int64_t o = off[s]++;
            if (s != pass || o < y[s]) continue;
            if (sw_detect_rebuild_src(det, &ev2, g_swap ? 1 - s : s, o)) (*rebuilt)++;
        }
    }
}

/* Records from event @p from on (and the final summaries) of a detector
 * fed the stream from one or two @p sources (offsets counted per source);
 * with @p snap_at >= 0 the detector is snapshotted there, destroyed,
 * restored, rebuilt from its minimum offsets, and goes on. */
static void run_stream(uint64_t seed, int nranks, int njobs, sw_params_t p, int64_t scale,
                       int sources, size_t events, size_t from, long snap_at, outlog_t *out,
                       size_t *rebuilt, marks_t *marks)
{
    sw_detector_t *det = sw_detect_new(p);
    gen_t g;
    memset(&g, 0, sizeof(g));
    g.s = seed;
    g.scale = scale;
    g.sticky = g_sticky;
    g.wide = g_wide;
    sw_buf_t buf;
    sw_buf_init(&buf);
    char err[256];
    int64_t off[2] = {0, 0}; /* next offset of each source */
    bool swapped = false;    /* fed with the sources swapped (g_swap, restored) */
    for (size_t i = 0; i < events; i++) {
        if ((long)i == snap_at) {
            int64_t y[2];
            for (int s = 0; s < 2; s++)
                if (!sw_detect_min_offset_src(det, s, &y[s]) || y[s] > off[s]) y[s] = off[s];
            sw_buf_t snap, ext, full;
            sw_buf_init(&snap);
            sw_buf_init(&ext);
            sw_buf_init(&full);
            const int64_t at[2] = {off[0], sources == 1 ? 0 : off[1]};
            sw_detect_snapshot_src(det, at, &full);
            if (g_compat) sw_detect_snapshot_compat(det, at, &snap, &ext);
            else if (sources == 1) sw_detect_snapshot(det, off[0], &snap);
            else sw_detect_snapshot_src(det, off, &snap);
            sw_detect_destroy(det);
            int64_t x[2] = {-1, -1};
            if (sources == 1) {
                det = sw_detect_restore(p, snap.data, snap.len, 0, &x[0], err, sizeof(err));
                x[1] = 0;
            } else {
                det = sw_detect_restore_src(p, snap.data, snap.len, 0, x, err, sizeof(err));
            }
            if (!det) {
                SW_FAIL("restore failed: %s\n", err);
            }
            SW_ASSERT_I64(x[0], off[0]);
            SW_ASSERT_I64(x[1], off[1]);
            if (g_compat) {
                /* The body with its extension is the engine SWS6 gave: it
                 * saves SWS6's bytes (before its rebuild and after). */
                SW_ASSERT(sw_detect_restore_ext(det, snap.data, snap.len, ext.data, ext.len, err,
                                                sizeof(err)),
                          "seed %llu snapshot at %ld: extension refused: %s",
                          (unsigned long long)seed, snap_at, err);
                sw_buf_t re;
                sw_buf_init(&re);
                sw_detect_snapshot_src(det, at, &re);
                SW_ASSERT(re.len == full.len && memcmp(re.data, full.data, re.len) == 0,
                          "seed %llu snapshot at %ld: body and extension restore another engine",
                          (unsigned long long)seed, snap_at);
                sw_buf_clear(&re);
                sw_buf_clear(&snap);
                sw_buf_put(&snap, full.data, full.len); /* what "again" below compares */
            }
            swapped = g_swap && sources == 2;
            if (swapped) {
                sw_detect_swap_sources(det, x);
                SW_ASSERT_I64(x[0], off[1]);
                SW_ASSERT_I64(x[1], off[0]);
            }
            rebuild_stream(det, seed, nranks, njobs, scale, sources, i, y, rebuilt);
            sw_detect_rebuild_done(det);
            /* The restored engine saves what it was restored from (pending
             * phase groups included: restored, they are made). */
            sw_buf_t again;
            sw_buf_init(&again);
            if (sources == 1) sw_detect_snapshot(det, off[0], &again);
            else sw_detect_snapshot_src(det, off, &again);
            SW_ASSERT(swapped ||
                          (again.len == snap.len && memcmp(again.data, snap.data, snap.len) == 0),
                      "seed %llu snapshot at %ld: the restored engine saves other bytes",
                      (unsigned long long)seed, snap_at);
            sw_buf_clear(&again);
            sw_buf_clear(&snap);
            sw_buf_clear(&ext);
            sw_buf_clear(&full);
        }
        sw_event_t ev;
        gen_event(&g, &ev, nranks, njobs);
        const sw_record_t *rec;
        int s = sources == 2 ? source_of(&ev) : 0;
        SW_ASSERT_I64(
            sw_detect_feed_src(det, &ev, 0, swapped ? 1 - s : s, off[s]++, &rec, err, sizeof(err)),
            SW_OK);
        if (rec && i >= from) {
            record_json(rec, &buf);
            out_push(out, buf.data);
        }
        if (rec && marks && marks->n < 64) marks->at[marks->n++] = (long)i + 1;
    }
    sumctx_t sc = {out, &buf};
    sw_detect_finish(det, on_summary, &sc);
    sw_buf_clear(&buf);
    sw_detect_destroy(det);
}

/* Seed @p seed's stream (run_stream's parameters) uninterrupted and
 * restored from a snapshot after event @p snap_at: the same records, one
 * by one (a failure names the seed, the point and both records).
 * @returns how many were compared. */
static size_t restore_equal(uint64_t seed, int nranks, int njobs, sw_params_t p, int64_t scale,
                            int sources, size_t events, long snap_at, size_t *rebuilt)
{
    outlog_t a = {0}, b = {0};
    run_stream(seed, nranks, njobs, p, scale, sources, events, (size_t)snap_at, -1, &a, rebuilt,
               NULL);
    run_stream(seed, nranks, njobs, p, scale, sources, events, (size_t)snap_at, snap_at, &b,
               rebuilt, NULL);
    if (a.n != b.n) {
        SW_FAIL("seed %llu snapshot at %ld: %zu records uninterrupted, %zu restored\n",
                (unsigned long long)seed, snap_at, a.n, b.n);
    }
    for (size_t k = 0; k < a.n; k++) {
        if (strcmp(a.v[k], b.v[k]) != 0) {
            SW_FAIL(
                "seed %llu snapshot at %ld, record %zu:\nuninterrupted: %s\nrestored:      %s\n",
                (unsigned long long)seed, snap_at, k, a.v[k], b.v[k]);
        }
    }
    size_t n = a.n;
    out_clear(&a);
    out_clear(&b);
    return n;
}

/* Restored engines (snapshot, restore, rebuild) against uninterrupted ones,
 * fed from one source or from two. */
static void restore_cases(int sources)
{
    size_t compared = 0, rebuilt = 0, points = 0;
    for (uint64_t seed = 1; seed <= 24; seed++) {
        int nranks = 2 + (int)(seed % 5);
        int njobs = 1 + (int)(seed % 3);
        sw_params_t p = sw_params_default();
        p.window_samples = 2 + (int64_t)(seed % 9);
        p.stale_ms = seed % 2 ? 2000 : 0;
        p.spike_min_bytes = 500;
        int64_t scale = seed % 2 ? 1000000 : 1;
        size_t events = 2500;
        for (long snap_at = 137; snap_at < (long)events; snap_at += 311 + (long)(seed * 17 % 101)) {
            compared += restore_equal(seed, nranks, njobs, p, scale, sources, events, snap_at,
                                      &rebuilt);
            points++;
        }
    }
    /* Snapshot points right after a trigger (mid-episode: the verdict must
     * survive), an update, and right after a resolve (the spent runs must
     * survive). */
    size_t marked = 0;
    for (uint64_t seed = 1; seed <= 32; seed++) {
        int nranks = 2 + (int)(seed % 5);
        int njobs = 1 + (int)(seed % 3);
        sw_params_t p = sw_params_default();
        p.window_samples = 2 + (int64_t)(seed % 9);
        p.stale_ms = seed % 2 ? 2000 : 0;
        p.spike_min_bytes = 500;
        int64_t scale = seed % 2 ? 1000000 : 1;
        size_t events = 1500;
        outlog_t a = {0};
        marks_t mk = {{0}, 0};
        run_stream(seed, nranks, njobs, p, scale, sources, events, 0, -1, &a, &rebuilt, &mk);
        out_clear(&a);
        for (size_t m = 0; m < mk.n; m++) {
            long snap_at = mk.at[m];
            if (snap_at >= (long)events) continue;
            compared += restore_equal(seed, nranks, njobs, p, scale, sources, events, snap_at,
                                      &rebuilt);
            marked++;
        }
    }
    fprintf(stderr,
            "restore, %d source(s): %zu snapshot points (%zu just after a trigger or a "
            "resolve), %zu records compared, %zu samples re-inserted\n",
            sources, points + marked, marked, compared, rebuilt);
    SW_ASSERT_TRUE(points > 100 && marked > 50 && compared > 300 && rebuilt > 1000);
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

static void test_restore(void **state)
{
    (void)state;
    restore_cases(1);
}

/* Fed from an input partition and a repartition partition at once: the
 * snapshot keeps a position per source, and a rebuild that reads the two
 * in another interleaving restores the same engine. */
static void test_restore_two_sources(void **state)
{
    (void)state;
    restore_cases(2);
}

/* The same restores with the engine's two sources swapped at the restore
 * (sw_detect_swap_sources) and fed so from then on: the same records. */
static void test_restore_swapped_sources(void **state)
{
    (void)state;
    g_swap = true;
    restore_cases(2);
    g_swap = false;
}

/* Snapshots in the layout the previous release reads (v0.3.0: SWS4, SW8a)
 * with what it lacks in an extension (issue 35, a rollback): restored
 * with the extension, the engine saves what SWS6 saves and gives the
 * records of the uninterrupted one, from one source, two, and swapped. */
static void test_restore_compat(void **state)
{
    (void)state;
    g_compat = true;
    restore_cases(1);
    restore_cases(2);
    g_swap = true;
    restore_cases(2);
    g_swap = false;
    g_compat = false;
}

/* The body alone is SWS4, which restores (an older snapshot); an extension
 * that is not of its body, or cut short, is refused by name. */
static void test_restore_compat_body(void **state)
{
    (void)state;
    sw_params_t p = sw_params_default();
    p.spike_min_bytes = 500;
    sw_detector_t *det = sw_detect_new(p);
    gen_t g;
    memset(&g, 0, sizeof(g));
    g.s = 5;
    g.scale = 1;
    char err[256];
    for (int64_t i = 0; i < 900; i++) {
        sw_event_t ev;
        gen_event(&g, &ev, 4, 2);
        const sw_record_t *rec;
        SW_ASSERT_I64(sw_detect_feed_src(det, &ev, 0, 0, i, &rec, err, sizeof(err)), SW_OK);
    }
    sw_buf_t body, ext, full;
    sw_buf_init(&body);
    sw_buf_init(&ext);
    sw_buf_init(&full);
    sw_detect_snapshot_compat(det, (int64_t[2]){900, 0}, &body, &ext);
    sw_detect_snapshot(det, 900, &full);
    SW_ASSERT(body.len > 4 && !memcmp(body.data, "SWS4", 4), "body in SWS4's layout");
    SW_ASSERT(ext.len > 4 && !memcmp(ext.data, "SWX6", 4), "extension SWX6");
    int64_t x;
    sw_detector_t *r = sw_detect_restore(p, body.data, body.len, 0, &x, err, sizeof(err));
    SW_ASSERT(r != NULL, "the body alone restores: %s", err);
    SW_ASSERT_I64(x, 900);
    /* cut short */
    SW_ASSERT(
        !sw_detect_restore_ext(r, body.data, body.len, ext.data, ext.len - 1, err, sizeof(err)),
        "a cut extension is refused");
    SW_ASSERT(strstr(err, "SWX6") != NULL, "named: %s", err);
    sw_detect_destroy(r);
    /* beside an SWS6 body */
    r = sw_detect_restore(p, full.data, full.len, 0, &x, err, sizeof(err));
    SW_ASSERT(r != NULL, "SWS6 restores: %s", err);
    SW_ASSERT(!sw_detect_restore_ext(r, full.data, full.len, ext.data, ext.len, err, sizeof(err)),
              "an extension beside SWS6 is refused");
    sw_detect_destroy(r);
    sw_detect_destroy(det);
    sw_buf_clear(&body);
    sw_buf_clear(&ext);
    sw_buf_clear(&full);
}

static void test_restore_refuses_other_params(void **state)
{
    (void)state;
    sw_params_t p = sw_params_default();
    sw_detector_t *det = sw_detect_new(p);
    sw_buf_t snap;
    sw_buf_init(&snap);
    sw_detect_snapshot(det, 0, &snap);
    p.window_samples = 7;
    char err[256] = "";
    int64_t x;
    SW_ASSERT_NULL(sw_detect_restore(p, snap.data, snap.len, 0, &x, err, sizeof(err)));
    SW_ASSERT_NOT_NULL(strstr(err, "window.samples"));
    SW_ASSERT_NULL(sw_detect_restore(sw_params_default(), "junk", 4, 0, &x, err, sizeof(err)));
    SW_ASSERT_NOT_NULL(strstr(err, "magic"));
    /* Every truncation of a real snapshot is refused, none crashes. */
    sw_detect_destroy(det);
    det = sw_detect_new(sw_params_default());
    gen_t g;
    memset(&g, 0, sizeof(g));
    g.s = 5;
    g.scale = 1;
    for (int i = 0; i < 500; i++) {
        sw_event_t ev;
        const sw_record_t *rec;
        gen_event(&g, &ev, 4, 2);
        sw_detect_feed_at(det, &ev, 0, i, &rec, err, sizeof(err));
    }
    snap.len = 0;
    sw_detect_snapshot(det, 500, &snap);
    for (size_t cut = 0; cut < snap.len; cut++) {
        sw_detector_t *r = sw_detect_restore(sw_params_default(), snap.data, cut, 0, &x, err,
                                             sizeof(err));
        if (r) fprintf(stderr, "a snapshot cut to %zu of %zu bytes was accepted\n", cut, snap.len);
        SW_ASSERT_NULL(r);
    }
    sw_detector_t *r = sw_detect_restore(sw_params_default(), snap.data, snap.len, 0, &x, err,
                                         sizeof(err));
    SW_ASSERT_NOT_NULL(r);
    sw_detect_destroy(r);
    sw_detect_destroy(det);
    sw_buf_clear(&snap);
}

/* A flood of made-up job ids interleaved with real jobs, with max.jobs far
 * below the flood: fakes of 1, 2 and 8 ranks (one sample per rank, the
 * cheapest way to look like a job) are evicted to make room, never a job
 * that reports like a real one, and the real jobs' records are exactly
 * those of a run without the flood (issue 28: two-rank fakes used to be
 * kept and starve real jobs). Then the memory-budget path: under pressure
 * a new job evicts the least recently active job with the least evidence
 * (no rank with two samples; then no rising run and no open episode), and
 * is refused only when every candidate has a rising run. */
static void collect_real(void *opaque, const sw_record_t *rec)
{
    sumctx_t *c = opaque;
    if (rec->analysis.job_id.len && rec->analysis.job_id.ptr[0] == 'f') return;
    record_json(rec, c->buf);
    out_push(c->log, c->buf->data);
}

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
        sw_buf_t buf;
        sw_buf_init(&buf);
        char err[256], fid[32];
        for (int flood = 0; flood < 2; flood++) {
            sw_params_t q = p;
            q.max_jobs = flood ? 64 : 0;
            sw_detector_t *det = sw_detect_new(q);
            gen_t g;
            memset(&g, 0, sizeof(g));
            g.s = seed;
            g.scale = 1000000;
            g.ordered = true;
            outlog_t *out = flood ? &got : &want;
            uint64_t fn = 0;
            for (size_t i = 0; i < 3000; i++) {
                sw_event_t ev;
                gen_event(&g, &ev, 5, 3);
                const sw_record_t *rec;
                SW_ASSERT_I64(sw_detect_feed_at(det, &ev, 0, (int64_t)i, &rec, err, sizeof(err)),
                              SW_OK);
                if (rec && !(rec->analysis.job_id.len && rec->analysis.job_id.ptr[0] == 'f')) {
                    record_json(rec, &buf);
                    out_push(out, buf.data);
                }
                for (int k = 0; flood && k < 4; k++) {
                    sw_event_t fe = ev;
                    snprintf(fid, sizeof(fid), "f%llu", (unsigned long long)fn++);
                    fe.kind = SW_EV_SAMPLE;
                    fe.event_type = sw_str("sample");
                    fe.has_phase = false;
                    fe.has_job_id = true;
                    fe.job_id = sw_str(fid);
                    fe.world_size = franks;
                    for (int r = 0; r < franks; r++) {
                        fe.rank = r;
                        SW_ASSERT_I64(
                            sw_detect_feed_at(det, &fe, 0, (int64_t)i, &rec, err, sizeof(err)),
                            SW_OK);
                        SW_ASSERT_NULL(rec);
                    }
                }
            }
            sumctx_t sc = {out, &buf};
            sw_detect_finish(det, collect_real, &sc);
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
        sw_buf_clear(&buf);
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
    sw_buf_t buf;
    sw_buf_init(&buf);
    char err[256], fid[32];
    size_t peak = 0;
    uint64_t evicted = 0;
    for (int flood = 0; flood < 2; flood++) {
        sw_detector_t *det = sw_detect_new(p);
        if (flood) sw_detect_set_budget(det, budget);
        gen_t g;
        memset(&g, 0, sizeof(g));
        g.s = 7;
        g.scale = 1000000;
        g.ordered = true;
        outlog_t *out = flood ? &got : &want;
        uint64_t fn = 0;
        for (size_t i = 0; i < 3000; i++) {
            sw_event_t ev;
            gen_event(&g, &ev, 5, 3);
            const sw_record_t *rec;
            SW_ASSERT_I64(sw_detect_feed_at(det, &ev, 0, (int64_t)i, &rec, err, sizeof(err)),
                          SW_OK);
            if (rec && !(rec->analysis.job_id.len && rec->analysis.job_id.ptr[0] == 'f')) {
                record_json(rec, &buf);
                out_push(out, buf.data);
            }
            for (int k = 0; flood && k < 24; k++) {
                sw_event_t fe = ev;
                snprintf(fid, sizeof(fid), "f%llu", (unsigned long long)fn++);
                fe.kind = SW_EV_SAMPLE;
                fe.event_type = sw_str("sample");
                fe.has_phase = false;
                fe.has_job_id = true;
                fe.job_id = sw_str(fid);
                int franks = (int[]){1, 2, 8}[fn % 3];
                fe.world_size = franks;
                for (int r = 0; r < franks; r++) {
                    fe.rank = r;
                    SW_ASSERT_I64(
                        sw_detect_feed_at(det, &fe, 0, (int64_t)i, &rec, err, sizeof(err)), SW_OK);
                }
                size_t acct = sw_detect_accounted(det);
                if (acct > peak) peak = acct;
            }
        }
        sumctx_t sc = {out, &buf};
        sw_detect_finish(det, collect_real, &sc);
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
    sw_buf_clear(&buf);
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
        cmocka_unit_test(test_restore),
        cmocka_unit_test(test_restore_two_sources),
        cmocka_unit_test(test_restore_swapped_sources),
        cmocka_unit_test(test_restore_compat),
        cmocka_unit_test(test_restore_compat_body),
        cmocka_unit_test(test_restore_refuses_other_params),
        cmocka_unit_test(test_flood_evicts_fake_jobs),
        cmocka_unit_test(test_budget_where_memory_grows),
        cmocka_unit_test(test_pool_across_engines),
        cmocka_unit_test(test_pool_young_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
