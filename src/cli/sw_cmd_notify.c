/*
 * `stormwatch notify`: configuration exactly as `run` (defaults, -c FILE,
 * STORMWATCH_* environment, -X name=value), every error reported before
 * connecting (exit 2), the metrics/probe endpoint, then the notify daemon
 * (sw_notify_run).
 */
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

int sw_cmd_notify(int argc, char **argv, const sw_stop_t *stop)
{
    sw_cli_daemon_args_t a;
    int rc = sw_cli_daemon_args("notify", false, argc, argv, usage, &a);
    if (rc >= 0) {
        free(a.xs);
        return rc;
    }
    rc = SW_EXIT_USAGE;
    sw_buf_t out;
    sw_buf_init(&out);
    char err[1024];
    sw_conf_t *conf = sw_conf_new();
    sw_metrics_t *metrics = NULL;
    sw_http_t *http = NULL, *probes = NULL;
    if (!sw_cli_conf_load("notify", conf, a.config_file, a.brokers, a.xs, a.nx)) goto done;
    /* Every property typed, once; conf is not changed after this. */
    sw_settings_t set;
    sw_conf_settings(conf, &set);
    sw_log_t log = sw_log_make(set.ops.log_level, "stormwatch notify");
    if (sw_conf_check(conf, err, sizeof(err)) != SW_OK ||
        sw_notify_check_settings(&set, err, sizeof(err)) != SW_OK) {
        fprintf(stderr, "stormwatch notify: %s\n", err);
        goto done;
    }
    const char *bootstrap = set.kafka.bootstrap_servers;
    if (!*bootstrap) {
        fprintf(stderr,
                "stormwatch notify: bootstrap.servers is empty (expected the Kafka "
                "cluster that holds output.topic, e.g. -b localhost:9092)\n");
        goto done;
    }
    if (!sw_cli_kafka_check("notify", conf, &set, bootstrap, &log)) goto done;
    if (a.dump) {
        sw_conf_dump(conf, &out);
        fputs(sw_buf_cstr(&out), stdout);
        rc = SW_EXIT_OK;
        goto done;
    }
    const char *listen = set.ops.metrics_listen;
    if (*listen) {
        int64_t max_lag = set.ops.ready_max_lag;
        metrics = sw_metrics_new();
        sw_metrics_enable_notify(metrics);
        http = sw_http_start(listen, metrics, max_lag, SW_HTTP_STALE_MS_DEFAULT, err, sizeof(err));
        if (!http) {
            fprintf(stderr, "stormwatch notify: %s\n", err);
            goto done;
        }
        sw_metrics_heartbeat(metrics, sw_clock_ms());
        sw_log(&log, SW_LOG_INFO, "metrics on http://%s/metrics (port %d), /healthz, /readyz",
               listen, sw_http_port(http));
        const char *hl = set.ops.health_listen;
        if (*hl) {
            probes = sw_http_start_probes(hl, metrics, max_lag, SW_HTTP_STALE_MS_DEFAULT, err,
                                          sizeof(err));
            if (!probes) {
                fprintf(stderr, "stormwatch notify: %s\n", err);
                goto done;
            }
        }
    } else if (*set.ops.health_listen) {
        fprintf(stderr, "stormwatch notify: health.listen needs metrics.listen\n");
        goto done;
    }
    sw_notify_run_opts_t no = {conf, &set, bootstrap, stop->running, stop->stops, &log, metrics};
    rc = sw_notify_run(&no);
done:
    sw_http_stop(probes);
    sw_http_stop(http);
    sw_metrics_destroy(metrics);
    sw_conf_destroy(conf);
    sw_buf_clear(&out);
    free(a.xs);
    return rc;
}
