/*
 * sw_registry_from_conf() (see sw_registry.h): the schema.registry.*
 * properties into a client, and the schema files of
 * avro.schema.ids.telemetry read and resolved at start, so that a bad file
 * is a configuration error before any Kafka handle exists.
 */
#include "sw_registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"
#include "sw_conf.h"
#include "sw_types.h"

/* The whole file at @p path, or false with errno set. */
static bool slurp(const char *path, sw_buf_t *out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) sw_buf_put(out, tmp, n);
    bool ok = !ferror(f);
    fclose(f);
    return ok;
}

sw_registry_t *sw_registry_from_conf(const sw_conf_t *conf, const char *reader, size_t reader_len,
                                     int32_t fixed_id, bool with_ids, char *errstr,
                                     size_t errstr_size)
{
    size_t n_urls = sw_conf_get_list_cnt(conf, "schema.registry.url");
    const char **urls = sw_calloc(n_urls ? n_urls : 1, sizeof(*urls));
    for (size_t i = 0; i < n_urls; i++)
        urls[i] = sw_conf_get_list_elem(conf, "schema.registry.url", i);
    int64_t timeout_ms = 5000;
    sw_conf_get_i64(conf, "schema.registry.request.timeout.ms", &timeout_ms);
    sw_registry_conf_t rc = {
        .urls = urls,
        .n_urls = n_urls,
        .user_info = sw_conf_get_str(conf, "schema.registry.basic.auth.user.info"),
        .ca_location = sw_conf_get_str(conf, "schema.registry.ssl.ca.location"),
        .cert_location = sw_conf_get_str(conf, "schema.registry.ssl.certificate.location"),
        .key_location = sw_conf_get_str(conf, "schema.registry.ssl.key.location"),
        .timeout_ms = timeout_ms,
        .reader = reader,
        .reader_len = reader_len,
    };
    sw_registry_t *reg = sw_registry_new(&rc);
    free(urls);
    sw_buf_t text;
    sw_buf_init(&text);
    if (!n_urls && fixed_id >= 0 &&
        sw_registry_add(reg, fixed_id, reader, reader_len, errstr, errstr_size) != SW_OK)
        goto err;
    size_t n_ids = with_ids ? sw_conf_get_list_cnt(conf, "avro.schema.ids.telemetry") : 0;
    for (size_t i = 0; i < n_ids; i++) {
        const char *el = sw_conf_get_list_elem(conf, "avro.schema.ids.telemetry", i);
        const char *path = strchr(el, '=') + 1; /* checked by the conf module */
        long id = strtol(el, NULL, 10);
        text.len = 0;
        if (!slurp(path, &text)) {
            snprintf(errstr, errstr_size,
                     "configuration property \"avro.schema.ids.telemetry\": element \"%s\": "
                     "cannot read \"%s\": %s",
                     el, path, strerror(errno));
            goto err;
        }
        char why[512];
        if (sw_registry_add(reg, (int32_t)id, text.data ? text.data : "", text.len, why,
                            sizeof(why)) != SW_OK) {
            snprintf(errstr, errstr_size,
                     "configuration property \"avro.schema.ids.telemetry\": element \"%s\": %s", el,
                     why);
            goto err;
        }
    }
    sw_buf_clear(&text);
    return reg;
err:
    sw_buf_clear(&text);
    sw_registry_destroy(reg);
    return NULL;
}
