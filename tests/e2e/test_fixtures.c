/*
 * Every case of tests/fixtures (a copy of ../shared/fixtures) through the
 * real binary: `analyze` must print NAME.batch.json exactly, and `replay`
 * with NAME.params.json must print the `summary` records of
 * NAME.stream.jsonl, compared without their `episode` and `revision` (the
 * lifecycle's counters), as SPEC 7 says since the turn-3 revision of SPEC 6
 * step 5: a fixture's trigger/update/resolve records show the turn-2
 * lifecycle, an example of the record shape, not the expected lifecycle.
 * A mismatch prints the case, the path of the first differing value and
 * both values.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_testlib.h"

static size_t g_summaries; /* summary records compared */

/* The summary records of a parsed JSON Lines array, without the
 * lifecycle's counters (a new array; the caller decrefs both). */
static json_t *summaries_only(json_t *lines)
{
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(lines, i, v)
    {
        const char *action = json_string_value(json_object_get(v, "action"));
        if (!action || strcmp(action, "summary") != 0) continue;
        json_t *c = json_deep_copy(v);
        json_object_del(c, "episode");
        json_object_del(c, "revision");
        json_array_append_new(out, c);
    }
    return out;
}

static int check_case(const char *dir, const char *name)
{
    char cmd[4096], path[2048], why[1024];
    sw_buf_t out, exp;
    sw_buf_init(&out);
    sw_buf_init(&exp);
    int failed = 0;

    /* Batch. */
    snprintf(cmd, sizeof(cmd), "'%s' analyze '%s/%s.jsonl' 2>/dev/null", sw_test_bin(), dir, name);
    int rc = sw_test_run(cmd, &out);
    snprintf(path, sizeof(path), "%s/%s.batch.json", dir, name);
    if (rc != 0 || !sw_test_read_file(path, &exp)) {
        fprintf(stderr, "FAIL %s (batch): analyze exited %d or %s unreadable\n", name, rc, path);
        failed = 1;
    } else {
        json_error_t e;
        json_t *a = json_loads(out.data, 0, &e), *b = json_loads(exp.data, 0, &e);
        if (!a || !b) {
            fprintf(stderr, "FAIL %s (batch): unparsable JSON\n", name);
            failed = 1;
        } else if (!sw_test_json_equal(a, b, false, why, sizeof(why))) {
            fprintf(stderr, "FAIL %s (batch): %s (got != expected)\n", name, why);
            failed = 1;
        }
        json_decref(a);
        json_decref(b);
    }

    /* Stream. */
    snprintf(path, sizeof(path), "%s/%s.params.json", dir, name);
    json_error_t e;
    json_t *params = json_load_file(path, 0, &e);
    long long window = 512, stale = 60000;
    if (params) {
        json_t *w = json_object_get(params, "window.samples");
        json_t *s = json_object_get(params, "stale.ms");
        if (json_is_integer(w)) window = json_integer_value(w);
        if (json_is_integer(s)) stale = json_integer_value(s);
        json_decref(params);
    }
    snprintf(cmd, sizeof(cmd),
             "'%s' replay --window-samples %lld --stale-ms %lld '%s/%s.jsonl' 2>/dev/null",
             sw_test_bin(), window, stale, dir, name);
    rc = sw_test_run(cmd, &out);
    snprintf(path, sizeof(path), "%s/%s.stream.jsonl", dir, name);
    if (rc != 0 || !sw_test_read_file(path, &exp)) {
        fprintf(stderr, "FAIL %s (stream): replay exited %d or %s unreadable\n", name, rc, path);
        failed = 1;
    } else {
        json_t *a = sw_test_parse_lines(out.data, out.len, why, sizeof(why));
        json_t *b = sw_test_parse_lines(exp.data, exp.len, why, sizeof(why));
        sw_test_drop_x8(a); /* SPEC 8's records: not compared (SPEC 8, last paragraph) */
        if (!a || !b) {
            fprintf(stderr, "FAIL %s (stream): unparsable JSON Lines: %s\n", name, why);
            failed = 1;
        } else {
            json_t *sa = summaries_only(a), *sb = summaries_only(b);
            if (!sw_test_json_equal(sa, sb, true, why, sizeof(why))) {
                fprintf(stderr, "FAIL %s (stream): summary %s (got != expected)\n", name, why);
                failed = 1;
            }
            g_summaries += json_array_size(sb);
            json_decref(sa);
            json_decref(sb);
        }
        json_decref(a);
        json_decref(b);
    }
    sw_buf_clear(&out);
    sw_buf_clear(&exp);
    return failed;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every fixture case, each checked to the end (all differences said). */
static void test_fixtures(void **state)
{
    (void)state;
    const char *dir = sw_test_fixtures();
    DIR *d = opendir(dir);
    SW_ASSERT(d != NULL, "cannot open fixtures directory %s", dir);
    char *names[4096];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 4096) {
        size_t len = strlen(de->d_name);
        const char *suffix = ".batch.json";
        size_t sl = strlen(suffix);
        if (len > sl && strcmp(de->d_name + len - sl, suffix) == 0)
            names[n++] = strndup(de->d_name, len - sl);
    }
    closedir(d);
    qsort(names, n, sizeof(*names), name_cmp);
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        failed += check_case(dir, names[i]);
        free(names[i]);
    }
    printf("%zu fixture cases, %d failed; %zu stream summaries compared\n", n, failed, g_summaries);
    SW_ASSERT(n > 0, "no fixture cases found in %s", dir);
    SW_ASSERT(g_summaries + 1 >= n, "only %zu summaries in %zu cases", g_summaries, n);
    SW_ASSERT(failed == 0, "%d of %zu fixture cases failed (see above)", failed, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
