/*
 * Line reader over read(2) into one reused buffer, for every input:
 * regular files, stdin, pipes, terminals, gzip. Lines are handed out in
 * place from the buffer, which grows only for lines longer than it.
 * Mapping regular files instead (mmap, lines in place, pages given back as
 * they were read) cost more CPU time here, not less: on this project's
 * reference VM, paired whole-process runs gave replay 1.3-1.8x and
 * analyze ~2x the CPU time of read(2) into a 256 KiB buffer, with or
 * without MAP_POPULATE, MADV_POPULATE_READ or giving pages back (each
 * page faulted in and its TLB entry cost more than the kernel's copy into
 * a buffer that stays in the cache; docs/benchmarks.md). A regular file
 * truncated while it is read is an error naming it, found at the end of
 * what read(2) returns.
 *
 * Gzip is inflated by a reader thread of the input, one block ahead of the
 * caller (zlib then runs beside the caller's decoding instead of before
 * it). The thread owns the file descriptor and zlib; it hands over whole
 * blocks of decoded bytes through a small ring under one mutex, and after
 * the last one either the end of the input or its error (read failure,
 * truncated or corrupt stream, data after the last member): what was
 * decoded before an error is still read, then the error is reported, as
 * when inflating in place. sw_input_close() stops the thread even while
 * it waits for a pipe (poll on the descriptor and a wake-up pipe).
 */
#include "sw_input.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "sw_alloc.h"

#define RAW_CHUNK (512u * 1024u)
#define BUF_INIT (256u * 1024u)  /* measured: 1 MiB and 4 MiB cost more CPU time */
#define GZ_BLOCK (1024u * 1024u) /* decoded bytes per block of the reader thread */
#define GZ_BLOCKS 3u             /* blocks in the ring */

/* The gzip stream: compressed bytes in, decoded bytes out. Owned by the
 * reader thread once it runs. */
typedef struct gz_s {
    int fd;
    int wake_fd;      /* readable when the input is being closed */
    const char *name; /* the input's name (for messages) */
    z_stream zs;
    bool zs_init;
    bool member_done;   /* inflate reached the end of a gzip member */
    bool out_full;      /* the last inflate filled its output: more may be pending */
    unsigned char *raw; /* compressed input */
    size_t raw_len;     /* bytes of raw not yet given to zlib */
    size_t raw_cap;
    bool raw_eof;
    uint64_t raw_total; /* compressed bytes read */
} gz_t;

/* The reader thread and the ring of decoded blocks it fills. Everything
 * below mu is shared and read or written under it; a block between tail
 * and head belongs to the caller, the others to the thread. */
typedef struct gzpipe_s {
    gz_t gz;
    pthread_t thr;
    bool started;
    int wake[2]; /* [1] written by close, [0] polled by the thread */
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a block published or given back, or stop */
    char *blk[GZ_BLOCKS];
    size_t blk_len[GZ_BLOCKS];
    uint64_t head, tail; /* blocks published / given back */
    bool done;           /* no block will follow head */
    bool failed;         /* ... and the stream ended in an error */
    bool stop;           /* the input is being closed */
    uint64_t raw_total;  /* compressed bytes read as of the last block */
    char err[512];       /* the error, when failed */
    size_t rd;           /* caller only: bytes of blk[tail] already taken */
} gzpipe_t;

struct sw_input_s {
    int fd;
    bool owns_fd;
    char *name;
    bool gzip;
    gzpipe_t *gp; /* gzip: the reader thread */
    uint64_t raw_total;
    char *buf; /* decoded bytes */
    size_t cap, start, end;
    char *alt;      /* the other buffer: room is made there while a held line is in buf */
    size_t alt_cap; /* bytes */
    bool held;      /* buf holds the line of the last sw_input_hold() */
    bool eof;       /* no more decoded bytes will come */
    bool skipping;  /* inside an over-long line */
    uint64_t lineno;
    bool regular; /* a regular file: its size is checked at the end */
};

/* ---- the gzip stream (reader thread) ---------------------------------------- */

/* Read more compressed bytes into gz->raw. @returns -1 on error (also when
 * the input is being closed). */
static int raw_fill(gz_t *gz, char *errstr, size_t errstr_size)
{
    if (gz->raw_eof) return 0;
    if (gz->raw_len && gz->zs.next_in != gz->raw) memmove(gz->raw, gz->zs.next_in, gz->raw_len);
    gz->zs.next_in = gz->raw;
    if (gz->raw_len == gz->raw_cap) return 0;
    for (;;) {
        /* Wait for data or for close: a pipe may stay silent for ever. */
        struct pollfd pfd[2] = {{.fd = gz->fd, .events = POLLIN},
                                {.fd = gz->wake_fd, .events = POLLIN}};
        int pr = poll(pfd, 2, -1);
        if (pr < 0 && errno == EINTR) continue;
        if (pr < 0) {
            snprintf(errstr, errstr_size, "%s: read failed: %s", gz->name, strerror(errno));
            return -1;
        }
        if (pfd[1].revents) {
            snprintf(errstr, errstr_size, "%s: reading stopped", gz->name);
            return -1;
        }
        ssize_t n = read(gz->fd, gz->raw + gz->raw_len, gz->raw_cap - gz->raw_len);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n < 0) {
            snprintf(errstr, errstr_size, "%s: read failed: %s", gz->name, strerror(errno));
            return -1;
        }
        if (n == 0) gz->raw_eof = true;
        gz->raw_len += (size_t)n;
        gz->raw_total += (uint64_t)n;
        gz->zs.next_in = gz->raw;
        return 0;
    }
}

/* Inflate into [dst, dst + room). @returns bytes added (> 0), 0 at the end
 * of the last member, -1 on error (errstr says which). */
static ssize_t gz_inflate(gz_t *gz, char *dst, size_t room, char *errstr, size_t errstr_size)
{
    size_t out = 0;
    while (out == 0) {
        if (gz->member_done) {
            /* Another member may follow; anything else is an error. */
            while (gz->raw_len < 2 && !gz->raw_eof)
                if (raw_fill(gz, errstr, errstr_size) < 0) return -1;
            if (gz->raw_len == 0 && gz->raw_eof) return 0;
            if (gz->raw_len < 2 || gz->zs.next_in[0] != 0x1f || gz->zs.next_in[1] != 0x8b) {
                snprintf(errstr, errstr_size,
                         "%s: unexpected data after the gzip stream at compressed byte %llu",
                         gz->name, (unsigned long long)(gz->raw_total - gz->raw_len));
                return -1;
            }
            inflateReset(&gz->zs);
            gz->member_done = false;
        }
        if (gz->raw_len == 0 && !gz->out_full) {
            if (gz->raw_eof) {
                snprintf(errstr, errstr_size,
                         "%s: truncated gzip stream (unexpected end of file after %llu "
                         "compressed bytes)",
                         gz->name, (unsigned long long)gz->raw_total);
                return -1;
            }
            if (raw_fill(gz, errstr, errstr_size) < 0) return -1;
            continue;
        }
        gz->zs.avail_in = (uInt)gz->raw_len;
        gz->zs.next_out = (Bytef *)dst;
        gz->zs.avail_out = (uInt)room;
        int rc = inflate(&gz->zs, Z_NO_FLUSH);
        gz->raw_len = gz->zs.avail_in;
        out = room - gz->zs.avail_out;
        gz->out_full = gz->zs.avail_out == 0;
        if (rc == Z_STREAM_END) {
            gz->member_done = true;
        } else if (rc == Z_BUF_ERROR) {
            if (gz->raw_eof && gz->raw_len == 0) {
                snprintf(errstr, errstr_size,
                         "%s: truncated gzip stream (unexpected end of file after %llu "
                         "compressed bytes)",
                         gz->name, (unsigned long long)gz->raw_total);
                return -1;
            }
            if (raw_fill(gz, errstr, errstr_size) < 0) return -1;
        } else if (rc != Z_OK) {
            snprintf(errstr, errstr_size, "%s: corrupt gzip data (%s) near compressed byte %llu",
                     gz->name, gz->zs.msg ? gz->zs.msg : "inflate failed",
                     (unsigned long long)(gz->raw_total - gz->raw_len));
            return -1;
        }
    }
    return (ssize_t)out;
}

/* Whether the next gz_inflate() starts with a read that may wait. */
static bool gz_needs_read(const gz_t *gz)
{
    if (gz->raw_eof) return false;
    if (gz->member_done) return gz->raw_len < 2;
    return gz->raw_len == 0 && !gz->out_full;
}

/* The reader thread: fill free blocks until the end, an error or stop. A
 * block goes out when full, or before a read that may wait (a pipe that
 * trickles: its lines are not held back). */
static void *gz_thread(void *arg)
{
    gzpipe_t *gp = arg;
    char err[512];
    for (;;) {
        pthread_mutex_lock(&gp->mu);
        while (gp->head - gp->tail == GZ_BLOCKS && !gp->stop) pthread_cond_wait(&gp->cv, &gp->mu);
        bool stop = gp->stop;
        unsigned slot = (unsigned)(gp->head % GZ_BLOCKS);
        pthread_mutex_unlock(&gp->mu);
        if (stop) return NULL;
        char *dst = gp->blk[slot];
        size_t len = 0;
        ssize_t n = 0;
        err[0] = '\0';
        while (len < GZ_BLOCK && !(len && gz_needs_read(&gp->gz)) &&
               (n = gz_inflate(&gp->gz, dst + len, GZ_BLOCK - len, err, sizeof(err))) > 0)
            len += (size_t)n;
        pthread_mutex_lock(&gp->mu);
        if (len) {
            gp->blk_len[slot] = len;
            gp->head++;
        }
        gp->raw_total = gp->gz.raw_total;
        bool end = n <= 0;
        if (end) {
            gp->done = true;
            gp->failed = n < 0;
            if (n < 0) memcpy(gp->err, err, sizeof(err));
        }
        pthread_cond_broadcast(&gp->cv);
        pthread_mutex_unlock(&gp->mu);
        if (end) return NULL;
    }
}

static void gzpipe_destroy(gzpipe_t *gp)
{
    if (!gp) return;
    if (gp->started) {
        pthread_mutex_lock(&gp->mu);
        gp->stop = true;
        pthread_cond_broadcast(&gp->cv);
        pthread_mutex_unlock(&gp->mu);
        ssize_t w;
        do {
            w = write(gp->wake[1], "x", 1);
        } while (w < 0 && errno == EINTR);
        pthread_join(gp->thr, NULL);
    }
    if (gp->wake[0] >= 0) close(gp->wake[0]);
    if (gp->wake[1] >= 0) close(gp->wake[1]);
    pthread_cond_destroy(&gp->cv);
    pthread_mutex_destroy(&gp->mu);
    if (gp->gz.zs_init) inflateEnd(&gp->gz.zs);
    free(gp->gz.raw);
    for (unsigned i = 0; i < GZ_BLOCKS; i++) free(gp->blk[i]);
    free(gp);
}

/* The reader thread over @p in's descriptor, starting with the @p len
 * bytes already read at @p first. @returns NULL with errstr filled. */
static gzpipe_t *gzpipe_new(sw_input_t *in, const char *first, size_t len, bool eof, char *errstr,
                            size_t errstr_size)
{
    gzpipe_t *gp = sw_calloc(1, sizeof(*gp));
    gp->wake[0] = gp->wake[1] = -1;
    pthread_mutex_init(&gp->mu, NULL);
    pthread_cond_init(&gp->cv, NULL);
    gz_t *gz = &gp->gz;
    gz->fd = in->fd;
    gz->name = in->name;
    gz->raw_cap = RAW_CHUNK > len ? RAW_CHUNK : len;
    gz->raw = sw_malloc(gz->raw_cap);
    memcpy(gz->raw, first, len);
    gz->raw_len = len;
    gz->raw_eof = eof;
    gz->raw_total = in->raw_total;
    gp->raw_total = in->raw_total;
    if (inflateInit2(&gz->zs, 15 + 16) != Z_OK) {
        snprintf(errstr, errstr_size, "%s: cannot initialise zlib", in->name);
        goto err;
    }
    gz->zs_init = true;
    gz->zs.next_in = gz->raw;
    for (unsigned i = 0; i < GZ_BLOCKS; i++) gp->blk[i] = sw_malloc(GZ_BLOCK);
    if (pipe2(gp->wake, O_CLOEXEC) != 0) {
        snprintf(errstr, errstr_size, "%s: cannot start reading: %s", in->name, strerror(errno));
        goto err;
    }
    gz->wake_fd = gp->wake[0];
    /* Signals stay with the caller's threads: the reader blocks them all. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&gp->thr, NULL, gz_thread, gp);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(errstr, errstr_size, "%s: cannot start the gzip reader thread: %s", in->name,
                 strerror(rc));
        goto err;
    }
    gp->started = true;
    return gp;
err:
    gzpipe_destroy(gp);
    return NULL;
}

/* Take decoded bytes from the reader thread into buf[end..cap). @returns
 * bytes added, 0 at the end, -1 on error (every call after it too). */
static ssize_t gzpipe_take(sw_input_t *in, char *errstr, size_t errstr_size)
{
    gzpipe_t *gp = in->gp;
    pthread_mutex_lock(&gp->mu);
    while (gp->head == gp->tail && !gp->done) pthread_cond_wait(&gp->cv, &gp->mu);
    in->raw_total = gp->raw_total;
    if (gp->head == gp->tail) {
        bool failed = gp->failed;
        if (failed) snprintf(errstr, errstr_size, "%s", gp->err);
        pthread_mutex_unlock(&gp->mu);
        if (failed) return -1;
        in->eof = true;
        return 0;
    }
    unsigned slot = (unsigned)(gp->tail % GZ_BLOCKS);
    size_t avail = gp->blk_len[slot] - gp->rd;
    pthread_mutex_unlock(&gp->mu);
    /* The block is the caller's until given back: copy without the lock. */
    size_t n = in->cap - in->end < avail ? in->cap - in->end : avail;
    memcpy(in->buf + in->end, gp->blk[slot] + gp->rd, n);
    in->end += n;
    gp->rd += n;
    if (gp->rd == gp->blk_len[slot]) {
        pthread_mutex_lock(&gp->mu);
        gp->tail++;
        gp->rd = 0;
        pthread_cond_broadcast(&gp->cv);
        pthread_mutex_unlock(&gp->mu);
    }
    return (ssize_t)n;
}

/* ---- the input ---------------------------------------------------------------- */

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
    struct stat st;
    in->regular = fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode);
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
        in->gp = gzpipe_new(in, in->buf, in->end, in->eof, errstr, errstr_size);
        if (!in->gp) {
            sw_input_close(in);
            return NULL;
        }
        in->eof = false;
        in->end = 0;
    }
    return in;
}

void sw_input_close(sw_input_t *in)
{
    if (!in) return;
    gzpipe_destroy(in->gp); /* before the descriptor it reads */
    if (in->owns_fd) close(in->fd);
    free(in->buf);
    free(in->alt);
    free(in->name);
    free(in);
}

const char *sw_input_name(const sw_input_t *in)
{
    return in->name;
}

void sw_input_hold(sw_input_t *in)
{
    in->held = true;
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

/* Whether the regular file of @p in is now shorter than what was read of
 * it (read(2) then ends early, at its new end: the lines after it are
 * lost, not read). */
static bool truncated(const sw_input_t *in)
{
    struct stat st;
    off_t at = lseek(in->fd, 0, SEEK_CUR);
    return at >= 0 && fstat(in->fd, &st) == 0 && st.st_size < at;
}

/* More decoded bytes into buf[end..cap). @returns bytes added, 0 at end,
 * -1 on error. */
static ssize_t fill(sw_input_t *in, char *errstr, size_t errstr_size)
{
    if (in->eof) return 0;
    if (in->gp) return gzpipe_take(in, errstr, errstr_size);
    for (;;) {
        ssize_t n = read(in->fd, in->buf + in->end, in->cap - in->end);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            snprintf(errstr, errstr_size, "%s: read failed: %s", in->name, strerror(errno));
            return -1;
        }
        if (n == 0) {
            if (in->regular && truncated(in)) {
                snprintf(errstr, errstr_size,
                         "%s: the file was truncated while it was read (the lines after the "
                         "last one reported were not read)",
                         in->name);
                return -1;
            }
            in->eof = true;
        }
        in->end += (size_t)n;
        in->raw_total += (uint64_t)n;
        return n;
    }
}

sw_input_res_t sw_input_next(sw_input_t *in, const char **line, size_t *len, char *errstr,
                             size_t errstr_size)
{
    for (;;) {
        char *nl = in->end > in->start ? memchr(in->buf + in->start, '\n', in->end - in->start)
                                       : NULL;
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
        /* Make room: drop consumed bytes, then grow or start skipping. A
         * held line lies before start: then the unread bytes move to the
         * other buffer and the held line stays where it is. Growing below
         * cannot move it either: buf holds it only while start > 0. */
        if (in->start > 0 && in->held) {
            if (in->alt_cap < in->cap) {
                free(in->alt);
                in->alt = sw_malloc(in->cap);
                in->alt_cap = in->cap;
            }
            memcpy(in->alt, in->buf + in->start, in->end - in->start);
            char *b = in->buf;
            size_t c = in->cap;
            in->buf = in->alt;
            in->cap = in->alt_cap;
            in->alt = b;
            in->alt_cap = c;
            in->held = false;
            in->end -= in->start;
            in->start = 0;
        } else if (in->start > 0) {
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
