/* The helpers of pager_check.h. */
#include "pager_check.h"

/* ---- small helpers --------------------------------------------------------- */

json_t *parse_buf(const char *data, size_t len)
{
    json_error_t e;
    json_t *v = json_loadb(data, len, JSON_REJECT_DUPLICATES, &e);
    if (!v)
        SW_FAIL("not JSON (%s at %d): %.*s", e.text, e.position, (int)(len > 400 ? 400 : len),
                data);
    return v;
}

const char *str_of(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_string(v)) SW_FAIL("\"%s\" is not a string", key);
    return json_string_value(v);
}
