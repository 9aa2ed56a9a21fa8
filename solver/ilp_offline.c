/* ilp_offline.c: the offline admission with an exact step (see ilp.h). */
#define _GNU_SOURCE 1 /* qsort_r */
#include "solver/ilp.h"

#include <stdlib.h>
#include <string.h>

/* Hints from the solution: job j's slots as a reservation, equal
 * neighbours merged; nothing for a job the solution leaves out. */
static void hints_of(const ilp_result *r, const job_queue *q, resv *h)
{
    int T = r->nslots;
    for (int j = 0; j < q->n; j++) {
        if (!r->admit[j])
            continue;
        for (int t = 0; t < T; t++) {
            int g = r->size[(size_t)j * (size_t)T + (size_t)t];
            int64_t a = r->now + (int64_t)t * r->slot;
            resv_push(&h[j], a, a + r->slot, g);
        }
        if (h[j].n > 0) {
            h[j].end = h[j].s[h[j].n - 1].end;
            h[j].real_end = h[j].end;
        }
    }
}

/* What cmp_exact compares by. */
typedef struct exact_ord {
    const ilp_result *r;
    const job_queue *q;
} exact_ord;

/* The order of the decisions: the solution's jobs first, then the
 * others; each group by deadline, then queue index. */
static int cmp_exact(const void *a, const void *b, void *ctx)
{
    const exact_ord *x = ctx;
    int i = *(const int *)a, j = *(const int *)b;
    if (x->r->admit[i] != x->r->admit[j])
        return x->r->admit[i] ? -1 : 1;
    const job *u = &x->q->jobs[i], *v = &x->q->jobs[j];
    int64_t du = u->has_deadline ? u->deadline : INT64_MAX;
    int64_t dv = v->has_deadline ? v->deadline : INT64_MAX;
    if (du != dv)
        return du < dv ? -1 : 1;
    return (i > j) - (i < j);
}

/* ilp_hint_plan (ilp.h): every job decided at r's start, r's admitted
 * jobs first, each offered its slots in 'r' as its reservation. */
int ilp_hint_plan(plan *t, const ilp_result *r, const job_queue *q,
                  const cluster *c, const plan_opts *o, ef_err *e)
{
    int n = q->n;
    resv *h = ef_calloc((size_t)n + 1, sizeof *h);           /* hints */
    int64_t *dec = ef_malloc(((size_t)n + 1) * sizeof *dec); /* decide at */
    double *key = ef_malloc(((size_t)n + 1) * sizeof *key);  /* order keys */
    int *seq = ef_malloc(((size_t)n + 1) * sizeof *seq);     /* that order */
    hints_of(r, q, h);
    for (int j = 0; j < n; j++) {
        dec[j] = r->now;
        seq[j] = j;
    }
    exact_ord xo = {r, q};
    qsort_r(seq, (size_t)n, sizeof *seq, cmp_exact, &xo);
    for (int k = 0; k < n; k++)
        key[seq[k]] = k;
    dec[n] = r->now;
    key[n] = n;
    plan_opts po = *o; /* the search's options, with the hints */
    po.decide_at = dec;
    po.order = key;
    po.hint = h;
    int rc = plan_build(t, q, c, &po, e);
    for (int j = 0; j < n; j++)
        resv_free(&h[j]);
    free(h);
    free(dec);
    free(key);
    free(seq);
    return rc;
}

int ilp_offline(plan *p, const job_queue *q, const cluster *c,
                const plan_opts *o, int max_plans, long max_binaries,
                long node_limit, off_stats *st, ef_err *e)
{
    off_stats s; /* the search's statistics, then the exact step's */
    if (off_plan(p, q, c, o, max_plans, &s, e) != EF_OK) {
        if (st)
            *st = s;
        return EF_ERR;
    }
    int n = q->n;
    ilp_opts io; /* the model on the plan's grid */
    ilp_opts_default(&io);
    io.slot = o->slot;
    io.now = p->now;
    io.node_limit = node_limit;
    io.time_limit = 0;
    io.warm = p;
    int *must = ef_calloc((size_t)n + 1, sizeof *must); /* promised jobs */
    for (int j = 0; j < n; j++)
        must[j] = q->jobs[j].promised && q->jobs[j].has_deadline;
    io.must = must;
    int rc = EF_OK;
    ilp_result r; /* the exact solution */
    memset(&r, 0, sizeof r);
    s.exact_skip = OFF_SKIP_NONE;
    if (max_binaries <= 0 || o->no_admission || o->admission_reference)
        s.exact_skip = OFF_SKIP_OFF;
    else if (off_open(p) == 0)
        s.exact_skip = OFF_SKIP_NOTHING;
    else if ((s.exact_binaries = ilp_binaries(q, c, &io)) < 0)
        s.exact_skip = OFF_SKIP_MODEL;
    else if (s.exact_binaries > max_binaries)
        s.exact_skip = OFF_SKIP_SIZE;
    if (s.exact_skip != OFF_SKIP_NONE)
        goto out;
    /* the relaxed bound first (milliseconds at this size): when the
     * search's plan meets it, no schedule admits more */
    ilp_relaxed rx; /* the bound */
    ilp_opts ro = io; /* its options: every pass, no clock */
    ro.warm = NULL;
    if ((rc = ilp_relax(q, c, &ro, &rx, e)) != EF_OK)
        goto out;
    s.exact = 0;
    s.exact_bound = rx.status == ILP_OPTIMAL ? rx.bound : -1;
    if (s.exact_bound >= 0 && s.exact_bound <= p->admitted)
        goto out;
    if ((rc = ilp_solve(q, c, &io, &r, e)) != EF_OK)
        goto out;
    s.exact_status = (int)r.status;
    s.exact_admitted = r.admit ? r.admitted : -1;
    if (!r.admit || r.admitted <= p->admitted)
        goto out;
    plan t; /* the exact step's plan */
    if ((rc = ilp_hint_plan(&t, &r, q, c, o, e)) != EF_OK)
        goto out;
    if (!off_better(&t, p)) {
        plan_free(&t);
        goto out;
    }
    if ((rc = plan_check(&t, e)) != EF_OK) {
        ef_prefix(e, "its plan failed its check: ");
        plan_free(&t);
        goto out;
    }
    plan_free(p);
    *p = t;
    s.exact = 1;
    s.withheld = 0; /* the ILP chose the set */
out:
    if (rc != EF_OK) {
        ef_prefix(e, "the offline admission's exact step: ");
        plan_free(p);
    }
    ilp_result_free(&r);
    free(must);
    if (st)
        *st = s;
    return rc;
}

void ilp_offline_text(const off_stats *s, char *buf, size_t n)
{
    if (s->exact == 1)
        snprintf(buf, n, "exact step: the ILP's %d jobs (%s), its schedule "
                 "as their reservations", s->exact_admitted,
                 ilp_status_name((ilp_status)s->exact_status));
    else if (s->exact == 0 && s->exact_status < 0)
        snprintf(buf, n, "exact step: not needed (no plan admits more than "
                 "%d, the relaxed bound)", s->exact_bound);
    else if (s->exact == 0 && s->exact_admitted >= 0)
        snprintf(buf, n, "exact step: the ILP admits %d (%s), no better plan",
                 s->exact_admitted,
                 ilp_status_name((ilp_status)s->exact_status));
    else if (s->exact == 0)
        snprintf(buf, n, "exact step: the ILP found no solution (%s)",
                 ilp_status_name((ilp_status)s->exact_status));
    else if (s->exact_skip == OFF_SKIP_SIZE)
        snprintf(buf, n, "exact step: not run (its model has %ld binaries, "
                 "more than --offline-exact)", s->exact_binaries);
    else if (s->exact_skip == OFF_SKIP_NOTHING)
        snprintf(buf, n, "exact step: not needed (every job rejected is one "
                 "that cannot finish by its deadline even alone)");
    else if (s->exact_skip == OFF_SKIP_MODEL)
        snprintf(buf, n, "exact step: not run (the ILP cannot model this "
                 "queue on this slot grid)");
    else
        snprintf(buf, n, "exact step: off");
}
