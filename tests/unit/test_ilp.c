/*
 * test_ilp.c: the ILP oracle (solver/ilp.h).
 * - hand-made instances with a known optimum: one where the greedy
 *   planner provably admits fewer jobs; GPU-time as the second order;
 *   the deadline slot counted only up to the deadline; release on the
 *   slot grid; jobs that cannot finish even alone;
 * - must-admit jobs: a forced choice, and an infeasible model;
 * - limits and failures: a spent time limit (no incumbent), a node
 *   budget (feasible, reproducible), a GLPK fatal error provoked by the
 *   test hook (an error, never an abort; the next solve works);
 * - seeded random instances from the trace generator: whenever the ILP
 *   proves its admitted count, greedy admits no more; the bound is never
 *   below greedy; the ILP's plan passes plan_check; same inputs, same
 *   answer;
 * - the oracle's report (efplan-oracle): its bytes for a solved instance,
 *   nulls for an infeasible one, keys sorted in every object; its
 *   verdict (ilp_verdict_of): proven, a range from greedy's count, no
 *   answer when no plan admits the --must-admit jobs or no LP was solved,
 *   infeasible.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "planner/plan.h"
#include "simulator/gen.h"
#include "solver/ilp.h"
#include "testplan.h"
#include "testgen.h"
#include "testutil.h"

/* A toy model: 1.0 it/s on one GPU, 1.8 on two. */
static curve_model g_toy;
static curve_set g_toyset;

static int setup(void **state)
{
    static const char csv[] = "global_batch_size,1,2\n1,1.0,1.8\n";
    ef_err e;
    if (curve_parse_csv(&g_toy, "toy", "toy.csv", csv, strlen(csv), &e) !=
        EF_OK)
        return -1;
    g_toyset.models = &g_toy;
    g_toyset.nmodels = 1;
    return tp_setup(state);
}

static int teardown(void **state)
{
    curve_model_free(&g_toy);
    return tp_teardown(state);
}

/* One solved instance. */
typedef struct inst {
    job_queue q;
    cluster c;
    plan greedy;
    ilp_result r;
    int rc;
    ef_err e;
} inst;

/* Load a JSON queue of toy jobs, plan it greedily and solve the ILP. */
static void solve_toy(inst *t, const char *jobs, const char *cl, int slot,
                      const ilp_opts *extra)
{
    memset(t, 0, sizeof *t);
    assert_int_equal(queue_parse_json(&t->q, "t.json", jobs, strlen(jobs),
                                      &t->e), EF_OK);
    assert_int_equal(queue_resolve(&t->q, &g_toyset, &t->e), EF_OK);
    assert_int_equal(cluster_from_arg(&t->c, cl, &t->e), EF_OK);
    plan_opts po;
    plan_opts_default(&po);
    po.slot = slot;
    po.now = 0;
    assert_int_equal(plan_build(&t->greedy, &t->q, &t->c, &po, &t->e), EF_OK);
    ilp_opts o;
    if (extra)
        o = *extra;
    else
        ilp_opts_default(&o);
    o.slot = slot;
    o.now = 0;
    o.warm = &t->greedy;
    t->rc = ilp_solve(&t->q, &t->c, &o, &t->r, &t->e);
}

static void inst_free(inst *t)
{
    ilp_result_free(&t->r);
    plan_free(&t->greedy);
    queue_free(&t->q);
}

/* The ILP's schedule passes the planner's checker. */
static void check_plan(const inst *t)
{
    plan p;
    ef_err e = {0};
    assert_int_equal(ilp_to_plan(&t->r, &t->q, &t->c, &p, &e), EF_OK);
    if (plan_check(&p, &e) != EF_OK)
        fail_msg("ILP plan fails its check: %s", e.msg);
    assert_int_equal(p.admitted, t->r.admitted);
    assert_true(fabs(p.promised_gpu_seconds - t->r.gpu_seconds) < 1e-6);
    plan_free(&p);
}

static int admitted_id(const inst *t, const char *id)
{
    for (int j = 0; j < t->q.n; j++)
        if (strcmp(t->q.jobs[j].id, id) == 0)
            return t->r.admit[j];
    fail_msg("no job %s", id);
    return 0;
}

#define JOB(id, it, sub, dl)                                                  \
    "{\"id\": \"" id "\", \"model\": \"toy\", \"batch_size\": 1, "           \
    "\"iterations\": " #it ", \"submit_time\": " #sub ", \"deadline\": " #dl "}"

/* First come, first served loses: A (first in the queue) fills the only
 * GPU to its deadline, so greedy admits 1; B then C, back to back, make
 * 2 (all three need 1850 s of work, the GPU has 1000). */
static void solve_greedy_suboptimal(inst *t)
{
    solve_toy(t, "{\"jobs\": [" JOB("A", 950, 0, 1000) ", "
              JOB("B", 450, 0, 500) ", " JOB("C", 450, 0, 1000) "]}",
              "n1g1", 100, NULL);
    assert_int_equal(t->rc, EF_OK);
}

static void test_greedy_suboptimal(void **state)
{
    (void)state;
    inst t;
    solve_greedy_suboptimal(&t);
    assert_int_equal(t.greedy.admitted, 1);
    assert_int_equal(t.greedy.jobs[0].decision, PLAN_ADMITTED);
    assert_int_equal(t.r.status, ILP_OPTIMAL);
    assert_int_equal(t.r.admitted, 2);
    assert_int_equal(t.r.bound, 2);
    assert_int_equal(t.r.lp_bound, 2);
    assert_false(admitted_id(&t, "A"));
    assert_true(admitted_id(&t, "B"));
    assert_true(admitted_id(&t, "C"));
    /* 450 s of work holds a GPU for 5 slots of 100 s: 10 GPU-slots */
    assert_true(fabs(t.r.gpu_seconds - 1000) < 1e-9);
    assert_true(fabs(t.r.gpu_seconds_bound - 1000) < 1e-9);
    assert_int_equal(t.r.gpu_status, ILP_OPTIMAL);
    assert_true(t.r.warm_start != -1); /* offered only if the root branches */
    check_plan(&t);
    inst_free(&t);
}

/* Only one of J1 (2 GPUs for both slots) and J2 fits; both count 1, so
 * the least GPU-time decides: J2 (2 GPU-slots), not J1 (4). */
static void test_gpu_time_second(void **state)
{
    (void)state;
    inst t;
    solve_toy(&t, "{\"jobs\": [" JOB("J1", 340, 0, 200) ", "
              JOB("J2", 150, 0, 200) "]}", "n1g2", 100, NULL);
    assert_int_equal(t.rc, EF_OK);
    assert_int_equal(t.greedy.admitted, 1);
    assert_int_equal(t.r.status, ILP_OPTIMAL);
    assert_int_equal(t.r.admitted, 1);
    assert_true(admitted_id(&t, "J2"));
    assert_true(fabs(t.r.gpu_seconds - 200) < 1e-9);
    /* the greedy admitted J1: more GPU-time for the same count */
    assert_true(t.greedy.promised_gpu_seconds > t.r.gpu_seconds);
    check_plan(&t);
    inst_free(&t);
}

/* The slot holding the deadline counts only up to it; release waits for
 * the next slot boundary; a job that cannot finish alone is hopeless. */
static void test_deadline_and_release(void **state)
{
    (void)state;
    inst t;
    /* 100 s + 60 s >= 150: admitted; 100 + 40 < 150: hopeless */
    solve_toy(&t, "{\"jobs\": [" JOB("in", 150, 0, 160) "]}", "n1g1", 100,
              NULL);
    assert_int_equal(t.r.status, ILP_OPTIMAL);
    assert_int_equal(t.r.admitted, 1);
    assert_int_equal(t.r.hopeless, 0);
    check_plan(&t);
    inst_free(&t);
    solve_toy(&t, "{\"jobs\": [" JOB("out", 150, 0, 140) "]}", "n1g1", 100,
              NULL);
    assert_int_equal(t.r.status, ILP_OPTIMAL);
    assert_int_equal(t.r.admitted, 0);
    assert_int_equal(t.r.hopeless, 1);
    assert_int_equal(t.r.bound, 0);
    inst_free(&t);
    /* submitted at 50: released at 100; slots 1 and half of 2 */
    solve_toy(&t, "{\"jobs\": [" JOB("z", 10, 0, 100) ", "
              JOB("late", 150, 50, 260) ", " JOB("later", 150, 50, 240)
              "]}", "n1g1", 100, NULL);
    assert_int_equal(t.r.status, ILP_OPTIMAL);
    assert_true(admitted_id(&t, "late"));
    assert_false(admitted_id(&t, "later"));
    assert_int_equal(t.r.hopeless, 1);
    check_plan(&t);
    inst_free(&t);
    /* no deadline jobs at all: nothing to decide, optimal 0 */
    solve_toy(&t, "{\"jobs\": [{\"id\": \"be\", \"model\": \"toy\", "
              "\"batch_size\": 1, \"iterations\": 100, \"submit_time\": 0}]}",
              "n1g1", 100, NULL);
    assert_int_equal(t.r.status, ILP_OPTIMAL);
    assert_int_equal(t.r.admitted, 0);
    assert_int_equal(t.r.deadline_jobs, 0);
    check_plan(&t);
    inst_free(&t);
}

static void test_must_admit(void **state)
{
    (void)state;
    const char *q = "{\"jobs\": [" JOB("J1", 340, 0, 200) ", "
                    JOB("J2", 150, 0, 200) "]}";
    int must[2] = {1, 0};
    ilp_opts o;
    ilp_opts_default(&o);
    o.must = must;
    inst t;
    solve_toy(&t, q, "n1g2", 100, &o);
    assert_int_equal(t.r.status, ILP_OPTIMAL);
    assert_true(admitted_id(&t, "J1"));
    assert_false(admitted_id(&t, "J2"));
    inst_free(&t);
    /* both: they do not fit together */
    must[1] = 1;
    solve_toy(&t, q, "n1g2", 100, &o);
    assert_int_equal(t.rc, EF_OK);
    assert_int_equal(t.r.status, ILP_INFEASIBLE);
    assert_null(t.r.admit);
    plan p;
    ef_err e;
    assert_int_equal(ilp_to_plan(&t.r, &t.q, &t.c, &p, &e), EF_ERR);
    assert_int_equal(e.kind, EF_E_INFEASIBLE);
    inst_free(&t);
    /* a must job that cannot finish even alone: infeasible too */
    int must1[1] = {1};
    o.must = must1;
    solve_toy(&t, "{\"jobs\": [" JOB("out", 150, 0, 140) "]}", "n1g1", 100,
              &o);
    assert_int_equal(t.r.status, ILP_INFEASIBLE);
    inst_free(&t);
    /* a best-effort job cannot be a must */
    solve_toy(&t, "{\"jobs\": [{\"id\": \"be\", \"model\": \"toy\", "
              "\"batch_size\": 1, \"iterations\": 100, \"submit_time\": 0}]}",
              "n1g1", 100, &o);
    assert_int_equal(t.rc, EF_ERR);
    assert_int_equal(t.e.kind, EF_E_USAGE);
    inst_free(&t);
}

static void test_glpk_failure_caught(void **state)
{
    (void)state;
    const char *q = "{\"jobs\": [" JOB("A", 950, 0, 1000) ", "
                    JOB("B", 450, 0, 500) "]}";
    ilp_opts o;
    ilp_opts_default(&o);
    o.fault = ILP_FAULT_GLPK;
    inst t;
    solve_toy(&t, q, "n1g1", 100, &o);
    assert_int_equal(t.rc, EF_ERR);
    assert_int_equal(t.e.kind, EF_E_INTERNAL);
    assert_non_null(strstr(t.e.msg, "GLPK failed: glp_set_col_bnds"));
    assert_null(t.r.admit);
    inst_free(&t);
    /* GLPK works again afterwards */
    solve_toy(&t, q, "n1g1", 100, NULL);
    assert_int_equal(t.rc, EF_OK);
    assert_int_equal(t.r.status, ILP_OPTIMAL);
    assert_int_equal(t.r.admitted, 1);
    inst_free(&t);
}

/* A time limit already spent: not even the LP runs; the bound is the
 * count of jobs that could finish alone. */
static void test_time_limit(void **state)
{
    (void)state;
    ilp_opts o;
    ilp_opts_default(&o);
    o.time_limit = 1e-9;
    inst t;
    solve_toy(&t, "{\"jobs\": [" JOB("A", 950, 0, 1000) ", "
              JOB("B", 450, 0, 500) ", " JOB("C", 450, 0, 1000) ", "
              JOB("out", 150, 0, 140) "]}", "n1g1", 100, &o);
    assert_int_equal(t.rc, EF_OK);
    assert_int_equal(t.r.status, ILP_NO_INCUMBENT);
    assert_int_equal(t.r.limit_hit, 1);
    assert_int_equal(t.r.bound, 3);
    assert_int_equal(t.r.lp_bound, -1);
    assert_null(t.r.admit);
    plan p;
    ef_err e;
    assert_int_equal(ilp_to_plan(&t.r, &t.q, &t.c, &p, &e), EF_ERR);
    inst_free(&t);
}

/* --write-lp: the one weighted model read back and solved by GLPK itself
 * has the lexicographic optimum's value adm - U / (N*T + 1). */
static void check_written_lp(const char *jobs, const char *cl, int slot)
{
    char path[] = "/tmp/efplan-test-ilp-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    ilp_opts o;
    ilp_opts_default(&o);
    o.write_lp = path;
    inst t;
    solve_toy(&t, jobs, cl, slot, &o);
    assert_int_equal(t.r.status, ILP_OPTIMAL);
    double U = t.r.gpu_seconds / slot;
    double want = t.r.admitted - U / ((double)t.c.total_gpus * t.r.nslots + 1);
    glp_term_out(GLP_OFF);
    glp_prob *P = glp_create_prob();
    assert_int_equal(glp_read_lp(P, NULL, path), 0);
    glp_iocp io;
    glp_init_iocp(&io);
    io.presolve = GLP_ON;
    io.msg_lev = GLP_MSG_OFF;
    assert_int_equal(glp_intopt(P, &io), 0);
    assert_int_equal(glp_mip_status(P), GLP_OPT);
    if (fabs(glp_mip_obj_val(P) - want) > 1e-9)
        fail_msg("LP file optimum %.12g, expected %.12g", glp_mip_obj_val(P),
                 want);
    glp_delete_prob(P);
    glp_free_env();
    unlink(path);
    inst_free(&t);
}

static void test_written_lp(void **state)
{
    (void)state;
    check_written_lp("{\"jobs\": [" JOB("A", 950, 0, 1000) ", "
                     JOB("B", 450, 0, 500) ", " JOB("C", 450, 0, 1000) "]}",
                     "n1g1", 100);
    check_written_lp("{\"jobs\": [" JOB("J1", 340, 0, 200) ", "
                     JOB("J2", 150, 0, 200) "]}", "n1g2", 100);
}

/* ---- seeded random instances from the trace generator -------------------- */

static int g_warm_accepted, g_greedy_behind;

static void check_random(uint64_t seed)
{
    job_queue q;
    int n = 6 + (int)(seed % 7);
    int slot = tg_queue(&q, seed, n, 900, 0.3, 1.0, 0);
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
    /* with the greedy start there is always an incumbent */
    assert_true(r.status == ILP_OPTIMAL || r.status == ILP_FEASIBLE);
    assert_true(r.warm_start != -1);
    g_warm_accepted += r.warm_start == 1;
    g_greedy_behind += r.bound == r.admitted && r.admitted > g.admitted;
    assert_true(r.bound >= r.admitted);
    assert_true(r.admitted >= g.admitted);
    assert_true(r.bound <= r.lp_bound);
    if (r.status == ILP_OPTIMAL) {
        assert_int_equal(r.bound, r.admitted);
        assert_true(fabs(r.gpu_seconds - r.gpu_seconds_bound) < 1e-6);
        if (r.admitted == g.admitted)
            assert_true(r.gpu_seconds <= g.promised_gpu_seconds + 1e-6);
    }
    if (r.gpu_seconds_bound >= 0)
        assert_true(r.gpu_seconds >= r.gpu_seconds_bound - 1e-6);
    /* the ILP's schedule passes the planner's checker */
    plan p;
    assert_int_equal(ilp_to_plan(&r, &q, &c, &p, &e), EF_OK);
    if (plan_check(&p, &e) != EF_OK)
        fail_msg("seed %llu: ILP plan: %s", (unsigned long long)seed, e.msg);
    assert_int_equal(p.admitted, r.admitted);
    /* same inputs, same answer (the node budget is reproducible) */
    ilp_result r2;
    assert_int_equal(ilp_solve(&q, &c, &o, &r2, &e), EF_OK);
    assert_int_equal(r2.status, r.status);
    assert_int_equal(r2.admitted, r.admitted);
    assert_int_equal(r2.bound, r.bound);
    assert_int_equal(r2.nodes, r.nodes);
    assert_memory_equal(r2.size, r.size,
                        (size_t)q.n * (size_t)r.nslots * sizeof(int));
    ilp_result_free(&r2);
    plan_free(&p);
    ilp_result_free(&r);
    plan_free(&g);
    queue_free(&q);
}

static void test_random(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++)
        check_random(seed);
    /* the property is not vacuous: the greedy start is used, and greedy
     * is provably behind on some instances */
    assert_true(g_warm_accepted > 0);
    assert_true(g_greedy_behind > 0);
}

/* A node budget stops the search reproducibly, with an honest status. */
static void test_node_limit(void **state)
{
    (void)state;
    job_queue q;
    int slot = tg_queue(&q, 1, 12, 1200, 0.4, 1.0, 0);
    cluster c;
    ef_err e = {0};
    assert_int_equal(cluster_from_arg(&c, "n2g8", &e), EF_OK);
    plan_opts po;
    plan_opts_default(&po);
    po.slot = slot;
    plan g;
    assert_int_equal(plan_build(&g, &q, &c, &po, &e), EF_OK);
    ilp_opts o;
    ilp_opts_default(&o);
    o.slot = slot;
    o.now = g.now;
    o.node_limit = 5;
    o.warm = &g;
    ilp_result r;
    assert_int_equal(ilp_solve(&q, &c, &o, &r, &e), EF_OK);
    assert_int_equal(r.limit_hit, 2);
    assert_int_equal(r.nodes, 5);
    assert_int_equal(r.status, ILP_FEASIBLE);
    assert_true(r.bound >= r.admitted);
    assert_true(r.admitted >= g.admitted);
    plan p;
    assert_int_equal(ilp_to_plan(&r, &q, &c, &p, &e), EF_OK);
    assert_int_equal(plan_check(&p, &e), EF_OK);
    plan_free(&p);
    ilp_result_free(&r);
    plan_free(&g);
    queue_free(&q);
}

/* The verdict (ilp_verdict_of) on solve_greedy_suboptimal's instance:
 * greedy admits A, the ILP B and C (optimal), and with a relaxed bound
 * of 2 alone: a range from greedy's 1; with --must-admit B, greedy's
 * plan is no answer (it leaves B out), the ILP's is; without the ILP
 * there is no answer at all; an infeasible ILP is no answer either. */
static void test_verdict(void **state)
{
    (void)state;
    inst t;
    solve_greedy_suboptimal(&t);
    ilp_relaxed x;
    memset(&x, 0, sizeof x);
    x.status = ILP_OPTIMAL;
    x.bound = 2;
    ilp_report rp = {&t.r, &x, &t.greedy, NULL, NULL, NULL, NULL, NULL,
                     &t.q, "t.json"};
    ilp_verdict v;
    ilp_verdict_of(&rp, &v);
    assert_true(v.answer && v.proven);
    assert_int_equal(v.lower, 2);
    assert_int_equal(v.upper, 2);
    assert_string_equal(v.best, "ilp");
    assert_null(v.best_plan);
    assert_true(ilp_verdict_admits(&rp, &v, 1));
    assert_false(ilp_verdict_admits(&rp, &v, 0));
    rp.ilp = NULL; /* the bound alone: greedy's 1 to 2 */
    ilp_verdict_of(&rp, &v);
    assert_true(v.answer);
    assert_false(v.proven);
    assert_int_equal(v.lower, 1);
    assert_int_equal(v.upper, 2);
    assert_string_equal(v.best, "greedy");
    assert_ptr_equal(v.best_plan, &t.greedy);
    int must[3] = {0, 1, 0}; /* B: greedy rejects it */
    rp.must = must;
    ilp_verdict_of(&rp, &v);
    assert_false(v.answer);
    assert_int_equal(v.lower, -1);
    assert_int_equal(v.upper, 2);
    rp.ilp = &t.r; /* the ILP admits B */
    ilp_verdict_of(&rp, &v);
    assert_true(v.answer);
    assert_int_equal(v.lower, 2);
    x.status = ILP_NO_INCUMBENT; /* no LP solved by the relaxation: the
                                    ILP's LP still bounds */
    rp.must = NULL;
    ilp_verdict_of(&rp, &v);
    assert_true(v.answer);
    assert_int_equal(v.upper, 2);
    rp.ilp = NULL; /* no LP at all */
    ilp_verdict_of(&rp, &v);
    assert_false(v.answer);
    assert_false(v.infeasible);
    x.status = ILP_INFEASIBLE;
    ilp_verdict_of(&rp, &v);
    assert_true(v.infeasible);
    assert_false(v.answer);
    inst_free(&t);
}

/* The efplan-oracle bytes of solve_greedy_suboptimal's instance, as they
 * were when the report was written by hand ("seconds" set by the test). */
static const char report_golden[] =
    "{\n"
    "  \"bound\": 2,\n"
    "  \"cluster\": {\"gpus\": 1, \"gpus_per_node\": 1, \"nodes\": 1},\n"
    "  \"format\": \"efplan-oracle\",\n"
    "  \"gap_jobs\": 1,\n"
    "  \"greedy\": {\"admitted\": 1, \"admitted_jobs\": [\"A\"], "
    "\"gpu_seconds\": 1000},\n"
    "  \"guided\": null,\n"
    "  \"ilp\": {\"admitted\": 2, \"admitted_jobs\": [\"B\", \"C\"], "
    "\"binaries\": 28, \"bound\": 2, \"deadline_jobs\": 3, \"gap_jobs\": 0, "
    "\"gpu_seconds\": 1000, \"gpu_seconds_bound\": 1000, "
    "\"gpu_status\": \"optimal\", \"hopeless\": 0, \"limit\": \"none\", "
    "\"lp_bound\": 2, \"nodes\": 2, \"rows\": 42, \"seconds\": 0.250, "
    "\"status\": \"optimal\", \"warm_start\": \"none\"},\n"
    "  \"jobs_file\": \"t.json\",\n"
    "  \"method\": \"exact\",\n"
    "  \"now\": 0,\n"
    "  \"offline\": null,\n"
    "  \"relaxed\": null,\n"
    "  \"slot_seconds\": 100,\n"
    "  \"slots\": 10,\n"
    "  \"verdict\": {\"answer\": \"proven\", \"best\": \"ilp\", "
    "\"gained_jobs\": [\"B\", \"C\"], \"gap_jobs\": 0, "
    "\"given_up_jobs\": [\"A\"], \"greedy_within\": 1, \"lower\": 2, "
    "\"upper\": 2},\n"
    "  \"version\": 3\n"
    "}\n";

/* The report of the instance above (with its solve time fixed) and of an
 * infeasible one: its bytes, its nulls, its keys sorted. */
static void test_report_json(void **state)
{
    (void)state;
    inst t;
    solve_greedy_suboptimal(&t);
    t.r.seconds = 0.25;
    ef_buf b = {0};
    ilp_report rp = {&t.r, NULL, &t.greedy, NULL, NULL, NULL, NULL, NULL,
                     &t.q, "t.json"};
    ilp_report_json(&rp, &b);
    assert_string_equal(b.s, report_golden);
    assert_keys_sorted(b.s);
    free(b.s);
    inst_free(&t);
    /* two must jobs that do not fit together: no incumbent, no bound */
    int must[2] = {1, 1};
    ilp_opts o;
    ilp_opts_default(&o);
    o.must = must;
    solve_toy(&t, "{\"jobs\": [" JOB("J1", 340, 0, 200) ", "
              JOB("J2", 150, 0, 200) "]}", "n1g2", 100, &o);
    assert_int_equal(t.r.status, ILP_INFEASIBLE);
    b = (ef_buf){0};
    ilp_report ri = {&t.r, NULL, &t.greedy, NULL, NULL, NULL, NULL, must,
                     &t.q, NULL};
    ilp_report_json(&ri, &b);
    assert_keys_sorted(b.s);
    assert_contains(b.s, "\"gap_jobs\": null,\n");
    assert_contains(b.s, "{\"admitted\": null, \"admitted_jobs\": null, ");
    assert_contains(b.s, "\"bound\": null, ");
    assert_contains(b.s, "\"gpu_seconds\": null, ");
    assert_contains(b.s, "\"status\": \"infeasible\"");
    assert_contains(b.s, "\"jobs_file\": \"\",\n");
    assert_contains(b.s, "\"verdict\": {\"answer\": \"infeasible\", "
                    "\"best\": \"none\", \"gained_jobs\": null, ");
    free(b.s);
    inst_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_greedy_suboptimal),
        cmocka_unit_test(test_gpu_time_second),
        cmocka_unit_test(test_deadline_and_release),
        cmocka_unit_test(test_must_admit),
        cmocka_unit_test(test_glpk_failure_caught),
        cmocka_unit_test(test_time_limit),
        cmocka_unit_test(test_written_lp),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_node_limit),
        cmocka_unit_test(test_report_json),
        cmocka_unit_test(test_verdict),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
