/* Telemetry lines in memory and the generator's storm jobs (sw_lines.h). */
#include "sw_lines.h"

#include <stdlib.h>
#include <string.h>

#include "sw_gen.h"
#include "sw_testlib.h"

void sw_test_lines_add(sw_test_lines_t *l, const char *s, size_t n)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 1024;
        l->v = realloc(l->v, (size_t)l->cap * sizeof(*l->v));
        l->len = realloc(l->len, (size_t)l->cap * sizeof(*l->len));
        SW_ASSERT(l->v && l->len, "out of memory at %d lines", l->n);
    }
    l->v[l->n] = strndup(s, n);
    SW_ASSERT(l->v[l->n], "out of memory at %d lines", l->n);
    l->len[l->n++] = n;
}

void sw_test_lines_free(sw_test_lines_t *l)
{
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    free(l->len);
    memset(l, 0, sizeof(*l));
}

void sw_test_gen_storms(sw_test_lines_t *l, const char *prefix, int jobs, int ranks, int samples,
                        int storms, uint64_t seed)
{
    sw_gen_opts_t go;
    sw_gen_opts_default(&go);
    go.jobs = jobs;
    go.ranks = ranks;
    go.samples = samples;
    go.storms = storms;
    go.storm_at = 0.15;
    go.seed = seed;
    go.storm_rank = SW_GEN_STORM_RANK_RANDOM;
    go.job_prefix = prefix;
    char err[256];
    sw_gen_t *gen = sw_gen_new(&go, err, sizeof(err));
    SW_ASSERT(gen, "%s", err);
    sw_buf_t line;
    sw_buf_init(&line);
    while (sw_gen_next(gen, &line)) {
        sw_test_lines_add(l, line.data, line.len - 1);
        line.len = 0;
    }
    sw_buf_clear(&line);
    sw_gen_destroy(gen);
}
