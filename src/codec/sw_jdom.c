/*
 * JSON DOM (see sw_jdom.h): recursive descent over the strict scanner,
 * nesting bounded by SW_JSON_MAX_DEPTH.
 */
#include "sw_jdom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_json.h"

typedef struct vec_s {
    sw_jnode_t *v;
    sw_str_t *k;
    size_t n, cap;
} vec_t;

static void vec_push(vec_t *vec, sw_arena_t *arena, bool keyed)
{
    if (vec->n < vec->cap) return;
    size_t cap = vec->cap ? vec->cap * 2 : 8;
    sw_jnode_t *v = sw_arena_alloc(arena, cap * sizeof(*v));
    if (vec->n) memcpy(v, vec->v, vec->n * sizeof(*v));
    vec->v = v;
    if (keyed) {
        sw_str_t *k = sw_arena_alloc(arena, cap * sizeof(*k));
        if (vec->n) memcpy(k, vec->k, vec->n * sizeof(*k));
        vec->k = k;
    }
    vec->cap = cap;
}

static bool parse_value(sw_jscan_t *js, sw_arena_t *arena, sw_jnode_t *out, int depth);

static bool parse_container(sw_jscan_t *js, sw_arena_t *arena, sw_jnode_t *out, int depth)
{
    bool obj = *js->p == '{';
    char close = obj ? '}' : ']';
    if (depth >= SW_JSON_MAX_DEPTH) {
        js->err = "nesting deeper than 256 levels";
        js->err_at = js->p;
        return false;
    }
    js->p++;
    vec_t vec = {NULL, NULL, 0, 0};
    sw_jscan_ws(js);
    if (js->p < js->end && *js->p == close) {
        js->p++;
    } else {
        for (;;) {
            vec_push(&vec, arena, obj);
            if (obj) {
                sw_jscan_ws(js);
                sw_str_t key;
                if (!sw_jscan_string(js, &key)) return false;
                vec.k[vec.n] = sw_arena_str(arena, key);
                if (!sw_jscan_expect(js, ':', "expected ':' after object key")) return false;
            }
            if (!parse_value(js, arena, &vec.v[vec.n], depth + 1)) return false;
            vec.n++;
            sw_jscan_ws(js);
            if (js->p < js->end && *js->p == ',') {
                js->p++;
                continue;
            }
            if (!sw_jscan_expect(js, close,
                                 obj ? "expected ',' or '}' in object"
                                     : "expected ',' or ']' in array"))
                return false;
            break;
        }
    }
    out->type = obj ? SW_JN_OBJECT : SW_JN_ARRAY;
    out->items = vec.v;
    out->keys = vec.k;
    out->n = vec.n;
    return true;
}

static bool parse_value(sw_jscan_t *js, sw_arena_t *arena, sw_jnode_t *out, int depth)
{
    memset(out, 0, sizeof(*out));
    sw_jscan_ws(js);
    if (js->p < js->end && (*js->p == '{' || *js->p == '['))
        return parse_container(js, arena, out, depth);
    sw_jval_t v;
    size_t used = js->scratch_used;
    if (!sw_jscan_value(js, &v, depth)) return false;
    switch (v.type) {
    case SW_J_NULL: out->type = SW_JN_NULL; break;
    case SW_J_TRUE:
    case SW_J_FALSE:
        out->type = SW_JN_BOOL;
        out->b = v.type == SW_J_TRUE;
        break;
    case SW_J_INT:
        out->type = SW_JN_INT;
        out->i = v.i;
        out->d = (double)v.i;
        break;
    case SW_J_BIGINT:
    case SW_J_FLOAT: {
        char tmp[64];
        size_t n = v.raw_len < sizeof(tmp) - 1 ? v.raw_len : sizeof(tmp) - 1;
        memcpy(tmp, v.raw, n);
        tmp[n] = '\0';
        out->type = SW_JN_NUMBER;
        out->d = strtod(tmp, NULL);
        break;
    }
    case SW_J_STRING:
        out->type = SW_JN_STRING;
        out->s = sw_arena_str(arena, v.s);
        js->scratch_used = used; /* copied: give the scratch back */
        break;
    default: break;
    }
    return true;
}

sw_jnode_t *sw_jdom_parse(const char *text, size_t len, sw_arena_t *arena, char *errstr,
                          size_t errstr_size)
{
    char *scratch = malloc(len + 16);
    if (!scratch) {
        snprintf(errstr, errstr_size, "out of memory");
        return NULL;
    }
    sw_jscan_t js;
    sw_jscan_init(&js, text, len, scratch);
    sw_jnode_t *root = sw_arena_alloc(arena, sizeof(*root));
    bool ok = parse_value(&js, arena, root, 0);
    if (ok) ok = sw_jscan_end(&js);
    if (!ok)
        snprintf(errstr, errstr_size, "not valid JSON: %s at column %zu",
                 js.err ? js.err : "unexpected end", sw_jscan_offset(&js, js.err_at) + 1);
    free(scratch);
    return ok ? root : NULL;
}

const sw_jnode_t *sw_jdom_get(const sw_jnode_t *obj, const char *key)
{
    if (!obj || obj->type != SW_JN_OBJECT) return NULL;
    sw_str_t k = sw_str(key);
    for (size_t i = obj->n; i-- > 0;)
        if (sw_str_eq(obj->keys[i], k)) return &obj->items[i];
    return NULL;
}

const sw_jnode_t *sw_jdom_at(const sw_jnode_t *arr, size_t i)
{
    if (!arr || arr->type != SW_JN_ARRAY || i >= arr->n) return NULL;
    return &arr->items[i];
}

int64_t sw_jdom_int(const sw_jnode_t *n, int64_t dflt)
{
    return n && n->type == SW_JN_INT ? n->i : dflt;
}

sw_str_t sw_jdom_str(const sw_jnode_t *n, const char *dflt)
{
    if (n && n->type == SW_JN_STRING) return n->s;
    return sw_str(dflt);
}
