/*
 * jfield.h: JSON formats described by field tables.
 *
 * A format's object is a C struct; its table lists, once, every member
 * the JSON object has: key, kind, where the value lives in the struct,
 * whether it is required, its range. From that one table
 *   jf_read   reads and validates a JSON object into the struct (unknown
 *             keys, missing required keys, types, ranges, enumerations,
 *             constants such as "format": errors name file and JSON path),
 *   jf_write  writes the struct through a jw writer (keys sorted by the
 *             writer, numbers in the field's own format),
 *   jf_equal  compares two structs field by field (round-trip tests).
 * Nested objects and arrays of objects have tables of their own.
 *
 * Optional members, two ways: JF_OPT (written only when not empty: 0,
 * NULL or "", no elements, false; absent on read = empty), or 'cond', an
 * int of the struct that says the member is there (a group of members
 * that come together, e.g. an elastic job's samples). When the int is
 * itself a JF_FLAG member it decides; otherwise any member of the group
 * being present sets it, and then all must be.
 *
 * Everything jf_read allocates (strings, arrays) comes from the caller's
 * arena and is freed with it: structs read by jf_read are never freed
 * member by member.
 */
#ifndef EF_JFIELD_H
#define EF_JFIELD_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/err.h"
#include "common/jsonw.h"

/* ---- arena -------------------------------------------------------------- */

typedef struct jf_chunk jf_chunk;
typedef struct jf_arena {
    jf_chunk *head;
} jf_arena;

/* n zeroed bytes, aligned for any type, valid until jf_arena_free. Start
 * an arena as {0}. */
void *jf_alloc(jf_arena *a, size_t n);
char *jf_strdup(jf_arena *a, const char *s);
void jf_arena_free(jf_arena *a);

/* ---- tables ------------------------------------------------------------- */

typedef enum jf_kind {
    JF_INT,     /* int; JF_NULLABLE: null <-> .nul */
    JF_I64,     /* int64_t, likewise */
    JF_LONG,    /* long, likewise */
    JF_FIXED,   /* double, written "%.*f" with .dec decimals */
    JF_G10,     /* double: integral (< 1e15) "%.0f", else "%.10g";
                   not finite <-> null */
    JF_G17,     /* double, written "%.17g" (exact) */
    JF_STR,     /* const char * (NULL written as "") */
    JF_ENUM,    /* int: index into .names */
    JF_FLAG,    /* int: written true when set, left out when 0 */
    JF_CONST,   /* no storage: always .sval, or the integer .min when .sval
                   is NULL; checked before any other member */
    JF_OBJ,     /* a struct at .off, described by .sub */
    JF_ARR,     /* a pointer at .off to an array of .sub structs, its
                   count an int at .cnt */
    JF_LONGS,   /* a long * at .off, count an int at .cnt, values in
                   [.min, .max] */
    JF_CUSTOM   /* the value at .off, read and written by .custom */
} jf_kind;

#define JF_REQ      0x1u  /* read: must be present */
#define JF_OPT      0x2u  /* write: left out when empty */
#define JF_NULLABLE 0x4u  /* integers: may be null */
#define JF_NONEMPTY 0x8u  /* strings, arrays: not empty */
#define JF_USER     0x100u /* flags from here on are the format's own
                              (jf_write's mask) */

struct jf_table;
struct jf_ctx;

/* A kind of value a table cannot describe (e.g. a placement). 'read'
 * gets the JSON value and the path of the member ("slots[0].x"); 'empty'
 * (for JF_OPT) may be NULL. */
typedef struct jf_custom {
    int (*read)(const json_t *v, void *val, const struct jf_ctx *c,
                const char *path);
    void (*write)(jw *w, const char *key, const void *val);
    int (*equal)(const void *a, const void *b);
    int (*empty)(const void *val);
} jf_custom;

typedef struct jf_field {
    const char *key;
    jf_kind kind;
    unsigned flags;
    size_t off;               /* the value in the struct */
    size_t cnt;               /* JF_ARR, JF_LONGS: the int count */
    size_t cond;              /* 1 + offset of the int saying the member is
                                 there; 0: none */
    int64_t min, max;         /* integers: range; JF_CONST: the integer */
    int64_t nul;              /* JF_NULLABLE: the value null stands for */
    int dec;                  /* JF_FIXED: decimals */
    size_t maxlen;            /* JF_STR: at most this many bytes; 0 any */
    const char *sval;         /* JF_CONST: the string */
    const char *hint;         /* JF_CONST: said when the value differs */
    const char *const *names; /* JF_ENUM: names, by value */
    int nnames;
    const struct jf_table *sub;  /* JF_OBJ, JF_ARR: the element's table */
    const jw_style *style;       /* JF_ARR, JF_LONGS: the array's layout */
    const jf_custom *custom;
} jf_field;

typedef struct jf_table {
    size_t size;              /* sizeof the struct (array elements) */
    const jw_style *style;    /* the object's layout */
    int n;
    const jf_field *f;
} jf_table;

/* The start of a field: key, kind, flags, and the member of struct T. */
#define JF_F(k, kd, fl, T, m) \
    .key = (k), .kind = (kd), .flags = (fl), .off = offsetof(T, m)

#define JF_TABLE(type, st, fields) \
    {sizeof(type), (st), (int)(sizeof(fields) / sizeof *(fields)), (fields)}

/* Reading context: the file named in messages, the arena, the error. */
typedef struct jf_ctx {
    const char *file;
    jf_arena *arena;
    ef_err *e;
} jf_ctx;

/*
 * jf_read: read JSON object 'o' into 'obj' (a struct of t->size bytes,
 * zeroed by the caller) by table t. 'where' is the object's JSON path
 * ("" for the document, "jobs[3]"). Returns EF_OK, or EF_ERR with an
 * EF_E_INPUT message "file: where.key: what is wrong (what was
 * expected)". Allocates from c->arena only.
 */
int jf_read(const struct jf_table *t, const json_t *o, void *obj,
            const jf_ctx *c, const char *where);

/*
 * jf_parse: parse 'buf' (len bytes; 'path' names it in messages) as one
 * JSON document and jf_read it into obj by table t. A document that is not
 * an object: "path: expected WHAT, got an array". Allocates from a.
 */
int jf_parse(const struct jf_table *t, void *obj, const char *what,
             const char *path, const char *buf, size_t len, jf_arena *a,
             ef_err *e);

/* Read the file at 'path' (ef_read_file) and hand its text to
 * parse(obj, path, buf, len, e): a format's X_load from its X_parse. */
int jf_load(const char *path, int (*parse)(void *obj, const char *path,
                                           const char *buf, size_t len,
                                           ef_err *e),
            void *obj, ef_err *e);

/*
 * jf_write: write 'obj' by table t as an object (member 'key' of the
 * enclosing object, or NULL). mask 0 writes every member; otherwise only
 * those whose flags share a bit with mask (nested objects are written
 * whole). Arrays of more than 512 objects are rendered in chunks in
 * parallel (OpenMP) and joined in order: the bytes do not depend on the
 * thread count.
 */
void jf_write(jw *w, const char *key, const struct jf_table *t,
              const void *obj, unsigned mask);

/* 1 if a and b hold the same value for every member of table t (doubles
 * compare equal when both are NaN), else 0. */
int jf_equal(const struct jf_table *t, const void *a, const void *b);

/* "where.key" (or "key" when where is empty) into dst; "path[i]". */
const char *jf_path(char *dst, size_t len, const char *where,
                    const char *key);
const char *jf_index(char *dst, size_t len, const char *path, size_t i);

#endif
