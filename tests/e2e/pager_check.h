/*
 * What the test_pager_* tests share: JSON parsing, RFC 3339 times against
 * gmtime_r, UTF-8 checks and hand-made records encoded in a pager format.
 */
#ifndef PAGER_CHECK_H
#define PAGER_CHECK_H

#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "sw_codec_alert.h"
#include "sw_codec_pager.h"
#include "sw_codec_telemetry.h"
#include "sw_conf.h"
#include "sw_detect.h"
#include "sw_daemon.h"
#include "sw_proc.h"
#include "sw_testlib.h"

#define ROUTING_KEY "0123456789abcdef0123456789abcdef"
#define GEN_URL "https://grafana.example.com/d/storms?var-job=x"
#define NOW_NS INT64_C(1763800000123456789)

/* ---- small helpers --------------------------------------------------------- */

json_t *parse_buf(const char *data, size_t len);

const char *str_of(json_t *obj, const char *key);

#endif /* PAGER_CHECK_H */
