/*
 * `stormwatch run`: configuration (defaults, -c FILE, STORMWATCH_*
 * environment, -X name=value, in that order), every configuration error
 * reported before connecting (exit 2), the embedded mock cluster when no
 * bootstrap.servers is set, then the daemon (sw_run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_cgroup.h"
#include "sw_conf.h"
#include "sw_http.h"
#include "sw_kafka.h"
#include "sw_log.h"
#include "sw_run.h"
#include "sw_cli.h"
#include "sw_cmds.h"

static void usage(FILE *f)
{
    fprintf(
        f,
        "Usage: stormwatch run [-c FILE] [-b BROKERS] [-X NAME=VALUE]... [--bootstrap-file FILE]\n"
        "       stormwatch run -X list | -X dump\n"
        "\n"
        "The Kafka consumer-group daemon: reads TelemetryEvent records (JSON or\n"
        "Confluent Avro) from input.topics, keeps the stream state (docs/semantics.md)\n"
        "per partition and job, writes first-cause alert records to output.topic and\n"
        "bad input to dlq.topic. Without bootstrap.servers it starts an embedded mock\n"
        "Kafka cluster (librdkafka's, on loopback), creates the topics and prints its\n"
        "address.\n"
        "\n"
        "Options:\n"
        "  -c, --config FILE        properties file (name=value lines, # comments)\n"
        "  -b, --brokers BROKERS    bootstrap.servers (host:port,...), as kcat's -b\n"
        "  -X NAME=VALUE            set a property (repeatable; wins over -c and env)\n"
        "  -X list                  list every property with type, range and default\n"
        "  -X dump                  print the effective configuration (secrets hidden)\n"
        "  -X markdown              the property list as a Markdown table\n"
        "  --bootstrap-file FILE    write the bootstrap address used to FILE\n"
        "  -h, --help               show this help\n"
        "\n"
        "Precedence, lowest first: defaults, -c FILE, STORMWATCH_* environment\n"
        "variables (STORMWATCH_WINDOW_SAMPLES=100 sets window.samples;\n"
        "STORMWATCH_KAFKA_SASL_PASSWORD sets kafka.sasl.password), -X.\n"
        "kafka.<p>, kafka.consumer.<p> and kafka.producer.<p> pass <p> to librdkafka.\n"
        "Exit status: 0 clean shutdown (SIGTERM/SIGINT), 1 runtime failure,\n"
        "2 usage or configuration error.\n");
}

int sw_cmd_run(int argc, char **argv, const sw_stop_t *stop)
{
    sw_cli_daemon_args_t a;
    int rc = sw_cli_daemon_args("run", true, argc, argv, usage, &a);
    if (rc >= 0) {
        free(a.xs);
        return rc;
    }
    rc = SW_EXIT_USAGE;
    sw_buf_t out;
    sw_buf_init(&out);
    char err[1024];
    sw_conf_t *conf = sw_conf_new();
    sw_mock_t *mock = NULL;
    sw_metrics_t *metrics = NULL;
    sw_http_t *http = NULL, *probes = NULL;
    if (!sw_cli_conf_load("run", conf, a.config_file, a.brokers, a.xs, a.nx)) goto done;
    /* Every property typed, once; conf is not changed after this. */
    sw_settings_t set;
    sw_conf_settings(conf, &set);
    sw_log_t log = sw_log_make(set.ops.log_level, "stormwatch run");
    sw_kafka_ctx_t kctx = {.log = &log};

    for (size_t i = 0; sw_conf_ignored_env(conf, i); i++)
        sw_log(&log, SW_LOG_DEBUG,
               "environment variable %s passed over (a Kubernetes service link)",
               sw_conf_ignored_env(conf, i));

    /* Every setting is checked before anything starts or connects; -X dump
     * runs exactly these checks, so a configuration it prints is one that
     * run accepts. */
    if (sw_conf_check(conf, err, sizeof(err)) != SW_OK) {
        fprintf(stderr, "stormwatch run: %s\n", err);
        goto done;
    }
    const char *bootstrap = set.kafka.bootstrap_servers;
    if (!sw_cli_kafka_check("run", conf, &set, bootstrap, &log)) goto done;
    if (a.dump) {
        sw_conf_dump(conf, &out);
        fputs(sw_buf_cstr(&out), stdout);
        rc = SW_EXIT_OK;
        goto done;
    }

    /* max.memory.bytes follows the container: 60% of its cgroup memory
     * limit unless set (the rest is librdkafka's queues, the allocator's
     * slack and the process; README "Memory"). */
    if (!sw_conf_is_set(conf, "max.memory.bytes")) {
        int64_t lim = sw_cgroup_memory_limit("/sys/fs/cgroup");
        if (lim > 0) {
            set.engine.max_memory_bytes = lim / 5 * 3;
            sw_log(&log, SW_LOG_INFO,
                   "max.memory.bytes %lld: 60%% of the container's memory limit (%lld bytes)",
                   (long long)set.engine.max_memory_bytes, (long long)lim);
        }
    }

    if (!*bootstrap) {
        int brokers = set.ops.mock_brokers, partitions = set.ops.mock_partitions;
        mock = sw_mock_new(brokers, &kctx, err, sizeof(err));
        if (!mock) {
            fprintf(stderr, "stormwatch run: %s\n", err);
            rc = SW_EXIT_RUNTIME;
            goto done;
        }
        if (!sw_cli_mock_topics(mock, &set, partitions, NULL, NULL, err, sizeof(err))) {
            fprintf(stderr, "stormwatch run: %s\n", err);
            rc = SW_EXIT_RUNTIME;
            goto done;
        }
        bootstrap = sw_mock_bootstrap(mock);
        printf("embedded Kafka cluster (%d brokers, %d partitions per topic) at %s\n", brokers,
               partitions, bootstrap);
        fflush(stdout);
    }
    if (a.bootstrap_file &&
        sw_write_file_atomic(a.bootstrap_file, bootstrap, err, sizeof(err)) != SW_OK) {
        fprintf(stderr, "stormwatch run: %s\n", err);
        rc = SW_EXIT_RUNTIME;
        goto done;
    }
    const char *listen = set.ops.metrics_listen;
    if (*listen) {
        int64_t max_lag = set.ops.ready_max_lag;
        metrics = sw_metrics_new();
        sw_metrics_set_host_limit(metrics, set.ops.metrics_hosts_max);
        http = sw_http_start(listen, metrics, max_lag, SW_HTTP_STALE_MS_DEFAULT, err, sizeof(err));
        if (!http) {
            fprintf(stderr, "stormwatch run: %s\n", err);
            rc = SW_EXIT_USAGE;
            goto done;
        }
        /* Alive from now on; the consumer loop keeps the heartbeat fresh. */
        sw_metrics_heartbeat(metrics, sw_clock_ms());
        sw_log(&log, SW_LOG_INFO, "metrics on http://%s/metrics (port %d), /healthz, /readyz",
               listen, sw_http_port(http));
        const char *hl = set.ops.health_listen;
        if (*hl) {
            probes = sw_http_start_probes(hl, metrics, max_lag, SW_HTTP_STALE_MS_DEFAULT, err,
                                          sizeof(err));
            if (!probes) {
                fprintf(stderr, "stormwatch run: %s\n", err);
                rc = SW_EXIT_USAGE;
                goto done;
            }
            sw_log(&log, SW_LOG_INFO, "probes on http://%s/healthz and /readyz (port %d)", hl,
                   sw_http_port(probes));
        }
    } else if (*set.ops.health_listen) {
        fprintf(stderr,
                "stormwatch run: health.listen needs metrics.listen (the probes report "
                "what the metrics registry holds)\n");
        rc = SW_EXIT_USAGE;
        goto done;
    }
    sw_run_opts_t ro = {conf, &set, bootstrap, stop->running, &log, metrics, stop->stops};
    rc = sw_run(&ro);
done:
    sw_http_stop(probes);
    sw_http_stop(http);
    sw_metrics_destroy(metrics);
    sw_mock_destroy(mock);
    sw_conf_destroy(conf);
    sw_buf_clear(&out);
    free(a.xs);
    return rc;
}
