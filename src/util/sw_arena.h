/*
 * A bump allocator for short-lived results (an analysis, a record) and for
 * strings that live as long as their owner. No I/O, no globals.
 */
#ifndef SW_ARENA_H
#define SW_ARENA_H

#include <stddef.h>

#include "sw_types.h"

typedef struct sw_arena_chunk_s sw_arena_chunk_t;

/** An arena; zero-initialise or use sw_arena_init(). */
typedef struct sw_arena_s {
    sw_arena_chunk_t *head; /**< newest chunk */
    size_t used;            /**< bytes used in head */
    size_t total;           /**< bytes allocated over all chunks */
} sw_arena_t;

/** @brief Initialise an empty arena (no allocation). */
void sw_arena_init(sw_arena_t *arena);
/** @brief Free every chunk; the arena is empty and reusable. */
void sw_arena_clear(sw_arena_t *arena);
/** @brief Forget all allocations but keep the largest chunk for reuse. */
void sw_arena_reset(sw_arena_t *arena);
/** @brief Allocate @p size bytes aligned to 8. @returns borrowed until reset/clear. */
void *sw_arena_alloc(sw_arena_t *arena, size_t size);
/** @brief Allocate a zeroed array of @p n elements of @p size bytes. */
void *sw_arena_calloc(sw_arena_t *arena, size_t n, size_t size);
/** @brief Copy a string view into the arena (NUL-terminated copy). */
sw_str_t sw_arena_str(sw_arena_t *arena, sw_str_t s);

#endif /* SW_ARENA_H */
