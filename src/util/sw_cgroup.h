/*
 * The container's memory limit, as the kernel's cgroup files say it
 * (v2: memory.max; v1: memory/memory.limit_in_bytes), so that the default
 * memory budget follows the pod's limit; and the small-file reader the CPU
 * quota (sw_cpus.h) shares. Reads files only; no globals.
 */
#ifndef SW_CGROUP_H
#define SW_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * @brief Reads a small file (a cgroup setting, /proc/self/cgroup) into
 *        @p buf, NUL-terminated, at most @p size - 1 bytes.
 * @returns false when it does not exist or cannot be opened.
 */
bool sw_cgroup_read_file(const char *path, char *buf, size_t size);

/**
 * @brief The memory limit of the cgroup mounted at @p root (normally
 *        "/sys/fs/cgroup"): v2's memory.max, else v1's
 *        memory/memory.limit_in_bytes.
 * @returns bytes, or 0 when there is none ("max", a v1 "unlimited" value
 *          of 2^62 or more, no such file).
 */
int64_t sw_cgroup_memory_limit(const char *root);

/** The smallest prefetch sw_cgroup_prefetch_kb() lowers to (kB a partition). */
#define SW_PREFETCH_MIN_KB 1024

/**
 * @brief What a consumer may prefetch within a memory limit: @p kb
 *        (queued.max.messages.kbytes, per partition) over @p partitions,
 *        beside @p budget bytes of engine state (max.memory.bytes), must fit
 *        @p limit less a quarter (the process, librdkafka's buffers beyond
 *        the queues, the producer's queue, the allocator's slack).
 * @returns @p kb when it fits (or @p limit is 0: none), else the largest
 *          that fits (at least SW_PREFETCH_MIN_KB), with the reason in
 *          @p why (empty when it fits).
 */
int64_t sw_cgroup_prefetch_kb(int64_t limit, int64_t budget, int64_t kb, int partitions, char *why,
                              size_t why_size);

#endif /* SW_CGROUP_H */
