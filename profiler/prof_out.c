/* prof_out.c: the curve CSV and the provenance JSON (see prof.h). */
#include "profiler/prof.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

int prof_write_csv(const prof_curve *c, const char *path, ef_err *e)
{
    ef_buf b = {0};
    ef_buf_put(&b, "global_batch_size");
    for (int l = 0; l < c->nlevels; l++)
        ef_buf_printf(&b, ",%d", 1 << l);
    ef_buf_put(&b, "\n");
    for (int r = 0; r < c->nrows; r++) {
        ef_buf_printf(&b, "%ld", c->batch[r]);
        for (int l = 0; l < c->nlevels; l++) {
            prof_src s = c->src[r][l];
            if ((s == PROF_SRC_MEASURED || s == PROF_SRC_MODELLED) &&
                c->cell[r][l] > 0)
                ef_buf_printf(&b, ",%.9g", c->cell[r][l]);
            else
                ef_buf_put(&b, ",");
        }
        ef_buf_put(&b, "\n");
    }
    int rc = ef_write_file_atomic(path, b.s, b.n, e);
    free(b.s);
    return rc;
}

/* Round to 9 significant digits so the file does not carry noise digits
 * (and reads the same whatever the last bits were). */
static json_t *num(double v)
{
    char s[64];
    snprintf(s, sizeof s, "%.9g", v);
    return json_real(strtod(s, NULL));
}

/* Write 'root' (consumed) to 'path': keys sorted, one trailing newline. */
static int dump(json_t *root, const char *path, ef_err *e)
{
    char *s = json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(1) |
                                   JSON_REAL_PRECISION(9));
    json_decref(root);
    if (!s)
        return ef_fail(e, EF_E_INTERNAL, "%s: cannot format the JSON", path);
    size_t n = strlen(s);
    char *t = ef_malloc(n + 2);
    memcpy(t, s, n);
    t[n] = '\n';
    t[n + 1] = '\0';
    free(s);
    int rc = ef_write_file_atomic(path, t, n + 1, e);
    free(t);
    return rc;
}

static json_t *param_list(const int *flags)
{
    json_t *a = json_array();
    for (int j = 0; j < PROF_NPARAMS; j++)
        if (flags[j])
            json_array_append_new(a, json_string(prof_param_name(j)));
    return a;
}

/* Gbit/s from seconds per byte; null when 0 s/byte (no limit found). */
static json_t *gbps(double s_per_byte)
{
    return s_per_byte > 0 ? num(8.0 / s_per_byte / 1e9) : json_null();
}

int prof_write_json(const prof_curve *c, const prof_model *m,
                    const prof_fit_info *info, const prof_provenance *pv,
                    const char *path, ef_err *e)
{
    json_t *root = json_object();
    json_t *cells = json_array();
    for (int r = 0; r < c->nrows; r++)
        for (int l = 0; l < c->nlevels; l++) {
            json_t *x = json_object();
            prof_src s = c->src[r][l];
            json_object_set_new(x, "batch_size", json_integer(c->batch[r]));
            json_object_set_new(x, "gpus", json_integer(1 << l));
            json_object_set_new(x, "source", json_string(prof_src_name(s)));
            json_object_set_new(x, "iterations_per_second",
                                (s == PROF_SRC_MEASURED ||
                                 s == PROF_SRC_MODELLED) && c->cell[r][l] > 0
                                    ? num(c->cell[r][l])
                                    : json_null());
            if (s == PROF_SRC_MEASURED) {
                const prof_spread *sp = &c->spread[r][l];
                prof_obs o = {c->batch[r], 1 << l, c->cell[r][l]};
                json_object_set_new(x, "model_relative_error",
                                    num(prof_rel_err(m, &o)));
                if (sp->repeats > 0) {
                    json_object_set_new(x, "repeats",
                                        json_integer(sp->repeats));
                    json_object_set_new(x, "min", num(sp->min));
                    json_object_set_new(x, "max", num(sp->max));
                    json_object_set_new(x, "relative_spread",
                                        num(sp->rel_spread));
                    json_object_set_new(x, "busbw_gbps",
                                        sp->busbw_gbps > 0
                                            ? num(sp->busbw_gbps)
                                            : json_null());
                }
            }
            json_array_append_new(cells, x);
        }
    json_object_set_new(root, "cells", cells);

    json_t *fit = json_object();
    json_t *par = json_object();
    for (int j = 0; j < PROF_NPARAMS; j++)
        json_object_set_new(par, prof_param_name(j), num(m->p[j]));
    json_object_set_new(par, "intra_node_gbps", gbps(m->p[PROF_P_INTRA]));
    json_object_set_new(par, "inter_node_gbps", gbps(m->p[PROF_P_INTER]));
    json_object_set_new(fit, "parameters", par);
    json_object_set_new(fit, "latency_steps",
                        json_string(m->latency == PROF_LAT_RING ? "2(k-1)"
                                                                : "log2(k)"));
    json_object_set_new(fit, "fitted", param_list(info->fitted));
    json_object_set_new(fit, "given", param_list(info->given));
    json_object_set_new(fit, "missing", param_list(info->missing));
    json_object_set_new(fit, "cells_fitted", json_integer(info->nobs));
    json_object_set_new(fit, "median_relative_error",
                        num(info->median_rel_err));
    json_object_set_new(fit, "max_relative_error", num(info->max_rel_err));
    json_object_set_new(fit, "threshold", num(c->threshold));
    json_object_set_new(fit, "accepted", json_boolean(c->accepted));
    json_object_set_new(fit, "reason", c->reason[0] ? json_string(c->reason)
                                                    : json_null());
    json_object_set_new(root, "fit", fit);

    json_object_set_new(root, "format", json_string("efplan-profile"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "origin", json_string(pv->origin));
    json_object_set_new(root, "gpus_per_node", json_integer(m->gpus_per_node));
    json_object_set_new(root, "gradient_bytes", num(m->bytes));

    json_t *mod = json_object();
    json_object_set_new(mod, "name", json_string(pv->model));
    json_object_set_new(mod, "preset", json_boolean(pv->preset));
    json_object_set_new(mod, "params", num(pv->params));
    json_object_set_new(mod, "flops_per_sample", num(pv->flops_per_sample));
    json_object_set_new(mod, "bytes_per_param", num(pv->bytes_per_param));
    json_object_set_new(root, "model", mod);

    if (pv->gpu_name) {
        json_t *g = json_object();
        json_object_set_new(g, "name", json_string(pv->gpu_name));
        json_object_set_new(g, "driver_version",
                            json_integer(pv->driver_version));
        json_object_set_new(g, "cuda_runtime_version",
                            json_integer(pv->runtime_version));
        char v[32];
        snprintf(v, sizeof v, "%d.%d.%d", pv->nccl_version / 10000,
                 pv->nccl_version / 100 % 100, pv->nccl_version % 100);
        json_object_set_new(g, "nccl_version", json_string(v));
        json_object_set_new(g, "visible", json_integer(pv->gpus_visible));
        json_object_set_new(root, "gpu", g);
        json_t *ms = json_object();
        json_object_set_new(ms, "repeats", json_integer(pv->repeats));
        json_object_set_new(ms, "warmup_steps", json_integer(pv->warmup));
        json_object_set_new(ms, "steps_per_repeat", json_integer(pv->steps));
        json_object_set_new(root, "measurement", ms);
    } else {
        json_object_set_new(root, "gpu", json_null());
        json_object_set_new(root, "measurement", json_null());
    }

    return dump(root, path, e);
}

int prof_write_curve_json(const prof_curve *c, const char *model,
                          const char *path, ef_err *e)
{
    json_t *root = json_object();
    json_t *rows = json_array();
    json_object_set_new(root, "model", json_string(model));
    for (int r = 0; r < c->nrows; r++) {
        json_t *row = json_object(), *tp = json_object();
        json_object_set_new(row, "batch_size", json_integer(c->batch[r]));
        for (int l = 0; l < c->nlevels; l++) {
            char k[16];
            prof_src s = c->src[r][l];
            snprintf(k, sizeof k, "%d", 1 << l);
            json_object_set_new(tp, k, (s == PROF_SRC_MEASURED ||
                                        s == PROF_SRC_MODELLED) &&
                                               c->cell[r][l] > 0
                                           ? num(c->cell[r][l])
                                           : json_null());
        }
        json_object_set_new(row, "throughput", tp);
        json_array_append_new(rows, row);
    }
    json_object_set_new(root, "rows", rows);
    return dump(root, path, e);
}
