/*
 * sw_avrobench: Avro decoding speed of one set of telemetry events, side by
 * side in one run: today's fixed-schema path (sw_avro_decode_event with
 * avro.schema.id.telemetry), the registry path when the writer schema is
 * the reader's (identity plan: cache lookup + the same decoder), and the
 * registry path for writer schemas that need resolution (v1: fewer fields,
 * ints; v3: reordered plus an extra field; encoded by python3-avro, see
 * bench/avro.sh). Prints one Markdown table.
 *
 * Usage: sw_avrobench EVENTS.jsonl V1.bin V1.avsc V3.bin V3.avsc [SECONDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sw_codec_avro.h"
#include "sw_codec_telemetry.h"
#include "sw_registry.h"
#include "sw_schemas.h"

typedef struct set_s {
    sw_buf_t all;
    size_t *off, *len;
    size_t n;
} set_t;

static void die(const char *what)
{
    fprintf(stderr, "sw_avrobench: %s\n", what);
    exit(1);
}

static void slurp(const char *path, sw_buf_t *b)
{
    FILE *f = fopen(path, "rb");
    if (!f) die(path);
    char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) sw_buf_put(b, tmp, n);
    fclose(f);
}

static void add(set_t *s, size_t off, size_t len)
{
    s->off = realloc(s->off, (s->n + 1) * sizeof(size_t));
    s->len = realloc(s->len, (s->n + 1) * sizeof(size_t));
    s->off[s->n] = off;
    s->len[s->n++] = len;
}

/* sr_encode.py output: 4-byte length, message. */
static void load_bin(const char *path, set_t *s)
{
    slurp(path, &s->all);
    for (size_t i = 0; i + 4 <= s->all.len;) {
        const unsigned char *p = (const unsigned char *)s->all.data + i;
        size_t l = (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
        add(s, i + 4, l);
        i += 4 + l;
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Events per second decoding @p s over and over for ~@p secs (median of 3). */
static double measure(const set_t *s, sw_avro_dec_t *dec, sw_registry_t *reg, double secs)
{
    double rate[3];
    char err[512];
    for (int r = 0; r < 3; r++) {
        double t0 = now_s(), t = t0;
        size_t done = 0;
        while (t - t0 < secs / 3) {
            for (size_t i = 0; i < s->n; i++) {
                const char *m = s->all.data + s->off[i];
                sw_event_t ev;
                sw_err_t rc;
                if (!reg) {
                    rc = sw_avro_decode_event(dec, m, s->len[i], 1, &ev, err, sizeof(err));
                } else {
                    int32_t id = 0;
                    const sw_avro_plan_t *plan = NULL;
                    rc = sw_avro_schema_id(m, s->len[i], &id, err, sizeof(err));
                    if (!rc) rc = sw_registry_plan(reg, id, &plan, err, sizeof(err));
                    if (!rc) rc = sw_avro_decode_event_plan(dec, plan, m, s->len[i], &ev, err, sizeof(err));
                }
                if (rc) die(err);
            }
            done += s->n;
            t = now_s();
        }
        rate[r] = (double)done / (t - t0);
    }
    /* median of three */
    double a = rate[0], b = rate[1], c = rate[2];
    if (a > b) { double x = a; a = b; b = x; }
    if (b > c) b = c;
    return a > b ? a : b;
}

int main(int argc, char **argv)
{
    if (argc < 6) die("usage: sw_avrobench EVENTS.jsonl V1.bin V1.avsc V3.bin V3.avsc [SECONDS]");
    double secs = argc > 6 ? atof(argv[6]) : 3.0;
    set_t v2 = {0}, v1 = {0}, v3 = {0};
    sw_buf_t json, enc;
    sw_buf_init(&json);
    sw_buf_init(&enc);
    slurp(argv[1], &json);
    sw_tdec_t *tdec = sw_tdec_new();
    char err[512];
    for (size_t i = 0; i < json.len;) {
        char *nl = memchr(json.data + i, '\n', json.len - i);
        size_t end = nl ? (size_t)(nl - json.data) : json.len;
        sw_event_t ev;
        if (end > i && sw_tdec_json(tdec, json.data + i, end - i, &ev, err, sizeof(err)) == SW_OK) {
            size_t at = v2.all.len;
            if (sw_avro_encode_event(&ev, 1, &v2.all, err, sizeof(err)) != SW_OK) die(err);
            add(&v2, at, v2.all.len - at);
        }
        i = end + 1;
    }
    load_bin(argv[2], &v1);
    load_bin(argv[4], &v3);
    sw_buf_t s1, s3;
    sw_buf_init(&s1);
    sw_buf_init(&s3);
    slurp(argv[3], &s1);
    slurp(argv[5], &s3);
    sw_registry_conf_t rc = {.reader = sw_schema_telemetry_event,
                             .reader_len = sw_schema_telemetry_event_len};
    sw_registry_t *reg = sw_registry_new(&rc);
    if (sw_registry_add(reg, 1, sw_schema_telemetry_event, sw_schema_telemetry_event_len, err,
                        sizeof(err)) ||
        sw_registry_add(reg, 11, s1.data, s1.len, err, sizeof(err)) ||
        sw_registry_add(reg, 13, s3.data, s3.len, err, sizeof(err)))
        die(err);
    sw_avro_dec_t *dec = sw_avro_dec_new();
    double fixed = measure(&v2, dec, NULL, secs);
    double ident = measure(&v2, dec, reg, secs);
    double r1 = measure(&v1, dec, reg, secs);
    double r3 = measure(&v3, dec, reg, secs);
    double b2 = (double)v2.all.len / (double)v2.n, b1 = (double)v1.all.len / (double)v1.n - 4,
           b3 = (double)v3.all.len / (double)v3.n - 4;
    printf("| Avro decoding, %zu events (median of 3) | bytes/event | events/s | vs fixed id |\n"
           "|---|---|---|---|\n", v2.n);
    printf("| fixed id (avro.schema.id.telemetry, no registry) | %.0f | %.2f M | 1.00 |\n", b2, fixed / 1e6);
    printf("| registry, writer = reader schema (identity plan) | %.0f | %.2f M | %.2f |\n", b2, ident / 1e6, ident / fixed);
    printf("| registry, writer v1 (11 fields, ints; resolved) | %.0f | %.2f M | %.2f |\n", b1, r1 / 1e6, r1 / fixed);
    printf("| registry, writer v3 (reordered + 1 field; resolved) | %.0f | %.2f M | %.2f |\n", b3, r3 / 1e6, r3 / fixed);
    sw_avro_dec_destroy(dec);
    sw_registry_destroy(reg);
    sw_tdec_destroy(tdec);
    return 0;
}
