/*
 * libmicrohttpd, loaded when first used (dlopen of SW_MHD_SONAME) rather
 * than by the loader at every start: only the daemon and notify serve
 * /metrics and the probes, and libmicrohttpd's libraries (GnuTLS and
 * its own) cost ~6 ms of CPU per process to map and relocate, in
 * `replay` and `analyze` too. Include this instead of <microhttpd.h>: the
 * calls sw_http.c makes then go through the loaded library. When it
 * cannot be loaded, MHD_start_daemon() returns NULL and
 * sw_mhd_load_error() says why; nothing else is called then.
 */
#ifndef SW_MHD_DL_H
#define SW_MHD_DL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <microhttpd.h>

typedef struct sw_mhd_api_s {
    __typeof__(&MHD_start_daemon_va) start_daemon_va;
    __typeof__(&MHD_stop_daemon) stop_daemon;
    __typeof__(&MHD_add_connection) add_connection;
    __typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
    __typeof__(&MHD_create_response_from_buffer_with_free_callback)
        create_response_from_buffer_with_free_callback;
    __typeof__(&MHD_add_response_header) add_response_header;
    __typeof__(&MHD_queue_response) queue_response;
    __typeof__(&MHD_destroy_response) destroy_response;
} sw_mhd_api_t;

/** @brief The library's functions, loaded on the first call (thread-safe);
 *         stand-ins that fail when it could not be loaded. */
const sw_mhd_api_t *sw_mhd_api(void);

/** @brief Why the library could not be loaded; NULL when it was (loads it). */
const char *sw_mhd_load_error(void);

/** @brief MHD_start_daemon() through the loaded library. */
struct MHD_Daemon *sw_mhd_start_daemon(unsigned int flags, uint16_t port,
                                       MHD_AcceptPolicyCallback apc, void *apc_cls,
                                       MHD_AccessHandlerCallback dh, void *dh_cls, ...);

#define MHD_start_daemon sw_mhd_start_daemon
#define MHD_stop_daemon (sw_mhd_api()->stop_daemon)
#define MHD_add_connection (sw_mhd_api()->add_connection)
#define MHD_create_response_from_buffer (sw_mhd_api()->create_response_from_buffer)
#define MHD_create_response_from_buffer_with_free_callback \
    (sw_mhd_api()->create_response_from_buffer_with_free_callback)
#define MHD_add_response_header (sw_mhd_api()->add_response_header)
#define MHD_queue_response (sw_mhd_api()->queue_response)
#define MHD_destroy_response (sw_mhd_api()->destroy_response)

#endif /* SW_MHD_DL_H */
