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
int sw_cmd_report(int argc, char **argv);

/**
 * The process's stop request. main() installs the SIGTERM/SIGINT handlers
 * that write it (and ignores SIGPIPE) before it starts a long-running
 * command, and hands it down; the commands and the daemons below them
 * only read it. Both pointers are valid for the life of the process.
 */
typedef struct sw_stop_s {
    volatile sig_atomic_t *running; /**< cleared by the first SIGTERM/SIGINT */
    volatile sig_atomic_t *stops;   /**< how many arrived (a second one: stop at once) */
} sw_stop_t;

/* The long-running commands; @p stop is borrowed for the call. */
int sw_cmd_run(int argc, char **argv, const sw_stop_t *stop);
int sw_cmd_notify(int argc, char **argv, const sw_stop_t *stop);
int sw_cmd_produce(int argc, char **argv, const sw_stop_t *stop);
int sw_cmd_ship(int argc, char **argv, const sw_stop_t *stop);
int sw_cmd_tail(int argc, char **argv, const sw_stop_t *stop);
int sw_cmd_mock(int argc, char **argv, const sw_stop_t *stop);
int sw_cmd_demo(int argc, char **argv, const sw_stop_t *stop);

#endif /* SW_CMDS_H */
