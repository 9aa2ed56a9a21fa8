/* test_simio.c: the simulation result file (simulator/simio.h): read ->
 * write -> read gives the same value and the same bytes, over generated
 * results that use every member and over real simulations; errors. */
#include "testutil.h"

#include <math.h>

#include "simulator/simio.h"
#include "testsim.h"

static uint32_t rn(uint32_t n)
{
    return tp_rnd() % n;
}

/* A number as results hold them: integral, fractional, tiny, huge, or
 * none (NaN: null). */
static double gen_num(void)
{
    switch (rn(6)) {
    case 0: return (double)rn(100000);
    case 1: return rn(1000000) / 997.0;
    case 2: return rn(1000) * 1e-9;
    case 3: return 1e16 + rn(1000) * 1e6;
    case 4: return NAN;
    default: return -(double)(1 + rn(100)) / 7.0; /* not -0: "-0" reads
                                                      back as 0 */
    }
}

static void gen_result(sim_result *r)
{
    static const char *const words[] = {"ef", "saxena", "fig12", "t\"r\\a\n",
                                        "inputs/traces/itp/cluster10.csv", ""};
    memset(r, 0, sizeof *r);
    r->admitted = (int)rn(1000);
    r->elastic_batch = (int)rn(2);
    r->batch_changes = r->elastic_batch ? (int)rn(50) : 0;
    r->point_us.max = rn(100000) / 10.0;
    r->point_us.mean = rn(10000) / 10.0;
    r->point_us.p50 = rn(10000) / 10.0;
    r->point_us.p99 = rn(100000) / 10.0;
    r->best_effort_jobs = (int)rn(100);
    r->best_effort_mean_jct = gen_num();
    r->cluster.gpus_per_node = 1 << rn(4);
    r->cluster.nodes = 1 + (int)rn(64);
    r->cluster.total_gpus = r->cluster.nodes * r->cluster.gpus_per_node;
    r->deadline_jobs = (int)rn(1000);
    r->deadline_ratio = gen_num();
    r->gpu_hours = gen_num();
    r->idle_gpu_hours_after_completion = gen_num();
    r->jobs = (int)rn(2000);
    r->mean_efficiency = gen_num();
    r->mean_jct = gen_num();
    r->met = (int)rn(1000);
    r->migrations = (int)rn(1000);
    r->missed = (int)rn(1000);
    r->overhead = words[rn(6)];
    r->overhead_gpu_hours = gen_num();
    r->points = (int)rn(10000);
    r->policy = words[rn(6)];
    r->preemptions = (int)rn(100);
    r->rejected = (int)rn(100);
    r->rescales = (int)rn(100);
    r->slot_seconds = 1 + (int)rn(600);
    r->solver_fallbacks = (int)rn(5);
    r->tick_seconds = rn(3600);
    r->ntimeline = (int)rn(8);
    r->timeline = jf_alloc(&r->arena, (size_t)(r->ntimeline + 1) *
                                          sizeof *r->timeline);
    for (int k = 0; k < r->ntimeline; k++) {
        r->timeline[k].efficiency = gen_num();
        r->timeline[k].gpus_used = (int)rn(64);
        r->timeline[k].met = (int)rn(100);
        r->timeline[k].running = (int)rn(100);
        r->timeline[k].t = (int64_t)rn(1000000) - 500;
    }
    r->trace = words[rn(6)];
    r->unfinished = (int)rn(10);
    r->wall_seconds = rn(100000) / 1000.0;
}

/* text -> value -> text: the same bytes; value -> text -> value: the same
 * value; 'r' (when not NULL) is the value 'text' was written from. */
static void roundtrip(const sim_result *r, const char *text)
{
    sim_result back, again;
    ef_err e = {0};
    assert_ok(sim_result_parse(&back, "r.json", text, strlen(text), &e), e);
    assert_true(!r || sim_result_equal(r, &back));
    char *t2 = sim_result_json(&back, NULL);
    assert_string_equal(text, t2);
    assert_ok(sim_result_parse(&again, "r.json", t2, strlen(t2), &e), e);
    assert_true(sim_result_equal(&back, &again));
    free(t2);
    sim_result_free(&back);
    sim_result_free(&again);
}

static void test_generated(void **state)
{
    (void)state;
    int nulls = 0, elastic = 0, empty = 0;
    tp_seed(3);
    for (int it = 0; it < 500; it++) {
        sim_result r;
        gen_result(&r);
        char *text = sim_result_json(&r, NULL);
        /* only values written with %.10g lose digits: compare the value
         * after one read */
        roundtrip(NULL, text);
        nulls += strstr(text, "\"mean_jct\": null") != NULL;
        elastic += strstr(text, "\"batch_changes\": ") != NULL;
        assert_non_null(strstr(text, "\"point_us\": {\"max\": "));
        empty += strstr(text, "\"timeline\": [],") != NULL;
        free(text);
        sim_result_free(&r);
    }
    assert_true(nulls > 0 && elastic > 0 && empty > 0);
    /* values that print exactly read back equal */
    sim_result r;
    gen_result(&r);
    r.deadline_ratio = 0.5;
    r.mean_jct = 1234;
    r.gpu_hours = NAN;
    for (int k = 0; k < r.ntimeline; k++)
        r.timeline[k].efficiency = 0.25 * k;
    r.best_effort_mean_jct = r.idle_gpu_hours_after_completion =
        r.mean_efficiency = r.overhead_gpu_hours = 0.125;
    r.wall_seconds = 1.5;
    r.point_us = (sim_result_lat){2.5, 1.5, 0.5, 2.0};
    char *text = sim_result_json(&r, NULL);
    roundtrip(&r, text);
    free(text);
    sim_result_free(&r);
}

static void test_real(void **state)
{
    (void)state;
    static const char *const pols[] = {"ef", "edf", "saxena", "gandiva"};
    for (int k = 0; k < 4; k++) {
        gen_opts go;
        gen_opts_default(&go);
        go.jobs = 40;
        go.mean_gap = 300;
        go.seed = 7 + (uint64_t)k;
        go.elastic_batch = 0.5;
        go.best_effort = 0.2;
        job_queue q = {0};
        ts_gen(&q, &go);
        sim_opts o;
        sim_opts_default(&o);
        sim s;
        ts_run(&s, &q, "n2g8", pols[k], &o);
        sim_result r;
        sim_result_from(&r, &s, "g.csv");
        char *text = sim_result_json(&r, NULL);
        assert_int_equal(r.elastic_batch, k == 2);
        roundtrip(NULL, text);
        free(text);
        sim_result_free(&r);
        sim_free(&s);
        queue_free(&q);
    }
}

static void test_errors(void **state)
{
    (void)state;
    sim_result r;
    gen_result(&r);
    r.elastic_batch = 0;
    char *text = sim_result_json(&r, NULL);
    sim_result_free(&r);
    ef_err e = {0};
    char *t = ef_strdup(text);
    char *x = strstr(t, "\"efplan-sim\"");
    memcpy(x, "\"efplan-sam\"", 12);
    assert_err(sim_result_parse(&r, "r.json", t, strlen(t), &e), e,
               "r.json: format: \"efplan-sam\" (expected \"efplan-sim\"", NULL);
    free(t);
    /* batch_changes only with elastic_batch */
    t = ef_malloc(strlen(text) + 64);
    x = strstr(text, "\"best_effort_jobs\"");
    sprintf(t, "%.*s\"batch_changes\": 3,\n  %s", (int)(x - text), text, x);
    assert_err(sim_result_parse(&r, "r.json", t, strlen(t), &e), e,
               "r.json: batch_changes: unexpected without \"elastic_batch\": "
               "true", NULL);
    free(t);
    /* a count out of range */
    x = strstr(text, "\n  \"jobs\": ");
    t = ef_malloc(strlen(text) + 8);
    sprintf(t, "%.*s\n  \"jobs\": -1%s", (int)(x - text), text,
            strchr(x + 1, ','));
    assert_err(sim_result_parse(&r, "r.json", t, strlen(t), &e), e,
               "r.json: jobs: -1 is out of range", NULL);
    free(t);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_real),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, tp_setup, tp_teardown);
}
