/*
 * The docs stay true: docs/properties.md's property list (between the
 * properties markers) is exactly the table the configuration module
 * generates, and README.md's first screen shows the two commands.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_conf.h"
#include "sw_testlib.h"

static void test_readme(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof(path), "%s/../../README.md", sw_test_fixtures());
    sw_buf_t readme, table;
    sw_buf_init(&readme);
    sw_buf_init(&table);
    SW_ASSERT(sw_test_read_file(path, &readme), "cannot read %s", path);
    sw_buf_t props;
    sw_buf_init(&props);
    snprintf(path, sizeof(path), "%s/../../docs/properties.md", sw_test_fixtures());
    SW_ASSERT(sw_test_read_file(path, &props), "cannot read %s", path);
    const char *begin = strstr(props.data, "<!-- properties:begin -->\n");
    const char *end = strstr(props.data, "<!-- properties:end -->");
    SW_ASSERT(begin && end && end > begin, "docs/properties.md has no properties markers");
    begin += strlen("<!-- properties:begin -->\n");
    sw_conf_markdown(&table);
    sw_buf_cstr(&table);
    size_t n = (size_t)(end - begin);
    SW_ASSERT(n == table.len && memcmp(begin, table.data, n) == 0,
              "docs/properties.md's property list differs from `stormwatch run -X markdown`;\n"
              "regenerate it between the markers (scripts/update-readme.sh).");
    /* The first screen (first 40 lines) carries the two commands. */
    const char *p = readme.data;
    for (int i = 0; i < 40 && p; i++) p = strchr(p + 1, '\n');
    size_t first = p ? (size_t)(p - readme.data) : readme.len;
    char *screen = strndup(readme.data, first);
    SW_ASSERT(strstr(screen, "make demo") && strstr(screen, "make test"),
              "the first 40 lines of README.md must show `make demo` and `make test`");
    free(screen);
    sw_buf_clear(&readme);
    sw_buf_clear(&props);
    sw_buf_clear(&table);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readme),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
