/*
 * Decoding of TelemetryEvent v2/v3 records into sw_event_t, with the
 * validation of SPEC section 2. Errors are one sentence naming the field,
 * quoting the value and saying what was expected; the caller adds the
 * position (FILE:LINE, or topic/partition/offset). No I/O.
 */
#ifndef SW_CODEC_TELEMETRY_H
#define SW_CODEC_TELEMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"
#include "sw_event.h"

typedef struct sw_tdec_s sw_tdec_t;

/** @brief New decoder. @returns caller frees with sw_tdec_destroy(). */
sw_tdec_t *sw_tdec_new(void);

/** @brief Free (accepts NULL). */
void sw_tdec_destroy(sw_tdec_t *dec);

/**
 * @brief Turn the fast paths of sw_tdec_json() (template and fast) on (the
 *        default) or off. All paths give the same event or the same error
 *        for every input; tests and the fuzz target compare them.
 */
void sw_tdec_set_fast(sw_tdec_t *dec, bool on);

/** @brief How many lines @p dec decoded with its general path (all of
 *         them with the fast path off; with it on, the lines it gave up
 *         on: escapes in keys, unusual whitespace, NaN, errors...). */
uint64_t sw_tdec_general_lines(const sw_tdec_t *dec);

/** @brief How many lines @p dec decoded with its template path: the
 *         lines whose text between the values was that of the last line
 *         its fast path read (see sw_codec_telemetry_fast.c). */
uint64_t sw_tdec_tmpl_lines(const sw_tdec_t *dec);

/** @brief True when the text holds only whitespace (a skipped blank line). */
bool sw_tdec_blank(const char *text, size_t len);

/**
 * @brief Decode one JSON object (one line of JSON Lines).
 * @param ev filled on success; its strings are borrowed from @p text and
 *        from @p dec, valid until the next call on @p dec or until @p text
 *        changes.
 * @returns SW_OK; SW_ERR_PARSE when the text is not a JSON object;
 *          SW_ERR_INVALID_ARG when a field breaks SPEC 2. @p errstr says why.
 */
sw_err_t sw_tdec_json(sw_tdec_t *dec, const char *text, size_t len, sw_event_t *ev, char *errstr,
                      size_t errstr_size);

/**
 * @brief Validate the SPEC 2 fields of an event filled by another decoder
 *        (Avro): the same rules and messages as the JSON path.
 */
sw_err_t sw_event_validate(const sw_event_t *ev, char *errstr, size_t errstr_size);

#endif /* SW_CODEC_TELEMETRY_H */
