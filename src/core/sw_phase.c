/*
 * Phase index (SPEC 5). Boundaries are kept per (session_id, rank) group
 * with interned strings; spans are rebuilt lazily, only for a group whose
 * boundaries changed since its last replay. Still-open spans end at the
 * group's session end, read at query time. Pure: no I/O, no globals.
 */
#include "sw_phase.h"

#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_imap.h"
#include "sw_intern.h"
#include "sw_varint.h"

typedef struct boundary_s {
    int64_t ts;
    int64_t sequence;
    int64_t thread_id;
    uint32_t scope;       /* interned scope_id */
    uint32_t thread_name; /* interned */
    uint32_t label;       /* interned path joined with " / " */
    uint32_t depth;       /* path elements */
    uint32_t arrival;     /* arrival order inside the group (stable sort) */
    bool enter;
} boundary_t;

typedef struct span_s {
    int64_t start;
    int64_t end; /* valid when closed */
    int64_t sequence;
    int64_t thread_id;
    uint32_t scope;
    uint32_t label;
    uint32_t thread_name;
    uint32_t depth;
    bool closed;
} span_t;

/* A (session, rank) group: its session end, and, once it has a
 * boundary, the boundaries and spans out of line (gext_t). A wide job's
 * ranks nearly all have a group and no boundary. */
typedef struct group_s {
    int64_t end_ts; /* session end: max timestamp of any event */
    int64_t rank;
    uint32_t sid; /* session, interned in ph->sess */
    uint32_t ext; /* index in ph->exts, NIL: no boundary yet */
} group_t;

typedef struct gext_s {
    boundary_t *b;
    size_t nb, capb;
    span_t *spans;
    size_t ns, caps;
    size_t fold_at; /* boundaries at which a fold is due */
    uint32_t group; /* its group */
    bool dirty;     /* spans must be rebuilt */
} gext_t;

#define NIL UINT32_MAX

struct sw_phase_s {
    sw_intern_t *strs; /* boundary strings (scopes, thread names, labels) */
    sw_intern_t *sess; /* sessions: own, or the caller's (sw_phase_new_shared) */
    bool sess_own;
    sw_hash_key_t key;
    uint32_t *slots; /* group map (session, rank): group index + 1, 0 = empty */
    size_t nslots;   /* power of two, or 0 */
    group_t *groups;
    size_t ngroups, capgroups;
    gext_t *exts;
    size_t nexts, capexts;
    size_t nboundaries;
    size_t dropped;   /* boundaries folded away since the last string compaction */
    size_t arr_bytes; /* the groups' boundary and span arrays, kept as they
                         grow (sw_phase_bytes is O(1)) */
    sw_buf_t tmp;
};

/* Room for one more boundary in @p g. */
static void b_room(sw_phase_t *ph, gext_t *g)
{
    if (g->nb < g->capb) return;
    size_t cap = g->capb ? g->capb * 2 : 8;
    g->b = sw_reallocarray(g->b, cap, sizeof(*g->b));
    ph->arr_bytes += (cap - g->capb) * sizeof(*g->b);
    g->capb = cap;
}

/* arr_bytes counted again. */
static void arr_recount(sw_phase_t *ph)
{
    size_t bytes = 0;
    for (size_t i = 0; i < ph->nexts; i++)
        bytes += ph->exts[i].capb * sizeof(*ph->exts[i].b) +
                 ph->exts[i].caps * sizeof(*ph->exts[i].spans);
    ph->arr_bytes = bytes;
}

/* A group is folded once it holds this many boundaries, and again each
 * time it doubles what the previous fold kept. */
#define FOLD_MIN 256

sw_phase_t *sw_phase_new(void)
{
    sw_hash_key_t zero = {0, 0};
    return sw_phase_new_keyed(zero);
}

sw_phase_t *sw_phase_new_keyed(sw_hash_key_t key)
{
    return sw_phase_new_shared(key, NULL);
}

sw_phase_t *sw_phase_new_shared(sw_hash_key_t key, sw_intern_t *sessions)
{
    sw_phase_t *ph = sw_calloc(1, sizeof(*ph));
    ph->key = key;
    ph->strs = sw_intern_new_keyed(key);
    ph->sess_own = sessions == NULL;
    ph->sess = sessions ? sessions : sw_intern_new_keyed(key);
    sw_buf_init(&ph->tmp);
    return ph;
}

void sw_phase_destroy(sw_phase_t *ph)
{
    if (!ph) return;
    for (size_t i = 0; i < ph->nexts; i++) {
        free(ph->exts[i].b);
        free(ph->exts[i].spans);
    }
    free(ph->exts);
    free(ph->groups);
    free(ph->slots);
    if (ph->sess_own) sw_intern_destroy(ph->sess);
    sw_intern_destroy(ph->strs);
    sw_buf_clear(&ph->tmp);
    free(ph);
}

/* Python's str.isspace() for one code point. */
static bool is_unicode_space(uint32_t cp)
{
    return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* True when s has a character that is not whitespace (str.strip() != ""). */
static bool str_nonblank(sw_str_t s)
{
    const unsigned char *p = (const unsigned char *)s.ptr;
    size_t i = 0;
    while (i < s.len) {
        uint32_t cp;
        unsigned char c = p[i];
        size_t n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
        if (i + n > s.len) return true;
        if (n == 1) cp = c;
        else if (n == 2) cp = ((uint32_t)(c & 0x1f) << 6) | (p[i + 1] & 0x3f);
        else if (n == 3)
            cp = ((uint32_t)(c & 0x0f) << 12) | ((uint32_t)(p[i + 1] & 0x3f) << 6) |
                 (p[i + 2] & 0x3f);
        else cp = 0x10000; /* no 4-byte whitespace */
        if (!is_unicode_space(cp)) return true;
        i += n;
    }
    return false;
}

bool sw_phase_boundary_ok(const sw_event_t *ev)
{
    if (ev->kind != SW_EV_PHASE_ENTER && ev->kind != SW_EV_PHASE_EXIT) return false;
    if (!ev->has_session_id || !ev->has_phase) return false;
    if (ev->phase.enter != (ev->kind == SW_EV_PHASE_ENTER)) return false;
    if (!str_nonblank(ev->phase.name)) return false;
    return ev->phase.path_len >= 1;
}

static inline size_t group_hash(const sw_phase_t *ph, uint32_t sid, int64_t rank)
{
    uint64_t x = ((uint64_t)rank ^ ph->key.k0) * 0x9e3779b97f4a7c15ULL + sid;
    x ^= x >> 32;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 29;
    return (size_t)x;
}

/* Index of the (sid, rank) group, NIL when absent. */
static uint32_t group_find(const sw_phase_t *ph, uint32_t sid, int64_t rank)
{
    if (!ph->nslots) return NIL;
    size_t mask = ph->nslots - 1;
    for (size_t i = group_hash(ph, sid, rank) & mask;; i = (i + 1) & mask) {
        uint32_t v = ph->slots[i];
        if (!v) return NIL;
        const group_t *g = &ph->groups[v - 1];
        if (g->sid == sid && g->rank == rank) return v - 1;
    }
}

static void slots_put(sw_phase_t *ph, uint32_t gi)
{
    size_t mask = ph->nslots - 1;
    size_t i = group_hash(ph, ph->groups[gi].sid, ph->groups[gi].rank) & mask;
    while (ph->slots[i]) i = (i + 1) & mask;
    ph->slots[i] = gi + 1;
}

/* Index of the (sid, rank) group, created when new. */
static uint32_t group_make(sw_phase_t *ph, uint32_t sid, int64_t rank)
{
    uint32_t gi = group_find(ph, sid, rank);
    if (gi != NIL) return gi;
    SW_GROW(ph->groups, ph->ngroups, ph->capgroups, 8);
    gi = (uint32_t)ph->ngroups++;
    group_t *g = &ph->groups[gi];
    g->end_ts = -1;
    g->rank = rank;
    g->sid = sid;
    g->ext = NIL;
    if (ph->ngroups * 2 > ph->nslots) {
        free(ph->slots);
        ph->nslots = ph->nslots ? ph->nslots * 2 : 8;
        ph->slots = sw_calloc(ph->nslots, sizeof(*ph->slots));
        for (uint32_t k = 0; k < ph->ngroups; k++) slots_put(ph, k);
    } else {
        slots_put(ph, gi);
    }
    return gi;
}

static group_t *group_get(sw_phase_t *ph, sw_str_t session, int64_t rank, bool create)
{
    uint32_t sid = create ? sw_intern_add(ph->sess, session) : sw_intern_find(ph->sess, session);
    if (!sid) return NULL;
    uint32_t gi = create ? group_make(ph, sid, rank) : group_find(ph, sid, rank);
    return gi == NIL ? NULL : &ph->groups[gi];
}

/* The boundaries of @p g, created (empty) when it has none. The pointer
 * is valid until the next call (the table may move). */
static gext_t *group_ext(sw_phase_t *ph, group_t *g)
{
    if (g->ext != NIL) return &ph->exts[g->ext];
    SW_GROW(ph->exts, ph->nexts, ph->capexts, 4);
    g->ext = (uint32_t)ph->nexts++;
    gext_t *x = &ph->exts[g->ext];
    memset(x, 0, sizeof(*x));
    x->fold_at = FOLD_MIN;
    x->group = (uint32_t)(g - ph->groups);
    return x;
}

/* The id of @p s: compared first with the strings of the group's last two
 * boundaries (@p field: offset of the id in boundary_t), hashed only when
 * neither matches. A rank's boundaries repeat their thread name and
 * alternate a few labels; an exit closes a recent enter's scope. */
static uint32_t intern_near(sw_phase_t *ph, const gext_t *g, size_t field, sw_str_t s)
{
    for (size_t k = 1; k <= 2 && k <= g->nb; k++) {
        uint32_t id;
        memcpy(&id, (const char *)&g->b[g->nb - k] + field, sizeof(id));
        sw_str_t t = sw_intern_get(ph->strs, id);
        if (t.len == s.len && sw_bytes_eq(t.ptr, s.ptr, s.len)) return id;
    }
    return sw_intern_add(ph->strs, s);
}

uint32_t sw_phase_group(sw_phase_t *ph, sw_str_t session, int64_t rank)
{
    return group_make(ph, sw_intern_add(ph->sess, session), rank);
}

uint32_t sw_phase_group_sid(sw_phase_t *ph, uint32_t session, int64_t rank)
{
    return group_make(ph, session, rank);
}

uint32_t sw_phase_find_sid(const sw_phase_t *ph, uint32_t session, int64_t rank)
{
    return group_find(ph, session, rank);
}

void sw_phase_touch(sw_phase_t *ph, uint32_t group, int64_t ts_ns)
{
    group_t *g = &ph->groups[group];
    if (ts_ns > g->end_ts) g->end_ts = ts_ns;
}

const void *sw_phase_group_addr(const sw_phase_t *ph, uint32_t group)
{
    return &ph->groups[group];
}

/* sw_phase_add() of @p ev to its group @p g. */
static void group_add(sw_phase_t *ph, group_t *grp, const sw_event_t *ev)
{
    if (ev->timestamp_ns > grp->end_ts) grp->end_ts = ev->timestamp_ns;
    if (!sw_phase_boundary_ok(ev)) return;
    gext_t *g = group_ext(ph, grp);

    const sw_phase_scope_t *ps = &ev->phase;
    ph->tmp.len = 0;
    for (int i = 0; i < ps->path_len; i++) {
        if (i) sw_buf_put(&ph->tmp, " / ", 3);
        sw_buf_put(&ph->tmp, ps->path[i].ptr, ps->path[i].len);
    }
    sw_str_t label = {ph->tmp.data, ph->tmp.len};

    uint32_t scope = intern_near(ph, g, offsetof(boundary_t, scope), ps->scope_id);
    uint32_t thread_name = intern_near(ph, g, offsetof(boundary_t, thread_name), ps->thread_name);
    uint32_t label_id = intern_near(ph, g, offsetof(boundary_t, label), label);
    b_room(ph, g);
    boundary_t *b = &g->b[g->nb];
    b->ts = ev->timestamp_ns;
    b->sequence = ps->sequence;
    b->thread_id = ps->thread_id;
    b->scope = scope;
    b->thread_name = thread_name;
    b->label = label_id;
    b->depth = (uint32_t)ps->path_len;
    b->arrival = (uint32_t)g->nb;
    b->enter = ps->enter;
    g->nb++;
    g->dirty = true;
    ph->nboundaries++;
}

void sw_phase_add(sw_phase_t *ph, const sw_event_t *ev)
{
    if (!ev->has_session_id) return;
    group_add(ph, group_get(ph, ev->session_id, ev->rank, true), ev);
}

void sw_phase_add_to(sw_phase_t *ph, uint32_t group, const sw_event_t *ev)
{
    group_add(ph, &ph->groups[group], ev);
}

/* Boundaries sort by (timestamp, sequence, scope_id, arrival): SPEC 5. */
static int boundary_cmp(const boundary_t *a, const boundary_t *b, const sw_intern_t *strs)
{
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    if (a->sequence != b->sequence) return a->sequence < b->sequence ? -1 : 1;
    if (a->scope != b->scope) {
        int c = sw_str_cmp(sw_intern_get(strs, a->scope), sw_intern_get(strs, b->scope));
        if (c) return c;
    }
    return a->arrival < b->arrival ? -1 : a->arrival > b->arrival;
}

/* Insertion sort: boundaries nearly always arrive in order. Falls back to
 * a merge sort when the data is badly out of order. */
static void boundaries_sort(boundary_t *v, size_t n, const sw_intern_t *strs)
{
    size_t moves = 0;
    for (size_t i = 1; i < n; i++) {
        boundary_t x = v[i];
        size_t j = i;
        while (j > 0 && boundary_cmp(&v[j - 1], &x, strs) > 0) {
            v[j] = v[j - 1];
            j--;
            if (++moves > 8 * n + 64) break;
        }
        v[j] = x;
        if (moves > 8 * n + 64) {
            /* Bottom-up merge sort of the whole array. */
            boundary_t *tmp = sw_malloc(n * sizeof(*tmp));
            for (size_t width = 1; width < n; width *= 2) {
                for (size_t lo = 0; lo < n; lo += 2 * width) {
                    size_t mid = lo + width < n ? lo + width : n;
                    size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
                    size_t a = lo, b = mid, k = lo;
                    while (a < mid && b < hi)
                        tmp[k++] = boundary_cmp(&v[b], &v[a], strs) < 0 ? v[b++] : v[a++];
                    while (a < mid) tmp[k++] = v[a++];
                    while (b < hi) tmp[k++] = v[b++];
                }
                memcpy(v, tmp, n * sizeof(*v));
            }
            free(tmp);
            return;
        }
    }
}

typedef struct stack_s {
    int64_t thread_id;
    size_t *items; /* boundary indices */
    size_t n, cap;
} stack_t;

static void span_push(gext_t *g, const span_t *s)
{
    if (g->ns == g->caps) {
        g->caps = g->caps ? g->caps * 2 : 8;
        g->spans = sw_reallocarray(g->spans, g->caps, sizeof(*g->spans));
    }
    g->spans[g->ns++] = *s;
}

/* Replay the sorted boundaries through one stack per thread (SPEC 5). */
static void group_rebuild(sw_phase_t *ph, gext_t *g)
{
    boundaries_sort(g->b, g->nb, ph->strs);
    for (size_t i = 0; i < g->nb; i++) g->b[i].arrival = (uint32_t)i;
    g->ns = 0;
    stack_t *stacks = NULL;
    size_t nstacks = 0, capstacks = 0;
    sw_imap_t by_thread;
    sw_imap_init(&by_thread);
    for (size_t i = 0; i < g->nb; i++) {
        const boundary_t *b = &g->b[i];
        uint32_t si;
        if (!sw_imap_get(&by_thread, b->thread_id, &si)) {
            if (!b->enter) continue; /* exit on an empty stack: ignored */
            if (nstacks == capstacks) {
                capstacks = capstacks ? capstacks * 2 : 4;
                stacks = sw_reallocarray(stacks, capstacks, sizeof(*stacks));
            }
            si = (uint32_t)nstacks++;
            memset(&stacks[si], 0, sizeof(stacks[si]));
            stacks[si].thread_id = b->thread_id;
            sw_imap_put(&by_thread, b->thread_id, si);
        }
        stack_t *st = &stacks[si];
        if (b->enter) {
            SW_GROW(st->items, st->n, st->cap, 8);
            st->items[st->n++] = i;
            continue;
        }
        if (st->n == 0 || g->b[st->items[st->n - 1]].scope != b->scope) continue;
        const boundary_t *e = &g->b[st->items[--st->n]];
        span_t s = {e->ts,    b->ts,          e->sequence, e->thread_id, e->scope,
                    e->label, b->thread_name, e->depth,    true};
        span_push(g, &s);
    }
    for (size_t k = 0; k < nstacks; k++) {
        for (size_t j = 0; j < stacks[k].n; j++) {
            const boundary_t *e = &g->b[stacks[k].items[j]];
            span_t s = {e->ts,          0,        e->sequence, e->thread_id, e->scope, e->label,
                        e->thread_name, e->depth, false};
            span_push(g, &s);
        }
        free(stacks[k].items);
    }
    free(stacks);
    sw_imap_clear(&by_thread);
    g->dirty = false;
}

/* (sequence, scope_id) order used to pick among spans. */
static int span_rank_cmp(const sw_phase_t *ph, const span_t *a, const span_t *b)
{
    if (a->sequence != b->sequence) return a->sequence < b->sequence ? -1 : 1;
    if (a->scope == b->scope) return 0;
    return sw_str_cmp(sw_intern_get(ph->strs, a->scope), sw_intern_get(ph->strs, b->scope));
}

typedef struct thread_acc_s {
    int64_t thread_id;
    uint32_t depth;     /* deepest depth */
    uint32_t label;     /* label of the deepest spans (first seen) */
    bool ambiguous;     /* deepest spans carry several labels */
    const span_t *best; /* deepest span with the largest (sequence, scope) */
} thread_acc_t;

static int label_cmp(const void *a, const void *b)
{
    return sw_str_cmp(*(const sw_str_t *)a, *(const sw_str_t *)b);
}

void sw_phase_resolve(sw_phase_t *ph, sw_str_t session, int64_t rank, int64_t ts_ns,
                      sw_arena_t *arena, sw_phase_attr_t *out)
{
    memset(out, 0, sizeof(*out));
    out->resolution = SW_PHASE_NONE;
    const group_t *grp = group_get(ph, session, rank, false);
    if (!grp || grp->ext == NIL || ph->exts[grp->ext].nb == 0) return;
    gext_t *g = &ph->exts[grp->ext];
    int64_t end_ts = grp->end_ts;
    if (g->dirty) {
        size_t caps = g->caps;
        group_rebuild(ph, g);
        ph->arr_bytes += (g->caps - caps) * sizeof(*g->spans);
    }

    /* Per thread: the deepest active spans. */
    thread_acc_t *acc = NULL;
    size_t nacc = 0, capacc = 0;
    const span_t *top = NULL; /* active span with the largest (sequence, scope) */
    for (size_t i = 0; i < g->ns; i++) {
        const span_t *s = &g->spans[i];
        int64_t end = s->closed ? s->end : end_ts;
        if (!(s->start <= ts_ns && ts_ns <= end)) continue;
        if (!top || span_rank_cmp(ph, s, top) > 0) top = s;
        size_t k;
        for (k = 0; k < nacc; k++)
            if (acc[k].thread_id == s->thread_id) break;
        if (k == nacc) {
            if (nacc == capacc) {
                capacc = capacc ? capacc * 2 : 4;
                acc = sw_reallocarray(acc, capacc, sizeof(*acc));
            }
            acc[nacc].thread_id = s->thread_id;
            acc[nacc].depth = s->depth;
            acc[nacc].label = s->label;
            acc[nacc].ambiguous = false;
            acc[nacc].best = s;
            nacc++;
            continue;
        }
        thread_acc_t *t = &acc[k];
        if (s->depth > t->depth) {
            t->depth = s->depth;
            t->label = s->label;
            t->ambiguous = false;
            t->best = s;
        } else if (s->depth == t->depth) {
            if (s->label != t->label) t->ambiguous = true;
            if (span_rank_cmp(ph, s, t->best) > 0) t->best = s;
        }
    }
    if (nacc == 0) {
        free(acc);
        return;
    }

    /* Distinct labels of the deepest spans of every thread, sorted. A
     * thread's deepest spans are re-scanned for their labels only when the
     * thread is ambiguous. */
    size_t capl = 0, nl = 0, nmatch = 0;
    bool any_ambiguous = false;
    for (size_t k = 0; k < nacc; k++) capl += acc[k].ambiguous ? g->ns : 1;
    uint32_t *ids = sw_malloc(capl * sizeof(*ids));
    for (size_t k = 0; k < nacc; k++) {
        if (!acc[k].ambiguous) {
            ids[nl++] = acc[k].label;
            nmatch++;
            continue;
        }
        any_ambiguous = true;
        for (size_t i = 0; i < g->ns; i++) {
            const span_t *s = &g->spans[i];
            int64_t end = s->closed ? s->end : end_ts;
            if (s->thread_id == acc[k].thread_id && s->depth == acc[k].depth && s->start <= ts_ns &&
                ts_ns <= end)
                ids[nl++] = s->label;
        }
    }
    sw_str_t *labels = sw_arena_alloc(arena, nl * sizeof(*labels));
    size_t nd = 0;
    for (size_t i = 0; i < nl; i++) {
        bool dup = false;
        for (size_t j = 0; j < i && !dup; j++) dup = ids[j] == ids[i];
        if (!dup) labels[nd++] = sw_intern_get(ph->strs, ids[i]);
    }
    free(ids);
    qsort(labels, nd, sizeof(*labels), label_cmp);

    if (any_ambiguous || nmatch != 1) {
        out->resolution = SW_PHASE_AMBIGUOUS;
        out->paths = labels;
        out->n_paths = nd;
        if (nd >= 2) {
            out->has_summary = true;
            out->summary_path = sw_intern_get(ph->strs, top->label);
        }
    } else {
        const span_t *m = acc[0].best;
        out->resolution = SW_PHASE_UNIQUE;
        out->paths = labels;
        out->n_paths = nd;
        out->path = sw_intern_get(ph->strs, m->label);
        out->scope_id = sw_intern_get(ph->strs, m->scope);
        out->thread_id = m->thread_id;
        out->thread_name = sw_intern_get(ph->strs, m->thread_name);
    }
    free(acc);
}

bool sw_phase_fold_due(const sw_phase_t *ph, uint32_t group)
{
    uint32_t x = ph->groups[group].ext;
    return x != NIL && ph->exts[x].nb >= ph->exts[x].fold_at;
}

/* Fold one group at the horizon (see sw_phase_fold). */
static size_t group_fold(sw_phase_t *ph, gext_t *g, int64_t horizon)
{
    boundaries_sort(g->b, g->nb, ph->strs);
    size_t prefix = 0;
    while (prefix < g->nb && g->b[prefix].ts < horizon) prefix++;
    if (prefix == 0) return 0;
    /* Replay the prefix through the per-thread stacks; keep[i] marks the
     * enters still open at its end. */
    bool *keep = sw_calloc(prefix, sizeof(*keep));
    size_t *stack = sw_malloc(prefix * sizeof(*stack));
    int64_t *stack_thread = sw_malloc(prefix * sizeof(*stack_thread));
    size_t depth = 0;
    for (size_t i = 0; i < prefix; i++) {
        const boundary_t *b = &g->b[i];
        if (b->enter) {
            stack_thread[depth] = b->thread_id;
            stack[depth++] = i;
            keep[i] = true;
            continue;
        }
        /* The top of b's thread's stack: the last open enter of that thread. */
        size_t k = depth;
        while (k > 0 && stack_thread[k - 1] != b->thread_id) k--;
        if (k == 0 || g->b[stack[k - 1]].scope != b->scope) continue;
        keep[stack[k - 1]] = false;
        memmove(&stack[k - 1], &stack[k], (depth - k) * sizeof(*stack));
        memmove(&stack_thread[k - 1], &stack_thread[k], (depth - k) * sizeof(*stack_thread));
        depth--;
    }
    size_t w = 0;
    for (size_t i = 0; i < g->nb; i++)
        if (i >= prefix || keep[i]) g->b[w++] = g->b[i];
    free(keep);
    free(stack);
    free(stack_thread);
    size_t dropped = g->nb - w;
    g->nb = w;
    for (size_t i = 0; i < g->nb; i++) g->b[i].arrival = (uint32_t)i;
    g->dirty = true;
    return dropped;
}

/* Re-intern every boundary string still referenced into a fresh table
 * (sessions have their own table). */
static void compact_strings(sw_phase_t *ph)
{
    sw_intern_t *nt = sw_intern_new_keyed(sw_intern_key(ph->strs));
    for (size_t xi = 0; xi < ph->nexts; xi++) {
        gext_t *g = &ph->exts[xi];
        for (size_t i = 0; i < g->nb; i++) {
            boundary_t *b = &g->b[i];
            b->scope = sw_intern_add(nt, sw_intern_get(ph->strs, b->scope));
            b->thread_name = sw_intern_add(nt, sw_intern_get(ph->strs, b->thread_name));
            b->label = sw_intern_add(nt, sw_intern_get(ph->strs, b->label));
        }
        g->dirty = true;
    }
    sw_intern_destroy(ph->strs);
    ph->strs = nt;
    ph->dropped = 0;
}

size_t sw_phase_fold(sw_phase_t *ph, int64_t rank, int64_t horizon_ns)
{
    size_t dropped = 0;
    for (size_t xi = 0; xi < ph->nexts; xi++) {
        gext_t *g = &ph->exts[xi];
        if (ph->groups[g->group].rank != rank) continue;
        dropped += group_fold(ph, g, horizon_ns);
        g->fold_at = g->nb * 2 > FOLD_MIN ? g->nb * 2 : FOLD_MIN;
    }
    ph->nboundaries -= dropped;
    ph->dropped += dropped;
    if (ph->dropped > 4096 && ph->dropped > ph->nboundaries) {
        compact_strings(ph);
        arr_recount(ph);
    }
    return dropped;
}

void sw_phase_save(const sw_phase_t *ph, sw_buf_t *out)
{
    sw_phase_save_with(ph, NULL, 0, out);
}

void sw_phase_save_with(const sw_phase_t *ph, const sw_phase_pend_t *more, size_t n, sw_buf_t *out)
{
    /* Groups in creation order, then the caller's (a restored index
     * creates them in this order, so it saves the same bytes). */
    sw_vput_u(out, ph->ngroups + n);
    for (size_t gi = 0; gi < ph->ngroups; gi++) {
        const group_t *grp = &ph->groups[gi];
        const gext_t *g = grp->ext == NIL ? NULL : &ph->exts[grp->ext];
        size_t nb = g ? g->nb : 0;
        sw_vput_bytes(out, sw_intern_get(ph->sess, grp->sid));
        sw_vput_i(out, grp->rank);
        sw_vput_i(out, grp->end_ts);
        sw_vput_u(out, nb);
        for (size_t i = 0; i < nb; i++) {
            const boundary_t *b = &g->b[i];
            sw_vput_i(out, b->ts);
            sw_vput_i(out, b->sequence);
            sw_vput_i(out, b->thread_id);
            sw_vput_bytes(out, sw_intern_get(ph->strs, b->scope));
            sw_vput_bytes(out, sw_intern_get(ph->strs, b->thread_name));
            sw_vput_bytes(out, sw_intern_get(ph->strs, b->label));
            sw_vput_u(out, b->depth);
            sw_vput_u(out, b->arrival);
            sw_vput_u(out, b->enter);
        }
    }
    for (size_t i = 0; i < n; i++) {
        sw_vput_bytes(out, sw_intern_get(ph->sess, more[i].session));
        sw_vput_i(out, more[i].rank);
        sw_vput_i(out, more[i].end_ts > -1 ? more[i].end_ts : -1); /* as sw_phase_touch() */
        sw_vput_u(out, 0);
    }
}

/* Strings as the decoders give them: UTF-8, lone surrogates allowed. */
static bool wtf8(sw_str_t s)
{
    return sw_utf8_bad_at(s.ptr, s.len, true) == s.len;
}

bool sw_phase_load(sw_phase_t *ph, const uint8_t **data, const uint8_t *end)
{
    sw_vrd_t r = {*data, end, false};
    uint64_t ng = sw_vget_u(&r);
    for (uint64_t gi = 0; gi < ng && !r.bad; gi++) {
        sw_str_t session = sw_vget_bytes(&r);
        int64_t rank = sw_vget_i(&r);
        int64_t end_ts = sw_vget_i(&r);
        uint64_t nb = sw_vget_u(&r);
        if (r.bad || nb > (uint64_t)(r.end - r.p) || rank < 0 || !wtf8(session)) return false;
        group_t *grp = group_get(ph, session, rank, true);
        grp->end_ts = end_ts;
        if (!nb) continue;
        gext_t *g = group_ext(ph, grp);
        for (uint64_t i = 0; i < nb && !r.bad; i++) {
            b_room(ph, g);
            boundary_t *b = &g->b[g->nb];
            b->ts = sw_vget_i(&r);
            b->sequence = sw_vget_i(&r);
            b->thread_id = sw_vget_i(&r);
            sw_str_t scope = sw_vget_bytes(&r), tname = sw_vget_bytes(&r),
                     label = sw_vget_bytes(&r);
            uint64_t depth = sw_vget_u(&r), arrival = sw_vget_u(&r), enter = sw_vget_u(&r);
            if (r.bad || !wtf8(scope) || !wtf8(tname) || !wtf8(label) || depth < 1 ||
                depth > SW_PHASE_PATH_MAX || arrival > UINT32_MAX || enter > 1)
                return false;
            b->scope = sw_intern_add(ph->strs, scope);
            b->thread_name = sw_intern_add(ph->strs, tname);
            b->label = sw_intern_add(ph->strs, label);
            b->depth = (uint32_t)depth;
            b->arrival = (uint32_t)arrival;
            b->enter = enter != 0;
            g->nb++;
            ph->nboundaries++;
        }
        g->dirty = true;
        if (g->nb * 2 > g->fold_at) g->fold_at = g->nb * 2;
    }
    if (r.bad) return false;
    *data = r.p;
    return true;
}

size_t sw_phase_boundaries(const sw_phase_t *ph)
{
    return ph->nboundaries;
}

size_t sw_phase_bytes(const sw_phase_t *ph)
{
    return sizeof(*ph) + sw_intern_bytes(ph->strs) +
           (ph->sess_own ? sw_intern_bytes(ph->sess) : 0) + ph->capgroups * sizeof(group_t) +
           ph->nslots * sizeof(*ph->slots) + ph->capexts * sizeof(gext_t) + ph->arr_bytes;
}
