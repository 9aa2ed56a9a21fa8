/* cmd_oracle_text.c: "efplan oracle"'s answer for a person (see
 * cmd_oracle.h). */
#include "cli/cmd_oracle.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

#include "planner/offline.h"

/* Ids named on one line before "and N more". */
#define ORACLE_IDS_SHOWN 12

/* The first line: the instance. */
static void print_head(const ilp_report *rp)
{
    const plan *g = rp->greedy;
    const ilp_result *r = rp->ilp;
    const ilp_relaxed *x = rp->relaxed;
    printf("oracle   %d jobs (%d with deadline) on %s (%d GPUs), %d slots of "
           "%d s from %" PRId64 "\n", rp->q->n,
           r ? r->deadline_jobs : x->deadline_jobs, g->cl.name,
           g->cl.total_gpus, r ? r->nslots : x->nslots, r ? r->slot : x->slot,
           r ? r->now : x->now);
}

/* The exact ILP's model, table and status. */
static void print_ilp(const plan *g, const ilp_result *r)
{
    char buf[64];
    printf("  model  %d rows, %d binaries; %d jobs cannot finish even alone; "
           "warm start %s\n", r->rows, r->binaries, r->hopeless,
           r->warm_start > 0 ? "accepted" : r->warm_start < 0 ? "rejected"
                                                             : "not used");
    printf("  %-7s %-13s %8s %6s %10s %8s %8s\n", "", "status", "admitted",
           "bound", "GPU-hours", "nodes", "seconds");
    printf("  %-7s %-13s %8d %6s %10.2f %8s %8s\n", "greedy", "-", g->admitted,
           "-", g->promised_gpu_seconds / 3600.0, "-", "-");
    char adm[16] = "-", bnd[16] = "-", gh[24] = "-";
    if (r->admit) {
        snprintf(adm, sizeof adm, "%d", r->admitted);
        snprintf(gh, sizeof gh, "%.2f", r->gpu_seconds / 3600.0);
    }
    if (r->status != ILP_INFEASIBLE)
        snprintf(bnd, sizeof bnd, "%d", r->bound);
    snprintf(buf, sizeof buf, "%.2f", r->seconds);
    printf("  %-7s %-13s %8s %6s %10s %8ld %8s\n", "ilp",
           ilp_status_name(r->status), adm, bnd, gh, r->nodes, buf);
    if (r->lp_bound >= 0)
        printf("  LP relaxation bound: %d admitted\n", r->lp_bound);
    if (r->admit && r->gpu_status == ILP_FEASIBLE)
        printf("  GPU-time not proven least: at least %.2f GPU-hours for %d "
               "jobs\n", r->gpu_seconds_bound / 3600.0, r->admitted);
    if (r->limit_hit)
        printf("  stopped by the %s limit\n",
               r->limit_hit == 1 ? "time" : "node");
    switch (r->status) {
    case ILP_OPTIMAL:
        printf("  ilp: the optimum admits %d, greedy %d (%d more)\n",
               r->admitted, g->admitted, r->admitted - g->admitted);
        break;
    case ILP_FEASIBLE:
        if (r->bound == r->admitted)
            printf("  ilp: the optimum admits %d (proven), greedy %d (%d "
                   "more)\n", r->admitted, g->admitted,
                   r->admitted - g->admitted);
        else
            printf("  ilp: not proven; the best found admits %d, at most %d "
                   "possible\n", r->admitted, r->bound);
        break;
    case ILP_NO_INCUMBENT:
        printf("  ilp: no solution found; at most %d admissible\n",
               r->bound);
        break;
    default:
        printf("  the --must-admit jobs cannot all be admitted together\n");
        break;
    }
}

/* The greedy, offline and LP-guided lines. */
static void print_plans(const ilp_report *rp)
{
    const plan *g = rp->greedy, *off = rp->offline, *gd = rp->guided;
    const off_stats *os = rp->os;
    printf("  greedy (arrival order) admits %d jobs, %.2f GPU-hours\n",
           g->admitted, g->promised_gpu_seconds / 3600.0);
    if (off) {
        printf("  offline admission admits %d jobs, %.2f GPU-hours (%d plans "
               "tried, %d jobs left out%s)\n", off->admitted,
               off->promised_gpu_seconds / 3600.0, os->plans, os->withheld,
               os->budget_hit ? "; stopped by --offline-plans" : "");
        char ex[160]; /* what its exact step did */
        ilp_offline_text(os, ex, sizeof ex);
        printf("    %s\n", ex);
    }
    if (gd)
        printf("  LP-guided admission admits %d jobs, %.2f GPU-hours (%d "
               "plans tried, %d jobs left out%s)\n", gd->admitted,
               gd->promised_gpu_seconds / 3600.0, rp->gs->plans,
               rp->gs->withheld,
               rp->gs->budget_hit ? "; stopped by --offline-plans" : "");
}

/* The relaxed bound's lines. */
static void print_relaxed(const ilp_relaxed *x)
{
    switch (x->status) {
    case ILP_OPTIMAL:
        printf("  relaxed bound: at most %d jobs admissible (LP %.3f over "
               "%d windows, %d rows, %d columns, ", x->bound, x->lp_value,
               x->windows, x->rows, x->cols);
        if (!x->ipt)
            printf("%ld iterations, ", x->lp_iters);
        else if (x->lp_iters > 0) /* the simplex method ran in a pass too */
            printf("interior point, %ld simplex iterations, ", x->lp_iters);
        else
            printf("interior point, ");
        if (x->ipt && (x->limit_hit & 2)) /* run_ipt: a point's prices */
            printf("stopped short of the optimum, the bound its prices "
                   "prove, ");
        printf("%.2f s)\n", x->seconds);
        if (x->cfg_value >= 0)
            printf("  configuration LP: %.3f (%d rounds of column generation"
                   "%s)\n", x->cfg_value, x->cfg_rounds,
                   x->cfg_done ? "" : ", stopped by its budget: a Lagrangian "
                                      "bound");
        if (x->gpu_seconds_bound >= 0)
            printf("  relaxed bound: admitting %d jobs takes at least %.2f "
                   "GPU-hours\n", x->gpu_for, x->gpu_seconds_bound / 3600.0);
        break;
    case ILP_NO_INCUMBENT:
        printf("  relaxed bound: the LP was stopped by the %s limit after "
               "%.2f s (%d windows)\n", x->limit_hit & 1 ? "time"
                                                         : "iteration",
               x->seconds, x->windows);
        break;
    default:
        printf("  relaxed bound: the --must-admit jobs cannot all be "
               "admitted together\n");
        break;
    }
}

/* " name N is within K" for one plan, after the first ", ". */
static void within(const char *name, const plan *p, const ilp_verdict *v,
                   int *first)
{
    if (!p)
        return;
    printf("%s%s %d %s%d", *first ? "; " : ", ", name, p->admitted,
           *first ? "is within " : "within ", v->upper - p->admitted);
    *first = 0;
}

/* "  it VERB N job(s) WHAT: id, id, ... and K more" of the jobs with
 * f[j], if any. */
static void print_ids(const char *verb, const char *what, const job_queue *q,
                      const int *f)
{
    int n = 0, shown = 0;
    for (int j = 0; j < q->n; j++)
        n += f[j];
    if (n == 0)
        return;
    printf("  it %s %d job%s %s:", verb, n, n == 1 ? "" : "s", what);
    for (int j = 0; j < q->n && shown < ORACLE_IDS_SHOWN; j++)
        if (f[j])
            printf("%s %s", shown++ ? "," : "", q->jobs[j].id);
    if (n > shown)
        printf(" and %d more", n - shown);
    printf("\n");
}

/* The verdict: the optimum's range, each plan's distance, the jobs. */
static void print_verdict(const ilp_report *rp)
{
    ilp_verdict v;
    ilp_verdict_of(rp, &v);
    if (v.infeasible)
        return; /* said above */
    if (!v.answer && v.upper < 0) {
        printf("  answer: none (no bound: every LP was stopped by its "
               "limit)\n");
        return;
    }
    if (!v.answer) {
        printf("  answer: none (no plan found admits every --must-admit "
               "job; at most %d admissible)\n", v.upper);
        return;
    }
    if (v.proven)
        printf("  answer: optimum %d (a plan admits %d, no plan admits "
               "more)", v.upper, v.lower);
    else
        printf("  answer: optimum between %d and %d", v.lower, v.upper);
    int first = 1;
    within("greedy", rp->greedy, &v, &first);
    within("offline", rp->offline, &v, &first);
    within("LP-guided", rp->guided, &v, &first);
    if (rp->ilp && rp->ilp->admit) {
        printf(", ilp %d within %d", rp->ilp->admitted,
               v.upper - rp->ilp->admitted);
    }
    printf("\n");
    static const struct { const char *key, *name; } names[] = {
        {"greedy", "greedy's plan"}, {"offline", "the offline admission"},
        {"guided", "the LP-guided admission"}, {"ilp", "the ILP's schedule"}};
    const char *bn = v.best;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(names[i].key, v.best) == 0)
            bn = names[i].name;
    if (v.upper > 0)
        printf("  best plan: %s, %d jobs, within %.1f%% of the bound\n", bn,
               v.lower, 100.0 * (v.upper - v.lower) / v.upper);
    if (v.upper > 0 && 10 * (v.upper - v.lower) > v.upper)
        printf("  not within 10%%: %d jobs lie between the best plan and the "
               "bound, on either side (a better plan may exist, or the bound "
               "is loose)\n", v.upper - v.lower);
    const job_queue *q = rp->q;
    int *f = ef_calloc((size_t)q->n + 1, sizeof *f);
    for (int j = 0; j < q->n; j++)
        f[j] = ilp_verdict_admits(rp, &v, j) &&
               rp->greedy->jobs[j].decision != PLAN_ADMITTED;
    print_ids("admits", "greedy rejects", q, f);
    for (int j = 0; j < q->n; j++)
        f[j] = !ilp_verdict_admits(rp, &v, j) &&
               rp->greedy->jobs[j].decision == PLAN_ADMITTED;
    print_ids("leaves out", "greedy admits", q, f);
    free(f);
}

void cmd_oracle_text(const ilp_report *rp)
{
    print_head(rp);
    if (rp->ilp)
        print_ilp(rp->greedy, rp->ilp);
    print_plans(rp);
    if (rp->relaxed)
        print_relaxed(rp->relaxed);
    print_verdict(rp);
}
