/*
 * `stormwatch analyze`: the batch analysis of SPEC 3 over JSON Lines files
 * (plain or gzip), printed as one JSON object.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "sw_arena.h"
#include "sw_batch.h"
#include "sw_codec_alert.h"
#include "sw_cli.h"
#include "sw_cmds.h"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: stormwatch analyze [OPTIONS] [FILE...]\n"
            "\n"
            "Batch first-cause analysis (SPEC 3) of TelemetryEvent JSON Lines, plain or\n"
            "gzip (detected by magic bytes). FILE '-' or no FILE reads standard input.\n"
            "Prints one JSON object.\n"
            "\n"
            "Options:\n"
            "  --spike-min-bytes B   threshold floor in bytes (default %lld)\n"
            "  --spike-fraction F    fraction of a rank's peak, 0..1 (default %.2f)\n"
            "  --skew-multiplier M   skew note factor (default %d)\n"
            "  --strict              the first invalid line is fatal (exit 2)\n"
            "  --compact             print on one line instead of indented\n"
            "  -h, --help            show this help\n",
            (long long)SW_DEFAULT_SPIKE_MIN_BYTES, SW_DEFAULT_SPIKE_FRACTION,
            SW_DEFAULT_SKEW_NOTE_MULTIPLIER);
}

static bool add_event(void *opaque, const sw_event_t *ev, const char *file, uint64_t line)
{
    char err[160];
    if (sw_batch_add(opaque, ev, err, sizeof(err)) != SW_OK)
        fprintf(stderr, "%s:%llu: %s (skipped)\n", file, (unsigned long long)line, err);
    return true;
}

int sw_cmd_analyze(int argc, char **argv)
{
    static const struct option opts[] = {
        {"spike-min-bytes", required_argument, NULL, 'b'},
        {"spike-fraction", required_argument, NULL, 'f'},
        {"skew-multiplier", required_argument, NULL, 'k'},
        {"strict", no_argument, NULL, 's'},
        {"compact", no_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    sw_params_t params = sw_params_default();
    sw_hash_key_random(&params.hash_key); /* input strings cannot be chosen to collide */
    bool strict = false, compact = false;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (!sw_cli_i64("analyze", "--spike-min-bytes", optarg, 0, INT64_MAX,
                            &params.spike_min_bytes))
                return SW_EXIT_USAGE;
            break;
        case 'f':
            if (!sw_cli_dbl("analyze", "--spike-fraction", optarg, 0.0, 1.0, &params.spike_fraction))
                return SW_EXIT_USAGE;
            break;
        case 'k':
            if (!sw_cli_i64("analyze", "--skew-multiplier", optarg, 1, 1000000,
                            &params.skew_note_multiplier))
                return SW_EXIT_USAGE;
            break;
        case 's': strict = true; break;
        case 'c': compact = true; break;
        case 'h': usage(stdout); return SW_EXIT_OK;
        default: return sw_cli_bad_option("analyze", argc, argv, optind, optopt);
        }
    }
    sw_batch_t *b = sw_batch_new(params);
    sw_cli_read_stats_t st;
    int rc = sw_cli_read_events("analyze", argv + optind, argc - optind, strict, add_event, b, &st);
    if (rc == SW_EXIT_OK) {
        sw_arena_t arena;
        sw_arena_init(&arena);
        sw_analysis_t a;
        sw_batch_run(b, &arena, &a);
        sw_buf_t out;
        sw_buf_init(&out);
        sw_alert_json_analysis(&out, &a, compact ? 0 : 2);
        sw_buf_putc(&out, '\n');
        if (fwrite(out.data, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
            perror("stormwatch analyze: write");
            rc = SW_EXIT_RUNTIME;
        }
        sw_buf_clear(&out);
        sw_arena_clear(&arena);
    }
    sw_batch_destroy(b);
    return rc;
}
