/*
 * How `stormwatch tail` shows a Kafka record, as a module of its own so
 * that it can be tested without a cluster: the value decoded (JSON, or
 * Confluent Avro telemetry and alert records by schema id, through the
 * schema registry when one is configured, else the fixed ids), undecodable
 * values as {"undecodable": true, "error": ..., "value_base64": ...}, and
 * optionally the envelope (topic, partition, offset, timestamp_ms, key,
 * headers, value). One JSON value per line. No I/O.
 */
#ifndef SW_TAIL_RENDER_H
#define SW_TAIL_RENDER_H

#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_codec_avro.h"
#include "sw_registry.h"
#include "sw_types.h"

typedef struct sw_render_s sw_render_t;

/**
 * @brief A renderer for Avro schema ids @p telemetry_id and @p alert_id
 *        (without a registry), or the registries' answers (borrowed, may
 *        be NULL; they outlive the renderer).
 */
sw_render_t *sw_render_new(int32_t telemetry_id, int32_t alert_id, sw_registry_t *reg_alert,
                           sw_registry_t *reg_event);

/** @brief Free (NULL is fine). */
void sw_render_destroy(sw_render_t *rd);

/**
 * @brief The value of a record as one JSON value appended to @p out:
 *        "null" for a null value.
 */
void sw_render_value(sw_render_t *rd, sw_buf_t *out, const void *payload, size_t len);

/**
 * @brief The whole output line of @p rkm into @p line (reset first, ends
 *        with a newline): the value, or with @p envelope the record around it.
 */
void sw_render_message(sw_render_t *rd, sw_buf_t *line, bool envelope,
                       const rd_kafka_message_t *rkm);

/**
 * @brief kcat -J's line for @p rkm into @p line (reset first, ends with a
 *        newline): {"topic", "partition", "offset", "tstype" ("create",
 *        "logappend" or "none"), "ts", "broker", "headers" (only when the
 *        record has some: [name, value, ...]), "key", "payload"} with key
 *        and payload as strings or null, as kcat 1.7 writes them; bytes
 *        that are not text (not UTF-8, or with NUL) as "key_base64" /
 *        "payload_base64" instead; a Confluent-framed Avro value adds
 *        "schema_id" and "value" (the decoded record, as tail prints it).
 */
void sw_render_kcat_json(sw_render_t *rd, sw_buf_t *line, const rd_kafka_message_t *rkm);

/**
 * @brief Check a kcat -f format: the tokens %t %p %o %k %s %T %h %S %K %%
 *        and the escapes \n \t \r \\.
 * @returns SW_OK, or SW_ERR_PARSE with @p errstr naming the token and its
 *          position (1-based).
 */
sw_err_t sw_render_format_check(const char *fmt, char *errstr, size_t errstr_size);

/**
 * @brief @p rkm formatted by @p fmt (checked with sw_render_format_check())
 *        into @p line (reset first), as kcat -f: %t topic, %p partition,
 *        %o offset, %k key and %s payload (raw bytes; empty when null), %K
 *        and %S their lengths (-1 when null), %T timestamp (ms, -1 when
 *        none), %h headers as name=value,... .
 */
void sw_render_format(const char *fmt, sw_buf_t *line, const rd_kafka_message_t *rkm);

#endif /* SW_TAIL_RENDER_H */
