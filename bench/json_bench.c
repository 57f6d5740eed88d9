/*
 * sw_jsonbench: the cost of the JSON input side of analyze/replay, without
 * the engine: reading the lines of a file (plain or gzip) with sw_input,
 * and decoding them with sw_tdec_json from memory. Each row is the fastest
 * of several interleaved rounds (CPU time of this thread), so that other
 * load on the machine hits all rows alike. Prints one Markdown table.
 *
 * Usage: sw_jsonbench [-d|-c] FILE [MAX_EVENTS] [SECONDS]
 * (FILE: JSON Lines of stormwatch gen; the first MAX_EVENTS lines, default
 * 200000, are decoded from memory; reading covers the whole file; -d:
 * decoding only; SECONDS 0: exactly 3 rounds, for perf stat; -c: no
 * timing, but every line decoded with the fast paths and with the general
 * path only, and the results compared: code, message and the event as
 * sw_event_json() writes it; exit 1 on a difference)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sw_codec_telemetry.h"
#include "sw_event_json.h"
#include "sw_input.h"
#include "sw_log.h"
#include "sw_types.h"

static void die(const char *what)
{
    fprintf(stderr, "sw_jsonbench: %s\n", what);
    exit(1);
}

static double now_s(void)
{
    return (double)sw_clock_ns() / 1e9;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds (wall) to read every line of @p path; *lines, *bytes counted. */
static double read_pass(const char *path, size_t *lines, size_t *bytes)
{
    char err[512];
    double t0 = now_s();
    sw_input_t *in = sw_input_open(path, err, sizeof(err));
    if (!in) die(err);
    const char *line;
    size_t len;
    sw_input_res_t r;
    *lines = *bytes = 0;
    while ((r = sw_input_next(in, &line, &len, err, sizeof(err))) != SW_INPUT_EOF) {
        if (r == SW_INPUT_ERROR) die(err);
        (*lines)++;
        *bytes += len + 1;
    }
    sw_input_close(in);
    return now_s() - t0;
}

typedef struct set_s {
    sw_buf_t all;
    size_t *off, *len;
    size_t n;
} set_t;

static double decode_pass(const set_t *s, sw_tdec_t *dec)
{
    char err[512];
    double t0 = cpu_s();
    for (size_t i = 0; i < s->n; i++) {
        sw_event_t ev;
        if (sw_tdec_json(dec, s->all.data + s->off[i], s->len[i], &ev, err, sizeof(err))) die(err);
    }
    return cpu_s() - t0;
}

/* -c: every line both ways. @returns the number of lines that differ. */
static size_t check_pass(const set_t *s)
{
    sw_tdec_t *fast = sw_tdec_new(), *slow = sw_tdec_new();
    sw_tdec_set_fast(slow, false);
    sw_buf_t a, b;
    sw_buf_init(&a);
    sw_buf_init(&b);
    size_t bad = 0, ok = 0;
    for (size_t i = 0; i < s->n; i++) {
        const char *text = s->all.data + s->off[i];
        sw_event_t ev_f, ev_s;
        char err_f[512] = "", err_s[512] = "";
        sw_err_t rc_f = sw_tdec_json(fast, text, s->len[i], &ev_f, err_f, sizeof(err_f));
        sw_err_t rc_s = sw_tdec_json(slow, text, s->len[i], &ev_s, err_s, sizeof(err_s));
        a.len = b.len = 0;
        if (rc_f == SW_OK) sw_event_json(&a, &ev_f);
        if (rc_s == SW_OK) sw_event_json(&b, &ev_s);
        if (rc_f != rc_s || strcmp(err_f, err_s) != 0 || a.len != b.len ||
            (a.len && memcmp(a.data, b.data, a.len) != 0)) {
            if (bad++ < 5)
                fprintf(
                    stderr,
                    "sw_jsonbench: line %zu differs: fast %d \"%s\" %.*s, general %d \"%s\" %.*s\n",
                    i + 1, (int)rc_f, err_f, (int)a.len, a.data, (int)rc_s, err_s, (int)b.len,
                    b.data);
        }
        ok += rc_f == SW_OK;
    }
    printf(
        "%s: %zu lines (%zu valid), %zu differ; fast decoder: %llu by the template, %llu by "
        "the general path\n",
        "check", s->n, ok, bad, (unsigned long long)sw_tdec_tmpl_lines(fast),
        (unsigned long long)sw_tdec_general_lines(fast));
    sw_buf_clear(&a);
    sw_buf_clear(&b);
    sw_tdec_destroy(fast);
    sw_tdec_destroy(slow);
    return bad;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    bool decode_only = argc > 1 && strcmp(argv[1], "-d") == 0;
    bool check = argc > 1 && strcmp(argv[1], "-c") == 0;
    if (decode_only || check) {
        argv++;
        argc--;
    }
    if (argc < 2) die("usage: sw_jsonbench [-d|-c] FILE [MAX_EVENTS] [SECONDS]");
    size_t max_ev = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 200000;
    double secs = argc > 3 ? atof(argv[3]) : 5.0;
    char err[512];
    set_t s;
    memset(&s, 0, sizeof(s));
    sw_buf_init(&s.all);
    sw_input_t *in = sw_input_open(argv[1], err, sizeof(err));
    if (!in) die(err);
    s.off = malloc(max_ev * sizeof(size_t));
    s.len = malloc(max_ev * sizeof(size_t));
    if (!s.off || !s.len) die("out of memory");
    const char *line;
    size_t len;
    sw_input_res_t r;
    while (s.n < max_ev && (r = sw_input_next(in, &line, &len, err, sizeof(err))) != SW_INPUT_EOF) {
        if (r == SW_INPUT_ERROR) die(err);
        if (sw_tdec_blank(line, len)) continue;
        s.off[s.n] = s.all.len;
        s.len[s.n++] = len;
        sw_buf_put(&s.all, line, len);
    }
    sw_input_close(in);
    if (check) {
        size_t bad = check_pass(&s);
        free(s.off);
        free(s.len);
        sw_buf_clear(&s.all);
        return bad ? 1 : 0;
    }
    sw_tdec_t *dec = sw_tdec_new();
    enum { ROUNDS_MAX = 1024 };
    static double td[ROUNDS_MAX], tr[ROUNDS_MAX];
    int rounds = 0;
    size_t lines = 0, bytes = 0;
    double start = now_s();
    while (rounds < ROUNDS_MAX && (rounds < 3 || (secs > 0 && now_s() - start < secs))) {
        td[rounds] = decode_pass(&s, dec);
        tr[rounds] = decode_only ? 1 : read_pass(argv[1], &lines, &bytes);
        rounds++;
    }
    qsort(td, (size_t)rounds, sizeof(double), dbl_cmp);
    qsort(tr, (size_t)rounds, sizeof(double), dbl_cmp);
    printf("| %s, best of %d rounds | ns/event | events/s | MB/s |\n|---|---|---|---|\n", argv[1],
           rounds);
    printf("| decode (sw_tdec_json, %zu events from memory, CPU) | %.0f | %.2f M | %.0f |\n", s.n,
           td[0] * 1e9 / (double)s.n, (double)s.n / td[0] / 1e6, (double)s.all.len / td[0] / 1e6);
    if (!decode_only)
        printf("| read lines (sw_input, %zu lines, wall) | %.0f | %.2f M | %.0f |\n", lines,
               tr[0] * 1e9 / (double)lines, (double)lines / tr[0] / 1e6,
               (double)bytes / tr[0] / 1e6);
    sw_tdec_destroy(dec);
    free(s.off);
    free(s.len);
    sw_buf_clear(&s.all);
    return 0;
}
