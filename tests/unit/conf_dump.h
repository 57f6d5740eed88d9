/*
 * What the test_conf_* tests share: every property with its default (the
 * expected dump of a fresh configuration) and a configuration dumped as text.
 */
#ifndef CONF_DUMP_H
#define CONF_DUMP_H

#include "sw_conf.h"
#include "sw_conf_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sw_alloc.h"
#include "sw_analysis.h"
#include "sw_redact.h"
#include "sw_testlib.h"

#define HINT " (see 'stormwatch run -X list')"
/* Every property with its default, in table order: the expected dump of a
 * fresh configuration. */
typedef struct conf_default_s {
    const char *name, *def;
} conf_default_t;
extern const conf_default_t defaults[];
/* The number of defaults[]. */
extern const size_t n_defaults;

/* The dump of @p conf, preceded by "\n" with @p nl so that every line can
 * be searched for as "\nname=value\n". */
char *dump_of2(const sw_conf_t *conf, bool nl);

#endif /* CONF_DUMP_H */
