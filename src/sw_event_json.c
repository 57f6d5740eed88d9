/* placeholder: replaced by the tools helper */
typedef int sw_event_json_placeholder_t;
