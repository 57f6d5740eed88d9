/*
 * The result of the cross-rank first-cause analysis (SPEC 3.8), shared by
 * the batch analysis, the stream engine and the codecs, plus the analysis
 * parameters (SPEC 4). Plain value types: arrays and strings inside a
 * result are borrowed from whoever produced it.
 */
#ifndef SW_ANALYSIS_H
#define SW_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_event.h"
#include "sw_types.h"
#include "sw_arena.h"
#include "sw_hash.h"

/** Analysis parameters (SPEC 4); the core takes them by value. */
typedef struct sw_params_s {
    int64_t spike_min_bytes;      /**< threshold floor, bytes (default 64 MiB) */
    double spike_fraction;        /**< fraction of a rank's max (default 0.10) */
    int64_t skew_note_multiplier; /**< skew note factor (default 5) */
    int64_t window_samples;       /**< stream window per rank, 1..SW_WINDOW_SAMPLES_MAX
                                       (default 512; window.samples checks the range) */
    int64_t stale_ms;             /**< stream staleness, ms; 0 = never (default 60000) */
    int64_t max_jobs;             /**< stream: jobs tracked at once; 0 = unlimited */
    int64_t max_ranks_per_job;    /**< stream: rank/world_size bound; 0 = unlimited */
    sw_hash_key_t hash_key;       /**< key of every table keyed by input strings (job ids,
                                       hosts, sessions); a process draws it at random,
                                       sw_params_default() leaves it zero */
    int64_t silence_ms;           /**< SPEC 8.2 b: a rank is silent after this, ms (30000) */
    int64_t oom_warn_ms;          /**< SPEC 8.4: warn when full within this, ms (120000) */
    double oom_warn_headroom;     /**< SPEC 8.4: ... and headroom under this fraction (0.10) */
    /** Stream: a debug trace of the engine, one line a call ("job J: A -> B
     *  (reason)" for each change of a job's episode lifecycle); NULL (the
     *  default): none. Never part of any output or snapshot. @p line is
     *  borrowed: valid during the call. Called on the feeding thread. */
    void (*trace)(void *opaque, const char *line);
    void *trace_opaque; /**< passed to trace (borrowed) */
} sw_params_t;

#define SW_DEFAULT_SPIKE_MIN_BYTES ((int64_t)64 * 1024 * 1024)
#define SW_DEFAULT_SPIKE_FRACTION 0.10
#define SW_DEFAULT_SKEW_NOTE_MULTIPLIER 5
#define SW_DEFAULT_WINDOW_SAMPLES 512
/** Largest window.samples: the rings' uint32_t indices stay far from overflow. */
#define SW_WINDOW_SAMPLES_MAX 1000000
#define SW_DEFAULT_STALE_MS 60000
#define SW_DEFAULT_MAX_JOBS 10000
#define SW_DEFAULT_MAX_RANKS_PER_JOB 131072
#define SW_DEFAULT_SILENCE_MS 30000
#define SW_DEFAULT_OOM_WARN_MS 120000
#define SW_DEFAULT_OOM_WARN_HEADROOM 0.10

/** @brief The SPEC 4 defaults. */
sw_params_t sw_params_default(void);

/** Confidence of a suspect. */
typedef enum sw_confidence_e {
    SW_CONFIDENCE_LOW = 0,
    SW_CONFIDENCE_MEDIUM = 1,
    SW_CONFIDENCE_HIGH = 2
} sw_confidence_t;

/** @brief "low", "medium" or "high". */
const char *sw_confidence_str(sw_confidence_t c);

/** How a phase attribution resolved (SPEC 5). */
typedef enum sw_phase_res_e {
    SW_PHASE_NONE = 0,     /**< null attribution */
    SW_PHASE_UNIQUE = 1,   /**< one matching span */
    SW_PHASE_AMBIGUOUS = 2 /**< several candidates */
} sw_phase_res_t;

/** A phase attribution (SPEC 5). */
typedef struct sw_phase_attr_s {
    sw_phase_res_t resolution;
    const sw_str_t *paths; /**< sorted distinct labels */
    size_t n_paths;
    bool has_summary;      /**< ambiguous with >= 2 labels */
    sw_str_t summary_path; /**< phase_summary.phase_path */
    sw_str_t path;         /**< unique: the label */
    sw_str_t scope_id;     /**< unique: scope id of the match */
    int64_t thread_id;     /**< unique: thread id */
    sw_str_t thread_name;  /**< unique: thread name */
} sw_phase_attr_t;

/** One first-cause suspect (SPEC 3.7, 3.8). */
typedef struct sw_suspect_s {
    int64_t rank;
    int64_t first_spike_timestamp_ns;          /**< raw timestamp of the spike sample */
    uint64_t aligned_first_spike_timestamp_ns; /**< raw - offset (always >= 0) */
    int64_t peak_delta_bytes;                  /**< cumulative rise at the spike */
    int64_t spike_window_samples;              /**< rising steps in the spike */
    int64_t lead_over_cluster_onset_ns;        /**< onset - aligned, or 0 */
    sw_confidence_t confidence;
    int64_t supporting_ranks; /**< number of suspects */
    bool has_session;         /**< spike sample had a session_id */
    sw_str_t session_id;      /**< its session_id */
    sw_phase_attr_t phase;    /**< phase attribution */
    /* Where the spike ran (extra keys of records; the spike sample's). */
    bool has_source;     /**< host and pid below are set */
    sw_str_t host;       /**< host of the spike sample */
    int64_t pid;         /**< its pid (-1 when absent) */
    bool has_device_id;  /**< device_id was sent */
    int64_t device_id;   /**< the GPU's device index */
    bool has_local_rank; /**< local_rank was sent */
    int64_t local_rank;  /**< rank within the host */
    /* Timeline excerpt of the rank's window (stream records; none in the
     * batch analysis): parallel arrays of aligned time and device_used,
     * down-sampled, always holding the spike's first and last sample and
     * the window's last sample. */
    size_t n_timeline;                  /**< 0: no excerpt */
    const int64_t *timeline_aligned_ns; /**< raw timestamp - offset */
    const int64_t *timeline_used;       /**< device_used_bytes */
    size_t timeline_spike_start;        /**< index of the rising run's base sample */
    size_t timeline_spike;              /**< index of the spike sample */
    int64_t timeline_window;            /**< samples in the window */
} sw_suspect_t;

/** Largest world_size (and rank + 1) any analysis accepts: 2^24 ranks.
 *  Beyond it the missing-ranks list alone would not fit in memory, so a
 *  sample claiming more is refused as over a limit (SW_ERR_LIMIT), in the
 *  batch analysis as in the stream engine. */
#define SW_WORLD_SIZE_MAX 16777216

/** Most points in a suspect's timeline excerpt. */
#define SW_TIMELINE_MAX_POINTS 250
/** Points of all excerpts of one record together, at most (each suspect
 *  keeps at least SW_TIMELINE_MIN_POINTS), so alerts stay small. */
#define SW_TIMELINE_RECORD_POINTS 4096
/** Fewest points a suspect's excerpt is cut down to. */
#define SW_TIMELINE_MIN_POINTS 8

/** A (rank, value) pair of a rank-keyed map. */
typedef struct sw_rank_val_s {
    int64_t rank;
    int64_t value;
} sw_rank_val_t;

/** The analysis summary (SPEC 3.8). */
typedef struct sw_analysis_s {
    bool has_job_id; /**< false: job_id is null */
    sw_str_t job_id;
    int64_t world_size;
    const int64_t *participating; /**< ascending */
    size_t n_participating;
    const int64_t *missing; /**< ascending */
    size_t n_missing;
    const sw_rank_val_t *counts; /**< rank_sample_counts, ascending rank */
    size_t n_counts;
    const sw_rank_val_t *offsets; /**< alignment_offsets_ns, ascending rank */
    size_t n_offsets;
    int64_t anchor_rank; /**< -1 when there is no anchor */
    bool has_onset;
    uint64_t onset_ns; /**< cluster_onset_timestamp_ns */
    const sw_suspect_t *suspects;
    size_t n_suspects;
    const sw_str_t *notes;
    size_t n_notes;
} sw_analysis_t;

/** Stream record actions (SPEC 6). */
typedef enum sw_action_e {
    SW_ACTION_TRIGGER = 0,
    SW_ACTION_UPDATE = 1,
    SW_ACTION_RESOLVE = 2,
    SW_ACTION_SUMMARY = 3,
    SW_ACTION_CRASH = 4,  /**< SPEC 8.3: a first death (sw_record_t.x8) */
    SW_ACTION_WARNING = 5 /**< SPEC 8.4: ranks about to fill their GPU (sw_record_t.x8) */
} sw_action_t;

/** Number of record actions (stats arrays). */
#define SW_ACTION_CNT 6

/** @brief true for SPEC 8's actions (crash, warning). */
static inline bool sw_action_is_x8(int a)
{
    return a == SW_ACTION_CRASH || a == SW_ACTION_WARNING;
}

/** @brief "trigger", "update", "resolve" or "summary". */
const char *sw_action_str(sw_action_t a);

/** Why an episode resolved (SPEC 6 step 5). */
typedef enum sw_resolve_reason_e {
    SW_RESOLVE_NONE = 0,         /**< not a resolve record */
    SW_RESOLVE_SUSPECT_LOST = 1, /**< a verdict suspect's spike left its window or went stale */
    SW_RESOLVE_ONSET_GONE = 2,   /**< fewer than two candidates remain: no cluster onset */
    SW_RESOLVE_NEXT_STORM = 3    /**< a rank's run started clearly after the storm: the next one */
} sw_resolve_reason_t;

/** @brief "suspect_lost", "onset_gone", "next_storm" (or "" for NONE). */
const char *sw_resolve_reason_str(sw_resolve_reason_t r);

/** Most ranks listed in blind_ranks and dead_ranks / warning ranks. */
#define SW_X8_BLIND_MAX 1024
#define SW_X8_DEAD_MAX 64
#define SW_X8_WARN_MAX 16
/** Longest oom_reason kept in a record, bytes (cut on a UTF-8 boundary,
 *  then "…" appended). */
#define SW_X8_REASON_MAX 1024

/** What SPEC 8.1 makes of an event_type (and its metadata and context). */
typedef enum sw_x8_kind_e {
    SW_X8_NONE = 0,      /**< nothing for SPEC 8 (samples, phases, other types) */
    SW_X8_DEATH = 1,     /**< a death marker (cause oom) */
    SW_X8_ERROR = 2,     /**< error/critical that is not a death marker (watchdog) */
    SW_X8_DEGRADED = 3,  /**< collector_degraded */
    SW_X8_RECOVERED = 4, /**< collector_recovered */
    SW_X8_STOP = 5       /**< stop: the session ended cleanly */
} sw_x8_kind_t;

/** @brief Classify an event for SPEC 8.1 (event_type case-folded; the
 *         metadata's markers as the decoder parsed them, ev->oom_marker). */
sw_x8_kind_t sw_crash_kind(const sw_event_t *ev);

/** How a rank died (SPEC 8.2). */
typedef enum sw_death_cause_e {
    SW_DEATH_OOM = 0,   /**< a death marker */
    SW_DEATH_SILENT = 1 /**< its telemetry stopped while others went on */
} sw_death_cause_t;

/** The first death of a crash (SPEC 8.3 first_death). */
typedef struct sw_death_s {
    int64_t rank;
    sw_death_cause_t cause;
    int64_t timestamp_ns;         /**< d, the rank's own clock */
    int64_t aligned_timestamp_ns; /**< d minus the rank's alignment offset */
    sw_str_t host;
    bool has_device_id;
    int64_t device_id;
    bool has_local_rank;
    int64_t local_rank;
    int64_t pid;
    bool has_session;
    sw_str_t session_id;
    bool has_oom_reason;
    sw_str_t oom_reason; /**< cut to SW_X8_REASON_MAX bytes plus "…" */
} sw_death_t;

/** One rank of a warning record (SPEC 8.4). */
typedef struct sw_warn_rank_s {
    int64_t rank;
    sw_str_t host;
    bool has_device_id;
    int64_t device_id;
    int64_t used_bytes;
    int64_t total_bytes;
    int64_t headroom_bytes;
    int64_t rate_bytes_per_s;
    int64_t eta_ms;
} sw_warn_rank_t;

/** The job's latest SPEC 6 episode, as crash and warning records show it. */
typedef struct sw_storm_ref_s {
    bool set; /**< false: the job never had an episode (storm: null) */
    int64_t episode;
    bool open;
    bool has_rank; /**< the verdict names a first rank */
    int64_t first_cause_rank;
    bool has_onset;
    uint64_t onset_ns;
} sw_storm_ref_t;

/** Why a crash or warning record closes it (open false). */
typedef enum sw_x8_end_e {
    SW_X8_END_NONE = 0,  /**< not a closing record, or the reason was not recorded */
    SW_X8_END_ALIVE = 1, /**< crash: every dead rank is alive again; warning: no rank
                                qualifies any more */
    SW_X8_END_JOB = 2,   /**< the job was summarised (end of input, job idle) */
    SW_X8_END_CRASH = 3  /**< warning: a crash opened */
} sw_x8_end_t;

/** @brief "alive_again", "job_summarised", "crash" ("" for NONE); for a
 *         warning SW_X8_END_ALIVE reads "no_rank_qualifies". */
const char *sw_x8_end_str(sw_x8_end_t e, bool crash);

/** @brief Parse sw_x8_end_str()'s words back (unknown: SW_X8_END_NONE). */
sw_x8_end_t sw_x8_end_parse(sw_str_t s);

/** The SPEC 8 part of a crash or warning record. */
typedef struct sw_x8_s {
    int64_t number;            /**< crash or warning counter of the job */
    bool open;                 /**< false on the record that closes the crash or warning */
    sw_death_t first;          /**< crash: the first death */
    int64_t deaths;            /**< crash: ranks dead now */
    const int64_t *dead_ranks; /**< crash: by aligned death time, at most SW_X8_DEAD_MAX */
    size_t n_dead;
    const sw_warn_rank_t *wranks; /**< warning: by projected time, at most SW_X8_WARN_MAX */
    size_t n_wranks;
    sw_storm_ref_t storm;
    int64_t closed_warning;      /**< crash: the warning this crash closed, 0 none */
    bool has_previous;           /**< crash revision: the first death it replaces, below */
    int64_t previous_rank;       /**< ... the rank named first until this record */
    int64_t previous_aligned_ns; /**< ... and its aligned death time */
    int64_t deaths_total;        /**< crash: deaths during the crash so far (0: not known) */
    sw_x8_end_t end;             /**< the record that closes a crash or warning: why */
    int64_t closed_by_crash;     /**< warning close: the crash that closed it, 0 none */
} sw_x8_t;

/** Where the sample that caused a record came from (Kafka provenance). */
typedef struct sw_record_source_s {
    bool set;          /**< false: not from Kafka (files) */
    sw_str_t topic;    /**< input topic */
    int32_t partition; /**< input partition */
    int64_t offset;    /**< input offset */
} sw_record_source_t;

/** A stream record (SPEC 6): lifecycle fields plus the analysis. */
typedef struct sw_record_s {
    sw_action_t action;
    int64_t episode;
    int64_t revision;
    bool has_event_ts;                  /**< false for summaries */
    int64_t event_timestamp_ns;         /**< the sample that caused it */
    sw_analysis_t analysis;             /**< full maps; encoders trim for alerts */
    int64_t cause_offset;               /**< input offset of the sample that caused it; for a
                                      summary, of the job's last event */
    int cause_source;                   /**< the log cause_offset is in: 0, or 1 for an
                                      engine fed from two (sw_detect_feed_src) */
    sw_record_source_t source;          /**< provenance, set by the Kafka layer */
    int episode_confidence;             /**< confidence of the first suspect of the episode's
                                      trigger (0..2, sw_confidence_t), fixed for the whole
                                      episode; -1: the trigger had no suspect; -2: no episode */
    bool episode_open;                  /**< the job's episode is open after this record (a
                                      summary of an open episode closes it for pagers) */
    sw_resolve_reason_t resolve_reason; /**< resolve records: why */
    int64_t resolve_rank;      /**< SW_RESOLVE_SUSPECT_LOST: the lost suspect's rank, else -1 */
    const int64_t *tied_ranks; /**< trigger/update: ranks whose spike is within one sampling
                                    interval of the first (the first included), ascending;
                                    resolve and a summary with a verdict: the verdict's */
    size_t n_tied;
    bool has_verdict;            /**< summary closing an open episode: the verdict below */
    uint64_t verdict_onset_ns;   /**< its cluster_onset_timestamp_ns */
    const sw_suspect_t *verdict; /**< its first_cause_suspects */
    size_t n_verdict;
    const int64_t *blind_ranks; /**< SPEC 8.5 (not on summaries): sorted; NULL when none */
    size_t n_blind;             /**< entries of blind_ranks (at most SW_X8_BLIND_MAX) */
    const sw_x8_t *x8;          /**< crash and warning records: the SPEC 8 payload, else NULL */
    const sw_x8_t *job_crash;   /**< a summary from the engine: the job's latest crash (open
                                     as it was before the summary closed it), NULL none; only
                                     its human title reads it (not encoded) */
} sw_record_t;

/** What sw_record_condense() keeps: rank lists' first entries, suspects
 *  (the earliest), and bytes of each note. */
#define SW_CONDENSE_RANKS 1024
#define SW_CONDENSE_SUSPECTS 64
#define SW_CONDENSE_NOTE_BYTES 2048
#define SW_CONDENSE_NOTES 64

/**
 * @brief A smaller copy of @p in, for an output with a size limit (a Kafka
 *        message) that the full record exceeds: participating and missing
 *        rank lists cut to their first SW_CONDENSE_RANKS, suspects to the
 *        first SW_CONDENSE_SUSPECTS, rank maps to the anchor and the kept
 *        suspects, notes to the first SW_CONDENSE_NOTES and each to about
 *        SW_CONDENSE_NOTE_BYTES (at a list item, saying how many items
 *        were left out); a last note says what
 *        was cut and from what. What changes is allocated in @p arena, the
 *        rest is shared with @p in.
 * @returns false, with *out = *in, when there was nothing to cut.
 */
bool sw_record_condense(const sw_record_t *in, sw_arena_t *arena, sw_record_t *out);

/**
 * @brief The entries of a rank map that an alert keeps (the anchor's and
 *        the suspects' ranks), for the encoders' trimmed maps.
 * @param v the map, ascending by rank; @p sel room for a->n_suspects + 1.
 * @returns how many indices into @p v were written to @p sel, each rank
 *          once, ascending; ranks the map does not hold are left out.
 */
size_t sw_analysis_kept_ranks(const sw_analysis_t *a, const sw_rank_val_t *v, size_t n,
                              size_t *sel);

#endif /* SW_ANALYSIS_H */
