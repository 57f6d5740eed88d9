/*
 * Internal to src/conf: the property table's types and ids, shared by the
 * table (sw_conf_table.c: every property, its type, range, default and
 * description) and the machinery that reads it (sw_conf.c: parsing,
 * validation, the environment, -X list/dump, the README table).
 */
#ifndef SW_CONF_INT_H
#define SW_CONF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_conf.h"
#include "sw_types.h"

typedef enum prop_type_e {
    PROP_INT,  /**< int64, range min..max */
    PROP_DBL,  /**< double, range dmin..dmax */
    PROP_STR,  /**< string, length min..max characters */
    PROP_BOOL, /**< true/false/yes/no/1/0 */
    PROP_ENUM, /**< one of allowed[] */
    PROP_LIST  /**< comma-separated, non-empty trimmed elements */
} prop_type_t;

#define PROP_F_SECRET 0x1u   /* value never shown */
#define PROP_F_TOPIC 0x2u    /* Kafka topic name (list: each non-^ element) */
#define PROP_F_HOSTPORT 0x4u /* empty, or HOST:PORT with PORT 0..65535 */
#define PROP_F_URL 0x8u      /* empty, or an http:// or https:// URL */
#define PROP_F_LABELS 0x10u  /* empty, or name=value,... Alertmanager labels */
#define PROP_F_URLS 0x20u    /* empty, or comma-separated http:// or https:// URLs */
#define PROP_F_EMPTY 0x40u   /* list: may be empty (no elements) */
#define PROP_F_IDFILE 0x80u  /* list: each element ID=PATH, ID 0..2147483647 */

typedef struct prop_s {
    const char *name;
    size_t off;  /**< offsetof() the typed field in sw_settings_t */
    size_t size; /**< sizeof() that field: int64_t or int32_t/int (PROP_INT; the
                      range fits), double, const char *, bool (PROP_BOOL; PROP_ENUM
                      with values "on", "off"), an enum (PROP_ENUM: the value's
                      position), sw_conf_strs_t (PROP_LIST) */
    prop_type_t type;
    int64_t min;                /**< int: least value; string: least length */
    int64_t max;                /**< int: greatest value; string: greatest length */
    double dmin;                /**< double: least value */
    double dmax;                /**< double: greatest value */
    const char *const *allowed; /**< enum: NULL-terminated values */
    const char *defval;         /**< default, as text (parsed by sw_conf_new()) */
    const char *desc;           /**< one line, no '|' (Markdown) */
    unsigned flags;             /**< PROP_F_* */
} prop_t;

/* Kafka limits: topic names are 1..249 characters of [a-zA-Z0-9._-]. */
#define TOPIC_MAX_LEN 249

/** The table (sw_conf_table.c), in the order of -X list and -X dump. */
extern const prop_t sw_conf_props[];
/** Its number of rows. */
extern const size_t sw_conf_nprops;

/** Current value of one table property. */
typedef struct conf_val_s {
    char *text;   /**< canonical text (owned): dump, get_str */
    int64_t i;    /**< PROP_INT */
    double d;     /**< PROP_DBL */
    bool b;       /**< PROP_BOOL */
    char **elems; /**< PROP_LIST elements (owned) */
    size_t n_elems;
    bool set; /**< set by the user (file, environment, -X), not the default */
} conf_val_t;

/** One pass-through property. */
typedef struct kprop_s {
    sw_conf_scope_t scope;
    char *name;    /**< full name (owned) */
    size_t rk_off; /**< librdkafka name = name + rk_off */
    char *value;   /**< owned */
} kprop_t;

struct sw_conf_s {
    conf_val_t *vals; /**< sw_conf_nprops, in table order */
    kprop_t *kprops;  /**< order of last set */
    size_t n_kprops;
    size_t cap_kprops;
    char **ignored_env; /**< Kubernetes service-link variables passed over */
    size_t n_ignored_env;
};

#define LIST_HINT "see 'stormwatch run -X list'"
#define REDACTED "[redacted]"
/* -X dump: whether a secret is set, never its value. */
#define REDACTED_SET "[redacted, set]"
#define REDACTED_UNSET "[redacted, unset]"

/* ---- shared by sw_conf.c and sw_conf_value.c ---------------------------- */

bool sw_conf_is_blank(char c);
void sw_conf_err_out(sw_buf_t *msg, char *errstr, size_t errstr_size);
void sw_conf_put_quoted(sw_buf_t *b, const char *s);
bool sw_conf_prop_secret(const prop_t *prop);
void sw_conf_val_clear(conf_val_t *val);
void sw_conf_put_range(sw_buf_t *b, const prop_t *prop);
sw_conf_res_t sw_conf_prop_parse(const prop_t *prop, const char *value, conf_val_t *val,
                                 char *errstr, size_t errstr_size);

#endif /* SW_CONF_INT_H */
