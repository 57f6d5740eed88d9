/*
 * Incident report (see sw_report.h): alert records are validated and kept
 * per job and episode as plain structs; rendering writes one HTML page with
 * inline CSS and one inline SVG chart per episode. Every string that came
 * from the input goes through sw_report_escape(). No I/O, no clock: times
 * shown are the records' own timestamps.
 */
#include "sw_report.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sw_alloc.h"
#include "sw_arena.h"
#include "sw_jdom.h"

/* ------------------------------------------------------------------ */
/* Model                                                               */
/* ------------------------------------------------------------------ */

typedef enum act_e { ACT_TRIGGER = 0, ACT_UPDATE, ACT_RESOLVE, ACT_SUMMARY } act_t;

static const char *const act_names[] = {"trigger", "update", "resolve", "summary"};

/* How a suspect's phase was given. */
typedef enum phase_kind_e {
    PHASE_UNKNOWN = 0, /* null or absent attribution */
    PHASE_UNIQUE,      /* phase_path */
    PHASE_HEURISTIC,   /* ambiguous, phase_summary.phase_path */
    PHASE_AMBIGUOUS    /* ambiguous without a summary: phase_paths only */
} phase_kind_t;

typedef struct susp_s {
    int64_t rank;
    bool has_aligned;
    int64_t aligned_ns;        /* aligned_first_spike_timestamp_ns */
    bool has_delta;
    int64_t peak_delta_bytes;
    bool has_lead;
    int64_t lead_ns;           /* lead_over_cluster_onset_ns */
    int64_t spike_samples;     /* spike_window_samples, -1 when absent */
    sw_str_t confidence;       /* owned; len 0: unknown */
    sw_str_t host;             /* owned; len 0: not in the record */
    int64_t device_id;         /* -1 when absent */
    phase_kind_t phase_kind;
    sw_str_t phase;            /* owned label (paths joined by " | " when ambiguous) */
    /* Timeline excerpt; n_tl == 0: none (or unusable, see tl_problem). */
    size_t n_tl;
    int64_t *tl_ns;            /* aligned timestamps (owned) */
    int64_t *tl_used;          /* device_used_bytes (owned) */
    int64_t tl_window;         /* window_samples, -1 when absent */
    int64_t tl_start;          /* spike_start_index, -1 when absent or out of range */
    int64_t tl_spike;          /* spike_index, -1 when absent or out of range */
    sw_str_t tl_problem;       /* owned; why a timeline present in the record is not drawn */
} susp_t;

typedef struct rec_s {
    act_t act;
    int64_t episode;
    int64_t revision;
    bool has_event;
    int64_t event_ns;
    bool has_onset;
    int64_t onset_ns;
    int64_t world_size;        /* -1 when absent */
    int64_t n_participating;   /* -1 when absent */
    int64_t *missing;          /* owned */
    size_t n_missing;
    sw_str_t severity, dedup_key, summary; /* owned, len 0 when absent */
    sw_str_t resolve_reason;   /* owned; resolve records: why the episode ended */
    int64_t resolve_lost_rank; /* -1 when absent */
    bool has_source;
    sw_str_t source_topic;     /* owned */
    int64_t source_partition, source_offset;
    sw_str_t *notes;           /* owned, each owned */
    size_t n_notes;
    susp_t *sus;               /* owned */
    size_t n_sus;
    size_t n_counts;           /* rank_sample_counts entries */
    int64_t counts_min, counts_max, counts_sum;
    bool has_offset;
    int64_t offset_max_abs_ns; /* largest |alignment offset| and its rank */
    sw_str_t offset_max_rank;  /* owned key */
    uint64_t seq;              /* arrival order over the whole report */
    size_t file;               /* index into the report's file names */
    uint64_t lineno;
} rec_t;

typedef struct ep_s {
    int64_t episode;
    rec_t **recs;              /* trigger/update/resolve in arrival order */
    size_t n, cap;
    uint64_t dups;             /* records dropped as duplicates */
} ep_t;

typedef struct job_s {
    sw_str_t id;               /* owned */
    bool is_null;
    ep_t *eps;
    size_t n_eps, cap_eps;
    rec_t **sums;              /* summaries in arrival order */
    size_t n_sums, cap_sums;
    uint64_t *sum_hashes;      /* line hashes of the summaries (duplicates) */
} job_t;

struct sw_report_s {
    job_t **jobs;              /* in order of first appearance */
    size_t n_jobs, cap_jobs;
    uint32_t *slots;           /* open addressing: job index + 1, 0 = empty */
    size_t n_slots;
    char **files;              /* distinct input names, in order */
    size_t n_files;
    uint64_t records;
    uint64_t dups;
    sw_arena_t arena;          /* scratch for one record's DOM */
};

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
        str_free(&job->id);
        free(job);
    }
    free(rep->jobs);
    free(rep->slots);
    for (size_t i = 0; i < rep->n_files; i++) free(rep->files[i]);
    free(rep->files);
    sw_arena_clear(&rep->arena);
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

static sw_err_t parse_record(const perr_t *pe, const sw_jnode_t *root, rec_t *r)
{
    if (root->type != SW_JN_OBJECT) {
        char val[64];
        describe(val, sizeof(val), root);
        snprintf(pe->errstr, pe->size, "%s:%" PRIu64 ": expected an alert record (JSON object), got %s",
                 pe->file, pe->lineno, val);
        return SW_ERR_INVALID_ARG;
    }
    const sw_jnode_t *v = sw_jdom_get(root, "action");
    int act = -1;
    if (v && v->type == SW_JN_STRING)
        for (int i = 0; i < 4; i++)
            if (sw_str_eq(v->s, sw_str(act_names[i]))) act = i;
    if (act < 0) return field_err(pe, "action", v, "trigger, update, resolve or summary");
    r->act = (act_t)act;
    v = sw_jdom_get(root, "job_id");
    if (!v || (v->type != SW_JN_STRING && v->type != SW_JN_NULL))
        return field_err(pe, "job_id", v, "a string or null");
    v = sw_jdom_get(root, "episode");
    if (!is_int(v) || v->i < 0) return field_err(pe, "episode", v, "an integer >= 0");
    r->episode = v->i;
    if (r->act != ACT_SUMMARY && r->episode < 1)
        return field_err(pe, "episode", v, "an integer >= 1 in a trigger, update or resolve");
    v = sw_jdom_get(root, "revision");
    if (!is_int(v) || v->i < 0) return field_err(pe, "revision", v, "an integer >= 0");
    r->revision = v->i;
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
static rec_t *ep_chart(const ep_t *ep)
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
    rec_t *prev = ep_chart(ep);
    if (ep->n == ep->cap) {
        ep->cap = ep->cap ? ep->cap * 2 : 4;
        ep->recs = sw_reallocarray(ep->recs, ep->cap, sizeof(*ep->recs));
    }
    ep->recs[ep->n++] = r;
    /* Only the charted record keeps its timelines: memory stays bounded
     * by one record per episode. */
    rec_t *now = ep_chart(ep);
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

sw_err_t sw_report_add(sw_report_t *rep, const char *line, size_t len, const char *file,
                       uint64_t lineno, char *errstr, size_t errstr_size)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n')) i++;
    if (i == len) return SW_OK;
    perr_t pe = {errstr, errstr_size, file ? file : "<input>", lineno};
    char why[200];
    sw_arena_reset(&rep->arena);
    sw_jnode_t *root = sw_jdom_parse(line, len, &rep->arena, why, sizeof(why));
    if (!root) {
        snprintf(errstr, errstr_size, "%s:%" PRIu64 ": %s", pe.file, lineno, why);
        return SW_ERR_PARSE;
    }
    rec_t *r = sw_calloc(1, sizeof(*r));
    sw_err_t err = parse_record(&pe, root, r);
    if (err != SW_OK) {
        rec_free(r);
        return err;
    }
    const sw_jnode_t *jid = sw_jdom_get(root, "job_id");
    bool is_null = jid->type == SW_JN_NULL;
    sw_str_t id = is_null ? sw_str("") : jid->s;
    job_t *job = job_get(rep, id, is_null);
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

void sw_report_escape(sw_buf_t *out, sw_str_t s)
{
    const unsigned char *p = (const unsigned char *)s.ptr;
    size_t i = 0;
    while (i < s.len) {
        unsigned char c = p[i];
        if (c < 0x80) {
            switch (c) {
            case '&': sw_buf_puts(out, "&amp;"); break;
            case '<': sw_buf_puts(out, "&lt;"); break;
            case '>': sw_buf_puts(out, "&gt;"); break;
            case '"': sw_buf_puts(out, "&quot;"); break;
            case '\'': sw_buf_puts(out, "&#39;"); break;
            default:
                if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) sw_buf_puts(out, "\xEF\xBF\xBD");
                else sw_buf_putc(out, (char)c);
            }
            i++;
            continue;
        }
        /* A well-formed UTF-8 sequence (no overlongs, no surrogates, at
         * most U+10FFFF) is copied; anything else becomes U+FFFD. */
        size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
        if (c >= 0xf5) n = 0;
        bool ok = n > 0 && i + n <= s.len;
        for (size_t k = 1; ok && k < n; k++) ok = (p[i + k] & 0xc0) == 0x80;
        if (ok && n == 3) {
            if (c == 0xe0 && p[i + 1] < 0xa0) ok = false;
            if (c == 0xed && p[i + 1] >= 0xa0) ok = false;
        }
        if (ok && n == 4) {
            if (c == 0xf0 && p[i + 1] < 0x90) ok = false;
            if (c == 0xf4 && p[i + 1] >= 0x90) ok = false;
        }
        if (ok) {
            sw_buf_put(out, p + i, n);
            i += n;
        } else {
            sw_buf_puts(out, "\xEF\xBF\xBD");
            i++;
        }
    }
}

static void esc(sw_buf_t *out, sw_str_t s)
{
    sw_report_escape(out, s);
}

static void escc(sw_buf_t *out, const char *s)
{
    sw_report_escape(out, sw_str(s));
}

/* printf("%.*f") without trailing zeros ("6.50" -> "6.5", "2.00" -> "2"). */
static void put_trim(sw_buf_t *out, double v, int decimals)
{
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "%.*f", decimals, v);
    size_t n = strlen(tmp);
    if (strchr(tmp, '.')) {
        while (n > 0 && tmp[n - 1] == '0') n--;
        if (n > 0 && tmp[n - 1] == '.') n--;
    }
    tmp[n] = '\0';
    if (!strcmp(tmp, "-0")) strcpy(tmp, "0");
    sw_buf_puts(out, tmp);
}

/* Three significant digits. */
static int sig3(double x)
{
    return x < 9.995 ? 2 : x < 99.95 ? 1 : 0;
}

void sw_report_bytes(sw_buf_t *out, int64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double a = bytes < 0 ? -(double)bytes : (double)bytes;
    if (bytes < 0) sw_buf_putc(out, '-');
    if (a < 1024.0) {
        put_trim(out, a, 0);
        sw_buf_puts(out, " B");
        return;
    }
    int u = 0;
    while (a >= 1023.995 && u < 6) {
        a /= 1024.0;
        u++;
    }
    put_trim(out, a, sig3(a));
    sw_buf_putc(out, ' ');
    sw_buf_puts(out, units[u]);
}

void sw_report_duration(sw_buf_t *out, int64_t ns)
{
    double a = ns < 0 ? -(double)ns : (double)ns;
    if (ns < 0) sw_buf_putc(out, '-');
    if (a == 0) {
        sw_buf_puts(out, "0 s");
        return;
    }
    const char *unit;
    double v;
    if (a < 999.5) unit = "ns", v = a;
    else if (a < 999.5e3) unit = "\xC2\xB5s", v = a / 1e3;
    else if (a < 999.5e6) unit = "ms", v = a / 1e6;
    else if (a < 119.95e9) unit = "s", v = a / 1e9;
    else if (a < 7199.5e9) unit = "min", v = a / 60e9;
    else unit = "h", v = a / 3600e9;
    put_trim(out, v, sig3(v));
    sw_buf_putc(out, ' ');
    sw_buf_puts(out, unit);
}

/* A record timestamp (ns since the epoch) as UTC with milliseconds. */
static void put_utc(sw_buf_t *out, int64_t ns)
{
    time_t sec = (time_t)(ns / 1000000000);
    int64_t ms = (ns % 1000000000) / 1000000;
    if (ms < 0) {
        ms += 1000;
        sec -= 1;
    }
    struct tm tm;
    if (ns < 0 || !gmtime_r(&sec, &tm) || tm.tm_year + 1900 > 9999) {
        sw_buf_put_i64(out, ns);
        sw_buf_puts(out, " ns");
        return;
    }
    sw_buf_printf(out, "%04d-%02d-%02d %02d:%02d:%02d.%03d UTC", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)ms);
}

/* Signed offset relative to the onset: "+300 ms", "−1.2 s", "0". */
static void put_rel(sw_buf_t *out, int64_t ns)
{
    if (ns == 0) {
        sw_buf_puts(out, "0");
        return;
    }
    sw_buf_puts(out, ns > 0 ? "+" : "\xE2\x88\x92");
    sw_report_duration(out, ns > 0 ? ns : (ns == INT64_MIN ? INT64_MAX : -ns));
}

/* Rank list, the first @p max of them then "and N more". */
static void put_ranks(sw_buf_t *out, const int64_t *ranks, size_t n, size_t max)
{
    if (n == 0) {
        sw_buf_puts(out, "none");
        return;
    }
    for (size_t i = 0; i < n && i < max; i++) {
        if (i) sw_buf_puts(out, ", ");
        sw_buf_put_i64(out, ranks[i]);
    }
    if (n > max) sw_buf_printf(out, " and %zu more", n - max);
}

static sw_str_t sev_of(const rec_t *r)
{
    return r->severity.len ? r->severity : sw_str("none");
}

/* A CSS class for a severity: only known words, never input text. */
static const char *sev_class(sw_str_t sev)
{
    static const char *const known[] = {"critical", "error", "warning", "info"};
    for (size_t i = 0; i < 4; i++)
        if (sw_str_eq(sev, sw_str(known[i]))) return known[i];
    return "other";
}

static void put_job_name(sw_buf_t *out, const job_t *job)
{
    if (job->is_null) {
        sw_buf_puts(out, "<em>null job_id</em>");
        return;
    }
    sw_buf_puts(out, "<code>");
    esc(out, job->id);
    sw_buf_puts(out, "</code>");
}

static void put_phase(sw_buf_t *out, const susp_t *s)
{
    switch (s->phase_kind) {
    case PHASE_UNIQUE: esc(out, s->phase); break;
    case PHASE_HEURISTIC:
        esc(out, s->phase);
        sw_buf_puts(out, " <span class=\"muted\">(ambiguous; heuristic phase_summary)</span>");
        break;
    case PHASE_AMBIGUOUS:
        sw_buf_puts(out, "unknown <span class=\"muted\">(ambiguous: ");
        esc(out, s->phase);
        sw_buf_puts(out, ")</span>");
        break;
    default: sw_buf_puts(out, "unknown"); break;
    }
}

/* ------------------------------------------------------------------ */
/* Chart                                                               */
/* ------------------------------------------------------------------ */

/* Colours per suspect (colour-blind friendly order of Tableau 10 and
 * two extras); the series index picks one, cycling. */
static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
                                      "#393b79", "#637939"};
#define N_PALETTE (sizeof(palette) / sizeof(palette[0]))

#define CH_W 960.0
#define CH_ML 88.0
#define CH_MR 24.0
#define CH_MT 36.0
#define CH_PH 300.0
#define CH_PW (CH_W - CH_ML - CH_MR)

typedef struct chart_s {
    double lo, hi;     /* x domain: ns relative to the onset */
    double ymin, ymax; /* y domain: bytes */
    bool delta_mode;   /* no timeline at all: y is the peak delta */
} chart_t;

static double cx(const chart_t *ch, double x)
{
    return CH_ML + (x - ch->lo) / (ch->hi - ch->lo) * CH_PW;
}

static double cy(const chart_t *ch, double y)
{
    return CH_MT + CH_PH - (y - ch->ymin) / (ch->ymax - ch->ymin) * CH_PH;
}

static void put_xy(sw_buf_t *out, double x, double y)
{
    sw_buf_printf(out, "%.1f,%.1f", x, y);
}

static double nice_step(double raw)
{
    if (!(raw > 0)) return 1;
    double e = pow(10.0, floor(log10(raw)));
    double f = raw / e;
    double n = f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0;
    return n * e;
}

static int step_decimals(double step_units)
{
    if (step_units >= 1.0) return 0;
    int d = (int)ceil(-log10(step_units) - 1e-9);
    return d > 6 ? 6 : d;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int64_t rel_ns(int64_t t, int64_t onset)
{
    return (int64_t)((uint64_t)t - (uint64_t)onset);
}

/* Indices of a series to draw: those inside [lo, hi] plus one neighbour on
 * each side (the plot clips them), thinned to SW_REPORT_MAX_POINTS with the
 * spike's first and last sample kept. @returns the count. */
static size_t pick_points(const susp_t *s, int64_t onset, const chart_t *ch, size_t *idx)
{
    size_t first = s->n_tl, last = 0;
    for (size_t i = 0; i < s->n_tl; i++) {
        double x = (double)rel_ns(s->tl_ns[i], onset);
        if (x >= ch->lo && x <= ch->hi) {
            if (first == s->n_tl) first = i;
            last = i;
        }
    }
    if (first == s->n_tl) return 0;
    if (first > 0) first--;
    if (last + 1 < s->n_tl) last++;
    size_t count = last - first + 1;
    size_t k = 1;
    if (count > SW_REPORT_MAX_POINTS) k = (count + SW_REPORT_MAX_POINTS - 4) / (SW_REPORT_MAX_POINTS - 3);
    size_t n = 0;
    for (size_t i = first; i <= last; i++) {
        bool keep = (i - first) % k == 0 || i == last || (int64_t)i == s->tl_start ||
                    (int64_t)i == s->tl_spike;
        if (keep) idx[n++] = i;
    }
    return n;
}

static void put_text(sw_buf_t *out, double x, double y, const char *anchor, const char *cls,
                     const char *fill)
{
    sw_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"", x, y, anchor);
    if (cls) sw_buf_printf(out, " class=\"%s\"", cls);
    /* a style, not a fill attribute: the page's CSS outranks attributes */
    if (fill) sw_buf_printf(out, " style=\"fill:%s\"", fill);
    sw_buf_putc(out, '>');
}

/* Compute the domains of an episode's chart. @returns false when there is
 * nothing to place (no onset or no suspect with a time). */
static bool chart_domain(const rec_t *r, size_t n_series, chart_t *ch)
{
    int64_t onset = r->onset_ns;
    double core_lo = 0, core_hi = 0;
    double data_lo = INFINITY, data_hi = -INFINITY;
    size_t n_dt = 0, cap_dt = 0;
    double *dts = NULL;
    bool any_tl = false, any = false;
    for (size_t i = 0; i < n_series; i++) {
        const susp_t *s = &r->sus[i];
        if (s->has_aligned) {
            double x = (double)rel_ns(s->aligned_ns, onset);
            core_lo = fmin(core_lo, x);
            core_hi = fmax(core_hi, x);
            any = true;
        }
        if (!s->n_tl) continue;
        any_tl = any = true;
        if (s->tl_start >= 0) core_lo = fmin(core_lo, (double)rel_ns(s->tl_ns[s->tl_start], onset));
        if (s->tl_spike >= 0) {
            double x = (double)rel_ns(s->tl_ns[s->tl_spike], onset);
            core_lo = fmin(core_lo, x);
            core_hi = fmax(core_hi, x);
        }
        data_lo = fmin(data_lo, (double)rel_ns(s->tl_ns[0], onset));
        data_hi = fmax(data_hi, (double)rel_ns(s->tl_ns[s->n_tl - 1], onset));
        if (cap_dt < n_dt + s->n_tl) {
            cap_dt = (n_dt + s->n_tl) * 2;
            dts = sw_reallocarray(dts, cap_dt, sizeof(*dts));
        }
        for (size_t k = 1; k < s->n_tl; k++)
            if (s->tl_ns[k] > s->tl_ns[k - 1]) dts[n_dt++] = (double)(s->tl_ns[k] - s->tl_ns[k - 1]);
    }
    if (!any) {
        free(dts);
        return false;
    }
    double span = core_hi - core_lo;
    double dt = 0;
    if (n_dt) {
        qsort(dts, n_dt, sizeof(*dts), cmp_double);
        dt = dts[n_dt / 2];
    }
    free(dts);
    ch->delta_mode = !any_tl;
    if (any_tl) {
        /* Around the storm: the rising runs and the onset with context of
         * twice their span or 25 sampling intervals on each side, within
         * the excerpts' extent. */
        if (dt <= 0) dt = span > 0 ? span / 10 : 1e8;
        double pad = fmax(2 * span, 25 * dt);
        ch->lo = fmax(core_lo - pad, fmin(data_lo, core_lo));
        ch->hi = fmin(core_hi + pad, fmax(data_hi, core_hi));
    } else {
        double pad = fmax(span * 0.5, 5e7);
        ch->lo = core_lo - pad;
        ch->hi = core_hi + pad;
    }
    /* keep the onset and the spikes off the frame */
    ch->hi = fmax(ch->hi, core_hi + 0.06 * (core_hi - ch->lo));
    ch->lo = fmin(ch->lo, core_lo - 0.06 * (ch->hi - core_lo));
    if (ch->hi - ch->lo < 1e3) {
        ch->lo -= 5e5;
        ch->hi += 5e5;
    }
    double m = (ch->hi - ch->lo) * 0.02;
    ch->lo -= m;
    ch->hi += m;
    /* y */
    double ymin = INFINITY, ymax = -INFINITY;
    if (any_tl) {
        for (size_t i = 0; i < n_series; i++) {
            const susp_t *s = &r->sus[i];
            for (size_t k = 0; k < s->n_tl; k++) {
                double x = (double)rel_ns(s->tl_ns[k], onset);
                if (x < ch->lo || x > ch->hi) continue;
                ymin = fmin(ymin, (double)s->tl_used[k]);
                ymax = fmax(ymax, (double)s->tl_used[k]);
            }
        }
        if (!(ymin <= ymax)) ymin = 0, ymax = 1;
        double range = ymax - ymin;
        if (range < 1048576.0) {
            double mid = (ymin + ymax) / 2;
            ymin = mid - 524288.0;
            ymax = mid + 524288.0;
            range = 1048576.0;
        }
        ymin -= range * 0.06;
        ymax += range * 0.06;
        if (ymin < 0 && (ymin + range * 0.06) >= 0) ymin = 0;
    } else {
        ymin = 0;
        ymax = 0;
        for (size_t i = 0; i < n_series; i++)
            if (r->sus[i].has_delta) ymax = fmax(ymax, (double)r->sus[i].peak_delta_bytes);
        if (ymax <= 0) ymax = 1048576.0;
        ymax *= 1.15;
    }
    ch->ymin = ymin;
    ch->ymax = ymax;
    return true;
}

static void chart_axes(sw_buf_t *out, const chart_t *ch)
{
    /* y ticks in the unit of the larger end */
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double big = fmax(fabs(ch->ymin), fabs(ch->ymax));
    int u = 0;
    double unit = 1;
    while (u < 5 && big >= unit * 1024.0) {
        unit *= 1024.0;
        u++;
    }
    double step_u = nice_step((ch->ymax - ch->ymin) / unit / 6.0);
    int dec = step_decimals(step_u);
    double step = step_u * unit;
    sw_buf_puts(out, "<g class=\"axis y\">");
    int guard = 0;
    for (double v = ceil(ch->ymin / step) * step; v <= ch->ymax + step * 1e-9 && guard++ < 40;
         v += step) {
        double y = cy(ch, v);
        sw_buf_printf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
                      CH_ML, CH_ML + CH_PW, y, y);
        put_text(out, CH_ML - 8, y + 4, "end", NULL, NULL);
        put_trim(out, v / unit, dec);
        sw_buf_printf(out, " %s</text>", units[u]);
    }
    sw_buf_puts(out, "</g>");
    /* x ticks: time relative to the onset */
    double xstep = nice_step((ch->hi - ch->lo) / 8.0);
    double xunit;
    const char *xname;
    if (xstep >= 1e9) xunit = 1e9, xname = "s";
    else if (xstep >= 1e6) xunit = 1e6, xname = "ms";
    else if (xstep >= 1e3) xunit = 1e3, xname = "\xC2\xB5s";
    else xunit = 1, xname = "ns";
    int xdec = step_decimals(xstep / xunit);
    sw_buf_puts(out, "<g class=\"axis x\">");
    guard = 0;
    for (double v = ceil(ch->lo / xstep) * xstep; v <= ch->hi + xstep * 1e-9 && guard++ < 40;
         v += xstep) {
        double x = cx(ch, v);
        sw_buf_printf(out, "<line class=\"tick\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
                      x, x, CH_MT + CH_PH, CH_MT + CH_PH + 5);
        put_text(out, x, CH_MT + CH_PH + 19, "middle", NULL, NULL);
        if (fabs(v) < xstep * 1e-6) {
            sw_buf_puts(out, "0");
        } else {
            sw_buf_puts(out, v > 0 ? "+" : "\xE2\x88\x92");
            put_trim(out, fabs(v) / xunit, xdec);
            sw_buf_printf(out, " %s", xname);
        }
        sw_buf_puts(out, "</text>");
    }
    sw_buf_puts(out, "</g>");
    sw_buf_printf(out, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
                  CH_ML, CH_MT, CH_PW, CH_PH);
    put_text(out, CH_ML + CH_PW / 2, CH_MT + CH_PH + 40, "middle", "axis-title", NULL);
    sw_buf_puts(out, "time relative to the cluster onset (aligned clocks)</text>");
    sw_buf_printf(out,
                  "<text class=\"axis-title\" text-anchor=\"middle\" "
                  "transform=\"translate(18 %.1f) rotate(-90)\">%s</text>",
                  CH_MT + CH_PH / 2,
                  ch->delta_mode ? "rise at the spike (peak delta)" : "device memory used");
}

/* Short description of a suspect for titles and legends. */
static void put_suspect_brief(sw_buf_t *out, const susp_t *s)
{
    sw_buf_printf(out, "rank %" PRId64, s->rank);
    if (s->has_lead) {
        sw_buf_puts(out, ", lead ");
        sw_report_duration(out, s->lead_ns);
    }
    if (s->confidence.len) {
        sw_buf_puts(out, ", ");
        esc(out, s->confidence);
    }
}

static void chart_series(sw_buf_t *out, const rec_t *r, size_t n_series, const chart_t *ch,
                         unsigned chart_no)
{
    size_t *idx = sw_malloc(SW_REPORT_MAX_POINTS * 2 * sizeof(*idx) + 1);
    sw_buf_printf(out, "<g clip-path=\"url(#clip-%u)\">", chart_no);
    for (size_t i = 0; i < n_series; i++) {
        const susp_t *s = &r->sus[i];
        const char *col = palette[i % N_PALETTE];
        if (!s->n_tl) continue;
        size_t n = pick_points(s, r->onset_ns, ch, idx);
        if (n == 0) continue;
        sw_buf_printf(out,
                      "<path class=\"series\" data-rank=\"%" PRId64 "\" data-points=\"%zu\" "
                      "stroke=\"%s\" d=\"",
                      s->rank, n, col);
        for (size_t k = 0; k < n; k++) {
            size_t j = idx[k];
            sw_buf_putc(out, k ? 'L' : 'M');
            put_xy(out, cx(ch, (double)rel_ns(s->tl_ns[j], r->onset_ns)), cy(ch, (double)s->tl_used[j]));
        }
        sw_buf_puts(out, "\"><title>");
        put_suspect_brief(out, s);
        sw_buf_printf(out, ": device_used_bytes, %zu of %zu excerpt points</title></path>", n, s->n_tl);
        /* the rising run that qualified as the spike */
        if (s->tl_start >= 0 && s->tl_spike > s->tl_start) {
            sw_buf_printf(out, "<path class=\"rise\" stroke=\"%s\" d=\"", col);
            for (int64_t j = s->tl_start; j <= s->tl_spike; j++) {
                sw_buf_putc(out, j == s->tl_start ? 'M' : 'L');
                put_xy(out, cx(ch, (double)rel_ns(s->tl_ns[j], r->onset_ns)), cy(ch, (double)s->tl_used[j]));
            }
            sw_buf_puts(out, "\"/>");
        }
    }
    sw_buf_puts(out, "</g>");
    free(idx);
}

/* Spike markers, drawn over the series and outside the clip. */
static void chart_spikes(sw_buf_t *out, const rec_t *r, size_t n_series, const chart_t *ch)
{
    double placed[SW_REPORT_MAX_SERIES][2];
    size_t n_placed = 0;
    sw_buf_puts(out, "<g class=\"spikes\">");
    for (size_t i = 0; i < n_series; i++) {
        const susp_t *s = &r->sus[i];
        const char *col = palette[i % N_PALETTE];
        double x, y;
        bool on_series = false;
        if (s->n_tl && s->tl_spike >= 0) {
            x = (double)rel_ns(s->tl_ns[s->tl_spike], r->onset_ns);
            y = (double)s->tl_used[s->tl_spike];
            on_series = true;
        } else if (s->has_aligned) {
            x = (double)rel_ns(s->aligned_ns, r->onset_ns);
            y = ch->delta_mode && s->has_delta ? (double)s->peak_delta_bytes : ch->ymin;
        } else {
            continue;
        }
        if (x < ch->lo || x > ch->hi) continue;
        double px = cx(ch, x), py = cy(ch, y);
        sw_buf_printf(out, "<g class=\"spike\" data-rank=\"%" PRId64 "\"><title>", s->rank);
        put_suspect_brief(out, s);
        sw_buf_puts(out, ": spike at ");
        put_rel(out, (int64_t)x);
        sw_buf_puts(out, " from the onset");
        if (s->has_delta) {
            sw_buf_puts(out, ", peak delta +");
            sw_report_bytes(out, s->peak_delta_bytes);
        }
        if (!s->n_tl) sw_buf_puts(out, " (no timeline in record)");
        sw_buf_puts(out, "</title>");
        if (on_series) {
            sw_buf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"%s\"/>", px, py, col);
        } else if (ch->delta_mode) {
            sw_buf_printf(out,
                          "<line class=\"stem\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                          "stroke=\"%s\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"%s\"/>",
                          px, px, cy(ch, 0), py, col, px, py, col);
        } else {
            /* no timeline beside others that have one: a dashed line at
             * the spike time and a triangle on the time axis */
            sw_buf_printf(out,
                          "<line class=\"stem dashed\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                          "y2=\"%.1f\" stroke=\"%s\"/><path d=\"M%.1f,%.1fl-6,10h12z\" fill=\"%s\"/>",
                          px, px, CH_MT, CH_MT + CH_PH, col, px, CH_MT + CH_PH - 10, col);
            py = CH_MT + CH_PH - 10;
        }
        /* labels of spikes close in time are stacked, not overprinted */
        double ly = py - 11 < CH_MT + 12 ? py + 20 : py - 11;
        for (size_t k = 0; k < n_placed; k++) {
            if (fabs(placed[k][0] - px) < 26 && fabs(placed[k][1] - ly) < 13) {
                ly = placed[k][1] - 14;
                k = (size_t)-1; /* check again from the first */
            }
        }
        placed[n_placed][0] = px;
        placed[n_placed][1] = ly;
        n_placed++;
        put_text(out, px, ly, "middle", "spike-label", col);
        sw_buf_printf(out, "r%" PRId64 "</text></g>", s->rank);
    }
    sw_buf_puts(out, "</g>");
}

static void chart_legend(sw_buf_t *out, const rec_t *r, size_t n_series, double y0)
{
    sw_buf_puts(out, "<g class=\"legend\">");
    /* onset first, then the suspects, two columns */
    for (size_t e = 0; e <= n_series; e++) {
        double x = CH_ML + (double)(e % 2) * (CH_PW / 2);
        double y = y0 + (double)(e / 2) * 20;
        if (e == 0) {
            sw_buf_printf(out,
                          "<line class=\"onset\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
                          x, x + 24, y, y);
            put_text(out, x + 30, y + 4, "start", NULL, NULL);
            sw_buf_puts(out, "cluster onset (second-earliest candidate spike)</text>");
            continue;
        }
        const susp_t *s = &r->sus[e - 1];
        const char *col = palette[(e - 1) % N_PALETTE];
        sw_buf_printf(out,
                      "<line class=\"swatch\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                      "stroke=\"%s\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>",
                      x, x + 24, y, y, col, x + 12, y, col);
        put_text(out, x + 30, y + 4, "start", NULL, NULL);
        put_suspect_brief(out, s);
        if (!s->n_tl) sw_buf_puts(out, " \xE2\x80\x94 no timeline in record");
        sw_buf_puts(out, "</text>");
    }
    sw_buf_puts(out, "</g>");
}

/* The chart of an episode's charted record; a paragraph instead when
 * there is nothing to place. */
static void put_chart(sw_buf_t *out, const job_t *job, const ep_t *ep, const rec_t *r,
                      unsigned chart_no)
{
    size_t n_series = r->n_sus < SW_REPORT_MAX_SERIES ? r->n_sus : SW_REPORT_MAX_SERIES;
    chart_t ch;
    if (!r->has_onset || n_series == 0 || !chart_domain(r, n_series, &ch)) {
        sw_buf_puts(out, "<p class=\"nochart\">No chart: the charted record has no cluster onset "
                         "or no suspect with a spike time.</p>\n");
        return;
    }
    size_t with_tl = 0;
    for (size_t i = 0; i < n_series; i++) with_tl += r->sus[i].n_tl ? 1 : 0;
    double legend_y = CH_MT + CH_PH + 66;
    double height = legend_y + (double)((n_series + 2) / 2) * 20 + 4;
    /* accessible name: what the chart shows in one sentence */
    sw_buf_t label;
    sw_buf_init(&label);
    sw_buf_puts(&label, "Device memory of the suspect ranks around the cluster onset, job ");
    if (job->is_null) sw_buf_puts(&label, "null");
    else esc(&label, job->id);
    sw_buf_printf(&label, ", episode %" PRId64 ": ", ep->episode);
    for (size_t i = 0; i < n_series; i++) {
        const susp_t *s = &r->sus[i];
        if (i) sw_buf_puts(&label, "; ");
        sw_buf_printf(&label, "rank %" PRId64 " spiked ", s->rank);
        if (s->has_lead && s->lead_ns > 0) {
            sw_report_duration(&label, s->lead_ns);
            sw_buf_puts(&label, " before the onset");
        } else {
            sw_buf_puts(&label, "at the onset");
        }
        if (s->has_delta) {
            sw_buf_puts(&label, " by +");
            sw_report_bytes(&label, s->peak_delta_bytes);
        }
        if (!s->n_tl) sw_buf_puts(&label, " (no timeline in record)");
    }
    sw_buf_puts(&label, ".");
    sw_buf_printf(out,
                  "<figure class=\"chart\"><svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" "
                  "role=\"img\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
                  "aria-labelledby=\"chart-%u-title chart-%u-desc\" aria-label=\"",
                  CH_W, height, CH_W, height, chart_no, chart_no);
    sw_buf_put(out, label.data, label.len);
    sw_buf_printf(out, "\"><title id=\"chart-%u-title\">", chart_no);
    sw_buf_put(out, label.data, label.len);
    sw_buf_printf(out, "</title><desc id=\"chart-%u-desc\">", chart_no);
    if (ch.delta_mode)
        sw_buf_puts(out, "No suspect carries a timeline in the record: each spike is drawn at its "
                         "aligned_first_spike_timestamp_ns with the height of its peak delta.");
    else
        sw_buf_puts(out, "Aligned device_used_bytes timelines of the suspects, the rising run that "
                         "qualified as each spike drawn thick, each spike sample marked, the cluster "
                         "onset as a dashed vertical line at 0.");
    sw_buf_puts(out, "</desc>");
    sw_buf_printf(out,
                  "<defs><clipPath id=\"clip-%u\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                  "height=\"%.1f\"/></clipPath></defs>",
                  chart_no, CH_ML, CH_MT, CH_PW, CH_PH);
    sw_buf_printf(out, "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\"/>", CH_W,
                  height);
    chart_axes(out, &ch);
    chart_series(out, r, n_series, &ch, chart_no);
    /* the onset */
    double ox = cx(&ch, 0);
    sw_buf_printf(out,
                  "<g class=\"onset-marker\"><title>cluster onset: aligned time %" PRId64 " ns (",
                  r->onset_ns);
    put_utc(out, r->onset_ns);
    sw_buf_printf(out,
                  ")</title><line class=\"onset\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
                  ox, ox, CH_MT - 6, CH_MT + CH_PH);
    const char *anchor = ox > CH_ML + CH_PW - 48 ? "end" : ox < CH_ML + 48 ? "start" : "middle";
    put_text(out, ox, CH_MT - 10, anchor, "onset-label", NULL);
    sw_buf_puts(out, "cluster onset</text></g>");
    chart_spikes(out, r, n_series, &ch);
    chart_legend(out, r, n_series, legend_y);
    sw_buf_puts(out, "</svg>\n<figcaption>");
    if (ch.delta_mode) {
        sw_buf_puts(out, "No timeline in record: each suspect is drawn at its aligned spike time "
                         "with its peak delta. ");
    } else {
        sw_buf_puts(out, "Window around the storm: ");
        put_rel(out, (int64_t)ch.lo);
        sw_buf_puts(out, " to ");
        put_rel(out, (int64_t)ch.hi);
        sw_buf_puts(out, " from the cluster onset (");
        put_utc(out, r->onset_ns);
        sw_buf_puts(out, ", aligned clock of the anchor rank). ");
        for (size_t i = 0; i < n_series; i++) {
            const susp_t *s = &r->sus[i];
            if (!s->n_tl) continue;
            sw_buf_printf(out, "Rank %" PRId64 ": %zu-point excerpt", s->rank, s->n_tl);
            if (s->tl_window >= 0) sw_buf_printf(out, " of a %" PRId64 "-sample window", s->tl_window);
            sw_buf_puts(out, ". ");
        }
        if (with_tl < n_series) sw_buf_puts(out, "Suspects without a timeline in the record are "
                                                 "marked at their aligned spike time only. ");
    }
    if (r->n_sus > n_series)
        sw_buf_printf(out, "The %zu earliest of %zu suspects are charted; all are in the table.",
                      n_series, r->n_sus);
    sw_buf_puts(out, "</figcaption></figure>\n");
    sw_buf_clear(&label);
}

/* ------------------------------------------------------------------ */
/* Page                                                                */
/* ------------------------------------------------------------------ */

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1d1d1f;"
    "background:#f5f6f8;margin:0}"
    "main{max-width:1040px;margin:0 auto;padding:16px 24px 48px}"
    "h1{font-size:24px;margin:16px 0 4px}h2{font-size:20px;margin:32px 0 8px;border-bottom:2px solid #d0d4da;"
    "padding-bottom:4px}h3{font-size:16px;margin:20px 0 6px}h4{font-size:14px;margin:14px 0 4px}"
    "code{font:12.5px ui-monospace,Menlo,Consolas,monospace;background:#eceef1;padding:1px 4px;"
    "border-radius:3px;overflow-wrap:anywhere}"
    "section.episode,section.summary{background:#fff;border:1px solid #d9dde3;border-radius:6px;"
    "padding:4px 18px 14px;margin:14px 0;border-left:6px solid #8a94a3}"
    "section.sev-critical{border-left-color:#c62828}section.sev-error{border-left-color:#ef6c00}"
    "section.sev-warning{border-left-color:#f9a825}section.sev-info{border-left-color:#1565c0}"
    ".badge{display:inline-block;font-size:12px;font-weight:600;padding:1px 8px;border-radius:10px;"
    "color:#fff;background:#6b7480;vertical-align:middle}"
    ".badge.critical{background:#c62828}.badge.error{background:#ef6c00}"
    ".badge.warning{background:#b58900}.badge.info{background:#1565c0}"
    ".summary-line{font-weight:600;margin:6px 0}.muted{color:#6b7480}"
    "table{border-collapse:collapse;margin:6px 0 10px;width:100%}"
    "th,td{border:1px solid #dde1e6;padding:4px 8px;text-align:left;vertical-align:top}"
    "th{background:#f0f2f5;font-weight:600}td.num{text-align:right;white-space:nowrap}"
    "tr.charted td{background:#fff8e1}"
    "dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:6px 0}"
    "dl.facts dt{color:#6b7480}dl.facts dd{margin:0}"
    "p.choice{background:#f0f4fa;border:1px solid #d5deeb;border-radius:4px;padding:6px 10px}"
    "figure.chart{margin:8px 0}svg.chart{max-width:100%;height:auto;display:block}"
    "figcaption{color:#4a5260;font-size:12.5px;margin-top:4px}"
    "svg text{font:12px system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;fill:#333}"
    "svg .axis-title{font-size:12.5px;fill:#555}svg .spike-label{font-weight:700}"
    "svg .onset-label{font-weight:700;fill:#111}"
    "svg rect.bg{fill:#fff}svg rect.frame{fill:none;stroke:#9aa3ad}"
    "svg line.grid{stroke:#e6e9ed}svg line.tick{stroke:#9aa3ad}"
    "svg path.series{fill:none;stroke-width:1.8;stroke-linejoin:round}"
    "svg path.rise{fill:none;stroke-width:6;stroke-opacity:.35;stroke-linecap:round}"
    "svg line.onset{stroke:#111;stroke-width:1.6;stroke-dasharray:6 4}"
    "svg line.stem{stroke-width:2}svg line.dashed{stroke-dasharray:3 3}"
    "svg line.swatch{stroke-width:2.5}svg circle{stroke:#fff;stroke-width:1.5}"
    "ul.notes{margin:4px 0;padding-left:20px}"
    "nav table td,nav table th{font-size:13px}"
    "footer{color:#6b7480;font-size:12px;margin-top:32px}";

static void put_source(sw_buf_t *out, const rec_t *r)
{
    if (!r->has_source) return;
    sw_buf_puts(out, "<dt>source</dt><dd>topic <code>");
    esc(out, r->source_topic);
    sw_buf_printf(out, "</code> [%" PRId64 "] offset %" PRId64 "</dd>", r->source_partition,
                  r->source_offset);
}

static void put_notes(sw_buf_t *out, const rec_t *r)
{
    if (r->n_notes == 0) {
        sw_buf_puts(out, "<p class=\"muted\">No notes.</p>\n");
        return;
    }
    sw_buf_puts(out, "<ul class=\"notes\">");
    for (size_t i = 0; i < r->n_notes; i++) {
        sw_buf_puts(out, "<li>");
        esc(out, r->notes[i]);
        sw_buf_puts(out, "</li>");
    }
    sw_buf_puts(out, "</ul>\n");
}

static void put_suspects(sw_buf_t *out, const rec_t *r)
{
    if (r->n_sus == 0) {
        sw_buf_puts(out, "<p class=\"muted\">No suspects.</p>\n");
        return;
    }
    sw_buf_puts(out, "<table class=\"suspects\"><thead><tr><th>rank</th><th>runs on</th>"
                     "<th>lead over onset</th>"
                     "<th>spike (aligned, from onset)</th><th>peak delta</th><th>rising samples</th>"
                     "<th>confidence</th><th>phase</th><th>timeline</th></tr></thead><tbody>");
    for (size_t i = 0; i < r->n_sus; i++) {
        const susp_t *s = &r->sus[i];
        sw_buf_printf(out, "<tr><td class=\"num\">%" PRId64 "</td><td>", s->rank);
        if (s->host.len) {
            esc(out, s->host);
            if (s->device_id >= 0) sw_buf_printf(out, " GPU %" PRId64, s->device_id);
        } else {
            sw_buf_puts(out, "?");
        }
        sw_buf_puts(out, "</td><td class=\"num\">");
        if (!s->has_lead) sw_buf_puts(out, "?");
        else if (s->lead_ns == 0) sw_buf_puts(out, "0 (at onset)");
        else sw_report_duration(out, s->lead_ns);
        sw_buf_puts(out, "</td><td class=\"num\">");
        if (s->has_aligned && r->has_onset) put_rel(out, rel_ns(s->aligned_ns, r->onset_ns));
        else if (s->has_aligned) sw_buf_printf(out, "%" PRId64 " ns", s->aligned_ns);
        else sw_buf_puts(out, "?");
        sw_buf_puts(out, "</td><td class=\"num\">");
        if (s->has_delta) {
            sw_buf_puts(out, "+");
            sw_report_bytes(out, s->peak_delta_bytes);
        } else {
            sw_buf_puts(out, "?");
        }
        sw_buf_puts(out, "</td><td class=\"num\">");
        if (s->spike_samples >= 0) sw_buf_put_i64(out, s->spike_samples);
        else sw_buf_puts(out, "?");
        sw_buf_puts(out, "</td><td>");
        if (s->confidence.len) esc(out, s->confidence);
        else sw_buf_puts(out, "unknown");
        sw_buf_puts(out, "</td><td>");
        put_phase(out, s);
        sw_buf_puts(out, "</td><td>");
        if (s->n_tl) sw_buf_printf(out, "%zu points", s->n_tl);
        else if (s->tl_problem.len) {
            sw_buf_puts(out, "not drawn: ");
            esc(out, s->tl_problem);
        } else sw_buf_puts(out, "no timeline in record");
        sw_buf_puts(out, "</td></tr>");
    }
    sw_buf_puts(out, "</tbody></table>\n");
}

static int cmp_rec(const void *pa, const void *pb)
{
    const rec_t *a = *(rec_t *const *)pa, *b = *(rec_t *const *)pb;
    if (a->revision != b->revision) return a->revision < b->revision ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static const rec_t *first_of(const ep_t *ep, act_t act)
{
    for (size_t i = 0; i < ep->n; i++)
        if (ep->recs[i]->act == act) return ep->recs[i];
    return NULL;
}

static void put_lifecycle(sw_buf_t *out, const ep_t *ep, const rec_t *chart)
{
    rec_t **recs = sw_malloc((ep->n ? ep->n : 1) * sizeof(*recs));
    memcpy(recs, ep->recs, ep->n * sizeof(*recs));
    qsort(recs, ep->n, sizeof(*recs), cmp_rec);
    const rec_t *trig = first_of(ep, ACT_TRIGGER);
    sw_buf_puts(out, "<table class=\"lifecycle\"><thead><tr><th>record</th><th>revision</th>"
                     "<th>event time (UTC)</th><th>since trigger</th><th>onset vs charted</th>"
                     "<th>suspects</th><th>severity</th><th>summary</th></tr></thead><tbody>");
    for (size_t i = 0; i < ep->n; i++) {
        const rec_t *r = recs[i];
        sw_buf_printf(out, "<tr class=\"%s%s\"><td>%s%s</td><td class=\"num\">%" PRId64 "</td><td>",
                      act_names[r->act], r == chart ? " charted" : "", act_names[r->act],
                      r == chart ? " <span class=\"muted\">(charted)</span>" : "", r->revision);
        if (r->has_event) put_utc(out, r->event_ns);
        else sw_buf_puts(out, "\xE2\x80\x94");
        sw_buf_puts(out, "</td><td class=\"num\">");
        if (trig && trig->has_event && r->has_event) put_rel(out, rel_ns(r->event_ns, trig->event_ns));
        else sw_buf_puts(out, "\xE2\x80\x94");
        sw_buf_puts(out, "</td><td>");
        if (!r->has_onset) sw_buf_puts(out, "none");
        else if (chart && chart->has_onset && r->onset_ns != chart->onset_ns)
            put_rel(out, rel_ns(r->onset_ns, chart->onset_ns));
        else sw_buf_puts(out, "as charted");
        sw_buf_puts(out, "</td><td>");
        for (size_t k = 0; k < r->n_sus && k < 8; k++) {
            if (k) sw_buf_puts(out, ", ");
            sw_buf_printf(out, "%" PRId64, r->sus[k].rank);
            if (r->sus[k].confidence.len) {
                sw_buf_puts(out, " (");
                esc(out, r->sus[k].confidence);
                sw_buf_puts(out, ")");
            }
        }
        if (r->n_sus > 8) sw_buf_printf(out, " and %zu more", r->n_sus - 8);
        if (r->n_sus == 0) sw_buf_puts(out, "none");
        sw_buf_printf(out, "</td><td><span class=\"badge %s\">", sev_class(sev_of(r)));
        esc(out, sev_of(r));
        sw_buf_puts(out, "</span></td><td>");
        esc(out, r->summary);
        sw_buf_puts(out, "</td></tr>");
    }
    sw_buf_puts(out, "</tbody></table>\n");
    if (ep->dups)
        sw_buf_printf(out, "<p class=\"muted\">%" PRIu64 " repeated record%s of this episode "
                           "(same action and revision, as at-least-once delivery gives) ignored.</p>\n",
                      ep->dups, ep->dups == 1 ? "" : "s");
    free(recs);
}

static void put_choice(sw_buf_t *out, const ep_t *ep, const rec_t *chart)
{
    const rec_t *resolve = first_of(ep, ACT_RESOLVE);
    sw_buf_puts(out, "<p class=\"choice\">");
    if (!chart) {
        sw_buf_puts(out, "This episode has no trigger or update record in the input (only its "
                         "resolve), so there is no onset or suspect list to chart.");
    } else {
        sw_buf_printf(out, "Charted from the <strong>%s</strong> record, revision %" PRId64,
                      act_names[chart->act], chart->revision);
        if (chart->has_event) {
            sw_buf_puts(out, " (event at ");
            put_utc(out, chart->event_ns);
            sw_buf_puts(out, ")");
        }
        sw_buf_puts(out, ": the latest trigger/update of this episode, which carries its final "
                         "cluster onset and suspects. ");
        if (resolve) {
            sw_buf_printf(out, "The episode resolved (revision %" PRId64, resolve->revision);
            if (resolve->has_event) {
                sw_buf_puts(out, ", event at ");
                put_utc(out, resolve->event_ns);
            }
            sw_buf_puts(out, ") keeping this verdict");
            if (resolve->resolve_reason.len && !strcmp(resolve->resolve_reason.ptr, "suspect_lost")) {
                sw_buf_puts(out, ": the spike of ");
                if (resolve->resolve_lost_rank >= 0)
                    sw_buf_printf(out, "rank %" PRId64, resolve->resolve_lost_rank);
                else
                    sw_buf_puts(out, "a suspect");
                sw_buf_puts(out, " left its window (aged out or went stale).");
            } else if (resolve->resolve_reason.len &&
                       !strcmp(resolve->resolve_reason.ptr, "onset_gone")) {
                sw_buf_puts(out, ": fewer than two ranks still showed a spike.");
            } else {
                sw_buf_puts(out, ".");
            }
        }
        else
            sw_buf_puts(out, "No resolve record: the episode was still open at the end of the input.");
    }
    sw_buf_puts(out, "</p>\n");
}

static void put_facts(sw_buf_t *out, const rec_t *r, const ep_t *ep)
{
    sw_buf_puts(out, "<dl class=\"facts\">");
    sw_buf_printf(out, "<dt>severity</dt><dd><span class=\"badge %s\">", sev_class(sev_of(r)));
    esc(out, sev_of(r));
    sw_buf_puts(out, "</span></dd><dt>dedup_key</dt><dd>");
    if (r->dedup_key.len) {
        sw_buf_puts(out, "<code>");
        esc(out, r->dedup_key);
        sw_buf_puts(out, "</code>");
    } else {
        sw_buf_puts(out, "none");
    }
    sw_buf_puts(out, "</dd>");
    if (ep) {
        sw_buf_puts(out, "<dt>state</dt><dd>");
        sw_buf_puts(out, first_of(ep, ACT_RESOLVE) ? "resolved" : "open at the end of the input");
        sw_buf_puts(out, "</dd>");
    }
    sw_buf_puts(out, "<dt>cluster onset</dt><dd>");
    if (r->has_onset) {
        put_utc(out, r->onset_ns);
        sw_buf_printf(out, " <span class=\"muted\">(%" PRId64 " ns, aligned)</span>", r->onset_ns);
    } else {
        sw_buf_puts(out, "none");
    }
    sw_buf_puts(out, "</dd>");
    if (r->world_size >= 0) sw_buf_printf(out, "<dt>world size</dt><dd>%" PRId64 "</dd>", r->world_size);
    if (r->n_participating >= 0)
        sw_buf_printf(out, "<dt>participating ranks</dt><dd>%" PRId64 "</dd>", r->n_participating);
    sw_buf_puts(out, "<dt>missing ranks</dt><dd>");
    put_ranks(out, r->missing, r->n_missing, 32);
    sw_buf_puts(out, "</dd>");
    if (r->n_counts)
        sw_buf_printf(out,
                      "<dt>samples per rank</dt><dd>%" PRId64 " to %" PRId64 " over %zu rank%s "
                      "(%" PRId64 " in all)</dd>",
                      r->counts_min, r->counts_max, r->n_counts, r->n_counts == 1 ? "" : "s",
                      r->counts_sum);
    if (r->has_offset) {
        sw_buf_puts(out, "<dt>largest clock offset</dt><dd>");
        sw_report_duration(out, r->offset_max_abs_ns);
        sw_buf_puts(out, " (rank ");
        esc(out, r->offset_max_rank);
        sw_buf_puts(out, ")</dd>");
    }
    put_source(out, r);
    sw_buf_puts(out, "</dl>\n");
}

static void put_episode(sw_buf_t *out, const job_t *job, size_t j, const ep_t *ep,
                        unsigned *chart_no)
{
    const rec_t *chart = ep_chart(ep);
    const rec_t *head = chart ? chart : ep->recs[0];
    sw_buf_printf(out, "<section class=\"episode sev-%s\" id=\"job-%zu-ep-%" PRId64 "\">\n",
                  sev_class(sev_of(head)), j + 1, ep->episode);
    sw_buf_printf(out, "<h3>Episode %" PRId64 " <span class=\"badge %s\">", ep->episode,
                  sev_class(sev_of(head)));
    esc(out, sev_of(head));
    sw_buf_puts(out, "</span></h3>\n<p class=\"summary-line\">");
    if (head->summary.len) esc(out, head->summary);
    else sw_buf_puts(out, "(no summary line in the record)");
    sw_buf_puts(out, "</p>\n");
    put_choice(out, ep, chart);
    if (chart) {
        put_chart(out, job, ep, chart, ++*chart_no);
        put_facts(out, chart, ep);
        sw_buf_puts(out, "<h4>Suspects</h4>\n");
        put_suspects(out, chart);
        sw_buf_puts(out, "<h4>Notes</h4>\n");
        put_notes(out, chart);
    } else {
        put_facts(out, head, ep);
    }
    sw_buf_puts(out, "<h4>Lifecycle</h4>\n");
    put_lifecycle(out, ep, chart);
    sw_buf_puts(out, "</section>\n");
}

static void put_summary(sw_buf_t *out, const rec_t *r, size_t j, size_t k)
{
    sw_buf_printf(out, "<section class=\"summary sev-%s\" id=\"job-%zu-summary-%zu\">\n",
                  sev_class(sev_of(r)), j + 1, k + 1);
    sw_buf_printf(out, "<h3>Job summary <span class=\"muted\">(after episode %" PRId64 ")</span></h3>\n",
                  r->episode);
    sw_buf_puts(out, "<p class=\"summary-line\">");
    if (r->summary.len) esc(out, r->summary);
    else sw_buf_puts(out, "(no summary line in the record)");
    sw_buf_puts(out, "</p>\n<p class=\"muted\">The analysis over everything the job sent, at the "
                     "end of its input or after it went idle; its suspects are tabled, the "
                     "episodes above are charted.</p>\n");
    put_facts(out, r, NULL);
    sw_buf_puts(out, "<h4>Suspects</h4>\n");
    put_suspects(out, r);
    sw_buf_puts(out, "<h4>Notes</h4>\n");
    put_notes(out, r);
    sw_buf_puts(out, "</section>\n");
}

static int cmp_ep(const void *pa, const void *pb)
{
    const ep_t *a = *(ep_t *const *)pa, *b = *(ep_t *const *)pb;
    return a->episode < b->episode ? -1 : a->episode > b->episode;
}

static void put_overview(sw_buf_t *out, const sw_report_t *rep, ep_t ***sorted)
{
    sw_buf_puts(out, "<nav><h2>Episodes</h2>\n");
    size_t total = sw_report_episodes(rep);
    if (total == 0) {
        sw_buf_puts(out, "<p>No trigger, update or resolve record in the input: no storm episode "
                         "to report.</p></nav>\n");
        return;
    }
    sw_buf_puts(out, "<table><thead><tr><th>job</th><th>episode</th><th>severity</th>"
                     "<th>first suspect</th><th>lead</th><th>confidence</th><th>state</th>"
                     "</tr></thead><tbody>");
    for (size_t j = 0; j < rep->n_jobs; j++) {
        const job_t *job = rep->jobs[j];
        for (size_t e = 0; e < job->n_eps; e++) {
            const ep_t *ep = sorted[j][e];
            const rec_t *chart = ep_chart(ep);
            const rec_t *head = chart ? chart : ep->recs[0];
            sw_buf_puts(out, "<tr><td>");
            put_job_name(out, job);
            sw_buf_printf(out, "</td><td><a href=\"#job-%zu-ep-%" PRId64 "\">%" PRId64 "</a></td>",
                          j + 1, ep->episode, ep->episode);
            sw_buf_printf(out, "<td><span class=\"badge %s\">", sev_class(sev_of(head)));
            esc(out, sev_of(head));
            sw_buf_puts(out, "</span></td>");
            if (chart && chart->n_sus) {
                const susp_t *s = &chart->sus[0];
                sw_buf_printf(out, "<td class=\"num\">rank %" PRId64 "</td><td class=\"num\">", s->rank);
                if (s->has_lead) sw_report_duration(out, s->lead_ns);
                else sw_buf_puts(out, "?");
                sw_buf_puts(out, "</td><td>");
                if (s->confidence.len) esc(out, s->confidence);
                else sw_buf_puts(out, "unknown");
                sw_buf_puts(out, "</td>");
            } else {
                sw_buf_puts(out, "<td>\xE2\x80\x94</td><td>\xE2\x80\x94</td><td>\xE2\x80\x94</td>");
            }
            sw_buf_printf(out, "<td>%s</td></tr>",
                          first_of(ep, ACT_RESOLVE) ? "resolved" : "open at end of input");
        }
    }
    sw_buf_puts(out, "</tbody></table></nav>\n");
}

void sw_report_render(const sw_report_t *rep, const sw_report_opts_t *opts, sw_buf_t *out)
{
    sw_report_opts_t none = {NULL, NULL, 0, 0};
    if (!opts) opts = &none;
    const char *title = opts->title ? opts->title : "stormwatch incident report";
    /* episodes in episode order per job, without reordering the model */
    ep_t ***sorted = sw_calloc(rep->n_jobs ? rep->n_jobs : 1, sizeof(*sorted));
    size_t n_eps = 0, n_sums = 0, n_open = 0;
    for (size_t j = 0; j < rep->n_jobs; j++) {
        job_t *job = rep->jobs[j];
        sorted[j] = sw_malloc((job->n_eps ? job->n_eps : 1) * sizeof(**sorted));
        for (size_t e = 0; e < job->n_eps; e++) {
            sorted[j][e] = &job->eps[e];
            if (!first_of(&job->eps[e], ACT_RESOLVE)) n_open++;
        }
        qsort(sorted[j], job->n_eps, sizeof(**sorted), cmp_ep);
        n_eps += job->n_eps;
        n_sums += job->n_sums;
    }
    sw_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<title>");
    escc(out, title);
    sw_buf_puts(out, "</title>\n<style>");
    sw_buf_puts(out, css);
    sw_buf_puts(out, "</style>\n</head>\n<body>\n<main>\n<header><h1>");
    escc(out, title);
    sw_buf_puts(out, "</h1>\n<p>");
    sw_buf_printf(out, "%" PRIu64 " alert record%s", rep->records, rep->records == 1 ? "" : "s");
    if (opts->n_sources) {
        sw_buf_puts(out, " from ");
        for (size_t i = 0; i < opts->n_sources; i++) {
            if (i) sw_buf_puts(out, i + 1 == opts->n_sources ? " and " : ", ");
            sw_buf_puts(out, "<code>");
            escc(out, opts->sources[i]);
            sw_buf_puts(out, "</code>");
        }
    }
    sw_buf_printf(out, ": %zu job%s, %zu episode%s (%zu open at the end of the input), %zu job "
                       "summar%s.",
                  rep->n_jobs, rep->n_jobs == 1 ? "" : "s", n_eps, n_eps == 1 ? "" : "s", n_open,
                  n_sums, n_sums == 1 ? "y" : "ies");
    if (rep->dups)
        sw_buf_printf(out, " %" PRIu64 " repeated record%s ignored.", rep->dups,
                      rep->dups == 1 ? "" : "s");
    if (opts->skipped_lines)
        sw_buf_printf(out, " <strong>%" PRIu64 " invalid line%s skipped</strong> (see the "
                           "command's error output).",
                      opts->skipped_lines, opts->skipped_lines == 1 ? "" : "s");
    sw_buf_puts(out, "</p>\n<p class=\"muted\">Each episode (one job, one episode number) is "
                     "charted from its latest trigger or update record: that record carries the "
                     "episode's verdict (cluster onset and suspects), which its resolve record "
                     "repeats when it says why the episode ended. Times "
                     "on the charts are aligned clocks relative to the cluster onset; memory is in "
                     "binary units (1 GiB = 2<sup>30</sup> bytes).</p>\n</header>\n");
    put_overview(out, rep, sorted);
    unsigned chart_no = 0;
    for (size_t j = 0; j < rep->n_jobs; j++) {
        const job_t *job = rep->jobs[j];
        sw_buf_printf(out, "<section class=\"job\" id=\"job-%zu\">\n<h2>Job ", j + 1);
        put_job_name(out, job);
        sw_buf_printf(out, " <span class=\"muted\">%zu episode%s</span></h2>\n", job->n_eps,
                      job->n_eps == 1 ? "" : "s");
        if (job->n_eps == 0)
            sw_buf_puts(out, "<p class=\"muted\">No storm episode in the input for this job.</p>\n");
        for (size_t e = 0; e < job->n_eps; e++) put_episode(out, job, j, sorted[j][e], &chart_no);
        for (size_t k = 0; k < job->n_sums; k++) put_summary(out, job->sums[k], j, k);
        sw_buf_puts(out, "</section>\n");
    }
    sw_buf_puts(out, "<footer>Generated by <code>stormwatch report</code> from alert records "
                     "(SPEC 6). Self-contained: no scripts, nothing loaded from the network.");
    if (rep->n_files) {
        sw_buf_puts(out, " Inputs: ");
        for (size_t i = 0; i < rep->n_files; i++) {
            if (i) sw_buf_puts(out, ", ");
            sw_buf_puts(out, "<code>");
            escc(out, rep->files[i]);
            sw_buf_puts(out, "</code>");
        }
        sw_buf_puts(out, ".");
    }
    sw_buf_puts(out, "</footer>\n</main>\n</body>\n</html>\n");
    for (size_t j = 0; j < rep->n_jobs; j++) free(sorted[j]);
    free(sorted);
}
