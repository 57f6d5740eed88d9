/*
 * JSON writer (see sw_jw.h). Separators follow Python's json.dumps so the
 * compact form looks like the fixtures; comparisons never depend on it.
 */
#include "sw_jw.h"

#include <stdio.h>
#include <string.h>

void sw_jw_init(sw_jw_t *jw, sw_buf_t *buf, int indent)
{
    jw->buf = buf;
    jw->indent = indent;
    jw->depth = 0;
    jw->first[0] = true;
    jw->after_key = false;
}

static void newline(sw_jw_t *jw)
{
    sw_buf_putc(jw->buf, '\n');
    for (int i = 0; i < jw->depth * jw->indent; i++) sw_buf_putc(jw->buf, ' ');
}

/* Separator before a value or key at the current level. */
static void before(sw_jw_t *jw)
{
    if (jw->after_key) {
        jw->after_key = false;
        return;
    }
    if (jw->depth > 0) {
        if (!jw->first[jw->depth]) sw_buf_put(jw->buf, jw->indent ? "," : ", ", jw->indent ? 1 : 2);
        if (jw->indent) newline(jw);
    }
    jw->first[jw->depth] = false;
}

static void jw_open(sw_jw_t *jw, char c)
{
    before(jw);
    sw_buf_putc(jw->buf, c);
    if (jw->depth + 1 < SW_JW_MAX_DEPTH) jw->depth++;
    jw->first[jw->depth] = true;
}

static void jw_close(sw_jw_t *jw, char c)
{
    bool empty = jw->first[jw->depth];
    if (jw->depth > 0) jw->depth--;
    if (jw->indent && !empty) newline(jw);
    sw_buf_putc(jw->buf, c);
}

void sw_jw_obj(sw_jw_t *jw)
{
    jw_open(jw, '{');
}
void sw_jw_arr(sw_jw_t *jw)
{
    jw_open(jw, '[');
}
void sw_jw_end_obj(sw_jw_t *jw)
{
    jw_close(jw, '}');
}
void sw_jw_end_arr(sw_jw_t *jw)
{
    jw_close(jw, ']');
}

void sw_jw_key(sw_jw_t *jw, const char *key)
{
    before(jw);
    sw_json_put_str(jw->buf, sw_str(key));
    sw_buf_put(jw->buf, ": ", 2);
    jw->after_key = true;
}

void sw_jw_key_i64(sw_jw_t *jw, int64_t key)
{
    before(jw);
    sw_buf_putc(jw->buf, '"');
    sw_buf_put_i64(jw->buf, key);
    sw_buf_put(jw->buf, "\": ", 3);
    jw->after_key = true;
}

void sw_jw_i64(sw_jw_t *jw, int64_t v)
{
    before(jw);
    sw_buf_put_i64(jw->buf, v);
}

void sw_jw_u64(sw_jw_t *jw, uint64_t v)
{
    before(jw);
    sw_buf_put_u64(jw->buf, v);
}

void sw_jw_dbl(sw_jw_t *jw, double v)
{
    before(jw);
    char tmp[32];
    snprintf(tmp, sizeof(tmp), "%.17g", v);
    sw_buf_puts(jw->buf, tmp);
}

void sw_jw_bool(sw_jw_t *jw, bool v)
{
    before(jw);
    sw_buf_puts(jw->buf, v ? "true" : "false");
}

void sw_jw_null(sw_jw_t *jw)
{
    before(jw);
    sw_buf_put(jw->buf, "null", 4);
}

void sw_jw_str(sw_jw_t *jw, sw_str_t s)
{
    before(jw);
    sw_json_put_str(jw->buf, s);
}

void sw_jw_cstr(sw_jw_t *jw, const char *s)
{
    sw_jw_str(jw, sw_str(s));
}

void sw_jw_raw(sw_jw_t *jw, sw_str_t json)
{
    before(jw);
    sw_buf_put(jw->buf, json.ptr, json.len);
}

void sw_json_put_str(sw_buf_t *buf, sw_str_t s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s.ptr;
    size_t n = s.len, run = 0;
    sw_buf_reserve(buf, n + 2);
    sw_buf_putc(buf, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        const char *esc = NULL;
        char tmp[8];
        if (c == '"') esc = "\\\"";
        else if (c == '\\') esc = "\\\\";
        else if (c == '\n') esc = "\\n";
        else if (c == '\r') esc = "\\r";
        else if (c == '\t') esc = "\\t";
        else if (c == '\b') esc = "\\b";
        else if (c == '\f') esc = "\\f";
        else if (c < 0x20) {
            tmp[0] = '\\';
            tmp[1] = 'u';
            tmp[2] = '0';
            tmp[3] = '0';
            tmp[4] = hex[c >> 4];
            tmp[5] = hex[c & 15];
            tmp[6] = '\0';
            esc = tmp;
        } else if (c == 0xed && i + 2 < n && p[i + 1] >= 0xa0) {
            /* A lone surrogate kept as WTF-8: write it as \uDXXX. */
            unsigned cp = ((unsigned)(c & 0x0f) << 12) | ((unsigned)(p[i + 1] & 0x3f) << 6) |
                          (p[i + 2] & 0x3f);
            tmp[0] = '\\';
            tmp[1] = 'u';
            tmp[2] = hex[(cp >> 12) & 15];
            tmp[3] = hex[(cp >> 8) & 15];
            tmp[4] = hex[(cp >> 4) & 15];
            tmp[5] = hex[cp & 15];
            tmp[6] = '\0';
            sw_buf_put(buf, p + i - run, run);
            run = 0;
            sw_buf_puts(buf, tmp);
            i += 2;
            continue;
        }
        if (!esc) {
            run++;
            continue;
        }
        sw_buf_put(buf, p + i - run, run);
        run = 0;
        sw_buf_puts(buf, esc);
    }
    sw_buf_put(buf, p + n - run, run);
    sw_buf_putc(buf, '"');
}
