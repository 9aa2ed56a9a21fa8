/* test_submit.c: one new job against a plan file (planner/submit.h). */
#include "testutil.h"

#include "planner/planio.h"
#include "planner/submit.h"
#include "testplanio.h"

static const char *Q_CHANGE =
    "{\"jobs\": ["
    "{\"id\": \"c\", \"model\": \"resnet50\", \"batch_size\": 128, "
    "\"iterations\": 60000, \"submit_time\": 600, \"deadline\": 6000},"
    "{\"id\": \"s\", \"model\": \"bert\", \"batch_size\": 64, "
    "\"iterations\": 2000, \"submit_time\": 0, \"deadline\": 20000}]}";

static const char *Q_EB; /* below */

/* The plan files the tests submit into (plan_submit writes nothing):
 * Q_CHANGE planned, and Q_EB planned with elastic batch, in one scratch
 * directory for the group. */
static char g_dir[256], g_plan[512], g_plan_eb[512];

static int make_plan(const char *queue, int elastic, const char *name,
                     char *path, size_t len)
{
    tp_planned t;
    ef_err e = {0};
    tp_opts(&t);
    t.o.elastic_batch = elastic;
    if (tp_plan(&t, queue, 1, &e) != EF_OK)
        return -1;
    tu_join(path, len, g_dir, name);
    int rc = plan_write_json(&t.p, path, "q.json", "A100", &e);
    tp_planned_free(&t);
    return rc == EF_OK ? 0 : -1;
}

static int setup(void **state)
{
    if (tp_setup(state) != 0)
        return -1;
    tu_tmpdir(g_dir, sizeof g_dir);
    return make_plan(Q_CHANGE, 0, "plan.json", g_plan, sizeof g_plan) ||
           make_plan(Q_EB, 1, "plan-eb.json", g_plan_eb, sizeof g_plan_eb);
}

static int teardown(void **state)
{
    tu_rmtree(g_dir);
    return tp_teardown(state);
}

#define Y(deadline)                                                         \
    "{\"id\": \"y\", \"model\": \"resnet50\", \"batch_size\": 128, "        \
    "\"iterations\": 60000, \"submit_time\": 0, \"deadline\": " deadline "}"

/* Admitted; a job submitted later loses its admission (it was promised
 * nothing yet): listed as a change, not a broken promise. */
static void test_admit_changes(void **state)
{
    (void)state;
    const char *path = g_plan;
    plan_submit_res r;
    ef_err e = {0};
    assert_ok(plan_submit(path, Y("5000"), NULL, &r, &e), e);
    assert_int_equal(r.decision, PLAN_ADMITTED);
    assert_null(r.broken);
    assert_int_equal(r.nchanges, 1);
    assert_string_equal(r.changes[0].id, "c");
    assert_int_equal(r.changes[0].from, PLAN_ADMITTED);
    assert_int_equal(r.changes[0].to, PLAN_REJECTED);
    assert_string_equal(r.p.jobs[r.p.njobs - 1].in->id, "y");
    assert_string_equal(r.jobs_file, "q.json");
    assert_string_equal(r.curves, "A100");
    plan_submit_free(&r);
    /* best-effort: no deadline, no change */
    assert_ok(plan_submit(path, "{\"id\": \"z\", \"model\": \"bert\", "
                          "\"batch_size\": 64, \"iterations\": 10}", NULL,
                          &r, &e), e);
    assert_int_equal(r.decision, PLAN_BEST_EFFORT);
    assert_int_equal(r.nchanges, 0);
    assert_true(r.p.jobs[r.p.njobs - 1].in->submit == 0); /* plan's now */
    plan_submit_free(&r);
}

/* Rejected with the earliest deadline that is admitted: that deadline
 * is, the second before it is not. */
static void test_reject_earliest(void **state)
{
    (void)state;
    const char *path = g_plan;
    char text[512];
    plan_submit_res r;
    ef_err e = {0};
    assert_ok(plan_submit(path, Y("3000"), NULL, &r, &e), e);
    assert_int_equal(r.decision, PLAN_REJECTED);
    assert_null(r.broken);
    assert_contains(r.reason, "deadline too tight");
    int64_t best = r.earliest;
    assert_true(best > 3000);
    /* the job as submitted: its deadline is back after the search */
    assert_true(r.p.jobs[r.p.njobs - 1].in->deadline == 3000);
    plan_submit_free(&r);
    snprintf(text, sizeof text, Y("%lld"), (long long)best);
    assert_ok(plan_submit(path, text, NULL, &r, &e), e);
    assert_int_equal(r.decision, PLAN_ADMITTED);
    plan_submit_free(&r);
    snprintf(text, sizeof text, Y("%lld"), (long long)best - 1);
    assert_ok(plan_submit(path, text, NULL, &r, &e), e);
    assert_int_equal(r.decision, PLAN_REJECTED);
    plan_submit_free(&r);
}

static const char *Q_EB =
    "{\"jobs\": ["
    "{\"id\": \"a\", \"model\": \"resnet50\", \"batch_sizes\": [64, 128, "
    "256], \"samples\": 3200000, \"submit_time\": 0, \"deadline\": 4000},"
    "{\"id\": \"b\", \"model\": \"bert\", \"batch_sizes\": [64, 128], "
    "\"samples\": 1000000, \"samples_done\": 4000, \"submit_time\": 0, "
    "\"deadline\": 6000},"
    "{\"id\": \"c\", \"model\": \"resnet50\", \"batch_size\": 128, "
    "\"iterations\": 8000, \"iterations_done\": 100, \"submit_time\": 300, "
    "\"deadline\": 9000},"
    "{\"id\": \"d\", \"model\": \"vgg16\", \"batch_sizes\": [64, 128], "
    "\"batch_size\": 128, \"iterations\": 20000, \"submit_time\": 600, "
    "\"deadline\": null}]}";

/* The defect of issue 14: a submit into an elastic-batch plan lost every
 * job's batch range and samples, so the old jobs were planned at their
 * fixed batch size (planned ends moved, promises broke). A job submitted
 * after the plan's end must leave every old job as it was. */
static void test_elastic_keeps_jobs(void **state)
{
    (void)state;
    const char *path = g_plan_eb;
    plan_doc before;
    ef_err e = {0};
    assert_ok(plan_doc_load(&before, path, &e), e);
    assert_true(before.elastic_batch);
    plan_submit_res r;
    assert_ok(plan_submit(path, "{\"id\": \"z\", \"model\": \"bert\", "
                          "\"batch_size\": 64, \"iterations\": 10, "
                          "\"submit_time\": 90000}", NULL, &r, &e), e);
    assert_int_equal(r.decision, PLAN_BEST_EFFORT);
    assert_int_equal(r.nchanges, 0);
    assert_true(r.po.elastic_batch);
    plan_doc after;
    plan_doc_from_plan(&after, &r.p, r.jobs_file, r.curves);
    assert_int_equal(after.njobs, before.njobs + 1);
    int elastic = 0;
    for (int i = 0; i < before.njobs; i++) {
        const plan_doc_job *x = &before.jobs[i], *y = &after.jobs[i];
        assert_string_equal(x->id, y->id);
        assert_int_equal(x->eb, y->eb);
        assert_int_equal(x->nbatch, y->nbatch);
        for (int k = 0; k < x->nbatch; k++)
            assert_true(x->batch_sizes[k] == y->batch_sizes[k]);
        assert_true(x->planned_end == y->planned_end);
        assert_true(x->samples == y->samples);
        assert_true(x->samples_done == y->samples_done);
        assert_true(x->iterations == y->iterations &&
                    x->iterations_done == y->iterations_done);
        assert_true(x->gpu_seconds == y->gpu_seconds);
        assert_int_equal(x->decision, y->decision);
        elastic += x->eb;
    }
    assert_int_equal(elastic, 3);
    /* and the slots up to the old end are the old slots */
    for (int s = 0; s < before.nslots; s++) {
        assert_true(before.slots[s].start == after.slots[s].start);
        assert_int_equal(before.slots[s].nalloc, after.slots[s].nalloc);
        for (int a = 0; a < before.slots[s].nalloc; a++)
            assert_true(placement_equal(&before.slots[s].a[a].place,
                                         &after.slots[s].a[a].place));
    }
    plan_doc_free(&after);
    plan_doc_free(&before);
    plan_submit_free(&r);
}

static void test_errors(void **state)
{
    (void)state;
    const char *path = g_plan;
    char bad[512];
    plan_submit_res r;
    ef_err e = {0};
    assert_err(plan_submit(path, "{\"id\": ", NULL, &r, &e), e,
               "--job:1:", "JSON syntax");
    plan_submit_free(&r);
    assert_err(plan_submit(path, "[1]", NULL, &r, &e), e,
               "--job: expected an object", NULL);
    plan_submit_free(&r);
    assert_err(plan_submit(path, "{\"id\": \"x\", \"batch_size\": 64, "
                           "\"iterations\": 5}", NULL, &r, &e), e,
               "--job: jobs[0]: missing required key \"model\"", NULL);
    plan_submit_free(&r);
    /* a job id the plan has already */
    assert_err(plan_submit(path, "{\"id\": \"c\", \"model\": \"bert\", "
                           "\"batch_size\": 64, \"iterations\": 5}", NULL, &r,
                           &e), e, path, "\"c\"");
    plan_submit_free(&r);
    /* not a plan file */
    tu_write(g_dir, "q.json", Q_CHANGE, bad, sizeof bad);
    assert_err(plan_submit(bad, Y("5000"), NULL, &r, &e), e, bad,
               "missing required key \"format\"");
    plan_submit_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admit_changes),
        cmocka_unit_test(test_reject_earliest),
        cmocka_unit_test(test_elastic_keeps_jobs),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
