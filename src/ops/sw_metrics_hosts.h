/*
 * The repeat offenders of `stormwatch run`'s metrics: storm episodes and
 * crashes counted by the host named first (a trigger's first suspect, a
 * crash's first death as it opens), and per host the distinct jobs it was
 * named first in over the last day. Bounded: at most a set number of hosts
 * get series of their own, the others share host="_other" (counted, no
 * job gauge); at most SW_HOSTS_JOBS_MAX jobs are remembered per host and
 * kind. Not thread-safe: sw_metrics.c calls it under its mutex. No I/O.
 */
#ifndef SW_METRICS_HOSTS_H
#define SW_METRICS_HOSTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_types.h"

/** Host name of the overflow series. */
#define SW_HOSTS_OTHER "_other"
/** Jobs remembered per host and kind (the gauge counts up to this). */
#define SW_HOSTS_JOBS_MAX 64
/** The window of the distinct-jobs gauge: one day. */
#define SW_HOSTS_WINDOW_NS (INT64_C(86400) * 1000000000)
/** Longest host name kept (longer ones are cut, on a UTF-8 boundary). */
#define SW_HOSTS_NAME_MAX 253

typedef enum sw_hosts_kind_e { SW_HOSTS_STORM = 0, SW_HOSTS_DEATH = 1 } sw_hosts_kind_t;

typedef struct sw_hosts_s sw_hosts_t;

/** @brief New table with room for @p max_hosts hosts (0: none, all "_other"). */
sw_hosts_t *sw_hosts_new(int64_t max_hosts);

/** @brief Free (accepts NULL). */
void sw_hosts_destroy(sw_hosts_t *h);

/** @brief Change the limit (hosts already tracked keep their series). */
void sw_hosts_set_limit(sw_hosts_t *h, int64_t max_hosts);

/**
 * @brief Count a storm first cause or a first death on @p host: episode or
 *        crash @p number of job @p job, at event time @p event_ns. A
 *        @p revision (an update, a crash record of revision > 0) counts
 *        only when it names another host than the one its episode or crash
 *        was counted on: the job then moves to the new host's distinct
 *        jobs, and the new host's counter goes up (the old one keeps its
 *        count: a counter never goes down). An empty host counts nothing.
 */
void sw_hosts_add(sw_hosts_t *h, sw_str_t host, sw_hosts_kind_t kind, sw_str_t job, int64_t number,
                  bool revision, int64_t event_ns);

/** @brief Distinct hosts with series of their own. */
size_t sw_hosts_count(const sw_hosts_t *h);

/**
 * @brief Append the samples of @p name{host=...,kind=...}: the counters
 *        (@p jobs false), or the distinct jobs whose latest first cause
 *        (event time) lies within SW_HOSTS_WINDOW_NS before @p now_ns
 *        (@p jobs true; now_ns is raised to the newest event time seen,
 *        so a record from a clock that runs ahead still counts).
 */
void sw_hosts_render(const sw_hosts_t *h, const char *name, bool jobs, int64_t now_ns,
                     sw_buf_t *out);

#endif /* SW_METRICS_HOSTS_H */
