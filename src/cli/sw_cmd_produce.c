/*
 * `stormwatch produce`: publish TelemetryEvent JSON Lines (plain or gzip)
 * to a Kafka topic, keyed by job_id, as the original JSON line or as
 * Confluent-framed Avro. Invalid lines are reported and skipped, or sent
 * untouched with --raw (to exercise the daemon's dead-letter path). Waits
 * for every delivery report; no analysis happens here.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_codec_avro.h"
#include "sw_codec_telemetry.h"
#include "sw_input.h"
#include "sw_kafka.h"
#include "sw_cli.h"
#include "sw_progress.h"
#include "sw_cmds.h"

extern char **environ;

#define CT_JSON "application/json"
#define CT_AVRO "application/vnd.confluent.avro"

/* Distinct delivery errors remembered for the final message. */
#define PRODUCE_MAX_ERRS 8

/* Producer settings that make bulk loads fast; applied before the
 * user's -X so that those win. partitioner: librdkafka's default
 * (consistent_random) sends an empty key, our null job, to a random
 * partition; murmur2_random (the Java client's) hashes it like any key,
 * so the null job stays on one partition. */
static const struct {
    const char *name, *value;
} k_defaults[] = {
    {"kafka.producer.partitioner", "murmur2_random"},
    {"kafka.producer.linger.ms", "20"},
    {"kafka.producer.batch.num.messages", "20000"},
    {"kafka.producer.queue.buffering.max.messages", "1000000"},
    {"kafka.producer.queue.buffering.max.kbytes", "1048576"},
};

typedef struct produce_s {
    const char *topic;
    bool avro;
    int32_t schema_id;
    int32_t partition; /* RD_KAFKA_PARTITION_UA: the partitioner decides */
    bool raw;
    double rate; /* events per second, 0 = unlimited */
    volatile sig_atomic_t *running;

    sw_log_t log;
    sw_kafka_ctx_t ctx;
    rd_kafka_t *rk;
    rd_kafka_topic_t *rkt;
    sw_tdec_t *dec;
    sw_buf_t enc; /* Avro encoding of the current event */

    int64_t start_ms;
    uint64_t queued; /* accepted by rd_kafka_producev() */
    uint64_t delivered, delivered_bytes;
    uint64_t failed;  /* failed delivery or refused by producev */
    uint64_t invalid; /* invalid lines skipped (or sent with --raw) */
    struct {
        rd_kafka_resp_err_t err;
        uint64_t cnt;
    } errs[PRODUCE_MAX_ERRS];
    int nerrs;
    bool stop; /* fatal error or signal: stop reading */
} produce_t;

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: stormwatch produce -t TOPIC [OPTIONS] [FILE...]\n"
            "\n"
            "Publishes TelemetryEvent JSON Lines (plain or gzip, detected by content) to a\n"
            "Kafka topic: key = job_id (empty for a null job_id), value = the line as it is\n"
            "or Confluent-framed Avro, header content-type. FILE '-' or no FILE reads\n"
            "standard input. Invalid lines are reported as FILE:LINE: message and skipped.\n"
            "Waits for every delivery report.\n"
            "\n"
            "Options:\n"
            "  -t, --topic TOPIC        topic to write to (required)\n"
            "  -b, --bootstrap SERVERS  host:port,... (default: environment variable\n"
            "                           STORMWATCH_BOOTSTRAP_SERVERS)\n"
            "  --format json|avro       value encoding (default json)\n"
            "  --schema-id N            Confluent schema id for avro, 0..2147483647 (default 1;\n"
            "                           with -X schema.registry.url=URL: the id the registry\n"
            "                           gives telemetry_event.avsc under subject TOPIC-value,\n"
            "                           registered unless -X auto.register.schemas=false)\n"
            "  --partition N            write every message to partition N (default: by key,\n"
            "                           murmur2 like the Java client)\n"
            "  --raw                    send invalid lines too, untouched, with an empty key\n"
            "                           (to test a dead-letter topic)\n"
            "  --rate N                 at most N events per second (default unlimited)\n"
            "  -X kafka.PROP=VALUE      librdkafka producer property (repeatable; also\n"
            "                           kafka.producer.PROP=VALUE); later ones win\n"
            "  -q, --quiet              no summary line\n"
            "  --log-level LEVEL        error, warn, info or debug (default warn)\n"
            "  -h, --help               show this help\n"
            "\n"
            "The STORMWATCH_* environment variables of 'stormwatch run' are read as well\n"
            "(STORMWATCH_KAFKA_SASL_PASSWORD sets kafka.sasl.password, ...); -X wins.\n"
            "\n"
            "Exit status: 0 every message delivered, 1 some were not (or input could not be\n"
            "read), 2 usage or configuration error.\n");
}

static void note_failure(produce_t *pr, rd_kafka_resp_err_t err)
{
    pr->failed++;
    for (int i = 0; i < pr->nerrs; i++)
        if (pr->errs[i].err == err) {
            pr->errs[i].cnt++;
            return;
        }
    if (pr->nerrs < PRODUCE_MAX_ERRS) {
        pr->errs[pr->nerrs].err = err;
        pr->errs[pr->nerrs].cnt = 1;
        pr->nerrs++;
    }
}

/* Runs from rd_kafka_poll()/flush() on this thread: no locking needed. */
static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *rkm, void *opaque)
{
    (void)rk;
    produce_t *pr = ((sw_kafka_ctx_t *)opaque)->user;
    if (rkm->err) {
        note_failure(pr, rkm->err);
        return;
    }
    pr->delivered++;
    pr->delivered_bytes += rkm->len;
}

/* Queue one message, waiting while the local queue is full.
 * @returns false when producing must stop (signal or fatal error). */
static bool send_msg(produce_t *pr, const char *key, size_t key_len, const void *value, size_t len,
                     const char *content_type)
{
    if (pr->rate > 0) {
        /* Message n (0-based) is due at start + n / rate. */
        int64_t due = pr->start_ms + (int64_t)((double)pr->queued * 1000.0 / pr->rate);
        for (int64_t now = sw_clock_ms(); now < due && *pr->running; now = sw_clock_ms())
            rd_kafka_poll(pr->rk, (int)(due - now < 100 ? due - now : 100));
    }
    for (;;) {
        if (!*pr->running || pr->ctx.fatal) return false;
        rd_kafka_resp_err_t err = rd_kafka_producev(
            pr->rk, RD_KAFKA_V_RKT(pr->rkt), RD_KAFKA_V_PARTITION(pr->partition),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key, key_len),
            RD_KAFKA_V_VALUE((void *)value, len),
            RD_KAFKA_V_HEADER("content-type", content_type, -1), RD_KAFKA_V_END);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            pr->queued++;
            /* Serve delivery reports now and then, not per message. */
            if ((pr->queued & 1023) == 0) rd_kafka_poll(pr->rk, 0);
            return true;
        }
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            rd_kafka_poll(pr->rk, 10);
            continue;
        }
        if (err == RD_KAFKA_RESP_ERR__FATAL) return false;
        /* This message only (too large, unknown partition): count it. */
        note_failure(pr, err);
        return true;
    }
}

/* One non-blank line: decode, then send as JSON, Avro or (--raw) as is. */
static bool produce_line(produce_t *pr, const char *name, uint64_t lineno, const char *line,
                         size_t len)
{
    char errstr[512];
    sw_event_t ev;
    sw_err_t err = sw_tdec_json(pr->dec, line, len, &ev, errstr, sizeof(errstr));
    if (!err && pr->avro) {
        pr->enc.len = 0;
        err = sw_avro_encode_event(&ev, pr->schema_id, &pr->enc, errstr, sizeof(errstr));
    }
    if (err) {
        pr->invalid++;
        fprintf(stderr, "%s:%llu: %s%s\n", name, (unsigned long long)lineno, errstr,
                pr->raw ? " (sent as is)" : "");
        if (!pr->raw) return true;
        return send_msg(pr, "", 0, line, len, CT_JSON);
    }
    const char *key = ev.has_job_id ? ev.job_id.ptr : "";
    size_t key_len = ev.has_job_id ? ev.job_id.len : 0;
    if (pr->avro) return send_msg(pr, key, key_len, pr->enc.data, pr->enc.len, CT_AVRO);
    return send_msg(pr, key, key_len, line, len, CT_JSON);
}

/* @returns SW_EXIT_OK, or SW_EXIT_RUNTIME when a file cannot be read. */
static int produce_file(produce_t *pr, const char *path)
{
    char errstr[512];
    sw_input_t *in = sw_input_open(path, errstr, sizeof(errstr));
    if (!in) {
        fprintf(stderr, "stormwatch produce: %s\n", errstr);
        return SW_EXIT_RUNTIME;
    }
    const char *name = sw_input_name(in);
    int rc = SW_EXIT_OK;
    sw_progress_t prog;
    char *one[] = {(char *)path};
    sw_progress_start(&prog, "produce", "lines", sw_progress_files_size(one, 1));
    uint64_t lines = 0;
    while (!pr->stop) {
        const char *line;
        size_t len;
        sw_input_res_t r = sw_input_next(in, &line, &len, errstr, sizeof(errstr));
        if (r == SW_INPUT_EOF) break;
        if (r == SW_INPUT_ERROR) {
            fprintf(stderr, "stormwatch produce: %s\n", errstr);
            rc = SW_EXIT_RUNTIME;
            break;
        }
        if (r == SW_INPUT_TOOLONG) {
            pr->invalid++;
            fprintf(stderr, "%s:%llu: %s\n", name, (unsigned long long)sw_input_lineno(in), errstr);
            continue;
        }
        if (sw_tdec_blank(line, len)) continue;
        sw_progress_tick(&prog, ++lines, sw_input_raw_bytes(in));
        if (!produce_line(pr, name, sw_input_lineno(in), line, len)) pr->stop = true;
    }
    sw_progress_end(&prog);
    sw_input_close(in);
    return rc;
}

/* Wait for the outstanding delivery reports. On a signal or a fatal
 * error, what is still queued is purged and counts as failed. */
static void drain(produce_t *pr)
{
    bool purged = false;
    while (rd_kafka_outq_len(pr->rk) > 0) {
        if (!purged && (!*pr->running || pr->ctx.fatal)) {
            rd_kafka_purge(pr->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
            purged = true;
        }
        rd_kafka_flush(pr->rk, 100);
    }
    rd_kafka_poll(pr->rk, 0);
}

/* The final lines on stderr. @returns the exit status. */
static int report(produce_t *pr, bool quiet, int rc)
{
    double secs = (double)(sw_clock_ms() - pr->start_ms) / 1000.0;
    if (!quiet)
        fprintf(stderr, "produced %llu messages to %s (%llu bytes, %.0f msg/s)\n",
                (unsigned long long)pr->delivered, pr->topic,
                (unsigned long long)pr->delivered_bytes,
                secs > 0 ? (double)pr->delivered / secs : 0.0);
    if (pr->invalid)
        fprintf(stderr, "stormwatch produce: %llu invalid line%s %s\n",
                (unsigned long long)pr->invalid, pr->invalid == 1 ? "" : "s",
                pr->raw ? "sent as is" : "skipped");
    if (pr->ctx.fatal)
        fprintf(stderr, "stormwatch produce: fatal Kafka error: %s\n", pr->ctx.fatal_reason);
    if (pr->failed) {
        fprintf(stderr,
                "stormwatch produce: %llu message%s not delivered:", (unsigned long long)pr->failed,
                pr->failed == 1 ? "" : "s");
        for (int i = 0; i < pr->nerrs; i++)
            fprintf(stderr, "%s %llu x %s (%s)", i ? "," : "", (unsigned long long)pr->errs[i].cnt,
                    rd_kafka_err2name(pr->errs[i].err), rd_kafka_err2str(pr->errs[i].err));
        fputc('\n', stderr);
        rc = SW_EXIT_RUNTIME;
    }
    if (!*pr->running) {
        fprintf(stderr, "stormwatch produce: interrupted\n");
        rc = SW_EXIT_RUNTIME;
    }
    if (pr->ctx.fatal) rc = SW_EXIT_RUNTIME;
    return rc;
}

/* Build the producer. @returns SW_EXIT_OK, SW_EXIT_USAGE with the
 * message printed (a configuration error: nothing was sent), or
 * SW_EXIT_RUNTIME when no broker answers within socket.timeout.ms. */
static int produce_open(produce_t *pr, const sw_conf_t *conf, const char *bootstrap)
{
    char errstr[512];
    if (sw_kafka_producer_new(conf, bootstrap, &pr->ctx, dr_cb, pr->topic, &pr->rk, &pr->rkt,
                              errstr, sizeof(errstr)) != SW_OK) {
        fprintf(stderr, "stormwatch produce: %s\n", errstr);
        return SW_EXIT_USAGE;
    }
    if (sw_kafka_reachable(pr->rk, bootstrap, errstr, sizeof(errstr)) != SW_OK) {
        fprintf(stderr, "stormwatch produce: %s\n", errstr);
        return SW_EXIT_RUNTIME;
    }
    return SW_EXIT_OK;
}

int sw_cmd_produce(int argc, char **argv, const sw_stop_t *stop)
{
    static const struct option opts[] = {
        {"topic", required_argument, NULL, 't'},
        {"bootstrap", required_argument, NULL, 'b'},
        {"bootstrap-servers", required_argument, NULL, 'b'},
        {"format", required_argument, NULL, 'F'},
        {"schema-id", required_argument, NULL, 'S'},
        {"partition", required_argument, NULL, 'p'},
        {"raw", no_argument, NULL, 'r'},
        {"rate", required_argument, NULL, 'R'},
        {"quiet", no_argument, NULL, 'q'},
        {"log-level", required_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    produce_t pr;
    memset(&pr, 0, sizeof(pr));
    pr.schema_id = 1;
    bool schema_id_set = false;
    pr.partition = RD_KAFKA_PARTITION_UA;
    const char *bootstrap_opt = NULL;
    bool quiet = false;
    sw_log_level_t level = SW_LOG_WARN;
    int rc = SW_EXIT_USAGE, c;
    char errstr[512];
    sw_conf_t *conf = sw_conf_new();
    if (!conf) {
        fprintf(stderr, "stormwatch produce: the built-in configuration is invalid\n");
        return SW_EXIT_RUNTIME;
    }
    for (size_t i = 0; i < sizeof(k_defaults) / sizeof(k_defaults[0]); i++)
        sw_conf_set(conf, k_defaults[i].name, k_defaults[i].value, NULL, 0);
    /* The environment first, so that -X and -b win. */
    if (sw_conf_load_env(conf, environ, errstr, sizeof(errstr)) != SW_OK) {
        fprintf(stderr, "stormwatch produce: %s\n", errstr);
        goto out;
    }
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:b:X:qh", opts, NULL)) != -1) {
        int64_t v;
        switch (c) {
        case 't': pr.topic = optarg; break;
        case 'b': bootstrap_opt = optarg; break;
        case 'F':
            if (strcmp(optarg, "json") && strcmp(optarg, "avro")) {
                fprintf(stderr,
                        "stormwatch produce: option --format: value \"%s\" is not json or avro\n",
                        optarg);
                goto out;
            }
            pr.avro = !strcmp(optarg, "avro");
            break;
        case 'S':
            if (!sw_cli_i64("produce", "--schema-id", optarg, 0, INT32_MAX, &v)) goto out;
            pr.schema_id = (int32_t)v;
            schema_id_set = true;
            break;
        case 'p':
            if (!sw_cli_i64("produce", "--partition", optarg, 0, INT32_MAX, &v)) goto out;
            pr.partition = (int32_t)v;
            break;
        case 'r': pr.raw = true; break;
        case 'R':
            if (!sw_cli_dbl("produce", "--rate", optarg, 0.001, 1e9, &pr.rate)) goto out;
            break;
        case 'X':
            if (!strcmp(optarg, "list")) { /* librdkafka's properties, as kcat -X list */
                rd_kafka_conf_properties_show(stdout);
                rc = SW_EXIT_OK;
                goto out;
            }
            if (!sw_kafka_tool_prop(conf, optarg, SW_KAFKA_PRODUCER, "produce")) goto out;
            break;
        case 'q': quiet = true; break;
        case 'L':
            if (!sw_cli_log_level("produce", optarg, &level)) goto out;
            break;
        case 'h':
            usage(stdout);
            rc = SW_EXIT_OK;
            goto out;
        default: rc = sw_cli_bad_option("produce", argc, argv, optind, optopt); goto out;
        }
    }
    if (!pr.topic || !*pr.topic) {
        fprintf(stderr,
                "stormwatch produce: option -t TOPIC is required (see 'stormwatch "
                "produce --help')\n");
        goto out;
    }
    sw_settings_t set;
    sw_conf_settings(conf, &set);
    const char *bootstrap = sw_kafka_tool_bootstrap(conf, &set, bootstrap_opt, SW_KAFKA_PRODUCER,
                                                    "produce");
    if (!bootstrap) goto out;
    pr.log = sw_log_make(level, "stormwatch produce");
    pr.ctx.log = &pr.log;
    pr.ctx.user = &pr;
    pr.running = stop->running;
    if (pr.avro && !schema_id_set && set.registry.urls.n > 0 &&
        (rc = sw_cli_telemetry_schema_id("produce", &set, pr.topic, &pr.schema_id)) != SW_EXIT_OK)
        goto out;
    if ((rc = produce_open(&pr, conf, bootstrap)) != SW_EXIT_OK) goto out;

    pr.dec = sw_tdec_new();
    sw_buf_init(&pr.enc);
    pr.start_ms = sw_clock_ms();
    char *stdin_only[] = {(char *)"-"};
    char **files = optind < argc ? argv + optind : stdin_only;
    int nfiles = optind < argc ? argc - optind : 1;
    for (int i = 0; i < nfiles && !pr.stop && rc == SW_EXIT_OK; i++)
        rc = produce_file(&pr, files[i]);
    drain(&pr);
    rc = report(&pr, quiet, rc);
out:
    if (pr.rkt) rd_kafka_topic_destroy(pr.rkt);
    if (pr.rk) rd_kafka_destroy(pr.rk);
    sw_tdec_destroy(pr.dec);
    sw_buf_clear(&pr.enc);
    sw_conf_destroy(conf);
    return rc;
}
