/*
 * Follower (see sw_follow.h). Each segment holds at most one open file
 * (its carrier), a buffer of decoded bytes not yet handed out, and three
 * offsets: read (handed out), acked (Kafka confirmed) and size (known to
 * exist). A scan matches the files in view to segments: by device/inode
 * for open carriers (an open file's inode cannot be reused), else by
 * fingerprint. A file that keeps its place but shrinks was truncated.
 */
#include "sw_follow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "sw_alloc.h"
#include "sw_types.h"

#define READ_CHUNK (256 * 1024)
#define FP_SEED 0x5348495046500001ULL /* "SHIPFP" */

typedef struct seg_s {
    uint64_t id;
    uint64_t fp;
    char *path;        /* the carrier's path (or the last known one) */
    uint64_t dev, ino; /* the carrier (or the checkpoint's hint) */
    int fd;            /* -1: no carrier open */
    bool gz;
    z_stream zs;
    bool zs_on;         /* zs initialised */
    bool z_end;         /* gzip: every member ended at the end of the file */
    unsigned char *zin; /* compressed input buffer */
    uint64_t zin_total; /* compressed bytes read from the fd */
    sw_buf_t buf;       /* decoded bytes [buf_off, buf_off + buf.len) */
    size_t pos;         /* the next byte to hand out, in buf */
    uint64_t buf_off;
    uint64_t skip_to;  /* decoded bytes before this offset are not handed out again */
    uint64_t read_off; /* just after the last line handed out */
    uint64_t lineno;   /* lines handed out */
    uint64_t acked_off, acked_line;
    uint64_t size;      /* bytes known to exist */
    uint64_t disk_size; /* the carrier's size at the last look (compressed for gzip) */
    bool in_view;       /* carried by a file in view at the last scan */
    bool deleted;       /* the open carrier has no name left */
    bool restored;      /* from the checkpoint, not found yet */
    bool released;      /* no more bytes will be read (carrier closed for good) */
    bool too_long;      /* discarding an over-long line */
    bool final;         /* hand out an unterminated last line */
    bool dry;           /* the last read found nothing new */
    bool truncated;     /* its carrier was truncated: never re-attached to it */
    int64_t gone_ms;    /* when its carrier left the view (0: in view) */
    int64_t dry_ms;     /* since when a read found nothing new (0: data came) */
    uint64_t dry_round; /* the round of sw_follow_next() in which it had nothing */
    char *alias;        /* a file in view with the same fingerprint, or NULL */
} seg_t;

/* Numbered segment names (telemetry-00014.jsonl): the highest number
 * seen per name pattern, so that a segment created and pruned unseen (between
 * two scans, or while stopped) still shows as a gap. */
typedef struct seqkey_s {
    char *prefix, *suffix; /* around the number; suffix without ".gz" */
    int width;             /* digits */
    uint64_t last;
} seqkey_t;

struct sw_follow_s {
    char *dir;
    char *pattern; /* NULL in single-file mode */
    char *name;    /* single-file mode: the file's name */
    bool is_dir;
    int64_t rotate_wait_ms;
    size_t max_line;
    seg_t **segs;
    size_t nsegs, capsegs;
    uint64_t next_id;
    uint64_t round;
    bool scanned;
    sw_follow_ev_t *evs;
    size_t nevs, capevs, ev_head;
    sw_follow_stats_t st;
    seqkey_t *seq;
    size_t nseq;
};

const char *sw_follow_ev_name(sw_follow_ev_kind_t k)
{
    static const char *const names[] = {"new",  "resumed", "moved", "truncated",
                                        "done", "lost",    "error"};
    return k < SW_FOLLOW__CNT ? names[k] : "?";
}

static sw_follow_ev_t *ev_add(sw_follow_t *f, sw_follow_ev_kind_t kind, const char *path)
{
    if (f->ev_head == f->nevs) f->ev_head = f->nevs = 0;
    if (f->nevs == f->capevs) {
        f->capevs = f->capevs ? 2 * f->capevs : 16;
        f->evs = sw_reallocarray(f->evs, f->capevs, sizeof(*f->evs));
    }
    sw_follow_ev_t *ev = &f->evs[f->nevs++];
    memset(ev, 0, sizeof(*ev));
    ev->kind = kind;
    /* Paths come from readdir() under a directory of at most PATH_MAX: a
     * longer one could not be opened either, and is kept cut. */
    size_t n = path ? strnlen(path, sizeof(ev->path) - 1) : 0;
    memcpy(ev->path, path ? path : "", n);
    ev->path[n] = '\0';
    return ev;
}

bool sw_follow_take_event(sw_follow_t *f, sw_follow_ev_t *ev)
{
    if (f->ev_head >= f->nevs) return false;
    *ev = f->evs[f->ev_head++];
    return true;
}

/* ---- numbered names ----------------------------------------------------- */

/* Split a file name around its last run of digits (".gz" ignored).
 * @returns false when it has none (or too many to be a counter). */
static bool name_number(const char *path, sw_buf_t *prefix, sw_buf_t *suffix, int *width,
                        uint64_t *num)
{
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    size_t len = strlen(name);
    if (len > 3 && strcmp(name + len - 3, ".gz") == 0) len -= 3;
    size_t e = len;
    while (e > 0 && !(name[e - 1] >= '0' && name[e - 1] <= '9')) e--;
    size_t b = e;
    while (b > 0 && name[b - 1] >= '0' && name[b - 1] <= '9') b--;
    if (b == e || e - b > 18) return false;
    prefix->len = suffix->len = 0;
    sw_buf_put(prefix, path, (size_t)(name - path) + b);
    sw_buf_put(suffix, name + e, len - e);
    sw_buf_cstr(prefix);
    sw_buf_cstr(suffix);
    *width = (int)(e - b);
    *num = strtoull(name + b, NULL, 10);
    return true;
}

/* A segment file seen (@p report: gaps below it are lost segments). */
static void seq_seen(sw_follow_t *f, const char *path, bool report)
{
    sw_buf_t pre, suf;
    sw_buf_init(&pre);
    sw_buf_init(&suf);
    int width;
    uint64_t num;
    if (!name_number(path, &pre, &suf, &width, &num)) goto out;
    seqkey_t *k = NULL;
    for (size_t i = 0; i < f->nseq && !k; i++)
        if (!strcmp(f->seq[i].prefix, pre.data) && !strcmp(f->seq[i].suffix, suf.data))
            k = &f->seq[i];
    if (!k) {
        f->seq = sw_reallocarray(f->seq, f->nseq + 1, sizeof(*f->seq));
        k = &f->seq[f->nseq++];
        k->prefix = sw_strdup(pre.data);
        k->suffix = sw_strdup(suf.data);
        k->width = width;
        k->last = num;
        goto out;
    }
    if (report && num > k->last + 1) {
        /* Bounded: a renumbering (a new session) is not thousands of losses. */
        uint64_t from = num - k->last - 1 > 1000 ? num - 1000 : k->last + 1;
        for (uint64_t m = from; m < num; m++) {
            char name[4200];
            snprintf(name, sizeof(name), "%s%0*" PRIu64 "%s", k->prefix, k->width, m, k->suffix);
            sw_follow_ev_t *ev = ev_add(f, SW_FOLLOW_LOST, name);
            snprintf(ev->detail, sizeof(ev->detail),
                     "never seen: created and deleted between two scans or while stopped "
                     "(size unknown)");
            f->st.lost_segments++;
        }
    }
    if (num > k->last) k->last = num;
out:
    sw_buf_clear(&pre);
    sw_buf_clear(&suf);
}

/* ---- segments ---------------------------------------------------------- */

static seg_t *seg_add(sw_follow_t *f, uint64_t fp, const char *path)
{
    seg_t *s = sw_calloc(1, sizeof(*s));
    s->id = ++f->next_id;
    s->fp = fp;
    s->path = sw_strdup(path);
    s->fd = -1;
    sw_buf_init(&s->buf);
    if (f->nsegs == f->capsegs) {
        f->capsegs = f->capsegs ? 2 * f->capsegs : 16;
        f->segs = sw_reallocarray(f->segs, f->capsegs, sizeof(*f->segs));
    }
    f->segs[f->nsegs++] = s;
    return s;
}

/* Close the carrier; the buffered bytes stay (a final line to hand out). */
static void seg_close_fd(seg_t *s)
{
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
    if (s->zs_on) inflateEnd(&s->zs);
    s->zs_on = false;
    free(s->zin);
    s->zin = NULL;
}

/* Close the carrier and drop the buffered bytes. */
static void seg_close(seg_t *s)
{
    seg_close_fd(s);
    s->buf.len = 0;
    s->pos = 0;
}

static void seg_free(seg_t *s)
{
    seg_close(s);
    sw_buf_clear(&s->buf);
    free(s->path);
    free(s->alias);
    free(s);
}

static void seg_set_path(seg_t *s, const char *path)
{
    if (strcmp(s->path, path) == 0) return;
    free(s->path);
    s->path = sw_strdup(path);
}

static void lose(sw_follow_t *f, seg_t *s, uint64_t from, uint64_t to, const char *why)
{
    if (to <= from) return;
    sw_follow_ev_t *ev = ev_add(f, SW_FOLLOW_LOST, s->path);
    ev->from = from;
    ev->to = to;
    snprintf(ev->detail, sizeof(ev->detail), "%s", why);
    f->st.lost_bytes += to - from;
    f->st.lost_segments++;
}

/* Open @p path as the carrier of @p s, positioned to hand out bytes from
 * s->read_off on. @returns false (an ERROR event) when it cannot. */
static bool seg_open(sw_follow_t *f, seg_t *s, const char *path, bool gz)
{
    seg_close(s);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        sw_follow_ev_t *ev = ev_add(f, SW_FOLLOW_ERROR, path);
        snprintf(ev->detail, sizeof(ev->detail), "open: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return false;
    }
    seg_set_path(s, path);
    s->fd = fd;
    s->dev = (uint64_t)sb.st_dev;
    s->ino = (uint64_t)sb.st_ino;
    s->gz = gz;
    s->z_end = false;
    s->zin_total = 0;
    s->deleted = false;
    s->dry_ms = 0;
    s->skip_to = s->read_off;
    s->buf_off = 0;
    if (gz) {
        memset(&s->zs, 0, sizeof(s->zs));
        if (inflateInit2(&s->zs, 16 + MAX_WBITS) != Z_OK) {
            seg_close(s);
            return false;
        }
        s->zs_on = true;
        s->zin = sw_malloc(READ_CHUNK);
    } else if (s->read_off > 0) {
        if (lseek(fd, (off_t)s->read_off, SEEK_SET) < 0) {
            seg_close(s);
            return false;
        }
        s->buf_off = s->read_off;
    }
    return true;
}

/* ---- reading ----------------------------------------------------------- */

/* Make room at the end of the buffer, dropping what was handed out. */
static void buf_compact(seg_t *s)
{
    if (s->pos == 0) return;
    memmove(s->buf.data, s->buf.data + s->pos, s->buf.len - s->pos);
    s->buf.len -= s->pos;
    s->buf_off += s->pos;
    s->pos = 0;
}

/* Drop decoded bytes below skip_to (a resumed gzip carrier). */
static void buf_skip(seg_t *s)
{
    uint64_t end = s->buf_off + s->buf.len;
    if (s->buf_off >= s->skip_to) return;
    uint64_t drop = (end <= s->skip_to ? end : s->skip_to) - s->buf_off;
    memmove(s->buf.data, s->buf.data + drop, s->buf.len - (size_t)drop);
    s->buf.len -= (size_t)drop;
    s->buf_off += drop;
}

/* Read more decoded bytes from the carrier.
 * @returns bytes added (0: nothing now), or -1 on an error (event given). */
static ssize_t seg_fill(sw_follow_t *f, seg_t *s)
{
    if (s->fd < 0) return 0;
    buf_compact(s);
    sw_buf_reserve(&s->buf, READ_CHUNK);
    size_t before = s->buf.len;
    if (!s->gz) {
        ssize_t r;
        do r = read(s->fd, s->buf.data + s->buf.len, READ_CHUNK);
        while (r < 0 && errno == EINTR);
        if (r < 0) {
            sw_follow_ev_t *ev = ev_add(f, SW_FOLLOW_ERROR, s->path);
            snprintf(ev->detail, sizeof(ev->detail), "read: %s", strerror(errno));
            return -1;
        }
        s->buf.len += (size_t)r;
    } else {
        for (int tries = 0; tries < 64 && s->buf.len - before < READ_CHUNK / 2; tries++) {
            if (s->zs.avail_in == 0) {
                ssize_t r;
                do r = read(s->fd, s->zin, READ_CHUNK);
                while (r < 0 && errno == EINTR);
                if (r <= 0) break; /* more may come: a gzip still being written */
                s->zin_total += (uint64_t)r;
                s->zs.next_in = s->zin;
                s->zs.avail_in = (uInt)r;
                s->z_end = false;
            }
            s->zs.next_out = (Bytef *)s->buf.data + s->buf.len;
            s->zs.avail_out = (uInt)(s->buf.cap - s->buf.len);
            int zr = inflate(&s->zs, Z_NO_FLUSH);
            s->buf.len = s->buf.cap - s->zs.avail_out;
            if (zr == Z_STREAM_END) {
                /* Another member may follow (concatenated gzip files). */
                inflateReset(&s->zs);
                s->z_end = s->zs.avail_in == 0;
            } else if (zr != Z_OK && zr != Z_BUF_ERROR) {
                sw_follow_ev_t *ev = ev_add(f, SW_FOLLOW_ERROR, s->path);
                snprintf(ev->detail, sizeof(ev->detail), "gzip data at byte %" PRIu64 ": %s",
                         s->zin_total - s->zs.avail_in, s->zs.msg ? s->zs.msg : "corrupt");
                return -1;
            }
            if (s->buf.len == s->buf.cap) break;
        }
        buf_skip(s);
    }
    uint64_t have = s->buf_off + s->buf.len;
    if (have > s->size) s->size = have;
    return (ssize_t)(s->buf.len - before);
}

/* A complete line (or the final unterminated one) at s->pos, if any. */
static bool seg_line(sw_follow_t *f, seg_t *s, sw_follow_line_t *line)
{
    for (;;) {
        size_t avail = s->buf.len - s->pos;
        const char *p = s->buf.data + s->pos;
        const char *nl = avail ? memchr(p, '\n', avail) : NULL;
        size_t take = nl ? (size_t)(nl - p) + 1 : 0;
        if (!nl && s->final && avail > 0 && !s->too_long) take = avail;
        if (!take) {
            if (!s->too_long && avail >= f->max_line) {
                /* Over-long: drop what is buffered, keep dropping to the newline. */
                s->too_long = true;
                s->pos = s->buf.len;
                continue;
            }
            if (s->too_long && avail > 0) s->pos = s->buf.len;
            return false;
        }
        s->pos += take;
        uint64_t end = s->buf_off + s->pos;
        s->read_off = end;
        s->lineno++;
        memset(line, 0, sizeof(*line));
        line->seg = s->id;
        line->path = s->path;
        line->end = end;
        line->lineno = s->lineno;
        if (s->too_long) {
            s->too_long = false;
            line->too_long = true;
            return true;
        }
        line->data = p;
        line->len = nl ? take - 1 : take;
        if (line->len > f->max_line) {
            line->too_long = true;
            line->data = NULL;
            line->len = 0;
        }
        return true;
    }
}

bool sw_follow_next(sw_follow_t *f, sw_follow_line_t *line)
{
    for (size_t i = 0; i < f->nsegs; i++) {
        seg_t *s = f->segs[i];
        if (s->dry_round == f->round) continue;
        if (seg_line(f, s, line)) return true;
        ssize_t got = s->fd >= 0 ? seg_fill(f, s) : 0;
        if (got < 0) {
            /* Unreadable from here on: the rest is lost. */
            seg_close(s);
            s->released = true;
            lose(f, s, s->read_off, s->size > s->read_off ? s->size : s->read_off + 1,
                 "unreadable");
            s->size = s->read_off;
        }
        if (got > 0) {
            s->dry = false;
            s->dry_ms = 0;
            if (seg_line(f, s, line)) return true;
            i--; /* an over-long line may need more reads */
            continue;
        }
        if (s->gz && s->z_end && s->fd >= 0 && !s->final) {
            /* A complete gzip segment: its last line may lack a newline.
             * The file stays open while in view (its inode is its name). */
            s->final = true;
            if (seg_line(f, s, line)) return true;
        }
        s->dry = true;
        s->dry_round = f->round;
    }
    f->round++;
    return false;
}

void sw_follow_acked(sw_follow_t *f, uint64_t seg, uint64_t end, uint64_t lineno)
{
    for (size_t i = 0; i < f->nsegs; i++) {
        seg_t *s = f->segs[i];
        if (s->id != seg) continue;
        if (end > s->acked_off) {
            s->acked_off = end;
            s->acked_line = lineno;
        }
        return;
    }
}

/* ---- identity ---------------------------------------------------------- */

/* Fingerprint of a file's first line (at most SW_FOLLOW_FP_BYTES decoded
 * bytes). @returns false when the file cannot be read or the first line is
 * not there yet. */
static bool file_fingerprint(const char *path, uint64_t *fp, bool *gz)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    unsigned char raw[64 * 1024];
    ssize_t n = pread(fd, raw, sizeof(raw), 0);
    close(fd);
    if (n <= 0) return false;
    unsigned char dec[SW_FOLLOW_FP_BYTES];
    size_t have = 0;
    *gz = n >= 2 && raw[0] == 0x1f && raw[1] == 0x8b;
    if (*gz) {
        z_stream zs;
        memset(&zs, 0, sizeof(zs));
        if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return false;
        zs.next_in = raw;
        zs.avail_in = (uInt)n;
        zs.next_out = dec;
        zs.avail_out = sizeof(dec);
        int zr = inflate(&zs, Z_SYNC_FLUSH);
        have = sizeof(dec) - zs.avail_out;
        inflateEnd(&zs);
        if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) return false;
    } else {
        have = (size_t)n < sizeof(dec) ? (size_t)n : sizeof(dec);
        memcpy(dec, raw, have);
    }
    const unsigned char *nl = memchr(dec, '\n', have);
    if (!nl && have < sizeof(dec)) return false;
    size_t len = nl ? (size_t)(nl - dec) + 1 : have;
    *fp = sw_hash_bytes(dec, len, FP_SEED);
    return true;
}

/* ---- scanning ---------------------------------------------------------- */

typedef struct cand_s {
    char *path;
    uint64_t dev, ino;
    int64_t mtime_ns;
    uint64_t size;
    seg_t *seg; /* matched */
} cand_t;

static int cand_cmp(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->mtime_ns != y->mtime_ns) return x->mtime_ns < y->mtime_ns ? -1 : 1;
    return strcmp(x->path, y->path);
}

static size_t list_files(sw_follow_t *f, cand_t **out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    DIR *d = opendir(f->dir);
    if (!d) return 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' && (!f->name || strcmp(de->d_name, f->name) != 0)) continue;
        if (f->name ? strcmp(de->d_name, f->name) != 0 : fnmatch(f->pattern, de->d_name, 0) != 0)
            continue;
        size_t plen = strlen(f->dir) + strlen(de->d_name) + 2;
        char *path = sw_malloc(plen);
        snprintf(path, plen, "%s/%s", f->dir, de->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            free(path);
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            *out = sw_reallocarray(*out, cap, sizeof(**out));
        }
        cand_t *c = &(*out)[n++];
        c->path = path;
        c->dev = (uint64_t)sb.st_dev;
        c->ino = (uint64_t)sb.st_ino;
        c->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
        c->size = (uint64_t)sb.st_size;
        c->seg = NULL;
    }
    closedir(d);
    if (n > 1) qsort(*out, n, sizeof(**out), cand_cmp);
    return n;
}

static seg_t *seg_by_fp(sw_follow_t *f, uint64_t fp, uint64_t dev, uint64_t ino)
{
    seg_t *any = NULL;
    for (size_t i = 0; i < f->nsegs; i++) {
        seg_t *s = f->segs[i];
        if (s->fp != fp || s->released) continue;
        if (s->dev == dev && s->ino == ino) return s;
        if (!any) any = s;
    }
    return any;
}

/* The carrier of @p s left the view (renamed out, deleted, truncated away). */
static void seg_gone(sw_follow_t *f, seg_t *s, int64_t now_ms)
{
    if (s->released) return;
    if (s->alias) {
        /* Another file in view carries it (a copy, its gzip): read on there. */
        char *alias = s->alias;
        s->alias = NULL;
        bool gz = false;
        uint64_t fp;
        if (file_fingerprint(alias, &fp, &gz) && fp == s->fp) {
            /* A deleted carrier still open holds bytes the alias has too. */
            sw_follow_ev_t *ev = ev_add(f, SW_FOLLOW_MOVED, alias);
            ev->from = s->read_off;
            f->st.rotations++;
            if (seg_open(f, s, alias, gz)) {
                s->in_view = true;
                s->gone_ms = 0;
                s->restored = false;
                free(alias);
                return;
            }
        }
        free(alias);
    }
    if (s->gone_ms == 0) s->gone_ms = now_ms;
    if (s->fd < 0) {
        /* Nothing open to read from: what we knew to exist beyond the read
         * offset is lost (pruned while we were stopped, or truncated). */
        s->released = true;
        if (s->size > s->read_off) {
            lose(f, s, s->read_off, s->size,
                 s->restored ? "gone while the shipper was stopped (lines sent after the last "
                               "checkpoint may have been delivered)"
                             : "gone before it was read");
            s->size = s->read_off;
        }
        return;
    }
    struct stat sb;
    if (fstat(s->fd, &sb) == 0) {
        s->deleted = sb.st_nlink == 0;
        if (!s->gz && (uint64_t)sb.st_size > s->size) s->size = (uint64_t)sb.st_size;
    }
    bool at_end = s->buf_off + s->buf.len >= s->size;
    bool waited = now_ms - s->gone_ms >= f->rotate_wait_ms;
    if (s->gz) at_end = s->z_end;
    if (at_end && s->dry_ms && (s->deleted || now_ms - s->dry_ms >= f->rotate_wait_ms)) {
        /* Read to its end: an unterminated last line goes out too. */
        s->final = true;
        seg_close_fd(s);
        s->released = true;
        sw_follow_ev_t *ev = ev_add(f, SW_FOLLOW_DONE, s->path);
        ev->from = s->size;
        return;
    }
    if (s->deleted && waited) {
        /* Deleted and still not read to its end after rotate_wait: keeping
         * it open would hold its disk space without bound. */
        uint64_t from = s->read_off;
        seg_close(s);
        s->released = true;
        lose(f, s, from, s->size > from ? s->size : from, "deleted before it was read");
        s->size = s->read_off;
    }
}

void sw_follow_scan(sw_follow_t *f, int64_t now_ms)
{
    cand_t *c = NULL;
    size_t n = list_files(f, &c);
    for (size_t i = 0; i < f->nsegs; i++) {
        free(f->segs[i]->alias);
        f->segs[i]->alias = NULL;
    }
    bool *seen = sw_calloc(f->nsegs + 1, sizeof(*seen));
    /* Open carriers by device/inode. */
    for (size_t j = 0; j < n; j++) {
        for (size_t i = 0; i < f->nsegs; i++) {
            seg_t *s = f->segs[i];
            if (s->fd < 0 || s->dev != c[j].dev || s->ino != c[j].ino || seen[i]) continue;
            seen[i] = true;
            c[j].seg = s;
            if (strcmp(s->path, c[j].path) != 0) {
                sw_follow_ev_t *ev = ev_add(f, SW_FOLLOW_MOVED, c[j].path);
                snprintf(ev->detail, sizeof(ev->detail), "was %s", s->path);
                ev->from = s->read_off;
                f->st.rotations++;
                seg_set_path(s, c[j].path);
            }
            if (!s->gz && c[j].size < s->buf_off + s->buf.len) {
                /* Shrunk in place: truncated. Its old content is gone from
                 * this file; a copy in view (copytruncate) carries it on. */
                sw_follow_ev_t *ev = ev_add(f, SW_FOLLOW_TRUNCATED, s->path);
                snprintf(ev->detail, sizeof(ev->detail),
                         "size %" PRIu64 " below the %" PRIu64 " bytes read", c[j].size,
                         s->buf_off + s->buf.len);
                f->st.truncations++;
                seg_close(s);
                s->truncated = true;
                seen[i] = false;
                c[j].seg = NULL;
                s->gone_ms = now_ms;
                continue;
            }
            if (!s->gz && c[j].size > s->size) s->size = c[j].size;
            s->disk_size = c[j].size;
            break;
        }
    }
    /* The others by fingerprint, oldest first. */
    for (size_t j = 0; j < n; j++) {
        if (c[j].seg) continue;
        uint64_t fp;
        bool gz;
        if (!file_fingerprint(c[j].path, &fp, &gz)) continue; /* not identifiable yet */
        seg_t *s = seg_by_fp(f, fp, c[j].dev, c[j].ino);
        size_t si = 0;
        while (s && f->segs[si] != s) si++;
        if (s && s->truncated && s->dev == c[j].dev && s->ino == c[j].ino) s = NULL;
        if (s && (seen[si] || (s->fd >= 0 && !s->restored))) {
            /* Its carrier is elsewhere: an alias to switch to if that goes. */
            if (!s->alias) s->alias = sw_strdup(c[j].path);
            continue;
        }
        if (s) {
            bool moved = s->dev != c[j].dev || s->ino != c[j].ino;
            if (!seg_open(f, s, c[j].path, gz)) continue;
            sw_follow_ev_t *ev = ev_add(f, s->restored ? SW_FOLLOW_RESUMED : SW_FOLLOW_MOVED,
                                        c[j].path);
            ev->from = s->read_off;
            if (moved && s->restored) snprintf(ev->detail, sizeof(ev->detail), "another file");
            if (!s->restored) f->st.rotations++;
            s->restored = false;
            s->released = false;
            s->gone_ms = 0;
        } else {
            s = seg_add(f, fp, c[j].path);
            if (!seg_open(f, s, c[j].path, gz)) {
                s->released = true;
                continue;
            }
            ev_add(f, SW_FOLLOW_NEW, c[j].path);
            if (f->is_dir) seq_seen(f, c[j].path, true);
            seen = sw_reallocarray(seen, f->nsegs + 1, sizeof(*seen));
            seen[f->nsegs - 1] = false;
        }
        for (si = 0; f->segs[si] != s; si++) {
        }
        seen[si] = true;
        s->disk_size = c[j].size;
        if (!gz && c[j].size > s->size) s->size = c[j].size;
    }
    for (size_t i = 0; i < f->nsegs; i++) {
        seg_t *s = f->segs[i];
        s->in_view = seen[i];
        if (seen[i]) {
            s->gone_ms = 0;
            continue;
        }
        if (s->dry && s->dry_ms == 0) s->dry_ms = now_ms;
        seg_gone(f, s, now_ms);
    }
    /* Forget segments out of view, released and fully acknowledged. */
    size_t k = 0;
    for (size_t i = 0; i < f->nsegs; i++) {
        seg_t *s = f->segs[i];
        bool drained = s->pos == s->buf.len;
        if (!s->in_view && s->released && s->acked_off >= s->read_off && drained) {
            seg_free(s);
            continue;
        }
        f->segs[k++] = s;
    }
    f->nsegs = k;
    f->scanned = true;
    for (size_t j = 0; j < n; j++) free(c[j].path);
    free(c);
    free(seen);
}

/* ---- positions --------------------------------------------------------- */

void sw_follow_restore(sw_follow_t *f, const sw_ship_pos_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        seg_t *s = seg_add(f, v[i].fp, v[i].path);
        s->dev = v[i].dev;
        s->ino = v[i].ino;
        s->read_off = s->acked_off = v[i].offset;
        s->lineno = s->acked_line = v[i].lineno;
        s->size = v[i].size > v[i].offset ? v[i].size : v[i].offset;
        s->restored = true;
        if (f->is_dir) seq_seen(f, v[i].path, false);
    }
}

size_t sw_follow_positions(const sw_follow_t *f, sw_ship_pos_t **out)
{
    *out = f->nsegs ? sw_calloc(f->nsegs, sizeof(**out)) : NULL;
    size_t k = 0;
    for (size_t i = 0; i < f->nsegs; i++) {
        const seg_t *s = f->segs[i];
        /* A released segment fully acknowledged has nothing left to say. */
        if (s->released && s->acked_off >= s->read_off && !s->in_view) continue;
        sw_ship_pos_t *p = &(*out)[k++];
        p->fp = s->fp;
        p->dev = s->dev;
        p->ino = s->ino;
        p->offset = s->acked_off;
        p->lineno = s->acked_line;
        p->size = s->size > s->acked_off ? s->size : s->acked_off;
        if (s->released && p->size > s->read_off)
            p->size = s->read_off > p->offset ? s->read_off : p->offset;
        snprintf(p->path, sizeof(p->path), "%s", s->path);
    }
    return k;
}

const char *sw_follow_seg_path(const sw_follow_t *f, uint64_t seg)
{
    for (size_t i = 0; i < f->nsegs; i++)
        if (f->segs[i]->id == seg) return f->segs[i]->path;
    return NULL;
}

bool sw_follow_caught_up(const sw_follow_t *f)
{
    for (size_t i = 0; i < f->nsegs; i++) {
        const seg_t *s = f->segs[i];
        if (s->acked_off < s->read_off) return false;
        if (s->pos < s->buf.len && !s->too_long) {
            /* A line still to hand out; an unterminated one in a file in
             * view is not complete yet, and waits for its newline. */
            if (s->final || memchr(s->buf.data + s->pos, '\n', s->buf.len - s->pos)) return false;
        }
        if (!s->gz && s->fd >= 0 && s->size > s->read_off) {
            /* Bytes on disk beyond the last line: an unterminated line only? */
            if (s->buf_off + s->buf.len < s->size) return false;
        }
        if (s->gz && s->fd >= 0 && !s->z_end) return false;
    }
    return true;
}

void sw_follow_stats(const sw_follow_t *f, sw_follow_stats_t *st)
{
    *st = f->st;
    st->segments = 0;
    st->lag_bytes = 0;
    for (size_t i = 0; i < f->nsegs; i++) {
        const seg_t *s = f->segs[i];
        if (!s->released) st->segments++;
        if (s->gz) {
            if (s->fd >= 0 && s->disk_size > s->zin_total)
                st->lag_bytes += s->disk_size - s->zin_total;
        } else if (s->size > s->read_off) {
            st->lag_bytes += s->size - s->read_off;
        }
    }
}

/* ---- lifecycle --------------------------------------------------------- */

sw_follow_t *sw_follow_new(const sw_follow_opts_t *o, char *errstr, size_t errstr_size)
{
    if (!o->path || !*o->path) {
        snprintf(errstr, errstr_size, "no path to follow");
        return NULL;
    }
    sw_follow_t *f = sw_calloc(1, sizeof(*f));
    f->rotate_wait_ms = o->rotate_wait_ms;
    f->max_line = o->max_line_bytes ? o->max_line_bytes : 1024 * 1024;
    f->round = 1;
    struct stat sb;
    if (stat(o->path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        f->is_dir = true;
        f->dir = sw_strdup(o->path);
        size_t l = strlen(f->dir);
        while (l > 1 && f->dir[l - 1] == '/') f->dir[--l] = '\0';
        f->pattern = sw_strdup(o->pattern ? o->pattern : "*.jsonl*");
        return f;
    }
    char *a = sw_strdup(o->path), *b = sw_strdup(o->path);
    f->dir = sw_strdup(dirname(a));
    f->name = sw_strdup(basename(b));
    free(a);
    free(b);
    if (stat(f->dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        snprintf(errstr, errstr_size, "%s: directory %s: %s", o->path, f->dir,
                 errno ? strerror(errno) : "not a directory");
        sw_follow_destroy(f);
        return NULL;
    }
    return f;
}

bool sw_follow_is_dir(const sw_follow_t *f)
{
    return f->is_dir;
}

void sw_follow_destroy(sw_follow_t *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->nsegs; i++) seg_free(f->segs[i]);
    free(f->segs);
    free(f->evs);
    free(f->dir);
    free(f->pattern);
    free(f->name);
    for (size_t i = 0; i < f->nseq; i++) {
        free(f->seq[i].prefix);
        free(f->seq[i].suffix);
    }
    free(f->seq);
    free(f);
}
