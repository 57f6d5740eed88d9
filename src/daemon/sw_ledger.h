/*
 * The delivery ledger of `stormwatch run`: what may be committed.
 *
 * Owned by the output side (src/daemon/sw_run_out.c) and touched by the
 * main thread only: delivery reports run inside rd_kafka_poll() on it,
 * and the workers never see a ledger. Pure: no librdkafka, no clock (times
 * are arguments), no I/O, no globals; unit-tested by tests/unit/test_ledger.c
 * (also under ThreadSanitizer).
 *
 * Per input partition, sw_ledger_t: the input offsets whose records (alert
 * records, dead letters, forwarded copies) are not yet acknowledged, in
 * offset order, records of one offset counted together. A commit never
 * reaches past the oldest of them (at-least-once); a record the broker
 * refused is never acknowledged, so the partition's commits stop below it.
 * And the partition's snapshot commits: the offset of the last one sent and
 * of the last one the broker took; a refused one is sent again.
 *
 * Run-wide, sw_tokens_t: each message handed to the producer carries a
 * token (its delivery report's opaque); the records' tokens not yet
 * reported, oldest first, give the age of the oldest undelivered record
 * (readiness, /readyz).
 */
#ifndef SW_LEDGER_H
#define SW_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Records of one input offset not yet acknowledged. */
typedef struct sw_pend_s {
    int64_t offset; /**< input offset */
    uint32_t left;  /**< its records not yet acknowledged */
} sw_pend_t;

/** One input partition's ledger; zero it with sw_ledger_init(). */
typedef struct sw_ledger_s {
    sw_pend_t *q; /**< ring of pending offsets, ascending */
    size_t head, n, cap;
    bool failed;         /**< a record was refused: never commit past it */
    int64_t committed_x; /**< snapshot offset of the last commit sent (-1: none) */
    int64_t confirmed_x; /**< snapshot offset of the last commit the broker took (-1: none) */
} sw_ledger_t;

/** @brief An empty ledger (no allocation). */
void sw_ledger_init(sw_ledger_t *l);
/** @brief Free its storage (accepts a cleared one). */
void sw_ledger_clear(sw_ledger_t *l);

/** @brief A record caused by input @p offset was handed to the producer
 *         (offsets arrive in ascending order, repeats allowed). */
void sw_ledger_add(sw_ledger_t *l, int64_t offset);
/** @brief One record of input @p offset was acknowledged. */
void sw_ledger_ack(sw_ledger_t *l, int64_t offset);
/** @brief A record was refused (not taken by the producer or the broker):
 *         its offset stays pending for good. */
void sw_ledger_refuse(sw_ledger_t *l);
/** @brief Records not yet acknowledged, offsets counted once. */
size_t sw_ledger_pending(const sw_ledger_t *l);
/**
 * @brief The offset a commit may name: the oldest unacknowledged input
 *        offset, or @p next (the next offset to process) when none waits.
 */
int64_t sw_ledger_committable(const sw_ledger_t *l, int64_t next);

/** @brief A commit of the snapshot as of offset @p x was sent. */
void sw_ledger_commit_sent(sw_ledger_t *l, int64_t x);
/**
 * @brief The broker's answer to a commit of the snapshot as of @p x:
 *        @p taken raises the confirmed offset; a refusal of the last one
 *        sent makes it unsent (the next tick snapshots and commits again).
 */
void sw_ledger_commit_answer(sw_ledger_t *l, int64_t x, bool taken);

/** What a token's message is: a record, a snapshot chunk, or a marker
 *  (repartition=auto: its offset is the input offset the marker names). */
typedef enum sw_tok_kind_e { SW_TOK_RECORD, SW_TOK_SNAPSHOT, SW_TOK_MARKER } sw_tok_kind_t;

/** What a produced message's delivery report must find again. */
typedef struct sw_token_s {
    uint32_t part_id; /**< the input partition's stable id */
    sw_tok_kind_t kind;
    uint8_t src;                    /**< records: 0 the input partition, 1 its repartition
                            partition (repartition=auto: the ledger it waits in) */
    uint32_t chunk;                 /**< snapshots: the chunk */
    int64_t offset;                 /**< records: the input offset */
    uint64_t snap_id;               /**< snapshots */
    int64_t produced_ms;            /**< records: when handed to the producer */
    struct sw_token_s *prev, *next; /**< records: sw_tokens_t's list */
} sw_token_t;

/** The records' tokens not yet reported, oldest first. */
typedef struct sw_tokens_s {
    sw_token_t *head, *tail;
    size_t n;
} sw_tokens_t;

/** @brief A token. @returns caller frees with free() (after its report). */
sw_token_t *sw_token_new(uint32_t part_id, sw_tok_kind_t kind);
/** @brief Record token @p tok (borrowed until sw_tokens_del()) handed to the
 *         producer at @p now_ms. @returns whether it is the oldest now. */
bool sw_tokens_add(sw_tokens_t *ts, sw_token_t *tok, int64_t now_ms);
/** @brief @p tok was reported. @returns whether it was the oldest. */
bool sw_tokens_del(sw_tokens_t *ts, sw_token_t *tok);
/** @brief When the oldest undelivered record was produced (0: none). */
int64_t sw_tokens_oldest_ms(const sw_tokens_t *ts);

#endif /* SW_LEDGER_H */
