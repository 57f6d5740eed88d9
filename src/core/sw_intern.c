/*
 * String interning with open addressing over a table of ids. The bytes of
 * every string live in an arena, so returned views stay valid for the
 * table's lifetime. Pure: no I/O, no globals.
 */
#include "sw_intern.h"

#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"

sw_intern_t *sw_intern_new(void)
{
    sw_hash_key_t zero = {0, 0};
    return sw_intern_new_keyed(zero);
}

sw_hash_key_t sw_intern_key(const sw_intern_t *tab)
{
    return tab->key;
}

sw_intern_t *sw_intern_new_keyed(sw_hash_key_t key)
{
    sw_intern_t *tab = sw_calloc(1, sizeof(*tab));
    tab->key = key;
    sw_arena_init(&tab->bytes);
    tab->cap_ids = 4; /* grows by doubling; many tables hold a few strings */
    tab->strs = sw_calloc(tab->cap_ids, sizeof(*tab->strs));
    tab->n = 1;
    tab->nslots = 8;
    tab->slots = sw_calloc(tab->nslots, sizeof(*tab->slots));
    return tab;
}

void sw_intern_destroy(sw_intern_t *tab)
{
    if (!tab) return;
    sw_arena_clear(&tab->bytes);
    free(tab->strs);
    free(tab->slots);
    free(tab);
}

/* Twice the hash slots. Hashes are computed again rather than kept (8 B
 * an id: a wide job interns a session per rank): amortised one more hash
 * a string. */
static void intern_grow(sw_intern_t *tab)
{
    size_t nslots = tab->nslots * 2;
    uint32_t *slots = sw_calloc(nslots, sizeof(*slots));
    for (uint32_t id = 1; id < tab->n; id++) {
        sw_str_t s = tab->strs[id];
        size_t i = (size_t)sw_siphash13(&tab->key, s.ptr, s.len) & (nslots - 1);
        while (slots[i]) i = (i + 1) & (nslots - 1);
        slots[i] = id;
    }
    free(tab->slots);
    tab->slots = slots;
    tab->nslots = nslots;
}

uint32_t sw_intern_find(const sw_intern_t *tab, sw_str_t s)
{
    uint64_t h = sw_siphash13(&tab->key, s.ptr, s.len);
    size_t i = (size_t)h & (tab->nslots - 1);
    for (;;) {
        uint32_t id = tab->slots[i];
        if (!id) return 0;
        if (sw_str_eq(tab->strs[id], s)) return id;
        i = (i + 1) & (tab->nslots - 1);
    }
}

uint32_t sw_intern_add(sw_intern_t *tab, sw_str_t s)
{
    uint64_t h = sw_siphash13(&tab->key, s.ptr, s.len);
    size_t i = (size_t)h & (tab->nslots - 1);
    for (;;) {
        uint32_t id = tab->slots[i];
        if (!id) break;
        if (sw_str_eq(tab->strs[id], s)) return id;
        i = (i + 1) & (tab->nslots - 1);
    }
    if (tab->n == tab->cap_ids) {
        tab->cap_ids *= 2;
        tab->strs = sw_reallocarray(tab->strs, tab->cap_ids, sizeof(*tab->strs));
    }
    uint32_t id = tab->n++;
    tab->strs[id] = sw_arena_str(&tab->bytes, s);
    tab->slots[i] = id;
    if ((size_t)tab->n * 2 > tab->nslots) intern_grow(tab);
    return id;
}

uint32_t sw_intern_count(const sw_intern_t *tab)
{
    return tab->n - 1;
}

size_t sw_intern_bytes(const sw_intern_t *tab)
{
    return sizeof(*tab) + tab->bytes.total + (size_t)tab->cap_ids * sizeof(sw_str_t) +
           tab->nslots * sizeof(uint32_t);
}
