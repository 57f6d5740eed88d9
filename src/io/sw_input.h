/*
 * Line input from a file or stdin ("-"), plain or gzip. Gzip is detected
 * by its magic bytes (1f 8b), never by the file name; concatenated gzip
 * members are read in turn. A truncated or corrupt gzip stream is an error
 * that names the file, and so is a regular file truncated while it is
 * read. Every input is read with read(2) into one reused buffer (measured
 * cheaper than mapping; see sw_input.c).
 */
#ifndef SW_INPUT_H
#define SW_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sw_input_s sw_input_t;

/** Result of sw_input_next(). */
typedef enum sw_input_res_e {
    SW_INPUT_LINE = 1,    /**< a line is returned */
    SW_INPUT_EOF = 0,     /**< no more lines */
    SW_INPUT_TOOLONG = 2, /**< a line over the limit was skipped (errstr says so) */
    SW_INPUT_ERROR = -1   /**< read failure, corrupt or truncated gzip (fatal) */
} sw_input_res_t;

/** Longest line accepted by default (bytes). */
#define SW_INPUT_MAX_LINE (64u * 1024u * 1024u)

/**
 * @brief Open @p path ("-" = standard input).
 * @returns caller frees with sw_input_close(); NULL with errstr filled.
 */
sw_input_t *sw_input_open(const char *path, char *errstr, size_t errstr_size);

/**
 * @brief Next line, without its newline (a trailing CR is kept).
 * @param line borrowed until the next call.
 */
sw_input_res_t sw_input_next(sw_input_t *in, const char **line, size_t *len, char *errstr,
                             size_t errstr_size);

/**
 * @brief Keep the line last returned (SW_INPUT_LINE) valid until the next
 *        sw_input_hold() or sw_input_close(), not only until the next call:
 *        one line of lookahead without copying it.
 * @remark The held line's bytes are never moved: room for more is made in
 *         a second buffer of the same size (so holding can double the
 *         buffer memory, 256 KiB at first).
 */
void sw_input_hold(sw_input_t *in);

/** @brief 1-based number of the line last returned. */
uint64_t sw_input_lineno(const sw_input_t *in);

/** @brief The name used in messages ("-" shows as "<stdin>"). */
const char *sw_input_name(const sw_input_t *in);

/** @brief True when the input is gzip-compressed. */
bool sw_input_is_gzip(const sw_input_t *in);

/** @brief Bytes read from the file (compressed size for gzip). */
uint64_t sw_input_raw_bytes(const sw_input_t *in);

/** @brief Close and free (accepts NULL). */
void sw_input_close(sw_input_t *in);

#endif /* SW_INPUT_H */
