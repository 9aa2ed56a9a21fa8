/*
 * pol_chronus.c: the Chronus baseline (Gao et al., SoCC'21), lease-based
 * admission and selection for deadline jobs at their requested GPU
 * counts, as the ElasticFlow artifact configures it (leases of 240 s,
 * checks every slot):
 *   - Leases: time from the first point is cut into leases of L s (the
 *     smallest multiple of the slot that is >= 240 s). A job's estimate is
 *     1.1 x its remaining seconds plus the overhead model's start cost;
 *     it needs r = ceil(estimate / L) leases, and may use the leases that
 *     end by its deadline.
 *   - Admission, when a job arrives: the greedy "fast packable" test
 *     against the leases promised to accepted jobs: newcomers by (more
 *     GPUs, less slack, later deadline) each take r leases with room,
 *     latest first. A job that fits is accepted (its leases are
 *     promised); one that does not is unaccepted: it still runs, below
 *     accepted work, when GPUs are idle.
 *   - Selection, at each lease start: which accepted jobs run in this
 *     lease is the lease-block MIP of bl_lease_mip (GLPK, the next 8
 *     leases individually and the rest as one block per job; objective
 *     10 per job granted all its leases, plus the GPUs used now when
 *     no unaccepted job waits, minus them otherwise, so that guaranteed
 *     work is deferred to leave room to others). It is solved only when
 *     something changed (an acceptance, a completion, a demotion, the
 *     sign of the objective) and the accepted jobs do not all fit now;
 *     otherwise the promised leases of the last solve are followed. Past
 *     the node budget (--mip-nodes) the greedy answers, and the fallback
 *     is counted (solver_fallbacks). A job the selection cannot grant is
 *     demoted to unaccepted.
 *   - Filling, at every point: GPUs left idle go to the jobs not
 *     selected: those that can still make their deadline first, within
 *     them unaccepted jobs before accepted ones (ahead of their leases),
 *     then the least remaining GPU-time, then submit time. Between lease
 *     starts running jobs keep running.
 * Deviations from the reference (algorithms.md 6.6, 8.12, 8.16): the
 * filling step runs (the reference's guard never holds, so it fills only
 * every 240 s); arrivals are tested at the next point, not the next lease
 * start (--baselines reference restores both, and with them three more
 * reference behaviours: a lease's selection is made before the arrivals
 * are tested, so a newcomer's first lease is the next one; accepted jobs
 * run only in the leases granted to them, never filling idle GPUs ahead
 * of them; an accepted job is judged by its lease-floored deadline, the
 * end of its last usable lease, through sim_job.due); the released ITP
 * traces are read directly; GLPK with a node budget replaces Gurobi with
 * a 5 s limit; overheads are the simulator's model (the reference's are
 * 0.5 s per resume, minutes-based constants applied to seconds); a
 * deadline is met iff the job ends by its deadline (the reference judges
 * accepted jobs against the lease-floored deadline, which is stricter
 * only within one lease). benchmarks/results/chronus.md measures each.
 */
#define _GNU_SOURCE 1 /* qsort_r */
#include <math.h>
#include <string.h>

#include "common/util.h"
#include "simulator/baselines.h"

#define CH_NONE 0
#define CH_ACCEPTED 1
#define CH_UNACCEPTED 2
#define CH_NEW 3        /* arrived, not tested yet */
#define CH_H 8              /* leases solved individually */
#define CH_NODES 500        /* default node budget */
#define CH_AHEAD (1 << 22)  /* leases a job may use past the current one
                               (about 32 years of 240 s leases): a later
                               deadline packs as if it were there */
#define CH_MAX_NEED (1 << 30) /* leases a job is said to need at most */

typedef struct chst {
    int n, N;
    int64_t L, t0;
    int *g, *cls;
    int64_t *last;          /* last usable lease (from t0) */
    int64_t **pl;           /* promised leases, ascending */
    int *npl, *cappl;
    int *use;               /* GPUs promised per lease (from t0) */
    int64_t nuse;
    int changed;
    int sign;               /* of the last solve */
    /* scratch */
    int *ord, *sel, *mg, *mr, *mm, *run, *ok, *plan;
} chst;

static void *init(sim *s, ef_err *e)
{
    (void)e;
    chst *st = ef_calloc(1, sizeof *st);
    size_t n = (size_t)(s->n ? s->n : 1);
    st->n = s->n;
    st->N = s->cl.total_gpus;
    st->L = (int64_t)s->opts.slot * ((240 + s->opts.slot - 1) / s->opts.slot);
    st->t0 = s->now;
    st->g = ef_calloc(n, sizeof *st->g);
    st->cls = ef_calloc(n, sizeof *st->cls);
    st->last = ef_calloc(n, sizeof *st->last);
    st->pl = ef_calloc(n, sizeof *st->pl);
    st->npl = ef_calloc(n, sizeof *st->npl);
    st->cappl = ef_calloc(n, sizeof *st->cappl);
    st->ord = ef_malloc(n * sizeof *st->ord);
    st->sel = ef_calloc(n, sizeof *st->sel);
    st->mg = ef_malloc(n * sizeof *st->mg);
    st->mr = ef_malloc(n * sizeof *st->mr);
    st->mm = ef_malloc(n * sizeof *st->mm);
    st->run = ef_malloc(n * sizeof *st->run);
    st->ok = ef_malloc(n * sizeof *st->ok);
    st->plan = ef_malloc(n * CH_H * sizeof *st->plan);
    st->sign = 2;
    return st;
}

static void fini(void *v)
{
    chst *st = v;
    for (int i = 0; i < st->n; i++)
        free(st->pl[i]);
    free(st->pl);
    free(st->npl);
    free(st->cappl);
    free(st->g);
    free(st->cls);
    free(st->last);
    free(st->use);
    free(st->ord);
    free(st->sel);
    free(st->mg);
    free(st->mr);
    free(st->mm);
    free(st->run);
    free(st->ok);
    free(st->plan);
    free(st);
}

static int *use_at(chst *st, int64_t l)
{
    if (l >= st->nuse) {
        int64_t nn = st->nuse ? st->nuse : 1024;
        while (nn <= l)
            nn *= 2;
        st->use = ef_realloc(st->use, (size_t)nn * sizeof *st->use);
        memset(st->use + st->nuse, 0, (size_t)(nn - st->nuse) *
                                          sizeof *st->use);
        st->nuse = nn;
    }
    return &st->use[l];
}

static void promise(chst *st, int i, int64_t l)
{
    if (st->npl[i] == st->cappl[i]) {
        st->cappl[i] = st->cappl[i] ? 2 * st->cappl[i] : 8;
        st->pl[i] = ef_realloc(st->pl[i], (size_t)st->cappl[i] *
                                              sizeof *st->pl[i]);
    }
    st->pl[i][st->npl[i]++] = l;
    *use_at(st, l) += st->g[i];
}

static void forget(chst *st, int i)
{
    for (int k = 0; k < st->npl[i]; k++)
        *use_at(st, st->pl[i][k]) -= st->g[i];
    st->npl[i] = 0;
}

static int cmp_lease_asc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void reverse_leases(int64_t *a, int n)
{
    for (int x = 0, y = n - 1; x < y; x++, y--) {
        int64_t t = a[x];
        a[x] = a[y];
        a[y] = t;
    }
}

/* Sort job i's promised leases (distinct numbers) in ascending order,
 * given that pl[i][from..] was promised in descending order: a reversal
 * when the earlier ones all come before, else a full sort (the same
 * result: the numbers are distinct). */
static void sort_promised(chst *st, int i, int from)
{
    int64_t *pl = st->pl[i];
    int n = st->npl[i];
    reverse_leases(pl + from, n - from);
    if (from > 0 && from < n && pl[from - 1] > pl[from])
        qsort(pl, (size_t)n, sizeof *pl, cmp_lease_asc);
}

/* Whether job i is promised lease l (its leases are ascending). */
static int promised(const chst *st, int i, int64_t l)
{
    const int64_t *pl = st->pl[i];
    int lo = 0, hi = st->npl[i];
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (pl[mid] < l)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < st->npl[i] && pl[lo] == l;
}

/* Leases job i still needs from its remaining work. */
static int leases_needed(const sim *s, const chst *st, int i)
{
    const sim_job *j = &s->jobs[i];
    double start = ovh_expect_id(s->opts.overhead, j->ovh, 0, st->g[i], 0);
    double est = 1.1 * bl_seconds_left(j, st->g[i]) + start;
    double r = ceil(est / (double)st->L - 1e-9);
    return r < CH_MAX_NEED ? (int)r : CH_MAX_NEED;
}

/* Take r leases for job i in [from, last], latest first; 0 if no room. */
static int pack_back(chst *st, int i, int64_t from, int r)
{
    int got = 0;
    for (int64_t l = st->last[i]; l >= from && got < r; l--)
        got += *use_at(st, l) + st->g[i] <= st->N;
    if (got < r)
        return 0;
    got = 0;
    int before = st->npl[i];
    for (int64_t l = st->last[i]; l >= from && got < r; l--)
        if (*use_at(st, l) + st->g[i] <= st->N) {
            promise(st, i, l);
            got++;
        }
    if (st->npl[i] > 1) /* (no leases: pl[i] may be NULL) */
        sort_promised(st, i, before);
    return 1;
}

static int cmp_admit(const void *a, const void *b, void *ctx)
{
    const int *key = ctx; /* per job: g, slack, last (3 ints) */
    int x = *(const int *)a, y = *(const int *)b;
    const int *kx = key + 3 * x, *ky = key + 3 * y;
    if (kx[0] != ky[0])
        return kx[0] > ky[0] ? -1 : 1;
    if (kx[1] != ky[1])
        return kx[1] < ky[1] ? -1 : 1;
    if (kx[2] != ky[2])
        return kx[2] > ky[2] ? -1 : 1;
    return x - y;
}

typedef struct fill_ctx {
    const sim *s;
    const chst *st;
    int64_t t;
} fill_ctx;

static int cmp_fill(const void *a, const void *b, void *ctx)
{
    const fill_ctx *c = ctx;
    int x = *(const int *)a, y = *(const int *)b;
    const sim_job *jx = &c->s->jobs[x], *jy = &c->s->jobs[y];
    double lx = bl_seconds_left(jx, c->st->g[x]);
    double ly = bl_seconds_left(jy, c->st->g[y]);
    int fx = jx->best_effort || (double)c->t + lx <= (double)jx->in->deadline;
    int fy = jy->best_effort || (double)c->t + ly <= (double)jy->in->deadline;
    if (fx != fy)
        return fy - fx;
    int ux = c->st->cls[x] == CH_UNACCEPTED, uy = c->st->cls[y] ==
                                                 CH_UNACCEPTED;
    if (ux != uy)
        return uy - ux;
    double wx = lx * c->st->g[x], wy = ly * c->st->g[y];
    if (wx != wy)
        return wx < wy ? -1 : 1;
    if (jx->in->submit != jy->in->submit)
        return jx->in->submit < jy->in->submit ? -1 : 1;
    return x - y;
}

/* Sort job i's promised leases in ascending order after a selection:
 * pl[i][..t1) ascending, then two descending runs [t1, t2) and [t2, ..),
 * both above the first part. The numbers are distinct: the result is
 * the one sort of them. */
static void sort_tail(chst *st, int i, int t1, int t2)
{
    int64_t *pl = st->pl[i];
    int n = st->npl[i];
    if (n < 2) /* (no leases: pl may be NULL) */
        return;
    if (t2 == n) { /* one run */
        reverse_leases(pl + t1, n - t1);
        return;
    }
    int n1 = t2 - t1, n2 = n - t2;
    int64_t *tmp = ef_malloc((size_t)(n1 + n2) * sizeof *tmp);
    int x = n1 - 1, y = n2 - 1, k = 0; /* each run from its smallest */
    while (x >= 0 || y >= 0) {
        if (y < 0 || (x >= 0 && pl[t1 + x] < pl[t2 + y]))
            tmp[k++] = pl[t1 + x--];
        else
            tmp[k++] = pl[t2 + y--];
    }
    memcpy(pl + t1, tmp, (size_t)k * sizeof *tmp);
    free(tmp);
}

/* Selection at a lease start: which accepted jobs run in lease c. */
static void select_lease(sim *s, chst *st, int64_t c)
{
    int na = 0, demand = 0, unacc = 0;
    for (int k = 0; k < s->nact; k++) {
        int i = s->act[k];
        if (st->cls[i] == CH_UNACCEPTED)
            unacc = 1;
        if (st->cls[i] != CH_ACCEPTED)
            continue;
        int r = leases_needed(s, st, i);
        int64_t m = st->last[i] - c + 1;
        if (r > m) { /* can no longer make it: demoted */
            forget(st, i);
            st->cls[i] = CH_UNACCEPTED;
            unacc = 1;
            st->changed = 1;
            continue;
        }
        st->ord[na] = i;
        st->mg[na] = st->g[i];
        st->mr[na] = r;
        st->mm[na] = (int)(m < 1 << 30 ? m : 1 << 30);
        demand += st->g[i];
        na++;
    }
    int sign = unacc ? -1 : 1;
    if (sign != st->sign)
        st->changed = 1;
    st->sign = sign;
    if (!st->changed) {
        int used = 0;
        for (int a = 0; a < na; a++) {
            int i = st->ord[a], planned = promised(st, i, c);
            if (planned && used + st->g[i] <= st->N) {
                st->sel[i] = 1;
                used += st->g[i];
            } else if (planned) {
                st->changed = 1; /* the tail's promise was too optimistic */
            }
        }
        return;
    }
    st->changed = 0;
    for (int a = 0; a < na; a++)
        forget(st, st->ord[a]);
    if (sign > 0 && demand <= st->N) {
        /* everyone runs from now on: nothing to arbitrate */
        for (int a = 0; a < na; a++) {
            int i = st->ord[a];
            for (int l = 0; l < st->mr[a]; l++)
                promise(st, i, c + l);
            st->sel[i] = st->mr[a] > 0;
        }
        return;
    }
    /* the node budget alone bounds the search: no clock, so a trace
     * gives the same answer on any machine and under any load */
    int budget = s->opts.mip_nodes > 0 ? s->opts.mip_nodes : CH_NODES;
    s->solver_fallbacks += bl_lease_mip(na, st->mg, st->mr, st->mm, CH_H,
                                        st->N, sign, budget, 0.0, st->run,
                                        st->ok, st->plan);
    for (int a = 0; a < na; a++) {
        int i = st->ord[a];
        if (!st->ok[a]) {
            st->cls[i] = CH_UNACCEPTED;
            continue;
        }
        int got = 0;
        for (int l = 0; l < CH_H; l++)
            if (st->plan[a * CH_H + l]) {
                promise(st, i, c + l);
                got++;
            }
        /* the tail block: latest leases with room first, then any
         * latest leases not taken yet (both passes descend; the leases
         * of the individual ones, below c + CH_H, come first in pl[i]) */
        int t1 = st->npl[i];
        for (int64_t l = st->last[i]; l >= c + CH_H && got < st->mr[a]; l--)
            if (*use_at(st, l) + st->g[i] <= st->N) {
                promise(st, i, l);
                got++;
            }
        int t2 = st->npl[i], p = t1;
        for (int64_t l = st->last[i]; l >= c + CH_H && got < st->mr[a]; l--) {
            while (p < t2 && st->pl[i][p] > l)
                p++;
            if (!(p < t2 && st->pl[i][p] == l)) {
                promise(st, i, l);
                got++;
            }
        }
        sort_tail(st, i, t1, t2);
        st->sel[i] = st->run[a];
    }
}

static int64_t point(sim *s, void *v, int64_t t, const int *rel, int nrel)
{
    chst *st = v;
    int N = st->N;
    int64_t c = (t - st->t0) / st->L;
    int boundary = (t - st->t0) % st->L == 0;
    /* departures free their promised leases */
    int busy = 0;
    for (int i = 0; i < st->n; i++) {
        if (st->cls[i] != CH_NONE && s->jobs[i].state != SJ_ACTIVE) {
            if (st->cls[i] == CH_ACCEPTED)
                st->changed = 1;
            forget(st, i);
            st->cls[i] = CH_NONE;
        }
        busy |= st->cls[i] != CH_NONE;
    }
    /* nothing promised, no job in play: count leases from this one on
     * (the same grid; lease numbers, and the memory they index, stay as
     * small as the busy stretch however far apart jobs arrive) */
    if (!busy && c > 0) {
        st->t0 += c * st->L;
        c = 0;
        free(st->use);
        st->use = NULL;
        st->nuse = 0;
    }
    /* admission of the newcomers, as one batch (with the reference's
     * behaviour, arrivals wait for the next lease start to be tested) */
    int defer = s->opts.baselines_reference && !boundary;
    for (int r = 0; r < nrel; r++) {
        int i = rel[r];
        int g = bl_admit(s, i);
        if (!g)
            continue;
        st->g[i] = g;
        st->cls[i] = CH_NEW;
    }
    int nn = 0;
    int *key = ef_malloc((size_t)(3 * (s->nact ? s->nact : 1)) * sizeof *key);
    int *idx = ef_malloc((size_t)(s->nact ? s->nact : 1) * sizeof *idx);
    /* the reference selects a lease's jobs before it tests the arrivals,
     * so a newcomer's first usable lease is the next one */
    int ref = s->opts.baselines_reference;
    int64_t from = boundary && !ref ? c : c + 1;
    int free_gpus = N;
    for (int k = 0; k < s->nact; k++)
        st->sel[s->act[k]] = 0;
    if (boundary && ref)
        select_lease(s, st, c);
    for (int k = 0; k < s->nact && !defer; k++) {
        int i = s->act[k];
        const sim_job *j = &s->jobs[i];
        if (st->cls[i] != CH_NEW)
            continue;
        st->cls[i] = CH_UNACCEPTED;
        if (j->best_effort)
            continue;
        int64_t last = (j->in->deadline - st->t0) / st->L - 1;
        if (last > c + CH_AHEAD)
            last = c + CH_AHEAD;
        st->last[i] = last;
        int need = leases_needed(s, st, i);
        int64_t slack = last - from + 1 - need;
        if (slack < 0)
            continue;
        key[3 * nn] = st->g[i];
        key[3 * nn + 1] = (int)(slack < 1 << 30 ? slack : 1 << 30);
        key[3 * nn + 2] = (int)(last < 1 << 30 ? last : 1 << 30);
        idx[nn++] = i;
    }
    int *pos = ef_malloc((size_t)(nn ? nn : 1) * sizeof *pos);
    for (int k = 0; k < nn; k++)
        pos[k] = k;
    qsort_r(pos, (size_t)nn, sizeof *pos, cmp_admit, key);
    for (int k = 0; k < nn; k++) {
        int i = idx[pos[k]];
        if (pack_back(st, i, from, leases_needed(s, st, i))) {
            st->cls[i] = CH_ACCEPTED;
            if (ref) /* judged by its lease-floored deadline */
                s->jobs[i].due = st->t0 + (s->jobs[i].in->deadline -
                                           st->t0) / st->L * st->L;
            st->changed = 1;
        }
    }
    free(pos);
    free(key);
    free(idx);
    /* who runs */
    if (boundary && !ref) {
        select_lease(s, st, c);
    } else if (!boundary) {
        for (int k = 0; k < s->nact; k++)
            if (s->jobs[s->act[k]].g > 0)
                st->sel[s->act[k]] = 1;
    }
    for (int k = 0; k < s->nact; k++)
        if (st->sel[s->act[k]])
            free_gpus -= st->g[s->act[k]];
    ef_assert(free_gpus >= 0);
    /* filling: idle GPUs to unaccepted jobs, then accepted ones ahead of
     * their leases (the reference fills only at lease starts, and never
     * with accepted jobs: they run only in the leases granted to them) */
    if (boundary || !ref) {
        int m = 0;
        for (int k = 0; k < s->nact; k++) {
            int i = s->act[k];
            if (!st->sel[i] && st->cls[i] != CH_NEW &&
                !(ref && st->cls[i] == CH_ACCEPTED))
                st->ord[m++] = i;
        }
        fill_ctx fc = {s, st, t};
        qsort_r(st->ord, (size_t)m, sizeof *st->ord, cmp_fill, &fc);
        for (int k = 0; k < m && free_gpus > 0; k++) {
            int i = st->ord[k];
            if (st->g[i] <= free_gpus) {
                st->sel[i] = 1;
                free_gpus -= st->g[i];
            }
        }
    }
    int waiting = 0;
    for (int k = 0; k < s->nact; k++) {
        int i = s->act[k];
        s->jobs[i].want = st->sel[i] ? st->g[i] : 0;
        waiting |= !st->sel[i];
    }
    if (!waiting && !st->changed)
        return INT64_MAX;
    return st->t0 + (c + 1) * st->L;
}

const sim_policy sim_policy_chronus = {
    "chronus", "Chronus: requested GPU counts, lease-based admission and "
    "selection (GLPK MIP), spare GPUs to unaccepted jobs", init, point, fini};
