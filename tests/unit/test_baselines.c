/* test_baselines.c: the fixed-size baselines (gandiva, tiresias, themis,
 * chronus) on hand-computed traces, their solvers on hand-solvable
 * instances, Chronus's fallback, the invariants every policy keeps, and
 * determinism. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/util.h"
#include "model/cluster.h"
#include "simulator/baselines.h"
#include "simulator/gen.h"
#include "simulator/sim.h"
#include "testsim.h"

/* model "lin": g it/s on g GPUs */
static curve_set toy;
static curve_model toy_model;

static int setup(void **state)
{
    static const char *const name[] = {"lin"};
    static const char *const csv[] = {"global_batch_size,1,2,4,8\n"
                                      "64,1,2,4,8\n"};
    if (ts_toy(&toy, &toy_model, 1, name, csv) != 0)
        return -1;
    return tp_setup(state);
}

static int teardown(void **state)
{
    ts_toy_free(&toy_model, 1);
    return tp_teardown(state);
}

#define HDR "job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu\n"

static void run(sim *s, const job_queue *q, const char *cl, const char *pol,
                int slot, int reference)
{
    sim_opts o;
    sim_opts_default(&o);
    o.overhead = OVH_NONE;
    o.slot = slot;
    o.baselines_reference = reference;
    ts_run(s, q, cl, pol, &o);
}

#define END(s, id) (ts_job(s, id)->end)
#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* Gandiva on one node of 2 GPUs (a 1-GPU node set with 2 slots), slot
 * 10 s: A and B take the two slots; C finds no free slot and no free node
 * and time-slices with A (slot 0). A and C compute half the time: A's 10
 * iterations end at 20; B (alone) ends at 20; at the point at 20 C has
 * done 10 of 30 and runs alone: 40. With the reference's behaviour the
 * first job of a slot runs alone: A ends at 10, C runs from 10 to 40. */
static void test_gandiva_exact(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, HDR "A,0,10,lin,100,64,1\nB,0,20,lin,100,64,1\n"
                 "C,0,30,lin,100,64,1\n", &toy);
    sim s;
    run(&s, &q, "n1g2", "gandiva", 10, 0);
    NEAR(END(&s, "A"), 20);
    NEAR(END(&s, "B"), 20);
    NEAR(END(&s, "C"), 40);
    assert_int_equal(ts_job(&s, "C")->migrations, 0);
    sim_free(&s);
    run(&s, &q, "n1g2", "gandiva", 10, 1);
    NEAR(END(&s, "A"), 10);
    NEAR(END(&s, "B"), 20);
    NEAR(END(&s, "C"), 40);
    sim_free(&s);
    queue_free(&q);
}

/* Gandiva packing: on 2 nodes of 2 GPUs, two 1-GPU jobs A, B fill node 0,
 * C (1 GPU) opens node 1's set; A ends at 10. When D (2 GPUs) arrives at
 * 20 no node is free, so class 1 packs its least-used set (node 0's, B
 * alone) into node 1's free slot (a migration of B) and D gets node 0. */
static void test_gandiva_packing(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, HDR "A,0,10,lin,1000,64,1\nB,0,100,lin,1000,64,1\n"
                 "C,0,100,lin,1000,64,1\nD,20,40,lin,1000,64,2\n", &toy);
    sim s;
    run(&s, &q, "n2g2", "gandiva", 10, 0);
    /* D: 40 iterations at 2 it/s from 20 */
    NEAR(END(&s, "D"), 40);
    assert_int_equal(ts_job(&s, "B")->migrations, 1);
    assert_int_equal(ts_job(&s, "C")->migrations, 0);
    NEAR(END(&s, "C"), 100);
    NEAR(END(&s, "B"), 100);
    sim_free(&s);
    queue_free(&q);
}

/* Gandiva's reference rules (pol_gandiva_ref.c), on 3 nodes of 2 GPUs
 * (slot 10): A, B, C (1 GPU; 10, 20, 30 iterations) arrive at 0. Under
 * the strict test (a set never fills its last slot) each opens its own
 * set: A on node 0, B on node 1, C on node 2 (list order by util, stable:
 * node 1's, node 0's, node 2's, as C's test popped node 0's to the back).
 * The rebalance for the next round gives class 1 a target of 3 GPUs
 * against 6 held: it loses two sets (keeping one), the first two of its
 * list, both closed before their jobs move: B, then A join node 2's set
 * behind C. Its capacity is 2: C and B run, A waits. At 10 the rebalance
 * grows the class by one set (3 jobs against 2 GPUs), but its last (and
 * only) new set has one node, so the reference skips the re-spread: A
 * stays behind, and the empty set is closed at 20. At 20 B has ended
 * (20 iterations from 0) and A runs: 20-30; C runs 0-30. (Closing one
 * set at a time, or re-spreading at 10, would let A start at 10.) */
static void test_gandiva_reference_shrink(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, HDR "A,0,10,lin,1000,64,1\nB,0,20,lin,1000,64,1\n"
                 "C,0,30,lin,1000,64,1\n", &toy);
    sim s;
    run(&s, &q, "n3g2", "gandiva", 10, 1);
    NEAR(END(&s, "A"), 30);
    NEAR(END(&s, "B"), 20);
    NEAR(END(&s, "C"), 30);
    sim_free(&s);
    queue_free(&q);
}

/* Gandiva's reference rounds (algorithms.md §4.3, §6.3) on 2 nodes of 1
 * GPU, slot 10: A (100 iterations) arrives at 0, B (10) at 13, D (1) at
 * 14, C (10) at 55. A round comes at an arrival more than a slot after
 * the last round (B: 13), else a slot after it with every arrival up to
 * then (D: 23), and completions make none: B, on node 1 from 13, ends at
 * 23, where its set is freed and D opens one on node 1 (23-24); C, the
 * last arrival, comes at its own time (55-65). On the slot grid B would
 * start at 20. */
static void test_gandiva_reference_rounds(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, HDR "A,0,100,lin,1000,64,1\nB,13,10,lin,1000,64,1\n"
                 "D,14,1,lin,1000,64,1\nC,55,10,lin,1000,64,1\n", &toy);
    sim s;
    run(&s, &q, "n2g1", "gandiva", 10, 1);
    NEAR(END(&s, "A"), 100);
    NEAR(END(&s, "B"), 23);
    NEAR(END(&s, "D"), 24);
    NEAR(END(&s, "C"), 65);
    sim_free(&s);
    queue_free(&q);
}

/* Tiresias on 1 GPU, slot 100: A (5000 s of work) runs from 0; B (1000 s)
 * arrives at 100 and waits behind A in Q0 (running jobs keep their
 * place). A crosses 3250 GPU-s at 3250, noticed at 3300: A drops to Q1,
 * B preempts it and ends at 4300; A resumes and ends at 6000. */
static void test_tiresias_exact(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, HDR "A,0,5000,lin,99999,64,1\nB,100,1000,lin,99999,64,1\n",
         &toy);
    sim s;
    run(&s, &q, "n1g1", "tiresias", 100, 0);
    NEAR(END(&s, "B"), 4300);
    NEAR(END(&s, "A"), 6000);
    assert_int_equal(ts_job(&s, "A")->preemptions, 1);
    sim_free(&s);
    queue_free(&q);
}

/* Tiresias's points under --baselines reference (algorithms.md §6.4):
 * on 1 GPU, slot 100, A (50 s) runs from 0 and B (20 s) arrives at 30.
 * On the slot grid B is decided at 100 and A's end (50) makes that same
 * point: B runs 100-120. The reference decides an arrival at its own
 * time and an end at least a slot after the point before: B is queued at
 * 30 behind A, A's end makes the point max(30 + 100, 50) = 130, and B
 * runs 130-150. */
static void test_tiresias_reference_points(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, HDR "A,0,50,lin,99999,64,1\nB,30,20,lin,99999,64,1\n",
            &toy);
    sim s;
    run(&s, &q, "n1g1", "tiresias", 100, 0);
    NEAR(END(&s, "A"), 50);
    NEAR(END(&s, "B"), 120);
    sim_free(&s);
    run(&s, &q, "n1g1", "tiresias", 100, 1);
    NEAR(END(&s, "A"), 50);
    NEAR(END(&s, "B"), 150);
    sim_free(&s);
    queue_free(&q);
}

/* Tiresias's crossing on 2 GPUs: A (2 GPUs) attains 3250 GPU-s after
 * 1625 s, so the point is at 1700 (slot 100) and B (arrived at 100)
 * preempts it there: B ends at 1700 + 500 = 2200, A at 2200 + 1375. The
 * reference's crossing time (3250 - 0) / 2 is the same at the first
 * crossing; its unit error shows only after work was done. */
static void test_tiresias_two_gpus(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, HDR "A,0,6000,lin,99999,64,2\nB,100,1000,lin,99999,64,2\n",
         &toy);
    sim s;
    run(&s, &q, "n1g2", "tiresias", 100, 0);
    NEAR(END(&s, "B"), 2200);
    NEAR(END(&s, "A"), 2200 + (6000 - 2 * 1700) / 2.0);
    sim_free(&s);
    queue_free(&q);
}

/* Themis's bisection: two 1-GPU jobs on one GPU, equal work and ideal
 * times: rho = 2, half each. With job 0 waited 10 s: x0 = 10 / (10 rho -
 * 10), x1 = 1 / rho, summing to 1 at rho = (3 + sqrt 5) / 2. Without
 * contention rho is the largest ratio at x = 1 and no step is taken. */
static void test_themis_bisection(void **state)
{
    (void)state;
    int g[2] = {1, 1};
    double age[2] = {0, 0}, rt[2] = {10, 10}, tiso[2] = {10, 10}, x[2], rho;
    assert_true(bl_themis_solve(2, g, age, rt, tiso, 1, x, &rho) > 0);
    assert_true(fabs(rho - 2) < 1e-9);
    assert_true(fabs(x[0] - 0.5) < 1e-9 && fabs(x[1] - 0.5) < 1e-9);
    age[0] = 10;
    bl_themis_solve(2, g, age, rt, tiso, 1, x, &rho);
    assert_true(fabs(rho - (3 + sqrt(5)) / 2) < 1e-9);
    assert_true(fabs(x[0] - 10 / (10 * rho - 10)) < 1e-9);
    assert_true(fabs(x[0] + x[1] - 1) < 1e-9);
    assert_int_equal(bl_themis_solve(2, g, age, rt, tiso, 2, x, &rho), 0);
    assert_true(fabs(rho - 2) < 1e-12); /* job 0: (10 + 10) / 10 */
    assert_true(x[0] == 1 && fabs(x[1] - 0.5) < 1e-12);
}

/* Themis's interior point. Degenerate: on 4 GPUs, job 0 (1 GPU, waited
 * 10 s, 10 s left, T_iso 10) sets rho = 2 at x = 1; jobs 1 and 2 (2 GPUs
 * each) reach it at l = 10 / 40 and 10 / 80, leaving room in 4 GPUs while
 * 5 are wanted: the centre keeps rho and job 0 at 1, puts the others
 * strictly inside (l, 1) within the budget, where 1.5 / (x - l) - 1 /
 * (1 - x) = 2 / (4 - sum g x) (its optimality condition). Where the
 * budget binds, the bisection's x, bit for bit. */
static void test_themis_centre(void **state)
{
    (void)state;
    int g[3] = {1, 2, 2};
    double age[3] = {10, 0, 0}, rt[3] = {10, 10, 10};
    double tiso[3] = {10, 20, 40}, l[3] = {1, 0.25, 0.125}, x[3], y[3];
    double rho, rho0;
    assert_int_equal(bl_themis_solve(3, g, age, rt, tiso, 4, y, &rho0), 0);
    assert_int_equal(bl_themis_centre(3, g, age, rt, tiso, 4, x, &rho), 1);
    assert_true(rho == rho0 && fabs(rho - 2) < 1e-12);
    assert_true(x[0] == 1);
    double used = 0;
    for (int i = 0; i < 3; i++)
        used += g[i] * x[i];
    assert_true(used < 4);
    for (int i = 1; i < 3; i++) {
        assert_true(fabs(y[i] - l[i]) < 1e-12);
        assert_true(x[i] > l[i] + 0.01 && x[i] < 0.99);
        double kkt = 1.5 / (x[i] - l[i]) - 1 / (1 - x[i]);
        assert_true(fabs(kkt - g[i] / (4 - used)) < 1e-9);
    }
    /* the budget binds: two 1-GPU jobs on one GPU */
    int g2[2] = {1, 1};
    double age2[2] = {10, 0}, rt2[2] = {10, 10}, tiso2[2] = {10, 10};
    assert_int_equal(bl_themis_centre(2, g2, age2, rt2, tiso2, 1, x, &rho),
                     0);
    assert_true(bl_themis_solve(2, g2, age2, rt2, tiso2, 1, y, &rho0) > 0);
    assert_memory_equal(x, y, 2 * sizeof *x);
    assert_true(rho == rho0);
}

/* Themis's reference lease ends (algorithms.md §6.5, §4.5): on 2 GPUs,
 * leases of 100 s, A (150 s, deadline 190) and B (50 s, deadline 100)
 * run uncontended from 0. A ends at 150 and B at 50, both by their
 * deadlines; the reference ends a job, for its deadline, at the end of
 * the lease it finishes in: A at 200 (missed), B at 100 (met). */
static void test_themis_reference_lease_end(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, HDR "A,0,150,lin,190,64,1\nB,0,50,lin,100,64,1\n", &toy);
    sim s;
    run(&s, &q, "n1g2", "themis", 100, 0);
    assert_true(ts_job(&s, "A")->met && ts_job(&s, "B")->met);
    sim_free(&s);
    run(&s, &q, "n1g2", "themis", 100, 1);
    NEAR(END(&s, "A"), 150);
    assert_false(ts_job(&s, "A")->met);
    assert_true(ts_job(&s, "B")->met);
    sim_free(&s);
    queue_free(&q);
}

/* Themis on 1 GPU, leases of 60 s: A (100 s) runs alone from 0; B (200
 * s) arrives at 30. t=60: ideal times 100 and 200, ages 60 and 30:
 * 40/(100 rho - 60) + 200/(200 rho - 30) = 1 at rho ~ 1.71, x_A ~ .36,
 * x_B ~ .64; A has received one lease: B runs. t=120: rho ~ 1.95,
 * x_A ~ .53 > x_B ~ .47, one lease each: A runs and ends at 160. B runs
 * from the point at 180 and ends at 320. */
static void test_themis_exact(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, HDR "A,0,100,lin,9999,64,1\nB,30,200,lin,9999,64,1\n", &toy);
    sim s;
    run(&s, &q, "n1g1", "themis", 60, 0);
    NEAR(END(&s, "A"), 160);
    NEAR(END(&s, "B"), 320);
    assert_int_equal(ts_job(&s, "A")->preemptions, 1);
    assert_int_equal(ts_job(&s, "B")->preemptions, 1);
    sim_free(&s);
    queue_free(&q);
}

/* Chronus on 1 GPU, leases of 240 s: A (100 s, deadline 1000) is
 * accepted at 0 and runs at once (nothing to arbitrate). B (100 s) arrives
 * at 30, is accepted at the point at 60 with a lease near its deadline,
 * and the filling step starts it ahead of that lease when A's GPU frees
 * (point at 120): it ends at 220. C cannot fit before its deadline: it is
 * unaccepted, runs when GPUs are idle (from 240) and misses. */
static void test_chronus_exact(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, HDR "A,0,100,lin,1000,64,1\nB,30,100,lin,10000,64,1\n"
                 "C,50,100,lin,200,64,1\n", &toy);
    sim s;
    run(&s, &q, "n1g1", "chronus", 60, 0);
    NEAR(END(&s, "A"), 100);
    NEAR(END(&s, "B"), 220);
    NEAR(END(&s, "C"), 340);
    assert_true(ts_job(&s, "A")->met && ts_job(&s, "B")->met);
    assert_false(ts_job(&s, "C")->met);
    sim_free(&s);
    queue_free(&q);
}

/* The same trace with the reference's behaviour (--baselines reference):
 * arrivals are tested at lease starts after that lease's selection, so a
 * newcomer's first lease is the next one; accepted jobs run only in the
 * leases granted to them (no filling ahead); they are judged by their
 * lease-floored deadline. A is accepted at 0 (may use leases 1..3), not
 * run in lease 0; at 240 nobody is unaccepted yet, so the selection uses
 * the lease: A runs 240-340. B and C are tested at 240: B is accepted
 * (last lease 40 = [9600, 9840), due 9840), C (deadline 200) is not; A
 * holds the GPU, C waits. At 480 C is unaccepted: the selection defers
 * B, C fills the GPU (480-580, missed), and B runs 100 s from the start of
 * a later lease (which one is the solver's choice: any lease up to 40 is
 * optimal), never before 720. */
static void test_chronus_reference(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, HDR "A,0,100,lin,1000,64,1\nB,30,100,lin,10000,64,1\n"
                 "C,50,100,lin,200,64,1\n", &toy);
    sim s;
    run(&s, &q, "n1g1", "chronus", 60, 1);
    NEAR(END(&s, "A"), 340);
    const sim_job *b = ts_job(&s, "B");
    assert_true(b->start >= 720 && b->start % 240 == 0);
    NEAR(b->end, (double)b->start + 100);
    NEAR(END(&s, "C"), 580);
    assert_int_equal(ts_job(&s, "A")->due, 960);
    assert_int_equal(ts_job(&s, "B")->due, 9840);
    assert_int_equal(ts_job(&s, "C")->due, 200);
    assert_true(ts_job(&s, "A")->met && ts_job(&s, "B")->met);
    assert_false(ts_job(&s, "C")->met);
    sim_free(&s);
    run(&s, &q, "n1g1", "chronus", 60, 0); /* fixed: real deadlines */
    assert_int_equal(ts_job(&s, "B")->due, 10000);
    sim_free(&s);
    queue_free(&q);
}

/* The lease MIP: two 1-GPU jobs on 1 GPU; job 0 must run in lease 0, job
 * 1 may use leases 0 or 1: both are granted, job 0 now, job 1 next. A
 * knapsack that needs branching (three 2-GPU jobs, 3 GPUs, one lease)
 * gives one job with GLPK, and with a node budget of 1 the greedy answers
 * (reported as a fallback), the same on every call. */
static void test_lease_mip(void **state)
{
    (void)state;
    int g[3] = {1, 1, 0}, r[3] = {1, 1, 0}, m[3] = {1, 2, 0};
    int run[3], ok[3], plan[3 * 4];
    assert_int_equal(bl_lease_mip(2, g, r, m, 4, 1, 1, 100, 5, run, ok, plan),
                     0);
    assert_true(ok[0] && ok[1]);
    assert_true(run[0] && !run[1]);
    assert_true(plan[0] == 1 && plan[4 + 1] == 1 && plan[4] == 0);
    /* deferring (sign -1) cannot move job 0, and puts job 1 last */
    assert_int_equal(bl_lease_mip(2, g, r, m, 4, 1, -1, 100, 5, run, ok,
                                  plan), 0);
    assert_true(run[0] && !run[1] && plan[4 + 1] == 1);
    int g3[3] = {2, 2, 2}, r3[3] = {1, 1, 1}, m3[3] = {1, 1, 1};
    assert_int_equal(bl_lease_mip(3, g3, r3, m3, 4, 3, 1, 1000, 5, run, ok,
                                  NULL), 0);
    assert_int_equal(ok[0] + ok[1] + ok[2], 1);
    int fb = bl_lease_mip(3, g3, r3, m3, 4, 3, 1, 1, 5, run, ok, NULL);
    int run2[3], ok2[3];
    bl_lease_greedy(3, g3, r3, m3, 4, 3, 1, run2, ok2, NULL);
    assert_int_equal(fb, 1);
    assert_memory_equal(ok, ok2, sizeof ok);
    assert_memory_equal(run, run2, sizeof run);
    assert_true(ok2[0] && !ok2[1] && !ok2[2]);
    /* tail blocks (h = 1): two 1-GPU jobs each need 2 of leases 0..2.
     * On 1 GPU the tail row (leases 1..2 hold 2 lease-GPUs) binds: one
     * job is granted; on 2 GPUs it cannot bind (left out of the model)
     * and both are */
    int gt[2] = {1, 1}, rt[2] = {2, 2}, mt[2] = {3, 3};
    assert_int_equal(bl_lease_mip(2, gt, rt, mt, 1, 1, 1, 100, 5, run, ok,
                                  NULL), 0);
    assert_int_equal(ok[0] + ok[1], 1);
    assert_int_equal(bl_lease_mip(2, gt, rt, mt, 1, 2, 1, 100, 5, run, ok,
                                  NULL), 0);
    assert_true(ok[0] && ok[1] && run[0] && run[1]);
}

static void gen_queue(job_queue *q, uint64_t seed, int jobs, double gap)
{
    gen_opts go;
    gen_opts_default(&go);
    go.jobs = jobs;
    go.mean_gap = gap;
    go.seed = seed;
    ts_gen(q, &go);
}

/* Chronus with a node budget of 1 falls back (counted), and gives the
 * same answer every run. */
static void test_chronus_fallback(void **state)
{
    (void)state;
    job_queue q = {0};
    gen_queue(&q, 7, 150, 120);
    sim_opts o;
    sim_opts_default(&o);
    o.mip_nodes = 1;
    sim a, b;
    ts_run(&a, &q, "n2g8", "chronus", &o);
    ts_run(&b, &q, "n2g8", "chronus", &o);
    assert_true(a.solver_fallbacks > 0);
    assert_int_equal(a.solver_fallbacks, b.solver_fallbacks);
    for (int i = 0; i < a.n; i++) {
        assert_int_equal(a.jobs[i].state, b.jobs[i].state);
        assert_true(a.jobs[i].end == b.jobs[i].end);
    }
    sim_free(&a);
    sim_free(&b);
    queue_free(&q);
}

static const char *const pols[] = {"gandiva", "tiresias", "themis",
                                   "chronus"};

/* Invariants on generated, contended traces: every job runs at its
 * requested GPU count, finishes (all its work, no earlier than that work
 * takes), and the same inputs give the same results, also in parallel
 * threads; the reference behaviour too. */
static void test_invariants_determinism(void **state)
{
    (void)state;
    job_queue q = {0};
    gen_queue(&q, 3, 200, 150);
    for (int k = 0; k < 4; k++)
        for (int ref = 0; ref < 2; ref++) {
            sim_opts o;
            sim_opts_default(&o);
            o.baselines_reference = ref;
            sim a, b[3];
            ts_run(&a, &q, "n2g8", pols[k], &o);
            for (int i = 0; i < a.n; i++) {
                const sim_job *j = &a.jobs[i];
                assert_int_equal(j->state, SJ_DONE);
                double need = (double)j->in->iterations /
                              sim_tput(j, j->in->num_gpu);
                assert_true(j->end - (double)j->start >= need - 1e-6);
                assert_true(j->gpu_seconds >= need * j->in->num_gpu - 1e-6);
            }
            int ok = 1;
            #pragma omp parallel for num_threads(3)
            for (int r = 0; r < 3; r++) {
                cluster c;
                ef_err e;
                cluster_from_arg(&c, "n2g8", &e);
                if (sim_run(&b[r], &q, &c, sim_policy_find(pols[k]), &o,
                            &e) != EF_OK) {
                    #pragma omp atomic write
                    ok = 0;
                }
            }
            assert_true(ok);
            for (int r = 0; r < 3; r++) {
                for (int i = 0; i < a.n; i++) {
                    assert_true(a.jobs[i].end == b[r].jobs[i].end);
                    assert_int_equal(a.jobs[i].preemptions,
                                     b[r].jobs[i].preemptions);
                }
                sim_free(&b[r]);
            }
            sim_free(&a);
        }
    queue_free(&q);
}

/* A requested size the simulation cannot run is rejected with a reason,
 * never a crash: no num_gpu, not a power of two, larger than the
 * cluster. */
static void test_bad_sizes(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, HDR "A,0,10,lin,100,64,3\nB,0,10,lin,100,64,16\n"
                 "C,0,10,lin,100,64,1\n", &toy);
    for (int k = 0; k < 4; k++) {
        sim s;
        run(&s, &q, "n1g8", pols[k], 10, 0);
        assert_int_equal(ts_job(&s, "A")->state, SJ_REJECTED);
        assert_int_equal(ts_job(&s, "B")->state, SJ_REJECTED);
        assert_int_equal(ts_job(&s, "C")->state, SJ_DONE);
        assert_true(strlen(ts_job(&s, "A")->reason) > 0);
        sim_free(&s);
    }
    queue_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gandiva_exact),
        cmocka_unit_test(test_gandiva_packing),
        cmocka_unit_test(test_gandiva_reference_shrink),
        cmocka_unit_test(test_gandiva_reference_rounds),
        cmocka_unit_test(test_tiresias_exact),
        cmocka_unit_test(test_tiresias_reference_points),
        cmocka_unit_test(test_tiresias_two_gpus),
        cmocka_unit_test(test_themis_bisection),
        cmocka_unit_test(test_themis_centre),
        cmocka_unit_test(test_themis_exact),
        cmocka_unit_test(test_themis_reference_lease_end),
        cmocka_unit_test(test_chronus_exact),
        cmocka_unit_test(test_chronus_reference),
        cmocka_unit_test(test_lease_mip),
        cmocka_unit_test(test_chronus_fallback),
        cmocka_unit_test(test_invariants_determinism),
        cmocka_unit_test(test_bad_sizes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
