/*
 * Encoding of analysis results and stream records (SPEC 3.8 and 6) as
 * JSON. Alert records (trigger, update, resolve) carry the rank maps only
 * for the suspects and the anchor; summaries carry them whole. No I/O.
 */
#ifndef SW_CODEC_ALERT_H
#define SW_CODEC_ALERT_H

#include "sw_analysis.h"
#include "sw_types.h"

/** @brief Append the analysis as one JSON object (indent 0 = one line). */
void sw_alert_json_analysis(sw_buf_t *buf, const sw_analysis_t *a, int indent);

/**
 * @brief Append a stream record as one JSON object on one line (no
 *        newline): the SPEC keys, then severity, dedup_key, summary and,
 *        when set, source {topic, partition, offset}.
 */
void sw_alert_json_record(sw_buf_t *buf, const sw_record_t *rec);

/**
 * @brief Pager severity: "critical", "error" or "warning" when the top
 *        suspect's confidence is high, medium or low; "info" for resolve
 *        and summary records.
 */
const char *sw_record_severity(const sw_record_t *rec);

/**
 * @brief The severity of the record's episode, fixed from its trigger on
 *        (critical, error or warning; info without an episode): what an
 *        Alertmanager label may carry, since labels identify the alert.
 */
const char *sw_record_episode_severity(const sw_record_t *rec);

/** @brief "1.25 s", "300 ms", "12 us" or "40 ns". */
void sw_duration_text(sw_buf_t *buf, int64_t ns);

/** @brief "phase train / forward", "phase ambiguous (likely X)" or "phase unknown". */
void sw_phase_text(sw_buf_t *buf, const sw_phase_attr_t *ph);

/** @brief "rank 3 on node-112 GPU 5" (host and GPU when known). */
void sw_suspect_where(const sw_suspect_t *s, sw_buf_t *buf);

/** @brief Append the dedup key, stable for one episode of one job. */
void sw_record_dedup_key(const sw_record_t *rec, sw_buf_t *buf);

/**
 * @brief Append one human line: action, job, first-cause rank, lead,
 *        confidence and phase.
 */
void sw_record_summary(const sw_record_t *rec, sw_buf_t *buf);

#endif /* SW_CODEC_ALERT_H */
