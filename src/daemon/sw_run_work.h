/* Consuming (sw_run_work.c): rounds over the partitions' queues, the worker threads, decoding and the registry wait. Internal to the daemon. */
#ifndef SW_RUN_WORK_H
#define SW_RUN_WORK_H

#include "sw_run_int.h"

void sw_run_rebuild_finish(run_t *r, part_t *p);
void sw_run_registry_metrics(run_t *r);
void sw_run_registry_tick(run_t *r);
void sw_run_take_stray(run_t *r, rd_kafka_message_t *m);
bool sw_run_round(run_t *r);
int sw_run_workers_start(run_t *r, int64_t threads, char *why, size_t why_size);
void sw_run_workers_stop(run_t *r);
void sw_run_work_free(part_t *p);
void sw_run_plans_free(run_t *r);
/** The registry's fetcher has an answer: wake the loop (any thread). */
void sw_run_wake_fetched(void *opaque);
void sw_run_part_queue(run_t *r, part_t *p);
void sw_run_part_queue_release(part_t *p);
int sw_run_wake_open(run_t *r);
void sw_run_wake_close(run_t *r);
void sw_run_wake_wait(run_t *r, int ms);
bool sw_run_is_peer_marker(const rd_kafka_message_t *m);
void sw_run_peer_tick(run_t *r, int64_t now);
void sw_run_work_push_src(pwork_t *pw, rd_kafka_message_t *m, int src);
bool sw_run_local_keeps(const pass_t *ps, const part_t *p, const rd_kafka_message_t *m,
                        const sw_event_t *ev);
bool sw_run_registry_unready(run_t *r, part_t *p, const rd_kafka_message_t *m);
bool sw_run_decode(const pass_t *ps, sw_worker_t *w, const rd_kafka_message_t *m, sw_event_t *ev,
                   char *err, size_t errsz, sw_err_t *rc);
void sw_run_note_consumer_error(run_t *r, const rd_kafka_message_t *m);
bool sw_run_registry_wait(run_t *r, part_t *p, const rd_kafka_message_t *m);
int64_t sw_run_reset_offset(run_t *r, const char *topic, int32_t partition);
void sw_run_origin_pause(run_t *r, part_t *p, bool pause);

#endif /* SW_RUN_WORK_H */
