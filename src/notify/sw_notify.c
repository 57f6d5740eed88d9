/*
 * The notify decisions (see sw_notify.h): the per-job episode table, the
 * re-send schedule, answer classification, backoff, Retry-After, the rate
 * limit bucket and the webhook signature (HMAC-SHA256 from libcrypto,
 * HTTP dates parsed by libcurl). No I/O, no clock, no globals: the caller
 * passes the time and the random numbers.
 */
#include "sw_notify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "sw_alloc.h"
#include "sw_codec_pager.h"
#include "sw_curl_dl.h"
#include "sw_event.h"

const char *sw_sink_name(sw_sink_t sink)
{
    switch (sink) {
    case SW_SINK_ALERTMANAGER: return "alertmanager";
    case SW_SINK_PAGERDUTY: return "pagerduty";
    case SW_SINK_WEBHOOK: return "webhook";
    default: return "?";
    }
}

sw_notify_outcome_t sw_notify_classify(long status)
{
    if (status >= 200 && status < 300) return SW_NOTIFY_ACCEPTED;
    if (status == 0 || status == 408 || status == 429 || status >= 500) return SW_NOTIFY_RETRY;
    return SW_NOTIFY_PERMANENT;
}

const char *sw_notify_outcome_str(sw_notify_outcome_t o)
{
    switch (o) {
    case SW_NOTIFY_ACCEPTED: return "accepted";
    case SW_NOTIFY_RETRY: return "retry";
    default: return "permanent";
    }
}

int64_t sw_notify_backoff_ms(const sw_notify_backoff_t *b, unsigned attempt, uint64_t rnd,
                             int64_t retry_after_ms)
{
    int64_t d = b->base_ms > 0 ? b->base_ms : 1;
    for (unsigned i = 0; i < attempt && d < b->max_ms; i++) d *= 2;
    if (d > b->max_ms) d = b->max_ms;
    int64_t half = d / 2;
    int64_t delay = half + (half > 0 ? (int64_t)(rnd % (uint64_t)(d - half + 1)) : 0);
    if (retry_after_ms >= 0 && delay < retry_after_ms) delay = retry_after_ms;
    return delay;
}

bool sw_notify_retry_after(const char *value, int64_t now_epoch_ms, int64_t *ms)
{
    if (!value) return false;
    while (*value == ' ' || *value == '\t') value++;
    if (*value >= '0' && *value <= '9') {
        char *end = NULL;
        long long s = strtoll(value, &end, 10);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n') end++;
        if (*end || s < 0 || s > 86400LL * 365) return false;
        *ms = (int64_t)s * 1000;
        return true;
    }
    /* An HTTP-date (RFC 9110 5.6.7: IMF-fixdate, or the obsolete RFC 850
     * and asctime forms), as libcurl parses dates. */
    time_t t = curl_getdate(value, NULL);
    if (t == (time_t)-1) return false;
    int64_t delta = (int64_t)t * 1000 - now_epoch_ms;
    *ms = delta > 0 ? delta : 0;
    return true;
}

void sw_notify_bucket_init(sw_notify_bucket_t *b, double rate_per_s, int64_t now_ms)
{
    b->rate_per_s = rate_per_s > 0 ? rate_per_s : 0;
    b->tokens = b->rate_per_s > 1 ? b->rate_per_s : 1;
    b->last_ms = now_ms;
}

int64_t sw_notify_bucket_take(sw_notify_bucket_t *b, int64_t now_ms)
{
    if (b->rate_per_s <= 0) return 0;
    double cap = b->rate_per_s > 1 ? b->rate_per_s : 1;
    if (now_ms > b->last_ms) {
        b->tokens += (double)(now_ms - b->last_ms) * b->rate_per_s / 1000.0;
        if (b->tokens > cap) b->tokens = cap;
        b->last_ms = now_ms;
    }
    if (b->tokens >= 1.0) {
        b->tokens -= 1.0;
        return 0;
    }
    int64_t wait = (int64_t)((1.0 - b->tokens) * 1000.0 / b->rate_per_s) + 1;
    return wait;
}

const char *sw_notify_verdict_str(sw_notify_verdict_t v)
{
    switch (v) {
    case SW_NOTIFY_SKIP: return "skip";
    case SW_NOTIFY_DUPLICATE: return "duplicate";
    case SW_NOTIFY_TRIGGER: return "trigger";
    default: return "resolve";
    }
}

/* ---- the episode table ---------------------------------------------------- */

typedef struct job_s {
    char *id; /* owned job id bytes (NULL for the null job) */
    size_t id_len;
    bool null_id;
    int64_t episode; /* last applied (episode, revision) */
    int64_t revision;
    bool open;      /* its episode is open */
    bool lapsed;    /* a crash or warning closed without a resolve sent yet (a summary or
                       a crash ended its re-sends; its closing record follows) */
    int confidence; /* episode_confidence of the episode */
    char *json;     /* owned: last trigger/update while open */
    size_t json_len;
    int32_t partition;
    int64_t first_offset; /* the record that opened the episode */
    int64_t next_due_ms;  /* next Alertmanager re-send */
} job_t;

struct sw_notify_s {
    int64_t resend_ms;
    job_t *jobs;
    size_t n_jobs, cap_jobs;
    uint32_t *slots; /* open addressing: job index + 1, 0 = empty */
    size_t n_slots;  /* a power of two */
    size_t n_open;
};

#define HASH_SEED UINT64_C(0x9e3779b97f4a7c15)

static uint64_t job_hash(bool null_id, const char *p, size_t len)
{
    return null_id ? 1 : sw_hash_bytes(p, len, HASH_SEED);
}

static void reindex(sw_notify_t *n)
{
    size_t want = 16;
    while (want < n->n_jobs * 2 + 2) want *= 2;
    free(n->slots);
    n->slots = sw_calloc(want, sizeof(*n->slots));
    n->n_slots = want;
    for (size_t i = 0; i < n->n_jobs; i++) {
        const job_t *j = &n->jobs[i];
        size_t s = job_hash(j->null_id, j->id, j->id_len) & (want - 1);
        while (n->slots[s]) s = (s + 1) & (want - 1);
        n->slots[s] = (uint32_t)(i + 1);
    }
}

/* The table's key of a record: its job for SPEC 6's episodes; for SPEC 8
 * "<job>\x1fcrash" or "<job>\x1fwarning" (the null job "\x1f\x1f..."),
 * so that crashes and warnings have their own counters, open state and
 * re-sends beside the job's episodes. @p a is set up as the key. */
static void rec_key(const sw_record_t *rec, sw_analysis_t *a, char *buf, size_t cap)
{
    *a = rec->analysis;
    if (!sw_action_is_x8(rec->action)) return;
    const char *kind = rec->action == SW_ACTION_CRASH ? "crash" : "warning";
    size_t jl = rec->analysis.has_job_id ? rec->analysis.job_id.len : 0;
    size_t kl = strlen(kind);
    if (jl + kl + 2 > cap) jl = cap - kl - 2; /* ids are at most 1 KiB (SW_IDENT_MAX) */
    size_t n = 0;
    if (!rec->analysis.has_job_id) buf[n++] = '\x1f';
    memcpy(buf + n, rec->analysis.job_id.ptr, jl);
    n += jl;
    buf[n++] = '\x1f';
    memcpy(buf + n, kind, kl);
    n += kl;
    a->has_job_id = true;
    a->job_id.ptr = buf;
    a->job_id.len = n;
}

static job_t *job_find(const sw_notify_t *n, const sw_analysis_t *a)
{
    if (!n->n_slots) return NULL;
    bool null_id = !a->has_job_id;
    size_t s = job_hash(null_id, a->job_id.ptr, a->job_id.len) & (n->n_slots - 1);
    while (n->slots[s]) {
        job_t *j = &n->jobs[n->slots[s] - 1];
        if (j->null_id == null_id && (null_id || (j->id_len == a->job_id.len &&
                                                  memcmp(j->id, a->job_id.ptr, j->id_len) == 0)))
            return j;
        s = (s + 1) & (n->n_slots - 1);
    }
    return NULL;
}

static job_t *job_add(sw_notify_t *n, const sw_analysis_t *a)
{
    if (n->n_jobs == n->cap_jobs) {
        n->cap_jobs = n->cap_jobs ? n->cap_jobs * 2 : 16;
        n->jobs = sw_reallocarray(n->jobs, n->cap_jobs, sizeof(*n->jobs));
    }
    job_t *j = &n->jobs[n->n_jobs++];
    memset(j, 0, sizeof(*j));
    j->null_id = !a->has_job_id;
    if (!j->null_id) {
        j->id = sw_memdup0(a->job_id.ptr, a->job_id.len);
        j->id_len = a->job_id.len;
    }
    j->episode = -1;
    if (n->n_jobs * 2 + 2 > n->n_slots) {
        reindex(n);
    } else {
        size_t s = job_hash(j->null_id, j->id, j->id_len) & (n->n_slots - 1);
        while (n->slots[s]) s = (s + 1) & (n->n_slots - 1);
        n->slots[s] = (uint32_t)n->n_jobs;
    }
    return j;
}

sw_notify_t *sw_notify_new(int64_t resend_ms)
{
    sw_notify_t *n = sw_calloc(1, sizeof(*n));
    n->resend_ms = resend_ms > 0 ? resend_ms : 1;
    return n;
}

void sw_notify_destroy(sw_notify_t *n)
{
    if (!n) return;
    for (size_t i = 0; i < n->n_jobs; i++) {
        free(n->jobs[i].id);
        free(n->jobs[i].json);
    }
    free(n->jobs);
    free(n->slots);
    free(n);
}

/* (e1, r1) < (e2, r2) */
static bool older(int64_t e1, int64_t r1, int64_t e2, int64_t r2)
{
    return e1 < e2 || (e1 == e2 && r1 < r2);
}

sw_notify_verdict_t sw_notify_decide(const sw_notify_t *n, const sw_record_t *rec,
                                     int *episode_confidence)
{
    char kb[SW_IDENT_MAX + 16];
    sw_analysis_t key;
    rec_key(rec, &key, kb, sizeof(kb));
    const job_t *j = job_find(n, &key);
    *episode_confidence = rec->episode_confidence;
    if (j && j->episode == rec->episode && j->episode >= 1) *episode_confidence = j->confidence;
    if (rec->action == SW_ACTION_SUMMARY) {
        if (sw_pager_decide(rec) == SW_PAGER_SKIP) return SW_NOTIFY_SKIP;
        /* It closes the episode it names, unless that was closed already
         * (a resolve, or this summary delivered before). */
        if (!j) return SW_NOTIFY_RESOLVE;
        if (older(rec->episode, rec->revision, j->episode, j->revision)) return SW_NOTIFY_DUPLICATE;
        if (rec->episode == j->episode && !j->open) return SW_NOTIFY_DUPLICATE;
        return SW_NOTIFY_RESOLVE;
    }
    if (j && !older(j->episode, j->revision, rec->episode, rec->revision))
        return SW_NOTIFY_DUPLICATE;
    if (sw_action_is_x8(rec->action) && rec->x8 && !rec->x8->open) {
        /* A crash's or warning's close resolves it, unless it was resolved
         * already; also when a summary or a crash ended its re-sends just
         * before (lapsed: nothing was sent for that). A crash close nobody
         * saw open still resolves: nothing paged for a crash may stay. */
        if (!j) return rec->action == SW_ACTION_CRASH ? SW_NOTIFY_RESOLVE : SW_NOTIFY_DUPLICATE;
        if (j->episode != rec->episode || (!j->open && !j->lapsed)) return SW_NOTIFY_DUPLICATE;
        return SW_NOTIFY_RESOLVE;
    }
    return rec->action == SW_ACTION_RESOLVE ? SW_NOTIFY_RESOLVE : SW_NOTIFY_TRIGGER;
}

static void job_close(sw_notify_t *n, job_t *j)
{
    if (j->open) n->n_open--;
    j->open = false;
    j->lapsed = false;
    free(j->json);
    j->json = NULL;
    j->json_len = 0;
}

void sw_notify_apply(sw_notify_t *n, const sw_record_t *rec, sw_notify_verdict_t verdict,
                     int episode_confidence, const char *json, size_t json_len, int32_t partition,
                     int64_t offset, int64_t now_ms)
{
    char kb[SW_IDENT_MAX + 16];
    sw_analysis_t key;
    rec_key(rec, &key, kb, sizeof(kb));
    if ((rec->action == SW_ACTION_SUMMARY || rec->action == SW_ACTION_CRASH) &&
        verdict != SW_NOTIFY_DUPLICATE) {
        /* A job's summary ends the re-sends of its crash and warning
         * alerts, and a crash those of the warning it closed; the records
         * that close them follow (the engine emits them) and resolve them:
         * until then they are lapsed, not resolved. */
        for (int kind = SW_ACTION_CRASH; kind <= SW_ACTION_WARNING; kind++) {
            if (rec->action == SW_ACTION_CRASH && kind == SW_ACTION_CRASH) continue;
            sw_record_t other = *rec;
            other.action = (sw_action_t)kind;
            char ob[SW_IDENT_MAX + 16];
            sw_analysis_t okey;
            rec_key(&other, &okey, ob, sizeof(ob));
            job_t *oj = job_find(n, &okey);
            if (oj && oj->open) {
                job_close(n, oj);
                oj->lapsed = true;
            }
        }
    }
    if (verdict != SW_NOTIFY_TRIGGER && verdict != SW_NOTIFY_RESOLVE) return;
    job_t *j = job_find(n, &key);
    if (!j) j = job_add(n, &key);
    bool same_episode = j->episode == rec->episode;
    j->episode = rec->episode;
    j->revision = rec->revision;
    j->partition = partition;
    if (verdict == SW_NOTIFY_RESOLVE) {
        job_close(n, j);
        return;
    }
    if (!j->open || !same_episode) {
        if (!j->open) n->n_open++;
        j->open = true;
        j->first_offset = offset;
        j->confidence = episode_confidence;
    }
    free(j->json);
    j->json = sw_memdup0(json, json_len);
    j->json_len = json_len;
    j->next_due_ms = now_ms + n->resend_ms;
}

size_t sw_notify_due(sw_notify_t *n, int64_t now_ms, sw_notify_episode_t *out, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < n->n_jobs && k < max; i++) {
        job_t *j = &n->jobs[i];
        if (!j->open || j->next_due_ms > now_ms) continue;
        out[k].json = j->json;
        out[k].json_len = j->json_len;
        out[k].episode_confidence = j->confidence;
        out[k].partition = j->partition;
        out[k].first_offset = j->first_offset;
        k++;
        j->next_due_ms = now_ms + n->resend_ms;
    }
    return k;
}

void sw_notify_all_due(sw_notify_t *n, int64_t now_ms)
{
    for (size_t i = 0; i < n->n_jobs; i++)
        if (n->jobs[i].open) n->jobs[i].next_due_ms = now_ms;
}

int64_t sw_notify_next_due(const sw_notify_t *n)
{
    int64_t t = INT64_MAX;
    for (size_t i = 0; i < n->n_jobs; i++)
        if (n->jobs[i].open && n->jobs[i].next_due_ms < t) t = n->jobs[i].next_due_ms;
    return t;
}

size_t sw_notify_open_count(const sw_notify_t *n)
{
    return n->n_open;
}

int64_t sw_notify_rebuild_offset(const sw_notify_t *n, int32_t partition, int64_t next_offset)
{
    int64_t r = next_offset;
    for (size_t i = 0; i < n->n_jobs; i++) {
        const job_t *j = &n->jobs[i];
        if (j->open && j->partition == partition && j->first_offset < r) r = j->first_offset;
    }
    return r;
}

void sw_notify_drop_partition(sw_notify_t *n, int32_t partition)
{
    size_t w = 0;
    for (size_t i = 0; i < n->n_jobs; i++) {
        job_t *j = &n->jobs[i];
        if (j->partition == partition) {
            job_close(n, j);
            free(j->id);
            continue;
        }
        n->jobs[w++] = *j;
    }
    n->n_jobs = w;
    reindex(n);
}

/* ---- SHA-256 and HMAC ------------------------------------------------------ */

/* libcrypto's digests: the process already loads it (librdkafka's TLS). */
void sw_sha256(const void *data, size_t len, uint8_t out[SW_SHA256_LEN])
{
    SHA256(data, len, out);
}

void sw_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                    uint8_t out[SW_SHA256_LEN])
{
    static const uint8_t empty[1] = {0};
    unsigned int out_len = SW_SHA256_LEN;
    /* HMAC() takes a NULL key to mean "reuse the last one": never pass it. */
    HMAC(EVP_sha256(), key_len ? key : empty, (int)key_len, data, len, out, &out_len);
}

void sw_notify_signature(const char *secret, const void *body, size_t len, char out[72])
{
    uint8_t mac[SW_SHA256_LEN];
    sw_hmac_sha256(secret, strlen(secret), body, len, mac);
    static const char hex[] = "0123456789abcdef";
    memcpy(out, "sha256=", 7);
    for (int i = 0; i < SW_SHA256_LEN; i++) {
        out[7 + 2 * i] = hex[mac[i] >> 4];
        out[8 + 2 * i] = hex[mac[i] & 15];
    }
    out[7 + 2 * SW_SHA256_LEN] = '\0';
}
