/*
 * What the test_json_* tests share: a decoded event rendered as JSON and
 * compared with the expected fields (SPEC 7 style, naming the first differing
 * field), and the fast path held against the general path.
 */
#ifndef JSON_RENDER_H
#define JSON_RENDER_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_codec_telemetry.h"
#include "sw_event.h"
#include "sw_phase.h"
#include "sw_testlib.h"

/* Byte-exact comparison of a view with an expected byte string. */
#define CHECK_BYTES(view, want, want_len)                                         \
    do {                                                                          \
        sw_str_t v_ = (view);                                                     \
        size_t wl_ = (want_len);                                                  \
        SW_CHECK(v_.len == wl_ && (wl_ == 0 || memcmp(v_.ptr, (want), wl_) == 0), \
                 "got %zu bytes \"%.*s\", expected %zu bytes \"%.*s\"", v_.len,   \
                 (int)(v_.len > 80 ? 80 : v_.len), v_.ptr ? v_.ptr : "", wl_,     \
                 (int)(wl_ > 80 ? 80 : wl_), (want));                             \
    } while (0)

void end_test(void);

/* ---- rendering a decoded event as JSON ---------------------------------- */

json_t *jstr(sw_str_t s);

json_t *jopt_i64(sw_opt_i64_t o);

json_t *jopt_str(sw_opt_str_t o);

const char *kind_name(sw_ev_kind_t k);

/* Every field of the event, plus sw_phase_boundary_ok(). */
json_t *render_event(const sw_event_t *ev);

/* Compare the rendered event with the expected fields (a subset: keys
 * the expectation omits are not checked). */
void check_fields(const char *file, int line, const sw_event_t *ev, const char *want_text);

/* ---- fast path == general path -------------------------------------------- */

/* Decode @p line with @p fast (fast path on) and @p slow (off) and check
 * that code, message and event agree. @returns the fast decoder's code. */
sw_err_t check_same(const char *file, int line, sw_tdec_t *fast, sw_tdec_t *slow, const char *text,
                    size_t len);

/* ---- the table ----------------------------------------------------------- */

/* A minimal valid prefix for lines that test one field. */
#define BASE "\"timestamp_ns\": 1, \"event_type\": \"x\""

#endif /* JSON_RENDER_H */
