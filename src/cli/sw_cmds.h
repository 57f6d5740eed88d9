/*
 * The CLI commands; each is a main() of its own with exit codes 0 (ok),
 * 1 (runtime failure) and 2 (usage or input error).
 */
#ifndef SW_CMDS_H
#define SW_CMDS_H

#include <signal.h>
#include <stdbool.h>

int sw_cmd_analyze(int argc, char **argv);
int sw_cmd_replay(int argc, char **argv);
int sw_cmd_gen(int argc, char **argv);

struct sw_genx_opts_s;
/** `gen --crash SCENARIO` (sw_cmd_gen_crash.c): @returns the exit status. */
int sw_cmd_gen_crash(const struct sw_genx_opts_s *o, const char *out_path, bool gzip,
                     const char *truth_path, bool quiet);
int sw_cmd_run(int argc, char **argv);
int sw_cmd_notify(int argc, char **argv);
int sw_cmd_produce(int argc, char **argv);
int sw_cmd_tail(int argc, char **argv);
int sw_cmd_mock(int argc, char **argv);
int sw_cmd_demo(int argc, char **argv);
int sw_cmd_report(int argc, char **argv);

/**
 * @brief The process's stop flag (set by SIGTERM/SIGINT): long-running
 *        commands poll it. Installs the handlers on first use.
 * @returns a pointer valid for the life of the process.
 */
volatile sig_atomic_t *sw_main_running(void);

/** How many SIGTERM/SIGINT arrived (a second one: stop at once). */
volatile sig_atomic_t *sw_main_stops(void);

#endif /* SW_CMDS_H */
