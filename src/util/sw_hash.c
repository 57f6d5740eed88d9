/*
 * SipHash-1-3 (one compression round, three finalization rounds), as
 * specified by Aumasson and Bernstein, written from the specification, and
 * the process key. The one function here that does I/O is
 * sw_hash_key_random (a getrandom system call).
 */
#include "sw_hash.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND           \
    do {                   \
        v0 += v1;          \
        v1 = ROTL(v1, 13); \
        v1 ^= v0;          \
        v0 = ROTL(v0, 32); \
        v2 += v3;          \
        v3 = ROTL(v3, 16); \
        v3 ^= v2;          \
        v0 += v3;          \
        v3 = ROTL(v3, 21); \
        v3 ^= v0;          \
        v2 += v1;          \
        v1 = ROTL(v1, 17); \
        v1 ^= v2;          \
        v2 = ROTL(v2, 32); \
    } while (0)

static uint64_t load_le64(const unsigned char *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

uint64_t sw_siphash13(const sw_hash_key_t *key, const void *p, size_t len)
{
    const unsigned char *in = p;
    uint64_t v0 = 0x736f6d6570736575ULL ^ key->k0;
    uint64_t v1 = 0x646f72616e646f6dULL ^ key->k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ key->k0;
    uint64_t v3 = 0x7465646279746573ULL ^ key->k1;
    size_t n = len & ~(size_t)7;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t m = load_le64(in + i);
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)len << 56;
    switch (len & 7) {
    case 7: b |= (uint64_t)in[n + 6] << 48; /* fall through */
    case 6: b |= (uint64_t)in[n + 5] << 40; /* fall through */
    case 5: b |= (uint64_t)in[n + 4] << 32; /* fall through */
    case 4: b |= (uint64_t)in[n + 3] << 24; /* fall through */
    case 3: b |= (uint64_t)in[n + 2] << 16; /* fall through */
    case 2: b |= (uint64_t)in[n + 1] << 8;  /* fall through */
    case 1: b |= (uint64_t)in[n]; break;
    default: break;
    }
    v3 ^= b;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

bool sw_hash_key_random(sw_hash_key_t *key)
{
    unsigned char buf[16];
    size_t got = 0;
    while (got < sizeof(buf)) {
        ssize_t n = getrandom(buf + got, sizeof(buf) - got, 0);
        if (n <= 0) break;
        got += (size_t)n;
    }
    if (got == sizeof(buf)) {
        key->k0 = load_le64(buf);
        key->k1 = load_le64(buf + 8);
        return true;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    key->k0 = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ts.tv_sec;
    key->k1 = (uint64_t)getpid() * 0xbf58476d1ce4e5b9ULL ^ (uint64_t)ts.tv_nsec;
    return false;
}
