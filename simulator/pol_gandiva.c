/*
 * pol_gandiva.c: the Gandiva baseline (Xiao et al., OSDI'18) as the
 * ElasticFlow artifact configures it: every job at its requested GPU
 * count, node sets per job size with packing, time slicing when a set is
 * oversubscribed, and migration.
 *
 *   - Node sets: a set of class g holds jobs of g GPUs. It is one node
 *     cut into gpus_per_node / g slots when g < gpus_per_node, else
 *     g / gpus_per_node whole nodes with one slot.
 *   - An arriving job goes to the least-used set of its class that has a
 *     free slot; else to a new set on the lowest free nodes; else it
 *     oversubscribes the least-used set of its class (time slicing); else
 *     (no set of its class, no free node) it waits, first come first
 *     served, and is retried at every point.
 *   - Time slicing: the jobs of one slot take turns, each computing
 *     1/k of the time when k share the slot (sim.h's time share). A job
 *     keeps its slot while it lives.
 *   - Migration: when jobs wait, a class whose jobs fit in fewer sets
 *     packs its least-used set into the others' free slots and frees its
 *     nodes; when free nodes exist, an oversubscribed set moves jobs to a
 *     new set of its class. Moves pay the overhead model's migration cost.
 * Deviations from the reference (algorithms.md 5.2, 6.3, 8.11): a set
 * takes jobs while it has a free slot (the reference's strict test keeps
 * one slot empty); time slicing is a continuous share rather than a
 * rotation whenever the clock is a multiple of 60; completions are exact
 * (the reference notices them only at arrivals or ticks); a size that is
 * not runnable is rejected rather than aborting; the class rebalancing by
 * demand is replaced by the packing and relief moves above.
 * --baselines reference (opts.baselines_reference) restores the
 * reference's behaviour that changes numbers: the strict test; no
 * packing (the reference never packs a class to free nodes); at every
 * point with arrivals (the reference's rounds) each class is resized to
 * its share of the demand (rebalance below), which shrinks classes into
 * oversubscribed sets; and in an oversubscribed slot only the job that
 * joined it first runs (the reference's rotation almost never happens).
 */
#include <math.h>
#include <string.h>

#include "common/util.h"
#include "simulator/baselines.h"

typedef struct gset {
    int cls;       /* job size */
    int nn;        /* nodes */
    int *node;     /* ascending */
    int slots;     /* capacity in jobs without time slicing */
    int *load;     /* jobs per slot */
    int nj;        /* jobs */
    int alive;
} gset;

typedef struct gst {
    int n, nodes, gpn;
    int strict;    /* the reference's test: a set keeps one slot free */
    char *free_node;
    gset *set;
    int nset, capset;
    int *set_of;   /* job -> set or -1 */
    int *slot_of;
    int64_t *seq;  /* job -> when it joined its slot */
    int64_t nseq;
    int *g;        /* job -> requested size */
    int **pin;     /* job -> its GPU ids */
    int *pend;     /* waiting jobs, FIFO */
    int npend;
    int *mem;      /* admitted jobs not yet seen finished */
    int nmem;
    const int *act; /* the simulation's active jobs at this point */
    int nact;
} gst;

static void *init(sim *s, ef_err *e)
{
    (void)e;
    gst *st = ef_calloc(1, sizeof *st);
    int n = s->n ? s->n : 1;
    st->n = s->n;
    st->nodes = s->cl.nodes;
    st->gpn = s->cl.gpus_per_node;
    st->strict = s->opts.baselines_reference;
    /* the reference charges its formula to every running job at every
     * round, without the cache (algorithms.md §4.4, §6.3) */
    if (s->opts.baselines_reference)
        s->ref_charge = SIM_REF_CHARGE_FULL;
    st->free_node = ef_malloc((size_t)st->nodes);
    memset(st->free_node, 1, (size_t)st->nodes);
    st->set_of = ef_malloc((size_t)n * sizeof *st->set_of);
    st->slot_of = ef_calloc((size_t)n, sizeof *st->slot_of);
    st->seq = ef_calloc((size_t)n, sizeof *st->seq);
    st->g = ef_calloc((size_t)n, sizeof *st->g);
    st->pin = ef_calloc((size_t)n, sizeof *st->pin);
    st->pend = ef_malloc((size_t)n * sizeof *st->pend);
    st->mem = ef_malloc((size_t)n * sizeof *st->mem);
    for (int i = 0; i < s->n; i++)
        st->set_of[i] = -1;
    return st;
}

static void fini(void *v)
{
    gst *st = v;
    for (int k = 0; k < st->nset; k++) {
        free(st->set[k].node);
        free(st->set[k].load);
    }
    for (int i = 0; i < st->n; i++)
        free(st->pin[i]);
    free(st->set);
    free(st->free_node);
    free(st->set_of);
    free(st->slot_of);
    free(st->seq);
    free(st->g);
    free(st->pin);
    free(st->pend);
    free(st->mem);
    free(st);
}

static int nodes_for(const gst *st, int g)
{
    return g < st->gpn ? 1 : g / st->gpn;
}

static int free_nodes(const gst *st)
{
    int f = 0;
    for (int k = 0; k < st->nodes; k++)
        f += st->free_node[k];
    return f;
}

/* Open a set of class g on the lowest free nodes; -1 if too few. */
static int open_set(gst *st, int g)
{
    int need = nodes_for(st, g);
    if (free_nodes(st) < need)
        return -1;
    int k = 0;
    while (k < st->nset && st->set[k].alive)
        k++;
    if (k == st->nset) {
        if (st->nset == st->capset) {
            st->capset = st->capset ? 2 * st->capset : 16;
            st->set = ef_realloc(st->set, (size_t)st->capset *
                                              sizeof *st->set);
        }
        st->nset++;
    } else {
        free(st->set[k].node);
        free(st->set[k].load);
    }
    gset *x = &st->set[k];
    memset(x, 0, sizeof *x);
    x->cls = g;
    x->nn = need;
    x->node = ef_malloc((size_t)need * sizeof *x->node);
    for (int u = 0, c = 0; u < st->nodes && c < need; u++)
        if (st->free_node[u]) {
            st->free_node[u] = 0;
            x->node[c++] = u;
        }
    x->slots = g < st->gpn ? st->gpn / g : 1;
    x->load = ef_calloc((size_t)x->slots, sizeof *x->load);
    x->alive = 1;
    return k;
}

static void close_set(gst *st, int k)
{
    gset *x = &st->set[k];
    for (int u = 0; u < x->nn; u++)
        st->free_node[x->node[u]] = 1;
    x->alive = 0;
}

/* Put job i into set k, on its least-loaded slot. */
static void join(gst *st, int i, int k)
{
    gset *x = &st->set[k];
    int best = 0;
    for (int q = 1; q < x->slots; q++)
        if (x->load[q] < x->load[best])
            best = q;
    x->load[best]++;
    x->nj++;
    st->set_of[i] = k;
    st->slot_of[i] = best;
    st->seq[i] = st->nseq++;
}

static void leave(gst *st, int i)
{
    gset *x = &st->set[st->set_of[i]];
    x->load[st->slot_of[i]]--;
    x->nj--;
    st->set_of[i] = -1;
}

/* The least-used live set of class g other than 'skip'; room 1: with a
 * slot free for a newcomer (under the reference's strict test if set),
 * 2: with a free slot. */
static int least_used(const gst *st, int g, int room, int skip)
{
    int strict = room == 1 && st->strict;
    int best = -1;
    for (int k = 0; k < st->nset; k++) {
        const gset *x = &st->set[k];
        if (!x->alive || x->cls != g || k == skip)
            continue;
        if (room && x->nj + strict >= x->slots)
            continue;
        if (best < 0 || x->nj < st->set[best].nj)
            best = k;
    }
    return best;
}

static int try_place(gst *st, int i)
{
    int g = st->g[i];
    int k = least_used(st, g, 1, -1);
    if (k < 0)
        k = open_set(st, g);
    if (k < 0)
        k = least_used(st, g, 0, -1);
    if (k < 0)
        return 0;
    join(st, i, k);
    return 1;
}

static void place_pending(gst *st)
{
    int keep = 0;
    for (int p = 0; p < st->npend; p++)
        if (!try_place(st, st->pend[p]))
            st->pend[keep++] = st->pend[p];
    st->npend = keep;
}

/* Jobs of set k, in the order of the active list (the order moves
 * happen in). */
static int jobs_of(const gst *st, int k, int *out)
{
    int c = 0;
    for (int a = 0; a < st->nact; a++)
        if (st->set_of[st->act[a]] == k)
            out[c++] = st->act[a];
    return c;
}

/* Jobs of set k in the order they joined it (the reference's list). */
static int jobs_in_order(const gst *st, int k, int *out)
{
    int c = jobs_of(st, k, out);
    for (int a = 1; a < c; a++)
        for (int b = a; b > 0 && st->seq[out[b]] < st->seq[out[b - 1]];
             b--) {
            int tmp = out[b];
            out[b] = out[b - 1];
            out[b - 1] = tmp;
        }
    return c;
}

/* Packing: empty the least-used set of a class into the others. */
static void pack(gst *st, int *scratch)
{
    for (int moved = 1; moved;) {
        moved = 0;
        for (int k = 0; k < st->nset && !moved; k++) {
            gset *x = &st->set[k];
            if (!x->alive)
                continue;
            if (least_used(st, x->cls, 0, -1) != k)
                continue;
            int room = 0;
            for (int q = 0; q < st->nset; q++)
                if (q != k && st->set[q].alive && st->set[q].cls == x->cls &&
                    st->set[q].nj < st->set[q].slots)
                    room += st->set[q].slots - st->set[q].nj;
            if (room < x->nj || room == 0)
                continue;
            int c = jobs_of(st, k, scratch);
            for (int u = 0; u < c; u++) {
                leave(st, scratch[u]);
                join(st, scratch[u], least_used(st, x->cls, 2, k));
            }
            close_set(st, k);
            moved = 1;
        }
    }
}

/* Relief: oversubscribed sets hand jobs to new sets on free nodes. */
static void relieve(gst *st, int *scratch)
{
    for (int k = 0; k < st->nset; k++) {
        while (st->set[k].alive && st->set[k].nj > st->set[k].slots) {
            int nk = open_set(st, st->set[k].cls);
            if (nk < 0)
                return;
            gset *x = &st->set[k];  /* open_set may move the array */
            int c = jobs_of(st, k, scratch);
            int excess = x->nj - x->slots;
            for (int u = c - 1; u >= 0 && excess > 0; u--) {
                int i = scratch[u];
                if (x->load[st->slot_of[i]] <= 1)
                    continue;
                leave(st, i);
                join(st, i, nk);
                excess--;
                if (st->set[nk].nj == st->set[nk].slots)
                    break;
            }
        }
    }
}

/* The reference's rebalancing (--baselines reference): each class gets
 * GPUs in proportion to its demand (jobs x size), capped at the demand;
 * a class over its target loses ceil(excess / size) sets (keeping one):
 * they are all closed first, then their jobs join the least-used
 * remaining sets one by one; one under it gains
 * ceil(deficit / size) sets while nodes last and its jobs are spread. */
static void rebalance(gst *st, int N, int *scratch)
{
    double total = 0;
    int *dem = ef_calloc(32, sizeof *dem);
    for (int a = 0; a < st->nact; a++) {
        int i = st->act[a];
        if (st->set_of[i] >= 0) {
            int l = 0;
            while ((1 << l) < st->g[i])
                l++;
            dem[l] += st->g[i];
            total += st->g[i];
        }
    }
    for (int l = 0; l < 31 && total > 0; l++) {
        if (dem[l] == 0)
            continue;
        int g = 1 << l;
        double tg = floor(dem[l] / total * N);
        int target = tg < dem[l] ? (int)tg : dem[l];
        int cur = 0, nsets = 0;
        for (int k = 0; k < st->nset; k++)
            if (st->set[k].alive && st->set[k].cls == g) {
                cur += st->set[k].nn * st->gpn;
                nsets++;
            }
        int diff = target - cur;
        if (diff < 0) {
            /* all the removed sets (least used first) are taken out
             * before their jobs, in the order they joined, go one by one
             * to the least-used remaining set */
            int drop = (-diff + g - 1) / g, c = 0;
            if (drop > nsets - 1)
                drop = nsets - 1;
            for (; drop > 0; drop--) {
                int k = least_used(st, g, 0, -1);
                int c0 = c;
                c += jobs_in_order(st, k, scratch + c);
                for (int u = c0; u < c; u++)
                    leave(st, scratch[u]);
                close_set(st, k);
            }
            for (int u = 0; u < c; u++)
                join(st, scratch[u], least_used(st, g, 0, -1));
        } else if (diff > 0) {
            int add = (diff + g - 1) / g, added = 0;
            for (; add > 0 && open_set(st, g) >= 0; add--)
                added++;
            if (!added)
                continue;
            int c = 0;
            for (int a = 0; a < st->nact; a++) {
                int i = st->act[a];
                if (st->set_of[i] >= 0 && st->g[i] == g)
                    scratch[c++] = i;
            }
            for (int u = 0; u < c; u++)
                leave(st, scratch[u]);
            for (int u = 0; u < c; u++)
                join(st, scratch[u], least_used(st, g, 0, -1));
            for (int k = 0; k < st->nset; k++)
                if (st->set[k].alive && st->set[k].cls == g &&
                    st->set[k].nj == 0)
                    close_set(st, k);
        }
    }
    free(dem);
}

static int64_t point(sim *s, void *v, int64_t t, const int *rel, int nrel)
{
    (void)t;
    gst *st = v;
    /* finished jobs leave their sets; empty sets free their nodes */
    int keep = 0;
    for (int a = 0; a < st->nmem; a++) {
        int i = st->mem[a];
        if (s->jobs[i].state == SJ_ACTIVE) {
            st->mem[keep++] = i;
            continue;
        }
        int k = st->set_of[i];
        if (k >= 0) {
            leave(st, i);
            if (st->set[k].nj == 0)
                close_set(st, k);
        }
    }
    st->nmem = keep;
    for (int r = 0; r < nrel; r++) {
        int i = rel[r];
        int g = bl_admit(s, i);
        if (!g)
            continue;
        st->g[i] = g;
        st->pin[i] = ef_malloc((size_t)g * sizeof(int));
        st->pend[st->npend++] = i;
        st->mem[st->nmem++] = i;
    }
    st->act = s->act;
    st->nact = s->nact;
    int *scratch = ef_malloc((size_t)(st->n ? st->n : 1) * sizeof(int));
    place_pending(st);
    if (st->npend > 0 && !st->strict) {
        pack(st, scratch);
        place_pending(st);
    }
    if (st->strict) {
        if (nrel > 0)
            rebalance(st, s->cl.total_gpus, scratch);
    }
    else
        relieve(st, scratch);
    free(scratch);
    int G = st->gpn;
    /* reference time slicing: the earliest job of a slot runs alone */
    int64_t *first = NULL;
    if (st->strict) {
        first = ef_malloc((size_t)(st->nset ? st->nset : 1) * G *
                          sizeof *first);
        for (int k = 0; k < st->nset * G; k++)
            first[k] = INT64_MAX;
        for (int k = 0; k < s->nact; k++) {
            int i = s->act[k], q = st->set_of[i];
            if (q >= 0 && st->seq[i] < first[q * G + st->slot_of[i]])
                first[q * G + st->slot_of[i]] = st->seq[i];
        }
    }
    for (int k = 0; k < s->nact; k++) {
        int i = s->act[k];
        sim_job *j = &s->jobs[i];
        int q = st->set_of[i];
        if (q < 0) {
            j->want = 0;
            j->pin = NULL;
            j->share = 1;
            continue;
        }
        const gset *x = &st->set[q];
        int g = st->g[i], sl = st->slot_of[i];
        if (g < G) {
            for (int u = 0; u < g; u++)
                st->pin[i][u] = x->node[0] * G + sl * g + u;
        } else {
            for (int a = 0, c = 0; a < x->nn; a++)
                for (int u = 0; u < G; u++)
                    st->pin[i][c++] = x->node[a] * G + u;
        }
        j->want = g;
        j->pin = st->pin[i];
        j->share = 1.0 / x->load[sl];
        if (first) {
            j->share = 1;
            if (first[q * G + sl] != st->seq[i]) {
                j->want = 0;
                j->pin = NULL;
            }
        }
    }
    free(first);
    return INT64_MAX;
}

const sim_policy sim_policy_gandiva = {
    "gandiva", "Gandiva: requested GPU counts, node sets per size with "
    "packing, time slicing and migration", init, point, fini};
