/*
 * Loading a shared library's functions by name (see sw_dl.h).
 */
#include "sw_dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *sw_dl_load(const char *soname, const sw_dl_sym_t *syms, size_t n, void *table,
                 size_t table_size, char *err, size_t err_size)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        if (e) snprintf(err, err_size, "%s", e);
        else snprintf(err, err_size, "%s could not be loaded", soname);
        return NULL;
    }
    unsigned char *staged = malloc(table_size);
    if (!staged) {
        snprintf(err, err_size, "%s: out of memory", soname);
        dlclose(h);
        return NULL;
    }
    memcpy(staged, table, table_size);
    for (size_t i = 0; i < n; i++) {
        void *p = dlsym(h, syms[i].name);
        if (!p) {
            snprintf(err, err_size, "%s lacks a function: %s", soname, syms[i].name);
            free(staged);
            dlclose(h);
            return NULL;
        }
        /* dlsym's object pointer into a function pointer slot (POSIX
         * guarantees the conversion works). */
        memcpy(staged + syms[i].offset, &p, sizeof(p));
    }
    memcpy(table, staged, table_size);
    free(staged);
    return h;
}
