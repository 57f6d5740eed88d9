/*
 * Owner partitions (src/kafka/sw_partition.c) against two independent
 * implementations: vectors from python3-kafka's murmur2 (the Java client's
 * port), zlib's crc32 and FNV-1a (written out in Python; "a" is FNV's own
 * published 0xe40c292c) placed as Sarama does (Go: int32(h) % n, negated
 * when negative), and librdkafka's own partitioner functions
 * (rd_kafka_msg_partitioner_murmur2 / _consistent / _fnv1a, which ignore
 * their topic argument) on random keys and partition counts. Then the
 * choice of a group's partitioner from a sample of keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <librdkafka/rdkafka.h>

#include "sw_partition.h"
#include "sw_testlib.h"

/* Printed by: from kafka.partitioner.default import murmur2; zlib.crc32. */
static const struct {
    const char *key;
    size_t len;
    uint32_t murmur2, crc32, fnv1a;
} k_vectors[] = {
    {"", 0, 275646681U, 0U, 2166136261U},
    {"a", 1, 2731586172U, 3904355907U, 3826002220U},
    {"ab", 2, 316155434U, 2659403885U, 1294271946U},
    {"abc", 3, 479470107U, 891568578U, 440920331U},
    {"abcd", 4, 2971317748U, 3984772369U, 3459545533U},
    {"job-0", 5, 3373751509U, 994380457U, 818047657U},
    {"job-17", 6, 1968236083U, 3700761989U, 1342930675U},
    {"training/llama-70b/run-2026-11-23", 33, 4046288632U, 853723662U, 409645057U},
    {"\xff\x00\x80\x7f", 4, 2015219808U, 74984715U, 1162984851U},
};

/* Sarama's HashPartitioner (and kafka-go's Hash balancer), as Go computes it. */
static int32_t sarama_partition(uint32_t h, int32_t n)
{
    int32_t v = (int32_t)h; /* two's complement, as Go's int32() conversion */
    int32_t q = (int32_t)((int64_t)v % n);
    return q < 0 ? -q : q;
}

static void test_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(k_vectors) / sizeof(k_vectors[0]); i++) {
        SW_ASSERT_I64(sw_murmur2(k_vectors[i].key, k_vectors[i].len), k_vectors[i].murmur2);
        SW_ASSERT_I64(sw_fnv1a(k_vectors[i].key, k_vectors[i].len), k_vectors[i].fnv1a);
        for (int32_t n = 1; n <= 64; n++) {
            SW_ASSERT_I64(
                sw_partition_of(SW_PARTITIONER_MURMUR2, k_vectors[i].key, k_vectors[i].len, n),
                (int32_t)((k_vectors[i].murmur2 & 0x7fffffffu) % (uint32_t)n));
            SW_ASSERT_I64(
                sw_partition_of(SW_PARTITIONER_CRC32, k_vectors[i].key, k_vectors[i].len, n),
                (int32_t)(k_vectors[i].crc32 % (uint32_t)n));
            SW_ASSERT_I64(
                sw_partition_of(SW_PARTITIONER_FNV1A, k_vectors[i].key, k_vectors[i].len, n),
                sarama_partition(k_vectors[i].fnv1a, n));
        }
    }
    SW_ASSERT_I64(sw_partition_of(SW_PARTITIONER_MURMUR2, "x", 1, 0), -1);
}

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void test_same_as_librdkafka(void **state)
{
    (void)state;
    uint64_t s = 42;
    char key[300];
    for (int it = 0; it < 20000; it++) {
        size_t len = (size_t)(rng(&s) % sizeof(key));
        for (size_t i = 0; i < len; i++) key[i] = (char)rng(&s);
        int32_t n = (int32_t)(rng(&s) % 1000) + 1;
        SW_ASSERT_I64(sw_partition_of(SW_PARTITIONER_MURMUR2, key, len, n),
                      rd_kafka_msg_partitioner_murmur2(NULL, key, len, n, NULL, NULL));
        SW_ASSERT_I64(sw_partition_of(SW_PARTITIONER_CRC32, key, len, n),
                      rd_kafka_msg_partitioner_consistent(NULL, key, len, n, NULL, NULL));
        SW_ASSERT_I64(sw_partition_of(SW_PARTITIONER_FNV1A, key, len, n),
                      rd_kafka_msg_partitioner_fnv1a(NULL, key, len, n, NULL, NULL));
        SW_ASSERT_I64(sw_partition_of(SW_PARTITIONER_FNV1A, key, len, n),
                      sarama_partition(sw_fnv1a(key, len), n));
    }
}

/* Keys placed by partitioner @p by into @p n partitions: the choice finds
 * it, clearly, from 16 distinct keys; keys that every candidate places
 * alike (one partition) leave a tie (not clear; murmur2 first); a sample
 * that no candidate explains is not clear. */
static void test_choose(void **state)
{
    (void)state;
    for (int by = 0; by < SW_PARTITIONER__CNT; by++) {
        for (int32_t n = 2; n <= 64; n *= 2) {
            uint32_t fit[SW_PARTITIONER__CNT] = {0};
            char key[32];
            for (int j = 0; j < 16; j++) {
                int len = snprintf(key, sizeof(key), "job-%d-%d", by, j);
                int32_t q = sw_partition_of((sw_partitioner_t)by, key, (size_t)len, n);
                unsigned bits = sw_partition_fits(key, (size_t)len, q, n);
                SW_ASSERT_TRUE(bits & (1u << by));
                for (int c = 0; c < SW_PARTITIONER__CNT; c++) fit[c] += (bits >> c) & 1u;
            }
            bool clear;
            SW_ASSERT_I64(sw_partitioner_choose(fit, 16, &clear), by);
            SW_ASSERT_TRUE(clear);
        }
    }
    uint32_t all[SW_PARTITIONER__CNT] = {3, 3, 3};
    bool clear;
    SW_ASSERT_I64(sw_partitioner_choose(all, 3, &clear), SW_PARTITIONER_MURMUR2);
    SW_ASSERT_FALSE(clear);
    uint32_t none[SW_PARTITIONER__CNT] = {2, 3, 1};
    SW_ASSERT_I64(sw_partitioner_choose(none, 40, &clear), SW_PARTITIONER_CRC32);
    SW_ASSERT_FALSE(clear);
    SW_ASSERT_I64(sw_partition_fits("job-0", 5, 0, 1), 7);
}

static void test_classify(void **state)
{
    (void)state;
    sw_str_t job = sw_str("job-0");
    int32_t own = sw_partition_of(SW_PARTITIONER_MURMUR2, "job-0", 5, 8);
    SW_ASSERT_I64(sw_route_classify("job-0", 5, job, false, own, 8, SW_PARTITIONER_MURMUR2),
                  SW_ROUTE_LOCAL);
    SW_ASSERT_I64(
        sw_route_classify("job-0", 5, job, false, (own + 1) % 8, 8, SW_PARTITIONER_MURMUR2),
        SW_ROUTE_MISPLACED);
    SW_ASSERT_I64(sw_route_classify(NULL, 0, job, false, own, 8, SW_PARTITIONER_MURMUR2),
                  SW_ROUTE_MISKEYED);
    SW_ASSERT_I64(sw_route_classify("node-7", 6, job, false, own, 8, SW_PARTITIONER_MURMUR2),
                  SW_ROUTE_MISKEYED);
    SW_ASSERT_I64(sw_route_classify("job-00", 6, job, false, own, 8, SW_PARTITIONER_MURMUR2),
                  SW_ROUTE_MISKEYED);
    /* A null job_id is keyed by the empty key. */
    int32_t own_null = sw_partition_of(SW_PARTITIONER_CRC32, "", 0, 8);
    SW_ASSERT_I64(sw_route_classify("", 0, job, true, own_null, 8, SW_PARTITIONER_CRC32),
                  SW_ROUTE_LOCAL);
    SW_ASSERT_I64(sw_route_classify(NULL, 0, job, true, own_null, 8, SW_PARTITIONER_CRC32),
                  SW_ROUTE_MISKEYED);
}

static void test_names(void **state)
{
    (void)state;
    sw_partitioner_t p;
    SW_ASSERT_TRUE(sw_partitioner_parse("consistent_random", &p));
    SW_ASSERT_I64(p, SW_PARTITIONER_CRC32);
    SW_ASSERT_TRUE(sw_partitioner_parse("murmur2_random", &p));
    SW_ASSERT_I64(p, SW_PARTITIONER_MURMUR2);
    SW_ASSERT_TRUE(sw_partitioner_parse("fnv1a", &p));
    SW_ASSERT_I64(p, SW_PARTITIONER_FNV1A);
    SW_ASSERT_FALSE(sw_partitioner_parse("fnv1", &p));
    SW_ASSERT_FALSE(sw_partitioner_parse(NULL, &p));
    SW_ASSERT_STREQ(sw_partitioner_name(SW_PARTITIONER_CRC32), "crc32");
    SW_ASSERT_STREQ(sw_route_name(SW_ROUTE_MISPLACED), "misplaced");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),  cmocka_unit_test(test_same_as_librdkafka),
        cmocka_unit_test(test_classify), cmocka_unit_test(test_choose),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
