/* The helpers of json_render.h. */
#include "json_render.h"

void end_test(void)
{
    SW_CHECK_END();
}

/* ---- rendering a decoded event as JSON ---------------------------------- */

json_t *jstr(sw_str_t s)
{
    /* nocheck: lone surrogates are kept as WTF-8 bytes by the decoder */
    return json_stringn_nocheck(s.ptr ? s.ptr : "", s.len);
}

json_t *jopt_i64(sw_opt_i64_t o)
{
    return o.set ? json_integer(o.value) : json_null();
}

json_t *jopt_str(sw_opt_str_t o)
{
    return o.set ? jstr(o.value) : json_null();
}

const char *kind_name(sw_ev_kind_t k)
{
    switch (k) {
    case SW_EV_SAMPLE: return "sample";
    case SW_EV_PHASE_ENTER: return "phase_enter";
    case SW_EV_PHASE_EXIT: return "phase_exit";
    case SW_EV_OTHER: break;
    }
    return "other";
}

/* Every field of the event, plus sw_phase_boundary_ok(). */
json_t *render_event(const sw_event_t *ev)
{
    json_t *o = json_object();
    json_object_set_new(o, "timestamp_ns", json_integer(ev->timestamp_ns));
    json_object_set_new(o, "event_type", jstr(ev->event_type));
    json_object_set_new(o, "kind", json_string(kind_name(ev->kind)));
    json_object_set_new(o, "rank", json_integer(ev->rank));
    json_object_set_new(o, "world_size", json_integer(ev->world_size));
    json_object_set_new(o, "job_id", ev->has_job_id ? jstr(ev->job_id) : json_null());
    json_object_set_new(o, "session_id", ev->has_session_id ? jstr(ev->session_id) : json_null());
    json_object_set_new(o, "pid", json_integer(ev->pid));
    json_object_set_new(o, "host", jstr(ev->host));
    json_object_set_new(o, "device_used_bytes",
                        ev->has_device_used ? json_integer(ev->device_used_bytes) : json_null());
    json_object_set_new(o, "counterless", json_boolean(ev->counterless));
    json_object_set_new(o, "sampling_interval_ms", json_integer(ev->sampling_interval_ms));
    json_object_set_new(o, "metadata", jstr(ev->metadata_json));
    if (ev->has_phase) {
        const sw_phase_scope_t *ps = &ev->phase;
        json_t *p = json_object();
        json_object_set_new(p, "action", json_string(ps->enter ? "enter" : "exit"));
        json_object_set_new(p, "name", jstr(ps->name));
        json_t *path = json_array();
        for (int i = 0; i < ps->path_len; i++) json_array_append_new(path, jstr(ps->path[i]));
        json_object_set_new(p, "path", path);
        json_object_set_new(p, "scope_id", jstr(ps->scope_id));
        json_object_set_new(p, "parent_scope_id",
                            ps->has_parent ? jstr(ps->parent_scope_id) : json_null());
        json_object_set_new(p, "thread_id", json_integer(ps->thread_id));
        json_object_set_new(p, "thread_name", jstr(ps->thread_name));
        json_object_set_new(p, "sequence", json_integer(ps->sequence));
        json_object_set_new(p, "depth", ps->has_depth ? json_integer(ps->depth) : json_null());
        json_object_set_new(o, "phase", p);
    } else {
        json_object_set_new(o, "phase", json_null());
    }
    json_object_set_new(o, "boundary_ok", json_boolean(sw_phase_boundary_ok(ev)));
    json_object_set_new(o, "schema_version", jopt_i64(ev->schema_version));
    json_object_set_new(o, "device_id", jopt_i64(ev->device_id));
    json_object_set_new(o, "local_rank", jopt_i64(ev->local_rank));
    json_object_set_new(o, "allocator_allocated_bytes", jopt_i64(ev->allocator_allocated_bytes));
    json_object_set_new(o, "allocator_reserved_bytes", jopt_i64(ev->allocator_reserved_bytes));
    json_object_set_new(o, "allocator_active_bytes", jopt_i64(ev->allocator_active_bytes));
    json_object_set_new(o, "allocator_inactive_bytes", jopt_i64(ev->allocator_inactive_bytes));
    json_object_set_new(o, "allocator_change_bytes", jopt_i64(ev->allocator_change_bytes));
    json_object_set_new(o, "device_free_bytes", jopt_i64(ev->device_free_bytes));
    json_object_set_new(o, "device_total_bytes", jopt_i64(ev->device_total_bytes));
    json_object_set_new(o, "collector", jopt_str(ev->collector));
    json_object_set_new(o, "context", jopt_str(ev->context));
    return o;
}

/* Compare the rendered event with the expected fields (a subset: keys
 * the expectation omits are not checked). */
void check_fields(const char *file, int line, const sw_event_t *ev, const char *want_text)
{
    json_error_t jerr;
    json_t *want = json_loads(want_text, 0, &jerr);
    if (!want) {
        sw_check_report_(file, line, NULL, "expectation is not JSON: %s", jerr.text);
        return;
    }
    json_t *got = render_event(ev);
    char why[1024];
    if (!sw_test_json_equal(got, want, true, why, sizeof(why))) {
        char *all = json_dumps(got, JSON_COMPACT);
        sw_check_report_(file, line, "decoded event == expected fields",
                         "%s (got != expected)\n  decoded: %s", why, all ? all : "?");
        free(all);
    }
    json_decref(got);
    json_decref(want);
}

/* ---- fast path == general path -------------------------------------------- */

/* Decode @p line with @p fast (fast path on) and @p slow (off) and check
 * that code, message and event agree. @returns the fast decoder's code. */
sw_err_t check_same(const char *file, int line, sw_tdec_t *fast, sw_tdec_t *slow, const char *text,
                    size_t len)
{
    sw_event_t ev_f, ev_s;
    char err_f[512] = "", err_s[512] = "";
    sw_err_t rc_f = sw_tdec_json(fast, text, len, &ev_f, err_f, sizeof(err_f));
    sw_err_t rc_s = sw_tdec_json(slow, text, len, &ev_s, err_s, sizeof(err_s));
    if (rc_f != rc_s || (rc_f != SW_OK && strcmp(err_f, err_s) != 0)) {
        sw_check_report_(file, line, "fast path == general path",
                         "fast %d \"%s\", general %d \"%s\"\n  line: %.*s", (int)rc_f, err_f,
                         (int)rc_s, err_s, (int)(len > 300 ? 300 : len), text);
        return rc_f;
    }
    if (rc_f == SW_OK) {
        json_t *a = render_event(&ev_f), *b = render_event(&ev_s);
        char why[1024];
        if (!sw_test_json_equal(a, b, false, why, sizeof(why))) {
            sw_check_report_(file, line, "fast event == general event", "%s\n  line: %.*s", why,
                             (int)(len > 300 ? 300 : len), text);
        }
        json_decref(a);
        json_decref(b);
    }
    return rc_f;
}
