/*
 * The daemon's snapshot codec (src/daemon/sw_snapcodec.c), without Kafka:
 * commit metadata round-trips at every range limit; another writer's
 * metadata is "none"; ours cut short (but inside its last field, which
 * text cannot show), with a field too many, a negative
 * offset, zero chunks, an unknown version or out of range is refused with
 * the field named; the envelope round-trips and a corrupt or cut one is
 * refused (every prefix, every flipped byte). Runs in milliseconds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <zlib.h>

#include "sw_snapcodec.h"
#include "sw_testlib.h"

static void roundtrip(sw_snapref_t in)
{
    char md[SW_SNAPMETA_MAX], err[256];
    size_t n = sw_snapmeta_encode(&in, md, sizeof(md));
    SW_ASSERT(n > 0 && n < SW_SNAPMETA_MAX, "encoded %zu bytes", n);
    sw_snapref_t out;
    sw_err_t rc = sw_snapmeta_parse(md, n, &out, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "\"%s\": %s", md, err);
    SW_ASSERT_I64(out.first, in.first);
    SW_ASSERT_I64(out.chunks, in.chunks);
    SW_ASSERT(out.id == in.id, "id %llu != %llu", (unsigned long long)out.id,
              (unsigned long long)in.id);
    SW_ASSERT_I64(out.x, in.x);
}

static void test_meta_roundtrip(void **state)
{
    (void)state;
    roundtrip((sw_snapref_t){0, 1, 0, 0});
    roundtrip((sw_snapref_t){18233, 3, 0x1234567890abcdefull, 99});
    roundtrip((sw_snapref_t){INT64_MAX, UINT32_MAX, UINT64_MAX, INT64_MAX});
    char md[SW_SNAPMETA_MAX];
    sw_snapref_t ref = {7, 2, 42, 1000};
    sw_snapmeta_encode(&ref, md, sizeof(md));
    SW_ASSERT_STREQ(md, "sw1:7:2:42:1000"); /* what restores of earlier versions read */
}

static void refused(const char *md, sw_err_t want, const char *says)
{
    sw_snapref_t ref;
    char err[256] = "";
    sw_err_t rc = sw_snapmeta_parse(md, strlen(md), &ref, err, sizeof(err));
    SW_ASSERT(rc == want, "\"%s\": rc %d, want %d (%s)", md, rc, want, err);
    SW_ASSERT_CONTAINS(err, says);
}

static void test_meta_refused(void **state)
{
    (void)state;
    sw_snapref_t ref;
    char err[256];
    SW_ASSERT_I64(sw_snapmeta_parse(NULL, 0, &ref, err, sizeof(err)), SW_ERR_NOT_FOUND);
    refused("", SW_ERR_NOT_FOUND, "no snapshot");
    refused("someone else's", SW_ERR_NOT_FOUND, "no snapshot");
    refused("sw2:1:1:1:1", SW_ERR_PARSE, "unknown snapshot reference version");
    refused("swx", SW_ERR_PARSE, "version");
    refused("sw1:", SW_ERR_PARSE, "field 1 (first offset)");
    refused("sw1:-1:1:5:10", SW_ERR_PARSE, "field 1 (first offset) is negative");
    refused("sw1:3:1:5:-10", SW_ERR_PARSE, "field 4 (offset) is negative");
    refused("sw1:3:0:5:10", SW_ERR_PARSE, "field 2 (chunks) is 0");
    refused("sw1:3:-1:5:10", SW_ERR_PARSE, "field 2 (chunks) is not a number");
    refused("sw1:3:4294967296:5:10", SW_ERR_PARSE, "field 2 (chunks) is not a number in range");
    refused("sw1:9223372036854775808:1:5:10", SW_ERR_PARSE, "not a number in range");
    refused("sw1:3:1:18446744073709551616:10", SW_ERR_PARSE, "field 3 (id)");
    refused("sw1:3:1:5:10:11", SW_ERR_PARSE, "followed by more");
    refused("sw1:3:1:5:10 ", SW_ERR_PARSE, "field 4");
    refused("sw1: 3:1:5:10", SW_ERR_PARSE, "field 1");
    refused("sw1:+3:1:5:10", SW_ERR_PARSE, "field 1");
    /* Every truncation of a good one is refused, except a cut inside the
     * last field, which the text cannot show: it names the same chunks
     * (first, count, id) and restore takes X from the envelope. */
    const char *good = "sw1:18233:3:1311768467294899695:18300";
    size_t last = strlen(good) - strlen("18300");
    for (size_t n = 0; n < strlen(good); n++) {
        sw_err_t rc = sw_snapmeta_parse(good, n, &ref, err, sizeof(err));
        if (n > last) {
            SW_ASSERT(rc == SW_OK && ref.first == 18233 && ref.chunks == 3 &&
                          ref.id == 1311768467294899695ull,
                      "\"%.*s\": rc %d", (int)n, good, rc);
            continue;
        }
        SW_ASSERT(rc != SW_OK, "\"%.*s\" parsed", (int)n, good);
    }
    SW_ASSERT_I64(sw_snapmeta_parse(good, strlen(good), &ref, err, sizeof(err)), SW_OK);
    /* A NUL inside, and metadata longer than we ever write. */
    SW_ASSERT_I64(sw_snapmeta_parse("sw1:1:1\0:1:1", 12, &ref, err, sizeof(err)), SW_ERR_PARSE);
    char longmd[300];
    memset(longmd, '1', sizeof(longmd));
    memcpy(longmd, "sw1:", 4);
    SW_ASSERT_I64(sw_snapmeta_parse(longmd, sizeof(longmd), &ref, err, sizeof(err)), SW_ERR_PARSE);
}

static void test_envelope(void **state)
{
    (void)state;
    sw_snappos_t pos[3] = {{0, 0, 17}, {1, 5, -1}, {2, 31, INT64_MAX}};
    int64_t sup[4] = {8 * 100 + 0, 8 * 101 + 3, 8 * 7 + 6, 0};
    const char engine[] = "engine bytes \x00\x01\x02 any";
    sw_snapenv_t in = {.x = 120,
                       .y = -5,
                       .pos = pos,
                       .npos = 3,
                       .sup = sup,
                       .nsup = 4,
                       .engine = {engine, sizeof(engine)}};
    sw_buf_t z, raw;
    sw_buf_init(&z);
    sw_buf_init(&raw);
    SW_ASSERT_TRUE(sw_snapenv_pack(&in, &z));
    sw_snapenv_t out;
    char err[256];
    SW_ASSERT(sw_snapenv_unpack(z.data, z.len, &raw, &out, err, sizeof(err)) == SW_OK, "%s", err);
    SW_ASSERT_I64(out.x, 120);
    SW_ASSERT_I64(out.y, -5);
    SW_ASSERT_I64(out.npos, 3);
    for (int i = 0; i < 3; i++) {
        SW_ASSERT_I64(out.pos[i].topic, pos[i].topic);
        SW_ASSERT_I64(out.pos[i].partition, pos[i].partition);
        SW_ASSERT_I64(out.pos[i].offset, pos[i].offset);
    }
    SW_ASSERT_I64(out.nsup, 4);
    for (int i = 0; i < 4; i++) SW_ASSERT_I64(out.sup[i], sup[i]);
    SW_ASSERT(out.engine.len == sizeof(engine) && !memcmp(out.engine.ptr, engine, sizeof(engine)),
              "engine bytes differ (%zu)", out.engine.len);
    sw_snapenv_clear(&out);
    /* Cut short anywhere, or one byte flipped anywhere: refused or
     * parsed, never a crash (ASan/UBSan check the reads). */
    for (size_t n = 0; n < z.len; n++) {
        sw_err_t rc = sw_snapenv_unpack(z.data, n, &raw, &out, err, sizeof(err));
        SW_ASSERT(rc == SW_ERR_PARSE, "%zu of %zu bytes parsed", n, z.len);
        SW_ASSERT_I64(out.npos, 0);
    }
    for (size_t i = 0; i < z.len; i++) {
        z.data[i] ^= 0x5a;
        if (sw_snapenv_unpack(z.data, z.len, &raw, &out, err, sizeof(err)) == SW_OK)
            sw_snapenv_clear(&out);
        z.data[i] ^= 0x5a;
    }
    /* Not compressed by us, or no envelope inside. */
    SW_ASSERT_I64(sw_snapenv_unpack("SWE1", 4, &raw, &out, err, sizeof(err)), SW_ERR_PARSE);
    SW_ASSERT_CONTAINS(err, "corrupt");
    unsigned char zz[64];
    uLongf zl = sizeof(zz);
    SW_ASSERT_I64(compress2(zz, &zl, (const Bytef *)"XXXX and more", 13, 1), Z_OK);
    SW_ASSERT_I64(sw_snapenv_unpack(zz, zl, &raw, &out, err, sizeof(err)), SW_ERR_PARSE);
    SW_ASSERT_CONTAINS(err, "no envelope");
    sw_buf_clear(&z);
    sw_buf_clear(&raw);
}

/* repartition=auto's envelope (SWE2): the repartition side after the
 * engine bytes; the same writer without it still writes SWE1. */
static void test_envelope_two(void **state)
{
    (void)state;
    sw_snappos_t pos[1] = {{2, 3, 40}};
    int64_t sup[1] = {8 * 9 + 1}, rsup[3] = {8 * 55 + 0, 8 * 56 + 2, 8 * 70 + 6};
    const char engine[] = "two-source engine";
    sw_snapenv_t in = {.x = 300,
                       .y = 250,
                       .pos = pos,
                       .npos = 1,
                       .sup = sup,
                       .nsup = 1,
                       .engine = {engine, sizeof(engine)},
                       .two = true,
                       .xr = 77,
                       .yr = 60,
                       .rsup = rsup,
                       .nrsup = 3};
    sw_buf_t z, raw;
    sw_buf_init(&z);
    sw_buf_init(&raw);
    SW_ASSERT_TRUE(sw_snapenv_pack(&in, &z));
    sw_snapenv_t out;
    char err[256];
    SW_ASSERT(sw_snapenv_unpack(z.data, z.len, &raw, &out, err, sizeof(err)) == SW_OK, "%s", err);
    SW_ASSERT(raw.len > 4 && !memcmp(raw.data, "SWE2", 4), "magic %.4s", raw.data);
    SW_ASSERT_TRUE(out.two);
    SW_ASSERT_I64(out.x, 300);
    SW_ASSERT_I64(out.y, 250);
    SW_ASSERT_I64(out.xr, 77);
    SW_ASSERT_I64(out.yr, 60);
    SW_ASSERT_I64(out.nsup, 1);
    SW_ASSERT_I64(out.nrsup, 3);
    for (int i = 0; i < 3; i++) SW_ASSERT_I64(out.rsup[i], rsup[i]);
    SW_ASSERT(out.engine.len == sizeof(engine) && !memcmp(out.engine.ptr, engine, sizeof(engine)),
              "engine bytes differ");
    sw_snapenv_clear(&out);
    for (size_t n = 0; n < z.len; n++) /* cut short: refused, never a crash */
        SW_ASSERT_I64(sw_snapenv_unpack(z.data, n, &raw, &out, err, sizeof(err)), SW_ERR_PARSE);
    /* Without the repartition side: SWE1, read back as one source. */
    in.two = false;
    z.len = 0;
    SW_ASSERT_TRUE(sw_snapenv_pack(&in, &z));
    SW_ASSERT(sw_snapenv_unpack(z.data, z.len, &raw, &out, err, sizeof(err)) == SW_OK, "%s", err);
    SW_ASSERT(!memcmp(raw.data, "SWE1", 4) && !out.two && out.nrsup == 0, "one source expected");
    sw_snapenv_clear(&out);
    sw_buf_clear(&z);
    sw_buf_clear(&raw);
}

/* The engine's extension (sw_detect_snapshot_compat) after every other
 * part, SWE1 and SWE2 alike: the bytes before it are those of the
 * envelope without it, which is all an older release (v0.3.0) reads. */
static void test_envelope_ext(void **state)
{
    (void)state;
    int64_t sup[2] = {8 * 9 + 1, 8 * 12 + 0}, rsup[1] = {8 * 55 + 2};
    const char engine[] = "SWS4 body", ext[] = "SWX6 rest";
    for (int two = 0; two < 2; two++) {
        sw_snapenv_t in = {.x = 300,
                           .y = 250,
                           .sup = sup,
                           .nsup = 2,
                           .engine = {engine, sizeof(engine)},
                           .two = two,
                           .xr = 77,
                           .yr = 60,
                           .rsup = rsup,
                           .nrsup = 1};
        sw_buf_t z, raw, z0, raw0;
        sw_buf_init(&z);
        sw_buf_init(&raw);
        sw_buf_init(&z0);
        sw_buf_init(&raw0);
        sw_snapenv_t out;
        char err[256];
        SW_ASSERT_TRUE(sw_snapenv_pack(&in, &z0));
        SW_ASSERT(sw_snapenv_unpack(z0.data, z0.len, &raw0, &out, err, sizeof(err)) == SW_OK, "%s",
                  err);
        SW_ASSERT_I64(out.ext.len, 0);
        sw_snapenv_clear(&out);
        in.ext = (sw_str_t){ext, sizeof(ext)};
        SW_ASSERT_TRUE(sw_snapenv_pack(&in, &z));
        SW_ASSERT(sw_snapenv_unpack(z.data, z.len, &raw, &out, err, sizeof(err)) == SW_OK, "%s",
                  err);
        SW_ASSERT(out.ext.len == sizeof(ext) && !memcmp(out.ext.ptr, ext, sizeof(ext)),
                  "extension bytes differ");
        SW_ASSERT(out.engine.len == sizeof(engine) && out.two == (bool)two && out.nsup == 2,
                  "the other parts as without it");
        SW_ASSERT(raw.len > raw0.len && !memcmp(raw.data, raw0.data, raw0.len),
                  "the parts before the extension are the envelope without it");
        sw_snapenv_clear(&out);
        sw_buf_clear(&z);
        sw_buf_clear(&raw);
        sw_buf_clear(&z0);
        sw_buf_clear(&raw0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_meta_roundtrip), cmocka_unit_test(test_meta_refused),
        cmocka_unit_test(test_envelope),       cmocka_unit_test(test_envelope_two),
        cmocka_unit_test(test_envelope_ext),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
