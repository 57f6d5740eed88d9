/*
 * Record -> pager request bodies (PagerDuty Events API v2, Alertmanager v2
 * postable alerts). The rule for what pages lives in sw_pager_decide(); the
 * size limits of PagerDuty are enforced here so that a body never gets
 * refused for its size. No I/O, no clock, no globals.
 */
#include "sw_codec_pager.h"

#include <stdio.h>
#include <string.h>

#include "sw_codec_alert.h"
#include "sw_jw.h"
#include "sw_codec_x8.h"

#define NULL_JOB "<null>"
/* Bounds of free-text values that come from the input (job ids, notes). */
#define GROUP_MAX 1024
#define SOURCE_MAX 512
#define DESCRIPTION_MAX 4096
#define LIST_MAX 1024
#define DESC_SUSPECTS 10
/* Bytes of the job id kept in a dedup key that had to be shortened. */
#define DEDUP_JOB_PREFIX 160

sw_pager_action_t sw_pager_decide(const sw_record_t *rec)
{
    switch (rec->action) {
    case SW_ACTION_TRIGGER:
    case SW_ACTION_UPDATE: return SW_PAGER_TRIGGER;
    case SW_ACTION_RESOLVE: return SW_PAGER_RESOLVE;
    case SW_ACTION_SUMMARY:
        return rec->episode >= 1 && rec->episode_open ? SW_PAGER_RESOLVE : SW_PAGER_SKIP;
    case SW_ACTION_CRASH: return rec->x8 && !rec->x8->open ? SW_PAGER_RESOLVE : SW_PAGER_TRIGGER;
    case SW_ACTION_WARNING: return rec->x8 && !rec->x8->open ? SW_PAGER_RESOLVE : SW_PAGER_TRIGGER;
    }
    return SW_PAGER_SKIP;
}

const char *sw_pager_format_str(sw_pager_format_t format)
{
    return format == SW_PAGER_ALERTMANAGER ? "alertmanager" : "pagerduty";
}

bool sw_pager_format_parse(const char *s, sw_pager_format_t *format)
{
    if (!s) return false;
    if (strcmp(s, "pagerduty") == 0) *format = SW_PAGER_PAGERDUTY;
    else if (strcmp(s, "alertmanager") == 0) *format = SW_PAGER_ALERTMANAGER;
    else return false;
    return true;
}

size_t sw_pager_utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max) return len;
    /* s[max] is the first byte left out: step back over at most three
     * continuation bytes to the lead byte of the sequence it belongs to. */
    size_t n = max;
    for (int k = 0; k < 3 && n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80; k++) n--;
    if (((unsigned char)s[n] & 0xc0) == 0x80) return max; /* not UTF-8 here */
    return n;
}

/* @p s cut to @p max bytes; a cut string ends in U+2026 (within max). */
static void put_cut(sw_jw_t *jw, sw_str_t s, size_t max)
{
    static const char ellipsis[] = "\xe2\x80\xa6";
    if (s.len <= max) {
        sw_jw_str(jw, s);
        return;
    }
    sw_buf_t tmp;
    sw_buf_init(&tmp);
    sw_buf_put(&tmp, s.ptr, sw_pager_utf8_cut(s.ptr, s.len, max - (sizeof(ellipsis) - 1)));
    sw_buf_puts(&tmp, ellipsis);
    sw_jw_str(jw, (sw_str_t){tmp.data, tmp.len});
    sw_buf_clear(&tmp);
}

void sw_pager_dedup_key(const sw_record_t *rec, sw_buf_t *out)
{
    size_t start = out->len;
    sw_record_dedup_key(rec, out);
    if (out->len - start <= SW_PAGER_DEDUP_KEY_MAX) return;
    /* Only a very long job id gets here: keep its start for people and a
     * hash of all of it for uniqueness. */
    out->len = start;
    const sw_str_t *job = &rec->analysis.job_id;
    sw_buf_puts(out, "stormwatch/");
    sw_buf_put(out, job->ptr, sw_pager_utf8_cut(job->ptr, job->len, DEDUP_JOB_PREFIX));
    sw_buf_printf(out, "~%016llx/%s/", (unsigned long long)sw_hash_bytes(job->ptr, job->len, 0),
                  sw_action_is_x8(rec->action) ? sw_x8_kind_str(rec) : "episode");
    sw_buf_put_i64(out, sw_action_is_x8(rec->action) && rec->x8 ? rec->x8->number : rec->episode);
}

/* Time of the record: its sample's, or now for a summary. */
static int64_t record_ns(const sw_record_t *rec, const sw_pager_opts_t *opts)
{
    return rec->has_event_ts ? rec->event_timestamp_ns : opts->now_ns;
}

static sw_str_t job_str(const sw_record_t *rec)
{
    return rec->analysis.has_job_id ? rec->analysis.job_id : sw_str(NULL_JOB);
}

static void put_key_str(sw_jw_t *jw, const char *key, sw_str_t s)
{
    sw_jw_key(jw, key);
    sw_jw_str(jw, s);
}

static void put_key_cstr(sw_jw_t *jw, const char *key, const char *s)
{
    sw_jw_key(jw, key);
    sw_jw_cstr(jw, s);
}

static void put_key_rfc3339(sw_jw_t *jw, const char *key, int64_t ns)
{
    sw_buf_t tmp;
    sw_buf_init(&tmp);
    sw_buf_put_rfc3339(&tmp, ns);
    put_key_str(jw, key, (sw_str_t){tmp.data, tmp.len});
    sw_buf_clear(&tmp);
}

/* A summary that closes an open episode resolves it with the episode's
 * verdict (the rank on-call was paged for), as a resolve record does: the
 * human text names the verdict's suspects; the details keep the record. */
static const sw_record_t *as_closing(const sw_record_t *rec, sw_record_t *tmp)
{
    if (rec->action != SW_ACTION_SUMMARY || !rec->has_verdict) return rec;
    *tmp = *rec;
    tmp->analysis.has_onset = true;
    tmp->analysis.onset_ns = rec->verdict_onset_ns;
    tmp->analysis.suspects = rec->verdict;
    tmp->analysis.n_suspects = rec->n_verdict;
    return tmp;
}

/* A summary that closes no open episode: what was seen in the job (no
 * storm, or how many episodes, all ended; the crash if there was one). */
static void summary_title(const sw_record_t *rec, sw_buf_t *out)
{
    const sw_analysis_t *a = &rec->analysis;
    sw_str_t job = job_str(rec);
    sw_buf_puts(out, "Job ");
    sw_buf_put(out, job.ptr, job.len);
    sw_buf_printf(out, " summarised (input ended or job idle, %zu rank%s): ", a->n_participating,
                  a->n_participating == 1 ? "" : "s");
    if (rec->episode <= 0) sw_buf_puts(out, "no memory storm");
    else
        sw_buf_printf(out, "%lld memory storm episode%s, all ended", (long long)rec->episode,
                      rec->episode == 1 ? "" : "s");
    const sw_x8_t *c = rec->job_crash;
    if (!c) {
        sw_buf_puts(out, "; no crash");
        return;
    }
    sw_buf_printf(out, "; crash %lld%s: rank %lld died first (%s) at ", (long long)c->number,
                  c->open ? " (closed by this summary)" : " (over)", (long long)c->first.rank,
                  c->first.cause == SW_DEATH_OOM ? "out of memory" : "went silent");
    sw_x8_time(out, c->first.timestamp_ns);
    sw_buf_printf(out, ", %lld rank%s dead at the end", (long long)c->deaths,
                  c->deaths == 1 ? "" : "s");
}

void sw_pager_title(const sw_record_t *rec, sw_buf_t *out)
{
    sw_record_t closing;
    rec = as_closing(rec, &closing);
    const sw_analysis_t *a = &rec->analysis;
    const sw_suspect_t *s = a->n_suspects ? &a->suspects[0] : NULL;
    bool ended = rec->action == SW_ACTION_RESOLVE || rec->action == SW_ACTION_SUMMARY;
    if (rec->action != SW_ACTION_TRIGGER && rec->action != SW_ACTION_UPDATE && !ended) {
        sw_record_summary(rec, out); /* not a storm record */
        return;
    }
    if (rec->action == SW_ACTION_SUMMARY && !rec->episode_open) {
        summary_title(rec, out); /* it closes no episode: what the job showed */
        return;
    }
    sw_buf_puts(out, "Memory storm in job ");
    sw_str_t job = job_str(rec);
    sw_buf_put(out, job.ptr, job.len);
    if (ended) {
        sw_buf_puts(out, rec->action == SW_ACTION_SUMMARY ? " ended (job idle or input ended)"
                                                          : " ended");
        if (s) {
            sw_buf_puts(out, ": ");
            sw_suspect_where(s, out);
            sw_buf_puts(out, " had moved first");
        }
        sw_buf_puts(out, " (");
        if (rec->action == SW_ACTION_RESOLVE && rec->resolve_reason == SW_RESOLVE_SUSPECT_LOST)
            sw_buf_printf(out, "the spike of rank %lld left its window; ",
                          (long long)rec->resolve_rank);
        else if (rec->action == SW_ACTION_RESOLVE && rec->resolve_reason == SW_RESOLVE_NEXT_STORM)
            sw_buf_puts(out, "the next storm started; ");
        else if (rec->action == SW_ACTION_RESOLVE && s)
            sw_buf_puts(out, "fewer than two ranks still show a spike; ");
    } else if (s && a->has_onset) {
        sw_buf_puts(out, ": ");
        sw_suspect_where(s, out);
        sw_buf_puts(out, " moved first (lead ");
        sw_duration_text(out, s->lead_over_cluster_onset_ns);
        sw_buf_printf(out, ", %s confidence, ", sw_confidence_str(s->confidence));
        sw_phase_text(out, &s->phase);
        sw_buf_printf(out, ", +%.2f GiB, %zu rank%s at onset; ",
                      (double)s->peak_delta_bytes / 1073741824.0, a->n_suspects,
                      a->n_suspects == 1 ? "" : "s");
    } else {
        sw_buf_printf(out, ": no first cause in the current windows (%zu rank%s; ",
                      a->n_participating, a->n_participating == 1 ? "" : "s");
    }
    sw_buf_printf(out, "episode %lld, %s)", (long long)rec->episode, sw_action_str(rec->action));
}

void sw_pager_source(const sw_record_t *rec, sw_buf_t *out)
{
    sw_record_t closing;
    rec = as_closing(rec, &closing);
    const sw_analysis_t *a = &rec->analysis;
    if (a->n_suspects && a->suspects[0].has_source && a->suspects[0].host.len) {
        sw_buf_put(out, a->suspects[0].host.ptr, a->suspects[0].host.len);
        return;
    }
    sw_str_t job = job_str(rec);
    sw_buf_puts(out, "job ");
    sw_buf_put(out, job.ptr, job.len);
}

/* The title (sw_pager_title), cut to what the pagers show. */
static void put_summary(sw_jw_t *jw, const sw_record_t *rec)
{
    sw_buf_t tmp;
    sw_buf_init(&tmp);
    sw_pager_title(rec, &tmp);
    sw_jw_key(jw, "summary");
    put_cut(jw, (sw_str_t){tmp.data, tmp.len}, SW_PAGER_SUMMARY_MAX);
    sw_buf_clear(&tmp);
}

static void put_dedup_key(sw_jw_t *jw, const sw_record_t *rec)
{
    sw_buf_t tmp;
    sw_buf_init(&tmp);
    sw_pager_dedup_key(rec, &tmp);
    put_key_str(jw, "dedup_key", (sw_str_t){tmp.data, tmp.len});
    sw_buf_clear(&tmp);
}

/* PagerDuty accepts critical, error, warning and info. */
static const char *pd_severity(const sw_record_t *rec)
{
    static const char *const ok[] = {"critical", "error", "warning", "info"};
    const char *sev = sw_record_severity(rec);
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (strcmp(sev, ok[i]) == 0) return ok[i];
    return "warning";
}

/* ---- PagerDuty ----------------------------------------------------------- */

/* How much of the record custom_details carries. */
typedef enum pd_detail_e {
    PD_FULL = 0, /* the SPEC record as the JSON format writes it */
    PD_NO_RANKS, /* rank maps and rank lists emptied */
    PD_LIFECYCLE /* lifecycle fields only (always fits) */
} pd_detail_t;

/* Append JSON record text @p obj (an object) with a "truncated" member. */
static void splice_truncated(sw_buf_t *obj, const char *why)
{
    if (obj->len && obj->data[obj->len - 1] == '}') obj->len--;
    sw_buf_puts(obj, ", \"truncated\": ");
    sw_json_put_str(obj, sw_str(why));
    sw_buf_putc(obj, '}');
}

static void pd_details(sw_jw_t *jw, const sw_record_t *rec, pd_detail_t level)
{
    sw_jw_key(jw, "custom_details");
    sw_buf_t tmp;
    sw_buf_init(&tmp);
    if (level == PD_FULL) {
        sw_alert_json_record(&tmp, rec);
    } else if (level == PD_NO_RANKS) {
        sw_record_t small = *rec;
        sw_analysis_t *a = &small.analysis;
        char why[320];
        snprintf(why, sizeof(why),
                 "rank_sample_counts, alignment_offsets_ns, participating_ranks and "
                 "missing_ranks emptied (%zu participating, %zu missing ranks): the full record "
                 "would exceed PagerDuty's 512 KB event limit",
                 a->n_participating, a->n_missing);
        a->n_counts = a->n_offsets = a->n_participating = a->n_missing = 0;
        sw_alert_json_record(&tmp, &small);
        splice_truncated(&tmp, why);
    }
    if (level != PD_LIFECYCLE) {
        sw_jw_raw(jw, (sw_str_t){tmp.data, tmp.len});
        sw_buf_clear(&tmp);
        return;
    }
    const sw_analysis_t *a = &rec->analysis;
    sw_jw_obj(jw);
    put_key_cstr(jw, "action", sw_action_str(rec->action));
    sw_jw_key(jw, "job_id");
    if (a->has_job_id) put_cut(jw, a->job_id, GROUP_MAX);
    else sw_jw_null(jw);
    sw_jw_key(jw, "episode");
    sw_jw_i64(jw, rec->episode);
    sw_jw_key(jw, "revision");
    sw_jw_i64(jw, rec->revision);
    sw_jw_key(jw, "event_timestamp_ns");
    if (rec->has_event_ts) sw_jw_i64(jw, rec->event_timestamp_ns);
    else sw_jw_null(jw);
    sw_jw_key(jw, "world_size");
    sw_jw_i64(jw, a->world_size);
    sw_jw_key(jw, "cluster_onset_timestamp_ns");
    if (a->has_onset) sw_jw_u64(jw, a->onset_ns);
    else sw_jw_null(jw);
    if (a->n_suspects) {
        sw_jw_key(jw, "first_cause_rank");
        sw_jw_i64(jw, a->suspects[0].rank);
        put_key_cstr(jw, "confidence", sw_confidence_str(a->suspects[0].confidence));
        sw_jw_key(jw, "suspects");
        sw_jw_i64(jw, (int64_t)a->n_suspects);
    }
    put_key_cstr(jw, "severity", sw_record_severity(rec));
    put_dedup_key(jw, rec);
    put_key_cstr(jw, "truncated",
                 "only the lifecycle fields are kept: the full record would exceed PagerDuty's "
                 "512 KB event limit even without its rank maps");
    sw_jw_end_obj(jw);
}

/* PagerDuty's "unique location of the affected system": the first cause's
 * host (sw_pager_source). */
static void pd_source(sw_jw_t *jw, const sw_record_t *rec)
{
    sw_jw_key(jw, "source");
    sw_buf_t tmp;
    sw_buf_init(&tmp);
    sw_pager_source(rec, &tmp);
    put_cut(jw, (sw_str_t){tmp.data, tmp.len}, SOURCE_MAX);
    sw_buf_clear(&tmp);
}

static void pd_event(sw_buf_t *out, const sw_record_t *rec, const sw_pager_opts_t *opts,
                     sw_pager_action_t act, pd_detail_t level)
{
    sw_jw_t jw;
    sw_jw_init(&jw, out, 0);
    sw_jw_obj(&jw);
    put_key_cstr(&jw, "routing_key", opts->routing_key ? opts->routing_key : "");
    put_key_cstr(&jw, "event_action", act == SW_PAGER_RESOLVE ? "resolve" : "trigger");
    put_dedup_key(&jw, rec);
    sw_jw_key(&jw, "payload");
    sw_jw_obj(&jw);
    put_summary(&jw, rec);
    put_key_cstr(&jw, "severity", pd_severity(rec));
    pd_source(&jw, rec);
    put_key_rfc3339(&jw, "timestamp", record_ns(rec, opts));
    put_key_cstr(&jw, "component", "stormwatch");
    sw_jw_key(&jw, "group");
    put_cut(&jw, job_str(rec), GROUP_MAX);
    put_key_cstr(&jw, "class",
                 rec->action == SW_ACTION_CRASH     ? "gpu-crash"
                 : rec->action == SW_ACTION_WARNING ? "gpu-memory-full-warning"
                                                    : "gpu-memory-storm");
    pd_details(&jw, rec, level);
    sw_jw_end_obj(&jw);
    sw_jw_end_obj(&jw);
}

/* ---- Alertmanager -------------------------------------------------------- */

static void put_key_i64_str(sw_jw_t *jw, const char *key, int64_t v)
{
    char tmp[24];
    snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
    put_key_cstr(jw, key, tmp);
}

/* SPEC 8: the dead or filling ranks and the blind ones, bounded. */
static void am_x8_description(sw_buf_t *d, const sw_record_t *rec)
{
    const sw_x8_t *x = rec->x8;
    if (!x) return;
    if (rec->action == SW_ACTION_CRASH) {
        const sw_death_t *f = &x->first;
        if (!x->open)
            sw_buf_printf(d, "Crash %lld is over (%s). Final answer:\n", (long long)x->number,
                          x->end == SW_X8_END_ALIVE ? "every dead rank is alive again"
                          : x->end == SW_X8_END_JOB ? "the job was summarised: input ended or "
                                                      "job idle"
                                                    : "closed");
        sw_buf_printf(d, "First death: rank %lld on ", (long long)f->rank);
        sw_buf_put(d, f->host.ptr, f->host.len < SOURCE_MAX ? f->host.len : SOURCE_MAX);
        if (f->has_device_id) sw_buf_printf(d, " GPU %lld", (long long)f->device_id);
        sw_buf_printf(d, " (%s) at ", f->cause == SW_DEATH_OOM ? "out of memory" : "went silent");
        sw_x8_time(d, f->timestamp_ns);
        if (f->aligned_timestamp_ns / 1000000 != f->timestamp_ns / 1000000) {
            sw_buf_puts(d, " (");
            sw_x8_time(d, f->aligned_timestamp_ns);
            sw_buf_puts(d, " on the job's aligned clock)");
        }
        sw_buf_puts(d, ".");
        if (x->has_previous) {
            sw_buf_printf(d, "\nFirst death revised: rank %lld died ", (long long)f->rank);
            sw_x8_gap(d, x->previous_aligned_ns - f->aligned_timestamp_ns);
            sw_buf_printf(d, " before rank %lld, which was named first.",
                          (long long)x->previous_rank);
        }
        sw_buf_printf(d, "\n%lld rank%s dead now", (long long)x->deaths, x->deaths == 1 ? "" : "s");
        if (x->deaths_total > 0)
            sw_buf_printf(d, " (%lld death%s in this crash)", (long long)x->deaths_total,
                          x->deaths_total == 1 ? "" : "s");
        sw_buf_puts(d, x->n_dead ? ":" : ".");
        for (size_t i = 0; i < x->n_dead && d->len < DESCRIPTION_MAX; i++)
            sw_buf_printf(d, " %lld", (long long)x->dead_ranks[i]);
        if (x->n_dead) sw_buf_puts(d, ".");
        if (x->closed_warning > 0)
            sw_buf_printf(d, "\nIt closes warning %lld (resolved by its own record).",
                          (long long)x->closed_warning);
    } else if (!x->open) {
        if (x->end == SW_X8_END_CRASH && x->closed_by_crash > 0)
            sw_buf_printf(d, "Closed: crash %lld opened (a rank died); the crash alert carries on.",
                          (long long)x->closed_by_crash);
        else if (x->end == SW_X8_END_JOB)
            sw_buf_puts(d, "Closed: the job was summarised (input ended or job idle).");
        else sw_buf_puts(d, "Closed: no rank is close to filling its GPU any more.");
    } else {
        for (size_t i = 0; i < x->n_wranks && d->len < DESCRIPTION_MAX; i++)
            sw_buf_printf(d, "%sRank %lld: %.1f%% of %.2f GiB used, full in %.0f s.", i ? "\n" : "",
                          (long long)x->wranks[i].rank,
                          x->wranks[i].total_bytes > 0 ? 100.0 * (double)x->wranks[i].used_bytes /
                                                             (double)x->wranks[i].total_bytes
                                                       : 0,
                          (double)x->wranks[i].total_bytes / 1073741824.0,
                          (double)x->wranks[i].eta_ms / 1000.0);
    }
    if (rec->n_blind) {
        sw_buf_puts(d, "\nBlind ranks (collector degraded or silent):");
        for (size_t i = 0; i < rec->n_blind && d->len < DESCRIPTION_MAX; i++)
            sw_buf_printf(d, " %lld", (long long)rec->blind_ranks[i]);
    }
}

/* Suspects, world and notes as a few lines of text, bounded. */
static void am_description(sw_jw_t *jw, const sw_record_t *rec)
{
    sw_record_t closing;
    const sw_analysis_t *a = &as_closing(rec, &closing)->analysis;
    sw_buf_t d;
    sw_buf_init(&d);
    if (sw_action_is_x8(rec->action)) {
        am_x8_description(&d, rec);
        sw_jw_key(jw, "description");
        put_cut(jw, (sw_str_t){d.data, d.len}, DESCRIPTION_MAX);
        sw_buf_clear(&d);
        return;
    }
    if (a->n_suspects) {
        sw_buf_puts(&d, "Suspects at the cluster onset:");
        for (size_t i = 0; i < a->n_suspects && i < DESC_SUSPECTS; i++) {
            const sw_suspect_t *s = &a->suspects[i];
            sw_buf_printf(&d, "%s rank %lld (%s confidence, lead %.3f s, +%.2f GiB)", i ? "," : "",
                          (long long)s->rank, sw_confidence_str(s->confidence),
                          (double)s->lead_over_cluster_onset_ns / 1e9,
                          (double)s->peak_delta_bytes / 1073741824.0);
        }
        if (a->n_suspects > DESC_SUSPECTS)
            sw_buf_printf(&d, " and %zu more", a->n_suspects - DESC_SUSPECTS);
        sw_buf_puts(&d, ".\n");
    } else {
        sw_buf_puts(&d, "No first-cause suspects in the current windows.\n");
    }
    sw_buf_printf(&d, "World size %lld: %zu ranks reporting, %zu missing.",
                  (long long)a->world_size, a->n_participating, a->n_missing);
    for (size_t i = 0; i < a->n_notes && d.len < DESCRIPTION_MAX; i++) {
        sw_buf_putc(&d, '\n');
        sw_buf_put(&d, a->notes[i].ptr, a->notes[i].len);
    }
    sw_jw_key(jw, "description");
    put_cut(jw, (sw_str_t){d.data, d.len}, DESCRIPTION_MAX);
    sw_buf_clear(&d);
}

static void am_alert(sw_buf_t *out, const sw_record_t *rec, const sw_pager_opts_t *opts,
                     sw_pager_action_t act)
{
    const sw_analysis_t *a = &rec->analysis;
    int64_t t = record_ns(rec, opts);
    sw_jw_t jw;
    sw_jw_init(&jw, out, 0);
    sw_jw_arr(&jw);
    sw_jw_obj(&jw);
    /* Labels identify the alert: only values fixed for the whole episode,
     * so that trigger, updates and resolve all land on the same alert. */
    sw_jw_key(&jw, "labels");
    sw_jw_obj(&jw);
    bool x8 = sw_action_is_x8(rec->action);
    put_key_cstr(&jw, "alertname",
                 rec->action == SW_ACTION_CRASH     ? "GPURankCrash"
                 : rec->action == SW_ACTION_WARNING ? "GPUMemoryNearlyFull"
                                                    : "GPUMemoryStorm");
    put_key_str(&jw, "job_id", job_str(rec));
    if (x8) put_key_i64_str(&jw, sw_x8_kind_str(rec), rec->x8 ? rec->x8->number : rec->episode);
    else put_key_i64_str(&jw, "episode", rec->episode);
    put_dedup_key(&jw, rec);
    /* The trigger's severity, for routing: the same on every record of the
     * episode, resolve included (SPEC 8: critical for a crash, warning for
     * a warning, its close included). */
    put_key_cstr(&jw, "severity",
                 !x8                              ? sw_record_episode_severity(rec)
                 : rec->action == SW_ACTION_CRASH ? "critical"
                                                  : "warning");
    for (const char *p = opts->labels; p && *p;) {
        const char *eq = strchr(p, '='), *comma = strchr(p, ',');
        if (!comma) comma = p + strlen(p);
        if (eq && eq < comma) {
            char name[256];
            size_t nn = (size_t)(eq - p) < sizeof(name) - 1 ? (size_t)(eq - p) : sizeof(name) - 1;
            memcpy(name, p, nn);
            name[nn] = '\0';
            sw_jw_key(&jw, name);
            sw_jw_str(&jw, (sw_str_t){eq + 1, (size_t)(comma - eq - 1)});
        }
        p = *comma ? comma + 1 : comma;
    }
    sw_jw_end_obj(&jw);
    /* Annotations carry what may change within the episode. */
    sw_jw_key(&jw, "annotations");
    sw_jw_obj(&jw);
    put_summary(&jw, rec);
    am_description(&jw, rec);
    put_key_cstr(&jw, "current_severity", sw_record_severity(rec));
    put_key_cstr(&jw, "action", sw_action_str(rec->action));
    put_key_i64_str(&jw, "revision", rec->revision);
    if (a->n_suspects) {
        put_key_i64_str(&jw, "first_cause_rank", a->suspects[0].rank);
        if (a->suspects[0].has_source) {
            sw_buf_t where;
            sw_buf_init(&where);
            sw_suspect_where(&a->suspects[0], &where);
            sw_jw_key(&jw, "first_cause_where");
            put_cut(&jw, (sw_str_t){where.data, where.len}, SOURCE_MAX);
            sw_buf_clear(&where);
            put_key_str(&jw, "first_cause_host", a->suspects[0].host);
            if (a->suspects[0].has_device_id)
                put_key_i64_str(&jw, "first_cause_device_id", a->suspects[0].device_id);
        }
        if (rec->action == SW_ACTION_RESOLVE && rec->resolve_reason != SW_RESOLVE_NONE)
            put_key_cstr(&jw, "resolve_reason", sw_resolve_reason_str(rec->resolve_reason));
        put_key_cstr(&jw, "confidence", sw_confidence_str(a->suspects[0].confidence));
        put_key_i64_str(&jw, "lead_over_cluster_onset_ns",
                        a->suspects[0].lead_over_cluster_onset_ns);
        sw_buf_t ranks;
        sw_buf_init(&ranks);
        for (size_t i = 0; i < a->n_suspects && ranks.len <= LIST_MAX; i++)
            sw_buf_printf(&ranks, "%s%lld", i ? ", " : "", (long long)a->suspects[i].rank);
        sw_jw_key(&jw, "suspect_ranks");
        put_cut(&jw, (sw_str_t){ranks.data, ranks.len}, LIST_MAX);
        sw_buf_clear(&ranks);
    }
    if (a->has_onset) {
        char tmp[24];
        snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)a->onset_ns);
        put_key_cstr(&jw, "cluster_onset_timestamp_ns", tmp);
    }
    if (rec->has_event_ts) put_key_i64_str(&jw, "event_timestamp_ns", rec->event_timestamp_ns);
    if (x8 && rec->x8 && rec->action == SW_ACTION_CRASH) {
        put_key_i64_str(&jw, "first_death_rank", rec->x8->first.rank);
        put_key_cstr(&jw, "first_death_cause",
                     rec->x8->first.cause == SW_DEATH_OOM ? "oom" : "silent");
        sw_jw_key(&jw, "first_death_host");
        put_cut(&jw, rec->x8->first.host, SOURCE_MAX);
        sw_buf_t when;
        sw_buf_init(&when);
        sw_x8_time(&when, rec->x8->first.timestamp_ns);
        put_key_str(&jw, "first_death_time", (sw_str_t){when.data, when.len});
        sw_buf_clear(&when);
        put_key_i64_str(&jw, "dead_ranks_now", rec->x8->deaths);
        if (rec->x8->has_previous)
            put_key_i64_str(&jw, "previous_first_death_rank", rec->x8->previous_rank);
    }
    if (x8 && rec->x8 && !rec->x8->open && rec->x8->end != SW_X8_END_NONE)
        put_key_cstr(&jw, "closed_by", sw_x8_end_str(rec->x8->end, rec->action == SW_ACTION_CRASH));
    if (!x8) put_key_i64_str(&jw, "world_size", a->world_size);
    if (rec->source.set) {
        sw_buf_t src;
        sw_buf_init(&src);
        sw_buf_put(&src, rec->source.topic.ptr, rec->source.topic.len);
        sw_buf_printf(&src, "/%d@%lld", (int)rec->source.partition, (long long)rec->source.offset);
        sw_jw_key(&jw, "source");
        put_cut(&jw, (sw_str_t){src.data, src.len}, SOURCE_MAX);
        sw_buf_clear(&src);
    }
    sw_jw_end_obj(&jw);
    put_key_rfc3339(&jw, "startsAt", t);
    /* A firing alert's endsAt lies ends_after_ms ahead, so an episode
     * longer than Alertmanager's resolve_timeout stays firing; a resolve
     * ends it at its own time. */
    if (act == SW_PAGER_RESOLVE) put_key_rfc3339(&jw, "endsAt", t);
    else if (opts->ends_after_ms > 0)
        put_key_rfc3339(&jw, "endsAt", opts->now_ns + opts->ends_after_ms * INT64_C(1000000));
    if (opts->generator_url && *opts->generator_url)
        put_key_cstr(&jw, "generatorURL", opts->generator_url);
    sw_jw_end_obj(&jw);
    sw_jw_end_arr(&jw);
}

static int hex_val(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The code unit of the \uXXXX escape at p[0..6), or -1. */
static long u_escape(const char *p, const char *end)
{
    if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return -1;
    long v = 0;
    for (int k = 2; k < 6; k++) {
        int h = hex_val(p[k]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

/* Input strings may hold lone surrogates (kept as WTF-8 by the decoder and
 * written back as \uD8xx escapes). Strict parsers refuse those, and a pager
 * that refuses a body may stop the HTTP sink: replace each lone one by
 * \ufffd, in place (same length). In JSON text every backslash starts an
 * escape, so stepping escape by escape never misreads one. */
static void fix_lone_surrogates(sw_buf_t *out, size_t start)
{
    char *p = out->data + start, *end = out->data + out->len;
    while ((p = memchr(p, '\\', (size_t)(end - p))) != NULL) {
        long u = u_escape(p, end);
        if (u < 0xd800 || u > 0xdfff) {
            p += 2;
            continue;
        }
        long next = u <= 0xdbff ? u_escape(p + 6, end) : -1;
        if (next >= 0xdc00 && next <= 0xdfff) {
            p += 12; /* a valid pair */
            continue;
        }
        memcpy(p, "\\ufffd", 6);
        p += 6;
    }
}

sw_pager_action_t sw_pager_encode(const sw_record_t *rec, const sw_pager_opts_t *opts,
                                  sw_buf_t *out)
{
    sw_pager_action_t act = sw_pager_decide(rec);
    if (act == SW_PAGER_SKIP) return act;
    size_t start = out->len;
    if (opts->format == SW_PAGER_ALERTMANAGER) {
        am_alert(out, rec, opts, act);
    } else {
        for (pd_detail_t level = PD_FULL;; level++) {
            pd_event(out, rec, opts, act, level);
            if (out->len - start <= SW_PAGER_EVENT_MAX || level == PD_LIFECYCLE) break;
            out->len = start;
        }
    }
    fix_lone_surrogates(out, start);
    return act;
}
