/*
 * The decoded TelemetryEvent (stormlog v2/v3 shape), as the core sees it.
 * Only valid events exist in this form: the codecs validate (SPEC section 2)
 * before filling one. Strings are borrowed views; who owns them is said by
 * the function that hands the event out.
 */
#ifndef SW_EVENT_H
#define SW_EVENT_H

#include <stdbool.h>
#include <stdint.h>

#include "sw_types.h"

/** What kind of event this is, for the analysis. */
typedef enum sw_ev_kind_e {
    SW_EV_OTHER = 0,       /**< any other event_type (not analysed) */
    SW_EV_SAMPLE = 1,      /**< event_type case-folds to "sample" */
    SW_EV_PHASE_ENTER = 2, /**< event_type is exactly "phase_enter" */
    SW_EV_PHASE_EXIT = 3   /**< event_type is exactly "phase_exit" */
} sw_ev_kind_t;

/** Longest event_type, job_id, host and session_id accepted, in bytes: an
 *  event with a longer one is invalid (dead-lettered), so that every alert
 *  it can cause fits in a Kafka message (a record repeats the job id, and
 *  each suspect its host and session). */
#define SW_IDENT_MAX 1024

/** Maximum number of path elements kept for a phase scope. */
#define SW_PHASE_PATH_MAX 32

/** A well-formed metadata.phase_scope of a phase boundary (SPEC section 5). */
typedef struct sw_phase_scope_s {
    bool enter;                       /**< action "enter" (else "exit") */
    sw_str_t name;                    /**< non-blank name */
    sw_str_t path[SW_PHASE_PATH_MAX]; /**< non-empty path strings, in order */
    int path_len;                     /**< number of path elements (the depth), >= 1 */
    sw_str_t scope_id;                /**< scope identifier */
    bool has_parent;                  /**< parent_scope_id is a string (else null) */
    sw_str_t parent_scope_id;         /**< parent scope id when has_parent */
    int64_t thread_id;                /**< thread identifier */
    sw_str_t thread_name;             /**< thread name */
    int64_t sequence;                 /**< ordering sequence number */
    bool has_depth;                   /**< depth was an integer (carried, not used) */
    int64_t depth;                    /**< depth as sent (ignored by the analysis) */
} sw_phase_scope_t;

/** An optional integer carried through decoding (not analysed). */
typedef struct sw_opt_i64_s {
    bool set;      /**< present as an integer */
    int64_t value; /**< the value when set */
} sw_opt_i64_t;

/** An optional string carried through decoding (not analysed). */
typedef struct sw_opt_str_s {
    bool set; /**< present as a string */
    sw_str_t value;
} sw_opt_str_t;

/** One valid telemetry event. */
typedef struct sw_event_s {
    int64_t timestamp_ns;         /**< >= 0, nanoseconds */
    sw_str_t event_type;          /**< non-empty */
    sw_ev_kind_t kind;            /**< derived from event_type */
    int64_t rank;                 /**< 0 <= rank < world_size */
    int64_t world_size;           /**< >= 1 */
    bool has_job_id;              /**< false: job_id is null */
    sw_str_t job_id;              /**< non-empty when has_job_id */
    bool has_session_id;          /**< false: session_id is null */
    sw_str_t session_id;          /**< any string when has_session_id */
    int64_t pid;                  /**< process id (-1 when absent) */
    sw_str_t host;                /**< host name ("unknown" when absent) */
    bool has_device_used;         /**< device_used_bytes present */
    bool counterless;             /**< a TelemetryEvent v4 sample whose device_used_bytes is
                                       null (its backend lacks the counter): valid, but
                                       dropped before analysis and only counted (SPEC 2) */
    int64_t device_used_bytes;    /**< >= 0, bytes */
    int64_t sampling_interval_ms; /**< >= 0, milliseconds */
    bool has_phase;               /**< a well-formed phase boundary */
    sw_phase_scope_t phase;       /**< valid when has_phase */

    /* Carried through (shown in reports and Avro), never analysed. */
    sw_opt_i64_t schema_version;
    sw_opt_i64_t device_id;
    sw_opt_i64_t local_rank;
    sw_opt_i64_t allocator_allocated_bytes;
    sw_opt_i64_t allocator_reserved_bytes;
    sw_opt_i64_t allocator_active_bytes;
    sw_opt_i64_t allocator_inactive_bytes;
    sw_opt_i64_t allocator_change_bytes;
    sw_opt_i64_t device_free_bytes;
    sw_opt_i64_t device_total_bytes;
    sw_opt_str_t collector;
    sw_opt_str_t context;
    sw_str_t metadata_json; /**< raw JSON text of metadata ("{}" when absent/null) */

    /* SPEC 8.1's death markers in metadata, parsed by the decoder
     * (sw_event_meta_oom() in src/codec); false/empty for samples. */
    bool oom_marker;     /**< a top-level "oom_reason" or "oom_dump_path" key */
    bool has_oom_reason; /**< metadata.oom_reason is a string ... */
    sw_str_t oom_reason; /**< ... unescaped, cut to SW_X8_REASON_MAX bytes plus "…" */
} sw_event_t;

/**
 * @brief Classify an event_type string (SPEC 1 and 5: "sample" is
 *        case-insensitive, phase boundaries are case-sensitive).
 */
sw_ev_kind_t sw_event_kind(sw_str_t event_type);

#endif /* SW_EVENT_H */
