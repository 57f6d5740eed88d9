/*
 * libFuzzer target for the line reader (sw_input): the first byte picks a
 * mode, the rest is the payload, written to an in-memory file and read
 * back with sw_input_next() until EOF or an error:
 *   (mode & 7) 0, 6, 7 raw: the payload as is (plain text, or gzip bytes);
 *   1 gzip: the payload gzip-compressed by zlib, one member;
 *   2 members: compressed as several members (split points from the data);
 *   3 damaged: compressed, then truncated or with one bit flipped;
 *   4, 5 with bit 3 set, repeated: the payload repeated to about 1 MiB
 *     (the initial buffer) or 64 MiB (SW_INPUT_MAX_LINE) before
 *     compression; without bit 3, as 1.
 * The lines read must be exactly what an independent reading (zlib's
 * inflate of all members, then split at '\n') gives; a stream zlib cannot
 * read completely must end in SW_INPUT_ERROR. Deterministic; writes
 * nothing to stdout. Mode 5 runs only with SW_FUZZ_INPUT_HUGE=1 (it takes
 * about a second per input; scripts/fuzz.sh uses it on a few seeds),
 * otherwise it is read as mode 4.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_common.h"
#include "sw_input.h"

/* Largest reference decoding compared line by line. */
#define REF_MAX ((size_t)SW_INPUT_MAX_LINE + 4u * 1024u * 1024u)

typedef struct bytes_s {
    uint8_t *p;
    size_t len, cap;
} bytes_t;

static void bytes_put(bytes_t *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p) abort();
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
}

/* Append one gzip member of @p times copies of [p, p+n). Copies go to
 * zlib in blocks of about 64 KiB, so that repetition is cheap. */
static void gzip_member(bytes_t *out, const uint8_t *p, size_t n, size_t times)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) abort();
    size_t per = n && n < 65536 ? 65536 / n : 1; /* copies per block */
    if (per > times) per = times ? times : 1;
    bytes_t block = {NULL, 0, 0};
    for (size_t i = 0; i < per; i++) bytes_put(&block, p, n);
    uint8_t buf[16384];
    size_t left = times ? times : 1;
    for (;;) {
        size_t k = left < per ? left : per;
        left -= k;
        zs.next_in = block.p;
        zs.avail_in = (uInt)(k * n);
        int flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
        int rc;
        do {
            zs.next_out = buf;
            zs.avail_out = sizeof(buf);
            rc = deflate(&zs, flush);
            bytes_put(out, buf, sizeof(buf) - zs.avail_out);
        } while (zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
        if (left == 0) break;
    }
    deflateEnd(&zs);
    free(block.p);
}

/* Reference reading: inflate every gzip member (what sw_input.h promises).
 * @returns 1 when complete, 0 when zlib finds the stream truncated or
 * corrupt or followed by something that is not a member, -1 when the
 * decoded size passed REF_MAX (no comparison then). */
static int ref_gunzip(const uint8_t *in, size_t n, bytes_t *out)
{
    size_t off = 0;
    uint8_t buf[65536];
    for (;;) {
        if (off == n) return 1;
        if (n - off < 2 || in[off] != 0x1f || in[off + 1] != 0x8b) return 0;
        z_stream zs;
        memset(&zs, 0, sizeof(zs));
        if (inflateInit2(&zs, 15 + 16) != Z_OK) abort();
        zs.next_in = (Bytef *)(in + off);
        zs.avail_in = (uInt)(n - off);
        int rc;
        do {
            zs.next_out = buf;
            zs.avail_out = sizeof(buf);
            rc = inflate(&zs, Z_NO_FLUSH);
            bytes_put(out, buf, sizeof(buf) - zs.avail_out);
            if (out->len > REF_MAX) {
                inflateEnd(&zs);
                return -1;
            }
        } while (rc == Z_OK);
        size_t used = (size_t)(zs.next_in - (in + off));
        inflateEnd(&zs);
        if (rc != Z_STREAM_END) return 0;
        off += used;
    }
}

/* Read everything with sw_input and compare with the reference lines. */
static void read_back(const char *path, const bytes_t *ref, int ref_ok, bool gzip)
{
    char err[512];
    sw_input_t *in = sw_input_open(path, err, sizeof(err));
    FUZZ_CHECK(in != NULL, "sw_input_open: %s", err);
    FUZZ_CHECK(sw_input_is_gzip(in) == gzip, "gzip detection says %d", (int)sw_input_is_gzip(in));
    size_t pos = 0; /* reference offset of the next line */
    uint64_t lines = 0;
    for (;;) {
        const char *line = NULL;
        size_t len = 0;
        err[0] = '\0';
        sw_input_res_t res = sw_input_next(in, &line, &len, err, sizeof(err));
        if (res == SW_INPUT_ERROR) {
            FUZZ_CHECK(err[0] != '\0', "SW_INPUT_ERROR without a message");
            FUZZ_CHECK(ref_ok != 1, "sw_input failed on a stream zlib reads: %s", err);
            /* What was handed out before the error is a prefix. */
            break;
        }
        if (res == SW_INPUT_EOF) {
            if (ref_ok == 1)
                FUZZ_CHECK(pos == ref->len, "EOF after %zu of %zu bytes", pos, ref->len);
            FUZZ_CHECK(ref_ok != 0, "sw_input reached EOF on a stream zlib rejects");
            /* EOF is sticky. */
            FUZZ_CHECK(sw_input_next(in, &line, &len, err, sizeof(err)) == SW_INPUT_EOF,
                       "EOF not sticky");
            break;
        }
        lines++;
        FUZZ_CHECK(sw_input_lineno(in) == lines, "lineno %llu, expected %llu",
                   (unsigned long long)sw_input_lineno(in), (unsigned long long)lines);
        if (ref_ok == -1) continue;
        /* The reference line at pos. */
        FUZZ_CHECK(pos < ref->len, "line %llu past the end of the data", (unsigned long long)lines);
        const uint8_t *nl = memchr(ref->p + pos, '\n', ref->len - pos);
        size_t rlen = nl ? (size_t)(nl - (ref->p + pos)) : ref->len - pos;
        if (res == SW_INPUT_TOOLONG) {
            FUZZ_CHECK(rlen > SW_INPUT_MAX_LINE, "line %llu of %zu bytes reported too long",
                       (unsigned long long)lines, rlen);
            FUZZ_CHECK(err[0] != '\0', "SW_INPUT_TOOLONG without a message");
        } else {
            FUZZ_CHECK(res == SW_INPUT_LINE, "sw_input_next returned %d", (int)res);
            FUZZ_CHECK(rlen <= SW_INPUT_MAX_LINE, "line of %zu bytes accepted", rlen);
            FUZZ_CHECK(len == rlen && (len == 0 || memcmp(line, ref->p + pos, len) == 0),
                       "line %llu differs (%zu bytes, expected %zu)", (unsigned long long)lines,
                       len, rlen);
        }
        pos += rlen + (nl ? 1 : 0);
    }
    sw_input_close(in);
}

static bool huge_lines;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    huge_lines = fuzz_env_flag("SW_FUZZ_INPUT_HUGE");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    uint8_t mode = data[0];
    const uint8_t *pl = data + 1;
    size_t n = size - 1;
    bytes_t file = {NULL, 0, 0};
    switch (mode & 7) {
    case 1: gzip_member(&file, pl, n, 1); break;
    case 2: {
        /* Split points: the first payload byte says how many members. */
        size_t k = n ? pl[0] % 4 + 1 : 1, off = 0;
        for (size_t i = 0; i < k; i++) {
            size_t part = i + 1 == k ? n - off : (n - off) * (i + 1) / (k + 1);
            gzip_member(&file, pl + off, part, 1);
            off += part;
        }
        break;
    }
    case 3: {
        gzip_member(&file, pl, n, 1);
        size_t where = n >= 2 ? ((size_t)pl[0] | (size_t)pl[1] << 8) % file.len : 0;
        if (mode & 0x08) file.p[where] ^= (uint8_t)(1u << (mode >> 4 & 7));
        else file.len = where;
        break;
    }
    case 4:
    case 5: {
        /* Repeated payload (only with bit 3 set: slow, so rarer): lines
         * around the 1 MiB initial buffer (4) or SW_INPUT_MAX_LINE (5). */
        if (!(mode & 0x08)) {
            gzip_member(&file, pl, n, 1);
            break;
        }
        size_t want = (mode & 7) == 5 && huge_lines ? SW_INPUT_MAX_LINE : (1u << 20);
        want += (mode >> 4) & 1;
        if (n == 0) break;
        size_t times = want / n + ((mode >> 5) & 1);
        if (times == 0) times = 1;
        gzip_member(&file, pl, n, times);
        break;
    }
    default: bytes_put(&file, pl, n); break; /* raw */
    }

    /* The reference reading. */
    bytes_t ref = {NULL, 0, 0};
    bool gzip = file.len >= 2 && file.p[0] == 0x1f && file.p[1] == 0x8b;
    int ref_ok = 1;
    if (gzip) ref_ok = ref_gunzip(file.p, file.len, &ref);
    else bytes_put(&ref, file.p, file.len);

    char path[256];
    int fd = fuzz_file_open(file.p, file.len, path, sizeof(path));
    if (fd >= 0) {
        read_back(path, &ref, ref_ok, gzip);
        fuzz_file_close(fd, path);
    }
    free(ref.p);
    free(file.p);
    return 0;
}
