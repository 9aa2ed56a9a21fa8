/* test_pollux.c: the goodput model (goodput.h) on the bundled measurements
 * and on a hand-computable application, its input errors, the pollux
 * allocation step against an exhaustive search, and the pollux policy on
 * hand-computed traces and on the Fig. 8(a) trace (invariants,
 * determinism). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/util.h"
#include "model/cluster.h"
#include "simulator/goodput.h"
#include "simulator/pollux.h"
#include "simulator/sim.h"
#include "testsim.h"
#include "testutil.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static char root[4096], toydir[4200];

static void put(const char *dir, const char *name, const char *text)
{
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/*
 * Application "toy": one GPU: local 2 -> 1.0 s, local 4 -> 2.0 s (no
 * sync); two GPUs on a node: local 2 -> 1.5 s (sync 0.5), local 4 ->
 * 2.4 s (sync 0.5). Validation runs at batch 4 (initial) and 16, two
 * epochs: sqr 1, var 3 then sqr 1, var 1; progress 10 and 20.
 */
static void make_toy(const char *base)
{
    char d[4300];
    snprintf(d, sizeof d, "%s/toy", base);
    mkdir(base, 0755);
    mkdir(d, 0755);
    put(d, "placements.csv", "placement,local_bsz,step_time,sync_time\n"
                             "1,2,1.0,0\n1,4,2.0,0\n"
                             "2,2,1.5,0.5\n2,4,2.4,0.5\n");
    put(d, "scalability.csv",
        "num_nodes,num_replicas,local_bsz,step_time,sync_time\n");
    put(d, "validation-4.csv", "progress,iteration,metric,grad_sqr,grad_var\n"
                               "10,10,0.5,1,3\n20,20,0.6,1,1\n");
    put(d, "validation-16.csv", "progress,iteration,metric,grad_sqr,"
                                "grad_var\n10,3,0.5,1,3\n20,6,0.6,1,1\n");
}

static int setup(void **state)
{
    (void)state;
    const char *r = getenv("EFPLAN_ROOT");
    snprintf(root, sizeof root, "%s", r ? r : ".");
    snprintf(toydir, sizeof toydir, "/tmp/efplan-pollux-%ld", (long)getpid());
    make_toy(toydir);
    return tp_setup(state);
}

static int teardown(void **state)
{
    (void)state;
    int rc = tu_rmtree(toydir);
    return tp_teardown(state) == 0 ? rc : -1;
}

static void load(gp_app *a, const char *name)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/inputs/pollux", root);
    ef_err e = {0};
    if (gp_app_load(a, dir, name, &e) != EF_OK)
        fail_msg("%s: %s", name, e.msg);
}

/* The bundled cifar10 measurements are read as they are: measured
 * placements give their rows exactly, in any node order, linear between
 * local batch sizes; the initial and largest batch are the validation
 * runs' extremes. */
static void test_measured(void **state)
{
    (void)state;
    gp_app a;
    load(&a, "cifar10");
    assert_true(a.init_batch == 128 && a.max_batch == 4096);
    assert_int_equal(a.nepoch, 100);
    assert_true(a.min_local == 32 && a.max_local == 1024);
    double st, sy;
    int one[] = {1};
    gp_step(&a, one, 1, 32, &st, &sy); /* row "1,32,0.04278..." */
    NEAR(st, 0.0427886962890625);
    NEAR(sy, 0.0004995360016822816);
    gp_step(&a, one, 1, 38.5, &st, &sy); /* halfway to "1,45,0.05048..." */
    NEAR(st, (0.0427886962890625 + 0.05048525333404541) / 2);
    int p41[] = {4, 1}, p14[] = {1, 4};
    double s1, s2, y1, y2;
    gp_step(&a, p41, 2, 64, &s1, &y1);
    gp_step(&a, p14, 2, 64, &s2, &y2);
    assert_true(s1 == s2 && y1 == y2);
    /* 6 nodes: fitted; the fitted model stays within 50 % of the measured
     * 6-node rows (scalability.csv "6,6,32,0.1409...") */
    int six[] = {1, 1, 1, 1, 1, 1};
    gp_step(&a, six, 6, 32, &st, &sy);
    assert_true(st > 0.1409 * 0.5 && st < 0.1409 * 1.5);
    /* progress: epoch 0 until the first row's progress */
    assert_int_equal(gp_epoch(&a, 0), 0);
    assert_int_equal(gp_epoch(&a, 391.0), 1);
    assert_int_equal(gp_epoch(&a, 1e12), 99);
    NEAR(gp_goal(&a), 39063.0);
    gp_app_free(&a);
}

/* Every bundled application loads, and its best configuration on one GPU
 * has a positive goodput at every epoch. */
static void test_bundled(void **state)
{
    (void)state;
    static const char *const apps[] = {"bert", "cifar10", "deepspeech2",
                                       "imagenet", "ncf", "yolov3"};
    for (int i = 0; i < 6; i++) {
        gp_app a;
        load(&a, apps[i]);
        for (int ep = 0; ep < a.nepoch; ep++) {
            gp_config c;
            assert_int_equal(gp_best_packed(&a, 1, 4, ep, &c), 1);
            assert_true(c.goodput > 0 && c.samples > 0);
            assert_true(c.batch >= a.init_batch - 1e-9 &&
                        c.batch <= a.max_batch + 1e-9);
        }
        gp_app_free(&a);
    }
}

/* Hand-computed: see make_toy. */
static void test_toy_model(void **state)
{
    (void)state;
    gp_app a;
    ef_err e = {0};
    assert_int_equal(gp_app_load(&a, toydir, "toy", &e), EF_OK);
    /* fit: compute 0 + 0.5 b; one node: sync 0.5 at 2 replicas */
    NEAR(a.ac, 0);
    NEAR(a.bc, 0.5);
    NEAR(a.ar, 0.5);
    NEAR(a.br, 0);
    /* gain = (var + sqr) / (var / scale + sqr), scale = B / 4 */
    NEAR(gp_gain(&a, 4, 0), 1);
    NEAR(gp_gain(&a, 16, 0), 4 / (0.75 + 1));
    NEAR(gp_gain(&a, 8, 1), 2 / (0.5 + 1));
    NEAR(gp_gain(&a, 10, 0), 4 / (3 / 2.5 + 1)); /* var, sqr constant */
    /* one GPU, epoch 0: B = 4 (local 4, 2 s): goodput 0.5; B = 8 needs an
     * accumulation step: 4 s, gain 1.6: 0.4 */
    int one[] = {1}, two[] = {2};
    gp_config c;
    assert_int_equal(gp_best(&a, one, 1, 0, &c), 1);
    NEAR(c.batch, 4);
    NEAR(c.goodput, 0.5);
    NEAR(c.samples, 2);
    assert_int_equal(c.accum, 0);
    /* two GPUs, epoch 1: B = 4 (local 2, 1.5 s): 2/3; B = 6 (local 3,
     * 1.95 s, gain 1.2): 0.615; B = 8 (local 4, 2.4 s, gain 4/3): 0.556 */
    assert_int_equal(gp_best(&a, two, 1, 1, &c), 1);
    NEAR(c.batch, 4);
    NEAR(c.local, 2);
    NEAR(c.goodput, 1 / 1.5);
    /* 16 / (3 x 2) replicas: three GPUs cannot use a batch under 6 but
     * can; eight GPUs need 8 x 2 = 16 = the largest batch: fits */
    int eight[] = {4, 4};
    assert_int_equal(gp_best(&a, eight, 2, 0, &c), 1);
    NEAR(c.batch, 16);
    int nine[] = {4, 4, 1};
    assert_int_equal(gp_best(&a, nine, 3, 0, &c), 0); /* 18 > 16 */
    assert_int_equal(gp_epoch(&a, 9.9), 0);
    assert_int_equal(gp_epoch(&a, 10), 1);
    NEAR(gp_goal(&a), 20);
    gp_app_free(&a);
}

/* Bad measurements: the message names the file, line and column. */
static void test_errors(void **state)
{
    (void)state;
    char d[4300], dd[4400];
    snprintf(d, sizeof d, "%s/bad", toydir);
    make_toy(d);
    snprintf(dd, sizeof dd, "%s/toy", d);
    gp_app a;
    ef_err e = {0};
    put(dd, "placements.csv", "placement,local_bsz,step_time,sync_time\n"
                              "1,2,1.0,0\n1,4,-2.0,0\n");
    assert_int_equal(gp_app_load(&a, d, "toy", &e), EF_ERR);
    assert_int_equal(e.kind, EF_E_INPUT);
    assert_non_null(strstr(e.msg, "placements.csv:3:5: step_time"));
    gp_app_free(&a);
    put(dd, "placements.csv", "placement,local_bsz,step_time,sync_time\n"
                              "1,2,1.0,0\n1x,4,2.0,0\n");
    assert_int_equal(gp_app_load(&a, d, "toy", &e), EF_ERR);
    assert_non_null(strstr(e.msg, "placements.csv:3:1: placement"));
    gp_app_free(&a);
    put(dd, "placements.csv", "placement,local_bsz,step\n1,2,1.0\n");
    assert_int_equal(gp_app_load(&a, d, "toy", &e), EF_ERR);
    assert_non_null(strstr(e.msg, "no column \"step_time\""));
    gp_app_free(&a);
    put(dd, "placements.csv", "placement,local_bsz,step_time,sync_time\n"
                              "1,2,1.0,0\n2,4,2.0,0\n");
    assert_int_equal(gp_app_load(&a, d, "toy", &e), EF_ERR);
    assert_non_null(strstr(e.msg, "one-GPU rows"));
    gp_app_free(&a);
    make_toy(d);
    put(dd, "validation-16.csv", "progress,iteration,metric,grad_sqr,"
                                 "grad_var\n");
    assert_int_equal(gp_app_load(&a, d, "toy", &e), EF_ERR);
    assert_non_null(strstr(e.msg, "validation-16.csv: 0 data rows"));
    gp_app_free(&a);
    assert_int_equal(gp_app_load(&a, d, "nosuch", &e), EF_ERR);
    assert_non_null(strstr(e.msg, "nosuch/placements.csv"));
    gp_app_free(&a);
}

/* ------------------------------------------------------------------ */
/* px_allocate against an exhaustive search */

static double best_cost;

/* uniform in [0, 1) */
static double unif(void)
{
    return (double)tp_rnd() / 2147483648.0;
}

static void brute(int k, int nc, int left, const int *cmax,
                  const double *cost, int W, double acc)
{
    if (k == nc) {
        if (acc < best_cost)
            best_cost = acc;
        return;
    }
    for (int g = 1; g <= cmax[k] && g <= left - (nc - k - 1); g++)
        brute(k + 1, nc, left - g, cmax, cost, W,
              acc + cost[k * W + g]);
}

/* On diminishing returns (concave speedups) the greedy finds the optimum;
 * on arbitrary measured-like speedups (not concave, not monotone) it is
 * always feasible, never worse than one GPU each, and close to the
 * optimum: the counts and gaps below are what the results file quotes. */
static void test_allocate(void **state)
{
    (void)state;
    tp_seed(11);
    int optimal[2] = {0, 0}, total[2] = {0, 0};
    double worst[2] = {0, 0}, gapsum[2] = {0, 0};
    for (int inst = 0; inst < 2000; inst++) {
        int concave = inst % 2 == 0;
        int N = 2 + (int)(unif() * 9);       /* 2..10 */
        int nc = 1 + (int)(unif() * 4);      /* 1..4 */
        if (nc > N)
            nc = N;
        int W = N + 1, cmax[4], c[4];
        double cost[4 * 11];
        for (int k = 0; k < nc; k++) {
            cmax[k] = 1 + (int)(unif() * N);
            double sp = 1, step = 0.3 + 0.7 * unif();
            cost[k * W] = 1e30;
            for (int g = 1; g <= N; g++) {
                if (g > 1) {
                    if (concave) {
                        sp += step;
                        step *= 0.4 + 0.5 * unif();
                    } else {
                        sp *= 0.7 + 0.8 * unif(); /* up or down */
                    }
                }
                cost[k * W + g] = 1 / sp;
            }
        }
        assert_int_equal(px_allocate(nc, N, cmax, cost, c), EF_OK);
        int sum = 0;
        double got = 0, ones = 0;
        for (int k = 0; k < nc; k++) {
            assert_true(c[k] >= 1 && c[k] <= cmax[k]);
            sum += c[k];
            got += cost[k * W + c[k]];
            ones += cost[k * W + 1];
        }
        assert_true(sum <= N);
        assert_true(got <= ones + 1e-12);
        best_cost = INFINITY;
        brute(0, nc, N, cmax, cost, W, 0);
        double gap = (got - best_cost) / best_cost;
        assert_true(gap >= -1e-12);
        if (concave)
            assert_true(gap < 1e-9);
        total[!concave]++;
        optimal[!concave] += gap < 1e-9;
        gapsum[!concave] += gap;
        if (gap > worst[!concave])
            worst[!concave] = gap;
    }
    print_message("px_allocate vs exhaustive: concave %d/%d optimal; "
                  "non-concave %d/%d optimal, mean gap %.4f, worst %.4f\n",
                  optimal[0], total[0], optimal[1], total[1],
                  gapsum[1] / total[1], worst[1]);
    assert_true(optimal[1] * 10 >= total[1] * 9); /* >= 90 % optimal */
    assert_true(worst[1] < 0.25);
    int cm[] = {1, 1};
    double cs[] = {1e30, 1};
    int cc[2];
    assert_int_equal(px_allocate(2, 1, cm, cs, cc), EF_ERR); /* nc > N */
}

/* ------------------------------------------------------------------ */
/* the policy */

static curve_set toycs;
static curve_model toymodel;

#define HDR "job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu\n"

static void run_toy(sim *s, const job_queue *q, const char *cl, int slot)
{
    sim_opts o;
    sim_opts_default(&o);
    o.overhead = OVH_NONE;
    o.slot = slot;
    o.pollux_dir = toydir;
    ts_run(s, q, cl, "pollux", &o);
}

/* One GPU: the toy job runs B = 4 at 2 samples/s (0.5 trace iterations of
 * batch 4 per second) and 0.5 progress/s. A (10 iterations = 40 samples)
 * ends on samples at 20 s; B (100 iterations) ends on progress: 20 units
 * at 40 s, before its 400 samples. C waits for the GPU (one candidate per
 * GPU, earlier submit first) and starts at the point after A ends. */
static void test_policy_toy(void **state)
{
    (void)state;
    static const char *const name[] = {"toy"};
    static const char *const csv[] = {"global_batch_size,1,2\n4,1,2\n"};
    assert_int_equal(ts_toy(&toycs, &toymodel, 1, name, csv), 0);
    job_queue q = {0};
    ts_load(&q, HDR "A,0,10,toy,30,4,1\nB,1000,100,toy,1039,4,1\n"
                 "C,0,10,toy,35,4,1\n", &toycs);
    sim s;
    run_toy(&s, &q, "n1g1", 10);
    NEAR(ts_job(&s, "A")->end, 20);
    NEAR(ts_job(&s, "C")->end, 40);  /* starts at 20 */
    NEAR(ts_job(&s, "B")->end, 1040); /* progress 20 at 0.5/s */
    assert_int_equal(ts_job(&s, "A")->met, 1);
    assert_int_equal(ts_job(&s, "C")->met, 0);
    assert_int_equal(ts_job(&s, "B")->met, 0);
    sim_free(&s);
    queue_free(&q);
    ts_toy_free(&toymodel, 1);
}

/* The exploration limit: a job alone on a 4-GPU node holds 1, then at
 * most 2, then 4 GPUs at successive points; a model without data is an
 * input error naming the file. */
static void test_policy_growth(void **state)
{
    (void)state;
    curve_set cs;
    char dir[4300];
    snprintf(dir, sizeof dir, "%s/inputs/curves/T4", root);
    ef_err e;
    assert_int_equal(curve_set_load(&cs, dir, &e), EF_OK);
    job_queue q = {0};
    ts_load(&q, HDR "A,0,200000,cifar10,99999,4096,1\n", &cs);
    sim_opts o;
    sim_opts_default(&o);
    o.overhead = OVH_NONE;
    o.timeline = 1;
    sim s;
    ts_run(&s, &q, "n1g4", "pollux", &o);
    assert_true(s.ntl >= 3);
    assert_int_equal(s.tl[0].gpus_used, 1);
    assert_true(s.tl[1].gpus_used <= 2);
    assert_true(s.tl[2].gpus_used <= 4);
    int most = 0;
    for (int k = 0; k < s.ntl; k++)
        if (s.tl[k].gpus_used > most)
            most = s.tl[k].gpus_used;
    assert_true(most >= 2);
    sim_free(&s);
    queue_free(&q);
    ts_load(&q, HDR "A,0,100,resnet50,999,64,1\n", &g_curves);
    cluster c;
    assert_int_equal(cluster_from_arg(&c, "n1g4", &e), EF_OK);
    assert_int_equal(sim_run(&s, &q, &c, sim_policy_find("pollux"), &o, &e),
                     EF_ERR);
    assert_int_equal(e.kind, EF_E_INPUT);
    assert_non_null(strstr(e.msg, "resnet50/placements.csv"));
    sim_free(&s);
    queue_free(&q);
    curve_set_free(&cs);
}

/* The Fig. 8(a) trace: every job completes after it was submitted, the
 * loop's capacity checks hold (sim_run fails otherwise), and the result
 * does not depend on running simulations in parallel threads. */
static void test_policy_trace(void **state)
{
    (void)state;
    curve_set cs;
    char dir[4300], tr[4300];
    snprintf(dir, sizeof dir, "%s/inputs/curves/T4", root);
    snprintf(tr, sizeof tr, "%s/inputs/traces/artifact/elasticVpollux_e.csv",
             root);
    ef_err e;
    assert_int_equal(curve_set_load(&cs, dir, &e), EF_OK);
    job_queue q = {0};
    assert_int_equal(queue_load(&q, tr, &e), EF_OK);
    assert_int_equal(queue_resolve(&q, &cs, &e), EF_OK);
    sim_opts o;
    sim_opts_default(&o);
    sim r[2];
    int ok = 1;
    #pragma omp parallel for num_threads(2)
    for (int k = 0; k < 2; k++) {
        cluster c;
        ef_err le;
        cluster_from_arg(&c, "n16g4", &le);
        if (sim_run(&r[k], &q, &c, sim_policy_find("pollux"), &o, &le) !=
            EF_OK) {
            #pragma omp atomic write
            ok = 0;
        }
    }
    assert_true(ok);
    for (int i = 0; i < r[0].n; i++) {
        const sim_job *j = &r[0].jobs[i];
        assert_int_equal(j->state, SJ_DONE);
        assert_true(j->end > (double)j->in->submit);
        assert_true(j->gpu_seconds > 0);
        assert_true(r[1].jobs[i].end == j->end);
    }
    for (int k = 0; k < r[0].ntl; k++)
        assert_true(r[0].tl[k].gpus_used <= 64);
    sim_metrics m;
    sim_metrics_compute(&r[0], &m);
    print_message("pollux on elasticVpollux_e: %.4f\n", m.deadline_ratio);
    assert_true(m.deadline_ratio > 0.3 && m.deadline_ratio < 0.7);
    sim_free(&r[0]);
    sim_free(&r[1]);
    queue_free(&q);
    curve_set_free(&cs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measured),
        cmocka_unit_test(test_bundled),
        cmocka_unit_test(test_toy_model),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_allocate),
        cmocka_unit_test(test_policy_toy),
        cmocka_unit_test(test_policy_growth),
        cmocka_unit_test(test_policy_trace),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    return rc;
}
