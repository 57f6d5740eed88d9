/*
 * Alert records in Avro (schemas/first_cause_alert.avsc; see
 * sw_codec_avro.h): sw_record_t -> Avro, and Avro -> the SPEC record's JSON
 * (for tail, report and notify). Checks everything before the first byte
 * is written; the decoder never reads past the end. Pure: no I/O.
 */
#include "sw_codec_avro_int.h"
#include "sw_codec_x8.h"

/* ------------------------------------------------------------------ */
/* FirstCauseAlert: encoder                                            */
/* ------------------------------------------------------------------ */

static void put_map_entry(sw_buf_t *out, const sw_rank_val_t *e)
{
    char key[24];
    int n = snprintf(key, sizeof(key), "%lld", (long long)e->rank);
    put_str(out, (sw_str_t){key, (size_t)n});
    put_long(out, e->value);
}

/* A rank map; alerts keep only the suspects' ranks and the anchor, as
 * put_map() of sw_codec_alert.c does. */
static void put_rank_map(sw_buf_t *out, const sw_analysis_t *a, const sw_rank_val_t *v, size_t n,
                         bool trim)
{
    if (!trim) {
        if (n) {
            put_long(out, (int64_t)n);
            for (size_t i = 0; i < n; i++) put_map_entry(out, &v[i]);
        }
        put_long(out, 0);
        return;
    }
    size_t small_sel[16];
    size_t cap = a->n_suspects + 1;
    size_t *sel = cap <= 16 ? small_sel : sw_malloc(cap * sizeof(*sel));
    size_t nsel = sw_analysis_kept_ranks(a, v, n, sel);
    if (nsel) {
        put_long(out, (int64_t)nsel);
        for (size_t k = 0; k < nsel; k++) put_map_entry(out, &v[sel[k]]);
    }
    put_long(out, 0);
    if (sel != small_sel) free(sel);
}

static void put_phase_attr(sw_buf_t *out, const sw_phase_attr_t *ph)
{
    if (ph->resolution == SW_PHASE_NONE) {
        put_long(out, 0);
        return;
    }
    bool unique = ph->resolution == SW_PHASE_UNIQUE;
    put_long(out, 1);
    put_long(out, unique ? 0 : 1); /* PhaseResolution */
    if (ph->n_paths) {
        put_long(out, (int64_t)ph->n_paths);
        for (size_t i = 0; i < ph->n_paths; i++) put_str_clean(out, ph->paths[i]);
    }
    put_long(out, 0);
    bool summary = !unique && ph->has_summary;
    put_long(out, summary ? 1 : 0);
    if (summary) {
        put_str_clean(out, ph->summary_path);
        put_cstr(out, "heuristic");
    }
    put_opt_str(out, unique, sw_str("heuristic"));
    put_opt_str_clean(out, unique, ph->path);
    put_opt_str_clean(out, unique, ph->scope_id);
    put_opt_long(out, unique, ph->thread_id);
    put_opt_str_clean(out, unique, ph->thread_name);
}

static void put_i64_array(sw_buf_t *out, const int64_t *v, size_t n)
{
    if (n) {
        put_long(out, (int64_t)n);
        for (size_t i = 0; i < n; i++) put_long(out, v[i]);
    }
    put_long(out, 0);
}

static void put_suspect_where(sw_buf_t *out, const sw_suspect_t *s);

static void put_suspect(sw_buf_t *out, const sw_suspect_t *s)
{
    put_long(out, s->rank);
    put_long(out, s->first_spike_timestamp_ns);
    put_long(out, (int64_t)s->aligned_first_spike_timestamp_ns); /* checked <= INT64_MAX */
    put_long(out, s->peak_delta_bytes);
    put_long(out, s->spike_window_samples);
    put_long(out, s->lead_over_cluster_onset_ns);
    put_long(out, (int64_t)s->confidence); /* low, medium, high = 0, 1, 2 */
    put_long(out, s->peak_delta_bytes);    /* evidence.device_used_delta_bytes */
    put_long(out, s->supporting_ranks);
    put_phase_attr(out, &s->phase);
    if (!s->n_timeline) {
        put_long(out, 0); /* timeline: null */
        put_suspect_where(out, s);
        return;
    }
    put_long(out, 1);
    put_i64_array(out, s->timeline_aligned_ns, s->n_timeline);
    put_i64_array(out, s->timeline_used, s->n_timeline);
    put_long(out, s->timeline_window);
    put_long(out, (int64_t)s->timeline_spike_start);
    put_long(out, (int64_t)s->timeline_spike);
    put_suspect_where(out, s);
}

/* Where the spike ran: host, pid, device_id, local_rank, session_id. */
static void put_suspect_where(sw_buf_t *out, const sw_suspect_t *s)
{
    put_opt_str_clean(out, s->has_source, s->host);
    put_opt_long(out, s->has_source, s->pid);
    put_opt_long(out, s->has_source && s->has_device_id, s->device_id);
    put_opt_long(out, s->has_source && s->has_local_rank, s->local_rank);
    put_opt_str_clean(out, s->has_source && s->has_session, s->session_id);
}

static sw_err_t too_big(char *errstr, size_t errstr_size, const char *field, uint64_t v)
{
    snprintf(errstr, errstr_size,
             "field \"%s\" is %llu, expected at most 9223372036854775807 (an Avro long)", field,
             (unsigned long long)v);
    return SW_ERR_INVALID_ARG;
}

/* The x8 field (SPEC 8's CrashOrWarning, or null). */
static void put_x8(sw_buf_t *out, const sw_record_t *rec)
{
    const sw_x8_t *x = sw_action_is_x8(rec->action) ? rec->x8 : NULL;
    put_long(out, x ? 1 : 0);
    if (!x) return;
    put_long(out, x->number);
    sw_buf_putc(out, x->open ? 1 : 0);
    bool crash = rec->action == SW_ACTION_CRASH;
    put_long(out, crash ? 1 : 0);
    if (crash) {
        const sw_death_t *d = &x->first;
        put_long(out, d->rank);
        put_cstr(out, d->cause == SW_DEATH_OOM ? "oom" : "silent");
        put_long(out, d->timestamp_ns);
        put_long(out, d->aligned_timestamp_ns);
        put_str_clean(out, d->host);
        put_opt_long(out, d->has_device_id, d->device_id);
        put_opt_long(out, d->has_local_rank, d->local_rank);
        put_long(out, d->pid);
        put_opt_str_clean(out, d->has_session, d->session_id);
        put_opt_str_clean(out, d->has_oom_reason, d->oom_reason);
    }
    put_long(out, x->deaths);
    put_i64_array(out, x->dead_ranks, x->n_dead);
    if (x->n_wranks) {
        put_long(out, (int64_t)x->n_wranks);
        for (size_t i = 0; i < x->n_wranks; i++) {
            const sw_warn_rank_t *w = &x->wranks[i];
            put_long(out, w->rank);
            put_str_clean(out, w->host);
            put_opt_long(out, w->has_device_id, w->device_id);
            put_long(out, w->used_bytes);
            put_long(out, w->total_bytes);
            put_long(out, w->headroom_bytes);
            put_long(out, w->rate_bytes_per_s);
            put_long(out, w->eta_ms);
        }
    }
    put_long(out, 0);
    put_long(out, x->storm.set ? 1 : 0);
    if (x->storm.set) {
        put_long(out, x->storm.episode);
        sw_buf_putc(out, x->storm.open ? 1 : 0);
        put_opt_long(out, x->storm.has_rank, x->storm.first_cause_rank);
        put_opt_long(out, x->storm.has_onset, (int64_t)x->storm.onset_ns);
    }
    put_long(out, x->closed_warning);
    /* Since 0.4.0, at the record's end with null defaults: what JSON's
     * previous_first_death, deaths_total, closed_by, closed_by_crash say. */
    put_long(out, x->has_previous ? 1 : 0);
    if (x->has_previous) {
        put_long(out, x->previous_rank);
        put_long(out, x->previous_aligned_ns);
    }
    put_opt_long(out, crash && x->deaths_total > 0, x->deaths_total);
    bool closed = !x->open && x->end != SW_X8_END_NONE;
    put_opt_str(out, closed, closed ? sw_str(sw_x8_end_str(x->end, crash)) : sw_str(""));
    put_opt_long(out, x->closed_by_crash > 0, x->closed_by_crash);
}

sw_err_t sw_avro_encode_record(const sw_record_t *rec, int32_t schema_id, sw_buf_t *out,
                               char *errstr, size_t errstr_size)
{
    /* Every check before the first byte, so that out is unchanged on error.
     * Enum values outside the schema's symbols are refused, not clamped. */
    const sw_analysis_t *a = &rec->analysis;
    if (rec->action < SW_ACTION_TRIGGER || rec->action > SW_ACTION_WARNING ||
        (sw_action_is_x8(rec->action) && !rec->x8)) {
        snprintf(errstr, errstr_size,
                 "field \"action\" is %d, expected 0..5 (trigger..warning; crash and warning "
                 "with their SPEC 8 part)",
                 (int)rec->action);
        return SW_ERR_INVALID_ARG;
    }
    if (a->has_onset && a->onset_ns > (uint64_t)INT64_MAX)
        return too_big(errstr, errstr_size, "cluster_onset_timestamp_ns", a->onset_ns);
    if (rec->has_verdict && rec->verdict_onset_ns > (uint64_t)INT64_MAX)
        return too_big(errstr, errstr_size, "verdict.cluster_onset_timestamp_ns",
                       rec->verdict_onset_ns);
    for (size_t i = 0; rec->has_verdict && i < rec->n_verdict; i++)
        if (rec->verdict[i].aligned_first_spike_timestamp_ns > (uint64_t)INT64_MAX) {
            char field[96];
            snprintf(field, sizeof(field),
                     "verdict.first_cause_suspects[%zu].aligned_first_spike_timestamp_ns", i);
            return too_big(errstr, errstr_size, field,
                           rec->verdict[i].aligned_first_spike_timestamp_ns);
        }
    for (size_t i = 0; i < a->n_suspects; i++) {
        const sw_suspect_t *s = &a->suspects[i];
        if (s->aligned_first_spike_timestamp_ns > (uint64_t)INT64_MAX) {
            char field[96];
            snprintf(field, sizeof(field),
                     "first_cause_suspects[%zu].aligned_first_spike_timestamp_ns", i);
            return too_big(errstr, errstr_size, field, s->aligned_first_spike_timestamp_ns);
        }
        if (s->confidence < SW_CONFIDENCE_LOW || s->confidence > SW_CONFIDENCE_HIGH ||
            s->phase.resolution < SW_PHASE_NONE || s->phase.resolution > SW_PHASE_AMBIGUOUS) {
            snprintf(errstr, errstr_size,
                     "first_cause_suspects[%zu]: confidence %d or phase resolution %d is not "
                     "a known value",
                     i, (int)s->confidence, (int)s->phase.resolution);
            return SW_ERR_INVALID_ARG;
        }
    }

    put_header(out, schema_id);
    put_long(out, (int64_t)rec->action);
    put_opt_str_clean(out, a->has_job_id, a->job_id);
    put_long(out, rec->episode);
    put_long(out, rec->revision);
    put_opt_long(out, rec->has_event_ts, rec->event_timestamp_ns);
    put_long(out, a->world_size);
    put_i64_array(out, a->participating, a->n_participating);
    put_i64_array(out, a->missing, a->n_missing);
    bool trim = rec->action != SW_ACTION_SUMMARY;
    put_rank_map(out, a, a->counts, a->n_counts, trim);
    put_rank_map(out, a, a->offsets, a->n_offsets, trim);
    put_opt_long(out, a->has_onset, (int64_t)a->onset_ns);
    if (a->n_suspects) {
        put_long(out, (int64_t)a->n_suspects);
        for (size_t i = 0; i < a->n_suspects; i++) put_suspect(out, &a->suspects[i]);
    }
    put_long(out, 0);
    if (a->n_notes) {
        put_long(out, (int64_t)a->n_notes);
        for (size_t i = 0; i < a->n_notes; i++) put_str_clean(out, a->notes[i]);
    }
    put_long(out, 0);
    put_cstr(out, sw_record_severity(rec));
    sw_buf_t tmp;
    sw_buf_init(&tmp);
    sw_record_dedup_key(rec, &tmp);
    put_str_clean(out, (sw_str_t){tmp.data, tmp.len});
    tmp.len = 0;
    sw_record_summary(rec, &tmp);
    put_str_clean(out, (sw_str_t){tmp.data, tmp.len});
    sw_buf_clear(&tmp);
    put_long(out, rec->source.set ? 1 : 0);
    if (rec->source.set) {
        put_str_clean(out, rec->source.topic);
        put_long(out, rec->source.partition);
        put_long(out, rec->source.offset);
    }
    bool resolve = rec->action == SW_ACTION_RESOLVE && rec->resolve_reason != SW_RESOLVE_NONE;
    put_opt_str(out, resolve, sw_str(sw_resolve_reason_str(rec->resolve_reason)));
    put_opt_long(out, resolve && rec->resolve_rank >= 0, rec->resolve_rank);
    bool summary = rec->action == SW_ACTION_SUMMARY;
    put_long(out, summary ? 1 : 0);
    if (summary) sw_buf_putc(out, rec->episode_open ? 1 : 0); /* Avro boolean: one byte */
    put_long(out, rec->n_tied ? 1 : 0);
    if (rec->n_tied) put_i64_array(out, rec->tied_ranks, rec->n_tied);
    put_long(out, rec->has_verdict ? 1 : 0);
    if (rec->has_verdict) {
        put_long(out, (int64_t)rec->verdict_onset_ns);
        if (rec->n_verdict) {
            put_long(out, (int64_t)rec->n_verdict);
            for (size_t i = 0; i < rec->n_verdict; i++) put_suspect(out, &rec->verdict[i]);
        }
        put_long(out, 0);
    }
    put_long(out, rec->n_blind ? 1 : 0);
    if (rec->n_blind) put_i64_array(out, rec->blind_ranks, rec->n_blind);
    put_x8(out, rec);
    return SW_OK;
}

/* ------------------------------------------------------------------ */
/* FirstCauseAlert: decoder to JSON                                    */
/* ------------------------------------------------------------------ */

/* The schema's enum symbols are in the order of sw_action_t and
 * sw_confidence_t: their names come from sw_action_str/sw_confidence_str
 * (test_avro's round trips of every fixture record check the order). */

static bool js_long(rd_t *rd, sw_jw_t *jw, const char *field)
{
    int64_t v = 0;
    rd->field = field;
    if (!rd_long(rd, &v)) return false;
    sw_jw_key(jw, field);
    sw_jw_i64(jw, v);
    return true;
}

static bool js_opt_long(rd_t *rd, sw_jw_t *jw, const char *field)
{
    bool set = false;
    int64_t v = 0;
    rd->field = field;
    if (!rd_opt(rd, &set)) return false;
    sw_jw_key(jw, field);
    if (!set) {
        sw_jw_null(jw);
        return true;
    }
    if (!rd_long(rd, &v)) return false;
    sw_jw_i64(jw, v);
    return true;
}

static bool js_str(rd_t *rd, sw_jw_t *jw, const char *field)
{
    sw_str_t s = {0};
    rd->field = field;
    if (!rd_str(rd, &s)) return false;
    sw_jw_key(jw, field);
    sw_jw_str(jw, s);
    return true;
}

static bool js_opt_str(rd_t *rd, sw_jw_t *jw, const char *field)
{
    bool set = false;
    sw_str_t s = {0};
    rd->field = field;
    if (!rd_opt(rd, &set)) return false;
    sw_jw_key(jw, field);
    if (!set) {
        sw_jw_null(jw);
        return true;
    }
    if (!rd_str(rd, &s)) return false;
    sw_jw_str(jw, s);
    return true;
}

static bool js_long_array(rd_t *rd, sw_jw_t *jw, const char *field)
{
    rd->field = field;
    sw_jw_key(jw, field);
    sw_jw_arr(jw);
    for (;;) {
        int64_t n = 0, v = 0;
        if (!rd_block(rd, &n)) return false;
        if (n == 0) break;
        for (int64_t i = 0; i < n; i++) {
            if (!rd_long(rd, &v)) return false;
            sw_jw_i64(jw, v);
        }
    }
    sw_jw_end_arr(jw);
    return true;
}

static bool js_str_array(rd_t *rd, sw_jw_t *jw, const char *field, const char *key)
{
    rd->field = field;
    sw_jw_key(jw, key);
    sw_jw_arr(jw);
    for (;;) {
        int64_t n = 0;
        sw_str_t s = {0};
        if (!rd_block(rd, &n)) return false;
        if (n == 0) break;
        for (int64_t i = 0; i < n; i++) {
            if (!rd_str(rd, &s)) return false;
            sw_jw_str(jw, s);
        }
    }
    sw_jw_end_arr(jw);
    return true;
}

/* A decimal rank: "0" or [1-9][0-9]* that fits in int64. */
static bool parse_rank_key(sw_str_t k, int64_t *rank)
{
    if (k.len == 0 || k.len > 19 || (k.len > 1 && k.ptr[0] == '0')) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < k.len; i++) {
        if (k.ptr[i] < '0' || k.ptr[i] > '9') return false;
        v = v * 10 + (uint64_t)(k.ptr[i] - '0');
    }
    if (v > (uint64_t)INT64_MAX) return false;
    *rank = (int64_t)v;
    return true;
}

static bool js_rank_map(rd_t *rd, sw_jw_t *jw, const char *field)
{
    rd->field = field;
    sw_jw_key(jw, field);
    sw_jw_obj(jw);
    for (;;) {
        int64_t n = 0, v = 0, rank = 0;
        sw_str_t key = {0};
        if (!rd_block(rd, &n)) return false;
        if (n == 0) break;
        for (int64_t i = 0; i < n; i++) {
            const unsigned char *at = rd->p;
            if (!rd_str(rd, &key)) return false;
            if (!parse_rank_key(key, &rank)) {
                char shown[24], nm[160];
                size_t m = key.len < sizeof(shown) - 1 ? key.len : sizeof(shown) - 1;
                for (size_t j = 0; j < m; j++) {
                    unsigned char c = (unsigned char)key.ptr[j];
                    shown[j] = c < 0x20 || c >= 0x7f || c == '"' ? '?' : (char)c;
                }
                shown[m] = '\0';
                return sw_avro_rd_fail(
                    rd, SW_ERR_AVRO,
                    "Avro: map key \"%s%s\" at byte %zu in %s is not a decimal rank", shown,
                    key.len > m ? "..." : "", rd_off(rd, at), rd_name(rd, nm, sizeof(nm)));
            }
            if (!rd_long(rd, &v)) return false;
            sw_jw_key_i64(jw, rank);
            sw_jw_i64(jw, v);
        }
    }
    sw_jw_end_obj(jw);
    return true;
}

/* PhaseAttribution: Avro lists phase_summary before the unique fields,
 * sw_alert_json_record() writes it after them, so those are held until
 * the record is read. Null members are left out, as there. */
static bool js_phase_attr(rd_t *rd, sw_jw_t *jw)
{
    bool set, has_summary = false;
    int res = 0;
    sw_str_t sum_path = {0}, sum_src = {0};
    bool has[5] = {false};
    sw_str_t strs[5] = {{0}};
    int64_t thread_id = 0;
    static const char *const names[5] = {"phase_source", "phase_path", "scope_id", "thread_id",
                                         "thread_name"};
    static const char *const fields[5] = {
        "phase_attribution.phase_source", "phase_attribution.phase_path",
        "phase_attribution.scope_id", "phase_attribution.thread_id",
        "phase_attribution.thread_name"};

    rd->field = "phase_attribution";
    sw_jw_key(jw, "phase_attribution");
    if (!rd_opt(rd, &set)) return false;
    if (!set) {
        sw_jw_null(jw);
        return true;
    }
    sw_jw_obj(jw);
    rd->field = "phase_attribution.phase_resolution";
    if (!rd_index(rd, 2, "enum", &res)) return false;
    sw_jw_key(jw, "phase_resolution");
    sw_jw_cstr(jw, res == 0 ? "unique" : "ambiguous");
    if (!js_str_array(rd, jw, "phase_attribution.phase_paths", "phase_paths")) return false;
    rd->field = "phase_attribution.phase_summary";
    if (!rd_opt(rd, &has_summary)) return false;
    if (has_summary) {
        rd->field = "phase_attribution.phase_summary.phase_path";
        if (!rd_str(rd, &sum_path)) return false;
        rd->field = "phase_attribution.phase_summary.source";
        if (!rd_str(rd, &sum_src)) return false;
    }
    for (int i = 0; i < 5; i++) {
        rd->field = fields[i];
        if (!rd_opt(rd, &has[i])) return false;
        if (!has[i]) continue;
        if (i == 3 ? !rd_long(rd, &thread_id) : !rd_str(rd, &strs[i])) return false;
    }
    for (int i = 0; i < 5; i++) {
        if (!has[i]) continue;
        sw_jw_key(jw, names[i]);
        if (i == 3) sw_jw_i64(jw, thread_id);
        else sw_jw_str(jw, strs[i]);
    }
    if (has_summary) {
        sw_jw_key(jw, "phase_summary");
        sw_jw_obj(jw);
        sw_jw_key(jw, "phase_path");
        sw_jw_str(jw, sum_path);
        sw_jw_key(jw, "source");
        sw_jw_str(jw, sum_src);
        sw_jw_end_obj(jw);
    }
    sw_jw_end_obj(jw);
    return true;
}

static bool js_suspect(rd_t *rd, sw_jw_t *jw)
{
    int conf = 0;
    sw_jw_obj(jw);
    if (!js_long(rd, jw, "rank") || !js_long(rd, jw, "first_spike_timestamp_ns") ||
        !js_long(rd, jw, "aligned_first_spike_timestamp_ns") ||
        !js_long(rd, jw, "peak_delta_bytes") || !js_long(rd, jw, "spike_window_samples") ||
        !js_long(rd, jw, "lead_over_cluster_onset_ns"))
        return false;
    rd->field = "confidence";
    if (!rd_index(rd, 3, "enum", &conf)) return false;
    sw_jw_key(jw, "confidence");
    sw_jw_cstr(jw, sw_confidence_str((sw_confidence_t)conf));
    sw_jw_key(jw, "evidence");
    sw_jw_obj(jw);
    rd->prefix = "evidence.";
    if (!js_long(rd, jw, "device_used_delta_bytes") ||
        !js_long(rd, jw, "supporting_ranks_at_or_before_onset"))
        return false;
    rd->prefix = "";
    sw_jw_end_obj(jw);
    if (!js_phase_attr(rd, jw)) return false;
    bool set = false;
    rd->field = "timeline";
    if (!rd_opt(rd, &set)) return false;
    if (set) {
        sw_jw_key(jw, "timeline");
        sw_jw_obj(jw);
        rd->prefix = "timeline.";
        if (!js_long_array(rd, jw, "aligned_timestamp_ns") ||
            !js_long_array(rd, jw, "device_used_bytes") || !js_long(rd, jw, "window_samples") ||
            !js_long(rd, jw, "spike_start_index") || !js_long(rd, jw, "spike_index"))
            return false;
        rd->prefix = "";
        sw_jw_end_obj(jw);
    }
    /* Where it ran: written flat, all five, when the host is set. */
    bool has[5] = {false};
    sw_str_t strs[5] = {{0}};
    int64_t longs[5] = {0};
    static const char *const names[5] = {"host", "pid", "device_id", "local_rank", "session_id"};
    for (int i = 0; i < 5; i++) {
        rd->field = names[i];
        if (!rd_opt(rd, &has[i])) return false;
        if (!has[i]) continue;
        if (i == 0 || i == 4 ? !rd_str(rd, &strs[i]) : !rd_long(rd, &longs[i])) return false;
    }
    if (has[0]) {
        for (int i = 0; i < 5; i++) {
            sw_jw_key(jw, names[i]);
            if (!has[i]) sw_jw_null(jw);
            else if (i == 0 || i == 4) sw_jw_str(jw, strs[i]);
            else sw_jw_i64(jw, longs[i]);
        }
    }
    sw_jw_end_obj(jw);
    return true;
}

/* An array of suspects (Avro blocks) as the JSON array under the last name
 * of @p path ("first_cause_suspects" or "verdict.first_cause_suspects");
 * errors name the path and the item's index. */
static bool js_suspects(rd_t *rd, sw_jw_t *jw, const char *path)
{
    const char *dot = strrchr(path, '.');
    sw_jw_key(jw, dot ? dot + 1 : path);
    sw_jw_arr(jw);
    size_t idx = 0;
    for (;;) {
        int64_t n = 0;
        rd->outer = NULL;
        rd->field = path;
        if (!rd_block(rd, &n)) return false;
        if (n == 0) break;
        for (int64_t i = 0; i < n; i++, idx++) {
            rd->outer = path;
            rd->index = idx;
            if (!js_suspect(rd, jw)) return false;
        }
    }
    rd->outer = NULL;
    sw_jw_end_arr(jw);
    return true;
}

static bool rd_bool(rd_t *rd, bool *out)
{
    const unsigned char *at = rd->p;
    if (rd->p >= rd->end) return sw_avro_rd_truncated(rd, at, "a boolean");
    unsigned char c = *rd->p++;
    if (c > 1) {
        char nm[160];
        return sw_avro_rd_fail(rd, SW_ERR_AVRO,
                               "Avro: boolean byte %u at byte %zu in %s is not 0 or 1", (unsigned)c,
                               rd_off(rd, at), rd_name(rd, nm, sizeof(nm)));
    }
    *out = c == 1;
    return true;
}

/* Avro's optional long / string, read into (has, value). */
static bool rd_opt_long(rd_t *rd, const char *field, bool *has, int64_t *v)
{
    rd->field = field;
    *v = 0;
    return rd_opt(rd, has) && (!*has || rd_long(rd, v));
}

static bool rd_opt_str(rd_t *rd, const char *field, bool *has, sw_str_t *v)
{
    rd->field = field;
    *v = sw_str("");
    return rd_opt(rd, has) && (!*has || rd_str(rd, v));
}

static bool rd_long_f(rd_t *rd, const char *field, int64_t *v)
{
    rd->field = field;
    return rd_long(rd, v);
}

/* An array of longs into @p a (blocks, as Avro writes them). */
static bool rd_longs(rd_t *rd, const char *field, sw_arena_t *a, const int64_t **out, size_t *n)
{
    int64_t *v = NULL;
    size_t k = 0, cap = 0;
    rd->field = field;
    for (;;) {
        int64_t cnt = 0;
        if (!rd_block(rd, &cnt)) return false;
        if (cnt == 0) break;
        for (int64_t i = 0; i < cnt; i++) {
            if (k == cap) {
                size_t nc = cap ? cap * 2 : 16;
                int64_t *bigger = sw_arena_alloc(a, nc * sizeof(*bigger));
                if (k) memcpy(bigger, v, k * sizeof(*v));
                v = bigger;
                cap = nc;
            }
            if (!rd_long(rd, &v[k++])) return false;
        }
    }
    *out = v;
    *n = k;
    return true;
}

/* The blind_ranks and x8 fields, after episode_open. */
static bool rd_x8_tail(rd_t *rd, sw_arena_t *a, sw_record_t *rec, sw_x8_t *x, bool *has_x8)
{
    bool set = false;
    rd->field = "blind_ranks";
    if (!rd_opt(rd, &set)) return false;
    if (set && !rd_longs(rd, "blind_ranks", a, &rec->blind_ranks, &rec->n_blind)) return false;
    rd->field = "x8";
    if (!rd_opt(rd, has_x8)) return false;
    if (!*has_x8) return true;
    memset(x, 0, sizeof(*x));
    if (!rd_long_f(rd, "x8.number", &x->number)) return false;
    rd->field = "x8.open";
    if (!rd_bool(rd, &x->open)) return false;
    rd->field = "x8.first_death";
    if (!rd_opt(rd, &set)) return false;
    if (set) {
        sw_death_t *d = &x->first;
        sw_str_t cause;
        if (!rd_long_f(rd, "x8.first_death.rank", &d->rank)) return false;
        rd->field = "x8.first_death.cause";
        if (!rd_str(rd, &cause)) return false;
        d->cause = sw_str_eq(cause, sw_str("silent")) ? SW_DEATH_SILENT : SW_DEATH_OOM;
        rd->field = "x8.first_death.host";
        if (!rd_long_f(rd, "x8.first_death.timestamp_ns", &d->timestamp_ns) ||
            !rd_long_f(rd, "x8.first_death.aligned_timestamp_ns", &d->aligned_timestamp_ns))
            return false;
        rd->field = "x8.first_death.host";
        if (!rd_str(rd, &d->host) ||
            !rd_opt_long(rd, "x8.first_death.device_id", &d->has_device_id, &d->device_id) ||
            !rd_opt_long(rd, "x8.first_death.local_rank", &d->has_local_rank, &d->local_rank) ||
            !rd_long_f(rd, "x8.first_death.pid", &d->pid) ||
            !rd_opt_str(rd, "x8.first_death.session_id", &d->has_session, &d->session_id) ||
            !rd_opt_str(rd, "x8.first_death.oom_reason", &d->has_oom_reason, &d->oom_reason))
            return false;
    }
    if (!rd_long_f(rd, "x8.deaths", &x->deaths) ||
        !rd_longs(rd, "x8.dead_ranks", a, &x->dead_ranks, &x->n_dead))
        return false;
    sw_warn_rank_t *wr = NULL;
    size_t k = 0, cap = 0;
    for (;;) {
        int64_t cnt = 0;
        rd->field = "x8.ranks";
        if (!rd_block(rd, &cnt)) return false;
        if (cnt == 0) break;
        for (int64_t i = 0; i < cnt; i++) {
            if (k == cap) {
                size_t nc = cap ? cap * 2 : 16;
                sw_warn_rank_t *bigger = sw_arena_alloc(a, nc * sizeof(*bigger));
                if (k) memcpy(bigger, wr, k * sizeof(*wr));
                wr = bigger;
                cap = nc;
            }
            sw_warn_rank_t *w = &wr[k++];
            memset(w, 0, sizeof(*w));
            rd->field = "x8.ranks.host";
            if (!rd_long_f(rd, "x8.ranks.rank", &w->rank)) return false;
            rd->field = "x8.ranks.host";
            if (!rd_str(rd, &w->host) ||
                !rd_opt_long(rd, "x8.ranks.device_id", &w->has_device_id, &w->device_id) ||
                !rd_long_f(rd, "x8.ranks.used_bytes", &w->used_bytes) ||
                !rd_long_f(rd, "x8.ranks.total_bytes", &w->total_bytes) ||
                !rd_long_f(rd, "x8.ranks.headroom_bytes", &w->headroom_bytes) ||
                !rd_long_f(rd, "x8.ranks.rate_bytes_per_s", &w->rate_bytes_per_s) ||
                !rd_long_f(rd, "x8.ranks.eta_ms", &w->eta_ms))
                return false;
        }
    }
    x->wranks = wr;
    x->n_wranks = k;
    rd->field = "x8.storm";
    if (!rd_opt(rd, &x->storm.set)) return false;
    if (x->storm.set) {
        int64_t onset = 0;
        if (!rd_long_f(rd, "x8.storm.episode", &x->storm.episode)) return false;
        rd->field = "x8.storm.open";
        if (!rd_bool(rd, &x->storm.open) ||
            !rd_opt_long(rd, "x8.storm.first_cause_rank", &x->storm.has_rank,
                         &x->storm.first_cause_rank) ||
            !rd_opt_long(rd, "x8.storm.cluster_onset_timestamp_ns", &x->storm.has_onset, &onset))
            return false;
        x->storm.onset_ns = (uint64_t)onset;
    }
    if (!rd_long_f(rd, "x8.closed_warning", &x->closed_warning)) return false;
    /* The keys added in 0.4.0 end the record: a record written before them
     * (the same schema id without a registry) ends here and has none. */
    if (rd_left(rd) == 0) return true;
    rd->field = "x8.previous_first_death";
    if (!rd_opt(rd, &x->has_previous)) return false;
    if (x->has_previous &&
        (!rd_long_f(rd, "x8.previous_first_death.rank", &x->previous_rank) ||
         !rd_long_f(rd, "x8.previous_first_death.aligned_timestamp_ns", &x->previous_aligned_ns)))
        return false;
    set = false;
    sw_str_t end;
    if (!rd_opt_long(rd, "x8.deaths_total", &set, &x->deaths_total) ||
        !rd_opt_str(rd, "x8.closed_by", &set, &end))
        return false;
    x->end = set ? sw_x8_end_parse(end) : SW_X8_END_NONE;
    return rd_opt_long(rd, "x8.closed_by_crash", &set, &x->closed_by_crash);
}

/* A crash or warning record: the SPEC 6 fields are read and dropped, the
 * record is rebuilt and written as the JSON format writes it. */
static bool js_x8_record(rd_t *rd, sw_buf_t *json_out, int action)
{
    sw_arena_t a;
    sw_arena_init(&a);
    sw_buf_t junk;
    sw_buf_init(&junk);
    sw_jw_t jj;
    sw_jw_init(&jj, &junk, 0);
    sw_jw_obj(&jj);
    sw_record_t rec;
    memset(&rec, 0, sizeof(rec));
    rec.action = (sw_action_t)action;
    rec.resolve_rank = -1;
    rec.episode_confidence = -2;
    bool ok = false, set = false;
    sw_str_t job;
    if (!rd_opt_str(rd, "job_id", &rec.analysis.has_job_id, &job) ||
        !rd_long_f(rd, "episode", &rec.episode) || !rd_long_f(rd, "revision", &rec.revision) ||
        !rd_opt_long(rd, "event_timestamp_ns", &rec.has_event_ts, &rec.event_timestamp_ns))
        goto out;
    rec.analysis.job_id = sw_arena_str(&a, job);
    if (!js_long(rd, &jj, "world_size") || !js_long_array(rd, &jj, "participating_ranks") ||
        !js_long_array(rd, &jj, "missing_ranks") || !js_rank_map(rd, &jj, "rank_sample_counts") ||
        !js_rank_map(rd, &jj, "alignment_offsets_ns") ||
        !js_opt_long(rd, &jj, "cluster_onset_timestamp_ns"))
        goto out;
    for (size_t idx = 0;;) {
        int64_t n = 0;
        rd->outer = NULL;
        rd->field = "first_cause_suspects";
        if (!rd_block(rd, &n)) goto out;
        if (n == 0) break;
        sw_jw_key(&jj, "s");
        sw_jw_arr(&jj);
        for (int64_t i = 0; i < n; i++, idx++)
            if (!js_suspect(rd, &jj)) goto out;
        sw_jw_end_arr(&jj);
    }
    rd->outer = NULL;
    if (!js_str_array(rd, &jj, "notes", "notes") || !js_str(rd, &jj, "severity") ||
        !js_str(rd, &jj, "dedup_key") || !js_str(rd, &jj, "summary"))
        goto out;
    rd->field = "source";
    if (!rd_opt(rd, &set)) goto out;
    if (set) {
        int32_t partition = 0;
        sw_str_t topic;
        rd->field = "source.topic";
        if (!rd_str(rd, &topic)) goto out;
        rd->field = "source.partition";
        if (!rd_int(rd, &partition) || !rd_long_f(rd, "source.offset", &rec.source.offset))
            goto out;
        rec.source.set = true;
        rec.source.topic = sw_arena_str(&a, topic);
        rec.source.partition = partition;
    }
    bool h;
    int64_t lv;
    sw_str_t sv;
    if (!rd_opt_str(rd, "resolve_reason", &h, &sv) ||
        !rd_opt_long(rd, "resolve_lost_rank", &h, &lv))
        goto out;
    rd->field = "episode_open";
    if (!rd_opt(rd, &set)) goto out;
    if (set) {
        bool b;
        if (!rd_bool(rd, &b)) goto out;
    }
    /* SPEC 6's tie and verdict: read and dropped like the fields above. */
    rd->field = "tied_ranks";
    if (!rd_opt(rd, &set)) goto out;
    if (set && !js_long_array(rd, &jj, "tied_ranks")) goto out;
    rd->field = "verdict";
    if (!rd_opt(rd, &set)) goto out;
    if (set) {
        sw_avro_rd_fail(rd, SW_ERR_AVRO, "Avro: field verdict is set in a crash or warning record");
        goto out;
    }
    sw_x8_t *x = sw_arena_alloc(&a, sizeof(*x));
    bool has_x8 = false;
    if (!rd_x8_tail(rd, &a, &rec, x, &has_x8)) goto out;
    if (!has_x8) {
        rd->field = "x8";
        sw_avro_rd_fail(rd, SW_ERR_AVRO, "Avro: field x8 is null in a crash or warning record");
        goto out;
    }
    rec.x8 = x;
    if (!rd_done(rd)) goto out;
    sw_x8_json_record(json_out, &rec);
    ok = true;
out:
    sw_buf_clear(&junk);
    sw_arena_clear(&a);
    return ok;
}

static bool js_record(rd_t *rd, sw_jw_t *jw)
{
    int action = 0;
    bool set = false;
    rd->field = "action";
    if (!rd_index(rd, SW_ACTION_CNT, "enum", &action)) return false;
    if (sw_action_is_x8(action)) return js_x8_record(rd, jw->buf, action);
    sw_jw_obj(jw);
    sw_jw_key(jw, "action");
    sw_jw_cstr(jw, sw_action_str((sw_action_t)action));
    if (!js_opt_str(rd, jw, "job_id") || !js_long(rd, jw, "episode") ||
        !js_long(rd, jw, "revision") || !js_opt_long(rd, jw, "event_timestamp_ns") ||
        !js_long(rd, jw, "world_size") || !js_long_array(rd, jw, "participating_ranks") ||
        !js_long_array(rd, jw, "missing_ranks") || !js_rank_map(rd, jw, "rank_sample_counts") ||
        !js_rank_map(rd, jw, "alignment_offsets_ns") ||
        !js_opt_long(rd, jw, "cluster_onset_timestamp_ns"))
        return false;

    if (!js_suspects(rd, jw, "first_cause_suspects")) return false;

    if (!js_str_array(rd, jw, "notes", "notes") || !js_str(rd, jw, "severity") ||
        !js_str(rd, jw, "dedup_key") || !js_str(rd, jw, "summary"))
        return false;
    rd->field = "source";
    if (!rd_opt(rd, &set)) return false;
    if (set) {
        int32_t partition = 0;
        sw_jw_key(jw, "source");
        sw_jw_obj(jw);
        rd->prefix = "source.";
        if (!js_str(rd, jw, "topic")) return false;
        rd->field = "partition";
        if (!rd_int(rd, &partition)) return false;
        sw_jw_key(jw, "partition");
        sw_jw_i64(jw, partition);
        if (!js_long(rd, jw, "offset")) return false;
        rd->prefix = "";
        sw_jw_end_obj(jw);
    }
    /* Extra keys written only where they apply, as sw_alert_json_record. */
    sw_str_t reason = {0};
    int64_t lost = 0;
    rd->field = "resolve_reason";
    if (!rd_opt(rd, &set)) return false;
    if (set) {
        if (!rd_str(rd, &reason)) return false;
        sw_jw_key(jw, "resolve_reason");
        sw_jw_str(jw, reason);
    }
    rd->field = "resolve_lost_rank";
    if (!rd_opt(rd, &set)) return false;
    if (set) {
        if (!rd_long(rd, &lost)) return false;
        sw_jw_key(jw, "resolve_lost_rank");
        sw_jw_i64(jw, lost);
    }
    rd->field = "episode_open";
    if (!rd_opt(rd, &set)) return false;
    if (set) {
        bool open = false;
        if (!rd_bool(rd, &open)) return false;
        sw_jw_key(jw, "episode_open");
        sw_jw_bool(jw, open);
    }
    rd->field = "tied_ranks";
    if (!rd_opt(rd, &set)) return false;
    if (set && !js_long_array(rd, jw, "tied_ranks")) return false;
    rd->field = "verdict";
    if (!rd_opt(rd, &set)) return false;
    if (set) {
        sw_jw_key(jw, "verdict");
        sw_jw_obj(jw);
        rd->prefix = "verdict.";
        if (!js_long(rd, jw, "cluster_onset_timestamp_ns")) return false;
        rd->prefix = "";
        if (!js_suspects(rd, jw, "verdict.first_cause_suspects")) return false;
        sw_jw_end_obj(jw);
    }
    sw_arena_t a;
    sw_arena_init(&a);
    sw_record_t rec;
    memset(&rec, 0, sizeof(rec));
    sw_x8_t x;
    bool has_x8 = false;
    bool ok = rd_x8_tail(rd, &a, &rec, &x, &has_x8);
    if (ok && has_x8) {
        rd->field = "x8";
        sw_avro_rd_fail(rd, SW_ERR_AVRO, "Avro: field x8 is set in a SPEC 6 record");
        ok = false;
    }
    if (ok) sw_x8_json_blind(jw, &rec);
    sw_arena_clear(&a);
    if (!ok) return false;
    sw_jw_end_obj(jw);
    return rd_done(rd);
}

sw_err_t sw_avro_decode_record_json(const void *data, size_t len, int32_t expected_schema_id,
                                    sw_buf_t *json_out, char *errstr, size_t errstr_size)
{
    rd_t rd;
    sw_jw_t jw;
    size_t mark = json_out->len;
    rd_init(&rd, data, len, errstr, errstr_size);
    if (!rd_header(&rd, expected_schema_id)) return rd.err;
    sw_jw_init(&jw, json_out, 0);
    if (!js_record(&rd, &jw)) {
        json_out->len = mark;
        return rd.err;
    }
    return SW_OK;
}
