/*
 * libFuzzer target for state restore: the daemon's snapshot codec
 * (src/daemon/sw_snapcodec.c: commit metadata and the compressed
 * envelope; what parses encodes and parses back to the same) and engine
 * state restore (sw_detect_restore_src: an engine fed from one source or
 * two), which reads snapshots back from the state topic: arbitrary bytes
 * must give a detector or NULL with a message. A detector restored from
 * them must snapshot to bytes that restore again and snapshot to the same
 * bytes (a fixed point after one round), survive the rebuild of both
 * sources, sw_detect_rebuild_done(), further events from both and
 * sw_detect_finish(), and free everything; records pass the codec checks.
 * Deterministic; writes nothing to stdout.
 *
 * Corpus generator: with SW_FUZZ_GEN_CORPUS=DIR and
 * SW_FUZZ_FIXTURES=tests/fixtures, LLVMFuzzerInitialize() writes snapshots
 * of the engine (these parameters) taken while feeding each fixture, from
 * one source and from two, and exits.
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "sw_snapcodec.h"

/* Parameters of every snapshot here (restore refuses others). */
static sw_params_t restore_params(void)
{
    sw_params_t p = sw_params_default();
    p.window_samples = 4;
    p.stale_ms = 1000;
    p.max_jobs = 16;
    p.max_ranks_per_job = 64;
    return p;
}

static const char *const k_jobs[] = {"job-1", "job-edge", "job-a", NULL};

/* A sample of job k_jobs[j] for the rebuild and for feeding afterwards. */
static sw_event_t sample(int j, int64_t rank, int64_t ts, int64_t used)
{
    sw_event_t ev;
    memset(&ev, 0, sizeof(ev));
    ev.timestamp_ns = ts;
    ev.event_type = sw_str("sample");
    ev.kind = SW_EV_SAMPLE;
    ev.rank = rank;
    ev.world_size = rank + 1 > 4 ? rank + 1 : 4;
    ev.has_job_id = k_jobs[j] != NULL;
    if (ev.has_job_id) ev.job_id = sw_str(k_jobs[j]);
    ev.pid = 4000 + rank;
    ev.host = sw_str("h0");
    ev.has_session_id = true;
    ev.session_id = sw_str(rank & 1 ? "s1" : "s0");
    ev.has_device_used = true;
    ev.device_used_bytes = used;
    ev.sampling_interval_ms = 100;
    ev.metadata_json = sw_str("{}");
    return ev;
}

static void snapshot_fixed_point(sw_detector_t *det, const int64_t next[SW_DETECT_SOURCES])
{
    char err[256];
    sw_buf_t s2, s3;
    sw_buf_init(&s2);
    sw_buf_init(&s3);
    sw_detect_snapshot_src(det, next, &s2);
    int64_t next2[SW_DETECT_SOURCES] = {0, 0};
    sw_detector_t *det2 = sw_detect_restore_src(restore_params(), s2.data, s2.len, 0, next2, err,
                                                sizeof(err));
    FUZZ_CHECK(det2 != NULL, "a snapshot of a restored detector does not restore: %s", err);
    for (int s = 0; s < SW_DETECT_SOURCES; s++)
        FUZZ_CHECK(next2[s] == next[s], "source %d: next offset %lld, expected %lld", s,
                   (long long)next2[s], (long long)next[s]);
    sw_detect_snapshot_src(det2, next2, &s3);
    FUZZ_CHECK(s3.len == s2.len && memcmp(s3.data, s2.data, s2.len) == 0,
               "snapshot(restore(snapshot(restore(x)))) != snapshot(restore(x)) (%zu vs %zu bytes)",
               s3.len, s2.len);
    sw_detect_destroy(det2);
    sw_buf_clear(&s2);
    sw_buf_clear(&s3);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The same bytes as commit metadata and as a compressed envelope: a value
 * or an error, never a crash; what parses goes round again unchanged. */
static void snapcodec(const uint8_t *data, size_t size)
{
    char err[256], md[SW_SNAPMETA_MAX];
    sw_snapref_t ref, again;
    if (sw_snapmeta_parse(data, size, &ref, err, sizeof(err)) == SW_OK) {
        size_t n = sw_snapmeta_encode(&ref, md, sizeof(md));
        FUZZ_CHECK(sw_snapmeta_parse(md, n, &again, err, sizeof(err)) == SW_OK, "%s: %s", md, err);
        FUZZ_CHECK(again.first == ref.first && again.chunks == ref.chunks && again.id == ref.id &&
                       again.x == ref.x,
                   "%s does not parse back", md);
    } else {
        FUZZ_CHECK(err[0] != '\0', "sw_snapmeta_parse failed without a message");
    }
    sw_buf_t raw, z, raw2;
    sw_buf_init(&raw);
    sw_buf_init(&z);
    sw_buf_init(&raw2);
    sw_snapenv_t env, env2;
    if (sw_snapenv_unpack(data, size, &raw, &env, err, sizeof(err)) == SW_OK) {
        FUZZ_CHECK(sw_snapenv_pack(&env, &z), "pack refused");
        FUZZ_CHECK(sw_snapenv_unpack(z.data, z.len, &raw2, &env2, err, sizeof(err)) == SW_OK,
                   "repacked: %s", err);
        FUZZ_CHECK(
            env2.x == env.x && env2.y == env.y && env2.npos == env.npos && env2.nsup == env.nsup &&
                env2.engine.len == env.engine.len &&
                (!env.nsup || !memcmp(env2.sup, env.sup, env.nsup * sizeof(*env.sup))) &&
                (!env.engine.len || !memcmp(env2.engine.ptr, env.engine.ptr, env.engine.len)) &&
                env2.two == env.two && env2.xr == env.xr && env2.yr == env.yr &&
                env2.nrsup == env.nrsup &&
                (!env.nrsup || !memcmp(env2.rsup, env.rsup, env.nrsup * sizeof(*env.rsup))) &&
                env2.ext.len == env.ext.len &&
                (!env.ext.len || !memcmp(env2.ext.ptr, env.ext.ptr, env.ext.len)),
            "the envelope does not go round");
        /* An engine with its extension (sw_detect_snapshot_compat): applied
         * or refused with a message, never a crash. */
        int64_t nx[SW_DETECT_SOURCES];
        sw_detector_t *det = env.ext.len
                                 ? sw_detect_restore_src(restore_params(), env.engine.ptr,
                                                         env.engine.len, 1000, nx, err, sizeof(err))
                                 : NULL;
        if (det) {
            err[0] = '\0';
            if (!sw_detect_restore_ext(det, env.engine.ptr, env.engine.len, env.ext.ptr,
                                       env.ext.len, err, sizeof(err)))
                FUZZ_CHECK(err[0] != '\0', "sw_detect_restore_ext failed without a message");
            sw_detect_destroy(det);
        }
        sw_snapenv_clear(&env2);
        sw_snapenv_clear(&env);
    }
    sw_buf_clear(&raw);
    sw_buf_clear(&z);
    sw_buf_clear(&raw2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    int64_t next[SW_DETECT_SOURCES] = {0, 0};
    fuzz_deep_records = fuzz_deep_summaries = FUZZ_DEEP_RECORDS;
    /* A copy of exactly size bytes: ASan sees any read past the end. */
    uint8_t *copy = malloc(size ? size : 1);
    if (size) memcpy(copy, data, size);
    snapcodec(copy, size);
    err[0] = '\0';
    sw_detector_t *det = sw_detect_restore_src(restore_params(), copy, size, 1000, next, err,
                                               sizeof(err));
    free(copy); /* the detector must have copied what it keeps */
    if (!det) {
        FUZZ_CHECK(err[0] != '\0', "sw_detect_restore failed without a message");
        return 0;
    }
    snapshot_fixed_point(det, next);
    /* Rebuild with a few samples below next of each source, as the daemon
     * does, the sources interleaved. */
    int64_t off[SW_DETECT_SOURCES];
    for (int s = 0; s < SW_DETECT_SOURCES; s++) off[s] = next[s] > 64 ? next[s] - 64 : 0;
    for (int i = 0; i < 128; i++) {
        int s = (i / 3) % SW_DETECT_SOURCES;
        if (off[s] >= next[s]) continue;
        sw_event_t ev = sample(i % 4, i % 5, 1763700000000000000LL + i * 25000000LL,
                               ((int64_t)1 << 30) + (i % 7) * ((int64_t)1 << 28));
        (void)sw_detect_rebuild_src(det, &ev, s, off[s]++);
    }
    sw_detect_rebuild_done(det);
    for (int j = 0; j < 4; j++) {
        sw_analysis_t a;
        if (sw_detect_analysis(det, k_jobs[j], &a)) {
            sw_record_t rec;
            memset(&rec, 0, sizeof(rec));
            rec.action = SW_ACTION_SUMMARY;
            rec.analysis = a;
            fuzz_check_record(&rec, NULL);
        }
    }

    /* Go on from next. */
    for (int i = 0; i < 48; i++) {
        const sw_record_t *rec = NULL;
        sw_event_t ev = sample(i % 4, i % 6, 1763700001000000000LL + i * 100000000LL,
                               ((int64_t)1 << 30) + (int64_t)(i / 6) * ((int64_t)1 << 29));
        int s = i % 5 == 4;
        sw_err_t rc = sw_detect_feed_src(det, &ev, 2000 + i, s, next[s]++, &rec, err, sizeof(err));
        FUZZ_CHECK(rc == SW_OK || rc == SW_ERR_LIMIT || rc == SW_ERR_CLOCK,
                   "sw_detect_feed_src returned %d", (int)rc);
        if (rec) fuzz_check_record(rec, NULL);
    }
    sw_detect_stats_t st;
    sw_detect_stats(det, &st);
    sw_detect_finish(det, fuzz_record_cb, NULL);
    (void)sw_detect_expire(det, 1000000, 1, fuzz_record_cb, NULL);
    sw_detect_destroy(det);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Corpus generator                                                    */
/* ------------------------------------------------------------------ */

#include "sw_codec_telemetry.h"

static void gen_write(const char *dir, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/snap-%016llx", dir,
             (unsigned long long)sw_hash_bytes(p, n, 0x5eed));
    FILE *fp = fopen(path, "wb");
    if (!fp || (n && fwrite(p, 1, n, fp) != n)) {
        perror(path);
        exit(1);
    }
    fclose(fp);
}

/* Snapshots while feeding one fixture from @p sources logs (with two,
 * every third line from source 1): after 1/4, 1/2 and all lines. */
static void gen_fixture(const char *dir, const char *path, int sources)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return;
    size_t total = 0;
    int c;
    while ((c = fgetc(fp)) != EOF) total += c == '\n';
    rewind(fp);
    sw_tdec_t *dec = sw_tdec_new();
    sw_detector_t *det = sw_detect_new(restore_params());
    char *line = NULL, err[512];
    size_t cap = 0, lineno = 0;
    int64_t next[SW_DETECT_SOURCES] = {0, 0};
    ssize_t n;
    while ((n = getline(&line, &cap, fp)) > 0) {
        sw_event_t ev;
        const sw_record_t *rec;
        lineno++;
        int s = sources == 2 && lineno % 3 == 0;
        if (sw_tdec_json(dec, line, (size_t)n, &ev, err, sizeof(err)) == SW_OK)
            (void)sw_detect_feed_src(det, &ev, (int64_t)lineno, s, next[s], &rec, err, sizeof(err));
        next[s]++;
        if (lineno == total / 4 || lineno == total / 2 || lineno == total) {
            sw_buf_t b;
            sw_buf_init(&b);
            sw_detect_snapshot_src(det, next, &b);
            gen_write(dir, b.data, b.len);
            sw_buf_clear(&b);
        }
    }
    sw_detect_destroy(det);
    sw_tdec_destroy(dec);
    free(line);
    fclose(fp);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_records_from_restore = true;
    const char *dir = getenv("SW_FUZZ_GEN_CORPUS");
    if (!dir || !*dir) return 0;
    const char *fixtures = getenv("SW_FUZZ_FIXTURES");
    if (!fixtures || !*fixtures) fixtures = "tests/fixtures";
    DIR *d = opendir(fixtures);
    if (!d) {
        perror(fixtures);
        exit(1);
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        /* The hand-written fixtures (gen* are large and alike). */
        if (len < 6 || strcmp(de->d_name + len - 6, ".jsonl") != 0 ||
            strstr(de->d_name, ".stream.") || strncmp(de->d_name, "gen", 3) == 0)
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", fixtures, de->d_name);
        gen_fixture(dir, path, 1);
        gen_fixture(dir, path, 2);
    }
    closedir(d);
    /* An empty engine, and a bad magic. */
    sw_detector_t *det = sw_detect_new(restore_params());
    sw_buf_t b;
    sw_buf_init(&b);
    sw_detect_snapshot(det, 0, &b);
    gen_write(dir, b.data, b.len);
    b.data[0] = 'X';
    gen_write(dir, b.data, b.len);
    sw_buf_clear(&b);
    sw_detect_destroy(det);
    exit(0);
}
