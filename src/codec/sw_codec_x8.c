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
    if (rec->action == SW_ACTION_CRASH) return !rec->x8 || rec->x8->open ? "critical" : "info";
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

void sw_x8_time(sw_buf_t *buf, int64_t ns)
{
    /* RFC 3339 with nanoseconds, cut to milliseconds: "...T01:02:03.456Z". */
    size_t start = buf->len;
    sw_buf_put_rfc3339(buf, ns);
    if (buf->len - start >= 11 && buf->data[buf->len - 11] == '.') {
        buf->len -= 6; /* ".123456789Z" -> ".1234", then its last digit -> 'Z' */
        buf->data[buf->len - 1] = 'Z';
    }
}

void sw_x8_gap(sw_buf_t *buf, int64_t ns)
{
    char tmp[48];
    int64_t a = ns < 0 ? -ns : ns;
    if (a >= INT64_C(1000000000)) snprintf(tmp, sizeof(tmp), "%.1f s", (double)ns / 1e9);
    else snprintf(tmp, sizeof(tmp), "%.0f ms", (double)ns / 1e6);
    sw_buf_puts(buf, tmp);
}

void sw_x8_blind_text(const sw_record_t *rec, sw_buf_t *buf)
{
    if (!rec->n_blind) return;
    sw_buf_puts(buf, rec->n_blind == 1 ? "; blind (collector degraded or silent): rank "
                                       : "; blind (collector degraded or silent): ranks ");
    size_t shown = rec->n_blind < 8 ? rec->n_blind : 8;
    for (size_t i = 0; i < shown; i++) {
        if (i) sw_buf_puts(buf, ", ");
        sw_buf_put_i64(buf, rec->blind_ranks[i]);
    }
    if (rec->n_blind > shown) sw_buf_printf(buf, " and %zu more", rec->n_blind - shown);
}

/* "rank 5 on node-1 GPU 5 died first (out of memory: reason) at <time>" */
static void first_death_text(const sw_death_t *d, bool named, sw_buf_t *buf)
{
    if (!named) {
        put_where(buf, d->rank, d->host, d->has_device_id, d->device_id);
        sw_buf_puts(buf, " died first");
    }
    sw_buf_puts(buf, d->cause == SW_DEATH_OOM ? " (out of memory" : " (went silent");
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
    sw_buf_puts(buf, ") at ");
    sw_x8_time(buf, d->timestamp_ns);
}

static void crash_text(const sw_record_t *rec, const sw_x8_t *x, sw_buf_t *buf)
{
    const sw_death_t *d = &x->first;
    if (!x->open) {
        sw_buf_puts(buf, x->end == SW_X8_END_ALIVE ? "over, every dead rank is alive again; "
                         : x->end == SW_X8_END_JOB ? "over, the job was summarised (input ended "
                                                     "or job idle); "
                                                   : "over; ");
        sw_buf_puts(buf, "final answer: ");
    } else if (x->has_previous) {
        sw_buf_puts(buf, "first death revised: ");
        put_where(buf, d->rank, d->host, d->has_device_id, d->device_id);
        sw_buf_puts(buf, " died ");
        sw_x8_gap(buf, x->previous_aligned_ns - d->aligned_timestamp_ns);
        sw_buf_printf(buf, " before rank %lld, which was named first", (long long)x->previous_rank);
    } else if (rec->revision > 0 && x->open) {
        sw_buf_puts(buf, "first death revised: ");
    }
    first_death_text(d, x->open && x->has_previous, buf);
    if (x->open || x->end != SW_X8_END_ALIVE)
        sw_buf_printf(buf, "; %lld rank%s dead", (long long)x->deaths, x->deaths == 1 ? "" : "s");
    if (!x->open && x->deaths_total > 0)
        sw_buf_printf(buf, "; %lld death%s in this crash", (long long)x->deaths_total,
                      x->deaths_total == 1 ? "" : "s");
    if (x->storm.set && x->storm.has_rank)
        sw_buf_printf(buf, "; storm episode %lld started on rank %lld", (long long)x->storm.episode,
                      (long long)x->storm.first_cause_rank);
    if (x->closed_warning > 0)
        sw_buf_printf(buf, "; it closes warning %lld", (long long)x->closed_warning);
}

static void warning_text(const sw_x8_t *x, sw_buf_t *buf)
{
    if (!x->open) {
        if (x->end == SW_X8_END_CRASH && x->closed_by_crash > 0)
            sw_buf_printf(buf, "closed, crash %lld opened (a rank died)",
                          (long long)x->closed_by_crash);
        else if (x->end == SW_X8_END_JOB)
            sw_buf_puts(buf, "closed, the job was summarised (input ended or job idle)");
        else sw_buf_puts(buf, "no rank is close to filling its GPU any more");
        return;
    }
    if (!x->n_wranks) return;
    const sw_warn_rank_t *w = &x->wranks[0];
    put_where(buf, w->rank, w->host, w->has_device_id, w->device_id);
    sw_buf_puts(buf, " fills its GPU in ");
    sw_x8_gap(buf, w->eta_ms * INT64_C(1000000));
    sw_buf_printf(buf, " (%.1f%% used, +%.1f MiB/s)",
                  w->total_bytes > 0 ? 100.0 * (double)w->used_bytes / (double)w->total_bytes : 0,
                  (double)w->rate_bytes_per_s / 1048576.0);
    if (x->n_wranks > 1) sw_buf_printf(buf, "; %zu ranks close to full", x->n_wranks);
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
    if (rec->action == SW_ACTION_CRASH) crash_text(rec, x, buf);
    else warning_text(x, buf);
    sw_x8_blind_text(rec, buf);
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
        sw_jw_key(&jw, "open");
        sw_jw_bool(&jw, x->open);
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
    if (x && x->has_previous) {
        /* A revision: the first death it replaces. */
        sw_jw_key(&jw, "previous_first_death");
        sw_jw_obj(&jw);
        sw_jw_key(&jw, "rank");
        sw_jw_i64(&jw, x->previous_rank);
        sw_jw_key(&jw, "aligned_timestamp_ns");
        sw_jw_i64(&jw, x->previous_aligned_ns);
        sw_jw_end_obj(&jw);
    }
    if (x && rec->action == SW_ACTION_CRASH && x->deaths_total > 0) {
        sw_jw_key(&jw, "deaths_total");
        sw_jw_i64(&jw, x->deaths_total);
    }
    if (x && !x->open && x->end != SW_X8_END_NONE) {
        sw_jw_key(&jw, "closed_by");
        sw_jw_cstr(&jw, sw_x8_end_str(x->end, rec->action == SW_ACTION_CRASH));
    }
    if (x && x->closed_by_crash > 0) {
        sw_jw_key(&jw, "closed_by_crash");
        sw_jw_i64(&jw, x->closed_by_crash);
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
