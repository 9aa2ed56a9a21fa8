/* ilp_config.c: the configuration LP bound by column generation (see
 * ilp_config.h). */
#include "solver/ilp_config.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* A configuration prices out (enters the LP) when its reduced cost is
 * above this: the bound never depends on it (any multipliers give one),
 * only when the generation stops. */
#define CFG_ENTER 1e-9

/* At most this many rounds (each prices every window once). */
#define CFG_ROUNDS 200

void cfg_work_free(cfg_work *w)
{
    free(w->dp);
    free(w->ch);
    free(w->ind);
    free(w->val);
    free(w->onerow);
    free(w->sz);
    free(w->convrow);
    free(w->workrow);
    memset(w, 0, sizeof *w);
}

/* The rows of job j in window w, 0 when j has no slot there. */
static int one_row(const cfg_model *m, const cfg_work *wk, int j, int w)
{
    if (m->nk[j] == 0 || w < m->w0[j] || w >= m->w1[j])
        return 0;
    return wk->onerow[m->off[j] + w - m->w0[j]];
}

static double coef(const cfg_model *m, int j, int w, int k)
{
    return m->cf[(size_t)(m->off[j] + w - m->w0[j]) * CURVE_MAX_LEVELS + k];
}

/* The best configuration of window w under P's duals (clamped to the
 * multipliers' signs): returns its value max_p sum_{j: p_j > 0}
 * -(pi_one[j,w] + pi_work_j C[j,p_j,w]) (>= 0: the empty one is 0) and
 * puts its sizes in wk->sz (per job: size index, -1 not running). The
 * jobs of w in index order, a multiple-choice knapsack over capacity N,
 * ties to the first found (deterministic). */
static double price(const cfg_model *m, glp_prob *P, cfg_work *wk,
                    const int *workrow, int w)
{
    int N = m->N, i = 0;
    double *dp = wk->dp;
    memset(dp, 0, ((size_t)N + 1) * sizeof *dp);
    for (int j = 0; j < m->n; j++) {
        int r = one_row(m, wk, j, w);
        if (r == 0)
            continue;
        double po = glp_get_row_dual(P, r), pw = glp_get_row_dual(P, workrow[j]);
        po = po > 0 ? po : 0; /* one: <= row, pi >= 0 */
        pw = pw < 0 ? pw : 0; /* work: >= row, pi <= 0 */
        double *prev = dp + (size_t)i * (N + 1), *cur = prev + N + 1;
        int *ch = wk->ch + (size_t)(i + 1) * (N + 1);
        for (int c = 0; c <= N; c++) {
            cur[c] = prev[c];
            ch[c] = -1;
            for (int k = 0; k < m->nk[j] && m->kg[j][k] <= c; k++) {
                double v = prev[c - m->kg[j][k]] - (po + pw * coef(m, j, w, k));
                if (v > cur[c] + 1e-12) {
                    cur[c] = v;
                    ch[c] = k;
                }
            }
        }
        i++;
    }
    double best = dp[(size_t)i * (N + 1) + N];
    /* the sizes, back from the last job */
    int c = N;
    for (int j = m->n - 1; j >= 0; j--) {
        wk->sz[j] = -1;
        if (one_row(m, wk, j, w) == 0)
            continue;
        int k = wk->ch[(size_t)i * (N + 1) + c];
        if (k >= 0) {
            wk->sz[j] = k;
            c -= m->kg[j][k];
        }
        i--;
    }
    return best;
}

/* Add the configuration wk->sz of window w as a column. */
static void add_column(const cfg_model *m, glp_prob *P, cfg_work *wk,
                       const int *convrow, const int *workrow, int w)
{
    int nm = 0;
    wk->ind[++nm] = convrow[w];
    wk->val[nm] = 1.0;
    for (int j = 0; j < m->n; j++) {
        if (one_row(m, wk, j, w) == 0 || wk->sz[j] < 0)
            continue;
        wk->ind[++nm] = one_row(m, wk, j, w);
        wk->val[nm] = 1.0;
        wk->ind[++nm] = workrow[j];
        wk->val[nm] = coef(m, j, w, wk->sz[j]);
    }
    int col = glp_add_cols(P, 1);
    glp_set_col_bnds(P, col, GLP_LO, 0.0, 0.0);
    glp_set_mat_col(P, col, nm, wk->ind, wk->val);
}

/* The a-part of the Lagrangian bound (header) under P's duals. */
static double bound_a(const cfg_model *m, glp_prob *P, cfg_work *wk,
                      const int *workrow)
{
    double s = 0;
    for (int j = 0; j < m->n; j++) {
        if (m->nk[j] == 0)
            continue;
        double pw = glp_get_row_dual(P, workrow[j]), g = 1.0;
        g += pw < 0 ? pw : 0;
        for (int w = m->w0[j]; w < m->w1[j]; w++) {
            double po = glp_get_row_dual(P, one_row(m, wk, j, w));
            g += (po > 0 ? po : 0) * m->len[m->off[j] + w - m->w0[j]];
        }
        s += g > 0 ? g * m->hi[j] : g * m->lo[j];
    }
    return s;
}

/* Build the restricted LP: a columns, conv, one and work rows. */
static void build(const cfg_model *m, glp_prob *P, cfg_work *wk,
                  int *convrow, int *workrow)
{
    glp_set_obj_dir(P, GLP_MAX);
    for (int w = 0; w < m->nw; w++) {
        convrow[w] = glp_add_rows(P, 1);
        glp_set_row_bnds(P, convrow[w], GLP_UP, 0.0, (double)m->L[w]);
    }
    for (int j = 0; j < m->n; j++) {
        if (m->nk[j] == 0)
            continue;
        int a = glp_add_cols(P, 1);
        glp_set_obj_coef(P, a, 1.0);
        if (m->lo[j] == m->hi[j])
            glp_set_col_bnds(P, a, GLP_FX, m->lo[j], m->lo[j]);
        else
            glp_set_col_bnds(P, a, GLP_DB, m->lo[j], m->hi[j]);
        int ind[2] = {0, 0};
        double val[2] = {0, 0};
        for (int w = m->w0[j]; w < m->w1[j]; w++) {
            int r = glp_add_rows(P, 1);
            wk->onerow[m->off[j] + w - m->w0[j]] = r;
            glp_set_row_bnds(P, r, GLP_UP, 0.0, 0.0);
            ind[1] = a;
            val[1] = -(double)m->len[m->off[j] + w - m->w0[j]];
            glp_set_mat_row(P, r, 1, ind, val);
        }
        workrow[j] = glp_add_rows(P, 1);
        glp_set_row_bnds(P, workrow[j], GLP_LO, 0.0, 0.0);
        ind[1] = a;
        val[1] = -1.0;
        glp_set_mat_row(P, workrow[j], 1, ind, val);
    }
}

double cfg_bound(const cfg_model *m, void *prob, cfg_work *wk, int *rounds,
                 int *done)
{
    glp_prob *P = prob;
    int n = m->n, N = m->N, most = 0, total = 0;
    for (int j = 0; j < n; j++)
        if (m->nk[j] > 0)
            total = m->off[j] + m->w1[j] - m->w0[j];
    for (int w = 0; w < m->nw; w++) {
        int c = 0;
        for (int j = 0; j < n; j++)
            c += m->nk[j] > 0 && w >= m->w0[j] && w < m->w1[j];
        most = c > most ? c : most;
    }
    wk->dp = ef_malloc(((size_t)most + 1) * ((size_t)N + 1) * sizeof *wk->dp);
    wk->ch = ef_malloc(((size_t)most + 1) * ((size_t)N + 1) * sizeof *wk->ch);
    wk->ind = ef_malloc((2 * (size_t)n + 3) * sizeof *wk->ind);
    wk->val = ef_malloc((2 * (size_t)n + 3) * sizeof *wk->val);
    wk->onerow = ef_calloc((size_t)total + 1, sizeof *wk->onerow);
    wk->sz = ef_malloc(((size_t)n + 1) * sizeof *wk->sz);
    int *convrow = wk->convrow =
        ef_calloc((size_t)m->nw + 1, sizeof *convrow);
    int *workrow = wk->workrow = ef_calloc((size_t)n + 1, sizeof *workrow);
    /* the trivial bound: every a at its upper bound */
    double ub = 0;
    for (int j = 0; j < n; j++)
        ub += m->nk[j] > 0 ? m->hi[j] : 0;
    /* pricing work of one round */
    double cost = 0;
    for (int j = 0; j < n; j++)
        cost += (double)(m->w1[j] - m->w0[j]) * m->nk[j] * (N + 1);
    *rounds = 0;
    *done = 0;
    if (cost * CFG_ROUNDS > m->budget)
        return -1; /* a model too large for its rounds: not run */
    build(m, P, wk, convrow, workrow);
    glp_smcp sm;
    glp_init_smcp(&sm);
    sm.msg_lev = GLP_MSG_OFF;
    double spent = 0;
    while (*rounds < CFG_ROUNDS && spent + cost <= m->budget) {
        if (glp_simplex(P, &sm) != 0 || glp_get_status(P) != GLP_OPT)
            break; /* keep the bound so far: every one is valid */
        spent += cost;
        ++*rounds;
        double lag = bound_a(m, P, wk, workrow);
        int added = 0;
        for (int w = 0; w < m->nw; w++) {
            double best = price(m, P, wk, workrow, w);
            lag += m->L[w] * (best > 0 ? best : 0);
            double pc = glp_get_row_dual(P, convrow[w]);
            if (best - (pc > 0 ? pc : 0) > CFG_ENTER) {
                add_column(m, P, wk, convrow, workrow, w);
                added++;
            }
        }
        if (lag < ub)
            ub = lag;
        if (added == 0) {
            *done = 1;
            break;
        }
    }
    return ub;
}
