/*
 * In-flight window (see sw_ship_acks.h): a ring indexed by sequence number
 * that doubles when full; its size is bounded by the caller's in-flight
 * limits.
 */
#include "sw_ship_acks.h"

#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"

void sw_acks_init(sw_acks_t *a)
{
    memset(a, 0, sizeof(*a));
}

void sw_acks_clear(sw_acks_t *a)
{
    free(a->v);
    memset(a, 0, sizeof(*a));
}

static void acks_grow(sw_acks_t *a)
{
    size_t cap = a->cap ? 2 * a->cap : 1024;
    sw_ack_t *v = sw_calloc(cap, sizeof(*v));
    for (uint64_t s = a->head; s < a->tail; s++) v[s & (cap - 1)] = a->v[s & (a->cap - 1)];
    free(a->v);
    a->v = v;
    a->cap = cap;
}

uint64_t sw_acks_push(sw_acks_t *a, uint64_t seg, uint64_t end, uint64_t lineno, uint32_t bytes,
                      int64_t now_ms)
{
    if (a->tail - a->head == a->cap) acks_grow(a);
    uint64_t seq = a->tail++;
    sw_ack_t *e = &a->v[seq & (a->cap - 1)];
    e->seg = seg;
    e->end = end;
    e->lineno = lineno;
    e->bytes = bytes;
    e->done = false;
    e->sent_ms = now_ms;
    a->bytes += bytes;
    return seq;
}

void sw_acks_done(sw_acks_t *a, uint64_t seq)
{
    if (seq < a->head || seq >= a->tail) return;
    a->v[seq & (a->cap - 1)].done = true;
}

bool sw_acks_pop(sw_acks_t *a, sw_ack_t *out)
{
    if (a->head == a->tail) return false;
    sw_ack_t *e = &a->v[a->head & (a->cap - 1)];
    if (!e->done) return false;
    *out = *e;
    a->bytes -= e->bytes;
    a->head++;
    return true;
}

int64_t sw_acks_oldest_ms(const sw_acks_t *a)
{
    for (uint64_t s = a->head; s < a->tail; s++) {
        const sw_ack_t *e = &a->v[s & (a->cap - 1)];
        if (!e->done) return e->sent_ms;
    }
    return 0;
}
