/*
 * Deterministic synthetic telemetry (`stormwatch gen`): TelemetryEvent v3
 * JSON Lines of jobs of ranks with a training sawtooth, injected memory
 * storms that start on one rank and spread, optional phase boundaries and
 * delivery noise, in arrival order, plus the ground truth of every storm.
 * Pure: writes into caller buffers, no I/O, no clock, no globals.
 */
#ifndef SW_GEN_H
#define SW_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_types.h"

/** storm_rank: rank 3, or ranks - 1 when there are fewer than 4 ranks. */
#define SW_GEN_STORM_RANK_DEFAULT (-2)
/** storm_rank: a seeded random rank per storm. */
#define SW_GEN_STORM_RANK_RANDOM (-1)

/** Device memory of every generated GPU (80 GiB). */
#define SW_GEN_DEVICE_TOTAL_BYTES ((int64_t)80 * 1024 * 1024 * 1024)

/**
 * Generator options; fill with sw_gen_opts_default(), then change fields.
 * Errors of sw_gen_new() name a field by its CLI option (--ranks, ...).
 */
typedef struct sw_gen_opts_s {
    int64_t ranks;       /**< ranks per job, 1..131072 (default 8) */
    int64_t samples;     /**< samples per rank, 1..100000000 (default 600) */
    int64_t jobs;        /**< jobs, 1..100000 (default 1); jobs*ranks <= 262144 */
    uint64_t seed;       /**< PRNG seed (default 1) */
    int64_t storm_rank;  /**< 0..ranks-1, or SW_GEN_STORM_RANK_DEFAULT/RANDOM */
    int64_t storms;      /**< storms per job, 0..10000 (default 1) */
    int64_t interval_ms; /**< sampling interval, ms, 1..3600000 (default 100) */
    double jitter;     /**< sample time jitter, fraction of the interval, 0..0.45 (default 0.02) */
    int64_t skew_ms;   /**< max clock skew per rank, ms, 0..3600000 (default 50) */
    int64_t start_ns;  /**< job start, ns on the true clock (default 1763700000000000000) */
    double storm_at;   /**< first storm, fraction of the timeline, 0..1 (default 0.5) */
    int64_t spread_ms; /**< spread delay unit, ms, 0..3600000 (default 300) */
    int64_t storm_bytes;    /**< rise of a storm, bytes, 2 GiB..40 GiB (default 8 GiB) */
    bool phases;            /**< emit forward/backward phase boundaries (default false) */
    double duplicates;      /**< probability that a sample is delivered twice, 0..1 */
    double late;            /**< probability that a sample arrives 2-5 intervals late, 0..1 */
    int64_t rise_samples;   /**< 0: a storm rises in 2-3 samples, its first step crossing the
                                threshold (default); 1..8: in that many equal steps, so the
                                crossing sample moves as the rise goes on */
    int64_t storm_gap_ms;   /**< storms in a row this far apart, ms (0: evenly spaced over the
                                rest of the timeline, the default) */
    int64_t tie_ranks;      /**< ranks rising on the storm rank's own sample (it included),
                                0..ranks: a tie (default 0) */
    int64_t late_first_ms;  /**< every sample of the storm ranks arrives this late, ms,
                                0..60000: a late collector (default 0) */
    int64_t restarts;       /**< ranks that restart once (new pid and session, memory down
                                to ~1 GiB, a climb back to the working set), 0..ranks */
    bool job_restart;       /**< every rank of each job restarts at once */
    double restart_at;      /**< restarts at this fraction of the timeline (default 0.2) */
    int64_t leaks;          /**< ranks with a slow leak (+6 GiB over 60 s, then freed) */
    double leak_at;         /**< leaks start at this fraction of the timeline (default 0.2) */
    int64_t schema_version; /**< TelemetryEvent version written: 3 (default) or 4 (the
                                 allocator counters null, as from a backend without them,
                                 and metadata.memory_capabilities saying so) */
    /* The field's harder cases (issue 36); every one off by default, so
     * that earlier options and seeds give the same bytes. */
    bool overlap; /**< storms in a row --storm-gap-ms apart may overlap: the next one
                                starts while the previous one still spreads (a rank hit by
                                both rises twice; memory adds up), at most 64 storms */
    double loss;  /**< probability that a sample is lost, 0..0.5 (default 0) */
    int64_t gaps; /**< collector gaps per rank, 0..8: 2-5 s without samples, never
                                over a storm rank's own rise (default 0) */
    bool lone;    /**< every storm stays on its rank: a lone spike, no spread */
    const char *
        job_prefix; /**< job ids are "<prefix>-<j>"; borrowed during sw_gen_new() (default "job") */
    int64_t fleet_hosts; /**< 0: every job on hosts of its own (default); N: the jobs share a
                              fleet of N hosts, see sw_gen_fleet_host() */
    int64_t bad_host;    /**< -1 (default), or a fleet host (0..fleet_hosts-1) that runs every
                              job's first storm rank: a repeat offender */
} sw_gen_opts_t;

/**
 * @brief The fleet host (node-NNN) of host slot @p slot (rank / 8) of job
 *        @p job, jobs of @p per_job hosts sharing @p fleet hosts. Without a
 *        bad host, job j takes hosts j*per_job+slot onwards, mod fleet; with
 *        one, slot @p bad_slot is @p bad_host in every job and the other
 *        slots rotate over the rest of the fleet. fleet >= per_job.
 */
int64_t sw_gen_fleet_host(int64_t job, int64_t slot, int64_t per_job, int64_t fleet,
                          int64_t bad_host, int64_t bad_slot);

typedef struct sw_gen_s sw_gen_t;

/** Ground truth of one storm of one job. */
typedef struct sw_gen_storm_s {
    const char *job_id;             /**< borrowed: valid until sw_gen_destroy() */
    int64_t job;                    /**< job index */
    int64_t storm;                  /**< storm index within the job, from 0 */
    int64_t rank;                   /**< the storm rank (where the storm starts) */
    int64_t onset_sample;           /**< index of the onset sample on the storm rank */
    int64_t onset_true_ns;          /**< onset on the common (skew-free) clock, ns */
    int64_t onset_timestamp_ns;     /**< raw timestamp of the storm rank's first rising sample */
    int64_t first_hit_rank;         /**< the second rank hit, or -1 with one rank */
    int64_t first_hit_timestamp_ns; /**< raw timestamp of its first rising sample, or -1 */
    int64_t tie_ranks;              /**< ranks rising on the storm rank's sample (it included) */
    int64_t end_true_ns;            /**< when its last rank is hit, on the common clock */
} sw_gen_storm_t;

/** What else a job does that is no storm (and must page nothing). */
typedef enum sw_gen_kind_e {
    SW_GEN_RESTART = 1, /**< a rank restarts: new pid and session, climb to its working set */
    SW_GEN_LEAK = 2     /**< a rank leaks slowly, then frees the memory */
} sw_gen_kind_t;

/** Ground truth of one restart or leak. */
typedef struct sw_gen_other_s {
    const char *job_id; /**< borrowed: valid until sw_gen_destroy() */
    int64_t job;        /**< job index */
    sw_gen_kind_t kind;
    int64_t rank;
    int64_t start_timestamp_ns; /**< raw timestamp of its first sample (the new process's) */
    int64_t end_timestamp_ns;   /**< raw timestamp of its last climbing or leaking sample */
} sw_gen_other_t;

/**
 * @brief The restarts and leaks, by job then rank.
 * @param out set to the array (borrowed: valid until sw_gen_destroy()).
 * @returns the number of entries.
 */
size_t sw_gen_truth_other(const sw_gen_t *gen, const sw_gen_other_t **out);

/** @brief Append one restart or leak as a JSON line: kind, job_id, rank,
 *         start_timestamp_ns, end_timestamp_ns. */
void sw_gen_other_json(const sw_gen_other_t *o, sw_buf_t *out);

/** Counters of what has been emitted so far. */
typedef struct sw_gen_stats_s {
    uint64_t events;     /**< lines emitted */
    uint64_t samples;    /**< sample lines, duplicates included */
    uint64_t phases;     /**< phase_enter / phase_exit lines */
    uint64_t duplicates; /**< re-emitted copies of samples */
    uint64_t late;       /**< samples delayed by 2-5 intervals */
    uint64_t bytes;      /**< bytes of the lines emitted */
} sw_gen_stats_t;

/** @brief Fill @p opts with the defaults listed at sw_gen_opts_t. */
void sw_gen_opts_default(sw_gen_opts_t *opts);

/**
 * @brief New generator; validates every option and that the storms fit.
 * @param opts borrowed during the call (job_prefix is copied).
 * @returns caller frees with sw_gen_destroy(); NULL on an invalid option,
 *          with one sentence in @p errstr naming the option(s) and value.
 * @remark Memory is O(jobs * ranks + jobs * storms); never O(events).
 */
sw_gen_t *sw_gen_new(const sw_gen_opts_t *opts, char *errstr, size_t errstr_size);

/** @brief Free (accepts NULL). */
void sw_gen_destroy(sw_gen_t *gen);

/**
 * @brief Append the next event in arrival order as one JSON line and '\n'.
 * @param out the caller's buffer; grown as needed, never reset.
 * @returns false (nothing appended) when every event has been emitted.
 * @remark The same options give the same bytes on every platform.
 */
bool sw_gen_next(sw_gen_t *gen, sw_buf_t *out);

/**
 * @brief The ground truth, ordered by job then storm.
 * @param storms set to the array (borrowed: valid until sw_gen_destroy()).
 * @returns the number of entries (jobs * storms).
 */
size_t sw_gen_truth(const sw_gen_t *gen, const sw_gen_storm_t **storms);

/**
 * @brief Append one truth entry as a JSON line and '\n': job_id, storm,
 *        rank, onset_timestamp_ns, first_hit_rank, first_hit_timestamp_ns
 *        (the last two null with one rank).
 * @param out the caller's buffer; appended to.
 */
void sw_gen_truth_json(const sw_gen_storm_t *storm, sw_buf_t *out);

/**
 * @brief Raw timestamp of the first rising sample of storm @p storm of job
 *        @p job on rank @p rank as planned (lost samples included), or -1
 *        when the storm never reaches that rank (--lone) or out of range.
 */
int64_t sw_gen_hit_ts(const sw_gen_t *gen, int64_t job, int64_t storm, int64_t rank);

/** @brief Whether sample @p i of rank @p rank of job @p job is lost
 *         (--loss, --gaps): it is never emitted. */
bool sw_gen_lost(const sw_gen_t *gen, int64_t job, int64_t rank, int64_t i);

/** @brief Copy the counters of the events emitted so far into @p st. */
void sw_gen_stats(const sw_gen_t *gen, sw_gen_stats_t *st);

#endif /* SW_GEN_H */
