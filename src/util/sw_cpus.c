/*
 * The cgroup CPU quota (sw_cpus.h): finds the process's cgroup from its
 * cgroup list, then walks from that cgroup up to the mount root, reading
 * cpu.max (v2) or cpu.cfs_quota_us and cpu.cfs_period_us (v1) at each
 * level; the smallest quota wins, as the kernel enforces every level.
 * Reads files only; a malformed file is an error the caller logs.
 */
#include "sw_cpus.h"

#include "sw_cgroup.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* dir/name into path; false when it does not fit (said in errstr). */
static bool join(char *path, size_t size, const char *dir, const char *name, char *errstr,
                 size_t errstr_size)
{
    int n = snprintf(path, size, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= size) {
        sw_errfmt(errstr, errstr_size, "cgroup path %s/%s is longer than %zu bytes", dir, name,
                  size - 1);
        return false;
    }
    return true;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A positive decimal integer that ends at a space, a newline or NUL. */
static bool parse_pos(const char *s, const char **end, int64_t *v)
{
    char *e;
    errno = 0;
    if (*s < '0' || *s > '9') return false;
    long long x = strtoll(s, &e, 10);
    if (errno || x <= 0 || (*e != ' ' && *e != '\n' && *e != '\0')) return false;
    *v = x;
    *end = e;
    return true;
}

/* "" or "\n" at the end. */
static bool at_end(const char *s)
{
    return s[0] == '\0' || (s[0] == '\n' && s[1] == '\0');
}

/* The value for an error message: up to the first newline, at most 40 chars. */
static void shown(const char *s, char *out, size_t size)
{
    size_t n = strcspn(s, "\n");
    if (n > 40) n = 40;
    if (n >= size) n = size - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

/* One level: *quota 0 when it sets none. false on malformed content. */
static bool level_v2(const char *dir, int64_t *quota, int64_t *period, char *errstr,
                     size_t errstr_size)
{
    char path[4200], buf[128], v[48];
    if (!join(path, sizeof(path), dir, "cpu.max", errstr, errstr_size)) return false;
    *quota = 0;
    if (!sw_cgroup_read_file(path, buf, sizeof(buf))) return true;
    const char *p = buf;
    if (strncmp(p, "max", 3) == 0 && (p[3] == ' ' || at_end(p + 3))) {
        return true;
    }
    int64_t q, per;
    if (!parse_pos(p, &p, &q) || *p != ' ' || !parse_pos(p + 1, &p, &per) || !at_end(p)) {
        shown(buf, v, sizeof(v));
        sw_errfmt(errstr, errstr_size,
                  "%s: expected \"max PERIOD\" or \"QUOTA PERIOD\" (microseconds), got \"%s\"",
                  path, v);
        return false;
    }
    *quota = q;
    *period = per;
    return true;
}

static bool level_v1(const char *dir, int64_t *quota, int64_t *period, char *errstr,
                     size_t errstr_size)
{
    char path[4200], buf[128], v[48];
    const char *p;
    if (!join(path, sizeof(path), dir, "cpu.cfs_quota_us", errstr, errstr_size)) return false;
    *quota = 0;
    if (!sw_cgroup_read_file(path, buf, sizeof(buf))) return true;
    if (strcmp(buf, "-1\n") == 0 || strcmp(buf, "-1") == 0) return true;
    int64_t q, per;
    if (!parse_pos(buf, &p, &q) || !at_end(p)) {
        shown(buf, v, sizeof(v));
        sw_errfmt(errstr, errstr_size,
                  "%s: expected -1 or a positive number of microseconds, got \"%s\"", path, v);
        return false;
    }
    if (!join(path, sizeof(path), dir, "cpu.cfs_period_us", errstr, errstr_size)) return false;
    if (!sw_cgroup_read_file(path, buf, sizeof(buf))) {
        sw_errfmt(errstr, errstr_size, "%s: cannot read it (%s), but cpu.cfs_quota_us is %lld",
                  path, strerror(errno), (long long)q);
        return false;
    }
    if (!parse_pos(buf, &p, &per) || !at_end(p)) {
        shown(buf, v, sizeof(v));
        sw_errfmt(errstr, errstr_size, "%s: expected a positive number of microseconds, got \"%s\"",
                  path, v);
        return false;
    }
    *quota = q;
    *period = per;
    return true;
}

/* Whether the comma-separated controller list @p list (length n) names cpu. */
static bool names_cpu(const char *list, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && list[j] != ',') j++;
        if (j - i == 3 && memcmp(list + i, "cpu", 3) == 0) return true;
        i = j + 1;
    }
    return false;
}

/* The process's cgroup path for v2 ("0::PATH") or for v1's cpu controller
 * ("N:cpu,cpuacct:PATH"); "" when the list does not name it. */
static void self_path(const char *self_cgroup, bool v2, char *out, size_t size)
{
    char buf[8192];
    out[0] = '\0';
    if (!sw_cgroup_read_file(self_cgroup, buf, sizeof(buf))) return;
    for (char *line = buf; *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char *c1 = memchr(line, ':', len);
        char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
        if (c2) {
            bool hit = v2 ? (c2 == c1 + 1 && c1 - line == 1 && line[0] == '0')
                          : names_cpu(c1 + 1, (size_t)(c2 - c1 - 1));
            if (hit) {
                size_t n = len - (size_t)(c2 + 1 - line);
                if (n >= size) n = size - 1;
                memcpy(out, c2 + 1, n);
                out[n] = '\0';
                return;
            }
        }
        if (!nl) break;
        line = nl + 1;
    }
}

sw_err_t sw_cpus_quota(const char *root, const char *self_cgroup, double *cpus, char *src,
                       size_t src_size, char *errstr, size_t errstr_size)
{
    char probe[4200], base[4096], rel[2048], dir[4200];
    *cpus = 0;
    if (src_size) src[0] = '\0';
    snprintf(probe, sizeof(probe), "%s/cgroup.controllers", root);
    struct stat st;
    bool v2 = stat(probe, &st) == 0;
    if (v2) {
        snprintf(base, sizeof(base), "%s", root);
    } else {
        static const char *const mounts[] = {"cpu", "cpu,cpuacct", "cpuacct,cpu"};
        base[0] = '\0';
        for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
            snprintf(base, sizeof(base), "%s/%s", root, mounts[i]);
            if (is_dir(base)) break;
            base[0] = '\0';
        }
        if (!base[0]) return SW_OK; /* no cpu controller mounted: no quota */
    }
    self_path(self_cgroup, v2, rel, sizeof(rel));
    /* rel is "/" or "/a/b"; when it is not a directory under base (the
     * container's own cgroup mounted as the root), read base alone. */
    size_t rn = strlen(rel);
    while (rn > 0 && rel[rn - 1] == '/') rel[--rn] = '\0';
    int dn0 = snprintf(dir, sizeof(dir), "%s%s", base, rel);
    if (dn0 < 0 || (size_t)dn0 >= sizeof(dir) || !is_dir(dir)) {
        snprintf(dir, sizeof(dir), "%s", base);
        rn = 0;
    }
    size_t base_len = strlen(base);
    int64_t best_q = 0, best_p = 1;
    for (;;) {
        int64_t q, p = 1;
        bool ok = v2 ? level_v2(dir, &q, &p, errstr, errstr_size)
                     : level_v1(dir, &q, &p, errstr, errstr_size);
        if (!ok) return SW_ERR_PARSE;
        /* q/p < best_q/best_p, without rounding */
        if (q > 0 && (best_q == 0 || (double)q * (double)best_p < (double)best_q * (double)p)) {
            best_q = q;
            best_p = p;
            if (src_size)
                snprintf(src, src_size, "cgroup %s%s %lld/%lld",
                         v2 ? "cpu.max" : "cpu.cfs_quota_us", v2 ? "" : "/cpu.cfs_period_us",
                         (long long)q, (long long)p);
        }
        size_t dn = strlen(dir);
        if (dn <= base_len) break;
        while (dn > base_len && dir[dn - 1] != '/') dn--;
        if (dn > base_len) dn--; /* drop the slash too */
        dir[dn] = '\0';
    }
    if (best_q > 0) *cpus = (double)best_q / (double)best_p;
    return SW_OK;
}

int sw_cpus_default_threads(const char *root, const char *self_cgroup, int allowed, char *why,
                            size_t why_size)
{
    char src[160], err[512];
    double cpus = 0;
    if (allowed < 1) allowed = 1;
    if (sw_cpus_quota(root, self_cgroup, &cpus, src, sizeof(src), err, sizeof(err)) != SW_OK) {
        snprintf(why, why_size, "the %d CPU%s this process may use; cgroup quota unreadable: %s",
                 allowed, allowed == 1 ? "" : "s", err);
        return allowed;
    }
    if (cpus <= 0) {
        snprintf(why, why_size, "no cgroup CPU quota; the %d CPU%s this process may use", allowed,
                 allowed == 1 ? "" : "s");
        return allowed;
    }
    int64_t up = (int64_t)cpus;
    if ((double)up < cpus) up++;
    if (up < 1) up = 1;
    if (up > allowed) {
        snprintf(why, why_size, "%s = %.3g CPUs, bounded by the %d CPU%s this process may use", src,
                 cpus, allowed, allowed == 1 ? "" : "s");
        return allowed;
    }
    snprintf(why, why_size, "%s = %.3g CPU%s%s", src, cpus, cpus == 1.0 ? "" : "s",
             (double)up != cpus ? ", rounded up" : "");
    return (int)up;
}
