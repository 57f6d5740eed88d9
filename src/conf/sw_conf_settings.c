/*
 * sw_conf_settings() (see sw_conf.h): the table's current values into the
 * typed sw_settings_t, once, each through its row's offsetof(); and the
 * ranges of int and double properties for command-line options that set
 * the same quantity.
 */
#include <string.h>

#include "sw_conf.h"
#include "sw_conf_int.h"

/* Position of an enum property's value among its allowed values (the
 * typed enums of sw_conf.h follow that order). */
static int enum_idx(const prop_t *prop, const conf_val_t *val)
{
    for (int k = 0; prop->allowed[k]; k++)
        if (strcmp(prop->allowed[k], val->text) == 0) return k;
    return 0; /* not reached: values are checked when set */
}

/* One property's current value into its typed field (the row's off and
 * size; test_conf checks that every row's size fits its type). */
static void fill(const prop_t *prop, const conf_val_t *val, char *field)
{
    switch (prop->type) {
    case PROP_INT:
        if (prop->size == sizeof(int64_t)) {
            memcpy(field, &val->i, sizeof(int64_t));
        } else { /* int32_t or int: the row's range fits */
            int32_t v = (int32_t)val->i;
            memcpy(field, &v, sizeof(v));
        }
        return;
    case PROP_DBL: memcpy(field, &val->d, sizeof(double)); return;
    case PROP_BOOL: memcpy(field, &val->b, sizeof(bool)); return;
    case PROP_STR: memcpy(field, &val->text, sizeof(const char *)); return;
    case PROP_ENUM: {
        int k = enum_idx(prop, val);
        if (prop->size == sizeof(bool)) { /* on/off: "on" is the first value */
            bool on = k == 0;
            memcpy(field, &on, sizeof(on));
        } else {
            memcpy(field, &k, sizeof(k));
        }
        return;
    }
    case PROP_LIST: {
        sw_conf_strs_t strs = {(const char *const *)val->elems, val->n_elems};
        memcpy(field, &strs, sizeof(strs));
        return;
    }
    }
}

void sw_conf_settings(const sw_conf_t *conf, sw_settings_t *set)
{
    memset(set, 0, sizeof(*set)); /* engine.params.hash_key zero, as sw_params_default() */
    for (size_t i = 0; i < sw_conf_nprops; i++)
        fill(&sw_conf_props[i], &conf->vals[i], (char *)set + sw_conf_props[i].off);
    /* The values that are more than one property's. notify has no
     * transactions: its commit interval is the one set. */
    set->notify.commit_interval_ms = set->delivery.commit_interval_ms;
    set->delivery.repartition = set->delivery.repartition_mode != SW_REPARTITION_OFF;
    /* Transactions hold alerts until they commit: Kafka Streams' 100 ms
     * unless the user chose an interval. */
    if (set->delivery.guarantee == SW_GUARANTEE_EXACTLY_ONCE &&
        !sw_conf_is_set(conf, "commit.interval.ms"))
        set->delivery.commit_interval_ms = 100;
}

/* The table row of @p name when it has type @p type. */
static const prop_t *typed_prop(const char *name, prop_type_t type)
{
    for (size_t i = 0; i < sw_conf_nprops; i++)
        if (strcmp(sw_conf_props[i].name, name) == 0)
            return sw_conf_props[i].type == type ? &sw_conf_props[i] : NULL;
    return NULL;
}

bool sw_conf_range_i64(const char *name, int64_t *minp, int64_t *maxp)
{
    const prop_t *prop = typed_prop(name, PROP_INT);
    if (!prop) return false;
    *minp = prop->min;
    *maxp = prop->max;
    return true;
}

bool sw_conf_range_dbl(const char *name, double *minp, double *maxp)
{
    const prop_t *prop = typed_prop(name, PROP_DBL);
    if (!prop) return false;
    *minp = prop->dmin;
    *maxp = prop->dmax;
    return true;
}
