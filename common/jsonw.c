/* jsonw.c: the sorted-key JSON writer (see jsonw.h). */
#include "common/jsonw.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"

const jw_style jw_inline_obj = {"{", ", ", "}", "{}", ": "};
const jw_style jw_inline_arr = {"[", ", ", "]", "[]", ": "};
const jw_style jw_block_obj = {"{\n  ", ",\n  ", "\n}", "{}", ": "};
const jw_style jw_block_arr = {"[\n    ", ",\n    ", "\n  ]", "[\n  ]",
                               ": "};

static const jw_style compact_obj = {"{", ",", "}", "{}", ":"};
static const jw_style compact_arr = {"[", ",", "]", "[]", ":"};
static const jw_style compact_list = {"", ",", "", "", ":"};

struct jw_frame {
    const jw_style *st;
    size_t start;   /* where the container's text begins */
    size_t body;    /* just after its opening text */
    int obj, list;
    int n;          /* members or elements so far */
    int m0;         /* its first member in w->m */
};

/* One member of an open object: its text runs from 'beg' (its separator,
 * if it has one) over 'txt' (the key) to 'end'. */
struct jw_member {
    const char *key;
    size_t beg, txt, end;
};

void jw_init(jw *w, int compact)
{
    memset(w, 0, sizeof *w);
    w->compact = compact;
}

void jw_free(jw *w)
{
    free(w->b.s);
    free(w->fr);
    free(w->m);
    memset(w, 0, sizeof *w);
}

static const jw_style *style_of(const jw *w, const jw_frame *f)
{
    if (!w->compact)
        return f->st;
    return f->list ? &compact_list : f->obj ? &compact_obj : &compact_arr;
}

/* Before a value: its separator and, inside an object, its key. */
static void item(jw *w, const char *key)
{
    if (w->nfr == 0) {
        ef_assert(key == NULL && w->b.n == 0);
        return;
    }
    jw_frame *f = &w->fr[w->nfr - 1];
    const jw_style *st = style_of(w, f);
    if (f->obj) {
        ef_assert(key != NULL);
        if (w->nm == w->capm) {
            w->capm = w->capm ? 2 * w->capm : 32;
            w->m = ef_realloc(w->m, (size_t)w->capm * sizeof *w->m);
        }
        jw_member *m = &w->m[w->nm++];
        m->key = key;
        m->beg = w->b.n;
        if (f->n)
            ef_buf_put(&w->b, st->sep);
        m->txt = w->b.n;
        ef_buf_json_str(&w->b, key);
        ef_buf_put(&w->b, st->colon);
        m->end = 0;
    } else {
        ef_assert(key == NULL);
        if (f->n)
            ef_buf_put(&w->b, st->sep);
    }
    f->n++;
}

/* After a value: the end of its member, inside an object. */
static void done(jw *w)
{
    if (w->nfr && w->fr[w->nfr - 1].obj)
        w->m[w->nm - 1].end = w->b.n;
}

static void open_frame(jw *w, const char *key, const jw_style *st, int obj,
                 int list)
{
    item(w, key);
    if (w->nfr == w->capfr) {
        w->capfr = w->capfr ? 2 * w->capfr : 16;
        w->fr = ef_realloc(w->fr, (size_t)w->capfr * sizeof *w->fr);
    }
    jw_frame *f = &w->fr[w->nfr++];
    memset(f, 0, sizeof *f);
    f->st = st;
    f->obj = obj;
    f->list = list;
    f->m0 = w->nm;
    f->start = w->b.n;
    if (!list)
        ef_buf_put(&w->b, style_of(w, f)->open);
    f->body = w->b.n;
}

void jw_obj(jw *w, const char *key, const jw_style *st)
{
    open_frame(w, key, st, 1, 0);
}

void jw_arr(jw *w, const char *key, const jw_style *st)
{
    open_frame(w, key, st, 0, 0);
}

void jw_list(jw *w, const jw_style *st)
{
    ef_assert(w->nfr == 0);
    open_frame(w, NULL, st, 0, 1);
}

static int cmp_member(const void *a, const void *b)
{
    return strcmp(((const jw_member *)a)->key, ((const jw_member *)b)->key);
}

/* Put the members of object frame f in key order. */
static void sort_members(jw *w, const jw_frame *f, const jw_style *st)
{
    jw_member *ms = &w->m[f->m0];
    int n = f->n, sorted = 1;
    for (int i = 1; i < n; i++) {
        int c = strcmp(ms[i - 1].key, ms[i].key);
        if (c == 0)
            ef_panic("JSON writer: key \"%s\" written twice", ms[i].key);
        if (c > 0)
            sorted = 0;
    }
    if (sorted)
        return;
    qsort(ms, (size_t)n, sizeof *ms, cmp_member);
    for (int i = 1; i < n; i++)
        if (strcmp(ms[i - 1].key, ms[i].key) == 0)
            ef_panic("JSON writer: key \"%s\" written twice", ms[i].key);
    ef_buf t = {0};
    for (int i = 0; i < n; i++) {
        if (i)
            ef_buf_put(&t, st->sep);
        size_t len = ms[i].end - ms[i].txt;
        ef_buf_grow(&t, len);
        memcpy(t.s + t.n, w->b.s + ms[i].txt, len);
        t.n += len;
        t.s[t.n] = '\0';
    }
    ef_assert(f->body + t.n == w->b.n);
    memcpy(w->b.s + f->body, t.s, t.n);
    free(t.s);
}

void jw_end(jw *w)
{
    ef_assert(w->nfr > 0);
    jw_frame *f = &w->fr[w->nfr - 1];
    const jw_style *st = style_of(w, f);
    if (f->list) {
        /* a bare list: no brackets */
    } else if (f->n == 0) {
        w->b.n = f->start;
        w->b.s[w->b.n] = '\0';
        ef_buf_put(&w->b, st->empty);
    } else {
        if (f->obj)
            sort_members(w, f, st);
        ef_buf_put(&w->b, st->close);
    }
    w->nm = f->m0;
    w->nfr--;
    done(w);
}

void jw_int(jw *w, const char *key, int64_t v)
{
    item(w, key);
    /* the digits by hand: plans are mostly integers, and printf's
     * machinery was most of the time spent writing one */
    char d[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        d[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        d[n++] = '-';
    ef_buf_grow(&w->b, (size_t)n);
    for (int i = 0; i < n; i++)
        w->b.s[w->b.n + i] = d[n - 1 - i];
    w->b.n += (size_t)n;
    w->b.s[w->b.n] = '\0';
    done(w);
}

void jw_fixed(jw *w, const char *key, double v, int decimals)
{
    item(w, key);
    ef_buf_printf(&w->b, "%.*f", decimals, v);
    done(w);
}

void jw_num(jw *w, const char *key, const char *fmt, double v)
{
    item(w, key);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    ef_buf_printf(&w->b, fmt, v);
#pragma GCC diagnostic pop
    done(w);
}

void jw_str(jw *w, const char *key, const char *s)
{
    item(w, key);
    ef_buf_json_str(&w->b, s ? s : "");
    done(w);
}

void jw_bool(jw *w, const char *key, int v)
{
    item(w, key);
    ef_buf_put(&w->b, v ? "true" : "false");
    done(w);
}

void jw_null(jw *w, const char *key)
{
    item(w, key);
    ef_buf_put(&w->b, "null");
    done(w);
}

void jw_elems(jw *w, const char *text, size_t len, int n)
{
    ef_assert(w->nfr > 0 && !w->fr[w->nfr - 1].obj);
    if (n == 0)
        return;
    jw_frame *f = &w->fr[w->nfr - 1];
    if (f->n)
        ef_buf_put(&w->b, style_of(w, f)->sep);
    ef_buf_grow(&w->b, len);
    memcpy(w->b.s + w->b.n, text, len);
    w->b.n += len;
    w->b.s[w->b.n] = '\0';
    f->n += n;
}

char *jw_take(jw *w, size_t *len)
{
    ef_assert(w->nfr == 0);
    char *s = w->b.s ? w->b.s : ef_strdup("");
    if (len)
        *len = w->b.n;
    w->b.s = NULL;
    jw_free(w);
    return s;
}
