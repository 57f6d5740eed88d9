/* Generator: placeholder until the module lands. */
typedef int sw_gen_placeholder_t;
