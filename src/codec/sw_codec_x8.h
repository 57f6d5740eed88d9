/*
 * SPEC 8 records (crash, warning) as JSON, their human line, severity and
 * dedup key; and the blind_ranks key of SPEC 6 records. Kept apart from
 * SPEC 6's encoder (sw_codec_alert.c), which calls in here. No I/O.
 */
#ifndef SW_CODEC_X8_H
#define SW_CODEC_X8_H

#include "sw_analysis.h"
#include "sw_jw.h"
#include "sw_types.h"

/** @brief Append a crash or warning record as one JSON object. */
void sw_x8_json_record(sw_buf_t *buf, const sw_record_t *rec);

/** @brief Write "blind_ranks" (SPEC 8.5) when the record has any. */
void sw_x8_json_blind(sw_jw_t *jw, const sw_record_t *rec);

/** @brief The "source" key (input topic, partition, offset) of a record
 *         from Kafka, as every record encoder writes it; nothing for files. */
void sw_record_json_source(sw_jw_t *jw, const sw_record_t *rec);

/**
 * @brief One human line: "CRASH job j crash 1: rank 5 on node-1 GPU 5 died
 *        first (out of memory) at 2026-12-02T01:02:03.456Z; 3 ranks dead";
 *        a revision names the rank it replaces and by how much it died
 *        earlier, a closing record says why it closed; blind ranks last.
 */
void sw_x8_summary(const sw_record_t *rec, sw_buf_t *buf);

/** @brief @p ns (epoch) as ISO 8601 UTC with milliseconds: 2026-12-02T01:02:03.456Z. */
void sw_x8_time(sw_buf_t *buf, int64_t ns);

/** @brief A time span for people: "2.1 s" from one second, else "350 ms". */
void sw_x8_gap(sw_buf_t *buf, int64_t ns);

/** @brief "; blind (collector degraded or silent): ranks 3, 7" (up to 8 listed), or nothing. */
void sw_x8_blind_text(const sw_record_t *rec, sw_buf_t *buf);

/** @brief "critical" for an open crash, "warning" for an open warning, "info" when either closes. */
const char *sw_x8_severity(const sw_record_t *rec);

/** @brief "stormwatch/<job>/crash/<n>" or "stormwatch/<job>/warning/<n>". */
void sw_x8_dedup_key(const sw_record_t *rec, sw_buf_t *buf);

/** @brief "crash" or "warning" with the counter: the kind of page. */
const char *sw_x8_kind_str(const sw_record_t *rec);

#endif /* SW_CODEC_X8_H */
