/*
 * Avro schema resolution (see sw_avro_resolve.h): schemas parsed from JSON
 * into nodes and a writer/reader pair resolved into a tree of rewrite steps
 * (sw_avro_resolve_int.h); sw_avro_rewrite.c applies them. Everything a
 * plan needs lives in its arena. No I/O, no libavro.
 */
#include "sw_avro_resolve.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_arena.h"
#include "sw_avro_resolve_int.h"
#include "sw_jdom.h"

/* ---- schemas ----------------------------------------------------------- */

static const char *const k_at_name[] = {"null",   "boolean", "int",    "long",   "float",
                                        "double", "bytes",   "string", "record", "enum",
                                        "array",  "map",     "union",  "fixed"};

typedef struct named_s {
    anode_t *node;
    struct named_s *next;
} named_t;

typedef struct parser_s {
    sw_arena_t *arena;
    named_t *named;  /* named types defined so far */
    const char *who; /* "reader schema" or "writer schema id 7" */
    char *errstr;
    size_t errstr_size;
} parser_t;

static bool p_fail(parser_t *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool p_fail(parser_t *ps, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(ps->errstr, ps->errstr_size, "%s: %s", ps->who, msg);
    return false;
}

static bool str_is(sw_str_t s, const char *c)
{
    size_t n = strlen(c);
    return s.len == n && memcmp(s.ptr, c, n) == 0;
}

static int primitive(sw_str_t s)
{
    for (int t = AT_NULL; t <= AT_STRING; t++)
        if (str_is(s, k_at_name[t])) return t;
    return -1;
}

static sw_str_t join_name(parser_t *ps, sw_str_t ns, sw_str_t name)
{
    if (!ns.len || memchr(name.ptr, '.', name.len)) return name;
    char *p = sw_arena_alloc(ps->arena, ns.len + name.len + 2);
    memcpy(p, ns.ptr, ns.len);
    p[ns.len] = '.';
    memcpy(p + ns.len + 1, name.ptr, name.len);
    p[ns.len + name.len + 1] = '\0';
    return (sw_str_t){p, ns.len + name.len + 1};
}

static anode_t *find_named(parser_t *ps, sw_str_t full)
{
    for (named_t *n = ps->named; n; n = n->next)
        if (sw_str_eq(n->node->fullname, full)) return n->node;
    return NULL;
}

static anode_t *parse_node(parser_t *ps, const sw_jnode_t *j, sw_str_t ns, const char *path,
                           int depth);

/* A named type: registered before its fields, so that it may refer to itself. */
static anode_t *parse_named(parser_t *ps, const sw_jnode_t *j, at_t t, sw_str_t *ns,
                            const char *path)
{
    const sw_jnode_t *name = sw_jdom_get(j, "name");
    if (!name || name->type != SW_JN_STRING || !name->s.len) {
        p_fail(ps, "field \"%s\": a %s needs a \"name\"", path, k_at_name[t]);
        return NULL;
    }
    const sw_jnode_t *jns = sw_jdom_get(j, "namespace");
    if (jns && jns->type == SW_JN_STRING) *ns = jns->s;
    anode_t *a = sw_arena_calloc(ps->arena, 1, sizeof(*a));
    a->t = t;
    a->fullname = join_name(ps, *ns, name->s);
    const char *dot = memrchr(a->fullname.ptr, '.', a->fullname.len);
    a->name = dot ? (sw_str_t){dot + 1, a->fullname.len - (size_t)(dot + 1 - a->fullname.ptr)}
                  : a->fullname;
    if (dot) *ns = (sw_str_t){a->fullname.ptr, (size_t)(dot - a->fullname.ptr)};
    named_t *nm = sw_arena_calloc(ps->arena, 1, sizeof(*nm));
    nm->node = a;
    nm->next = ps->named;
    ps->named = nm;
    return a;
}

static const char *sub_path(parser_t *ps, const char *path, sw_str_t field)
{
    size_t pl = strlen(path);
    char *p = sw_arena_alloc(ps->arena, pl + field.len + 2);
    if (pl) {
        memcpy(p, path, pl);
        p[pl++] = '.';
    }
    memcpy(p + pl, field.ptr, field.len);
    p[pl + field.len] = '\0';
    return p;
}

static anode_t *parse_record(parser_t *ps, const sw_jnode_t *j, sw_str_t ns, const char *path,
                             int depth)
{
    anode_t *a = parse_named(ps, j, AT_RECORD, &ns, path);
    if (!a) return NULL;
    const sw_jnode_t *fields = sw_jdom_get(j, "fields");
    if (!fields || fields->type != SW_JN_ARRAY) {
        p_fail(ps, "record \"%.*s\" needs a \"fields\" array", (int)a->name.len, a->name.ptr);
        return NULL;
    }
    if (fields->n > SW_AVRO_MAX_FIELDS) {
        p_fail(ps, "record \"%.*s\" has %zu fields (at most %d)", (int)a->name.len, a->name.ptr,
               fields->n, SW_AVRO_MAX_FIELDS);
        return NULL;
    }
    a->n = fields->n;
    a->fields = sw_arena_calloc(ps->arena, a->n ? a->n : 1, sizeof(*a->fields));
    for (size_t i = 0; i < a->n; i++) {
        const sw_jnode_t *f = &fields->items[i];
        const sw_jnode_t *fname = f->type == SW_JN_OBJECT ? sw_jdom_get(f, "name") : NULL;
        if (!fname || fname->type != SW_JN_STRING || !fname->s.len) {
            p_fail(ps, "record \"%.*s\": field %zu has no \"name\"", (int)a->name.len, a->name.ptr,
                   i);
            return NULL;
        }
        for (size_t k = 0; k < i; k++)
            if (sw_str_eq(a->fields[k].name, fname->s)) {
                p_fail(ps, "record \"%.*s\": field \"%.*s\" appears twice", (int)a->name.len,
                       a->name.ptr, (int)fname->s.len, fname->s.ptr);
                return NULL;
            }
        const char *fpath = sub_path(ps, path, fname->s);
        const sw_jnode_t *ft = sw_jdom_get(f, "type");
        if (!ft) {
            p_fail(ps, "field \"%s\" has no \"type\"", fpath);
            return NULL;
        }
        a->fields[i].name = fname->s;
        a->fields[i].dflt = sw_jdom_get(f, "default");
        a->fields[i].type = parse_node(ps, ft, ns, fpath, depth + 1);
        if (!a->fields[i].type) return NULL;
    }
    return a;
}

static anode_t *parse_object(parser_t *ps, const sw_jnode_t *j, sw_str_t ns, const char *path,
                             int depth)
{
    const sw_jnode_t *type = sw_jdom_get(j, "type");
    if (!type) {
        p_fail(ps, "field \"%s\": a type object needs a \"type\"", path);
        return NULL;
    }
    if (type->type != SW_JN_STRING) return parse_node(ps, type, ns, path, depth + 1);
    int prim = primitive(type->s);
    if (prim >= 0) { /* {"type": "long", "logicalType": ...}: the bytes are a long */
        anode_t *a = sw_arena_calloc(ps->arena, 1, sizeof(*a));
        a->t = (at_t)prim;
        return a;
    }
    if (str_is(type->s, "record") || str_is(type->s, "error"))
        return parse_record(ps, j, ns, path, depth);
    if (str_is(type->s, "enum")) {
        anode_t *a = parse_named(ps, j, AT_ENUM, &ns, path);
        if (!a) return NULL;
        const sw_jnode_t *sy = sw_jdom_get(j, "symbols");
        if (!sy || sy->type != SW_JN_ARRAY || !sy->n) {
            p_fail(ps, "field \"%s\": enum needs a non-empty \"symbols\" array", path);
            return NULL;
        }
        a->n = sy->n;
        a->symbols = sw_arena_calloc(ps->arena, a->n, sizeof(*a->symbols));
        for (size_t i = 0; i < a->n; i++) {
            if (sy->items[i].type != SW_JN_STRING) {
                p_fail(ps, "field \"%s\": enum symbol %zu is not a string", path, i);
                return NULL;
            }
            a->symbols[i] = sy->items[i].s;
        }
        a->enum_dflt = sw_jdom_get(j, "default");
        return a;
    }
    if (str_is(type->s, "array") || str_is(type->s, "map")) {
        bool arr = str_is(type->s, "array");
        const sw_jnode_t *it = sw_jdom_get(j, arr ? "items" : "values");
        if (!it) {
            p_fail(ps, "field \"%s\": %s needs \"%s\"", path, arr ? "array" : "map",
                   arr ? "items" : "values");
            return NULL;
        }
        anode_t *a = sw_arena_calloc(ps->arena, 1, sizeof(*a));
        a->t = arr ? AT_ARRAY : AT_MAP;
        a->items = parse_node(ps, it, ns, path, depth + 1);
        return a->items ? a : NULL;
    }
    if (str_is(type->s, "fixed")) {
        anode_t *a = parse_named(ps, j, AT_FIXED, &ns, path);
        if (!a) return NULL;
        const sw_jnode_t *sz = sw_jdom_get(j, "size");
        if (!sz || sz->type != SW_JN_INT || sz->i < 0 || sz->i > (1 << 20)) {
            p_fail(ps, "field \"%s\": fixed needs a \"size\" of 0..1048576", path);
            return NULL;
        }
        a->size = sz->i;
        return a;
    }
    /* A named type referenced as {"type": "Name"}. */
    return parse_node(ps, type, ns, path, depth + 1);
}

static anode_t *parse_node(parser_t *ps, const sw_jnode_t *j, sw_str_t ns, const char *path,
                           int depth)
{
    if (depth > SW_AVRO_MAX_DEPTH) {
        p_fail(ps, "field \"%s\": schema nested deeper than %d levels", path, SW_AVRO_MAX_DEPTH);
        return NULL;
    }
    if (j->type == SW_JN_STRING) {
        int prim = primitive(j->s);
        if (prim >= 0) {
            anode_t *a = sw_arena_calloc(ps->arena, 1, sizeof(*a));
            a->t = (at_t)prim;
            return a;
        }
        anode_t *a = find_named(ps, join_name(ps, ns, j->s));
        if (!a) a = find_named(ps, j->s);
        if (!a) p_fail(ps, "field \"%s\": unknown type \"%.*s\"", path, (int)j->s.len, j->s.ptr);
        return a;
    }
    if (j->type == SW_JN_ARRAY) {
        anode_t *a = sw_arena_calloc(ps->arena, 1, sizeof(*a));
        a->t = AT_UNION;
        a->n = j->n;
        a->branches = sw_arena_calloc(ps->arena, a->n ? a->n : 1, sizeof(*a->branches));
        if (!a->n) {
            p_fail(ps, "field \"%s\": empty union", path);
            return NULL;
        }
        for (size_t i = 0; i < a->n; i++) {
            a->branches[i] = parse_node(ps, &j->items[i], ns, path, depth + 1);
            if (!a->branches[i]) return NULL;
            if (a->branches[i]->t == AT_UNION) {
                p_fail(ps, "field \"%s\": a union inside a union", path);
                return NULL;
            }
        }
        return a;
    }
    if (j->type == SW_JN_OBJECT) return parse_object(ps, j, ns, path, depth);
    p_fail(ps, "field \"%s\": a type must be a string, an array or an object", path);
    return NULL;
}

static anode_t *schema_parse(parser_t *ps, const char *text, size_t len)
{
    char jerr[200];
    sw_jnode_t *root = sw_jdom_parse(text, len, ps->arena, jerr, sizeof(jerr));
    if (!root) {
        p_fail(ps, "not valid JSON: %s", jerr);
        return NULL;
    }
    return parse_node(ps, root, (sw_str_t){"", 0}, "", 0);
}

/* Bytes written with @p w read as @p r unchanged (names, docs and defaults
 * aside): the same layout, or an int read as a long (the same zig-zag
 * varint), or string and bytes (the reader checks UTF-8). */
static bool same_layout(const anode_t *w, const anode_t *r, int depth)
{
    if (w == r) return true;
    if (w->t == AT_INT && r->t == AT_LONG) return true;
    if ((w->t == AT_STRING && r->t == AT_BYTES) || (w->t == AT_BYTES && r->t == AT_STRING))
        return true;
    if (w->t != r->t || depth > SW_AVRO_MAX_DEPTH) return false;
    switch (w->t) {
    case AT_RECORD:
        if (w->n != r->n) return false;
        for (size_t i = 0; i < w->n; i++)
            if (!same_layout(w->fields[i].type, r->fields[i].type, depth + 1)) return false;
        return true;
    case AT_UNION:
        if (w->n != r->n) return false;
        for (size_t i = 0; i < w->n; i++)
            if (!same_layout(w->branches[i], r->branches[i], depth + 1)) return false;
        return true;
    case AT_ARRAY:
    case AT_MAP: return same_layout(w->items, r->items, depth + 1);
    case AT_ENUM: /* indexes are only the same when the symbols are */
        if (w->n != r->n) return false;
        for (size_t i = 0; i < w->n; i++)
            if (!sw_str_eq(w->symbols[i], r->symbols[i])) return false;
        return true;
    case AT_FIXED: return w->size == r->size;
    default: return true;
    }
}

/* ---- resolution -------------------------------------------------------- */

static unsigned char field_kind(const anode_t *w)
{
    bool opt = false;
    if (w->t == AT_UNION && w->n == 2 && w->branches[0]->t == AT_NULL) {
        opt = true;
        w = w->branches[1];
    } else if (w->t == AT_UNION) {
        return FK_OTHER;
    }
    switch (w->t) {
    case AT_NULL: return opt ? FK_OTHER : FK_NULL;
    case AT_INT:
    case AT_LONG:
    case AT_ENUM: return opt ? FK_OPT_VARINT : FK_VARINT;
    case AT_STRING:
    case AT_BYTES: return opt ? FK_OPT_LEN : FK_LEN;
    default: return opt ? FK_OPT_OTHER : FK_OTHER;
    }
}

/* The step that reads (or skips) writer field type @p w of shape @p kind.
 * An enum is skipped as a varint but read by the decoder's own reader,
 * which checks the symbol's index. */
static uint8_t step_op(const anode_t *w, unsigned char kind, bool read)
{
    if (w->t == AT_UNION && w->n == 2) w = w->branches[1];
    if (read && w->t == AT_ENUM) return SW_AVRO_STEP_READ;
    switch (kind) {
    case FK_VARINT: return read ? SW_AVRO_STEP_READ_VARINT : SW_AVRO_STEP_SKIP_VARINT;
    case FK_OPT_VARINT: return read ? SW_AVRO_STEP_READ_OPT_VARINT : SW_AVRO_STEP_SKIP_OPT_VARINT;
    case FK_LEN: return read ? SW_AVRO_STEP_READ_LEN : SW_AVRO_STEP_SKIP_LEN;
    case FK_OPT_LEN: return read ? SW_AVRO_STEP_READ_OPT_LEN : SW_AVRO_STEP_SKIP_OPT_LEN;
    default: return read ? SW_AVRO_STEP_READ : SW_AVRO_STEP_SKIP;
    }
}

/* The flat tables of sw_avro_plan_fields(). */
static void plan_flatten(sw_avro_plan_t *plan)
{
    const op_t *op = plan->root;
    if (op->k != OP_RECORD) return;
    plan->fields_kind = sw_arena_calloc(&plan->arena, op->w->n + 1, 1);
    for (size_t k = 0; k < op->w->n; k++) plan->fields_kind[k] = field_kind(op->w->fields[k].type);
    /* Every default in one block of the plan: spans point there, nothing
     * is copied per message. */
    size_t total = 0;
    for (size_t i = 0; i < op->nr; i++) total += op->from[i] < 0 ? op->dflt[i].len : 0;
    unsigned char *d = sw_arena_alloc(&plan->arena, total + 1);
    for (size_t i = 0; i < op->nr; i++) {
        if (op->from[i] >= 0) continue;
        memcpy(d, op->dflt[i].ptr, op->dflt[i].len);
        op->dflt[i].ptr = (const char *)d;
        d += op->dflt[i].len;
    }
    plan->dflt_end = d;
    plan->fields_src = sw_arena_calloc(&plan->arena, op->nr + 1, sizeof(int16_t));
    for (size_t i = 0; i < op->nr; i++) {
        plan->fields_src[i] = op->from[i] < 0            ? FS_DEFAULT
                              : op->fop[i]->k == OP_COPY ? (int16_t)op->from[i]
                                                         : FS_CONVERT;
        plan->has_default |= plan->fields_src[i] == FS_DEFAULT;
        plan->has_convert |= plan->fields_src[i] == FS_CONVERT;
    }
    /* The same, per writer field in the writer's order (sw_avro_plan_steps). */
    plan->steps = sw_arena_calloc(&plan->arena, op->w->n + 1, sizeof(*plan->steps));
    for (size_t k = 0; k < op->w->n; k++) {
        plan->steps[k].op = step_op(op->w->fields[k].type, plan->fields_kind[k], false);
        plan->steps[k].slot = -1;
    }
    plan->dflts = sw_arena_calloc(&plan->arena, op->nr + 1, sizeof(*plan->dflts));
    for (size_t i = 0; i < op->nr; i++) {
        int16_t src = plan->fields_src[i];
        if (src == FS_DEFAULT) {
            sw_avro_default_t *df = &plan->dflts[plan->ndflt++];
            df->slot = (int16_t)i;
            df->span.p = (const unsigned char *)op->dflt[i].ptr;
            df->span.end = plan->dflt_end;
        } else if (src == FS_CONVERT) {
            plan->steps[op->from[i]].op = SW_AVRO_STEP_CONVERT;
            plan->steps[op->from[i]].slot = (int16_t)i;
        } else {
            plan->steps[src].op = step_op(op->w->fields[src].type, plan->fields_kind[src], true);
            plan->steps[src].slot = (int16_t)i;
        }
    }
}

typedef struct res_s {
    sw_arena_t *arena;
    const char *who;
    char *errstr;
    size_t errstr_size;
} res_t;

static bool r_fail(res_t *rs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool r_fail(res_t *rs, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(rs->errstr, rs->errstr_size, "%s: %s", rs->who, msg);
    return false;
}

static const char *type_name(const anode_t *a, char *buf, size_t size)
{
    if (a->t == AT_RECORD || a->t == AT_ENUM || a->t == AT_FIXED)
        snprintf(buf, size, "%s \"%.*s\"", k_at_name[a->t], (int)a->name.len, a->name.ptr);
    else if (a->t == AT_UNION) {
        size_t n = (size_t)snprintf(buf, size, "[");
        for (size_t i = 0; i < a->n && n < size; i++) {
            char sub[80];
            n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "",
                                  type_name(a->branches[i], sub, sizeof(sub)));
        }
        if (n < size) snprintf(buf + n, size - n, "]");
    } else snprintf(buf, size, "\"%s\"", k_at_name[a->t]);
    return buf;
}

/* Spec "schemas match" for non-union writer @p w against non-union @p r. */
static bool matches(const anode_t *w, const anode_t *r, int depth)
{
    if (depth > SW_AVRO_MAX_DEPTH) return false;
    if (w->t == r->t) {
        switch (w->t) {
        case AT_RECORD:
        case AT_ENUM: return sw_str_eq(w->name, r->name);
        case AT_FIXED: return sw_str_eq(w->name, r->name) && w->size == r->size;
        case AT_ARRAY:
        case AT_MAP:
            if (w->items->t == AT_UNION || r->items->t == AT_UNION) return true;
            return matches(w->items, r->items, depth + 1);
        default: return true;
        }
    }
    switch (w->t) {
    case AT_INT: return r->t == AT_LONG || r->t == AT_FLOAT || r->t == AT_DOUBLE;
    case AT_LONG: return r->t == AT_FLOAT || r->t == AT_DOUBLE;
    case AT_FLOAT: return r->t == AT_DOUBLE;
    case AT_STRING: return r->t == AT_BYTES;
    case AT_BYTES: return r->t == AT_STRING;
    default: return false;
    }
}

static op_t *resolve(res_t *rs, const anode_t *w, const anode_t *r, const char *path, int depth);

static op_t *new_op(res_t *rs, op_kind_t k, const anode_t *w, const char *path)
{
    op_t *op = sw_arena_calloc(rs->arena, 1, sizeof(*op));
    op->k = k;
    op->w = w;
    op->path = path;
    return op;
}

/* The reader union branch a non-union writer type goes to: an exact type
 * first, then one it promotes to (as Avro's Java and C implementations). */
static int64_t union_branch(const anode_t *w, const anode_t *r)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->branches[i]->t == w->t && matches(w, r->branches[i], 0)) return (int64_t)i;
    for (size_t i = 0; i < r->n; i++)
        if (matches(w, r->branches[i], 0)) return (int64_t)i;
    return -1;
}

/* Encode the JSON default @p j of reader type @p r (spec: a union's default
 * is of its first branch). */
static bool put_default(res_t *rs, sw_buf_t *out, const anode_t *r, const sw_jnode_t *j,
                        const char *path, int depth);

static bool put_default(res_t *rs, sw_buf_t *out, const anode_t *r, const sw_jnode_t *j,
                        const char *path, int depth)
{
    char tn[200];
    bool ok = depth <= SW_AVRO_MAX_DEPTH;
    switch (r->t) {
    case AT_NULL: ok = ok && j->type == SW_JN_NULL; break;
    case AT_BOOLEAN:
        ok = ok && j->type == SW_JN_BOOL;
        if (ok) sw_buf_putc(out, j->b ? 1 : 0);
        break;
    case AT_INT:
    case AT_LONG:
        ok = ok && j->type == SW_JN_INT &&
             (r->t == AT_LONG || (j->i >= INT32_MIN && j->i <= INT32_MAX));
        if (ok) sw_avro_put_zz(out, j->i);
        break;
    case AT_FLOAT:
    case AT_DOUBLE:
        ok = ok && (j->type == SW_JN_INT || j->type == SW_JN_NUMBER);
        if (ok && r->t == AT_FLOAT) {
            float f = (float)j->d;
            sw_buf_put(out, &f, 4); /* little-endian hosts only (as the rest) */
        } else if (ok) {
            sw_buf_put(out, &j->d, 8);
        }
        break;
    case AT_STRING:
    case AT_BYTES:
    case AT_FIXED:
        ok = ok && j->type == SW_JN_STRING && (r->t != AT_FIXED || (int64_t)j->s.len == r->size);
        if (ok && r->t != AT_FIXED) sw_avro_put_zz(out, (int64_t)j->s.len);
        if (ok) sw_buf_put(out, j->s.ptr, j->s.len);
        break;
    case AT_ENUM:
        ok = false;
        for (size_t i = 0; j->type == SW_JN_STRING && i < r->n && !ok; i++)
            if (sw_str_eq(r->symbols[i], j->s)) {
                sw_avro_put_zz(out, (int64_t)i);
                ok = true;
            }
        break;
    case AT_UNION:
        sw_avro_put_zz(out, 0);
        return put_default(rs, out, r->branches[0], j, path, depth + 1);
    case AT_ARRAY:
    case AT_MAP:
        ok = ok && j->type == (r->t == AT_ARRAY ? SW_JN_ARRAY : SW_JN_OBJECT);
        if (ok && j->n) {
            sw_avro_put_zz(out, (int64_t)j->n);
            for (size_t i = 0; i < j->n; i++) {
                if (r->t == AT_MAP) {
                    sw_avro_put_zz(out, (int64_t)j->keys[i].len);
                    sw_buf_put(out, j->keys[i].ptr, j->keys[i].len);
                }
                if (!put_default(rs, out, r->items, &j->items[i], path, depth + 1)) return false;
            }
        }
        if (ok) sw_avro_put_zz(out, 0);
        break;
    case AT_RECORD:
        ok = ok && j->type == SW_JN_OBJECT;
        for (size_t i = 0; ok && i < r->n; i++) {
            char key[256];
            snprintf(key, sizeof(key), "%.*s", (int)r->fields[i].name.len, r->fields[i].name.ptr);
            const sw_jnode_t *v = sw_jdom_get(j, key);
            if (!v) v = r->fields[i].dflt;
            if (!v) return r_fail(rs, "field \"%s\": default lacks field \"%s\"", path, key);
            if (!put_default(rs, out, r->fields[i].type, v, path, depth + 1)) return false;
        }
        break;
    }
    if (!ok)
        return r_fail(rs, "reader field \"%s\": its default does not match its type %s", path,
                      type_name(r, tn, sizeof(tn)));
    return true;
}

static op_t *resolve_record(res_t *rs, const anode_t *w, const anode_t *r, const char *path,
                            int depth)
{
    op_t *op = new_op(rs, OP_RECORD, w, path);
    op->nr = r->n;
    op->from = sw_arena_calloc(rs->arena, r->n ? r->n : 1, sizeof(*op->from));
    op->fop = sw_arena_calloc(rs->arena, r->n ? r->n : 1, sizeof(*op->fop));
    op->dflt = sw_arena_calloc(rs->arena, r->n ? r->n : 1, sizeof(*op->dflt));
    op->in_order = w->n == r->n;
    for (size_t i = 0; i < r->n; i++) {
        const afield_t *rf = &r->fields[i];
        char fp[300];
        snprintf(fp, sizeof(fp), "%s%s%.*s", path, *path ? "." : "", (int)rf->name.len,
                 rf->name.ptr);
        char *fpath = sw_arena_alloc(rs->arena, strlen(fp) + 1);
        strcpy(fpath, fp);
        op->from[i] = -1;
        for (size_t k = 0; k < w->n; k++)
            if (sw_str_eq(w->fields[k].name, rf->name)) op->from[i] = (int)k;
        if (op->from[i] != (int)i) op->in_order = false;
        if (op->from[i] >= 0) {
            op->fop[i] = resolve(rs, w->fields[op->from[i]].type, rf->type, fpath, depth + 1);
            if (!op->fop[i]) return NULL;
            continue;
        }
        if (!rf->dflt) {
            r_fail(rs, "reader field \"%s\" is not in the writer schema and has no default", fpath);
            return NULL;
        }
        sw_buf_t b;
        sw_buf_init(&b);
        bool ok = put_default(rs, &b, rf->type, rf->dflt, fpath, depth + 1);
        if (ok) {
            char *p = sw_arena_alloc(rs->arena, b.len ? b.len : 1);
            memcpy(p, b.data, b.len);
            op->dflt[i] = (sw_str_t){p, b.len};
        }
        sw_buf_clear(&b);
        if (!ok) return NULL;
    }
    return op;
}

static op_t *resolve(res_t *rs, const anode_t *w, const anode_t *r, const char *path, int depth)
{
    char wn[200], rn[200];
    if (depth > SW_AVRO_MAX_DEPTH) {
        r_fail(rs, "field \"%s\": schema nested deeper than %d levels", path, SW_AVRO_MAX_DEPTH);
        return NULL;
    }
    if (same_layout(w, r, 0)) return new_op(rs, OP_COPY, w, path);
    if (w->t == AT_UNION) {
        op_t *op = new_op(rs, OP_WUNION, w, path);
        op->wb = sw_arena_calloc(rs->arena, w->n, sizeof(*op->wb));
        bool any = false;
        for (size_t i = 0; i < w->n; i++) {
            const anode_t *wb = w->branches[i];
            bool ok = r->t == AT_UNION ? union_branch(wb, r) >= 0 : matches(wb, r, 0);
            if (ok) {
                op->wb[i] = resolve(rs, wb, r, path, depth + 1);
                if (!op->wb[i]) return NULL;
                any = true;
                continue;
            }
            /* Resolved lazily, per spec: an error only if this branch is written. */
            op_t *f = new_op(rs, OP_FAIL, wb, path);
            char msg[500];
            snprintf(msg, sizeof(msg),
                     "field \"%s\": writer union branch %zu (%s) cannot be read as reader type %s",
                     path, i, type_name(wb, wn, sizeof(wn)), type_name(r, rn, sizeof(rn)));
            char *m = sw_arena_alloc(rs->arena, strlen(msg) + 1);
            strcpy(m, msg);
            f->why = m;
            op->wb[i] = f;
        }
        if (!any) {
            r_fail(rs, "field \"%s\": writer type %s cannot be read as reader type %s", path,
                   type_name(w, wn, sizeof(wn)), type_name(r, rn, sizeof(rn)));
            return NULL;
        }
        return op;
    }
    if (r->t == AT_UNION) {
        int64_t b = union_branch(w, r);
        if (b < 0) {
            r_fail(rs, "field \"%s\": writer type %s cannot be read as reader type %s", path,
                   type_name(w, wn, sizeof(wn)), type_name(r, rn, sizeof(rn)));
            return NULL;
        }
        op_t *op = new_op(rs, OP_TO_UNION, w, path);
        op->branch = b;
        op->sub = resolve(rs, w, r->branches[b], path, depth + 1);
        return op->sub ? op : NULL;
    }
    if (!matches(w, r, 0)) {
        r_fail(rs, "field \"%s\": writer type %s cannot be read as reader type %s", path,
               type_name(w, wn, sizeof(wn)), type_name(r, rn, sizeof(rn)));
        return NULL;
    }
    switch (r->t) {
    case AT_LONG: /* int -> long: the same zig-zag varint */
    case AT_STRING:
    case AT_BYTES: return new_op(rs, OP_COPY, w, path);
    case AT_FLOAT:
    case AT_DOUBLE:
        if (w->t == AT_FLOAT) return new_op(rs, OP_F2D, w, path);
        return new_op(rs, r->t == AT_FLOAT ? OP_TO_FLOAT : OP_TO_DOUBLE, w, path);
    case AT_RECORD: return resolve_record(rs, w, r, path, depth);
    case AT_ARRAY:
    case AT_MAP: {
        op_t *op = new_op(rs, r->t == AT_ARRAY ? OP_ARRAY : OP_MAP, w, path);
        op->sub = resolve(rs, w->items, r->items, path, depth + 1);
        return op->sub ? op : NULL;
    }
    case AT_ENUM: {
        op_t *op = new_op(rs, OP_ENUM, w, path);
        op->emap = sw_arena_calloc(rs->arena, w->n, sizeof(*op->emap));
        int64_t dflt = -1;
        for (size_t k = 0; r->enum_dflt && r->enum_dflt->type == SW_JN_STRING && k < r->n; k++)
            if (sw_str_eq(r->symbols[k], r->enum_dflt->s)) dflt = (int64_t)k;
        for (size_t i = 0; i < w->n; i++) {
            op->emap[i] = dflt;
            for (size_t k = 0; k < r->n; k++)
                if (sw_str_eq(r->symbols[k], w->symbols[i])) op->emap[i] = (int64_t)k;
        }
        return op;
    }
    default: /* same primitive or fixed: same_layout() took it */
        return new_op(rs, OP_COPY, w, path);
    }
}

sw_avro_plan_t *sw_avro_plan_new(const char *writer_json, size_t writer_len,
                                 const char *reader_json, size_t reader_len, int32_t schema_id,
                                 char *errstr, size_t errstr_size)
{
    sw_avro_plan_t *plan = sw_calloc(1, sizeof(*plan));
    sw_arena_init(&plan->arena);
    plan->id = schema_id;
    char who[64];
    if (schema_id >= 0) snprintf(who, sizeof(who), "writer schema id %ld", (long)schema_id);
    else snprintf(who, sizeof(who), "writer schema");
    parser_t pw = {&plan->arena, NULL, who, errstr, errstr_size};
    parser_t pr = {&plan->arena, NULL, "reader schema", errstr, errstr_size};
    const anode_t *r = NULL;
    plan->writer = schema_parse(&pw, writer_json, writer_len);
    if (!plan->writer) goto err;
    r = schema_parse(&pr, reader_json, reader_len);
    if (!r) goto err;
    res_t rs = {&plan->arena, who, errstr, errstr_size};
    if (plan->writer->t == AT_RECORD && r->t == AT_RECORD &&
        !sw_str_eq(plan->writer->name, r->name)) {
        r_fail(&rs, "record name \"%.*s\" is not the reader's \"%.*s\"",
               (int)plan->writer->name.len, plan->writer->name.ptr, (int)r->name.len, r->name.ptr);
        goto err;
    }
    plan->root = resolve(&rs, plan->writer, r, "", 0);
    if (!plan->root) goto err;
    plan->identity = plan->root->k == OP_COPY;
    plan_flatten(plan);
    return plan;
err:
    sw_avro_plan_destroy(plan);
    return NULL;
}

void sw_avro_plan_destroy(sw_avro_plan_t *plan)
{
    if (!plan) return;
    sw_arena_clear(&plan->arena);
    free(plan);
}

bool sw_avro_plan_identity(const sw_avro_plan_t *plan)
{
    return plan->identity;
}

int32_t sw_avro_plan_id(const sw_avro_plan_t *plan)
{
    return plan->id;
}
