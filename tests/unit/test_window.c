/*
 * sw_window: random sample streams (in order, late, duplicate, too old,
 * emptied) checked against a naive window kept as a sorted array. After
 * every step the candidate must equal the reference's first qualifying
 * spike (the seed's scan), the gap median must count exactly the window's
 * positive gaps and give their middle values (through its bracket while
 * that can answer, rebuilt from the window when not), and the interval
 * multiset must hold exactly the positive intervals. sw_win_steep_tail (a
 * member's second rise) is checked on hand-made levels: held, settled after
 * a fall, a swing, a pause across a collector gap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_intern.h"
#include "sw_assemble.h"
#include "sw_window.h"
#include "sw_testlib.h"

typedef struct ref_s {
    int64_t ts, used;
    uint32_t src;
} ref_t;

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static const sw_src_t *g_srcs;
static size_t g_with_cand, g_steps; /* guards against a vacuous run */
static const sw_intern_t *g_strs;

static int ref_cmp(const ref_t *a, const ref_t *b)
{
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    const sw_src_t *x = &g_srcs[a->src], *y = &g_srcs[b->src];
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    return sw_str_cmp(sw_intern_get(g_strs, x->host), sw_intern_get(g_strs, y->host));
}

/* The seed's _find_rank_spike_candidate over the reference window. */
/* The first qualifying spike whose rising run starts at or after spent
 * (INT64_MIN: every run counts). */
static bool ref_candidate(const ref_t *w, size_t n, int64_t min_bytes, double frac, int64_t spent,
                          bool trunc, int64_t orig, sw_win_cand_t *c)
{
    if (n < 2) return false;
    int64_t mx = w[0].used;
    for (size_t i = 1; i < n; i++)
        if (w[i].used > mx) mx = w[i].used;
    int64_t t;
    if (!sw_spike_threshold(mx, min_bytes, frac, &t)) return false;
    int64_t cum = 0, steps = 0;
    for (size_t i = 1; i < n; i++) {
        int64_t d = w[i].used - w[i - 1].used;
        if (d <= 0) {
            cum = steps = 0;
            continue;
        }
        cum += d;
        steps++;
        /* the oldest run, after its base was evicted, keeps that base's time */
        int64_t base = i - (size_t)steps == 0 && trunc ? orig : w[i - (size_t)steps].ts;
        if (cum >= t && base < spent) {
            /* a spent run: skip the rest of it */
            while (i + 1 < n && w[i + 1].used > w[i].used) i++;
            cum = steps = 0;
            continue;
        }
        if (cum >= t) {
            c->base_ts = base;
            c->spike_ts = w[i].ts;
            c->peak = cum;
            c->samples = steps;
            c->src = w[i].src;
            return true;
        }
    }
    return false;
}

static int i64cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The middle gaps through the bracket, rebuilding it from the window when
 * it cannot answer (as the engine does from all of a job's windows). */
static void gaps_middle(const sw_win_t *win, sw_gapmed_t *gm, int64_t *a, int64_t *b)
{
    if (gm->valid) /* an exact bracket accounts for every gap */
        SW_ASSERT_I64(gm->n_below + sw_mset_size(&gm->mid) + gm->n_above, gm->n);
    if (sw_gapmed_middle(gm, a, b)) return;
    static uint64_t hist[SW_GAPMED_BUCKETS];
    memset(hist, 0, sizeof(hist));
    sw_win_gaps_hist(win, hist);
    size_t n = gm->n;
    sw_gapmed_rebuild_begin(gm, hist);
    SW_ASSERT_I64(gm->n, n);
    sw_win_gaps_keep(win, gm);
    SW_ASSERT_TRUE(sw_gapmed_middle(gm, a, b));
}

static void check_msets(const sw_win_t *win, const ref_t *w, size_t n, sw_gapmed_t *gaps,
                        sw_vcount_t *ivals)
{
    int64_t g[4096], iv[4096];
    size_t ng = 0, ni = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && w[i].ts - w[i - 1].ts > 0) g[ng++] = w[i].ts - w[i - 1].ts;
        if (g_srcs[w[i].src].interval_ms > 0) iv[ni++] = g_srcs[w[i].src].interval_ms;
    }
    qsort(g, ng, sizeof(*g), i64cmp);
    qsort(iv, ni, sizeof(*iv), i64cmp);
    SW_ASSERT_I64(sw_gapmed_size(gaps), ng);
    SW_ASSERT_I64(sw_vcount_size(ivals), ni);
    if (ng) {
        int64_t a, b;
        gaps_middle(win, gaps, &a, &b);
        SW_ASSERT_I64(a, g[(ng - 1) / 2]);
        SW_ASSERT_I64(b, g[ng / 2]);
    }
    for (size_t k = 0; k < ni; k++) SW_ASSERT_I64(sw_vcount_kth(ivals, k), iv[k]);
}

static void run(uint64_t seed, uint32_t cap, size_t steps, int late_pct, int64_t min_bytes,
                double frac)
{
    sw_intern_t *strs = sw_intern_new();
    sw_src_t srcs[4];
    const char *hosts[4] = {"h0", "h1", "h0", "a"};
    for (int i = 0; i < 4; i++) {
        srcs[i].pid = i < 2 ? 100 : 99;
        srcs[i].host = sw_intern_add(strs, sw_str(hosts[i]));
        srcs[i].session = 0;
        srcs[i].interval_ms = i == 1 ? 0 : 100 + i;
    }
    g_srcs = srcs;
    g_strs = strs;
    sw_gapmed_t gaps;
    sw_vcount_t ivals;
    sw_gapmed_init(&gaps);
    sw_vcount_init(&ivals);
    sw_winpool_t pool; /* window.samples for the inserts */
    sw_winpool_init(&pool, cap);
    sw_win_ctx_t ctx = {srcs, strs, NULL, &gaps, &ivals, &pool};
    sw_win_t win;
    sw_win_cc_t cc; /* the cached candidate, kept across the steps */
    sw_win_init(&win, cap);
    ref_t *ref = malloc((cap + 1) * sizeof(*ref));
    size_t n = 0;
    uint64_t s = seed;
    int64_t now = 1000, used = 1 << 30;
    bool trunc = false; /* the oldest run lost its base (run identity) */
    int64_t orig = 0;   /* that base's time */
    for (size_t step = 0; step < steps; step++) {
        uint64_t r = rng(&s) % 100;
        if (r < 2) {
            sw_win_empty(&win, &ctx);
            n = 0;
            trunc = false;
            check_msets(&win, ref, n, &gaps, &ivals);
            continue;
        }
        ref_t x;
        x.src = (uint32_t)(rng(&s) % 4);
        if ((int)(rng(&s) % 100) < late_pct && now > 2000) x.ts = now - (int64_t)(rng(&s) % 1500);
        else x.ts = (now += (int64_t)(rng(&s) % 3) * 50);
        /* Random walk with occasional big jumps so runs and spikes occur. */
        uint64_t m = rng(&s) % 10;
        used += m < 4   ? -(int64_t)(rng(&s) % (256 << 20))
                : m < 8 ? (int64_t)(rng(&s) % (96 << 20))
                        : (int64_t)(rng(&s) % (1LL << 30));
        if (used < (1LL << 30) || used > (6LL << 30)) used = 2LL << 30; /* mean-reverting */
        x.used = used;
        /* Reference insert. */
        size_t pos = 0;
        while (pos < n && ref_cmp(&ref[pos], &x) < 0) pos++;
        bool dup = pos < n && ref_cmp(&ref[pos], &x) == 0;
        sw_win_res_t want;
        if (dup) {
            want = SW_WIN_DUP;
        } else if (n == cap && pos == 0) {
            want = SW_WIN_TOO_OLD;
        } else {
            want = pos == n ? SW_WIN_APPENDED : SW_WIN_INSERTED;
            if (n == cap) {
                /* the oldest sample leaves first; the run it was the base
                 * of, when it goes on, keeps that base's time */
                if (!trunc && n >= 3 && ref[0].used < ref[1].used && ref[1].used < ref[2].used) {
                    trunc = true;
                    orig = ref[0].ts;
                }
                memmove(ref, ref + 1, (n - 1) * sizeof(*ref));
                n--;
                pos--;
            }
            memmove(ref + pos + 1, ref + pos, (n - pos) * sizeof(*ref));
            ref[pos] = x;
            n++;
        }
        SW_ASSERT_I64(sw_win_has(&win, &ctx, x.ts, x.src), dup);
        sw_win_res_t got = sw_win_insert(&win, &ctx, x.ts, x.used, x.src, (int64_t)step);
        SW_ASSERT_I64(got, want);
        SW_ASSERT_I64(win.n, n);
        sw_win_cand_t cw, cr;
        /* Now and then runs are spent up to a random retained sample. */
        int64_t spent = INT64_MIN;
        if (n && rng(&s) % 3 == 0) spent = ref[rng(&s) % n].ts + (int64_t)(rng(&s) % 2);
        bool hw = sw_win_candidate(&win, &cc, min_bytes, frac, spent, &cw);
        if (n < 2 || ref[1].used <= ref[0].used) trunc = false;
        SW_ASSERT_I64(win.hr_trunc, trunc);
        bool hr = ref_candidate(ref, n, min_bytes, frac, spent, trunc, orig, &cr);
        SW_ASSERT_I64(hw, hr);
        g_steps++;
        if (hw) g_with_cand++;
        if (hw) {
            SW_ASSERT_I64(cw.spike_ts, cr.spike_ts);
            SW_ASSERT_I64(cw.peak, cr.peak);
            SW_ASSERT_I64(cw.samples, cr.samples);
            SW_ASSERT_I64(cw.src, cr.src);
            SW_ASSERT_I64(cw.base_ts, cr.base_ts);
        }
        if (step % 13 == 0) check_msets(&win, ref, n, &gaps, &ivals);
    }
    check_msets(&win, ref, n, &gaps, &ivals);
    free(ref);
    sw_win_clear(&win, &pool);
    sw_winpool_clear(&pool);
    sw_gapmed_clear(&gaps);
    sw_vcount_clear(&ivals);
    sw_intern_destroy(strs);
}

static void test_in_order(void **state)
{
    (void)state;
    g_with_cand = g_steps = 0;
    run(11, 16, 20000, 0, 64 << 20, 0.10);
    run(12, 1, 2000, 0, 64 << 20, 0.10);
    run(13, 2, 2000, 0, 0, 0.0);
    run(14, 3, 2000, 0, 64 << 20, 0.5);
    fprintf(stderr, "in order: %zu of %zu steps had a candidate\n", g_with_cand, g_steps);
    /* Both outcomes must be common for the comparison to mean anything. */
    SW_ASSERT_TRUE(g_with_cand > g_steps / 10);
    SW_ASSERT_TRUE(g_with_cand < g_steps - g_steps / 10);
}

static void test_late_and_duplicates(void **state)
{
    (void)state;
    g_with_cand = g_steps = 0;
    run(21, 16, 20000, 30, 64 << 20, 0.10);
    run(22, 7, 20000, 50, 64 << 20, 0.10);
    run(23, 64, 20000, 10, 0, 0.0);
    run(24, 5, 20000, 80, 1 << 20, 1.0);
    SW_ASSERT_TRUE(g_with_cand > g_steps / 10);
    SW_ASSERT_TRUE(g_with_cand < g_steps - g_steps / 10);
}

static void test_threshold_beyond_any_rise(void **state)
{
    (void)state;
    /* fraction 1.0 of INT64_MAX-ish maxima: the product rounds to 2^63, no
     * candidate can qualify (Python's int() would be exact and larger). */
    sw_intern_t *strs = sw_intern_new();
    sw_src_t src = {1, 100, sw_intern_add(strs, sw_str("h")), 0, SW_SRC_UNSET, SW_SRC_UNSET};
    sw_gapmed_t gaps;
    sw_vcount_t ivals;
    sw_gapmed_init(&gaps);
    sw_vcount_init(&ivals);
    sw_winpool_t pool;
    sw_winpool_init(&pool, 8);
    sw_win_ctx_t ctx = {&src, strs, NULL, &gaps, &ivals, &pool};
    sw_win_t win;
    sw_win_init(&win, 8);
    sw_win_insert(&win, &ctx, 1, 0, 0, 0);
    sw_win_insert(&win, &ctx, 2, INT64_MAX, 0, 1);
    sw_win_cand_t c;
    SW_ASSERT_FALSE(sw_win_candidate(&win, NULL, 0, 1.0, INT64_MIN, &c));
    SW_ASSERT_TRUE(sw_win_candidate(&win, NULL, 0, 0.5, INT64_MIN, &c));
    SW_ASSERT_I64(c.peak, INT64_MAX);
    sw_win_clear(&win, &pool);
    sw_winpool_clear(&pool);
    sw_gapmed_clear(&gaps);
    sw_vcount_clear(&ivals);
    sw_intern_destroy(strs);
}

/* Storage follows the samples held: a few slots at first, doubling up to
 * window.samples, never beyond; the window is full only at window.samples
 * (the model test above checks the contents across every growth). */
static void test_storage_follows_samples(void **state)
{
    (void)state;
    sw_intern_t *strs = sw_intern_new();
    sw_src_t src = {1, 100, sw_intern_add(strs, sw_str("h")), 0, SW_SRC_UNSET, SW_SRC_UNSET};
    sw_gapmed_t gaps;
    sw_vcount_t ivals;
    sw_gapmed_init(&gaps);
    sw_vcount_init(&ivals);
    sw_winpool_t pool;
    sw_winpool_init(&pool, 100);
    sw_win_ctx_t ctx = {&src, strs, NULL, &gaps, &ivals, &pool};
    sw_win_t win;
    sw_win_init(&win, 100);
    SW_ASSERT_I64(win.cap, 4);
    for (int64_t i = 0; i < 4; i++) sw_win_insert(&win, &ctx, 10 * i, i % 3, 0, i);
    SW_ASSERT_I64(win.cap, 4);
    SW_ASSERT_I64(sw_gapmed_size(&gaps), 3);
    sw_win_insert(&win, &ctx, 5, 7, 0, 4); /* late: lands inside, forces a growth */
    SW_ASSERT_I64(win.cap, 8);
    SW_ASSERT_I64(win.n, 5);
    SW_ASSERT_I64(win.slot[win.head + 1].ts, 5);
    for (int64_t i = 4; i < 60; i++) sw_win_insert(&win, &ctx, 10 * i, i % 3, 0, i + 1);
    SW_ASSERT_I64(win.cap, 64);
    SW_ASSERT_FALSE(sw_win_full(&win, 100));
    for (int64_t i = 60; i < 300; i++) sw_win_insert(&win, &ctx, 10 * i, i % 3, 0, i + 1);
    SW_ASSERT_I64(win.cap, 100);
    SW_ASSERT_I64(win.n, 100);
    SW_ASSERT_TRUE(sw_win_full(&win, 100));
    SW_ASSERT_I64(sw_gapmed_size(&gaps), 99);
    SW_ASSERT_TRUE(sw_win_bytes(4) < sw_win_bytes(100) / 10);
    sw_win_clear(&win, &pool);
    sw_winpool_clear(&pool);
    sw_gapmed_clear(&gaps);
    sw_vcount_clear(&ivals);
    sw_intern_destroy(strs);
}

/* Full windows past the first chunk's worth come from the pool, freed
 * blocks are reused, and the windows hold exactly what a heap window
 * holds (each window's samples differ so that a shared block would show). */
static void fill_window(sw_win_t *win, const sw_win_ctx_t *ctx, int64_t k)
{
    for (int64_t i = 0; i < 100; i++)
        sw_win_insert(win, ctx, 1000 * k + 10 * i, (i % 7) * 1000 + k, 0, i);
}

static void check_window(const sw_win_t *win, int64_t k)
{
    SW_ASSERT_I64(win->n, 64);
    for (uint32_t i = 0; i < 64; i++) {
        const sw_wslot_t *sl = &win->slot[(win->head + i) % win->cap];
        int64_t x = 36 + (int64_t)i;
        SW_ASSERT_I64(sl->ts, 1000 * k + 10 * x);
        SW_ASSERT_I64(sl->used, (x % 7) * 1000 + k);
    }
}

static void test_pool(void **state)
{
    (void)state;
    sw_intern_t *strs = sw_intern_new();
    sw_src_t src = {1, 100, sw_intern_add(strs, sw_str("h")), 0, SW_SRC_UNSET, SW_SRC_UNSET};
    sw_gapmed_t gaps;
    sw_vcount_t ivals;
    sw_gapmed_init(&gaps);
    sw_vcount_init(&ivals);
    sw_winpool_t pool;
    sw_winpool_init(&pool, 64);
    SW_ASSERT_TRUE(pool.block >= sw_win_bytes(64));
    sw_win_ctx_t ctx = {&src, strs, NULL, &gaps, &ivals, &pool};
    size_t heap = SW_WINPOOL_CHUNK / pool.block, n = 2 * heap + 50;
    sw_win_t *w = calloc(n, sizeof(*w));
    size_t pooled = 0;
    for (size_t k = 0; k < n; k++) {
        sw_win_init(&w[k], 64);
        fill_window(&w[k], &ctx, (int64_t)k);
        pooled += w[k].pooled;
        SW_ASSERT_I64(w[k].pooled, k >= heap);
    }
    SW_ASSERT_I64(pool.in_use, pooled);
    SW_ASSERT_I64(pool.nchunks, (pooled + heap - 1) / heap);
    for (size_t k = 0; k < n; k++) check_window(&w[k], (int64_t)k);
    /* Free every other window, then refill them: blocks are reused. */
    size_t chunks = pool.nchunks;
    for (size_t k = 0; k < n; k += 2) sw_win_clear(&w[k], &pool);
    for (size_t k = 0; k < n; k += 2) {
        sw_win_init(&w[k], 64);
        fill_window(&w[k], &ctx, (int64_t)(k + n));
    }
    SW_ASSERT_I64(pool.nchunks, chunks);
    for (size_t k = 0; k < n; k++) check_window(&w[k], (int64_t)(k % 2 ? k : k + n));
    for (size_t k = 0; k < n; k++) sw_win_clear(&w[k], &pool);
    SW_ASSERT_I64(pool.in_use, 0);
    SW_ASSERT_I64(sw_winpool_slack(&pool), pool.nchunks * SW_WINPOOL_CHUNK);
    free(w);
    sw_winpool_clear(&pool);
    sw_gapmed_clear(&gaps);
    sw_vcount_clear(&ivals);
    sw_intern_destroy(strs);
}

/* sw_pick_points: every pinned point kept, min(n, max) points in order,
 * the unpinned ones spread evenly: consecutive picks among them are at most
 * ceil(unpinned / budget) + 1 apart, the first unpinned one is picked. */
static void test_pick_points(void **state)
{
    (void)state;
    uint64_t seed = 5;
    uint32_t out[300];
    size_t pins[300];
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = 1 + rng(&seed) % 600, max = 3 + rng(&seed) % 250;
        bool pinned[600] = {false};
        size_t np = 0;
        size_t want_pins = rng(&seed) % (max < n ? max : n);
        for (size_t k = 0; k < want_pins; k++) pinned[rng(&seed) % n] = true;
        for (size_t i = 0; i < n; i++)
            if (pinned[i]) pins[np++] = i;
        size_t got = sw_pick_points(n, pins, np, max, out);
        SW_ASSERT_I64(got, n < max ? n : max);
        for (size_t k = 1; k < got; k++) SW_ASSERT_TRUE(out[k - 1] < out[k]);
        size_t p = 0;
        for (size_t k = 0; k < got && p < np; k++)
            if (out[k] == pins[p]) p++;
        SW_ASSERT_I64(p, np);
        if (n <= max || np == max) continue;
        size_t unp = n - np, b = max - np, step = (unp + b - 1) / b;
        /* ordinals (among unpinned points) of the unpinned picks */
        size_t u = 0, k = 0, prev = SIZE_MAX;
        for (size_t i = 0; i < n; i++) {
            if (pinned[i]) continue;
            bool picked = false;
            while (k < got && out[k] < i) k++;
            if (k < got && out[k] == i) picked = true;
            if (picked) {
                if (prev == SIZE_MAX) SW_ASSERT_I64(u, 0);
                else SW_ASSERT_TRUE(u - prev <= step + 1);
                prev = u;
            }
            u++;
        }
    }
}

/* sw_win_steep_tail (docs/semantics.md, "Storms that overlap", a member's
 * second rise): samples every 100 ms of level[i] MB (-1: lost); the rise
 * that ends at the newest sample, held since sample 10 (the first spike),
 * a pause after 11, steps of at most 160 ms, settled for 1.5 s. */
static bool steep_tail_of(const int64_t *level, int64_t n, int64_t *base)
{
    sw_intern_t *strs = sw_intern_new();
    sw_src_t src = {1, 100, sw_intern_add(strs, sw_str("h")), 0, SW_SRC_UNSET, SW_SRC_UNSET};
    sw_gapmed_t gaps;
    sw_vcount_t ivals;
    sw_gapmed_init(&gaps);
    sw_vcount_init(&ivals);
    sw_winpool_t pool;
    sw_winpool_init(&pool, 128);
    sw_win_ctx_t ctx = {&src, strs, NULL, &gaps, &ivals, &pool};
    sw_win_t win;
    sw_win_init(&win, 128);
    const int64_t ms = 1000000, mib = 1 << 20;
    for (int64_t i = 0; i < n; i++)
        if (level[i] >= 0) sw_win_insert(&win, &ctx, i * 100 * ms, level[i] * mib, 0, i);
    bool ok = sw_win_steep_tail(&win, 0, 0.1, 10 * 100 * ms, 11 * 100 * ms, 160 * ms, 1500 * ms,
                                base);
    sw_win_clear(&win, &pool);
    sw_winpool_clear(&pool);
    sw_gapmed_clear(&gaps);
    sw_vcount_clear(&ivals);
    sw_intern_destroy(strs);
    return ok;
}

static void test_steep_tail(void **state)
{
    (void)state;
    int64_t lv[64], base = 0;
    const int64_t ms = 1000000;
    /* Settled: the hold ends at 41 (fell by far more than half a
     * threshold), nothing rises for 1.9 s, then a rise of a threshold. */
    for (int i = 0; i < 61; i++) lv[i] = i < 10 ? 30000 : i <= 40 ? 38000 : 30000;
    lv[60] = 38000;
    SW_ASSERT_TRUE(steep_tail_of(lv, 61, &base));
    SW_ASSERT_I64(base, 59 * 100 * ms);
    /* A swing: a steep step 0.9 s before the base (within 1.5 s). */
    for (int i = 50; i < 60; i++) lv[i] = 30600;
    lv[60] = 38600;
    SW_ASSERT_FALSE(steep_tail_of(lv, 61, &base));
    /* Held (a dip of less than half a threshold): stacked, no quiet needed. */
    for (int i = 0; i < 46; i++) lv[i] = i < 10 ? 30000 : i <= 40 ? 38000 : 37000;
    lv[45] = 46000;
    SW_ASSERT_TRUE(steep_tail_of(lv, 46, &base));
    SW_ASSERT_I64(base, 44 * 100 * ms);
    /* Held, a collector gap (50-57) before the pause: across it the memory
     * rose by less than half a threshold (more than a steep step). */
    for (int i = 0; i < 61; i++) lv[i] = i < 10 ? 30000 : i < 50 ? 38000 : i < 58 ? -1 : 39000;
    lv[59] = 39020;
    lv[60] = 47020;
    SW_ASSERT_TRUE(steep_tail_of(lv, 61, &base));
    SW_ASSERT_I64(base, 59 * 100 * ms);
    /* The same step seen sample by sample is a rise that slowed: one rise. */
    for (int i = 50; i < 58; i++) lv[i] = 38000;
    SW_ASSERT_FALSE(steep_tail_of(lv, 61, &base));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order),
        cmocka_unit_test(test_late_and_duplicates),
        cmocka_unit_test(test_threshold_beyond_any_rise),
        cmocka_unit_test(test_pick_points),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_storage_follows_samples),
        cmocka_unit_test(test_steep_tail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
