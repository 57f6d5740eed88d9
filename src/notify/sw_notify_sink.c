/*
 * The sinks of `stormwatch notify` (see sw_notify_run_int.h): their setup
 * from the configuration, one delivery with retries (backoff, Retry-After,
 * rate limit, HA URLs), dead letters acknowledged before their offset is
 * committed, the Alertmanager re-sends of open episodes, and waiting
 * without leaving the consumer group. What to send and when is decided by
 * src/notify/sw_notify.h; the bodies come from sw_codec_pager.h.
 */
#include "sw_notify_run_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sw_alloc.h"
#include "sw_codec_record.h"
#include "sw_redact.h"

void sw_nrun_m_add(notify_t *n, sw_metric_t id, uint64_t v)
{
    if (n->m) sw_metrics_add(n->m, id, v);
}

uint64_t sw_nrun_rnd(notify_t *n)
{
    uint64_t x = n->rnd;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    n->rnd = x;
    return x;
}

int64_t sw_nrun_wall_ns(void)
{
    return sw_wall_ns();
}

/* ---- configuration ------------------------------------------------------ */

static size_t split_urls(char *buf, const char **out, size_t max)
{
    size_t k = 0;
    for (char *p = buf; p && *p && k < max;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        while (*p == ' ' || *p == '\t') p++;
        char *e = p + strlen(p);
        while (e > p && (e[-1] == ' ' || e[-1] == '\t')) *--e = '\0';
        if (*p) out[k++] = p;
        p = comma ? comma + 1 : NULL;
    }
    return k;
}

sw_err_t sw_notify_check_settings(const sw_settings_t *set, char *errstr, size_t errstr_size)
{
    const char *am = set->notify.alertmanager.url;
    const char *key = set->pager.routing_key;
    const char *wh = set->notify.webhook.url;
    if (!*am && !*key && !*wh) {
        sw_errfmt(errstr, errstr_size,
                  "no sink configured: set alertmanager.url, pagerduty.routing.key (with "
                  "pagerduty.url) or webhook.url");
        return SW_ERR_INVALID_ARG;
    }
    if (*key && strlen(key) != 32) {
        sw_errfmt(errstr, errstr_size,
                  "configuration property \"pagerduty.routing.key\": value [redacted] is %zu "
                  "characters long (expected the 32-character integration key of a PagerDuty "
                  "Events API v2 integration)",
                  strlen(key));
        return SW_ERR_INVALID_ARG;
    }
    if (*key && !*set->notify.pagerduty.url) {
        sw_errfmt(errstr, errstr_size,
                  "configuration property \"pagerduty.url\" is empty but pagerduty.routing.key "
                  "is set (expected the Events API v2 endpoint)");
        return SW_ERR_INVALID_ARG;
    }
    int64_t resend = set->notify.alertmanager_resend_ms, ends = set->pager.ends_after_ms;
    if (*am && (ends == 0 || resend >= ends)) {
        sw_errfmt(errstr, errstr_size,
                  "configuration property \"alertmanager.resend.ms\": value \"%lld\" is not below "
                  "alertmanager.ends.after.ms (%lld): open episodes would expire in Alertmanager "
                  "between re-sends (expected alertmanager.ends.after.ms > 0 and a few times "
                  "alertmanager.resend.ms)",
                  (long long)resend, (long long)ends);
        return SW_ERR_INVALID_ARG;
    }
    int64_t lo = set->notify.retry_backoff_ms, hi = set->notify.retry_backoff_max_ms;
    if (hi < lo) {
        sw_errfmt(errstr, errstr_size,
                  "configuration property \"notify.retry.backoff.max.ms\": value \"%lld\" is below "
                  "notify.retry.backoff.ms (%lld)",
                  (long long)hi, (long long)lo);
        return SW_ERR_INVALID_ARG;
    }
    return SW_OK;
}

bool sw_nsink_setup(notify_t *n, sw_sink_t kind, char *errstr, size_t errstr_size)
{
    const sw_settings_t *set = n->opts->set;
    const sw_settings_sink_t *ss = kind == SW_SINK_ALERTMANAGER ? &set->notify.alertmanager
                                   : kind == SW_SINK_PAGERDUTY  ? &set->notify.pagerduty
                                                                : &set->notify.webhook;
    sink_t *s = &n->sinks[kind];
    s->kind = kind;
    const char *name = sw_sink_name(kind);
    if (kind == SW_SINK_PAGERDUTY && !*set->pager.routing_key) return true;
    const char *urls = ss->url;
    if (!*urls) return true;
    s->on = true;
    s->urls_buf = sw_strdup(urls);
    s->n_urls = split_urls(s->urls_buf, s->urls,
                           kind == SW_SINK_ALERTMANAGER ? SW_NOTIFY_MAX_URLS : 1);
    if (kind == SW_SINK_ALERTMANAGER) {
        for (size_t i = 0; i < s->n_urls; i++) {
            size_t len = strlen(s->urls[i]);
            bool slash = len && s->urls[i][len - 1] == '/';
            s->am_targets[i] = sw_malloc(len + 16);
            snprintf(s->am_targets[i], len + 16, "%s%s", s->urls[i],
                     slash ? "api/v2/alerts" : "/api/v2/alerts");
            s->urls[i] = s->am_targets[i];
        }
    }
    double rate = ss->rate_limit;
    sw_notify_http_opts_t ho = {
        .urls = s->urls,
        .n_urls = s->n_urls,
        .timeout_ms = ss->timeout_ms,
        .bearer_token = ss->bearer_token,
        .basic_auth = ss->basic_auth,
        .ca_location = ss->ca_location,
        .hmac_secret = kind == SW_SINK_WEBHOOK ? set->notify.webhook_hmac_secret : NULL,
    };
    s->http = sw_notify_http_new(&ho, errstr, errstr_size);
    if (!s->http) return false;
    for (size_t i = 0; i < s->n_urls; i++)
        sw_notify_bucket_init(&s->bucket[i], rate, sw_clock_ms());
    sw_log(n->log, SW_LOG_INFO, "sink %s: %zu URL%s, first %s", name, s->n_urls,
           s->n_urls == 1 ? "" : "s", s->urls[0]);
    return true;
}

void sw_nsink_destroy(notify_t *n)
{
    for (int k = 0; k < SW_SINK__CNT; k++) {
        sink_t *s = &n->sinks[k];
        sw_notify_http_destroy(s->http);
        for (size_t i = 0; i < SW_NOTIFY_MAX_URLS; i++) free(s->am_targets[i]);
        free(s->urls_buf);
    }
}

/* ---- waiting ------------------------------------------------------------- */

/* Pause or resume fetching of the whole assignment (a delivery waits:
 * the consumer is still polled, so it stays in the group past
 * max.poll.interval.ms, but hands out nothing new meanwhile). */
void sw_nsink_set_paused(notify_t *n, bool pause)
{
    if (n->paused == pause) return;
    rd_kafka_topic_partition_list_t *a = NULL;
    if (rd_kafka_assignment(n->consumer, &a) == RD_KAFKA_RESP_ERR_NO_ERROR && a) {
        if (a->cnt) {
            if (pause) rd_kafka_pause_partitions(n->consumer, a);
            else rd_kafka_resume_partitions(n->consumer, a);
        }
        rd_kafka_topic_partition_list_destroy(a);
    }
    n->paused = pause;
}

/* Sleep @p ms in slices, re-sending due Alertmanager episodes and serving
 * the consumer (rebalances, group heartbeats) meanwhile; a message it
 * still hands out is stashed and handled after the current one.
 * @returns false when a stop came. */
bool sw_nsink_wait_ms(notify_t *n, int64_t ms)
{
    int64_t until = sw_clock_ms() + ms;
    sw_nsink_set_paused(n, true);
    while (sw_nrun_running(n)) {
        int64_t left = until - sw_clock_ms();
        if (left <= 0) return true;
        if (n->m) sw_metrics_heartbeat(n->m, sw_clock_ms());
        sw_nsink_resend_due(n);
        rd_kafka_poll(n->producer, 0);
        rd_kafka_message_t *rkm = rd_kafka_consumer_poll(n->consumer,
                                                         (int)(left > 100 ? 100 : left));
        if (rkm) {
            if (n->n_stash == n->cap_stash) {
                n->cap_stash = n->cap_stash ? n->cap_stash * 2 : 16;
                n->stash = sw_reallocarray(n->stash, n->cap_stash, sizeof(*n->stash));
            }
            n->stash[n->n_stash++] = rkm;
        }
    }
    return false;
}

/* One rate-limited POST to URL @p i of sink @p s. @returns the outcome. */
static sw_notify_outcome_t post_once(notify_t *n, sink_t *s, size_t i, const char *body, size_t len)
{
    int64_t wait;
    while ((wait = sw_notify_bucket_take(&s->bucket[i], sw_clock_ms())) > 0)
        if (!sw_nsink_wait_ms(n, wait)) return SW_NOTIFY_RETRY;
    sw_notify_http_post(s->http, i, body, len, &n->resp);
    sw_metrics_observe_request(n->m, (unsigned)s->kind, (uint64_t)n->resp.elapsed_ns);
    return sw_notify_classify(n->resp.status);
}

/* ---- dead letters ---------------------------------------------------------- */

/* Delivery reports of the dead letters. */
void sw_nsink_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    notify_t *n = ((sw_kafka_ctx_t *)opaque)->user;
    if (m->err) {
        n->dlq_failed++;
        sw_log(n->log, SW_LOG_ERROR, "dead letter to %s not written: %s", n->dlq_topic,
               rd_kafka_err2str(m->err));
    }
}

/* Write the dead letter and wait for the broker's acknowledgement (the
 * record's offset is committed after it). @returns false when it was not
 * written (the caller retries it). */
static bool dlq_send(notify_t *n, const rd_kafka_message_t *rkm, const char *reason,
                     const char *sink, long status, const sw_buf_t *answer)
{
    rd_kafka_headers_t *h = rd_kafka_headers_new(8);
    char *safe = sw_redact_dup(reason); /* a sink URL's credentials stay out */
    rd_kafka_header_add(h, "stormwatch.notify.reason", -1, safe, -1);
    free(safe);
    if (sink) rd_kafka_header_add(h, "stormwatch.notify.sink", -1, sink, -1);
    char tmp[32];
    if (status > 0) {
        snprintf(tmp, sizeof(tmp), "%ld", status);
        rd_kafka_header_add(h, "stormwatch.notify.http.status", -1, tmp, -1);
    }
    if (answer && answer->len)
        rd_kafka_header_add(h, "stormwatch.notify.http.body", -1, answer->data,
                            answer->len > SW_NOTIFY_DLQ_BODY_MAX ? SW_NOTIFY_DLQ_BODY_MAX
                                                                 : (ssize_t)answer->len);
    rd_kafka_header_add(h, "stormwatch.source.topic", -1, rd_kafka_topic_name(rkm->rkt), -1);
    snprintf(tmp, sizeof(tmp), "%d", (int)rkm->partition);
    rd_kafka_header_add(h, "stormwatch.source.partition", -1, tmp, -1);
    snprintf(tmp, sizeof(tmp), "%lld", (long long)rkm->offset);
    rd_kafka_header_add(h, "stormwatch.source.offset", -1, tmp, -1);
    rd_kafka_resp_err_t e = rd_kafka_producev(
        n->producer, RD_KAFKA_V_TOPIC(n->dlq_topic), RD_KAFKA_V_KEY(rkm->key, rkm->key_len),
        RD_KAFKA_V_VALUE(rkm->payload, rkm->len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END);
    if (e) {
        rd_kafka_headers_destroy(h);
        sw_log(n->log, SW_LOG_ERROR, "cannot dead-letter %s [%d] offset %lld to %s: %s",
               rd_kafka_topic_name(rkm->rkt), (int)rkm->partition, (long long)rkm->offset,
               n->dlq_topic, rd_kafka_err2str(e));
        return false;
    }
    uint64_t failed = n->dlq_failed;
    rd_kafka_flush(n->producer, 30000);
    if (n->dlq_failed != failed || rd_kafka_outq_len(n->producer) > 0) return false;
    n->dlq++;
    sw_nrun_m_add(n, SW_M_NOTIFY_DLQ, 1);
    return true;
}

/* dlq_send() until it is written, backing off between tries.
 * @returns false when a stop came first. */
bool sw_nsink_dlq(notify_t *n, const rd_kafka_message_t *rkm, const char *reason, const char *sink,
                  long status, const sw_buf_t *answer)
{
    for (unsigned attempt = 0;; attempt++) {
        if (dlq_send(n, rkm, reason, sink, status, answer)) return true;
        if (!sw_nsink_wait_ms(n, sw_notify_backoff_ms(&n->backoff, attempt, sw_nrun_rnd(n), -1)))
            return false;
    }
}

/* ---- delivery -------------------------------------------------------------- */

/* The body of @p rec for sink @p s into n->body. @returns false when the
 * sink sends nothing for it. */
static bool make_body(notify_t *n, sink_t *s, const sw_record_t *rec, const char *json, size_t len)
{
    n->body.len = 0;
    if (s->kind == SW_SINK_WEBHOOK) {
        sw_buf_put(&n->body, json, len);
        return true;
    }
    sw_pager_opts_t *po = s->kind == SW_SINK_ALERTMANAGER ? &n->am_opts : &n->pd_opts;
    po->now_ns = sw_nrun_wall_ns();
    return sw_pager_encode(rec, po, &n->body) != SW_PAGER_SKIP;
}

/* Deliver @p rec to sink @p s: retried until some URL accepts, or every
 * URL refuses for good (then dead-lettered). */
sw_deliv_t sw_nsink_deliver(notify_t *n, sink_t *s, const rd_kafka_message_t *rkm,
                            const sw_record_t *rec, const char *json, size_t len)
{
    for (unsigned attempt = 0;; attempt++) {
        if (!make_body(n, s, rec, json, len)) return SW_DELIV_DONE;
        bool accepted = false, retry = false;
        int64_t retry_after = -1;
        long status = 0;
        for (size_t i = 0; i < s->n_urls && !accepted; i++) {
            sw_notify_outcome_t o = post_once(n, s, i, n->body.data, n->body.len);
            if (!sw_nrun_running(n)) return SW_DELIV_STOPPED;
            status = n->resp.status;
            if (o == SW_NOTIFY_ACCEPTED) {
                accepted = true;
            } else if (o == SW_NOTIFY_RETRY) {
                retry = true;
                int64_t ra;
                if (sw_notify_retry_after(n->resp.retry_after, sw_wall_ms(), &ra) &&
                    ra > retry_after)
                    retry_after = ra;
                char what[300];
                if (status)
                    snprintf(what, sizeof(what), "HTTP %ld%s%s", status,
                             *n->resp.retry_after ? ", Retry-After: " : "", n->resp.retry_after);
                else snprintf(what, sizeof(what), "no answer: %s", n->resp.error);
                sw_log_limited(n->log, &n->lim_retry, SW_LOG_WARN,
                               "%s %s: %s for %s [%d] offset %lld; %s (attempt %u)",
                               sw_sink_name(s->kind), s->urls[i], what,
                               rd_kafka_topic_name(rkm->rkt), (int)rkm->partition,
                               (long long)rkm->offset,
                               i + 1 < s->n_urls ? "trying the next URL" : "retrying", attempt + 1);
            } else {
                sw_log(n->log, SW_LOG_WARN,
                       "%s %s refused %s [%d] offset %lld for good: HTTP %ld %.*s",
                       sw_sink_name(s->kind), s->urls[i], rd_kafka_topic_name(rkm->rkt),
                       (int)rkm->partition, (long long)rkm->offset, status,
                       (int)(n->resp.body.len > 300 ? 300 : n->resp.body.len),
                       n->resp.body.len ? n->resp.body.data : "");
            }
        }
        if (accepted) {
            n->delivered++;
            sw_nrun_m_add(n, (sw_metric_t)(SW_M_NOTIFY_DELIVERED + 2 * s->kind), 1);
            return SW_DELIV_DONE;
        }
        if (!retry) {
            char reason[128];
            snprintf(reason, sizeof(reason), "%s refused the record (HTTP %ld)",
                     sw_sink_name(s->kind), status);
            /* The answer is copied: retries of the dead letter reuse n->resp. */
            sw_buf_t answer;
            sw_buf_init(&answer);
            sw_buf_put(&answer, n->resp.body.data, n->resp.body.len);
            bool written = sw_nsink_dlq(n, rkm, reason, sw_sink_name(s->kind), status, &answer);
            sw_buf_clear(&answer);
            if (!written) return SW_DELIV_STOPPED;
            sw_nrun_m_add(n, (sw_metric_t)(SW_M_NOTIFY_DELIVERED + 2 * s->kind + 1), 1);
            return SW_DELIV_DONE;
        }
        sw_nrun_m_add(n, (sw_metric_t)(SW_M_NOTIFY_RETRIES + s->kind), 1);
        int64_t delay = sw_notify_backoff_ms(&n->backoff, attempt, sw_nrun_rnd(n), retry_after);
        if (!sw_nsink_wait_ms(n, delay)) return SW_DELIV_STOPPED;
    }
}

/* Re-send every due open episode to every Alertmanager URL, once each. */
void sw_nsink_resend_due(notify_t *n)
{
    sink_t *s = &n->sinks[SW_SINK_ALERTMANAGER];
    if (!s->on) return;
    int64_t now = sw_clock_ms();
    if (sw_notify_next_due(n->table) > now) return;
    sw_notify_episode_t due[SW_NOTIFY_DUE_BATCH];
    size_t k;
    while ((k = sw_notify_due(n->table, now, due, SW_NOTIFY_DUE_BATCH)) > 0) {
        for (size_t i = 0; i < k; i++) {
            /* Copied: the table entry may change while we wait below. */
            char *json = sw_memdup0(due[i].json, due[i].json_len);
            size_t len = due[i].json_len;
            int conf = due[i].episode_confidence;
            sw_arena_t arena;
            sw_arena_init(&arena);
            sw_record_t rec;
            char err[256];
            if (sw_record_parse_json(json, len, &arena, &rec, err, sizeof(err)) == SW_OK) {
                rec.episode_confidence = conf;
                sw_buf_t body;
                sw_buf_init(&body);
                n->am_opts.now_ns = sw_nrun_wall_ns();
                sw_pager_encode(&rec, &n->am_opts, &body);
                bool any = false;
                /* Its own answer buffer: a delivery may be waiting on n->resp. */
                sw_notify_resp_t resp;
                memset(&resp, 0, sizeof(resp));
                sw_buf_init(&resp.body);
                for (size_t u = 0; u < s->n_urls; u++) {
                    sw_notify_http_post(s->http, u, body.data, body.len, &resp);
                    sw_metrics_observe_request(n->m, SW_SINK_ALERTMANAGER,
                                               (uint64_t)resp.elapsed_ns);
                    if (sw_notify_classify(resp.status) == SW_NOTIFY_ACCEPTED) any = true;
                }
                sw_nrun_m_add(n, any ? SW_M_NOTIFY_RESENDS : SW_M_NOTIFY_RESEND_ERRORS, 1);
                if (!any)
                    sw_log_limited(n->log, &n->lim_retry, SW_LOG_WARN,
                                   "alertmanager: re-send failed (HTTP %ld%s%s); again in "
                                   "alertmanager.resend.ms",
                                   resp.status, *resp.error ? ", " : "", resp.error);
                sw_buf_clear(&resp.body);
                sw_buf_clear(&body);
            }
            sw_arena_clear(&arena);
            free(json);
        }
        if (k < SW_NOTIFY_DUE_BATCH) break;
    }
}
