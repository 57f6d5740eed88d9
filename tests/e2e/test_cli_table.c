/*
 * The stormwatch binary ($SW_BIN) end to end: exit codes (0 ok, 1 runtime
 * failure, 2 usage or input error), help texts that list every option and
 * cite the docs, messages that name the offending command, option, value,
 * file and line: a table of command lines -> exit code and substrings of
 * stdout and stderr; kcat's habits, a file of the wrong kind, secrets never
 * echoed. "@F" in a command stands for the fixtures directory, "@T" for
 * this test's scratch directory.
 */
#include "cli_run.h"

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
        cmocka_unit_test(test_table),           cmocka_unit_test(test_kcat_style),
        cmocka_unit_test(test_wrong_kind),      cmocka_unit_test(test_secrets_never_echo),
        cmocka_unit_test(test_help_cites_docs),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
