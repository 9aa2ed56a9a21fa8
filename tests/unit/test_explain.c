/* test_explain.c: why a job got what it got (planner/explain.h), on a
 * small hand-made plan file and on plans the planner made. */
#include "testutil.h"

#include <math.h>

#include "planner/explain.h"
#include "planner/planio.h"
#include "testplanio.h"

/* One node of 8 GPUs, 60 s slots from 0, slot ends 300, 600, 900:
 *   a1   admitted, [0, 300) on 4 GPUs, 2 of them reserved;
 *   a2   admitted, [0, 600) on 3 GPUs, all reserved;
 *   be   best-effort, [0, 300) on 1 GPU, [300, 900) on 4;
 *   risk admitted and at risk, [600, 900) on 2 GPUs, 2 reserved, planned
 *        to end at 900 past its deadline 600;
 *   rej  rejected, submitted at 30 with deadline 270: in [30, 270) a1
 *        holds 4 x 240 = 960 GPU-s (480 reserved), a2 3 x 240 = 720 (all
 *        reserved): 1,200 of the cluster's 1,920. */
#define JOB_COMMON "\"batch_size\": 64, \"iterations\": 1000, " \
    "\"iterations_done\": 0, \"iterations_left\": 1000, \"migrations\": 0, " \
    "\"model\": \"resnet50\", \"resizes\": 0, \"gpu_seconds\": 0"
static const char PLAN[] =
    "{\"format\": \"efplan-plan\", \"version\": 2, \"cluster\": "
    "{\"gpus_per_node\": 8, \"nodes\": 1}, \"curves\": \"A100\", "
    "\"jobs_file\": \"q.json\", \"now\": 0, \"slot_seconds\": 60, "
    "\"surplus\": \"gain\", \"slot_ends\": [300, 600, 900],"
    "\"summary\": {\"admitted\": 3, \"best_effort\": 1, \"end\": 900, "
    "\"migrations\": 0, \"promised_gpu_hours\": 0, \"rejected\": 1, "
    "\"replan_fallbacks\": 0, \"resizes\": 0, \"scheduling_points\": 3, "
    "\"used_gpu_hours\": 0, \"utilisation\": 0},"
    "\"jobs\": ["
    "{\"id\": \"a1\", \"decision\": \"admitted\", \"deadline\": 600, "
    "\"earliest_feasible_deadline\": null, \"planned_end\": 300, "
    "\"slack\": 300, \"start\": 0, \"submit_time\": 0, " JOB_COMMON ", "
    "\"reserved\": [{\"start\": 0, \"end\": 300, \"gpus\": 2}]},"
    "{\"id\": \"a2\", \"decision\": \"admitted\", \"deadline\": 1000, "
    "\"earliest_feasible_deadline\": null, \"planned_end\": 600, "
    "\"slack\": 400, \"start\": 0, \"submit_time\": 0, " JOB_COMMON ", "
    "\"reserved\": [{\"start\": 0, \"end\": 600, \"gpus\": 3}]},"
    "{\"id\": \"be\", \"decision\": \"best_effort\", \"deadline\": null, "
    "\"earliest_feasible_deadline\": null, \"planned_end\": 900, "
    "\"slack\": null, \"start\": 0, \"submit_time\": 0, " JOB_COMMON "},"
    "{\"id\": \"risk\", \"decision\": \"admitted\", \"deadline\": 600, "
    "\"at_risk\": true, \"reason\": \"at risk since 600: it fell behind\", "
    "\"earliest_feasible_deadline\": null, \"planned_end\": 900, "
    "\"slack\": -300, \"start\": 600, \"submit_time\": 0, " JOB_COMMON ", "
    "\"reserved\": [{\"start\": 600, \"end\": 900, \"gpus\": 2}]},"
    "{\"id\": \"rej\", \"decision\": \"rejected\", \"deadline\": 270, "
    "\"reason\": \"GPUs before the deadline are promised to admitted jobs\", "
    "\"earliest_feasible_deadline\": 400, \"planned_end\": null, "
    "\"slack\": null, \"start\": null, \"submit_time\": 30, " JOB_COMMON "}"
    "],"
    "\"runs\": ["
    "{\"job\": \"a1\", \"start\": 0, \"end\": 300, \"gpus\": 4, "
    "\"placement\": [{\"gpus\": [0, 1, 2, 3], \"node\": 0}]},"
    "{\"job\": \"a2\", \"start\": 0, \"end\": 600, \"gpus\": 3, "
    "\"placement\": [{\"gpus\": [4, 5, 6], \"node\": 0}]},"
    "{\"job\": \"be\", \"start\": 0, \"end\": 300, \"gpus\": 1, "
    "\"placement\": [{\"gpus\": [7], \"node\": 0}]},"
    "{\"job\": \"be\", \"start\": 300, \"end\": 900, \"gpus\": 4, "
    "\"placement\": [{\"gpus\": [0, 1, 2, 3], \"node\": 0}]},"
    "{\"job\": \"risk\", \"start\": 600, \"end\": 900, \"gpus\": 2, "
    "\"placement\": [{\"gpus\": [4, 5], \"node\": 0}]}"
    "]}";

/* PLAN read, and job 'id' explained (curves: the test's). */
static void explain(plan_doc *d, xpl *x, const char *text, const char *id)
{
    ef_err e = {0};
    assert_ok(plan_doc_parse(d, "p.json", text, strlen(text), &e), e);
    assert_ok(xpl_build(x, d, "p.json", id, &g_curves, NULL, &e), e);
}

/* x's text (UTC, every interval) contains 'want'. */
static void says(const xpl *x, const char *want)
{
    char *t = xpl_text(x, EF_HT_UTC, 0, NULL);
    if (!strstr(t, want))
        print_error("    wanted \"%s\" in:\n%s\n", want, t);
    assert_non_null(strstr(t, want));
    free(t);
}

/* xpl_json's text reads back as the same value, written the same. */
static void json_roundtrip(const xpl *x)
{
    size_t n, m;
    char *a = xpl_json(x, &n);
    xpl y;
    ef_err e = {0};
    assert_ok(xpl_parse(&y, "x.json", a, n, &e), e);
    char *b = xpl_json(&y, &m);
    assert_string_equal(a, b);
    char *ta = xpl_text(x, EF_HT_UTC, 0, NULL);
    char *tb = xpl_text(&y, EF_HT_UTC, 0, NULL);
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
    free(a);
    free(b);
    xpl_free(&y);
}

static void test_admitted_with_surplus(void **state)
{
    (void)state;
    plan_doc d;
    xpl x;
    explain(&d, &x, PLAN, "a1");
    assert_int_equal(x.decision, PLAN_ADMITTED);
    assert_int_equal(x.niv, 1);
    assert_int_equal(x.iv[0].start, 0);
    assert_int_equal(x.iv[0].end, 300);
    assert_int_equal(x.iv[0].gpus, 4);
    assert_int_equal(x.iv[0].reserved, 2);
    assert_int_equal(x.iv[0].others_reserved, 3); /* a2's */
    assert_int_equal(x.iv[0].others_held, 4);     /* a2's 3, be's 1 */
    assert_true(x.gpu_seconds == 1200 && x.reserved_gpu_seconds == 600);
    assert_int_equal(x.nresv, 1);
    says(&x, "a1 is admitted: its deadline +10m is guaranteed; it is "
             "planned to end at +5m (slack 5m 00s).");
    says(&x, "4 GPUs = 2 reserved + 2 surplus; other jobs: 3 reserved, 4 "
             "held; 0 idle");
    says(&x, "Surplus GPUs are those no admitted job reserved");
    json_roundtrip(&x);
    xpl_free(&x);
    plan_doc_free(&d);
}

static void test_best_effort(void **state)
{
    (void)state;
    plan_doc d;
    xpl x;
    explain(&d, &x, PLAN, "be");
    assert_int_equal(x.decision, PLAN_BEST_EFFORT);
    /* [0, 300) 1 GPU, [300, 600) 4 GPUs beside a2, [600, 900) beside
     * risk: three intervals, none of them reserved */
    assert_int_equal(x.niv, 3);
    assert_int_equal(x.iv[1].gpus, 4);
    assert_int_equal(x.iv[1].reserved, 0);
    assert_int_equal(x.iv[1].others_reserved, 3);
    assert_int_equal(x.iv[2].others_reserved, 2);
    assert_true(x.reserved_gpu_seconds == 0);
    assert_true(x.gpu_seconds == 300 + 4 * 600);
    says(&x, "be is best-effort: it has no deadline. Nothing is reserved");
    says(&x, "All of the");
    says(&x, "4 GPUs = 0 reserved + 4 surplus; other jobs: 3 reserved, 3 "
             "held; 1 idle");
    json_roundtrip(&x);
    xpl_free(&x);
    plan_doc_free(&d);
}

static void test_rejected_holders(void **state)
{
    (void)state;
    plan_doc d;
    xpl x;
    explain(&d, &x, PLAN, "rej");
    assert_int_equal(x.decision, PLAN_REJECTED);
    assert_int_equal(x.niv, 0);
    assert_int_equal(x.window_start, 30);
    assert_int_equal(x.window_end, 270);
    assert_true(x.window_gpu_seconds == 8 * 240);
    /* by the GPU-seconds reserved in the window: a2 720, a1 480; the
     * at-risk job holds nothing there, the best-effort job is no holder */
    assert_int_equal(x.nholders, 2);
    assert_string_equal(x.holders[0].id, "a2");
    assert_true(x.holders[0].reserved_gpu_seconds == 720);
    assert_true(x.holders[0].gpu_seconds == 720);
    assert_string_equal(x.holders[1].id, "a1");
    assert_true(x.holders[1].reserved_gpu_seconds == 480);
    assert_true(x.holders[1].gpu_seconds == 960);
    assert_true(x.window_promised == 1200);
    /* what it needs alone: the planner's own MSS (plan_alone) */
    assert_true(x.has_alone);
    resv need = {0};
    int64_t fastest;
    {
        job_queue q;
        cluster c;
        plan_opts o;
        ef_err e = {0};
        char *qt = plan_doc_queue_json(&d, NULL);
        assert_ok(queue_parse_json(&q, "q", qt, strlen(qt), &e), e);
        assert_ok(queue_resolve(&q, &g_curves, &e), e);
        assert_ok(cluster_init(&c, 1, 1, 8, "c", &e), e);
        plan_doc_opts(&d, &o);
        assert_int_equal(plan_alone(&q, 4, &c, &o, &need, &fastest, &e),
                         x.alone_ok);
        queue_free(&q);
        free(qt);
    }
    assert_int_equal(fastest, x.fastest_alone);
    assert_int_equal(need.n, x.nneed);
    for (int k = 0; k < need.n; k++)
        assert_true(need.s[k].gpus == x.need[k].gpus &&
                    need.s[k].start == x.need[k].start &&
                    need.s[k].end == x.need[k].end);
    resv_free(&need);
    assert_true(x.alone_ok);
    says(&x, "62% of the cluster's GPU-time (0.33 GPU-h of 0.53 GPU-h) "
                 "is promised to 2 admitted jobs: a2 (0.20 GPU-h, deadline "
                 "+16m 40s), a1 (0.13 GPU-h, deadline +10m).");
    /* the earliest deadline by the one rule (plan_earliest_doc): this
     * hand-written plan leaves room for it as it is (the planner's bound
     * at its decision said t=400 s) */
    assert_int_equal(x.earliest_feasible_deadline, 270);
    says(&x, "Submitted again as it is, with its deadline +4m 30s, it would "
             "be admitted now");
    says(&x, "What to do: resubmit it (efplan submit of the job with the "
             "same id).");
    json_roundtrip(&x);
    xpl_free(&x);
    plan_doc_free(&d);
}

static void test_at_risk(void **state)
{
    (void)state;
    plan_doc d;
    xpl x;
    explain(&d, &x, PLAN, "risk");
    assert_true(x.at_risk);
    assert_int_equal(x.niv, 1);
    assert_int_equal(x.iv[0].reserved, 2);
    says(&x, "risk is admitted but at risk: at risk since 600: it fell "
             "behind.");
    says(&x, "It is planned to end at +15m, 5m 00s after its deadline "
             "+10m.");
    says(&x, "give it a later deadline or less work");
    json_roundtrip(&x);
    xpl_free(&x);
    plan_doc_free(&d);
}

/* A file without "reserved" (earlier efplan): the split is unknown, and
 * the holders are ranked by what they hold. */
static void test_old_file(void **state)
{
    (void)state;
    char *old = strdup(PLAN);
    for (char *p; (p = strstr(old, ", \"reserved\": [")) != NULL;) {
        char *q = strstr(p, "]}") + 1;
        memmove(p, q, strlen(q) + 1);
    }
    plan_doc d;
    xpl x;
    explain(&d, &x, old, "a1");
    assert_int_equal(x.iv[0].reserved, -1);
    assert_int_equal(x.iv[0].others_reserved, -1);
    assert_true(isnan(x.reserved_gpu_seconds));
    says(&x, "does not say how much of it was reserved");
    json_roundtrip(&x);
    xpl_free(&x);
    plan_doc_free(&d);
    explain(&d, &x, old, "rej");
    assert_string_equal(x.holders[0].id, "a1"); /* 960 held */
    assert_true(isnan(x.holders[0].reserved_gpu_seconds));
    json_roundtrip(&x);
    xpl_free(&x);
    plan_doc_free(&d);
    /* best-effort: nothing reserved, whatever the file says */
    explain(&d, &x, old, "be");
    assert_true(x.reserved_gpu_seconds == 0);
    xpl_free(&x);
    plan_doc_free(&d);
    free(old);
}

static void test_unknown_id(void **state)
{
    (void)state;
    plan_doc d;
    xpl x;
    ef_err e = {0};
    assert_ok(plan_doc_parse(&d, "p.json", PLAN, strlen(PLAN), &e), e);
    assert_int_equal(xpl_build(&x, &d, "p.json", "a3", &g_curves, NULL, &e),
                     EF_ERR);
    assert_int_equal(e.kind, EF_E_INPUT);
    assert_string_equal(e.msg, "p.json: no job \"a3\" in this plan (did you "
                               "mean \"a1\"?)");
    assert_int_equal(xpl_build(&x, &d, "p.json", "zzzzzz", &g_curves, NULL,
                               &e), EF_ERR);
    assert_non_null(strstr(e.msg, "its 5 jobs: \"a1\", \"a2\", ..."));
    plan_doc_free(&d);
}

/* Plans the planner made: every admitted job's reserved GPUs lie within
 * its allocation, the intervals add up to its gpu_seconds, and a
 * rejected job's holders are admitted jobs. */
static void test_real_plans(void **state)
{
    (void)state;
    static const char q[] =
        "{\"jobs\": ["
        "{\"id\": \"big\", \"model\": \"resnet50\", \"batch_size\": 128, "
        "\"iterations\": 20000, \"submit_time\": 0, \"deadline\": 2400},"
        "{\"id\": \"be\", \"model\": \"bert\", \"batch_size\": 64, "
        "\"iterations\": 20000, \"submit_time\": 0, \"deadline\": null},"
        "{\"id\": \"late\", \"model\": \"vgg16\", \"batch_size\": 128, "
        "\"iterations\": 20000, \"submit_time\": 60, \"deadline\": 2400},"
        "{\"id\": \"third\", \"model\": \"resnet50\", \"batch_size\": 128, "
        "\"iterations\": 8000, \"submit_time\": 120, \"deadline\": 2000},"
        "{\"id\": \"small\", \"model\": \"gpt2\", \"batch_size\": 128, "
        "\"iterations\": 3000, \"submit_time\": 120, \"deadline\": 9000}]}";
    tp_planned t;
    ef_err e = {0};
    tp_opts(&t);
    t.o.overhead = OVH_FIG12;
    assert_ok(tp_plan(&t, q, 1, &e), e);
    char *text;
    size_t len;
    plan_to_json(&t.p, "q.json", "A100", &text, &len);
    unsigned kinds = 0;        /* decisions seen, a bit each */
    int admitted_resv = 0, admitted_nothing = 0; /* admitted jobs with and
                                                    without a reservation */
    for (int i = 0; i < t.p.njobs; i++) {
        plan_doc d;
        xpl x;
        explain(&d, &x, text, t.p.jobs[i].in->id);
        double sum = 0, rs = 0;
        for (int k = 0; k < x.niv; k++) {
            const xpl_iv *v = &x.iv[k];
            assert_true(v->reserved >= 0 && v->reserved <= v->gpus);
            assert_true(v->gpus + v->others_held <= 8);
            assert_true(v->others_reserved <= v->others_held);
            sum += (double)(v->end - v->start) * v->gpus;
            rs += (double)(v->end - v->start) * v->reserved;
        }
        assert_true(sum == t.p.jobs[i].gpu_seconds);
        assert_true(rs == x.reserved_gpu_seconds);
        if (x.decision == PLAN_REJECTED) /* by contention: late and big */
            assert_int_equal(x.nholders, 2);
        /* an admitted job reserves as late as it can, so one that runs
         * on surplus early may end before its reservation starts */
        if (x.decision == PLAN_ADMITTED)
            assert_true(x.nresv > 0 || x.reserved_gpu_seconds == 0);
        admitted_nothing += x.decision == PLAN_ADMITTED && x.nresv == 0;
        admitted_resv += x.decision == PLAN_ADMITTED && x.nresv > 0;
        kinds |= 1u << x.decision;
        for (int k = 0; k < x.nholders; k++) {
            int admitted = 0;
            for (int m = 0; m < t.p.njobs; m++)
                if (strcmp(t.p.jobs[m].in->id, x.holders[k].id) == 0)
                    admitted = t.p.jobs[m].decision == PLAN_ADMITTED;
            assert_true(admitted);
        }
        json_roundtrip(&x);
        xpl_free(&x);
        plan_doc_free(&d);
    }
    free(text);
    tp_planned_free(&t);
    /* every kind of job was explained */
    assert_int_equal(kinds, 1u << PLAN_ADMITTED | 1u << PLAN_REJECTED |
                                1u << PLAN_BEST_EFFORT);
    assert_true(admitted_resv > 0);
    (void)admitted_nothing;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admitted_with_surplus),
        cmocka_unit_test(test_best_effort),
        cmocka_unit_test(test_rejected_holders),
        cmocka_unit_test(test_at_risk),
        cmocka_unit_test(test_old_file),
        cmocka_unit_test(test_unknown_id),
        cmocka_unit_test(test_real_plans),
    };
    return cmocka_run_group_tests(tests, tp_setup, tp_teardown);
}
