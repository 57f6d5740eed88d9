/*
 * sw_avrobench: Avro decoding speed of one set of telemetry events, side by
 * side in one run: today's fixed-schema path (sw_avro_decode_event with
 * avro.schema.id.telemetry), the registry path when the writer schema is
 * the reader's (identity plan: cache lookup + the same decoder), and the
 * registry path for writer schemas that need resolution (v1: fewer fields,
 * ints; v3: reordered plus an extra field; encoded by python3-avro, see
 * bench/avro.sh). Prints one Markdown table: per row the fastest round's
 * speed, and against the fixed path both the fastest rounds' ratio and
 * the median over the rounds of each round's ratio. Then the daemon's two ways
 * of finding a plan with 2 worker threads, side by side: a registry
 * lookup under one lock per message (what the workers did before) and a
 * lookup in an immutable id -> plan table without a lock (the round's
 * table they get now), each thread decoding half of the events (wall time).
 *
 * Usage: sw_avrobench V2.bin V1.bin V1.avsc V3.bin V3.avsc [SECONDS]
 * (every .bin written by tests/registry/sr_encode.py from the same events;
 * V2.bin with today's schema under id 12). SECONDS = 0: one round of the
 * single-thread rows only, for instruction counts (bench/avro.sh --ir).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sw_codec_avro.h"
#include "sw_imap.h"
#include "sw_log.h"
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
    return (double)sw_clock_ns() / 1e9;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of one pass over @p s. */
static double pass(const set_t *s, sw_avro_dec_t *dec, sw_registry_t *reg)
{
    char err[512];
    double t0 = cpu_s();
    for (size_t i = 0; i < s->n; i++) {
        const char *m = s->all.data + s->off[i];
        sw_event_t ev;
        sw_err_t rc;
        if (!reg) {
            rc = sw_avro_decode_event(dec, m, s->len[i], 12, &ev, err, sizeof(err));
        } else {
            int32_t id = 0;
            const sw_avro_plan_t *plan = NULL;
            rc = sw_avro_schema_id(m, s->len[i], &id, err, sizeof(err));
            if (!rc) rc = sw_registry_plan(reg, id, &plan, err, sizeof(err));
            if (!rc) rc = sw_avro_decode_event_plan(dec, plan, m, s->len[i], &ev, err, sizeof(err));
        }
        if (rc) die(err);
    }
    return cpu_s() - t0;
}

/* ---- 2 threads: a lock per lookup vs an immutable table ---------------- */

typedef struct mt_s {
    const set_t *s;
    size_t from, to;
    sw_avro_dec_t *dec;
    sw_registry_t *reg;    /* locked: sw_registry_plan under *lock */
    pthread_mutex_t *lock; /* NULL: the table */
    const sw_imap_t *idx;  /* id -> slot of plans */
    const sw_avro_plan_t *const *plans;
    double cpu; /* CPU seconds this thread spent */
} mt_t;

static void *mt_run(void *arg)
{
    mt_t *t = arg;
    char err[512];
    double c0 = cpu_s();
    for (size_t i = t->from; i < t->to; i++) {
        const char *m = t->s->all.data + t->s->off[i];
        sw_event_t ev;
        int32_t id = 0;
        const sw_avro_plan_t *plan = NULL;
        sw_err_t rc = sw_avro_schema_id(m, t->s->len[i], &id, err, sizeof(err));
        if (!rc && t->lock) {
            pthread_mutex_lock(t->lock);
            rc = sw_registry_plan(t->reg, id, &plan, err, sizeof(err));
            pthread_mutex_unlock(t->lock);
        } else if (!rc) {
            uint32_t k;
            if (sw_imap_get(t->idx, id, &k)) plan = t->plans[k];
            else rc = SW_ERR_AVRO;
        }
        if (!rc)
            rc = sw_avro_decode_event_plan(t->dec, plan, m, t->s->len[i], &ev, err, sizeof(err));
        if (rc) die(err);
    }
    t->cpu = cpu_s() - c0;
    return NULL;
}

/* Wall seconds of one pass over @p s by 2 threads (halves); their CPU
 * seconds together in *cpu. */
static double pass2(const set_t *s, sw_avro_dec_t **decs, sw_registry_t *reg, pthread_mutex_t *lock,
                    const sw_imap_t *idx, const sw_avro_plan_t *const *plans, double *cpu)
{
    mt_t t[2];
    pthread_t th[2];
    for (int k = 0; k < 2; k++) {
        t[k] = (mt_t){s, k * s->n / 2, (k + 1) * s->n / 2, decs[k], reg, lock, idx, plans, 0};
    }
    double t0 = now_s();
    for (int k = 0; k < 2; k++) pthread_create(&th[k], NULL, mt_run, &t[k]);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    *cpu = t[0].cpu + t[1].cpu;
    return now_s() - t0;
}

/* One pass per row, each through its own function (noipa: not folded
 * into one), so that callgrind
 * --toggle-collect=row_v3 (etc.) counts one row's instructions
 * (SECONDS = 0: one round, no 2-thread part). */
__attribute__((noipa)) static double row_fixed(const set_t *s, sw_avro_dec_t *dec)
{
    return pass(s, dec, NULL);
}
__attribute__((noipa)) static double row_identity(const set_t *s, sw_avro_dec_t *dec,
                                                  sw_registry_t *reg)
{
    return pass(s, dec, reg);
}
__attribute__((noipa)) static double row_v1(const set_t *s, sw_avro_dec_t *dec, sw_registry_t *reg)
{
    return pass(s, dec, reg);
}
__attribute__((noipa)) static double row_v3(const set_t *s, sw_avro_dec_t *dec, sw_registry_t *reg)
{
    return pass(s, dec, reg);
}

static double row(int k, const set_t *s, sw_avro_dec_t *dec, sw_registry_t *reg)
{
    switch (k) {
    case 0: return row_fixed(s, dec);
    case 1: return row_identity(s, dec, reg);
    case 2: return row_v1(s, dec, reg);
    default: return row_v3(s, dec, reg);
    }
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 6) die("usage: sw_avrobench V2.bin V1.bin V1.avsc V3.bin V3.avsc [SECONDS]");
    double secs = argc > 6 ? atof(argv[6]) : 3.0;
    set_t v2 = {0}, v1 = {0}, v3 = {0};
    char err[512];
    load_bin(argv[1], &v2);
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
    if (sw_registry_add(reg, 12, sw_schema_telemetry_event, sw_schema_telemetry_event_len, err,
                        sizeof(err)) ||
        sw_registry_add(reg, 11, s1.data, s1.len, err, sizeof(err)) ||
        sw_registry_add(reg, 13, s3.data, s3.len, err, sizeof(err)))
        die(err);
    sw_avro_dec_t *dec = sw_avro_dec_new();
    /* Rounds that measure every row in turn (one pass each), so that load
     * from other processes hits all rows alike; per row the fastest of the
     * rounds' CPU time (this thread only), the least disturbed. */
    const set_t *sets[4] = {&v2, &v2, &v1, &v3};
    sw_registry_t *regs[4] = {NULL, reg, reg, reg};
    enum { ROUNDS_MAX = 4096 };
    static double t[4][ROUNDS_MAX];
    int rounds = 0;
    double start = now_s();
    int min_rounds = secs > 0 ? 15 : 1;
    while (rounds < ROUNDS_MAX && (rounds < min_rounds || now_s() - start < secs)) {
        for (int k = 0; k < 4; k++) t[k][rounds] = row(k, sets[k], dec, regs[k]);
        rounds++;
    }
    /* Paired: each round's row speed / fixed speed (the rows of a round run
     * back to back, so load that drifts between rounds hits both), the
     * median over the rounds; steadier than the best rounds on a loaded
     * machine, where one row can miss the quiet moments. */
    static double pr[4][ROUNDS_MAX];
    double paired[4];
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < rounds; i++)
            pr[k][i] = ((double)sets[k]->n / t[k][i]) / ((double)sets[0]->n / t[0][i]);
        qsort(pr[k], (size_t)rounds, sizeof(double), dbl_cmp);
        paired[k] = pr[k][rounds / 2];
    }
    double rate[4];
    for (int k = 0; k < 4; k++) {
        qsort(t[k], (size_t)rounds, sizeof(double), dbl_cmp);
        rate[k] = (double)sets[k]->n / t[k][0]; /* the fastest round: least disturbed */
    }
    double fixed = rate[0], ident = rate[1], r1 = rate[2], r3 = rate[3];
    double b2 = (double)v2.all.len / (double)v2.n - 4, b1 = (double)v1.all.len / (double)v1.n - 4,
           b3 = (double)v3.all.len / (double)v3.n - 4;
    printf(
        "| Avro decoding, %zu events, best of %d interleaved rounds (CPU time) | bytes/event | "
        "events/s | vs fixed id | paired vs fixed (median of rounds) |\n"
        "|---|---|---|---|---|\n",
        v2.n, rounds);
    printf("| fixed id (avro.schema.id.telemetry, no registry) | %.0f | %.2f M | 1.00 | 1.00 |\n",
           b2, fixed / 1e6);
    printf("| registry, writer = reader schema (identity plan) | %.0f | %.2f M | %.2f | %.2f |\n",
           b2, ident / 1e6, ident / fixed, paired[1]);
    printf(
        "| registry, writer v1 (13 of the 24 fields, ints; resolved) | %.0f | %.2f M | %.2f | "
        "%.2f |\n",
        b1, r1 / 1e6, r1 / fixed, paired[2]);
    printf(
        "| registry, writer v3 (24 fields reversed + 1; resolved) | %.0f | %.2f M | %.2f | %.2f "
        "|\n",
        b3, r3 / 1e6, r3 / fixed, paired[3]);

    if (secs <= 0) {
        sw_avro_dec_destroy(dec);
        sw_registry_destroy(reg);
        return 0;
    }
    /* 2 threads, interleaved: before (a lock per lookup) and now (the
     * round's table), identity plan (v2) and resolved (v3). */
    sw_avro_dec_t *decs[2] = {sw_avro_dec_new(), sw_avro_dec_new()};
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    sw_imap_t idx;
    sw_imap_init(&idx);
    const sw_avro_plan_t *plans[3];
    int32_t ids[3] = {11, 12, 13};
    for (int k = 0; k < 3; k++) {
        if (sw_registry_plan(reg, ids[k], &plans[k], err, sizeof(err))) die(err);
        sw_imap_put(&idx, ids[k], (uint32_t)k);
    }
    const set_t *msets[4] = {&v2, &v2, &v3, &v3};
    static double mt[4][ROUNDS_MAX], mc[4][ROUNDS_MAX];
    int mrounds = 0;
    start = now_s();
    while (mrounds < ROUNDS_MAX && (mrounds < 15 || now_s() - start < secs)) {
        for (int k = 0; k < 4; k++)
            mt[k][mrounds] = pass2(msets[k], decs, reg, k % 2 == 0 ? &lock : NULL, &idx, plans,
                                   &mc[k][mrounds]);
        mrounds++;
    }
    /* Paired: each round's now / before (rows run back to back, so load
     * that drifts hits both), the median over the rounds. */
    static double pw[2][ROUNDS_MAX], pc[2][ROUNDS_MAX];
    for (int q = 0; q < 2; q++) {
        for (int i = 0; i < mrounds; i++) {
            pw[q][i] = mt[2 * q][i] / mt[2 * q + 1][i];
            pc[q][i] = mc[2 * q][i] / mc[2 * q + 1][i];
        }
        qsort(pw[q], (size_t)mrounds, sizeof(double), dbl_cmp);
        qsort(pc[q], (size_t)mrounds, sizeof(double), dbl_cmp);
    }
    double mrate[4], crate[4];
    for (int k = 0; k < 4; k++) {
        qsort(mt[k], (size_t)mrounds, sizeof(double), dbl_cmp);
        qsort(mc[k], (size_t)mrounds, sizeof(double), dbl_cmp);
        mrate[k] = (double)msets[k]->n / mt[k][0]; /* the fastest round (wall time) */
        crate[k] = (double)msets[k]->n / mc[k][0]; /* per CPU second of both threads */
    }
    printf(
        "\n| Avro decoding with 2 worker threads, %zu events, best of %d interleaved rounds | events/s (wall) | events per CPU s | now / before (wall, CPU) |\n"
        "|---|---|---|---|\n",
        v2.n, mrounds);
    const char *row[4] = {"before: registry lookup under one lock per message, writer = reader",
                          "now: the round's id -> plan table, no lock, writer = reader",
                          "before: registry lookup under one lock per message, writer v3",
                          "now: the round's id -> plan table, no lock, writer v3"};
    for (int k = 0; k < 4; k++)
        printf("| %s | %.2f M | %.2f M | %.2f, %.2f |\n", row[k], mrate[k] / 1e6, crate[k] / 1e6,
               mrate[k] / mrate[k & ~1], crate[k] / crate[k & ~1]);
    printf(
        "\nPaired (median over the rounds of each round's now / before): writer = reader "
        "%.2f wall, %.2f CPU; writer v3 %.2f wall, %.2f CPU\n",
        pw[0][mrounds / 2], pc[0][mrounds / 2], pw[1][mrounds / 2], pc[1][mrounds / 2]);
    sw_imap_clear(&idx);
    sw_avro_dec_destroy(decs[0]);
    sw_avro_dec_destroy(decs[1]);
    sw_avro_dec_destroy(dec);
    sw_registry_destroy(reg);
    return 0;
}
