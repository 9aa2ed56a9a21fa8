/* test_engine.c: the slot engine (planner/engine.h) on hand-worked cases,
 * and plan_from_sizes, the planner's loop over it for given sizes. */
#include "testutil.h"

#include <math.h>

#include "common/util.h"
#include "planner/engine.h"
#include "planner/plan.h"

/* n jobs "A", "B", ... holding the GPUs in held[k] (-1 ends a list). */
typedef struct rig {
    cluster c;
    eng x;
    place_set pl[4];
    eng_alloc a[4];
    int n;
} rig;

static const char *const ids[] = {"A", "B", "C", "D"};

static void rig_init(rig *r, const char *cl, int n)
{
    memset(r, 0, sizeof *r);
    ef_err e;
    assert_int_equal(cluster_from_arg(&r->c, cl, &e), EF_OK);
    eng_init(&r->x, &r->c, n);
    r->n = n;
}

static void rig_hold(rig *r, int k, const int *gpus, int g)
{
    place_set_free(&r->pl[k]);
    r->pl[k].g = g;
    r->pl[k].gpu = ef_malloc((size_t)(g ? g : 1) * sizeof(int));
    memcpy(r->pl[k].gpu, gpus, (size_t)g * sizeof(int));
}

/* Ask for want[k] GPUs each (pins NULL); returns eng_place's answer. */
static int rig_place(rig *r, const int *want, ef_err *e)
{
    for (int k = 0; k < r->n; k++)
        r->a[k] = (eng_alloc){ids[k], want[k], NULL, 0, &r->pl[k], ENG_KEEP, 0};
    return eng_place(&r->x, r->a, r->n, e);
}

static void assert_held(const rig *r, int k, const int *gpus, int g)
{
    assert_int_equal(r->pl[k].g, g);
    for (int u = 0; u < g; u++)
        assert_int_equal(r->pl[k].gpu[u], gpus[u]);
}

static void rig_free(rig *r)
{
    for (int k = 0; k < 4; k++)
        place_set_free(&r->pl[k]);
    eng_free(&r->x);
}

/* Buddy placement from nothing, then a resize and a stop: largest first,
 * each job keeping the block of its first GPU. */
static void test_start_resize_stop(void **state)
{
    (void)state;
    rig r;
    ef_err e = {0};
    rig_init(&r, "n2g4", 3);
    assert_int_equal(rig_place(&r, (int[]){2, 4, 1}, &e), EF_OK);
    assert_held(&r, 1, (int[]){0, 1, 2, 3}, 4);
    assert_held(&r, 0, (int[]){4, 5}, 2);
    assert_held(&r, 2, (int[]){6}, 1);
    for (int k = 0; k < 3; k++)
        assert_int_equal(r.a[k].change, ENG_START);
    assert_int_equal(rig_place(&r, (int[]){2, 2, 0}, &e), EF_OK);
    assert_int_equal(r.a[0].change, ENG_KEEP);
    assert_int_equal(r.a[1].change, ENG_RESIZE);
    assert_int_equal(r.a[2].change, ENG_STOP);
    assert_held(&r, 0, (int[]){4, 5}, 2);
    assert_held(&r, 1, (int[]){0, 1}, 2);
    assert_int_equal(r.pl[2].g, 0);
    /* the same wants again: nobody moves */
    assert_int_equal(rig_place(&r, (int[]){2, 2, 0}, &e), EF_OK);
    for (int k = 0; k < 3; k++)
        assert_int_equal(r.a[k].change, ENG_KEEP);
    rig_free(&r);
}

/* A newcomer of 2 GPUs on one 4-GPU node where A holds GPU 1 and B GPU 2:
 * both 2-blocks are claimed, so C takes the first free one (0-1) and A,
 * whose GPU is taken, moves to the block nobody held (3). */
static void test_migration(void **state)
{
    (void)state;
    rig r;
    ef_err e = {0};
    rig_init(&r, "n1g4", 3);
    rig_hold(&r, 0, (int[]){1}, 1);
    rig_hold(&r, 1, (int[]){2}, 1);
    assert_int_equal(rig_place(&r, (int[]){1, 1, 2}, &e), EF_OK);
    assert_held(&r, 2, (int[]){0, 1}, 2);
    assert_held(&r, 0, (int[]){3}, 1);
    assert_held(&r, 1, (int[]){2}, 1);
    assert_int_equal(r.a[0].change, ENG_MIGRATE);
    assert_int_equal(r.a[1].change, ENG_KEEP);
    assert_int_equal(r.a[2].change, ENG_START);
    rig_free(&r);
}

/* Wants the cluster cannot hold: an error, and nobody's GPUs change. */
static void test_refused_changes_nothing(void **state)
{
    (void)state;
    rig r;
    ef_err e = {0};
    rig_init(&r, "n1g4", 2);
    rig_hold(&r, 0, (int[]){0, 1}, 2);
    assert_int_equal(rig_place(&r, (int[]){4, 1}, &e), EF_ERR);
    assert_int_equal(e.kind, EF_E_INTERNAL);
    assert_contains(e.msg, "5 GPUs given out of 4");
    assert_held(&r, 0, (int[]){0, 1}, 2);
    assert_int_equal(rig_place(&r, (int[]){3, 0}, &e), EF_ERR);
    assert_contains(e.msg, "placement of 3 GPUs failed");
    assert_int_equal(rig_place(&r, (int[]){-1, 0}, &e), EF_ERR);
    assert_contains(e.msg, "job A wants -1 GPUs");
    assert_held(&r, 0, (int[]){0, 1}, 2);
    rig_free(&r);
}

/* Pinned placements are taken as they are, with shares checked per GPU;
 * pinned and unpinned running jobs do not mix. */
static void test_pinned(void **state)
{
    (void)state;
    rig r;
    ef_err e = {0};
    rig_init(&r, "n1g4", 2);
    int pa[] = {1, 2, 3}, pb[] = {3};
    r.a[0] = (eng_alloc){"A", 3, pa, 0.5, &r.pl[0], ENG_KEEP, 0};
    r.a[1] = (eng_alloc){"B", 1, pb, 0.5, &r.pl[1], ENG_KEEP, 0};
    assert_int_equal(eng_place(&r.x, r.a, 2, &e), EF_OK);
    assert_held(&r, 0, pa, 3);
    assert_held(&r, 1, pb, 1);
    /* 0.5 + 0.6 on GPU 3 */
    r.a[1].share = 0.6;
    assert_int_equal(eng_place(&r.x, r.a, 2, &e), EF_ERR);
    assert_contains(e.msg, "GPU 3 is shared over 100%");
    assert_held(&r, 0, pa, 3);
    /* not ascending */
    int bad[] = {2, 1};
    r.a[1] = (eng_alloc){"B", 2, bad, 0, &r.pl[1], ENG_KEEP, 0};
    r.a[0].share = 0;
    r.a[0].want = 0;
    assert_int_equal(eng_place(&r.x, r.a, 2, &e), EF_ERR);
    assert_contains(e.msg, "job B: GPU ids out of range or not ascending");
    /* one pinned, one not */
    r.a[0] = (eng_alloc){"A", 1, NULL, 0, &r.pl[0], ENG_KEEP, 0};
    r.a[1] = (eng_alloc){"B", 1, pb, 0, &r.pl[1], ENG_KEEP, 0};
    assert_int_equal(eng_place(&r.x, r.a, 2, &e), EF_ERR);
    assert_contains(e.msg, "job A runs without its GPUs");
    assert_held(&r, 1, pb, 1);
    rig_free(&r);
}

/* Overhead first, then work; the exact productive seconds at the end. */
static void test_advance(void **state)
{
    (void)state;
    double rem = 100, ovh = 5, ov, used;
    assert_int_equal(eng_advance(&rem, &ovh, 10, 20, &ov, &used), 1);
    assert_true(rem == 0 && ovh == 0 && ov == 5 && used == 10);
    rem = 100;
    ovh = 30;
    assert_int_equal(eng_advance(&rem, &ovh, 10, 20, &ov, &used), 0);
    assert_true(rem == 100 && ovh == 10 && ov == 20 && used == 0);
    ovh = 0;
    assert_int_equal(eng_advance(&rem, &ovh, 2, 20, &ov, &used), 0);
    assert_true(rem == 60 && ovh == 0 && ov == 0 && used == 20);
    /* the work runs out at the last instant: done */
    assert_int_equal(eng_advance(&rem, &ovh, 3, 20, &ov, &used), 1);
    assert_true(rem == 0 && used == 20);
}

/* plan_from_sizes: two toy jobs on one 2-GPU node, sizes given per slot of
 * 100 s. A (200 iterations at 1/s on 1 GPU, 1.8/s on 2) runs 2 GPUs for
 * a slot, then 1: 180 + 20 -> done 20 s into slot 1. B best-effort at 1
 * GPU from slot 1: 150 iterations -> done 50 s into slot 2. */
static void test_from_sizes(void **state)
{
    (void)state;
    static const char csv[] = "global_batch_size,1,2\n1,1.0,1.8\n";
    curve_model toy;
    curve_set cs = {0};
    ef_err e = {0};
    assert_int_equal(curve_parse_csv(&toy, "toy", "toy.csv", csv, strlen(csv),
                                     &e), EF_OK);
    cs.models = &toy;
    cs.nmodels = 1;
    const char *jobs =
        "{\"jobs\": [{\"id\": \"A\", \"model\": \"toy\", \"batch_size\": 1, "
        "\"iterations\": 200, \"submit_time\": 0, \"deadline\": 1000}, "
        "{\"id\": \"B\", \"model\": \"toy\", \"batch_size\": 1, "
        "\"iterations\": 150, \"submit_time\": 0}]}";
    job_queue q = {0};
    cluster c;
    assert_int_equal(queue_parse_json(&q, "t.json", jobs, strlen(jobs), &e),
                     EF_OK);
    assert_int_equal(queue_resolve(&q, &cs, &e), EF_OK);
    assert_int_equal(cluster_from_arg(&c, "n1g2", &e), EF_OK);
    plan_opts o;
    plan_opts_default(&o);
    o.slot = 100;
    o.now = 0;
    plan_decision dec[] = {PLAN_ADMITTED, PLAN_BEST_EFFORT};
    /* A: 2, 1, 1 (the last after it is done: ignored); B: 0, 1, 1, 0 */
    int size[] = {2, 1, 1, 0, 0, 1, 1, 0};
    plan p;
    assert_int_equal(plan_from_sizes(&p, &q, &c, &o, dec, "x", size, 4, &e),
                     EF_OK);
    assert_int_equal(p.admitted, 1);
    assert_int_equal(p.best_effort, 1);
    assert_int_equal(p.jobs[0].planned_end, 120);
    assert_int_equal(p.jobs[1].planned_end, 250);
    assert_int_equal(p.jobs[0].resizes, 1);
    assert_int_equal(p.nslots, 3);
    assert_int_equal(p.slots[1].nalloc, 2);
    assert_int_equal(p.slots[2].nalloc, 1);
    assert_int_equal(p.end, 300);
    assert_int_equal(p.points, 3);
    assert_true(fabs(p.promised_gpu_seconds - 300) < 1e-9);
    assert_int_equal(plan_check(&p, &e), EF_OK);
    plan_free(&p);
    /* sizes that do not fit: refused, naming the slot */
    int over[] = {2, 0, 0, 0, 1, 0, 0, 0};
    assert_int_equal(plan_from_sizes(&p, &q, &c, &o, dec, "x", over, 4, &e),
                     EF_ERR);
    assert_int_equal(e.kind, EF_E_INTERNAL);
    assert_prefix(e.msg, "slot 0: the sizes cannot be placed");
    queue_free(&q);
    curve_model_free(&toy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_start_resize_stop),
        cmocka_unit_test(test_migration),
        cmocka_unit_test(test_refused_changes_nothing),
        cmocka_unit_test(test_pinned),
        cmocka_unit_test(test_advance),
        cmocka_unit_test(test_from_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
