/*
 * The incident report (sw_report.h, `stormwatch report`): pages rendered
 * from the records `stormwatch replay` writes for every fixture and from
 * hand-written records (timelines, no timelines, oversized timelines,
 * hostile strings) are well-formed (every tag it opens is closed, every '&'
 * starts an entity, no script), escape what came from the input, draw one
 * chart per episode with at most SW_REPORT_MAX_POINTS points per series,
 * and say which record each chart comes from. Plus the human units, the
 * messages for invalid records and the command's exit codes.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "sw_alloc.h"
#include "sw_report.h"
#include "sw_testlib.h"

static int g_failed_tests; /* keeps the scratch dir for a look after a failure */

static void end_test(void)
{
    int n = sw_check_failures();
    sw_check_reset();
    if (n) g_failed_tests++;
    if (n) SW_FAIL("%d check(s) failed (see above)", n);
}

static char g_tmp[1024];

static const char *tmpdir(void)
{
    if (!g_tmp[0]) {
        snprintf(g_tmp, sizeof(g_tmp), "%s/test_report_%d", sw_test_tmp(), (int)getpid());
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", g_tmp);
        SW_ASSERT_I64(system(cmd), 0);
    }
    return g_tmp;
}

/* ------------------------------------------------------------------ */
/* HTML checks                                                         */
/* ------------------------------------------------------------------ */

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0, k = strlen(needle);
    for (const char *p = strstr(hay, needle); p; p = strstr(p + k, needle)) n++;
    return n;
}

static bool is_void(const char *name, size_t len)
{
    static const char *const v[] = {"meta", "br", "hr", "img", "link", "input", "col", "wbr"};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        if (strlen(v[i]) == len && !strncmp(v[i], name, len)) return true;
    return false;
}

/* Every element the page opens is closed in order, every '<' starts a
 * tag, every '&' an entity, and the page has no script. @returns NULL or
 * a description of the first problem (static text plus position). */
static bool well_formed(const char *html, char *why, size_t why_size)
{
    const char *stack[256];
    size_t lens[256];
    size_t depth = 0;
    const char *p = html;
    if (strncmp(p, "<!DOCTYPE html>", 15) != 0) {
        snprintf(why, why_size, "no doctype");
        return false;
    }
    while (*p) {
        if (*p == '&') {
            const char *q = p + 1;
            if (*q == '#') q++;
            const char *s = q;
            while ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || (*q >= 'A' && *q <= 'Z'))
                q++;
            if (q == s || *q != ';') {
                snprintf(why, why_size, "bare '&' at offset %zu: %.30s", (size_t)(p - html), p);
                return false;
            }
            p = q + 1;
            continue;
        }
        if (*p != '<') {
            if (*p == '>') {
                snprintf(why, why_size, "bare '>' at offset %zu: %.30s", (size_t)(p - html), p);
                return false;
            }
            p++;
            continue;
        }
        if (!strncmp(p, "<!--", 4)) {
            const char *e = strstr(p, "-->");
            if (!e) return snprintf(why, why_size, "open comment"), false;
            p = e + 3;
            continue;
        }
        if (p[1] == '!') {
            p = strchr(p, '>');
            if (!p) return snprintf(why, why_size, "open declaration"), false;
            p++;
            continue;
        }
        bool closing = p[1] == '/';
        const char *name = p + (closing ? 2 : 1);
        size_t len = 0;
        while ((name[len] >= 'a' && name[len] <= 'z') || (name[len] >= 'A' && name[len] <= 'Z') ||
               (name[len] >= '0' && name[len] <= '9'))
            len++;
        if (len == 0) {
            snprintf(why, why_size, "'<' that starts no tag at offset %zu: %.30s",
                     (size_t)(p - html), p);
            return false;
        }
        if (len == 6 && !strncasecmp(name, "script", 6)) {
            snprintf(why, why_size, "a script element at offset %zu", (size_t)(p - html));
            return false;
        }
        /* to the end of the tag, over quoted attribute values */
        const char *q = name + len;
        char quote = 0;
        while (*q && (quote || *q != '>')) {
            if (quote && *q == quote) quote = 0;
            else if (!quote && (*q == '"' || *q == '\'')) quote = *q;
            else if (!quote && *q == '<') {
                snprintf(why, why_size, "'<' inside a tag at offset %zu", (size_t)(q - html));
                return false;
            }
            q++;
        }
        if (!*q) return snprintf(why, why_size, "unterminated tag %.*s", (int)len, name), false;
        bool self = q[-1] == '/';
        if (closing) {
            if (depth == 0 || lens[depth - 1] != len || strncmp(stack[depth - 1], name, len)) {
                snprintf(why, why_size, "</%.*s> at offset %zu closes <%.*s>", (int)len, name,
                         (size_t)(p - html), depth ? (int)lens[depth - 1] : 0,
                         depth ? stack[depth - 1] : "");
                return false;
            }
            depth--;
        } else if (!self && !is_void(name, len)) {
            if (depth == 256) return snprintf(why, why_size, "nesting too deep"), false;
            stack[depth] = name;
            lens[depth++] = len;
        }
        p = q + 1;
    }
    if (depth) {
        snprintf(why, why_size, "<%.*s> never closed", (int)lens[depth - 1], stack[depth - 1]);
        return false;
    }
    return true;
}

/* Each series path: data-points equals the points of its d, which are at
 * most SW_REPORT_MAX_POINTS. @returns the number of series, -1 on error. */
static int check_series(const char *html, char *why, size_t why_size)
{
    int n = 0;
    for (const char *p = strstr(html, "<path class=\"series\""); p;
         p = strstr(p + 1, "<path class=\"series\"")) {
        const char *dp = strstr(p, "data-points=\"");
        const char *d = strstr(p, " d=\"");
        const char *end = strchr(p, '>');
        if (!dp || !d || dp > end || d > end) {
            snprintf(why, why_size, "series without data-points or d");
            return -1;
        }
        long declared = strtol(dp + 13, NULL, 10);
        long points = 0;
        for (const char *c = d + 4; *c && *c != '"'; c++)
            if (*c == 'M' || *c == 'L') points++;
        if (points != declared || points > SW_REPORT_MAX_POINTS || points < 1) {
            snprintf(why, why_size, "series with %ld points (data-points %ld, at most %d)", points,
                     declared, SW_REPORT_MAX_POINTS);
            return -1;
        }
        n++;
    }
    return n;
}

/* Colours: in each chart, the first cause's series (suspect 0, the first
 * legend swatch) is drawn in a severity colour and every other series in
 * the neutral follower grey. @returns the charts checked, -1 on error. */
static int check_colours(const char *html, char *why, size_t why_size)
{
    /* the four severities; the text colour for a record without a known one */
    static const char *const sev[] = {"#c62828", "#ef6c00", "#b58900", "#1565c0", "#1d1d1f"};
    int charts = 0;
    for (const char *svg = strstr(html, "<svg"); svg; svg = strstr(svg + 1, "<svg")) {
        const char *end = strstr(svg, "</svg>");
        if (!end) break;
        const char *sw = strstr(svg, "<line class=\"swatch\"");
        if (!sw || sw > end) continue;
        int k = 0;
        for (const char *p = sw; p && p < end; p = strstr(p + 1, "<line class=\"swatch\""), k++) {
            const char *st = strstr(p, "stroke=\"");
            if (!st || st > end) break;
            char col[8];
            snprintf(col, sizeof(col), "%.7s", st + 8);
            bool is_sev = false;
            for (size_t i = 0; i < 5; i++) is_sev |= strcmp(col, sev[i]) == 0;
            if (k == 0 ? !is_sev : strcmp(col, "#8a94a3") != 0) {
                snprintf(why, why_size, "chart %d, legend entry %d: stroke %s, expected %s", charts,
                         k, col, k == 0 ? "a severity colour" : "the follower grey #8a94a3");
                return -1;
            }
        }
        /* the series paths use only the swatches' colours */
        for (const char *p = strstr(svg, "<path class=\"series\""); p && p < end;
             p = strstr(p + 1, "<path class=\"series\"")) {
            const char *st = strstr(p, "stroke=\"");
            bool ok = st && st < end && strncmp(st + 8, "#8a94a3", 7) == 0;
            for (size_t i = 0; i < 5 && !ok; i++) ok = st && strncmp(st + 8, sev[i], 7) == 0;
            if (!ok) {
                snprintf(why, why_size, "chart %d: a series in neither colour", charts);
                return -1;
            }
        }
        charts++;
    }
    return charts;
}

/* Distinct (job_id, episode) of trigger/update records in JSON lines. */
static size_t chartable_episodes(const char *text, size_t len)
{
    char why[256];
    json_t *arr = sw_test_parse_lines(text, len, why, sizeof(why));
    if (!arr) return (size_t)-1;
    json_t *seen = json_object();
    size_t i;
    json_t *rec;
    json_array_foreach(arr, i, rec)
    {
        const char *act = json_string_value(json_object_get(rec, "action"));
        if (!act || (strcmp(act, "trigger") && strcmp(act, "update"))) continue;
        json_t *jid = json_object_get(rec, "job_id");
        char key[600];
        snprintf(key, sizeof(key), "%s/%lld", json_is_null(jid) ? "(null)" : json_string_value(jid),
                 (long long)json_integer_value(json_object_get(rec, "episode")));
        json_object_set_new(seen, key, json_true());
    }
    size_t n = json_object_size(seen);
    json_decref(seen);
    json_decref(arr);
    return n;
}

/* Render JSON lines in process. @returns the number of rejected lines. */
static int render_lines(const char *text, size_t len, sw_buf_t *html, char *err, size_t err_size)
{
    sw_report_t *rep = sw_report_new();
    int bad = 0;
    uint64_t lineno = 0;
    const char *p = text, *end = text + len;
    err[0] = '\0';
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        char e[512];
        if (sw_report_add(rep, p, n, "records.jsonl", lineno, e, sizeof(e)) != SW_OK) {
            if (!bad) snprintf(err, err_size, "%s", e);
            bad++;
        }
        p += n + 1;
    }
    html->len = 0;
    const char *src[] = {"records.jsonl"};
    sw_report_opts_t o = {NULL, src, 1, (uint64_t)bad, false};
    sw_report_render(rep, &o, html);
    sw_buf_cstr(html);
    sw_report_destroy(rep);
    return bad;
}

/* The common checks of one page. */
static void check_page(const char *name, const char *html, size_t want_charts)
{
    char why[512];
    sw_check_case("%s", name);
    SW_CHECK(well_formed(html, why, sizeof(why)), "%s", why);
    SW_CHECK(count(html, "<svg") == want_charts, "%zu charts, expected %zu (one per episode)",
             count(html, "<svg"), want_charts);
    SW_CHECK(count(html, "</svg>") == want_charts, "unbalanced svg");
    SW_CHECK(count(html, "role=\"img\"") == want_charts &&
                 count(html, "aria-label=\"") == want_charts,
             "every chart has role=img and an aria-label");
    SW_CHECK(count(html, "class=\"onset\" x1") >= want_charts, "every chart marks the onset");
    int series = check_series(html, why, sizeof(why));
    SW_CHECK(series >= 0, "%s", why);
    int coloured = check_colours(html, why, sizeof(why));
    SW_CHECK(coloured >= 0, "%s", why);
    SW_CHECK(want_charts == 0 || coloured > 0, "no chart with a legend of suspects");
    SW_CHECK(!strstr(html, "http://") ||
                 count(html, "http://") == count(html, "http://www.w3.org/2000/svg"),
             "nothing but the SVG namespace names a URL");
    SW_CHECK(!strstr(html, "https://") && !strstr(html, " src=\"") && !strstr(html, "<link"),
             "the page loads nothing");
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

/* Every fixture through `stormwatch replay` with its parameters, then the
 * report of the records, in process and through the command. */
static void test_fixtures(void **state)
{
    (void)state;
    DIR *dir = opendir(sw_test_fixtures());
    SW_ASSERT_NOT_NULL(dir);
    struct dirent *de;
    sw_buf_t recs, html, cmd, params, file_html;
    sw_buf_init(&recs);
    sw_buf_init(&html);
    sw_buf_init(&cmd);
    sw_buf_init(&params);
    sw_buf_init(&file_html);
    int cases = 0, charts = 0, with_timeline = 0;
    while ((de = readdir(dir)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n < 7 || strcmp(de->d_name + n - 6, ".jsonl") || strstr(de->d_name, ".stream."))
            continue;
        char base[512];
        snprintf(base, sizeof(base), "%.*s", (int)(n - 6), de->d_name);
        sw_check_case("%s", base);
        char path[1200];
        snprintf(path, sizeof(path), "%s/%s.params.json", sw_test_fixtures(), base);
        long long window = 512, stale = 60000;
        if (sw_test_read_file(path, &params)) {
            json_t *pj = json_loads(params.data, 0, NULL);
            if (pj) {
                if (json_is_integer(json_object_get(pj, "window.samples")))
                    window = json_integer_value(json_object_get(pj, "window.samples"));
                if (json_is_integer(json_object_get(pj, "stale.ms")))
                    stale = json_integer_value(json_object_get(pj, "stale.ms"));
                json_decref(pj);
            }
        }
        cmd.len = 0;
        sw_buf_printf(&cmd,
                      "'%s' replay --window-samples %lld --stale-ms %lld '%s/%s' 2>/dev/null "
                      ">'%s/%s.alerts.jsonl' && cat '%s/%s.alerts.jsonl'",
                      sw_test_bin(), window, stale, sw_test_fixtures(), de->d_name, tmpdir(), base,
                      tmpdir(), base);
        int rc = sw_test_run(sw_buf_cstr(&cmd), &recs);
        SW_CHECK(rc == 0, "replay exit %d", rc);
        char err[512];
        int bad = render_lines(recs.data, recs.len, &html, err, sizeof(err));
        SW_CHECK(bad == 0, "replay's records rejected: %s", err);
        size_t want = chartable_episodes(recs.data, recs.len);
        check_page(base, html.data, want);
        sw_check_case("%s", base);
        if (strstr(recs.data, "\"timeline\"")) with_timeline++;
        charts += (int)want;
        /* the command gives the same page (the header names the file) */
        cmd.len = 0;
        sw_buf_printf(&cmd, "'%s' report -o '%s/%s.html' '%s/%s.alerts.jsonl' && cat '%s/%s.html'",
                      sw_test_bin(), tmpdir(), base, tmpdir(), base, tmpdir(), base);
        rc = sw_test_run(sw_buf_cstr(&cmd), &file_html);
        SW_CHECK(rc == 0, "report exit %d", rc);
        SW_CHECK(count(file_html.data, "<svg") == want,
                 "the command's page has %zu charts, want %zu", count(file_html.data, "<svg"),
                 want);
        cases++;
    }
    closedir(dir);
    sw_check_case("fixtures");
    SW_CHECK(cases >= 40, "only %d fixtures found in %s", cases, sw_test_fixtures());
    SW_CHECK(charts >= 30, "only %d episodes charted over the fixtures", charts);
    fprintf(stderr, "report: %d fixtures, %d charts, %d with timelines\n", cases, charts,
            with_timeline);
    sw_buf_clear(&recs);
    sw_buf_clear(&html);
    sw_buf_clear(&cmd);
    sw_buf_clear(&params);
    sw_buf_clear(&file_html);
    end_test();
}

/* A generated storm with phases, replayed with a small window so that the
 * episodes resolve: lifecycle, choice of record, gzip input. */
static void test_generated_storm(void **state)
{
    (void)state;
    sw_check_case("gen");
    sw_buf_t out, html;
    sw_buf_init(&out);
    sw_buf_init(&html);
    char cmd[4096];
    snprintf(cmd, sizeof(cmd),
             "'%s' gen --ranks 8 --samples 300 --phases --jobs 2 --storms 2 --seed 5 --quiet "
             "| '%s' replay --window-samples 64 | tee '%s/gen.jsonl' | gzip -c > '%s/gen.jsonl.gz' "
             "&& '%s' report --title 'Storms & <friends>' '%s/gen.jsonl.gz'",
             sw_test_bin(), sw_test_bin(), tmpdir(), tmpdir(), sw_test_bin(), tmpdir());
    int rc = sw_test_run(cmd, &html);
    SW_CHECK(rc == 0, "exit %d", rc);
    char path[1200];
    snprintf(path, sizeof(path), "%s/gen.jsonl", tmpdir());
    SW_ASSERT_TRUE(sw_test_read_file(path, &out));
    size_t want = chartable_episodes(out.data, out.len);
    SW_CHECK(want == 4, "2 jobs x 2 storms give 4 episodes, got %zu", want);
    check_page("gen", html.data, want);
    sw_check_case("gen");
    SW_CHECK(strstr(html.data, "<title>Storms &amp; &lt;friends&gt;</title>"), "title escaped");
    SW_CHECK(count(html.data, "<section class=\"episode") == 4, "4 episode sections");
    SW_CHECK(count(html.data, "<section class=\"summary") == 2, "2 job summaries");
    SW_CHECK(count(html.data, "<table class=\"lifecycle\"") == 4, "a lifecycle per episode");
    SW_CHECK(count(html.data, "<table class=\"suspects\"") >= 4 &&
                 count(html.data, "<table class=\"suspects\"") + count(html.data, "No suspects.") ==
                     6,
             "suspects of 4 episodes and 2 summaries");
    SW_CHECK(strstr(html.data, "The episode resolved (revision"),
             "the resolve is named with its verdict");
    SW_CHECK(strstr(html.data, "left its window") || strstr(html.data, "still showed a spike"),
             "the report says why an episode resolved");
    SW_CHECK(strstr(html.data, "(charted)"), "the charted lifecycle row is marked");
    SW_CHECK(strstr(html.data, " GiB</text>"), "y ticks in GiB");
    SW_CHECK(strstr(html.data, " ms</text>") || strstr(html.data, " s</text>"),
             "x ticks in ms or s");
    SW_CHECK(strstr(html.data, "train / forward") || strstr(html.data, "train / backward"),
             "phases shown");
    SW_CHECK(strstr(html.data, "stormwatch/job-0/episode/1"), "dedup key shown");
    SW_CHECK(count(html.data, "<path class=\"series\"") >= 8, "a series per suspect");
    sw_buf_clear(&out);
    sw_buf_clear(&html);
    end_test();
}

/* One record by hand: a suspect object per entry of @p sus. */
static void record(sw_buf_t *b, const char *action, const char *job_json, int episode, int revision,
                   long long event_ns, long long onset_ns, const char *sus, const char *extra)
{
    sw_buf_printf(
        b,
        "{\"action\": \"%s\", \"job_id\": %s, \"episode\": %d, \"revision\": %d, "
        "\"event_timestamp_ns\": %lld, \"world_size\": 4, \"participating_ranks\": [0, 1, 2, 3], "
        "\"missing_ranks\": [], \"rank_sample_counts\": {\"0\": 100, \"2\": 99}, "
        "\"alignment_offsets_ns\": {\"0\": 0, \"2\": -1500000}, "
        "\"cluster_onset_timestamp_ns\": ",
        action, job_json, episode, revision, event_ns);
    if (onset_ns >= 0) sw_buf_printf(b, "%lld", onset_ns);
    else sw_buf_puts(b, "null");
    sw_buf_printf(b,
                  ", \"first_cause_suspects\": [%s], \"notes\": [\"Rank 2 starts 1500000 ns "
                  "from the anchor; first-sample alignment may be approximate.\"]%s}\n",
                  sus, extra ? extra : "");
}

/* A suspect with a timeline of @p n points at 100 ms, rising from index
 * @p start to @p spike by 6 GiB. */
static void suspect(sw_buf_t *b, int rank, long long t0, int n, int start, int spike,
                    long long onset, const char *phase_json)
{
    long long spike_t = t0 + (long long)spike * 100000000LL;
    sw_buf_printf(
        b,
        "{\"rank\": %d, \"first_spike_timestamp_ns\": %lld, "
        "\"aligned_first_spike_timestamp_ns\": %lld, \"peak_delta_bytes\": 6442450944, "
        "\"spike_window_samples\": %d, \"lead_over_cluster_onset_ns\": %lld, "
        "\"confidence\": \"high\", \"evidence\": {\"device_used_delta_bytes\": 6442450944, "
        "\"supporting_ranks_at_or_before_onset\": 2}, \"phase_attribution\": %s",
        rank, spike_t, spike_t, spike - start, onset - spike_t, phase_json);
    if (n > 0) {
        sw_buf_puts(b, ", \"timeline\": {\"aligned_timestamp_ns\": [");
        for (int i = 0; i < n; i++)
            sw_buf_printf(b, "%s%lld", i ? ", " : "", t0 + (long long)i * 100000000LL);
        sw_buf_puts(b, "], \"device_used_bytes\": [");
        for (int i = 0; i < n; i++) {
            long long v = 30LL << 30;
            v += (long long)(i % 10) * (64LL << 20) + rank * (512LL << 20);
            if (i > start && i <= spike)
                v += (long long)(i - start) * (6LL << 30) / (spike - start);
            if (i > spike) v += 6LL << 30;
            sw_buf_printf(b, "%s%lld", i ? ", " : "", v);
        }
        sw_buf_printf(b,
                      "], \"window_samples\": %d, \"spike_start_index\": %d, \"spike_index\": %d}",
                      n, start, spike);
    }
    sw_buf_puts(b, "}");
}

static void test_hand_written(void **state)
{
    (void)state;
    const long long t0 = 1763700000000000000LL;
    sw_buf_t in, sus, html;
    sw_buf_init(&in);
    sw_buf_init(&sus);
    sw_buf_init(&html);
    const char *unique =
        "{\"phase_resolution\": \"unique\", \"phase_paths\": [\"train / <b>fwd</b>\"], "
        "\"phase_source\": \"heuristic\", \"phase_path\": \"train / <b>fwd</b>\", "
        "\"scope_id\": \"s1\", \"thread_id\": 1, \"thread_name\": \"Main\"}";
    const char *ambiguous =
        "{\"phase_resolution\": \"ambiguous\", \"phase_paths\": [\"a\", \"b\"], "
        "\"phase_summary\": {\"phase_path\": \"b & c\", \"source\": \"heuristic\"}}";
    /* job 1 (hostile id): trigger, update, duplicate update, resolve;
     * timelines of 250 points, a third suspect without one */
    const char *hostile = "\"<script>alert('x')</script>\\u0001\\u00e9\"";
    long long onset = t0 + 150LL * 100000000LL;
    sus.len = 0;
    suspect(&sus, 2, t0, 250, 140, 147, onset, unique);
    sw_buf_puts(&sus, ", ");
    suspect(&sus, 0, t0, 250, 148, 150, onset, ambiguous);
    record(
        &in, "trigger", hostile, 1, 0, onset, onset, sus.data,
        ", \"severity\": \"critical\", "
        "\"dedup_key\": \"stormwatch/<script>/episode/1\", \"summary\": \"TRIGGER <img src=x onerror=alert(1)>\"");
    sw_buf_puts(&sus, ", ");
    sw_buf_printf(&sus,
                  "{\"rank\": 3, \"aligned_first_spike_timestamp_ns\": %lld, \"peak_delta_bytes\": "
                  "1073741824, \"lead_over_cluster_onset_ns\": 0, \"confidence\": \"low\", "
                  "\"phase_attribution\": null}",
                  onset);
    record(&in, "update", hostile, 1, 1, onset + 100000000LL, onset, sus.data,
           ", \"severity\": \"critical\", \"summary\": \"UPDATE\"");
    record(&in, "update", hostile, 1, 1, onset + 100000000LL, onset, sus.data,
           ", \"severity\": \"critical\", \"summary\": \"UPDATE\"");
    record(&in, "resolve", hostile, 1, 2, onset + 900000000LL, -1, "", ", \"severity\": \"info\"");
    /* job 2 (null id): no timelines at all; an oversized timeline in a
     * second episode; a summary */
    sus.len = 0;
    sw_buf_printf(
        &sus,
        "{\"rank\": 5, \"aligned_first_spike_timestamp_ns\": %lld, \"peak_delta_bytes\": "
        "734003200, \"lead_over_cluster_onset_ns\": 250000000, \"confidence\": \"medium\"}, "
        "{\"rank\": 6, \"aligned_first_spike_timestamp_ns\": %lld, \"peak_delta_bytes\": "
        "2147483648, \"lead_over_cluster_onset_ns\": 0, \"confidence\": \"low\"}",
        onset - 250000000LL, onset);
    record(&in, "trigger", "null", 1, 0, onset, onset, sus.data, ", \"severity\": \"error\"");
    sus.len = 0;
    suspect(&sus, 1, t0, 1000, 500, 505, t0 + 507LL * 100000000LL, "null");
    sw_buf_puts(&sus, ", ");
    suspect(&sus, 2, t0, 1000, 505, 507, t0 + 507LL * 100000000LL, "null");
    record(&in, "trigger", "null", 2, 0, t0 + 507LL * 100000000LL, t0 + 507LL * 100000000LL,
           sus.data, NULL);
    /* a malformed timeline is reported, not drawn */
    sus.len = 0;
    sw_buf_printf(&sus,
                  "{\"rank\": 1, \"aligned_first_spike_timestamp_ns\": %lld, \"timeline\": "
                  "{\"aligned_timestamp_ns\": [1, 2, 3], \"device_used_bytes\": [1, 2]}}, "
                  "{\"rank\": 2, \"aligned_first_spike_timestamp_ns\": %lld}",
                  onset, onset);
    record(&in, "trigger", "\"job-3\"", 1, 0, onset, onset, sus.data, NULL);
    record(&in, "summary", "null", 2, 0, 0, -1, "",
           ", \"severity\": \"info\", \"summary\": \"SUMMARY\"");
    char err[512];
    int bad = render_lines(in.data, in.len, &html, err, sizeof(err));
    sw_check_case("hand");
    SW_CHECK(bad == 0, "rejected: %s", err);
    check_page("hand", html.data, 4);
    sw_check_case("hand");
    const char *h = html.data;
    SW_CHECK(!strstr(h, "<script") && !strstr(h, "<img") && !strstr(h, "<b>"),
             "input markup escaped");
    SW_CHECK(strstr(h, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;\xEF\xBF\xBD\xC3\xA9"),
             "job id escaped, control character replaced, UTF-8 kept");
    SW_CHECK(strstr(h, "train / &lt;b&gt;fwd&lt;/b&gt;"), "phase escaped");
    SW_CHECK(
        strstr(h, "b &amp; c <span class=\"muted\">(ambiguous; heuristic phase_summary)</span>"),
        "ambiguous phase with its summary");
    SW_CHECK(strstr(h, "<td>unknown</td>"), "no attribution: unknown");
    SW_CHECK(strstr(h, "Charted from the <strong>update</strong> record, revision 1"),
             "the latest update is charted and the choice described");
    SW_CHECK(strstr(h, "The episode resolved (revision 2"), "the resolve is named");
    SW_CHECK(strstr(h, "1 repeated record of this episode"), "the duplicate is counted");
    SW_CHECK(count(h, "no timeline in record") >= 3, "suspects without a timeline say so");
    SW_CHECK(strstr(h, "each spike is drawn at its aligned_first_spike_timestamp_ns"),
             "a chart without timelines says what it draws");
    SW_CHECK(strstr(h, "not drawn: timeline arrays differ in length"), "malformed timeline named");
    SW_CHECK(strstr(h, "<em>null job_id</em>"), "the null job is named");
    SW_CHECK(strstr(h, "+6 GiB"), "peak delta in GiB");
    SW_CHECK(strstr(h, "+700 MiB"), "peak delta in MiB");
    SW_CHECK(strstr(h, "250 ms"), "lead in ms");
    SW_CHECK(strstr(h, "1000-point excerpt"), "the oversized excerpt is named");
    SW_CHECK(strstr(h, "SUMMARY"), "summary line shown");
    SW_CHECK(strstr(h, "2025-11-21 04:40:15.000 UTC"), "onset in UTC");
    sw_buf_clear(&in);
    sw_buf_clear(&sus);
    sw_buf_clear(&html);
    end_test();
}

static void test_units(void **state)
{
    (void)state;
    static const struct {
        int64_t v;
        const char *bytes, *dur;
    } t[] = {
        {0, "0 B", "0 s"},
        {900, "900 B", "900 ns"},
        {1536, "1.5 KiB", "1.54 \xC2\xB5s"},
        {850000, "830 KiB", "850 \xC2\xB5s"},
        {299694664, "286 MiB", "300 ms"},
        {1250000000, "1.16 GiB", "1.25 s"},
        {7103924194, "6.62 GiB", "7.1 s"},
        {-6442450944, "-6 GiB", "-6.44 s"},
        {270000000000, "251 GiB", "4.5 min"},
        {INT64_MAX, "8 EiB", "2562048 h"},
    };
    sw_buf_t b;
    sw_buf_init(&b);
    sw_check_case("units");
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        b.len = 0;
        sw_report_bytes(&b, t[i].v);
        SW_CHECK(!strcmp(sw_buf_cstr(&b), t[i].bytes), "bytes(%lld) = \"%s\", want \"%s\"",
                 (long long)t[i].v, b.data, t[i].bytes);
        b.len = 0;
        sw_report_duration(&b, t[i].v);
        SW_CHECK(!strcmp(sw_buf_cstr(&b), t[i].dur), "duration(%lld) = \"%s\", want \"%s\"",
                 (long long)t[i].v, b.data, t[i].dur);
    }
    b.len = 0;
    sw_report_escape(&b, (sw_str_t){"a<\"&'>\xff\xc3\x28\xe2\x82\xac", 12});
    SW_CHECK(
        !strcmp(sw_buf_cstr(&b), "a&lt;&quot;&amp;&#39;&gt;\xEF\xBF\xBD\xEF\xBF\xBD(\xE2\x82\xAC"),
        "escape: \"%s\"", b.data);
    sw_buf_clear(&b);
    end_test();
}

/* Invalid records: the message names the input, the line and the field. */
static void test_invalid(void **state)
{
    (void)state;
    static const struct {
        const char *line, *msg;
    } t[] = {
        {"{\"action\": \"trigger\"", "in.jsonl:7: not valid JSON"},
        {"[1, 2]", "in.jsonl:7: expected an alert record (JSON object), got an array"},
        {"{\"action\": \"alarm\", \"job_id\": \"j\", \"episode\": 1, \"revision\": 0}",
         "in.jsonl:7: field \"action\" is \"alarm\", expected trigger, update, resolve or summary"},
        {"{\"action\": \"trigger\", \"episode\": 1, \"revision\": 0}",
         "in.jsonl:7: field \"job_id\" is missing, expected a string or null"},
        {"{\"action\": \"trigger\", \"job_id\": 5, \"episode\": 1, \"revision\": 0}",
         "in.jsonl:7: field \"job_id\" is 5, expected a string or null"},
        {"{\"action\": \"update\", \"job_id\": \"j\", \"episode\": \"1\", \"revision\": 0}",
         "in.jsonl:7: field \"episode\" is \"1\", expected an integer >= 0"},
        {"{\"action\": \"update\", \"job_id\": \"j\", \"episode\": 0, \"revision\": 0}",
         "in.jsonl:7: field \"episode\" is 0, expected an integer >= 1 in a trigger"},
        {"{\"action\": \"update\", \"job_id\": \"j\", \"episode\": 1, \"revision\": -1}",
         "in.jsonl:7: field \"revision\" is -1, expected an integer >= 0"},
        {"{\"action\": \"update\", \"job_id\": \"j\", \"episode\": 1, \"revision\": 0, "
         "\"cluster_onset_timestamp_ns\": 1.5}",
         "in.jsonl:7: field \"cluster_onset_timestamp_ns\" is 1.5, expected an integer or null"},
        {"{\"action\": \"update\", \"job_id\": \"j\", \"episode\": 1, \"revision\": 0, "
         "\"first_cause_suspects\": [{\"rank\": 1}, {\"rank\": -3}]}",
         "in.jsonl:7: field \"first_cause_suspects[1].rank\" is -3, expected an integer >= 0"},
        {"{\"action\": \"update\", \"job_id\": \"j\", \"episode\": 1, \"revision\": 0, "
         "\"first_cause_suspects\": {}}",
         "in.jsonl:7: field \"first_cause_suspects\" is an object, expected an array"},
    };
    sw_check_case("invalid");
    sw_report_t *rep = sw_report_new();
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        char err[512] = "";
        sw_err_t rc = sw_report_add(rep, t[i].line, strlen(t[i].line), "in.jsonl", 7, err,
                                    sizeof(err));
        SW_CHECK(rc != SW_OK, "accepted: %s", t[i].line);
        SW_CHECK(!strncmp(err, t[i].msg, strlen(t[i].msg)), "message \"%s\", want \"%s...\"", err,
                 t[i].msg);
    }
    char err[64];
    SW_CHECK(sw_report_add(rep, "  \r", 3, "in.jsonl", 8, err, sizeof(err)) == SW_OK, "blank line");
    SW_CHECK(sw_report_records(rep) == 0 && sw_report_episodes(rep) == 0, "nothing was added");
    sw_buf_t html;
    sw_buf_init(&html);
    sw_report_render(rep, NULL, &html);
    check_page("invalid-empty", sw_buf_cstr(&html), 0);
    sw_check_case("invalid");
    SW_CHECK(strstr(html.data, "no storm episode"), "an empty report says so");
    sw_buf_clear(&html);
    sw_report_destroy(rep);
    end_test();
}

/* The command: exit codes and messages. */
static void test_command(void **state)
{
    (void)state;
    sw_check_case("command");
    char path[1200], cmd[4096];
    snprintf(path, sizeof(path), "%s/mixed.jsonl", tmpdir());
    FILE *f = fopen(path, "w");
    SW_ASSERT_NOT_NULL(f);
    fputs(
        "{\"action\": \"summary\", \"job_id\": \"j\", \"episode\": 0, \"revision\": 0}\n"
        "not json\n"
        "\n"
        "{\"action\": \"summary\", \"job_id\": \"k\", \"episode\": 0, \"revision\": 0}\n",
        f);
    fclose(f);
    sw_buf_t out;
    sw_buf_init(&out);
    snprintf(cmd, sizeof(cmd), "'%s' report -o '%s/mixed.html' '%s' 2>&1; echo rc=$?",
             sw_test_bin(), tmpdir(), path);
    sw_test_run(cmd, &out);
    SW_CHECK(strstr(out.data, "mixed.jsonl:2: not valid JSON") && strstr(out.data, "(skipped)"),
             "names file and line: %s", out.data);
    SW_CHECK(strstr(out.data, "1 invalid line skipped") && strstr(out.data, "rc=0"), "%s",
             out.data);
    snprintf(path, sizeof(path), "%s/mixed.html", tmpdir());
    sw_buf_t html;
    sw_buf_init(&html);
    SW_CHECK(sw_test_read_file(path, &html) && strstr(html.data, "1 invalid line skipped"),
             "the page counts the skipped line");
    snprintf(cmd, sizeof(cmd), "'%s' report --strict '%s/mixed.jsonl' 2>&1 >/dev/null; echo rc=$?",
             sw_test_bin(), tmpdir());
    sw_test_run(cmd, &out);
    SW_CHECK(strstr(out.data, "mixed.jsonl:2: not valid JSON") && strstr(out.data, "rc=2"), "%s",
             out.data);
    snprintf(cmd, sizeof(cmd), "'%s' report '%s/nope.jsonl' 2>&1 >/dev/null; echo rc=$?",
             sw_test_bin(), tmpdir());
    sw_test_run(cmd, &out);
    SW_CHECK(strstr(out.data, "nope.jsonl") && strstr(out.data, "rc=1"), "%s", out.data);
    snprintf(cmd, sizeof(cmd), "'%s' report -o '%s/no/such/dir.html' </dev/null 2>&1; echo rc=$?",
             sw_test_bin(), tmpdir());
    sw_test_run(cmd, &out);
    SW_CHECK(strstr(out.data, "cannot write") && strstr(out.data, "rc=1"), "%s", out.data);
    snprintf(cmd, sizeof(cmd), "'%s' report --bogus 2>&1; echo rc=$?", sw_test_bin());
    sw_test_run(cmd, &out);
    SW_CHECK(strstr(out.data, "--bogus") && strstr(out.data, "rc=2"), "%s", out.data);
    snprintf(cmd, sizeof(cmd), "'%s' report --help; echo rc=$?", sw_test_bin());
    sw_test_run(cmd, &out);
    SW_CHECK(strstr(out.data, "-o, --output FILE") && strstr(out.data, "--strict") &&
                 strstr(out.data, "rc=0"),
             "%s", out.data);
    snprintf(cmd, sizeof(cmd), "'%s' --help", sw_test_bin());
    sw_test_run(cmd, &out);
    SW_CHECK(strstr(out.data, "  report "), "the command list names report");
    /* stdin, with '-' and without a file */
    snprintf(cmd, sizeof(cmd),
             "echo '{\"action\": \"summary\", \"job_id\": null, \"episode\": 0, "
             "\"revision\": 0}' | '%s' report - | grep -c '<em>null job_id</em>'",
             sw_test_bin());
    SW_CHECK(sw_test_run(cmd, &out) == 0, "stdin '-': %s", out.data);
    snprintf(cmd, sizeof(cmd), "'%s' report </dev/null | grep -c 'no storm episode'",
             sw_test_bin());
    SW_CHECK(sw_test_run(cmd, &out) == 0, "stdin, empty: %s", out.data);
    sw_buf_clear(&out);
    sw_buf_clear(&html);
    end_test();
}

static int teardown(void **state)
{
    (void)state;
    if (g_tmp[0] && !g_failed_tests) {
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_tmp);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
    }
    return 0;
}

/* Lines of @p text holding @p a and none of @p not1, @p not2. */
static size_t count_lines(const char *text, const char *a, const char *not1, const char *not2)
{
    size_t n = 0;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char *line = sw_memdup0(p, len);
        if (strstr(line, a) && !strstr(line, not1) && !strstr(line, not2)) n++;
        free(line);
        p += len + (e ? 1 : 0);
    }
    return n;
}

/* The text between @p from and the next @p to (NUL-terminated copy). */
static char *between(const char *hay, const char *from, const char *to)
{
    const char *a = strstr(hay, from);
    if (!a) return sw_strdup("");
    const char *b = strstr(a, to);
    return sw_memdup0(a, b ? (size_t)(b - a) : strlen(a));
}

/* A generated cascade (a rank fills its GPU and dies, others follow, the
 * survivors' watchdogs fire 600 s later): the report opens with the crash,
 * names the true first death (gen's truth), and with --telemetry charts its
 * memory against the device total with the warning, the other deaths and
 * every watchdog error (counted here from the telemetry) as marks. */
static void test_crash(void **state)
{
    (void)state;
    sw_check_case("crash");
    sw_buf_t html, tel, truth, plain;
    sw_buf_init(&html);
    sw_buf_init(&tel);
    sw_buf_init(&truth);
    sw_buf_init(&plain);
    char cmd[8192], path[1200];
    const char *d = tmpdir();
    snprintf(cmd, sizeof(cmd),
             "'%s' gen --crash cascade --ranks 16 --seed 4 --quiet --truth '%s/crash.truth' "
             "-o '%s/crash.tel' && '%s' replay '%s/crash.tel' > '%s/crash.rec' && "
             "'%s' report --telemetry '%s/crash.tel' '%s/crash.rec'",
             sw_test_bin(), d, d, sw_test_bin(), d, d, sw_test_bin(), d, d);
    SW_ASSERT_I64(sw_test_run(cmd, &html), 0);
    snprintf(path, sizeof(path), "%s/crash.tel", d);
    SW_ASSERT_TRUE(sw_test_read_file(path, &tel));
    snprintf(path, sizeof(path), "%s/crash.truth", d);
    SW_ASSERT_TRUE(sw_test_read_file(path, &truth));
    json_error_t jerr;
    json_t *t = json_loads(truth.data, JSON_DISABLE_EOF_CHECK, &jerr);
    SW_ASSERT_NOT_NULL(t);
    long long first = json_integer_value(json_object_get(t, "first_death_rank"));
    size_t n_deaths = json_array_size(json_object_get(t, "deaths"));
    json_decref(t);
    size_t watchdog = count_lines(tel.data, "\"event_type\": \"error\"", "oom_reason",
                                  "out of memory");
    char why[512], want[256];
    SW_CHECK(well_formed(html.data, why, sizeof(why)), "%s", why);
    /* opens with the crash, not with "no storm" */
    const char *crashes = strstr(html.data, "<h2>Crashes</h2>");
    const char *job = strstr(html.data, "<section class=\"job\"");
    SW_CHECK(crashes && job && crashes < job, "the page opens with its crashes");
    SW_CHECK(!strstr(html.data, "No storm episode to report") && !strstr(html.data, "0 episodes ("),
             "a crash-only report does not open with 'no storm episode to report'");
    SW_CHECK(strstr(html.data, "1 crash, 1 warning, no storm episode"), "header counts");
    /* the true first death, in the overview, the section and the chart */
    snprintf(want, sizeof(want), "<td class=\"num\">rank %lld</td>", first);
    SW_CHECK(strstr(html.data, want), "overview names rank %lld", first);
    snprintf(want, sizeof(want), "rank %lld dies (oom)</text>", first);
    SW_CHECK(strstr(html.data, want), "the chart marks rank %lld's death", first);
    snprintf(want, sizeof(want), "title=\"rank %lld: died first\">%lld</span>", first, first);
    SW_CHECK(strstr(html.data, want) && count(html.data, "<span class=\"rk first\"") == 2,
             "the rank map shows rank %lld as the first death (and in its legend)", first);
    /* memory against the device total, thinned but drawn */
    char *used = between(html.data, "<path class=\"used\" d=\"", "\"/>");
    size_t pts = count(used, " L") + 1;
    SW_CHECK(pts >= 100 && pts <= 602, "memory series of %zu points", pts);
    free(used);
    SW_CHECK(strstr(html.data, "<path class=\"total\" d=\"M"), "the device total is drawn");
    SW_CHECK(strstr(html.data, "<line class=\"warn\"") && strstr(html.data, " before</text>"),
             "the warning and its lead are marked");
    SW_CHECK(strstr(html.data, "A warning named it "), "the warning's lead in words");
    SW_CHECK(count(html.data, "<line class=\"watchdog\" x1") == watchdog + 1,
             "%zu watchdog marks (and the legend's), the telemetry has %zu",
             count(html.data, "<line class=\"watchdog\" x1"), watchdog);
    snprintf(want, sizeof(want), "%zu watchdog errors</text>", watchdog);
    SW_CHECK(strstr(html.data, want), "watchdog count label");
    size_t other = count(html.data, "<path class=\"other-death");
    SW_CHECK(other >= 2 && other <= n_deaths, "%zu other-death marks (legend included), %zu deaths",
             other, n_deaths);
    /* without the telemetry: no chart, and the page says what to give */
    snprintf(cmd, sizeof(cmd), "'%s' report '%s/crash.rec'", sw_test_bin(), d);
    SW_ASSERT_I64(sw_test_run(cmd, &plain), 0);
    SW_CHECK(!strstr(plain.data, "<path class=\"used\"") &&
                 strstr(plain.data, "<code>--telemetry FILE</code>"),
             "without telemetry the page says how to get the chart");
    SW_CHECK(well_formed(plain.data, why, sizeof(why)), "%s", why);
    sw_buf_clear(&html);
    sw_buf_clear(&tel);
    sw_buf_clear(&truth);
    sw_buf_clear(&plain);
    end_test();
}

/* Jobs of a fleet where one host (node-005) runs every job's first storm
 * rank and first death (gen --fleet-hosts --bad-host): the fleet page names
 * it first with every job; without a bad host no host repeats that often. */
static void test_fleet(void **state)
{
    (void)state;
    sw_check_case("fleet");
    sw_buf_t html, ctl, one;
    sw_buf_init(&html);
    sw_buf_init(&ctl);
    sw_buf_init(&one);
    char cmd[8192];
    const char *d = tmpdir();
    const char *bin = sw_test_bin();
    for (int bad = 1; bad >= 0; bad--) {
        const char *opt = bad ? "--bad-host 5" : "";
        snprintf(cmd, sizeof(cmd),
                 "'%s' gen --jobs 4 --ranks 32 --samples 300 --storm-rank -1 --fleet-hosts 12 %s "
                 "--seed 7 --quiet | '%s' replay > '%s/fleet-s%d.rec' && "
                 "'%s' gen --crash cascade --jobs 3 --ranks 24 --fleet-hosts 12 %s --seed 8 "
                 "--quiet | '%s' replay > '%s/fleet-c%d.rec' && "
                 "'%s' report --fleet '%s/fleet-s%d.rec' '%s/fleet-c%d.rec'",
                 bin, opt, bin, d, bad, bin, opt, bin, d, bad, bin, d, bad, d, bad);
        SW_ASSERT_I64(sw_test_run(cmd, bad ? &html : &ctl), 0);
    }
    char why[512];
    SW_CHECK(well_formed(html.data, why, sizeof(why)), "%s", why);
    SW_CHECK(well_formed(ctl.data, why, sizeof(why)), "%s", why);
    SW_CHECK(strstr(html.data,
                    "Host <code>node-005</code> was named first in 7 of the 7 jobs: "
                    "4 storm first causes and 3 first deaths."),
             "the headline names node-005");
    char *hosts = between(html.data, "<table class=\"fleet hosts\"", "</table>");
    char *row = between(hosts, "<tbody><tr", "</tr>");
    SW_CHECK(strstr(row,
                    "<code>node-005</code></td><td class=\"num\">7</td><td "
                    "class=\"num\">4</td><td class=\"num\">3</td>"),
             "the first host row is node-005 with 7 jobs, 4 storms, 3 deaths: %s", row);
    SW_CHECK(strstr(row, "job-0") && strstr(row, "job-3") && strstr(row, "crash-0") &&
                 strstr(row, "crash-2"),
             "its jobs are listed");
    free(row);
    free(hosts);
    SW_CHECK(!strstr(html.data, "<section class=\"job\""), "--fleet: no job sections");
    /* control: the same fleet without a bad host */
    SW_CHECK(strstr(ctl.data, "<table class=\"fleet hosts\"") &&
                 !strstr(ctl.data, "was named first in 7 of") &&
                 !strstr(ctl.data, "was named first in 6 of"),
             "without a bad host no host is named first in (nearly) every job");
    /* automatic: several jobs open the incident report with the fleet section,
     * one job does not */
    snprintf(cmd, sizeof(cmd), "'%s' report '%s/fleet-s1.rec' '%s/fleet-c1.rec'", bin, d, d);
    SW_ASSERT_I64(sw_test_run(cmd, &one), 0);
    const char *fleet = strstr(one.data, "<section class=\"fleet\"");
    const char *first_job = strstr(one.data, "<section class=\"job\"");
    SW_CHECK(fleet && first_job && fleet < first_job, "several jobs: the fleet section first");
    snprintf(cmd, sizeof(cmd), "'%s' report '%s/crash.rec'", bin, d);
    SW_ASSERT_I64(sw_test_run(cmd, &one), 0);
    SW_CHECK(!strstr(one.data, "<section class=\"fleet\""), "one job: no fleet section");
    sw_buf_clear(&html);
    sw_buf_clear(&ctl);
    sw_buf_clear(&one);
    end_test();
}

int main(void)
{
    if (access(sw_test_bin(), X_OK) != 0) {
        fprintf(stderr,
                "FAIL: the stormwatch binary \"%s\" is not executable (set SW_BIN, or run "
                "through ctest)\n",
                sw_test_bin());
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units),        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_hand_written), cmocka_unit_test(test_generated_storm),
        cmocka_unit_test(test_fixtures),     cmocka_unit_test(test_command),
        cmocka_unit_test(test_crash),        cmocka_unit_test(test_fleet),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
