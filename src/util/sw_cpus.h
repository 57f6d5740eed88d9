/*
 * The CPUs a process may use: the cgroup CPU quota (v2 cpu.max, v1
 * cpu.cfs_quota_us / cpu.cfs_period_us) of the process's cgroup and its
 * ancestors, as Go's automaxprocs and the JVM's container support read it.
 * The root directories are arguments, so tests give fake trees. Reads
 * files only; never logs, never changes a cgroup.
 */
#ifndef SW_CPUS_H
#define SW_CPUS_H

#include <stddef.h>

#include "sw_err.h"

/**
 * @brief The CPU quota of the cgroup the process is in: the smallest
 *        quota/period over its cgroup and the ancestors up to @p root.
 * @param root the cgroup mount ("/sys/fs/cgroup"): cgroup v2 when it holds
 *        cgroup.controllers, else v1 with the cpu controller in root/cpu,
 *        root/cpu,cpuacct or root/cpuacct,cpu.
 * @param self_cgroup the process's cgroup list ("/proc/self/cgroup"). When
 *        the path it names is not under @p root (a container whose cgroup
 *        is mounted as the root), @p root itself is read.
 * @param cpus out: quota/period in CPUs, 0 when no level sets a quota.
 * @param src out: where it came from, e.g. "cgroup cpu.max 150000/100000";
 *        empty with no quota.
 * @returns SW_OK (also when there is no cgroup file at all: *cpus is 0),
 *          or SW_ERR_PARSE with @p errstr naming the file and its content.
 */
sw_err_t sw_cpus_quota(const char *root, const char *self_cgroup, double *cpus, char *src,
                       size_t src_size, char *errstr, size_t errstr_size);

/**
 * @brief The default worker.threads: the cgroup quota rounded up, bounded
 *        by @p allowed (the CPUs sched_getaffinity allows), else @p allowed.
 * @param why out: one clause saying what was chosen and why, e.g. "cgroup
 *        cpu.max 150000/100000 = 1.5 CPUs, rounded up"; an unreadable quota
 *        is said there too (the CPUs allowed are used then).
 * @returns at least 1.
 */
int sw_cpus_default_threads(const char *root, const char *self_cgroup, int allowed, char *why,
                            size_t why_size);

#endif /* SW_CPUS_H */
