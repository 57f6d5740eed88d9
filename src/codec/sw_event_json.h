/*
 * A decoded event written back as one TelemetryEvent v3 JSON object, for
 * `stormwatch tail` (Avro telemetry shown as JSON) and reports. The output
 * decodes with sw_tdec_json() to an equal event. No I/O, no Kafka.
 */
#ifndef SW_EVENT_JSON_H
#define SW_EVENT_JSON_H

#include "sw_event.h"
#include "sw_types.h"

/**
 * @brief Append @p ev to @p buf as one JSON object on one line (no
 *        newline), keys in TelemetryEvent v3 order: schema_version,
 *        timestamp_ns, event_type, collector, sampling_interval_ms, pid,
 *        host, device_id, allocator_*, device_used/free/total_bytes,
 *        context, metadata, job_id, rank, local_rank, world_size,
 *        session_id.
 * @param ev borrowed during the call.
 * @remark Carried fields the event lacks are written as null, except
 *         device_used_bytes, which is left out (null is invalid there).
 *         metadata is the event's raw metadata text, with line breaks
 *         between its tokens turned into spaces (Avro may carry a
 *         multi-line text). When the text's phase_scope is not what the
 *         event has (Avro: a typed scope the text lacks, or a typed field
 *         that was not a boundary while the text holds a good one), the
 *         text's other members are kept and "phase_scope" is written from
 *         the typed scope, or left out, so that decoding finds the same
 *         scope, or none. Only then does the metadata text change.
 */
void sw_event_json(sw_buf_t *buf, const sw_event_t *ev);

#endif /* SW_EVENT_JSON_H */
