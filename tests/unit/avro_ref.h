/*
 * What the test_avro_* tests share: the Avro C reference side (a generic value
 * of an embedded schema rendered as JSON, unions unwrapped), the expected
 * event and alert fields, hand-written Avro bodies, and the context of their
 * group (the schemas checked, Avro C's generic values and the decoders).
 */
#ifndef AVRO_REF_H
#define AVRO_REF_H

#include <avro.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_codec_alert.h"
#include "sw_codec_avro.h"
#include "sw_codec_avro_int.h"
#include "sw_codec_telemetry.h"
#include "sw_detect.h"
#include "sw_schemas.h"
#include "sw_testlib.h"

/* Shared state of the checks (no globals: passed around). */
typedef struct ctx_s {
    avro_schema_t ev_schema, rec_schema;
    avro_value_iface_t *ev_iface, *rec_iface;
    avro_value_t ev_val, rec_val;
    sw_avro_dec_t *dec;
    sw_tdec_t *tdec;
    size_t n_events;                               /* valid fixture events checked */
    size_t n_typed_phase;                          /* of which with a typed phase scope */
    size_t n_records;                              /* stream records checked */
    size_t n_unique, n_ambiguous, n_phase_summary; /* attributions seen */
    int rec_failures;                              /* failures inside the summary callback */
    sw_buf_t longest_ev;                           /* longest framed event message seen */
    sw_buf_t longest_rec;                          /* longest framed record message seen */
} ctx_t;
extern const char *const k_event_fields[24];
extern const char *const k_alert_fields[24];

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* Avro C writes a non-null union value as {"branch type name": value}. */
bool is_branch_name(const char *k);

/* Avro C JSON with the union wrappers removed. @returns a new reference. */
json_t *unwrap_unions(json_t *j);

/* Read an Avro body with Avro C into val and return it as (unwrapped)
 * JSON, or NULL with why set. */
json_t *avro_c_json(avro_value_t *val, const char *body, size_t len, char *why, size_t why_size);

/* Test-side Avro writer, for hand-made (malformed) messages. */
void tb_long(sw_buf_t *b, int64_t v);

void tb_bytes(sw_buf_t *b, const char *s, size_t n);

void tb_str(sw_buf_t *b, const char *s);

void tb_header(sw_buf_t *b, uint32_t id);

/* ------------------------------------------------------------------ */
/* Schemas                                                             */
/* ------------------------------------------------------------------ */

/* Every "fields" member of every record in the schema JSON has a doc. */
int check_docs(json_t *j, const char *schema);

int check_schema(const char *text, unsigned len, const char *name, const char *const *fields,
                 size_t n_fields, avro_schema_t *out);

bool is_event_fixture(const char *name);

int name_cmp(const void *a, const void *b);

/* Sorted event fixture names (NAME.jsonl); caller frees each and *names. */
size_t list_fixtures(char ***names);

/* ------------------------------------------------------------------ */

/* The schemas checked, Avro C's generic values and the decoders: the
 * group's state (a ctx_t). */
int ctx_new(void **state);

int ctx_destroy(void **state);

#endif /* AVRO_REF_H */
