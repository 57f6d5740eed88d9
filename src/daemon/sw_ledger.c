/* The delivery ledger (see sw_ledger.h). */
#include "sw_ledger.h"

#include <stdlib.h>
#include <string.h>

#include "sw_alloc.h"

void sw_ledger_init(sw_ledger_t *l)
{
    memset(l, 0, sizeof(*l));
    l->committed_x = -1;
    l->confirmed_x = -1;
}

void sw_ledger_clear(sw_ledger_t *l)
{
    free(l->q);
    sw_ledger_init(l);
}

void sw_ledger_add(sw_ledger_t *l, int64_t offset)
{
    if (l->n) {
        sw_pend_t *tail = &l->q[(l->head + l->n - 1) % l->cap];
        if (tail->offset == offset) {
            tail->left++;
            return;
        }
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        sw_pend_t *q = sw_malloc(cap * sizeof(*q));
        for (size_t i = 0; i < l->n; i++) q[i] = l->q[(l->head + i) % l->cap];
        free(l->q);
        l->q = q;
        l->cap = cap;
        l->head = 0;
    }
    sw_pend_t *e = &l->q[(l->head + l->n) % l->cap];
    e->offset = offset;
    e->left = 1;
    l->n++;
}

void sw_ledger_ack(sw_ledger_t *l, int64_t offset)
{
    /* Acknowledgements come nearly in order: search from the head. */
    for (size_t i = 0; i < l->n; i++) {
        sw_pend_t *e = &l->q[(l->head + i) % l->cap];
        if (e->offset != offset) continue;
        if (e->left) e->left--;
        break;
    }
    while (l->n && l->q[l->head].left == 0) {
        l->head = (l->head + 1) % l->cap;
        l->n--;
    }
}

void sw_ledger_refuse(sw_ledger_t *l)
{
    l->failed = true;
}

size_t sw_ledger_pending(const sw_ledger_t *l)
{
    return l->n;
}

int64_t sw_ledger_committable(const sw_ledger_t *l, int64_t next)
{
    return l->n ? l->q[l->head].offset : next;
}

void sw_ledger_commit_sent(sw_ledger_t *l, int64_t x)
{
    l->committed_x = x;
}

void sw_ledger_commit_answer(sw_ledger_t *l, int64_t x, bool taken)
{
    if (taken) {
        if (x > l->confirmed_x) l->confirmed_x = x;
    } else if (l->committed_x == x) {
        l->committed_x = l->confirmed_x; /* not taken: snapshot and commit again */
    }
}

sw_token_t *sw_token_new(uint32_t part_id, sw_tok_kind_t kind)
{
    sw_token_t *tok = sw_calloc(1, sizeof(*tok));
    tok->part_id = part_id;
    tok->kind = kind;
    return tok;
}

bool sw_tokens_add(sw_tokens_t *ts, sw_token_t *tok, int64_t now_ms)
{
    tok->produced_ms = now_ms;
    tok->next = NULL;
    tok->prev = ts->tail;
    if (tok->prev) tok->prev->next = tok;
    else ts->head = tok;
    ts->tail = tok;
    ts->n++;
    return ts->head == tok;
}

bool sw_tokens_del(sw_tokens_t *ts, sw_token_t *tok)
{
    bool was_oldest = ts->head == tok;
    if (tok->prev) tok->prev->next = tok->next;
    else ts->head = tok->next;
    if (tok->next) tok->next->prev = tok->prev;
    else ts->tail = tok->prev;
    tok->prev = tok->next = NULL;
    ts->n--;
    return was_oldest;
}

int64_t sw_tokens_oldest_ms(const sw_tokens_t *ts)
{
    return ts->head ? ts->head->produced_ms : 0;
}
