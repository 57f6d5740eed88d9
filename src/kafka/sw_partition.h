/*
 * Which partition a job belongs to, and whether an input message sits where
 * its job's engine is. Kafka producers place a keyed message with a
 * partitioner: Java clients, kafka-python, franz-go, kafkajs and
 * librdkafka's murmur2 partitioners use Kafka's murmur2 hash; librdkafka's
 * default (consistent_random: kcat, confluent-kafka, Fluent Bit, Vector,
 * rsyslog's omkafka) uses CRC-32; Sarama's and kafka-go's hash partitioners
 * (and librdkafka's fnv1a) use 32-bit FNV-1a. A job's owner partition is the
 * partition its job_id key gets under the group's partitioner; a message
 * elsewhere, or keyed by something else, is not where that job's engine
 * runs. Which partitioner that is, the daemon decides once per group
 * (sw_partitioner_choose() below, docs/keying-auto.md). Pure: no I/O.
 */
#ifndef SW_PARTITION_H
#define SW_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_types.h"

typedef enum sw_partitioner_e {
    SW_PARTITIONER_MURMUR2 = 0, /**< Kafka's default (Java clients, librdkafka murmur2[_random]) */
    SW_PARTITIONER_CRC32 = 1,   /**< librdkafka's default consistent[_random] (kcat, Fluent Bit) */
    SW_PARTITIONER_FNV1A = 2,   /**< Sarama's and kafka-go's hash partitioners, librdkafka fnv1a */
    SW_PARTITIONER__CNT
} sw_partitioner_t;

typedef enum sw_route_e {
    SW_ROUTE_LOCAL = 0,     /**< keyed by its job_id and on that job's owner partition */
    SW_ROUTE_MISKEYED = 1,  /**< no key, or a key other than its job_id */
    SW_ROUTE_MISPLACED = 2, /**< keyed by its job_id, but another partitioner placed it */
    SW_ROUTE__CNT
} sw_route_t;

/** @brief Kafka's murmur2 hash of a key (the Java client's Utils.murmur2). */
uint32_t sw_murmur2(const void *key, size_t len);

/**
 * @brief The partition a key gets from a partitioner, as the producers'
 *        clients compute it.
 * @param key borrowed; NULL with len 0 is the empty key.
 * @returns 0..partition_cnt-1, or -1 when partition_cnt < 1.
 */
int32_t sw_partition_of(sw_partitioner_t p, const void *key, size_t len, int32_t partition_cnt);

/** @brief 32-bit FNV-1a of a key (offset basis 0x811c9dc5, prime 0x01000193). */
uint32_t sw_fnv1a(const void *key, size_t len);

/** @brief "murmur2", "crc32" or "fnv1a" (the property's values). */
const char *sw_partitioner_name(sw_partitioner_t p);

/**
 * @brief Parse a partitioner name: librdkafka's names are accepted too
 *        (murmur2, murmur2_random -> MURMUR2; consistent, consistent_random,
 *        crc32 -> CRC32; fnv1a, fnv1a_random -> FNV1A).
 * @returns true and sets *p, or false for anything else.
 */
bool sw_partitioner_parse(const char *name, sw_partitioner_t *p);

/**
 * @brief Classify an input message by its key and place.
 * @param key, key_len the message key (borrowed; NULL = no key).
 * @param job the event's job_id; job_null for a null job_id, whose key is
 *        the empty key.
 * @param partition, partition_cnt where the message was read.
 */
sw_route_t sw_route_classify(const void *key, size_t key_len, sw_str_t job, bool job_null,
                             int32_t partition, int32_t partition_cnt, sw_partitioner_t p);

/** @brief "local", "miskeyed" or "misplaced". */
const char *sw_route_name(sw_route_t r);

/**
 * @brief Which partitioners place @p key (borrowed; NULL = the empty key) in
 *        @p partition of @p partition_cnt.
 * @returns a bit per sw_partitioner_t (1u << p).
 */
unsigned sw_partition_fits(const void *key, size_t len, int32_t partition, int32_t partition_cnt);

/**
 * @brief The partitioner a group's producers use, from a sample of distinct
 *        keys read where their producers put them: @p fit[p] of the @p keys
 *        sampled are where partitioner p places them. The best fit wins;
 *        a tie goes to the first in sw_partitioner_t's order (murmur2,
 *        Kafka's default, first). Deterministic: equal samples, equal answer.
 * @param clear set to whether the sample tells the winner apart: the
 *        winner places at least 90% of the keys (at least one) and every
 *        other candidate fewer. Producers that all use one partitioner put
 *        every key where it places them, so only a tie (one partition, or a
 *        few keys that two candidates happen to place alike) leaves the
 *        answer open: more keys tell them apart.
 */
sw_partitioner_t sw_partitioner_choose(const uint32_t fit[SW_PARTITIONER__CNT], uint32_t keys,
                                       bool *clear);

#endif /* SW_PARTITION_H */
