/*
 * The stream engine's lifecycle trace (sw_params_t.trace): generated storms
 * (sw_gen: storms in a row, rises over several samples, ties, a late first
 * rank) go through the JSON decoder and the engine, and the trace must tell
 * the records' story in order: every trigger, update and resolve record is
 * announced by its transition just before it ("quiet|closed|aged -> open
 * (trigger)", "-> open (update)", "-> closed (next_storm)" or "-> aged
 * (suspect_lost|onset_gone)", with the record's episode), each transition
 * starts where the one before ended, waits ("-> pending") end before the
 * next record, a restore starts from the state the snapshot had, and the
 * records are the same bytes with the trace on or off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_codec_alert.h"
#include "sw_codec_telemetry.h"
#include "sw_detect.h"
#include "sw_gen.h"
#include "sw_testlib.h"

/* One line of the story: a trace line, or a record the engine returned. */
typedef struct ent_s {
    bool is_rec;
    char from[16], to[16], reason[48]; /* trace: "job J: from -> to (reason, episode N)" */
    int64_t episode;
    sw_action_t action; /* record */
    sw_resolve_reason_t why;
    char *json; /* record: its alert JSON */
} ent_t;

typedef struct story_s {
    ent_t *v;
    size_t n, cap;
    size_t bad_lines; /* trace lines that did not parse */
} story_t;

static ent_t *story_add(story_t *s)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->v = realloc(s->v, s->cap * sizeof(*s->v));
    }
    ent_t *e = &s->v[s->n++];
    memset(e, 0, sizeof(*e));
    return e;
}

static void story_clear(story_t *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->v[i].json);
    free(s->v);
    memset(s, 0, sizeof(*s));
}

/* The trace hook: parses "job J: A -> B (reason, episode N)". */
static void on_trace(void *opaque, const char *line)
{
    story_t *s = opaque;
    ent_t *e = story_add(s);
    const char *p = strstr(line, ": ");
    long long ep = -1;
    if (strncmp(line, "job ", 4) != 0 || !p ||
        sscanf(p + 2, "%15s -> %15s (%47[^,], episode %lld)", e->from, e->to, e->reason, &ep) != 4)
        s->bad_lines++;
    e->episode = ep;
}

static void on_record(story_t *s, const sw_record_t *rec)
{
    ent_t *e = story_add(s);
    e->is_rec = true;
    e->action = rec->action;
    e->episode = rec->episode;
    e->why = rec->resolve_reason;
    sw_buf_t b;
    sw_buf_init(&b);
    sw_alert_json_record(&b, rec);
    e->json = strdup(sw_buf_cstr(&b));
    sw_buf_clear(&b);
}

static bool make_input(const sw_gen_opts_t *o, sw_buf_t *text)
{
    char err[512];
    sw_gen_t *gen = sw_gen_new(o, err, sizeof(err));
    SW_CHECK(gen != NULL, "gen: %s", err);
    if (!gen) return false;
    sw_buf_init(text);
    while (sw_gen_next(gen, text)) {
    }
    sw_gen_destroy(gen);
    return true;
}

/* The offsets of the input's lines (caller frees). */
static size_t *line_starts(const sw_buf_t *text, size_t *n)
{
    size_t cap = 4096, k = 0;
    size_t *v = malloc(cap * sizeof(*v));
    for (size_t i = 0; i < text->len;) {
        if (k == cap) v = realloc(v, (cap *= 2) * sizeof(*v));
        v[k++] = i;
        const char *nl = memchr(text->data + i, '\n', text->len - i);
        i = nl ? (size_t)(nl - text->data) + 1 : text->len;
    }
    *n = k;
    return v;
}

static bool decode(sw_tdec_t *dec, const sw_buf_t *text, const size_t *starts, size_t n, size_t i,
                   sw_event_t *ev)
{
    char err[256];
    size_t end = i + 1 < n ? starts[i + 1] : text->len;
    sw_err_t rc = sw_tdec_json(dec, text->data + starts[i], end - starts[i] - 1, ev, err,
                               sizeof(err));
    SW_CHECK(rc == SW_OK, "line %zu: %s", i + 1, err);
    return rc == SW_OK;
}

/* Feed the input (trace on: @p traced) into a fresh engine; with snap_at
 * > 0 the engine is snapshotted before that line, restored (its restore
 * traced too) and rebuilt. @p state_at_snap gets the state the trace had
 * reached then. */
static void run(const sw_buf_t *text, bool traced, size_t snap_at, story_t *s,
                char state_at_snap[16])
{
    memset(s, 0, sizeof(*s));
    sw_params_t p = sw_params_default();
    if (traced) {
        p.trace = on_trace;
        p.trace_opaque = s;
    }
    size_t n;
    size_t *starts = line_starts(text, &n);
    sw_detector_t *det = sw_detect_new(p);
    sw_tdec_t *dec = sw_tdec_new();
    char err[256];
    for (size_t i = 0; i < n && det; i++) {
        sw_event_t ev;
        if (i == snap_at && i > 0) {
            snprintf(state_at_snap, 16, "quiet");
            for (size_t k = s->n; k-- > 0;)
                if (!s->v[k].is_rec) {
                    snprintf(state_at_snap, 16, "%s", s->v[k].to);
                    break;
                }
            int64_t y;
            if (!sw_detect_min_offset(det, &y) || y > (int64_t)i) y = (int64_t)i;
            sw_buf_t snap;
            sw_buf_init(&snap);
            sw_detect_snapshot(det, (int64_t)i, &snap);
            sw_detect_destroy(det);
            int64_t x;
            det = sw_detect_restore(p, snap.data, snap.len, 0, &x, err, sizeof(err));
            sw_buf_clear(&snap);
            SW_CHECK(det != NULL, "restore: %s", err);
            if (!det) break;
            for (size_t k = (size_t)y; k < i; k++)
                if (decode(dec, text, starts, n, k, &ev)) sw_detect_rebuild(det, &ev, (int64_t)k);
            sw_detect_rebuild_done(det);
        }
        if (!decode(dec, text, starts, n, i, &ev)) break;
        const sw_record_t *rec;
        SW_CHECK(sw_detect_feed_at(det, &ev, 0, (int64_t)i, &rec, err, sizeof(err)) == SW_OK,
                 "line %zu: %s", i + 1, err);
        if (rec) on_record(s, rec);
    }
    sw_detect_destroy(det);
    sw_tdec_destroy(dec);
    free(starts);
}

static size_t g_trig, g_upd, g_res, g_pend, g_restored;

/* The story holds (see the file's comment); @p what names the case. */
static void check_story(const story_t *s, const char *what, size_t snap_at,
                        const char *state_at_snap)
{
    SW_CHECK(s->bad_lines == 0, "%s: %zu trace lines of another form", what, s->bad_lines);
    char state[16] = "quiet";
    int64_t last_ep = 0;
    const ent_t *prev = NULL; /* the entry before, when a trace line */
    for (size_t i = 0; i < s->n; i++) {
        const ent_t *e = &s->v[i];
        if (!e->is_rec) {
            if (!strcmp(e->reason, "restored")) {
                /* a restore starts again from quiet, into where it was */
                SW_CHECK(!strcmp(e->from, "quiet") && !strcmp(e->to, state_at_snap),
                         "%s (snapshot at line %zu): restored %s -> %s, the snapshot had %s", what,
                         snap_at, e->from, e->to, state_at_snap);
                g_restored++;
            } else {
                SW_CHECK(!strcmp(e->from, state), "%s: entry %zu: %s -> %s (%s) after %s", what, i,
                         e->from, e->to, e->reason, state);
            }
            SW_CHECK(e->episode >= last_ep, "%s: entry %zu: episode %lld after %lld", what, i,
                     (long long)e->episode, (long long)last_ep);
            if (!strcmp(e->to, "pending")) g_pend++;
            snprintf(state, sizeof(state), "%s", e->to);
            last_ep = e->episode;
            prev = e;
            continue;
        }
        if (e->action != SW_ACTION_TRIGGER && e->action != SW_ACTION_UPDATE &&
            e->action != SW_ACTION_RESOLVE) {
            prev = NULL;
            continue;
        }
        /* Its transition, just before it, with its episode. */
        const char *to = "open", *reason = e->action == SW_ACTION_TRIGGER ? "trigger" : "update";
        if (e->action == SW_ACTION_RESOLVE) {
            to = e->why == SW_RESOLVE_NEXT_STORM ? "closed" : "aged";
            reason = sw_resolve_reason_str(e->why);
        }
        SW_CHECK(prev && !strcmp(prev->to, to) && !strcmp(prev->reason, reason) &&
                     prev->episode == e->episode,
                 "%s: %s record of episode %lld: the trace before it says %s -> %s (%s, episode "
                 "%lld), expected -> %s (%s, episode %lld)",
                 what, sw_action_str(e->action), (long long)e->episode, prev ? prev->from : "-",
                 prev ? prev->to : "-", prev ? prev->reason : "nothing",
                 prev ? (long long)prev->episode : -1LL, to, reason, (long long)e->episode);
        if (e->action == SW_ACTION_TRIGGER) g_trig++;
        else if (e->action == SW_ACTION_UPDATE) g_upd++;
        else g_res++;
        prev = NULL;
    }
    /* A record-making transition with no record after it. */
    for (size_t i = 0; i < s->n; i++) {
        const ent_t *e = &s->v[i];
        bool makes = !e->is_rec && (!strcmp(e->reason, "trigger") || !strcmp(e->reason, "update") ||
                                    !strcmp(e->to, "closed") || !strcmp(e->to, "aged"));
        if (makes && strcmp(e->reason, "restored") != 0)
            SW_CHECK(i + 1 < s->n && s->v[i + 1].is_rec,
                     "%s: entry %zu: %s -> %s (%s) made no record", what, i, e->from, e->to,
                     e->reason);
    }
}

static void one_case(const sw_gen_opts_t *o, const char *what)
{
    sw_buf_t text;
    if (!make_input(o, &text)) return;
    story_t on, off, snap;
    char at[16] = "";
    run(&text, true, 0, &on, at);
    run(&text, false, 0, &off, at);
    check_story(&on, what, 0, "");
    /* The trace changes no record. */
    size_t a = 0, b = 0, nrec = 0;
    for (;;) {
        while (a < on.n && !on.v[a].is_rec) a++;
        if (a == on.n || b == off.n) break;
        SW_CHECK(!strcmp(on.v[a].json, off.v[b].json), "%s: record %zu differs with the trace on",
                 what, nrec);
        a++, b++, nrec++;
    }
    SW_CHECK(a == on.n && b == off.n, "%s: %zu records with the trace, %zu without", what,
             nrec + (on.n - a), off.n);
    SW_CHECK(nrec > 0, "%s: no record", what);
    /* Restored in the middle of the input: the story goes on. */
    size_t lines = 0;
    for (size_t i = 0; i < text.len; i++) lines += text.data[i] == '\n';
    run(&text, true, lines / 2 + 7, &snap, at);
    check_story(&snap, what, lines / 2 + 7, at);
    story_clear(&on);
    story_clear(&off);
    story_clear(&snap);
    sw_buf_clear(&text);
}

static void test_storm_story(void **state)
{
    (void)state;
    sw_check_reset();
    for (uint64_t seed = 1; seed <= 4; seed++) {
        sw_gen_opts_t o;
        char what[160];
        /* Storms in a row, rising over 4 samples (the crossing moves: updates). */
        sw_gen_opts_default(&o);
        o.seed = seed;
        o.ranks = 16;
        o.storms = 3;
        o.storm_gap_ms = 30000;
        o.storm_at = 0.3;
        o.rise_samples = 4;
        o.storm_rank = SW_GEN_STORM_RANK_RANDOM;
        o.samples = (int64_t)((double)(o.storms * o.storm_gap_ms / o.interval_ms + 120) / 0.7) + 1;
        snprintf(what, sizeof(what),
                 "gen --seed %llu --ranks 16 --storms 3 --storm-gap-ms 30000 "
                 "--rise-samples 4",
                 (unsigned long long)seed);
        one_case(&o, what);
        /* A late first rank and a tie: updates that come at once. */
        o.late_first_ms = 400;
        o.tie_ranks = 3;
        o.rise_samples = 0;
        snprintf(what, sizeof(what),
                 "gen --seed %llu --ranks 16 --storms 3 --late-first-ms 400 "
                 "--tie-ranks 3",
                 (unsigned long long)seed);
        one_case(&o, what);
    }
    /* The inputs exercised what they are meant to. */
    SW_CHECK(g_trig >= 8 && g_upd >= 1 && g_res >= 8 && g_pend >= 1 && g_restored >= 1,
             "triggers %zu, updates %zu, resolves %zu, waits %zu, restored states %zu", g_trig,
             g_upd, g_res, g_pend, g_restored);
    printf(
        "lifecycle trace: %zu triggers, %zu updates, %zu resolves, %zu waits, %zu restored "
        "states told in order\n",
        g_trig, g_upd, g_res, g_pend, g_restored);
    SW_CHECK_END();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_storm_story),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
