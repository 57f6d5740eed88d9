/*
 * A small JSON DOM on top of the strict scanner, for the commands that read
 * alert records (demo, report). Nodes and strings live in a caller arena.
 * Not for the hot path: telemetry decoding uses sw_codec_telemetry.
 */
#ifndef SW_JDOM_H
#define SW_JDOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_arena.h"
#include "sw_types.h"

/** Node types. */
typedef enum sw_jnode_type_e {
    SW_JN_NULL = 0,
    SW_JN_BOOL,
    SW_JN_INT,    /**< integer that fits int64 */
    SW_JN_NUMBER, /**< any other number (see d) */
    SW_JN_STRING,
    SW_JN_ARRAY,
    SW_JN_OBJECT
} sw_jnode_type_t;

/** One value. */
typedef struct sw_jnode_s {
    sw_jnode_type_t type;
    bool b;                   /**< SW_JN_BOOL */
    int64_t i;                /**< SW_JN_INT */
    double d;                 /**< SW_JN_INT and SW_JN_NUMBER */
    sw_str_t s;               /**< SW_JN_STRING (unescaped) */
    size_t n;                 /**< elements or members */
    struct sw_jnode_s *items; /**< array elements / member values */
    sw_str_t *keys;           /**< member keys (objects) */
} sw_jnode_t;

/**
 * @brief Parse one JSON value (whitespace around it allowed).
 * @returns the root (borrowed from @p arena), or NULL with errstr set.
 */
sw_jnode_t *sw_jdom_parse(const char *text, size_t len, sw_arena_t *arena, char *errstr,
                          size_t errstr_size);

/** @brief Member @p key of an object (last one when repeated), or NULL. */
const sw_jnode_t *sw_jdom_get(const sw_jnode_t *obj, const char *key);

/** @brief Element @p i of an array, or NULL. */
const sw_jnode_t *sw_jdom_at(const sw_jnode_t *arr, size_t i);

/** @brief Integer value of @p n, or @p dflt when not an integer. */
int64_t sw_jdom_int(const sw_jnode_t *n, int64_t dflt);

/** @brief String value of @p n, or @p dflt when not a string. */
sw_str_t sw_jdom_str(const sw_jnode_t *n, const char *dflt);

#endif /* SW_JDOM_H */
