/*
 * jsonw.h: a JSON writer whose objects come out with their keys sorted,
 * whatever order the caller writes the members in.
 *
 * A writer holds one document being built. Containers are opened with
 * jw_obj / jw_arr and closed with jw_end; values are written with
 * jw_int, jw_str, ...; 'key' names the member inside an object and is
 * NULL inside an array or for the document itself. At jw_end an object's
 * members are put in strcmp order of their keys (a key given twice is a
 * bug: ef_panic); members written in order cost nothing extra.
 *
 * The layout of each container is its style: the text that opens it, the
 * separator between members or elements, the text that closes it, the
 * whole text of an empty one, and what goes between a key and its value.
 * A compact writer (jw_init(w, 1)) ignores the styles it is given and
 * writes no white space at all ({"a":1,"b":[1,2]}).
 *
 * Keys must stay valid until their object is closed (string literals and
 * field tables do). Not thread-safe; different writers may be used in
 * parallel.
 */
#ifndef EF_JSONW_H
#define EF_JSONW_H

#include <stddef.h>
#include <stdint.h>

#include "common/util.h"

typedef struct jw_style {
    const char *open;   /* "{" or "[" and what follows it */
    const char *sep;    /* between two members or elements */
    const char *close;  /* before and including "}" or "]" */
    const char *empty;  /* the whole container when it has nothing */
    const char *colon;  /* between a key and its value */
} jw_style;

/* {"a": 1, "b": 2} and [1, 2]: one line, ", " between items. */
extern const jw_style jw_inline_obj, jw_inline_arr;

/* A file's top level, one member a line indented two spaces, and an array
 * member of it, one element a line indented four:
 *   {\n  "a": 1,\n  "b": [\n    1,\n    2\n  ]\n}
 * Empty, "{}" and "[\n  ]". */
extern const jw_style jw_block_obj, jw_block_arr;

typedef struct jw_frame jw_frame;
typedef struct jw_member jw_member;

typedef struct jw {
    ef_buf b;           /* the text so far */
    int compact;
    jw_frame *fr;       /* open containers, innermost last */
    int nfr, capfr;
    jw_member *m;       /* members of the open objects */
    int nm, capm;
} jw;

/* Start an empty writer; 'compact' as above. Free with jw_free (or take
 * the text with jw_take). */
void jw_init(jw *w, int compact);
void jw_free(jw *w);

/* Open an object or an array (member 'key' of the enclosing object, or
 * NULL), laid out by 'st'. */
void jw_obj(jw *w, const char *key, const jw_style *st);
void jw_arr(jw *w, const char *key, const jw_style *st);

/* Open a bare list of array elements: separated by st->sep, with no
 * brackets; jw_end closes it. For rendering part of a long array apart
 * (in parallel) and splicing it in with jw_elems. Only as the outermost
 * container. */
void jw_list(jw *w, const jw_style *st);

/* Close the innermost container. */
void jw_end(jw *w);

/* Values. jw_fixed prints "%.*f"; jw_num the value as printf's 'fmt'
 * (one double conversion, e.g. "%.17g"); jw_str a JSON string literal. */
void jw_int(jw *w, const char *key, int64_t v);
void jw_fixed(jw *w, const char *key, double v, int decimals);
void jw_num(jw *w, const char *key, const char *fmt, double v);
void jw_str(jw *w, const char *key, const char *s);
void jw_bool(jw *w, const char *key, int v);
void jw_null(jw *w, const char *key);

/* Splice 'n' elements rendered by another writer's jw_list (text, len)
 * into the innermost array. */
void jw_elems(jw *w, const char *text, size_t len, int n);

/* The document's text (heap, NUL-terminated; *len its length when len is
 * not NULL). Every container must be closed. The writer is left empty. */
char *jw_take(jw *w, size_t *len);

#endif
