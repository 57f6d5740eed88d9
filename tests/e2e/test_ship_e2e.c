/*
 * `stormwatch ship` against the mock cluster, with a writer that does what
 * stormlog's telemetry sink does: appends events to a segment, rolls over
 * to a new one every SEG_LINES lines and prunes all but the newest KEEP.
 * While it writes: the shipper is killed with SIGKILL and started again
 * (same checkpoint), then every broker goes down (reading pauses, /readyz
 * 503, the writer prunes segments not shipped: reported lost) and comes
 * back. Reading the topic back: every event is there (keyed by its job_id,
 * on murmur2's partition) or inside a byte range the shipper reported
 * lost; none is silently missing; re-sent events are bounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "sw_daemon.h"
#include "sw_partition.h"
#include "sw_proc.h"
#include "sw_testlib.h"

#define SEG_LINES 300
#define KEEP 3
#define MAX_EVENTS 20000
#define PARTITIONS 4
#define MAX_INFLIGHT 400

typedef struct line_s {
    int seg;
    uint64_t from, to; /* byte range in its segment */
} line_t;

typedef struct writer_s {
    char dir[1024];
    int seg;      /* current segment number */
    int seg_n;    /* lines in it */
    uint64_t off; /* its size */
    int first;    /* oldest segment still on disk */
    int n;        /* events written */
    line_t lines[MAX_EVENTS];
} writer_t;

static writer_t g_w;
static char g_tmp[900];

static void seg_path(const writer_t *w, int seg, char *out, size_t n)
{
    snprintf(out, n, "%s/telemetry-%05d.jsonl", w->dir, seg);
}

/* Append @p n events, rolling over and pruning as stormlog's sink does. */
static void write_events(writer_t *w, int n)
{
    char path[1200];
    seg_path(w, w->seg, path, sizeof(path));
    FILE *f = fopen(path, "a");
    SW_ASSERT_NOT_NULL(f);
    for (int i = 0; i < n && w->n < MAX_EVENTS; i++) {
        if (w->seg_n == SEG_LINES) {
            fclose(f);
            w->seg++;
            w->seg_n = 0;
            w->off = 0;
            while (w->seg - w->first >= KEEP) {
                seg_path(w, w->first++, path, sizeof(path));
                SW_ASSERT(unlink(path) == 0, "prune %s", path);
            }
            seg_path(w, w->seg, path, sizeof(path));
            f = fopen(path, "a");
            SW_ASSERT_NOT_NULL(f);
        }
        int k = w->n;
        int len = fprintf(f,
                          "{\"schema_version\": 3, \"timestamp_ns\": %lld, \"event_type\": "
                          "\"sample\", \"collector\": \"stormlog.cuda_tracker\", "
                          "\"sampling_interval_ms\": 100, \"pid\": 4000, \"host\": \"h0\", "
                          "\"device_id\": 0, \"allocator_allocated_bytes\": %d, "
                          "\"device_used_bytes\": 1073741824, \"device_total_bytes\": "
                          "85899345920, \"job_id\": \"job-%d\", \"rank\": %d, \"world_size\": 4}\n",
                          1763700000000000000LL + (long long)k * 1000, 268435456 + k, k % 7, k % 4);
        w->lines[k] = (line_t){w->seg, w->off, w->off + (uint64_t)len};
        w->off += (uint64_t)len;
        w->seg_n++;
        w->n++;
    }
    fclose(f);
}

static double metric(int port, const char *name)
{
    sw_buf_t body;
    sw_buf_init(&body);
    double v = -1;
    if (sw_test_http_get(port, "/metrics", &body) == 200)
        v = sw_test_metric(sw_buf_cstr(&body), name);
    sw_buf_clear(&body);
    return v;
}

/* Wait until metric @p name reaches @p want (progress, not time). */
static bool wait_metric(sw_test_daemon_t *d, int port, const char *name, double want,
                        int64_t timeout_ms)
{
    int64_t deadline = sw_proc_now_ms() + timeout_ms;
    while (sw_proc_now_ms() < deadline && sw_test_daemon_running(d)) {
        if (metric(port, name) >= want) return true;
        usleep(50 * 1000);
    }
    return false;
}

/* The shipper is caught up: nothing in flight, nothing unread. */
static bool wait_caught_up(sw_test_daemon_t *d, int port, int64_t timeout_ms)
{
    int64_t deadline = sw_proc_now_ms() + timeout_ms;
    int ok = 0;
    while (sw_proc_now_ms() < deadline && sw_test_daemon_running(d)) {
        bool now = metric(port, "stormwatch_ship_inflight_messages") == 0 &&
                   metric(port, "stormwatch_ship_lag_bytes") == 0;
        ok = now ? ok + 1 : 0;
        if (ok >= 3) return true; /* three scrapes in a row, ~150 ms apart (scans at 50 ms) */
        usleep(150 * 1000);
    }
    return false;
}

static void ship_init(sw_test_daemon_t *d, const char *tag, const char *boot, const char *ckpt)
{
    sw_test_daemon_init(d, "ship", g_tmp, tag, NULL);
    const char *args[] = {"-t",
                          "tele",
                          "-b",
                          boot,
                          "--checkpoint",
                          ckpt,
                          "--scan-interval",
                          "50",
                          "--checkpoint-interval",
                          "100",
                          "--rotate-wait",
                          "500",
                          "--max-inflight",
                          "400",
                          "--metrics-listen",
                          "127.0.0.1:0",
                          "--log-level",
                          "info",
                          "-X",
                          "reconnect.backoff.max.ms=500",
                          g_w.dir,
                          NULL};
    for (int i = 0; args[i]; i++) sw_test_daemon_arg(d, args[i]);
}

/* "data loss: PATH bytes A to B ..." lines of a log: mark those events. */
static int mark_lost(const char *log, bool *lost, uint64_t *lost_bytes)
{
    sw_buf_t b;
    sw_buf_init(&b);
    SW_ASSERT_TRUE(sw_test_read_file(log, &b));
    const char *p = sw_buf_cstr(&b);
    int reports = 0;
    while ((p = strstr(p, "data loss: ")) != NULL) {
        p += 11;
        char path[1200];
        unsigned long long a = 0, z = UINT64_MAX;
        if (sscanf(p, "%1199s bytes %llu to %llu", path, &a, &z) != 3 &&
            strncmp(p + strlen(path), " (whole segment, size unknown)", 30) != 0)
            continue;
        const char *base = strrchr(path, '-');
        SW_ASSERT_NOT_NULL(base);
        int seg = atoi(base + 1);
        reports++;
        if (z != UINT64_MAX) *lost_bytes += z - a;
        for (int k = 0; k < g_w.n; k++)
            if (g_w.lines[k].seg == seg && g_w.lines[k].from >= a && g_w.lines[k].to <= z)
                lost[k] = true;
    }
    sw_buf_clear(&b);
    return reports;
}

static void test_ship_roll_prune_kill_outage(void **state)
{
    (void)state;
    snprintf(g_tmp, sizeof(g_tmp), "%s/ship-e2e", sw_test_tmp());
    char cmd[2200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s/sink'", g_tmp, g_tmp);
    SW_ASSERT(system(cmd) == 0, "%s", cmd);
    memset(&g_w, 0, sizeof(g_w));
    snprintf(g_w.dir, sizeof(g_w.dir), "%s/sink", g_tmp);
    char ckpt[1200];
    snprintf(ckpt, sizeof(ckpt), "%s/ship.checkpoint", g_tmp);

    sw_test_mock_t mock;
    const char *topics[] = {"tele:4", NULL};
    SW_ASSERT_TRUE(sw_test_mock_start(&mock, g_tmp, 0, true, topics));
    int64_t t0 = sw_proc_now_ms();

    /* 1. Normal operation: rolls and prunes behind the shipper, no loss. */
    sw_test_daemon_t s1, s2;
    ship_init(&s1, "ship1", mock.boot, ckpt);
    SW_ASSERT_TRUE(sw_test_daemon_start(&s1));
    int port = sw_test_daemon_metrics_port(&s1, 15000);
    SW_ASSERT(port > 0, "no metrics port in %s", s1.log);
    for (int step = 0; step < 10; step++) {
        write_events(&g_w, 150);
        SW_ASSERT(wait_metric(&s1, port, "stormwatch_ship_events_total", g_w.n - 150, 20000),
                  "shipper behind after step %d", step);
    }
    SW_ASSERT_I64(metric(port, "stormwatch_ship_lost_bytes_total"), 0);
    printf("  phase 1: %d events written in %d segments, shipped, no loss\n", g_w.n, g_w.seg + 1);

    /* 2. kill -9 with events in flight; the writer goes on meanwhile. */
    write_events(&g_w, 400);
    SW_ASSERT_TRUE(wait_metric(&s1, port, "stormwatch_ship_events_total", 1550, 20000));
    sw_test_daemon_kill(&s1);
    /* What the restart resumes from: events at or after their segment's
     * checkpointed offset may be sent again, no other. */
    static bool resendable[MAX_EVENTS];
    int n_resendable = 0;
    {
        sw_buf_t ck;
        sw_buf_init(&ck);
        SW_ASSERT_TRUE(sw_test_read_file(ckpt, &ck));
        int max_seg = -1;
        const char *p = strchr(sw_buf_cstr(&ck), '\n');
        while (p && *++p) {
            unsigned long long fp, dev, ino, off, lineno, size;
            char path[1200];
            SW_ASSERT(sscanf(p, "%llx %llu %llu %llu %llu %llu %1199s", &fp, &dev, &ino, &off,
                             &lineno, &size, path) == 7,
                      "checkpoint line %.80s", p);
            int seg = atoi(strrchr(path, '-') + 1);
            if (seg > max_seg) max_seg = seg;
            for (int k = 0; k < g_w.n; k++)
                if (g_w.lines[k].seg == seg && g_w.lines[k].from >= off) {
                    resendable[k] = true;
                    n_resendable++;
                }
            p = strchr(p, '\n');
        }
        sw_buf_clear(&ck);
        /* Segments newer than the checkpoint's are read from their start. */
        for (int k = 0; k < g_w.n; k++)
            if (g_w.lines[k].seg > max_seg && !resendable[k]) {
                resendable[k] = true;
                n_resendable++;
            }
    }
    write_events(&g_w, 100);
    ship_init(&s2, "ship2", mock.boot, ckpt);
    SW_ASSERT_TRUE(sw_test_daemon_start(&s2));
    port = sw_test_daemon_metrics_port(&s2, 15000);
    SW_ASSERT(port > 0, "no metrics port in %s", s2.log);
    SW_ASSERT(sw_test_daemon_wait_log(&s2, "resumed at byte", 1, 15000), "no resume in %s", s2.log);
    write_events(&g_w, 300);
    SW_ASSERT(wait_caught_up(&s2, port, 30000), "not caught up after the restart");
    printf("  phase 2: killed (SIGKILL) and restarted; %d events written\n", g_w.n);

    /* 3. Every broker down: reading pauses, /readyz says so; the writer
     *    prunes segments the shipper could not read: reported lost. */
    SW_ASSERT(sw_test_mock_cmd(&mock, "broker down -1"), "mock refused broker down");
    int before = g_w.n;
    for (int i = 0; i < 12 && !sw_test_daemon_count(&s2, "reading paused"); i++) {
        write_events(&g_w, 150);
        usleep(100 * 1000);
    }
    SW_ASSERT(sw_test_daemon_wait_log(&s2, "reading paused", 1, 15000), "never paused: %s", s2.log);
    sw_buf_t body;
    sw_buf_init(&body);
    int code = sw_test_http_get(port, "/readyz", &body);
    SW_ASSERT(code == 503, "/readyz %d while paused: %s", code, sw_buf_cstr(&body));
    SW_ASSERT_CONTAINS(sw_buf_cstr(&body), "reading paused");
    SW_ASSERT_I64(metric(port, "stormwatch_ship_paused"), 1);
    double inflight = metric(port, "stormwatch_ship_inflight_messages");
    SW_ASSERT(inflight <= MAX_INFLIGHT, "in flight %.0f > %d", inflight, MAX_INFLIGHT);
    write_events(&g_w, 4 * SEG_LINES); /* prunes what was not read */
    SW_ASSERT(sw_test_daemon_wait_log(&s2, "data loss: ", 1, 15000), "no loss reported: %s",
              s2.log);
    printf(
        "  phase 3: brokers down; paused with %.0f in flight, %d events written during the "
        "outage\n",
        inflight, g_w.n - before);
    SW_ASSERT(sw_test_mock_cmd(&mock, "broker up -1"), "mock refused broker up");
    SW_ASSERT(sw_test_daemon_wait_log(&s2, "reading resumed", 1, 30000), "never resumed: %s",
              s2.log);
    write_events(&g_w, 200);
    SW_ASSERT(wait_caught_up(&s2, port, 30000), "not caught up after the outage");
    SW_ASSERT(sw_test_daemon_wait_ready(&s2, port, 10000), "not ready after the outage");
    double lost_metric = metric(port, "stormwatch_ship_lost_bytes_total");
    int rc = sw_test_daemon_stop(&s2, 20000);
    SW_ASSERT(rc == 0, "ship exited %d: %s", rc, s2.log);

    /* 4. Read the topic back and account for every event: at least every
     *    event not reported lost is expected (then 1.5 s more for any
     *    re-sent copies). */
    int *count = calloc((size_t)g_w.n, sizeof(int));
    bool *lost = calloc((size_t)g_w.n, sizeof(bool));
    uint64_t lost_bytes = 0, lost1 = 0;
    int reports = mark_lost(s1.log, lost, &lost1);
    reports += mark_lost(s2.log, lost, &lost_bytes); /* the metric is s2's */
    size_t want = 0;
    for (int k = 0; k < g_w.n; k++) want += !lost[k];
    sw_kmsg_t *msgs = NULL;
    size_t nm = sw_kc_read(mock.boot, "tele", PARTITIONS, want, 1500, 30000, &msgs);
    for (size_t i = 0; i < nm; i++) {
        const char *ts = strstr(msgs[i].value, "\"timestamp_ns\": ");
        SW_ASSERT_NOT_NULL(ts);
        long long t = atoll(ts + 16);
        int k = (int)((t - 1763700000000000000LL) / 1000);
        SW_ASSERT(k >= 0 && k < g_w.n, "unknown event %lld", t);
        count[k]++;
        char job[32];
        snprintf(job, sizeof(job), "job-%d", k % 7);
        SW_ASSERT(msgs[i].key && strcmp(msgs[i].key, job) == 0, "event %d key %s, want %s", k,
                  msgs[i].key ? msgs[i].key : "(null)", job);
        int32_t want_p = sw_partition_of(SW_PARTITIONER_MURMUR2, job, strlen(job), PARTITIONS);
        SW_ASSERT(msgs[i].partition == want_p, "event %d on partition %d, want %d", k,
                  (int)msgs[i].partition, (int)want_p);
    }
    int once = 0, dup = 0, nlost = 0, missing = 0;
    for (int k = 0; k < g_w.n; k++) {
        if (lost[k]) {
            nlost++;
            /* A loss reported at the restart covers what the killed shipper
             * had sent unacknowledged: delivered at most once. */
            SW_ASSERT(count[k] <= 1, "event %d inside a reported loss shipped %d times", k,
                      count[k]);
        } else if (count[k] == 0) {
            if (missing++ < 5)
                fprintf(stderr, "event %d (segment %d bytes %llu-%llu) silently missing\n", k,
                        g_w.lines[k].seg, (unsigned long long)g_w.lines[k].from,
                        (unsigned long long)g_w.lines[k].to);
        } else if (count[k] == 1) {
            once++;
        } else {
            dup += count[k] - 1;
            SW_ASSERT(resendable[k] && count[k] == 2,
                      "event %d shipped %d times, %s the checkpoint at the kill", k, count[k],
                      resendable[k] ? "after" : "behind");
        }
    }
    printf(
        "  %d events: %d shipped once, %d re-sent after the kill (of %d after its checkpoint), "
        "%d lost in %d reports (%llu bytes; metric %.0f); %.1f s\n",
        g_w.n, once, dup, n_resendable, nlost, reports, (unsigned long long)(lost1 + lost_bytes),
        lost_metric, (double)(sw_proc_now_ms() - t0) / 1000.0);
    SW_ASSERT_I64(missing, 0);
    SW_ASSERT(nlost > 0, "the outage lost nothing: the test did not test loss");
    SW_ASSERT((double)lost_bytes == lost_metric, "reported %llu bytes lost, metric %.0f",
              (unsigned long long)lost_bytes, lost_metric);
    /* Re-sent: only what the killed shipper had not checkpointed. */
    SW_ASSERT(dup <= n_resendable, "%d events re-sent, %d after the checkpoint", dup, n_resendable);
    sw_kmsg_free(msgs, nm);
    free(count);
    free(lost);
    sw_buf_clear(&body);
    sw_test_mock_stop(&mock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_ship_roll_prune_kill_outage, sw_test_kill_children),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
