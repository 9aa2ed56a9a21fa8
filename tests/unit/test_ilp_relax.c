/*
 * test_ilp_relax.c: the bound at real size (ilp_relax, solver/ilp.h) and
 * the offline admission (off_plan, planner/offline.h; ilp_offline).
 * - seeded small instances from the trace generator (test_ilp's and the
 *   oracle study's synthetic ones, 8/16/32 GPUs), each solved exactly by the ILP: the relaxed
 *   bound is never below the ILP's solution (so never below the proven
 *   optimum), never below greedy, at every window count (1, 3, 10, the
 *   default); its GPU-time bound is never above the GPU-time of a
 *   schedule that admits as many jobs (greedy's, the ILP's); it is tight
 *   on some instances (not vacuous);
 * - the offline plan admits at least as many jobs as the online one,
 *   never more than the ILP's bound, passes plan_check, leaves its
 *   withheld jobs rejected with a reason, and is the same on a second
 *   run; on some instances it admits strictly more than arrival order;
 *   with the exact step (ilp_offline) it admits at least as many as the
 *   search alone, never more than the bound, passes plan_check, is the
 *   same twice, admits every job of the ILP's solution when the step is
 *   used, and wins back more of greedy's gap than the search alone;
 * - the LP-guided admission (off_guided, from the relaxed LP's a[j]):
 *   never above the ILP's bound, passes plan_check, the same twice; the
 *   oracle's best plan (the most of offline and guided) so never below
 *   the offline admission;
 * - the refined pass of the default bound on a 40-job queue (more
 *   boundaries than the first pass keeps): its LP value is never below
 *   that of the finest windows (every boundary, itself a bound: a
 *   coarser model is a sum of its rows), its bound never above the
 *   first pass's and never below any plan's;
 * - plan_opts.hint: a hint that holds is the reservation taken; one too
 *   short, before the release or wider than the free GPUs is ignored;
 * - the bundled oracle10 instance: greedy 6, offline 8 (= the optimum),
 *   bound 8;
 * - must-admit of a job that cannot finish is infeasible; a queue without
 *   deadline jobs has bound 0; the written LP names its rows;
 * - the planner's hooks (plan_opts.order, plan_opts.withhold) on two jobs
 *   that cannot both fit: each changes which one is admitted, and the
 *   plan keeps neither pointer.
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
#include <unistd.h>

#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "planner/offline.h"
#include "planner/plan.h"
#include "simulator/gen.h"
#include "solver/ilp.h"
#include "testplan.h"
#include "testgen.h"
#include "testutil.h"

/* Counts over the random instances, to show the properties bite. */
static int g_tight, g_offline_better, g_exact_proven, g_instances;
/* The exact step: instances where it was used; over the instances where
 * the ILP proved greedy behind, greedy's gap and what the search alone
 * and the search with the exact step win back. */
static int g_exact_used, g_behind_jobs, g_closed_search, g_closed_exact;
/* The LP-guided admission: instances where it admits more than the
 * offline search alone, and fewer. */
static int g_guided_better, g_guided_worse;
/* instances where the LP's rounded schedule's plan admits as many as the
 * LP-guided search or more */
static int g_rounded_best;
/* the configuration LP: instances it ran on, and lowered the bound */
static int g_cfg_ran, g_cfg_lower;
/* the interior-point method forced on every LP: solved so, its bound the
 * simplex method's */
static int g_ipt_ran, g_ipt_same;


/* The same relaxation with every LP solved by the interior-point method
 * (ilp_opts.lp_method ILP_LP_INTERIOR): its value is the bound its prices prove, so it
 * is never below the simplex method's LP (which also has the rounds of
 * conflict rows), never below the ILP's solution, the GPU-time bound
 * never above any schedule's, and the same twice. */
static void check_ipt(const job_queue *q, const cluster *c,
                      const ilp_opts *ro, const ilp_relaxed *sx,
                      const ilp_result *r, const plan *g, uint64_t seed)
{
    ilp_opts io = *ro;
    io.lp_method = ILP_LP_INTERIOR;
    ilp_relaxed x, x2;
    ef_err e = {0};
    if (ilp_relax(q, c, &io, &x, &e) != EF_OK)
        fail_msg("seed %llu: relax (interior point): %s",
                 (unsigned long long)seed, e.msg);
    assert_int_equal(ilp_relax(q, c, &io, &x2, &e), EF_OK);
    assert_int_equal(x.status, ILP_OPTIMAL);
    if (x.bound < r->admitted || x.bound < g->admitted)
        fail_msg("seed %llu, %d windows, interior point: bound %d below the "
                 "ILP's %d (greedy %d)", (unsigned long long)seed,
                 ro->windows, x.bound, r->admitted, g->admitted);
    assert_true(x.lp_value >= sx->lp_value - 1e-6 ||
                (ro->windows == 0 && x.windows != sx->windows));
    assert_true(x.lp_value == x2.lp_value);
    assert_int_equal(x.bound, x2.bound);
    assert_true(g->promised_gpu_seconds >= x.gpu_seconds_bound - 1e-6);
    if (r->admitted >= x.gpu_for)
        assert_true(r->gpu_seconds >= x.gpu_seconds_bound - 1e-6);
    g_ipt_ran += x.ipt;
    g_ipt_same += x.ipt && x.bound == sx->bound;
}

/* The admitted ids of p joined, to compare two plans. */
static void admitted_ids(const plan *p, char *out, size_t cap)
{
    size_t l = 0;
    out[0] = 0;
    for (int j = 0; j < p->njobs && l + 1 < cap; j++)
        if (p->jobs[j].decision == PLAN_ADMITTED)
            l += (size_t)snprintf(out + l, cap - l, "%s,", p->jobs[j].in->id);
}

static void check_instance(uint64_t seed, int study)
{
    job_queue q;
    int n = 6 + (int)(seed % 7);
    int slot = study ? tg_queue(&q, seed, n, 300, 0.4, 1.0, 1)
                     : tg_queue(&q, seed, n, 900, 0.3, 1.0, 0);
    cluster c;
    static const char *cls[] = {"n1g8", "n2g8", "n4g8"};
    ef_err e = {0};
    assert_int_equal(cluster_from_arg(&c, cls[seed % 3], &e), EF_OK);
    plan_opts po;
    plan_opts_default(&po);
    po.slot = slot;
    plan g;
    assert_int_equal(plan_build(&g, &q, &c, &po, &e), EF_OK);
    ilp_opts o;
    ilp_opts_default(&o);
    o.slot = slot;
    o.now = g.now;
    o.node_limit = 300;
    o.warm = &g;
    ilp_result r;
    if (ilp_solve(&q, &c, &o, &r, &e) != EF_OK)
        fail_msg("seed %llu: %s", (unsigned long long)seed, e.msg);
    assert_true(r.status == ILP_OPTIMAL || r.status == ILP_FEASIBLE);
    int proven = r.bound == r.admitted;
    g_exact_proven += proven;
    g_instances++;
    static const int windows[] = {1, 3, 10, 0};
    for (size_t w = 0; w < sizeof windows / sizeof *windows; w++) {
        ilp_opts ro = o;
        ro.windows = windows[w];
        ilp_relaxed x;
        if (ilp_relax(&q, &c, &ro, &x, &e) != EF_OK)
            fail_msg("seed %llu: relax: %s", (unsigned long long)seed, e.msg);
        assert_int_equal(x.status, ILP_OPTIMAL);
        if (x.bound < r.admitted || x.bound < g.admitted)
            fail_msg("seed %llu, %d windows: bound %d below the ILP's %d "
                     "(greedy %d)", (unsigned long long)seed, windows[w],
                     x.bound, r.admitted, g.admitted);
        assert_true(x.windows >= 1);
        if (windows[w] > 0)
            assert_true(x.windows <= windows[w]);
        assert_int_equal(x.deadline_jobs, r.deadline_jobs);
        assert_int_equal(x.hopeless, r.hopeless);
        /* GPU-time: any schedule admitting gpu_for jobs or more */
        assert_int_equal(x.gpu_for, g.admitted);
        assert_true(x.gpu_seconds_bound >= 0);
        assert_true(g.promised_gpu_seconds >= x.gpu_seconds_bound - 1e-6);
        if (r.admitted >= x.gpu_for)
            assert_true(r.gpu_seconds >= x.gpu_seconds_bound - 1e-6);
        if (windows[w] == 0 && proven && x.bound == r.admitted)
            g_tight++;
        if (x.cfg_value >= 0) { /* the configuration LP ran: a bound too */
            g_cfg_ran++;
            assert_true(x.cfg_value >= r.admitted - 1e-6);
            g_cfg_lower += floor(x.cfg_value + 1e-6) < floor(x.lp_value + 1e-6);
        }
        check_ipt(&q, &c, &ro, &x, &r, &g, seed);
    }
    /* the offline admission */
    plan off, off2;
    off_stats st;
    if (off_plan(&off, &q, &c, &po, OFF_DEFAULT_PLANS, &st, &e) != EF_OK)
        fail_msg("seed %llu: offline: %s", (unsigned long long)seed, e.msg);
    assert_int_equal(st.online_admitted, g.admitted);
    assert_true(off.admitted >= g.admitted);
    assert_true(off.admitted <= r.bound);
    assert_int_equal(plan_check(&off, &e), EF_OK);
    assert_null(off.withhold);
    int withheld = 0;
    for (int j = 0; j < off.njobs; j++)
        withheld += off.jobs[j].decision == PLAN_REJECTED &&
                    strstr(off.jobs[j].reason, "offline admission") != NULL;
    assert_int_equal(withheld, st.withheld);
    assert_true(st.plans >= 1 && st.plans <= OFF_DEFAULT_PLANS);
    g_offline_better += off.admitted > g.admitted;
    assert_int_equal(off_plan(&off2, &q, &c, &po, OFF_DEFAULT_PLANS, NULL,
                              &e), EF_OK);
    char a[4096], b[4096];
    admitted_ids(&off, a, sizeof a);
    admitted_ids(&off2, b, sizeof b);
    assert_string_equal(a, b);
    plan_free(&off2);
    /* the exact step (ilp_offline): never below the search, never above
     * the bound, checked, the same twice; when it is used, every job of
     * the ILP's solution is admitted */
    plan ex;
    off_stats xs;
    if (ilp_offline(&ex, &q, &c, &po, OFF_DEFAULT_PLANS, ILP_OFFLINE_BINARIES,
                    ILP_OFFLINE_NODES, &xs, &e) != EF_OK)
        fail_msg("seed %llu: exact: %s", (unsigned long long)seed, e.msg);
    assert_true(ex.admitted >= off.admitted);
    assert_true(ex.admitted <= r.bound);
    assert_int_equal(plan_check(&ex, &e), EF_OK);
    assert_null(ex.hint);
    if (xs.exact == 1) {
        assert_true(ex.admitted > off.admitted);
        assert_true(ex.admitted >= xs.exact_admitted);
        assert_int_equal(xs.withheld, 0);
        g_exact_used++;
    } else {
        assert_int_equal(ex.admitted, off.admitted);
    }
    assert_int_equal(xs.exact < 0, xs.exact_skip != OFF_SKIP_NONE);
    if (xs.exact_skip == OFF_SKIP_NOTHING)
        assert_int_equal(off_open(&off), 0);
    if (xs.exact == 0 && xs.exact_status < 0) /* the bound was met */
        assert_true(xs.exact_bound >= 0 && xs.exact_bound <= off.admitted &&
                    r.admitted <= off.admitted);
    if (proven && r.admitted > g.admitted) {
        g_behind_jobs += r.admitted - g.admitted;
        g_closed_search += off.admitted - g.admitted;
        g_closed_exact += ex.admitted - g.admitted;
    }
    plan ex2;
    assert_int_equal(ilp_offline(&ex2, &q, &c, &po, OFF_DEFAULT_PLANS,
                                 ILP_OFFLINE_BINARIES, ILP_OFFLINE_NODES,
                                 NULL, &e), EF_OK);
    admitted_ids(&ex, a, sizeof a);
    admitted_ids(&ex2, b, sizeof b);
    assert_string_equal(a, b);
    plan_free(&ex2);
    plan_free(&ex);
    /* the LP-guided admission from the default passes' a[j] */
    double *lpa = test_malloc(((size_t)q.n + 1) * sizeof *lpa);
    ilp_opts go = o;
    go.lp_admit = lpa;
    ilp_relaxed gx;
    assert_int_equal(ilp_relax(&q, &c, &go, &gx, &e), EF_OK);
    for (int j = 0; j < q.n; j++)
        assert_true(lpa[j] >= -1e-9 && lpa[j] <= 1 + 1e-9);
    plan gd, gd2;
    off_stats gs;
    if (off_guided(&gd, &q, &c, &po, lpa, OFF_DEFAULT_PLANS, &gs, &e) !=
        EF_OK)
        fail_msg("seed %llu: guided: %s", (unsigned long long)seed, e.msg);
    assert_true(gd.admitted <= r.bound);
    assert_int_equal(plan_check(&gd, &e), EF_OK);
    assert_null(gd.withhold);
    assert_true(gs.plans >= 1 && gs.plans <= OFF_DEFAULT_PLANS);
    assert_int_equal(off_guided(&gd2, &q, &c, &po, lpa, OFF_DEFAULT_PLANS,
                                NULL, &e), EF_OK);
    admitted_ids(&gd, a, sizeof a);
    admitted_ids(&gd2, b, sizeof b);
    assert_string_equal(a, b);
    /* the LP's optimum in whole slots, offered to the planner: a plan
     * of the planner's own, never above the bound, the same twice */
    ilp_result ls, ls2;
    memset(&ls, 0, sizeof ls);
    memset(&ls2, 0, sizeof ls2);
    go.lp_sched = &ls;
    assert_int_equal(ilp_relax(&q, &c, &go, &gx, &e), EF_OK);
    go.lp_sched = &ls2;
    assert_int_equal(ilp_relax(&q, &c, &go, &gx, &e), EF_OK);
    if (gx.status == ILP_OPTIMAL && gx.cols > 0) {
        assert_non_null(ls.admit);
        assert_true(ls.admitted <= gx.bound);
        assert_int_equal(ls.admitted, ls2.admitted);
        assert_memory_equal(ls.size, ls2.size,
                            (size_t)q.n * (size_t)ls.nslots * sizeof(int));
        for (int t = 0; t < ls.nslots; t++) { /* never over the cluster */
            int used = 0;
            for (int j = 0; j < q.n; j++)
                used += ls.size[(size_t)j * (size_t)ls.nslots + (size_t)t];
            assert_true(used <= c.total_gpus);
        }
        plan hp;
        assert_int_equal(ilp_hint_plan(&hp, &ls, &q, &c, &po, &e), EF_OK);
        assert_int_equal(plan_check(&hp, &e), EF_OK);
        assert_true(hp.admitted <= r.bound);
        g_rounded_best += hp.admitted >= gd.admitted;
        plan_free(&hp);
    }
    ilp_result_free(&ls);
    ilp_result_free(&ls2);
    g_guided_better += gd.admitted > off.admitted;
    g_guided_worse += gd.admitted < off.admitted;
    plan_free(&gd2);
    plan_free(&gd);
    test_free(lpa);
    /* a budget of one plan is the online plan */
    assert_int_equal(off_plan(&off2, &q, &c, &po, 1, &st, &e), EF_OK);
    assert_int_equal(off2.admitted, g.admitted);
    assert_int_equal(st.plans, 1);
    plan_free(&off2);
    plan_free(&off);
    ilp_result_free(&r);
    plan_free(&g);
    queue_free(&q);
}

static void test_random(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        check_instance(seed, 0);  /* test_ilp's instances */
        check_instance(seed, 1);  /* the oracle study's synthetic ones */
    }
    /* not vacuous: the bound is often exact, the offline mode helps */
    assert_true(g_tight > g_instances / 2);
    assert_true(g_offline_better > 0);
    assert_true(g_exact_used > 0);
    assert_true(g_closed_exact > g_closed_search);
    assert_true(g_cfg_ran > 0);
    assert_true(g_ipt_ran > g_instances);
    print_message("    the interior-point method on %d relaxations, the "
                  "simplex method's bound on %d, never below the ILP's "
                  "solution\n", g_ipt_ran, g_ipt_same);
    print_message("    %d instances: %d with the ILP's count proven, bound "
                  "tight on %d, offline above greedy on %d\n", g_instances,
                  g_exact_proven, g_tight, g_offline_better);
    print_message("    the LP-guided admission above the offline search "
                  "on %d, below on %d (the oracle keeps the better)\n",
                  g_guided_better, g_guided_worse);
    print_message("    the configuration LP ran on %d relaxations, below "
                  "the aggregated LP's bound on %d, never below the ILP's "
                  "solution\n", g_cfg_ran, g_cfg_lower);
    print_message("    the LP's rounded schedule as reservations: as many "
                  "as the LP-guided search or more on %d\n", g_rounded_best);
    print_message("    greedy behind the proven optimum by %d jobs: the "
                  "search wins back %d, with the exact step %d (used on %d "
                  "instances)\n", g_behind_jobs, g_closed_search,
                  g_closed_exact, g_exact_used);
}

/* The default passes on a queue with more boundaries than the first
 * pass keeps: the refined pass runs, and its LP value lies between the
 * finest model's (every boundary) and the first pass's. */
static void test_refined(void **state)
{
    (void)state;
    int checked = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        job_queue q;
        (void)tg_queue(&q, seed, 40, 300, 0.4, 1.0, 1);
        int slot = 60; /* a minute grid: hundreds of slots, ~120 bounds */
        cluster c;
        ef_err e = {0};
        assert_int_equal(cluster_from_arg(&c, "n1g8", &e), EF_OK);
        plan_opts po;
        plan_opts_default(&po);
        po.slot = slot;
        plan g, off;
        assert_int_equal(plan_build(&g, &q, &c, &po, &e), EF_OK);
        assert_int_equal(off_plan(&off, &q, &c, &po, 50, NULL, &e), EF_OK);
        ilp_opts o;
        ilp_opts_default(&o);
        o.slot = slot;
        o.now = g.now;
        ilp_relaxed d, f, d2;
        assert_int_equal(ilp_relax(&q, &c, &o, &d, &e), EF_OK);
        assert_int_equal(ilp_relax(&q, &c, &o, &d2, &e), EF_OK);
        o.windows = 100000; /* every boundary */
        assert_int_equal(ilp_relax(&q, &c, &o, &f, &e), EF_OK);
        assert_int_equal(d.status, ILP_OPTIMAL);
        assert_int_equal(f.status, ILP_OPTIMAL);
        if (f.windows > 60) { /* the first pass could not keep them all */
            assert_true(d.first_bound >= d.bound);
            assert_true(d.lp_value >= f.lp_value - 1e-6);
            assert_true(d.windows > 60 || d.bound == d.first_bound);
            checked++;
        }
        assert_true(d.bound >= f.bound);
        assert_true(d.bound >= off.admitted && d.bound >= g.admitted);
        /* no clock: the same bound, value and iterations twice */
        assert_int_equal(d.bound, d2.bound);
        assert_int_equal(d.lp_iters, d2.lp_iters);
        assert_true(d.lp_value == d2.lp_value);
        plan_free(&off);
        plan_free(&g);
        queue_free(&q);
    }
    assert_true(checked > 0);
}

static double resnet_tput1(void);

/* The valid inequalities (solver/ilp.c relax_cuts) on 4 GPUs and two
 * slots of an hour: B's work needs one slot on 4 GPUs and one on 2 (on
 * fewer it falls short), A's needs both slots on 1 GPU, or one on 4 (2
 * GPUs in one slot fall short). Their GPU-slots add up to the cluster's
 * 8, so the aggregated LP without the rows admits both; in no slot can A
 * run beside B on 4, so no schedule does: the exact ILP admits 1, and
 * the conflict row (A's slots on 1-3 GPUs plus the slots on 4 at most
 * 2) brings the bound to 1; B's tight deadline gets its row (one whole
 * slot on 4). */
static void test_cuts(void **state)
{
    (void)state;
    ef_err e = {0};
    job_queue q;
    double t1 = resnet_tput1();
    /* resnet50 at batch 64: iterations per second on 1, 2, 4 GPUs */
    char jobs[512];
    long ia = (long)(1.9 * t1 * 3600);
    job_queue one;
    static const char probe[] =
        "{\"jobs\": [{\"id\": \"p\", \"model\": \"resnet50\", \"batch_size\":"
        " 64, \"iterations\": 10, \"submit_time\": 0, \"deadline\": 7200}]}";
    assert_int_equal(queue_parse_json(&one, "t.json", probe, strlen(probe),
                                      &e), EF_OK);
    assert_int_equal(queue_resolve(&one, &g_curves, &e), EF_OK);
    double t2 = curve_tput(one.jobs[0].curve, 2);
    double t4 = curve_tput(one.jobs[0].curve, 4);
    queue_free(&one);
    /* the premises: on 2 GPUs A's one slot falls short; B on (2, 2) or
     * (4, 1) falls short, on (4, 2) does not */
    assert_true(t2 < 1.9 * t1 && 1.9 * t1 < 2 * t1);
    assert_true(2 * t2 < 0.99 * (t4 + t2) && t4 + t1 < 0.99 * (t4 + t2));
    long ib = (long)(0.99 * (t4 + t2) * 3600);
    snprintf(jobs, sizeof jobs,
             "{\"jobs\": [{\"id\": \"A\", \"model\": \"resnet50\", "
             "\"batch_size\": 64, \"iterations\": %ld, \"submit_time\": 0, "
             "\"deadline\": 7200}, {\"id\": \"B\", \"model\": \"resnet50\", "
             "\"batch_size\": 64, \"iterations\": %ld, \"submit_time\": 0, "
             "\"deadline\": 7200}]}", ia, ib);
    assert_int_equal(queue_parse_json(&q, "t.json", jobs, strlen(jobs), &e),
                     EF_OK);
    assert_int_equal(queue_resolve(&q, &g_curves, &e), EF_OK);
    cluster c;
    assert_int_equal(cluster_from_arg(&c, "n1g4", &e), EF_OK);
    ilp_opts o;
    ilp_opts_default(&o);
    o.slot = 3600;
    o.now = 0;
    ilp_result r;
    assert_int_equal(ilp_solve(&q, &c, &o, &r, &e), EF_OK);
    assert_int_equal(r.status, ILP_OPTIMAL);
    assert_int_equal(r.admitted, 1);
    ilp_relaxed with, without;
    assert_int_equal(ilp_relax(&q, &c, &o, &with, &e), EF_OK);
    o.no_cuts = 1;
    assert_int_equal(ilp_relax(&q, &c, &o, &without, &e), EF_OK);
    assert_int_equal(without.status, ILP_OPTIMAL);
    assert_int_equal(without.bound, 2);
    assert_int_equal(without.cuts, 0);
    assert_int_equal(with.status, ILP_OPTIMAL);
    assert_int_equal(with.bound, 1);
    assert_true(with.cuts >= 2); /* B's tight deadline, the conflict */
    assert_true(with.lp_value < 2 - 1e-6);
    ilp_result_free(&r);
    queue_free(&q);
}

/* The configuration LP (ilp_config.h) on a real overloaded day: the 31
 * jobs submitted on day 27 of the bundled cluster06 trace, on 32 GPUs.
 * The aggregated LP (every boundary kept, the valid inequalities in)
 * admits 18.002 jobs; the configuration LP knows which sizes share a slot
 * and admits at most 17.98: the bound is 17, where the plans admit 16. */
static const char day27[] =
    "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\n"
    "ff62236c-6987-5328-550d-987d226f09a1,2356319,71184,vgg16,2362124,256,32,4348\n"
    "e68e4345-3d74-ada8-03be-274378caf0ab,2356320,91918,resnet50,2359267,128,32,4530\n"
    "0cea7f59-860b-5ee0-32c7-eaf4f8a2c004,2356320,49275,bert,2360050,64,32,4645\n"
    "ee10ecad-a48c-26c3-e1a7-fc196a2050cd,2356320,66315,inception3,2360314,64,32,4845\n"
    "1d4489f4-7398-bc20-54ed-8b694a35bd63,2356320,64295,deepspeech2,2358782,32,32,4446\n"
    "11c08c0c-65fa-d5f2-575e-54d5674c8603,2356320,134170,vgg16,2362181,64,32,4391\n"
    "c5ea94c7-803b-77e7-eb6f-997ddff961c2,2356322,48239,bert,2359391,128,32,4504\n"
    "aa92f060-755d-0629-0340-52474b9a0b10,2374072,2034392,resnet50,2430963,64,8,95667\n"
    "4506c144-57f7-de45-597a-f8bdf07e3384,2374073,1058878,bert,2430609,64,8,95738\n"
    "6b5bf467-b850-4e23-2f51-e180f46ae51d,2374073,938914,deepspeech2,2476763,32,8,95650\n"
    "20abd324-1b01-ac79-1b7b-9fd18f2e9b4c,2374073,2031309,resnet50,2497714,64,8,95522\n"
    "e383f4b4-f7e4-0b14-1bed-8665d70c9f40,2374074,707984,deepspeech2,2430906,64,8,95593\n"
    "636a6100-0f3f-c461-0450-c068e34ede51,2383295,442448,inception3,2406201,64,8,33037\n"
    "8a41ee5b-d1ac-9fb2-f6ba-e4663a7fd06e,2383295,331418,bert,2413037,128,8,33161\n"
    "422fbb33-1f21-fcb1-0443-cfda137dc095,2383295,442489,inception3,2421663,64,8,33040\n"
    "bd54c13c-ac26-f2e4-6d9e-cb6f198db629,2383296,619259,gpt2,2422792,128,8,33109\n"
    "debd7bfa-51b8-181f-66b9-4d32fee673d7,2383298,323687,deepspeech2,2417468,32,8,32975\n"
    "9e9d3b3e-c2c2-d9fe-07f9-64942621d492,2413395,9146,deepspeech2,2415044,64,8,1235\n"
    "51b0981f-7972-23f2-2ec3-5c27f0115b08,2413395,13758,bert,2414041,64,8,1244\n"
    "919337ca-65b6-85bf-0eb8-d1b162ae6405,2413396,9491,vgg16,2414317,256,8,1187\n"
    "09bf3f6d-53dd-437f-0691-1c1dfc8e92ea,2413396,16004,inception3,2415141,64,8,1195\n"
    "d1b3b623-4991-6111-971e-f037db9fdb37,2413396,18981,resnet50,2414240,128,8,1148\n"
    "b1098d5f-94ff-69bb-e442-e3d7d1551de6,2413396,12495,resnet50,2414725,256,8,1204\n"
    "3eae060b-0e84-63ce-469f-006ad749cf12,2416010,545155,gpt2,2455563,128,8,29147\n"
    "56dfdf3a-ed68-5dd3-d080-e1e4415336a1,2416225,298626,resnet50,2444671,256,8,28773\n"
    "31db8a90-1769-74e4-6f02-9d52a331120e,2416225,471768,resnet50,2454811,128,8,28533\n"
    "b33a3c51-4315-abae-750c-32addec00011,2416226,537861,gpt2,2440801,128,8,28757\n"
    "feb1d806-3c08-75e8-4fa9-0af88a9c4cc4,2416227,385236,inception3,2451103,64,8,28765\n"
    "e3bd1c68-71b4-5b12-cce8-c3339efc6fc2,2416227,230640,vgg16,2437125,256,8,28843\n"
    "e6a5a353-bbd7-6c95-1faf-ff4cac0f0b1b,2424493,2997136,bert,2788936,128,64,317340\n"
    "9126f62b-2a45-fea3-7b87-461754d3ca1c,2424965,4814868,deepspeech2,2907700,64,64,344561\n";

static void test_config(void **state)
{
    (void)state;
    ef_err e = {0};
    job_queue q;
    assert_int_equal(queue_parse_csv(&q, "day27.csv", day27, strlen(day27),
                                     &e), EF_OK);
    assert_int_equal(queue_resolve(&q, &g_curves, &e), EF_OK);
    cluster c;
    assert_int_equal(cluster_from_arg(&c, "n4g8", &e), EF_OK);
    ilp_opts o;
    ilp_opts_default(&o);
    ilp_relaxed x, x2, nc;
    assert_int_equal(ilp_relax(&q, &c, &o, &x, &e), EF_OK);
    assert_int_equal(x.status, ILP_OPTIMAL);
    assert_int_equal(x.hopeless, 12);
    assert_true(x.lp_value >= 18.0 - 1e-6); /* the aggregated LP alone: 18 */
    assert_true(x.cfg_value >= 17.0 && x.cfg_value < 18.0 - 1e-3);
    assert_true(x.cfg_done);
    assert_int_equal(x.bound, 17);
    /* deterministic: the same rounds and value again */
    assert_int_equal(ilp_relax(&q, &c, &o, &x2, &e), EF_OK);
    assert_int_equal(x2.cfg_rounds, x.cfg_rounds);
    assert_true(x2.cfg_value == x.cfg_value);
    /* without the valid inequalities (the ablation hook) it does not run */
    o.no_cuts = 1;
    assert_int_equal(ilp_relax(&q, &c, &o, &nc, &e), EF_OK);
    assert_true(nc.cfg_value < 0);
    assert_int_equal(nc.bound, 18);
    /* a plan admitting the bound stops it: it cannot drop below */
    plan_opts po;
    plan_opts_default(&po);
    plan g;
    assert_int_equal(plan_build(&g, &q, &c, &po, &e), EF_OK);
    assert_true(g.admitted <= 17);
    g.admitted = 18; /* as if a plan admitted 18 */
    o.no_cuts = 0;
    o.warm = &g;
    assert_int_equal(ilp_relax(&q, &c, &o, &nc, &e), EF_OK);
    assert_true(nc.cfg_value < 0);
    plan_free(&g);
    queue_free(&q);
}

/* The bundled 10-job instance: an early big job blocks two later ones. */
static void test_oracle10(void **state)
{
    (void)state;
    char path[4096];
    tu_path(path, sizeof path, "inputs/jobs/oracle10.json");
    char *text;
    size_t len;
    ef_err e = {0};
    assert_int_equal(ef_read_file(path, &text, &len, &e), EF_OK);
    job_queue q;
    assert_int_equal(queue_parse_json(&q, path, text, len, &e), EF_OK);
    free(text);
    assert_int_equal(queue_resolve(&q, &g_curves, &e), EF_OK);
    cluster c;
    assert_int_equal(cluster_from_arg(&c, "n1g8", &e), EF_OK);
    plan_opts po;
    plan_opts_default(&po);
    po.slot = 300;
    plan g, off;
    assert_int_equal(plan_build(&g, &q, &c, &po, &e), EF_OK);
    assert_int_equal(g.admitted, 6);
    off_stats st;
    assert_int_equal(off_plan(&off, &q, &c, &po, 200, &st, &e), EF_OK);
    assert_int_equal(off.admitted, 8);
    assert_int_equal(st.withheld, 1);
    for (int j = 0; j < off.njobs; j++)
        if (strcmp(q.jobs[j].id, "big") == 0) {
            assert_int_equal(off.jobs[j].decision, PLAN_REJECTED);
            assert_non_null(strstr(off.jobs[j].reason, "offline admission"));
        }
    ilp_opts o;
    ilp_opts_default(&o);
    o.slot = 300;
    o.now = g.now;
    o.warm = &g;
    ilp_relaxed x;
    assert_int_equal(ilp_relax(&q, &c, &o, &x, &e), EF_OK);
    assert_int_equal(x.status, ILP_OPTIMAL);
    assert_int_equal(x.bound, 8);
    /* must-admit every deadline job: the relaxation says no either */
    int must[16] = {0};
    for (int j = 0; j < q.n; j++)
        must[j] = q.jobs[j].has_deadline;
    o.must = must;
    assert_int_equal(ilp_relax(&q, &c, &o, &x, &e), EF_OK);
    assert_int_equal(x.status, ILP_INFEASIBLE);
    assert_int_equal(x.bound, -1);
    plan_free(&off);
    plan_free(&g);
    queue_free(&q);
}

/* No deadline job: nothing to bound; the LP file names its rows. */
static void test_edges(void **state)
{
    (void)state;
    static const char jobs[] =
        "{\"jobs\": [{\"id\": \"be\", \"model\": \"resnet50\", \"batch_size\":"
        " 64, \"iterations\": 1000, \"submit_time\": 0}]}";
    job_queue q;
    ef_err e = {0};
    assert_int_equal(queue_parse_json(&q, "t.json", jobs, strlen(jobs), &e),
                     EF_OK);
    assert_int_equal(queue_resolve(&q, &g_curves, &e), EF_OK);
    cluster c;
    assert_int_equal(cluster_from_arg(&c, "n1g8", &e), EF_OK);
    ilp_opts o;
    ilp_opts_default(&o);
    ilp_relaxed x;
    assert_int_equal(ilp_relax(&q, &c, &o, &x, &e), EF_OK);
    assert_int_equal(x.status, ILP_OPTIMAL);
    assert_int_equal(x.bound, 0);
    assert_int_equal(x.deadline_jobs, 0);
    queue_free(&q);
    /* a generated queue, its model written */
    int slot = tg_queue(&q, 7, 8, 900, 0.3, 1.0, 0);
    char lp[] = "/tmp/efplan-relax-XXXXXX";
    int fd = mkstemp(lp);
    assert_true(fd >= 0);
    close(fd);
    o.slot = slot;
    o.write_lp = lp;
    assert_int_equal(ilp_relax(&q, &c, &o, &x, &e), EF_OK);
    char *text;
    size_t len;
    assert_int_equal(ef_read_file(lp, &text, &len, &e), EF_OK);
    assert_non_null(strstr(text, "efplan_bound"));
    assert_non_null(strstr(text, "cap_0:"));
    assert_non_null(strstr(text, "work_"));
    free(text);
    unlink(lp);
    o.slot = 0;
    assert_int_equal(ilp_relax(&q, &c, &o, &x, &e), EF_ERR);
    assert_int_equal(e.kind, EF_E_USAGE);
    queue_free(&q);
}

/* Iterations per second of resnet50 at batch 64 on one GPU (the bundled
 * A100 curves), through the queue reader as a job sees it. */
static double resnet_tput1(void)
{
    ef_err e = {0};
    job_queue q;
    static const char one[] =
        "{\"jobs\": [{\"id\": \"A\", \"model\": \"resnet50\", \"batch_size\":"
        " 64, \"iterations\": 10, \"submit_time\": 0, \"deadline\": 3600}]}";
    assert_int_equal(queue_parse_json(&q, "t.json", one, strlen(one), &e),
                     EF_OK);
    assert_int_equal(queue_resolve(&q, &g_curves, &e), EF_OK);
    double tp = curve_tput(q.jobs[0].curve, 1);
    assert_true(tp > 0);
    queue_free(&q);
    return tp;
}

/* Jobs A (submitted at 0) and B (at b_submit), each 3000 s of work on
 * one GPU, both due at 3600: on one GPU only one of them fits. */
static void two_jobs(job_queue *q, int64_t b_submit)
{
    char jobs[512];
    ef_err e = {0};
    long it = (long)(resnet_tput1() * 3000);
    snprintf(jobs, sizeof jobs,
             "{\"jobs\": [{\"id\": \"A\", \"model\": \"resnet50\", "
             "\"batch_size\": 64, \"iterations\": %ld, \"submit_time\": 0, "
             "\"deadline\": 3600}, {\"id\": \"B\", \"model\": \"resnet50\", "
             "\"batch_size\": 64, \"iterations\": %ld, \"submit_time\": %lld, "
             "\"deadline\": 3600}]}", it, it, (long long)b_submit);
    assert_int_equal(queue_parse_json(q, "t.json", jobs, strlen(jobs), &e),
                     EF_OK);
    assert_int_equal(queue_resolve(q, &g_curves, &e), EF_OK);
}

/* The planner's two hooks on a 1-GPU cluster where two jobs released
 * together cannot both fit: submit order admits the first; 'order' puts
 * the second first; 'withhold' rejects the first with the reason; the
 * plan keeps neither pointer. */
static void test_hooks(void **state)
{
    (void)state;
    ef_err e = {0};
    job_queue q;
    two_jobs(&q, 0);
    cluster c;
    assert_int_equal(cluster_from_arg(&c, "n1g1", &e), EF_OK);
    plan_opts po;
    plan_opts_default(&po);
    plan p;
    assert_int_equal(plan_build(&p, &q, &c, &po, &e), EF_OK);
    assert_int_equal(p.jobs[0].decision, PLAN_ADMITTED);
    assert_int_equal(p.jobs[1].decision, PLAN_REJECTED);
    plan_free(&p);
    double ord[2] = {1, 0};
    po.order = ord;
    assert_int_equal(plan_build(&p, &q, &c, &po, &e), EF_OK);
    assert_int_equal(p.jobs[0].decision, PLAN_REJECTED);
    assert_int_equal(p.jobs[1].decision, PLAN_ADMITTED);
    assert_null(p.order);
    assert_null(p.opts.order);
    assert_int_equal(plan_check(&p, &e), EF_OK);
    plan_free(&p);
    po.order = NULL;
    unsigned char wh[2] = {1, 0};
    po.withhold = wh;
    assert_int_equal(plan_build(&p, &q, &c, &po, &e), EF_OK);
    assert_int_equal(p.jobs[0].decision, PLAN_REJECTED);
    assert_non_null(strstr(p.jobs[0].reason, "offline admission"));
    assert_int_equal(p.jobs[1].decision, PLAN_ADMITTED);
    assert_null(p.withhold);
    assert_null(p.opts.withhold);
    plan_free(&p);
    /* the search finds it too: one of the two, never none */
    po.withhold = NULL;
    off_stats st;
    assert_int_equal(off_plan(&p, &q, &c, &po, 50, &st, &e), EF_OK);
    assert_int_equal(p.admitted, 1);
    assert_int_equal(st.online_admitted, 1);
    plan_free(&p);
    queue_free(&q);
}

/* plan_opts.hint on one GPU with two jobs of 3000 s due at 3600: a hint
 * that holds is the reservation taken (A's hint [0, 3000) is recorded
 * as reserved from 0, where A's MSS reservation starts at 600 and the
 * slot before it is surplus, and it keeps B out); one that does not
 * deliver the work, starts before the release, or wants more GPUs than
 * are free is ignored and the usual test decides; the plan keeps no
 * pointer. */
static void test_hint(void **state)
{
    (void)state;
    ef_err e = {0};
    job_queue q;
    two_jobs(&q, 600);
    cluster c;
    assert_int_equal(cluster_from_arg(&c, "n1g1", &e), EF_OK);
    plan_opts po;
    plan_opts_default(&po);
    po.slot = 600;
    resv h[3] = {{0}}; /* per job, and the sentinel */
    int64_t dec[3] = {0, 0, 0};
    double ord[3] = {1, 0, 2}; /* B first */
    po.decide_at = dec;
    po.order = ord;
    po.hint = h;
    struct {
        int64_t a, b; /* B's hint [a, b) at 1 GPU */
    } cases[] = {
        {600, 3600}, /* holds: 3000 s of work in 3000 s */
        {600, 1800}, /* too short: ignored, MSS admits B anyway */
        {0, 3600},   /* starts before B's release: ignored */
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        resv_clear(&h[1]);
        resv_push(&h[1], cases[k].a, cases[k].b, 1);
        plan p;
        assert_int_equal(plan_build(&p, &q, &c, &po, &e), EF_OK);
        assert_int_equal(plan_check(&p, &e), EF_OK);
        assert_null(p.hint);
        assert_null(p.opts.hint);
        /* B is admitted either way (first decided, it fits alone), and
         * A, 3000 s due at 3600 beside it, cannot be */
        assert_int_equal(p.jobs[1].decision, PLAN_ADMITTED);
        assert_int_equal(p.jobs[0].decision, PLAN_REJECTED);
        plan_free(&p);
    }
    /* a hint wanting two GPUs of the only one: ignored */
    resv_clear(&h[1]);
    resv_push(&h[1], 600, 3600, 2);
    plan p;
    assert_int_equal(plan_build(&p, &q, &c, &po, &e), EF_OK);
    assert_int_equal(p.jobs[1].decision, PLAN_ADMITTED);
    plan_free(&p);
    /* a hint for A that leaves B no room: A decided first with its hint
     * [0, 3000) admits A, and B (3000 s in [600, 3600)) is refused */
    resv_clear(&h[1]);
    resv_push(&h[0], 0, 3000, 1);
    ord[0] = 0;
    ord[1] = 1;
    assert_int_equal(plan_build(&p, &q, &c, &po, &e), EF_OK);
    assert_int_equal(p.jobs[0].decision, PLAN_ADMITTED);
    assert_int_equal(p.jobs[1].decision, PLAN_REJECTED);
    assert_int_equal(p.jobs[0].planned_end, 3000);
    assert_int_equal(p.jobs[0].reserved.s[0].start, 0);
    assert_int_equal(plan_check(&p, &e), EF_OK);
    plan_free(&p);
    /* the same hint cut short (2400 s of work in [0, 2400)): ignored; A's
     * MSS reservation lies at its deadline, so the slots it runs before
     * are surplus, never reserved from 0 */
    resv_clear(&h[0]);
    resv_push(&h[0], 0, 2400, 1);
    assert_int_equal(plan_build(&p, &q, &c, &po, &e), EF_OK);
    assert_int_equal(p.jobs[0].decision, PLAN_ADMITTED);
    assert_true(p.jobs[0].reserved.n == 0 || p.jobs[0].reserved.s[0].start > 0);
    plan_free(&p);
    for (int j = 0; j < 3; j++)
        resv_free(&h[j]);
    queue_free(&q);
}

/* plan_opts.decide_at: a job decided before its release holds no GPU
 * before it and the plan passes plan_check; times at or after the release
 * change nothing (byte for byte); the plan keeps no pointer. */
static void test_decide_at(void **state)
{
    (void)state;
    char jobs[1024];
    ef_err e = {0};
    job_queue q;
    /* A: 3000 s of the one GPU by 7200; B released at 600, 2000 s by 3600;
     * C released at 900, 1500 s by 5400 */
    double tp = resnet_tput1();
    snprintf(jobs, sizeof jobs,
             "{\"jobs\": [{\"id\": \"A\", \"model\": \"resnet50\", "
             "\"batch_size\": 64, \"iterations\": %ld, \"submit_time\": 0, "
             "\"deadline\": 7200}, {\"id\": \"B\", \"model\": \"resnet50\", "
             "\"batch_size\": 64, \"iterations\": %ld, \"submit_time\": 600, "
             "\"deadline\": 3600}, {\"id\": \"C\", \"model\": \"resnet50\", "
             "\"batch_size\": 64, \"iterations\": %ld, \"submit_time\": 900, "
             "\"deadline\": 5400}]}", (long)(tp * 3000), (long)(tp * 2000),
             (long)(tp * 1500));
    assert_int_equal(queue_parse_json(&q, "t.json", jobs, strlen(jobs), &e),
                     EF_OK);
    assert_int_equal(queue_resolve(&q, &g_curves, &e), EF_OK);
    cluster c;
    assert_int_equal(cluster_from_arg(&c, "n1g1", &e), EF_OK);
    plan_opts po;
    plan_opts_default(&po);
    po.slot = 300;
    plan p0, p;
    assert_int_equal(plan_build(&p0, &q, &c, &po, &e), EF_OK);
    char *s0, *s1;
    size_t n0, n1;
    assert_int_equal(plan_to_json(&p0, "t.json", "A100", &s0, &n0), EF_OK);
    int64_t late[3] = {0, 600, INT64_MAX};
    po.decide_at = late;
    assert_int_equal(plan_build(&p, &q, &c, &po, &e), EF_OK);
    assert_int_equal(plan_to_json(&p, "t.json", "A100", &s1, &n1), EF_OK);
    assert_true(n0 == n1 && memcmp(s0, s1, n0) == 0);
    free(s1);
    plan_free(&p);
    for (int k = 0; k < 4; k++) {
        int64_t at[3] = {0, k & 1 ? 0 : 600, k & 2 ? 0 : 900};
        double ord[3] = {0, k == 3 ? -1 : 0, 0};
        po.decide_at = at;
        po.order = ord;
        assert_int_equal(plan_build(&p, &q, &c, &po, &e), EF_OK);
        assert_null(p.decide_at);
        assert_null(p.opts.decide_at);
        assert_int_equal(plan_check(&p, &e), EF_OK);
        assert_true(p.admitted >= 1);
        for (int s = 0; s < p.nslots; s++)
            for (int a = 0; a < p.slots[s].nalloc; a++) {
                const plan_job *j = &p.jobs[p.slots[s].a[a].job];
                assert_true(p.slots[s].start >= j->release);
            }
        for (int i = 0; i < 3; i++)
            if (p.jobs[i].decision == PLAN_ADMITTED)
                assert_true(p.jobs[i].planned_end <= q.jobs[i].deadline);
        plan_free(&p);
    }
    free(s0);
    plan_free(&p0);
    queue_free(&q);
}

/* off_plan's second phase (every job decided at the start, the order
 * searched) on syn3 of the oracle study (benchmarks/oracle_study.sh):
 * greedy admits 6, the ILP 7, the first phase 6; the second finds 7, the
 * plan passes plan_check and no job runs before its release. */
static void test_offline_phase2(void **state)
{
    (void)state;
    static const char csv[] =
        "job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu,"
        "duration,best_effort\n"
        "0,0,45213,gpt2,1268,256,8,2888,0\n"
        "1,542,40753,inception3,3392,64,8,3043,0\n"
        "2,684,21397,vgg16,6242,128,1,8152,0\n"
        "4,1889,20338,deepspeech2,12977,64,1,12712,0\n"
        "5,2115,23072,vgg16,6409,64,1,4566,0\n"
        "6,3251,21683,gpt2,7141,256,1,5292,0\n"
        "7,3292,10739,gpt2,5822,256,1,2621,0\n"
        "10,3619,5244,resnet50,5989,256,1,2845,0\n"
        "11,3859,34559,inception3,7345,64,1,7169,0\n";
    ef_err e = {0};
    job_queue q;
    assert_int_equal(queue_parse_csv(&q, "syn3.csv", csv, strlen(csv), &e),
                     EF_OK);
    assert_int_equal(queue_resolve(&q, &g_curves, &e), EF_OK);
    cluster c;
    assert_int_equal(cluster_from_arg(&c, "n1g8", &e), EF_OK);
    plan_opts po;
    plan_opts_default(&po);
    po.slot = 600;
    po.overhead = OVH_NONE;
    plan p, p2;
    off_stats st;
    assert_int_equal(off_plan(&p, &q, &c, &po, OFF_DEFAULT_PLANS, &st, &e),
                     EF_OK);
    assert_int_equal(st.online_admitted, 6);
    assert_int_equal(p.admitted, 7);
    assert_int_equal(st.early, 1);
    assert_int_equal(plan_check(&p, &e), EF_OK);
    for (int s = 0; s < p.nslots; s++)
        for (int a = 0; a < p.slots[s].nalloc; a++)
            assert_true(p.slots[s].start >=
                        p.jobs[p.slots[s].a[a].job].release);
    /* the same inputs, the same plan */
    assert_int_equal(off_plan(&p2, &q, &c, &po, OFF_DEFAULT_PLANS, NULL, &e),
                     EF_OK);
    char *s1, *s2;
    size_t n1, n2;
    assert_int_equal(plan_to_json(&p, "t", "A100", &s1, &n1), EF_OK);
    assert_int_equal(plan_to_json(&p2, "t", "A100", &s2, &n2), EF_OK);
    assert_true(n1 == n2 && memcmp(s1, s2, n1) == 0);
    free(s1);
    free(s2);
    plan_free(&p);
    plan_free(&p2);
    queue_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_refined),
        cmocka_unit_test(test_oracle10),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_cuts),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_hooks),
        cmocka_unit_test(test_decide_at),
        cmocka_unit_test(test_hint),
        cmocka_unit_test(test_offline_phase2),
    };
    return cmocka_run_group_tests(tests, tp_setup, tp_teardown);
}
