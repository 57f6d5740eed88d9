/* placeholder */
typedef int sw_http_placeholder_t;
