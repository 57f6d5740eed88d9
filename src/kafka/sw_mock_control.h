/*
 * Fault injection into librdkafka's mock cluster by text commands, the
 * protocol of `stormwatch mock --control` (README, Development), as a
 * module of its own so that it is tested without a process:
 *   topic NAME PARTITIONS          broker down|up BROKER
 *   broker rtt BROKER MS           errors REQUEST COUNT ERRNAME[,ERRNAME...]
 *   clear [REQUEST]                leader TOPIC PARTITION BROKER
 *   coordinator group|transaction KEY BROKER           quit
 * BROKER is 1..brokers or -1 (all); REQUEST a Kafka API name (Produce,
 * Fetch, OffsetCommit, ...); ERRNAME a librdkafka error name.
 */
#ifndef SW_MOCK_CONTROL_H
#define SW_MOCK_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

#include "sw_kafka.h"

/** A control session: the cluster (borrowed) and its broker count. */
typedef struct sw_mockctl_s {
    sw_mock_t *m;
    int brokers;
    bool quit; /**< set by the `quit` command */
} sw_mockctl_t;

/**
 * @brief Run one command (the line is split in place).
 * @returns true when it was carried out ("ok"); false with the reason in
 *          @p errstr (the command changed nothing).
 */
bool sw_mockctl_line(sw_mockctl_t *mk, char *line, char *errstr, size_t errstr_size);

/** @brief Whether s[0..n) is a Kafka topic name (1..249 of [a-zA-Z0-9._-], not "." or ".."). */
bool sw_mock_topic_name_ok(const char *s, size_t n);

#endif /* SW_MOCK_CONTROL_H */
