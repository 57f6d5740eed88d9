/* What a group's members run: announce this member's version and mode, follow the group's (sw_run_members.c). Internal to the daemon. */
#ifndef SW_RUN_MEMBERS_H
#define SW_RUN_MEMBERS_H

#include "sw_run_int.h"

/* sw_run_members.c: announce this member's version and mode, follow the
 * group's. start: before subscribing (@p as: -1 a first start, 1 as a
 * follower of on, 2 as auto after following); may wait for peers. */
void sw_run_members_start(run_t *r, int as);
void sw_run_members_tick(run_t *r, int64_t now);
void sw_run_members_leave(run_t *r); /* before a stop: announced gone */
void sw_run_members_stop(run_t *r);

#endif /* SW_RUN_MEMBERS_H */
