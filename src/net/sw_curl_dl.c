/*
 * libcurl loaded on first use (see sw_curl_dl.h).
 */
#include "sw_curl_dl.h"

#include "sw_dl.h"

#include <pthread.h>
#include <stddef.h>

#ifndef SW_CURL_SONAME
#define SW_CURL_SONAME "libcurl.so.4"
#endif

/* Stand-ins when the library could not be loaded: every request fails at
 * curl_global_init(), whose message is the loader's. */
static char dl_error[256];

static CURLcode no_global_init(long flags)
{
    (void)flags;
    return CURLE_FAILED_INIT;
}
static CURL *no_easy_init(void)
{
    return NULL;
}
static void no_easy(CURL *curl)
{
    (void)curl;
}
static CURLcode no_setopt(CURL *curl, CURLoption option, ...)
{
    (void)curl;
    (void)option;
    return CURLE_FAILED_INIT;
}
static CURLcode no_getinfo(CURL *curl, CURLINFO info, ...)
{
    (void)curl;
    (void)info;
    return CURLE_FAILED_INIT;
}
static CURLcode no_perform(CURL *curl)
{
    (void)curl;
    return CURLE_FAILED_INIT;
}
static const char *no_strerror(CURLcode code)
{
    (void)code;
    return dl_error;
}
static struct curl_slist *no_slist_append(struct curl_slist *list, const char *s)
{
    (void)s;
    return list;
}
static void no_slist_free_all(struct curl_slist *list)
{
    (void)list;
}
static time_t no_getdate(const char *p, const time_t *unused)
{
    (void)p;
    (void)unused;
    return -1;
}

static sw_curl_api_t api = {no_global_init,  no_easy_init,      no_easy,    no_easy,
                            no_setopt,       no_getinfo,        no_perform, no_strerror,
                            no_slist_append, no_slist_free_all, no_getdate};
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define SYM(field, name)                     \
    {                                        \
        name, offsetof(sw_curl_api_t, field) \
    }
static const sw_dl_sym_t syms[] = {
    SYM(global_init, "curl_global_init"),   SYM(easy_init, "curl_easy_init"),
    SYM(easy_cleanup, "curl_easy_cleanup"), SYM(easy_reset, "curl_easy_reset"),
    SYM(easy_setopt, "curl_easy_setopt"),   SYM(easy_getinfo, "curl_easy_getinfo"),
    SYM(easy_perform, "curl_easy_perform"), SYM(easy_strerror, "curl_easy_strerror"),
    SYM(slist_append, "curl_slist_append"), SYM(slist_free_all, "curl_slist_free_all"),
    SYM(getdate, "curl_getdate"),
};
#undef SYM

static void load(void)
{
    sw_dl_load(SW_CURL_SONAME, syms, sizeof(syms) / sizeof(syms[0]), &api, sizeof(api), dl_error,
               sizeof(dl_error));
}

const sw_curl_api_t *sw_curl_api(void)
{
    pthread_once(&once, load);
    return &api;
}
