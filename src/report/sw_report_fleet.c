/*
 * The report's fleet page (see sw_report_int.h): the hosts and GPUs named
 * first across jobs. Each storm episode counts once, under the host and
 * device of the first suspect of its final verdict (the charted record:
 * the latest trigger/update); each crash counts once, under the host and
 * device of its final first death (its crash record of the highest
 * revision). Grouped by host, then by host and GPU (device_id); ordered by
 * the number of distinct jobs, then by the count, then by name, so the
 * host that starts trouble in the most jobs comes first.
 */
#include "sw_report_int.h"

#include "sw_codec_record.h"

/* The most rows of each table (the rest are counted, not listed). */
#define FLEET_ROWS 50
/* The most job names written per row. */
#define FLEET_JOBS_LISTED 10

typedef enum fkind_e { FK_STORM = 0, FK_DEATH = 1 } fkind_t;

/* One first cause or first death with where it ran. */
typedef struct fitem_s {
    sw_str_t host; /* borrowed from the model */
    int64_t device;
    size_t job; /* index into rep->jobs */
    fkind_t kind;
    bool has_time;
    int64_t time_ns;
} fitem_t;

/* One row: a host, or a host and GPU. */
typedef struct frow_s {
    const fitem_t *first; /* its items are first[0 .. n-1] (sorted by job) */
    size_t n;
    size_t jobs; /* distinct */
    size_t storms, deaths;
    bool has_time;
    int64_t t_min, t_max;
} frow_t;

typedef struct fset_s {
    fitem_t *v;
    size_t n, cap;
    size_t unplaced_storms, unplaced_deaths; /* records naming no host */
} fset_t;

static void add_item(fset_t *fs, sw_str_t host, int64_t device, size_t job, fkind_t kind,
                     bool has_time, int64_t t)
{
    if (!host.len) {
        if (kind == FK_STORM) fs->unplaced_storms++;
        else fs->unplaced_deaths++;
        return;
    }
    SW_GROW(fs->v, fs->n, fs->cap, 16);
    fs->v[fs->n++] = (fitem_t){host, device, job, kind, has_time, t};
}

static void collect(const sw_report_t *rep, fset_t *fs)
{
    memset(fs, 0, sizeof(*fs));
    for (size_t j = 0; j < rep->n_jobs; j++) {
        const job_t *job = rep->jobs[j];
        for (size_t e = 0; e < job->n_eps; e++) {
            const rec_t *r = sw_report_ep_chart(&job->eps[e]);
            if (!r || r->n_sus == 0) continue;
            const susp_t *s = &r->sus[0];
            add_item(fs, s->host, s->device_id, j, FK_STORM, r->has_event, r->event_ns);
        }
        for (size_t i = 0; i < job->n_x8; i++) {
            const x8item_t *it = &job->x8s[i];
            if (it->act != SW_ACTION_CRASH || it->fd_rank < 0 ||
                sw_report_crash_final(job, it->number) != it)
                continue;
            add_item(fs, sw_str(it->fd_host ? it->fd_host : ""), it->fd_device, j, FK_DEATH,
                     it->has_event, it->event_ns);
        }
    }
}

static int str_cmp(sw_str_t a, sw_str_t b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = memcmp(a.ptr, b.ptr, n);
    if (c) return c;
    return (a.len > b.len) - (a.len < b.len);
}

static int cmp_host(const void *pa, const void *pb)
{
    const fitem_t *a = pa, *b = pb;
    int c = str_cmp(a->host, b->host);
    if (c) return c;
    return (a->job > b->job) - (a->job < b->job);
}

static int cmp_gpu(const void *pa, const void *pb)
{
    const fitem_t *a = pa, *b = pb;
    int c = str_cmp(a->host, b->host);
    if (c) return c;
    if (a->device != b->device) return a->device < b->device ? -1 : 1;
    return (a->job > b->job) - (a->job < b->job);
}

static int cmp_row(const void *pa, const void *pb)
{
    const frow_t *a = pa, *b = pb;
    if (a->jobs != b->jobs) return a->jobs > b->jobs ? -1 : 1;
    if (a->n != b->n) return a->n > b->n ? -1 : 1;
    int c = str_cmp(a->first->host, b->first->host);
    if (c) return c;
    return (a->first->device > b->first->device) - (a->first->device < b->first->device);
}

/* Rows over items sorted by @p cmp; one row per run of equal keys (the
 * key compares equal when cmp says so up to the job). */
static frow_t *make_rows(fitem_t *v, size_t n, bool by_gpu, size_t *n_rows)
{
    qsort(v, n, sizeof(*v), by_gpu ? cmp_gpu : cmp_host);
    frow_t *rows = sw_calloc(n ? n : 1, sizeof(*rows));
    size_t nr = 0;
    for (size_t i = 0; i < n;) {
        size_t k = i;
        frow_t *r = &rows[nr++];
        r->first = &v[i];
        while (k < n && sw_str_eq(v[k].host, v[i].host) &&
               (!by_gpu || v[k].device == v[i].device)) {
            const fitem_t *it = &v[k];
            if (k == i || it->job != v[k - 1].job) r->jobs++;
            if (it->kind == FK_STORM) r->storms++;
            else r->deaths++;
            if (it->has_time) {
                if (!r->has_time || it->time_ns < r->t_min) r->t_min = it->time_ns;
                if (!r->has_time || it->time_ns > r->t_max) r->t_max = it->time_ns;
                r->has_time = true;
            }
            k++;
        }
        r->n = k - i;
        i = k;
    }
    qsort(rows, nr, sizeof(*rows), cmp_row);
    *n_rows = nr;
    return rows;
}

size_t sw_report_fleet_jobs(const sw_report_t *rep)
{
    fset_t fs;
    collect(rep, &fs);
    size_t jobs = 0;
    bool *seen = sw_calloc(rep->n_jobs ? rep->n_jobs : 1, sizeof(*seen));
    for (size_t i = 0; i < fs.n; i++) {
        if (!seen[fs.v[i].job]) jobs++;
        seen[fs.v[i].job] = true;
    }
    free(seen);
    free(fs.v);
    return jobs;
}

static void put_where(sw_buf_t *out, const fitem_t *it, bool by_gpu)
{
    sw_buf_puts(out, "<code>");
    sw_report_esc(out, it->host);
    sw_buf_puts(out, "</code>");
    if (by_gpu) {
        if (it->device >= 0) sw_buf_printf(out, " GPU %" PRId64, it->device);
        else sw_buf_puts(out, " GPU ?");
    }
}

static void put_jobs(sw_buf_t *out, const sw_report_t *rep, const frow_t *r)
{
    size_t listed = 0;
    for (size_t k = 0; k < r->n; k++) {
        const fitem_t *it = &r->first[k];
        if (k > 0 && it->job == r->first[k - 1].job) continue;
        if (listed == FLEET_JOBS_LISTED) {
            sw_buf_printf(out, " and %zu more", r->jobs - listed);
            break;
        }
        if (listed++) sw_buf_puts(out, ", ");
        sw_report_put_job_name(out, rep->jobs[it->job]);
        /* what this host did in that job */
        size_t st = 0, de = 0;
        for (size_t q = k; q < r->n && r->first[q].job == it->job; q++) {
            if (r->first[q].kind == FK_STORM) st++;
            else de++;
        }
        sw_buf_puts(out, " <span class=\"muted\">(");
        if (st) sw_buf_printf(out, "%zu storm%s", st, st == 1 ? "" : "s");
        if (st && de) sw_buf_puts(out, ", ");
        if (de) sw_buf_printf(out, "%zu death%s", de, de == 1 ? "" : "s");
        sw_buf_puts(out, ")</span>");
    }
}

static void put_table(sw_buf_t *out, const sw_report_t *rep, const frow_t *rows, size_t n,
                      bool by_gpu)
{
    sw_buf_printf(out,
                  "<table class=\"fleet %s\"><thead><tr><th>%s</th><th>jobs</th>"
                  "<th>storm first causes</th><th>first deaths</th><th>first seen (UTC)</th>"
                  "<th>last seen (UTC)</th><th>jobs named</th></tr></thead><tbody>",
                  by_gpu ? "gpus" : "hosts", by_gpu ? "host and GPU" : "host");
    for (size_t i = 0; i < n && i < FLEET_ROWS; i++) {
        const frow_t *r = &rows[i];
        sw_buf_printf(out, "<tr%s><td>", r->jobs > 1 ? " class=\"repeat\"" : "");
        put_where(out, r->first, by_gpu);
        sw_buf_printf(out,
                      "</td><td class=\"num\">%zu</td><td class=\"num\">%zu</td>"
                      "<td class=\"num\">%zu</td><td>",
                      r->jobs, r->storms, r->deaths);
        if (r->has_time) sw_report_put_utc(out, r->t_min);
        sw_buf_puts(out, "</td><td>");
        if (r->has_time) sw_report_put_utc(out, r->t_max);
        sw_buf_puts(out, "</td><td>");
        put_jobs(out, rep, r);
        sw_buf_puts(out, "</td></tr>");
    }
    sw_buf_puts(out, "</tbody></table>\n");
    if (n > FLEET_ROWS)
        sw_buf_printf(out,
                      "<p class=\"muted\">%zu more %s named once or less often, not listed.</p>\n",
                      n - FLEET_ROWS, by_gpu ? "GPUs" : "hosts");
}

bool sw_report_put_fleet(sw_buf_t *out, const sw_report_t *rep)
{
    fset_t fs;
    collect(rep, &fs);
    if (fs.n == 0) {
        free(fs.v);
        return false;
    }
    size_t storms = 0, deaths = 0;
    for (size_t i = 0; i < fs.n; i++) {
        if (fs.v[i].kind == FK_STORM) storms++;
        else deaths++;
    }
    size_t n_hosts = 0, n_gpus = 0;
    frow_t *hosts = make_rows(fs.v, fs.n, false, &n_hosts);
    /* the GPU rows sort a copy: the host rows point into fs.v */
    fitem_t *gv = sw_malloc(fs.n * sizeof(*gv));
    memcpy(gv, fs.v, fs.n * sizeof(*gv));
    frow_t *gpus = make_rows(gv, fs.n, true, &n_gpus);
    size_t jobs = sw_report_fleet_jobs(rep);

    sw_buf_puts(out, "<section class=\"fleet\" id=\"fleet\">\n<h2>Repeat offenders</h2>\n");
    sw_buf_puts(out, "<p class=\"summary-line\">");
    const frow_t *top = &hosts[0];
    if (top->jobs > 1) {
        size_t tied = 0;
        for (size_t i = 1; i < n_hosts && hosts[i].jobs == top->jobs && hosts[i].n == top->n; i++)
            tied++;
        sw_buf_puts(out, "Host ");
        put_where(out, top->first, false);
        sw_buf_printf(out,
                      " was named first in %zu of the %zu jobs: %zu storm first cause%s and %zu "
                      "first death%s.",
                      top->jobs, rep->n_jobs, top->storms, top->storms == 1 ? "" : "s", top->deaths,
                      top->deaths == 1 ? "" : "s");
        /* its GPU named first in the most jobs (rows are in that order) */
        for (size_t i = 0; i < n_gpus; i++) {
            if (!sw_str_eq(gpus[i].first->host, top->first->host)) continue;
            if (gpus[i].jobs > 1) {
                sw_buf_puts(out, " Its GPU named in the most jobs: ");
                put_where(out, gpus[i].first, true);
                sw_buf_printf(out, " (%zu jobs).", gpus[i].jobs);
            }
            break;
        }
        if (tied) sw_buf_printf(out, " %zu other host%s tied with it.", tied, tied == 1 ? "" : "s");
    } else {
        sw_buf_printf(out,
                      "No host was named first in more than one job (%zu jobs, %zu hosts): "
                      "nothing points at a bad node.",
                      jobs, n_hosts);
    }
    sw_buf_puts(out, "</p>\n");
    sw_buf_printf(out,
                  "<p class=\"muted\">%zu storm episode%s and %zu crash%s over %zu job%s, "
                  "grouped by where they started: each episode under the host and GPU of the "
                  "first suspect of its final verdict (its latest trigger or update), each "
                  "crash under its final first death (its crash record of the highest "
                  "revision). A host named first in several jobs points at the node, one named "
                  "in one job only at the job. The records carry no pod name, so there is no "
                  "pod column.",
                  storms, storms == 1 ? "" : "s", deaths, deaths == 1 ? "" : "es", jobs,
                  jobs == 1 ? "" : "s");
    if (fs.unplaced_storms || fs.unplaced_deaths)
        sw_buf_printf(out, " Not placed (their records name no host): %zu episode%s, %zu crash%s.",
                      fs.unplaced_storms, fs.unplaced_storms == 1 ? "" : "s", fs.unplaced_deaths,
                      fs.unplaced_deaths == 1 ? "" : "es");
    sw_buf_puts(out, "</p>\n<h3>Hosts</h3>\n");
    put_table(out, rep, hosts, n_hosts, false);
    sw_buf_puts(out, "<h3>GPUs</h3>\n");
    put_table(out, rep, gpus, n_gpus, true);
    sw_buf_puts(out, "</section>\n");
    free(hosts);
    free(gpus);
    free(gv);
    free(fs.v);
    return true;
}
