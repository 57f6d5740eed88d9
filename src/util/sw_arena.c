/*
 * Bump allocator: chunks of growing size, freed all at once. Used for
 * per-record results so that building an alert costs no free() calls.
 */
#include "sw_arena.h"

#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"

struct sw_arena_chunk_s {
    sw_arena_chunk_t *next;
    size_t size; /* usable bytes in data */
    _Alignas(16) char data[];
};

void sw_arena_init(sw_arena_t *arena)
{
    arena->head = NULL;
    arena->used = 0;
    arena->total = 0;
}

void sw_arena_clear(sw_arena_t *arena)
{
    sw_arena_chunk_t *c = arena->head;
    while (c) {
        sw_arena_chunk_t *next = c->next;
        free(c);
        c = next;
    }
    sw_arena_init(arena);
}

void sw_arena_reset(sw_arena_t *arena)
{
    /* Keep only the newest (largest) chunk. */
    sw_arena_chunk_t *c = arena->head;
    if (!c) return;
    sw_arena_chunk_t *rest = c->next;
    while (rest) {
        sw_arena_chunk_t *next = rest->next;
        free(rest);
        rest = next;
    }
    c->next = NULL;
    arena->used = 0;
    arena->total = c->size;
}

void *sw_arena_alloc(sw_arena_t *arena, size_t size)
{
    size = (size + 7) & ~(size_t)7;
    if (!arena->head || arena->used + size > arena->head->size) {
        size_t csize = arena->head ? arena->head->size * 2 : 256; /* small first, then doubling */
        while (csize < size) csize *= 2;
        sw_arena_chunk_t *c = sw_malloc(sizeof(*c) + csize);
        c->next = arena->head;
        c->size = csize;
        arena->head = c;
        arena->used = 0;
        arena->total += csize;
    }
    void *p = arena->head->data + arena->used;
    arena->used += size;
    return p;
}

void *sw_arena_calloc(sw_arena_t *arena, size_t n, size_t size)
{
    size_t bytes = n * size;
    void *p = sw_arena_alloc(arena, bytes);
    if (bytes) memset(p, 0, bytes);
    return p;
}

sw_str_t sw_arena_str(sw_arena_t *arena, sw_str_t s)
{
    char *p = sw_arena_alloc(arena, s.len + 1);
    if (s.len) memcpy(p, s.ptr, s.len);
    p[s.len] = '\0';
    sw_str_t r = {p, s.len};
    return r;
}
