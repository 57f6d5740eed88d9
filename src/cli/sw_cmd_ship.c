/*
 * `stormwatch ship`: follow stormlog's telemetry sink (a directory of
 * rolling JSONL segments, or one file like tail -F) and produce every line
 * to Kafka keyed by job_id, as `stormwatch produce` does (JSON or Avro,
 * murmur2 placement). Positions are checkpointed only up to what Kafka
 * acknowledged; reading pauses while the in-flight limits are reached.
 * The following itself is src/ship (sw_follow), tested without Kafka.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_codec_avro.h"
#include "sw_codec_telemetry.h"
#include "sw_follow.h"
#include "sw_http.h"
#include "sw_kafka.h"
#include "sw_metrics.h"
#include "sw_ship_acks.h"
#include "sw_ship_ckpt.h"
#include "sw_cli.h"
#include "sw_cmds.h"

extern char **environ;

#define CT_JSON "application/json"
#define CT_AVRO "application/vnd.confluent.avro"

/* In-flight full and the oldest message unacknowledged this long: reading
 * paused because Kafka is unreachable (said, metric, /readyz 503). */
#define SHIP_STALL_MS 2000

/* Producer settings: as produce's (murmur2 placement, batching), plus no
 * message timeout and idempotence: an outage delays delivery, never fails
 * it, and retries do not duplicate. Before the user's -X, which wins. */
static const struct {
    const char *name, *value;
} k_defaults[] = {
    {"kafka.producer.partitioner", "murmur2_random"},
    {"kafka.producer.linger.ms", "20"},
    {"kafka.producer.batch.num.messages", "20000"},
    {"kafka.producer.queue.buffering.max.messages", "1000000"},
    {"kafka.producer.queue.buffering.max.kbytes", "1048576"},
    {"kafka.producer.message.timeout.ms", "0"},
    {"kafka.producer.enable.idempotence", "true"},
};

typedef struct ship_s {
    const char *topic;
    const char *ckpt_path;
    bool avro;
    int32_t schema_id;
    bool skip_invalid;
    bool once;
    int64_t max_inflight;       /* messages */
    int64_t max_inflight_bytes; /* bytes */
    int64_t ckpt_interval_ms;
    int64_t scan_interval_ms;
    int64_t stop_timeout_ms;
    const sw_stop_t *stop;

    sw_log_t log;
    sw_log_limit_t lim_invalid, lim_failed;
    sw_kafka_ctx_t ctx;
    rd_kafka_t *rk;
    rd_kafka_topic_t *rkt;
    sw_tdec_t *dec;
    sw_buf_t enc;
    sw_follow_t *fol;
    sw_acks_t acks;
    sw_metrics_t *m; /* NULL without metrics.listen */

    uint64_t delivered, delivered_bytes, failed, invalid, sent;
    bool ckpt_dirty;
    bool paused;
    bool stalled_said;
} ship_t;

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: stormwatch ship -t TOPIC [OPTIONS] PATH\n"
            "\n"
            "Follows stormlog's telemetry sink and produces every line to Kafka, keyed by\n"
            "job_id as 'stormwatch produce' does. PATH is a directory of rolling JSONL\n"
            "segments (plain or gzip; new segments, renames, gzip of a segment and pruning\n"
            "followed) or one file, followed like tail -F (rotation, truncation). Positions\n"
            "are kept in a checkpoint file, advanced only to what Kafka acknowledged: after\n"
            "a restart or kill -9 nothing is lost and at most the unacknowledged tail is\n"
            "sent again. A segment deleted before it was read to its end is reported as\n"
            "lost (file and byte range). While Kafka is unreachable, reading pauses once\n"
            "the in-flight limits are reached (nothing is dropped). See docs/ship.md.\n"
            "\n"
            "Options:\n"
            "  -t, --topic TOPIC        topic to write to (required)\n"
            "  -b, --bootstrap SERVERS  host:port,... (default: environment variable\n"
            "                           STORMWATCH_BOOTSTRAP_SERVERS)\n"
            "  --checkpoint FILE        checkpoint file (default: .stormwatch-ship.checkpoint\n"
            "                           in the directory followed, or beside the file)\n"
            "  --pattern GLOB           segment names in a directory (default *.jsonl*)\n"
            "  --format json|avro       value encoding (default json)\n"
            "  --schema-id N            Confluent schema id for avro (default 1; with\n"
            "                           -X schema.registry.url=URL: as produce, the registry's)\n"
            "  --invalid send|skip      invalid lines: sent as they are with an empty key (the\n"
            "                           daemon dead-letters them) or skipped; both counted and\n"
            "                           logged as FILE:LINE (default send)\n"
            "  --rotate-wait MS         a file renamed away is read until it has been idle this\n"
            "                           long; a deleted one not read by then is lost\n"
            "                           (default 30000)\n"
            "  --max-inflight N         unacknowledged messages before reading pauses\n"
            "                           (default 100000)\n"
            "  --max-inflight-bytes N   unacknowledged bytes before reading pauses\n"
            "                           (default 67108864)\n"
            "  --checkpoint-interval MS checkpoint at most this often (default 1000)\n"
            "  --scan-interval MS       look for new, renamed, deleted files (default 250)\n"
            "  --stop-timeout MS        on SIGTERM, wait this long for deliveries (default\n"
            "                           10000)\n"
            "  --once                   ship what is there, wait for every delivery, exit\n"
            "  --metrics-listen ADDR    /metrics, /healthz, /readyz on ADDR as for run\n"
            "                           (default: STORMWATCH_METRICS_LISTEN)\n"
            "  -X kafka.PROP=VALUE      librdkafka producer property (repeatable; also\n"
            "                           kafka.producer.PROP=VALUE); later ones win\n"
            "  --log-level LEVEL        error, warn, info or debug (default info)\n"
            "  -h, --help               show this help\n"
            "\n"
            "Exit status: 0 stopped cleanly (every line read was delivered), 1 runtime\n"
            "failure or deliveries still outstanding at the stop, 2 usage or configuration\n"
            "error.\n");
}

/* Runs from rd_kafka_poll()/flush() on this thread. */
static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *rkm, void *opaque)
{
    (void)rk;
    ship_t *sh = ((sw_kafka_ctx_t *)opaque)->user;
    uint64_t seq = (uint64_t)(uintptr_t)rkm->_private;
    if (rkm->err) {
        /* Permanent (no message timeout): the line will not be sent again. */
        sh->failed++;
        if (sh->m) sw_metrics_add(sh->m, SW_M_SHIP_FAILED, 1);
        if (seq >= sh->acks.head && seq < sh->acks.tail) {
            const sw_ack_t *a = &sh->acks.v[seq & (sh->acks.cap - 1)];
            const char *path = sw_follow_seg_path(sh->fol, a->seg);
            sw_log_limited(&sh->log, &sh->lim_failed, SW_LOG_ERROR,
                           "%s:%" PRIu64 ": not delivered: %s", path ? path : "?", a->lineno,
                           rd_kafka_err2str(rkm->err));
        }
    } else {
        sh->delivered++;
        sh->delivered_bytes += rkm->len;
        if (sh->m) {
            sw_metrics_add(sh->m, SW_M_SHIP_EVENTS, 1);
            sw_metrics_add(sh->m, SW_M_SHIP_BYTES, rkm->len);
        }
    }
    sw_acks_done(&sh->acks, seq);
}

/* Acknowledged frontier -> follower positions. */
static void take_acks(ship_t *sh)
{
    sw_ack_t a;
    while (sw_acks_pop(&sh->acks, &a)) {
        sw_follow_acked(sh->fol, a.seg, a.end, a.lineno);
        sh->ckpt_dirty = true;
    }
}

/* Queue one message. @returns false when the producer refuses for good
 * (fatal); a full local queue is waited out. */
static bool send_msg(ship_t *sh, const sw_follow_line_t *ln, const char *key, size_t key_len,
                     const void *value, size_t len, const char *ct)
{
    uint64_t seq = sw_acks_push(&sh->acks, ln->seg, ln->end, ln->lineno, (uint32_t)len,
                                sw_clock_ms());
    for (;;) {
        rd_kafka_resp_err_t err = rd_kafka_producev(
            sh->rk, RD_KAFKA_V_RKT(sh->rkt), RD_KAFKA_V_PARTITION(RD_KAFKA_PARTITION_UA),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key, key_len),
            RD_KAFKA_V_VALUE((void *)value, len), RD_KAFKA_V_HEADER("content-type", ct, -1),
            RD_KAFKA_V_OPAQUE((void *)(uintptr_t)seq), RD_KAFKA_V_END);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            sh->sent++;
            if ((sh->sent & 1023) == 0) rd_kafka_poll(sh->rk, 0);
            return true;
        }
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL && !sh->ctx.fatal) {
            rd_kafka_poll(sh->rk, 10);
            continue;
        }
        if (err == RD_KAFKA_RESP_ERR__FATAL || sh->ctx.fatal) return false;
        /* This message only (too large): counted, not sent again. */
        sh->failed++;
        if (sh->m) sw_metrics_add(sh->m, SW_M_SHIP_FAILED, 1);
        sw_log_limited(&sh->log, &sh->lim_failed, SW_LOG_ERROR, "%s:%" PRIu64 ": not sent: %s",
                       ln->path, ln->lineno, rd_kafka_err2str(err));
        sw_acks_done(&sh->acks, seq);
        return true;
    }
}

/* An event that is not sent: its place is done at once (in order). */
static void send_none(ship_t *sh, const sw_follow_line_t *ln)
{
    uint64_t seq = sw_acks_push(&sh->acks, ln->seg, ln->end, ln->lineno, 0, sw_clock_ms());
    sw_acks_done(&sh->acks, seq);
}

static bool ship_line(ship_t *sh, const sw_follow_line_t *ln)
{
    char errstr[512];
    if (ln->too_long) {
        sh->invalid++;
        if (sh->m) sw_metrics_add(sh->m, SW_M_SHIP_INVALID_LINES, 1);
        sw_log_limited(&sh->log, &sh->lim_invalid, SW_LOG_WARN,
                       "%s:%" PRIu64 ": line too long: skipped", ln->path, ln->lineno);
        send_none(sh, ln);
        return true;
    }
    if (sw_tdec_blank(ln->data, ln->len)) {
        send_none(sh, ln);
        return true;
    }
    sw_event_t ev;
    sw_err_t err = sw_tdec_json(sh->dec, ln->data, ln->len, &ev, errstr, sizeof(errstr));
    if (!err && sh->avro) {
        sh->enc.len = 0;
        err = sw_avro_encode_event(&ev, sh->schema_id, &sh->enc, errstr, sizeof(errstr));
    }
    if (err) {
        sh->invalid++;
        if (sh->m) sw_metrics_add(sh->m, SW_M_SHIP_INVALID_LINES, 1);
        sw_log_limited(&sh->log, &sh->lim_invalid, SW_LOG_WARN, "%s:%" PRIu64 ": %s (%s)", ln->path,
                       ln->lineno, errstr, sh->skip_invalid ? "skipped" : "sent as is");
        if (sh->skip_invalid) {
            send_none(sh, ln);
            return true;
        }
        return send_msg(sh, ln, "", 0, ln->data, ln->len, CT_JSON);
    }
    const char *key = ev.has_job_id ? ev.job_id.ptr : "";
    size_t key_len = ev.has_job_id ? ev.job_id.len : 0;
    if (sh->avro) return send_msg(sh, ln, key, key_len, sh->enc.data, sh->enc.len, CT_AVRO);
    return send_msg(sh, ln, key, key_len, ln->data, ln->len, CT_JSON);
}

static void log_events(ship_t *sh)
{
    sw_follow_ev_t ev;
    while (sw_follow_take_event(sh->fol, &ev)) {
        sh->ckpt_dirty = true;
        switch (ev.kind) {
        case SW_FOLLOW_LOST:
            if (ev.to == 0) {
                sw_log(&sh->log, SW_LOG_ERROR,
                       "data loss: %s (whole segment, size unknown) never shipped: %s", ev.path,
                       ev.detail);
                break;
            }
            sw_log(&sh->log, SW_LOG_ERROR,
                   "data loss: %s bytes %" PRIu64 " to %" PRIu64 " (%" PRIu64
                   " bytes) never shipped: %s",
                   ev.path, ev.from, ev.to, ev.to - ev.from, ev.detail);
            break;
        case SW_FOLLOW_ERROR: sw_log(&sh->log, SW_LOG_ERROR, "%s: %s", ev.path, ev.detail); break;
        case SW_FOLLOW_TRUNCATED:
            sw_log(&sh->log, SW_LOG_WARN, "%s: truncated (%s)", ev.path, ev.detail);
            break;
        case SW_FOLLOW_RESUMED:
        case SW_FOLLOW_MOVED:
            sw_log(&sh->log, SW_LOG_INFO, "%s: %s at byte %" PRIu64 "%s%s", ev.path,
                   sw_follow_ev_name(ev.kind), ev.from, ev.detail[0] ? " " : "", ev.detail);
            break;
        case SW_FOLLOW_NEW:
        case SW_FOLLOW_DONE:
        case SW_FOLLOW__CNT:
            sw_log(&sh->log, SW_LOG_INFO, "%s: %s", ev.path, sw_follow_ev_name(ev.kind));
            break;
        }
    }
}

static void update_metrics(ship_t *sh)
{
    if (!sh->m) return;
    sw_follow_stats_t st;
    sw_follow_stats(sh->fol, &st);
    sw_metrics_t *m = sh->m;
    /* Counters kept by the follower: add the difference. */
    uint64_t prev_lost = (uint64_t)sw_metrics_get(m, SW_M_SHIP_LOST_BYTES);
    if (st.lost_bytes > prev_lost)
        sw_metrics_add(m, SW_M_SHIP_LOST_BYTES, st.lost_bytes - prev_lost);
    uint64_t prev_seg = (uint64_t)sw_metrics_get(m, SW_M_SHIP_LOST_SEGMENTS);
    if (st.lost_segments > prev_seg)
        sw_metrics_add(m, SW_M_SHIP_LOST_SEGMENTS, st.lost_segments - prev_seg);
    uint64_t prev_tr = (uint64_t)sw_metrics_get(m, SW_M_SHIP_TRUNCATIONS);
    if (st.truncations > prev_tr)
        sw_metrics_add(m, SW_M_SHIP_TRUNCATIONS, st.truncations - prev_tr);
    uint64_t prev_rot = (uint64_t)sw_metrics_get(m, SW_M_SHIP_ROTATIONS);
    if (st.rotations > prev_rot) sw_metrics_add(m, SW_M_SHIP_ROTATIONS, st.rotations - prev_rot);
    sw_metrics_set(m, SW_M_SHIP_SEGMENTS, (int64_t)st.segments);
    sw_metrics_set(m, SW_M_SHIP_LAG_BYTES, (int64_t)st.lag_bytes);
    sw_metrics_set(m, SW_M_SHIP_INFLIGHT, (int64_t)sw_acks_count(&sh->acks));
    sw_metrics_set(m, SW_M_SHIP_INFLIGHT_BYTES, (int64_t)sh->acks.bytes);
    sw_metrics_set(m, SW_M_SHIP_PAUSED, sh->paused ? 1 : 0);
    /* Readiness: paused (above), or a message unacknowledged for 5 s. */
    sw_metrics_set_output_state(m, sw_acks_oldest_ms(&sh->acks), sh->paused);
    sw_metrics_heartbeat(m, sw_clock_ms());
}

static void checkpoint(ship_t *sh)
{
    char errstr[600];
    sw_ship_pos_t *v;
    size_t n = sw_follow_positions(sh->fol, &v);
    if (sw_ship_ckpt_save(sh->ckpt_path, v, n, errstr, sizeof(errstr)) != SW_OK) {
        sw_log(&sh->log, SW_LOG_ERROR, "%s", errstr);
        if (sh->m) sw_metrics_add(sh->m, SW_M_SHIP_CHECKPOINT_ERRORS, 1);
    } else {
        sh->ckpt_dirty = false;
        if (sh->m) sw_metrics_add(sh->m, SW_M_SHIP_CHECKPOINTS, 1);
    }
    free(v);
}

static bool inflight_full(const ship_t *sh)
{
    return (int64_t)sw_acks_count(&sh->acks) >= sh->max_inflight ||
           (int64_t)sh->acks.bytes >= sh->max_inflight_bytes;
}

static void set_paused(ship_t *sh, bool paused)
{
    if (paused == sh->paused) return;
    sh->paused = paused;
    if (paused) {
        int64_t oldest = sw_acks_oldest_ms(&sh->acks);
        sw_log(&sh->log, SW_LOG_WARN,
               "reading paused: %" PRIu64 " messages (%" PRIu64
               " bytes) wait for Kafka's acknowledgement, the oldest for %.1f s%s%s",
               sw_acks_count(&sh->acks), sh->acks.bytes,
               oldest ? (double)(sw_clock_ms() - oldest) / 1000.0 : 0.0,
               sh->ctx.last_err ? "; last error: " : "",
               sh->ctx.last_err ? sh->ctx.last_reason : "");
    } else {
        sw_log(&sh->log, SW_LOG_INFO, "reading resumed: Kafka acknowledges again");
    }
}

/* The main loop. @returns the exit status. */
static int ship_loop(ship_t *sh)
{
    int64_t next_scan = 0, next_ckpt = sw_clock_ms() + sh->ckpt_interval_ms;
    int64_t next_metrics = 0;
    int rc = SW_EXIT_OK;
    while (*sh->stop->running && !sh->ctx.fatal) {
        int64_t now = sw_clock_ms();
        if (now >= next_scan) {
            sw_follow_scan(sh->fol, now);
            log_events(sh);
            next_scan = now + sh->scan_interval_ms;
        }
        bool idle = true;
        int budget = 10000; /* lines per turn, so DRs and scans keep up */
        while (budget-- > 0 && !inflight_full(sh)) {
            sw_follow_line_t ln;
            if (!sw_follow_next(sh->fol, &ln)) break;
            idle = false;
            if (!ship_line(sh, &ln)) break;
        }
        /* Full in-flight is flow control; full with nothing acknowledged
         * for SHIP_STALL_MS is Kafka unreachable (or far too slow). */
        int64_t oldest0 = sw_acks_oldest_ms(&sh->acks);
        bool stalled = inflight_full(sh) && oldest0 && sw_clock_ms() - oldest0 >= SHIP_STALL_MS;
        if (stalled != sh->paused) {
            set_paused(sh, stalled);
            update_metrics(sh); /* /readyz at once */
        }
        rd_kafka_poll(sh->rk, idle || sh->paused ? 50 : 0);
        take_acks(sh);
        log_events(sh);
        now = sw_clock_ms();
        int64_t oldest = sw_acks_oldest_ms(&sh->acks);
        if (oldest && now - oldest > 10000 && !sh->stalled_said) {
            sw_log(&sh->log, SW_LOG_WARN,
                   "kafka: a message has waited %.1f s for its acknowledgement%s%s",
                   (double)(now - oldest) / 1000.0, sh->ctx.last_err ? "; last error: " : "",
                   sh->ctx.last_err ? sh->ctx.last_reason : "");
            sh->stalled_said = true;
        } else if (!oldest) {
            sh->stalled_said = false;
        }
        if (sh->ckpt_dirty && now >= next_ckpt) {
            checkpoint(sh);
            next_ckpt = now + sh->ckpt_interval_ms;
        }
        if (now >= next_metrics) {
            update_metrics(sh);
            next_metrics = now + 200;
        }
        if (sh->once && idle && sw_acks_count(&sh->acks) == 0 && sw_follow_caught_up(sh->fol))
            break;
    }
    /* Stop: deliver what is in flight (bounded), checkpoint what was acknowledged. */
    int64_t deadline = sw_clock_ms() + sh->stop_timeout_ms;
    while (sw_acks_count(&sh->acks) > 0 && !sh->ctx.fatal && sw_clock_ms() < deadline &&
           *sh->stop->stops < 2) {
        rd_kafka_poll(sh->rk, 50);
        take_acks(sh);
    }
    take_acks(sh);
    log_events(sh);
    checkpoint(sh);
    update_metrics(sh);
    if (sw_acks_count(&sh->acks) > 0) {
        sw_log(&sh->log, SW_LOG_WARN,
               "stopped with %" PRIu64
               " messages unacknowledged: they are sent again at the "
               "next start",
               sw_acks_count(&sh->acks));
        rd_kafka_purge(sh->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        rd_kafka_poll(sh->rk, 0);
        rc = SW_EXIT_RUNTIME;
    }
    if (sh->ctx.fatal) {
        sw_log(&sh->log, SW_LOG_ERROR, "fatal Kafka error: %s", sh->ctx.fatal_reason);
        rc = SW_EXIT_RUNTIME;
    }
    sw_follow_stats_t st;
    sw_follow_stats(sh->fol, &st);
    sw_log(&sh->log, SW_LOG_INFO,
           "shipped %" PRIu64 " messages (%" PRIu64 " bytes) to %s; %" PRIu64
           " invalid lines, %" PRIu64 " failed, %" PRIu64 " bytes lost",
           sh->delivered, sh->delivered_bytes, sh->topic, sh->invalid, sh->failed, st.lost_bytes);
    return rc;
}

static int ship_open(ship_t *sh, const sw_conf_t *conf, const char *bootstrap)
{
    char errstr[512];
    if (sw_kafka_producer_new(conf, bootstrap, &sh->ctx, dr_cb, sh->topic, &sh->rk, &sh->rkt,
                              errstr, sizeof(errstr)) != SW_OK) {
        fprintf(stderr, "stormwatch ship: %s\n", errstr);
        return SW_EXIT_USAGE;
    }
    return SW_EXIT_OK;
}

enum {
    OPT_CKPT = 256,
    OPT_PATTERN,
    OPT_FORMAT,
    OPT_SCHEMA_ID,
    OPT_INVALID,
    OPT_ROTATE_WAIT,
    OPT_MAX_INFLIGHT,
    OPT_MAX_INFLIGHT_BYTES,
    OPT_CKPT_INTERVAL,
    OPT_SCAN_INTERVAL,
    OPT_STOP_TIMEOUT,
    OPT_ONCE,
    OPT_METRICS_LISTEN,
    OPT_LOG_LEVEL,
};

int sw_cmd_ship(int argc, char **argv, const sw_stop_t *stop)
{
    static const struct option opts[] = {
        {"topic", required_argument, NULL, 't'},
        {"bootstrap", required_argument, NULL, 'b'},
        {"bootstrap-servers", required_argument, NULL, 'b'},
        {"checkpoint", required_argument, NULL, OPT_CKPT},
        {"pattern", required_argument, NULL, OPT_PATTERN},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"schema-id", required_argument, NULL, OPT_SCHEMA_ID},
        {"invalid", required_argument, NULL, OPT_INVALID},
        {"rotate-wait", required_argument, NULL, OPT_ROTATE_WAIT},
        {"max-inflight", required_argument, NULL, OPT_MAX_INFLIGHT},
        {"max-inflight-bytes", required_argument, NULL, OPT_MAX_INFLIGHT_BYTES},
        {"checkpoint-interval", required_argument, NULL, OPT_CKPT_INTERVAL},
        {"scan-interval", required_argument, NULL, OPT_SCAN_INTERVAL},
        {"stop-timeout", required_argument, NULL, OPT_STOP_TIMEOUT},
        {"once", no_argument, NULL, OPT_ONCE},
        {"metrics-listen", required_argument, NULL, OPT_METRICS_LISTEN},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    ship_t sh;
    memset(&sh, 0, sizeof(sh));
    sh.schema_id = 1;
    sh.max_inflight = 100000;
    sh.max_inflight_bytes = 64 << 20;
    sh.ckpt_interval_ms = 1000;
    sh.scan_interval_ms = 250;
    sh.stop_timeout_ms = 10000;
    sh.stop = stop;
    sw_acks_init(&sh.acks);
    sw_buf_init(&sh.enc);
    bool schema_id_set = false;
    int64_t rotate_wait_ms = 30000;
    const char *bootstrap_opt = NULL, *pattern = NULL, *listen_opt = NULL;
    sw_log_level_t level = SW_LOG_INFO;
    int rc = SW_EXIT_USAGE, c;
    char errstr[600], *ckpt_default = NULL;
    sw_http_t *http = NULL;
    sw_conf_t *conf = sw_conf_new();
    if (!conf) {
        fprintf(stderr, "stormwatch ship: the built-in configuration is invalid\n");
        return SW_EXIT_RUNTIME;
    }
    for (size_t i = 0; i < sizeof(k_defaults) / sizeof(k_defaults[0]); i++)
        sw_conf_set(conf, k_defaults[i].name, k_defaults[i].value, NULL, 0);
    if (sw_conf_load_env(conf, environ, errstr, sizeof(errstr)) != SW_OK) {
        fprintf(stderr, "stormwatch ship: %s\n", errstr);
        goto out;
    }
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:b:X:h", opts, NULL)) != -1) {
        int64_t v;
        switch (c) {
        case 't': sh.topic = optarg; break;
        case 'b': bootstrap_opt = optarg; break;
        case OPT_CKPT: sh.ckpt_path = optarg; break;
        case OPT_PATTERN: pattern = optarg; break;
        case OPT_FORMAT:
            if (strcmp(optarg, "json") && strcmp(optarg, "avro")) {
                fprintf(stderr,
                        "stormwatch ship: option --format: value \"%s\" is not json or avro\n",
                        optarg);
                goto out;
            }
            sh.avro = !strcmp(optarg, "avro");
            break;
        case OPT_SCHEMA_ID:
            if (!sw_cli_i64("ship", "--schema-id", optarg, 0, INT32_MAX, &v)) goto out;
            sh.schema_id = (int32_t)v;
            schema_id_set = true;
            break;
        case OPT_INVALID:
            if (strcmp(optarg, "send") && strcmp(optarg, "skip")) {
                fprintf(stderr,
                        "stormwatch ship: option --invalid: value \"%s\" is not send or skip\n",
                        optarg);
                goto out;
            }
            sh.skip_invalid = !strcmp(optarg, "skip");
            break;
        case OPT_ROTATE_WAIT:
            if (!sw_cli_i64("ship", "--rotate-wait", optarg, 0, INT32_MAX, &rotate_wait_ms))
                goto out;
            break;
        case OPT_MAX_INFLIGHT:
            if (!sw_cli_i64("ship", "--max-inflight", optarg, 1, 10000000, &sh.max_inflight))
                goto out;
            break;
        case OPT_MAX_INFLIGHT_BYTES:
            if (!sw_cli_i64("ship", "--max-inflight-bytes", optarg, 1024, INT64_C(1) << 40,
                            &sh.max_inflight_bytes))
                goto out;
            break;
        case OPT_CKPT_INTERVAL:
            if (!sw_cli_i64("ship", "--checkpoint-interval", optarg, 0, 3600000,
                            &sh.ckpt_interval_ms))
                goto out;
            break;
        case OPT_SCAN_INTERVAL:
            if (!sw_cli_i64("ship", "--scan-interval", optarg, 1, 3600000, &sh.scan_interval_ms))
                goto out;
            break;
        case OPT_STOP_TIMEOUT:
            if (!sw_cli_i64("ship", "--stop-timeout", optarg, 0, 3600000, &sh.stop_timeout_ms))
                goto out;
            break;
        case OPT_ONCE: sh.once = true; break;
        case OPT_METRICS_LISTEN: listen_opt = optarg; break;
        case 'X':
            if (!strcmp(optarg, "list")) {
                rd_kafka_conf_properties_show(stdout);
                rc = SW_EXIT_OK;
                goto out;
            }
            if (!sw_kafka_tool_prop(conf, optarg, SW_KAFKA_PRODUCER, "ship")) goto out;
            break;
        case OPT_LOG_LEVEL:
            if (!sw_cli_log_level("ship", optarg, &level)) goto out;
            break;
        case 'h':
            usage(stdout);
            rc = SW_EXIT_OK;
            goto out;
        default: rc = sw_cli_bad_option("ship", argc, argv, optind, optopt); goto out;
        }
    }
    if (!sh.topic || !*sh.topic) {
        fprintf(stderr,
                "stormwatch ship: option -t TOPIC is required (see 'stormwatch ship "
                "--help')\n");
        goto out;
    }
    if (optind != argc - 1) {
        fprintf(stderr,
                "stormwatch ship: expected one PATH (a directory or a file), got %d "
                "(see 'stormwatch ship --help')\n",
                argc - optind);
        goto out;
    }
    const char *path = argv[optind];
    sw_follow_opts_t fo = {path, pattern, rotate_wait_ms, 1024 * 1024};
    sh.fol = sw_follow_new(&fo, errstr, sizeof(errstr));
    if (!sh.fol) {
        fprintf(stderr, "stormwatch ship: %s\n", errstr);
        goto out;
    }
    if (!sh.ckpt_path) {
        size_t n = strlen(path) + 64;
        ckpt_default = malloc(n);
        if (sw_follow_is_dir(sh.fol)) {
            snprintf(ckpt_default, n, "%s/.stormwatch-ship.checkpoint", path);
        } else {
            snprintf(ckpt_default, n, "%s.stormwatch-ship.checkpoint", path);
        }
        sh.ckpt_path = ckpt_default;
    }
    sw_ship_pos_t *pos = NULL;
    size_t npos = 0;
    if (sw_ship_ckpt_load(sh.ckpt_path, &pos, &npos, errstr, sizeof(errstr)) != SW_OK) {
        fprintf(stderr, "stormwatch ship: %s\n", errstr);
        goto out;
    }
    sw_follow_restore(sh.fol, pos, npos);
    free(pos);
    {
        /* A checkpoint that cannot be written is a configuration error,
         * said now rather than once a second while shipping. */
        sw_ship_pos_t *v;
        size_t n = sw_follow_positions(sh.fol, &v);
        sw_err_t err = sw_ship_ckpt_save(sh.ckpt_path, v, n, errstr, sizeof(errstr));
        free(v);
        if (err != SW_OK) {
            fprintf(stderr, "stormwatch ship: %s\n", errstr);
            goto out;
        }
    }

    sw_settings_t set;
    sw_conf_settings(conf, &set);
    const char *bootstrap = sw_kafka_tool_bootstrap(conf, &set, bootstrap_opt, SW_KAFKA_PRODUCER,
                                                    "ship");
    if (!bootstrap) goto out;
    sh.log = sw_log_make(level, "stormwatch ship");
    sh.ctx.log = &sh.log;
    sh.ctx.user = &sh;
    if (sh.avro && !schema_id_set && set.registry.urls.n > 0 &&
        (rc = sw_cli_telemetry_schema_id("ship", &set, sh.topic, &sh.schema_id)) != SW_EXIT_OK)
        goto out;
    rc = SW_EXIT_USAGE;
    const char *listen = listen_opt ? listen_opt : set.ops.metrics_listen;
    if (*listen) {
        sh.m = sw_metrics_new();
        sw_metrics_enable_ship(sh.m);
        sw_metrics_set_ready_state(sh.m, true, 0);
        http = sw_http_start(listen, sh.m, 0, SW_HTTP_STALE_MS_DEFAULT, errstr, sizeof(errstr));
        if (!http) {
            fprintf(stderr, "stormwatch ship: %s\n", errstr);
            goto out;
        }
        sw_metrics_heartbeat(sh.m, sw_clock_ms());
        sw_log(&sh.log, SW_LOG_INFO, "metrics on http://%s/metrics (port %d), /healthz, /readyz",
               listen, sw_http_port(http));
    }
    if ((rc = ship_open(&sh, conf, bootstrap)) != SW_EXIT_OK) goto out;
    sh.dec = sw_tdec_new();
    sw_log(&sh.log, SW_LOG_INFO,
           "following %s %s (%zu segments checkpointed in %s) into %s (%s, key job_id, "
           "murmur2)",
           sw_follow_is_dir(sh.fol) ? "directory" : "file", path, npos, sh.ckpt_path, sh.topic,
           sh.avro ? "avro" : "json");
    rc = ship_loop(&sh);
out:
    sw_http_stop(http);
    if (sh.rkt) rd_kafka_topic_destroy(sh.rkt);
    if (sh.rk) rd_kafka_destroy(sh.rk);
    sw_metrics_destroy(sh.m);
    sw_follow_destroy(sh.fol);
    sw_acks_clear(&sh.acks);
    sw_tdec_destroy(sh.dec);
    sw_buf_clear(&sh.enc);
    sw_conf_destroy(conf);
    free(ckpt_default);
    return rc;
}
