/*
 * How `stormwatch tail` shows a Kafka record, beside the other record
 * renderers, so that it can be tested without a cluster: the value decoded
 * (JSON, or Confluent Avro telemetry and alert records by schema id,
 * through a plan lookup when a schema registry is configured, else the
 * fixed ids), undecodable values as {"undecodable": true, "error": ...,
 * "value_base64": ...}, and optionally the envelope (topic, partition,
 * offset, timestamp_ms, key, headers, value). One JSON value per line. No
 * I/O, no librdkafka, no registry: the caller fills a message view
 * (src/cli/sw_cmd_tail.c from a librdkafka message) and answers plan
 * lookups.
 */
#ifndef SW_TAIL_RENDER_H
#define SW_TAIL_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_avro_resolve.h"
#include "sw_codec_avro.h"
#include "sw_types.h"

/** One header of a message (borrowed). */
typedef struct sw_msg_header_s {
    const char *name;
    const void *value; /**< NULL: a null value */
    size_t size;
} sw_msg_header_t;

typedef enum sw_msg_tstype_e {
    SW_MSG_TS_NONE,     /**< no timestamp */
    SW_MSG_TS_CREATE,   /**< CreateTime */
    SW_MSG_TS_LOGAPPEND /**< LogAppendTime */
} sw_msg_tstype_t;

/** A message as the renderer sees it; every pointer borrowed for the call. */
typedef struct sw_msg_view_s {
    const char *topic;
    int32_t partition;
    int64_t offset;
    sw_msg_tstype_t tstype;
    int64_t timestamp_ms; /**< when tstype is not SW_MSG_TS_NONE */
    int32_t broker;       /**< the broker it came from (kcat -J), -1 unknown */
    const void *key;      /**< NULL: a null key */
    size_t key_len;
    const void *payload; /**< NULL: a null value */
    size_t len;
    const sw_msg_header_t *headers; /**< in the record's order */
    size_t nheaders;
} sw_msg_view_t;

/**
 * The resolution plan of Avro writer schema @p id against the alert record
 * (@p alert) or the telemetry event: SW_OK with @p plan borrowed until the
 * next call; SW_ERR_IO when it cannot be known now (no other lookup is
 * tried); any other error is final, with @p why saying why.
 */
typedef sw_err_t (*sw_render_plan_fn)(void *opaque, int32_t id, bool alert,
                                      const sw_avro_plan_t **plan, char *why, size_t why_size);

typedef struct sw_render_s sw_render_t;

/**
 * @brief A renderer for Avro schema ids @p telemetry_id and @p alert_id
 *        (without a registry: @p plans NULL), or what @p plans answers for
 *        any id (a schema registry; @p opaque is passed to it).
 */
sw_render_t *sw_render_new(int32_t telemetry_id, int32_t alert_id, sw_render_plan_fn plans,
                           void *opaque);

/** @brief Free (NULL is fine). */
void sw_render_destroy(sw_render_t *rd);

/**
 * @brief The value of a record as one JSON value appended to @p out:
 *        "null" for a null value.
 */
void sw_render_value(sw_render_t *rd, sw_buf_t *out, const void *payload, size_t len);

/**
 * @brief The whole output line of @p msg into @p line (reset first, ends
 *        with a newline): the value, or with @p envelope the record around it.
 */
void sw_render_message(sw_render_t *rd, sw_buf_t *line, bool envelope, const sw_msg_view_t *msg);

/**
 * @brief The human line of @p msg into @p line (reset first, ends with a
 *        newline): an alert record (JSON or Avro; every action, crash and
 *        warning included) as "ACTION   title" like replay's text output;
 *        any other value as its JSON.
 */
void sw_render_text(sw_render_t *rd, sw_buf_t *line, const sw_msg_view_t *msg);

/**
 * @brief kcat -J's line for @p msg into @p line (reset first, ends with a
 *        newline): {"topic", "partition", "offset", "tstype" ("create",
 *        "logappend" or "none"), "ts", "broker", "headers" (only when the
 *        record has some: [name, value, ...]), "key", "payload"} with key
 *        and payload as strings or null, as kcat 1.7 writes them; bytes
 *        that are not text (not UTF-8, or with NUL) as "key_base64" /
 *        "payload_base64" instead; a Confluent-framed Avro value adds
 *        "schema_id" and "value" (the decoded record, as tail prints it).
 */
void sw_render_kcat_json(sw_render_t *rd, sw_buf_t *line, const sw_msg_view_t *msg);

/**
 * @brief Check a kcat -f format: the tokens %t %p %o %k %s %T %h %S %K %%
 *        and the escapes \n \t \r \\.
 * @returns SW_OK, or SW_ERR_PARSE with @p errstr naming the token and its
 *          position (1-based).
 */
sw_err_t sw_render_format_check(const char *fmt, char *errstr, size_t errstr_size);

/**
 * @brief @p msg formatted by @p fmt (checked with sw_render_format_check())
 *        into @p line (reset first), as kcat -f: %t topic, %p partition,
 *        %o offset, %k key and %s payload (raw bytes; empty when null), %K
 *        and %S their lengths (-1 when null), %T timestamp (ms, -1 when
 *        none), %h headers as name=value,... .
 */
void sw_render_format(const char *fmt, sw_buf_t *line, const sw_msg_view_t *msg);

#endif /* SW_TAIL_RENDER_H */
