/* offline.c: offline admission by a local search over withheld jobs
 * (see offline.h). */
#include "planner/offline.h"

#include <stdlib.h>
#include <string.h>

#include "planner/avail.h"
#include "planner/mss.h"

/* Pair moves are tried among this many of the first withhold moves. */
#define OFF_PAIR_CANDS 12

/* A candidate move: a job and its sort key. */
typedef struct cand {
    int job;
    double gpu_seconds;
} cand;

/* Largest GPU-seconds first, then queue index. */
static int cmp_cand(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    if (a->gpu_seconds != b->gpu_seconds)
        return a->gpu_seconds > b->gpu_seconds ? -1 : 1;
    return (a->job > b->job) - (a->job < b->job);
}

/* 1 if rejected job r of plan p could not finish by its deadline even
 * alone on the cluster, overheads aside (then no choice of other jobs
 * admits it). Elastic-batch jobs are never called hopeless here. */
static int hopeless(const plan *p, int r)
{
    const plan_job *b = &p->jobs[r];
    if (b->eb)
        return 0;
    avail F;
    avail_init(&F, b->release, p->cl.total_gpus);
    int64_t end = mss_earliest_finish(b->in->curve, p->cl.total_gpus,
                                      b->iterations_left * (1 + MSS_MARGIN),
                                      b->release, p->opts.slot, &F);
    avail_free(&F);
    return end < 0 || end > b->deadline;
}

/* 1 if job i of plan p may be withheld: admitted, with a deadline, not
 * promised, not under way, and its run overlaps the window of some
 * rejected deadline job that is not hopeless (otherwise leaving it out
 * frees nothing); 'hl' caches hopeless() per job (-1 unknown). */
static int blocks(const plan *p, int i, signed char *hl)
{
    const plan_job *a = &p->jobs[i];
    if (a->decision != PLAN_ADMITTED || !a->in->has_deadline ||
        a->in->promised || a->in->iterations_done > 0 ||
        a->in->samples_done > 0 || a->start < 0)
        return 0;
    for (int r = 0; r < p->njobs; r++) {
        const plan_job *b = &p->jobs[r];
        if (b->decision != PLAN_REJECTED || !b->in->has_deadline ||
            a->start >= b->deadline || a->planned_end <= b->release)
            continue;
        if (hl[r] < 0)
            hl[r] = (signed char)hopeless(p, r);
        if (!hl[r])
            return 1;
    }
    return 0;
}

/* A job's GPU-seconds at its most efficient usable size: what it costs
 * the cluster at least, deadline aside. */
static double job_cost(const job *j, int N)
{
    int g[CURVE_MAX_LEVELS];
    double t[CURVE_MAX_LEVELS];
    int k = curve_usable(j->curve, N, g, t);
    double w = (double)(j->iterations - j->iterations_done), best = 0;
    for (int i = 0; i < k; i++)
        if (t[i] > 0 && (best == 0 || g[i] * w / t[i] < best))
            best = g[i] * w / t[i];
    return best;
}

/* The secondary objective: the admitted jobs' costs (fewer is better). */
static double plan_cost(const plan *p, const double *cost)
{
    double s = 0;
    for (int j = 0; j < p->njobs; j++)
        if (p->jobs[j].decision == PLAN_ADMITTED)
            s += cost[j];
    return s;
}

/* Plan with 'wh' withheld and jobs of one point decided in 'ord' order
 * (NULL: submit order) into 'p'. */
static int build(plan *p, const job_queue *q, const cluster *c,
                 const plan_opts *o, const unsigned char *wh,
                 const double *ord, ef_err *e)
{
    plan_opts po = *o;
    po.withhold = wh;
    po.order = ord;
    return plan_build(p, q, c, &po, e);
}

int off_plan(plan *p, const job_queue *q, const cluster *c,
             const plan_opts *o, int max_plans, off_stats *st, ef_err *e)
{
    off_stats s;
    memset(&s, 0, sizeof s);
    memset(p, 0, sizeof *p);
    ef_assert(o->withhold == NULL && o->order == NULL && max_plans >= 1);
    int n = q->n;
    unsigned char *wh = ef_calloc((size_t)n + 1, 1);  /* incumbent's set */
    unsigned char *tw = ef_calloc((size_t)n + 1, 1);  /* a move's set */
    cand *cd = ef_malloc(((size_t)n + 1) * sizeof *cd); /* moves to try */
    double *cost = ef_malloc(((size_t)n + 1) * sizeof *cost); /* job_cost */
    signed char *hl = ef_malloc((size_t)n + 1); /* hopeless(), cached */
    memset(hl, -1, (size_t)n + 1);
    for (int i = 0; i < n; i++)
        cost[i] = job_cost(&q->jobs[i], c->total_gpus);
    plan best, trial;                                  /* incumbent, move */
    int rc = EF_ERR;
    const double *ord = NULL; /* the incumbent's order within a point */
    if (build(&best, q, c, o, wh, NULL, e) != EF_OK)
        goto out;
    s.plans = 1;
    s.online_admitted = best.admitted;
    double bcost = plan_cost(&best, cost); /* the incumbent's */
    /* the cheapest first within a point (a burst), if that is better */
    if (max_plans > 1) {
        if (build(&trial, q, c, o, wh, cost, e) != EF_OK) {
            plan_free(&best);
            goto out;
        }
        s.plans++;
        double tcost = plan_cost(&trial, cost);
        if (trial.admitted > best.admitted ||
            (trial.admitted == best.admitted && tcost < bcost * (1 - 1e-9))) {
            plan_free(&best);
            best = trial;
            bcost = tcost;
            ord = cost;
            s.moves++;
        } else {
            plan_free(&trial);
        }
    }
    int improved = 1;
    while (improved && s.plans < max_plans) {
        improved = 0;
        int m = 0; /* moves of this round: give back first, then withhold */
        for (int i = 0; i < n; i++)
            if (wh[i]) {
                cd[m].job = i;
                cd[m++].gpu_seconds = 0;
            }
        int giveback = m;
        for (int i = 0; i < n; i++)
            if (blocks(&best, i, hl)) {
                cd[m].job = i;
                cd[m++].gpu_seconds = best.jobs[i].gpu_seconds;
            }
        for (int k = giveback; k < m; k++)
            cd[k].gpu_seconds = cost[cd[k].job];
        qsort(cd + giveback, (size_t)(m - giveback), sizeof *cd, cmp_cand);
        for (int k = 0; k < m && s.plans < max_plans; k++) {
            memcpy(tw, wh, (size_t)n);
            tw[cd[k].job] = k >= giveback;
            if (build(&trial, q, c, o, tw, ord, e) != EF_OK) {
                plan_free(&best);
                goto out;
            }
            s.plans++;
            double tcost = plan_cost(&trial, cost);
            if (trial.admitted > best.admitted ||
                (trial.admitted == best.admitted &&
                 tcost < bcost * (1 - 1e-9))) {
                plan_free(&best);
                best = trial;
                bcost = tcost;
                memcpy(wh, tw, (size_t)n);
                s.moves++;
                improved = 1;
                break;
            }
            plan_free(&trial);
        }
        /* no single move helped: pairs of the first OFF_PAIR_CANDS
         * withhold moves (a burst decided in submit order may need two
         * jobs out before the right pair fits) */
        int top = m - giveback < OFF_PAIR_CANDS ? m - giveback
                                                : OFF_PAIR_CANDS;
        for (int a = 0; !improved && a < top; a++)
            for (int b = a + 1; !improved && b < top &&
                                s.plans < max_plans; b++) {
                memcpy(tw, wh, (size_t)n);
                tw[cd[giveback + a].job] = 1;
                tw[cd[giveback + b].job] = 1;
                if (build(&trial, q, c, o, tw, ord, e) != EF_OK) {
                    plan_free(&best);
                    goto out;
                }
                s.plans++;
                double tcost = plan_cost(&trial, cost);
                if (trial.admitted > best.admitted ||
                    (trial.admitted == best.admitted &&
                     tcost < bcost * (1 - 1e-9))) {
                    plan_free(&best);
                    best = trial;
                    bcost = tcost;
                    memcpy(wh, tw, (size_t)n);
                    s.moves++;
                    improved = 1;
                } else {
                    plan_free(&trial);
                }
            }
    }
    s.budget_hit = s.plans >= max_plans;
    for (int i = 0; i < n; i++)
        s.withheld += wh[i];
    if (plan_check(&best, e) != EF_OK) {
        ef_prefix(e, "the offline admission's plan failed its check: ");
        plan_free(&best);
        goto out;
    }
    *p = best;
    rc = EF_OK;
out:
    if (st)
        *st = s;
    free(wh);
    free(tw);
    free(cd);
    free(cost);
    free(hl);
    return rc;
}
