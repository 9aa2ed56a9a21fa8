/* curve.c: throughput curves and the usable-size rule (see curve.h). */
#include "model/curve.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/csv.h"
#include "common/jsonin.h"
#include "common/path.h"
#include "common/util.h"

int curve_usable(const curve_row *row, int max_gpus, int *gpus, double *tput)
{
    int n = 0;
    double best = 0.0;
    for (int i = 0; i < CURVE_MAX_LEVELS; i++) {
        long g = 1L << i;
        if (g > max_gpus)
            break;
        double t = row->cell[i];
        if (t > best) {
            if (gpus)
                gpus[n] = (int)g;
            if (tput)
                tput[n] = t;
            n++;
            best = t;
        }
    }
    return n;
}

int curve_row_ready(curve_row *row)
{
    row->nusable = curve_usable(row, INT_MAX, row->usable_gpus,
                                row->usable_tput);
    for (int i = 0; i < CURVE_MAX_LEVELS; i++)
        row->utput[i] = 0.0;
    for (int i = 0; i < row->nusable; i++)
        row->utput[__builtin_ctz((unsigned)row->usable_gpus[i])] =
            row->usable_tput[i];
    int best = 0, u = 0;
    double bt = 0;
    for (int l = 0; l < 31; l++) {
        while (u < row->nusable && row->usable_gpus[u] <= (1L << l)) {
            best = row->usable_gpus[u];
            bt = row->usable_tput[u];
            u++;
        }
        row->fit_g[l] = best;
        row->fit_t[l] = bt;
    }
    return row->nusable;
}

int curve_max_usable(const curve_row *row, int max_gpus)
{
    int best = 0;
    for (int i = 0; i < row->nusable && row->usable_gpus[i] <= max_gpus; i++)
        best = row->usable_gpus[i];
    return best;
}

void curve_model_free(curve_model *m)
{
    free(m->name);
    free(m->path);
    free(m->rows);
    memset(m, 0, sizeof *m);
}

void curve_set_free(curve_set *cs)
{
    for (int i = 0; i < cs->nmodels; i++)
        curve_model_free(&cs->models[i]);
    free(cs->models);
    free(cs->dir);
    memset(cs, 0, sizeof *cs);
}

static int cmp_row(const void *a, const void *b)
{
    long x = ((const curve_row *)a)->batch, y = ((const curve_row *)b)->batch;
    return (x > y) - (x < y);
}

/* Shared tail of both parsers: sort rows, reject duplicates and rows with
 * no usable size, compute each row's ladder. */
static int finish_model(curve_model *m, int is_json, ef_err *e)
{
    if (m->nrows == 0)
        return ef_fail(e, EF_E_INPUT,
                       "%s: no rows (expected at least one batch size)",
                       m->path);
    qsort(m->rows, (size_t)m->nrows, sizeof *m->rows, cmp_row);
    for (int i = 0; i < m->nrows; i++) {
        curve_row *r = &m->rows[i];
        if (i > 0 && r->batch == m->rows[i - 1].batch) {
            long a = m->rows[i - 1].line, b = r->line;
            if (a > b) { long t = a; a = b; b = t; }
            if (is_json)
                return ef_fail(e, EF_E_INPUT,
                               "%s: rows[%ld].batch_size: batch size %ld is "
                               "also in rows[%ld]", m->path, b, r->batch, a);
            return ef_fail(e, EF_E_INPUT,
                           "%s:%ld:1: batch size %ld already has a row (line "
                           "%ld)", m->path, b, r->batch, a);
        }
        curve_row_ready(r);
        if (r->nusable == 0) {
            if (is_json)
                return ef_fail(e, EF_E_INPUT,
                               "%s: rows[%ld]: batch size %ld has no usable "
                               "GPU count (every cell is empty, nan or 0)",
                               m->path, r->line, r->batch);
            return ef_fail(e, EF_E_INPUT,
                           "%s:%ld:1: batch size %ld has no usable GPU count "
                           "(every cell is empty, nan or 0)",
                           m->path, r->line, r->batch);
        }
    }
    return EF_OK;
}

/* Parse one throughput cell. Returns EF_OK with *out = 0 for "not
 * runnable" (empty, nan, 0). */
static int parse_cell(const char *s, double *out, const char **why)
{
    double v;
    if (s[0] == '\0' || strcasecmp(s, "nan") == 0 ||
        strcasecmp(s, "-nan") == 0 || strcasecmp(s, "+nan") == 0) {
        *out = 0.0;
        return EF_OK;
    }
    switch (ef_parse_double(s, &v)) {
    case EF_NUM_OK:
        break;
    case EF_NUM_NOTFINITE:
        *why = "infinite throughput (expected iterations/s, or empty/nan/0 "
               "for not runnable)";
        return EF_ERR;
    case EF_NUM_RANGE:
        *why = "number out of range (expected a finite throughput in "
               "iterations/s)";
        return EF_ERR;
    default:
        *why = "not a number (expected iterations/s, or empty/nan/0 for not "
               "runnable)";
        return EF_ERR;
    }
    if (v < 0) {
        *why = "negative throughput (expected iterations/s >= 0)";
        return EF_ERR;
    }
    if (v > 0 && v < CURVE_MIN_TPUT) {
        *why = "throughput below the minimum of 1e-06 iterations/s "
               "(expected at least 1e-06, or empty/nan/0 for not runnable)";
        return EF_ERR;
    }
    if (v > CURVE_MAX_TPUT) {
        *why = "throughput above the maximum of 1e+09 iterations/s "
               "(expected at most 1e+09 iterations/s)";
        return EF_ERR;
    }
    *out = v;
    return EF_OK;
}

int curve_parse_csv(curve_model *m, const char *model, const char *path,
                    const char *buf, size_t len, ef_err *e)
{
    memset(m, 0, sizeof *m);
    m->name = ef_strdup(model);
    m->path = ef_strdup(path);
    csv_reader r;
    csv_row row = {0};
    int level_of_col[1 + 64];
    int ncols, rc;
    char q[128];
    csv_open(&r, m->path, buf, len);
    rc = csv_next(&r, &row, e);
    if (rc == 0) {
        ef_fail(e, EF_E_INPUT,
                "%s: empty file (expected a header "
                "\"global_batch_size,1,2,4,...\")", path);
        goto fail;
    }
    if (rc < 0)
        goto fail;
    if (strcmp(row.f[0], "global_batch_size") != 0) {
        ef_fail(e, EF_E_INPUT,
                "%s:%ld:%d: first column is \"%s\" (expected "
                "\"global_batch_size\")",
                path, row.line, row.col[0], ef_quote(row.f[0], q, sizeof q));
        goto fail;
    }
    if (row.nf < 2) {
        ef_fail(e, EF_E_INPUT,
                "%s:%ld:%d: no GPU-count columns (expected "
                "\"global_batch_size,1,2,4,...\")",
                path, row.line, row.col[0]);
        goto fail;
    }
    if (row.nf - 1 > CURVE_MAX_LEVELS) {
        ef_fail(e, EF_E_INPUT, "%s:%ld:%d: too many columns (at most %d GPU "
                "counts)", path, row.line, row.col[CURVE_MAX_LEVELS + 1],
                CURVE_MAX_LEVELS);
        goto fail;
    }
    ncols = row.nf;
    for (int i = 1; i < ncols; i++) {
        int64_t g;
        ef_numerr ne = ef_parse_i64(row.f[i], 1, 1L << (CURVE_MAX_LEVELS - 1), &g);
        if (ne == EF_NUM_EMPTY) {
            ef_fail(e, EF_E_INPUT, "%s:%ld:%d: empty column name (expected a "
                    "GPU count)", path, row.line, row.col[i]);
            goto fail;
        }
        if (ne != EF_NUM_OK || !ef_is_pow2(g)) {
            ef_fail(e, EF_E_INPUT,
                    "%s:%ld:%d: column \"%s\" is not a GPU count (expected a "
                    "power of two from 1 to %d)",
                    path, row.line, row.col[i], ef_quote(row.f[i], q, sizeof q),
                    1 << (CURVE_MAX_LEVELS - 1));
            goto fail;
        }
        int lv = 0;
        while ((1L << lv) < g)
            lv++;
        for (int j = 1; j < i; j++) {
            if (level_of_col[j] == lv) {
                ef_fail(e, EF_E_INPUT, "%s:%ld:%d: duplicated column \"%s\"",
                        path, row.line, row.col[i], row.f[i]);
                goto fail;
            }
            if (level_of_col[j] > lv) {
                ef_fail(e, EF_E_INPUT,
                        "%s:%ld:%d: column %s after a larger GPU count "
                        "(expected increasing GPU counts)",
                        path, row.line, row.col[i], row.f[i]);
                goto fail;
            }
        }
        level_of_col[i] = lv;
    }
    int cap = 0;
    while ((rc = csv_next(&r, &row, e)) == 1) {
        if (row.nf != ncols) {
            ef_fail(e, EF_E_INPUT,
                    "%s:%ld:%d: %d fields (expected %d: a batch size and one "
                    "cell per GPU count of the header)",
                    path, row.line,
                    row.nf > ncols ? row.col[ncols] : row.col[row.nf - 1],
                    row.nf, ncols);
            goto fail;
        }
        int64_t b;
        ef_numerr ne = ef_parse_i64(row.f[0], 1, INT32_MAX, &b);
        if (ne != EF_NUM_OK) {
            ef_fail(e, EF_E_INPUT,
                    "%s:%ld:%d: batch size \"%s\" is %s (expected a positive "
                    "integer)",
                    path, row.line, row.col[0], ef_quote(row.f[0], q, sizeof q),
                    ne == EF_NUM_RANGE ? "out of range" : "not an integer");
            goto fail;
        }
        if (m->nrows == cap) {
            cap = cap ? cap * 2 : 8;
            m->rows = ef_realloc(m->rows, (size_t)cap * sizeof *m->rows);
        }
        curve_row *cr = &m->rows[m->nrows];
        memset(cr, 0, sizeof *cr);
        cr->batch = (long)b;
        cr->line = row.line;
        for (int i = 1; i < ncols; i++) {
            const char *why = NULL;
            if (parse_cell(row.f[i], &cr->cell[level_of_col[i]], &why) != EF_OK) {
                ef_fail(e, EF_E_INPUT, "%s:%ld:%d: \"%s\": %s", path, row.line,
                        row.col[i], ef_quote(row.f[i], q, sizeof q), why);
                goto fail;
            }
            cr->measured[level_of_col[i]] = 1;
        }
        m->nrows++;
    }
    if (rc < 0)
        goto fail;
    csv_row_free(&row);
    if (finish_model(m, 0, e) != EF_OK) {
        curve_model_free(m);
        return EF_ERR;
    }
    return EF_OK;
fail:
    csv_row_free(&row);
    curve_model_free(m);
    return EF_ERR;
}

int curve_parse_json(curve_model *m, const char *model, const char *path,
                     const char *buf, size_t len, ef_err *e)
{
    static const char *const top_keys[] = {"format", "version", "model", "rows"};
    static const char *const row_keys[] = {"batch_size", "throughput"};
    memset(m, 0, sizeof *m);
    m->name = ef_strdup(model);
    m->path = ef_strdup(path);
    json_t *root = jsonin_parse(path, buf, len, e);
    char where[64], q[128];
    if (!root)
        goto fail;
    if (!json_is_object(root)) {
        ef_fail(e, EF_E_INPUT, "%s: expected an object {\"model\": ..., "
                "\"rows\": [...]}, got %s", path, jsonin_type(root));
        goto fail;
    }
    if (jsonin_check_keys(root, top_keys, 4, path, "", e) != EF_OK)
        goto fail;
    const char *name;
    int has = jsonin_str(root, "model", 0, &name, path, "", e);
    if (has < 0)
        goto fail;
    if (has && strcmp(name, model) != 0) {
        ef_fail(e, EF_E_INPUT, "%s: model: \"%s\" differs from the file name "
                "(expected \"%s\")", path, ef_quote(name, q, sizeof q), model);
        goto fail;
    }
    json_t *rows = json_object_get(root, "rows");
    if (!rows) {
        ef_fail(e, EF_E_INPUT, "%s: missing required key \"rows\"", path);
        goto fail;
    }
    if (!json_is_array(rows)) {
        ef_fail(e, EF_E_INPUT, "%s: rows: expected an array, got %s", path,
                jsonin_type(rows));
        goto fail;
    }
    size_t n = json_array_size(rows);
    m->rows = ef_calloc(n ? n : 1, sizeof *m->rows);
    for (size_t i = 0; i < n; i++) {
        json_t *jr = json_array_get(rows, i);
        snprintf(where, sizeof where, "rows[%zu]", i);
        if (!json_is_object(jr)) {
            ef_fail(e, EF_E_INPUT, "%s: %s: expected an object, got %s", path,
                    where, jsonin_type(jr));
            goto fail;
        }
        if (jsonin_check_keys(jr, row_keys, 2, path, where, e) != EF_OK)
            goto fail;
        int64_t b;
        if (jsonin_int(jr, "batch_size", 1, 1, INT32_MAX, &b, path, where, e) < 0)
            goto fail;
        curve_row *cr = &m->rows[m->nrows++];
        cr->batch = (long)b;
        cr->line = (long)i;
        json_t *tp = json_object_get(jr, "throughput");
        if (!tp) {
            ef_fail(e, EF_E_INPUT, "%s: %s: missing required key "
                    "\"throughput\"", path, where);
            goto fail;
        }
        if (!json_is_object(tp)) {
            ef_fail(e, EF_E_INPUT, "%s: %s.throughput: expected an object "
                    "{\"1\": it/s, \"2\": it/s, ...}, got %s", path, where,
                    jsonin_type(tp));
            goto fail;
        }
        const char *k;
        json_t *v;
        json_object_foreach(tp, k, v) {
            int64_t g;
            if (ef_parse_i64(k, 1, 1L << (CURVE_MAX_LEVELS - 1), &g) != EF_NUM_OK ||
                !ef_is_pow2(g)) {
                ef_fail(e, EF_E_INPUT, "%s: %s.throughput: key \"%s\" is not a "
                        "GPU count (expected a power of two from 1 to %d)",
                        path, where, ef_quote(k, q, sizeof q),
                        1 << (CURVE_MAX_LEVELS - 1));
                goto fail;
            }
            int lv = 0;
            while ((1L << lv) < g)
                lv++;
            if (cr->measured[lv]) {
                /* "1" and "01" (or "+1") name the same GPU count */
                ef_fail(e, EF_E_INPUT, "%s: %s.throughput: key \"%s\" repeats "
                        "GPU count %lld (keep one key per GPU count)", path,
                        where, ef_quote(k, q, sizeof q), (long long)g);
                goto fail;
            }
            double t;
            if (json_is_null(v)) {
                t = 0.0;
            } else if (json_is_number(v)) {
                t = json_number_value(v);
                if (t < 0) {
                    ef_fail(e, EF_E_INPUT, "%s: %s.throughput.%s: negative "
                            "throughput (expected iterations/s >= 0, or null)",
                            path, where, k);
                    goto fail;
                }
                if (t > 0 && t < CURVE_MIN_TPUT) {
                    ef_fail(e, EF_E_INPUT, "%s: %s.throughput.%s: %g is below "
                            "the minimum of 1e-06 iterations/s (expected at "
                            "least 1e-06, or 0 or null for not runnable)",
                            path, where, k, t);
                    goto fail;
                }
                if (t > CURVE_MAX_TPUT) {
                    ef_fail(e, EF_E_INPUT, "%s: %s.throughput.%s: %g is above "
                            "the maximum of 1e+09 iterations/s (expected at "
                            "most 1e+09 iterations/s)", path, where, k, t);
                    goto fail;
                }
            } else {
                ef_fail(e, EF_E_INPUT, "%s: %s.throughput.%s: expected a number "
                        "or null, got %s", path, where, k, jsonin_type(v));
                goto fail;
            }
            cr->cell[lv] = t;
            cr->measured[lv] = 1;
        }
    }
    json_decref(root);
    if (finish_model(m, 1, e) != EF_OK) {
        curve_model_free(m);
        return EF_ERR;
    }
    return EF_OK;
fail:
    json_decref(root);
    curve_model_free(m);
    return EF_ERR;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int valid_model_name(const char *s, size_t n)
{
    if (n == 0 || n > 63)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
            return 0;
    }
    return 1;
}

int curve_set_load(curve_set *cs, const char *dir, ef_err *e)
{
    memset(cs, 0, sizeof *cs);
    DIR *d = opendir(dir);
    if (!d)
        return ef_fail(e, EF_E_INPUT, "%s: cannot open curve directory: %s",
                       dir, strerror(errno));
    char **names = NULL;
    int nn = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        int csv = l > 4 && strcmp(de->d_name + l - 4, ".csv") == 0;
        int js = l > 5 && strcmp(de->d_name + l - 5, ".json") == 0;
        if (!csv && !js)
            continue;
        if (nn == cap) {
            cap = cap ? cap * 2 : 16;
            names = ef_realloc(names, (size_t)cap * sizeof *names);
        }
        names[nn++] = ef_strdup(de->d_name);
    }
    closedir(d);
    int rc = EF_OK;
    if (nn == 0) {
        rc = ef_fail(e, EF_E_INPUT, "%s: no curve files (expected one "
                     "MODEL.csv or MODEL.json per model)", dir);
        goto out;
    }
    qsort(names, (size_t)nn, sizeof *names, cmp_name);
    cs->dir = ef_strdup(dir);
    cs->models = ef_calloc((size_t)nn, sizeof *cs->models);
    size_t dl = strlen(dir);
    int slash = dl > 0 && dir[dl - 1] == '/';
    for (int i = 0; i < nn; i++) {
        size_t l = strlen(names[i]);
        int js = strcmp(names[i] + l - 5, ".json") == 0;
        size_t stem = l - (js ? 5 : 4);
        char path[4096], model[64];
        snprintf(path, sizeof path, "%s%s%s", dir, slash ? "" : "/", names[i]);
        if (!valid_model_name(names[i], stem)) {
            rc = ef_fail(e, EF_E_INPUT, "%s: model name must be 1-63 letters, "
                         "digits, '_', '-' or '.'", path);
            goto out;
        }
        memcpy(model, names[i], stem);
        model[stem] = '\0';
        for (int j = 0; j < cs->nmodels; j++)
            if (strcmp(cs->models[j].name, model) == 0) {
                rc = ef_fail(e, EF_E_INPUT, "%s: model \"%s\" is already "
                             "defined by %s (keep one file per model)", path,
                             model, cs->models[j].path);
                goto out;
            }
        char *buf;
        size_t len;
        if (ef_read_file(path, &buf, &len, e) != EF_OK) {
            rc = EF_ERR;
            goto out;
        }
        curve_model *m = &cs->models[cs->nmodels];
        rc = js ? curve_parse_json(m, model, path, buf, len, e)
                : curve_parse_csv(m, model, path, buf, len, e);
        free(buf);
        if (rc != EF_OK)
            goto out;
        cs->nmodels++;
    }
    /* Files are sorted by name, but "a.json" < "a_b.csv" < "a.csv" is not
     * model order; sort models by name for lookups and output. */
    for (int i = 1; i < cs->nmodels; i++)
        for (int j = i; j > 0 && strcmp(cs->models[j - 1].name,
                                        cs->models[j].name) > 0; j--) {
            curve_model t = cs->models[j];
            cs->models[j] = cs->models[j - 1];
            cs->models[j - 1] = t;
        }
out:
    for (int i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    if (rc != EF_OK)
        curve_set_free(cs);
    return rc;
}

int curve_set_load_arg(curve_set *cs, const char *arg, ef_err *e)
{
    struct stat st;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
        return curve_set_load(cs, arg, e);
    if (arg[0] != '\0' && !strchr(arg, '/')) {
        char path[4096];
        snprintf(path, sizeof path, "%s/curves/%s", ef_datadir(), arg);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return curve_set_load(cs, path, e);
    }
    memset(cs, 0, sizeof *cs);
    return ef_fail(e, EF_E_INPUT, "%s: not a directory of curves, nor a "
                   "bundled set (A100, T4)", arg);
}

const curve_model *curve_find_model(const curve_set *cs, const char *name)
{
    for (int i = 0; i < cs->nmodels; i++)
        if (strcmp(cs->models[i].name, name) == 0)
            return &cs->models[i];
    return NULL;
}

const curve_row *curve_find_row(const curve_model *m, long batch)
{
    for (int i = 0; i < m->nrows; i++)
        if (m->rows[i].batch == batch)
            return &m->rows[i];
    return NULL;
}

const char *curve_list_models(const curve_set *cs, char *dst, size_t len)
{
    size_t o = 0;
    dst[0] = '\0';
    for (int i = 0; i < cs->nmodels && o < len; i++)
        o += (size_t)snprintf(dst + o, len - o, "%s%s", i ? ", " : "",
                              cs->models[i].name);
    return dst;
}

const char *curve_list_batches(const curve_model *m, char *dst, size_t len)
{
    size_t o = 0;
    dst[0] = '\0';
    for (int i = 0; i < m->nrows && o < len; i++)
        o += (size_t)snprintf(dst + o, len - o, "%s%ld", i ? ", " : "",
                              m->rows[i].batch);
    return dst;
}
