/*
 * Avro binary codecs for schemas/telemetry_event.avsc (TelemetryEvent in)
 * and schemas/first_cause_alert.avsc (FirstCauseAlert out), with optional
 * Confluent framing (magic byte 0, 4-byte big-endian schema id). Hand-written
 * for exactly these two schemas: no libavro at run time, strict decoding
 * with byte offsets in every error. Other writer schemas are read through
 * a resolution plan (sw_avro_resolve.h). No I/O, no schema registry.
 */
#ifndef SW_CODEC_AVRO_H
#define SW_CODEC_AVRO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_analysis.h"
#include "sw_avro_resolve.h"
#include "sw_err.h"
#include "sw_event.h"
#include "sw_types.h"

/** First byte of a Confluent-framed message. */
#define SW_AVRO_MAGIC 0
/** Bytes of the Confluent header (magic byte + schema id). */
#define SW_AVRO_HEADER_LEN 5

typedef struct sw_avro_dec_s sw_avro_dec_t;

/**
 * @brief Whether a message is Confluent-framed Avro: the magic byte 0 and
 *        room for the 4-byte schema id (JSON never starts with a NUL byte).
 *        The one test of the project; sw_avro_schema_id() then reads the id.
 * @param data borrowed during the call; NULL only with @p len 0.
 */
bool sw_avro_is_framed(const void *data, size_t len);

/**
 * @brief Read the schema id of a Confluent-framed message (@p data is
 *        borrowed during the call).
 * @returns SW_OK; SW_ERR_TRUNCATED when @p len < 5; SW_ERR_AVRO when the
 *          magic byte is not 0 or the id exceeds INT32_MAX. @p errstr says
 *          why.
 */
sw_err_t sw_avro_schema_id(const void *data, size_t len, int32_t *schema_id, char *errstr,
                           size_t errstr_size);

/**
 * @brief Append one TelemetryEvent to @p out.
 * @param schema_id Confluent schema id; < 0 writes the bare Avro body.
 * @remark phase_scope is written typed when ev->has_phase (and null when a
 *         phase string is not valid UTF-8, e.g. a lone surrogate kept from
 *         JSON: decoders then fall back to metadata.phase_scope, which
 *         keeps it escaped). Fields that are always set in sw_event_t
 *         (pid, host, rank, world_size, sampling_interval_ms, metadata) are
 *         written with their value, defaults included.
 * @returns SW_OK; SW_ERR_INVALID_ARG (out unchanged) when a string field is
 *          not valid UTF-8; @p errstr names the field.
 */
sw_err_t sw_avro_encode_event(const sw_event_t *ev, int32_t schema_id, sw_buf_t *out, char *errstr,
                              size_t errstr_size);

/** @brief New event decoder. @returns caller frees with sw_avro_dec_destroy(). */
sw_avro_dec_t *sw_avro_dec_new(void);

/** @brief Free (accepts NULL). */
void sw_avro_dec_destroy(sw_avro_dec_t *dec);

/**
 * @brief Decode and validate one TelemetryEvent message.
 * @param expected_schema_id the schema id the message must carry; < 0: the
 *        message is a bare Avro body without framing.
 * @param ev filled on success: nulls become the SPEC 2 defaults, the phase
 *        scope comes from the typed field or, when that is null, from
 *        metadata.phase_scope in the metadata text. Strings are borrowed
 *        from @p data and from @p dec: valid until the next call on @p dec
 *        or until @p data changes.
 * @returns SW_OK; SW_ERR_TRUNCATED when the message ends early;
 *          SW_ERR_AVRO for bad framing, an unexpected schema id or a
 *          malformed body (long varint, bad length, union index, UTF-8,
 *          trailing bytes); SW_ERR_INVALID_ARG when a field breaks SPEC 2
 *          (same messages as the JSON decoder) or metadata is not a JSON
 *          object. @p errstr gives the byte offset for binary errors.
 */
sw_err_t sw_avro_decode_event(sw_avro_dec_t *dec, const void *data, size_t len,
                              int32_t expected_schema_id, sw_event_t *ev, char *errstr,
                              size_t errstr_size);

/**
 * @brief Append one FirstCauseAlert to @p out: the same content as
 *        sw_alert_json_record() (trigger/update/resolve maps trimmed to the
 *        suspects' ranks and the anchor; severity, dedup_key and summary
 *        from the sw_record_* helpers).
 * @param schema_id Confluent schema id; < 0 writes the bare Avro body.
 * @remark Byte sequences that are not UTF-8 in strings (lone surrogates
 *         kept from JSON input) are written as U+FFFD: an alert is never
 *         dropped for its job id.
 * @returns SW_OK; SW_ERR_INVALID_ARG (out unchanged) when an unsigned
 *          timestamp (cluster onset, aligned spike time) does not fit in
 *          an Avro long, or an enum (action, confidence, phase resolution)
 *          has no symbol; @p errstr names the field.
 */
sw_err_t sw_avro_encode_record(const sw_record_t *rec, int32_t schema_id, sw_buf_t *out,
                               char *errstr, size_t errstr_size);

/**
 * @brief Decode one FirstCauseAlert and append the JSON object (one line,
 *        no newline) that sw_alert_json_record() writes for that record.
 * @param expected_schema_id as for sw_avro_decode_event().
 * @returns SW_OK; SW_ERR_TRUNCATED or SW_ERR_AVRO as for
 *          sw_avro_decode_event() (map keys must also be decimal ranks);
 *          on error @p json_out is left as it was.
 */
sw_err_t sw_avro_decode_record_json(const void *data, size_t len, int32_t expected_schema_id,
                                    sw_buf_t *json_out, char *errstr, size_t errstr_size);

/**
 * @brief sw_avro_decode_event() for a Confluent-framed message written with
 *        @p plan's writer schema (the header must carry its id): an
 *        identity plan decodes in place, any other rewrites the body into
 *        schemas/telemetry_event.avsc's layout first (kept in @p dec).
 * @param plan borrowed during the call; resolved against
 *        sw_schema_telemetry_event.
 * @returns as sw_avro_decode_event(); errors in a rewritten body name the
 *          writer schema id, the field and the offset in the body.
 */
sw_err_t sw_avro_decode_event_plan(sw_avro_dec_t *dec, const sw_avro_plan_t *plan, const void *data,
                                   size_t len, sw_event_t *ev, char *errstr, size_t errstr_size);

/**
 * @brief sw_avro_decode_record_json() for a message written with @p plan's
 *        writer schema (resolved against sw_schema_first_cause_alert).
 * @returns as sw_avro_decode_record_json().
 */
sw_err_t sw_avro_decode_record_json_plan(const sw_avro_plan_t *plan, const void *data, size_t len,
                                         sw_buf_t *json_out, char *errstr, size_t errstr_size);

#endif /* SW_CODEC_AVRO_H */
