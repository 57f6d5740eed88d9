/*
 * What the test_cli_* tests share: running the stormwatch binary ($SW_BIN)
 * with a command line in which "@F" stands for the fixtures directory and
 * "@T" for the test's scratch directory (removed by the group teardown),
 * and the inputs made once.
 */
#ifndef CLI_RUN_H
#define CLI_RUN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "sw_testlib.h"

void end_test(void);
extern char g_tmp[1024];

const char *tmpdir(void);

/* @p args with @F and @T expanded. */
void expand(const char *args, sw_buf_t *out);

/* Run `stormwatch ARGS` with stdin from @p in (NULL: /dev/null). */
int run(const char *args, const char *in, sw_buf_t *out, sw_buf_t *err);

bool write_file(const char *path, const char *text, size_t len);

bool gzip_file(const char *src, const char *dst);

/* ---- inputs made once -------------------------------------------------- */

#define EV(ts, rank, used)                                                   \
    "{\"timestamp_ns\": " ts ", \"event_type\": \"sample\", \"rank\": " rank \
    ", \"world_size\": 2, \"device_used_bytes\": " used "}\n"

void make_inputs(void);

int teardown(void **state);

#endif /* CLI_RUN_H */
