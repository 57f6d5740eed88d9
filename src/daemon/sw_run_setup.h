/* The daemon's start (sw_run_setup.c): clients, topics, the registry's alert schema. Internal to the daemon. */
#ifndef SW_RUN_SETUP_H
#define SW_RUN_SETUP_H

#include "sw_run_int.h"

int sw_run_topic_partitions(run_t *r, const char *topic);
/* The group consumer's callbacks: the loop's (sw_run.c), registered by
 * sw_run_setup() on the consumer it makes. */
typedef struct sw_run_group_cbs_s {
    void (*rebalance)(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                      rd_kafka_topic_partition_list_t *list, void *opaque);
    void (*offset_commit)(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                          rd_kafka_topic_partition_list_t *offsets, void *opaque);
} sw_run_group_cbs_t;

int sw_run_setup(run_t *r, const sw_run_group_cbs_t *cbs);
int sw_run_registry_alert_id(run_t *r);

#endif /* SW_RUN_SETUP_H */
