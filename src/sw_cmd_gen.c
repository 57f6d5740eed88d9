/* placeholder replaced below */
int sw_cmd_gen(int argc, char **argv);
int sw_cmd_gen(int argc, char **argv) { (void)argc; (void)argv; return 2; }
