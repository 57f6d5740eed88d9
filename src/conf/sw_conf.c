/*
 * Configuration: one table (sw_conf_props, in sw_conf_table.c) describes
 * every property and drives defaults, validation, `-X list`, `-X dump` and
 * the README table. kafka.* pass-through properties are kept verbatim, in the order
 * they were last set. Errors go to the caller's errstr, never to stdio;
 * a secret value never appears in an error or a dump. No Kafka handles.
 */
#include "sw_conf.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "sw_alloc.h"
#include "sw_conf_int.h"
#include "sw_redact.h"

/* ------------------------------------------------------------------------ */
/* Small helpers. */

bool sw_conf_is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* Copy a finished message into the caller's errstr (may be NULL/0) and
 * free it. */
void sw_conf_err_out(sw_buf_t *msg, char *errstr, size_t errstr_size)
{
    if (errstr && errstr_size) snprintf(errstr, errstr_size, "%s", sw_buf_cstr(msg));
    sw_buf_clear(msg);
}

/* Append @p s in double quotes, escaping quotes, backslashes and control
 * characters so that a message stays on one line. */
void sw_conf_put_quoted(sw_buf_t *b, const char *text)
{
    char *safe = sw_redact_dup(text); /* URL credentials never echo */
    sw_buf_putc(b, '"');
    for (const char *s = safe; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            sw_buf_putc(b, '\\');
            sw_buf_putc(b, (char)c);
        } else if (c < 0x20 || c == 0x7f) {
            sw_buf_printf(b, "\\x%02x", c);
        } else {
            sw_buf_putc(b, (char)c);
        }
    }
    sw_buf_putc(b, '"');
    free(safe);
}

static bool has_suffix_ci(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* Whether a name (the librdkafka part of a pass-through property, or any
 * other name) carries a secret, case-insensitively. */
static bool name_looks_secret(const char *name)
{
    static const char *const secrets[] = {"sasl.password",
                                          "sasl.oauthbearer.client.secret",
                                          "sasl.oauthbearer.config",
                                          "ssl.key.password",
                                          "ssl.key.pem",
                                          "ssl.keystore.password",
                                          NULL};
    for (size_t i = 0; secrets[i]; i++) {
        size_t n = strlen(name), m = strlen(secrets[i]);
        /* The name itself, or any dotted suffix of it. */
        if (has_suffix_ci(name, secrets[i]) && (n == m || name[n - m - 1] == '.')) return true;
    }
    /* Anything that looks like one: a misspelled secret (kafka.sasl.pasword)
     * must not be printed either. Over-redacting a path is harmless. */
    static const char *const parts[] = {"pass", "pasw",  "pwd",        "secret",
                                        "key",  "token", "credential", NULL};
    for (size_t i = 0; parts[i]; i++)
        if (strcasestr(name, parts[i])) return true;
    return false;
}

static const prop_t *prop_find(const char *name, size_t *idxp)
{
    for (size_t i = 0; i < sw_conf_nprops; i++) {
        if (strcmp(sw_conf_props[i].name, name) == 0) {
            if (idxp) *idxp = i;
            return &sw_conf_props[i];
        }
    }
    return NULL;
}

bool sw_conf_prop_secret(const prop_t *prop)
{
    return (prop->flags & PROP_F_SECRET) != 0;
}

/* Split a pass-through name: false when @p name does not start with
 * "kafka."; else the scope and the offset of the librdkafka part (which
 * may be empty). */
static bool kafka_split(const char *name, sw_conf_scope_t *scopep, size_t *offp)
{
    static const char both[] = "kafka.", cons[] = "kafka.consumer.", prod[] = "kafka.producer.";
    if (strncmp(name, both, sizeof(both) - 1) != 0) return false;
    if (strncmp(name, cons, sizeof(cons) - 1) == 0) {
        *scopep = SW_CONF_SCOPE_CONSUMER;
        *offp = sizeof(cons) - 1;
    } else if (strncmp(name, prod, sizeof(prod) - 1) == 0) {
        *scopep = SW_CONF_SCOPE_PRODUCER;
        *offp = sizeof(prod) - 1;
    } else {
        *scopep = SW_CONF_SCOPE_BOTH;
        *offp = sizeof(both) - 1;
    }
    return true;
}

bool sw_conf_is_secret(const char *name)
{
    if (!name) return false;
    const prop_t *prop = prop_find(name, NULL);
    if (prop) return sw_conf_prop_secret(prop) || name_looks_secret(name);
    sw_conf_scope_t scope;
    size_t off;
    if (kafka_split(name, &scope, &off)) return name_looks_secret(name + off);
    return name_looks_secret(name);
}

/* ------------------------------------------------------------------------ */
/* Suggestions for unknown names. */

/* Length of the first dotted component including its '.', or 0. */
static size_t first_component_len(const char *s)
{
    const char *dot = strchr(s, '.');
    return dot ? (size_t)(dot - s) + 1 : 0;
}

/* Up to three table properties close to @p name: edit distance <= 3 or a
 * name that starts with @p name (3+ characters) first, then names with the
 * same first dotted component; by edit distance, then table order.
 * @returns the count. */
static size_t suggest(const char *name, size_t out[3])
{
    size_t n_out = 0, dist[3];
    size_t len = strlen(name), comp = first_component_len(name);
    for (size_t i = 0; i < sw_conf_nprops; i++) {
        const char *cand = sw_conf_props[i].name;
        size_t d = len <= 255 ? sw_edit_distance_ci(name, cand) : 1000;
        if (d > 999) d = 999;
        bool strong = d <= 3 || (len >= 3 && strncasecmp(cand, name, len) == 0);
        if (!strong && !(comp > 1 && strncasecmp(name, cand, comp) == 0)) continue;
        if (!strong) d += 1000;
        /* Insert into the sorted top three (stable: table order on ties). */
        size_t pos = n_out;
        while (pos > 0 && dist[pos - 1] > d) pos--;
        if (pos >= 3) continue;
        size_t last = n_out < 3 ? n_out : 2;
        for (size_t k = last; k > pos; k--) {
            out[k] = out[k - 1];
            dist[k] = dist[k - 1];
        }
        out[pos] = i;
        dist[pos] = d;
        if (n_out < 3) n_out++;
    }
    return n_out;
}

/* Append `; did you mean "a", "b" or "c"?` for @p name (nothing when no
 * property is close). With @p env, names are shown as environment
 * variables. @returns whether anything was appended. */
static bool put_suggestions(sw_buf_t *b, const char *name, bool env)
{
    size_t idx[3];
    size_t n = suggest(name, idx);
    if (n == 0) return false;
    sw_buf_puts(b, "; did you mean ");
    for (size_t k = 0; k < n; k++) {
        if (k > 0) sw_buf_puts(b, k + 1 == n ? " or " : ", ");
        if (env) {
            sw_buf_puts(b, "STORMWATCH_");
            for (const char *p = sw_conf_props[idx[k]].name; *p; p++)
                sw_buf_putc(b, *p == '.' ? '_' : (char)toupper((unsigned char)*p));
        } else {
            sw_conf_put_quoted(b, sw_conf_props[idx[k]].name);
        }
    }
    sw_buf_putc(b, '?');
    return true;
}

static void unknown_err(const char *name, char *errstr, size_t errstr_size)
{
    sw_buf_t msg;
    sw_buf_init(&msg);
    sw_buf_puts(&msg, "configuration property ");
    sw_conf_put_quoted(&msg, name);
    sw_buf_puts(&msg, " is unknown");
    put_suggestions(&msg, name, false);
    sw_buf_puts(&msg, " (" LIST_HINT ")");
    sw_conf_err_out(&msg, errstr, errstr_size);
}

/* ------------------------------------------------------------------------ */
/* Lifecycle and setting. */

sw_conf_t *sw_conf_new(void)
{
    sw_conf_t *conf = sw_calloc(1, sizeof(*conf));
    conf->vals = sw_calloc(sw_conf_nprops, sizeof(*conf->vals));
    for (size_t i = 0; i < sw_conf_nprops; i++) {
        /* A missing table row or a default that fails its own check is a
         * bug; test_conf catches it through this NULL. */
        if (!sw_conf_props[i].name || !sw_conf_props[i].defval) goto err;
        if (sw_conf_prop_parse(&sw_conf_props[i], sw_conf_props[i].defval, &conf->vals[i], NULL,
                               0) != SW_CONF_OK)
            goto err;
    }
    return conf;
err:
    sw_conf_destroy(conf);
    return NULL;
}

static void kprop_clear(kprop_t *kp)
{
    free(kp->name);
    free(kp->value);
}

void sw_conf_destroy(sw_conf_t *conf)
{
    if (!conf) return;
    for (size_t i = 0; conf->vals && i < sw_conf_nprops; i++) sw_conf_val_clear(&conf->vals[i]);
    free(conf->vals);
    for (size_t k = 0; k < conf->n_kprops; k++) kprop_clear(&conf->kprops[k]);
    free(conf->kprops);
    for (size_t k = 0; k < conf->n_ignored_env; k++) free(conf->ignored_env[k]);
    free(conf->ignored_env);
    free(conf);
}

bool sw_conf_is_set(const sw_conf_t *conf, const char *name)
{
    size_t idx;
    return prop_find(name, &idx) && conf->vals[idx].set;
}

bool sw_conf_scope_reaches(sw_conf_scope_t scope, sw_conf_scope_t handle)
{
    return scope == SW_CONF_SCOPE_BOTH || scope == handle;
}

bool sw_conf_passthrough_is_set(const sw_conf_t *conf, sw_conf_scope_t handle, const char *rk_name)
{
    for (size_t k = 0; k < conf->n_kprops; k++) {
        const kprop_t *kp = &conf->kprops[k];
        if (sw_conf_scope_reaches(kp->scope, handle) && !strcmp(kp->name + kp->rk_off, rk_name))
            return true;
    }
    return false;
}

const char *sw_conf_ignored_env(const sw_conf_t *conf, size_t i)
{
    return i < conf->n_ignored_env ? conf->ignored_env[i] : NULL;
}

static kprop_t *kprop_find(const sw_conf_t *conf, const char *name)
{
    for (size_t k = 0; k < conf->n_kprops; k++)
        if (strcmp(conf->kprops[k].name, name) == 0) return &conf->kprops[k];
    return NULL;
}

static void kprop_remove(sw_conf_t *conf, const char *name)
{
    kprop_t *kp = kprop_find(conf, name);
    if (!kp) return;
    size_t k = (size_t)(kp - conf->kprops);
    kprop_clear(kp);
    memmove(kp, kp + 1, (conf->n_kprops - k - 1) * sizeof(*kp));
    conf->n_kprops--;
}

sw_conf_res_t sw_conf_set(sw_conf_t *conf, const char *name, const char *value, char *errstr,
                          size_t errstr_size)
{
    if (!name || !*name) {
        if (errstr && errstr_size)
            snprintf(errstr, errstr_size, "configuration property name is empty (" LIST_HINT ")");
        return SW_CONF_UNKNOWN;
    }
    size_t idx;
    const prop_t *prop = prop_find(name, &idx);
    if (prop) {
        conf_val_t val;
        sw_conf_res_t res = sw_conf_prop_parse(prop, value ? value : prop->defval, &val, errstr,
                                               errstr_size);
        if (res != SW_CONF_OK) return res;
        sw_conf_val_clear(&conf->vals[idx]);
        conf->vals[idx] = val;
        conf->vals[idx].set = value != NULL;
        return SW_CONF_OK;
    }

    sw_conf_scope_t scope;
    size_t off;
    if (!kafka_split(name, &scope, &off)) {
        unknown_err(name, errstr, errstr_size);
        return SW_CONF_UNKNOWN;
    }
    if (!name[off]) {
        sw_buf_t msg;
        sw_buf_init(&msg);
        sw_buf_puts(&msg, "configuration property ");
        sw_conf_put_quoted(&msg, name);
        sw_buf_puts(&msg,
                    " lacks the librdkafka property name (expected kafka.<property>, "
                    "kafka.consumer.<property> or kafka.producer.<property>)");
        sw_conf_err_out(&msg, errstr, errstr_size);
        return SW_CONF_UNKNOWN;
    }
    /* Remove, then append: the order is that of the last setting. */
    kprop_remove(conf, name);
    if (!value) return SW_CONF_OK;
    if (conf->n_kprops == conf->cap_kprops) {
        conf->cap_kprops = conf->cap_kprops ? conf->cap_kprops * 2 : 8;
        conf->kprops = sw_reallocarray(conf->kprops, conf->cap_kprops, sizeof(*conf->kprops));
    }
    kprop_t *kp = &conf->kprops[conf->n_kprops++];
    kp->scope = scope;
    kp->name = sw_strdup(name);
    kp->rk_off = off;
    kp->value = sw_strdup(value);
    return SW_CONF_OK;
}

static bool name_char(char c)
{
    return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

size_t sw_conf_arg_name_len(const char *arg)
{
    size_t n = 0;
    while (name_char(arg[n])) n++;
    return n;
}

void sw_conf_put_arg(sw_buf_t *b, const char *text)
{
    /* Every word that names a secret (kafka.sasl.password, in any spelling
     * of the separator after it: space, ':', tab) hides what follows. */
    for (size_t i = 0; text[i];) {
        if (!name_char(text[i])) {
            i++;
            continue;
        }
        size_t n = sw_conf_arg_name_len(text + i);
        char *token = sw_memdup0(text + i, n);
        bool secret = sw_conf_is_secret(token);
        free(token);
        if (secret && text[i + n]) {
            char *head = sw_memdup0(text, i + n);
            sw_buf_t tmp;
            sw_buf_init(&tmp);
            sw_buf_printf(&tmp, "%s %s", head, REDACTED);
            sw_conf_put_quoted(b, sw_buf_cstr(&tmp));
            sw_buf_clear(&tmp);
            free(head);
            return;
        }
        i += n;
    }
    sw_conf_put_quoted(b, text);
}

sw_conf_res_t sw_conf_set_pair(sw_conf_t *conf, const char *pair, char *errstr, size_t errstr_size)
{
    const char *eq = pair ? strchr(pair, '=') : NULL;
    /* A name is [A-Za-z0-9._-]+: "kafka.sasl.password VALUE=x" is no name,
     * and its text is shown through sw_conf_put_arg (redacted). */
    bool bad_name = eq && eq != pair && sw_conf_arg_name_len(pair) != (size_t)(eq - pair);
    if (!eq || eq == pair || bad_name) {
        sw_buf_t msg;
        sw_buf_init(&msg);
        if (!eq || bad_name) {
            sw_buf_puts(&msg, "expected property=value, got ");
            sw_conf_put_arg(&msg, pair ? pair : "");
        } else {
            sw_buf_puts(&msg, "expected property=value, got an empty property name");
        }
        sw_conf_err_out(&msg, errstr, errstr_size);
        return SW_CONF_INVALID;
    }
    char *name = sw_memdup0(pair, (size_t)(eq - pair));
    sw_conf_res_t res = sw_conf_set(conf, name, eq + 1, errstr, errstr_size);
    free(name);
    return res;
}

static sw_err_t res2err(sw_conf_res_t res)
{
    if (res == SW_CONF_OK) return SW_OK;
    return res == SW_CONF_UNKNOWN ? SW_ERR_NOT_FOUND : SW_ERR_INVALID_ARG;
}

/* ------------------------------------------------------------------------ */
/* Loading. */

sw_err_t sw_conf_load_file(sw_conf_t *conf, const char *path, char *errstr, size_t errstr_size)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        int e = errno;
        sw_buf_t msg;
        sw_buf_init(&msg);
        sw_buf_puts(&msg, "cannot read configuration file ");
        sw_conf_put_quoted(&msg, path);
        sw_buf_printf(&msg, ": %s", strerror(e));
        sw_conf_err_out(&msg, errstr, errstr_size);
        return SW_ERR_IO;
    }
    char *line = NULL, sub[1024];
    size_t cap = 0;
    ssize_t n;
    long lineno = 0;
    sw_err_t err = SW_OK;
    sw_buf_t msg;
    sw_buf_init(&msg);

    while ((n = getline(&line, &cap, fp)) != -1) {
        lineno++;
        char *s = line, *e = line + n;
        if (lineno == 1 && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) s += 3;
        if (memchr(s, '\0', (size_t)(e - s))) {
            sw_buf_printf(&msg, "%s:%ld: line contains a NUL byte", path, lineno);
            err = SW_ERR_PARSE;
            break;
        }
        while (s < e && sw_conf_is_blank(*s)) s++;
        while (e > s && sw_conf_is_blank(e[-1])) e--;
        *e = '\0';
        if (s == e || *s == '#') continue;
        char *eq = strchr(s, '=');
        char *ne = eq;
        while (ne && ne > s && sw_conf_is_blank(ne[-1])) ne--;
        if (!eq || ne == s) {
            sw_buf_printf(&msg, "%s:%ld: expected property=value, got ", path, lineno);
            if (eq) sw_buf_puts(&msg, "an empty property name");
            else sw_conf_put_arg(&msg, s);
            err = SW_ERR_PARSE;
            break;
        }
        *ne = '\0';
        char *value = eq + 1;
        while (sw_conf_is_blank(*value)) value++;
        sw_conf_res_t res = sw_conf_set(conf, s, value, sub, sizeof(sub));
        if (res != SW_CONF_OK) {
            sw_buf_printf(&msg, "%s:%ld: %s", path, lineno, sub);
            err = res2err(res);
            break;
        }
    }
    if (err == SW_OK && ferror(fp)) {
        sw_buf_puts(&msg, "cannot read configuration file ");
        sw_conf_put_quoted(&msg, path);
        sw_buf_printf(&msg, ": %s", strerror(errno));
        err = SW_ERR_IO;
    }
    free(line);
    fclose(fp);
    if (err != SW_OK) sw_conf_err_out(&msg, errstr, errstr_size);
    else sw_buf_clear(&msg);
    return err;
}

#define ENV_PREFIX "STORMWATCH_"

/* Which pass of sw_conf_load_env() handles a variable name (after the
 * prefix): 0 for table properties and KAFKA_<P>, 1 for the scoped forms. */
static int env_pass(const char *var)
{
    return strncmp(var, "KAFKA_CONSUMER_", 15) == 0 || strncmp(var, "KAFKA_PRODUCER_", 15) == 0;
}

/* Whether @p var (of @p len bytes) is the environment form of @p name. */
static bool env_matches(const char *var, size_t len, const char *name)
{
    size_t k = 0;
    for (; name[k]; k++) {
        char want = name[k] == '.' ? '_' : (char)toupper((unsigned char)name[k]);
        if (k >= len || var[k] != want) return false;
    }
    return k == len;
}

/* Append the lower-cased, '_' -> '.' form of var[0..len). */
static void put_env_name(sw_buf_t *b, const char *var, size_t len)
{
    for (size_t k = 0; k < len; k++)
        sw_buf_putc(b, var[k] == '_' ? '.' : (char)tolower((unsigned char)var[k]));
}

/* sw_conf_put_quoted() of the first @p len bytes of @p s. */
static void put_quoted_n(sw_buf_t *b, const char *s, size_t len)
{
    char *copy = sw_malloc(len + 1);
    memcpy(copy, s, len);
    copy[len] = '\0';
    sw_conf_put_quoted(b, copy);
    free(copy);
}

/* [0-9]+ over s[0..n). */
static bool all_digits(const char *s, size_t n)
{
    if (!n) return false;
    for (size_t k = 0; k < n; k++)
        if (!isdigit((unsigned char)s[k])) return false;
    return true;
}

/* An IP address as Kubernetes writes one (IPv4 or IPv6 characters). */
static bool ip_like(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s) && *s != '.' && *s != ':') return false;
    return true;
}

static bool ends_with(const char *s, size_t n, const char *suf, size_t *pre)
{
    size_t k = strlen(suf);
    if (n < k || strncmp(s + n - k, suf, k) != 0) return false;
    *pre = n - k;
    return true;
}

/* Whether var[0..len) = value is a variable Kubernetes injects for a
 * Service whose name starts with "stormwatch" (service links, e.g. the
 * stormwatch-metrics Service gives STORMWATCH_METRICS_SERVICE_HOST=10.0.0.7,
 * STORMWATCH_METRICS_PORT=tcp://10.0.0.7:9464 and
 * STORMWATCH_METRICS_PORT_9464_TCP_ADDR=10.0.0.7): the name's shape and the
 * value's shape must both match, so that a mistyped property stays an
 * error. */
static bool service_link_var(const char *var, size_t len, const char *value)
{
    size_t pre;
    bool url = strncmp(value, "tcp://", 6) == 0 || strncmp(value, "udp://", 6) == 0 ||
               strncmp(value, "sctp://", 7) == 0;
    bool digits = all_digits(value, strlen(value));
    if (ends_with(var, len, "SERVICE_HOST", &pre) && (pre == 0 || var[pre - 1] == '_'))
        return ip_like(value);
    if (ends_with(var, len, "SERVICE_PORT", &pre) && (pre == 0 || var[pre - 1] == '_'))
        return digits;
    /* <SVC>_SERVICE_PORT_<PORTNAME> */
    const char *sp = NULL;
    for (const char *p = var; p + 13 <= var + len; p++)
        if (strncmp(p, "SERVICE_PORT_", 13) == 0 && (p == var || p[-1] == '_')) sp = p;
    if (sp && sp + 13 < var + len) return digits;
    /* <SVC>_PORT_<n>_<PROTO>[_PROTO|_PORT|_ADDR] */
    for (const char *p = var; p + 5 < var + len; p++) {
        if (strncmp(p, "PORT_", 5) != 0 || (p != var && p[-1] != '_')) continue;
        const char *n = p + 5, *e = var + len, *q = n;
        while (q < e && isdigit((unsigned char)*q)) q++;
        if (q == n || q >= e || *q != '_') continue;
        q++;
        size_t rest = (size_t)(e - q);
        static const char *const protos[] = {"TCP", "UDP", "SCTP"};
        for (size_t k = 0; k < 3; k++) {
            size_t pl = strlen(protos[k]);
            if (rest < pl || strncmp(q, protos[k], pl) != 0) continue;
            const char *tail = q + pl;
            size_t tl = (size_t)(e - tail);
            if (tl == 0) return url;
            if (tl == 6 && !strncmp(tail, "_PROTO", 6))
                return !strcmp(value, "tcp") || !strcmp(value, "udp") || !strcmp(value, "sctp");
            if (tl == 5 && !strncmp(tail, "_PORT", 5)) return digits;
            if (tl == 5 && !strncmp(tail, "_ADDR", 5)) return ip_like(value);
        }
    }
    /* <SVC>_PORT */
    if (ends_with(var, len, "PORT", &pre) && (pre == 0 || var[pre - 1] == '_')) return url;
    return false;
}

/* Apply one STORMWATCH_ variable: @p var points after the prefix, its
 * name ends at @p eq. */
static sw_err_t env_apply(sw_conf_t *conf, const char *entry, const char *var, const char *eq,
                          char *errstr, size_t errstr_size)
{
    size_t len = (size_t)(eq - var);
    sw_buf_t name, msg;
    sw_buf_init(&name);
    sw_buf_init(&msg);
    sw_err_t err = SW_OK;
    static const struct {
        const char *env, *prop;
    } kmap[] = {{"KAFKA_CONSUMER_", "kafka.consumer."},
                {"KAFKA_PRODUCER_", "kafka.producer."},
                {"KAFKA_", "kafka."}};
    bool mapped = false;
    for (size_t k = 0; k < 3 && !mapped; k++) {
        size_t pl = strlen(kmap[k].env);
        if (len >= pl && strncmp(var, kmap[k].env, pl) == 0) {
            sw_buf_puts(&name, kmap[k].prop);
            put_env_name(&name, var + pl, len - pl);
            mapped = true;
        }
    }
    for (size_t i = 0; i < sw_conf_nprops && !mapped; i++) {
        if (env_matches(var, len, sw_conf_props[i].name)) {
            sw_buf_puts(&name, sw_conf_props[i].name);
            mapped = true;
        }
    }
    if (!mapped && service_link_var(var, len, eq + 1)) {
        /* Kubernetes injects these for every Service of the namespace
         * (unless the pod sets enableServiceLinks: false): not ours. */
        conf->ignored_env = sw_reallocarray(conf->ignored_env, conf->n_ignored_env + 1,
                                            sizeof(*conf->ignored_env));
        conf->ignored_env[conf->n_ignored_env++] = sw_memdup0(entry, (size_t)(eq - entry));
        sw_buf_clear(&name);
        return SW_OK;
    }
    if (!mapped) {
        put_env_name(&name, var, len);
        sw_buf_puts(&msg, "environment variable ");
        put_quoted_n(&msg, entry, (size_t)(eq - entry));
        sw_buf_puts(&msg, " does not name a configuration property");
        put_suggestions(&msg, sw_buf_cstr(&name), true);
        sw_buf_puts(&msg, " (" LIST_HINT ")");
        sw_conf_err_out(&msg, errstr, errstr_size);
        sw_buf_clear(&name);
        return SW_ERR_NOT_FOUND;
    }
    char sub[1024];
    sw_conf_res_t res = sw_conf_set(conf, sw_buf_cstr(&name), eq + 1, sub, sizeof(sub));
    if (res != SW_CONF_OK) {
        sw_buf_puts(&msg, "environment variable ");
        put_quoted_n(&msg, entry, (size_t)(eq - entry));
        sw_buf_printf(&msg, ": %s", sub);
        sw_conf_err_out(&msg, errstr, errstr_size);
        err = res2err(res);
    }
    sw_buf_clear(&name);
    sw_buf_clear(&msg);
    return err;
}

sw_err_t sw_conf_load_env(sw_conf_t *conf, char *const *envp, char *errstr, size_t errstr_size)
{
    if (!envp) return SW_OK;
    const size_t pl = sizeof(ENV_PREFIX) - 1;
    for (int pass = 0; pass < 2; pass++) {
        for (char *const *ep = envp; *ep; ep++) {
            const char *entry = *ep;
            if (strncmp(entry, ENV_PREFIX, pl) != 0) continue;
            const char *var = entry + pl, *eq = strchr(var, '=');
            if (!eq) continue;
            if (env_pass(var) != pass) continue;
            sw_err_t err = env_apply(conf, entry, var, eq, errstr, errstr_size);
            if (err != SW_OK) return err;
        }
    }
    return SW_OK;
}

/* ------------------------------------------------------------------------ */
/* Getters. */

static sw_err_t get_val(const sw_conf_t *conf, const char *name, prop_type_t type,
                        const conf_val_t **valp)
{
    size_t idx;
    const prop_t *prop = prop_find(name, &idx);
    if (!prop) return SW_ERR_NOT_FOUND;
    if (prop->type != type) return SW_ERR_INVALID_ARG;
    *valp = &conf->vals[idx];
    return SW_OK;
}

sw_err_t sw_conf_get_i64(const sw_conf_t *conf, const char *name, int64_t *valp)
{
    const conf_val_t *val;
    sw_err_t err = get_val(conf, name, PROP_INT, &val);
    if (err == SW_OK) *valp = val->i;
    return err;
}

sw_err_t sw_conf_get_dbl(const sw_conf_t *conf, const char *name, double *valp)
{
    const conf_val_t *val;
    sw_err_t err = get_val(conf, name, PROP_DBL, &val);
    if (err == SW_OK) *valp = val->d;
    return err;
}

sw_err_t sw_conf_get_bool(const sw_conf_t *conf, const char *name, bool *valp)
{
    const conf_val_t *val;
    sw_err_t err = get_val(conf, name, PROP_BOOL, &val);
    if (err == SW_OK) *valp = val->b;
    return err;
}

const char *sw_conf_get_str(const sw_conf_t *conf, const char *name)
{
    const conf_val_t *val;
    if (get_val(conf, name, PROP_STR, &val) == SW_OK ||
        get_val(conf, name, PROP_ENUM, &val) == SW_OK)
        return val->text;
    const kprop_t *kp = kprop_find(conf, name);
    return kp ? kp->value : NULL;
}

size_t sw_conf_get_list_cnt(const sw_conf_t *conf, const char *name)
{
    const conf_val_t *val;
    return get_val(conf, name, PROP_LIST, &val) == SW_OK ? val->n_elems : 0;
}

const char *sw_conf_get_list_elem(const sw_conf_t *conf, const char *name, size_t idx)
{
    const conf_val_t *val;
    if (get_val(conf, name, PROP_LIST, &val) != SW_OK || idx >= val->n_elems) return NULL;
    return val->elems[idx];
}

sw_params_t sw_conf_params(const sw_conf_t *conf)
{
    sw_settings_t set;
    sw_conf_settings(conf, &set);
    return set.engine.params;
}

sw_err_t sw_conf_check(const sw_conf_t *conf, char *errstr, size_t errstr_size)
{
    /* Each property alone was checked when it was set; these rules need two.
     * Messages name properties, never a secret value. */
    sw_settings_t set;
    sw_conf_settings(conf, &set);
    bool pagerduty = set.format.output == SW_OUT_FORMAT_PAGERDUTY;
    if (pagerduty && !*set.pager.routing_key) {
        if (errstr && errstr_size)
            snprintf(errstr, errstr_size,
                     "configuration property \"%s\" is required with output.format=pagerduty "
                     "(expected the integration key of the PagerDuty service's Events API v2 "
                     "integration)",
                     "pagerduty.routing.key");
        return SW_ERR_INVALID_ARG;
    }
    /* PagerDuty answers 400 to any other key: say so before connecting
     * (the length only; the value is a secret). */
    size_t klen = strlen(set.pager.routing_key);
    if (pagerduty && klen != 32) {
        if (errstr && errstr_size)
            snprintf(errstr, errstr_size,
                     "configuration property \"%s\": value [redacted] is %zu characters long "
                     "(expected the 32-character integration key of a PagerDuty Events API v2 "
                     "integration)",
                     "pagerduty.routing.key", klen);
        return SW_ERR_INVALID_ARG;
    }
    return SW_OK;
}

bool sw_conf_kafka_next(const sw_conf_t *conf, size_t *idx, sw_conf_kafka_t *kprop)
{
    if (*idx >= conf->n_kprops) return false;
    const kprop_t *kp = &conf->kprops[(*idx)++];
    kprop->scope = kp->scope;
    kprop->name = kp->name;
    kprop->rk_name = kp->name + kp->rk_off;
    kprop->value = kp->value;
    kprop->secret = sw_conf_is_secret(kp->name);
    return true;
}

/* ------------------------------------------------------------------------ */
/* Output generated from the table. */

static const char *type_name(prop_type_t type)
{
    switch (type) {
    case PROP_INT: return "int";
    case PROP_DBL: return "double";
    case PROP_STR: return "string";
    case PROP_BOOL: return "bool";
    case PROP_ENUM: return "enum";
    case PROP_LIST: return "list";
    }
    return "?";
}

/* Range or allowed values of @p prop as shown by -X list and Markdown. */
static void put_values(sw_buf_t *b, const prop_t *prop)
{
    switch (prop->type) {
    case PROP_INT:
    case PROP_DBL: sw_conf_put_range(b, prop); return;
    case PROP_BOOL: sw_buf_puts(b, "true, false"); return;
    case PROP_ENUM:
        for (size_t k = 0; prop->allowed[k]; k++)
            sw_buf_printf(b, "%s%s", k ? ", " : "", prop->allowed[k]);
        return;
    case PROP_STR:
        if (prop->flags & PROP_F_TOPIC)
            sw_buf_puts(b, prop->min > 0 ? "topic name" : "topic name or empty");
        else if (prop->flags & PROP_F_HOSTPORT) sw_buf_puts(b, "host:port or empty");
        else if (prop->flags & PROP_F_URL) sw_buf_puts(b, "http(s) URL or empty");
        else if (prop->flags & PROP_F_URLS)
            sw_buf_puts(b, "http(s) URLs, comma-separated, or empty");
        else if (prop->min > 0) sw_buf_puts(b, "non-empty");
        else sw_buf_puts(b, "any");
        return;
    case PROP_LIST:
        sw_buf_puts(b, (prop->flags & PROP_F_TOPIC) ? "topics or ^regexes, comma-separated"
                                                    : "comma-separated");
        return;
    }
}

static void put_default(sw_buf_t *b, const prop_t *prop)
{
    if (*prop->defval) sw_buf_puts(b, prop->defval);
    else sw_buf_puts(b, "\"\"");
}

static void put_desc(sw_buf_t *b, const prop_t *prop)
{
    sw_buf_puts(b, prop->desc);
    if (sw_conf_prop_secret(prop)) sw_buf_puts(b, " (secret)");
}

#define KAFKA_ROWS 3
static const char *const kafka_rows[KAFKA_ROWS][2] = {
    {"kafka.<p>", "librdkafka property <p> for the consumer and the producer."},
    {"kafka.consumer.<p>", "librdkafka property <p> for the consumer only."},
    {"kafka.producer.<p>", "librdkafka property <p> for the producer only."},
};

void sw_conf_list(sw_buf_t *out)
{
    static const char *const head[5] = {"Property", "Type", "Range/values", "Default",
                                        "Description"};
    size_t w[4];
    for (size_t c = 0; c < 4; c++) w[c] = strlen(head[c]);
    sw_buf_t cell;
    sw_buf_init(&cell);
    for (size_t i = 0; i < sw_conf_nprops; i++) {
        const prop_t *prop = &sw_conf_props[i];
        size_t lens[4];
        lens[0] = strlen(prop->name);
        lens[1] = strlen(type_name(prop->type));
        cell.len = 0;
        put_values(&cell, prop);
        lens[2] = cell.len;
        cell.len = 0;
        put_default(&cell, prop);
        lens[3] = cell.len;
        for (size_t c = 0; c < 4; c++)
            if (lens[c] > w[c]) w[c] = lens[c];
    }
    for (size_t k = 0; k < KAFKA_ROWS; k++)
        if (strlen(kafka_rows[k][0]) > w[0]) w[0] = strlen(kafka_rows[k][0]);

    sw_buf_printf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", (int)w[0], head[0], (int)w[1], head[1],
                  (int)w[2], head[2], (int)w[3], head[3], head[4]);
    for (size_t i = 0; i < sw_conf_nprops; i++) {
        const prop_t *prop = &sw_conf_props[i];
        sw_buf_printf(out, "%-*s  %-*s  ", (int)w[0], prop->name, (int)w[1], type_name(prop->type));
        cell.len = 0;
        put_values(&cell, prop);
        sw_buf_printf(out, "%-*s  ", (int)w[2], sw_buf_cstr(&cell));
        cell.len = 0;
        put_default(&cell, prop);
        sw_buf_printf(out, "%-*s  ", (int)w[3], sw_buf_cstr(&cell));
        put_desc(out, prop);
        sw_buf_putc(out, '\n');
    }
    sw_buf_clear(&cell);
    for (size_t k = 0; k < KAFKA_ROWS; k++)
        sw_buf_printf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", (int)w[0], kafka_rows[k][0], (int)w[1],
                      "string", (int)w[2], "checked by librdkafka", (int)w[3], "-",
                      kafka_rows[k][1]);
    sw_buf_puts(out,
                "\nPrecedence, lowest first: defaults, -c FILE, environment, -X name=value.\n"
                "Environment: STORMWATCH_<NAME> sets <name> ('.' -> '_', upper case, e.g. "
                "STORMWATCH_WINDOW_SAMPLES);\n"
                "STORMWATCH_KAFKA_[CONSUMER_|PRODUCER_]<P> sets kafka.[consumer.|producer.]<p> "
                "(<p> lower-cased, '_' -> '.').\n"
                "Secret values (kafka.*.sasl.password, *.password, *secret*, ...) are shown "
                "as " REDACTED " by -X dump.\n");
}

/* Append @p s with '|' escaped for a Markdown table cell. */
static void put_md(sw_buf_t *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') sw_buf_putc(b, '\\');
        sw_buf_putc(b, *s);
    }
}

void sw_conf_markdown(sw_buf_t *out)
{
    sw_buf_t cell;
    sw_buf_init(&cell);
    sw_buf_puts(out,
                "| Property | Type | Range / values | Default | Description |\n"
                "|---|---|---|---|---|\n");
    for (size_t i = 0; i < sw_conf_nprops; i++) {
        const prop_t *prop = &sw_conf_props[i];
        sw_buf_printf(out, "| `%s` | %s | ", prop->name, type_name(prop->type));
        cell.len = 0;
        put_values(&cell, prop);
        put_md(out, sw_buf_cstr(&cell));
        sw_buf_puts(out, " | ");
        if (*prop->defval) {
            sw_buf_putc(out, '`');
            put_md(out, prop->defval);
            sw_buf_putc(out, '`');
        } else {
            sw_buf_puts(out, "(empty)");
        }
        sw_buf_puts(out, " | ");
        cell.len = 0;
        put_desc(&cell, prop);
        put_md(out, sw_buf_cstr(&cell));
        sw_buf_puts(out, " |\n");
    }
    sw_buf_clear(&cell);
    for (size_t k = 0; k < KAFKA_ROWS; k++)
        sw_buf_printf(out, "| `%s` | string | checked by librdkafka | - | %s |\n", kafka_rows[k][0],
                      kafka_rows[k][1]);
}

/* "name=value\n", the value's URL credentials redacted. */
static void dump_line(sw_buf_t *out, const char *name, const char *value)
{
    char *safe = sw_redact_dup(value);
    sw_buf_printf(out, "%s=%s\n", name, safe);
    free(safe);
}

void sw_conf_dump(const sw_conf_t *conf, sw_buf_t *out)
{
    for (size_t i = 0; i < sw_conf_nprops; i++) {
        const prop_t *prop = &sw_conf_props[i];
        dump_line(out, prop->name,
                  !sw_conf_is_secret(prop->name) ? conf->vals[i].text
                  : *conf->vals[i].text          ? REDACTED_SET
                                                 : REDACTED_UNSET);
    }
    for (size_t k = 0; k < conf->n_kprops; k++) {
        const kprop_t *kp = &conf->kprops[k];
        dump_line(out, kp->name,
                  !sw_conf_is_secret(kp->name) ? kp->value
                  : *kp->value                 ? REDACTED_SET
                                               : REDACTED_UNSET);
    }
    for (size_t k = 0; k < conf->n_ignored_env; k++)
        sw_buf_printf(out, "# ignored: %s (a Kubernetes service link variable)\n",
                      conf->ignored_env[k]);
}
