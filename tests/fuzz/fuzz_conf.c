/*
 * libFuzzer target for the configuration: the input split into lines, each
 * through sw_conf_set_pair() (as -X arguments), the same lines as
 * STORMWATCH_<line> variables through sw_conf_load_env(), and the whole
 * input as a file through sw_conf_load_file() (an in-memory file). Checks: results
 * are one of the documented codes, messages exist and stay on one line, a
 * secret never appears in a message or a dump, and sw_conf_dump() reads
 * back through sw_conf_set_pair() to the same dump. Deterministic; writes
 * nothing to stdout.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "sw_conf.h"

static void check_errstr(const char *err, size_t size, const char *what)
{
    FUZZ_CHECK(memchr(err, '\0', size) != NULL, "%s: errstr not terminated", what);
    FUZZ_CHECK(err[0] != '\0', "%s: failed without a message", what);
    FUZZ_CHECK(strchr(err, '\n') == NULL && strchr(err, '\r') == NULL,
               "%s: message spans lines: %s", what, err);
}

/* Text every message may quote: the property list with descriptions. */
static char *known_text;

/* @p secret must not appear in @p text. Short secrets, and ones that occur
 * in the property name or in the property list (whose names and words
 * messages quote), prove nothing; blanks around a secret do not count
 * (" ssl.key.pem=ssl.key.pem ": the message quotes the name, a blank and
 * "[redacted]", which holds the value "ssl.key.pem " without showing it). */
static void check_hidden(const char *text, const char *secret, const char *ctx, const char *what)
{
    size_t lead = strspn(secret, " \t"), n = strlen(secret + lead);
    while (n && (secret[lead + n - 1] == ' ' || secret[lead + n - 1] == '\t')) n--;
    char *bare = fuzz_strndup(secret + lead, n);
    if (!known_text) {
        sw_buf_t b;
        sw_buf_init(&b);
        sw_conf_list(&b);
        sw_buf_puts(&b,
                    " configuration property is unknown; did you mean ? (see 'stormwatch run "
                    "-X list') expected property=value, got an empty property name");
        known_text = fuzz_strdup(sw_buf_cstr(&b));
        sw_buf_clear(&b);
    }
    bool proves = n >= 6 && !strstr(ctx, bare) && !strstr(known_text, bare);
    free(bare);
    if (!proves) return;
    FUZZ_CHECK(strstr(text, secret) == NULL, "%s: secret value \"%s\" shown: %s", what, secret,
               text);
}

/* Whether @p line is one whole line of @p text. */
static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *at = strstr(text, line); at; at = strstr(at + 1, line))
        if ((at == text || at[-1] == '\n') && (at[n] == '\n' || at[n] == '\0')) return true;
    return false;
}

/* The pass-through list is consistent, and no secret is dumped in clear. */
static void check_dump(const sw_conf_t *conf, const char *dump)
{
    size_t idx = 0;
    sw_conf_kafka_t kp;
    while (sw_conf_kafka_next(conf, &idx, &kp)) {
        FUZZ_CHECK(kp.secret == sw_conf_is_secret(kp.name), "secret flag of %s", kp.name);
        FUZZ_CHECK(strncmp(kp.name, "kafka.", 6) == 0, "pass-through name %s", kp.name);
        FUZZ_CHECK(kp.rk_name > kp.name && kp.rk_name[0] != '\0', "librdkafka name of %s", kp.name);
        if (!kp.secret || strncmp(kp.value, "[redacted", 9) == 0) continue;
        sw_buf_t line;
        sw_buf_init(&line);
        sw_buf_printf(&line, "%s=%s", kp.name, kp.value);
        FUZZ_CHECK(!has_line(dump, sw_buf_cstr(&line)), "secret %s dumped in clear", kp.name);
        sw_buf_clear(&line);
    }
}

/* Every dumped line sets a fresh configuration to the same dump (when no
 * secret was redacted and no value has a line break or NUL). */
static void check_dump_roundtrip(const sw_conf_t *conf)
{
    sw_buf_t dump, dump2;
    sw_buf_init(&dump);
    sw_buf_init(&dump2);
    sw_conf_dump(conf, &dump);
    const char *text = sw_buf_cstr(&dump);
    FUZZ_CHECK(strlen(text) == dump.len, "dump holds a NUL byte");
    check_dump(conf, text);
    bool redacted = strstr(text, "[redacted") != NULL;
    size_t idx = 0, n_kafka = 0;
    sw_conf_kafka_t kp;
    while (sw_conf_kafka_next(conf, &idx, &kp)) {
        n_kafka++;
        if (strchr(kp.value, '\n')) redacted = true; /* not line-safe: skip */
    }
    if (!redacted) {
        sw_conf_t *conf2 = sw_conf_new();
        char err[1024];
        char *copy = fuzz_strdup(text);
        for (char *line = copy, *nl; line && *line; line = nl ? nl + 1 : NULL) {
            nl = strchr(line, '\n');
            if (nl) *nl = '\0';
            sw_conf_res_t res = sw_conf_set_pair(conf2, line, err, sizeof(err));
            FUZZ_CHECK(res == SW_CONF_OK, "dumped line \"%s\" does not set: %s", line, err);
        }
        free(copy);
        sw_conf_dump(conf2, &dump2);
        FUZZ_CHECK(dump2.len == dump.len && memcmp(dump2.data, dump.data, dump.len) == 0,
                   "dump -> set_pair -> dump differs:\n%s\n---\n%s", text, sw_buf_cstr(&dump2));
        sw_conf_destroy(conf2);
    }
    (void)n_kafka;
    sw_buf_clear(&dump);
    sw_buf_clear(&dump2);
}

/* The getters and the parameter struct on whatever was set. */
static void exercise_getters(const sw_conf_t *conf)
{
    int64_t i = 0;
    double d = 0;
    bool b = false;
    FUZZ_CHECK(sw_conf_get_i64(conf, "window.samples", &i) == SW_OK && i >= 1 && i <= 1000000,
               "window.samples %lld", (long long)i);
    FUZZ_CHECK(sw_conf_get_dbl(conf, "spike.fraction", &d) == SW_OK && d >= 0.0 && d <= 1.0,
               "spike.fraction %g", d);
    FUZZ_CHECK(sw_conf_get_bool(conf, "window.samples", &b) != SW_OK, "bool of an int");
    FUZZ_CHECK(sw_conf_get_str(conf, "input.format") != NULL, "input.format");
    size_t n = sw_conf_get_list_cnt(conf, "input.topics");
    FUZZ_CHECK(n >= 1, "input.topics has %zu elements", n);
    for (size_t k = 0; k < n; k++) {
        const char *t = sw_conf_get_list_elem(conf, "input.topics", k);
        FUZZ_CHECK(t && *t, "input.topics[%zu] empty", k);
    }
    FUZZ_CHECK(sw_conf_get_list_elem(conf, "input.topics", n) == NULL, "past the list");
    sw_params_t p = sw_conf_params(conf);
    FUZZ_CHECK(p.window_samples >= 1 && p.stale_ms >= 0 && p.spike_fraction >= 0.0 &&
                   p.spike_fraction <= 1.0 && p.max_jobs >= 0 && p.max_ranks_per_job >= 0,
               "sw_conf_params out of the table's ranges");
    /* The typed settings hold the same values, enums within their ranges. */
    sw_settings_t st;
    sw_conf_settings(conf, &st);
    FUZZ_CHECK(memcmp(&st.engine.params, &p, sizeof(p)) == 0, "settings params differ");
    FUZZ_CHECK(st.kafka.input_topics.n == n, "settings input.topics %zu", st.kafka.input_topics.n);
    FUZZ_CHECK(
        st.format.input <= SW_IN_FORMAT_AVRO && st.format.output <= SW_OUT_FORMAT_ALERTMANAGER &&
            st.delivery.guarantee <= SW_GUARANTEE_EXACTLY_ONCE && st.ops.log_level <= SW_LOG_DEBUG,
        "settings enum out of range");
    FUZZ_CHECK(strcmp(st.kafka.group_id, sw_conf_get_str(conf, "group.id")) == 0,
               "settings group.id");
}

static void set_line(sw_conf_t *conf, const char *line, unsigned *n_failed)
{
    char err[1024];
    err[0] = '\0';
    sw_conf_res_t res = sw_conf_set_pair(conf, line, err, sizeof(err));
    FUZZ_CHECK(res == SW_CONF_OK || res == SW_CONF_INVALID || res == SW_CONF_UNKNOWN,
               "sw_conf_set_pair returned %d", (int)res);
    if (res == SW_CONF_OK) return;
    check_errstr(err, sizeof(err), "sw_conf_set_pair");
    const char *eq = strchr(line, '=');
    if (eq) {
        char *name = fuzz_strndup(line, (size_t)(eq - line));
        if (sw_conf_is_secret(name)) check_hidden(err, eq + 1, name, "sw_conf_set_pair");
        free(name);
    } else {
        /* "NAME VALUE" with a secret NAME: the rest is redacted. */
        size_t n = 0;
        while (line[n] && (isalnum((unsigned char)line[n]) || line[n] == '.' || line[n] == '_' ||
                           line[n] == '-'))
            n++;
        char *name = fuzz_strndup(line, n);
        if (line[n] && sw_conf_is_secret(name)) check_hidden(err, line + n + 1, name, "no '='");
        free(name);
    }
    /* A tiny buffer must be enough for a terminated prefix, and no buffer
     * at all is allowed. Only for the first failures, and lines of at most
     * 64 KiB: suggestions for an unknown name cost an edit distance per
     * property, quoting costs per byte. */
    if (++*n_failed > 2 || strlen(line) > 65536) return;
    char tiny[3] = {'x', 'x', 'x'};
    sw_conf_t *scratch = sw_conf_new();
    (void)sw_conf_set_pair(scratch, line, tiny, sizeof(tiny));
    FUZZ_CHECK(memchr(tiny, '\0', sizeof(tiny)) != NULL, "errstr of 3 bytes not terminated");
    (void)sw_conf_set_pair(scratch, line, NULL, 0);
    sw_conf_destroy(scratch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* 1. Lines as -X arguments (a NUL ends an argument, as in argv). */
    sw_conf_t *conf = sw_conf_new();
    FUZZ_CHECK(conf != NULL, "sw_conf_new failed");
    const char *p = (const char *)data, *end = p + size;
    unsigned lines = 0, n_failed = 0;
    while (p < end && lines < 64) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *line = fuzz_strndup(p, len);
        set_line(conf, line, &n_failed);
        free(line);
        lines++;
        p += len + (nl ? 1 : 0);
    }
    exercise_getters(conf);
    check_dump_roundtrip(conf);
    /* Unset every pass-through property again (value NULL). */
    size_t idx = 0;
    sw_conf_kafka_t kp;
    char **names = NULL;
    size_t n_names = 0;
    while (sw_conf_kafka_next(conf, &idx, &kp)) {
        names = realloc(names, (n_names + 1) * sizeof(*names));
        names[n_names++] = fuzz_strdup(kp.name);
    }
    for (size_t k = 0; k < n_names; k++) {
        FUZZ_CHECK(sw_conf_set(conf, names[k], NULL, NULL, 0) == SW_CONF_OK, "unset %s", names[k]);
        free(names[k]);
    }
    free(names);
    idx = 0;
    FUZZ_CHECK(!sw_conf_kafka_next(conf, &idx, &kp), "pass-through left after unsetting all");
    sw_conf_destroy(conf);

    /* 2. The same lines as STORMWATCH_<line> environment variables. */
    {
        char **envp = calloc(lines + 2, sizeof(*envp));
        size_t n_env = 0;
        envp[n_env++] = fuzz_strdup("PATH=/usr/bin"); /* not ours: ignored */
        for (const char *q = (const char *)data; q < end && n_env < lines + 1;) {
            const char *nl = memchr(q, '\n', (size_t)(end - q));
            size_t len = nl ? (size_t)(nl - q) : (size_t)(end - q);
            char *line = fuzz_strndup(q, len);
            sw_buf_t var;
            sw_buf_init(&var);
            sw_buf_puts(&var, "STORMWATCH_");
            sw_buf_puts(&var, line);
            envp[n_env++] = fuzz_strdup(sw_buf_cstr(&var));
            sw_buf_clear(&var);
            free(line);
            q += len + (nl ? 1 : 0);
        }
        envp[n_env] = NULL;
        sw_conf_t *econf = sw_conf_new();
        char eerr[1024];
        eerr[0] = '\0';
        sw_err_t erc = sw_conf_load_env(econf, envp, eerr, sizeof(eerr));
        FUZZ_CHECK(erc == SW_OK || erc == SW_ERR_NOT_FOUND || erc == SW_ERR_INVALID_ARG,
                   "sw_conf_load_env returned %d: %s", (int)erc, eerr);
        if (erc != SW_OK) check_errstr(eerr, sizeof(eerr), "sw_conf_load_env");
        exercise_getters(econf);
        sw_conf_destroy(econf);
        for (size_t k = 0; k < n_env; k++) free(envp[k]);
        free(envp);
    }

    /* 3. The whole input as a configuration file. */
    char path[256], err[2048];
    int fd = fuzz_file_open(data, size, path, sizeof(path));
    if (fd < 0) return 0;
    conf = sw_conf_new();
    err[0] = '\0';
    sw_err_t rc = sw_conf_load_file(conf, path, err, sizeof(err));
    FUZZ_CHECK(rc == SW_OK || rc == SW_ERR_PARSE || rc == SW_ERR_NOT_FOUND ||
                   rc == SW_ERR_INVALID_ARG,
               "sw_conf_load_file returned %d: %s", (int)rc, err);
    if (rc != SW_OK) {
        check_errstr(err, sizeof(err), "sw_conf_load_file");
        FUZZ_CHECK(strncmp(err, path, strlen(path)) == 0,
                   "message does not start with the path: %s", err);
    }
    exercise_getters(conf);
    check_dump_roundtrip(conf);
    sw_conf_destroy(conf);
    fuzz_file_close(fd, path);
    return 0;
}
