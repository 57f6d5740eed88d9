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
 * @brief The careful alternative to sw_avro_plan_rewrite() for record
 *        schemas (decoders use the steps below first, this for the message
 *        of a body they fail on): one pass over the writer's fields, and for each reader
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

/*
 * The plan of a record compiled into one step per writer field, in the
 * writer's order, for decoders that read a body in a single forward pass
 * straight into their own fields (sw_avro_decode_event_plan): read the
 * value into reader field `slot` as it lies (same layout, an int read as a
 * long, bytes as string), convert it (into a scratch buffer, after the
 * pass: sw_avro_plan_convert), or skip it. The reader fields the writer
 * lacks take their defaults (sw_avro_plan_defaults). Each step is typed
 * by the value's shape on the wire, so that a decoder can read and skip
 * the common shapes inline, without a call per field.
 * A decoder that finds a body malformed decodes the message again through
 * sw_avro_plan_fields(), whose message names the field and the byte: the
 * steps never produce a message.
 */

/** What a step does with its writer field (sw_avro_step_t.op). The shapes:
 *  VARINT int, long (or enum: skips only); LEN string or bytes; OPT_* the
 *  union ["null", that]; a read of another shape (records, other unions,
 *  floats, ...) is SW_AVRO_STEP_READ, a skip SW_AVRO_STEP_SKIP. A read's
 *  shape is also the reader field's: the layouts are the same. */
typedef enum sw_avro_step_op_e {
    SW_AVRO_STEP_READ_VARINT,
    SW_AVRO_STEP_READ_OPT_VARINT,
    SW_AVRO_STEP_READ_LEN,
    SW_AVRO_STEP_READ_OPT_LEN,
    SW_AVRO_STEP_READ,        /**< another shape: the decoder's own reader */
    SW_AVRO_STEP_SKIP_VARINT, /**< a writer-only field ... */
    SW_AVRO_STEP_SKIP_OPT_VARINT,
    SW_AVRO_STEP_SKIP_LEN,
    SW_AVRO_STEP_SKIP_OPT_LEN,
    SW_AVRO_STEP_SKIP,   /**< ... of another shape: sw_avro_plan_skip() */
    SW_AVRO_STEP_CONVERT /**< skipped, then sw_avro_plan_convert() into slot */
} sw_avro_step_op_t;

/** One writer field. */
typedef struct sw_avro_step_s {
    uint8_t op;   /**< sw_avro_step_op_t */
    int16_t slot; /**< the reader field read or converted into (-1: skips) */
} sw_avro_step_t;

/**
 * @brief The steps of a record plan (sw_avro_plan_nfields() > 0), one per
 *        writer field, in the writer's order; NULL for other plans.
 * @param n the number of steps.
 * @returns borrowed: valid while @p plan lives.
 */
const sw_avro_step_t *sw_avro_plan_steps(const sw_avro_plan_t *plan, size_t *n);

/** A reader field the writer lacks: where its default is, in the
 *  reader's layout (bytes in the plan). */
typedef struct sw_avro_default_s {
    sw_avro_span_t span;
    int16_t slot; /**< the reader field */
} sw_avro_default_t;

/**
 * @brief The reader fields the writer lacks, in the reader's order.
 * @param n their number.
 * @returns borrowed: valid while @p plan lives.
 */
const sw_avro_default_t *sw_avro_plan_defaults(const sw_avro_plan_t *plan, size_t *n);

/**
 * @brief Skip writer field @p k of a record plan at @p *p (not past
 *        @p end), any shape. @returns false when the bytes are not a value
 *        of the field's type (no message: see above), else advances @p *p.
 */
bool sw_avro_plan_skip(const sw_avro_plan_t *plan, size_t k, const unsigned char **p,
                       const unsigned char *end);

/**
 * @brief Convert the value of reader field @p slot, written in
 *        [@p p, @p end) with the writer's type (a step
 *        SW_AVRO_STEP_CONVERT), into the reader's layout, appended to
 *        @p out. @returns false when the value is malformed or ends before
 *        @p end does, or the writer's union branch or enum symbol cannot be read.
 */
bool sw_avro_plan_convert(const sw_avro_plan_t *plan, size_t slot, const unsigned char *p,
                          const unsigned char *end, sw_buf_t *out);

#endif /* SW_AVRO_RESOLVE_H */
