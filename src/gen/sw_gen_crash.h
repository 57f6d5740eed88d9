/*
 * Synthetic failures for SPEC 8 (`stormwatch gen --crash SCENARIO`): a
 * rank that fills its GPU and dies of OOM, the ranks that die after it (by
 * marker or silently), watchdog errors from every survivor later, host
 * clocks skewed by up to +-3 s and per-host delivery delays of up to 10 s;
 * and the negative controls (plateaus, brief peaks, no capacity) and
 * collector outages. Each job's ground truth says which rank died first,
 * when, and which rank must be warned by when. Pure: writes into buffers.
 */
#ifndef SW_GEN_CRASH_H
#define SW_GEN_CRASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_types.h"

/** What a generated job goes through. */
typedef enum sw_genx_scenario_e {
    SW_GENX_CASCADE = 0,      /**< fill ramp, OOM first death, others die, watchdog errors */
    SW_GENX_SILENT_FIRST = 1, /**< as cascade, but the first death sends no marker */
    SW_GENX_NOCAP = 2,        /**< as cascade, without device_total_bytes: no warning */
    SW_GENX_PLATEAU = 3,      /**< ranks climb to <= 88% and stay: no warning, no death */
    SW_GENX_PEAK = 4,         /**< brief peaks (< 2 s) to <= 92%: no warning, no death */
    SW_GENX_OUTAGE = 5,       /**< collector outages (blind ranks), no death */
    SW_GENX__CNT
} sw_genx_scenario_t;

/** @brief "cascade", "silent-first", "nocap", "plateau", "peak", "outage". */
const char *sw_genx_scenario_str(sw_genx_scenario_t s);

/** @brief Parse a scenario name. @returns false when unknown. */
bool sw_genx_scenario_parse(const char *s, sw_genx_scenario_t *out);

typedef struct sw_genx_opts_s {
    sw_genx_scenario_t scenario;
    int64_t ranks;          /**< ranks per job, 2..131072 (default 8) */
    int64_t jobs;           /**< jobs, interleaved in time (default 1) */
    uint64_t seed;          /**< PRNG seed (default 1) */
    int64_t interval_ms;    /**< sampling interval, ms, 50..1000 (default 200) */
    int64_t skew_ms;        /**< host clocks off by up to +-this, ms (default 3000) */
    int64_t delay_ms;       /**< per-host delivery delay up to this, ms (default 10000) */
    int64_t watchdog_s;     /**< survivors' watchdog errors this long after the first death (600) */
    int64_t start_ns;       /**< job start on the true clock (default 1763700000000000000) */
    const char *job_prefix; /**< job ids "<prefix>-<j>" (default "crash"); borrowed */
    int64_t fleet_hosts;    /**< 0: hosts node-000.. per job (default); N: a shared fleet of N
                                 hosts (sw_gen_fleet_host()) */
    int64_t bad_host;       /**< -1, or the fleet host of every job's first death */
} sw_genx_opts_t;

/** One death of a job's truth. */
typedef struct sw_genx_death_s {
    int64_t rank;
    bool silent;                 /**< no marker: its telemetry just stops */
    int64_t true_ns;             /**< time of death on the true clock */
    int64_t timestamp_ns;        /**< on its host's clock (the marker's timestamp) */
    int64_t last_sample_true_ns; /**< its last sample, true clock */
} sw_genx_death_t;

/** The ground truth of one job. */
typedef struct sw_genx_truth_s {
    const char *job_id; /**< borrowed until sw_genx_destroy() */
    sw_genx_scenario_t scenario;
    int64_t ranks;
    int64_t ranks_per_host;
    const sw_genx_death_t *deaths; /**< by true time: deaths[0] is the first */
    size_t n_deaths;
    int64_t warn_rank;           /**< rank that must be warned, -1 none */
    int64_t warn_by_true_ns;     /**< ... by this true time (death - 30 s) */
    bool expect_warning;         /**< any warning at all is expected (false: none allowed) */
    int64_t watchdog_true_ns;    /**< when the survivors' watchdog errors fire, 0 none */
    const int64_t *host_skew_ns; /**< per host (rank / ranks_per_host) */
    const int64_t *host_delay_ns;
    size_t n_hosts;
    const int64_t *outage_ranks; /**< ranks with a collector outage */
    size_t n_outages;
} sw_genx_truth_t;

typedef struct sw_genx_s sw_genx_t;

/** @brief Defaults listed at sw_genx_opts_t. */
void sw_genx_opts_default(sw_genx_opts_t *o);

/** @brief New generator. @returns NULL with errstr on a bad option. */
sw_genx_t *sw_genx_new(const sw_genx_opts_t *o, char *errstr, size_t errstr_size);

/** @brief Free (accepts NULL). */
void sw_genx_destroy(sw_genx_t *g);

/** @brief Append the next line (with '\n') in arrival order. @returns false at the end. */
bool sw_genx_next(sw_genx_t *g, sw_buf_t *out);

/** @brief The truth of job @p job (0..jobs-1). */
const sw_genx_truth_t *sw_genx_truth(const sw_genx_t *g, size_t job);

/** @brief One JSON line of a job's truth (with '\n'). */
void sw_genx_truth_json(const sw_genx_truth_t *t, sw_buf_t *out);

#endif /* SW_GEN_CRASH_H */
