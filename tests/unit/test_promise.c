/* test_promise.c: the overhead-aware promise (planner/promise.h) on
 * hand-computed paths, and what the planner does with it (plan.h): jobs
 * refused when their overheads do not fit, a job that falls behind
 * flagged at risk and planned apart without blocking the others, and the
 * reference implementation's admission (all or none, vetoed by a late
 * job). The toy model "lin" runs g it/s on g GPUs. */
#include "testutil.h"

#include <math.h>

#include "common/util.h"
#include "planner/plan.h"
#include "planner/promise.h"
#include "simulator/sim.h"
#include "testplan.h"
#include "testsim.h"

static curve_set toy;
static curve_model toy_model;
static const curve_row *lin;

static int setup(void **state)
{
    (void)state;
    static const char *const name[] = {"lin"};
    static const char *const csv[] = {"global_batch_size,1,2,4,8\n"
                                      "64,1,2,4,8\n"};
    if (ts_toy(&toy, &toy_model, 1, name, csv) != 0)
        return -1;
    lin = &toy_model.rows[0];
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    ts_toy_free(&toy_model, 1);
    return 0;
}

/* A reservation of n segments {start, end, gpus}. */
static resv mk_resv(const seg *s, int n)
{
    resv r = {0};
    r.s = ef_malloc((size_t)n * sizeof *r.s);
    memcpy(r.s, s, (size_t)n * sizeof *s);
    r.n = r.cap = n;
    r.end = s[n - 1].end;
    return r;
}

static double work(ovh_mode mode, int migrations, int64_t index0, int held,
                   double owed, const seg *s, int n, int64_t deadline)
{
    prm_model m = {mode, 8, 60, 60, index0, migrations};
    prm_start st = {0, held, held ? lin : NULL, owed, ovh_lookup("lin"), 0, 1};
    resv r = mk_resv(s, n);
    double w = prm_resv_work(&m, &st, NULL, &r, lin, 0, deadline);
    resv_free(&r);
    return w;
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-6)

/* restart: a start costs 30 s (2 it/s x 90 s = 180), a forced migration
 * allowance another 30 s at the largest size (60); a job already on its
 * GPUs pays what it owes and nothing for the kept size; a gap stops it,
 * so the second stretch is a new start. */
static void test_restart_paths(void **state)
{
    (void)state;
    seg two[] = {{0, 120, 2}};
    NEAR(work(OVH_RESTART, 0, 0, 0, 0, two, 1, 1000), 180);
    NEAR(work(OVH_RESTART, 1, 0, 0, 0, two, 1, 1000), 120);
    NEAR(work(OVH_RESTART, 0, 0, 2, 10, two, 1, 1000), 220);
    seg gap[] = {{0, 60, 2}, {120, 180, 2}};
    NEAR(work(OVH_RESTART, 0, 0, 2, 0, gap, 2, 1000), 120 + 60);
    /* a resize 2 -> 4 at 60 costs 30 s at 4 it/s */
    seg up[] = {{0, 60, 2}, {60, 120, 4}};
    NEAR(work(OVH_RESTART, 0, 0, 2, 0, up, 2, 1000), 120 + 30 * 4);
    /* work counts only up to the deadline; none charges nothing */
    NEAR(work(OVH_NONE, 3, 0, 0, 0, two, 1, 90), 180);
}

/* fig12: "lin" takes the figure's generic row: a start on 2 GPUs costs
 * its 1->2 value, 1.573 s. */
static void test_fig12_path(void **state)
{
    (void)state;
    seg two[] = {{0, 60, 2}};
    NEAR(work(OVH_FIG12, 0, 0, 0, 0, two, 1, 1000), (60 - 1.573) * 2);
    NEAR(ovh_charge(OVH_FIG12, "lin", 0, 2, 0, 0), 1.573);
}

/* reference on 8 GPUs: every slot a point, 2 s cached; the change at 0
 * (1 -> 2 GPUs) is uncached: 2 + 2 (log2 2 + 1) = 6 s; so 3 slots give
 * 54 + 58 + 58 = 170 s at 2 it/s. A restart (point index 60 in the
 * path) costs 2 + 27 + 4 - 2 and its next point 4 more: 35 s at 2 it/s. */
static void test_reference_path(void **state)
{
    (void)state;
    seg three[] = {{0, 180, 2}};
    NEAR(work(OVH_REFERENCE, 0, 5, 1, 0, three, 1, 1000), 340);
    NEAR(work(OVH_REFERENCE, 0, 59, 1, 0, three, 1, 1000), 340 - 70);
    /* a restart at the point before leaves only its uncached point */
    NEAR(work(OVH_REFERENCE, 0, 61, 1, 0, three, 1, 1000), 340 - 8);
}

/* prm_finish: a start (30 s) then 100 it at 2 it/s: second 80. */
/* The walk's charges come through a memo (promise.c): every model, size
 * and change, asked in three orders (cold, then reversed, then strided,
 * so entries are reused and replaced), gives exactly the charge
 * ovh_charge_id gives, as the one-piece path's work shows: (600 s less
 * the change's cost) x g it/s, less the allowance of 'mig' migrations. */
static void test_charge_memo(void **state)
{
    (void)state;
    static const char *const models[] = {"bert", "deepspeech2", "gpt2",
                                         "inception3", "resnet50", "vgg16",
                                         "lin"};
    static const ovh_mode modes[] = {OVH_FIG12, OVH_RESTART};
    static const int held[] = {0, 1, 2, 4, 8};
    enum { NM = 7, NO = 2, NH = 5, NG = 5, NMIG = 3 };
    const int ncase = NM * NO * NH * NG * NMIG;
    for (int round = 0; round < 3; round++) {
        for (int c = 0; c < ncase; c++) {
            int x = round == 0 ? c : round == 1 ? ncase - 1 - c
                                                : (c * 7) % ncase;
            int mig = x % NMIG, gi = x / NMIG % NG, hi = x / NMIG / NG % NH;
            int oi = x / NMIG / NG / NH % NO, mi = x / NMIG / NG / NH / NO;
            /* sizes 1..8 run at g it/s; 1 << 20 is past the memo's key
             * (and runs at 0) */
            int g = gi < 4 ? 1 << gi : 1 << 20, h = held[hi];
            ovh_id id = ovh_lookup(models[mi]);
            prm_model m = {modes[oi], 8, 60, 60, 0, mig};
            prm_start st = {0, h, h ? lin : NULL, 0, id, 0, 1};
            prm_piece p = {0, 600, g, lin};
            double tp = g <= 8 ? (double)g : 0;
            double c1 = g != h ? ovh_charge_id(modes[oi], id, h, g, 0, 0) : 0;
            double w = (600.0 - c1) * tp;
            w -= mig * 1.0 * ovh_charge_id(modes[oi], id, g, g, 1, 0) * tp;
            assert_true(prm_work(&m, &st, &p, 1, 600) == (w > 0 ? w : 0));
        }
    }
}

static void test_finish(void **state)
{
    (void)state;
    seg two[] = {{0, 120, 2}};
    resv r = mk_resv(two, 1);
    prm_model m = {OVH_RESTART, 8, 60, 60, 0, 0};
    prm_start st = {0, 0, NULL, 0, ovh_lookup("lin"), 0, 1};
    assert_int_equal(prm_finish(&m, &st, &r, lin, 100), 80);
    assert_int_equal(prm_finish(&m, &st, &r, lin, 181), -1);
    resv_free(&r);
}

static void load(job_queue *q, const char *rows)
{
    char csv[8192];
    snprintf(csv, sizeof csv, "job_id,submit_time,iteration,model_name,ddl,"
             "batch_size\n%s", rows);
    ts_load(q, csv, &toy);
}

/* Plan queue q on cluster 'cl' with options o and check the plan. */
static void build_checked(plan *p, const job_queue *q, const plan_opts *o,
                          const char *cl)
{
    cluster c;
    ef_err e;
    assert_int_equal(cluster_from_arg(&c, cl, &e), EF_OK);
    assert_int_equal(plan_build(p, q, &c, o, &e), EF_OK);
    assert_int_equal(plan_check(p, &e), EF_OK);
}

static const plan_job *by_id(const plan *p, const char *id)
{
    for (int i = 0; i < p->njobs; i++)
        if (strcmp(p->jobs[i].in->id, id) == 0)
            return &p->jobs[i];
    fail_msg("no job %s", id);
    return NULL;
}

/* 600 it by 78 s fits 8 GPUs (75 s) without overheads, not with any
 * model's start and migration allowance (fig12: 1.7 s + 4.9 s): refused,
 * with an earliest deadline that pays them (restart: the 30 s start at
 * least); every plan passes plan_check, which counts the overheads. */
static void test_plan_counts_overheads(void **state)
{
    (void)state;
    job_queue q = {0};
    load(&q, "A,0,600,lin,78,64\nB,0,600,lin,5000,64\n");
    for (int mode = 0; mode < 4; mode++) {
        plan_opts o;
        plan_opts_default(&o);
        o.overhead = (ovh_mode)mode;
        plan p;
        build_checked(&p, &q, &o, "n1g8");
        const plan_job *a = by_id(&p, "A");
        if (mode == OVH_NONE) {
            assert_int_equal(a->decision, PLAN_ADMITTED);
        } else {
            assert_int_equal(a->decision, PLAN_REJECTED);
            assert_true(a->earliest_feasible_deadline > 75);
        }
        if (mode == OVH_RESTART)
            assert_true(a->earliest_feasible_deadline >= 105);
        assert_int_equal(by_id(&p, "B")->decision, PLAN_ADMITTED);
        plan_free(&p);
    }
    queue_free(&q);
}

/* A queue re-planned from a state file: R runs on all 4 GPUs and keeps
 * them (S waits), so it pays no start; plan_check must count the same (it charged
 * a start for a job it had not seen run, and refused the plan), under
 * every overhead model. */
static void test_running_job_keeps_its_gpus(void **state)
{
    (void)state;
    static const char q_json[] =
        "{\"jobs\": [{\"id\": \"R\", \"model\": \"lin\", "
        "\"batch_size\": 64, \"iterations\": 1000, \"iterations_done\": 400, "
        "\"submit_time\": 0, \"deadline\": 900, "
        "\"placement\": [{\"node\": 0, \"gpus\": [0, 1, 2, 3]}]}, "
        "{\"id\": \"S\", \"model\": \"lin\", \"batch_size\": 64, "
        "\"iterations\": 300, \"submit_time\": 0, \"deadline\": 900}]}";
    job_queue q = {0};
    ef_err e;
    assert_int_equal(queue_parse_json(&q, "q.json", q_json, strlen(q_json),
                                      &e), EF_OK);
    assert_int_equal(queue_resolve(&q, &toy, &e), EF_OK);
    for (int mode = 0; mode < 4; mode++) {
        plan_opts o;
        plan_opts_default(&o);
        o.now = 0;
        o.overhead = (ovh_mode)mode;
        plan p;
        build_checked(&p, &q, &o, "n1g4");
        const plan_job *r = by_id(&p, "R");
        assert_int_equal(r->decision, PLAN_ADMITTED);
        assert_int_equal(r->resizes + r->migrations, 0);
        assert_int_equal(p.slots[0].nalloc, 1);
        plan_free(&p);
    }
    queue_free(&q);
}

/* Two admitted jobs; by 600 A has made no progress and has 3,200 it left
 * (more than 8 GPUs can do by 1000): A is flagged at risk, with its
 * reason, and planned apart; B keeps a reservation that covers it; C,
 * arriving then, is admitted (a late job does not veto it). With the
 * reference admission, the late A vetoes C. */
static void test_late_job_isolated(void **state)
{
    (void)state;
    job_queue q = {0};
    load(&q, "A,0,600,lin,1000,64\nB,0,600,lin,1000,64\n"
             "C,600,600,lin,1600,64\n");
    cluster c;
    ef_err e;
    assert_int_equal(cluster_from_arg(&c, "n1g8", &e), EF_OK);
    for (int ref = 0; ref <= 1; ref++) {
        plan_opts o;
        plan_opts_default(&o);
        o.now = 0;
        o.overhead = ref ? OVH_NONE : OVH_RESTART;
        o.admission_reference = ref;
        plan p;
        assert_int_equal(plan_init(&p, &q, &c, &o, &e), EF_OK);
        int act[3], na = 0, rel0[] = {0, 1}, rel1[] = {2};
        plan_point(&p, 0, act, &na, rel0, 2);
        assert_int_equal(na, 2);
        assert_int_equal(p.jobs[0].decision, PLAN_ADMITTED);
        assert_int_equal(p.jobs[1].decision, PLAN_ADMITTED);
        plan_set_remaining(&p, 0, 3200);
        plan_set_point_index(&p, 1);
        plan_point(&p, 600, act, &na, rel1, 1);
        const plan_job *a = &p.jobs[0], *b = &p.jobs[1], *cj = &p.jobs[2];
        if (!ref) {
            assert_true(a->at_risk);
            assert_non_null(strstr(a->risk, "at risk since +10m: "));
            assert_int_equal(p.at_risk, 1);
            assert_false(b->at_risk);
            assert_true(b->r.n > 0 && b->r.real_end <= 1000);
            assert_int_equal(cj->decision, PLAN_ADMITTED);
            assert_int_equal(na, 3);
        } else {
            assert_int_equal(cj->decision, PLAN_REJECTED);
            assert_non_null(strstr(cj->reason, "reference admission"));
            assert_int_equal(na, 2);
        }
        plan_free(&p);
    }
    queue_free(&q);
}

/* The reference admission decides a point's arrivals together: D fits,
 * E cannot make its deadline; by default D is admitted and E refused,
 * with the reference both are refused. */
static void test_reference_all_or_none(void **state)
{
    (void)state;
    job_queue q = {0};
    load(&q, "D,0,600,lin,1000,64\nE,0,9000,lin,600,64\n");
    for (int ref = 0; ref <= 1; ref++) {
        plan_opts o;
        plan_opts_default(&o);
        o.admission_reference = ref;
        plan p;
        build_checked(&p, &q, &o, "n1g8");
        assert_int_equal(by_id(&p, "E")->decision, PLAN_REJECTED);
        assert_int_equal(by_id(&p, "D")->decision,
                         ref ? PLAN_REJECTED : PLAN_ADMITTED);
        plan_free(&p);
    }
    queue_free(&q);
}

/* Simulated with every overhead model, no admitted job of a loaded toy
 * queue misses, and nothing is flagged (the simulator's physics is the
 * planner's model). */
static void test_sim_keeps_promises(void **state)
{
    (void)state;
    char rows[4096];
    size_t off = 0;
    tp_seed(7);
    for (int i = 0; i < 40; i++) {
        int sub = (int)(tp_rnd() % 3000), it = 200 + (int)(tp_rnd() % 4000);
        int dl = sub + it / 4 + 60 + (int)(tp_rnd() % 2000);
        off += (size_t)snprintf(rows + off, sizeof rows - off,
                                "J%02d,%d,%d,lin,%d,64\n", i, sub, it, dl);
    }
    job_queue q = {0};
    load(&q, rows);
    for (int mode = 0; mode < 4; mode++) {
        sim_opts o;
        sim_opts_default(&o);
        o.overhead = (ovh_mode)mode;
        sim s;
        ts_run(&s, &q, "n1g8", "ef", &o);
        sim_metrics m;
        sim_metrics_compute(&s, &m);
        assert_true(m.admitted > 10 && m.rejected > 0);
        assert_int_equal(m.missed, 0);
        assert_int_equal(m.at_risk, 0);
        sim_free(&s);
    }
    queue_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restart_paths),
        cmocka_unit_test(test_fig12_path),
        cmocka_unit_test(test_reference_path),
        cmocka_unit_test(test_charge_memo),
        cmocka_unit_test(test_finish),
        cmocka_unit_test(test_plan_counts_overheads),
        cmocka_unit_test(test_running_job_keeps_its_gpus),
        cmocka_unit_test(test_late_job_isolated),
        cmocka_unit_test(test_reference_all_or_none),
        cmocka_unit_test(test_sim_keeps_promises),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
