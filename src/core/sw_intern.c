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
    tab->cap_ids = 4; /* grows by half; many tables hold a few strings */
    tab->strs = sw_calloc(tab->cap_ids, sizeof(*tab->strs));
    tab->n = 1;
    tab->nslots = 8;
    tab->slots = sw_calloc(tab->nslots, sizeof(*tab->slots));
    return tab;
}

void sw_intern_destroy(sw_intern_t *tab)
{
    if (!tab) return;
    void *c = tab->chunks;
    while (c) {
        void *next;
        memcpy(&next, c, sizeof(next));
        free(c);
        c = next;
    }
    free(tab->strs);
    free(tab->slots);
    free(tab);
}

/* Chunks grow with the table (small tables are the common case) up to
 * this, then stay: a doubling chunk would leave up to half of a large
 * table's bytes unused. */
#define CHUNK_MIN 256u
#define CHUNK_MAX 65536u

/* A copy of @p s with its length before it (see sw_intern_t). */
static const char *intern_copy(sw_intern_t *tab, sw_str_t s)
{
    size_t pre = s.len < 0xff ? 1 : 9;
    size_t need = pre + s.len + 1;
    if (need > tab->left) {
        size_t size = tab->total < CHUNK_MIN   ? CHUNK_MIN
                      : tab->total < CHUNK_MAX ? tab->total
                                               : CHUNK_MAX;
        if (size < need) size = need;
        char *c = sw_malloc(sizeof(void *) + size);
        memcpy(c, &tab->chunks, sizeof(void *));
        tab->chunks = c;
        tab->cur = c + sizeof(void *);
        tab->left = size;
        tab->total += sizeof(void *) + size;
    }
    char *p = tab->cur + pre;
    if (pre == 1) {
        p[-1] = (char)s.len;
    } else {
        uint64_t len = s.len;
        memcpy(p - 9, &len, sizeof(len));
        p[-1] = (char)0xff;
    }
    if (s.len) memcpy(p, s.ptr, s.len);
    p[s.len] = '\0';
    tab->cur += need;
    tab->left -= need;
    return p;
}

/* Twice the hash slots (SipHash spreads ids evenly: up to 3/4 full costs
 * a few more probes a new string, and a third fewer slots). Hashes are
 * computed again rather than kept (8 B an id: a wide job interns a session
 * per rank): amortised one more hash a string. */
static void intern_grow(sw_intern_t *tab)
{
    size_t nslots = tab->nslots * 2;
    uint32_t *slots = sw_calloc(nslots, sizeof(*slots));
    for (uint32_t id = 1; id < tab->n; id++) {
        sw_str_t s = sw_intern_get(tab, id);
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
        if (sw_str_eq(sw_intern_get(tab, id), s)) return id;
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
        if (sw_str_eq(sw_intern_get(tab, id), s)) return id;
        i = (i + 1) & (tab->nslots - 1);
    }
    if (tab->n == tab->cap_ids) {
        tab->cap_ids += tab->cap_ids / 2; /* by half: a wide job's table is large */
        tab->strs = sw_reallocarray(tab->strs, tab->cap_ids, sizeof(*tab->strs));
    }
    uint32_t id = tab->n++;
    tab->strs[id] = intern_copy(tab, s);
    tab->slots[i] = id;
    if ((size_t)tab->n * 4 > tab->nslots * 3) intern_grow(tab); /* up to 3/4 full */
    return id;
}

uint32_t sw_intern_count(const sw_intern_t *tab)
{
    return tab->n - 1;
}

size_t sw_intern_bytes(const sw_intern_t *tab)
{
    return sizeof(*tab) + tab->total + (size_t)tab->cap_ids * sizeof(*tab->strs) +
           tab->nslots * sizeof(uint32_t);
}
