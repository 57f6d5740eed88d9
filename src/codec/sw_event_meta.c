/*
 * SPEC 8.1's death markers in an event's metadata (sw_event_meta.h): a
 * scanner over the metadata object's top-level keys, and oom_reason's
 * text unescaped and cut. The metadata is valid JSON (the decoders checked
 * it); keys are compared as written. No I/O, no globals.
 */
#include "sw_event_meta.h"

#include <string.h>

#include "sw_json.h"

/* A scanner over the metadata object's text (valid JSON: the decoders
 * checked it), for its top-level keys. */
typedef struct mscan_s {
    const char *p, *end;
} mscan_t;

static void ms_ws(mscan_t *m)
{
    while (m->p < m->end && (*m->p == ' ' || *m->p == '\t' || *m->p == '\n' || *m->p == '\r'))
        m->p++;
}

/* Skip a string starting at '"'; *raw is its text between the quotes. */
static bool ms_string(mscan_t *m, sw_str_t *raw)
{
    if (m->p >= m->end || *m->p != '"') return false;
    const char *s = ++m->p;
    while (m->p < m->end && *m->p != '"') m->p += *m->p == '\\' ? 2 : 1;
    if (m->p >= m->end) return false;
    raw->ptr = s;
    raw->len = (size_t)(m->p - s);
    m->p++;
    return true;
}

static bool ms_value(mscan_t *m)
{
    ms_ws(m);
    if (m->p >= m->end) return false;
    if (*m->p == '"') {
        sw_str_t raw;
        return ms_string(m, &raw);
    }
    if (*m->p == '{' || *m->p == '[') {
        size_t depth = 0;
        while (m->p < m->end) {
            char c = *m->p;
            if (c == '"') {
                sw_str_t raw;
                if (!ms_string(m, &raw)) return false;
                continue;
            }
            if (c == '{' || c == '[') depth++;
            else if (c == '}' || c == ']') {
                m->p++;
                if (--depth == 0) return true;
                continue;
            }
            m->p++;
        }
        return false;
    }
    while (m->p < m->end && *m->p != ',' && *m->p != '}' && *m->p != ']') m->p++;
    return true;
}

/* Find top-level key @p key; *val_at is where its value starts. */
static bool meta_find(sw_str_t meta, const char *key, const char **val_at, const char **end)
{
    mscan_t m = {meta.ptr, meta.ptr + meta.len};
    ms_ws(&m);
    if (m.p >= m.end || *m.p != '{') return false;
    m.p++;
    size_t klen = strlen(key);
    for (;;) {
        ms_ws(&m);
        sw_str_t k;
        if (!ms_string(&m, &k)) return false;
        ms_ws(&m);
        if (m.p >= m.end || *m.p != ':') return false;
        m.p++;
        ms_ws(&m);
        if (k.len == klen && memcmp(k.ptr, key, klen) == 0) {
            *val_at = m.p;
            *end = m.end;
            return true;
        }
        if (!ms_value(&m)) return false;
        ms_ws(&m);
        if (m.p >= m.end || *m.p != ',') return false;
        m.p++;
    }
}

/* metadata.oom_reason unescaped into @p buf and cut; false when it has no
 * string oom_reason. */
static bool oom_reason(sw_str_t meta, char *buf, sw_str_t *out)
{
    const char *v, *end;
    if (!meta_find(meta, "oom_reason", &v, &end) || v >= end || *v != '"') return false;
    size_t n = 0;
    bool cut = false;
    const char *p = v + 1;
    while (p < end && *p != '"') {
        char tmp[4];
        size_t k;
        if (*p != '\\') {
            /* one UTF-8 sequence */
            unsigned char c = (unsigned char)*p;
            k = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
            if ((size_t)(end - p) < k) k = (size_t)(end - p);
            memcpy(tmp, p, k);
            p += k;
        } else if (p + 1 < end && p[1] == 'u') {
            uint32_t cp;
            if (!sw_json_hex4(p + 2, end, &cp)) cp = 0xfffd;
            p += 6;
            if (cp >= 0xd800 && cp < 0xdc00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
                uint32_t lo;
                if (!sw_json_hex4(p + 2, end, &lo)) lo = 0xfffd;
                if (lo >= 0xdc00 && lo < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    p += 6;
                }
            }
            if (cp >= 0xd800 && cp < 0xe000) cp = 0xfffd;
            k = sw_json_put_utf8(tmp, cp);
        } else {
            char c = p + 1 < end ? p[1] : '\\';
            p += 2;
            tmp[0] = c == 'n'   ? '\n'
                     : c == 't' ? '\t'
                     : c == 'r' ? '\r'
                     : c == 'b' ? '\b'
                     : c == 'f' ? '\f'
                                : c;
            k = 1;
        }
        if (n + k > SW_X8_REASON_MAX) {
            cut = true;
            break;
        }
        memcpy(buf + n, tmp, k);
        n += k;
    }
    if (cut) {
        memcpy(buf + n, "\xe2\x80\xa6", 3); /* "…" */
        n += 3;
    }
    out->ptr = buf;
    out->len = n;
    return true;
}

/* Whether `"oom_` is in the text: keys are compared as written, so the
 * metadata holds it when oom_reason or oom_dump_path is a key, and a
 * phase event's scope (~300 bytes, no such key) is passed over in one
 * look at each 16 bytes instead of two walks of its keys. */
static bool has_oom_text(sw_str_t t)
{
    const char *p = t.ptr, *end = t.ptr + t.len;
#if defined(__SSE2__)
    /* Where a quote is followed by 'o': 17 bytes readable from p. */
    for (; end - p >= 17; p += 16) {
        __m128i q = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)p),
                                   _mm_set1_epi8('"'));
        __m128i o = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 1)),
                                   _mm_set1_epi8('o'));
        for (unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(q, o)); m; m &= m - 1) {
            const char *c = p + __builtin_ctz(m);
            if (end - c >= 5 && memcmp(c, "\"oom_", 5) == 0) return true;
        }
    }
#endif
    for (; end - p >= 5; p++)
        if (*p == '"' && memcmp(p, "\"oom_", 5) == 0) return true;
    return false;
}

void sw_event_meta_oom(sw_event_t *ev, char *buf)
{
    ev->oom_marker = false;
    ev->has_oom_reason = false;
    ev->oom_reason = sw_str("");
    if (ev->kind == SW_EV_SAMPLE) return;
    if (!has_oom_text(ev->metadata_json)) return;
    const char *v, *e;
    ev->oom_marker = meta_find(ev->metadata_json, "oom_reason", &v, &e) ||
                     meta_find(ev->metadata_json, "oom_dump_path", &v, &e);
    if (ev->oom_marker) ev->has_oom_reason = oom_reason(ev->metadata_json, buf, &ev->oom_reason);
}
