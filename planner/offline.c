/* offline.c: offline admission by a local search over withheld jobs
 * (see offline.h). */
#define _GNU_SOURCE 1 /* qsort_r */
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
 * admits it). Elastic-batch jobs are never called hopeless here. It reads
 * only what every trial plan of one search gives job r alike (release,
 * work left, deadline, curve, cluster, slot), so off_plan caches it per
 * job across its trials. */
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
                 const double *ord, const int64_t *dec, ef_err *e)
{
    plan_opts po = *o;
    po.withhold = wh;
    po.order = ord;
    po.decide_at = dec;
    return plan_build(p, q, c, &po, e);
}

/* 1 if plan t is better than the incumbent (admitted 'ba', cost 'bc'):
 * more jobs admitted, or as many for less. */
static int better(const plan *t, double tcost, int ba, double bc)
{
    return t->admitted > ba ||
           (t->admitted == ba && tcost < bc * (1 - 1e-9));
}

/* Order keys from a sequence: key[seq[k]] = k. */
static void seq_keys(const int *seq, int n, double *key)
{
    for (int k = 0; k < n; k++)
        key[seq[k]] = k;
}

/* seq[0..n-1] with the job at place k moved to place 'to', into out. */
static void seq_move(const int *seq, int n, int k, int to, int *out)
{
    int x = seq[k], m = 0;
    for (int i = 0; i < n; i++) {
        if (i == k)
            continue;
        if (m == to)
            out[m++] = x;
        out[m++] = seq[i];
    }
    if (m == to)
        out[m++] = x;
}

/* Deadline order of a plan's jobs (no deadline last), then release,
 * then queue index. */
static int cmp_deadline(const void *a, const void *b, void *ctx)
{
    const plan *p = ctx;
    int i = *(const int *)a, j = *(const int *)b;
    const plan_job *x = &p->jobs[i], *y = &p->jobs[j];
    if (x->deadline != y->deadline)
        return x->deadline < y->deadline ? -1 : 1;
    if (x->release != y->release)
        return x->release < y->release ? -1 : 1;
    return (i > j) - (i < j);
}

/* Latest release first, then deadline order. */
static int cmp_late_release(const void *a, const void *b, void *ctx)
{
    const plan *p = ctx;
    const plan_job *x = &p->jobs[*(const int *)a];
    const plan_job *y = &p->jobs[*(const int *)b];
    if (x->release != y->release)
        return x->release > y->release ? -1 : 1;
    return cmp_deadline(a, b, ctx);
}

/* Shortest window (deadline - release) first, then deadline order. */
static int cmp_window(const void *a, const void *b, void *ctx)
{
    const plan *p = ctx;
    const plan_job *x = &p->jobs[*(const int *)a];
    const plan_job *y = &p->jobs[*(const int *)b];
    int64_t u = x->deadline - x->release, v = y->deadline - y->release;
    if (u != v)
        return u < v ? -1 : 1;
    return cmp_deadline(a, b, ctx);
}

/* The orders phase 2 starts from. */
#define OFF_SEEDS 3
static int (*const off_seed[OFF_SEEDS])(const void *, const void *, void *) = {
    cmp_deadline, cmp_late_release, cmp_window};

/* 1 if job x of plan p is a rejected deadline job that the order search
 * may move: not withheld, not promised, not under way, not hopeless. */
static int movable(const plan *p, int x, const unsigned char *wh,
                   signed char *hl)
{
    const plan_job *b = &p->jobs[x];
    if (b->decision != PLAN_REJECTED || !b->in->has_deadline || wh[x] ||
        b->in->promised || b->in->iterations_done > 0 ||
        b->in->samples_done > 0)
        return 0;
    if (hl[x] < 0)
        hl[x] = (signed char)hopeless(p, x);
    return !hl[x];
}

/* The statistics of a search that has tried nothing: the exact step not
 * run (ilp_offline says otherwise). */
static void stats_init(off_stats *s)
{
    memset(s, 0, sizeof *s);
    s->exact = s->exact_status = s->exact_admitted = -1;
    s->exact_skip = OFF_SKIP_OFF;
    s->exact_binaries = -1;
    s->exact_bound = -1;
}

/* An incumbent: the best plan found so far and its cost. */
typedef struct off_inc {
    plan p;      /* the plan, owned while 'have' */
    double cost; /* plan_cost of p */
    int have;    /* 1: p holds a plan (to free) */
} off_inc;

/* Plan 't' (owned; cost 'tc') replaces incumbent 'inc', whose plan is
 * freed, when inc holds none or t is better (more admitted, or as many
 * for less); otherwise t is freed. Returns 1 if t replaced inc. */
static int keep(off_inc *inc, plan *t, double tc)
{
    if (inc->have && !better(t, tc, inc->p.admitted, inc->cost)) {
        plan_free(t);
        return 0;
    }
    if (inc->have)
        plan_free(&inc->p);
    inc->p = *t;
    inc->cost = tc;
    inc->have = 1;
    return 1;
}

/* off_plan's search. Every array holds n + 1 entries (one past the last
 * job: n may be 0). */
typedef struct off_search {
    const job_queue *q;  /* the queue (resolved) */
    const cluster *c;    /* the cluster */
    const plan_opts *o;  /* the planner options (nothing withheld, no
                            order) */
    int n;               /* q->n */
    int max_plans;       /* the budget of plan_build calls */
    ef_err *e;           /* where a failure is said */
    off_stats s;         /* what the search did */
    off_inc best;        /* the incumbent */
    off_inc cur;         /* phase 2's incumbent */
    const double *ord;   /* the incumbent's order within a point: okey,
                            or NULL (submit order) */
    unsigned char *wh;   /* the incumbent's withheld jobs */
    unsigned char *tw;   /* a move's withheld jobs (phase 2: none) */
    cand *cd;            /* a round's moves: give back, then withhold */
    int ncd;             /* moves in cd */
    int giveback;        /* cd[0 .. giveback) give a job back, the rest
                            withhold one */
    double *cost;        /* job_cost per job (cost[n] = 0) */
    signed char *hl;     /* hopeless() per job, cached (-1 unknown) */
    int64_t *dec;        /* the incumbent's decide_at (INT64_MAX: at
                            release) */
    int64_t *tdec;       /* phase 2's decide_at: the plan's start */
    double *okey;        /* the incumbent's order keys (ord) */
    double *tkey;        /* a phase 2 trial's order keys */
    int *seq;            /* phase 2's incumbent order: jobs, the first
                            decided first */
    int *tseq;           /* a phase 2 trial's order */
} off_search;

/* The search 'x' of queue q on cluster c with options o and a budget of
 * max_plans builds, before its first plan: nothing withheld, every job
 * decided at its release, no incumbent. Free with search_free. */
static void search_init(off_search *x, const job_queue *q, const cluster *c,
                        const plan_opts *o, int max_plans, ef_err *e)
{
    memset(x, 0, sizeof *x);
    x->q = q;
    x->c = c;
    x->o = o;
    x->n = q->n;
    x->max_plans = max_plans;
    x->e = e;
    stats_init(&x->s);
    size_t m = (size_t)x->n + 1; /* entries of an array */
    x->wh = ef_calloc(m, 1);
    x->tw = ef_calloc(m, 1);
    x->cd = ef_malloc(m * sizeof *x->cd);
    x->cost = ef_malloc(m * sizeof *x->cost);
    x->hl = ef_malloc(m);
    x->dec = ef_malloc(m * sizeof *x->dec);
    x->tdec = ef_malloc(m * sizeof *x->tdec);
    x->okey = ef_calloc(m, sizeof *x->okey);
    x->tkey = ef_malloc(m * sizeof *x->tkey);
    x->seq = ef_malloc(m * sizeof *x->seq);
    x->tseq = ef_malloc(m * sizeof *x->tseq);
    for (int i = 0; i <= x->n; i++)
        x->dec[i] = INT64_MAX; /* at its release */
    memset(x->hl, -1, m);
    for (int i = 0; i < x->n; i++)
        x->cost[i] = job_cost(&q->jobs[i], c->total_gpus);
    x->cost[x->n] = 0;
}

/* Free what search 'x' holds: its arrays and the plans it still owns. */
static void search_free(off_search *x)
{
    if (x->best.have)
        plan_free(&x->best.p);
    if (x->cur.have)
        plan_free(&x->cur.p);
    free(x->wh);
    free(x->tw);
    free(x->cd);
    free(x->cost);
    free(x->hl);
    free(x->dec);
    free(x->tdec);
    free(x->okey);
    free(x->tkey);
    free(x->seq);
    free(x->tseq);
}

/* One trial: the plan with 'wh' withheld, jobs of one point decided in
 * 'ord' order (NULL: submit order) and decided at 'dec' (NULL: at
 * release), counted in s.plans; it replaces incumbent 'inc' as keep()
 * says, and *won says whether it did. EF_OK, or EF_ERR on a build error
 * (x->e set, inc untouched). */
static int try_plan(off_search *x, off_inc *inc, const unsigned char *wh,
                    const double *ord, const int64_t *dec, int *won)
{
    plan t; /* the trial */
    if (build(&t, x->q, x->c, x->o, wh, ord, dec, x->e) != EF_OK)
        return EF_ERR;
    x->s.plans++;
    *won = keep(inc, &t, plan_cost(&t, x->cost));
    return EF_OK;
}

/* The start: the online plan (nothing withheld, submit order) is the
 * first incumbent; then, budget allowing, the plan that decides the jobs
 * of a point (a burst) cheapest first replaces it when better, and that
 * order (okey) is kept. EF_OK or EF_ERR (a build error). */
static int start(off_search *x)
{
    int won; /* the trial became the incumbent */
    if (try_plan(x, &x->best, x->wh, NULL, NULL, &won) != EF_OK)
        return EF_ERR;
    x->s.online_admitted = x->best.p.admitted;
    if (x->max_plans <= 1)
        return EF_OK;
    if (try_plan(x, &x->best, x->wh, x->cost, NULL, &won) != EF_OK)
        return EF_ERR;
    if (won) {
        memcpy(x->okey, x->cost, ((size_t)x->n + 1) * sizeof *x->okey);
        x->ord = x->okey;
        x->s.moves++;
    }
    return EF_OK;
}

/* A round's moves into x->cd: every withheld job (give back, by queue
 * index), then every job the incumbent may withhold (blocks()), the
 * costliest first (ties by queue index). */
static void round_moves(off_search *x)
{
    int m = 0; /* moves so far */
    for (int i = 0; i < x->n; i++)
        if (x->wh[i]) {
            x->cd[m].job = i;
            x->cd[m++].gpu_seconds = 0;
        }
    x->giveback = m;
    for (int i = 0; i < x->n; i++)
        if (blocks(&x->best.p, i, x->hl)) {
            x->cd[m].job = i;
            x->cd[m++].gpu_seconds = x->cost[i];
        }
    x->ncd = m;
    qsort(x->cd + x->giveback, (size_t)(m - x->giveback), sizeof *x->cd,
          cmp_cand);
}

/* Phase 1's trial of the withheld set x->tw: when better it becomes the
 * incumbent's set (a move taken). *won as try_plan's. */
static int try_withheld(off_search *x, int *won)
{
    if (try_plan(x, &x->best, x->tw, x->ord, x->dec, won) != EF_OK)
        return EF_ERR;
    if (*won) {
        memcpy(x->wh, x->tw, (size_t)x->n);
        x->s.moves++;
    }
    return EF_OK;
}

/* The round's single moves, in order, until one is better (*improved 1)
 * or the budget is spent. EF_OK or EF_ERR. */
static int withhold_round(off_search *x, int *improved)
{
    *improved = 0;
    for (int k = 0; k < x->ncd && x->s.plans < x->max_plans; k++) {
        memcpy(x->tw, x->wh, (size_t)x->n);
        x->tw[x->cd[k].job] = k >= x->giveback;
        if (try_withheld(x, improved) != EF_OK)
            return EF_ERR;
        if (*improved)
            break;
    }
    return EF_OK;
}

/* When no single move helped: pairs of the first OFF_PAIR_CANDS withhold
 * moves (a burst decided in submit order may need two jobs out before
 * the right pair fits), until one is better (*improved 1) or the budget
 * is spent. EF_OK or EF_ERR. */
static int withhold_pairs(off_search *x, int *improved)
{
    const cand *w = x->cd + x->giveback; /* the withhold moves */
    int top = x->ncd - x->giveback < OFF_PAIR_CANDS ? x->ncd - x->giveback
                                                     : OFF_PAIR_CANDS;
    *improved = 0;
    for (int a = 0; !*improved && a < top; a++)
        for (int b = a + 1;
             !*improved && b < top && x->s.plans < x->max_plans; b++) {
            memcpy(x->tw, x->wh, (size_t)x->n);
            x->tw[w[a].job] = 1;
            x->tw[w[b].job] = 1;
            if (try_withheld(x, improved) != EF_OK)
                return EF_ERR;
        }
    return EF_OK;
}

/* Phase 1: rounds of moves over the withheld set, until a round finds
 * none better or the budget is spent. EF_OK or EF_ERR. */
static int withhold_search(off_search *x)
{
    int improved = 1; /* the last round took a move */
    while (improved && x->s.plans < x->max_plans) {
        round_moves(x);
        if (withhold_round(x, &improved) != EF_OK)
            return EF_ERR;
        if (!improved && withhold_pairs(x, &improved) != EF_OK)
            return EF_ERR;
    }
    return EF_OK;
}

/* Phase 2's trial of the order x->tseq (every job decided at the start,
 * nothing withheld): when better than phase 2's incumbent it becomes
 * x->seq. *won as try_plan's. */
static int try_order(off_search *x, int *won)
{
    seq_keys(x->tseq, x->n, x->tkey);
    if (try_plan(x, &x->cur, x->tw, x->tkey, x->tdec, won) != EF_OK)
        return EF_ERR;
    if (*won)
        memcpy(x->seq, x->tseq, (size_t)x->n * sizeof *x->seq);
    return EF_OK;
}

/* Phase 2's first incumbent: the best of the OFF_SEEDS seed orders (the
 * first always tried, the others as the budget allows), each sorted
 * with the incumbent plan's jobs. EF_OK or EF_ERR. */
static int order_seeds(off_search *x)
{
    for (int sd = 0;
         sd < OFF_SEEDS && (sd == 0 || x->s.plans < x->max_plans); sd++) {
        for (int i = 0; i < x->n; i++)
            x->tseq[i] = i;
        qsort_r(x->tseq, (size_t)x->n, sizeof *x->tseq, off_seed[sd],
                &x->best.p);
        int won; /* it became phase 2's incumbent (the first always) */
        if (try_order(x, &won) != EF_OK)
            return EF_ERR;
    }
    return EF_OK;
}

/* 1 if the job at some place of phase 2's order may move in pass 'pass':
 * 0, a rejected job the search may admit (movable()); 1, an admitted
 * deadline job not promised. */
static int may_move(off_search *x, int pass, int j)
{
    const plan_job *cj = &x->cur.p.jobs[j];
    if (pass == 0)
        return movable(&x->cur.p, j, x->tw, x->hl);
    return cj->decision == PLAN_ADMITTED && cj->in->has_deadline &&
           !cj->in->promised;
}

/* One pass of phase 2's moves: pass 0, a rejected job to an earlier
 * place (the first first); pass 1, an admitted one to a later place (the
 * last first); until one is better (*more 1) or the budget is spent.
 * EF_OK or EF_ERR. */
static int order_pass(off_search *x, int pass, int *more)
{
    int n = x->n;
    for (int k = 0; k < n && !*more && x->s.plans < x->max_plans; k++) {
        if (!may_move(x, pass, x->seq[k]))
            continue;
        int lo = pass == 0 ? 0 : k + 1, hi = pass == 0 ? k : n; /* places */
        for (int u = lo; u < hi && !*more && x->s.plans < x->max_plans;
             u++) {
            int to = pass == 0 ? u : n - 1 - (u - lo); /* the new place */
            seq_move(x->seq, n, k, to, x->tseq);
            if (try_order(x, more) != EF_OK)
                return EF_ERR;
        }
    }
    return EF_OK;
}

/* Phase 2's moves: passes until none is better or the budget is spent.
 * EF_OK or EF_ERR. */
static int order_moves(off_search *x)
{
    int more = 1; /* the last pass took a move */
    while (more && x->s.plans < x->max_plans) {
        more = 0;
        for (int pass = 0; pass < 2 && !more; pass++)
            if (order_pass(x, pass, &more) != EF_OK)
                return EF_ERR;
    }
    return EF_OK;
}

/* Phase 2, when the budget allows and the incumbent rejects a job that
 * could be admitted: every job decided at the plan's start (each
 * reservation still from its release), nothing withheld, in an order
 * searched from the seeds; its result replaces the incumbent when
 * better. EF_OK or EF_ERR. */
static int order_search(off_search *x)
{
    int n = x->n;
    memset(x->tw, 0, (size_t)n + 1); /* nothing withheld: the order decides */
    int gain = 0; /* a rejected job that could be admitted */
    for (int i = 0; i < n && !gain; i++)
        gain = x->best.p.jobs[i].decision == PLAN_REJECTED &&
               movable(&x->best.p, i, x->tw, x->hl);
    if (x->s.plans >= x->max_plans || n <= 1 || !gain)
        return EF_OK;
    for (int i = 0; i < n; i++) {
        x->seq[i] = i;
        x->tdec[i] = x->best.p.now;
    }
    x->tdec[n] = x->best.p.now;
    memset(x->tkey, 0, ((size_t)n + 1) * sizeof *x->tkey);
    if (order_seeds(x) != EF_OK || order_moves(x) != EF_OK)
        return EF_ERR;
    int won = keep(&x->best, &x->cur.p, x->cur.cost); /* phase 2 better */
    x->cur.have = 0; /* its plan is the incumbent's now, or freed */
    if (won) {
        memcpy(x->dec, x->tdec, ((size_t)n + 1) * sizeof *x->dec);
        memcpy(x->wh, x->tw, (size_t)n + 1);
        seq_keys(x->seq, n, x->okey);
        x->ord = x->okey;
        x->s.moves++;
        x->s.early = 1;
    }
    return EF_OK;
}

/* The end: the last statistics, the incumbent checked (plan_check) and
 * handed over into 'p'. EF_OK, or EF_ERR with the incumbent still held. */
static int finish(off_search *x, plan *p)
{
    x->s.budget_hit = x->s.plans >= x->max_plans;
    for (int i = 0; i < x->n; i++)
        x->s.withheld += x->wh[i];
    if (plan_check(&x->best.p, x->e) != EF_OK)
        return ef_prefix(x->e,
                         "the offline admission's plan failed its check: ");
    *p = x->best.p;
    x->best.have = 0;
    return EF_OK;
}

int off_plan(plan *p, const job_queue *q, const cluster *c,
             const plan_opts *o, int max_plans, off_stats *st, ef_err *e)
{
    memset(p, 0, sizeof *p);
    ef_assert(o->withhold == NULL && o->order == NULL && max_plans >= 1);
    off_search x; /* the search's state */
    search_init(&x, q, c, o, max_plans, e);
    int ok = start(&x) == EF_OK && withhold_search(&x) == EF_OK &&
             order_search(&x) == EF_OK && finish(&x, p) == EF_OK;
    if (st)
        *st = x.s;
    search_free(&x);
    return ok ? EF_OK : EF_ERR;
}

int off_better(const plan *t, const plan *inc)
{
    double tc = 0, ic = 0; /* the admitted jobs' costs of t, of inc */
    for (int j = 0; j < t->njobs; j++)
        if (t->jobs[j].decision == PLAN_ADMITTED)
            tc += job_cost(t->jobs[j].in, t->cl.total_gpus);
    for (int j = 0; j < inc->njobs; j++)
        if (inc->jobs[j].decision == PLAN_ADMITTED)
            ic += job_cost(inc->jobs[j].in, inc->cl.total_gpus);
    return better(t, tc, inc->admitted, ic);
}

int off_open(const plan *p)
{
    int open = 0; /* rejected deadline jobs that could finish alone */
    for (int j = 0; j < p->njobs; j++)
        if (p->jobs[j].decision == PLAN_REJECTED &&
            p->jobs[j].in->has_deadline && !hopeless(p, j))
            open++;
    return open;
}

/* What cmp_guided orders by: the LP's value, then the job's cost. */
typedef struct guide_ord {
    const double *prio;
    const double *cost;
    const job_queue *q;
} guide_ord;

/* Highest priority first, then the cheapest, then deadline, then queue
 * index. */
static int cmp_guided(const void *a, const void *b, void *ctx)
{
    const guide_ord *g = ctx;
    int i = *(const int *)a, j = *(const int *)b;
    if (g->prio[i] != g->prio[j])
        return g->prio[i] > g->prio[j] ? -1 : 1;
    if (g->cost[i] != g->cost[j])
        return g->cost[i] < g->cost[j] ? -1 : 1;
    const job *u = &g->q->jobs[i], *v = &g->q->jobs[j];
    int64_t du = u->has_deadline ? u->deadline : INT64_MAX;
    int64_t dv = v->has_deadline ? v->deadline : INT64_MAX;
    if (du != dv)
        return du < dv ? -1 : 1;
    return (i > j) - (i < j);
}

/* 1 if job i may be withheld by the guided seed: a deadline job neither
 * promised nor under way. */
static int guide_free(const job *j)
{
    return j->has_deadline && !j->promised && j->iterations_done <= 0 &&
           j->samples_done <= 0;
}

/* The guided search's incumbent: its plan, cost and how it was built. */
typedef struct guide_inc {
    off_inc inc;          /* the plan and its cost */
    int early;            /* decided at the start, in 'key' order */
    unsigned char *wh;    /* withheld */
} guide_inc;

/* Build one guided try (withheld 'tw'; decided at the start in 'key'
 * order when 'early', else at release in 'key' order within a point)
 * and keep it in 'b' when better. Returns EF_OK or EF_ERR. */
static int guide_try(guide_inc *b, const job_queue *q, const cluster *c,
                     const plan_opts *o, const unsigned char *tw,
                     const double *key, const int64_t *dec, int early,
                     const double *cost, off_stats *s, ef_err *e)
{
    plan t;
    if (build(&t, q, c, o, tw, key, early ? dec : NULL, e) != EF_OK)
        return EF_ERR;
    s->plans++;
    if (!keep(&b->inc, &t, plan_cost(&t, cost)))
        return EF_OK;
    b->early = early;
    memcpy(b->wh, tw, (size_t)q->n + 1);
    s->moves++;
    return EF_OK;
}

int off_guided(plan *p, const job_queue *q, const cluster *c,
               const plan_opts *o, const double *prio, int max_plans,
               off_stats *st, ef_err *e)
{
    off_stats s; /* what the search did */
    stats_init(&s);
    memset(p, 0, sizeof *p);
    ef_assert(o->withhold == NULL && o->order == NULL && max_plans >= 1);
    int n = q->n, rc = EF_ERR;
    double *cost = ef_malloc(((size_t)n + 1) * sizeof *cost);
    double *key = ef_calloc((size_t)n + 1, sizeof *key);
    int64_t *dec = ef_malloc(((size_t)n + 1) * sizeof *dec);
    int *seq = ef_malloc(((size_t)n + 1) * sizeof *seq);
    unsigned char *tw = ef_calloc((size_t)n + 1, 1);
    guide_inc b;
    memset(&b, 0, sizeof b);
    b.wh = ef_calloc((size_t)n + 1, 1);
    for (int i = 0; i < n; i++) {
        cost[i] = job_cost(&q->jobs[i], c->total_gpus);
        seq[i] = i;
        dec[i] = INT64_MIN; /* the plan's start */
    }
    cost[n] = 0;
    dec[n] = INT64_MIN;
    guide_ord g = {prio, cost, q};
    qsort_r(seq, (size_t)n, sizeof *seq, cmp_guided, &g);
    seq_keys(seq, n, key);
    key[n] = n;
    /* seeds: the LP's jobs (a >= 1/2) alone, decided at release and at
     * the start in the LP's order; then every job at the start in that
     * order (the LP's jobs first) */
    for (int i = 0; i < n; i++)
        tw[i] = guide_free(&q->jobs[i]) && prio[i] < 0.5;
    for (int sd = 0; sd < 3 && s.plans < max_plans; sd++) {
        if (sd == 2)
            memset(tw, 0, (size_t)n + 1);
        if (guide_try(&b, q, c, o, tw, key, dec, sd > 0, cost, &s, e) !=
            EF_OK)
            goto out;
    }
    /* give back: each withheld job in the LP's order, kept when the plan
     * admits more (or as many, cheaper); rounds until none helps */
    int improved = 1;
    while (improved && s.plans < max_plans) {
        improved = 0;
        for (int k = 0; k < n && s.plans < max_plans; k++) {
            int j = seq[k];
            if (!b.wh[j])
                continue;
            memcpy(tw, b.wh, (size_t)n + 1);
            tw[j] = 0;
            int moves = s.moves;
            if (guide_try(&b, q, c, o, tw, key, dec, b.early, cost, &s,
                          e) != EF_OK)
                goto out;
            improved |= s.moves > moves;
        }
    }
    s.budget_hit = s.plans >= max_plans;
    s.early = b.early;
    s.online_admitted = -1;
    for (int i = 0; i < n; i++)
        s.withheld += b.wh[i];
    if (plan_check(&b.inc.p, e) != EF_OK) {
        ef_prefix(e, "the LP-guided admission's plan failed its check: ");
        goto out;
    }
    *p = b.inc.p;
    b.inc.have = 0;
    rc = EF_OK;
out:
    if (b.inc.have)
        plan_free(&b.inc.p);
    if (st)
        *st = s;
    free(b.wh);
    free(cost);
    free(key);
    free(dec);
    free(seq);
    free(tw);
    return rc;
}
