/* The report's text helpers and SVG chart (see sw_report_int.h). */
#include "sw_report_int.h"

void sw_report_escape(sw_buf_t *out, sw_str_t s)
{
    const unsigned char *p = (const unsigned char *)s.ptr;
    size_t i = 0;
    while (i < s.len) {
        unsigned char c = p[i];
        if (c < 0x80) {
            switch (c) {
            case '&': sw_buf_puts(out, "&amp;"); break;
            case '<': sw_buf_puts(out, "&lt;"); break;
            case '>': sw_buf_puts(out, "&gt;"); break;
            case '"': sw_buf_puts(out, "&quot;"); break;
            case '\'': sw_buf_puts(out, "&#39;"); break;
            default:
                if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
                    sw_buf_puts(out, "\xEF\xBF\xBD");
                else sw_buf_putc(out, (char)c);
            }
            i++;
            continue;
        }
        /* A well-formed UTF-8 sequence (no overlongs, no surrogates, at
         * most U+10FFFF) is copied; anything else becomes U+FFFD. */
        size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
        if (c >= 0xf5) n = 0;
        bool ok = n > 0 && i + n <= s.len;
        for (size_t k = 1; ok && k < n; k++) ok = (p[i + k] & 0xc0) == 0x80;
        if (ok && n == 3) {
            if (c == 0xe0 && p[i + 1] < 0xa0) ok = false;
            if (c == 0xed && p[i + 1] >= 0xa0) ok = false;
        }
        if (ok && n == 4) {
            if (c == 0xf0 && p[i + 1] < 0x90) ok = false;
            if (c == 0xf4 && p[i + 1] >= 0x90) ok = false;
        }
        if (ok) {
            sw_buf_put(out, p + i, n);
            i += n;
        } else {
            sw_buf_puts(out, "\xEF\xBF\xBD");
            i++;
        }
    }
}

void sw_report_esc(sw_buf_t *out, sw_str_t s)
{
    sw_report_escape(out, s);
}

void sw_report_escc(sw_buf_t *out, const char *s)
{
    sw_report_escape(out, sw_str(s));
}

/* printf("%.*f") without trailing zeros ("6.50" -> "6.5", "2.00" -> "2"). */
void sw_report_put_trim(sw_buf_t *out, double v, int decimals)
{
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "%.*f", decimals, v);
    size_t n = strlen(tmp);
    if (strchr(tmp, '.')) {
        while (n > 0 && tmp[n - 1] == '0') n--;
        if (n > 0 && tmp[n - 1] == '.') n--;
    }
    tmp[n] = '\0';
    if (!strcmp(tmp, "-0")) strcpy(tmp, "0");
    sw_buf_puts(out, tmp);
}

/* Three significant digits. */
static int sig3(double x)
{
    return x < 9.995 ? 2 : x < 99.95 ? 1 : 0;
}

void sw_report_bytes(sw_buf_t *out, int64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double a = bytes < 0 ? -(double)bytes : (double)bytes;
    if (bytes < 0) sw_buf_putc(out, '-');
    if (a < 1024.0) {
        sw_report_put_trim(out, a, 0);
        sw_buf_puts(out, " B");
        return;
    }
    int u = 0;
    while (a >= 1023.995 && u < 6) {
        a /= 1024.0;
        u++;
    }
    sw_report_put_trim(out, a, sig3(a));
    sw_buf_putc(out, ' ');
    sw_buf_puts(out, units[u]);
}

void sw_report_duration(sw_buf_t *out, int64_t ns)
{
    double a = ns < 0 ? -(double)ns : (double)ns;
    if (ns < 0) sw_buf_putc(out, '-');
    if (a == 0) {
        sw_buf_puts(out, "0 s");
        return;
    }
    const char *unit;
    double v;
    if (a < 999.5) unit = "ns", v = a;
    else if (a < 999.5e3) unit = "\xC2\xB5s", v = a / 1e3;
    else if (a < 999.5e6) unit = "ms", v = a / 1e6;
    else if (a < 119.95e9) unit = "s", v = a / 1e9;
    else if (a < 7199.5e9) unit = "min", v = a / 60e9;
    else unit = "h", v = a / 3600e9;
    sw_report_put_trim(out, v, sig3(v));
    sw_buf_putc(out, ' ');
    sw_buf_puts(out, unit);
}

/* A record timestamp (ns since the epoch) as UTC with milliseconds. */
void sw_report_put_utc(sw_buf_t *out, int64_t ns)
{
    time_t sec = (time_t)(ns / 1000000000);
    int64_t ms = (ns % 1000000000) / 1000000;
    if (ms < 0) {
        ms += 1000;
        sec -= 1;
    }
    struct tm tm;
    if (ns < 0 || !gmtime_r(&sec, &tm) || tm.tm_year + 1900 > 9999) {
        sw_buf_put_i64(out, ns);
        sw_buf_puts(out, " ns");
        return;
    }
    sw_buf_printf(out, "%04d-%02d-%02d %02d:%02d:%02d.%03d UTC", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)ms);
}

/* Signed offset relative to the onset: "+300 ms", "−1.2 s", "0". */
void sw_report_put_rel(sw_buf_t *out, int64_t ns)
{
    if (ns == 0) {
        sw_buf_puts(out, "0");
        return;
    }
    sw_buf_puts(out, ns > 0 ? "+" : "\xE2\x88\x92");
    sw_report_duration(out, ns > 0 ? ns : (ns == INT64_MIN ? INT64_MAX : -ns));
}

/* Rank list, the first @p max of them then "and N more". */
void sw_report_put_ranks(sw_buf_t *out, const int64_t *ranks, size_t n, size_t max)
{
    if (n == 0) {
        sw_buf_puts(out, "none");
        return;
    }
    for (size_t i = 0; i < n && i < max; i++) {
        if (i) sw_buf_puts(out, ", ");
        sw_buf_put_i64(out, ranks[i]);
    }
    if (n > max) sw_buf_printf(out, " and %zu more", n - max);
}

sw_str_t sw_report_sev_of(const rec_t *r)
{
    return r->severity.len ? r->severity : sw_str("none");
}

/* A CSS class for a severity: only known words, never input text. */
const char *sw_report_sev_class(sw_str_t sev)
{
    static const char *const known[] = {"critical", "error", "warning", "info"};
    for (size_t i = 0; i < 4; i++)
        if (sw_str_eq(sev, sw_str(known[i]))) return known[i];
    return "other";
}

void sw_report_put_job_name(sw_buf_t *out, const job_t *job)
{
    if (job->is_null) {
        sw_buf_puts(out, "<em>null job_id</em>");
        return;
    }
    sw_buf_puts(out, "<code>");
    sw_report_esc(out, job->id);
    sw_buf_puts(out, "</code>");
}

void sw_report_put_phase(sw_buf_t *out, const susp_t *s)
{
    switch (s->phase_kind) {
    case PHASE_UNIQUE: sw_report_esc(out, s->phase); break;
    case PHASE_HEURISTIC:
        sw_report_esc(out, s->phase);
        sw_buf_puts(out, " <span class=\"muted\">(ambiguous; heuristic phase_summary)</span>");
        break;
    case PHASE_AMBIGUOUS:
        sw_buf_puts(out, "unknown <span class=\"muted\">(ambiguous: ");
        sw_report_esc(out, s->phase);
        sw_buf_puts(out, ")</span>");
        break;
    default: sw_buf_puts(out, "unknown"); break;
    }
}

/* ------------------------------------------------------------------ */
/* Chart                                                               */
/* ------------------------------------------------------------------ */

/* The first cause (suspect 0) is drawn in its record's severity colour,
 * the followers in one neutral grey: the eye goes to the rank that moved
 * first (titles, tooltips and the legend tell the followers apart). */
#define FOLLOWER_COLOUR "#8a94a3"

static const char *series_colour(const rec_t *r, size_t i)
{
    static const struct {
        const char *sev, *colour;
    } k[] = {
        {"critical", "#c62828"}, {"error", "#ef6c00"}, {"warning", "#b58900"}, {"info", "#1565c0"}};
    if (i > 0) return FOLLOWER_COLOUR;
    const char *sev = sw_report_sev_class(sw_report_sev_of(r));
    for (size_t j = 0; j < sizeof(k) / sizeof(k[0]); j++)
        if (strcmp(sev, k[j].sev) == 0) return k[j].colour;
    return "#1d1d1f"; /* no known severity: the text colour */
}

#define CH_W 960.0
#define CH_ML 88.0
#define CH_MR 24.0
#define CH_MT 36.0
#define CH_PH 300.0
#define CH_PW (CH_W - CH_ML - CH_MR)

typedef struct chart_s {
    double lo, hi;     /* x domain: ns relative to the onset */
    double ymin, ymax; /* y domain: bytes */
    bool delta_mode;   /* no timeline at all: y is the peak delta */
} chart_t;

static double cx(const chart_t *ch, double x)
{
    return CH_ML + (x - ch->lo) / (ch->hi - ch->lo) * CH_PW;
}

static double cy(const chart_t *ch, double y)
{
    return CH_MT + CH_PH - (y - ch->ymin) / (ch->ymax - ch->ymin) * CH_PH;
}

static void put_xy(sw_buf_t *out, double x, double y)
{
    sw_buf_printf(out, "%.1f,%.1f", x, y);
}

double sw_report_nice_step(double raw)
{
    if (!(raw > 0)) return 1;
    double e = pow(10.0, floor(log10(raw)));
    double f = raw / e;
    double n = f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0;
    return n * e;
}

static int step_decimals(double step_units)
{
    if (step_units >= 1.0) return 0;
    int d = (int)ceil(-log10(step_units) - 1e-9);
    return d > 6 ? 6 : d;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int64_t sw_report_rel_ns(int64_t t, int64_t onset)
{
    return (int64_t)((uint64_t)t - (uint64_t)onset);
}

/* Indices of a series to draw: those inside [lo, hi] plus one neighbour on
 * each side (the plot clips them), thinned to SW_REPORT_MAX_POINTS with the
 * spike's first and last sample kept. @returns the count. */
static size_t pick_points(const susp_t *s, int64_t onset, const chart_t *ch, size_t *idx)
{
    size_t first = s->n_tl, last = 0;
    for (size_t i = 0; i < s->n_tl; i++) {
        double x = (double)sw_report_rel_ns(s->tl_ns[i], onset);
        if (x >= ch->lo && x <= ch->hi) {
            if (first == s->n_tl) first = i;
            last = i;
        }
    }
    if (first == s->n_tl) return 0;
    if (first > 0) first--;
    if (last + 1 < s->n_tl) last++;
    size_t count = last - first + 1;
    size_t k = 1;
    if (count > SW_REPORT_MAX_POINTS)
        k = (count + SW_REPORT_MAX_POINTS - 4) / (SW_REPORT_MAX_POINTS - 3);
    size_t n = 0;
    for (size_t i = first; i <= last; i++) {
        bool keep = (i - first) % k == 0 || i == last || (int64_t)i == s->tl_start ||
                    (int64_t)i == s->tl_spike;
        if (keep) idx[n++] = i;
    }
    return n;
}

static void put_text(sw_buf_t *out, double x, double y, const char *anchor, const char *cls,
                     const char *fill)
{
    sw_buf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"", x, y, anchor);
    if (cls) sw_buf_printf(out, " class=\"%s\"", cls);
    /* a style, not a fill attribute: the page's CSS outranks attributes */
    if (fill) sw_buf_printf(out, " style=\"fill:%s\"", fill);
    sw_buf_putc(out, '>');
}

/* Compute the domains of an episode's chart. @returns false when there is
 * nothing to place (no onset or no suspect with a time). */
static bool chart_domain(const rec_t *r, size_t n_series, chart_t *ch)
{
    int64_t onset = r->onset_ns;
    double core_lo = 0, core_hi = 0;
    double data_lo = INFINITY, data_hi = -INFINITY;
    size_t n_dt = 0, cap_dt = 0;
    double *dts = NULL;
    bool any_tl = false, any = false;
    for (size_t i = 0; i < n_series; i++) {
        const susp_t *s = &r->sus[i];
        if (s->has_aligned) {
            double x = (double)sw_report_rel_ns(s->aligned_ns, onset);
            core_lo = fmin(core_lo, x);
            core_hi = fmax(core_hi, x);
            any = true;
        }
        if (!s->n_tl) continue;
        any_tl = any = true;
        if (s->tl_start >= 0)
            core_lo = fmin(core_lo, (double)sw_report_rel_ns(s->tl_ns[s->tl_start], onset));
        if (s->tl_spike >= 0) {
            double x = (double)sw_report_rel_ns(s->tl_ns[s->tl_spike], onset);
            core_lo = fmin(core_lo, x);
            core_hi = fmax(core_hi, x);
        }
        data_lo = fmin(data_lo, (double)sw_report_rel_ns(s->tl_ns[0], onset));
        data_hi = fmax(data_hi, (double)sw_report_rel_ns(s->tl_ns[s->n_tl - 1], onset));
        if (cap_dt < n_dt + s->n_tl) {
            cap_dt = (n_dt + s->n_tl) * 2;
            dts = sw_reallocarray(dts, cap_dt, sizeof(*dts));
        }
        for (size_t k = 1; k < s->n_tl; k++)
            if (s->tl_ns[k] > s->tl_ns[k - 1])
                dts[n_dt++] = (double)(s->tl_ns[k] - s->tl_ns[k - 1]);
    }
    if (!any) {
        free(dts);
        return false;
    }
    double span = core_hi - core_lo;
    double dt = 0;
    if (n_dt) {
        qsort(dts, n_dt, sizeof(*dts), cmp_double);
        dt = dts[n_dt / 2];
    }
    free(dts);
    ch->delta_mode = !any_tl;
    if (any_tl) {
        /* Around the storm: the rising runs and the onset with context of
         * twice their span or 25 sampling intervals on each side, within
         * the excerpts' extent. */
        if (dt <= 0) dt = span > 0 ? span / 10 : 1e8;
        double pad = fmax(2 * span, 25 * dt);
        ch->lo = fmax(core_lo - pad, fmin(data_lo, core_lo));
        ch->hi = fmin(core_hi + pad, fmax(data_hi, core_hi));
    } else {
        double pad = fmax(span * 0.5, 5e7);
        ch->lo = core_lo - pad;
        ch->hi = core_hi + pad;
    }
    /* keep the onset and the spikes off the frame */
    ch->hi = fmax(ch->hi, core_hi + 0.06 * (core_hi - ch->lo));
    ch->lo = fmin(ch->lo, core_lo - 0.06 * (ch->hi - core_lo));
    if (ch->hi - ch->lo < 1e3) {
        ch->lo -= 5e5;
        ch->hi += 5e5;
    }
    double m = (ch->hi - ch->lo) * 0.02;
    ch->lo -= m;
    ch->hi += m;
    /* y */
    double ymin = INFINITY, ymax = -INFINITY;
    if (any_tl) {
        for (size_t i = 0; i < n_series; i++) {
            const susp_t *s = &r->sus[i];
            for (size_t k = 0; k < s->n_tl; k++) {
                double x = (double)sw_report_rel_ns(s->tl_ns[k], onset);
                if (x < ch->lo || x > ch->hi) continue;
                ymin = fmin(ymin, (double)s->tl_used[k]);
                ymax = fmax(ymax, (double)s->tl_used[k]);
            }
        }
        if (!(ymin <= ymax)) ymin = 0, ymax = 1;
        double range = ymax - ymin;
        if (range < 1048576.0) {
            double mid = (ymin + ymax) / 2;
            ymin = mid - 524288.0;
            ymax = mid + 524288.0;
            range = 1048576.0;
        }
        ymin -= range * 0.06;
        ymax += range * 0.06;
        if (ymin < 0 && (ymin + range * 0.06) >= 0) ymin = 0;
    } else {
        ymin = 0;
        ymax = 0;
        for (size_t i = 0; i < n_series; i++)
            if (r->sus[i].has_delta) ymax = fmax(ymax, (double)r->sus[i].peak_delta_bytes);
        if (ymax <= 0) ymax = 1048576.0;
        ymax *= 1.15;
    }
    ch->ymin = ymin;
    ch->ymax = ymax;
    return true;
}

static void chart_axes(sw_buf_t *out, const chart_t *ch)
{
    /* y ticks in the unit of the larger end */
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double big = fmax(fabs(ch->ymin), fabs(ch->ymax));
    int u = 0;
    double unit = 1;
    while (u < 5 && big >= unit * 1024.0) {
        unit *= 1024.0;
        u++;
    }
    double step_u = sw_report_nice_step((ch->ymax - ch->ymin) / unit / 6.0);
    int dec = step_decimals(step_u);
    double step = step_u * unit;
    sw_buf_puts(out, "<g class=\"axis y\">");
    int guard = 0;
    for (double v = ceil(ch->ymin / step) * step; v <= ch->ymax + step * 1e-9 && guard++ < 40;
         v += step) {
        double y = cy(ch, v);
        sw_buf_printf(out, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
                      CH_ML, CH_ML + CH_PW, y, y);
        put_text(out, CH_ML - 8, y + 4, "end", NULL, NULL);
        sw_report_put_trim(out, v / unit, dec);
        sw_buf_printf(out, " %s</text>", units[u]);
    }
    sw_buf_puts(out, "</g>");
    /* x ticks: time relative to the onset */
    double xstep = sw_report_nice_step((ch->hi - ch->lo) / 8.0);
    double xunit;
    const char *xname;
    if (xstep >= 1e9) xunit = 1e9, xname = "s";
    else if (xstep >= 1e6) xunit = 1e6, xname = "ms";
    else if (xstep >= 1e3) xunit = 1e3, xname = "\xC2\xB5s";
    else xunit = 1, xname = "ns";
    int xdec = step_decimals(xstep / xunit);
    sw_buf_puts(out, "<g class=\"axis x\">");
    guard = 0;
    for (double v = ceil(ch->lo / xstep) * xstep; v <= ch->hi + xstep * 1e-9 && guard++ < 40;
         v += xstep) {
        double x = cx(ch, v);
        sw_buf_printf(out, "<line class=\"tick\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
                      x, x, CH_MT + CH_PH, CH_MT + CH_PH + 5);
        put_text(out, x, CH_MT + CH_PH + 19, "middle", NULL, NULL);
        if (fabs(v) < xstep * 1e-6) {
            sw_buf_puts(out, "0");
        } else {
            sw_buf_puts(out, v > 0 ? "+" : "\xE2\x88\x92");
            sw_report_put_trim(out, fabs(v) / xunit, xdec);
            sw_buf_printf(out, " %s", xname);
        }
        sw_buf_puts(out, "</text>");
    }
    sw_buf_puts(out, "</g>");
    sw_buf_printf(out,
                  "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
                  CH_ML, CH_MT, CH_PW, CH_PH);
    put_text(out, CH_ML + CH_PW / 2, CH_MT + CH_PH + 40, "middle", "axis-title", NULL);
    sw_buf_puts(out, "time relative to the cluster onset (aligned clocks)</text>");
    sw_buf_printf(out,
                  "<text class=\"axis-title\" text-anchor=\"middle\" "
                  "transform=\"translate(18 %.1f) rotate(-90)\">%s</text>",
                  CH_MT + CH_PH / 2,
                  ch->delta_mode ? "rise at the spike (peak delta)" : "device memory used");
}

/* Short description of a suspect for titles and legends. */
static void put_suspect_brief(sw_buf_t *out, const susp_t *s)
{
    sw_buf_printf(out, "rank %" PRId64, s->rank);
    if (s->has_lead) {
        sw_buf_puts(out, ", lead ");
        sw_report_duration(out, s->lead_ns);
    }
    if (s->confidence.len) {
        sw_buf_puts(out, ", ");
        sw_report_esc(out, s->confidence);
    }
}

static void chart_series(sw_buf_t *out, const rec_t *r, size_t n_series, const chart_t *ch,
                         unsigned chart_no)
{
    size_t *idx = sw_malloc(SW_REPORT_MAX_POINTS * 2 * sizeof(*idx) + 1);
    sw_buf_printf(out, "<g clip-path=\"url(#clip-%u)\">", chart_no);
    for (size_t i = 0; i < n_series; i++) {
        const susp_t *s = &r->sus[i];
        const char *col = series_colour(r, i);
        if (!s->n_tl) continue;
        size_t n = pick_points(s, r->onset_ns, ch, idx);
        if (n == 0) continue;
        sw_buf_printf(out,
                      "<path class=\"series\" data-rank=\"%" PRId64
                      "\" data-points=\"%zu\" "
                      "stroke=\"%s\" d=\"",
                      s->rank, n, col);
        for (size_t k = 0; k < n; k++) {
            size_t j = idx[k];
            sw_buf_putc(out, k ? 'L' : 'M');
            put_xy(out, cx(ch, (double)sw_report_rel_ns(s->tl_ns[j], r->onset_ns)),
                   cy(ch, (double)s->tl_used[j]));
        }
        sw_buf_puts(out, "\"><title>");
        put_suspect_brief(out, s);
        sw_buf_printf(out, ": device_used_bytes, %zu of %zu excerpt points</title></path>", n,
                      s->n_tl);
        /* the rising run that qualified as the spike */
        if (s->tl_start >= 0 && s->tl_spike > s->tl_start) {
            sw_buf_printf(out, "<path class=\"rise\" stroke=\"%s\" d=\"", col);
            for (int64_t j = s->tl_start; j <= s->tl_spike; j++) {
                sw_buf_putc(out, j == s->tl_start ? 'M' : 'L');
                put_xy(out, cx(ch, (double)sw_report_rel_ns(s->tl_ns[j], r->onset_ns)),
                       cy(ch, (double)s->tl_used[j]));
            }
            sw_buf_puts(out, "\"/>");
        }
    }
    sw_buf_puts(out, "</g>");
    free(idx);
}

/* Spike markers, drawn over the series and outside the clip. */
static void chart_spikes(sw_buf_t *out, const rec_t *r, size_t n_series, const chart_t *ch)
{
    double placed[SW_REPORT_MAX_SERIES][2];
    size_t n_placed = 0;
    sw_buf_puts(out, "<g class=\"spikes\">");
    for (size_t i = 0; i < n_series; i++) {
        const susp_t *s = &r->sus[i];
        const char *col = series_colour(r, i);
        double x, y;
        bool on_series = false;
        if (s->n_tl && s->tl_spike >= 0) {
            x = (double)sw_report_rel_ns(s->tl_ns[s->tl_spike], r->onset_ns);
            y = (double)s->tl_used[s->tl_spike];
            on_series = true;
        } else if (s->has_aligned) {
            x = (double)sw_report_rel_ns(s->aligned_ns, r->onset_ns);
            y = ch->delta_mode && s->has_delta ? (double)s->peak_delta_bytes : ch->ymin;
        } else {
            continue;
        }
        if (x < ch->lo || x > ch->hi) continue;
        double px = cx(ch, x), py = cy(ch, y);
        sw_buf_printf(out, "<g class=\"spike\" data-rank=\"%" PRId64 "\"><title>", s->rank);
        put_suspect_brief(out, s);
        sw_buf_puts(out, ": spike at ");
        sw_report_put_rel(out, (int64_t)x);
        sw_buf_puts(out, " from the onset");
        if (s->has_delta) {
            sw_buf_puts(out, ", peak delta +");
            sw_report_bytes(out, s->peak_delta_bytes);
        }
        if (!s->n_tl) sw_buf_puts(out, " (no timeline in record)");
        sw_buf_puts(out, "</title>");
        if (on_series) {
            sw_buf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"%s\"/>", px, py,
                          col);
        } else if (ch->delta_mode) {
            sw_buf_printf(out,
                          "<line class=\"stem\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                          "stroke=\"%s\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"%s\"/>",
                          px, px, cy(ch, 0), py, col, px, py, col);
        } else {
            /* no timeline beside others that have one: a dashed line at
             * the spike time and a triangle on the time axis */
            sw_buf_printf(
                out,
                "<line class=\"stem dashed\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                "y2=\"%.1f\" stroke=\"%s\"/><path d=\"M%.1f,%.1fl-6,10h12z\" fill=\"%s\"/>",
                px, px, CH_MT, CH_MT + CH_PH, col, px, CH_MT + CH_PH - 10, col);
            py = CH_MT + CH_PH - 10;
        }
        /* labels of spikes close in time are stacked, not overprinted */
        double ly = py - 11 < CH_MT + 12 ? py + 20 : py - 11;
        for (size_t k = 0; k < n_placed; k++) {
            if (fabs(placed[k][0] - px) < 26 && fabs(placed[k][1] - ly) < 13) {
                ly = placed[k][1] - 14;
                k = (size_t)-1; /* check again from the first */
            }
        }
        placed[n_placed][0] = px;
        placed[n_placed][1] = ly;
        n_placed++;
        put_text(out, px, ly, "middle", "spike-label", col);
        sw_buf_printf(out, "r%" PRId64 "</text></g>", s->rank);
    }
    sw_buf_puts(out, "</g>");
}

static void chart_legend(sw_buf_t *out, const rec_t *r, size_t n_series, double y0)
{
    sw_buf_puts(out, "<g class=\"legend\">");
    /* onset first, then the suspects, two columns */
    for (size_t e = 0; e <= n_series; e++) {
        double x = CH_ML + (double)(e % 2) * (CH_PW / 2);
        double y = y0 + (double)(e / 2) * 20;
        if (e == 0) {
            sw_buf_printf(out,
                          "<line class=\"onset\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
                          x, x + 24, y, y);
            put_text(out, x + 30, y + 4, "start", NULL, NULL);
            sw_buf_puts(out, "cluster onset (second-earliest candidate spike)</text>");
            continue;
        }
        const susp_t *s = &r->sus[e - 1];
        const char *col = series_colour(r, e - 1);
        sw_buf_printf(out,
                      "<line class=\"swatch\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                      "stroke=\"%s\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>",
                      x, x + 24, y, y, col, x + 12, y, col);
        put_text(out, x + 30, y + 4, "start", NULL, NULL);
        put_suspect_brief(out, s);
        if (!s->n_tl) sw_buf_puts(out, " \xE2\x80\x94 no timeline in record");
        sw_buf_puts(out, "</text>");
    }
    sw_buf_puts(out, "</g>");
}

/* The chart of an episode's charted record; a paragraph instead when
 * there is nothing to place. */
void sw_report_put_chart(sw_buf_t *out, const job_t *job, const ep_t *ep, const rec_t *r,
                         unsigned chart_no)
{
    size_t n_series = r->n_sus < SW_REPORT_MAX_SERIES ? r->n_sus : SW_REPORT_MAX_SERIES;
    chart_t ch;
    if (!r->has_onset || n_series == 0 || !chart_domain(r, n_series, &ch)) {
        sw_buf_puts(out,
                    "<p class=\"nochart\">No chart: the charted record has no cluster onset "
                    "or no suspect with a spike time.</p>\n");
        return;
    }
    size_t with_tl = 0;
    for (size_t i = 0; i < n_series; i++) with_tl += r->sus[i].n_tl ? 1 : 0;
    double legend_y = CH_MT + CH_PH + 66;
    double height = legend_y + (double)((n_series + 2) / 2) * 20 + 4;
    /* accessible name: what the chart shows in one sentence */
    sw_buf_t label;
    sw_buf_init(&label);
    sw_buf_puts(&label, "Device memory of the suspect ranks around the cluster onset, job ");
    if (job->is_null) sw_buf_puts(&label, "null");
    else sw_report_esc(&label, job->id);
    sw_buf_printf(&label, ", episode %" PRId64 ": ", ep->episode);
    for (size_t i = 0; i < n_series; i++) {
        const susp_t *s = &r->sus[i];
        if (i) sw_buf_puts(&label, "; ");
        sw_buf_printf(&label, "rank %" PRId64 " spiked ", s->rank);
        if (s->has_lead && s->lead_ns > 0) {
            sw_report_duration(&label, s->lead_ns);
            sw_buf_puts(&label, " before the onset");
        } else {
            sw_buf_puts(&label, "at the onset");
        }
        if (s->has_delta) {
            sw_buf_puts(&label, " by +");
            sw_report_bytes(&label, s->peak_delta_bytes);
        }
        if (!s->n_tl) sw_buf_puts(&label, " (no timeline in record)");
    }
    sw_buf_puts(&label, ".");
    sw_buf_printf(
        out,
        "<figure class=\"chart\"><svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" "
        "role=\"img\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
        "aria-labelledby=\"chart-%u-title chart-%u-desc\" aria-label=\"",
        CH_W, height, CH_W, height, chart_no, chart_no);
    sw_buf_put(out, label.data, label.len);
    sw_buf_printf(out, "\"><title id=\"chart-%u-title\">", chart_no);
    sw_buf_put(out, label.data, label.len);
    sw_buf_printf(out, "</title><desc id=\"chart-%u-desc\">", chart_no);
    if (ch.delta_mode)
        sw_buf_puts(out,
                    "No suspect carries a timeline in the record: each spike is drawn at its "
                    "aligned_first_spike_timestamp_ns with the height of its peak delta.");
    else
        sw_buf_puts(out,
                    "Aligned device_used_bytes timelines of the suspects, the rising run that "
                    "qualified as each spike drawn thick, each spike sample marked, the cluster "
                    "onset as a dashed vertical line at 0.");
    sw_buf_puts(out, "</desc>");
    sw_buf_printf(out,
                  "<defs><clipPath id=\"clip-%u\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                  "height=\"%.1f\"/></clipPath></defs>",
                  chart_no, CH_ML, CH_MT, CH_PW, CH_PH);
    sw_buf_printf(out, "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\"/>", CH_W,
                  height);
    chart_axes(out, &ch);
    chart_series(out, r, n_series, &ch, chart_no);
    /* the onset */
    double ox = cx(&ch, 0);
    sw_buf_printf(out,
                  "<g class=\"onset-marker\"><title>cluster onset: aligned time %" PRId64 " ns (",
                  r->onset_ns);
    sw_report_put_utc(out, r->onset_ns);
    sw_buf_printf(
        out, ")</title><line class=\"onset\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", ox,
        ox, CH_MT - 6, CH_MT + CH_PH);
    const char *anchor = ox > CH_ML + CH_PW - 48 ? "end" : ox < CH_ML + 48 ? "start" : "middle";
    put_text(out, ox, CH_MT - 10, anchor, "onset-label", NULL);
    sw_buf_puts(out, "cluster onset</text></g>");
    chart_spikes(out, r, n_series, &ch);
    chart_legend(out, r, n_series, legend_y);
    sw_buf_puts(out, "</svg>\n<figcaption>");
    if (ch.delta_mode) {
        sw_buf_puts(out,
                    "No timeline in record: each suspect is drawn at its aligned spike time "
                    "with its peak delta. ");
    } else {
        sw_buf_puts(out, "Window around the storm: ");
        sw_report_put_rel(out, (int64_t)ch.lo);
        sw_buf_puts(out, " to ");
        sw_report_put_rel(out, (int64_t)ch.hi);
        sw_buf_puts(out, " from the cluster onset (");
        sw_report_put_utc(out, r->onset_ns);
        sw_buf_puts(out, ", aligned clock of the anchor rank). ");
        for (size_t i = 0; i < n_series; i++) {
            const susp_t *s = &r->sus[i];
            if (!s->n_tl) continue;
            sw_buf_printf(out, "Rank %" PRId64 ": %zu-point excerpt", s->rank, s->n_tl);
            if (s->tl_window >= 0)
                sw_buf_printf(out, " of a %" PRId64 "-sample window", s->tl_window);
            sw_buf_puts(out, ". ");
        }
        if (with_tl < n_series)
            sw_buf_puts(out,
                        "Suspects without a timeline in the record are "
                        "marked at their aligned spike time only. ");
    }
    if (r->n_sus > n_series)
        sw_buf_printf(out, "The %zu earliest of %zu suspects are charted; all are in the table.",
                      n_series, r->n_sus);
    sw_buf_puts(out, "</figcaption></figure>\n");
    sw_buf_clear(&label);
}

/* ------------------------------------------------------------------ */
/* Page                                                                */
/* ------------------------------------------------------------------ */
