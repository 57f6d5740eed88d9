/*
 * `stormwatch report`: reads alert records (the JSON lines of `replay`,
 * `run` or `tail`; plain or gzip) and writes one self-contained HTML
 * incident report (sw_report.h does the rendering). Invalid lines are
 * reported as FILE:LINE, skipped and counted; --strict makes the first fatal.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "sw_input.h"
#include "sw_report.h"
#include "sw_cli.h"
#include "sw_cmds.h"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: stormwatch report [OPTIONS] [ALERTS...]\n"
            "\n"
            "Writes a self-contained HTML incident report (inline CSS and SVG, no scripts,\n"
            "nothing fetched) from alert records: the JSON lines of 'stormwatch replay',\n"
            "or of the output topic ('stormwatch tail'), plain or gzip. ALERTS '-' or none\n"
            "reads standard input. Per job and episode: a chart of the suspects' aligned\n"
            "device memory around the cluster onset (from the latest trigger/update\n"
            "record), the suspects, notes, the lifecycle (trigger, updates, resolve),\n"
            "severity, dedup key and summary; then each job summary.\n"
            "\n"
            "A job's crash (its crash records, docs/semantics.md) gets a section of its\n"
            "own: who died first and whether that was revised, what warned and how long\n"
            "before, a map of the dead and blind ranks, and, with --telemetry, a chart of\n"
            "the first dead rank's memory against its device total up to the death, the\n"
            "warning, the other deaths and the watchdog errors (docs/report.md). A report\n"
            "without a storm episode opens with its crashes.\n"
            "\n"
            "When two or more jobs name a host (storm first causes, first deaths), the\n"
            "report opens with the repeat offenders: hosts and GPUs by the number of jobs\n"
            "they were named first in (docs/fleet.md). --fleet writes that page only.\n"
            "\n"
            "Invalid lines (not JSON, not an alert record) are reported on standard error\n"
            "as FILE:LINE: message, skipped and counted in the report.\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE   write the report to FILE (default: standard output)\n"
            "  --title TEXT        page title (default \"stormwatch incident report\")\n"
            "  --fleet             the fleet page only: repeat offenders over every job of\n"
            "                      the input (an output topic read with 'stormwatch tail',\n"
            "                      record files of many jobs)\n"
            "  --telemetry FILE    the jobs' telemetry (JSON Lines, plain or gzip; may be\n"
            "                      repeated), read after the records, for the crash charts\n"
            "  --strict            the first invalid line is fatal (exit 2)\n"
            "  -h, --help          show this help\n"
            "\n"
            "Exit status: 0 ok, 1 unreadable input or write failure, 2 usage error or\n"
            "(with --strict) an invalid line.\n"
            "\n"
            "Example:\n"
            "  stormwatch gen | stormwatch replay | stormwatch report -o report.html\n"
            "  stormwatch gen --crash cascade -o t.jsonl\n"
            "  stormwatch replay t.jsonl > r.jsonl\n"
            "  stormwatch report --telemetry t.jsonl -o crash.html r.jsonl\n");
}

static int telemetry_verdict(const char *path, uint64_t lineno)
{
    const char *shown = strcmp(path, "-") ? path : "<stdin>";
    fprintf(stderr,
            "stormwatch report: %s holds telemetry events (line %llu has timestamp_ns and "
            "event_type), not alert records: run 'stormwatch replay %s | stormwatch report'\n",
            shown, (unsigned long long)lineno, strcmp(path, "-") ? path : "-");
    return SW_EXIT_USAGE;
}

/* What a report input holds: alert records (the file operands, or standard
 * input) or telemetry events (--telemetry, for the crash charts). */
typedef enum report_input_e { REPORT_RECORDS, REPORT_TELEMETRY } report_input_t;

/* Read one input of @p kind into the report; a bad line (or one too long)
 * is said with its input and line and skipped, or, with @p strict, ends the
 * read. @returns an exit code. */
static int read_input(sw_report_t *rep, const char *path, report_input_t kind, bool strict,
                      uint64_t *skipped)
{
    char errstr[512];
    sw_input_t *in = sw_input_open(path, errstr, sizeof(errstr));
    if (!in) {
        fprintf(stderr, "stormwatch report: %s\n", errstr);
        return SW_EXIT_RUNTIME;
    }
    int rc = SW_EXIT_OK;
    /* Telemetry where records were expected: after a few such lines (or all
     * of a short file), one message that says what to run. */
    int seen = 0, telemetry = 0;
    uint64_t first_line = 0;
    for (;;) {
        const char *line;
        size_t len;
        sw_input_res_t res = sw_input_next(in, &line, &len, errstr, sizeof(errstr));
        if (res == SW_INPUT_EOF) {
            if (telemetry > 0 && telemetry == seen) {
                *skipped -= (uint64_t)telemetry;
                rc = telemetry_verdict(path, first_line);
            }
            break;
        }
        if (res == SW_INPUT_ERROR) {
            fprintf(stderr, "stormwatch report: %s\n", errstr);
            rc = SW_EXIT_RUNTIME;
            break;
        }
        uint64_t lineno = sw_input_lineno(in);
        bool sniffing = false;
        sw_err_t err = SW_ERR_PARSE;
        if (res == SW_INPUT_LINE && kind == REPORT_TELEMETRY) {
            err = sw_report_add_telemetry(rep, line, len, sw_input_name(in), lineno, errstr,
                                          sizeof(errstr));
        } else if (res == SW_INPUT_LINE) {
            bool blank = true;
            for (size_t k = 0; k < len && blank; k++)
                blank = line[k] == ' ' || line[k] == '\t' || line[k] == '\r';
            sniffing = !blank && seen < SW_CLI_SNIFF_LINES && telemetry == seen;
            if (sniffing) seen++;
            err = sw_report_add(rep, line, len, sw_input_name(in), lineno, errstr, sizeof(errstr));
        }
        if (err == SW_OK) continue;
        (*skipped)++;
        if (sniffing && sw_cli_line_kind(line, len) == SW_CLI_KIND_TELEMETRY) {
            if (!telemetry) first_line = lineno;
            if (++telemetry == SW_CLI_SNIFF_LINES) {
                *skipped -= (uint64_t)telemetry;
                rc = telemetry_verdict(path, first_line);
                break;
            }
            continue;
        }
        if (res == SW_INPUT_TOOLONG) { /* errstr: "line longer than ... (skipped)" */
            fprintf(stderr, "%s:%llu: %s\n", sw_input_name(in), (unsigned long long)lineno, errstr);
        } else {
            fprintf(stderr, "%s%s\n", errstr, strict ? "" : " (skipped)");
        }
        if (strict) {
            rc = SW_EXIT_USAGE;
            break;
        }
    }
    sw_input_close(in);
    return rc;
}

static bool write_all(const char *path, const sw_buf_t *html)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    if (!f) {
        fprintf(stderr, "stormwatch report: cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    bool ok = fwrite(html->data, 1, html->len, f) == html->len;
    ok = (path ? fclose(f) : fflush(f)) == 0 && ok;
    if (!ok)
        fprintf(stderr, "stormwatch report: write %s: %s\n", path ? path : "<stdout>",
                strerror(errno));
    return ok;
}

int sw_cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"title", required_argument, NULL, 't'},
        {"strict", no_argument, NULL, 's'},
        {"fleet", no_argument, NULL, 'f'},
        {"telemetry", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL, *title = NULL;
    bool strict = false, fleet = false;
    const char *telemetry[64];
    int n_tel = 0;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 't': title = optarg; break;
        case 's': strict = true; break;
        case 'f': fleet = true; break;
        case 'T':
            if (n_tel == 64) {
                fprintf(stderr, "stormwatch report: at most 64 --telemetry inputs\n");
                return SW_EXIT_USAGE;
            }
            telemetry[n_tel++] = optarg;
            break;
        case 'h': usage(stdout); return SW_EXIT_OK;
        default: return sw_cli_bad_option("report", argc, argv, optind, optopt);
        }
    }
    char *std_in[] = {"-"};
    char **files = argc > optind ? argv + optind : std_in;
    int nfiles = argc > optind ? argc - optind : 1;
    sw_report_t *rep = sw_report_new();
    uint64_t skipped = 0;
    int rc = SW_EXIT_OK;
    for (int i = 0; i < nfiles && rc == SW_EXIT_OK; i++)
        rc = read_input(rep, files[i], REPORT_RECORDS, strict, &skipped);
    for (int i = 0; i < n_tel && rc == SW_EXIT_OK; i++)
        rc = read_input(rep, telemetry[i], REPORT_TELEMETRY, strict, &skipped);
    if (rc == SW_EXIT_OK) {
        const char *names[64];
        size_t n = 0;
        for (int i = 0; i < nfiles && n < 64; i++)
            names[n++] = strcmp(files[i], "-") ? files[i] : "<stdin>";
        sw_report_opts_t ro = {title, names, n, skipped, fleet};
        sw_buf_t html;
        sw_buf_init(&html);
        sw_report_render(rep, &ro, &html);
        if (!write_all(output, &html)) rc = SW_EXIT_RUNTIME;
        sw_buf_clear(&html);
        if (skipped)
            fprintf(stderr, "stormwatch report: %llu invalid line%s skipped\n",
                    (unsigned long long)skipped, skipped == 1 ? "" : "s");
    }
    sw_report_destroy(rep);
    return rc;
}
