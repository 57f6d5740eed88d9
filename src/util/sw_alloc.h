/*
 * Allocation wrappers. On out-of-memory they print the requested size to
 * stderr and abort(), so callers never check for NULL. This is the only
 * place the core may reach stdio, and only on the way to abort().
 */
#ifndef SW_ALLOC_H
#define SW_ALLOC_H

#include <stddef.h>

/** @brief malloc() that aborts on failure. @returns caller frees with free(). */
void *sw_malloc(size_t size);
/** @brief calloc() that aborts on failure. @returns caller frees with free(). */
void *sw_calloc(size_t nmemb, size_t size);
/** @brief realloc() that aborts on failure (size 0 frees and returns NULL). */
void *sw_realloc(void *ptr, size_t size);
/** @brief realloc() of an array of @p nmemb elements, checking overflow. */
void *sw_reallocarray(void *ptr, size_t nmemb, size_t size);
/** @brief strdup() that aborts on failure. @returns caller frees with free(). */
char *sw_strdup(const char *s);
/** @brief Copy @p len bytes into a new NUL-terminated string. Caller frees. */
char *sw_memdup0(const void *p, size_t len);

/** Size and alignment of the blocks of sw_malloc_huge(): one transparent
 *  huge page (x86-64, arm64 with 4 KiB pages). */
#define SW_HUGE_BYTES ((size_t)2 << 20)
/**
 * @brief @p size bytes rounded up to a multiple of SW_HUGE_BYTES, aligned
 *        to it, which the kernel is asked to back with huge pages where it
 *        can. Aborts on failure like sw_malloc().
 * @returns caller frees with free().
 */
void *sw_malloc_huge(size_t size);

/**
 * @brief Grow a block of sw_huge_grow() (@p p NULL: a new one) to at least
 *        @p size bytes, its content kept. On Linux the block is a mapping of
 *        its own, asked for huge pages, that grows with mremap(): its pages
 *        move, none is copied or zeroed again (a doubling array's copies
 *        otherwise write and fault in as many bytes again as it holds).
 *        Elsewhere a new sw_malloc_huge() block and a copy. Aborts on
 *        failure like sw_malloc().
 * @param cap in: the block's bytes (0 when @p p is NULL); out: the new
 *        block's (a multiple of SW_HUGE_BYTES).
 * @returns the block; free it with sw_huge_free().
 */
void *sw_huge_grow(void *p, size_t *cap, size_t size);

/** @brief Free a block of sw_huge_grow() of @p cap bytes (accepts NULL). */
void sw_huge_free(void *p, size_t cap);

/**
 * Make room for element @p n of the array @p ptr of capacity @p cap: the
 * capacity doubles (from @p init) until it holds index n, and the array is
 * reallocated (aborts on out-of-memory like the rest). One idiom for every
 * growing array.
 */
#define SW_GROW(ptr, n, cap, init)                                 \
    do {                                                           \
        if ((n) >= (cap)) {                                        \
            (cap) = (cap) ? (cap)*2 : (init);                      \
            while ((cap) <= (n)) (cap) *= 2;                       \
            (ptr) = sw_reallocarray((ptr), (cap), sizeof(*(ptr))); \
        }                                                          \
    } while (0)

#endif /* SW_ALLOC_H */
