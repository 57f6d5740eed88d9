/*
 * The stormwatch binary ($SW_BIN) end to end: the outputs of analyze and
 * replay (valid JSON; gzip input reads like plain input; records one per
 * line; summaries in first-appearance order; replay --stats; --jobs, the
 * text form, progress), gen's round trip, and a flood of job ids.
 */
#include "cli_run.h"

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
        cmocka_unit_test(test_analyze_output), cmocka_unit_test(test_replay_output),
        cmocka_unit_test(test_gen_roundtrip),  cmocka_unit_test(test_analyze_jobs),
        cmocka_unit_test(test_analyze_text),   cmocka_unit_test(test_progress),
        cmocka_unit_test(test_job_id_flood),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
