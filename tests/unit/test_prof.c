/*
 * test_prof.c: the profiler's CPU side (profiler/prof.h): presets, the
 * step-time model, the fit recovering known parameters from synthetic
 * measurements (with and without noise), parameters the cells cannot
 * determine, the refusal of a poor fit, the curve and provenance files
 * read back by the planner's curve reader and by jansson, and the GPU
 * side of a build without CUDA; the fit-error statistics of a table
 * (prof_table_*, prof_err_stats_of) on hand-computed values.
 */
#include "testutil.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>

#include "common/util.h"
#include "model/curve.h"
#include "profiler/prof.h"
#include "profiler/prof_gpu.h"
#include "profiler/prof_measure.h"

/* The parameters the synthetic measurements come from. */
static prof_model truth(void)
{
    prof_model m;
    memset(&m, 0, sizeof m);
    m.bytes = 100e6;
    m.gpus_per_node = 8;
    m.latency = PROF_LAT_TREE;
    m.p[PROF_P_STEP] = 0.010;
    m.p[PROF_P_SAMPLE] = 0.002;
    m.p[PROF_P_INTRA] = 8.0 / 600e9; /* 600 Gbit/s */
    m.p[PROF_P_INTER] = 8.0 / 200e9; /* 200 Gbit/s */
    m.p[PROF_P_HOP] = 300e-6;
    return m;
}

/* A seeded generator: uniform in [-1, 1). */
static double noise(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / (double)(1ULL << 52) - 1.0;
}

static const long batches[] = {64, 128, 256};

/* Cells of 'm' for the batches above at 1..maxk GPUs, each off by up to
 * +-rel (seeded). Returns the count. */
static int synth(const prof_model *m, int maxk, double rel, prof_obs *obs,
                 unsigned long long seed)
{
    int n = 0;
    for (int b = 0; b < 3; b++)
        for (int k = 1; k <= maxk; k *= 2) {
            double t = prof_tput(m, batches[b], k);
            obs[n++] = (prof_obs){batches[b], k, t * (1 + rel * noise(&seed))};
        }
    return n;
}

static void assert_close(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want))) {
        print_error("    got %.9g, expected %.9g (within %g%%)\n", got, want,
                    100 * rel);
        fail();
    }
}

static void test_presets(void **state)
{
    (void)state;
    int n;
    const prof_preset *p = prof_presets(&n);
    const char *want[] = {"bert", "deepspeech2", "gpt2", "inception3",
                          "resnet50", "resnet50_cifar10", "vgg16"};
    assert_int_equal(n, 7);
    for (int i = 0; i < n; i++) {
        assert_string_equal(p[i].name, want[i]);
        assert_true(p[i].params > 1e6 && p[i].flops_per_sample > 1e6);
        assert_true(strlen(p[i].source) > 10);
        assert_ptr_equal(prof_preset_find(want[i]), &p[i]);
    }
    assert_null(prof_preset_find("resnet"));
    /* torchvision's figures, FLOPs = 2 x MACs */
    assert_close(prof_preset_find("resnet50")->params, 25557032, 0);
    assert_close(prof_preset_find("vgg16")->flops_per_sample, 30.94e9, 1e-9);
}

static void test_model(void **state)
{
    (void)state;
    prof_model m = truth();
    /* one GPU: compute only */
    assert_close(prof_step_time(&m, 64, 1), 0.010 + 0.002 * 64, 1e-12);
    /* 8 GPUs in a node: ring bytes 2*7/8, 3 latency steps */
    double t8 = 0.010 + 0.002 * 8 + 1.75 * 100e6 * 8 / 600e9 + 3 * 300e-6;
    assert_close(prof_step_time(&m, 64, 8), t8, 1e-12);
    /* 16 GPUs: two whole nodes, inter-node bandwidth */
    double t16 = 0.010 + 0.002 * 4 + 2.0 * 15 / 16 * 100e6 * 8 / 200e9 +
                 4 * 300e-6;
    assert_close(prof_step_time(&m, 64, 16), t16, 1e-12);
    assert_close(prof_tput(&m, 64, 16), 1 / t16, 1e-12);
    /* ring latency: 2(k-1) steps */
    m.latency = PROF_LAT_RING;
    assert_close(prof_step_time(&m, 64, 8), t8 + (14 - 3) * 300e-6, 1e-12);
}

/* Exact cells: every parameter comes back (up to rounding). */
static void test_fit_exact(void **state)
{
    (void)state;
    prof_model t = truth(), m;
    prof_obs obs[64];
    int n = synth(&t, 64, 0.0, obs, 1);
    memset(&m, 0, sizeof m);
    m.bytes = t.bytes;
    m.gpus_per_node = 8;
    prof_fit_info info;
    ef_err e = {0};
    assert_ok(prof_fit(&m, NULL, obs, n, &info, &e), e);
    for (int j = 0; j < PROF_NPARAMS; j++) {
        assert_true(info.fitted[j]);
        assert_close(m.p[j], t.p[j], 1e-6);
    }
    assert_true(info.max_rel_err < 1e-9);
    assert_int_equal(info.nobs, n);
}

/* Noisy cells. At 0.1% noise every parameter comes back closely; at 1%
 * the compute parameters still do, while intra-node bandwidth and latency
 * trade off against each other (both only grow with k inside a node), so
 * what is checked there is that the fitted model predicts every cell,
 * 1 to 64 GPUs, within the noise. Three seeds each. */
static void test_fit_noisy(void **state)
{
    (void)state;
    static const double tol[PROF_NPARAMS] = {0.03, 0.01, 0.10, 0.05, 0.10};
    prof_model t = truth(), m;
    prof_obs obs[64];
    for (unsigned long long seed = 1; seed <= 3; seed++) {
        int n = synth(&t, 64, 0.001, obs, seed * 7919);
        memset(&m, 0, sizeof m);
        m.bytes = t.bytes;
        m.gpus_per_node = 8;
        prof_fit_info info;
        ef_err e = {0};
        assert_ok(prof_fit(&m, NULL, obs, n, &info, &e), e);
        for (int j = 0; j < PROF_NPARAMS; j++)
            assert_close(m.p[j], t.p[j], tol[j]);
        assert_true(info.max_rel_err < 0.0015);

        n = synth(&t, 64, 0.01, obs, seed * 7919);
        assert_ok(prof_fit(&m, NULL, obs, n, &info, &e), e);
        assert_close(m.p[PROF_P_SAMPLE], t.p[PROF_P_SAMPLE], 0.01);
        assert_close(m.p[PROF_P_STEP], t.p[PROF_P_STEP], 0.15);
        assert_true(info.max_rel_err < 0.015);
        for (int b = 0; b < 3; b++)
            for (int k = 1; k <= 64; k *= 2)
                assert_close(prof_tput(&m, batches[b], k),
                             prof_tput(&t, batches[b], k), 0.01);
    }
}

/* Only 1..8 GPUs measured: the inter-node bandwidth cannot be told. With
 * a given value it is kept and the other columns are modelled; without,
 * it is missing and the cells past one node are refused. */
static void test_fit_one_node(void **state)
{
    (void)state;
    prof_model t = truth(), m;
    prof_obs obs[64];
    int n = synth(&t, 8, 0.0, obs, 1);
    int given[PROF_NPARAMS] = {0};
    prof_fit_info info;
    prof_curve c;
    ef_err e = {0};
    memset(&m, 0, sizeof m);
    m.bytes = t.bytes;
    m.gpus_per_node = 8;
    m.p[PROF_P_INTER] = t.p[PROF_P_INTER];
    given[PROF_P_INTER] = 1;
    assert_ok(prof_fit(&m, given, obs, n, &info, &e), e);
    assert_false(info.fitted[PROF_P_INTER]);
    assert_true(info.given[PROF_P_INTER]);
    assert_false(info.missing[PROF_P_INTER]);
    assert_close(m.p[PROF_P_INTRA], t.p[PROF_P_INTRA], 1e-6);
    long rows[] = {64, 128, 256, 512};
    prof_fill(&c, &m, &info, 0.10, rows, 4, 64, obs, NULL, n);
    assert_true(c.accepted);
    assert_int_equal(c.nlevels, 7);
    assert_int_equal(c.src[0][3], PROF_SRC_MEASURED);
    assert_close(c.cell[0][3], obs[3].tput, 0);
    assert_int_equal(c.src[0][6], PROF_SRC_MODELLED);
    assert_close(c.cell[0][6], prof_tput(&t, 64, 64), 1e-6);
    assert_int_equal(c.src[3][0], PROF_SRC_MODELLED); /* batch 512 */
    assert_close(c.cell[3][2], prof_tput(&t, 512, 4), 1e-6);
    prof_curve_free(&c);

    /* no value given */
    memset(&m, 0, sizeof m);
    m.bytes = t.bytes;
    m.gpus_per_node = 8;
    assert_ok(prof_fit(&m, NULL, obs, n, &info, &e), e);
    assert_true(info.missing[PROF_P_INTER]);
    prof_fill(&c, &m, &info, 0.10, rows, 4, 64, obs, NULL, n);
    assert_true(c.accepted);
    assert_int_equal(c.src[0][4], PROF_SRC_REFUSED);
    assert_int_equal(c.cell[0][4], 0);
    assert_int_equal(c.src[3][3], PROF_SRC_MODELLED);
    assert_contains(c.reason, "inter-node");
    prof_curve_free(&c);

    /* more GPUs than samples: not runnable */
    long small[] = {2};
    prof_fill(&c, &m, &info, 0.10, small, 1, 8, obs, NULL, n);
    assert_int_equal(c.src[0][1], PROF_SRC_MODELLED);
    assert_int_equal(c.src[0][2], PROF_SRC_NONE);
    prof_curve_free(&c);
}

/* One GPU measured at two batch sizes: compute and step overhead are
 * fitted, both bandwidths are missing (cells on 2+ GPUs refused), the
 * latency is taken as 0. */
static void test_fit_one_gpu(void **state)
{
    (void)state;
    prof_model t = truth(), m;
    prof_obs obs[2] = {{64, 1, prof_tput(&t, 64, 1)},
                       {256, 1, prof_tput(&t, 256, 1)}};
    prof_fit_info info;
    ef_err e = {0};
    memset(&m, 0, sizeof m);
    m.bytes = t.bytes;
    m.gpus_per_node = 8;
    assert_ok(prof_fit(&m, NULL, obs, 2, &info, &e), e);
    assert_true(info.fitted[PROF_P_SAMPLE] && info.fitted[PROF_P_STEP]);
    assert_close(m.p[PROF_P_SAMPLE], t.p[PROF_P_SAMPLE], 1e-9);
    assert_close(m.p[PROF_P_STEP], t.p[PROF_P_STEP], 1e-6);
    assert_true(info.missing[PROF_P_INTRA] && info.missing[PROF_P_INTER]);
    assert_false(info.missing[PROF_P_HOP]); /* taken as 0 */
    assert_true(m.p[PROF_P_HOP] == 0);
    prof_curve c;
    long rows[] = {64};
    prof_fill(&c, &m, &info, 0.10, rows, 1, 16, obs, NULL, 2);
    assert_int_equal(c.src[0][0], PROF_SRC_MEASURED);
    for (int l = 1; l < 5; l++)
        assert_int_equal(c.src[0][l], PROF_SRC_REFUSED);
    assert_contains(c.reason, "intra-node");
    prof_curve_free(&c);
}

/* Cells no model of this shape can follow: the fit is off by more than
 * the threshold and every modelled cell is refused. */
static void test_fit_refused(void **state)
{
    (void)state;
    prof_obs obs[] = {{64, 1, 10}, {64, 2, 30}, {64, 4, 5}, {64, 8, 40}};
    prof_model m;
    memset(&m, 0, sizeof m);
    m.bytes = 1e8;
    m.gpus_per_node = 8;
    prof_fit_info info;
    ef_err e = {0};
    assert_ok(prof_fit(&m, NULL, obs, 4, &info, &e), e);
    assert_true(info.max_rel_err > 0.10);
    for (int j = 0; j < PROF_NPARAMS; j++)
        assert_true(m.p[j] >= 0); /* non-negative least squares */
    prof_curve c;
    long rows[] = {64, 128};
    prof_fill(&c, &m, &info, 0.10, rows, 2, 8, obs, NULL, 4);
    assert_false(c.accepted);
    assert_contains(c.reason, "off by up to");
    assert_int_equal(c.src[0][1], PROF_SRC_MEASURED);
    for (int l = 0; l < 4; l++) {
        assert_int_equal(c.src[1][l], PROF_SRC_REFUSED);
        assert_true(c.cell[1][l] == 0);
    }
    prof_curve_free(&c);
    /* a loose enough threshold accepts it */
    prof_fill(&c, &m, &info, 10.0, rows, 2, 8, obs, NULL, 4);
    assert_true(c.accepted);
    assert_int_equal(c.src[1][0], PROF_SRC_MODELLED);
    prof_curve_free(&c);
}

static void test_fit_errors(void **state)
{
    (void)state;
    prof_model m;
    memset(&m, 0, sizeof m);
    m.bytes = 1e8;
    m.gpus_per_node = 8;
    prof_fit_info info;
    ef_err e = {0};
    assert_err(prof_fit(&m, NULL, NULL, 0, &info, &e), e, "no measured",
               NULL);
    prof_obs bad[] = {{64, 3, 1.0}};
    assert_err(prof_fit(&m, NULL, bad, 1, &info, &e), e, "cell 0",
               "3 GPUs");
    prof_obs small[] = {{4, 8, 1.0}};
    assert_err(prof_fit(&m, NULL, small, 1, &info, &e), e, "cell 0", NULL);
    prof_obs zero[] = {{64, 1, 0.0}};
    assert_err(prof_fit(&m, NULL, zero, 1, &info, &e), e, "cell 0", NULL);
}

/* A filled curve written as CSV and as curve JSON reads back through the
 * planner's reader with the same cells; the provenance says which cells
 * were measured. */
static void test_files_read_back(void **state)
{
    (void)state;
    prof_model t = truth(), m;
    prof_obs obs[64];
    prof_spread sp[64];
    int n = synth(&t, 8, 0.0, obs, 1);
    memset(sp, 0, sizeof sp);
    for (int i = 0; i < n; i++)
        sp[i] = (prof_spread){5, obs[i].tput * 0.99, obs[i].tput * 1.01,
                              0.02, obs[i].gpus > 1 ? 500.0 : 0};
    int given[PROF_NPARAMS] = {0};
    prof_fit_info info;
    prof_curve c;
    ef_err e = {0};
    memset(&m, 0, sizeof m);
    m.bytes = t.bytes;
    m.gpus_per_node = 8;
    m.p[PROF_P_INTER] = t.p[PROF_P_INTER];
    given[PROF_P_INTER] = 1;
    assert_ok(prof_fit(&m, given, obs, n, &info, &e), e);
    long rows[] = {64, 128, 256};
    prof_fill(&c, &m, &info, 0.10, rows, 3, 64, obs, sp, n);

    char d1[256], d2[256], d3[256], path[512];
    tu_tmpdir(d1, sizeof d1);
    tu_tmpdir(d2, sizeof d2);
    tu_tmpdir(d3, sizeof d3);
    tu_join(path, sizeof path, d1, "synth.csv");
    assert_ok(prof_write_csv(&c, path, &e), e);
    tu_join(path, sizeof path, d2, "synth.json");
    assert_ok(prof_write_curve_json(&c, "synth", path, &e), e);
    for (int pass = 0; pass < 2; pass++) {
        curve_set cs = {0};
        assert_ok(curve_set_load(&cs, pass ? d2 : d1, &e), e);
        const curve_model *cm = curve_find_model(&cs, "synth");
        assert_non_null(cm);
        assert_int_equal(cm->nrows, 3);
        for (int r = 0; r < 3; r++) {
            assert_int_equal(cm->rows[r].batch, rows[r]);
            for (int l = 0; l < 7; l++) {
                assert_true(cm->rows[r].measured[l]);
                assert_close(cm->rows[r].cell[l], c.cell[r][l], 1e-8);
            }
            assert_false(cm->rows[r].measured[7]);
            /* the ladder ends at the modelled peak */
            assert_true(cm->rows[r].nusable >= 4);
        }
        curve_set_free(&cs);
    }
    prof_provenance pv = {"synth", 0, 25e6, 8e9, 4, "measured", "Test GPU",
                          13000, 13000, 22809, 8, 5, 3, 10};
    tu_join(path, sizeof path, d3, "synth.profile.json");
    assert_ok(prof_write_json(&c, &m, &info, &pv, path, &e), e);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    assert_non_null(root);
    assert_string_equal(json_string_value(json_object_get(root, "format")),
                        "efplan-profile");
    json_t *gpu = json_object_get(root, "gpu");
    assert_string_equal(json_string_value(json_object_get(gpu, "name")),
                        "Test GPU");
    assert_string_equal(
        json_string_value(json_object_get(gpu, "nccl_version")), "2.28.9");
    json_t *cells = json_object_get(root, "cells");
    assert_int_equal(json_array_size(cells), 3 * 7);
    int measured = 0, modelled = 0;
    for (size_t i = 0; i < json_array_size(cells); i++) {
        json_t *x = json_array_get(cells, i);
        const char *s = json_string_value(json_object_get(x, "source"));
        long g = (long)json_integer_value(json_object_get(x, "gpus"));
        if (strcmp(s, "measured") == 0) {
            measured++;
            assert_true(g <= 8);
            assert_int_equal(json_integer_value(json_object_get(x, "repeats")),
                             5);
            assert_non_null(json_object_get(x, "relative_spread"));
        } else {
            assert_string_equal(s, "modelled");
            assert_true(g > 8);
            modelled++;
        }
    }
    assert_int_equal(measured, 12);
    assert_int_equal(modelled, 9);
    json_t *fit = json_object_get(root, "fit");
    assert_true(json_is_true(json_object_get(fit, "accepted")));
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(fit, "given"), 0)),
        "inter_node_s_per_byte");
    json_decref(root);
    /* the same inputs give the same bytes */
    char path2[512], *a, *b;
    size_t la, lb;
    tu_join(path2, sizeof path2, d3, "again.json");
    assert_ok(prof_write_json(&c, &m, &info, &pv, path2, &e), e);
    assert_ok(ef_read_file(path, &a, &la, &e), e);
    assert_ok(ef_read_file(path2, &b, &lb, &e), e);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    free(a);
    free(b);
    prof_curve_free(&c);
    tu_rmtree(d1);
    tu_rmtree(d2);
    tu_rmtree(d3);
}

static void test_stats(void **state)
{
    (void)state;
    double v[] = {10, 8, 12, 9, 11};
    prof_spread s;
    double med;
    prof_stats(v, 5, &s, &med);
    assert_close(med, 10, 0);
    assert_close(s.min, 8, 0);
    assert_close(s.max, 12, 0);
    assert_close(s.rel_spread, 0.4, 1e-12);
    assert_int_equal(s.repeats, 5);
    double w[] = {4, 2};
    assert_close(prof_median(w, 2), 3, 0);
}

/* Fit-error statistics: median and worst, by hand. */
static void test_err_stats(void **state)
{
    (void)state;
    double v[] = {0.3, 0.1, 0.2, 0.05};
    prof_err_stats s;
    prof_err_stats_of(v, 4, &s);
    assert_int_equal(s.n, 4);
    assert_close(s.median, 0.15, 1e-15);
    assert_close(s.worst, 0.3, 0);
    assert_close(v[0], 0.05, 0); /* sorted */
    double w[] = {0.07, 0.01, 0.4};
    prof_err_stats_of(w, 3, &s);
    assert_close(s.median, 0.07, 0);
    assert_close(s.worst, 0.4, 0);
    prof_err_stats_of(NULL, 0, &s);
    assert_int_equal(s.n, 0);
    assert_true(s.median == 0 && s.worst == 0);
}

/* The figures the caller knows become s/byte and s, marked given. */
static void test_model_init(void **state)
{
    (void)state;
    prof_model m;
    int given[PROF_NPARAMS];
    prof_model_init(&m, given, 4e8, 8, PROF_LAT_RING, 600, 200, 300);
    assert_close(m.bytes, 4e8, 0);
    assert_int_equal(m.gpus_per_node, 8);
    assert_int_equal(m.latency, PROF_LAT_RING);
    assert_close(m.p[PROF_P_INTRA], 8.0 / 600e9, 1e-15);  /* 1.33e-11 */
    assert_close(m.p[PROF_P_INTER], 4e-11, 1e-15);
    assert_close(m.p[PROF_P_HOP], 3e-4, 1e-15);
    assert_true(m.p[PROF_P_STEP] == 0 && m.p[PROF_P_SAMPLE] == 0);
    assert_int_equal(given[PROF_P_INTRA] + given[PROF_P_INTER] +
                     given[PROF_P_HOP], 3);
    assert_int_equal(given[PROF_P_STEP] + given[PROF_P_SAMPLE], 0);
    /* unknown: 0 bandwidths, a negative latency; 0 us is known */
    prof_model_init(&m, given, 1, 4, PROF_LAT_TREE, 0, -1, -1);
    for (int p = 0; p < PROF_NPARAMS; p++) {
        assert_int_equal(given[p], 0);
        assert_true(m.p[p] == 0);
    }
    prof_model_init(&m, given, 1, 4, PROF_LAT_TREE, 0, 0, 0);
    assert_int_equal(given[PROF_P_HOP], 1);
}

/*
 * A table and a model by hand: time(B, k) = 0.05 s x B / k (compute
 * only), so the model gives 20 k / B it/s:
 *   batch 2: 1 GPU 10 (published 10, error 0), 2 GPUs 20 (16: 0.25),
 *            4 GPUs: more GPUs than samples, left out;
 *   batch 4: 1 GPU 5 (4: 0.25), 2 GPUs 10 (10: 0), 4 GPUs 20 (25: 0.2);
 *   the 8-GPU column is empty (left out; the widest column still).
 * Fitted up to 2 GPUs: errors 0, 0.25, 0.25, 0 (median 0.125, worst
 * 0.25); predicted: 0.2.
 */
static void test_table(void **state)
{
    (void)state;
    static const char csv[] = "global_batch_size,1,2,4,8\n"
                              "2,10,16,30,\n"
                              "4,4,10,25,\n";
    curve_model cm;
    ef_err e = {0};
    assert_ok(curve_parse_csv(&cm, "hand", "hand.csv", csv, strlen(csv), &e),
              e);
    prof_table t;
    prof_table_of(&t, &cm, 2);
    assert_int_equal(t.nbatch, 2);
    assert_int_equal(t.batch[0], 2);
    assert_int_equal(t.batch[1], 4);
    assert_int_equal(t.widest, 8);
    assert_int_equal(t.ncells, 5);
    assert_int_equal(t.nfit, 4);
    static const long want_b[] = {2, 2, 4, 4, 4};
    static const int want_g[] = {1, 2, 1, 2, 4}, want_fit[] = {1, 1, 1, 1, 0};
    static const double want_t[] = {10, 16, 4, 10, 25};
    for (int k = 0; k < 5; k++) {
        assert_int_equal(t.cells[k].batch, want_b[k]);
        assert_int_equal(t.cells[k].gpus, want_g[k]);
        assert_close(t.cells[k].tput, want_t[k], 0);
        assert_int_equal(t.fitted[k], want_fit[k]);
    }
    for (int k = 0; k < 4; k++)
        assert_int_equal(t.fit[k].gpus, want_g[k]);
    prof_model m;
    int given[PROF_NPARAMS];
    prof_model_init(&m, given, 1e6, 8, PROF_LAT_TREE, 0, 0, -1);
    m.p[PROF_P_SAMPLE] = 0.05;
    prof_table_errs x;
    prof_table_errors(&t, &m, &x);
    static const double want_m[] = {10, 20, 5, 10, 20};
    static const double want_e[] = {0, 0.25, 0.25, 0, 0.2};
    for (int k = 0; k < 5; k++) {
        assert_close(x.modelled[k], want_m[k], 1e-12);
        assert_true(fabs(x.rel_err[k] - want_e[k]) <= 1e-12);
    }
    assert_int_equal(x.fitted.n, 4);
    assert_true(fabs(x.fitted.median - 0.125) <= 1e-12);
    assert_close(x.fitted.worst, 0.25, 1e-12);
    assert_int_equal(x.predicted.n, 1);
    assert_close(x.predicted.median, 0.2, 1e-12);
    assert_close(x.predicted.worst, 0.2, 1e-12);
    prof_table_errs_free(&x);
    prof_table_free(&t);
    /* every cell fitted: nothing predicted */
    prof_table_of(&t, &cm, INT_MAX);
    assert_int_equal(t.nfit, 5);
    prof_table_errors(&t, &m, &x);
    assert_int_equal(x.predicted.n, 0);
    assert_true(fabs(x.fitted.median - 0.2) <= 1e-12);
    /* the fit's own statistics are the same numbers */
    prof_model f;
    prof_fit_info info;
    prof_model_init(&f, given, 1e6, 8, PROF_LAT_TREE, 0, 0, -1);
    assert_ok(prof_fit(&f, given, t.fit, t.nfit, &info, &e), e);
    prof_table_errs_free(&x);
    prof_table_errors(&t, &f, &x);
    assert_close(info.median_rel_err, x.fitted.median, 1e-15);
    assert_close(info.max_rel_err, x.fitted.worst, 1e-15);
    prof_table_errs_free(&x);
    prof_table_free(&t);
    curve_model_free(&cm);
}

/* Refused cells are counted. */
static void test_refused(void **state)
{
    (void)state;
    prof_src src[2][CURVE_MAX_LEVELS] = {
        {PROF_SRC_MEASURED, PROF_SRC_REFUSED, PROF_SRC_REFUSED},
        {PROF_SRC_NONE, PROF_SRC_MODELLED, PROF_SRC_REFUSED}};
    prof_curve c = {0};
    c.nrows = 2;
    c.nlevels = 3;
    c.src = src;
    assert_int_equal(prof_curve_refused(&c), 3);
    c.nlevels = 1;
    assert_int_equal(prof_curve_refused(&c), 0);
}

/* This program links the GPU side of a build without CUDA. */
static void test_not_built(void **state)
{
    (void)state;
    prof_measured ms;
    ef_err e = {0};
    long b[] = {64};
    prof_measure_opts o = {8e9, 1e8, b, 1, 8, 3, 1, 2, NULL, NULL};
    assert_int_equal(prof_measure(&o, &ms, &e), PROF_GPU_NOT_BUILT);
    assert_int_equal(ms.n, 0);
    assert_contains(e.msg, "built without CUDA");
    prof_measured_free(&ms);
    prof_gpu_env env;
    assert_int_equal(prof_gpu_probe(&env, &e), PROF_GPU_NOT_BUILT);
    assert_int_equal(env.ndevices, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets),
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_fit_exact),
        cmocka_unit_test(test_fit_noisy),
        cmocka_unit_test(test_fit_one_node),
        cmocka_unit_test(test_fit_one_gpu),
        cmocka_unit_test(test_fit_refused),
        cmocka_unit_test(test_fit_errors),
        cmocka_unit_test(test_files_read_back),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_err_stats),
        cmocka_unit_test(test_model_init),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_not_built),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
