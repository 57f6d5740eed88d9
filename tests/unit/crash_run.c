/* The helpers of crash_run.h. */
#include "crash_run.h"

void log_clear(runlog_t *l)
{
    for (size_t i = 0; i < l->nsix; i++) free(l->six[i]);
    free(l->six);
    free(l->v);
    memset(l, 0, sizeof(*l));
}

void log_six(runlog_t *l, const sw_record_t *rec)
{
    sw_record_t copy = *rec;
    copy.n_blind = 0;
    copy.blind_ranks = NULL;
    sw_buf_t b;
    sw_buf_init(&b);
    sw_alert_json_record(&b, &copy);
    if (l->nsix == l->capsix) {
        l->capsix = l->capsix ? l->capsix * 2 : 64;
        l->six = realloc(l->six, l->capsix * sizeof(*l->six));
    }
    l->six[l->nsix++] = strdup(sw_buf_cstr(&b));
    sw_buf_clear(&b);
}

void log_x8(runlog_t *l, const sw_record_t *rec, size_t line)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = realloc(l->v, l->cap * sizeof(*l->v));
    }
    xrec_t *x = &l->v[l->n++];
    memset(x, 0, sizeof(*x));
    x->action = rec->action;
    x->line = line;
    x->number = rec->x8->number;
    x->revision = rec->revision;
    x->first_rank = rec->x8->first.rank;
    x->open = rec->x8->open;
    x->end = (int)rec->x8->end;
    x->has_previous = rec->x8->has_previous;
    x->previous_rank = rec->x8->has_previous ? rec->x8->previous_rank : -1;
    x->six_before = l->nsix;
    x->after_summary = l->nsix > 0 &&
                       strncmp(l->six[l->nsix - 1], "{\"action\": \"summary\"", 20) == 0;
    x->nw = rec->x8->n_wranks;
    for (size_t i = 0; i < x->nw && i < 16; i++) x->wranks[i] = rec->x8->wranks[i].rank;
    x->n_blind = rec->n_blind;
    x->blind0 = rec->n_blind ? rec->blind_ranks[0] : -1;
}

/* A summary, then the records that close the job's crash and warning. */
void on_summary(void *opaque, const sw_record_t *rec)
{
    if (sw_action_is_x8(rec->action)) log_x8(opaque, rec, AT_SUMMARY);
    else log_six(opaque, rec);
}

/* Feed one line; records go to @p l. */
void feed_line(sw_detector_t *det, sw_tdec_t *dec, const char *p, size_t n, size_t line,
               runlog_t *l, bool with_offsets)
{
    sw_event_t ev;
    char err[512];
    SW_ASSERT(sw_tdec_json(dec, p, n, &ev, err, sizeof(err)) == SW_OK, "line %zu: %s", line, err);
    const sw_record_t *rec;
    sw_err_t rc = with_offsets
                      ? sw_detect_feed_at(det, &ev, 0, (int64_t)line, &rec, err, sizeof(err))
                      : sw_detect_feed(det, &ev, 0, &rec, err, sizeof(err));
    SW_ASSERT(rc == SW_OK, "line %zu: %s", line, err);
    if (rec) log_six(l, rec);
    for (const sw_record_t *x = sw_detect_next(det); x; x = sw_detect_next(det)) {
        SW_ASSERT_NOT_NULL(x->x8);
        SW_ASSERT_TRUE(sw_action_is_x8(x->action));
        log_x8(l, x, line);
    }
}
