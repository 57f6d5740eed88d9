/*
 * The stream engine's snapshots (sw_detect_snapshot, sw_detect_restore):
 * engines restored mid-stream and rebuilt from their minimum offsets, fed
 * from one source or from two (and with the sources swapped), give the
 * records of uninterrupted ones; the layout the previous release reads
 * restores the same engine; a snapshot of other parameters, or cut short,
 * is refused.
 */
#include "detect_streams.h"

/* Restored engines (snapshot, restore, rebuild) against uninterrupted ones,
 * fed from one source or from two. */
static void restore_cases(int sources)
{
    size_t compared = 0, rebuilt = 0, points = 0;
    for (uint64_t seed = 1; seed <= 24; seed++) {
        int nranks = 2 + (int)(seed % 5);
        int njobs = 1 + (int)(seed % 3);
        sw_params_t p = sw_params_default();
        p.window_samples = 2 + (int64_t)(seed % 9);
        p.stale_ms = seed % 2 ? 2000 : 0;
        p.spike_min_bytes = 500;
        int64_t scale = seed % 2 ? 1000000 : 1;
        size_t events = 2500;
        for (long snap_at = 137; snap_at < (long)events; snap_at += 311 + (long)(seed * 17 % 101)) {
            compared += restore_equal(seed, nranks, njobs, p, scale, sources, events, snap_at,
                                      &rebuilt);
            points++;
        }
    }
    /* Snapshot points right after a trigger (mid-episode: the verdict must
     * survive), an update, and right after a resolve (the spent runs must
     * survive). */
    size_t marked = 0;
    for (uint64_t seed = 1; seed <= 32; seed++) {
        int nranks = 2 + (int)(seed % 5);
        int njobs = 1 + (int)(seed % 3);
        sw_params_t p = sw_params_default();
        p.window_samples = 2 + (int64_t)(seed % 9);
        p.stale_ms = seed % 2 ? 2000 : 0;
        p.spike_min_bytes = 500;
        int64_t scale = seed % 2 ? 1000000 : 1;
        size_t events = 1500;
        outlog_t a = {0};
        marks_t mk = {{0}, 0};
        run_stream(seed, nranks, njobs, p, scale, sources, events, 0, -1, &a, &rebuilt, &mk);
        out_clear(&a);
        for (size_t m = 0; m < mk.n; m++) {
            long snap_at = mk.at[m];
            if (snap_at >= (long)events) continue;
            compared += restore_equal(seed, nranks, njobs, p, scale, sources, events, snap_at,
                                      &rebuilt);
            marked++;
        }
    }
    fprintf(stderr,
            "restore, %d source(s): %zu snapshot points (%zu just after a trigger or a "
            "resolve), %zu records compared, %zu samples re-inserted\n",
            sources, points + marked, marked, compared, rebuilt);
    SW_ASSERT_TRUE(points > 100 && marked > 50 && compared > 300 && rebuilt > 1000);
}

static void test_restore(void **state)
{
    (void)state;
    restore_cases(1);
}

/* Fed from an input partition and a repartition partition at once: the
 * snapshot keeps a position per source, and a rebuild that reads the two
 * in another interleaving restores the same engine. */
static void test_restore_two_sources(void **state)
{
    (void)state;
    restore_cases(2);
}

/* The same restores with the engine's two sources swapped at the restore
 * (sw_detect_swap_sources) and fed so from then on: the same records. */
static void test_restore_swapped_sources(void **state)
{
    (void)state;
    g_swap = true;
    restore_cases(2);
    g_swap = false;
}

/* Snapshots in the layout the previous release reads (v0.3.0: SWS4, SW8a)
 * with what it lacks in an extension (issue 35, a rollback): restored
 * with the extension, the engine saves what SWS6 saves and gives the
 * records of the uninterrupted one, from one source, two, and swapped. */
static void test_restore_compat(void **state)
{
    (void)state;
    g_compat = true;
    restore_cases(1);
    restore_cases(2);
    g_swap = true;
    restore_cases(2);
    g_swap = false;
    g_compat = false;
}

/* The body alone is SWS4, which restores (an older snapshot); an extension
 * that is not of its body, or cut short, is refused by name. */
static void test_restore_compat_body(void **state)
{
    (void)state;
    sw_params_t p = sw_params_default();
    p.spike_min_bytes = 500;
    sw_detector_t *det = fed_engine(p, 5, 900);
    char err[256];
    sw_buf_t body, ext, full;
    sw_buf_init(&body);
    sw_buf_init(&ext);
    sw_buf_init(&full);
    sw_detect_snapshot_compat(det, (int64_t[2]){900, 0}, &body, &ext);
    sw_detect_snapshot(det, 900, &full);
    SW_ASSERT(body.len > 4 && !memcmp(body.data, "SWS4", 4), "body in SWS4's layout");
    SW_ASSERT(ext.len > 4 && !memcmp(ext.data, "SWX6", 4), "extension SWX6");
    int64_t x;
    sw_detector_t *r = sw_detect_restore(p, body.data, body.len, 0, &x, err, sizeof(err));
    SW_ASSERT(r != NULL, "the body alone restores: %s", err);
    SW_ASSERT_I64(x, 900);
    /* cut short */
    SW_ASSERT(
        !sw_detect_restore_ext(r, body.data, body.len, ext.data, ext.len - 1, err, sizeof(err)),
        "a cut extension is refused");
    SW_ASSERT(strstr(err, "SWX6") != NULL, "named: %s", err);
    sw_detect_destroy(r);
    /* beside an SWS6 body */
    r = sw_detect_restore(p, full.data, full.len, 0, &x, err, sizeof(err));
    SW_ASSERT(r != NULL, "SWS6 restores: %s", err);
    SW_ASSERT(!sw_detect_restore_ext(r, full.data, full.len, ext.data, ext.len, err, sizeof(err)),
              "an extension beside SWS6 is refused");
    sw_detect_destroy(r);
    sw_detect_destroy(det);
    sw_buf_clear(&body);
    sw_buf_clear(&ext);
    sw_buf_clear(&full);
}

/* sw_detect_load, the daemon's one restore: body and extension together,
 * the sources placed, the offsets the envelope names checked; what it
 * refuses it names, and gives nothing. */
static void test_restore_load(void **state)
{
    (void)state;
    sw_params_t p = sw_params_default();
    p.spike_min_bytes = 500;
    sw_detector_t *det = fed_engine(p, 7, 700);
    char err[256];
    sw_buf_t body, ext, full, re;
    sw_buf_init(&body);
    sw_buf_init(&ext);
    sw_buf_init(&full);
    sw_buf_init(&re);
    sw_detect_snapshot_compat(det, (int64_t[2]){700, 0}, &body, &ext);
    sw_detect_snapshot(det, 700, &full);
    int64_t x[2] = {-1, -1};
    /* body and extension: the engine SWS6 saves */
    sw_detect_image_t img = {.body = body.data,
                             .body_len = body.len,
                             .ext = ext.data,
                             .ext_len = ext.len,
                             .expect = (int64_t[2]){700, 0}};
    sw_detector_t *r = sw_detect_load(p, &img, 0, x, err, sizeof(err));
    SW_ASSERT(r != NULL, "body and extension load: %s", err);
    SW_ASSERT_I64(x[0], 700);
    sw_detect_snapshot(r, 700, &re);
    SW_ASSERT(re.len == full.len && !memcmp(re.data, full.data, re.len),
              "body and extension load the engine SWS6 saves");
    sw_detect_destroy(r);
    /* a one-source engine as source 1: its offsets are source 1's */
    img.place = SW_DETECT_PLACE_AS_ONE;
    img.expect = (int64_t[2]){0, 700};
    r = sw_detect_load(p, &img, 0, x, err, sizeof(err));
    SW_ASSERT(r != NULL, "loaded as source 1: %s", err);
    SW_ASSERT_I64(x[0], 0);
    SW_ASSERT_I64(x[1], 700);
    int64_t y;
    SW_ASSERT(!sw_detect_min_offset_src(r, 0, &y), "source 0 holds nothing");
    sw_detect_destroy(r);
    /* an envelope of other offsets, a cut extension, a body of another
     * layout beside the extension: refused by name */
    img.expect = (int64_t[2]){0, 699};
    SW_ASSERT_NULL(sw_detect_load(p, &img, 0, x, err, sizeof(err)));
    SW_ASSERT(strstr(err, "envelope") != NULL, "named: %s", err);
    img.expect = NULL;
    img.ext_len--;
    SW_ASSERT_NULL(sw_detect_load(p, &img, 0, x, err, sizeof(err)));
    SW_ASSERT(strstr(err, "SWX6") != NULL, "named: %s", err);
    img = (sw_detect_image_t){.body = full.data,
                              .body_len = full.len,
                              .ext = ext.data,
                              .ext_len = ext.len,
                              .place = SW_DETECT_PLACE_TWO};
    SW_ASSERT_NULL(sw_detect_load(p, &img, 0, x, err, sizeof(err)));
    SW_ASSERT(strstr(err, "SWX6") != NULL, "named: %s", err);
    sw_detect_destroy(det);
    sw_buf_clear(&body);
    sw_buf_clear(&ext);
    sw_buf_clear(&full);
    sw_buf_clear(&re);
}

static void test_restore_refuses_other_params(void **state)
{
    (void)state;
    sw_params_t p = sw_params_default();
    sw_detector_t *det = sw_detect_new(p);
    sw_buf_t snap;
    sw_buf_init(&snap);
    sw_detect_snapshot(det, 0, &snap);
    p.window_samples = 7;
    char err[256] = "";
    int64_t x;
    SW_ASSERT_NULL(sw_detect_restore(p, snap.data, snap.len, 0, &x, err, sizeof(err)));
    SW_ASSERT_NOT_NULL(strstr(err, "window.samples"));
    SW_ASSERT_NULL(sw_detect_restore(sw_params_default(), "junk", 4, 0, &x, err, sizeof(err)));
    SW_ASSERT_NOT_NULL(strstr(err, "magic"));
    /* Every truncation of a real snapshot is refused, none crashes. */
    sw_detect_destroy(det);
    det = fed_engine(sw_params_default(), 5, 500);
    snap.len = 0;
    sw_detect_snapshot(det, 500, &snap);
    for (size_t cut = 0; cut < snap.len; cut++) {
        sw_detector_t *r = sw_detect_restore(sw_params_default(), snap.data, cut, 0, &x, err,
                                             sizeof(err));
        if (r) fprintf(stderr, "a snapshot cut to %zu of %zu bytes was accepted\n", cut, snap.len);
        SW_ASSERT_NULL(r);
    }
    sw_detector_t *r = sw_detect_restore(sw_params_default(), snap.data, snap.len, 0, &x, err,
                                         sizeof(err));
    SW_ASSERT_NOT_NULL(r);
    sw_detect_destroy(r);
    sw_detect_destroy(det);
    sw_buf_clear(&snap);
}

int main(void)
{
    /* SW_TEST_ONLY=CASE: that case only (cmocka's filter): CTest runs each
     * case as a test of its own, so that ctest -j spreads them. */
    const char *only = getenv("SW_TEST_ONLY");
    if (only) cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restore),
        cmocka_unit_test(test_restore_two_sources),
        cmocka_unit_test(test_restore_swapped_sources),
        cmocka_unit_test(test_restore_compat),
        cmocka_unit_test(test_restore_compat_body),
        cmocka_unit_test(test_restore_load),
        cmocka_unit_test(test_restore_refuses_other_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
