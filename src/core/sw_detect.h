/*
 * The stream engine of SPEC section 6: per job, per rank windows, first
 * timestamps, world-size claims and the phase index, maintained
 * incrementally; the trigger/update/resolve lifecycle per sample; summaries
 * at the end or when a job goes idle. Amortized O(log n) per in-order
 * sample in the number of ranks and the window size; nothing reruns the
 * batch analysis. Pure: no I/O, no clock (time is an argument), no globals.
 */
#ifndef SW_DETECT_H
#define SW_DETECT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_analysis.h"
#include "sw_err.h"
#include "sw_event.h"

typedef struct sw_detector_s sw_detector_t;

/** Counters of the engine. */
typedef struct sw_detect_stats_s {
    uint64_t events;        /**< events fed */
    uint64_t samples;       /**< sample events fed */
    uint64_t duplicates;    /**< samples dropped as duplicates */
    uint64_t late;          /**< samples older than their rank's newest */
    uint64_t too_old;       /**< late samples that left a full window unchanged */
    uint64_t stale_windows; /**< windows emptied as stale */
    uint64_t limit_rejects; /**< events refused by max.jobs / max.ranks.per.job / budget */
    uint64_t evicted; /**< jobs with the least evidence evicted to make room (max.jobs, budget) */
    uint64_t evicted_evidence;       /**< of them, jobs with samples (a rank with two or more) */
    uint64_t refused_jobs;           /**< new jobs refused for memory (max.memory.bytes) */
    uint64_t clock_refused;          /**< samples refused as out of time (sw_tguard.h) */
    uint64_t phase_dropped;          /**< phase boundaries forgotten (closed before every window) */
    uint64_t records[SW_ACTION_CNT]; /**< records emitted, by sw_action_t */
    uint64_t deaths;                 /**< SPEC 8: deaths known (markers and silences) */
    uint64_t blind_ranks;            /**< SPEC 8.5: ranks blind now, over all jobs */
    uint64_t watchdog;               /**< error events that are not death markers */
    uint64_t jobs;                   /**< jobs tracked now */
    uint64_t ranks;                  /**< ranks tracked now */
    uint64_t retained;               /**< samples in all windows now */
    uint64_t bytes;                  /**< bytes of engine state now */
    uint64_t warnings;    /**< settings that cannot work, said once per job (sw_detect_warning) */
    uint64_t counterless; /**< v4 samples without device_used_bytes, skipped (SPEC 2) */
} sw_detect_stats_t;

/**
 * @brief The warning the last event fed gave, or NULL: settings that cannot
 *        work for its job (stale.ms below 5 sampling intervals, below the
 *        clock skew or a rank's delivery delay; a window shorter than a
 *        storm's spread), once per job and kind. One sentence naming the job.
 * @returns borrowed: valid until the next call on @p det.
 */
const char *sw_detect_warning(const sw_detector_t *det);

/**
 * @brief Say whether the engine is over its share of the memory budget
 *        (max.memory.bytes; the caller measures). Over it, and with
 *        max.jobs full, a new job first evicts the job with the least
 *        evidence among the 256 least recently active: one where no rank
 *        has two samples (what a made-up job id costs, whatever its rank
 *        count), else one without a rising run or an open episode; it is
 *        refused (SW_ERR_LIMIT) only when there is none.
 */
void sw_detect_set_pressure(sw_detector_t *det, bool over_budget);

/**
 * @brief Enforce a memory budget where the state grows: a new job or rank
 *        that would take the accounted state (sw_detect_accounted()) over
 *        @p max_bytes first evicts as sw_detect_set_pressure() says (up to
 *        16 jobs), and is refused (SW_ERR_LIMIT) when that is not enough;
 *        a window that grows makes other jobs go the same way. 0: none.
 */
void sw_detect_set_budget(sw_detector_t *det, size_t max_bytes);

/**
 * @brief The state the budget counts: every job's size as of its last
 *        growth (jobs, ranks, windows; sources and strings within 256
 *        events). sw_detect_stats() bytes adds the engine's fixed tables.
 */
size_t sw_detect_accounted(const sw_detector_t *det);

/** @brief Evict up to @p max jobs as a new job would. @returns how many. */
size_t sw_detect_evict(sw_detector_t *det, size_t max);

/**
 * One memory budget for the engines of a process (max.memory.bytes), in
 * place of each engine's own (sw_detect_set_budget): the bytes every
 * attached engine accounts (sw_detect_accounted()), summed atomically, so
 * that engines fed on different threads share it. An engine makes room
 * itself only by evicting its own jobs of one rank without evidence (no
 * rank with two samples: nothing in any engine is worth less); when that
 * is not enough, the event is refused with a request
 * (sw_detect_room_wanted()) that the pool's owner serves where every
 * engine is at rest, taking room from the least valuable jobs of all
 * engines (sw_detect_evict_bytes()), then says so (sw_detect_room_served())
 * and feeds the event again: it is taken, or refused for good.
 */
typedef struct sw_detect_pool_s {
    _Atomic int64_t used; /**< bytes accounted by the engines attached */
    _Atomic int64_t jobs; /**< jobs tracked by them */
    int64_t limit;        /**< the budget (bytes, > 0) */
} sw_detect_pool_t;

/** @brief Attach @p det (and what it accounts now) to @p pool (NULL: detach). */
void sw_detect_set_pool(sw_detector_t *det, sw_detect_pool_t *pool);

/**
 * @brief After sw_detect_feed*() returned SW_ERR_LIMIT: the bytes the event
 *        needs from the pool (> 0: nothing changed, feed the event again
 *        after sw_detect_room_served()), or 0 (refused for good).
 */
size_t sw_detect_room_wanted(const sw_detector_t *det);

/**
 * @brief The pool's owner made what room it could: the event fed again
 *        takes it (even if another engine fed meanwhile took some: the pool
 *        then passes its budget by that event's job or rank, which later
 *        requests and sw_detect_evict_bytes() bring back), or with @p final
 *        (nothing more could go) it is refused for good.
 */
void sw_detect_room_served(sw_detector_t *det, bool final);

/** A job evicted by sw_detect_evict_bytes(), borrowed during the callback. */
typedef struct sw_detect_evictee_s {
    bool has_job_id;
    const char *job_id;
    size_t job_id_len;
    int evidence;      /**< 0: no rank has two samples; 1: samples, no rising run */
    size_t ranks;      /**< ranks tracked */
    uint64_t retained; /**< samples in its windows */
    size_t bytes;      /**< accounted bytes freed */
} sw_detect_evictee_t;

typedef void (*sw_detect_evict_cb)(void *opaque, const sw_detect_evictee_t *e);

/**
 * @brief The value of the job sw_detect_evict_bytes(@p det, @p evidence, ...)
 *        would evict next (lower is less valuable): of evidence 0, the
 *        fewest ranks of such a job; of evidence 1, the fewest samples
 *        retained. @returns false when there is none.
 */
bool sw_detect_evict_value(const sw_detector_t *det, int evidence, uint64_t *value);

/**
 * @brief Evict jobs of exactly @p evidence (0 or 1) among the 256 least
 *        recently active until @p bytes accounted bytes are freed or none
 *        is left: of evidence 0 only jobs of at most @p max_ranks ranks,
 *        least recently active first (the caller raises @p max_ranks over
 *        every engine, so that a many-rank job with one sample a rank so
 *        far goes after every made-up id of fewer ranks); of evidence 1,
 *        the fewest samples first. Never a job with a rising run or an open
 *        episode. @p cb (may be NULL) sees each. @returns the bytes freed.
 */
size_t sw_detect_evict_bytes(sw_detector_t *det, int evidence, size_t max_ranks, size_t bytes,
                             sw_detect_evict_cb cb, void *opaque);

/** Called for each summary record; @p rec is borrowed during the call. */
typedef void (*sw_record_cb)(void *opaque, const sw_record_t *rec);

/**
 * @brief New engine.
 * @param params checked by the caller, once, where they are parsed (the
 *        conf table's ranges, also for replay's options): window_samples
 *        1..SW_WINDOW_SAMPLES_MAX; the engine takes them as they are.
 * @returns caller frees with sw_detect_destroy().
 */
sw_detector_t *sw_detect_new(sw_params_t params);

/** @brief Free (accepts NULL). */
void sw_detect_destroy(sw_detector_t *det);

/**
 * @brief Feed one valid event in arrival order.
 * @param now_ms stream time for job idleness (not read from a clock here).
 * @param rec    set to the record this event caused, or NULL. Borrowed:
 *               valid until the next call on @p det.
 * @returns SW_OK, or SW_ERR_LIMIT when the event would exceed max.jobs or
 *          max.ranks.per.job (state unchanged; @p errstr says which), or
 *          SW_ERR_CLOCK when the sample is out of time (the guard of
 *          sw_tguard.h refused it: counted in clock_refused, nothing else
 *          changed).
 */
sw_err_t sw_detect_feed(sw_detector_t *det, const sw_event_t *ev, int64_t now_ms,
                        const sw_record_t **rec, char *errstr, size_t errstr_size);

/**
 * @brief sw_detect_feed() for input with offsets (a Kafka partition): the
 *        engine remembers where retained samples came from, for
 *        sw_detect_min_offset() and state restore. Offsets must increase.
 *        The same as sw_detect_feed_src() from source 0.
 */
sw_err_t sw_detect_feed_at(sw_detector_t *det, const sw_event_t *ev, int64_t now_ms, int64_t offset,
                           const sw_record_t **rec, char *errstr, size_t errstr_size);

/** Input logs one engine can be fed from (sw_detect_feed_src). */
#define SW_DETECT_SOURCES 2

/**
 * @brief sw_detect_feed_at() for an engine fed from two logs (an input
 *        partition and the partition of the repartition topic that carries
 *        the same jobs): @p src (0 or 1) names the log, @p offset (below
 *        2^62) the message in it. Offsets of one source must increase; the
 *        two sources may interleave in any order. Snapshots, restore and
 *        the rebuild then keep a position per source (the _src functions
 *        below), and records name the source of their cause
 *        (sw_record_t.cause_source). SW_ERR_INVALID_ARG for another @p src.
 */
sw_err_t sw_detect_feed_src(sw_detector_t *det, const sw_event_t *ev, int64_t now_ms, int src,
                            int64_t offset, const sw_record_t **rec, char *errstr,
                            size_t errstr_size);

/**
 * @brief The next SPEC 8 record (crash, warning) caused by the event last
 *        fed, after SPEC 6's record that sw_detect_feed() gave; call until
 *        it returns NULL (at most 3 per event).
 * @remark borrowed: valid until the next feed on @p det. SPEC 6's record of
 *         the same event stays valid meanwhile.
 */
const sw_record_t *sw_detect_next(sw_detector_t *det);

/**
 * @brief Hint that @p ev will be fed next: start loading the state it will
 *        touch into the CPU cache. Changes nothing. Callers that decode
 *        the next event while the current one is processed hide most memory
 *        latency this way.
 * @remark @p ev is borrowed for the call only. The engine remembers the job
 *         and rank it found and reuses them when the same event object is
 *         fed (after the one being processed now), checking its job id and
 *         rank first; any other event is looked up as usual.
 */
void sw_detect_prefetch(sw_detector_t *det, const sw_event_t *ev);

/**
 * @brief Emit one summary per job that had a sample, in the order the jobs
 *        first appeared (SPEC 6 step 6, end of input). Jobs are kept.
 *        After a job's summary, @p cb also gets the SPEC 8 records that
 *        close its open crash and warning (a crash or warning record with
 *        open false and no event_timestamp_ns).
 */
void sw_detect_finish(sw_detector_t *det, sw_record_cb cb, void *opaque);

/**
 * @brief Emit the summary of every job idle for at least @p idle_ms (no
 *        event since now_ms - idle_ms) and free it.
 * @returns the number of jobs expired.
 */
size_t sw_detect_expire(sw_detector_t *det, int64_t now_ms, int64_t idle_ms, sw_record_cb cb,
                        void *opaque);

/** @brief Current counters. */
void sw_detect_stats(const sw_detector_t *det, sw_detect_stats_t *st);

/**
 * @brief The smallest input offset any retained sample came from: input
 *        from there on is enough to rebuild every window (state restore).
 * @returns false when no window holds a sample.
 */
bool sw_detect_min_offset(const sw_detector_t *det, int64_t *offset);

/** @brief sw_detect_min_offset() of source @p src (sw_detect_feed_src). */
bool sw_detect_min_offset_src(const sw_detector_t *det, int src, int64_t *offset);

/**
 * @brief Append a snapshot of all state except the windows, valid as of
 *        the moment every offset below @p next_offset was fed.
 */
void sw_detect_snapshot(const sw_detector_t *det, int64_t next_offset, sw_buf_t *out);

/**
 * @brief sw_detect_snapshot() of an engine fed from two sources: valid as
 *        of the moment every offset below @p next[s] of each source s was
 *        fed.
 */
void sw_detect_snapshot_src(const sw_detector_t *det, const int64_t next[SW_DETECT_SOURCES],
                            sw_buf_t *out);

/**
 * @brief sw_detect_snapshot_src() in the layout the previous release reads
 *        (v0.3.0: SWS4, SPEC 8's section as SW8a) into @p out, and what
 *        that layout lacks into @p ext (an extension "SWX6"): the two
 *        together restore (sw_detect_restore_src(), then
 *        sw_detect_restore_ext()) to what sw_detect_snapshot_src()'s
 *        restores; @p out alone to the engine an older release restores.
 */
void sw_detect_snapshot_compat(const sw_detector_t *det, const int64_t next[SW_DETECT_SOURCES],
                               sw_buf_t *out, sw_buf_t *ext);

/**
 * @brief The extension of sw_detect_snapshot_compat() (@p ext) applied to
 *        @p det, just restored (not rebuilt yet) from its body @p body.
 * @returns false (@p errstr says why; @p det is then unusable) when @p ext
 *          is malformed or not of that body.
 */
bool sw_detect_restore_ext(sw_detector_t *det, const void *body, size_t body_len, const void *ext,
                           size_t ext_len, char *errstr, size_t errstr_size);

/**
 * @brief A detector from a snapshot, with empty windows, in rebuild mode:
 *        feed sw_detect_rebuild() every event from sw_detect_min_offset()
 *        (of the snapshotted detector) up to *next_offset, in order, then
 *        call sw_detect_rebuild_done(); then go on with sw_detect_feed_at()
 *        from *next_offset. The result equals the detector that was
 *        snapshotted.
 * @returns caller frees with sw_detect_destroy(); NULL when the data is not
 *          a snapshot or was taken with other parameters (errstr says which).
 */
sw_detector_t *sw_detect_restore(sw_params_t params, const void *data, size_t len, int64_t now_ms,
                                 int64_t *next_offset, char *errstr, size_t errstr_size);

/**
 * @brief sw_detect_restore() of a snapshot of sw_detect_snapshot_src():
 *        @p next gets each source's next offset. Rebuild each source s
 *        from sw_detect_min_offset_src() up to next[s] (the two sources in
 *        any interleaving, each in order) with sw_detect_rebuild_src().
 *        sw_detect_restore() refuses a snapshot that has source 1's
 *        samples (it could not rebuild them).
 */
sw_detector_t *sw_detect_restore_src(sw_params_t params, const void *data, size_t len,
                                     int64_t now_ms, int64_t next[SW_DETECT_SOURCES], char *errstr,
                                     size_t errstr_size);

/**
 * @brief A restored engine (sw_detect_restore_src(), not rebuilt yet):
 *        its two sources trade places (next offsets, the ranks' floors,
 *        the jobs' latest inputs, the refusals remembered); @p next is
 *        swapped with them. The engine of a `repartition=auto` input
 *        partition (source 0 the input, 1 the repartition partition) goes
 *        on under `on` as the engine of the repartition partition, whose
 *        offsets it is then fed (source 0), the input's kept as source 1.
 */
void sw_detect_swap_sources(sw_detector_t *det, int64_t next[SW_DETECT_SOURCES]);

/** @brief Where a loaded engine's sources stand to the snapshot's (sw_detect_load). */
typedef enum {
    SW_DETECT_PLACE_ONE,     /**< one source: refused when it has source 1's samples */
    SW_DETECT_PLACE_TWO,     /**< two sources, as snapshotted */
    SW_DETECT_PLACE_SWAPPED, /**< two sources trading places (sw_detect_swap_sources) */
    SW_DETECT_PLACE_AS_ONE,  /**< a one-source snapshot's goes on as source 1, source 0 empty */
} sw_detect_place_t;

/** @brief A snapshot to load: the engine's bytes as a state envelope holds them. */
typedef struct {
    const void *body; /**< sw_detect_snapshot*()'s bytes */
    size_t body_len;
    const void *ext; /**< sw_detect_snapshot_compat()'s extension, or NULL */
    size_t ext_len;  /**< 0: no extension */
    sw_detect_place_t place;
    /** NULL, or the next offset of each source (as placed) the envelope says
     *  the engine is as of: another is refused. */
    const int64_t *expect;
} sw_detect_image_t;

/**
 * @brief The one restore of a stored engine: sw_detect_restore_src() of
 *        @p img's body (sw_detect_restore() for SW_DETECT_PLACE_ONE), with
 *        its extension when it has one (sw_detect_restore_ext()), its
 *        sources placed as @p img says; rebuild it as after
 *        sw_detect_restore_src(). SW_DETECT_PLACE_AS_ONE: every offset the
 *        snapshot holds (its next offset, the ranks' floors, the jobs'
 *        latest inputs, the refusals remembered) becomes one of source 1,
 *        whose engine of a `repartition=on` partition (the repartition
 *        topic's offsets) goes on under `auto`.
 * @param next NULL, or gets each source's next offset (as placed).
 * @returns caller frees with sw_detect_destroy(); NULL (@p errstr says why)
 *          when the body, its extension or its offsets cannot be used.
 */
sw_detector_t *sw_detect_load(sw_params_t params, const sw_detect_image_t *img, int64_t now_ms,
                              int64_t next[SW_DETECT_SOURCES], char *errstr, size_t errstr_size);

/** @brief Rebuild mode: re-insert one event's sample. @returns true when it entered a window. */
bool sw_detect_rebuild(sw_detector_t *det, const sw_event_t *ev, int64_t offset);

/** @brief sw_detect_rebuild() of the message at @p offset of source @p src. */
bool sw_detect_rebuild_src(sw_detector_t *det, const sw_event_t *ev, int src, int64_t offset);

/** @brief Leave rebuild mode: recompute what derives from the windows. */
void sw_detect_rebuild_done(sw_detector_t *det);

/**
 * @brief Analysis A (SPEC 6 step 4) of a job as it stands, for tests.
 * @param job_id NULL for the null job.
 * @returns false when the job is unknown or never had a sample.
 * @remark *out is borrowed: valid until the next call on @p det.
 */
bool sw_detect_analysis(sw_detector_t *det, const char *job_id, sw_analysis_t *out);

/**
 * @brief Where rank @p rank of a job has spent its rising runs (for tests):
 *        runs whose base sample is before *spent_ts are no candidates of
 *        the lifecycle's Analysis A (INT64_MIN: none are).
 * @returns false when the job or the rank is unknown.
 */
bool sw_detect_spent(const sw_detector_t *det, const char *job_id, int64_t rank, int64_t *spent_ts);

/**
 * @brief Where rank @p rank of a job split a spent run (for tests): when
 *        *split_ts >= its spent mark, the spent run that holds a sample at
 *        *split_ts counts from that sample on as a run of its own
 *        (docs/semantics.md, "Storms that overlap"; INT64_MIN: no split).
 * @returns false when the job or the rank is unknown.
 */
bool sw_detect_split(const sw_detector_t *det, const char *job_id, int64_t rank, int64_t *split_ts);

#endif /* SW_DETECT_H */
