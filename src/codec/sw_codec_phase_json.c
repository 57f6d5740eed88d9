/*
 * metadata.phase_scope (SPEC 2) in JSON: read from a telemetry line's
 * metadata object (sw_json_metadata_phase, used by the telemetry decoder) or
 * from the metadata text an Avro event carries (sw_json_may_have_phase,
 * sw_json_text_phase). Declared in sw_json.h. No I/O.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sw_json.h"

enum ps_field_e {
    P_ACTION,
    P_NAME,
    P_PATH,
    P_SCOPE_ID,
    P_PARENT_SCOPE_ID,
    P_THREAD_ID,
    P_THREAD_NAME,
    P_SEQUENCE,
    P_DEPTH,
    P__CNT
};

/* A hand-laid table (clang-format 14 boxes its initializer macro). */
// clang-format off
static const struct {
    char name[16]; /* zero-padded for word compares */
    size_t len;
} k_ps_fields[P__CNT] = {
#define FLD(s) {s, sizeof(s) - 1}
    FLD("action"), FLD("name"), FLD("path"), FLD("scope_id"), FLD("parent_scope_id"),
    FLD("thread_id"), FLD("thread_name"), FLD("sequence"), FLD("depth"),
#undef FLD
};
// clang-format on

static int ps_field_id(sw_str_t k)
{
    /* One candidate by length and first bytes, then one compare. */
    int id;
    switch (k.len) {
    case 4: id = k.ptr[0] == 'n' ? P_NAME : P_PATH; break;
    case 5: id = P_DEPTH; break;
    case 6: id = P_ACTION; break;
    case 8: id = k.ptr[1] == 'c' ? P_SCOPE_ID : P_SEQUENCE; break;
    case 9: id = P_THREAD_ID; break;
    case 11: id = P_THREAD_NAME; break;
    case 15: id = P_PARENT_SCOPE_ID; break;
    default: return -1;
    }
    /* Two overlapping words cover the 4-15 bytes. */
    const char *a = k_ps_fields[id].name, *b = k.ptr;
    size_t n = k.len;
    if (n >= 8) {
        uint64_t x, y, x2, y2;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        memcpy(&x2, a + n - 8, 8);
        memcpy(&y2, b + n - 8, 8);
        return x == y && x2 == y2 ? id : -1;
    }
    uint32_t x, y, x2, y2;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    memcpy(&x2, a + n - 4, 4);
    memcpy(&y2, b + n - 4, 4);
    return x == y && x2 == y2 ? id : -1;
}

/* A string without escapes or non-ASCII bytes at the cursor, as
 * sw_jscan_string() reads it. @returns false, the cursor unchanged, for
 * anything else (then sw_jscan_string() decides). */
static inline bool plain_string(sw_jscan_t *js, sw_str_t *out)
{
    const char *p = js->p;
    if (p >= js->end || *p != '"') return false;
    const char *q = sw_json_skip_plain(p + 1, js->end);
    if (q >= js->end || *q != '"') return false;
    out->ptr = p + 1;
    out->len = (size_t)(q - p - 1);
    js->p = q + 1;
    return true;
}

/* An object key and its ':', as sw_jscan_string() and sw_jscan_expect()
 * read them. */
static inline bool scan_key(sw_jscan_t *js, sw_str_t *key)
{
    if (!plain_string(js, key) && !sw_jscan_string(js, key)) return false;
    if (js->p < js->end && *js->p == ':') {
        js->p++;
        return true;
    }
    return sw_jscan_expect(js, ':', "expected ':' after object key");
}

/* sw_jscan_value() with a plain string and an integer inline. */
static inline bool scan_value(sw_jscan_t *js, sw_jval_t *v, int depth)
{
    sw_jscan_ws(js);
    const char *p = js->p;
    if (p < js->end && *p == '"') {
        if (plain_string(js, &v->s)) {
            v->type = SW_J_STRING;
            v->raw = p;
            v->raw_len = (size_t)(js->p - p);
            return true;
        }
    } else if (sw_jscan_int_fast(js, v)) {
        return true;
    }
    return sw_jscan_value(js, v, depth);
}

static void ps_take(sw_phase_scope_t *ps, int id, const sw_jval_t *v, bool *typed)
{
    switch (id) {
    case P_ACTION:
        if (v->type == SW_J_STRING) {
            if (v->s.len == 5 && memcmp(v->s.ptr, "enter", 5) == 0) {
                ps->enter = true;
                *typed = true;
            } else if (v->s.len == 4 && memcmp(v->s.ptr, "exit", 4) == 0) {
                ps->enter = false;
                *typed = true;
            }
        }
        break;
    case P_NAME:
        if ((*typed = v->type == SW_J_STRING)) ps->name = v->s;
        break;
    case P_SCOPE_ID:
        if ((*typed = v->type == SW_J_STRING)) ps->scope_id = v->s;
        break;
    case P_PARENT_SCOPE_ID:
        *typed = v->type == SW_J_STRING || v->type == SW_J_NULL;
        ps->has_parent = v->type == SW_J_STRING;
        if (ps->has_parent) ps->parent_scope_id = v->s;
        break;
    case P_THREAD_ID:
        if ((*typed = v->type == SW_J_INT)) ps->thread_id = v->i;
        break;
    case P_THREAD_NAME:
        if ((*typed = v->type == SW_J_STRING)) ps->thread_name = v->s;
        break;
    case P_SEQUENCE:
        if ((*typed = v->type == SW_J_INT)) ps->sequence = v->i;
        break;
    case P_DEPTH:
        ps->has_depth = *typed = v->type == SW_J_INT;
        ps->depth = ps->has_depth ? v->i : 0;
        break;
    default: break; /* P_PATH that is not an array */
    }
}

/* A phase_scope object at the cursor into *ps; *ok says whether all its
 * typed fields were present with the right types. */
static bool json_phase_scope(sw_jscan_t *js, sw_phase_scope_t *ps, bool *ok, int depth)
{
    bool seen[P__CNT] = {false};
    bool typed[P__CNT] = {false};
    bool overflow = false;
    memset(ps, 0, sizeof(*ps));
    js->p++; /* '{' */
    sw_jscan_ws(js);
    if (js->p < js->end && *js->p == '}') {
        js->p++;
        *ok = false;
        return true;
    }
    for (;;) {
        sw_str_t key = {0};
        sw_jscan_ws(js);
        if (!scan_key(js, &key)) return false;
        sw_jscan_ws(js);
        int id = ps_field_id(key);
        if (id == P_PATH && js->p < js->end && *js->p == '[') {
            /* Path: keep the non-empty strings, skip anything else. */
            seen[id] = typed[id] = true;
            ps->path_len = 0;
            overflow = false;
            js->p++;
            sw_jscan_ws(js);
            if (js->p < js->end && *js->p == ']') {
                js->p++;
            } else {
                for (;;) {
                    sw_jval_t el;
                    if (!scan_value(js, &el, depth + 2)) return false;
                    if (el.type == SW_J_STRING && el.s.len > 0) {
                        if (ps->path_len < SW_PHASE_PATH_MAX) ps->path[ps->path_len++] = el.s;
                        else overflow = true;
                    }
                    sw_jscan_ws(js);
                    if (js->p < js->end && *js->p == ',') {
                        js->p++;
                        continue;
                    }
                    if (!sw_jscan_expect(js, ']', "expected ',' or ']' in array")) return false;
                    break;
                }
            }
        } else {
            sw_jval_t v;
            if (!scan_value(js, &v, depth + 1)) return false;
            if (id >= 0) {
                seen[id] = true;
                typed[id] = false;
                ps_take(ps, id, &v, &typed[id]);
            }
        }
        sw_jscan_ws(js);
        if (js->p < js->end && *js->p == ',') {
            js->p++;
            continue;
        }
        if (!sw_jscan_expect(js, '}', "expected ',' or '}' in object")) return false;
        break;
    }
    *ok = typed[P_ACTION] && typed[P_NAME] && typed[P_PATH] && typed[P_SCOPE_ID] &&
          (!seen[P_PARENT_SCOPE_ID] || typed[P_PARENT_SCOPE_ID]) && typed[P_THREAD_ID] &&
          typed[P_THREAD_NAME] && typed[P_SEQUENCE] && !overflow;
    return true;
}

bool sw_json_metadata_phase(sw_jscan_t *js, sw_phase_scope_t *ps, bool *has_phase, int depth)
{
    js->p++; /* '{' */
    sw_jscan_ws(js);
    *has_phase = false;
    if (js->p < js->end && *js->p == '}') {
        js->p++;
        return true;
    }
    for (;;) {
        sw_str_t key = {0};
        sw_jscan_ws(js);
        if (!scan_key(js, &key)) return false;
        sw_jscan_ws(js);
        sw_jval_t v;
        if (key.len == 11 && memcmp(key.ptr, "phase_scope", 11) == 0) {
            if (js->p < js->end && *js->p == '{') {
                if (!json_phase_scope(js, ps, has_phase, depth + 1)) return false;
            } else {
                if (!sw_jscan_value(js, &v, depth + 1)) return false;
                *has_phase = false;
            }
        } else if (!scan_value(js, &v, depth + 1)) {
            return false;
        }
        sw_jscan_ws(js);
        if (js->p < js->end && *js->p == ',') {
            js->p++;
            continue;
        }
        return sw_jscan_expect(js, '}', "expected ',' or '}' in object");
    }
}

bool sw_json_may_have_phase(sw_str_t text)
{
    return text.len > 0 &&
           (memmem(text.ptr, text.len, "phase", 5) || memmem(text.ptr, text.len, "\\u", 2));
}

bool sw_json_text_phase(sw_str_t text, char *scratch, sw_phase_scope_t *ps)
{
    sw_jscan_t js;
    sw_jscan_init(&js, text.ptr, text.len, scratch);
    sw_jscan_ws(&js);
    bool has = false;
    return js.p < js.end && *js.p == '{' && sw_json_metadata_phase(&js, ps, &has, 1) && has;
}
