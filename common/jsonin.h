/*
 * jsonin.h: reading user JSON with errors users can act on.
 *
 * Syntax errors carry file:line:col (from jansson). Semantic errors carry
 * a path inside the document, e.g. "jobs.json: jobs[3].deadline: ...",
 * because parsed JSON values keep no source positions.
 */
#ifndef EF_JSONIN_H
#define EF_JSONIN_H

#include <stdint.h>

#include <jansson.h>

#include "common/err.h"

/* Parse 'buf' as one JSON document (duplicate keys and trailing garbage
 * rejected). 'file' names it in messages. Returns NULL on error. */
json_t *jsonin_parse(const char *file, const char *buf, size_t len,
                     ef_err *e);

/* Fail on any key of 'obj' not in allowed[0..n-1], suggesting the closest
 * known key. 'where' is the object's path ("jobs[3]"; "" for the root). */
int jsonin_check_keys(const json_t *obj, const char *const *allowed, int n,
                      const char *file, const char *where, ef_err *e);

/* Read an integer member 'key' of 'obj' into *out, checking
 * min <= v <= max. If the key is absent: error when 'required', else
 * *out is left alone and 0 is returned; 1 when it was read. */
int jsonin_int(const json_t *obj, const char *key, int required,
               int64_t min, int64_t max, int64_t *out, const char *file,
               const char *where, ef_err *e);

/* Read a non-empty string member (max 255 bytes, no control characters).
 * Same presence convention as jsonin_int. The result points into 'obj'. */
int jsonin_str(const json_t *obj, const char *key, int required,
               const char **out, const char *file, const char *where,
               ef_err *e);

/* Name of a JSON value's type for messages ("string", "array", ...). */
const char *jsonin_type(const json_t *v);

#endif
