/*
 * Strict JSON scanning (see sw_json.h). The hot loops are byte-class table
 * lookups; nothing allocates. Unescaped strings are written to a scratch
 * area that is at least as long as the input, which is always enough
 * because no escape expands.
 */
#include "sw_json.h"

#include <string.h>
#include <stdlib.h>

#include "sw_alloc.h"

/* Byte classes inside a string: 0 plain ASCII, 1 quote, 2 backslash,
 * 3 control character, 4 start of a multi-byte UTF-8 sequence. */
static const unsigned char k_str_class[256] = {
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
};

static bool fail(sw_jscan_t *js, const char *at, const char *msg)
{
    js->err = msg;
    js->err_at = at;
    return false;
}

bool sw_jscan_expect(sw_jscan_t *js, char c, const char *what)
{
    sw_jscan_ws(js);
    if (js->p < js->end && *js->p == c) {
        js->p++;
        return true;
    }
    return fail(js, js->p, js->p < js->end ? what : "unexpected end of line");
}

bool sw_jscan_end(sw_jscan_t *js)
{
    sw_jscan_ws(js);
    return js->p == js->end || fail(js, js->p, "unexpected data after the value");
}

/* Length of a valid UTF-8 sequence at p (strict: no overlongs, no encoded
 * surrogates, nothing past U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned char c = p[0];
    if (c >= 0xc2 && c <= 0xdf) {
        if (end - p < 2 || (p[1] & 0xc0) != 0x80) return 0;
        return 2;
    }
    if (c >= 0xe0 && c <= 0xef) {
        if (end - p < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80) return 0;
        if (c == 0xe0 && p[1] < 0xa0) return 0;  /* overlong */
        if (c == 0xed && p[1] >= 0xa0) return 0; /* surrogate */
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        if (end - p < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
            return 0;
        if (c == 0xf0 && p[1] < 0x90) return 0;  /* overlong */
        if (c == 0xf4 && p[1] >= 0x90) return 0; /* > U+10FFFF */
        return 4;
    }
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool sw_json_hex4(const char *p, const char *end, uint32_t *out)
{
    if (end - p < 4) return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0) return false;
        v = (v << 4) | (uint32_t)h;
    }
    *out = v;
    return true;
}

size_t sw_json_put_utf8(char *d, uint32_t cp)
{
    if (cp < 0x80) {
        d[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (char)(0xc0 | (cp >> 6));
        d[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (char)(0xe0 | (cp >> 12));
        d[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        d[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    d[0] = (char)(0xf0 | (cp >> 18));
    d[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    d[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    d[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

bool sw_jscan_string(sw_jscan_t *js, sw_str_t *out)
{
    const char *p = js->p;
    const char *end = js->end;
    if (p >= end || *p != '"') return fail(js, p, "expected a string");
    const char *s = ++p;
    /* Fast path: plain ASCII up to the closing quote. */
    for (;;) {
        p = sw_json_skip_plain(p, end);
        if (p >= end) return fail(js, s - 1, "unterminated string");
        unsigned char cls = k_str_class[(unsigned char)*p];
        if (cls == 1) {
            out->ptr = s;
            out->len = (size_t)(p - s);
            js->p = p + 1;
            return true;
        }
        if (cls == 4) {
            size_t n = utf8_len((const unsigned char *)p, (const unsigned char *)end);
            if (!n) return fail(js, p, "invalid UTF-8 in string");
            p += n;
            continue;
        }
        if (cls == 3) return fail(js, p, "control character in string");
        break; /* backslash: slow path */
    }
    /* Slow path: copy what we have, then unescape the rest. */
    char *d0 = js->scratch + js->scratch_used;
    char *d = d0;
    memcpy(d, s, (size_t)(p - s));
    d += p - s;
    for (;;) {
        if (p >= end) return fail(js, s - 1, "unterminated string");
        unsigned char c = (unsigned char)*p;
        unsigned char cls = k_str_class[c];
        if (cls == 0) {
            *d++ = (char)c;
            p++;
            continue;
        }
        if (cls == 1) break;
        if (cls == 3) return fail(js, p, "control character in string");
        if (cls == 4) {
            size_t n = utf8_len((const unsigned char *)p, (const unsigned char *)end);
            if (!n) return fail(js, p, "invalid UTF-8 in string");
            memcpy(d, p, n);
            d += n;
            p += n;
            continue;
        }
        /* Escape. */
        if (end - p < 2) return fail(js, p, "unterminated string");
        char e = p[1];
        switch (e) {
        case '"': *d++ = '"'; break;
        case '\\': *d++ = '\\'; break;
        case '/': *d++ = '/'; break;
        case 'b': *d++ = '\b'; break;
        case 'f': *d++ = '\f'; break;
        case 'n': *d++ = '\n'; break;
        case 'r': *d++ = '\r'; break;
        case 't': *d++ = '\t'; break;
        case 'u': {
            uint32_t cp;
            if (!sw_json_hex4(p + 2, end, &cp)) return fail(js, p, "invalid \\u escape in string");
            p += 6;
            if (cp >= 0xd800 && cp <= 0xdbff && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
                uint32_t lo;
                if (sw_json_hex4(p + 2, end, &lo) && lo >= 0xdc00 && lo <= 0xdfff) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    p += 6;
                }
            }
            d += sw_json_put_utf8(d, cp);
            continue;
        }
        default: return fail(js, p, "invalid escape in string");
        }
        p += 2;
    }
    out->ptr = d0;
    out->len = (size_t)(d - d0);
    js->scratch_used += out->len;
    js->p = p + 1;
    return true;
}

/* Number at the cursor; Python's json also takes NaN and +-Infinity. */
static bool scan_number(sw_jscan_t *js, sw_jval_t *v)
{
    const char *p = js->p, *end = js->end, *s = p;
    bool neg = false;
    if (p < end && *p == '-') {
        neg = true;
        p++;
    }
    if (p < end && *p == 'I') {
        if (end - p >= 8 && memcmp(p, "Infinity", 8) == 0) {
            js->p = p + 8;
            v->type = SW_J_FLOAT;
            return true;
        }
        return fail(js, s, "invalid number");
    }
    if (p >= end || *p < '0' || *p > '9') return fail(js, s, "invalid number");
    uint64_t mag = 0;
    bool big = false;
    if (*p == '0') {
        p++;
    } else {
        /* Up to 19 digits cannot overflow uint64; 20 or more exceed int64
         * whatever they are, which is all the caller needs to know. */
        p = sw_json_digits(p, end, &mag, &big);
    }
    bool is_int = true;
    if (p < end && *p == '.') {
        is_int = false;
        p++;
        if (p >= end || *p < '0' || *p > '9') return fail(js, s, "invalid number");
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_int = false;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') return fail(js, s, "invalid number");
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    js->p = p;
    if (!is_int) {
        v->type = SW_J_FLOAT;
        return true;
    }
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (big || mag > limit) {
        v->type = SW_J_BIGINT;
        return true;
    }
    v->type = SW_J_INT;
    v->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return true;
}

static bool scan_literal(sw_jscan_t *js, const char *lit, size_t n, sw_jtype_t t, sw_jval_t *v)
{
    if ((size_t)(js->end - js->p) < n || memcmp(js->p, lit, n) != 0)
        return fail(js, js->p, "invalid literal");
    js->p += n;
    v->type = t;
    return true;
}

/* Skip a container without recursion: an explicit stack of open brackets
 * and a four-state machine. Strings inside are validated, then their
 * scratch space is given back. */
static bool skip_container(sw_jscan_t *js, int depth)
{
    enum { FIRST, KEY, VALUE, AFTER } st = FIRST;
    char stack[SW_JSON_MAX_DEPTH];
    int top = 0;
    size_t used = js->scratch_used;
    if (depth >= SW_JSON_MAX_DEPTH) return fail(js, js->p, "nesting deeper than 256 levels");
    stack[top++] = *js->p++;
    for (;;) {
        sw_jscan_ws(js);
        if (js->p >= js->end) return fail(js, js->p, "unexpected end of line");
        char c = *js->p;
        bool in_obj = stack[top - 1] == '{';
        char close = in_obj ? '}' : ']';
        switch (st) {
        case FIRST:
            if (c == close) goto closed;
            st = in_obj ? KEY : VALUE;
            continue;
        case KEY: {
            sw_str_t k;
            if (c != '"') return fail(js, js->p, "expected a string key");
            if (!sw_jscan_string(js, &k)) return false;
            if (!sw_jscan_expect(js, ':', "expected ':' after object key")) return false;
            st = VALUE;
            continue;
        }
        case VALUE:
            if (c == '{' || c == '[') {
                if (depth + top >= SW_JSON_MAX_DEPTH)
                    return fail(js, js->p, "nesting deeper than 256 levels");
                stack[top++] = c;
                js->p++;
                st = FIRST;
                continue;
            } else {
                sw_jval_t tmp;
                if (!sw_jscan_value(js, &tmp, depth + top)) return false;
                js->scratch_used = used;
                st = AFTER;
                continue;
            }
        case AFTER:
            if (c == ',') {
                js->p++;
                st = in_obj ? KEY : VALUE;
                continue;
            }
            if (c == close) goto closed;
            return fail(js, js->p,
                        in_obj ? "expected ',' or '}' in object" : "expected ',' or ']' in array");
        }
    closed:
        js->p++;
        top--;
        st = AFTER;
        if (top == 0) break;
    }
    js->scratch_used = used;
    return true;
}

bool sw_jscan_value(sw_jscan_t *js, sw_jval_t *v, int depth)
{
    sw_jscan_ws(js);
    v->raw = js->p;
    if (js->p >= js->end) return fail(js, js->p, "unexpected end of line");
    bool ok;
    switch (*js->p) {
    case '"':
        v->type = SW_J_STRING;
        ok = sw_jscan_string(js, &v->s);
        break;
    case '{':
    case '[':
        v->type = *js->p == '{' ? SW_J_OBJECT : SW_J_ARRAY;
        ok = skip_container(js, depth);
        break;
    case 'n': ok = scan_literal(js, "null", 4, SW_J_NULL, v); break;
    case 't': ok = scan_literal(js, "true", 4, SW_J_TRUE, v); break;
    case 'f': ok = scan_literal(js, "false", 5, SW_J_FALSE, v); break;
    case 'N': ok = scan_literal(js, "NaN", 3, SW_J_FLOAT, v); break;
    case 'I': ok = scan_literal(js, "Infinity", 8, SW_J_FLOAT, v); break;
    default:
        if (*js->p == '-' || (*js->p >= '0' && *js->p <= '9')) ok = scan_number(js, v);
        else ok = fail(js, js->p, "unexpected character");
        break;
    }
    v->raw_len = (size_t)(js->p - v->raw);
    return ok;
}

size_t sw_json_members_except(sw_str_t obj, const char *key, sw_buf_t *out)
{
    size_t klen = strlen(key), n = 0;
    char *scratch = sw_malloc(obj.len + 16);
    sw_jscan_t js;
    sw_jscan_init(&js, obj.ptr, obj.len, scratch);
    sw_jscan_ws(&js);
    bool ok = js.p < js.end && *js.p == '{';
    if (ok) {
        js.p++;
        sw_jscan_ws(&js);
        if (js.p < js.end && *js.p == '}') ok = false;
    }
    while (ok) {
        sw_str_t k;
        sw_jval_t v;
        sw_jscan_ws(&js);
        const char *key_at = js.p;
        if (!sw_jscan_string(&js, &k)) break;
        const char *key_end = js.p;
        if (!sw_jscan_expect(&js, ':', "expected ':'")) break;
        sw_jscan_ws(&js);
        if (!sw_jscan_value(&js, &v, 1)) break;
        if (!(k.len == klen && memcmp(k.ptr, key, klen) == 0)) {
            if (n++) sw_buf_put(out, ", ", 2);
            sw_buf_put(out, key_at, (size_t)(key_end - key_at));
            sw_buf_put(out, ": ", 2);
            sw_buf_put(out, v.raw, v.raw_len);
        }
        sw_jscan_ws(&js);
        if (js.p >= js.end || *js.p != ',') break;
        js.p++;
    }
    free(scratch);
    return n;
}

const char *sw_jtype_name(sw_jtype_t t)
{
    switch (t) {
    case SW_J_NULL: return "null";
    case SW_J_TRUE:
    case SW_J_FALSE: return "a boolean";
    case SW_J_INT:
    case SW_J_BIGINT:
    case SW_J_FLOAT: return "a number";
    case SW_J_STRING: return "a string";
    case SW_J_ARRAY: return "an array";
    case SW_J_ABSENT:
    case SW_J_OBJECT: break;
    }
    return "an object";
}
