/*
 * Event -> TelemetryEvent v3 JSON (see sw_event_json.h). The contract is a
 * round trip: sw_tdec_json() of the output gives back the event, so every
 * value is written the way the decoder reads it, and the metadata text is
 * copied byte for byte whenever it already says what the event says (and
 * fits on one line). Allocates only when the metadata may hold a phase
 * scope or spans lines.
 */
#include "sw_event_json.h"

#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_jw.h"
#include "sw_json.h"

static void put_opt_i64(sw_jw_t *jw, const char *key, sw_opt_i64_t v)
{
    sw_jw_key(jw, key);
    if (v.set) sw_jw_i64(jw, v.value);
    else sw_jw_null(jw);
}

static void put_opt_str(sw_jw_t *jw, const char *key, bool set, sw_str_t s)
{
    sw_jw_key(jw, key);
    if (set) sw_jw_str(jw, s);
    else sw_jw_null(jw);
}

static bool str_eq(sw_str_t a, sw_str_t b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static bool phase_eq(const sw_phase_scope_t *a, const sw_phase_scope_t *b)
{
    if (a->enter != b->enter || !str_eq(a->name, b->name) || a->path_len != b->path_len ||
        !str_eq(a->scope_id, b->scope_id) || a->has_parent != b->has_parent ||
        a->thread_id != b->thread_id || !str_eq(a->thread_name, b->thread_name) ||
        a->sequence != b->sequence || a->has_depth != b->has_depth)
        return false;
    if (a->has_parent && !str_eq(a->parent_scope_id, b->parent_scope_id)) return false;
    if (a->has_depth && a->depth != b->depth) return false;
    for (int i = 0; i < a->path_len && i < SW_PHASE_PATH_MAX; i++)
        if (!str_eq(a->path[i], b->path[i])) return false;
    return true;
}

/* What the decoders make of ev's metadata text: *found when they see a
 * phase scope there, *same when that scope is ev's. Asks their own
 * metadata scanner, so the answer cannot drift from their rules. */
static void meta_phase(const sw_event_t *ev, bool *found, bool *same)
{
    char *scratch = sw_malloc(ev->metadata_json.len + 16);
    sw_phase_scope_t ps;
    *found = sw_json_text_phase(ev->metadata_json, scratch, &ps);
    *same = *found && ev->has_phase && phase_eq(&ps, &ev->phase);
    free(scratch);
}

static void put_phase_scope(sw_buf_t *out, const sw_phase_scope_t *ps)
{
    sw_jw_t jw;
    sw_jw_init(&jw, out, 0);
    sw_jw_obj(&jw);
    sw_jw_key(&jw, "action");
    sw_jw_cstr(&jw, ps->enter ? "enter" : "exit");
    sw_jw_key(&jw, "name");
    sw_jw_str(&jw, ps->name);
    sw_jw_key(&jw, "path");
    sw_jw_arr(&jw);
    for (int i = 0; i < ps->path_len && i < SW_PHASE_PATH_MAX; i++) sw_jw_str(&jw, ps->path[i]);
    sw_jw_end_arr(&jw);
    sw_jw_key(&jw, "depth");
    if (ps->has_depth) sw_jw_i64(&jw, ps->depth);
    else sw_jw_null(&jw);
    sw_jw_key(&jw, "scope_id");
    sw_jw_str(&jw, ps->scope_id);
    sw_jw_key(&jw, "parent_scope_id");
    if (ps->has_parent) sw_jw_str(&jw, ps->parent_scope_id);
    else sw_jw_null(&jw);
    sw_jw_key(&jw, "thread_id");
    sw_jw_i64(&jw, ps->thread_id);
    sw_jw_key(&jw, "thread_name");
    sw_jw_str(&jw, ps->thread_name);
    sw_jw_key(&jw, "sequence");
    sw_jw_i64(&jw, ps->sequence);
    sw_jw_end_obj(&jw);
}

/* The metadata object with its members copied as they are, except any
 * "phase_scope": replaced by the typed scope when the event has one, left
 * out when it has none. The text was validated by the decoder that filled
 * the event; should it not scan anyway, only the typed scope is kept. */
static void put_meta_rebuilt(sw_buf_t *out, const sw_event_t *ev)
{
    sw_buf_putc(out, '{');
    size_t n = sw_json_members_except(ev->metadata_json, "phase_scope", out);
    if (ev->has_phase) {
        if (n) sw_buf_put(out, ", ", 2);
        sw_buf_puts(out, "\"phase_scope\": ");
        put_phase_scope(out, &ev->phase);
    }
    sw_buf_putc(out, '}');
}

/* The metadata value: the event's text when the decoder reads the same
 * phase scope (or none) from it, else rebuilt; line breaks (whitespace
 * between tokens: JSON strings cannot hold them raw) become spaces. */
static void put_metadata(sw_jw_t *jw, const sw_event_t *ev)
{
    bool found = false, same = false;
    if (ev->has_phase || sw_json_may_have_phase(ev->metadata_json)) meta_phase(ev, &found, &same);
    bool rebuild = ev->has_phase ? !same : found;
    sw_str_t text = ev->metadata_json.len ? ev->metadata_json : sw_str("{}");
    if (!rebuild && !memchr(text.ptr, '\n', text.len) && !memchr(text.ptr, '\r', text.len)) {
        sw_jw_raw(jw, text);
        return;
    }
    sw_buf_t meta;
    sw_buf_init(&meta);
    if (rebuild) put_meta_rebuilt(&meta, ev);
    else sw_buf_put(&meta, text.ptr, text.len);
    for (size_t i = 0; i < meta.len; i++)
        if (meta.data[i] == '\n' || meta.data[i] == '\r') meta.data[i] = ' ';
    sw_jw_raw(jw, (sw_str_t){meta.data, meta.len});
    sw_buf_clear(&meta);
}

void sw_event_json(sw_buf_t *buf, const sw_event_t *ev)
{
    sw_jw_t jw;
    sw_jw_init(&jw, buf, 0);
    sw_jw_obj(&jw);
    put_opt_i64(&jw, "schema_version", ev->schema_version);
    sw_jw_key(&jw, "timestamp_ns");
    sw_jw_i64(&jw, ev->timestamp_ns);
    sw_jw_key(&jw, "event_type");
    sw_jw_str(&jw, ev->event_type);
    put_opt_str(&jw, "collector", ev->collector.set, ev->collector.value);
    sw_jw_key(&jw, "sampling_interval_ms");
    sw_jw_i64(&jw, ev->sampling_interval_ms);
    sw_jw_key(&jw, "pid");
    sw_jw_i64(&jw, ev->pid);
    sw_jw_key(&jw, "host");
    sw_jw_str(&jw, ev->host);
    put_opt_i64(&jw, "device_id", ev->device_id);
    put_opt_i64(&jw, "allocator_allocated_bytes", ev->allocator_allocated_bytes);
    put_opt_i64(&jw, "allocator_reserved_bytes", ev->allocator_reserved_bytes);
    put_opt_i64(&jw, "allocator_active_bytes", ev->allocator_active_bytes);
    put_opt_i64(&jw, "allocator_inactive_bytes", ev->allocator_inactive_bytes);
    put_opt_i64(&jw, "allocator_change_bytes", ev->allocator_change_bytes);
    /* Absent stays absent: null is a valid device_used_bytes only for a
     * v4 sample whose backend lacks the counter. */
    if (ev->has_device_used) {
        sw_jw_key(&jw, "device_used_bytes");
        sw_jw_i64(&jw, ev->device_used_bytes);
    } else if (ev->counterless) {
        sw_jw_key(&jw, "device_used_bytes");
        sw_jw_null(&jw);
    }
    put_opt_i64(&jw, "device_free_bytes", ev->device_free_bytes);
    put_opt_i64(&jw, "device_total_bytes", ev->device_total_bytes);
    put_opt_str(&jw, "context", ev->context.set, ev->context.value);
    sw_jw_key(&jw, "metadata");
    put_metadata(&jw, ev);
    put_opt_str(&jw, "job_id", ev->has_job_id, ev->job_id);
    sw_jw_key(&jw, "rank");
    sw_jw_i64(&jw, ev->rank);
    put_opt_i64(&jw, "local_rank", ev->local_rank);
    sw_jw_key(&jw, "world_size");
    sw_jw_i64(&jw, ev->world_size);
    put_opt_str(&jw, "session_id", ev->has_session_id, ev->session_id);
    sw_jw_end_obj(&jw);
}
