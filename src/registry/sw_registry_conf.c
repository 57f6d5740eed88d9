/*
 * sw_registry_from_settings() (see sw_registry.h): the schema.registry.*
 * settings into a client, and the schema files of
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

sw_registry_t *sw_registry_from_settings(const sw_settings_t *set, const char *reader,
                                         size_t reader_len, int32_t fixed_id, bool with_ids,
                                         char *errstr, size_t errstr_size)
{
    const sw_settings_registry_t *rs = &set->registry;
    size_t n_urls = rs->urls.n;
    sw_registry_conf_t rc = {
        .urls = rs->urls.v,
        .n_urls = n_urls,
        .user_info = rs->user_info,
        .ca_location = rs->ca_location,
        .cert_location = rs->cert_location,
        .key_location = rs->key_location,
        .timeout_ms = rs->timeout_ms,
        .reader = reader,
        .reader_len = reader_len,
        .unknown_hint = with_ids ? "set schema.registry.url to look writer schemas up, or add "
                                   "ID=PATH.avsc to avro.schema.ids.telemetry"
                                 : "set schema.registry.url to look writer schemas up",
    };
    sw_registry_t *reg = sw_registry_new(&rc);
    sw_buf_t text;
    sw_buf_init(&text);
    if (!n_urls && fixed_id >= 0 &&
        sw_registry_add(reg, fixed_id, reader, reader_len, errstr, errstr_size) != SW_OK)
        goto err;
    size_t n_ids = with_ids ? set->format.schema_ids_telemetry.n : 0;
    for (size_t i = 0; i < n_ids; i++) {
        const char *el = set->format.schema_ids_telemetry.v[i];
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
