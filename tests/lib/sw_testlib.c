/* Test helpers (see sw_testlib.h). */
#include "sw_testlib.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static void show(json_t *v, char *dst, size_t n)
{
    if (!v) {
        snprintf(dst, n, "(absent)");
        return;
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    snprintf(dst, n, "%.200s", s ? s : "?");
    free(s);
}

static bool eq(json_t *a, json_t *b, bool extra, char *path, size_t plen, size_t pcap, char *why,
               size_t why_size)
{
    if (json_typeof(a) != json_typeof(b)) {
        char sa[256], sb[256];
        show(a, sa, sizeof(sa));
        show(b, sb, sizeof(sb));
        snprintf(why, why_size, "%s: %s != %s", plen ? path : "$", sa, sb);
        return false;
    }
    switch (json_typeof(a)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *va;
        json_object_foreach(a, k, va)
        {
            int n = snprintf(path + plen, pcap - plen, ".%s", k);
            json_t *vb = json_object_get(b, k);
            if (!vb && extra) continue;
            if (!vb) {
                char sa[256];
                show(va, sa, sizeof(sa));
                snprintf(why, why_size, "%s: %s != (absent)", path, sa);
                return false;
            }
            if (!eq(va, vb, extra, path, plen + (size_t)n, pcap, why, why_size)) return false;
        }
        json_t *vb;
        json_object_foreach(b, k, vb)
        {
            if (!json_object_get(a, k)) {
                char sb[256];
                snprintf(path + plen, pcap - plen, ".%s", k);
                show(vb, sb, sizeof(sb));
                snprintf(why, why_size, "%s: (absent) != %s", path, sb);
                return false;
            }
        }
        path[plen] = '\0';
        return true;
    }
    case JSON_ARRAY: {
        size_t na = json_array_size(a), nb = json_array_size(b);
        for (size_t i = 0; i < na && i < nb; i++) {
            int n = snprintf(path + plen, pcap - plen, "[%zu]", i);
            if (!eq(json_array_get(a, i), json_array_get(b, i), extra, path, plen + (size_t)n, pcap,
                    why, why_size))
                return false;
        }
        if (na != nb) {
            snprintf(why, why_size, "%s: array of %zu elements != array of %zu elements",
                     plen ? path : "$", na, nb);
            return false;
        }
        return true;
    }
    default:
        if (json_equal(a, b)) return true;
        {
            char sa[256], sb[256];
            show(a, sa, sizeof(sa));
            show(b, sb, sizeof(sb));
            snprintf(why, why_size, "%s: %s != %s", plen ? path : "$", sa, sb);
        }
        return false;
    }
}

bool sw_test_json_equal(json_t *got, json_t *want, bool allow_extra, char *why, size_t why_size)
{
    char path[1024] = "";
    return eq(got, want, allow_extra, path, 0, sizeof(path), why, why_size);
}

bool sw_test_read_file(const char *path, sw_buf_t *out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char tmp[65536];
    size_t n;
    out->len = 0;
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) sw_buf_put(out, tmp, n);
    fclose(f);
    sw_buf_cstr(out);
    return true;
}

int sw_test_run(const char *cmd, sw_buf_t *out)
{
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char tmp[65536];
    size_t n;
    if (out) out->len = 0;
    while ((n = fread(tmp, 1, sizeof(tmp), p)) > 0)
        if (out) sw_buf_put(out, tmp, n);
    if (out) sw_buf_cstr(out);
    int st = pclose(p);
    if (st == -1) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

const char *sw_test_bin(void)
{
    const char *s = getenv("SW_BIN");
    return s ? s : "./stormwatch";
}

const char *sw_test_fixtures(void)
{
    const char *s = getenv("SW_FIXTURES");
    return s ? s : "fixtures";
}

const char *sw_test_tmp(void)
{
    const char *s = getenv("SW_TMP");
    if (!s) s = "/tmp/stormwatch-test";
    mkdir(s, 0755);
    return s;
}

bool sw_test_ci(void)
{
    const char *ci = getenv("CI");
    return ci != NULL && strcmp(ci, "true") == 0;
}

int sw_test_ci_gate(void)
{
    if (!getenv("SW_CI_ONLY") || sw_test_ci()) return 0;
    printf("skipped: a test of the CI tier (SW_CI_ONLY; runs with CI=true)\n");
    return 77;
}

json_t *sw_test_parse_lines(const char *text, size_t len, char *why, size_t why_size)
{
    json_t *arr = json_array();
    size_t i = 0, lineno = 0;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        lineno++;
        if (end > i) {
            json_error_t err;
            json_t *v = json_loadb(text + i, end - i, 0, &err);
            if (!v) {
                snprintf(why, why_size, "line %zu: %s", lineno, err.text);
                json_decref(arr);
                return NULL;
            }
            json_array_append_new(arr, v);
        }
        i = end + 1;
    }
    return arr;
}

/* GET http://127.0.0.1:port/path; @returns the status code (0 on error),
 * the body in *body. */
int sw_test_http_get(int port, const char *path, sw_buf_t *body)
{
    body->len = 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return 0;
    }
    char req[256];
    int n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return 0;
    }
    sw_buf_t raw;
    sw_buf_init(&raw);
    char chunk[4096];
    ssize_t got;
    while ((got = read(fd, chunk, sizeof(chunk))) > 0) sw_buf_put(&raw, chunk, (size_t)got);
    close(fd);
    int status = 0;
    const char *text = sw_buf_cstr(&raw);
    if (sscanf(text, "HTTP/1.%*d %d", &status) != 1) status = 0;
    const char *sep = strstr(text, "\r\n\r\n");
    if (sep) sw_buf_puts(body, sep + 4);
    sw_buf_cstr(body);
    sw_buf_clear(&raw);
    return status;
}

/* Value of the sample line that starts with @p series (name and labels,
 * exactly as rendered) followed by a space; -1 when absent. */
double sw_test_metric(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, series, n) == 0 && p[n] == ' ') return strtod(p + n + 1, NULL);
    }
    return -1;
}

bool sw_test_event_eq(const sw_event_t *a, const sw_event_t *b, char *why, size_t n)
{
#define EQ_I(f)                                                                     \
    if (a->f != b->f) {                                                             \
        snprintf(why, n, "%s: %lld != %lld", #f, (long long)a->f, (long long)b->f); \
        return false;                                                               \
    }
#define EQ_S(f)                                                                                   \
    if (!sw_str_eq(a->f, b->f)) {                                                                 \
        snprintf(why, n, "%s: \"%.*s\" != \"%.*s\"", #f, (int)a->f.len, a->f.ptr ? a->f.ptr : "", \
                 (int)b->f.len, b->f.ptr ? b->f.ptr : "");                                        \
        return false;                                                                             \
    }
#define EQ_OI(f) \
    EQ_I(f.set); \
    if (a->f.set) EQ_I(f.value);
#define EQ_OS(f) \
    EQ_I(f.set); \
    if (a->f.set) EQ_S(f.value);
    EQ_I(timestamp_ns);
    EQ_S(event_type);
    EQ_I(kind);
    EQ_I(rank);
    EQ_I(world_size);
    EQ_I(has_job_id);
    if (a->has_job_id) EQ_S(job_id);
    EQ_I(has_session_id);
    if (a->has_session_id) EQ_S(session_id);
    EQ_I(pid);
    EQ_S(host);
    EQ_I(has_device_used);
    EQ_I(device_used_bytes);
    EQ_I(sampling_interval_ms);
    EQ_I(has_phase);
    if (a->has_phase) {
        EQ_I(phase.enter);
        EQ_S(phase.name);
        EQ_I(phase.path_len);
        for (int i = 0; i < a->phase.path_len; i++) EQ_S(phase.path[i]);
        EQ_S(phase.scope_id);
        EQ_I(phase.has_parent);
        if (a->phase.has_parent) EQ_S(phase.parent_scope_id);
        EQ_I(phase.thread_id);
        EQ_S(phase.thread_name);
        EQ_I(phase.sequence);
        EQ_I(phase.has_depth);
        if (a->phase.has_depth) EQ_I(phase.depth);
    }
    EQ_OI(schema_version);
    EQ_OI(device_id);
    EQ_OI(local_rank);
    EQ_OI(allocator_allocated_bytes);
    EQ_OI(allocator_reserved_bytes);
    EQ_OI(allocator_active_bytes);
    EQ_OI(allocator_inactive_bytes);
    EQ_OI(allocator_change_bytes);
    EQ_OI(device_free_bytes);
    EQ_OI(device_total_bytes);
    EQ_OS(collector);
    EQ_OS(context);
    EQ_S(metadata_json);
    return true;
#undef EQ_I
#undef EQ_S
#undef EQ_OI
#undef EQ_OS
}

int sw_test_metrics_port(const char *log_path)
{
    sw_buf_t log;
    sw_buf_init(&log);
    int port = 0;
    if (sw_test_read_file(log_path, &log)) {
        const char *at = strstr(sw_buf_cstr(&log), "(port ");
        if (at) port = atoi(at + 6);
    }
    sw_buf_clear(&log);
    return port;
}

void sw_test_say_(const char *file, int line, const char *expr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (expr) fprintf(stderr, "%s:%d: FAIL (%s): ", file, line, expr);
    else fprintf(stderr, "%s:%d: FAIL: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
    va_end(ap);
}

_Noreturn void sw_test_fail_(const char *file, int line)
{
    _fail(file, line); /* longjmps out of the running case, or exits */
    abort();
}

static int g_check_failures;
static char g_check_case[512];

void sw_check_reset(void)
{
    g_check_failures = 0;
    g_check_case[0] = '\0';
}

void sw_check_case(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_check_case, sizeof(g_check_case), fmt, ap);
    va_end(ap);
}

int sw_check_failures(void)
{
    return g_check_failures;
}

void sw_check_report_(const char *file, int line, const char *expr, const char *fmt, ...)
{
    if (expr) fprintf(stderr, "%s:%d: FAIL [%s] (%s): ", file, line, g_check_case, expr);
    else fprintf(stderr, "%s:%d: FAIL [%s]: ", file, line, g_check_case);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    g_check_failures++;
}

size_t sw_test_drop_x8(json_t *records)
{
    size_t dropped = 0;
    for (size_t i = 0; records && i < json_array_size(records);) {
        const char *act = json_string_value(json_object_get(json_array_get(records, i), "action"));
        if (act && (!strcmp(act, "crash") || !strcmp(act, "warning"))) {
            json_array_remove(records, i);
            dropped++;
        } else {
            i++;
        }
    }
    return dropped;
}
