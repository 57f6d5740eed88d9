/*
 * `stormwatch analyze`: the batch analysis of SPEC 3 over JSON Lines files
 * (plain or gzip), printed as one JSON object.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sw_alloc.h"
#include "sw_arena.h"
#include "sw_intern.h"
#include "sw_batch.h"
#include "sw_analysis.h"
#include "sw_codec_alert.h"
#include "sw_cli.h"
#include "sw_cmds.h"

/* Defaults shown are the configuration table's (@p d: its engine params). */
static void usage(FILE *f, const sw_params_t *d)
{
    fprintf(f,
            "Usage: stormwatch analyze [OPTIONS] [FILE...]\n"
            "\n"
            "Batch first-cause analysis (docs/semantics.md section 2) of TelemetryEvent\n"
            "JSON Lines, plain or gzip (detected by magic bytes). FILE '-' or no FILE\n"
            "reads standard input. Input without a valid line exits 2.\n"
            "Prints one JSON object. With several jobs in the input it analyses the most\n"
            "common job_id (the reference's rule) and names the jobs left out on stderr.\n"
            "\n"
            "Options:\n"
            "  --spike-min-bytes B   threshold floor in bytes (default %lld)\n"
            "  --spike-fraction F    fraction of a rank's peak, 0..1 (default %.2f)\n"
            "  --skew-multiplier M   skew note factor (default %d)\n"
            "  --job ID              analyse job ID only (\"null\" for events without job_id)\n"
            "  --all-jobs            analyse every job: one JSON object per line, in the\n"
            "                        order the jobs first appear\n"
            "  --format text|json    text: one line per job with the answer (first-cause\n"
            "                        rank, where it runs, lead, confidence, phase), then\n"
            "                        the notes; json: the analysis object (default: text on\n"
            "                        a terminal, json in a pipe)\n"
            "  --strict              the first invalid line is fatal (exit 2)\n"
            "  --compact             print on one line instead of indented\n"
            "  -h, --help            show this help\n",
            (long long)d->spike_min_bytes, d->spike_fraction, (int)d->skew_note_multiplier);
}

/* Jobs of the input: ids interned (1..n), 0 = the null job_id; per job its
 * samples and (with --all-jobs) its own batch. */
typedef struct jobs_s {
    sw_params_t params;
    sw_intern_t *ids;
    uint64_t *samples;    /* [id], id 0 = null job */
    sw_batch_t **batches; /* [id] (--all-jobs) */
    uint32_t *order;      /* ids in first-seen order */
    size_t n, cap;        /* order entries; samples, batches and seen hold cap */
    bool *seen;           /* [id] */
    bool all;             /* --all-jobs */
    const char *only;     /* --job ID, NULL for every job */
    sw_batch_t *b;        /* the one batch (not --all-jobs) */
    struct marker_s *mk;  /* SPEC 8 death markers, for the text answer */
    size_t n_mk, cap_mk;
    uint32_t last;   /* id of the last event's job_id (0 = none yet) */
    sw_str_t last_s; /* its string (the table's copy) */
} jobs_t;

/* A death marker of the input (SPEC 8.1): its job, rank, time and place. */
typedef struct marker_s {
    uint32_t job;
    int64_t rank, ts;
    char *host;
    bool has_dev;
    int64_t dev;
} marker_t;

static uint32_t job_of(jobs_t *js, const sw_event_t *ev)
{
    /* Events come in long runs of one job: compare before hashing. */
    uint32_t id = 0;
    if (ev->has_job_id) {
        if (!js->last || js->last_s.len != ev->job_id.len ||
            !sw_bytes_eq(js->last_s.ptr, ev->job_id.ptr, ev->job_id.len)) {
            js->last = sw_intern_add(js->ids, ev->job_id);
            js->last_s = sw_intern_get(js->ids, js->last);
        }
        id = js->last;
    }
    if (id >= js->cap) {
        size_t cap = js->cap ? js->cap : 16;
        while (cap <= id) cap *= 2;
        js->samples = sw_reallocarray(js->samples, cap, sizeof(*js->samples));
        js->batches = sw_reallocarray(js->batches, cap, sizeof(*js->batches));
        js->seen = sw_reallocarray(js->seen, cap, sizeof(*js->seen));
        memset(js->samples + js->cap, 0, (cap - js->cap) * sizeof(*js->samples));
        memset(js->batches + js->cap, 0, (cap - js->cap) * sizeof(*js->batches));
        memset(js->seen + js->cap, 0, (cap - js->cap) * sizeof(*js->seen));
        js->cap = cap;
    }
    if (!js->seen[id]) {
        js->seen[id] = true;
        js->order = sw_reallocarray(js->order, js->n + 1, sizeof(*js->order));
        js->order[js->n++] = id;
    }
    return id;
}

static bool job_matches(const jobs_t *js, const sw_event_t *ev)
{
    if (!js->only) return true;
    if (!strcmp(js->only, "null")) return !ev->has_job_id;
    return ev->has_job_id && ev->job_id.len == strlen(js->only) &&
           memcmp(ev->job_id.ptr, js->only, ev->job_id.len) == 0;
}

static bool add_event(void *opaque, const sw_event_t *ev, const char *file, uint64_t line)
{
    jobs_t *js = opaque;
    char err[160];
    if (!job_matches(js, ev)) return true;
    uint32_t id = job_of(js, ev);
    if (ev->kind == SW_EV_SAMPLE) js->samples[id]++;
    else if (sw_crash_kind(ev) == SW_X8_DEATH) {
        SW_GROW(js->mk, js->n_mk, js->cap_mk, 4);
        marker_t *m = &js->mk[js->n_mk++];
        m->job = id;
        m->rank = ev->rank;
        m->ts = ev->timestamp_ns;
        m->host = sw_memdup0(ev->host.ptr, ev->host.len);
        m->has_dev = ev->device_id.set;
        m->dev = ev->device_id.value;
    }
    sw_batch_t *b = js->b;
    if (js->all) {
        if (!js->batches[id]) js->batches[id] = sw_batch_new(js->params);
        b = js->batches[id];
    }
    if (sw_batch_add(b, ev, err, sizeof(err)) != SW_OK)
        fprintf(stderr, "%s:%llu: %s (skipped)\n", file, (unsigned long long)line, err);
    return true;
}

static sw_str_t job_name(const jobs_t *js, uint32_t id)
{
    return id ? sw_intern_get(js->ids, id) : sw_str("null");
}

/* The answer first: one line per job, then its notes indented. */
static void put_text(sw_buf_t *b, const sw_analysis_t *a)
{
    sw_buf_puts(b, "job ");
    if (a->has_job_id) sw_buf_put(b, a->job_id.ptr, a->job_id.len);
    else sw_buf_puts(b, "null");
    sw_buf_puts(b, ": ");
    if (!a->n_suspects) {
        sw_buf_printf(b, "no first cause (no cross-rank spike), %zu ranks", a->n_participating);
    } else {
        const sw_suspect_t *s = &a->suspects[0];
        sw_buf_puts(b, "first cause ");
        sw_suspect_where(s, b);
        sw_buf_puts(b, ", lead ");
        sw_duration_text(b, s->lead_over_cluster_onset_ns);
        sw_buf_printf(b, ", %s confidence, ", sw_confidence_str(s->confidence));
        sw_phase_text(b, &s->phase);
        sw_buf_printf(b, ", +%.2f GiB, %zu of %lld ranks at the onset",
                      (double)s->peak_delta_bytes / 1073741824.0, a->n_suspects,
                      (long long)a->world_size);
    }
    sw_buf_putc(b, '\n');
    for (size_t i = 0; i < a->n_notes; i++) {
        /* A note can list 100,000 ranks: a terminal line shows its start. */
        size_t n = a->notes[i].len > 300 ? 300 : a->notes[i].len;
        sw_buf_printf(b, "  note: %.*s%s\n", (int)n, a->notes[i].ptr,
                      n < a->notes[i].len ? " ..." : "");
    }
}

/* SPEC 8 in the batch answer: the earliest death marker of the job by
 * aligned time (the analysis' alignment offsets; 0 for a rank without
 * samples), when the input has any. */
static void put_first_death(sw_buf_t *b, const jobs_t *js, uint32_t id, const sw_analysis_t *a)
{
    const marker_t *best = NULL;
    int64_t best_al = 0;
    size_t n = 0;
    for (size_t i = 0; i < js->n_mk; i++) {
        const marker_t *m = &js->mk[i];
        if (m->job != id) continue;
        int64_t off = 0;
        for (size_t k = 0; k < a->n_offsets; k++)
            if (a->offsets[k].rank == m->rank) off = a->offsets[k].value;
        int64_t al = m->ts - off;
        n++;
        if (!best || al < best_al || (al == best_al && m->rank < best->rank)) {
            best = m;
            best_al = al;
        }
    }
    if (!best) return;
    sw_buf_printf(b, "  first death: rank %lld on %s", (long long)best->rank, best->host);
    if (best->has_dev) sw_buf_printf(b, " GPU %lld", (long long)best->dev);
    sw_buf_printf(b, " (out of memory) at aligned %lld ns; %zu death marker%s in the input\n",
                  (long long)best_al, n, n == 1 ? "" : "s");
}

/* Which jobs the reference's rule left out, on stderr. */
static void note_left_out(const jobs_t *js, const sw_analysis_t *a)
{
    size_t with_samples = 0;
    for (size_t i = 0; i < js->n; i++) with_samples += js->samples[js->order[i]] > 0;
    if (with_samples < 2) return;
    sw_buf_t b;
    sw_buf_init(&b);
    sw_buf_printf(&b, "stormwatch analyze: %zu jobs in the input; analysed ", with_samples);
    if (a->has_job_id) sw_buf_put(&b, a->job_id.ptr, a->job_id.len);
    else sw_buf_puts(&b, "null");
    sw_buf_puts(&b, " (the most common job_id); left out:");
    size_t shown = 0, rest = 0;
    for (size_t i = 0; i < js->n; i++) {
        uint32_t id = js->order[i];
        sw_str_t nm = job_name(js, id);
        if (!js->samples[id] || (a->has_job_id && id && sw_str_eq(nm, a->job_id))) continue;
        if (shown >= 10) {
            rest++;
            continue;
        }
        sw_buf_printf(&b, "%s %.*s (%llu samples)", shown ? "," : "", (int)nm.len, nm.ptr,
                      (unsigned long long)js->samples[id]);
        shown++;
    }
    if (rest) sw_buf_printf(&b, " and %zu more", rest);
    sw_buf_puts(&b, "; use --job ID or --all-jobs");
    fprintf(stderr, "%s\n", sw_buf_cstr(&b));
    sw_buf_clear(&b);
}

int sw_cmd_analyze(int argc, char **argv)
{
    static const struct option opts[] = {
        {"spike-min-bytes", required_argument, NULL, 'b'},
        {"spike-fraction", required_argument, NULL, 'f'},
        {"skew-multiplier", required_argument, NULL, 'k'},
        {"strict", no_argument, NULL, 's'},
        {"compact", no_argument, NULL, 'c'},
        {"job", required_argument, NULL, 'j'},
        {"all-jobs", no_argument, NULL, 'a'},
        {"format", required_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    /* Defaults and ranges: those of the properties `stormwatch run` reads. */
    sw_params_t params = sw_cli_defaults()->engine.params;
    sw_hash_key_random(&params.hash_key); /* input strings cannot be chosen to collide */
    bool strict = false, compact = false, all = false;
    int text = -1; /* -1: text on a terminal */
    const char *only = NULL;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (!sw_cli_prop_i64("analyze", "--spike-min-bytes", "spike.min.bytes", optarg,
                                 &params.spike_min_bytes))
                return SW_EXIT_USAGE;
            break;
        case 'f':
            if (!sw_cli_prop_dbl("analyze", "--spike-fraction", "spike.fraction", optarg,
                                 &params.spike_fraction))
                return SW_EXIT_USAGE;
            break;
        case 'k':
            if (!sw_cli_prop_i64("analyze", "--skew-multiplier", "skew.note.multiplier", optarg,
                                 &params.skew_note_multiplier))
                return SW_EXIT_USAGE;
            break;
        case 's': strict = true; break;
        case 'c': compact = true; break;
        case 'j': only = optarg; break;
        case 'a': all = true; break;
        case 'F':
            if (!strcmp(optarg, "text")) text = 1;
            else if (!strcmp(optarg, "json")) text = 0;
            else {
                fprintf(stderr, "stormwatch analyze: --format \"%s\": expected text or json\n",
                        optarg);
                return SW_EXIT_USAGE;
            }
            break;
        case 'h': usage(stdout, &sw_cli_defaults()->engine.params); return SW_EXIT_OK;
        default: return sw_cli_bad_option("analyze", argc, argv, optind, optopt);
        }
    }
    if (all && only) {
        fprintf(stderr, "stormwatch analyze: --job and --all-jobs exclude each other\n");
        return SW_EXIT_USAGE;
    }
    if (text < 0) text = isatty(STDOUT_FILENO) ? 1 : 0;
    jobs_t js;
    memset(&js, 0, sizeof(js));
    js.params = params;
    js.ids = sw_intern_new_keyed(params.hash_key);
    js.all = all;
    js.only = only;
    js.b = all ? NULL : sw_batch_new(params);
    sw_cli_read_stats_t st;
    int rc = sw_cli_read_events("analyze", argv + optind, argc - optind, strict, add_event, &js,
                                &st);
    sw_buf_t out;
    sw_buf_init(&out);
    if (rc == SW_EXIT_OK && only && js.n == 0)
        fprintf(stderr, "stormwatch analyze: no event of job %s in the input\n", only);
    if (rc == SW_EXIT_OK) {
        sw_arena_t arena;
        sw_arena_init(&arena);
        size_t runs = all ? js.n : 1;
        for (size_t i = 0; i < runs; i++) {
            sw_batch_t *b = all ? js.batches[js.order[i]] : js.b;
            sw_analysis_t a;
            sw_arena_reset(&arena);
            sw_batch_run(b, &arena, &a);
            if (!all && !only) note_left_out(&js, &a);
            if (text) {
                put_text(&out, &a);
                uint32_t id = all ? js.order[i] : 0;
                if (!all) {
                    /* The one job answered: the analysis' own job id. */
                    sw_str_t jid = a.has_job_id ? a.job_id : sw_str("");
                    id = a.has_job_id ? sw_intern_find(js.ids, jid) : 0;
                }
                put_first_death(&out, &js, id, &a);
            } else {
                sw_alert_json_analysis(&out, &a, compact || all ? 0 : 2);
                sw_buf_putc(&out, '\n');
            }
        }
        if (fwrite(out.data, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
            perror("stormwatch analyze: write");
            rc = SW_EXIT_RUNTIME;
        }
        sw_arena_clear(&arena);
    }
    sw_buf_clear(&out);
    sw_batch_destroy(js.b);
    for (size_t i = 0; i < js.n; i++) sw_batch_destroy(js.batches[js.order[i]]);
    for (size_t i = 0; i < js.n_mk; i++) free(js.mk[i].host);
    free(js.mk);
    free(js.batches);
    free(js.samples);
    free(js.order);
    free(js.seen);
    sw_intern_destroy(js.ids);
    return rc;
}
