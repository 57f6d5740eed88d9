/*
 * Line input (sw_input_*): plain and gzip files and standard input. A
 * table of files -> the lines read (with their numbers) and how reading
 * ends (EOF, or an error whose message names the file and says why);
 * gzip inputs are made here with zlib (deflate in memory, and gzopen for
 * one file) and then truncated, corrupted, concatenated or followed by
 * garbage. Plus long lines across the buffer growth steps, the line
 * length limit, and "-" as standard input through a pipe. The gzip reader
 * thread: many blocks through a pipe fed by a writer thread, a pipe that
 * trickles (lines come before the stream ends; closing the input while
 * the thread waits for the pipe returns), closing a big file early, and
 * errors after several blocks of good data. Mapped files: a last line on
 * a page boundary, and lines appended after the file was opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "sw_codec_telemetry.h"
#include "sw_input.h"
#include "sw_testlib.h"

static void end_test(void)
{
    SW_CHECK_END();
}

/* ---- making files ------------------------------------------------------------ */

static void tmp_path(char *dst, size_t n, const char *name)
{
    snprintf(dst, n, "%s/test_input_%d_%s", sw_test_tmp(), (int)getpid(), name);
}

static bool write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = len == 0 || fwrite(data, 1, len, f) == len; /* data may be NULL when empty */
    return fclose(f) == 0 && ok;
}

/* One gzip member of @p len bytes appended to @p out. */
static void gzip_member(sw_buf_t *out, const void *data, size_t len)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    SW_ASSERT_I64(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t bound = deflateBound(&zs, (uLong)len) + 64;
    sw_buf_reserve(out, bound);
    zs.next_in = (Bytef *)(uintptr_t)data;
    zs.avail_in = (uInt)len;
    zs.next_out = (Bytef *)out->data + out->len;
    zs.avail_out = (uInt)bound;
    SW_ASSERT_I64(deflate(&zs, Z_FINISH), Z_STREAM_END);
    out->len += bound - zs.avail_out;
    deflateEnd(&zs);
}

/* ---- reading everything ------------------------------------------------------ */

typedef struct read_result_s {
    sw_buf_t lines; /* lines joined with '\n' (so expected text compares at once) */
    size_t nlines;
    uint64_t last_lineno;
    bool lineno_ok;     /* every line's number was its position */
    sw_input_res_t end; /* SW_INPUT_EOF or SW_INPUT_ERROR */
    char err[512];
    bool gzip;
    uint64_t raw_bytes;
    char name[512];
} read_result_t;

static void read_all(const char *path, read_result_t *r)
{
    memset(r, 0, sizeof(*r));
    sw_buf_init(&r->lines);
    r->lineno_ok = true;
    sw_input_t *in = sw_input_open(path, r->err, sizeof(r->err));
    if (!in) {
        r->end = SW_INPUT_ERROR;
        return;
    }
    r->gzip = sw_input_is_gzip(in);
    snprintf(r->name, sizeof(r->name), "%s", sw_input_name(in));
    for (;;) {
        const char *line;
        size_t len;
        sw_input_res_t res = sw_input_next(in, &line, &len, r->err, sizeof(r->err));
        if (res == SW_INPUT_EOF || res == SW_INPUT_ERROR) {
            r->end = res;
            break;
        }
        if (r->nlines) sw_buf_putc(&r->lines, '\n');
        if (res == SW_INPUT_TOOLONG) sw_buf_puts(&r->lines, "<TOOLONG>");
        else sw_buf_put(&r->lines, line, len);
        r->nlines++;
        r->last_lineno = sw_input_lineno(in);
        if (r->last_lineno != r->nlines) r->lineno_ok = false;
    }
    r->raw_bytes = sw_input_raw_bytes(in);
    sw_buf_cstr(&r->lines);
    sw_input_close(in);
}

/* ---- the table ----------------------------------------------------------------- */

typedef enum build_e {
    PLAIN,    /* the text as is */
    GZ,       /* one gzip member */
    GZ_TWO,   /* the text split at '|' into two members */
    GZ_THREE, /* split at '|' into members, with an empty member between */
    GZ_TRUNC, /* one member without its last @p arg bytes */
    GZ_FLIP,  /* one member with byte @p arg (negative: from the end) xor 0x55 */
    GZ_TRAIL, /* one member followed by the bytes of @p extra */
    GZOPEN,   /* written with gzopen()/gzwrite() */
} build_t;

typedef struct input_case_s {
    const char *name;
    const char *file; /* file name (suffix decides nothing) */
    build_t build;
    long arg;
    const char *extra;
    const char *text; /* content (before compression) */
    size_t text_len;  /* 0: strlen */
    const char *want; /* lines joined with '\n'; NULL: don't check */
    size_t want_lines;
    sw_input_res_t end;
    const char *err1, *err2; /* substrings of the error message */
    int gzip;                /* -1: don't check */
} input_case_t;

#define LINES3 "{\"a\": 1}\n{\"b\": 2}\n{\"c\": 3}\n"

static const input_case_t k_cases[] = {
    {"plain file", "plain.jsonl", PLAIN, 0, NULL, LINES3, 0, "{\"a\": 1}\n{\"b\": 2}\n{\"c\": 3}",
     3, SW_INPUT_EOF, NULL, NULL, 0},
    {"no newline at the end", "nonl.jsonl", PLAIN, 0, NULL, "a\nb", 0, "a\nb", 2, SW_INPUT_EOF,
     NULL, NULL, 0},
    {"CRLF: the CR is kept", "crlf.jsonl", PLAIN, 0, NULL, "a\r\nb\r\n\r\n", 0, "a\r\nb\r\n\r", 3,
     SW_INPUT_EOF, NULL, NULL, 0},
    {"empty file", "empty.jsonl", PLAIN, 0, NULL, "", 0, "", 0, SW_INPUT_EOF, NULL, NULL, 0},
    {"one newline", "nl.jsonl", PLAIN, 0, NULL, "\n", 0, "", 1, SW_INPUT_EOF, NULL, NULL, 0},
    {"blank lines are lines (numbering)", "blank.jsonl", PLAIN, 0, NULL, "a\n\n\nb\n", 0,
     "a\n\n\nb", 4, SW_INPUT_EOF, NULL, NULL, 0},
    {"one byte", "one.jsonl", PLAIN, 0, NULL, "x", 0, "x", 1, SW_INPUT_EOF, NULL, NULL, 0},
    {"one byte 0x1f is not gzip", "one1f.gz", PLAIN, 0, NULL, "\x1f", 0, "\x1f", 1, SW_INPUT_EOF,
     NULL, NULL, 0},
    {"NUL bytes inside a line", "nul.jsonl", PLAIN, 0, NULL, "a\0b\nc", 5, "a\0b\nc", 2,
     SW_INPUT_EOF, NULL, NULL, 0},
    {"gzip file", "gz.jsonl.gz", GZ, 0, NULL, LINES3, 0, "{\"a\": 1}\n{\"b\": 2}\n{\"c\": 3}", 3,
     SW_INPUT_EOF, NULL, NULL, 1},
    {"gzip content under a plain name", "looks_plain.jsonl", GZ, 0, NULL, LINES3, 0,
     "{\"a\": 1}\n{\"b\": 2}\n{\"c\": 3}", 3, SW_INPUT_EOF, NULL, NULL, 1},
    {"plain content under a .gz name", "looks_gzip.jsonl.gz", PLAIN, 0, NULL, LINES3, 0,
     "{\"a\": 1}\n{\"b\": 2}\n{\"c\": 3}", 3, SW_INPUT_EOF, NULL, NULL, 0},
    {"gzip written with gzopen", "gzopen.jsonl.gz", GZOPEN, 0, NULL, LINES3, 0,
     "{\"a\": 1}\n{\"b\": 2}\n{\"c\": 3}", 3, SW_INPUT_EOF, NULL, NULL, 1},
    {"gzip of an empty text", "gzempty.gz", GZ, 0, NULL, "", 0, "", 0, SW_INPUT_EOF, NULL, NULL, 1},
    {"gzip without a final newline", "gznonl.gz", GZ, 0, NULL, "a\nb", 0, "a\nb", 2, SW_INPUT_EOF,
     NULL, NULL, 1},
    {"two gzip members", "two.gz", GZ_TWO, 0, NULL, "a\nb\n|c\nd\n", 0, "a\nb\nc\nd", 4,
     SW_INPUT_EOF, NULL, NULL, 1},
    {"a line split across two members", "split.gz", GZ_TWO, 0, NULL, "a\nb|c\nd", 0, "a\nbc\nd", 3,
     SW_INPUT_EOF, NULL, NULL, 1},
    {"three members, the middle one empty", "three.gz", GZ_THREE, 0, NULL, "a\n||b\n", 0, "a\nb", 2,
     SW_INPUT_EOF, NULL, NULL, 1},
    {"truncated gzip (last byte missing)", "trunc1.gz", GZ_TRUNC, 1, NULL, LINES3, 0, NULL, 0,
     SW_INPUT_ERROR, "trunc1.gz", "truncated", 1},
    {"truncated gzip (no trailer)", "trunc8.gz", GZ_TRUNC, 8, NULL, LINES3, 0, NULL, 0,
     SW_INPUT_ERROR, "trunc8.gz", "truncated", 1},
    {"truncated gzip (header only)", "trunchdr.gz", GZ_TRUNC, -10, NULL, LINES3, 0, "", 0,
     SW_INPUT_ERROR, "trunchdr.gz", "truncated", 1},
    {"gzip magic alone", "magic.gz", PLAIN, 0, NULL, "\x1f\x8b", 0, "", 0, SW_INPUT_ERROR,
     "magic.gz", "truncated", 1},
    {"corrupt gzip: bad compression method", "method.gz", GZ_FLIP, 2, NULL, LINES3, 0, "", 0,
     SW_INPUT_ERROR, "method.gz", "corrupt", 1},
    {"corrupt gzip: CRC of the trailer", "crc.gz", GZ_FLIP, -8, NULL, LINES3, 0, NULL, 0,
     SW_INPUT_ERROR, "crc.gz", "corrupt", 1},
    {"corrupt gzip: length of the trailer", "isize.gz", GZ_FLIP, -2, NULL, LINES3, 0, NULL, 0,
     SW_INPUT_ERROR, "isize.gz", "corrupt", 1},
    {"trailing garbage after a gzip member", "trail.gz", GZ_TRAIL, 0, "garbage\n", LINES3, 0, NULL,
     0, SW_INPUT_ERROR, "trail.gz", "after the gzip stream", 1},
    {"one trailing byte after a gzip member", "trail1.gz", GZ_TRAIL, 0, "x", LINES3, 0, NULL, 0,
     SW_INPUT_ERROR, "trail1.gz", "after the gzip stream", 1},
    {"a half gzip magic after a member", "trail1f.gz", GZ_TRAIL, 0, "\x1f", LINES3, 0, NULL, 0,
     SW_INPUT_ERROR, "trail1f.gz", NULL, 1},
};

static void build_file(const input_case_t *c, const char *path)
{
    size_t tlen = c->text_len ? c->text_len : strlen(c->text);
    sw_buf_t b;
    sw_buf_init(&b);
    switch (c->build) {
    case PLAIN: sw_buf_put(&b, c->text, tlen); break;
    case GZ:
    case GZ_TRUNC:
    case GZ_FLIP:
    case GZ_TRAIL:
        gzip_member(&b, c->text, tlen);
        if (c->build == GZ_TRUNC) {
            size_t cut = c->arg >= 0 ? (size_t)c->arg : b.len - (size_t)(-c->arg);
            b.len -= cut;
        } else if (c->build == GZ_FLIP) {
            size_t at = c->arg >= 0 ? (size_t)c->arg : b.len - (size_t)(-c->arg);
            b.data[at] ^= 0x55;
        } else if (c->build == GZ_TRAIL) {
            sw_buf_puts(&b, c->extra);
        }
        break;
    case GZ_TWO:
    case GZ_THREE: {
        const char *p = c->text;
        for (;;) {
            const char *bar = strchr(p, '|');
            size_t n = bar ? (size_t)(bar - p) : strlen(p);
            gzip_member(&b, p, n);
            if (!bar) break;
            p = bar + 1;
        }
        break;
    }
    case GZOPEN: {
        gzFile gz = gzopen(path, "wb");
        SW_ASSERT_NOT_NULL(gz);
        SW_ASSERT_I64(gzwrite(gz, c->text, (unsigned)tlen), (int)tlen);
        SW_ASSERT_I64(gzclose(gz), Z_OK);
        sw_buf_clear(&b);
        return;
    }
    }
    SW_ASSERT_TRUE(write_file(path, b.data, b.len));
    sw_buf_clear(&b);
}

static const char *res_name(sw_input_res_t r)
{
    switch (r) {
    case SW_INPUT_LINE: return "LINE";
    case SW_INPUT_EOF: return "EOF";
    case SW_INPUT_TOOLONG: return "TOOLONG";
    case SW_INPUT_ERROR: break;
    }
    return "ERROR";
}

static void test_table(void **state)
{
    (void)state;
    sw_check_reset();
    for (size_t i = 0; i < sizeof(k_cases) / sizeof(k_cases[0]); i++) {
        const input_case_t *c = &k_cases[i];
        sw_check_case("%s", c->name);
        char path[1024];
        tmp_path(path, sizeof(path), c->file);
        build_file(c, path);
        struct stat st;
        SW_CHECK(stat(path, &st) == 0, "cannot stat %s", path);
        read_result_t r;
        read_all(path, &r);
        SW_CHECK(r.end == c->end, "reading ended with %s \"%s\", expected %s", res_name(r.end),
                 r.err, res_name(c->end));
        if (c->want) {
            /* with NUL bytes (text_len set) the text has no final newline, so
             * the joined lines are as long as the text */
            size_t wl = c->text_len ? c->text_len : strlen(c->want);
            SW_CHECK(r.lines.len == wl && memcmp(r.lines.data, c->want, wl) == 0,
                     "lines \"%s\" (%zu bytes), expected \"%s\"", r.lines.data, r.lines.len,
                     c->want);
            SW_CHECK(r.nlines == c->want_lines, "%zu lines, expected %zu", r.nlines, c->want_lines);
        }
        SW_CHECK(r.lineno_ok, "a line number differed from the line's position (last %llu)",
                 (unsigned long long)r.last_lineno);
        if (c->end == SW_INPUT_ERROR) {
            if (c->err1)
                SW_CHECK(strstr(r.err, c->err1) != NULL, "message \"%s\" lacks \"%s\"", r.err,
                         c->err1);
            if (c->err2)
                SW_CHECK(strstr(r.err, c->err2) != NULL, "message \"%s\" lacks \"%s\"", r.err,
                         c->err2);
        } else {
            SW_CHECK(r.raw_bytes == (uint64_t)st.st_size, "raw bytes %llu, file size %lld",
                     (unsigned long long)r.raw_bytes, (long long)st.st_size);
        }
        if (c->gzip >= 0 && r.name[0])
            SW_CHECK(r.gzip == (c->gzip == 1), "is_gzip %d, expected %d", r.gzip, c->gzip);
        if (r.name[0])
            SW_CHECK(strcmp(r.name, path) == 0, "name \"%s\", expected \"%s\"", r.name, path);
        sw_buf_clear(&r.lines);
        unlink(path);
    }
    fprintf(stderr, "%zu input cases\n", sizeof(k_cases) / sizeof(k_cases[0]));
    end_test();
}

/* Every cut of a gzip stream is an error naming the file (never a silent
 * EOF), and what was read before is whole lines of the text, in order. */
static void test_every_truncation(void **state)
{
    (void)state;
    sw_check_reset();
    sw_check_case("gzip cut at every length");
    sw_buf_t text, gz;
    sw_buf_init(&text);
    sw_buf_init(&gz);
    for (int i = 0; i < 40; i++)
        sw_buf_printf(&text, "{\"line\": %d, \"pad\": \"%0*d\"}\n", i, i % 17, 0);
    gzip_member(&gz, text.data, text.len);
    char path[1024];
    tmp_path(path, sizeof(path), "cut.gz");
    for (size_t cut = 2; cut < gz.len; cut++) {
        SW_ASSERT_TRUE(write_file(path, gz.data, cut));
        read_result_t r;
        read_all(path, &r);
        SW_CHECK(r.end == SW_INPUT_ERROR, "cut at %zu of %zu: ended with %s", cut, gz.len,
                 res_name(r.end));
        SW_CHECK(strstr(r.err, path) != NULL && strstr(r.err, "truncated") != NULL,
                 "cut at %zu: message \"%s\"", cut, r.err);
        /* whole lines, a prefix of the text */
        SW_CHECK(r.lines.len <= text.len && memcmp(r.lines.data, text.data, r.lines.len) == 0 &&
                     (r.nlines == 0 || text.data[r.lines.len] == '\n'),
                 "cut at %zu: %zu lines read are not whole lines of the text", cut, r.nlines);
        sw_buf_clear(&r.lines);
        if (sw_check_failures() > 5) break;
    }
    unlink(path);
    sw_buf_clear(&text);
    sw_buf_clear(&gz);
    end_test();
}

/* Lines around and beyond the buffer growth steps, plain and gzip. */
static void test_long_lines(void **state)
{
    (void)state;
    sw_check_reset();
    const size_t mib = 1u << 20;
    const size_t lens[] = {mib - 1, mib, mib + 1, 2 * mib - 1, 3 * mib, 5, 0, 3 * mib + 7};
    const size_t n = sizeof(lens) / sizeof(lens[0]);
    sw_buf_t text;
    sw_buf_init(&text);
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < lens[i]; k++) sw_buf_putc(&text, (char)('a' + (i + k) % 26));
        sw_buf_putc(&text, '\n');
    }
    /* then many short lines that straddle refills */
    for (int i = 0; i < 100000; i++) sw_buf_printf(&text, "%d\n", i);
    for (int gz = 0; gz < 2; gz++) {
        sw_check_case("%s", gz ? "long lines, gzip" : "long lines, plain");
        char path[1024];
        tmp_path(path, sizeof(path), gz ? "long.gz" : "long.jsonl");
        if (gz) {
            sw_buf_t z;
            sw_buf_init(&z);
            gzip_member(&z, text.data, text.len);
            SW_ASSERT_TRUE(write_file(path, z.data, z.len));
            sw_buf_clear(&z);
        } else {
            SW_ASSERT_TRUE(write_file(path, text.data, text.len));
        }
        sw_input_t *in;
        char err[512];
        in = sw_input_open(path, err, sizeof(err));
        SW_CHECK(in != NULL, "open: %s", err);
        if (!in) continue;
        size_t off = 0, lineno = 0;
        for (;;) {
            const char *line;
            size_t len;
            sw_input_res_t res = sw_input_next(in, &line, &len, err, sizeof(err));
            if (res != SW_INPUT_LINE) {
                SW_CHECK(res == SW_INPUT_EOF, "line %zu: %s \"%s\"", lineno + 1, res_name(res),
                         err);
                break;
            }
            lineno++;
            const char *nl = memchr(text.data + off, '\n', text.len - off);
            size_t want_len = nl ? (size_t)(nl - (text.data + off)) : text.len - off;
            if (len != want_len || memcmp(line, text.data + off, len) != 0) {
                SW_CHECK(false, "line %zu: %zu bytes, expected %zu (or different content)", lineno,
                         len, want_len);
                break;
            }
            SW_CHECK(sw_input_lineno(in) == lineno, "lineno %llu, expected %zu",
                     (unsigned long long)sw_input_lineno(in), lineno);
            off += want_len + 1;
        }
        SW_CHECK(off == text.len, "read %zu of %zu bytes", off, text.len);
        SW_CHECK(lineno == n + 100000, "%zu lines, expected %zu", lineno, n + 100000);
        sw_input_close(in);
        unlink(path);
    }
    sw_buf_clear(&text);
    end_test();
}

/* sw_input_hold(): the held line's bytes stay put while later lines are
 * read, across refills, buffer growth (a 3 MiB line), a skipped over-long
 * line and gzip; lines read without a hold in between do not release it.
 * Every third line is held, and each held line is checked after every
 * later call until the next hold. */
static void test_hold(void **state)
{
    (void)state;
    sw_check_reset();
    sw_buf_t text;
    sw_buf_init(&text);
    for (int i = 0; i < 60000; i++) {
        sw_buf_printf(&text, "%d ", i);
        for (int k = 0; k < i % 97; k++) sw_buf_putc(&text, (char)('a' + (i + k) % 26));
        sw_buf_putc(&text, '\n');
        if (i == 30000) { /* over the limit: skipped */
            for (size_t k = 0; k < SW_INPUT_MAX_LINE + 10; k++) sw_buf_putc(&text, 'x');
            sw_buf_putc(&text, '\n');
        }
        if (i == 40000) { /* grows the buffer */
            for (size_t k = 0; k < (3u << 20); k++) sw_buf_putc(&text, 'y');
            sw_buf_putc(&text, '\n');
        }
    }
    for (int gz = 0; gz < 2; gz++) {
        sw_check_case("%s", gz ? "hold, gzip" : "hold, plain");
        char path[1024];
        tmp_path(path, sizeof(path), gz ? "hold.gz" : "hold.jsonl");
        if (gz) {
            sw_buf_t z;
            sw_buf_init(&z);
            gzip_member(&z, text.data, text.len);
            SW_ASSERT_TRUE(write_file(path, z.data, z.len));
            sw_buf_clear(&z);
        } else {
            SW_ASSERT_TRUE(write_file(path, text.data, text.len));
        }
        char err[512];
        sw_input_t *in = sw_input_open(path, err, sizeof(err));
        SW_CHECK(in != NULL, "open: %s", err);
        if (!in) continue;
        const char *held = NULL;
        size_t held_len = 0, held_off = 0, off = 0, lines = 0, bad = 0, toolong = 0;
        for (;;) {
            const char *line;
            size_t len;
            sw_input_res_t res = sw_input_next(in, &line, &len, err, sizeof(err));
            if (held && memcmp(held, text.data + held_off, held_len) != 0) bad++;
            if (res == SW_INPUT_EOF || res == SW_INPUT_ERROR) {
                SW_CHECK(res == SW_INPUT_EOF, "%s \"%s\"", res_name(res), err);
                break;
            }
            const char *nl = memchr(text.data + off, '\n', text.len - off);
            size_t want = (size_t)(nl - (text.data + off));
            if (res == SW_INPUT_TOOLONG) {
                toolong++;
            } else {
                if (len != want || memcmp(line, text.data + off, len) != 0) bad++;
                if (lines++ % 3 == 0) {
                    sw_input_hold(in);
                    held = line;
                    held_len = len;
                    held_off = off;
                }
            }
            off += want + 1;
        }
        SW_CHECK(bad == 0, "%zu lines or held lines differ from the file", bad);
        SW_CHECK(toolong == 1, "%zu over-long lines, expected 1", toolong);
        SW_CHECK(lines == 60001, "%zu lines, expected 60001", lines);
        sw_input_close(in);
        unlink(path);
    }
    sw_buf_clear(&text);
    end_test();
}

/* SW_INPUT_MAX_LINE: a line of exactly that many bytes is accepted (the
 * header: "Longest line accepted"); one byte more is skipped with
 * SW_INPUT_TOOLONG, and reading goes on with the next line. */
static void test_line_limit(void **state)
{
    (void)state;
    sw_check_reset();
    static const struct {
        const char *name;
        size_t len;
        sw_input_res_t first;
    } cases[] = {
        {"line of SW_INPUT_MAX_LINE - 1 bytes", SW_INPUT_MAX_LINE - 1, SW_INPUT_LINE},
        {"line of SW_INPUT_MAX_LINE bytes", SW_INPUT_MAX_LINE, SW_INPUT_LINE},
        {"line of SW_INPUT_MAX_LINE + 1 bytes", SW_INPUT_MAX_LINE + 1, SW_INPUT_TOOLONG},
        {"line of SW_INPUT_MAX_LINE + 3 MiB", SW_INPUT_MAX_LINE + (3u << 20), SW_INPUT_TOOLONG},
    };
    char path[1024];
    tmp_path(path, sizeof(path), "limit.jsonl");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sw_check_case("%s", cases[i].name);
        FILE *f = fopen(path, "wb");
        SW_ASSERT_NOT_NULL(f);
        char chunk[65536];
        memset(chunk, 'x', sizeof(chunk));
        for (size_t left = cases[i].len; left;) {
            size_t n = left < sizeof(chunk) ? left : sizeof(chunk);
            SW_ASSERT_I64(fwrite(chunk, 1, n, f), n);
            left -= n;
        }
        fputs("\nok\nlast", f);
        SW_ASSERT_I64(fclose(f), 0);
        char err[512] = "";
        sw_input_t *in = sw_input_open(path, err, sizeof(err));
        SW_CHECK(in != NULL, "open: %s", err);
        if (!in) continue;
        const char *line = NULL;
        size_t len = 0;
        sw_input_res_t res = sw_input_next(in, &line, &len, err, sizeof(err));
        SW_CHECK(res == cases[i].first, "first line: %s \"%s\", expected %s", res_name(res), err,
                 res_name(cases[i].first));
        if (res == SW_INPUT_LINE)
            SW_CHECK(len == cases[i].len, "first line of %zu bytes, expected %zu", len,
                     cases[i].len);
        if (res == SW_INPUT_TOOLONG)
            SW_CHECK(strstr(err, "longer than") != NULL, "message \"%s\"", err);
        SW_CHECK(sw_input_lineno(in) == 1, "lineno %llu", (unsigned long long)sw_input_lineno(in));
        res = sw_input_next(in, &line, &len, err, sizeof(err));
        SW_CHECK(res == SW_INPUT_LINE && len == 2 && memcmp(line, "ok", 2) == 0,
                 "second line: %s \"%.*s\"", res_name(res), (int)(res == SW_INPUT_LINE ? len : 0),
                 line);
        SW_CHECK(sw_input_lineno(in) == 2, "lineno %llu", (unsigned long long)sw_input_lineno(in));
        res = sw_input_next(in, &line, &len, err, sizeof(err));
        SW_CHECK(res == SW_INPUT_LINE && len == 4 && memcmp(line, "last", 4) == 0, "third line: %s",
                 res_name(res));
        res = sw_input_next(in, &line, &len, err, sizeof(err));
        SW_CHECK(res == SW_INPUT_EOF, "end: %s", res_name(res));
        sw_input_close(in);
    }
    unlink(path);
    end_test();
}

/* "-" reads standard input (a pipe here), plain or gzip. */
static void test_stdin(void **state)
{
    (void)state;
    sw_check_reset();
    for (int gz = 0; gz < 2; gz++) {
        sw_check_case("%s", gz ? "stdin, gzip" : "stdin, plain");
        const char *text =
            "{\"timestamp_ns\": 1, \"event_type\": \"x\"}\r\n\n"
            "{\"timestamp_ns\": 2, \"event_type\": \"x\"}";
        sw_buf_t data;
        sw_buf_init(&data);
        if (gz) gzip_member(&data, text, strlen(text));
        else sw_buf_puts(&data, text);
        int fds[2];
        SW_ASSERT_I64(pipe(fds), 0);
        SW_ASSERT_TRUE(data.len < 65536); /* fits in the pipe: no writer thread needed */
        SW_ASSERT_I64(write(fds[1], data.data, data.len), (ssize_t)data.len);
        close(fds[1]);
        int saved = dup(0);
        SW_ASSERT_TRUE(saved >= 0);
        SW_ASSERT_I64(dup2(fds[0], 0), 0);
        close(fds[0]);

        char err[512] = "";
        sw_input_t *in = sw_input_open("-", err, sizeof(err));
        SW_CHECK(in != NULL, "open: %s", err);
        if (in) {
            SW_CHECK(strcmp(sw_input_name(in), "<stdin>") == 0, "name \"%s\"", sw_input_name(in));
            SW_CHECK(sw_input_is_gzip(in) == (gz == 1), "is_gzip %d", sw_input_is_gzip(in));
            sw_tdec_t *dec = sw_tdec_new();
            const char *line;
            size_t len;
            int64_t want_ts[] = {1, -1, 2};
            for (int k = 0; k < 3; k++) {
                sw_input_res_t res = sw_input_next(in, &line, &len, err, sizeof(err));
                SW_CHECK(res == SW_INPUT_LINE, "line %d: %s \"%s\"", k + 1, res_name(res), err);
                if (res != SW_INPUT_LINE) break;
                SW_CHECK(sw_input_lineno(in) == (uint64_t)k + 1, "lineno %llu",
                         (unsigned long long)sw_input_lineno(in));
                if (want_ts[k] < 0) {
                    SW_CHECK(len == 0, "line %d has %zu bytes, expected a blank line", k + 1, len);
                    continue;
                }
                /* the CR of CRLF stays in the line and the decoder skips it */
                if (k == 0) SW_CHECK(len && line[len - 1] == '\r', "line 1 lost its CR");
                sw_event_t ev;
                char derr[256];
                sw_err_t rc = sw_tdec_json(dec, line, len, &ev, derr, sizeof(derr));
                SW_CHECK(rc == SW_OK && ev.timestamp_ns == want_ts[k], "line %d: %s (ts %lld)",
                         k + 1, rc ? derr : "ok", rc ? -1LL : (long long)ev.timestamp_ns);
            }
            sw_input_res_t res = sw_input_next(in, &line, &len, err, sizeof(err));
            SW_CHECK(res == SW_INPUT_EOF, "end: %s \"%s\"", res_name(res), err);
            SW_CHECK(sw_input_raw_bytes(in) == data.len, "raw bytes %llu, expected %zu",
                     (unsigned long long)sw_input_raw_bytes(in), data.len);
            sw_tdec_destroy(dec);
            sw_input_close(in);
        }
        SW_ASSERT_I64(dup2(saved, 0), 0);
        close(saved);
        sw_buf_clear(&data);
    }
    end_test();
}

/* ---- the gzip reader thread ------------------------------------------------- */

/* Lines "{"n": I, "pad": "xxx..."}" for I in [0, count), about 80 bytes each. */
static void numbered_lines(sw_buf_t *text, int count)
{
    for (int i = 0; i < count; i++)
        sw_buf_printf(text, "{\"n\": %d, \"pad\": \"%0*d\"}\n", i, 40 + i % 23, i);
}

typedef struct feeder_s {
    int fd;
    const char *data;
    size_t len;
} feeder_t;

static void *feed_pipe(void *arg)
{
    feeder_t *f = arg;
    size_t off = 0;
    while (off < f->len) {
        size_t n = f->len - off < 4096 ? f->len - off : 4096; /* small writes: the reader waits */
        ssize_t w = write(f->fd, f->data + off, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
    close(f->fd);
    return NULL;
}

/* Read @p in to the end; the lines must be @p text's (unless !@p compare).
 * @returns how reading ended. */
static sw_input_res_t read_compare(sw_input_t *in, const sw_buf_t *text, bool compare,
                                   size_t *nlines)
{
    const char *line;
    size_t len, pos = 0;
    char err[512] = "";
    sw_input_res_t res;
    *nlines = 0;
    while ((res = sw_input_next(in, &line, &len, err, sizeof(err))) == SW_INPUT_LINE) {
        if (!compare) {
            (*nlines)++;
            continue;
        }
        bool same = pos + len < text->len && memcmp(text->data + pos, line, len) == 0 &&
                    text->data[pos + len] == '\n';
        SW_CHECK(same, "line %zu differs from the text", *nlines + 1);
        if (!same) return SW_INPUT_ERROR;
        pos += len + 1;
        (*nlines)++;
    }
    if (res == SW_INPUT_EOF)
        SW_CHECK(pos == text->len, "EOF after %zu of %zu bytes", pos, text->len);
    return res;
}

static void test_gzip_thread(void **state)
{
    (void)state;
    sw_check_reset();
    sw_buf_t text, gz;
    sw_buf_init(&text);
    sw_buf_init(&gz);
    numbered_lines(&text, 100000); /* ~8 MB: several blocks of the reader thread */
    gzip_member(&gz, text.data, text.len);

    /* Standard input through a pipe, fed by a writer thread. */
    sw_check_case("%s", "8 MB of gzip through stdin");
    int fds[2];
    SW_ASSERT_I64(pipe(fds), 0);
    int saved = dup(0);
    SW_ASSERT_TRUE(saved >= 0);
    SW_ASSERT_I64(dup2(fds[0], 0), 0);
    close(fds[0]);
    feeder_t fd_arg = {fds[1], gz.data, gz.len};
    pthread_t thr;
    SW_ASSERT_I64(pthread_create(&thr, NULL, feed_pipe, &fd_arg), 0);
    char err[512] = "";
    sw_input_t *in = sw_input_open("-", err, sizeof(err));
    SW_CHECK(in != NULL, "open: %s", err);
    if (in) {
        size_t n;
        sw_input_res_t res = read_compare(in, &text, true, &n);
        SW_CHECK(res == SW_INPUT_EOF && n == 100000, "ended with %s after %zu lines", res_name(res),
                 n);
        SW_CHECK(sw_input_raw_bytes(in) == gz.len, "raw bytes %llu, expected %zu",
                 (unsigned long long)sw_input_raw_bytes(in), gz.len);
        sw_input_close(in);
    }
    pthread_join(thr, NULL);
    SW_ASSERT_I64(dup2(saved, 0), 0);

    /* A pipe that trickles: two lines, sync-flushed, and the writer stays. */
    sw_check_case("%s", "a trickling gzip pipe");
    SW_ASSERT_I64(pipe(fds), 0);
    SW_ASSERT_I64(dup2(fds[0], 0), 0);
    close(fds[0]);
    {
        const char *two = "{\"a\": 1}\n{\"b\": 2}\n";
        unsigned char out[4096];
        z_stream zs;
        memset(&zs, 0, sizeof(zs));
        SW_ASSERT_I64(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
        zs.next_in = (Bytef *)(uintptr_t)two;
        zs.avail_in = (uInt)strlen(two);
        zs.next_out = out;
        zs.avail_out = sizeof(out);
        SW_ASSERT_I64(deflate(&zs, Z_SYNC_FLUSH), Z_OK);
        size_t n = sizeof(out) - zs.avail_out;
        deflateEnd(&zs);
        SW_ASSERT_I64(write(fds[1], out, n), (ssize_t)n);
    }
    in = sw_input_open("-", err, sizeof(err));
    SW_CHECK(in != NULL, "open: %s", err);
    if (in) {
        const char *line;
        size_t len;
        sw_input_res_t res = sw_input_next(in, &line, &len, err, sizeof(err));
        SW_CHECK(res == SW_INPUT_LINE && len == 8 && memcmp(line, "{\"a\": 1}", 8) == 0,
                 "first line: %s", res_name(res));
        res = sw_input_next(in, &line, &len, err, sizeof(err));
        SW_CHECK(res == SW_INPUT_LINE && len == 8 && memcmp(line, "{\"b\": 2}", 8) == 0,
                 "second line: %s", res_name(res));
        /* The thread now waits for the pipe: closing must not wait for it. */
        sw_input_close(in);
    }
    close(fds[1]);
    SW_ASSERT_I64(dup2(saved, 0), 0);
    close(saved);

    /* A big file closed after one line: the thread waits for a free block. */
    sw_check_case("%s", "closing a big gzip file early");
    char path[1024];
    tmp_path(path, sizeof(path), "big.gz");
    SW_ASSERT_TRUE(write_file(path, gz.data, gz.len));
    in = sw_input_open(path, err, sizeof(err));
    SW_CHECK(in != NULL, "open: %s", err);
    if (in) {
        const char *line;
        size_t len;
        SW_CHECK(sw_input_next(in, &line, &len, err, sizeof(err)) == SW_INPUT_LINE, "%s", err);
        usleep(20000); /* let the thread fill the ring */
        sw_input_close(in);
    }

    /* Errors after several blocks of good data: the good lines, then the error. */
    static const struct {
        const char *name;
        int kind; /* 0 truncated, 1 bit flipped, 2 garbage after the member */
        const char *msg;
    } bad[] = {
        {"truncated after several blocks", 0, "truncated"},
        {"corrupt after several blocks", 1, "corrupt"},
        {"garbage after several blocks", 2, "after the gzip stream"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sw_check_case("%s", bad[i].name);
        sw_buf_t b;
        sw_buf_init(&b);
        sw_buf_put(&b, gz.data, gz.len);
        if (bad[i].kind == 0) b.len -= gz.len / 3;
        else if (bad[i].kind == 1) b.data[gz.len * 2 / 3] ^= 0x55;
        else sw_buf_puts(&b, "garbage");
        SW_ASSERT_TRUE(write_file(path, b.data, b.len));
        sw_buf_clear(&b);
        in = sw_input_open(path, err, sizeof(err));
        SW_CHECK(in != NULL, "open: %s", err);
        if (!in) continue;
        size_t n;
        /* A flipped bit may decode to other bytes before the CRC says so. */
        sw_input_res_t res = read_compare(in, &text, bad[i].kind != 1, &n);
        SW_CHECK(res == SW_INPUT_ERROR, "ended with %s after %zu lines", res_name(res), n);
        SW_CHECK(bad[i].kind == 2 ? n == 100000 : n > 20000, "%zu good lines before the error", n);
        /* the error stays */
        const char *line;
        size_t len;
        err[0] = '\0';
        res = sw_input_next(in, &line, &len, err, sizeof(err));
        SW_CHECK(res == SW_INPUT_ERROR && strstr(err, path) && strstr(err, bad[i].msg),
                 "then %s \"%s\"", res_name(res), err);
        sw_input_close(in);
    }
    unlink(path);
    sw_buf_clear(&text);
    sw_buf_clear(&gz);
    end_test();
}

/* Files that cannot be opened or read: NULL and a message naming them. */
static void test_open_errors(void **state)
{
    (void)state;
    sw_check_reset();
    char path[1024], err[512];

    sw_check_case("missing file");
    tmp_path(path, sizeof(path), "does-not-exist.jsonl");
    unlink(path);
    err[0] = '\0';
    sw_input_t *in = sw_input_open(path, err, sizeof(err));
    SW_CHECK(in == NULL, "opened a missing file");
    sw_input_close(in);
    SW_CHECK(strstr(err, path) != NULL && strstr(err, "cannot open") != NULL, "message \"%s\"",
             err);

    sw_check_case("a directory");
    err[0] = '\0';
    in = sw_input_open(sw_test_tmp(), err, sizeof(err));
    if (in) {
        /* some systems let open() succeed: then reading must fail */
        const char *line;
        size_t len;
        sw_input_res_t res = sw_input_next(in, &line, &len, err, sizeof(err));
        SW_CHECK(res == SW_INPUT_ERROR, "reading a directory gave %s", res_name(res));
        sw_input_close(in);
    }
    SW_CHECK(strstr(err, sw_test_tmp()) != NULL, "message \"%s\" does not name the directory", err);

    sw_check_case("sw_input_close(NULL)");
    sw_input_close(NULL);
    end_test();
}

/* A regular file truncated while it is read: once the bytes read before
 * are used up, sw_input_next() fails with an error naming the file (the
 * lines past the new end are lost, never silently taken as the end). */
static void test_truncated_while_read(void **state)
{
    (void)state;
    char path[1024], err[512];
    tmp_path(path, sizeof(path), "truncated.jsonl");
    sw_buf_t text;
    sw_buf_init(&text);
    while (text.len < 8u << 20) sw_buf_puts(&text, "0123456789abcdef0123456789abcdef0123456789\n");
    SW_ASSERT_TRUE(write_file(path, text.data, text.len));
    size_t total = text.len;
    sw_buf_clear(&text);
    const char *line;
    size_t len;
    sw_input_t *in = sw_input_open(path, err, sizeof(err));
    SW_ASSERT_TRUE(in != NULL);
    SW_ASSERT_TRUE(sw_input_next(in, &line, &len, err, sizeof(err)) == SW_INPUT_LINE);
    SW_ASSERT_TRUE(truncate(path, 0) == 0);
    sw_input_res_t res;
    size_t n = 1;
    while ((res = sw_input_next(in, &line, &len, err, sizeof(err))) == SW_INPUT_LINE) n++;
    SW_ASSERT(res == SW_INPUT_ERROR, "%s after %zu lines, expected an error", res_name(res), n);
    SW_ASSERT(n < total / 43, "all %zu lines were read", n);
    SW_ASSERT(strstr(err, path) && strstr(err, "truncated while it was read"),
              "error \"%s\" does not name %s", err, path);
    sw_input_close(in);
    unlink(path);
}

/* A plain file's last line without its newline, a file that ends on a
 * page boundary, and what is appended to the file after it was opened
 * (completing its last line, and more lines) are read. */
static void test_file_append(void **state)
{
    (void)state;
    sw_check_reset();
    char path[1024];
    char err[512];
    const char *line;
    size_t len;

    sw_check_case("page-sized file without a final newline");
    tmp_path(path, sizeof(path), "page.jsonl");
    sw_buf_t text;
    sw_buf_init(&text);
    while (text.len < 8192 - 100) sw_buf_puts(&text, "0123456789abcdef0123456789\n");
    while (text.len < 8192) sw_buf_putc(&text, 'z');
    SW_ASSERT_TRUE(write_file(path, text.data, text.len));
    sw_input_t *in = sw_input_open(path, err, sizeof(err));
    SW_ASSERT_TRUE(in != NULL);
    size_t total = 0, n = 0;
    sw_input_res_t res;
    while ((res = sw_input_next(in, &line, &len, err, sizeof(err))) == SW_INPUT_LINE) {
        total += len + 1;
        n++;
    }
    SW_CHECK(res == SW_INPUT_EOF, "%s \"%s\"", res_name(res), err);
    SW_CHECK(total == 8192 + 1, "%zu bytes of lines, expected 8193", total);
    SW_CHECK(len == 0 || line[0] == 'z', "last line");
    SW_CHECK(sw_input_raw_bytes(in) == 8192, "raw bytes %llu",
             (unsigned long long)sw_input_raw_bytes(in));
    sw_input_close(in);
    unlink(path);
    sw_buf_clear(&text);

    sw_check_case("lines appended after open");
    tmp_path(path, sizeof(path), "grow.jsonl");
    SW_ASSERT_TRUE(write_file(path, "a\nbb\npart", 9));
    in = sw_input_open(path, err, sizeof(err));
    SW_ASSERT_TRUE(in != NULL);
    res = sw_input_next(in, &line, &len, err, sizeof(err));
    SW_CHECK(res == SW_INPUT_LINE && len == 1 && line[0] == 'a', "line 1");
    sw_input_hold(in);
    const char *held = line;
    FILE *f = fopen(path, "ab");
    SW_ASSERT_TRUE(f != NULL);
    fputs("ial\nccc\nlast", f);
    SW_ASSERT_TRUE(fclose(f) == 0);
    static const char *const want[] = {"bb", "partial", "ccc", "last"};
    for (int i = 0; i < 4; i++) {
        res = sw_input_next(in, &line, &len, err, sizeof(err));
        SW_CHECK(res == SW_INPUT_LINE && len == strlen(want[i]) && !memcmp(line, want[i], len),
                 "line %d: %s \"%.*s\"", i + 2, res_name(res), (int)len, line);
        SW_CHECK(sw_input_lineno(in) == (uint64_t)i + 2, "line number %llu",
                 (unsigned long long)sw_input_lineno(in));
    }
    SW_CHECK(held[0] == 'a', "the held line moved");
    res = sw_input_next(in, &line, &len, err, sizeof(err));
    SW_CHECK(res == SW_INPUT_EOF, "%s", res_name(res));
    SW_CHECK(sw_input_raw_bytes(in) == 21, "raw bytes %llu",
             (unsigned long long)sw_input_raw_bytes(in));
    sw_input_close(in);
    unlink(path);
    end_test();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),       cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_long_lines),  cmocka_unit_test(test_line_limit),
        cmocka_unit_test(test_stdin),       cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_gzip_thread), cmocka_unit_test(test_hold),
        cmocka_unit_test(test_file_append), cmocka_unit_test(test_truncated_while_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
