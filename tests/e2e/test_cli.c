/*
 * The stormwatch binary ($SW_BIN) end to end: exit codes (0 ok, 1 runtime
 * failure, 2 usage or input error), help texts that list every option,
 * messages that name the offending command, option, value, file and line,
 * and the outputs of analyze and replay (valid JSON; gzip input reads like
 * plain input; records one per line; summaries in first-appearance order;
 * replay --stats). A table of command lines -> exit code and substrings of
 * stdout and stderr, then a few scenario tests. "@F" in a command stands
 * for the fixtures directory, "@T" for this test's scratch directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "sw_testlib.h"

static void end_test(void)
{
    SW_CHECK_END();
}

static char g_tmp[1024];

static const char *tmpdir(void)
{
    if (!g_tmp[0]) {
        snprintf(g_tmp, sizeof(g_tmp), "%s/test_cli_%d", sw_test_tmp(), (int)getpid());
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", g_tmp);
        SW_ASSERT_I64(system(cmd), 0);
    }
    return g_tmp;
}

/* @p args with @F and @T expanded. */
static void expand(const char *args, sw_buf_t *out)
{
    out->len = 0;
    for (const char *p = args; *p; p++) {
        if (p[0] == '@' && p[1] == 'F') {
            sw_buf_puts(out, sw_test_fixtures());
            p++;
        } else if (p[0] == '@' && p[1] == 'T') {
            sw_buf_puts(out, tmpdir());
            p++;
        } else {
            sw_buf_putc(out, *p);
        }
    }
    sw_buf_cstr(out);
}

/* Run `stormwatch ARGS` with stdin from @p in (NULL: /dev/null). */
static int run(const char *args, const char *in, sw_buf_t *out, sw_buf_t *err)
{
    sw_buf_t a, cmd;
    sw_buf_init(&a);
    sw_buf_init(&cmd);
    expand(args, &a);
    char errpath[1200];
    snprintf(errpath, sizeof(errpath), "%s/stderr.txt", tmpdir());
    sw_buf_printf(&cmd, "'%s' %s <'%s' 2>'%s'", sw_test_bin(), a.data, in ? in : "/dev/null",
                  errpath);
    int rc = sw_test_run(sw_buf_cstr(&cmd), out);
    if (!sw_test_read_file(errpath, err)) {
        err->len = 0;
        sw_buf_cstr(err);
    }
    sw_buf_clear(&a);
    sw_buf_clear(&cmd);
    return rc;
}

static bool write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(text, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

static bool gzip_file(const char *src, const char *dst)
{
    sw_buf_t b;
    sw_buf_init(&b);
    if (!sw_test_read_file(src, &b)) return false;
    gzFile gz = gzopen(dst, "wb");
    if (!gz) return false;
    bool ok = gzwrite(gz, b.data, (unsigned)b.len) == (int)b.len;
    ok = gzclose(gz) == Z_OK && ok;
    sw_buf_clear(&b);
    return ok;
}

/* ---- inputs made once -------------------------------------------------- */

#define EV(ts, rank, used)                                                   \
    "{\"timestamp_ns\": " ts ", \"event_type\": \"sample\", \"rank\": " rank \
    ", \"world_size\": 2, \"device_used_bytes\": " used "}\n"

static void make_inputs(void)
{
    char p[1200];
    static const char bad[] =
        EV("0", "0", "0")
        "{\"timestamp_ns\": 1, \"event_type\": \"sample\", \"rank\": -3, \"device_used_bytes\": 1}\n"
        "\n"
        "   \n"
        EV("10", "0", "0")
        "not json\n";
    snprintf(p, sizeof(p), "%s/bad.jsonl", tmpdir());
    SW_ASSERT_TRUE(write_file(p, bad, sizeof(bad) - 1));
    /* no valid line at all (CSV, a log, a wrong-schema object) */
    static const char none[] =
        "timestamp_ns,rank,device_used_bytes\n"
        "1,0,100\n"
        "\n"
        "{\"ts\": 1, \"rank\": 0}\n";
    snprintf(p, sizeof(p), "%s/none-valid.csv", tmpdir());
    SW_ASSERT_TRUE(write_file(p, none, sizeof(none) - 1));
    /* truncated gzip of a fixture */
    char src[1200], gz[1200];
    snprintf(src, sizeof(src), "%s/gen1.jsonl", sw_test_fixtures());
    snprintf(gz, sizeof(gz), "%s/gen1.jsonl.gz", tmpdir());
    SW_ASSERT_TRUE(gzip_file(src, gz));
    sw_buf_t b;
    sw_buf_init(&b);
    SW_ASSERT_TRUE(sw_test_read_file(gz, &b));
    snprintf(p, sizeof(p), "%s/trunc.jsonl.gz", tmpdir());
    SW_ASSERT_TRUE(write_file(p, b.data, b.len / 2));
    /* gzip content under a plain name */
    snprintf(p, sizeof(p), "%s/gen1-is-gzip.jsonl", tmpdir());
    SW_ASSERT_TRUE(write_file(p, b.data, b.len));
    sw_buf_clear(&b);
}

/* ---- the table ------------------------------------------------------------- */

typedef struct cli_case_s {
    const char *name;
    const char *args;
    int rc;
    const char *out[24]; /* substrings of stdout */
    const char *err[6];  /* substrings of stderr */
    bool out_empty;
} cli_case_t;

static const cli_case_t k_cases[] = {
    {"--version", "--version", 0, {"stormwatch "}, {NULL}, false},
    {"version", "version", 0, {"stormwatch "}, {NULL}, false},
    {"--help",
     "--help",
     0,
     {"analyze", "replay", "gen", "--version", "Usage: stormwatch"},
     {NULL},
     false},
    {"-h", "-h", 0, {"analyze", "replay", "gen"}, {NULL}, false},
    {"no command", "", 2, {NULL}, {"Usage: stormwatch"}, true},
    {"analyze --help",
     "analyze --help",
     0,
     {"Usage: stormwatch analyze", "--spike-min-bytes", "--spike-fraction", "--skew-multiplier",
      "--strict", "--compact", "--help"},
     {NULL},
     false},
    {"analyze -h", "analyze -h", 0, {"Usage: stormwatch analyze"}, {NULL}, false},
    {"replay --help",
     "replay --help",
     0,
     {"Usage: stormwatch replay", "--window-samples", "--stale-ms", "--spike-min-bytes",
      "--spike-fraction", "--skew-multiplier", "--max-jobs", "--max-ranks-per-job", "--strict",
      "--stats", "--help"},
     {NULL},
     false},
    {"gen --help",
     "gen --help",
     0,
     {"Usage: stormwatch gen",
      "--ranks",
      "--samples",
      "--jobs",
      "--seed",
      "--storm-rank",
      "--storms",
      "--interval-ms",
      "--jitter",
      "--skew-ms",
      "--start-ns",
      "--storm-at",
      "--spread-ms",
      "--storm-bytes",
      "--phases",
      "--duplicates",
      "--late",
      "--job-prefix",
      "--output",
      "--gzip",
      "--truth",
      "--quiet",
      "--help"},
     {NULL},
     false},
    {"unknown command", "frobnicate", 2, {NULL}, {"frobnicate"}, true},
    {"unknown analyze option", "analyze --bogus @F/gen1.jsonl", 2, {NULL}, {"--bogus"}, true},
    {"unknown replay option", "replay --nope @F/gen1.jsonl", 2, {NULL}, {"--nope"}, true},
    {"unknown gen option", "gen --zzz", 2, {NULL}, {"--zzz"}, true},
    {"unknown short option", "analyze -q @F/gen1.jsonl", 2, {NULL}, {"-q"}, true},
    {"missing option value", "analyze --spike-fraction", 2, {NULL}, {"--spike-fraction"}, true},
    {"spike fraction out of range",
     "analyze --spike-fraction 2 @F/gen1.jsonl",
     2,
     {NULL},
     {"--spike-fraction", "\"2\""},
     true},
    {"spike fraction not a number",
     "analyze --spike-fraction ten @F/gen1.jsonl",
     2,
     {NULL},
     {"--spike-fraction", "\"ten\""},
     true},
    {"spike fraction NaN",
     "replay --spike-fraction nan @F/gen1.jsonl",
     2,
     {NULL},
     {"--spike-fraction", "\"nan\""},
     true},
    {"spike min bytes not an integer",
     "analyze --spike-min-bytes 12abc @F/gen1.jsonl",
     2,
     {NULL},
     {"--spike-min-bytes", "\"12abc\""},
     true},
    {"skew multiplier fraction",
     "analyze --skew-multiplier 1.5 @F/gen1.jsonl",
     2,
     {NULL},
     {"--skew-multiplier", "\"1.5\""},
     true},
    {"skew multiplier 0",
     "replay --skew-multiplier 0 @F/gen1.jsonl",
     2,
     {NULL},
     {"--skew-multiplier", "\"0\""},
     true},
    {"window samples 0",
     "replay --window-samples 0 @F/gen1.jsonl",
     2,
     {NULL},
     {"--window-samples", "\"0\""},
     true},
    {"stale ms negative",
     "replay --stale-ms -1 @F/gen1.jsonl",
     2,
     {NULL},
     {"--stale-ms", "\"-1\""},
     true},
    {"max jobs beyond 64 bits",
     "replay --max-jobs 99999999999999999999 @F/gen1.jsonl",
     2,
     {NULL},
     {"--max-jobs", "\"99999999999999999999\""},
     true},
    {"gen ranks 0", "gen --ranks 0", 2, {NULL}, {"--ranks"}, true},
    {"analyze a missing file",
     "analyze @T/no-such-file.jsonl",
     1,
     {NULL},
     {"no-such-file.jsonl"},
     true},
    {"replay a missing file",
     "replay @T/no-such-file.jsonl",
     1,
     {NULL},
     {"no-such-file.jsonl"},
     true},
    {"analyze an invalid line: FILE:LINE, exit 0, a count",
     "analyze @T/bad.jsonl",
     0,
     {"\"world_size\"", "\"participating_ranks\""},
     {"bad.jsonl:2: field \"rank\" is -3, expected an integer >= 0", "bad.jsonl:6: not valid JSON",
      "2 invalid lines skipped"},
     false},
    {"replay an invalid line: FILE:LINE, exit 0",
     "replay @T/bad.jsonl",
     0,
     {"\"summary\""},
     {"bad.jsonl:2: field \"rank\" is -3", "2 invalid lines skipped"},
     false},
    {"analyze --strict stops at the first invalid line",
     "analyze --strict @T/bad.jsonl",
     2,
     {NULL},
     {"bad.jsonl:2: field \"rank\" is -3"},
     true},
    {"replay --strict stops at the first invalid line",
     "replay --strict @T/bad.jsonl",
     2,
     {NULL},
     {"bad.jsonl:2:"},
     true},
    {"analyze input without a valid line: exit 2, said so",
     "analyze @T/none-valid.csv",
     2,
     {NULL},
     {"none-valid.csv:1: ", "stormwatch analyze: no valid telemetry in ",
      "none-valid.csv (3 invalid lines)"},
     true},
    {"replay input without a valid line: exit 2, said so",
     "replay @T/none-valid.csv",
     2,
     {NULL},
     {"stormwatch replay: no valid telemetry in ", "none-valid.csv (3 invalid lines)"},
     true},
    {"analyze: one file without a valid line beside a good one is no error",
     "analyze @T/none-valid.csv @T/bad.jsonl",
     0,
     {"\"participating_ranks\""},
     {"5 invalid lines skipped"},
     false},
    {"analyze a truncated gzip file",
     "analyze @T/trunc.jsonl.gz",
     1,
     {NULL},
     {"trunc.jsonl.gz", "truncated"},
     true},
    {"replay a truncated gzip file",
     "replay @T/trunc.jsonl.gz",
     1,
     {NULL},
     {"trunc.jsonl.gz", "truncated"},
     false},
};

static void test_table(void **state)
{
    (void)state;
    sw_check_reset();
    make_inputs();
    sw_buf_t out, err;
    sw_buf_init(&out);
    sw_buf_init(&err);
    for (size_t i = 0; i < sizeof(k_cases) / sizeof(k_cases[0]); i++) {
        const cli_case_t *c = &k_cases[i];
        sw_check_case("%s", c->name);
        int rc = run(c->args, NULL, &out, &err);
        SW_CHECK(rc == c->rc, "`stormwatch %s` exited %d, expected %d; stderr: %.300s", c->args, rc,
                 c->rc, err.data);
        for (size_t k = 0; k < 24 && c->out[k]; k++)
            SW_CHECK(strstr(out.data, c->out[k]) != NULL, "stdout lacks \"%s\":\n%.400s", c->out[k],
                     out.data);
        for (size_t k = 0; k < 6 && c->err[k]; k++)
            SW_CHECK(strstr(err.data, c->err[k]) != NULL, "stderr lacks \"%s\":\n%.400s", c->err[k],
                     err.data);
        if (c->out_empty) SW_CHECK(out.len == 0, "stdout not empty: %.200s", out.data);
        /* help and version go to stdout only, and exit 0 */
        if (c->rc == 0 && (strstr(c->args, "help") || strstr(c->args, "version") ||
                           strcmp(c->args, "-h") == 0 || strstr(c->args, " -h")))
            SW_CHECK(err.len == 0, "stderr not empty: %.200s", err.data);
    }
    /* the version is "stormwatch X.Y.Z" */
    sw_check_case("--version format");
    run("--version", NULL, &out, &err);
    int x, y, z;
    char nl;
    SW_CHECK(sscanf(out.data, "stormwatch %d.%d.%d%c", &x, &y, &z, &nl) == 4 && nl == '\n',
             "version line \"%s\"", out.data);
    fprintf(stderr, "%zu command lines\n", sizeof(k_cases) / sizeof(k_cases[0]));
    sw_buf_clear(&out);
    sw_buf_clear(&err);
    end_test();
}

/* ---- outputs ------------------------------------------------------------------ */

static json_t *parse(const sw_buf_t *b, char *why, size_t n)
{
    json_error_t e;
    json_t *v = json_loadb(b->data, b->len, 0, &e);
    if (!v) snprintf(why, n, "%s at line %d column %d", e.text, e.line, e.column);
    return v;
}

/* analyze prints one JSON object (indented, or one line with --compact),
 * the same for a file, stdin, gzip input and gzip under a plain name. */
static void test_analyze_output(void **state)
{
    (void)state;
    sw_check_reset();
    make_inputs();
    sw_buf_t out, err, ref;
    sw_buf_init(&out);
    sw_buf_init(&err);
    sw_buf_init(&ref);
    char why[512], path[1200];

    sw_check_case("analyze prints valid JSON equal to the fixture");
    int rc = run("analyze @F/gen1.jsonl", NULL, &ref, &err);
    SW_CHECK(rc == 0, "exit %d: %s", rc, err.data);
    json_t *a = parse(&ref, why, sizeof(why));
    SW_CHECK(a != NULL && json_is_object(a), "not a JSON object: %s", why);
    /* gen1 holds two jobs: stderr says which one was left out, nothing else. */
    SW_CHECK(strncmp(err.data, "stormwatch analyze: 2 jobs in the input; analysed ", 50) == 0 &&
                 strchr(err.data, '\n') == err.data + err.len - 1,
             "stderr: %.300s", err.data);
    snprintf(path, sizeof(path), "%s/gen1.batch.json", sw_test_fixtures());
    json_error_t je;
    json_t *want = json_load_file(path, 0, &je);
    SW_CHECK(want != NULL, "cannot read %s", path);
    if (a && want) SW_CHECK(sw_test_json_equal(a, want, false, why, sizeof(why)), "%s", why);
    json_decref(want);

    sw_check_case("analyze --compact prints one line");
    rc = run("analyze --compact @F/gen1.jsonl", NULL, &out, &err);
    SW_CHECK(rc == 0, "exit %d", rc);
    const char *nl = memchr(out.data, '\n', out.len);
    SW_CHECK(nl && (size_t)(nl - out.data) == out.len - 1, "%zu bytes, newline at %ld", out.len,
             nl ? (long)(nl - out.data) : -1L);
    json_t *b = parse(&out, why, sizeof(why));
    SW_CHECK(b && a && json_equal(a, b), "compact output differs from the indented one");
    json_decref(b);

    static const struct {
        const char *name;
        const char *args;
        bool use_stdin;
    } same[] = {
        {"gzip input gives the same output", "analyze @T/gen1.jsonl.gz", false},
        {"gzip content under a plain name", "analyze @T/gen1-is-gzip.jsonl", false},
        {"stdin without a file name", "analyze", true},
        {"stdin as -", "analyze -", true},
    };
    char in[1200];
    snprintf(in, sizeof(in), "%s/gen1.jsonl", sw_test_fixtures());
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
        sw_check_case("%s", same[i].name);
        rc = run(same[i].args, same[i].use_stdin ? in : NULL, &out, &err);
        SW_CHECK(rc == 0, "exit %d: %s", rc, err.data);
        SW_CHECK(out.len == ref.len && memcmp(out.data, ref.data, ref.len) == 0,
                 "output differs from `analyze gen1.jsonl` (%zu vs %zu bytes)", out.len, ref.len);
    }
    json_decref(a);

    /* several files read as one input */
    sw_check_case("two files are one input");
    snprintf(path, sizeof(path), "%s/two_jobs.jsonl", sw_test_fixtures());
    sw_buf_t joined, part;
    sw_buf_init(&joined);
    sw_buf_init(&part);
    SW_ASSERT_TRUE(sw_test_read_file(path, &joined));
    snprintf(path, sizeof(path), "%s/missing_rank.jsonl", sw_test_fixtures());
    SW_ASSERT_TRUE(sw_test_read_file(path, &part));
    sw_buf_put(&joined, part.data, part.len);
    snprintf(path, sizeof(path), "%s/joined.jsonl", tmpdir());
    SW_ASSERT_TRUE(write_file(path, joined.data, joined.len));
    rc = run("analyze @F/two_jobs.jsonl @F/missing_rank.jsonl", NULL, &out, &err);
    SW_CHECK(rc == 0, "exit %d", rc);
    run("analyze @T/joined.jsonl", NULL, &ref, &err);
    SW_CHECK(out.len == ref.len && memcmp(out.data, ref.data, ref.len) == 0,
             "analyze A B differs from analyze cat(A, B)");
    sw_buf_clear(&joined);
    sw_buf_clear(&part);

    sw_check_case("invalid lines on stdin are named <stdin>:LINE");
    snprintf(path, sizeof(path), "%s/bad.jsonl", tmpdir());
    rc = run("analyze --compact", path, &out, &err);
    SW_CHECK(rc == 0 && strstr(err.data, "<stdin>:2: field \"rank\" is -3") != NULL,
             "exit %d, stderr %.300s", rc, err.data);

    sw_check_case("the first missing file stops analyze");
    rc = run("analyze @F/gen1.jsonl @T/nope.jsonl", NULL, &out, &err);
    SW_CHECK(rc == 1 && out.len == 0 && strstr(err.data, "nope.jsonl"),
             "exit %d, %zu bytes of stdout, stderr %.200s", rc, out.len, err.data);

    sw_buf_clear(&out);
    sw_buf_clear(&err);
    sw_buf_clear(&ref);
    end_test();
}

/* replay prints one JSON record per line; summaries come last, one per
 * job that had a sample, in the order the jobs first appeared (any event
 * type); gzip input gives the same records. */
static void test_replay_output(void **state)
{
    (void)state;
    sw_check_reset();
    make_inputs();
    sw_buf_t out, err, ref;
    sw_buf_init(&out);
    sw_buf_init(&err);
    sw_buf_init(&ref);
    char why[512];

    sw_check_case("replay two_jobs.jsonl");
    int rc = run("replay @F/two_jobs.jsonl", NULL, &ref, &err);
    SW_CHECK(rc == 0, "exit %d: %s", rc, err.data);
    json_t *recs = sw_test_parse_lines(ref.data, ref.len, why, sizeof(why));
    SW_CHECK(recs != NULL, "not JSON Lines: %s", why);
    size_t nlines = 0;
    for (size_t i = 0; i < ref.len; i++) nlines += ref.data[i] == '\n';
    SW_CHECK(ref.len && ref.data[ref.len - 1] == '\n', "output does not end with a newline");
    if (recs) {
        SW_CHECK(json_array_size(recs) == nlines, "%zu records on %zu lines", json_array_size(recs),
                 nlines);
        const char *want[] = {"trigger", "summary", "summary"};
        const char *want_job[] = {"a", "a", "b"};
        SW_CHECK(json_array_size(recs) == 3, "%zu records, expected 3", json_array_size(recs));
        for (size_t i = 0; i < json_array_size(recs) && i < 3; i++) {
            json_t *r = json_array_get(recs, i);
            const char *act = json_string_value(json_object_get(r, "action"));
            const char *job = json_string_value(json_object_get(r, "job_id"));
            SW_CHECK(json_is_object(r) && act && strcmp(act, want[i]) == 0 && job &&
                         strcmp(job, want_job[i]) == 0,
                     "record %zu: action %s job %s, expected %s %s", i + 1, act ? act : "?",
                     job ? job : "?", want[i], want_job[i]);
        }
    }
    json_decref(recs);

    sw_check_case("replay of gzip input");
    char src[1200], gz[1200];
    snprintf(src, sizeof(src), "%s/two_jobs.jsonl", sw_test_fixtures());
    snprintf(gz, sizeof(gz), "%s/two_jobs.jsonl.gz", tmpdir());
    SW_ASSERT_TRUE(gzip_file(src, gz));
    rc = run("replay @T/two_jobs.jsonl.gz", NULL, &out, &err);
    SW_CHECK(rc == 0 && out.len == ref.len && memcmp(out.data, ref.data, ref.len) == 0,
             "exit %d, output differs from the plain input (%zu vs %zu bytes)", rc, out.len,
             ref.len);

    /* first appearance by any event type: job b's first event (not a
     * sample) comes before job a's first sample; job c has no sample */
    sw_check_case("summaries in first-appearance order");
    static const char order[] =
        "{\"timestamp_ns\": 5, \"event_type\": \"oom\", \"job_id\": \"c\"}\n"
        "{\"timestamp_ns\": 5, \"event_type\": \"phase_enter\", \"job_id\": \"b\"}\n"
        "{\"timestamp_ns\": 0, \"event_type\": \"sample\", \"job_id\": \"a\", \"device_used_bytes\": 0}\n"
        "{\"timestamp_ns\": 0, \"event_type\": \"sample\", \"device_used_bytes\": 0}\n"
        "{\"timestamp_ns\": 0, \"event_type\": \"sample\", \"job_id\": \"b\", \"device_used_bytes\": 0}\n"
        "{\"timestamp_ns\": 10, \"event_type\": \"sample\", \"job_id\": \"a\", \"device_used_bytes\": 0}\n";
    char path[1200];
    snprintf(path, sizeof(path), "%s/order.jsonl", tmpdir());
    SW_ASSERT_TRUE(write_file(path, order, sizeof(order) - 1));
    rc = run("replay @T/order.jsonl", NULL, &out, &err);
    SW_CHECK(rc == 0, "exit %d: %s", rc, err.data);
    recs = sw_test_parse_lines(out.data, out.len, why, sizeof(why));
    SW_CHECK(recs != NULL, "not JSON Lines: %s", why);
    /* Job c's first event is a death marker: it opens its crash at once
     * (SPEC 8; a job never seen); the summaries below skip it. */
    SW_CHECK(recs && !strcmp(json_string_value(json_object_get(json_array_get(recs, 0), "action")),
                             "crash"),
             "the death marker of job c opened no crash");
    SW_CHECK(sw_test_drop_x8(recs) == 1, "one crash record expected");
    if (recs) {
        json_t *want = json_loads(
            "[{\"action\": \"summary\", \"job_id\": \"b\"},"
            " {\"action\": \"summary\", \"job_id\": \"a\"},"
            " {\"action\": \"summary\", \"job_id\": null}]",
            0, NULL);
        /* compare only action and job_id of each record */
        json_t *got = json_array();
        for (size_t i = 0; i < json_array_size(recs); i++) {
            json_t *r = json_array_get(recs, i);
            json_t *o = json_object();
            json_object_set(o, "action", json_object_get(r, "action"));
            json_object_set(o, "job_id", json_object_get(r, "job_id"));
            json_array_append_new(got, o);
        }
        SW_CHECK(sw_test_json_equal(got, want, false, why, sizeof(why)), "%s (got != expected)",
                 why);
        json_decref(got);
        json_decref(want);
    }
    json_decref(recs);

    sw_check_case("replay --stats");
    rc = run("replay --stats @F/gen1.jsonl", NULL, &out, &err);
    SW_CHECK(rc == 0, "exit %d", rc);
    SW_CHECK(out.len > 0, "no records");
    json_t *st = parse(&err, why, sizeof(why));
    SW_CHECK(st != NULL && json_is_object(st), "stderr is not one JSON object: %s\n%.300s", why,
             err.data);
    if (st) {
        json_t *bpr = json_object_get(st, "bytes_per_retained_sample");
        SW_CHECK(json_is_number(bpr) && json_number_value(bpr) > 0, "bytes_per_retained_sample %s",
                 bpr ? "not > 0" : "absent");
        json_t *ev = json_object_get(st, "events");
        json_t *lines = json_object_get(st, "lines");
        SW_CHECK(json_is_integer(ev) && json_is_integer(lines) &&
                     json_integer_value(ev) == json_integer_value(lines) &&
                     json_integer_value(ev) > 0,
                 "events %lld, lines %lld", (long long)json_integer_value(ev),
                 (long long)json_integer_value(lines));
        /* the counters agree with the records printed */
        long long printed = 0;
        for (const char *p = out.data; (p = strstr(p, "\"action\": \"summary\"")) != NULL; p++)
            printed++;
        json_t *recsum = json_object_get(json_object_get(st, "records"), "summary");
        SW_CHECK(json_is_integer(recsum) && json_integer_value(recsum) == printed && printed > 0,
                 "summary records %lld, printed %lld", (long long)json_integer_value(recsum),
                 printed);
    }
    json_decref(st);

    sw_check_case("replay without --stats prints nothing on stderr");
    rc = run("replay @F/gen1.jsonl", NULL, &out, &err);
    SW_CHECK(rc == 0 && err.len == 0, "exit %d, stderr %.200s", rc, err.data);

    sw_buf_clear(&out);
    sw_buf_clear(&err);
    sw_buf_clear(&ref);
    end_test();
}

/* gen writes what analyze reads; the same seed gives the same bytes. */
static void test_gen_roundtrip(void **state)
{
    (void)state;
    sw_check_reset();
    sw_buf_t out, err, again;
    sw_buf_init(&out);
    sw_buf_init(&err);
    sw_buf_init(&again);
    sw_check_case("gen | analyze");
    int rc = run("gen --ranks 4 --samples 60 --seed 7 --quiet -o @T/g.jsonl", NULL, &out, &err);
    SW_CHECK(rc == 0 && out.len == 0, "gen exit %d, stdout %zu bytes, stderr %.200s", rc, out.len,
             err.data);
    rc = run("gen --ranks 4 --samples 60 --seed 7 --quiet", NULL, &again, &err);
    SW_CHECK(rc == 0, "gen to stdout exit %d", rc);
    char path[1200];
    snprintf(path, sizeof(path), "%s/g.jsonl", tmpdir());
    sw_buf_t file;
    sw_buf_init(&file);
    SW_CHECK(sw_test_read_file(path, &file), "gen -o wrote nothing");
    SW_CHECK(file.len == again.len && memcmp(file.data, again.data, file.len) == 0,
             "gen -o and gen to stdout differ");
    rc = run("analyze --strict @T/g.jsonl", NULL, &out, &err);
    SW_CHECK(rc == 0, "analyze --strict of gen output: exit %d: %.300s", rc, err.data);
    char why[256];
    json_t *a = parse(&out, why, sizeof(why));
    SW_CHECK(a != NULL, "not JSON: %s", why);
    json_t *sus = json_object_get(a, "first_cause_suspects");
    SW_CHECK(json_array_size(sus) >= 1 &&
                 json_integer_value(json_object_get(json_array_get(sus, 0), "rank")) == 3,
             "first suspect is not the default storm rank 3");
    json_decref(a);
    sw_buf_clear(&file);
    sw_buf_clear(&out);
    sw_buf_clear(&err);
    sw_buf_clear(&again);
    end_test();
}

static int teardown(void **state)
{
    (void)state;
    if (g_tmp[0]) {
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_tmp);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
    }
    return 0;
}

/* kcat's habits: -b everywhere, bare librdkafka names for the command's one
 * client, -X list for librdkafka's property table. */
static void test_kcat_style(void **state)
{
    (void)state;
    sw_buf_t out, err;
    sw_buf_init(&out);
    sw_buf_init(&err);
    /* run -b is bootstrap.servers (and -X dump shows it). */
    SW_ASSERT_I64(run("run -b 127.0.0.1:9092 -X dump", NULL, &out, &err), 0);
    SW_ASSERT_TRUE(strstr(out.data, "\nbootstrap.servers=127.0.0.1:9092\n") ||
                   strncmp(out.data, "bootstrap.servers=127.0.0.1:9092\n", 33) == 0);
    /* produce/tail -X list: librdkafka's table, exit 0. */
    SW_ASSERT_I64(run("produce -X list", NULL, &out, &err), 0);
    SW_ASSERT_NOT_NULL(strstr(out.data, "bootstrap.servers"));
    SW_ASSERT_NOT_NULL(strstr(out.data, "acks"));
    SW_ASSERT_I64(run("tail -X list", NULL, &out, &err), 0);
    SW_ASSERT_NOT_NULL(strstr(out.data, "fetch.wait.max.ms"));
    /* Bare names go to the one client; librdkafka judges them, naming the
     * property (before anything connects: the broker address is closed). */
    SW_ASSERT_I64(run("produce -t x -b 127.0.0.1:1 -X acks=all -X bogus.prop=1", NULL, &out, &err),
                  2);
    SW_ASSERT_NOT_NULL(
        strstr(err.data, "\"kafka.producer.bogus.prop\": No such configuration property"));
    SW_ASSERT_I64(
        run("tail -t x -b 127.0.0.1:1 -X fetch.wait.max.ms=10 -X no.such=1", NULL, &out, &err), 2);
    SW_ASSERT_NOT_NULL(
        strstr(err.data, "\"kafka.consumer.no.such\": No such configuration property"));
    /* The other client's scope is refused with a reason. */
    SW_ASSERT_I64(run("tail -t x -X kafka.producer.acks=all", NULL, &out, &err), 2);
    SW_ASSERT_NOT_NULL(strstr(err.data, "tail has only a consumer"));
    sw_buf_clear(&out);
    sw_buf_clear(&err);
}

/* The wrong kind of file: one message that says what to run, exit 2. */
static void test_wrong_kind(void **state)
{
    (void)state;
    sw_buf_t out, err;
    sw_buf_init(&out);
    sw_buf_init(&err);
    char fx[1200], recs[1200], args[3000];
    snprintf(fx, sizeof(fx), "%s/gen13.jsonl", sw_test_fixtures());
    snprintf(recs, sizeof(recs), "%s/gen13.records.jsonl", tmpdir());
    snprintf(args, sizeof(args), "replay --window-samples 8 '%s'", fx);
    SW_ASSERT_I64(run(args, NULL, &out, &err), 0);
    FILE *f = fopen(recs, "w");
    SW_ASSERT_NOT_NULL(f);
    fwrite(out.data, 1, out.len, f);
    fclose(f);
    /* report fed telemetry */
    snprintf(args, sizeof(args), "report -o /dev/null '%s'", fx);
    SW_ASSERT_I64(run(args, NULL, &out, &err), 2);
    SW_ASSERT_NOT_NULL(strstr(err.data,
                              "holds telemetry events (line 1 has timestamp_ns and event_type), "
                              "not alert records: run 'stormwatch replay"));
    SW_ASSERT_NULL(strchr(strchr(err.data, '\n') + 1, '\n')); /* one line */
    /* analyze and replay fed alert records */
    const char *cmds[] = {"analyze", "replay"};
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof(args), "%s '%s'", cmds[i], recs);
        SW_ASSERT_I64(run(args, NULL, &out, &err), 2);
        SW_ASSERT_NOT_NULL(strstr(err.data,
                                  "holds alert records (replay or run output), not telemetry "
                                  "events: run 'stormwatch report"));
        SW_ASSERT_NULL(strchr(strchr(err.data, '\n') + 1, '\n'));
    }
    /* ...and the right kinds still work. */
    snprintf(args, sizeof(args), "report -o /dev/null '%s'", recs);
    SW_ASSERT_I64(run(args, NULL, &out, &err), 0);
    sw_buf_clear(&out);
    sw_buf_clear(&err);
}

/* Several jobs: the default output is the reference's (most common job),
 * stderr names the jobs left out; --job and --all-jobs answer for others. */
static void test_analyze_jobs(void **state)
{
    (void)state;
    sw_buf_t out, err;
    sw_buf_init(&out);
    sw_buf_init(&err);
    char fx[1200], args[2000];
    snprintf(fx, sizeof(fx), "%s/two_jobs.jsonl", sw_test_fixtures());
    snprintf(args, sizeof(args), "analyze --compact '%s'", fx);
    SW_ASSERT_I64(run(args, NULL, &out, &err), 0);
    SW_ASSERT_NOT_NULL(strstr(out.data, "\"job_id\": \"a\""));
    SW_ASSERT_NOT_NULL(strstr(err.data,
                              "2 jobs in the input; analysed a (the most common job_id); "
                              "left out: b (2 samples); use --job ID or --all-jobs"));
    snprintf(args, sizeof(args), "analyze --job b '%s'", fx);
    SW_ASSERT_I64(run(args, NULL, &out, &err), 0);
    SW_ASSERT_NOT_NULL(strstr(out.data, "\"job_id\": \"b\""));
    SW_ASSERT_NULL(strstr(out.data, "Multiple job_id values"));
    SW_ASSERT_I64(err.len, 0);
    snprintf(args, sizeof(args), "analyze --all-jobs '%s'", fx);
    SW_ASSERT_I64(run(args, NULL, &out, &err), 0);
    json_t *lines = sw_test_parse_lines(out.data, out.len, NULL, 0);
    SW_ASSERT_NOT_NULL(lines);
    SW_ASSERT_I64(json_array_size(lines), 2);
    SW_ASSERT_STREQ(json_string_value(json_object_get(json_array_get(lines, 0), "job_id")), "a");
    SW_ASSERT_STREQ(json_string_value(json_object_get(json_array_get(lines, 1), "job_id")), "b");
    json_decref(lines);
    snprintf(args, sizeof(args), "analyze --all-jobs --job a '%s'", fx);
    SW_ASSERT_I64(run(args, NULL, &out, &err), 2);
    sw_buf_clear(&out);
    sw_buf_clear(&err);
}

/* The answer on the first line: --format text, and the default on a
 * terminal (a pty made by script(1)); JSON stays the default in pipes. */
static void test_analyze_text(void **state)
{
    (void)state;
    sw_buf_t out, err;
    sw_buf_init(&out);
    sw_buf_init(&err);
    char fx[1200], args[2000];
    snprintf(fx, sizeof(fx), "%s/gen13.jsonl", sw_test_fixtures());
    snprintf(args, sizeof(args), "analyze --format text '%s'", fx);
    SW_ASSERT_I64(run(args, NULL, &out, &err), 0);
    SW_ASSERT_TRUE(
        strncmp(out.data, "job job-13: first cause rank 1 on node-000 GPU 1, lead ", 55) == 0);
    SW_ASSERT_NOT_NULL(strstr(out.data, " confidence, phase "));
    snprintf(args, sizeof(args), "analyze '%s'", fx);
    SW_ASSERT_I64(run(args, NULL, &out, &err), 0);
    SW_ASSERT_TRUE(out.data[0] == '{'); /* a pipe: JSON */
    char cmd[3000];
    snprintf(cmd, sizeof(cmd), "script -qec \"'%s' analyze '%s'\" /dev/null", sw_test_bin(), fx);
    SW_ASSERT_I64(sw_test_run(cmd, &out), 0);
    SW_ASSERT_NOT_NULL(strstr(out.data, "job job-13: first cause rank 1 on node-000 GPU 1"));
    snprintf(args, sizeof(args), "analyze --format yaml '%s'", fx);
    SW_ASSERT_I64(run(args, NULL, &out, &err), 2);
    SW_ASSERT_NOT_NULL(strstr(err.data, "--format \"yaml\": expected text or json"));
    sw_buf_clear(&out);
    sw_buf_clear(&err);
}
/* Progress of a long run over files: drawn on a terminal (stderr a tty,
 * through script(1)) once the run has lasted a second, never in a pipe or
 * a file. The input arrives slowly through a pipe, so that the run lasts
 * long enough whatever the machine's speed. */
static void test_progress(void **state)
{
    (void)state;
    char part[1300], cmd[4000];
    snprintf(part, sizeof(part), "%s/progress.jsonl", tmpdir());
    /* 8,000 events on each side of the pause. */
    snprintf(cmd, sizeof(cmd), "'%s' gen --ranks 16 --samples 500 --quiet -o '%s'", sw_test_bin(),
             part);
    SW_ASSERT_I64(system(cmd), 0);
    const char *slow = "sh -c \\\"(cat '%s'; sleep 1.3; cat '%s') | '%s' replay - > /dev/null\\\"";
    char inner[3000];
    snprintf(inner, sizeof(inner), slow, part, part, sw_test_bin());
    snprintf(cmd, sizeof(cmd), "script -qec \"%s\" /dev/null", inner);
    sw_buf_t out;
    sw_buf_init(&out);
    SW_ASSERT_I64(sw_test_run(cmd, &out), 0);
    if (!strstr(sw_buf_cstr(&out), "stormwatch replay: ") || !strstr(out.data, " events/s"))
        SW_FAIL("no progress line on a terminal; got: %.400s", out.data);
    /* The line is erased at the end: the last thing drawn is the erase. */
    SW_ASSERT_NOT_NULL(strstr(out.data, "\r\033[K"));
    /* Not a terminal: nothing but the run's own output. */
    snprintf(cmd, sizeof(cmd), "(cat '%s'; sleep 1.3; cat '%s') | '%s' replay - 2>&1 >/dev/null",
             part, part, sw_test_bin());
    SW_ASSERT_I64(sw_test_run(cmd, &out), 0);
    SW_ASSERT_NULL(strstr(sw_buf_cstr(&out), "events/s"));
    sw_buf_clear(&out);
}

/* A flood of made-up job ids (one sample each, 10 per real event) among
 * real jobs, replayed with --max-jobs 500: the real jobs' records are those
 * of a replay without the flood, no event is refused, the flood's one-rank
 * jobs are evicted, and the engine's state stays bounded. */
/* --help cites docs/semantics.md, a file the repository has, and never a
 * "SPEC" it does not have. */
static void test_help_cites_docs(void **state)
{
    (void)state;
    static const char *const cmds[] = {"analyze", "replay",  "run", "notify", "report",
                                       "tail",    "produce", "gen", "mock",   "demo"};
    sw_buf_t out, err;
    sw_buf_init(&out);
    sw_buf_init(&err);
    int citing = 0;
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        char args[64];
        snprintf(args, sizeof(args), "%s --help", cmds[i]);
        int rc = run(args, NULL, &out, &err);
        SW_ASSERT(rc == 0, "%s: exit %d", args, rc);
        SW_ASSERT(strstr(out.data, "SPEC") == NULL, "%s cites SPEC:\n%s", args, out.data);
        citing += strstr(out.data, "docs/semantics.md") != NULL;
    }
    SW_ASSERT(citing >= 3, "only %d commands' --help cite docs/semantics.md", citing);
    char path[1200];
    snprintf(path, sizeof(path), "%s/../../docs/semantics.md", sw_test_fixtures());
    SW_ASSERT(sw_test_read_file(path, &out), "%s does not exist", path);
    sw_buf_clear(&out);
    sw_buf_clear(&err);
}

static void test_job_id_flood(void **state)
{
    (void)state;
    char real[1300], flood[1300], cmd[4000];
    snprintf(real, sizeof(real), "%s/flood-real.jsonl", tmpdir());
    snprintf(flood, sizeof(flood), "%s/flood.jsonl", tmpdir());
    snprintf(cmd, sizeof(cmd),
             "'%s' gen --jobs 3 --ranks 16 --samples 300 --storms 2 --quiet -o '%s'", sw_test_bin(),
             real);
    SW_ASSERT_I64(system(cmd), 0);
    sw_buf_t in, fl;
    sw_buf_init(&in);
    sw_buf_init(&fl);
    SW_ASSERT_TRUE(sw_test_read_file(real, &in));
    long n = 0;
    for (const char *p = in.data; p < in.data + in.len;) {
        const char *nl = memchr(p, '\n', (size_t)(in.data + in.len - p));
        size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(in.data + in.len - p);
        sw_buf_put(&fl, p, len);
        for (int k = 0; k < 10; k++, n++)
            sw_buf_printf(
                &fl,
                "{\"event_type\": \"sample\", \"job_id\": \"flood-%ld\", \"rank\": 0, "
                "\"world_size\": 1, \"timestamp_ns\": 1763700000000000000, \"pid\": 1, "
                "\"host\": \"x\", \"device_used_bytes\": 1000, \"sampling_interval_ms\": 100}\n",
                n);
        p += len;
    }
    SW_ASSERT_TRUE(write_file(flood, fl.data, fl.len));
    sw_buf_t a, b, err;
    sw_buf_init(&a);
    sw_buf_init(&b);
    sw_buf_init(&err);
    char args[3000];
    snprintf(args, sizeof(args), "replay '%s'", real);
    SW_ASSERT_I64(run(args, NULL, &a, &err), 0);
    snprintf(args, sizeof(args), "replay --max-jobs 500 --stats '%s'", flood);
    SW_ASSERT_I64(run(args, NULL, &b, &err), 0);
    /* The real jobs' records, in order, without the flood's summaries. */
    sw_buf_t kept;
    sw_buf_init(&kept);
    for (const char *p = b.data; p && p < b.data + b.len;) {
        const char *nl = memchr(p, '\n', (size_t)(b.data + b.len - p));
        size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(b.data + b.len - p);
        if (!memmem(p, len, "\"flood-", 7)) sw_buf_put(&kept, p, len);
        p += len;
    }
    sw_buf_cstr(&kept);
    sw_buf_cstr(&a);
    if (kept.len != a.len || memcmp(kept.data, a.data, a.len) != 0)
        SW_FAIL("the real jobs' records differ with the flood (%zu bytes vs %zu)", kept.len, a.len);
    SW_ASSERT_NOT_NULL(strstr(a.data, "\"action\": \"trigger\""));
    const char *st = strstr(err.data, "\"limit_rejects\": 0, \"jobs_evicted\": ");
    if (!st) SW_FAIL("refusals or no evictions: %s", err.data);
    long evicted = atol(st + strlen("\"limit_rejects\": 0, \"jobs_evicted\": "));
    const char *eb = strstr(err.data, "\"peak_engine_bytes\": ");
    SW_ASSERT_NOT_NULL(eb);
    long peak = atol(eb + strlen("\"peak_engine_bytes\": "));
    printf(
        "flood: %ld flood jobs among 3 real ones, --max-jobs 500: %ld evicted, none refused, "
        "real records equal, peak engine state %ld bytes\n",
        n, evicted, peak);
    SW_ASSERT_TRUE(evicted > n - 550);
    SW_ASSERT_TRUE(peak < 40L * 1024 * 1024);
    sw_buf_clear(&in);
    sw_buf_clear(&fl);
    sw_buf_clear(&a);
    sw_buf_clear(&b);
    sw_buf_clear(&kept);
    sw_buf_clear(&err);
}

/* Secrets never echo (issue 28): a value given for a secret property in
 * any spelling (NAME VALUE, NAME:VALUE, NAME<tab>VALUE, a leading blank,
 * bare librdkafka names in tail and produce), and the user:password of a
 * URL (schema.registry.url, alertmanager.url) in -X dump and in errors. */
static void test_secrets_never_echo(void **state)
{
    (void)state;
    static const char *const cmds[] = {
        "run -X 'kafka.sasl.password s3cr3tA'",
        "run -X kafka.sasl.password:s3cr3tA",
        "run -X 'kafka.sasl.password\ts3cr3tA'",
        "run -X ' kafka.sasl.password s3cr3tA'",
        "run -X 'kafka.sasl.password s3cr3tA=x'",
        "run -X 'kafka.consumer.ssl.key.password:s3cr3tA'",
        "notify -X 'webhook.hmac.secret s3cr3tA'",
        "tail -t x -X sasl.password:s3cr3tA",
        "tail -t x -X 'sasl.password s3cr3tA'",
        "produce -t x -X ' ssl.key.password:s3cr3tA'",
        "run -X schema.registry.url=http://alice:s3cr3tA@127.0.0.1:1 -X dump",
        "run -X schema.registry.url=ftp://alice:s3cr3tA@127.0.0.1:1",
        "run -X 'schema.registry.url=http://alice:s3cr3tA@127.0.0.1:1,http://bob:s3cr3tA@x y'",
        "notify -b 127.0.0.1:1 -X alertmanager.url=http://alice:s3cr3tA@127.0.0.1:1 -X dump",
        "notify -b 127.0.0.1:1 -X alertmanager.url=gopher://alice:s3cr3tA@127.0.0.1:1",
    };
    sw_buf_t out, err;
    sw_buf_init(&out);
    sw_buf_init(&err);
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        int rc = run(cmds[i], NULL, &out, &err);
        SW_ASSERT(strstr(out.data ? out.data : "", "s3cr3tA") == NULL &&
                      strstr(err.data ? err.data : "", "s3cr3tA") == NULL,
                  "stormwatch %s (exit %d) echoes the secret:\n%s%s", cmds[i], rc,
                  out.data ? out.data : "", err.data ? err.data : "");
        /* It still says something useful: the property, or the redaction. */
        SW_ASSERT((out.len + err.len) > 0 && (strstr(out.data ? out.data : "", "[redacted]") ||
                                              strstr(err.data ? err.data : "", "[redacted]")),
                  "stormwatch %s: no [redacted] in\n%s%s", cmds[i], out.data ? out.data : "",
                  err.data ? err.data : "");
    }
    sw_buf_clear(&out);
    sw_buf_clear(&err);
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
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_analyze_output),
        cmocka_unit_test(test_replay_output),
        cmocka_unit_test(test_gen_roundtrip),
        cmocka_unit_test(test_kcat_style),
        cmocka_unit_test(test_wrong_kind),
        cmocka_unit_test(test_analyze_jobs),
        cmocka_unit_test(test_analyze_text),
        cmocka_unit_test(test_progress),
        cmocka_unit_test(test_job_id_flood),
        cmocka_unit_test(test_secrets_never_echo),
        cmocka_unit_test(test_help_cites_docs),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
