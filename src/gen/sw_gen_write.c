/*
 * The generator's writer (see sw_gen_int.h): one produced event as a
 * TelemetryEvent JSON line (schema 3, or 4 without the allocator counters)
 * written in place, and the ground-truth lines of storms and of the other
 * cases. Formats only: decides nothing about the values.
 */
#include "sw_gen_int.h"

#include <string.h>

/* ---- formatting ---------------------------------------------------------- */

static const char dig2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static inline int dec_digits(uint64_t v)
{
    int n = 1;
    while (v >= 10000) {
        v /= 10000;
        n += 4;
    }
    return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* Digits written in place from the end, two at a time. */
static inline char *put_u64(char *p, uint64_t v)
{
    char *e = p + dec_digits(v), *q = e;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        q -= 2;
        q[0] = dig2[d];
        q[1] = dig2[d + 1];
    }
    if (v >= 10) {
        q[-2] = dig2[v * 2];
        q[-1] = dig2[v * 2 + 1];
    } else {
        q[-1] = (char)('0' + v);
    }
    return e;
}

static inline char *put_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

#define PUT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) += sizeof(lit) - 1)

/* Longest line without the job id: literals ~700 bytes plus 20 integers. */
#define LINE_MAX_BYTES 1400

static char *put_phase_meta(char *p, const grank_t *rk, const gev_t *ev)
{
    bool enter = ev->kind == GK_FWD_ENTER || ev->kind == GK_BWD_ENTER;
    bool fwd = ev->kind == GK_FWD_ENTER || ev->kind == GK_FWD_EXIT;
    PUT(p, "{\"phase_scope\": {\"action\": \"");
    if (enter) PUT(p, "enter");
    else PUT(p, "exit");
    if (fwd) PUT(p, "\", \"name\": \"forward\", \"path\": [\"train\", \"forward\"]");
    else PUT(p, "\", \"name\": \"backward\", \"path\": [\"train\", \"backward\"]");
    PUT(p, ", \"depth\": 2, \"scope_id\": \"s-");
    p = put_u64(p, (uint64_t)rk->job);
    *p++ = '-';
    p = put_u64(p, (uint64_t)rk->rank);
    *p++ = '-';
    p = put_u64(p, (uint64_t)ev->step);
    if (fwd) PUT(p, "-fwd");
    else PUT(p, "-bwd");
    PUT(p,
        "\", \"parent_scope_id\": null, \"thread_id\": 1, \"thread_name\": \"MainThread\", "
        "\"sequence\": ");
    p = put_i64(p, ev->seq);
    PUT(p, "}}");
    return p;
}

void sw_gen_format_event(const sw_gen_t *gen, const grank_t *rk, const gev_t *ev, sw_buf_t *out)
{
    sw_buf_reserve(out, LINE_MAX_BYTES + gen->max_job_id_len);
    char *p = out->data + out->len;
    const int64_t ranks = gen->opts.ranks;
    int64_t local = rk->rank % 8;
    int64_t host = (int64_t)rk->job * gen->hosts_per_job + rk->rank / 8;
    if (gen->opts.fleet_hosts > 0) {
        int64_t bad_slot = gen->opts.storms > 0 ? gen->truth[rk->job * gen->opts.storms].rank / 8
                                                : 0;
        host = sw_gen_fleet_host(rk->job, rk->rank / 8, gen->hosts_per_job, gen->opts.fleet_hosts,
                                 gen->opts.bad_host, bad_slot);
    }
    bool v4 = gen->opts.schema_version >= 4;
    PUT(p, "{\"schema_version\": ");
    p = put_i64(p, gen->opts.schema_version);
    PUT(p, ", \"timestamp_ns\": ");
    p = put_i64(p, ev->ts_ns);
    switch ((gkind_t)ev->kind) {
    case GK_SAMPLE: PUT(p, ", \"event_type\": \"sample\""); break;
    case GK_FWD_ENTER:
    case GK_BWD_ENTER: PUT(p, ", \"event_type\": \"phase_enter\""); break;
    case GK_FWD_EXIT:
    case GK_BWD_EXIT: PUT(p, ", \"event_type\": \"phase_exit\""); break;
    }
    PUT(p, ", \"collector\": \"stormlog.cuda_tracker\", \"sampling_interval_ms\": ");
    p = put_i64(p, gen->opts.interval_ms);
    PUT(p, ", \"pid\": ");
    p = put_i64(p, PID_BASE + (int64_t)rk->job * ranks + rk->rank + ev->inc * INC_PID_STEP);
    PUT(p, ", \"host\": \"node-");
    if (host < 100) *p++ = '0';
    if (host < 10) *p++ = '0';
    p = put_i64(p, host);
    PUT(p, "\", \"device_id\": ");
    p = put_i64(p, local);
    if (v4) {
        /* A v4 backend that reads device memory only (NVML), no allocator. */
        PUT(p,
            ", \"allocator_allocated_bytes\": null, \"allocator_reserved_bytes\": null, "
            "\"allocator_active_bytes\": null, \"allocator_inactive_bytes\": null, "
            "\"allocator_change_bytes\": null");
    } else {
        PUT(p, ", \"allocator_allocated_bytes\": ");
        p = put_i64(p, ev->allocated);
        PUT(p, ", \"allocator_reserved_bytes\": ");
        p = put_i64(p, ev->reserved);
        PUT(p,
            ", \"allocator_active_bytes\": null, \"allocator_inactive_bytes\": null, "
            "\"allocator_change_bytes\": ");
        p = put_i64(p, ev->change);
    }
    PUT(p, ", \"device_used_bytes\": ");
    p = put_i64(p, ev->used);
    PUT(p, ", \"device_free_bytes\": ");
    p = put_i64(p, SW_GEN_DEVICE_TOTAL_BYTES - ev->used);
    PUT(p, ", \"device_total_bytes\": ");
    p = put_i64(p, SW_GEN_DEVICE_TOTAL_BYTES);
    PUT(p, ", \"context\": null, \"metadata\": ");
    if (ev->kind != GK_SAMPLE) p = put_phase_meta(p, rk, ev);
    else if (!v4) PUT(p, "{}");
    else
        PUT(p,
            "{\"memory_capabilities\": {\"backend\": \"cuda\", \"telemetry_collector\": "
            "\"stormlog.tracker\", \"sampling_source\": \"nvml\", "
            "\"supports_allocator_allocated\": false, \"supports_allocator_reserved\": false, "
            "\"supports_allocator_active\": false, \"supports_allocator_inactive\": false, "
            "\"supports_device_used\": true, \"supports_device_free\": true, "
            "\"supports_device_total\": true}}");
    PUT(p, ", \"job_id\": \"");
    size_t jl = gen->job_id_len[rk->job];
    memcpy(p, gen->job_ids[rk->job], jl);
    p += jl;
    PUT(p, "\", \"rank\": ");
    p = put_i64(p, rk->rank);
    PUT(p, ", \"local_rank\": ");
    p = put_i64(p, local);
    PUT(p, ", \"world_size\": ");
    p = put_i64(p, ranks);
    PUT(p, ", \"session_id\": \"sess-");
    p = put_i64(p, rk->job);
    *p++ = '-';
    p = put_i64(p, rk->rank);
    if (ev->inc) PUT(p, "-r1");
    PUT(p, "\"}\n");
    out->len = (size_t)(p - out->data);
}

void sw_gen_other_json(const sw_gen_other_t *o, sw_buf_t *out)
{
    sw_buf_puts(out, o->kind == SW_GEN_LEAK ? "{\"kind\": \"leak\"" : "{\"kind\": \"restart\"");
    sw_buf_puts(out, ", \"job_id\": \"");
    sw_buf_puts(out, o->job_id);
    sw_buf_puts(out, "\", \"rank\": ");
    sw_buf_put_i64(out, o->rank);
    sw_buf_puts(out, ", \"start_timestamp_ns\": ");
    sw_buf_put_i64(out, o->start_timestamp_ns);
    sw_buf_puts(out, ", \"end_timestamp_ns\": ");
    sw_buf_put_i64(out, o->end_timestamp_ns);
    sw_buf_puts(out, "}\n");
}

void sw_gen_truth_json(const sw_gen_storm_t *storm, sw_buf_t *out)
{
    /* Job ids are printable ASCII without '"' or '\\' (checked by sw_gen_new). */
    sw_buf_puts(out, "{\"job_id\": \"");
    sw_buf_puts(out, storm->job_id);
    sw_buf_puts(out, "\", \"storm\": ");
    sw_buf_put_i64(out, storm->storm);
    sw_buf_puts(out, ", \"rank\": ");
    sw_buf_put_i64(out, storm->rank);
    sw_buf_puts(out, ", \"onset_timestamp_ns\": ");
    sw_buf_put_i64(out, storm->onset_timestamp_ns);
    sw_buf_puts(out, ", \"first_hit_rank\": ");
    if (storm->first_hit_rank < 0) sw_buf_puts(out, "null");
    else sw_buf_put_i64(out, storm->first_hit_rank);
    sw_buf_puts(out, ", \"first_hit_timestamp_ns\": ");
    if (storm->first_hit_rank < 0) sw_buf_puts(out, "null");
    else sw_buf_put_i64(out, storm->first_hit_timestamp_ns);
    if (storm->tie_ranks > 1) {
        sw_buf_puts(out, ", \"tie_ranks\": ");
        sw_buf_put_i64(out, storm->tie_ranks);
    }
    sw_buf_puts(out, "}\n");
}
