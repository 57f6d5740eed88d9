/*
 * The logger's rate limit (src/util/sw_log.c): per call site (format
 * string) SW_LOG_LIMIT_BURST lines per window, then one closing line
 * "... and N more like it in the last M s (like: ...)" when the window
 * ends (the next message or sw_log_limit_tick) or at sw_log_limit_flush;
 * call sites sharing one sw_log_limit_t are counted apart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sw_log.h"
#include "sw_testlib.h"

/* What the logger wrote to @p f so far (caller frees). */
static char *text_of(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    char *buf = calloc(1, (size_t)n + 1);
    rewind(f);
    if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) buf[0] = '\0';
    fseek(f, 0, SEEK_END);
    return buf;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

static void test_burst_then_closing_line(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    SW_ASSERT_NOT_NULL(f);
    sw_log_t lg = sw_log_make(SW_LOG_WARN, "t");
    lg.out = f;
    sw_log_limit_t lim = {0};
    for (int i = 0; i < 25; i++)
        sw_log_limited(&lg, &lim, SW_LOG_WARN, "offset %d: unknown schema id 7", i);
    for (int i = 0; i < 3; i++) sw_log_limited(&lg, &lim, SW_LOG_WARN, "commit failed: %d", i);
    /* Below the level: neither shown nor counted. */
    sw_log_limited(&lg, &lim, SW_LOG_DEBUG, "offset %d: unknown schema id 7", 99);
    char *t = text_of(f);
    SW_ASSERT_I64(count(t, "unknown schema id 7"), SW_LOG_LIMIT_BURST);
    SW_ASSERT_I64(count(t, "commit failed"), 3);
    SW_ASSERT_I64(count(t, "more like it"), 0);
    free(t);
    /* The window has not ended: a tick says nothing yet; a flush does. */
    sw_log_limit_tick(&lg, &lim);
    t = text_of(f);
    SW_ASSERT_I64(count(t, "more like it"), 0);
    free(t);
    sw_log_limit_flush(&lg, &lim);
    t = text_of(f);
    SW_ASSERT_I64(count(t,
                        "WARN t: ... and 15 more like it in the last 1 s (like: offset 9: "
                        "unknown schema id 7)\n"),
                  1);
    SW_ASSERT_I64(count(t, "more like it"), 1); /* the commit site suppressed nothing */
    free(t);
    /* After the closing line the site shows again. */
    sw_log_limited(&lg, &lim, SW_LOG_WARN, "offset %d: unknown schema id 7", 100);
    t = text_of(f);
    SW_ASSERT_I64(count(t, "offset 100: unknown schema id 7"), 1);
    free(t);
    fclose(f);
}

/* More call sites than slots: the oldest site's slot is reused, its
 * suppressed count said first, never lost. */
static void test_many_sites(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    SW_ASSERT_NOT_NULL(f);
    sw_log_t lg = sw_log_make(SW_LOG_INFO, NULL);
    lg.out = f;
    sw_log_limit_t lim = {0};
    static const char *const fmts[SW_LOG_LIMIT_SITES + 1] = {"a %d", "b %d", "c %d", "d %d", "e %d",
                                                             "f %d", "g %d", "h %d", "i %d"};
    for (int s = 0; s < SW_LOG_LIMIT_SITES; s++)
        for (int i = 0; i < SW_LOG_LIMIT_BURST + 2; i++)
            sw_log_limited(&lg, &lim, SW_LOG_INFO, fmts[s], i);
    sw_log_limited(&lg, &lim, SW_LOG_INFO, fmts[SW_LOG_LIMIT_SITES], 0);
    char *t = text_of(f);
    SW_ASSERT_I64(count(t, "... and 2 more like it"), 1);
    SW_ASSERT_I64(count(t, "i 0\n"), 1);
    free(t);
    sw_log_limit_flush(&lg, &lim);
    t = text_of(f);
    SW_ASSERT_I64(count(t, "... and 2 more like it"), SW_LOG_LIMIT_SITES);
    free(t);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_then_closing_line),
        cmocka_unit_test(test_many_sites),
    };
    return cmocka_run_group_tests_name("test_log", tests, NULL, NULL);
}
