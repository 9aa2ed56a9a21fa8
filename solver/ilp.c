/* ilp.c: the exact ILP oracle in GLPK (see ilp.h). */
#include "solver/ilp.h"

#include <glpk.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "planner/engine.h"
#include "planner/mss.h"
#include "solver/ilp_config.h"

/* Refuse to build models larger than this many binaries: memory grows
 * with it and GLPK would not get far anyway. */
#define ILP_MAX_BINARIES 2000000L
#define ILP_MAX_SLOTS 1000000

/* Tolerance when reading bounds and 0/1 values back from GLPK. */
#define ILP_EPS 1e-6

void ilp_opts_default(ilp_opts *o)
{
    memset(o, 0, sizeof *o);
    o->slot = 60;
    o->now = INT64_MIN;
}

const char *ilp_status_name(ilp_status s)
{
    switch (s) {
    case ILP_OPTIMAL: return "optimal";
    case ILP_FEASIBLE: return "feasible";
    case ILP_NO_INCUMBENT: return "no_incumbent";
    default: return "infeasible";
    }
}

void ilp_result_free(ilp_result *r)
{
    free(r->admit);
    free(r->size);
    memset(r, 0, sizeof *r);
}

/* Everything one solve needs. GLPK may longjmp out of any glp_* call, so
 * all state lives here (not in locals of the guarded functions) and is
 * freed by the caller of the guarded region. */
typedef struct ctx {
    const job_queue *q;
    const cluster *c;
    const ilp_opts *o;
    ilp_result *r;
    int S, N, T, n;
    int64_t now;
    /* per job */
    int *in_model;   /* has a deadline */
    int *hopeless;   /* cannot finish even alone */
    int *t0, *t1;    /* allowed slots [t0, t1) */
    int *nk;         /* usable sizes */
    int (*kg)[CURVE_MAX_LEVELS];
    double (*kt)[CURVE_MAX_LEVELS];
    double *rem;     /* remaining iterations */
    int *acol;       /* column of a[j], 0 if none */
    int *xcol;       /* first x column of j: + (t - t0) * nk + k */
    /* scratch */
    int *ind;
    double *val;
    double *warm;    /* warm start, cols + 1 entries, or NULL */
    /* GLPK */
    glp_prob *P;
    jmp_buf *jb;
    char msg[512];
    /* search state */
    double t_start;
    int have_open_bound;
    double open_bound;
    int warm_offered, warm_ok;
    /* ilp_relax: the aggregated model */
    ilp_relaxed *rx; /* its result; NULL for ilp_solve */
    long bins;       /* binaries of the time-indexed model */
    int nw;          /* windows */
    int *wb;         /* nw + 1 boundaries (slot indices) */
    int *w0, *w1;    /* per job: its windows [w0, w1) */
    double *gfloor;  /* per job: least GPU-slots alone (relax_floor) */
    int *caprow;     /* per window: its cap row, 0 if none */
    int it_lim;      /* simplex iterations per LP; 0 = none */
    double work;     /* ilp_relax: iterations x rows per LP; 0 = none */
    int thr[64], nthr; /* relax_cuts: the conflict thresholds s */
    int *zcol;       /* per threshold and window: z[w,s]'s column, 0 none */
    struct refine *ref; /* ilp_relax's passes: the windows to refine
                           (read) and this pass's tight ones (written) */
    cfg_work cfw;    /* the configuration LP's scratch (ilp_config.h) */
    int *cfg_off, *cfg_len; /* its model's per-job offsets, l[j,w] */
    double *cfg_cf, *cfg_lo, *cfg_hi; /* its C[j,k,w], a[j]'s bounds */
    int *cfg_L;      /* its window lengths */
    int ipt;         /* 1: this pass's LPs are solved by the interior-point
                        method (relax_use_ipt), their values bounded by
                        relax_dual_bound */
    int ipt_rough;   /* 1: it stopped short of the optimum (run_ipt) */
    double *dd, *dval; /* relax_dual_bound's scratch: d, a row */
    int *dind;
} ctx;

/* Between two passes of ilp_relax: the first pass's windows and which of
 * their capacity rows bind (a nonzero dual value) in its optimum; the
 * second pass keeps every candidate boundary inside those. */
typedef struct refine {
    int nw;              /* windows of the pass that filled it; 0 none */
    int *wb;             /* its nw + 1 boundaries */
    unsigned char *tight; /* nw flags */
} refine;

static void ctx_free(ctx *x)
{
    free(x->in_model);
    free(x->hopeless);
    free(x->t0);
    free(x->t1);
    free(x->nk);
    free(x->kg);
    free(x->kt);
    free(x->rem);
    free(x->acol);
    free(x->xcol);
    free(x->ind);
    free(x->val);
    free(x->warm);
    free(x->wb);
    free(x->w0);
    free(x->w1);
    free(x->gfloor);
    free(x->caprow);
    free(x->zcol);
    cfg_work_free(&x->cfw);
    free(x->cfg_off);
    free(x->cfg_len);
    free(x->cfg_cf);
    free(x->cfg_lo);
    free(x->cfg_hi);
    free(x->cfg_L);
    free(x->dd);
    free(x->dval);
    free(x->dind);
}

/* A context for queue q on cluster c under o, filling r (and rx, the
 * relaxation's result, or NULL for the exact model), its clock started. */
static void ctx_start(ctx *x, const job_queue *q, const cluster *c,
                      const ilp_opts *o, ilp_result *r, ilp_relaxed *rx)
{
    memset(x, 0, sizeof *x);
    x->q = q;
    x->c = c;
    x->o = o;
    x->r = r;
    x->rx = rx;
    x->S = o->slot;
    x->N = c->total_gpus;
    x->n = q->n;
    x->t_start = ef_mono_seconds();
}

/* ---- GLPK hooks ---------------------------------------------------------- */

/* Keep GLPK's terminal output (only its error report, since term_out is
 * off otherwise) as the first line of text, for the error message. */
static int term_hook(void *info, const char *s)
{
    ctx *x = info;
    size_t l = strlen(x->msg);
    if (l == 0 || x->msg[l - 1] != '\n') {
        size_t k = 0;
        while (s[k] && l + 1 < sizeof x->msg) {
            x->msg[l++] = s[k];
            if (s[k++] == '\n')
                break;
        }
        x->msg[l] = 0;
    }
    return 1; /* never print */
}

/* A GLPK fatal error: free GLPK's whole environment (our problem object
 * with it) and jump back to the guarded entry point. */
static void error_hook(void *info)
{
    ctx *x = info;
    glp_free_env();
    longjmp(*x->jb, 1);
}

/* ---- model --------------------------------------------------------------- */

static int x_col(const ctx *x, int j, int t, int k)
{
    return x->xcol[j] + (t - x->t0[j]) * x->nk[j] + k;
}

/* Slot lengths, shapes and which jobs can run at all: no GLPK yet. */
static int plan_shape(ctx *x, ef_err *e)
{
    const job_queue *q = x->q;
    int n = q->n, S = x->S, N = x->N;
    int64_t now = x->o->now;
    if (now == INT64_MIN) {
        now = n ? INT64_MAX : 0;
        for (int i = 0; i < n; i++)
            if (q->jobs[i].submit < now)
                now = q->jobs[i].submit;
    }
    x->now = now;
    x->in_model = ef_calloc((size_t)n + 1, sizeof(int));
    x->hopeless = ef_calloc((size_t)n + 1, sizeof(int));
    x->t0 = ef_calloc((size_t)n + 1, sizeof(int));
    x->t1 = ef_calloc((size_t)n + 1, sizeof(int));
    x->nk = ef_calloc((size_t)n + 1, sizeof(int));
    x->kg = ef_calloc((size_t)n + 1, sizeof *x->kg);
    x->kt = ef_calloc((size_t)n + 1, sizeof *x->kt);
    x->rem = ef_calloc((size_t)n + 1, sizeof(double));
    x->acol = ef_calloc((size_t)n + 1, sizeof(int));
    x->xcol = ef_calloc((size_t)n + 1, sizeof(int));
    int64_t T = 0;
    long long bins = 0;
    for (int j = 0; j < n; j++) {
        const job *jb = &q->jobs[j];
        x->rem[j] = (double)(jb->iterations - jb->iterations_done);
        if (x->o->must && x->o->must[j] && !jb->has_deadline)
            return ef_fail(e, EF_E_USAGE, "job %s must be admitted but has no "
                           "deadline (best-effort jobs are outside the ILP)",
                           jb->id);
        if (!jb->has_deadline)
            continue;
        x->in_model[j] = 1;
        x->r->deadline_jobs++;
        int64_t rel = ef_align_up(now, jb->submit, S);
        int64_t a = (rel - now) / S;
        int64_t b = jb->deadline > now ? (jb->deadline - now + S - 1) / S : 0;
        if (b > ILP_MAX_SLOTS)
            return ef_fail(e, EF_E_USAGE, "job %s: its deadline is %lld slots "
                           "of %d s after the start (limit %d): use a longer "
                           "--slot", jb->id, (long long)b, S, ILP_MAX_SLOTS);
        if (b > T)
            T = b;
        x->nk[j] = curve_usable(jb->curve, N, x->kg[j], x->kt[j]);
        x->t0[j] = (int)(a < b ? a : b);
        x->t1[j] = (int)b;
        /* the most work it can do: its largest size in every slot, the
         * last one up to the deadline */
        double most = 0;
        if (x->nk[j] > 0 && b > a) {
            int64_t last = now + (b - 1) * S;
            most = x->kt[j][x->nk[j] - 1] *
                   ((double)(b - 1 - a) * S + (double)(jb->deadline - last));
        }
        if (x->nk[j] == 0 || b <= a || most < x->rem[j] * (1.0 + MSS_MARGIN)) {
            x->hopeless[j] = 1;
            x->r->hopeless++;
            x->nk[j] = 0;
            x->t1[j] = x->t0[j];
            continue;
        }
        bins += (long long)(b - a) * x->nk[j];
    }
    x->bins = (long)bins;
    if (!x->rx && bins > ILP_MAX_BINARIES)
        return ef_fail(e, EF_E_USAGE, "the model would have %lld binaries "
                       "(limit %ld): use a longer --slot or fewer jobs", bins,
                       ILP_MAX_BINARIES);
    if ((long long)n * T > 25LL * ILP_MAX_BINARIES)
        return ef_fail(e, EF_E_USAGE, "%d jobs x %lld slots is too large for "
                       "the ILP: use a longer --slot or fewer jobs", n,
                       (long long)T);
    x->T = (int)T;
    return EF_OK;
}

/* The fewest GPU-slots with which job j can do its work, whatever the
 * mix of sizes and ignoring capacity and the deadline: the least g with
 * best[g] >= W, where best[g] is the most work of g GPU-slots (an
 * unbounded covering knapsack over the usable sizes, full slots). Every
 * schedule of j uses at least that many, so sum k x >= L a is a valid
 * cut; it rounds up what the LP relaxation would spread fractionally.
 * Returns 0 when j has no columns. */
static long min_gpu_slots(const ctx *x, int j)
{
    int K = x->nk[j];
    if (K == 0)
        return 0;
    double W = x->rem[j] * (1.0 + MSS_MARGIN);
    long cap = (long)(x->t1[j] - x->t0[j]) * x->kg[j][K - 1];
    double *best = ef_calloc((size_t)cap + 1, sizeof(double));
    long g;
    for (g = 1; g <= cap; g++) {
        best[g] = best[g - 1];
        for (int k = 0; k < K; k++)
            if (x->kg[j][k] <= g) {
                double w = best[g - x->kg[j][k]] + x->kt[j][k] * x->S;
                if (w > best[g])
                    best[g] = w;
            }
        if (best[g] >= W)
            break;
    }
    free(best);
    return g <= cap ? g : 0;
}

/* Build the GLPK problem. Guarded: may longjmp. */
static void build(ctx *x)
{
    const job_queue *q = x->q;
    int n = q->n, S = x->S, T = x->T;
    glp_prob *P = x->P;
    char name[96];
    glp_set_prob_name(P, "efplan_oracle");
    /* columns: per job a[j], then x[j,t,k] by slot then size */
    int col = 0;
    for (int j = 0; j < n; j++) {
        if (!x->in_model[j])
            continue;
        x->acol[j] = ++col;
        x->xcol[j] = col + 1;
        col += (x->t1[j] - x->t0[j]) * x->nk[j];
    }
    x->r->cols = col;
    if (col > 0)
        glp_add_cols(P, col);
    for (int j = 0; j < n; j++) {
        if (!x->in_model[j])
            continue;
        int a = x->acol[j];
        snprintf(name, sizeof name, "a_%d", j);
        glp_set_col_name(P, a, name);
        glp_set_col_kind(P, a, GLP_BV);
        if (x->o->must && x->o->must[j])
            glp_set_col_bnds(P, a, GLP_FX, 1.0, 1.0);
        else if (x->hopeless[j])
            glp_set_col_bnds(P, a, GLP_FX, 0.0, 0.0);
        x->r->binaries++;
        for (int t = x->t0[j]; t < x->t1[j]; t++)
            for (int k = 0; k < x->nk[j]; k++) {
                int c = x_col(x, j, t, k);
                snprintf(name, sizeof name, "x_%d_%d_%d", j, t, x->kg[j][k]);
                glp_set_col_name(P, c, name);
                glp_set_col_kind(P, c, GLP_BV);
                x->r->binaries++;
            }
    }
    if (x->o->fault == ILP_FAULT_GLPK) /* test hook: a column out of range */
        glp_set_col_bnds(P, col + 1, GLP_FX, 0.0, 0.0);
    x->ind = ef_malloc(((size_t)col + 2) * sizeof(int));
    x->val = ef_malloc(((size_t)col + 2) * sizeof(double));
    int *ind = x->ind;
    double *val = x->val;
    /* one[j,t]: sum_k x - a <= 0 */
    for (int j = 0; j < n; j++)
        for (int t = x->t0[j]; t < x->t1[j]; t++) {
            int row = glp_add_rows(P, 1), m = 0;
            snprintf(name, sizeof name, "one_%d_%d", j, t);
            glp_set_row_name(P, row, name);
            glp_set_row_bnds(P, row, GLP_UP, 0.0, 0.0);
            for (int k = 0; k < x->nk[j]; k++) {
                ind[++m] = x_col(x, j, t, k);
                val[m] = 1.0;
            }
            ind[++m] = x->acol[j];
            val[m] = -1.0;
            glp_set_mat_row(P, row, m, ind, val);
        }
    /* cap[t]: sum k x <= N */
    for (int t = 0; t < T; t++) {
        int m = 0;
        for (int j = 0; j < n; j++)
            if (t >= x->t0[j] && t < x->t1[j])
                for (int k = 0; k < x->nk[j]; k++) {
                    ind[++m] = x_col(x, j, t, k);
                    val[m] = x->kg[j][k];
                }
        if (m == 0)
            continue;
        int row = glp_add_rows(P, 1);
        snprintf(name, sizeof name, "cap_%d", t);
        glp_set_row_name(P, row, name);
        glp_set_row_bnds(P, row, GLP_UP, 0.0, (double)x->N);
        glp_set_mat_row(P, row, m, ind, val);
    }
    /* work[j]: sum min(1, tput * len / W) x - a >= 0 */
    for (int j = 0; j < n; j++) {
        if (!x->in_model[j])
            continue;
        const job *jb = &q->jobs[j];
        double W = x->rem[j] * (1.0 + MSS_MARGIN);
        int m = 0;
        for (int t = x->t0[j]; t < x->t1[j]; t++) {
            int64_t st = x->now + (int64_t)t * S;
            int64_t len = jb->deadline - st < S ? jb->deadline - st : S;
            for (int k = 0; k < x->nk[j]; k++) {
                double cf = x->kt[j][k] * (double)len / W;
                ind[++m] = x_col(x, j, t, k);
                val[m] = cf < 1.0 ? cf : 1.0;
            }
        }
        ind[++m] = x->acol[j];
        val[m] = -1.0;
        int row = glp_add_rows(P, 1);
        snprintf(name, sizeof name, "work_%d", j);
        glp_set_row_name(P, row, name);
        glp_set_row_bnds(P, row, GLP_LO, 0.0, 0.0);
        glp_set_mat_row(P, row, m, ind, val);
        /* gpu[j]: sum k x - L_j a >= 0, L_j the fewest GPU-slots of any
         * mix of sizes that does the work (a valid cut) */
        long L = min_gpu_slots(x, j);
        if (L <= 0)
            continue;
        m = 0;
        for (int t = x->t0[j]; t < x->t1[j]; t++)
            for (int k = 0; k < x->nk[j]; k++) {
                ind[++m] = x_col(x, j, t, k);
                val[m] = x->kg[j][k];
            }
        ind[++m] = x->acol[j];
        val[m] = -(double)L;
        row = glp_add_rows(P, 1);
        snprintf(name, sizeof name, "gpu_%d", j);
        glp_set_row_name(P, row, name);
        glp_set_row_bnds(P, row, GLP_LO, 0.0, 0.0);
        glp_set_mat_row(P, row, m, ind, val);
    }
    x->r->rows = glp_get_num_rows(P);
}

typedef enum objective {
    OBJ_WEIGHTED, /* max sum a - sum k x / (N T + 1): both orders in one */
    OBJ_ADMITTED, /* phase 1: max sum a */
    OBJ_GPU       /* phase 2: min sum k x */
} objective;

static void set_objective(ctx *x, objective w)
{
    glp_prob *P = x->P;
    double pen = 1.0 / ((double)x->N * x->T + 1.0);
    glp_set_obj_name(P, w == OBJ_WEIGHTED ? "admitted_minus_gpu_time"
                        : w == OBJ_ADMITTED ? "admitted" : "gpu_slots");
    glp_set_obj_dir(P, w == OBJ_GPU ? GLP_MIN : GLP_MAX);
    for (int j = 0; j < x->n; j++) {
        if (!x->in_model[j])
            continue;
        glp_set_obj_coef(P, x->acol[j], w == OBJ_GPU ? 0.0 : 1.0);
        for (int t = x->t0[j]; t < x->t1[j]; t++)
            for (int k = 0; k < x->nk[j]; k++)
                glp_set_obj_coef(P, x_col(x, j, t, k),
                                 w == OBJ_ADMITTED ? 0.0
                                 : w == OBJ_GPU ? x->kg[j][k]
                                                : -pen * x->kg[j][k]);
    }
}

/* The greedy plan's admitted jobs as a start vector (x->warm, 1-based);
 * left NULL when the plan is on another grid or has nothing to offer. A
 * job whose greedy slots do not map onto columns is left out. */
static void warm_vector(ctx *x)
{
    const plan *w = x->o->warm;
    int n = x->q->n, S = x->S;
    if (!w || w->njobs != n || w->now != x->now || w->opts.slot != S ||
        x->r->cols == 0)
        return;
    int *bad = ef_calloc((size_t)n + 1, sizeof(int));
    for (int pass = 0; pass < 2; pass++) {
        for (int s = 0; s < w->nslots; s++) {
            const plan_slot *sl = &w->slots[s];
            for (int a = 0; a < sl->nalloc; a++) {
                int j = sl->a[a].job, g = sl->a[a].gpus;
                if (w->jobs[j].decision != PLAN_ADMITTED || bad[j])
                    continue;
                int k = 0;
                while (k < x->nk[j] && x->kg[j][k] != g)
                    k++;
                for (int64_t st = sl->start; st < sl->end; st += S) {
                    int64_t t = (st - x->now) / S;
                    if (!x->in_model[j] || k == x->nk[j] || t < x->t0[j] ||
                        t >= x->t1[j]) {
                        bad[j] = 1;
                        break;
                    }
                    if (pass == 1)
                        x->warm[x_col(x, j, (int)t, k)] = 1.0;
                }
            }
        }
        if (pass == 0) {
            int any = 0;
            for (int j = 0; j < n; j++)
                any |= w->jobs[j].decision == PLAN_ADMITTED && !bad[j];
            if (!any)
                break;
            x->warm = ef_calloc((size_t)x->r->cols + 1, sizeof(double));
            for (int j = 0; j < n; j++)
                if (w->jobs[j].decision == PLAN_ADMITTED && !bad[j])
                    x->warm[x->acol[j]] = 1.0;
        }
    }
    free(bad);
}

static void callback(glp_tree *tree, void *info)
{
    ctx *x = info;
    switch (glp_ios_reason(tree)) {
    case GLP_IHEUR:
        if (x->warm && !x->warm_offered) {
            x->warm_offered = 1;
            x->warm_ok = glp_ios_heur_sol(tree, x->warm) == 0 ? 1 : -1;
        }
        break;
    case GLP_ISELECT: {
        int p = glp_ios_best_node(tree);
        if (p) {
            x->open_bound = glp_ios_node_bound(tree, p);
            x->have_open_bound = 1;
        }
        if (x->o->node_limit > 0 && x->r->nodes >= x->o->node_limit) {
            x->r->limit_hit = 2;
            glp_ios_terminate(tree);
            break;
        }
        x->r->nodes++;
        break;
    }
    default:
        break;
    }
}

/* Milliseconds left of the time limit (INT_MAX when none); 0 if spent. */
static int ms_left(const ctx *x)
{
    if (x->o->time_limit <= 0)
        return 0x7fffffff;
    double left = x->o->time_limit - (ef_mono_seconds() - x->t_start);
    if (left <= 0)
        return 0;
    return left * 1000 > 2e9 ? 2000000000 : (int)(left * 1000) + 1;
}

/* GLPK writes the model to the atomic writer's temporary by name. */
static int fill_lp(int fd, const char *tmp, void *arg, ef_err *e)
{
    const ctx *x = arg;
    (void)fd;
    if (glp_write_lp(x->P, NULL, tmp) != 0)
        return ef_fail(e, EF_E_INTERNAL, "%s: cannot write the model (GLPK "
                       "failed to write it)", x->o->write_lp);
    return EF_OK;
}

/* Write the model in CPLEX LP format, atomically (ef_write_file_with). */
static int write_lp(ctx *x, ef_err *e)
{
    return ef_write_file_with(x->o->write_lp, fill_lp, x, e);
}

/* ilp_relax: rounds of conflict rows added to the count LP at most. */
#define RELAX_CUT_ROUNDS 30

/* Outcome of one LP or branch-and-cut run. */
enum { RUN_DONE, RUN_LIMIT, RUN_NOFEAS };

/* The LP relaxation from the current basis. Guarded. */
static int run_lp(ctx *x, double *obj, ef_err *e)
{
    glp_smcp sm;
    glp_init_smcp(&sm);
    sm.msg_lev = GLP_MSG_OFF;
    sm.presolve = GLP_OFF;
    sm.tm_lim = ms_left(x);
    if (x->it_lim > 0)
        sm.it_lim = x->it_lim;
    if (sm.tm_lim == 0) {
        x->r->limit_hit = 1;
        return RUN_LIMIT;
    }
    int it0 = glp_get_it_cnt(x->P);
    int rc = glp_simplex(x->P, &sm);
    if (x->rx)
        x->rx->lp_iters += glp_get_it_cnt(x->P) - it0;
    if (rc == GLP_ETMLIM || rc == GLP_EITLIM) {
        x->r->limit_hit = rc == GLP_ETMLIM ? 1 : 3;
        return RUN_LIMIT;
    }
    if (rc != 0)
        return ef_fail(e, EF_E_INTERNAL, "GLPK: the LP relaxation failed "
                       "(glp_simplex code %d)", rc);
    int st = glp_get_status(x->P);
    if (st == GLP_NOFEAS)
        return RUN_NOFEAS;
    if (st != GLP_OPT)
        return ef_fail(e, EF_E_INTERNAL, "GLPK: the LP relaxation ended with "
                       "status %d", st);
    *obj = glp_get_obj_val(x->P);
    return RUN_DONE;
}

/* Branch-and-cut from the optimal LP basis, offering x->warm. Sets
 * *proven (search finished) and *have (an incumbent exists) and, when
 * the search stopped early, tightens *bound (the LP's) by the best open
 * node. Returns RUN_* or EF_ERR. Guarded. */
static int run_mip(ctx *x, int *proven, int *have, double *bound, ef_err *e)
{
    glp_iocp io;
    glp_init_iocp(&io);
    io.msg_lev = GLP_MSG_OFF;
    io.presolve = GLP_OFF;
    io.mip_gap = 0.0;
    /* Gomory cuts: far fewer nodes in phase 2; MIR cuts: close the last
     * GPU-slots of phase 2. Above ILP_CUTS_BINARIES their root round
     * alone takes longer than a node budget's worth of search (20 s for
     * the sample's 43,036 binaries): off, decided by the model's size */
    int cuts = x->r->binaries <= ILP_CUTS_BINARIES;
    io.gmi_cuts = cuts ? GLP_ON : GLP_OFF;
    io.mir_cuts = cuts ? GLP_ON : GLP_OFF;
    io.cb_func = callback;
    io.cb_info = x;
    io.tm_lim = ms_left(x);
    x->warm_offered = 0;
    x->warm_ok = 0;
    x->have_open_bound = 0;
    *proven = *have = 0;
    if (io.tm_lim == 0 ||
        (x->o->node_limit > 0 && x->r->nodes >= x->o->node_limit)) {
        x->r->limit_hit = io.tm_lim == 0 ? 1 : 2;
        return RUN_LIMIT;
    }
    int rc = glp_intopt(x->P, &io);
    if (rc == GLP_ETMLIM)
        x->r->limit_hit = 1;
    else if (rc != 0 && rc != GLP_ESTOP)
        return ef_fail(e, EF_E_INTERNAL, "GLPK: branch-and-cut failed "
                       "(glp_intopt code %d)", rc);
    int st = glp_mip_status(x->P);
    if (st == GLP_NOFEAS)
        return RUN_NOFEAS;
    *have = st == GLP_OPT || st == GLP_FEAS;
    *proven = rc == 0 && st == GLP_OPT;
    if (!*proven && x->have_open_bound) {
        int max = glp_get_obj_dir(x->P) == GLP_MAX;
        if (max ? x->open_bound < *bound : x->open_bound > *bound)
            *bound = x->open_bound;
    }
    return *proven ? RUN_DONE : RUN_LIMIT;
}

/* Copy the incumbent into r->admit / r->size. */
static void take_solution(ctx *x)
{
    ilp_result *r = x->r;
    int n = x->n, T = x->T;
    if (!r->admit) {
        r->admit = ef_calloc((size_t)n + 1, sizeof(int));
        r->size = ef_calloc((size_t)n * (size_t)T + 1, sizeof(int));
    }
    memset(r->size, 0, ((size_t)n * (size_t)T + 1) * sizeof(int));
    r->admitted = 0;
    for (int j = 0; j < n; j++) {
        r->admit[j] = 0;
        if (!x->in_model[j])
            continue;
        r->admit[j] = glp_mip_col_val(x->P, x->acol[j]) > 0.5;
        r->admitted += r->admit[j];
        for (int t = x->t0[j]; t < x->t1[j]; t++)
            for (int k = 0; k < x->nk[j]; k++)
                if (glp_mip_col_val(x->P, x_col(x, j, t, k)) > 0.5)
                    r->size[(size_t)j * T + t] = x->kg[j][k];
    }
}

/* Phase 2: among schedules admitting r->admitted jobs, the least
 * GPU-time; starts from the phase-1 incumbent. Guarded. */
static int phase_gpu(ctx *x, ef_err *e)
{
    ilp_result *r = x->r;
    glp_prob *P = x->P;
    int cols = r->cols;
    free(x->warm);
    x->warm = ef_calloc((size_t)cols + 1, sizeof(double));
    for (int c = 1; c <= cols; c++)
        x->warm[c] = glp_mip_col_val(P, c) > 0.5 ? 1.0 : 0.0;
    int m = 0;
    for (int j = 0; j < x->n; j++)
        if (x->in_model[j]) {
            x->ind[++m] = x->acol[j];
            x->val[m] = 1.0;
        }
    int row = glp_add_rows(P, 1);
    glp_set_row_name(P, row, "admitted");
    glp_set_row_bnds(P, row, GLP_LO, (double)r->admitted, 0.0);
    glp_set_mat_row(P, row, m, x->ind, x->val);
    r->rows++;
    set_objective(x, OBJ_GPU);
    double lp;
    int k = run_lp(x, &lp, e);
    if (k == EF_ERR)
        return EF_ERR;
    if (k != RUN_DONE) /* time limit, or (impossible) infeasible */
        return EF_OK;
    r->gpu_status = ILP_FEASIBLE;
    r->gpu_seconds_bound = ceil(lp - ILP_EPS) * x->S;
    int proven, have;
    double bound = lp;
    k = run_mip(x, &proven, &have, &bound, e);
    if (k == EF_ERR)
        return EF_ERR;
    if (have)
        take_solution(x);
    r->gpu_seconds_bound = ceil(bound - ILP_EPS) * x->S;
    if (proven) {
        r->gpu_status = ILP_OPTIMAL;
        r->status = ILP_OPTIMAL;
        r->gpu_seconds_bound = floor(glp_mip_obj_val(P) + 0.5) * x->S;
    }
    return EF_OK;
}

/* Solve: phase 1 (most admitted), then phase 2 (least GPU-time). Returns
 * EF_OK or EF_ERR (not via GLPK's fatal path). Guarded: may longjmp. */
static int solve(ctx *x, ef_err *e)
{
    ilp_result *r = x->r;
    int cand = 0;
    for (int j = 0; j < x->n; j++)
        cand += x->in_model[j] &&
                (!x->hopeless[j] || (x->o->must && x->o->must[j]));
    r->lp_bound = -1;
    r->bound = cand;
    r->gpu_status = ILP_NO_INCUMBENT;
    r->gpu_seconds_bound = -1;
    if (x->o->write_lp) {
        set_objective(x, OBJ_WEIGHTED);
        if (write_lp(x, e) != EF_OK)
            return EF_ERR;
    }
    if (r->cols == 0) { /* no deadline job at all: nothing to decide */
        r->status = r->gpu_status = ILP_OPTIMAL;
        r->lp_bound = r->bound = 0;
        r->gpu_seconds_bound = 0;
        r->admit = ef_calloc((size_t)x->n + 1, sizeof(int));
        r->size = ef_calloc((size_t)x->n * (size_t)x->T + 1, sizeof(int));
        return EF_OK;
    }
    set_objective(x, OBJ_ADMITTED);
    glp_scale_prob(x->P, GLP_SF_AUTO);
    glp_adv_basis(x->P, 0);
    double lp;
    int k = run_lp(x, &lp, e);
    if (k == EF_ERR)
        return EF_ERR;
    if (k == RUN_NOFEAS) {
        r->status = ILP_INFEASIBLE;
        r->bound = -1;
        return EF_OK;
    }
    if (k == RUN_LIMIT) {
        r->status = ILP_NO_INCUMBENT;
        return EF_OK;
    }
    /* the objective counts jobs: no schedule admits more than floor(lp) */
    r->lp_bound = r->bound = (int)floor(lp + ILP_EPS);
    warm_vector(x);
    int proven, have;
    double bound = lp;
    k = run_mip(x, &proven, &have, &bound, e);
    r->warm_start = x->warm_ok;
    if (k == EF_ERR)
        return EF_ERR;
    if (k == RUN_NOFEAS) {
        r->status = ILP_INFEASIBLE;
        r->bound = -1;
        return EF_OK;
    }
    r->bound = (int)floor(bound + ILP_EPS);
    if (!have) {
        r->status = ILP_NO_INCUMBENT;
        return EF_OK;
    }
    take_solution(x);
    if (!proven) {
        r->status = ILP_FEASIBLE;
        return EF_OK;
    }
    r->bound = r->admitted;
    /* admitted count proven; optimal once GPU-time is too */
    r->status = ILP_FEASIBLE;
    if (r->admitted == 0) {
        r->status = r->gpu_status = ILP_OPTIMAL;
        r->gpu_seconds_bound = 0;
        return EF_OK;
    }
    return phase_gpu(x, e);
}

/* Re-check the incumbent exactly, as plan_check counts progress: every
 * admitted job completes by its deadline; slots after completion (only a
 * non-optimal incumbent can have them) are dropped. Sets the totals. */
static int recheck(ctx *x, ef_err *e)
{
    ilp_result *r = x->r;
    int S = x->S, T = x->T;
    r->admitted = 0;
    r->gpu_seconds = 0;
    for (int j = 0; j < x->n; j++) {
        int *sz = &r->size[(size_t)j * T];
        if (!r->admit[j]) {
            for (int t = 0; t < T; t++)
                ef_assert(sz[t] == 0);
            continue;
        }
        const job *jb = &x->q->jobs[j];
        double rem = x->rem[j];
        int64_t end = -1;
        for (int t = 0; t < T; t++) {
            if (sz[t] == 0)
                continue;
            if (end >= 0) {
                sz[t] = 0;
                continue;
            }
            double tp = curve_tput(jb->curve, sz[t]), ovh = 0, ov, used;
            r->gpu_seconds += (double)sz[t] * S;
            if (eng_advance(&rem, &ovh, tp, (double)S, &ov, &used))
                end = x->now + (int64_t)t * S + (int64_t)ceil(used);
        }
        if (end < 0 || end > jb->deadline)
            return ef_fail(e, EF_E_INTERNAL, "the ILP solution misses the "
                           "deadline of job %s by a solver tolerance "
                           "(%.6g iterations short)", jb->id, rem);
        r->admitted++;
    }
    if (r->bound < r->admitted)
        r->bound = r->admitted;
    if (r->status == ILP_OPTIMAL)
        r->bound = r->admitted;
    return EF_OK;
}

/* ---- the time-aggregated relaxation (ilp_relax) -------------------------- */

static int guarded(ctx *x, ef_err *e);

static int cmp_dbl_asc(const void *a, const void *b)
{
    double u = *(const double *)a, v = *(const double *)b;
    return (u > v) - (u < v);
}

static int cmp_int_asc(const void *a, const void *b)
{
    int u = *(const int *)a, v = *(const int *)b;
    return (u > v) - (u < v);
}

/* Refined windows (refine): the previous pass's boundaries, and of the
 * candidates b[0..u-1] (sorted, distinct) those inside a window whose
 * capacity row bound there, evenly spread by index when more than
 * maxw + 1 boundaries in all would be kept. Into x->wb, x->nw. Any set
 * of boundaries is a valid aggregation (ilp.h), so is this one. */
static void refine_windows(ctx *x, const int *b, int u, int maxw)
{
    const refine *rf = x->ref;
    int *in = ef_malloc(((size_t)u + 1) * sizeof(int)); /* inside tight */
    int ni = 0, w = 0;
    for (int i = 0; i < u; i++) {
        while (w < rf->nw && rf->wb[w + 1] <= b[i])
            w++;
        if (w < rf->nw && rf->tight[w] && b[i] > rf->wb[w])
            in[ni++] = b[i];
    }
    int room = maxw - rf->nw; /* boundaries that may be added */
    int *all = ef_malloc(((size_t)rf->nw + 1 + (size_t)ni + 1) *
                         sizeof(int));
    int m = 0;
    for (int i = 0; i <= rf->nw; i++)
        all[m++] = rf->wb[i];
    for (int i = 0; room > 0 && i < ni && i < room; i++)
        all[m++] = in[ni <= room ? i : (int)((long long)i * ni / room)];
    qsort(all, (size_t)m, sizeof *all, cmp_int_asc);
    free(x->wb);
    x->wb = ef_malloc(((size_t)m + 1) * sizeof(int));
    int k = 0;
    for (int i = 0; i < m; i++)
        if (k == 0 || all[i] != x->wb[k - 1])
            x->wb[k++] = all[i];
    x->nw = k - 1;
    free(all);
    free(in);
}

/* The window boundaries x->wb[0..nw] and each job's windows [w0, w1). */
static void relax_windows(ctx *x)
{
    int n = x->n, T = x->T, m = 0;
    int *b = ef_malloc(((size_t)n * 3 + 2) * sizeof(int)); /* candidates */
    b[m++] = 0;
    b[m++] = T;
    for (int j = 0; j < n; j++)
        if (x->in_model[j] && x->nk[j] > 0) {
            b[m++] = x->t0[j];
            b[m++] = x->t1[j] - 1;
            b[m++] = x->t1[j];
        }
    qsort(b, (size_t)m, sizeof *b, cmp_int_asc);
    int u = 0; /* distinct boundaries */
    for (int i = 0; i < m; i++)
        if (u == 0 || b[i] != b[u - 1])
            b[u++] = b[i];
    int maxw = x->o->windows > 0 ? x->o->windows : ILP_RELAX_WINDOWS;
    x->wb = ef_malloc(((size_t)(u < maxw + 1 ? u : maxw + 1) + 1) *
                      sizeof(int));
    if (x->ref && x->ref->nw > 0 && u - 1 > maxw) {
        refine_windows(x, b, u, maxw);
    } else if (u - 1 <= maxw) {
        memcpy(x->wb, b, (size_t)u * sizeof(int));
        x->nw = u - 1;
    } else { /* keep maxw + 1 boundaries evenly spread by index */
        int k = 0;
        for (int i = 0; i <= maxw; i++) {
            int v = b[(int)((long long)i * (u - 1) / maxw)];
            if (k == 0 || v != x->wb[k - 1])
                x->wb[k++] = v;
        }
        x->nw = k - 1;
    }
    free(b);
    x->w0 = ef_calloc((size_t)n + 1, sizeof(int));
    x->w1 = ef_calloc((size_t)n + 1, sizeof(int));
    for (int j = 0; j < n; j++) {
        if (!x->in_model[j] || x->nk[j] == 0)
            continue;
        int w = 0;
        while (w < x->nw && x->wb[w + 1] <= x->t0[j])
            w++;
        x->w0[j] = w;
        while (w < x->nw && x->wb[w] < x->t1[j])
            w++;
        x->w1[j] = w;
    }
}

/* The fewest GPU-slots job j needs alone within its deadline: the larger
 * of L_j (min_gpu_slots: any mix of sizes, no deadline) and the LP
 *   min sum_k k y_k  s.t.  sum_k y_k <= D,  sum_k r_k y_k >= W,  y >= 0
 * (D = its slots, r_k = tput_k * S the full-slot work, an upper bound
 * for the deadline slot), rounded up. Every schedule of j is a point of
 * that LP (y_k = its slots at size k), so both are lower bounds on its
 * GPU-slots. An optimal basis has at most two sizes: the LP is solved by
 * trying every size alone and every pair with both rows tight. */
static double relax_floor(const ctx *x, int j)
{
    int K = x->nk[j];
    if (K == 0)
        return 0;
    double W = x->rem[j] * (1.0 + MSS_MARGIN);
    double D = (double)(x->t1[j] - x->t0[j]);
    double best = HUGE_VAL; /* the LP's optimum */
    for (int a = 0; a < K; a++) {
        double ra = x->kt[j][a] * x->S, ka = x->kg[j][a];
        if (W / ra <= D && ka * W / ra < best)
            best = ka * W / ra;
        for (int b = a + 1; b < K; b++) {
            double rb = x->kt[j][b] * x->S, kb = x->kg[j][b];
            if (rb <= ra)
                continue;
            double yb = (W - ra * D) / (rb - ra), ya = D - yb;
            if (ya >= 0 && yb >= 0 && ka * ya + kb * yb < best)
                best = ka * ya + kb * yb;
        }
    }
    double L = (double)min_gpu_slots(x, j);
    if (best == HUGE_VAL) /* cannot (hopeless, fixed out) */
        return L;
    double c = ceil(best - ILP_EPS * (1.0 + best));
    return c > L ? c : L;
}

/* Slots of job j in window w. */
static int relax_len(const ctx *x, int j, int w)
{
    int lo = x->t0[j] > x->wb[w] ? x->t0[j] : x->wb[w];
    int hi = x->t1[j] < x->wb[w + 1] ? x->t1[j] : x->wb[w + 1];
    return hi > lo ? hi - lo : 0;
}

static int y_col(const ctx *x, int j, int w, int k)
{
    return x->xcol[j] + (w - x->w0[j]) * x->nk[j] + k;
}

static void relax_cuts(ctx *x);

/* C[j,k,w] of the aggregated work row (ilp.h): the work of j's longest
 * slot in window w on its k-th size over W_j, capped at 1 (only the slot
 * holding the deadline is shorter, and it is a window's only slot of j
 * only when it begins the window). */
static double relax_coef(const ctx *x, int j, int w, int k)
{
    const job *jb = &x->q->jobs[j];
    int S = x->S;
    double W = x->rem[j] * (1.0 + MSS_MARGIN);
    int last = x->t1[j] - 1; /* the slot holding the deadline */
    int64_t llen = jb->deadline - (x->now + (int64_t)last * S);
    if (llen > S)
        llen = S;
    int lo = x->t0[j] > x->wb[w] ? x->t0[j] : x->wb[w];
    int64_t len = lo == last ? llen : S; /* longest slot of j in w */
    double cf = x->kt[j][k] * (double)len / W;
    return cf < 1.0 ? cf : 1.0;
}

/* Build the aggregated LP (ilp.h). Guarded: may longjmp. */
static void relax_build(ctx *x)
{
    int n = x->n;
    int named = x->o->write_lp != NULL; /* names only for the LP file */
    glp_prob *P = x->P;
    char name[96];
    relax_windows(x);
    x->gfloor = ef_calloc((size_t)n + 1, sizeof(double));
    for (int j = 0; j < n; j++)
        x->gfloor[j] = x->in_model[j] ? relax_floor(x, j) : 0;
    glp_set_prob_name(P, "efplan_bound");
    int col = 0;
    for (int j = 0; j < n; j++) {
        if (!x->in_model[j])
            continue;
        x->acol[j] = ++col;
        x->xcol[j] = col + 1;
        col += (x->w1[j] - x->w0[j]) * x->nk[j];
    }
    x->rx->cols = col;
    if (col > 0)
        glp_add_cols(P, col);
    for (int j = 0; j < n; j++) {
        if (!x->in_model[j])
            continue;
        int a = x->acol[j];
        if (x->o->must && x->o->must[j])
            glp_set_col_bnds(P, a, GLP_FX, 1.0, 1.0);
        else if (x->hopeless[j])
            glp_set_col_bnds(P, a, GLP_FX, 0.0, 0.0);
        else
            glp_set_col_bnds(P, a, GLP_DB, 0.0, 1.0);
        if (named) {
            snprintf(name, sizeof name, "a_%d", j);
            glp_set_col_name(P, a, name);
        }
        for (int w = x->w0[j]; w < x->w1[j]; w++)
            for (int k = 0; k < x->nk[j]; k++) {
                int c = y_col(x, j, w, k);
                glp_set_col_bnds(P, c, GLP_LO, 0.0, 0.0);
                if (named) {
                    snprintf(name, sizeof name, "y_%d_%d_%d", j, w,
                             x->kg[j][k]);
                    glp_set_col_name(P, c, name);
                }
            }
    }
    if (x->o->fault == ILP_FAULT_GLPK) /* test hook: a column out of range */
        glp_set_col_bnds(P, col + 1, GLP_FX, 0.0, 0.0);
    x->ind = ef_malloc(((size_t)col + 2) * sizeof(int));
    x->val = ef_malloc(((size_t)col + 2) * sizeof(double));
    int *ind = x->ind;
    double *val = x->val;
    /* one[j,w]: sum_k y - l a <= 0 */
    for (int j = 0; j < n; j++)
        for (int w = x->w0[j]; w < x->w1[j] && x->nk[j] > 0; w++) {
            int row = glp_add_rows(P, 1), m = 0;
            if (named) {
                snprintf(name, sizeof name, "one_%d_%d", j, w);
                glp_set_row_name(P, row, name);
            }
            glp_set_row_bnds(P, row, GLP_UP, 0.0, 0.0);
            for (int k = 0; k < x->nk[j]; k++) {
                ind[++m] = y_col(x, j, w, k);
                val[m] = 1.0;
            }
            ind[++m] = x->acol[j];
            val[m] = -(double)relax_len(x, j, w);
            glp_set_mat_row(P, row, m, ind, val);
        }
    /* cap[w]: sum k y <= N L_w (the jobs of a window, by a sweep) */
    x->caprow = ef_calloc((size_t)x->nw + 1, sizeof(int));
    for (int w = 0; w < x->nw; w++) {
        int m = 0;
        for (int j = 0; j < n; j++)
            if (x->nk[j] > 0 && w >= x->w0[j] && w < x->w1[j])
                for (int k = 0; k < x->nk[j]; k++) {
                    ind[++m] = y_col(x, j, w, k);
                    val[m] = x->kg[j][k];
                }
        if (m == 0)
            continue;
        int row = glp_add_rows(P, 1);
        if (named) {
            snprintf(name, sizeof name, "cap_%d", w);
            glp_set_row_name(P, row, name);
        }
        x->caprow[w] = row;
        glp_set_row_bnds(P, row, GLP_UP, 0.0,
                         (double)x->N * (x->wb[w + 1] - x->wb[w]));
        glp_set_mat_row(P, row, m, ind, val);
    }
    /* work[j] and gpu[j] (a hopeless job's work row is -a >= 0) */
    for (int j = 0; j < n; j++) {
        if (!x->in_model[j])
            continue;
        int m = 0;
        for (int w = x->w0[j]; w < x->w1[j]; w++)
            for (int k = 0; k < x->nk[j]; k++) {
                ind[++m] = y_col(x, j, w, k);
                val[m] = relax_coef(x, j, w, k);
            }
        ind[++m] = x->acol[j];
        val[m] = -1.0;
        int row = glp_add_rows(P, 1);
        if (named) {
            snprintf(name, sizeof name, "work_%d", j);
            glp_set_row_name(P, row, name);
        }
        glp_set_row_bnds(P, row, GLP_LO, 0.0, 0.0);
        glp_set_mat_row(P, row, m, ind, val);
        double L = x->gfloor[j];
        if (L <= 0)
            continue;
        m = 0;
        for (int w = x->w0[j]; w < x->w1[j]; w++)
            for (int k = 0; k < x->nk[j]; k++) {
                ind[++m] = y_col(x, j, w, k);
                val[m] = x->kg[j][k];
            }
        ind[++m] = x->acol[j];
        val[m] = -(double)L;
        row = glp_add_rows(P, 1);
        if (named) {
            snprintf(name, sizeof name, "gpu_%d", j);
            glp_set_row_name(P, row, name);
        }
        glp_set_row_bnds(P, row, GLP_LO, 0.0, 0.0);
        glp_set_mat_row(P, row, m, ind, val);
    }
    if (!x->o->no_cuts)
        relax_cuts(x);
    x->rx->rows = glp_get_num_rows(P);
    x->rx->windows = x->nw;
}

/* The least slots job j runs on at least k GPUs (its usable size index
 * ki > 0) in any schedule that does its work: with s such slots and the
 * other D - s on smaller sizes, its work is at most s r_max + (D - s)
 * r_lo (r = tput * S, the full-slot work, an upper bound for the
 * deadline slot; r_lo the fastest size below k, r_max the fastest), so
 * s >= (W - D r_lo) / (r_max - r_lo), and s is whole: rounded up (less
 * the solver's tolerance, so never above the true least). 0 when the
 * smaller sizes alone can do the work. */
static long relax_big_slots(const ctx *x, int j, int ki)
{
    int K = x->nk[j];
    double W = x->rem[j] * (1.0 + MSS_MARGIN);
    double D = (double)(x->t1[j] - x->t0[j]);
    double lo = 0, hi = 0;
    for (int k = 0; k < K; k++) {
        double r = x->kt[j][k] * x->S;
        if (k < ki && r > lo)
            lo = r;
        if (r > hi)
            hi = r;
    }
    if (hi <= lo || D * lo >= W)
        return 0;
    double v = (W - D * lo) / (hi - lo);
    double m = ceil(v - ILP_EPS * (1.0 + v));
    return m > 0 ? (long)m : 0;
}

/* Valid inequalities of the aggregated model that the time-indexed
 * model's integer points satisfy but its LP does not imply (issue 37).
 * Each is a sum, over the slots of a window (or of a job's window), of
 * an inequality every integer point of the exact model satisfies, so
 * the image of every schedule (y = sum of x over the window's slots)
 * still satisfies it: the aggregated LP stays a relaxation of the exact
 * ILP, and its floor a bound on every plan (ilp.h).
 *
 * Tight deadlines (big[j,k]): sum_w sum_{k' >= k} y[j,k',w] >= m a[j],
 * m = relax_big_slots: a job whose window is too short for its work on
 * fewer than k GPUs runs on at least k for m whole slots. When a[j] = 1
 * every schedule has at least m such slots; when 0 the row is y >= 0.
 * The LP implies the row with the fraction m before rounding up; the
 * rounding is what it adds.
 *
 * Conflicts at once (clash[j,w,s]): per size threshold s <= N/2, with
 * z[w,s] = sum_{j', k' > N - s} y[j',k',w] (the slot-runs on more than
 * N - s GPUs in w, one column defined by an equality row):
 *     sum_{s <= k <= N - s} y[j,k,w] + z[w,s] <= L_w,  and z[w,s] <= L_w.
 * Proof: in one slot, of the runs {j on k >= s} u {any job on
 * k' > N - s} at most one happens: two of j's own cannot (one size per
 * slot), j's on k >= s beside another's on k' > N - s need more than N
 * GPUs, and two on more than N - s >= N/2 need more than N. So in every
 * slot t of w: sum_{k >= s} x[j,k,t] + sum_{j' != j, k' > N - s}
 * x[j',k',t] <= 1; summed over w's L_w slots, with j's own runs on more
 * than N - s (>= s) counted once, that is the row. The LP does not imply
 * it: it lets j run on small sizes through the slots a job on the whole
 * cluster fills, as long as the window's GPU-slots add up. Thresholds:
 * of the sizes s <= N/2 giving the same set of sizes above N - s only
 * the smallest (the strongest row); a job without sizes in [s, N - s]
 * gets no row (the bound on z is its row). */
static void relax_cuts(ctx *x)
{
    glp_prob *P = x->P;
    int n = x->n, N = x->N;
    int *ind = x->ind;
    double *val = x->val;
    for (int j = 0; j < n; j++)
        for (int ki = 1; x->in_model[j] && ki < x->nk[j]; ki++) {
            long m = relax_big_slots(x, j, ki);
            if (m <= 0)
                continue;
            int nm = 0;
            for (int w = x->w0[j]; w < x->w1[j]; w++)
                for (int k = ki; k < x->nk[j]; k++) {
                    ind[++nm] = y_col(x, j, w, k);
                    val[nm] = 1.0;
                }
            ind[++nm] = x->acol[j];
            val[nm] = -(double)m;
            int row = glp_add_rows(P, 1);
            glp_set_row_bnds(P, row, GLP_LO, 0.0, 0.0);
            glp_set_mat_row(P, row, nm, ind, val);
            x->rx->cuts++;
        }
    /* the thresholds: distinct usable sizes <= N/2, the smallest of each
     * set of sizes above N - s */
    int sz[64], ns = 0;
    for (int j = 0; j < n; j++)
        for (int k = 0; k < x->nk[j]; k++) {
            int g = x->kg[j][k], i = 0;
            while (i < ns && sz[i] != g)
                i++;
            if (i == ns && ns < 64)
                sz[ns++] = g;
        }
    qsort(sz, (size_t)ns, sizeof *sz, cmp_int_asc);
    int prev = -1; /* the smallest big size of the last threshold kept */
    for (int si = 0; si < ns && 2 * sz[si] <= N; si++) {
        int s = sz[si], bigmin = -1;
        for (int i = 0; i < ns; i++)
            if (sz[i] > N - s) {
                bigmin = sz[i];
                break;
            }
        if (bigmin < 0 || bigmin == prev)
            continue;
        prev = bigmin;
        x->thr[x->nthr++] = s;
    }
    /* z[w,s] and its defining row, per window and threshold */
    x->zcol = ef_calloc((size_t)x->nthr * (size_t)x->nw + 1, sizeof(int));
    for (int ti = 0; ti < x->nthr; ti++)
        for (int w = 0; w < x->nw; w++) {
            int s = x->thr[ti], nm = 0;
            for (int j = 0; j < n; j++)
                if (x->nk[j] > 0 && w >= x->w0[j] && w < x->w1[j])
                    for (int k = 0; k < x->nk[j]; k++)
                        if (x->kg[j][k] > N - s) {
                            ind[++nm] = y_col(x, j, w, k);
                            val[nm] = -1.0;
                        }
            if (nm == 0)
                continue;
            int z = glp_add_cols(P, 1);
            glp_set_col_bnds(P, z, GLP_DB, 0.0,
                             (double)(x->wb[w + 1] - x->wb[w]));
            x->zcol[ti * x->nw + w] = z;
            ind[++nm] = z;
            val[nm] = 1.0;
            int row = glp_add_rows(P, 1);
            glp_set_row_bnds(P, row, GLP_FX, 0.0, 0.0);
            glp_set_mat_row(P, row, nm, ind, val);
        }
}

/* Column c's value in this pass's LP solution (simplex or interior
 * point, x->ipt). Guarded. */
static double relax_prim(const ctx *x, int c)
{
    return x->ipt ? glp_ipt_col_prim(x->P, c) : glp_get_col_prim(x->P, c);
}

/* The conflict rows (relax_cuts) the current LP optimum violates, added
 * to the model; returns how many. Only violated rows are added (rounds
 * of relax_solve): every row is valid, so any subset keeps the bound. */
static int relax_separate(ctx *x)
{
    glp_prob *P = x->P;
    int N = x->N, added = 0;
    int *ind = x->ind;
    double *val = x->val;
    for (int ti = 0; ti < x->nthr; ti++)
        for (int w = 0; w < x->nw; w++) {
            int z = x->zcol[ti * x->nw + w], s = x->thr[ti];
            if (z == 0)
                continue;
            double zv = relax_prim(x, z);
            double L = (double)(x->wb[w + 1] - x->wb[w]);
            for (int j = 0; j < x->n; j++) {
                if (x->nk[j] == 0 || w < x->w0[j] || w >= x->w1[j])
                    continue;
                double lhs = zv;
                int nm = 0;
                for (int k = 0; k < x->nk[j]; k++)
                    if (x->kg[j][k] >= s && x->kg[j][k] <= N - s) {
                        ind[++nm] = y_col(x, j, w, k);
                        val[nm] = 1.0;
                        lhs += relax_prim(x, ind[nm]);
                    }
                if (nm == 0 || lhs <= L + 1e-6 * (1.0 + L))
                    continue;
                ind[++nm] = z;
                val[nm] = 1.0;
                int row = glp_add_rows(P, 1);
                glp_set_row_bnds(P, row, GLP_UP, 0.0, L);
                glp_set_mat_row(P, row, nm, ind, val);
                added++;
            }
        }
    x->rx->cuts += added;
    return added;
}

/* The configuration LP's bound (ilp_config.h) over this pass's windows:
 * the count LP's bound lowered to it when less. Guarded: may longjmp. */
static void relax_config(ctx *x)
{
    ilp_relaxed *r = x->rx;
    int n = x->n, tot = 0;
    x->cfg_off = ef_calloc((size_t)n + 1, sizeof(int));
    for (int j = 0; j < n; j++) {
        x->cfg_off[j] = tot;
        tot += x->nk[j] > 0 ? x->w1[j] - x->w0[j] : 0;
    }
    x->cfg_len = ef_calloc((size_t)tot + 1, sizeof(int));
    x->cfg_cf = ef_calloc(((size_t)tot + 1) * CURVE_MAX_LEVELS,
                          sizeof(double));
    x->cfg_lo = ef_calloc((size_t)n + 1, sizeof(double));
    x->cfg_hi = ef_calloc((size_t)n + 1, sizeof(double));
    x->cfg_L = ef_calloc((size_t)x->nw + 1, sizeof(int));
    for (int w = 0; w < x->nw; w++)
        x->cfg_L[w] = x->wb[w + 1] - x->wb[w];
    for (int j = 0; j < n; j++) {
        if (x->nk[j] == 0)
            continue;
        int must = x->o->must && x->o->must[j];
        x->cfg_lo[j] = must ? 1.0 : 0.0;
        x->cfg_hi[j] = 1.0;
        for (int w = x->w0[j]; w < x->w1[j]; w++) {
            int i = x->cfg_off[j] + w - x->w0[j];
            x->cfg_len[i] = relax_len(x, j, w);
            for (int k = 0; k < x->nk[j]; k++)
                x->cfg_cf[(size_t)i * CURVE_MAX_LEVELS + k] =
                    relax_coef(x, j, w, k);
        }
    }
    cfg_model m = {n, x->N, x->nw, x->cfg_L, x->w0, x->w1, x->nk,
                   (const int (*)[CURVE_MAX_LEVELS])x->kg, x->cfg_off,
                   x->cfg_len, x->cfg_cf, x->cfg_lo, x->cfg_hi,
                   ILP_RELAX_CFG_WORK};
    glp_prob *P = glp_create_prob();
    int rounds, done;
    double v = cfg_bound(&m, P, &x->cfw, &rounds, &done);
    glp_delete_prob(P);
    r->cfg_value = v;
    r->cfg_rounds = rounds;
    r->cfg_done = done;
    int b = (int)floor(v + ILP_EPS);
    if (v >= 0 && b < r->bound)
        r->bound = b;
}

/* Objective of the aggregated LP: max sum a, or min sum k y. */
static void relax_objective(ctx *x, int gpu)
{
    glp_prob *P = x->P;
    glp_set_obj_name(P, gpu ? "gpu_slots" : "admitted");
    glp_set_obj_dir(P, gpu ? GLP_MIN : GLP_MAX);
    for (int j = 0; j < x->n; j++) {
        if (!x->in_model[j])
            continue;
        glp_set_obj_coef(P, x->acol[j], gpu ? 0.0 : 1.0);
        for (int w = x->w0[j]; w < x->w1[j]; w++)
            for (int k = 0; k < x->nk[j]; k++)
                glp_set_obj_coef(P, y_col(x, j, w, k),
                                 gpu ? x->kg[j][k] : 0.0);
    }
}

static int cmp_ll_asc(const void *a, const void *b)
{
    long long u = *(const long long *)a, v = *(const long long *)b;
    return (u > v) - (u < v);
}

/* What relax_round orders a window's runs by: larger sizes first, then
 * the job's index. */
typedef struct rrun {
    int j, g;   /* job, GPUs */
    long slots; /* whole slots */
} rrun;

static int cmp_rrun(const void *a, const void *b)
{
    const rrun *u = a, *v = b;
    if (u->g != v->g)
        return u->g > v->g ? -1 : 1;
    return (u->j > v->j) - (u->j < v->j);
}

/* The share of job j's work that slot t on g GPUs does (0: idle),
 * overheads aside, the deadline slot up to the deadline. */
static double relax_slot_work(const ctx *x, int j, int t, int g)
{
    int64_t st = x->now + (int64_t)t * x->S, dl = x->q->jobs[j].deadline;
    for (int k = 0; g > 0 && k < x->nk[j]; k++)
        if (x->kg[j][k] == g)
            return x->kt[j][k] * (double)(dl - st < x->S ? dl - st : x->S) /
                   (x->rem[j] * (1.0 + MSS_MARGIN));
    return 0;
}

/* relax_round's repair of job j: when its slots fall short of its work,
 * first its slots run on the next larger size where GPUs are free, then
 * free slots of its window at the largest size that fits, in time
 * order; 1 when its slots then do its work (overheads aside: the
 * planner's promise check pays them). fr: free GPUs per slot. */
static int relax_repair(const ctx *x, ilp_result *out, int *fr, int j)
{
    int *sz = out->size + (size_t)j * (size_t)x->T;
    double need = 1.0, have = 0; /* the share of its work */
    for (int t = x->t0[j]; t < x->t1[j]; t++)
        have += relax_slot_work(x, j, t, sz[t]);
    for (int pass = 0; pass < 2 && have < need; pass++)
        for (int t = x->t0[j]; t < x->t1[j] && have < need; t++) {
            if ((pass == 0) != (sz[t] > 0))
                continue;
            int best = -1; /* the size to run in t */
            for (int k = 0; k < x->nk[j]; k++)
                if (x->kg[j][k] > sz[t] && x->kg[j][k] - sz[t] <= fr[t] &&
                    (pass == 1 || best < 0))
                    best = k;
            if (best < 0)
                continue;
            have += relax_slot_work(x, j, t, x->kg[j][best]) -
                    relax_slot_work(x, j, t, sz[t]);
            fr[t] -= x->kg[j][best] - sz[t];
            sz[t] = x->kg[j][best];
        }
    return have >= need;
}

/* The LP optimum as a schedule of whole slots (ilp_opts.lp_sched): the
 * jobs with a[j] >= 1/2, and in each window each such job's runs
 * y[j,k,w] rounded up to whole slots, placed largest size first, each
 * in the window's slots where the job does not run yet and k GPUs are
 * free, those with the fewest free first (best fit: room is kept for
 * larger runs), the earliest among equals; a run that finds no room is
 * cut short. Then each job short of its work is repaired
 * (relax_repair), earliest deadline first, twice over; one still short
 * is dropped (its GPUs freed), and the dropped ones are tried once more
 * from nothing with what the others left. Not a bound and not
 * checked here: the planner takes it as reservations only where its
 * promise check holds (ilp_hint_plan). Guarded (reads GLPK's solution). */
static void relax_round(ctx *x, ilp_result *out)
{
    int n = x->n, T = x->T;
    ilp_result_free(out);
    memset(out, 0, sizeof *out);
    out->now = x->now;
    out->slot = x->S;
    out->njobs = n;
    out->nslots = T;
    out->admit = ef_calloc((size_t)n + 1, sizeof(int));
    out->size = ef_calloc((size_t)n * (size_t)T + 1, sizeof(int));
    int *fr = ef_malloc(((size_t)T + 1) * sizeof(int)); /* free GPUs */
    for (int t = 0; t < T; t++)
        fr[t] = x->N;
    for (int j = 0; j < n; j++)
        if (x->in_model[j] && x->nk[j] > 0 &&
            relax_prim(x, x->acol[j]) >= 0.5) {
            out->admit[j] = 1;
            out->admitted++;
        }
    rrun *rr = ef_malloc(((size_t)n * CURVE_MAX_LEVELS + 1) * sizeof *rr);
    long long *key = ef_malloc(((size_t)T + 1) * sizeof *key); /* slots */
    for (int w = 0; w < x->nw; w++) {
        int m = 0;
        for (int j = 0; j < n; j++) {
            if (!out->admit[j] || w < x->w0[j] || w >= x->w1[j])
                continue;
            for (int k = 0; k < x->nk[j]; k++) {
                double y = relax_prim(x, y_col(x, j, w, k));
                long c = (long)ceil(y - 1e-6);
                if (c > 0)
                    rr[m++] = (rrun){j, x->kg[j][k], c};
            }
        }
        qsort(rr, (size_t)m, sizeof *rr, cmp_rrun);
        int lo = x->wb[w], hi = x->wb[w + 1];
        for (int i = 0; i < m; i++) {
            int *sz = out->size + (size_t)rr[i].j * (size_t)T;
            long left = rr[i].slots;
            int a = x->t0[rr[i].j] > lo ? x->t0[rr[i].j] : lo;
            int b = x->t1[rr[i].j] < hi ? x->t1[rr[i].j] : hi;
            /* best fit: the slots with the fewest free GPUs that hold
             * it first (the earliest among equals), keeping room for
             * larger runs */
            int nc = 0;
            for (int t = a; t < b; t++)
                if (sz[t] == 0 && fr[t] >= rr[i].g)
                    key[nc++] = (long long)fr[t] * ((long long)T + 1) + t;
            qsort(key, (size_t)nc, sizeof *key, cmp_ll_asc);
            for (int c = 0; c < nc && left > 0; c++, left--) {
                int t = (int)(key[c] % ((long long)T + 1));
                sz[t] = rr[i].g;
                fr[t] -= rr[i].g;
            }
        }
    }
    free(key);
    free(rr);
    /* the repair, earliest deadline first (the comment above) */
    int *ord = ef_malloc(((size_t)n + 1) * sizeof(int)); /* by deadline */
    int no = 0;
    for (int j = 0; j < n; j++) {
        if (!out->admit[j])
            continue;
        int i = no++;
        while (i > 0 && x->q->jobs[ord[i - 1]].deadline >
                            x->q->jobs[j].deadline) {
            ord[i] = ord[i - 1];
            i--;
        }
        ord[i] = j;
    }
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < no; i++) {
            int j = ord[i];
            if (out->admit[j] && !relax_repair(x, out, fr, j)) {
                int *sz = out->size + (size_t)j * (size_t)T;
                for (int t = x->t0[j]; t < x->t1[j]; t++) {
                    fr[t] += sz[t];
                    sz[t] = 0;
                }
                out->admit[j] = 0;
                out->admitted--;
            }
        }
    /* the dropped ones again, from nothing, with what the others left */
    for (int i = 0; i < no; i++) {
        int j = ord[i];
        if (out->admit[j])
            continue;
        if (relax_repair(x, out, fr, j)) {
            out->admit[j] = 1;
            out->admitted++;
        } else {
            int *sz = out->size + (size_t)j * (size_t)T;
            for (int t = x->t0[j]; t < x->t1[j]; t++) {
                fr[t] += sz[t];
                sz[t] = 0;
            }
        }
    }
    free(ord);
    free(fr);
}

/* A bound on the LP's optimum (above it for the count LP, a maximum;
 * below it for the GPU-time LP, a minimum) from the row prices of the
 * solution just found, however accurate they are (the interior-point
 * method stops at a small gap, relax_use_ipt). For any prices y and
 * d = c - A^T y, every point x of the LP, with rows r = A x, has
 *     c x = c0 + sum_c d_c x_c + sum_i y_i r_i,
 * and each term lies between its least and its most over a box that
 * holds every point of the LP: each row between its bounds, each column
 * between its own (a y[j,w,k], which has none above, at most l[j,w]:
 * one[j,w] with a[j] <= 1 implies it). A price whose row has no bound on
 * the side it would need is taken as 0 (any prices give a bound), so the
 * sum is finite; at optimal prices it is the LP's optimum, otherwise
 * beyond it. So the bound is valid whatever the solver's accuracy
 * (floating-point rounding of the sums aside). Returns HUGE_VAL (a
 * maximum) or -HUGE_VAL (a minimum) when a column has no bound on the
 * side its d needs. Guarded. */
static double relax_dual_bound(ctx *x)
{
    glp_prob *P = x->P;
    int m = glp_get_num_rows(P), nc = glp_get_num_cols(P);
    double sg = glp_get_obj_dir(P) == GLP_MAX ? 1.0 : -1.0; /* max sg c x */
    free(x->dd);
    free(x->dval);
    free(x->dind);
    x->dd = ef_malloc(((size_t)nc + 1) * 2 * sizeof(double));
    x->dval = ef_malloc(((size_t)nc + 1) * sizeof(double));
    x->dind = ef_malloc(((size_t)nc + 1) * sizeof(int));
    double *d = x->dd, *u = x->dd + nc + 1; /* sg d, each column's most */
    double sum = sg * glp_get_obj_coef(P, 0);
    for (int c = 1; c <= nc; c++) {
        int t = glp_get_col_type(P, c);
        d[c] = sg * glp_get_obj_coef(P, c);
        u[c] = t == GLP_DB || t == GLP_UP || t == GLP_FX
                   ? glp_get_col_ub(P, c) : HUGE_VAL;
    }
    for (int j = 0; j < x->n; j++)
        for (int w = x->w0[j]; x->in_model[j] && w < x->w1[j]; w++)
            for (int k = 0; k < x->nk[j]; k++) {
                int c = y_col(x, j, w, k);
                if (u[c] > relax_len(x, j, w))
                    u[c] = relax_len(x, j, w);
            }
    for (int i = 1; i <= m; i++) {
        double y = sg * (x->ipt ? glp_ipt_row_dual(P, i)
                                : glp_get_row_dual(P, i));
        int t = glp_get_row_type(P, i);
        int up = t == GLP_UP || t == GLP_DB || t == GLP_FX;
        int lo = t == GLP_LO || t == GLP_DB || t == GLP_FX;
        if (y == 0 || (y > 0 && !up) || (y < 0 && !lo))
            continue;
        sum += y * (y > 0 ? glp_get_row_ub(P, i) : glp_get_row_lb(P, i));
        int len = glp_get_mat_row(P, i, x->dind, x->dval);
        for (int k = 1; k <= len; k++)
            d[x->dind[k]] -= y * x->dval[k];
    }
    for (int c = 1; c <= nc; c++) {
        int t = glp_get_col_type(P, c);
        if (d[c] > 0) {
            if (u[c] == HUGE_VAL)
                return sg * HUGE_VAL;
            sum += d[c] * u[c];
        } else if (d[c] < 0) {
            if (t == GLP_FR || t == GLP_UP)
                return sg * HUGE_VAL;
            sum += d[c] * glp_get_col_lb(P, c);
        }
    }
    return sg * sum;
}

/* The LP by the interior-point method (relax_use_ipt): *obj is
 * relax_dual_bound's bound on its optimum. GLPK's method has no time or
 * iteration limit to set; where it stops short of an optimum (its own
 * iteration limit, numerical trouble) with a point, that point's prices
 * still prove a bound (relax_dual_bound holds for any prices): it is
 * taken, x->ipt_rough set (the point is no optimum: it neither guides
 * nor refines) and limit_hit says "iterations". With no point at all the
 * pass stops (RUN_LIMIT). Returns RUN_* or EF_ERR. Guarded. */
static int run_ipt(ctx *x, double *obj, ef_err *e)
{
    (void)e;
    if (ms_left(x) == 0) {
        x->r->limit_hit = 1;
        return RUN_LIMIT;
    }
    glp_iptcp ip;
    glp_init_iptcp(&ip);
    ip.msg_lev = GLP_MSG_OFF;
    int rc = glp_interior(x->P, &ip);
    int st = glp_ipt_status(x->P);
    if ((rc != 0 && rc != GLP_ENOCVG && rc != GLP_EITLIM &&
         rc != GLP_EINSTAB) || st == GLP_UNDEF) {
        x->r->limit_hit = 3;
        return RUN_LIMIT;
    }
    *obj = relax_dual_bound(x);
    if (*obj == HUGE_VAL || *obj == -HUGE_VAL) {
        x->r->limit_hit = 3;
        return RUN_LIMIT;
    }
    x->rx->ipt = 1;
    x->ipt_rough = rc != 0 || st != GLP_OPT;
    return RUN_DONE;
}

/* Whether this pass's LPs are solved by the interior-point method
 * (ILP_LP_AUTO, ilp.h): a refined pass (a budget, x->work) of more than
 * ILP_RELAX_IPT_ROWS rows. GLPK's interior-point method is
 * deterministic, like the simplex method: no clock decides. */
static int relax_use_ipt(const ctx *x)
{
    if (x->o->lp_method != ILP_LP_AUTO)
        return x->o->lp_method == ILP_LP_INTERIOR;
    return x->work > 0 && x->rx->rows > ILP_RELAX_IPT_ROWS;
}

/* The GPU-time bound of a solved count LP (relax_solve): the least
 * GPU-slots with sum a >= m, m the warm plan's count (at most the
 * bound): the jobs' own floors, then the second LP where the model is
 * small enough. Returns EF_OK or EF_ERR. Guarded: may longjmp. */
static int relax_gpu(ctx *x, ef_err *e)
{
    ilp_relaxed *r = x->rx;
    double lp;
    int k;
    int m = x->o->warm ? x->o->warm->admitted : r->bound;
    if (m > r->bound)
        m = r->bound;
    r->gpu_for = m;
    /* the jobs' own floors: the must jobs', then the m - (must) least */
    double *fl = ef_malloc(((size_t)x->n + 1) * sizeof(double));
    int nf = 0, nmust = 0;
    double sum = 0; /* GPU-slots */
    for (int j = 0; j < x->n; j++) {
        if (!x->in_model[j])
            continue;
        if (x->o->must && x->o->must[j]) {
            sum += x->gfloor[j];
            nmust++;
        } else if (!x->hopeless[j]) {
            fl[nf++] = x->gfloor[j];
        }
    }
    qsort(fl, (size_t)nf, sizeof *fl, cmp_dbl_asc);
    for (int i = 0; i < m - nmust && i < nf; i++)
        sum += fl[i];
    free(fl);
    r->gpu_seconds_bound = sum * x->S;
    r->gpu_lp = 0;
    if (r->cols > ILP_RELAX_GPU_COLS || x->ipt_rough)
        return EF_OK;
    int nm = 0;
    for (int j = 0; j < x->n; j++)
        if (x->in_model[j]) {
            x->ind[++nm] = x->acol[j];
            x->val[nm] = 1.0;
        }
    int row = glp_add_rows(x->P, 1);
    glp_set_row_bnds(x->P, row, GLP_LO, (double)m, 0.0);
    glp_set_mat_row(x->P, row, nm, x->ind, x->val);
    relax_objective(x, 1);
    if (x->ipt) { /* its own solve; when it does not converge, the floors */
        int lh = x->r->limit_hit;
        k = run_ipt(x, &lp, e);
        x->r->limit_hit = lh;
        if (k == RUN_LIMIT)
            return EF_OK;
    } else {
        k = run_lp(x, &lp, e);
    }
    if (k == EF_ERR)
        return EF_ERR;
    if (k == RUN_DONE) {
        double v = ceil(lp - ILP_EPS) * x->S;
        r->gpu_lp = 1;
        if (v > r->gpu_seconds_bound)
            r->gpu_seconds_bound = v;
    } else if (k == RUN_LIMIT) {
        r->limit_hit = x->r->limit_hit == 3 ? 2 : 1;
    }
    return EF_OK;
}

/* Solve the aggregated LP: the count bound, then the GPU-time bound.
 * Guarded: may longjmp. */
static int relax_solve(ctx *x, ef_err *e)
{
    ilp_relaxed *r = x->rx;
    int cand = 0; /* the trivial bound */
    for (int j = 0; j < x->n; j++)
        cand += x->in_model[j] &&
                (!x->hopeless[j] || (x->o->must && x->o->must[j]));
    r->bound = cand;
    r->lp_value = -1;
    r->gpu_seconds_bound = -1;
    relax_objective(x, 0);
    if (x->o->write_lp && write_lp(x, e) != EF_OK)
        return EF_ERR;
    if (r->cols == 0) {
        r->status = ILP_OPTIMAL;
        r->lp_value = 0;
        r->bound = 0;
        r->gpu_seconds_bound = 0;
        return EF_OK;
    }
    glp_scale_prob(x->P, GLP_SF_AUTO);
    if (x->work > 0) { /* the iterations that budget buys at this size */
        double it = x->work / (r->rows > 0 ? r->rows : 1);
        x->it_lim = it > 2e9 ? 2000000000 : it < 1000 ? 1000 : (int)it;
    }
    x->ipt = relax_use_ipt(x);
    if (!x->ipt)
        glp_adv_basis(x->P, 0);
    double lp;
    int k = x->ipt ? run_ipt(x, &lp, e) : run_lp(x, &lp, e);
    if (k == RUN_LIMIT && x->ipt && x->work <= 0) { /* no point at all:
        the simplex method (with a budget it would not finish either) */
        x->ipt = 0;
        x->r->limit_hit = 0;
        glp_adv_basis(x->P, 0);
        k = run_lp(x, &lp, e);
    }
    if (k == EF_ERR)
        return EF_ERR;
    if (k == RUN_NOFEAS) {
        r->status = ILP_INFEASIBLE;
        r->bound = -1;
        return EF_OK;
    }
    if (k == RUN_LIMIT) {
        r->status = ILP_NO_INCUMBENT;
        r->limit_hit = x->r->limit_hit == 3 ? 2 : 1;
        return EF_OK;
    }
    /* rounds of the conflict rows the optimum violates (relax_cuts), not
     * where each would be a whole interior-point solve: on the refined
     * passes measured they moved the LP by under 1e-5 and took longer
     * than the solve itself */
    for (int round = 0; !x->ipt && round < RELAX_CUT_ROUNDS &&
                        relax_separate(x) > 0;
         round++) {
        k = run_lp(x, &lp, e);
        if (k == EF_ERR)
            return EF_ERR;
        if (k != RUN_DONE) { /* stopped with rows added: no optimum */
            r->status = ILP_NO_INCUMBENT;
            r->limit_hit = x->r->limit_hit == 3 ? 2 : 1;
            return EF_OK;
        }
    }
    r->rows = glp_get_num_rows(x->P);
    r->status = ILP_OPTIMAL;
    if (x->ipt_rough) /* a bound, from a point short of the optimum */
        r->limit_hit |= 2;
    if (x->ref && !x->ipt_rough) { /* the windows whose capacity binds,
                                      for the next pass */
        refine *rf = x->ref;
        free(rf->wb);
        free(rf->tight);
        rf->nw = x->nw;
        rf->wb = ef_malloc(((size_t)x->nw + 1) * sizeof(int));
        memcpy(rf->wb, x->wb, ((size_t)x->nw + 1) * sizeof(int));
        rf->tight = ef_calloc((size_t)x->nw + 1, 1);
        for (int w = 0; w < x->nw; w++) {
            /* an interior point's prices are nowhere exactly 0: those
             * of rows that do not bind are of the order of its gap */
            double dv = !x->caprow[w] ? 0
                        : x->ipt ? glp_ipt_row_dual(x->P, x->caprow[w])
                                 : glp_get_row_dual(x->P, x->caprow[w]);
            rf->tight[w] = fabs(dv) > (x->ipt ? 1e-6 : 1e-9);
        }
    }
    r->lp_value = lp;
    r->bound = (int)floor(lp + ILP_EPS);
    r->cfg_value = -1;
    if (!x->o->no_cuts && (!x->o->warm || r->bound > x->o->warm->admitted))
        relax_config(x);
    if (x->o->lp_sched)
        relax_round(x, x->o->lp_sched);
    if (x->o->lp_admit)
        for (int j = 0; j < x->n; j++)
            x->o->lp_admit[j] =
                x->in_model[j] ? relax_prim(x, x->acol[j]) : 0.0;
    return relax_gpu(x, e);
}

/* One pass of ilp_relax with o->windows windows, each LP within 'work'
 * simplex iterations times rows (0 = no limit), its windows refined by
 * 'ref' (may be NULL; filled with this pass's binding windows). */
static int relax_once(const job_queue *q, const cluster *c, const ilp_opts *o,
                      refine *ref, double work, ilp_relaxed *r, ef_err *e)
{
    memset(r, 0, sizeof *r);
    if (o->slot <= 0)
        return ef_fail(e, EF_E_USAGE, "slot must be positive");
    ilp_result counts; /* plan_shape's job counts */
    memset(&counts, 0, sizeof counts);
    ctx x;
    ctx_start(&x, q, c, o, &counts, r);
    x.ref = ref;
    x.work = work;
    r->slot = o->slot;
    r->njobs = q->n;
    int rc = plan_shape(&x, e);
    if (rc == EF_OK) {
        r->now = x.now;
        r->nslots = x.T;
        r->exact_binaries = x.bins + counts.deadline_jobs;
        r->deadline_jobs = counts.deadline_jobs;
        r->hopeless = counts.hopeless;
        rc = guarded(&x, e);
    }
    r->seconds = ef_mono_seconds() - x.t_start;
    r->first_bound = -1;
    ctx_free(&x);
    if (rc != EF_OK) {
        memset(r, 0, sizeof *r);
        return EF_ERR;
    }
    return EF_OK;
}

/* The passes of ilp_relax when o->windows is 0: a coarse model first
 * (a bound within seconds even on a contended queue), then the coarse
 * windows whose capacity binds refined, up to the default count, within
 * a budget of ILP_RELAX_WORK simplex iterations times rows per LP. */
static const int relax_passes[] = {60, ILP_RELAX_WINDOWS};
static const double relax_work[] = {0, ILP_RELAX_WORK};

int ilp_relax(const job_queue *q, const cluster *c, const ilp_opts *o,
              ilp_relaxed *r, ef_err *e)
{
    if (o->lp_admit)
        memset(o->lp_admit, 0, (size_t)q->n * sizeof *o->lp_admit);
    if (o->windows > 0)
        return relax_once(q, c, o, NULL, 0, r, e);
    double t0 = ef_mono_seconds();
    refine rf; /* pass 1's binding windows */
    memset(&rf, 0, sizeof rf);
    long iters = 0; /* simplex iterations of every pass */
    int first = -1; /* the first pass's bound */
    ilp_relaxed best; /* the pass with the least bound so far */
    int have = 0;
    int vertex = 0; /* lp_admit is a simplex pass's */
    double *pa = o->lp_admit /* this pass's a[j] */
                     ? ef_calloc((size_t)q->n + 1, sizeof *pa) : NULL;
    ilp_result ps; /* this pass's rounded schedule (o->lp_sched) */
    memset(&ps, 0, sizeof ps);
    for (size_t i = 0; i < sizeof relax_passes / sizeof *relax_passes; i++) {
        ilp_opts po = *o;
        ilp_relaxed pr;
        po.windows = relax_passes[i];
        po.lp_admit = pa;
        po.lp_sched = o->lp_sched ? &ps : NULL;
        if (o->time_limit > 0) {
            po.time_limit = o->time_limit - (ef_mono_seconds() - t0);
            if (po.time_limit <= 0.001)
                break;
        }
        if (relax_once(q, c, &po, &rf, relax_work[i], &pr, e) != EF_OK) {
            free(pa);
            ilp_result_free(&ps);
            free(rf.wb);
            free(rf.tight);
            return EF_ERR;
        }
        iters += pr.lp_iters;
        if (i == 0)
            first = pr.status == ILP_OPTIMAL ? pr.bound : -1;
        double gb = have && best.gpu_seconds_bound > pr.gpu_seconds_bound
                        ? best.gpu_seconds_bound : pr.gpu_seconds_bound;
        int glp = have && best.gpu_seconds_bound > pr.gpu_seconds_bound
                      ? best.gpu_lp : pr.gpu_lp;
        if (!have || (pr.status == ILP_OPTIMAL &&
                      (best.status != ILP_OPTIMAL || pr.bound <= best.bound))) {
            best = pr;
            /* the guidance (lp_admit, lp_sched): a vertex's over an
             * interior point's (ILP_LP_AUTO, ilp.h) */
            int guide = pr.status == ILP_OPTIMAL && (!pr.ipt || !vertex);
            vertex |= guide && !pr.ipt;
            if (pa && guide)
                memcpy(o->lp_admit, pa, (size_t)q->n * sizeof *pa);
            if (o->lp_sched && guide && ps.admit) {
                ilp_result_free(o->lp_sched);
                *o->lp_sched = ps;
                memset(&ps, 0, sizeof ps);
            }
        }
        best.gpu_seconds_bound = gb; /* every pass's is a bound: the most */
        best.gpu_lp = glp;
        best.limit_hit |= pr.limit_hit;
        have = 1;
        if (best.status == ILP_INFEASIBLE || pr.windows < relax_passes[i])
            break; /* infeasible, or already every boundary */
        if (o->warm && best.status == ILP_OPTIMAL &&
            best.bound <= o->warm->admitted)
            break; /* the warm plan reaches the bound: it cannot drop */
    }
    free(pa);
    ilp_result_free(&ps);
    free(rf.wb);
    free(rf.tight);
    if (!have) /* no time at all: say so */
        return relax_once(q, c, o, NULL, 0, r, e);
    best.seconds = ef_mono_seconds() - t0;
    best.lp_iters = iters;
    best.first_bound = first;
    *r = best;
    return EF_OK;
}

/* The guarded region: every GLPK call happens below a setjmp. */
static int guarded(ctx *x, ef_err *e)
{
    jmp_buf jb;
    x->jb = &jb;
    x->msg[0] = 0;
    if (setjmp(jb) != 0) {
        /* GLPK's environment is gone (error_hook freed it) */
        x->P = NULL;
        size_t l = strlen(x->msg);
        while (l && (x->msg[l - 1] == '\n' || x->msg[l - 1] == '\r'))
            x->msg[--l] = 0;
        return ef_fail(e, EF_E_INTERNAL, "GLPK failed: %s",
                       x->msg[0] ? x->msg : "fatal error");
    }
    glp_error_hook(error_hook, x);
    glp_term_hook(term_hook, x);
    glp_term_out(GLP_OFF);
    x->P = glp_create_prob();
    int rc;
    if (x->rx) {
        relax_build(x);
        rc = relax_solve(x, e);
    } else {
        build(x);
        rc = solve(x, e);
    }
    glp_delete_prob(x->P);
    x->P = NULL;
    glp_error_hook(NULL, NULL);
    glp_term_hook(NULL, NULL);
    glp_free_env();
    return rc;
}

int ilp_solve(const job_queue *q, const cluster *c, const ilp_opts *o,
              ilp_result *r, ef_err *e)
{
    memset(r, 0, sizeof *r);
    if (o->slot <= 0)
        return ef_fail(e, EF_E_USAGE, "slot must be positive");
    ctx x;
    ctx_start(&x, q, c, o, r, NULL);
    r->slot = o->slot;
    r->njobs = q->n;
    int rc = plan_shape(&x, e);
    if (rc == EF_OK) {
        r->now = x.now;
        r->nslots = x.T;
        rc = guarded(&x, e);
    }
    if (rc == EF_OK && r->admit)
        rc = recheck(&x, e);
    r->seconds = ef_mono_seconds() - x.t_start;
    ctx_free(&x);
    if (rc != EF_OK)
        ilp_result_free(r);
    return rc;
}

long ilp_binaries(const job_queue *q, const cluster *c, const ilp_opts *o)
{
    if (o->slot <= 0)
        return -1;
    ilp_result r;  /* the counts plan_shape fills */
    ilp_relaxed rx; /* makes plan_shape count past ILP_MAX_BINARIES */
    memset(&r, 0, sizeof r);
    memset(&rx, 0, sizeof rx);
    ctx x;
    ctx_start(&x, q, c, o, &r, &rx);
    ef_err e; /* why the shape failed: not reported */
    long bins = plan_shape(&x, &e) == EF_OK ? x.bins + r.deadline_jobs
                                            : -1;
    ctx_free(&x);
    return bins;
}

/* ---- the incumbent as a plan --------------------------------------------- */

int ilp_to_plan(const ilp_result *r, const job_queue *q, const cluster *c,
                plan *p, ef_err *e)
{
    memset(p, 0, sizeof *p);
    if (!r->admit || (r->status != ILP_OPTIMAL && r->status != ILP_FEASIBLE))
        return ef_fail(e, EF_E_INFEASIBLE, "the ILP has no solution to write "
                       "(status %s)", ilp_status_name(r->status));
    int n = q->n;
    plan_opts po;
    plan_opts_default(&po);
    po.slot = r->slot;
    po.now = r->now;
    plan_decision *dec = ef_malloc((size_t)(n ? n : 1) * sizeof *dec);
    for (int j = 0; j < n; j++)
        dec[j] = !q->jobs[j].has_deadline ? PLAN_BEST_EFFORT
                 : r->admit[j]            ? PLAN_ADMITTED
                                          : PLAN_REJECTED;
    char why[64];
    snprintf(why, sizeof why, "not admitted in the ILP's %s solution",
             r->status == ILP_OPTIMAL ? "optimal" : "best found");
    int rc = plan_from_sizes(p, q, c, &po, dec, why, r->size, r->nslots, e);
    free(dec);
    return rc;
}

