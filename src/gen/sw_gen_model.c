/*
 * What one rank of the synthetic telemetry produces (see sw_gen_int.h): its
 * memory model (baseline, sawtooth, noise), the plan of every storm on it
 * and the storms' ground truth, restarts, leaks, lost samples and collector
 * gaps, and its events in true-time order. Every value is a hash of (seed,
 * job, rank, index, purpose): any sample can be computed on its own.
 */
#include "sw_gen_int.h"

#include <math.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_analysis.h"

/* ---- the model ----------------------------------------------------------- */

int64_t sw_gen_sample_true_ns(const sw_gen_t *gen, const grank_t *rk, int64_t i)
{
    double u = u01(rnd(rk->key, (uint64_t)i, T_JIT));
    return rk->start_ns + i * gen->interval_ns + (int64_t)llround((2.0 * u - 1.0) * gen->jit_ns);
}

/* True time of the phase boundary before sample i: halfway from sample
 * i-1, so jitter (< 0.45 interval) never moves a sample across it. */
static inline int64_t boundary_true_ns(const sw_gen_t *gen, const grank_t *rk, int64_t i)
{
    return rk->start_ns + i * gen->interval_ns - gen->interval_ns / 2;
}

/* Baseline + sawtooth + noise. A strictly rising run of it rises by at
 * most amp + 2 * NOISE < 1.7 GiB, below 10% of the 28 GiB minimum
 * baseline: normal dynamics never make a qualifying spike (SPEC 3.3). */
static inline int64_t normal_used(const grank_t *rk, int64_t i)
{
    int64_t saw = rk->amp * (i % STEP_SAMPLES) / (STEP_SAMPLES - 1);
    int64_t noise = (int64_t)(u01(rnd(rk->key, (uint64_t)i, T_NOISE)) * (double)(2 * NOISE + 1)) -
                    NOISE;
    return rk->base + saw + noise;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* Threshold of SPEC 3.3 for a rank whose largest device_used is max_used. */
static int64_t spike_threshold(int64_t max_used)
{
    return max64(SW_DEFAULT_SPIKE_MIN_BYTES,
                 (int64_t)((double)max_used * SW_DEFAULT_SPIKE_FRACTION));
}

static int64_t ring_distance(int64_t a, int64_t b, int64_t n)
{
    int64_t d = a > b ? a - b : b - a;
    return n - d < d ? n - d : d;
}

/* --overlap: storm k reaches a rank no sooner than 2 samples after the
 * previous storm's rise on it ends (nor rises into it): a rank hit by two
 * storms rises twice, with a pause between (two rises back to back on one
 * sample are one rise, whatever caused them). */
int64_t sw_gen_overlap_clear(const sw_gen_t *gen, const grank_t *rk, int64_t k, int64_t h)
{
    if (!gen->opts.overlap || k == 0) return h;
    gplan_t pp;
    sw_gen_storm_plan(gen, rk, k - 1, &pp);
    if (pp.h < pp.drop && h + RISE_MAX + 2 > pp.h && h < pp.h + pp.len + 2) h = pp.h + pp.len + 2;
    return h;
}

/*
 * The plan of storm k on rk. The rise goes from v0 = normal(h-1) to
 * v0 + storm_bytes; the first step alone crosses the rank's threshold (an
 * upper bound of it), so the analysis puts the spike on sample h, and the
 * rest of the rise stays below a lower bound of it, so a window that has
 * lost sample h finds no spike in what remains. The hold level stays below
 * the peak, so the rising run ends there.
 */
void sw_gen_storm_plan(const sw_gen_t *gen, const grank_t *rk, int64_t k, gplan_t *pl)
{
    memset(pl, 0, sizeof(*pl));
    pl->storm = k;
    if (k >= gen->opts.storms) {
        pl->h = pl->drop = INT64_MAX;
        return;
    }
    const sw_gen_storm_t *t = &gen->truth[(size_t)rk->job * (size_t)gen->opts.storms + (size_t)k];
    uint64_t kk = (uint64_t)k;
    int64_t h;
    int64_t off = ((int64_t)rk->rank - t->rank + gen->opts.ranks) % gen->opts.ranks;
    if (gen->opts.lone && rk->rank != t->rank) {
        /* A lone spike: this storm never reaches the rank (a plan that is
         * over before it starts; the next storm's comes after it). */
        pl->h = pl->drop = 0;
        return;
    }
    if (rk->rank == t->rank) {
        h = t->onset_sample;
    } else if (off < gen->opts.tie_ranks) {
        /* tied: hit on the storm rank's own sample time */
        h = (t->onset_true_ns - rk->start_ns) / gen->interval_ns - 1;
        if (h < 1) h = 1;
        while (sw_gen_sample_true_ns(gen, rk, h) < t->onset_true_ns) h++;
    } else {
        int64_t d = ring_distance(rk->rank, t->rank, gen->opts.ranks);
        double delay = (double)gen->spread_ns * (1.0 + (double)d / 8.0) +
                       u01(rnd(rk->key, kk, T_SPREAD)) * (double)gen->spread_ns / 2.0;
        int64_t hit = t->onset_true_ns + (int64_t)delay;
        h = (hit - rk->start_ns) / gen->interval_ns - 1;
        if (h < 1) h = 1;
        while (sw_gen_sample_true_ns(gen, rk, h) < hit) h++;
    }
    h = sw_gen_overlap_clear(gen, rk, k, h);
    int64_t storm = gen->opts.storm_bytes;
    int64_t v0 = normal_used(rk, h - 1);
    /* Overlapping storms may stack on a rank: its peak (and threshold) is
     * then that of two storms. */
    int64_t stack = gen->opts.overlap ? 2 : 1;
    int64_t thr_hi = spike_threshold(rk->base + rk->amp + NOISE + stack * storm) + MIB;
    int64_t thr_lo = spike_threshold(rk->base - NOISE + storm) - MIB;
    int64_t lo = max64(thr_hi, storm - thr_lo + MIB), hi = storm - 2 * MIB;
    int64_t first = lo <= hi ? lo + (int64_t)((double)(hi - lo) * 0.5 *
                                              u01(rnd(rk->key, kk, T_RISE_FIRST)))
                             : storm / 10 * 6; /* too small to be sure of detection */
    pl->h = h;
    pl->v0 = v0;
    if (gen->opts.rise_samples > 0) {
        /* Equal steps: the crossing sample moves as the window's maximum
         * (and with it the threshold) grows during the rise. */
        pl->len = (int)gen->opts.rise_samples;
        for (int q = 0; q < pl->len; q++) pl->v[q] = v0 + storm * (q + 1) / pl->len;
        pl->elev = storm - (rk->amp + 2 * NOISE + MIB);
        pl->drop = h + pl->len + gen->hold;
        return;
    }
    pl->len = 2 + (int)(rnd(rk->key, kk, T_RISE_LEN) & 1);
    pl->v[0] = v0 + first;
    if (pl->len == 3) {
        double f = 0.3 + 0.4 * u01(rnd(rk->key, kk, T_RISE_MID));
        pl->v[1] = v0 + first + max64(1, (int64_t)((double)(storm - first) * f));
    }
    pl->v[pl->len - 1] = v0 + storm;
    pl->elev = storm - (rk->amp + 2 * NOISE + MIB);
    pl->drop = h + pl->len + gen->hold;
}

/* --overlap: the normal pattern plus what every storm adds at sample i.
 * A rise reaches its planned values over whatever the other storms add
 * (its first step alone still crosses the threshold, planned for two
 * stacked storms); a hold adds its elevation. */
static int64_t overlap_used(const sw_gen_t *gen, const grank_t *rk, int64_t i)
{
    int64_t normal = normal_used(rk, i), used = normal;
    bool rising = false;
    for (int64_t k = 0; k < gen->opts.storms; k++) {
        const gplan_t *pl = &rk->ov[k];
        if (i < pl->h || i >= pl->drop) continue;
        if (i < pl->h + pl->len) {
            used += pl->v[i - pl->h] - (rising ? pl->v0 : normal);
            rising = true;
        } else {
            used += pl->elev;
        }
    }
    return used;
}

static int64_t sample_used(const sw_gen_t *gen, grank_t *rk, int64_t i)
{
    if (rk->restart_i >= 0 && i >= rk->restart_i && i < rk->restart_i + rk->climb) {
        /* A new process: from ~1 GiB strictly up to its working set. */
        int64_t low = RESTART_LOW + (int64_t)(rnd(rk->key, 0, T_LOW) % (uint64_t)(256 * MIB));
        int64_t target = normal_used(rk, rk->restart_i + rk->climb);
        return low + (target - low) * (i - rk->restart_i + 1) / (rk->climb + 1);
    }
    if (rk->leak_i >= 0 && i >= rk->leak_i && i < rk->leak_i + rk->leak_n)
        return normal_used(rk, rk->leak_i) + LEAK_BYTES * (i - rk->leak_i + 1) / rk->leak_n;
    if (rk->ov) return overlap_used(gen, rk, i);
    while (i >= rk->plan.drop) sw_gen_storm_plan(gen, rk, rk->plan.storm + 1, &rk->plan);
    if (i < rk->plan.h) return normal_used(rk, i);
    if (i < rk->plan.h + rk->plan.len) return rk->plan.v[i - rk->plan.h];
    return normal_used(rk, i) + rk->plan.elev;
}

static bool phase_event(grank_t *rk, gev_t *ev, gkind_t kind, int64_t step, int64_t true_ns)
{
    memset(ev, 0, sizeof(*ev));
    ev->kind = (uint8_t)kind;
    ev->order = rk->order++;
    ev->step = step;
    ev->seq = ++rk->seq;
    ev->true_ns = true_ns;
    ev->ts_ns = true_ns + rk->skew_ns;
    ev->inc = rk->restart_i >= 0 && rk->next_i >= rk->restart_i;
    ev->arrival_ns = true_ns + rk->late_ns +
                     (int64_t)(rnd(rk->key, ev->order, T_NET) % (uint64_t)(NET_MAX_NS + 1));
    return true;
}

/* Whether sample i of rk is lost: to --loss, or inside one of its
 * collector gaps (--gaps). */
bool sw_gen_rank_lost(const sw_gen_t *gen, const grank_t *rk, int64_t i)
{
    if (gen->opts.loss > 0 && u01(rnd(rk->key, (uint64_t)i, T_LOSS)) < gen->opts.loss) return true;
    for (int64_t g = 0; rk->gap && g < gen->opts.gaps; g++)
        if (i >= rk->gap[2 * g] && i < rk->gap[2 * g] + rk->gap[2 * g + 1]) return true;
    return false;
}

/*
 * Produce the rank's next event in true-time order: per sample, the phase
 * boundaries before it (forward enters at the start of a step, backward at
 * its half), then the sample; after the last sample, the exit of the open
 * scope. @returns false when the rank has nothing more.
 */
bool sw_gen_rank_produce(const sw_gen_t *gen, grank_t *rk, gev_t *ev)
{
    const int64_t n = gen->opts.samples;
    int64_t i = rk->next_i;
    if (i >= n) {
        if (!gen->opts.phases || rk->closed) return false;
        rk->closed = true;
        int64_t p = n % STEP_SAMPLES;
        gkind_t kind = p >= 1 && p <= FWD_SAMPLES ? GK_FWD_EXIT : GK_BWD_EXIT;
        return phase_event(rk, ev, kind, (n - 1) / STEP_SAMPLES, boundary_true_ns(gen, rk, n));
    }
    if (gen->opts.phases) {
        int64_t p = i % STEP_SAMPLES, step = i / STEP_SAMPLES;
        if (p == 0) {
            if (rk->ph == 0) {
                rk->ph = 1;
                if (i > 0)
                    return phase_event(rk, ev, GK_BWD_EXIT, step - 1, boundary_true_ns(gen, rk, i));
            }
            if (rk->ph == 1) {
                rk->ph = 2;
                return phase_event(rk, ev, GK_FWD_ENTER, step, boundary_true_ns(gen, rk, i) + 1);
            }
        } else if (p == FWD_SAMPLES) {
            if (rk->ph == 0) {
                rk->ph = 1;
                return phase_event(rk, ev, GK_FWD_EXIT, step, boundary_true_ns(gen, rk, i));
            }
            if (rk->ph == 1) {
                rk->ph = 2;
                return phase_event(rk, ev, GK_BWD_ENTER, step, boundary_true_ns(gen, rk, i) + 1);
            }
        }
    }
    if ((gen->opts.loss > 0 || rk->gap) && sw_gen_rank_lost(gen, rk, i)) {
        /* Lost (--loss, --gaps): never sent; phase events still are. The
         * next sample that is not lost comes next (one call deep). */
        while (i < n && sw_gen_rank_lost(gen, rk, i)) i++;
        rk->next_i = i;
        rk->ph = 0;
        return sw_gen_rank_produce(gen, rk, ev);
    }
    memset(ev, 0, sizeof(*ev));
    ev->kind = GK_SAMPLE;
    ev->order = rk->order++;
    ev->true_ns = sw_gen_sample_true_ns(gen, rk, i);
    ev->ts_ns = ev->true_ns + rk->skew_ns;
    ev->used = sample_used(gen, rk, i);
    ev->inc = rk->restart_i >= 0 && i >= rk->restart_i;
    ev->reserved = ev->used - CTX_BYTES;
    ev->allocated = ev->reserved - FRAG_MIN -
                    (int64_t)(rnd(rk->key, (uint64_t)i, T_FRAG) % (uint64_t)FRAG_SPAN);
    ev->change = rk->has_prev ? ev->allocated - rk->prev_alloc : 0;
    rk->has_prev = true;
    rk->prev_alloc = ev->allocated;
    ev->arrival_ns = ev->true_ns + rk->late_ns +
                     (int64_t)(rnd(rk->key, ev->order, T_NET) % (uint64_t)(NET_MAX_NS + 1));
    if (gen->opts.late > 0 && u01(rnd(rk->key, ev->order, T_LATE)) < gen->opts.late) {
        double by = (2.0 + 3.0 * u01(rnd(rk->key, ev->order, T_LATE_BY))) *
                    (double)gen->interval_ns;
        ev->arrival_ns += (int64_t)by;
        ev->late = true;
    }
    rk->next_i = i + 1;
    rk->ph = 0;
    return true;
}

void sw_gen_rank_init(sw_gen_t *gen, grank_t *rk, int32_t job, int32_t rank)
{
    memset(rk, 0, sizeof(*rk));
    rk->job = job;
    rk->rank = rank;
    rk->restart_i = rk->leak_i = -1;
    rk->key = mix64(gen->seed_key ^ mix64(((uint64_t)(uint32_t)job << 32) | (uint32_t)rank));
    rk->start_ns = gen->opts.start_ns +
                   (int64_t)(u01(rnd(rk->key, 0, T_START)) * (double)gen->interval_ns);
    rk->skew_ns = (int64_t)llround((2.0 * u01(rnd(rk->key, 0, T_SKEW)) - 1.0) *
                                   (double)gen->skew_ns);
    rk->base = BASE_MIN + (int64_t)(u01(rnd(rk->key, 0, T_BASE)) * (double)(BASE_MAX - BASE_MIN));
    rk->amp = SAW_MIN + (int64_t)(u01(rnd(rk->key, 0, T_AMP)) * (double)(SAW_MAX - SAW_MIN));
}

/* Restarts and leaks (on ranks counted from the middle of the ring, away
 * from the default storm rank) and the late collectors of storm ranks. */
void sw_gen_others_build(sw_gen_t *gen)
{
    const sw_gen_opts_t *o = &gen->opts;
    int64_t nr = o->job_restart ? o->ranks : o->restarts;
    gen->other = sw_calloc((size_t)(o->jobs * (nr + o->leaks)) + 1, sizeof(*gen->other));
    int64_t r_at = (int64_t)(o->restart_at * (double)o->samples);
    int64_t l_at = (int64_t)(o->leak_at * (double)o->samples);
    int64_t leak_n = LEAK_MS / o->interval_ms < 20 ? 20 : LEAK_MS / o->interval_ms;
    for (int64_t j = 0; j < o->jobs; j++) {
        grank_t *job = &gen->ranks[j * o->ranks];
        for (int64_t k = 0; k < nr + o->leaks; k++) {
            bool leak = k >= nr;
            int64_t r = o->job_restart && !leak ? k
                                                : (o->ranks / 2 + (leak ? k - nr : k)) % o->ranks;
            grank_t *rk = &job[r];
            sw_gen_other_t *t = &gen->other[gen->nother++];
            t->job_id = gen->job_ids[j];
            t->job = j;
            t->rank = r;
            if (leak) {
                rk->leak_i = l_at;
                rk->leak_n = leak_n;
                t->kind = SW_GEN_LEAK;
                t->start_timestamp_ns = sw_gen_sample_true_ns(gen, rk, l_at) + rk->skew_ns;
                t->end_timestamp_ns = sw_gen_sample_true_ns(gen, rk, l_at + leak_n - 1) +
                                      rk->skew_ns;
            } else {
                rk->restart_i = r_at;
                rk->climb = 5 + (int64_t)(rnd(rk->key, 0, T_CLIMB) % 6);
                t->kind = SW_GEN_RESTART;
                t->start_timestamp_ns = sw_gen_sample_true_ns(gen, rk, r_at) + rk->skew_ns;
                t->end_timestamp_ns = sw_gen_sample_true_ns(gen, rk, r_at + rk->climb - 1) +
                                      rk->skew_ns;
            }
        }
        for (int64_t k = 0; k < o->storms; k++)
            job[gen->truth[j * o->storms + k].rank].late_ns = o->late_first_ms * MS_NS;
    }
}

/* Storm ranks and onsets first (every plan needs its storm's onset), then
 * the earliest other rank of each storm. */
void sw_gen_truth_build(sw_gen_t *gen)
{
    const sw_gen_opts_t *o = &gen->opts;
    int64_t def_rank = o->ranks >= 4 ? 3 : o->ranks - 1;
    for (int64_t j = 0; j < o->jobs; j++) {
        uint64_t job_key = mix64(gen->seed_key ^ mix64(((uint64_t)j << 32) | 0xffffffffULL));
        for (int64_t k = 0; k < o->storms; k++) {
            sw_gen_storm_t *t = &gen->truth[j * o->storms + k];
            t->job_id = gen->job_ids[j];
            t->job = j;
            t->storm = k;
            t->rank = o->storm_rank >= 0 ? o->storm_rank
                      : o->storm_rank == SW_GEN_STORM_RANK_RANDOM
                          ? (int64_t)(rnd(job_key, (uint64_t)k, T_STORM_RANK) % (uint64_t)o->ranks)
                          : def_rank;
            const grank_t *rs = &gen->ranks[j * o->ranks + t->rank];
            t->onset_sample = sw_gen_overlap_clear(gen, rs, k, gen->first_onset + k * gen->spacing);
            t->onset_true_ns = sw_gen_sample_true_ns(gen, rs, t->onset_sample);
            t->onset_timestamp_ns = t->onset_true_ns + rs->skew_ns;
        }
    }
    for (size_t n = 0; n < gen->ntruth; n++) {
        sw_gen_storm_t *t = &gen->truth[n];
        int64_t best_true = INT64_MAX;
        t->first_hit_rank = -1;
        t->first_hit_timestamp_ns = -1;
        t->tie_ranks = o->tie_ranks > 1 ? o->tie_ranks : 1;
        t->end_true_ns = t->onset_true_ns;
        for (int64_t r = 0; r < o->ranks && !o->lone; r++) {
            if (r == t->rank) continue;
            const grank_t *rk = &gen->ranks[t->job * o->ranks + r];
            gplan_t pl;
            sw_gen_storm_plan(gen, rk, t->storm, &pl);
            int64_t tt = sw_gen_sample_true_ns(gen, rk, pl.h);
            if (tt > t->end_true_ns) t->end_true_ns = tt;
            if (tt < best_true) {
                best_true = tt;
                t->first_hit_rank = r;
                t->first_hit_timestamp_ns = tt + rk->skew_ns;
            }
        }
    }
}

/* --overlap: every storm's plan of the rank; --gaps: its collector gaps,
 * each 2-5 s at a seeded sample, left out when it would hide the rise of
 * a storm that starts on this rank (the first rank must be seen to be
 * named; its neighbours' rises may be hidden). */
void sw_gen_field_build(sw_gen_t *gen, grank_t *rk)
{
    const sw_gen_opts_t *o = &gen->opts;
    if (o->overlap) {
        rk->ov = sw_calloc((size_t)o->storms + 1, sizeof(*rk->ov));
        for (int64_t k = 0; k < o->storms; k++) sw_gen_storm_plan(gen, rk, k, &rk->ov[k]);
    }
    if (!o->gaps) return;
    rk->gap = sw_calloc((size_t)(2 * o->gaps), sizeof(*rk->gap));
    int64_t guard = (2000 + o->interval_ms - 1) / o->interval_ms + RISE_MAX;
    for (int64_t g = 0; g < o->gaps; g++) {
        int64_t at = (int64_t)(rnd(rk->key, (uint64_t)g, T_GAP_AT) % (uint64_t)o->samples);
        double ms = GAP_MIN_MS + u01(rnd(rk->key, (uint64_t)g, T_GAP_LEN)) * GAP_SPAN_MS;
        int64_t len = (int64_t)(ms / (double)o->interval_ms) + 1;
        for (int64_t k = 0; k < o->storms; k++) {
            const sw_gen_storm_t *t = &gen->truth[(size_t)rk->job * (size_t)o->storms + (size_t)k];
            if (t->rank == rk->rank && at < t->onset_sample + guard &&
                at + len > t->onset_sample - 2)
                len = 0;
        }
        rk->gap[2 * g] = at;
        rk->gap[2 * g + 1] = len;
    }
}

/* The host of slot @p slot of job @p job in a fleet (sw_gen.h). */
int64_t sw_gen_fleet_host(int64_t job, int64_t slot, int64_t per_job, int64_t fleet,
                          int64_t bad_host, int64_t bad_slot)
{
    if (bad_host < 0) return (job * per_job + slot) % fleet;
    if (slot == bad_slot) return bad_host;
    if (fleet < 2) return bad_host;
    /* the other slots rotate over the fleet without the bad host */
    int64_t i = slot < bad_slot ? slot : slot - 1;
    int64_t k = (job * (per_job - 1) + i) % (fleet - 1);
    return k < bad_host ? k : k + 1;
}
