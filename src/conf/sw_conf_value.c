/*
 * Values of the property table (see sw_conf.h): each property's text parsed
 * and checked against its type, range and flags (topics, host:port, URLs,
 * Alertmanager labels, id=path lists), with errors that name the property
 * and the value (never a secret's value).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sw_alloc.h"
#include "sw_conf_int.h"
/* ------------------------------------------------------------------------ */
/* Values. */

void sw_conf_val_clear(conf_val_t *val)
{
    free(val->text);
    for (size_t k = 0; k < val->n_elems; k++) free(val->elems[k]);
    free(val->elems);
    memset(val, 0, sizeof(*val));
}

void sw_conf_put_range(sw_buf_t *b, const prop_t *prop)
{
    if (prop->type == PROP_INT)
        sw_buf_printf(b, "%lld..%lld", (long long)prop->min, (long long)prop->max);
    else sw_buf_printf(b, "%g..%g", prop->dmin, prop->dmax);
}

/* `configuration property "NAME": value "V" ` (or `value [redacted] ` for
 * secrets), ready for the reason. */
static void value_err_start(sw_buf_t *msg, const char *name, const char *value, bool secret)
{
    sw_buf_puts(msg, "configuration property ");
    sw_conf_put_quoted(msg, name);
    sw_buf_puts(msg, ": value ");
    if (secret) sw_buf_puts(msg, REDACTED);
    else sw_conf_put_quoted(msg, value);
    sw_buf_putc(msg, ' ');
}

/* Shortest "%g" text that reads back as exactly @p d. */
static char *dbl_text(double d)
{
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
        if (strtod(tmp, NULL) == d) break;
    }
    return sw_strdup(tmp);
}

/* Kafka topic name rules; NULL when fine, else the reason. */
static const char *topic_problem(const char *s, size_t len)
{
    if (len == 0) return "is empty (expected a topic name)";
    if (len > TOPIC_MAX_LEN) return "is longer than 249 characters (expected a topic name)";
    if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
        return "is not a valid topic name (\".\" and \"..\" are reserved)";
    for (size_t k = 0; k < len; k++) {
        unsigned char c = (unsigned char)s[k];
        if (!isalnum(c) && c != '.' && c != '_' && c != '-')
            return "is not a valid topic name (expected characters a-z A-Z 0-9 . _ -)";
    }
    return NULL;
}

/* Empty, or http(s)://REST with a non-empty REST of printable ASCII without
 * blanks (Alertmanager refuses an alert whose generatorURL is no URI). */
static bool url_ok(const char *s)
{
    if (!*s) return true;
    size_t pre = strncmp(s, "http://", 7) == 0 ? 7 : strncmp(s, "https://", 8) == 0 ? 8 : 0;
    if (!pre || !s[pre]) return false;
    for (const char *p = s + pre; *p; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f) return false;
    return true;
}

/* Empty, or comma-separated URLs (each url_ok(), blanks around commas
 * allowed, no empty element). */
static bool urls_ok(const char *s)
{
    if (!*s) return true;
    char one[2049];
    for (const char *p = s;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len && (*p == ' ' || *p == '\t')) p++, len--;
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t')) len--;
        if (!len || len >= sizeof(one)) return false;
        memcpy(one, p, len);
        one[len] = '\0';
        if (!url_ok(one)) return false;
        if (!comma) return true;
        p = comma + 1;
    }
}

/* Empty, or name=value,... with Prometheus label names ([a-zA-Z_][a-zA-Z0-9_]*, no
 * leading "__"), each once, none of the labels the alert itself sets, and
 * values of printable ASCII without ',' (which separates them). */
static bool labels_ok(const char *s, char *why, size_t why_size)
{
    static const char *const reserved[] = {"alertname", "job_id", "episode", "dedup_key",
                                           "severity"};
    const char *p = s;
    char seen[4096] = ",";
    while (*p) {
        const char *eq = strchr(p, '='), *comma = strchr(p, ',');
        if (!comma) comma = p + strlen(p);
        if (!eq || eq > comma || eq == p) {
            snprintf(why, why_size, "has \"%.*s\", expected name=value", (int)(comma - p), p);
            return false;
        }
        size_t n = (size_t)(eq - p);
        bool name_ok = (isalpha((unsigned char)p[0]) || p[0] == '_') &&
                       !(n >= 2 && p[0] == '_' && p[1] == '_');
        for (size_t k = 1; k < n && name_ok; k++)
            name_ok = isalnum((unsigned char)p[k]) || p[k] == '_';
        if (!name_ok) {
            snprintf(why, why_size, "has label name \"%.*s\", expected [a-zA-Z_][a-zA-Z0-9_]*",
                     (int)n, p);
            return false;
        }
        for (size_t k = 0; k < sizeof(reserved) / sizeof(reserved[0]); k++)
            if (strlen(reserved[k]) == n && strncmp(p, reserved[k], n) == 0) {
                snprintf(why, why_size, "sets label \"%s\", which stormwatch sets itself",
                         reserved[k]);
                return false;
            }
        char key[260];
        snprintf(key, sizeof(key), ",%.*s,", (int)(n < 256 ? n : 256), p);
        if (strstr(seen, key)) {
            snprintf(why, why_size, "sets label \"%.*s\" twice", (int)n, p);
            return false;
        }
        if (strlen(seen) + strlen(key) < sizeof(seen)) strcat(seen, key + 1);
        for (const char *v = eq + 1; v < comma; v++)
            if ((unsigned char)*v < 0x20 || (unsigned char)*v >= 0x7f) {
                snprintf(why, why_size, "has a control or non-ASCII byte in label \"%.*s\"", (int)n,
                         p);
                return false;
            }
        p = *comma ? comma + 1 : comma;
    }
    return true;
}

/* Empty, or HOST:PORT with a decimal PORT of 0..65535. */
static bool hostport_ok(const char *s)
{
    if (!*s) return true;
    const char *colon = strrchr(s, ':');
    if (!colon || !colon[1] || strlen(colon + 1) > 5) return false;
    long port = 0;
    for (const char *p = colon + 1; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        port = port * 10 + (*p - '0');
    }
    return port <= 65535;
}

sw_conf_res_t sw_conf_parse_bool(const char *name, const char *value, bool *valp, char *errstr,
                                 size_t errstr_size)
{
    static const char *const yes[] = {"true", "yes", "1"}, *const no[] = {"false", "no", "0"};
    for (size_t k = 0; k < 3; k++) {
        if (strcmp(value, yes[k]) == 0) {
            *valp = true;
            return SW_CONF_OK;
        }
        if (strcmp(value, no[k]) == 0) {
            *valp = false;
            return SW_CONF_OK;
        }
    }
    sw_buf_t msg;
    sw_buf_init(&msg);
    value_err_start(&msg, name, value, sw_conf_is_secret(name));
    sw_buf_puts(&msg, "is not a boolean (expected true, false, yes, no, 1 or 0)");
    sw_conf_err_out(&msg, errstr, errstr_size);
    return SW_CONF_INVALID;
}

/* An ID=PATH element of avro.schema.ids.telemetry, or why it is not. */
static const char *idfile_problem(const char *el)
{
    const char *eq = strchr(el, '=');
    if (!eq || eq == el || !eq[1]) return "is not ID=PATH (e.g. 7=schemas/telemetry_v1.avsc)";
    char *end = NULL;
    errno = 0;
    long long id = strtoll(el, &end, 10);
    if (end != eq || errno || id < 0 || id > 2147483647)
        return "has an ID that is not an integer 0..2147483647";
    return NULL;
}

/* Split a list value into trimmed elements; every element must be
 * non-empty (and a topic or ^regex with PROP_F_TOPIC). On error @p msg
 * holds the reason and @p val is cleared. */
static bool list_parse(const prop_t *prop, const char *value, conf_val_t *val, sw_buf_t *msg)
{
    bool secret = sw_conf_prop_secret(prop);
    const char *p = value;
    if (prop->flags & PROP_F_EMPTY) {
        const char *q = value;
        while (sw_conf_is_blank(*q)) q++;
        if (!*q) {
            val->text = sw_strdup("");
            return true;
        }
    }
    for (;;) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        const char *s = p, *e = end;
        while (s < e && sw_conf_is_blank(*s)) s++;
        while (e > s && sw_conf_is_blank(e[-1])) e--;
        const char *why = NULL;
        if (s == e)
            why = "has an empty element (expected a comma-separated list of non-empty entries)";
        else if ((prop->flags & PROP_F_TOPIC) && *s == '^' && e - s == 1)
            why = "has an empty regex \"^\" (expected ^ followed by a pattern)";
        if (why) {
            value_err_start(msg, prop->name, value, secret);
            sw_buf_puts(msg, why);
            sw_conf_val_clear(val);
            return false;
        }
        char *el = sw_memdup0(s, (size_t)(e - s));
        if ((prop->flags & PROP_F_URL) && !url_ok(el))
            why = "is not an http:// or https:// URL without blanks";
        else if (prop->flags & PROP_F_IDFILE) why = idfile_problem(el);
        free(el);
        if (!why && (prop->flags & PROP_F_TOPIC) && *s != '^')
            why = topic_problem(s, (size_t)(e - s));
        if (why) {
            char *elem = sw_memdup0(s, (size_t)(e - s));
            sw_buf_puts(msg, "configuration property ");
            sw_conf_put_quoted(msg, prop->name);
            sw_buf_puts(msg, ": element ");
            if (secret) sw_buf_puts(msg, REDACTED);
            else sw_conf_put_quoted(msg, elem);
            sw_buf_printf(msg, " %s", why);
            free(elem);
            sw_conf_val_clear(val);
            return false;
        }
        val->elems = sw_reallocarray(val->elems, val->n_elems + 1, sizeof(*val->elems));
        val->elems[val->n_elems++] = sw_memdup0(s, (size_t)(e - s));
        if (!*end) break;
        p = end + 1;
    }
    /* Canonical text: elements joined by ','. */
    sw_buf_t text;
    sw_buf_init(&text);
    for (size_t k = 0; k < val->n_elems; k++) {
        if (k) sw_buf_putc(&text, ',');
        sw_buf_puts(&text, val->elems[k]);
    }
    val->text = sw_strdup(sw_buf_cstr(&text));
    sw_buf_clear(&text);
    return true;
}

/* Parse @p value for @p prop into a fresh @p val. @returns SW_CONF_OK, or
 * SW_CONF_INVALID with the message in errstr and @p val left empty. */
sw_conf_res_t sw_conf_prop_parse(const prop_t *prop, const char *value, conf_val_t *val,
                                 char *errstr, size_t errstr_size)
{
    memset(val, 0, sizeof(*val));
    bool secret = sw_conf_prop_secret(prop);
    sw_buf_t msg;
    sw_buf_init(&msg);

    switch (prop->type) {
    case PROP_INT: {
        char *end = NULL;
        errno = 0;
        long long v = 0;
        /* strtoll would skip leading blanks; a value must be exact. */
        if (*value && !sw_conf_is_blank(*value)) v = strtoll(value, &end, 10);
        if (!end || end == value || *end) {
            value_err_start(&msg, prop->name, value, secret);
            sw_buf_puts(&msg, "is not an integer (expected ");
            sw_conf_put_range(&msg, prop);
            sw_buf_putc(&msg, ')');
            goto err;
        }
        if (errno == ERANGE || v < prop->min || v > prop->max) {
            value_err_start(&msg, prop->name, value, secret);
            sw_buf_puts(&msg, "is out of range (expected ");
            sw_conf_put_range(&msg, prop);
            sw_buf_putc(&msg, ')');
            goto err;
        }
        val->i = (int64_t)v;
        char tmp[24];
        snprintf(tmp, sizeof(tmp), "%lld", v);
        val->text = sw_strdup(tmp);
        return SW_CONF_OK;
    }
    case PROP_DBL: {
        char *end = NULL;
        double d = 0;
        if (*value && !sw_conf_is_blank(*value)) d = strtod(value, &end);
        if (!end || end == value || *end || isnan(d)) {
            value_err_start(&msg, prop->name, value, secret);
            sw_buf_puts(&msg, "is not a number (expected ");
            sw_conf_put_range(&msg, prop);
            sw_buf_putc(&msg, ')');
            goto err;
        }
        if (!(d >= prop->dmin && d <= prop->dmax)) {
            value_err_start(&msg, prop->name, value, secret);
            sw_buf_puts(&msg, "is out of range (expected ");
            sw_conf_put_range(&msg, prop);
            sw_buf_putc(&msg, ')');
            goto err;
        }
        val->d = d;
        val->text = dbl_text(d);
        return SW_CONF_OK;
    }
    case PROP_BOOL:
        if (sw_conf_parse_bool(prop->name, value, &val->b, errstr, errstr_size) != SW_CONF_OK)
            return SW_CONF_INVALID;
        val->text = sw_strdup(val->b ? "true" : "false");
        return SW_CONF_OK;
    case PROP_ENUM:
        for (size_t k = 0; prop->allowed[k]; k++) {
            if (strcmp(value, prop->allowed[k]) == 0) {
                val->text = sw_strdup(value);
                return SW_CONF_OK;
            }
        }
        value_err_start(&msg, prop->name, value, secret);
        sw_buf_puts(&msg, "is not one of ");
        for (size_t k = 0; prop->allowed[k]; k++)
            sw_buf_printf(&msg, "%s%s", k ? ", " : "", prop->allowed[k]);
        goto err;
    case PROP_STR: {
        size_t len = strlen(value);
        const char *why = NULL;
        char lab_err[160];
        if (prop->flags & PROP_F_TOPIC) {
            if (len > 0 || prop->min > 0) why = topic_problem(value, len);
        } else if ((prop->flags & PROP_F_HOSTPORT) && !hostport_ok(value)) {
            why = "is not host:port (expected e.g. \"0.0.0.0:9100\", or empty to disable)";
        } else if ((prop->flags & PROP_F_URL) && !url_ok(value)) {
            why = "is not an http:// or https:// URL without blanks (or empty)";
        } else if ((prop->flags & PROP_F_URLS) && !urls_ok(value)) {
            why =
                "is not a comma-separated list of http:// or https:// URLs without blanks "
                "(or empty)";
        } else if ((prop->flags & PROP_F_LABELS) && !labels_ok(value, lab_err, sizeof(lab_err))) {
            why = lab_err;
        } else if ((int64_t)len < prop->min || (int64_t)len > prop->max) {
            value_err_start(&msg, prop->name, value, secret);
            if (len == 0) sw_buf_puts(&msg, "is empty (expected a non-empty string)");
            else
                sw_buf_printf(&msg, "is %zu characters long (expected %lld..%lld)", len,
                              (long long)prop->min, (long long)prop->max);
            goto err;
        }
        if (why) {
            value_err_start(&msg, prop->name, value, secret);
            sw_buf_puts(&msg, why);
            goto err;
        }
        val->text = sw_strdup(value);
        return SW_CONF_OK;
    }
    case PROP_LIST:
        if (!list_parse(prop, value, val, &msg)) goto err;
        return SW_CONF_OK;
    }
    sw_buf_puts(&msg, "configuration property ");
    sw_conf_put_quoted(&msg, prop->name);
    sw_buf_puts(&msg, " has an unknown type");
err:
    sw_conf_err_out(&msg, errstr, errstr_size);
    sw_conf_val_clear(val);
    return SW_CONF_INVALID;
}
