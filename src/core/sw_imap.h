/*
 * An open-addressing hash map from int64 keys to uint32 values, for rank
 * and id lookups on the hot path. Small non-negative keys that come densely
 * (ranks 0..N-1) live in a direct table instead: 4 bytes a key rather than
 * a hash slot's 12 at up to 3/4 load. No I/O, no globals.
 */
#ifndef SW_IMAP_H
#define SW_IMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The map; zero-initialise or use sw_imap_init(). Fields are private. */
typedef struct sw_imap_s {
    int64_t *keys;   /**< slot keys */
    uint32_t *vals;  /**< slot values; UINT32_MAX marks an empty slot */
    size_t cap;      /**< slots (power of two or 0) */
    size_t count;    /**< keys held (both parts) */
    size_t hcount;   /**< ... of which in the slots */
    uint32_t *dense; /**< [ndense] value of key k < ndense; UINT32_MAX: none */
    size_t ndense;   /**< power of two or 0; keys below it are never in the slots */
} sw_imap_t;

/** @brief Initialise an empty map (no allocation). */
void sw_imap_init(sw_imap_t *map);
/** @brief Free storage; the map is empty and reusable. */
void sw_imap_clear(sw_imap_t *map);
/** @brief Look up @p key. @returns true and sets *val when present. */
bool sw_imap_get(const sw_imap_t *map, int64_t key, uint32_t *val);
/** @brief Insert or overwrite (@p val must not be UINT32_MAX). */
void sw_imap_put(sw_imap_t *map, int64_t key, uint32_t val);
/** @brief Remove @p key if present. @returns true when it was present. */
bool sw_imap_del(sw_imap_t *map, int64_t key);
/** @brief Bytes of memory held. */
size_t sw_imap_bytes(const sw_imap_t *map);

#endif /* SW_IMAP_H */
