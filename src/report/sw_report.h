/*
 * Incident report: alert records (SPEC 6 JSON lines: trigger, update,
 * resolve, summary) in, one self-contained HTML page out (inline CSS and
 * SVG, no scripts, nothing fetched). Records are grouped per job and
 * episode; each episode is charted from its latest trigger/update record.
 * Pure: no I/O, no clock, no globals; every input string is escaped.
 */
#ifndef SW_REPORT_H
#define SW_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"
#include "sw_types.h"

typedef struct sw_report_s sw_report_t;

/** Most points drawn per series of a chart (a longer timeline is thinned). */
#define SW_REPORT_MAX_POINTS 250
/** Most suspects drawn in one chart (the earliest ones; all are tabled). */
#define SW_REPORT_MAX_SERIES 12

/** What the page says about its inputs. */
typedef struct sw_report_opts_s {
    const char *title;          /**< page title; NULL: "stormwatch incident report" */
    const char *const *sources; /**< input names shown in the header (borrowed) */
    size_t n_sources;           /**< entries of sources */
    uint64_t skipped_lines;     /**< invalid lines the caller skipped, shown */
    bool fleet_only;            /**< the fleet page only (repeat offenders), no job sections;
                                     false: the incident report, which opens with the fleet
                                     section when two or more jobs name a host first */
} sw_report_opts_t;

/**
 * @brief An empty report.
 * @returns caller frees with sw_report_destroy().
 */
sw_report_t *sw_report_new(void);

/** @brief Free a report (accepts NULL). */
void sw_report_destroy(sw_report_t *rep);

/**
 * @brief Add one alert record (one JSON line). A blank line is ignored.
 * @param file input name for messages (borrowed for the call).
 * @param lineno 1-based line number for messages.
 * @returns SW_OK; SW_ERR_PARSE (not JSON) or SW_ERR_INVALID_ARG (not an
 *          alert record: missing or wrong action, job_id, episode,
 *          revision, or a malformed suspect), with errstr set to
 *          "FILE:LINE: ..." naming the field and the value. The report is
 *          unchanged on error.
 */
sw_err_t sw_report_add(sw_report_t *rep, const char *line, size_t len, const char *file,
                       uint64_t lineno, char *errstr, size_t errstr_size);

/**
 * @brief Add one telemetry event (one TelemetryEvent JSON line) for the
 *        crash charts: of a job whose records hold a crash, the first dead
 *        rank's samples in the SW_REPORT_CRASH_WINDOW_NS before its death,
 *        the other dead ranks' deaths and the watchdog errors after it.
 *        Call after every alert record was added (the records say which
 *        rank died first). Events of other jobs and ranks are skipped.
 * @returns SW_OK (also for an event that is skipped); SW_ERR_PARSE or
 *          SW_ERR_INVALID_ARG for a line that is not a valid event, with
 *          errstr "FILE:LINE: ...".
 */
sw_err_t sw_report_add_telemetry(sw_report_t *rep, const char *line, size_t len, const char *file,
                                 uint64_t lineno, char *errstr, size_t errstr_size);

/** How far back from the first death a crash chart draws memory (30 min). */
#define SW_REPORT_CRASH_WINDOW_NS (INT64_C(1800) * 1000000000)
/** Most marks (other deaths, watchdog errors) kept per crash chart. */
#define SW_REPORT_CRASH_MARKS 4096
/** Most samples kept per crash chart (the newest). */
#define SW_REPORT_CRASH_SAMPLES 200000

/** @brief Records accepted so far (duplicates included). */
uint64_t sw_report_records(const sw_report_t *rep);

/** @brief Episodes (job, episode) seen so far. */
size_t sw_report_episodes(const sw_report_t *rep);

/**
 * @brief Append the HTML page to @p out.
 * @param opts may be NULL (defaults); borrowed for the call.
 */
void sw_report_render(const sw_report_t *rep, const sw_report_opts_t *opts, sw_buf_t *out);

/**
 * @brief Append a byte count in human units ("6.62 GiB", "512 MiB",
 *        "900 B"), three significant digits, sign kept.
 */
void sw_report_bytes(sw_buf_t *out, int64_t bytes);

/**
 * @brief Append a duration in human units ("300 ms", "1.25 s", "850 µs",
 *        "4.5 min"), three significant digits, sign kept.
 */
void sw_report_duration(sw_buf_t *out, int64_t ns);

/**
 * @brief Append @p s escaped for HTML text and attribute values
 *        (& < > " '), with control characters and invalid UTF-8 replaced
 *        by U+FFFD.
 */
void sw_report_escape(sw_buf_t *out, sw_str_t s);

#endif /* SW_REPORT_H */
