/*
 * `stormwatch tail`: print every record of a topic as one JSON line, from
 * all partitions, without joining a consumer group: JSON values as they
 * are (on one line), Confluent-framed Avro alerts and telemetry decoded to
 * JSON, anything else base64. For tests and for humans watching alerts,
 * telemetry or the dead-letter topic. Commits nothing, decides nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_registry.h"
#include "sw_schemas.h"
#include "sw_kafka.h"
#include "sw_tail_render.h"
#include "sw_cli.h"
#include "sw_cmds.h"

extern char **environ;

/* Longest wait inside one poll, so signals and deadlines are seen (ms). */
#define TAIL_TICK_MS 100
/* Pause between metadata requests while the topic does not exist (ms). */
#define TAIL_METADATA_RETRY_MS 500

typedef struct tail_s {
    const char *topic;
    bool from_end;
    int64_t start_offset; /* kcat -o: RD_KAFKA_OFFSET_* or an offset (when !start_ts) */
    bool start_ts;        /* -o s@MS: start at the first record at or after start_ms */
    int64_t start_ms;
    bool end_ts; /* -o e@MS: stop each partition at its first record >= end_ms */
    int64_t end_ms;
    int64_t *stop;        /* -o e@MS: per partition the first offset not printed, -1 = its end */
    bool kcat_json;       /* -J: kcat's JSON envelope */
    const char *format;   /* -f: kcat's format string */
    const char *group;    /* -G: read as a member of this consumer group */
    int32_t only;         /* -p N: only this partition; -1 = every partition */
    bool exit_at_end;     /* -e: exit once every partition read reached its end */
    int64_t count;        /* stop after this many records, 0 = never */
    int64_t idle_exit_ms; /* 0 = never */
    int64_t timeout_ms;   /* 0 = never */
    bool envelope;
    bool text; /* --text: alert records as one human line */
    int32_t telemetry_id, alert_id;
    volatile sig_atomic_t *running;

    sw_log_t log;
    sw_kafka_ctx_t ctx;
    rd_kafka_t *rk;
    rd_kafka_topic_t *rkt;
    rd_kafka_queue_t *rkqu;
    int32_t nparts;
    bool *eof; /* per partition: reached the end once */
    int32_t neof;
    int32_t started;          /* partitions started (stopped at the end) */
    sw_render_t *render;      /* the record as a line */
    sw_registry_t *reg_alert; /* with schema.registry.url: alert writer schemas */
    sw_registry_t *reg_event; /* ... and telemetry writer schemas */
    sw_msg_header_t *hdrs;    /* the message view's headers */
    size_t caphdrs;
    sw_buf_t line;
    uint64_t printed;
    bool out_closed; /* stdout went away (EPIPE) */
    bool out_failed; /* any other write error */
} tail_t;

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: stormwatch tail -t TOPIC [OPTIONS]\n"
            "\n"
            "Prints every record of TOPIC, all partitions, as one JSON line each, without\n"
            "joining a consumer group (nothing is committed). JSON values are printed as\n"
            "they are (on one line); Confluent-framed Avro alerts and telemetry are decoded\n"
            "to JSON; anything else prints as {\"undecodable\": true, \"error\": \"...\",\n"
            "\"value_base64\": \"...\"}; a null value (tombstone) prints as null.\n"
            "\n"
            "Options:\n"
            "  -t, --topic TOPIC          topic to read (required); a topic that does not\n"
            "                             exist is named in a warning with the close names\n"
            "                             of the cluster's topics, then waited for (with -e:\n"
            "                             an error, exit 1)\n"
            "  -b, --bootstrap SERVERS    host:port,... (default: environment variable\n"
            "                             STORMWATCH_BOOTSTRAP_SERVERS)\n"
            "  --from beginning|end       where to start in each partition (default beginning)\n"
            "  -o beginning|end|OFFSET|-N|s@MS|e@MS\n"
            "                             kcat's start: an offset, the last N records of\n"
            "                             each partition, or the first record at or after a\n"
            "                             time (ms since the epoch); e@MS: stop each\n"
            "                             partition before its first record at or after MS,\n"
            "                             then exit (as kcat)\n"
            "  -J                         kcat -J's line: {\"topic\", \"partition\",\n"
            "                             \"offset\", \"tstype\", \"ts\", \"broker\",\n"
            "                             \"headers\", \"key\", \"payload\"} (+ \"schema_id\"\n"
            "                             and the decoded \"value\" for Confluent Avro)\n"
            "  -f FORMAT                  kcat -f: %%t topic, %%p partition, %%o offset,\n"
            "                             %%k key, %%s value (raw), %%K/%%S their lengths\n"
            "                             (-1: null), %%T timestamp (ms), %%h headers\n"
            "                             (n=v,...), %%%%; escapes \\n \\t \\r \\\\ (no\n"
            "                             newline is added)\n"
            "  -G GROUP                   read as a member of consumer group GROUP\n"
            "                             (balanced: partitions shared with the group's\n"
            "                             other members, offsets committed); -o is then\n"
            "                             beginning or end (auto.offset.reset), no -p\n"
            "  -p N                       read partition N only\n"
            "  -e                         exit once every partition read is at its end\n"
            "  -c N                       exit after N records (as --count)\n"
            "  --count N                  exit 0 after N records\n"
            "  --idle-exit MS             exit after MS without a record, counted once every\n"
            "                             partition has been read to its end\n"
            "  --timeout MS               exit after MS in total\n"
            "  --envelope                 print {\"topic\", \"partition\", \"offset\",\n"
            "                             \"timestamp_ms\", \"key\", \"headers\", \"value\"}\n"
            "                             (key: string or null; headers: name -> string, the\n"
            "                             last one of a repeated name)\n"
            "  --text                     alert records (JSON or Avro, every action: trigger,\n"
            "                             update, resolve, summary, crash, warning) as one\n"
            "                             human line each, as replay --output-format text;\n"
            "                             other values as their JSON\n"
            "  --schema-id-telemetry N    Avro schema id of telemetry (default 1)\n"
            "  --schema-id-alert N        Avro schema id of alerts (default 2)\n"
            "  -X schema.registry.url=URL Confluent Schema Registry: decode Avro records of\n"
            "                             any schema id it knows (alerts or telemetry; the\n"
            "                             --schema-id-* options are then not used; also\n"
            "                             schema.registry.basic.auth.user.info, ...ssl.*)\n"
            "  -X kafka.PROP=VALUE        librdkafka consumer property (repeatable; also\n"
            "                             kafka.consumer.PROP=VALUE)\n"
            "  --log-level LEVEL          error, warn, info or debug (default warn)\n"
            "  -h, --help                 show this help\n"
            "\n"
            "The STORMWATCH_* environment variables of 'stormwatch run' are read as well;\n"
            "-X wins.\n"
            "\n"
            "Exit status: 0 after --count records, --idle-exit, --timeout without --count, or\n"
            "SIGTERM/SIGINT; 1 when --timeout or --idle-exit ends it before --count records,\n"
            "or on a runtime error; 2 usage or configuration error.\n");
}

/* One line out, flushed: tests and humans read it as it comes. */
static void emit(tail_t *tl)
{
    errno = 0;
    if (fwrite(tl->line.data, 1, tl->line.len, stdout) != tl->line.len || fflush(stdout)) {
        if (errno == EPIPE) tl->out_closed = true;
        else tl->out_failed = true;
    }
}

/* ------------------------------------------------------------------ */
/* Kafka                                                               */
/* ------------------------------------------------------------------ */

/* "; did you mean X or Y?" from the cluster's topics close to the name. */
static void topic_suggestions(tail_t *tl, char *out, size_t out_size)
{
    out[0] = '\0';
    const struct rd_kafka_metadata *md = NULL;
    if (rd_kafka_metadata(tl->rk, 1, NULL, &md, 5000) || !md) return;
    size_t len = 0, shown = 0;
    size_t limit = strlen(tl->topic) / 3 + 2;
    for (int i = 0; i < md->topic_cnt && shown < 3; i++) {
        const char *t = md->topics[i].topic;
        if (t[0] == '_' || sw_edit_distance_ci(tl->topic, t) > limit) continue;
        int w = snprintf(out + len, out_size - len, "%s\"%s\"", shown ? " or " : "; did you mean ",
                         t);
        if (w < 0 || (size_t)w >= out_size - len) break;
        len += (size_t)w;
        shown++;
    }
    if (shown && len + 2 < out_size) memcpy(out + len, "?", 2);
    rd_kafka_metadata_destroy(md);
}

/* Partitions of the topic from metadata, waiting while the topic does
 * not exist. @returns SW_OK; SW_ERR_STATE when stopped or past the
 * deadline; SW_ERR_KAFKA for another error (errstr says which). */
static sw_err_t find_partitions(tail_t *tl, int64_t deadline_ms, char *errstr, size_t errstr_size)
{
    bool said = false;
    for (;;) {
        const struct rd_kafka_metadata *md = NULL;
        int64_t now = sw_clock_ms();
        int wait = 5000;
        if (deadline_ms && deadline_ms - now < wait) wait = (int)(deadline_ms - now);
        if (wait < 1) wait = 1;
        rd_kafka_resp_err_t err = rd_kafka_metadata(tl->rk, 0, tl->rkt, &md, wait);
        if (!err && md->topic_cnt == 1) err = md->topics[0].err;
        if (!err && md->topics[0].partition_cnt > 0) {
            tl->nparts = md->topics[0].partition_cnt;
            rd_kafka_metadata_destroy(md);
            return SW_OK;
        }
        if (md) rd_kafka_metadata_destroy(md);
        bool transient = err == RD_KAFKA_RESP_ERR_NO_ERROR ||
                         err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
                         err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
                         err == RD_KAFKA_RESP_ERR__TIMED_OUT ||
                         err == RD_KAFKA_RESP_ERR__TRANSPORT ||
                         err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN;
        if (!transient) {
            snprintf(errstr, errstr_size, "topic \"%s\": metadata: %s", tl->topic,
                     rd_kafka_err2str(err));
            return SW_ERR_KAFKA;
        }
        if (!said) {
            /* Not silence: a mistyped name is the likely cause. With -e
             * (read what is there and exit) it is an error. */
            char sugg[600];
            topic_suggestions(tl, sugg, sizeof(sugg));
            if (tl->exit_at_end) {
                snprintf(errstr, errstr_size, "topic \"%s\" does not exist (%s)%s", tl->topic,
                         err ? rd_kafka_err2str(err) : "no partitions", sugg);
                return SW_ERR_NOT_FOUND;
            }
            sw_log(&tl->log, SW_LOG_WARN, "topic \"%s\" does not exist yet (%s)%s; waiting for it",
                   tl->topic, err ? rd_kafka_err2str(err) : "no partitions", sugg);
            said = true;
        }
        for (int64_t until = sw_clock_ms() + TAIL_METADATA_RETRY_MS;
             *tl->running && sw_clock_ms() < until;)
            rd_kafka_poll(tl->rk, 50);
        if (!*tl->running || (deadline_ms && sw_clock_ms() >= deadline_ms)) {
            snprintf(errstr, errstr_size, "topic \"%s\" not found: %s", tl->topic,
                     err ? rd_kafka_err2str(err) : "no partitions");
            return SW_ERR_STATE;
        }
    }
}

/* The client: our consumer settings, the user's, then no group.id, so
 * that librdkafka creates no group handle (no coordinator lookups). */
static int tail_open(tail_t *tl, const sw_conf_t *conf, const char *bootstrap)
{
    char errstr[512];
    rd_kafka_conf_t *kc = sw_kafka_conf(conf, SW_KAFKA_CONSUMER, bootstrap, NULL, &tl->ctx, errstr,
                                        sizeof(errstr));
    if (kc && (sw_kafka_set(kc, "group.id", tl->group ? tl->group : "", errstr, sizeof(errstr)) ||
               sw_kafka_set(kc, "enable.partition.eof", "true", errstr, sizeof(errstr)) ||
               (tl->group &&
                sw_kafka_set(kc, "auto.offset.reset",
                             tl->start_offset == RD_KAFKA_OFFSET_END || tl->from_end ? "latest"
                                                                                     : "earliest",
                             errstr, sizeof(errstr))))) {
        rd_kafka_conf_destroy(kc);
        kc = NULL;
    }
    if (!kc) {
        fprintf(stderr, "stormwatch tail: %s\n", errstr);
        return SW_EXIT_USAGE;
    }
    tl->rk = rd_kafka_new(RD_KAFKA_CONSUMER, kc, errstr, sizeof(errstr));
    if (!tl->rk) {
        rd_kafka_conf_destroy(kc);
        fprintf(stderr, "stormwatch tail: %s\n", errstr);
        return SW_EXIT_USAGE;
    }
    tl->rkt = rd_kafka_topic_new(tl->rk, tl->topic, NULL);
    if (!tl->rkt) {
        fprintf(stderr, "stormwatch tail: topic \"%s\": %s\n", tl->topic,
                rd_kafka_err2str(rd_kafka_last_error()));
        return SW_EXIT_USAGE;
    }
    tl->rkqu = rd_kafka_queue_new(tl->rk);
    if (sw_kafka_reachable(tl->rk, bootstrap, errstr, sizeof(errstr)) != SW_OK) {
        fprintf(stderr, "stormwatch tail: %s\n", errstr);
        return SW_EXIT_RUNTIME;
    }
    return SW_EXIT_OK;
}

/* sw_render_plan_fn: the registries' plans. The previous message's plans
 * are no longer in use when a message asks for its alert plan (the first
 * lookup of each Avro value). */
static sw_err_t plan_of(void *opaque, int32_t id, bool alert, const sw_avro_plan_t **plan,
                        char *why, size_t why_size)
{
    tail_t *tl = opaque;
    if (alert) {
        sw_registry_reclaim(tl->reg_alert);
        if (tl->reg_event) sw_registry_reclaim(tl->reg_event);
    }
    sw_registry_t *reg = alert ? tl->reg_alert : tl->reg_event;
    if (!reg) {
        snprintf(
            why, why_size,
            "unknown schema id %ld (give -X schema.registry.url=URL to look writer schemas up)",
            (long)id);
        return SW_ERR_NOT_FOUND;
    }
    return sw_registry_plan(reg, id, plan, why, why_size);
}

/* What the renderer sees of @p rkm (its headers in tl->hdrs). */
static void view_of(tail_t *tl, const rd_kafka_message_t *rkm, sw_msg_view_t *v)
{
    memset(v, 0, sizeof(*v));
    v->topic = rd_kafka_topic_name(rkm->rkt);
    v->partition = rkm->partition;
    v->offset = rkm->offset;
    rd_kafka_timestamp_type_t tstype;
    v->timestamp_ms = rd_kafka_message_timestamp(rkm, &tstype);
    v->tstype = tstype == RD_KAFKA_TIMESTAMP_CREATE_TIME       ? SW_MSG_TS_CREATE
                : tstype == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME ? SW_MSG_TS_LOGAPPEND
                                                               : SW_MSG_TS_NONE;
    v->broker = rd_kafka_message_broker_id(rkm);
    v->key = rkm->key;
    v->key_len = rkm->key_len;
    v->payload = rkm->payload;
    v->len = rkm->len;
    rd_kafka_headers_t *hdrs = NULL;
    if (rd_kafka_message_headers(rkm, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR || !hdrs) return;
    sw_msg_header_t h;
    for (size_t i = 0; !rd_kafka_header_get_all(hdrs, i, &h.name, &h.value, &h.size); i++) {
        SW_GROW(tl->hdrs, v->nheaders, tl->caphdrs, 8);
        tl->hdrs[v->nheaders++] = h;
    }
    v->headers = tl->hdrs;
}

static void render(tail_t *tl, const rd_kafka_message_t *rkm)
{
    sw_msg_view_t v;
    view_of(tl, rkm, &v);
    if (tl->format) sw_render_format(tl->format, &tl->line, &v);
    else if (tl->kcat_json) sw_render_kcat_json(tl->render, &tl->line, &v);
    else if (tl->text) sw_render_text(tl->render, &tl->line, &v);
    else sw_render_message(tl->render, &tl->line, tl->envelope, &v);
}

/* -o s@MS / e@MS: each partition's first offset at or after @p ms into
 * @p out (-1: none that recent). @returns false (said) on an error. */
static bool offsets_for_time(tail_t *tl, int64_t ms, const char *what, int64_t *out)
{
    rd_kafka_topic_partition_list_t *times = rd_kafka_topic_partition_list_new(tl->nparts);
    for (int32_t p = 0; p < tl->nparts; p++)
        rd_kafka_topic_partition_list_add(times, tl->topic, p)->offset = ms;
    rd_kafka_resp_err_t e = rd_kafka_offsets_for_times(tl->rk, times, 10000);
    if (e) {
        fprintf(stderr, "stormwatch tail: -o %s%lld: offsets for the time: %s\n", what,
                (long long)ms, rd_kafka_err2str(e));
        rd_kafka_topic_partition_list_destroy(times);
        return false;
    }
    for (int32_t p = 0; p < tl->nparts; p++) {
        out[p] = times->elems[p].offset;
        sw_log(&tl->log, SW_LOG_DEBUG, "-o %s%lld: partition %d: offset %lld (%s)", what,
               (long long)ms, (int)p, (long long)out[p], rd_kafka_err2str(times->elems[p].err));
    }
    rd_kafka_topic_partition_list_destroy(times);
    return true;
}

/* -G GROUP: a balanced consumer of the topic; every assigned partition at
 * its end counts for -e and --idle-exit. @returns the exit status. */
static int group_loop(tail_t *tl, int64_t deadline)
{
    rd_kafka_poll_set_consumer(tl->rk);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(sub, tl->topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t e = rd_kafka_subscribe(tl->rk, sub);
    rd_kafka_topic_partition_list_destroy(sub);
    if (e) {
        fprintf(stderr, "stormwatch tail: -G %s: subscribe to \"%s\": %s\n", tl->group, tl->topic,
                rd_kafka_err2str(e));
        return SW_EXIT_RUNTIME;
    }
    int rc = SW_EXIT_OK;
    int64_t idle_since = 0;
    sw_log_limit_t lim = {0};
    for (;;) {
        sw_log_limit_tick(&tl->log, &lim);
        if (!*tl->running || tl->out_closed) break;
        if (tl->out_failed || tl->ctx.fatal) {
            fprintf(stderr, "stormwatch tail: %s\n",
                    tl->ctx.fatal ? tl->ctx.fatal_reason : strerror(errno));
            rc = SW_EXIT_RUNTIME;
            break;
        }
        if (tl->count && tl->printed >= (uint64_t)tl->count) break;
        int64_t now = sw_clock_ms();
        bool short_count = tl->count && tl->printed < (uint64_t)tl->count;
        if ((deadline && now >= deadline) || (tl->exit_at_end && idle_since) ||
            (tl->idle_exit_ms && idle_since && now - idle_since >= tl->idle_exit_ms)) {
            if (short_count)
                fprintf(stderr, "stormwatch tail: stopped with %llu of %lld records\n",
                        (unsigned long long)tl->printed, (long long)tl->count);
            rc = short_count ? SW_EXIT_RUNTIME : SW_EXIT_OK;
            break;
        }
        int wait = TAIL_TICK_MS;
        if (deadline && deadline - now < wait) wait = (int)(deadline - now);
        rd_kafka_message_t *rkm = rd_kafka_consumer_poll(tl->rk, wait < 1 ? 1 : wait);
        if (!rkm) continue;
        if (rkm->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            if (rkm->partition >= 0 && rkm->partition < tl->nparts) tl->eof[rkm->partition] = true;
            /* every partition this member holds is at its end */
            rd_kafka_topic_partition_list_t *as = NULL;
            bool all = rd_kafka_assignment(tl->rk, &as) == RD_KAFKA_RESP_ERR_NO_ERROR && as &&
                       as->cnt > 0;
            for (int i = 0; all && i < as->cnt; i++)
                all = as->elems[i].partition < tl->nparts && tl->eof[as->elems[i].partition];
            if (as) rd_kafka_topic_partition_list_destroy(as);
            if (all && !idle_since) idle_since = sw_clock_ms();
        } else if (rkm->err) {
            sw_log_limited(&tl->log, &lim, SW_LOG_WARN, "topic \"%s\" [%d]: %s", tl->topic,
                           (int)rkm->partition, rd_kafka_message_errstr(rkm));
        } else {
            render(tl, rkm);
            emit(tl);
            tl->printed++;
            if (idle_since) idle_since = sw_clock_ms();
        }
        rd_kafka_message_destroy(rkm);
    }
    rd_kafka_consumer_close(tl->rk); /* leave the group, commit */
    return rc;
}

/* Read until a stop condition. @returns the exit status. */
static int tail_loop(tail_t *tl)
{
    char errstr[512];
    int64_t start = sw_clock_ms();
    int64_t deadline = tl->timeout_ms ? start + tl->timeout_ms : 0;
    sw_err_t err = find_partitions(tl, deadline, errstr, sizeof(errstr));
    if (err) {
        if (!*tl->running) return SW_EXIT_OK;
        fprintf(stderr, "stormwatch tail: %s\n", errstr);
        return SW_EXIT_RUNTIME;
    }
    if (tl->only >= tl->nparts) {
        fprintf(stderr, "stormwatch tail: -p %d: topic \"%s\" has partitions 0..%d\n",
                (int)tl->only, tl->topic, (int)tl->nparts - 1);
        return SW_EXIT_USAGE;
    }
    tl->eof = sw_calloc((size_t)tl->nparts, sizeof(bool));
    if (tl->group) return group_loop(tl, deadline);
    if (tl->end_ts) {
        tl->stop = sw_calloc((size_t)tl->nparts, sizeof(*tl->stop));
        if (!offsets_for_time(tl, tl->end_ms, "e@", tl->stop)) return SW_EXIT_RUNTIME;
    }
    int64_t offset = tl->from_end ? RD_KAFKA_OFFSET_END : tl->start_offset;
    /* -o s@MS: each partition's first offset at or after the time. */
    int64_t *times = NULL;
    if (tl->start_ts) {
        times = sw_calloc((size_t)tl->nparts, sizeof(*times));
        if (!offsets_for_time(tl, tl->start_ms, "s@", times)) {
            free(times);
            return SW_EXIT_RUNTIME;
        }
    }
    for (int32_t p = 0; p < tl->nparts; p++) {
        if (tl->only >= 0 && p != tl->only) {
            /* Not read: counts as at its end. */
            tl->eof[p] = true;
            tl->neof++;
            continue;
        }
        int64_t at = offset;
        if (times) {
            at = times[p];
            if (at < 0) at = RD_KAFKA_OFFSET_END; /* nothing that recent */
        }
        if (rd_kafka_consume_start_queue(tl->rkt, p, at, tl->rkqu) == -1) {
            fprintf(stderr, "stormwatch tail: topic \"%s\" [%d]: cannot start: %s\n", tl->topic,
                    (int)p, rd_kafka_err2str(rd_kafka_last_error()));
            free(times);
            return SW_EXIT_RUNTIME;
        }
        tl->started = p + 1;
    }
    free(times);
    int64_t idle_since = 0; /* set once every partition reached its end */
    sw_log_limit_t lim = {0};
    for (;;) {
        sw_log_limit_tick(&tl->log, &lim);
        if (!*tl->running || tl->out_closed) return SW_EXIT_OK;
        if (tl->out_failed) {
            fprintf(stderr, "stormwatch tail: write: %s\n", strerror(errno));
            return SW_EXIT_RUNTIME;
        }
        if (tl->ctx.fatal) {
            fprintf(stderr, "stormwatch tail: fatal Kafka error: %s\n", tl->ctx.fatal_reason);
            return SW_EXIT_RUNTIME;
        }
        if (tl->count && tl->printed >= (uint64_t)tl->count) return SW_EXIT_OK;
        int64_t now = sw_clock_ms();
        bool short_count = tl->count && tl->printed < (uint64_t)tl->count;
        if (deadline && now >= deadline) {
            if (short_count)
                fprintf(stderr,
                        "stormwatch tail: timed out after %lld ms with %llu of %lld records\n",
                        (long long)tl->timeout_ms, (unsigned long long)tl->printed,
                        (long long)tl->count);
            return short_count ? SW_EXIT_RUNTIME : SW_EXIT_OK;
        }
        if (tl->exit_at_end && idle_since) {
            if (short_count)
                fprintf(stderr, "stormwatch tail: at the end with %llu of %lld records\n",
                        (unsigned long long)tl->printed, (long long)tl->count);
            return short_count ? SW_EXIT_RUNTIME : SW_EXIT_OK;
        }
        if (tl->idle_exit_ms && idle_since && now - idle_since >= tl->idle_exit_ms) {
            if (short_count)
                fprintf(stderr, "stormwatch tail: idle for %lld ms with %llu of %lld records\n",
                        (long long)tl->idle_exit_ms, (unsigned long long)tl->printed,
                        (long long)tl->count);
            return short_count ? SW_EXIT_RUNTIME : SW_EXIT_OK;
        }
        int wait = TAIL_TICK_MS;
        if (deadline && deadline - now < wait) wait = (int)(deadline - now);
        rd_kafka_poll(tl->rk, 0); /* error and log callbacks */
        rd_kafka_message_t *rkm = rd_kafka_consume_queue(tl->rkqu, wait < 1 ? 1 : wait);
        if (!rkm) continue;
        if (rkm->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            if (rkm->partition >= 0 && rkm->partition < tl->nparts && !tl->eof[rkm->partition]) {
                tl->eof[rkm->partition] = true;
                if (++tl->neof == tl->nparts) idle_since = sw_clock_ms();
            }
        } else if (rkm->err) {
            sw_log_limited(&tl->log, &lim, SW_LOG_WARN, "topic \"%s\" [%d]: %s", tl->topic,
                           (int)rkm->partition, rd_kafka_message_errstr(rkm));
        } else {
            if (tl->stop && rkm->partition >= 0 && rkm->partition < tl->nparts &&
                tl->stop[rkm->partition] >= 0 && rkm->offset >= tl->stop[rkm->partition]) {
                /* -o e@MS: this partition is done */
                if (!tl->eof[rkm->partition]) {
                    tl->eof[rkm->partition] = true;
                    if (++tl->neof == tl->nparts) idle_since = sw_clock_ms();
                }
                rd_kafka_message_destroy(rkm);
                continue;
            }
            render(tl, rkm);
            emit(tl);
            tl->printed++;
            if (idle_since) idle_since = sw_clock_ms();
        }
        rd_kafka_message_destroy(rkm);
    }
}

static void tail_clear(tail_t *tl)
{
    for (int32_t p = 0; p < tl->started; p++)
        if (tl->only < 0 || p == tl->only) rd_kafka_consume_stop(tl->rkt, p);
    if (tl->rkqu) rd_kafka_queue_destroy(tl->rkqu);
    if (tl->rkt) rd_kafka_topic_destroy(tl->rkt);
    if (tl->rk) rd_kafka_destroy(tl->rk);
    sw_render_destroy(tl->render);
    sw_registry_destroy(tl->reg_alert);
    sw_registry_destroy(tl->reg_event);
    sw_buf_clear(&tl->line);
    free(tl->hdrs);
    free(tl->eof);
    free(tl->stop);
}

int sw_cmd_tail(int argc, char **argv, const sw_stop_t *stop)
{
    static const struct option opts[] = {
        {"topic", required_argument, NULL, 't'},
        {"bootstrap", required_argument, NULL, 'b'},
        {"bootstrap-servers", required_argument, NULL, 'b'},
        {"from", required_argument, NULL, 'F'},
        {"count", required_argument, NULL, 'n'},
        {"idle-exit", required_argument, NULL, 'i'},
        {"timeout", required_argument, NULL, 'T'},
        {"envelope", no_argument, NULL, 'E'},
        {"text", no_argument, NULL, 'x'},
        {"offset", required_argument, NULL, 'o'},
        {"partition", required_argument, NULL, 'p'},
        {"exit", no_argument, NULL, 'e'},
        {"schema-id-telemetry", required_argument, NULL, 'S'},
        {"schema-id-alert", required_argument, NULL, 'A'},
        {"log-level", required_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    tail_t tl;
    memset(&tl, 0, sizeof(tl));
    tl.telemetry_id = 1;
    tl.alert_id = 2;
    tl.start_offset = RD_KAFKA_OFFSET_BEGINNING;
    tl.only = -1;
    const char *bootstrap_opt = NULL;
    sw_log_level_t level = SW_LOG_WARN;
    int rc = SW_EXIT_USAGE, c;
    char errstr[512];
    sw_conf_t *conf = sw_conf_new();
    if (!conf) {
        fprintf(stderr, "stormwatch tail: the built-in configuration is invalid\n");
        return SW_EXIT_RUNTIME;
    }
    if (sw_conf_load_env(conf, environ, errstr, sizeof(errstr)) != SW_OK) {
        fprintf(stderr, "stormwatch tail: %s\n", errstr);
        goto out;
    }
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:b:X:ho:p:c:eJf:G:", opts, NULL)) != -1) {
        int64_t v;
        switch (c) {
        case 't': tl.topic = optarg; break;
        case 'b': bootstrap_opt = optarg; break;
        case 'F':
            if (strcmp(optarg, "beginning") && strcmp(optarg, "end")) {
                fprintf(stderr,
                        "stormwatch tail: option --from: value \"%s\" is not beginning or end\n",
                        optarg);
                goto out;
            }
            tl.from_end = !strcmp(optarg, "end");
            break;
        case 'n':
        case 'c':
            if (!sw_cli_i64("tail", c == 'c' ? "-c" : "--count", optarg, 1, INT64_MAX, &tl.count))
                goto out;
            break;
        case 'o':
            /* kcat's -o: beginning, end, an offset, -N (the last N of each
             * partition) or s@MS (from a time, ms since the epoch). */
            if (!strcmp(optarg, "beginning")) {
                tl.start_offset = RD_KAFKA_OFFSET_BEGINNING;
            } else if (!strcmp(optarg, "end")) {
                tl.start_offset = RD_KAFKA_OFFSET_END;
            } else if (!strncmp(optarg, "s@", 2)) {
                if (!sw_cli_i64("tail", "-o s@", optarg + 2, 0, INT64_MAX, &tl.start_ms)) goto out;
                tl.start_ts = true;
            } else if (!strncmp(optarg, "e@", 2)) {
                if (!sw_cli_i64("tail", "-o e@", optarg + 2, 0, INT64_MAX, &tl.end_ms)) goto out;
                tl.end_ts = true;
                tl.exit_at_end = true; /* as kcat: done once every partition is */
            } else if (optarg[0] == '-') {
                if (!sw_cli_i64("tail", "-o -N", optarg + 1, 1, INT64_C(1) << 40, &v)) goto out;
                tl.start_offset = RD_KAFKA_OFFSET_TAIL(v);
            } else {
                if (!sw_cli_i64("tail", "-o", optarg, 0, INT64_MAX, &tl.start_offset)) goto out;
            }
            break;
        case 'p':
            if (!sw_cli_i64("tail", "-p", optarg, 0, INT32_MAX, &v)) goto out;
            tl.only = (int32_t)v;
            break;
        case 'e': tl.exit_at_end = true; break;
        case 'J': tl.kcat_json = true; break;
        case 'f':
            if (sw_render_format_check(optarg, errstr, sizeof(errstr)) != SW_OK) {
                fprintf(stderr, "stormwatch tail: %s\n", errstr);
                goto out;
            }
            tl.format = optarg;
            break;
        case 'G':
            if (!*optarg) {
                fprintf(stderr, "stormwatch tail: option -G: the group name is empty\n");
                goto out;
            }
            tl.group = optarg;
            break;
        case 'i':
            if (!sw_cli_i64("tail", "--idle-exit", optarg, 1, INT64_C(1) << 40, &tl.idle_exit_ms))
                goto out;
            break;
        case 'T':
            if (!sw_cli_i64("tail", "--timeout", optarg, 1, INT64_C(1) << 40, &tl.timeout_ms))
                goto out;
            break;
        case 'E': tl.envelope = true; break;
        case 'x': tl.text = true; break;
        case 'S':
            if (!sw_cli_i64("tail", "--schema-id-telemetry", optarg, 0, INT32_MAX, &v)) goto out;
            tl.telemetry_id = (int32_t)v;
            break;
        case 'A':
            if (!sw_cli_i64("tail", "--schema-id-alert", optarg, 0, INT32_MAX, &v)) goto out;
            tl.alert_id = (int32_t)v;
            break;
        case 'X':
            if (!strcmp(optarg, "list")) { /* librdkafka's properties, as kcat -X list */
                rd_kafka_conf_properties_show(stdout);
                rc = SW_EXIT_OK;
                goto out;
            }
            if (!sw_kafka_tool_prop(conf, optarg, SW_KAFKA_CONSUMER, "tail")) goto out;
            break;
        case 'L':
            if (!sw_cli_log_level("tail", optarg, &level)) goto out;
            break;
        case 'h':
            usage(stdout);
            rc = SW_EXIT_OK;
            goto out;
        default: rc = sw_cli_bad_option("tail", argc, argv, optind, optopt); goto out;
        }
    }
    if (optind < argc) {
        fprintf(stderr,
                "stormwatch tail: unexpected argument '%s' (see 'stormwatch tail --help')\n",
                argv[optind]);
        goto out;
    }
    if (!tl.topic || !*tl.topic) {
        fprintf(stderr,
                "stormwatch tail: option -t TOPIC is required (see 'stormwatch tail --help')\n");
        goto out;
    }
    if ((tl.kcat_json != 0) + (tl.format != NULL) + (tl.envelope != 0) + (tl.text != 0) > 1) {
        fprintf(stderr, "stormwatch tail: -J, -f, --envelope and --text exclude each other\n");
        goto out;
    }
    if (tl.group && (tl.only >= 0 || tl.start_ts || tl.end_ts ||
                     (tl.start_offset != RD_KAFKA_OFFSET_BEGINNING &&
                      tl.start_offset != RD_KAFKA_OFFSET_END))) {
        fprintf(stderr,
                "stormwatch tail: -G %s: the group decides the partitions and their "
                "offsets; -o can only be beginning or end (for partitions the group has "
                "no offset for), and -p is not allowed\n",
                tl.group);
        goto out;
    }
    /* tail sets these itself; say so rather than ignore the user's. */
    static const char *const fixed[] = {"kafka.group.id", "kafka.consumer.group.id",
                                        "kafka.enable.partition.eof",
                                        "kafka.consumer.enable.partition.eof"};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        if (sw_conf_get_str(conf, fixed[i])) {
            fprintf(stderr,
                    "stormwatch tail: property \"%s\" cannot be set: tail reads without a "
                    "consumer group and needs end-of-partition events\n",
                    fixed[i]);
            goto out;
        }
    sw_settings_t set;
    sw_conf_settings(conf, &set);
    const char *bootstrap = sw_kafka_tool_bootstrap(conf, &set, bootstrap_opt, SW_KAFKA_CONSUMER,
                                                    "tail");
    if (!bootstrap) goto out;
    tl.log = sw_log_make(level, "stormwatch tail");
    tl.ctx.log = &tl.log;
    tl.ctx.user = &tl;
    tl.running = stop->running;
    if (set.registry.urls.n > 0) {
        char rerr[512];
        tl.reg_alert = sw_registry_from_settings(&set, sw_schema_first_cause_alert,
                                                 sw_schema_first_cause_alert_len, -1, false, rerr,
                                                 sizeof(rerr));
        tl.reg_event = sw_registry_from_settings(&set, sw_schema_telemetry_event,
                                                 sw_schema_telemetry_event_len, -1, false, rerr,
                                                 sizeof(rerr));
    }
    tl.render = sw_render_new(tl.telemetry_id, tl.alert_id, tl.reg_alert ? plan_of : NULL, &tl);
    sw_buf_init(&tl.line);
    if ((rc = tail_open(&tl, conf, bootstrap)) != SW_EXIT_OK) goto out;
    rc = tail_loop(&tl);
out:
    tail_clear(&tl);
    sw_conf_destroy(conf);
    return rc;
}
