/*
 * The telemetry decoder's predictions: the order in which stormlog writes
 * the keys (what the fast path tries first), and the template learnt from
 * a line the fast path read, compiled into runs of fixed text for
 * tdec_runs() (sw_codec_telemetry_fast.c). Run when a line differs from
 * the last; the lines themselves are read in sw_codec_telemetry_fast.c.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sw_codec_telemetry_int.h"

/* The order in which stormlog's producers (and `stormwatch gen`) write the
 * keys of a TelemetryEvent: the decoder's prediction before it has read a
 * line, and the key it tries after the one its last line had next. */
/* A hand-laid table, four keys a row. */
// clang-format off
const int8_t sw_tdec_stormlog_order[F__CNT] = {
    F_SCHEMA_VERSION,  F_TIMESTAMP_NS,      F_EVENT_TYPE,     F_COLLECTOR,
    F_SAMPLING_INTERVAL_MS, F_PID,          F_HOST,           F_DEVICE_ID,
    F_ALLOC_ALLOCATED, F_ALLOC_RESERVED,    F_ALLOC_ACTIVE,   F_ALLOC_INACTIVE,
    F_ALLOC_CHANGE,    F_DEVICE_USED_BYTES, F_DEVICE_FREE,    F_DEVICE_TOTAL,
    F_CONTEXT,         F_METADATA,          F_JOB_ID,         F_RANK,
    F_LOCAL_RANK,      F_WORLD_SIZE,        F_SESSION_ID,
};
// clang-format on
/* sw_tdec_stormlog_next[f]: the field after f in that order (-1: f is last);
 * [F__CNT]: the first. */
const int8_t sw_tdec_stormlog_next[F__CNT + 1] = {
    [F__CNT] = F_SCHEMA_VERSION,
    [F_SCHEMA_VERSION] = F_TIMESTAMP_NS,
    [F_TIMESTAMP_NS] = F_EVENT_TYPE,
    [F_EVENT_TYPE] = F_COLLECTOR,
    [F_COLLECTOR] = F_SAMPLING_INTERVAL_MS,
    [F_SAMPLING_INTERVAL_MS] = F_PID,
    [F_PID] = F_HOST,
    [F_HOST] = F_DEVICE_ID,
    [F_DEVICE_ID] = F_ALLOC_ALLOCATED,
    [F_ALLOC_ALLOCATED] = F_ALLOC_RESERVED,
    [F_ALLOC_RESERVED] = F_ALLOC_ACTIVE,
    [F_ALLOC_ACTIVE] = F_ALLOC_INACTIVE,
    [F_ALLOC_INACTIVE] = F_ALLOC_CHANGE,
    [F_ALLOC_CHANGE] = F_DEVICE_USED_BYTES,
    [F_DEVICE_USED_BYTES] = F_DEVICE_FREE,
    [F_DEVICE_FREE] = F_DEVICE_TOTAL,
    [F_DEVICE_TOTAL] = F_CONTEXT,
    [F_CONTEXT] = F_METADATA,
    [F_METADATA] = F_JOB_ID,
    [F_JOB_ID] = F_RANK,
    [F_RANK] = F_LOCAL_RANK,
    [F_LOCAL_RANK] = F_WORLD_SIZE,
    [F_WORLD_SIZE] = F_SESSION_ID,
    [F_SESSION_ID] = -1,
};

/* Whether the value text [v, e) can be predicted, and as what: a plain
 * string, an integer, a literal or the empty metadata object. */
static bool tmpl_value(tstep_t *st, const char *v, const char *e, char *scratch)
{
    size_t n = (size_t)(e - v);
    if (n == 0 || n > TVAL_MAX) return false;
    sw_jval_t jv;
    sw_jscan_t js;
    sw_jscan_init(&js, v, n, scratch);
    if (*v == '{') {
        if (n != 2 || v[1] != '}') return false;
        jv.type = SW_J_OBJECT;
    } else if (!sw_jscan_value(&js, &jv, 1) || js.p != e) {
        return false;
    }
    if (jv.type == SW_J_STRING && (jv.s.ptr != v + 1 || jv.s.len != n - 2)) return false;
    if (jv.type == SW_J_BIGINT || jv.type == SW_J_FLOAT || jv.type == SW_J_ARRAY) return false;
    st->vtype = (uint8_t)jv.type;
    st->vi = jv.type == SW_J_INT ? jv.i : 0;
    st->vlen = (uint8_t)n;
    memcpy(st->pat + st->len, v, n);
    st->vmask = st->len + n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (st->len + n)) - 1;
    return true;
}

/* The template of a line the fast path read: gap[k] is where the text
 * before the k-th value starts (the line's start, or the end of the value
 * before), val[k] where the value starts, gap[nkeys] where the last one
 * ends; nothing when a gap is too long. */
void sw_tdec_tmpl_learn(sw_tdec_t *dec, unsigned nkeys, const char *const *gap,
                        const char *const *val, const int8_t *ids)
{
    dec->ntmpl = 0;
    dec->nruns = 0;
    if (nkeys > SEQ_MAX) return;
    bool set[F__CNT] = {false};
    for (unsigned k = 0; k < nkeys; k++) {
        size_t n = (size_t)(val[k] - gap[k]);
        if (n > TPAT_MAX) return;
        tstep_t *st = &dec->tmpl[k];
        memset(st->pat, 0, sizeof(st->pat));
        memcpy(st->pat, gap[k], n);
        st->len = (uint8_t)n;
        st->gmask = ((uint64_t)1 << n) - 1;
        st->vlen = 0;
        st->vmask = 0;
        st->slot = ids[k] >= 0 ? (uint8_t)ids[k] : F__CNT;
        if (ids[k] >= 0) set[ids[k]] = true;
        (void)tmpl_value(st, val[k], gap[k + 1], dec->tmpl_scratch);
    }
    dec->nabsent = 0;
    for (int i = 0; i < F__CNT; i++)
        if (!set[i]) dec->absent[dec->nabsent++] = (uint8_t)i;
    dec->ntmpl = (uint8_t)nkeys;
    dec->runs_stale = true;
}

/* Whether an integer's digits may end before byte c (the text after a
 * value read by the runs): c is no digit and does not make it a float. */
static bool int_may_end(char c)
{
    return !is_digit(c) && c != '.' && c != 'e' && c != 'E';
}

/* The steps compiled into runs: the text of steps with a predicted value
 * is joined to the text of the step after them, so that a line costs one
 * compare per value read, and the predicted values (with the absent
 * fields) are decoded once into run_f, their text pointing into
 * run_text. Text after the last value read (predicted values and the
 * text between them) is the tail, compared before the closing '}'. No
 * runs when a field has two keys (its value is the last one's, which the
 * runs cannot tell). */
void sw_tdec_runs_compile(sw_tdec_t *dec)
{
    dec->runs_stale = false;
    dec->nruns = 0;
    dec->ev0_ok = false;
    bool seen[F__CNT + 1] = {false};
    for (unsigned k = 0; k < dec->ntmpl; k++) {
        uint8_t slot = dec->tmpl[k].slot;
        if (slot < F__CNT && seen[slot]) return;
        seen[slot] = true;
    }
    if (!dec->ntmpl) return;
    for (int i = 0; i <= F__CNT; i++) dec->run_f[i].type = SW_J_ABSENT;
    size_t at = 0, start = 0;
    unsigned nruns = 0;
    for (unsigned k = 0; k < dec->ntmpl; k++) {
        const tstep_t *st = &dec->tmpl[k];
        memcpy(dec->run_text + at, st->pat, st->len);
        at += st->len;
        if (st->vlen) {
            sw_jval_t *v = &dec->run_f[st->slot];
            memcpy(dec->run_text + at, st->pat + st->len, st->vlen);
            v->type = (sw_jtype_t)st->vtype;
            v->raw = dec->run_text + at;
            v->raw_len = st->vlen;
            v->i = st->vi;
            v->s.ptr = v->raw + 1;
            v->s.len = (size_t)st->vlen - 2; /* meaningful for a string */
            at += st->vlen;
            continue;
        }
        run_t *r = &dec->runs[nruns++];
        r->text = dec->run_text + start;
        r->len = (uint16_t)(at - start);
        r->mask = r->len < 16 ? (uint16_t)((1u << r->len) - 1) : 0xffff;
        /* Values within 16 bytes of the line's start (the texts and a
         * byte per value before them) take the other branch: run_value()
         * reads 16 bytes before an integer's end. */
        r->need = at + nruns - 1 < 16 ? UINT16_MAX : (uint16_t)((r->len < 16 ? 16 : r->len) + 33);
        r->slot = st->slot;
        r->v = &dec->run_f[st->slot];
        start = at;
    }
    if (!nruns) return; /* nothing read: the steps do it */
    /* run_value() leaves the end of an integer to the text after it. */
    for (unsigned k = 1; k < nruns; k++)
        if (!int_may_end(dec->runs[k].text[0])) return;
    if (at > start && !int_may_end(dec->run_text[start])) return;
    run_t *r = &dec->tail;
    r->text = dec->run_text + start;
    r->len = (uint16_t)(at - start);
    r->mask = r->len < 16 ? (uint16_t)((1u << r->len) - 1) : 0xffff;
    r->need = r->len < 16 ? 16 : r->len;
    r->slot = F__CNT;
    r->v = NULL;
    memset(dec->run_text + at, 0, 16);
    dec->nruns = (uint8_t)nruns;
    /* runs_event() decides the fields read again, rank when world_size
     * is read, device_used_bytes when event_type or schema_version is. */
    uint32_t m = 0;
    for (unsigned k = 0; k < nruns; k++)
        if (dec->runs[k].slot < F__CNT) m |= 1u << dec->runs[k].slot;
    if (m & (1u << F_WORLD_SIZE)) m |= 1u << F_RANK;
    if (m & (1u << F_EVENT_TYPE | 1u << F_SCHEMA_VERSION)) m |= 1u << F_DEVICE_USED_BYTES;
    dec->recheck = m;
}
