/*
 * stormwatch: first-cause detection of GPU memory storms in distributed
 * training telemetry. This file only dispatches to the commands and holds
 * the one mutable file-scope variable of the project, the signal flag.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "sw_cli.h"
#include "sw_cmds.h"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: stormwatch COMMAND [OPTIONS] [ARGS]\n"
            "\n"
            "Finds which rank started a GPU memory storm in distributed training\n"
            "telemetry (stormlog TelemetryEvent v2/v3).\n"
            "\n"
            "Commands:\n"
            "  analyze   batch first-cause analysis of JSONL files (one JSON object)\n"
            "  replay    stream analysis of JSONL files (one record per line)\n"
            "  gen       write synthetic telemetry with an injected storm\n"
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
    fprintf(stderr, "stormwatch: unknown command '%s' (see 'stormwatch --help')\n", cmd);
    return SW_EXIT_USAGE;
}
