/*
 * Avro schema resolution (Avro 1.11 specification, "Schema Resolution"):
 * a writer schema (JSON text, e.g. from a schema registry or a .avsc file)
 * resolved once against a reader schema into a plan; a plan rewrites a
 * body written with the writer schema into the reader schema's layout, so
 * that the hand-written decoders of sw_codec_avro read it. When both
 * schemas have the same binary layout the plan is the identity and the
 * body is decoded in place. Pure: no I/O, no globals.
 */
#ifndef SW_AVRO_RESOLVE_H
#define SW_AVRO_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"
#include "sw_types.h"

typedef struct sw_avro_plan_s sw_avro_plan_t;

/** Deepest schema nesting a plan accepts (records, arrays, unions). */
#define SW_AVRO_MAX_DEPTH 32
/** Most fields of one record a plan accepts. */
#define SW_AVRO_MAX_FIELDS 256

/**
 * @brief Resolve @p writer_json against @p reader_json.
 * @param schema_id the writer schema's id, named in every message
 *        (< 0: the writer is named "writer schema").
 * @returns the plan (caller frees with sw_avro_plan_destroy()), or NULL
 *          with @p errstr naming the id and the field: a schema that is
 *          not valid Avro JSON, a reader field missing from the writer
 *          without a default, types that do not match (e.g. "field
 *          \"rank\": writer type \"string\" cannot be read as reader type
 *          \"long\""), records or enums with different names.
 * @remark Both texts are borrowed during the call only.
 */
sw_avro_plan_t *sw_avro_plan_new(const char *writer_json, size_t writer_len,
                                 const char *reader_json, size_t reader_len, int32_t schema_id,
                                 char *errstr, size_t errstr_size);

/** @brief Free (accepts NULL). */
void sw_avro_plan_destroy(sw_avro_plan_t *plan);

/** @brief Whether a body of the writer schema is already in the reader's layout. */
bool sw_avro_plan_identity(const sw_avro_plan_t *plan);

/** @brief The writer schema id given to sw_avro_plan_new(). */
int32_t sw_avro_plan_id(const sw_avro_plan_t *plan);

/**
 * @brief Rewrite one Avro body (no Confluent header) written with the
 *        plan's writer schema into the reader's layout, appended to @p out:
 *        fields reordered, skipped or filled with the reader's default,
 *        ints widened, values wrapped into or taken out of unions.
 * @returns SW_OK; SW_ERR_TRUNCATED when the body ends early; SW_ERR_AVRO
 *          for a malformed body, trailing bytes, or a writer union branch
 *          or enum symbol the reader cannot take. @p errstr names the
 *          schema id, the field and the byte offset in the body. On error
 *          @p out may hold a partial rewrite (callers reset it).
 */
sw_err_t sw_avro_plan_rewrite(const sw_avro_plan_t *plan, const void *body, size_t len,
                              sw_buf_t *out, char *errstr, size_t errstr_size);

/** Where one reader field's value is, in the reader's layout. */
typedef struct sw_avro_span_s {
    const unsigned char *p;   /**< first byte */
    const unsigned char *end; /**< end of the buffer that holds it (the body or
                                   the scratch buffer), not of the field: the
                                   value was checked to end where its encoding
                                   says, and decoders then read varints without
                                   a bounds check per byte */
} sw_avro_span_t;

/**
 * @brief Number of top-level reader fields when both schemas are records
 *        (sw_avro_plan_fields() applies), else 0.
 */
size_t sw_avro_plan_nfields(const sw_avro_plan_t *plan);

/**
 * @brief The faster alternative to sw_avro_plan_rewrite() for record
 *        schemas: one pass over the writer's fields, and for each reader
 *        field where its value is: in @p body when the layouts agree (no
 *        copy), else rewritten into @p scratch (reset first), or its
 *        default.
 * @param spans sw_avro_plan_nfields() entries, filled on SW_OK; they point
 *        into @p body and @p scratch (valid until either changes).
 * @returns as sw_avro_plan_rewrite().
 */
sw_err_t sw_avro_plan_fields(const sw_avro_plan_t *plan, const void *body, size_t len,
                             sw_avro_span_t *spans, sw_buf_t *scratch, char *errstr,
                             size_t errstr_size);

#endif /* SW_AVRO_RESOLVE_H */
