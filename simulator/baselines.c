/* baselines.c: helpers and solvers of the fixed-size baselines (see
 * baselines.h). */
#define _GNU_SOURCE 1 /* qsort_r */
#include "simulator/baselines.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

int bl_fixed_size(const sim *s, const sim_job *j, const char **why)
{
    int g = j->in->num_gpu;
    const char *w = NULL;
    if (g <= 0)
        w = "the trace gives no requested GPU count (num_gpu)";
    else if (g & (g - 1))
        w = "the requested GPU count is not a power of two";
    else if (g > s->cl.total_gpus)
        w = "the requested GPU count exceeds the cluster";
    else if (sim_tput(j, g) <= 0)
        w = "the curve has no throughput at the requested GPU count";
    if (why)
        *why = w;
    return w ? 0 : g;
}

int bl_admit(sim *s, int i)
{
    const char *why;
    int g = bl_fixed_size(s, &s->jobs[i], &why);
    if (!g) {
        sim_reject(s, i, -1, why);
        return 0;
    }
    sim_admit(s, i);
    return g;
}

double bl_seconds_left(const sim_job *j, int g)
{
    return j->rem / sim_tput(j, g);
}

double bl_seconds_done(const sim_job *j, int g)
{
    double total = (double)(j->in->iterations - j->in->iterations_done);
    return (total - j->rem) / sim_tput(j, g);
}

/* ---- Themis ---------------------------------------------------------- */

/* Sum of g_i x_i(rho); +inf when some job cannot reach rho at x <= 1. */
static double themis_need(int n, const int *g, const double *age,
                          const double *rt, const double *tiso, double rho,
                          double *x)
{
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double den = rho * tiso[i] - age[i];
        double xi = den > 0 ? rt[i] / den : INFINITY;
        if (xi > 1 + 1e-12)
            return INFINITY;
        if (xi > 1)
            xi = 1;
        if (x)
            x[i] = xi;
        sum += xi * g[i];
    }
    return sum;
}

int bl_themis_solve(int n, const int *g, const double *age,
                    const double *rt, const double *tiso, int N, double *x,
                    double *rho)
{
    /* the lowest rho any allocation can reach: every job at x = 1 */
    double lo = 0;
    for (int i = 0; i < n; i++) {
        double r1 = (age[i] + rt[i]) / tiso[i];
        if (r1 > lo)
            lo = r1;
    }
    if (themis_need(n, g, age, rt, tiso, lo, x) <= N) {
        *rho = lo;
        return 0;
    }
    double hi = lo > 0 ? 2 * lo : 1;
    for (int k = 0; k < 200 && themis_need(n, g, age, rt, tiso, hi, NULL) > N;
         k++)
        hi *= 2;
    int steps = 0;
    for (; steps < 100 && hi - lo > 1e-12 * hi; steps++) {
        double mid = lo + (hi - lo) / 2;
        if (themis_need(n, g, age, rt, tiso, mid, NULL) <= N)
            hi = mid;
        else
            lo = mid;
    }
    themis_need(n, g, age, rt, tiso, hi, x);
    *rho = hi;
    return steps;
}

/* The centre's x_i for a budget multiplier lam: the root in (l, 1) of
 * w / (x - l) - 1 / (1 - x) = lam g, written u = x - l; the smaller root
 * of lam g u^2 - (lam g d + w + 1) u + w d = 0, d = 1 - l, in the form
 * without cancellation. */
static double centre_x(double l, double w, double lamg)
{
    double d = 1 - l, b = lamg * d + w + 1;
    double u = 2 * w * d / (b + sqrt(b * b - 4 * lamg * w * d));
    return l + u;
}

/* N - sum g_i x_i at multiplier lam, the jobs with lo[i] >= 1 at 1. */
static double centre_room(int n, const int *g, const double *lo, double w,
                          int N, double lam, double *x)
{
    double used = 0;
    for (int i = 0; i < n; i++) {
        x[i] = lo[i] >= 1 ? 1 : centre_x(lo[i], w, lam * g[i]);
        used += x[i] * g[i];
    }
    return N - used;
}

/* The weight of ln(x_i - x_i(rho)) in the centre (1 for ln(1 - x_i) and
 * ln(N - sum g x)): the barrier terms ECOS's central path has on the
 * optimal face of the cvxpy program (baselines.h). */
#define THEMIS_CENTRE_W 1.5

int bl_themis_centre(int n, const int *g, const double *age,
                     const double *rt, const double *tiso, int N, double *x,
                     double *rho)
{
    int steps = bl_themis_solve(n, g, age, rt, tiso, N, x, rho);
    if (steps > 0)
        return 0; /* the budget binds: x is the unique optimum */
    double room = N, w = THEMIS_CENTRE_W;
    int nfree = 0;
    for (int i = 0; i < n; i++) {
        room -= x[i] * g[i];
        nfree += x[i] < 1;
    }
    if (!(room > 0) || nfree == 0)
        return 0; /* the optimal face is one point */
    /* lam (N - sum g x(lam)) = 1 has its root in [1/room, (n w + 1)/room]
     * and its left side grows with lam: bisection */
    double *lo = ef_malloc((size_t)n * sizeof *lo);
    memcpy(lo, x, (size_t)n * sizeof *lo);
    double a = 1 / room, b = (nfree * w + 1) / room;
    for (int k = 0; k < 200 && b - a > 1e-15 * b; k++) {
        double mid = a + (b - a) / 2;
        if (mid * centre_room(n, g, lo, w, N, mid, x) < 1)
            a = mid;
        else
            b = mid;
    }
    centre_room(n, g, lo, w, N, b, x);
    free(lo);
    return 1;
}

/* ---- Chronus ---------------------------------------------------------- */

typedef struct lease_ctx {
    const int *g, *r, *m;
} lease_ctx;

static int cmp_lease(const void *a, const void *b, void *ctx)
{
    const lease_ctx *c = ctx;
    int x = *(const int *)a, y = *(const int *)b;
    int sx = c->m[x] - c->r[x], sy = c->m[y] - c->r[y];
    if (sx != sy)
        return sx < sy ? -1 : 1;
    if (c->g[x] != c->g[y])
        return c->g[x] > c->g[y] ? -1 : 1;
    return x - y;
}

void bl_lease_greedy(int n, const int *g, const int *r, const int *m, int h,
                     int N, int sign, int *run, int *ok, int *plan)
{
    int H = 1;
    for (int j = 0; j < n; j++)
        if (m[j] > H)
            H = m[j];
    int *cap = ef_malloc((size_t)H * sizeof *cap);
    int *ord = ef_malloc((size_t)(n ? n : 1) * sizeof *ord);
    int *pick = ef_malloc((size_t)H * sizeof *pick);
    for (int l = 0; l < H; l++)
        cap[l] = N;
    for (int j = 0; j < n; j++) {
        ord[j] = j;
        run[j] = ok[j] = 0;
        if (plan)
            memset(plan + (size_t)j * h, 0, (size_t)h * sizeof *plan);
    }
    lease_ctx c = {g, r, m};
    qsort_r(ord, (size_t)n, sizeof *ord, cmp_lease, &c);
    for (int k = 0; k < n; k++) {
        int j = ord[k], got = 0;
        if (r[j] <= 0) {
            ok[j] = 1;
            continue;
        }
        for (int u = 0; u < m[j] && got < r[j]; u++) {
            int l = sign < 0 ? m[j] - 1 - u : u;
            if (cap[l] >= g[j])
                pick[got++] = l;
        }
        if (got < r[j])
            continue;
        ok[j] = 1;
        for (int u = 0; u < got; u++) {
            int l = pick[u];
            cap[l] -= g[j];
            if (l == 0)
                run[j] = 1;
            if (plan && l < h)
                plan[(size_t)j * h + l] = 1;
        }
    }
    free(cap);
    free(ord);
    free(pick);
}

typedef struct mip_cb {
    int nodes, budget;
} mip_cb;

static void mip_callback(glp_tree *T, void *info)
{
    mip_cb *c = info;
    if (glp_ios_reason(T) == GLP_ISELECT && ++c->nodes >= c->budget)
        glp_ios_terminate(T);
}

/* Jobs by window end m, then index. */
static int cmp_window_end(const void *a, const void *b, void *ctx)
{
    const lease_ctx *c = ctx;
    int x = *(const int *)a, y = *(const int *)b;
    if (c->m[x] != c->m[y])
        return c->m[x] < c->m[y] ? -1 : 1;
    return x - y;
}

int bl_lease_mip(int n, const int *g, const int *r, const int *m, int h,
                 int N, int sign, int node_budget, double seconds, int *run,
                 int *ok, int *plan)
{
    if (n == 0)
        return 0;
    glp_term_out(GLP_OFF);
    glp_prob *P = glp_create_prob();
    glp_set_obj_dir(P, GLP_MAX);
    /* columns: per job S_j, X[j,0..min(m,h)-1], Y_j (when m > h) */
    int *cs = ef_malloc((size_t)n * sizeof *cs);   /* column of S_j */
    int *cx = ef_malloc((size_t)n * sizeof *cx);   /* first X column */
    int *cy = ef_malloc((size_t)n * sizeof *cy);   /* Y column or 0 */
    int col = 0, ncol = 0;
    for (int j = 0; j < n; j++)
        ncol += 1 + (m[j] < h ? m[j] : h) + (m[j] > h);
    glp_add_cols(P, ncol); /* at once: the same columns, one allocation */
    for (int j = 0; j < n; j++) {
        int nx = m[j] < h ? m[j] : h;
        int ny = m[j] > h;
        cs[j] = ++col;
        glp_set_col_kind(P, col, GLP_BV);
        glp_set_obj_coef(P, col, 10);
        cx[j] = col + 1;
        for (int l = 0; l < nx; l++) {
            ++col;
            glp_set_col_kind(P, col, GLP_BV);
            if (l == 0)
                glp_set_obj_coef(P, col, sign * (double)g[j] / N);
        }
        cy[j] = 0;
        if (ny) {
            cy[j] = ++col;
            glp_set_col_kind(P, col, GLP_IV);
            glp_set_col_bnds(P, col, GLP_DB, 0, m[j] - h);
        }
    }
    int cap_ind = n + h + n + 2;
    int *ind = ef_malloc((size_t)(cap_ind + 1) * sizeof *ind);
    double *val = ef_malloc((size_t)(cap_ind + 1) * sizeof *val);
    /* work: sum X + Y - r S = 0 */
    for (int j = 0; j < n; j++) {
        int row = glp_add_rows(P, 1), k = 0;
        int nx = m[j] < h ? m[j] : h;
        ind[++k] = cs[j];
        val[k] = -r[j];
        for (int l = 0; l < nx; l++) {
            ind[++k] = cx[j] + l;
            val[k] = 1;
        }
        if (cy[j]) {
            ind[++k] = cy[j];
            val[k] = 1;
        }
        glp_set_mat_row(P, row, k, ind, val);
        glp_set_row_bnds(P, row, GLP_FX, 0, 0);
    }
    /*
     * Rows that cannot bind are left out: a capacity row whose
     * coefficients times its columns' upper bounds sum to at most its
     * right-hand side. GLPK's MIP presolve (npp_process_prob, on by
     * default above) removes exactly such a row in its first pass over
     * the rows, before any column is processed: as a redundant row
     * (npp_analyze_row finds its upper bound inactive) or, when it has one
     * column, as a row singleton whose implied bound is no tighter than
     * the column's (npp_ineq_singlet, returns 0). Either way it only
     * deletes the row and re-activates its columns, which are all still
     * active in that pass: a no-op. Bounds only tighten in presolve, so a
     * row redundant for the original bounds is redundant when reached.
     * The presolved problem, and so the solution, is the same without
     * these rows; only the time to build and presolve them is saved
     * (with thousands of jobs the tail rows below are O(n^2) non-zeros,
     * nearly all redundant). Sums are of small integers: exact in double.
     */
    /* capacity of each individual lease */
    for (int l = 0; l < h; l++) {
        int k = 0;
        double most = 0; /* the row's activity with every X at 1 */
        for (int j = 0; j < n; j++)
            if (l < m[j]) {
                ind[++k] = cx[j] + l;
                val[k] = g[j];
                most += g[j];
            }
        if (k == 0 || most <= N)
            continue;
        int row = glp_add_rows(P, 1);
        glp_set_mat_row(P, row, k, ind, val);
        glp_set_row_bnds(P, row, GLP_UP, 0, N);
    }
    /* the tail blocks: work due by each window end fits N per lease */
    int *ends = ef_malloc((size_t)n * sizeof *ends);
    int ne = 0;
    for (int j = 0; j < n; j++)
        if (cy[j])
            ends[ne++] = j;
    lease_ctx ec = {g, NULL, m};
    qsort_r(ends, (size_t)ne, sizeof *ends, cmp_window_end, &ec);
    double most = 0; /* sum of g Y at the Y bounds, windows ending by e */
    for (int e = 0; e < ne; e++) {
        int j0 = ends[e];
        most += (double)g[j0] * (m[j0] - h);
        if (e + 1 < ne && m[ends[e + 1]] == m[j0])
            continue; /* the row of this end is made at its last job */
        if (most <= (double)N * (m[j0] - h))
            continue; /* cannot bind (above) */
        int k = 0;
        for (int j = 0; j < n; j++)
            if (cy[j] && m[j] <= m[j0]) {
                ind[++k] = cy[j];
                val[k] = g[j];
            }
        int row = glp_add_rows(P, 1);
        glp_set_mat_row(P, row, k, ind, val);
        glp_set_row_bnds(P, row, GLP_UP, 0, (double)N * (m[j0] - h));
    }
    glp_iocp p;
    glp_init_iocp(&p);
    p.presolve = GLP_ON;
    p.msg_lev = GLP_MSG_OFF;
    if (seconds > 0) /* else GLPK's default: no time limit */
        p.tm_lim = (int)(seconds * 1000);
    mip_cb cb = {0, node_budget > 0 ? node_budget : 1};
    p.cb_func = mip_callback;
    p.cb_info = &cb;
    int rc = glp_intopt(P, &p);
    int fallback = !(rc == 0 && glp_mip_status(P) == GLP_OPT);
    if (!fallback) {
        for (int j = 0; j < n; j++) {
            int nx = m[j] < h ? m[j] : h;
            ok[j] = glp_mip_col_val(P, cs[j]) > 0.5;
            run[j] = nx > 0 && ok[j] && glp_mip_col_val(P, cx[j]) > 0.5;
            if (plan)
                for (int l = 0; l < h; l++)
                    plan[(size_t)j * h + l] =
                        l < nx && ok[j] &&
                        glp_mip_col_val(P, cx[j] + l) > 0.5;
        }
    }
    glp_delete_prob(P);
    free(cs);
    free(cx);
    free(cy);
    free(ind);
    free(val);
    free(ends);
    if (fallback)
        bl_lease_greedy(n, g, r, m, h, N, sign, run, ok, plan);
    return fallback;
}
