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
    rd_kafka_mock_cluster_t *mcluster; /* borrowed from m */
    int brokers;
    bool quit; /* `quit` was received */
} mock_t;

/* Kafka API keys by protocol name (the requests the mock answers that
 * stormwatch's clients send). */
static const struct {
    const char *name;
    int16_t key;
} k_apis[] = {
    {"Produce", 0},          {"Fetch", 1},
    {"ListOffsets", 2},      {"Metadata", 3},
    {"OffsetCommit", 8},     {"OffsetFetch", 9},
    {"FindCoordinator", 10}, {"JoinGroup", 11},
    {"Heartbeat", 12},       {"LeaveGroup", 13},
    {"SyncGroup", 14},       {"DescribeGroups", 15},
    {"ApiVersions", 18},     {"InitProducerId", 22},
    {"OffsetForLeaderEpoch", 23}, {"AddPartitionsToTxn", 24},
    {"AddOffsetsToTxn", 25}, {"EndTxn", 26},
    {"TxnOffsetCommit", 28},
};
#define N_APIS (sizeof(k_apis) / sizeof(k_apis[0]))

static void usage(FILE *f, int64_t def_partitions)
{
    fprintf(f,
            "Usage: stormwatch mock [OPTIONS]\n"
            "\n"
            "Runs librdkafka's mock Kafka cluster on loopback (random ports) until SIGTERM\n"
            "or SIGINT, for tests and demos. Prints the bootstrap servers on standard output\n"
            "(one line) once the cluster is up.\n"
            "\n"
            "Options:\n"
            "  --brokers N                brokers, 1..64 (default 3)\n"
            "  --topic NAME[:PARTITIONS]  create a topic (default %lld partitions); repeatable\n"
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
            (long long)def_partitions);
}

/* Topic names as Kafka allows them: 1..249 of [a-zA-Z0-9._-]. */
static bool topic_name_ok(const char *s, size_t n)
{
    if (n == 0 || n > 249) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

/* A decimal integer in [min, max]; false with errstr naming what. */
static bool parse_ll(const char *what, const char *s, long long min, long long max,
                     long long *out, char *errstr, size_t errstr_size)
{
    char *end = NULL;
    errno = 0;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || end == s || *end != '\0' || errno == ERANGE || v < min || v > max) {
        snprintf(errstr, errstr_size, "%s \"%s\" is not an integer in %lld..%lld", what,
                 s ? s : "", min, max);
        return false;
    }
    *out = v;
    return true;
}

static bool api_by_name(const char *name, int16_t *key, char *errstr, size_t errstr_size)
{
    for (size_t i = 0; i < N_APIS; i++)
        if (strcasecmp(name, k_apis[i].name) == 0) {
            *key = k_apis[i].key;
            return true;
        }
    size_t n = (size_t)snprintf(errstr, errstr_size, "unknown request \"%s\" (expected one of",
                                name);
    for (size_t i = 0; i < N_APIS && n < errstr_size; i++)
        n += (size_t)snprintf(errstr + n, errstr_size - n, "%s %s", i ? "," : "",
                              k_apis[i].name);
    if (n < errstr_size) snprintf(errstr + n, errstr_size - n, ")");
    return false;
}

/* A librdkafka error by name: "NOT_LEADER_FOR_PARTITION", "_TRANSPORT",
 * with or without the RD_KAFKA_RESP_ERR_ prefix, any case. */
static bool err_by_name(const char *name, rd_kafka_resp_err_t *err, char *errstr,
                        size_t errstr_size)
{
    static const char prefix[] = "RD_KAFKA_RESP_ERR_";
    if (strncasecmp(name, prefix, sizeof(prefix) - 1) == 0) name += sizeof(prefix) - 1;
    const struct rd_kafka_err_desc *descs;
    size_t cnt;
    rd_kafka_get_err_descs(&descs, &cnt);
    for (size_t i = 0; i < cnt; i++)
        if (descs[i].name && strcasecmp(descs[i].name, name) == 0) {
            *err = descs[i].code;
            return true;
        }
    snprintf(errstr, errstr_size,
             "unknown error name \"%s\" (expected a librdkafka error name such as "
             "NOT_LEADER_FOR_PARTITION, REQUEST_TIMED_OUT or _TRANSPORT)",
             name);
    return false;
}

static bool broker_id(const mock_t *mk, const char *s, int32_t *id, char *errstr,
                      size_t errstr_size)
{
    long long v;
    if (!parse_ll("broker id", s, -1, mk->brokers, &v, errstr, errstr_size) || v == 0) {
        snprintf(errstr, errstr_size, "broker id \"%s\" is not 1..%d or -1 (all)", s ? s : "",
                 mk->brokers);
        return false;
    }
    *id = (int32_t)v;
    return true;
}

static bool rk_ok(rd_kafka_resp_err_t err, char *errstr, size_t errstr_size)
{
    if (!err) return true;
    snprintf(errstr, errstr_size, "%s: %s", rd_kafka_err2name(err), rd_kafka_err2str(err));
    return false;
}

static bool cmd_errors(mock_t *mk, char **tok, int ntok, char *errstr, size_t errstr_size)
{
    int16_t api;
    long long cnt;
    if (ntok != 4) {
        snprintf(errstr, errstr_size, "usage: errors REQUEST COUNT ERRNAME[,ERRNAME...]");
        return false;
    }
    if (!api_by_name(tok[1], &api, errstr, errstr_size)) return false;
    if (!parse_ll("count", tok[2], 1, 100000, &cnt, errstr, errstr_size)) return false;
    rd_kafka_resp_err_t names[64];
    size_t nnames = 0;
    char *save = NULL;
    for (char *e = strtok_r(tok[3], ",", &save); e; e = strtok_r(NULL, ",", &save)) {
        if (nnames == sizeof(names) / sizeof(names[0])) {
            snprintf(errstr, errstr_size, "more than %zu error names", nnames);
            return false;
        }
        if (!err_by_name(e, &names[nnames], errstr, errstr_size)) return false;
        nnames++;
    }
    if (nnames == 0) {
        snprintf(errstr, errstr_size, "no error name given");
        return false;
    }
    rd_kafka_resp_err_t *errs = sw_calloc((size_t)cnt, sizeof(*errs));
    for (long long i = 0; i < cnt; i++) errs[i] = names[(size_t)i % nnames];
    rd_kafka_mock_push_request_errors_array(mk->mcluster, api, (size_t)cnt, errs);
    free(errs);
    return true;
}

/* Run one control command. @returns true for "ok". */
static bool control_cmd(mock_t *mk, char *line, char *errstr, size_t errstr_size)
{
    char *tok[8];
    int ntok = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
        if (ntok == (int)(sizeof(tok) / sizeof(tok[0]))) {
            snprintf(errstr, errstr_size, "too many words");
            return false;
        }
        tok[ntok++] = t;
    }
    if (ntok == 0) {
        snprintf(errstr, errstr_size, "empty command");
        return false;
    }
    const char *cmd = tok[0];
    int32_t id;
    long long v, w;
    if (!strcmp(cmd, "quit")) {
        mk->quit = true;
        return true;
    }
    if (!strcmp(cmd, "topic")) {
        if (ntok != 3) {
            snprintf(errstr, errstr_size, "usage: topic NAME PARTITIONS");
            return false;
        }
        if (!topic_name_ok(tok[1], strlen(tok[1]))) {
            snprintf(errstr, errstr_size,
                     "topic name \"%s\" is not 1..249 characters of [a-zA-Z0-9._-]", tok[1]);
            return false;
        }
        if (!parse_ll("partitions", tok[2], 1, 100000, &v, errstr, errstr_size)) return false;
        return sw_mock_topic(mk->m, tok[1], (int)v, errstr, errstr_size) == SW_OK;
    }
    if (!strcmp(cmd, "broker")) {
        bool rtt = ntok >= 2 && !strcmp(tok[1], "rtt");
        bool updown = ntok >= 2 && (!strcmp(tok[1], "down") || !strcmp(tok[1], "up"));
        if (!(updown && ntok == 3) && !(rtt && ntok == 4)) {
            snprintf(errstr, errstr_size, "usage: broker down|up BROKER, or broker rtt BROKER MS");
            return false;
        }
        if (!broker_id(mk, tok[2], &id, errstr, errstr_size)) return false;
        if (rtt) {
            if (!parse_ll("rtt", tok[3], 0, 3600000, &v, errstr, errstr_size)) return false;
            return rk_ok(rd_kafka_mock_broker_set_rtt(mk->mcluster, id, (int)v), errstr,
                         errstr_size);
        }
        return rk_ok(!strcmp(tok[1], "down") ? rd_kafka_mock_broker_set_down(mk->mcluster, id)
                                             : rd_kafka_mock_broker_set_up(mk->mcluster, id),
                     errstr, errstr_size);
    }
    if (!strcmp(cmd, "errors")) return cmd_errors(mk, tok, ntok, errstr, errstr_size);
    if (!strcmp(cmd, "clear")) {
        int16_t api;
        if (ntok > 2) {
            snprintf(errstr, errstr_size, "usage: clear [REQUEST]");
            return false;
        }
        if (ntok == 2) {
            if (!api_by_name(tok[1], &api, errstr, errstr_size)) return false;
            rd_kafka_mock_clear_request_errors(mk->mcluster, api);
            return true;
        }
        for (size_t i = 0; i < N_APIS; i++)
            rd_kafka_mock_clear_request_errors(mk->mcluster, k_apis[i].key);
        return true;
    }
    if (!strcmp(cmd, "leader")) {
        if (ntok != 4) {
            snprintf(errstr, errstr_size, "usage: leader TOPIC PARTITION BROKER");
            return false;
        }
        if (!parse_ll("partition", tok[2], 0, 100000, &v, errstr, errstr_size)) return false;
        if (!parse_ll("broker id", tok[3], -1, mk->brokers, &w, errstr, errstr_size) || w == 0) {
            snprintf(errstr, errstr_size, "broker id \"%s\" is not 1..%d or -1 (no leader)",
                     tok[3], mk->brokers);
            return false;
        }
        return rk_ok(rd_kafka_mock_partition_set_leader(mk->mcluster, tok[1], (int32_t)v,
                                                        (int32_t)w),
                     errstr, errstr_size);
    }
    if (!strcmp(cmd, "coordinator")) {
        if (ntok != 4 || (strcmp(tok[1], "group") && strcmp(tok[1], "transaction"))) {
            snprintf(errstr, errstr_size, "usage: coordinator group|transaction KEY BROKER");
            return false;
        }
        if (!broker_id(mk, tok[3], &id, errstr, errstr_size) || id < 1) {
            snprintf(errstr, errstr_size, "broker id \"%s\" is not 1..%d", tok[3], mk->brokers);
            return false;
        }
        return rk_ok(rd_kafka_mock_coordinator_set(mk->mcluster, tok[1], tok[2], id), errstr,
                     errstr_size);
    }
    snprintf(errstr, errstr_size,
             "unknown command \"%s\" (expected topic, broker, errors, clear, leader, "
             "coordinator or quit)",
             cmd);
    return false;
}

/* Answer one line; blank lines and # comments get no answer. */
static void control_line(mock_t *mk, char *line)
{
    char *p = line;
    while (*p == ' ' || *p == '\t' || *p == '\r') p++;
    if (*p == '\0' || *p == '#') return;
    char errstr[512];
    if (control_cmd(mk, p, errstr, sizeof(errstr))) fputs("ok\n", stdout);
    else printf("error: %s\n", errstr);
    fflush(stdout);
}

/* Serve stdin until the stop flag, `quit`, or forever after EOF. Reads
 * with poll() + read() so a signal is seen within MOCK_TICK_MS. */
static int serve(mock_t *mk, bool control)
{
    volatile sig_atomic_t *running = sw_main_running();
    bool eof = !control;
    char pending[MOCK_LINE_MAX + 1];
    size_t npending = 0;
    bool discarding = false; /* inside a line over MOCK_LINE_MAX */
    while (*running && !mk->quit) {
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
        for (ssize_t i = 0; i < n && !mk->quit; i++) {
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
static int run_mock(int brokers, const mock_topic_t *topics, int ntopics,
                    const char *bootstrap_file, bool control, sw_log_level_t level)
{
    sw_log_t log = sw_log_make(level, "stormwatch mock");
    sw_kafka_ctx_t ctx = {.log = &log};
    char errstr[512];
    mock_t mk = {.brokers = brokers};
    int rc = SW_EXIT_RUNTIME;
    sw_main_running(); /* handlers before the cluster's threads start */
    mk.m = sw_mock_new(brokers, &ctx, errstr, sizeof(errstr));
    if (!mk.m) goto err;
    mk.mcluster = sw_mock_cluster(mk.m);
    for (int i = 0; i < ntopics; i++) {
        char *name = sw_memdup0(topics[i].name, topics[i].name_len);
        sw_err_t err = sw_mock_topic(mk.m, name, topics[i].partitions, errstr, sizeof(errstr));
        free(name);
        if (err) goto err;
    }
    const char *bootstrap = sw_mock_bootstrap(mk.m);
    printf("%s\n", bootstrap);
    fflush(stdout);
    if (bootstrap_file &&
        sw_write_file_atomic(bootstrap_file, bootstrap, errstr, sizeof(errstr)) != SW_OK)
        goto err;
    sw_log(&log, SW_LOG_INFO, "%d brokers at %s", mk.brokers, bootstrap);
    rc = serve(&mk, control);
    /* The file names a cluster that is about to go away. */
    if (bootstrap_file) unlink(bootstrap_file);
    sw_mock_destroy(mk.m);
    return rc;
err:
    fprintf(stderr, "stormwatch mock: %s\n", errstr);
    sw_mock_destroy(mk.m);
    return rc;
}

int sw_cmd_mock(int argc, char **argv)
{
    static const struct option opts[] = {
        {"brokers", required_argument, NULL, 'B'},
        {"topic", required_argument, NULL, 't'},
        {"bootstrap-file", required_argument, NULL, 'f'},
        {"control", no_argument, NULL, 'c'},
        {"log-level", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int64_t def_partitions = 8;
    sw_conf_t *defaults = sw_conf_new();
    if (defaults) sw_conf_get_i64(defaults, "mock.partitions", &def_partitions);
    sw_conf_destroy(defaults);

    int64_t brokers = 3;
    const char *bootstrap_file = NULL;
    bool control = false;
    sw_log_level_t level = SW_LOG_WARN;
    mock_topic_t *topics = sw_calloc((size_t)argc + 1, sizeof(*topics));
    int ntopics = 0, rc = SW_EXIT_USAGE, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'B':
            if (!sw_cli_i64("mock", "--brokers", optarg, 1, 64, &brokers)) goto out;
            break;
        case 't': {
            const char *colon = strrchr(optarg, ':');
            mock_topic_t *t = &topics[ntopics];
            t->name = optarg;
            t->name_len = colon ? (size_t)(colon - optarg) : strlen(optarg);
            int64_t parts = def_partitions;
            if (colon && !sw_cli_i64("mock", "--topic", colon + 1, 1, 100000, &parts)) goto out;
            if (!topic_name_ok(t->name, t->name_len)) {
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
        case 'c': control = true; break;
        case 'l':
            if (!sw_log_parse_level(optarg, &level)) {
                fprintf(stderr,
                        "stormwatch mock: option --log-level: value \"%s\" is not error, warn, "
                        "info or debug\n",
                        optarg);
                goto out;
            }
            break;
        case 'h':
            usage(stdout, def_partitions);
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
    rc = run_mock((int)brokers, topics, ntopics, bootstrap_file, control, level);
out:
    free(topics);
    return rc;
}
