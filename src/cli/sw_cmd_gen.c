/*
 * `stormwatch gen`: deterministic synthetic telemetry (sw_gen) as JSON
 * Lines, plain or gzip, to stdout or a file, plus the ground truth of the
 * injected storms with --truth. Holds no generation logic: options in,
 * bytes out, one summary line on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "sw_gen.h"
#include "sw_gen_crash.h"
#include "sw_cli.h"
#include "sw_progress.h"
#include "sw_cmds.h"

/* Bytes collected before each write. */
#define GEN_CHUNK ((size_t)1 << 20)

/* Where events go: a FILE, or a gzip stream over a file or stdout. */
typedef struct gen_out_s {
    const char *name; /* for messages */
    FILE *f;          /* plain output (stdout or owned) */
    bool own_f;
    gzFile gz; /* gzip output (owned) */
} gen_out_t;

static void usage(FILE *f)
{
    sw_gen_opts_t d;
    sw_gen_opts_default(&d);
    fprintf(
        f,
        "Usage: stormwatch gen [OPTIONS]\n"
        "\n"
        "Writes deterministic synthetic TelemetryEvent v3 (or v4) JSON Lines in arrival order:\n"
        "jobs of ranks (8 per host) sampling device memory (a 28-36 GiB baseline, a\n"
        "~1.5 GiB training-step sawtooth and noise, never a qualifying spike), with\n"
        "memory storms that start on one rank, rise by --storm-bytes over 2-3 samples,\n"
        "spread to every other rank of the job and drop back after ~3 s. The same\n"
        "options and --seed give the same bytes. The analysis separates the storm rank\n"
        "from the others with high confidence when --spread-ms is at least ~3 intervals.\n"
        "\n"
        "Options:\n"
        "  --ranks R           ranks per job, 1..131072 (default %lld)\n"
        "  --samples N         samples per rank (default %lld)\n"
        "  --jobs J            jobs, ids \"<prefix>-<j>\" (default %lld)\n"
        "  --seed S            PRNG seed, 0..2^63-1 (default %llu)\n"
        "  --storm-rank K      rank where every storm starts; -1 = a seeded random rank\n"
        "                      per storm (default 3, or ranks-1 with fewer than 4 ranks)\n"
        "  --storms S          storms per job, 0 = none; the first at --storm-at, the\n"
        "                      rest evenly spaced after it, never overlapping (default %lld)\n"
        "  --interval-ms MS    sampling interval (default %lld)\n"
        "  --jitter F          sample time jitter, fraction of the interval, 0..0.45\n"
        "                      (default %.2f)\n"
        "  --skew-ms MS        clock skew of each rank, uniform in +-MS (default %lld)\n"
        "  --start-ns NS       job start on the true clock (default %lld)\n"
        "  --storm-at F        first storm at fraction F of the timeline, 0..1 (default %.1f)\n"
        "  --spread-ms MS      rank r is hit MS*(1+ring_distance/8) + uniform(0,MS/2)\n"
        "                      after the storm rank (default %lld)\n"
        "  --storm-bytes B     rise of a storm in bytes, 2..40 GiB (default %lld)\n"
        "  --phases            emit phase_enter/phase_exit events (train/forward,\n"
        "                      train/backward) around every training step of 10 samples\n"
        "  --duplicates RATE   probability that a sample is delivered twice, 0..1 (default 0)\n"
        "  --late RATE         probability that a sample arrives 2-5 intervals late,\n"
        "                      out of order within its rank, 0..1 (default 0)\n"
        "  --rise-samples N    a storm rises in N equal steps, 1..8, so that its crossing\n"
        "                      sample moves as the rise goes on (default: 2-3 steps, the\n"
        "                      first one crossing)\n"
        "  --storm-gap-ms MS   storms in a row MS apart (default: evenly spaced)\n"
        "  --tie-ranks K       K ranks (the storm rank and the next ones on the ring) rise\n"
        "                      on the storm rank's own sample: a tie (default 0)\n"
        "  --late-first-ms MS  every sample of the storm ranks arrives MS late: a late\n"
        "                      collector on the first rank, 0..60000 (default 0)\n"
        "  --restarts N        N ranks restart once (new pid and session, memory down to\n"
        "                      ~1 GiB, climbing back to the working set) at --restart-at\n"
        "  --job-restart       every rank of the job restarts at --restart-at\n"
        "  --restart-at F      restarts at fraction F of the timeline (default 0.2)\n"
        "  --leaks N           N ranks leak slowly (+6 GiB over 60 s, then freed) from\n"
        "                      --leak-at F (default 0.2); restarts and leaks end 10 s\n"
        "                      before the first storm\n"
        "  --overlap           storms in a row --storm-gap-ms apart may overlap: the next\n"
        "                      starts while the previous one still spreads (a slow wave:\n"
        "                      raise --spread-ms); a rank hit by both rises twice\n"
        "  --loss RATE         probability that a sample is lost, 0..0.5 (default 0)\n"
        "  --gaps N            collector gaps per rank, 0..8: 2-5 s without samples at\n"
        "                      seeded times, never over a storm rank's own rise (default 0)\n"
        "  --lone              every storm stays on its own rank (a lone spike: no storm)\n"
        "  --schema-version V  TelemetryEvent version written: 3, or 4 (allocator\n"
        "                      counters null and metadata.memory_capabilities, as\n"
        "                      stormlog's producers write them today) (default 3)\n"
        "  --job-prefix P      job id prefix, printable ASCII (default \"%s\")\n"
        "  -o, --output FILE   write to FILE instead of standard output\n"
        "  -z, --gzip          gzip the output\n"
        "  --truth FILE        write the ground truth as JSON Lines, one per job and storm:\n"
        "                      job_id, storm, rank, onset_timestamp_ns, first_hit_rank,\n"
        "                      first_hit_timestamp_ns (and tie_ranks with a tie); then one\n"
        "                      per restart or leak: kind, job_id, rank, start_timestamp_ns,\n"
        "                      end_timestamp_ns (none of them may page)\n"
        "  --quiet             no summary line on standard error\n"
        "  --crash SCENARIO    failures instead of storms: cascade (a rank fills\n"
        "                      its GPU 60-120 s from 85%% to full and dies of OOM, 1-4\n"
        "                      more die 0.05-5 s later by marker or silently, every\n"
        "                      survivor's NCCL watchdog fires --watchdog-s later),\n"
        "                      silent-first (the first death sends no marker), nocap\n"
        "                      (no device_total_bytes), plateau, peak (negative\n"
        "                      controls) or outage (collector outages); host clocks\n"
        "                      +-3 s (--skew-ms), delivery delays up to 10 s per host,\n"
        "                      sampling every --interval-ms (default 200); --truth\n"
        "                      names the first death and who must be warned by when\n"
        "  --watchdog-s S      with --crash: watchdog errors S after the first death\n"
        "                      (default 600)\n"
        "  --fleet-hosts N     the jobs share a fleet of N hosts (node-000..): job j's\n"
        "                      hosts are the next ones after job j-1's, wrapping\n"
        "                      (default: hosts of its own per job)\n"
        "  --bad-host H        with --fleet-hosts: fleet host H runs every job's first\n"
        "                      storm rank (with --crash: its first death), the other\n"
        "                      hosts rotate: a repeat offender for 'report --fleet'\n"
        "  -h, --help          show this help\n"
        "\n"
        "Exit status: 0 ok, 1 write failure, 2 usage error.\n",
        (long long)d.ranks, (long long)d.samples, (long long)d.jobs, (unsigned long long)d.seed,
        (long long)d.storms, (long long)d.interval_ms, d.jitter, (long long)d.skew_ms,
        (long long)d.start_ns, d.storm_at, (long long)d.spread_ms, (long long)d.storm_bytes,
        d.job_prefix);
}

static bool out_open(gen_out_t *out, const char *path, bool gzip)
{
    memset(out, 0, sizeof(*out));
    out->name = path ? path : "standard output";
    if (gzip) {
        int fd = path ? -1 : dup(STDOUT_FILENO);
        out->gz = path ? gzopen(path, "wb") : (fd >= 0 ? gzdopen(fd, "wb") : NULL);
        if (!out->gz && fd >= 0) close(fd);
        return out->gz != NULL;
    }
    if (!path) {
        out->f = stdout;
        return true;
    }
    out->f = fopen(path, "wb");
    out->own_f = true;
    return out->f != NULL;
}

static bool out_write(gen_out_t *out, const char *data, size_t len)
{
    if (len == 0) return true;
    if (out->gz) return gzwrite(out->gz, data, (unsigned)len) == (int)len;
    return fwrite(data, 1, len, out->f) == len;
}

/* @returns false when a buffered write or the close failed. */
static bool out_close(gen_out_t *out)
{
    bool ok = true;
    if (out->gz) ok = gzclose(out->gz) == Z_OK;
    if (out->f) {
        if (fflush(out->f) != 0 || ferror(out->f)) ok = false;
        if (out->own_f && fclose(out->f) != 0) ok = false;
    }
    memset(out, 0, sizeof(*out));
    return ok;
}

static bool write_truth(const sw_gen_t *gen, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "stormwatch gen: cannot open %s: %s\n", path, strerror(errno));
        return false;
    }
    const sw_gen_storm_t *storms;
    size_t n = sw_gen_truth(gen, &storms);
    sw_buf_t buf;
    sw_buf_init(&buf);
    for (size_t i = 0; i < n; i++) sw_gen_truth_json(&storms[i], &buf);
    const sw_gen_other_t *other;
    size_t no = sw_gen_truth_other(gen, &other);
    for (size_t i = 0; i < no; i++) sw_gen_other_json(&other[i], &buf);
    bool ok = fwrite(buf.data, 1, buf.len, f) == buf.len;
    if (fclose(f) != 0) ok = false;
    if (!ok) fprintf(stderr, "stormwatch gen: write to %s failed: %s\n", path, strerror(errno));
    sw_buf_clear(&buf);
    return ok;
}

/* The summary line: jobs, ranks, events and the storm ranks per job (the
 * first few jobs only, so that it stays one line). */
static void print_summary(const sw_gen_t *gen, const sw_gen_opts_t *opts)
{
    sw_gen_stats_t st;
    sw_gen_stats(gen, &st);
    const sw_gen_storm_t *storms;
    size_t n = sw_gen_truth(gen, &storms);
    sw_buf_t line;
    sw_buf_init(&line);
    sw_buf_printf(&line,
                  "stormwatch gen: %lld job%s x %lld ranks, %llu events written (%llu samples, "
                  "%llu phase events, %llu duplicates, %llu late); storm ranks: ",
                  (long long)opts->jobs, opts->jobs == 1 ? "" : "s", (long long)opts->ranks,
                  (unsigned long long)st.events, (unsigned long long)st.samples,
                  (unsigned long long)st.phases, (unsigned long long)st.duplicates,
                  (unsigned long long)st.late);
    if (n == 0) sw_buf_puts(&line, "none");
    const int64_t max_jobs = 4, max_storms = 16;
    for (size_t i = 0; i < n; i++) {
        const sw_gen_storm_t *t = &storms[i];
        if (t->job >= max_jobs) {
            sw_buf_printf(&line, " ... (%lld jobs)", (long long)opts->jobs);
            break;
        }
        if (t->storm >= max_storms) {
            if (t->storm == max_storms) sw_buf_puts(&line, ",...");
            continue;
        }
        if (t->storm == 0) sw_buf_printf(&line, "%s%s: ", t->job ? "; " : "", t->job_id);
        sw_buf_printf(&line, "%s%lld", t->storm ? "," : "", (long long)t->rank);
    }
    fprintf(stderr, "%s\n", sw_buf_cstr(&line));
    sw_buf_clear(&line);
}

enum {
    OPT_RANKS = 256,
    OPT_SAMPLES,
    OPT_JOBS,
    OPT_SEED,
    OPT_STORM_RANK,
    OPT_STORMS,
    OPT_INTERVAL,
    OPT_JITTER,
    OPT_SKEW,
    OPT_START,
    OPT_STORM_AT,
    OPT_SPREAD,
    OPT_STORM_BYTES,
    OPT_PHASES,
    OPT_DUPLICATES,
    OPT_LATE,
    OPT_PREFIX,
    OPT_RISE,
    OPT_GAP,
    OPT_TIE,
    OPT_LATE_FIRST,
    OPT_RESTARTS,
    OPT_JOB_RESTART,
    OPT_RESTART_AT,
    OPT_LEAKS,
    OPT_LEAK_AT,
    OPT_SCHEMA_VERSION,
    OPT_OVERLAP,
    OPT_LOSS,
    OPT_GAPS,
    OPT_LONE,
    OPT_TRUTH,
    OPT_QUIET,
    OPT_CRASH,
    OPT_WATCHDOG,
    OPT_FLEET_HOSTS,
    OPT_BAD_HOST
};

int sw_cmd_gen(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"ranks", required_argument, NULL, OPT_RANKS},
        {"samples", required_argument, NULL, OPT_SAMPLES},
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"seed", required_argument, NULL, OPT_SEED},
        {"storm-rank", required_argument, NULL, OPT_STORM_RANK},
        {"storms", required_argument, NULL, OPT_STORMS},
        {"interval-ms", required_argument, NULL, OPT_INTERVAL},
        {"jitter", required_argument, NULL, OPT_JITTER},
        {"skew-ms", required_argument, NULL, OPT_SKEW},
        {"start-ns", required_argument, NULL, OPT_START},
        {"storm-at", required_argument, NULL, OPT_STORM_AT},
        {"spread-ms", required_argument, NULL, OPT_SPREAD},
        {"storm-bytes", required_argument, NULL, OPT_STORM_BYTES},
        {"phases", no_argument, NULL, OPT_PHASES},
        {"duplicates", required_argument, NULL, OPT_DUPLICATES},
        {"late", required_argument, NULL, OPT_LATE},
        {"job-prefix", required_argument, NULL, OPT_PREFIX},
        {"rise-samples", required_argument, NULL, OPT_RISE},
        {"storm-gap-ms", required_argument, NULL, OPT_GAP},
        {"tie-ranks", required_argument, NULL, OPT_TIE},
        {"late-first-ms", required_argument, NULL, OPT_LATE_FIRST},
        {"restarts", required_argument, NULL, OPT_RESTARTS},
        {"job-restart", no_argument, NULL, OPT_JOB_RESTART},
        {"restart-at", required_argument, NULL, OPT_RESTART_AT},
        {"leaks", required_argument, NULL, OPT_LEAKS},
        {"leak-at", required_argument, NULL, OPT_LEAK_AT},
        {"schema-version", required_argument, NULL, OPT_SCHEMA_VERSION},
        {"overlap", no_argument, NULL, OPT_OVERLAP},
        {"loss", required_argument, NULL, OPT_LOSS},
        {"gaps", required_argument, NULL, OPT_GAPS},
        {"lone", no_argument, NULL, OPT_LONE},
        {"output", required_argument, NULL, 'o'},
        {"gzip", no_argument, NULL, 'z'},
        {"truth", required_argument, NULL, OPT_TRUTH},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"crash", required_argument, NULL, OPT_CRASH},
        {"watchdog-s", required_argument, NULL, OPT_WATCHDOG},
        {"fleet-hosts", required_argument, NULL, OPT_FLEET_HOSTS},
        {"bad-host", required_argument, NULL, OPT_BAD_HOST},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = "gen";
    sw_gen_opts_t o;
    sw_gen_opts_default(&o);
    const char *out_path = NULL, *truth_path = NULL;
    bool gzip = false, quiet = false;
    int64_t seed = (int64_t)o.seed;
    /* SPEC 8 scenarios (sw_gen_crash.c): --crash, and its own defaults for
     * the options it shares with the storms unless they are given. */
    sw_genx_opts_t xo;
    sw_genx_opts_default(&xo);
    bool crash = false, iv_set = false, skew_set = false;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:zh", lopts, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case OPT_RANKS: ok = sw_cli_i64(cmd, "--ranks", optarg, 1, 131072, &o.ranks); break;
        case OPT_SAMPLES:
            ok = sw_cli_i64(cmd, "--samples", optarg, 1, 100000000, &o.samples);
            break;
        case OPT_JOBS: ok = sw_cli_i64(cmd, "--jobs", optarg, 1, 100000, &o.jobs); break;
        case OPT_SEED:
            ok = sw_cli_i64(cmd, "--seed", optarg, 0, INT64_MAX, &seed);
            o.seed = (uint64_t)seed;
            break;
        case OPT_STORM_RANK:
            ok = sw_cli_i64(cmd, "--storm-rank", optarg, -1, 131071, &o.storm_rank);
            break;
        case OPT_STORMS: ok = sw_cli_i64(cmd, "--storms", optarg, 0, 10000, &o.storms); break;
        case OPT_INTERVAL:
            ok = sw_cli_i64(cmd, "--interval-ms", optarg, 1, 3600000, &o.interval_ms);
            iv_set = true;
            break;
        case OPT_JITTER: ok = sw_cli_dbl(cmd, "--jitter", optarg, 0.0, 0.45, &o.jitter); break;
        case OPT_SKEW:
            ok = sw_cli_i64(cmd, "--skew-ms", optarg, 0, 3600000, &o.skew_ms);
            skew_set = true;
            break;
        case OPT_START:
            ok = sw_cli_i64(cmd, "--start-ns", optarg, 0, INT64_MAX / 2, &o.start_ns);
            break;
        case OPT_STORM_AT: ok = sw_cli_dbl(cmd, "--storm-at", optarg, 0.0, 1.0, &o.storm_at); break;
        case OPT_SPREAD:
            ok = sw_cli_i64(cmd, "--spread-ms", optarg, 0, 3600000, &o.spread_ms);
            break;
        case OPT_STORM_BYTES:
            ok = sw_cli_i64(cmd, "--storm-bytes", optarg, 2LL << 30, 40LL << 30, &o.storm_bytes);
            break;
        case OPT_PHASES: o.phases = true; break;
        case OPT_DUPLICATES:
            ok = sw_cli_dbl(cmd, "--duplicates", optarg, 0.0, 1.0, &o.duplicates);
            break;
        case OPT_LATE: ok = sw_cli_dbl(cmd, "--late", optarg, 0.0, 1.0, &o.late); break;
        case OPT_PREFIX: o.job_prefix = optarg; break;
        case OPT_RISE: ok = sw_cli_i64(cmd, "--rise-samples", optarg, 0, 8, &o.rise_samples); break;
        case OPT_GAP:
            ok = sw_cli_i64(cmd, "--storm-gap-ms", optarg, 0, 3600000, &o.storm_gap_ms);
            break;
        case OPT_TIE: ok = sw_cli_i64(cmd, "--tie-ranks", optarg, 0, 131072, &o.tie_ranks); break;
        case OPT_LATE_FIRST:
            ok = sw_cli_i64(cmd, "--late-first-ms", optarg, 0, 60000, &o.late_first_ms);
            break;
        case OPT_RESTARTS:
            ok = sw_cli_i64(cmd, "--restarts", optarg, 0, 131072, &o.restarts);
            break;
        case OPT_JOB_RESTART: o.job_restart = true; break;
        case OPT_RESTART_AT:
            ok = sw_cli_dbl(cmd, "--restart-at", optarg, 0.0, 1.0, &o.restart_at);
            break;
        case OPT_LEAKS: ok = sw_cli_i64(cmd, "--leaks", optarg, 0, 131072, &o.leaks); break;
        case OPT_LEAK_AT: ok = sw_cli_dbl(cmd, "--leak-at", optarg, 0.0, 1.0, &o.leak_at); break;
        case OPT_SCHEMA_VERSION:
            ok = sw_cli_i64(cmd, "--schema-version", optarg, 3, 4, &o.schema_version);
            break;
        case OPT_OVERLAP: o.overlap = true; break;
        case OPT_LOSS: ok = sw_cli_dbl(cmd, "--loss", optarg, 0.0, 0.5, &o.loss); break;
        case OPT_GAPS: ok = sw_cli_i64(cmd, "--gaps", optarg, 0, 8, &o.gaps); break;
        case OPT_LONE: o.lone = true; break;
        case 'o': out_path = optarg; break;
        case 'z': gzip = true; break;
        case OPT_TRUTH: truth_path = optarg; break;
        case OPT_QUIET: quiet = true; break;
        case OPT_CRASH:
            crash = true;
            if (!sw_genx_scenario_parse(optarg, &xo.scenario)) {
                fprintf(stderr,
                        "stormwatch gen: --crash '%s' is not a scenario (expected cascade, "
                        "silent-first, nocap, plateau, peak or outage)\n",
                        optarg);
                return SW_EXIT_USAGE;
            }
            break;
        case OPT_WATCHDOG:
            ok = sw_cli_i64(cmd, "--watchdog-s", optarg, 60, 3600, &xo.watchdog_s);
            break;
        case OPT_FLEET_HOSTS:
            ok = sw_cli_i64(cmd, "--fleet-hosts", optarg, 1, 100000, &o.fleet_hosts);
            break;
        case OPT_BAD_HOST: ok = sw_cli_i64(cmd, "--bad-host", optarg, 0, 99999, &o.bad_host); break;
        case 'h': usage(stdout); return SW_EXIT_OK;
        default: return sw_cli_bad_option(cmd, argc, argv, optind, optopt);
        }
        if (!ok) return SW_EXIT_USAGE;
    }
    if (optind < argc) {
        fprintf(stderr, "stormwatch gen: unexpected argument '%s' (see 'stormwatch gen --help')\n",
                argv[optind]);
        return SW_EXIT_USAGE;
    }

    if (crash) {
        xo.ranks = o.ranks;
        xo.jobs = o.jobs;
        xo.seed = o.seed;
        if (iv_set) xo.interval_ms = o.interval_ms;
        if (skew_set) xo.skew_ms = o.skew_ms;
        xo.start_ns = o.start_ns;
        xo.fleet_hosts = o.fleet_hosts;
        xo.bad_host = o.bad_host;
        if (o.job_prefix && strcmp(o.job_prefix, "job") != 0) xo.job_prefix = o.job_prefix;
        return sw_cmd_gen_crash(&xo, out_path, gzip, truth_path, quiet);
    }
    char errstr[512];
    sw_gen_t *gen = sw_gen_new(&o, errstr, sizeof(errstr));
    if (!gen) {
        fprintf(stderr, "stormwatch gen: %s\n", errstr);
        return SW_EXIT_USAGE;
    }
    int rc = SW_EXIT_OK;
    gen_out_t out;
    sw_buf_t buf;
    sw_buf_init(&buf);
    if (truth_path && !write_truth(gen, truth_path)) {
        sw_gen_destroy(gen);
        return SW_EXIT_RUNTIME;
    }
    if (!out_open(&out, out_path, gzip)) {
        fprintf(stderr, "stormwatch gen: cannot open %s: %s\n", out.name, strerror(errno));
        sw_gen_destroy(gen);
        return SW_EXIT_RUNTIME;
    }
    bool ok = true;
    sw_progress_t prog;
    /* Progress only when the events go to a file: on a terminal stdout
     * they are the output. */
    sw_progress_start(&prog, "gen", "events", 0);
    if (!out_path || !strcmp(out_path, "-")) prog.on = false;
    uint64_t events = 0, written = 0;
    while (ok && sw_gen_next(gen, &buf)) {
        sw_progress_tick(&prog, ++events, written + buf.len);
        if (buf.len >= GEN_CHUNK) {
            ok = out_write(&out, buf.data, buf.len);
            written += buf.len;
            buf.len = 0;
        }
    }
    sw_progress_end(&prog);
    if (ok) ok = out_write(&out, buf.data, buf.len);
    const char *name = out.name;
    if (!out_close(&out)) ok = false;
    if (!ok) {
        fprintf(stderr, "stormwatch gen: write to %s failed: %s\n", name, strerror(errno));
        rc = SW_EXIT_RUNTIME;
    }
    if (!quiet && ok) print_summary(gen, &o);
    sw_buf_clear(&buf);
    sw_gen_destroy(gen);
    return rc;
}
