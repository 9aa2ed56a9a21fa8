/*
 * pol_pollux.c: the Pollux baseline (Qiao et al., OSDI'21) as the
 * ElasticFlow artifact runs it for Fig. 8(a): deadline-unaware, elastic in
 * GPU count and batch size, reallocating every slot (the artifact's
 * 60 s interval). Every job is admitted.
 *
 * Model (goodput.h, data in inputs/pollux/<model>/): a job of model m
 * runs, on the GPUs it holds, the batch size and accumulation steps of
 * the highest goodput for its current epoch (gp_best on its placement).
 *   - Work: it completes when it has processed its trace's samples
 *     (iterations x trace batch size, the artifact's max_sample) or when
 *     its progress (goodput integrated over productive time) reaches the
 *     end of training (the last epoch of the validation runs), whichever
 *     comes first. The loop advances it at a rate, in trace iterations per
 *     second, that makes the loop's completion time exactly that moment
 *     for the configuration of the slot; progress and epoch are updated at
 *     every point (every slot), so gains change at most one slot late.
 *   - Re-allocation cost: the simulation's overhead model (--overhead);
 *     the reference's is "restart" (30 s without progress per change).
 *
 * Allocation at each point (the reference uses NSGA-II; this is a
 * deterministic greedy and local search, compared in test_pollux.c and
 * benchmarks/results/baselines.md):
 *   - Candidates: the active jobs holding GPUs (submit order, then queue
 *     order), then the waiting ones, at most one per GPU. Each candidate
 *     gets 1 GPU; later ones wait.
 *   - Objective: the p-mean with p = -1 of the candidates' speedups, i.e.
 *     minimise sum 1 / speedup, where speedup(g) = goodput on g GPUs
 *     (packed on as few nodes as possible) / goodput on 1 GPU, times the
 *     reference's restart penalty max(age - 30 restarts, 0) / (age + 30)
 *     when a running job's GPU count would change (age = seconds since
 *     submit, restarts = its changes so far).
 *   - A job may hold at most min(max(2 x the most GPUs it has held, 1),
 *     64, largest batch / smallest local batch) GPUs (the reference's
 *     exploration limit); ncf at most 1 (the reference's setting).
 *   - Greedy: repeatedly add to one job the 1 to 'free' GPUs with the
 *     largest objective decrease per added GPU (ties: fewer GPUs, then
 *     candidate order) while that decrease is positive; then local
 *     search: move one GPU from the job that loses least to the job that
 *     gains most while that lowers the objective (at most 4N moves).
 *   - Placement (own GPU ids, sim.h): jobs whose count is unchanged keep
 *     their GPUs; the others, largest first: one node if it fits (best
 *     fit), else whole free nodes first, then the nodes with most free
 *     GPUs, never two multi-node jobs on one node (the reference's
 *     constraint). A job that cannot get all its GPUs runs on fewer.
 */
#define _GNU_SOURCE 1 /* qsort_r */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/path.h"
#include "common/util.h"
#include "simulator/goodput.h"
#include "simulator/pollux.h"
#include "simulator/sim.h"

#define PX_BIG 1e30      /* cost of an allocation with speedup 0 */
#define PX_RESTART 30.0  /* seconds in the reference's restart penalty */

typedef struct pxjob {
    int app;
    double progress;    /* goodput units */
    double last_rem;    /* rem at the last point */
    double rate;        /* the loop's rate since the last point */
    double goodput;     /* goodput of that configuration */
    int maxprof;        /* most GPUs held so far */
    int restarts;       /* count changes while running */
    int cur;            /* GPUs held since the last point */
    int *gpus;          /* their ids (capacity N) */
} pxjob;

typedef struct pxst {
    int napp;
    gp_app *apps;
    int *capapp;        /* per app: most GPUs a job may hold */
    double **gcache;    /* per app: [epoch * (N + 1) + g] goodput, -1 */
    double **scache;    /* per app: samples/s of that configuration */
    pxjob *pj;
    int N, gpn, nodes, n;
    /* scratch */
    int *cand, *c, *cmax, *placed, *order, *used, *nfree, *ndist, *per;
    double *age, *one, *cm; /* per candidate: age, goodput on 1 GPU */
    int *ep;                /* per candidate: its epoch */
} pxst;

static void fini(void *v)
{
    pxst *st = v;
    if (!st)
        return;
    for (int a = 0; a < st->napp; a++) {
        gp_app_free(&st->apps[a]);
        if (st->gcache)
            free(st->gcache[a]);
        if (st->scache)
            free(st->scache[a]);
    }
    for (int i = 0; st->pj && i < st->n; i++)
        free(st->pj[i].gpus);
    free(st->pj);
    free(st->apps);
    free(st->capapp);
    free(st->gcache);
    free(st->scache);
    free(st->cand);
    free(st->c);
    free(st->cmax);
    free(st->placed);
    free(st->order);
    free(st->used);
    free(st->nfree);
    free(st->ndist);
    free(st->per);
    free(st->age);
    free(st->one);
    free(st->ep);
    free(st->cm);
    free(st);
}

static void *init(sim *s, ef_err *e)
{
    pxst *st = ef_calloc(1, sizeof *st);
    st->N = s->cl.total_gpus;
    st->gpn = s->cl.gpus_per_node;
    st->nodes = s->cl.nodes;
    char dir[4096];
    if (s->opts.pollux_dir)
        snprintf(dir, sizeof dir, "%s", s->opts.pollux_dir);
    else
        snprintf(dir, sizeof dir, "%s/pollux", ef_datadir());
    size_t n = (size_t)(s->n ? s->n : 1);
    st->n = s->n;
    st->pj = ef_calloc(n, sizeof *st->pj);
    for (int i = 0; i < s->n; i++) {
        const char *m = s->jobs[i].in->model;
        int a = 0;
        while (a < st->napp && strcmp(st->apps[a].name, m) != 0)
            a++;
        if (a == st->napp) {
            st->apps = ef_realloc(st->apps,
                                  (size_t)(st->napp + 1) * sizeof *st->apps);
            ef_err le = {0};
            if (gp_app_load(&st->apps[a], dir, m, &le) != EF_OK) {
                ef_fail(e, le.kind ? le.kind : EF_E_INPUT, "policy pollux: "
                        "job %s (model %s): %s", s->jobs[i].in->id, m,
                        le.msg);
                gp_app_free(&st->apps[a]);
                fini(st);
                return NULL;
            }
            st->napp++;
        }
        st->pj[i].app = a;
    }
    for (int i = 0; i < s->n; i++)
        st->pj[i].gpus = ef_malloc((size_t)st->N * sizeof(int));
    st->capapp = ef_malloc((size_t)(st->napp ? st->napp : 1) * sizeof(int));
    st->gcache = ef_calloc((size_t)(st->napp ? st->napp : 1),
                           sizeof *st->gcache);
    st->scache = ef_calloc((size_t)(st->napp ? st->napp : 1),
                           sizeof *st->scache);
    for (int a = 0; a < st->napp; a++) {
        const gp_app *ap = &st->apps[a];
        int cap = (int)floor(ap->max_batch / ap->min_local + 1e-9);
        if (cap > 64)
            cap = 64;
        if (strcmp(ap->name, "ncf") == 0)
            cap = 1;
        if (cap < 1)
            cap = 1;
        st->capapp[a] = cap;
        size_t cells = (size_t)ap->nepoch * (size_t)(st->N + 1);
        st->gcache[a] = ef_malloc(cells * sizeof(double));
        st->scache[a] = ef_malloc(cells * sizeof(double));
        for (size_t k = 0; k < cells; k++)
            st->gcache[a][k] = -1;
    }
    st->cand = ef_malloc(n * sizeof(int));
    st->c = ef_malloc(n * sizeof(int));
    st->cmax = ef_malloc(n * sizeof(int));
    st->placed = ef_malloc(n * sizeof(int));
    st->order = ef_malloc(n * sizeof(int));
    st->age = ef_malloc(n * sizeof(double));
    st->one = ef_malloc(n * sizeof(double));
    st->ep = ef_malloc(n * sizeof(int));
    st->cm = ef_malloc((size_t)st->N * (size_t)(st->N + 1) * sizeof(double));
    st->used = ef_malloc((size_t)st->N * sizeof(int));
    st->nfree = ef_malloc((size_t)(st->nodes ? st->nodes : 1) * sizeof(int));
    st->ndist = ef_malloc((size_t)(st->nodes ? st->nodes : 1) * sizeof(int));
    st->per = ef_malloc((size_t)(st->nodes ? st->nodes : 1) * sizeof(int));
    return st;
}

/* Goodput (and samples/s) of app a on g packed GPUs in epoch ep. */
static double packed(pxst *st, int a, int g, int ep, double *samples)
{
    const gp_app *ap = &st->apps[a];
    size_t k = (size_t)ep * (size_t)(st->N + 1) + (size_t)g;
    if (st->gcache[a][k] < 0) {
        gp_config cf;
        gp_best_packed(ap, g, st->gpn, ep, &cf);
        st->gcache[a][k] = cf.goodput;
        st->scache[a][k] = cf.samples;
    }
    if (samples)
        *samples = st->scache[a][k];
    return st->gcache[a][k];
}

/* The objective's term of candidate k at g GPUs. */
static double cost(pxst *st, int k, int g)
{
    int i = st->cand[k];
    const pxjob *p = &st->pj[i];
    if (g <= 0)
        return PX_BIG;
    double one = st->one[k];
    double sp = one > 0 ? packed(st, p->app, g, st->ep[k], NULL) / one : 0;
    if (p->cur > 0 && g != p->cur) {
        double age = st->age[k];
        double pen = (age - PX_RESTART * p->restarts) / (age + PX_RESTART);
        sp *= pen > 0 ? pen : 0;
    }
    return sp > 0 ? 1.0 / sp : PX_BIG;
}

static int cmp_cand(const void *x, const void *y, void *ctx)
{
    const sim *s = ctx;
    int a = *(const int *)x, b = *(const int *)y;
    const sim_job *ja = &s->jobs[a], *jb = &s->jobs[b];
    int ra = ja->g > 0, rb = jb->g > 0;
    if (ra != rb)
        return rb - ra;
    if (ja->in->submit != jb->in->submit)
        return ja->in->submit < jb->in->submit ? -1 : 1;
    return a - b;
}

int px_allocate(int nc, int N, const int *cmax, const double *cost, int *c)
{
    int W = N + 1, free_g = N - nc;
    if (nc > N)
        return EF_ERR;
    for (int k = 0; k < nc; k++) {
        if (cmax[k] < 1 || cmax[k] > N)
            return EF_ERR;
        c[k] = 1;
    }
#define COST(k, g) cost[(size_t)(k) * (size_t)W + (size_t)(g)]
    while (free_g > 0) {
        int bk = -1, bg = 0;
        double best = 1e-12;
        for (int k = 0; k < nc; k++) {
            double c0 = COST(k, c[k]);
            int top = c[k] + free_g;
            if (top > cmax[k])
                top = cmax[k];
            for (int g = c[k] + 1; g <= top; g++) {
                double gain = (c0 - COST(k, g)) / (g - c[k]);
                if (gain > best * (1 + 1e-12)) {
                    best = gain;
                    bk = k;
                    bg = g;
                }
            }
        }
        if (bk < 0)
            break;
        free_g -= bg - c[bk];
        c[bk] = bg;
    }
    for (int it = 0; it < 4 * N; it++) {
        /* the cheapest donor and the best receiver (two of each, so
         * that they can differ); a free GPU is a donor that loses 0 */
        int d1 = -1, d2 = -1, r1 = -1, r2 = -1;
        double dl1 = INFINITY, dl2 = INFINITY, rg1 = -INFINITY,
               rg2 = -INFINITY;
        if (free_g > 0)
            dl1 = 0, d1 = nc; /* nc stands for the free pool */
        for (int k = 0; k < nc; k++) {
            double c0 = COST(k, c[k]);
            if (c[k] > 1) {
                double loss = COST(k, c[k] - 1) - c0;
                if (loss < dl1) {
                    dl2 = dl1, d2 = d1;
                    dl1 = loss, d1 = k;
                } else if (loss < dl2) {
                    dl2 = loss, d2 = k;
                }
            }
            if (c[k] < cmax[k]) {
                double gain = c0 - COST(k, c[k] + 1);
                if (gain > rg1) {
                    rg2 = rg1, r2 = r1;
                    rg1 = gain, r1 = k;
                } else if (gain > rg2) {
                    rg2 = gain, r2 = k;
                }
            }
        }
        int d = d1, r = r1;
        double delta = dl1 - rg1;
        if (d1 >= 0 && d1 == r1) {
            double a1 = d2 >= 0 ? dl2 - rg1 : INFINITY;
            double a2 = r2 >= 0 ? dl1 - rg2 : INFINITY;
            if (a1 <= a2)
                d = d2, delta = a1;
            else
                r = r2, delta = a2;
        }
        if (d < 0 || r < 0 || !(delta < -1e-9))
            break;
        if (d == nc)
            free_g--;
        else
            c[d]--;
        c[r]++;
    }
#undef COST
    return EF_OK;
}

/* Place 'want' GPUs for job i; returns how many it got (ids in
 * pj[i].gpus, ascending). */
static int place_job(pxst *st, int i, int want)
{
    int gpn = st->gpn, got = 0;
    pxjob *p = &st->pj[i];
    int node = -1;
    if (want <= gpn)
        for (int nd = 0; nd < st->nodes; nd++)
            if (st->nfree[nd] >= want &&
                (node < 0 || st->nfree[nd] < st->nfree[node]))
                node = nd;
    if (node >= 0) {
        for (int u = 0; u < gpn && got < want; u++)
            if (!st->used[node * gpn + u]) {
                st->used[node * gpn + u] = 1;
                p->gpus[got++] = node * gpn + u;
            }
        st->nfree[node] -= got;
        return got;
    }
    /* several nodes: whole free nodes, then the fullest free ones */
    int nn = 0;
    for (int pass = 0; pass < 2 && got < want; pass++) {
        for (;;) {
            int b = -1;
            for (int nd = 0; nd < st->nodes; nd++) {
                if (st->ndist[nd] || st->nfree[nd] == 0 || st->per[nd] < 0)
                    continue;
                if (pass == 0 && st->nfree[nd] < gpn)
                    continue;
                if (b < 0 || st->nfree[nd] > st->nfree[b])
                    b = nd;
            }
            if (b < 0 || got >= want)
                break;
            st->per[b] = -1; /* taken by this job */
            for (int u = 0; u < gpn && got < want; u++)
                if (!st->used[b * gpn + u]) {
                    st->used[b * gpn + u] = 1;
                    p->gpus[got++] = b * gpn + u;
                    st->nfree[b]--;
                }
            nn++;
        }
    }
    for (int nd = 0; nd < st->nodes; nd++)
        if (st->per[nd] < 0) {
            st->per[nd] = 0;
            if (nn > 1)
                st->ndist[nd] = 1;
        }
    return got;
}

static int cmp_intasc(const void *x, const void *y)
{
    return *(const int *)x - *(const int *)y;
}

static int64_t point(sim *s, void *v, int64_t t, const int *rel, int nrel)
{
    pxst *st = v;
    for (int k = 0; k < nrel; k++)
        sim_admit(s, rel[k]);
    /* progress since the last point */
    for (int k = 0; k < s->nact; k++) {
        int i = s->act[k];
        pxjob *p = &st->pj[i];
        sim_job *j = &s->jobs[i];
        if (p->cur > 0 && p->rate > 0)
            p->progress += p->goodput * (p->last_rem - j->rem) / p->rate;
        if (j->g == 0)
            p->cur = 0; /* (never preempted without a point, but be safe) */
    }
    int nc = 0;
    for (int k = 0; k < s->nact; k++)
        st->cand[nc++] = s->act[k];
    qsort_r(st->cand, (size_t)nc, sizeof *st->cand, cmp_cand, s);
    if (nc > st->N)
        nc = st->N;
    for (int k = 0; k < nc; k++) {
        int i = st->cand[k];
        pxjob *p = &st->pj[i];
        int m = 2 * p->maxprof > 1 ? 2 * p->maxprof : 1;
        if (m > st->capapp[p->app])
            m = st->capapp[p->app];
        if (m > st->N)
            m = st->N;
        st->cmax[k] = m;
        st->age[k] = (double)(t - s->jobs[i].in->submit);
        st->ep[k] = gp_epoch(&st->apps[p->app], p->progress);
        st->one[k] = packed(st, p->app, 1, st->ep[k], NULL);
    }
    if (nc > 0) {
        int W = st->N + 1;
        for (int k = 0; k < nc; k++)
            for (int g = 0; g <= st->N; g++)
                st->cm[(size_t)k * (size_t)W + (size_t)g] =
                    g <= st->cmax[k] ? cost(st, k, g) : PX_BIG;
        int rc = px_allocate(nc, st->N, st->cmax, st->cm, st->c);
        ef_assert(rc == EF_OK);
    }
    /* placement: unchanged counts keep their GPUs */
    memset(st->used, 0, (size_t)st->N * sizeof(int));
    for (int nd = 0; nd < st->nodes; nd++) {
        st->nfree[nd] = st->gpn;
        st->ndist[nd] = 0;
        st->per[nd] = 0;
    }
    for (int k = 0; k < nc; k++) {
        int i = st->cand[k];
        pxjob *p = &st->pj[i];
        st->placed[k] = 0;
        if (p->cur > 0 && p->cur == st->c[k]) {
            int first = -1, multi = 0;
            for (int u = 0; u < p->cur; u++) {
                int nd = p->gpus[u] / st->gpn;
                st->used[p->gpus[u]] = 1;
                st->nfree[nd]--;
                if (first < 0)
                    first = nd;
                else if (nd != first)
                    multi = 1;
            }
            if (multi)
                for (int u = 0; u < p->cur; u++)
                    st->ndist[p->gpus[u] / st->gpn] = 1;
            st->placed[k] = p->cur;
        }
    }
    int no = 0;
    for (int k = 0; k < nc; k++)
        if (st->placed[k] == 0)
            st->order[no++] = k;
    /* largest first, then candidate order (insertion sort: stable) */
    for (int a = 1; a < no; a++)
        for (int b = a; b > 0 && st->c[st->order[b]] > st->c[st->order[b - 1]];
             b--) {
            int tmp = st->order[b];
            st->order[b] = st->order[b - 1];
            st->order[b - 1] = tmp;
        }
    for (int q = 0; q < no; q++) {
        int k = st->order[q];
        st->placed[k] = place_job(st, st->cand[k], st->c[k]);
    }
    /* set the answers */
    for (int k = 0; k < s->nact; k++) {
        sim_job *j = &s->jobs[s->act[k]];
        j->want = 0;
        j->pin = NULL;
        j->rate = 0;
        j->rate_one = 0;
    }
    for (int k = 0; k < nc; k++) {
        int i = st->cand[k];
        pxjob *p = &st->pj[i];
        sim_job *j = &s->jobs[i];
        int g = st->placed[k];
        const gp_app *ap = &st->apps[p->app];
        if (g == 0) {
            if (p->cur > 0)
                p->restarts++;
            p->cur = 0;
            p->rate = 0;
            continue;
        }
        qsort(p->gpus, (size_t)g, sizeof(int), cmp_intasc);
        int nn = 0, last = -1;
        for (int u = 0; u < g; u++) {
            int nd = p->gpus[u] / st->gpn;
            if (nd != last) {
                st->per[nn++] = 0;
                last = nd;
            }
            st->per[nn - 1]++;
        }
        int ep = gp_epoch(ap, p->progress);
        gp_config cf;
        gp_best(ap, st->per, nn, ep, &cf);
        for (int nd = 0; nd < nn; nd++)
            st->per[nd] = 0;
        double b0 = (double)j->in->batch;
        double sr = cf.samples / b0; /* trace iterations per second */
        double left = gp_goal(ap) - p->progress;
        double r = sr;
        if (cf.goodput > 0 && left > 1e-9) {
            double rp = j->rem * cf.goodput / left;
            if (rp > r)
                r = rp;
        } else if (left <= 1e-9) {
            r = j->rem * 1e3 + 1; /* training complete: ends at once */
        }
        if (!(r > 0)) {
            p->cur = 0;
            p->rate = 0;
            continue;
        }
        double one_s;
        packed(st, p->app, 1, ep, &one_s);
        if (p->cur > 0 && g != p->cur)
            p->restarts++;
        p->cur = g;
        if (g > p->maxprof)
            p->maxprof = g;
        p->rate = r;
        p->goodput = cf.goodput;
        p->last_rem = j->rem;
        j->want = g;
        j->pin = p->gpus;
        j->rate = r;
        j->rate_one = one_s / b0 * (r / sr); /* efficiency in samples */
    }
    for (int k = nc; k < s->nact; k++) {
        pxjob *p = &st->pj[st->cand[k]];
        if (p->cur > 0)
            p->restarts++;
        p->cur = 0;
        p->rate = 0;
    }
    return s->nact > 0 ? t + s->opts.slot : INT64_MAX;
}

const sim_policy sim_policy_pollux = {
    "pollux",
    "Pollux: goodput-driven GPU counts and batch sizes, no deadlines",
    init, point, fini};
