/*
 * What the daemon commands (run, notify) share on the command line: their
 * options (-c, -b, -X, -h; run also --bootstrap-file and -X markdown),
 * -X list / markdown, and the check that librdkafka takes the Kafka
 * properties of both clients before anything connects.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_cli.h"
#include "sw_kafka.h"
#include "sw_run.h"

int sw_cli_daemon_args(const char *cmd, bool run, int argc, char **argv, void (*usage)(FILE *),
                       sw_cli_daemon_args_t *a)
{
    static const struct option run_opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"brokers", required_argument, NULL, 'b'},
        {"bootstrap-file", required_argument, NULL, 'B'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const struct option notify_opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"brokers", required_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof(*a));
    a->xs = calloc((size_t)argc + 1, sizeof(*a->xs));
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:b:X:h", run ? run_opts : notify_opts, NULL)) != -1) {
        switch (c) {
        case 'c': a->config_file = optarg; break;
        case 'b': a->brokers = optarg; break;
        case 'B': a->bootstrap_file = optarg; break;
        case 'X':
            if (!strcmp(optarg, "list")) a->list = true;
            else if (run && !strcmp(optarg, "markdown")) a->markdown = true;
            else if (!strcmp(optarg, "dump")) a->dump = true;
            else a->xs[a->nx++] = optarg;
            break;
        case 'h': usage(stdout); return SW_EXIT_OK;
        default: return sw_cli_bad_option(cmd, argc, argv, optind, optopt);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "stormwatch %s: unexpected argument '%s' (see 'stormwatch %s --help')\n",
                cmd, argv[optind], cmd);
        return SW_EXIT_USAGE;
    }
    if (a->list || a->markdown) {
        sw_buf_t out;
        sw_buf_init(&out);
        if (a->markdown) sw_conf_markdown(&out);
        else sw_conf_list(&out);
        fputs(sw_buf_cstr(&out), stdout);
        sw_buf_clear(&out);
        return SW_EXIT_OK;
    }
    return -1;
}

bool sw_cli_kafka_check(const char *cmd, const sw_conf_t *conf, const sw_settings_t *set,
                        const char *bootstrap, const sw_log_t *log)
{
    sw_kafka_ctx_t kctx = {.log = log};
    char err[1024];
    for (int role = SW_KAFKA_CONSUMER; role <= SW_KAFKA_PRODUCER; role++) {
        rd_kafka_conf_t *kc = sw_kafka_conf(conf, (sw_kafka_role_t)role, bootstrap,
                                            set->kafka.group_id, &kctx, err, sizeof(err));
        if (!kc) {
            fprintf(stderr, "stormwatch %s: %s\n", cmd, err);
            return false;
        }
        rd_kafka_conf_destroy(kc);
    }
    return true;
}

bool sw_cli_mock_topics(sw_mock_t *m, const sw_settings_t *set, int partitions,
                        bool (*skip)(void *opaque, const char *name), void *opaque, char *errstr,
                        size_t errstr_size)
{
    const sw_conf_strs_t *in = &set->kafka.input_topics;
    char rep[320];
    sw_run_repartition_topic(set, rep, sizeof(rep));
    size_t n = in->n + 5;
    const char **names = sw_calloc(n, sizeof(*names));
    int *parts = sw_calloc(n, sizeof(*parts));
    size_t k = 0;
    for (size_t i = 0; i < in->n; i++) names[k] = in->v[i], parts[k++] = partitions;
    names[k] = set->kafka.output_topic, parts[k++] = partitions;
    names[k] = set->kafka.dlq_topic, parts[k++] = partitions;
    names[k] = rep, parts[k++] = partitions;
    names[k] = set->delivery.state_topic, parts[k++] = 1;
    names[k] = set->notify.dlq_topic, parts[k++] = 1;
    bool ok = true;
    for (size_t i = 0; i < k && ok; i++) {
        const char *t = names[i];
        if (!t[0] || t[0] == '^') continue; /* none (repartition=off), or a pattern */
        bool seen = skip && skip(opaque, t);
        for (size_t j = 0; j < i && !seen; j++) seen = strcmp(names[j], t) == 0;
        if (!seen) ok = sw_mock_topic(m, t, parts[i], errstr, errstr_size) == SW_OK;
    }
    free(names);
    free(parts);
    return ok;
}
