/* repartition=auto: the group's partitioner (sw_run_keying.c). Internal to the daemon. */
#ifndef SW_RUN_KEYING_H
#define SW_RUN_KEYING_H

#include "sw_run_int.h"

/* repartition=auto: the group's partitioner (sw_run_keying.c). */
/** At setup, with the mirror consumer: as set, recorded, kept or pending. */
void sw_run_keying_start(run_t *r);
/** Every loop: while undecided, decide (partition 0's owner) or read the
 *  record; decided, partition 0's owner writes it again every hour. */
void sw_run_keying_tick(run_t *r, int64_t now);
/** Once a second: the WARN when most job-keyed input takes the hop. */
void sw_run_keying_warn(run_t *r);

#endif /* SW_RUN_KEYING_H */
