/* repartition=auto's local engine of input partition p beside repartition p (sw_run_local.c, docs/keying-auto.md). Internal to the daemon. */
#ifndef SW_RUN_LOCAL_H
#define SW_RUN_LOCAL_H

#include "sw_run_int.h"

/* repartition=auto (sw_run_local.c). */
bool sw_run_local_sort_out(run_t *r, part_t *p, bool *more);
bool sw_run_local_may_read(const part_t *p);
void sw_run_local_assign(run_t *r, part_t *p);
void sw_run_local_release(run_t *r, part_t *p);
void sw_run_local_free(part_t *p);
bool sw_run_local_snapshot_due(const part_t *p);
void sw_run_local_marker_failed(run_t *r, part_t *p, int64_t i, const char *why);
int64_t sw_run_local_rep_start(run_t *r, const part_t *p);

/* Its hooks for the rooms below (sw_run_mode_t): installed by sw_run(). */
extern const sw_run_mode_t sw_run_local_mode;

#endif /* SW_RUN_LOCAL_H */
