/* compare.c: the compare grid and its efplan-compare file (see compare.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/jfield.h"
#include "common/jsonin.h"
#include "common/jsonw.h"
#include "simulator/compare.h"
#include "simulator/published.h"

const char *cmp_stem(const char *path, char *dst, size_t len)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(dst, len, "%s", b);
    char *dot = strrchr(dst, '.');
    if (dot && dot != dst)
        *dot = 0;
    return dst;
}

void cmp_result_free(cmp_result *r)
{
    int n = r->ntraces * r->npolicies;
    for (int k = 0; k < n && r->cells; k++) {
        free(r->cells[k].trace);
        free(r->cells[k].policy);
        free(r->cells[k].cluster);
    }
    free(r->cells);
    memset(r, 0, sizeof *r);
}

/* One cell's outcome inside the parallel loop. */
typedef struct run_cell {
    sim_metrics m;
    double wall;
    int rc;
    ef_err e;
} run_cell;

int cmp_run(const cmp_grid *g, cmp_result *r, ef_err *e)
{
    ef_assert(g->ntraces >= 1 && g->npolicies >= 1);
    int nt = g->ntraces, np = g->npolicies, n = nt * np;
    run_cell *rc = ef_calloc((size_t)n, sizeof *rc);
    memset(r, 0, sizeof *r);
    int done = 0; /* cells finished, for g->progress */
    /* each cell is independent; its result lands at its own index */
    #pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < n; k++) {
        int i = k / np, p = k % np;
        sim s;
        rc[k].rc = sim_run(&s, &g->queues[i], &g->clusters[i],
                           g->policies[p], &g->opts, &rc[k].e);
        if (rc[k].rc == EF_OK) {
            sim_metrics_compute(&s, &rc[k].m);
            rc[k].wall = s.wall_seconds;
        }
        sim_free(&s);
        if (g->progress) {
            #pragma omp critical(cmp_progress)
            g->progress(g->progress_arg, ++done, n);
        }
    }
    for (int k = 0; k < n; k++)
        if (rc[k].rc != EF_OK) {
            *e = rc[k].e;
            free(rc);
            return EF_ERR;
        }
    r->ntraces = nt;
    r->npolicies = np;
    r->cells = ef_calloc((size_t)n, sizeof *r->cells);
    r->slot = g->opts.slot;
    r->overhead = g->opts.overhead;
    r->cap_reference = g->opts.cap_reference;
    r->surplus_reference = g->opts.surplus_reference;
    r->baselines_reference = g->opts.baselines_reference;
    for (int k = 0; k < n; k++) {
        int i = k / np, p = k % np;
        const sim_metrics *m = &rc[k].m;
        cmp_cell *c = &r->cells[k];
        char stem[CMP_STEM_LEN];
        c->trace = ef_strdup(g->traces[i]);
        c->policy = ef_strdup(g->policies[p]->name);
        c->cluster = ef_strdup(g->clusters[i].name);
        c->gpus = g->clusters[i].total_gpus;
        c->admitted = m->admitted;
        c->rejected = m->rejected;
        c->deadline_jobs = m->deadline_jobs;
        c->met = m->met;
        c->migrations = m->migrations;
        c->rescales = m->rescales;
        c->solver_fallbacks = m->solver_fallbacks;
        c->deadline_ratio = m->deadline_ratio;
        c->published = pub_ratio(cmp_stem(c->trace, stem, sizeof stem),
                                 c->gpus, c->policy, NULL);
        c->wall_seconds = rc[k].wall;
    }
    free(rc);
    return EF_OK;
}

/* The policies' header cells and separator of a table that starts with
 * 'lead' columns ("| trace |" and its "|---|"). */
/* A Markdown table being built: ncols columns, cells row by row (the
 * header first), each a heap string; written with every column as wide
 * as its widest cell, so it reads as a table in a terminal too. */
typedef struct md_tab {
    int ncols, n, cap; /* columns; cells so far; cells allocated */
    char **cell;
} md_tab;

/* Append one cell (printf-style) to t. */
static void tab_add(md_tab *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void tab_add(md_tab *t, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->cell = ef_realloc(t->cell, (size_t)t->cap * sizeof *t->cell);
    }
    t->cell[t->n++] = ef_strdup(buf);
}

/* Write t (header, rule, rows) to b, and free its cells; 'pad': columns
 * as wide as their widest cell (else one blank each side: a table whose
 * cells hold wall seconds keeps the same bytes but for them). */
static void tab_put(md_tab *t, ef_buf *b, int pad)
{
    int *w = ef_calloc((size_t)t->ncols, sizeof *w); /* column widths */
    for (int k = 0; k < t->n && pad; k++) {
        int l = (int)strlen(t->cell[k]);
        if (l > w[k % t->ncols])
            w[k % t->ncols] = l;
    }
    for (int k = 0; k < t->n; k++) {
        int c = k % t->ncols;
        ef_buf_printf(b, "%s %-*s", c ? "" : "|", w[c], t->cell[k]);
        ef_buf_put(b, c + 1 == t->ncols ? " |\n" : " |");
        if (k + 1 == t->ncols) { /* the rule under the header */
            for (int r = 0; r < t->ncols; r++) {
                ef_buf_put(b, r ? "" : "|");
                for (int i = 0; i < (pad ? w[r] + 2 : 3); i++)
                    ef_buf_put(b, "-");
                ef_buf_put(b, "|");
            }
            ef_buf_put(b, "\n");
        }
    }
    for (int k = 0; k < t->n; k++)
        free(t->cell[k]);
    free(t->cell);
    free(w);
    memset(t, 0, sizeof *t);
}

void cmp_tables(const cmp_result *r, ef_buf *md)
{
    int np = r->npolicies;
    char stem[CMP_STEM_LEN];
    md_tab t = {0};
    ef_buf_printf(md, "Deadline ratio (met / jobs with a deadline); in "
                  "parentheses the ElasticFlow paper's number where it has "
                  "one. Slot %d s, overhead %s, baseline cap %s, surplus %s.",
                  r->slot, ovh_name(r->overhead),
                  r->cap_reference ? "reference" : "usable",
                  r->surplus_reference ? "reference" : "gain");
    if (r->baselines_reference)
        ef_buf_put(md, " Fixed-size baselines and edf-ac keep the "
                       "reference's defects (--baselines reference).");
    ef_buf_put(md, "\n\n");
    t.ncols = np + 2;
    tab_add(&t, "trace");
    tab_add(&t, "cluster");
    for (int p = 0; p < np; p++)
        tab_add(&t, "%s", r->cells[p].policy);
    for (int i = 0; i < r->ntraces; i++) {
        const cmp_cell *row = &r->cells[i * np];
        tab_add(&t, "%s", cmp_stem(row->trace, stem, sizeof stem));
        tab_add(&t, "%s (%d GPUs)", row->cluster, row->gpus);
        for (int p = 0; p < np; p++) {
            if (row[p].published >= 0)
                tab_add(&t, "%.3f (%.3f)", row[p].deadline_ratio,
                        row[p].published);
            else
                tab_add(&t, "%.3f", row[p].deadline_ratio);
        }
    }
    tab_put(&t, md, 1);
    ef_buf_put(md, "\nWall seconds per run (admitted / rejected jobs).\n\n");
    t.ncols = np + 1;
    tab_add(&t, "trace");
    for (int p = 0; p < np; p++)
        tab_add(&t, "%s", r->cells[p].policy);
    for (int i = 0; i < r->ntraces; i++) {
        const cmp_cell *row = &r->cells[i * np];
        tab_add(&t, "%s", cmp_stem(row->trace, stem, sizeof stem));
        for (int p = 0; p < np; p++)
            tab_add(&t, "%.2f (%d / %d)", row[p].wall_seconds,
                    row[p].admitted, row[p].rejected);
    }
    tab_put(&t, md, 0);
    int nfb = 0;
    for (int k = 0; k < r->ntraces * np; k++)
        if (r->cells[k].solver_fallbacks > 0) {
            ef_buf_printf(md, "%s%s on %s: %d", nfb ? "; " :
                          "\nSolver fallbacks (MIP node budget reached, "
                          "greedy answer used): ", r->cells[k].policy,
                          cmp_stem(r->cells[k].trace, stem, sizeof stem),
                          r->cells[k].solver_fallbacks);
            nfb++;
        }
    if (nfb)
        ef_buf_put(md, ".\n");
}

/* ---- the file: one field table for the cells, read and written -------- */

typedef enum ftype {
    F_INT,    /* int, >= min */
    F_STR,    /* owned char *, non-empty */
    F_RATIO,  /* double in [0, 1], written %.10g */
    F_PUB,    /* double in [0, 1], written %.3f; < 0 is null */
    F_SECS    /* double >= 0, written %.3f */
} ftype;

typedef struct field {
    const char *key;
    ftype type;
    size_t off;
    int min;  /* F_INT */
} field;

#define FLD(k, t, m, lo) {k, t, offsetof(cmp_cell, m), lo}
static const field cell_fields[] = {
    FLD("trace", F_STR, trace, 0),
    FLD("policy", F_STR, policy, 0),
    FLD("cluster", F_STR, cluster, 0),
    FLD("gpus", F_INT, gpus, 1),
    FLD("admitted", F_INT, admitted, 0),
    FLD("rejected", F_INT, rejected, 0),
    FLD("deadline_jobs", F_INT, deadline_jobs, 0),
    FLD("met", F_INT, met, 0),
    FLD("migrations", F_INT, migrations, 0),
    FLD("rescales", F_INT, rescales, 0),
    FLD("solver_fallbacks", F_INT, solver_fallbacks, 0),
    FLD("deadline_ratio", F_RATIO, deadline_ratio, 0),
    FLD("published", F_PUB, published, 0),
    FLD("wall_seconds", F_SECS, wall_seconds, 0),
};
#define NCELL_FIELDS ((int)(sizeof cell_fields / sizeof cell_fields[0]))

static const char *const root_keys[] = {"cells", "format", "overhead",
                                        "slot_seconds", "version"};
#define NROOT_KEYS ((int)(sizeof root_keys / sizeof root_keys[0]))

static void put_field(jw *w, const field *f, const cmp_cell *c)
{
    const char *p = (const char *)c + f->off;
    double x;
    switch (f->type) {
    case F_INT:
        jw_int(w, f->key, *(const int *)p);
        break;
    case F_STR:
        jw_str(w, f->key, *(char *const *)p);
        break;
    case F_RATIO:
        jw_num(w, f->key, "%.10g", *(const double *)p);
        break;
    case F_PUB:
        x = *(const double *)p;
        if (x >= 0)
            jw_fixed(w, f->key, x, 3);
        else
            jw_null(w, f->key);
        break;
    case F_SECS:
        jw_fixed(w, f->key, *(const double *)p, 3);
        break;
    }
}

void cmp_json(const cmp_result *r, ef_buf *out)
{
    jw w;
    jw_init(&w, 0);
    jw_obj(&w, NULL, &jw_block_obj);
    jw_arr(&w, "cells", &jw_block_arr);
    for (int k = 0; k < r->ntraces * r->npolicies; k++) {
        jw_obj(&w, NULL, &jw_inline_obj);
        for (int f = 0; f < NCELL_FIELDS; f++)
            put_field(&w, &cell_fields[f], &r->cells[k]);
        jw_end(&w);
    }
    jw_end(&w);
    jw_str(&w, "format", "efplan-compare");
    jw_str(&w, "overhead", ovh_name(r->overhead));
    jw_int(&w, "slot_seconds", r->slot);
    jw_int(&w, "version", 1);
    jw_end(&w);
    ef_buf_put(&w.b, "\n");
    char *s = jw_take(&w, NULL);
    ef_buf_put(out, s);
    free(s);
}

int cmp_write_json(const cmp_result *r, const char *path, ef_err *e)
{
    ef_buf b = {0};
    cmp_json(r, &b);
    int rc = ef_write_file_atomic(path, b.s, b.n, e);
    free(b.s);
    return rc;
}

/* Read field 'f' of cell object 'o' (at 'where') into 'c'. */
static int get_field(const json_t *o, const field *f, cmp_cell *c,
                     const char *file, const char *where, ef_err *e)
{
    char *p = (char *)c + f->off;
    const json_t *v = json_object_get(o, f->key);
    if (!v)
        return ef_fail(e, EF_E_INPUT, "%s: %s: missing required key \"%s\"",
                       file, where, f->key);
    if (f->type == F_INT) {
        int64_t x;
        if (jsonin_int(o, f->key, 1, f->min, 1000000000, &x, file, where,
                       e) < 0)
            return EF_ERR;
        *(int *)p = (int)x;
        return EF_OK;
    }
    if (f->type == F_STR) {
        if (!json_is_string(v))
            return ef_fail(e, EF_E_INPUT, "%s: %s.%s: expected a string, got "
                           "%s", file, where, f->key, jsonin_type(v));
        if (json_string_length(v) == 0 ||
            strlen(json_string_value(v)) != json_string_length(v))
            return ef_fail(e, EF_E_INPUT, "%s: %s.%s: expected a non-empty "
                           "string without NUL bytes", file, where, f->key);
        *(char **)p = ef_strdup(json_string_value(v));
        return EF_OK;
    }
    if (f->type == F_PUB && json_is_null(v)) {
        *(double *)p = -1;
        return EF_OK;
    }
    double hi = f->type == F_SECS ? 1e15 : 1;
    double x = json_is_number(v) ? json_number_value(v) : -1;
    if (!(x >= 0 && x <= hi))
        return ef_fail(e, EF_E_INPUT, "%s: %s.%s: expected a number from 0 "
                       "to %g%s", file, where, f->key, hi,
                       f->type == F_PUB ? " or null" : "");
    *(double *)p = x;
    return EF_OK;
}

/* Whether cells[0..n) form a grid of rows of 'np' policies. */
static int grid_fits(const cmp_cell *c, int n, int np)
{
    if (n % np)
        return 0;
    for (int k = 0; k < n; k++) {
        const cmp_cell *row = &c[k - k % np];
        if (strcmp(c[k].policy, c[k % np].policy) != 0 ||
            strcmp(c[k].trace, row->trace) != 0 ||
            strcmp(c[k].cluster, row->cluster) != 0 || c[k].gpus != row->gpus)
            return 0;
    }
    return 1;
}

/* The cells array 'a' into r (r->cells allocated, grid shape set). */
static int get_cells(cmp_result *r, const json_t *a, const char *file,
                     ef_err *e)
{
    if (!json_is_array(a) || json_array_size(a) == 0)
        return ef_fail(e, EF_E_INPUT, "%s: cells: expected a non-empty array "
                       "of cells, got %s", file, json_is_array(a) ? "[]" :
                       jsonin_type(a));
    if (json_array_size(a) > 1000000)
        return ef_fail(e, EF_E_INPUT, "%s: cells: more than 1000000 cells",
                       file);
    int n = (int)json_array_size(a);
    const char *keys[NCELL_FIELDS];
    for (int f = 0; f < NCELL_FIELDS; f++)
        keys[f] = cell_fields[f].key;
    /* one row of n cells until the shape is known, so that
     * cmp_result_free frees whatever was read */
    r->cells = ef_calloc((size_t)n, sizeof *r->cells);
    r->ntraces = 1;
    r->npolicies = n;
    for (int k = 0; k < n; k++) {
        const json_t *o = json_array_get(a, (size_t)k);
        char where[32];
        snprintf(where, sizeof where, "cells[%d]", k);
        if (!json_is_object(o))
            return ef_fail(e, EF_E_INPUT, "%s: %s: expected an object, got "
                           "%s", file, where, jsonin_type(o));
        if (jsonin_check_keys(o, keys, NCELL_FIELDS, file, where, e) !=
            EF_OK)
            return EF_ERR;
        for (int f = 0; f < NCELL_FIELDS; f++)
            if (get_field(o, &cell_fields[f], &r->cells[k], file, where, e) !=
                EF_OK)
                return EF_ERR;
    }
    for (int np = 1; np <= n; np++)
        if (grid_fits(r->cells, n, np)) {
            r->ntraces = n / np;
            r->npolicies = np;
            return EF_OK;
        }
    return ef_fail(e, EF_E_INPUT, "%s: cells: not a grid of traces x "
                   "policies (each trace's row of policies in turn, every "
                   "row with the same policies)", file);
}

int cmp_parse(cmp_result *r, const char *file, const char *buf, size_t len,
              ef_err *e)
{
    memset(r, 0, sizeof *r);
    json_t *root = jsonin_parse(file, buf, len, e);
    if (!root)
        return EF_ERR;
    int rc = EF_ERR;
    const char *fmt = NULL, *ovh = NULL;
    int64_t version = 0, slot = 0;
    if (!json_is_object(root)) {
        ef_fail(e, EF_E_INPUT, "%s: expected a JSON object, got %s", file,
                jsonin_type(root));
        goto out;
    }
    if (jsonin_check_keys(root, root_keys, NROOT_KEYS, file, "", e) != EF_OK ||
        jsonin_str(root, "format", 1, &fmt, file, "", e) < 0)
        goto out;
    if (strcmp(fmt, "efplan-compare") != 0) {
        char q[128];
        ef_fail(e, EF_E_INPUT, "%s: format: \"%s\" (expected "
                "\"efplan-compare\")", file, ef_quote(fmt, q, sizeof q));
        goto out;
    }
    if (jsonin_int(root, "version", 1, 1, 1, &version, file, "", e) < 0 ||
        jsonin_int(root, "slot_seconds", 1, 1, 86400, &slot, file, "", e) <
            0 ||
        jsonin_str(root, "overhead", 1, &ovh, file, "", e) < 0)
        goto out;
    int m = ovh_parse(ovh);
    if (m < 0) {
        char q[128];
        ef_fail(e, EF_E_INPUT, "%s: overhead: \"%s\" (expected fig12, "
                "reference, restart or none)", file, ef_quote(ovh, q,
                                                               sizeof q));
        goto out;
    }
    r->slot = (int)slot;
    r->overhead = (ovh_mode)m;
    const json_t *cells = json_object_get(root, "cells");
    if (!cells) {
        ef_fail(e, EF_E_INPUT, "%s: missing required key \"cells\"", file);
        goto out;
    }
    rc = get_cells(r, cells, file, e);
out:
    json_decref(root);
    if (rc != EF_OK)
        cmp_result_free(r);
    return rc;
}

static int parse_any(void *r, const char *path, const char *buf, size_t len,
                     ef_err *e)
{
    return cmp_parse(r, path, buf, len, e);
}

int cmp_read(cmp_result *r, const char *path, ef_err *e)
{
    memset(r, 0, sizeof *r);
    return jf_load(path, parse_any, r, e);
}
