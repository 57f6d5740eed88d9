/*
 * Buffered line reader over read(2), with zlib inflate when the first two
 * bytes are the gzip magic. Lines are handed out in place from one buffer
 * that grows only for lines longer than it.
 */
#include "sw_input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "sw_alloc.h"

#define RAW_CHUNK (256u * 1024u)
#define BUF_INIT (1024u * 1024u)

struct sw_input_s {
    int fd;
    bool owns_fd;
    char *name;
    bool gzip;
    z_stream zs;
    bool zs_init;
    bool member_done;    /* inflate reached the end of a gzip member */
    unsigned char *raw;  /* compressed input (gzip only) */
    size_t raw_len;      /* bytes of raw not yet given to zlib */
    size_t raw_cap;
    bool raw_eof;
    uint64_t raw_total;
    char *buf;           /* decoded bytes */
    size_t cap, start, end;
    bool eof;            /* no more decoded bytes will come */
    bool skipping;       /* inside an over-long line */
    uint64_t lineno;
};

sw_input_t *sw_input_open(const char *path, char *errstr, size_t errstr_size)
{
    sw_input_t *in = sw_calloc(1, sizeof(*in));
    if (strcmp(path, "-") == 0) {
        in->fd = 0;
        in->name = sw_strdup("<stdin>");
    } else {
        in->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (in->fd < 0) {
            snprintf(errstr, errstr_size, "%s: cannot open: %s", path, strerror(errno));
            free(in);
            return NULL;
        }
        in->owns_fd = true;
        in->name = sw_strdup(path);
    }
    in->cap = BUF_INIT;
    in->buf = sw_malloc(in->cap);
    /* Sniff the magic bytes: read at least two bytes (or to EOF). */
    while (in->end < 2) {
        ssize_t n = read(in->fd, in->buf + in->end, in->cap - in->end);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            snprintf(errstr, errstr_size, "%s: read failed: %s", in->name, strerror(errno));
            sw_input_close(in);
            return NULL;
        }
        if (n == 0) {
            in->eof = true;
            break;
        }
        in->end += (size_t)n;
        in->raw_total += (uint64_t)n;
    }
    if (in->end >= 2 && (unsigned char)in->buf[0] == 0x1f && (unsigned char)in->buf[1] == 0x8b) {
        in->gzip = true;
        in->raw_cap = RAW_CHUNK > in->end ? RAW_CHUNK : in->end;
        in->raw = sw_malloc(in->raw_cap);
        memcpy(in->raw, in->buf, in->end);
        in->raw_len = in->end;
        in->raw_eof = in->eof;
        in->eof = false;
        in->end = 0;
        memset(&in->zs, 0, sizeof(in->zs));
        if (inflateInit2(&in->zs, 15 + 16) != Z_OK) {
            snprintf(errstr, errstr_size, "%s: cannot initialise zlib", in->name);
            sw_input_close(in);
            return NULL;
        }
        in->zs_init = true;
        in->zs.next_in = in->raw;
    }
    return in;
}

void sw_input_close(sw_input_t *in)
{
    if (!in) return;
    if (in->zs_init) inflateEnd(&in->zs);
    if (in->owns_fd) close(in->fd);
    free(in->raw);
    free(in->buf);
    free(in->name);
    free(in);
}

const char *sw_input_name(const sw_input_t *in)
{
    return in->name;
}

uint64_t sw_input_lineno(const sw_input_t *in)
{
    return in->lineno;
}

bool sw_input_is_gzip(const sw_input_t *in)
{
    return in->gzip;
}

uint64_t sw_input_raw_bytes(const sw_input_t *in)
{
    return in->raw_total;
}

/* Read more raw bytes (gzip) into in->raw. @returns -1 on error. */
static int raw_fill(sw_input_t *in, char *errstr, size_t errstr_size)
{
    if (in->raw_eof) return 0;
    if (in->raw_len && in->zs.next_in != in->raw) memmove(in->raw, in->zs.next_in, in->raw_len);
    in->zs.next_in = in->raw;
    if (in->raw_len == in->raw_cap) return 0;
    for (;;) {
        ssize_t n = read(in->fd, in->raw + in->raw_len, in->raw_cap - in->raw_len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            snprintf(errstr, errstr_size, "%s: read failed: %s", in->name, strerror(errno));
            return -1;
        }
        if (n == 0) in->raw_eof = true;
        in->raw_len += (size_t)n;
        in->raw_total += (uint64_t)n;
        in->zs.next_in = in->raw;
        return 0;
    }
}

/* Decode more bytes into buf[end..cap). @returns bytes added, 0 at end,
 * -1 on error. */
static ssize_t fill(sw_input_t *in, char *errstr, size_t errstr_size)
{
    if (in->eof) return 0;
    if (!in->gzip) {
        for (;;) {
            ssize_t n = read(in->fd, in->buf + in->end, in->cap - in->end);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                snprintf(errstr, errstr_size, "%s: read failed: %s", in->name, strerror(errno));
                return -1;
            }
            if (n == 0) in->eof = true;
            in->end += (size_t)n;
            in->raw_total += (uint64_t)n;
            return n;
        }
    }
    size_t before = in->end;
    while (in->end == before) {
        if (in->member_done) {
            /* Another member may follow; anything else is an error. */
            while (in->raw_len < 2 && !in->raw_eof)
                if (raw_fill(in, errstr, errstr_size) < 0) return -1;
            if (in->raw_len == 0 && in->raw_eof) {
                in->eof = true;
                return 0;
            }
            if (in->raw_len < 2 || in->zs.next_in[0] != 0x1f || in->zs.next_in[1] != 0x8b) {
                snprintf(errstr, errstr_size,
                         "%s: unexpected data after the gzip stream at compressed byte %llu",
                         in->name, (unsigned long long)(in->raw_total - in->raw_len));
                return -1;
            }
            inflateReset(&in->zs);
            in->member_done = false;
        }
        if (in->raw_len == 0) {
            if (in->raw_eof) {
                snprintf(errstr, errstr_size,
                         "%s: truncated gzip stream (unexpected end of file after %llu "
                         "compressed bytes)",
                         in->name, (unsigned long long)in->raw_total);
                return -1;
            }
            if (raw_fill(in, errstr, errstr_size) < 0) return -1;
            continue;
        }
        in->zs.avail_in = (uInt)in->raw_len;
        in->zs.next_out = (Bytef *)in->buf + in->end;
        in->zs.avail_out = (uInt)(in->cap - in->end);
        int rc = inflate(&in->zs, Z_NO_FLUSH);
        in->raw_len = in->zs.avail_in;
        in->end = in->cap - in->zs.avail_out;
        if (rc == Z_STREAM_END) {
            in->member_done = true;
        } else if (rc == Z_BUF_ERROR) {
            if (in->raw_eof && in->raw_len == 0) {
                snprintf(errstr, errstr_size,
                         "%s: truncated gzip stream (unexpected end of file after %llu "
                         "compressed bytes)",
                         in->name, (unsigned long long)in->raw_total);
                return -1;
            }
            if (raw_fill(in, errstr, errstr_size) < 0) return -1;
        } else if (rc != Z_OK) {
            snprintf(errstr, errstr_size, "%s: corrupt gzip data (%s) near compressed byte %llu",
                     in->name, in->zs.msg ? in->zs.msg : "inflate failed",
                     (unsigned long long)(in->raw_total - in->raw_len));
            return -1;
        }
    }
    return (ssize_t)(in->end - before);
}

sw_input_res_t sw_input_next(sw_input_t *in, const char **line, size_t *len, char *errstr,
                             size_t errstr_size)
{
    for (;;) {
        char *nl = in->end > in->start ? memchr(in->buf + in->start, '\n', in->end - in->start) : NULL;
        if (nl) {
            size_t s = in->start;
            in->start = (size_t)(nl - in->buf) + 1;
            in->lineno++;
            if (in->skipping) {
                in->skipping = false;
                snprintf(errstr, errstr_size, "line longer than %u bytes (skipped)",
                         SW_INPUT_MAX_LINE);
                return SW_INPUT_TOOLONG;
            }
            *line = in->buf + s;
            *len = (size_t)(nl - in->buf) - s;
            return SW_INPUT_LINE;
        }
        if (in->eof) {
            if (in->start < in->end || in->skipping) {
                size_t s = in->start;
                in->start = in->end;
                in->lineno++;
                if (in->skipping) {
                    in->skipping = false;
                    snprintf(errstr, errstr_size, "line longer than %u bytes (skipped)",
                             SW_INPUT_MAX_LINE);
                    return SW_INPUT_TOOLONG;
                }
                *line = in->buf + s;
                *len = in->end - s;
                return SW_INPUT_LINE;
            }
            return SW_INPUT_EOF;
        }
        /* Make room: drop consumed bytes, then grow or start skipping. */
        if (in->start > 0) {
            memmove(in->buf, in->buf + in->start, in->end - in->start);
            in->end -= in->start;
            in->start = 0;
        }
        if (in->end == in->cap) {
            /* A line of SW_INPUT_MAX_LINE bytes needs one more for its newline. */
            if (in->skipping || in->cap > SW_INPUT_MAX_LINE) {
                in->skipping = true;
                in->end = 0; /* discard the over-long line's bytes */
            } else {
                size_t cap = in->cap * 2;
                if (cap > (size_t)SW_INPUT_MAX_LINE + 1) cap = (size_t)SW_INPUT_MAX_LINE + 1;
                in->cap = cap;
                in->buf = sw_realloc(in->buf, in->cap);
            }
        }
        if (fill(in, errstr, errstr_size) < 0) return SW_INPUT_ERROR;
    }
}
