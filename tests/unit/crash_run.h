/*
 * What the test_crash_* tests share: the engine run over telemetry lines,
 * its records and crash outputs logged for comparison.
 */
#ifndef CRASH_RUN_H
#define CRASH_RUN_H

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sw_testlib.h"

#include "sw_codec_alert.h"
#include "sw_codec_avro.h"
#include "sw_codec_pager.h"
#include "sw_codec_record.h"
#include "sw_codec_telemetry.h"
#include "sw_detect.h"
#include "sw_gen_crash.h"

/* Under ASan/UBSan (CI runs every test so) the biggest inputs shrink: the
 * 1024-rank jobs' watchdog comes after 120 s instead of 600 s (the outcomes
 * do not depend on it) and the marker floods are a quarter as long. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* ---- running the engine over lines ------------------------------------------- */

/* The line of the records that close a crash or warning at the job's
 * summary (no input line caused them). */
#define AT_SUMMARY SIZE_MAX

typedef struct xrec_s {
    int action;
    size_t line;        /* 0-based input line that caused it, AT_SUMMARY after the summary */
    size_t six_before;  /* SPEC 6 records logged before it */
    bool after_summary; /* the SPEC 6 record just before it is a summary */
    int end;            /* sw_x8_end_t of a closing record */
    bool has_previous;  /* a revision naming the first death it replaces */
    int64_t previous_rank;
    int64_t number, revision;
    int64_t first_rank;
    bool open;
    int64_t wranks[16];
    size_t nw;
    size_t n_blind;
    int64_t blind0;
} xrec_t;

typedef struct runlog_s {
    xrec_t *v;
    size_t n, cap;
    char **six; /* SPEC 6 records as JSON, blind_ranks left out */
    size_t nsix, capsix;
} runlog_t;

void log_clear(runlog_t *l);

void log_six(runlog_t *l, const sw_record_t *rec);

void log_x8(runlog_t *l, const sw_record_t *rec, size_t line);

/* A summary, then the records that close the job's crash and warning. */
void on_summary(void *opaque, const sw_record_t *rec);

/* Feed one line; records go to @p l. */
void feed_line(sw_detector_t *det, sw_tdec_t *dec, const char *p, size_t n, size_t line,
               runlog_t *l, bool with_offsets);

#endif /* CRASH_RUN_H */
