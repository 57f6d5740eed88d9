/*
 * Helpers shared by the libFuzzer targets of tests/fuzz: a failed check
 * that aborts with a message (libFuzzer then saves the input), a field by
 * field comparison of decoded events, in-memory files for the APIs that
 * take a path, and the checks every stream record and the engine counters
 * must pass. Header-only (static functions): each target is one file.
 * Nothing here writes to stdout.
 */
#ifndef SW_FUZZ_COMMON_H
#define SW_FUZZ_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sw_analysis.h"
#include "sw_arena.h"
#include "sw_codec_alert.h"
#include "sw_codec_avro.h"
#include "sw_codec_telemetry.h"
#include "sw_detect.h"
#include "sw_event.h"
#include "sw_event_json.h"
#include "sw_jdom.h"
#include "sw_types.h"

/* Each target uses part of these helpers. */
#define FUZZ_UNUSED __attribute__((unused))

/* A broken invariant: say which and abort, so that libFuzzer keeps the
 * input as a crash artifact. */
#define FUZZ_CHECK(cond, ...)                                           \
    do {                                                                \
        if (!(cond)) fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
    } while (0)

static void fuzz_fail(const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

FUZZ_UNUSED static void fuzz_fail(const char *file, int line, const char *expr, const char *fmt,
                                  ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: FUZZ CHECK FAILED (%s): ", file, line, expr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

/* Whether an environment flag is set to something other than "" or "0". */
FUZZ_UNUSED static bool fuzz_env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* malloc'd NUL-terminated copies (caller frees with free()). */
FUZZ_UNUSED static char *fuzz_strndup(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) abort();
    if (n) memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

FUZZ_UNUSED static char *fuzz_strdup(const char *s)
{
    return fuzz_strndup(s, strlen(s));
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

FUZZ_UNUSED static bool fuzz_str_eq(sw_str_t a, sw_str_t b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* Field-by-field equality of two decoded events (the strings by value);
 * @p why names the first difference. */
FUZZ_UNUSED static bool fuzz_event_eq(const sw_event_t *a, const sw_event_t *b, char *why, size_t n)
{
#define EQ_I(f)                                                                     \
    if (a->f != b->f) {                                                             \
        snprintf(why, n, "%s: %lld != %lld", #f, (long long)a->f, (long long)b->f); \
        return false;                                                               \
    }
#define EQ_S(f)                                                                                \
    if (!fuzz_str_eq(a->f, b->f)) {                                                            \
        snprintf(why, n, "%s: \"%.*s\" != \"%.*s\"", #f, (int)(a->f.len > 80 ? 80 : a->f.len), \
                 a->f.ptr ? a->f.ptr : "", (int)(b->f.len > 80 ? 80 : b->f.len),               \
                 b->f.ptr ? b->f.ptr : "");                                                    \
        return false;                                                                          \
    }
#define EQ_OI(f) EQ_I(f.set) if (a->f.set) EQ_I(f.value)
#define EQ_OS(f) EQ_I(f.set) if (a->f.set) EQ_S(f.value)
    EQ_I(timestamp_ns)
    EQ_S(event_type)
    EQ_I(kind)
    EQ_I(rank)
    EQ_I(world_size)
    EQ_I(has_job_id)
    if (a->has_job_id) EQ_S(job_id)
    EQ_I(has_session_id)
    if (a->has_session_id) EQ_S(session_id)
    EQ_I(pid)
    EQ_S(host)
    EQ_I(has_device_used)
    if (a->has_device_used) EQ_I(device_used_bytes)
    EQ_I(sampling_interval_ms)
    EQ_I(has_phase)
    if (a->has_phase) {
        EQ_I(phase.enter)
        EQ_S(phase.name)
        EQ_I(phase.path_len)
        for (int i = 0; i < a->phase.path_len && i < SW_PHASE_PATH_MAX; i++) EQ_S(phase.path[i])
        EQ_S(phase.scope_id)
        EQ_I(phase.has_parent)
        if (a->phase.has_parent) EQ_S(phase.parent_scope_id)
        EQ_I(phase.thread_id)
        EQ_S(phase.thread_name)
        EQ_I(phase.sequence)
        EQ_I(phase.has_depth)
        if (a->phase.has_depth) EQ_I(phase.depth)
    }
    EQ_OI(schema_version)
    EQ_OI(device_id)
    EQ_OI(local_rank)
    EQ_OI(allocator_allocated_bytes)
    EQ_OI(allocator_reserved_bytes)
    EQ_OI(allocator_active_bytes)
    EQ_OI(allocator_inactive_bytes)
    EQ_OI(allocator_change_bytes)
    EQ_OI(device_free_bytes)
    EQ_OI(device_total_bytes)
    EQ_OS(collector)
    EQ_OS(context)
    EQ_S(metadata_json)
    return true;
#undef EQ_I
#undef EQ_S
#undef EQ_OI
#undef EQ_OS
}

/* The SPEC 2 invariants every decoded (valid) event satisfies. */
FUZZ_UNUSED static void fuzz_check_event(const sw_event_t *ev, const char *who)
{
    FUZZ_CHECK(ev->timestamp_ns >= 0, "%s: timestamp_ns %lld", who, (long long)ev->timestamp_ns);
    FUZZ_CHECK(ev->event_type.len > 0, "%s: empty event_type", who);
    FUZZ_CHECK(ev->world_size >= 1, "%s: world_size %lld", who, (long long)ev->world_size);
    FUZZ_CHECK(ev->rank >= 0 && ev->rank < ev->world_size, "%s: rank %lld of %lld", who,
               (long long)ev->rank, (long long)ev->world_size);
    FUZZ_CHECK(!ev->has_job_id || ev->job_id.len > 0, "%s: empty job_id", who);
    /* SPEC 2: a sample has device_used_bytes, unless it is a v4 counterless
     * one (null counter: valid, skipped before analysis). */
    FUZZ_CHECK(ev->kind != SW_EV_SAMPLE || ev->has_device_used || ev->counterless,
               "%s: sample without device_used that is not counterless", who);
    FUZZ_CHECK(!ev->counterless || (ev->kind == SW_EV_SAMPLE && !ev->has_device_used &&
                                    ev->schema_version.set && ev->schema_version.value >= 4),
               "%s: counterless on an event that is not a v4 sample without the counter", who);
    FUZZ_CHECK(!ev->has_device_used || ev->device_used_bytes >= 0, "%s: device_used %lld", who,
               (long long)ev->device_used_bytes);
    FUZZ_CHECK(ev->sampling_interval_ms >= 0, "%s: sampling_interval_ms %lld", who,
               (long long)ev->sampling_interval_ms);
    FUZZ_CHECK(ev->kind == sw_event_kind(ev->event_type), "%s: kind %d", who, (int)ev->kind);
    FUZZ_CHECK(ev->metadata_json.len >= 2 && ev->metadata_json.ptr[0] == '{' &&
                   ev->metadata_json.ptr[ev->metadata_json.len - 1] == '}',
               "%s: metadata_json is not an object's text", who);
    if (ev->has_phase) {
        FUZZ_CHECK(ev->phase.path_len >= 0 && ev->phase.path_len <= SW_PHASE_PATH_MAX,
                   "%s: phase path_len %d", who, ev->phase.path_len);
        for (int i = 0; i < ev->phase.path_len; i++)
            FUZZ_CHECK(ev->phase.path[i].len > 0, "%s: empty phase path element %d", who, i);
    }
    /* Touch every byte of every string: ASan catches a view into freed or
     * foreign memory here, next to the decoder that produced it. */
    volatile unsigned sum = 0;
    const sw_str_t strs[] = {ev->event_type,    ev->job_id,          ev->session_id,   ev->host,
                             ev->metadata_json, ev->collector.value, ev->context.value};
    for (size_t k = 0; k < sizeof(strs) / sizeof(strs[0]); k++)
        for (size_t i = 0; i < strs[k].len; i++) sum += (unsigned char)strs[k].ptr[i];
    if (ev->has_phase) {
        const sw_phase_scope_t *ps = &ev->phase;
        const sw_str_t pstrs[] = {ps->name, ps->scope_id, ps->parent_scope_id, ps->thread_name};
        for (size_t k = 0; k < sizeof(pstrs) / sizeof(pstrs[0]); k++)
            for (size_t i = 0; i < pstrs[k].len; i++) sum += (unsigned char)pstrs[k].ptr[i];
        for (int k = 0; k < ps->path_len; k++)
            for (size_t i = 0; i < ps->path[k].len; i++) sum += (unsigned char)ps->path[k].ptr[i];
    }
    (void)sum;
}

/* @p back is @p ev written out and decoded again: the same event.
 * metadata_json is compared only when @p same_meta. */
FUZZ_UNUSED static bool fuzz_same_event(const sw_event_t *ev, const sw_event_t *back,
                                        bool same_meta, char *why, size_t n)
{
    sw_event_t a = *ev;
    if (!same_meta) a.metadata_json = back->metadata_json;
    return fuzz_event_eq(&a, back, why, n);
}

/* sw_event_json() (`stormwatch tail`) of a decoded event: one line of
 * valid JSON that sw_tdec_json() decodes to the same event. */
FUZZ_UNUSED static void fuzz_check_event_json(const sw_event_t *ev, const char *who)
{
    char err[512], why[512];
    sw_buf_t out;
    sw_buf_init(&out);
    sw_event_json(&out, ev);
    FUZZ_CHECK(out.len > 0 && memchr(out.data, '\n', out.len) == NULL,
               "%s: sw_event_json wrote several lines: %.*s", who,
               (int)(out.len > 400 ? 400 : out.len), out.data);
    sw_tdec_t *dec = sw_tdec_new();
    sw_event_t back;
    sw_err_t rc = sw_tdec_json(dec, out.data, out.len, &back, err, sizeof(err));
    FUZZ_CHECK(rc == SW_OK, "%s: sw_event_json output does not decode: %s: %.*s", who, err,
               (int)(out.len > 400 ? 400 : out.len), out.data);
    FUZZ_CHECK(fuzz_same_event(ev, &back, false, why, sizeof(why)),
               "%s: sw_tdec_json(sw_event_json(ev)) != ev: %s\n  json: %.*s", who, why,
               (int)(out.len > 400 ? 400 : out.len), out.data);
    sw_tdec_destroy(dec);
    sw_buf_clear(&out);
}

/* ------------------------------------------------------------------ */
/* In-memory files                                                     */
/* ------------------------------------------------------------------ */

/* A file holding @p data, reachable by @p path (/proc/self/fd/N of a
 * memfd, or a temporary file when memfd is unavailable). @returns the
 * descriptor to pass to fuzz_file_close(), or -1. */
FUZZ_UNUSED static int fuzz_file_open(const uint8_t *data, size_t size, char *path,
                                      size_t path_size)
{
    int fd = memfd_create("sw_fuzz", MFD_CLOEXEC);
    if (fd >= 0) {
        snprintf(path, path_size, "/proc/self/fd/%d", fd);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, path_size, "%s/sw_fuzz_XXXXXX", tmp && *tmp ? tmp : "/tmp");
        fd = mkstemp(path);
        if (fd < 0) return -1;
    }
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(fd, data + off, size - off);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)n;
    }
    return fd;
}

FUZZ_UNUSED static void fuzz_file_close(int fd, const char *path)
{
    if (strncmp(path, "/proc/self/fd/", 14) != 0) unlink(path);
    close(fd);
}

/* ------------------------------------------------------------------ */
/* Stream records and the engine                                       */
/* ------------------------------------------------------------------ */

/* The stream records seen, by action, to compare with the counters. */
typedef struct fuzz_rec_count_s {
    uint64_t by_action[4];
} fuzz_rec_count_t;

/* Set by fuzz_restore: records of a detector restored from arbitrary bytes
 * carry whatever values the snapshot held (episode, ranks, world size), so
 * only the codec checks apply to them. */
static bool fuzz_records_from_restore FUZZ_UNUSED;

/* Records per input that get the full codec check below (the rest get the
 * cheap checks): the codecs cost more than the engine. Targets reset it at
 * the start of every input. */
#define FUZZ_DEEP_RECORDS 4
static int fuzz_deep_records FUZZ_UNUSED;   /* triggers, updates, resolves */
static int fuzz_deep_summaries FUZZ_UNUSED; /* summaries */

/* What sw_codec_alert and the Avro codec must do with any record the
 * engine emits: valid JSON; Avro encoding succeeds or fails cleanly (out
 * unchanged); decoding the encoding gives the JSON text byte for byte. */
FUZZ_UNUSED static void fuzz_check_record(const sw_record_t *rec, fuzz_rec_count_t *cnt)
{
    char err[512];
    if (sw_action_is_x8(rec->action)) {
        /* SPEC 8's closing records come with a job's summary (a crash ends
         * with a record of its own): valid JSON on one line; their extra
         * keys (previous_first_death, closed_by, ...) are not in the Avro
         * schema, so no round trip. */
        sw_buf_t x8;
        sw_buf_init(&x8);
        sw_alert_json_record(&x8, rec);
        FUZZ_CHECK(x8.len > 0 && memchr(x8.data, '\n', x8.len) == NULL,
                   "a crash/warning record is empty or spans lines");
        sw_arena_t xa;
        sw_arena_init(&xa);
        sw_jnode_t *xr = sw_jdom_parse(x8.data, x8.len, &xa, err, sizeof(err));
        FUZZ_CHECK(xr && xr->type == SW_JN_OBJECT, "crash/warning record is invalid JSON: %s",
                   xr ? "not an object" : err);
        sw_arena_clear(&xa);
        sw_buf_clear(&x8);
        return;
    }
    FUZZ_CHECK(rec->action >= SW_ACTION_TRIGGER && rec->action <= SW_ACTION_SUMMARY,
               "record action %d", (int)rec->action);
    if (cnt) cnt->by_action[rec->action]++;
    const sw_analysis_t *a = &rec->analysis;
    /* Engine invariants (not for restored detectors: see below). */
    if (!fuzz_records_from_restore) {
        /* 0 only for a batch analysis without samples. */
        FUZZ_CHECK(a->world_size >= (a->n_participating ? 1 : 0), "record world_size %lld",
                   (long long)a->world_size);
        FUZZ_CHECK((uint64_t)a->world_size >= a->n_participating, "world_size %lld < %zu ranks",
                   (long long)a->world_size, a->n_participating);
        for (size_t i = 1; i < a->n_participating; i++)
            FUZZ_CHECK(a->participating[i - 1] < a->participating[i],
                       "participating not ascending");
        for (size_t i = 1; i < a->n_missing; i++)
            FUZZ_CHECK(a->missing[i - 1] < a->missing[i], "missing not ascending");
        for (size_t i = 1; i < a->n_counts; i++)
            FUZZ_CHECK(a->counts[i - 1].rank < a->counts[i].rank,
                       "rank_sample_counts not ascending");
        for (size_t i = 1; i < a->n_offsets; i++)
            FUZZ_CHECK(a->offsets[i - 1].rank < a->offsets[i].rank,
                       "alignment_offsets not ascending");
        if (rec->action != SW_ACTION_SUMMARY)
            FUZZ_CHECK(rec->episode >= 1 && rec->revision >= 0, "episode %lld revision %lld",
                       (long long)rec->episode, (long long)rec->revision);
    }

    if ((rec->action == SW_ACTION_SUMMARY ? fuzz_deep_summaries-- : fuzz_deep_records--) <= 0)
        return;

    sw_buf_t json, msg, back;
    sw_buf_init(&json);
    sw_buf_init(&msg);
    sw_buf_init(&back);
    sw_alert_json_record(&json, rec);
    FUZZ_CHECK(json.len > 0, "empty JSON record");
    FUZZ_CHECK(memchr(json.data, '\n', json.len) == NULL, "JSON record spans lines");

    sw_arena_t arena;
    sw_arena_init(&arena);
    sw_jnode_t *root = sw_jdom_parse(json.data, json.len, &arena, err, sizeof(err));
    FUZZ_CHECK(root && root->type == SW_JN_OBJECT, "sw_alert_json_record wrote invalid JSON: %s",
               root ? "not an object" : err);
    sw_arena_clear(&arena);

    sw_buf_puts(&msg, "keep");
    sw_err_t rc = sw_avro_encode_record(rec, 2, &msg, err, sizeof(err));
    if (rc != SW_OK) {
        FUZZ_CHECK(rc == SW_ERR_INVALID_ARG, "encode_record: %d", (int)rc);
        FUZZ_CHECK(msg.len == 4 && memcmp(msg.data, "keep", 4) == 0,
                   "failed sw_avro_encode_record changed its output buffer");
    } else {
        sw_buf_puts(&back, "x");
        rc = sw_avro_decode_record_json(msg.data + 4, msg.len - 4, 2, &back, err, sizeof(err));
        FUZZ_CHECK(rc == SW_OK, "a record we encoded does not decode: %s", err);
        /* Byte for byte, except where sw_jw wrote a lone surrogate as a \u
         * escape: Avro carries U+FFFD there (sw_codec_avro.h). */
        bool surrogate = false;
        for (size_t i = 0; i + 3 < json.len && !surrogate; i++) {
            char c = json.data[i + 3];
            surrogate = json.data[i] == '\\' && json.data[i + 1] == 'u' &&
                        (json.data[i + 2] | 0x20) == 'd' &&
                        ((c >= '8' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'));
        }
        FUZZ_CHECK(surrogate || (back.len - 1 == json.len &&
                                 memcmp(back.data + 1, json.data, json.len) == 0),
                   "sw_avro_decode_record_json(sw_avro_encode_record(r)) != "
                   "sw_alert_json_record(r):\n  avro: %.*s\n  json: %.*s",
                   (int)(back.len - 1), back.data + 1, (int)json.len, json.data);
    }
    sw_buf_clear(&json);
    sw_buf_clear(&msg);
    sw_buf_clear(&back);
}

FUZZ_UNUSED static void fuzz_record_cb(void *opaque, const sw_record_t *rec)
{
    fuzz_check_record(rec, opaque);
}

/* What the caller fed: calls that returned SW_OK (and how many of them
 * were samples), v4 counterless samples (SW_OK, skipped: SPEC 2), calls
 * refused with SW_ERR_LIMIT and samples refused as out of time
 * (SW_ERR_CLOCK). */
typedef struct fuzz_feed_count_s {
    uint64_t ok, samples, counterless, limited, clock;
} fuzz_feed_count_t;

/* Counts one sw_detect_feed* call's outcome. */
FUZZ_UNUSED static void fuzz_count_feed(fuzz_feed_count_t *fed, sw_err_t rc, const sw_event_t *ev)
{
    if (rc == SW_OK && ev->counterless) {
        fed->counterless++;
    } else if (rc == SW_OK) {
        fed->ok++;
        fed->samples += ev->kind == SW_EV_SAMPLE;
    } else if (rc == SW_ERR_CLOCK) {
        fed->clock++;
    } else {
        fed->limited++;
    }
}

/* The counters agree with what was fed and seen, and with each other. */
FUZZ_UNUSED static void fuzz_check_stats(const sw_detector_t *det, const fuzz_feed_count_t *fed,
                                         const fuzz_rec_count_t *seen, int64_t window_samples)
{
    sw_detect_stats_t st;
    sw_detect_stats(det, &st);
    FUZZ_CHECK(st.events == fed->ok, "stats.events %llu, fed OK %llu",
               (unsigned long long)st.events, (unsigned long long)fed->ok);
    FUZZ_CHECK(st.samples == fed->samples, "stats.samples %llu, fed %llu",
               (unsigned long long)st.samples, (unsigned long long)fed->samples);
    FUZZ_CHECK(st.counterless == fed->counterless, "stats.counterless %llu, fed %llu",
               (unsigned long long)st.counterless, (unsigned long long)fed->counterless);
    FUZZ_CHECK(st.limit_rejects == fed->limited, "stats.limit_rejects %llu, refused %llu",
               (unsigned long long)st.limit_rejects, (unsigned long long)fed->limited);
    FUZZ_CHECK(st.clock_refused == fed->clock, "stats.clock_refused %llu, refused %llu",
               (unsigned long long)st.clock_refused, (unsigned long long)fed->clock);
    FUZZ_CHECK(st.duplicates <= st.samples, "duplicates %llu > samples %llu",
               (unsigned long long)st.duplicates, (unsigned long long)st.samples);
    uint64_t kept = st.samples - st.duplicates;
    FUZZ_CHECK(st.late <= kept, "late %llu > non-duplicate samples %llu",
               (unsigned long long)st.late, (unsigned long long)kept);
    /* Not too_old <= late: a sample at its rank's newest timestamp from
     * another source can sort first in a full window (too old, not late). */
    FUZZ_CHECK(st.too_old <= kept, "too_old %llu > non-duplicate samples %llu",
               (unsigned long long)st.too_old, (unsigned long long)kept);
    FUZZ_CHECK(st.ranks <= kept, "ranks %llu > non-duplicate samples %llu",
               (unsigned long long)st.ranks, (unsigned long long)kept);
    FUZZ_CHECK(st.retained <= kept, "retained %llu > non-duplicate samples %llu",
               (unsigned long long)st.retained, (unsigned long long)kept);
    FUZZ_CHECK(st.retained <= st.ranks * (uint64_t)window_samples,
               "retained %llu > ranks %llu x window %lld", (unsigned long long)st.retained,
               (unsigned long long)st.ranks, (long long)window_samples);
    FUZZ_CHECK(st.stale_windows <= kept, "stale_windows %llu > non-duplicate samples %llu",
               (unsigned long long)st.stale_windows, (unsigned long long)kept);
    for (int a = 0; a < 4; a++)
        FUZZ_CHECK(st.records[a] == seen->by_action[a], "stats.records[%d] %llu, seen %llu", a,
                   (unsigned long long)st.records[a], (unsigned long long)seen->by_action[a]);
    FUZZ_CHECK(st.records[SW_ACTION_RESOLVE] <= st.records[SW_ACTION_TRIGGER],
               "more resolves (%llu) than triggers (%llu)",
               (unsigned long long)st.records[SW_ACTION_RESOLVE],
               (unsigned long long)st.records[SW_ACTION_TRIGGER]);
    FUZZ_CHECK(st.bytes > 0, "stats.bytes is 0");
}

#endif /* SW_FUZZ_COMMON_H */
