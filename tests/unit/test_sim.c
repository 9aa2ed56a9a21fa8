/* test_sim.c: the simulator on hand-computed traces, the guarantee
 * property, determinism, and agreement with the planner. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/util.h"
#include "model/cluster.h"
#include "planner/plan.h"
#include "simulator/gen.h"
#include "simulator/sim.h"
#include "testsim.h"

/* A toy curve set: model "lin" scales linearly (g it/s on g GPUs). */
static curve_set toy;
static curve_model toy_model;

static int toy_setup(void **state)
{
    static const char *const name[] = {"lin"};
    static const char *const csv[] = {"global_batch_size,1,2,4,8\n"
                                      "64,1,2,4,8\n"};
    if (ts_toy(&toy, &toy_model, 1, name, csv) != 0)
        return -1;
    return tp_setup(state);
}

static int toy_teardown(void **state)
{
    ts_toy_free(&toy_model, 1);
    return tp_teardown(state);
}

static void run(sim *s, const job_queue *q, const char *cl, const char *pol,
                ovh_mode ov, int slot)
{
    sim_opts o;
    sim_opts_default(&o);
    o.overhead = ov;
    o.slot = slot;
    ts_run(s, q, cl, pol, &o);
}

#define END(s, id) (ts_job(s, id)->end)

/* EDF, no overhead: J2 (earlier deadline) takes all 4 GPUs and ends at
 * 38/4 = 9.5 s; its GPUs idle until the point at 10; J1 then runs 40
 * iterations at 4 it/s and ends at 20. */
static void test_edf_exact(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, "job_id,submit_time,iteration,model_name,ddl,batch_size\n"
                   "J1,0,40,lin,100,64\nJ2,0,38,lin,15,64\n", &toy);
    sim s;
    run(&s, &q, "n1g4", "edf", OVH_NONE, 10);
    assert_true(fabs(END(&s, "J2") - 9.5) < 1e-9);
    assert_true(fabs(END(&s, "J1") - 20.0) < 1e-9);
    sim_metrics m;
    sim_metrics_compute(&s, &m);
    assert_int_equal(m.met, 2);
    assert_true(fabs(m.deadline_ratio - 1.0) < 1e-12);
    assert_true(fabs(m.idle_gpu_hours_after_completion * 3600 - 2.0) < 1e-6);
    sim_free(&s);
    queue_free(&q);
}

/* ElasticFlow on one job: MSS is 1 GPU, the surplus step adds GPUs while
 * each gains (linear curve: up to all 4), so it ends at 40/4 = 10 s; with
 * the Fig. 12 model the start costs the generic scale-up to 4 GPUs:
 * 1.573 + (1.757 - 1.573) / 3 s. */
static void test_ef_single_overhead(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, "job_id,submit_time,iteration,model_name,ddl,batch_size\n"
                   "J1,0,40,lin,100,64\n", &toy);
    sim s;
    run(&s, &q, "n1g4", "ef", OVH_NONE, 10);
    assert_true(fabs(END(&s, "J1") - 10.0) < 1e-9);
    assert_int_equal(ts_job(&s, "J1")->start, 0);
    sim_free(&s);
    run(&s, &q, "n1g4", "ef", OVH_FIG12, 10);
    double c = 1.573 + (1.757 - 1.573) / 3;
    assert_true(fabs(END(&s, "J1") - (10.0 + c)) < 1e-9);
    assert_true(fabs(ts_job(&s, "J1")->overhead_seconds - c) < 1e-9);
    assert_true(ts_job(&s, "J1")->met);
    sim_free(&s);
    queue_free(&q);
}

/* Two jobs that each need the whole cluster by t=12: ElasticFlow admits
 * J1 and rejects J2 (earliest admissible deadline 31: J1 holds the GPUs
 * to the end of slot [10, 20), then J2 needs 11 s); without admission
 * control both run and J2 ends at 20, late; EDF likewise; EDF with
 * admission control rejects J2. Every policy meets 1 of 2. */
static void test_admission_all_policies(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, "job_id,submit_time,iteration,model_name,ddl,batch_size\n"
                   "J1,0,40,lin,12,64\nJ2,0,40,lin,12,64\n", &toy);
    const char *pols[] = {"ef", "ef-noac", "edf", "edf-ac"};
    const int rejected[] = {1, 0, 0, 1};
    for (int k = 0; k < 4; k++) {
        sim s;
        run(&s, &q, "n1g4", pols[k], OVH_NONE, 10);
        sim_metrics m;
        sim_metrics_compute(&s, &m);
        assert_int_equal(m.met, 1);
        assert_int_equal(m.rejected, rejected[k]);
        assert_true(fabs(m.deadline_ratio - 0.5) < 1e-12);
        assert_true(fabs(END(&s, "J1") - 10.0) < 1e-9);
        if (rejected[k]) {
            assert_int_equal(ts_job(&s, "J2")->state, SJ_REJECTED);
            if (strcmp(pols[k], "ef") == 0)
                assert_int_equal(ts_job(&s, "J2")->earliest_deadline, 31);
        } else {
            assert_true(fabs(END(&s, "J2") - 20.0) < 1e-9);
            assert_false(ts_job(&s, "J2")->met);
        }
        sim_free(&s);
    }
    queue_free(&q);
}

/* edf-ac's two admission rules, with the restart model (30 s without
 * progress at a start; EDF plans ignore overheads). J1 (40 it, deadline
 * 15) is planned alone at t=0 on 4 GPUs to end at 10: admitted by both
 * rules. Its start costs 30 s, so at t=10, when J2 (40 it, deadline 1000)
 * arrives, J1 still has all 40 iterations left: planned first (earlier
 * deadline) it ends at 20, late with or without J2; J2 is planned after it
 * in [20, 30), in time. The default rule admits J2 (J1 missed without it
 * too); the reference's rule (--baselines reference) rejects J2 because a
 * job misses with it. J1 runs from 30 and ends at 40 either way; admitted,
 * J2 starts at the point at 40, pays 30 s and ends at 80, in time. */
static void test_edf_ac_reference_rule(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, "job_id,submit_time,iteration,model_name,ddl,batch_size\n"
                   "J1,0,40,lin,15,64\nJ2,10,40,lin,1000,64\n", &toy);
    for (int ref = 0; ref <= 1; ref++) {
        sim_opts o;
        sim_opts_default(&o);
        o.overhead = OVH_RESTART;
        o.slot = 10;
        o.baselines_reference = ref;
        sim s;
        ts_run(&s, &q, "n1g4", "edf-ac", &o);
        sim_metrics m;
        sim_metrics_compute(&s, &m);
        assert_int_equal(ts_job(&s, "J1")->state, SJ_DONE);
        assert_false(ts_job(&s, "J1")->met);
        assert_true(fabs(END(&s, "J1") - 40.0) < 1e-9);
        if (ref) {
            assert_int_equal(ts_job(&s, "J2")->state, SJ_REJECTED);
            assert_int_equal(m.rejected, 1);
            assert_int_equal(m.met, 0);
        } else {
            assert_int_equal(ts_job(&s, "J2")->state, SJ_DONE);
            assert_true(ts_job(&s, "J2")->met);
            assert_true(fabs(END(&s, "J2") - 80.0) < 1e-9);
            assert_int_equal(m.rejected, 0);
            assert_int_equal(m.met, 1);
        }
        sim_free(&s);
    }
    queue_free(&q);
}

/* A preempted job: J1 (late deadline) runs alone on 4 GPUs, J2 arrives at
 * 10 with a tight deadline; EDF gives J2 everything, J1 drops to 0 and
 * resumes after J2 ends: J1 did 40 it by 10, J2 40 it in [10, 20), J1 the
 * remaining 40 in [20, 30). */
static void test_edf_preemption(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, "job_id,submit_time,iteration,model_name,ddl,batch_size\n"
                   "J1,0,80,lin,1000,64\nJ2,10,40,lin,25,64\n", &toy);
    sim s;
    run(&s, &q, "n1g4", "edf", OVH_NONE, 10);
    assert_true(fabs(END(&s, "J2") - 20.0) < 1e-9);
    assert_true(fabs(END(&s, "J1") - 30.0) < 1e-9);
    assert_int_equal(ts_job(&s, "J1")->preemptions, 1);
    sim_free(&s);
    queue_free(&q);
}

static void gen_queue(job_queue *q, uint64_t seed, int jobs, double gap)
{
    gen_opts go;
    gen_opts_default(&go);
    go.jobs = jobs;
    go.mean_gap = gap;
    go.seed = seed;
    go.best_effort = 0.1;
    ts_gen(q, &go);
}

/* The guarantee: without overheads, every job ElasticFlow admits meets
 * its deadline (and the traces are tight enough that some are rejected). */
static void test_guarantee(void **state)
{
    (void)state;
    int rejected = 0;
    for (uint64_t seed = 1; seed <= 25; seed++) {
        job_queue q = {0};
        gen_queue(&q, seed, 60, 400);
        sim s;
        run(&s, &q, seed % 2 ? "n2g8" : "n1g8", "ef", OVH_NONE, 60);
        for (int i = 0; i < s.n; i++) {
            const sim_job *j = &s.jobs[i];
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
        queue_free(&q);
    }
    assert_true(rejected > 0);
}

/* Physics that differs from the model (each model at 0.6-1.0 of its
 * curve, restarts twice the model's): planned at the curves, admitted
 * jobs miss; with --learn (measured speeds and restart costs) none does,
 * and the same physics seed gives the same factors. */
static void test_physics_learn(void **state)
{
    (void)state;
    int missed_blind = 0, missed_learn = 0, admitted_learn = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        job_queue q = {0};
        gen_queue(&q, seed, 150, 200);
        for (int learn = 0; learn <= 1; learn++) {
            sim_opts o;
            sim_opts_default(&o);
            o.speed_lo = 0.6;
            o.speed_hi = 1.0;
            o.physics_seed = seed;
            o.restart_scale = 2;
            o.learn = learn;
            sim s;
            ts_run(&s, &q, "n2g8", "ef", &o);
            sim_metrics m;
            sim_metrics_compute(&s, &m);
            if (learn) {
                missed_learn += m.missed;
                admitted_learn += m.admitted;
            } else {
                missed_blind += m.missed;
            }
            /* a model's jobs share one factor, in [0.6, 1] */
            for (int i = 0; i < s.n; i++) {
                assert_true(s.jobs[i].factor >= 0.6 &&
                            s.jobs[i].factor <= 1.0);
                for (int k = 0; k < i; k++)
                    if (strcmp(s.jobs[k].in->model, s.jobs[i].in->model) == 0)
                        assert_true(s.jobs[k].factor == s.jobs[i].factor);
            }
            assert_true(m.restarts_max >= m.restarts_p99 &&
                        m.restarts_p99 >= 0 && m.restarts_mean >= 0);
            sim_free(&s);
        }
        queue_free(&q);
    }
    assert_true(missed_blind > 0);
    assert_true(admitted_learn > 0);
    assert_int_equal(missed_learn, 0);
}

/* Same inputs, same results: twice in a row and in parallel threads. */
static void test_determinism(void **state)
{
    (void)state;
    job_queue q = {0};
    gen_queue(&q, 42, 120, 300);
    const char *pols[] = {"ef", "ef-noac", "edf", "edf-ac"};
    for (int k = 0; k < 4; k++) {
        sim a, b[4];
        run(&a, &q, "n2g8", pols[k], OVH_FIG12, 60);
        int ok = 1;
        #pragma omp parallel for num_threads(4)
        for (int r = 0; r < 4; r++) {
            cluster c;
            ef_err e;
            sim_opts o;
            sim_opts_default(&o);
            cluster_from_arg(&c, "n2g8", &e);
            if (sim_run(&b[r], &q, &c, sim_policy_find(pols[k]), &o, &e) !=
                EF_OK) {
                #pragma omp atomic write
                ok = 0;
            }
        }
        assert_true(ok);
        for (int r = 0; r < 4; r++) {
            for (int i = 0; i < a.n; i++) {
                assert_int_equal(a.jobs[i].state, b[r].jobs[i].state);
                assert_true(a.jobs[i].end == b[r].jobs[i].end);
                assert_int_equal(a.jobs[i].rescales, b[r].jobs[i].rescales);
            }
            sim_free(&b[r]);
        }
        sim_free(&a);
    }
    queue_free(&q);
}

/* Without overheads the ef policy makes the planner's decisions: the same
 * jobs admitted, and each completes within the second its plan says. */
static void test_agrees_with_planner(void **state)
{
    (void)state;
    for (uint64_t seed = 100; seed < 105; seed++) {
        job_queue q = {0};
        gen_queue(&q, seed, 80, 400);
        cluster c;
        ef_err e;
        assert_int_equal(cluster_from_arg(&c, "n2g8", &e), EF_OK);
        plan_opts po;
        plan_opts_default(&po);
        plan p;
        assert_int_equal(plan_build(&p, &q, &c, &po, &e), EF_OK);
        sim s;
        run(&s, &q, "n2g8", "ef", OVH_NONE, 60);
        for (int i = 0; i < q.n; i++) {
            int adm = p.jobs[i].decision != PLAN_REJECTED;
            assert_int_equal(adm, s.jobs[i].state != SJ_REJECTED);
            if (adm) {
                assert_true(s.jobs[i].end <= (double)p.jobs[i].planned_end);
                assert_true(s.jobs[i].end > (double)p.jobs[i].planned_end - 1);
            }
        }
        plan_free(&p);
        sim_free(&s);
        queue_free(&q);
    }
}

/* The Fig. 12 model: measured points, interpolation, migration, fallback. */
static void test_overhead_model(void **state)
{
    (void)state;
    assert_true(fabs(ovh_change("resnet50", 1, 2, 0) - 1.884) < 1e-12);
    assert_true(fabs(ovh_change("resnet50", 2, 1, 0) - 1.659) < 1e-12);
    assert_true(fabs(ovh_change("vgg16", 8, 16, 0) - 2.407) < 1e-12);
    assert_true(fabs(ovh_change("vgg16", 16, 8, 0) - 2.354) < 1e-12);
    assert_true(fabs(ovh_change("bert", 8, 8, 1) - 3.191) < 1e-12);
    assert_true(fabs(ovh_change("deepspeech2", 1, 2, 0) - 3.904) < 1e-12);
    assert_true(fabs(ovh_change("gpt2", 32, 64, 0) - 3.203) < 1e-12);
    assert_true(fabs(ovh_change("yolov3", 1, 2, 0) - 1.573) < 1e-12);
    assert_true(ovh_change("gpt2", 8, 8, 0) == 0);
    assert_true(ovh_change("gpt2", 8, 0, 0) == 0);
    /* 4 GPUs: a third of the way from the 2-GPU to the 16-GPU value */
    double c = ovh_change("inception3", 2, 4, 0);
    assert_true(fabs(c - (1.819 + (1.738 - 1.819) / 3)) < 1e-12);
    assert_true(ovh_reference(8, 1, 0, 128) == 2);
    assert_true(ovh_reference(8, 0, 0, 128) == 10);
    assert_true(ovh_reference(1, 0, 1, 512) == 7 + 47 + 2);
    /* by row: the figure's models each their own row, any other name the
     * generic one; every function by row gives what it gives by name */
    const char *names[] = {"bert", "deepspeech2", "gpt2", "inception3",
                           "resnet50", "vgg16", "yolov3", "b", ""};
    assert_true(ovh_lookup("bert") != ovh_lookup("gpt2"));
    assert_true(ovh_lookup("yolov3") == ovh_lookup("ncf"));
    assert_true(ovh_lookup("b") == ovh_lookup("yolov3"));
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        ovh_id id = ovh_lookup(names[k]);
        for (int g0 = 0; g0 <= 64; g0++)
            for (int g1 = 0; g1 <= 64; g1 += g1 < 4 ? 1 : 4)
                for (int mv = 0; mv < 2; mv++) {
                    assert_true(ovh_change_id(id, g0, g1, mv) ==
                                ovh_change(names[k], g0, g1, mv));
                    for (int m = OVH_FIG12; m <= OVH_RESTART; m++) {
                        assert_true(ovh_expect_id(m, id, g0, g1, mv) ==
                                    ovh_expect(m, names[k], g0, g1, mv));
                        assert_true(ovh_charge_id(m, id, g0, g1, mv, 1) ==
                                    ovh_charge(m, names[k], g0, g1, mv, 1));
                    }
                }
    }
}

/* A runaway stops with an internal error that says so: themis on jobs
 * whose leases never run out (demand over the cluster, 10^9 iterations
 * at 1 it/s: a point every slot for 10^9 s) passes the point bound (here
 * 2,000; SIM_MAX_POINTS by default) and sim_run fails at once instead of
 * running ~1.7e7 points. */
/* A job's reject reason and at-risk note (sim_reject, sim_flag_at_risk):
 * none until set, cut at SIM_REASON_MAX and SIM_RISK_MAX bytes, the first
 * flag kept, an empty one read as "at risk"; sim_free frees them. */
static void test_reason_and_risk(void **state)
{
    (void)state;
    char long_text[400];
    for (int i = 0; i < 399; i++)
        long_text[i] = (char)('a' + i % 26);
    long_text[399] = '\0';
    sim s;
    memset(&s, 0, sizeof s);
    s.n = 3;
    s.jobs = ef_calloc(3, sizeof *s.jobs);
    s.act = ef_malloc(3 * sizeof *s.act);
    for (int i = 0; i < 3; i++)
        assert_true(s.jobs[i].reason == NULL && s.jobs[i].risk == NULL);
    sim_reject(&s, 0, -1, long_text);
    assert_int_equal(strlen(s.jobs[0].reason), SIM_REASON_MAX);
    assert_memory_equal(s.jobs[0].reason, long_text, SIM_REASON_MAX);
    sim_reject(&s, 1, 120, NULL);
    assert_string_equal(s.jobs[1].reason, "");
    sim_admit(&s, 2);
    sim_flag_at_risk(&s, 2, long_text);
    sim_flag_at_risk(&s, 2, "later");
    assert_int_equal(strlen(s.jobs[2].risk), SIM_RISK_MAX);
    assert_memory_equal(s.jobs[2].risk, long_text, SIM_RISK_MAX);
    assert_null(s.jobs[0].risk);
    sim_metrics m;
    sim_metrics_compute(&s, &m);
    assert_int_equal(m.at_risk, 1);
    sim_free(&s);
    memset(&s, 0, sizeof s);
    s.n = 1;
    s.jobs = ef_calloc(1, sizeof *s.jobs);
    s.act = ef_malloc(sizeof *s.act);
    sim_admit(&s, 0);
    sim_flag_at_risk(&s, 0, "");
    assert_string_equal(s.jobs[0].risk, "at risk");
    sim_free(&s);
}

static void test_runaway_stops(void **state)
{
    (void)state;
    job_queue q = {0};
    ts_load(&q, "job_id,submit_time,iteration,model_name,ddl,batch_size,"
                "num_gpu\nJ1,0,1000000000,lin,,64,4\n"
                "J2,0,1000000000,lin,,64,4\nJ3,0,100,lin,,64,4\n", &toy);
    cluster c;
    ef_err e = {0};
    assert_int_equal(cluster_from_arg(&c, "n1g4", &e), EF_OK);
    sim_opts o;
    sim_opts_default(&o);
    o.max_points = 2000;
    sim s;
    assert_int_equal(sim_run(&s, &q, &c, sim_policy_find("themis"), &o, &e),
                     EF_ERR);
    assert_int_equal(e.kind, EF_E_INTERNAL);
    assert_non_null(strstr(e.msg, "the simulation ran away: policy themis"));
    assert_non_null(strstr(e.msg, "after 2000 scheduling points"));
    sim_free(&s);
    queue_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edf_exact),
        cmocka_unit_test(test_reason_and_risk),
        cmocka_unit_test(test_ef_single_overhead),
        cmocka_unit_test(test_admission_all_policies),
        cmocka_unit_test(test_edf_preemption),
        cmocka_unit_test(test_edf_ac_reference_rule),
        cmocka_unit_test(test_guarantee),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_physics_learn),
        cmocka_unit_test(test_agrees_with_planner),
        cmocka_unit_test(test_overhead_model),
        cmocka_unit_test(test_runaway_stops),
    };
    return cmocka_run_group_tests(tests, toy_setup, toy_teardown);
}
