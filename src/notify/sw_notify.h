/*
 * The semantics of `stormwatch notify`, without I/O: which alert records
 * page and how (dedup by job, episode and revision; the table of open
 * episodes that Alertmanager must be re-sent), when to re-send, how HTTP
 * answers are classified, the retry schedule (exponential backoff with
 * jitter, Retry-After), a token-bucket rate limit, where a partition must
 * be re-read from to rebuild its open episodes, and HMAC-SHA256 for webhook
 * signatures. Time (ms, any monotonic or wall clock the caller picks) and
 * randomness arrive as arguments: every function here is deterministic.
 * The HTTP and Kafka layers (sw_notify_http.c, src/notify/sw_notify_run.c)
 * only carry out what these functions decide.
 */
#ifndef SW_NOTIFY_H
#define SW_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_analysis.h"

/** The sinks, in the order a record is delivered to them. */
typedef enum sw_sink_e {
    SW_SINK_ALERTMANAGER = 0, /**< Alertmanager v2 API (POST /api/v2/alerts) */
    SW_SINK_PAGERDUTY = 1,    /**< PagerDuty Events API v2 */
    SW_SINK_WEBHOOK = 2,      /**< the record as JSON, optionally signed */
    SW_SINK__CNT
} sw_sink_t;

/** @brief "alertmanager", "pagerduty" or "webhook". */
const char *sw_sink_name(sw_sink_t sink);

/** What one HTTP attempt's answer means. */
typedef enum sw_notify_outcome_e {
    SW_NOTIFY_ACCEPTED = 0, /**< 2xx: delivered */
    SW_NOTIFY_RETRY = 1,    /**< 408, 429, 5xx, timeout or network error: try again */
    SW_NOTIFY_PERMANENT = 2 /**< any other status (400, 403, 413 ...): dead-letter */
} sw_notify_outcome_t;

/**
 * @brief Classify an HTTP status; @p status 0 stands for "no answer"
 *        (connection refused, timeout, TLS failure): RETRY.
 */
sw_notify_outcome_t sw_notify_classify(long status);

/** @brief "accepted", "retry" or "permanent". */
const char *sw_notify_outcome_str(sw_notify_outcome_t o);

/** Retry schedule of one sink. */
typedef struct sw_notify_backoff_s {
    int64_t base_ms; /**< delay before the first retry, ms (> 0) */
    int64_t max_ms;  /**< cap of any delay, ms (>= base_ms) */
} sw_notify_backoff_t;

/**
 * @brief Delay before retry number @p attempt (0 = the first retry):
 *        "equal jitter" exponential backoff, d = min(max, base * 2^attempt),
 *        delay in [d/2, d] chosen by @p rnd (any 64-bit random value).
 * @param retry_after_ms a Retry-After the server sent (ms), or -1: the delay
 *        is then at least this (and may exceed max_ms: the server said so).
 */
int64_t sw_notify_backoff_ms(const sw_notify_backoff_t *b, unsigned attempt, uint64_t rnd,
                             int64_t retry_after_ms);

/**
 * @brief Parse a Retry-After header value: delay-seconds ("120") or an
 *        IMF-fixdate ("Wed, 21 Oct 2015 07:28:00 GMT", relative to
 *        @p now_epoch_ms, never negative).
 * @returns true with *ms set; false for anything else (then ignore it).
 */
bool sw_notify_retry_after(const char *value, int64_t now_epoch_ms, int64_t *ms);

/** A token bucket: @p rate requests per second, bursts of up to one second's worth. */
typedef struct sw_notify_bucket_s {
    double rate_per_s; /**< 0: unlimited */
    double tokens;     /**< available now */
    int64_t last_ms;   /**< when tokens was last brought up to date */
} sw_notify_bucket_t;

/** @brief A full bucket at @p now_ms; @p rate_per_s 0 never limits. */
void sw_notify_bucket_init(sw_notify_bucket_t *b, double rate_per_s, int64_t now_ms);

/**
 * @brief Take one token at @p now_ms.
 * @returns 0 when taken; otherwise the ms to wait before one is available
 *          (nothing taken).
 */
int64_t sw_notify_bucket_take(sw_notify_bucket_t *b, int64_t now_ms);

/** What to do with one record (the same for every sink). */
typedef enum sw_notify_verdict_e {
    SW_NOTIFY_SKIP = 0,      /**< not a page (a summary of a closed episode) */
    SW_NOTIFY_DUPLICATE = 1, /**< (job, episode, revision) already delivered */
    SW_NOTIFY_TRIGGER = 2,   /**< open or update the episode's alert */
    SW_NOTIFY_RESOLVE = 3    /**< close it */
} sw_notify_verdict_t;

/** @brief "skip", "duplicate", "trigger" or "resolve". */
const char *sw_notify_verdict_str(sw_notify_verdict_t v);

/** The episode table of one notify process (opaque). */
typedef struct sw_notify_s sw_notify_t;

/**
 * @brief An empty table.
 * @param resend_ms Alertmanager re-send interval of open episodes (> 0).
 * @returns caller frees with sw_notify_destroy().
 */
sw_notify_t *sw_notify_new(int64_t resend_ms);

/** @brief Free @p n (NULL accepted). */
void sw_notify_destroy(sw_notify_t *n);

/**
 * @brief What @p rec means given what was delivered before; no change.
 * @param episode_confidence set to the confidence fixed for the record's
 *        episode (its trigger's, when the table has it; else the
 *        record's own): put it in rec->episode_confidence before encoding,
 *        so the Alertmanager severity label never changes within an episode.
 * @remark Within a job, records come in increasing (episode, revision);
 *         one that is not newer than the last applied is a DUPLICATE. A
 *         summary pages (RESOLVE) only when it closes an episode that is
 *         still open (sw_pager_decide()), and never twice.
 */
sw_notify_verdict_t sw_notify_decide(const sw_notify_t *n, const sw_record_t *rec,
                                     int *episode_confidence);

/**
 * @brief Record that @p rec was delivered by every sink (or, while
 *        rebuilding, that it had been before a restart).
 * @param verdict what sw_notify_decide() said; SKIP and DUPLICATE change
 *        nothing.
 * @param json the record as JSON (copied while its episode is open: the
 *        Alertmanager re-sends encode it again).
 * @param partition, offset where the record is in the alert topic (the
 *        rebuild offset of its episode when it opens one).
 * @param now_ms the next re-send of the episode is due resend_ms later.
 */
void sw_notify_apply(sw_notify_t *n, const sw_record_t *rec, sw_notify_verdict_t verdict,
                     int episode_confidence, const char *json, size_t json_len, int32_t partition,
                     int64_t offset, int64_t now_ms);

/** One open episode (borrowed from the table: valid until the next change). */
typedef struct sw_notify_episode_s {
    const char *json; /**< its last trigger or update record */
    size_t json_len;
    int episode_confidence; /**< fixed for the episode */
    int32_t partition;      /**< alert topic partition */
    int64_t first_offset;   /**< offset of the record that opened it */
} sw_notify_episode_t;

/**
 * @brief The open episodes whose re-send is due at @p now_ms, at most
 *        @p max of them; each is marked sent (next due resend_ms later).
 * @returns how many were written to @p out.
 */
size_t sw_notify_due(sw_notify_t *n, int64_t now_ms, sw_notify_episode_t *out, size_t max);

/** @brief Make every open episode due now (after an Alertmanager failure). */
void sw_notify_all_due(sw_notify_t *n, int64_t now_ms);

/** @brief When the next re-send is due (INT64_MAX when nothing is open). */
int64_t sw_notify_next_due(const sw_notify_t *n);

/** @brief Open episodes. */
size_t sw_notify_open_count(const sw_notify_t *n);

/**
 * @brief Where a restart must start re-reading @p partition so that every
 *        episode open before @p next_offset is rebuilt: the smallest first
 *        offset of its open episodes, or @p next_offset when none is open.
 */
int64_t sw_notify_rebuild_offset(const sw_notify_t *n, int32_t partition, int64_t next_offset);

/** @brief Forget every job of @p partition (revoked: its next owner rebuilds them). */
void sw_notify_drop_partition(sw_notify_t *n, int32_t partition);

/** SHA-256 digest size in bytes. */
#define SW_SHA256_LEN 32

/** @brief SHA-256 of @p len bytes (FIPS 180-4). */
void sw_sha256(const void *data, size_t len, uint8_t out[SW_SHA256_LEN]);

/** @brief HMAC-SHA256 (RFC 2104) of @p data under @p key. */
void sw_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                    uint8_t out[SW_SHA256_LEN]);

/**
 * @brief The webhook signature header value "sha256=<64 lower-case hex>"
 *        of @p body under @p secret, NUL-terminated into @p out.
 */
void sw_notify_signature(const char *secret, const void *body, size_t len, char out[72]);

#endif /* SW_NOTIFY_H */
