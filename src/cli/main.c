/*
 * stormwatch: first-cause detection of GPU memory storms in distributed
 * training telemetry. This file only dispatches to the commands and holds
 * the one mutable file-scope variable of the project, the signal flag: it
 * installs the handlers that write it before a long-running command starts
 * and passes it down (sw_stop_t); nothing else installs or writes it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "sw_cli.h"
#include "sw_cmds.h"

/* The only mutable file-scope variables of the project: cleared by the
 * first SIGTERM/SIGINT and polled by the long-running commands (through
 * the sw_stop_t main() hands them); the number of those signals (a second
 * one means: stop now). */
static volatile sig_atomic_t run = 1;
static volatile sig_atomic_t stops = 0;

/* A signal within this long of the first is the same request: tools such
 * as timeout(1) signal the process and then its group. */
#define SAME_STOP_MS 300

static void on_signal(int sig)
{
    (void)sig;
    static int64_t first_ms; /* touched only here */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    run = 0;
    if (stops == 0) first_ms = now;
    else if (now - first_ms < SAME_STOP_MS) return;
    if (stops < 100) stops++;
}

/* Before a long-running command starts: the first SIGTERM/SIGINT asks it
 * to stop (instead of killing the process), a closed pipe is an error of
 * the write instead of a signal. */
static void signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: stormwatch COMMAND [OPTIONS] [ARGS]\n"
            "\n"
            "Finds which rank started a GPU memory storm in distributed training\n"
            "telemetry (stormlog TelemetryEvent v2/v3/v4).\n"
            "\n"
            "Commands:\n"
            "  analyze   batch first-cause analysis of JSONL files (one JSON object)\n"
            "  replay    stream analysis of JSONL files (one record per line)\n"
            "  gen       write synthetic telemetry with an injected storm\n"
            "  run       the Kafka consumer-group daemon (embedded cluster by default)\n"
            "  notify    deliver the alert topic to Alertmanager, PagerDuty and webhooks\n"
            "  produce   publish JSONL telemetry to a Kafka topic\n"
            "  ship      follow stormlog's telemetry sink (segments, rotation) into Kafka\n"
            "  tail      print the records of a Kafka topic as JSON lines\n"
            "  mock      run librdkafka's mock Kafka cluster on loopback\n"
            "  demo      the whole pipeline on an embedded cluster, with injected storms\n"
            "  report    HTML incident report (charts, suspects, lifecycle) from alert records\n"
            "\n"
            "Run 'stormwatch COMMAND --help' for a command's options.\n"
            "  --version   print the version\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return SW_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return SW_EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("stormwatch %s\n", SW_VERSION);
        return SW_EXIT_OK;
    }
    if (!strcmp(cmd, "analyze")) return sw_cmd_analyze(argc - 1, argv + 1);
    if (!strcmp(cmd, "replay")) return sw_cmd_replay(argc - 1, argv + 1);
    if (!strcmp(cmd, "gen")) return sw_cmd_gen(argc - 1, argv + 1);
    if (!strcmp(cmd, "report")) return sw_cmd_report(argc - 1, argv + 1);
    static const struct {
        const char *name;
        int (*fn)(int argc, char **argv, const sw_stop_t *stop);
    } daemons[] = {{"run", sw_cmd_run},   {"notify", sw_cmd_notify}, {"produce", sw_cmd_produce},
                   {"ship", sw_cmd_ship}, {"tail", sw_cmd_tail},     {"mock", sw_cmd_mock},
                   {"demo", sw_cmd_demo}};
    for (size_t i = 0; i < sizeof(daemons) / sizeof(daemons[0]); i++) {
        if (strcmp(cmd, daemons[i].name)) continue;
        signals_install();
        const sw_stop_t stop = {&run, &stops};
        return daemons[i].fn(argc - 1, argv + 1, &stop);
    }
    fprintf(stderr, "stormwatch: unknown command '%s' (see 'stormwatch --help')\n", cmd);
    return SW_EXIT_USAGE;
}
