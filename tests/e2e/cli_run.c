/* The helpers of cli_run.h. */
#include "cli_run.h"

void end_test(void)
{
    SW_CHECK_END();
}

char g_tmp[1024];

const char *tmpdir(void)
{
    if (!g_tmp[0]) {
        snprintf(g_tmp, sizeof(g_tmp), "%s/test_cli_%d", sw_test_tmp(), (int)getpid());
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", g_tmp);
        SW_ASSERT_I64(system(cmd), 0);
    }
    return g_tmp;
}

/* @p args with @F and @T expanded. */
void expand(const char *args, sw_buf_t *out)
{
    out->len = 0;
    for (const char *p = args; *p; p++) {
        if (p[0] == '@' && p[1] == 'F') {
            sw_buf_puts(out, sw_test_fixtures());
            p++;
        } else if (p[0] == '@' && p[1] == 'T') {
            sw_buf_puts(out, tmpdir());
            p++;
        } else {
            sw_buf_putc(out, *p);
        }
    }
    sw_buf_cstr(out);
}

/* Run `stormwatch ARGS` with stdin from @p in (NULL: /dev/null). */
int run(const char *args, const char *in, sw_buf_t *out, sw_buf_t *err)
{
    sw_buf_t a, cmd;
    sw_buf_init(&a);
    sw_buf_init(&cmd);
    expand(args, &a);
    char errpath[1200];
    snprintf(errpath, sizeof(errpath), "%s/stderr.txt", tmpdir());
    sw_buf_printf(&cmd, "'%s' %s <'%s' 2>'%s'", sw_test_bin(), a.data, in ? in : "/dev/null",
                  errpath);
    int rc = sw_test_run(sw_buf_cstr(&cmd), out);
    if (!sw_test_read_file(errpath, err)) {
        err->len = 0;
        sw_buf_cstr(err);
    }
    sw_buf_clear(&a);
    sw_buf_clear(&cmd);
    return rc;
}

bool write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(text, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

bool gzip_file(const char *src, const char *dst)
{
    sw_buf_t b;
    sw_buf_init(&b);
    if (!sw_test_read_file(src, &b)) return false;
    gzFile gz = gzopen(dst, "wb");
    if (!gz) return false;
    bool ok = gzwrite(gz, b.data, (unsigned)b.len) == (int)b.len;
    ok = gzclose(gz) == Z_OK && ok;
    sw_buf_clear(&b);
    return ok;
}

void make_inputs(void)
{
    char p[1200];
    static const char bad[] =
        EV("0", "0", "0")
        "{\"timestamp_ns\": 1, \"event_type\": \"sample\", \"rank\": -3, \"device_used_bytes\": 1}\n"
        "\n"
        "   \n"
        EV("10", "0", "0")
        "not json\n";
    snprintf(p, sizeof(p), "%s/bad.jsonl", tmpdir());
    SW_ASSERT_TRUE(write_file(p, bad, sizeof(bad) - 1));
    /* no valid line at all (CSV, a log, a wrong-schema object) */
    static const char none[] =
        "timestamp_ns,rank,device_used_bytes\n"
        "1,0,100\n"
        "\n"
        "{\"ts\": 1, \"rank\": 0}\n";
    snprintf(p, sizeof(p), "%s/none-valid.csv", tmpdir());
    SW_ASSERT_TRUE(write_file(p, none, sizeof(none) - 1));
    /* truncated gzip of a fixture */
    char src[1200], gz[1200];
    snprintf(src, sizeof(src), "%s/gen1.jsonl", sw_test_fixtures());
    snprintf(gz, sizeof(gz), "%s/gen1.jsonl.gz", tmpdir());
    SW_ASSERT_TRUE(gzip_file(src, gz));
    sw_buf_t b;
    sw_buf_init(&b);
    SW_ASSERT_TRUE(sw_test_read_file(gz, &b));
    snprintf(p, sizeof(p), "%s/trunc.jsonl.gz", tmpdir());
    SW_ASSERT_TRUE(write_file(p, b.data, b.len / 2));
    /* gzip content under a plain name */
    snprintf(p, sizeof(p), "%s/gen1-is-gzip.jsonl", tmpdir());
    SW_ASSERT_TRUE(write_file(p, b.data, b.len));
    sw_buf_clear(&b);
}

int teardown(void **state)
{
    (void)state;
    if (g_tmp[0]) {
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_tmp);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
    }
    return 0;
}
