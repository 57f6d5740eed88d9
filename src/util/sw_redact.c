/*
 * URL credential redaction (see sw_redact.h). A URL's authority runs from
 * "://" to the first '/', '?', '#', whitespace, quote, comma, semicolon or
 * bracket; when it holds an '@', everything before the last '@' is user
 * information. A password with a raw '/' is not a valid URL (it must be
 * percent-encoded), so it ends the authority like a path would: to stay on
 * the safe side, an '@' later in the same token still counts.
 */
#include "sw_redact.h"

#include <string.h>

#include "sw_alloc.h"

static bool ends_token(char c)
{
    return c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' ||
           c == ',' || c == ';' || c == '<' || c == '>' || c == '(' || c == ')' || c == '[' ||
           c == ']' || c == '{' || c == '}';
}

/* The user information after "://" at @p a: its length up to and
 * including the last '@' of the token (0: none). */
static size_t userinfo_len(const char *a)
{
    size_t at = 0;
    for (size_t i = 0; !ends_token(a[i]); i++) {
        if (a[i] == '@') at = i + 1;
        if (a[i] == ':' && a[i + 1] == '/' && a[i + 2] == '/') break; /* the next URL */
    }
    return at;
}

bool sw_redact_needed(const char *s)
{
    for (const char *p = strstr(s, "://"); p; p = strstr(p + 3, "://"))
        if (userinfo_len(p + 3)) return true;
    return false;
}

size_t sw_redact_urls(const char *in, char *out, size_t out_size)
{
    if (!out_size) return 0;
    size_t n = 0;
#define PUT(c)                                \
    do {                                      \
        if (n + 1 < out_size) out[n++] = (c); \
    } while (0)
    for (size_t i = 0; in[i];) {
        if (in[i] == ':' && in[i + 1] == '/' && in[i + 2] == '/') {
            PUT(':');
            PUT('/');
            PUT('/');
            i += 3;
            size_t u = userinfo_len(in + i);
            if (u) {
                for (const char *r = SW_REDACT_USERINFO; *r; r++) PUT(*r);
                PUT('@');
                i += u;
            }
            continue;
        }
        PUT(in[i]);
        i++;
    }
#undef PUT
    out[n] = '\0';
    return n;
}

char *sw_redact_dup(const char *s)
{
    size_t urls = 0;
    for (const char *p = strstr(s, "://"); p; p = strstr(p + 3, "://")) urls++;
    size_t size = strlen(s) + urls * sizeof(SW_REDACT_USERINFO) + 1;
    char *out = sw_malloc(size);
    sw_redact_urls(s, out, size);
    return out;
}
