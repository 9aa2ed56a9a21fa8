/*
 * pol_edf.c: elastic earliest-deadline-first baselines.
 *   edf     Every job is admitted. At each point all active jobs are
 *           planned in deadline order (best-effort jobs last, by submit
 *           time) against the free cluster; each takes in every interval
 *           the largest usable size that fits (mss_fastest), i.e. the most
 *           it can use.
 *   edf-ac  The same with admission control: a released job is admitted
 *           iff, planned with the active jobs, it meets its deadline and
 *           every job that met its deadline without it still does.
 *           --baselines reference (opts.baselines_reference) applies the
 *           reference implementation's rule instead: admitted iff, planned
 *           with the active jobs, every deadline job meets its deadline,
 *           so a job that is already late (planned to miss without the
 *           newcomer) vetoes every newcomer until it ends.
 * Usable sizes follow curve.h (never past a curve's peak) for both, unlike
 * the reference, whose EDF may scale past the peak; --cap reference
 * (opts.cap_reference) restores that to compare numbers (see README).
 */
#define _GNU_SOURCE 1 /* qsort_r */
#include <string.h>

#include "common/util.h"
#include "planner/avail.h"
#include "planner/mss.h"
#include "simulator/sim.h"

typedef struct edf_state {
    int ac, n;
    resv *r;      /* per job: its plan from the last point */
    int *ord;
    int *meets;   /* scratch: 1 if planned to meet its deadline */
    int *meets2;
    int *rank;    /* per job: its place in cmp_edf's order (ids are
                     unique, so ranks are), computed once: the order's
                     keys never change */
    int *sorted;  /* the active jobs of the last point, by rank */
    int nsorted;
    int *seen;    /* per job: the point stamp that last found it active */
    int stamp;
    int *fresh;   /* scratch: jobs active now and not in 'sorted' */
} edf_state;

static int cmp_edf(const void *a, const void *b, void *ctx)
{
    const sim *s = ctx;
    const sim_job *x = &s->jobs[*(const int *)a];
    const sim_job *y = &s->jobs[*(const int *)b];
    if (x->best_effort != y->best_effort)
        return x->best_effort - y->best_effort;
    if (!x->best_effort && x->in->deadline != y->in->deadline)
        return x->in->deadline < y->in->deadline ? -1 : 1;
    if (x->in->submit != y->in->submit)
        return x->in->submit < y->in->submit ? -1 : 1;
    return strcmp(x->in->id, y->in->id);
}

static int cmp_rank(const void *a, const void *b, void *ctx)
{
    const int *rank = ctx;
    int x = rank[*(const int *)a], y = rank[*(const int *)b];
    return (x > y) - (x < y);
}

static void *init_common(sim *s, int ac)
{
    edf_state *st = ef_calloc(1, sizeof *st);
    int n = s->n ? s->n : 1;
    st->ac = ac;
    st->n = s->n;
    st->r = ef_calloc((size_t)n, sizeof *st->r);
    st->ord = ef_malloc((size_t)(n + 1) * sizeof *st->ord);
    st->meets = ef_calloc((size_t)n, sizeof *st->meets);
    st->meets2 = ef_calloc((size_t)n, sizeof *st->meets2);
    st->rank = ef_calloc((size_t)n, sizeof *st->rank);
    st->sorted = ef_malloc((size_t)n * sizeof *st->sorted);
    st->seen = ef_calloc((size_t)n, sizeof *st->seen);
    st->fresh = ef_malloc((size_t)n * sizeof *st->fresh);
    ef_rank(s->n, cmp_edf, s, st->rank);
    return st;
}

static void *init_edf(sim *s, ef_err *e)
{
    (void)e;
    return init_common(s, 0);
}

static void *init_ac(sim *s, ef_err *e)
{
    (void)e;
    return init_common(s, 1);
}

static void fini(void *v)
{
    edf_state *st = v;
    for (int i = 0; i < st->n; i++)
        resv_free(&st->r[i]);
    free(st->r);
    free(st->ord);
    free(st->meets);
    free(st->meets2);
    free(st->rank);
    free(st->sorted);
    free(st->seen);
    free(st->fresh);
    free(st);
}


/* The active jobs (s->act) in deadline order (cmp_edf) into ord;
 * returns how many. The order of the last call is kept: the jobs that
 * left are dropped from it and the new ones merged in, so a point costs
 * the active jobs once, not a sort of them (edf admits every job, and
 * its active jobs run into the thousands). */
static int active_in_order(sim *s, edf_state *st, int *ord)
{
    int stamp = ++st->stamp, nf = 0, keep = 0, m = 0;
    for (int k = 0; k < s->nact; k++)
        st->seen[s->act[k]] = stamp;
    for (int k = 0; k < st->nsorted; k++)
        if (st->seen[st->sorted[k]] == stamp) {
            st->seen[st->sorted[k]] = -stamp; /* kept from the last point */
            st->sorted[keep++] = st->sorted[k];
        }
    for (int k = 0; k < s->nact; k++)
        if (st->seen[s->act[k]] == stamp)
            st->fresh[nf++] = s->act[k];
    qsort_r(st->fresh, (size_t)nf, sizeof *st->fresh, cmp_rank, st->rank);
    for (int a = 0, b = 0; a < keep || b < nf;)
        ord[m++] = b >= nf || (a < keep && st->rank[st->sorted[a]] <
                                               st->rank[st->fresh[b]])
                       ? st->sorted[a++]
                       : st->fresh[b++];
    memcpy(st->sorted, ord, (size_t)m * sizeof *ord);
    st->nsorted = m;
    return m;
}

/* ord[0..m-1] (in deadline order) with job i inserted at its place;
 * returns m + 1. */
static int insert_in_order(const edf_state *st, int *ord, int m, int i)
{
    int lo = 0, hi = m;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (st->rank[ord[mid]] < st->rank[i])
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(ord + lo + 1, ord + lo, (size_t)(m - lo) * sizeof *ord);
    ord[lo] = i;
    return m + 1;
}

/* Plan jobs ord[0..m-1] (in deadline order: cmp_edf) from t; fill st->r
 * and meets[]. */
static void plan_all(sim *s, edf_state *st, const int *ord, int m, int64_t t,
                     int *meets)
{
    int N = s->cl.total_gpus;
    avail F;
    avail_init(&F, t, N);
    for (int k = 0; k < m; k++) {
        int i = ord[k];
        const sim_job *j = &s->jobs[i];
        int64_t end;
        if (s->opts.cap_reference) {
            int cap = 1;
            for (int l = 0; l < CURVE_MAX_LEVELS; l++)
                if (j->in->curve->cell[l] > 0)
                    cap = 1 << l;
            if (cap > 64)
                cap = 64;
            if (cap > j->in->batch)
                cap = (int)j->in->batch;
            if (cap > N)
                cap = N;
            end = mss_fastest_runnable(j->in->curve, cap, j->rem, t,
                                       s->opts.slot, &F, &st->r[i]);
        } else {
            end = mss_fastest(j->in->curve, N, j->rem, t, s->opts.slot, &F,
                              &st->r[i]);
        }
        meets[i] = !j->best_effort && end >= 0 && end <= j->in->deadline;
        resv_apply(&st->r[i], &F, -1);
    }
    avail_free(&F);
}

/* The admission test of released deadline job i at t against the active
 * jobs: 1 iff EDF-planning them with it has i meet its deadline and every
 * active deadline job that met its deadline without it still meet it
 * (default), or every active deadline job meet it, late ones included
 * (opts.baselines_reference: the reference's rule). Scratch: st->ord,
 * st->meets, st->meets2 and st->r (the caller re-plans afterwards). */
static int admit_test(sim *s, edf_state *st, int i, int64_t t)
{
    int ref = s->opts.baselines_reference;
    int m = active_in_order(s, st, st->ord);
    if (!ref)
        plan_all(s, st, st->ord, m, t, st->meets);
    m = insert_in_order(st, st->ord, m, i);
    plan_all(s, st, st->ord, m, t, st->meets2);
    if (!st->meets2[i])
        return 0;
    for (int k = 0; k < s->nact; k++) {
        int a = s->act[k];
        int before = ref ? !s->jobs[a].best_effort : st->meets[a];
        if (before && !st->meets2[a])
            return 0;
    }
    return 1;
}

static int64_t point(sim *s, void *v, int64_t t, const int *rel, int nrel)
{
    edf_state *st = v;
    for (int r = 0; r < nrel; r++) {
        int i = rel[r];
        const sim_job *j = &s->jobs[i];
        if (curve_usable(j->in->curve, s->cl.total_gpus, NULL, NULL) == 0) {
            sim_reject(s, i, -1, "no usable GPU count fits the cluster");
            continue;
        }
        if (!st->ac || j->best_effort) {
            sim_admit(s, i);
            continue;
        }
        if (admit_test(s, st, i, t))
            sim_admit(s, i);
        else
            sim_reject(s, i, -1, "EDF with this job would miss a deadline");
    }
    int m = active_in_order(s, st, st->ord);
    plan_all(s, st, st->ord, m, t, st->meets);
    int64_t wake = INT64_MAX;
    for (int k = 0; k < s->nact; k++) {
        int i = s->act[k];
        s->jobs[i].want = resv_at(&st->r[i], t);
        const resv *r = &st->r[i];
        for (int q = 0; q < r->n; q++) {
            int64_t w = r->s[q].start > t ? r->s[q].start : r->s[q].end;
            if (w > t) {
                if (w < wake)
                    wake = w;
                break;
            }
        }
    }
    return wake;
}

const sim_policy sim_policy_edf = {
    "edf", "elastic EDF: each job the most it can use, in deadline order",
    init_edf, point, fini};
const sim_policy sim_policy_edf_ac = {
    "edf-ac", "elastic EDF with admission control", init_ac, point, fini};
