/*
 * `stormwatch replay`: the stream analysis of SPEC 6 over JSON Lines files
 * in arrival order, printing one record per line, then one summary per job
 * at end of input. The same engine as `stormwatch run`. With
 * --output-format pagerduty|alertmanager each line is instead the request
 * body a pager would receive from `stormwatch run` with that output.format.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "sw_codec_alert.h"
#include "sw_codec_pager.h"
#include "sw_detect.h"
#include "sw_cli.h"
#include "sw_cmds.h"

typedef struct replay_s {
    sw_detector_t *det;
    sw_buf_t out;
    bool failed;
    uint64_t rejected;
    bool stats;
    uint64_t peak_bytes;    /* largest engine state seen (sampled) */
    uint64_t peak_retained; /* retained samples at that point */
    uint64_t fed;
    bool pager; /* --output-format pagerduty|alertmanager */
    bool text;  /* --output-format text */
    sw_pager_opts_t pager_opts;
    int64_t max_ts_ns; /* newest event timestamp: "now" of the summaries */
} replay_t;

/* Placeholder routing key of a preview without --routing-key. */
#define ROUTING_KEY_PLACEHOLDER "ROUTING_KEY"

/* Defaults shown are the configuration table's (@p d: its engine params). */
static void usage(FILE *f, const sw_params_t *d)
{
    fprintf(f,
            "Usage: stormwatch replay [OPTIONS] [FILE...]\n"
            "\n"
            "Stream analysis (docs/semantics.md section 3) of TelemetryEvent JSON Lines\n"
            "in arrival order, plain or gzip. Prints one record (trigger, update, resolve)\n"
            "per line as they happen, then one summary per job. FILE '-' or no FILE reads\n"
            "standard input. Input without a valid line exits 2.\n"
            "\n"
            "Options:\n"
            "  --window-samples N     samples kept per rank (default %d)\n"
            "  --stale-ms MS          empty a rank's window after MS without samples,\n"
            "                         0 = never (default %d)\n"
            "  --spike-min-bytes B    threshold floor in bytes (default %lld)\n"
            "  --spike-fraction F     fraction of a rank's peak, 0..1 (default %.2f)\n"
            "  --skew-multiplier M    skew note factor (default %d)\n"
            "  --max-jobs N           jobs tracked at once, 0 = unlimited (default %d)\n"
            "  --max-ranks-per-job N  bound on rank and world_size, 0 = the largest\n"
            "                         supported, 16777216 (default %d)\n"
            "  --strict               the first invalid line is fatal (exit 2)\n"
            "  --output-format F      json (default: the records), text (one line per\n"
            "                         record: its action and the pager's title), pagerduty or\n"
            "                         alertmanager: the request bodies `stormwatch run`\n"
            "                         writes with output.format=F (summaries that page\n"
            "                         resolve at the newest event timestamp; the others\n"
            "                         are not printed)\n"
            "  --routing-key KEY      PagerDuty routing key written into the bodies\n"
            "                         (default the placeholder \"" ROUTING_KEY_PLACEHOLDER
            "\")\n"
            "  --generator-url URL    Alertmanager generatorURL (default none)\n"
            "  --stats                print engine counters as one JSON object on stderr\n"
            "                         at the end (events, duplicates, late, retained\n"
            "                         samples, bytes of engine state, peak bytes)\n"
            "  -h, --help             show this help\n",
            (int)d->window_samples, (int)d->stale_ms, (long long)d->spike_min_bytes,
            d->spike_fraction, (int)d->skew_note_multiplier, (int)d->max_jobs,
            (int)d->max_ranks_per_job);
}

static void flush_out(replay_t *rp, bool force)
{
    if (rp->out.len == 0 || (!force && rp->out.len < 65536)) return;
    if (fwrite(rp->out.data, 1, rp->out.len, stdout) != rp->out.len) rp->failed = true;
    rp->out.len = 0;
}

static void put_record(replay_t *rp, const sw_record_t *rec)
{
    if (rp->pager) {
        rp->pager_opts.now_ns = rp->max_ts_ns;
        if (sw_pager_encode(rec, &rp->pager_opts, &rp->out) == SW_PAGER_SKIP) return;
    } else if (rp->text) {
        /* What on-call reads: the action, then the pager's title. */
        const char *a = sw_action_str(rec->action);
        sw_buf_puts(&rp->out, a);
        for (size_t k = strlen(a); k < 9; k++) sw_buf_putc(&rp->out, ' ');
        sw_pager_title(rec, &rp->out);
        if (rec->n_tied > 1) {
            sw_buf_puts(&rp->out, " [tied within one sampling interval: ranks ");
            for (size_t k = 0; k < rec->n_tied && k < 8; k++) {
                if (k) sw_buf_puts(&rp->out, ", ");
                sw_buf_put_i64(&rp->out, rec->tied_ranks[k]);
            }
            if (rec->n_tied > 8) {
                sw_buf_puts(&rp->out, " and ");
                sw_buf_put_i64(&rp->out, (int64_t)(rec->n_tied - 8));
                sw_buf_puts(&rp->out, " more");
            }
            sw_buf_putc(&rp->out, ']');
        }
    } else {
        sw_alert_json_record(&rp->out, rec);
    }
    sw_buf_putc(&rp->out, '\n');
    flush_out(rp, false);
}

static void on_summary(void *opaque, const sw_record_t *rec)
{
    put_record(opaque, rec);
}

static bool on_event(void *opaque, const sw_event_t *ev, const char *file, uint64_t line)
{
    replay_t *rp = opaque;
    const sw_record_t *rec;
    char errstr[256];
    if (ev->timestamp_ns > rp->max_ts_ns) rp->max_ts_ns = ev->timestamp_ns;
    if (sw_detect_feed(rp->det, ev, 0, &rec, errstr, sizeof(errstr)) != SW_OK) {
        fprintf(stderr, "%s:%llu: %s (skipped)\n", file, (unsigned long long)line, errstr);
        rp->rejected++;
        return true;
    }
    const char *warning = sw_detect_warning(rp->det);
    if (warning) fprintf(stderr, "stormwatch replay: warning: %s\n", warning);
    if (rec) put_record(rp, rec);
    /* SPEC 8's records (crash, warning) of the same event come after. */
    for (const sw_record_t *x = sw_detect_next(rp->det); x; x = sw_detect_next(rp->det))
        put_record(rp, x);
    /* Sample the engine's size now and then: computing it walks the jobs. */
    if (rp->stats && (++rp->fed & 0xffff) == 0) {
        sw_detect_stats_t st;
        sw_detect_stats(rp->det, &st);
        if (st.bytes > rp->peak_bytes) {
            rp->peak_bytes = st.bytes;
            rp->peak_retained = st.retained;
        }
    }
    return !rp->failed;
}

static void on_next(void *opaque, const sw_event_t *next)
{
    sw_detect_prefetch(((replay_t *)opaque)->det, next);
}

static void print_stats(replay_t *rp, const sw_cli_read_stats_t *rs)
{
    sw_detect_stats_t st;
    sw_detect_stats(rp->det, &st);
    if (st.bytes > rp->peak_bytes) {
        rp->peak_bytes = st.bytes;
        rp->peak_retained = st.retained;
    }
    fprintf(
        stderr,
        "{\"lines\": %llu, \"invalid\": %llu, \"events\": %llu, \"samples\": %llu, "
        "\"duplicates\": %llu, \"late\": %llu, \"too_old\": %llu, \"stale_windows\": %llu, "
        "\"limit_rejects\": %llu, \"jobs_evicted\": %llu, \"phase_dropped\": %llu, "
        "\"counterless\": %llu, \"records\": {\"trigger\": %llu, \"update\": %llu, "
        "\"resolve\": %llu, \"summary\": %llu, \"crash\": %llu, \"warning\": %llu}, \"jobs\": %llu, \"ranks\": %llu, "
        "\"retained_samples\": %llu, \"engine_bytes\": %llu, \"peak_engine_bytes\": %llu, "
        "\"bytes_per_retained_sample\": %.1f}\n",
        (unsigned long long)rs->lines, (unsigned long long)rs->invalid,
        (unsigned long long)st.events, (unsigned long long)st.samples,
        (unsigned long long)st.duplicates, (unsigned long long)st.late,
        (unsigned long long)st.too_old, (unsigned long long)st.stale_windows,
        (unsigned long long)st.limit_rejects, (unsigned long long)st.evicted,
        (unsigned long long)st.phase_dropped, (unsigned long long)st.counterless,
        (unsigned long long)st.records[0], (unsigned long long)st.records[1],
        (unsigned long long)st.records[2], (unsigned long long)st.records[3],
        (unsigned long long)st.records[SW_ACTION_CRASH],
        (unsigned long long)st.records[SW_ACTION_WARNING], (unsigned long long)st.jobs,
        (unsigned long long)st.ranks, (unsigned long long)st.retained, (unsigned long long)st.bytes,
        (unsigned long long)rp->peak_bytes,
        rp->peak_retained ? (double)rp->peak_bytes / (double)rp->peak_retained : 0.0);
}

int sw_cmd_replay(int argc, char **argv)
{
    static const struct option opts[] = {
        {"window-samples", required_argument, NULL, 'w'},
        {"stale-ms", required_argument, NULL, 't'},
        {"spike-min-bytes", required_argument, NULL, 'b'},
        {"spike-fraction", required_argument, NULL, 'f'},
        {"skew-multiplier", required_argument, NULL, 'k'},
        {"max-jobs", required_argument, NULL, 'j'},
        {"max-ranks-per-job", required_argument, NULL, 'r'},
        {"strict", no_argument, NULL, 's'},
        {"stats", no_argument, NULL, 'S'},
        {"output-format", required_argument, NULL, 'o'},
        {"routing-key", required_argument, NULL, 'K'},
        {"generator-url", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    /* Defaults and ranges: those of the properties `stormwatch run` reads. */
    const sw_settings_t *def = sw_cli_defaults();
    sw_params_t p = def->engine.params;
    sw_hash_key_random(&p.hash_key); /* input strings cannot be chosen to collide */
    bool strict = false, stats = false, pager = false, text = false;
    sw_pager_opts_t po = {SW_PAGER_PAGERDUTY,      ROUTING_KEY_PLACEHOLDER, NULL, 0, NULL,
                          def->pager.ends_after_ms};
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'w':
            ok = sw_cli_prop_i64("replay", "--window-samples", "window.samples", optarg,
                                 &p.window_samples);
            break;
        case 't':
            ok = sw_cli_prop_i64("replay", "--stale-ms", "stale.ms", optarg, &p.stale_ms);
            break;
        case 'b':
            ok = sw_cli_prop_i64("replay", "--spike-min-bytes", "spike.min.bytes", optarg,
                                 &p.spike_min_bytes);
            break;
        case 'f':
            ok = sw_cli_prop_dbl("replay", "--spike-fraction", "spike.fraction", optarg,
                                 &p.spike_fraction);
            break;
        case 'k':
            ok = sw_cli_prop_i64("replay", "--skew-multiplier", "skew.note.multiplier", optarg,
                                 &p.skew_note_multiplier);
            break;
        case 'j':
            ok = sw_cli_prop_i64("replay", "--max-jobs", "max.jobs", optarg, &p.max_jobs);
            break;
        case 'r':
            ok = sw_cli_prop_i64("replay", "--max-ranks-per-job", "max.ranks.per.job", optarg,
                                 &p.max_ranks_per_job);
            break;
        case 's': strict = true; break;
        case 'S': stats = true; break;
        case 'o':
            pager = sw_pager_format_parse(optarg, &po.format);
            text = strcmp(optarg, "text") == 0;
            if (!pager && !text && strcmp(optarg, "json") != 0) {
                fprintf(stderr,
                        "stormwatch replay: option --output-format: value \"%s\" is not json, "
                        "text, pagerduty or alertmanager\n",
                        optarg);
                return SW_EXIT_USAGE;
            }
            break;
        case 'K': po.routing_key = optarg; break;
        case 'g': po.generator_url = optarg; break;
        case 'h': usage(stdout, &def->engine.params); return SW_EXIT_OK;
        default: return sw_cli_bad_option("replay", argc, argv, optind, optopt);
        }
        if (!ok) return SW_EXIT_USAGE;
    }
    replay_t rp;
    memset(&rp, 0, sizeof(rp));
    rp.det = sw_detect_new(p);
    rp.stats = stats;
    rp.pager = pager;
    rp.text = text;
    rp.pager_opts = po;
    sw_buf_init(&rp.out);
    sw_cli_read_stats_t st;
    int rc = sw_cli_read_events_ahead("replay", argv + optind, argc - optind, strict, on_event,
                                      on_next, &rp, &st);
    if (rc == SW_EXIT_OK) sw_detect_finish(rp.det, on_summary, &rp);
    flush_out(&rp, true);
    if (fflush(stdout) != 0 || rp.failed) {
        perror("stormwatch replay: write");
        rc = SW_EXIT_RUNTIME;
    }
    if (rp.rejected)
        fprintf(stderr, "stormwatch replay: %llu sample%s over the limits skipped\n",
                (unsigned long long)rp.rejected, rp.rejected == 1 ? "" : "s");
    if (stats) print_stats(&rp, &st);
    sw_buf_clear(&rp.out);
    sw_detect_destroy(rp.det);
    return rc;
}
