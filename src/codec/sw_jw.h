/*
 * A minimal JSON writer into an sw_buf_t: compact (Python's ", " and ": "
 * separators) or indented. Strings are escaped; lone surrogates kept by the
 * decoder (WTF-8) are written back as \u escapes. No I/O.
 */
#ifndef SW_JW_H
#define SW_JW_H

#include <stdbool.h>
#include <stdint.h>

#include "sw_types.h"

#define SW_JW_MAX_DEPTH 32

/** Writer state; fields are private. */
typedef struct sw_jw_s {
    sw_buf_t *buf;
    int indent; /**< spaces per level; 0 = one line */
    int depth;
    bool first[SW_JW_MAX_DEPTH]; /**< no element written yet at this level */
    bool after_key;              /**< a key was just written */
} sw_jw_t;

/** @brief Start writing into @p buf (borrowed while writing). */
void sw_jw_init(sw_jw_t *jw, sw_buf_t *buf, int indent);
void sw_jw_obj(sw_jw_t *jw);                  /**< @brief Open an object. */
void sw_jw_arr(sw_jw_t *jw);                  /**< @brief Open an array. */
void sw_jw_end_obj(sw_jw_t *jw);              /**< @brief Close an object. */
void sw_jw_end_arr(sw_jw_t *jw);              /**< @brief Close an array. */
void sw_jw_key(sw_jw_t *jw, const char *key); /**< @brief Write a member key. */
void sw_jw_key_i64(sw_jw_t *jw, int64_t key); /**< @brief Write a decimal key. */
void sw_jw_i64(sw_jw_t *jw, int64_t v);
void sw_jw_u64(sw_jw_t *jw, uint64_t v);
void sw_jw_dbl(sw_jw_t *jw, double v);
void sw_jw_bool(sw_jw_t *jw, bool v);
void sw_jw_null(sw_jw_t *jw);
void sw_jw_str(sw_jw_t *jw, sw_str_t s);
void sw_jw_cstr(sw_jw_t *jw, const char *s);
/** @brief Write pre-encoded JSON text as one value. */
void sw_jw_raw(sw_jw_t *jw, sw_str_t json);

/** @brief Append @p s as a JSON string literal (with quotes). */
void sw_json_put_str(sw_buf_t *buf, sw_str_t s);

#endif /* SW_JW_H */
