/*
 * Huge-page backed allocation (see sw_alloc.h): aligned_alloc() plus, on
 * Linux, madvise(MADV_HUGEPAGE) so that transparent huge pages back the
 * block even when the system enables them only on request. State touched
 * at random (one rank's window per event among thousands) then costs far
 * fewer TLB misses. Where huge pages are unavailable it is plain memory.
 * sw_huge_grow(): a growing array of such pages, on Linux a mapping of
 * its own that mremap() moves instead of copying.
 */
#define _DEFAULT_SOURCE
#include "sw_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __linux__
#include <sys/mman.h>
#endif

void *sw_malloc_huge(size_t size)
{
    size_t n = (size + SW_HUGE_BYTES - 1) / SW_HUGE_BYTES * SW_HUGE_BYTES;
    void *p = aligned_alloc(SW_HUGE_BYTES, n ? n : SW_HUGE_BYTES);
    if (!p) return sw_malloc(n ? n : SW_HUGE_BYTES); /* aborts if really out of memory */
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    (void)madvise(p, n ? n : SW_HUGE_BYTES, MADV_HUGEPAGE); /* a hint: failure is harmless */
#endif
    return p;
}

void *sw_huge_grow(void *p, size_t *cap, size_t size)
{
    size_t n = (size + SW_HUGE_BYTES - 1) / SW_HUGE_BYTES * SW_HUGE_BYTES;
    if (!n) n = SW_HUGE_BYTES;
    if (p && n <= *cap) return p;
#if defined(__linux__) && defined(MREMAP_MAYMOVE)
    void *m = p ? mremap(p, *cap, n, MREMAP_MAYMOVE)
                : mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        fprintf(stderr, "stormwatch: out of memory allocating %zu bytes\n", n);
        abort();
    }
#if defined(MADV_HUGEPAGE)
    if (!p) (void)madvise(m, n, MADV_HUGEPAGE); /* a hint: failure is harmless */
#endif
#else
    void *m = sw_malloc_huge(n);
    if (p) {
        memcpy(m, p, *cap);
        free(p);
    }
#endif
    *cap = n;
    return m;
}

void sw_huge_free(void *p, size_t cap)
{
    if (!p) return;
#if defined(__linux__) && defined(MREMAP_MAYMOVE)
    munmap(p, cap);
#else
    (void)cap;
    free(p);
#endif
}
