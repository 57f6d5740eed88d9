/*
 * Schema registry client (see sw_registry.h): blocking requests through
 * the project's libcurl client (sw_httpc.h, one reused), URLs tried in
 * order (the next one after a transport error or a 5xx), responses parsed
 * with sw_jdom; a bounded FIFO cache of plans and of final failures by id;
 * an exponential backoff after a failed round. Never exits; every failure
 * is returned.
 *
 * Threads: reg->lock guards the cache, the retired plans, the backoff, the
 * slow ids, the counters and the fetch queue. With a fetcher
 * (sw_registry_fetcher_start) only the fetcher thread makes requests (it
 * alone uses the HTTP client) and it drops the lock for the request
 * itself; everyone else only reads the cache and queues ids.
 */
#include "sw_registry.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sw_alloc.h"
#include "sw_httpc.h"
#include "sw_arena.h"
#include "sw_jdom.h"
#include "sw_jw.h"
#include "sw_log.h"
#include "sw_redact.h"

/* Backoff after a failed round of requests: doubles from the first to the last. */
#define BACKOFF_FIRST_MS 250
#define BACKOFF_MAX_MS 4000
/* An answer is a schema: over this it is no schema (final for the id). */
#define ANSWER_MAX_BYTES ((size_t)1 << 20)
/* An id whose answer started but did not finish within timeout_ms (a slow
 * or endless body) backs off on its own, other ids are asked meanwhile;
 * after this many such answers it is final (dead letters, not a retry
 * forever). */
#define SLOW_STRIKES 3
#define SLOW_IDS 16     /* ids remembered with strikes (the oldest forgotten) */
#define FETCH_QUEUE 256 /* ids waiting for the fetcher (more: asked again later) */

typedef struct slow_s {
    int32_t id;
    int strikes;
    int64_t next_try_ms;
} slow_t;

typedef struct entry_s {
    int32_t id;
    sw_avro_plan_t *plan; /* NULL: final failure, see why */
    sw_err_t err;
    char *why;
} entry_t;

struct sw_registry_s {
    char **urls;  /* without a trailing '/' */
    char **shown; /* the same without user information (errors, logs) */
    size_t n_urls;
    char *user_info, *ca, *cert, *key;
    int64_t timeout_ms;
    char *reader;
    size_t reader_len;
    char *unknown_hint; /* NULL: none */
    sw_httpc_t *httpc;  /* created by the first request */
    entry_t *cache;     /* ring of cache_max entries */
    size_t cache_max, cache_n, cache_next;
    size_t last; /* index of the last hit: consecutive messages share ids */
    int64_t backoff_ms, next_try_ms;
    uint64_t errors;
    bool up;
    sw_avro_plan_t **retired; /* plans evicted from the cache, freed by sw_registry_reclaim() */
    size_t nretired, capretired;
    slow_t slow[SLOW_IDS]; /* ids whose answers were too slow (id 0 + strikes 0: free) */
    size_t slow_next;
    /* Locking (see the top): everything above from cache on is written
     * under lock once a fetcher runs; urls .. reader never change. */
    pthread_mutex_t lock;
    pthread_cond_t wake; /* the fetcher: an id was queued, or quit */
    bool threaded;       /* a fetcher thread runs (written before it starts) */
    bool quit;           /* under lock: the fetcher ends */
    pthread_t fetcher;
    int32_t queue[FETCH_QUEUE]; /* under lock: ids to fetch, oldest first */
    size_t nqueue;
    void (*fetched)(void *opaque); /* called by the fetcher after each answer */
    void *fetched_opaque;
};

static char *dup_or_null(const char *s)
{
    return s && *s ? sw_strdup(s) : NULL;
}

sw_registry_t *sw_registry_new(const sw_registry_conf_t *rc)
{
    sw_registry_t *reg = sw_calloc(1, sizeof(*reg));
    reg->n_urls = rc->n_urls;
    reg->urls = sw_calloc(rc->n_urls ? rc->n_urls : 1, sizeof(*reg->urls));
    reg->shown = sw_calloc(rc->n_urls ? rc->n_urls : 1, sizeof(*reg->shown));
    for (size_t i = 0; i < rc->n_urls; i++) {
        reg->urls[i] = sw_strdup(rc->urls[i]);
        size_t n = strlen(reg->urls[i]);
        while (n > 0 && reg->urls[i][n - 1] == '/') reg->urls[i][--n] = '\0';
        reg->shown[i] = sw_redact_dup(reg->urls[i]);
    }
    reg->user_info = dup_or_null(rc->user_info);
    reg->ca = dup_or_null(rc->ca_location);
    reg->cert = dup_or_null(rc->cert_location);
    reg->key = dup_or_null(rc->key_location);
    reg->timeout_ms = rc->timeout_ms > 0 ? rc->timeout_ms : 5000;
    reg->reader = sw_malloc(rc->reader_len + 1);
    memcpy(reg->reader, rc->reader, rc->reader_len);
    reg->reader[rc->reader_len] = '\0';
    reg->reader_len = rc->reader_len;
    reg->unknown_hint = dup_or_null(rc->unknown_hint);
    reg->cache_max = rc->cache_max ? rc->cache_max : SW_REGISTRY_CACHE_MAX;
    reg->cache = sw_calloc(reg->cache_max, sizeof(*reg->cache));
    reg->up = true;
    pthread_mutex_init(&reg->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&reg->wake, &ca);
    pthread_condattr_destroy(&ca);
    return reg;
}

static void entry_clear(entry_t *e)
{
    sw_avro_plan_destroy(e->plan);
    free(e->why);
    memset(e, 0, sizeof(*e));
}

/* An entry leaves the cache while a worker may still decode with its plan
 * (borrowed until sw_registry_reclaim()): the plan waits for that. */
static void entry_retire(sw_registry_t *reg, entry_t *e)
{
    if (e->plan) {
        SW_GROW(reg->retired, reg->nretired, reg->capretired, 8);
        reg->retired[reg->nretired++] = e->plan;
        e->plan = NULL;
    }
    entry_clear(e);
}

static void reclaim_locked(sw_registry_t *reg)
{
    for (size_t i = 0; i < reg->nretired; i++) sw_avro_plan_destroy(reg->retired[i]);
    reg->nretired = 0;
}

void sw_registry_reclaim(sw_registry_t *reg)
{
    pthread_mutex_lock(&reg->lock);
    reclaim_locked(reg);
    pthread_mutex_unlock(&reg->lock);
}

static void fetcher_stop(sw_registry_t *reg);

void sw_registry_destroy(sw_registry_t *reg)
{
    if (!reg) return;
    fetcher_stop(reg);
    for (size_t i = 0; i < reg->n_urls; i++) {
        free(reg->urls[i]);
        free(reg->shown[i]);
    }
    free(reg->urls);
    free(reg->shown);
    free(reg->user_info);
    free(reg->ca);
    free(reg->cert);
    free(reg->key);
    free(reg->reader);
    free(reg->unknown_hint);
    for (size_t i = 0; reg->cache && i < reg->cache_n; i++) entry_clear(&reg->cache[i]);
    free(reg->cache);
    reclaim_locked(reg);
    free(reg->retired);
    sw_httpc_destroy(reg->httpc);
    pthread_mutex_destroy(&reg->lock);
    pthread_cond_destroy(&reg->wake);
    free(reg);
}

bool sw_registry_remote(const sw_registry_t *reg)
{
    return reg->n_urls > 0;
}

void sw_registry_stats(sw_registry_t *reg, uint64_t *errors, bool *up)
{
    pthread_mutex_lock(&reg->lock);
    *errors = reg->errors;
    *up = reg->up;
    pthread_mutex_unlock(&reg->lock);
}

static int64_t backoff_left(const sw_registry_t *reg)
{
    int64_t left = reg->next_try_ms - sw_clock_ms();
    return left > 0 ? left : 0;
}

int64_t sw_registry_backoff_ms(sw_registry_t *reg)
{
    pthread_mutex_lock(&reg->lock);
    int64_t left = backoff_left(reg);
    pthread_mutex_unlock(&reg->lock);
    return left;
}

/* ---- cache ------------------------------------------------------------- */

static entry_t *cache_find(sw_registry_t *reg, int32_t id)
{
    if (reg->last < reg->cache_n && reg->cache[reg->last].id == id) return &reg->cache[reg->last];
    for (size_t i = 0; i < reg->cache_n; i++)
        if (reg->cache[i].id == id) {
            reg->last = i;
            return &reg->cache[i];
        }
    return NULL;
}

/* Takes ownership of plan. The oldest entry goes when the cache is full. */
static entry_t *cache_put(sw_registry_t *reg, int32_t id, sw_avro_plan_t *plan, sw_err_t err,
                          const char *why)
{
    entry_t *e;
    if (reg->cache_n < reg->cache_max) {
        e = &reg->cache[reg->cache_n++];
    } else {
        e = &reg->cache[reg->cache_next];
        reg->cache_next = (reg->cache_next + 1) % reg->cache_max;
        entry_retire(reg, e);
    }
    e->id = id;
    e->plan = plan;
    e->err = err;
    e->why = why ? sw_strdup(why) : NULL;
    return e;
}

static sw_err_t entry_result(const entry_t *e, const sw_avro_plan_t **plan, char *errstr,
                             size_t errstr_size)
{
    if (e->plan) {
        *plan = e->plan;
        return SW_OK;
    }
    snprintf(errstr, errstr_size, "%s", e->why ? e->why : "unknown schema");
    return e->err;
}

sw_err_t sw_registry_add(sw_registry_t *reg, int32_t id, const char *schema, size_t len,
                         char *errstr, size_t errstr_size)
{
    sw_avro_plan_t *plan = sw_avro_plan_new(schema, len, reg->reader, reg->reader_len, id, errstr,
                                            errstr_size);
    if (!plan) return SW_ERR_AVRO;
    pthread_mutex_lock(&reg->lock);
    entry_t *e = cache_find(reg, id);
    if (e) {
        entry_retire(reg, e);
        e->id = id;
        e->plan = plan;
    } else {
        cache_put(reg, id, plan, SW_OK, NULL);
    }
    pthread_mutex_unlock(&reg->lock);
    return SW_OK;
}

/* ---- HTTP -------------------------------------------------------------- */

/* What went wrong with the id itself, not with the registry. */
#define HTTP_OVERSIZED (-1) /* the answer passed ANSWER_MAX_BYTES */
#define HTTP_SLOW (-2)      /* the answer started but did not end in time */

/* One request to each URL in turn until one answers below 500. @returns
 * the HTTP status with the body, or 0 with errstr saying why none did,
 * or HTTP_OVERSIZED / HTTP_SLOW. */
static long http(sw_registry_t *reg, const char *path, const char *post, sw_buf_t *body,
                 char *errstr, size_t errstr_size)
{
    if (!reg->httpc) {
        const sw_httpc_opts_t opts = {
            .user_agent = "stormwatch/" SW_VERSION,
            .timeout_ms = reg->timeout_ms,
            .basic_auth = reg->user_info,
            .ca_location = reg->ca,
            .cert_location = reg->cert,
            .key_location = reg->key,
            .body_max = ANSWER_MAX_BYTES,
            .body_max_fails = true, /* not a schema */
        };
        char why[256];
        reg->httpc = sw_httpc_new(&opts, why, sizeof(why));
        if (!reg->httpc) {
            snprintf(errstr, errstr_size, "schema registry: %s", why);
            return 0;
        }
    }
    static const char *const hdrs[] = {
        "Accept: application/vnd.schemaregistry.v1+json, "
        "application/vnd.schemaregistry+json; q=0.9, application/json; q=0.5",
        "Content-Type: application/vnd.schemaregistry.v1+json"};
    sw_httpc_resp_t resp;
    sw_httpc_resp_init(&resp);
    resp.body = *body; /* the answer is read into the caller's buffer */
    long status = 0;
    for (size_t i = 0; i < reg->n_urls; i++) {
        char url[4096];
        snprintf(url, sizeof(url), "%s%s", reg->urls[i], path);
        sw_httpc_request(reg->httpc, url, hdrs, post ? 2 : 1, post, post ? strlen(post) : 0, &resp);
        if (resp.body_over) {
            snprintf(errstr, errstr_size, "schema registry %s%s: the answer exceeds %zu bytes",
                     reg->shown[i], path, ANSWER_MAX_BYTES);
            status = HTTP_OVERSIZED;
            break;
        }
        if (resp.timed_out && resp.body.len > 0) {
            snprintf(errstr, errstr_size,
                     "schema registry %s%s: the answer did not end within %lld ms (%zu bytes)",
                     reg->shown[i], path, (long long)reg->timeout_ms, resp.body.len);
            status = HTTP_SLOW;
            break;
        }
        if (resp.status == 0) {
            snprintf(errstr, errstr_size, "schema registry %s%s: %s", reg->shown[i], path,
                     resp.error);
            status = 0;
            continue;
        }
        status = resp.status;
        if (status >= 500) {
            snprintf(errstr, errstr_size, "schema registry %s%s: HTTP %ld", reg->shown[i], path,
                     status);
            status = 0;
            continue;
        }
        break;
    }
    *body = resp.body;
    return status;
}

/* The registry's error body {"error_code": N, "message": "..."}. */
static int64_t error_code(const sw_buf_t *body, sw_arena_t *arena, sw_str_t *message)
{
    char jerr[128];
    *message = sw_str("");
    sw_jnode_t *root = sw_jdom_parse(body->data ? body->data : "", body->len, arena, jerr,
                                     sizeof(jerr));
    if (!root || root->type != SW_JN_OBJECT) return 0;
    *message = sw_jdom_str(sw_jdom_get(root, "message"), "");
    return sw_jdom_int(sw_jdom_get(root, "error_code"), 0);
}

/* A round failed: count it, back off. */
static sw_err_t unreachable(sw_registry_t *reg)
{
    reg->errors++;
    reg->up = false;
    reg->backoff_ms = reg->backoff_ms ? reg->backoff_ms * 2 : BACKOFF_FIRST_MS;
    if (reg->backoff_ms > BACKOFF_MAX_MS) reg->backoff_ms = BACKOFF_MAX_MS;
    reg->next_try_ms = sw_clock_ms() + reg->backoff_ms;
    return SW_ERR_IO;
}

static void reachable(sw_registry_t *reg)
{
    reg->up = true;
    reg->backoff_ms = 0;
    reg->next_try_ms = 0;
}

static bool backing_off(sw_registry_t *reg, char *errstr, size_t errstr_size)
{
    int64_t left = backoff_left(reg);
    if (left <= 0) return false;
    snprintf(errstr, errstr_size,
             "schema registry unreachable after %llu failed requests; next attempt in %lld ms",
             (unsigned long long)reg->errors, (long long)left);
    return true;
}

static slow_t *slow_find(sw_registry_t *reg, int32_t id)
{
    for (size_t i = 0; i < SLOW_IDS; i++)
        if (reg->slow[i].strikes && reg->slow[i].id == id) return &reg->slow[i];
    return NULL;
}

/* One more too-slow answer for @p id: it backs off alone (doubling).
 * @returns true when it has had SLOW_STRIKES of them (final). */
static bool slow_strike(sw_registry_t *reg, int32_t id)
{
    slow_t *s = slow_find(reg, id);
    if (!s) {
        s = &reg->slow[reg->slow_next];
        reg->slow_next = (reg->slow_next + 1) % SLOW_IDS;
        memset(s, 0, sizeof(*s));
        s->id = id;
    }
    s->strikes++;
    int64_t backoff = (int64_t)BACKOFF_FIRST_MS << (s->strikes < 5 ? s->strikes : 5);
    s->next_try_ms = sw_clock_ms() + backoff;
    if (s->strikes < SLOW_STRIKES) return false;
    memset(s, 0, sizeof(*s));
    return true;
}

/* No registry: what was not preloaded is unknown (not cached: cheap). */
static sw_err_t unknown_local(const sw_registry_t *reg, int32_t id, char *errstr,
                              size_t errstr_size)
{
    size_t n = (size_t)snprintf(errstr, errstr_size, "unknown schema id %ld (expected ", (long)id);
    for (size_t i = 0; i < reg->cache_n && n < errstr_size; i++)
        n += (size_t)snprintf(errstr + n, errstr_size - n, "%s%ld",
                              i == 0                  ? ""
                              : i + 1 == reg->cache_n ? " or "
                                                      : ", ",
                              (long)reg->cache[i].id);
    if (n < errstr_size)
        snprintf(errstr + n, errstr_size - n, ")%s%s", reg->unknown_hint ? ": " : "",
                 reg->unknown_hint ? reg->unknown_hint : "");
    return SW_ERR_NOT_FOUND;
}

/* @p id may not be asked for now (the registry's backoff, or the id's own
 * after too slow answers): errstr says until when. */
static bool waits(sw_registry_t *reg, int32_t id, char *errstr, size_t errstr_size)
{
    if (backing_off(reg, errstr, errstr_size)) return true;
    slow_t *sl = slow_find(reg, id);
    int64_t left = sl ? sl->next_try_ms - sw_clock_ms() : 0;
    if (left > 0) {
        snprintf(errstr, errstr_size,
                 "schema id %ld: the registry's answer was too slow %d times; next attempt in "
                 "%lld ms",
                 (long)id, sl->strikes, (long long)left);
        return true;
    }
    return false;
}

/* Ask the registry for @p id (not cached, URLs set, not waiting); under
 * the lock, which a fetcher thread drops for the request itself. */
static sw_err_t fetch_locked(sw_registry_t *reg, int32_t id, const sw_avro_plan_t **plan,
                             char *errstr, size_t errstr_size)
{
    entry_t *e;
    char path[64];
    snprintf(path, sizeof(path), "/schemas/ids/%ld", (long)id);
    sw_buf_t body;
    sw_buf_init(&body);
    sw_arena_t arena;
    sw_arena_init(&arena);
    sw_err_t err = SW_OK;
    char why[600];
    if (reg->threaded) pthread_mutex_unlock(&reg->lock);
    long status = http(reg, path, NULL, &body, errstr, errstr_size);
    if (reg->threaded) pthread_mutex_lock(&reg->lock);
    if (status == 0) {
        err = unreachable(reg);
        goto out;
    }
    if (status == HTTP_OVERSIZED || (status == HTTP_SLOW && slow_strike(reg, id))) {
        /* Final: no schema is that large or takes that long, every time. */
        snprintf(why, sizeof(why), "schema id %ld: %s (final)", (long)id, errstr);
        e = cache_put(reg, id, NULL, SW_ERR_AVRO, why);
        err = entry_result(e, plan, errstr, errstr_size);
        goto out;
    }
    if (status == HTTP_SLOW) {
        err = SW_ERR_IO; /* this id waits; others are asked meanwhile */
        goto out;
    }
    if (status != 200) {
        sw_str_t msg;
        int64_t code = error_code(&body, &arena, &msg);
        if (code != 40403) {
            /* Not the registry's "schema not found" (a wrong URL or proxy, a
             * registry error): the data may be fine, so it waits. */
            snprintf(errstr, errstr_size,
                     "schema registry GET %s: HTTP %ld, error_code %lld: "
                     "%.*s (expected 200, or 404 with error_code 40403)",
                     path, status, (long long)code, (int)(msg.len > 200 ? 200 : msg.len), msg.ptr);
            err = unreachable(reg);
            goto out;
        }
        reachable(reg);
        snprintf(why, sizeof(why),
                 "unknown schema id %ld (schema registry: HTTP %ld, error_code "
                 "%lld: %.*s; is schema.registry.url the registry its producer used?)",
                 (long)id, status, (long long)code, (int)(msg.len > 200 ? 200 : msg.len), msg.ptr);
        e = cache_put(reg, id, NULL, SW_ERR_NOT_FOUND, why);
        err = entry_result(e, plan, errstr, errstr_size);
        goto out;
    }
    reachable(reg);
    char jerr[128];
    sw_jnode_t *root = sw_jdom_parse(body.data ? body.data : "", body.len, &arena, jerr,
                                     sizeof(jerr));
    const sw_jnode_t *schema = root ? sw_jdom_get(root, "schema") : NULL;
    sw_str_t type = sw_jdom_str(root ? sw_jdom_get(root, "schemaType") : NULL, "AVRO");
    if (!schema || schema->type != SW_JN_STRING) {
        snprintf(why, sizeof(why),
                 "schema id %ld: the registry's answer has no \"schema\" "
                 "string",
                 (long)id);
        e = cache_put(reg, id, NULL, SW_ERR_AVRO, why);
    } else if (!(type.len == 4 && memcmp(type.ptr, "AVRO", 4) == 0)) {
        snprintf(why, sizeof(why), "schema id %ld is a %.*s schema, expected AVRO", (long)id,
                 (int)(type.len > 40 ? 40 : type.len), type.ptr);
        e = cache_put(reg, id, NULL, SW_ERR_AVRO, why);
    } else {
        sw_avro_plan_t *p = sw_avro_plan_new(schema->s.ptr, schema->s.len, reg->reader,
                                             reg->reader_len, id, why, sizeof(why));
        e = cache_put(reg, id, p, p ? SW_OK : SW_ERR_AVRO, p ? NULL : why);
    }
    err = entry_result(e, plan, errstr, errstr_size);
out:
    sw_arena_clear(&arena);
    sw_buf_clear(&body);
    return err;
}

/* Queue @p id for the fetcher (once). */
static void enqueue(sw_registry_t *reg, int32_t id)
{
    for (size_t i = 0; i < reg->nqueue; i++)
        if (reg->queue[i] == id) return;
    if (reg->nqueue == FETCH_QUEUE) return; /* asked again by the caller later */
    reg->queue[reg->nqueue++] = id;
    pthread_cond_signal(&reg->wake);
}

sw_err_t sw_registry_lookup(sw_registry_t *reg, int32_t id, const sw_avro_plan_t **plan,
                            char *errstr, size_t errstr_size)
{
    if (!reg->threaded) return sw_registry_plan(reg, id, plan, errstr, errstr_size);
    sw_err_t err = SW_ERR_IO;
    pthread_mutex_lock(&reg->lock);
    entry_t *e = cache_find(reg, id);
    if (e) {
        err = entry_result(e, plan, errstr, errstr_size);
    } else if (!reg->n_urls) {
        err = unknown_local(reg, id, errstr, errstr_size);
    } else {
        enqueue(reg, id);
        if (!waits(reg, id, errstr, errstr_size)) {
            snprintf(errstr, errstr_size, "schema id %ld: being fetched from the schema registry",
                     (long)id);
            err = SW_ERR_PENDING;
        }
    }
    pthread_mutex_unlock(&reg->lock);
    return err;
}

sw_err_t sw_registry_plan(sw_registry_t *reg, int32_t id, const sw_avro_plan_t **plan, char *errstr,
                          size_t errstr_size)
{
    if (reg->threaded) return sw_registry_lookup(reg, id, plan, errstr, errstr_size);
    entry_t *e = cache_find(reg, id);
    if (e) return entry_result(e, plan, errstr, errstr_size);
    if (!reg->n_urls) return unknown_local(reg, id, errstr, errstr_size);
    if (waits(reg, id, errstr, errstr_size)) return SW_ERR_IO;
    return fetch_locked(reg, id, plan, errstr, errstr_size);
}

/* ---- the fetcher thread ---------------------------------------------------- */

/* The queued id to ask for now (SIZE_MAX: none), or in *wait_ms how long
 * until one may be asked (-1: none queued). Under the lock. */
static size_t fetch_pick(sw_registry_t *reg, int64_t *wait_ms)
{
    *wait_ms = -1;
    if (!reg->nqueue) return SIZE_MAX;
    int64_t now = sw_clock_ms(), global = reg->next_try_ms - now;
    if (global > 0) {
        *wait_ms = global;
        return SIZE_MAX;
    }
    for (size_t i = 0; i < reg->nqueue; i++) {
        slow_t *sl = slow_find(reg, reg->queue[i]);
        int64_t left = sl ? sl->next_try_ms - now : 0;
        if (left <= 0) return i;
        if (*wait_ms < 0 || left < *wait_ms) *wait_ms = left;
    }
    return SIZE_MAX;
}

static void *fetcher_main(void *arg)
{
    sw_registry_t *reg = arg;
    pthread_mutex_lock(&reg->lock);
    while (!reg->quit) {
        int64_t wait_ms;
        size_t i = fetch_pick(reg, &wait_ms);
        if (i == SIZE_MAX) {
            if (wait_ms < 0) {
                pthread_cond_wait(&reg->wake, &reg->lock);
            } else {
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                int64_t ns = ts.tv_nsec + (wait_ms % 1000) * 1000000;
                ts.tv_sec += (time_t)(wait_ms / 1000 + ns / 1000000000);
                ts.tv_nsec = (long)(ns % 1000000000);
                pthread_cond_timedwait(&reg->wake, &reg->lock, &ts);
            }
            continue;
        }
        int32_t id = reg->queue[i];
        memmove(&reg->queue[i], &reg->queue[i + 1], (reg->nqueue - i - 1) * sizeof(*reg->queue));
        reg->nqueue--;
        if (cache_find(reg, id)) continue;
        const sw_avro_plan_t *plan;
        char err[600];
        (void)fetch_locked(reg, id, &plan, err, sizeof(err)); /* the answer is in the cache */
        if (reg->fetched) {
            pthread_mutex_unlock(&reg->lock);
            reg->fetched(reg->fetched_opaque);
            pthread_mutex_lock(&reg->lock);
        }
    }
    pthread_mutex_unlock(&reg->lock);
    return NULL;
}

sw_err_t sw_registry_fetcher_start(sw_registry_t *reg, void (*fetched)(void *opaque), void *opaque)
{
    if (reg->threaded || !reg->n_urls) return SW_OK;
    reg->fetched = fetched;
    reg->fetched_opaque = opaque;
    reg->quit = false;
    reg->threaded = true;
    if (pthread_create(&reg->fetcher, NULL, fetcher_main, reg) != 0) {
        reg->threaded = false;
        return SW_ERR_STATE;
    }
    pthread_setname_np(reg->fetcher, "sw-registry");
    return SW_OK;
}

static void fetcher_stop(sw_registry_t *reg)
{
    if (!reg->threaded) return;
    pthread_mutex_lock(&reg->lock);
    reg->quit = true;
    pthread_cond_signal(&reg->wake);
    pthread_mutex_unlock(&reg->lock);
    pthread_join(reg->fetcher, NULL); /* a request in flight ends within timeout_ms */
    reg->threaded = false;
}

void sw_registry_fetcher_stop(sw_registry_t *reg)
{
    fetcher_stop(reg);
}

sw_err_t sw_registry_subject_id(sw_registry_t *reg, const char *subject, const char *schema,
                                bool do_register, int32_t *id, char *errstr, size_t errstr_size)
{
    if (!reg->n_urls) {
        snprintf(errstr, errstr_size, "no schema.registry.url");
        return SW_ERR_STATE;
    }
    if (reg->threaded) { /* the fetcher alone makes requests */
        snprintf(errstr, errstr_size, "schema registry: subject lookups before the fetcher starts");
        return SW_ERR_STATE;
    }
    if (backing_off(reg, errstr, errstr_size)) return SW_ERR_IO;
    /* Subject names go into the path percent-encoded (topics: [a-zA-Z0-9._-]). */
    sw_buf_t path;
    sw_buf_init(&path);
    sw_buf_puts(&path, "/subjects/");
    for (const unsigned char *s = (const unsigned char *)subject; *s; s++) {
        if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
            *s == '.' || *s == '_' || *s == '-')
            sw_buf_putc(&path, (char)*s);
        else sw_buf_printf(&path, "%%%02X", *s);
    }
    if (do_register) sw_buf_puts(&path, "/versions");
    sw_buf_t req, body;
    sw_buf_init(&req);
    sw_buf_init(&body);
    sw_jw_t jw;
    sw_jw_init(&jw, &req, 0);
    sw_jw_obj(&jw);
    sw_jw_key(&jw, "schema");
    sw_jw_cstr(&jw, schema);
    sw_jw_end_obj(&jw);
    sw_arena_t arena;
    sw_arena_init(&arena);
    sw_err_t err = SW_OK;
    const char *p = sw_buf_cstr(&path);
    long status = http(reg, p, sw_buf_cstr(&req), &body, errstr, errstr_size);
    if (status < 0) { /* oversized or endless: errstr says which */
        err = SW_ERR_INVALID_ARG;
        goto out;
    }
    if (status == 0 || status == 401 || status == 403 || status == 408 || status == 429) {
        if (status) snprintf(errstr, errstr_size, "schema registry POST %s: HTTP %ld", p, status);
        err = unreachable(reg);
        goto out;
    }
    reachable(reg);
    if (status != 200) {
        sw_str_t msg;
        int64_t code = error_code(&body, &arena, &msg);
        snprintf(errstr, errstr_size, "schema registry POST %s: HTTP %ld, error_code %lld: %.*s", p,
                 status, (long long)code, (int)(msg.len > 200 ? 200 : msg.len), msg.ptr);
        err = status == 404 ? SW_ERR_NOT_FOUND : SW_ERR_INVALID_ARG;
        goto out;
    }
    char jerr[128];
    sw_jnode_t *root = sw_jdom_parse(body.data ? body.data : "", body.len, &arena, jerr,
                                     sizeof(jerr));
    const sw_jnode_t *jid = root ? sw_jdom_get(root, "id") : NULL;
    if (!jid || jid->type != SW_JN_INT || jid->i < 0 || jid->i > INT32_MAX) {
        snprintf(errstr, errstr_size, "schema registry POST %s: the answer has no \"id\" 0..%ld", p,
                 (long)INT32_MAX);
        err = SW_ERR_INVALID_ARG;
        goto out;
    }
    *id = (int32_t)jid->i;
out:
    sw_arena_clear(&arena);
    sw_buf_clear(&req);
    sw_buf_clear(&body);
    sw_buf_clear(&path);
    return err;
}
