/*
 * test_live.c: the service's planning state (service/live.h). Jobs that
 * arrive one at a time at the same point (submissions of one slot, with
 * readers settling the state between them) end in the state that one
 * point with all of them released gives: the same decisions,
 * reservations, GPUs, placements, owed seconds, and the same completions
 * afterwards, over seeded random queues and clusters.
 * A rejected submission's earliest deadline (opts.earliest_point, which
 * the state sets): the same job submitted again with it, the state
 * unchanged, is admitted, and with one second less it is refused, for
 * every rejection of seeded random bursts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "model/cluster.h"
#include "model/jobs.h"
#include "planner/plan.h"
#include "service/live.h"
#include "testplan.h"

/* Job k of a random queue: its release falls on one of a few points. */
static void rand_job(job *j, int k)
{
    const curve_model *m =
        &g_curves.models[tp_rnd() % (uint32_t)g_curves.nmodels];
    const curve_row *r = &m->rows[tp_rnd() % (uint32_t)m->nrows];
    char id[16];
    memset(j, 0, sizeof *j);
    snprintf(id, sizeof id, "j%03d", k);
    j->id = strdup(id);
    j->model = strdup(m->name);
    j->batch = r->batch;
    j->curve = r;
    double secs1 = 200 + tp_rnd() % 6000; /* run time on one GPU */
    j->iterations = (int64_t)(secs1 * r->usable_tput[0]) + 1;
    j->submit = (int64_t)(tp_rnd() % 4) * 600 + 1 + tp_rnd() % 59;
    if (tp_rnd() % 8 == 0) {
        j->has_deadline = 0;
    } else {
        j->has_deadline = 1;
        double f = 0.3 + (tp_rnd() % 1000) / 1000.0 * 1.2;
        j->deadline = j->submit + 60 + (int64_t)(secs1 * f);
    }
}

static int cmp_submit(const void *a, const void *b)
{
    const job *x = a, *y = b;
    if (x->submit != y->submit)
        return x->submit < y->submit ? -1 : 1;
    return strcmp(x->id, y->id);
}

typedef struct ends {
    char id[64][16];
    int64_t end[64];
    int n;
} ends;

static void on_done(void *arg, const job *j, int64_t end)
{
    ends *d = arg;
    assert_true(d->n < 64);
    snprintf(d->id[d->n], sizeof d->id[d->n], "%s", j->id);
    d->end[d->n++] = end;
}

/* The two states hold the same jobs in the same state. */
static void same_state(live *a, live *b, uint64_t seed)
{
    live_settle(a);
    live_settle(b);
    assert_int_equal(a->na, b->na);
    for (int k = 0; k < a->na; k++) {
        const plan_job *x = &a->p.jobs[a->act[k]];
        int bi = live_find(b, x->in->id);
        assert_true(bi >= 0);
        const plan_job *y = &b->p.jobs[bi];
        if (x->decision != y->decision || x->g != y->g ||
            x->owed != y->owed || x->rem != y->rem || x->r.n != y->r.n ||
            x->pl.g != y->pl.g || x->at_risk != y->at_risk)
            fail_msg("seed %llu, job %s at %lld: decision %d/%d gpus %d/%d "
                     "owed %g/%g rem %g/%g segments %d/%d placed %d/%d",
                     (unsigned long long)seed, x->in->id, (long long)a->t,
                     x->decision, y->decision, x->g, y->g, x->owed, y->owed,
                     x->rem, y->rem, x->r.n, y->r.n, x->pl.g, y->pl.g);
        for (int s = 0; s < x->r.n; s++) {
            assert_int_equal(x->r.s[s].start, y->r.s[s].start);
            assert_int_equal(x->r.s[s].end, y->r.s[s].end);
            assert_int_equal(x->r.s[s].gpus, y->r.s[s].gpus);
        }
        for (int g = 0; g < x->pl.g; g++)
            assert_int_equal(x->pl.gpu[g], y->pl.gpu[g]);
    }
}

static void check_seed(uint64_t seed)
{
    tp_seed(seed * 7919 + 3);
    int n = 4 + (int)(tp_rnd() % 24);
    job *jobs = calloc((size_t)n, sizeof *jobs);
    for (int k = 0; k < n; k++)
        rand_job(&jobs[k], k);
    qsort(jobs, (size_t)n, sizeof *jobs, cmp_submit);
    cluster c;
    int nodes = 1 + (int)(tp_rnd() % 3), gpn = 2 << (tp_rnd() % 3);
    assert_int_equal(cluster_init(&c, 1, nodes, gpn, "t", NULL), EF_OK);
    plan_opts o;
    plan_opts_default(&o);
    o.overhead = seed % 3 == 0 ? OVH_NONE : OVH_FIG12;
    o.moves = seed % 2 ? MOVES_ANY : MOVES_NET;
    live a, b;
    ef_err e;
    assert_int_equal(live_start(&a, &c, &o, 0, &e), EF_OK);
    assert_int_equal(live_start(&b, &c, &o, 0, &e), EF_OK);
    ends da = {0}, db = {0};
    int *rel = calloc((size_t)n, sizeof *rel);
    for (int k = 0; k < n;) {
        int64_t R = ef_align_up(0, jobs[k].submit, 60);
        live_advance(&a, R, on_done, &da);
        live_advance(&b, R, on_done, &db);
        int nrel = 0;
        for (; k < n && ef_align_up(0, jobs[k].submit, 60) == R; k++) {
            job ja, jb;
            job_copy(&ja, &jobs[k]);
            job_copy(&jb, &jobs[k]);
            int ia = live_add(&a, &ja, 0);
            live_point(&a, &ia, 1);
            if (tp_rnd() % 2) /* a reader between two submissions */
                live_settle(&a);
            rel[nrel++] = live_add(&b, &jb, 0);
        }
        live_point(&b, rel, nrel);
        same_state(&a, &b, seed);
    }
    live_advance(&a, 400000, on_done, &da);
    live_advance(&b, 400000, on_done, &db);
    assert_int_equal(da.n, db.n);
    for (int k = 0; k < da.n; k++) {
        assert_string_equal(da.id[k], db.id[k]);
        assert_int_equal(da.end[k], db.end[k]);
    }
    live_free(&a);
    live_free(&b);
    for (int k = 0; k < n; k++)
        job_free(&jobs[k]);
    free(jobs);
    free(rel);
}

static void test_arrivals_one_point(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 200; seed++)
        check_seed(seed);
}


/* A burst: n jobs submitted in the first slot on cluster c with options
 * o; the state after jobs[0..upto] are submitted one at a time, then
 * (if 'again' is not NULL) 'again' submitted too; returns the decision
 * of the last one submitted and its earliest deadline in *earliest. */
static plan_decision submit_burst(const cluster *c, const plan_opts *o,
                                  const job *jobs, int upto,
                                  const job *again, int64_t *earliest)
{
    live L;
    ef_err e;
    assert_int_equal(live_start(&L, c, o, 0, &e), EF_OK);
    live_advance(&L, 60, NULL, NULL);
    plan_decision d = PLAN_PENDING;
    for (int k = 0; k <= upto + (again != NULL); k++) {
        job jb;
        job_copy(&jb, k <= upto ? &jobs[k] : again);
        int i = live_add(&L, &jb, 0);
        live_point(&L, &i, 1);
        d = L.p.jobs[i].decision;
        *earliest = L.p.jobs[i].earliest_feasible_deadline;
        if (k % 3 == 1) /* a reader between two submissions */
            live_settle(&L);
    }
    live_free(&L);
    return d;
}

static int check_earliest_seed(uint64_t seed)
{
    tp_seed(seed * 104729 + 11);
    int n = 6 + (int)(tp_rnd() % 20);
    job *jobs = calloc((size_t)n, sizeof *jobs);
    for (int k = 0; k < n; k++) {
        rand_job(&jobs[k], k);
        jobs[k].submit = 1 + (int64_t)(tp_rnd() % 59); /* one slot */
        if (jobs[k].has_deadline)
            jobs[k].deadline += 60;
    }
    qsort(jobs, (size_t)n, sizeof *jobs, cmp_submit);
    cluster c;
    int nodes = 1 + (int)(tp_rnd() % 3), gpn = 2 << (tp_rnd() % 3);
    assert_int_equal(cluster_init(&c, 1, nodes, gpn, "t", NULL), EF_OK);
    plan_opts o;
    plan_opts_default(&o);
    o.overhead = seed % 3 == 0 ? OVH_NONE
                 : seed % 3 == 1 ? OVH_FIG12 : OVH_RESTART;
    o.moves = seed % 2 ? MOVES_ANY : MOVES_NET;
    o.deadline_margin = seed % 5 == 0 ? 120 : 0;
    int rejections = 0;
    for (int k = 0; k < n; k++) {
        int64_t E, x;
        if (submit_burst(&c, &o, jobs, k, NULL, &E) != PLAN_REJECTED ||
            E < 0)
            continue;
        rejections++;
        job again;
        job_copy(&again, &jobs[k]);
        free(again.id);
        again.id = strdup("again");
        again.deadline = E;
        plan_decision d = submit_burst(&c, &o, jobs, k, &again, &x);
        if (d != PLAN_ADMITTED)
            fail_msg("seed %llu, job %s: earliest deadline %lld refused",
                     (unsigned long long)seed, jobs[k].id, (long long)E);
        again.deadline = E - 1;
        int tie = 0; /* E - 1 an earlier job's deadline (plan.c) */
        for (int i = 0; i < k; i++)
            tie |= jobs[i].has_deadline && jobs[i].deadline == E - 1;
        if (E - 1 > jobs[k].deadline && !tie &&
            submit_burst(&c, &o, jobs, k, &again, &x) == PLAN_ADMITTED)
            fail_msg("seed %llu, job %s: earliest deadline %lld, but %lld "
                     "is admitted", (unsigned long long)seed, jobs[k].id,
                     (long long)E, (long long)(E - 1));
        job_free(&again);
    }
    for (int k = 0; k < n; k++)
        job_free(&jobs[k]);
    free(jobs);
    return rejections;
}

static void test_earliest_resubmitted(void **state)
{
    (void)state;
    int rejections = 0;
    for (uint64_t seed = 1; seed <= 120; seed++)
        rejections += check_earliest_seed(seed);
    print_message("%d rejections, each admitted again at its earliest "
                  "deadline\n", rejections);
    assert_true(rejections >= 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrivals_one_point),
        cmocka_unit_test(test_earliest_resubmitted),
    };
    return cmocka_run_group_tests_name("live", tests, tp_setup, tp_teardown);
}
