/*
 * The hand-written Avro event codec (src/codec/sw_codec_avro.c) against
 * Avro C: the embedded schemas parse; every valid fixture event survives
 * encode -> Avro C decode (same values as the JSON line) and encode -> our
 * decode (same sw_event_t); Avro C's own encoding decodes with ours;
 * malformed input fails with a precise message and never crashes; the
 * word-at-a-time varint path equals the byte-by-byte one.
 */
#include "avro_ref.h"

#define EV_SCHEMA_ID 1

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
        cmocka_unit_test(test_event_surrogates), cmocka_unit_test(test_varint_paths),
    };
    return cmocka_run_group_tests(tests, ctx_new, ctx_destroy);
}
