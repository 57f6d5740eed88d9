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
