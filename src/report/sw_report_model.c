/* The report's model: records parsed, validated and kept (see sw_report_int.h). */
#include "sw_report_int.h"

#include "sw_codec_alert.h"
#include "sw_codec_record.h"
#include "sw_codec_telemetry.h"

static sw_str_t str_dup(sw_str_t s)
{
    sw_str_t r = {sw_memdup0(s.ptr ? s.ptr : "", s.len), s.len};
    return r;
}

static void str_free(sw_str_t *s)
{
    free((char *)s->ptr);
    s->ptr = NULL;
    s->len = 0;
}

static void susp_clear_timeline(susp_t *s)
{
    free(s->tl_ns);
    free(s->tl_used);
    s->tl_ns = s->tl_used = NULL;
    s->n_tl = 0;
}

static void rec_free(rec_t *r)
{
    if (!r) return;
    free(r->missing);
    str_free(&r->severity);
    str_free(&r->dedup_key);
    str_free(&r->summary);
    str_free(&r->resolve_reason);
    str_free(&r->source_topic);
    str_free(&r->offset_max_rank);
    for (size_t i = 0; i < r->n_notes; i++) str_free(&r->notes[i]);
    free(r->notes);
    for (size_t i = 0; i < r->n_sus; i++) {
        susp_t *s = &r->sus[i];
        str_free(&s->confidence);
        str_free(&s->host);
        str_free(&s->phase);
        str_free(&s->tl_problem);
        susp_clear_timeline(s);
    }
    free(r->sus);
    free(r);
}

sw_report_t *sw_report_new(void)
{
    sw_report_t *rep = sw_calloc(1, sizeof(*rep));
    sw_arena_init(&rep->arena);
    return rep;
}

/* Free a job's crash chart data (sw_report_crash.c reads it in). */
static void ctl_free(ctl_t *c)
{
    if (!c) return;
    free(c->ts);
    free(c->used);
    free(c->total);
    free(c->marks);
    free(c->last_ts);
    free(c);
}

void sw_report_destroy(sw_report_t *rep)
{
    if (!rep) return;
    for (size_t j = 0; j < rep->n_jobs; j++) {
        job_t *job = rep->jobs[j];
        for (size_t e = 0; e < job->n_eps; e++) {
            for (size_t i = 0; i < job->eps[e].n; i++) rec_free(job->eps[e].recs[i]);
            free(job->eps[e].recs);
        }
        free(job->eps);
        for (size_t i = 0; i < job->n_sums; i++) rec_free(job->sums[i]);
        free(job->sums);
        free(job->sum_hashes);
        for (size_t i = 0; i < job->n_x8; i++) {
            free(job->x8s[i].summary);
            free(job->x8s[i].detail);
            x8item_t *it = &job->x8s[i];
            free(it->fd_host);
            free(it->dead);
            free(it->blind);
            free(it->w_rank);
            free(it->w_used);
            free(it->w_total);
            free(it->w_eta_ms);
        }
        free(job->x8s);
        ctl_free(job->ctl);
        str_free(&job->id);
        free(job);
    }
    free(rep->jobs);
    free(rep->slots);
    for (size_t i = 0; i < rep->n_files; i++) free(rep->files[i]);
    free(rep->files);
    sw_arena_clear(&rep->arena);
    sw_tdec_destroy(rep->tdec);
    free(rep);
}

uint64_t sw_report_records(const sw_report_t *rep)
{
    return rep->records;
}

size_t sw_report_episodes(const sw_report_t *rep)
{
    size_t n = 0;
    for (size_t j = 0; j < rep->n_jobs; j++) n += rep->jobs[j]->n_eps;
    return n;
}

/* ------------------------------------------------------------------ */
/* Parsing one record                                                  */
/* ------------------------------------------------------------------ */

/* A short printable rendering of a JSON value for error messages. */
static void describe(char *dst, size_t size, const sw_jnode_t *n)
{
    if (!n) {
        snprintf(dst, size, "missing");
        return;
    }
    switch (n->type) {
    case SW_JN_NULL: snprintf(dst, size, "null"); break;
    case SW_JN_BOOL: snprintf(dst, size, "%s", n->b ? "true" : "false"); break;
    case SW_JN_INT: snprintf(dst, size, "%" PRId64, n->i); break;
    case SW_JN_NUMBER: snprintf(dst, size, "%g", n->d); break;
    case SW_JN_ARRAY: snprintf(dst, size, "an array"); break;
    case SW_JN_OBJECT: snprintf(dst, size, "an object"); break;
    case SW_JN_STRING: {
        char tmp[44];
        size_t k = 0;
        for (size_t i = 0; i < n->s.len && k < 40; i++) {
            unsigned char c = (unsigned char)n->s.ptr[i];
            tmp[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
        }
        tmp[k] = '\0';
        snprintf(dst, size, "\"%s%s\"", tmp, n->s.len > 40 ? "..." : "");
        break;
    }
    }
}

typedef struct perr_s {
    char *errstr;
    size_t size;
    const char *file;
    uint64_t lineno;
} perr_t;

static sw_err_t field_err(const perr_t *pe, const char *field, const sw_jnode_t *v,
                          const char *expected)
{
    char val[64];
    describe(val, sizeof(val), v);
    if (!v)
        snprintf(pe->errstr, pe->size, "%s:%" PRIu64 ": field \"%s\" is missing, expected %s",
                 pe->file, pe->lineno, field, expected);
    else
        snprintf(pe->errstr, pe->size, "%s:%" PRIu64 ": field \"%s\" is %s, expected %s", pe->file,
                 pe->lineno, field, val, expected);
    return SW_ERR_INVALID_ARG;
}

static bool is_int(const sw_jnode_t *n)
{
    return n && n->type == SW_JN_INT;
}

static sw_str_t opt_str(const sw_jnode_t *obj, const char *key)
{
    const sw_jnode_t *n = sw_jdom_get(obj, key);
    if (n && n->type == SW_JN_STRING) return str_dup(n->s);
    sw_str_t none = {NULL, 0};
    return none;
}

/* The phase label of an attribution (SPEC 5 shapes), or unknown. */
static void parse_phase(const sw_jnode_t *pa, susp_t *s)
{
    s->phase_kind = PHASE_UNKNOWN;
    if (!pa || pa->type != SW_JN_OBJECT) return;
    const sw_jnode_t *path = sw_jdom_get(pa, "phase_path");
    if (path && path->type == SW_JN_STRING) {
        s->phase_kind = PHASE_UNIQUE;
        s->phase = str_dup(path->s);
        return;
    }
    const sw_jnode_t *sum = sw_jdom_get(sw_jdom_get(pa, "phase_summary"), "phase_path");
    if (sum && sum->type == SW_JN_STRING) {
        s->phase_kind = PHASE_HEURISTIC;
        s->phase = str_dup(sum->s);
        return;
    }
    const sw_jnode_t *paths = sw_jdom_get(pa, "phase_paths");
    if (paths && paths->type == SW_JN_ARRAY && paths->n > 0) {
        sw_buf_t b;
        sw_buf_init(&b);
        for (size_t i = 0; i < paths->n; i++) {
            if (paths->items[i].type != SW_JN_STRING) continue;
            if (b.len) sw_buf_puts(&b, " | ");
            sw_buf_put(&b, paths->items[i].s.ptr, paths->items[i].s.len);
        }
        if (b.len) {
            s->phase_kind = PHASE_AMBIGUOUS;
            s->phase = str_dup((sw_str_t){b.data, b.len});
        }
        sw_buf_clear(&b);
    }
}

static void tl_problem(susp_t *s, const char *why)
{
    susp_clear_timeline(s);
    str_free(&s->tl_problem);
    s->tl_problem = str_dup(sw_str(why));
}

/* The suspect's timeline excerpt; a malformed one is not an error of the
 * record: it is left out of the chart and the report says why. */
static void parse_timeline(const sw_jnode_t *tl, susp_t *s)
{
    s->tl_window = s->tl_start = s->tl_spike = -1;
    if (!tl || tl->type == SW_JN_NULL) return;
    if (tl->type != SW_JN_OBJECT) {
        tl_problem(s, "timeline is not an object");
        return;
    }
    const sw_jnode_t *ts = sw_jdom_get(tl, "aligned_timestamp_ns");
    const sw_jnode_t *used = sw_jdom_get(tl, "device_used_bytes");
    if (!ts || ts->type != SW_JN_ARRAY || !used || used->type != SW_JN_ARRAY) {
        tl_problem(s, "timeline lacks the aligned_timestamp_ns and device_used_bytes arrays");
        return;
    }
    if (ts->n != used->n) {
        tl_problem(s, "timeline arrays differ in length");
        return;
    }
    if (ts->n == 0) {
        tl_problem(s, "timeline is empty");
        return;
    }
    s->n_tl = ts->n;
    s->tl_ns = sw_malloc(ts->n * sizeof(*s->tl_ns));
    s->tl_used = sw_malloc(ts->n * sizeof(*s->tl_used));
    for (size_t i = 0; i < ts->n; i++) {
        if (!is_int(&ts->items[i]) || !is_int(&used->items[i])) {
            tl_problem(s, "timeline holds a value that is not an integer");
            return;
        }
        s->tl_ns[i] = ts->items[i].i;
        s->tl_used[i] = used->items[i].i;
        if (i > 0 && s->tl_ns[i] < s->tl_ns[i - 1]) {
            tl_problem(s, "timeline timestamps are not in ascending order");
            return;
        }
    }
    s->tl_window = sw_jdom_int(sw_jdom_get(tl, "window_samples"), -1);
    int64_t a = sw_jdom_int(sw_jdom_get(tl, "spike_start_index"), -1);
    int64_t b = sw_jdom_int(sw_jdom_get(tl, "spike_index"), -1);
    s->tl_start = a >= 0 && (uint64_t)a < s->n_tl ? a : -1;
    s->tl_spike = b >= 0 && (uint64_t)b < s->n_tl ? b : -1;
    if (s->tl_start > s->tl_spike) s->tl_start = -1;
}

static sw_err_t parse_suspect(const perr_t *pe, const sw_jnode_t *n, size_t idx, susp_t *s)
{
    char field[64];
    snprintf(field, sizeof(field), "first_cause_suspects[%zu]", idx);
    if (n->type != SW_JN_OBJECT) return field_err(pe, field, n, "an object");
    const sw_jnode_t *rank = sw_jdom_get(n, "rank");
    if (!is_int(rank) || rank->i < 0) {
        snprintf(field, sizeof(field), "first_cause_suspects[%zu].rank", idx);
        return field_err(pe, field, rank, "an integer >= 0");
    }
    s->rank = rank->i;
    const sw_jnode_t *v = sw_jdom_get(n, "aligned_first_spike_timestamp_ns");
    s->has_aligned = is_int(v);
    s->aligned_ns = s->has_aligned ? v->i : 0;
    v = sw_jdom_get(n, "peak_delta_bytes");
    s->has_delta = is_int(v);
    s->peak_delta_bytes = s->has_delta ? v->i : 0;
    v = sw_jdom_get(n, "lead_over_cluster_onset_ns");
    s->has_lead = is_int(v);
    s->lead_ns = s->has_lead ? v->i : 0;
    s->spike_samples = sw_jdom_int(sw_jdom_get(n, "spike_window_samples"), -1);
    s->confidence = opt_str(n, "confidence");
    s->host = opt_str(n, "host");
    s->device_id = sw_jdom_int(sw_jdom_get(n, "device_id"), -1);
    parse_phase(sw_jdom_get(n, "phase_attribution"), s);
    parse_timeline(sw_jdom_get(n, "timeline"), s);
    return SW_OK;
}

static sw_err_t parse_record(const perr_t *pe, const sw_jnode_t *root, rec_t *r,
                             sw_record_head_t *head)
{
    if (root->type != SW_JN_OBJECT) {
        char val[64];
        describe(val, sizeof(val), root);
        snprintf(pe->errstr, pe->size,
                 "%s:%" PRIu64 ": expected an alert record (JSON object), got %s", pe->file,
                 pe->lineno, val);
        return SW_ERR_INVALID_ARG;
    }
    /* The head (action, job_id, episode, revision) is the codec's to read;
     * crash and warning records went to add_x8() before. */
    const char *bad_key = NULL;
    const sw_jnode_t *v = NULL;
    if (sw_record_head(root, head, &bad_key, &v) != SW_OK || sw_action_is_x8(head->action)) {
        if (!bad_key || !strcmp(bad_key, "action"))
            return field_err(pe, "action", sw_jdom_get(root, "action"),
                             "trigger, update, resolve or summary");
        return field_err(pe, bad_key, v,
                         !strcmp(bad_key, "job_id") ? "a string or null" : "an integer >= 0");
    }
    r->act = (act_t)head->action;
    r->episode = head->episode;
    if (r->act != ACT_SUMMARY && r->episode < 1)
        return field_err(pe, "episode", sw_jdom_get(root, "episode"),
                         "an integer >= 1 in a trigger, update or resolve");
    r->revision = head->revision;
    v = sw_jdom_get(root, "event_timestamp_ns");
    if (v && v->type != SW_JN_NULL && !is_int(v))
        return field_err(pe, "event_timestamp_ns", v, "an integer or null");
    r->has_event = is_int(v);
    r->event_ns = r->has_event ? v->i : 0;
    v = sw_jdom_get(root, "cluster_onset_timestamp_ns");
    if (v && v->type != SW_JN_NULL && !is_int(v))
        return field_err(pe, "cluster_onset_timestamp_ns", v, "an integer or null");
    r->has_onset = is_int(v);
    r->onset_ns = r->has_onset ? v->i : 0;
    const sw_jnode_t *sus = sw_jdom_get(root, "first_cause_suspects");
    if (sus && sus->type != SW_JN_ARRAY && sus->type != SW_JN_NULL)
        return field_err(pe, "first_cause_suspects", sus, "an array");
    if (sus && sus->type == SW_JN_ARRAY && sus->n) {
        r->sus = sw_calloc(sus->n, sizeof(*r->sus));
        for (size_t i = 0; i < sus->n; i++) {
            r->n_sus = i + 1; /* so that rec_free() frees what was parsed */
            sw_err_t err = parse_suspect(pe, &sus->items[i], i, &r->sus[i]);
            if (err != SW_OK) return err;
        }
    }
    v = sw_jdom_get(root, "world_size");
    r->world_size = sw_jdom_int(v, -1);
    v = sw_jdom_get(root, "participating_ranks");
    r->n_participating = v && v->type == SW_JN_ARRAY ? (int64_t)v->n : -1;
    v = sw_jdom_get(root, "missing_ranks");
    if (v && v->type == SW_JN_ARRAY && v->n) {
        r->missing = sw_malloc(v->n * sizeof(*r->missing));
        for (size_t i = 0; i < v->n; i++)
            if (is_int(&v->items[i])) r->missing[r->n_missing++] = v->items[i].i;
    }
    v = sw_jdom_get(root, "notes");
    if (v && v->type == SW_JN_ARRAY && v->n) {
        r->notes = sw_calloc(v->n, sizeof(*r->notes));
        for (size_t i = 0; i < v->n; i++)
            if (v->items[i].type == SW_JN_STRING) r->notes[r->n_notes++] = str_dup(v->items[i].s);
    }
    v = sw_jdom_get(root, "rank_sample_counts");
    if (v && v->type == SW_JN_OBJECT) {
        for (size_t i = 0; i < v->n; i++) {
            if (!is_int(&v->items[i])) continue;
            int64_t c = v->items[i].i;
            if (r->n_counts == 0 || c < r->counts_min) r->counts_min = c;
            if (r->n_counts == 0 || c > r->counts_max) r->counts_max = c;
            r->counts_sum = (int64_t)((uint64_t)r->counts_sum + (uint64_t)c); /* no UB on junk */
            r->n_counts++;
        }
    }
    v = sw_jdom_get(root, "alignment_offsets_ns");
    if (v && v->type == SW_JN_OBJECT) {
        for (size_t i = 0; i < v->n; i++) {
            if (!is_int(&v->items[i])) continue;
            int64_t o = v->items[i].i;
            int64_t a = o < 0 ? (o == INT64_MIN ? INT64_MAX : -o) : o;
            if (!r->has_offset || a > r->offset_max_abs_ns) {
                r->has_offset = true;
                r->offset_max_abs_ns = a;
                str_free(&r->offset_max_rank);
                r->offset_max_rank = str_dup(v->keys[i]);
            }
        }
    }
    r->severity = opt_str(root, "severity");
    r->dedup_key = opt_str(root, "dedup_key");
    r->summary = opt_str(root, "summary");
    r->resolve_reason = opt_str(root, "resolve_reason");
    r->resolve_lost_rank = sw_jdom_int(sw_jdom_get(root, "resolve_lost_rank"), -1);
    const sw_jnode_t *src = sw_jdom_get(root, "source");
    if (src && src->type == SW_JN_OBJECT) {
        r->has_source = true;
        r->source_topic = opt_str(src, "topic");
        r->source_partition = sw_jdom_int(sw_jdom_get(src, "partition"), -1);
        r->source_offset = sw_jdom_int(sw_jdom_get(src, "offset"), -1);
    }
    return SW_OK;
}

/* ------------------------------------------------------------------ */
/* Grouping                                                            */
/* ------------------------------------------------------------------ */

static uint64_t job_hash(sw_str_t id, bool is_null)
{
    return sw_hash_bytes(id.ptr, id.len, is_null ? 0x6e756c6cULL : 0x737472ULL);
}

static void slots_grow(sw_report_t *rep)
{
    size_t n = rep->n_slots ? rep->n_slots * 2 : 64;
    uint32_t *slots = sw_calloc(n, sizeof(*slots));
    for (size_t j = 0; j < rep->n_jobs; j++) {
        size_t h = (size_t)job_hash(rep->jobs[j]->id, rep->jobs[j]->is_null) & (n - 1);
        while (slots[h]) h = (h + 1) & (n - 1);
        slots[h] = (uint32_t)(j + 1);
    }
    free(rep->slots);
    rep->slots = slots;
    rep->n_slots = n;
}

job_t *sw_report_job_find(const sw_report_t *rep, sw_str_t id, bool is_null)
{
    if (!rep->n_slots) return NULL;
    size_t mask = rep->n_slots - 1;
    size_t h = (size_t)job_hash(id, is_null) & mask;
    while (rep->slots[h]) {
        job_t *job = rep->jobs[rep->slots[h] - 1];
        if (job->is_null == is_null && sw_str_eq(job->id, id)) return job;
        h = (h + 1) & mask;
    }
    return NULL;
}

static job_t *job_get(sw_report_t *rep, sw_str_t id, bool is_null)
{
    if ((rep->n_jobs + 1) * 2 > rep->n_slots) slots_grow(rep);
    size_t mask = rep->n_slots - 1;
    size_t h = (size_t)job_hash(id, is_null) & mask;
    while (rep->slots[h]) {
        job_t *job = rep->jobs[rep->slots[h] - 1];
        if (job->is_null == is_null && sw_str_eq(job->id, id)) return job;
        h = (h + 1) & mask;
    }
    job_t *job = sw_calloc(1, sizeof(*job));
    job->id = str_dup(id);
    job->is_null = is_null;
    if (rep->n_jobs == rep->cap_jobs) {
        rep->cap_jobs = rep->cap_jobs ? rep->cap_jobs * 2 : 16;
        rep->jobs = sw_reallocarray(rep->jobs, rep->cap_jobs, sizeof(*rep->jobs));
    }
    rep->jobs[rep->n_jobs++] = job;
    rep->slots[h] = (uint32_t)rep->n_jobs;
    return job;
}

static ep_t *ep_get(job_t *job, int64_t episode)
{
    for (size_t i = job->n_eps; i-- > 0;)
        if (job->eps[i].episode == episode) return &job->eps[i];
    if (job->n_eps == job->cap_eps) {
        job->cap_eps = job->cap_eps ? job->cap_eps * 2 : 4;
        job->eps = sw_reallocarray(job->eps, job->cap_eps, sizeof(*job->eps));
    }
    ep_t *ep = &job->eps[job->n_eps++];
    memset(ep, 0, sizeof(*ep));
    ep->episode = episode;
    return ep;
}

/* The record an episode is charted from: the trigger/update with the
 * highest revision (the latest on a tie). A resolve has no onset. */
rec_t *sw_report_ep_chart(const ep_t *ep)
{
    rec_t *best = NULL;
    for (size_t i = 0; i < ep->n; i++) {
        rec_t *r = ep->recs[i];
        if (r->act == ACT_RESOLVE) continue;
        if (!best || r->revision >= best->revision) best = r;
    }
    return best;
}

static size_t file_index(sw_report_t *rep, const char *file)
{
    if (rep->n_files && !strcmp(rep->files[rep->n_files - 1], file)) return rep->n_files - 1;
    for (size_t i = 0; i < rep->n_files; i++)
        if (!strcmp(rep->files[i], file)) return i;
    rep->files = sw_reallocarray(rep->files, rep->n_files + 1, sizeof(*rep->files));
    rep->files[rep->n_files] = sw_strdup(file);
    return rep->n_files++;
}

static void add_lifecycle(sw_report_t *rep, job_t *job, rec_t *r)
{
    ep_t *ep = ep_get(job, r->episode);
    /* At-least-once delivery repeats records: (action, revision) names
     * one record of an episode, the first copy is kept. */
    for (size_t i = 0; i < ep->n; i++) {
        if (ep->recs[i]->act == r->act && ep->recs[i]->revision == r->revision) {
            ep->dups++;
            rep->dups++;
            rec_free(r);
            return;
        }
    }
    rec_t *prev = sw_report_ep_chart(ep);
    SW_GROW(ep->recs, ep->n, ep->cap, 4);
    ep->recs[ep->n++] = r;
    /* Only the charted record keeps its timelines: memory stays bounded
     * by one record per episode. */
    rec_t *now = sw_report_ep_chart(ep);
    if (prev && prev != now)
        for (size_t i = 0; i < prev->n_sus; i++) susp_clear_timeline(&prev->sus[i]);
    if (r != now)
        for (size_t i = 0; i < r->n_sus; i++) susp_clear_timeline(&r->sus[i]);
}

static void add_summary(sw_report_t *rep, job_t *job, rec_t *r, uint64_t hash)
{
    for (size_t i = 0; i < job->n_sums; i++) {
        if (job->sum_hashes[i] == hash && job->sums[i]->episode == r->episode) {
            rep->dups++;
            rec_free(r);
            return;
        }
    }
    if (job->n_sums == job->cap_sums) {
        job->cap_sums = job->cap_sums ? job->cap_sums * 2 : 2;
        job->sums = sw_reallocarray(job->sums, job->cap_sums, sizeof(*job->sums));
        job->sum_hashes = sw_reallocarray(job->sum_hashes, job->cap_sums, sizeof(*job->sum_hashes));
    }
    job->sum_hashes[job->n_sums] = hash;
    job->sums[job->n_sums++] = r;
}

/* A crash or warning record: listed under its job (SPEC 8). */
static sw_err_t add_x8(sw_report_t *rep, const char *line, size_t len, const perr_t *pe)
{
    sw_record_t rec;
    char why[256];
    if (sw_record_parse_json(line, len, &rep->arena, &rec, why, sizeof(why)) != SW_OK) {
        snprintf(pe->errstr, pe->size, "%s:%" PRIu64 ": %s", pe->file, pe->lineno, why);
        return SW_ERR_INVALID_ARG;
    }
    job_t *job = job_get(rep, rec.analysis.has_job_id ? rec.analysis.job_id : sw_str(""),
                         !rec.analysis.has_job_id);
    const sw_x8_t *x = rec.x8;
    for (size_t i = 0; i < job->n_x8; i++) {
        const x8item_t *o = &job->x8s[i];
        if (o->act == (int)rec.action && o->number == x->number && o->revision == rec.revision &&
            o->open == x->open) {
            rep->dups++;
            rep->records++;
            return SW_OK;
        }
    }
    SW_GROW(job->x8s, job->n_x8, job->cap_x8, 4);
    x8item_t *it = &job->x8s[job->n_x8++];
    memset(it, 0, sizeof(*it));
    it->act = (int)rec.action;
    it->number = x->number;
    it->revision = rec.revision;
    it->has_event = rec.has_event_ts;
    it->event_ns = rec.event_timestamp_ns;
    it->open = x->open;
    it->fd_rank = -1;
    it->fd_device = -1;
    if (rec.action == SW_ACTION_CRASH) {
        it->fd_rank = x->first.rank;
        it->fd_silent = x->first.cause == SW_DEATH_SILENT;
        if (x->first.host.len) it->fd_host = sw_memdup0(x->first.host.ptr, x->first.host.len);
        if (x->first.has_device_id) it->fd_device = x->first.device_id;
        it->fd_ts = x->first.timestamp_ns;
        it->fd_aligned = x->first.aligned_timestamp_ns;
        it->deaths = x->deaths;
        if (x->n_dead) {
            it->dead = sw_malloc(x->n_dead * sizeof(*it->dead));
            memcpy(it->dead, x->dead_ranks, x->n_dead * sizeof(*it->dead));
            it->n_dead = x->n_dead;
        }
    }
    if (rec.n_blind) {
        it->blind = sw_malloc(rec.n_blind * sizeof(*it->blind));
        memcpy(it->blind, rec.blind_ranks, rec.n_blind * sizeof(*it->blind));
        it->n_blind = rec.n_blind;
    }
    if (rec.action == SW_ACTION_WARNING && x->n_wranks) {
        size_t n = x->n_wranks;
        it->w_rank = sw_malloc(n * sizeof(int64_t));
        it->w_used = sw_malloc(n * sizeof(int64_t));
        it->w_total = sw_malloc(n * sizeof(int64_t));
        it->w_eta_ms = sw_malloc(n * sizeof(int64_t));
        for (size_t k = 0; k < n; k++) {
            it->w_rank[k] = x->wranks[k].rank;
            it->w_used[k] = x->wranks[k].used_bytes;
            it->w_total[k] = x->wranks[k].total_bytes;
            it->w_eta_ms[k] = x->wranks[k].eta_ms;
        }
        it->n_w = n;
    }
    sw_buf_t b;
    sw_buf_init(&b);
    sw_record_summary(&rec, &b);
    it->summary = sw_strdup(sw_buf_cstr(&b));
    b.len = 0;
    if (rec.action == SW_ACTION_CRASH) {
        sw_buf_printf(&b, "%lld dead:", (long long)x->deaths);
        for (size_t i = 0; i < x->n_dead; i++)
            sw_buf_printf(&b, " %lld", (long long)x->dead_ranks[i]);
        if ((int64_t)x->n_dead < x->deaths) sw_buf_puts(&b, " ...");
    } else if (x->n_wranks) {
        sw_buf_puts(&b, "close to full:");
        for (size_t i = 0; i < x->n_wranks; i++)
            sw_buf_printf(&b, " %lld (%.0f s)", (long long)x->wranks[i].rank,
                          (double)x->wranks[i].eta_ms / 1000.0);
    }
    if (rec.n_blind) {
        sw_buf_puts(&b, b.len ? "; blind:" : "blind:");
        for (size_t i = 0; i < rec.n_blind; i++)
            sw_buf_printf(&b, " %lld", (long long)rec.blind_ranks[i]);
    }
    it->detail = sw_strdup(sw_buf_cstr(&b));
    sw_buf_clear(&b);
    rep->records++;
    return SW_OK;
}

sw_err_t sw_report_add(sw_report_t *rep, const char *line, size_t len, const char *file,
                       uint64_t lineno, char *errstr, size_t errstr_size)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n'))
        i++;
    if (i == len) return SW_OK;
    perr_t pe = {errstr, errstr_size, file ? file : "<input>", lineno};
    char why[200];
    sw_arena_reset(&rep->arena);
    sw_jnode_t *root = sw_jdom_parse(line, len, &rep->arena, why, sizeof(why));
    if (!root) {
        snprintf(errstr, errstr_size, "%s:%" PRIu64 ": %s", pe.file, lineno, why);
        return SW_ERR_PARSE;
    }
    sw_action_t act;
    if (root->type == SW_JN_OBJECT && sw_record_action(root, &act) && sw_action_is_x8(act)) {
        sw_arena_reset(&rep->arena);
        return add_x8(rep, line + i, len - i, &pe);
    }
    rec_t *r = sw_calloc(1, sizeof(*r));
    sw_record_head_t head;
    sw_err_t err = parse_record(&pe, root, r, &head);
    if (err != SW_OK) {
        rec_free(r);
        return err;
    }
    job_t *job = job_get(rep, head.has_job_id ? head.job_id : sw_str(""), !head.has_job_id);
    r->seq = rep->records++;
    r->file = file_index(rep, pe.file);
    r->lineno = lineno;
    if (r->act == ACT_SUMMARY) add_summary(rep, job, r, sw_hash_bytes(line, len, 7));
    else add_lifecycle(rep, job, r);
    return SW_OK;
}

/* ------------------------------------------------------------------ */
/* Formatting                                                          */
/* ------------------------------------------------------------------ */
