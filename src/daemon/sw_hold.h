/*
 * Holds of an input partition of `stormwatch run`: while held, the
 * partition is paused and what still reaches it is not processed; the
 * lowest such offset is read again once the hold ends.
 *  - the origin hold: a partition assigned without a usable snapshot waits
 *    until a snapshot of its empty engine, as of where it starts, is
 *    committed (then a kill at any later moment restores from it, and no
 *    record is sent twice even in its first seconds);
 *  - the registry hold: an Avro message whose writer schema the registry
 *    cannot give yet waits for the registry's fetcher.
 * Owned by the state side (sw_run_state.c: origin) and the work side
 * (sw_run_work.c: registry), on the main thread only. Pure: no librdkafka,
 * no clock (now is an argument), no I/O; tests/unit/test_hold.c (also under
 * ThreadSanitizer).
 */
#ifndef SW_HOLD_H
#define SW_HOLD_H

#include <stdbool.h>
#include <stdint.h>

/** A partition's holds; start with sw_hold_init(). */
typedef struct sw_hold_s {
    bool origin;      /**< held until its origin snapshot is committed */
    int64_t origin_x; /**< the offset the origin snapshot is taken at (-1: unknown yet) */
    bool reg;         /**< held until the registry answers for reg_id */
    int32_t reg_id;   /**< the writer schema id it waits for */
    bool reg_warned;  /**< the registry hold was said: a failure, not a first fetch
                           (only such holds count as waiting for the registry) */
    int64_t from;     /**< lowest offset that reached it while held (-1: none) */
} sw_hold_t;

/** @brief Not held. */
void sw_hold_init(sw_hold_t *h);
/** @brief Held by either hold. */
bool sw_hold_held(const sw_hold_t *h);
/** @brief Message @p offset reached the partition while held: read it again later. */
void sw_hold_note(sw_hold_t *h, int64_t offset);

/** @brief Hold for writer schema @p id from message @p offset on. */
void sw_hold_registry(sw_hold_t *h, int32_t id, int64_t offset, bool warned);
/**
 * @brief The registry answered for reg_id: the registry hold ends.
 * @param from set to the offset to read again from.
 * @returns true when the partition may resume (seek to *from) now; false
 *          while the origin hold still holds it (which then resumes it).
 */
bool sw_hold_registry_release(sw_hold_t *h, int64_t *from);

/** What the origin hold needs to know of the partition's snapshot flow. */
typedef struct sw_hold_snap_s {
    bool active;          /**< a snapshot is being written */
    bool failed;          /**< one of its chunks was refused */
    bool ready;           /**< it may be committed now */
    int64_t committed_x;  /**< snapshot offset of the last commit sent (-1: none) */
    int64_t confirmed_x;  /**< ... of the last the broker took (-1: none) */
    int64_t last_snap_ms; /**< when the last snapshot (or start offset query) was made */
} sw_hold_snap_t;

/** What the origin hold asks for next. */
typedef enum sw_hold_act_e {
    SW_HOLD_WAIT,      /**< nothing now */
    SW_HOLD_ASK_START, /**< ask for the start offset (into origin_x; last_snap_ms = now), step again */
    SW_HOLD_DROP,      /**< the snapshot in flight failed: drop it, step again */
    SW_HOLD_COMMIT,    /**< commit the snapshot in flight */
    SW_HOLD_SNAPSHOT, /**< take the origin snapshot (again), as of origin_x */
    SW_HOLD_RELEASE   /**< committed: the origin hold is over; resume (from, when >= 0) */
} sw_hold_act_t;

/** Milliseconds between start offset queries, and between origin snapshots. */
#define SW_HOLD_ASK_MS 1000
#define SW_HOLD_RETRY_MS 200

/** @brief The origin hold's next step at @p now_ms (origin must be set). */
sw_hold_act_t sw_hold_origin_step(sw_hold_t *h, const sw_hold_snap_t *s, int64_t now_ms);

#endif /* SW_HOLD_H */
