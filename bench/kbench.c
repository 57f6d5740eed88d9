/*
 * sw_kbench: the Kafka-side driver of bench/kafka.sh and bench/soak.sh.
 * Subcommands: `load` (synthetic telemetry from sw_gen, as Confluent Avro,
 * one job per partition, optionally throttled by the daemon's /metrics),
 * `count` (a count-only consumer: the librdkafka baseline), `watch` (polls
 * /metrics and /proc/PID/status, records when a count is reached, writes a
 * time series) and `latency` (produces the sample that completes a storm
 * and times the trigger on the output topic). Measures only: it never
 * decides what counts as an alert and is not part of the daemon.
 */
#include "kbench.h"

/* ---- main ------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(
        f,
        "Usage: sw_kbench COMMAND [OPTIONS]   (bench driver; see bench/README.md)\n"
        "\n"
        "  load    -b BOOT -t TOPIC [-P PARTS] [--json] --gen SPEC [--gen SPEC]... [-X p=v]...\n"
        "          [--throttle-url URL --max-ahead N] [--progress] [--schema-id N]\n"
        "          [--place index|murmur2|none]\n"
        "          generate telemetry (sw_gen) and produce it as Confluent Avro; job k of\n"
        "          the run (first-seen order) goes to partition k %% PARTS keyed by its\n"
        "          job_id (--place murmur2: where Kafka's clients put that key; none:\n"
        "          no key, message n to partition n %% PARTS); SPEC is\n"
        "          jobs=J,ranks=R,samples=S[,prefix=P,seed=N,storms=N,storm_at=F,\n"
        "          spread_ms=MS,interval_ms=MS,delay=N (start after N events)]; with\n"
        "          --throttle-url (the daemon's /metrics) it stays at most N events\n"
        "          ahead of what the daemon consumed\n"
        "  count   -b BOOT -t TOPIC -n N -g GROUP [-X p=v]...  count-only consumer\n"
        "  watch   --url URL [--pid PID] [-n N] [--interval-ms MS] [--tail-ms MS]\n"
        "          [--tsv FILE] [--t0 EPOCH_S]  poll /metrics (+ /proc/PID) until the\n"
        "          events-in counter reaches N (then MS more), or until SIGTERM\n"
        "  latency -b BOOT -t IN -o OUT [--storms N] [--ranks R] [--warmup N]\n"
        "          [--gap-min-ms MS --gap-max-ms MS] [--observer-wait-ms MS] [--raw FILE]\n"
        "          [--place index|murmur2|none]  (storm i's partition, as load's)\n"
        "          storm i: quiet history, rank 0 crosses, a random quiet gap, then rank 1's\n"
        "          crossing sample; time from just before producing it until its trigger\n"
        "          is read from OUT\n"
        "\n"
        "Results are printed as key=value lines on standard output.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    const char *cmd = argv[1];
    argc--;
    argv++;
    optind = 1;
    if (!strcmp(cmd, "load")) return cmd_load(argc, argv);
    if (!strcmp(cmd, "count")) return cmd_count(argc, argv);
    if (!strcmp(cmd, "watch")) return cmd_watch(argc, argv);
    if (!strcmp(cmd, "latency")) return cmd_latency(argc, argv);
    fprintf(stderr, "sw_kbench: unknown command \"%s\"\n", cmd);
    usage(stderr);
    return 2;
}
