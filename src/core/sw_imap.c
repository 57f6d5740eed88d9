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
    map->hcount = 0;
    map->dense = NULL;
    map->ndense = 0;
}

void sw_imap_clear(sw_imap_t *map)
{
    free(map->keys);
    free(map->vals);
    free(map->dense);
    sw_imap_init(map);
}

/* The slots again, @p cap of them, without the keys below ndense. */
static void imap_rehash(sw_imap_t *map, size_t cap)
{
    int64_t *keys = sw_malloc(cap * sizeof(*keys));
    uint32_t *vals = sw_malloc(cap * sizeof(*vals));
    for (size_t i = 0; i < cap; i++) vals[i] = EMPTY;
    size_t n = 0;
    for (size_t i = 0; i < map->cap; i++) {
        if (map->vals[i] == EMPTY) continue;
        if ((uint64_t)map->keys[i] < map->ndense) continue;
        size_t j = imap_hash(map->keys[i], cap - 1);
        while (vals[j] != EMPTY) j = (j + 1) & (cap - 1);
        keys[j] = map->keys[i];
        vals[j] = map->vals[i];
        n++;
    }
    free(map->keys);
    free(map->vals);
    map->keys = keys;
    map->vals = vals;
    map->cap = cap;
    map->hcount = n;
}

/* The direct table grown to hold @p key; the slots' keys it now covers
 * move over. */
static void dense_grow(sw_imap_t *map, int64_t key)
{
    size_t n = map->ndense ? map->ndense * 2 : 16;
    while (n <= (uint64_t)key) n *= 2;
    map->dense = sw_reallocarray(map->dense, n, sizeof(*map->dense));
    for (size_t i = map->ndense; i < n; i++) map->dense[i] = EMPTY;
    map->ndense = n;
    size_t moved = 0;
    for (size_t i = 0; i < map->cap; i++) {
        if (map->vals[i] != EMPTY && (uint64_t)map->keys[i] < n) {
            map->dense[map->keys[i]] = map->vals[i];
            moved++;
        }
    }
    if (moved) imap_rehash(map, map->cap);
}

bool sw_imap_get(const sw_imap_t *map, int64_t key, uint32_t *val)
{
    if ((uint64_t)key < map->ndense) {
        uint32_t v = map->dense[key];
        if (v == EMPTY) return false;
        *val = v;
        return true;
    }
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
    /* A key that keeps the direct table at least about half used goes there. */
    if (key >= 0 && (uint64_t)key >= map->ndense && (uint64_t)key < 2 * (uint64_t)map->count + 16)
        dense_grow(map, key);
    if ((uint64_t)key < map->ndense) {
        if (map->dense[key] == EMPTY) map->count++;
        map->dense[key] = val;
        return;
    }
    if ((map->hcount + 1) * 4 > map->cap * 3)
        imap_rehash(map, map->cap ? map->cap * 2 : 4); /* small first: many maps hold one key */
    size_t mask = map->cap - 1;
    size_t i = imap_hash(key, mask);
    while (map->vals[i] != EMPTY && map->keys[i] != key) i = (i + 1) & mask;
    if (map->vals[i] == EMPTY) {
        map->count++;
        map->hcount++;
    }
    map->keys[i] = key;
    map->vals[i] = val;
}

bool sw_imap_del(sw_imap_t *map, int64_t key)
{
    if ((uint64_t)key < map->ndense) {
        if (map->dense[key] == EMPTY) return false;
        map->dense[key] = EMPTY;
        map->count--;
        return true;
    }
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
    map->hcount--;
    return true;
}

size_t sw_imap_bytes(const sw_imap_t *map)
{
    return map->cap * (sizeof(int64_t) + sizeof(uint32_t)) + map->ndense * sizeof(uint32_t);
}
