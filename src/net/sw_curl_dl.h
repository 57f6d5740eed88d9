/*
 * libcurl, loaded when first used (dlopen of SW_CURL_SONAME) rather than
 * by the loader at every start: `replay`, `analyze` and most commands
 * never make a request, and libcurl's ~30 libraries (TLS, LDAP, SSH,
 * Kerberos...) cost ~9 ms of CPU per process to map and relocate. Include
 * this instead of <curl/curl.h>: the libcurl calls the project makes
 * (curl_easy_*, curl_slist_*, curl_global_init, curl_getdate) then go
 * through the loaded library. When it cannot be loaded, curl_global_init()
 * fails with CURLE_FAILED_INIT and curl_easy_strerror() says why (the
 * dlopen error); nothing else is called then (sw_httpc_new fails), and
 * curl_getdate() reads no date (-1).
 */
#ifndef SW_CURL_DL_H
#define SW_CURL_DL_H

#include <curl/curl.h>

typedef struct sw_curl_api_s {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *curl);
    void (*easy_reset)(CURL *curl);
    CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
    CURLcode (*easy_perform)(CURL *curl);
    const char *(*easy_strerror)(CURLcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
    void (*slist_free_all)(struct curl_slist *list);
    time_t (*getdate)(const char *p, const time_t *unused);
} sw_curl_api_t;

/** @brief The library's functions, loaded on the first call (thread-safe);
 *         stand-ins that fail when it could not be loaded. */
const sw_curl_api_t *sw_curl_api(void);

/* The project's libcurl calls, through the loaded library (curl.h's
 * type-checking macros replaced). */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init (sw_curl_api()->global_init)
#define curl_easy_init (sw_curl_api()->easy_init)
#define curl_easy_cleanup (sw_curl_api()->easy_cleanup)
#define curl_easy_reset (sw_curl_api()->easy_reset)
#define curl_easy_setopt (sw_curl_api()->easy_setopt)
#define curl_easy_getinfo (sw_curl_api()->easy_getinfo)
#define curl_easy_perform (sw_curl_api()->easy_perform)
#define curl_easy_strerror (sw_curl_api()->easy_strerror)
#define curl_slist_append (sw_curl_api()->slist_append)
#define curl_slist_free_all (sw_curl_api()->slist_free_all)
#define curl_getdate (sw_curl_api()->getdate)

#endif /* SW_CURL_DL_H */
