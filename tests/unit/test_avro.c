/*
 * The hand-written Avro codecs (src/codec/sw_codec_avro.c) against Avro C: the
 * embedded schemas parse; every valid fixture event survives encode ->
 * Avro C decode (same values as the JSON line) and encode -> our decode
 * (same sw_event_t); Avro C's own encoding decodes with ours; every stream
 * record of the fixtures encodes to what sw_alert_json_record() writes;
 * malformed input fails with a precise message and never crashes.
 */
#include <avro.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_codec_alert.h"
#include "sw_codec_avro.h"
#include "sw_codec_avro_int.h"
#include "sw_codec_telemetry.h"
#include "sw_detect.h"
#include "sw_schemas.h"
#include "sw_testlib.h"

#define EV_SCHEMA_ID 1
#define REC_SCHEMA_ID 42

/* Shared state of the checks (no globals: passed around). */
typedef struct ctx_s {
    avro_schema_t ev_schema, rec_schema;
    avro_value_iface_t *ev_iface, *rec_iface;
    avro_value_t ev_val, rec_val;
    sw_avro_dec_t *dec;
    sw_tdec_t *tdec;
    size_t n_events;                               /* valid fixture events checked */
    size_t n_typed_phase;                          /* of which with a typed phase scope */
    size_t n_records;                              /* stream records checked */
    size_t n_unique, n_ambiguous, n_phase_summary; /* attributions seen */
    int rec_failures;                              /* failures inside the summary callback */
    sw_buf_t longest_ev;                           /* longest framed event message seen */
    sw_buf_t longest_rec;                          /* longest framed record message seen */
} ctx_t;

static const char *const k_event_fields[] = {"schema_version",
                                             "timestamp_ns",
                                             "event_type",
                                             "collector",
                                             "sampling_interval_ms",
                                             "pid",
                                             "host",
                                             "device_id",
                                             "allocator_allocated_bytes",
                                             "allocator_reserved_bytes",
                                             "allocator_active_bytes",
                                             "allocator_inactive_bytes",
                                             "allocator_change_bytes",
                                             "device_used_bytes",
                                             "device_free_bytes",
                                             "device_total_bytes",
                                             "context",
                                             "metadata",
                                             "job_id",
                                             "rank",
                                             "local_rank",
                                             "world_size",
                                             "session_id",
                                             "phase_scope"};

static const char *const k_alert_fields[] = {"action",
                                             "job_id",
                                             "episode",
                                             "revision",
                                             "event_timestamp_ns",
                                             "world_size",
                                             "participating_ranks",
                                             "missing_ranks",
                                             "rank_sample_counts",
                                             "alignment_offsets_ns",
                                             "cluster_onset_timestamp_ns",
                                             "first_cause_suspects",
                                             "notes",
                                             "severity",
                                             "dedup_key",
                                             "summary",
                                             "source",
                                             "resolve_reason",
                                             "resolve_lost_rank",
                                             "episode_open",
                                             "tied_ranks",
                                             "verdict",
                                             "blind_ranks",
                                             "x8"};

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* Avro C writes a non-null union value as {"branch type name": value}. */
static bool is_branch_name(const char *k)
{
    static const char *const names[] = {
        "string",       "long",        "int",      "boolean", "PhaseScope", "PhaseAttribution",
        "PhaseSummary", "AlertSource", "Timeline", "array",   "Verdict"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        size_t n = strlen(names[i]), kl = strlen(k);
        if (strcmp(k, names[i]) == 0) return true;
        if (kl > n + 1 && strcmp(k + kl - n, names[i]) == 0 && k[kl - n - 1] == '.') return true;
    }
    return false;
}

/* Avro C JSON with the union wrappers removed. @returns a new reference. */
static json_t *unwrap_unions(json_t *j)
{
    if (json_is_object(j)) {
        void *it = json_object_iter(j);
        if (json_object_size(j) == 1 && is_branch_name(json_object_iter_key(it)))
            return unwrap_unions(json_object_iter_value(it));
        json_t *o = json_object();
        const char *k;
        json_t *v;
        json_object_foreach(j, k, v) json_object_set_new(o, k, unwrap_unions(v));
        return o;
    }
    if (json_is_array(j)) {
        json_t *a = json_array();
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v) json_array_append_new(a, unwrap_unions(v));
        return a;
    }
    return json_incref(j);
}

/* Read an Avro body with Avro C into val and return it as (unwrapped)
 * JSON, or NULL with why set. */
static json_t *avro_c_json(avro_value_t *val, const char *body, size_t len, char *why,
                           size_t why_size)
{
    avro_reader_t r = avro_reader_memory(body, (int64_t)len);
    avro_value_reset(val);
    int rc = avro_value_read(r, val);
    avro_reader_free(r);
    if (rc != 0) {
        snprintf(why, why_size, "Avro C cannot read the body: %s", avro_strerror());
        return NULL;
    }
    size_t size = 0;
    if (avro_value_sizeof(val, &size) != 0 || size != len) {
        snprintf(why, why_size, "Avro C read %zu bytes of a %zu-byte body", size, len);
        return NULL;
    }
    char *text = NULL;
    if (avro_value_to_json(val, 1, &text) != 0 || !text) {
        snprintf(why, why_size, "avro_value_to_json failed: %s", avro_strerror());
        return NULL;
    }
    json_error_t e;
    json_t *raw = json_loads(text, JSON_ALLOW_NUL, &e);
    free(text);
    if (!raw) {
        snprintf(why, why_size, "Avro C JSON does not parse: %s", e.text);
        return NULL;
    }
    json_t *out = unwrap_unions(raw);
    json_decref(raw);
    return out;
}

static json_t *int_or_null(json_t *v)
{
    return json_is_integer(v) ? json_incref(v) : json_null();
}

static json_t *str_or_null(json_t *v)
{
    return json_is_string(v) ? json_incref(v) : json_null();
}

static json_t *or_default(json_t *v, json_t *dflt)
{
    if (!v || json_is_null(v)) return dflt;
    json_decref(dflt);
    return json_incref(v);
}

/* What Avro C must show for a valid source line: its values, with SPEC 2
 * defaults where sw_event_t always has a value, null for absent optional
 * fields, metadata parsed and phase_scope typed (or null when the event
 * has no well-formed boundary). */
static json_t *expected_event(json_t *src, const sw_event_t *ev)
{
    static const char *const carried[] = {"schema_version",
                                          "device_id",
                                          "local_rank",
                                          "allocator_allocated_bytes",
                                          "allocator_reserved_bytes",
                                          "allocator_active_bytes",
                                          "allocator_inactive_bytes",
                                          "allocator_change_bytes",
                                          "device_free_bytes",
                                          "device_total_bytes"};
    json_t *w = json_object();
    for (size_t i = 0; i < sizeof(carried) / sizeof(carried[0]); i++)
        json_object_set_new(w, carried[i], int_or_null(json_object_get(src, carried[i])));
    json_object_set(w, "timestamp_ns", json_object_get(src, "timestamp_ns"));
    json_object_set(w, "event_type", json_object_get(src, "event_type"));
    json_object_set_new(w, "collector", str_or_null(json_object_get(src, "collector")));
    json_object_set_new(w, "context", str_or_null(json_object_get(src, "context")));
    json_object_set_new(w, "sampling_interval_ms",
                        or_default(json_object_get(src, "sampling_interval_ms"), json_integer(0)));
    json_object_set_new(w, "pid", or_default(json_object_get(src, "pid"), json_integer(-1)));
    json_object_set_new(w, "host",
                        or_default(json_object_get(src, "host"), json_string("unknown")));
    json_object_set_new(w, "rank", or_default(json_object_get(src, "rank"), json_integer(0)));
    json_object_set_new(w, "world_size",
                        or_default(json_object_get(src, "world_size"), json_integer(1)));
    json_object_set_new(w, "device_used_bytes",
                        int_or_null(json_object_get(src, "device_used_bytes")));
    json_object_set_new(w, "job_id", str_or_null(json_object_get(src, "job_id")));
    json_object_set_new(w, "session_id", str_or_null(json_object_get(src, "session_id")));
    json_t *meta = json_object_get(src, "metadata");
    json_object_set_new(w, "metadata", json_is_object(meta) ? json_incref(meta) : json_object());
    if (!ev->has_phase) {
        json_object_set_new(w, "phase_scope", json_null());
        return w;
    }
    json_t *ps = json_object_get(meta, "phase_scope");
    json_t *p = json_object();
    json_object_set(p, "action", json_object_get(ps, "action"));
    json_object_set(p, "name", json_object_get(ps, "name"));
    json_t *path = json_array();
    size_t i;
    json_t *el;
    json_array_foreach(json_object_get(ps, "path"), i,
                       el) if (json_is_string(el) && json_string_length(el) > 0)
        json_array_append(path, el);
    json_object_set_new(p, "path", path);
    json_object_set_new(p, "depth", int_or_null(json_object_get(ps, "depth")));
    json_object_set(p, "scope_id", json_object_get(ps, "scope_id"));
    json_object_set_new(p, "parent_scope_id", str_or_null(json_object_get(ps, "parent_scope_id")));
    json_object_set(p, "thread_id", json_object_get(ps, "thread_id"));
    json_object_set(p, "thread_name", json_object_get(ps, "thread_name"));
    json_object_set(p, "sequence", json_object_get(ps, "sequence"));
    json_object_set_new(w, "phase_scope", p);
    return w;
}

/* The suspects of an Avro C view in sw_alert_json_record()'s shape. */
static void suspects_drop_nulls(json_t *arr)
{
    size_t i;
    json_t *s;
    json_array_foreach(arr, i, s)
    {
        if (json_is_null(json_object_get(s, "timeline"))) json_object_del(s, "timeline");
        /* Where it ran: all five keys, or none when there is no host. */
        if (json_is_null(json_object_get(s, "host"))) {
            static const char *const where[] = {"host", "pid", "device_id", "local_rank",
                                                "session_id"};
            for (size_t k = 0; k < 5; k++) json_object_del(s, where[k]);
        }
        json_t *pa = json_object_get(s, "phase_attribution");
        if (!json_is_object(pa)) continue;
        const char *k;
        json_t *v;
        void *tmp;
        json_object_foreach_safe(pa, tmp, k, v) if (json_is_null(v)) json_object_del(pa, k);
    }
}

/* Avro C view of an alert in sw_alert_json_record()'s shape: null
 * members of phase_attribution, a null timeline and a null source are
 * left out there (in the verdict's suspects too). */
static void alert_drop_nulls(json_t *rec)
{
    static const char *const extras[] = {
        "source",     "resolve_reason", "resolve_lost_rank", "episode_open",
        "tied_ranks", "verdict",        "blind_ranks",       "x8"};
    for (size_t k = 0; k < sizeof(extras) / sizeof(extras[0]); k++)
        if (json_is_null(json_object_get(rec, extras[k]))) json_object_del(rec, extras[k]);
    suspects_drop_nulls(json_object_get(rec, "first_cause_suspects"));
    suspects_drop_nulls(json_object_get(json_object_get(rec, "verdict"), "first_cause_suspects"));
}

/* Test-side Avro writer, for hand-made (malformed) messages. */
static void tb_long(sw_buf_t *b, int64_t v)
{
    uint64_t u = ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
    while (u >= 0x80) {
        sw_buf_putc(b, (char)(u | 0x80));
        u >>= 7;
    }
    sw_buf_putc(b, (char)u);
}

static void tb_bytes(sw_buf_t *b, const char *s, size_t n)
{
    tb_long(b, (int64_t)n);
    sw_buf_put(b, s, n);
}

static void tb_str(sw_buf_t *b, const char *s)
{
    tb_bytes(b, s, strlen(s));
}

static void tb_header(sw_buf_t *b, uint32_t id)
{
    char h[5] = {0, (char)(id >> 24), (char)(id >> 16), (char)(id >> 8), (char)id};
    sw_buf_put(b, h, 5);
}

/* A framed TelemetryEvent with every optional field null except host and
 * metadata when given; *host_off gets the offset of host's value. */
static void tb_event(sw_buf_t *b, int64_t ts, const char *type, const char *host, const char *meta,
                     size_t *host_off)
{
    b->len = 0;
    tb_header(b, EV_SCHEMA_ID);
    tb_long(b, 0); /* schema_version */
    tb_long(b, ts);
    tb_str(b, type);
    tb_long(b, 0); /* collector */
    tb_long(b, 0); /* sampling_interval_ms */
    tb_long(b, 0); /* pid */
    if (host) {
        tb_long(b, 1);
        if (host_off) *host_off = b->len;
        tb_str(b, host);
    } else {
        tb_long(b, 0);
    }
    for (int i = 0; i < 10; i++) tb_long(b, 0); /* device_id .. context */
    if (meta) {
        tb_long(b, 1);
        tb_str(b, meta);
    } else {
        tb_long(b, 0);
    }
    for (int i = 0; i < 6; i++) tb_long(b, 0); /* job_id .. phase_scope */
}

/* ------------------------------------------------------------------ */
/* Schemas                                                             */
/* ------------------------------------------------------------------ */

/* Every "fields" member of every record in the schema JSON has a doc. */
static int check_docs(json_t *j, const char *schema)
{
    if (json_is_array(j)) {
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v) if (check_docs(v, schema)) return 1;
        return 0;
    }
    if (!json_is_object(j)) return 0;
    json_t *fields = json_object_get(j, "fields");
    if (json_is_array(fields)) {
        size_t i;
        json_t *f;
        json_array_foreach(fields, i, f)
        {
            json_t *doc = json_object_get(f, "doc");
            SW_ASSERT(json_is_string(doc) && json_string_length(doc) > 0,
                      "%s: field \"%s\" has no doc", schema,
                      json_string_value(json_object_get(f, "name")));
        }
    }
    const char *k;
    json_t *v;
    json_object_foreach(j, k, v) if (check_docs(v, schema)) return 1;
    return 0;
}

static int check_schema(const char *text, unsigned len, const char *name, const char *const *fields,
                        size_t n_fields, avro_schema_t *out)
{
    int rc = avro_schema_from_json_length(text, len, out);
    SW_ASSERT(rc == 0, "%s: Avro C rejects the schema: %s", name, avro_strerror());
    SW_ASSERT(strcmp(avro_schema_name(*out), name) == 0, "name is %s", avro_schema_name(*out));
    const char *ns = avro_schema_namespace(*out);
    SW_ASSERT(ns && strcmp(ns, "io.stormwatch") == 0, "%s: namespace is %s", name,
              ns ? ns : "(none)");
    SW_ASSERT(avro_schema_record_size(*out) == n_fields, "%s: %zu fields, expected %zu", name,
              avro_schema_record_size(*out), n_fields);
    for (size_t i = 0; i < n_fields; i++) {
        const char *f = avro_schema_record_field_name(*out, (int)i);
        SW_ASSERT(f && strcmp(f, fields[i]) == 0, "%s: field %zu is %s, expected %s", name, i,
                  f ? f : "(none)", fields[i]);
    }
    json_error_t e;
    json_t *j = json_loadb(text, len, 0, &e);
    SW_ASSERT(j != NULL, "%s: schema is not JSON: %s", name, e.text);
    int bad = check_docs(j, name);
    json_decref(j);
    return bad;
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

static int check_event_line(ctx_t *ctx, const char *file, size_t lineno, const char *line,
                            size_t len)
{
    sw_event_t ev, back;
    char err[512], why[1024];
    sw_buf_t msg;
    if (sw_tdec_blank(line, len)) return 0;
    if (sw_tdec_json(ctx->tdec, line, len, &ev, err, sizeof(err)) != SW_OK) return 0;
    ctx->n_events++;
    if (ev.has_phase) ctx->n_typed_phase++;
    sw_buf_init(&msg);
    sw_err_t rc = sw_avro_encode_event(&ev, EV_SCHEMA_ID, &msg, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "%s:%zu: encode: %s", file, lineno, err);
    SW_ASSERT(msg.len > 5 && msg.data[0] == 0, "%s:%zu: no Confluent header", file, lineno);
    if (msg.len > ctx->longest_ev.len) {
        ctx->longest_ev.len = 0;
        sw_buf_put(&ctx->longest_ev, msg.data, msg.len);
    }

    /* (a) Avro C reads the same values as the JSON line holds. */
    json_error_t je;
    json_t *src = json_loadb(line, len, JSON_ALLOW_NUL, &je);
    SW_ASSERT(src != NULL, "%s:%zu: jansson cannot parse the line: %s", file, lineno, je.text);
    json_t *got = avro_c_json(&ctx->ev_val, msg.data + 5, msg.len - 5, why, sizeof(why));
    SW_ASSERT(got != NULL, "%s:%zu: %s", file, lineno, why);
    json_t *meta_text = json_object_get(got, "metadata");
    SW_ASSERT(json_is_string(meta_text), "%s:%zu: metadata is not a string", file, lineno);
    json_t *meta = json_loads(json_string_value(meta_text), JSON_ALLOW_NUL, &je);
    SW_ASSERT(meta != NULL, "%s:%zu: metadata text does not parse: %s", file, lineno, je.text);
    json_object_set_new(got, "metadata", meta);
    json_t *want = expected_event(src, &ev);
    bool same = sw_test_json_equal(got, want, false, why, sizeof(why));
    json_decref(got);
    json_decref(want);
    json_decref(src);
    SW_ASSERT(same, "%s:%zu: Avro C view differs from the line: %s (avro != line)", file, lineno,
              why);

    /* (b) Our decoder gives back the same event, framed and bare. */
    rc = sw_avro_decode_event(ctx->dec, msg.data, msg.len, EV_SCHEMA_ID, &back, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "%s:%zu: decode: %s", file, lineno, err);
    SW_ASSERT(sw_test_event_eq(&ev, &back, why, sizeof(why)), "%s:%zu: decoded event differs: %s",
              file, lineno, why);
    size_t framed = msg.len;
    msg.len = 0;
    rc = sw_avro_encode_event(&ev, -1, &msg, err, sizeof(err));
    SW_ASSERT(rc == SW_OK && msg.len + 5 == framed, "%s:%zu: bare encode rc %d, %zu bytes", file,
              lineno, rc, msg.len);
    rc = sw_avro_decode_event(ctx->dec, msg.data, msg.len, -1, &back, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "%s:%zu: bare decode: %s", file, lineno, err);
    SW_ASSERT(sw_test_event_eq(&ev, &back, why, sizeof(why)),
              "%s:%zu: bare decoded event differs: %s", file, lineno, why);

    /* (c) Without the typed scope (Avro C writes the value read in (a) with
     * phase_scope null), metadata.phase_scope in the text gives the same
     * boundary as the JSON decoder found. */
    if (ev.has_phase) {
        avro_value_t f, b;
        SW_ASSERT(avro_value_get_by_name(&ctx->ev_val, "phase_scope", &f, NULL) == 0 &&
                      avro_value_set_branch(&f, 0, &b) == 0 && avro_value_set_null(&b) == 0,
                  "%s:%zu: Avro C: %s", file, lineno, avro_strerror());
        size_t size = 0;
        SW_ASSERT(avro_value_sizeof(&ctx->ev_val, &size) == 0, "%s", avro_strerror());
        msg.len = 0;
        sw_buf_reserve(&msg, size + 5);
        memcpy(msg.data, "\0\0\0\0", 4);
        msg.data[4] = EV_SCHEMA_ID;
        avro_writer_t w = avro_writer_memory(msg.data + 5, (int64_t)size);
        SW_ASSERT(avro_value_write(w, &ctx->ev_val) == 0, "Avro C write: %s", avro_strerror());
        avro_writer_free(w);
        msg.len = size + 5;
        rc = sw_avro_decode_event(ctx->dec, msg.data, msg.len, EV_SCHEMA_ID, &back, err,
                                  sizeof(err));
        SW_ASSERT(rc == SW_OK, "%s:%zu: decode: %s", file, lineno, err);
        SW_ASSERT(sw_test_event_eq(&ev, &back, why, sizeof(why)),
                  "%s:%zu: event from metadata.phase_scope differs: %s", file, lineno, why);
    }
    sw_buf_clear(&msg);
    return 0;
}

static bool is_event_fixture(const char *name)
{
    size_t n = strlen(name);
    if (n < 7 || strcmp(name + n - 6, ".jsonl") != 0) return false;
    return !(n > 13 && strcmp(name + n - 13, ".stream.jsonl") == 0);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted event fixture names (NAME.jsonl); caller frees each and *names. */
static size_t list_fixtures(char ***names)
{
    DIR *d = opendir(sw_test_fixtures());
    size_t n = 0, cap = 0;
    *names = NULL;
    if (!d) return 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!is_event_fixture(de->d_name)) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            *names = realloc(*names, cap * sizeof(**names));
        }
        (*names)[n++] = strdup(de->d_name);
    }
    closedir(d);
    if (n) qsort(*names, n, sizeof(**names), name_cmp);
    return n;
}

static void test_fixture_events(void **state)
{
    ctx_t *ctx = *state;
    char **names;
    size_t n = list_fixtures(&names);
    SW_ASSERT(n > 0, "no NAME.jsonl in %s", sw_test_fixtures());
    int failed = 0;
    sw_buf_t text;
    sw_buf_init(&text);
    for (size_t f = 0; f < n; f++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", sw_test_fixtures(), names[f]);
        if (!sw_test_read_file(path, &text)) {
            fprintf(stderr, "%s:%d: FAIL: cannot read %s\n", __FILE__, __LINE__, path);
            failed = 1;
            continue;
        }
        size_t i = 0, lineno = 0;
        while (i < text.len && !failed) {
            const char *nl = memchr(text.data + i, '\n', text.len - i);
            size_t end = nl ? (size_t)(nl - text.data) : text.len;
            lineno++;
            failed |= check_event_line(ctx, names[f], lineno, text.data + i, end - i);
            i = end + 1;
        }
    }
    for (size_t f = 0; f < n; f++) free(names[f]);
    free(names);
    sw_buf_clear(&text);
    SW_ASSERT(!failed, "see the failures above");
    SW_ASSERT(ctx->n_events > 1000 && ctx->n_typed_phase > 100,
              "only %zu events (%zu with phases) checked", ctx->n_events, ctx->n_typed_phase);
    printf("events: %zu valid fixture events (%zu phase boundaries) round-tripped\n", ctx->n_events,
           ctx->n_typed_phase);
}

static void set_opt_long(avro_value_t *rec, const char *name, bool set, int64_t v)
{
    avro_value_t f, b;
    avro_value_get_by_name(rec, name, &f, NULL);
    avro_value_set_branch(&f, set ? 1 : 0, &b);
    if (set) avro_value_set_long(&b, v);
    else avro_value_set_null(&b);
}

static void set_opt_str(avro_value_t *rec, const char *name, const char *s)
{
    avro_value_t f, b;
    avro_value_get_by_name(rec, name, &f, NULL);
    avro_value_set_branch(&f, s ? 1 : 0, &b);
    if (s) avro_value_set_string(&b, s);
    else avro_value_set_null(&b);
}

/* The typed scope used below: train / fwd, with an empty path item. */
static void fill_scope(avro_value_t *b, const char *action)
{
    avro_value_t el, path, item;
    avro_value_get_by_name(b, "action", &el, NULL);
    avro_value_set_string(&el, action);
    avro_value_get_by_name(b, "name", &el, NULL);
    avro_value_set_string(&el, "fwd");
    avro_value_get_by_name(b, "path", &path, NULL);
    avro_value_reset(&path);
    const char *items[] = {"train", "", "fwd"};
    for (int i = 0; i < 3; i++) {
        avro_value_append(&path, &item, NULL);
        avro_value_set_string(&item, items[i]);
    }
    set_opt_long(b, "depth", true, 2);
    avro_value_get_by_name(b, "scope_id", &el, NULL);
    avro_value_set_string(&el, "S1");
    set_opt_str(b, "parent_scope_id", "S0");
    avro_value_get_by_name(b, "thread_id", &el, NULL);
    avro_value_set_long(&el, 7);
    avro_value_get_by_name(b, "thread_name", &el, NULL);
    avro_value_set_string(&el, "Main");
    avro_value_get_by_name(b, "sequence", &el, NULL);
    avro_value_set_long(&el, 3);
}

/* Avro C writes, we read: a phase_enter with a typed scope (which wins
 * over the metadata's), then the same without it (metadata's is used). */
static void test_avro_c_written(void **state)
{
    ctx_t *ctx = *state;
    avro_value_t v, f, b;
    char buf[4096], err[512];
    sw_event_t ev;
    const char *meta =
        "{\"k\": [1, 2.5, \"x\"], \"phase_scope\": {\"action\": \"enter\", \"name\": "
        "\"meta\", \"path\": [\"m\", \"\", 3], \"scope_id\": \"M1\", \"thread_id\": 9, "
        "\"thread_name\": \"T\", \"sequence\": 4}}";
    SW_ASSERT(avro_generic_value_new(ctx->ev_iface, &v) == 0, "%s", avro_strerror());
    for (size_t i = 0; i < sizeof(k_event_fields) / sizeof(k_event_fields[0]); i++) {
        avro_value_get_by_name(&v, k_event_fields[i], &f, NULL);
        if (avro_value_get_type(&f) == AVRO_UNION) {
            avro_value_set_branch(&f, 0, &b);
            avro_value_set_null(&b);
        }
    }
    avro_value_get_by_name(&v, "timestamp_ns", &f, NULL);
    avro_value_set_long(&f, 5000);
    avro_value_get_by_name(&v, "event_type", &f, NULL);
    avro_value_set_string(&f, "phase_enter");
    set_opt_long(&v, "rank", true, 3);
    set_opt_long(&v, "world_size", true, 4);
    set_opt_long(&v, "device_total_bytes", true, 85899345920LL);
    set_opt_str(&v, "session_id", "s3");
    set_opt_str(&v, "job_id", "job-α");
    set_opt_str(&v, "metadata", meta);
    avro_value_get_by_name(&v, "phase_scope", &f, NULL);
    avro_value_set_branch(&f, 1, &b);
    fill_scope(&b, "enter");

    buf[0] = 0;
    buf[1] = buf[2] = buf[3] = 0;
    buf[4] = EV_SCHEMA_ID;
    avro_writer_t w = avro_writer_memory(buf + 5, (int64_t)sizeof(buf) - 5);
    SW_ASSERT(avro_value_write(w, &v) == 0, "Avro C write: %s", avro_strerror());
    size_t len = 5 + (size_t)avro_writer_tell(w);
    avro_writer_free(w);
    sw_err_t rc = sw_avro_decode_event(ctx->dec, buf, len, EV_SCHEMA_ID, &ev, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "decode of Avro C's encoding: %s", err);
    SW_ASSERT(ev.timestamp_ns == 5000 && ev.kind == SW_EV_PHASE_ENTER, "ts %lld kind %d",
              (long long)ev.timestamp_ns, ev.kind);
    SW_ASSERT(ev.rank == 3 && ev.world_size == 4 && ev.pid == -1 && ev.sampling_interval_ms == 0,
              "rank %lld world %lld pid %lld interval %lld", (long long)ev.rank,
              (long long)ev.world_size, (long long)ev.pid, (long long)ev.sampling_interval_ms);
    SW_ASSERT(sw_str_eq(ev.host, sw_str("unknown")), "host \"%.*s\"", (int)ev.host.len,
              ev.host.ptr);
    SW_ASSERT(ev.has_job_id && sw_str_eq(ev.job_id, sw_str("job-α")), "job_id");
    SW_ASSERT(ev.has_session_id && sw_str_eq(ev.session_id, sw_str("s3")), "session_id");
    SW_ASSERT(!ev.has_device_used && !ev.schema_version.set && !ev.collector.set, "nulls kept");
    SW_ASSERT(ev.device_total_bytes.set && ev.device_total_bytes.value == 85899345920LL,
              "device_total_bytes %lld", (long long)ev.device_total_bytes.value);
    SW_ASSERT(sw_str_eq(ev.metadata_json, sw_str(meta)), "metadata \"%.*s\"",
              (int)ev.metadata_json.len, ev.metadata_json.ptr);
    SW_ASSERT(ev.has_phase && ev.phase.enter && sw_str_eq(ev.phase.name, sw_str("fwd")),
              "typed phase scope not used (has_phase %d)", ev.has_phase);
    SW_ASSERT(ev.phase.path_len == 2 && sw_str_eq(ev.phase.path[0], sw_str("train")) &&
                  sw_str_eq(ev.phase.path[1], sw_str("fwd")),
              "path_len %d", ev.phase.path_len);
    SW_ASSERT(ev.phase.has_depth && ev.phase.depth == 2 && ev.phase.has_parent &&
                  sw_str_eq(ev.phase.parent_scope_id, sw_str("S0")) && ev.phase.thread_id == 7 &&
                  ev.phase.sequence == 3 && sw_str_eq(ev.phase.thread_name, sw_str("Main")) &&
                  sw_str_eq(ev.phase.scope_id, sw_str("S1")),
              "phase fields");

    /* Without the typed field, metadata.phase_scope is used. */
    avro_value_get_by_name(&v, "phase_scope", &f, NULL);
    avro_value_set_branch(&f, 0, &b);
    avro_value_set_null(&b);
    w = avro_writer_memory(buf + 5, (int64_t)sizeof(buf) - 5);
    SW_ASSERT(avro_value_write(w, &v) == 0, "Avro C write: %s", avro_strerror());
    len = 5 + (size_t)avro_writer_tell(w);
    avro_writer_free(w);
    rc = sw_avro_decode_event(ctx->dec, buf, len, EV_SCHEMA_ID, &ev, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "decode: %s", err);
    SW_ASSERT(ev.has_phase && sw_str_eq(ev.phase.name, sw_str("meta")) && ev.phase.path_len == 1 &&
                  sw_str_eq(ev.phase.path[0], sw_str("m")) && !ev.phase.has_parent &&
                  !ev.phase.has_depth && ev.phase.thread_id == 9 && ev.phase.sequence == 4,
              "metadata phase scope: has_phase %d name \"%.*s\" path_len %d", ev.has_phase,
              (int)ev.phase.name.len, ev.phase.name.ptr, ev.phase.path_len);

    /* A malformed typed scope (unknown action) is ignored, as in JSON. */
    avro_value_set_branch(&f, 1, &b);
    fill_scope(&b, "leave");
    w = avro_writer_memory(buf + 5, (int64_t)sizeof(buf) - 5);
    SW_ASSERT(avro_value_write(w, &v) == 0, "Avro C write: %s", avro_strerror());
    len = 5 + (size_t)avro_writer_tell(w);
    avro_writer_free(w);
    rc = sw_avro_decode_event(ctx->dec, buf, len, EV_SCHEMA_ID, &ev, err, sizeof(err));
    SW_ASSERT(rc == SW_OK && !ev.has_phase, "rc %d has_phase %d (%s)", rc, ev.has_phase, err);
    /* Written out again, it still has no phase: the metadata's phase_scope
     * (which the decoder would take with the typed field null) is left out,
     * the other members are kept as written. */
    sw_buf_t again;
    sw_buf_init(&again);
    rc = sw_avro_encode_event(&ev, EV_SCHEMA_ID, &again, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "re-encode: %s", err);
    sw_event_t ev2;
    sw_avro_dec_t *dec2 = sw_avro_dec_new();
    rc = sw_avro_decode_event(dec2, again.data, again.len, EV_SCHEMA_ID, &ev2, err, sizeof(err));
    SW_ASSERT(rc == SW_OK && !ev2.has_phase, "re-encoded: rc %d has_phase %d (%s)", rc,
              ev2.has_phase, err);
    SW_ASSERT(sw_str_eq(ev2.metadata_json, sw_str("{\"k\": [1, 2.5, \"x\"]}")), "metadata \"%.*s\"",
              (int)ev2.metadata_json.len, ev2.metadata_json.ptr);
    sw_avro_dec_destroy(dec2);
    sw_buf_clear(&again);
    avro_value_decref(&v);
}

/* An array in blocks with a negative count (count, byte size, items) is
 * valid Avro: the path of a typed scope written that way. */
static void test_negative_block(void **state)
{
    ctx_t *ctx = *state;
    sw_buf_t b, part;
    sw_event_t ev;
    char err[512];
    sw_buf_init(&b);
    sw_buf_init(&part);
    tb_header(&b, EV_SCHEMA_ID);
    tb_long(&b, 0);
    tb_long(&b, 77);
    tb_str(&b, "phase_exit");
    for (int i = 0; i < 19; i++) tb_long(&b, 0); /* collector .. world_size */
    tb_long(&b, 1);
    tb_str(&b, "sess");
    tb_long(&b, 1); /* phase_scope */
    tb_str(&b, "exit");
    tb_str(&b, "b");
    tb_str(&part, "a");
    tb_str(&part, "b");
    tb_long(&b, -2);
    tb_long(&b, (int64_t)part.len);
    sw_buf_put(&b, part.data, part.len);
    tb_long(&b, 1); /* a second block, positive */
    tb_str(&b, "c");
    tb_long(&b, 0);
    tb_long(&b, 0); /* depth */
    tb_str(&b, "B");
    tb_long(&b, 0); /* parent */
    tb_long(&b, 1);
    tb_str(&b, "Main");
    tb_long(&b, 5);
    sw_err_t rc = sw_avro_decode_event(ctx->dec, b.data, b.len, EV_SCHEMA_ID, &ev, err,
                                       sizeof(err));
    SW_ASSERT(rc == SW_OK, "decode: %s", err);
    SW_ASSERT(ev.has_phase && !ev.phase.enter && ev.phase.path_len == 3 &&
                  sw_str_eq(ev.phase.path[2], sw_str("c")) && ev.phase.sequence == 5,
              "has_phase %d path_len %d", ev.has_phase, ev.phase.path_len);
    SW_ASSERT(sw_str_eq(ev.metadata_json, sw_str("{}")), "metadata default");
    sw_buf_clear(&b);
    sw_buf_clear(&part);
}

/* Expect decode of msg to fail with rc and a message containing want. */
static int expect_ev_error(ctx_t *ctx, const sw_buf_t *msg, sw_err_t want_rc, const char *want,
                           int line)
{
    sw_event_t ev;
    char err[512] = "";
    sw_err_t rc = sw_avro_decode_event(ctx->dec, msg->data, msg->len, EV_SCHEMA_ID, &ev, err,
                                       sizeof(err));
    if (rc != want_rc || !strstr(err, want)) {
        fprintf(stderr, "%s:%d: FAIL: rc %d (want %d), error \"%s\" lacks \"%s\"\n", __FILE__, line,
                rc, want_rc, err, want);
        return 1;
    }
    return 0;
}

static void test_event_errors(void **state)
{
    ctx_t *ctx = *state;
    sw_buf_t b;
    sw_event_t ev;
    char err[512];
    int failed = 0;
    sw_buf_init(&b);

    /* Framing. */
    sw_err_t rc = sw_avro_decode_event(ctx->dec, "", 0, EV_SCHEMA_ID, &ev, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_TRUNCATED && strstr(err, "empty message"), "rc %d: %s", rc, err);
    tb_event(&b, 1, "other", NULL, NULL, NULL);
    b.data[0] = 1;
    failed |= expect_ev_error(ctx, &b, SW_ERR_AVRO, "Avro: magic byte is 1, expected 0", __LINE__);
    b.data[0] = 0;
    b.data[4] = 7;
    rc = sw_avro_decode_event(ctx->dec, b.data, b.len, EV_SCHEMA_ID, &ev, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_AVRO && strcmp(err, "unknown schema id 7 (expected 1)") == 0,
              "rc %d: %s", rc, err);
    int32_t id = -5;
    SW_ASSERT(sw_avro_schema_id(b.data, b.len, &id, err, sizeof(err)) == SW_OK && id == 7, "id %d",
              (int)id);
    SW_ASSERT(sw_avro_schema_id(b.data, 3, &id, err, sizeof(err)) == SW_ERR_TRUNCATED, "%s", err);

    /* Varints. */
    b.len = 0;
    tb_header(&b, EV_SCHEMA_ID);
    tb_long(&b, 0);
    sw_buf_put(&b, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
    failed |= expect_ev_error(
        ctx, &b, SW_ERR_AVRO,
        "Avro: varint longer than 10 bytes at byte 6 in field \"timestamp_ns\"", __LINE__);
    b.len = 6;
    sw_buf_put(&b, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
    failed |= expect_ev_error(
        ctx, &b, SW_ERR_AVRO,
        "Avro: varint at byte 6 in field \"timestamp_ns\" does not fit in 64 bits", __LINE__);

    /* Lengths, unions, UTF-8. */
    b.len = 0;
    tb_header(&b, EV_SCHEMA_ID);
    tb_long(&b, 0);
    tb_long(&b, 1);
    tb_long(&b, -3);
    sw_buf_put(&b, "abc", 3);
    failed |= expect_ev_error(ctx, &b, SW_ERR_AVRO,
                              "Avro: negative string length -3 at byte 7 in field \"event_type\"",
                              __LINE__);
    b.len = 7;
    tb_long(&b, 1000);
    sw_buf_put(&b, "abc", 3);
    failed |= expect_ev_error(
        ctx, &b, SW_ERR_TRUNCATED,
        "Avro: truncated at byte 7 while reading field \"event_type\" (string of 1000 bytes, 3 left)",
        __LINE__);
    b.len = 7;
    tb_bytes(&b, "\xc3\x28", 2);
    failed |= expect_ev_error(ctx, &b, SW_ERR_AVRO,
                              "Avro: invalid UTF-8 at byte 8 in field \"event_type\"", __LINE__);
    b.len = 7;
    tb_bytes(&b, "a\xed\xa0\x80", 4); /* an encoded surrogate is not UTF-8 */
    failed |= expect_ev_error(ctx, &b, SW_ERR_AVRO,
                              "Avro: invalid UTF-8 at byte 9 in field \"event_type\"", __LINE__);
    b.len = 5;
    tb_long(&b, 5);
    failed |= expect_ev_error(
        ctx, &b, SW_ERR_AVRO,
        "Avro: union index 5 at byte 5 in field \"schema_version\" is out of range (expected 0..1)",
        __LINE__);

    /* Truncated inside host, at its exact offset. */
    size_t host_off = 0;
    char want[160];
    tb_event(&b, 1, "other", "node-7", NULL, &host_off);
    b.len = host_off + 3;
    snprintf(want, sizeof(want), "Avro: truncated at byte %zu while reading field \"host\"",
             host_off);
    failed |= expect_ev_error(ctx, &b, SW_ERR_TRUNCATED, want, __LINE__);

    /* Trailing bytes. */
    tb_event(&b, 1, "other", NULL, NULL, NULL);
    size_t body_end = b.len;
    sw_buf_put(&b, "xyz", 3);
    snprintf(want, sizeof(want), "Avro: 3 trailing bytes at byte %zu after the record", body_end);
    failed |= expect_ev_error(ctx, &b, SW_ERR_AVRO, want, __LINE__);

    /* Metadata text. */
    tb_event(&b, 1, "other", NULL, "[1, 2]", NULL);
    failed |= expect_ev_error(
        ctx, &b, SW_ERR_INVALID_ARG,
        "field \"metadata\" is [1, 2], expected an object or null (got an array)", __LINE__);
    tb_event(&b, 1, "other", NULL, "\"text\"", NULL);
    failed |= expect_ev_error(ctx, &b, SW_ERR_INVALID_ARG,
                              "expected an object or null (got a string)", __LINE__);
    tb_event(&b, 1, "other", NULL, "{\"a\": 1", NULL);
    failed |= expect_ev_error(ctx, &b, SW_ERR_INVALID_ARG, "field \"metadata\" is not valid JSON",
                              __LINE__);
    tb_event(&b, 1, "other", NULL, "{} {}", NULL);
    failed |= expect_ev_error(ctx, &b, SW_ERR_INVALID_ARG, "field \"metadata\" is not valid JSON",
                              __LINE__);
    tb_event(&b, 1, "other", NULL, " null ", NULL);
    rc = sw_avro_decode_event(ctx->dec, b.data, b.len, EV_SCHEMA_ID, &ev, err, sizeof(err));
    SW_ASSERT(rc == SW_OK && sw_str_eq(ev.metadata_json, sw_str("{}")), "rc %d: %s", rc, err);
    tb_event(&b, 1, "other", NULL, " {\"x\": {}} ", NULL);
    rc = sw_avro_decode_event(ctx->dec, b.data, b.len, EV_SCHEMA_ID, &ev, err, sizeof(err));
    SW_ASSERT(rc == SW_OK && sw_str_eq(ev.metadata_json, sw_str("{\"x\": {}}")), "rc %d: %s", rc,
              err);

    /* SPEC 2 validation, with the JSON decoder's messages. */
    tb_event(&b, -1, "other", NULL, NULL, NULL);
    rc = sw_avro_decode_event(ctx->dec, b.data, b.len, EV_SCHEMA_ID, &ev, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_INVALID_ARG &&
                  strcmp(err, "field \"timestamp_ns\" is -1, expected an integer >= 0") == 0,
              "rc %d: %s", rc, err);
    tb_event(&b, 1, "", NULL, NULL, NULL);
    failed |= expect_ev_error(ctx, &b, SW_ERR_INVALID_ARG,
                              "field \"event_type\" is \"\", expected a non-empty string",
                              __LINE__);
    tb_event(&b, 1, "Sample", NULL, NULL, NULL);
    failed |= expect_ev_error(
        ctx, &b, SW_ERR_INVALID_ARG,
        "field \"device_used_bytes\" is missing, expected an integer >= 0 (required for a sample)",
        __LINE__);
    sw_event_t bad;
    memset(&bad, 0, sizeof(bad));
    bad.timestamp_ns = 1;
    bad.event_type = sw_str("other");
    bad.host = sw_str("h");
    bad.rank = 5;
    bad.world_size = 2;
    bad.has_job_id = true;
    bad.job_id = sw_str("");
    b.len = 0;
    SW_ASSERT(sw_avro_encode_event(&bad, EV_SCHEMA_ID, &b, err, sizeof(err)) == SW_OK, "%s", err);
    failed |= expect_ev_error(ctx, &b, SW_ERR_INVALID_ARG,
                              "field \"rank\" is 5, expected an integer < world_size (2)",
                              __LINE__);
    bad.rank = 1;
    b.len = 0;
    SW_ASSERT(sw_avro_encode_event(&bad, EV_SCHEMA_ID, &b, err, sizeof(err)) == SW_OK, "%s", err);
    failed |= expect_ev_error(ctx, &b, SW_ERR_INVALID_ARG,
                              "field \"job_id\" is \"\", expected null or a non-empty string",
                              __LINE__);

    /* TelemetryEvent v4: a null device_used_bytes on a sample is the
     * backend's capability (counterless, valid); on a v3 sample it is an
     * error as above. */
    sw_event_t v4;
    memset(&v4, 0, sizeof(v4));
    v4.timestamp_ns = 7;
    v4.event_type = sw_str("sample");
    v4.host = sw_str("h");
    v4.world_size = 2;
    v4.rank = 1;
    v4.schema_version.set = true;
    v4.schema_version.value = 4;
    v4.metadata_json = sw_str("{\"memory_capabilities\": {\"supports_device_used\": false}}");
    b.len = 0;
    SW_ASSERT(sw_avro_encode_event(&v4, EV_SCHEMA_ID, &b, err, sizeof(err)) == SW_OK, "%s", err);
    rc = sw_avro_decode_event(ctx->dec, b.data, b.len, EV_SCHEMA_ID, &ev, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "v4 counterless sample: %s", err);
    SW_ASSERT(ev.counterless && !ev.has_device_used && ev.kind == SW_EV_SAMPLE,
              "v4 sample without device_used_bytes: counterless %d", ev.counterless);
    SW_ASSERT_CONTAINS(ev.metadata_json.ptr, "memory_capabilities");
    v4.schema_version.value = 3;
    b.len = 0;
    SW_ASSERT(sw_avro_encode_event(&v4, EV_SCHEMA_ID, &b, err, sizeof(err)) == SW_OK, "%s", err);
    failed |= expect_ev_error(
        ctx, &b, SW_ERR_INVALID_ARG,
        "field \"device_used_bytes\" is missing, expected an integer >= 0 (required for a sample)",
        __LINE__);

    /* Every truncation point of the longest fixture event. */
    const sw_buf_t *m = &ctx->longest_ev;
    SW_ASSERT(m->len > 100, "no long event message kept (%zu bytes)", m->len);
    for (size_t cut = 0; cut < m->len; cut++) {
        err[0] = '\0';
        rc = sw_avro_decode_event(ctx->dec, m->data, cut, EV_SCHEMA_ID, &ev, err, sizeof(err));
        SW_ASSERT(rc == SW_ERR_TRUNCATED && strstr(err, "truncated"),
                  "cut at %zu of %zu: rc %d, \"%s\"", cut, m->len, rc, err);
    }
    rc = sw_avro_decode_event(ctx->dec, m->data, m->len, EV_SCHEMA_ID, &ev, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "whole message: %s", err);
    /* Every single-byte corruption: any outcome but a crash or a read
     * past the end (ASan), and an error always has a message. */
    sw_buf_t c;
    sw_buf_init(&c);
    for (size_t i = 5; i < m->len; i++) {
        static const unsigned char vals[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
        for (size_t k = 0; k < sizeof(vals); k++) {
            c.len = 0;
            sw_buf_put(&c, m->data, m->len);
            c.data[i] = (char)vals[k];
            err[0] = '\0';
            rc = sw_avro_decode_event(ctx->dec, c.data, c.len, EV_SCHEMA_ID, &ev, err, sizeof(err));
            SW_ASSERT(rc == SW_OK || err[0], "byte %zu = 0x%02x: rc %d without a message", i,
                      vals[k], rc);
        }
    }
    sw_buf_clear(&c);
    sw_buf_clear(&b);
    SW_ASSERT(!failed, "see the failures above");
}

/* A lone surrogate kept from JSON (WTF-8): refused in a top-level string,
 * and in a phase string the typed field is dropped for metadata's. */
static void test_event_surrogates(void **state)
{
    ctx_t *ctx = *state;
    const char *line1 = "{\"timestamp_ns\": 1, \"event_type\": \"x\", \"host\": \"a\\ud800b\"}";
    const char *line2 =
        "{\"timestamp_ns\": 900, \"event_type\": \"phase_enter\", \"session_id\": \"s0\", "
        "\"metadata\": {\"phase_scope\": {\"action\": \"enter\", \"name\": \"n\\udc00\", \"path\": "
        "[\"x\\ud800\"], \"depth\": 1, \"scope_id\": \"X\", \"parent_scope_id\": null, "
        "\"thread_id\": 1, \"thread_name\": \"Main\", \"sequence\": 1}}}";
    sw_event_t ev, back;
    char err[512], why[512];
    sw_buf_t b;
    sw_buf_init(&b);
    SW_ASSERT(sw_tdec_json(ctx->tdec, line1, strlen(line1), &ev, err, sizeof(err)) == SW_OK, "%s",
              err);
    sw_err_t rc = sw_avro_encode_event(&ev, EV_SCHEMA_ID, &b, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_INVALID_ARG && strstr(err, "field \"host\" is not valid UTF-8") &&
                  b.len == 0,
              "rc %d, %zu bytes: %s", rc, b.len, err);
    SW_ASSERT(sw_tdec_json(ctx->tdec, line2, strlen(line2), &ev, err, sizeof(err)) == SW_OK, "%s",
              err);
    SW_ASSERT(ev.has_phase, "JSON decoder dropped the scope");
    rc = sw_avro_encode_event(&ev, EV_SCHEMA_ID, &b, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "%s", err);
    json_t *got = avro_c_json(&ctx->ev_val, b.data + 5, b.len - 5, why, sizeof(why));
    SW_ASSERT(got && json_is_null(json_object_get(got, "phase_scope")), "typed scope written: %s",
              got ? "" : why);
    json_decref(got);
    rc = sw_avro_decode_event(ctx->dec, b.data, b.len, EV_SCHEMA_ID, &back, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "%s", err);
    SW_ASSERT(sw_test_event_eq(&ev, &back, why, sizeof(why)), "%s", why);
    sw_buf_clear(&b);
}

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

static int check_record_one(ctx_t *ctx, const sw_record_t *rec, const char *where)
{
    sw_buf_t json, msg, back;
    char err[512], why[1024];
    sw_buf_init(&json);
    sw_buf_init(&msg);
    sw_buf_init(&back);
    sw_alert_json_record(&json, rec);
    sw_err_t rc = sw_avro_encode_record(rec, REC_SCHEMA_ID, &msg, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "%s: encode: %s", where, err);
    if (msg.len > ctx->longest_rec.len) {
        ctx->longest_rec.len = 0;
        sw_buf_put(&ctx->longest_rec, msg.data, msg.len);
    }
    json_error_t je;
    json_t *want = json_loadb(json.data, json.len, JSON_ALLOW_NUL, &je);
    SW_ASSERT(want != NULL, "%s: sw_alert_json_record output does not parse: %s", where, je.text);

    /* Avro C's reading. */
    json_t *got = avro_c_json(&ctx->rec_val, msg.data + 5, msg.len - 5, why, sizeof(why));
    SW_ASSERT(got != NULL, "%s: %s", where, why);
    alert_drop_nulls(got);
    bool same = sw_test_json_equal(got, want, false, why, sizeof(why));
    json_decref(got);
    SW_ASSERT(same, "%s: Avro C view differs from sw_alert_json_record: %s (avro != json)", where,
              why);

    /* Ours: the same text, byte for byte. */
    sw_buf_puts(&back, "prefix:");
    rc = sw_avro_decode_record_json(msg.data, msg.len, REC_SCHEMA_ID, &back, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "%s: decode: %s", where, err);
    json_t *mine = json_loadb(back.data + 7, back.len - 7, JSON_ALLOW_NUL, &je);
    SW_ASSERT(mine != NULL, "%s: decoded JSON does not parse: %s", where, je.text);
    same = sw_test_json_equal(mine, want, false, why, sizeof(why));
    json_decref(mine);
    json_decref(want);
    SW_ASSERT(same, "%s: sw_avro_decode_record_json differs: %s (decoded != json)", where, why);
    SW_ASSERT(back.len - 7 == json.len && memcmp(back.data + 7, json.data, json.len) == 0,
              "%s: same JSON value but different text:\n  %s\n  %s", where, sw_buf_cstr(&back) + 7,
              sw_buf_cstr(&json));

    for (size_t i = 0; i < rec->analysis.n_suspects; i++) {
        const sw_phase_attr_t *ph = &rec->analysis.suspects[i].phase;
        if (ph->resolution == SW_PHASE_UNIQUE) ctx->n_unique++;
        if (ph->resolution == SW_PHASE_AMBIGUOUS) ctx->n_ambiguous++;
        if (ph->resolution == SW_PHASE_AMBIGUOUS && ph->has_summary) ctx->n_phase_summary++;
    }
    sw_buf_clear(&json);
    sw_buf_clear(&msg);
    sw_buf_clear(&back);
    return 0;
}

/* Each record as the engine made it (no source) and as run would send it. */
static int check_record(ctx_t *ctx, const sw_record_t *rec, const char *fixture)
{
    char where[256];
    ctx->n_records++;
    snprintf(where, sizeof(where), "%s record %zu (%s)", fixture, ctx->n_records,
             sw_action_str(rec->action));
    if (check_record_one(ctx, rec, where)) return 1;
    sw_record_t copy = *rec;
    copy.source.set = true;
    copy.source.topic = sw_str("gpu.mem");
    copy.source.partition = 3;
    copy.source.offset = 18233;
    return check_record_one(ctx, &copy, where);
}

typedef struct summary_arg_s {
    ctx_t *ctx;
    const char *fixture;
} summary_arg_t;

static void on_summary(void *opaque, const sw_record_t *rec)
{
    summary_arg_t *arg = opaque;
    /* SPEC 6's records only, as the feed loop checks them: the SPEC 8
     * records that close a crash or warning after a summary have their
     * own Avro checks (test_codecs in test_crash). */
    if (sw_action_is_x8(rec->action)) return;
    arg->ctx->rec_failures += check_record(arg->ctx, rec, arg->fixture);
}

static void fixture_params(const char *name, sw_params_t *p)
{
    char path[4096];
    size_t n = strlen(name) - 6; /* ".jsonl" */
    snprintf(path, sizeof(path), "%s/%.*s.params.json", sw_test_fixtures(), (int)n, name);
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j) return;
    json_t *w = json_object_get(j, "window.samples"), *s = json_object_get(j, "stale.ms");
    if (json_is_integer(w)) p->window_samples = json_integer_value(w);
    if (json_is_integer(s)) p->stale_ms = json_integer_value(s);
    json_decref(j);
}

static int run_stream(ctx_t *ctx, const char *name)
{
    char path[4096], err[512];
    sw_buf_t text;
    sw_buf_init(&text);
    snprintf(path, sizeof(path), "%s/%s", sw_test_fixtures(), name);
    SW_ASSERT(sw_test_read_file(path, &text), "cannot read %s", path);
    sw_params_t p = sw_params_default();
    fixture_params(name, &p);
    sw_detector_t *det = sw_detect_new(p);
    size_t i = 0;
    int failed = 0;
    while (i < text.len && !failed) {
        const char *nl = memchr(text.data + i, '\n', text.len - i);
        size_t end = nl ? (size_t)(nl - text.data) : text.len;
        sw_event_t ev;
        const sw_record_t *rec = NULL;
        if (!sw_tdec_blank(text.data + i, end - i) &&
            sw_tdec_json(ctx->tdec, text.data + i, end - i, &ev, err, sizeof(err)) == SW_OK &&
            sw_detect_feed(det, &ev, 0, &rec, err, sizeof(err)) == SW_OK && rec)
            failed |= check_record(ctx, rec, name);
        i = end + 1;
    }
    summary_arg_t arg = {ctx, name};
    if (!failed) sw_detect_finish(det, on_summary, &arg);
    sw_detect_destroy(det);
    sw_buf_clear(&text);
    return failed;
}

static void test_fixture_records(void **state)
{
    ctx_t *ctx = *state;
    char **names;
    size_t n = list_fixtures(&names);
    int failed = 0;
    for (size_t f = 0; f < n && !failed; f++) failed |= run_stream(ctx, names[f]);
    for (size_t f = 0; f < n; f++) free(names[f]);
    free(names);
    SW_ASSERT(!failed && !ctx->rec_failures, "see the failures above");
    SW_ASSERT(ctx->n_records > 100, "only %zu records checked", ctx->n_records);
    SW_ASSERT(ctx->n_unique > 0 && ctx->n_ambiguous > 0 && ctx->n_phase_summary > 0,
              "phase attributions seen: %zu unique, %zu ambiguous, %zu with summary", ctx->n_unique,
              ctx->n_ambiguous, ctx->n_phase_summary);
    printf("records: %zu stream records (x2 with source) match sw_alert_json_record\n",
           ctx->n_records);
}

static int expect_rec_error(const sw_buf_t *msg, sw_err_t want_rc, const char *want, int line)
{
    char err[512] = "";
    sw_buf_t out;
    sw_buf_init(&out);
    sw_buf_puts(&out, "keep");
    sw_err_t rc = sw_avro_decode_record_json(msg->data, msg->len, REC_SCHEMA_ID, &out, err,
                                             sizeof(err));
    bool ok = rc == want_rc && strstr(err, want) && out.len == 4;
    if (!ok)
        fprintf(stderr,
                "%s:%d: FAIL: rc %d (want %d), output %zu bytes, error \"%s\" lacks \"%s\"\n",
                __FILE__, line, rc, want_rc, out.len, err, want);
    sw_buf_clear(&out);
    return ok ? 0 : 1;
}

static void test_record_errors(void **state)
{
    ctx_t *ctx = *state;
    int failed = 0;
    char err[512];
    sw_buf_t b, out;
    sw_buf_init(&b);
    sw_buf_init(&out);

    /* Unsigned timestamps beyond an Avro long are refused, never wrapped. */
    sw_suspect_t s;
    memset(&s, 0, sizeof(s));
    s.rank = 1;
    s.first_spike_timestamp_ns = 10;
    s.aligned_first_spike_timestamp_ns = (uint64_t)INT64_MAX + 1;
    s.peak_delta_bytes = 1 << 30;
    s.spike_window_samples = 2;
    s.confidence = SW_CONFIDENCE_HIGH;
    s.supporting_ranks = 1;
    int64_t ranks[2] = {0, 1};
    sw_rank_val_t counts[2] = {{0, 5}, {1, 6}};
    sw_record_t rec;
    memset(&rec, 0, sizeof(rec));
    rec.action = SW_ACTION_TRIGGER;
    rec.episode = 1;
    rec.has_event_ts = true;
    rec.event_timestamp_ns = 10;
    rec.analysis.has_job_id = true;
    rec.analysis.job_id = sw_str("j");
    rec.analysis.world_size = 2;
    rec.analysis.participating = ranks;
    rec.analysis.n_participating = 2;
    rec.analysis.counts = counts;
    rec.analysis.n_counts = 2;
    rec.analysis.offsets = counts;
    rec.analysis.n_offsets = 2;
    rec.analysis.anchor_rank = 0;
    rec.analysis.has_onset = true;
    rec.analysis.onset_ns = 5;
    rec.analysis.suspects = &s;
    rec.analysis.n_suspects = 1;
    sw_err_t rc = sw_avro_encode_record(&rec, REC_SCHEMA_ID, &b, err, sizeof(err));
    SW_ASSERT(
        rc == SW_ERR_INVALID_ARG && b.len == 0 &&
            strstr(
                err,
                "field \"first_cause_suspects[0].aligned_first_spike_timestamp_ns\" is 9223372036854775808"),
        "rc %d, %zu bytes: %s", rc, b.len, err);
    s.aligned_first_spike_timestamp_ns = (uint64_t)INT64_MAX;
    rec.analysis.onset_ns = UINT64_MAX;
    rc = sw_avro_encode_record(&rec, REC_SCHEMA_ID, &b, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_INVALID_ARG && b.len == 0 &&
                  strstr(err, "field \"cluster_onset_timestamp_ns\" is 18446744073709551615"),
              "rc %d: %s", rc, err);
    rec.analysis.onset_ns = (uint64_t)INT64_MAX;
    SW_ASSERT_I64(check_record_one(ctx, &rec, "INT64_MAX timestamps"), 0);
    rec.action = (sw_action_t)7;
    rc = sw_avro_encode_record(&rec, REC_SCHEMA_ID, &b, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_INVALID_ARG && b.len == 0 && strstr(err, "field \"action\" is 7"),
              "rc %d: %s", rc, err);
    rec.action = SW_ACTION_TRIGGER;

    /* A lone surrogate in a job id becomes U+FFFD, and the alert is sent. */
    rec.analysis.job_id = sw_str("j\xed\xa0\x80x");
    rc = sw_avro_encode_record(&rec, REC_SCHEMA_ID, &b, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "%s", err);
    rc = sw_avro_decode_record_json(b.data, b.len, REC_SCHEMA_ID, &out, err, sizeof(err));
    SW_ASSERT(rc == SW_OK && strstr(sw_buf_cstr(&out), "\"job_id\": \"j\xef\xbf\xbdx\""),
              "rc %d: %s", rc, rc ? err : out.data);

    /* Framing and body errors. */
    rc = sw_avro_decode_record_json("", 0, REC_SCHEMA_ID, &out, err, sizeof(err));
    SW_ASSERT(rc == SW_ERR_TRUNCATED, "rc %d", rc);
    b.len = 0;
    tb_header(&b, 9);
    failed |= expect_rec_error(&b, SW_ERR_AVRO, "unknown schema id 9 (expected 42)", __LINE__);
    b.len = 0;
    tb_header(&b, REC_SCHEMA_ID);
    tb_long(&b, 6); /* 4 and 5 are SPEC 8's crash and warning */
    failed |= expect_rec_error(
        &b, SW_ERR_AVRO,
        "Avro: enum index 6 at byte 5 in field \"action\" is out of range (expected 0..5)",
        __LINE__);
    b.len = 5;
    tb_long(&b, 0); /* trigger */
    tb_long(&b, 0); /* job_id null */
    tb_long(&b, 1); /* episode */
    tb_long(&b, 0); /* revision */
    tb_long(&b, 0); /* event_timestamp_ns null */
    tb_long(&b, 2); /* world_size */
    tb_long(&b, 0); /* participating */
    tb_long(&b, 0); /* missing */
    size_t key_at = b.len + 1;
    tb_long(&b, 1);
    tb_str(&b, "01");
    tb_long(&b, 3);
    tb_long(&b, 0);
    char want[200];
    snprintf(
        want, sizeof(want),
        "Avro: map key \"01\" at byte %zu in field \"rank_sample_counts\" is not a decimal rank",
        key_at);
    failed |= expect_rec_error(&b, SW_ERR_AVRO, want, __LINE__);

    /* Every truncation point of the longest fixture record, and trailing
     * bytes after it. */
    const sw_buf_t *m = &ctx->longest_rec;
    SW_ASSERT(m->len > 100, "no long record message kept (%zu bytes)", m->len);
    for (size_t cut = 0; cut < m->len; cut++) {
        b.len = 0;
        sw_buf_put(&b, m->data, cut);
        if (expect_rec_error(&b, SW_ERR_TRUNCATED, "truncated at byte", __LINE__)) {
            SW_FAIL("  (cut at %zu of %zu)", cut, m->len);
        }
    }
    b.len = 0;
    sw_buf_put(&b, m->data, m->len);
    sw_buf_put(&b, "\0", 1);
    snprintf(want, sizeof(want), "Avro: 1 trailing bytes at byte %zu after the record", m->len);
    failed |= expect_rec_error(&b, SW_ERR_AVRO, want, __LINE__);
    for (size_t i = 5; i < m->len; i++) {
        static const unsigned char vals[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
        for (size_t k = 0; k < sizeof(vals); k++) {
            b.len = 0;
            sw_buf_put(&b, m->data, m->len);
            b.data[i] = (char)vals[k];
            out.len = 0;
            err[0] = '\0';
            rc = sw_avro_decode_record_json(b.data, b.len, REC_SCHEMA_ID, &out, err, sizeof(err));
            SW_ASSERT(rc == SW_OK ? out.len > 0 : err[0] && out.len == 0,
                      "byte %zu = 0x%02x: rc %d, %zu bytes out", i, vals[k], rc, out.len);
        }
    }
    sw_buf_clear(&b);
    sw_buf_clear(&out);
    SW_ASSERT(!failed, "see the failures above");
}

/* ------------------------------------------------------------------ */

/* The schemas checked, Avro C's generic values and the decoders: the
 * group's state (a ctx_t). */
static int ctx_new(void **state)
{
    static ctx_t ctx;
    int failed = 0;
    memset(&ctx, 0, sizeof(ctx));
    sw_buf_init(&ctx.longest_ev);
    sw_buf_init(&ctx.longest_rec);
    failed |= check_schema(sw_schema_telemetry_event, sw_schema_telemetry_event_len,
                           "TelemetryEvent", k_event_fields,
                           sizeof(k_event_fields) / sizeof(k_event_fields[0]), &ctx.ev_schema);
    failed |= check_schema(sw_schema_first_cause_alert, sw_schema_first_cause_alert_len,
                           "FirstCauseAlert", k_alert_fields,
                           sizeof(k_alert_fields) / sizeof(k_alert_fields[0]), &ctx.rec_schema);
    SW_ASSERT(!failed && ctx.ev_schema && ctx.rec_schema, "the schemas (see above)");
    ctx.ev_iface = avro_generic_class_from_schema(ctx.ev_schema);
    ctx.rec_iface = avro_generic_class_from_schema(ctx.rec_schema);
    SW_ASSERT(ctx.ev_iface && ctx.rec_iface && !avro_generic_value_new(ctx.ev_iface, &ctx.ev_val) &&
                  !avro_generic_value_new(ctx.rec_iface, &ctx.rec_val),
              "Avro C generic values: %s", avro_strerror());
    ctx.dec = sw_avro_dec_new();
    ctx.tdec = sw_tdec_new();
    *state = &ctx;
    return 0;
}

static int ctx_destroy(void **state)
{
    ctx_t *ctx = *state;
    sw_avro_dec_destroy(ctx->dec);
    sw_tdec_destroy(ctx->tdec);
    sw_buf_clear(&ctx->longest_ev);
    sw_buf_clear(&ctx->longest_rec);
    avro_value_decref(&ctx->ev_val);
    avro_value_decref(&ctx->rec_val);
    avro_value_iface_decref(ctx->ev_iface);
    avro_value_iface_decref(ctx->rec_iface);
    avro_schema_decref(ctx->ev_schema);
    avro_schema_decref(ctx->rec_schema);
    return 0;
}

/* The word-at-a-time varint path (rd_varint) against the byte-by-byte one
 * (rd_varint_slow): every bit length, both signs, each varint alone at the
 * end of its buffer (the careful path) and followed by padding (the fast
 * one); and short strings, ASCII or not, at every length around the
 * two-word check. */
static void test_varint_paths(void **state)
{
    (void)state;
    char err[256];
    for (int bits = 0; bits <= 64; bits++) {
        for (int k = 0; k < 4; k++) {
            uint64_t u = bits == 0 ? 0 : (bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1);
            if (k == 1 && bits > 0) u = UINT64_C(1) << (bits - 1);
            if (k == 2) u = u * UINT64_C(0x9e3779b97f4a7c15) >> (64 - (bits ? bits : 1));
            int64_t v = k == 3 ? -(int64_t)(u >> 1) - 1 : (int64_t)u;
            sw_buf_t b;
            sw_buf_init(&b);
            put_long(&b, v);
            size_t len = b.len;
            for (int pad = 0; pad < 2; pad++) {
                if (pad) sw_buf_put(&b, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a", 10);
                rd_t rd;
                rd_init(&rd, b.data, b.len, err, sizeof(err));
                int64_t got = 0;
                assert_true(rd_long(&rd, &got));
                assert_int_equal(got, v);
                assert_int_equal((size_t)((const char *)rd.p - b.data), len);
            }
            sw_buf_clear(&b);
        }
    }
    /* A 10-byte varint whose last byte carries more than bit 63. */
    static const unsigned char too_big[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                            0x02, 0,    0,    0,    0,    0,    0,    0};
    rd_t rd;
    rd_init(&rd, too_big, sizeof(too_big), err, sizeof(err));
    int64_t got = 0;
    assert_false(rd_long(&rd, &got));
    assert_non_null(strstr(err, "does not fit in 64 bits"));
    for (size_t n = 0; n <= 20; n++) {
        for (int bad = -1; bad < (int)n; bad++) {
            sw_buf_t b;
            sw_buf_init(&b);
            put_long(&b, (int64_t)n);
            for (size_t i = 0; i < n; i++) sw_buf_putc(&b, (int)i == bad ? (char)0xff : 'a');
            sw_buf_put(&b, "0123456789abcdef", 16);
            rd_init(&rd, b.data, b.len, err, sizeof(err));
            sw_str_t s = {0};
            bool ok = rd_str(&rd, &s);
            assert_int_equal(ok, bad < 0);
            if (ok) assert_int_equal(s.len, n);
            else assert_non_null(strstr(err, "invalid UTF-8"));
            sw_buf_clear(&b);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_events),   cmocka_unit_test(test_avro_c_written),
        cmocka_unit_test(test_negative_block),   cmocka_unit_test(test_event_errors),
        cmocka_unit_test(test_event_surrogates), cmocka_unit_test(test_fixture_records),
        cmocka_unit_test(test_record_errors),    cmocka_unit_test(test_varint_paths),
    };
    return cmocka_run_group_tests(tests, ctx_new, ctx_destroy);
}
