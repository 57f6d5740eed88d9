/* Delivery (sw_run_out.c): the stop budget, partitions, producing records and dead letters, headers, transactions and commits. Internal to the daemon. */
#ifndef SW_RUN_OUT_H
#define SW_RUN_OUT_H

#include "sw_run_int.h"

bool sw_run_stop_abandoned(const run_t *r);
bool sw_run_stop_over(const run_t *r);
int sw_run_stop_budget(const run_t *r, int normal);
bool sw_run_flush_bounded(run_t *r, int normal_ms);
int64_t sw_run_committable(const part_t *p);
void sw_run_m_add(run_t *r, sw_metric_t id, uint64_t n);
void sw_run_m_set(run_t *r, sw_metric_t id, int64_t v);
part_t *sw_run_part_find(run_t *r, const char *topic, int32_t partition);
bool sw_run_produce_msg(run_t *r, const char *topic, int32_t partition, const void *key,
                        size_t keylen, const void *value, size_t vlen, rd_kafka_headers_t *hdrs,
                        sw_token_t *tok);
void sw_run_produce_record(run_t *r, part_t *p, int src, int64_t offset, const char *topic,
                           int32_t partition, const void *key, size_t keylen, const void *value,
                           size_t vlen, rd_kafka_headers_t *hdrs);
void sw_run_hdr_add(rd_kafka_headers_t *h, const char *name, const char *value);
void sw_run_hdr_add_i64(rd_kafka_headers_t *h, const char *name, int64_t v);
rd_kafka_headers_t *sw_run_input_headers(const rd_kafka_message_t *m);
void sw_run_hdr_add_source(rd_kafka_headers_t *h, const run_t *r, const part_t *p, int src,
                           int64_t offset);
int sw_run_msg_src(const run_t *r, const part_t *p, const rd_kafka_message_t *m);
void sw_run_note_position(run_t *r, const char *topic, int32_t partition, int64_t offset);
void sw_run_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque);
bool sw_run_suppressed(run_t *r, part_t *p, int src, int64_t offset, int action);
/** Publish the output's readiness state now (once a second). */
void sw_run_output_state(run_t *r);
void sw_run_send_dlq(run_t *r, part_t *p, const rd_kafka_message_t *m, dlq_kind_t kind,
                     const char *why);
bool sw_run_encode_record(run_t *r, part_t *p, const sw_record_t *rec);
void sw_run_send_record(run_t *r, part_t *p, int src, int64_t pend_offset,
                        const sw_record_t *engine_rec);
bool sw_run_txn_ok(run_t *r, rd_kafka_error_t *e, const char *what);
bool sw_run_txn_begin(run_t *r);
bool sw_run_txn_commit(run_t *r, rd_kafka_topic_partition_list_t *offsets);
bool sw_run_commit_list(run_t *r, rd_kafka_topic_partition_list_t *list, bool sync);
bool sw_run_commit_plain(run_t *r, const rd_kafka_topic_partition_list_t *only, bool sync);
const char *sw_run_pos_topic(const run_t *r, int t, int *nparts);

#endif /* SW_RUN_OUT_H */
