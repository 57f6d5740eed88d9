/*
 * String interning: equal byte strings get the same small id, so hot paths
 * compare and hash integers. Interned bytes never move while the table
 * lives. Id 0 is never handed out (callers use it for "none").
 */
#ifndef SW_INTERN_H
#define SW_INTERN_H

#include <stdint.h>
#include <string.h>

#include "sw_arena.h"
#include "sw_hash.h"
#include "sw_types.h"

/** The table; its fields are private to sw_intern.c (here so that
 *  sw_intern_get() inlines: the engine reads a source's strings per sample). */
typedef struct sw_intern_s {
    /* String storage: chunks packed without alignment, each string NUL
     * terminated after its length, one byte before it (or, from 255 bytes
     * on, 0xff there and 8 bytes of length before that): 8 bytes an id in
     * strs rather than a 16-byte view (a wide job interns a session per
     * rank). */
    void *chunks;      /* newest chunk; each starts with the previous one's address */
    char *cur;         /* free bytes of the newest chunk */
    size_t left;       /* ... and their number */
    size_t total;      /* bytes of all chunks */
    const char **strs; /* id -> its bytes; index 0 unused */
    uint32_t n;        /* ids in use, including the unused 0 */
    uint32_t cap_ids;
    uint32_t *slots;   /* hash slots holding ids; 0 = empty */
    size_t nslots;     /* power of two */
    sw_hash_key_t key; /* SipHash key */
} sw_intern_t;

/** @brief New empty table. @returns caller frees with sw_intern_destroy(). */
sw_intern_t *sw_intern_new(void);

/** @brief As sw_intern_new(), hashing with @p key (the process's key: see
 *         sw_hash.h) so that input strings cannot be chosen to collide. */
sw_intern_t *sw_intern_new_keyed(sw_hash_key_t key);

/** @brief The key @p tab hashes with. */
sw_hash_key_t sw_intern_key(const sw_intern_t *tab);
/** @brief Free the table (accepts NULL). */
void sw_intern_destroy(sw_intern_t *tab);
/** @brief Id of @p s, adding a copy when new. @returns id >= 1. */
uint32_t sw_intern_add(sw_intern_t *tab, sw_str_t s);
/** @brief Id of @p s, or 0 when not interned. */
uint32_t sw_intern_find(const sw_intern_t *tab, sw_str_t s);
/** @brief The string of an id (borrowed: valid while the table lives);
 *         "" for 0 and unknown ids. */
static inline sw_str_t sw_intern_get(const sw_intern_t *tab, uint32_t id)
{
    if (id == 0 || id >= tab->n) {
        sw_str_t none = {"", 0};
        return none;
    }
    const unsigned char *p = (const unsigned char *)tab->strs[id];
    sw_str_t s = {(const char *)p, p[-1]};
    if (p[-1] == 0xff) {
        uint64_t len;
        memcpy(&len, p - 9, sizeof(len));
        s.len = (size_t)len;
    }
    return s;
}
/** @brief Number of strings interned. */
uint32_t sw_intern_count(const sw_intern_t *tab);
/** @brief Bytes of memory held by the table. */
size_t sw_intern_bytes(const sw_intern_t *tab);

#endif /* SW_INTERN_H */
