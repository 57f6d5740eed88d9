/*
 * Confluent Schema Registry client and writer-schema cache: schemas by id
 * (GET /schemas/ids/{id}), ids of a subject's schema (POST
 * /subjects/{subject}/versions to register, POST /subjects/{subject} to look
 * up), over libcurl, URLs tried in order. The cache maps a writer schema id
 * to its resolution plan against one reader schema (or to why it has none);
 * ids are immutable, so entries never expire; the cache is bounded. Without
 * URLs only preloaded schemas (avro.schema.ids.telemetry) are known.
 * Decides nothing about Kafka: callers hold or dead-letter.
 */
#ifndef SW_REGISTRY_H
#define SW_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_avro_resolve.h"
#include "sw_err.h"

typedef struct sw_registry_s sw_registry_t;

/** Settings (strings borrowed during sw_registry_new() only). */
typedef struct sw_registry_conf_s {
    const char *const *urls; /**< base URLs, tried in order; may be empty */
    size_t n_urls;
    const char *user_info;   /**< "USER:PASSWORD" or "" (basic auth) */
    const char *ca_location; /**< PEM file or "" */
    const char *cert_location;
    const char *key_location;
    int64_t timeout_ms; /**< per request and URL */
    const char *reader; /**< reader schema JSON the plans resolve to */
    size_t reader_len;
    size_t cache_max; /**< most cached ids; 0 = 1024 */
    /** Without URLs: what an unknown id's error adds, the setting that
     *  would resolve it (e.g. "set schema.registry.url, or ..."); NULL: nothing. */
    const char *unknown_hint;
} sw_registry_conf_t;

/** Most entries the cache keeps by default. */
#define SW_REGISTRY_CACHE_MAX 1024

/** @brief New client. @returns caller frees with sw_registry_destroy(). */
sw_registry_t *sw_registry_new(const sw_registry_conf_t *rc);

/** @brief Free (accepts NULL). */
void sw_registry_destroy(sw_registry_t *reg);

/** @brief Whether URLs are configured. */
bool sw_registry_remote(const sw_registry_t *reg);

/**
 * @brief Preload writer schema @p id (JSON text, borrowed) as if the
 *        registry had returned it (avro.schema.ids.telemetry, the fixed
 *        id of the embedded schema).
 * @returns SW_OK; SW_ERR_AVRO when it does not resolve (@p errstr names
 *          the id and the field).
 */
sw_err_t sw_registry_add(sw_registry_t *reg, int32_t id, const char *schema, size_t len,
                         char *errstr, size_t errstr_size);

/**
 * @brief The resolution plan of writer schema @p id: cached, or fetched
 *        and resolved now (one request per URL, each bounded by
 *        timeout_ms); with a fetcher thread, sw_registry_lookup().
 * @param plan set on SW_OK; borrowed until sw_registry_reclaim() (a plan
 *        that leaves the cache meanwhile waits for it), so it may be used
 *        without holding the lock that serialises calls on @p reg.
 * @returns SW_OK; SW_ERR_NOT_FOUND: the registry does not know the id
 *          (40403), or there is no registry and it was not preloaded;
 *          SW_ERR_AVRO: the schema does not resolve against the reader;
 *          both are final for the id (cached) and @p errstr names the id
 *          (and the field). SW_ERR_IO: the registry could not answer
 *          (unreachable, timeout, 5xx) or answered anything but the schema
 *          or 404 with error_code 40403 (401/403, a wrong URL's 404, ...):
 *          try again later; during the backoff after a failure it is
 *          returned without a request.
 */
sw_err_t sw_registry_plan(sw_registry_t *reg, int32_t id, const sw_avro_plan_t **plan, char *errstr,
                          size_t errstr_size);

/**
 * @brief Like sw_registry_plan(), but never waits for the registry: a
 *        cached answer, or SW_ERR_PENDING (its first fetch under way) or
 *        SW_ERR_IO (a failure: backing off) with the id queued for the fetcher
 *        thread (sw_registry_fetcher_start()), which asks for it in the
 *        background, each id with its own backoff (an id whose answers are
 *        too slow waits alone; the others are asked meanwhile). Ask again
 *        later (after the fetched callback, or on a timer). Without a
 *        fetcher it is sw_registry_plan(). Thread-safe.
 */
sw_err_t sw_registry_lookup(sw_registry_t *reg, int32_t id, const sw_avro_plan_t **plan,
                            char *errstr, size_t errstr_size);

/**
 * @brief Start the fetcher thread (with URLs only; without them, nothing
 *        to fetch): from now on only it makes requests, and
 *        sw_registry_plan() no longer blocks (it is sw_registry_lookup()).
 *        Call sw_registry_subject_id() before, not after.
 * @param fetched called on the fetcher thread after each answer (or
 *        failure) is in the cache, without the lock (a wake-up for the
 *        consumer of lookups); may be NULL.
 * @returns SW_OK; SW_ERR_STATE when the thread cannot start (lookups then
 *          block as sw_registry_plan() does).
 */
sw_err_t sw_registry_fetcher_start(sw_registry_t *reg, void (*fetched)(void *opaque), void *opaque);

/** @brief Stop the fetcher thread (waits for a request in flight: at most
 *         timeout_ms per URL); sw_registry_destroy() does it too. */
void sw_registry_fetcher_stop(sw_registry_t *reg);

/**
 * @brief Free the plans that left the cache since the last call. Call it
 *        when no plan returned by sw_registry_plan() is in use any more.
 */
void sw_registry_reclaim(sw_registry_t *reg);

/**
 * @brief The id of @p schema under @p subject: registered (POST
 *        /subjects/{subject}/versions; the registry returns the existing id
 *        when it is there already) or only looked up (POST
 *        /subjects/{subject}).
 * @returns SW_OK; SW_ERR_NOT_FOUND (lookup: 40401 subject or 40403 schema
 *          not found); SW_ERR_INVALID_ARG (42201 and other 4xx: the
 *          registry refuses it); SW_ERR_IO as for sw_registry_plan().
 */
sw_err_t sw_registry_subject_id(sw_registry_t *reg, const char *subject, const char *schema,
                                bool do_register, int32_t *id, char *errstr, size_t errstr_size);

/**
 * @brief Failed requests so far and whether the last request succeeded,
 *        for the metrics.
 */
void sw_registry_stats(sw_registry_t *reg, uint64_t *errors, bool *up);

/** @brief Milliseconds until the next request is allowed (0: now). */
int64_t sw_registry_backoff_ms(sw_registry_t *reg);

typedef struct sw_settings_s sw_settings_t;

/**
 * @brief A client from the schema.registry.* settings of @p set (see
 *        sw_conf_settings()), whose plans resolve to @p reader (borrowed
 *        during the call).
 * @param fixed_id without schema.registry.url, preload @p reader itself
 *        under this id (the fixed-id mode: avro.schema.id.*); < 0: not.
 * @param with_ids also preload avro.schema.ids.telemetry (each file read
 *        and resolved now).
 * @returns caller frees with sw_registry_destroy(); NULL with @p errstr
 *          naming the property, element and file when one cannot be read
 *          or does not resolve (a configuration error).
 */
sw_registry_t *sw_registry_from_settings(const sw_settings_t *set, const char *reader,
                                         size_t reader_len, int32_t fixed_id, bool with_ids,
                                         char *errstr, size_t errstr_size);

#endif /* SW_REGISTRY_H */
