/*
 * `stormwatch gen --crash SCENARIO`: the SPEC 8 generator (sw_gen_crash.c)
 * behind gen's command line: lines to a file or stdout (gzip with -z), the
 * truth with --truth, one JSON line per job. No generation logic here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "sw_cli.h"
#include "sw_cmds.h"
#include "sw_gen_crash.h"

int sw_cmd_gen_crash(const sw_genx_opts_t *o, const char *out_path, bool gzip,
                     const char *truth_path, bool quiet)
{
    char errstr[512];
    sw_genx_t *g = sw_genx_new(o, errstr, sizeof(errstr));
    if (!g) {
        fprintf(stderr, "stormwatch gen: %s\n", errstr);
        return SW_EXIT_USAGE;
    }
    sw_buf_t buf;
    sw_buf_init(&buf);
    int rc = SW_EXIT_OK;
    if (truth_path) {
        for (size_t j = 0; j < (size_t)o->jobs; j++) sw_genx_truth_json(sw_genx_truth(g, j), &buf);
        FILE *f = fopen(truth_path, "wb");
        bool ok = f && fwrite(buf.data, 1, buf.len, f) == buf.len;
        if (f && fclose(f) != 0) ok = false;
        if (!ok) {
            fprintf(stderr, "stormwatch gen: cannot write %s: %s\n", truth_path, strerror(errno));
            sw_buf_clear(&buf);
            sw_genx_destroy(g);
            return SW_EXIT_RUNTIME;
        }
        buf.len = 0;
    }
    const char *name = out_path ? out_path : "standard output";
    FILE *f = out_path && !gzip ? fopen(out_path, "wb") : (!gzip ? stdout : NULL);
    gzFile gz = gzip ? (out_path ? gzopen(out_path, "wb") : gzdopen(dup(1), "wb")) : NULL;
    if (!f && !gz) {
        fprintf(stderr, "stormwatch gen: cannot open %s: %s\n", name, strerror(errno));
        sw_buf_clear(&buf);
        sw_genx_destroy(g);
        return SW_EXIT_RUNTIME;
    }
    bool ok = true;
    uint64_t events = 0;
    for (bool more = true; ok && more;) {
        more = sw_genx_next(g, &buf);
        events += more;
        if (buf.len >= ((size_t)1 << 20) || (!more && buf.len)) {
            ok = gz ? gzwrite(gz, buf.data, (unsigned)buf.len) == (int)buf.len
                    : fwrite(buf.data, 1, buf.len, f) == buf.len;
            buf.len = 0;
        }
    }
    if (gz && gzclose(gz) != Z_OK) ok = false;
    if (f && (fflush(f) != 0 || ferror(f))) ok = false;
    if (f && f != stdout && fclose(f) != 0) ok = false;
    if (!ok) {
        fprintf(stderr, "stormwatch gen: write to %s failed: %s\n", name, strerror(errno));
        rc = SW_EXIT_RUNTIME;
    } else if (!quiet) {
        const sw_genx_truth_t *t = sw_genx_truth(g, 0);
        fprintf(stderr, "gen: %llu events, %lld job(s) of %lld ranks, scenario %s",
                (unsigned long long)events, (long long)o->jobs, (long long)o->ranks,
                sw_genx_scenario_str(o->scenario));
        if (t->n_deaths)
            fprintf(stderr, "; %s: rank %lld dies first (%s), warn by %lld", t->job_id,
                    (long long)t->deaths[0].rank, t->deaths[0].silent ? "silently" : "oom",
                    (long long)t->warn_by_true_ns);
        fputc('\n', stderr);
    }
    sw_buf_clear(&buf);
    sw_genx_destroy(g);
    return rc;
}
