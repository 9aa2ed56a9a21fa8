/* jfield.c: JSON formats described by field tables (see jfield.h). */
#include "common/jfield.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonin.h"
#include "common/util.h"

/* ---- arena ------------------------------------------------------------- */

struct jf_chunk {
    jf_chunk *next;
    size_t used, cap;
    max_align_t data[];
};

void *jf_alloc(jf_arena *a, size_t n)
{
    size_t al = sizeof(max_align_t);
    n = (n + al - 1) / al * al;
    jf_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > (1u << 16) ? n : (1u << 16);
        c = ef_calloc(1, sizeof *c + cap);
        c->cap = cap;
        c->next = a->head;
        a->head = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    return p;
}

char *jf_strdup(jf_arena *a, const char *s)
{
    size_t n = strlen(s);
    char *d = jf_alloc(a, n + 1);
    memcpy(d, s, n + 1);
    return d;
}

void jf_arena_free(jf_arena *a)
{
    while (a->head) {
        jf_chunk *n = a->head->next;
        free(a->head);
        a->head = n;
    }
}

/* ---- access ------------------------------------------------------------ */

#define AT(obj, off, T) ((T *)(void *)((char *)(obj) + (off)))
#define CAT(obj, off, T) ((const T *)(const void *)((const char *)(obj) + (off)))

static int64_t get_int(const jf_field *f, const void *obj)
{
    switch (f->kind) {
    case JF_INT: return *CAT(obj, f->off, int);
    case JF_LONG: return *CAT(obj, f->off, long);
    default: return *CAT(obj, f->off, int64_t);
    }
}

static void set_int(const jf_field *f, void *obj, int64_t v)
{
    switch (f->kind) {
    case JF_INT: *AT(obj, f->off, int) = (int)v; break;
    case JF_LONG: *AT(obj, f->off, long) = (long)v; break;
    default: *AT(obj, f->off, int64_t) = v; break;
    }
}

const char *jf_path(char *dst, size_t len, const char *where,
                    const char *key)
{
    if (snprintf(dst, len, "%s%s%s", where, where[0] && key[0] ? "." : "",
                 key) >= (int)len && len > 4)
        memcpy(dst + len - 4, "...", 4);
    return dst;
}

const char *jf_index(char *dst, size_t len, const char *path, size_t i)
{
    if (snprintf(dst, len, "%s[%zu]", path, i) >= (int)len && len > 4)
        memcpy(dst + len - 4, "...", 4);
    return dst;
}

/* "file: path: message" (or "file: message" at the top). */
static int bad(const jf_ctx *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(const jf_ctx *c, const char *path, const char *fmt, ...)
{
    char msg[EF_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ef_fail(c->e, EF_E_INPUT, "%s: %s%s%s", c->file, path,
                   path[0] ? ": " : "", msg);
}

/* ---- read -------------------------------------------------------------- */

static int read_const(const jf_field *f, const json_t *o, const jf_ctx *c,
                      const char *where)
{
    char path[512];
    jf_path(path, sizeof path, where, f->key);
    json_t *v = json_object_get(o, f->key);
    if (!v)
        return ef_fail(c->e, EF_E_INPUT, "%s: %s%smissing required key "
                       "\"%s\"", c->file, where, where[0] ? ": " : "",
                       f->key);
    const char *h = f->hint ? ": " : "", *ht = f->hint ? f->hint : "";
    if (f->sval) {
        char q[128];
        if (!json_is_string(v))
            return bad(c, path, "expected \"%s\", got %s%s%s", f->sval,
                       jsonin_type(v), h, ht);
        if (strcmp(json_string_value(v), f->sval) != 0)
            return bad(c, path, "\"%s\" (expected \"%s\"%s%s)",
                       ef_quote(json_string_value(v), q, sizeof q), f->sval,
                       h, ht);
        return EF_OK;
    }
    if (!json_is_integer(v) || json_integer_value(v) != f->min)
        return bad(c, path, "expected %" PRId64 "%s%s", f->min, h, ht);
    return EF_OK;
}

static int read_int(const jf_field *f, const json_t *v, int64_t *out,
                    const jf_ctx *c, const char *path)
{
    if (!json_is_integer(v)) {
        if (json_is_real(v))
            return bad(c, path, "expected an integer, got %g",
                       json_real_value(v));
        return bad(c, path, "expected an integer%s, got %s",
                   f->flags & JF_NULLABLE ? " or null" : "", jsonin_type(v));
    }
    json_int_t x = json_integer_value(v);
    if (x < f->min || x > f->max)
        return bad(c, path, "%" PRId64 " is out of range (expected %" PRId64
                   "..%" PRId64 ")", (int64_t)x, f->min, f->max);
    *out = (int64_t)x;
    return EF_OK;
}

/* v is an array for field f (of 'what'): its size into *n. */
static int array_of(const jf_field *f, const json_t *v, const char *what,
                    size_t *n, const jf_ctx *c, const char *path)
{
    if (!json_is_array(v))
        return bad(c, path, "expected an array%s, got %s", what,
                   jsonin_type(v));
    *n = json_array_size(v);
    if (*n == 0 && (f->flags & JF_NONEMPTY))
        return bad(c, path, "must not be empty");
    if (*n > INT32_MAX)
        return bad(c, path, "too many elements");
    return EF_OK;
}

static int read_member(const jf_field *f, const json_t *o, void *obj,
                       const jf_ctx *c, const char *where)
{
    json_t *v = json_object_get(o, f->key);
    if (!v) {
        if (f->flags & JF_REQ)
            return ef_fail(c->e, EF_E_INPUT, "%s: %s%smissing required key "
                           "\"%s\"", c->file, where, where[0] ? ": " : "",
                           f->key);
        return EF_OK;
    }
    char path[512];
    jf_path(path, sizeof path, where, f->key);
    switch (f->kind) {
    case JF_INT:
    case JF_I64:
    case JF_LONG: {
        int64_t x;
        if ((f->flags & JF_NULLABLE) && json_is_null(v))
            x = f->nul;
        else if (read_int(f, v, &x, c, path) != EF_OK)
            return EF_ERR;
        set_int(f, obj, x);
        return EF_OK;
    }
    case JF_FIXED:
    case JF_G17:
    case JF_G10:
        if (f->kind == JF_G10 && json_is_null(v)) {
            *AT(obj, f->off, double) = NAN;
            return EF_OK;
        }
        if (!json_is_number(v))
            return bad(c, path, "expected a number%s, got %s",
                       f->kind == JF_G10 ? " or null" : "", jsonin_type(v));
        *AT(obj, f->off, double) = json_number_value(v);
        return EF_OK;
    case JF_STR: {
        if (!json_is_string(v))
            return bad(c, path, "expected a string, got %s", jsonin_type(v));
        size_t n = json_string_length(v);
        if (n == 0 && (f->flags & JF_NONEMPTY))
            return bad(c, path, "must not be empty");
        if (f->maxlen && n > f->maxlen)
            return bad(c, path, "too long (%zu bytes; at most %zu)", n,
                       f->maxlen);
        *AT(obj, f->off, const char *) = jf_strdup(c->arena,
                                                   json_string_value(v));
        return EF_OK;
    }
    case JF_ENUM: {
        const char *s = json_is_string(v) ? json_string_value(v) : NULL;
        char list[256] = "", q[128];
        size_t o2 = 0;
        for (int i = 0; i < f->nnames; i++) {
            if (s && strcmp(s, f->names[i]) == 0) {
                *AT(obj, f->off, int) = i;
                return EF_OK;
            }
            o2 += (size_t)snprintf(list + o2, o2 < sizeof list ?
                                   sizeof list - o2 : 0, "%s\"%s\"",
                                   i ? ", " : "", f->names[i]);
        }
        if (!s)
            return bad(c, path, "expected a string, got %s", jsonin_type(v));
        return bad(c, path, "\"%s\" (expected one of %s)",
                   ef_quote(s, q, sizeof q), list);
    }
    case JF_FLAG:
        if (!json_is_boolean(v))
            return bad(c, path, "expected true or false, got %s",
                       jsonin_type(v));
        *AT(obj, f->off, int) = json_is_true(v);
        return EF_OK;
    case JF_CONST:
        return EF_OK; /* checked first */
    case JF_OBJ:
        return jf_read(f->sub, v, AT(obj, f->off, char), c, path);
    case JF_ARR: {
        size_t n;
        if (array_of(f, v, "", &n, c, path) != EF_OK)
            return EF_ERR;
        char *a = n ? jf_alloc(c->arena, n * f->sub->size) : NULL;
        for (size_t i = 0; i < n; i++) {
            char p2[512];
            if (jf_read(f->sub, json_array_get(v, i), a + i * f->sub->size,
                        c, jf_index(p2, sizeof p2, path, i)) != EF_OK)
                return EF_ERR;
        }
        *AT(obj, f->off, void *) = a;
        *AT(obj, f->cnt, int) = (int)n;
        return EF_OK;
    }
    case JF_LONGS: {
        size_t n;
        if (array_of(f, v, " of integers", &n, c, path) != EF_OK)
            return EF_ERR;
        long *a = n ? jf_alloc(c->arena, n * sizeof *a) : NULL;
        for (size_t i = 0; i < n; i++) {
            char p2[512];
            int64_t x;
            if (read_int(f, json_array_get(v, i), &x, c,
                         jf_index(p2, sizeof p2, path, i)) != EF_OK)
                return EF_ERR;
            a[i] = (long)x;
        }
        *AT(obj, f->off, long *) = a;
        *AT(obj, f->cnt, int) = (int)n;
        return EF_OK;
    }
    case JF_CUSTOM:
        return f->custom->read(v, AT(obj, f->off, char), c, path);
    }
    return EF_OK;
}

/* The members of t that the int at 'cond' governs: check presence as one
 * group, then read them. */
static int read_group(const jf_table *t, size_t cond, const json_t *o,
                      void *obj, const jf_ctx *c, const char *where)
{
    const jf_field *flag = NULL, *given = NULL;
    for (int i = 0; i < t->n; i++)
        if (t->f[i].kind == JF_FLAG && !t->f[i].cond &&
            t->f[i].off == cond - 1)
            flag = &t->f[i];
    for (int i = 0; i < t->n && !given; i++)
        if (t->f[i].cond == cond && json_object_get(o, t->f[i].key))
            given = &t->f[i];
    int on;
    if (flag) {
        on = *AT(obj, cond - 1, int);
    } else {
        on = given != NULL;
        *AT(obj, cond - 1, int) = on;
    }
    for (int i = 0; i < t->n; i++) {
        const jf_field *f = &t->f[i];
        if (f->cond != cond)
            continue;
        int here = json_object_get(o, f->key) != NULL;
        if (on && !here)
            return ef_fail(c->e, EF_E_INPUT, "%s: %s%smissing required key "
                           "\"%s\" (it goes with \"%s\")", c->file, where,
                           where[0] ? ": " : "", f->key,
                           flag ? flag->key : given->key);
        if (!on && here) {
            char path[512];
            return bad(c, jf_path(path, sizeof path, where, f->key),
                       "unexpected without \"%s\": true", flag->key);
        }
        if (here && read_member(f, o, obj, c, where) != EF_OK)
            return EF_ERR;
    }
    return EF_OK;
}

int jf_read(const jf_table *t, const json_t *o, void *obj, const jf_ctx *c,
            const char *where)
{
    if (!json_is_object(o))
        return bad(c, where, "expected an object, got %s", jsonin_type(o));
    for (int i = 0; i < t->n; i++)
        if (t->f[i].kind == JF_CONST &&
            read_const(&t->f[i], o, c, where) != EF_OK)
            return EF_ERR;
    const char *keys[128];
    ef_assert(t->n <= 128);
    for (int i = 0; i < t->n; i++)
        keys[i] = t->f[i].key;
    if (jsonin_check_keys(o, keys, t->n, c->file, where, c->e) != EF_OK)
        return EF_ERR;
    for (int i = 0; i < t->n; i++)
        if (!t->f[i].cond && read_member(&t->f[i], o, obj, c, where) != EF_OK)
            return EF_ERR;
    for (int i = 0; i < t->n; i++) {
        size_t cond = t->f[i].cond;
        int first = cond != 0;
        for (int k = 0; k < i && first; k++)
            first = t->f[k].cond != cond;
        if (first && read_group(t, cond, o, obj, c, where) != EF_OK)
            return EF_ERR;
    }
    return EF_OK;
}

int jf_parse(const jf_table *t, void *obj, const char *what,
             const char *path, const char *buf, size_t len, jf_arena *a,
             ef_err *e)
{
    json_t *root = jsonin_parse(path, buf, len, e);
    if (!root)
        return EF_ERR;
    jf_ctx c = {path, a, e};
    int rc;
    if (!json_is_object(root))
        rc = ef_fail(e, EF_E_INPUT, "%s: expected %s, got %s", path, what,
                     jsonin_type(root));
    else
        rc = jf_read(t, root, obj, &c, "");
    json_decref(root);
    return rc;
}

int jf_load(const char *path, int (*parse)(void *obj, const char *path,
                                           const char *buf, size_t len,
                                           ef_err *e),
            void *obj, ef_err *e)
{
    char *buf;
    size_t len;
    if (ef_read_file(path, &buf, &len, e) != EF_OK)
        return EF_ERR;
    int rc = parse(obj, path, buf, len, e);
    free(buf);
    return rc;
}

/* ---- write ------------------------------------------------------------- */

#define CHUNK 512

static int empty(const jf_field *f, const void *obj)
{
    switch (f->kind) {
    case JF_INT:
    case JF_I64:
    case JF_LONG: return get_int(f, obj) == 0;
    case JF_FIXED:
    case JF_G10:
    case JF_G17: return *CAT(obj, f->off, double) == 0;
    case JF_STR: {
        const char *s = *CAT(obj, f->off, char *);
        return !s || !s[0];
    }
    case JF_ENUM:
    case JF_FLAG: return *CAT(obj, f->off, int) == 0;
    case JF_ARR:
    case JF_LONGS: return *CAT(obj, f->cnt, int) == 0;
    case JF_CUSTOM:
        return f->custom->empty && f->custom->empty(CAT(obj, f->off, char));
    case JF_OBJ:
    case JF_CONST: return 0;
    }
    return 0;
}

static void write_array(jw *w, const jf_field *f, const void *obj)
{
    const char *a = *CAT(obj, f->off, char *);
    int n = *CAT(obj, f->cnt, int);
    size_t sz = f->sub->size;
    jw_arr(w, f->key, f->style);
    if (n <= CHUNK) {
        for (int i = 0; i < n; i++)
            jf_write(w, NULL, f->sub, a + (size_t)i * sz, 0);
        jw_end(w);
        return;
    }
    /* long arrays (a plan's slots): chunks rendered in parallel, each by
     * its own writer, joined in order */
    int nch = (n + CHUNK - 1) / CHUNK;
    jw *part = ef_calloc((size_t)nch, sizeof *part);
    #pragma omp parallel for schedule(static)
    for (int k = 0; k < nch; k++) {
        int hi = (k + 1) * CHUNK < n ? (k + 1) * CHUNK : n;
        jw_init(&part[k], w->compact);
        jw_list(&part[k], f->style);
        for (int i = k * CHUNK; i < hi; i++)
            jf_write(&part[k], NULL, f->sub, a + (size_t)i * sz, 0);
        jw_end(&part[k]);
    }
    for (int k = 0; k < nch; k++) {
        int hi = (k + 1) * CHUNK < n ? (k + 1) * CHUNK : n;
        jw_elems(w, part[k].b.s, part[k].b.n, hi - k * CHUNK);
        jw_free(&part[k]);
    }
    free(part);
    jw_end(w);
}

static void write_member(jw *w, const jf_field *f, const void *obj)
{
    switch (f->kind) {
    case JF_INT:
    case JF_I64:
    case JF_LONG: {
        int64_t v = get_int(f, obj);
        if ((f->flags & JF_NULLABLE) && v == f->nul)
            jw_null(w, f->key);
        else
            jw_int(w, f->key, v);
        return;
    }
    case JF_FIXED:
        jw_fixed(w, f->key, *CAT(obj, f->off, double), f->dec);
        return;
    case JF_G10: {
        double x = *CAT(obj, f->off, double);
        if (!isfinite(x))
            jw_null(w, f->key);
        else if (x == floor(x) && fabs(x) < 1e15)
            jw_fixed(w, f->key, x, 0);
        else
            jw_num(w, f->key, "%.10g", x);
        return;
    }
    case JF_G17:
        jw_num(w, f->key, "%.17g", *CAT(obj, f->off, double));
        return;
    case JF_STR:
        jw_str(w, f->key, *CAT(obj, f->off, char *));
        return;
    case JF_ENUM:
        jw_str(w, f->key, f->names[*CAT(obj, f->off, int)]);
        return;
    case JF_FLAG:
        if (*CAT(obj, f->off, int))
            jw_bool(w, f->key, 1);
        return;
    case JF_CONST:
        if (f->sval)
            jw_str(w, f->key, f->sval);
        else
            jw_int(w, f->key, f->min);
        return;
    case JF_OBJ:
        jf_write(w, f->key, f->sub, CAT(obj, f->off, char), 0);
        return;
    case JF_ARR:
        write_array(w, f, obj);
        return;
    case JF_LONGS: {
        const long *a = *CAT(obj, f->off, long *);
        int n = *CAT(obj, f->cnt, int);
        jw_arr(w, f->key, f->style);
        for (int i = 0; i < n; i++)
            jw_int(w, NULL, a[i]);
        jw_end(w);
        return;
    }
    case JF_CUSTOM:
        f->custom->write(w, f->key, CAT(obj, f->off, char));
        return;
    }
}

void jf_write(jw *w, const char *key, const jf_table *t, const void *obj,
              unsigned mask)
{
    jw_obj(w, key, t->style);
    for (int i = 0; i < t->n; i++) {
        const jf_field *f = &t->f[i];
        if (mask && !(f->flags & mask))
            continue;
        if (f->cond && !*CAT(obj, f->cond - 1, int))
            continue;
        if ((f->flags & JF_OPT) && empty(f, obj))
            continue;
        write_member(w, f, obj);
    }
    jw_end(w);
}

/* ---- equal ------------------------------------------------------------- */

static int same_double(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

static int equal_member(const jf_field *f, const void *a, const void *b)
{
    switch (f->kind) {
    case JF_INT:
    case JF_I64:
    case JF_LONG: return get_int(f, a) == get_int(f, b);
    case JF_FIXED:
    case JF_G10:
    case JF_G17:
        return same_double(*CAT(a, f->off, double), *CAT(b, f->off, double));
    case JF_STR: {
        const char *x = *CAT(a, f->off, char *);
        const char *y = *CAT(b, f->off, char *);
        return strcmp(x ? x : "", y ? y : "") == 0;
    }
    case JF_ENUM:
    case JF_FLAG: return *CAT(a, f->off, int) == *CAT(b, f->off, int);
    case JF_CONST: return 1;
    case JF_OBJ:
        return jf_equal(f->sub, CAT(a, f->off, char), CAT(b, f->off, char));
    case JF_ARR: {
        int n = *CAT(a, f->cnt, int);
        if (n != *CAT(b, f->cnt, int))
            return 0;
        const char *x = *CAT(a, f->off, char *);
        const char *y = *CAT(b, f->off, char *);
        for (int i = 0; i < n; i++)
            if (!jf_equal(f->sub, x + (size_t)i * f->sub->size,
                          y + (size_t)i * f->sub->size))
                return 0;
        return 1;
    }
    case JF_LONGS: {
        int n = *CAT(a, f->cnt, int);
        if (n != *CAT(b, f->cnt, int))
            return 0;
        const long *x = *CAT(a, f->off, long *);
        const long *y = *CAT(b, f->off, long *);
        return n == 0 || memcmp(x, y, (size_t)n * sizeof *x) == 0;
    }
    case JF_CUSTOM:
        return f->custom->equal(CAT(a, f->off, char), CAT(b, f->off, char));
    }
    return 0;
}

int jf_equal(const jf_table *t, const void *a, const void *b)
{
    for (int i = 0; i < t->n; i++) {
        const jf_field *f = &t->f[i];
        if (f->cond && *CAT(a, f->cond - 1, int) != *CAT(b, f->cond - 1, int))
            return 0;
        if (f->cond && !*CAT(a, f->cond - 1, int))
            continue;
        if (!equal_member(f, a, b))
            return 0;
    }
    return 1;
}
