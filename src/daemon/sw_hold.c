/* Holds of an input partition (see sw_hold.h). */
#include "sw_hold.h"

#include <string.h>

void sw_hold_init(sw_hold_t *h)
{
    memset(h, 0, sizeof(*h));
    h->from = -1;
}

bool sw_hold_held(const sw_hold_t *h)
{
    return h->origin || h->reg;
}

void sw_hold_note(sw_hold_t *h, int64_t offset)
{
    if (h->from < 0 || offset < h->from) h->from = offset;
}

void sw_hold_registry(sw_hold_t *h, int32_t id, int64_t offset, bool warned)
{
    h->reg = true;
    h->reg_id = id;
    h->reg_warned = warned;
    h->from = offset;
}

bool sw_hold_registry_release(sw_hold_t *h, int64_t *from)
{
    h->reg = false;
    *from = h->from;
    if (h->origin) return false; /* the origin hold resumes it from there */
    h->from = -1;
    return true;
}

sw_hold_act_t sw_hold_origin_step(sw_hold_t *h, const sw_hold_snap_t *s, int64_t now_ms)
{
    if (h->origin_x < 0) /* the start offset was unknown: ask again, now and then */
        return now_ms - s->last_snap_ms < SW_HOLD_ASK_MS ? SW_HOLD_WAIT : SW_HOLD_ASK_START;
    if (s->confirmed_x >= h->origin_x) {
        h->origin = false;
        return SW_HOLD_RELEASE;
    }
    if (s->active && s->failed) return SW_HOLD_DROP;
    if (s->active) return s->ready ? SW_HOLD_COMMIT : SW_HOLD_WAIT;
    if (s->committed_x >= h->origin_x) return SW_HOLD_WAIT; /* a commit of it is in flight */
    if (now_ms - s->last_snap_ms < SW_HOLD_RETRY_MS) return SW_HOLD_WAIT;
    return SW_HOLD_SNAPSHOT;
}
