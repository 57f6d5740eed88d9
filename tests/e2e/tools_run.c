/* The helpers of tools_run.h. */
#include "tools_run.h"

/* ------------------------------------------------------------------ */
/* Processes                                                           */
/* ------------------------------------------------------------------ */

int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Start argv with stdin from in_fd or in_path (else /dev/null) and stdout,
 * stderr to out_fd / the given paths (else inherited). The child dies
 * with the test (PR_SET_PDEATHSIG). @returns the pid or -1. */
pid_t spawn(char *const argv[], int in_fd, const char *in_path, int out_fd, const char *out_path,
            const char *err_path)
{
    pid_t pid = fork();
    if (pid != 0) return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int fd = in_fd >= 0 ? in_fd : open(in_path ? in_path : "/dev/null", O_RDONLY);
    if (fd < 0 || dup2(fd, 0) < 0) _exit(126);
    if (out_fd >= 0) dup2(out_fd, 1);
    else if (out_path) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || dup2(o, 1) < 0) _exit(126);
    }
    if (err_path) {
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (e < 0 || dup2(e, 2) < 0) _exit(126);
    }
    for (int i = 3; i < 256; i++) close(i);
    execv(argv[0], argv);
    _exit(127);
}

/* Wait for pid until the deadline. @returns its exit status, 128+signal,
 * or -1 when it is still running (it is left running). */
int wait_child(pid_t pid, int64_t timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0 && errno != EINTR) return -1;
        if (now_ms() >= deadline) return -1;
        nap_ms(5);
    }
}

void kill_child(pid_t pid)
{
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* A scratch path unique to this process. */
void tmp_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/tools-%d-%s", sw_test_tmp(), (int)getpid(), name);
}

/* Run argv to completion (killed after CMD_TIMEOUT_MS), stdin from
 * in_path, capturing stdout and stderr. @returns the exit status, or -1
 * on timeout. */
int run(char *const argv[], const char *in_path, sw_buf_t *out, sw_buf_t *err)
{
    char out_path[512], err_path[512];
    tmp_path(out_path, sizeof(out_path), "run.out");
    tmp_path(err_path, sizeof(err_path), "run.err");
    pid_t pid = spawn(argv, -1, in_path, -1, out_path, err_path);
    if (pid < 0) return -1;
    int st = wait_child(pid, CMD_TIMEOUT_MS);
    if (st < 0) kill_child(pid);
    if (out) {
        if (!sw_test_read_file(out_path, out)) out->len = 0;
        sw_buf_cstr(out);
    }
    if (err) {
        if (!sw_test_read_file(err_path, err)) err->len = 0;
        sw_buf_cstr(err);
    }
    return st;
}

/* Read one line from fd into buf (without the newline) by the deadline. */
bool read_line(int fd, sw_buf_t *pending, sw_buf_t *line, int64_t timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        char *nl = pending->len ? memchr(pending->data, '\n', pending->len) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - pending->data);
            line->len = 0;
            sw_buf_put(line, pending->data, n);
            sw_buf_cstr(line);
            memmove(pending->data, nl + 1, pending->len - n - 1);
            pending->len -= n + 1;
            return true;
        }
        int64_t left = deadline - now_ms();
        if (left <= 0) return false;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, (int)left) <= 0) continue;
        char tmp[4096];
        ssize_t r = read(fd, tmp, sizeof(tmp));
        if (r <= 0) return false;
        sw_buf_put(pending, tmp, (size_t)r);
    }
}

void mock_start(mock_t *mk)
{
    memset(mk, 0, sizeof(*mk));
    mk->pid = -1;
    mk->ctl = mk->out = -1;
    sw_buf_init(&mk->pending);
    tmp_path(mk->file, sizeof(mk->file), "bootstrap");
    unlink(mk->file);
    int in_pipe[2], out_pipe[2];
    SW_ASSERT(pipe(in_pipe) == 0 && pipe(out_pipe) == 0, "pipe: %s", strerror(errno));
    char *argv[] = {(char *)sw_test_bin(), "mock", "--bootstrap-file", mk->file, "--topic", "t:4",
                    "--control",           NULL};
    mk->pid = spawn(argv, in_pipe[0], NULL, out_pipe[1], NULL, NULL);
    close(in_pipe[0]);
    close(out_pipe[1]);
    mk->ctl = in_pipe[1];
    mk->out = out_pipe[0];
    SW_ASSERT(mk->pid > 0, "cannot start the mock");
    /* The file is written atomically once the cluster is up. */
    int64_t deadline = now_ms() + 10000;
    sw_buf_t text;
    sw_buf_init(&text);
    while (now_ms() < deadline && !sw_test_read_file(mk->file, &text)) nap_ms(10);
    bool ok = text.len > 1;
    if (ok) snprintf(mk->bootstrap, sizeof(mk->bootstrap), "%.*s", (int)(text.len - 1), text.data);
    sw_buf_clear(&text);
    SW_ASSERT(ok, "expected %s within 10 s, got nothing", mk->file);
    sw_buf_t line;
    sw_buf_init(&line);
    ok = read_line(mk->out, &mk->pending, &line, 5000) && !strcmp(line.data, mk->bootstrap);
    char got[600];
    snprintf(got, sizeof(got), "%s", line.len ? line.data : "(nothing)");
    sw_buf_clear(&line);
    SW_ASSERT(ok, "expected the bootstrap \"%s\" on stdout, got \"%s\"", mk->bootstrap, got);
    SW_ASSERT(strstr(mk->bootstrap, "127.0.0.1:") != NULL, "bootstrap \"%s\"", mk->bootstrap);
    printf("ok - mock up at %s\n", mk->bootstrap);
}

/* Send one control command; *answer gets the reply line. */
bool mock_cmd(mock_t *mk, const char *cmd, char *answer, size_t n)
{
    char line[512];
    int len = snprintf(line, sizeof(line), "%s\n", cmd);
    answer[0] = '\0';
    if (write(mk->ctl, line, (size_t)len) != len) return false;
    sw_buf_t reply;
    sw_buf_init(&reply);
    bool ok = read_line(mk->out, &mk->pending, &reply, 5000);
    if (ok) snprintf(answer, n, "%s", reply.data);
    sw_buf_clear(&reply);
    return ok;
}

void mock_kill(mock_t *mk)
{
    kill_child(mk->pid);
    mk->pid = -1;
    if (mk->ctl >= 0) close(mk->ctl);
    if (mk->out >= 0) close(mk->out);
    mk->ctl = mk->out = -1;
    sw_buf_clear(&mk->pending);
}

/* Create a topic through the control protocol. */
void make_topic(mock_t *mk, const char *name, int partitions)
{
    char cmd[256], ans[512];
    snprintf(cmd, sizeof(cmd), "topic %s %d", name, partitions);
    SW_ASSERT(mock_cmd(mk, cmd, ans, sizeof(ans)) && !strcmp(ans, "ok"),
              "\"%s\": expected ok, got \"%s\"", cmd, ans);
}

/* produce FILE to TOPIC (extra args before the file); expects exit 0
 * and the summary line naming n messages. */
void produce_ok(mock_t *mk, const char *topic, const char *format, const char *file, bool raw,
                int n)
{
    char summary[256];
    sw_buf_t out, err;
    sw_buf_init(&out);
    sw_buf_init(&err);
    char *argv[] = {(char *)sw_test_bin(),
                    "produce",
                    "-b",
                    mk->bootstrap,
                    "-t",
                    (char *)topic,
                    "--format",
                    (char *)format,
                    raw ? "--raw" : (char *)file,
                    raw ? (char *)file : NULL,
                    NULL};
    int st = run(argv, NULL, &out, &err);
    snprintf(summary, sizeof(summary), "produced %d messages to %s (", n, topic);
    SW_ASSERT(st == 0 && strstr(err.data, summary),
              "produce %s to %s: expected exit 0 and \"%s\", got exit %d:\n%s", file, topic,
              summary, st, err.data);
    sw_buf_clear(&out);
    sw_buf_clear(&err);
}

/* tail -t TOPIC --count n (and extra); the lines in *out. */
void tail_n(mock_t *mk, const char *topic, int n, const char *extra, sw_buf_t *out)
{
    char count[32];
    snprintf(count, sizeof(count), "%d", n);
    sw_buf_t err;
    sw_buf_init(&err);
    char *argv[] = {(char *)sw_test_bin(), "tail",    "-b",  mk->bootstrap, "-t",
                    (char *)topic,         "--count", count, "--timeout",   "15000",
                    (char *)extra,         NULL};
    int st = run(argv, NULL, out, &err);
    int lines = 0;
    for (size_t i = 0; i < out->len; i++) lines += out->data[i] == '\n';
    SW_ASSERT(st == 0 && lines == n,
              "tail %s --count %d: expected exit 0 and %d lines, got exit %d and %d lines; "
              "stderr:\n%s",
              topic, n, n, st, lines, err.data);
    sw_buf_clear(&err);
}

/* The mock cluster of the Kafka cases (their state); stopped by the
 * group teardown, whatever a failed case left. */
int mock_setup(void **state)
{
    static mock_t mk;
    *state = &mk;
    mock_start(&mk);
    return 0;
}

int mock_teardown(void **state)
{
    mock_kill(*state);
    return 0;
}

/* Every Kafka case stays under 30 s. */
static int64_t g_case_t0;

int case_start(void **state)
{
    (void)state;
    g_case_t0 = now_ms();
    return 0;
}

int case_end(void **state)
{
    (void)state;
    int64_t took = now_ms() - g_case_t0;
    if (took <= 30000) return 0;
    fprintf(stderr, "%s:%d: FAIL: the case took %lld ms (limit 30000)\n", __FILE__, __LINE__,
            (long long)took);
    return -1;
}
