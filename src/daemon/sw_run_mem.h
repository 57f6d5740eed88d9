/* Memory: one budget for the process (sw_run_mem.c). Internal to the daemon. */
#ifndef SW_RUN_MEM_H
#define SW_RUN_MEM_H

#include "sw_run_int.h"

/* sw_run_mem.c */
void sw_run_mem_serve(run_t *r, void *const *jobs, size_t njobs);
void sw_run_memory_tick(run_t *r);
void sw_run_mem_attach(run_t *r, part_t *p);
void sw_run_mem_detach(run_t *r, part_t *p);
int64_t sw_run_prefetch_fit(run_t *r, int64_t kb, int partitions);

#endif /* SW_RUN_MEM_H */
