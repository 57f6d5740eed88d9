/*
 * int64 -> uint32 hash map with linear probing and backward-shift
 * deletion (no tombstones). Pure: no I/O, no globals.
 */
#include "sw_imap.h"

#include <stdlib.h>

#include "sw_alloc.h"

#define EMPTY UINT32_MAX

static inline size_t imap_hash(int64_t key, size_t mask)
{
    uint64_t x = (uint64_t)key;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & mask;
}

void sw_imap_init(sw_imap_t *map)
{
    map->keys = NULL;
    map->vals = NULL;
    map->cap = 0;
    map->count = 0;
}

void sw_imap_clear(sw_imap_t *map)
{
    free(map->keys);
    free(map->vals);
    sw_imap_init(map);
}

static void imap_rehash(sw_imap_t *map, size_t cap)
{
    int64_t *keys = sw_malloc(cap * sizeof(*keys));
    uint32_t *vals = sw_malloc(cap * sizeof(*vals));
    for (size_t i = 0; i < cap; i++) vals[i] = EMPTY;
    for (size_t i = 0; i < map->cap; i++) {
        if (map->vals[i] == EMPTY) continue;
        size_t j = imap_hash(map->keys[i], cap - 1);
        while (vals[j] != EMPTY) j = (j + 1) & (cap - 1);
        keys[j] = map->keys[i];
        vals[j] = map->vals[i];
    }
    free(map->keys);
    free(map->vals);
    map->keys = keys;
    map->vals = vals;
    map->cap = cap;
}

bool sw_imap_get(const sw_imap_t *map, int64_t key, uint32_t *val)
{
    if (!map->cap) return false;
    size_t mask = map->cap - 1;
    for (size_t i = imap_hash(key, mask);; i = (i + 1) & mask) {
        if (map->vals[i] == EMPTY) return false;
        if (map->keys[i] == key) {
            *val = map->vals[i];
            return true;
        }
    }
}

void sw_imap_put(sw_imap_t *map, int64_t key, uint32_t val)
{
    if ((map->count + 1) * 4 > map->cap * 3)
        imap_rehash(map, map->cap ? map->cap * 2 : 4); /* small first: many maps hold one key */
    size_t mask = map->cap - 1;
    size_t i = imap_hash(key, mask);
    while (map->vals[i] != EMPTY && map->keys[i] != key) i = (i + 1) & mask;
    if (map->vals[i] == EMPTY) map->count++;
    map->keys[i] = key;
    map->vals[i] = val;
}

bool sw_imap_del(sw_imap_t *map, int64_t key)
{
    if (!map->cap) return false;
    size_t mask = map->cap - 1;
    size_t i = imap_hash(key, mask);
    while (map->vals[i] != EMPTY && map->keys[i] != key) i = (i + 1) & mask;
    if (map->vals[i] == EMPTY) return false;
    /* Backward-shift the following cluster so probing stays correct. */
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (map->vals[j] == EMPTY) break;
        size_t home = imap_hash(map->keys[j], mask);
        /* Move j into the hole i when home is not in (i, j] cyclically. */
        bool between = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            map->keys[i] = map->keys[j];
            map->vals[i] = map->vals[j];
            i = j;
        }
    }
    map->vals[i] = EMPTY;
    map->count--;
    return true;
}

size_t sw_imap_bytes(const sw_imap_t *map)
{
    return map->cap * (sizeof(int64_t) + sizeof(uint32_t));
}
