/*
 * pol_themis.c: the Themis baseline (Mahajan et al., NSDI'20): finish-time
 * fairness over leases of one slot, as the ElasticFlow artifact configures
 * it (no filter, no auction):
 *   - every job runs at its requested GPU count;
 *   - at each lease start with more demand than GPUs, job i's
 *     finish-time-fairness ratio with a fraction x_i of the lease is
 *     rho_i = T_shared / T_isolated = (age_i + left_i / x_i) / T_iso_i,
 *     where left_i is its remaining seconds, and T_iso_i = the ideal
 *     (isolated) time of the work done so far plus left_i / share_i, with
 *     share_i = min(1, ceil(N / jobs) / g_i) its time share under an equal
 *     split of the GPUs (the work done is counted at the share it had when
 *     it was done);
 *   - the max-min problem min_x max_i rho_i s.t. sum x_i g_i <= N is
 *     solved by bisection on rho (bl_themis_solve);
 *   - jobs are then picked greedily by priority x_i / (1 + leases
 *     received so far), ties by larger x_i, then queue order, while their
 *     GPUs fit; picked jobs run for the lease (the loop's buddy
 *     placement, keeping their GPUs when they keep running);
 *   - when every active job fits, all run and no lease decision is made
 *     (nothing to arbitrate), so long uncontended stretches cost nothing.
 * Deviations from the reference (algorithms.md 6.5, 8.9), all fixed
 * defects: the leases received are counted (the reference never
 * increments them, so its priority is x alone); the overhead model
 * applies (the reference's is always 0); throughput is a number; jobs
 * complete at their exact time (the reference ends them at the lease end);
 * arrivals are decided at the first slot boundary, which is a lease start.
 * --baselines reference restores the reference's rules that change
 * numbers: priority x alone (§6.5); T_iso counted in iterations while
 * T_alloc counts seconds (§6.5, §8.9); a job finishing inside a lease
 * ends, for its deadline, at the lease's end (§6.5, §4.5, §8.8), and
 * every lease is a round; where the program's optimum is not unique, the
 * x an interior-point solver gives (the reference's ECOS, §6.5), not the
 * smallest (bl_themis_centre). Its overhead (none, §4.4) is the run's
 * --overhead none.
 */
#define _GNU_SOURCE 1 /* qsort_r */
#include <math.h>
#include <string.h>

#include "common/util.h"
#include "simulator/baselines.h"

typedef struct thst {
    int *g;
    double *cum_iso;   /* ideal time of the work done so far */
    double *share;     /* share at the last point */
    double *left;      /* seconds left at the last point */
    int64_t *rounds;   /* leases received */
    int64_t last;      /* the last point */
    /* scratch */
    int *ord, *gg;
    double *age, *rt, *tiso, *x, *prio;
} thst;

static void *init(sim *s, ef_err *e)
{
    (void)e;
    thst *st = ef_calloc(1, sizeof *st);
    size_t n = (size_t)(s->n ? s->n : 1);
    st->g = ef_calloc(n, sizeof *st->g);
    st->cum_iso = ef_calloc(n, sizeof *st->cum_iso);
    st->share = ef_calloc(n, sizeof *st->share);
    st->left = ef_calloc(n, sizeof *st->left);
    st->rounds = ef_calloc(n, sizeof *st->rounds);
    st->ord = ef_malloc(n * sizeof *st->ord);
    st->gg = ef_malloc(n * sizeof *st->gg);
    st->age = ef_malloc(n * sizeof *st->age);
    st->rt = ef_malloc(n * sizeof *st->rt);
    st->tiso = ef_malloc(n * sizeof *st->tiso);
    st->x = ef_malloc(n * sizeof *st->x);
    st->prio = ef_calloc(n, sizeof *st->prio);
    return st;
}

static void fini(void *v)
{
    thst *st = v;
    free(st->g);
    free(st->cum_iso);
    free(st->share);
    free(st->left);
    free(st->rounds);
    free(st->ord);
    free(st->gg);
    free(st->age);
    free(st->rt);
    free(st->tiso);
    free(st->x);
    free(st->prio);
    free(st);
}

typedef struct pick_ctx {
    const thst *st;
    const double *x;
} pick_ctx;

static int cmp_pick(const void *a, const void *b, void *ctx)
{
    const pick_ctx *c = ctx;
    int p = *(const int *)a, q = *(const int *)b; /* positions */
    double pa = c->st->prio[p], pb = c->st->prio[q];
    if (pa != pb)
        return pa > pb ? -1 : 1;
    if (c->x[p] != c->x[q])
        return c->x[p] > c->x[q] ? -1 : 1;
    return p - q;
}

/* The work job i has left in the unit its isolated time T_iso counts:
 * seconds at its g GPUs; under --baselines reference iterations, as the
 * reference counts it (algorithms.md §6.5: T_iso = cum_iso + iter_left /
 * share and cum_iso += (iter_left_prev - iter_left) / share_prev, while
 * T_alloc = age + iter_left / (tput x) is in seconds; §8.9). */
static double work_left(const sim *s, int i, int g)
{
    if (s->opts.baselines_reference)
        return s->jobs[i].rem;
    return bl_seconds_left(&s->jobs[i], g);
}

/* --baselines reference: a job that finishes during the lease from t
 * ends, as the reference counts it, at the lease's end (algorithms.md
 * §6.5, §4.5; §8.8 lists it as a defect): it is met iff that end is by
 * its deadline (sim_job.due). */
static void lease_end_due(sim *s, const thst *st, int64_t t)
{
    if (!s->opts.baselines_reference)
        return;
    int64_t end = t + s->opts.slot;
    for (int k = 0; k < s->nact; k++) {
        sim_job *j = &s->jobs[s->act[k]];
        if (j->want == 0 || j->best_effort)
            continue;
        double need = j->ovh_left + bl_seconds_left(j, st->g[s->act[k]]);
        if (need <= (double)s->opts.slot)
            j->due = end <= j->in->deadline ? INT64_MAX : -1;
    }
}

static int64_t point(sim *s, void *v, int64_t t, const int *rel, int nrel)
{
    thst *st = v;
    int N = s->cl.total_gpus;
    /* the work done since the last point, at the share it had, and the
     * leases received by the jobs that held GPUs since then */
    for (int k = 0; k < s->nact; k++) {
        int i = s->act[k];
        if (s->jobs[i].g > 0)
            st->rounds[i] += (t - st->last) / s->opts.slot;
        double left = work_left(s, i, st->g[i]);
        if (st->share[i] > 0)
            st->cum_iso[i] += (st->left[i] - left) / st->share[i];
        st->left[i] = left;
    }
    for (int r = 0; r < nrel; r++) {
        int i = rel[r];
        int g = bl_admit(s, i);
        if (!g)
            continue;
        st->g[i] = g;
        st->left[i] = work_left(s, i, g);
    }
    st->last = t;
    int n = s->nact, demand = 0;
    if (n == 0)
        return INT64_MAX;
    for (int k = 0; k < n; k++) {
        int i = s->act[k];
        demand += st->g[i];
        double eq = ceil((double)N / n) / st->g[i];
        st->share[i] = eq < 1 ? eq : 1;
    }
    if (demand <= N) {
        for (int k = 0; k < n; k++) {
            int i = s->act[k];
            s->jobs[i].want = st->g[i];
        }
        if (!s->opts.baselines_reference)
            return INT64_MAX;
        lease_end_due(s, st, t); /* every lease is a round there */
        return t + s->opts.slot;
    }
    for (int k = 0; k < n; k++) {
        int i = s->act[k];
        st->gg[k] = st->g[i];
        st->age[k] = (double)(t - s->jobs[i].in->submit);
        if (st->age[k] < 0)
            st->age[k] = 0;
        st->rt[k] = bl_seconds_left(&s->jobs[i], st->g[i]);
        st->tiso[k] = st->cum_iso[i] + st->left[i] / st->share[i];
    }
    double rho;
    if (s->opts.baselines_reference) /* the reference's solver's point */
        bl_themis_centre(n, st->gg, st->age, st->rt, st->tiso, N, st->x,
                         &rho);
    else
        bl_themis_solve(n, st->gg, st->age, st->rt, st->tiso, N, st->x,
                        &rho);
    for (int k = 0; k < n; k++) {
        st->prio[k] = s->opts.baselines_reference
                          ? st->x[k]
                          : st->x[k] / (1 + (double)st->rounds[s->act[k]]);
        st->ord[k] = k;
    }
    pick_ctx c = {st, st->x};
    qsort_r(st->ord, (size_t)n, sizeof *st->ord, cmp_pick, &c);
    int free_gpus = N;
    for (int u = 0; u < n; u++) {
        int i = s->act[st->ord[u]];
        sim_job *j = &s->jobs[i];
        j->want = 0;
        if (free_gpus > 0 && st->g[i] <= free_gpus) {
            j->want = st->g[i];
            free_gpus -= j->want;
        }
    }
    lease_end_due(s, st, t);
    return t + s->opts.slot;
}

const sim_policy sim_policy_themis = {
    "themis", "Themis: requested GPU counts, finish-time fairness over "
    "one-slot leases", init, point, fini};
