/* plan.c: the planner core loop (see plan.h). */
#define _GNU_SOURCE 1 /* qsort_r */
#include "planner/plan.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "common/fsum.h"
#include "common/htime.h"
#include "common/util.h"
#include "planner/ebatch.h"
#include "planner/engine.h"
#include "planner/promise.h"

void plan_opts_default(plan_opts *o)
{
    memset(o, 0, sizeof *o);
    o->slot = 60;
    o->now = INT64_MIN;
    o->surplus = SURPLUS_GAIN;
    o->horizon = 0;
    o->overhead = OVH_NONE;
}

static void free_slots(plan *p, int from);

void plan_free(plan *p)
{
    for (int i = 0; i < p->njobs; i++) {
        resv_free(&p->jobs[i].r);
        resv_free(&p->jobs[i].reserved);
        resv_free(&p->jobs[i].wown);
        place_set_free(&p->jobs[i].pl);
    }
    free_slots(p, 0);
    free(p->jobs);
    free(p->slots);
    for (int i = 0; i < p->jcap && p->tmp; i++)
        resv_free(&p->tmp[i]);
    free(p->tmp);
    free(p->ord);
    free(p->tmprow);
    free(p->occ);
    resv_free(&p->ebtmp);
    if (p->pt_open)
        avail_free(&p->pt_F);
    if (p->pt_won) {
        avail_free(&p->pt_Wb);
        avail_free(&p->pt_W);
    }
    memset(p, 0, sizeof *p);
}

/* ---- ordering helpers ---------------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}


static int cmp_arrival(const void *a, const void *b, void *ctx)
{
    const plan *p = ctx;
    const plan_job *x = &p->jobs[*(const int *)a];
    const plan_job *y = &p->jobs[*(const int *)b];
    if (x->decide != y->decide) /* the release, unless decided earlier */
        return x->decide < y->decide ? -1 : 1;
    if (p->order) { /* offline admission: its order within a point */
        double u = p->order[x - p->jobs], v = p->order[y - p->jobs];
        if (u != v)
            return u < v ? -1 : 1;
    }
    if (x->release != y->release)
        return x->release < y->release ? -1 : 1;
    if (x->in->submit != y->in->submit)
        return x->in->submit < y->in->submit ? -1 : 1;
    /* same submit time: queue order, so a job added at the end of a queue
     * (efplan submit) never jumps ahead of promises already made */
    return x->in->index - y->in->index;
}

/* Deadline order: deadline, then submit time, then id. */
static int edf_less(const plan_job *x, const plan_job *y)
{
    if (x->deadline != y->deadline)
        return x->deadline < y->deadline;
    if (x->in->submit != y->in->submit)
        return x->in->submit < y->in->submit;
    return x->idrank < y->idrank;
}

static int cmp_id_of(const void *a, const void *b, void *ctx)
{
    const job_queue *q = ctx;
    return strcmp(q->jobs[*(const int *)a].id, q->jobs[*(const int *)b].id);
}

/* Each job's idrank: its id's place among the queue's ids in strcmp
 * order (equal ids, equal ranks), so that ties broken by id compare two
 * integers, not two strings. */
static void rank_ids(plan *p, const job_queue *q)
{
    int n = q->n;
    int *rank = ef_malloc((size_t)(n ? n : 1) * sizeof *rank);
    ef_rank(n, cmp_id_of, (void *)q, rank);
    for (int i = 0; i < n; i++)
        p->jobs[i].idrank = rank[i];
    free(rank);
}

/* A job's place in deadline order (edf_less's keys, copied out of the
 * job so that sorting reads one array). */
typedef struct edf_key {
    int64_t dl, sub;
    int idrank, job;
} edf_key;

static inline int key_less(const edf_key *x, const edf_key *y)
{
    if (x->dl != y->dl)
        return x->dl < y->dl;
    if (x->sub != y->sub)
        return x->sub < y->sub;
    return x->idrank < y->idrank;
}

/* Stable merge sort of k[0..n-1] by key_less, w: scratch of n keys. */
static void key_sort(edf_key *k, edf_key *w, int n)
{
    if (n < 2)
        return;
    if (n <= 8) { /* insertion: stable, fewer moves on short runs */
        for (int i = 1; i < n; i++) {
            edf_key v = k[i];
            int j = i;
            for (; j > 0 && key_less(&v, &k[j - 1]); j--)
                k[j] = k[j - 1];
            k[j] = v;
        }
        return;
    }
    int h = n / 2;
    key_sort(k, w, h);
    key_sort(k + h, w, n - h);
    if (!key_less(&k[h], &k[h - 1]))
        return; /* already in order */
    memcpy(w, k, (size_t)h * sizeof *w);
    int a = 0, b = h, o = 0;
    while (a < h && b < n)
        k[o++] = key_less(&k[b], &w[a]) ? k[b++] : w[a++];
    while (a < h)
        k[o++] = w[a++];
}

/* ord[0..m-1] into deadline order (edf_less), stably: the order a stable
 * sort by edf_less gives (glibc's qsort_r, a merge sort, before). */
static void edf_sort(const plan *p, int *ord, int m)
{
    if (m < 2)
        return;
    edf_key *k = ef_malloc((size_t)m * 2 * sizeof *k);
    for (int i = 0; i < m; i++) {
        const plan_job *j = &p->jobs[ord[i]];
        k[i] = (edf_key){j->deadline, j->in->submit, j->idrank, ord[i]};
    }
    key_sort(k, k + m, m);
    for (int i = 0; i < m; i++)
        ord[i] = k[i].job;
    free(k);
}

/* ---- slot recording ------------------------------------------------------ */

/* Slots share GPU lists: an allocation that a job holds unchanged from
 * the slot before uses that slot's list (record), so the lists grow with
 * the plan's decisions, not with slots x jobs. A list is owned by the
 * first slot of the run of consecutive slots that hold it. */

/* Free slots from..nslots-1 (their lists not owned by a slot before
 * 'from'); nslots becomes 'from'. */
static void free_slots(plan *p, int from)
{
    for (int s = from; s < p->nslots; s++) {
        const plan_slot *sl = &p->slots[s];
        const plan_slot *pv = s > 0 ? &p->slots[s - 1] : NULL;
        int k = 0;             /* walks pv's allocations (job order) */
        for (int a = 0; a < sl->nalloc; a++) {
            while (pv && k < pv->nalloc && pv->a[k].job < sl->a[a].job)
                k++;
            int shared = pv && k < pv->nalloc && pv->a[k].job == sl->a[a].job &&
                         pv->a[k].gpu == sl->a[a].gpu;
            if (!shared)
                free(sl->a[a].gpu);
        }
    }
    for (int s = from; s < p->nslots; s++)
        free(p->slots[s].a);
    if (from < p->nslots)
        p->nslots = from;
}

/* The batch job j runs at now, as an allocation records it (0: its own). */
static long alloc_batch(const plan_job *j)
{
    return j->eb ? j->row->batch : 0;
}

/* 1 if allocation a is what job ji (j) holds now: its GPUs and batch. */
static int holds(const plan_alloc *a, int ji, const plan_job *j)
{
    return a->job == ji && a->gpus == j->g && a->batch == alloc_batch(j) &&
           memcmp(a->gpu, j->pl.gpu, (size_t)j->g * sizeof(int)) == 0;
}

static int same_run(const plan_slot *s, const plan *p, const int *act, int na)
{
    int k = 0;
    for (int i = 0; i < na; i++) {
        const plan_job *j = &p->jobs[act[i]];
        if (j->g == 0)
            continue;
        if (k >= s->nalloc || !holds(&s->a[k], act[i], j))
            return 0;
        k++;
    }
    return k == s->nalloc;
}

/* Record [t, t+len) with the current allocations of the active jobs
 * (in job order, as act is): a job that holds the same GPUs and batch as
 * in the slot before shares that slot's list (above). */
static void record(plan *p, int *cap, const int *act, int na, int64_t t,
                   int64_t len)
{
    /* what of each admitted job's allocation its reservation holds (its
     * allocation is its reservation plus surplus, so never less) */
    for (int i = 0; i < na && p->reserved_known; i++) {
        plan_job *j = &p->jobs[act[i]];
        if (j->decision != PLAN_ADMITTED || j->g == 0)
            continue;
        int rg = resv_at(&j->r, t);
        resv_push(&j->reserved, t, t + len, rg < j->g ? rg : j->g);
    }
    if (p->nslots > 0) {
        plan_slot *last = &p->slots[p->nslots - 1];
        if (last->end == t && same_run(last, p, act, na)) {
            last->end = t + len;
            return;
        }
    }
    if (p->nslots == *cap) {
        *cap = *cap ? *cap * 2 : 256;
        p->slots = ef_realloc(p->slots, (size_t)*cap * sizeof *p->slots);
    }
    plan_slot *s = &p->slots[p->nslots++];
    s->start = t;
    s->end = t + len;
    s->nalloc = 0;
    for (int i = 0; i < na; i++)
        s->nalloc += p->jobs[act[i]].g > 0;
    s->a = ef_malloc((size_t)(s->nalloc ? s->nalloc : 1) * sizeof *s->a);
    const plan_slot *pv = p->nslots > 1 && p->slots[p->nslots - 2].end == t
                              ? &p->slots[p->nslots - 2] : NULL;
    int k = 0, m = 0;          /* s's allocation; pv's, by job */
    for (int i = 0; i < na; i++) {
        const plan_job *j = &p->jobs[act[i]];
        if (j->g == 0)
            continue;
        plan_alloc *al = &s->a[k++];
        al->job = act[i];
        al->gpus = j->g;
        al->batch = alloc_batch(j);
        while (pv && m < pv->nalloc && pv->a[m].job < act[i])
            m++;
        if (pv && m < pv->nalloc && holds(&pv->a[m], act[i], j)) {
            al->gpu = pv->a[m].gpu;
            continue;
        }
        al->gpu = ef_malloc((size_t)j->g * sizeof(int));
        memcpy(al->gpu, j->pl.gpu, (size_t)j->g * sizeof(int));
    }
}

/* ---- one scheduling point ------------------------------------------------ */

/* ---- the promise under overheads (promise.h) ---------------------------- */

/* The physics the plan's promises are checked against: the overhead
 * model in force, a possible point every slot, a reference restart every
 * 'slot' points (as the simulator counts them), one forced migration. */
static prm_model pmodel(const plan *p)
{
    prm_model m = {p->opts.overhead, p->cl.total_gpus, p->opts.slot,
                   p->opts.slot, p->point_index, 2};
    return m;
}

/* 1 if the stability rule holds at this plan's points (opts.moves ==
 * MOVES_NET with the paper's surplus order and admission; the reference
 * modes keep the reference's rule). */
int plan_holds_still(const plan_opts *o)
{
    return o->moves == MOVES_NET && o->surplus == SURPLUS_GAIN &&
           !o->admission_reference;
}

static int holds_still(const plan *p)
{
    return plan_holds_still(&p->opts);
}

/* Where job j stands at point t. */
static prm_start pstart(const plan_job *j, int64_t t)
{
    prm_start s = {t, j->held, j->held ? j->hrow : NULL, j->owed, j->ovh,
                   j->eb, j->oscale};
    return s;
}

/* 1 if job j, from where it stands at t, completes its remaining work by
 * its deadline along 'head' (if not NULL) then reservation r at 'row'
 * from 'from' on, paying every overhead. Always 1 without overheads (MSS
 * reservations are exact then). */
static int covers(const plan *p, const plan_job *j, const prm_piece *head,
                  const resv *r, const curve_row *row, int64_t t,
                  int64_t from, int migrations)
{
    if (r->n == 0) /* nothing reserved (a promised job of a new plan) */
        return j->rem <= 0;
    if (p->opts.overhead == OVH_NONE)
        return 1;
    prm_model m = pmodel(p);
    m.migrations = migrations;
    prm_start s = pstart(j, t);
    return prm_resv_work(&m, &s, head, r, row, from, j->deadline) >=
           j->rem * (1.0 + MSS_MARGIN);
}

/* ---- whole nodes -------------------------------------------------------- */

/* Reservations count GPUs, not where they are, but a job of
 * gpus_per_node GPUs or more takes whole nodes (place.h), and a job whose
 * promise has no room for a migration (keeps: tight, at risk) stays on
 * the GPUs it holds (hold_keep, place.h attempt 2). While such a job
 * holds part of a node, that node is no whole node for anyone: a
 * reservation that counts on it would, at its growth onto whole nodes,
 * have the placement move the held job (which then misses) or be held
 * back itself (and miss). So at a point where some held job holds part of
 * a node, the reservations' whole-node pieces (sizes >= gpus_per_node)
 * are planned against a second profile, the whole-node GPUs: the GPUs of
 * the nodes no held job holds part of, over the time its reservation's
 * pieces below a node keep it there (pt_Wb); what the whole-node pieces
 * leave of it is pt_W. A job's MSS and fastest plans see the GPU profile
 * capped by it at the sizes that take whole nodes (eff_build). Without a
 * held job on part of a node (pt_won 0) nothing of this runs: the plan is
 * the GPU-counting one. */

static const place_set *gpus_of(const plan_job *j);
static int keeps(const plan_job *j);

/* 1 if a job of g GPUs takes whole nodes. */
static int whole(const plan *p, int g)
{
    return g >= p->cl.gpus_per_node;
}

/* resv_apply of r's whole-node pieces to W (NULL: nothing). */
static void take_w(const plan *p, const resv *r, avail *W, int sign)
{
    if (!W)
        return;
    for (int k = 0; k < r->n; k++)
        if (whole(p, r->s[k].gpus))
            avail_add(W, r->s[k].start, r->s[k].end, sign * r->s[k].gpus);
}

/* r taken out of (sign -1) or given back to (+1) F and W. */
static void take(const plan *p, const resv *r, avail *F, avail *W, int sign)
{
    resv_apply(r, F, sign);
    take_w(p, r, W, sign);
}

/* The whole-node profile of the open point, NULL when off. */
static avail *pt_w(plan *p)
{
    return p->pt_won ? &p->pt_W : NULL;
}

/* 1 if admitted job j is held on part of one node from t: placement
 * keeps it (keeps) on fewer than gpus_per_node GPUs. */
static int holds_part(const plan *p, const plan_job *j)
{
    const place_set *pl = gpus_of(j);
    return j->decision == PLAN_ADMITTED && keeps(j) && pl->g > 0 &&
           !whole(p, pl->g);
}

/* Build pt_Wb (and pt_W = pt_Wb) at t from the jobs among act[0..na-1]
 * held on part of a node: each blocks its node over its reservation's
 * pieces below a node from t (the node held as long as any such piece of
 * a job on it lasts). Sets pt_won: 1 if any node is blocked. */
static void wbase_build(plan *p, const int *act, int na, int64_t t)
{
    int G = p->cl.gpus_per_node;
    if (p->pt_won) {
        avail_free(&p->pt_Wb);
        avail_free(&p->pt_W);
    }
    p->pt_won = 0;
    int any = 0;
    for (int i = 0; i < na; i++) {
        resv_clear(&p->jobs[act[i]].wown);
        any = any || holds_part(p, &p->jobs[act[i]]);
    }
    /* on one node a whole-node piece needs every GPU, which the GPU
     * count already refuses while a held job holds part of it */
    if (!any || p->cl.nodes < 2)
        return;
    avail_init(&p->pt_Wb, t, p->cl.nodes * G);
    avail B; /* one node's blockers over time */
    for (int n = 0; n < p->cl.nodes; n++) {
        int on = 0;
        for (int i = 0; i < na; i++) {
            const plan_job *j = &p->jobs[act[i]];
            if (!holds_part(p, j) || gpus_of(j)->gpu[0] / G != n)
                continue;
            for (int k = 0; k < j->r.n; k++) {
                const seg *s = &j->r.s[k];
                int64_t a = s->start > t ? s->start : t;
                if (s->gpus <= 0 || whole(p, s->gpus) || s->end <= a)
                    continue;
                if (!on)
                    avail_init(&B, t, 0);
                on = 1;
                avail_add(&B, a, s->end, 1);
            }
        }
        if (!on)
            continue;
        for (int k = 0; k < B.n; k++)
            if (B.free[k] > 0) {
                p->pt_won = 1;
                avail_add(&p->pt_Wb, B.t[k],
                          k + 1 < B.n ? B.t[k + 1] : INT64_MAX, -G);
            }
        for (int i = 0; i < na; i++) { /* where a job blocks it alone */
            plan_job *j = &p->jobs[act[i]];
            if (!holds_part(p, j) || gpus_of(j)->gpu[0] / G != n)
                continue;
            for (int s = 0; s < j->r.n; s++) {
                const seg *g = &j->r.s[s];
                if (g->gpus <= 0 || whole(p, g->gpus))
                    continue;
                for (int k = 0; k < B.n; k++) {
                    int64_t a = B.t[k] > g->start ? B.t[k] : g->start;
                    int64_t b = k + 1 < B.n ? B.t[k + 1] : INT64_MAX;
                    if (b > g->end)
                        b = g->end;
                    if (B.free[k] == 1 && a < b)
                        resv_push(&j->wown, a, b, G);
                }
            }
        }
        avail_free(&B);
    }
    if (!p->pt_won) {
        avail_free(&p->pt_Wb);
        return;
    }
    memset(&p->pt_W, 0, sizeof p->pt_W);
    avail_copy(&p->pt_W, &p->pt_Wb);
}

/* What job j may plan against: F, capped by the whole-node GPUs W at the
 * sizes that take whole nodes: min(F, max(W, gpus_per_node - 1)), into E
 * (which the caller frees); F itself when W is NULL. */
static const avail *eff_build(const plan *p, const avail *F, const avail *W,
                              avail *E)
{
    if (!W)
        return F;
    int below = p->cl.gpus_per_node - 1;
    memset(E, 0, sizeof *E);
    avail_copy(E, F);
    int i = 0, k = 0;
    int64_t a = F->t[0];
    while (k + 1 < W->n && W->t[k + 1] <= a)
        k++;
    for (;;) {
        int64_t nf = i + 1 < F->n ? F->t[i + 1] : INT64_MAX;
        int64_t nw = k + 1 < W->n ? W->t[k + 1] : INT64_MAX;
        int64_t b = nf < nw ? nf : nw;
        int w = a >= W->t[0] && W->free[k] > below ? W->free[k] : below;
        if (a < W->t[0])
            w = INT32_MAX;
        if (w < F->free[i])
            avail_add(E, a, b, w - F->free[i]);
        if (b == INT64_MAX)
            break;
        if (b == nf)
            i++;
        if (b == nw)
            k++;
        a = b;
    }
    return E;
}

/* How many times plan_mss and plan_fastest raise the work they plan for
 * before giving up. */
#define OVH_ROUNDS 12

/* How much more work plan_mss and plan_fastest ask for when plan r at
 * 'row' delivers 'got' < 'need' ('last': what the previous round's plan
 * delivered, -1 if none): the shortfall; when asking more did not change
 * what the plan delivers (plans grow a slot at a time), a slot's work at
 * the plan's largest size. */
static double raise_by(double need, double got, double last, const resv *r,
                       const curve_row *row, int samples, int S)
{
    double step = need - got;
    if (last >= 0 && got <= last + 1e-9 * need) {
        double tpmax = 0;
        for (int k = 0; k < r->n; k++) {
            double tp = eb_tput(row, r->s[k].gpus, samples);
            if (tp > tpmax)
                tpmax = tp;
        }
        if (tpmax * S > step)
            step = tpmax * S;
    }
    return step + need * 1e-9;
}

/*
 * plan_mss: job j's minimum satisfactory share at t against F that keeps
 * the promise under the overhead model: MSS (eb_mss for an elastic-batch
 * job) for its remaining work plus what the reservation's own changes
 * and the allowances cost, raised until the reservation covers it (at
 * most OVH_ROUNDS times). Fills 'out' and returns the batch row, or NULL
 * ('out' cleared) when no reservation covers it by the deadline. W: the
 * whole-node GPUs its whole-node sizes are capped by (NULL: none).
 */
static const curve_row *plan_mss_f(plan *p, plan_job *j, int64_t t,
                                   const avail *F, resv *out);

/* W as job j sees it (into Wj, which the caller frees when it differs):
 * a node only j blocks is a whole node for j itself. */
static const avail *w_of(const plan *p, const plan_job *j, const avail *W,
                         avail *Wj)
{
    if (!W || j->wown.n == 0 || !holds_part(p, j))
        return W;
    memset(Wj, 0, sizeof *Wj);
    avail_copy(Wj, W);
    for (int k = 0; k < j->wown.n; k++)
        avail_add(Wj, j->wown.s[k].start, j->wown.s[k].end,
                  p->cl.gpus_per_node);
    return Wj;
}

static const curve_row *plan_mss(plan *p, plan_job *j, int64_t t,
                                 const avail *F, const avail *W, resv *out)
{
    avail E, Wj;
    const avail *Wo = w_of(p, j, W, &Wj);
    const avail *Fe = eff_build(p, F, Wo, &E);
    const curve_row *row = plan_mss_f(p, j, t, Fe, out);
    if (Fe != F)
        avail_free(&E);
    if (Wo != W)
        avail_free(&Wj);
    return row;
}

static const curve_row *plan_mss_f(plan *p, plan_job *j, int64_t t,
                                   const avail *F, resv *out)
{
    if (t < j->release) /* decided early (opts.decide_at): from its release */
        t = j->release;
    int N = p->cl.total_gpus, S = p->opts.slot;
    double w = j->rem;        /* the work MSS is asked to plan */
    double last = -1;         /* what the previous round's plan delivered */
    for (int round = 0; round < OVH_ROUNDS; round++) {
        const curve_row *row;
        if (j->eb)
            row = eb_mss(j->in, 1, N, w, t, j->deadline, S, F, out,
                         &p->ebtmp);
        else
            row = mss_plan(j->in->curve, N, w, t, j->deadline, S, F, out)
                      ? j->in->curve : NULL;
        if (!row || p->opts.overhead == OVH_NONE)
            return row;
        prm_model m = pmodel(p);
        prm_start s = pstart(j, t);
        double need = j->rem * (1.0 + MSS_MARGIN);
        double got = prm_resv_work(&m, &s, NULL, out, row, t, j->deadline);
        if (got >= need)
            return row;
        w += raise_by(need, got, last, out, row, j->eb, S);
        last = got;
    }
    resv_clear(out);
    return NULL;
}

/*
 * plan_fastest: the earliest completion of job j from t against F, the
 * job taking in every interval the largest usable size that fits, with
 * the overhead model's costs paid (the work raised as in plan_mss). Fills
 * 'out' and *row if given; returns the completion (integer seconds) or -1
 * when the job cannot run at all. W as plan_mss.
 */
static int64_t plan_fastest_f(plan *p, plan_job *j, int64_t t,
                              const avail *F, resv *out,
                              const curve_row **row);

static int64_t plan_fastest(plan *p, plan_job *j, int64_t t, const avail *F,
                            const avail *W, resv *out, const curve_row **row)
{
    avail E, Wj;
    const avail *Wo = w_of(p, j, W, &Wj);
    const avail *Fe = eff_build(p, F, Wo, &E);
    int64_t fin = plan_fastest_f(p, j, t, Fe, out, row);
    if (Fe != F)
        avail_free(&E);
    if (Wo != W)
        avail_free(&Wj);
    return fin;
}

static int64_t plan_fastest_f(plan *p, plan_job *j, int64_t t,
                              const avail *F, resv *out,
                              const curve_row **row)
{
    if (t < j->release) /* decided early (opts.decide_at): from its release */
        t = j->release;
    int N = p->cl.total_gpus, S = p->opts.slot;
    resv mine = {0};          /* the plan when the caller wants none */
    resv *r = out ? out : &mine;
    double w = j->rem;
    double last = -1;         /* what the previous round's plan delivered */
    int64_t fin = -1;
    const curve_row *er = j->in->curve;
    for (int round = 0; round < OVH_ROUNDS; round++) {
        int64_t f;
        if (j->eb)
            f = eb_fastest(j->in, 1, N, w, t, S, F, r, &p->ebtmp, &er);
        else
            f = mss_fastest(j->in->curve, N, w, t, S, F, r);
        if (f < 0 || p->opts.overhead == OVH_NONE) {
            fin = f;
            break;
        }
        prm_model m = pmodel(p);
        prm_start s = pstart(j, t);
        double need = j->rem * (1.0 + MSS_MARGIN);
        fin = prm_finish(&m, &s, r, er, need);
        if (fin >= 0)
            break;
        double got = prm_resv_work(&m, &s, NULL, r, er, t, INT64_MAX);
        w += raise_by(need, got, last, r, er, j->eb, S);
        last = got;
    }
    if (row)
        *row = er;
    resv_free(&mine);
    return fin;
}

/* Plan the isolated (at-risk) jobs among act[0..na-1] against what F
 * leaves, in deadline order: each by plan_mss if it can still make its
 * deadline, else by plan_fastest; F loses their reservations. */
static void plan_at_risk(plan *p, const int *act, int na, int64_t t,
                         avail *F)
{
    int m = 0;
    for (int i = 0; i < na; i++) {
        plan_job *j = &p->jobs[act[i]];
        if (j->decision == PLAN_ADMITTED && j->at_risk)
            p->ord[m++] = act[i];
    }
    if (m == 0)
        return;
    edf_sort(p, p->ord, m);
    for (int k = 0; k < m; k++) {
        plan_job *j = &p->jobs[p->ord[k]];
        const curve_row *row = plan_mss(p, j, t, F, pt_w(p), &j->r);
        if (!row)
            (void)plan_fastest(p, j, t, F, pt_w(p), &j->r, &row);
        if (row)
            j->rrow = row;
        take(p, &j->r, F, pt_w(p), -1);
    }
}

/* Flag admitted job j at risk at t: its reservation no longer covers its
 * remaining work. From now on it is planned apart (plan_at_risk). */
static void flag_at_risk(plan *p, plan_job *j, int64_t t)
{
    if (j->at_risk)
        return;
    j->at_risk = 1;
    p->at_risk++;
    /* times as a person reads them: dates on the wall clock, offsets
     * ("+1h 33m 48s") on a synthetic one (ef_ht_at) */
    char since[48], dl[48], mg[32];
    ef_ht_at(t, EF_HT_UTC, since, sizeof since);
    ef_ht_at(j->deadline, EF_HT_UTC, dl, sizeof dl);
    if (p->opts.deadline_margin > 0)
        snprintf(j->risk, sizeof j->risk,
                 "at risk since %s: the %.0f %s it has left cannot end by "
                 "its deadline %s less a %s margin: it fell behind for a "
                 "cause outside the plan", since, j->rem,
                 j->eb ? "samples" : "iterations", dl,
                 ef_ht_dur(p->opts.deadline_margin, mg, sizeof mg));
    else
        snprintf(j->risk, sizeof j->risk,
                 "at risk since %s: its reservation no longer covers the "
                 "%.0f %s it has left by its deadline %s (fell behind for a "
                 "cause outside the plan); planned apart from the other jobs",
                 since, j->rem, j->eb ? "samples" : "iterations", dl);
}

/* Plan the jobs ord[0..m-1] by MSS in deadline order from scratch at t.
 * If every one is feasible, commit their reservations, set F to the
 * resulting profile and return 1; otherwise change nothing, return 0. */
/* edf_plan's planning into tmp[0..m-1] (p->tmprow), Fn and Wn (the
 * caller frees them; Wn unused when the whole nodes are off): 1 if every
 * job is feasible. Changes no job. */
static int edf_fill(plan *p, int *ord, int m, int64_t t, resv *tmp,
                    avail *Fn, avail *Wn)
{
    edf_sort(p, ord, m);
    avail_init(Fn, t, p->cl.total_gpus);
    memset(Wn, 0, sizeof *Wn);
    avail *W = NULL;
    if (p->pt_won) { /* the whole nodes as the point found them */
        avail_copy(Wn, &p->pt_Wb);
        W = Wn;
    }
    int ok = 1;
    for (int k = 0; k < m && ok; k++) {
        plan_job *j = &p->jobs[ord[k]];
        p->tmprow[k] = plan_mss(p, j, t, Fn, W, &tmp[k]);
        ok = p->tmprow[k] != NULL;
        if (ok)
            take(p, &tmp[k], Fn, W, -1);
    }
    return ok;
}

static int edf_plan(plan *p, int *ord, int m, int64_t t, avail *F,
                    resv *tmp)
{
    avail Fn, Wn;
    int ok = edf_fill(p, ord, m, t, tmp, &Fn, &Wn);
    avail *W = p->pt_won ? &Wn : NULL;
    if (ok) {
        for (int k = 0; k < m; k++) {
            resv_copy(&p->jobs[ord[k]].r, &tmp[k]);
            p->jobs[ord[k]].rrow = p->tmprow[k];
            p->jobs[ord[k]].tight = 0;
        }
        avail_copy(F, &Fn);
        if (W)
            avail_copy(&p->pt_W, W);
    }
    avail_free(&Fn);
    avail_free(&Wn);
    return ok;
}

/* The admitted jobs among act[0..na-1] that are not at risk, into ord;
 * returns how many. */
static int healthy(const plan *p, const int *act, int na, int *ord)
{
    int m = 0;
    for (int i = 0; i < na; i++) {
        const plan_job *j = &p->jobs[act[i]];
        if (j->decision == PLAN_ADMITTED && !j->at_risk)
            ord[m++] = act[i];
    }
    return m;
}

/* The fallback's whole-node check (replan): the jobs held on part of a
 * node are known only now (some became tight), so the whole nodes are
 * counted again, and the kept reservations' whole-node pieces taken out
 * of them in deadline order; a reservation they do not fit (it counts on
 * a node a held job blocks) is planned again by MSS against what is left
 * where that finds one, and is kept as it was otherwise (the blocking may
 * well end before its growth: a held job is held only while no fresh
 * re-plan succeeds). F holds every kept reservation. */
static void whole_check(plan *p, const int *act, int na, int64_t t,
                        avail *F, int *ord)
{
    wbase_build(p, act, na, t);
    if (!p->pt_won)
        return;
    int m = healthy(p, act, na, ord), redo = 0;
    edf_sort(p, ord, m);
    for (int k = 0; k < m; k++) {
        plan_job *j = &p->jobs[ord[k]];
        take_w(p, &j->r, &p->pt_W, -1);
        if (avail_min(&p->pt_W, t, INT64_MAX) >= 0)
            continue;
        take_w(p, &j->r, &p->pt_W, +1);
        ord[redo++] = ord[k]; /* (k >= redo) */
    }
    resv old = {0};
    for (int k = 0; k < redo; k++) {
        plan_job *j = &p->jobs[ord[k]];
        resv_apply(&j->r, F, +1);
        resv_copy(&old, &j->r);
        const curve_row *row = plan_mss(p, j, t, F, &p->pt_W, &j->r);
        if (row) {
            j->rrow = row;
            j->tight = 0;
        } else {
            /* none: it keeps the reservation it had, which counts GPUs
             * (as before this step), and the placement holds growth back
             * where it cannot place it (hold_keep) */
            resv_copy(&j->r, &old);
        }
        take(p, &j->r, F, &p->pt_W, -1);
    }
    resv_free(&old);
}

/* Step 1 of a point: re-plan every admitted job that is not at risk by
 * MSS in deadline order from scratch. If that fails, keep the previous
 * reservations of the jobs they still cover (from where each job stands,
 * overheads paid); each job they no longer cover (it fell behind: a
 * forced migration, a slower run) gets a new MSS reservation from what
 * is left if there is one, and is otherwise flagged at risk, and then
 * the others are re-planned afresh without it if they can be. At-risk
 * jobs get what is left after the others (plan_at_risk), so a late job
 * never blocks the others' re-planning. Rebuilds F. */
static void replan(plan *p, int *act, int na, int64_t t, avail *F,
                   resv *tmp, int *ord)
{
    int N = p->cl.total_gpus;
    wbase_build(p, act, na, t);
    int m = healthy(p, act, na, ord);
    if (!edf_plan(p, ord, m, t, F, tmp)) {
        p->replan_fallbacks++;
        avail_free(F);
        avail_init(F, t, N);
        if (p->pt_won)
            avail_copy(&p->pt_W, &p->pt_Wb);
        int behind = 0, bad = 0;
        for (int k = 0; k < m; k++) {
            plan_job *j = &p->jobs[ord[k]];
            resv_trim(&j->r, t);
            take(p, &j->r, F, pt_w(p), -1);
            if (!covers(p, j, NULL, &j->r, j->rrow, t, t, 1))
                ord[behind++] = ord[k]; /* fell behind (k >= behind) */
        }
        edf_sort(p, ord, behind);
        for (int k = 0; k < behind; k++) {
            plan_job *j = &p->jobs[ord[k]];
            take(p, &j->r, F, pt_w(p), +1);
            resv_copy(&tmp[0], &j->r);
            const curve_row *row = plan_mss(p, j, t, F, pt_w(p), &j->r);
            if (row) {
                j->rrow = row;
                j->tight = 0;
            } else if (covers(p, j, NULL, &tmp[0], j->rrow, t, t, 0)) {
                resv_copy(&j->r, &tmp[0]); /* it holds if j is not moved */
                j->tight = 1;
            } else {
                flag_at_risk(p, j, t);
                resv_clear(&j->r);
                bad++;
            }
            take(p, &j->r, F, pt_w(p), -1);
        }
        whole_check(p, act, na, t, F, ord);
        if (bad) {
            m = healthy(p, act, na, ord);
            (void)edf_plan(p, ord, m, t, F, tmp);
        }
    }
    plan_at_risk(p, act, na, t, F);
}

/* 1 if an admitted job among act[0..na-1] holds a reservation that
 * overlaps [t, deadline). */
static int promised_before(const plan *p, const int *act, int na, int64_t t,
                           int64_t deadline)
{
    for (int i = 0; i < na; i++) {
        const plan_job *o = &p->jobs[act[i]];
        if (o->decision != PLAN_ADMITTED)
            continue;
        for (int k = 0; k < o->r.n; k++)
            if (o->r.s[k].start < deadline && o->r.s[k].end > t &&
                o->r.s[k].gpus > 0)
                return 1;
    }
    return 0;
}

/* 1 if job j, decided at t, may take reservation h (opts.hint): it
 * starts at j's release at the earliest, its sizes are usable, F has
 * every GPU of it free, and it delivers j's remaining work by its
 * deadline with the overheads paid (from where j stands at its start;
 * the promise check, with the allowance of forced migrations). */
static int hint_fits(const plan *p, const plan_job *j, int64_t t,
                     const avail *F, const resv *h)
{
    int64_t from = t > j->release ? t : j->release; /* its first second */
    for (int k = 0; k < h->n; k++) {
        const seg *s = &h->s[k];
        if (s->start < from || s->end <= s->start ||
            curve_tput(j->in->curve, s->gpus) <= 0 ||
            avail_min(F, s->start, s->end) < s->gpus ||
            (p->pt_won && whole(p, s->gpus) &&
             avail_min(&p->pt_W, s->start, s->end) < s->gpus))
            return 0;
    }
    prm_model m = pmodel(p);
    prm_start st = pstart(j, from);
    return prm_resv_work(&m, &st, NULL, h, j->in->curve, from,
                         j->deadline) >= j->rem * (1.0 + MSS_MARGIN);
}

/* Admit job j with reservation r at batch row 'row': its promise, taken
 * out of F. */
static void admit_with(plan *p, plan_job *j, const curve_row *row,
                       const resv *r, avail *F)
{
    j->rrow = row;
    j->tight = 0;
    j->decision = PLAN_ADMITTED;
    resv_copy(&j->r, r);
    take(p, &j->r, F, pt_w(p), -1);
    p->admitted++;
}

/* ---- the point's earliest deadline (opts.earliest_point) ---------------- */

int plan_earliest_search(int64_t lo, int64_t hint, int64_t step,
                         plan_admits_fn admits, void *ctx, int64_t *out)
{
    int64_t cand = hint > lo ? hint : lo + step;
    int found = 0;
    *out = -1;
    while (!found && cand <= EF_MAX_I64) {
        int ok = admits(ctx, cand, &hint);
        if (ok < 0)
            return -1;
        if (ok) {
            found = 1;
        } else {
            lo = cand;
            cand = hint > cand && hint - cand > step ? hint : cand + step;
            if (step < EF_MAX_I64 / 2)
                step *= 2;
        }
    }
    while (found && cand - lo > 1) {
        int64_t mid = lo + (cand - lo) / 2, h;
        int ok = admits(ctx, mid, &h);
        if (ok < 0)
            return -1;
        if (ok)
            cand = mid;
        else
            lo = mid;
    }
    if (found)
        *out = cand;
    return found;
}

/* A trial decision of job j at the open point t against F: decide()'s
 * admission with j's deadline (as planned: less the margin) set to d,
 * changing nothing (its plans go to the scratch tmp and ord). 'full':
 * its last way too, all admitted jobs and j planned afresh (O(jobs)
 * MSS plans); else only the ways that take j out of what the point left
 * (its hint, its MSS plan: O(the profile) each). */
typedef struct trial {
    plan *p;
    plan_job *j;
    int64_t t;
    const avail *F;
    const int *act;
    int na;
    int *ord;
    resv *tmp;
    int full;
} trial;

static int trial_admits(void *ctx, int64_t deadline, int64_t *hint)
{
    trial *c = ctx;
    plan *p = c->p;
    plan_job *j = c->j;
    int64_t saved = j->deadline;
    j->deadline = deadline - p->opts.deadline_margin;
    *hint = -1;
    const resv *h = p->hint ? &p->hint[j - p->jobs] : NULL;
    int ok = h && h->n > 0 && !j->eb && hint_fits(p, j, c->t, c->F, h);
    if (!ok)
        ok = plan_mss(p, j, c->t, c->F, pt_w(p), c->tmp) != NULL;
    if (!ok && c->full) {
        /* the deadline order puts j among jobs of the same deadline by
         * submit time and id, which a submission again may not share: a
         * deadline it would tie is not offered */
        int m = healthy(p, c->act, c->na, c->ord);
        for (int k = 0; k < m; k++)
            if (p->jobs[c->ord[k]].deadline == j->deadline) {
                j->deadline = saved;
                return 0;
            }
        c->ord[m++] = (int)(j - p->jobs);
        plan_decision d = j->decision;
        j->decision = PLAN_ADMITTED;
        avail Fn, Wn;
        ok = edf_fill(p, c->ord, m, c->t, c->tmp, &Fn, &Wn);
        avail_free(&Fn);
        avail_free(&Wn);
        j->decision = d;
    }
    j->deadline = saved;
    return ok;
}

/* The earliest deadline of job j, just refused at the open point t
 * (opts.earliest_point): the earliest at which decide() would admit it
 * at this point against the reservations the point left, so that the
 * same job submitted again there with that deadline is admitted. The
 * trials take j out of what the point left (cheap: O(the profile)) and
 * search to the second (plan_earliest_search, from 'bound', the
 * planner's fastest finish); then one full trial (every admitted job
 * planned afresh with it) one second earlier, and only where that admits
 * (the re-plan takes it at an earlier deadline) a bisection with full
 * trials between the deadline asked for and that one. So the deadline
 * returned is admitted by decide() and one second less is refused (or is
 * an admitted job's deadline, which a full trial never offers: there the
 * deadline order goes by submit time and id, which a submission again
 * does not keep).
 * -1: no deadline admits it. */
static int64_t point_earliest(plan *p, plan_job *j, int64_t t,
                              const avail *F, const int *act, int na,
                              int *ord, int64_t bound)
{
    int64_t asked = j->deadline + p->opts.deadline_margin, e, h;
    trial c = {p, j, t, F, act, na, ord, p->tmp, 0};
    if (plan_earliest_search(asked, bound, p->opts.slot, trial_admits, &c,
                             &e) != 1)
        return -1;
    c.full = 1;
    if (e - 1 > asked && trial_admits(&c, e - 1, &h) == 1 &&
        plan_earliest_search(asked, e - 1, 1, trial_admits, &c, &e) != 1)
        return -1; /* (cannot be: e - 1 admits) */
    return e;
}

/* Decide one released job at t. */
static void decide(plan *p, plan_job *j, int64_t t, avail *F, resv *tmp,
                   const int *act, int na, int *ord)
{
    int N = p->cl.total_gpus;
    const curve_row *row = j->in->curve;
    int lv[CURVE_MAX_LEVELS], g0;
    if (j->eb ? eb_min_config(j->in, 1, N, &g0) == NULL
              : curve_usable(row, N, lv, NULL) == 0) {
        int smallest = row->usable_gpus[0];
        for (int b = 0; j->eb && b < j->in->nbatch; b++)
            if (j->in->rows[b]->usable_gpus[0] < smallest)
                smallest = j->in->rows[b]->usable_gpus[0];
        j->decision = PLAN_REJECTED;
        snprintf(j->reason, sizeof j->reason,
                 "no usable GPU count fits the cluster (smallest usable size "
                 "is %d GPUs, cluster has %d)", smallest, N);
        p->rejected++;
        return;
    }
    if (!j->in->has_deadline) {
        j->decision = PLAN_BEST_EFFORT;
        p->best_effort++;
        return;
    }
    if (p->withhold && p->withhold[j - p->jobs] && !j->in->promised &&
        j->in->iterations_done == 0 && j->in->samples_done == 0) {
        j->decision = PLAN_REJECTED;
        snprintf(j->reason, sizeof j->reason,
                 "left out by the offline admission: the whole queue is "
                 "known, and admitting it would keep more jobs out");
        p->rejected++;
        return;
    }
    /* Admitted with the reservation given for it (offline admission's
     * exact step) if that holds ... */
    const resv *h = p->hint ? &p->hint[j - p->jobs] : NULL;
    if (h && h->n > 0 && !j->eb && hint_fits(p, j, t, F, h)) {
        admit_with(p, j, j->in->curve, h, F);
        return;
    }
    /* ... or if its MSS plan fits what the admitted jobs left free ... */
    const curve_row *er = plan_mss(p, j, t, F, pt_w(p), tmp);
    if (er) {
        admit_with(p, j, er, tmp, F);
        return;
    }
    /* ... or if the admitted jobs and this one, planned afresh by MSS in
     * deadline order, all still make their deadlines (a job with an
     * earlier deadline comes before later-deadline promises, which are
     * re-planned around it). */
    int m = healthy(p, act, na, ord);
    ord[m++] = (int)(j - p->jobs);
    j->decision = PLAN_ADMITTED;
    if (edf_plan(p, ord, m, t, F, tmp)) {
        p->admitted++;
        plan_at_risk(p, act, na, t, F);
        return;
    }
    j->decision = PLAN_PENDING;
    avail empty;
    avail_init(&empty, t, N);
    int64_t alone;
    j->earliest_feasible_deadline =
        plan_fastest(p, j, t, F, pt_w(p), NULL, &er);
    if (j->earliest_feasible_deadline >= 0)
        j->earliest_feasible_deadline += p->opts.deadline_margin;
    if (p->opts.earliest_point && j->earliest_feasible_deadline >= 0)
        j->earliest_feasible_deadline =
            point_earliest(p, j, t, F, act, na, ord,
                           j->earliest_feasible_deadline);
    alone = plan_fastest(p, j, t, &empty, NULL, NULL, &er);
    avail_free(&empty);
    if (j->in->iterations_done > 0 || j->in->samples_done > 0) {
        /* A job already under way is not dropped: it keeps running as
         * best-effort, and says so. */
        j->decision = PLAN_BEST_EFFORT;
        char when[32]; /* the finish as a person reads it */
        snprintf(j->reason, sizeof j->reason,
                 "demoted to best-effort: cannot finish by its deadline "
                 "(earliest guaranteed finish %s)",
                 ef_ht_fmt(j->earliest_feasible_deadline, EF_HT_UTC, when,
                           sizeof when));
        p->best_effort++;
        return;
    }
    j->decision = PLAN_REJECTED;
    p->rejected++;
    /* 'alone' as the reason shows it: ISO-8601 UTC on the wall clock,
     * else "t=N s" on the plan's clock (ef_ht_at) */
    char fin[26]; /* "t=" and 20 characters and " s" at most */
    ef_ht_at(alone, EF_HT_UTC, fin, sizeof fin);
    if (alone < 0)
        snprintf(j->reason, sizeof j->reason,
                 "too slow: even alone on the cluster, no plan that pays the "
                 "%s overheads of %d s slots finishes its %.0f %s",
                 ovh_name(p->opts.overhead), p->opts.slot, j->rem,
                 j->eb ? "samples" : "iterations");
    else if (j->deadline <= t)
        snprintf(j->reason, sizeof j->reason,
                 "the deadline is already past when the job is planned "
                 "(the plan's now, or the job's release when later)");
    else if (alone > j->deadline)
        snprintf(j->reason, sizeof j->reason,
                 "deadline too tight even alone on the cluster (fastest finish "
                 "%s at %d GPUs)", fin,
                 curve_max_usable(j->eb && er ? er : row, N));
    else if (!promised_before(p, act, na, t, j->deadline))
        snprintf(j->reason, sizeof j->reason,
                 "no minimum-share reservation pays its overheads by the "
                 "deadline (fastest plan alone: %s); no GPUs are promised "
                 "to other jobs before it", fin);
    else
        snprintf(j->reason, sizeof j->reason,
                 "GPUs before the deadline are promised to admitted jobs");
}

/* Seconds job j, running as it held before the point, loses to a change
 * to ng GPUs at batch row nrow (the overhead model's charge, scaled by
 * its measured restarts); 0 where the stability rule does not count it
 * (not holds_still, not running as it was, nothing left). */
static double restart_cost(const plan *p, const plan_job *j, int ng,
                           const curve_row *nrow)
{
    if (!holds_still(p) || j->held <= 0 || j->g != j->held ||
        j->row != j->hrow || j->rem <= 0)
        return 0;
    return ovh_charge_id(p->opts.overhead, j->ovh, j->held, ng, 0,
                         nrow != j->hrow) *
           (j->oscale > 0 ? j->oscale : 1.0);
}

/* The throughput over its remaining work that job j gets from tp (its
 * throughput after a change) once it has paid the change's restart of c
 * seconds (restart_cost: 0 for a job already changing, not running, or
 * no cost): W / (W / tp + c) for remaining work W, tp itself at c = 0. */
static double net_tput(const plan_job *j, double tp, double c)
{
    return c > 0 && tp > 0 ? j->rem / (j->rem / tp + c) : tp;
}

/* 1 if a step of running job j from throughput tc to throughput tp (its
 * curve's), with a restart of c seconds (restart_cost), pays for that
 * restart before the reservations next free GPUs (pt_rise, where a larger
 * step may be open to it: one restart instead of two): the work done by
 * then at the new size, the restart paid, beats staying; or the job ends
 * before then. A step that costs nothing always pays. */
static int pays_by_rise(const plan *p, const plan_job *j, double c,
                        double tp, double tc)
{
    if (c <= 0 || tp <= 0 || p->pt_rise == INT64_MAX)
        return 1;
    double h = (double)(p->pt_rise - p->pt_t);
    if (h >= j->rem / tp + c)
        return 1; /* it would end first: net_tput's rule */
    return (h - c) * tp > h * tc;
}

/* 1 if g is one of row's usable sizes on a cluster of N GPUs. */
static int usable_size(const curve_row *row, int g, int N)
{
    for (int i = 0; i < row->nusable && row->usable_gpus[i] <= N; i++)
        if (row->usable_gpus[i] == g)
            return 1;
    return 0;
}

/* Next usable size above g (<= N), or 0. */
static int next_size(const curve_row *row, int g, int N)
{
    for (int i = 0; i < row->nusable; i++)
        if (row->usable_gpus[i] > g)
            return row->usable_gpus[i] <= N ? row->usable_gpus[i] : 0;
    return 0;
}

/* The surplus step of an elastic-batch job with free_gpus free: the
 * next usable size at its batch, or the smallest usable size >= its GPUs
 * at a larger batch (any batch when it has none) that raises its
 * samples/s. Picks the step with the most samples/s gained per added GPU
 * (a step that adds none: DBL_MAX), in units of the job's per-GPU
 * samples/s at its smallest configuration; ties: fewer GPUs, smaller
 * batch. Returns 0 when no step fits. */
static int eb_step(const plan *p, const plan_job *j, int N, int free_gpus,
                   int *ng, const curve_row **nrow, double *score)
{
    const curve_row *const *rows;
    int nr = eb_rows(j->in, 1, &rows), gmin, found = 0;
    const curve_row *mr = eb_min_config(j->in, 1, N, &gmin);
    double base = eb_tput(mr, gmin, 1) / gmin;
    double cur = j->g ? eb_tput(j->row, j->g, 1) : 0;
    for (int b = 0; b < nr; b++) {
        const curve_row *r = rows[b];
        if (j->g > 0 && r->batch < j->row->batch)
            continue;
        int lv[CURVE_MAX_LEVELS];
        int nl = curve_usable(r, N, lv, NULL);
        for (int k = 0; k < nl; k++) {
            if (lv[k] < j->g || (r == j->row && lv[k] == j->g))
                continue;
            if (lv[k] - j->g > free_gpus)
                break;
            double raw = eb_tput(r, lv[k], 1);
            double c = restart_cost(p, j, lv[k], r);
            double tp = net_tput(j, raw, c);
            if (tp <= cur || !pays_by_rise(p, j, c, raw, cur))
                continue;
            double sc = lv[k] == j->g ? DBL_MAX
                                      : (tp - cur) / (lv[k] - j->g) / base;
            if (!found || sc > *score || (sc == *score && lv[k] < *ng)) {
                found = 1;
                *score = sc;
                *ng = lv[k];
                *nrow = r;
            }
            break;
        }
    }
    return found;
}

/* 1 if admitted job j may run at ng GPUs at batch row nrow from point t
 * instead of its reservation and still keep its promise (a job at risk
 * has none left to keep: it takes every step that gains): whether the
 * next point comes after one slot (it steps back to its reservation
 * then) or only when its reservation changes, the step up, the step back
 * and the allowances are paid and the reservation still covers the rest.
 * Without overheads a step that adds throughput always may. */
static int surplus_ok(const plan *p, const plan_job *j, int64_t t, int ng,
                      const curve_row *nrow)
{
    if (j->decision != PLAN_ADMITTED || j->at_risk ||
        p->opts.overhead == OVH_NONE)
        return 1;
    int64_t S = p->opts.slot;
    prm_piece head = {t, t + S, ng, nrow};
    if (!covers(p, j, &head, &j->r, j->rrow, t, t + S, 1))
        return 0;
    int64_t k = resv_next_change(&j->r, t);
    if (k != INT64_MAX && k > t + S) {
        head.b = k;
        if (!covers(p, j, &head, &j->r, j->rrow, t, k, 1))
            return 0;
    }
    return 1;
}

/* Where job j's GPUs are just before the current point: the caller's
 * placement (plan_set_placement) or the plan's own. */
static const place_set *gpus_of(const plan_job *j)
{
    return j->where ? j->where : &j->pl;
}

/* The GPUs of one node as a bit mask (gpus_per_node <= 64). */
static uint64_t node_bits(int first, int n)
{
    return (n >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1)) << first;
}

/* Step 3's map of taken GPUs (holds_still), one mask per node: the GPUs
 * of every job in play that keeps some (its whole old set, also when it
 * shrinks) and the blocks steps took at this point. Built at its first
 * use in a point. */
static void occ_build(plan *p, const int *act, int na)
{
    int G = p->cl.gpus_per_node, nodes = p->cl.total_gpus / G;
    memset(p->occ, 0, (size_t)nodes * sizeof *p->occ);
    for (int i = 0; i < na; i++) {
        const plan_job *o = &p->jobs[act[i]];
        const place_set *pl = gpus_of(o);
        if (o->g == 0)
            continue;
        for (int k = 0; k < pl->g; k++)
            p->occ[pl->gpu[k] / G] |= (uint64_t)1 << (pl->gpu[k] % G);
    }
    p->occ_built = 1;
}

/*
 * Under the stability rule, 1 if a step of job j to nx GPUs moves no
 * other job: always for a job that changes anyway (held none, or its
 * GPUs already change at this point); else there must be room for nx
 * GPUs by the buddy rule that no other job in play holds and no other
 * step took at this point: an aligned block of a node (its own block
 * first, then the lowest), or whole free nodes past one node. The room
 * found is marked taken. A step that needs others moved would cost them
 * each a migration that its own gain does not count.
 */
static int room_to_grow(plan *p, const int *act, int na, const plan_job *j,
                        int nx)
{
    int G = p->cl.gpus_per_node, nodes = p->cl.total_gpus / G;
    const place_set *pl = gpus_of(j);
    if (!holds_still(p) || j->held <= 0 || j->g != j->held ||
        pl->g != j->held)
        return 1;
    if (!p->occ_built)
        occ_build(p, act, na);
    /* its own GPUs, per node, do not count against it */
    int first = pl->gpu[0], fnode = first / G;
    uint64_t own = pl->g <= G ? node_bits(first % G, pl->g) : ~(uint64_t)0;
    if (nx <= G) {
        uint64_t want = node_bits(first % G - first % G % nx, nx);
        if ((p->occ[fnode] & ~own & want) == 0) {
            p->occ[fnode] |= want;
            return 1;
        }
        /* the lowest node, then the lowest aligned block in it, with nx
         * GPUs not taken: per node, the free GPUs' runs of nx (bit b set
         * iff b .. b + nx - 1 are free) at the aligned starts */
        uint64_t starts = 0;
        for (int b = 0; b + nx <= G; b += nx)
            starts |= (uint64_t)1 << b;
        for (int n = 0; n < nodes; n++) {
            uint64_t x = ~(p->occ[n] & ~(n == fnode ? own : 0)) &
                         node_bits(0, G);
            for (int have = 1; have < nx && x;) {
                int sh = have < nx - have ? have : nx - have;
                x &= x >> sh;
                have += sh;
            }
            x &= starts;
            if (x) {
                p->occ[n] |= node_bits(__builtin_ctzll(x), nx);
                return 1;
            }
        }
        return 0;
    }
    /* whole nodes: free ones, or its own with nothing else taken; its
     * nodes (those where it has a GPU) marked once */
    int need = nx / G, got = 0;
    unsigned char *mine = ef_calloc((size_t)nodes, 1);
    for (int k = 0; k < pl->g; k += G)
        mine[pl->gpu[k] / G] = 1;
    for (int n = 0; n < nodes && got < need; n++)
        got += p->occ[n] == 0 || (mine[n] && (p->occ[n] & ~own) == 0);
    if (got >= need) {
        got = 0;
        for (int n = 0; n < nodes && got < need; n++) {
            if (p->occ[n] == 0 || (mine[n] && (p->occ[n] & ~own) == 0)) {
                p->occ[n] = node_bits(0, G);
                got++;
            }
        }
    }
    free(mine);
    return got >= need;
}

/* The surplus step of a job without elastic batch: its next usable size
 * into *nx and the step's score (surplus mode's), or 0 when it has none. */
static int fixed_step(const plan *p, const plan_job *j, int N, int *nx,
                      double *score)
{
    const curve_row *row = j->in->curve;
    *nx = next_size(row, j->g, N);
    if (*nx == 0)
        return 0;
    double tn = curve_tput(row, *nx);
    double tc = j->g ? curve_tput(row, j->g) : 0;
    if (p->opts.surplus == SURPLUS_GAIN) {
        double base = row->usable_tput[0] / row->usable_gpus[0];
        double c = restart_cost(p, j, *nx, row);
        if (!pays_by_rise(p, j, c, tn, tc))
            return 0; /* better one larger step later than two */
        tn = net_tput(j, tn, c);
        if (tn <= tc) /* the restart costs more than the step gains */
            return 0;
        *score = (tn - tc) / (*nx - j->g) / base;
    } else if (j->g == 0) {
        *score = DBL_MAX;
    } else {
        *score = j->rem * ((double)*nx / tn - (double)j->g / tc) /
                 (*nx - j->g);
    }
    return 1;
}

/* A max-heap of candidate steps. The order in which surplus steps are
 * taken: the higher score first; ties: deadline jobs before best-effort,
 * deadline order (edf_less: deadline, submit time, id), best-effort jobs
 * by id. Each entry carries those keys, copied from its job when pushed,
 * so a comparison reads the heap only, not two jobs (the surplus step
 * pops many times per point). */
typedef struct sh_ent {
    double sc;      /* the step's score */
    int64_t dl;     /* the job's deadline (deadline jobs) */
    int64_t sub;    /* its submit time (deadline jobs) */
    int nd;         /* 1 for a best-effort job */
    int idrank;     /* its id's rank */
    int job;        /* index into p->jobs */
    int nx;         /* the step's size */
} sh_ent;

typedef struct step_heap {
    sh_ent *e;
    int n;
} step_heap;

/* 1 if entry a's step goes before entry b's. */
static int sh_before(const step_heap *h, int a, int b)
{
    const sh_ent *x = &h->e[a], *y = &h->e[b];
    if (x->sc != y->sc)
        return x->sc > y->sc;
    if (x->nd != y->nd)
        return !x->nd;
    if (!x->nd) {
        if (x->dl != y->dl)
            return x->dl < y->dl;
        if (x->sub != y->sub)
            return x->sub < y->sub;
    }
    return x->idrank < y->idrank;
}

static void sh_swap(step_heap *h, int a, int b)
{
    sh_ent t = h->e[a];
    h->e[a] = h->e[b];
    h->e[b] = t;
}

/* The entry of job ji's step to nx GPUs at score sc. */
static sh_ent sh_entry(const plan *p, int ji, int nx, double sc)
{
    const plan_job *j = &p->jobs[ji];
    return (sh_ent){sc, j->deadline, j->in->submit, !j->in->has_deadline,
                    j->idrank, ji, nx};
}

static void sh_push(step_heap *h, const plan *p, int ji, int nx, double sc)
{
    int i = h->n++;
    h->e[i] = sh_entry(p, ji, nx, sc);
    while (i > 0 && sh_before(h, i, (i - 1) / 2)) {
        sh_swap(h, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

/* Move entry i down to its place below it. */
static void sh_down(step_heap *h, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && sh_before(h, l, m))
            m = l;
        if (r < h->n && sh_before(h, r, m))
            m = r;
        if (m == i)
            break;
        sh_swap(h, i, m);
        i = m;
    }
}

static void sh_pop(step_heap *h)
{
    h->n--;
    if (h->n == 0)
        return;
    sh_swap(h, 0, h->n);
    sh_down(h, 0);
}

/* Make a heap of the h->n entries as they stand. The entries' keys are
 * all different (one entry per job, and the id rank decides last), so
 * the order of the pops does not depend on how the heap was built. */
static void sh_heapify(step_heap *h)
{
    for (int i = h->n / 2 - 1; i >= 0; i--)
        sh_down(h, i);
}

/* surplus without elastic batch, the same steps in the same order with
 * a heap of each job's next step: a job's step depends on its own size
 * only, and the free GPUs only fall, so a step that does not fit now
 * never will in this slot (it leaves the heap). */
static void surplus_fixed(plan *p, int *act, int na, int free_gpus,
                          int64_t t)
{
    int N = p->cl.total_gpus;
    step_heap h = {ef_malloc((size_t)(na ? na : 1) * sizeof(sh_ent)), 0};
    for (int i = 0; i < na; i++) {
        int nx;
        double sc;
        if (p->jobs[act[i]].release > t) /* decided early, not released */
            continue;
        if (fixed_step(p, &p->jobs[act[i]], N, &nx, &sc))
            h.e[h.n++] = sh_entry(p, act[i], nx, sc);
    }
    sh_heapify(&h);
    while (free_gpus > 0 && h.n > 0) {
        int ji = h.e[0].job, nx = h.e[0].nx;
        plan_job *j = &p->jobs[ji];
        sh_pop(&h);
        if (nx - j->g > free_gpus || !surplus_ok(p, j, t, nx, j->row) ||
            !room_to_grow(p, act, na, j, nx))
            continue;
        free_gpus -= nx - j->g;
        j->g = nx;
        double sc;
        if (fixed_step(p, j, N, &nx, &sc))
            sh_push(&h, p, ji, nx, sc);
    }
    free(h.e);
}

/*
 * Step 3's first half at t under the stability rule (holds_still): every
 * job in play, released, that held more GPUs just before t than it has
 * now (its reservation at t; 0 for a best-effort job) keeps what it held
 * (the same count and batch) where that many GPUs are still free after
 * every reservation, the size is usable, and its promise survives it
 * (surplus_ok, as for any step above the reservation). In deadline order
 * (edf_less: best-effort jobs, with no deadline, last), so that an earlier
 * promise keeps first when not all can. (Starting an admitted job that
 * waits for its reservation on GPUs another job holds as surplus was
 * tried: on 12 overloaded runs it multiplied preemptions by 14, as such
 * starts are stopped again at the next point that needs the GPUs.)
 */
static void keep_held(plan *p, const int *act, int na, int64_t t)
{
    int N = p->cl.total_gpus, used = 0, m = 0;
    int *ord = p->ord; /* the candidates; free scratch by step 3 */
    for (int i = 0; i < na; i++) {
        const plan_job *j = &p->jobs[act[i]];
        used += j->g;
        if (j->held > j->g && j->release <= t)
            ord[m++] = act[i];
    }
    int free_gpus = N - used;
    ef_assert(free_gpus >= 0);
    edf_sort(p, ord, m);
    for (int k = 0; k < m && free_gpus > 0; k++) {
        plan_job *j = &p->jobs[ord[k]];
        const curve_row *hr = j->eb && j->hrow ? j->hrow : j->in->curve;
        int add = j->held - j->g;
        if (add > free_gpus || !usable_size(hr, j->held, N) ||
            !surplus_ok(p, j, t, j->held, hr))
            continue;
        free_gpus -= add;
        j->g = j->held;
        j->row = hr;
    }
}

/* Step 3 of a point at t: hand out the GPUs free in this slot, one step
 * at a time; an admitted job takes a step only when surplus_ok says its
 * promise survives it (else it takes no more). */
static void surplus(plan *p, int *act, int na, int64_t t)
{
    int N = p->cl.total_gpus, used = 0;
    char *closed = ef_calloc((size_t)(na ? na : 1), 1); /* no more steps */
    for (int i = 0; i < na; i++)
        used += p->jobs[act[i]].g;
    int free_gpus = N - used;
    ef_assert(free_gpus >= 0);
    p->occ_built = 0;
    p->pt_rise = holds_still(p) && p->pt_open && p->pt_t == t
                     ? avail_next_rise(&p->pt_F, t)
                     : INT64_MAX;
    if (!p->opts.elastic_batch) {
        free(closed);
        surplus_fixed(p, act, na, free_gpus, t);
        return;
    }
    /* (an elastic-batch step may add no GPU, so the loop runs until no
     * job has a step; for the others that is when no GPU is left) */
    int best_ng = 0;
    const curve_row *best_row = NULL;
    while (free_gpus > 0 || p->opts.elastic_batch) {
        int best = -1;
        double bs = -DBL_MAX;
        for (int i = 0; i < na; i++) {
            plan_job *j = &p->jobs[act[i]];
            const curve_row *row = j->in->curve;
            int nx = 0;
            if (closed[i] || j->release > t) /* not released yet */
                continue;
            double score = 0;
            const curve_row *nrow = row;
            if (j->eb) {
                if (!eb_step(p, j, N, free_gpus, &nx, &nrow, &score))
                    continue;
            } else if (!fixed_step(p, j, N, &nx, &score) ||
                       nx - j->g > free_gpus) {
                continue;
            }
            if (best < 0 || score > bs) {
                best = i;
                bs = score;
                best_ng = nx;
                best_row = nrow;
                continue;
            }
            if (score < bs)
                continue;
            /* tie: deadline jobs before best-effort, EDF, then id */
            plan_job *b = &p->jobs[act[best]];
            int jd = j->in->has_deadline, bd = b->in->has_deadline;
            if (jd != bd ? jd : (jd ? edf_less(j, b)
                                     : j->idrank < b->idrank)) {
                best = i;
                best_ng = nx;
                best_row = nrow;
            }
        }
        if (best < 0)
            break;
        plan_job *j = &p->jobs[act[best]];
        int nx = best_ng;
        if (!surplus_ok(p, j, t, nx, j->eb ? best_row : j->row) ||
            (nx != j->g && !room_to_grow(p, act, na, j, nx))) {
            closed[best] = 1;
            continue;
        }
        ef_assert(j->eb || nx == next_size(j->in->curve, j->g, N));
        free_gpus -= nx - j->g;
        j->g = nx;
        if (j->eb)
            j->row = best_row;
    }
    free(closed);
}

/* The jobs' current placements (from the queue) as GPU sets, into
 * out[i] for job i when out is given (else checked only): each must fit
 * the cluster, follow the buddy rule, and not share a GPU with another
 * job. */
static int take_placements(const cluster *cl, const job_queue *q,
                           place_set *out, ef_err *e)
{
    int G = cl->gpus_per_node, N = cl->total_gpus;
    int *owner = NULL, rc = EF_OK;
    place_set tmp = {0, NULL};
    for (int i = 0; i < q->n && rc == EF_OK; i++) {
        const job *jb = &q->jobs[i];
        if (jb->cur.n == 0)
            continue;
        if (!owner) {
            owner = ef_malloc((size_t)N * sizeof *owner);
            for (int k = 0; k < N; k++)
                owner[k] = -1;
        }
        place_set *ps = out ? &out[i] : &tmp;
        free(tmp.gpu);
        ps->g = jb->cur.n;
        ps->gpu = ef_malloc((size_t)jb->cur.n * sizeof(int));
        for (int k = 0; k < jb->cur.n; k++) {
            if (jb->cur.node[k] >= cl->nodes || jb->cur.gpu[k] >= G) {
                rc = ef_fail(e, EF_E_INPUT, "%s: jobs[%d].placement: node %d "
                             "GPU %d is not in the cluster (%d nodes x %d "
                             "GPUs)", q->path, jb->index, jb->cur.node[k],
                             jb->cur.gpu[k], cl->nodes, G);
                break;
            }
            ps->gpu[k] = jb->cur.node[k] * G + jb->cur.gpu[k];
        }
        if (rc != EF_OK)
            break;
        qsort(ps->gpu, (size_t)ps->g, sizeof(int), cmp_int);
        for (int k = 0; k < ps->g && rc == EF_OK; k++) {
            int other = owner[ps->gpu[k]];
            if (other >= 0)
                rc = ef_fail(e, EF_E_INPUT, "%s: jobs[%d].placement: node %d "
                             "GPU %d is also held by job %s", q->path,
                             jb->index, ps->gpu[k] / G, ps->gpu[k] % G,
                             q->jobs[other].id);
            else
                owner[ps->gpu[k]] = i;
        }
        if (rc == EF_OK && !place_is_buddy(cl, ps))
            rc = ef_fail(e, EF_E_INPUT, "%s: jobs[%d].placement: %d GPUs not "
                         "placed by the buddy rule (a power of two, one "
                         "aligned block inside a node, or whole nodes)",
                         q->path, jb->index, ps->g);
    }
    free(tmp.gpu);
    free(owner);
    return rc;
}

int plan_check_placements(const cluster *c, const job_queue *q, ef_err *e)
{
    return take_placements(c, q, NULL, e);
}

/* Take the jobs' current placements (from the queue) as the placement
 * before the first slot, so jobs that keep their size stay where they
 * are (take_placements' rules). */
static int current_placements(plan *p, const job_queue *q, ef_err *e)
{
    place_set *out = ef_calloc((size_t)(q->n ? q->n : 1), sizeof *out);
    int rc = take_placements(&p->cl, q, out, e);
    for (int i = 0; i < q->n; i++) {
        if (rc == EF_OK && out[i].g > 0)
            p->jobs[i].pl = out[i];
        else
            free(out[i].gpu);
    }
    free(out);
    return rc;
}

/* Without admission control: every deadline job is planned in deadline
 * order by MSS; one that cannot make its deadline gets the fastest plan
 * the capacity left allows (and takes it from later jobs). */
static int replan_noac(plan *p, const int *act, int na, int64_t t,
                       avail *F)
{
    int m = 0, late = 0;
    for (int i = 0; i < na; i++)
        if (p->jobs[act[i]].decision == PLAN_ADMITTED)
            p->ord[m++] = act[i];
    edf_sort(p, p->ord, m);
    for (int k = 0; k < m; k++) {
        plan_job *j = &p->jobs[p->ord[k]];
        const curve_row *r = plan_mss(p, j, t, F, NULL, &j->r);
        if (!r) {
            late++;
            (void)plan_fastest(p, j, t, F, NULL, &j->r, &r);
        }
        if (r)
            j->rrow = r;
        resv_apply(&j->r, F, -1);
    }
    return late;
}

/* The reference implementation's admission (opts.admission_reference):
 * the deadline jobs released at t are tentatively admitted, then every
 * admitted job and they are planned afresh in deadline order (a job that
 * cannot make its deadline gets the fastest plan left, as without
 * admission control). If any job, an already late one included, cannot
 * make its deadline, every deadline arrival of the point is rejected and
 * the admitted jobs are planned again alone. Other arrivals are decided
 * as usual (best-effort; no usable size). Appends the admitted and
 * best-effort arrivals to act; F ends as the profile left. */
static void admit_reference(plan *p, int *act, int *na, const int *rel,
                            int nrel, int64_t t, avail *F)
{
    int N = p->cl.total_gpus, tent = 0;
    for (int r = 0; r < nrel; r++) {
        plan_job *j = &p->jobs[rel[r]];
        if (curve_usable(j->in->curve, N, NULL, NULL) == 0 ||
            !j->in->has_deadline) {
            decide(p, j, t, F, p->tmp, act, *na, p->ord);
        } else {
            j->decision = PLAN_ADMITTED;
            tent++;
        }
        if (j->decision == PLAN_ADMITTED || j->decision == PLAN_BEST_EFFORT)
            act[(*na)++] = rel[r];
    }
    if (replan_noac(p, act, *na, t, F) == 0 || tent == 0) {
        p->admitted += tent;
        return;
    }
    /* refused: drop the tentative admissions, plan the others again */
    int keep = 0;
    for (int i = 0; i < *na; i++) {
        plan_job *j = &p->jobs[act[i]];
        int arrival = 0;
        for (int r = 0; r < nrel && !arrival; r++)
            arrival = rel[r] == act[i];
        if (arrival && j->decision == PLAN_ADMITTED) {
            j->decision = PLAN_PENDING;
            resv_clear(&j->r);
            continue;
        }
        act[keep++] = act[i];
    }
    *na = keep;
    avail_free(F);
    avail_init(F, t, N);
    (void)replan_noac(p, act, *na, t, F);
    for (int r = 0; r < nrel; r++) {
        plan_job *j = &p->jobs[rel[r]];
        if (j->decision != PLAN_PENDING)
            continue;
        const curve_row *er;
        j->earliest_feasible_deadline =
            plan_fastest(p, j, t, F, NULL, NULL, &er);
        if (j->earliest_feasible_deadline >= 0)
            j->earliest_feasible_deadline += p->opts.deadline_margin;
        if (j->in->iterations_done > 0 || j->in->samples_done > 0) {
            j->decision = PLAN_BEST_EFFORT;
            snprintf(j->reason, sizeof j->reason,
                     "demoted to best-effort: the reference admission "
                     "refused this point's arrivals");
            p->best_effort++;
            act[(*na)++] = rel[r];
            continue;
        }
        j->decision = PLAN_REJECTED;
        p->rejected++;
        snprintf(j->reason, sizeof j->reason,
                 "reference admission: planned with this point's arrivals, "
                 "a job (admitted or arriving) would miss its deadline");
    }
}

/* 1 if job j's promise has no room for a migration: placement holds it
 * where it is (eng_alloc.keep). */
static int keeps(const plan_job *j)
{
    return j->tight || j->at_risk;
}

static int cmp_growth(const void *a, const void *b, void *ctx)
{
    const plan *p = ctx;
    const plan_job *x = &p->jobs[*(const int *)a],
                   *y = &p->jobs[*(const int *)b];
    int gx = x->g - gpus_of(x)->g, gy = y->g - gpus_of(y)->g;
    if (gx != gy)
        return gx > gy ? -1 : 1;
    if (x->deadline != y->deadline) /* the latest deadline waits first */
        return x->deadline > y->deadline ? -1 : 1;
    return x->idrank - y->idrank;
}

/* A job whose promise has no room for a migration ('keeps': tight, at
 * risk) must stay on its GPUs, but the planner's sizes count GPUs, not
 * where they are: a job growing onto whole nodes can find every node
 * holding a piece of such a job, and the placement then moves one
 * (place.h, attempt 3), which breaks its promise. So when the sizes at
 * this point cannot be placed with every such job held, the jobs that
 * grow or start here and are not held themselves keep the GPUs they
 * hold, the largest growth first (then the latest deadline), until they
 * can; their promises are checked again one slot later (p->held_back).
 * Needs the jobs' placements (plan_build's own; a loop that places them
 * itself passes them with plan_set_placement). */
static void hold_keep(plan *p, const int *act, int na)
{
    int any = 0;
    p->held_back = 0;
    for (int i = 0; i < na && !any; i++) {
        const plan_job *j = &p->jobs[act[i]];
        any = keeps(j) && j->g > 0 && gpus_of(j)->g == j->g;
    }
    if (!any)
        return;
    int *want = ef_malloc((size_t)na * sizeof *want);
    place_set *prev = ef_malloc((size_t)na * sizeof *prev);
    const char **ids = ef_malloc((size_t)na * sizeof *ids);
    char *keep = ef_malloc((size_t)na);
    int *grow = ef_malloc((size_t)na * sizeof *grow);
    int *owner = ef_malloc((size_t)p->cl.total_gpus * sizeof *owner);
    int ng = 0;
    for (int i = 0; i < na; i++) {
        const plan_job *j = &p->jobs[act[i]];
        prev[i] = *gpus_of(j);
        ids[i] = j->in->id;
        keep[i] = (char)keeps(j);
        if (!keep[i] && j->g > gpus_of(j)->g)
            grow[ng++] = act[i];
    }
    qsort_r(grow, (size_t)ng, sizeof *grow, cmp_growth, p);
    for (int k = 0; k <= ng; k++) {
        for (int i = 0; i < na; i++)
            want[i] = p->jobs[act[i]].g;
        if (place_holds_keep(&p->cl, na, want, prev, ids, keep,
                             holds_still(p), owner) ||
            k == ng)
            break;
        plan_job *j = &p->jobs[grow[k]];
        j->g = gpus_of(j)->g;
        if (j->g > 0)
            j->row = j->hrow;
        p->held_back = 1;
    }
    free(want);
    free(prev);
    free(ids);
    free(keep);
    free(grow);
    free(owner);
}

/* What the jobs released at t hold (for step 3). */
static void note_held(plan *p, const int *rel, int nrel)
{
    for (int r = 0; r < nrel; r++) {
        plan_job *j = &p->jobs[rel[r]];
        j->held = gpus_of(j)->g;
        j->hrow = j->row;
    }
}

/* Step 2 for rel[0..nrel-1] at the open point t, against p->pt_F. */
static void point_decide(plan *p, int64_t t, int *act, int *na,
                         const int *rel, int nrel)
{
    int N = p->cl.total_gpus;
    avail *F = &p->pt_F;
    if (p->opts.no_admission) {
        for (int r = 0; r < nrel; r++) {
            plan_job *j = &p->jobs[rel[r]];
            if (curve_usable(j->in->curve, N, NULL, NULL) == 0 ||
                !j->in->has_deadline) {
                decide(p, j, t, F, p->tmp, act, *na, p->ord);
            } else {
                j->decision = PLAN_ADMITTED;
                p->admitted++;
            }
            if (j->decision == PLAN_ADMITTED ||
                j->decision == PLAN_BEST_EFFORT)
                act[(*na)++] = rel[r];
        }
        (void)replan_noac(p, act, *na, t, F);
    } else if (p->opts.admission_reference) {
        admit_reference(p, act, na, rel, nrel, t, F);
    } else {
        for (int r = 0; r < nrel; r++) {
            plan_job *j = &p->jobs[rel[r]];
            decide(p, j, t, F, p->tmp, act, *na, p->ord);
            if (j->decision == PLAN_ADMITTED ||
                j->decision == PLAN_BEST_EFFORT)
                act[(*na)++] = rel[r];
        }
    }
}

/* 1 if released jobs can be decided at an open point on their own. */
static int decides_apart(const plan *p)
{
    return !p->opts.no_admission && !p->opts.admission_reference;
}

void plan_point_begin(plan *p, int64_t t, int *act, int *na, const int *rel,
                      int nrel)
{
    if (p->pt_open)
        avail_free(&p->pt_F);
    avail_init(&p->pt_F, t, p->cl.total_gpus);
    p->pt_open = 1;
    p->pt_t = t;
    p->points++;
    if (p->pt_won) { /* replan counts the whole nodes again */
        avail_free(&p->pt_Wb);
        avail_free(&p->pt_W);
        p->pt_won = 0;
    }
    /* where every job in play stands: the GPUs and batch it holds */
    for (int i = 0; i < *na; i++) {
        plan_job *j = &p->jobs[act[i]];
        j->held = gpus_of(j)->g > 0 ? gpus_of(j)->g : j->g;
        j->hrow = j->row;
    }
    note_held(p, rel, nrel);
    if (decides_apart(p))
        replan(p, act, *na, t, &p->pt_F, p->tmp, p->ord);
    point_decide(p, t, act, na, rel, nrel);
}

int plan_point_more(plan *p, int64_t t, int *act, int *na, const int *rel,
                    int nrel)
{
    if (!p->pt_open || p->pt_t != t || !decides_apart(p))
        return 0;
    note_held(p, rel, nrel);
    point_decide(p, t, act, na, rel, nrel);
    return 1;
}

void plan_point_end(plan *p, int64_t t, int *act, int na)
{
    /* keep the active list in a fixed order: by job index */
    ef_sort_ints(act, na);
    for (int i = 0; i < na; i++) {
        plan_job *j = &p->jobs[act[i]];
        j->g = j->decision == PLAN_ADMITTED ? resv_at(&j->r, t) : 0;
        j->row = j->rrow;
    }
    if (holds_still(p))
        keep_held(p, act, na, t);
    surplus(p, act, na, t);
    hold_keep(p, act, na);
}

void plan_point(plan *p, int64_t t, int *act, int *na, const int *rel,
                int nrel)
{
    plan_point_begin(p, t, act, na, rel, nrel);
    plan_point_end(p, t, act, *na);
}

void plan_set_placement(plan *p, int i, const place_set *pl)
{
    ef_assert(i >= 0 && i < p->njobs);
    p->jobs[i].where = pl;
}

void plan_set_deadline(plan *p, int i, int64_t deadline)
{
    ef_assert(i >= 0 && i < p->njobs);
    p->jobs[i].deadline = deadline;
}

void plan_set_remaining(plan *p, int i, double rem)
{
    ef_assert(i >= 0 && i < p->njobs);
    p->jobs[i].rem = rem;
}

void plan_set_restart_scale(plan *p, int i, double scale)
{
    ef_assert(i >= 0 && i < p->njobs);
    p->jobs[i].oscale = scale > 0 ? scale : 1.0;
}

void plan_set_point_index(plan *p, int64_t index)
{
    p->point_index = index;
}

void plan_set_owed(plan *p, int i, double seconds)
{
    ef_assert(i >= 0 && i < p->njobs);
    p->jobs[i].owed = seconds > 0 ? seconds : 0;
}

void plan_retire(plan *p, int i)
{
    ef_assert(i >= 0 && i < p->njobs);
    resv_clear(&p->jobs[i].r);
    p->jobs[i].g = 0;
}

static void init_job(plan *p, const job_queue *q, int i);

/* Grow p's per-job arrays to hold at least n jobs (new entries zero). */
static void grow_jobs(plan *p, int n)
{
    if (n <= p->jcap)
        return;
    int cap = p->jcap * 2 > n ? p->jcap * 2 : n;
    if (cap < 16)
        cap = 16;
    size_t old = (size_t)p->jcap, nw = (size_t)cap;
    p->jobs = ef_realloc(p->jobs, nw * sizeof *p->jobs);
    memset(p->jobs + old, 0, (nw - old) * sizeof *p->jobs);
    p->tmp = ef_realloc(p->tmp, nw * sizeof *p->tmp);
    memset(p->tmp + old, 0, (nw - old) * sizeof *p->tmp);
    p->ord = ef_realloc(p->ord, nw * sizeof *p->ord);
    p->tmprow = ef_realloc(p->tmprow, nw * sizeof *p->tmprow);
    memset(p->tmprow + old, 0, (nw - old) * sizeof *p->tmprow);
    p->jcap = cap;
}

void plan_add_job(plan *p, const job_queue *q)
{
    ef_assert(q->n == p->njobs + 1);
    grow_jobs(p, q->n);
    p->njobs = q->n;
    for (int i = 0; i < q->n; i++)
        p->jobs[i].in = &q->jobs[i];
    init_job(p, q, q->n - 1);
    /* the new id's rank among the others' (rank_ids' order, kept without
     * sorting again: the ids after it move up one) */
    plan_job *nj = &p->jobs[q->n - 1];
    int lo = -1, eq = -1;
    for (int i = 0; i + 1 < q->n; i++) {
        int c = strcmp(p->jobs[i].in->id, nj->in->id);
        if (c == 0)
            eq = p->jobs[i].idrank;
        else if (c < 0 && p->jobs[i].idrank > lo)
            lo = p->jobs[i].idrank;
    }
    if (eq >= 0) {
        nj->idrank = eq;
        return;
    }
    nj->idrank = lo + 1;
    for (int i = 0; i + 1 < q->n; i++)
        if (p->jobs[i].idrank > lo)
            p->jobs[i].idrank++;
}

void plan_adopt(plan *p, int i)
{
    ef_assert(i >= 0 && i < p->njobs);
    plan_job *j = &p->jobs[i];
    ef_assert(j->decision == PLAN_PENDING);
    j->decision = PLAN_ADMITTED;
    j->rrow = j->row = j->in->curve;
    p->admitted++;
}

void plan_keep_jobs(plan *p, const job_queue *q, const int *from)
{
    int n = q->n;
    char *kept = ef_calloc((size_t)p->njobs + 1, 1);
    for (int k = 0; k < n; k++) {
        ef_assert(from[k] >= 0 && from[k] < p->njobs && !kept[from[k]]);
        ef_assert(k == 0 || from[k] > from[k - 1]);
        kept[from[k]] = 1;
    }
    for (int i = 0; i < p->njobs; i++)
        if (!kept[i]) {
            resv_free(&p->jobs[i].r);
            resv_free(&p->jobs[i].reserved);
            resv_free(&p->jobs[i].wown);
            place_set_free(&p->jobs[i].pl);
        }
    free(kept);
    /* from[] ascends: each entry moves down or stays */
    for (int k = 0; k < n; k++) {
        if (from[k] != k)
            p->jobs[k] = p->jobs[from[k]];
        p->jobs[k].in = &q->jobs[k];
    }
    for (int i = n; i < p->njobs; i++)
        memset(&p->jobs[i], 0, sizeof p->jobs[i]);
    p->njobs = n;
    rank_ids(p, q);
}

/* Job i of queue q as plan_init sets it up: remaining work, release,
 * deadline planned against, nothing decided. */
static void init_job(plan *p, const job_queue *q, int i)
{
    const plan_opts *o = &p->opts;
    int S = o->slot;
    int64_t now = p->now;
    plan_job *j = &p->jobs[i];
    ef_assert(q->jobs[i].curve != NULL);
    j->ovh = ovh_lookup(q->jobs[i].model);
    j->in = &q->jobs[i];
    j->rem = (double)(j->in->iterations - j->in->iterations_done);
    j->row = j->rrow = j->in->curve;
    j->eb = o->elastic_batch && job_elastic(j->in);
    if (j->eb)
        j->rem = job_samples_left(j->in);
    j->iterations_left = j->rem;
    /* the deadline planned against: the job's, less the margin */
    j->deadline = !j->in->has_deadline ? INT64_MAX
                  : j->in->deadline - o->deadline_margin > 0
                      ? j->in->deadline - o->deadline_margin : 0;
    j->release = ef_align_up(now, j->in->submit, S);
    j->decide = j->release;
    if (p->decide_at && p->decide_at[i] < j->release) {
        int64_t d = ef_align_up(now, p->decide_at[i] > now
                                         ? p->decide_at[i] : now, S);
        if (d < j->release)
            j->decide = d;
    }
    j->start = j->planned_end = j->earliest_feasible_deadline = -1;
    j->owed = (double)j->in->owed;
    j->oscale = o->restart_scale && o->restart_scale[i] > 0
                    ? o->restart_scale[i] : 1.0;
}

int plan_init(plan *p, const job_queue *q, const cluster *c,
              const plan_opts *o, ef_err *e)
{
    memset(p, 0, sizeof *p);
    p->opts = *o;
    p->opts.withhold = NULL;
    p->withhold = o->withhold; /* plan_build drops it when done */
    p->opts.order = NULL;
    p->order = o->order;
    p->opts.decide_at = NULL;
    p->decide_at = o->no_admission || o->admission_reference ? NULL
                                                             : o->decide_at;
    p->opts.hint = NULL;
    p->hint = o->no_admission || o->admission_reference ? NULL : o->hint;
    p->cl = *c;
    int S = o->slot, n = q->n;
    if (S <= 0)
        return ef_fail(e, EF_E_USAGE, "slot must be positive");
    int64_t now = o->now;
    if (now == INT64_MIN) {
        now = INT64_MAX;
        for (int i = 0; i < n; i++)
            if (q->jobs[i].submit < now)
                now = q->jobs[i].submit;
        if (n == 0)
            now = 0;
    }
    p->now = now;
    p->njobs = n;
    p->jcap = n ? n : 1;
    p->jobs = ef_calloc((size_t)p->jcap, sizeof *p->jobs);
    p->tmp = ef_calloc((size_t)p->jcap, sizeof *p->tmp);
    p->ord = ef_malloc((size_t)p->jcap * sizeof *p->ord);
    p->tmprow = ef_calloc((size_t)p->jcap, sizeof *p->tmprow);
    p->occ = ef_calloc((size_t)(c->total_gpus / c->gpus_per_node + 1),
                       sizeof *p->occ);
    rank_ids(p, q);
    for (int i = 0; i < n; i++)
        init_job(p, q, i);
    p->opts.restart_scale = NULL; /* read: it need not outlive this */
    return EF_OK;
}

/* ---- running slots: plan_build and plan_from_sizes ------------------------ */

/* What a plan being run slot by slot holds besides the plan. */
typedef struct plan_run {
    eng x;          /* the slot engine's scratch */
    eng_alloc *a;   /* one per job in play */
    int *held;      /* per job in play: GPUs held before a placement */
    int cap;        /* slots allocated in p->slots */
} plan_run;

static void run_init(plan_run *R, const plan *p)
{
    eng_init(&R->x, &p->cl, p->njobs);
    R->x.least = holds_still(p);
    R->a = ef_calloc((size_t)(p->njobs ? p->njobs : 1), sizeof *R->a);
    R->held = ef_calloc((size_t)(p->njobs ? p->njobs : 1), sizeof *R->held);
    R->cap = 0;
}

static void run_free(plan_run *R)
{
    eng_free(&R->x);
    free(R->a);
    free(R->held);
}

/* Place act[0..na-1] at their 'g' by the buddy rule through the slot
 * engine and count their resizes and migrations. EF_ERR (with 'e') when
 * the sizes cannot be placed. */
static int place_act(plan *p, plan_run *R, const int *act, int na, ef_err *e)
{
    for (int i = 0; i < na; i++) {
        plan_job *j = &p->jobs[act[i]];
        R->held[i] = j->pl.g;
        R->a[i] = (eng_alloc){j->in->id, j->g, NULL, 0, &j->pl, ENG_KEEP,
                              j->tight || j->at_risk};
    }
    if (eng_place(&R->x, R->a, na, e) != EF_OK)
        return EF_ERR;
    for (int i = 0; i < na; i++) {
        plan_job *j = &p->jobs[act[i]];
        int g0 = R->held[i], g1 = j->pl.g;
        int moved = R->a[i].change == ENG_MIGRATE;
        int rebatch = j->eb && g0 > 0 && g1 > 0 && j->hrow && j->row != j->hrow;
        j->hrow = j->row;
        if (g1 == 0)
            j->owed = 0;
        else if (p->opts.overhead == OVH_REFERENCE)
            j->changed = g0 != g1 || moved || rebatch;
        else {
            double c = ovh_charge_id(p->opts.overhead, j->ovh, g0, g1,
                                     moved, rebatch);
            if (c > 0)
                j->owed = c;
        }
        if (R->a[i].change == ENG_RESIZE) {
            j->resizes++;
            p->resizes++;
        } else if (R->a[i].change == ENG_MIGRATE) {
            j->migrations++;
            p->migrations++;
        }
    }
    return EF_OK;
}

/* Run the slot [t, t+S) with the current allocations of act[0..*na-1]:
 * record it, advance every running job at its curve's throughput, and
 * complete those whose work runs out at the exact second (they hold their
 * GPUs to the end of the slot). Finished jobs leave act; aux, if given,
 * is compacted alongside. Returns 1 if a job finished. */
static int run_slot(plan *p, plan_run *R, int *act, int *na, int *aux,
                    int64_t t)
{
    int S = p->opts.slot, keep = 0, fin = 0;
    /* OVH_REFERENCE: a point every slot, a restart every 'slot' slots */
    int64_t k = (t - p->now) / S;
    int restart = k > 0 && k % S == 0;
    record(p, &R->cap, act, *na, t, S);
    for (int i = 0; i < *na; i++) {
        plan_job *j = &p->jobs[act[i]];
        if (j->g > 0) {
            double tp = j->eb ? eb_tput(j->row, j->g, 1)
                              : curve_tput(j->in->curve, j->g);
            double ov, used;
            if (p->opts.overhead == OVH_REFERENCE) {
                j->owed = restart ? ovh_reference(j->g, 0, 1, p->cl.total_gpus)
                                  : ovh_reference(j->g, !j->changed &&
                                                  !j->restarted, 0,
                                                  p->cl.total_gpus);
                j->changed = 0;
                j->restarted = restart;
            }
            if (j->start < 0)
                j->start = t;
            j->gpu_seconds += (double)j->g * S;
            p->used_gpu_seconds += (double)j->g * S;
            int done = eng_advance(&j->rem, &j->owed, tp, (double)S, &ov,
                                   &used);
            j->overhead_seconds += ov;
            if (done) {
                j->planned_end = t + (int64_t)ceil(ov + used);
                j->done = 1;
                j->g = 0;
                place_set_free(&j->pl);
                resv_clear(&j->r);
                fin = 1;
                continue;
            }
        }
        if (aux)
            aux[keep] = aux[i];
        act[keep++] = act[i];
    }
    *na = keep;
    return fin;
}

/* ---- skipping stretches where nothing changes ---------------------------- */

/* The throughput job j runs at now (what run_slot advances it at). */
static double run_tput(const plan_job *j)
{
    return j->eb ? eb_tput(j->row, j->g, 1) : curve_tput(j->in->curve, j->g);
}

/*
 * ff_len: how many slots from t (t included) plan_build may run at once
 * by ff_run because running them one by one would change nothing but
 * the sums: no arrival (next_release: the first release not yet
 * decided), no change of an admitted job's reservation, no completion,
 * every running job past its first slot with per-slot charges that
 * repeat (OVH_REFERENCE: GPUs unchanged since the last slot; the other
 * models: nothing owed). At most 'cap'. 0 when fewer than 2 slots.
 */
static int64_t ff_len(const plan *p, const int *act, int na, int64_t t,
                      int64_t next_release, int64_t cap)
{
    int64_t S = p->opts.slot, K = cap;
    if (na == 0)
        return 0;
    if (next_release != INT64_MAX) {
        int64_t k = (next_release - t + S - 1) / S;
        if (k < K)
            K = k;
    }
    for (int i = 0; i < na && K >= 2; i++) {
        const plan_job *j = &p->jobs[act[i]];
        if (j->decision == PLAN_ADMITTED) {
            int64_t nc = resv_next_change(&j->r, t);
            if (nc != INT64_MAX) {
                int64_t k = (nc - t + S - 1) / S;
                if (k < K)
                    K = k;
            }
        }
        if (j->g == 0)
            continue;
        if (j->start < 0 ||
            (p->opts.overhead == OVH_REFERENCE ? j->changed : j->owed != 0))
            return 0;
        /* slot r (from 0) starts with rem >= rem0 - r (d + ulp): d, the
         * most a slot takes, plus its rounding; it completes nothing
         * while that stays above d */
        double d = (double)S * run_tput(j);
        double ulp = ldexp(1.0, ilogb(j->rem) - 52);
        double q = (j->rem - d) / (d + 2 * ulp);
        int64_t safe = q >= 9e15 ? INT64_MAX : (int64_t)floor(q) - 1;
        if (safe < K)
            K = safe;
    }
    return K >= 2 ? K : 0;
}

/* Run the K slots from t (ff_len said they may) at once: exactly what K
 * calls of run_slot give, bit for bit (common/fsum.h), with no job
 * completing. */
static void ff_run(plan *p, plan_run *R, const int *act, int na, int64_t t,
                   int64_t K, ef_fsum_run *used)
{
    int S = p->opts.slot, N = p->cl.total_gpus, nu = 0;
    record(p, &R->cap, act, na, t, K * S);
    for (int i = 0; i < na; i++) {
        plan_job *j = &p->jobs[act[i]];
        if (j->g == 0)
            continue;
        double tp = run_tput(j), gs = (double)j->g * S;
        used[nu++] = (ef_fsum_run){gs, 1};
        j->gpu_seconds = ef_fsum_add(j->gpu_seconds, gs, K);
        if (p->opts.overhead != OVH_REFERENCE) {
            /* nothing owed: every slot is productive */
            j->rem = ef_fsum_add(j->rem, -((double)S * tp), K);
            continue;
        }
        ovh_ref_seq seq;
        ovh_ref_slots((t - p->now) / S, K, S, j->restarted, &seq);
        double charge[3], ov[3], drem[3];
        charge[OVH_REF_CACHED] = ovh_reference(j->g, 1, 0, N);
        charge[OVH_REF_FRESH] = ovh_reference(j->g, 0, 0, N);
        charge[OVH_REF_RESTART] = ovh_reference(j->g, 0, 1, N);
        for (int k = 0; k < 3; k++) {
            ov[k] = charge[k] < S ? charge[k] : S;
            drem[k] = -(((double)S - ov[k]) * tp);
        }
        ovh_ref_add(&j->rem, &seq, drem);
        ovh_ref_add(&j->overhead_seconds, &seq, ov);
        const ovh_ref_seq *q = &seq;
        ovh_ref_kind last = q->ntail ? q->tail[q->ntail - 1].kind
                            : q->nbody && q->reps ? q->body[q->nbody - 1].kind
                                                  : q->head[q->nhead - 1].kind;
        j->owed = charge[last] - ov[last];
        j->restarted = seq.last_restart;
    }
    p->used_gpu_seconds = ef_fsum_repeat(p->used_gpu_seconds, used, nu, K);
}

/* Seconds any one point may cost every running job on top of the
 * physics plan_horizon counts (a reconfiguration under OVH_FIG12 or
 * OVH_RESTART is at most 30 s). */
#define PLAN_POINT_COST 60.0

/*
 * plan_horizon: how far from 'now' a plan of p's jobs can legitimately
 * reach, before the per-point allowance plan_build adds: twice the
 * latest release or deadline, plus every job's work left run alone at
 * its slowest usable throughput in the productive share of a slot the
 * overhead model leaves (OVH_REFERENCE: its per-slot charges at the
 * cluster's size over a restart period; a share of 0, which never
 * finishes, counts nothing), plus 64 slots. Past it the plan has run
 * away.
 */
static double plan_horizon(const plan *p)
{
    int S = p->opts.slot, N = p->cl.total_gpus;
    double share = 1, last = 0, work = 0;
    if (p->opts.overhead == OVH_REFERENCE) {
        double b = ovh_reference(N, 1, 0, N), u = ovh_reference(N, 0, 0, N),
               r = ovh_reference(N, 0, 1, N), prod = 0;
        if (S >= 3)
            prod += (S - 2) * (S > b ? S - b : 0);
        if (S >= 2)
            prod += S > u ? S - u : 0;
        prod += S > r ? S - r : 0;
        share = prod / ((double)S * S);
    }
    for (int i = 0; i < p->njobs; i++) {
        const plan_job *j = &p->jobs[i];
        double rel = (double)(j->release - p->now);
        double dl = j->in->has_deadline ? (double)(j->deadline - p->now) : 0;
        if (rel > last)
            last = rel;
        if (dl > last)
            last = dl;
        double tp = eb_tput(j->in->curve, j->in->curve->usable_gpus[0], j->eb);
        for (int b = 0; j->eb && b < j->in->nbatch; b++) {
            const curve_row *r = j->in->rows[b];
            double x = eb_tput(r, r->usable_gpus[0], 1);
            if (x < tp)
                tp = x;
        }
        if (share > 0 && tp > 0)
            work += j->rem / (tp * share);
    }
    return 2 * (last + work) + 64.0 * S;
}

/* After the last slot: the plan's end and promised GPU-seconds. */
static void run_end(plan *p, int64_t t)
{
    p->end = t;
    for (int i = 0; i < p->njobs; i++)
        if (p->jobs[i].decision == PLAN_ADMITTED)
            p->promised_gpu_seconds += p->jobs[i].gpu_seconds;
}

int plan_build(plan *p, const job_queue *q, const cluster *c,
               const plan_opts *o, ef_err *e)
{
    if (plan_init(p, q, c, o, e) != EF_OK)
        return EF_ERR;
    int S = o->slot, N = c->total_gpus, n = q->n;
    int64_t now = p->now;
    int *arr = ef_malloc((size_t)(n ? n : 1) * sizeof *arr);
    for (int i = 0; i < n; i++)
        arr[i] = i;
    if (current_placements(p, q, e) != EF_OK) {
        free(arr);
        plan_free(p);
        return EF_ERR;
    }
    qsort_r(arr, (size_t)n, sizeof *arr, cmp_arrival, p);

    plan_run R;
    run_init(&R, p);
    p->reserved_known = 1;
    int *act = ef_malloc((size_t)(n ? n : 1) * sizeof *act);
    int na = 0;
    /* jobs promised by an earlier decision and released by now are in
     * play from the start, admitted: the first point re-plans them (at
     * risk if they cannot make it) and never decides them again */
    int narr = 0;
    for (int k = 0; k < n; k++) {
        plan_job *j = &p->jobs[arr[k]];
        if (j->in->promised && j->release <= now) {
            j->decision = PLAN_ADMITTED;
            j->rrow = j->row = j->in->curve;
            p->admitted++;
            act[na++] = arr[k];
        } else {
            arr[narr++] = arr[k];
        }
    }
    int *resg = ef_calloc((size_t)(n ? n : 1), sizeof *resg);
    int *prevg = ef_calloc((size_t)(n ? n : 1), sizeof *prevg);
    ef_fsum_run *used = ef_malloc((size_t)(n ? n : 1) * sizeof *used);
    int ai = 0, need_point = 1, rc = EF_OK;
    int64_t t = now;
    double horizon = plan_horizon(p);
    while (ai < narr || na > 0) {
        if (p->opts.progress)
            p->opts.progress(p->opts.progress_arg, ai - na, narr);
        /* the guard: a plan that runs past its horizon, or past the
         * largest time efplan keeps, has run away (a job that makes no
         * progress) */
        p->steps++;
        double lim = horizon + (double)p->points * (PLAN_POINT_COST + 2.0 * S);
        if (t > EF_MAX_I64 || (double)(t - now) > lim) {
            int busy = 0;
            for (int i = 0; i < na; i++)
                busy += p->jobs[act[i]].g > 0;
            rc = ef_fail(e, EF_E_INTERNAL, "the plan ran away: at t=%lld, "
                         "%.3g s from its start (expected at most %.3g s for "
                         "%d job%s, and times up to 1e15), %d job%s active, %d "
                         "running, %d not yet released (a job that makes no "
                         "progress: overheads as long as the slot?)",
                         (long long)t, (double)(t - now),
                         lim < 1e15 ? lim : 1e15, n, n == 1 ? "" : "s", na,
                         na == 1 ? "" : "s", busy, narr - ai);
            break;
        }
        if (na == 0 && p->jobs[arr[ai]].decide > t) {
            int64_t nt = p->jobs[arr[ai]].decide;
            record(p, &R.cap, act, 0, t, nt - t);
            t = nt;
            need_point = 1;
        }
        if (ai < narr && p->jobs[arr[ai]].decide <= t)
            need_point = 1;
        for (int i = 0; i < na && !need_point; i++) {
            plan_job *j = &p->jobs[act[i]];
            if (j->decision == PLAN_ADMITTED && resv_at(&j->r, t) != resg[i])
                need_point = 1;
        }
        if (need_point) {
            int a0 = ai;
            while (ai < narr && p->jobs[arr[ai]].decide <= t)
                ai++;
            /* the GPUs of each job the point can change: the active ones
             * and those it decides (a loop over every job of the queue
             * here made a plan quadratic in jobs) */
            for (int i = 0; i < na; i++)
                prevg[act[i]] = p->jobs[act[i]].g;
            for (int r = a0; r < ai; r++)
                prevg[arr[r]] = p->jobs[arr[r]].g;
            plan_set_point_index(p, (t - now) / S);
            plan_point(p, t, act, &na, arr + a0, ai - a0);
            int changed = 0;
            for (int i = 0; i < na; i++) {
                plan_job *j = &p->jobs[act[i]];
                resg[i] = j->decision == PLAN_ADMITTED ? resv_at(&j->r, t) : 0;
                if (j->g != prevg[act[i]] || (j->g && j->pl.g != j->g) ||
                    (j->g && j->row != j->hrow)) /* a rebatch costs too */
                    changed = 1;
            }
            ef_err pe;
            if (changed && place_act(p, &R, act, na, &pe) != EF_OK)
                ef_panic("%s with %d jobs on %d GPUs", pe.msg, na, N);
            need_point = p->held_back;
        }
        /* a stretch where stepping slot by slot changes nothing but the
         * sums: run it at once (the same bits; at most up to the guard) */
        int64_t K = o->every_slot || need_point ? 0
                    : ff_len(p, act, na, t,
                             ai < narr ? p->jobs[arr[ai]].decide : INT64_MAX,
                             (EF_MAX_I64 - t) / S + 1);
        if (K > 0) {
            ff_run(p, &R, act, na, t, K, used);
            t += K * S;
            continue;
        }
        need_point |= run_slot(p, &R, act, &na, resg, t);
        t += S;
    }
    free(used);
    if (rc != EF_OK) {
        run_free(&R);
        free(arr);
        free(act);
        free(resg);
        free(prevg);
        plan_free(p);
        return EF_ERR;
    }
    run_end(p, t);
    /* horizon: keep slots that start before now + horizon */
    if (o->horizon > 0) {
        int64_t hend = now + o->horizon;
        int k = 0;             /* the first slot that starts at hend or later */
        while (k < p->nslots && p->slots[k].start < hend)
            k++;
        free_slots(p, k);
        if (k > 0 && p->slots[k - 1].end > hend)
            p->slots[k - 1].end = hend;
        for (int i = 0; i < n; i++) {
            resv *rs = &p->jobs[i].reserved;
            while (rs->n > 0 && rs->s[rs->n - 1].start >= hend)
                rs->n--;
            if (rs->n > 0 && rs->s[rs->n - 1].end > hend)
                rs->s[rs->n - 1].end = hend;
        }
    }
    run_free(&R);
    free(arr);
    free(act);
    free(resg);
    free(prevg);
    p->withhold = NULL;
    p->order = NULL;
    p->decide_at = NULL;
    p->hint = NULL;
    return EF_OK;
}

int plan_from_sizes(plan *p, const job_queue *q, const cluster *c,
                    const plan_opts *o, const plan_decision *dec,
                    const char *why, const int *size, int T, ef_err *e)
{
    if (plan_init(p, q, c, o, e) != EF_OK)
        return EF_ERR;
    int n = q->n, S = o->slot;
    for (int j = 0; j < n; j++) {
        plan_job *pj = &p->jobs[j];
        pj->decision = dec[j];
        if (dec[j] == PLAN_ADMITTED)
            p->admitted++;
        else if (dec[j] == PLAN_BEST_EFFORT)
            p->best_effort++;
        else {
            pj->decision = PLAN_REJECTED;
            snprintf(pj->reason, sizeof pj->reason, "%s", why ? why : "");
            p->rejected++;
        }
    }
    int last = -1;
    for (int j = 0; j < n; j++)
        for (int t = 0; t < T; t++)
            if (size[(size_t)j * T + t] && t > last)
                last = t;
    plan_run R;
    run_init(&R, p);
    int *act = ef_malloc((size_t)(n ? n : 1) * sizeof *act);
    int rc = EF_OK, fin = 0;
    for (int t = 0; t <= last; t++) {
        int64_t st = p->now + (int64_t)t * S;
        int na = 0, changed = t == 0 || fin; /* a finished job left */
        for (int j = 0; j < n; j++) {
            plan_job *pj = &p->jobs[j];
            if (pj->done)
                continue;
            pj->g = size[(size_t)j * T + t];
            changed |= pj->g != pj->pl.g;
            act[na++] = j;
        }
        if (changed) {
            if (place_act(p, &R, act, na, e) != EF_OK) {
                rc = ef_prefix(e, "slot %d: the sizes cannot be placed: ", t);
                break;
            }
            p->points++;
        }
        fin = run_slot(p, &R, act, &na, NULL, st);
    }
    run_end(p, p->now + (int64_t)(last + 1) * S);
    run_free(&R);
    free(act);
    if (rc != EF_OK)
        plan_free(p);
    return rc;
}

int plan_alone(const job_queue *q, int i, const cluster *c,
               const plan_opts *o, resv *out, int64_t *fastest, ef_err *e)
{
    plan p;
    resv_clear(out);
    *fastest = -1;
    if (plan_init(&p, q, c, o, e) != EF_OK)
        return -1;
    ef_assert(i >= 0 && i < p.njobs);
    plan_job *j = &p.jobs[i];
    int64_t t = j->release;
    avail empty;              /* the cluster with nothing promised */
    avail_init(&empty, t, c->total_gpus);
    const curve_row *row = NULL;
    int lv[CURVE_MAX_LEVELS], g0;
    int runs = j->eb ? eb_min_config(j->in, 1, c->total_gpus, &g0) != NULL
                     : curve_usable(j->in->curve, c->total_gpus, lv, NULL) > 0;
    if (runs) {
        *fastest = plan_fastest(&p, j, t, &empty, NULL, NULL, &row);
        if (j->in->has_deadline)
            row = plan_mss(&p, j, t, &empty, NULL, out);
        else
            row = NULL;
    }
    avail_free(&empty);
    plan_free(&p);
    return row != NULL;
}
