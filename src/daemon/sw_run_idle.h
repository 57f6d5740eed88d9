/* Idle expiry with repartition=on (sw_run_idle.c). Internal to the daemon. */
#ifndef SW_RUN_IDLE_H
#define SW_RUN_IDLE_H

#include "sw_run_int.h"

/** repartition=on, once a second: a step of the barrier that finds the
 *  forwarded time (sw_run_idle.c). */
void sw_run_idle_tick(run_t *r, int64_t now);
/** The clock idle expiry uses at @p now: the forwarded time with
 *  repartition=on (never more than 9 x job.idle.ms behind), else @p now. */
int64_t sw_run_idle_now(const run_t *r, int64_t now);
void sw_run_idle_free(run_t *r);

#endif /* SW_RUN_IDLE_H */
