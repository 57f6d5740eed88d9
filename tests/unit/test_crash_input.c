/*
 * SPEC 8 (src/core/sw_crash.c) beside SPEC 6: SPEC 6's records unchanged
 * with and without SPEC 8 events (shared fixtures and generated inputs);
 * snapshots taken inside crashes and warnings; bad input (a 1 MB
 * oom_reason, a never-seen job, a device fuller than its capacity, floods
 * of markers); blind ranks; the crash records through every codec.
 */
#include "crash_run.h"

/* ---- SPEC 6 unchanged ------------------------------------------------------------- */

typedef struct lines_s {
    char **v;
    size_t n, cap;
} lines_t;

static void lines_push(lines_t *ls, const char *p, size_t n)
{
    if (ls->n == ls->cap) {
        ls->cap = ls->cap ? ls->cap * 2 : 1024;
        ls->v = realloc(ls->v, ls->cap * sizeof(*ls->v));
    }
    ls->v[ls->n++] = strndup(p, n);
}

static void lines_free(lines_t *ls)
{
    for (size_t i = 0; i < ls->n; i++) free(ls->v[i]);
    free(ls->v);
    memset(ls, 0, sizeof(*ls));
}

static void run_lines(const lines_t *ls, sw_params_t p, runlog_t *l)
{
    sw_detector_t *det = sw_detect_new(p);
    sw_tdec_t *dec = sw_tdec_new();
    for (size_t i = 0; i < ls->n; i++) {
        size_t n = strlen(ls->v[i]);
        if (n == 0 || sw_tdec_blank(ls->v[i], n)) continue;
        sw_event_t ev;
        char err[256];
        if (sw_tdec_json(dec, ls->v[i], n, &ev, err, sizeof(err)) != SW_OK) continue;
        const sw_record_t *rec;
        if (sw_detect_feed(det, &ev, 0, &rec, err, sizeof(err)) != SW_OK) continue;
        if (rec) log_six(l, rec);
        for (const sw_record_t *x = sw_detect_next(det); x; x = sw_detect_next(det))
            log_x8(l, x, i);
    }
    sw_detect_finish(det, on_summary, l);
    sw_tdec_destroy(dec);
    sw_detect_destroy(det);
}

static void compare_six(const runlog_t *a, const runlog_t *b, const char *what)
{
    SW_CHECK(a->nsix == b->nsix, "%s: %zu SPEC 6 records without SPEC 8 events, %zu with", what,
             a->nsix, b->nsix);
    for (size_t i = 0; i < a->nsix && i < b->nsix; i++)
        SW_CHECK(strcmp(a->six[i], b->six[i]) == 0, "%s: SPEC 6 record %zu differs:\n%s\n%s", what,
                 i, a->six[i], b->six[i]);
}

/* A SPEC 8 event of @p ev's job and rank at its time (JSON line). */
static void x8_line(const sw_event_t *ev, int kind, sw_buf_t *out)
{
    static const char *const types[] = {"error", "collector_degraded", "collector_recovered",
                                        "stop", "OOM"};
    out->len = 0;
    sw_buf_printf(out,
                  "{\"timestamp_ns\": %lld, \"event_type\": \"%s\", \"rank\": %lld, "
                  "\"world_size\": %lld, \"pid\": %lld, \"host\": \"",
                  (long long)ev->timestamp_ns, types[kind], (long long)ev->rank,
                  (long long)ev->world_size, (long long)ev->pid);
    sw_buf_put(out, ev->host.ptr, ev->host.len);
    sw_buf_puts(out, "\", \"job_id\": ");
    if (ev->has_job_id) {
        sw_buf_putc(out, '"');
        sw_buf_put(out, ev->job_id.ptr, ev->job_id.len);
        sw_buf_putc(out, '"');
    } else {
        sw_buf_puts(out, "null");
    }
    if (kind == 0) sw_buf_puts(out, ", \"metadata\": {\"oom_reason\": \"CUDA out of memory\"}");
    sw_buf_putc(out, '}');
}

static void test_spec6_unchanged(void **state)
{
    (void)state;
    sw_check_reset();
    size_t inputs = 0, compared = 0, x8records = 0;
    /* The shared fixtures, with SPEC 8 events added: after every 7th event
     * one of a death marker, collector_degraded/_recovered, stop or oom,
     * for that event's own job and rank (never a job's first event). */
    const char *dir = sw_test_fixtures();
    DIR *d = opendir(dir);
    SW_ASSERT_NOT_NULL(d);
    struct dirent *de;
    sw_buf_t file, extra;
    sw_buf_init(&file);
    sw_buf_init(&extra);
    sw_tdec_t *dec = sw_tdec_new();
    while ((de = readdir(d)) != NULL) {
        size_t nl = strlen(de->d_name);
        if (nl < 7 || strcmp(de->d_name + nl - 6, ".jsonl") != 0) continue;
        if (nl > 13 && strcmp(de->d_name + nl - 13, ".stream.jsonl") == 0) continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        file.len = 0;
        SW_ASSERT_TRUE(sw_test_read_file(path, &file));
        lines_t plain = {0}, mixed = {0};
        size_t k = 0;
        for (size_t s = 0; s < file.len;) {
            const char *p = file.data + s, *e = memchr(p, '\n', file.len - s);
            size_t n = e ? (size_t)(e - p) : file.len - s;
            s += n + 1;
            lines_push(&plain, p, n);
            lines_push(&mixed, p, n);
            sw_event_t ev;
            char err[256];
            if (n == 0 || sw_tdec_json(dec, p, n, &ev, err, sizeof(err)) != SW_OK) continue;
            if (++k % 7 == 0) {
                x8_line(&ev, (int)(k / 7 % 5), &extra);
                lines_push(&mixed, extra.data, extra.len);
            }
        }
        runlog_t a = {0}, b = {0};
        run_lines(&plain, sw_params_default(), &a);
        run_lines(&mixed, sw_params_default(), &b);
        compare_six(&a, &b, de->d_name);
        compared += a.nsix;
        x8records += b.n;
        inputs++;
        log_clear(&a);
        log_clear(&b);
        lines_free(&plain);
        lines_free(&mixed);
    }
    closedir(d);
    /* Generated cascades and outages with their SPEC 8 events, and without
     * (every non-sample line taken out, device_total_bytes kept). */
    for (int sc = 0; sc < 2; sc++) {
        for (uint64_t seed = 1; seed <= 3; seed++) {
            sw_genx_opts_t o;
            sw_genx_opts_default(&o);
            o.scenario = sc ? SW_GENX_OUTAGE : SW_GENX_CASCADE;
            o.ranks = 8;
            o.seed = seed;
            o.watchdog_s = 60;
            char errstr[256];
            sw_genx_t *g = sw_genx_new(&o, errstr, sizeof(errstr));
            SW_ASSERT(g != NULL, "%s", errstr);
            lines_t with = {0}, without = {0};
            file.len = 0;
            while (sw_genx_next(g, &file)) {
                lines_push(&with, file.data, file.len - 1);
                if (strstr(file.data, "\"event_type\": \"sample\""))
                    lines_push(&without, file.data, file.len - 1);
                file.len = 0;
            }
            sw_genx_destroy(g);
            runlog_t a = {0}, b = {0};
            run_lines(&without, sw_params_default(), &a);
            run_lines(&with, sw_params_default(), &b);
            compare_six(&a, &b, sc ? "gen --crash outage" : "gen --crash cascade");
            compared += a.nsix;
            x8records += b.n;
            inputs++;
            log_clear(&a);
            log_clear(&b);
            lines_free(&with);
            lines_free(&without);
        }
    }
    sw_tdec_destroy(dec);
    sw_buf_clear(&file);
    sw_buf_clear(&extra);
    printf(
        "SPEC 6 records unchanged by SPEC 8 events: %zu inputs, %zu SPEC 6 records compared, "
        "%zu SPEC 8 records beside them\n",
        inputs, compared, x8records);
    SW_ASSERT_TRUE(inputs > 60);
    SW_ASSERT_TRUE(x8records > 0);
    SW_CHECK_END();
}

/* ---- snapshots inside crashes and warnings ---------------------------------------- */

static void run_restored(const lines_t *ls, sw_params_t p, size_t cut, runlog_t *l)
{
    sw_detector_t *det = sw_detect_new(p);
    sw_tdec_t *dec = sw_tdec_new();
    char err[256];
    for (size_t i = 0; i < ls->n; i++) {
        if (i == cut) {
            int64_t y;
            if (!sw_detect_min_offset(det, &y) || y > (int64_t)i) y = (int64_t)i;
            sw_buf_t snap, body, ext, again;
            sw_buf_init(&snap);
            sw_buf_init(&body);
            sw_buf_init(&ext);
            sw_buf_init(&again);
            sw_detect_snapshot(det, (int64_t)i, &snap);
            /* The layout v0.3.0 reads (SW8a) and its extension: restored,
             * the same engine (its SW8b fields included). */
            sw_detect_snapshot_compat(det, (int64_t[2]){(int64_t)i, 0}, &body, &ext);
            sw_detect_destroy(det);
            int64_t x;
            sw_detect_image_t img = {.body = body.data,
                                     .body_len = body.len,
                                     .ext = ext.data,
                                     .ext_len = ext.len,
                                     .expect = (int64_t[2]){(int64_t)i, 0}};
            det = sw_detect_load(p, &img, 0, NULL, err, sizeof(err));
            SW_ASSERT(det != NULL, "restore of the body and extension at line %zu: %s", i, err);
            sw_detect_snapshot(det, (int64_t)i, &again);
            SW_ASSERT(again.len == snap.len && !memcmp(again.data, snap.data, snap.len),
                      "line %zu: body and extension restore another engine", i);
            sw_detect_destroy(det);
            det = sw_detect_restore(p, snap.data, snap.len, 0, &x, err, sizeof(err));
            SW_ASSERT(det != NULL, "restore at line %zu: %s", i, err);
            SW_ASSERT_I64(x, (int64_t)i);
            sw_buf_clear(&snap);
            sw_buf_clear(&body);
            sw_buf_clear(&ext);
            sw_buf_clear(&again);
            for (size_t k = (size_t)y; k < i; k++) {
                sw_event_t ev;
                SW_ASSERT(sw_tdec_json(dec, ls->v[k], strlen(ls->v[k]), &ev, err, sizeof(err)) ==
                              SW_OK,
                          "%s", err);
                sw_detect_rebuild(det, &ev, (int64_t)k);
            }
            sw_detect_rebuild_done(det);
        }
        feed_line(det, dec, ls->v[i], strlen(ls->v[i]), i, l, true);
    }
    sw_detect_finish(det, on_summary, l);
    sw_tdec_destroy(dec);
    sw_detect_destroy(det);
}

static void test_restore_inside(void **state)
{
    (void)state;
    sw_check_reset();
    size_t points = 0;
    static const sw_genx_scenario_t sc[] = {SW_GENX_CASCADE, SW_GENX_SILENT_FIRST, SW_GENX_OUTAGE,
                                            SW_GENX_CASCADE};
    for (size_t s = 0; s < 4; s++) {
        sw_genx_opts_t o;
        sw_genx_opts_default(&o);
        o.scenario = sc[s];
        o.ranks = s == 3 ? 16 : 8; /* the last: a cascade with a revision */
        o.seed = s == 3 ? 1 : 11 + s;
        o.interval_ms = s == 3 ? 250 : 500;
        o.watchdog_s = 60;
        char errstr[256];
        sw_genx_t *g = sw_genx_new(&o, errstr, sizeof(errstr));
        SW_ASSERT(g != NULL, "%s", errstr);
        lines_t ls = {0};
        sw_buf_t buf;
        sw_buf_init(&buf);
        while (sw_genx_next(g, &buf)) {
            lines_push(&ls, buf.data, buf.len - 1);
            buf.len = 0;
        }
        sw_buf_clear(&buf);
        sw_genx_destroy(g);
        sw_params_t p = sw_params_default();
        p.window_samples = s == 3 ? 100 : 64;
        runlog_t whole = {0};
        run_restored(&ls, p, SIZE_MAX, &whole);
        /* Cut points: just after each SPEC 8 record (inside a warning, a
         * crash, between a crash and its revision), just before each, and
         * a few spread over the input. */
        size_t cuts[64], nc = 0;
        for (size_t i = 0; i < whole.n && nc < 56; i++) {
            if (whole.v[i].line == AT_SUMMARY) continue; /* no line made it */
            cuts[nc++] = whole.v[i].line + 1;
            if (whole.v[i].line > 0) cuts[nc++] = whole.v[i].line;
        }
        for (size_t k = 1; k <= 6; k++) cuts[nc++] = ls.n * k / 7;
        for (size_t c = 0; c < nc; c++) {
            sw_check_case("%s cut at line %zu", sw_genx_scenario_str(sc[s]), cuts[c]);
            runlog_t got = {0};
            run_restored(&ls, p, cuts[c], &got);
            SW_CHECK(got.n == whole.n, "%zu SPEC 8 records after a restore, %zu without", got.n,
                     whole.n);
            for (size_t i = 0; i < got.n && i < whole.n; i++)
                SW_CHECK(memcmp(&got.v[i], &whole.v[i], sizeof(xrec_t)) == 0,
                         "SPEC 8 record %zu differs after a restore (line %zu vs %zu)", i,
                         got.v[i].line, whole.v[i].line);
            compare_six(&whole, &got, "restore");
            points++;
            log_clear(&got);
        }
        SW_ASSERT_TRUE(s == 2 || whole.n >= 2);
        /* a warning, a crash, the warning's close, the crash's revision, its close */
        if (s == 3) SW_ASSERT_I64(whole.n, 5);
        log_clear(&whole);
        lines_free(&ls);
    }
    printf("restore inside crashes and warnings: %zu snapshot points, records equal\n", points);
    SW_CHECK_END();
}

/* ---- bad input, blind ranks ------------------------------------------------------- */

typedef struct hand_s {
    sw_detector_t *det;
    sw_tdec_t *dec;
    runlog_t l;
    size_t line;
    sw_record_t last; /* the last SPEC 8 record (borrowed views: use at once) */
    char reason_tail[8];
    size_t reason_len;
} hand_t;

static void hand_line(hand_t *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void hand_line(hand_t *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    SW_ASSERT_TRUE(vasprintf(&text, fmt, ap) >= 0);
    va_end(ap);
    sw_event_t ev;
    char err[512];
    SW_ASSERT(sw_tdec_json(h->dec, text, strlen(text), &ev, err, sizeof(err)) == SW_OK, "%s: %s",
              text, err);
    const sw_record_t *rec;
    SW_ASSERT_I64(sw_detect_feed(h->det, &ev, 0, &rec, err, sizeof(err)), SW_OK);
    if (rec) log_six(&h->l, rec);
    for (const sw_record_t *x = sw_detect_next(h->det); x; x = sw_detect_next(h->det)) {
        log_x8(&h->l, x, h->line);
        if (x->action == SW_ACTION_CRASH && x->x8->first.has_oom_reason) {
            sw_str_t r = x->x8->first.oom_reason;
            h->reason_len = r.len;
            memcpy(h->reason_tail, r.ptr + (r.len >= 3 ? r.len - 3 : 0), r.len >= 3 ? 3 : r.len);
        }
    }
    h->line++;
    free(text);
}

static void sample(hand_t *h, const char *job, int rank, int ws, double t_s, double used_frac,
                   bool cap, double total_frac)
{
    const int64_t total = (int64_t)80 << 30;
    if (cap)
        hand_line(h,
                  "{\"timestamp_ns\": %lld, \"event_type\": \"sample\", \"rank\": %d, "
                  "\"world_size\": %d, \"job_id\": \"%s\", \"pid\": %d, \"host\": \"h%d\", "
                  "\"sampling_interval_ms\": 500, \"device_used_bytes\": %lld, "
                  "\"device_total_bytes\": %lld}",
                  (long long)(t_s * 1e9), rank, ws, job, 100 + rank, rank,
                  (long long)(used_frac * (double)total), (long long)(total_frac * (double)total));
    else
        hand_line(h,
                  "{\"timestamp_ns\": %lld, \"event_type\": \"sample\", \"rank\": %d, "
                  "\"world_size\": %d, \"job_id\": \"%s\", \"pid\": %d, \"host\": \"h%d\", "
                  "\"sampling_interval_ms\": 500, \"device_used_bytes\": %lld}",
                  (long long)(t_s * 1e9), rank, ws, job, 100 + rank, rank,
                  (long long)(used_frac * (double)total));
}

static void test_bad_input(void **state)
{
    (void)state;
    hand_t h;
    memset(&h, 0, sizeof(h));
    h.det = sw_detect_new(sw_params_default());
    h.dec = sw_tdec_new();
    char err[512];
    sw_event_t ev;
    /* A death marker for a rank >= world_size is invalid (SPEC 2). */
    const char *bad =
        "{\"timestamp_ns\": 5, \"event_type\": \"oom\", \"rank\": 8, "
        "\"world_size\": 8, \"job_id\": \"j\"}";
    SW_ASSERT_I64(sw_tdec_json(h.dec, bad, strlen(bad), &ev, err, sizeof(err)), SW_ERR_INVALID_ARG);
    SW_ASSERT_CONTAINS(err, "rank");
    /* A marker of a job never seen opens its crash at once (offset 0), with
     * a 1 MB oom_reason cut to 1 KiB and "…". */
    size_t big = 1 << 20;
    char *reason = malloc(big + 1);
    for (size_t i = 0; i < big; i++) reason[i] = (char)('a' + i % 26);
    reason[big] = '\0';
    hand_line(&h,
              "{\"timestamp_ns\": 7000000000, \"event_type\": \"Error\", \"rank\": 3, "
              "\"world_size\": 4, \"job_id\": \"new\", \"pid\": 9, \"host\": \"x\", "
              "\"metadata\": {\"step\": [1, {\"a\": \"}\"}], \"oom_reason\": \"%s\"}}",
              reason);
    free(reason);
    SW_ASSERT_I64(h.l.n, 1);
    SW_ASSERT_I64(h.l.v[0].action, SW_ACTION_CRASH);
    SW_ASSERT_I64(h.l.v[0].first_rank, 3);
    SW_ASSERT_I64(h.reason_len, 1024 + 3);
    SW_ASSERT_MEMEQ(h.reason_tail, "\xe2\x80\xa6", 3);
    /* A watchdog error (error without OOM signs) is no death. */
    hand_line(&h,
              "{\"timestamp_ns\": 7100000000, \"event_type\": \"error\", \"rank\": 1, "
              "\"world_size\": 4, \"job_id\": \"new\", \"context\": \"[Rank 1] Watchdog caught "
              "collective operation timeout\"}");
    SW_ASSERT_I64(h.l.n, 1);
    /* PyTorch's message in context is a death marker. */
    hand_line(&h,
              "{\"timestamp_ns\": 6000000000, \"event_type\": \"CRITICAL\", \"rank\": 2, "
              "\"world_size\": 4, \"job_id\": \"new\", \"context\": \"torch.OutOfMemoryError: "
              "CUDA Out Of Memory. Tried to allocate\"}");
    SW_ASSERT_I64(h.l.n, 2);
    SW_ASSERT_I64(h.l.v[1].first_rank, 2); /* earlier: a revision */
    SW_ASSERT_I64(h.l.v[1].revision, 1);

    /* device_total_bytes below device_used_bytes: a full device, warned
     * after 5 s of it (its projection is 0 ms), never a negative headroom. */
    for (int i = 0; i < 30; i++) {
        sample(&h, "full", 0, 2, 100 + i * 0.5, 0.5, true, 1.0);
        sample(&h, "full", 1, 2, 100 + i * 0.5, 0.9, true, 0.85);
    }
    bool full_warned = false;
    for (size_t i = 0; i < h.l.n; i++)
        if (h.l.v[i].action == SW_ACTION_WARNING && h.l.v[i].nw && h.l.v[i].wranks[0] == 1)
            full_warned = true;
    SW_ASSERT_TRUE(full_warned);
    /* No capacity: a rank filling to the brim is never warned about. */
    size_t before = h.l.n;
    for (int i = 0; i < 400; i++) {
        sample(&h, "nocap", 0, 2, 100 + i * 0.5, 0.5, false, 0);
        sample(&h, "nocap", 1, 2, 100 + i * 0.5, 0.7 + 0.3 * i / 400.0, false, 0);
    }
    SW_ASSERT_I64(h.l.n, before);

    /* Blind ranks: a degraded collector, and a silent rank; a stop is
     * neither dead nor blind. */
    for (int i = 0; i < 60; i++) {
        double t = 200 + i * 0.5;
        for (int r = 0; r < 4; r++) {
            if (r == 2 && t > 205) continue; /* silent from 205 s */
            if (r == 0 && t > 203) continue; /* stopped at 203 s */
            sample(&h, "blind", r, 4, t, 0.5, false, 0);
        }
        if (i == 2)
            hand_line(&h,
                      "{\"timestamp_ns\": %lld, \"event_type\": \"collector_degraded\", "
                      "\"rank\": 3, \"world_size\": 4, \"job_id\": \"blind\"}",
                      (long long)(t * 1e9));
        if (i == 6)
            hand_line(&h,
                      "{\"timestamp_ns\": %lld, \"event_type\": \"stop\", \"rank\": 0, "
                      "\"world_size\": 4, \"job_id\": \"blind\"}",
                      (long long)(203.2 * 1e9));
    }
    /* Rank 2 went silent at 205 s and the job reached 229.5 s: not yet. */
    before = h.l.n;
    for (int i = 60; i < 80; i++) {
        double t = 200 + i * 0.5;
        sample(&h, "blind", 1, 4, t, 0.5, false, 0);
        sample(&h, "blind", 3, 4, t, 0.5, false, 0);
    }
    SW_ASSERT_I64(h.l.n, before + 1);
    xrec_t *x = &h.l.v[h.l.n - 1];
    SW_ASSERT_I64(x->action, SW_ACTION_CRASH);
    SW_ASSERT_I64(x->first_rank, 2);
    SW_ASSERT_I64(x->n_blind, 2); /* 2 (silent) and 3 (degraded); not 0 (stopped) */
    SW_ASSERT_I64(x->blind0, 2);
    /* Rank 2 reports again: alive, the crash is over, a later silence is a
     * new crash. */
    sample(&h, "blind", 2, 4, 240.0, 0.5, false, 0);
    sw_detect_stats_t st;
    sw_detect_stats(h.det, &st);
    SW_ASSERT_I64(st.blind_ranks, 1); /* rank 3 still degraded */
    hand_line(&h,
              "{\"timestamp_ns\": %lld, \"event_type\": \"collector_recovered\", \"rank\": 3, "
              "\"world_size\": 4, \"job_id\": \"blind\"}",
              (long long)(240.1 * 1e9));
    sw_detect_stats(h.det, &st);
    SW_ASSERT_I64(st.blind_ranks, 0);
    SW_ASSERT_TRUE(st.watchdog >= 1);
    log_clear(&h.l);
    sw_tdec_destroy(h.dec);
    sw_detect_destroy(h.det);
}

/* @p n oom markers, the i-th of rank 0 of job "flood-i" (of one rank) or,
 * @p wide, of rank i of job "wide" (of 131072): decoded, fed, their
 * records dropped. */
static void feed_markers(sw_detector_t *det, sw_tdec_t *dec, int n, bool wide)
{
    char line[512], err[256];
    for (int i = 0; i < n; i++) {
        int len = wide ? snprintf(line, sizeof(line),
                                  "{\"timestamp_ns\": %d, \"event_type\": \"oom\", \"rank\": %d, "
                                  "\"world_size\": 131072, \"job_id\": \"wide\"}",
                                  i, i)
                       : snprintf(line, sizeof(line),
                                  "{\"timestamp_ns\": %d, \"event_type\": \"oom\", \"rank\": 0, "
                                  "\"world_size\": 1, \"job_id\": \"flood-%d\"}",
                                  i, i);
        sw_event_t ev;
        SW_ASSERT_I64(sw_tdec_json(dec, line, (size_t)len, &ev, err, sizeof(err)), SW_OK);
        const sw_record_t *rec;
        SW_ASSERT_I64(sw_detect_feed(det, &ev, 0, &rec, err, sizeof(err)), SW_OK);
        while (sw_detect_next(det)) {
        }
    }
}

static void test_marker_flood(void **state)
{
    (void)state;
    /* Markers of 200,000 made-up jobs under max.jobs 1000, and of 100,000
     * ranks of one job: bounded state, no refusal. */
    sw_params_t p = sw_params_default();
    p.max_jobs = 1000;
    sw_detector_t *det = sw_detect_new(p);
    sw_tdec_t *dec = sw_tdec_new();
    const int jobs_n = SANITIZED ? 50000 : 200000, ranks_n = SANITIZED ? 25000 : 100000;
    feed_markers(det, dec, jobs_n, false);
    sw_detect_stats_t st;
    sw_detect_stats(det, &st);
    printf("%d marker jobs under max.jobs=1000: %llu jobs kept, %llu evicted, %llu bytes\n", jobs_n,
           (unsigned long long)st.jobs, (unsigned long long)st.evicted,
           (unsigned long long)st.bytes);
    SW_ASSERT_TRUE(st.jobs <= 1000);
    SW_ASSERT_I64(st.limit_rejects, 0);
    SW_ASSERT_TRUE(st.bytes < (uint64_t)64 << 20);
    feed_markers(det, dec, ranks_n, true);
    sw_detect_stats_t st2;
    sw_detect_stats(det, &st2);
    printf("%d markers of one job: %llu bytes more (%.0f per rank)\n", ranks_n,
           (unsigned long long)(st2.bytes - st.bytes), (double)(st2.bytes - st.bytes) / ranks_n);
    SW_ASSERT_TRUE(st2.bytes - st.bytes < (uint64_t)ranks_n * 256);
    SW_ASSERT_I64(st2.deaths, jobs_n + ranks_n);
    sw_tdec_destroy(dec);
    sw_detect_destroy(det);
}

/* Every SPEC 8 record (and SPEC 6 record with blind ranks) of a few
 * generated failures: JSON -> parse -> JSON, and Avro -> JSON, give the
 * JSON format's bytes; the pager bodies name the kind. */
static void test_codecs(void **state)
{
    (void)state;
    size_t n = 0, blind6 = 0, extras = 0, older = 0, closes = 0, revs = 0;
    char bin[1024];
    snprintf(bin, sizeof(bin), "%s/test_crash_codecs_%d.bin", sw_test_tmp(), (int)getpid());
    FILE *bf = fopen(bin, "wb");
    SW_ASSERT_NOT_NULL(bf);
    static const sw_genx_scenario_t sc[] = {SW_GENX_CASCADE, SW_GENX_SILENT_FIRST, SW_GENX_OUTAGE};
    for (size_t s = 0; s < 3; s++) {
        sw_genx_opts_t o;
        sw_genx_opts_default(&o);
        o.scenario = sc[s];
        o.ranks = 16;
        o.seed = 5 + s;
        o.watchdog_s = 60;
        char errstr[512];
        sw_genx_t *g = sw_genx_new(&o, errstr, sizeof(errstr));
        SW_ASSERT(g != NULL, "%s", errstr);
        sw_detector_t *det = sw_detect_new(sw_params_default());
        sw_tdec_t *dec = sw_tdec_new();
        sw_buf_t line, json, avro, back, pager;
        sw_buf_init(&line);
        sw_buf_init(&json);
        sw_buf_init(&avro);
        sw_buf_init(&back);
        sw_buf_init(&pager);
        sw_arena_t arena;
        sw_arena_init(&arena);
        while (sw_genx_next(g, &line)) {
            sw_event_t ev;
            SW_ASSERT_I64(sw_tdec_json(dec, line.data, line.len - 1, &ev, errstr, sizeof(errstr)),
                          SW_OK);
            const sw_record_t *r6;
            SW_ASSERT_I64(sw_detect_feed(det, &ev, 0, &r6, errstr, sizeof(errstr)), SW_OK);
            const sw_record_t *x = r6;
            if (!x || !x->n_blind) x = sw_detect_next(det);
            for (; x; x = sw_detect_next(det)) {
                if (!sw_action_is_x8(x->action)) blind6++;
                json.len = avro.len = back.len = 0;
                /* Avro carries every key of the JSON record, SPEC 8's
                 * extras (previous_first_death, deaths_total, closed_by,
                 * closed_by_crash) included. */
                sw_alert_json_record(&json, x);
                if (x->x8 && (x->x8->has_previous || (!x->x8->open && x->x8->end))) extras++;
                if (x->x8 && x->x8->has_previous) revs++;
                if (x->x8 && !x->x8->open && x->x8->end) closes++;
                SW_ASSERT_I64(sw_avro_encode_record(x, 2, &avro, errstr, sizeof(errstr)), SW_OK);
                if (x->x8) {
                    /* For python3-avro below: a 4-byte length, the message. */
                    unsigned char len4[4] = {
                        (unsigned char)(avro.len >> 24), (unsigned char)(avro.len >> 16),
                        (unsigned char)(avro.len >> 8), (unsigned char)avro.len};
                    SW_ASSERT_TRUE(fwrite(len4, 1, 4, bf) == 4 &&
                                   fwrite(avro.data, 1, avro.len, bf) == avro.len);
                }
                SW_ASSERT(sw_avro_decode_record_json(avro.data, avro.len, 2, &back, errstr,
                                                     sizeof(errstr)) == SW_OK,
                          "%s", errstr);
                SW_ASSERT(back.len == json.len && memcmp(back.data, json.data, json.len) == 0,
                          "Avro round trip:\n%.*s\n%.*s", (int)back.len, back.data, (int)json.len,
                          json.data);
                if (x->x8) {
                    /* A record written before 0.4.0's keys (same schema
                     * id, no registry) ends after closed_warning: it reads
                     * as the record without them. */
                    sw_record_t lean = *x;
                    sw_x8_t lean8 = *x->x8;
                    lean8.has_previous = false;
                    lean8.deaths_total = 0;
                    lean8.end = SW_X8_END_NONE;
                    lean8.closed_by_crash = 0;
                    lean.x8 = &lean8;
                    json.len = avro.len = back.len = 0;
                    sw_alert_json_record(&json, &lean);
                    SW_ASSERT_I64(sw_avro_encode_record(&lean, 2, &avro, errstr, sizeof(errstr)),
                                  SW_OK);
                    SW_ASSERT_TRUE(avro.len > 4 &&
                                   memcmp(avro.data + avro.len - 4, "\0\0\0\0", 4) == 0);
                    SW_ASSERT(sw_avro_decode_record_json(avro.data, avro.len - 4, 2, &back, errstr,
                                                         sizeof(errstr)) == SW_OK,
                              "%s", errstr);
                    SW_ASSERT(back.len == json.len && memcmp(back.data, json.data, json.len) == 0,
                              "older Avro:\n%.*s\n%.*s", (int)back.len, back.data, (int)json.len,
                              json.data);
                    older++;
                }
                json.len = 0;
                sw_alert_json_record(&json, x);
                sw_record_t parsed;
                sw_arena_reset(&arena);
                SW_ASSERT(sw_record_parse_json(json.data, json.len, &arena, &parsed, errstr,
                                               sizeof(errstr)) == SW_OK,
                          "%s", errstr);
                back.len = 0;
                sw_alert_json_record(&back, &parsed);
                SW_ASSERT(back.len == json.len && memcmp(back.data, json.data, json.len) == 0,
                          "JSON round trip:\n%.*s\n%.*s", (int)back.len, back.data, (int)json.len,
                          json.data);
                if (sw_action_is_x8(x->action)) {
                    sw_pager_opts_t po;
                    memset(&po, 0, sizeof(po));
                    po.format = SW_PAGER_ALERTMANAGER;
                    pager.len = 0;
                    SW_ASSERT_I64(sw_pager_encode(x, &po, &pager),
                                  x->x8->open ? SW_PAGER_TRIGGER : SW_PAGER_RESOLVE);
                    SW_ASSERT_CONTAINS(sw_buf_cstr(&pager),
                                       x->action == SW_ACTION_CRASH
                                           ? "\"alertname\": \"GPURankCrash\""
                                           : "\"alertname\": \"GPUMemoryNearlyFull\"");
                    SW_ASSERT_CONTAINS(sw_buf_cstr(&pager), x->action == SW_ACTION_CRASH
                                                                ? "\"severity\": \"critical\""
                                                                : "\"severity\": \"warning\"");
                    po.format = SW_PAGER_PAGERDUTY;
                    pager.len = 0;
                    sw_pager_encode(x, &po, &pager);
                    SW_ASSERT_CONTAINS(sw_buf_cstr(&pager), x->action == SW_ACTION_CRASH
                                                                ? "/crash/1\""
                                                                : "/warning/1\"");
                }
                n++;
            }
            line.len = 0;
        }
        sw_arena_clear(&arena);
        sw_buf_clear(&line);
        sw_buf_clear(&json);
        sw_buf_clear(&avro);
        sw_buf_clear(&back);
        sw_buf_clear(&pager);
        sw_tdec_destroy(dec);
        sw_detect_destroy(det);
        sw_genx_destroy(g);
    }
    printf(
        "codecs: %zu records (%zu SPEC 6 ones with blind ranks, %zu revisions or closes) "
        "equal through Avro and JSON; %zu read as written before 0.4.0\n",
        n, blind6, extras, older);
    SW_ASSERT_TRUE(n >= 5);
    SW_ASSERT_TRUE(extras >= 2);
    SW_ASSERT_TRUE(older >= 2);
    fclose(bf);
    /* An independent reader (python3-avro) reads every SPEC 8 record with
     * schemas/first_cause_alert.avsc, the 0.4.0 keys included. */
    char cmd[4096];
    snprintf(cmd, sizeof(cmd),
             "/usr/bin/python3 '%s/../registry/alert_decode.py' "
             "'%s/../../schemas/first_cause_alert.avsc' '%s'",
             sw_test_fixtures(), sw_test_fixtures(), bin);
    FILE *py = popen(cmd, "r");
    SW_ASSERT_NOT_NULL(py);
    char *pl = NULL;
    size_t cap = 0, lines = 0, py_closes = 0, py_revs = 0;
    while (getline(&pl, &cap, py) > 0) {
        lines++;
        if (strstr(pl, "\"closed_by\": \"")) py_closes++;
        if (strstr(pl, "\"previous_first_death\": {")) py_revs++;
    }
    free(pl);
    SW_ASSERT_I64(pclose(py), 0);
    printf("python3-avro: %zu SPEC 8 records, %zu closes (want %zu), %zu revisions (want %zu)\n",
           lines, py_closes, closes, py_revs, revs);
    SW_ASSERT_I64((int64_t)py_closes, (int64_t)closes);
    SW_ASSERT_I64((int64_t)py_revs, (int64_t)revs);
    SW_ASSERT_TRUE(lines > 0 && closes > 0);
    if (!getenv("SW_KEEP")) remove(bin);
}

int main(void)
{
    /* SW_TEST_ONLY=CASE: that case only (cmocka's filter): CTest runs each
     * case as a test of its own, so that ctest -j spreads them. */
    const char *only = getenv("SW_TEST_ONLY");
    if (only) cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codecs),         cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_marker_flood),   cmocka_unit_test(test_spec6_unchanged),
        cmocka_unit_test(test_restore_inside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
