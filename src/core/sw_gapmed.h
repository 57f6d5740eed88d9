/*
 * Internal to the core: the exact median of a job's positive timestamp gaps
 * (SPEC 3.4) without a sorted structure of all of them. The gaps themselves
 * live in the windows; this keeps their count and, once a median has been
 * asked for, a bracket [lo, hi] of value buckets around it: exact counts of
 * the gaps below and above it, and the gaps inside it in a sw_mset. A gap
 * outside the bracket costs a counter; a median outside it (or before the
 * first query) costs one rebuild from the windows (two passes over them,
 * driven by the caller). Pure: no I/O, no globals.
 */
#ifndef SW_GAPMED_H
#define SW_GAPMED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_mset.h"

/** Sub-buckets per power of two (log2): buckets are ~0.1% wide. */
#define SW_GAPMED_SUB 10
/** Number of value buckets (the rebuild's histogram has this many). */
#define SW_GAPMED_BUCKETS ((64 - SW_GAPMED_SUB) << SW_GAPMED_SUB)

/** The gap median; zero-initialise or sw_gapmed_init(). Fields private. */
typedef struct sw_gapmed_s {
    size_t n;         /**< positive gaps in all (always exact) */
    bool valid;       /**< the bracket and the counts below are exact */
    uint32_t lo, hi;  /**< bracket: buckets lo..hi, inclusive */
    size_t n_below;   /**< gaps in buckets < lo */
    size_t n_above;   /**< gaps in buckets > hi */
    size_t ops;       /**< changes since the last query (valid only) */
    size_t built_ops; /**< changes since the last rebuild (valid only) */
    sw_mset_t mid;    /**< gaps in buckets lo..hi */
} sw_gapmed_t;

/** @brief Bucket of a positive value: monotonic, exact below 2^SUB. */
static inline uint32_t sw_gapmed_bucket(int64_t v)
{
    uint64_t u = (uint64_t)v;
    if (u < (1u << SW_GAPMED_SUB)) return (uint32_t)u;
    int e = 63 - __builtin_clzll(u);
    return (uint32_t)((e - SW_GAPMED_SUB + 1) << SW_GAPMED_SUB) |
           (uint32_t)((u >> (e - SW_GAPMED_SUB)) & ((1u << SW_GAPMED_SUB) - 1));
}

/** @brief Initialise empty (no allocation). */
void sw_gapmed_init(sw_gapmed_t *gm);
/** @brief Free everything; empty and reusable. */
void sw_gapmed_clear(sw_gapmed_t *gm);
/** @brief Drop the bracket (its memory too); the count stays. */
void sw_gapmed_invalidate(sw_gapmed_t *gm);
/** @brief Bytes of memory held beyond the struct. */
static inline size_t sw_gapmed_bytes(const sw_gapmed_t *gm)
{
    return sw_mset_bytes(&gm->mid);
}
/** @brief Number of gaps. */
static inline size_t sw_gapmed_size(const sw_gapmed_t *gm)
{
    return gm->n;
}

/** @brief Slow path of sw_gapmed_add/del: a change inside the bracket. */
void sw_gapmed_change(sw_gapmed_t *gm, int64_t v, bool add);

/** @brief Add one gap (v > 0). */
static inline void sw_gapmed_add(sw_gapmed_t *gm, int64_t v)
{
    gm->n++;
    if (gm->valid) sw_gapmed_change(gm, v, true);
}

/** @brief Remove one gap (v > 0) that was added. */
static inline void sw_gapmed_del(sw_gapmed_t *gm, int64_t v)
{
    gm->n--;
    if (gm->valid) sw_gapmed_change(gm, v, false);
}

/**
 * @brief The two middle gaps: a = the ((n-1)/2)-th and b = the (n/2)-th
 *        smallest (0-based), n = size > 0.
 * @returns false when the bracket cannot answer: rebuild, then ask again.
 */
bool sw_gapmed_middle(sw_gapmed_t *gm, int64_t *a, int64_t *b);

/**
 * Rebuild from every gap, in two passes over them by the caller:
 *   sw_gapmed_hist_add(hist, v) for each gap (hist zeroed, SW_GAPMED_BUCKETS),
 *   sw_gapmed_rebuild_begin(gm, hist),
 *   sw_gapmed_rebuild_add(gm, v) for each gap again,
 * after which sw_gapmed_middle() answers (size > 0). Both passes must see
 * the same gaps; the first pass's total becomes the size.
 */
static inline void sw_gapmed_hist_add(uint64_t *hist, int64_t v)
{
    hist[sw_gapmed_bucket(v)]++;
}

/** @brief Choose the bracket around the median from the histogram; the
 *         size becomes the histogram's total. */
void sw_gapmed_rebuild_begin(sw_gapmed_t *gm, const uint64_t *hist);

/** @brief Second pass: keep @p v when it falls inside the bracket. */
static inline void sw_gapmed_rebuild_add(sw_gapmed_t *gm, int64_t v)
{
    uint32_t b = sw_gapmed_bucket(v);
    if (b >= gm->lo && b <= gm->hi) sw_mset_insert(&gm->mid, v);
}

#endif /* SW_GAPMED_H */
