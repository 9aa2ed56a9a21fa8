/* live.c: the service's planning state (see live.h). */
#include "service/live.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "model/curve.h"
#include "model/overhead.h"
#include "planner/engine.h"
#include "planner/mss.h"

int live_start(live *L, const cluster *c, const plan_opts *po, int64_t t,
               ef_err *e)
{
    memset(L, 0, sizeof *L);
    L->q.path = ef_strdup("the service's queue");
    L->q.is_json = 1;
    plan_opts o = *po;
    o.now = t;
    /* a rejection's earliest deadline: the point's own (plan.h), what a
     * submission of the job with it is decided by here */
    o.earliest_point = 1;
    if (plan_init(&L->p, &L->q, c, &o, e) != EF_OK) {
        queue_free(&L->q);
        return EF_ERR;
    }
    L->t = t;
    L->act = ef_malloc(sizeof *L->act); /* grown by live_add */
    eng_init(&L->x, c, 16);
    L->x.least = plan_holds_still(&o);
    return EF_OK;
}

/* Forget what the jobs held before the point (the point is over). */
static void stash_drop(live *L)
{
    for (int k = 0; k < L->nstash; k++)
        place_set_free(&L->stash_pl[k]);
    free(L->stash_job);
    free(L->stash_pl);
    free(L->stash_owed);
    L->stash_job = NULL;
    L->stash_pl = NULL;
    L->stash_owed = NULL;
    L->nstash = 0;
    L->stashed = 0;
}

static void pl_copy(place_set *d, const place_set *s)
{
    d->g = s->g;
    d->gpu = NULL;
    if (s->g > 0) {
        d->gpu = ef_malloc((size_t)s->g * sizeof *d->gpu);
        memcpy(d->gpu, s->gpu, (size_t)s->g * sizeof *d->gpu);
    }
}

/* Keep what the jobs in play hold before the point is settled. */
static void stash_keep(live *L)
{
    const plan *p = &L->p;
    int n = L->na;
    L->stash_job = ef_malloc(((size_t)n + 1) * sizeof *L->stash_job);
    L->stash_pl = ef_malloc(((size_t)n + 1) * sizeof *L->stash_pl);
    L->stash_owed = ef_malloc(((size_t)n + 1) * sizeof *L->stash_owed);
    for (int k = 0; k < n; k++) {
        const plan_job *j = &p->jobs[L->act[k]];
        L->stash_job[k] = L->act[k];
        pl_copy(&L->stash_pl[k], &j->pl);
        L->stash_owed[k] = j->owed;
    }
    L->nstash = n;
    L->stashed = 1;
}

/* Back to what the jobs in play held before the point: the kept
 * placements and owed seconds; a job that arrived since holds nothing. */
static void stash_restore(live *L)
{
    plan *p = &L->p;
    int *at = ef_malloc(((size_t)L->q.n + 1) * sizeof *at);
    for (int i = 0; i < L->q.n; i++)
        at[i] = -1;
    for (int k = 0; k < L->nstash; k++)
        at[L->stash_job[k]] = k;
    for (int k = 0; k < L->na; k++) {
        int i = L->act[k];
        plan_job *j = &p->jobs[i];
        place_set_free(&j->pl);
        if (at[i] >= 0) {
            pl_copy(&j->pl, &L->stash_pl[at[i]]);
            plan_set_owed(p, i, L->stash_owed[at[i]]);
        } else {
            plan_set_owed(p, i, (double)j->in->owed);
        }
    }
    free(at);
}

void live_free(live *L)
{
    stash_drop(L);
    eng_free(&L->x);
    plan_free(&L->p);
    queue_free(&L->q);
    free(L->act);
    free(L->gone);
    memset(L, 0, sizeof *L);
}

int live_find(const live *L, const char *id)
{
    for (int i = 0; i < L->q.n; i++)
        if (!L->gone[i] && strcmp(L->q.jobs[i].id, id) == 0)
            return i;
    return -1;
}


/* Drop the entries that left: the queue, the plan and the active list
 * renumbered alike. */
static void compact(live *L)
{
    int n = L->q.n, m = 0;
    int *from = ef_malloc(((size_t)n + 1) * sizeof *from);
    int *to = ef_malloc(((size_t)n + 1) * sizeof *to);
    for (int i = 0; i < n; i++) {
        to[i] = -1;
        if (L->gone[i]) {
            job_free(&L->q.jobs[i]);
            continue;
        }
        from[m] = i;
        to[i] = m;
        if (m != i)
            L->q.jobs[m] = L->q.jobs[i];
        L->q.jobs[m].index = m;
        m++;
    }
    L->q.n = m;
    plan_keep_jobs(&L->p, &L->q, from);
    for (int k = 0; k < L->na; k++)
        L->act[k] = to[L->act[k]];
    int ks = 0;
    for (int k = 0; k < L->nstash; k++) {
        if (to[L->stash_job[k]] < 0) {
            place_set_free(&L->stash_pl[k]);
            continue;
        }
        L->stash_job[ks] = to[L->stash_job[k]];
        L->stash_pl[ks] = L->stash_pl[k];
        L->stash_owed[ks] = L->stash_owed[k];
        ks++;
    }
    L->nstash = ks;
    memset(L->gone, 0, (size_t)L->qcap);
    L->ngone = 0;
    free(from);
    free(to);
}

/* Job i leaves (its GPUs too). */
static void leave(live *L, int i)
{
    plan_retire(&L->p, i);
    place_set_free(&L->p.jobs[i].pl);
    L->gone[i] = 1;
    L->ngone++;
}

void live_remove(live *L, int i)
{
    if (i < 0 || i >= L->q.n || L->gone[i])
        return;
    int keep = 0;
    for (int k = 0; k < L->na; k++)
        if (L->act[k] != i)
            L->act[keep++] = L->act[k];
    L->na = keep;
    leave(L, i);
    L->due = 1;
    if (L->ngone > 64 && L->ngone > L->q.n - L->ngone)
        compact(L);
}

int live_add(live *L, job *jb, int promised)
{
    int n = L->q.n;
    if (n + 1 > L->qcap) {
        int cap = L->qcap ? 2 * L->qcap : 64;
        L->q.jobs = ef_realloc(L->q.jobs, (size_t)cap * sizeof *L->q.jobs);
        L->gone = ef_realloc(L->gone, (size_t)cap);
        memset(L->gone + L->qcap, 0, (size_t)(cap - L->qcap));
        L->act = ef_realloc(L->act, (size_t)cap * sizeof *L->act);
        L->qcap = L->acap = cap;
    }
    L->q.jobs[n] = *jb;
    memset(jb, 0, sizeof *jb);
    job *nj = &L->q.jobs[n];
    nj->index = n;
    L->q.n = n + 1;
    L->gone[n] = 0;
    plan_add_job(&L->p, &L->q);
    if (promised) {
        plan_adopt(&L->p, n);
        L->act[L->na++] = n;
        L->due = 1;
    }
    return n;
}

/* The throughput job j runs at on its GPUs. */
static double tput(const plan_job *j)
{
    return j->g > 0 ? curve_tput(j->in->curve, j->g) : 0;
}

/* Place the point's allocations through the slot engine, as plan_build
 * and the simulator do (each job keeps its GPUs where it can; under the
 * stability rule, as few move as can), and charge each job what its
 * change costs (a start, a resize, a migration). */
static void place_point(live *L)
{
    plan *p = &L->p;
    if (L->na > L->x.cap) {
        eng_free(&L->x);
        eng_init(&L->x, &p->cl, 2 * L->na);
        L->x.least = plan_holds_still(&p->opts);
    }
    eng_alloc *al = ef_calloc((size_t)L->na + 1, sizeof *al);
    int *g0 = ef_malloc(((size_t)L->na + 1) * sizeof *g0);
    for (int k = 0; k < L->na; k++) {
        plan_job *j = &p->jobs[L->act[k]];
        g0[k] = j->pl.g;
        al[k] = (eng_alloc){j->in->id, j->g, NULL, 0, &j->pl, ENG_KEEP,
                            j->tight || j->at_risk};
    }
    ef_err e;
    if (eng_place(&L->x, al, L->na, &e) != EF_OK)
        ef_panic("the planning state's placement: %s", e.msg);
    for (int k = 0; k < L->na; k++) {
        const plan_job *j = &p->jobs[L->act[k]];
        if (al[k].change == ENG_KEEP || al[k].change == ENG_STOP)
            continue;
        /* what the change costs this job: the model's charge times what
         * its restarts were measured to cost against it (the promise
         * check charges the same: plan_set_restart_scale) */
        double c = ovh_charge(p->opts.overhead, j->in->model, g0[k], j->g,
                              al[k].change == ENG_MIGRATE, 0) *
                   (j->oscale > 0 ? j->oscale : 1.0);
        if (c > 0)
            plan_set_owed(p, L->act[k], c);
    }
    free(al);
    free(g0);
}

/* Settle the point at L->t (live_settle); keep: what the jobs held
 * before is kept for a later settlement at the same point. */
static void settle(live *L, int keep)
{
    if (!L->unsettled)
        return;
    if (L->stashed)
        stash_restore(L);
    else if (keep && L->open)
        stash_keep(L);
    plan_point_end(&L->p, L->t, L->act, L->na);
    place_point(L);
    L->unsettled = 0;
}

void live_settle(live *L)
{
    settle(L, 1);
}

void live_point(live *L, const int *rel, int nrel)
{
    plan *p = &L->p;
    if (nrel == 0 || !L->open || L->due ||
        !plan_point_more(p, L->t, L->act, &L->na, rel, nrel)) {
        /* a new point: what the jobs hold now is where it starts */
        stash_drop(L);
        plan_set_point_index(p, L->points);
        plan_point_begin(p, L->t, L->act, &L->na, rel, nrel);
        L->points++;
        L->due = 0;
        L->open = 1;
    }
    L->unsettled = 1;
    /* arrivals not in play (rejected) leave */
    for (int r = 0; r < nrel; r++) {
        plan_decision d = p->jobs[rel[r]].decision;
        if (d != PLAN_ADMITTED && d != PLAN_BEST_EFFORT)
            leave(L, rel[r]);
    }
}

/* The next time after L->t at which the state needs a point, at most
 * 'to': a reservation change, or the slot boundary after a completion. */
static int64_t next_point(const live *L, int64_t to)
{
    const plan *p = &L->p;
    int64_t S = p->opts.slot, nx = to;
    for (int k = 0; k < L->na; k++) {
        const plan_job *j = &p->jobs[L->act[k]];
        if (j->decision == PLAN_ADMITTED) {
            int64_t c = resv_next_change(&j->r, L->t);
            if (c < nx)
                nx = c;
        }
        double tp = tput(j);
        if (tp > 0) {
            double fin = j->owed + j->rem / tp;
            double slots = ceil(fin / (double)S);
            if (slots < 1)
                slots = 1;
            if ((double)L->t + slots * (double)S < (double)nx)
                nx = L->t + (int64_t)slots * S;
        }
    }
    if (nx <= L->t)
        nx = L->t + S;
    return nx < to ? ef_align_up(L->p.now, nx, (int)S) : to;
}

void live_advance(live *L, int64_t to, live_done_fn fn, void *arg)
{
    plan *p = &L->p;
    while (L->t < to) {
        if (L->due)
            live_point(L, NULL, 0);
        settle(L, 0);
        int64_t nx = next_point(L, to);
        double dt = (double)(nx - L->t);
        int keep = 0, fin = 0;
        for (int k = 0; k < L->na; k++) {
            int i = L->act[k];
            const plan_job *j = &p->jobs[i];
            double tp = tput(j);
            if (tp > 0) {
                double rem = j->rem, owed = j->owed, ov, used;
                int done = eng_advance(&rem, &owed, tp, dt, &ov, &used);
                if (done && L->reality) {
                    /* reality says when it is done (the closed loop):
                     * it waits at its last iteration, still in play */
                    plan_set_remaining(p, i, 1.0);
                    plan_set_owed(p, i, 0);
                    L->act[keep++] = i;
                    continue;
                }
                if (done) {
                    if (fn)
                        fn(arg, j->in, L->t + (int64_t)ceil(ov + used));
                    leave(L, i);
                    fin = 1;
                    continue;
                }
                plan_set_remaining(p, i, rem);
                plan_set_owed(p, i, owed);
            }
            L->act[keep++] = i;
        }
        L->na = keep;
        L->t = nx;
        L->open = 0; /* time moved: the next arrival begins a point */
        stash_drop(L);
        /* a change of a reservation, or a completion, asks for a point */
        L->due = fin;
        for (int k = 0; k < L->na && !L->due; k++) {
            const plan_job *j = &p->jobs[L->act[k]];
            L->due = j->decision == PLAN_ADMITTED &&
                     resv_next_change(&j->r, L->t - 1) == L->t;
        }
    }
    if (L->ngone > 64 && L->ngone > L->q.n - L->ngone)
        compact(L);
}

void live_queue(const live *L, job_queue *q, int **adm)
{
    ef_assert(!L->unsettled);
    memset(q, 0, sizeof *q);
    q->path = ef_strdup("the service's queue");
    q->is_json = 1;
    q->jobs = ef_calloc((size_t)L->na + 1, sizeof *q->jobs);
    if (adm)
        *adm = ef_calloc((size_t)L->na + 1, sizeof **adm);
    const plan *p = &L->p;
    for (int k = 0; k < L->na; k++) {
        const plan_job *j = &p->jobs[L->act[k]];
        job *d = &q->jobs[q->n];
        job_copy(d, j->in);
        d->index = q->n;
        double left = ceil(j->rem);
        if (left < 1)
            left = 1;
        int64_t done = d->iterations - (int64_t)left;
        d->iterations_done = done > 0 ? done : 0;
        d->samples_done = 0;
        d->in_samples = 0;
        d->promised = j->decision == PLAN_ADMITTED;
        d->owed = (int64_t)ceil(j->owed);
        placement_free(&d->cur);
        if (adm)
            (*adm)[q->n] = d->promised;
        q->n++;
    }
}
