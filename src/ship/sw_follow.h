/*
 * Following stormlog's telemetry sink: a directory of rolling JSONL
 * segments (plain or gzip) that the writer rolls over and prunes, or one
 * file followed like `tail -F`. A segment is known by its content (a
 * fingerprint of its first line) and carried by a file (device, inode):
 * a rename, a copy or a gzip of a segment is the same segment, read on from
 * where it was. Lines come out in order, oldest segment first; offsets are
 * of the decoded bytes. A segment that disappears before it was read to
 * its end is data loss, reported as an event with the file and byte range.
 * File I/O only: no Kafka; time is an argument, so tests drive it.
 */
#ifndef SW_FOLLOW_H
#define SW_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"
#include "sw_ship_ckpt.h"

/** Bytes of a segment's first line that make its fingerprint. */
#define SW_FOLLOW_FP_BYTES 256

typedef struct sw_follow_s sw_follow_t;

typedef struct sw_follow_opts_s {
    const char *path;       /**< a directory of segments, or one file (borrowed for life) */
    const char *pattern;    /**< directory: fnmatch(3) glob of segment names; NULL: "*.jsonl*" */
    int64_t rotate_wait_ms; /**< a file renamed out of view: read on until it has been at its
                                  end this long; a deleted file not read to its end by then
                                  is released and its rest counted lost */
    size_t max_line_bytes;  /**< longer lines are skipped (reported), not returned */
} sw_follow_opts_t;

typedef enum sw_follow_ev_kind_e {
    SW_FOLLOW_NEW = 0,   /**< a new segment, read from its start */
    SW_FOLLOW_RESUMED,   /**< a checkpointed segment found again; read from its offset */
    SW_FOLLOW_MOVED,     /**< its file renamed, or another file (a copy, its gzip) carries it */
    SW_FOLLOW_TRUNCATED, /**< its file was truncated: what follows is a new segment */
    SW_FOLLOW_DONE,      /**< out of view and read to its end */
    SW_FOLLOW_LOST,      /**< bytes [from, to) never read: pruned, truncated or corrupt;
                              to == 0: a whole segment never seen (a gap in numbered names) */
    SW_FOLLOW_ERROR,     /**< a file could not be read (detail) */
    SW_FOLLOW__CNT
} sw_follow_ev_kind_t;

/** Something that happened to a segment, for the log and the metrics. */
typedef struct sw_follow_ev_s {
    sw_follow_ev_kind_t kind;
    char path[4096];  /**< the file */
    uint64_t from;    /**< RESUMED, MOVED: the offset; LOST: first byte lost */
    uint64_t to;      /**< LOST: end of the range (exclusive) */
    char detail[256]; /**< why (LOST, ERROR, TRUNCATED) */
} sw_follow_ev_t;

/** One line handed out by sw_follow_next(). */
typedef struct sw_follow_line_s {
    uint64_t seg;     /**< the segment's id (for sw_follow_acked()) */
    const char *path; /**< its file (borrowed: until the next call on the follower) */
    const char *data; /**< the line without its newline (borrowed: likewise); NULL if too_long */
    size_t len;
    uint64_t end;    /**< offset just after the line */
    uint64_t lineno; /**< 1-based line number in the segment */
    bool too_long;   /**< longer than max_line_bytes: skipped, data NULL */
} sw_follow_line_t;

/** Counters and gauges for the metrics. */
typedef struct sw_follow_stats_s {
    uint64_t segments;      /**< segments followed now */
    uint64_t lag_bytes;     /**< bytes in view not yet read (compressed bytes for gzip) */
    uint64_t lost_bytes;    /**< total bytes lost */
    uint64_t lost_segments; /**< segments with a loss */
    uint64_t truncations;   /**< files truncated */
    uint64_t rotations;     /**< segments renamed or carried by another file */
} sw_follow_stats_t;

/**
 * @brief A follower of @p o->path. A directory must exist; a single file
 *        may appear later (its directory must exist).
 * @returns NULL with the reason in @p errstr.
 */
sw_follow_t *sw_follow_new(const sw_follow_opts_t *o, char *errstr, size_t errstr_size);

void sw_follow_destroy(sw_follow_t *f);

/** @brief Whether the path is a directory of segments (else one file). */
bool sw_follow_is_dir(const sw_follow_t *f);

/**
 * @brief Positions from a checkpoint, before the first scan: each segment
 *        is found again by its fingerprint (its device/inode preferred);
 *        the first scan reports those not found as lost from their offset
 *        to their known size.
 */
void sw_follow_restore(sw_follow_t *f, const sw_ship_pos_t *v, size_t n);

/** @brief Look at the files: new, renamed, truncated, gone. */
void sw_follow_scan(sw_follow_t *f, int64_t now_ms);

/**
 * @brief The next complete line, oldest segment first.
 * @returns false when no segment has a complete line now.
 */
bool sw_follow_next(sw_follow_t *f, sw_follow_line_t *line);

/**
 * @brief Kafka acknowledged every line of segment @p seg up to @p end
 *        (line @p lineno): the offset a checkpoint records.
 */
void sw_follow_acked(sw_follow_t *f, uint64_t seg, uint64_t end, uint64_t lineno);

/** @brief Take the oldest pending event. @returns false when none. */
bool sw_follow_take_event(sw_follow_t *f, sw_follow_ev_t *ev);

/**
 * @brief The acknowledged position of every segment followed (the
 *        checkpoint). @param out caller frees with free().
 * @returns the count.
 */
size_t sw_follow_positions(const sw_follow_t *f, sw_ship_pos_t **out);

/** @brief Whether every line handed out was acknowledged and no file has unread bytes. */
bool sw_follow_caught_up(const sw_follow_t *f);

void sw_follow_stats(const sw_follow_t *f, sw_follow_stats_t *st);

/** @brief The path of segment @p seg (borrowed: until the next scan), or NULL. */
const char *sw_follow_seg_path(const sw_follow_t *f, uint64_t seg);

/** @brief "new", "resumed", ... */
const char *sw_follow_ev_name(sw_follow_ev_kind_t k);

#endif /* SW_FOLLOW_H */
