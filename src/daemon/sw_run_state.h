/* State snapshots and restore (sw_run_state.c). Internal to the daemon. */
#ifndef SW_RUN_STATE_H
#define SW_RUN_STATE_H

#include "sw_run_int.h"

void sw_run_snapshot_start(run_t *r, part_t *p);
bool sw_run_snapshot_commit_ready(const part_t *p);
void sw_run_snapshot_commit(run_t *r, part_t *p, bool sync);
void sw_run_snapshots_tick(run_t *r, int64_t now);
void sw_run_snapshot_final(run_t *r, part_t *p);
void sw_run_restore_partition(run_t *r, part_t *p, const rd_kafka_topic_partition_t *c);
int64_t sw_run_start_offset(run_t *r, const part_t *p, const rd_kafka_topic_partition_t *c);
int sw_run_origin_snapshots(run_t *r, part_t **ps, int n, int64_t budget_ms);
void sw_run_origin_tick(run_t *r, part_t *p, int64_t now);

#endif /* SW_RUN_STATE_H */
