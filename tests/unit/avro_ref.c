/* The helpers of avro_ref.h. */
#include "avro_ref.h"

const char *const k_event_fields[24] = {"schema_version",
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

const char *const k_alert_fields[24] = {"action",
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
bool is_branch_name(const char *k)
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
json_t *unwrap_unions(json_t *j)
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
json_t *avro_c_json(avro_value_t *val, const char *body, size_t len, char *why, size_t why_size)
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

/* Test-side Avro writer, for hand-made (malformed) messages. */
void tb_long(sw_buf_t *b, int64_t v)
{
    uint64_t u = ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
    while (u >= 0x80) {
        sw_buf_putc(b, (char)(u | 0x80));
        u >>= 7;
    }
    sw_buf_putc(b, (char)u);
}

void tb_bytes(sw_buf_t *b, const char *s, size_t n)
{
    tb_long(b, (int64_t)n);
    sw_buf_put(b, s, n);
}

void tb_str(sw_buf_t *b, const char *s)
{
    tb_bytes(b, s, strlen(s));
}

void tb_header(sw_buf_t *b, uint32_t id)
{
    char h[5] = {0, (char)(id >> 24), (char)(id >> 16), (char)(id >> 8), (char)id};
    sw_buf_put(b, h, 5);
}

/* ------------------------------------------------------------------ */
/* Schemas                                                             */
/* ------------------------------------------------------------------ */

/* Every "fields" member of every record in the schema JSON has a doc. */
int check_docs(json_t *j, const char *schema)
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

int check_schema(const char *text, unsigned len, const char *name, const char *const *fields,
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

bool is_event_fixture(const char *name)
{
    size_t n = strlen(name);
    if (n < 7 || strcmp(name + n - 6, ".jsonl") != 0) return false;
    return !(n > 13 && strcmp(name + n - 13, ".stream.jsonl") == 0);
}

int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted event fixture names (NAME.jsonl); caller frees each and *names. */
size_t list_fixtures(char ***names)
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

/* ------------------------------------------------------------------ */

/* The schemas checked, Avro C's generic values and the decoders: the
 * group's state (a ctx_t). */
int ctx_new(void **state)
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

int ctx_destroy(void **state)
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
