/*
 * ilp_config.h: the configuration LP of the time-aggregated model
 * (cfg_*), a second bound beside ilp_relax's LP (ilp.h), by column
 * generation. Internal to solver/: ilp.c fills the model from its
 * windows and calls it inside its GLPK guard.
 *
 * THE MODEL. The windows of the aggregated model (ilp.h: window w of
 * L_w slots, job j in l[j,w] of them, work coefficient C[j,k,w] the
 * largest of its slots there). A configuration p of window w gives each
 * job of w a size p_j (0 = not running, else one of its usable sizes)
 * with sum_j p_j <= N: what one slot of w can hold. Columns: a[j] in
 * [lo_j, hi_j] and n[w,p] >= 0, "slots of w that run configuration p".
 * Rows:
 *   conv[w]:  sum_p n[w,p] <= L_w
 *   one[j,w]: sum_{p: p_j > 0} n[w,p] - l[j,w] a[j] <= 0
 *   work[j]:  sum_{w,p: p_j > 0} C[j,p_j,w] n[w,p] - a[j] >= 0
 * Objective: max sum_j a[j].
 * Proof that it bounds every schedule of the time-indexed model: take
 * any feasible point (a, x) and let n[w,p] count the slots of w in which
 * the jobs run exactly the sizes p (each slot runs one size or none per
 * job, at most N GPUs in all: one configuration). The slots of w are
 * L_w (conv); j runs only in its l[j,w] slots of w and only if admitted
 * (one); each of its runs does at most C of its work there (work, as in
 * ilp.h's aggregated rows). So (a, n) is feasible and has the same
 * objective: LP* >= ILP*. Unlike the aggregated LP it knows which sizes
 * fit in one slot together: two jobs on 16 of 32 GPUs leave no room for a
 * third, even when the window's GPU-slots add up.
 *
 * THE BOUND, valid at every step. The configurations are too many to
 * list; they are generated (pricing: a multiple-choice knapsack of
 * capacity N per window, exact by dynamic programming). Any multipliers
 * pi_one >= 0, pi_work <= 0 (GLPK's duals of the restricted LP, clamped
 * to those signs) give the Lagrangian bound, with conv kept:
 *   LP* <= sum_j max over a in {lo_j, hi_j} of a (1 + pi_work_j +
 *          sum_w l[j,w] pi_one[j,w])
 *        + sum_w L_w max(0, max_p sum_{j: p_j > 0} -(pi_one[j,w] +
 *          pi_work_j C[j,p_j,w]))
 * (the rows other than conv have right-hand side 0; for fixed
 * multipliers the Lagrangian is linear in a and in n, whose feasible set
 * is a box times L_w times the simplex of configurations: its maximum is
 * that sum, and the pricing computes each window's maximum exactly). So
 * stopping the generation early (its budget) still leaves a bound; when
 * no configuration prices out it equals the LP's optimum. With a job
 * fixed admitted (lo_j = 1, --must-admit) the first restricted LP has no
 * column to do its work and is infeasible: the generation stops at once
 * and the bound is the trivial one (sum of hi_j), valid but no help.
 */
#ifndef EF_ILP_CONFIG_H
#define EF_ILP_CONFIG_H

#include "model/curve.h"

typedef struct cfg_model {
    int n;                  /* jobs */
    int N;                  /* GPUs of the cluster */
    int nw;                 /* windows */
    const int *L;           /* nw window lengths, slots */
    const int *w0, *w1;     /* per job its windows [w0, w1); none: equal */
    const int *nk;          /* per job usable sizes (0: no columns) */
    const int (*kg)[CURVE_MAX_LEVELS]; /* per job its sizes, ascending */
    const int *off;         /* per job: its first entry in len (per window)
                               and, times CURVE_MAX_LEVELS, in cf */
    const int *len;         /* l[j,w] at off[j] + (w - w0[j]) */
    const double *cf;       /* C[j,k,w] at (off[j] + w - w0[j]) *
                               CURVE_MAX_LEVELS + k */
    const double *lo, *hi;  /* per job the bounds of a[j] */
    double budget;          /* pricing work (jobs x sizes x (N + 1) per
                               window priced): it runs only when 200
                               rounds fit in it (its rounds' LPs grow with
                               the model: a small model only), and at most
                               200 rounds */
} cfg_model;

/* Scratch of one run; zero it first, free with cfg_work_free (also
 * after a GLPK error longjmp'd out of cfg_bound). */
typedef struct cfg_work {
    double *dp;
    int *ch;
    int *ind;
    double *val;
    int *onerow;            /* per job per window (off), 0 none */
    int *sz;                /* a configuration being built */
    int *convrow, *workrow; /* per window, per job: their rows */
} cfg_work;

void cfg_work_free(cfg_work *w);

/*
 * cfg_bound: -1 when 200 rounds of pricing would not fit in m->budget
 * (not run), else the least Lagrangian bound (header) over the rounds of
 * column generation on model 'm', GLPK problem 'P' (created empty by the
 * caller, deleted by it): a valid upper bound on the admitted count of
 * every schedule of the time-indexed model. *rounds gets the rounds,
 * *done 1 when the generation finished (the bound is then the LP's
 * optimum), 0 when the budget stopped it. Deterministic: the same model
 * gives the same rounds and bound. May longjmp (GLPK error hook).
 */
double cfg_bound(const cfg_model *m, void *P, cfg_work *wk, int *rounds,
                 int *done);

#endif
