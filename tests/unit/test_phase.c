/*
 * The phase index (sw_phase_*, SPEC 5). Each case is a script of
 * operations on one index: add a phase boundary, a sample or another
 * event, or query the attribution of (session, rank, timestamp) and
 * compare it, as JSON (single quotes for double quotes), with the
 * expected attribution. Queries may sit between additions: the index must
 * see events added after an earlier query. A failure names the case, the
 * step and the first differing value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_arena.h"
#include "sw_phase.h"
#include "sw_testlib.h"

/* One step of a script. */
typedef struct pop_s {
    char op; /* E enter, X exit, M exit event with action "enter",
                          * S sample, O other event, Q query, END */
    int64_t ts;
    const char *session; /* NULL: null session_id */
    int64_t rank;
    int64_t tid;
    const char *scope;
    int64_t seq;
    const char *path; /* path elements separated by '/' */
    const char *tname;
    const char *name; /* phase name (NULL: "n") */
    const char *want; /* Q: expected attribution */
} pop_t;

#define ENTER(ts, tid, scope, seq, path, tname)                   \
    {                                                             \
        'E', ts, "s", 0, tid, scope, seq, path, tname, NULL, NULL \
    }
#define EXIT(ts, tid, scope, seq, path, tname)                    \
    {                                                             \
        'X', ts, "s", 0, tid, scope, seq, path, tname, NULL, NULL \
    }
#define ENTER_AT(sess, rank, ts, tid, scope, seq, path)             \
    {                                                               \
        'E', ts, sess, rank, tid, scope, seq, path, "T", NULL, NULL \
    }
#define SAMPLE(sess, rank, ts)                                  \
    {                                                           \
        'S', ts, sess, rank, 0, NULL, 0, NULL, NULL, NULL, NULL \
    }
#define OTHER(sess, rank, ts)                                   \
    {                                                           \
        'O', ts, sess, rank, 0, NULL, 0, NULL, NULL, NULL, NULL \
    }
#define Q(ts, want)                                         \
    {                                                       \
        'Q', ts, "s", 0, 0, NULL, 0, NULL, NULL, NULL, want \
    }
#define QAT(sess, rank, ts, want)                               \
    {                                                           \
        'Q', ts, sess, rank, 0, NULL, 0, NULL, NULL, NULL, want \
    }
#define END                                               \
    {                                                     \
        0, 0, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, NULL \
    }

/* Expected attributions. */
#define UNIQUE(label, scope, tid, tname)                                     \
    "{'phase_resolution': 'unique', 'phase_paths': ['" label                 \
    "'], 'phase_source': 'heuristic',"                                       \
    " 'phase_path': '" label "', 'scope_id': '" scope "', 'thread_id': " tid \
    ", 'thread_name': '" tname "'}"
#define AMBIGUOUS(paths) "{'phase_resolution': 'ambiguous', 'phase_paths': [" paths "]}"
#define AMBIGUOUS_S(paths, summary)                            \
    "{'phase_resolution': 'ambiguous', 'phase_paths': [" paths \
    "], 'phase_summary':"                                      \
    " {'phase_path': '" summary "', 'source': 'heuristic'}}"

typedef struct phase_case_s {
    const char *name;
    pop_t ops[20];
    int want_boundaries; /* boundaries the index records */
} phase_case_t;

static const phase_case_t k_cases[] = {
    {"unique span: inclusive bounds, path of the enter, thread name of the exit",
     {ENTER(10, 1, "A", 1, "train/fwd", "main"), EXIT(20, 1, "A", 2, "zzz", "main-exit"),
      Q(9, "null"), Q(10, UNIQUE("train / fwd", "A", "1", "main-exit")),
      Q(15, UNIQUE("train / fwd", "A", "1", "main-exit")),
      Q(20, UNIQUE("train / fwd", "A", "1", "main-exit")), Q(21, "null"), END},
     2},
    {"another rank or session: no attribution",
     {ENTER(10, 1, "A", 1, "a", "T"), EXIT(20, 1, "A", 2, "a", "T"), SAMPLE("t", 0, 15),
      SAMPLE("s", 1, 15), QAT("s", 1, 15, "null"), QAT("t", 0, 15, "null"), QAT("", 0, 15, "null"),
      QAT("s", 0, 15, UNIQUE("a", "A", "1", "T")), END},
     2},
    {"label joins the path with ' / '",
     {ENTER(0, 7, "A", 1, "train/fwd/attn", "T"), SAMPLE("s", 0, 10),
      Q(5, UNIQUE("train / fwd / attn", "A", "7", "T")), END},
     1},
    {"two threads, one span each: ambiguous, sorted paths, summary of the largest sequence",
     {ENTER(0, 1, "s1", 5, "z", "T1"), ENTER(0, 2, "s2", 2, "b", "T2"), SAMPLE("s", 0, 100),
      Q(50, AMBIGUOUS_S("'b', 'z'", "z")), END},
     2},
    {"summary: equal sequence, the larger scope_id as a string ('s9' > 's10')",
     {ENTER(0, 1, "s9", 3, "a", "T1"), ENTER(0, 2, "s10", 3, "b", "T2"), SAMPLE("s", 0, 100),
      Q(50, AMBIGUOUS_S("'a', 'b'", "a")), END},
     2},
    {"two threads with the same label: ambiguous without a summary",
     {ENTER(0, 1, "x1", 1, "fwd", "T1"), ENTER(0, 2, "x2", 2, "fwd", "T2"), SAMPLE("s", 0, 100),
      Q(50, AMBIGUOUS("'fwd'")), END},
     2},
    {"one thread, two deepest spans with different labels: ambiguous",
     {ENTER(0, 1, "A", 5, "x/a", "T"), ENTER(10, 1, "B", 2, "x/b", "T"), SAMPLE("s", 0, 100),
      Q(5, UNIQUE("x / a", "A", "1", "T")), Q(50, AMBIGUOUS_S("'x / a', 'x / b'", "x / a")), END},
     2},
    {"one thread, the same label twice: unique, the largest sequence",
     {ENTER(0, 1, "A", 1, "x", "T"), ENTER(10, 1, "B", 2, "x", "T"), EXIT(30, 1, "B", 3, "x", "TB"),
      SAMPLE("s", 0, 100), Q(20, UNIQUE("x", "B", "1", "TB")), Q(40, UNIQUE("x", "A", "1", "T")),
      END},
     3},
    {"one thread, the same label and sequence: the larger scope_id",
     {ENTER(0, 1, "b", 7, "x", "Tb"), ENTER(0, 1, "a", 7, "x", "Ta"), SAMPLE("s", 0, 100),
      Q(50, UNIQUE("x", "b", "1", "Tb")), END},
     2},
    {"the deeper span wins on its thread",
     {ENTER(0, 1, "O", 1, "train", "T"), ENTER(10, 1, "I", 2, "train/fwd", "T"),
      EXIT(20, 1, "I", 3, "train/fwd", "TI"), EXIT(30, 1, "O", 4, "train", "TO"),
      Q(10, UNIQUE("train / fwd", "I", "1", "TI")), Q(15, UNIQUE("train / fwd", "I", "1", "TI")),
      Q(25, UNIQUE("train", "O", "1", "TO")), Q(30, UNIQUE("train", "O", "1", "TO")), Q(31, "null"),
      END},
     4},
    {"deepest per thread; the summary comes from any active span",
     {ENTER(0, 1, "X", 9, "x", "T1"), ENTER(0, 1, "XY", 2, "x/y", "T1"),
      ENTER(0, 2, "Q", 3, "q", "T2"), SAMPLE("s", 0, 100), Q(50, AMBIGUOUS_S("'q', 'x / y'", "x")),
      END},
     3},
    {"an exit pops only the matching scope_id on the same thread",
     {ENTER(0, 1, "A", 1, "a", "T"), EXIT(5, 1, "B", 2, "b", "TB"), EXIT(6, 2, "A", 3, "a", "T2"),
      EXIT(10, 1, "A", 4, "a", "TX"), SAMPLE("s", 0, 50), Q(8, UNIQUE("a", "A", "1", "TX")),
      Q(12, "null"), END},
     4},
    {"a mismatched exit leaves the inner span open",
     {ENTER(0, 1, "A", 1, "a", "T"), ENTER(1, 1, "B", 2, "a/b", "T"), EXIT(5, 1, "A", 3, "a", "TA"),
      SAMPLE("s", 0, 50), Q(40, UNIQUE("a / b", "B", "1", "T")), END},
     3},
    {"an exit without an enter is ignored",
     {EXIT(5, 1, "C", 1, "c", "T"), ENTER(6, 1, "D", 2, "d", "TD"), SAMPLE("s", 0, 20),
      Q(5, "null"), Q(10, UNIQUE("d", "D", "1", "TD")), END},
     2},
    {"open spans end at the latest event of the (session, rank), any type, added later too",
     {ENTER(0, 1, "A", 1, "a", "T"), SAMPLE("s", 0, 50), SAMPLE("s", 1, 70), SAMPLE("t", 0, 90),
      OTHER("s", 0, 55), OTHER(NULL, 0, 95), Q(55, UNIQUE("a", "A", "1", "T")), Q(56, "null"),
      SAMPLE("s", 0, 80), Q(75, UNIQUE("a", "A", "1", "T")), Q(80, UNIQUE("a", "A", "1", "T")),
      Q(81, "null"), END},
     1},
    {"an open span with no later event ends at its own enter",
     {ENTER(10, 1, "A", 1, "a", "T"), Q(10, UNIQUE("a", "A", "1", "T")), Q(11, "null"), END},
     1},
    {"boundaries sorted by timestamp, not arrival",
     {EXIT(10, 1, "A", 2, "a", "TX"), ENTER(0, 1, "A", 1, "a", "T"), SAMPLE("s", 0, 20),
      Q(5, UNIQUE("a", "A", "1", "TX")), Q(15, "null"), END},
     2},
    {"equal timestamps: sequence orders the boundaries",
     {ENTER(5, 1, "A", 2, "a", "T"), EXIT(5, 1, "A", 1, "a", "TX"), SAMPLE("s", 0, 10),
      Q(8, UNIQUE("a", "A", "1", "T")), END},
     2},
    {"equal timestamps and sequences: scope_id orders the boundaries",
     {ENTER(5, 1, "b", 1, "pb", "T"), ENTER(5, 1, "a", 1, "pa", "T"),
      EXIT(10, 1, "b", 2, "pb", "TX"), SAMPLE("s", 0, 20), Q(12, UNIQUE("pa", "a", "1", "T")),
      Q(7, AMBIGUOUS_S("'pa', 'pb'", "pb")), END},
     3},
    {"boundaries added after a query change the next answer",
     {ENTER(0, 1, "A", 1, "a", "T"), SAMPLE("s", 0, 100), Q(50, UNIQUE("a", "A", "1", "T")),
      ENTER(40, 1, "B", 2, "a/b", "T"), Q(50, UNIQUE("a / b", "B", "1", "T")),
      EXIT(45, 1, "B", 3, "a/b", "TB"), Q(50, UNIQUE("a", "A", "1", "T")),
      Q(45, UNIQUE("a / b", "B", "1", "TB")), END},
     3},
    {"null session, mismatched action and blank name are not boundaries",
     {{'E', 0, NULL, 0, 1, "N", 1, "a", "T", NULL, NULL},
      {'M', 1, "s", 0, 1, "A", 2, "a", "T", NULL, NULL},
      {'E', 2, "s", 0, 1, "W", 3, "w", "T", "\xe3\x80\x80\t", NULL},
      SAMPLE("s", 0, 10),
      Q(5, "null"),
      END},
     0},
    {"groups are per rank within a session",
     {ENTER_AT("s", 0, 0, 1, "A", 1, "zero"), ENTER_AT("s", 1, 0, 1, "A", 1, "one"),
      SAMPLE("s", 0, 10), SAMPLE("s", 1, 20), QAT("s", 0, 15, "null"),
      QAT("s", 1, 15, UNIQUE("one", "A", "1", "T")), QAT("s", 0, 5, UNIQUE("zero", "A", "1", "T")),
      END},
     2},
};

/* ---- building events -------------------------------------------------- */

static void make_event(const pop_t *o, sw_event_t *ev)
{
    memset(ev, 0, sizeof(*ev));
    ev->timestamp_ns = o->ts;
    ev->rank = o->rank;
    ev->world_size = o->rank + 1;
    ev->pid = -1;
    ev->host = sw_str("h");
    ev->metadata_json = sw_str("{}");
    ev->has_session_id = o->session != NULL;
    if (o->session) ev->session_id = sw_str(o->session);
    switch (o->op) {
    case 'S':
        ev->event_type = sw_str("sample");
        ev->kind = SW_EV_SAMPLE;
        ev->has_device_used = true;
        ev->device_used_bytes = 1;
        return;
    case 'O':
        ev->event_type = sw_str("oom");
        ev->kind = SW_EV_OTHER;
        return;
    default: break;
    }
    bool enter_kind = o->op == 'E';
    ev->event_type = sw_str(enter_kind ? "phase_enter" : "phase_exit");
    ev->kind = enter_kind ? SW_EV_PHASE_ENTER : SW_EV_PHASE_EXIT;
    ev->has_phase = true;
    sw_phase_scope_t *ps = &ev->phase;
    ps->enter = o->op == 'E' || o->op == 'M';
    ps->name = sw_str(o->name ? o->name : "n");
    const char *p = o->path;
    while (*p && ps->path_len < SW_PHASE_PATH_MAX) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        ps->path[ps->path_len].ptr = p;
        ps->path[ps->path_len].len = len;
        ps->path_len++;
        p = slash ? slash + 1 : p + len;
    }
    ps->scope_id = sw_str(o->scope);
    ps->thread_id = o->tid;
    ps->thread_name = sw_str(o->tname);
    ps->sequence = o->seq;
}

/* ---- the attribution as JSON -------------------------------------------- */

static json_t *jstr(sw_str_t s)
{
    return json_stringn_nocheck(s.ptr ? s.ptr : "", s.len);
}

static json_t *render_attr(const sw_phase_attr_t *a)
{
    if (a->resolution == SW_PHASE_NONE) return json_null();
    json_t *o = json_object();
    json_t *paths = json_array();
    for (size_t i = 0; i < a->n_paths; i++) json_array_append_new(paths, jstr(a->paths[i]));
    if (a->resolution == SW_PHASE_UNIQUE) {
        json_object_set_new(o, "phase_resolution", json_string("unique"));
        json_object_set_new(o, "phase_paths", paths);
        json_object_set_new(o, "phase_source", json_string("heuristic"));
        json_object_set_new(o, "phase_path", jstr(a->path));
        json_object_set_new(o, "scope_id", jstr(a->scope_id));
        json_object_set_new(o, "thread_id", json_integer(a->thread_id));
        json_object_set_new(o, "thread_name", jstr(a->thread_name));
        return o;
    }
    json_object_set_new(o, "phase_resolution", json_string("ambiguous"));
    json_object_set_new(o, "phase_paths", paths);
    if (a->has_summary) {
        json_t *s = json_object();
        json_object_set_new(s, "phase_path", jstr(a->summary_path));
        json_object_set_new(s, "source", json_string("heuristic"));
        json_object_set_new(o, "phase_summary", s);
    }
    return o;
}

static json_t *parse_quoted(const char *text)
{
    size_t n = strlen(text);
    char *t = malloc(n + 1);
    for (size_t i = 0; i <= n; i++) t[i] = text[i] == '\'' ? '"' : text[i];
    json_error_t err;
    json_t *v = json_loads(t, JSON_DECODE_ANY, &err);
    free(t);
    return v;
}

static void run_case(const phase_case_t *c)
{
    sw_check_case("%s", c->name);
    sw_phase_t *ph = sw_phase_new();
    sw_arena_t arena;
    sw_arena_init(&arena);
    int nq = 0;
    for (size_t i = 0; i < sizeof(c->ops) / sizeof(c->ops[0]) && c->ops[i].op; i++) {
        const pop_t *o = &c->ops[i];
        if (o->op != 'Q') {
            sw_event_t ev;
            make_event(o, &ev);
            sw_phase_add(ph, &ev);
            continue;
        }
        nq++;
        sw_phase_attr_t attr;
        sw_arena_reset(&arena);
        sw_phase_resolve(ph, sw_str(o->session), o->rank, o->ts, &arena, &attr);
        json_t *got = render_attr(&attr);
        json_t *want = parse_quoted(o->want);
        SW_CHECK(want != NULL, "expectation of step %zu is not JSON: %s", i + 1, o->want);
        char why[1024];
        if (want && !sw_test_json_equal(got, want, false, why, sizeof(why))) {
            char *g = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
            char *w = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY);
            SW_CHECK(false,
                     "step %zu, query (%s, rank %lld, t=%lld): %s (got != expected)\n"
                     "  got:      %s\n  expected: %s",
                     i + 1, o->session, (long long)o->rank, (long long)o->ts, why, g, w);
            free(g);
            free(w);
        }
        json_decref(got);
        json_decref(want);
    }
    SW_CHECK(nq > 0, "the case has no query");
    SW_CHECK(sw_phase_boundaries(ph) == (size_t)c->want_boundaries, "%zu boundaries, expected %d",
             sw_phase_boundaries(ph), c->want_boundaries);
    SW_CHECK(sw_phase_bytes(ph) > 0, "sw_phase_bytes %zu", sw_phase_bytes(ph));
    sw_arena_clear(&arena);
    sw_phase_destroy(ph);
}

static void test_scripts(void **state)
{
    (void)state;
    sw_check_reset();
    size_t n = sizeof(k_cases) / sizeof(k_cases[0]);
    for (size_t i = 0; i < n; i++) run_case(&k_cases[i]);
    fprintf(stderr, "%zu phase cases\n", n);
    SW_CHECK_END();
}

/* sw_phase_boundary_ok() on events built field by field. */
static void test_boundary_ok(void **state)
{
    (void)state;
    sw_check_reset();
    static const struct {
        const char *name;
        pop_t op;
        bool ok;
    } cases[] = {
        {"enter", ENTER(0, 1, "A", 1, "a", "T"), true},
        {"exit", EXIT(0, 1, "A", 1, "a", "T"), true},
        {"exit with action enter", {'M', 0, "s", 0, 1, "A", 1, "a", "T", NULL, NULL}, false},
        {"null session", {'E', 0, NULL, 0, 1, "A", 1, "a", "T", NULL, NULL}, false},
        {"empty session is a string", {'E', 0, "", 0, 1, "A", 1, "a", "T", NULL, NULL}, true},
        {"blank name (spaces)", {'E', 0, "s", 0, 1, "A", 1, "a", "T", "  ", NULL}, false},
        {"blank name (U+3000, U+00A0, U+2028, U+0085)",
         {'E', 0, "s", 0, 1, "A", 1, "a", "T", "\xe3\x80\x80\xc2\xa0\xe2\x80\xa8\xc2\x85", NULL},
         false},
        {"blank name (U+001F, U+1680, U+205F)",
         {'E', 0, "s", 0, 1, "A", 1, "a", "T", "\x1f\xe1\x9a\x80\xe2\x81\x9f", NULL},
         false},
        {"name U+200B is not whitespace",
         {'E', 0, "s", 0, 1, "A", 1, "a", "T", "\xe2\x80\x8b", NULL},
         true},
        {"name U+180E is not whitespace",
         {'E', 0, "s", 0, 1, "A", 1, "a", "T", "\xe1\xa0\x8e", NULL},
         true},
        {"empty name", {'E', 0, "s", 0, 1, "A", 1, "a", "T", "", NULL}, false},
        {"empty path", {'E', 0, "s", 0, 1, "A", 1, "", "T", NULL, NULL}, false},
        {"sample kind", SAMPLE("s", 0, 0), false},
    };
    char name[128];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(name, sizeof(name), "boundary_ok: %s", cases[i].name);
        sw_check_case("%s", name);
        sw_event_t ev;
        make_event(&cases[i].op, &ev);
        bool got = sw_phase_boundary_ok(&ev);
        SW_CHECK(got == cases[i].ok, "got %d, expected %d", got, cases[i].ok);
    }
    /* Not a phase boundary without a phase scope. */
    sw_check_case("boundary_ok: no phase scope");
    sw_event_t ev;
    pop_t o = ENTER(0, 1, "A", 1, "a", "T");
    make_event(&o, &ev);
    ev.has_phase = false;
    SW_CHECK(!sw_phase_boundary_ok(&ev), "got true");
    SW_CHECK_END();
}

/* Many boundaries arriving out of order (the sort's fallback path): one
 * thread of nested spans, boundaries added in reverse; each query finds
 * the innermost span. */
static void test_many_out_of_order(void **state)
{
    (void)state;
    sw_check_reset();
    sw_check_case("500 nested spans in reverse arrival order");
    enum { N = 500 };
    sw_phase_t *ph = sw_phase_new();
    static char scopes[N][16], paths[N][8];
    pop_t ops[2 * N];
    for (int i = 0; i < N; i++) {
        snprintf(scopes[i], sizeof(scopes[i]), "sc%03d", i);
        snprintf(paths[i], sizeof(paths[i]), "%s", i % 2 ? "a/b" : "a");
        /* span i: [10*i, 10*(2N - i)], nested; depth alternates 1, 2 */
        ops[2 * i] = (pop_t)ENTER(10 * i, 1, scopes[i], i, paths[i], "T");
        ops[2 * i + 1] = (pop_t)EXIT(10 * (2 * N - i), 1, scopes[i], 2 * N - i, paths[i], "TX");
    }
    for (int k = 2 * N - 1; k >= 0; k--) {
        sw_event_t ev;
        make_event(&ops[k], &ev);
        sw_phase_add(ph, &ev);
    }
    SW_CHECK(sw_phase_boundaries(ph) == 2 * N, "%zu boundaries", sw_phase_boundaries(ph));
    sw_arena_t arena;
    sw_arena_init(&arena);
    for (int i = 0; i < N; i += 37) {
        sw_phase_attr_t a;
        sw_arena_reset(&arena);
        /* inside span i only up to its inner neighbour: t = 10*i + 5 */
        sw_phase_resolve(ph, sw_str("s"), 0, 10 * i + 5, &arena, &a);
        /* active: spans 0..i; the deepest (depth 2, all labelled "a / b")
         * are the odd ones, and the match is the one with the largest
         * sequence: i itself when odd, else i - 1 (span 0 alone at i = 0) */
        int want = i % 2 ? i : (i >= 1 ? i - 1 : 0);
        SW_CHECK(a.resolution == SW_PHASE_UNIQUE, "t=%d: resolution %d", 10 * i + 5,
                 (int)a.resolution);
        if (a.resolution == SW_PHASE_UNIQUE)
            SW_CHECK(a.scope_id.len == strlen(scopes[want]) &&
                         memcmp(a.scope_id.ptr, scopes[want], a.scope_id.len) == 0,
                     "t=%d: scope %.*s, expected %s", 10 * i + 5, (int)a.scope_id.len,
                     a.scope_id.ptr, scopes[want]);
    }
    sw_arena_clear(&arena);
    sw_phase_destroy(ph);
    SW_CHECK_END();
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Folding: two indexes get the same random boundaries (two sessions,
 * three threads, nested and mismatched scopes, mostly in time order, some
 * late by less than the horizon's lag); one is folded at a horizon that
 * trails the newest time. Attributions at times at or after the horizon
 * must be equal, and the folded index must stay small. */
static void test_fold(void **state)
{
    (void)state;
    sw_check_reset();
    sw_check_case("fold");
    static const char *const scopes[] = {"A", "B", "C", "D", "E", "F"};
    static const char *const paths[] = {"train", "train/fwd", "train/bwd", "eval",
                                        "train/fwd/attn"};
    static const char *const sessions[] = {"s1", "s2"};
    uint64_t seed = 99;
    sw_arena_t arena;
    sw_arena_init(&arena);
    size_t dropped = 0, compared = 0, non_null = 0;
    for (int round = 0; round < 20; round++) {
        sw_phase_t *full = sw_phase_new(), *folded = sw_phase_new();
        int64_t now = 1000, seq = 0, horizon = 0;
        char scope[8];
        for (int k = 0; k < 4000; k++) {
            now += 1 + (int64_t)(splitmix(&seed) % 20);
            int64_t ts = now;
            /* late by up to 100, never before the horizon */
            if (splitmix(&seed) % 5 == 0) ts -= (int64_t)(splitmix(&seed) % 100);
            if (ts < horizon) ts = horizon;
            const char *session = sessions[splitmix(&seed) % 2];
            uint64_t r = splitmix(&seed) % 10;
            snprintf(scope, sizeof(scope), "%s%d", scopes[splitmix(&seed) % 6], (int)(k / 200));
            pop_t op = r < 5   ? (pop_t)ENTER(ts, (int)(splitmix(&seed) % 3), scope, seq,
                                              paths[splitmix(&seed) % 5], "T")
                       : r < 9 ? (pop_t)EXIT(ts, (int)(splitmix(&seed) % 3), scope, seq,
                                             paths[splitmix(&seed) % 5], "X")
                               : (pop_t)SAMPLE("s1", 0, ts);
            op.session = session;
            op.rank = 0;
            seq++;
            sw_event_t ev;
            make_event(&op, &ev);
            sw_phase_add(full, &ev);
            sw_phase_add(folded, &ev);
            if (k % 97 == 96 && now - 150 > horizon) {
                horizon = now - 150;
                dropped += sw_phase_fold(folded, 0, horizon);
            }
            if (k % 13 == 0 && horizon > 0) {
                int64_t t = horizon + (int64_t)(splitmix(&seed) % (uint64_t)(now - horizon + 50));
                for (int si = 0; si < 2; si++) {
                    sw_phase_attr_t a, b;
                    sw_arena_reset(&arena);
                    sw_phase_resolve(full, sw_str(sessions[si]), 0, t, &arena, &a);
                    sw_phase_resolve(folded, sw_str(sessions[si]), 0, t, &arena, &b);
                    json_t *ja = render_attr(&a), *jb = render_attr(&b);
                    if (!json_equal(ja, jb)) {
                        char *x = json_dumps(ja, JSON_COMPACT), *y = json_dumps(jb, JSON_COMPACT);
                        SW_CHECK(false, "round %d event %d t=%lld %s: full %s, folded %s", round, k,
                                 (long long)t, sessions[si], x, y);
                        free(x);
                        free(y);
                    }
                    non_null += !json_is_null(ja);
                    compared++;
                    json_decref(ja);
                    json_decref(jb);
                }
            }
        }
        /* Random scopes leave many enters open for good: those stay. */
        SW_CHECK(sw_phase_boundaries(folded) < sw_phase_boundaries(full), "folded keeps %zu of %zu",
                 sw_phase_boundaries(folded), sw_phase_boundaries(full));
        sw_phase_destroy(full);
        sw_phase_destroy(folded);
    }
    fprintf(stderr, "fold: %zu attributions compared (%zu not null), %zu boundaries dropped\n",
            compared, non_null, dropped);
    SW_CHECK(non_null > compared / 4, "only %zu of %zu attributions are not null", non_null,
             compared);

    /* Well-formed training steps (train > fwd, bwd, one scope id each):
     * folded behind the newest step, the index stays small however long
     * the job runs. */
    sw_phase_t *ph = sw_phase_new();
    size_t most = 0;
    static char ids[3][32];
    for (int step = 0; step < 20000; step++) {
        int64_t t0 = 1000 + (int64_t)step * 100;
        snprintf(ids[0], sizeof(ids[0]), "step-%d", step);
        snprintf(ids[1], sizeof(ids[1]), "fwd-%d", step);
        snprintf(ids[2], sizeof(ids[2]), "bwd-%d", step);
        pop_t ops[6] = {ENTER(t0, 1, ids[0], 6 * step, "train", "T"),
                        ENTER(t0 + 10, 1, ids[1], 6 * step + 1, "train/fwd", "T"),
                        EXIT(t0 + 40, 1, ids[1], 6 * step + 2, "train/fwd", "T"),
                        ENTER(t0 + 50, 1, ids[2], 6 * step + 3, "train/bwd", "T"),
                        EXIT(t0 + 90, 1, ids[2], 6 * step + 4, "train/bwd", "T"),
                        EXIT(t0 + 95, 1, ids[0], 6 * step + 5, "train", "T")};
        for (int k = 0; k < 6; k++) {
            sw_event_t ev;
            make_event(&ops[k], &ev);
            sw_phase_add(ph, &ev);
        }
        if (sw_phase_fold_due(ph, sw_phase_group(ph, sw_str("s"), 0)))
            sw_phase_fold(ph, 0, t0 - 1000);
        if (sw_phase_boundaries(ph) > most) most = sw_phase_boundaries(ph);
    }
    sw_phase_attr_t a;
    sw_arena_reset(&arena);
    sw_phase_resolve(ph, sw_str("s"), 0, 1000 + 19999 * 100 + 60, &arena, &a);
    SW_CHECK(a.resolution == SW_PHASE_UNIQUE && a.scope_id.len == strlen("bwd-19999") &&
                 memcmp(a.scope_id.ptr, "bwd-19999", a.scope_id.len) == 0,
             "last step's backward span not found");
    SW_CHECK(most <= 2 * 256 + 6, "the index grew to %zu boundaries", most);
    SW_CHECK(sw_phase_bytes(ph) < 256 * 1024, "the index holds %zu bytes", sw_phase_bytes(ph));
    fprintf(stderr, "fold: 120000 well-formed boundaries, at most %zu kept, %zu bytes at the end\n",
            most, sw_phase_bytes(ph));
    sw_phase_destroy(ph);
    sw_arena_clear(&arena);
    SW_CHECK_END();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scripts),
        cmocka_unit_test(test_boundary_ok),
        cmocka_unit_test(test_many_out_of_order),
        cmocka_unit_test(test_fold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
