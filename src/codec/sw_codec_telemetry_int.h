/*
 * Internal to the telemetry decoder (sw_codec_telemetry*.c): the fields,
 * the decoder's state, and what its three files share.
 *   sw_codec_telemetry.c        the decoder's life, the general path (any
 *                               JSON), validation and its messages
 *   sw_codec_telemetry_fast.c   sw_tdec_json(): the fast, template and
 *                               compiled-runs paths, hot and inlined together
 *   sw_codec_telemetry_learn.c  stormlog's key order (the prediction), and
 *                               learning a template and compiling its runs
 */
#ifndef SW_CODEC_TELEMETRY_INT_H
#define SW_CODEC_TELEMETRY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_codec_telemetry.h"
#include "sw_event_meta.h"
#include "sw_json.h"

enum field_e {
    F_TIMESTAMP_NS,
    F_EVENT_TYPE,
    F_RANK,
    F_WORLD_SIZE,
    F_JOB_ID,
    F_SESSION_ID,
    F_PID,
    F_HOST,
    F_DEVICE_USED_BYTES,
    F_SAMPLING_INTERVAL_MS,
    F_METADATA,
    F_SCHEMA_VERSION,
    F_DEVICE_ID,
    F_LOCAL_RANK,
    F_ALLOC_ALLOCATED,
    F_ALLOC_RESERVED,
    F_ALLOC_ACTIVE,
    F_ALLOC_INACTIVE,
    F_ALLOC_CHANGE,
    F_DEVICE_FREE,
    F_DEVICE_TOTAL,
    F_COLLECTOR,
    F_CONTEXT,
    F__CNT
};

#define SEQ_MAX 40  /* keys of a line the fast path predicts */
#define TPAT_MAX 32 /* longest text between two values in a template */
#define TVAL_MAX 32 /* longest value a template predicts */

/* One key of a template: the text from the end of the previous value (or
 * the start of the line) to the start of this key's value, e.g.
 * `, "rank": `, and the key's field; then, while it stays the same from
 * line to line, the value's text and what it decodes to. */
typedef struct tstep_s {
    char pat[TPAT_MAX + TVAL_MAX]; /* the text before the value, the value; zero-padded */
    uint64_t gmask;                /* one bit per byte of the text before the value */
    uint64_t vmask;                /* ... and of the predicted value (0: none) */
    uint8_t len;                   /* bytes of the text before the value */
    uint8_t vlen;                  /* bytes of the predicted value (0: none) */
    uint8_t slot;                  /* the field's entry of f[] (F__CNT: unknown key) */
    uint8_t vtype;                 /* sw_jtype_t of the predicted value */
    int64_t vi;                    /* its integer */
} tstep_t;

/* A run of the compiled template: text that is the same on every line
 * (the text between values and the predicted values), then one value
 * that is read. */
typedef struct run_s {
    const char *text; /* in run_text */
    sw_jval_t *v;     /* the value's entry of run_f */
    uint16_t len;     /* bytes of text */
    uint16_t mask;    /* under 16 bytes: one bit per byte of text */
    uint16_t need;    /* bytes from the run's start for run_text_at() and run_value() */
    uint8_t slot;     /* the value's field (F__CNT: an unknown key) */
} run_t;

struct sw_tdec_s {
    char *scratch;
    size_t scratch_cap;
    /* Producers write keys in a fixed order: next[f] is the field that
     * followed field f last time (next[F__CNT]: the first field), tried
     * with one compare before the general key scan. */
    int8_t next[F__CNT + 1];
    /* The fast path's prediction: seq[k] is the field of the k-th key of
     * the last line (-1: an unknown key, or none yet). */
    int8_t seq[SEQ_MAX];
    /* The template path's model of a line (see tdec_tmpl()): the bytes
     * before each value, as in the last line the fast path read. */
    tstep_t tmpl[SEQ_MAX];
    uint8_t ntmpl;               /* steps; 0: no template */
    char tmpl_scratch[TVAL_MAX]; /* room for parsing a predicted value */
    uint8_t nabsent;             /* fields no step sets ... */
    uint8_t absent[F__CNT];      /* ... which */
    /* The template compiled into runs of fixed text (see tdec_runs()). */
    bool runs_stale;     /* the steps changed since: compile again */
    uint8_t nruns;       /* 0: none */
    run_t runs[SEQ_MAX]; /* each: fixed text, then a value read */
    run_t tail;          /* fixed text after the last value read (len 0: none) */
    /* The event of a line the runs read (its fields that only predicted
     * values decide are those of every such line), and the fields that
     * runs_event() decides again on each, one bit per field. */
    bool ev0_ok;
    uint32_t recheck;
    sw_event_t ev0;
    char run_text[SEQ_MAX * (TPAT_MAX + TVAL_MAX) + 16]; /* the runs' text, then slack */
    sw_jval_t run_f[F__CNT + 1]; /* f[] before the values read: predicted and absent */
    bool general_only;           /* tests: skip tdec_tmpl() and tdec_fast() */
    uint64_t general_lines;      /* lines decoded by the general path */
    uint64_t tmpl_lines;         /* lines decoded by the template path */
    /* The last metadata object other than {} that the fast paths scanned
     * and found without a phase scope (v4's memory_capabilities): a line
     * with the same bytes there skips the scan. */
    size_t meta_len; /* 0: none */
    char meta_memo[1024];
    /* The event's oom_reason, unescaped (sw_event_meta_oom()). */
    char oom_reason[SW_EVENT_REASON_BUF];
};

/* Stormlog's key order (sw_codec_telemetry_learn.c). */
extern const int8_t sw_tdec_stormlog_order[F__CNT];
extern const int8_t sw_tdec_stormlog_next[F__CNT + 1];

/* The field of key k, or -1 for an unknown key. */
int sw_tdec_field_id(sw_str_t k);

/* f[] (the final value of each field) checked after SPEC 2 and into *ev,
 * with the optional fields carried; the identifier bounds are left to
 * the caller (sw_tdec_ident_bounds()). */
sw_err_t sw_tdec_validate(const sw_jval_t *f, sw_event_t *ev, char *errstr, size_t errstr_size);

/* The identifier bounds (SW_IDENT_MAX) of a decoded event. */
sw_err_t sw_tdec_ident_bounds(const sw_event_t *ev, char *errstr, size_t errstr_size);

/* The general path: the line (any JSON) into f[] (all SW_J_ABSENT) and
 * ev's phase scope, or SW_ERR_PARSE with the message. */
sw_err_t sw_tdec_general(sw_tdec_t *dec, const char *text, size_t len, sw_jval_t *f, sw_event_t *ev,
                         char *errstr, size_t errstr_size);

/* A template from a line the fast path read (see tmpl_learn's comment in
 * sw_codec_telemetry_learn.c), and the template compiled into runs. */
void sw_tdec_tmpl_learn(sw_tdec_t *dec, unsigned nkeys, const char *const *gap,
                        const char *const *val, const int8_t *ids);
void sw_tdec_runs_compile(sw_tdec_t *dec);

static inline bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* TelemetryEvent v4 and later: memory counters may be null. */
static inline bool counters_nullable(const sw_jval_t *schema_version)
{
    return schema_version->type == SW_J_INT && schema_version->i >= 4;
}

static inline void carry_i64(sw_opt_i64_t *o, const sw_jval_t *v)
{
    o->set = v->type == SW_J_INT;
    o->value = o->set ? v->i : 0;
}

static inline void carry_str(sw_opt_str_t *o, const sw_jval_t *v)
{
    o->set = v->type == SW_J_STRING;
    if (o->set) o->value = v->s;
    else o->value = sw_str("");
}

#endif
