/* The state snapshot codec of the daemon (see sw_snapcodec.h). */
#include "sw_snapcodec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sw_alloc.h"
#include "sw_varint.h"

#define ENV_MAGIC "SWE1"
#define ENV_MAGIC2 "SWE2" /* with the repartition side (repartition=auto) */
/* Inflating grows the buffer up to this (a snapshot bigger than any
 * engine budget is corrupt). */
#define ENV_MAX_BYTES ((size_t)4 << 30)

size_t sw_snapmeta_encode(const sw_snapref_t *ref, char *buf, size_t size)
{
    int n = snprintf(buf, size, "sw1:%" PRId64 ":%" PRIu32 ":%" PRIu64 ":%" PRId64, ref->first,
                     ref->chunks, ref->id, ref->x);
    return n < 0 ? 0 : (size_t)n;
}

/* One decimal field of @p s up to ':' or the end: digits only (a '-' where
 * @p neg allows), no spaces or '+'. @returns the end, or NULL. */
static const char *field(const char *s, bool neg, uint64_t max, uint64_t *v, bool *minus)
{
    *minus = false;
    if (neg && *s == '-') {
        *minus = true;
        s++;
    }
    if (*s < '0' || *s > '9') return NULL;
    uint64_t n = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (n > (max - d) / 10) return NULL;
        n = n * 10 + d;
    }
    *v = n;
    return s;
}

sw_err_t sw_snapmeta_parse(const void *md, size_t len, sw_snapref_t *ref, char *errstr,
                           size_t errstr_size)
{
    memset(ref, 0, sizeof(*ref));
    char s[SW_SNAPMETA_MAX + 1];
    if (!md || len == 0 || len < 2 || memcmp(md, "sw", 2) != 0) {
        snprintf(errstr, errstr_size, "no snapshot in the commit metadata");
        return SW_ERR_NOT_FOUND;
    }
    if (len > SW_SNAPMETA_MAX || memchr(md, '\0', len)) {
        snprintf(errstr, errstr_size, "commit metadata of %zu bytes is no snapshot reference", len);
        return SW_ERR_PARSE;
    }
    memcpy(s, md, len);
    s[len] = '\0';
    if (strncmp(s, "sw1:", 4) != 0) {
        snprintf(errstr, errstr_size,
                 "commit metadata \"%.40s\": unknown snapshot reference version (expected sw1)", s);
        return SW_ERR_PARSE;
    }
    /* FIRST:CHUNKS:ID:X, each in range, nothing after X. */
    static const char *const names[4] = {"first offset", "chunks", "id", "offset"};
    const uint64_t max[4] = {INT64_MAX, UINT32_MAX, UINT64_MAX, INT64_MAX};
    uint64_t v[4];
    const char *p = s + 4;
    for (int i = 0; i < 4; i++) {
        bool minus;
        const char *e = field(p, i == 0 || i == 3, max[i], &v[i], &minus);
        if (!e || minus || (i < 3 ? *e != ':' : *e != '\0') || (i == 1 && v[i] == 0)) {
            snprintf(errstr, errstr_size,
                     "commit metadata \"%.60s\": field %d (%s) is %s (expected sw1:FIRST:CHUNKS:"
                     "ID:X, offsets >= 0, chunks >= 1)",
                     s, i + 1, names[i],
                     !e                    ? "not a number in range"
                     : minus               ? "negative"
                     : i == 1 && v[i] == 0 ? "0"
                     : *e == ':'           ? "followed by more"
                                           : "the last (cut short)");
            return SW_ERR_PARSE;
        }
        p = e + (i < 3);
    }
    ref->first = (int64_t)v[0];
    ref->chunks = (uint32_t)v[1];
    ref->id = v[2];
    ref->x = (int64_t)v[3];
    return SW_OK;
}

bool sw_snapenv_pack(const sw_snapenv_t *env, sw_buf_t *out)
{
    sw_buf_t raw;
    sw_buf_init(&raw);
    sw_buf_put(&raw, env->two ? ENV_MAGIC2 : ENV_MAGIC, 4);
    sw_vput_i(&raw, env->x);
    sw_vput_i(&raw, env->y);
    sw_vput_u(&raw, env->npos);
    for (size_t i = 0; i < env->npos; i++) {
        sw_vput_u(&raw, (uint64_t)env->pos[i].topic);
        sw_vput_u(&raw, (uint64_t)env->pos[i].partition);
        sw_vput_i(&raw, env->pos[i].offset);
    }
    sw_vput_u(&raw, env->nsup);
    for (size_t i = 0; i < env->nsup; i++) sw_vput_i(&raw, env->sup[i]);
    sw_vput_bytes(&raw, env->engine);
    if (env->two) {
        sw_vput_i(&raw, env->xr);
        sw_vput_i(&raw, env->yr);
        sw_vput_u(&raw, env->nrsup);
        for (size_t i = 0; i < env->nrsup; i++) sw_vput_i(&raw, env->rsup[i]);
    }
    if (env->ext.len) sw_vput_bytes(&raw, env->ext);
    uLongf zlen = compressBound(raw.len);
    sw_buf_reserve(out, zlen);
    int zr = compress2((Bytef *)out->data + out->len, &zlen, (const Bytef *)raw.data, raw.len, 1);
    sw_buf_clear(&raw);
    if (zr != Z_OK) return false;
    out->len += zlen;
    return true;
}

void sw_snapenv_clear(sw_snapenv_t *env)
{
    free(env->pos);
    free(env->sup);
    free(env->rsup);
    memset(env, 0, sizeof(*env));
}

/* A count, then that many suppression keys (caller frees; NULL and
 * rd->bad when the count promises more than is left: each key takes at
 * least a byte). */
static int64_t *keys_get(sw_vrd_t *rd, size_t *n)
{
    uint64_t k = sw_vget_u(rd);
    if (rd->bad || k > (uint64_t)(rd->end - rd->p)) {
        rd->bad = true;
        return NULL;
    }
    int64_t *keys = sw_calloc(k ? k : 1, sizeof(*keys));
    *n = k;
    for (uint64_t i = 0; i < k && !rd->bad; i++) keys[i] = sw_vget_i(rd);
    return keys;
}

sw_err_t sw_snapenv_unpack(const void *z, size_t zlen, sw_buf_t *raw, sw_snapenv_t *env,
                           char *errstr, size_t errstr_size)
{
    memset(env, 0, sizeof(*env));
    /* Inflate (the size is not stored: grow until it fits). */
    uLongf cap = zlen * 4 + 4096;
    raw->len = 0;
    for (;;) {
        sw_buf_reserve(raw, cap);
        uLongf len = cap;
        int zr = uncompress((Bytef *)raw->data, &len, (const Bytef *)z, zlen);
        if (zr == Z_BUF_ERROR && cap < ENV_MAX_BYTES) {
            cap *= 2;
            continue;
        }
        if (zr != Z_OK) {
            snprintf(errstr, errstr_size, "the snapshot is corrupt (zlib error %d)", zr);
            return SW_ERR_PARSE;
        }
        raw->len = len;
        break;
    }
    env->two = raw->len >= 4 && memcmp(raw->data, ENV_MAGIC2, 4) == 0;
    if (raw->len < 4 || (!env->two && memcmp(raw->data, ENV_MAGIC, 4) != 0)) {
        snprintf(errstr, errstr_size, "the snapshot has no envelope");
        return SW_ERR_PARSE;
    }
    sw_vrd_t rd = {(const uint8_t *)raw->data + 4, (const uint8_t *)raw->data + raw->len, false};
    env->x = sw_vget_i(&rd);
    env->y = sw_vget_i(&rd);
    uint64_t n = sw_vget_u(&rd);
    /* Each position takes at least 3 bytes, each key 1: no count may
     * promise more than what is left. */
    if (!rd.bad && n <= (uint64_t)(rd.end - rd.p) / 3) {
        env->pos = sw_calloc(n ? n : 1, sizeof(*env->pos));
        env->npos = n;
        for (uint64_t i = 0; i < n && !rd.bad; i++) {
            uint64_t t = sw_vget_u(&rd), q = sw_vget_u(&rd);
            env->pos[i].topic = t > 2 ? -1 : (int)t;
            env->pos[i].partition = q > INT32_MAX ? -1 : (int)q;
            env->pos[i].offset = sw_vget_i(&rd);
        }
    } else {
        rd.bad = true;
    }
    if (!rd.bad) env->sup = keys_get(&rd, &env->nsup);
    if (!rd.bad) env->engine = sw_vget_bytes(&rd);
    if (!rd.bad && env->two) {
        env->xr = sw_vget_i(&rd);
        env->yr = sw_vget_i(&rd);
        env->rsup = keys_get(&rd, &env->nrsup);
    }
    if (!rd.bad && rd.p < rd.end) env->ext = sw_vget_bytes(&rd);
    if (rd.bad) {
        sw_snapenv_clear(env);
        snprintf(errstr, errstr_size, "the snapshot's envelope is cut short");
        return SW_ERR_PARSE;
    }
    return SW_OK;
}
