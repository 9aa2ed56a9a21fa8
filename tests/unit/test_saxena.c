/* test_saxena.c: the saxena policy's DP (sax_dp) on hand-computed
 * instances and against brute force on tiny random ones; the policy on
 * hand-computed traces with elastic batch (work in samples). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/util.h"
#include "model/cluster.h"
#include "simulator/saxena.h"
#include "simulator/sim.h"
#include "testsim.h"

static sax_item item(int n, const int *g, const double *v)
{
    sax_item it;
    memset(&it, 0, sizeof it);
    it.nopt = n;
    for (int k = 0; k < n; k++) {
        it.gpus[k] = g[k];
        it.value[k] = v[k];
    }
    return it;
}

/* Cap 4, A: 1 -> 1.0, 2 -> 1.8, 4 -> 3.0; B: 1 -> 1.0, 2 -> 1.2.
 * Candidates: A1+B1 = 2.0, A2+B1 = 2.8, A1+B2 = 2.2, A2+B2 = 3.0; A4 does
 * not fit beside B's minimum. Best: A2 + B2 = 3.0. With cap 5, A4 + B1
 * = 4.0 wins. With cap 1, the minimums (2 GPUs) do not fit: -1. */
static void test_dp_hand(void **state)
{
    (void)state;
    sax_ws ws = {0};
    sax_item it[2];
    it[0] = item(3, (const int[]){1, 2, 4}, (const double[]){1.0, 1.8, 3.0});
    it[1] = item(2, (const int[]){1, 2}, (const double[]){1.0, 1.2});
    int ch[2] = {-1, -1};
    assert_true(fabs(sax_dp(it, 2, 4, ch, &ws) - 3.0) < 1e-12);
    assert_int_equal(ch[0], 1);
    assert_int_equal(ch[1], 1);
    assert_true(fabs(sax_dp(it, 2, 5, ch, &ws) - 4.0) < 1e-12);
    assert_int_equal(ch[0], 2);
    assert_int_equal(ch[1], 0);
    ch[0] = ch[1] = 7;
    assert_true(sax_dp(it, 2, 1, ch, &ws) < 0);
    assert_int_equal(ch[0], 7);
    /* Three jobs, cap 8, minimums 2 + 1 + 1: the DP must see that giving
     * C its 4 (value 3.5) beats the greedy first step A 2->4 (+1.5):
     * A 2 (1), B 2 (1.9), C 4 (3.5) = 6.4 against A 4 (2.5), B 1 (1),
     * C 2 (1.9) = 5.4 or A 4, B 2, C 1 = 5.4. */
    sax_item t3[3];
    t3[0] = item(2, (const int[]){2, 4}, (const double[]){1.0, 2.5});
    t3[1] = item(3, (const int[]){1, 2, 4}, (const double[]){1.0, 1.9, 2.6});
    t3[2] = item(3, (const int[]){1, 2, 4}, (const double[]){1.0, 1.9, 3.5});
    int c3[3];
    assert_true(fabs(sax_dp(t3, 3, 8, c3, &ws) - 6.4) < 1e-12);
    assert_int_equal(c3[0], 0);
    assert_int_equal(c3[1], 1);
    assert_int_equal(c3[2], 2);
    /* no jobs: value 0 */
    assert_true(sax_dp(t3, 0, 8, c3, &ws) == 0);
    sax_ws_free(&ws);
}

/* Every combination of options, for the optimum. */
static double brute(const sax_item *it, int n, int cap, int k, int used)
{
    if (k == n)
        return 0;
    double best = -1;
    for (int o = 0; o < it[k].nopt; o++) {
        if (used + it[k].gpus[o] > cap)
            break;
        double rest = brute(it, n, cap, k + 1, used + it[k].gpus[o]);
        if (rest >= 0 && it[k].value[o] + rest > best)
            best = it[k].value[o] + rest;
    }
    return best;
}

/* 3000 tiny random instances (1-5 jobs, 1-5 options of GPU counts up to
 * 16, concave or not, cap 1-24): the DP's sum equals brute force, its
 * choice is feasible and adds up to the sum it returns. */
static void test_dp_bruteforce(void **state)
{
    (void)state;
    sax_ws ws = {0};
    tp_seed(9);
    int infeasible = 0;
    for (int inst = 0; inst < 3000; inst++) {
        sax_item it[5];
        int n = 1 + (int)(tp_rnd() % 5), cap = 1 + (int)(tp_rnd() % 24);
        for (int i = 0; i < n; i++) {
            memset(&it[i], 0, sizeof it[i]);
            int g = 1 + (int)(tp_rnd() % 3);
            double v = 0.5 + (tp_rnd() % 100) / 100.0;
            it[i].nopt = 1 + (int)(tp_rnd() % 5);
            for (int o = 0; o < it[i].nopt; o++) {
                it[i].gpus[o] = g;
                it[i].value[o] = v;
                g += 1 + (int)(tp_rnd() % 4);
                v += (tp_rnd() % 200) / 100.0;
            }
        }
        int ch[5];
        double d = sax_dp(it, n, cap, ch, &ws);
        double b = brute(it, n, cap, 0, 0);
        if (b < 0) {
            assert_true(d < 0);
            infeasible++;
            continue;
        }
        if (fabs(d - b) > 1e-9)
            fail_msg("instance %d: DP %.6f, brute force %.6f", inst, d, b);
        int used = 0;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            assert_true(ch[i] >= 0 && ch[i] < it[i].nopt);
            used += it[i].gpus[ch[i]];
            sum += it[i].value[ch[i]];
        }
        assert_true(used <= cap);
        assert_true(fabs(sum - d) < 1e-9);
    }
    assert_true(infeasible > 0 && infeasible < 3000);
    sax_ws_free(&ws);
}

/* Toy curves "eb": batch 64: 1, 2, 3 it/s on 1, 2, 4 GPUs (64, 128, 192
 * samples/s); batch 128: 0.75, 1.5, 3 it/s (96, 192, 384 samples/s). */
static curve_set toy;
static curve_model toy_model;

static int toy_setup(void **state)
{
    (void)state;
    static const char *const name[] = {"eb"};
    static const char *const csv[] = {"global_batch_size,1,2,4\n64,1,2,3\n"
                                      "128,0.75,1.5,3\n"};
    return ts_toy(&toy, &toy_model, 1, name, csv);
}

static int toy_teardown(void **state)
{
    (void)state;
    ts_toy_free(&toy_model, 1);
    return 0;
}

static void run_toy(sim *s, job_queue *q, const char *csv, const char *cl,
                    const char *pol, int elastic)
{
    ts_load(q, csv, &toy);
    sim_opts o;
    sim_opts_default(&o);
    o.overhead = OVH_NONE;
    o.slot = 60;
    o.elastic_batch = elastic;
    ts_run(s, q, cl, pol, &o);
}

/* One job of 230400 samples accepting 64 and 128 on 4 GPUs: saxena runs
 * it at batch 128 on 4 GPUs (384 samples/s) and it ends at 600 s; the
 * same job without batch_sizes runs at 64 on 4 GPUs (3 it/s x 64 = 192
 * samples/s, 1200 iterations) and ends at 1200 s. */
static void test_policy_single(void **state)
{
    (void)state;
    job_queue q = {0};
    sim s;
    run_toy(&s, &q, "job_id,submit_time,model_name,ddl,batch_size,"
                    "batch_sizes,samples\nA,0,eb,1000,64,64;128,230400\n",
            "n1g4", "saxena", 0);
    assert_true(fabs(s.jobs[0].end - 600.0) < 1e-6);
    assert_int_equal(s.jobs[0].row->batch, 128);
    assert_true(s.jobs[0].met);
    assert_true(s.elastic);
    sim_free(&s);
    queue_free(&q);
    run_toy(&s, &q, "job_id,submit_time,model_name,ddl,batch_size,"
                    "samples\nA,0,eb,1000,64,230400\n", "n1g4", "saxena", 0);
    assert_true(fabs(s.jobs[0].end - 1200.0) < 1e-6);
    assert_false(s.jobs[0].met);
    sim_free(&s);
    queue_free(&q);
}

/* Two such jobs of 115200 samples at t=0 on 4 GPUs. Each job's smallest
 * configuration is 1 GPU at batch 128 (96 > 64 samples/s): value 1; at 2
 * GPUs its best is batch 128 (192 > 128 samples/s): value 2; 4 GPUs (value
 * 4) does not fit beside the other's minimum. A2 + B2 = 4 beats A1 + B1
 * = 2, so the DP gives each 2 GPUs at batch 128 and both end at
 * 115200 / 192 = 600 s. */
static void test_policy_two_jobs(void **state)
{
    (void)state;
    job_queue q = {0};
    sim s;
    run_toy(&s, &q, "job_id,submit_time,model_name,ddl,batch_size,"
                    "batch_sizes,samples\nA,0,eb,1000,64,64;128,115200\n"
                    "B,0,eb,1000,64,64;128,115200\n", "n1g4", "saxena", 0);
    for (int i = 0; i < 2; i++) {
        assert_true(fabs(s.jobs[i].end - 600.0) < 1e-6);
        assert_int_equal(s.jobs[i].row->batch, 128);
        assert_int_equal(s.jobs[i].rescales, 0);
    }
    sim_free(&s);
    queue_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dp_hand),
        cmocka_unit_test(test_dp_bruteforce),
        cmocka_unit_test(test_policy_single),
        cmocka_unit_test(test_policy_two_jobs),
    };
    return cmocka_run_group_tests(tests, toy_setup, toy_teardown);
}
