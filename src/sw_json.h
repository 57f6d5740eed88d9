/*
 * Internal to the codecs: a strict, allocation-free JSON scanner over a
 * byte range. It accepts what Python's json.loads accepts (including NaN,
 * Infinity and -Infinity, and lone \u surrogates) and rejects the rest:
 * control characters in strings, bad escapes, invalid UTF-8, leading zeros,
 * trailing garbage. Errors carry a byte offset for "column N" messages.
 */
#ifndef SW_JSON_H
#define SW_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stormwatch/sw_types.h"

/** Deepest nesting accepted. */
#define SW_JSON_MAX_DEPTH 256

/** Value types seen by the scanner. */
typedef enum sw_jtype_e {
    SW_J_ABSENT = 0, /**< key not present */
    SW_J_NULL,
    SW_J_TRUE,
    SW_J_FALSE,
    SW_J_INT,        /**< integer syntax that fits int64 */
    SW_J_BIGINT,     /**< integer syntax beyond int64 */
    SW_J_FLOAT,      /**< fraction, exponent, NaN or +-Infinity */
    SW_J_STRING,
    SW_J_OBJECT,
    SW_J_ARRAY
} sw_jtype_t;

/** Scanner state over [p, end). */
typedef struct sw_jscan_s {
    const char *start;  /**< beginning of the text (for offsets) */
    const char *p;      /**< current position */
    const char *end;    /**< one past the last byte */
    char *scratch;      /**< room for unescaped strings (>= text length) */
    size_t scratch_used;
    const char *err;    /**< static error text when a call fails */
    const char *err_at; /**< where the error was found */
} sw_jscan_t;

/** A scanned scalar or the span of a container. */
typedef struct sw_jval_s {
    sw_jtype_t type;
    const char *raw;   /**< first byte of the value's text */
    size_t raw_len;    /**< length of the value's text */
    int64_t i;         /**< SW_J_INT value */
    sw_str_t s;        /**< SW_J_STRING value (unescaped) */
} sw_jval_t;

/** @brief Start scanning @p len bytes; @p scratch must hold @p len bytes. */
void sw_jscan_init(sw_jscan_t *js, const char *text, size_t len, char *scratch);

/** @brief Skip JSON whitespace (space, tab, CR, LF). */
static inline void sw_jscan_ws(sw_jscan_t *js)
{
    while (js->p < js->end &&
           (*js->p == ' ' || *js->p == '\t' || *js->p == '\n' || *js->p == '\r'))
        js->p++;
}

/** @brief Consume byte @p c after whitespace. @returns false (error set) if absent. */
bool sw_jscan_expect(sw_jscan_t *js, char c, const char *what);

/** @brief Scan a string at the cursor (unescaped into scratch when needed). */
bool sw_jscan_string(sw_jscan_t *js, sw_str_t *out);

/**
 * @brief Scan any value. Scalars are decoded into @p v; containers are
 *        validated and skipped (v->raw spans them).
 */
bool sw_jscan_value(sw_jscan_t *js, sw_jval_t *v, int depth);

/** @brief Byte offset of the cursor or error, for messages (0-based). */
static inline size_t sw_jscan_offset(const sw_jscan_t *js, const char *at)
{
    return (size_t)(at - js->start);
}

#endif /* SW_JSON_H */
