/* goodput.c: the goodput model of batch-adaptive jobs (see goodput.h). */
#include "simulator/goodput.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/csv.h"
#include "common/util.h"

#define GP_BATCHES 50

/* ------------------------------------------------------------------ */
/* reading */

/* A table read by column names: cols[k][row]; 'key' (if keycol >= 0)
 * keeps column keycol as text instead of a number. */
typedef struct table {
    int n, cap, ncol;
    double **cols;
    char **key;
} table;

static void table_free(table *t)
{
    for (int k = 0; k < t->ncol; k++)
        free(t->cols[k]);
    free(t->cols);
    if (t->key) /* a failed row may hold a key at index n */
        for (int i = 0; i < t->n + (t->n < t->cap); i++)
            free(t->key[i]);
    free(t->key);
    memset(t, 0, sizeof *t);
}

static int read_table(const char *path, const char *const *names, int ncol,
                      int keycol, int min_rows, table *t, ef_err *e)
{
    memset(t, 0, sizeof *t);
    char *buf;
    size_t len;
    if (ef_read_file(path, &buf, &len, e) != EF_OK)
        return EF_ERR;
    csv_reader r;
    csv_row row = {0};
    csv_open(&r, path, buf, len);
    int idx[8], rc = EF_OK, got;
    ef_assert(ncol <= 8);
    t->ncol = ncol;
    t->cols = ef_calloc((size_t)ncol, sizeof *t->cols);
    if ((got = csv_next(&r, &row, e)) != 1) {
        rc = got == 0 ? ef_fail(e, EF_E_INPUT, "%s: empty file (expected a "
                                "header line)", path)
                      : EF_ERR;
        goto out;
    }
    for (int k = 0; k < ncol; k++) {
        idx[k] = -1;
        for (int f = 0; f < row.nf; f++)
            if (strcmp(row.f[f], names[k]) == 0)
                idx[k] = f;
        if (idx[k] < 0) {
            rc = ef_fail(e, EF_E_INPUT, "%s:1:1: no column \"%s\" in the "
                         "header", path, names[k]);
            goto out;
        }
    }
    while ((got = csv_next(&r, &row, e)) == 1) {
        if (t->n == t->cap) {
            int old = t->cap;
            t->cap = t->cap ? 2 * t->cap : 64;
            for (int k = 0; k < ncol; k++)
                t->cols[k] = ef_realloc(t->cols[k],
                                        (size_t)t->cap * sizeof(double));
            if (keycol >= 0) {
                t->key = ef_realloc(t->key, (size_t)t->cap * sizeof(char *));
                memset(t->key + old, 0,
                       (size_t)(t->cap - old) * sizeof(char *));
            }
        }
        for (int k = 0; k < ncol; k++) {
            if (idx[k] >= row.nf) {
                rc = ef_fail(e, EF_E_INPUT, "%s:%ld: %d fields, expected at "
                             "least %d", path, row.line, row.nf, idx[k] + 1);
                goto out;
            }
            const char *f = row.f[idx[k]];
            char q[64];
            if (k == keycol) {
                size_t l = strlen(f);
                int ok = l >= 1 && l <= 9;
                for (size_t c = 0; ok && c < l; c++)
                    ok = f[c] >= '1' && f[c] <= '9';
                if (!ok) {
                    rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: expected "
                                 "GPUs per node as digits 1-9, got \"%s\"",
                                 path, row.line, row.col[idx[k]], names[k],
                                 ef_quote(f, q, sizeof q));
                    goto out;
                }
                t->key[t->n] = ef_strdup(f);
                t->cols[k][t->n] = 0;
                continue;
            }
            double v;
            ef_numerr ne = ef_parse_double(f, &v);
            /* gradient statistics may be 0; times, sizes and progress
             * must be positive */
            int nonneg = strcmp(names[k], "grad_sqr") == 0 ||
                         strcmp(names[k], "grad_var") == 0 ||
                         strcmp(names[k], "sync_time") == 0;
            if (ne != EF_NUM_OK || (nonneg ? v < 0 : v <= 0)) {
                rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: expected a %s "
                             "number, got \"%s\"", path, row.line,
                             row.col[idx[k]], names[k],
                             nonneg ? "finite, non-negative"
                                    : "finite, positive",
                             ef_quote(f, q, sizeof q));
                goto out;
            }
            /* a per-GPU batch size: whole samples, at most the largest
             * batch a validation file may name (a tiny one made the
             * largest batch over it overflow an int) */
            if (strcmp(names[k], "local_bsz") == 0 &&
                (v != floor(v) || v < 1 || v > (double)(1 << 24))) {
                rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: expected a "
                             "whole number of samples from 1 to 16777216, "
                             "got \"%s\"", path, row.line, row.col[idx[k]],
                             names[k], ef_quote(f, q, sizeof q));
                goto out;
            }
            t->cols[k][t->n] = v;
        }
        t->n++;
    }
    if (got < 0)
        rc = EF_ERR;
    else if (t->n < min_rows)
        rc = ef_fail(e, EF_E_INPUT, "%s: %d data rows (expected at least "
                     "%d)", path, t->n, min_rows);
out:
    csv_row_free(&row);
    free(buf);
    if (rc != EF_OK)
        table_free(t);
    return rc;
}

/* ------------------------------------------------------------------ */
/* fitting */

/* Least squares y = a + b x over n points; a, b clamped at >= 0 (with
 * b = 0 the intercept is the mean). */
static void fit_line(const double *x, const double *y, int n, double *a,
                     double *b)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        sx += x[i];
        sy += y[i];
        sxx += x[i] * x[i];
        sxy += x[i] * y[i];
    }
    *a = 0;
    *b = 0;
    if (n == 0)
        return;
    double den = n * sxx - sx * sx;
    if (den > 0) {
        *b = (n * sxy - sx * sy) / den;
        *a = (sy - *b * sx) / n;
    }
    if (den <= 0 || *b < 0) {
        *b = 0;
        *a = sy / n;
    } else if (*a < 0) {
        *a = 0;
        *b = sxx > 0 ? sxy / sxx : 0;
        if (*b < 0)
            *b = 0;
    }
}

static double network(const gp_app *a, int nodes, int replicas)
{
    if (replicas <= 1)
        return 0;
    if (nodes <= 1)
        return a->ar + a->br * (replicas - 2);
    return a->an + a->bn * (replicas - 2);
}

static double combine(double c, double n, double g)
{
    if (n <= 0)
        return c;
    return pow(pow(c, g) + pow(n, g), 1.0 / g);
}

double gp_step_fitted(const gp_app *a, int nodes, int replicas,
                      double local, double *sync)
{
    double c = a->ac + a->bc * local;
    double n = network(a, nodes, replicas);
    double st = combine(c, n, a->gamma);
    if (sync)
        *sync = st - c > 0 ? st - c : 0;
    return st;
}

/* Rows of all tables as (nodes, replicas, local, step, sync). */
typedef struct obs {
    int nodes, replicas;
    double local, step, sync;
} obs;

static void fit(gp_app *a, const obs *o, int n)
{
    double *x = ef_malloc((size_t)(n ? n : 1) * sizeof *x);
    double *y = ef_malloc((size_t)(n ? n : 1) * sizeof *y);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (o[i].replicas == 1) {
            x[m] = o[i].local;
            y[m++] = o[i].step;
        }
    fit_line(x, y, m, &a->ac, &a->bc);
    m = 0;
    for (int i = 0; i < n; i++)
        if (o[i].nodes == 1 && o[i].replicas > 1) {
            x[m] = o[i].replicas - 2;
            y[m++] = o[i].sync;
        }
    fit_line(x, y, m, &a->ar, &a->br);
    m = 0;
    for (int i = 0; i < n; i++)
        if (o[i].nodes > 1) {
            x[m] = o[i].replicas - 2;
            y[m++] = o[i].sync;
        }
    fit_line(x, y, m, &a->an, &a->bn);
    free(x);
    free(y);
    double best = INFINITY;
    a->gamma = 1;
    for (int k = 0; k <= 180; k++) {
        double g = 1 + 0.05 * k, err = 0;
        for (int i = 0; i < n; i++) {
            if (o[i].replicas == 1)
                continue;
            double c = a->ac + a->bc * o[i].local;
            double p = combine(c, network(a, o[i].nodes, o[i].replicas), g);
            double d = log(p > 1e-12 ? p : 1e-12) - log(o[i].step);
            err += d * d;
        }
        if (err < best - 1e-15) {
            best = err;
            a->gamma = g;
        }
    }
}

/* ------------------------------------------------------------------ */
/* loading */

static int cmp_place(const void *x, const void *y)
{
    return strcmp(((const gp_place *)x)->key, ((const gp_place *)y)->key);
}

static int cmp_char(const void *x, const void *y)
{
    return *(const char *)x - *(const char *)y;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

void gp_app_free(gp_app *a)
{
    for (int i = 0; i < a->nplace; i++) {
        free(a->place[i].bsz);
        free(a->place[i].step);
        free(a->place[i].sync);
    }
    free(a->place);
    free(a->vbatch);
    free(a->vsqr);
    free(a->vvar);
    free(a->progress);
    memset(a, 0, sizeof *a);
}

/* Sort the rows of one placement by local batch (insertion: few rows). */
static void sort_place(gp_place *p)
{
    for (int i = 1; i < p->n; i++)
        for (int k = i; k > 0 && p->bsz[k] < p->bsz[k - 1]; k--) {
            double t = p->bsz[k];
            p->bsz[k] = p->bsz[k - 1];
            p->bsz[k - 1] = t;
            t = p->step[k];
            p->step[k] = p->step[k - 1];
            p->step[k - 1] = t;
            t = p->sync[k];
            p->sync[k] = p->sync[k - 1];
            p->sync[k - 1] = t;
        }
}

static gp_place *find_place(const gp_app *a, const char *key)
{
    gp_place probe;
    snprintf(probe.key, sizeof probe.key, "%s", key);
    return bsearch(&probe, a->place, (size_t)a->nplace, sizeof *a->place,
                   cmp_place);
}

static int load_placements(gp_app *a, const char *dir, obs **o, int *no,
                           ef_err *e)
{
    static const char *const pn[] = {"placement", "local_bsz", "step_time",
                                     "sync_time"};
    static const char *const sn[] = {"num_nodes", "num_replicas",
                                     "local_bsz", "step_time", "sync_time"};
    char path[4096];
    table t;
    snprintf(path, sizeof path, "%s/%s/placements.csv", dir, a->name);
    if (read_table(path, pn, 4, 0, 1, &t, e) != EF_OK)
        return EF_ERR;
    *o = ef_malloc((size_t)t.n * sizeof **o);
    a->min_local = INFINITY;
    a->max_local = 0;
    for (int i = 0; i < t.n; i++) {
        char key[12];
        snprintf(key, sizeof key, "%s", t.key[i]);
        size_t l = strlen(key);
        qsort(key, l, 1, cmp_char);
        int reps = 0;
        for (size_t c = 0; c < l; c++)
            reps += key[c] - '0';
        (*o)[i] = (obs){(int)l, reps, t.cols[1][i], t.cols[2][i],
                        t.cols[3][i]};
        if (t.cols[1][i] < a->min_local)
            a->min_local = t.cols[1][i];
        if (t.cols[1][i] > a->max_local)
            a->max_local = t.cols[1][i];
        gp_place *p = NULL;
        for (int k = 0; k < a->nplace; k++)
            if (strcmp(a->place[k].key, key) == 0)
                p = &a->place[k];
        if (!p) {
            a->place = ef_realloc(a->place, (size_t)(a->nplace + 1) *
                                                sizeof *a->place);
            p = &a->place[a->nplace++];
            memset(p, 0, sizeof *p);
            snprintf(p->key, sizeof p->key, "%s", key);
        }
        p->bsz = ef_realloc(p->bsz, (size_t)(p->n + 1) * sizeof(double));
        p->step = ef_realloc(p->step, (size_t)(p->n + 1) * sizeof(double));
        p->sync = ef_realloc(p->sync, (size_t)(p->n + 1) * sizeof(double));
        p->bsz[p->n] = t.cols[1][i];
        p->step[p->n] = t.cols[2][i];
        p->sync[p->n] = t.cols[3][i];
        p->n++;
    }
    *no = t.n;
    table_free(&t);
    for (int k = 0; k < a->nplace; k++)
        sort_place(&a->place[k]);
    qsort(a->place, (size_t)a->nplace, sizeof *a->place, cmp_place);

    snprintf(path, sizeof path, "%s/%s/scalability.csv", dir, a->name);
    if (read_table(path, sn, 5, -1, 0, &t, e) != EF_OK)
        return EF_ERR;
    *o = ef_realloc(*o, (size_t)(*no + t.n) * sizeof **o);
    for (int i = 0; i < t.n; i++) {
        double nd = t.cols[0][i], rp = t.cols[1][i];
        if (nd != floor(nd) || rp != floor(rp) || rp < nd || rp > 4096) {
            ef_fail(e, EF_E_INPUT, "%s: data row %d: num_nodes %g and "
                    "num_replicas %g (expected integers, replicas >= "
                    "nodes)", path, i + 1, nd, rp);
            table_free(&t);
            return EF_ERR;
        }
        (*o)[(*no)++] = (obs){(int)nd, (int)rp, t.cols[2][i], t.cols[3][i],
                              t.cols[4][i]};
    }
    table_free(&t);
    return EF_OK;
}

static int load_validation(gp_app *a, const char *dir, ef_err *e)
{
    static const char *const vn[] = {"progress", "grad_sqr", "grad_var"};
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, a->name);
    DIR *d = opendir(path);
    if (!d)
        return ef_fail(e, EF_E_INPUT, "%s: cannot open the directory", path);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        const char *nm = de->d_name;
        size_t l = strlen(nm);
        if (strncmp(nm, "validation-", 11) != 0 || l < 16 ||
            strcmp(nm + l - 4, ".csv") != 0)
            continue;
        char num[32];
        if (l - 15 >= sizeof num)
            continue;
        memcpy(num, nm + 11, l - 15);
        num[l - 15] = 0;
        int64_t b;
        if (ef_parse_i64(num, 1, 1 << 24, &b) != EF_NUM_OK)
            continue;
        a->vbatch = ef_realloc(a->vbatch, (size_t)(a->nval + 1) *
                                              sizeof *a->vbatch);
        a->vbatch[a->nval++] = (double)b;
    }
    closedir(d);
    if (a->nval == 0)
        return ef_fail(e, EF_E_INPUT, "%s: no validation-<batch>.csv file",
                       path);
    qsort(a->vbatch, (size_t)a->nval, sizeof *a->vbatch, cmp_double);
    table *t = ef_calloc((size_t)a->nval, sizeof *t);
    int rc = EF_OK;
    a->nepoch = 0;
    for (int v = 0; v < a->nval; v++) {
        snprintf(path, sizeof path, "%s/%s/validation-%.0f.csv", dir,
                 a->name, a->vbatch[v]);
        if (read_table(path, vn, 3, -1, 1, &t[v], e) != EF_OK) {
            rc = EF_ERR;
            break;
        }
        if (v == 0 || t[v].n < a->nepoch)
            a->nepoch = t[v].n;
    }
    if (rc == EF_OK) {
        int E = a->nepoch;
        a->vsqr = ef_malloc((size_t)(a->nval * E) * sizeof *a->vsqr);
        a->vvar = ef_malloc((size_t)(a->nval * E) * sizeof *a->vvar);
        a->progress = ef_malloc((size_t)E * sizeof *a->progress);
        for (int v = 0; v < a->nval; v++)
            for (int k = 0; k < E; k++) {
                a->vsqr[v * E + k] = t[v].cols[1][k];
                a->vvar[v * E + k] = t[v].cols[2][k];
            }
        for (int k = 0; k < E; k++) {
            a->progress[k] = t[0].cols[0][k];
            if (k > 0 && a->progress[k] <= a->progress[k - 1]) {
                snprintf(path, sizeof path, "%s/%s/validation-%.0f.csv", dir,
                         a->name, a->vbatch[0]);
                rc = ef_fail(e, EF_E_INPUT, "%s: data row %d: progress "
                             "%g does not grow", path, k + 1,
                             a->progress[k]);
                break;
            }
        }
        a->init_batch = a->vbatch[0];
        a->max_batch = a->vbatch[a->nval - 1];
    }
    for (int v = 0; v < a->nval; v++)
        table_free(&t[v]);
    free(t);
    return rc;
}

int gp_app_load(gp_app *a, const char *dir, const char *name, ef_err *e)
{
    memset(a, 0, sizeof *a);
    if (strlen(name) >= sizeof a->name || strchr(name, '/'))
        return ef_fail(e, EF_E_INPUT, "%s: not an application name", name);
    snprintf(a->name, sizeof a->name, "%s", name);
    obs *o = NULL;
    int no = 0;
    if (load_placements(a, dir, &o, &no, e) != EF_OK) {
        free(o);
        return EF_ERR;
    }
    int ones = 0;
    for (int i = 0; i < no; i++)
        ones += o[i].replicas == 1;
    if (ones < 2) {
        free(o);
        return ef_fail(e, EF_E_INPUT, "%s/%s/placements.csv: %d one-GPU "
                       "rows (placement 1); at least 2 are needed to fit "
                       "the compute time", dir, name, ones);
    }
    fit(a, o, no);
    free(o);
    return load_validation(a, dir, e);
}

/* ------------------------------------------------------------------ */
/* the model */

static double interp(const double *x, const double *y, int n, double v)
{
    if (v <= x[0])
        return y[0];
    if (v >= x[n - 1])
        return y[n - 1];
    int k = 1;
    while (x[k] < v)
        k++;
    double f = (v - x[k - 1]) / (x[k] - x[k - 1]);
    return y[k - 1] + f * (y[k] - y[k - 1]);
}

void gp_step(const gp_app *a, const int *per_node, int nn, double local,
             double *step, double *sync)
{
    char key[12];
    int reps = 0, ok = nn >= 1 && nn <= 9;
    for (int i = 0; i < nn; i++) {
        reps += per_node[i];
        ok = ok && per_node[i] >= 1 && per_node[i] <= 9;
        if (ok)
            key[i] = (char)('0' + per_node[i]);
    }
    const gp_place *p = NULL;
    if (ok) {
        key[nn] = 0;
        qsort(key, (size_t)nn, 1, cmp_char);
        p = find_place(a, key);
    }
    if (p) {
        *step = interp(p->bsz, p->step, p->n, local);
        *sync = interp(p->bsz, p->sync, p->n, local);
        if (*sync > *step)
            *sync = *step;
        return;
    }
    *step = gp_step_fitted(a, nn, reps, local, sync);
}

double gp_gain(const gp_app *a, double batch, int epoch)
{
    int E = a->nepoch;
    if (epoch < 0)
        epoch = 0;
    if (epoch >= E)
        epoch = E - 1;
    double sqr, var;
    if (a->nval == 1 || batch <= a->vbatch[0]) {
        sqr = a->vsqr[epoch];
        var = a->vvar[epoch];
    } else if (batch >= a->vbatch[a->nval - 1]) {
        sqr = a->vsqr[(a->nval - 1) * E + epoch];
        var = a->vvar[(a->nval - 1) * E + epoch];
    } else {
        int k = 1;
        while (a->vbatch[k] < batch)
            k++;
        double f = (batch - a->vbatch[k - 1]) /
                   (a->vbatch[k] - a->vbatch[k - 1]);
        sqr = a->vsqr[(k - 1) * E + epoch] +
              f * (a->vsqr[k * E + epoch] - a->vsqr[(k - 1) * E + epoch]);
        var = a->vvar[(k - 1) * E + epoch] +
              f * (a->vvar[k * E + epoch] - a->vvar[(k - 1) * E + epoch]);
    }
    double scale = batch / a->init_batch;
    double den = var / scale + sqr;
    if (den <= 0 || var + sqr <= 0)
        return 1;
    return (var + sqr) / den;
}

int gp_epoch(const gp_app *a, double progress)
{
    int k = 0;
    while (k < a->nepoch - 1 && a->progress[k] <= progress)
        k++;
    return k;
}

double gp_goal(const gp_app *a)
{
    return a->progress[a->nepoch - 1];
}

int gp_best(const gp_app *a, const int *per_node, int nn, int epoch,
            gp_config *out)
{
    memset(out, 0, sizeof *out);
    int r = 0;
    for (int i = 0; i < nn; i++)
        r += per_node[i];
    if (r <= 0)
        return 0;
    double lo = a->init_batch > r * a->min_local ? a->init_batch
                                                   : r * a->min_local;
    double hi = a->max_batch;
    if (lo > hi + 1e-9)
        return 0;
    int found = 0;
    for (int k = 0; k < GP_BATCHES; k++) {
        double want = lo * pow(hi / lo, (double)k / (GP_BATCHES - 1));
        int acc = (int)ceil(want / (r * a->max_local) - 1e-9) - 1;
        if (acc < 0)
            acc = 0;
        double local = floor(want / (r * (acc + 1)) + 1e-9);
        if (local < a->min_local)
            local = a->min_local;
        if (local > a->max_local)
            local = a->max_local;
        double batch = local * r * (acc + 1);
        if (batch > hi + 1e-9)
            continue;
        double st, sy;
        gp_step(a, per_node, nn, local, &st, &sy);
        double sec = st + acc * (st - sy);
        if (sec <= 0)
            continue;
        double gput = gp_gain(a, batch, epoch) / sec;
        if (!found || gput > out->goodput * (1 + 1e-12)) {
            found = 1;
            *out = (gp_config){batch, local, acc, sec, gput, batch / sec};
        }
    }
    return found;
}

int gp_best_packed(const gp_app *a, int g, int gpn, int epoch,
                   gp_config *out)
{
    int per[64], nn = 0;
    if (gpn < 1)
        gpn = 1;
    if (g <= 0 || (g + gpn - 1) / gpn > 64) {
        memset(out, 0, sizeof *out);
        return 0;
    }
    while (g > 0) {
        per[nn++] = g < gpn ? g : gpn;
        g -= per[nn - 1];
    }
    return gp_best(a, per, nn, epoch, out);
}
