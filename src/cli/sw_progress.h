/*
 * Progress of long runs over files (analyze, replay, gen, produce) on a
 * terminal: one line on stderr, redrawn at most every 500 ms from the
 * first second on, with events, bytes, events/s and, when the input size
 * is known, the fraction done and an ETA. Never drawn when stderr is not a
 * terminal (pipes, files, CI logs) or STORMWATCH_NO_PROGRESS is set.
 */
#ifndef SW_PROGRESS_H
#define SW_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct sw_progress_s {
    bool on;
    bool drawn;
    const char *cmd;
    const char *unit; /* "events", "lines", "messages" */
    uint64_t total;   /* input bytes expected; 0 = unknown */
    int64_t t0_ms, next_ms;
    uint32_t calls;
} sw_progress_t;

/** @brief Start; @p total_bytes = the input's size, 0 when unknown. */
void sw_progress_start(sw_progress_t *p, const char *cmd, const char *unit, uint64_t total_bytes);

/** @brief Report @p items done and @p bytes read (or written); cheap: the
 *         clock is read once every 1024 calls. */
void sw_progress_tick(sw_progress_t *p, uint64_t items, uint64_t bytes);

/** @brief Erase the line (before the command's own summary or output). */
void sw_progress_end(sw_progress_t *p);

/** @brief Bytes of the regular files among @p files (0 when any is not a
 *         regular file: stdin, a pipe). */
uint64_t sw_progress_files_size(char **files, int nfiles);

#endif /* SW_PROGRESS_H */
