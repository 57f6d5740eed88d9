/*
 * libFuzzer target for the JSON side: arbitrary bytes through
 * sw_tdec_json() (the whole input as one Kafka message, then each line as
 * JSON Lines with one decoder, so the key prediction sees a stream) and
 * through sw_jdom_parse(). Every decoded event must be valid (SPEC 2),
 * survive JSON -> Avro -> event and sw_event_json() -> sw_tdec_json()
 * unchanged, and go through the stream engine (records and counters
 * checked) and the batch analysis of `stormwatch analyze` (no rank limit
 * there). The fast paths of sw_tdec_json() must decide as its general path
 * (same code, message and event): lines that repeat the text between the
 * values of the line before go the template paths. Deterministic; writes
 * nothing to stdout.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "sw_batch.h"
#include "sw_codec_telemetry.h"

/* Engine parameters: small windows and limits, so that eviction, stale
 * windows and the limits all happen on short inputs. */
static sw_params_t engine_params(void)
{
    sw_params_t p = sw_params_default();
    p.window_samples = 4;
    p.stale_ms = 1000;
    p.max_jobs = 4;
    p.max_ranks_per_job = 64;
    return p;
}

/* The Avro view of a JSON-decoded event must be the same event. */
static void check_avro_view(const sw_event_t *ev, sw_avro_dec_t *adec)
{
    char err[512], why[512];
    sw_buf_t msg;
    sw_buf_init(&msg);
    sw_buf_puts(&msg, "keep");
    sw_err_t rc = sw_avro_encode_event(ev, 1, &msg, err, sizeof(err));
    if (rc != SW_OK) {
        /* Only strings that are not UTF-8 (lone surrogates from \u
         * escapes) may refuse, and the buffer stays as it was. */
        FUZZ_CHECK(rc == SW_ERR_INVALID_ARG, "encode_event: %d: %s", (int)rc, err);
        FUZZ_CHECK(msg.len == 4, "failed sw_avro_encode_event changed its output buffer");
        sw_buf_clear(&msg);
        return;
    }
    sw_event_t back;
    rc = sw_avro_decode_event(adec, msg.data + 4, msg.len - 4, 1, &back, err, sizeof(err));
    FUZZ_CHECK(rc == SW_OK, "a JSON event encoded to Avro does not decode: %s", err);
    fuzz_check_event(&back, "avro(json)");
    FUZZ_CHECK(fuzz_same_event(ev, &back, true, why, sizeof(why)),
               "JSON event != Avro(JSON event): %s", why);
    sw_buf_clear(&msg);
}

/* Walk a DOM (bounded by the parser's depth limit) through the getters. */
static size_t walk(const sw_jnode_t *n)
{
    size_t count = 1;
    if (n->type == SW_JN_STRING) {
        volatile unsigned sum = 0;
        for (size_t i = 0; i < n->s.len; i++) sum += (unsigned char)n->s.ptr[i];
        (void)sum;
    }
    if (n->type == SW_JN_ARRAY)
        for (size_t i = 0; i < n->n; i++) count += walk(sw_jdom_at(n, i));
    if (n->type == SW_JN_OBJECT) {
        for (size_t i = 0; i < n->n; i++) {
            /* Keys are NUL-terminated copies; one with a \u0000 inside
             * cannot be looked up by a C string. */
            if (strlen(n->keys[i].ptr) == n->keys[i].len)
                FUZZ_CHECK(sw_jdom_get(n, n->keys[i].ptr) != NULL, "sw_jdom_get misses a member");
            count += walk(&n->items[i]);
        }
        (void)sw_jdom_int(sw_jdom_get(n, "rank"), -1);
        (void)sw_jdom_str(sw_jdom_get(n, "job_id"), "");
    }
    return count;
}

/* One message through the decoder and the DOM; they share the scanner,
 * so they must agree on what is JSON. @returns sw_tdec_json()'s result. */
static sw_err_t one_message(sw_tdec_t *dec, sw_tdec_t *gdec, sw_avro_dec_t *adec, const char *text,
                            size_t len, sw_event_t *ev)
{
    char err[512], derr[512], gerr[512], why[256];
    err[0] = gerr[0] = '\0';
    sw_err_t rc = sw_tdec_json(dec, text, len, ev, err, sizeof(err));
    FUZZ_CHECK(rc == SW_OK || rc == SW_ERR_PARSE || rc == SW_ERR_INVALID_ARG,
               "sw_tdec_json returned %d", (int)rc);
    FUZZ_CHECK(rc == SW_OK || err[0] != '\0', "sw_tdec_json failed without a message");
    FUZZ_CHECK(memchr(err, '\0', sizeof(err)) != NULL, "errstr not terminated");

    /* The fast path decides exactly as the general one: same code, same
     * message, same event. */
    sw_event_t gev;
    sw_err_t grc = sw_tdec_json(gdec, text, len, &gev, gerr, sizeof(gerr));
    FUZZ_CHECK(grc == rc, "fast path returned %d (%s), general path %d (%s)", (int)rc, err,
               (int)grc, gerr);
    FUZZ_CHECK(rc == SW_OK || strcmp(err, gerr) == 0, "fast path: \"%s\", general path: \"%s\"",
               err, gerr);
    FUZZ_CHECK(rc != SW_OK || fuzz_event_eq(ev, &gev, why, sizeof(why)),
               "fast and general path events differ: %s", why);

    sw_arena_t arena;
    sw_arena_init(&arena);
    sw_jnode_t *root = sw_jdom_parse(text, len, &arena, derr, sizeof(derr));
    if (root) walk(root);
    /* A line the decoder found to be a JSON object (valid or not as an
     * event) is JSON for the DOM too, and vice versa. */
    if (rc != SW_ERR_PARSE)
        FUZZ_CHECK(root && root->type == SW_JN_OBJECT,
                   "sw_tdec_json parsed an object that sw_jdom_parse rejects: %s", derr);
    if (root && root->type == SW_JN_OBJECT)
        FUZZ_CHECK(rc != SW_ERR_PARSE,
                   "sw_jdom_parse parsed an object that sw_tdec_json rejects: %s", err);
    sw_arena_clear(&arena);

    if (rc == SW_OK) {
        fuzz_check_event(ev, "json");
        check_avro_view(ev, adec);
        fuzz_check_event_json(ev, "json");
    }
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Inputs over 1 MB (the 10 MB seeds): the record codecs' cost per byte
     * would exceed -timeout; the cheap record checks still run. */
    fuzz_deep_records = fuzz_deep_summaries = size > (1u << 20) ? 0 : FUZZ_DEEP_RECORDS;
    sw_tdec_t *dec = sw_tdec_new();
    sw_tdec_t *gdec = sw_tdec_new();
    sw_tdec_set_fast(gdec, false);
    sw_avro_dec_t *adec = sw_avro_dec_new();
    sw_event_t ev;
    char err[512];

    /* The whole input as one message (a Kafka value may hold newlines). */
    char *copy = malloc(size ? size : 1);
    if (size) memcpy(copy, data, size);
    (void)one_message(dec, gdec, adec, copy, size, &ev);
    free(copy);

    /* JSON Lines into the engine, one decoder for all lines. Each line is
     * a heap copy freed right after its event was fed: an engine that
     * keeps a borrowed view trips ASan on the next line. */
    sw_params_t params = engine_params();
    sw_detector_t *det = sw_detect_new(params);
    sw_batch_t *batch = sw_batch_new(params);
    fuzz_feed_count_t fed = {0, 0, 0, 0, 0};
    fuzz_rec_count_t seen = {{0, 0, 0, 0}};
    const char *p = (const char *)data, *end = p + size;
    int64_t lineno = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        char *line = malloc(len ? len : 1);
        if (len) memcpy(line, p, len);
        if (!sw_tdec_blank(line, len) && one_message(dec, gdec, adec, line, len, &ev) == SW_OK) {
            /* The batch refuses samples beyond the world size ceiling
             * (tests/fuzz/crashes/fuzz_json/heap-overflow-*). */
            char berr[256];
            berr[0] = '\0';
            sw_err_t brc = sw_batch_add(batch, &ev, berr, sizeof(berr));
            FUZZ_CHECK(brc == SW_OK || (brc == SW_ERR_LIMIT && berr[0] != '\0'),
                       "sw_batch_add returned %d: %s", (int)brc, berr);
            const sw_record_t *rec = NULL;
            sw_err_t rc = sw_detect_feed(det, &ev, lineno * 100, &rec, err, sizeof(err));
            FUZZ_CHECK(rc == SW_OK || rc == SW_ERR_LIMIT || rc == SW_ERR_CLOCK,
                       "sw_detect_feed returned %d", (int)rc);
            fuzz_count_feed(&fed, rc, &ev);
            FUZZ_CHECK(rc == SW_OK || rec == NULL, "a refused event produced a record");
            if (rec) fuzz_check_record(rec, &seen);
        }
        free(line);
        if (lineno % 16 == 0) sw_detect_expire(det, lineno * 100, 800, fuzz_record_cb, &seen);
        p += len + (nl ? 1 : 0);
    }
    sw_detect_finish(det, fuzz_record_cb, &seen);
    fuzz_check_stats(det, &fed, &seen, params.window_samples);
    sw_detect_destroy(det);

    /* The batch analysis over the same events (copied when added). */
    if (sw_batch_events(batch) > 0) {
        sw_arena_t arena;
        sw_arena_init(&arena);
        sw_record_t rec;
        memset(&rec, 0, sizeof(rec));
        rec.action = SW_ACTION_SUMMARY;
        sw_batch_run(batch, &arena, &rec.analysis);
        fuzz_check_record(&rec, NULL);
        sw_arena_clear(&arena);
    }
    sw_batch_destroy(batch);
    sw_avro_dec_destroy(adec);
    sw_tdec_destroy(dec);
    sw_tdec_destroy(gdec);
    return 0;
}
