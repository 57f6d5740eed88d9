/*
 * The shipper's library (src/ship) without Kafka: the follower on real
 * files in a temporary directory (new segments, roll over, rename and
 * tail -F rotation, truncation, gzip segments, a segment pruned before it
 * was read = counted loss, resume from a checkpoint), the in-flight window
 * and the checkpoint file. Time is an argument: no sleeps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "sw_follow.h"
#include "sw_ship_acks.h"
#include "sw_ship_ckpt.h"
#include "sw_testlib.h"

#define RW_MS 1000 /* rotate_wait of the tests */

static char g_dir[1024];

static void mkdir_fresh(const char *name)
{
    snprintf(g_dir, sizeof(g_dir), "%s/ship-%s", sw_test_tmp(), name);
    char cmd[2200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", g_dir, g_dir);
    SW_ASSERT(system(cmd) == 0, "%s failed", cmd);
}

static const char *at(const char *name)
{
    static char paths[8][1200];
    static int k;
    k = (k + 1) % 8;
    snprintf(paths[k], sizeof(paths[k]), "%s/%s", g_dir, name);
    return paths[k];
}

/* Append lines {"n":from}..{"n":to-1} (the last without a newline if @p open_end). */
static void append_lines(const char *path, int from, int to, bool open_end)
{
    FILE *f = fopen(path, "a");
    SW_ASSERT_NOT_NULL(f);
    for (int i = from; i < to; i++)
        fprintf(f, "{\"n\":%d,\"pad\":\"segment line\"}%s", i, open_end && i == to - 1 ? "" : "\n");
    fclose(f);
}

static void append_raw(const char *path, const char *text)
{
    FILE *f = fopen(path, "a");
    SW_ASSERT_NOT_NULL(f);
    fputs(text, f);
    fclose(f);
}

/* gzip @p src into @p dst (as gzip(1) would, one member). */
static void gzip_file(const char *src, const char *dst)
{
    sw_buf_t b;
    sw_buf_init(&b);
    SW_ASSERT_TRUE(sw_test_read_file(src, &b));
    gzFile gz = gzopen(dst, "wb");
    SW_ASSERT_NOT_NULL(gz);
    SW_ASSERT(gzwrite(gz, b.data, (unsigned)b.len) == (int)b.len, "gzwrite");
    gzclose(gz);
    sw_buf_clear(&b);
}

/* What a run of the follower gave. */
typedef struct got_s {
    int seen[1000]; /* times each n came out */
    int order[4000];
    int n;
    int too_long;
    int ev[SW_FOLLOW__CNT];
    uint64_t lost_from, lost_to;
} got_t;

/* Scan and read everything there, acknowledging up to @p ack_max lines
 * (-1: all); events counted. */
static void drain(sw_follow_t *f, int64_t now_ms, got_t *g, int ack_max)
{
    sw_follow_scan(f, now_ms);
    sw_follow_line_t ln;
    int acked = 0;
    while (sw_follow_next(f, &ln)) {
        if (ln.too_long) {
            g->too_long++;
        } else {
            int n = -1;
            SW_ASSERT(sscanf(ln.data, "{\"n\":%d", &n) == 1, "line %.*s", (int)ln.len, ln.data);
            SW_ASSERT(n >= 0 && n < 1000, "n %d", n);
            g->seen[n]++;
            g->order[g->n++] = n;
        }
        if (ack_max < 0 || acked < ack_max) {
            sw_follow_acked(f, ln.seg, ln.end, ln.lineno);
            acked++;
        }
    }
    sw_follow_ev_t ev;
    while (sw_follow_take_event(f, &ev)) {
        g->ev[ev.kind]++;
        if (getenv("SHIP_DEBUG"))
            fprintf(stderr, "ev %s %s %llu %llu %s\n", sw_follow_ev_name(ev.kind), ev.path,
                    (unsigned long long)ev.from, (unsigned long long)ev.to, ev.detail);
        if (ev.kind == SW_FOLLOW_LOST) {
            g->lost_from = ev.from;
            g->lost_to = ev.to;
        }
    }
}

static sw_follow_t *follower(const char *path)
{
    char err[600];
    sw_follow_opts_t o = {path, NULL, RW_MS, 200};
    sw_follow_t *f = sw_follow_new(&o, err, sizeof(err));
    SW_ASSERT(f != NULL, "%s", err);
    return f;
}

static void assert_once(const got_t *g, int from, int to)
{
    for (int i = from; i < to; i++)
        SW_ASSERT(g->seen[i] == 1, "line n=%d came out %d times", i, g->seen[i]);
}

/* A directory: segments roll over; every line once, oldest segment first. */
static void test_dir_rollover(void **state)
{
    (void)state;
    mkdir_fresh("roll");
    append_lines(at("seg-0001.jsonl"), 0, 10, false);
    append_raw(at("notes.txt"), "{\"n\":999}\n"); /* not a segment name */
    sw_follow_t *f = follower(g_dir);
    got_t g = {0};
    drain(f, 0, &g, -1);
    append_lines(at("seg-0001.jsonl"), 10, 15, false);
    drain(f, 100, &g, -1);
    append_lines(at("seg-0002.jsonl"), 15, 30, false);
    append_lines(at("seg-0002.jsonl"), 30, 31, true); /* unterminated: held */
    drain(f, 200, &g, -1);
    SW_ASSERT_I64(g.n, 30);
    SW_ASSERT_TRUE(sw_follow_caught_up(f)); /* the unterminated line is not complete yet */
    append_raw(at("seg-0002.jsonl"), "\n");
    drain(f, 300, &g, -1);
    assert_once(&g, 0, 31);
    for (int i = 0; i < g.n; i++) SW_ASSERT_I64(g.order[i], i);
    SW_ASSERT_I64(g.seen[999], 0);
    SW_ASSERT_I64(g.ev[SW_FOLLOW_NEW], 2);
    /* The writer prunes the first segment once read: no loss. */
    SW_ASSERT_I64(unlink(at("seg-0001.jsonl")), 0);
    drain(f, 400, &g, -1);
    drain(f, 400 + RW_MS, &g, -1);
    sw_follow_stats_t st;
    sw_follow_stats(f, &st);
    SW_ASSERT_I64(st.lost_bytes, 0);
    SW_ASSERT_I64(st.segments, 1);
    SW_ASSERT_TRUE(sw_follow_caught_up(f));
    sw_follow_destroy(f);
}

/* Kill and restart: only acknowledged lines are behind the checkpoint;
 * the rest comes out again, nothing is skipped. */
static void test_resume_checkpoint(void **state)
{
    (void)state;
    mkdir_fresh("resume");
    append_lines(at("a.jsonl"), 0, 20, false);
    append_lines(at("b.jsonl"), 20, 25, false);
    sw_follow_t *f = follower(g_dir);
    got_t g = {0};
    drain(f, 0, &g, 12); /* 12 acknowledged, 13 in flight at the "kill" */
    SW_ASSERT_I64(g.n, 25);
    sw_ship_pos_t *v;
    size_t n = sw_follow_positions(f, &v);
    char err[600];
    const char *ck = at("ckpt");
    SW_ASSERT(sw_ship_ckpt_save(ck, v, n, err, sizeof(err)) == SW_OK, "%s", err);
    free(v);
    sw_follow_destroy(f);
    append_lines(at("b.jsonl"), 25, 28, false); /* written while down */

    SW_ASSERT(sw_ship_ckpt_load(ck, &v, &n, err, sizeof(err)) == SW_OK, "%s", err);
    SW_ASSERT_I64(n, 2);
    f = follower(g_dir);
    sw_follow_restore(f, v, n);
    free(v);
    got_t g2 = {0};
    drain(f, 0, &g2, -1);
    SW_ASSERT_I64(g2.ev[SW_FOLLOW_RESUMED], 2);
    SW_ASSERT_I64(g2.ev[SW_FOLLOW_NEW], 0);
    for (int i = 0; i < 12; i++) SW_ASSERT(g2.seen[i] == 0, "acknowledged n=%d sent again", i);
    assert_once(&g2, 12, 28);
    sw_follow_destroy(f);
}

/* tail -F: the file renamed away (a late write still read), a new one in
 * its place; then truncated in place. */
static void test_single_file_rotation_truncation(void **state)
{
    (void)state;
    mkdir_fresh("tailf");
    const char *p = at("app.jsonl");
    sw_follow_t *f = follower(p);
    got_t g = {0};
    drain(f, 0, &g, -1); /* not there yet */
    append_lines(p, 0, 5, false);
    drain(f, 10, &g, -1);
    SW_ASSERT_I64(g.n, 5);
    SW_ASSERT_I64(rename(p, at("app.jsonl.1")), 0);
    append_lines(p, 5, 8, false);
    append_lines(at("app.jsonl.1"), 8, 9, false); /* the writer's last line, after the rename */
    drain(f, 20, &g, -1);
    drain(f, 20 + RW_MS, &g, -1);
    drain(f, 30 + 2 * RW_MS, &g, -1);
    assert_once(&g, 0, 9);
    SW_ASSERT_I64(g.ev[SW_FOLLOW_DONE], 1);
    /* copytruncate without a copy in view: the new content after the
     * truncation is a new segment; nothing unread was there: no loss. */
    SW_ASSERT_I64(truncate(p, 0), 0);
    append_lines(p, 9, 11, false);
    drain(f, 40 + 2 * RW_MS, &g, -1);
    drain(f, 50 + 2 * RW_MS, &g, -1);
    assert_once(&g, 0, 11);
    SW_ASSERT_I64(g.ev[SW_FOLLOW_TRUNCATED], 1);
    SW_ASSERT_I64(g.ev[SW_FOLLOW_LOST], 0);
    sw_follow_stats_t st;
    sw_follow_stats(f, &st);
    SW_ASSERT_I64(st.truncations, 1);
    sw_follow_destroy(f);
}

/* gzip segments: read whole (the last line without a newline too); a
 * segment compressed after it was half shipped goes on from its offset. */
static void test_gzip(void **state)
{
    (void)state;
    mkdir_fresh("gzip");
    append_lines(at("tmp"), 0, 6, true);
    gzip_file(at("tmp"), at("old-0001.jsonl.gz"));
    SW_ASSERT_I64(unlink(at("tmp")), 0);
    append_lines(at("cur-0002.jsonl"), 6, 16, false);
    sw_follow_t *f = follower(g_dir);
    got_t g = {0};
    drain(f, 0, &g, 6 + 4); /* the gzip and 4 lines of the plain one acknowledged */
    assert_once(&g, 0, 16);
    sw_ship_pos_t *v;
    size_t n = sw_follow_positions(f, &v);
    sw_follow_destroy(f);
    /* While stopped: the plain segment is compressed and removed. */
    gzip_file(at("cur-0002.jsonl"), at("cur-0002.jsonl.gz"));
    SW_ASSERT_I64(unlink(at("cur-0002.jsonl")), 0);
    f = follower(g_dir);
    sw_follow_restore(f, v, n);
    free(v);
    got_t g2 = {0};
    drain(f, 0, &g2, -1);
    for (int i = 0; i < 10; i++) SW_ASSERT(g2.seen[i] == 0, "n=%d sent again", i);
    assert_once(&g2, 10, 16);
    SW_ASSERT_I64(g2.ev[SW_FOLLOW_LOST], 0);
    /* Live: a plain segment compressed (gzip, then the original removed). */
    append_lines(at("live-0003.jsonl"), 16, 20, false);
    drain(f, 10, &g2, -1);
    gzip_file(at("live-0003.jsonl"), at("live-0003.jsonl.gz"));
    SW_ASSERT_I64(unlink(at("live-0003.jsonl")), 0);
    drain(f, 20, &g2, -1);
    drain(f, 30 + RW_MS, &g2, -1);
    assert_once(&g2, 10, 20);
    SW_ASSERT_I64(g2.ev[SW_FOLLOW_LOST], 0);
    sw_follow_destroy(f);
}

/* A segment pruned before it was read: its bytes are lost and said so
 * (file and range), whether the shipper was running (paused) or stopped. */
static void test_pruned_is_loss(void **state)
{
    (void)state;
    mkdir_fresh("pruned");
    append_lines(at("s1.jsonl"), 0, 10, false);
    struct stat sb;
    SW_ASSERT_I64(stat(at("s1.jsonl"), &sb), 0);
    sw_follow_t *f = follower(g_dir);
    got_t g = {0};
    sw_follow_scan(f, 0); /* seen, never read (Kafka down: reading paused) */
    SW_ASSERT_I64(unlink(at("s1.jsonl")), 0);
    sw_follow_scan(f, 10);
    sw_follow_scan(f, 10 + RW_MS);
    drain(f, 20 + RW_MS, &g, -1);
    SW_ASSERT_I64(g.n, 0);
    SW_ASSERT_I64(g.ev[SW_FOLLOW_LOST], 1);
    SW_ASSERT_I64(g.lost_from, 0);
    SW_ASSERT_I64(g.lost_to, sb.st_size);
    sw_follow_stats_t st;
    sw_follow_stats(f, &st);
    SW_ASSERT_I64(st.lost_bytes, sb.st_size);
    SW_ASSERT_I64(st.lost_segments, 1);
    /* Deleted while read: a deleted file still open is read to its end. */
    append_lines(at("s2.jsonl"), 10, 20, false);
    sw_follow_scan(f, 30 + RW_MS);
    SW_ASSERT_I64(unlink(at("s2.jsonl")), 0);
    drain(f, 40 + RW_MS, &g, -1);
    drain(f, 50 + RW_MS, &g, -1);
    assert_once(&g, 10, 20);
    sw_follow_stats(f, &st);
    SW_ASSERT_I64(st.lost_segments, 1);
    /* Stopped: checkpointed at line 3 of s3, pruned before the restart. */
    append_lines(at("s3.jsonl"), 20, 30, false);
    got_t g3 = {0};
    drain(f, 60 + RW_MS, &g3, 3);
    sw_ship_pos_t *v;
    size_t n = sw_follow_positions(f, &v);
    sw_follow_destroy(f);
    SW_ASSERT_I64(stat(at("s3.jsonl"), &sb), 0);
    SW_ASSERT_I64(unlink(at("s3.jsonl")), 0);
    f = follower(g_dir);
    sw_follow_restore(f, v, n);
    uint64_t off3 = 0;
    for (size_t i = 0; i < n; i++)
        if (strstr(v[i].path, "s3.jsonl")) off3 = v[i].offset;
    free(v);
    SW_ASSERT(off3 > 0, "s3 has no checkpointed offset");
    got_t g4 = {0};
    drain(f, 0, &g4, -1);
    SW_ASSERT_I64(g4.ev[SW_FOLLOW_LOST], 1);
    SW_ASSERT_I64(g4.lost_from, off3);
    SW_ASSERT_I64(g4.lost_to, sb.st_size);
    /* Reported once: the next checkpoint no longer has it. */
    n = sw_follow_positions(f, &v);
    for (size_t i = 0; i < n; i++) SW_ASSERT(!strstr(v[i].path, "s3.jsonl"), "s3 still there");
    free(v);
    sw_follow_destroy(f);
}

/* Numbered segments: one created and pruned between two scans is a gap,
 * reported as a lost segment (size unknown); another name series is not. */
static void test_gap_is_loss(void **state)
{
    (void)state;
    mkdir_fresh("gap");
    append_lines(at("t-00007.jsonl"), 0, 3, false);
    sw_follow_t *f = follower(g_dir);
    got_t g = {0};
    drain(f, 0, &g, -1);
    append_lines(at("t-00008.jsonl"), 3, 6, false);
    SW_ASSERT_I64(unlink(at("t-00008.jsonl")), 0);  /* never seen */
    append_lines(at("u-00003.jsonl"), 6, 7, false); /* another series: no gap */
    append_lines(at("t-00009.jsonl"), 7, 9, false);
    drain(f, 10, &g, -1);
    assert_once(&g, 0, 3);
    assert_once(&g, 6, 9);
    SW_ASSERT_I64(g.ev[SW_FOLLOW_LOST], 1);
    SW_ASSERT_I64(g.lost_to, 0);
    sw_follow_stats_t st;
    sw_follow_stats(f, &st);
    SW_ASSERT_I64(st.lost_segments, 1);
    SW_ASSERT_I64(st.lost_bytes, 0);
    sw_follow_destroy(f);
}

/* An over-long line is skipped (reported with its number); the rest flows. */
static void test_too_long(void **state)
{
    (void)state;
    mkdir_fresh("long");
    append_lines(at("x.jsonl"), 0, 2, false);
    char big[1001];
    memset(big, 'x', 999);
    big[999] = '\n';
    big[1000] = '\0';
    append_raw(at("x.jsonl"), big);
    append_lines(at("x.jsonl"), 2, 4, false);
    sw_follow_t *f = follower(g_dir);
    got_t g = {0};
    drain(f, 0, &g, -1);
    assert_once(&g, 0, 4);
    SW_ASSERT_I64(g.too_long, 1);
    SW_ASSERT_TRUE(sw_follow_caught_up(f));
    sw_follow_destroy(f);
}

/* The in-flight window: out-of-order reports, an in-order frontier. */
static void test_acks(void **state)
{
    (void)state;
    sw_acks_t a;
    sw_acks_init(&a);
    uint64_t s[3000];
    for (int i = 0; i < 3000; i++) s[i] = sw_acks_push(&a, 1, (uint64_t)(i + 1) * 10, i + 1, 10, i);
    SW_ASSERT_I64(sw_acks_count(&a), 3000);
    SW_ASSERT_I64(a.bytes, 30000);
    sw_ack_t e;
    sw_acks_done(&a, s[1]);
    SW_ASSERT_FALSE(sw_acks_pop(&a, &e));
    SW_ASSERT_I64(sw_acks_oldest_ms(&a), 0);
    sw_acks_done(&a, s[0]);
    SW_ASSERT_TRUE(sw_acks_pop(&a, &e));
    SW_ASSERT_I64(e.end, 10);
    SW_ASSERT_TRUE(sw_acks_pop(&a, &e));
    SW_ASSERT_I64(e.end, 20);
    SW_ASSERT_FALSE(sw_acks_pop(&a, &e));
    SW_ASSERT_I64(sw_acks_oldest_ms(&a), 2);
    for (int i = 2999; i >= 2; i--) sw_acks_done(&a, s[i]);
    sw_acks_done(&a, 99999); /* unknown: ignored */
    int k = 0;
    while (sw_acks_pop(&a, &e)) k++;
    SW_ASSERT_I64(k, 2998);
    SW_ASSERT_I64(e.end, 30000);
    SW_ASSERT_I64(a.bytes, 0);
    sw_acks_clear(&a);
}

/* The checkpoint file: round trip, a missing file, a corrupt one. */
static void test_ckpt_file(void **state)
{
    (void)state;
    mkdir_fresh("ckpt");
    sw_ship_pos_t w[2];
    memset(w, 0, sizeof(w));
    w[0] = (sw_ship_pos_t){0xdeadbeefcafe0001ULL, 2049, 77, 100, 5, 150, ""};
    snprintf(w[0].path, sizeof(w[0].path), "/var/log/a b.jsonl");
    w[1] = (sw_ship_pos_t){1, 2, 3, 0, 0, 0, ""};
    snprintf(w[1].path, sizeof(w[1].path), "x\ny");
    char err[600];
    const char *p = at("c");
    SW_ASSERT(sw_ship_ckpt_save(p, w, 2, err, sizeof(err)) == SW_OK, "%s", err);
    sw_ship_pos_t *r;
    size_t n;
    SW_ASSERT(sw_ship_ckpt_load(p, &r, &n, err, sizeof(err)) == SW_OK, "%s", err);
    SW_ASSERT_I64(n, 2);
    SW_ASSERT_TRUE(r[0].fp == w[0].fp && r[0].dev == 2049 && r[0].ino == 77 && r[0].offset == 100 &&
                   r[0].lineno == 5 && r[0].size == 150);
    SW_ASSERT_STREQ(r[0].path, "/var/log/a b.jsonl");
    SW_ASSERT_STREQ(r[1].path, "x?y");
    free(r);
    SW_ASSERT(sw_ship_ckpt_load(at("none"), &r, &n, err, sizeof(err)) == SW_OK, "%s", err);
    SW_ASSERT_I64(n, 0);
    append_raw(at("bad"), "stormwatch-ship-checkpoint 1\n00ff 1 2 3 4\n");
    SW_ASSERT_I64(sw_ship_ckpt_load(at("bad"), &r, &n, err, sizeof(err)), SW_ERR_PARSE);
    SW_ASSERT_CONTAINS(err, "bad:2: expected FP DEV INO OFFSET LINENO SIZE PATH");
    append_raw(at("bad2"), "{\"n\":1}\n");
    SW_ASSERT_I64(sw_ship_ckpt_load(at("bad2"), &r, &n, err, sizeof(err)), SW_ERR_PARSE);
    SW_ASSERT_CONTAINS(err, "bad2:1: expected \"stormwatch-ship-checkpoint 1\"");
    /* No temporary file left behind. */
    SW_ASSERT_TRUE(access(at("c.tmp"), F_OK) != 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dir_rollover),
        cmocka_unit_test(test_resume_checkpoint),
        cmocka_unit_test(test_single_file_rotation_truncation),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_pruned_is_loss),
        cmocka_unit_test(test_gap_is_loss),
        cmocka_unit_test(test_too_long),
        cmocka_unit_test(test_acks),
        cmocka_unit_test(test_ckpt_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
