/*
 * libFuzzer target for the stream engine (sw_detect): the input is a small
 * program. A header chooses the parameters (small windows, stale.ms,
 * limits, thresholds); then each step makes one synthetic, valid event
 * (rank, timestamp delta including late, duplicate and extreme times,
 * device_used, job, source, phase boundaries) or calls expire/analysis.
 * Every string of an event lives in a heap block freed right after
 * sw_detect_feed(), so a kept borrowed view trips ASan. Records and
 * counters are checked after every step and at sw_detect_finish().
 * Restore mode (header byte 2, bit 7; byte 3 = snapshot point): events go
 * in with offsets (sw_detect_feed_at); after that many events the engine
 * is snapshotted, restored into a second engine and rebuilt from its
 * oldest retained offset; from then on both get every event and must emit
 * the same records, and the same summaries at the end.
 * Deterministic; writes nothing to stdout.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

/* Byte reader: past the end, every read is 0. */
typedef struct rd_s {
    const uint8_t *p, *end;
} rd_t;

static uint8_t u8(rd_t *r)
{
    return r->p < r->end ? *r->p++ : 0;
}

static uint16_t u16(rd_t *r)
{
    uint16_t a = u8(r);
    return (uint16_t)(a | (uint16_t)u8(r) << 8);
}

static uint64_t u64(rd_t *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)u8(r) << (8 * i);
    return v;
}

static const char *const k_jobs[] = {"job-a", "job-b", "job-c", "job-\xc3\xa9", "j"};
static const char *const k_hosts[] = {"node-0", "node-1", "unknown"};
static const char *const k_sessions[] = {"s0", "s1", "s2"};
static const char *const k_names[] = {"train", "step", "forward", "backward", " ", ""};

/* Strings of one event, copied into one heap block. */
typedef struct strs_s {
    char *block;
    size_t used, cap;
} strs_t;

static sw_str_t put(strs_t *s, const char *text)
{
    size_t n = strlen(text);
    if (s->used + n > s->cap) abort(); /* sized below */
    memcpy(s->block + s->used, text, n);
    sw_str_t r = {s->block + s->used, n};
    s->used += n;
    return r;
}

typedef struct state_s {
    int64_t ts[8]; /* last timestamp per rank */
    int64_t now_ms;
    int64_t seq;
} state_t;

/* prev + delta, clamped to 0..INT64_MAX (prev >= 0). */
static int64_t ts_add(int64_t prev, int64_t delta)
{
    if (delta > 0 && prev > INT64_MAX - delta) return INT64_MAX;
    if (delta < 0 && prev < -delta) return 0;
    return prev + delta;
}

static int64_t next_ts(rd_t *r, state_t *st, int rank)
{
    uint8_t op = u8(r);
    int64_t prev = st->ts[rank];
    int64_t ts;
    switch (op >> 5) {
    case 0: ts = prev; break;                                          /* duplicate time */
    case 1: ts = ts_add(prev, -(int64_t)(u8(r) + 1) * 1000000); break; /* late */
    case 2: ts = ts_add(prev, (int64_t)u16(r) * 1000); break;          /* small step */
    case 3: ts = ts_add(prev, (int64_t)u8(r) * 100000000); break;      /* up to 25 s */
    case 4: ts = INT64_MAX - (int64_t)u8(r); break;                    /* near 2^63 */
    case 5: ts = (int64_t)u8(r); break;                                /* near 0 */
    case 6: ts = (int64_t)(u64(r) & INT64_MAX); break;                 /* anywhere */
    default: ts = ts_add(prev, 100000000); break;                      /* 100 ms */
    }
    st->ts[rank] = ts;
    return ts;
}

static int64_t device_used(rd_t *r)
{
    uint8_t op = u8(r);
    switch (op & 7) {
    case 0: return 0;
    case 1: return INT64_MAX;
    case 2: return INT64_MAX - (int64_t)u8(r);
    case 3: return (int64_t)(u64(r) & INT64_MAX);
    default: return (int64_t)(op >> 3) * ((int64_t)1 << (20 + (op & 3) * 4));
    }
}

/* One synthetic event into *ev, its strings in *s. */
static void make_event(rd_t *r, state_t *st, strs_t *s, sw_event_t *ev)
{
    uint8_t kind = u8(r), who = u8(r), src = u8(r);
    memset(ev, 0, sizeof(*ev));
    int rank = who & 7;
    ev->world_size = 1 + ((who >> 3) & 7);
    if (ev->world_size <= rank) ev->world_size = rank + 1;
    if ((who >> 6) == 3) ev->world_size = INT64_MAX; /* claims, limits, the ceiling */
    ev->rank = rank;
    ev->timestamp_ns = next_ts(r, st, rank);
    uint8_t job = (uint8_t)((kind >> 4) % 6); /* 5: the null job */
    ev->has_job_id = job < 5;
    if (ev->has_job_id) ev->job_id = put(s, k_jobs[job]);
    ev->pid = (src & 1) ? 4000 + rank : -1;
    ev->host = put(s, k_hosts[(src >> 1) % 3]);
    ev->has_session_id = ((src >> 3) & 3) != 3;
    if (ev->has_session_id) ev->session_id = put(s, k_sessions[(src >> 3) & 3]);
    ev->sampling_interval_ms = (src >> 5) == 7 ? INT64_MAX : (int64_t)(src >> 5) * 50;
    ev->metadata_json = sw_str("{}");
    switch (kind & 3) {
    case 0:
    case 1:
        ev->event_type = put(s, (kind & 4) ? "Sample" : "sample");
        ev->kind = SW_EV_SAMPLE;
        ev->has_device_used = true;
        ev->device_used_bytes = device_used(r);
        break;
    case 2: {
        bool enter = (kind & 4) != 0;
        ev->event_type = put(s, enter ? "phase_enter" : "phase_exit");
        ev->kind = enter ? SW_EV_PHASE_ENTER : SW_EV_PHASE_EXIT;
        uint8_t ph = u8(r);
        ev->has_phase = (ph & 0x80) == 0;
        ev->phase.enter = (ph & 0x40) ? !enter : enter; /* sometimes mismatched */
        ev->phase.name = put(s, k_names[ph % 6]);
        int depth = 1 + (ph >> 3) % 4;
        for (int i = 0; i < depth; i++) ev->phase.path[i] = put(s, k_names[(ph + i) % 4]);
        ev->phase.path_len = depth;
        ev->phase.scope_id = put(s, (ph & 1) ? "scope-1" : "scope-2");
        ev->phase.has_parent = (ph & 2) != 0;
        if (ev->phase.has_parent) ev->phase.parent_scope_id = put(s, "scope-0");
        ev->phase.thread_id = ph & 1;
        ev->phase.thread_name = put(s, "MainThread");
        ev->phase.sequence = st->seq++;
        ev->phase.has_depth = true;
        ev->phase.depth = depth;
        if (kind & 8) {
            ev->has_device_used = true;
            ev->device_used_bytes = device_used(r);
        }
        break;
    }
    default:
        ev->event_type = put(s, "checkpoint");
        ev->kind = SW_EV_OTHER;
        break;
    }
}

/* Summaries of sw_detect_finish() as JSON lines, for comparing engines. */
typedef struct collect_s {
    fuzz_rec_count_t *seen; /* checked and counted too, when set */
    bool on;                /* collect (only when there is a B) */
    sw_buf_t json;
} collect_t;

static void collect_cb(void *opaque, const sw_record_t *rec)
{
    collect_t *c = opaque;
    if (c->seen) fuzz_check_record(rec, c->seen);
    if (!c->on) return;
    sw_alert_json_record(&c->json, rec);
    sw_buf_putc(&c->json, '\n');
}

/* Restore mode: the engine B restored from a snapshot of A must then
 * behave exactly like A (sw_detect.h). */
typedef struct restore_s {
    bool on;
    unsigned snap_at; /* snapshot after this many events */
    sw_detector_t *b; /* NULL until the snapshot */
    sw_event_t *evs;  /* every event fed, for the rebuild */
    char **blocks;    /* their strings */
    size_t n, cap;
} restore_t;

static void restore_keep(restore_t *rs, const sw_event_t *ev, char *block)
{
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? rs->cap * 2 : 64;
        rs->evs = realloc(rs->evs, rs->cap * sizeof(*rs->evs));
        rs->blocks = realloc(rs->blocks, rs->cap * sizeof(*rs->blocks));
        if (!rs->evs || !rs->blocks) abort();
    }
    rs->evs[rs->n] = *ev;
    rs->blocks[rs->n] = block;
    rs->n++;
}

/* Snapshot A now (every offset below rs->n fed), restore B, rebuild its
 * windows from A's oldest retained offset. */
static void restore_now(restore_t *rs, sw_detector_t *a, sw_params_t params, int64_t now_ms)
{
    char err[256];
    sw_buf_t snap;
    sw_buf_init(&snap);
    sw_detect_snapshot(a, (int64_t)rs->n, &snap);
    int64_t next = -1;
    rs->b = sw_detect_restore(params, snap.data, snap.len, now_ms, &next, err, sizeof(err));
    FUZZ_CHECK(rs->b != NULL, "a snapshot of a live engine does not restore: %s", err);
    FUZZ_CHECK(next == (int64_t)rs->n, "restored next offset %lld, expected %zu", (long long)next,
               rs->n);
    int64_t from = 0;
    if (sw_detect_min_offset(a, &from)) {
        FUZZ_CHECK(from >= 0 && from < (int64_t)rs->n, "min offset %lld of %zu", (long long)from,
                   rs->n);
        /* Every event, as the daemon does, refused ones included
         * (crashes/fuzz_engine/restore-rebuild-takes-refused-event). */
        for (size_t i = (size_t)from; i < rs->n; i++)
            (void)sw_detect_rebuild(rs->b, &rs->evs[i], (int64_t)i);
    }
    sw_detect_rebuild_done(rs->b);
    sw_buf_clear(&snap);
}

/* Record pairs per input compared as JSON text; the rest by their
 * lifecycle fields (JSON costs more than the engine). */
static int json_compares;

static void same_record(const sw_record_t *ra, const sw_record_t *rb, size_t offset)
{
    FUZZ_CHECK((ra == NULL) == (rb == NULL), "event %zu: record from %s engine only", offset,
               ra ? "the live" : "the restored");
    if (!ra) return;
    if (json_compares-- <= 0) {
        const sw_analysis_t *a = &ra->analysis, *b = &rb->analysis;
        FUZZ_CHECK(ra->action == rb->action && ra->episode == rb->episode &&
                       ra->revision == rb->revision && ra->has_event_ts == rb->has_event_ts &&
                       ra->event_timestamp_ns == rb->event_timestamp_ns &&
                       a->world_size == b->world_size && a->n_suspects == b->n_suspects &&
                       a->n_participating == b->n_participating && a->has_onset == b->has_onset &&
                       a->onset_ns == b->onset_ns,
                   "event %zu: restored engine's record differs (%s %lld.%lld vs %s %lld.%lld)",
                   offset, sw_action_str(ra->action), (long long)ra->episode,
                   (long long)ra->revision, sw_action_str(rb->action), (long long)rb->episode,
                   (long long)rb->revision);
        return;
    }
    sw_buf_t ja, jb;
    sw_buf_init(&ja);
    sw_buf_init(&jb);
    sw_alert_json_record(&ja, ra);
    sw_alert_json_record(&jb, rb);
    FUZZ_CHECK(ja.len == jb.len && memcmp(ja.data, jb.data, ja.len) == 0,
               "event %zu: restored engine's record differs:\n  live:     %s\n  restored: %s",
               offset, sw_buf_cstr(&ja), sw_buf_cstr(&jb));
    sw_buf_clear(&ja);
    sw_buf_clear(&jb);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* SW_FUZZ_TRACE=1: print each step to stderr (for reading a reproducer). */
static bool trace;

static void trace_event(const char *what, size_t offset, const sw_event_t *ev, int rc,
                        const sw_record_t *rec)
{
    if (!trace) return;
    fprintf(stderr,
            "%s #%zu %.*s job=%.*s rank=%lld/%lld ts=%lld used=%lld pid=%lld host=%.*s "
            "session=%.*s interval=%lld -> rc=%d%s%s\n",
            what, offset, (int)ev->event_type.len, ev->event_type.ptr,
            ev->has_job_id ? (int)ev->job_id.len : 4, ev->has_job_id ? ev->job_id.ptr : "null",
            (long long)ev->rank, (long long)ev->world_size, (long long)ev->timestamp_ns,
            (long long)ev->device_used_bytes, (long long)ev->pid, (int)ev->host.len, ev->host.ptr,
            ev->has_session_id ? (int)ev->session_id.len : 4,
            ev->has_session_id ? ev->session_id.ptr : "null", (long long)ev->sampling_interval_ms,
            rc, rec ? " record " : "", rec ? sw_action_str(rec->action) : "");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    trace = fuzz_env_flag("SW_FUZZ_TRACE");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Inputs over 1 MB (the 10 MB seeds): the record codecs' cost per byte
     * would exceed -timeout; the cheap record checks still run. */
    fuzz_deep_records = fuzz_deep_summaries = size > (1u << 20) ? 0 : FUZZ_DEEP_RECORDS;
    json_compares = 16;
    static const int64_t k_stale[] = {0, 1, 5, 100, 1000, 60000};
    static const int64_t k_min_bytes[] = {0, 1, 1 << 20, SW_DEFAULT_SPIKE_MIN_BYTES, INT64_MAX};
    static const double k_fraction[] = {0.0, 0.1, 0.5, 1.0};
    rd_t r = {data, data + size};
    char err[256];

    sw_params_t params = sw_params_default();
    uint8_t h1 = u8(&r), h2 = u8(&r);
    params.window_samples = 1 + (h1 & 7);
    params.stale_ms = k_stale[(h1 >> 3) % 6];
    params.spike_min_bytes = k_min_bytes[h2 % 5];
    params.spike_fraction = k_fraction[(h2 >> 3) & 3];
    params.skew_note_multiplier = (h2 & 0x20) ? 1 : 5;
    params.max_jobs = (h1 >> 6); /* 0 = unlimited .. 3 */
    params.max_ranks_per_job = (h2 & 0x40) ? 4 : 0;

    /* Restore mode (h2 bit 7): feed with offsets, snapshot after h3
     * events, then feed A and the restored B alike and compare. */
    restore_t rs;
    memset(&rs, 0, sizeof(rs));
    rs.on = (h2 & 0x80) != 0;
    if (rs.on) rs.snap_at = u8(&r);
    if (trace)
        fprintf(stderr,
                "params: window %lld stale.ms %lld spike.min %lld fraction %g skew %lld "
                "max.jobs %lld max.ranks %lld restore %d at %u\n",
                (long long)params.window_samples, (long long)params.stale_ms,
                (long long)params.spike_min_bytes, params.spike_fraction,
                (long long)params.skew_note_multiplier, (long long)params.max_jobs,
                (long long)params.max_ranks_per_job, (int)rs.on, rs.snap_at);

    sw_detector_t *det = sw_detect_new(params);
    fuzz_feed_count_t fed = {0, 0, 0, 0, 0};
    fuzz_rec_count_t seen = {{0, 0, 0, 0}};
    state_t st;
    memset(&st, 0, sizeof(st));
    for (int i = 0; i < 8; i++) st.ts[i] = 1763700000000000000LL;

    unsigned steps = 0;
    while (r.p < r.end && steps < 4096) {
        steps++;
        uint8_t op = u8(&r);
        st.now_ms += op & 0x0f;
        if (op >= 0xf8) {
            /* Expire idle jobs (not once B exists: a restored job's idle
             * clock starts at the restore). */
            if (rs.b) continue;
            int64_t idle = (int64_t)(op & 7) * 3;
            if (trace)
                fprintf(stderr, "expire now_ms=%lld idle=%lld\n", (long long)st.now_ms,
                        (long long)idle);
            sw_detect_expire(det, st.now_ms, idle, fuzz_record_cb, &seen);
            continue;
        }
        if (op >= 0xf0) {
            sw_analysis_t a;
            const char *job = (op & 7) < 5 ? k_jobs[op & 7] : NULL;
            if (sw_detect_analysis(det, job, &a)) {
                sw_record_t rec;
                memset(&rec, 0, sizeof(rec));
                rec.action = SW_ACTION_SUMMARY;
                rec.analysis = a;
                fuzz_check_record(&rec, NULL);
            }
            continue;
        }
        strs_t s = {malloc(256), 0, 256};
        sw_event_t ev;
        make_event(&r, &st, &s, &ev);
        fuzz_check_event(&ev, "synthetic");
        const sw_record_t *rec = NULL;
        sw_err_t rc;
        size_t offset = rs.n;
        if (rs.on) {
            if (!rs.b && offset == rs.snap_at) {
                restore_now(&rs, det, params, st.now_ms);
                if (trace) fprintf(stderr, "snapshot at offset %zu, restored\n", offset);
            }
            rc = sw_detect_feed_at(det, &ev, st.now_ms, (int64_t)offset, &rec, err, sizeof(err));
        } else {
            rc = sw_detect_feed(det, &ev, st.now_ms, &rec, err, sizeof(err));
        }
        FUZZ_CHECK(rc == SW_OK || rc == SW_ERR_LIMIT || rc == SW_ERR_CLOCK,
                   "sw_detect_feed returned %d", (int)rc);
        fuzz_count_feed(&fed, rc, &ev);
        FUZZ_CHECK(rc == SW_OK || rec == NULL, "a refused event produced a record");
        trace_event("A", offset, &ev, (int)rc, rec);
        if (rec) fuzz_check_record(rec, &seen);
        if (rs.b) {
            /* rec stays valid: B is another detector. */
            const sw_record_t *rec_b = NULL;
            sw_err_t rc_b = sw_detect_feed_at(rs.b, &ev, st.now_ms, (int64_t)offset, &rec_b, err,
                                              sizeof(err));
            trace_event("B", offset, &ev, (int)rc_b, rec_b);
            FUZZ_CHECK(rc_b == rc, "event %zu: restored engine returned %d, live %d", offset,
                       (int)rc_b, (int)rc);
            same_record(rec, rec_b, offset);
        }
        if (rs.on) restore_keep(&rs, &ev, s.block); /* kept for the rebuild */
        else free(s.block);                         /* the engine must have copied what it keeps */
        if ((steps & 63) == 0) fuzz_check_stats(det, &fed, &seen, params.window_samples);
    }
    collect_t ca = {&seen, rs.b != NULL, {NULL, 0, 0}}, cb = {NULL, true, {NULL, 0, 0}};
    sw_detect_finish(det, collect_cb, &ca);
    fuzz_check_stats(det, &fed, &seen, params.window_samples);
    if (rs.b) {
        sw_detect_finish(rs.b, collect_cb, &cb);
        FUZZ_CHECK(ca.json.len == cb.json.len &&
                       (ca.json.len == 0 || memcmp(ca.json.data, cb.json.data, ca.json.len) == 0),
                   "summaries differ after restore:\n  live:\n%s  restored:\n%s",
                   sw_buf_cstr(&ca.json), sw_buf_cstr(&cb.json));
        sw_detect_destroy(rs.b);
    }
    sw_buf_clear(&ca.json);
    sw_buf_clear(&cb.json);
    for (size_t i = 0; i < rs.n; i++) free(rs.blocks[i]);
    free(rs.evs);
    free(rs.blocks);
    sw_detect_destroy(det);
    return 0;
}
