/*
 * The stream engine tests' shared parts (test_detect_model.c, test_detect_restore.c,
 * test_detect_limits.c): random telemetry streams (late samples, duplicates,
 * staleness, several jobs, null job ids, restarts, phase events) and running an
 * engine over one, uninterrupted or restored from a snapshot.
 */
#ifndef DETECT_STREAMS_H
#define DETECT_STREAMS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_codec_alert.h"
#include "sw_detect.h"
#include "sw_phase.h"
#include "sw_assemble.h"
#include "sw_testlib.h"

/* ---- random streams ------------------------------------------------------ */

uint64_t rng(uint64_t *s);

typedef struct gen_s {
    uint64_t s;
    int64_t scale; /* multiplies time steps: 1 = toy ns, 1000000 = ms steps */
    int64_t now[4][8];
    int64_t used[4][8];
    char job[4][8], host[8][8], session[8][8], scope[16];
    int64_t seq;
    const char *path[2];
    bool ordered; /* nothing late, a third of the events phase boundaries */
    bool sticky;  /* a rank's sessions last (a few samples without one, and
                     now and then another): its phase group stays pending
                     in the engine for long stretches (PHASE_PEND) */
    bool alt[8];  /* sticky: the rank is in its second session */
    bool wide;    /* pids and intervals also outside int32 (SW_SRC_WIDE) */
} gen_t;
/* gen_t.sticky of the streams that follow (set by the tests that want it). */
extern bool g_sticky;
/* Restores of two-source engines swap their sources (sw_detect_swap_sources:
 * repartition=auto's engine going on under on) and are fed so from then on. */
extern bool g_swap;
extern bool g_compat;
/* gen_t.wide of the streams that follow. */
extern bool g_wide;

/* A random event; strings live in g. */
void gen_event(gen_t *g, sw_event_t *ev, int nranks, int njobs);

/* An engine of parameters @p p fed @p n events of gen_event() (seed
 * @p seed, 4 ranks, 2 jobs, scale 1) at offsets 0..n-1 of source 0. */
sw_detector_t *fed_engine(sw_params_t p, uint64_t seed, int64_t n);

/* SPEC 6's record: SPEC 8.5's blind_ranks (a rank of the random streams
 * that goes quiet is silent) is left out; test_crash checks it. */
void record_json(const sw_record_t *r, sw_buf_t *out);

/* ---- state restore --------------------------------------------------------- */

typedef struct outlog_s {
    char **v;
    size_t n, cap;
} outlog_t;

void out_push(outlog_t *o, const char *s);

void out_clear(outlog_t *o);

typedef struct sumctx_s {
    outlog_t *log;
    sw_buf_t *buf;
} sumctx_t;

void on_summary(void *opaque, const sw_record_t *rec);

/* A record of a real job into ((sumctx_t *)@p opaque)->log; a flood
 * job's (job_id "f<n>", run_flooded) is left out. */
void collect_real(void *opaque, const sw_record_t *rec);

/* 3,000 events of gen_event() (seed @p seed, 5 ranks, 3 jobs, ordered,
 * microseconds) fed to @p det, each followed by @p nfake flood jobs of one
 * sample a rank at its offset (job ids "f<n>"; @p franks ranks each, 0: 1,
 * 2 and 8 in turn), none of which makes a record; then finished. The real
 * jobs' records go to @p out; @p peak: NULL, or raised to the most state
 * the engine accounted after each flood job. */
void run_flooded(sw_detector_t *det, uint64_t seed, int nfake, int franks, outlog_t *out,
                 size_t *peak);

/* Event indexes just after a trigger, an update or a resolve (restore
 * points mid-episode, and just after an episode ended and spent its runs). */
typedef struct marks_s {
    long at[64];
    size_t n;
} marks_t;

/* An event's source when a stream is fed from two: either, at random, but
 * the same for samples of one rank with one timestamp. (Which of two
 * duplicates a window keeps depends on which came first, and a rebuild
 * that reads the sources in another interleaving could keep the other.
 * A real duplicate is a sample sent twice, equal in both copies; the
 * generator's duplicates differ in device_used_bytes.) */
int source_of(const sw_event_t *ev);

/* Re-insert events [0, upto) of the stream into a restored detector: with
 * one source from offset y[0]; with two, source 1 first and then source 0
 * (each in its order, from its y), an interleaving the live engine never
 * saw. */
void rebuild_stream(sw_detector_t *det, uint64_t seed, int nranks, int njobs, int64_t scale,
                    int sources, size_t upto, const int64_t y[2], size_t *rebuilt);

/* Records from event @p from on (and the final summaries) of a detector
 * fed the stream from one or two @p sources (offsets counted per source);
 * with @p snap_at >= 0 the detector is snapshotted there, destroyed,
 * restored, rebuilt from its minimum offsets, and goes on. */
void run_stream(uint64_t seed, int nranks, int njobs, sw_params_t p, int64_t scale, int sources,
                size_t events, size_t from, long snap_at, outlog_t *out, size_t *rebuilt,
                marks_t *marks);

/* Seed @p seed's stream (run_stream's parameters) uninterrupted and
 * restored from a snapshot after event @p snap_at: the same records, one
 * by one (a failure names the seed, the point and both records).
 * @returns how many were compared. */
size_t restore_equal(uint64_t seed, int nranks, int njobs, sw_params_t p, int64_t scale,
                     int sources, size_t events, long snap_at, size_t *rebuilt);

#endif /* DETECT_STREAMS_H */
