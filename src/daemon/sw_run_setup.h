/* The daemon's start (sw_run_setup.c): clients, topics, the registry's alert schema. Internal to the daemon. */
#ifndef SW_RUN_SETUP_H
#define SW_RUN_SETUP_H

#include "sw_run_int.h"

int sw_run_topic_partitions(run_t *r, const char *topic);
int sw_run_setup(run_t *r);
int sw_run_registry_alert_id(run_t *r);

#endif /* SW_RUN_SETUP_H */
