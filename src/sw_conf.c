/* Configuration: placeholder until the module lands. */
typedef int sw_conf_placeholder_t;
