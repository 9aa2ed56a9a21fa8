/*
 * test_plan.c: the planner core: profile, MSS, placement, and property
 * tests over hundreds of seeded random queues (every plan passes
 * plan_check; a rejected job's earliest feasible deadline is admitted on
 * resubmission; same inputs give the same bytes; running stretches of
 * slots at once gives the bytes stepping slot by slot gives), a job at
 * the work limit in a few loop steps, a runaway stopped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "planner/avail.h"
#include "planner/mss.h"
#include "planner/place.h"
#include "planner/plan.h"
#include "testplan.h"

static const curve_row *row_of(const char *model, long batch)
{
    const curve_model *m = curve_find_model(&g_curves, model);
    assert_non_null(m);
    const curve_row *r = curve_find_row(m, batch);
    assert_non_null(r);
    return r;
}

/* ---- profile -------------------------------------------------------------- */

static void test_profile(void **state)
{
    (void)state;
    avail p;
    avail_init(&p, 0, 8);
    avail_add(&p, 60, 120, -4);
    assert_int_equal(avail_at(&p, 0), 8);
    assert_int_equal(avail_at(&p, 60), 4);
    assert_int_equal(avail_at(&p, 119), 4);
    assert_int_equal(avail_at(&p, 120), 8);
    assert_int_equal(avail_min(&p, 0, 200), 4);
    avail_add(&p, 60, 120, 4); /* give back: merges to one step */
    assert_int_equal(p.n, 1);
    avail_add(&p, 0, INT64_MAX, -2);
    assert_int_equal(avail_at(&p, 1000000), 6);
    avail_free(&p);
}

/* Random changes keep the profile what a per-time reference says (free
 * GPUs at every second of a short horizon), with no two neighbouring
 * pieces equal. */
static void test_profile_random(void **state)
{
    (void)state;
    enum { H = 64 };
    int ref[H + 1];            /* free at second x; [H] stands for x >= H */
    tp_seed(21);
    for (int it = 0; it < 300; it++) {
        avail p;
        avail_init(&p, 0, 16);
        for (int x = 0; x <= H; x++)
            ref[x] = 16;
        for (int k = 0; k < 40; k++) {
            int64_t a = tp_rnd() % H, b = a + 1 + tp_rnd() % (H - a);
            int open = tp_rnd() % 8 == 0;
            int d = (int)(tp_rnd() % 7) - 3;
            avail_add(&p, a, open ? INT64_MAX : b, d);
            for (int64_t x = a; x <= H && (open || x < b); x++)
                ref[x] += d;
            for (int x = 0; x <= H; x++)
                assert_int_equal(avail_at(&p, x), ref[x]);
            assert_int_equal(avail_at(&p, 1000000), ref[H]);
            for (int i = 1; i < p.n; i++)
                assert_true(p.free[i] != p.free[i - 1] && p.t[i] > p.t[i - 1]);
        }
        avail_free(&p);
    }
}

/* ---- MSS: the worked examples of the specification ------------------------- */

static void test_mss_examples(void **state)
{
    (void)state;
    const curve_row *r = row_of("resnet50", 128);
    avail F;
    resv rv = {0};
    avail_init(&F, 0, 8);
    /* lax deadline: one GPU suffices (2000 s of work), reserved as late
     * as possible: from the last slot boundary that still makes it */
    assert_int_equal(mss_plan(r, 8, 7310, 0, 5000, 240, &F, &rv), 1);
    assert_int_equal(rv.n, 1);
    assert_int_equal(rv.s[0].gpus, 1);
    assert_int_equal(rv.s[0].start, 2880);
    assert_int_equal(rv.real_end, 4880);
    assert_int_equal(rv.end, 5040);
    /* tighter deadline: level 2 is the share; the two-level plan runs
     * one GPU until the latest boundary from which two GPUs suffice */
    assert_int_equal(mss_plan(r, 8, 7310, 0, 1500, 240, &F, &rv), 1);
    assert_int_equal(rv.n, 2);
    assert_int_equal(rv.s[0].gpus, 1);
    assert_int_equal(rv.s[0].end, 240);
    assert_int_equal(rv.s[1].gpus, 2);
    assert_int_equal(rv.real_end, 1212);
    assert_int_equal(rv.end, 1440);
    /* impossible even at the peak: rejected, earliest finish reported */
    assert_int_equal(mss_plan(r, 8, 7310, 0, 300, 240, &F, &rv), 0);
    int64_t ef = mss_earliest_finish(r, 8, 7310, 0, 240, &F);
    assert_int_equal(ef, (int64_t)ceil(7310 * (1 + MSS_MARGIN) / 16.53414011075494));
    assert_int_equal(mss_plan(r, 8, 7310, 0, ef, 240, &F, &rv), 1);
    /* capacity promised to others: two-level plan around the hole */
    avail_add(&F, 0, 480, -8);
    assert_int_equal(mss_plan(r, 8, 7310, 0, 2000, 240, &F, &rv), 1);
    assert_true(rv.s[0].start >= 480);
    assert_true(rv.real_end <= 2000);
    resv_free(&rv);
    avail_free(&F);
}

/* ---- placement --------------------------------------------------------------- */

static void test_place_no_fragmentation(void **state)
{
    (void)state;
    srand(7);
    for (int iter = 0; iter < 300; iter++) {
        cluster c;
        int gpn = 1 << (rand() % 4), nodes = 1 + rand() % 6;
        assert_int_equal(cluster_init(&c, 1, nodes, gpn, "t", NULL), EF_OK);
        int want[64], n = 0, total = 0;
        const char *ids[64];
        char names[64][16];
        while (n < 64) {
            int g = 1 << (rand() % 5);
            if (g > gpn && g % gpn)
                continue;
            if (total + g > c.total_gpus)
                break;
            want[n] = g;
            total += g;
            snprintf(names[n], sizeof names[n], "j%02d", n);
            ids[n] = names[n];
            n++;
        }
        place_set out[64], prev[64];
        int owner[512];
        memset(prev, 0, sizeof prev);
        assert_int_equal(place_slot(&c, n, want, prev, ids, out, owner), EF_OK);
        for (int i = 0; i < n; i++)
            assert_true(place_is_buddy(&c, &out[i]));
        /* same sizes again: nobody moves */
        place_set again[64];
        assert_int_equal(place_slot(&c, n, want, out, ids, again, owner), EF_OK);
        for (int i = 0; i < n; i++) {
            assert_memory_equal(again[i].gpu, out[i].gpu, (size_t)want[i] * sizeof(int));
            place_set_free(&again[i]);
            place_set_free(&out[i]);
        }
    }
}

static void test_place_over_capacity(void **state)
{
    (void)state;
    cluster c;
    cluster_init(&c, 1, 1, 8, "t", NULL);
    int want[2] = {8, 1};
    const char *ids[2] = {"a", "b"};
    place_set out[2];
    int owner[8];
    assert_int_equal(place_slot(&c, 2, want, NULL, ids, out, owner), EF_ERR);
}

/* ---- property tests over random queues ---------------------------------------- */

static void make_queue(job_queue *q, uint64_t seed, int n)
{
    tp_seed(seed * 2654435761ULL + 1);
    memset(q, 0, sizeof *q);
    q->path = strdup("random");
    q->is_json = 1;
    q->n = n;
    q->jobs = calloc((size_t)n, sizeof *q->jobs);
    for (int i = 0; i < n; i++) {
        job *j = &q->jobs[i];
        const curve_model *m = &g_curves.models[tp_rnd() % (uint32_t)g_curves.nmodels];
        const curve_row *r = &m->rows[tp_rnd() % (uint32_t)m->nrows];
        char id[16];
        snprintf(id, sizeof id, "r%03d", i);
        j->id = strdup(id);
        j->model = strdup(m->name);
        j->batch = r->batch;
        j->curve = r;
        double secs1 = 300 + tp_rnd() % 12000; /* run time on one GPU */
        j->iterations = (int64_t)(secs1 * r->usable_tput[0]) + 1;
        j->submit = tp_rnd() % 14400;
        j->index = i;
        if (tp_rnd() % 10 == 0) {
            j->has_deadline = 0;
        } else {
            j->has_deadline = 1;
            double f = 0.2 + (tp_rnd() % 1000) / 1000.0 * 1.3;
            j->deadline = j->submit + 1 + (int64_t)(secs1 * f);
        }
    }
}

static void free_queue(job_queue *q)
{
    queue_free(q);
}

/* n jobs of make_queue(seed) made resnet50 at batch 128, each submitted
 * at 0 with a deadline (has_deadline 1; the caller sets the rest). */
static void resnet_queue(job_queue *q, uint64_t seed, int n)
{
    const curve_row *r = row_of("resnet50", 128);
    make_queue(q, seed, n);
    for (int i = 0; i < n; i++) {
        q->jobs[i].curve = r;
        free(q->jobs[i].model);
        q->jobs[i].model = strdup("resnet50");
        q->jobs[i].batch = 128;
        q->jobs[i].submit = 0;
        q->jobs[i].has_deadline = 1;
    }
}

/* Build the plan of q on c under o into p, asserting that it builds and
 * passes plan_check (printing why where not). */
static void build_checked(plan *p, const job_queue *q, const cluster *c,
                          const plan_opts *o)
{
    ef_err e;
    int rc = plan_build(p, q, c, o, &e);
    if (rc != EF_OK)
        fprintf(stderr, "plan_build: %s\n", e.msg);
    assert_int_equal(rc, EF_OK);
    rc = plan_check(p, &e);
    if (rc != EF_OK)
        fprintf(stderr, "plan_check: %s\n", e.msg);
    assert_int_equal(rc, EF_OK);
}

static void check_random(uint64_t seed, plan_surplus mode)
{
    job_queue q;
    int n = 3 + (int)(seed % 28);
    make_queue(&q, seed, n);
    cluster c;
    int nodes = 1 + (int)(seed % 4), gpn = 1 << (1 + seed % 3);
    assert_int_equal(cluster_init(&c, 1, nodes, gpn, "t", NULL), EF_OK);
    plan_opts o;
    plan_opts_default(&o);
    o.slot = seed % 2 ? 60 : 240;
    o.surplus = mode;
    plan p;
    ef_err e = {0};
    assert_int_equal(plan_build(&p, &q, &c, &o, &e), EF_OK);
    if (plan_check(&p, &e) != EF_OK)
        fail_msg("seed %llu: %s", (unsigned long long)seed, e.msg);
    assert_int_equal(p.admitted + p.rejected + p.best_effort, n);
    char *j1;
    size_t l1;
    plan_to_json(&p, "q", "A100", &j1, &l1);
    /* resubmitting a rejected job with its earliest feasible deadline is
     * admitted (check the first rejected job of each queue) */
    for (int i = 0; i < n; i++) {
        const plan_job *pj = &p.jobs[i];
        if (pj->decision != PLAN_REJECTED || pj->earliest_feasible_deadline < 0)
            continue;
        int64_t old = q.jobs[i].deadline;
        q.jobs[i].deadline = pj->earliest_feasible_deadline;
        plan p2;
        assert_int_equal(plan_build(&p2, &q, &c, &o, &e), EF_OK);
        if (p2.jobs[i].decision != PLAN_ADMITTED)
            fail_msg("seed %llu: job %s resubmitted with deadline %lld not "
                     "admitted", (unsigned long long)seed, q.jobs[i].id,
                     (long long)pj->earliest_feasible_deadline);
        assert_int_equal(plan_check(&p2, &e), EF_OK);
        plan_free(&p2);
        q.jobs[i].deadline = old;
        break;
    }
    /* same inputs, same bytes */
    plan p3;
    assert_int_equal(plan_build(&p3, &q, &c, &o, &e), EF_OK);
    char *j3;
    size_t l3;
    plan_to_json(&p3, "q", "A100", &j3, &l3);
    assert_int_equal(l1, l3);
    assert_memory_equal(j1, j3, l1);
    free(j1);
    free(j3);
    plan_free(&p3);
    plan_free(&p);
    free_queue(&q);
}

static void test_random_gain(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 300; seed++)
        check_random(seed, SURPLUS_GAIN);
}

static void test_random_reference(void **state)
{
    (void)state;
    for (uint64_t seed = 1001; seed <= 1100; seed++)
        check_random(seed, SURPLUS_REFERENCE);
}

/* ---- stretches run at once (plan_build's skip) --------------------------- */

/* Plan q with and without skipping: the same bytes, plan_check passes,
 * and skipping takes fewer loop steps. Returns the steps saved. */
static int64_t same_with_skip(const job_queue *q, const cluster *c,
                              const plan_opts *o, const char *what)
{
    plan a, b;
    plan_opts ob = *o;
    ob.every_slot = 1;
    ef_err e = {0};
    assert_int_equal(plan_build(&a, q, c, o, &e), EF_OK);
    assert_int_equal(plan_build(&b, q, c, &ob, &e), EF_OK);
    if (plan_check(&a, &e) != EF_OK)
        fail_msg("%s: %s", what, e.msg);
    char *ja, *jb;
    size_t la, lb;
    plan_to_json(&a, "q", "A100", &ja, &la);
    plan_to_json(&b, "q", "A100", &jb, &lb);
    if ((la != lb || memcmp(ja, jb, la) != 0) && getenv("TP_DUMP")) {
        FILE *f = fopen("/tmp/h16b/skip.json", "w");
        fwrite(ja, 1, la, f);
        fclose(f);
        f = fopen("/tmp/h16b/every.json", "w");
        fwrite(jb, 1, lb, f);
        fclose(f);
    }
    if (la != lb || memcmp(ja, jb, la) != 0)
        fail_msg("%s: the plan differs when stretches are run at once",
                 what);
    for (int i = 0; i < a.njobs; i++) {
        assert_memory_equal(&a.jobs[i].overhead_seconds,
                            &b.jobs[i].overhead_seconds, sizeof(double));
        assert_memory_equal(&a.jobs[i].gpu_seconds, &b.jobs[i].gpu_seconds,
                            sizeof(double));
    }
    assert_memory_equal(&a.used_gpu_seconds, &b.used_gpu_seconds,
                        sizeof(double));
    assert_true(a.steps <= b.steps);
    int64_t saved = b.steps - a.steps;
    free(ja);
    free(jb);
    plan_free(&a);
    plan_free(&b);
    return saved;
}

/* Seeded random queues, some jobs 100 times longer, under every overhead
 * model and slots of 60, 240, 7 and 3 s: running stretches at once gives
 * the plan stepping slot by slot gives, byte for byte. */
static void test_skip_same_bytes(void **state)
{
    (void)state;
    static const ovh_mode modes[] = {OVH_FIG12, OVH_REFERENCE, OVH_RESTART,
                                     OVH_NONE};
    static const int slots[] = {60, 240, 7, 3};
    int64_t saved = 0;
    for (uint64_t seed = 1; seed <= 160; seed++) {
        job_queue q;
        int n = 2 + (int)(seed % 9);
        make_queue(&q, seed + 7000, n);
        int S = slots[seed % 4];
        for (int i = 0; i < n; i++)
            if (tp_rnd() % 3 == 0) {
                int64_t f = S < 60 ? 10 : 100;
                q.jobs[i].iterations *= f;
                if (q.jobs[i].has_deadline)
                    q.jobs[i].deadline = q.jobs[i].submit +
                        (q.jobs[i].deadline - q.jobs[i].submit) * f;
            }
        cluster c;
        int nodes = 1 + (int)(seed % 2), gpn = 1 << (1 + seed % 3);
        assert_int_equal(cluster_init(&c, 1, nodes, gpn, "t", NULL), EF_OK);
        for (int m = 0; m < 4; m++) {
            plan_opts o;
            plan_opts_default(&o);
            o.slot = S;
            o.overhead = modes[m];
            o.surplus = seed % 5 == 0 ? SURPLUS_REFERENCE : SURPLUS_GAIN;
            char what[96];
            snprintf(what, sizeof what, "seed %llu, %s, slot %d",
                     (unsigned long long)seed, ovh_name(modes[m]), S);
            saved += same_with_skip(&q, &c, &o, what);
        }
        free_queue(&q);
    }
    assert_true(saved > 100000); /* stretches were run at once */
}

/* One job on a one-row curve (1 and 1.5 it/s on 1 and 2 GPUs). */
static curve_row slow_row;

static void one_job(job_queue *q, int64_t iterations, int deadline)
{
    memset(&slow_row, 0, sizeof slow_row);
    slow_row.batch = 8;
    slow_row.cell[0] = 1.0;
    slow_row.cell[1] = 1.5;
    slow_row.measured[0] = slow_row.measured[1] = 1;
    curve_row_ready(&slow_row);
    memset(q, 0, sizeof *q);
    q->path = strdup("one");
    q->is_json = 1;
    q->n = 1;
    q->jobs = calloc(1, sizeof *q->jobs);
    q->jobs[0].id = strdup("a");
    q->jobs[0].model = strdup("m");
    q->jobs[0].batch = 8;
    q->jobs[0].curve = &slow_row;
    q->jobs[0].iterations = iterations;
    q->jobs[0].has_deadline = deadline;
    q->jobs[0].deadline = deadline ? iterations * 2 : 0; /* 1 GPU suffices */
}

/* A job at the work limit (1e12 s alone at 1 it/s) plans in a handful of
 * loop steps under every overhead model (slot by slot it was 1.7e10
 * slots: hours), completes when the work runs out, and passes
 * plan_check (which walks the stretch at once too). */
static void test_limit_few_steps(void **state)
{
    (void)state;
    static const ovh_mode modes[] = {OVH_FIG12, OVH_REFERENCE, OVH_RESTART,
                                     OVH_NONE};
    for (int dl = 0; dl <= 1; dl++)
        for (int m = 0; m < 4; m++) {
            job_queue q;
            one_job(&q, 1000000000000LL, dl);
            cluster c;
            cluster_init(&c, 1, 1, 2, "t", NULL);
            plan_opts o;
            plan_opts_default(&o);
            o.overhead = modes[m];
            plan p;
            ef_err e = {0};
            if (plan_build(&p, &q, &c, &o, &e) != EF_OK ||
                plan_check(&p, &e) != EF_OK)
                fail_msg("%s, deadline %d: %s", ovh_name(modes[m]), dl,
                         e.msg);
            if (p.steps > 64)
                fail_msg("%s: %lld loop steps", ovh_name(modes[m]),
                         (long long)p.steps);
            /* between 1e12 s / 1.5 (both GPUs, no overhead) and 1e12 s
             * (one GPU) plus what the overheads take */
            assert_true(p.jobs[0].planned_end >= (int64_t)(1e12 / 1.5));
            if (p.jobs[0].planned_end > (int64_t)1.05e12)
                fail_msg("%s, deadline %d: ends at %lld", ovh_name(modes[m]),
                         dl, (long long)p.jobs[0].planned_end);
            plan_free(&p);
            free_queue(&q);
        }
}

/* A job that makes no progress (OVH_REFERENCE charges at least the whole
 * 1 s slot, every slot) is a runaway: plan_build stops with an internal
 * error that says so, in a bounded number of steps (it looped forever). */
static void test_runaway_stops(void **state)
{
    (void)state;
    job_queue q;
    one_job(&q, 100000000, 0);
    cluster c;
    cluster_init(&c, 1, 1, 2, "t", NULL);
    plan_opts o;
    plan_opts_default(&o);
    o.overhead = OVH_REFERENCE;
    o.slot = 1;
    plan p;
    ef_err e = {0};
    assert_int_equal(plan_build(&p, &q, &c, &o, &e), EF_ERR);
    assert_int_equal(e.kind, EF_E_INTERNAL);
    assert_non_null(strstr(e.msg, "the plan ran away"));
    free_queue(&q);
}

/* A job already under way that cannot make its deadline is demoted to
 * best-effort, not dropped, and does not block a feasible newcomer. */
static void test_late_job_demoted(void **state)
{
    (void)state;
    job_queue q;
    resnet_queue(&q, 5, 2);
    q.jobs[0].iterations = 1000000;
    q.jobs[0].iterations_done = 10;
    q.jobs[0].deadline = 100;  /* hopeless */
    q.jobs[1].iterations = 1000;
    q.jobs[1].deadline = 3600;
    cluster c;
    cluster_init(&c, 1, 1, 8, "t", NULL);
    plan_opts o;
    plan_opts_default(&o);
    plan p;
    ef_err e;
    assert_int_equal(plan_build(&p, &q, &c, &o, &e), EF_OK);
    assert_int_equal(plan_check(&p, &e), EF_OK);
    assert_int_equal(p.jobs[0].decision, PLAN_BEST_EFFORT);
    assert_non_null(strstr(p.jobs[0].reason, "demoted"));
    assert_int_equal(p.jobs[1].decision, PLAN_ADMITTED);
    assert_true(p.jobs[0].planned_end > 0);
    plan_free(&p);
    free_queue(&q);
}

/* A job the queue marks promised (admitted before; efplan serve's
 * re-plan from reality) that cannot make its deadline any more stays
 * admitted, flagged at risk with its earliest finish as planned_end, and
 * the plan passes its checker; the same job not promised is demoted. A
 * promised job that can still make it is admitted and on time, and a
 * feasible newcomer is admitted beside the late one. */
static void test_promised_at_risk(void **state)
{
    (void)state;
    for (int promised = 0; promised < 2; promised++) {
        job_queue q;
        resnet_queue(&q, 5, 3);
        for (int i = 0; i < 3; i++)
            q.jobs[i].promised = promised && i < 2;
        q.jobs[0].iterations = 1000000;
        q.jobs[0].iterations_done = 10;
        q.jobs[0].deadline = 100;  /* hopeless now */
        q.jobs[1].iterations = 1000;
        q.jobs[1].deadline = 3600;
        q.jobs[2].iterations = 1000;
        q.jobs[2].deadline = 7200;
        q.jobs[2].submit = 60;     /* a newcomer */
        cluster c;
        cluster_init(&c, 1, 1, 8, "t", NULL);
        plan_opts o;
        plan_opts_default(&o);
        o.now = 0;
        plan p;
        build_checked(&p, &q, &c, &o);
        if (promised) {
            assert_int_equal(p.jobs[0].decision, PLAN_ADMITTED);
            assert_true(p.jobs[0].at_risk);
            assert_non_null(strstr(p.jobs[0].risk, "at risk"));
            assert_true(p.jobs[0].planned_end > 100);
            assert_int_equal(p.at_risk, 1);
        } else {
            assert_int_equal(p.jobs[0].decision, PLAN_BEST_EFFORT);
        }
        assert_int_equal(p.jobs[1].decision, PLAN_ADMITTED);
        assert_false(p.jobs[1].at_risk);
        assert_true(p.jobs[1].planned_end <= 3600);
        assert_int_equal(p.jobs[2].decision, PLAN_ADMITTED);
        assert_true(p.jobs[2].planned_end <= 7200);
        plan_free(&p);
        free_queue(&q);
    }
}

/* GPUs job i holds in the plan at time t (0: none). */
static int gpus_at(const plan *p, int i, int64_t t)
{
    for (int k = 0; k < p->nslots; k++) {
        const plan_slot *sl = &p->slots[k];
        if (t < sl->start || t >= sl->end)
            continue;
        for (int a = 0; a < sl->nalloc; a++)
            if (sl->a[a].job == i)
                return sl->a[a].gpus;
    }
    return 0;
}

/* The stability rule's look ahead: a running best-effort job a (1 GPU)
 * with one GPU free now and three more once admitted job b ends (its
 * reservation, about 300 s from now) grows at once while its restart
 * costs little (the overhead model's charge), but when its restarts cost
 * 100 times that (what the loop measured) growing to 2 GPUs now would not
 * pay before b frees its GPUs: it waits and grows once, 1 -> 4, when they
 * free. The plans pass plan_check either way. */
static void test_grow_once(void **state)
{
    (void)state;
    const curve_row *r = row_of("resnet50", 128);
    for (int slow = 0; slow < 2; slow++) {
        job_queue q;
        resnet_queue(&q, 7, 2);
        for (int i = 0; i < 2; i++) {
            q.jobs[i].promised = 1;
            q.jobs[i].cur.node = calloc(2, sizeof(int));
            q.jobs[i].cur.gpu = calloc(2, sizeof(int));
        }
        q.jobs[0].has_deadline = 0; /* a: best-effort, on GPU 0 */
        q.jobs[0].promised = 0;
        q.jobs[0].iterations = 2000000;
        q.jobs[0].cur.n = 1;
        q.jobs[0].cur.gpu[0] = 0;
        /* b: on GPUs 2-3, needs both to end by its deadline */
        q.jobs[1].iterations = (int64_t)(curve_tput(r, 2) * 290);
        q.jobs[1].deadline = 400;
        q.jobs[1].cur.n = 2;
        q.jobs[1].cur.gpu[0] = 2;
        q.jobs[1].cur.gpu[1] = 3;
        cluster c;
        cluster_init(&c, 1, 1, 4, "t", NULL);
        plan_opts o;
        plan_opts_default(&o);
        o.now = 0;
        o.overhead = OVH_FIG12;
        double sc[2] = {slow ? 100 : 1, 1};
        o.restart_scale = sc;
        plan p;
        build_checked(&p, &q, &c, &o);
        assert_int_equal(p.jobs[1].decision, PLAN_ADMITTED);
        assert_true(p.jobs[1].planned_end <= 400);
        int64_t after = p.jobs[1].planned_end + 60;
        assert_int_equal(gpus_at(&p, 1, 0), 2);
        assert_int_equal(gpus_at(&p, 0, 0), slow ? 1 : 2);
        assert_int_equal(gpus_at(&p, 0, after), 4);
        plan_free(&p);
        free_queue(&q);
    }
}

/* An empty queue plans to an empty plan: no jobs, no slots, zero counts,
 * and the plan passes its own checker. */
static void test_empty_queue(void **state)
{
    (void)state;
    job_queue q;
    memset(&q, 0, sizeof q);
    cluster c;
    cluster_init(&c, 1, 1, 8, "t", NULL);
    plan_opts o;
    plan_opts_default(&o);
    plan p;
    ef_err e;
    assert_int_equal(plan_build(&p, &q, &c, &o, &e), EF_OK);
    assert_int_equal(plan_check(&p, &e), EF_OK);
    assert_int_equal(p.njobs, 0);
    assert_int_equal(p.nslots, 0);
    assert_int_equal(p.admitted, 0);
    assert_int_equal(p.rejected, 0);
    assert_int_equal(p.best_effort, 0);
    plan_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile),
        cmocka_unit_test(test_profile_random),
        cmocka_unit_test(test_grow_once),
        cmocka_unit_test(test_empty_queue),
        cmocka_unit_test(test_mss_examples),
        cmocka_unit_test(test_place_no_fragmentation),
        cmocka_unit_test(test_place_over_capacity),
        cmocka_unit_test(test_random_gain),
        cmocka_unit_test(test_random_reference),
        cmocka_unit_test(test_late_job_demoted),
        cmocka_unit_test(test_promised_at_risk),
        cmocka_unit_test(test_skip_same_bytes),
        cmocka_unit_test(test_limit_few_steps),
        cmocka_unit_test(test_runaway_stops),
    };
    return cmocka_run_group_tests_name("plan", tests, tp_setup, tp_teardown);
}
