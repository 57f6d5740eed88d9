/*
 * libmicrohttpd loaded on first use (see sw_mhd_dl.h).
 */
#include "sw_mhd_dl.h"

#include "sw_dl.h"

#include <pthread.h>
#include <stddef.h>

#ifndef SW_MHD_SONAME
#define SW_MHD_SONAME "libmicrohttpd.so.12"
#endif

static char dl_error[256]; /* empty once loaded */

/* Stand-ins when the library could not be loaded: no daemon starts, so
 * only these two can be reached. */
static struct MHD_Daemon *no_start(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
                                   void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls,
                                   va_list ap)
{
    (void)flags, (void)port, (void)apc, (void)apc_cls, (void)dh, (void)dh_cls, (void)ap;
    return NULL;
}
static void no_stop(struct MHD_Daemon *d)
{
    (void)d;
}

static sw_mhd_api_t api = {.start_daemon_va = no_start, .stop_daemon = no_stop};
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define SYM(field, name)                    \
    {                                       \
        name, offsetof(sw_mhd_api_t, field) \
    }
static const sw_dl_sym_t syms[] = {
    SYM(start_daemon_va, "MHD_start_daemon_va"),
    SYM(stop_daemon, "MHD_stop_daemon"),
    SYM(add_connection, "MHD_add_connection"),
    SYM(create_response_from_buffer, "MHD_create_response_from_buffer"),
    SYM(create_response_from_buffer_with_free_callback,
        "MHD_create_response_from_buffer_with_free_callback"),
    SYM(add_response_header, "MHD_add_response_header"),
    SYM(queue_response, "MHD_queue_response"),
    SYM(destroy_response, "MHD_destroy_response"),
};
#undef SYM

static void load(void)
{
    sw_dl_load(SW_MHD_SONAME, syms, sizeof(syms) / sizeof(syms[0]), &api, sizeof(api), dl_error,
               sizeof(dl_error));
}

const sw_mhd_api_t *sw_mhd_api(void)
{
    pthread_once(&once, load);
    return &api;
}

const char *sw_mhd_load_error(void)
{
    pthread_once(&once, load);
    return dl_error[0] ? dl_error : NULL;
}

struct MHD_Daemon *sw_mhd_start_daemon(unsigned int flags, uint16_t port,
                                       MHD_AcceptPolicyCallback apc, void *apc_cls,
                                       MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
    va_list ap;
    va_start(ap, dh_cls);
    struct MHD_Daemon *d = sw_mhd_api()->start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
    va_end(ap);
    return d;
}
