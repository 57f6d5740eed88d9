/* Repeat offenders by host for the metrics (see sw_metrics_hosts.h). */
#include "sw_metrics_hosts.h"

#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_types.h"

typedef struct hjob_s {
    uint64_t job;   /* hash of the job id */
    int64_t number; /* the episode or crash of that job */
    int64_t at_ns;  /* when it named this host */
} hjob_t;

typedef struct hrow_s {
    char *host; /* owned, NUL-terminated */
    uint64_t n[2];
    hjob_t jobs[2][SW_HOSTS_JOBS_MAX];
    uint8_t n_jobs[2];
} hrow_t;

struct sw_hosts_s {
    hrow_t **rows; /* sorted by host */
    size_t n, cap;
    int64_t max_hosts;
    uint64_t other[2]; /* counts of the hosts over the limit */
    int64_t newest_ns; /* newest event time seen */
};

sw_hosts_t *sw_hosts_new(int64_t max_hosts)
{
    sw_hosts_t *h = sw_calloc(1, sizeof(*h));
    h->max_hosts = max_hosts < 0 ? 0 : max_hosts;
    h->newest_ns = INT64_MIN;
    return h;
}

void sw_hosts_destroy(sw_hosts_t *h)
{
    if (!h) return;
    for (size_t i = 0; i < h->n; i++) {
        free(h->rows[i]->host);
        free(h->rows[i]);
    }
    free(h->rows);
    free(h);
}

void sw_hosts_set_limit(sw_hosts_t *h, int64_t max_hosts)
{
    h->max_hosts = max_hosts < 0 ? 0 : max_hosts;
}

size_t sw_hosts_count(const sw_hosts_t *h)
{
    return h->n;
}

/* Index of @p host in rows, or where it would go (*found false). */
static size_t find(const sw_hosts_t *h, const char *host, bool *found)
{
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(h->rows[mid]->host, host);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    *found = false;
    return lo;
}

static void remember(hrow_t *r, int kind, uint64_t job, int64_t number, int64_t at)
{
    hjob_t *v = r->jobs[kind];
    size_t n = r->n_jobs[kind], oldest = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].job == job && v[i].number == number) {
            if (at > v[i].at_ns) v[i].at_ns = at;
            return;
        }
        if (v[i].at_ns < v[oldest].at_ns) oldest = i;
    }
    if (n < SW_HOSTS_JOBS_MAX) {
        v[n] = (hjob_t){job, number, at};
        r->n_jobs[kind]++;
    } else if (at >= v[oldest].at_ns) {
        v[oldest] = (hjob_t){job, number, at}; /* full: the one seen longest ago goes */
    }
}

/* Forget (job, number) of @p kind on every host but @p keep. @returns
 * whether some host had it (a revision then moves it). */
static bool forget_elsewhere(sw_hosts_t *h, int kind, uint64_t job, int64_t number,
                             const hrow_t *keep, bool *here)
{
    bool found = false;
    *here = false;
    for (size_t i = 0; i < h->n; i++) {
        hrow_t *r = h->rows[i];
        hjob_t *v = r->jobs[kind];
        for (size_t q = 0; q < r->n_jobs[kind]; q++) {
            if (v[q].job != job || v[q].number != number) continue;
            if (r == keep) {
                *here = true;
                continue;
            }
            v[q] = v[--r->n_jobs[kind]];
            found = true;
            break;
        }
    }
    return found;
}

/* The row of @p host, made while under the limit; NULL: over it. */
static hrow_t *row_of(sw_hosts_t *h, sw_str_t host, bool make)
{
    size_t len = host.len;
    if (len > SW_HOSTS_NAME_MAX) {
        len = SW_HOSTS_NAME_MAX;
        while (len > 0 && ((unsigned char)host.ptr[len] & 0xc0) == 0x80) len--;
    }
    char *name = sw_memdup0(host.ptr, len);
    bool found;
    size_t at = find(h, name, &found);
    if (found) {
        free(name);
        return h->rows[at];
    }
    if (!make || (int64_t)h->n >= h->max_hosts) {
        free(name);
        return NULL;
    }
    hrow_t *r = sw_calloc(1, sizeof(*r));
    r->host = name;
    SW_GROW(h->rows, h->n, h->cap, 16);
    memmove(&h->rows[at + 1], &h->rows[at], (h->n - at) * sizeof(*h->rows));
    h->rows[at] = r;
    h->n++;
    return r;
}

/* A usable host name: not empty (a NUL inside ends it), not ours. */
static bool usable(sw_str_t host)
{
    size_t n = strnlen(host.ptr ? host.ptr : "", host.len);
    return n > 0 && !(n == strlen(SW_HOSTS_OTHER) && !memcmp(host.ptr, SW_HOSTS_OTHER, n));
}

void sw_hosts_add(sw_hosts_t *h, sw_str_t host, sw_hosts_kind_t kind, sw_str_t job, int64_t number,
                  bool revision, int64_t event_ns)
{
    if ((kind != SW_HOSTS_STORM && kind != SW_HOSTS_DEATH) || !usable(host)) return;
    host.len = strnlen(host.ptr, host.len);
    uint64_t jh = sw_hash_bytes(job.ptr ? job.ptr : "", job.len, 0x6a6f62ULL);
    if (revision) {
        /* counted only when it names another host than the one counted */
        bool here;
        bool moved = forget_elsewhere(h, kind, jh, number, row_of(h, host, false), &here);
        if (here || !moved) return;
    }
    hrow_t *r = row_of(h, host, true);
    if (event_ns > h->newest_ns) h->newest_ns = event_ns;
    if (!r) {
        h->other[kind]++;
        return;
    }
    r->n[kind]++;
    remember(r, kind, jh, number, event_ns);
}
static const char *const k_kind[2] = {"storm", "death"};

/* host="...": backslash, quote and newline escaped (the text format). */
static void put_label(sw_buf_t *out, const char *host)
{
    sw_buf_puts(out, "{host=\"");
    for (const char *s = host; *s; s++) {
        if (*s == '\\') sw_buf_puts(out, "\\\\");
        else if (*s == '"') sw_buf_puts(out, "\\\"");
        else if (*s == '\n') sw_buf_puts(out, "\\n");
        else sw_buf_putc(out, *s);
    }
    sw_buf_puts(out, "\",kind=\"");
}

void sw_hosts_render(const sw_hosts_t *h, const char *name, bool jobs, int64_t now_ns,
                     sw_buf_t *out)
{
    if (h->newest_ns > now_ns) now_ns = h->newest_ns;
    for (size_t i = 0; i < h->n; i++) {
        const hrow_t *r = h->rows[i];
        for (int k = 0; k < 2; k++) {
            if (!r->n[k]) continue;
            uint64_t v = r->n[k];
            if (jobs) {
                /* distinct jobs (a job's several episodes count once) */
                v = 0;
                const hjob_t *jv = r->jobs[k];
                for (size_t q = 0; q < r->n_jobs[k]; q++) {
                    if (jv[q].at_ns <= now_ns - SW_HOSTS_WINDOW_NS) continue;
                    bool seen = false;
                    for (size_t p = 0; p < q && !seen; p++)
                        seen = jv[p].job == jv[q].job && jv[p].at_ns > now_ns - SW_HOSTS_WINDOW_NS;
                    v += !seen;
                }
            }
            sw_buf_puts(out, name);
            put_label(out, r->host);
            sw_buf_printf(out, "%s\"} ", k_kind[k]);
            sw_buf_put_u64(out, v);
            sw_buf_putc(out, '\n');
        }
    }
    if (jobs) return; /* the overflow mixes hosts: no distinct-jobs gauge */
    for (int k = 0; k < 2; k++) {
        if (!h->other[k]) continue;
        sw_buf_puts(out, name);
        put_label(out, SW_HOSTS_OTHER);
        sw_buf_printf(out, "%s\"} ", k_kind[k]);
        sw_buf_put_u64(out, h->other[k]);
        sw_buf_putc(out, '\n');
    }
}
