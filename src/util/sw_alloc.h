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
