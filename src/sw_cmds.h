/*
 * The CLI commands; each is a main() of its own with exit codes 0 (ok),
 * 1 (runtime failure) and 2 (usage or input error).
 */
#ifndef SW_CMDS_H
#define SW_CMDS_H

int sw_cmd_analyze(int argc, char **argv);
int sw_cmd_replay(int argc, char **argv);
int sw_cmd_gen(int argc, char **argv);

#endif /* SW_CMDS_H */
