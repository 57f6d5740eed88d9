/*
 * Huge-page backed allocation (see sw_alloc.h): aligned_alloc() plus, on
 * Linux, madvise(MADV_HUGEPAGE) so that transparent huge pages back the
 * block even when the system enables them only on request. State touched
 * at random (one rank's window per event among thousands) then costs far
 * fewer TLB misses. Where huge pages are unavailable it is plain memory.
 */
#define _DEFAULT_SOURCE
#include "sw_alloc.h"

#include <stdlib.h>

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
