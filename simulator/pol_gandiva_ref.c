/*
 * pol_gandiva_ref.c: Gandiva under --baselines reference: the reference
 * implementation's Gandiva (ElasticFlow's artifact simulator) rule by
 * rule, so that its numbers can be compared with the reference's runs.
 * Each rule names its source in ../shared/reference/algorithms.md; the
 * defects it keeps are listed there in §8.8 and §8.11.
 *
 * Rounds (§6.3, §4.3; sim.h SIM_POINTS_BATCHED): at arrivals, batched a
 * slot apart, and every slot once no arrival remains; completions make
 * no round. A round of the reference runs: rebalance the classes,
 * execute (credit the interval since the last round to the first
 * 'capacity' jobs of every set's list, detect completions, rotate),
 * place the round's arrivals, retry the waiting jobs if a set was freed.
 * The rebalance at round k+1 sees exactly the state round k left, so it
 * runs here at the end of round k, and the jobs it puts first in their
 * sets are the ones the simulator runs (and the reference credits) over
 * the interval to round k+1; a completion inside the interval is exact,
 * as the reference's back-dated end time is.
 *
 * Node sets (§5.2): a set of class g (its jobs' size) holds ceil(g/gpn)
 * nodes and runs 'capacity' = nodes x gpn / g jobs at once; each class
 * keeps its sets in a list that is stably re-sorted by 'util' after each
 * placement. 'util' counts jobs placed or moved into the set; a
 * completion never lowers it (only a grow's re-spread resets it).
 */
#include <math.h>
#include <string.h>

#include "common/util.h"
#include "simulator/baselines.h"

#define NCLS 31 /* classes by log2 of the size */

typedef struct rset {
    int cls;        /* its jobs' size */
    int nn, *node;  /* its nodes, in the order taken */
    int cap;        /* jobs that run at once */
    int util;
    int nj, capj, *job; /* its job list, in order */
    int alive;
} rset;

typedef struct rlist {
    int n, cap, *s; /* set indices, in list order */
} rlist;

typedef struct gref {
    int n, gpn, N;
    rset *set;
    int nset, capset;
    int *dead, ndead;   /* closed sets' indices, for reuse */
    rlist cls[NCLS];
    int *freen, nfree;  /* free nodes, in list order */
    int *pend, npend;   /* waiting jobs, in order */
    int *g;             /* job -> requested size */
    int *in_set;        /* job -> set or -1 */
    int **pin;          /* job -> its GPU ids */
    int *tmp;           /* jobs moved (n) */
} gref;

static int lg(int g)
{
    int l = 0;
    while ((1 << l) < g)
        l++;
    return l;
}

static void l_push(rlist *L, int k)
{
    if (L->n == L->cap) {
        L->cap = L->cap ? 2 * L->cap : 8;
        L->s = ef_realloc(L->s, (size_t)L->cap * sizeof *L->s);
    }
    L->s[L->n++] = k;
}

static int l_pop0(rlist *L)
{
    int k = L->s[0];
    memmove(L->s, L->s + 1, (size_t)(L->n - 1) * sizeof *L->s);
    L->n--;
    return k;
}

static void l_remove(rlist *L, int k)
{
    int w = 0;
    for (int r = 0; r < L->n; r++)
        if (L->s[r] != k)
            L->s[w++] = L->s[r];
    L->n = w;
}

/* The reference's node_list.sort(key=util): stable, ascending. */
static void l_sort(const gref *st, rlist *L)
{
    for (int a = 1; a < L->n; a++)
        for (int b = a; b > 0 && st->set[L->s[b]].util <
                                     st->set[L->s[b - 1]].util; b--) {
            int t = L->s[b];
            L->s[b] = L->s[b - 1];
            L->s[b - 1] = t;
        }
}

static void s_add(gref *st, int k, int i)
{
    rset *x = &st->set[k];
    if (x->nj == x->capj) {
        x->capj = x->capj ? 2 * x->capj : 4;
        x->job = ef_realloc(x->job, (size_t)x->capj * sizeof *x->job);
    }
    x->job[x->nj++] = i;
    x->util++;
    st->in_set[i] = k;
}

/* A new set of class g on the first nodes of the free list (the caller
 * checked there are enough), holding no job. */
static int s_open(gref *st, int g)
{
    int k;
    if (st->ndead > 0) {
        k = st->dead[--st->ndead];
    } else {
        if (st->nset == st->capset) {
            st->capset = st->capset ? 2 * st->capset : 16;
            st->set = ef_realloc(st->set,
                                 (size_t)st->capset * sizeof *st->set);
            st->dead = ef_realloc(st->dead,
                                  (size_t)st->capset * sizeof *st->dead);
        }
        k = st->nset++;
    }
    rset *x = &st->set[k];
    memset(x, 0, sizeof *x);
    x->cls = g;
    x->nn = (g + st->gpn - 1) / st->gpn;
    x->node = ef_malloc((size_t)x->nn * sizeof *x->node);
    for (int u = 0; u < x->nn; u++)
        x->node[u] = st->freen[u];
    memmove(st->freen, st->freen + x->nn,
            (size_t)(st->nfree - x->nn) * sizeof *st->freen);
    st->nfree -= x->nn;
    x->cap = x->nn * st->gpn / g;
    x->alive = 1;
    return k;
}

/* The set's nodes go to the end of the free list. */
static void s_close(gref *st, int k)
{
    rset *x = &st->set[k];
    for (int u = 0; u < x->nn; u++)
        st->freen[st->nfree++] = x->node[u];
    x->alive = 0;
    free(x->node);
    free(x->job);
    x->node = x->job = NULL;
    x->nj = x->capj = 0;
    st->dead[st->ndead++] = k;
}

/* Placement (§5.2 place(g)): the first set of the class if a job more
 * stays strictly under its capacity (§8.11: one slot always left), else
 * a new set on free nodes, else the first set regardless (time
 * slicing); 0: no set of its class and no free node (the job waits). */
static int place(gref *st, int i)
{
    int g = st->g[i];
    rlist *L = &st->cls[lg(g)];
    if (L->n > 0) {
        int k = l_pop0(L);
        l_push(L, k);
        if (st->set[k].util + 1 < st->set[k].cap) {
            s_add(st, k, i);
            l_sort(st, L);
            return 1;
        }
    }
    if ((g + st->gpn - 1) / st->gpn <= st->nfree) {
        int k = s_open(st, g);
        s_add(st, k, i);
        l_push(L, k);
        l_sort(st, L);
        return 1;
    }
    if (L->n > 0) {
        int k = l_pop0(L);
        s_add(st, k, i);
        l_push(L, k);
        l_sort(st, L);
        return 1;
    }
    return 0;
}

/* Jobs c of tmp[] join, one by one, the first set of L (re-sorted after
 * each: §5.2, the shrink's and the grow's moves). */
static void spread(gref *st, rlist *L, int c)
{
    for (int u = 0; u < c; u++) {
        s_add(st, L->s[0], st->tmp[u]);
        l_sort(st, L);
    }
}

/* Shrink class g by k sets, keeping one (§5.2): all k are taken off the
 * front of the list first, then their jobs move. */
static void shrink(gref *st, int g, int k)
{
    rlist *L = &st->cls[lg(g)];
    if (L->n <= k)
        k = L->n - 1;
    int c = 0;
    for (int r = 0; r < k; r++) {
        int q = l_pop0(L);
        memcpy(st->tmp + c, st->set[q].job,
               (size_t)st->set[q].nj * sizeof *st->tmp);
        c += st->set[q].nj;
        s_close(st, q);
    }
    if (k > 0)
        spread(st, L, c);
}

/* Grow class g by k sets while free nodes last (§5.2), then re-spread
 * its jobs over its sets, utils reset. The reference skips the re-spread
 * when its last attempt opened a set of one node (the loop that takes
 * the nodes reuses the counter the re-spread tests, which then reads
 * nodes - 1 = 0; a detail algorithms.md does not give, read in the
 * reference's gandiva_node_set_expand): the empty sets are then closed
 * again at the next round, its jobs staying where they are. */
static void expand(gref *st, int g, int k)
{
    rlist *L = &st->cls[lg(g)];
    int nn = (g + st->gpn - 1) / st->gpn, last_opened = 0;
    for (int r = 0; r < k; r++) {
        last_opened = nn <= st->nfree;
        if (last_opened)
            l_push(L, s_open(st, g));
    }
    if (last_opened && nn == 1)
        return;
    int c = 0;
    for (int r = 0; r < L->n; r++) {
        rset *x = &st->set[L->s[r]];
        if (x->nj == 0)
            continue;
        memcpy(st->tmp + c, x->job, (size_t)x->nj * sizeof *st->tmp);
        c += x->nj;
        x->nj = 0;
        x->util = 0;
    }
    spread(st, L, c);
}

/* The rebalance (§5.2, gandiva_node_set_adjust): demand_g = jobs_g x g,
 * target_g = min(floor(demand_g / sum demand x N), demand_g) against the
 * GPUs its sets hold (all measured before any change); a class under its
 * target grows by ceil(diff / g) sets, one over it shrinks by
 * ceil(-diff / g). Classes in ascending size. */
static void adjust(gref *st)
{
    long dem[NCLS], occ[NCLS], tot = 0;
    for (int l = 0; l < NCLS; l++) {
        dem[l] = occ[l] = 0;
        for (int r = 0; r < st->cls[l].n; r++) {
            const rset *x = &st->set[st->cls[l].s[r]];
            dem[l] += (long)x->nj << l;
            occ[l] += (long)x->nn * st->gpn;
        }
        tot += dem[l];
    }
    if (tot == 0)
        return;
    for (int l = 0; l < NCLS; l++) {
        if (dem[l] == 0)
            continue;
        long g = 1L << l;
        long plan = (long)floor((double)dem[l] / (double)tot * st->N);
        long diff = (plan < dem[l] ? plan : dem[l]) - occ[l];
        if (diff > 0)
            expand(st, (int)g, (int)((diff + g - 1) / g));
        else if (diff < 0)
            shrink(st, (int)g, (int)((-diff + g - 1) / g));
    }
}

/* The execute step's bookkeeping (§5.2 time_slicing_execute), the
 * interval's progress being the simulator's: in every set (classes in
 * ascending size, sets in list order) the running prefix moves to the
 * back of the list when the round's time is a multiple of 60 s (§8.11),
 * finished jobs leave, and an emptied set frees its nodes. Returns 1 if
 * a set was freed. */
static int execute(gref *st, const sim *s, int64_t t)
{
    int freed = 0;
    for (int l = 0; l < NCLS; l++) {
        rlist *L = &st->cls[l];
        for (int r = 0; r < L->n; r++) {
            rset *x = &st->set[L->s[r]];
            int conc = x->nj < x->cap ? x->nj : x->cap;
            if (t % 60 == 0 && x->nj > conc) {
                memcpy(st->tmp, x->job, (size_t)conc * sizeof *st->tmp);
                memmove(x->job, x->job + conc,
                        (size_t)(x->nj - conc) * sizeof *x->job);
                memcpy(x->job + x->nj - conc, st->tmp,
                       (size_t)conc * sizeof *st->tmp);
            }
            int w = 0;
            for (int u = 0; u < x->nj; u++) {
                int i = x->job[u];
                if (s->jobs[i].state == SJ_ACTIVE)
                    x->job[w++] = i;
                else
                    st->in_set[i] = -1;
            }
            x->nj = w;
        }
        for (int r = 0; r < L->n;) {
            int k = L->s[r];
            if (st->set[k].nj > 0) {
                r++;
                continue;
            }
            s_close(st, k);
            l_remove(L, k);
            freed = 1;
        }
    }
    return freed;
}

void *bl_gandiva_ref_init(sim *s)
{
    gref *st = ef_calloc(1, sizeof *st);
    size_t n = (size_t)(s->n ? s->n : 1);
    st->n = s->n;
    st->gpn = s->cl.gpus_per_node;
    st->N = s->cl.total_gpus;
    st->freen = ef_malloc((size_t)(s->cl.nodes + 1) * sizeof *st->freen);
    for (int u = 0; u < s->cl.nodes; u++)
        st->freen[st->nfree++] = u;
    st->pend = ef_malloc(n * sizeof *st->pend);
    st->g = ef_calloc(n, sizeof *st->g);
    st->in_set = ef_malloc(n * sizeof *st->in_set);
    st->pin = ef_calloc(n, sizeof *st->pin);
    st->tmp = ef_malloc(n * sizeof *st->tmp);
    for (int i = 0; i < s->n; i++)
        st->in_set[i] = -1;
    /* its rounds (§6.3, §4.3) and its overhead: every running job, the
     * formula's full cost, at every round while arrivals remain (§4.4) */
    s->points_at = SIM_POINTS_BATCHED;
    s->ref_charge = SIM_REF_CHARGE_FULL;
    return st;
}

void bl_gandiva_ref_fini(void *v)
{
    gref *st = v;
    for (int k = 0; k < st->nset; k++) {
        free(st->set[k].node);
        free(st->set[k].job);
    }
    for (int l = 0; l < NCLS; l++)
        free(st->cls[l].s);
    for (int i = 0; i < st->n; i++)
        free(st->pin[i]);
    free(st->set);
    free(st->dead);
    free(st->freen);
    free(st->pend);
    free(st->g);
    free(st->in_set);
    free(st->pin);
    free(st->tmp);
    free(st);
}

/* The running prefix of set x, the first 'capacity' jobs of its list,
 * on the set's GPUs (a sub-node set's k-th runs on GPUs [k g, (k+1) g)
 * of its node). */
static void run_prefix(gref *st, sim *s, const rset *x)
{
    int conc = x->nj < x->cap ? x->nj : x->cap;
    for (int u = 0; u < conc; u++) {
        int i = x->job[u], g = x->cls, c = 0;
        if (g < st->gpn)
            for (int v = 0; v < g; v++)
                st->pin[i][c++] = x->node[0] * st->gpn + u * g + v;
        else
            for (int a = 0; a < x->nn; a++)
                for (int v = 0; v < st->gpn; v++)
                    st->pin[i][c++] = x->node[a] * st->gpn + v;
        ef_sort_ints(st->pin[i], g); /* the nodes in any order */
        s->jobs[i].want = g;
        s->jobs[i].pin = st->pin[i];
    }
}

/* The jobs that run until the next round: every live set's prefix. */
static void runners(gref *st, sim *s)
{
    for (int k = 0; k < s->nact; k++) {
        sim_job *j = &s->jobs[s->act[k]];
        j->want = 0;
        j->pin = NULL;
        j->share = 1;
    }
    for (int l = 0; l < NCLS; l++)
        for (int r = 0; r < st->cls[l].n; r++)
            run_prefix(st, s, &st->set[st->cls[l].s[r]]);
}

int64_t bl_gandiva_ref_point(sim *s, void *v, int64_t t, const int *rel,
                             int nrel)
{
    gref *st = v;
    int freed = execute(st, s, t);
    for (int r = 0; r < nrel; r++) {
        int i = rel[r];
        int g = bl_admit(s, i);
        if (!g)
            continue;
        st->g[i] = g;
        st->pin[i] = ef_malloc((size_t)g * sizeof(int));
        if (!place(st, i))
            st->pend[st->npend++] = i;
    }
    if (freed) { /* waiting jobs are retried only when a set was freed */
        int keep = 0;
        for (int p = 0; p < st->npend; p++)
            if (!place(st, st->pend[p]))
                st->pend[keep++] = st->pend[p];
        st->npend = keep;
    }
    adjust(st); /* the next round's rebalance, see above */
    runners(st, s);
    /* after the last arrival the reference's rounds come every slot */
    return s->released_left == 0 ? t + s->opts.slot : INT64_MAX;
}
