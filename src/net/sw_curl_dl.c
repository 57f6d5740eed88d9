/*
 * libcurl loaded on first use (see sw_curl_dl.h).
 */
#include "sw_curl_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

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

/* dlsym's object pointer into a function pointer (POSIX guarantees the
 * conversion works). */
#define SYM(field, name)                        \
    do {                                        \
        void *p_ = dlsym(h, name);              \
        if (!p_) goto missing;                  \
        memcpy(&loaded.field, &p_, sizeof(p_)); \
    } while (0)

static void load(void)
{
    void *h = dlopen(SW_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(dl_error, sizeof(dl_error), "%s", e ? e : SW_CURL_SONAME " could not be loaded");
        return;
    }
    sw_curl_api_t loaded;
    SYM(global_init, "curl_global_init");
    SYM(easy_init, "curl_easy_init");
    SYM(easy_cleanup, "curl_easy_cleanup");
    SYM(easy_reset, "curl_easy_reset");
    SYM(easy_setopt, "curl_easy_setopt");
    SYM(easy_getinfo, "curl_easy_getinfo");
    SYM(easy_perform, "curl_easy_perform");
    SYM(easy_strerror, "curl_easy_strerror");
    SYM(slist_append, "curl_slist_append");
    SYM(slist_free_all, "curl_slist_free_all");
    SYM(getdate, "curl_getdate");
    api = loaded;
    return;
missing:
    snprintf(dl_error, sizeof(dl_error), SW_CURL_SONAME " lacks a function: %s", dlerror());
    dlclose(h);
}

const sw_curl_api_t *sw_curl_api(void)
{
    pthread_once(&once, load);
    return &api;
}
