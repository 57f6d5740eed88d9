/*
 * Internal to the core: an order-statistic multiset of int64 values for
 * the exact median of SPEC 3.4 under sliding windows. Values live in
 * sorted blocks of at most SW_MSET_BLOCK entries; a Fenwick tree over the
 * block sizes finds the k-th value. Insert and remove cost a binary search
 * plus a move inside one block; memory stays close to 8-16 bytes a value.
 * Pure: no I/O, no globals.
 */
#ifndef SW_MSET_H
#define SW_MSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SW_MSET_BLOCK 256

/** The multiset; zero-initialise or sw_mset_init(). Fields are private. */
typedef struct sw_mset_s {
    int64_t **blk;  /**< blocks, each sorted, capacity SW_MSET_BLOCK */
    uint32_t *cnt;  /**< values per block */
    int64_t *mins;  /**< first value of each block */
    uint32_t *fen;  /**< Fenwick tree over cnt (1-based) */
    size_t nb;      /**< blocks in use */
    size_t capb;    /**< block slots allocated */
    size_t n;       /**< values in all */
    bool fen_dirty; /**< fen must be rebuilt before a query */
} sw_mset_t;

/** @brief Initialise empty (no allocation). */
void sw_mset_init(sw_mset_t *ms);
/** @brief Free everything; the set is empty and reusable. */
void sw_mset_clear(sw_mset_t *ms);
/** @brief Add one value. */
void sw_mset_insert(sw_mset_t *ms, int64_t v);
/** @brief Remove one occurrence of @p v. @returns false when absent. */
bool sw_mset_remove(sw_mset_t *ms, int64_t v);
/** @brief The k-th smallest value, 0-based (k < size). */
int64_t sw_mset_kth(sw_mset_t *ms, size_t k);
/** @brief Number of values. */
static inline size_t sw_mset_size(const sw_mset_t *ms)
{
    return ms->n;
}
/** @brief Bytes of memory held. */
size_t sw_mset_bytes(const sw_mset_t *ms);

/** Distinct values a sw_vcount keeps as (value, count) pairs before it
 *  moves everything into a sw_mset. */
#define SW_VCOUNT_SMALL 64

/**
 * A multiset for values that repeat a lot (sampling intervals: usually one
 * or two distinct values per job): a sorted array of (value, count) while
 * there are at most SW_VCOUNT_SMALL distinct values, a sw_mset beyond,
 * so the worst case stays O(log n) plus one block move.
 */
typedef struct sw_vcount_s {
    int64_t val[SW_VCOUNT_SMALL];  /**< distinct values, ascending (small mode) */
    uint64_t cnt[SW_VCOUNT_SMALL]; /**< their counts */
    size_t nd;                     /**< distinct values (small mode) */
    size_t n;                      /**< values in all */
    bool big;                      /**< values live in ms */
    sw_mset_t ms;                  /**< big mode storage */
} sw_vcount_t;

/** @brief Initialise empty. */
void sw_vcount_init(sw_vcount_t *vc);
/** @brief Free everything; empty and reusable. */
void sw_vcount_clear(sw_vcount_t *vc);
/** @brief Add one value. */
void sw_vcount_insert(sw_vcount_t *vc, int64_t v);
/** @brief Remove one occurrence. @returns false when absent. */
bool sw_vcount_remove(sw_vcount_t *vc, int64_t v);
/** @brief The k-th smallest value, 0-based (k < size). */
int64_t sw_vcount_kth(sw_vcount_t *vc, size_t k);
/** @brief Number of values. */
static inline size_t sw_vcount_size(const sw_vcount_t *vc)
{
    return vc->n;
}
/** @brief Bytes of memory held beyond the struct. */
static inline size_t sw_vcount_bytes(const sw_vcount_t *vc)
{
    return vc->big ? sw_mset_bytes(&vc->ms) : 0;
}

#endif /* SW_MSET_H */
