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
int off_plan(plan *p, const job_queue *q, const cluster *c,
             const plan_opts *o, int max_plans, off_stats *st, ef_err *e)
{
    off_stats s;
    memset(&s, 0, sizeof s);
    s.exact = s.exact_status = s.exact_admitted = -1;
    s.exact_skip = OFF_SKIP_OFF; /* ilp_offline says otherwise */
    s.exact_binaries = -1;
    s.exact_bound = -1;
    memset(p, 0, sizeof *p);
    ef_assert(o->withhold == NULL && o->order == NULL && max_plans >= 1);
    int n = q->n;
    unsigned char *wh = ef_calloc((size_t)n + 1, 1);  /* incumbent's set */
    unsigned char *tw = ef_calloc((size_t)n + 1, 1);  /* a move's set */
    cand *cd = ef_malloc(((size_t)n + 1) * sizeof *cd); /* moves to try */
    double *cost = ef_malloc(((size_t)n + 1) * sizeof *cost); /* job_cost */
    signed char *hl = ef_malloc((size_t)n + 1); /* hopeless(), cached */
    int64_t *dec = ef_malloc(((size_t)n + 1) * sizeof *dec); /* decide_at */
    int64_t *tdec = ef_malloc(((size_t)n + 1) * sizeof *tdec);
    double *okey = ef_calloc((size_t)n + 1, sizeof *okey); /* order keys */
    double *tkey = ef_malloc(((size_t)n + 1) * sizeof *tkey);
    int *seq = ef_malloc(((size_t)n + 1) * sizeof *seq); /* phase 2 */
    int *tseq = ef_malloc(((size_t)n + 1) * sizeof *tseq);
    for (int i = 0; i <= n; i++)
        dec[i] = INT64_MAX; /* at its release */
    memset(hl, -1, (size_t)n + 1);
    for (int i = 0; i < n; i++)
        cost[i] = job_cost(&q->jobs[i], c->total_gpus);
    cost[n] = 0;
    plan best, trial;                                  /* incumbent, move */
    int rc = EF_ERR;
    const double *ord = NULL; /* the incumbent's order within a point */
    if (build(&best, q, c, o, wh, NULL, NULL, e) != EF_OK)
        goto out;
    s.plans = 1;
    s.online_admitted = best.admitted;
    double bcost = plan_cost(&best, cost); /* the incumbent's */
    /* the cheapest first within a point (a burst), if that is better */
    if (max_plans > 1) {
        if (build(&trial, q, c, o, wh, cost, NULL, e) != EF_OK) {
            plan_free(&best);
            goto out;
        }
        s.plans++;
        double tcost = plan_cost(&trial, cost);
        if (better(&trial, tcost, best.admitted, bcost)) {
            plan_free(&best);
            best = trial;
            bcost = tcost;
            memcpy(okey, cost, ((size_t)n + 1) * sizeof *okey);
            ord = okey;
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
            if (build(&trial, q, c, o, tw, ord, dec, e) != EF_OK) {
                plan_free(&best);
                goto out;
            }
            s.plans++;
            double tcost = plan_cost(&trial, cost);
            if (better(&trial, tcost, best.admitted, bcost)) {
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
                if (build(&trial, q, c, o, tw, ord, dec, e) != EF_OK) {
                    plan_free(&best);
                    goto out;
                }
                s.plans++;
                double tcost = plan_cost(&trial, cost);
                if (better(&trial, tcost, best.admitted, bcost)) {
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
    /* phase 2: every job decided at the plan's start (each reservation
     * still from its release), in an order searched from deadline order:
     * a rejected job moved earlier in the order, to each place from the
     * first on; a move is kept when it beats this phase's incumbent; the
     * phase's result replaces the incumbent if better */
    memset(tw, 0, (size_t)n + 1);
    int gain = 0; /* a rejected job that could be admitted */
    for (int i = 0; i < n && !gain; i++)
        gain = best.jobs[i].decision == PLAN_REJECTED &&
               movable(&best, i, tw, hl);
    if (s.plans < max_plans && n > 1 && gain) {
        for (int i = 0; i < n; i++) {
            seq[i] = i;
            tdec[i] = best.now;
        }
        tdec[n] = best.now;
        memset(tkey, 0, ((size_t)n + 1) * sizeof *tkey);
        memset(tw, 0, (size_t)n + 1); /* nothing withheld: the order decides */
        plan cur;
        double ccost = 0;
        for (int sd = 0; sd < OFF_SEEDS && (sd == 0 || s.plans < max_plans);
             sd++) {
            for (int i = 0; i < n; i++)
                tseq[i] = i;
            qsort_r(tseq, (size_t)n, sizeof *tseq, off_seed[sd], &best);
            seq_keys(tseq, n, tkey);
            if (build(&trial, q, c, o, tw, tkey, tdec, e) != EF_OK) {
                if (sd > 0)
                    plan_free(&cur);
                plan_free(&best);
                goto out;
            }
            s.plans++;
            double tcost = plan_cost(&trial, cost);
            if (sd == 0 || better(&trial, tcost, cur.admitted, ccost)) {
                if (sd > 0)
                    plan_free(&cur);
                cur = trial;
                ccost = tcost;
                memcpy(seq, tseq, (size_t)n * sizeof *seq);
            } else {
                plan_free(&trial);
            }
        }
        /* moves: a rejected job to an earlier place (the first first),
         * then an admitted one to a later place (the last first) */
        int more = 1;
        while (more && s.plans < max_plans) {
            more = 0;
            for (int pass = 0; pass < 2 && !more; pass++)
                for (int k = 0; k < n && !more && s.plans < max_plans; k++) {
                    int x = seq[k];
                    const plan_job *cj = &cur.jobs[x];
                    if (pass == 0 ? !movable(&cur, x, tw, hl)
                                  : cj->decision != PLAN_ADMITTED ||
                                        !cj->in->has_deadline ||
                                        cj->in->promised)
                        continue;
                    int lo = pass == 0 ? 0 : k + 1, hi = pass == 0 ? k : n;
                    for (int u = lo; u < hi && !more && s.plans < max_plans;
                         u++) {
                        int to = pass == 0 ? u : n - 1 - (u - lo);
                        seq_move(seq, n, k, to, tseq);
                        seq_keys(tseq, n, tkey);
                        if (build(&trial, q, c, o, tw, tkey, tdec, e) !=
                            EF_OK) {
                            plan_free(&cur);
                            plan_free(&best);
                            goto out;
                        }
                        s.plans++;
                        double tcost = plan_cost(&trial, cost);
                        if (better(&trial, tcost, cur.admitted, ccost)) {
                            plan_free(&cur);
                            cur = trial;
                            ccost = tcost;
                            memcpy(seq, tseq, (size_t)n * sizeof *seq);
                            more = 1;
                        } else {
                            plan_free(&trial);
                        }
                    }
                }
        }
        if (better(&cur, ccost, best.admitted, bcost)) {
            plan_free(&best);
            best = cur;
            bcost = ccost;
            memcpy(dec, tdec, ((size_t)n + 1) * sizeof *dec);
            memcpy(wh, tw, (size_t)n + 1);
            seq_keys(seq, n, okey);
            ord = okey;
            s.moves++;
            s.early = 1;
        } else {
            plan_free(&cur);
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
    free(dec);
    free(tdec);
    free(okey);
    free(tkey);
    free(seq);
    free(tseq);
    return rc;
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
    plan p;
    double cost;
    int have;
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
    double tc = plan_cost(&t, cost);
    if (b->have && !better(&t, tc, b->p.admitted, b->cost)) {
        plan_free(&t);
        return EF_OK;
    }
    if (b->have)
        plan_free(&b->p);
    b->p = t;
    b->cost = tc;
    b->have = 1;
    b->early = early;
    memcpy(b->wh, tw, (size_t)q->n + 1);
    s->moves++;
    return EF_OK;
}

int off_guided(plan *p, const job_queue *q, const cluster *c,
               const plan_opts *o, const double *prio, int max_plans,
               off_stats *st, ef_err *e)
{
    off_stats s;
    memset(&s, 0, sizeof s);
    s.exact = s.exact_status = s.exact_admitted = -1;
    s.exact_skip = OFF_SKIP_OFF;
    s.exact_binaries = -1;
    s.exact_bound = -1;
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
    if (plan_check(&b.p, e) != EF_OK) {
        ef_prefix(e, "the LP-guided admission's plan failed its check: ");
        goto out;
    }
    *p = b.p;
    b.have = 0;
    rc = EF_OK;
out:
    if (b.have)
        plan_free(&b.p);
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
