/* prof.c: model presets, the step-time model and its fit (see prof.h). */
#include "profiler/prof.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/*
 * Presets. FLOPs are forward FLOPs per sample counting a multiply-add as 2
 * (training does about 3x this: forward + backward). Sources:
 * - resnet50, vgg16, inception3: parameter counts and multiply-accumulates
 *   per image from the torchvision model documentation
 *   (pytorch.org/vision/stable/models.html: 25,557,032 params 4.09 G;
 *   138,357,544 params 15.47 G; 27,161,264 params 5.71 G at 299x299),
 *   whose "GFLOPS" column counts multiply-accumulates.
 * - resnet50_cifar10: the same ResNet-50 with a 10-way classifier
 *   (25,557,032 - 2,049,000 + 20,490 parameters) on 32x32 images: 4.09 G
 *   MACs x (32/224)^2. An assumption about the artifact's demo model.
 * - bert: BERT-base, 110 M parameters (Devlin et al. 2019, Table 1 of
 *   "BERT: Pre-training of Deep Bidirectional Transformers"); FLOPs by the
 *   2 x parameters per token rule (Kaplan et al. 2020, "Scaling Laws for
 *   Neural Language Models") at a sequence length of 128 tokens.
 * - gpt2: GPT-2 small, 124 M parameters (Radford et al. 2019, the 117 M
 *   model as counted by the released checkpoint); 2 x parameters per
 *   token at its context of 1024 tokens.
 * - deepspeech2: the DeepSpeech2 of deepspeech.pytorch (two 2-D
 *   convolutions, five bidirectional LSTMs of 1024 units, 29 outputs; the
 *   architecture is Amodei et al. 2016): 86.6 M parameters counted from
 *   those layers; about 97 M MACs per output frame at 50 frames per
 *   second of audio (stride 2 over 10 ms frames), for 10 s of audio.
 */
static const prof_preset presets[] = {
    {"bert", 110e6, 2.0 * 110e6 * 128, "sequence of 128 tokens",
     "BERT-base (Devlin et al. 2019); FLOPs = 2 x params x tokens "
     "(Kaplan et al. 2020)"},
    {"deepspeech2", 86.6e6, 2.0 * 97e6 * 500, "10 s of audio (500 frames)",
     "deepspeech.pytorch DeepSpeech2 (Amodei et al. 2016): 2 conv + 5 "
     "BiLSTM(1024); params and MACs counted from the layers"},
    {"gpt2", 124e6, 2.0 * 124e6 * 1024, "sequence of 1024 tokens",
     "GPT-2 small (Radford et al. 2019); FLOPs = 2 x params x tokens "
     "(Kaplan et al. 2020)"},
    {"inception3", 27161264, 2.0 * 5.71e9, "299x299 image",
     "torchvision inception_v3: 27,161,264 params, 5.71 GMAC"},
    {"resnet50", 25557032, 2.0 * 4.09e9, "224x224 image",
     "torchvision resnet50: 25,557,032 params, 4.09 GMAC"},
    {"resnet50_cifar10", 23528522, 2.0 * 4.09e9 * (32.0 * 32) / (224 * 224),
     "32x32 image",
     "torchvision resnet50 with a 10-way head, MACs scaled to 32x32 "
     "(assumed)"},
    {"vgg16", 138357544, 2.0 * 15.47e9, "224x224 image",
     "torchvision vgg16: 138,357,544 params, 15.47 GMAC"},
};
#define NPRESETS ((int)(sizeof presets / sizeof presets[0]))

const prof_preset *prof_presets(int *n)
{
    *n = NPRESETS;
    return presets;
}

const prof_preset *prof_preset_find(const char *name)
{
    for (int i = 0; i < NPRESETS; i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

const char *prof_param_name(int p)
{
    static const char *const names[PROF_NPARAMS] = {
        "step_overhead_s", "compute_s_per_sample", "intra_node_s_per_byte",
        "inter_node_s_per_byte", "allreduce_latency_s_per_step"};
    ef_assert(p >= 0 && p < PROF_NPARAMS);
    return names[p];
}

const char *prof_src_name(prof_src s)
{
    switch (s) {
    case PROF_SRC_MEASURED: return "measured";
    case PROF_SRC_MODELLED: return "modelled";
    case PROF_SRC_REFUSED: return "refused";
    default: return "not_runnable";
    }
}

/* The design row of one cell: time = sum x[i] * p[i]. */
static void design(const prof_model *m, long batch, int k,
                   double x[PROF_NPARAMS])
{
    double ring = k > 1 ? 2.0 * (k - 1) / k * m->bytes : 0.0;
    int inside = k <= m->gpus_per_node;
    x[PROF_P_STEP] = 1.0;
    x[PROF_P_SAMPLE] = (double)batch / k;
    x[PROF_P_INTRA] = inside ? ring : 0.0;
    x[PROF_P_INTER] = inside ? 0.0 : ring;
    x[PROF_P_HOP] = k <= 1 ? 0.0
                   : m->latency == PROF_LAT_RING ? 2.0 * (k - 1)
                                                 : log2((double)k);
}

double prof_step_time(const prof_model *m, long batch, int gpus)
{
    double x[PROF_NPARAMS], t = 0.0;
    design(m, batch, gpus, x);
    for (int i = 0; i < PROF_NPARAMS; i++)
        t += x[i] * m->p[i];
    return t;
}

double prof_tput(const prof_model *m, long batch, int gpus)
{
    double t = prof_step_time(m, batch, gpus);
    return t > 0 ? 1.0 / t : 0.0;
}

double prof_rel_err(const prof_model *m, const prof_obs *o)
{
    return fabs(prof_tput(m, o->batch, o->gpus) - o->tput) / o->tput;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double prof_median(double *v, int n)
{
    ef_assert(n >= 1);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void prof_err_stats_of(double *v, int n, prof_err_stats *s)
{
    s->n = n;
    s->median = n > 0 ? prof_median(v, n) : 0.0; /* sorts v */
    s->worst = n > 0 ? v[n - 1] : 0.0;
}

/*
 * Least squares on the columns 'cols' (a bit set) of the n x PROF_NPARAMS
 * matrix X (row-major) against y, by modified Gram-Schmidt on normalised
 * columns. Returns 0 and the coefficients in c[] (others untouched), or
 * -1 if the columns are (numerically) dependent.
 */
static int lsq(const double *X, const double *y, int n, unsigned cols,
               double c[PROF_NPARAMS])
{
    int idx[PROF_NPARAMS], m = 0;
    for (int j = 0; j < PROF_NPARAMS; j++)
        if (cols & (1u << j))
            idx[m++] = j;
    double *Q = ef_calloc((size_t)n * (size_t)m, sizeof *Q);
    double R[PROF_NPARAMS][PROF_NPARAMS] = {{0}};
    double scale[PROF_NPARAMS], z[PROF_NPARAMS];
    int rc = 0;
    for (int a = 0; a < m; a++) {
        double s = 0;
        for (int i = 0; i < n; i++)
            s += X[i * PROF_NPARAMS + idx[a]] * X[i * PROF_NPARAMS + idx[a]];
        scale[a] = s > 0 ? sqrt(s) : 1.0;
        for (int i = 0; i < n; i++)
            Q[i * m + a] = X[i * PROF_NPARAMS + idx[a]] / scale[a];
    }
    for (int a = 0; a < m && rc == 0; a++) {
        for (int pass = 0; pass < 2; pass++) /* re-orthogonalise once */
            for (int b = 0; b < a; b++) {
                double d = 0;
                for (int i = 0; i < n; i++)
                    d += Q[i * m + b] * Q[i * m + a];
                R[b][a] += d;
                for (int i = 0; i < n; i++)
                    Q[i * m + a] -= d * Q[i * m + b];
            }
        double s = 0;
        for (int i = 0; i < n; i++)
            s += Q[i * m + a] * Q[i * m + a];
        s = sqrt(s);
        if (s < 1e-9) {
            rc = -1;
            break;
        }
        R[a][a] = s;
        for (int i = 0; i < n; i++)
            Q[i * m + a] /= s;
    }
    if (rc == 0) {
        for (int a = 0; a < m; a++) {
            double d = 0;
            for (int i = 0; i < n; i++)
                d += Q[i * m + a] * y[i];
            z[a] = d;
        }
        for (int a = m - 1; a >= 0; a--) {
            double s = z[a];
            for (int b = a + 1; b < m; b++)
                s -= R[a][b] * z[b];
            z[a] = s / R[a][a];
        }
        for (int a = 0; a < m; a++)
            c[idx[a]] = z[a] / scale[a];
    }
    free(Q);
    return rc;
}

int prof_fit(prof_model *m, const int *given, const prof_obs *obs, int n,
             prof_fit_info *info, ef_err *e)
{
    memset(info, 0, sizeof *info);
    if (n <= 0)
        return ef_fail(e, EF_E_INPUT, "no measured cells to fit the model to");
    for (int i = 0; i < n; i++) {
        const prof_obs *o = &obs[i];
        if (o->gpus < 1 || !ef_is_pow2(o->gpus) || o->batch < o->gpus ||
            !(o->tput > 0) || !isfinite(o->tput))
            return ef_fail(e, EF_E_INPUT, "cell %d (batch %ld, %d GPUs, %g "
                           "it/s) cannot be fitted (expected a power-of-two "
                           "GPU count <= batch and a positive throughput)",
                           i, o->batch, o->gpus, o->tput);
    }
    ef_assert(m->gpus_per_node >= 1 && m->bytes > 0);
    /* Weighted rows: each divided by its measured time, so the fit
     * minimises relative errors and the target is 1. */
    double *X = ef_malloc((size_t)n * PROF_NPARAMS * sizeof *X);
    double *y = ef_malloc((size_t)n * sizeof *y);
    double *r = ef_malloc((size_t)n * sizeof *r);
    for (int i = 0; i < n; i++) {
        double t = 1.0 / obs[i].tput;
        design(m, obs[i].batch, obs[i].gpus, &X[i * PROF_NPARAMS]);
        for (int j = 0; j < PROF_NPARAMS; j++)
            X[i * PROF_NPARAMS + j] /= t;
        y[i] = 1.0;
    }
    /* Identifiable parameters: in this order, each one kept if its
     * column adds to the rank of those kept before it. */
    static const int order[PROF_NPARAMS] = {PROF_P_SAMPLE, PROF_P_INTRA,
                                            PROF_P_INTER, PROF_P_STEP,
                                            PROF_P_HOP};
    unsigned kept = 0;
    double tmp[PROF_NPARAMS];
    for (int a = 0; a < PROF_NPARAMS; a++) {
        unsigned with = kept | (1u << order[a]);
        int nonzero = 0;
        for (int i = 0; i < n; i++)
            nonzero |= X[i * PROF_NPARAMS + order[a]] != 0.0;
        if (nonzero && lsq(X, y, n, with, tmp) == 0)
            kept = with;
    }
    /* Fixed parameters move to the right-hand side. */
    for (int j = 0; j < PROF_NPARAMS; j++) {
        if (kept & (1u << j))
            continue;
        if (given && given[j]) {
            info->given[j] = 1;
        } else {
            m->p[j] = 0.0;
            /* step overhead and hop latency default to 0; a missing
             * bandwidth makes the cells that need it unpredictable */
            if (j == PROF_P_INTRA || j == PROF_P_INTER || j == PROF_P_SAMPLE)
                info->missing[j] = 1;
        }
        for (int i = 0; i < n; i++)
            y[i] -= X[i * PROF_NPARAMS + j] * m->p[j];
    }
    /* Non-negative least squares: the best subset solution that is
     * non-negative (the optimum is the unconstrained solution on its own
     * positive set, so trying every subset finds it). */
    double best = INFINITY, bestc[PROF_NPARAMS] = {0};
    for (unsigned s = 1; s < (1u << PROF_NPARAMS); s++) {
        if ((s & ~kept) != 0)
            continue;
        double c[PROF_NPARAMS] = {0};
        if (lsq(X, y, n, s, c) != 0)
            continue;
        int ok = 1;
        for (int j = 0; j < PROF_NPARAMS; j++)
            if ((s & (1u << j)) && c[j] < 0)
                ok = 0;
        if (!ok)
            continue;
        double ssr = 0;
        for (int i = 0; i < n; i++) {
            double d = y[i];
            for (int j = 0; j < PROF_NPARAMS; j++)
                d -= X[i * PROF_NPARAMS + j] * c[j];
            ssr += d * d;
        }
        if (ssr < best * (1 - 1e-12)) {
            best = ssr;
            memcpy(bestc, c, sizeof c);
        }
    }
    for (int j = 0; j < PROF_NPARAMS; j++)
        if (kept & (1u << j)) {
            m->p[j] = bestc[j];
            info->fitted[j] = 1;
        }
    for (int i = 0; i < n; i++)
        r[i] = prof_rel_err(m, &obs[i]);
    prof_err_stats st;
    prof_err_stats_of(r, n, &st);
    info->nobs = n;
    info->max_rel_err = st.worst;
    info->median_rel_err = st.median;
    free(X);
    free(y);
    free(r);
    return EF_OK;
}

void prof_curve_free(prof_curve *c)
{
    free(c->batch);
    free(c->cell);
    free(c->src);
    free(c->spread);
    memset(c, 0, sizeof *c);
}

void prof_fill(prof_curve *c, const prof_model *m, const prof_fit_info *info,
               double threshold, const long *batch, int nbatch,
               int max_gpus, const prof_obs *obs, const prof_spread *spread,
               int nobs)
{
    ef_assert(nbatch >= 1 && max_gpus >= 1 && ef_is_pow2(max_gpus));
    memset(c, 0, sizeof *c);
    c->nrows = nbatch;
    while ((1L << c->nlevels) <= max_gpus)
        c->nlevels++;
    ef_assert(c->nlevels <= CURVE_MAX_LEVELS);
    c->batch = ef_malloc((size_t)nbatch * sizeof *c->batch);
    c->cell = ef_calloc((size_t)nbatch, sizeof *c->cell);
    c->src = ef_calloc((size_t)nbatch, sizeof *c->src);
    c->spread = ef_calloc((size_t)nbatch, sizeof *c->spread);
    c->threshold = threshold;
    c->accepted = info->max_rel_err <= threshold &&
                  !info->missing[PROF_P_SAMPLE];
    if (!c->accepted)
        snprintf(c->reason, sizeof c->reason,
                 "the fitted model is off by up to %.1f%% on the measured "
                 "cells (threshold %.1f%%)", 100 * info->max_rel_err,
                 100 * threshold);
    for (int r = 0; r < nbatch; r++) {
        c->batch[r] = batch[r];
        for (int l = 0; l < c->nlevels; l++) {
            int k = 1 << l;
            int found = -1;
            for (int i = 0; i < nobs; i++)
                if (obs[i].batch == batch[r] && obs[i].gpus == k)
                    found = i;
            if (found >= 0) {
                c->cell[r][l] = obs[found].tput;
                c->src[r][l] = PROF_SRC_MEASURED;
                if (spread)
                    c->spread[r][l] = spread[found];
                continue;
            }
            if (batch[r] < k) {
                c->src[r][l] = PROF_SRC_NONE;
                continue;
            }
            int need = k == 1 ? -1
                       : k <= m->gpus_per_node ? PROF_P_INTRA : PROF_P_INTER;
            if (!c->accepted || (need >= 0 && info->missing[need])) {
                c->src[r][l] = PROF_SRC_REFUSED;
                if (c->accepted && !c->reason[0])
                    snprintf(c->reason, sizeof c->reason,
                             "no measured cell determines the %s bandwidth "
                             "(give it as a parameter)",
                             need == PROF_P_INTRA ? "intra-node"
                                                  : "inter-node");
                continue;
            }
            c->cell[r][l] = prof_tput(m, batch[r], k);
            c->src[r][l] = PROF_SRC_MODELLED;
        }
    }
}

void prof_model_init(prof_model *m, int given[PROF_NPARAMS], double bytes,
                     int gpus_per_node, prof_latency latency,
                     double intra_gbps, double inter_gbps, double latency_us)
{
    memset(m, 0, sizeof *m);
    memset(given, 0, PROF_NPARAMS * sizeof *given);
    m->bytes = bytes;
    m->gpus_per_node = gpus_per_node;
    m->latency = latency;
    if (inter_gbps > 0) {
        m->p[PROF_P_INTER] = 8.0 / (inter_gbps * 1e9);
        given[PROF_P_INTER] = 1;
    }
    if (intra_gbps > 0) {
        m->p[PROF_P_INTRA] = 8.0 / (intra_gbps * 1e9);
        given[PROF_P_INTRA] = 1;
    }
    if (latency_us >= 0) {
        m->p[PROF_P_HOP] = latency_us * 1e-6;
        given[PROF_P_HOP] = 1;
    }
}

int prof_curve_refused(const prof_curve *c)
{
    int n = 0;
    for (int r = 0; r < c->nrows; r++)
        for (int l = 0; l < c->nlevels; l++)
            n += c->src[r][l] == PROF_SRC_REFUSED;
    return n;
}

void prof_table_of(prof_table *t, const curve_model *cm, int fit_gpus)
{
    int maxl = 0;
    memset(t, 0, sizeof *t);
    t->cells = ef_calloc((size_t)cm->nrows * CURVE_MAX_LEVELS + 1,
                         sizeof *t->cells);
    t->fitted = ef_calloc((size_t)cm->nrows * CURVE_MAX_LEVELS + 1,
                          sizeof *t->fitted);
    t->fit = ef_calloc((size_t)cm->nrows * CURVE_MAX_LEVELS + 1,
                       sizeof *t->fit);
    t->batch = ef_calloc((size_t)cm->nrows + 1, sizeof *t->batch);
    t->nbatch = cm->nrows;
    for (int r = 0; r < cm->nrows; r++) {
        const curve_row *row = &cm->rows[r];
        t->batch[r] = row->batch;
        for (int l = 0; l < CURVE_MAX_LEVELS; l++) {
            if (!row->measured[l])
                continue;
            if (l + 1 > maxl)
                maxl = l + 1;
            if (!(row->cell[l] > 0) || (1L << l) > row->batch)
                continue;
            prof_obs o = {row->batch, 1 << l, row->cell[l]};
            int in = (1 << l) <= fit_gpus;
            t->fitted[t->ncells] = in;
            t->cells[t->ncells++] = o;
            if (in)
                t->fit[t->nfit++] = o;
        }
    }
    t->widest = maxl ? 1 << (maxl - 1) : 0;
}

void prof_table_free(prof_table *t)
{
    free(t->cells);
    free(t->fitted);
    free(t->fit);
    free(t->batch);
    memset(t, 0, sizeof *t);
}

void prof_table_errors(const prof_table *t, const prof_model *m,
                       prof_table_errs *x)
{
    size_t n = (size_t)t->ncells + 1;
    double *in = ef_malloc(n * sizeof *in), *out = ef_malloc(n * sizeof *out);
    int nin = 0, nout = 0;
    x->modelled = ef_malloc(n * sizeof *x->modelled);
    x->rel_err = ef_malloc(n * sizeof *x->rel_err);
    for (int k = 0; k < t->ncells; k++) {
        const prof_obs *o = &t->cells[k];
        x->modelled[k] = prof_tput(m, o->batch, o->gpus);
        x->rel_err[k] = prof_rel_err(m, o);
        if (t->fitted[k])
            in[nin++] = x->rel_err[k];
        else
            out[nout++] = x->rel_err[k];
    }
    prof_err_stats_of(in, nin, &x->fitted);
    prof_err_stats_of(out, nout, &x->predicted);
    free(in);
    free(out);
}

void prof_table_errs_free(prof_table_errs *x)
{
    free(x->modelled);
    free(x->rel_err);
    memset(x, 0, sizeof *x);
}
