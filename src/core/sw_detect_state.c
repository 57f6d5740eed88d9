/* Snapshots, restore and rebuild of the stream engine (see sw_detect_int.h). */
#include "sw_detect_cands.h"

/* ---- state snapshots (restore after a restart or a rebalance) -----------
 * A snapshot holds everything but the windows: per job its latest event,
 * claims, lifecycle, last signature and phase index, and per rank the first
 * and newest timestamps and, per source, the smallest offset its window's
 * samples came from (its floor). The windows are rebuilt by re-reading the
 * input from sw_detect_min_offset_src(): a window is exactly the
 * window.samples greatest non-duplicate samples the rank received after its
 * last emptying; every sample at or past a floor came after that emptying,
 * and every one it holds is there, so inserting them again, each source in
 * order, into an empty window gives the same window (a sample of the range
 * that the window had dropped is dropped again: greater ones come too). */

/* SWS3: the lifecycle of issue 23 (per-rank spent runs, restarts, episode
 * members, the published answer and its tie) in place of SWS2's horizon.
 * Also the count of v4 samples without device_used_bytes per job, and
 * SPEC 8's state in its own section after the jobs (sw_crash_save), then
 * the out-of-time guards, job by job.
 * SWS1 and SWS2 snapshots are refused by name: the partition is then
 * processed from its committed offset without state, never misread. */
/* SWS4: engines fed from two sources (sw_detect_feed_src): a next offset
 * per source, per rank a floor per source in place of the offset of its
 * last emptying (a job's first offset is gone with it), jobs' latest
 * events as tags with their arrival numbers, refusals as tags. SWS3
 * snapshots restore (one source: floors from the emptying offsets). */
/* SWS5: the overlap rule (issue 36): per rank the split of a spent run
 * (rank_cold_t.split_ts), per job the reach of the open episode's front.
 * SWS4 and SWS3 snapshots restore (no split; no front learnt, which tells
 * no storm from another until the next trigger). */
/* SWS6: per rank its last source (host, pid, session, interval, device,
 * local rank), which the windows' rebuild cannot give a rank whose window
 * has emptied (a silent rank's crash record names where it last reported
 * from). SWS5 and older restore without it (such a rank's source is then
 * unknown until it reports). */
/* The layout the previous release reads, with an extension (issue 35):
 * the body in SWS4's layout (v0.3.0 restores it) and SPEC 8's section as
 * SW8a, what SWS5/SWS6/SW8b added in an extension "SWX6" that the daemon
 * keeps beside the body (after the envelope's parts, where v0.3.0 reads
 * nothing): per live job its fronts' reach, per rank its split, its
 * episode base and last source, then per job with SPEC 8's state whether
 * its crash ended at the summary and its death count. A body with its
 * extension restores to what SWS6 restores; without it, as SWS4. */
#define EXT_MAGIC "SWX6"
#define SNAP_MAGIC "SWS6"
#define SNAP_MAGIC_SWS5 "SWS5"
#define SNAP_MAGIC_SWS4 "SWS4"
#define SNAP_MAGIC_SWS3 "SWS3"
#define SNAP_MAGIC_SWS1 "SWS1"
#define SNAP_MAGIC_SWS2 "SWS2"

static bool str_ok(sw_str_t s);

/* A rank's last source (SWS6): as the snapshot gave it while restoring
 * (@p rp not NULL), else rank_t.last_src. */
static void last_put(sw_buf_t *out, const job_t *j, const rank_t *r, const rb_proc_t *rp)
{
    bool has = rp ? rp->has_last : r->last_src != NIL;
    sw_vput_u(out, has);
    if (!has) return;
    uint32_t id = r->last_src;
    sw_vput_i(out, rp ? rp->l_pid : src_pid(j, id));
    sw_vput_i(out, rp ? rp->l_interval : src_interval(j, id));
    sw_vput_i(out, rp ? rp->l_device : src_device(j, id));
    sw_vput_i(out, rp ? rp->l_local_rank : src_local_rank(j, id));
    uint32_t host = rp ? rp->l_host : j->src.v[id].host;
    uint32_t sess = rp ? rp->l_session : j->src.v[id].session;
    sw_vput_bytes(out, sw_intern_get(j->src.strs, host));
    sw_vput_u(out, sess != 0);
    sw_vput_bytes(out, sw_intern_get(j->src.strs, sess));
}

/* Read what last_put wrote into @p rp; false on a bad one. */
static bool last_get(sw_vrd_t *r, job_t *j, rb_proc_t *rp)
{
    rp->has_last = sw_vget_u(r) != 0;
    if (!rp->has_last) return !r->bad;
    rp->l_pid = sw_vget_i(r);
    rp->l_interval = sw_vget_i(r);
    rp->l_device = sw_vget_i(r);
    rp->l_local_rank = sw_vget_i(r);
    sw_str_t host = sw_vget_bytes(r);
    bool has_sess = sw_vget_u(r) != 0;
    sw_str_t sess = sw_vget_bytes(r);
    if (r->bad || !str_ok(host) || !str_ok(sess)) return false;
    rp->l_host = sw_intern_add(j->src.strs, host);
    rp->l_session = has_sess ? sw_intern_add(j->src.strs, sess) : 0;
    return true;
}

static void params_put(sw_buf_t *b, const sw_params_t *p)
{
    uint64_t frac;
    memcpy(&frac, &p->spike_fraction, 8);
    sw_vput_i(b, p->window_samples);
    sw_vput_i(b, p->stale_ms);
    sw_vput_i(b, p->spike_min_bytes);
    sw_vput_u(b, frac);
    sw_vput_i(b, p->skew_note_multiplier);
}

/* Rank @p k's floors (see above): its window's smallest tag per source as
 * an offset, INT64_MAX for none; while restoring, the snapshot's. */
static void rank_floors(const sw_detector_t *det, const job_t *j, size_t k,
                        int64_t floor[SW_DETECT_SOURCES])
{
    if (det->rebuild_x[0] != INT64_MIN) {
        for (int s = 0; s < SW_DETECT_SOURCES; s++)
            floor[s] = j->ranks.rb_floor ? j->ranks.rb_floor[k * SW_DETECT_SOURCES + (size_t)s]
                                         : INT64_MAX;
        return;
    }
    sw_win_min_offsets(&j->ranks.v[k].win, floor);
    for (int s = 0; s < SW_DETECT_SOURCES; s++)
        if (floor[s] != INT64_MAX) floor[s] = tag_offset(floor[s]);
}

bool sw_detect_min_offset_src(const sw_detector_t *det, int src, int64_t *offset)
{
    int64_t m = INT64_MAX;
    if (src < 0 || src >= SW_DETECT_SOURCES) { /* no such source: nothing from it */
        *offset = m;
        return false;
    }
    for (size_t i = 0; i < det->njobs; i++) {
        const job_t *j = det->jobs[i];
        if (!j) continue;
        for (size_t k = 0; k < j->ranks.n; k++) {
            int64_t floor[SW_DETECT_SOURCES];
            rank_floors(det, j, k, floor);
            if (floor[src] < m) m = floor[src];
        }
    }
    *offset = m;
    return m != INT64_MAX;
}

bool sw_detect_min_offset(const sw_detector_t *det, int64_t *offset)
{
    return sw_detect_min_offset_src(det, 0, offset);
}

static void i64s_put(sw_buf_t *b, const int64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) sw_vput_i(b, v[i]);
}

static void suspect_put(sw_buf_t *b, const sw_suspect_t *s)
{
    sw_vput_i(b, s->rank);
    sw_vput_i(b, s->first_spike_timestamp_ns);
    sw_vput_u(b, s->aligned_first_spike_timestamp_ns);
    sw_vput_i(b, s->peak_delta_bytes);
    sw_vput_i(b, s->spike_window_samples);
    sw_vput_i(b, s->lead_over_cluster_onset_ns);
    sw_vput_u(b, s->confidence);
    sw_vput_i(b, s->supporting_ranks);
    sw_vput_u(b, s->has_session);
    sw_vput_bytes(b, s->session_id);
    sw_vput_u(b, s->phase.resolution);
    sw_vput_u(b, s->phase.n_paths);
    for (size_t i = 0; i < s->phase.n_paths; i++) sw_vput_bytes(b, s->phase.paths[i]);
    sw_vput_u(b, s->phase.has_summary);
    sw_vput_bytes(b, s->phase.summary_path);
    sw_vput_bytes(b, s->phase.path);
    sw_vput_bytes(b, s->phase.scope_id);
    sw_vput_i(b, s->phase.thread_id);
    sw_vput_bytes(b, s->phase.thread_name);
    sw_vput_u(b, s->has_source);
    sw_vput_bytes(b, s->host);
    sw_vput_i(b, s->pid);
    sw_vput_u(b, s->has_device_id);
    sw_vput_i(b, s->device_id);
    sw_vput_u(b, s->has_local_rank);
    sw_vput_i(b, s->local_rank);
    sw_vput_u(b, s->n_timeline);
    i64s_put(b, s->timeline_aligned_ns, s->n_timeline);
    i64s_put(b, s->timeline_used, s->n_timeline);
    sw_vput_u(b, s->timeline_spike_start);
    sw_vput_u(b, s->timeline_spike);
    sw_vput_i(b, s->timeline_window);
}

static bool str_ok(sw_str_t s)
{
    return sw_utf8_bad_at(s.ptr, s.len, true) == s.len;
}

/* Read one suspect written by suspect_put into @p a; strings are checked
 * as the decoders check them. @returns false when malformed. */
static bool suspect_get(sw_vrd_t *r, sw_arena_t *a, sw_suspect_t *s)
{
    memset(s, 0, sizeof(*s));
    s->rank = sw_vget_i(r);
    s->first_spike_timestamp_ns = sw_vget_i(r);
    s->aligned_first_spike_timestamp_ns = sw_vget_u(r);
    s->peak_delta_bytes = sw_vget_i(r);
    s->spike_window_samples = sw_vget_i(r);
    s->lead_over_cluster_onset_ns = sw_vget_i(r);
    uint64_t conf = sw_vget_u(r);
    s->supporting_ranks = sw_vget_i(r);
    s->has_session = sw_vget_u(r) != 0;
    s->session_id = sw_arena_str(a, sw_vget_bytes(r));
    uint64_t res = sw_vget_u(r);
    uint64_t np = sw_vget_u(r);
    if (r->bad || conf > SW_CONFIDENCE_HIGH || res > SW_PHASE_AMBIGUOUS ||
        np > (uint64_t)(r->end - r->p))
        return false;
    s->confidence = (sw_confidence_t)conf;
    s->phase.resolution = (sw_phase_res_t)res;
    s->phase.n_paths = np;
    if (np) {
        sw_str_t *paths = sw_arena_alloc(a, np * sizeof(*paths));
        for (uint64_t i = 0; i < np; i++) {
            paths[i] = sw_arena_str(a, sw_vget_bytes(r));
            if (!str_ok(paths[i])) return false;
        }
        s->phase.paths = paths;
    }
    s->phase.has_summary = sw_vget_u(r) != 0;
    s->phase.summary_path = sw_arena_str(a, sw_vget_bytes(r));
    s->phase.path = sw_arena_str(a, sw_vget_bytes(r));
    s->phase.scope_id = sw_arena_str(a, sw_vget_bytes(r));
    s->phase.thread_id = sw_vget_i(r);
    s->phase.thread_name = sw_arena_str(a, sw_vget_bytes(r));
    s->has_source = sw_vget_u(r) != 0;
    s->host = sw_arena_str(a, sw_vget_bytes(r));
    s->pid = sw_vget_i(r);
    s->has_device_id = sw_vget_u(r) != 0;
    s->device_id = sw_vget_i(r);
    s->has_local_rank = sw_vget_u(r) != 0;
    s->local_rank = sw_vget_i(r);
    uint64_t nt = sw_vget_u(r);
    if (r->bad || nt > SW_TIMELINE_MAX_POINTS || !str_ok(s->session_id) ||
        !str_ok(s->phase.summary_path) || !str_ok(s->phase.path) || !str_ok(s->phase.scope_id) ||
        !str_ok(s->phase.thread_name) || !str_ok(s->host) || s->rank < 0 ||
        s->first_spike_timestamp_ns < 0 || s->supporting_ranks < 1)
        return false;
    s->n_timeline = nt;
    if (nt) {
        int64_t *al = sw_arena_alloc(a, nt * sizeof(*al));
        int64_t *us = sw_arena_alloc(a, nt * sizeof(*us));
        for (uint64_t i = 0; i < nt; i++) al[i] = sw_vget_i(r);
        for (uint64_t i = 0; i < nt; i++) us[i] = sw_vget_i(r);
        s->timeline_aligned_ns = al;
        s->timeline_used = us;
    }
    s->timeline_spike_start = sw_vget_u(r);
    s->timeline_spike = sw_vget_u(r);
    s->timeline_window = sw_vget_i(r);
    if (r->bad || (nt && (s->timeline_spike_start >= nt || s->timeline_spike >= nt))) return false;
    return true;
}

void sw_detect_snapshot(const sw_detector_t *det, int64_t next_offset, sw_buf_t *out)
{
    const int64_t next[SW_DETECT_SOURCES] = {next_offset, 0};
    sw_detect_snapshot_src(det, next, out);
}

/* The snapshot into @p out: SWS6, or with @p ext SWS4's body and what
 * it lacks into @p ext (the compatible layout above). */
static void snapshot_put(const sw_detector_t *det, const int64_t next[SW_DETECT_SOURCES],
                         sw_buf_t *out, sw_buf_t *ext)
{
    sw_buf_t *more = ext ? ext : out; /* where SWS5's and SWS6's fields go */
    sw_buf_put(out, ext ? SNAP_MAGIC_SWS4 : SNAP_MAGIC, 4);
    if (ext) sw_buf_put(ext, EXT_MAGIC, 4);
    params_put(out, &det->params);
    for (int s = 0; s < SW_DETECT_SOURCES; s++) sw_vput_i(out, next[s]);
    sw_vput_u(out, det->arrivals);
    sw_vput_u(out, det->live_jobs);
    for (size_t i = 0; i < det->njobs; i++) {
        const job_t *j = det->jobs[i];
        if (!j) continue;
        sw_vput_u(out, j->id.has);
        sw_vput_bytes(out, (sw_str_t){j->id.str ? j->id.str : "", j->id.len});
        sw_vput_i(out, j->id.last_off);
        sw_vput_u(out, j->id.last_seq);
        sw_vput_u(out, j->id.has_sample);
        sw_vput_u(out, j->id.counterless);
        sw_vput_u(out, j->claims.seq);
        sw_vput_i(out, j->claims.leader);
        sw_vput_u(out, j->claims.n);
        for (size_t k = 0; k < j->claims.n; k++) {
            sw_vput_i(out, j->claims.v[k].ws);
            sw_vput_u(out, j->claims.v[k].count);
            sw_vput_u(out, j->claims.v[k].first);
        }
        sw_vput_u(out, j->seen.has_newest);
        sw_vput_i(out, j->seen.newest_ts);
        sw_vput_u(out, sw_det_ep_open(j));
        sw_vput_i(out, j->ep.no);
        sw_vput_i(out, j->ep.revision);
        sw_vput_i(out, j->ep.trig_conf);
        sw_vput_i(out, j->ep.n_updates);
        sw_vput_u(out, j->ep.state == SW_EP_PENDING);
        sw_vput_i(out, j->ep.pend_ts);
        sw_vput_i(out, j->ep.first_rel);
        sw_vput_i(out, j->ep.last_rel);
        sw_vput_u(out, j->ep.aged);
        sw_vput_i(out, j->ep.aged_last_rel);
        sw_vput_u(out, j->seen.warned);
        sw_vput_i(out, j->seen.first_min_ts);
        sw_vput_i(out, j->seen.first_max_ts);
        sw_vput_i(more, j->ep.front_reach);
        sw_vput_i(more, j->ep.front_npr);
        sw_vput_i(more, j->ep.old_reach);
        sw_vput_i(more, j->ep.old_npr);
        if (ext) sw_vput_u(ext, j->ranks.n);
        /* the answer now and the one published */
        sw_vput_u(out, j->sig.valid);
        sw_vput_u(out, j->sig.dirty);
        sw_vput_i(out, j->sig.tie_ns);
        sw_vput_i(out, j->sig.boundary);
        sw_vput_i(out, j->sig.rel0);
        sw_vput_i(out, j->sig.onset_rel);
        sw_vput_u(out, j->sig.earliest);
        sw_vput_u(out, j->sig.conf);
        sw_vput_i(out, j->sig.first);
        sw_vput_i(out, j->sig.onset_rank);
        sw_vput_i(out, j->sig.onset_base);
        sw_vput_u(out, j->sig.n);
        for (size_t k = 0; k < j->sig.n; k++) {
            sw_vput_i(out, j->sig.v[k].rank);
            sw_vput_i(out, j->sig.v[k].spike_ts);
        }
        sw_vput_i(out, j->pub.first);
        sw_vput_i(out, j->pub.onset_rank);
        sw_vput_i(out, j->pub.onset_base);
        sw_vput_i(out, j->pub.rel0);
        sw_vput_u(out, j->pub.conf);
        sw_vput_u(out, j->pub.ntie);
        for (size_t k = 0; k < j->pub.ntie; k++) {
            sw_vput_i(out, j->pub.tie[k].rank);
            sw_vput_i(out, j->pub.tie[k].spike_ts);
        }
        sw_vput_u(out, j->verdict.has);
        sw_vput_u(out, j->verdict.onset);
        sw_vput_u(out, j->verdict.n);
        for (size_t k = 0; k < j->verdict.n; k++) suspect_put(out, &j->verdict.sus[k]);
        sw_vput_u(out, j->verdict.ntie);
        i64s_put(out, j->verdict.tie, j->verdict.ntie);
        sw_vput_u(out, j->ranks.n);
        for (size_t k = 0; k < j->ranks.n; k++) {
            const rank_t *r = &j->ranks.v[k];
            sw_vput_i(out, r->rank);
            sw_vput_i(out, r->first_ts);
            sw_vput_i(out, r->newest_ts);
            int64_t floor[SW_DETECT_SOURCES];
            rank_floors(det, j, k, floor);
            for (int s = 0; s < SW_DETECT_SOURCES; s++)
                sw_vput_i(out, floor[s] == INT64_MAX ? -1 : floor[s]);
            const rank_cold_t *c = r->cold == NIL ? NULL : &j->ranks.colds[r->cold];
            sw_vput_i(out, c ? c->spent_ts : INT64_MIN);
            sw_vput_i(out, c ? c->ep_no : 0);
            sw_vput_i(out, c ? c->ep_base : 0);
            sw_vput_u(out, r->warm);
            sw_vput_i(out, c ? c->warm_hi : 0);
            sw_vput_i(out, c ? c->warm_hi_ts : 0);
            const rb_proc_t *rp = j->ranks.rb_proc ? &j->ranks.rb_proc[k] : NULL;
            const sw_src_t *ps = rp ? NULL : &j->src.v[r->proc_src];
            uint32_t proc_sess = rp ? rp->session : ps->session;
            sw_vput_i(out, rp ? rp->pid : src_pid(j, r->proc_src));
            /* Restored but not rebuilt yet: the marks the windows will get. */
            bool rb = det->rebuild_x[0] != INT64_MIN;
            sw_vput_u(out, rb ? c && c->rs_has_ev : r->win.hr_trunc);
            sw_vput_i(out, rb ? (c ? c->rs_ev_used : 0) : r->win.hr_orig);
            sw_vput_i(more, c ? c->split_ts : INT64_MIN);
            sw_vput_i(more, c ? c->ep_rel : 0);
            sw_vput_u(out, proc_sess != 0);
            sw_vput_bytes(out, sw_intern_get(j->src.strs, proc_sess));
            last_put(more, j, r, rp);
        }
        /* members, by rank (indices follow the order above) */
        sw_vput_u(out, j->ep.nmem);
        for (size_t k = 0; k < j->ep.nmem; k++) sw_vput_u(out, j->ep.mem[k]);
        /* Pending phase groups (PHASE_PEND) as the groups they stand for,
         * after the index's own, by rank. */
        size_t npend = 0;
        for (size_t k = 0; k < j->ranks.n; k++) npend += rk_phase_pending(&j->ranks.v[k]);
        sw_phase_pend_t *pend = npend ? sw_malloc(npend * sizeof(*pend)) : NULL;
        npend = 0;
        for (size_t k = 0; k < j->ranks.n; k++) {
            const rank_t *r = &j->ranks.v[k];
            if (!rk_phase_pending(r)) continue;
            pend[npend].session = r->phase_grp & ~PHASE_PEND;
            pend[npend].rank = r->rank;
            pend[npend++].end_ts = r->newest_ts;
        }
        sw_phase_save_with(j->phase, pend, npend, out);
        free(pend);
    }
    sw_crash_save_as(det, out, ext); /* SPEC 8: its own section, after the jobs */
    /* The out-of-time guards, job by job, after the jobs and SPEC 8's section. */
    for (size_t i = 0; i < det->njobs; i++)
        if (det->jobs[i]) sw_tguard_save(&det->jobs[i]->tguard, out);
}

void sw_detect_snapshot_src(const sw_detector_t *det, const int64_t next[SW_DETECT_SOURCES],
                            sw_buf_t *out)
{
    snapshot_put(det, next, out, NULL);
}

void sw_detect_snapshot_compat(const sw_detector_t *det, const int64_t next[SW_DETECT_SOURCES],
                               sw_buf_t *out, sw_buf_t *ext)
{
    snapshot_put(det, next, out, ext);
}

bool sw_detect_restore_ext(sw_detector_t *det, const void *body, size_t body_len, const void *ext,
                           size_t ext_len, char *errstr, size_t errstr_size)
{
    sw_vrd_t r = {ext, (const uint8_t *)ext + ext_len, false};
    /* Only beside SWS4's body, of an engine restored and not rebuilt yet. */
    if (body_len < 4 || memcmp(body, SNAP_MAGIC_SWS4, 4) != 0 || ext_len < 4 ||
        memcmp(ext, EXT_MAGIC, 4) != 0 || det->rebuild_x[0] == INT64_MIN) {
        sw_det_snprintf_like(errstr, errstr_size,
                             "the snapshot's extension (SWX6) does not belong to its engine");
        return false;
    }
    r.p += 4;
    for (size_t i = 0; i < det->njobs && !r.bad; i++) {
        job_t *j = det->jobs[i];
        if (!j) continue;
        int64_t fr = sw_vget_i(&r), fn = sw_vget_i(&r), orr = sw_vget_i(&r), on = sw_vget_i(&r);
        if (r.bad || fr < 0 || fr > INT32_MAX || fn < 0 || orr < 0 || orr > INT32_MAX || on < 0 ||
            sw_vget_u(&r) != j->ranks.n || !j->ranks.rb_proc) {
            r.bad = true;
            break;
        }
        j->ep.front_reach = fr;
        j->ep.front_npr = fn;
        j->ep.old_reach = orr;
        j->ep.old_npr = on;
        for (size_t k = 0; k < j->ranks.n && !r.bad; k++) {
            rank_t *rk = &j->ranks.v[k];
            int64_t split = sw_vget_i(&r), ep_rel = sw_vget_i(&r);
            if (!r.bad && (split != INT64_MIN || ep_rel)) {
                rank_cold_t *c = rk_cold(j, rk);
                c->split_ts = split;
                c->ep_rel = ep_rel;
            }
            if (!last_get(&r, j, &j->ranks.rb_proc[k])) r.bad = true;
        }
    }
    if (!r.bad && !sw_crash_load_ext(det, &r)) r.bad = true;
    if (r.bad || r.p != r.end) {
        sw_det_snprintf_like(errstr, errstr_size, "malformed extension (SWX6) of the snapshot");
        return false;
    }
    return true;
}

sw_detector_t *sw_detect_restore(sw_params_t params, const void *data, size_t len, int64_t now_ms,
                                 int64_t *next_offset, char *errstr, size_t errstr_size)
{
    int64_t next[SW_DETECT_SOURCES];
    sw_detector_t *det = sw_detect_restore_src(params, data, len, now_ms, next, errstr,
                                               errstr_size);
    if (det && next[1] != 0) {
        sw_det_snprintf_like(errstr, errstr_size,
                             "the state snapshot is of an engine fed from two sources; refused "
                             "where only one is read");
        sw_detect_destroy(det);
        return NULL;
    }
    *next_offset = det ? next[0] : 0;
    return det;
}

sw_detector_t *sw_detect_restore_src(sw_params_t params, const void *data, size_t len,
                                     int64_t now_ms, int64_t next[SW_DETECT_SOURCES], char *errstr,
                                     size_t errstr_size)
{
    sw_detector_t *det = sw_detect_new(params);
    sw_vrd_t r = {data, (const uint8_t *)data + len, false};
    const char *why = "malformed state snapshot";
    if (len >= 4 && memcmp(data, SNAP_MAGIC_SWS1, 4) == 0) {
        why =
            "state snapshot of an earlier stormwatch version (SWS1: no episode verdict); "
            "refused, the partition is processed from its committed offset";
        goto err;
    }
    if (len >= 4 && memcmp(data, SNAP_MAGIC_SWS2, 4) == 0) {
        why =
            "state snapshot of an earlier stormwatch version (SWS2: a job-wide episode horizon "
            "instead of per-rank spent runs); refused, the partition is processed from its "
            "committed offset";
        goto err;
    }
    bool sws3 = len >= 4 && memcmp(data, SNAP_MAGIC_SWS3, 4) == 0;
    bool sws4 = len >= 4 && memcmp(data, SNAP_MAGIC_SWS4, 4) == 0;
    bool old = sws3 || sws4; /* before the overlap rule: no split, no reach */
    bool no_last = old || (len >= 4 && memcmp(data, SNAP_MAGIC_SWS5, 4) == 0);
    if (len < 4 || (!no_last && memcmp(data, SNAP_MAGIC, 4) != 0)) {
        why = "not a stormwatch state snapshot (bad magic)";
        goto err;
    }
    r.p += 4;
    sw_buf_t mine;
    sw_buf_init(&mine);
    params_put(&mine, &det->params);
    bool same = (size_t)(r.end - r.p) >= mine.len && memcmp(r.p, mine.data, mine.len) == 0;
    r.p += same ? mine.len : 0;
    sw_buf_clear(&mine);
    if (!same) {
        why =
            "the snapshot was taken with other analysis parameters (window.samples, stale.ms, "
            "spike.min.bytes, spike.fraction or skew.note.multiplier)";
        goto err;
    }
    for (int s = 0; s < SW_DETECT_SOURCES; s++) {
        det->rebuild_x[s] = s == 0 || !sws3 ? sw_vget_i(&r) : 0;
        if (!r.bad && (det->rebuild_x[s] < 0 || det->rebuild_x[s] > COUNT_MAX)) {
            /* Kafka offsets are never negative; the engine counts from here. */
            why = "the snapshot's next input offset is out of range (negative or above 2^62)";
            goto err;
        }
    }
    det->arrivals = sws3 ? 0 : sw_vget_u(&r);
    uint64_t njobs = sw_vget_u(&r);
    if (njobs > (uint64_t)(r.end - r.p)) r.bad = true;
    if (det->params.max_jobs > 0 && njobs > (uint64_t)det->params.max_jobs) r.bad = true;
    /* Everything read is checked against what the engine itself can
     * produce: a damaged snapshot is refused, never trusted. */
    bool hard;
    int64_t max_ranks = sw_det_rank_limit(det, &hard);
    for (uint64_t i = 0; i < njobs && !r.bad; i++) {
        sw_event_t ev;
        memset(&ev, 0, sizeof(ev));
        ev.has_job_id = sw_vget_u(&r) != 0;
        ev.job_id = sw_vget_bytes(&r);
        if (r.bad || (ev.has_job_id && ev.job_id.len == 0) ||
            sw_utf8_bad_at(ev.job_id.ptr, ev.job_id.len, true) != ev.job_id.len ||
            sw_det_jmap_find(det, ev.has_job_id, ev.job_id.ptr, ev.job_id.len)) {
            r.bad = true;
            break;
        }
        job_t *j = sw_det_job_create(det, &ev, 0);
        int64_t first_off = 0; /* SWS3: where the job began */
        if (sws3) {
            /* One source; recency was the offset itself. */
            first_off = sw_vget_i(&r);
            int64_t last = sw_vget_i(&r);
            if (last < 0 || last > COUNT_MAX) r.bad = true;
            j->id.last_off = det_tag(0, last);
            j->id.last_seq = (uint64_t)last;
            if (j->id.last_seq >= det->arrivals) det->arrivals = j->id.last_seq + 1;
        } else {
            j->id.last_off = sw_vget_i(&r);
            j->id.last_seq = sw_vget_u(&r);
            if (j->id.last_off < 0 || j->id.last_seq > det->arrivals) r.bad = true;
        }
        j->id.has_sample = sw_vget_u(&r) != 0;
        j->id.counterless = sw_vget_u(&r);
        j->claims.seq = sw_vget_u(&r);
        j->claims.leader = sw_vget_i(&r);
        uint64_t nc = sw_vget_u(&r);
        if (nc > (uint64_t)(r.end - r.p)) {
            r.bad = true;
            break;
        }
        for (uint64_t k = 0; k < nc && !r.bad; k++) {
            int64_t ws = sw_vget_i(&r);
            uint32_t dup;
            SW_GROW(j->claims.v, j->claims.n, j->claims.cap, 4);
            claim_t *c = &j->claims.v[j->claims.n];
            c->ws = ws;
            c->count = sw_vget_u(&r);
            c->first = sw_vget_u(&r);
            if (ws < 2 || ws > max_ranks || c->count == 0 ||
                sw_imap_get(&j->claims.map, ws, &dup)) {
                r.bad = true;
                break;
            }
            sw_imap_put(&j->claims.map, ws, (uint32_t)j->claims.n++);
        }
        if (j->claims.leader < -1 || j->claims.leader >= (int64_t)j->claims.n ||
            (j->claims.n > 0) != (j->claims.leader >= 0))
            r.bad = true;
        j->seen.has_newest = sw_vget_u(&r) != 0;
        j->seen.newest_ts = sw_vget_i(&r);
        bool open = sw_vget_u(&r) != 0;
        j->ep.no = sw_vget_i(&r);
        j->ep.revision = sw_vget_i(&r);
        int64_t tc = sw_vget_i(&r);
        j->ep.n_updates = sw_vget_i(&r);
        bool pend = sw_vget_u(&r) != 0;
        j->ep.pend_ts = sw_vget_i(&r);
        j->ep.first_rel = sw_vget_i(&r);
        j->ep.last_rel = sw_vget_i(&r);
        j->ep.aged = sw_vget_u(&r) != 0;
        j->ep.aged_last_rel = sw_vget_i(&r);
        uint64_t warned = sw_vget_u(&r);
        j->seen.first_min_ts = sw_vget_i(&r);
        j->seen.first_max_ts = sw_vget_i(&r);
        /* Before the overlap rule no front was learnt (its members' spike
         * times are unknown): a reach that shows no locality, which tells no
         * storm from another, until the next trigger learns one. */
        j->ep.front_reach = old ? INT32_MAX : sw_vget_i(&r);
        j->ep.front_npr = old ? INT64_MAX : sw_vget_i(&r);
        j->ep.old_reach = old ? INT32_MAX : sw_vget_i(&r);
        j->ep.old_npr = old ? INT64_MAX : sw_vget_i(&r);
        if (j->ep.old_reach < 0 || j->ep.old_reach > INT32_MAX || j->ep.old_npr < 0) r.bad = true;
        if (j->ep.front_reach < 0 || j->ep.front_reach > INT32_MAX || j->ep.front_npr < 0)
            r.bad = true;
        j->sig.valid = sw_vget_u(&r) != 0;
        bool dirty = sw_vget_u(&r) != 0;
        j->sig.tie_ns = sw_vget_i(&r);
        j->sig.boundary = sw_vget_i(&r);
        j->sig.rel0 = sw_vget_i(&r);
        j->sig.onset_rel = sw_vget_i(&r);
        j->sig.earliest = sw_vget_u(&r);
        uint64_t sconf = sw_vget_u(&r);
        j->sig.first = sw_vget_i(&r);
        j->sig.onset_rank = sw_vget_i(&r);
        j->sig.onset_base = sw_vget_i(&r);
        /* Episodes and revisions count up by one per record: a live engine
         * never gets near 2^62, and a bound keeps the increments defined. */
        if (r.bad || (j->seen.has_newest && j->seen.newest_ts < 0) || j->ep.no < 0 ||
            j->ep.revision < 0 || j->ep.no > COUNT_MAX || j->ep.revision > COUNT_MAX || tc < -1 ||
            tc > SW_CONFIDENCE_HIGH || j->ep.n_updates < 0 ||
            j->ep.n_updates > SW_DET_MAX_UPDATES || warned > 15 || sconf > SW_CONFIDENCE_HIGH ||
            j->sig.tie_ns < 0 || j->seen.first_max_ts < j->seen.first_min_ts || (pend && !open)) {
            r.bad = true;
            break;
        }
        /* The lifecycle where the snapshot left it (a new job is quiet). */
        sw_ep_state_t state = open            ? (pend ? SW_EP_PENDING : SW_EP_OPEN)
                              : j->ep.no == 0 ? SW_EP_QUIET
                              : j->ep.aged    ? SW_EP_AGED
                                              : SW_EP_CLOSED;
        if (state != SW_EP_QUIET) sw_det_job_set_state(det, j, state, "restored");
        j->ep.trig_conf = (int)tc;
        j->seen.warned = (uint8_t)warned;
        j->sig.conf = (sw_confidence_t)sconf;
        for (int pass = 0; pass < 2 && !r.bad; pass++) {
            if (pass == 1) {
                j->pub.first = sw_vget_i(&r);
                j->pub.onset_rank = sw_vget_i(&r);
                j->pub.onset_base = sw_vget_i(&r);
                j->pub.rel0 = sw_vget_i(&r);
                uint64_t pc = sw_vget_u(&r);
                if (pc > SW_CONFIDENCE_HIGH) r.bad = true;
                j->pub.conf = (sw_confidence_t)pc;
            }
            uint64_t ns = sw_vget_u(&r);
            if (r.bad || ns > (uint64_t)(r.end - r.p)) {
                r.bad = true;
                break;
            }
            sig_ent_t **v = pass ? &j->pub.tie : &j->sig.v;
            size_t *nv = pass ? &j->pub.ntie : &j->sig.n, *cv = pass ? &j->pub.captie : &j->sig.cap;
            for (uint64_t k = 0; k < ns && !r.bad; k++) {
                SW_GROW(*v, *nv, *cv, 8);
                (*v)[*nv].rank = sw_vget_i(&r);
                (*v)[*nv].spike_ts = sw_vget_i(&r);
                (*nv)++;
            }
        }
        if (r.bad || (j->sig.valid && j->sig.earliest > j->sig.n + 1)) {
            r.bad = true;
            break;
        }
        j->verdict.has = sw_vget_u(&r) != 0;
        j->verdict.onset = sw_vget_u(&r);
        uint64_t nv = sw_vget_u(&r);
        /* An open episode has a verdict of at least one suspect; a closed
         * one keeps the one it closed with (or none before the first). */
        if (r.bad || nv > (uint64_t)(r.end - r.p) || (open && (!j->verdict.has || nv == 0)) ||
            (!j->verdict.has && nv)) {
            r.bad = true;
            break;
        }
        if (nv) j->verdict.sus = sw_arena_alloc(&j->verdict.arena, nv * sizeof(*j->verdict.sus));
        for (uint64_t k = 0; k < nv && !r.bad; k++) {
            if (!suspect_get(&r, &j->verdict.arena, &j->verdict.sus[k])) r.bad = true;
            else j->verdict.n++;
        }
        uint64_t nvt = sw_vget_u(&r);
        if (r.bad || nvt > (uint64_t)(r.end - r.p)) {
            r.bad = true;
            break;
        }
        if (nvt) {
            j->verdict.tie = sw_arena_alloc(&j->verdict.arena, nvt * sizeof(*j->verdict.tie));
            for (uint64_t k = 0; k < nvt; k++) j->verdict.tie[k] = sw_vget_i(&r);
            j->verdict.ntie = nvt;
        }
        if (r.bad) break;
        uint64_t nr = sw_vget_u(&r);
        if (nr > (uint64_t)(r.end - r.p)) {
            r.bad = true;
            break;
        }
        if ((nr > 0) != j->id.has_sample || j->seen.has_newest != j->id.has_sample) {
            r.bad = true;
            break;
        }
        if (nr) {
            j->ranks.rb_floor = sw_malloc(nr * SW_DETECT_SOURCES * sizeof(*j->ranks.rb_floor));
            j->ranks.rb_proc = sw_malloc(nr * sizeof(*j->ranks.rb_proc));
        }
        for (uint64_t k = 0; k < nr && !r.bad; k++) {
            int64_t rank = sw_vget_i(&r);
            uint32_t ri;
            if (rank < 0 || rank >= max_ranks || sw_imap_get(&j->ranks.map, rank, &ri)) {
                r.bad = true;
                break;
            }
            ri = sw_det_rank_create(det, j, rank);
            rank_t *rk = &j->ranks.v[ri];
            rk->first_ts = sw_vget_i(&r);
            rk->newest_ts = sw_vget_i(&r);
            int64_t *floor = &j->ranks.rb_floor[ri * SW_DETECT_SOURCES];
            if (sws3) {
                /* Every sample after the emptying and the job's start. */
                int64_t empty_off = sw_vget_i(&r);
                floor[0] = empty_off >= first_off ? empty_off : first_off > 0 ? first_off - 1 : -1;
                /* (a rank emptied at or after the snapshot has no sample) */
                floor[0] = floor[0] >= -1 && floor[0] < det->rebuild_x[0] - 1 ? floor[0] + 1
                                                                              : INT64_MAX;
                floor[1] = INT64_MAX;
            } else {
                for (int s = 0; s < SW_DETECT_SOURCES; s++) {
                    int64_t f = sw_vget_i(&r);
                    if (f < -1 || f >= det->rebuild_x[s]) r.bad = true;
                    floor[s] = f < 0 ? INT64_MAX : f;
                }
            }
            rank_cold_t c;
            memset(&c, 0, sizeof(c));
            c.spent_ts = sw_vget_i(&r);
            c.ep_no = sw_vget_i(&r);
            c.ep_base = sw_vget_i(&r);
            rk->warm = sw_vget_u(&r) != 0;
            c.warm_hi = sw_vget_i(&r);
            c.warm_hi_ts = sw_vget_i(&r);
            j->ranks.rb_proc[ri].pid = sw_vget_i(&r);
            c.rs_has_ev = sw_vget_u(&r) != 0;
            c.rs_ev_used = sw_vget_i(&r);
            c.split_ts = old ? INT64_MIN : sw_vget_i(&r);
            c.ep_rel = old ? 0 : sw_vget_i(&r);
            if (c.spent_ts != INT64_MIN || c.ep_no || c.ep_base || c.warm_hi || c.warm_hi_ts ||
                c.rs_has_ev || c.rs_ev_used || c.split_ts != INT64_MIN || c.ep_rel)
                *rk_cold(j, rk) = c;
            bool has_sess = sw_vget_u(&r) != 0;
            sw_str_t sess = sw_vget_bytes(&r);
            if (r.bad || !str_ok(sess)) {
                r.bad = true;
                break;
            }
            j->ranks.rb_proc[ri].session = has_sess ? sw_intern_add(j->src.strs, sess) : 0;
            j->ranks.rb_proc[ri].has_last = false;
            if (!no_last && !last_get(&r, j, &j->ranks.rb_proc[ri])) {
                r.bad = true;
                break;
            }
            if (rk->first_ts < 0 || rk->newest_ts < rk->first_ts || c.ep_no < 0 ||
                c.ep_no > j->ep.no)
                r.bad = true;
        }
        uint64_t nm = sw_vget_u(&r);
        if (r.bad || nm > nr || (!open && nm)) {
            r.bad = true;
            break;
        }
        for (uint64_t k = 0; k < nm && !r.bad; k++) {
            uint64_t ri = sw_vget_u(&r);
            if (ri >= nr || rk_ep_no(j, &j->ranks.v[ri]) != j->ep.no) {
                r.bad = true;
                break;
            }
            SW_GROW(j->ep.mem, j->ep.nmem, j->ep.capmem, 16);
            j->ep.mem[j->ep.nmem++] = (uint32_t)ri;
        }
        for (size_t k = 0; k < j->verdict.n && !r.bad; k++) {
            uint32_t ri;
            if (!sw_imap_get(&j->ranks.map, j->verdict.sus[k].rank, &ri)) r.bad = true;
        }
        if (!r.bad && open) sw_det_verdict_mark(j, true);
        const uint8_t *p = r.p;
        if (r.bad || !sw_phase_load(j->phase, &p, r.end)) {
            r.bad = true;
            break;
        }
        r.p = p;
        j->sig.dirty = dirty;
        j->id.last_ms = now_ms;
    }
    /* SPEC 8's section. */
    if (!r.bad && !sw_crash_load(det, &r)) {
        why =
            "malformed SPEC 8 section in the state snapshot (or other silence.ms / oom.warn.* "
            "settings)";
        r.bad = true;
    }
    for (size_t i = 0; !r.bad && i < det->njobs; i++)
        if (det->jobs[i] && !sw_tguard_load(&det->jobs[i]->tguard, &r))
            why = "malformed state snapshot (out-of-time guard)";
    if (r.bad || r.p != r.end) goto err;
    if (sws3) /* refusals were offsets of the one source */
        for (size_t i = 0; i < det->njobs; i++) {
            sw_tguard_t *g = det->jobs[i] ? &det->jobs[i]->tguard : NULL;
            for (uint32_t k = 0; g && k < g->nrefused; k++) {
                if (g->refused[k] < 0 || g->refused[k] > COUNT_MAX) goto err;
                g->refused[k] = det_tag(0, g->refused[k]);
            }
        }
    sw_det_junk_rebuild(det);
    for (int s = 0; s < SW_DETECT_SOURCES; s++) next[s] = det->rebuild_x[s];
    return det;
err:
    sw_det_snprintf_like(errstr, errstr_size, why);
    sw_detect_destroy(det);
    return NULL;
}

/* sw_detect_restore() of a one-source snapshot into source @p src of a
 * two-source engine (SW_DETECT_PLACE_AS_ONE): every offset it holds
 * becomes one of source @p src, the other source has nothing yet. */
static sw_detector_t *restore_as_src(sw_params_t params, const void *data, size_t len,
                                     int64_t now_ms, int src, int64_t next[SW_DETECT_SOURCES],
                                     char *errstr, size_t errstr_size)
{
    if (src < 0 || src >= SW_DETECT_SOURCES) {
        sw_det_snprintf_like(errstr, errstr_size, "no such source");
        return NULL;
    }
    int64_t x;
    sw_detector_t *det = sw_detect_restore(params, data, len, now_ms, &x, errstr, errstr_size);
    if (!det) return NULL;
    for (int s = 0; s < SW_DETECT_SOURCES; s++) next[s] = s == src ? x : 0;
    if (src == 0) return det;
    /* Restored, not rebuilt yet: the windows are empty, and the offsets
     * are in the rebuild floors, the latest inputs and the refusals. */
    det->rebuild_x[src] = x;
    det->rebuild_x[0] = 0;
    for (size_t i = 0; i < det->njobs; i++) {
        job_t *j = det->jobs[i];
        if (!j) continue;
        j->id.last_off = det_tag(src, tag_offset(j->id.last_off));
        for (size_t k = 0; j->ranks.rb_floor && k < j->ranks.n; k++) {
            int64_t *f = &j->ranks.rb_floor[k * SW_DETECT_SOURCES];
            f[src] = f[0];
            f[0] = INT64_MAX;
        }
        sw_tguard_t *g = &j->tguard;
        for (uint32_t k = 0; k < g->nrefused; k++)
            g->refused[k] = det_tag(src, tag_offset(g->refused[k]));
    }
    return det;
}

void sw_detect_swap_sources(sw_detector_t *det, int64_t next[SW_DETECT_SOURCES])
{
    /* Restored, not rebuilt yet: as in restore_as_src(), the
     * offsets are in the rebuild floors, the latest inputs and the refusals. */
    int64_t t = det->rebuild_x[0];
    det->rebuild_x[0] = det->rebuild_x[1];
    det->rebuild_x[1] = t;
    t = next[0];
    next[0] = next[1];
    next[1] = t;
    for (size_t i = 0; i < det->njobs; i++) {
        job_t *j = det->jobs[i];
        if (!j) continue;
        j->id.last_off = det_tag(1 - tag_source(j->id.last_off), tag_offset(j->id.last_off));
        for (size_t k = 0; j->ranks.rb_floor && k < j->ranks.n; k++) {
            int64_t *f = &j->ranks.rb_floor[k * SW_DETECT_SOURCES];
            int64_t f0 = f[0];
            f[0] = f[1];
            f[1] = f0;
        }
        sw_tguard_t *g = &j->tguard;
        for (uint32_t k = 0; k < g->nrefused; k++)
            g->refused[k] = det_tag(1 - tag_source(g->refused[k]), tag_offset(g->refused[k]));
    }
}

bool sw_detect_rebuild(sw_detector_t *det, const sw_event_t *ev, int64_t offset)
{
    return sw_detect_rebuild_src(det, ev, 0, offset);
}

bool sw_detect_rebuild_src(sw_detector_t *det, const sw_event_t *ev, int src, int64_t offset)
{
    if (src < 0 || src >= SW_DETECT_SOURCES || ev->kind != SW_EV_SAMPLE ||
        offset >= det->rebuild_x[src])
        return false;
    bool hard;
    int64_t max_ranks = sw_det_rank_limit(det, &hard);
    if (ev->rank >= max_ranks || ev->world_size > max_ranks) return false; /* refused when fed */
    job_t *j = sw_det_jmap_find(det, ev->has_job_id, ev->job_id.ptr, ev->job_id.len);
    uint32_t ri;
    if (!j || !j->ranks.rb_floor || !sw_imap_get(&j->ranks.map, ev->rank, &ri)) return false;
    rank_t *r = &j->ranks.v[ri];
    if (offset < j->ranks.rb_floor[ri * SW_DETECT_SOURCES + (size_t)src]) return false;
    int64_t tag = det_tag(src, offset);
    /* Refused by the out-of-time guard when fed (the newest refusals are
     * remembered by tag; an older one is out of the rank's range unless
     * the rank's range grew around it later). */
    if (sw_tguard_was_refused(&j->tguard, tag)) return false;
    /* Out of the rank's range: the out-of-time guard refused it when fed. */
    if (ev->timestamp_ns < r->first_ts || ev->timestamp_ns > r->newest_ts) return false;
    uint32_t sid = sw_det_src_get(j, r, ev);
    sw_win_ctx_t ctx = {j->src.v,      j->src.strs,        &j->src.wide,
                        &j->seen.gaps, &j->seen.intervals, &det->winpool};
    uint32_t cap_before = r->win.cap;
    sw_win_res_t wr = sw_win_insert(&r->win, &ctx, ev->timestamp_ns, ev->device_used_bytes, sid,
                                    tag);
    if (r->win.cap != cap_before)
        j->ranks.win_bytes += sw_win_bytes(r->win.cap) - sw_win_bytes(cap_before);
    return wr == SW_WIN_APPENDED || wr == SW_WIN_INSERTED;
}

void sw_detect_rebuild_done(sw_detector_t *det)
{
    for (size_t i = 0; i < det->njobs; i++) {
        job_t *j = det->jobs[i];
        if (!j) continue;
        bool dirty = j->sig.dirty;
        j->seen.retained = 0;
        j->seen.insufficient = 0;
        for (size_t k = 0; k < j->ranks.n; k++) {
            rank_t *r = &j->ranks.v[k];
            /* The oldest run's identity as it was, not as the re-insertions
             * left it (they may have evicted other samples, or none). */
            const rank_cold_t *c = r->cold == NIL ? NULL : &j->ranks.colds[r->cold];
            r->win.hr_trunc = c && c->rs_has_ev && r->win.rn &&
                              sw_win_rbase(&r->win)[r->win.rhead] == r->win.head;
            r->win.hr_orig = c ? c->rs_ev_used : 0;
            r->win.cand_valid = false;
            j->seen.retained += r->win.n;
            if (r->win.n < 2) j->seen.insufficient++;
            if (r->win.n) sw_det_heap_update(j, (uint32_t)k, r->newest_ts);
            if (j->ranks.rb_proc) {
                sw_det_src_last(j, r, &j->ranks.rb_proc[k]);
                r->proc_src = sw_det_src_proc(j, r, j->ranks.rb_proc[k].pid,
                                              j->ranks.rb_proc[k].session);
            }
            sw_det_cand_refresh(det, j, (uint32_t)k);
        }
        /* The snapshot's flag, not the one the re-insertions left. */
        j->sig.dirty = dirty;
        j->verdict.touched = true;
    }
    det->rebuild_x[0] = det->rebuild_x[1] = INT64_MIN;
    for (size_t i = 0; i < det->njobs; i++)
        if (det->jobs[i]) {
            free(det->jobs[i]->ranks.rb_floor);
            det->jobs[i]->ranks.rb_floor = NULL;
            free(det->jobs[i]->ranks.rb_proc);
            det->jobs[i]->ranks.rb_proc = NULL;
        }
}

sw_detector_t *sw_detect_load(sw_params_t params, const sw_detect_image_t *img, int64_t now_ms,
                              int64_t next[SW_DETECT_SOURCES], char *errstr, size_t errstr_size)
{
    int64_t nx[SW_DETECT_SOURCES] = {0, 0};
    sw_detector_t *det;
    switch (img->place) {
    case SW_DETECT_PLACE_ONE:
        det = sw_detect_restore(params, img->body, img->body_len, now_ms, &nx[0], errstr,
                                errstr_size);
        break;
    case SW_DETECT_PLACE_AS_ONE:
        det = restore_as_src(params, img->body, img->body_len, now_ms, 1, nx, errstr, errstr_size);
        break;
    case SW_DETECT_PLACE_TWO:
    case SW_DETECT_PLACE_SWAPPED:
        det = sw_detect_restore_src(params, img->body, img->body_len, now_ms, nx, errstr,
                                    errstr_size);
        break;
    default:
        sw_det_snprintf_like(errstr, errstr_size, "no such placement of the sources");
        return NULL;
    }
    if (!det) return NULL;
    if (img->ext_len && !sw_detect_restore_ext(det, img->body, img->body_len, img->ext,
                                               img->ext_len, errstr, errstr_size))
        goto err;
    if (img->place == SW_DETECT_PLACE_SWAPPED) sw_detect_swap_sources(det, nx);
    if (img->expect && (nx[0] != img->expect[0] || nx[1] != img->expect[1])) {
        sw_errfmt(errstr, errstr_size,
                  "its engine is as of offsets %lld/%lld, its envelope of %lld/%lld",
                  (long long)nx[0], (long long)nx[1], (long long)img->expect[0],
                  (long long)img->expect[1]);
        goto err;
    }
    if (next) memcpy(next, nx, sizeof(nx));
    return det;
err:
    sw_detect_destroy(det);
    return NULL;
}
