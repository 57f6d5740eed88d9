/*
 * cgroup memory limit (see sw_cgroup.h). A file holds one number, or
 * "max" (v2, unlimited); v1 says unlimited with a page-rounded 2^63 - 1.
 */
#include "sw_cgroup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

bool sw_cgroup_read_file(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f) return false;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return true;
}

static int64_t read_limit(const char *root, const char *file)
{
    char path[1024], text[64];
    snprintf(path, sizeof(path), "%s/%s", root, file);
    if (!sw_cgroup_read_file(path, text, sizeof(text))) return 0;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || v <= 0 || v >= (1LL << 62)) return 0; /* "max", unlimited */
    return (int64_t)v;
}

int64_t sw_cgroup_memory_limit(const char *root)
{
    int64_t v = read_limit(root, "memory.max");
    return v ? v : read_limit(root, "memory/memory.limit_in_bytes");
}

int64_t sw_cgroup_prefetch_kb(int64_t limit, int64_t budget, int64_t kb, int partitions, char *why,
                              size_t why_size)
{
    if (why_size) why[0] = '\0';
    if (limit <= 0 || partitions <= 0 || kb <= 0) return kb;
    int64_t prefetch = kb * 1024 * partitions;
    int64_t room = limit - limit / 4 - budget;
    if (prefetch <= room) return kb;
    int64_t fit = room > 0 ? room / partitions / 1024 : 0;
    bool short_of_min = fit < SW_PREFETCH_MIN_KB;
    if (short_of_min) fit = SW_PREFETCH_MIN_KB;
    if (fit >= kb) return kb;
    snprintf(why, why_size,
             "kafka.consumer.queued.max.messages.kbytes=%lld over %d partitions may prefetch %lld "
             "MiB beside max.memory.bytes %lld MiB: more than the container's memory limit %lld "
             "MiB less a quarter for the rest of the process; lowered to %lld kB a partition "
             "(%lld MiB)%s",
             (long long)kb, partitions, (long long)(prefetch >> 20), (long long)(budget >> 20),
             (long long)(limit >> 20), (long long)fit, (long long)((fit * 1024 * partitions) >> 20),
             short_of_min ? "; still too much beside the engines: lower max.memory.bytes" : "");
    return fit;
}
