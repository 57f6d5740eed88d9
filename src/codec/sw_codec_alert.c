/*
 * Analysis and record -> JSON (SPEC 3.8, 6). Keys are written in the order
 * the SPEC lists them; consumers compare parsed values, not text. No I/O.
 */
#include "sw_codec_alert.h"

#include <stdio.h>
#include <stdlib.h>

#include "sw_alloc.h"
#include "sw_jw.h"
#include "sw_codec_x8.h"

static void put_phase(sw_jw_t *jw, const sw_phase_attr_t *ph)
{
    if (ph->resolution == SW_PHASE_NONE) {
        sw_jw_null(jw);
        return;
    }
    sw_jw_obj(jw);
    sw_jw_key(jw, "phase_resolution");
    sw_jw_cstr(jw, ph->resolution == SW_PHASE_UNIQUE ? "unique" : "ambiguous");
    sw_jw_key(jw, "phase_paths");
    sw_jw_arr(jw);
    for (size_t i = 0; i < ph->n_paths; i++) sw_jw_str(jw, ph->paths[i]);
    sw_jw_end_arr(jw);
    if (ph->resolution == SW_PHASE_UNIQUE) {
        sw_jw_key(jw, "phase_source");
        sw_jw_cstr(jw, "heuristic");
        sw_jw_key(jw, "phase_path");
        sw_jw_str(jw, ph->path);
        sw_jw_key(jw, "scope_id");
        sw_jw_str(jw, ph->scope_id);
        sw_jw_key(jw, "thread_id");
        sw_jw_i64(jw, ph->thread_id);
        sw_jw_key(jw, "thread_name");
        sw_jw_str(jw, ph->thread_name);
    } else if (ph->has_summary) {
        sw_jw_key(jw, "phase_summary");
        sw_jw_obj(jw);
        sw_jw_key(jw, "phase_path");
        sw_jw_str(jw, ph->summary_path);
        sw_jw_key(jw, "source");
        sw_jw_cstr(jw, "heuristic");
        sw_jw_end_obj(jw);
    }
    sw_jw_end_obj(jw);
}

static void put_suspect(sw_jw_t *jw, const sw_suspect_t *s, bool extras)
{
    sw_jw_obj(jw);
    sw_jw_key(jw, "rank");
    sw_jw_i64(jw, s->rank);
    sw_jw_key(jw, "first_spike_timestamp_ns");
    sw_jw_i64(jw, s->first_spike_timestamp_ns);
    sw_jw_key(jw, "aligned_first_spike_timestamp_ns");
    sw_jw_u64(jw, s->aligned_first_spike_timestamp_ns);
    sw_jw_key(jw, "peak_delta_bytes");
    sw_jw_i64(jw, s->peak_delta_bytes);
    sw_jw_key(jw, "spike_window_samples");
    sw_jw_i64(jw, s->spike_window_samples);
    sw_jw_key(jw, "lead_over_cluster_onset_ns");
    sw_jw_i64(jw, s->lead_over_cluster_onset_ns);
    sw_jw_key(jw, "confidence");
    sw_jw_cstr(jw, sw_confidence_str(s->confidence));
    sw_jw_key(jw, "evidence");
    sw_jw_obj(jw);
    sw_jw_key(jw, "device_used_delta_bytes");
    sw_jw_i64(jw, s->peak_delta_bytes);
    sw_jw_key(jw, "supporting_ranks_at_or_before_onset");
    sw_jw_i64(jw, s->supporting_ranks);
    sw_jw_end_obj(jw);
    sw_jw_key(jw, "phase_attribution");
    put_phase(jw, &s->phase);
    if (s->n_timeline) {
        sw_jw_key(jw, "timeline");
        sw_jw_obj(jw);
        sw_jw_key(jw, "aligned_timestamp_ns");
        sw_jw_arr(jw);
        for (size_t i = 0; i < s->n_timeline; i++) sw_jw_i64(jw, s->timeline_aligned_ns[i]);
        sw_jw_end_arr(jw);
        sw_jw_key(jw, "device_used_bytes");
        sw_jw_arr(jw);
        for (size_t i = 0; i < s->n_timeline; i++) sw_jw_i64(jw, s->timeline_used[i]);
        sw_jw_end_arr(jw);
        sw_jw_key(jw, "window_samples");
        sw_jw_i64(jw, s->timeline_window);
        sw_jw_key(jw, "spike_start_index");
        sw_jw_u64(jw, s->timeline_spike_start);
        sw_jw_key(jw, "spike_index");
        sw_jw_u64(jw, s->timeline_spike);
        sw_jw_end_obj(jw);
    }
    /* Where it runs (extra keys of records; the batch output keeps SPEC
     * 3.8's keys): on-call acts without a lookup. */
    if (extras && s->has_source) {
        sw_jw_key(jw, "host");
        sw_jw_str(jw, s->host);
        sw_jw_key(jw, "pid");
        sw_jw_i64(jw, s->pid);
        sw_jw_key(jw, "device_id");
        if (s->has_device_id) sw_jw_i64(jw, s->device_id);
        else sw_jw_null(jw);
        sw_jw_key(jw, "local_rank");
        if (s->has_local_rank) sw_jw_i64(jw, s->local_rank);
        else sw_jw_null(jw);
        sw_jw_key(jw, "session_id");
        if (s->has_session) sw_jw_str(jw, s->session_id);
        else sw_jw_null(jw);
    }
    sw_jw_end_obj(jw);
}

/* A rank map; alerts keep only the suspects' ranks and the anchor. */
static void put_map(sw_jw_t *jw, const sw_analysis_t *a, const sw_rank_val_t *v, size_t n,
                    bool trim)
{
    sw_jw_obj(jw);
    if (!trim) {
        for (size_t i = 0; i < n; i++) {
            sw_jw_key_i64(jw, v[i].rank);
            sw_jw_i64(jw, v[i].value);
        }
        sw_jw_end_obj(jw);
        return;
    }
    size_t small[16];
    size_t *sel = a->n_suspects + 1 <= 16 ? small : sw_malloc((a->n_suspects + 1) * sizeof(*sel));
    size_t nsel = sw_analysis_kept_ranks(a, v, n, sel);
    for (size_t k = 0; k < nsel; k++) {
        sw_jw_key_i64(jw, v[sel[k]].rank);
        sw_jw_i64(jw, v[sel[k]].value);
    }
    if (sel != small) free(sel);
    sw_jw_end_obj(jw);
}

static void put_body(sw_jw_t *jw, const sw_analysis_t *a, bool trim, bool extras)
{
    sw_jw_key(jw, "world_size");
    sw_jw_i64(jw, a->world_size);
    sw_jw_key(jw, "participating_ranks");
    sw_jw_arr(jw);
    for (size_t i = 0; i < a->n_participating; i++) sw_jw_i64(jw, a->participating[i]);
    sw_jw_end_arr(jw);
    sw_jw_key(jw, "missing_ranks");
    sw_jw_arr(jw);
    for (size_t i = 0; i < a->n_missing; i++) sw_jw_i64(jw, a->missing[i]);
    sw_jw_end_arr(jw);
    sw_jw_key(jw, "rank_sample_counts");
    put_map(jw, a, a->counts, a->n_counts, trim);
    sw_jw_key(jw, "alignment_offsets_ns");
    put_map(jw, a, a->offsets, a->n_offsets, trim);
    sw_jw_key(jw, "cluster_onset_timestamp_ns");
    if (a->has_onset) sw_jw_u64(jw, a->onset_ns);
    else sw_jw_null(jw);
    sw_jw_key(jw, "first_cause_suspects");
    sw_jw_arr(jw);
    for (size_t i = 0; i < a->n_suspects; i++) put_suspect(jw, &a->suspects[i], extras);
    sw_jw_end_arr(jw);
    sw_jw_key(jw, "notes");
    sw_jw_arr(jw);
    for (size_t i = 0; i < a->n_notes; i++) sw_jw_str(jw, a->notes[i]);
    sw_jw_end_arr(jw);
}

static void put_job_id(sw_jw_t *jw, const sw_analysis_t *a)
{
    sw_jw_key(jw, "job_id");
    if (a->has_job_id) sw_jw_str(jw, a->job_id);
    else sw_jw_null(jw);
}

void sw_alert_json_analysis(sw_buf_t *buf, const sw_analysis_t *a, int indent)
{
    sw_jw_t jw;
    sw_jw_init(&jw, buf, indent);
    sw_jw_obj(&jw);
    put_job_id(&jw, a);
    put_body(&jw, a, false, false);
    sw_jw_end_obj(&jw);
}

/* Pager severity of a first suspect's confidence. */
static const char *confidence_severity(int confidence)
{
    switch (confidence) {
    case SW_CONFIDENCE_HIGH: return "critical";
    case SW_CONFIDENCE_MEDIUM: return "error";
    default: return "warning";
    }
}

const char *sw_record_episode_severity(const sw_record_t *rec)
{
    return rec->episode_confidence == -2 ? "info" : confidence_severity(rec->episode_confidence);
}

void sw_suspect_where(const sw_suspect_t *s, sw_buf_t *buf)
{
    sw_buf_puts(buf, "rank ");
    sw_buf_put_i64(buf, s->rank);
    if (!s->has_source) return;
    sw_buf_puts(buf, " on ");
    sw_buf_put(buf, s->host.ptr, s->host.len);
    if (s->has_device_id) {
        sw_buf_puts(buf, " GPU ");
        sw_buf_put_i64(buf, s->device_id);
    }
}

const char *sw_record_severity(const sw_record_t *rec)
{
    if (sw_action_is_x8(rec->action)) return sw_x8_severity(rec);
    if (rec->action == SW_ACTION_RESOLVE || rec->action == SW_ACTION_SUMMARY) return "info";
    if (rec->analysis.n_suspects == 0) return "warning";
    return confidence_severity((int)rec->analysis.suspects[0].confidence);
}

void sw_record_dedup_key(const sw_record_t *rec, sw_buf_t *buf)
{
    if (sw_action_is_x8(rec->action)) {
        sw_x8_dedup_key(rec, buf);
        return;
    }
    sw_buf_puts(buf, "stormwatch/");
    if (rec->analysis.has_job_id)
        sw_buf_put(buf, rec->analysis.job_id.ptr, rec->analysis.job_id.len);
    else sw_buf_puts(buf, "<null>");
    sw_buf_puts(buf, "/episode/");
    sw_buf_put_i64(buf, rec->episode);
}

/* "1.25 s", "300 ms", "12 us" or "40 ns". */
void sw_duration_text(sw_buf_t *buf, int64_t ns)
{
    char tmp[48];
    if (ns >= 1000000000) snprintf(tmp, sizeof(tmp), "%.2f s", (double)ns / 1e9);
    else if (ns >= 1000000) snprintf(tmp, sizeof(tmp), "%.0f ms", (double)ns / 1e6);
    else if (ns >= 1000) snprintf(tmp, sizeof(tmp), "%.0f us", (double)ns / 1e3);
    else snprintf(tmp, sizeof(tmp), "%lld ns", (long long)ns);
    sw_buf_puts(buf, tmp);
}

void sw_phase_text(sw_buf_t *buf, const sw_phase_attr_t *ph)
{
    if (ph->resolution == SW_PHASE_UNIQUE) {
        sw_buf_puts(buf, "phase ");
        sw_buf_put(buf, ph->path.ptr, ph->path.len);
    } else if (ph->resolution == SW_PHASE_AMBIGUOUS) {
        sw_buf_puts(buf, "phase ambiguous");
        if (ph->has_summary) {
            sw_buf_puts(buf, " (likely ");
            sw_buf_put(buf, ph->summary_path.ptr, ph->summary_path.len);
            sw_buf_putc(buf, ')');
        }
    } else {
        sw_buf_puts(buf, "phase unknown");
    }
}

void sw_record_summary(const sw_record_t *rec, sw_buf_t *buf)
{
    const sw_analysis_t *a = &rec->analysis;
    static const char *const verbs[] = {"TRIGGER", "UPDATE", "RESOLVED", "SUMMARY"};
    if (sw_action_is_x8(rec->action)) {
        sw_x8_summary(rec, buf);
        return;
    }
    sw_buf_puts(buf, verbs[rec->action]);
    sw_buf_puts(buf, " job ");
    if (a->has_job_id) sw_buf_put(buf, a->job_id.ptr, a->job_id.len);
    else sw_buf_puts(buf, "<null>");
    if (rec->episode > 0) {
        sw_buf_puts(buf, " episode ");
        sw_buf_put_i64(buf, rec->episode);
    }
    sw_buf_puts(buf, ": ");
    if (rec->action == SW_ACTION_RESOLVE) {
        if (a->n_suspects == 0) {
            sw_buf_puts(buf, "ended");
            return;
        }
        sw_buf_puts(buf, "memory storm that started on ");
        sw_suspect_where(&a->suspects[0], buf);
        sw_buf_puts(buf, " ended (");
        if (rec->resolve_reason == SW_RESOLVE_SUSPECT_LOST) {
            sw_buf_puts(buf, "the spike of rank ");
            sw_buf_put_i64(buf, rec->resolve_rank);
            sw_buf_puts(buf, " left its window");
        } else if (rec->resolve_reason == SW_RESOLVE_NEXT_STORM) {
            sw_buf_puts(buf, "the next storm started");
        } else {
            sw_buf_puts(buf, "fewer than two ranks still show a spike");
        }
        sw_buf_putc(buf, ')');
        return;
    }
    if (!a->has_onset || a->n_suspects == 0) {
        sw_buf_puts(buf, rec->episode > 0 ? "no cross-rank memory storm in the current windows ("
                                          : "no cross-rank memory storm detected (");
        sw_buf_put_i64(buf, (int64_t)a->n_participating);
        sw_buf_puts(buf, a->n_participating == 1 ? " rank)" : " ranks)");
        return;
    }
    const sw_suspect_t *s = &a->suspects[0];
    sw_buf_puts(buf, "memory storm first seen on ");
    sw_suspect_where(s, buf);
    sw_buf_puts(buf, " (lead ");
    sw_duration_text(buf, s->lead_over_cluster_onset_ns);
    sw_buf_puts(buf, ", ");
    sw_buf_puts(buf, sw_confidence_str(s->confidence));
    sw_buf_puts(buf, " confidence, ");
    sw_phase_text(buf, &s->phase);
    char gib[32];
    snprintf(gib, sizeof(gib), ", +%.2f GiB, ", (double)s->peak_delta_bytes / 1073741824.0);
    sw_buf_puts(buf, gib);
    sw_buf_put_i64(buf, (int64_t)a->n_suspects);
    sw_buf_puts(buf, a->n_suspects == 1 ? " rank at onset)" : " ranks at onset)");
}

void sw_alert_json_record(sw_buf_t *buf, const sw_record_t *rec)
{
    if (sw_action_is_x8(rec->action)) {
        sw_x8_json_record(buf, rec);
        return;
    }
    sw_jw_t jw;
    sw_jw_init(&jw, buf, 0);
    sw_jw_obj(&jw);
    sw_jw_key(&jw, "action");
    sw_jw_cstr(&jw, sw_action_str(rec->action));
    put_job_id(&jw, &rec->analysis);
    sw_jw_key(&jw, "episode");
    sw_jw_i64(&jw, rec->episode);
    sw_jw_key(&jw, "revision");
    sw_jw_i64(&jw, rec->revision);
    sw_jw_key(&jw, "event_timestamp_ns");
    if (rec->has_event_ts) sw_jw_i64(&jw, rec->event_timestamp_ns);
    else sw_jw_null(&jw);
    put_body(&jw, &rec->analysis, rec->action != SW_ACTION_SUMMARY, true);
    sw_jw_key(&jw, "severity");
    sw_jw_cstr(&jw, sw_record_severity(rec));
    sw_buf_t tmp;
    sw_buf_init(&tmp);
    sw_record_dedup_key(rec, &tmp);
    sw_jw_key(&jw, "dedup_key");
    sw_jw_str(&jw, (sw_str_t){tmp.data, tmp.len});
    tmp.len = 0;
    sw_record_summary(rec, &tmp);
    sw_jw_key(&jw, "summary");
    sw_jw_str(&jw, (sw_str_t){tmp.data, tmp.len});
    sw_buf_clear(&tmp);
    sw_record_json_source(&jw, rec);
    if (rec->action == SW_ACTION_RESOLVE && rec->resolve_reason != SW_RESOLVE_NONE) {
        sw_jw_key(&jw, "resolve_reason");
        sw_jw_cstr(&jw, sw_resolve_reason_str(rec->resolve_reason));
        if (rec->resolve_rank >= 0) {
            sw_jw_key(&jw, "resolve_lost_rank");
            sw_jw_i64(&jw, rec->resolve_rank);
        }
    }
    if (rec->action == SW_ACTION_SUMMARY) {
        sw_jw_key(&jw, "episode_open");
        sw_jw_bool(&jw, rec->episode_open);
    }
    if (rec->n_tied) {
        sw_jw_key(&jw, "tied_ranks");
        sw_jw_arr(&jw);
        for (size_t i = 0; i < rec->n_tied; i++) sw_jw_i64(&jw, rec->tied_ranks[i]);
        sw_jw_end_arr(&jw);
    }
    if (rec->action == SW_ACTION_SUMMARY && rec->has_verdict) {
        /* What on-call read for the open episode, as a resolve copies it. */
        sw_jw_key(&jw, "verdict");
        sw_jw_obj(&jw);
        sw_jw_key(&jw, "cluster_onset_timestamp_ns");
        sw_jw_u64(&jw, rec->verdict_onset_ns);
        sw_jw_key(&jw, "first_cause_suspects");
        sw_jw_arr(&jw);
        for (size_t i = 0; i < rec->n_verdict; i++) put_suspect(&jw, &rec->verdict[i], true);
        sw_jw_end_arr(&jw);
        sw_jw_end_obj(&jw);
    }
    sw_x8_json_blind(&jw, rec); /* SPEC 8.5, last so that SPEC 6's keys stay as they were */
    sw_jw_end_obj(&jw);
}
