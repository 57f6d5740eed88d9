/*
 * The report's crashes (see sw_report_int.h): per crash of a job, what
 * died first and whether that was revised, what warned and how long
 * before, who was blind; a chart of the first dead rank's memory against
 * its device total up to the death, with the warning, the other deaths and
 * the watchdog errors as marks (from the job's telemetry, read with
 * sw_report_add_telemetry(): alert records carry no memory series); and a
 * map of the ranks, dead in red, blind in grey.
 */
#include "sw_report_int.h"

#include "sw_codec_record.h"
#include "sw_codec_telemetry.h"
#include "sw_analysis.h"

/* Most cells of the rank map (a larger job lists its ranks instead). */
#define MAP_MAX_RANKS 1024
/* Most points of the memory series drawn (thinned by stride, the last kept). */
#define CRASH_MAX_POINTS 600
/* Watchdog errors are looked for this long after the death. */
#define WATCHDOG_AFTER_NS (INT64_C(7200) * 1000000000)

const x8item_t *sw_report_crash_final(const job_t *job, int64_t number)
{
    const x8item_t *best = NULL;
    for (size_t i = 0; i < job->n_x8; i++) {
        const x8item_t *it = &job->x8s[i];
        if (it->act != SW_ACTION_CRASH || it->number != number) continue;
        if (!best || it->revision >= best->revision) best = it;
    }
    return best;
}

/* ---- telemetry ----------------------------------------------------------- */

/* The job's crash that a chart is drawn for: its first (lowest number). */
static const x8item_t *charted_crash(const job_t *job)
{
    int64_t number = -1;
    for (size_t i = 0; i < job->n_x8; i++)
        if (job->x8s[i].act == SW_ACTION_CRASH && (number < 0 || job->x8s[i].number < number))
            number = job->x8s[i].number;
    return number < 0 ? NULL : sw_report_crash_final(job, number);
}

static ctl_t *ctl_for(job_t *job)
{
    if (job->ctl) return job->ctl;
    const x8item_t *f = charted_crash(job);
    if (!f) return NULL;
    ctl_t *c = sw_calloc(1, sizeof(*c));
    c->crash = f->number;
    c->rank = f->fd_rank;
    c->death_ts = f->fd_ts;
    c->last_ts = sw_malloc((f->n_dead ? f->n_dead : 1) * sizeof(*c->last_ts));
    for (size_t i = 0; i < f->n_dead; i++) c->last_ts[i] = -1;
    job->ctl = c;
    return c;
}

static void add_mark(ctl_t *c, int64_t ts, int64_t rank, cmark_kind_t kind)
{
    if (c->n_marks == SW_REPORT_CRASH_MARKS) {
        c->marks_dropped++;
        return;
    }
    SW_GROW(c->marks, c->n_marks, c->cap_marks, 64);
    c->marks[c->n_marks++] = (cmark_t){ts, rank, kind};
}

sw_err_t sw_report_add_telemetry(sw_report_t *rep, const char *line, size_t len, const char *file,
                                 uint64_t lineno, char *errstr, size_t errstr_size)
{
    if (sw_tdec_blank(line, len)) return SW_OK;
    if (!rep->tdec) rep->tdec = sw_tdec_new();
    sw_event_t ev;
    char why[256];
    sw_err_t err = sw_tdec_json(rep->tdec, line, len, &ev, why, sizeof(why));
    if (err != SW_OK) {
        snprintf(errstr, errstr_size, "%s:%" PRIu64 ": %s", file ? file : "<telemetry>", lineno,
                 why);
        return err;
    }
    job_t *job = sw_report_job_find(rep, ev.has_job_id ? ev.job_id : sw_str(""), !ev.has_job_id);
    if (!job) return SW_OK;
    ctl_t *c = ctl_for(job);
    if (!c) return SW_OK;
    const x8item_t *f = sw_report_crash_final(job, c->crash);
    c->events++;
    if (ev.world_size > c->world) c->world = ev.world_size;
    sw_x8_kind_t kind = sw_crash_kind(&ev);
    int64_t ts = ev.timestamp_ns;
    if (ev.rank == c->rank) {
        bool in_window = ts <= c->death_ts && ts >= c->death_ts - SW_REPORT_CRASH_WINDOW_NS;
        if (ev.kind == SW_EV_SAMPLE && ev.has_device_used && in_window &&
            c->n < SW_REPORT_CRASH_SAMPLES) {
            if (c->n == c->cap) {
                c->cap = c->cap ? c->cap * 2 : 256;
                c->ts = sw_reallocarray(c->ts, c->cap, sizeof(*c->ts));
                c->used = sw_reallocarray(c->used, c->cap, sizeof(*c->used));
                c->total = sw_reallocarray(c->total, c->cap, sizeof(*c->total));
            }
            c->ts[c->n] = ts;
            c->used[c->n] = ev.device_used_bytes;
            c->total[c->n] = ev.device_total_bytes.set && ev.device_total_bytes.value > 0
                                 ? ev.device_total_bytes.value
                                 : -1;
            c->n++;
        }
        return SW_OK;
    }
    for (size_t i = 0; i < f->n_dead; i++) {
        if (f->dead[i] != ev.rank) continue;
        if (kind == SW_X8_DEATH) add_mark(c, ts, ev.rank, CM_MARKER);
        else if (ts > c->last_ts[i] && ts <= c->death_ts + WATCHDOG_AFTER_NS) c->last_ts[i] = ts;
        return SW_OK;
    }
    if (kind == SW_X8_ERROR && ts >= c->death_ts - INT64_C(60000000000) &&
        ts <= c->death_ts + WATCHDOG_AFTER_NS)
        add_mark(c, ts, ev.rank, CM_WATCHDOG);
    return SW_OK;
}

/* ---- the chart ----------------------------------------------------------- */

#define CW 960.0
#define CML 88.0
#define CMR 24.0
#define CMT 40.0
#define CPH 260.0
#define CGAP 26.0    /* between the main panel and the after-death panel */
#define CAFTER 170.0 /* width of the after-death panel */

typedef struct cpanel_s {
    double x0, w;  /* pixels */
    double lo, hi; /* ns relative to the death */
} cpanel_t;

static double px(const cpanel_t *p, double t)
{
    return p->x0 + (t - p->lo) / (p->hi - p->lo) * p->w;
}

/* A mark's x, kept inside its panel (a clock far off puts it at the edge). */
static double px_in(const cpanel_t *p, double t)
{
    return fmin(fmax(px(p, t), p->x0), p->x0 + p->w);
}

static double py(double ymax, double v)
{
    return CMT + CPH - v / ymax * CPH;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Samples arrive out of order (per-host delivery delays): drawn in
 * timestamp order through these. */
typedef struct tsidx_s {
    int64_t ts;
    size_t i;
} tsidx_t;

static int cmp_tsidx(const void *a, const void *b)
{
    const tsidx_t *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static void put_rel_s(sw_buf_t *out, double ns, double step)
{
    if (fabs(ns) < step * 1e-6) {
        sw_buf_puts(out, "0");
        return;
    }
    sw_buf_puts(out, ns > 0 ? "+" : "\xE2\x88\x92");
    double v = fabs(ns) / 1e9;
    if (v >= 60 && fmod(v, 60) < 1e-9 && step >= 60e9) {
        sw_report_put_trim(out, v / 60, 1);
        sw_buf_puts(out, " min");
    } else {
        sw_report_put_trim(out, v, step >= 1e9 ? 0 : step >= 1e8 ? 1 : 2);
        sw_buf_puts(out, " s");
    }
}

static void x_ticks(sw_buf_t *out, const cpanel_t *p, int n)
{
    double step = sw_report_nice_step((p->hi - p->lo) / n);
    int guard = 0;
    for (double v = ceil(p->lo / step) * step; v <= p->hi + step * 1e-9 && guard++ < 40;
         v += step) {
        double x = px(p, v);
        sw_buf_printf(out,
                      "<line class=\"tick\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                      x, x, CMT + CPH, CMT + CPH + 5, x, CMT + CPH + 19);
        put_rel_s(out, v, step);
        sw_buf_puts(out, "</text>");
    }
}

/* The earliest warning that names @p rank, and where in its list. */
static const x8item_t *warning_of(const job_t *job, int64_t rank, size_t *at)
{
    const x8item_t *best = NULL;
    for (size_t i = 0; i < job->n_x8; i++) {
        const x8item_t *it = &job->x8s[i];
        if (it->act != SW_ACTION_WARNING || !it->has_event) continue;
        for (size_t k = 0; k < it->n_w; k++) {
            if (it->w_rank[k] != rank) continue;
            if (!best || it->event_ns < best->event_ns) {
                best = it;
                *at = k;
            }
        }
    }
    return best;
}

static void put_chart(sw_buf_t *out, const job_t *job, const x8item_t *f, const ctl_t *c,
                      unsigned chart_no)
{
    tsidx_t *order = sw_malloc(c->n * sizeof(*order));
    for (size_t i = 0; i < c->n; i++) order[i] = (tsidx_t){c->ts[i], i};
    qsort(order, c->n, sizeof(*order), cmp_tsidx);
    size_t *idx = sw_malloc(c->n * sizeof(*idx));
    for (size_t i = 0; i < c->n; i++) idx[i] = order[i].i;
    free(order);
    int64_t death = c->death_ts;
    double first = (double)(c->ts[idx[0]] - death);
    double ymax = 0;
    bool has_total = false;
    for (size_t i = 0; i < c->n; i++) {
        ymax = fmax(ymax, (double)c->used[i]);
        if (c->total[i] > 0) {
            ymax = fmax(ymax, (double)c->total[i]);
            has_total = true;
        }
    }
    if (ymax <= 0) ymax = 1;
    /* marks: the silent deaths from the dead ranks' last events */
    size_t n_marks = c->n_marks;
    cmark_t *marks = sw_malloc((c->n_marks + f->n_dead + 1) * sizeof(*marks));
    memcpy(marks, c->marks, c->n_marks * sizeof(*marks));
    for (size_t i = 0; i < f->n_dead; i++) {
        bool marker = false;
        for (size_t k = 0; k < c->n_marks; k++)
            marker |= c->marks[k].kind == CM_MARKER && c->marks[k].rank == f->dead[i];
        if (!marker && c->last_ts[i] >= 0 && f->dead[i] != c->rank)
            marks[n_marks++] = (cmark_t){c->last_ts[i], f->dead[i], CM_SILENT};
    }
    size_t warn_at = 0;
    const x8item_t *w = warning_of(job, c->rank, &warn_at);
    /* main panel: from the first sample to a little after the last death;
     * watchdog errors much later get a panel of their own */
    double span = -first > 1e9 ? -first : 1e9;
    double main_hi = span * 0.06;
    double last_death = 0, wd_lo = INFINITY, wd_hi = -INFINITY;
    size_t n_wd = 0, n_deaths = 0;
    for (size_t i = 0; i < n_marks; i++) {
        double t = (double)(marks[i].ts - death);
        if (marks[i].kind == CM_WATCHDOG) {
            wd_lo = fmin(wd_lo, t);
            wd_hi = fmax(wd_hi, t);
            n_wd++;
        } else {
            last_death = fmax(last_death, t);
            n_deaths++;
        }
    }
    main_hi = fmax(main_hi, last_death * 1.15);
    double lo = first;
    if (w && (double)(w->event_ns - death) < lo) lo = (double)(w->event_ns - death) - span * 0.02;
    bool after = n_wd > 0 && wd_hi > main_hi;
    if (n_wd && !after) main_hi = fmax(main_hi, wd_hi * 1.05);
    cpanel_t mp = {CML, CW - CML - CMR - (after ? CGAP + CAFTER : 0), lo, main_hi};
    cpanel_t ap = {CW - CMR - CAFTER, CAFTER, 0, 1};
    if (after) {
        double a_lo = fmax(wd_lo, main_hi), pad = fmax((wd_hi - a_lo) * 0.08, 1e9);
        ap.lo = a_lo - pad;
        ap.hi = wd_hi + pad;
    }
    double h = CMT + CPH + 70;
    sw_buf_printf(
        out,
        "<figure class=\"chart crash\"><svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
        "viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"crash chart %u\">"
        "<title id=\"crash-t%u\">Device memory of rank %" PRId64
        " up to its death, with the warning, the other deaths and the watchdog errors"
        "</title><rect class=\"bg\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\"/>",
        CW, h, chart_no, chart_no, c->rank, CW, h);
    /* y grid in GiB */
    double unit = 1073741824.0;
    const char *uname = "GiB";
    if (ymax < unit * 2) unit = 1048576.0, uname = "MiB";
    double ystep = sw_report_nice_step(ymax / unit / 5.0) * unit;
    int guard = 0;
    for (double v = 0; v <= ymax * 1.0001 && guard++ < 40; v += ystep) {
        double y = py(ymax, v);
        sw_buf_printf(out,
                      "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
                      CML, CW - CMR, y, y, CML - 8, y + 4);
        sw_report_put_trim(out, v / unit, ystep / unit >= 1 ? 0 : 1);
        sw_buf_printf(out, " %s</text>", uname);
    }
    x_ticks(out, &mp, after ? 6 : 8);
    sw_buf_printf(out,
                  "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
                  mp.x0, CMT, mp.w, CPH);
    if (after) {
        x_ticks(out, &ap, 2);
        sw_buf_printf(out,
                      "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"muted-label\">"
                      "\xE2\x80\xA6</text>",
                      ap.x0, CMT, ap.w, CPH, ap.x0 - CGAP / 2, CMT + CPH / 2);
    }
    /* the device total, then the memory used */
    size_t stride = c->n > CRASH_MAX_POINTS ? (c->n + CRASH_MAX_POINTS - 1) / CRASH_MAX_POINTS : 1;
    if (has_total) {
        sw_buf_puts(out, "<path class=\"total\" d=\"");
        bool pen = false;
        for (size_t k = 0; k < c->n; k += stride) {
            size_t i = idx[k];
            if (c->total[i] <= 0) continue;
            sw_buf_puts(out, pen ? " L" : "M");
            sw_buf_printf(out, "%.1f,%.1f", px(&mp, (double)(c->ts[i] - death)),
                          py(ymax, (double)c->total[i]));
            pen = true;
        }
        size_t i = idx[c->n - 1];
        if (c->total[i] > 0)
            sw_buf_printf(out, " L%.1f,%.1f", px(&mp, 0), py(ymax, (double)c->total[i]));
        sw_buf_puts(out, "\"/>");
    }
    sw_buf_puts(out, "<path class=\"used\" d=\"");
    for (size_t k = 0; k < c->n; k += stride) {
        size_t i = idx[k];
        sw_buf_printf(out, "%s%.1f,%.1f", k ? " L" : "M", px(&mp, (double)(c->ts[i] - death)),
                      py(ymax, (double)c->used[i]));
    }
    size_t last = idx[c->n - 1];
    sw_buf_printf(out, " L%.1f,%.1f\"/>", px(&mp, (double)(c->ts[last] - death)),
                  py(ymax, (double)c->used[last]));
    /* the warning */
    if (w) {
        double x = px_in(&mp, (double)(w->event_ns - death));
        sw_buf_printf(out,
                      "<line class=\"warn\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" class=\"warn-label\">"
                      "warning ",
                      x, x, CMT, CMT + CPH, x - 4, CMT + 14);
        sw_report_duration(out, death - w->event_ns);
        sw_buf_puts(out, " before</text>");
        sw_buf_printf(out, "<circle class=\"warn\" cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\"/>", x,
                      py(ymax, (double)w->w_used[warn_at]));
    }
    /* the first death */
    double x0 = px(&mp, 0);
    sw_buf_printf(out,
                  "<line class=\"death\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"start\" class=\"death-label\">"
                  "rank %" PRId64 " dies (%s)</text>",
                  x0, x0, CMT - 6, CMT + CPH, x0 + 4, CMT - 10, c->rank,
                  f->fd_silent ? "silent" : "oom");
    /* the other deaths: triangles on top, labelled when few */
    size_t labelled = 0;
    for (size_t i = 0; i < n_marks; i++) {
        if (marks[i].kind == CM_WATCHDOG) continue;
        double x = px_in(&mp, (double)(marks[i].ts - death));
        sw_buf_printf(out,
                      "<path class=\"other-death%s\" d=\"M%.1f,%.1f l-5,-9 h10 z\">"
                      "<title>rank %" PRId64 " dies (%s), ",
                      marks[i].kind == CM_SILENT ? " silent" : "", x, CMT + 12, marks[i].rank,
                      marks[i].kind == CM_SILENT ? "silent: its last event" : "oom marker");
        sw_report_put_rel(out, marks[i].ts - death);
        sw_buf_puts(out, " after the first death (its own clock)</title></path>");
        if (n_deaths <= 6)
            sw_buf_printf(out,
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"start\" "
                          "class=\"death-small\">%" PRId64 "</text>",
                          x + 5, CMT + 26 + 12.0 * (double)(labelled++ % 3), marks[i].rank);
    }
    /* watchdog errors: ticks along the bottom */
    const cpanel_t *wp = after ? &ap : &mp;
    for (size_t i = 0; i < n_marks; i++) {
        if (marks[i].kind != CM_WATCHDOG) continue;
        double x = px_in(wp, (double)(marks[i].ts - death));
        sw_buf_printf(out,
                      "<line class=\"watchdog\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
                      x, x, CMT + CPH - 22, CMT + CPH);
    }
    if (n_wd) {
        sw_buf_printf(out,
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"wd-label\">"
                      "%zu watchdog error%s%s</text>",
                      wp->x0 + wp->w / 2, CMT + CPH - 28, n_wd + (size_t)c->marks_dropped,
                      n_wd == 1 ? "" : "s", c->marks_dropped ? " (some not drawn)" : "");
    }
    sw_buf_printf(out,
                  "<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time "
                  "from the first death (each rank's own clock)</text>"
                  "<text class=\"axis-title\" text-anchor=\"middle\" transform=\"translate(18 "
                  "%.1f) rotate(-90)\">device memory of rank %" PRId64 "</text>",
                  CW / 2, CMT + CPH + 40, CMT + CPH / 2, c->rank);
    /* legend */
    double ly = CMT + CPH + 60;
    sw_buf_printf(out,
                  "<line class=\"swatch used\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\">used (device_used_bytes)</text>",
                  CML, CML + 22, ly - 4, ly - 4, CML + 28, ly);
    if (has_total)
        sw_buf_printf(out,
                      "<line class=\"swatch total\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                      "y2=\"%.1f\"/><text x=\"%.1f\" y=\"%.1f\">device total</text>",
                      CML + 210, CML + 232, ly - 4, ly - 4, CML + 238, ly);
    sw_buf_printf(out,
                  "<path class=\"other-death\" d=\"M%.1f,%.1f l-5,-9 h10 z\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\">other deaths (hollow: silent)</text>"
                  "<line class=\"watchdog\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\">watchdog error</text>",
                  CML + 360, ly + 1, CML + 372, ly, CML + 580, CML + 580, ly - 11, ly + 1,
                  CML + 588, ly);
    sw_buf_puts(out, "</svg><figcaption>");
    sw_buf_printf(out, "Rank %" PRId64 ": %zu sample%s", c->rank, c->n, c->n == 1 ? "" : "s");
    sw_buf_puts(out, " from the telemetry, up to its death");
    if (w) {
        sw_buf_puts(out, "; the warning at ");
        sw_report_put_utc(out, w->event_ns);
        sw_buf_puts(out, " named it at ");
        sw_report_bytes(out, w->w_used[warn_at]);
        sw_buf_puts(out, " of ");
        sw_report_bytes(out, w->w_total[warn_at]);
        sw_buf_printf(out, ", full in about %.0f s", (double)w->w_eta_ms[warn_at] / 1000.0);
    }
    sw_buf_printf(out, "; %zu other death%s and %zu watchdog error%s marked.", n_deaths,
                  n_deaths == 1 ? "" : "s", n_wd, n_wd == 1 ? "" : "s");
    sw_buf_puts(out, "</figcaption></figure>\n");
    free(marks);
    free(idx);
}

/* ---- the rank map -------------------------------------------------------- */

static bool in_list(const int64_t *v, size_t n, int64_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x) return true;
    return false;
}

static void put_rank_map(sw_buf_t *out, const x8item_t *f, int64_t world)
{
    int64_t top = f->fd_rank;
    for (size_t i = 0; i < f->n_dead; i++) top = f->dead[i] > top ? f->dead[i] : top;
    for (size_t i = 0; i < f->n_blind; i++) top = f->blind[i] > top ? f->blind[i] : top;
    if (world <= top) world = top + 1;
    if (world > MAP_MAX_RANKS) return;
    /* plain HTML cells (no chart): a rank's state is its class and title */
    sw_buf_printf(out, "<div class=\"rankmap%s\" role=\"list\" title=\"ranks of the job\">",
                  world > 64 ? " small" : "");
    for (int64_t r = 0; r < world; r++) {
        const char *cls = r == f->fd_rank                    ? "first"
                          : in_list(f->dead, f->n_dead, r)   ? "dead"
                          : in_list(f->blind, f->n_blind, r) ? "blind"
                                                             : "alive";
        const char *what = !strcmp(cls, "first")   ? "died first"
                           : !strcmp(cls, "dead")  ? "dead"
                           : !strcmp(cls, "blind") ? "blind (collector degraded or silent)"
                                                   : "alive";
        sw_buf_printf(out,
                      "<span class=\"rk %s\" role=\"listitem\" title=\"rank %" PRId64 ": %s\">",
                      cls, r, what);
        if (world <= 64) sw_buf_put_i64(out, r);
        sw_buf_puts(out, "</span>");
    }
    sw_buf_puts(out,
                "</div>\n<p class=\"rk-legend\"><span class=\"rk first\"></span> died first "
                "<span class=\"rk dead\"></span> dead <span class=\"rk blind\"></span> blind "
                "<span class=\"rk alive\"></span> alive</p>\n");
}

/* ---- a crash ------------------------------------------------------------- */

static void put_where(sw_buf_t *out, const x8item_t *f)
{
    sw_buf_printf(out, "rank %" PRId64, f->fd_rank);
    if (f->fd_host) {
        sw_buf_puts(out, " on <code>");
        sw_report_escc(out, f->fd_host);
        sw_buf_puts(out, "</code>");
        if (f->fd_device >= 0) sw_buf_printf(out, " GPU %" PRId64, f->fd_device);
    }
}

static void put_crash(sw_buf_t *out, const job_t *job, size_t j, const x8item_t *f,
                      unsigned *chart_no)
{
    sw_buf_printf(out,
                  "<section class=\"episode crash sev-critical\" id=\"job-%zu-crash-%" PRId64
                  "\">\n<h3>Crash %" PRId64
                  " <span class=\"badge critical\">critical</span></h3>\n"
                  "<p class=\"summary-line\">",
                  j + 1, f->number, f->number);
    put_where(out, f);
    sw_buf_printf(out, " died first (%s", f->fd_silent ? "silent: its telemetry stopped" : "oom");
    if (f->fd_ts) {
        sw_buf_puts(out, ", ");
        sw_report_put_utc(out, f->fd_ts);
    }
    sw_buf_printf(out, "); %" PRId64 " rank%s dead", f->deaths, f->deaths == 1 ? "" : "s");
    if (f->n_blind) sw_buf_printf(out, ", %zu blind", f->n_blind);
    sw_buf_puts(out, ".</p>\n");
    /* revisions: who was named first before */
    const x8item_t *first_rec = NULL;
    for (size_t i = 0; i < job->n_x8; i++) {
        const x8item_t *it = &job->x8s[i];
        if (it->act == SW_ACTION_CRASH && it->number == f->number &&
            (!first_rec || it->revision < first_rec->revision))
            first_rec = it;
    }
    sw_buf_puts(out, "<p class=\"choice\">");
    if (first_rec && first_rec->fd_rank != f->fd_rank) {
        sw_buf_printf(out,
                      "<strong>First death revised</strong> (revision %" PRId64 "): ", f->revision);
        put_where(out, f);
        sw_buf_puts(out, " died ");
        sw_report_duration(out, first_rec->fd_aligned - f->fd_aligned);
        sw_buf_puts(out, " before ");
        put_where(out, first_rec);
        sw_buf_puts(out,
                    ", which the first crash record named (its marker arrived first; the clocks "
                    "are aligned before comparing). ");
    } else {
        sw_buf_puts(out, "The first death was not revised. ");
    }
    size_t at = 0;
    const x8item_t *w = warning_of(job, f->fd_rank, &at);
    if (w) {
        sw_buf_puts(out, "A warning named it ");
        sw_report_duration(out, f->fd_ts - w->event_ns);
        sw_buf_puts(out, " before its death (");
        sw_report_put_utc(out, w->event_ns);
        sw_buf_puts(out, ": ");
        sw_report_bytes(out, w->w_used[at]);
        sw_buf_puts(out, " of ");
        sw_report_bytes(out, w->w_total[at]);
        sw_buf_printf(out, ", full in about %.0f s).", (double)w->w_eta_ms[at] / 1000.0);
    } else {
        sw_buf_puts(out, "No warning named this rank before its death.");
    }
    sw_buf_puts(out, "</p>\n");
    const ctl_t *c = job->ctl;
    if (c && c->crash == f->number && c->n > 0) {
        put_chart(out, job, f, c, ++*chart_no);
    } else if (c && c->crash == f->number) {
        sw_buf_printf(out,
                      "<p class=\"muted\">The telemetry read (%" PRIu64
                      " events of this job) holds no sample of rank %" PRId64
                      " in the 30 minutes before its death: no memory chart.</p>\n",
                      c->events, f->fd_rank);
    } else if (!c || c->crash != f->number) {
        sw_buf_puts(out,
                    "<p class=\"muted\">No memory chart: alert records carry no memory series. "
                    "Give the job's telemetry with <code>--telemetry FILE</code> to chart the "
                    "first dead rank's memory against its device total up to the death");
        sw_buf_puts(out, c ? " (a chart is drawn for a job's first crash only).</p>\n" : ".</p>\n");
    }
    put_rank_map(out, f, c ? c->world : 0);
    sw_buf_puts(out, "<dl class=\"facts\"><dt>dead ranks</dt><dd>");
    sw_report_put_ranks(out, f->dead, f->n_dead, 64);
    if ((int64_t)f->n_dead < f->deaths) sw_buf_printf(out, " (%" PRId64 " dead in all)", f->deaths);
    sw_buf_puts(out, "</dd><dt>blind ranks</dt><dd>");
    sw_report_put_ranks(out, f->blind, f->n_blind, 64);
    sw_buf_puts(out, "</dd></dl>\n</section>\n");
}

void sw_report_put_crashes(sw_buf_t *out, const job_t *job, size_t j, unsigned *chart_no)
{
    int64_t *nums = sw_malloc((job->n_x8 ? job->n_x8 : 1) * sizeof(*nums));
    size_t n = 0;
    for (size_t i = 0; i < job->n_x8; i++)
        if (job->x8s[i].act == SW_ACTION_CRASH && !in_list(nums, n, job->x8s[i].number))
            nums[n++] = job->x8s[i].number;
    qsort(nums, n, sizeof(*nums), cmp_i64);
    for (size_t i = 0; i < n; i++)
        put_crash(out, job, j, sw_report_crash_final(job, nums[i]), chart_no);
    free(nums);
}
