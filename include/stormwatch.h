/*
 * stormwatch's embeddable engine: the one header a program includes to run
 * the analysis itself (batch analysis and the incremental stream engine)
 * without the daemon. It links sw_core and sw_util, which do no I/O, read no
 * clock and keep no globals. Everything else (codecs, Kafka, metrics, CLI)
 * lives in its own folder under src/ with its headers beside its sources.
 */
#ifndef STORMWATCH_H
#define STORMWATCH_H

#include "sw_err.h"
#include "sw_types.h"
#include "sw_event.h"
#include "sw_analysis.h"
#include "sw_batch.h"
#include "sw_detect.h"

#endif /* STORMWATCH_H */
