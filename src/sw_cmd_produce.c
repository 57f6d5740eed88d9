/* placeholder: replaced by the tools helper */
#include "sw_cmds.h"
int sw_cmd_produce(int argc, char **argv) { (void)argc; (void)argv; return 2; }
