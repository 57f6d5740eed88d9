/*
 * A shared library loaded at first use instead of linked: its functions are
 * looked up by name into a table of function pointers, all or none. The
 * process then starts without the library's relocations and runs without
 * it until a feature that needs it is used (libcurl for HTTP clients,
 * libmicrohttpd for the ops endpoint).
 */
#ifndef SW_DL_H
#define SW_DL_H

#include <stddef.h>

/** One function to look up: its symbol name and where its pointer goes,
 *  as an offset into the caller's table of function pointers. */
typedef struct sw_dl_sym {
    const char *name;
    size_t offset;
} sw_dl_sym_t;

/**
 * @brief Opens @p soname and fills @p table with every symbol of @p syms.
 *
 * The table is written only when every symbol was found, so the caller's
 * stand-ins stay in place on any failure.
 * @returns the library handle (kept open for the process's life), or NULL
 *          with the reason in @p err: the loader's message, or the name of
 *          the first missing function.
 */
void *sw_dl_load(const char *soname, const sw_dl_sym_t *syms, size_t n, void *table,
                 size_t table_size, char *err, size_t err_size);

#endif
