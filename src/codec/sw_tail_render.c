/*
 * How `stormwatch tail` shows a Kafka record (see sw_tail_render.h): the
 * value decoded (JSON as it is, one line; Confluent Avro telemetry or alert
 * records by their schema id, through the registry when there is one;
 * anything else as {"undecodable": true, "error", "value_base64"}), and
 * with the envelope the topic, partition, offset, timestamp, key and
 * headers. No I/O, no librdkafka, no registry: the caller fills the
 * message view, answers plan lookups and writes the line.
 */
#include "sw_tail_render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_codec_pager.h"
#include "sw_codec_record.h"
#include "sw_event_json.h"
#include "sw_json.h"
#include "sw_jw.h"

struct sw_render_s {
    int32_t telemetry_id, alert_id;
    sw_render_plan_fn plans; /* NULL without a registry */
    void *opaque;
    sw_avro_dec_t *adec;
    sw_buf_t val;  /* the value, before the envelope is written */
    char *scratch; /* room for the JSON scanner */
    size_t scratch_cap;
};

sw_render_t *sw_render_new(int32_t telemetry_id, int32_t alert_id, sw_render_plan_fn plans,
                           void *opaque)
{
    sw_render_t *rd = sw_calloc(1, sizeof(*rd));
    rd->telemetry_id = telemetry_id;
    rd->alert_id = alert_id;
    rd->plans = plans;
    rd->opaque = opaque;
    rd->adec = sw_avro_dec_new();
    sw_buf_init(&rd->val);
    return rd;
}

void sw_render_destroy(sw_render_t *rd)
{
    if (!rd) return;
    sw_avro_dec_destroy(rd->adec);
    sw_buf_clear(&rd->val);
    free(rd->scratch);
    free(rd);
}

static void put_base64(sw_buf_t *out, const unsigned char *p, size_t n)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    sw_buf_reserve(out, (n + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        char q[4] = {tbl[v >> 18], tbl[(v >> 12) & 63], tbl[(v >> 6) & 63], tbl[v & 63]};
        sw_buf_put(out, q, 4);
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        char q[4] = {tbl[v >> 18], tbl[(v >> 12) & 63], i + 1 < n ? tbl[(v >> 6) & 63] : '=', '='};
        sw_buf_put(out, q, 4);
    }
}

/* A JSON string of arbitrary bytes: bytes that are not UTF-8 become
 * U+FFFD. @returns false when some were replaced. */
static bool put_bytes_str(sw_jw_t *jw, const void *ptr, size_t len)
{
    const unsigned char *p = ptr;
    size_t i = 0;
    while (i < len) {
        size_t k = sw_utf8_seq(p + i, len - i, true);
        if (k == 0) break;
        i += k;
    }
    if (i == len) {
        sw_jw_str(jw, (sw_str_t){(const char *)p, len});
        return true;
    }
    sw_buf_t tmp;
    sw_buf_init(&tmp);
    for (i = 0; i < len;) {
        size_t k = sw_utf8_seq(p + i, len - i, true);
        if (k) sw_buf_put(&tmp, p + i, k);
        else sw_buf_put(&tmp, "\xef\xbf\xbd", 3);
        i += k ? k : 1;
    }
    sw_jw_str(jw, (sw_str_t){tmp.data, tmp.len});
    sw_buf_clear(&tmp);
    return false;
}

static void put_undecodable(sw_buf_t *out, const char *why, const void *p, size_t n)
{
    sw_jw_t jw;
    sw_jw_init(&jw, out, 0);
    sw_jw_obj(&jw);
    sw_jw_key(&jw, "undecodable");
    sw_jw_bool(&jw, true);
    sw_jw_key(&jw, "error");
    put_bytes_str(&jw, why, strlen(why));
    sw_jw_key(&jw, "value_base64");
    sw_jw_raw(&jw, sw_str("\""));
    put_base64(out, p, n);
    sw_buf_putc(out, '"');
    sw_jw_end_obj(&jw);
}

/* Whitespace outside strings removed: a JSON value on one line. */
static void put_compact(sw_buf_t *out, const char *p, size_t n)
{
    bool in_str = false, esc = false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (in_str) {
            if (esc) esc = false;
            else if (c == '\\') esc = true;
            else if (c == '"') in_str = false;
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            continue;
        } else if (c == '"') {
            in_str = true;
        }
        sw_buf_putc(out, c);
    }
}

/* A JSON value: as it is, trimmed, compacted when it spans lines.
 * @returns false (out unchanged) when the bytes are not one JSON value. */
static bool put_json(sw_render_t *rd, sw_buf_t *out, const char *p, size_t n, char *why,
                     size_t why_size)
{
    if (rd->scratch_cap < n + 16) {
        rd->scratch_cap = n + 16 > 4096 ? n + 16 : 4096;
        free(rd->scratch);
        rd->scratch = sw_malloc(rd->scratch_cap);
    }
    sw_jscan_t js;
    sw_jval_t v;
    sw_jscan_init(&js, p, n, rd->scratch);
    sw_jscan_ws(&js);
    bool ok = js.p < js.end && sw_jscan_value(&js, &v, 0);
    if (ok) {
        ok = sw_jscan_end(&js);
    } else if (js.p >= js.end) {
        js.err = "no value";
        js.err_at = js.p;
    }
    if (!ok) {
        snprintf(why, why_size, "not JSON (%s at column %zu) and not Confluent-framed Avro",
                 js.err ? js.err : "invalid", sw_jscan_offset(&js, js.err_at) + 1);
        return false;
    }
    if (memchr(v.raw, '\n', v.raw_len) || memchr(v.raw, '\r', v.raw_len))
        put_compact(out, v.raw, v.raw_len);
    else sw_buf_put(out, v.raw, v.raw_len);
    return true;
}

void sw_render_value(sw_render_t *rd, sw_buf_t *out, const void *payload, size_t len)
{
    char why[512];
    if (!payload) {
        sw_buf_puts(out, "null");
        return;
    }
    const unsigned char *p = payload;
    if (sw_avro_is_framed(p, len)) {
        int32_t id;
        if (sw_avro_schema_id(p, len, &id, why, sizeof(why)) != SW_OK) {
            put_undecodable(out, why, p, len);
            return;
        }
        if (rd->plans) { /* the registry says what the id is */
            const sw_avro_plan_t *plan = NULL;
            sw_event_t ev;
            sw_err_t err = rd->plans(rd->opaque, id, true, &plan, why, sizeof(why));
            if (!err &&
                sw_avro_decode_record_json_plan(plan, p, len, out, why, sizeof(why)) == SW_OK)
                return;
            if (err != SW_ERR_IO &&
                rd->plans(rd->opaque, id, false, &plan, why, sizeof(why)) == SW_OK &&
                sw_avro_decode_event_plan(rd->adec, plan, p, len, &ev, why, sizeof(why)) == SW_OK) {
                sw_event_json(out, &ev);
                return;
            }
            put_undecodable(out, why, p, len);
            return;
        }
        if (id == rd->alert_id &&
            sw_avro_decode_record_json(p, len, id, out, why, sizeof(why)) == SW_OK)
            return;
        if (id == rd->telemetry_id) {
            sw_event_t ev;
            if (sw_avro_decode_event(rd->adec, p, len, id, &ev, why, sizeof(why)) == SW_OK) {
                sw_event_json(out, &ev);
                return;
            }
        }
        if (id != rd->alert_id && id != rd->telemetry_id)
            snprintf(why, sizeof(why),
                     "Avro schema id %d is neither the telemetry id (%d) nor the alert id (%d)",
                     (int)id, (int)rd->telemetry_id, (int)rd->alert_id);
        put_undecodable(out, why, p, len);
        return;
    }
    if (!put_json(rd, out, payload, len, why, sizeof(why))) put_undecodable(out, why, p, len);
}

static void put_headers(sw_jw_t *jw, const sw_msg_view_t *msg)
{
    sw_jw_obj(jw);
    for (size_t i = 0; i < msg->nheaders; i++) {
        const sw_msg_header_t *h = &msg->headers[i];
        /* A repeated name: the last one wins (a JSON object has one). */
        bool later = false;
        for (size_t j = i + 1; j < msg->nheaders && !later; j++)
            later = !strcmp(h->name, msg->headers[j].name);
        if (later) continue;
        sw_jw_key(jw, h->name);
        if (h->value) put_bytes_str(jw, h->value, h->size);
        else sw_jw_null(jw);
    }
    sw_jw_end_obj(jw);
}

/* A record's place, the first keys of both envelopes: topic, partition, offset. */
static void put_position(sw_jw_t *jw, const sw_msg_view_t *msg)
{
    sw_jw_key(jw, "topic");
    sw_jw_cstr(jw, msg->topic);
    sw_jw_key(jw, "partition");
    sw_jw_i64(jw, msg->partition);
    sw_jw_key(jw, "offset");
    sw_jw_i64(jw, msg->offset);
}

void sw_render_message(sw_render_t *rd, sw_buf_t *line, bool envelope, const sw_msg_view_t *msg)
{
    line->len = 0;
    if (!envelope) {
        sw_render_value(rd, line, msg->payload, msg->len);
        sw_buf_putc(line, '\n');
        return;
    }
    rd->val.len = 0;
    sw_render_value(rd, &rd->val, msg->payload, msg->len);
    sw_jw_t jw;
    sw_jw_init(&jw, line, 0);
    sw_jw_obj(&jw);
    put_position(&jw, msg);
    sw_jw_key(&jw, "timestamp_ms");
    if (msg->tstype == SW_MSG_TS_NONE) sw_jw_null(&jw);
    else sw_jw_i64(&jw, msg->timestamp_ms);
    sw_jw_key(&jw, "key");
    bool key_utf8 = true;
    if (msg->key) key_utf8 = put_bytes_str(&jw, msg->key, msg->key_len);
    else sw_jw_null(&jw);
    if (!key_utf8) {
        /* Not text: the exact bytes as well. */
        sw_jw_key(&jw, "key_base64");
        sw_jw_raw(&jw, sw_str("\""));
        put_base64(line, msg->key, msg->key_len);
        sw_buf_putc(line, '"');
    }
    sw_jw_key(&jw, "headers");
    put_headers(&jw, msg);
    sw_jw_key(&jw, "value");
    sw_jw_raw(&jw, (sw_str_t){rd->val.data, rd->val.len});
    sw_jw_end_obj(&jw);
    sw_buf_putc(line, '\n');
}

void sw_render_text(sw_render_t *rd, sw_buf_t *line, const sw_msg_view_t *msg)
{
    line->len = 0;
    rd->val.len = 0;
    sw_render_value(rd, &rd->val, msg->payload, msg->len);
    sw_arena_t arena;
    sw_arena_init(&arena);
    sw_record_t rec;
    char why[256];
    if (msg->payload &&
        sw_record_parse_json(rd->val.data, rd->val.len, &arena, &rec, why, sizeof(why)) == SW_OK) {
        /* An alert record, as replay --output-format text writes it: the
         * action, then the title the pagers carry (crash and warning
         * records included). */
        const char *a = sw_action_str(rec.action);
        sw_buf_puts(line, a);
        for (size_t k = strlen(a); k < 9; k++) sw_buf_putc(line, ' ');
        size_t start = line->len;
        sw_pager_title(&rec, line);
        for (size_t k = start; k < line->len; k++) /* one line, whatever the job id holds */
            if (line->data[k] == '\n' || line->data[k] == '\r') line->data[k] = ' ';
    } else {
        sw_buf_put(line, rd->val.data, rd->val.len); /* not an alert: its JSON */
    }
    sw_arena_clear(&arena);
    sw_buf_putc(line, '\n');
}

/* kcat -J's "key"/"payload": text as a string, null as null; bytes that
 * are not text (not UTF-8, or holding NUL, which many JSON readers refuse)
 * as "NAME_base64" instead. */
static void kcat_bytes(sw_jw_t *jw, sw_buf_t *line, const char *name, const void *ptr, size_t len)
{
    const unsigned char *p = ptr;
    bool text = p != NULL && memchr(p, 0, len) == NULL;
    for (size_t i = 0, k; text && i < len; i += k) text = (k = sw_utf8_seq(p + i, len - i, true));
    if (!p || text) {
        sw_jw_key(jw, name);
        if (p) sw_jw_str(jw, (sw_str_t){(const char *)p, len});
        else sw_jw_null(jw);
        return;
    }
    char key[32];
    snprintf(key, sizeof(key), "%s_base64", name);
    sw_jw_key(jw, key);
    sw_jw_raw(jw, sw_str("\""));
    put_base64(line, p, len);
    sw_buf_putc(line, '"');
}

void sw_render_kcat_json(sw_render_t *rd, sw_buf_t *line, const sw_msg_view_t *msg)
{
    line->len = 0;
    sw_jw_t jw;
    sw_jw_init(&jw, line, 0);
    sw_jw_obj(&jw);
    put_position(&jw, msg);
    sw_jw_key(&jw, "tstype");
    sw_jw_cstr(&jw, msg->tstype == SW_MSG_TS_CREATE      ? "create"
                    : msg->tstype == SW_MSG_TS_LOGAPPEND ? "logappend"
                                                         : "none");
    sw_jw_key(&jw, "ts");
    sw_jw_i64(&jw, msg->tstype == SW_MSG_TS_NONE ? -1 : msg->timestamp_ms);
    sw_jw_key(&jw, "broker");
    sw_jw_i64(&jw, msg->broker);
    if (msg->nheaders > 0) {
        sw_jw_key(&jw, "headers");
        sw_jw_arr(&jw);
        for (size_t i = 0; i < msg->nheaders; i++) {
            const sw_msg_header_t *h = &msg->headers[i];
            sw_jw_cstr(&jw, h->name);
            if (h->value) put_bytes_str(&jw, h->value, h->size);
            else sw_jw_null(&jw);
        }
        sw_jw_end_arr(&jw);
    }
    kcat_bytes(&jw, line, "key", msg->key, msg->key_len);
    kcat_bytes(&jw, line, "payload", msg->payload, msg->len);
    int32_t id;
    char why[256];
    if (msg->payload && sw_avro_is_framed(msg->payload, msg->len) &&
        sw_avro_schema_id(msg->payload, msg->len, &id, why, sizeof(why)) == SW_OK) {
        sw_jw_key(&jw, "schema_id");
        sw_jw_i64(&jw, id);
        rd->val.len = 0;
        sw_render_value(rd, &rd->val, msg->payload, msg->len);
        sw_jw_key(&jw, "value");
        sw_jw_raw(&jw, (sw_str_t){rd->val.data, rd->val.len});
    }
    sw_jw_end_obj(&jw);
    sw_buf_putc(line, '\n');
}

sw_err_t sw_render_format_check(const char *fmt, char *errstr, size_t errstr_size)
{
    for (size_t i = 0; fmt[i]; i++) {
        if (fmt[i] == '%') {
            if (fmt[i + 1] && strchr("tpoksThSK%", fmt[i + 1])) {
                i++;
                continue;
            }
            sw_errfmt(errstr, errstr_size,
                      "-f \"%s\": unsupported token \"%%%.1s\" at position %zu (expected %%t %%p "
                      "%%o %%k %%s %%T %%h %%S %%K or %%%%)",
                      fmt, fmt[i + 1] ? fmt + i + 1 : "", i + 1);
            return SW_ERR_PARSE;
        }
        if (fmt[i] == '\\') {
            if (fmt[i + 1] && strchr("ntr\\", fmt[i + 1])) {
                i++;
                continue;
            }
            sw_errfmt(errstr, errstr_size,
                      "-f \"%s\": unsupported escape \"\\%.1s\" at position %zu (expected \\n "
                      "\\t \\r or \\\\)",
                      fmt, fmt[i + 1] ? fmt + i + 1 : "", i + 1);
            return SW_ERR_PARSE;
        }
    }
    return SW_OK;
}

void sw_render_format(const char *fmt, sw_buf_t *line, const sw_msg_view_t *msg)
{
    line->len = 0;
    for (size_t i = 0; fmt[i]; i++) {
        char c = fmt[i];
        if (c == '\\' && fmt[i + 1]) {
            c = fmt[++i];
            sw_buf_putc(line, c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c);
            continue;
        }
        if (c != '%' || !fmt[i + 1]) {
            sw_buf_putc(line, c);
            continue;
        }
        switch (fmt[++i]) {
        case 't': sw_buf_puts(line, msg->topic); break;
        case 'p': sw_buf_put_i64(line, msg->partition); break;
        case 'o': sw_buf_put_i64(line, msg->offset); break;
        case 'k':
            if (msg->key) sw_buf_put(line, msg->key, msg->key_len);
            break;
        case 's':
            if (msg->payload) sw_buf_put(line, msg->payload, msg->len);
            break;
        case 'K': sw_buf_put_i64(line, msg->key ? (int64_t)msg->key_len : -1); break;
        case 'S': sw_buf_put_i64(line, msg->payload ? (int64_t)msg->len : -1); break;
        case 'T':
            sw_buf_put_i64(line, msg->tstype == SW_MSG_TS_NONE ? -1 : msg->timestamp_ms);
            break;
        case 'h':
            for (size_t k = 0; k < msg->nheaders; k++) {
                const sw_msg_header_t *h = &msg->headers[k];
                if (k) sw_buf_putc(line, ',');
                sw_buf_puts(line, h->name);
                sw_buf_putc(line, '=');
                if (h->value) sw_buf_put(line, h->value, h->size);
            }
            break;
        default: sw_buf_putc(line, fmt[i]); break; /* %% */
        }
    }
}
