/*
 * The synthetic generator (sw_gen) and `stormwatch gen`: same options give
 * the same bytes, every line decodes, normal dynamics never spike, and the
 * batch analysis and the stream engine both name the injected storm rank.
 * Also delivery noise, 0 storms, option errors and the CLI end to end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_arena.h"
#include "sw_batch.h"
#include "sw_codec_telemetry.h"
#include "sw_detect.h"
#include "sw_gen.h"
#include "sw_testlib.h"

/* ---- helpers --------------------------------------------------------------- */

/* Generate everything into out; @returns the generator (truth and stats),
 * or NULL after printing why sw_gen_new() refused the options. */
static sw_gen_t *gen_all(const sw_gen_opts_t *o, sw_buf_t *out)
{
    char errstr[512];
    sw_gen_t *gen = sw_gen_new(o, errstr, sizeof(errstr));
    if (!gen) {
        fprintf(stderr, "sw_gen_new: %s\n", errstr);
        return NULL;
    }
    out->len = 0;
    while (sw_gen_next(gen, out)) {
    }
    return gen;
}

typedef int (*event_fn)(void *ctx, const sw_event_t *ev);

/* Decode every line of buf and hand it to fn; a decode error fails. */
static int each_event(const sw_buf_t *buf, event_fn fn, void *ctx)
{
    sw_tdec_t *dec = sw_tdec_new();
    char errstr[512];
    size_t i = 0, lineno = 0;
    int rc = 0;
    while (i < buf->len && rc == 0) {
        const char *nl = memchr(buf->data + i, '\n', buf->len - i);
        size_t end = nl ? (size_t)(nl - buf->data) : buf->len;
        lineno++;
        sw_event_t ev;
        sw_err_t err = sw_tdec_json(dec, buf->data + i, end - i, &ev, errstr, sizeof(errstr));
        if (err != SW_OK) {
            fprintf(stderr, "%s:%d: FAIL: line %zu does not decode: %s: %.*s\n", __FILE__, __LINE__,
                    lineno, errstr, (int)(end - i), buf->data + i);
            rc = 1;
        } else {
            rc = fn(ctx, &ev);
        }
        i = end + 1;
    }
    sw_tdec_destroy(dec);
    return rc;
}

static const sw_gen_storm_t *truth_of(const sw_gen_t *gen, size_t *n)
{
    const sw_gen_storm_t *storms;
    *n = sw_gen_truth(gen, &storms);
    return storms;
}

/* ---- 1. determinism --------------------------------------------------------- */

static void test_determinism(void **state)
{
    (void)state;
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.jobs = 3;
    o.ranks = 16;
    o.samples = 300;
    o.phases = true;
    o.duplicates = 0.02;
    o.late = 0.02;
    o.storm_rank = SW_GEN_STORM_RANK_RANDOM;
    sw_buf_t a, b;
    sw_buf_init(&a);
    sw_buf_init(&b);
    sw_gen_t *g1 = gen_all(&o, &a), *g2 = gen_all(&o, &b);
    SW_ASSERT(g1 && g2, "generator refused valid options");
    SW_ASSERT(a.len > 0 && a.len == b.len, "lengths %zu and %zu", a.len, b.len);
    SW_ASSERT(memcmp(a.data, b.data, a.len) == 0, "same options, different bytes");
    sw_gen_stats_t s1, s2;
    sw_gen_stats(g1, &s1);
    sw_gen_stats(g2, &s2);
    SW_ASSERT(s1.events == s2.events && s1.bytes == a.len, "events %llu/%llu bytes %llu/%zu",
              (unsigned long long)s1.events, (unsigned long long)s2.events,
              (unsigned long long)s1.bytes, a.len);
    SW_ASSERT(s1.samples == 3 * 16 * 300 + s1.duplicates, "samples %llu duplicates %llu",
              (unsigned long long)s1.samples, (unsigned long long)s1.duplicates);
    sw_gen_destroy(g2);
    o.seed = 2;
    g2 = gen_all(&o, &b);
    SW_ASSERT(g2, "generator refused seed 2");
    SW_ASSERT(a.len != b.len || memcmp(a.data, b.data, a.len) != 0,
              "seeds 1 and 2 gave the same bytes");
    sw_gen_destroy(g1);
    sw_gen_destroy(g2);
    sw_buf_clear(&a);
    sw_buf_clear(&b);
}

/* ---- 2. every line decodes; field set and consistency ------------------------ */

typedef struct decode_ctx_s {
    size_t samples, enters, exits;
    int64_t ranks;
    int64_t last_ts[64]; /* newest sample timestamp per rank, arrival order */
    bool check_order;
} decode_ctx_t;

static int on_decoded(void *opaque, const sw_event_t *ev)
{
    decode_ctx_t *c = opaque;
    SW_ASSERT(ev->rank >= 0 && ev->rank < c->ranks && ev->world_size == c->ranks,
              "rank %lld world_size %lld", (long long)ev->rank, (long long)ev->world_size);
    SW_ASSERT(ev->has_job_id && ev->has_session_id, "job_id or session_id missing");
    SW_ASSERT(ev->device_total_bytes.set &&
                  ev->device_total_bytes.value == SW_GEN_DEVICE_TOTAL_BYTES,
              "device_total_bytes %lld", (long long)ev->device_total_bytes.value);
    SW_ASSERT(ev->device_free_bytes.value == ev->device_total_bytes.value - ev->device_used_bytes,
              "free %lld used %lld", (long long)ev->device_free_bytes.value,
              (long long)ev->device_used_bytes);
    SW_ASSERT(ev->local_rank.value == ev->rank % 8 && ev->device_id.value == ev->rank % 8,
              "rank %lld local_rank %lld device_id %lld", (long long)ev->rank,
              (long long)ev->local_rank.value, (long long)ev->device_id.value);
    if (ev->kind == SW_EV_SAMPLE) {
        c->samples++;
        int64_t al = ev->allocator_allocated_bytes.value, re = ev->allocator_reserved_bytes.value;
        SW_ASSERT(0 <= al && al <= re && re <= ev->device_used_bytes,
                  "allocated %lld reserved %lld used %lld", (long long)al, (long long)re,
                  (long long)ev->device_used_bytes);
        SW_ASSERT(ev->device_used_bytes >= ((int64_t)28 << 30), "used %lld below the baseline",
                  (long long)ev->device_used_bytes);
        SW_ASSERT(sw_str_eq(ev->metadata_json, sw_str("{}")), "sample metadata %.*s",
                  (int)ev->metadata_json.len, ev->metadata_json.ptr);
        if (c->check_order && ev->rank < 64) {
            SW_ASSERT(ev->timestamp_ns > c->last_ts[ev->rank],
                      "rank %lld: sample %lld arrived after %lld without --late",
                      (long long)ev->rank, (long long)ev->timestamp_ns,
                      (long long)c->last_ts[ev->rank]);
            c->last_ts[ev->rank] = ev->timestamp_ns;
        }
    } else {
        SW_ASSERT(ev->kind == SW_EV_PHASE_ENTER || ev->kind == SW_EV_PHASE_EXIT,
                  "unexpected event_type %.*s", (int)ev->event_type.len, ev->event_type.ptr);
        SW_ASSERT(ev->has_phase, "phase event without a well-formed phase_scope");
        SW_ASSERT(ev->device_used_bytes == 0, "phase event used %lld",
                  (long long)ev->device_used_bytes);
        SW_ASSERT(ev->phase.path_len == 2 && sw_str_eq(ev->phase.path[0], sw_str("train")) &&
                      sw_str_eq(ev->phase.path[1], ev->phase.name),
                  "path_len %d", ev->phase.path_len);
        SW_ASSERT(sw_str_eq(ev->phase.name, sw_str("forward")) ||
                      sw_str_eq(ev->phase.name, sw_str("backward")),
                  "phase name %.*s", (int)ev->phase.name.len, ev->phase.name.ptr);
        SW_ASSERT(ev->phase.enter == (ev->kind == SW_EV_PHASE_ENTER),
                  "action does not match event_type");
        if (ev->phase.enter) c->enters++;
        else c->exits++;
    }
    return 0;
}

/* The keys of a generated sample line, in order, are those of the fixture. */
static int check_keys(const char *line, size_t len)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/gen6.jsonl", sw_test_fixtures());
    sw_buf_t fx;
    sw_buf_init(&fx);
    SW_ASSERT(sw_test_read_file(path, &fx), "cannot read %s", path);
    const char *nl = memchr(fx.data, '\n', fx.len);
    json_error_t e;
    json_t *want = json_loadb(fx.data, nl ? (size_t)(nl - fx.data) : fx.len, 0, &e);
    json_t *got = json_loadb(line, len, 0, &e);
    SW_ASSERT(want && got, "unparsable line: %s", e.text);
    SW_ASSERT(json_object_size(want) == json_object_size(got), "%zu keys, the fixture has %zu",
              json_object_size(got), json_object_size(want));
    void *it1 = json_object_iter(want), *it2 = json_object_iter(got);
    for (; it1 && it2;
         it1 = json_object_iter_next(want, it1), it2 = json_object_iter_next(got, it2)) {
        const char *k1 = json_object_iter_key(it1), *k2 = json_object_iter_key(it2);
        SW_ASSERT(strcmp(k1, k2) == 0, "key \"%s\" where the fixture has \"%s\"", k2, k1);
        json_t *v1 = json_object_iter_value(it1), *v2 = json_object_iter_value(it2);
        SW_ASSERT(
            json_typeof(v1) == json_typeof(v2) || (json_is_integer(v1) && json_is_integer(v2)),
            "key \"%s\": JSON type %d, the fixture has %d", k1, json_typeof(v2), json_typeof(v1));
    }
    SW_ASSERT(json_integer_value(json_object_get(got, "schema_version")) == 3, "schema_version");
    SW_ASSERT(
        !strcmp(json_string_value(json_object_get(got, "collector")), "stormlog.cuda_tracker"),
        "collector");
    json_decref(want);
    json_decref(got);
    sw_buf_clear(&fx);
    return 0;
}

static void test_decode(void **state)
{
    (void)state;
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.ranks = 12;
    o.samples = 205; /* ends inside a forward phase */
    o.phases = true;
    sw_buf_t buf;
    sw_buf_init(&buf);
    sw_gen_t *gen = gen_all(&o, &buf);
    SW_ASSERT(gen, "generator refused valid options");
    decode_ctx_t c;
    memset(&c, 0, sizeof(c));
    c.ranks = o.ranks;
    c.check_order = true;
    SW_ASSERT_I64(each_event(&buf, on_decoded, &c), 0);
    SW_ASSERT(c.samples == 12 * 205, "samples %zu", c.samples);
    /* 21 steps of two scopes each, every scope opened and closed. */
    SW_ASSERT(c.enters == 12 * 21 * 2 - 12 && c.exits == c.enters, "enters %zu exits %zu", c.enters,
              c.exits);
    const char *nl = memchr(buf.data, '\n', buf.len);
    SW_ASSERT_I64(check_keys(buf.data, (size_t)(nl - buf.data)), 0);
    sw_gen_destroy(gen);

    /* Delivery noise keeps every line valid too. */
    o.samples = 300;
    o.duplicates = 0.1;
    o.late = 0.1;
    o.jobs = 2;
    gen = gen_all(&o, &buf);
    SW_ASSERT(gen, "generator refused valid options");
    memset(&c, 0, sizeof(c));
    c.ranks = o.ranks;
    SW_ASSERT_I64(each_event(&buf, on_decoded, &c), 0);
    sw_gen_stats_t st;
    sw_gen_stats(gen, &st);
    SW_ASSERT(c.samples == st.samples && st.samples == 2 * 12 * 300 + st.duplicates,
              "decoded %zu samples, stats %llu", c.samples, (unsigned long long)st.samples);
    sw_gen_destroy(gen);
    sw_buf_clear(&buf);
}

/* ---- normal dynamics never spike (SPEC 3.3 scan per rank) -------------------- */

typedef struct series_s {
    int64_t *ts, *used;
    size_t n, cap;
} series_t;

typedef struct spikes_ctx_s {
    series_t s[16];
} spikes_ctx_t;

static int on_series(void *opaque, const sw_event_t *ev)
{
    spikes_ctx_t *c = opaque;
    if (ev->kind != SW_EV_SAMPLE) return 0;
    SW_ASSERT(ev->rank < 16, "rank %lld", (long long)ev->rank);
    series_t *s = &c->s[ev->rank];
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->ts = realloc(s->ts, s->cap * sizeof(*s->ts));
        s->used = realloc(s->used, s->cap * sizeof(*s->used));
    }
    s->ts[s->n] = ev->timestamp_ns;
    s->used[s->n] = ev->device_used_bytes;
    s->n++;
    return 0;
}

/* In arrival order without --late, so already sorted by timestamp. Returns
 * the timestamps where a strictly rising run first reaches the threshold. */
static size_t spike_scan(const series_t *s, int64_t *out, size_t max_out)
{
    int64_t mx = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->used[i] > mx) mx = s->used[i];
    int64_t thr = (int64_t)((double)mx * SW_DEFAULT_SPIKE_FRACTION);
    if (thr < SW_DEFAULT_SPIKE_MIN_BYTES) thr = SW_DEFAULT_SPIKE_MIN_BYTES;
    int64_t run = 0;
    bool counted = false;
    size_t n = 0;
    for (size_t i = 1; i < s->n; i++) {
        int64_t d = s->used[i] - s->used[i - 1];
        if (d <= 0) {
            run = 0;
            counted = false;
            continue;
        }
        run += d;
        if (run >= thr && !counted) {
            counted = true;
            if (n < max_out) out[n] = s->ts[i];
            n++;
        }
    }
    return n;
}

static void test_spikes_only_at_storms(void **state)
{
    (void)state;
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.ranks = 16;
    o.samples = 1200;
    o.storms = 4;
    o.storm_at = 0.2;
    o.storm_rank = SW_GEN_STORM_RANK_RANDOM;
    o.seed = 7;
    sw_buf_t buf;
    sw_buf_init(&buf);
    sw_gen_t *gen = gen_all(&o, &buf);
    SW_ASSERT(gen, "generator refused valid options");
    spikes_ctx_t c;
    memset(&c, 0, sizeof(c));
    SW_ASSERT_I64(each_event(&buf, on_series, &c), 0);
    size_t nt;
    const sw_gen_storm_t *t = truth_of(gen, &nt);
    SW_ASSERT(nt == 4, "truth has %zu storms", nt);
    for (int r = 0; r < 16; r++) {
        int64_t at[8];
        size_t n = spike_scan(&c.s[r], at, 8);
        SW_ASSERT(n == 4, "rank %d has %zu qualifying rising runs, expected one per storm", r, n);
        for (size_t k = 0; k < nt; k++) {
            if (t[k].rank == r)
                SW_ASSERT(at[k] == t[k].onset_timestamp_ns,
                          "storm %zu: rank %d spikes at %lld, truth onset %lld", k, r,
                          (long long)at[k], (long long)t[k].onset_timestamp_ns);
            if (t[k].first_hit_rank == r)
                SW_ASSERT(at[k] == t[k].first_hit_timestamp_ns,
                          "storm %zu: rank %d spikes at %lld, truth first hit %lld", k, r,
                          (long long)at[k], (long long)t[k].first_hit_timestamp_ns);
            if (t[k].rank != r)
                SW_ASSERT(at[k] > t[k].onset_timestamp_ns - 2 * o.skew_ms * 1000000,
                          "storm %zu: rank %d spikes at %lld before the onset %lld", k, r,
                          (long long)at[k], (long long)t[k].onset_timestamp_ns);
        }
        free(c.s[r].ts);
        free(c.s[r].used);
    }
    sw_gen_destroy(gen);
    sw_buf_clear(&buf);
}

/* ---- 3. batch analysis names the storm rank ---------------------------------- */

static int on_batch(void *opaque, const sw_event_t *ev)
{
    sw_batch_add(opaque, ev, NULL, 0);
    return 0;
}

static int check_batch(int64_t ranks, int64_t samples, bool phases, uint64_t seed)
{
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.ranks = ranks;
    o.samples = samples;
    o.phases = phases;
    o.seed = seed;
    sw_buf_t buf;
    sw_buf_init(&buf);
    sw_gen_t *gen = gen_all(&o, &buf);
    SW_ASSERT(gen, "generator refused %lld ranks x %lld samples", (long long)ranks,
              (long long)samples);
    sw_batch_t *b = sw_batch_new(sw_params_default());
    SW_ASSERT_I64(each_event(&buf, on_batch, b), 0);
    sw_arena_t arena;
    sw_arena_init(&arena);
    sw_analysis_t an;
    sw_batch_run(b, &arena, &an);
    size_t nt;
    const sw_gen_storm_t *t = truth_of(gen, &nt);
    SW_ASSERT(nt == 1 && t[0].rank == (ranks >= 4 ? 3 : ranks - 1), "truth: %zu storms, rank %lld",
              nt, (long long)t[0].rank);
    SW_ASSERT(an.has_onset && an.n_suspects >= 1,
              "%lldx%lld phases=%d seed=%llu: onset %d, %zu suspects", (long long)ranks,
              (long long)samples, phases, (unsigned long long)seed, an.has_onset, an.n_suspects);
    const sw_suspect_t *s = &an.suspects[0];
    SW_ASSERT(s->rank == t[0].rank && s->confidence == SW_CONFIDENCE_HIGH,
              "%lldx%lld phases=%d seed=%llu: first suspect rank %lld confidence %s, expected rank "
              "%lld high",
              (long long)ranks, (long long)samples, phases, (unsigned long long)seed,
              (long long)s->rank, sw_confidence_str(s->confidence), (long long)t[0].rank);
    SW_ASSERT(s->first_spike_timestamp_ns == t[0].onset_timestamp_ns,
              "seed %llu: spike at %lld, truth onset %lld", (unsigned long long)seed,
              (long long)s->first_spike_timestamp_ns, (long long)t[0].onset_timestamp_ns);
    SW_ASSERT(an.n_missing == 0 && an.world_size == ranks, "world_size %lld, %zu missing",
              (long long)an.world_size, an.n_missing);
    if (phases)
        SW_ASSERT(s->phase.resolution == SW_PHASE_UNIQUE, "seed %llu: phase resolution %d",
                  (unsigned long long)seed, (int)s->phase.resolution);
    sw_arena_clear(&arena);
    sw_batch_destroy(b);
    sw_gen_destroy(gen);
    sw_buf_clear(&buf);
    return 0;
}

static void test_batch_finds_storm_rank(void **state)
{
    (void)state;
    static const struct {
        int64_t ranks, samples;
    } sizes[] = {{8, 400}, {64, 200}, {3, 120}};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (int phases = 0; phases <= 1; phases++)
            for (uint64_t seed = 1; seed <= 3; seed++)
                SW_ASSERT_I64(check_batch(sizes[i].ranks, sizes[i].samples, phases, seed), 0);
}

/* ---- 4. stream engine -------------------------------------------------------- */

typedef struct stream_ctx_s {
    sw_detector_t *det;
    char actions[256]; /* T, U, R per record */
    size_t nact;
    int64_t trigger_rank[16];
    size_t ntrig;
} stream_ctx_t;

static int on_stream(void *opaque, const sw_event_t *ev)
{
    stream_ctx_t *c = opaque;
    const sw_record_t *rec = NULL;
    char errstr[256];
    SW_ASSERT(sw_detect_feed(c->det, ev, 0, &rec, errstr, sizeof(errstr)) == SW_OK, "feed: %s",
              errstr);
    if (!rec) return 0;
    SW_ASSERT(c->nact + 1 < sizeof(c->actions), "too many records (%zu)", c->nact);
    c->actions[c->nact++] = "TURS"[rec->action];
    if (rec->action == SW_ACTION_TRIGGER) {
        SW_ASSERT(rec->analysis.n_suspects >= 1, "trigger without suspects");
        if (c->ntrig < 16) c->trigger_rank[c->ntrig] = rec->analysis.suspects[0].rank;
        c->ntrig++;
    }
    return 0;
}

static int run_stream(const sw_gen_opts_t *o, stream_ctx_t *c, sw_gen_t **genp,
                      sw_detect_stats_t *st)
{
    sw_buf_t buf;
    sw_buf_init(&buf);
    sw_gen_t *gen = gen_all(o, &buf);
    SW_ASSERT(gen, "generator refused valid options");
    memset(c, 0, sizeof(*c));
    sw_params_t p = sw_params_default();
    p.window_samples = 512;
    c->det = sw_detect_new(p);
    int rc = each_event(&buf, on_stream, c);
    if (st) sw_detect_stats(c->det, st);
    sw_detect_destroy(c->det);
    sw_buf_clear(&buf);
    *genp = gen;
    return rc;
}

static void test_stream_one_storm(void **state)
{
    (void)state;
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.ranks = 8;
    o.samples = 400;
    o.phases = true;
    stream_ctx_t c;
    sw_gen_t *gen;
    SW_ASSERT_I64(run_stream(&o, &c, &gen, NULL), 0);
    c.actions[c.nact] = '\0';
    SW_ASSERT(c.ntrig == 1 && c.trigger_rank[0] == 3,
              "records \"%s\", %zu triggers, first suspect %lld", c.actions, c.ntrig,
              (long long)(c.ntrig ? c.trigger_rank[0] : -1));
    sw_gen_destroy(gen);
}

/* v4 lines (null allocator counters, memory_capabilities) analyse exactly
 * as the same v3 lines do. */
typedef struct v4_ctx_s {
    size_t events, samples_with_caps;
} v4_ctx_t;

static int on_v4(void *opaque, const sw_event_t *ev)
{
    v4_ctx_t *c = opaque;
    c->events++;
    SW_ASSERT(ev->schema_version.set && ev->schema_version.value == 4, "schema_version %lld",
              (long long)ev->schema_version.value);
    SW_ASSERT(!ev->allocator_allocated_bytes.set && !ev->allocator_change_bytes.set,
              "allocator counters are not null");
    SW_ASSERT(!ev->counterless, "a gen v4 sample is counterless");
    if (ev->kind == SW_EV_SAMPLE &&
        memmem(ev->metadata_json.ptr, ev->metadata_json.len, "\"memory_capabilities\"", 21))
        c->samples_with_caps++;
    return 0;
}

static void test_stream_v4(void **state)
{
    (void)state;
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.ranks = 8;
    o.samples = 400;
    o.phases = true;
    stream_ctx_t c3, c4;
    sw_gen_t *g3, *g4;
    SW_ASSERT_I64(run_stream(&o, &c3, &g3, NULL), 0);
    o.schema_version = 4;
    SW_ASSERT_I64(run_stream(&o, &c4, &g4, NULL), 0);
    c3.actions[c3.nact] = c4.actions[c4.nact] = '\0';
    SW_ASSERT_STREQ(c4.actions, c3.actions);
    SW_ASSERT(c4.ntrig == c3.ntrig && c4.ntrig > 0 &&
                  memcmp(c4.trigger_rank, c3.trigger_rank, c4.ntrig * sizeof(int64_t)) == 0,
              "v4 triggers differ from v3's");
    sw_buf_t buf;
    sw_buf_init(&buf);
    sw_gen_destroy(gen_all(&o, &buf));
    v4_ctx_t v = {0, 0};
    SW_ASSERT_I64(each_event(&buf, on_v4, &v), 0);
    SW_ASSERT(v.events > 0 && v.samples_with_caps == (size_t)(o.ranks * o.samples),
              "%zu events, %zu samples with memory_capabilities", v.events, v.samples_with_caps);
    sw_buf_clear(&buf);
    sw_gen_destroy(g3);
    sw_gen_destroy(g4);
}

static void test_stream_three_storms(void **state)
{
    (void)state;
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.ranks = 8;
    o.samples = 2400; /* storms 720 samples apart: windows of 512 lose each one */
    o.storms = 3;
    o.storm_at = 0.1;
    o.storm_rank = SW_GEN_STORM_RANK_RANDOM;
    o.seed = 11;
    stream_ctx_t c;
    sw_gen_t *gen;
    SW_ASSERT_I64(run_stream(&o, &c, &gen, NULL), 0);
    c.actions[c.nact] = '\0';
    size_t nt;
    const sw_gen_storm_t *t = truth_of(gen, &nt);
    SW_ASSERT(c.ntrig == 3 && nt == 3, "records \"%s\": %zu triggers, %zu storms", c.actions,
              c.ntrig, nt);
    for (size_t k = 0; k < 3; k++)
        SW_ASSERT(c.trigger_rank[k] == t[k].rank, "trigger %zu names rank %lld, storm rank %lld", k,
                  (long long)c.trigger_rank[k], (long long)t[k].rank);
    /* Each trigger after the first follows a resolve of the previous episode. */
    size_t trig = 0;
    bool resolved = true;
    for (size_t i = 0; i < c.nact; i++) {
        if (c.actions[i] == 'T') {
            SW_ASSERT(resolved, "records \"%s\": trigger %zu before the previous resolve",
                      c.actions, trig);
            resolved = false;
            trig++;
        } else if (c.actions[i] == 'R') {
            resolved = true;
        }
    }
    sw_gen_destroy(gen);
}

static void test_stream_jobs(void **state)
{
    (void)state;
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.jobs = 3;
    o.ranks = 6;
    o.samples = 200;
    o.storm_rank = SW_GEN_STORM_RANK_RANDOM;
    stream_ctx_t c;
    sw_gen_t *gen;
    SW_ASSERT_I64(run_stream(&o, &c, &gen, NULL), 0);
    c.actions[c.nact] = '\0';
    size_t nt;
    const sw_gen_storm_t *t = truth_of(gen, &nt);
    SW_ASSERT(c.ntrig == 3 && nt == 3, "records \"%s\": %zu triggers, %zu storms", c.actions,
              c.ntrig, nt);
    /* Jobs share a clock, so their triggers come in storm-onset order. */
    for (size_t k = 0; k < nt; k++) {
        bool found = false;
        for (size_t i = 0; i < c.ntrig; i++) found |= c.trigger_rank[i] == t[k].rank;
        SW_ASSERT(found, "no trigger names rank %lld of %s", (long long)t[k].rank, t[k].job_id);
        SW_ASSERT(!strcmp(t[k].job_id, k == 0   ? "job-0"
                                       : k == 1 ? "job-1"
                                                : "job-2"),
                  "job id %s", t[k].job_id);
    }
    sw_gen_destroy(gen);
}

/* ---- 5. no storms -------------------------------------------------------------- */

static void test_no_storms(void **state)
{
    (void)state;
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.ranks = 16;
    o.samples = 600;
    o.storms = 0;
    o.phases = true;
    stream_ctx_t c;
    sw_gen_t *gen;
    sw_detect_stats_t st;
    SW_ASSERT_I64(run_stream(&o, &c, &gen, &st), 0);
    c.actions[c.nact] = '\0';
    SW_ASSERT(c.nact == 0 && st.records[SW_ACTION_TRIGGER] == 0, "records \"%s\" without storms",
              c.actions);
    size_t nt;
    truth_of(gen, &nt);
    SW_ASSERT(nt == 0, "truth has %zu storms", nt);
    sw_gen_destroy(gen);

    sw_buf_t buf;
    sw_buf_init(&buf);
    gen = gen_all(&o, &buf);
    SW_ASSERT(gen, "generator refused valid options");
    sw_batch_t *b = sw_batch_new(sw_params_default());
    SW_ASSERT_I64(each_event(&buf, on_batch, b), 0);
    sw_arena_t arena;
    sw_arena_init(&arena);
    sw_analysis_t an;
    sw_batch_run(b, &arena, &an);
    SW_ASSERT(!an.has_onset && an.n_suspects == 0, "onset %d, %zu suspects without storms",
              an.has_onset, an.n_suspects);
    bool noted = false;
    for (size_t i = 0; i < an.n_notes; i++)
        noted |= sw_str_eq(an.notes[i], sw_str("No qualifying cross-rank spikes were detected."));
    SW_ASSERT(noted, "no \"No qualifying\" note among %zu notes", an.n_notes);
    sw_arena_clear(&arena);
    sw_batch_destroy(b);
    sw_gen_destroy(gen);
    sw_buf_clear(&buf);
}

/* ---- 6. delivery noise ------------------------------------------------------- */

static void test_duplicates_and_late(void **state)
{
    (void)state;
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.ranks = 8;
    o.samples = 400;
    o.duplicates = 0.05;
    o.late = 0.05;
    stream_ctx_t c;
    sw_gen_t *gen;
    sw_detect_stats_t st;
    SW_ASSERT_I64(run_stream(&o, &c, &gen, &st), 0);
    sw_gen_stats_t gs;
    sw_gen_stats(gen, &gs);
    SW_ASSERT(gs.duplicates > 50 && gs.late > 50, "generator: %llu duplicates, %llu late",
              (unsigned long long)gs.duplicates, (unsigned long long)gs.late);
    SW_ASSERT(st.duplicates == gs.duplicates, "engine counted %llu duplicates, generator made %llu",
              (unsigned long long)st.duplicates, (unsigned long long)gs.duplicates);
    /* A late sample is out of order unless it was its rank's last one. */
    SW_ASSERT(st.late <= gs.late && st.late + (uint64_t)o.ranks >= gs.late,
              "engine counted %llu late, generator delayed %llu", (unsigned long long)st.late,
              (unsigned long long)gs.late);
    SW_ASSERT(st.samples == gs.samples, "engine saw %llu samples, generator wrote %llu",
              (unsigned long long)st.samples, (unsigned long long)gs.samples);
    sw_gen_destroy(gen);

    /* Without noise the engine counts neither. */
    o.duplicates = 0;
    o.late = 0;
    SW_ASSERT_I64(run_stream(&o, &c, &gen, &st), 0);
    SW_ASSERT(st.duplicates == 0 && st.late == 0, "%llu duplicates, %llu late without noise",
              (unsigned long long)st.duplicates, (unsigned long long)st.late);
    sw_gen_destroy(gen);
}

/* ---- option errors ---------------------------------------------------------- */

static int expect_refused(const sw_gen_opts_t *o, const char *needle)
{
    char errstr[512] = "";
    sw_gen_t *gen = sw_gen_new(o, errstr, sizeof(errstr));
    SW_ASSERT(gen == NULL, "options accepted, expected an error naming %s", needle);
    SW_ASSERT(strstr(errstr, needle) != NULL, "error \"%s\" does not name %s", errstr, needle);
    return 0;
}

static void test_option_errors(void **state)
{
    (void)state;
    sw_gen_opts_t o, d;
    sw_gen_opts_default(&d);
    o = d, o.ranks = 0;
    SW_ASSERT_I64(expect_refused(&o, "--ranks"), 0);
    o = d, o.storm_rank = 8;
    SW_ASSERT_I64(expect_refused(&o, "--storm-rank"), 0);
    o = d, o.storms = 10;
    SW_ASSERT_I64(expect_refused(&o, "--storms"), 0);
    o = d, o.storm_at = 0.99;
    SW_ASSERT_I64(expect_refused(&o, "--storm-at"), 0);
    o = d, o.storm_at = 0.0;
    SW_ASSERT_I64(expect_refused(&o, "--storm-at"), 0);
    o = d, o.jitter = 0.5;
    SW_ASSERT_I64(expect_refused(&o, "--jitter"), 0);
    o = d, o.job_prefix = "a\"b";
    SW_ASSERT_I64(expect_refused(&o, "--job-prefix"), 0);
    o = d, o.start_ns = 0;
    SW_ASSERT_I64(expect_refused(&o, "--start-ns"), 0);
    o = d, o.storm_bytes = 1 << 20;
    SW_ASSERT_I64(expect_refused(&o, "--storm-bytes"), 0);
    o = d, o.late = 1.5;
    SW_ASSERT_I64(expect_refused(&o, "--late"), 0);
    o = d, o.jobs = 100000, o.ranks = 100;
    SW_ASSERT_I64(expect_refused(&o, "--jobs"), 0);
    /* Storms that fit exactly are accepted; 0 storms ignore the storm options. */
    o = d, o.storms = 5;
    char errstr[512];
    sw_gen_t *gen = sw_gen_new(&o, errstr, sizeof(errstr));
    SW_ASSERT(gen, "5 storms in 600 samples refused: %s", errstr);
    sw_gen_destroy(gen);
    o = d, o.storms = 0, o.samples = 1, o.storm_at = 0;
    gen = sw_gen_new(&o, errstr, sizeof(errstr));
    SW_ASSERT(gen, "0 storms refused: %s", errstr);
    sw_gen_destroy(gen);
    sw_gen_destroy(NULL);
}

static void test_truth_json(void **state)
{
    (void)state;
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    o.ranks = 1;
    o.samples = 100;
    o.job_prefix = "train run";
    sw_gen_t *gen = sw_gen_new(&o, NULL, 0);
    SW_ASSERT(gen, "one rank refused");
    size_t nt;
    const sw_gen_storm_t *t = truth_of(gen, &nt);
    SW_ASSERT(nt == 1 && t[0].rank == 0 && t[0].first_hit_rank == -1,
              "%zu storms, rank %lld hit %lld", nt, (long long)t[0].rank,
              (long long)t[0].first_hit_rank);
    sw_buf_t buf;
    sw_buf_init(&buf);
    sw_gen_truth_json(&t[0], &buf);
    json_error_t e;
    json_t *j = json_loadb(buf.data, buf.len, 0, &e);
    SW_ASSERT(j, "truth line does not parse: %s", e.text);
    SW_ASSERT(!strcmp(json_string_value(json_object_get(j, "job_id")), "train run-0"), "job_id");
    SW_ASSERT(json_integer_value(json_object_get(j, "onset_timestamp_ns")) ==
                      t[0].onset_timestamp_ns &&
                  json_is_null(json_object_get(j, "first_hit_timestamp_ns")) &&
                  json_integer_value(json_object_get(j, "storm")) == 0,
              "truth line %s", sw_buf_cstr(&buf));
    json_decref(j);
    sw_buf_clear(&buf);
    sw_gen_destroy(gen);
}

/* ---- one episode per storm (SPEC 6: evidence that ages out ends an episode) ---- */

typedef struct episode_ctx_s {
    sw_detector_t *det;
    const sw_gen_storm_t *truth;
    size_t ntruth;
    size_t records, triggers[8], resolves[8];
    int64_t last_episode[8];
    bool open[8];
} episode_ctx_t;

static int on_episode(void *opaque, const sw_event_t *ev)
{
    episode_ctx_t *c = opaque;
    const sw_record_t *rec = NULL;
    char errstr[256];
    SW_ASSERT(sw_detect_feed(c->det, ev, 0, &rec, errstr, sizeof(errstr)) == SW_OK, "feed: %s",
              errstr);
    if (!rec) return 0;
    c->records++;
    const sw_analysis_t *a = &rec->analysis;
    /* job-<j> */
    size_t j = (size_t)strtol(a->job_id.ptr + 4, NULL, 10);
    SW_ASSERT(j < 8, "job %.*s", (int)a->job_id.len, a->job_id.ptr);
    /* The storm this episode belongs to: the job's (episode - 1)th. */
    const sw_gen_storm_t *storm = NULL;
    for (size_t k = 0; k < c->ntruth; k++)
        if (c->truth[k].job == (int64_t)j && c->truth[k].storm == rec->episode - 1)
            storm = &c->truth[k];
    SW_ASSERT(storm, "job-%zu episode %lld: more episodes than storms", j, (long long)rec->episode);
    SW_ASSERT(a->n_suspects > 0 && a->suspects[0].rank == storm->rank,
              "job-%zu episode %lld %s revision %lld names rank %lld first, the storm started on "
              "rank %lld",
              j, (long long)rec->episode, sw_action_str(rec->action), (long long)rec->revision,
              (long long)(a->n_suspects ? a->suspects[0].rank : -1), (long long)storm->rank);
    SW_ASSERT(a->suspects[0].has_source && a->suspects[0].host.len > 0,
              "job-%zu episode %lld: the first suspect has no host", j, (long long)rec->episode);
    switch (rec->action) {
    case SW_ACTION_TRIGGER:
        SW_ASSERT(!c->open[j] && rec->episode == c->last_episode[j] + 1,
                  "job-%zu: trigger of episode %lld while %s", j, (long long)rec->episode,
                  c->open[j] ? "open" : "out of order");
        c->open[j] = true;
        c->last_episode[j] = rec->episode;
        c->triggers[j]++;
        break;
    case SW_ACTION_UPDATE: SW_ASSERT(c->open[j], "job-%zu: update of a closed episode", j); break;
    case SW_ACTION_RESOLVE:
        SW_ASSERT(c->open[j], "job-%zu: episode %lld resolved twice", j, (long long)rec->episode);
        c->open[j] = false;
        c->resolves[j]++;
        break;
    default: break;
    }
    return 0;
}

static void test_stream_episode_per_storm(void **state)
{
    (void)state;
    /* Storms 720 samples apart and windows of 512: every storm's evidence
     * ages out before the next storm, and each storm must give exactly one
     * episode whose every record names the storm rank first. */
    static const struct {
        int64_t ranks, jobs;
        uint64_t seed;
    } cases[] = {{16, 3, 21}, {64, 2, 22}, {200, 2, 23}, {512, 1, 24}};
    /* 512 ranks (half the time) in the CI tier (CI=true) only. */
    size_t ncases = sizeof(cases) / sizeof(cases[0]) - (sw_test_ci() ? 0 : 1);
    for (size_t i = 0; i < ncases; i++) {
        sw_gen_opts_t o;
        sw_gen_opts_default(&o);
        o.ranks = cases[i].ranks;
        o.jobs = cases[i].jobs;
        o.samples = 2400;
        o.storms = 3;
        o.storm_at = 0.1;
        o.storm_rank = SW_GEN_STORM_RANK_RANDOM;
        o.seed = cases[i].seed;
        sw_buf_t buf;
        sw_buf_init(&buf);
        sw_gen_t *gen = gen_all(&o, &buf);
        SW_ASSERT(gen, "generator refused valid options");
        episode_ctx_t c;
        memset(&c, 0, sizeof(c));
        c.truth = truth_of(gen, &c.ntruth);
        SW_ASSERT(c.ntruth == (size_t)(o.jobs * o.storms), "%zu storms", c.ntruth);
        sw_params_t p = sw_params_default();
        p.window_samples = 512;
        c.det = sw_detect_new(p);
        int rc = each_event(&buf, on_episode, &c);
        sw_detect_destroy(c.det);
        sw_buf_clear(&buf);
        sw_gen_destroy(gen);
        SW_ASSERT(rc == 0, "see the failures above");
        for (int64_t j = 0; j < o.jobs; j++)
            SW_ASSERT(c.triggers[j] == 3 && c.resolves[j] >= 2 && c.resolves[j] <= 3,
                      "%lld ranks, job-%lld: %zu episodes and %zu resolves for 3 storms",
                      (long long)o.ranks, (long long)j, c.triggers[j], c.resolves[j]);
        printf(
            "episode per storm: %lld ranks x %lld jobs, %zu records, every one naming the storm "
            "rank\n",
            (long long)o.ranks, (long long)o.jobs, c.records);
    }
}

/* ---- 7. the CLI --------------------------------------------------------------- */

static void test_cli(void **state)
{
    (void)state;
    const char *bin = sw_test_bin(), *tmp = sw_test_tmp();
    char cmd[8192];
    sw_buf_t out, out2;
    sw_buf_init(&out);
    sw_buf_init(&out2);

    snprintf(cmd, sizeof(cmd), "'%s' gen --ranks 4 --samples 50 --seed 3 | '%s' analyze --compact",
             bin, bin);
    int rc = sw_test_run(cmd, &out);
    SW_ASSERT(rc == 0, "gen | analyze exited %d", rc);
    json_error_t e;
    json_t *an = json_loads(out.data, 0, &e);
    SW_ASSERT(an, "analyze printed no JSON: %s", out.data);
    json_t *s0 = json_array_get(json_object_get(an, "first_cause_suspects"), 0);
    SW_ASSERT(json_integer_value(json_object_get(s0, "rank")) == 3, "first suspect %s",
              json_dumps(s0, JSON_COMPACT));
    json_decref(an);

    snprintf(cmd, sizeof(cmd), "'%s' gen --ranks 4 --samples 50 --seed 3 --quiet", bin);
    SW_ASSERT(sw_test_run(cmd, &out) == 0 && out.len > 0, "gen exited non-zero");
    SW_ASSERT(sw_test_run(cmd, &out2) == 0 && out.len == out2.len &&
                  !memcmp(out.data, out2.data, out.len),
              "two runs differ (%zu and %zu bytes)", out.len, out2.len);

    snprintf(cmd, sizeof(cmd), "'%s' gen --ranks 0 2>&1 >/dev/null", bin);
    rc = sw_test_run(cmd, &out);
    SW_ASSERT(rc == 2 && strstr(out.data, "--ranks") && strstr(out.data, "\"0\""),
              "--ranks 0: exit %d, stderr \"%s\"", rc, out.data);
    snprintf(cmd, sizeof(cmd), "'%s' gen --ranks 4 --storm-rank 4 2>&1 >/dev/null", bin);
    rc = sw_test_run(cmd, &out);
    SW_ASSERT(rc == 2 && strstr(out.data, "--storm-rank"), "--storm-rank 4: exit %d, stderr \"%s\"",
              rc, out.data);
    snprintf(cmd, sizeof(cmd), "'%s' gen --late x 2>&1 >/dev/null", bin);
    rc = sw_test_run(cmd, &out);
    SW_ASSERT(rc == 2 && strstr(out.data, "--late") && strstr(out.data, "\"x\""),
              "--late x: exit %d, stderr \"%s\"", rc, out.data);
    snprintf(cmd, sizeof(cmd), "'%s' gen --bogus 2>&1 >/dev/null", bin);
    rc = sw_test_run(cmd, &out);
    SW_ASSERT(rc == 2 && strstr(out.data, "--bogus"), "--bogus: exit %d, stderr \"%s\"", rc,
              out.data);
    snprintf(cmd, sizeof(cmd), "'%s' gen --storms 50 2>&1 >/dev/null", bin);
    rc = sw_test_run(cmd, &out);
    SW_ASSERT(rc == 2 && strstr(out.data, "--storms"), "--storms 50: exit %d, stderr \"%s\"", rc,
              out.data);

    snprintf(cmd, sizeof(cmd), "'%s' gen --help", bin);
    rc = sw_test_run(cmd, &out);
    static const char *const opts[] = {
        "--ranks",       "--samples", "--jobs",       "--seed",     "--storm-rank", "--storms",
        "--interval-ms", "--jitter",  "--skew-ms",    "--start-ns", "--storm-at",   "--spread-ms",
        "--storm-bytes", "--phases",  "--duplicates", "--late",     "--job-prefix", "--output",
        "--gzip",        "--truth",   "--quiet",      "--help"};
    SW_ASSERT(rc == 0, "--help exited %d", rc);
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
        SW_ASSERT(strstr(out.data, opts[i]), "--help does not describe %s", opts[i]);

    /* gzip to a file, truth to another, summary on stderr. */
    char gz[1024], truth[1024];
    snprintf(gz, sizeof(gz), "%s/gen_test.jsonl.gz", tmp);
    snprintf(truth, sizeof(truth), "%s/gen_test.truth.jsonl", tmp);
    snprintf(cmd, sizeof(cmd),
             "'%s' gen --ranks 16 --samples 100 --phases -z -o '%s' --truth '%s' 2>&1", bin, gz,
             truth);
    rc = sw_test_run(cmd, &out);
    SW_ASSERT(rc == 0 && strstr(out.data, "16 ranks") && strstr(out.data, "events written") &&
                  strstr(out.data, "job-0: 3"),
              "gen -z: exit %d, stderr \"%s\"", rc, out.data);
    SW_ASSERT(sw_test_read_file(gz, &out) && out.len > 2 && (unsigned char)out.data[0] == 0x1f &&
                  (unsigned char)out.data[1] == 0x8b,
              "%s is not gzip", gz);
    SW_ASSERT(sw_test_read_file(truth, &out), "no truth file %s", truth);
    json_t *tj = json_loads(out.data, JSON_DISABLE_EOF_CHECK, &e);
    SW_ASSERT(tj && json_integer_value(json_object_get(tj, "rank")) == 3, "truth %s", out.data);
    json_int_t onset = json_integer_value(json_object_get(tj, "onset_timestamp_ns"));
    json_decref(tj);
    snprintf(cmd, sizeof(cmd), "'%s' analyze --compact '%s'", bin, gz);
    rc = sw_test_run(cmd, &out);
    an = json_loads(out.data, 0, &e);
    SW_ASSERT(rc == 0 && an, "analyze of the gzip output: exit %d", rc);
    s0 = json_array_get(json_object_get(an, "first_cause_suspects"), 0);
    SW_ASSERT(json_integer_value(json_object_get(s0, "rank")) == 3 &&
                  json_integer_value(json_object_get(s0, "first_spike_timestamp_ns")) == onset &&
                  !strcmp(json_string_value(json_object_get(s0, "confidence")), "high"),
              "first suspect %s, truth onset %lld", json_dumps(s0, JSON_COMPACT), (long long)onset);
    json_decref(an);

    snprintf(cmd, sizeof(cmd), "'%s' gen -o /nonexistent/dir/x.jsonl 2>&1", bin);
    rc = sw_test_run(cmd, &out);
    SW_ASSERT(rc == 1 && strstr(out.data, "/nonexistent/dir/x.jsonl"),
              "unwritable -o: exit %d, \"%s\"", rc, out.data);
    sw_buf_clear(&out);
    sw_buf_clear(&out2);
}

int main(void)
{
    /* SW_TEST_ONLY=CASE: that case only (cmocka's filter): CTest runs each
     * case as a test of its own, so that ctest -j spreads them. */
    const char *only = getenv("SW_TEST_ONLY");
    if (only) cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_spikes_only_at_storms),
        cmocka_unit_test(test_batch_finds_storm_rank),
        cmocka_unit_test(test_stream_one_storm),
        cmocka_unit_test(test_stream_v4),
        cmocka_unit_test(test_stream_three_storms),
        cmocka_unit_test(test_stream_jobs),
        cmocka_unit_test(test_stream_episode_per_storm),
        cmocka_unit_test(test_no_storms),
        cmocka_unit_test(test_duplicates_and_late),
        cmocka_unit_test(test_option_errors),
        cmocka_unit_test(test_truth_json),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
