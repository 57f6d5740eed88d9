/* The daemon fixture of the e2e tests (see sw_daemon.h). */
#include "sw_daemon.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sw_proc.h"
#include "sw_testlib.h"

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF) n += c == '\n';
    fclose(f);
    return n;
}

/* ---- the mock cluster ---------------------------------------------------- */

bool sw_test_mock_start(sw_test_mock_t *m, const char *dir, int brokers, bool control,
                        const char *const *topics)
{
    memset(m, 0, sizeof(*m));
    m->ctl = -1;
    char boot_path[1100], nb[16];
    snprintf(boot_path, sizeof(boot_path), "%s/bootstrap", dir);
    snprintf(m->out, sizeof(m->out), "%s/mock.out", dir);
    snprintf(m->err, sizeof(m->err), "%s/mock.err", dir);
    unlink(boot_path); /* a previous run's address must not answer the wait */
    size_t nt = 0;
    while (topics && topics[nt]) nt++;
    char **argv = calloc(2 * nt + 10, sizeof(*argv));
    int n = 0;
    argv[n++] = (char *)sw_test_bin();
    argv[n++] = "mock";
    argv[n++] = "--bootstrap-file";
    argv[n++] = boot_path;
    if (brokers > 0) {
        snprintf(nb, sizeof(nb), "%d", brokers);
        argv[n++] = "--brokers";
        argv[n++] = nb;
    }
    if (control) argv[n++] = "--control";
    for (size_t i = 0; i < nt; i++) {
        argv[n++] = "--topic";
        argv[n++] = (char *)topics[i];
    }
    argv[n] = NULL;
    m->pid = control ? sw_proc_spawn_io(argv, &m->ctl, m->out, m->err)
                     : sw_proc_spawn(argv, m->out, m->err);
    free(argv);
    char *boot = m->pid > 0 ? sw_proc_wait_file(boot_path, 30000) : NULL;
    if (!boot) {
        fprintf(stderr, "FAIL: the mock cluster did not start (see %s)\n", m->err);
        sw_test_mock_stop(m);
        return false;
    }
    snprintf(m->boot, sizeof(m->boot), "%s", boot);
    free(boot);
    return true;
}

bool sw_test_mock_cmd(sw_test_mock_t *m, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    int before = count_lines(m->out);
    if (m->ctl < 0 || write(m->ctl, line, strlen(line)) < 0) return false;
    int64_t deadline = sw_proc_now_ms() + 10000;
    while (count_lines(m->out) <= before && sw_proc_now_ms() < deadline) nap_ms(10);
    FILE *f = fopen(m->out, "r");
    char last[512] = "", l[512];
    while (f && fgets(l, sizeof(l), f)) snprintf(last, sizeof(last), "%s", l);
    if (f) fclose(f);
    bool ok = strncmp(last, "ok", 2) == 0;
    if (!ok)
        fprintf(stderr, "mock command \"%.*s\" answered: %s\n", (int)strlen(line) - 1, line, last);
    return ok;
}

void sw_test_mock_stop(sw_test_mock_t *m)
{
    if (m->ctl >= 0) close(m->ctl);
    m->ctl = -1;
    sw_proc_kill(m->pid);
    m->pid = 0;
}

/* ---- a daemon -------------------------------------------------------------- */

static char *keep(sw_test_daemon_t *d, const char *s)
{
    size_t len = strlen(s) + 1;
    if (d->used + len > sizeof(d->strs) || d->argc >= SW_TEST_DAEMON_MAX_ARGS) {
        fprintf(stderr, "sw_test_daemon: too many arguments (at \"%s\")\n", s);
        abort();
    }
    char *at = d->strs + d->used;
    memcpy(at, s, len);
    d->used += len;
    d->argv[d->argc++] = at;
    d->argv[d->argc] = NULL;
    return at;
}

void sw_test_daemon_init(sw_test_daemon_t *d, const char *cmd, const char *dir, const char *tag,
                         const char *boot)
{
    memset(d, 0, sizeof(*d));
    d->status = -1;
    snprintf(d->log, sizeof(d->log), "%s/%s.err", dir, tag);
    snprintf(d->out, sizeof(d->out), "%s/%s.out", dir, tag);
    keep(d, sw_test_bin());
    keep(d, cmd);
    if (boot) {
        sw_test_daemon_x(d, "bootstrap.servers=%s", boot);
        sw_test_daemon_x(d, "kafka.consumer.session.timeout.ms=6000");
    }
}

void sw_test_daemon_arg(sw_test_daemon_t *d, const char *arg)
{
    keep(d, arg);
}

void sw_test_daemon_x(sw_test_daemon_t *d, const char *fmt, ...)
{
    char prop[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prop, sizeof(prop), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(prop)) abort();
    keep(d, "-X");
    keep(d, prop);
}

void sw_test_daemon_xs(sw_test_daemon_t *d, const char *const *props)
{
    for (size_t i = 0; props && props[i]; i++) sw_test_daemon_x(d, "%s", props[i]);
}

void sw_test_daemon_topics(sw_test_daemon_t *d, const char *s)
{
    sw_test_daemon_x(d, "input.topics=in.%s", s);
    sw_test_daemon_x(d, "output.topic=out.%s", s);
    sw_test_daemon_x(d, "dlq.topic=dlq.%s", s);
    sw_test_daemon_x(d, "state.topic=state.%s", s);
}

bool sw_test_daemon_start(sw_test_daemon_t *d)
{
    if (d->pid > 0) sw_test_daemon_kill(d);
    unlink(d->log); /* a previous run's log must not answer the waits */
    d->status = -1;
    d->pid = sw_proc_spawn(d->argv, d->out, d->log);
    if (d->pid < 0) d->pid = 0;
    return d->pid > 0;
}

bool sw_test_daemon_running(sw_test_daemon_t *d)
{
    if (d->pid <= 0) return false;
    int rc = sw_proc_wait(d->pid, 0);
    if (rc < 0) return true;
    d->status = rc;
    d->pid = 0;
    return false;
}

bool sw_test_daemon_wait_log(sw_test_daemon_t *d, const char *needle, int times, int64_t timeout_ms)
{
    int64_t deadline = sw_proc_now_ms() + timeout_ms;
    for (;;) {
        /* Liveness first: a process that logged and exited still counts. */
        bool alive = sw_test_daemon_running(d);
        if (sw_proc_count_text(d->log, needle) >= times) return true;
        if (!alive) {
            fprintf(stderr, "%s exited (status %d) before logging \"%s\" %d times\n", d->log,
                    d->status, needle, times);
            return false;
        }
        if (sw_proc_now_ms() >= deadline) return false;
        nap_ms(50);
    }
}

bool sw_test_daemon_wait_assigned(sw_test_daemon_t *d, int partitions, int64_t timeout_ms)
{
    /* "stormwatch run: assigned in.x [3]" (notify adds ": committed ..."). */
    return sw_test_daemon_wait_log(d, ": assigned ", partitions, timeout_ms);
}

int sw_test_daemon_metrics_port(sw_test_daemon_t *d, int64_t timeout_ms)
{
    if (!sw_test_daemon_wait_log(d, "(port ", 1, timeout_ms)) return 0;
    return sw_test_metrics_port(d->log);
}

bool sw_test_daemon_wait_ready(sw_test_daemon_t *d, int port, int64_t timeout_ms)
{
    int64_t deadline = sw_proc_now_ms() + timeout_ms;
    sw_buf_t body;
    sw_buf_init(&body);
    bool ready = false;
    while (!(ready = port > 0 && sw_test_http_get(port, "/readyz", &body) == 200) &&
           sw_test_daemon_running(d) && sw_proc_now_ms() < deadline)
        nap_ms(100);
    sw_buf_clear(&body);
    return ready;
}

int sw_test_daemon_count(const sw_test_daemon_t *d, const char *needle)
{
    return sw_proc_count_text(d->log, needle);
}

int sw_test_daemon_wait_exit(sw_test_daemon_t *d, int64_t timeout_ms)
{
    if (d->pid <= 0) return d->status;
    int rc = sw_proc_wait(d->pid, timeout_ms);
    if (rc < 0) {
        fprintf(stderr, "%s: no exit within %lld ms; killed\n", d->log, (long long)timeout_ms);
        sw_proc_kill(d->pid);
    }
    d->status = rc;
    d->pid = 0;
    return rc;
}

int sw_test_daemon_stop(sw_test_daemon_t *d, int64_t timeout_ms)
{
    if (d->pid > 0) kill(d->pid, SIGTERM);
    return sw_test_daemon_wait_exit(d, timeout_ms);
}

void sw_test_daemon_kill(sw_test_daemon_t *d)
{
    if (d->pid > 0) {
        sw_proc_kill(d->pid);
        d->status = 128 + SIGKILL;
    }
    d->pid = 0;
}

int sw_test_kill_children(void **state)
{
    (void)state;
    sw_proc_kill_all();
    return 0;
}
