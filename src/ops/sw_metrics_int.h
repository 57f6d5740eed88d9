/*
 * Internal to the metrics registry (sw_metrics*.c): the description of a
 * row of the exposition, and the table of every family the daemons export.
 *   sw_metrics.c           the registry: scalars, labelled series, the
 *                          histograms, health and readiness, the exposition
 *   sw_metrics_families.c  the families: name, type, help text, where the
 *                          value lives and which daemon exports it
 *   sw_metrics_hosts.c     the repeat offenders' counts by host
 */
#ifndef SW_METRICS_INT_H
#define SW_METRICS_INT_H

#include <stdbool.h>
#include <stddef.h>

typedef enum mtype_e { MT_COUNTER, MT_GAUGE, MT_GAUGE_DOUBLE, MT_HISTOGRAM } mtype_t;

/* Where a row's samples come from. */
typedef enum src_e {
    SRC_SCALAR,
    SRC_EVENTS_IN,
    SRC_LAG,
    SRC_HISTOGRAM,
    SRC_MISKEYED,
    SRC_REQ_HISTOGRAM,
    SRC_SKIPPED,
    SRC_ALERT_HISTOGRAM,
    SRC_FIRST_CAUSE,     /* repeat offenders: counts by host (sw_metrics_hosts.c) */
    SRC_FIRST_CAUSE_JOBS /* ... distinct jobs by host over the last day */
} src_t;

/* Which daemon exports a family: `run` (the default), `notify`, or both.
 * A registry renders the families of its daemon only (notify's has no
 * engine, no input topics, no dead-letter topic of run's). */
enum { OWN_RUN = 1, OWN_NOTIFY = 2, OWN_BOTH = 3, OWN_SHIP = 4 };

/* One row per series of the output (one row for a whole dynamic family or
 * the histogram). Rows of one family are adjacent; the first carries the
 * help text. */
typedef struct desc_s {
    const char *name;
    mtype_t type;
    src_t src;
    int id;             /* sw_metric_t of SRC_SCALAR rows, else -1 */
    const char *lname;  /* fixed label name, or NULL */
    const char *lvalue; /* its value (escaped when rendered) */
    const char *help;   /* NULL on the later rows of a family */
} desc_t;

/* Every row, in the order of the exposition. */
extern const desc_t sw_metrics_desc[];
extern const size_t sw_metrics_ndesc;

/* OWN_* bits of the daemons that export row d. */
int sw_metrics_row_owner(const desc_t *d);

/* Whether row d is a schema registry family (rendered only with a registry). */
bool sw_metrics_registry_row(const desc_t *d);

#endif /* SW_METRICS_INT_H */
