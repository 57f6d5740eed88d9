/* Progress line on a terminal (see sw_progress.h). */
#include "sw_progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sw_log.h"

#define FIRST_MS 1000
#define EVERY_MS 500

void sw_progress_start(sw_progress_t *p, const char *cmd, const char *unit, uint64_t total_bytes)
{
    memset(p, 0, sizeof(*p));
    p->cmd = cmd;
    p->unit = unit;
    p->total = total_bytes;
    p->on = isatty(STDERR_FILENO) && !getenv("STORMWATCH_NO_PROGRESS");
    p->t0_ms = sw_clock_ms();
    p->next_ms = p->t0_ms + FIRST_MS;
}

/* 1234567 -> "1.23 M" (SI prefixes; bytes get B). */
static void si(char *out, size_t n, double v, const char *unit)
{
    static const char *const pre[] = {"", " k", " M", " G", " T"};
    int k = 0;
    while (v >= 1000.0 && k < 4) {
        v /= 1000.0;
        k++;
    }
    if (!k) snprintf(out, n, "%.0f%s%s", v, *unit ? " " : "", unit);
    else snprintf(out, n, "%.*f%s%s", v >= 100 ? 0 : v >= 10 ? 1 : 2, v, pre[k], unit);
}

void sw_progress_tick(sw_progress_t *p, uint64_t items, uint64_t bytes)
{
    if (!p->on || (++p->calls & 1023u)) return;
    int64_t now = sw_clock_ms();
    if (now < p->next_ms) return;
    p->next_ms = now + EVERY_MS;
    double secs = (double)(now - p->t0_ms) / 1000.0;
    char it[32], by[32], tot[32], rate[32], line[256];
    si(it, sizeof(it), (double)items, "");
    si(by, sizeof(by), (double)bytes, "B");
    si(rate, sizeof(rate), secs > 0 ? (double)items / secs : 0, "");
    int n = snprintf(line, sizeof(line), "stormwatch %s: %s %s, %s", p->cmd, it, p->unit, by);
    if (p->total && bytes <= p->total) {
        si(tot, sizeof(tot), (double)p->total, "B");
        double f = (double)bytes / (double)p->total;
        n += snprintf(line + n, sizeof(line) - (size_t)n, " of %s (%.0f%%)", tot, f * 100.0);
        n += snprintf(line + n, sizeof(line) - (size_t)n, ", %s %s/s", rate, p->unit);
        if (f > 0.001)
            snprintf(line + n, sizeof(line) - (size_t)n, ", ETA %.0f s", secs * (1.0 - f) / f);
    } else {
        snprintf(line + n, sizeof(line) - (size_t)n, ", %s %s/s", rate, p->unit);
    }
    /* Drawn from the first column and the cursor left there, so that a
     * diagnostic printed meanwhile starts on a clean line. */
    fprintf(stderr, "\r\033[K%s\r", line);
    fflush(stderr);
    p->drawn = true;
}

void sw_progress_end(sw_progress_t *p)
{
    if (p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->drawn = false;
    p->on = false;
}

uint64_t sw_progress_files_size(char **files, int nfiles)
{
    uint64_t total = 0;
    if (nfiles == 0) return 0;
    for (int i = 0; i < nfiles; i++) {
        struct stat st;
        if (!strcmp(files[i], "-") || stat(files[i], &st) || !S_ISREG(st.st_mode)) return 0;
        total += (uint64_t)st.st_size;
    }
    return total;
}
