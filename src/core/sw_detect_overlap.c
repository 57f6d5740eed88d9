/*
 * Storms that overlap (issue 36; docs/semantics.md, "Storms that
 * overlap"): the front of the storm that is spreading, what it explains,
 * and the evidence that starts the next storm while it still spreads.
 * Called by the lifecycle (sw_detect_verdict.c) on a rank's new candidate
 * while a storm is known, never on a quiet sample. Pure.
 */
#include "sw_detect_cands.h"

/* ---- storms that overlap (issue 36; docs/semantics.md, "Storms that
 * overlap") ----------------------------------------------------------------
 * A storm spreads from rank to rank: each rank it reaches lies near ranks
 * it reached shortly before. Its *front* is its members (the ranks whose
 * run joined its episode) with the time of their spike (ep_rel). A new
 * rise is explained by the storm when a member within its reach (in rank
 * numbers, around the ring of the world size) spiked within FRONT_S of
 * it, the reach growing by the front's speed with the time since that
 * member's spike. Reach and speed are learnt from the storm itself, once
 * FRONT_LEARN ranks joined: twice the farthest a joining rank was from the
 * nearest earlier member (at least FRONT_REACH_MIN), and the fastest a
 * member was reached from the first one. A storm whose ranks join far from
 * each other (no locality) explains every rise, as before. These run only
 * on a rank's new candidate while a storm is known, never on a quiet
 * sample. */

#define FRONT_REACH_MIN 8
#define FRONT_REACH_MAX 256
#define FRONT_SCAN_MAX 2048 /* ranks either side a rise is compared with (half of 4,096) */
#define FRONT_LEARN 8       /* members the reach is learnt from before it tells storms apart */
#define FRONT_S 6           /* seconds (or intervals when longer) between neighbours' spikes */
#define LAG_IV 3            /* intervals two ranks' newest samples may differ by and be compared */
#define FIT_D 3       /* ranks either side whose spikes tell which of two rises a front made */
#define QUIET_MS 1500 /* a rank settled after a fall: no steep step this long (or 6 intervals) */

/* FRONT_S seconds, or FRONT_S sampling intervals of rank r when longer. */
static int64_t front_ns(const job_t *j, const rank_t *r)
{
    int64_t riv = rk_interval(j, r);
    int64_t iv = riv > 0 && riv < INT64_MAX / 1000000 / FRONT_S ? riv * 1000000 : 0;
    return FRONT_S * iv > FRONT_S * 1000000000LL ? FRONT_S * iv : FRONT_S * 1000000000LL;
}

/* The nearest rank (ring distance 1..reach from rank r) whose run of
 * episode @p ep spiked within @p window of @p rel (any time: INT64_MAX);
 * INT64_MAX when there is none. */
static int64_t front_nearest(const job_t *j, const rank_t *r, int64_t ep, int64_t rel,
                             int64_t window, int64_t reach)
{
    int64_t w = sw_det_world_size(j);
    for (int64_t d = 1; d <= reach && 2 * d <= w; d++)
        for (int side = 0; side < 2; side++) {
            int64_t q = side ? r->rank + d : r->rank - d;
            q = q < 0 ? q + w : q >= w ? q - w : q;
            uint32_t qi;
            if (!sw_imap_get(&j->ranks.map, q, &qi)) continue;
            const rank_t *m = &j->ranks.v[qi];
            if (m == r || rk_ep_no(j, m) != ep) continue;
            int64_t mrel = rk_ep_rel(j, m);
            if (window == INT64_MAX || (mrel > rel - window && mrel < rel + window)) return d;
        }
    return INT64_MAX;
}

/* The reach within which the open episode's front explains a rise, 0 when
 * the storm shows no locality (every rise is then explained). */
static int64_t front_reach(int64_t learnt)
{
    int64_t reach = 2 * learnt;
    if (reach >= FRONT_REACH_MAX) return 0;
    return reach < FRONT_REACH_MIN ? FRONT_REACH_MIN : reach;
}

/* A joining rank widens the reach to its distance from the nearest
 * earlier member. */
void sw_det_front_learn(job_t *j, const rank_t *r)
{
    if (j->ep.nmem == 0) return;
    /* The front's speed: ns per rank from the first member to this one. */
    const rank_t *f = &j->ranks.v[j->ep.mem[0]];
    int64_t w = sw_det_world_size(j),
            df = f->rank > r->rank ? f->rank - r->rank : r->rank - f->rank;
    if (w - df < df) df = w - df;
    int64_t dt = r->cand != NIL ? rc_of(j, r)->rel - rk_ep_rel(j, f) : 0;
    if (df > 0 && dt > 0 && dt / df < j->ep.front_npr) j->ep.front_npr = dt / df;
    if (j->ep.front_reach >= FRONT_REACH_MAX) return;
    int64_t d = front_nearest(j, r, j->ep.no, 0, INT64_MAX, FRONT_REACH_MAX);
    if (d == INT64_MAX) d = FRONT_REACH_MAX;
    if (d > j->ep.front_reach) j->ep.front_reach = d;
}

/* The old storm's tail on rank ri: its run is spent, and it joins the
 * old storm's front (that storm goes on spreading). */
void sw_det_tail_spend(sw_detector_t *det, job_t *j, uint32_t ri, int64_t old)
{
    rank_t *r = &j->ranks.v[ri];
    const rank_cand_t *rc = rc_of(j, r);
    int64_t base = rc->base, rel = rc->rel;
    if (base == INT64_MIN || base == INT64_MAX) return;
    rank_cold_t *c = rk_cold(j, r);
    c->ep_no = old;
    c->ep_base = base;
    c->ep_rel = rel;
    c->spent_ts = base + 1;
    sw_det_cand_refresh(det, j, ri);
}

/* The nearest member of episode @p ep that explains a rise of rank r with
 * spike rel @p rel: within the front's reach of it, or within what the
 * front could have covered since that member spiked (its speed, the
 * fastest a member was reached from the first one, over the time from the
 * member's spike to this one plus two intervals); members that spiked
 * more than FRONT_S before it, or more than two intervals after it, do
 * not count. Reach and speed are the job's
 * (the open episode's, or the last one's). @returns its ring distance,
 * 0 when the front cannot tell (too few members learnt, no locality),
 * INT64_MAX when no member explains the rise. */
static int64_t front_explains_at(const job_t *j, const rank_t *r, int64_t ep, int64_t rel,
                                 bool clocks);

static int64_t front_explains(const job_t *j, const rank_t *r, int64_t ep, int64_t rel)
{
    return front_explains_at(j, r, ep, rel, false);
}

/* Whether the rel clocks of ranks q and r can be compared: their newest
 * samples are within @p lag of each other on their own clocks. A rank
 * that reports has its newest sample at about now; one in a collector
 * gap, late, or whose first samples were lost (its rel counts from a
 * later sample) is off by the missing time, and its spike times say
 * nothing against r's: unknown, neither explaining nor unexplained. */
static bool clock_agrees(const rank_t *q, const rank_t *r, int64_t lag)
{
    int64_t a = q->newest_ts - q->first_ts, b = r->newest_ts - r->first_ts;
    return a - b <= lag && b - a <= lag;
}

/* With @p clocks, a rank within the front's reach of r, or a member
 * within the farthest a member explains, whose clock does not agree with
 * r's (clock_agrees, LAG_IV intervals) makes the front unable to tell
 * (0): a gap is no evidence either way. */
static int64_t front_explains_at(const job_t *j, const rank_t *r, int64_t ep, int64_t rel,
                                 bool clocks)
{
    /* The open episode's front, or the one before (kept at the trigger). */
    bool is_open = sw_det_ep_open(j);
    bool cur = is_open && ep == j->ep.no;
    int64_t reach = front_reach(cur || !is_open ? j->ep.front_reach : j->ep.old_reach);
    int64_t npr = cur || !is_open ? j->ep.front_npr : j->ep.old_npr, w = sw_det_world_size(j);
    if ((cur && j->ep.nmem < FRONT_LEARN) || reach == 0 || 2 * reach >= w) return 0;
    int64_t win = front_ns(j, r), tol = 2 * j->sig.tie_ns;
    if (npr <= 0) npr = 1;
    int64_t most = reach + (win + tol) / npr; /* the farthest any member explains */
    int64_t riv = rk_interval(j, r);
    int64_t lag = LAG_IV * (riv > 0 && riv < INT64_MAX / 1000000 / LAG_IV ? riv * 1000000 : 0) +
                  tol;
    if (most > FRONT_SCAN_MAX || 2 * most >= w) return 0;
    for (int64_t d = 1; d <= most; d++)
        for (int side = 0; side < 2; side++) {
            int64_t q = side ? r->rank + d : r->rank - d;
            q = q < 0 ? q + w : q >= w ? q - w : q;
            uint32_t qi;
            if (!sw_imap_get(&j->ranks.map, q, &qi)) continue;
            const rank_t *m = &j->ranks.v[qi];
            if (m == r) continue;
            if (clocks && (d <= reach || rk_ep_no(j, m) == ep) && !clock_agrees(m, r, lag))
                return 0;
            if (rk_ep_no(j, m) != ep) continue;
            int64_t mrel = rk_ep_rel(j, m);
            /* a member that spiked after this rise (beyond the tolerance)
             * was reached after it: it explains nothing */
            if (mrel <= rel - win || mrel > rel + tol) continue;
            int64_t ahead = rel - mrel + tol > 0 ? (rel - mrel + tol) / npr : 0;
            if (d <= reach + ahead) return d;
        }
    return INT64_MAX;
}

/* Whether the open episode's storm is the only one known to spread: the
 * job's first, or the one before ended as its evidence aged out. After a
 * next storm the storm before may still spread, and a rise that neither
 * front explains may be its tail, as a rank's second rise may be its
 * arrival: they start no third storm (a late page, never an extra one). */
static bool front_alone(const job_t *j)
{
    return j->ep.no == 1 || j->ep.aged;
}

/* A rise of rank r (its candidate) that starts clearly after the open
 * episode's latest spike, while the storm before may still spread (not
 * front_alone): the open storm still spreading when it starts within
 * FRONT_S seconds of that spike and the open storm's front explains it
 * or cannot tell. A storm that overlaps the one before may have been
 * triggered on its first two ranks, seconds before its third one rises
 * (its ranks the storm before had just reached rise later): that third
 * rank is not a third storm. Storms 10 s or more apart stay two
 * episodes: the front explains only spikes within FRONT_S seconds. */
bool sw_det_open_spread(const job_t *j, const rank_t *r)
{
    const rank_cand_t *c = rc_of(j, r);
    if (front_alone(j) || c->base == INT64_MIN || c->base == INT64_MAX) return false;
    if ((sw_i128)c->base - r->first_ts > (sw_i128)j->ep.last_rel + FRONT_S * 1000000000LL)
        return false;
    return front_explains_at(j, r, j->ep.no, c->rel, true) != INT64_MAX;
}

/* A rise on a rank outside the open episode that its front does not
 * explain: the start of another storm. */
bool sw_det_front_foreign(const job_t *j, const rank_t *r)
{
    if (!front_alone(j)) return false;
    /* Its rise seen sample by sample: a rise across missing samples (a
     * collector gap, a lost sample) started at an unknown time. The steps
     * from base to spike span at most their count of intervals, plus the
     * jitter of the two ends. */
    const rank_cand_t *c = rc_of(j, r);
    int64_t riv = rk_interval(j, r);
    if (c->base == INT64_MIN || c->base == INT64_MAX || riv <= 0 || riv > INT64_MAX / 4000000 ||
        c->samples == 0)
        return false;
    int64_t iv = riv * 1000000;
    if (c->spike_ts - c->base > (int64_t)c->samples * iv + iv * 3 / 4) return false;
    return front_explains_at(j, r, j->ep.no, c->rel, true) == INT64_MAX;
}

/* After a next storm, with no episode open yet, where the storm before's
 * learnt front cannot tell (a small job: its reach and speed cover half the
 * ring): rank r's rise (spike rel @p rel) is that storm's tail when, among
 * its FIT_D nearest ranks either side (every clock agreeing with r's), a
 * member of it (episode @p old) spiked within FRONT_S of the rise and nearer
 * to it in time, by more than two tie lengths, than any rank of the new
 * storm (a candidate outside that storm's members, or a member's first run
 * kept as the next storm's: ep_base INT64_MAX). A storm reaches neighbours
 * at about the same time; the new storm, waiting for its second rank, is
 * judged where it has ranks near. */
static bool tail_local(const job_t *j, const rank_t *r, int64_t old, int64_t rel)
{
    if (sw_det_ep_open(j)) return false;
    int64_t w = sw_det_world_size(j), riv = rk_interval(j, r), tol = 2 * j->sig.tie_ns;
    if (riv <= 0 || riv > INT64_MAX / 1000000 / LAG_IV || 2 * FIT_D >= w) return false;
    int64_t lag = LAG_IV * riv * 1000000 + tol, a = INT64_MAX, b = INT64_MAX;
    for (int64_t d = 1; d <= FIT_D; d++)
        for (int side = 0; side < 2; side++) {
            int64_t q = side ? r->rank + d : r->rank - d;
            q = q < 0 ? q + w : q >= w ? q - w : q;
            uint32_t qi;
            if (!sw_imap_get(&j->ranks.map, q, &qi)) continue;
            const rank_t *m = &j->ranks.v[qi];
            if (!clock_agrees(m, r, lag)) return false;
            bool in_old = rk_ep_no(j, m) == old;
            if (in_old) {
                int64_t x = rk_ep_rel(j, m) > rel ? rk_ep_rel(j, m) - rel : rel - rk_ep_rel(j, m);
                if (x < a) a = x;
            }
            if (m->cand != NIL && (!in_old || rk_ep_base(j, m) == INT64_MAX)) {
                int64_t c = rc_of(j, m)->rel;
                int64_t x = c > rel ? c - rel : rel - c;
                if (x < b) b = x;
            }
        }
    return a != INT64_MAX && a < front_ns(j, r) && (b == INT64_MAX || a < b - tol);
}

/* Rank r's new rise (its candidate, spike rel @p rel) after a next storm:
 * the tail of the storm before (episode @p old) when that storm's front
 * explains it and no rank of the new storm (the open episode's members,
 * or without one the ranks with a candidate) spiked as near to it. Reach
 * and speed are the last learnt: while the new storm's episode is open,
 * its own. Where that front cannot tell, before the new storm's trigger,
 * its nearest ranks do (tail_local). */
bool sw_det_front_tail(const job_t *j, const rank_t *r, int64_t old, int64_t rel)
{
    if (old <= 0 || rk_ep_no(j, r) == old) return false;
    int64_t d_old = front_explains(j, r, old, rel);
    if (d_old == 0) return tail_local(j, r, old, rel);
    if (d_old == INT64_MAX) return false;
    int64_t win = front_ns(j, r);
    if (sw_det_ep_open(j)) return front_nearest(j, r, j->ep.no, rel, win, d_old) > d_old;
    int64_t w = sw_det_world_size(j);
    for (int64_t d = 1; d <= d_old && 2 * d <= w; d++)
        for (int side = 0; side < 2; side++) {
            int64_t q = side ? r->rank + d : r->rank - d;
            q = q < 0 ? q + w : q >= w ? q - w : q;
            uint32_t qi;
            if (!sw_imap_get(&j->ranks.map, q, &qi) || j->ranks.v[qi].cand == NIL) continue;
            int64_t mrel = rc_of(j, &j->ranks.v[qi])->rel;
            if (mrel > rel - win && mrel < rel + win && rk_ep_no(j, &j->ranks.v[qi]) != old)
                return false;
        }
    return true;
}

/* Which of rank r's two rises, its first of the open episode (its ep_rel)
 * or its second (spike rel @p rel2), fits the episode's front: 1 the first,
 * -1 the second, 0 it cannot tell (see sw_det_second_rise()). The front's time at r is read from its FIT_D
 * nearest ranks either side: a member's spike, or, for a rank the storm has
 * not reached (its clock agrees with r's, so it reported up to about now),
 * "later than now". Their median is where the front was at r: a wave reaches
 * r after the ranks on one side and before those on the other, so one
 * neighbour's spike near the second rise (the wave passing on) does not
 * make it the front's. A rise fits when that time is nearer to it than
 * to the other rise by more than two tie lengths, and at least two
 * neighbours are members; when it is near neither, the first rise fits
 * when a member's spike is nearer to it than any member's is to the
 * second rise, by more than two tie lengths (the rule before the median);
 * else, with the median "later than now", the second fits when a member's
 * spike is nearer to it in the same way; else the rise nearer the median
 * fits (two rises, so one is another storm's: issue 36, fourth pass). */
static int rise_fit(const job_t *j, const rank_t *r, int64_t rel2)
{
    int64_t w = sw_det_world_size(j), riv = rk_interval(j, r), tol = 2 * j->sig.tie_ns;
    if (riv <= 0 || riv > INT64_MAX / 1000000 / LAG_IV || 2 * FIT_D >= w) return 0;
    int64_t lag = LAG_IV * riv * 1000000 + tol, rel1 = rk_ep_rel(j, r);
    int64_t t[2 * FIT_D], near1 = INT64_MAX, near2 = INT64_MAX;
    int n = 0, nmem = 0;
    for (int64_t d = 1; d <= FIT_D; d++)
        for (int side = 0; side < 2; side++) {
            int64_t q = side ? r->rank + d : r->rank - d;
            q = q < 0 ? q + w : q >= w ? q - w : q;
            uint32_t qi;
            if (!sw_imap_get(&j->ranks.map, q, &qi)) continue;
            const rank_t *m = &j->ranks.v[qi];
            if (!clock_agrees(m, r, lag)) return 0;
            int64_t mrel = INT64_MAX; /* not reached yet */
            if (rk_ep_no(j, m) == j->ep.no) {
                mrel = rk_ep_rel(j, m);
                nmem++;
                int64_t a = mrel > rel1 ? mrel - rel1 : rel1 - mrel;
                int64_t b = mrel > rel2 ? mrel - rel2 : rel2 - mrel;
                if (a < near1) near1 = a;
                if (b < near2) near2 = b;
            }
            /* insertion sort: at most 2 * FIT_D values */
            int k = n++;
            for (; k > 0 && t[k - 1] > mrel; k--) t[k] = t[k - 1];
            t[k] = mrel;
        }
    if (nmem < 2) return 0;
    int64_t lo = t[(n - 1) / 2], hi = t[n / 2];
    int64_t mid = hi == INT64_MAX ? lo : lo + (hi - lo) / 2;
    if (mid != INT64_MAX) {
        int64_t d1 = mid > rel1 ? mid - rel1 : rel1 - mid;
        int64_t d2 = mid > rel2 ? mid - rel2 : rel2 - mid;
        if (d1 < d2 - tol) return 1;
        if (d2 < d1 - tol) return -1;
    }
    /* The median tells neither: the first rise still fits when a member's
     * spike is nearer to it than any member's is to the second rise. */
    if (near1 < near2 - tol) return 1;
    /* The front has not reached most of the neighbours (the median is
     * "later than now") and every member near spiked nearer the second
     * rise: the front arrives now, the second rise is its arrival. */
    if (mid == INT64_MAX) return near2 < near1 - tol ? -1 : 0;
    /* The median lies between the two rises, near neither by the margin:
     * the rank rose twice, steeply and after a pause, and a storm reaches
     * a rank once, so one rise is another storm's whichever it is. The
     * nearer one to the median (the first on a tie) is the open storm's. */
    int64_t e1 = mid > rel1 ? mid - rel1 : rel1 - mid;
    int64_t e2 = mid > rel2 ? mid - rel2 : rel2 - mid;
    return e1 <= e2 ? 1 : -1;
}

/* The longest step between two samples seen one after the other: an
 * interval and 0.6 of one for the jitter of both ends. */
static int64_t step_ns(const job_t *j, const rank_t *r)
{
    int64_t riv = rk_interval(j, r);
    if (riv <= 0 || riv > INT64_MAX / 2000000) return INT64_MAX;
    return riv * 1000000 * 8 / 5;
}

/* QUIET_MS, or 6 sampling intervals of rank r when longer. */
static int64_t quiet_ns(const job_t *j, const rank_t *r)
{
    int64_t riv = rk_interval(j, r);
    int64_t iv = riv > 0 && riv < INT64_MAX / 6000000 ? riv * 1000000 : 0;
    return 6 * iv > QUIET_MS * 1000000LL ? 6 * iv : QUIET_MS * 1000000LL;
}

/* A second steep rise on a member rank: the newest samples rose by a
 * threshold in steep steps from a base more than an interval after the
 * rank's own spike of the episode (a storm reaches a rank once; the
 * member's run may have gone on rising in between, so the rise is split
 * off that run: split_ts). */
bool sw_det_second_rise(sw_detector_t *det, job_t *j, rank_t *r)
{
    const rank_cand_t *c = rc_of(j, r);
    int64_t base;
    if (!front_alone(j) || c->spike_ts > INT64_MAX - j->sig.tie_ns ||
        !sw_win_steep_tail(&r->win, det->params.spike_min_bytes, det->params.spike_fraction,
                           c->spike_ts, c->spike_ts + j->sig.tie_ns, step_ns(j, r), quiet_ns(j, r),
                           &base))
        return false;
    /* Which of the rank's two rises is the open storm's arrival? The one
     * the front's time at the rank (rise_fit: its nearest ranks' spikes)
     * is nearer to, by more than the tie tolerance: a storm reaches
     * neighbours at about the same time, and it reaches a rank once, so
     * the other rise is another storm's. The second rise is another storm
     * when the first fits; when the second fits, the first was another
     * storm's start taken into this episode (the open storm had not
     * reached the rank yet), and its run is the next storm's: it is not
     * spent, and the rank stays in the front with its second rise, the
     * open storm's arrival (its neighbours' rises that follow are that
     * storm's tail). With fewer than two members near, or one whose clock
     * does not agree (a gap), or a median "later than now" that no
     * member's spike settles, it cannot tell, and a second page needs
     * evidence: then the storm before still spreading. */
    int64_t rel = r->newest_ts - r->first_ts;
    int fit = rise_fit(j, r, rel);
    if (fit == 0) return false;
    if (j->ep.no > 1 && rk_ep_no(j, r) == j->ep.no &&
        front_explains_at(j, r, j->ep.no - 1, rel, true) != INT64_MAX)
        return false;
    rank_cold_t *cold = rk_cold(j, r);
    if (fit > 0) {
        cold->split_ts = base;
    } else {
        cold->ep_base = INT64_MAX; /* not spent when the episode ends */
        cold->ep_rel = rel;
    }
    return true;
}

/* Rank ri's candidate run becomes part of the open episode. */
