/*
 * SPEC 8 records as JSON (key order: the SPEC's, then stormwatch's extras:
 * severity, dedup_key, summary, source). The human line names the first
 * death or the rank closest to full, so a page reads on its own. No I/O.
 */
#include "sw_codec_x8.h"

#include <stdio.h>
#include <string.h>

static void put_job(sw_jw_t *jw, const sw_record_t *rec)
{
    sw_jw_key(jw, "job_id");
    if (rec->analysis.has_job_id) sw_jw_str(jw, rec->analysis.job_id);
    else sw_jw_null(jw);
}

static void put_opt(sw_jw_t *jw, const char *key, bool has, int64_t v)
{
    sw_jw_key(jw, key);
    if (has) sw_jw_i64(jw, v);
    else sw_jw_null(jw);
}

static void put_storm(sw_jw_t *jw, const sw_storm_ref_t *s)
{
    sw_jw_key(jw, "storm");
    if (!s->set) {
        sw_jw_null(jw);
        return;
    }
    sw_jw_obj(jw);
    sw_jw_key(jw, "episode");
    sw_jw_i64(jw, s->episode);
    sw_jw_key(jw, "open");
    sw_jw_bool(jw, s->open);
    put_opt(jw, "first_cause_rank", s->has_rank, s->first_cause_rank);
    sw_jw_key(jw, "cluster_onset_timestamp_ns");
    if (s->has_onset) sw_jw_u64(jw, s->onset_ns);
    else sw_jw_null(jw);
    sw_jw_end_obj(jw);
}

void sw_record_json_source(sw_jw_t *jw, const sw_record_t *rec)
{
    if (!rec->source.set) return;
    sw_jw_key(jw, "source");
    sw_jw_obj(jw);
    sw_jw_key(jw, "topic");
    sw_jw_str(jw, rec->source.topic);
    sw_jw_key(jw, "partition");
    sw_jw_i64(jw, rec->source.partition);
    sw_jw_key(jw, "offset");
    sw_jw_i64(jw, rec->source.offset);
    sw_jw_end_obj(jw);
}

void sw_x8_json_blind(sw_jw_t *jw, const sw_record_t *rec)
{
    if (!rec->n_blind) return;
    sw_jw_key(jw, "blind_ranks");
    sw_jw_arr(jw);
    for (size_t i = 0; i < rec->n_blind; i++) sw_jw_i64(jw, rec->blind_ranks[i]);
    sw_jw_end_arr(jw);
}

static void put_death(sw_jw_t *jw, const sw_death_t *d)
{
    sw_jw_key(jw, "first_death");
    sw_jw_obj(jw);
    sw_jw_key(jw, "rank");
    sw_jw_i64(jw, d->rank);
    sw_jw_key(jw, "cause");
    sw_jw_cstr(jw, d->cause == SW_DEATH_OOM ? "oom" : "silent");
    sw_jw_key(jw, "timestamp_ns");
    sw_jw_i64(jw, d->timestamp_ns);
    sw_jw_key(jw, "aligned_timestamp_ns");
    sw_jw_i64(jw, d->aligned_timestamp_ns);
    sw_jw_key(jw, "host");
    sw_jw_str(jw, d->host);
    put_opt(jw, "device_id", d->has_device_id, d->device_id);
    put_opt(jw, "local_rank", d->has_local_rank, d->local_rank);
    sw_jw_key(jw, "pid");
    sw_jw_i64(jw, d->pid);
    sw_jw_key(jw, "session_id");
    if (d->has_session) sw_jw_str(jw, d->session_id);
    else sw_jw_null(jw);
    sw_jw_key(jw, "oom_reason");
    if (d->has_oom_reason) sw_jw_str(jw, d->oom_reason);
    else sw_jw_null(jw);
    sw_jw_end_obj(jw);
}

const char *sw_x8_kind_str(const sw_record_t *rec)
{
    return rec->action == SW_ACTION_CRASH ? "crash" : "warning";
}

const char *sw_x8_severity(const sw_record_t *rec)
{
    if (rec->action == SW_ACTION_CRASH) return "critical";
    return rec->x8 && rec->x8->open ? "warning" : "info";
}

void sw_x8_dedup_key(const sw_record_t *rec, sw_buf_t *buf)
{
    sw_buf_puts(buf, "stormwatch/");
    if (rec->analysis.has_job_id)
        sw_buf_put(buf, rec->analysis.job_id.ptr, rec->analysis.job_id.len);
    else sw_buf_puts(buf, "<null>");
    sw_buf_putc(buf, '/');
    sw_buf_puts(buf, sw_x8_kind_str(rec));
    sw_buf_putc(buf, '/');
    sw_buf_put_i64(buf, rec->x8 ? rec->x8->number : rec->episode);
}

static void put_where(sw_buf_t *buf, int64_t rank, sw_str_t host, bool has_dev, int64_t dev)
{
    sw_buf_puts(buf, "rank ");
    sw_buf_put_i64(buf, rank);
    sw_buf_puts(buf, " on ");
    sw_buf_put(buf, host.ptr, host.len);
    if (has_dev) {
        sw_buf_puts(buf, " GPU ");
        sw_buf_put_i64(buf, dev);
    }
}

void sw_x8_summary(const sw_record_t *rec, sw_buf_t *buf)
{
    const sw_x8_t *x = rec->x8;
    sw_buf_puts(buf, rec->action == SW_ACTION_CRASH ? "CRASH job " : "WARNING job ");
    if (rec->analysis.has_job_id)
        sw_buf_put(buf, rec->analysis.job_id.ptr, rec->analysis.job_id.len);
    else sw_buf_puts(buf, "<null>");
    sw_buf_putc(buf, ' ');
    sw_buf_puts(buf, sw_x8_kind_str(rec));
    sw_buf_putc(buf, ' ');
    sw_buf_put_i64(buf, x ? x->number : rec->episode);
    sw_buf_puts(buf, ": ");
    if (!x) return;
    char tmp[96];
    if (rec->action == SW_ACTION_CRASH) {
        const sw_death_t *d = &x->first;
        put_where(buf, d->rank, d->host, d->has_device_id, d->device_id);
        sw_buf_puts(buf, d->cause == SW_DEATH_OOM ? " died first (out of memory"
                                                  : " died first (went silent");
        if (d->has_oom_reason && d->oom_reason.len) {
            sw_buf_puts(buf, ": ");
            size_t n = d->oom_reason.len;
            if (n > 120) {
                n = 120;
                while (n > 0 && ((unsigned char)d->oom_reason.ptr[n] & 0xc0) == 0x80) n--;
            }
            sw_buf_put(buf, d->oom_reason.ptr, n);
            if (n < d->oom_reason.len) sw_buf_puts(buf, "\xe2\x80\xa6");
        }
        snprintf(tmp, sizeof(tmp), "), %lld rank%s dead", (long long)x->deaths,
                 x->deaths == 1 ? "" : "s");
        sw_buf_puts(buf, tmp);
        if (x->storm.set && x->storm.has_rank) {
            snprintf(tmp, sizeof(tmp), "; storm episode %lld started on rank %lld",
                     (long long)x->storm.episode, (long long)x->storm.first_cause_rank);
            sw_buf_puts(buf, tmp);
        }
    } else if (!x->open) {
        sw_buf_puts(buf, "no rank is close to filling its GPU any more");
    } else if (x->n_wranks) {
        const sw_warn_rank_t *w = &x->wranks[0];
        put_where(buf, w->rank, w->host, w->has_device_id, w->device_id);
        snprintf(tmp, sizeof(tmp), " fills its GPU in %.0f s (%.1f%% used, +%.1f MiB/s)",
                 (double)w->eta_ms / 1000.0,
                 w->total_bytes > 0 ? 100.0 * (double)w->used_bytes / (double)w->total_bytes : 0,
                 (double)w->rate_bytes_per_s / 1048576.0);
        sw_buf_puts(buf, tmp);
        if (x->n_wranks > 1) {
            snprintf(tmp, sizeof(tmp), "; %zu ranks close to full", x->n_wranks);
            sw_buf_puts(buf, tmp);
        }
    }
    if (rec->n_blind) {
        snprintf(tmp, sizeof(tmp), "; %zu rank%s blind", rec->n_blind,
                 rec->n_blind == 1 ? "" : "s");
        sw_buf_puts(buf, tmp);
    }
}

void sw_x8_json_record(sw_buf_t *buf, const sw_record_t *rec)
{
    const sw_x8_t *x = rec->x8;
    sw_jw_t jw;
    sw_jw_init(&jw, buf, 0);
    sw_jw_obj(&jw);
    sw_jw_key(&jw, "action");
    sw_jw_cstr(&jw, sw_action_str(rec->action));
    put_job(&jw, rec);
    sw_jw_key(&jw, sw_x8_kind_str(rec));
    sw_jw_i64(&jw, x ? x->number : rec->episode);
    sw_jw_key(&jw, "revision");
    sw_jw_i64(&jw, rec->revision);
    sw_jw_key(&jw, "event_timestamp_ns");
    if (rec->has_event_ts) sw_jw_i64(&jw, rec->event_timestamp_ns);
    else sw_jw_null(&jw);
    if (x && rec->action == SW_ACTION_CRASH) {
        put_death(&jw, &x->first);
        sw_jw_key(&jw, "deaths");
        sw_jw_i64(&jw, x->deaths);
        sw_jw_key(&jw, "dead_ranks");
        sw_jw_arr(&jw);
        for (size_t i = 0; i < x->n_dead; i++) sw_jw_i64(&jw, x->dead_ranks[i]);
        sw_jw_end_arr(&jw);
    } else if (x) {
        sw_jw_key(&jw, "open");
        sw_jw_bool(&jw, x->open);
        sw_jw_key(&jw, "ranks");
        sw_jw_arr(&jw);
        for (size_t i = 0; i < x->n_wranks; i++) {
            const sw_warn_rank_t *w = &x->wranks[i];
            sw_jw_obj(&jw);
            sw_jw_key(&jw, "rank");
            sw_jw_i64(&jw, w->rank);
            sw_jw_key(&jw, "host");
            sw_jw_str(&jw, w->host);
            put_opt(&jw, "device_id", w->has_device_id, w->device_id);
            sw_jw_key(&jw, "used_bytes");
            sw_jw_i64(&jw, w->used_bytes);
            sw_jw_key(&jw, "total_bytes");
            sw_jw_i64(&jw, w->total_bytes);
            sw_jw_key(&jw, "headroom_bytes");
            sw_jw_i64(&jw, w->headroom_bytes);
            sw_jw_key(&jw, "rate_bytes_per_s");
            sw_jw_i64(&jw, w->rate_bytes_per_s);
            sw_jw_key(&jw, "eta_ms");
            sw_jw_i64(&jw, w->eta_ms);
            sw_jw_end_obj(&jw);
        }
        sw_jw_end_arr(&jw);
    }
    if (x) put_storm(&jw, &x->storm);
    sw_x8_json_blind(&jw, rec);
    if (x && x->closed_warning > 0) {
        sw_jw_key(&jw, "closed_warning");
        sw_jw_i64(&jw, x->closed_warning);
    }
    sw_jw_key(&jw, "severity");
    sw_jw_cstr(&jw, sw_x8_severity(rec));
    sw_buf_t tmp;
    sw_buf_init(&tmp);
    sw_x8_dedup_key(rec, &tmp);
    sw_jw_key(&jw, "dedup_key");
    sw_jw_str(&jw, (sw_str_t){tmp.data, tmp.len});
    tmp.len = 0;
    sw_x8_summary(rec, &tmp);
    sw_jw_key(&jw, "summary");
    sw_jw_str(&jw, (sw_str_t){tmp.data, tmp.len});
    sw_buf_clear(&tmp);
    sw_record_json_source(&jw, rec);
    sw_jw_end_obj(&jw);
}
