/*
 * `stormwatch mock`: librdkafka's mock cluster (sw_mock_*) as a process, for
 * tests and demos: topics from the command line, the bootstrap string on
 * stdout and in a file, and with --control a line protocol on stdin for
 * fault injection (brokers down/up, RTT, request errors, leaders,
 * coordinators). Holds no Kafka logic of its own.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sw_alloc.h"
#include "sw_kafka.h"
#include "sw_mock_control.h"
#include "sw_cli.h"
#include "sw_cmds.h"

/* Longest control line accepted (bytes). */
#define MOCK_LINE_MAX 4096
/* How often the stop flag is checked while idle (ms). */
#define MOCK_TICK_MS 200

typedef struct mock_topic_s {
    const char *name; /* borrowed from argv */
    size_t name_len;
    int partitions;
} mock_topic_t;

typedef struct mock_s {
    sw_mock_t *m;
    int brokers;
    sw_mockctl_t ctl; /* the control protocol (its quit: `quit` was received) */
} mock_t;

static void usage(FILE *f, int64_t def_brokers, int64_t def_partitions)
{
    fprintf(f,
            "Usage: stormwatch mock [OPTIONS]\n"
            "\n"
            "Runs librdkafka's mock Kafka cluster on loopback (random ports) until SIGTERM\n"
            "or SIGINT, for tests and demos. Prints the bootstrap servers on standard output\n"
            "(one line) once the cluster is up.\n"
            "\n"
            "Options:\n"
            "  --brokers N                brokers, 1..64 (default %lld, mock.brokers)\n"
            "  --topic NAME[:PARTITIONS]  create a topic (default %lld partitions,\n"
            "                             mock.partitions); repeatable\n"
            "  -c, --config FILE          run's properties file: the topics run and notify\n"
            "                             need are created as the docs require them (as\n"
            "                             run's embedded cluster does): input topics,\n"
            "                             output.topic, dlq.topic, the repartition topic\n"
            "                             (mock.partitions each), state.topic and\n"
            "                             notify.dlq.topic (1 each); without -c and -X those\n"
            "                             of the defaults and the STORMWATCH_* environment;\n"
            "                             --topic wins for its name\n"
            "  -X NAME=VALUE              set a property, as for run (repeatable)\n"
            "  --bootstrap-file FILE      also write the bootstrap servers to FILE, atomically\n"
            "                             (removed again at exit)\n"
            "  --control                  read commands from standard input, one per line,\n"
            "                             and answer each with \"ok\" or \"error: ...\"\n"
            "  --log-level LEVEL          error, warn, info or debug (default warn)\n"
            "  -h, --help                 show this help\n"
            "\n"
            "Control commands (BROKER is a broker id 1..N, or -1 for all brokers):\n"
            "  topic NAME PARTITIONS             create a topic\n"
            "  broker down BROKER                disconnect a broker, refuse connections\n"
            "  broker up BROKER                  accept connections again\n"
            "  broker rtt BROKER MS              delay the broker's responses\n"
            "  errors REQUEST COUNT ERR[,ERR...] fail the next COUNT requests of that type\n"
            "                                    with the errors in turn (REQUEST: Produce,\n"
            "                                    Fetch, Metadata, JoinGroup, EndTxn, ...;\n"
            "                                    ERR: a librdkafka error name such as\n"
            "                                    NOT_LEADER_FOR_PARTITION or _TRANSPORT)\n"
            "  clear [REQUEST]                   drop pushed errors (of every REQUEST type)\n"
            "  leader TOPIC PARTITION BROKER     move a partition's leader\n"
            "  coordinator group|transaction KEY BROKER\n"
            "                                    set a group or transaction coordinator\n"
            "  quit                              stop (exit 0)\n"
            "End of input leaves the cluster running.\n"
            "\n"
            "Exit status: 0 stopped, 1 runtime failure, 2 usage error.\n",
            (long long)def_brokers, (long long)def_partitions);
}

/* Answer one line; blank lines and # comments get no answer. */
static void control_line(mock_t *mk, char *line)
{
    char *p = line;
    while (*p == ' ' || *p == '\t' || *p == '\r') p++;
    if (*p == '\0' || *p == '#') return;
    char errstr[512];
    if (sw_mockctl_line(&mk->ctl, p, errstr, sizeof(errstr))) fputs("ok\n", stdout);
    else printf("error: %s\n", errstr);
    fflush(stdout);
}

/* Serve stdin until the stop flag, `quit`, or forever after EOF. Reads
 * with poll() + read() so a signal is seen within MOCK_TICK_MS. */
static int serve(mock_t *mk, bool control, volatile sig_atomic_t *running)
{
    bool eof = !control;
    char pending[MOCK_LINE_MAX + 1];
    size_t npending = 0;
    bool discarding = false; /* inside a line over MOCK_LINE_MAX */
    while (*running && !mk->ctl.quit) {
        if (eof) {
            poll(NULL, 0, MOCK_TICK_MS);
            continue;
        }
        struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
        int r = poll(&pfd, 1, MOCK_TICK_MS);
        if (r <= 0) continue; /* timeout or EINTR: check the flag */
        char chunk[4096];
        ssize_t n = read(STDIN_FILENO, chunk, sizeof(chunk));
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            fprintf(stderr, "stormwatch mock: reading commands: %s (no more commands)\n",
                    strerror(errno));
            eof = true;
            continue;
        }
        if (n == 0) {
            /* A last line without a newline still counts. */
            if (npending && !discarding) {
                pending[npending] = '\0';
                control_line(mk, pending);
            }
            npending = 0;
            eof = true;
            continue;
        }
        for (ssize_t i = 0; i < n && !mk->ctl.quit; i++) {
            char c = chunk[i];
            if (c == '\n') {
                if (discarding) {
                    printf("error: line longer than %d bytes\n", MOCK_LINE_MAX);
                    fflush(stdout);
                } else {
                    pending[npending] = '\0';
                    control_line(mk, pending);
                }
                npending = 0;
                discarding = false;
            } else if (!discarding) {
                if (npending == MOCK_LINE_MAX) discarding = true;
                else pending[npending++] = c;
            }
        }
    }
    return SW_EXIT_OK;
}

/* Start the cluster and its topics, publish the bootstrap, serve. */
/* sw_cli_mock_topics' skip: a name --topic created. */
typedef struct given_s {
    const mock_topic_t *topics;
    int ntopics;
} given_t;

static bool given(void *opaque, const char *name)
{
    const given_t *g = opaque;
    for (int i = 0; i < g->ntopics; i++)
        if (strlen(name) == g->topics[i].name_len &&
            memcmp(name, g->topics[i].name, g->topics[i].name_len) == 0)
            return true;
    return false;
}

static int run_mock(int brokers, const mock_topic_t *topics, int ntopics, const sw_settings_t *set,
                    const char *bootstrap_file, bool control, sw_log_level_t level,
                    volatile sig_atomic_t *running)
{
    sw_log_t log = sw_log_make(level, "stormwatch mock");
    sw_kafka_ctx_t ctx = {.log = &log};
    char errstr[512];
    mock_t mk = {.brokers = brokers};
    int rc = SW_EXIT_RUNTIME;
    mk.m = sw_mock_new(brokers, &ctx, errstr, sizeof(errstr));
    if (!mk.m) goto err;
    mk.ctl.m = mk.m;
    mk.ctl.brokers = mk.brokers;
    for (int i = 0; i < ntopics; i++) {
        char *name = sw_memdup0(topics[i].name, topics[i].name_len);
        sw_err_t err = sw_mock_topic(mk.m, name, topics[i].partitions, errstr, sizeof(errstr));
        free(name);
        if (err) goto err;
    }
    given_t g = {topics, ntopics};
    if (!sw_cli_mock_topics(mk.m, set, (int)set->ops.mock_partitions, given, &g, errstr,
                            sizeof(errstr)))
        goto err;
    const char *bootstrap = sw_mock_bootstrap(mk.m);
    printf("%s\n", bootstrap);
    fflush(stdout);
    if (bootstrap_file &&
        sw_write_file_atomic(bootstrap_file, bootstrap, errstr, sizeof(errstr)) != SW_OK)
        goto err;
    sw_log(&log, SW_LOG_INFO, "%d brokers at %s", mk.brokers, bootstrap);
    rc = serve(&mk, control, running);
    /* The file names a cluster that is about to go away. */
    if (bootstrap_file) unlink(bootstrap_file);
    sw_mock_destroy(mk.m);
    return rc;
err:
    fprintf(stderr, "stormwatch mock: %s\n", errstr);
    sw_mock_destroy(mk.m);
    return rc;
}

int sw_cmd_mock(int argc, char **argv, const sw_stop_t *stop)
{
    static const struct option opts[] = {
        {"brokers", required_argument, NULL, 'B'},
        {"topic", required_argument, NULL, 't'},
        {"bootstrap-file", required_argument, NULL, 'f'},
        {"control", no_argument, NULL, 'k'},
        {"config", required_argument, NULL, 'c'},
        {"log-level", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    /* Defaults: those of mock.brokers and mock.partitions (run's embedded cluster). */
    int64_t def_partitions = sw_cli_defaults()->ops.mock_partitions;
    int64_t brokers = 0; /* 0: mock.brokers */
    const char *bootstrap_file = NULL, *config_file = NULL;
    char **xs = sw_calloc((size_t)argc + 1, sizeof(*xs));
    int nx = 0;
    sw_conf_t *conf = NULL;
    bool control = false;
    sw_log_level_t level = SW_LOG_WARN;
    mock_topic_t *topics = sw_calloc((size_t)argc + 1, sizeof(*topics));
    int ntopics = 0, rc = SW_EXIT_USAGE, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hc:X:", opts, NULL)) != -1) {
        switch (c) {
        case 'B':
            if (!sw_cli_i64("mock", "--brokers", optarg, 1, 64, &brokers)) goto out;
            break;
        case 't': {
            const char *colon = strrchr(optarg, ':');
            mock_topic_t *t = &topics[ntopics];
            t->name = optarg;
            t->name_len = colon ? (size_t)(colon - optarg) : strlen(optarg);
            int64_t parts = 0; /* 0: mock.partitions */
            if (colon && !sw_cli_i64("mock", "--topic", colon + 1, 1, 100000, &parts)) goto out;
            if (!sw_mock_topic_name_ok(t->name, t->name_len)) {
                fprintf(stderr,
                        "stormwatch mock: option --topic: \"%s\" is not NAME[:PARTITIONS] with "
                        "NAME 1..249 characters of [a-zA-Z0-9._-]\n",
                        optarg);
                goto out;
            }
            t->partitions = (int)parts;
            ntopics++;
            break;
        }
        case 'f': bootstrap_file = optarg; break;
        case 'k': control = true; break;
        case 'c': config_file = optarg; break;
        case 'X': xs[nx++] = optarg; break;
        case 'l':
            if (!sw_cli_log_level("mock", optarg, &level)) goto out;
            break;
        case 'h':
            usage(stdout, sw_cli_defaults()->ops.mock_brokers, def_partitions);
            rc = SW_EXIT_OK;
            goto out;
        default: rc = sw_cli_bad_option("mock", argc, argv, optind, optopt); goto out;
        }
    }
    if (optind < argc) {
        fprintf(stderr,
                "stormwatch mock: unexpected argument '%s' (see 'stormwatch mock --help')\n",
                argv[optind]);
        goto out;
    }
    /* The configuration of run and notify: which topics they need. */
    conf = sw_conf_new();
    if (!sw_cli_conf_load("mock", conf, config_file, NULL, xs, nx)) goto out;
    char errstr[1024];
    if (sw_conf_check(conf, errstr, sizeof(errstr)) != SW_OK) {
        fprintf(stderr, "stormwatch mock: %s\n", errstr);
        goto out;
    }
    sw_settings_t set;
    sw_conf_settings(conf, &set);
    if (!brokers) brokers = set.ops.mock_brokers;
    for (int i = 0; i < ntopics; i++)
        if (!topics[i].partitions) topics[i].partitions = (int)set.ops.mock_partitions;
    rc = run_mock((int)brokers, topics, ntopics, &set, bootstrap_file, control, level,
                  stop->running);
out:
    sw_conf_destroy(conf);
    free(xs);
    free(topics);
    return rc;
}
