/*
 * Checkpoint file (see sw_ship_ckpt.h). Text, one segment a line:
 *   stormwatch-ship-checkpoint 1
 *   FP(hex) DEV INO OFFSET LINENO SIZE PATH
 * PATH runs to the end of the line (a newline in a path is written as '?':
 * the path is for messages only, identity is FP/DEV/INO).
 */
#include "sw_ship_ckpt.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sw_alloc.h"
#include "sw_types.h"

#define CKPT_MAGIC "stormwatch-ship-checkpoint 1"

static sw_err_t write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return SW_ERR_IO;
        }
        p += w;
        n -= (size_t)w;
    }
    return SW_OK;
}

sw_err_t sw_ship_ckpt_save(const char *path, const sw_ship_pos_t *v, size_t n, char *errstr,
                           size_t errstr_size)
{
    sw_buf_t b;
    sw_buf_init(&b);
    sw_buf_puts(&b, CKPT_MAGIC "\n");
    for (size_t i = 0; i < n; i++) {
        sw_buf_printf(&b,
                      "%016" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " ",
                      v[i].fp, v[i].dev, v[i].ino, v[i].offset, v[i].lineno, v[i].size);
        for (const char *p = v[i].path; *p; p++) sw_buf_putc(&b, *p == '\n' ? '?' : *p);
        sw_buf_putc(&b, '\n');
    }
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    sw_err_t err = SW_OK;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(errstr, errstr_size, "checkpoint %s: %s", tmp, strerror(errno));
        sw_buf_clear(&b);
        return SW_ERR_IO;
    }
    if (write_all(fd, b.data, b.len) != SW_OK || fsync(fd) != 0) {
        snprintf(errstr, errstr_size, "checkpoint %s: %s", tmp, strerror(errno));
        err = SW_ERR_IO;
    }
    close(fd);
    sw_buf_clear(&b);
    if (err == SW_OK && rename(tmp, path) != 0) {
        snprintf(errstr, errstr_size, "checkpoint %s: rename: %s", path, strerror(errno));
        err = SW_ERR_IO;
    }
    if (err != SW_OK) {
        unlink(tmp);
        return err;
    }
    /* The rename itself durable (a power loss, not only a kill). */
    char dir[4200];
    snprintf(dir, sizeof(dir), "%s", path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return SW_OK;
}

/* One "FP DEV INO OFFSET LINENO SIZE PATH" line into *pos. */
static bool parse_line(char *line, sw_ship_pos_t *pos)
{
    char *p = line, *end;
    uint64_t f[6];
    for (int i = 0; i < 6; i++) {
        if (*p < '0' || (*p > '9' && (i != 0 || !((*p >= 'a' && *p <= 'f'))))) return false;
        errno = 0;
        f[i] = strtoull(p, &end, i == 0 ? 16 : 10);
        if (errno || end == p || *end != ' ') return false;
        p = end + 1;
    }
    if (f[3] > f[5]) return false; /* offset beyond the size */
    pos->fp = f[0];
    pos->dev = f[1];
    pos->ino = f[2];
    pos->offset = f[3];
    pos->lineno = f[4];
    pos->size = f[5];
    snprintf(pos->path, sizeof(pos->path), "%s", p);
    return true;
}

sw_err_t sw_ship_ckpt_load(const char *path, sw_ship_pos_t **out, size_t *n, char *errstr,
                           size_t errstr_size)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return SW_OK;
        snprintf(errstr, errstr_size, "checkpoint %s: %s", path, strerror(errno));
        return SW_ERR_IO;
    }
    char *line = NULL;
    size_t cap = 0, alloc = 0;
    ssize_t len;
    uint64_t lineno = 0;
    sw_err_t err = SW_OK;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
        if (lineno == 1) {
            if (strcmp(line, CKPT_MAGIC) != 0) {
                snprintf(errstr, errstr_size, "%s:1: expected \"%s\", got \"%.60s\"", path,
                         CKPT_MAGIC, line);
                err = SW_ERR_PARSE;
                break;
            }
            continue;
        }
        if (*n == alloc) {
            alloc = alloc ? 2 * alloc : 16;
            *out = sw_reallocarray(*out, alloc, sizeof(**out));
        }
        if (!parse_line(line, &(*out)[*n])) {
            snprintf(errstr, errstr_size,
                     "%s:%" PRIu64 ": expected FP DEV INO OFFSET LINENO SIZE PATH, got \"%.80s\"",
                     path, lineno, line);
            err = SW_ERR_PARSE;
            break;
        }
        (*n)++;
    }
    if (err == SW_OK && ferror(f)) {
        snprintf(errstr, errstr_size, "checkpoint %s: read error", path);
        err = SW_ERR_IO;
    }
    if (err == SW_OK && lineno == 0) {
        snprintf(errstr, errstr_size, "%s: empty file, expected \"%s\"", path, CKPT_MAGIC);
        err = SW_ERR_PARSE;
    }
    free(line);
    fclose(f);
    if (err != SW_OK) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return err;
}
