/*
 * The incident report in a real browser: headless Chromium loads a report
 * of a generated storm (gen | replay | report), its DOM must hold the
 * charts, series paths and tables, and its screenshot must show a drawn
 * chart (PNG decoded here with zlib: the pixels of the first two series
 * colours are found, the chart area is neither blank nor flat). And the
 * report of a generated crash cascade with its telemetry: the page opens
 * with the crash, its screenshot shows the memory line running across the
 * chart up to the death, the warning's mark, the watchdog ticks and the
 * rank map with the first death (the screenshot is kept as crash.png in
 * the scratch dir when a case fails; SW_KEEP_SHOTS=DIR copies it). Without
 * chromium the test is skipped (exit 77) outside CI and fails in CI
 * (CI=true): scripts/install-deps.sh test installs it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "sw_alloc.h"
#include "sw_testlib.h"

#define SKIP 77

/* ------------------------------------------------------------------ */
/* PNG (8-bit, non-interlaced: what Chromium writes)                   */
/* ------------------------------------------------------------------ */

typedef struct img_s {
    uint32_t w, h;
    unsigned char *rgb; /* w * h * 3 */
} img_t;

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

static bool png_decode(const unsigned char *p, size_t n, img_t *img, char *why, size_t why_size)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n < 8 || memcmp(p, sig, 8)) return snprintf(why, why_size, "not a PNG"), false;
    size_t off = 8;
    uint32_t w = 0, h = 0;
    int ch = 0;
    sw_buf_t idat;
    sw_buf_init(&idat);
    bool ok = false;
    while (off + 12 <= n) {
        uint32_t len = be32(p + off);
        const unsigned char *type = p + off + 4, *data = p + off + 8;
        if (off + 12 + (size_t)len > n) break;
        if (!memcmp(type, "IHDR", 4)) {
            w = be32(data);
            h = be32(data + 4);
            int depth = data[8], ctype = data[9], interlace = data[12];
            ch = ctype == 2 ? 3 : ctype == 6 ? 4 : ctype == 0 ? 1 : ctype == 4 ? 2 : 0;
            if (depth != 8 || ch == 0 || interlace != 0 || w == 0 || h == 0 || w > 20000 ||
                h > 20000) {
                snprintf(why, why_size, "unsupported PNG: depth %d, colour type %d, interlace %d",
                         depth, ctype, interlace);
                goto out;
            }
        } else if (!memcmp(type, "IDAT", 4)) {
            sw_buf_put(&idat, data, len);
        } else if (!memcmp(type, "IEND", 4)) {
            break;
        }
        off += 12 + (size_t)len;
    }
    if (!ch || !idat.len) {
        snprintf(why, why_size, "PNG without IHDR or IDAT");
        goto out;
    }
    size_t stride = (size_t)w * (size_t)ch;
    uLongf raw_len = (uLongf)((stride + 1) * h);
    unsigned char *raw = sw_malloc(raw_len);
    if (uncompress(raw, &raw_len, (const Bytef *)idat.data, (uLong)idat.len) != Z_OK ||
        raw_len != (stride + 1) * h) {
        free(raw);
        snprintf(why, why_size, "IDAT does not inflate to %zu bytes", (stride + 1) * (size_t)h);
        goto out;
    }
    /* un-filter in place: row y's bytes follow its filter byte */
    for (uint32_t y = 0; y < h; y++) {
        unsigned char *row = raw + (size_t)y * (stride + 1) + 1;
        const unsigned char *up = y ? row - (stride + 1) : NULL;
        int f = row[-1];
        for (size_t x = 0; x < stride; x++) {
            int a = x >= (size_t)ch ? row[x - ch] : 0, b = up ? up[x] : 0;
            int c = up && x >= (size_t)ch ? up[x - ch] : 0;
            switch (f) {
            case 0: break;
            case 1: row[x] = (unsigned char)(row[x] + a); break;
            case 2: row[x] = (unsigned char)(row[x] + b); break;
            case 3: row[x] = (unsigned char)(row[x] + (a + b) / 2); break;
            case 4: row[x] = (unsigned char)(row[x] + paeth(a, b, c)); break;
            default:
                free(raw);
                snprintf(why, why_size, "row %u has filter type %d", y, f);
                goto out;
            }
        }
    }
    img->w = w;
    img->h = h;
    img->rgb = sw_malloc((size_t)w * h * 3);
    for (uint32_t y = 0; y < h; y++) {
        const unsigned char *row = raw + (size_t)y * (stride + 1) + 1;
        for (uint32_t x = 0; x < w; x++) {
            unsigned char *o = img->rgb + ((size_t)y * w + x) * 3;
            const unsigned char *s = row + (size_t)x * ch;
            o[0] = s[0];
            o[1] = ch >= 3 ? s[1] : s[0];
            o[2] = ch >= 3 ? s[2] : s[0];
        }
    }
    free(raw);
    ok = true;
out:
    sw_buf_clear(&idat);
    return ok;
}

/* Pixels within @p tol (sum of channel differences) of an RGB colour,
 * and their bounding box. */
typedef struct find_s {
    size_t n;
    uint32_t x0, y0, x1, y1;
} find_t;

static find_t find_colour(const img_t *img, uint32_t rgb, int tol)
{
    find_t f = {0, UINT32_MAX, UINT32_MAX, 0, 0};
    int r = (int)(rgb >> 16), g = (int)(rgb >> 8 & 0xff), b = (int)(rgb & 0xff);
    for (uint32_t y = 0; y < img->h; y++)
        for (uint32_t x = 0; x < img->w; x++) {
            const unsigned char *p = img->rgb + ((size_t)y * img->w + x) * 3;
            if (abs(p[0] - r) + abs(p[1] - g) + abs(p[2] - b) > tol) continue;
            f.n++;
            if (x < f.x0) f.x0 = x;
            if (y < f.y0) f.y0 = y;
            if (x > f.x1) f.x1 = x;
            if (y > f.y1) f.y1 = y;
        }
    return f;
}

/* Distinct colours and non-white pixels in [x0, x1] x [y0, y1]. */
static void area_stats(const img_t *img, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                       size_t *distinct, size_t *ink, size_t *total)
{
    unsigned char *seen = sw_calloc(1u << 21, 1); /* a bit per 24-bit colour */
    *distinct = *ink = *total = 0;
    for (uint32_t y = y0; y <= y1 && y < img->h; y++)
        for (uint32_t x = x0; x <= x1 && x < img->w; x++) {
            const unsigned char *p = img->rgb + ((size_t)y * img->w + x) * 3;
            uint32_t c = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
            if (!(seen[c >> 3] & (1u << (c & 7)))) {
                seen[c >> 3] |= (unsigned char)(1u << (c & 7));
                (*distinct)++;
            }
            if (p[0] < 235 || p[1] < 235 || p[2] < 235) (*ink)++;
            (*total)++;
        }
    free(seen);
}

/* ------------------------------------------------------------------ */
/* The test                                                            */
/* ------------------------------------------------------------------ */

static bool executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* chromium on PATH (or $SW_CHROMIUM). */
static bool find_chromium(char *out, size_t size)
{
    const char *env = getenv("SW_CHROMIUM");
    if (env && *env) {
        snprintf(out, size, "%s", env);
        return executable(out);
    }
    const char *path = getenv("PATH");
    static const char *const names[] = {"chromium", "chromium-browser"};
    for (size_t k = 0; k < 2; k++) {
        const char *p = path ? path : "/usr/bin:/bin";
        while (*p) {
            const char *e = strchr(p, ':');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            snprintf(out, size, "%.*s/%s", (int)n, p, names[k]);
            if (n && executable(out)) return true;
            p += n + (e ? 1 : 0);
        }
    }
    return false;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0, k = strlen(needle);
    for (const char *p = strstr(hay, needle); p; p = strstr(p + k, needle)) n++;
    return n;
}

static void show_log(const char *path)
{
    sw_buf_t log;
    sw_buf_init(&log);
    if (sw_test_read_file(path, &log) && log.len) {
        size_t from = log.len > 4000 ? log.len - 4000 : 0;
        fprintf(stderr, "--- %s (last 4000 bytes) ---\n%s\n", path, log.data + from);
    }
    sw_buf_clear(&log);
}

/* What the cases share: chromium, the scratch dir with the report of a
 * generated storm (made by the group setup), the browser's environment. */
static char g_chromium[1024];
static bool g_have_chromium;
static bool g_skipped; /* a case was skipped for want of chromium: exit 77 */
static int g_passed;
static char g_dir[2048];
static char g_env[8192];
static size_t g_charts;
static const char k_flags[] =
    "--headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
    "--no-first-run --no-default-browser-check --disable-crash-reporter "
    "--disable-breakpad --hide-scrollbars --force-device-scale-factor=1 "
    "--window-size=1200,1600";

/* Without chromium a case is skipped outside CI and fails in CI. */
static void need_chromium(void)
{
    if (g_have_chromium) return;
    bool ci = getenv("CI") && !strcmp(getenv("CI"), "true");
    if (ci)
        SW_FAIL(
            "chromium is not installed (CI=true requires it; "
            "scripts/install-deps.sh test installs the Debian package)");
    printf(
        "SKIP: chromium is not installed (apt-get install chromium, or "
        "scripts/install-deps.sh test); the browser check of the report did not run\n");
    g_skipped = true;
    skip();
}

/* The DOM chromium builds from the report. */
static void test_dom(void **state)
{
    (void)state;
    need_chromium();
    char cmd[32768], path[2200];
    sw_buf_t dom;
    sw_buf_init(&dom);
    snprintf(
        cmd, sizeof(cmd),
        "%s timeout 120 '%s' %s --user-data-dir='%s/profile' --dump-dom 'file://%s/report.html' "
        "> '%s/dom.html' 2> '%s/chromium-dom.log'",
        g_env, g_chromium, k_flags, g_dir, g_dir, g_dir, g_dir);
    int rc = system(cmd);
    snprintf(path, sizeof(path), "%s/chromium-dom.log", g_dir);
    if (rc != 0) show_log(path);
    SW_ASSERT(rc == 0, "chromium --dump-dom failed (status %d): %s", rc, cmd);
    snprintf(path, sizeof(path), "%s/dom.html", g_dir);
    SW_ASSERT(sw_test_read_file(path, &dom) && dom.len > 0, "empty DOM dump");
    SW_ASSERT(count(dom.data, "<svg") == g_charts, "DOM has %zu svg elements, the page %zu",
              count(dom.data, "<svg"), g_charts);
    SW_ASSERT(count(dom.data, "<path class=\"series\"") >= 2, "DOM has %zu series paths",
              count(dom.data, "<path class=\"series\""));
    SW_ASSERT(count(dom.data, "<table class=\"suspects\"") >= g_charts,
              "DOM lacks the suspect tables");
    SW_ASSERT(count(dom.data, "<table class=\"lifecycle\"") == g_charts,
              "DOM lacks the lifecycle tables");
    SW_ASSERT(strstr(dom.data, "role=\"img\"") && strstr(dom.data, "<title id=\"chart-1-title\">"),
              "DOM lacks the chart's accessible name");
    SW_ASSERT(!strstr(dom.data, "<parsererror"), "the browser reports a parse error");
    sw_buf_clear(&dom);
    g_passed++;
}

/* Its screenshot shows a drawn chart. */
static void test_screenshot(void **state)
{
    (void)state;
    need_chromium();
    char cmd[32768], path[2200];
    sw_buf_t png;
    sw_buf_init(&png);
    snprintf(cmd, sizeof(cmd),
             "%s timeout 120 '%s' %s --user-data-dir='%s/profile' --screenshot='%s/report.png' "
             "'file://%s/report.html' > '%s/chromium-shot.log' 2>&1",
             g_env, g_chromium, k_flags, g_dir, g_dir, g_dir, g_dir);
    int rc = system(cmd);
    snprintf(path, sizeof(path), "%s/chromium-shot.log", g_dir);
    if (rc != 0) show_log(path);
    SW_ASSERT(rc == 0, "chromium --screenshot failed (status %d): %s", rc, cmd);
    snprintf(path, sizeof(path), "%s/report.png", g_dir);
    SW_ASSERT(sw_test_read_file(path, &png) && png.len > 0, "no screenshot %s", path);
    img_t img;
    char why[256];
    SW_ASSERT(png_decode((const unsigned char *)png.data, png.len, &img, why, sizeof(why)),
              "%s: %s", path, why);
    SW_ASSERT(img.w == 1200 && img.h == 1600, "screenshot is %ux%u, expected 1200x1600", img.w,
              img.h);
    size_t distinct, ink, total;
    area_stats(&img, 0, 0, img.w - 1, img.h - 1, &distinct, &ink, &total);
    SW_ASSERT(distinct >= 64, "the page shows only %zu colours", distinct);
    /* the first cause's series (and its spike marker) in its severity
     * colour, the followers in the neutral grey: their box is the chart's
     * plot */
    static const uint32_t sev_rgb[] = {0xc62828, 0xef6c00, 0xb58900, 0x1565c0};
    find_t s1 = find_colour(&img, sev_rgb[0], 24);
    for (size_t i = 1; i < 4; i++) {
        find_t c = find_colour(&img, sev_rgb[i], 24);
        if (c.n > s1.n) s1 = c;
    }
    find_t s2 = find_colour(&img, 0x8a94a3, 6); /* not the frame, #9aa3ad */
    SW_ASSERT(s1.n >= 150, "only %zu pixels of the first series colour", s1.n);
    SW_ASSERT(s2.n >= 80, "only %zu pixels of the second series colour", s2.n);
    SW_ASSERT(s1.x1 - s1.x0 >= 300,
              "the first series spans %u px, expected a line across the chart", s1.x1 - s1.x0);
    uint32_t x0 = s1.x0 < s2.x0 ? s1.x0 : s2.x0, x1 = s1.x1 > s2.x1 ? s1.x1 : s2.x1;
    uint32_t y0 = s1.y0 < s2.y0 ? s1.y0 : s2.y0, y1 = s1.y1 > s2.y1 ? s1.y1 : s2.y1;
    area_stats(&img, x0, y0, x1, y1, &distinct, &ink, &total);
    SW_ASSERT(distinct >= 16, "the chart area shows only %zu colours", distinct);
    SW_ASSERT(ink * 100 >= total && ink * 2 <= total,
              "the chart area is %zu of %zu pixels non-white: blank or flat", ink, total);
    printf(
        "browser: %zu chart(s); screenshot %ux%u; chart area %ux%u at (%u,%u): %zu colours, "
        "%.1f%% non-white; series pixels %zu + %zu\n",
        g_charts, img.w, img.h, x1 - x0 + 1, y1 - y0 + 1, x0, y0, distinct,
        100.0 * (double)ink / (double)total, s1.n, s2.n);
    free(img.rgb);
    sw_buf_clear(&png);
    g_passed++;
}

/* Find chromium; with it, the report of a generated storm in a scratch dir
 * with an absolute path (file:// URL), its own HOME and profile, so
 * chromium writes nothing outside it. */
static int browser_setup(void **state)
{
    (void)state;
    g_have_chromium = find_chromium(g_chromium, sizeof(g_chromium));
    if (!g_have_chromium) return 0; /* the cases skip or fail */
    SW_ASSERT(access(sw_test_bin(), X_OK) == 0, "the stormwatch binary \"%s\" is not executable",
              sw_test_bin());
    char *tmp_abs = realpath(sw_test_tmp(), NULL);
    SW_ASSERT(tmp_abs, "cannot resolve %s", sw_test_tmp());
    snprintf(g_dir, sizeof(g_dir), "%s/test_report_browser_%d", tmp_abs, (int)getpid());
    free(tmp_abs);
    char cmd[32768];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s/home'", g_dir, g_dir);
    SW_ASSERT(system(cmd) == 0, "cannot create %s", g_dir);
    snprintf(cmd, sizeof(cmd),
             "'%s' gen --ranks 8 --samples 300 --phases --seed 3 --quiet > '%s/telemetry.jsonl' && "
             "'%s' replay '%s/telemetry.jsonl' > '%s/alerts.jsonl' && "
             "'%s' report -o '%s/report.html' '%s/alerts.jsonl'",
             sw_test_bin(), g_dir, sw_test_bin(), g_dir, g_dir, sw_test_bin(), g_dir, g_dir);
    SW_ASSERT(system(cmd) == 0, "gen | replay | report failed: %s", cmd);
    char path[2200];
    snprintf(path, sizeof(path), "%s/report.html", g_dir);
    sw_buf_t html;
    sw_buf_init(&html);
    SW_ASSERT(sw_test_read_file(path, &html), "no %s", path);
    g_charts = count(html.data, "<svg");
    sw_buf_clear(&html);
    SW_ASSERT(g_charts >= 1, "the report has no chart");
    snprintf(g_env, sizeof(g_env),
             "HOME='%s/home' XDG_CONFIG_HOME='%s/home/.config' XDG_CACHE_HOME='%s/home/.cache'",
             g_dir, g_dir, g_dir);
    return 0;
}

/* The crash report: DOM order and what its screenshot shows. */
static void test_crash_page(void **state)
{
    (void)state;
    need_chromium();
    char cmd[32768], path[2200];
    snprintf(cmd, sizeof(cmd),
             "'%s' gen --crash cascade --ranks 16 --seed 4 --quiet -o '%s/crash.tel' && "
             "'%s' replay '%s/crash.tel' > '%s/crash.rec' && "
             "'%s' report --telemetry '%s/crash.tel' -o '%s/crash.html' '%s/crash.rec'",
             sw_test_bin(), g_dir, sw_test_bin(), g_dir, g_dir, sw_test_bin(), g_dir, g_dir, g_dir);
    SW_ASSERT(system(cmd) == 0, "gen --crash | replay | report failed: %s", cmd);
    snprintf(cmd, sizeof(cmd),
             "%s timeout 120 '%s' %s --user-data-dir='%s/profile' --dump-dom "
             "'file://%s/crash.html' > '%s/crash-dom.html' 2> '%s/chromium-cdom.log'",
             g_env, g_chromium, k_flags, g_dir, g_dir, g_dir, g_dir);
    int rc = system(cmd);
    snprintf(path, sizeof(path), "%s/chromium-cdom.log", g_dir);
    if (rc != 0) show_log(path);
    SW_ASSERT(rc == 0, "chromium --dump-dom failed (status %d): %s", rc, cmd);
    snprintf(cmd, sizeof(cmd),
             "%s timeout 120 '%s' %s --user-data-dir='%s/profile' --screenshot='%s/crash.png' "
             "'file://%s/crash.html' > '%s/chromium-cshot.log' 2>&1",
             g_env, g_chromium, k_flags, g_dir, g_dir, g_dir, g_dir);
    rc = system(cmd);
    snprintf(path, sizeof(path), "%s/chromium-cshot.log", g_dir);
    if (rc != 0) show_log(path);
    SW_ASSERT(rc == 0, "chromium --screenshot failed (status %d): %s", rc, cmd);
    sw_buf_t dom, png;
    sw_buf_init(&dom);
    sw_buf_init(&png);
    snprintf(path, sizeof(path), "%s/crash-dom.html", g_dir);
    SW_ASSERT(sw_test_read_file(path, &dom) && dom.len > 0, "empty DOM dump");
    const char *h2 = strstr(dom.data, "<h2>");
    SW_ASSERT(h2 && !strncmp(h2, "<h2>Crashes</h2>", 16),
              "the page's first heading is not "
              "Crashes");
    SW_ASSERT(count(dom.data, "<path class=\"used\"") == 1 &&
                  count(dom.data, "<path class=\"total\"") == 1,
              "DOM lacks the memory and device total paths");
    SW_ASSERT(!strstr(dom.data, "<parsererror"), "the browser reports a parse error");
    snprintf(path, sizeof(path), "%s/crash.png", g_dir);
    SW_ASSERT(sw_test_read_file(path, &png) && png.len > 0, "no screenshot %s", path);
    img_t img;
    char why[256];
    SW_ASSERT(png_decode((const unsigned char *)png.data, png.len, &img, why, sizeof(why)),
              "%s: %s", path, why);
    find_t used = find_colour(&img, 0xd84315, 10); /* the memory line (its own colour) */
    find_t warn = find_colour(&img, 0xb58900, 30); /* warning line, dot and label */
    find_t first = find_colour(&img, 0x7f0000, 8); /* the first death's cell */
    find_t blind = find_colour(&img, 0xa5d6a7, 8); /* living ranks' cells */
    find_t wd = find_colour(&img, 0x6b7480, 6);    /* watchdog ticks (and muted text) */
    SW_ASSERT(used.n >= 400 && used.x1 - used.x0 >= 500, "the memory line: %zu pixels over %u px",
              used.n, used.x1 - used.x0);
    SW_ASSERT(warn.n >= 25, "the warning mark: %zu pixels", warn.n);
    SW_ASSERT(first.n >= 150 && first.y0 > used.y1,
              "the first death's cell (%zu pixels) below the chart", first.n);
    SW_ASSERT(blind.n >= 150 * 10, "the living ranks' cells: %zu pixels", blind.n);
    SW_ASSERT(wd.n >= 50, "watchdog ticks: %zu pixels", wd.n);
    printf(
        "browser: crash page: memory line %zu px over %u px, warning %zu px, first-death "
        "cell %zu px, living cells %zu px\n",
        used.n, used.x1 - used.x0, warn.n, first.n, blind.n);
    const char *keep = getenv("SW_KEEP_SHOTS");
    if (keep && *keep) {
        snprintf(cmd, sizeof(cmd), "cp '%s/crash.png' '%s/crash.png'", g_dir, keep);
        if (system(cmd) != 0) fprintf(stderr, "could not copy crash.png to %s\n", keep);
    }
    free(img.rgb);
    sw_buf_clear(&dom);
    sw_buf_clear(&png);
    g_passed++;
}

/* The scratch dir is kept for a look after a failure. */
static int browser_teardown(void **state)
{
    (void)state;
    if (g_dir[0] && g_passed == 3) {
        char cmd[4200];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    }
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dom),
        cmocka_unit_test(test_screenshot),
        cmocka_unit_test(test_crash_page),
    };
    int failed = cmocka_run_group_tests(tests, browser_setup, browser_teardown);
    /* CTest's SKIP_RETURN_CODE when a case was skipped and none failed */
    return failed == 0 && g_skipped ? SKIP : failed;
}
