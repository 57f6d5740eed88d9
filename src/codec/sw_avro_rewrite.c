/*
 * Applying resolution plans (see sw_avro_resolve.h): a careful cursor over
 * the writer's body that never reads past it and names the field of the
 * first problem, the generic rewrite into the reader's layout, and the one
 * pass over a record's fields that finds where each reader field lies.
 * No I/O, no libavro.
 */
#include "sw_avro_resolve.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_avro_resolve_int.h"

void sw_avro_put_zz(sw_buf_t *out, int64_t v)
{
    uint64_t u = ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
    while (u >= 0x80) {
        sw_buf_putc(out, (char)(u | 0x80));
        u >>= 7;
    }
    sw_buf_putc(out, (char)u);
}

/* ---- rewriting --------------------------------------------------------- */

typedef struct cur_s {
    const unsigned char *base, *p, *end;
    int32_t id;
    const char *path; /* field being read */
    sw_err_t err;
    char *errstr;
    size_t errstr_size;
} cur_t;

static bool c_fail(cur_t *c, sw_err_t err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool c_fail(cur_t *c, sw_err_t err, const char *fmt, ...)
{
    if (c->err) return false;
    c->err = err;
    char msg[500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(c->errstr, c->errstr_size, "Avro (writer schema id %ld): %s", (long)c->id, msg);
    return false;
}

static bool c_trunc(cur_t *c)
{
    return c_fail(c, SW_ERR_TRUNCATED,
                  "truncated at byte %zu of the body while reading field \"%s\"",
                  (size_t)(c->p - c->base), c->path);
}

static bool c_long_slow(cur_t *c, int64_t *out);

/* Most varints end well before the body does: no bounds check per byte. */
static inline bool c_long(cur_t *c, int64_t *out)
{
    const unsigned char *p = c->p;
    if (c->end - p >= 10) {
        uint64_t v = 0;
        for (unsigned i = 0; i < 9; i++) {
            uint64_t b = p[i];
            v |= (b & 0x7f) << (7 * i);
            if (b < 0x80) {
                c->p = p + i + 1;
                *out = (int64_t)((v >> 1) ^ (0 - (v & 1)));
                return true;
            }
        }
    }
    return c_long_slow(c, out);
}

__attribute__((noinline)) static bool c_long_slow(cur_t *c, int64_t *out)
{
    uint64_t v = 0;
    const unsigned char *s = c->p;
    for (int i = 0;; i++) {
        if (c->p >= c->end) return c_trunc(c);
        unsigned char b = *c->p++;
        if (i == 9 && b > 1)
            return c_fail(c, SW_ERR_AVRO,
                          "varint at byte %zu in field \"%s\" does not fit in 64 bits",
                          (size_t)(s - c->base), c->path);
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) break;
    }
    *out = (int64_t)((v >> 1) ^ (0 - (v & 1)));
    return true;
}

static bool c_skip_n(cur_t *c, int64_t n)
{
    if (n < 0)
        return c_fail(c, SW_ERR_AVRO, "negative length %lld at byte %zu in field \"%s\"",
                      (long long)n, (size_t)(c->p - c->base), c->path);
    if ((uint64_t)n > (size_t)(c->end - c->p)) {
        c->p = c->end;
        return c_trunc(c);
    }
    c->p += n;
    return true;
}

/* Count of the next array/map block; *size >= 0 when the writer gave it. */
static bool c_block(cur_t *c, int64_t *count, int64_t *size)
{
    *size = -1;
    if (!c_long(c, count)) return false;
    if (*count < 0) {
        if (*count == INT64_MIN)
            return c_fail(c, SW_ERR_AVRO, "block count out of range in field \"%s\"", c->path);
        *count = -*count;
        if (!c_long(c, size)) return false;
        if (*size < 0 || (uint64_t)*size > (size_t)(c->end - c->p))
            return c_fail(c, SW_ERR_AVRO, "bad block size %lld at byte %zu in field \"%s\"",
                          (long long)*size, (size_t)(c->p - c->base), c->path);
    }
    /* Every item takes a byte, except null and empty records: bounded anyway. */
    if ((uint64_t)*count > (size_t)(c->end - c->p) + 1000000)
        return c_fail(c, SW_ERR_AVRO,
                      "block of %lld items at byte %zu in field \"%s\" is larger "
                      "than the body",
                      (long long)*count, (size_t)(c->p - c->base), c->path);
    return true;
}

static bool c_index(cur_t *c, size_t n, int64_t *out)
{
    const unsigned char *s = c->p;
    if (!c_long(c, out)) return false;
    if (*out < 0 || (uint64_t)*out >= n)
        return c_fail(c, SW_ERR_AVRO,
                      "index %lld at byte %zu in field \"%s\" is out of range "
                      "(expected 0..%zu)",
                      (long long)*out, (size_t)(s - c->base), c->path, n - 1);
    return true;
}

static bool skip(cur_t *c, const anode_t *w, int depth);

/* The common field types inline: ["null", long] and ["null", string]. */
static inline bool skip_field(cur_t *c, const anode_t *w)
{
    int64_t n = 0;
    if (w->t == AT_UNION && w->n == 2 && w->branches[0]->t == AT_NULL && c->p < c->end &&
        *c->p <= 2) {
        if (*c->p++ == 0) return true;
        w = w->branches[1];
    }
    switch (w->t) {
    case AT_LONG:
    case AT_INT: return c_long(c, &n);
    case AT_STRING:
    case AT_BYTES: return c_long(c, &n) && c_skip_n(c, n);
    default: return skip(c, w, 1);
    }
}

static bool skip(cur_t *c, const anode_t *w, int depth)
{
    int64_t n = 0, size = 0;
    if (depth > SW_AVRO_MAX_DEPTH)
        return c_fail(c, SW_ERR_AVRO, "value nested deeper than %d levels in field \"%s\"",
                      SW_AVRO_MAX_DEPTH, c->path);
    switch (w->t) {
    case AT_NULL: return true;
    case AT_BOOLEAN: return c_skip_n(c, 1);
    case AT_INT:
    case AT_LONG:
    case AT_ENUM: return c_long(c, &n);
    case AT_FLOAT: return c_skip_n(c, 4);
    case AT_DOUBLE: return c_skip_n(c, 8);
    case AT_BYTES:
    case AT_STRING: return c_long(c, &n) && c_skip_n(c, n);
    case AT_FIXED: return c_skip_n(c, w->size);
    case AT_RECORD:
        for (size_t i = 0; i < w->n; i++)
            if (!skip(c, w->fields[i].type, depth + 1)) return false;
        return true;
    case AT_UNION: return c_index(c, w->n, &n) && skip(c, w->branches[n], depth + 1);
    case AT_ARRAY:
    case AT_MAP:
        for (;;) {
            if (!c_block(c, &n, &size)) return false;
            if (n == 0) return true;
            if (size >= 0) {
                c->p += size;
                continue;
            }
            for (int64_t i = 0; i < n; i++) {
                if (w->t == AT_MAP && !skip(c, &(anode_t){.t = AT_STRING}, depth + 1)) return false;
                if (!skip(c, w->items, depth + 1)) return false;
            }
        }
    }
    return false;
}

static bool rewrite(cur_t *c, const op_t *op, sw_buf_t *out, int depth);

static bool rewrite_record(cur_t *c, const op_t *op, sw_buf_t *out, int depth)
{
    const anode_t *w = op->w;
    if (op->in_order) { /* same fields, same order: one pass */
        for (size_t i = 0; i < op->nr; i++) {
            c->path = op->fop[i]->path;
            if (!rewrite(c, op->fop[i], out, depth + 1)) return false;
        }
        return true;
    }
    const unsigned char *at[SW_AVRO_MAX_FIELDS + 1];
    for (size_t k = 0; k < w->n; k++) {
        at[k] = c->p;
        c->path = op->path;
        if (!skip(c, w->fields[k].type, depth + 1)) return false;
    }
    const unsigned char *after = c->p;
    for (size_t i = 0; i < op->nr; i++) {
        if (op->from[i] < 0) {
            sw_buf_put(out, op->dflt[i].ptr, op->dflt[i].len);
            continue;
        }
        c->p = at[op->from[i]];
        c->path = op->fop[i]->path;
        if (!rewrite(c, op->fop[i], out, depth + 1)) return false;
    }
    c->p = after;
    return true;
}

static bool rewrite(cur_t *c, const op_t *op, sw_buf_t *out, int depth)
{
    const unsigned char *s = c->p;
    int64_t n = 0, size = 0;
    if (depth > SW_AVRO_MAX_DEPTH)
        return c_fail(c, SW_ERR_AVRO, "value nested deeper than %d levels in field \"%s\"",
                      SW_AVRO_MAX_DEPTH, c->path);
    switch (op->k) {
    case OP_COPY:
        if (!skip(c, op->w, depth)) return false;
        sw_buf_put(out, s, (size_t)(c->p - s));
        return true;
    case OP_TO_FLOAT:
    case OP_TO_DOUBLE:
    case OP_F2D: {
        double d = 0;
        if (op->k == OP_F2D) {
            float f = 0;
            if (!c_skip_n(c, 4)) return false;
            memcpy(&f, s, 4);
            d = f;
        } else {
            if (!c_long(c, &n)) return false;
            d = (double)n;
        }
        if (op->k == OP_TO_FLOAT) {
            float f = (float)d;
            sw_buf_put(out, &f, 4);
        } else {
            sw_buf_put(out, &d, 8);
        }
        return true;
    }
    case OP_RECORD: return rewrite_record(c, op, out, depth);
    case OP_ARRAY:
    case OP_MAP:
        for (;;) {
            if (!c_block(c, &n, &size)) return false;
            sw_avro_put_zz(out, n);
            if (n == 0) return true;
            for (int64_t i = 0; i < n; i++) {
                if (op->k == OP_MAP) {
                    const unsigned char *k = c->p;
                    if (!c_long(c, &size) || !c_skip_n(c, size)) return false;
                    sw_buf_put(out, k, (size_t)(c->p - k));
                }
                if (!rewrite(c, op->sub, out, depth + 1)) return false;
            }
        }
    case OP_WUNION:
        if (!c_index(c, op->w->n, &n)) return false;
        return rewrite(c, op->wb[n], out, depth + 1);
    case OP_TO_UNION: sw_avro_put_zz(out, op->branch); return rewrite(c, op->sub, out, depth + 1);
    case OP_ENUM:
        if (!c_index(c, op->w->n, &n)) return false;
        if (op->emap[n] < 0)
            return c_fail(c, SW_ERR_AVRO,
                          "field \"%s\": enum symbol \"%.*s\" at byte %zu is not in the reader "
                          "schema, which has no default",
                          c->path, (int)op->w->symbols[n].len, op->w->symbols[n].ptr,
                          (size_t)(s - c->base));
        sw_avro_put_zz(out, op->emap[n]);
        return true;
    case OP_FAIL: return c_fail(c, SW_ERR_AVRO, "%s (at byte %zu)", op->why, (size_t)(s - c->base));
    }
    return false;
}

sw_err_t sw_avro_plan_rewrite(const sw_avro_plan_t *plan, const void *body, size_t len,
                              sw_buf_t *out, char *errstr, size_t errstr_size)
{
    cur_t c;
    c.base = body ? body : (const void *)"";
    c.p = c.base;
    c.end = c.base + len;
    c.id = plan->id;
    c.path = "";
    c.err = SW_OK;
    c.errstr = errstr;
    c.errstr_size = errstr_size;
    if (!rewrite(&c, plan->root, out, 0)) return c.err;
    if (c.p != c.end)
        c_fail(&c, SW_ERR_AVRO, "%zu trailing bytes at byte %zu after the record",
               (size_t)(c.end - c.p), (size_t)(c.p - c.base));
    return c.err;
}

size_t sw_avro_plan_nfields(const sw_avro_plan_t *plan)
{
    return plan->root->k == OP_RECORD ? plan->root->nr : 0;
}

sw_err_t sw_avro_plan_fields(const sw_avro_plan_t *plan, const void *body, size_t len,
                             sw_avro_span_t *spans, sw_buf_t *scratch, char *errstr,
                             size_t errstr_size)
{
    const op_t *op = plan->root;
    const anode_t *w = op->w;
    cur_t c;
    c.base = body ? body : (const void *)"";
    c.p = c.base;
    c.end = c.base + len;
    c.id = plan->id;
    c.path = "";
    c.err = SW_OK;
    c.errstr = errstr;
    c.errstr_size = errstr_size;
    scratch->len = 0;
    const unsigned char *at[SW_AVRO_MAX_FIELDS + 1];
    /* The common field types inline while 20 bytes are left (a varint
     * takes at most 10); anything else, and any doubt, the careful way. */
    const unsigned char *p = c.p, *end = c.end;
    const unsigned char *kind = plan->fields_kind;
    for (size_t k = 0; k < w->n; k++) {
        at[k] = p;
        if (end - p < 20) goto careful;
        switch (kind[k]) {
        case FK_NULL: continue;
        case FK_OPT_OTHER:
            if (*p != 0) goto careful;
            p++;
            continue;
        case FK_OPT_VARINT:
            if (*p == 0) {
                p++;
                continue;
            }
            if (*p++ != 2) goto careful;
            __attribute__((fallthrough));
        case FK_VARINT: {
            /* The varint ends at the first byte without its top bit. */
            uint64_t x;
            memcpy(&x, p, 8);
            uint64_t stop = ~x & UINT64_C(0x8080808080808080);
            if (stop) p += ((unsigned)__builtin_ctzll(stop) >> 3) + 1;
            else if (p[8] < 0x80) p += 9; /* timestamps in ns */
            else goto careful;            /* 10 bytes */
            continue;
        }
        case FK_OPT_LEN:
            if (*p == 0) {
                p++;
                continue;
            }
            if (*p++ != 2) goto careful;
            __attribute__((fallthrough));
        case FK_LEN: {
            int64_t n;
            if (p[0] < 0x80) { /* under 64 bytes: one length byte */
                n = (int64_t)(p[0] >> 1) ^ -(int64_t)(p[0] & 1);
                p++;
            } else {
                uint64_t v = 0;
                unsigned i = 0;
                for (; i < 9; i++) {
                    v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
                    if (p[i] < 0x80) break;
                }
                if (i == 9) goto careful;
                p += i + 1;
                n = (int64_t)((v >> 1) ^ (0 - (v & 1)));
            }
            if (n < 0 || n > end - p) goto careful;
            p += n;
            continue;
        }
        default: break;
        }
    careful:
        c.p = p = at[k];
        if (!skip_field(&c, w->fields[k].type)) {
            c.err = SW_OK; /* again, with the field's name in the message */
            c.p = at[k];
            char fp[256];
            snprintf(fp, sizeof(fp), "%.*s", (int)w->fields[k].name.len, w->fields[k].name.ptr);
            c.path = fp;
            skip(&c, w->fields[k].type, 1);
            return c.err ? c.err : SW_ERR_AVRO;
        }
        p = c.p;
    }
    c.p = p;
    at[w->n] = c.p;
    if (c.p != c.end) {
        c_fail(&c, SW_ERR_AVRO, "%zu trailing bytes at byte %zu after the record",
               (size_t)(c.end - c.p), (size_t)(c.p - c.base));
        return c.err;
    }
    /* The body's end is restored for the spans (the last rewrite narrowed it). */
    const unsigned char *body_end = c.end;
    /* Scratch may move while it grows: offsets first, pointers at the end. */
    size_t sofs[SW_AVRO_MAX_FIELDS + 1];
    const int16_t *src = plan->fields_src;
    bool convert = plan->has_convert;
    if (!plan->has_default) {
        for (size_t i = 0; i < op->nr; i++) {
            spans[i].p = at[src[i] < 0 ? 0 : src[i]];
            spans[i].end = body_end;
        }
    } else {
        for (size_t i = 0; i < op->nr; i++) {
            bool own = src[i] >= 0;
            spans[i].p = own ? at[src[i]] : (const unsigned char *)op->dflt[i].ptr;
            spans[i].end = own ? body_end : plan->dflt_end;
        }
    }
    for (size_t i = 0; convert && i < op->nr; i++) {
        int wk = op->from[i];
        if (src[i] != FS_CONVERT) continue;
        sofs[i] = scratch->len;
        c.p = at[wk];
        c.end = at[wk + 1];
        c.path = op->fop[i]->path;
        if (!rewrite(&c, op->fop[i], scratch, 1)) return c.err;
    }
    const unsigned char *sb = (const unsigned char *)(scratch->data ? scratch->data : "");
    for (size_t i = 0; convert && i < op->nr; i++) {
        if (src[i] != FS_CONVERT) continue;
        spans[i].p = sb + sofs[i];
        spans[i].end = sb + scratch->len;
    }
    return SW_OK;
}

/* ---- the compiled steps (see sw_avro_resolve.h) ------------------------ */

const sw_avro_step_t *sw_avro_plan_steps(const sw_avro_plan_t *plan, size_t *n)
{
    *n = plan->steps ? plan->root->w->n : 0;
    return plan->steps;
}

const sw_avro_default_t *sw_avro_plan_defaults(const sw_avro_plan_t *plan, size_t *n)
{
    *n = plan->ndflt;
    return plan->dflts;
}

/* A cursor for the calls below: no message (the caller decodes again
 * through sw_avro_plan_fields() for that). */
static void cur_quiet(cur_t *c, const sw_avro_plan_t *plan, const unsigned char *p,
                      const unsigned char *end)
{
    c->base = c->p = p;
    c->end = end;
    c->id = plan->id;
    c->path = "";
    c->err = SW_OK;
    c->errstr = NULL;
    c->errstr_size = 0;
}

/* A varint within [p, end), byte by byte (fields near the body's end):
 * @returns its end, or NULL when it does not end there or takes 10 bytes. */
static inline const unsigned char *varint_end(const unsigned char *p, const unsigned char *end,
                                              uint64_t *v)
{
    *v = 0;
    for (unsigned i = 0; i < 9 && p + i < end; i++) {
        *v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (p[i] < 0x80) return p + i + 1;
    }
    return NULL;
}

bool sw_avro_plan_skip(const sw_avro_plan_t *plan, size_t k, const unsigned char **p,
                       const unsigned char *end)
{
    /* The common kinds here; the rest, and any doubt, the careful way. */
    const unsigned char *q = *p, *e;
    uint64_t v;
    unsigned char kind = plan->fields_kind[k];
    if (kind == FK_LEN && q < end && *q < 0x80 && !(*q & 1) &&
        (size_t)(*q >> 1) < (size_t)(end - q)) {
        *p = q + 1 + (*q >> 1); /* a string under 64 bytes */
        return true;
    }
    if (kind == FK_NULL) return true;
    if (q < end && (kind == FK_OPT_OTHER || kind == FK_OPT_VARINT || kind == FK_OPT_LEN)) {
        if (*q == 0) {
            *p = q + 1;
            return true;
        }
        if (*q != 2 || kind == FK_OPT_OTHER) goto careful;
        q++;
        kind = kind == FK_OPT_VARINT ? FK_VARINT : FK_LEN;
    }
    if (kind == FK_VARINT && (e = varint_end(q, end, &v)) != NULL) {
        *p = e;
        return true;
    }
    if (kind == FK_LEN && (e = varint_end(q, end, &v)) != NULL && !(v & 1) &&
        (v >> 1) <= (uint64_t)(end - e)) {
        *p = e + (v >> 1);
        return true;
    }
careful:;
    cur_t c;
    cur_quiet(&c, plan, *p, end);
    if (!skip_field(&c, plan->root->w->fields[k].type)) return false;
    *p = c.p;
    return true;
}

bool sw_avro_plan_convert(const sw_avro_plan_t *plan, size_t slot, const unsigned char *p,
                          const unsigned char *end, sw_buf_t *out)
{
    cur_t c;
    cur_quiet(&c, plan, p, end);
    return rewrite(&c, plan->root->fop[slot], out, 1) && c.p == c.end;
}
