/* Random streams and engine runs for the test_detect_* tests (detect_streams.h). */
#include "detect_streams.h"

/* ---- random streams ------------------------------------------------------ */

uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* gen_t.sticky of the streams that follow (set by the tests that want it). */
bool g_sticky;
/* Restores of two-source engines swap their sources (sw_detect_swap_sources:
 * repartition=auto's engine going on under on) and are fed so from then on. */
bool g_swap;
bool g_compat; /* snapshots in the previous release's layout and an extension */
/* gen_t.wide of the streams that follow. */
bool g_wide;

/* A random event; strings live in g. */
void gen_event(gen_t *g, sw_event_t *ev, int nranks, int njobs)
{
    memset(ev, 0, sizeof(*ev));
    int jb = (int)(rng(&g->s) % (uint64_t)njobs);
    int rk = (int)(rng(&g->s) % (uint64_t)nranks);
    ev->has_job_id = jb != 0;
    snprintf(g->job[jb], sizeof(g->job[jb]), "j%d", jb);
    ev->job_id = sw_str(g->job[jb]);
    ev->rank = rk;
    uint64_t wsr = rng(&g->s) % 10;
    ev->world_size = wsr < 6 ? nranks : wsr < 8 ? nranks + 2 : rk + 1;
    ev->pid = 100 + rk + (rng(&g->s) % 400 == 0 ? 1 : 0); /* a restart, now and then */
    snprintf(g->host[rk], sizeof(g->host[rk]), "h%d", rk + (rng(&g->s) % 25 == 0 ? 1 : 0));
    ev->host = sw_str(g->host[rk]);
    if (g->sticky) {
        ev->has_session_id = rng(&g->s) % 150 != 0;
        if (rng(&g->s) % 250 == 0) g->alt[rk] = !g->alt[rk];
        snprintf(g->session[rk], sizeof(g->session[rk]), "%c%d", g->alt[rk] ? 'u' : 's', rk);
    } else {
        ev->has_session_id = rng(&g->s) % 10 != 0;
        snprintf(g->session[rk], sizeof(g->session[rk]), "s%d", rk);
    }
    ev->session_id = sw_str(g->session[rk]);
    ev->sampling_interval_ms = rng(&g->s) % 7 == 0 ? 0 : 100;
    if (g->wide && rng(&g->s) % 5 == 0)
        ev->sampling_interval_ms = rng(&g->s) % 2 ? ((int64_t)1 << 33) : INT32_MIN;
    /* time: mostly forward, some late, some big jumps, some duplicates */
    uint64_t t = rng(&g->s) % 100;
    int64_t *now = &g->now[jb][rk];
    if (t < 80) *now += (50 + (int64_t)(rng(&g->s) % 100)) * g->scale;
    else if (t < 83) *now += (3000 + (int64_t)(rng(&g->s) % 3000)) * g->scale;
    ev->timestamp_ns = *now;
    if (!g->ordered && t >= 83 && t < 93 && *now > 1000 * g->scale)
        ev->timestamp_ns = *now - (int64_t)(rng(&g->s) % 800) * g->scale;
    if (g->wide) {
        /* pids int32 does not hold, or its markers; a late sample now and
         * then from another process of the rank (at timestamps the first
         * has too: toy steps) */
        static const int64_t pids[] = {INT64_MIN,        INT32_MIN, INT32_MIN + 1,
                                       (int64_t)1 << 40, INT64_MAX, -5};
        bool late = ev->timestamp_ns != *now && rng(&g->s) % 2;
        ev->pid = pids[(rk + (late ? 1 : 0)) % 6];
    }
    /* memory */
    int64_t *u = &g->used[jb][rk];
    uint64_t mv = rng(&g->s) % 10;
    if (mv < 4) *u -= (int64_t)(rng(&g->s) % 300);
    else if (mv < 8) *u += (int64_t)(rng(&g->s) % 200);
    else *u += (int64_t)(rng(&g->s) % 1500);
    if (*u < 1000 || *u > 6000) *u = 2000;
    ev->device_used_bytes = *u;
    ev->has_device_used = true;
    uint64_t kind = rng(&g->s) % 100;
    if (g->ordered) kind = kind < 65 ? 0 : 85 + kind % 10;
    if (kind < 85) {
        ev->event_type = sw_str("sample");
        ev->kind = SW_EV_SAMPLE;
    } else if (kind < 95) {
        bool enter = kind < 91;
        ev->event_type = sw_str(enter ? "phase_enter" : "phase_exit");
        ev->kind = enter ? SW_EV_PHASE_ENTER : SW_EV_PHASE_EXIT;
        ev->has_phase = true;
        ev->phase.enter = enter;
        ev->phase.name = sw_str("p");
        ev->phase.path_len = 1 + (int)(rng(&g->s) % 2);
        ev->phase.path[0] = sw_str("train");
        ev->phase.path[1] = sw_str(rng(&g->s) % 2 ? "fwd" : "bwd");
        snprintf(g->scope, sizeof(g->scope), "S%d", (int)(rng(&g->s) % 4));
        ev->phase.scope_id = sw_str(g->scope);
        ev->phase.thread_id = (int64_t)(rng(&g->s) % 2);
        ev->phase.thread_name = sw_str("T");
        ev->phase.sequence = g->seq++;
    } else {
        ev->event_type = sw_str("warning");
        ev->kind = SW_EV_OTHER;
    }
}

sw_detector_t *fed_engine(sw_params_t p, uint64_t seed, int64_t n)
{
    sw_detector_t *det = sw_detect_new(p);
    gen_t g;
    memset(&g, 0, sizeof(g));
    g.s = seed;
    g.scale = 1;
    char err[256];
    for (int64_t i = 0; i < n; i++) {
        sw_event_t ev;
        gen_event(&g, &ev, 4, 2);
        const sw_record_t *rec;
        SW_ASSERT_I64(sw_detect_feed_src(det, &ev, 0, 0, i, &rec, err, sizeof(err)), SW_OK);
    }
    return det;
}

/* SPEC 6's record: SPEC 8.5's blind_ranks (a rank of the random streams
 * that goes quiet is silent) is left out; test_crash checks it. */
void record_json(const sw_record_t *r, sw_buf_t *out)
{
    sw_record_t six = *r;
    six.n_blind = 0;
    six.blind_ranks = NULL;
    out->len = 0;
    sw_alert_json_record(out, &six);
    sw_buf_cstr(out);
}

void out_push(outlog_t *o, const char *s)
{
    if (o->n == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 64;
        o->v = realloc(o->v, o->cap * sizeof(*o->v));
    }
    o->v[o->n++] = strdup(s);
}

void out_clear(outlog_t *o)
{
    for (size_t i = 0; i < o->n; i++) free(o->v[i]);
    free(o->v);
    memset(o, 0, sizeof(*o));
}

void on_summary(void *opaque, const sw_record_t *rec)
{
    sumctx_t *c = opaque;
    record_json(rec, c->buf);
    out_push(c->log, c->buf->data);
}

/* An event's source when a stream is fed from two: either, at random, but
 * the same for samples of one rank with one timestamp. (Which of two
 * duplicates a window keeps depends on which came first, and a rebuild
 * that reads the sources in another interleaving could keep the other.
 * A real duplicate is a sample sent twice, equal in both copies; the
 * generator's duplicates differ in device_used_bytes.) */
int source_of(const sw_event_t *ev)
{
    uint64_t h = (uint64_t)ev->timestamp_ns * 0x9E3779B97F4A7C15ull ^
                 (uint64_t)ev->rank * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)ev->job_id.len;
    h ^= h >> 29;
    return (int)(h * 0xBF58476D1CE4E5B9ull >> 63);
}

/* Re-insert events [0, upto) of the stream into a restored detector: with
 * one source from offset y[0]; with two, source 1 first and then source 0
 * (each in its order, from its y), an interleaving the live engine never
 * saw. */
void rebuild_stream(sw_detector_t *det, uint64_t seed, int nranks, int njobs, int64_t scale,
                    int sources, size_t upto, const int64_t y[2], size_t *rebuilt)
{
    for (int pass = sources - 1; pass >= 0; pass--) {
        gen_t g2;
        memset(&g2, 0, sizeof(g2));
        g2.s = seed;
        g2.scale = scale;
        g2.sticky = g_sticky;
        g2.wide = g_wide;
        int64_t off[2] = {0, 0};
        for (size_t k = 0; k < upto; k++) {
            sw_event_t ev2;
            gen_event(&g2, &ev2, nranks, njobs);
            int s = sources == 2 ? source_of(&ev2) : 0;
            int64_t o = off[s]++;
            if (s != pass || o < y[s]) continue;
            if (sw_detect_rebuild_src(det, &ev2, g_swap ? 1 - s : s, o)) (*rebuilt)++;
        }
    }
}

/* Records from event @p from on (and the final summaries) of a detector
 * fed the stream from one or two @p sources (offsets counted per source);
 * with @p snap_at >= 0 the detector is snapshotted there, destroyed,
 * restored, rebuilt from its minimum offsets, and goes on. */
void run_stream(uint64_t seed, int nranks, int njobs, sw_params_t p, int64_t scale, int sources,
                size_t events, size_t from, long snap_at, outlog_t *out, size_t *rebuilt,
                marks_t *marks)
{
    sw_detector_t *det = sw_detect_new(p);
    gen_t g;
    memset(&g, 0, sizeof(g));
    g.s = seed;
    g.scale = scale;
    g.sticky = g_sticky;
    g.wide = g_wide;
    sw_buf_t buf;
    sw_buf_init(&buf);
    char err[256];
    int64_t off[2] = {0, 0}; /* next offset of each source */
    bool swapped = false;    /* fed with the sources swapped (g_swap, restored) */
    for (size_t i = 0; i < events; i++) {
        if ((long)i == snap_at) {
            int64_t y[2];
            for (int s = 0; s < 2; s++)
                if (!sw_detect_min_offset_src(det, s, &y[s]) || y[s] > off[s]) y[s] = off[s];
            sw_buf_t snap, ext, full;
            sw_buf_init(&snap);
            sw_buf_init(&ext);
            sw_buf_init(&full);
            const int64_t at[2] = {off[0], sources == 1 ? 0 : off[1]};
            sw_detect_snapshot_src(det, at, &full);
            if (g_compat) sw_detect_snapshot_compat(det, at, &snap, &ext);
            else if (sources == 1) sw_detect_snapshot(det, off[0], &snap);
            else sw_detect_snapshot_src(det, off, &snap);
            sw_detect_destroy(det);
            int64_t x[2] = {-1, -1};
            swapped = g_swap && sources == 2;
            /* Loaded as the daemon does (sw_detect_load: body, extension,
             * sources placed); with an extension, as snapshotted first (it
             * must save SWS6's bytes), its sources swapped after. */
            sw_detect_image_t img = {
                .body = snap.data, .body_len = snap.len, .ext = ext.data, .ext_len = ext.len};
            if (sources == 2)
                img.place = swapped && !g_compat ? SW_DETECT_PLACE_SWAPPED : SW_DETECT_PLACE_TWO;
            det = sw_detect_load(p, &img, 0, x, err, sizeof(err));
            if (!det) {
                SW_FAIL("restore failed: %s\n", err);
            }
            if (g_compat) {
                /* The body with its extension is the engine SWS6 gave: it
                 * saves SWS6's bytes (before its rebuild and after). */
                sw_buf_t re;
                sw_buf_init(&re);
                sw_detect_snapshot_src(det, at, &re);
                SW_ASSERT(re.len == full.len && memcmp(re.data, full.data, re.len) == 0,
                          "seed %llu snapshot at %ld: body and extension restore another engine",
                          (unsigned long long)seed, snap_at);
                sw_buf_clear(&re);
                sw_buf_clear(&snap);
                sw_buf_put(&snap, full.data, full.len); /* what "again" below compares */
                if (swapped) sw_detect_swap_sources(det, x);
            }
            SW_ASSERT_I64(x[0], off[swapped ? 1 : 0]);
            SW_ASSERT_I64(x[1], swapped ? off[0] : off[1]);
            rebuild_stream(det, seed, nranks, njobs, scale, sources, i, y, rebuilt);
            sw_detect_rebuild_done(det);
            /* The restored engine saves what it was restored from (pending
             * phase groups included: restored, they are made). */
            sw_buf_t again;
            sw_buf_init(&again);
            if (sources == 1) sw_detect_snapshot(det, off[0], &again);
            else sw_detect_snapshot_src(det, off, &again);
            SW_ASSERT(swapped ||
                          (again.len == snap.len && memcmp(again.data, snap.data, snap.len) == 0),
                      "seed %llu snapshot at %ld: the restored engine saves other bytes",
                      (unsigned long long)seed, snap_at);
            sw_buf_clear(&again);
            sw_buf_clear(&snap);
            sw_buf_clear(&ext);
            sw_buf_clear(&full);
        }
        sw_event_t ev;
        gen_event(&g, &ev, nranks, njobs);
        const sw_record_t *rec;
        int s = sources == 2 ? source_of(&ev) : 0;
        SW_ASSERT_I64(
            sw_detect_feed_src(det, &ev, 0, swapped ? 1 - s : s, off[s]++, &rec, err, sizeof(err)),
            SW_OK);
        if (rec && i >= from) {
            record_json(rec, &buf);
            out_push(out, buf.data);
        }
        if (rec && marks && marks->n < 64) marks->at[marks->n++] = (long)i + 1;
    }
    sumctx_t sc = {out, &buf};
    sw_detect_finish(det, on_summary, &sc);
    sw_buf_clear(&buf);
    sw_detect_destroy(det);
}

/* Seed @p seed's stream (run_stream's parameters) uninterrupted and
 * restored from a snapshot after event @p snap_at: the same records, one
 * by one (a failure names the seed, the point and both records).
 * @returns how many were compared. */
size_t restore_equal(uint64_t seed, int nranks, int njobs, sw_params_t p, int64_t scale,
                     int sources, size_t events, long snap_at, size_t *rebuilt)
{
    outlog_t a = {0}, b = {0};
    run_stream(seed, nranks, njobs, p, scale, sources, events, (size_t)snap_at, -1, &a, rebuilt,
               NULL);
    run_stream(seed, nranks, njobs, p, scale, sources, events, (size_t)snap_at, snap_at, &b,
               rebuilt, NULL);
    if (a.n != b.n) {
        SW_FAIL("seed %llu snapshot at %ld: %zu records uninterrupted, %zu restored\n",
                (unsigned long long)seed, snap_at, a.n, b.n);
    }
    for (size_t k = 0; k < a.n; k++) {
        if (strcmp(a.v[k], b.v[k]) != 0) {
            SW_FAIL(
                "seed %llu snapshot at %ld, record %zu:\nuninterrupted: %s\nrestored:      %s\n",
                (unsigned long long)seed, snap_at, k, a.v[k], b.v[k]);
        }
    }
    size_t n = a.n;
    out_clear(&a);
    out_clear(&b);
    return n;
}

void collect_real(void *opaque, const sw_record_t *rec)
{
    sumctx_t *c = opaque;
    if (rec->analysis.job_id.len && rec->analysis.job_id.ptr[0] == 'f') return;
    record_json(rec, c->buf);
    out_push(c->log, c->buf->data);
}

void run_flooded(sw_detector_t *det, uint64_t seed, int nfake, int franks, outlog_t *out,
                 size_t *peak)
{
    gen_t g;
    memset(&g, 0, sizeof(g));
    g.s = seed;
    g.scale = 1000000;
    g.ordered = true;
    sw_buf_t buf;
    sw_buf_init(&buf);
    sumctx_t sc = {out, &buf};
    char err[256], fid[32];
    uint64_t fn = 0;
    for (size_t i = 0; i < 3000; i++) {
        sw_event_t ev;
        gen_event(&g, &ev, 5, 3);
        const sw_record_t *rec;
        SW_ASSERT_I64(sw_detect_feed_at(det, &ev, 0, (int64_t)i, &rec, err, sizeof(err)), SW_OK);
        if (rec) collect_real(&sc, rec);
        for (int k = 0; k < nfake; k++) {
            sw_event_t fe = ev;
            snprintf(fid, sizeof(fid), "f%llu", (unsigned long long)fn++);
            fe.kind = SW_EV_SAMPLE;
            fe.event_type = sw_str("sample");
            fe.has_phase = false;
            fe.has_job_id = true;
            fe.job_id = sw_str(fid);
            fe.world_size = franks ? franks : (int[]){1, 2, 8}[fn % 3];
            for (int r = 0; r < fe.world_size; r++) {
                fe.rank = r;
                SW_ASSERT_I64(sw_detect_feed_at(det, &fe, 0, (int64_t)i, &rec, err, sizeof(err)),
                              SW_OK);
                SW_ASSERT_NULL(rec);
            }
            size_t acct = sw_detect_accounted(det);
            if (peak && acct > *peak) *peak = acct;
        }
    }
    sw_detect_finish(det, collect_real, &sc);
    sw_buf_clear(&buf);
}
