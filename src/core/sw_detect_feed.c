/*
 * The stream engine's entry (SPEC 6): sw_detect_feed_src() takes one event
 * through its steps, each a function below: the job and rank it belongs to
 * (made within max.jobs, max.ranks.per.job and the memory budget), the
 * out-of-time guard, the phase index, steps 1-2 (duplicate, insert), the
 * rank's and job's times, the candidate, step 3 (staleness), steps 4-5
 * (the lifecycle, sw_detect_verdict.c) and SPEC 8 (sw_crash.c). Also the
 * prefetch that runs two events ahead. Pure: no I/O, no clock, no globals.
 */
#include "sw_detect_cands.h"

/* A sample's world_size claim counted; the leader is the most claimed
 * (on a tie, the first claimed). */
static void claim_add(job_t *j, int64_t ws)
{
    uint32_t ci;
    if (j->claims.leader >= 0 && j->claims.v[j->claims.leader].ws == ws) {
        /* The leader's claim again (most samples): it only gains, so it
         * stays the leader; no lookup. */
        j->claims.v[j->claims.leader].count++;
        j->claims.seq++;
        return;
    }
    if (!sw_imap_get(&j->claims.map, ws, &ci)) {
        SW_GROW(j->claims.v, j->claims.n, j->claims.cap, 4);
        ci = (uint32_t)j->claims.n++;
        j->claims.v[ci].ws = ws;
        j->claims.v[ci].count = 0;
        j->claims.v[ci].first = j->claims.seq;
        sw_imap_put(&j->claims.map, ws, ci);
    }
    j->claims.seq++;
    claim_t *c = &j->claims.v[ci];
    c->count++;
    if (j->claims.leader < 0) {
        j->claims.leader = ci;
        return;
    }
    const claim_t *l = &j->claims.v[j->claims.leader];
    if (c->count > l->count || (c->count == l->count && c->first < l->first)) j->claims.leader = ci;
}

/* Whether rank r's candidate spike lies more than 2 s (or 3 sampling
 * intervals when they are longer) behind the rank's newest sample. */
static bool old_spike(const job_t *j, const rank_t *r)
{
    int64_t iv = rank_interval_ns(j, r);
    int64_t gap = iv < INT64_MAX / 3 && 3 * iv > 2000000000 ? 3 * iv : 2000000000;
    return rc_of(j, r)->spike_ts < r->newest_ts - gap;
}

/* A new pid or session on a rank (in time order) is a restart: its spike
 * search starts again once the new process has climbed to its working
 * set, i.e. once its memory has not risen by half a threshold for 5 s
 * (or 5 sampling intervals when they are longer); every run that starts
 * before that is spent. */
static void restart_track(sw_detector_t *det, job_t *j, rank_t *r, uint32_t sid, int64_t ts,
                          int64_t used, bool in_order, bool new_rank)
{
    if (new_rank) {
        r->proc_src = sid;
        return;
    }
    if (!in_order) return;
    if (sid != r->proc_src && (j->src.v[sid].session != j->src.v[r->proc_src].session ||
                               src_pid(j, sid) != src_pid(j, r->proc_src))) {
        r->proc_src = sid;
        r->warm = true;
        rank_cold_t *c = rk_cold(j, r);
        c->warm_hi = used;
        c->warm_hi_ts = ts;
    } else if (r->warm) {
        rank_cold_t *c = rk_cold(j, r);
        int64_t thr;
        if (!sw_spike_threshold(c->warm_hi, det->params.spike_min_bytes, det->params.spike_fraction,
                                &thr))
            thr = INT64_MAX;
        if (used > c->warm_hi) {
            if (used - c->warm_hi > thr / 2) c->warm_hi_ts = ts;
            c->warm_hi = used;
        }
        int64_t iv = rank_interval_ns(j, r);
        int64_t settle = iv > INT64_MAX / 5 ? INT64_MAX
                                            : (5 * iv > 5000000000 ? 5 * iv : 5000000000);
        if ((uint64_t)ts - (uint64_t)c->warm_hi_ts >= (uint64_t)settle) r->warm = false;
    }
    if (r->warm && ts < INT64_MAX && ts + 1 > rk_spent(j, r)) rk_cold(j, r)->spent_ts = ts + 1;
}

static void window_changed(job_t *j, uint32_t n_before, uint32_t n_after)
{
    j->seen.retained += n_after;
    j->seen.retained -= n_before;
    if (n_before < 2 && n_after >= 2) j->seen.insufficient--;
    else if (n_before >= 2 && n_after < 2) j->seen.insufficient++;
}

static void stale_sweep(sw_detector_t *det, job_t *j)
{
    while (j->cands.nheap) {
        /* Keys are lazy (at most the rank's newest_ts): a top that is not
         * stale means no rank is; a stale one is checked with its rank's
         * newest time and re-keyed when that is newer. */
        if (j->seen.newest_ts - j->cands.heap[0].key <= det->stale_ns) break;
        uint32_t ri = j->cands.heap[0].ri;
        rank_t *r = &j->ranks.v[ri];
        if (r->newest_ts != j->cands.heap[0].key) {
            heap_rekey_top(j, r->newest_ts);
            continue;
        }
        heap_pop_top(j);
        sw_win_ctx_t ctx = {j->src.v,      j->src.strs,        &j->src.wide,
                            &j->seen.gaps, &j->seen.intervals, NULL};
        uint32_t n_before = r->win.n;
        sw_win_empty(&r->win, &ctx);
        window_changed(j, n_before, 0);
        sw_det_cand_refresh(det, j, ri);
        det->st.stale_windows++;
    }
}

/* The job of the event sw_detect_prefetch() announced, when @p ev is that
 * event and nothing moved since (its id is compared, not hashed again). */
static job_t *announced_job(const sw_detector_t *det, const sw_event_t *ev)
{
    if (ev != det->cur.ev || det->cur.gen != det->gen) return NULL;
    job_t *j = det->cur.j;
    return sw_det_job_matches(j, ev->has_job_id, ev->job_id.ptr, ev->job_id.len) ? j : NULL;
}

/* Whether @p ev's rank of job @p j is the one sw_detect_prefetch()
 * announced (*ri: its index), nothing having moved since: no lookup. */
static bool announced_rank(const sw_detector_t *det, const job_t *j, const sw_event_t *ev,
                           uint32_t *ri)
{
    if (j != det->cur.j || det->cur.ev != ev || det->cur.gen != det->gen ||
        j->ranks.v[det->cur.ri].rank != ev->rank)
        return false;
    *ri = det->cur.ri;
    return true;
}

/* The out-of-time guard (SPEC 6, before step 1; sw_tguard.h): false when
 * the sample is refused (errstr says why; nothing else changed). */
static bool in_time(sw_detector_t *det, job_t *j, const sw_event_t *ev, int64_t offset,
                    char *errstr, size_t errstr_size)
{
    sw_tguard_t *g = &j->tguard;
    sw_tguard_rank_t rk = {false, 0, 0};
    uint32_t ri;
    if (!g->has && j->ranks.n) { /* a job restored from a snapshot */
        int64_t lo = j->ranks.v[0].first_ts;
        for (size_t i = 1; i < j->ranks.n; i++)
            if (j->ranks.v[i].first_ts < lo) lo = j->ranks.v[i].first_ts;
        sw_tguard_restore(g, lo, j->seen.newest_ts);
    }
    if (announced_rank(det, j, ev, &ri) || sw_imap_get(&j->ranks.map, ev->rank, &ri))
        rk = (sw_tguard_rank_t){true, j->ranks.v[ri].first_ts, j->ranks.v[ri].newest_ts};
    if (sw_tguard_check(g, &rk, ev->rank, ev->timestamp_ns, j->ranks.n)) return true;
    det->st.clock_refused++;
    sw_tguard_refused_add(g, offset); /* a state rebuild skips it too */
    sw_errfmt(errstr, errstr_size,
              "timestamp_ns %lld of rank %lld is out of time: more than 1 h from the rank's "
              "samples and from the job's (%lld..%lld); refused",
              (long long)ev->timestamp_ns, (long long)ev->rank, (long long)g->lo, (long long)g->hi);
    return false;
}

static void prefetch_window(sw_detector_t *det);

/* ---- sw_detect_feed_src, step by step ------------------------------------ */

/* The start of every feed: the room a previous refusal asked for (granted:
 * made, even if another engine took some of it meanwhile, one job or rank
 * over at most; served: nothing more could go, refused for good), and the
 * outputs of the previous event forgotten. */
static void feed_begin(sw_detector_t *det, const sw_record_t **rec, bool *granted, bool *served)
{
    det->arrivals++;
    *granted = det->room_served && !det->room_final;
    *served = det->room_served && det->room_final;
    det->room_served = det->room_final = false;
    det->room_want = 0;
    *rec = NULL;
    det->warning.len = 0;
    sw_crash_begin(det);
}

/* A sample's rank and world_size within max.ranks.per.job (or the largest
 * supported world size). */
static sw_err_t feed_limits(sw_detector_t *det, const sw_event_t *ev, bool sample, char *errstr,
                            size_t errstr_size)
{
    bool hard;
    int64_t max_ranks = sw_det_rank_limit(det, &hard);
    if (sample && (ev->rank >= max_ranks || ev->world_size > max_ranks)) {
        det->st.limit_rejects++;
        bool ws = ev->world_size > max_ranks;
        sw_det_limit_error(
            errstr, errstr_size, ws ? "world_size " : "rank ", ws ? ev->world_size : ev->rank,
            hard ? " exceeds the largest supported world size (" : " exceeds max.ranks.per.job (",
            max_ranks);
        return SW_ERR_LIMIT;
    }
    return SW_OK;
}

/* The event's job: found, or made when max.jobs and the memory budget
 * allow (evicting one job at most). NULL when refused (*err; an error
 * with det->arrivals taken back: room was asked for, the event is fed
 * again). *created: the event made it. */
static job_t *feed_job(sw_detector_t *det, const sw_event_t *ev, int64_t offset, bool sample,
                       bool granted, bool served, bool *created, sw_err_t *err, char *errstr,
                       size_t errstr_size)
{
    job_t *j = announced_job(det, ev);
    if (!j) j = sw_det_jmap_find(det, ev->has_job_id, ev->job_id.ptr, ev->job_id.len);
    *created = false;
    *err = SW_ERR_LIMIT;
    /* What the event adds when it creates a rank (in a pool, asked for with
     * its job's, in one request). */
    size_t rank_more = sample && !ev->counterless ? ACCT_NEW_RANK + sw_win_bytes(1) : 0;
    if (!j) {
        bool full = det->params.max_jobs > 0 && det->live_jobs >= (size_t)det->params.max_jobs;
        size_t more = ACCT_NEW_JOB + (det->pool ? rank_more : 0);
        bool room = granted || sw_det_budget_room(det, NULL, more);
        if (!room && sw_det_room_ask(det, more, served)) {
            det->arrivals--; /* nothing changed: it is fed again */
            return NULL;
        }
        /* In a pool, pressure is the pool's account, exact where it grows. */
        bool press = det->pressure && !det->pool;
        if ((full || press || !room) && (!room || !sw_det_evict_one(det, NULL, 1))) {
            det->st.limit_rejects++;
            if (full) {
                sw_det_limit_error(errstr, errstr_size, "a new job would exceed max.jobs", -1, " (",
                                   det->params.max_jobs);
            } else {
                det->st.refused_jobs++;
                sw_det_memory_error(det, errstr, errstr_size, "a new job");
            }
            return NULL;
        }
        j = sw_det_job_create(det, ev, offset);
        sw_det_acct_job(det, j);
        *created = true;
    } else if (rank_more && det->pool && !served && !granted) {
        uint32_t ri0;
        if (!sw_imap_get(&j->ranks.map, ev->rank, &ri0) && !sw_det_budget_room(det, j, rank_more) &&
            sw_det_room_ask(det, rank_more, served)) {
            det->arrivals--; /* nothing changed: it is fed again */
            return NULL;
        }
    }
    return j;
}

/* The job was active now: its latest event, least recently active last. */
static void feed_touch(sw_detector_t *det, job_t *j, int64_t now_ms, int64_t offset)
{
    j->id.last_ms = now_ms;
    j->id.last_off = offset;
    j->id.last_seq = det->arrivals;
    if (j->in_junk && j != det->junk_tail) { /* least recently active first */
        sw_det_junk_del(det, j);
        sw_det_junk_add(det, j);
    }
}

/* An event other than a sample: the phase index and SPEC 8. */
static void feed_other(sw_detector_t *det, job_t *j, const sw_event_t *ev, int64_t offset)
{
    /* An event of a (session, rank) whose group a rank keeps pending:
     * made first, with what the rank's samples gave it. */
    uint32_t pri;
    if (ev->has_session_id && sw_imap_get(&j->ranks.map, ev->rank, &pri) &&
        rk_phase_pending(&j->ranks.v[pri])) {
        rank_t *pr = &j->ranks.v[pri];
        sw_str_t t = sw_intern_get(j->src.strs, pr->phase_grp & ~PHASE_PEND);
        if (t.len == ev->session_id.len && sw_bytes_eq(t.ptr, ev->session_id.ptr, t.len))
            sw_det_phase_settle(j, pr);
    }
    sw_phase_add(j->phase, ev);
    sw_crash_feed(det, j, NIL, ev, false, offset);
}

/* The sample's rank index: the one prefetched, found, or made when the
 * memory budget allows (NIL: refused, errstr says why). */
static uint32_t feed_rank(sw_detector_t *det, job_t *j, const sw_event_t *ev, bool asked,
                          bool *new_rank, char *errstr, size_t errstr_size)
{
    uint32_t ri;
    *new_rank = false;
    if (!announced_rank(det, j, ev, &ri) && !sw_imap_get(&j->ranks.map, ev->rank, &ri)) {
        /* In a pool, a job made by this event had its first rank's room
         * asked for with it (asked). */
        if (!(asked && det->pool) && !sw_det_budget_room(det, j, ACCT_NEW_RANK + sw_win_bytes(1))) {
            det->st.limit_rejects++;
            sw_det_memory_error(det, errstr, errstr_size, "a new rank");
            return NIL;
        }
        ri = sw_det_rank_create(det, j, ev->rank);
        *new_rank = true;
    }
    return ri;
}

/* The phase index sees every event, duplicates included (SPEC 6); a
 * sample only extends its group's session end. A rank's first sample
 * leaves its group pending (PHASE_PEND) unless it has one already: its
 * newest_ts is then the session end, as long as the session stays. */
static void feed_phase(job_t *j, rank_t *r, const sw_event_t *ev, uint32_t src, bool new_rank)
{
    if (rk_phase_pending(r) &&
        (!ev->has_session_id || (r->phase_grp & ~PHASE_PEND) != j->src.v[src].session)) {
        sw_det_phase_settle(j, r);
        r->phase_grp = NIL;
    }
    if (ev->has_session_id && !rk_phase_pending(r)) {
        if (r->phase_grp == NIL) {
            uint32_t sid = j->src.v[src].session;
            r->phase_grp = new_rank ? sw_phase_find_sid(j->phase, sid, ev->rank)
                                    : sw_phase_group_sid(j->phase, sid, ev->rank);
            if (r->phase_grp == NIL) r->phase_grp = PHASE_PEND | sid;
        }
        if (!rk_phase_pending(r)) sw_phase_touch(j->phase, r->phase_grp, ev->timestamp_ns);
    }
}

/* Steps 1 (duplicate) and 2 (insert) in one search: a duplicate leaves
 * the window untouched. Then the memory account. */
static sw_win_res_t feed_window(sw_detector_t *det, job_t *j, rank_t *r, const sw_event_t *ev,
                                uint32_t src, int64_t offset, bool new_rank)
{
    sw_win_ctx_t ctx = {j->src.v,      j->src.strs,        &j->src.wide,
                        &j->seen.gaps, &j->seen.intervals, &det->winpool};
    uint32_t cap_before = r->win.cap;
    sw_win_res_t wr = sw_win_insert(&r->win, &ctx, ev->timestamp_ns, ev->device_used_bytes, src,
                                    offset);
    if (r->win.cap != cap_before)
        j->ranks.win_bytes += sw_win_bytes(r->win.cap) - sw_win_bytes(cap_before);
    if (new_rank || r->win.cap != cap_before || (det->arrivals & 255) == 0) {
        sw_det_acct_job(det, j);
        if (det->acct > det->budget && det->budget) sw_det_budget_room(det, j, 0); /* others go */
    }
    return wr;
}

/* The rank's times (first, newest; a restart) after a new sample.
 * @returns whether its first timestamp moved back. */
static bool feed_rank_times(sw_detector_t *det, job_t *j, rank_t *r, const sw_event_t *ev,
                            uint32_t src, bool new_rank)
{
    int64_t ts = ev->timestamp_ns;
    bool first_changed = false;
    bool in_order = new_rank || ts > r->newest_ts;
    restart_track(det, j, r, src, ts, ev->device_used_bytes, in_order, new_rank);
    if (new_rank) {
        r->first_ts = r->newest_ts = ts;
        if (!j->id.has_sample || ts < j->seen.first_min_ts) j->seen.first_min_ts = ts;
        if (!j->id.has_sample || ts > j->seen.first_max_ts) j->seen.first_max_ts = ts;
    } else {
        if (ts < r->newest_ts) det->st.late++;
        if (ts < r->first_ts) {
            r->first_ts = ts;
            first_changed = true;
            if (ts < j->seen.first_min_ts) j->seen.first_min_ts = ts;
        }
        if (ts > r->newest_ts) r->newest_ts = ts;
    }
    return first_changed;
}

/* The job's side of a new sample: world-size claims, newest time,
 * retained samples, phase spans folded, the staleness heap. */
static void feed_job_state(sw_detector_t *det, job_t *j, uint32_t ri, const sw_event_t *ev,
                           uint32_t n_before)
{
    rank_t *r = &j->ranks.v[ri];
    int64_t ts = ev->timestamp_ns;
    if (ev->world_size > 1) claim_add(j, ev->world_size);
    if (!j->seen.has_newest || ts > j->seen.newest_ts) {
        j->seen.newest_ts = ts;
        j->seen.has_newest = true;
    }
    j->id.has_sample = true;
    window_changed(j, n_before, r->win.n);
    /* Phase spans that closed before this rank's full window can no longer
     * be attributed (a later sample older than the window is too old). */
    if (r->phase_grp != NIL && !rk_phase_pending(r) &&
        sw_win_full(&r->win, (uint32_t)det->params.window_samples) &&
        sw_phase_fold_due(j->phase, r->phase_grp))
        det->st.phase_dropped += sw_phase_fold(j->phase, ev->rank, r->win.slot[r->win.head].ts);
    if (r->win.n) sw_det_heap_update(j, ri, r->newest_ts);
}

/* The rank's candidate after the window changed. */
static void feed_cand(sw_detector_t *det, job_t *j, uint32_t ri, sw_win_res_t wr,
                      bool first_changed, int64_t top_before)
{
    rank_t *r = &j->ranks.v[ri];
    if (wr != SW_WIN_TOO_OLD || first_changed || r->warm) {
        /* A quiet sample: a rank with no candidate whose largest rising
         * run gain is below the window's threshold has none after it
         * either, spent runs or not (sw_win_candidate_split's first
         * test); the refresh would only clear the window's cached
         * candidate. */
        int64_t thr;
        if (r->cand == NIL &&
            (sw_win_max_gain(&r->win) < det->params.spike_min_bytes || r->win.n < 2 ||
             !sw_spike_threshold(r->win.top_used, det->params.spike_min_bytes,
                                 det->params.spike_fraction, &thr) ||
             sw_win_max_gain(&r->win) < thr)) {
            r->win.cand_valid = false;
            return;
        }
        bool had = r->cand != NIL;
        int64_t base_before = had ? rc_of(j, r)->base : 0;
        sw_det_cand_refresh(det, j, ri);
        /* A run that qualifies only because a higher peak left the window
         * (its threshold fell), long after it rose, is no new spike: it
         * was too small to count when it happened, and the storm it was
         * part of is over. It is spent. */
        for (int k = 0;
             k < 4 && r->cand != NIL && (!had || rc_of(j, r)->base != base_before) && r->win.n &&
             r->win.top_used < top_before && rc_of(j, r)->base != INT64_MIN &&
             rc_of(j, r)->base != INT64_MAX && old_spike(j, r);
             k++) {
            rk_cold(j, r)->spent_ts = rc_of(j, r)->base + 1;
            sw_det_cand_refresh(det, j, ri);
        }
    }
}

/* Steps 4-5 (the lifecycle), then SPEC 8: its records follow SPEC 6's
 * (sw_detect_next); the blind ranks it lists go on SPEC 6's record,
 * det->rec. */
static void feed_verdict(sw_detector_t *det, job_t *j, uint32_t ri, const sw_event_t *ev,
                         int64_t offset, const sw_record_t **rec)
{
    /* No open episode, no candidate on the fed rank and fewer than two in
     * the job: the lifecycle has nothing to do (every step of its closed
     * branch needs the rank's candidate or two of them; see
     * sw_det_lifecycle). */
    if (!sw_det_ep_open(j) && j->ranks.v[ri].cand == NIL && j->cands.n < 2) *rec = NULL;
    else *rec = sw_det_lifecycle(det, j, ri, ev->timestamp_ns, offset);
    bool blind = *rec == &det->rec && det->rec.action != SW_ACTION_SUMMARY;
    sw_crash_feed(det, j, ri, ev, blind, offset);
    if (blind) sw_crash_blind(det, &det->rec.blind_ranks, &det->rec.n_blind);
}

sw_err_t sw_detect_feed_src(sw_detector_t *det, const sw_event_t *ev, int64_t now_ms, int source,
                            int64_t input_offset, const sw_record_t **rec, char *errstr,
                            size_t errstr_size)
{
    if (source < 0 || source >= SW_DETECT_SOURCES) {
        *rec = NULL;
        sw_errfmt(errstr, errstr_size, "no input source %d (0 or 1)", source);
        return SW_ERR_INVALID_ARG;
    }
    /* From here on "offset" is the tag: offset and source in one. */
    int64_t offset = det_tag(source, input_offset);
    bool granted, served, created;
    feed_begin(det, rec, &granted, &served);
    bool sample = ev->kind == SW_EV_SAMPLE;
    sw_err_t err = feed_limits(det, ev, sample, errstr, errstr_size);
    if (err) return err;
    job_t *j = feed_job(det, ev, offset, sample, granted, served, &created, &err, errstr,
                        errstr_size);
    if (!j) return err;
    if (sample && !ev->counterless && !in_time(det, j, ev, offset, errstr, errstr_size))
        return SW_ERR_CLOCK;
    feed_touch(det, j, now_ms, offset);
    if (ev->counterless) {
        /* SPEC 2 (v4): dropped before the analysis, only counted for its
         * job's notes; it keeps the job active. */
        det->st.counterless++;
        j->id.counterless++;
        return SW_OK;
    }
    det->st.events++;
    if (!sample) {
        feed_other(det, j, ev, offset);
        prefetch_window(det);
        return SW_OK;
    }
    det->st.samples++;
    bool new_rank;
    uint32_t ri = feed_rank(det, j, ev, created || granted, &new_rank, errstr, errstr_size);
    if (ri == NIL) return SW_ERR_LIMIT;
    rank_t *r = &j->ranks.v[ri];
    uint32_t src = sw_det_src_get(j, r, ev);
    feed_phase(j, r, ev, src, new_rank);
    uint32_t n_before = r->win.n;
    int64_t top_before = r->win.n ? r->win.top_used : INT64_MIN;
    sw_win_res_t wr = feed_window(det, j, r, ev, src, offset, new_rank);
    if (wr == SW_WIN_DUP) {
        det->st.duplicates++;
        prefetch_window(det);
        return SW_OK;
    }
    bool first_changed = feed_rank_times(det, j, r, ev, src, new_rank);
    if (wr == SW_WIN_TOO_OLD) det->st.too_old++;
    feed_job_state(det, j, ri, ev, n_before);
    feed_cand(det, j, ri, wr, first_changed, top_before);
    sw_det_warn_check(det, j, r, ev->timestamp_ns);
    stale_sweep(det, j); /* step 3: staleness */
    feed_verdict(det, j, ri, ev, offset, rec);
    prefetch_window(det);
    return SW_OK;
}

sw_err_t sw_detect_feed(sw_detector_t *det, const sw_event_t *ev, int64_t now_ms,
                        const sw_record_t **rec, char *errstr, size_t errstr_size)
{
    /* Without input offsets the arrival number stands in for them. */
    return sw_detect_feed_at(det, ev, now_ms, (int64_t)det->arrivals, rec, errstr, errstr_size);
}

sw_err_t sw_detect_feed_at(sw_detector_t *det, const sw_event_t *ev, int64_t now_ms, int64_t offset,
                           const sw_record_t **rec, char *errstr, size_t errstr_size)
{
    return sw_detect_feed_src(det, ev, now_ms, 0, offset, rec, errstr, errstr_size);
}

/* Prefetching runs two events ahead of the engine's use, in two stages
 * so that neither waits for memory: sw_detect_prefetch() finds the next
 * event's rank (hash tables that stay cached) and requests its record;
 * once the current event is done, that record has arrived and
 * prefetch_window() requests the window lines it points to, which then
 * load while the caller decodes the event after. */
void sw_detect_prefetch(sw_detector_t *det, const sw_event_t *ev)
{
    det->cur = det->pf;
    det->pf.ev = NULL;
    if (ev->kind != SW_EV_SAMPLE) return;
    /* Producers send a job's events in runs: compare with the last job
     * found before hashing the id. */
    job_t *j = det->pf_last_j;
    if (!j || det->pf_last_gen != det->gen ||
        !sw_det_job_matches(j, ev->has_job_id, ev->job_id.ptr, ev->job_id.len)) {
        j = sw_det_jmap_find(det, ev->has_job_id, ev->job_id.ptr, ev->job_id.len);
        det->pf_last_j = j;
        det->pf_last_gen = det->gen;
    }
    uint32_t ri;
    if (!j || !sw_imap_get(&j->ranks.map, ev->rank, &ri)) return;
    const char *r = (const char *)&j->ranks.v[ri];
    for (size_t o = 0; o < sizeof(rank_t); o += 64) __builtin_prefetch(r + o, 1);
    __builtin_prefetch(r + sizeof(rank_t) - 1, 1);
    det->pf.ev = ev;
    det->pf.j = j;
    det->pf.ri = ri;
    det->pf.gen = det->gen;
    det->pf_win_done = false;
}

static void prefetch_window(sw_detector_t *det)
{
    if (!det->pf.ev || det->pf_win_done || det->pf.gen != det->gen) return;
    det->pf_win_done = true;
    const job_t *j = det->pf.j;
    uint32_t ri = det->pf.ri;
    const rank_t *r = &j->ranks.v[ri];
    sw_win_prefetch(&r->win);
    if (r->last_src != NIL) __builtin_prefetch(&j->src.v[r->last_src]);
    if (r->phase_grp != NIL && !rk_phase_pending(r))
        __builtin_prefetch(sw_phase_group_addr(j->phase, r->phase_grp), 1);
    if (j->cands.hpos[ri] != NIL) __builtin_prefetch(&j->cands.heap[j->cands.hpos[ri]], 1);
}
