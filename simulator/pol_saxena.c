/*
 * pol_saxena.c: the saxena policy: elastic batch size and GPU count chosen
 * together by dynamic programming (Saxena et al., MASCOTS 2020; see
 * saxena.h for the objective).
 *   - Every released job is admitted (no admission control, no deadline
 *     awareness: the paper maximises throughput), except one with no
 *     usable size on the cluster.
 *   - Minimum share: in arrival order (submit time, queue order) each
 *     active job gets its smallest configuration (the smallest usable
 *     GPU count over its batch sizes) while GPUs last; the first that does
 *     not fit and every later one wait (first come, first served).
 *   - The DP (sax_dp) then spreads all GPUs over the running jobs, each
 *     at one (batch, usable GPU count) at least its minimum.
 * Jobs with batch_sizes count their work in samples and may change batch
 * at every point; the others keep their one batch.
 */
#define _GNU_SOURCE 1 /* qsort_r */
#include <float.h>
#include <string.h>

#include "common/util.h"
#include "planner/ebatch.h"
#include "simulator/saxena.h"
#include "simulator/sim.h"

void sax_ws_free(sax_ws *ws)
{
    free(ws->f);
    free(ws->g);
    free(ws->ch);
    memset(ws, 0, sizeof *ws);
}

double sax_dp(const sax_item *it, int n, int cap, int *choice, sax_ws *ws)
{
    long base = 0;
    for (int i = 0; i < n; i++)
        base += it[i].gpus[0];
    if (base > cap)
        return -1;
    int E = (int)(cap - base);
    size_t w = (size_t)E + 1;
    if (ws->nf < w) {
        ws->f = ef_realloc(ws->f, w * sizeof *ws->f);
        ws->g = ef_realloc(ws->g, w * sizeof *ws->g);
        ws->nf = w;
    }
    if (ws->nch < w * (size_t)(n ? n : 1)) {
        ws->nch = w * (size_t)(n ? n : 1);
        ws->ch = ef_realloc(ws->ch, ws->nch);
    }
    /* f[c]: best sum over the items so far with at most c extra GPUs */
    double *f = ws->f, *g = ws->g;
    for (size_t c = 0; c < w; c++)
        f[c] = 0;
    for (int i = 0; i < n; i++) {
        unsigned char *ch = ws->ch + (size_t)i * w;
        for (int c = 0; c <= E; c++) {
            double best = -DBL_MAX;
            int bo = 0;
            for (int o = 0; o < it[i].nopt; o++) {
                int cost = it[i].gpus[o] - it[i].gpus[0];
                if (cost > c)
                    break;
                double v = f[c - cost] + it[i].value[o];
                if (v > best) {
                    best = v;
                    bo = o;
                }
            }
            g[c] = best;
            ch[c] = (unsigned char)bo;
        }
        double *tmp = f;
        f = g;
        g = tmp;
    }
    double total = f[E];
    int c = E;
    for (int i = n - 1; i >= 0; i--) {
        int o = ws->ch[(size_t)i * w + (size_t)c];
        choice[i] = o;
        c -= it[i].gpus[o] - it[i].gpus[0];
    }
    return total;
}

typedef struct sax_state {
    int n;
    int *gmin;                /* smallest configuration: GPUs */
    double *ref;              /* ... and its throughput (job's unit) */
    int *ord, *run, *choice;
    sax_item *items;
    const curve_row **rowsel; /* per running job and option */
    sax_ws ws;
} sax_state;

static void fini(void *v)
{
    sax_state *st = v;
    free(st->gmin);
    free(st->ref);
    free(st->ord);
    free(st->run);
    free(st->choice);
    free(st->items);
    free(st->rowsel);
    sax_ws_free(&st->ws);
    free(st);
}

static void *init(sim *s, ef_err *e)
{
    (void)e;
    sim_use_elastic_batch(s);
    sax_state *st = ef_calloc(1, sizeof *st);
    size_t n = (size_t)(s->n ? s->n : 1);
    st->n = s->n;
    st->gmin = ef_calloc(n, sizeof *st->gmin);
    st->ref = ef_calloc(n, sizeof *st->ref);
    st->ord = ef_malloc(n * sizeof *st->ord);
    st->run = ef_malloc(n * sizeof *st->run);
    st->choice = ef_malloc(n * sizeof *st->choice);
    st->items = ef_malloc(n * sizeof *st->items);
    st->rowsel = ef_malloc(n * CURVE_MAX_LEVELS * sizeof *st->rowsel);
    for (int i = 0; i < s->n; i++) {
        const sim_job *j = &s->jobs[i];
        const curve_row *r = eb_min_config(j->in, 1, s->cl.total_gpus,
                                           &st->gmin[i]);
        if (r)
            st->ref[i] = eb_tput(r, st->gmin[i], j->eb);
    }
    return st;
}

static int cmp_arrival(const void *a, const void *b, void *ctx)
{
    const sim *s = ctx;
    int x = *(const int *)a, y = *(const int *)b;
    int64_t sx = s->jobs[x].in->submit, sy = s->jobs[y].in->submit;
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return x - y;
}

static int64_t point(sim *s, void *v, int64_t t, const int *rel, int nrel)
{
    sax_state *st = v;
    int N = s->cl.total_gpus;
    (void)t;
    for (int r = 0; r < nrel; r++) {
        if (st->gmin[rel[r]] == 0)
            sim_reject(s, rel[r], -1, "no usable GPU count fits the cluster");
        else
            sim_admit(s, rel[r]);
    }
    memcpy(st->ord, s->act, (size_t)s->nact * sizeof *st->ord);
    qsort_r(st->ord, (size_t)s->nact, sizeof *st->ord, cmp_arrival, s);
    /* minimum shares, first come first served */
    int left = N, m = 0;
    for (int k = 0; k < s->nact; k++) {
        int i = st->ord[k];
        if (st->gmin[i] > left)
            break;
        left -= st->gmin[i];
        st->run[m++] = i;
    }
    /* one option per usable GPU count >= the minimum: the best batch */
    for (int k = 0; k < m; k++) {
        int i = st->run[k];
        const sim_job *j = &s->jobs[i];
        const curve_row *const *rows;
        int nr = eb_rows(j->in, 1, &rows);
        sax_item *it = &st->items[k];
        it->nopt = 0;
        for (int l = 0; l < CURVE_MAX_LEVELS && (1 << l) <= N; l++) {
            int g = 1 << l;
            if (g < st->gmin[i])
                continue;
            const curve_row *best = NULL;
            double bt = 0;
            for (int b = 0; b < nr; b++) {
                double tp = eb_tput(rows[b], g, j->eb);
                if (tp > bt) {
                    bt = tp;
                    best = rows[b];
                }
            }
            if (!best)
                continue;
            st->rowsel[k * CURVE_MAX_LEVELS + it->nopt] = best;
            it->gpus[it->nopt] = g;
            it->value[it->nopt] = bt / st->ref[i];
            it->nopt++;
        }
        ef_assert(it->nopt > 0 && it->gpus[0] == st->gmin[i]);
    }
    for (int k = 0; k < s->nact; k++)
        s->jobs[s->act[k]].want = 0;
    if (m > 0) {
        double best = sax_dp(st->items, m, N, st->choice, &st->ws);
        ef_assert(best >= 0);
        for (int k = 0; k < m; k++) {
            sim_job *j = &s->jobs[st->run[k]];
            int o = st->choice[k];
            j->want = st->items[k].gpus[o];
            j->want_row = st->rowsel[k * CURVE_MAX_LEVELS + o];
        }
    }
    return INT64_MAX;
}

const sim_policy sim_policy_saxena = {
    "saxena", "Saxena et al.: batch size and GPUs by DP, max total speed-up",
    init, point, fini};
