/*
 * Internal to the Avro resolution (sw_avro_resolve.c builds plans,
 * sw_avro_rewrite.c applies them): schema nodes, rewrite steps and the
 * plan. Not for other modules.
 */
#ifndef SW_AVRO_RESOLVE_INT_H
#define SW_AVRO_RESOLVE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sw_arena.h"
#include "sw_avro_resolve.h"
#include "sw_jdom.h"
#include "sw_types.h"

typedef enum at_e {
    AT_NULL,
    AT_BOOLEAN,
    AT_INT,
    AT_LONG,
    AT_FLOAT,
    AT_DOUBLE,
    AT_BYTES,
    AT_STRING,
    AT_RECORD,
    AT_ENUM,
    AT_ARRAY,
    AT_MAP,
    AT_UNION,
    AT_FIXED
} at_t;

typedef struct anode_s anode_t;

typedef struct afield_s {
    sw_str_t name;
    anode_t *type;
    const sw_jnode_t *dflt; /* NULL: no default */
} afield_t;

struct anode_s {
    at_t t;
    sw_str_t name;     /* unqualified name (record, enum, fixed) */
    sw_str_t fullname; /* namespace.name */
    size_t n;          /* fields, branches or symbols */
    afield_t *fields;
    anode_t **branches;
    sw_str_t *symbols;
    const sw_jnode_t *enum_dflt; /* enum "default" symbol, or NULL */
    anode_t *items;              /* array items, map values */
    int64_t size;                /* fixed: bytes */
};

typedef enum op_kind_e {
    OP_COPY,      /* same layout: copy the writer's bytes */
    OP_TO_FLOAT,  /* int/long -> float */
    OP_TO_DOUBLE, /* int/long -> double */
    OP_F2D,       /* float -> double */
    OP_RECORD,
    OP_ARRAY,
    OP_MAP,
    OP_WUNION,   /* writer union: pick the step of the branch written */
    OP_TO_UNION, /* writer non-union into a reader union branch */
    OP_ENUM,
    OP_FAIL /* a writer union branch the reader cannot take */
} op_kind_t;

typedef struct op_s op_t;
struct op_s {
    op_kind_t k;
    const anode_t *w; /* writer type (skipping, copying) */
    const char *path; /* field path, for messages */
    const char *why;  /* OP_FAIL: the message */
    int64_t branch;   /* OP_TO_UNION: reader branch index */
    op_t *sub;        /* OP_TO_UNION, OP_ARRAY, OP_MAP */
    op_t **wb;        /* OP_WUNION: per writer branch */
    /* OP_RECORD: per reader field, the writer field (-1: default bytes) */
    size_t nr;
    int *from;
    op_t **fop;
    sw_str_t *dflt;
    bool in_order; /* every writer field read, in the reader's order */
    /* OP_ENUM: writer index -> reader index (-1: error) */
    int64_t *emap;
};

/* How the one pass over a writer record's fields skips each (fields_kind). */
enum { FK_OTHER, FK_NULL, FK_VARINT, FK_LEN, FK_OPT_VARINT, FK_OPT_LEN, FK_OPT_OTHER };

/* Where a reader field comes from (fields_src): a writer field index when
 * its bytes are read as they are, else one of these. */
enum { FS_DEFAULT = -1, FS_CONVERT = -2 };

struct sw_avro_plan_s {
    sw_arena_t arena;
    int32_t id;
    bool identity;
    const anode_t *writer;
    op_t *root;
    unsigned char *fields_kind;    /* per writer field (root OP_RECORD) */
    const unsigned char *dflt_end; /* end of the arena copy of op->dflt (see plan_flatten) */
    bool has_default, has_convert; /* some fields_src FS_DEFAULT, FS_CONVERT */
    int16_t *fields_src;           /* per reader field (root OP_RECORD) */
    sw_avro_step_t *steps;         /* per writer field (root OP_RECORD) */
    sw_avro_default_t *dflts;      /* reader fields from their default */
    size_t ndflt;
};

/** @brief Append a zig-zag varint (Avro int and long). */
void sw_avro_put_zz(sw_buf_t *out, int64_t v);

#endif /* SW_AVRO_RESOLVE_INT_H */
