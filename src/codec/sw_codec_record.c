/*
 * JSON alert record -> sw_record_t (the inverse of sw_alert_json_record()).
 * Strict about the lifecycle keys (a record without them cannot be paged),
 * type-checking everything else that is present. No I/O, no globals.
 */
#include "sw_codec_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_jdom.h"

typedef struct pctx_s {
    sw_arena_t *arena;
    char *errstr;
    size_t errstr_size;
} pctx_t;

static sw_err_t bad(pctx_t *c, const char *key, const char *expected)
{
    sw_errfmt(c->errstr, c->errstr_size, "alert record: key \"%s\" %s", key, expected);
    return SW_ERR_INVALID_ARG;
}

/* An integer member; absent or null leaves *v. */
static sw_err_t get_int(pctx_t *c, const sw_jnode_t *obj, const char *key, bool required,
                        int64_t min, int64_t *v, bool *present)
{
    const sw_jnode_t *n = sw_jdom_get(obj, key);
    if (present) *present = false;
    if (!n || n->type == SW_JN_NULL) {
        if (required) return bad(c, key, "is missing (expected an integer)");
        return SW_OK;
    }
    if (n->type != SW_JN_INT || n->i < min)
        return bad(c, key, min == 0 ? "is not an integer >= 0" : "is not an integer");
    *v = n->i;
    if (present) *present = true;
    return SW_OK;
}

/* A string member (copied into the arena); absent or null: *present false. */
static sw_err_t get_str(pctx_t *c, const sw_jnode_t *obj, const char *key, sw_str_t *v,
                        bool *present)
{
    const sw_jnode_t *n = sw_jdom_get(obj, key);
    *present = false;
    if (!n || n->type == SW_JN_NULL) return SW_OK;
    if (n->type != SW_JN_STRING) return bad(c, key, "is not a string");
    *v = sw_arena_str(c->arena, n->s);
    *present = true;
    return SW_OK;
}

static sw_err_t get_i64_array(pctx_t *c, const sw_jnode_t *obj, const char *key,
                              const int64_t **out, size_t *n_out)
{
    const sw_jnode_t *n = sw_jdom_get(obj, key);
    *out = NULL;
    *n_out = 0;
    if (!n || n->type == SW_JN_NULL) return SW_OK;
    if (n->type != SW_JN_ARRAY) return bad(c, key, "is not an array of integers");
    int64_t *v = n->n ? sw_arena_calloc(c->arena, n->n, sizeof(*v)) : NULL;
    for (size_t i = 0; i < n->n; i++) {
        if (n->items[i].type != SW_JN_INT) return bad(c, key, "is not an array of integers");
        v[i] = n->items[i].i;
    }
    *out = v;
    *n_out = n->n;
    return SW_OK;
}

static int rank_val_cmp(const void *pa, const void *pb)
{
    const sw_rank_val_t *a = pa, *b = pb;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* A rank map {"<rank>": integer}, sorted by rank. */
static sw_err_t get_map(pctx_t *c, const sw_jnode_t *obj, const char *key,
                        const sw_rank_val_t **out, size_t *n_out)
{
    const sw_jnode_t *n = sw_jdom_get(obj, key);
    *out = NULL;
    *n_out = 0;
    if (!n || n->type == SW_JN_NULL) return SW_OK;
    if (n->type != SW_JN_OBJECT) return bad(c, key, "is not an object of rank: integer");
    sw_rank_val_t *v = n->n ? sw_arena_calloc(c->arena, n->n, sizeof(*v)) : NULL;
    for (size_t i = 0; i < n->n; i++) {
        char tmp[24];
        if (n->keys[i].len == 0 || n->keys[i].len >= sizeof(tmp) || n->items[i].type != SW_JN_INT)
            return bad(c, key, "is not an object of rank: integer");
        memcpy(tmp, n->keys[i].ptr, n->keys[i].len);
        tmp[n->keys[i].len] = '\0';
        char *end = NULL;
        long long r = strtoll(tmp, &end, 10);
        if (*end || r < 0) return bad(c, key, "has a key that is not a rank (expected 0, 1, ...)");
        v[i].rank = r;
        v[i].value = n->items[i].i;
    }
    qsort(v, n->n, sizeof(*v), rank_val_cmp);
    *out = v;
    *n_out = n->n;
    return SW_OK;
}

static sw_err_t get_phase(pctx_t *c, const sw_jnode_t *n, sw_phase_attr_t *ph)
{
    memset(ph, 0, sizeof(*ph));
    if (!n || n->type == SW_JN_NULL) return SW_OK;
    if (n->type != SW_JN_OBJECT) return bad(c, "phase_attribution", "is not an object or null");
    sw_str_t res = sw_jdom_str(sw_jdom_get(n, "phase_resolution"), "");
    if (sw_str_eq(res, sw_str("unique"))) ph->resolution = SW_PHASE_UNIQUE;
    else if (sw_str_eq(res, sw_str("ambiguous"))) ph->resolution = SW_PHASE_AMBIGUOUS;
    else return bad(c, "phase_resolution", "is not \"unique\" or \"ambiguous\"");
    const sw_jnode_t *paths = sw_jdom_get(n, "phase_paths");
    if (paths && paths->type == SW_JN_ARRAY && paths->n) {
        sw_str_t *p = sw_arena_calloc(c->arena, paths->n, sizeof(*p));
        for (size_t i = 0; i < paths->n; i++) {
            if (paths->items[i].type != SW_JN_STRING)
                return bad(c, "phase_paths", "is not an array of strings");
            p[i] = sw_arena_str(c->arena, paths->items[i].s);
        }
        ph->paths = p;
        ph->n_paths = paths->n;
    }
    bool has;
    sw_err_t err;
    if (ph->resolution == SW_PHASE_UNIQUE) {
        if ((err = get_str(c, n, "phase_path", &ph->path, &has)) != SW_OK) return err;
        if ((err = get_str(c, n, "scope_id", &ph->scope_id, &has)) != SW_OK) return err;
        if ((err = get_str(c, n, "thread_name", &ph->thread_name, &has)) != SW_OK) return err;
        if ((err = get_int(c, n, "thread_id", false, INT64_MIN, &ph->thread_id, NULL)) != SW_OK)
            return err;
    } else {
        const sw_jnode_t *sum = sw_jdom_get(n, "phase_summary");
        if (sum && sum->type == SW_JN_OBJECT) {
            if ((err = get_str(c, sum, "phase_path", &ph->summary_path, &ph->has_summary)) != SW_OK)
                return err;
        }
    }
    return SW_OK;
}

static sw_err_t get_timeline(pctx_t *c, const sw_jnode_t *n, sw_suspect_t *s)
{
    if (!n || n->type == SW_JN_NULL) return SW_OK;
    if (n->type != SW_JN_OBJECT) return bad(c, "timeline", "is not an object");
    const int64_t *ts = NULL, *used = NULL;
    size_t nts = 0, nused = 0;
    sw_err_t err;
    if ((err = get_i64_array(c, n, "aligned_timestamp_ns", &ts, &nts)) != SW_OK) return err;
    if ((err = get_i64_array(c, n, "device_used_bytes", &used, &nused)) != SW_OK) return err;
    if (nts != nused) return bad(c, "timeline", "has arrays of different lengths");
    int64_t w = 0, start = 0, spike = 0;
    if ((err = get_int(c, n, "window_samples", false, 0, &w, NULL)) != SW_OK) return err;
    if ((err = get_int(c, n, "spike_start_index", false, 0, &start, NULL)) != SW_OK) return err;
    if ((err = get_int(c, n, "spike_index", false, 0, &spike, NULL)) != SW_OK) return err;
    s->n_timeline = nts;
    s->timeline_aligned_ns = ts;
    s->timeline_used = used;
    s->timeline_window = w;
    s->timeline_spike_start = (size_t)start;
    s->timeline_spike = (size_t)spike;
    return SW_OK;
}

static sw_err_t get_suspect(pctx_t *c, const sw_jnode_t *n, sw_suspect_t *s)
{
    memset(s, 0, sizeof(*s));
    s->pid = -1;
    if (n->type != SW_JN_OBJECT)
        return bad(c, "first_cause_suspects", "is not an array of objects");
    sw_err_t err;
    int64_t aligned = 0;
    if ((err = get_int(c, n, "rank", true, 0, &s->rank, NULL)) != SW_OK) return err;
    if ((err = get_int(c, n, "first_spike_timestamp_ns", false, INT64_MIN,
                       &s->first_spike_timestamp_ns, NULL)) != SW_OK)
        return err;
    const sw_jnode_t *al = sw_jdom_get(n, "aligned_first_spike_timestamp_ns");
    if (al && al->type == SW_JN_NUMBER && al->d >= 0)
        s->aligned_first_spike_timestamp_ns = (uint64_t)al->d;
    else if ((err = get_int(c, n, "aligned_first_spike_timestamp_ns", false, 0, &aligned, NULL)) !=
             SW_OK)
        return err;
    else s->aligned_first_spike_timestamp_ns = (uint64_t)aligned;
    if ((err = get_int(c, n, "peak_delta_bytes", false, INT64_MIN, &s->peak_delta_bytes, NULL)) !=
        SW_OK)
        return err;
    if ((err = get_int(c, n, "spike_window_samples", false, INT64_MIN, &s->spike_window_samples,
                       NULL)) != SW_OK)
        return err;
    if ((err = get_int(c, n, "lead_over_cluster_onset_ns", false, INT64_MIN,
                       &s->lead_over_cluster_onset_ns, NULL)) != SW_OK)
        return err;
    sw_str_t conf = sw_jdom_str(sw_jdom_get(n, "confidence"), "low");
    if (sw_str_eq(conf, sw_str("high"))) s->confidence = SW_CONFIDENCE_HIGH;
    else if (sw_str_eq(conf, sw_str("medium"))) s->confidence = SW_CONFIDENCE_MEDIUM;
    else if (sw_str_eq(conf, sw_str("low"))) s->confidence = SW_CONFIDENCE_LOW;
    else return bad(c, "confidence", "is not \"low\", \"medium\" or \"high\"");
    const sw_jnode_t *ev = sw_jdom_get(n, "evidence");
    if (ev && ev->type == SW_JN_OBJECT &&
        (err = get_int(c, ev, "supporting_ranks_at_or_before_onset", false, 0, &s->supporting_ranks,
                       NULL)) != SW_OK)
        return err;
    if ((err = get_phase(c, sw_jdom_get(n, "phase_attribution"), &s->phase)) != SW_OK) return err;
    if ((err = get_timeline(c, sw_jdom_get(n, "timeline"), s)) != SW_OK) return err;
    if ((err = get_str(c, n, "host", &s->host, &s->has_source)) != SW_OK) return err;
    if (s->has_source) {
        if ((err = get_int(c, n, "pid", false, INT64_MIN, &s->pid, NULL)) != SW_OK) return err;
        if ((err = get_int(c, n, "device_id", false, INT64_MIN, &s->device_id,
                           &s->has_device_id)) != SW_OK)
            return err;
        if ((err = get_int(c, n, "local_rank", false, INT64_MIN, &s->local_rank,
                           &s->has_local_rank)) != SW_OK)
            return err;
        if ((err = get_str(c, n, "session_id", &s->session_id, &s->has_session)) != SW_OK)
            return err;
    }
    return SW_OK;
}

static sw_err_t get_opt_int(pctx_t *c, const sw_jnode_t *obj, const char *key, bool *has,
                            int64_t *v)
{
    return get_int(c, obj, key, false, INT64_MIN, v, has);
}

/* SPEC 8's keys of a crash or warning record. */
static sw_err_t get_x8(pctx_t *c, const sw_jnode_t *root, sw_record_t *rec)
{
    sw_err_t err;
    sw_x8_t *x = sw_arena_calloc(c->arena, 1, sizeof(*x));
    bool crash = rec->action == SW_ACTION_CRASH;
    rec->analysis.anchor_rank = -1;
    rec->resolve_rank = -1;
    if ((err = get_int(c, root, crash ? "crash" : "warning", true, 0, &x->number, NULL)) != SW_OK ||
        (err = get_int(c, root, "revision", true, 0, &rec->revision, NULL)) != SW_OK ||
        (err = get_int(c, root, "event_timestamp_ns", false, INT64_MIN, &rec->event_timestamp_ns,
                       &rec->has_event_ts)) != SW_OK)
        return err;
    rec->episode = x->number;
    x->open = true;
    const sw_jnode_t *n = sw_jdom_get(root, "open");
    if (n && n->type == SW_JN_BOOL) x->open = n->b;
    if ((err = get_int(c, root, "deaths", false, 0, &x->deaths, NULL)) != SW_OK ||
        (err = get_i64_array(c, root, "dead_ranks", &x->dead_ranks, &x->n_dead)) != SW_OK ||
        (err = get_int(c, root, "closed_warning", false, 0, &x->closed_warning, NULL)) != SW_OK ||
        (err = get_int(c, root, "deaths_total", false, 0, &x->deaths_total, NULL)) != SW_OK ||
        (err = get_int(c, root, "closed_by_crash", false, 0, &x->closed_by_crash, NULL)) != SW_OK)
        return err;
    x->end = sw_x8_end_parse(sw_jdom_str(sw_jdom_get(root, "closed_by"), ""));
    const sw_jnode_t *pf = sw_jdom_get(root, "previous_first_death");
    if (pf && pf->type == SW_JN_OBJECT) {
        if ((err = get_int(c, pf, "rank", true, 0, &x->previous_rank, NULL)) != SW_OK ||
            (err = get_int(c, pf, "aligned_timestamp_ns", false, INT64_MIN, &x->previous_aligned_ns,
                           NULL)) != SW_OK)
            return err;
        x->has_previous = true;
    }
    const sw_jnode_t *fd = sw_jdom_get(root, "first_death");
    if (crash && (!fd || fd->type != SW_JN_OBJECT))
        return bad(c, "first_death", "is missing (expected an object)");
    if (fd && fd->type == SW_JN_OBJECT) {
        sw_death_t *d = &x->first;
        bool has;
        if ((err = get_int(c, fd, "rank", true, 0, &d->rank, NULL)) != SW_OK ||
            (err = get_int(c, fd, "timestamp_ns", false, INT64_MIN, &d->timestamp_ns, NULL)) !=
                SW_OK ||
            (err = get_int(c, fd, "aligned_timestamp_ns", false, INT64_MIN,
                           &d->aligned_timestamp_ns, NULL)) != SW_OK ||
            (err = get_str(c, fd, "host", &d->host, &has)) != SW_OK ||
            (err = get_opt_int(c, fd, "device_id", &d->has_device_id, &d->device_id)) != SW_OK ||
            (err = get_opt_int(c, fd, "local_rank", &d->has_local_rank, &d->local_rank)) != SW_OK ||
            (err = get_int(c, fd, "pid", false, INT64_MIN, &d->pid, NULL)) != SW_OK ||
            (err = get_str(c, fd, "session_id", &d->session_id, &d->has_session)) != SW_OK ||
            (err = get_str(c, fd, "oom_reason", &d->oom_reason, &d->has_oom_reason)) != SW_OK)
            return err;
        sw_str_t cause = sw_jdom_str(sw_jdom_get(fd, "cause"), "");
        if (sw_str_eq(cause, sw_str("silent"))) d->cause = SW_DEATH_SILENT;
        else if (sw_str_eq(cause, sw_str("oom"))) d->cause = SW_DEATH_OOM;
        else return bad(c, "cause", "is not \"oom\" or \"silent\"");
    }
    const sw_jnode_t *wr = sw_jdom_get(root, "ranks");
    if (wr && wr->type == SW_JN_ARRAY && wr->n) {
        sw_warn_rank_t *v = sw_arena_calloc(c->arena, wr->n, sizeof(*v));
        for (size_t i = 0; i < wr->n; i++) {
            const sw_jnode_t *e = &wr->items[i];
            bool has;
            if (e->type != SW_JN_OBJECT) return bad(c, "ranks", "is not an array of objects");
            if ((err = get_int(c, e, "rank", true, 0, &v[i].rank, NULL)) != SW_OK ||
                (err = get_str(c, e, "host", &v[i].host, &has)) != SW_OK ||
                (err = get_opt_int(c, e, "device_id", &v[i].has_device_id, &v[i].device_id)) !=
                    SW_OK ||
                (err = get_int(c, e, "used_bytes", false, INT64_MIN, &v[i].used_bytes, NULL)) !=
                    SW_OK ||
                (err = get_int(c, e, "total_bytes", false, INT64_MIN, &v[i].total_bytes, NULL)) !=
                    SW_OK ||
                (err = get_int(c, e, "headroom_bytes", false, INT64_MIN, &v[i].headroom_bytes,
                               NULL)) != SW_OK ||
                (err = get_int(c, e, "rate_bytes_per_s", false, INT64_MIN, &v[i].rate_bytes_per_s,
                               NULL)) != SW_OK ||
                (err = get_int(c, e, "eta_ms", false, INT64_MIN, &v[i].eta_ms, NULL)) != SW_OK)
                return err;
        }
        x->wranks = v;
        x->n_wranks = wr->n;
    }
    const sw_jnode_t *st = sw_jdom_get(root, "storm");
    if (st && st->type == SW_JN_OBJECT) {
        x->storm.set = true;
        if ((err = get_int(c, st, "episode", false, 0, &x->storm.episode, NULL)) != SW_OK ||
            (err = get_opt_int(c, st, "first_cause_rank", &x->storm.has_rank,
                               &x->storm.first_cause_rank)) != SW_OK)
            return err;
        const sw_jnode_t *o = sw_jdom_get(st, "open");
        x->storm.open = o && o->type == SW_JN_BOOL && o->b;
        int64_t onset = 0;
        if ((err = get_opt_int(c, st, "cluster_onset_timestamp_ns", &x->storm.has_onset, &onset)) !=
            SW_OK)
            return err;
        x->storm.onset_ns = (uint64_t)onset;
    }
    const sw_jnode_t *src = sw_jdom_get(root, "source");
    if (src && src->type == SW_JN_OBJECT) {
        bool has = false;
        int64_t part = 0;
        if ((err = get_str(c, src, "topic", &rec->source.topic, &has)) != SW_OK ||
            (err = get_int(c, src, "partition", false, 0, &part, NULL)) != SW_OK ||
            (err = get_int(c, src, "offset", false, INT64_MIN, &rec->source.offset, NULL)) != SW_OK)
            return err;
        rec->source.partition = (int32_t)part;
        rec->source.set = has;
    }
    rec->episode_open = x->open;
    rec->x8 = x;
    return SW_OK;
}

static bool is_suspect(const sw_analysis_t *a, int64_t rank)
{
    for (size_t i = 0; i < a->n_suspects; i++)
        if (a->suspects[i].rank == rank) return true;
    return false;
}

bool sw_record_action(const sw_jnode_t *root, sw_action_t *act)
{
    static const char *const acts[] = {"trigger", "update", "resolve",
                                       "summary", "crash",  "warning"};
    const sw_jnode_t *n = sw_jdom_get(root, "action");
    if (!n || n->type != SW_JN_STRING) return false;
    for (size_t k = 0; k < SW_ACTION_CNT; k++) {
        if (sw_str_eq(n->s, sw_str(acts[k]))) {
            *act = (sw_action_t)k;
            return true;
        }
    }
    return false;
}

/* An integer >= 0 under @p key: false when absent, null or anything else. */
static bool head_int(const sw_jnode_t *root, const char *key, int64_t *v, const char **bad_key,
                     const sw_jnode_t **bad_val)
{
    const sw_jnode_t *n = sw_jdom_get(root, key);
    if (n && n->type == SW_JN_INT && n->i >= 0) {
        *v = n->i;
        return true;
    }
    *bad_key = key;
    *bad_val = n;
    return false;
}

sw_err_t sw_record_head(const sw_jnode_t *root, sw_record_head_t *head, const char **bad_key,
                        const sw_jnode_t **bad_val)
{
    memset(head, 0, sizeof(*head));
    if (!sw_record_action(root, &head->action)) {
        *bad_key = "action";
        *bad_val = sw_jdom_get(root, "action");
        return SW_ERR_INVALID_ARG;
    }
    const sw_jnode_t *job = sw_jdom_get(root, "job_id");
    if (!job || (job->type != SW_JN_STRING && job->type != SW_JN_NULL)) {
        *bad_key = "job_id";
        *bad_val = job;
        return SW_ERR_INVALID_ARG;
    }
    head->has_job_id = job->type == SW_JN_STRING;
    if (head->has_job_id) head->job_id = job->s;
    if (sw_action_is_x8(head->action)) return SW_OK;
    if (!head_int(root, "episode", &head->episode, bad_key, bad_val) ||
        !head_int(root, "revision", &head->revision, bad_key, bad_val))
        return SW_ERR_INVALID_ARG;
    return SW_OK;
}

sw_err_t sw_record_parse_json(const char *text, size_t len, sw_arena_t *arena, sw_record_t *rec,
                              char *errstr, size_t errstr_size)
{
    pctx_t c = {arena, errstr, errstr_size};
    char jerr[256];
    memset(rec, 0, sizeof(*rec));
    rec->resolve_rank = -1;
    rec->episode_confidence = -2;
    sw_jnode_t *root = sw_jdom_parse(text, len, arena, jerr, sizeof(jerr));
    if (!root) {
        sw_errfmt(errstr, errstr_size, "alert record: not JSON: %s", jerr);
        return SW_ERR_PARSE;
    }
    if (root->type != SW_JN_OBJECT) {
        sw_errfmt(errstr, errstr_size, "alert record: not a JSON object");
        return SW_ERR_INVALID_ARG;
    }
    sw_err_t err;
    sw_record_head_t head;
    const char *bad_key = NULL;
    const sw_jnode_t *bad_val = NULL;
    if (sw_record_head(root, &head, &bad_key, &bad_val) != SW_OK) {
        bool absent = !bad_val || bad_val->type == SW_JN_NULL;
        if (!strcmp(bad_key, "action"))
            return bad(&c, "action",
                       !bad_val || bad_val->type != SW_JN_STRING
                           ? "is missing (expected trigger, update, resolve or summary)"
                           : "is not trigger, update, resolve, summary, crash or warning");
        if (!strcmp(bad_key, "job_id"))
            return bad(&c, "job_id", "is missing (expected a string or null)");
        return bad(&c, bad_key,
                   absent ? "is missing (expected an integer)" : "is not an integer >= 0");
    }
    rec->action = head.action;
    sw_analysis_t *a = &rec->analysis;
    a->has_job_id = head.has_job_id;
    if (head.has_job_id) a->job_id = sw_arena_str(arena, head.job_id);
    if ((err = get_i64_array(&c, root, "blind_ranks", &rec->blind_ranks, &rec->n_blind)) != SW_OK)
        return err;
    if (sw_action_is_x8(rec->action)) return get_x8(&c, root, rec);
    rec->episode = head.episode;
    rec->revision = head.revision;
    if ((err = get_int(&c, root, "event_timestamp_ns", false, INT64_MIN, &rec->event_timestamp_ns,
                       &rec->has_event_ts)) != SW_OK)
        return err;
    if ((err = get_int(&c, root, "world_size", false, INT64_MIN, &a->world_size, NULL)) != SW_OK)
        return err;
    if ((err = get_i64_array(&c, root, "participating_ranks", &a->participating,
                             &a->n_participating)) != SW_OK ||
        (err = get_i64_array(&c, root, "missing_ranks", &a->missing, &a->n_missing)) != SW_OK ||
        (err = get_map(&c, root, "rank_sample_counts", &a->counts, &a->n_counts)) != SW_OK ||
        (err = get_map(&c, root, "alignment_offsets_ns", &a->offsets, &a->n_offsets)) != SW_OK)
        return err;
    const sw_jnode_t *onset = sw_jdom_get(root, "cluster_onset_timestamp_ns");
    if (onset && onset->type == SW_JN_INT && onset->i >= 0) {
        a->has_onset = true;
        a->onset_ns = (uint64_t)onset->i;
    } else if (onset && onset->type == SW_JN_NUMBER && onset->d >= 0) {
        a->has_onset = true;
        a->onset_ns = (uint64_t)onset->d;
    } else if (onset && onset->type != SW_JN_NULL) {
        return bad(&c, "cluster_onset_timestamp_ns", "is not an integer >= 0 or null");
    }
    const sw_jnode_t *sus = sw_jdom_get(root, "first_cause_suspects");
    if (sus && sus->type != SW_JN_NULL) {
        if (sus->type != SW_JN_ARRAY) return bad(&c, "first_cause_suspects", "is not an array");
        sw_suspect_t *s = sus->n ? sw_arena_calloc(arena, sus->n, sizeof(*s)) : NULL;
        for (size_t i = 0; i < sus->n; i++)
            if ((err = get_suspect(&c, &sus->items[i], &s[i])) != SW_OK) return err;
        a->suspects = s;
        a->n_suspects = sus->n;
    }
    const sw_jnode_t *notes = sw_jdom_get(root, "notes");
    if (notes && notes->type == SW_JN_ARRAY && notes->n) {
        sw_str_t *v = sw_arena_calloc(arena, notes->n, sizeof(*v));
        for (size_t i = 0; i < notes->n; i++) {
            if (notes->items[i].type != SW_JN_STRING)
                return bad(&c, "notes", "is not an array of strings");
            v[i] = sw_arena_str(arena, notes->items[i].s);
        }
        a->notes = v;
        a->n_notes = notes->n;
    }
    /* The anchor: the one map rank that is not a suspect's. */
    a->anchor_rank = -1;
    for (size_t i = 0; i < a->n_offsets && a->anchor_rank < 0; i++)
        if (!is_suspect(a, a->offsets[i].rank)) a->anchor_rank = a->offsets[i].rank;
    for (size_t i = 0; i < a->n_counts && a->anchor_rank < 0; i++)
        if (!is_suspect(a, a->counts[i].rank)) a->anchor_rank = a->counts[i].rank;

    sw_str_t sev = sw_jdom_str(sw_jdom_get(root, "severity"), "");
    if (sw_str_eq(sev, sw_str("critical"))) rec->episode_confidence = SW_CONFIDENCE_HIGH;
    else if (sw_str_eq(sev, sw_str("error"))) rec->episode_confidence = SW_CONFIDENCE_MEDIUM;
    else if (sw_str_eq(sev, sw_str("warning"))) rec->episode_confidence = SW_CONFIDENCE_LOW;
    const sw_jnode_t *src = sw_jdom_get(root, "source");
    if (src && src->type == SW_JN_OBJECT) {
        bool has = false;
        int64_t part = 0;
        if ((err = get_str(&c, src, "topic", &rec->source.topic, &has)) != SW_OK) return err;
        if ((err = get_int(&c, src, "partition", false, 0, &part, NULL)) != SW_OK) return err;
        if ((err = get_int(&c, src, "offset", false, INT64_MIN, &rec->source.offset, NULL)) !=
            SW_OK)
            return err;
        rec->source.partition = (int32_t)part;
        rec->source.set = has;
    }
    sw_str_t reason = sw_jdom_str(sw_jdom_get(root, "resolve_reason"), "");
    if (sw_str_eq(reason, sw_str("suspect_lost"))) rec->resolve_reason = SW_RESOLVE_SUSPECT_LOST;
    else if (sw_str_eq(reason, sw_str("onset_gone"))) rec->resolve_reason = SW_RESOLVE_ONSET_GONE;
    else if (sw_str_eq(reason, sw_str("next_storm"))) rec->resolve_reason = SW_RESOLVE_NEXT_STORM;
    const sw_jnode_t *tied = sw_jdom_get(root, "tied_ranks");
    if (tied && tied->type != SW_JN_NULL &&
        (err = get_i64_array(&c, root, "tied_ranks", &rec->tied_ranks, &rec->n_tied)) != SW_OK)
        return err;
    /* A summary closing an open episode: the episode's verdict. */
    const sw_jnode_t *ver = sw_jdom_get(root, "verdict");
    if (rec->action == SW_ACTION_SUMMARY && ver && ver->type == SW_JN_OBJECT) {
        const sw_jnode_t *vo = sw_jdom_get(ver, "cluster_onset_timestamp_ns");
        const sw_jnode_t *vs = sw_jdom_get(ver, "first_cause_suspects");
        if (!vo || vo->type != SW_JN_INT || vo->i < 0)
            return bad(&c, "verdict.cluster_onset_timestamp_ns", "is not an integer >= 0");
        if (!vs || vs->type != SW_JN_ARRAY)
            return bad(&c, "verdict.first_cause_suspects", "is not an array");
        sw_suspect_t *v = vs->n ? sw_arena_calloc(arena, vs->n, sizeof(*v)) : NULL;
        for (size_t i = 0; i < vs->n; i++)
            if ((err = get_suspect(&c, &vs->items[i], &v[i])) != SW_OK) return err;
        rec->has_verdict = true;
        rec->verdict_onset_ns = (uint64_t)vo->i;
        rec->verdict = v;
        rec->n_verdict = vs->n;
    }
    if ((err = get_int(&c, root, "resolve_lost_rank", false, 0, &rec->resolve_rank, NULL)) != SW_OK)
        return err;
    const sw_jnode_t *open = sw_jdom_get(root, "episode_open");
    if (open && open->type == SW_JN_BOOL) rec->episode_open = open->b;
    else if (rec->action == SW_ACTION_SUMMARY)
        /* Older summaries lack the flag: an onset means the episode is open. */
        rec->episode_open = rec->episode >= 1 && a->has_onset;
    else rec->episode_open = rec->action != SW_ACTION_RESOLVE;
    return SW_OK;
}
