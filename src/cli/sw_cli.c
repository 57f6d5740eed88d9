/*
 * CLI helpers (see sw_cli.h). This is the only place the file commands
 * print decode errors; the codecs only return them.
 */
#include "sw_cli.h"
#include "sw_progress.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sw_arena.h"
#include "sw_codec_telemetry.h"
#include "sw_input.h"
#include "sw_jdom.h"
#include "sw_registry.h"
#include "sw_schemas.h"

bool sw_cli_i64(const char *cmd, const char *opt, const char *value, int64_t min, int64_t max,
                int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (end == value || *end != '\0' || errno == ERANGE) {
        fprintf(stderr,
                "stormwatch %s: option %s: value \"%s\" is not an integer (expected %lld..%lld)\n",
                cmd, opt, value, (long long)min, (long long)max);
        return false;
    }
    if (v < min || v > max) {
        fprintf(stderr,
                "stormwatch %s: option %s: value \"%s\" is out of range (expected %lld..%lld)\n",
                cmd, opt, value, (long long)min, (long long)max);
        return false;
    }
    *out = v;
    return true;
}

bool sw_cli_dbl(const char *cmd, const char *opt, const char *value, double min, double max,
                double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(value, &end);
    if (end == value || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        fprintf(stderr,
                "stormwatch %s: option %s: value \"%s\" is not a number (expected %g..%g)\n", cmd,
                opt, value, min, max);
        return false;
    }
    if (v < min || v > max) {
        fprintf(stderr,
                "stormwatch %s: option %s: value \"%s\" is out of range (expected %g..%g)\n", cmd,
                opt, value, min, max);
        return false;
    }
    *out = v;
    return true;
}

bool sw_cli_log_level(const char *cmd, const char *value, sw_log_level_t *level)
{
    if (sw_log_parse_level(value, level)) return true;
    fprintf(stderr,
            "stormwatch %s: option --log-level: value \"%s\" is not error, warn, info or debug\n",
            cmd, value);
    return false;
}

bool sw_cli_prop_i64(const char *cmd, const char *opt, const char *prop, const char *value,
                     int64_t *out)
{
    int64_t lo, hi;
    if (!sw_conf_range_i64(prop, &lo, &hi)) {
        fprintf(stderr, "stormwatch %s: option %s: no int property \"%s\" (a bug)\n", cmd, opt,
                prop);
        return false;
    }
    return sw_cli_i64(cmd, opt, value, lo, hi, out);
}

bool sw_cli_prop_dbl(const char *cmd, const char *opt, const char *prop, const char *value,
                     double *out)
{
    double lo, hi;
    if (!sw_conf_range_dbl(prop, &lo, &hi)) {
        fprintf(stderr, "stormwatch %s: option %s: no double property \"%s\" (a bug)\n", cmd, opt,
                prop);
        return false;
    }
    return sw_cli_dbl(cmd, opt, value, lo, hi, out);
}

const sw_settings_t *sw_cli_defaults(void)
{
    /* Kept for the process: the settings borrow the conf's strings. */
    static sw_conf_t *conf;
    static sw_settings_t set;
    if (!conf) {
        conf = sw_conf_new();
        if (!conf) abort(); /* a table default fails its own check: test_conf catches it */
        sw_conf_settings(conf, &set);
    }
    return &set;
}

int sw_cli_bad_option(const char *cmd, int argc, char **argv, int optind_, int optopt_)
{
    const char *arg = optind_ - 1 < argc && optind_ >= 1 ? argv[optind_ - 1] : "?";
    if (optopt_ && strchr(arg, '=') == NULL && arg[0] == '-' && arg[1] != '-' &&
        arg[1] != (char)optopt_)
        fprintf(stderr, "stormwatch %s: unknown option '-%c' (see 'stormwatch %s --help')\n", cmd,
                optopt_, cmd);
    else
        fprintf(
            stderr,
            "stormwatch %s: unknown option or missing value: '%s' (see 'stormwatch %s --help')\n",
            cmd, arg, cmd);
    return SW_EXIT_USAGE;
}

/* One decoded event with the buffers it borrows from. */
typedef struct slot_s {
    sw_tdec_t *dec;
    sw_event_t ev;    /* borrows the input's line, held while this slot is pending */
    const char *file; /* borrowed from the open input */
    uint64_t lineno;
    bool full;
} slot_t;

sw_cli_kind_t sw_cli_line_kind(const char *line, size_t len)
{
    sw_arena_t arena;
    sw_arena_init(&arena);
    char err[64];
    const sw_jnode_t *root = sw_jdom_parse(line, len, &arena, err, sizeof(err));
    sw_cli_kind_t kind = SW_CLI_KIND_OTHER;
    if (root && root->type == SW_JN_OBJECT) {
        if (sw_jdom_get(root, "action") && sw_jdom_get(root, "episode") &&
            sw_jdom_get(root, "first_cause_suspects"))
            kind = SW_CLI_KIND_RECORD;
        else if (sw_jdom_get(root, "participating_ranks") &&
                 sw_jdom_get(root, "first_cause_suspects"))
            kind = SW_CLI_KIND_ANALYSIS;
        else if (sw_jdom_get(root, "timestamp_ns") && sw_jdom_get(root, "event_type"))
            kind = SW_CLI_KIND_TELEMETRY;
    }
    sw_arena_clear(&arena);
    return kind;
}

/* The first lines of a file: while every one of them is an alert record or
 * analyze's output, their errors are held back; after SW_CLI_SNIFF_LINES
 * such lines (or all of a shorter file) one message says what to run. */
typedef struct sniff_s {
    int seen;                           /* non-blank lines looked at */
    int wrong;                          /* of them, of the wrong kind */
    sw_cli_kind_t kind;                 /* the wrong kind seen first */
    char held[SW_CLI_SNIFF_LINES][600]; /* their error messages */
} sniff_t;

static void sniff_release(sniff_t *sn)
{
    for (int i = 0; i < sn->wrong && i < SW_CLI_SNIFF_LINES; i++)
        fprintf(stderr, "%s\n", sn->held[i]);
    sn->wrong = 0;
    sn->seen = SW_CLI_SNIFF_LINES; /* decided: not a wrong file */
}

static void sniff_verdict(const char *cmd, const char *name, const sniff_t *sn)
{
    fprintf(stderr,
            "stormwatch %s: %s holds %s, not telemetry events: run 'stormwatch report %s' for "
            "an HTML report of them%s\n",
            cmd, name,
            sn->kind == SW_CLI_KIND_RECORD ? "alert records (replay or run output)"
                                           : "an analysis (analyze output)",
            strcmp(name, "<stdin>") ? name : "-",
            sn->kind == SW_CLI_KIND_RECORD ? "" : " (it reads records; analyze output is final)");
}

int sw_cli_read_events_ahead(const char *cmd, char **files, int nfiles, bool strict,
                             sw_cli_event_cb cb, sw_cli_prefetch_cb prefetch, void *opaque,
                             sw_cli_read_stats_t *stats)
{
    static char *stdin_only[] = {(char *)"-"};
    char errstr[512];
    int rc = SW_EXIT_OK;
    memset(stats, 0, sizeof(*stats));
    if (nfiles == 0) {
        files = stdin_only;
        nfiles = 1;
    }
    slot_t slots[2];
    for (int i = 0; i < 2; i++) {
        memset(&slots[i], 0, sizeof(slots[i]));
        slots[i].dec = sw_tdec_new();
    }
    int cur = 0; /* slot holding the event to hand on next */
    sw_input_t *in = NULL;
    sw_progress_t prog;
    sw_progress_start(&prog, cmd, "events", sw_progress_files_size(files, nfiles));
    sw_buf_t none_valid; /* "FILE (N invalid lines)" of files without a valid line */
    sw_buf_init(&none_valid);
    for (int fi = 0; fi < nfiles && rc == SW_EXIT_OK; fi++) {
        uint64_t valid0 = stats->valid, invalid0 = stats->invalid;
        in = sw_input_open(files[fi], errstr, sizeof(errstr));
        if (!in) {
            fprintf(stderr, "stormwatch %s: %s\n", cmd, errstr);
            rc = SW_EXIT_RUNTIME;
            break;
        }
        const char *name = sw_input_name(in);
        sniff_t sn;
        memset(&sn, 0, sizeof(sn));
        for (;;) {
            const char *line;
            size_t len;
            sw_input_res_t r = sw_input_next(in, &line, &len, errstr, sizeof(errstr));
            if (r == SW_INPUT_EOF) {
                if (sn.wrong > 0 && sn.wrong == sn.seen && sn.seen < SW_CLI_SNIFF_LINES) {
                    sniff_verdict(cmd, name, &sn);
                    stats->invalid = 0;
                    rc = SW_EXIT_USAGE;
                } else if (sn.wrong) {
                    sniff_release(&sn);
                }
                break;
            }
            if (r == SW_INPUT_ERROR) {
                fprintf(stderr, "stormwatch %s: %s\n", cmd, errstr);
                rc = SW_EXIT_RUNTIME;
                break;
            }
            uint64_t lineno = sw_input_lineno(in);
            if (r != SW_INPUT_TOOLONG && sw_tdec_blank(line, len)) continue;
            stats->lines++;
            sw_progress_tick(&prog, stats->lines, stats->bytes + sw_input_raw_bytes(in));
            slot_t *nx = &slots[cur ^ 1];
            sw_err_t err = SW_ERR_PARSE;
            if (r != SW_INPUT_TOOLONG)
                err = sw_tdec_json(nx->dec, line, len, &nx->ev, errstr, sizeof(errstr));
            if (err && sn.seen < SW_CLI_SNIFF_LINES && sn.wrong == sn.seen &&
                r != SW_INPUT_TOOLONG) {
                sw_cli_kind_t k = sw_cli_line_kind(line, len);
                if (k == SW_CLI_KIND_RECORD || k == SW_CLI_KIND_ANALYSIS) {
                    if (!sn.wrong) sn.kind = k;
                    snprintf(sn.held[sn.wrong], sizeof(sn.held[0]), "%s:%llu: %s", name,
                             (unsigned long long)lineno, errstr);
                    sn.wrong++;
                    sn.seen++;
                    stats->invalid++;
                    if (sn.wrong == SW_CLI_SNIFF_LINES) {
                        sniff_verdict(cmd, name, &sn);
                        stats->invalid = 0;
                        rc = SW_EXIT_USAGE;
                        break;
                    }
                    continue;
                }
            }
            if (sn.seen < SW_CLI_SNIFF_LINES) {
                if (sn.wrong) sniff_release(&sn);
                sn.seen++;
            }
            if (err) {
                stats->invalid++;
                fprintf(stderr, "%s:%llu: %s\n", name, (unsigned long long)lineno, errstr);
                if (strict) {
                    rc = SW_EXIT_USAGE;
                    break;
                }
                continue;
            }
            nx->file = name;
            nx->lineno = lineno;
            nx->full = true;
            stats->valid++;
            if (prefetch) prefetch(opaque, &nx->ev);
            slot_t *c = &slots[cur];
            cur ^= 1;
            if (c->full) {
                c->full = false;
                if (!cb(opaque, &c->ev, c->file, c->lineno)) {
                    rc = SW_EXIT_RUNTIME;
                    break;
                }
            }
            /* Done with c's line: the pending event borrows this one. */
            sw_input_hold(in);
        }
        /* The pending event borrows the file name: hand it on before closing. */
        slot_t *c = &slots[cur];
        if (c->full && rc != SW_EXIT_RUNTIME) {
            c->full = false;
            if (!cb(opaque, &c->ev, c->file, c->lineno)) rc = SW_EXIT_RUNTIME;
        }
        if (rc == SW_EXIT_OK && stats->valid == valid0 && stats->invalid > invalid0) {
            uint64_t n = stats->invalid - invalid0;
            sw_buf_printf(&none_valid, "%s%s (%llu invalid line%s)", none_valid.len ? ", " : "",
                          sw_input_name(in), (unsigned long long)n, n == 1 ? "" : "s");
        }
        stats->bytes += sw_input_raw_bytes(in);
        sw_input_close(in);
    }
    sw_progress_end(&prog);
    for (int i = 0; i < 2; i++) {
        sw_tdec_destroy(slots[i].dec);
    }
    /* Input of which no line is valid is a usage error, not an empty
     * answer: the user fed the wrong file or format. */
    if (rc == SW_EXIT_OK && stats->valid == 0 && stats->invalid) {
        fprintf(stderr, "stormwatch %s: no valid telemetry in %.*s\n", cmd, (int)none_valid.len,
                none_valid.data);
        rc = SW_EXIT_USAGE;
    }
    sw_buf_clear(&none_valid);
    if (stats->invalid && rc == SW_EXIT_OK)
        fprintf(stderr, "stormwatch %s: %llu invalid line%s skipped\n", cmd,
                (unsigned long long)stats->invalid, stats->invalid == 1 ? "" : "s");
    return rc;
}

int sw_cli_read_events(const char *cmd, char **files, int nfiles, bool strict, sw_cli_event_cb cb,
                       void *opaque, sw_cli_read_stats_t *stats)
{
    return sw_cli_read_events_ahead(cmd, files, nfiles, strict, cb, NULL, opaque, stats);
}

extern char **environ;

bool sw_cli_conf_load(const char *cmd, sw_conf_t *conf, const char *config_file,
                      const char *brokers, char *const *xs, int nx)
{
    char err[1024];
    if (config_file && sw_conf_load_file(conf, config_file, err, sizeof(err)) != SW_OK) {
        fprintf(stderr, "stormwatch %s: %s\n", cmd, err);
        return false;
    }
    if (sw_conf_load_env(conf, environ, err, sizeof(err)) != SW_OK) {
        fprintf(stderr, "stormwatch %s: %s\n", cmd, err);
        return false;
    }
    /* -b is bootstrap.servers, set where -X would set it (a later -X wins). */
    if (brokers &&
        sw_conf_set(conf, "bootstrap.servers", brokers, err, sizeof(err)) != SW_CONF_OK) {
        fprintf(stderr, "stormwatch %s: -b: %s\n", cmd, err);
        return false;
    }
    for (int i = 0; i < nx; i++) {
        if (sw_conf_set_pair(conf, xs[i], err, sizeof(err)) != SW_CONF_OK) {
            /* The name only: the value may be a secret (err redacts it). */
            fprintf(stderr, "stormwatch %s: -X %.*s: %s\n", cmd, (int)sw_conf_arg_name_len(xs[i]),
                    xs[i], err);
            return false;
        }
    }
    return true;
}

int sw_cli_telemetry_schema_id(const char *cmd, const sw_settings_t *set, const char *topic,
                               int32_t *id)
{
    char subject[300], rerr[600];
    snprintf(subject, sizeof(subject), "%s-value", topic);
    sw_registry_t *reg = sw_registry_from_settings(set, sw_schema_telemetry_event,
                                                   sw_schema_telemetry_event_len, -1, false, rerr,
                                                   sizeof(rerr));
    sw_err_t err = reg ? sw_registry_subject_id(reg, subject, sw_schema_telemetry_event,
                                                set->registry.auto_register, id, rerr, sizeof(rerr))
                       : SW_ERR_INVALID_ARG;
    sw_registry_destroy(reg);
    if (err) {
        fprintf(stderr, "stormwatch %s: schema id of subject %s: %s\n", cmd, subject, rerr);
        return SW_EXIT_RUNTIME;
    }
    return SW_EXIT_OK;
}
