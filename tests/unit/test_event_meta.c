/*
 * SPEC 8.1's death markers in metadata (src/codec/sw_event_meta.c): a
 * top-level key oom_reason or oom_dump_path, as written, makes the event
 * a death marker, whatever the bytes before it (the search that passes
 * over metadata without `"oom_` looks at 16 bytes at a time: the key is
 * put at every offset across those chunks and near the text's end), and
 * nothing else does: the text in a value, a nested key, an escaped key, a
 * sample's metadata.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sw_event_meta.h"

static char g_buf[SW_EVENT_REASON_BUF];

/* The markers of an event of kind k with metadata text m. */
static sw_event_t marked(sw_ev_kind_t k, const char *m)
{
    sw_event_t ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = k;
    ev.metadata_json = (sw_str_t){m, strlen(m)};
    sw_event_meta_oom(&ev, g_buf);
    return ev;
}

static void test_key_at_every_offset(void **state)
{
    (void)state;
    char m[256], pad[80];
    for (size_t n = 0; n < 70; n++) {
        memset(pad, 'x', n);
        pad[n] = '\0';
        /* oom_reason after a value of n bytes, last or followed by more */
        snprintf(m, sizeof(m), "{\"pad\": \"%s\", \"oom_reason\": \"out of memory\"}", pad);
        sw_event_t ev = marked(SW_EV_OTHER, m);
        assert_true(ev.oom_marker);
        assert_true(ev.has_oom_reason);
        assert_int_equal(ev.oom_reason.len, strlen("out of memory"));
        assert_memory_equal(ev.oom_reason.ptr, "out of memory", ev.oom_reason.len);
        snprintf(m, sizeof(m), "{\"pad\": \"%s\", \"oom_reason\": \"r\", \"after\": 1}", pad);
        assert_true(marked(SW_EV_OTHER, m).oom_marker);
        /* oom_dump_path: a marker without a reason */
        snprintf(m, sizeof(m), "{\"p\": \"%s\", \"oom_dump_path\": \"/d\"}", pad);
        ev = marked(SW_EV_PHASE_EXIT, m);
        assert_true(ev.oom_marker);
        assert_false(ev.has_oom_reason);
        /* no key: the text of a value, a nested key, an escaped key */
        snprintf(m, sizeof(m), "{\"pad\": \"%s\", \"k\": \"oom_reason\"}", pad);
        assert_false(marked(SW_EV_OTHER, m).oom_marker);
        snprintf(m, sizeof(m), "{\"pad\": \"%s\", \"phase_scope\": {\"oom_reason\": \"r\"}}", pad);
        assert_false(marked(SW_EV_PHASE_ENTER, m).oom_marker);
        snprintf(m, sizeof(m), "{\"pad\": \"%s\", \"\\u006fom_reason\": \"r\"}", pad);
        assert_false(marked(SW_EV_OTHER, m).oom_marker);
        snprintf(m, sizeof(m), "{\"pad\": \"%s\", \"oom_other\": \"r\"}", pad);
        assert_false(marked(SW_EV_OTHER, m).oom_marker);
        /* a sample is never a marker */
        snprintf(m, sizeof(m), "{\"pad\": \"%s\", \"oom_reason\": \"r\"}", pad);
        assert_false(marked(SW_EV_SAMPLE, m).oom_marker);
    }
}

static void test_short_and_empty(void **state)
{
    (void)state;
    assert_false(marked(SW_EV_OTHER, "{}").oom_marker);
    assert_false(marked(SW_EV_OTHER, "").oom_marker);
    assert_true(marked(SW_EV_OTHER, "{\"oom_reason\":\"\"}").oom_marker);
    assert_true(marked(SW_EV_OTHER, "{\"oom_dump_path\":1}").oom_marker);
    /* a phase event's scope, as stormlog writes it: no marker */
    assert_false(marked(SW_EV_PHASE_EXIT,
                        "{\"phase_scope\": {\"action\": \"exit\", \"name\": \"forward\", \"path\": "
                        "[\"train\", \"forward\"], \"depth\": 2, \"scope_id\": \"s-0-97-0-fwd\", "
                        "\"parent_scope_id\": null, \"thread_id\": 1, \"thread_name\": "
                        "\"MainThread\", \"sequence\": 2}}")
                     .oom_marker);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_at_every_offset),
        cmocka_unit_test(test_short_and_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
