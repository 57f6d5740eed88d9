/*
 * State snapshots written by earlier stormwatch versions restore: a daemon
 * upgraded in place finds its partitions' last snapshots on state.topic in
 * the old format and must go on exactly where the old one stopped.
 *
 * tests/snapshots holds two generated inputs (storms.jsonl.gz:
 * one job of 8 ranks, 2 storms, a rank restart, duplicates and late
 * samples; crash.jsonl.gz: `gen --crash cascade`, SPEC 8's first death and
 * warning) and snapshots of the engine with default parameters taken by an
 * earlier version while feeding them (line i at offset i and now_ms i):
 * NAME.K.sws3 is the snapshot as of line K, after the 8-byte little-endian
 * offset Y the windows are rebuilt from (sw_detect_min_offset then). For
 * each, the engine of this version restores it, rebuilds lines [Y, K),
 * goes on from K, and must make the same records (from line K on, then the
 * summaries) as an engine of this version fed every line without a stop.
 * When the format changes again, the snapshots of the version before are
 * added here (NAME.K.sws4, ...): every format a released daemon wrote
 * restores, or is refused by name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_codec_alert.h"
#include "sw_codec_telemetry.h"
#include "sw_detect.h"
#include "sw_input.h"
#include "sw_testlib.h"

typedef struct lines_s {
    char **v;
    size_t n, cap;
} lines_t;

/* Every line of @p path (gzip or plain), read the way the CLI reads. */
static void lines_load(lines_t *l, const char *path)
{
    char err[512];
    sw_input_t *in = sw_input_open(path, err, sizeof(err));
    SW_ASSERT(in != NULL, "%s", err);
    const char *line;
    size_t len;
    sw_input_res_t r;
    while ((r = sw_input_next(in, &line, &len, err, sizeof(err))) == SW_INPUT_LINE) {
        if (l->n == l->cap) {
            l->cap = l->cap ? 2 * l->cap : 4096;
            l->v = realloc(l->v, l->cap * sizeof(*l->v));
        }
        l->v[l->n++] = strndup(line, len);
    }
    SW_ASSERT(r == SW_INPUT_EOF, "%s: %s", path, err);
    sw_input_close(in);
}

static void lines_free(lines_t *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
}

typedef struct out_s {
    sw_buf_t text; /* one JSON record per line */
    size_t n;
} out_t;

static void out_record(void *opaque, const sw_record_t *rec)
{
    out_t *o = opaque;
    sw_alert_json_record(&o->text, rec);
    sw_buf_put(&o->text, "\n", 1);
    o->n++;
}

/* Feed line @p i; its records go to @p o when @p keep. */
static void feed(sw_detector_t *det, sw_tdec_t *dec, const lines_t *l, size_t i, out_t *o,
                 bool keep)
{
    sw_event_t ev;
    char err[512];
    if (sw_tdec_json(dec, l->v[i], strlen(l->v[i]), &ev, err, sizeof(err)) != SW_OK) return;
    const sw_record_t *rec = NULL;
    if (sw_detect_feed_at(det, &ev, (int64_t)i, (int64_t)i, &rec, err, sizeof(err)) != SW_OK)
        return;
    if (rec && keep) out_record(o, rec);
    while ((rec = sw_detect_next(det)) != NULL) /* SPEC 8's of the same event */
        if (keep) out_record(o, rec);
}

static void check_snapshot(const char *name, size_t k, size_t *records)
{
    char path[2048];
    lines_t l = {0};
    snprintf(path, sizeof(path), "%s/../snapshots/%s.jsonl.gz", sw_test_fixtures(), name);
    lines_load(&l, path);
    snprintf(path, sizeof(path), "%s/../snapshots/%s.%zu.sws3", sw_test_fixtures(), name, k);
    sw_buf_t snap;
    sw_buf_init(&snap);
    SW_ASSERT(sw_test_read_file(path, &snap) && snap.len > 8, "cannot read %s", path);
    const char *file = (const char *)snap.data;
    size_t len = snap.len;
    int64_t y = 0;
    for (int b = 7; b >= 0; b--) y = y << 8 | (unsigned char)file[b];
    sw_tdec_t *dec = sw_tdec_new();
    sw_params_t p = sw_params_default();

    out_t want = {{0}, 0}, got = {{0}, 0};
    sw_buf_init(&want.text);
    sw_buf_init(&got.text);
    sw_detector_t *det = sw_detect_new(p);
    for (size_t i = 0; i < l.n; i++) feed(det, dec, &l, i, &want, i >= k);
    sw_detect_finish(det, out_record, &want);
    sw_detect_destroy(det);

    char err[512];
    int64_t next = -1;
    det = sw_detect_restore(p, file + 8, len - 8, (int64_t)k, &next, err, sizeof(err));
    SW_ASSERT(det != NULL, "%s: %s", path, err);
    SW_ASSERT_I64(next, (int64_t)k);
    SW_ASSERT(y >= 0 && y <= (int64_t)k, "%s: rebuild offset %lld", path, (long long)y);
    size_t rebuilt = 0;
    for (size_t i = (size_t)y; i < k; i++) {
        sw_event_t ev;
        if (sw_tdec_json(dec, l.v[i], strlen(l.v[i]), &ev, err, sizeof(err)) == SW_OK &&
            sw_detect_rebuild(det, &ev, (int64_t)i))
            rebuilt++;
    }
    sw_detect_rebuild_done(det);
    for (size_t i = k; i < l.n; i++) feed(det, dec, &l, i, &got, true);
    sw_detect_finish(det, out_record, &got);
    sw_detect_destroy(det);

    char why[512] = "";
    bool same = want.text.len == got.text.len &&
                memcmp(want.text.data, got.text.data, want.text.len) == 0;
    if (!same) {
        size_t at = 0;
        while (at < want.text.len && at < got.text.len && want.text.data[at] == got.text.data[at])
            at++;
        snprintf(why, sizeof(why), "first difference at byte %zu of %zu / %zu", at, want.text.len,
                 got.text.len);
    }
    SW_ASSERT(same, "%s restored at line %zu: records differ from an uninterrupted run (%s)", path,
              k, why);
    SW_ASSERT(want.n > 0, "%s: no record after line %zu to compare", path, k);
    SW_ASSERT(rebuilt > 0, "%s: no sample re-inserted", path);
    printf("%s: restored at line %zu, windows rebuilt from %lld (%zu samples), %zu records equal\n",
           path, k, (long long)y, rebuilt, want.n);
    *records += want.n;
    sw_buf_clear(&want.text);
    sw_buf_clear(&got.text);
    sw_buf_clear(&snap);
    sw_tdec_destroy(dec);
    lines_free(&l);
}

/* SWS3: written by stormwatch before the engine could be fed from two logs
 * (main 17bf9a3, 2026-11-27). */
static void test_sws3(void **state)
{
    (void)state;
    size_t records = 0;
    static const struct {
        const char *name;
        size_t k;
    } snaps[] = {{"storms", 1221}, {"storms", 2239}, {"storms", 3257},
                 {"crash", 2356},  {"crash", 4320},  {"crash", 6284}};
    for (size_t i = 0; i < sizeof(snaps) / sizeof(snaps[0]); i++)
        check_snapshot(snaps[i].name, snaps[i].k, &records);
    SW_ASSERT(records >= 12, "%zu records compared", records);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sws3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
