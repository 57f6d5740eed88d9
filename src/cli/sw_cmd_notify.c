/*
 * `stormwatch notify`: configuration exactly as `run` (defaults, -c FILE,
 * STORMWATCH_* environment, -X name=value), every error reported before
 * connecting (exit 2), the metrics/probe endpoint, then the notify daemon
 * (sw_notify_run).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_cli.h"
#include "sw_cmds.h"
#include "sw_conf.h"
#include "sw_http.h"
#include "sw_kafka.h"
#include "sw_log.h"
#include "sw_notify_run.h"


static void usage(FILE *f)
{
    fprintf(f,
            "Usage: stormwatch notify [-c FILE] [-b BROKERS] [-X NAME=VALUE]...\n"
            "       stormwatch notify -X list | -X dump\n"
            "\n"
            "Delivers the alert records of output.topic (JSON or Confluent Avro, as\n"
            "'stormwatch run' writes them) to the configured sinks, as a Kafka consumer\n"
            "group (notify.group.id):\n"
            "  alertmanager  alertmanager.url (one or more, comma-separated): every open\n"
            "                episode is kept and re-sent every alertmanager.resend.ms\n"
            "  pagerduty     pagerduty.routing.key (+ pagerduty.url): Events API v2\n"
            "  webhook       webhook.url: the record as JSON (signed with webhook.hmac.secret)\n"
            "Failures are retried (429 with Retry-After, 5xx, timeouts: backoff with\n"
            "jitter); permanent refusals go to notify.dlq.topic. An offset is committed\n"
            "only after every sink took every record before it. Records are deduplicated\n"
            "by (job, episode, revision).\n"
            "\n"
            "Options:\n"
            "  -c, --config FILE        properties file (the same file as 'run')\n"
            "  -b, --brokers BROKERS    bootstrap.servers (host:port,...)\n"
            "  -X NAME=VALUE            set a property (repeatable; wins over -c and env)\n"
            "  -X list                  list every property\n"
            "  -X dump                  print the effective configuration (secrets hidden)\n"
            "  -h, --help               show this help\n"
            "\n"
            "Exit status: 0 clean shutdown (SIGTERM/SIGINT), 1 runtime failure,\n"
            "2 usage or configuration error.\n");
}

int sw_cmd_notify(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"brokers", required_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *config_file = NULL, *brokers_opt = NULL;
    char **xs = calloc((size_t)argc + 1, sizeof(*xs));
    int nx = 0, c, rc = SW_EXIT_USAGE;
    bool list = false, dump = false;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:b:X:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': config_file = optarg; break;
        case 'b': brokers_opt = optarg; break;
        case 'X':
            if (!strcmp(optarg, "list")) list = true;
            else if (!strcmp(optarg, "dump")) dump = true;
            else xs[nx++] = optarg;
            break;
        case 'h':
            usage(stdout);
            free(xs);
            return SW_EXIT_OK;
        default:
            free(xs);
            return sw_cli_bad_option("notify", argc, argv, optind, optopt);
        }
    }
    if (optind < argc) {
        fprintf(stderr,
                "stormwatch notify: unexpected argument '%s' (see 'stormwatch notify --help')\n",
                argv[optind]);
        free(xs);
        return SW_EXIT_USAGE;
    }
    sw_buf_t out;
    sw_buf_init(&out);
    if (list) {
        sw_conf_list(&out);
        fputs(sw_buf_cstr(&out), stdout);
        sw_buf_clear(&out);
        free(xs);
        return SW_EXIT_OK;
    }
    char err[1024];
    sw_conf_t *conf = sw_conf_new();
    sw_metrics_t *metrics = NULL;
    sw_http_t *http = NULL, *probes = NULL;
    if (!sw_cli_conf_load("notify", conf, config_file, brokers_opt, xs, nx)) goto done;
    /* Every property typed, once; conf is not changed after this. */
    sw_settings_t set;
    sw_conf_settings(conf, &set);
    sw_log_t log = sw_log_make(set.ops.log_level, "stormwatch notify");
    sw_kafka_ctx_t kctx = {&log, NULL, false, "", 0, ""};
    if (sw_conf_check(conf, err, sizeof(err)) != SW_OK ||
        sw_notify_check_settings(&set, err, sizeof(err)) != SW_OK) {
        fprintf(stderr, "stormwatch notify: %s\n", err);
        goto done;
    }
    const char *bootstrap = set.kafka.bootstrap_servers;
    if (!*bootstrap) {
        fprintf(stderr, "stormwatch notify: bootstrap.servers is empty (expected the Kafka "
                        "cluster that holds output.topic, e.g. -b localhost:9092)\n");
        goto done;
    }
    for (int role = SW_KAFKA_CONSUMER; role <= SW_KAFKA_PRODUCER; role++) {
        rd_kafka_conf_t *kc = sw_kafka_conf(conf, (sw_kafka_role_t)role, bootstrap,
                                            set.kafka.group_id, &kctx, err, sizeof(err));
        if (!kc) {
            fprintf(stderr, "stormwatch notify: %s\n", err);
            goto done;
        }
        rd_kafka_conf_destroy(kc);
    }
    if (dump) {
        sw_conf_dump(conf, &out);
        fputs(sw_buf_cstr(&out), stdout);
        rc = SW_EXIT_OK;
        goto done;
    }
    volatile sig_atomic_t *running = sw_main_running();
    const char *listen = set.ops.metrics_listen;
    if (*listen) {
        int64_t max_lag = set.ops.ready_max_lag;
        metrics = sw_metrics_new();
        sw_metrics_enable_notify(metrics);
        http = sw_http_start(listen, metrics, max_lag, 90000, err, sizeof(err));
        if (!http) {
            fprintf(stderr, "stormwatch notify: %s\n", err);
            goto done;
        }
        sw_metrics_heartbeat(metrics, sw_clock_ms());
        sw_log(&log, SW_LOG_INFO, "metrics on http://%s/metrics (port %d), /healthz, /readyz",
               listen, sw_http_port(http));
        const char *hl = set.ops.health_listen;
        if (*hl) {
            probes = sw_http_start_probes(hl, metrics, max_lag, 90000, err, sizeof(err));
            if (!probes) {
                fprintf(stderr, "stormwatch notify: %s\n", err);
                goto done;
            }
        }
    } else if (*set.ops.health_listen) {
        fprintf(stderr, "stormwatch notify: health.listen needs metrics.listen\n");
        goto done;
    }
    sw_notify_run_opts_t no = {conf, &set, bootstrap, running, sw_main_stops(), &log, metrics};
    rc = sw_notify_run(&no);
done:
    sw_http_stop(probes);
    sw_http_stop(http);
    sw_metrics_destroy(metrics);
    sw_conf_destroy(conf);
    sw_buf_clear(&out);
    free(xs);
    return rc;
}
