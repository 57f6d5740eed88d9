/*
 * Internal to the core: the last step of the analysis shared by the batch
 * analysis and the stream engine. Given per-rank facts and the sorted
 * candidates, it derives missing ranks, suspects, confidence, phase
 * attribution and notes (SPEC 3.1, 3.7, 5). Pure: no I/O, no globals.
 */
#ifndef SW_ASSEMBLE_H
#define SW_ASSEMBLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_analysis.h"
#include "sw_arena.h"
#include "sw_phase.h"

/** 128-bit integer for exact products and sums of 64-bit values. */
typedef __int128 sw_i128;

/** A rank's first qualifying spike. */
typedef struct sw_cand_s {
    int64_t rank;
    int64_t spike_ts; /**< raw timestamp of the spike sample, ns */
    uint64_t aligned; /**< spike_ts - offset(rank), ns */
    int64_t peak;     /**< cumulative rise, bytes */
    int64_t samples;  /**< rising steps */
    bool has_session;
    sw_str_t session;
    /* Where the spike sample ran (copied to the suspect). */
    bool has_source;
    sw_str_t host;
    int64_t pid;
    bool has_device_id, has_local_rank;
    int64_t device_id, local_rank;
} sw_cand_t;

/** @brief Candidate order of SPEC 3.7: (aligned, -peak, rank). */
int sw_cand_cmp(const sw_cand_t *a, const sw_cand_t *b);

/** Inputs of sw_assemble(). */
typedef struct sw_assemble_in_s {
    bool has_job_id;
    sw_str_t job_id;
    int64_t world_size;
    const int64_t *ranks;   /**< participating ranks, ascending */
    const int64_t *counts;  /**< samples per participating rank */
    const int64_t *offsets; /**< offset per participating rank, ns */
    size_t n_ranks;
    int64_t anchor_rank;
    sw_i128 median_ns; /**< median sampling interval (SPEC 3.4) */
    int64_t skew_multiplier;
    const sw_cand_t *cands;       /**< sorted; at least every suspect */
    size_t n_cands;               /**< entries in cands */
    size_t n_cands_total;         /**< candidates in all */
    sw_phase_t *phase;            /**< may be NULL (no attribution) */
    const char *const *pre_notes; /**< notes that come first */
    size_t n_pre_notes;
    uint64_t counterless; /**< the job's counterless samples (SPEC 2, v4): when > 0, the
                               last note says how many were skipped */
} sw_assemble_in_t;

/**
 * @brief Fill @p out from @p in. Arrays and strings of @p out are
 *        allocated in @p arena or borrowed from @p in.
 */
void sw_assemble(const sw_assemble_in_t *in, sw_arena_t *arena, sw_analysis_t *out);

/**
 * @brief The note of a job with @p n counterless samples (SPEC 2, v4).
 * @returns a string in @p arena (borrowed until the arena is reset);
 *          @p tmp is scratch.
 */
sw_str_t sw_counterless_note(sw_arena_t *arena, sw_buf_t *tmp, uint64_t n);

/**
 * @brief Median of SPEC 3.4 from the two middle values of a sorted list of
 *        @p n values (lo = element (n-1)/2, hi = element n/2).
 */
sw_i128 sw_median_of(sw_i128 lo, sw_i128 hi, size_t n);

/**
 * @brief Spike threshold of SPEC 3.3. @returns false when the threshold is
 *        beyond any possible rise (no candidate can exist).
 */
bool sw_spike_threshold(int64_t max_used, int64_t min_bytes, double fraction, int64_t *threshold);

/**
 * @brief Confidence of the suspects at the earliest aligned time (the
 *        others are always low): SPEC 3.7.
 * @param n_cands_total candidates in all; below 2 everything is low.
 * @param earliest_count suspects sharing the earliest aligned time.
 * @param lead lead over onset of the earliest suspect, ns.
 */
sw_confidence_t sw_earliest_confidence(size_t n_cands_total, size_t earliest_count, bool sparse,
                                       uint64_t lead, sw_i128 median_ns);

#endif /* SW_ASSEMBLE_H */
