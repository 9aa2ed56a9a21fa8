/*
 * test_compare.c: the compare grid and its file (simulator/compare.h):
 * the efplan-compare bytes of a hand-made result, the round trip over
 * generated results (write -> read -> write gives the same bytes, read
 * gives the same values, keys sorted in every object), the reader's
 * errors, the Markdown tables, the file stem, and a grid that gives the
 * same result on 1 and 4 threads, each cell the simulation of its trace
 * and policy.
 */
#include "testutil.h"

#include <math.h>
#include <omp.h>

#include "simulator/compare.h"
#include "testsim.h"

/* ---- hand-made results ---------------------------------------------------- */

/* A 'nt' x 'np' result whose cells are set by the caller (strings owned). */
static void make(cmp_result *r, int nt, int np)
{
    memset(r, 0, sizeof *r);
    r->ntraces = nt;
    r->npolicies = np;
    r->cells = ef_calloc((size_t)(nt * np), sizeof *r->cells);
    r->slot = 60;
    r->overhead = OVH_FIG12;
}

static void set_cell(cmp_cell *c, const char *trace, const char *policy,
                     const char *clname, int gpus)
{
    c->trace = ef_strdup(trace);
    c->policy = ef_strdup(policy);
    c->cluster = ef_strdup(clname);
    c->gpus = gpus;
}

/* cluster10 x {ef, chronus}: the second cell with solver fallbacks and
 * no published number. */
static void sample(cmp_result *r)
{
    make(r, 1, 2);
    cmp_cell *c = r->cells;
    set_cell(&c[0], "inputs/traces/itp/cluster10.csv", "ef", "n32g8", 256);
    c[0].admitted = 257;
    c[0].rejected = 3;
    c[0].deadline_jobs = 260;
    c[0].met = 257;
    c[0].migrations = 52;
    c[0].rescales = 247;
    c[0].deadline_ratio = 257.0 / 260;
    c[0].published = 0.981;
    c[0].wall_seconds = 0.0042;
    set_cell(&c[1], "inputs/traces/itp/cluster10.csv", "chronus", "n32g8",
             256);
    c[1].admitted = 200;
    c[1].rejected = 60;
    c[1].deadline_jobs = 260;
    c[1].met = 130;
    c[1].solver_fallbacks = 4;
    c[1].deadline_ratio = 0.5;
    c[1].published = -1;
    c[1].wall_seconds = 12.3456;
}

/* The bytes efplan compare wrote before the format had one owner. */
static const char golden[] =
    "{\n"
    "  \"cells\": [\n"
    "    {\"admitted\": 257, \"cluster\": \"n32g8\", \"deadline_jobs\": 260, "
    "\"deadline_ratio\": 0.9884615385, \"gpus\": 256, \"met\": 257, "
    "\"migrations\": 52, \"policy\": \"ef\", \"published\": 0.981, "
    "\"rejected\": 3, \"rescales\": 247, \"solver_fallbacks\": 0, "
    "\"trace\": \"inputs/traces/itp/cluster10.csv\", \"wall_seconds\": "
    "0.004},\n"
    "    {\"admitted\": 200, \"cluster\": \"n32g8\", \"deadline_jobs\": 260, "
    "\"deadline_ratio\": 0.5, \"gpus\": 256, \"met\": 130, "
    "\"migrations\": 0, \"policy\": \"chronus\", \"published\": null, "
    "\"rejected\": 60, \"rescales\": 0, \"solver_fallbacks\": 4, "
    "\"trace\": \"inputs/traces/itp/cluster10.csv\", \"wall_seconds\": "
    "12.346}\n"
    "  ],\n"
    "  \"format\": \"efplan-compare\",\n"
    "  \"overhead\": \"fig12\",\n"
    "  \"slot_seconds\": 60,\n"
    "  \"version\": 1\n"
    "}\n";

static void test_golden(void **state)
{
    (void)state;
    cmp_result r;
    sample(&r);
    ef_buf b = {0};
    cmp_json(&r, &b);
    assert_string_equal(b.s, golden);
    free(b.s);
    cmp_result_free(&r);
    assert_null(r.cells);
}

static void test_tables(void **state)
{
    (void)state;
    cmp_result r;
    sample(&r);
    r.baselines_reference = 1;
    r.cap_reference = 1;
    ef_buf b = {0};
    cmp_tables(&r, &b);
    assert_string_equal(b.s,
        "Deadline ratio (met / jobs with a deadline); in parentheses the "
        "ElasticFlow paper's number where it has one. Slot 60 s, overhead "
        "fig12, baseline cap reference, surplus gain. Fixed-size baselines "
        "and edf-ac keep the reference's defects (--baselines reference).\n"
        "\n"
        "| trace     | cluster          | ef            | chronus |\n"
        "|-----------|------------------|---------------|---------|\n"
        "| cluster10 | n32g8 (256 GPUs) | 0.988 (0.981) | 0.500   |\n"
        "\n"
        "Wall seconds per run (admitted / rejected jobs).\n"
        "\n"
        "| trace | ef | chronus |\n"
        "|---|---|---|\n"
        "| cluster10 | 0.00 (257 / 3) | 12.35 (200 / 60) |\n"
        "\n"
        "Solver fallbacks (MIP node budget reached, greedy answer used): "
        "chronus on cluster10: 4.\n");
    free(b.s);
    cmp_result_free(&r);
}

static void test_stem(void **state)
{
    (void)state;
    char s[CMP_STEM_LEN], tiny[6];
    assert_string_equal(cmp_stem("a/b/cluster01.csv", s, sizeof s),
                        "cluster01");
    assert_string_equal(cmp_stem("q.tar.json", s, sizeof s), "q.tar");
    assert_string_equal(cmp_stem(".hidden", s, sizeof s), ".hidden");
    assert_string_equal(cmp_stem("dir.d/plain", s, sizeof s), "plain");
    assert_string_equal(cmp_stem("abcdefgh.csv", tiny, sizeof tiny), "abcde");
}

/* ---- the round trip over generated results -------------------------------- */

static double unit(void)
{
    return tp_rnd() / 4294967296.0;
}

/* A string of 1..12 characters from a set that needs JSON escapes, made
 * unique by a prefix "<tag><k>". */
static char *gen_str(char tag, int k)
{
    static const char *const parts[] = {"a", "/", ".", "\"", "\\", " ",
                                        "\t", "\x01", "\xc3\xa9", "-", "_",
                                        ":", ",", "{", "}"};
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%c%d", tag, k);
    int len = 1 + (int)(tp_rnd() % 12);
    for (int i = 0; i < len; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s",
                      parts[tp_rnd() % (sizeof parts / sizeof parts[0])]);
    return ef_strdup(buf);
}

/* A number of one of the shapes results have: 0, 1, tiny, any. */
static double gen_frac(void)
{
    switch (tp_rnd() % 4) {
    case 0: return 0;
    case 1: return 1;
    case 2: return unit() * 1e-6;
    default: return unit();
    }
}

static int gen_int(void)
{
    return tp_rnd() % 3 == 0 ? 0 : (int)(tp_rnd() % 2000000);
}

/* A cell's counters, by number. */
static const size_t counts[] = {
    offsetof(cmp_cell, admitted), offsetof(cmp_cell, rejected),
    offsetof(cmp_cell, deadline_jobs), offsetof(cmp_cell, met),
    offsetof(cmp_cell, migrations), offsetof(cmp_cell, rescales),
    offsetof(cmp_cell, solver_fallbacks)};
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))

static int *count(cmp_cell *c, int f)
{
    return (int *)((char *)c + counts[f]);
}

static int count_of(const cmp_cell *c, int f)
{
    return *(const int *)((const char *)c + counts[f]);
}

/* A random grid with every field used. */
static void gen_result(cmp_result *r)
{
    int nt = 1 + (int)(tp_rnd() % 4), np = 1 + (int)(tp_rnd() % 4);
    make(r, nt, np);
    r->slot = 1 + (int)(tp_rnd() % 86400);
    r->overhead = (ovh_mode)ovh_parse(
        (const char *const[]){"fig12", "reference", "restart",
                              "none"}[tp_rnd() % 4]);
    char *pol[4];
    for (int p = 0; p < np; p++)
        pol[p] = gen_str('p', p);
    for (int i = 0; i < nt; i++) {
        char *tr = gen_str('t', i), *cl = gen_str('c', i);
        int gpus = 1 + (int)(tp_rnd() % 4096);
        for (int p = 0; p < np; p++) {
            cmp_cell *c = &r->cells[i * np + p];
            set_cell(c, tr, pol[p], cl, gpus);
            for (int f = 0; f < NCOUNTS; f++)
                *count(c, f) = gen_int();
            c->deadline_ratio = gen_frac();
            c->published = tp_rnd() % 2 ? -1 : gen_frac();
            c->wall_seconds = tp_rnd() % 2 ? gen_frac() : unit() * 1e4;
        }
        free(tr);
        free(cl);
    }
    for (int p = 0; p < np; p++)
        free(pol[p]);
}

static void same_cell(const cmp_cell *a, const cmp_cell *b, double tol3,
                      double tol10)
{
    assert_string_equal(a->trace, b->trace);
    assert_string_equal(a->policy, b->policy);
    assert_string_equal(a->cluster, b->cluster);
    assert_int_equal(a->gpus, b->gpus);
    for (int f = 0; f < NCOUNTS; f++)
        assert_int_equal(count_of(a, f), count_of(b, f));
    assert_true(fabs(a->deadline_ratio - b->deadline_ratio) <=
                tol10 * fabs(a->deadline_ratio));
    assert_true((a->published < 0) == (b->published < 0));
    if (a->published >= 0)
        assert_true(fabs(a->published - b->published) <= tol3);
    assert_true(fabs(a->wall_seconds - b->wall_seconds) <= tol3);
}

static void same_result(const cmp_result *a, const cmp_result *b, double tol3,
                        double tol10)
{
    assert_int_equal(a->ntraces, b->ntraces);
    assert_int_equal(a->npolicies, b->npolicies);
    assert_int_equal(a->slot, b->slot);
    assert_int_equal(a->overhead, b->overhead);
    for (int k = 0; k < a->ntraces * a->npolicies; k++)
        same_cell(&a->cells[k], &b->cells[k], tol3, tol10);
}

static void test_round_trip(void **state)
{
    (void)state;
    tp_seed(14);
    for (int it = 0; it < 300; it++) {
        cmp_result r, r1, r2;
        ef_err e = {0};
        gen_result(&r);
        ef_buf w = {0}, w1 = {0};
        cmp_json(&r, &w);
        assert_keys_sorted(w.s);
        assert_ok(cmp_parse(&r1, "gen.json", w.s, w.n, &e), e);
        /* the file keeps 3 decimals (published, wall) and 10 digits */
        same_result(&r, &r1, 5e-4, 1e-9);
        cmp_json(&r1, &w1);
        assert_string_equal(w.s, w1.s);
        assert_ok(cmp_parse(&r2, "gen.json", w1.s, w1.n, &e), e);
        same_result(&r1, &r2, 0, 0);
        free(w.s);
        free(w1.s);
        cmp_result_free(&r);
        cmp_result_free(&r1);
        cmp_result_free(&r2);
    }
}

static void test_read_file(void **state)
{
    (void)state;
    char dir[256], path[512];
    cmp_result r, r1;
    ef_err e = {0};
    tu_tmpdir(dir, sizeof dir);
    tu_join(path, sizeof path, dir, "c.json");
    sample(&r);
    assert_ok(cmp_write_json(&r, path, &e), e);
    assert_ok(cmp_read(&r1, path, &e), e);
    same_result(&r, &r1, 5e-4, 1e-9);
    assert_int_equal(r1.cap_reference + r1.surplus_reference +
                     r1.baselines_reference, 0);
    cmp_result_free(&r1);
    tu_join(path, sizeof path, dir, "none.json");
    assert_err(cmp_read(&r1, path, &e), e, path, NULL);
    assert_null(r1.cells);
    cmp_result_free(&r);
    tu_rmtree(dir);
}

/* ---- the reader's errors -------------------------------------------------- */

/* 'golden' with the first 'from' replaced by 'to'. */
static char *edit(const char *from, const char *to)
{
    const char *at = strstr(golden, from);
    assert_non_null(at);
    ef_buf b = {0};
    ef_buf_printf(&b, "%.*s%s%s", (int)(at - golden), golden, to,
                  at + strlen(from));
    return b.s;
}

static void bad(const char *from, const char *to, const char *want)
{
    char *s = edit(from, to);
    cmp_result r;
    ef_err e = {0};
    assert_err(cmp_parse(&r, "c.json", s, strlen(s), &e), e, "c.json", want);
    assert_null(r.cells);
    free(s);
}

static void test_errors(void **state)
{
    (void)state;
    bad("efplan-compare", "efplan-sim", "format: \"efplan-sim\"");
    bad("\"version\": 1", "\"version\": 2", "version: 2 is out of range");
    bad("\"fig12\"", "\"fast\"", "overhead: \"fast\"");
    bad("\"slot_seconds\": 60", "\"slot_seconds\": 0", "slot_seconds: 0");
    bad("\"slot_seconds\": 60", "\"slots\": 60", "slots");
    bad("\"met\": 257", "\"mett\": 257", "cells[0]");
    bad("\"met\": 130, ", "", "cells[1]: missing required key \"met\"");
    bad("\"deadline_ratio\": 0.5", "\"deadline_ratio\": 1.5",
        "cells[1].deadline_ratio: expected a number from 0 to 1");
    bad("\"published\": null", "\"published\": \"n/a\"",
        "cells[1].published: expected a number from 0 to 1 or null");
    bad("\"wall_seconds\": 12.346", "\"wall_seconds\": null",
        "cells[1].wall_seconds");
    bad("\"gpus\": 256", "\"gpus\": 0", "cells[0].gpus: 0 is out of range");
    bad("\"admitted\": 200", "\"admitted\": -1", "cells[1].admitted: -1 is out of range");
    bad("\"policy\": \"ef\"", "\"policy\": \"\"",
        "cells[0].policy: expected a non-empty string");
    bad("\"cluster\": \"n32g8\"", "\"cluster\": 5",
        "cells[0].cluster: expected a string, got");
    /* a second trace in the same row: not a grid */
    bad("\"trace\": \"inputs/traces/itp/cluster10.csv\", \"wall_seconds\": "
        "12", "\"trace\": \"other.csv\", \"wall_seconds\": 12",
        "cells: not a grid");
    bad("\"cluster\": \"n32g8\", \"deadline_jobs\": 260, \"deadline_ratio\": "
        "0.5", "\"cluster\": \"n4g8\", \"deadline_jobs\": 260, "
        "\"deadline_ratio\": 0.5", "cells: not a grid");
    cmp_result r;
    ef_err e = {0};
    const char *three = "{\"cells\": 3, \"format\": \"efplan-compare\", "
                        "\"overhead\": \"none\", \"slot_seconds\": 1, "
                        "\"version\": 1}";
    assert_err(cmp_parse(&r, "c.json", three, strlen(three), &e), e,
               "c.json", "cells: expected a non-empty array of cells, got "
               "an integer");
    const char *empty = "{\"cells\": [], \"format\": \"efplan-compare\", "
                        "\"overhead\": \"none\", \"slot_seconds\": 1, "
                        "\"version\": 1}";
    assert_err(cmp_parse(&r, "c.json", empty, strlen(empty), &e), e,
               "c.json", "cells: expected a non-empty array");
    assert_err(cmp_parse(&r, "c.json", "[1]", 3, &e), e, "c.json",
               "expected a JSON object");
    assert_err(cmp_parse(&r, "c.json", "{", 1, &e), e, "c.json:", NULL);
}

/* Write 'r' (then free it) and read it back: its shape. */
static void read_shape(cmp_result *r, int nt, int np)
{
    cmp_result r1;
    ef_err e = {0};
    ef_buf b = {0};
    cmp_json(r, &b);
    assert_ok(cmp_parse(&r1, "c.json", b.s, b.n, &e), e);
    assert_int_equal(r1.ntraces, nt);
    assert_int_equal(r1.npolicies, np);
    cmp_result_free(&r1);
    cmp_result_free(r);
    free(b.s);
}

/* Two traces x two policies, each the same policy on the same trace: the
 * narrowest grid that fits is taken (4 x 1); a true 2 x 3 grid is read
 * as one. */
static void test_shape(void **state)
{
    (void)state;
    cmp_result r;
    make(&r, 2, 2);
    for (int k = 0; k < 4; k++)
        set_cell(&r.cells[k], "t.csv", "ef", "n1g8", 8);
    read_shape(&r, 4, 1);
    make(&r, 2, 3);
    const char *pol[] = {"ef", "edf", "ef"};
    for (int k = 0; k < 6; k++)
        set_cell(&r.cells[k], k < 3 ? "a.csv" : "b.csv", pol[k % 3], "n1g8",
                 8);
    read_shape(&r, 2, 3);
}

/* ---- the grid --------------------------------------------------------------- */

static void run_grid(cmp_result *r, int threads, job_queue *q, cluster *cl,
                     const char *const *traces, const sim_policy **pols)
{
    cmp_grid g = {2, 3, traces, q, cl, pols, {0}, NULL, NULL};
    ef_err e = {0};
    sim_opts_default(&g.opts);
    g.opts.slot = 120;
    g.opts.cap_reference = 1;
    omp_set_num_threads(threads);
    assert_ok(cmp_run(&g, r, &e), e);
    for (int k = 0; k < 6; k++)
        r->cells[k].wall_seconds = 0;
}

static void test_grid(void **state)
{
    (void)state;
    job_queue q[2] = {{0}, {0}};
    cluster cl[2];
    ef_err e = {0};
    gen_opts go;
    gen_opts_default(&go);
    go.jobs = 40;
    go.mean_gap = 200;
    ts_gen(&q[0], &go);
    go.seed = 7;
    ts_gen(&q[1], &go);
    assert_ok(cluster_from_arg(&cl[0], "n2g8", &e), e);
    assert_ok(cluster_from_arg(&cl[1], "n4g8", &e), e);
    const char *traces[] = {"x/one.csv", "cluster10.json"};
    const sim_policy *pols[] = {sim_policy_find("ef"), sim_policy_find("edf"),
                                sim_policy_find("gandiva")};
    cmp_result r1, r4;
    run_grid(&r1, 1, q, cl, traces, pols);
    run_grid(&r4, 4, q, cl, traces, pols);
    ef_buf a = {0}, b = {0};
    cmp_json(&r1, &a);
    cmp_json(&r4, &b);
    assert_string_equal(a.s, b.s);
    /* each cell is its own trace and policy, trace-major */
    for (int k = 0; k < 6; k++) {
        const cmp_cell *c = &r4.cells[k];
        sim s;
        sim_opts o;
        sim_opts_default(&o);
        o.slot = 120;
        o.cap_reference = 1;
        assert_ok(sim_run(&s, &q[k / 3], &cl[k / 3], pols[k % 3], &o, &e), e);
        sim_metrics m;
        sim_metrics_compute(&s, &m);
        sim_free(&s);
        assert_string_equal(c->trace, traces[k / 3]);
        assert_string_equal(c->policy, pols[k % 3]->name);
        assert_string_equal(c->cluster, cl[k / 3].name);
        assert_int_equal(c->gpus, cl[k / 3].total_gpus);
        assert_int_equal(c->met, m.met);
        assert_int_equal(c->admitted, m.admitted);
        assert_int_equal(c->rescales, m.rescales);
        assert_true(c->deadline_ratio == m.deadline_ratio);
    }
    /* published numbers by the trace's stem and the cluster's size */
    assert_true(r4.cells[0].published < 0);
    assert_true(r4.cells[3].published < 0); /* cluster10, but 32 GPUs */
    assert_int_equal(r4.slot, 120);
    assert_int_equal(r4.cap_reference, 1);
    free(a.s);
    free(b.s);
    cmp_result_free(&r1);
    cmp_result_free(&r4);
    queue_free(&q[0]);
    queue_free(&q[1]);
}

/* A failing cell: its error, the first in grid order. */
static void test_grid_error(void **state)
{
    (void)state;
    job_queue q = {0};
    cluster cl;
    ef_err e = {0};
    gen_opts go;
    gen_opts_default(&go);
    go.jobs = 5;
    ts_gen(&q, &go);
    /* a pollux data directory that does not exist */
    assert_ok(cluster_from_arg(&cl, "n1g8", &e), e);
    const char *traces[] = {"t.csv"};
    const sim_policy *pols[] = {sim_policy_find("ef"),
                                sim_policy_find("pollux")};
    cmp_grid g = {1, 2, traces, &q, &cl, pols, {0}, NULL, NULL};
    sim_opts_default(&g.opts);
    g.opts.pollux_dir = "/nonexistent/pollux";
    cmp_result r;
    assert_int_equal(cmp_run(&g, &r, &e), EF_ERR);
    assert_contains(e.msg, "/nonexistent/pollux");
    assert_null(r.cells);
    queue_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_stem),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_shape),
        cmocka_unit_test(test_grid),
        cmocka_unit_test(test_grid_error),
    };
    return cmocka_run_group_tests(tests, tp_setup, tp_teardown);
}
