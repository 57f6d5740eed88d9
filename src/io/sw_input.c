/*
 * Line reader. A regular file that is not gzip is mapped (mmap, read
 * sequentially) and its lines are handed out in place from the mapping:
 * no copy by the kernel into a buffer, and every line stays where it is,
 * so holding one costs nothing. Pages already read are given back every
 * MiB (the process does not grow with the file; a file larger
 * than memory reads like a small one). A last line without a newline, and
 * whatever was appended to the file after it was opened, is read with
 * read(2) from the mapping's end on. Pipes, terminals, gzip and files that
 * cannot be mapped use the buffered reader over read(2): lines are handed
 * out in place from one buffer that grows only for lines longer than it.
 * A mapped file truncated while it is read makes the next access past its
 * new end raise SIGBUS: a handler (installed with each mapping) names
 * the file on stderr and exits 1, instead of a silent death; a SIGBUS
 * elsewhere keeps the default action.
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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "sw_alloc.h"

#define RAW_CHUNK (512u * 1024u)
#define BUF_INIT (1024u * 1024u)
#define GZ_BLOCK (1024u * 1024u) /* decoded bytes per block of the reader thread */
#define GZ_BLOCKS 3u             /* blocks in the ring */
#define MAP_STEP (1024u * 1024u) /* mapped bytes read between two map_step() */
#define MAP_PREFETCH 2048u /* bytes ahead of the line read that are prefetched */
#define MAP_AHEAD (512u * 1024u) /* bytes mapped ahead of the reader (1-2 x this) */

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
    /* A mapped file: [map, map + map_len); lines are taken from map_pos on
     * until none is left with its newline, then the buffered reader goes
     * on from map_len (map_done). */
    const char *map;
    size_t map_len, map_pos;
    size_t map_last;    /* offset of the line last returned from the map */
    size_t map_held;    /* offset of the line last held (SIZE_MAX: none) */
    size_t map_dropped; /* bytes before it are given back (page-aligned) */
    size_t map_step_at;    /* map_pos from which map_step() runs again */
    size_t map_populated;  /* bytes of the map populated ahead */
    bool map_populate;     /* MADV_POPULATE_READ works */
    bool map_done;
    int map_slot; /* its slot for the SIGBUS handler */
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

/* ---- mapped files truncated under the reader ---------------------------------- */

/* The mappings the SIGBUS handler knows: a slot is published by storing
 * its base last and withdrawn by clearing it first. */
#define MAP_SLOTS 8
typedef struct map_slot_s {
    _Atomic uintptr_t base;
    size_t len;
    char msg[320]; /* the whole message, written by the handler as it is */
    size_t msg_len;
} map_slot_t;
static map_slot_t map_slots[MAP_SLOTS];
static atomic_flag map_slot_busy[MAP_SLOTS];

static void map_sigbus(int sig, siginfo_t *si, void *uctx)
{
    (void)uctx;
    uintptr_t a = (uintptr_t)si->si_addr;
    for (size_t i = 0; i < MAP_SLOTS; i++) {
        uintptr_t b = atomic_load_explicit(&map_slots[i].base, memory_order_acquire);
        if (b && a >= b && a - b < map_slots[i].len) {
            ssize_t w = write(STDERR_FILENO, map_slots[i].msg, map_slots[i].msg_len);
            (void)w;
            _exit(1);
        }
    }
    /* Not one of ours: the default action, on the same access again. */
    signal(sig, SIG_DFL);
}

static void map_sigbus_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = map_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    (void)sigaction(SIGBUS, &sa, NULL);
}

/* @returns the slot now watching [m, m + len) for @p name, or -1 when all
 * are taken (the file is then read without mapping). */
static int map_watch(const void *m, size_t len, const char *name)
{
    map_sigbus_install(); /* again for every file: a handler set since then is replaced */
    for (int i = 0; i < MAP_SLOTS; i++) {
        if (atomic_flag_test_and_set(&map_slot_busy[i])) continue;
        map_slot_t *sl = &map_slots[i];
        int n = snprintf(sl->msg, sizeof(sl->msg),
                         "stormwatch: %s: the file was truncated while it was read (the lines "
                         "after the last one reported were not read)\n",
                         name);
        sl->msg_len = n < 0 ? 0 : (size_t)n < sizeof(sl->msg) ? (size_t)n : sizeof(sl->msg) - 1;
        if (sl->msg_len && sl->msg[sl->msg_len - 1] != '\n') sl->msg[sl->msg_len - 1] = '\n';
        sl->len = len;
        atomic_store_explicit(&sl->base, (uintptr_t)m, memory_order_release);
        return i;
    }
    return -1;
}

static void map_unwatch(int slot)
{
    if (slot < 0) return;
    atomic_store_explicit(&map_slots[slot].base, 0, memory_order_release);
    atomic_flag_clear(&map_slot_busy[slot]);
}

/* ---- the input ---------------------------------------------------------------- */

/* Every MAP_STEP bytes of the map: give back the pages before what may
 * still be borrowed (the line last held, else the line about to be
 * returned, at map_pos), and map the next MAP_AHEAD bytes in one call
 * (MADV_POPULATE_READ: one kernel entry instead of a fault every 64 KiB;
 * where the kernel lacks it, the faults do the same). */
static void map_step(sw_input_t *in)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t keep = in->map_held < in->map_pos ? in->map_held : in->map_pos;
    size_t to = keep / page * page;
    if (to > in->map_dropped + MAP_STEP) {
        (void)madvise((char *)(uintptr_t)in->map + in->map_dropped, to - in->map_dropped,
                      MADV_DONTNEED);
        in->map_dropped = to;
    }
#ifdef MADV_POPULATE_READ
    size_t from = in->map_pos / page * page;
    if (in->map_populate && from + MAP_AHEAD > in->map_populated) {
        size_t a = from > in->map_populated ? from : in->map_populated;
        size_t b = from + 2 * MAP_AHEAD < in->map_len ? from + 2 * MAP_AHEAD : in->map_len;
        if (a < b && madvise((char *)(uintptr_t)in->map + a, b - a, MADV_POPULATE_READ) != 0)
            in->map_populate = false;
        in->map_populated = b;
    }
#endif
    in->map_step_at = in->map_pos + MAP_STEP;
}

/* Map @p in's descriptor when it is a non-empty regular file that is not
 * gzip. @returns false (nothing changed, the descriptor still at its
 * start) when it is not mapped. */
static bool map_file(sw_input_t *in)
{
    struct stat st;
    if (fstat(in->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return false;
    if ((uint64_t)st.st_size > SIZE_MAX) return false;
    /* The descriptor may not be at the file's start (a redirected stdin
     * read before): map only what read() would give. */
    off_t at = lseek(in->fd, 0, SEEK_CUR);
    if (at != 0) return false;
    size_t len = (size_t)st.st_size;
    void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, in->fd, 0);
    if (m == MAP_FAILED) return false;
    const unsigned char *b = m;
    if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
        munmap(m, len);
        return false;
    }
    in->map_slot = map_watch(m, len, in->name);
    if (in->map_slot < 0) {
        munmap(m, len);
        return false;
    }
    (void)madvise(m, len, MADV_SEQUENTIAL);
    in->map = m;
    in->map_len = len;
    in->map_populate = true;
    map_step(in);
    return true;
}

/* The map has no line with its newline left: its last bytes (if any) go
 * to the buffer and the buffered reader goes on at the map's end (the
 * file may have grown since it was mapped). */
static void map_finish(sw_input_t *in)
{
    size_t rest = in->map_len - in->map_pos;
    in->map_done = true;
    in->raw_total = in->map_len;
    (void)lseek(in->fd, (off_t)in->map_len, SEEK_SET);
    in->cap = BUF_INIT;
    if (rest > SW_INPUT_MAX_LINE) {
        in->skipping = true; /* reported like the buffered reader's */
        rest = 0;
    }
    while (in->cap < rest + 1) in->cap *= 2;
    if (in->cap > (size_t)SW_INPUT_MAX_LINE + 1) in->cap = (size_t)SW_INPUT_MAX_LINE + 1;
    in->buf = sw_malloc(in->cap);
    memcpy(in->buf, in->map + in->map_pos, rest);
    in->start = 0;
    in->end = rest;
    in->map_pos = in->map_len;
}

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
    in->map_held = SIZE_MAX;
    if (map_file(in)) return in;
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
    if (in->map) {
        map_unwatch(in->map_slot);
        munmap((void *)(uintptr_t)in->map, in->map_len);
    }
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
    in->map_held = in->map_last; /* read only while the map is read */
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
        if (n == 0) in->eof = true;
        in->end += (size_t)n;
        in->raw_total += (uint64_t)n;
        return n;
    }
}

sw_input_res_t sw_input_next(sw_input_t *in, const char **line, size_t *len, char *errstr,
                             size_t errstr_size)
{
    if (in->map && !in->map_done) {
        const char *p = in->map + in->map_pos;
        const char *nl = memchr(p, '\n', in->map_len - in->map_pos);
        if (nl) {
            size_t l = (size_t)(nl - p);
            /* The next lines into the cache while this one is decoded (the
             * hardware prefetcher stops at each 4 KiB page of the map). */
            for (size_t k = 0; k <= l; k += 64) __builtin_prefetch(p + MAP_PREFETCH + k);
            if (in->map_pos >= in->map_step_at) map_step(in);
            in->map_last = in->map_pos;
            in->map_pos += l + 1;
            in->raw_total = in->map_pos;
            in->lineno++;
            if (l > SW_INPUT_MAX_LINE) {
                snprintf(errstr, errstr_size, "line longer than %u bytes (skipped)",
                         SW_INPUT_MAX_LINE);
                return SW_INPUT_TOOLONG;
            }
            *line = p;
            *len = l;
            return SW_INPUT_LINE;
        }
        map_finish(in);
    }
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
