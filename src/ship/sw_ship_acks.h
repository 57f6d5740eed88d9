/*
 * The shipper's in-flight window: every event handed to the producer gets
 * a sequence number; delivery reports arrive in any order across
 * partitions, and an event's position becomes acknowledged only when it
 * and every event sent before it are done. That frontier is what the
 * checkpoint may record. Pure: no I/O, no clock (times are arguments).
 */
#ifndef SW_SHIP_ACKS_H
#define SW_SHIP_ACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** One sent event. */
typedef struct sw_ack_s {
    uint64_t seg;    /**< segment id (sw_follow) */
    uint64_t end;    /**< byte offset just after its line */
    uint64_t lineno; /**< its line number (1-based) */
    uint32_t bytes;  /**< message value bytes */
    bool done;       /**< delivery report seen */
    int64_t sent_ms; /**< when it was handed to the producer */
} sw_ack_t;

typedef struct sw_acks_s {
    sw_ack_t *v;    /**< ring (owned) */
    size_t cap;     /**< slots (a power of two) */
    uint64_t head;  /**< sequence number of the oldest not popped */
    uint64_t tail;  /**< the next sequence number */
    uint64_t bytes; /**< bytes of the events in the window */
} sw_acks_t;

void sw_acks_init(sw_acks_t *a);
void sw_acks_clear(sw_acks_t *a);

/** @brief Add an event; @returns its sequence number. */
uint64_t sw_acks_push(sw_acks_t *a, uint64_t seg, uint64_t end, uint64_t lineno, uint32_t bytes,
                      int64_t now_ms);

/**
 * @brief Mark event @p seq delivered (or failed for good: either way it
 *        will not be sent again). Unknown or repeated numbers are ignored.
 */
void sw_acks_done(sw_acks_t *a, uint64_t seq);

/** @brief Pop the oldest event when it is done. @returns false otherwise. */
bool sw_acks_pop(sw_acks_t *a, sw_ack_t *out);

/** @brief Events in the window (sent, not popped). */
static inline uint64_t sw_acks_count(const sw_acks_t *a)
{
    return a->tail - a->head;
}

/** @brief Send time of the oldest event not yet done, or 0 when none. */
int64_t sw_acks_oldest_ms(const sw_acks_t *a);

#endif /* SW_SHIP_ACKS_H */
