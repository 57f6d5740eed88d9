/*
 * Pager request bodies for stream records (SPEC 6): PagerDuty Events API v2
 * events and Alertmanager v2 postable alerts, written so that an HTTP sink
 * can POST each Kafka value unchanged. Pure encoders: no I/O, no clock (the
 * caller passes "now"), no Kafka. Which records page, and how, is decided
 * here (sw_pager_decide()); the caller only sends or skips.
 */
#ifndef SW_CODEC_PAGER_H
#define SW_CODEC_PAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_analysis.h"
#include "sw_types.h"

/** Pager formats (values of output.format besides json and avro). */
typedef enum sw_pager_format_e {
    SW_PAGER_PAGERDUTY = 0,   /**< PagerDuty Events API v2 event (one object) */
    SW_PAGER_ALERTMANAGER = 1 /**< Alertmanager v2: array of one postable alert */
} sw_pager_format_t;

/** What a record means to a pager. */
typedef enum sw_pager_action_e {
    SW_PAGER_SKIP = 0,    /**< not a page: nothing is sent */
    SW_PAGER_TRIGGER = 1, /**< open the episode's incident, or update it */
    SW_PAGER_RESOLVE = 2  /**< close the episode's incident */
} sw_pager_action_t;

/** Encoder options (all strings borrowed for the call). */
typedef struct sw_pager_opts_s {
    sw_pager_format_t format;
    const char *routing_key;   /**< PagerDuty integration key (secret); NULL is written as "" */
    const char *generator_url; /**< Alertmanager generatorURL; NULL or "" leaves it out */
    int64_t now_ns;            /**< ns since the Unix epoch: the time of a record without an
                                    event timestamp (a summary that resolves), and the
                                    time a firing Alertmanager alert's endsAt counts from */
    const char *labels;        /**< Alertmanager: static labels "name=value,..." (validated
                                    by the configuration); NULL or "" for none */
    int64_t ends_after_ms;     /**< Alertmanager: endsAt of a firing alert = now_ns + this;
                                    0 leaves endsAt out */
} sw_pager_opts_t;

/** PagerDuty limits: payload.summary, dedup_key and the whole event, in bytes. */
#define SW_PAGER_SUMMARY_MAX 1024
#define SW_PAGER_DEDUP_KEY_MAX 255
#define SW_PAGER_EVENT_MAX (512 * 1024)

/**
 * @brief The pager rule: trigger and update records trigger (same dedup key
 *        for the whole episode, so the open incident is updated); resolve
 *        records resolve; a summary resolves when it shows an episode still
 *        open (episode >= 1 and a cluster onset: the job went idle, or the
 *        input ended, in the middle of a storm, and no resolve record will
 *        ever follow) and is skipped otherwise (no episode, or the last one
 *        was already resolved).
 * @remark A summary analyses the same windows as the job's last sample, so
 *         it has an onset exactly when the lifecycle left the episode open.
 */
sw_pager_action_t sw_pager_decide(const sw_record_t *rec);

/** @brief "pagerduty" or "alertmanager". */
const char *sw_pager_format_str(sw_pager_format_t format);

/**
 * @brief Parse "pagerduty" or "alertmanager" (exact, lower-case).
 * @returns true with *format set; false (unchanged) for anything else.
 */
bool sw_pager_format_parse(const char *s, sw_pager_format_t *format);

/**
 * @brief Append the request body for @p rec in opts->format.
 * @returns what the body does; SW_PAGER_SKIP appends nothing.
 * @remark PagerDuty: event_action, dedup_key (sw_pager_dedup_key()) and a
 *         payload with summary (at most SW_PAGER_SUMMARY_MAX bytes, cut on a
 *         UTF-8 boundary), severity, source, timestamp, component, group,
 *         class and custom_details = the SPEC record. When the event would
 *         exceed SW_PAGER_EVENT_MAX bytes, custom_details loses the rank maps
 *         and rank lists, then everything but the lifecycle fields, and says
 *         so in custom_details.truncated.
 *         Alertmanager: labels alertname, job_id, episode and dedup_key (the
 *         same for every record of an episode), annotations with the values
 *         that change, startsAt, endsAt (resolve only) and generatorURL.
 *         Both: strict JSON in valid UTF-8; lone surrogates that the input
 *         carried (WTF-8) are written as U+FFFD.
 */
sw_pager_action_t sw_pager_encode(const sw_record_t *rec, const sw_pager_opts_t *opts,
                                  sw_buf_t *out);

/**
 * @brief Append the pager dedup key of @p rec: sw_record_dedup_key() when it
 *        is at most SW_PAGER_DEDUP_KEY_MAX bytes, else the job id cut short
 *        plus a hash of the whole job id (still one key per episode of one
 *        job, and never longer than SW_PAGER_DEDUP_KEY_MAX).
 */
void sw_pager_dedup_key(const sw_record_t *rec, sw_buf_t *out);

/**
 * @brief Append the pager title of a storm record: what happened first,
 *        the record's action last ("Memory storm in job J: rank 3 on
 *        node-000 GPU 3 moved first (lead 1.25 s, high confidence, ...;
 *        episode 1, trigger)"; "Memory storm in job J ended: ..."). It is
 *        PagerDuty's payload.summary and Alertmanager's summary annotation
 *        (both cut to SW_PAGER_SUMMARY_MAX).
 */
void sw_pager_title(const sw_record_t *rec, sw_buf_t *out);

/**
 * @brief Append the affected system of @p rec, PagerDuty's payload.source:
 *        the host of the first cause; without one (no suspect, or a
 *        suspect without host), "job J" (the job is what is affected).
 */
void sw_pager_source(const sw_record_t *rec, sw_buf_t *out);

/**
 * @brief Length of the longest prefix of @p s (of @p len bytes) that is at
 *        most @p max bytes and does not end inside a UTF-8 sequence.
 * @returns @p len when it fits; bytes that are not UTF-8 are cut anywhere.
 */
size_t sw_pager_utf8_cut(const char *s, size_t len, size_t max);

#endif /* SW_CODEC_PAGER_H */
