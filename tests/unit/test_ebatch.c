/* test_ebatch.c: ElasticFlow with elastic batch (planner/ebatch.h and
 * plan --elastic-batch / simulate --policy ef --elastic-batch): MSS over
 * batch sizes and the surplus step on hand-computed toy curves, the
 * guarantee on seeded generated traces, and unchanged results for jobs
 * without batch ranges. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/util.h"
#include "model/cluster.h"
#include "planner/ebatch.h"
#include "planner/plan.h"
#include "simulator/gen.h"
#include "simulator/sim.h"
#include "testsim.h"

/* Toy models. "eb": batch 64: 1, 2, 3 it/s on 1, 2, 4 GPUs (64, 128, 192
 * samples/s); batch 128: 0.75, 1.5, 3 it/s (96, 192, 384 samples/s).
 * "ec": batch 64: 1, 1.8, 2.4 it/s (64, 115.2, 153.6 samples/s); batch
 * 128: 0.4, 0.8, 1.6 it/s (51.2, 102.4, 204.8 samples/s). */
static curve_set toy;
static curve_model toy_models[2];

static int setup(void **state)
{
    static const char *const name[] = {"eb", "ec"};
    static const char *const csv[] = {
        "global_batch_size,1,2,4\n64,1,2,3\n128,0.75,1.5,3\n",
        "global_batch_size,1,2,4\n64,1,1.8,2.4\n128,0.4,0.8,1.6\n"};
    if (ts_toy(&toy, toy_models, 2, name, csv) != 0)
        return -1;
    return tp_setup(state);
}

static int teardown(void **state)
{
    ts_toy_free(toy_models, 2);
    return tp_teardown(state);
}

static void build(plan *p, const job_queue *q, const char *cl, int eb)
{
    cluster c;
    ef_err e;
    assert_int_equal(cluster_from_arg(&c, cl, &e), EF_OK);
    plan_opts o;
    plan_opts_default(&o);
    o.elastic_batch = eb;
    assert_int_equal(plan_build(p, q, &c, &o, &e), EF_OK);
    if (plan_check(p, &e) != EF_OK)
        fail_msg("%s", e.msg);
}

/* 48000 samples by t=600 on 4 GPUs (slots of 60 s). Batch 128 at 1 GPU:
 * 500 s, reserved as late as possible from boundary 60 (600 - 500 = 100,
 * rounded down): [60, 600) = 540 GPU-seconds, done at 561 (the plans'
 * safety margin, MSS_MARGIN, makes 500 s a fraction more). Batch 64: 1 GPU gives only
 * 38400 samples by 600, so level 2 from the latest boundary 180 (375 s at
 * 128 samples/s before 600, rounded down): 1 GPU on [0, 180), 2 on
 * [180, 480) = 780 GPU-seconds. eb_mss keeps batch 128. */
static void test_mss_least_gpu_time(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, "job_id,submit_time,model_name,ddl,batch_size,batch_sizes,"
             "samples\nA,0,eb,600,64,64;128,48000\n", &toy);
    avail F;
    avail_init(&F, 0, 4);
    resv r = {0}, tmp = {0};
    const curve_row *row = eb_mss(&q.jobs[0], 1, 4, 48000, 0, 600, 60, &F,
                                  &r, &tmp);
    assert_non_null(row);
    assert_int_equal(row->batch, 128);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.s[0].start, 60);
    assert_int_equal(r.s[0].end, 600);
    assert_int_equal(r.s[0].gpus, 1);
    assert_int_equal(r.real_end, 561);
    /* batch 64 alone: the two-level plan of 780 GPU-seconds */
    assert_int_equal(mss_plan(q.jobs[0].rows[0], 4, 750, 0, 600, 60, &F,
                              &tmp), 1);
    assert_true(fabs(eb_gpu_seconds(&tmp) - 780) < 1e-9);
    /* without elastic batch: the job's one row (64), iterations */
    row = eb_mss(&q.jobs[0], 0, 4, 750, 0, 600, 60, &F, &r, &tmp);
    assert_int_equal(row->batch, 64);
    /* the fastest plan: batch 128 at 4 GPUs, 48000 / 384 = 125 s (126
     * with the safety margin) */
    assert_int_equal(eb_fastest(&q.jobs[0], 1, 4, 48000, 0, 60, &F, &r,
                                &tmp, &row), 126);
    assert_int_equal(row->batch, 128);
    resv_free(&r);
    resv_free(&tmp);
    avail_free(&F);
    queue_free(&q);
}

/* The plan: job A above gets its share at batch 128, then the surplus
 * adds GPUs at 128 (gain 96 samples/s per GPU, 1 in units of its 96
 * samples/s minimum) up to 4: 384 samples/s, done at 125. Without
 * --elastic-batch it runs 750 iterations at batch 64 on 4 GPUs: 250. The
 * plan file names the batch of each allocation only when elastic. */
static void test_plan_elastic(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, "job_id,submit_time,model_name,ddl,batch_size,batch_sizes,"
             "samples\nA,0,eb,600,64,64;128,48000\n", &toy);
    plan p;
    build(&p, &q, "n1g4", 1);
    assert_int_equal(p.jobs[0].decision, PLAN_ADMITTED);
    assert_int_equal(p.jobs[0].planned_end, 125);
    assert_int_equal(p.slots[0].a[0].gpus, 4);
    assert_int_equal(p.slots[0].a[0].batch, 128);
    char *js;
    size_t n;
    plan_to_json(&p, "t.csv", "toy", &js, &n);
    assert_non_null(strstr(js, "{\"batch_size\": 128, \"end\": 180, \"gpus\": "
                               "4, \"job\": \"A\""));
    assert_non_null(strstr(js, "\"elastic_batch\": true"));
    assert_non_null(strstr(js, "\"samples_left\": 48000"));
    free(js);
    plan_free(&p);
    build(&p, &q, "n1g4", 0);
    assert_int_equal(p.jobs[0].planned_end, 250);
    assert_int_equal(p.slots[0].a[0].batch, 0);
    plan_to_json(&p, "t.csv", "toy", &js, &n);
    assert_null(strstr(js, "batch_sizes"));
    assert_null(strstr(js, "elastic_batch"));
    free(js);
    plan_free(&p);
    queue_free(&q);
}

/* The surplus step moves a job to a larger batch. "ec", 30720 samples by
 * 600 on 4 GPUs: MSS keeps batch 64 at 1 GPU (480 s; batch 128 at 1 GPU
 * needs exactly 600 s, not enough with the safety margin). Surplus, in
 * units of 64 samples/s per GPU: 64 -> 2 GPUs gains 51.2 (0.8) against
 * 128 at 2 GPUs 38.4 (0.6): 64 at 2. Then 64 -> 4 GPUs gains 38.4 over 2
 * GPUs (0.3), 128 at 4 GPUs 89.6 over 2 (0.7): batch 128 at 4 GPUs,
 * 204.8 samples/s, done at 150 (batch 64 at 4 GPUs: 200). A deadline that
 * needs batch 128 (170) is admitted only with elastic batch. */
static void test_surplus_larger_batch(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, "job_id,submit_time,model_name,ddl,batch_size,batch_sizes,"
             "samples\nA,0,ec,600,64,64;128,30720\n", &toy);
    plan p;
    build(&p, &q, "n1g4", 1);
    assert_int_equal(p.jobs[0].rrow->batch, 64);
    assert_int_equal(p.jobs[0].planned_end, 150);
    assert_int_equal(p.slots[0].a[0].batch, 128);
    assert_int_equal(p.slots[0].a[0].gpus, 4);
    plan_free(&p);
    build(&p, &q, "n1g4", 0);
    assert_int_equal(p.jobs[0].planned_end, 200);
    plan_free(&p);
    queue_free(&q);
    ts_load(&q, "job_id,submit_time,model_name,ddl,batch_size,batch_sizes,"
             "samples\nA,0,ec,170,64,64;128,30720\n", &toy);
    build(&p, &q, "n1g4", 1);
    assert_int_equal(p.jobs[0].decision, PLAN_ADMITTED);
    assert_int_equal(p.jobs[0].rrow->batch, 128);
    plan_free(&p);
    build(&p, &q, "n1g4", 0);
    assert_int_equal(p.jobs[0].decision, PLAN_REJECTED);
    plan_free(&p);
    queue_free(&q);
}

static void gen_queue(job_queue *q, uint64_t seed, int jobs, double gap,
                      double ebatch)
{
    gen_opts go;
    gen_opts_default(&go);
    go.jobs = jobs;
    go.mean_gap = gap;
    go.seed = seed;
    go.best_effort = 0.1;
    go.elastic_batch = ebatch;
    ts_gen(q, &go);
}

static void simulate(sim *s, const job_queue *q, const char *cl,
                     const char *pol, int eb)
{
    sim_opts o;
    sim_opts_default(&o);
    o.overhead = OVH_NONE;
    o.elastic_batch = eb;
    ts_run(s, q, cl, pol, &o);
}

/* The guarantee with elastic batch: on seeded generated traces (70% of
 * jobs with batch ranges) without overheads, every job ef --elastic-batch
 * admits meets its deadline, and the planner's own plan passes its check
 * (every admitted job done by its deadline at the batches the slots say).
 * The traces are tight enough that some jobs are rejected and some
 * change batch. */
static void test_guarantee(void **state)
{
    (void)state;
    int rejected = 0, elastic = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        job_queue q = {0};
        gen_queue(&q, seed, 60, 400, 0.7);
        const char *cl = seed % 2 ? "n2g8" : "n1g8";
        sim s;
        simulate(&s, &q, cl, "ef", 1);
        for (int i = 0; i < s.n; i++) {
            const sim_job *j = &s.jobs[i];
            elastic += j->eb && j->row != j->in->curve;
            if (j->state == SJ_REJECTED) {
                rejected++;
                continue;
            }
            assert_int_equal(j->state, SJ_DONE);
            if (!j->best_effort && !j->met)
                fail_msg("seed %llu: admitted job %s ends %.1f after its "
                         "deadline %lld", (unsigned long long)seed, j->in->id,
                         j->end, (long long)j->in->deadline);
        }
        sim_free(&s);
        plan p;
        build(&p, &q, cl, 1);
        plan_free(&p);
        queue_free(&q);
    }
    assert_true(rejected > 0);
    assert_true(elastic > 0);
}

/* Jobs without batch ranges: --elastic-batch changes nothing (same
 * decisions, same completion times, same plan), for ef and saxena runs
 * alike of fixed-batch jobs. */
static void test_fixed_unchanged(void **state)
{
    (void)state;
    job_queue q = {0};
    gen_queue(&q, 77, 80, 300, 0);
    sim a, b;
    simulate(&a, &q, "n2g8", "ef", 0);
    simulate(&b, &q, "n2g8", "ef", 1);
    for (int i = 0; i < a.n; i++) {
        assert_int_equal(a.jobs[i].state, b.jobs[i].state);
        assert_true(a.jobs[i].end == b.jobs[i].end);
    }
    sim_free(&a);
    sim_free(&b);
    plan p1, p2;
    build(&p1, &q, "n2g8", 0);
    build(&p2, &q, "n2g8", 1);
    char *j1, *j2;
    size_t n1, n2;
    plan_to_json(&p1, "t.csv", "A100", &j1, &n1);
    plan_to_json(&p2, "t.csv", "A100", &j2, &n2);
    const char *flag = ",\n  \"elastic_batch\": true";
    char *at = strstr(j2, flag);
    assert_non_null(at);
    memmove(at, at + strlen(flag), strlen(at + strlen(flag)) + 1);
    assert_string_equal(j1, j2);
    free(j1);
    free(j2);
    plan_free(&p1);
    plan_free(&p2);
    queue_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mss_least_gpu_time),
        cmocka_unit_test(test_plan_elastic),
        cmocka_unit_test(test_surplus_larger_batch),
        cmocka_unit_test(test_guarantee),
        cmocka_unit_test(test_fixed_unchanged),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
