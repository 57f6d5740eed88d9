/*
 * Owner partitions of jobs (see sw_partition.h). The hashes are the
 * producers' own: Kafka's murmur2 (seed 0x9747b28c, little-endian 4-byte
 * blocks, sign bit cleared before the modulo), CRC-32 as zlib computes it
 * (librdkafka's rd_crc32 is the same polynomial; the unsigned hash modulo
 * the count) and 32-bit FNV-1a with Sarama's placement (the hash as a
 * signed 32-bit integer, Go's truncating modulo, a negative result negated;
 * kafka-go and librdkafka's fnv1a place keys the same way). No I/O, no
 * state.
 */
#include "sw_partition.h"

#include <string.h>
#include <zlib.h>

uint32_t sw_murmur2(const void *key, size_t len)
{
    const uint32_t m = 0x5bd1e995u;
    const unsigned char *p = key;
    uint32_t h = 0x9747b28cu ^ (uint32_t)len;
    size_t i = 0;
    for (; i + 4 <= len; i += 4) {
        uint32_t k = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 |
                     (uint32_t)p[i + 3] << 24;
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
    }
    switch (len & 3) {
    case 3: h ^= (uint32_t)p[i + 2] << 16; /* fall through */
    case 2: h ^= (uint32_t)p[i + 1] << 8;  /* fall through */
    case 1:
        h ^= (uint32_t)p[i];
        h *= m;
        break;
    default: break;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

uint32_t sw_fnv1a(const void *key, size_t len)
{
    const unsigned char *p = key;
    uint32_t h = 0x811c9dc5u;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x01000193u;
    }
    return h;
}

int32_t sw_partition_of(sw_partitioner_t p, const void *key, size_t len, int32_t partition_cnt)
{
    if (partition_cnt < 1) return -1;
    if (!key) {
        key = "";
        len = 0;
    }
    uint32_t h;
    if (p == SW_PARTITIONER_CRC32) {
        uLong c = crc32(0L, Z_NULL, 0);
        const unsigned char *b = key;
        /* zlib takes uInt lengths: feed a long key in pieces. */
        while (len > 0) {
            uInt n = len > 0x40000000u ? 0x40000000u : (uInt)len;
            c = crc32(c, b, n);
            b += n;
            len -= n;
        }
        h = (uint32_t)c;
    } else if (p == SW_PARTITIONER_FNV1A) {
        /* int32(h) % n, negated when negative: |int32(h) % n|. */
        int64_t v = (int32_t)sw_fnv1a(key, len) % (int64_t)partition_cnt;
        return (int32_t)(v < 0 ? -v : v);
    } else {
        h = sw_murmur2(key, len) & 0x7fffffffu;
    }
    return (int32_t)(h % (uint32_t)partition_cnt);
}

const char *sw_partitioner_name(sw_partitioner_t p)
{
    switch (p) {
    case SW_PARTITIONER_CRC32: return "crc32";
    case SW_PARTITIONER_FNV1A: return "fnv1a";
    default: return "murmur2";
    }
}

bool sw_partitioner_parse(const char *name, sw_partitioner_t *p)
{
    static const struct {
        const char *name;
        sw_partitioner_t p;
    } k_names[] = {
        {"murmur2", SW_PARTITIONER_MURMUR2},
        {"murmur2_random", SW_PARTITIONER_MURMUR2},
        {"crc32", SW_PARTITIONER_CRC32},
        {"consistent", SW_PARTITIONER_CRC32},
        {"consistent_random", SW_PARTITIONER_CRC32},
        {"fnv1a", SW_PARTITIONER_FNV1A},
        {"fnv1a_random", SW_PARTITIONER_FNV1A},
    };
    for (size_t i = 0; name && i < sizeof(k_names) / sizeof(k_names[0]); i++)
        if (strcmp(name, k_names[i].name) == 0) {
            *p = k_names[i].p;
            return true;
        }
    return false;
}

sw_route_t sw_route_classify(const void *key, size_t key_len, sw_str_t job, bool job_null,
                             int32_t partition, int32_t partition_cnt, sw_partitioner_t p)
{
    /* A null job_id's key is the empty key; a message without a key is
     * mis-keyed even then, because its producer keyed nothing. */
    if (!key) return SW_ROUTE_MISKEYED;
    size_t jlen = job_null ? 0 : job.len;
    if (key_len != jlen || (jlen && memcmp(key, job.ptr, jlen) != 0)) return SW_ROUTE_MISKEYED;
    if (sw_partition_of(p, key, key_len, partition_cnt) != partition) return SW_ROUTE_MISPLACED;
    return SW_ROUTE_LOCAL;
}

const char *sw_route_name(sw_route_t r)
{
    switch (r) {
    case SW_ROUTE_LOCAL: return "local";
    case SW_ROUTE_MISKEYED: return "miskeyed";
    case SW_ROUTE_MISPLACED: return "misplaced";
    default: return "unknown";
    }
}

unsigned sw_partition_fits(const void *key, size_t len, int32_t partition, int32_t partition_cnt)
{
    unsigned bits = 0;
    for (int c = 0; c < SW_PARTITIONER__CNT; c++)
        if (sw_partition_of((sw_partitioner_t)c, key, len, partition_cnt) == partition)
            bits |= 1u << c;
    return bits;
}

sw_partitioner_t sw_partitioner_choose(const uint32_t fit[SW_PARTITIONER__CNT], uint32_t keys,
                                       bool *clear)
{
    int best = 0;
    for (int c = 1; c < SW_PARTITIONER__CNT; c++)
        if (fit[c] > fit[best]) best = c;
    bool apart = keys >= 1 && (uint64_t)fit[best] * 10 >= (uint64_t)keys * 9;
    for (int c = 0; c < SW_PARTITIONER__CNT && apart; c++)
        if (c != best && fit[c] >= fit[best]) apart = false;
    *clear = apart;
    return (sw_partitioner_t)best;
}
