/*
 * The shipper's checkpoint file: one line per segment it follows, giving
 * the segment's identity (fingerprint of its first line, device and inode
 * of the file that carried it) and the byte offset up to which Kafka
 * acknowledged every event. Saved atomically (temporary file, fsync,
 * rename), so a crash leaves the previous or the new file, never a mix.
 * Pure file I/O: no Kafka, no clock.
 */
#ifndef SW_SHIP_CKPT_H
#define SW_SHIP_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"

/** One segment's position. */
typedef struct sw_ship_pos_s {
    uint64_t fp;     /**< fingerprint: hash of the first line (at most SW_FOLLOW_FP_BYTES) */
    uint64_t dev;    /**< device of the file that carried it */
    uint64_t ino;    /**< its inode */
    uint64_t offset; /**< bytes (decoded, for gzip) acknowledged by Kafka */
    uint64_t lineno; /**< lines before offset */
    uint64_t size;   /**< bytes known to exist (>= offset): the rest is unshipped */
    char path[4096]; /**< the file's last path (for messages) */
} sw_ship_pos_t;

/**
 * @brief Write @p n positions to @p path atomically.
 * @returns SW_OK, or SW_ERR_IO with the reason in @p errstr (the old
 *          file is then unchanged).
 */
sw_err_t sw_ship_ckpt_save(const char *path, const sw_ship_pos_t *v, size_t n, char *errstr,
                           size_t errstr_size);

/**
 * @brief Read a checkpoint file. A missing file is an empty checkpoint.
 * @param out caller frees with free() (NULL when *n is 0).
 * @returns SW_OK, SW_ERR_IO (unreadable) or SW_ERR_PARSE ("PATH:LINE: ...").
 */
sw_err_t sw_ship_ckpt_load(const char *path, sw_ship_pos_t **out, size_t *n, char *errstr,
                           size_t errstr_size);

#endif /* SW_SHIP_CKPT_H */
