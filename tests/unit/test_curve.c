/* test_curve.c: throughput curves and the usable-size rule
 * (model/curve.h). */
#include "testutil.h"

#include <limits.h>
#include <math.h>

#include "model/curve.h"

/* A row with cells c[0..n) at 1, 2, 4, ... GPUs. */
static curve_row mkrow(const double *c, int n)
{
    curve_row r;
    memset(&r, 0, sizeof r);
    r.batch = 64;
    for (int i = 0; i < n; i++) {
        r.cell[i] = c[i];
        r.measured[i] = 1;
    }
    return r;
}

/* curve_usable(row, cap) must give exactly want[0..nwant). */
static void check_usable(const curve_row *r, int cap, const int *want,
                         int nwant, const char *file, int line)
{
    int g[CURVE_MAX_LEVELS];
    double t[CURVE_MAX_LEVELS];
    int n = curve_usable(r, cap, g, t);
    int ok = n == nwant;
    for (int i = 0; ok && i < n; i++)
        ok = g[i] == want[i] && t[i] == r->cell[__builtin_ctz((unsigned)g[i])];
    if (!ok) {
        char got[256] = "", exp[256] = "";
        size_t o = 0;
        for (int i = 0; i < n; i++)
            o += (size_t)snprintf(got + o, sizeof got - o, "%d(%g) ", g[i],
                                  t[i]);
        o = 0;
        for (int i = 0; i < nwant; i++)
            o += (size_t)snprintf(exp + o, sizeof exp - o, "%d ", want[i]);
        print_error("    usable sizes (cap %d): got { %s}, expected { %s}\n",
                    cap, got, exp);
        _fail(file, line);
    }
    /* the count alone, without output arrays, agrees */
    if (curve_usable(r, cap, NULL, NULL) != n) {
        print_error("    count without arrays differs\n");
        _fail(file, line);
    }
}
#define USABLE(r, cap, ...)                                                 \
    do {                                                                    \
        static const int want_[] = {__VA_ARGS__};                           \
        check_usable((r), (cap), want_ + 1,                                 \
                     (int)(sizeof want_ / sizeof *want_) - 1, __FILE__,     \
                     __LINE__);                                             \
    } while (0)
/* USABLE(r, cap, 0, sizes...): the leading 0 lets the list be empty. */

/* ---- the usable-size rule on hand-made rows ------------------------------ */

static void test_usable_monotone(void **state)
{
    double c[] = {1.0, 1.9, 3.5, 6.0, 9.0, 11.0, 12.5};
    curve_row r = mkrow(c, 7);
    USABLE(&r, INT_MAX, 0, 1, 2, 4, 8, 16, 32, 64);
}

static void test_usable_dip(void **state)
{
    /* T4 ncf, batch 32768 */
    double c[] = {46.914146350193334, 37.6167335622182, 56.34158886973979,
                  23.22881167731976, 32.486770504915164, 26.05323201698794,
                  22.47946282244047};
    curve_row r = mkrow(c, 7);
    USABLE(&r, INT_MAX, 0, 1, 4);
    /* a dip, then a new peak further out */
    double d[] = {2.0, 1.0, 3.0, 2.5, 4.0};
    curve_row r2 = mkrow(d, 5);
    USABLE(&r2, INT_MAX, 0, 1, 4, 16);
}

static void test_usable_holes(void **state)
{
    double c[] = {1.0, 0.0, 2.0, NAN, 3.0, 0.0, 4.0};
    curve_row r = mkrow(c, 7);
    USABLE(&r, INT_MAX, 0, 1, 4, 16, 64);
    /* the 1-GPU cell missing: the ladder starts at 2 */
    double d[] = {0.0, 5.0, 7.0};
    curve_row r2 = mkrow(d, 3);
    USABLE(&r2, INT_MAX, 0, 2, 4);
    double f[] = {NAN, 0.0, 0.0, 1.5};
    curve_row r3 = mkrow(f, 4);
    USABLE(&r3, INT_MAX, 0, 8);
    /* nothing runnable: nothing usable */
    double z[] = {0.0, 0.0, NAN};
    curve_row r4 = mkrow(z, 3);
    USABLE(&r4, INT_MAX, 0);
}

static void test_usable_cap(void **state)
{
    double c[] = {1.0, 2.0, 3.0, 4.0, 5.0};
    curve_row r = mkrow(c, 5);
    USABLE(&r, 16, 0, 1, 2, 4, 8, 16);
    USABLE(&r, 4, 0, 1, 2, 4);
    USABLE(&r, 7, 0, 1, 2, 4);
    USABLE(&r, 3, 0, 1, 2);
    USABLE(&r, 1, 0, 1);
    USABLE(&r, 0, 0);
    USABLE(&r, -5, 0);
    double d[] = {0.0, 5.0, 7.0};
    curve_row r2 = mkrow(d, 3);
    USABLE(&r2, 1, 0);
}

static void test_usable_equal_is_not_usable(void **state)
{
    double c[] = {5.0, 5.0, 6.0, 6.0, 6.5};
    curve_row r = mkrow(c, 5);
    USABLE(&r, INT_MAX, 0, 1, 4, 16);
    double d[] = {3.0, 3.0, 3.0};
    curve_row r2 = mkrow(d, 3);
    USABLE(&r2, INT_MAX, 0, 1);
}

static void test_usable_ends_at_peak(void **state)
{
    double c[] = {1.0, 3.0, 2.0, 2.9, 2.99, 0.5};
    curve_row r = mkrow(c, 6);
    USABLE(&r, INT_MAX, 0, 1, 2);
    double top[] = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0,
                    9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0};
    curve_row big = mkrow(top, CURVE_MAX_LEVELS);
    int g[CURVE_MAX_LEVELS];
    assert_int_equal(curve_usable(&big, INT_MAX, g, NULL), CURVE_MAX_LEVELS);
    assert_int_equal(g[CURVE_MAX_LEVELS - 1], 1 << (CURVE_MAX_LEVELS - 1));
}

/* ---- curve_parse_csv ----------------------------------------------------- */

static const char ncf_csv[] =
    "global_batch_size,1,2,4,8,16,32,64\n"
    "32768,46.914146350193334,37.6167335622182,56.34158886973979,"
    "23.22881167731976,32.486770504915164,26.05323201698794,"
    "22.47946282244047\n";

static void test_tput_and_max_usable(void **state)
{
    curve_model m;
    ef_err e = {0};
    assert_ok(curve_parse_csv(&m, "ncf", "c/ncf.csv", ncf_csv,
                              strlen(ncf_csv), &e), e);
    assert_int_equal(m.nrows, 1);
    const curve_row *r = &m.rows[0];
    assert_int_equal(r->nusable, 2);
    assert_true(curve_tput(r, 1) == 46.914146350193334);
    assert_true(curve_tput(r, 4) == 56.34158886973979);
    assert_true(curve_tput(r, 2) == 0.0);  /* measured, but a dip */
    assert_true(curve_tput(r, 3) == 0.0);  /* not a power of two */
    assert_true(curve_tput(r, 8) == 0.0);
    assert_true(curve_tput(r, 0) == 0.0);
    assert_int_equal(curve_max_usable(r, 64), 4);
    assert_int_equal(curve_max_usable(r, 4), 4);
    assert_int_equal(curve_max_usable(r, 3), 1);
    assert_int_equal(curve_max_usable(r, 1), 1);
    assert_int_equal(curve_max_usable(r, 0), 0);
    curve_model_free(&m);
}

/* curve_tput's table and the fit tables (curve_row_ready) say what the
 * usable ladder says, for every count from -1 to past the largest level:
 * the ladder's throughput at a usable size, 0 at any other count (a dip,
 * a hole, a count that is not a power of two, 0, negative, too large);
 * for f free GPUs, the largest usable size <= f and its throughput. */
static void test_tput_table(void **state)
{
    double rows[][CURVE_MAX_LEVELS] = {
        {2.0, 1.0, 3.0, 2.5, 4.0},
        {0.0, 5.0, 7.0, NAN, 9.0, 9.0, 10.0},
        {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
         13.0, 14.0, 15.0, 16.0},
        {0.0, 0.0, NAN},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        curve_row r = mkrow(rows[k], CURVE_MAX_LEVELS);
        int n = curve_row_ready(&r);
        assert_int_equal(n, curve_usable(&r, INT_MAX, NULL, NULL));
        for (int g = -1; g <= (1 << CURVE_MAX_LEVELS) + 1; g++) {
            double want = 0.0;
            for (int i = 0; i < r.nusable; i++)
                if (r.usable_gpus[i] == g)
                    want = r.usable_tput[i];
            assert_true(curve_tput(&r, g) == want);
        }
        /* the fit tables: the largest usable size <= f, and its it/s */
        for (int f = 1; f <= (1 << CURVE_MAX_LEVELS) + 1; f++) {
            int l = 31 - __builtin_clz((unsigned)f);
            assert_int_equal(r.fit_g[l], curve_max_usable(&r, f));
            assert_true(r.fit_t[l] == curve_tput(&r, r.fit_g[l]));
        }
    }
}

static void test_parse_csv_ok(void **state)
{
    /* rows come back sorted by batch with their source lines; holes in
     * the header (no 2 column) and empty/nan/0 cells are not runnable */
    const char *csv = "\xEF\xBB\xBFglobal_batch_size,1,4,8,16\r\n"
                      "\r\n"
                      "128,1.5,,nan,0\r\n"
                      "64,NaN,2.0,3.0,3.0\r\n";
    curve_model m;
    ef_err e = {0};
    assert_ok(curve_parse_csv(&m, "x", "c/x.csv", csv, strlen(csv), &e), e);
    assert_string_equal(m.name, "x");
    assert_string_equal(m.path, "c/x.csv");
    assert_int_equal(m.nrows, 2);
    assert_int_equal(m.rows[0].batch, 64);
    assert_int_equal(m.rows[0].line, 4);
    assert_int_equal(m.rows[1].batch, 128);
    assert_int_equal(m.rows[1].line, 3);
    assert_int_equal(m.rows[0].measured[0], 1);
    assert_int_equal(m.rows[0].measured[1], 0);
    assert_int_equal(m.rows[0].measured[2], 1);
    const curve_row *r = curve_find_row(&m, 64);
    assert_ptr_equal(r, &m.rows[0]);
    USABLE(r, INT_MAX, 0, 4, 8);
    assert_int_equal(m.rows[0].nusable, 2);
    assert_int_equal(m.rows[0].usable_gpus[0], 4);
    assert_int_equal(m.rows[0].usable_gpus[1], 8);
    USABLE(&m.rows[1], INT_MAX, 0, 1);
    assert_null(curve_find_row(&m, 32));
    char list[64];
    assert_string_equal(curve_list_batches(&m, list, sizeof list), "64, 128");
    curve_model_free(&m);
}

/* curve_parse_csv of 'csv' must fail with a message starting with 'pre'
 * and containing 'sub'. */
static void csv_bad(const char *csv, const char *pre, const char *sub,
                    const char *file, int line)
{
    curve_model m;
    ef_err e = {0};
    int rc = curve_parse_csv(&m, "bert", "c/bert.csv", csv, strlen(csv), &e);
    tu_err(rc, &e, EF_E_INPUT, pre, sub, file, line);
    if (rc == EF_OK)
        curve_model_free(&m);
}
#define CSV_BAD(csv, pre, sub) csv_bad((csv), (pre), (sub), __FILE__, __LINE__)

static void test_parse_csv_header_errors(void **state)
{
    CSV_BAD("batch,1,2\n64,1,2\n", "c/bert.csv:1:1: ",
            "first column is \"batch\"");
    CSV_BAD("global_batch_size\n64\n", "c/bert.csv:1:", "no GPU-count");
    CSV_BAD("global_batch_size,1,3\n64,1,2\n", "c/bert.csv:1:21: ",
            "column \"3\" is not a GPU count");
    CSV_BAD("global_batch_size,1,0\n64,1,2\n", "c/bert.csv:1:21: ",
            "not a GPU count");
    CSV_BAD("global_batch_size,1,x\n64,1,2\n", "c/bert.csv:1:21: ",
            "not a GPU count");
    CSV_BAD("global_batch_size,1,65536\n64,1,2\n", "c/bert.csv:1:21: ",
            "not a GPU count");
    CSV_BAD("global_batch_size,1,\n64,1,2\n", "c/bert.csv:1:", "empty column");
    CSV_BAD("global_batch_size,1,2,2\n64,1,2,3\n", "c/bert.csv:1:23: ",
            "duplicated column");
    CSV_BAD("global_batch_size,1,2,01\n64,1,2,3\n", "c/bert.csv:1:23: ",
            "duplicated column");
    CSV_BAD("global_batch_size,1,4,2\n64,1,2,3\n", "c/bert.csv:1:23: ",
            "after a larger GPU count");
    CSV_BAD("global_batch_size,1,2,4,8,16,32,64,128,256,512,1024,2048,4096,"
            "8192,16384,32768,65536\n", "c/bert.csv:1:", "too many columns");
}

static void test_parse_csv_row_errors(void **state)
{
    CSV_BAD("global_batch_size,1,2\n64,1.0\n", "c/bert.csv:2:4: ",
            "2 fields (expected 3");
    CSV_BAD("global_batch_size,1,2\n64,1,2,3\n", "c/bert.csv:2:8: ",
            "4 fields (expected 3");
    CSV_BAD("global_batch_size,1,2\n64,1.0,-2\n", "c/bert.csv:2:8: ",
            "negative throughput");
    CSV_BAD("global_batch_size,1,2\n64,inf,2\n", "c/bert.csv:2:4: ", "inf");
    CSV_BAD("global_batch_size,1,2\n64,1,-inf\n", "c/bert.csv:2:6: ", NULL);
    CSV_BAD("global_batch_size,1,2\n64,1,1e400\n", "c/bert.csv:2:6: ",
            "out of range");
    CSV_BAD("global_batch_size,1,2\n64,fast,2\n", "c/bert.csv:2:4: ",
            "not a number");
    CSV_BAD("global_batch_size,1,2\n64,0x10,2\n", "c/bert.csv:2:4: ",
            "not a number");
    CSV_BAD("global_batch_size,1,2\nabc,1,2\n", "c/bert.csv:2:1: ",
            "batch size \"abc\"");
    CSV_BAD("global_batch_size,1,2\n0,1,2\n", "c/bert.csv:2:1: ",
            "batch size");
    CSV_BAD("global_batch_size,1,2\n64.5,1,2\n", "c/bert.csv:2:1: ",
            "batch size");
    CSV_BAD("global_batch_size,1\n64,1\n128,2\n64,3\n", "c/bert.csv:4:1: ",
            "batch size 64 already has a row (line 2)");
    CSV_BAD("global_batch_size,1,2,4\n64,1,2,3\n128,0,nan,\n",
            "c/bert.csv:3:1: ", "batch size 128 has no usable GPU count");
    /* tokenizer errors come through with the path */
    CSV_BAD("global_batch_size,1\n64,\"1\n", "c/bert.csv:2:4: ", "quote");
    CSV_BAD("global_batch_size,1\n64,1\r2\n", "c/bert.csv:2:5: ",
            "carriage return");
}

static void test_parse_csv_empty(void **state)
{
    CSV_BAD("", "c/bert.csv: ", "empty");
    CSV_BAD("\n\n  \n", "c/bert.csv: ", "empty");
    CSV_BAD("global_batch_size,1,2\n", "c/bert.csv: ", "no rows");
}

/* ---- curve_parse_json ---------------------------------------------------- */

static void test_parse_json_ok(void **state)
{
    const char *js =
        "{\"model\": \"bert\",\n"
        " \"rows\": [\n"
        "  {\"batch_size\": 128, \"throughput\": {\"1\": 3.5, \"4\": 8.4}},\n"
        "  {\"batch_size\": 64, \"throughput\": {\"1\": 6.03, \"2\": 8.64,\n"
        "                    \"4\": null, \"8\": 11, \"64\": null}}]}\n";
    curve_model m;
    ef_err e = {0};
    assert_ok(curve_parse_json(&m, "bert", "c/bert.json", js, strlen(js), &e),
              e);
    assert_int_equal(m.nrows, 2);
    assert_int_equal(m.rows[0].batch, 64);
    assert_int_equal(m.rows[1].batch, 128);
    USABLE(&m.rows[0], INT_MAX, 0, 1, 2, 8);
    USABLE(&m.rows[1], INT_MAX, 0, 1, 4);
    assert_int_equal(m.rows[0].measured[2], 1); /* null: measured, not runnable */
    assert_int_equal(m.rows[0].measured[4], 0);
    assert_true(curve_tput(&m.rows[0], 8) == 11.0);
    curve_model_free(&m);

    /* "model" may be left out */
    const char *js2 = "{\"rows\": [{\"batch_size\": 1, \"throughput\": "
                      "{\"2\": 1.25}}]}";
    assert_ok(curve_parse_json(&m, "m", "c/m.json", js2, strlen(js2), &e), e);
    USABLE(&m.rows[0], INT_MAX, 0, 2);
    curve_model_free(&m);
}

static void json_bad(const char *js, const char *pre, const char *sub,
                     const char *file, int line)
{
    curve_model m;
    ef_err e = {0};
    int rc = curve_parse_json(&m, "bert", "c/bert.json", js, strlen(js), &e);
    tu_err(rc, &e, EF_E_INPUT, pre, sub, file, line);
    if (rc == EF_OK)
        curve_model_free(&m);
}
#define JSON_BAD(js, pre, sub) json_bad((js), (pre), (sub), __FILE__, __LINE__)

static void test_parse_json_errors(void **state)
{
    JSON_BAD("{\"modle\": \"bert\", \"rows\": []}",
             "c/bert.json: unknown key \"modle\"", "did you mean \"model\"");
    JSON_BAD("{\"rows\": [{\"batch\": 64, \"throughput\": {\"1\": 1}}]}",
             "c/bert.json: rows[0]: unknown key \"batch\"", "batch_size");
    JSON_BAD("{\"model\": \"gpt2\", \"rows\": []}",
             "c/bert.json: model: \"gpt2\" differs from the file name",
             "\"bert\"");
    JSON_BAD("{\"model\": \"bert\"}", "c/bert.json: ", "\"rows\"");
    JSON_BAD("{\"rows\": {}}", "c/bert.json: rows: ", "array");
    JSON_BAD("{\"rows\": []}", "c/bert.json: ", "no rows");
    JSON_BAD("[]", "c/bert.json: ", "object");
    JSON_BAD("", "c/bert.json: ", "empty");
    JSON_BAD("{\"rows\": [}", "c/bert.json:1:", "JSON syntax");
    JSON_BAD("{\"rows\": [{\"throughput\": {\"1\": 1}}]}",
             "c/bert.json: rows[0]: ", "\"batch_size\"");
    JSON_BAD("{\"rows\": [{\"batch_size\": 64}]}",
             "c/bert.json: rows[0]: ", "\"throughput\"");
    JSON_BAD("{\"rows\": [{\"batch_size\": 0, \"throughput\": {\"1\": 1}}]}",
             "c/bert.json: rows[0].batch_size: ", NULL);
    JSON_BAD("{\"rows\": [{\"batch_size\": 64, \"throughput\": {\"3\": 1}}]}",
             "c/bert.json: rows[0].throughput: key \"3\"", "GPU count");
    JSON_BAD("{\"rows\": [{\"batch_size\": 64, \"throughput\": {\"1\": -1}}]}",
             "c/bert.json: rows[0].throughput.1: ", "negative");
    JSON_BAD("{\"rows\": [{\"batch_size\": 64, \"throughput\": {\"1\": \"2\"}}]}",
             "c/bert.json: rows[0].throughput.1: ", "number or null");
    JSON_BAD("{\"rows\": [{\"batch_size\": 64, \"throughput\": [1, 2]}]}",
             "c/bert.json: rows[0].throughput: ", NULL);
    JSON_BAD("{\"rows\": [{\"batch_size\": 64, \"throughput\": {\"1\": 1}},\n"
             "           {\"batch_size\": 64, \"throughput\": {\"1\": 2}}]}",
             "c/bert.json: rows[1].batch_size: ",
             "batch size 64 is also in rows[0]");
    JSON_BAD("{\"rows\": [{\"batch_size\": 64, \"throughput\": {\"1\": null, "
             "\"2\": 0}}]}",
             "c/bert.json: rows[0]: ", "no usable GPU count");
    JSON_BAD("{\"rows\": [{\"batch_size\": 64, \"throughput\": {}}]}",
             "c/bert.json: rows[0]: ", "no usable GPU count");
    /* one GPU count spelled twice ("1" and "01") is ambiguous */
    JSON_BAD("{\"rows\": [{\"batch_size\": 64, \"throughput\": {\"1\": 1, "
             "\"01\": 2}}]}",
             "c/bert.json: rows[0].throughput: ", "01");
    /* duplicate keys are rejected by the JSON reader */
    JSON_BAD("{\"rows\": [{\"batch_size\": 64, \"throughput\": {\"1\": 1, "
             "\"1\": 2}}]}",
             "c/bert.json:1:", NULL);
}

/* ---- curve_set_load ------------------------------------------------------ */

static void test_set_load_a100(void **state)
{
    char dir[4096];
    tu_path(dir, sizeof dir, "inputs/curves/A100");
    curve_set cs;
    ef_err e = {0};
    assert_ok(curve_set_load(&cs, dir, &e), e);
    assert_int_equal(cs.nmodels, 7);
    for (int i = 1; i < cs.nmodels; i++)
        assert_true(strcmp(cs.models[i - 1].name, cs.models[i].name) < 0);
    char list[512];
    assert_string_equal(curve_list_models(&cs, list, sizeof list),
                        "bert, deepspeech2, gpt2, inception3, resnet50, "
                        "resnet50_cifar10, vgg16");
    const curve_model *bert = curve_find_model(&cs, "bert");
    assert_non_null(bert);
    assert_string_equal(bert->name, "bert");
    assert_contains(bert->path, "bert.csv");
    assert_int_equal(bert->nrows, 2);
    assert_int_equal(bert->rows[0].batch, 64);
    assert_int_equal(bert->rows[1].batch, 128);
    const curve_row *r = curve_find_row(bert, 64);
    assert_non_null(r);
    USABLE(r, INT_MAX, 0, 1, 2, 4, 8);
    assert_int_equal(r->nusable, 4);
    assert_int_equal(curve_max_usable(r, 512), 8);
    assert_null(curve_find_row(bert, 96));
    assert_null(curve_find_model(&cs, "Bert"));
    assert_null(curve_find_model(&cs, "ncf"));
    curve_set_free(&cs);
}

static void test_set_load_t4(void **state)
{
    char dir[4096];
    tu_path(dir, sizeof dir, "inputs/curves/T4/");
    curve_set cs;
    ef_err e = {0};
    assert_ok(curve_set_load(&cs, dir, &e), e);
    assert_int_equal(cs.nmodels, 6);
    const curve_model *ncf = curve_find_model(&cs, "ncf");
    assert_non_null(ncf);
    assert_int_equal(ncf->nrows, 1);
    USABLE(&ncf->rows[0], INT_MAX, 0, 1, 4);
    assert_int_equal(ncf->rows[0].nusable, 2);
    /* the path of a directory given with a slash is not doubled */
    assert_not_contains(ncf->path, "//");
    const curve_model *yolo = curve_find_model(&cs, "yolov3");
    assert_non_null(yolo);
    USABLE(&yolo->rows[0], INT_MAX, 0, 1, 2, 4);
    assert_int_equal(yolo->rows[0].nusable, 3);
    curve_set_free(&cs);
}

static void test_set_load_arg(void **state)
{
    curve_set cs;
    ef_err e = {0};
    assert_ok(curve_set_load_arg(&cs, "T4", &e), e);
    assert_int_equal(cs.nmodels, 6);
    curve_set_free(&cs);
    char dir[4096];
    tu_path(dir, sizeof dir, "inputs/curves/A100");
    assert_ok(curve_set_load_arg(&cs, dir, &e), e);
    assert_int_equal(cs.nmodels, 7);
    curve_set_free(&cs);
    assert_err(curve_set_load_arg(&cs, "V100", &e), e, "V100: ",
               "not a directory");
    assert_int_equal(cs.nmodels, 0);
    assert_err(curve_set_load_arg(&cs, "", &e), e, ": ", NULL);
}

static void test_set_load_errors(void **state)
{
    char dir[256], pre[512];
    curve_set cs;
    ef_err e = {0};
    tu_tmpdir(dir, sizeof dir);

    /* an empty directory, then one with only non-curve files */
    snprintf(pre, sizeof pre, "%s: ", dir);
    assert_err(curve_set_load(&cs, dir, &e), e, pre, "no curve files");
    tu_write(dir, "LICENSE", "text\n", NULL, 0);
    tu_write(dir, "notes.txt", "text\n", NULL, 0);
    tu_write(dir, ".csv", "hidden\n", NULL, 0);
    assert_err(curve_set_load(&cs, dir, &e), e, pre, "no curve files");

    /* one model in two files */
    tu_write(dir, "bert.csv", "global_batch_size,1\n64,1\n", NULL, 0);
    tu_write(dir, "bert.json",
             "{\"rows\": [{\"batch_size\": 64, \"throughput\": {\"1\": 1}}]}",
             NULL, 0);
    snprintf(pre, sizeof pre, "%s/bert.json: ", dir);
    assert_err(curve_set_load(&cs, dir, &e), e, pre,
               "model \"bert\" is already defined by");
    assert_contains(e.msg, "bert.csv");
    assert_int_equal(cs.nmodels, 0);
    assert_null(cs.models);
    tu_rmtree(dir);

    /* a bad file is reported with its path and position */
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "a.csv", "global_batch_size,1\n64,1\n", NULL, 0);
    tu_write(dir, "b.csv", "global_batch_size,1\n64,-1\n", NULL, 0);
    snprintf(pre, sizeof pre, "%s/b.csv:2:4: ", dir);
    assert_err(curve_set_load(&cs, dir, &e), e, pre, "negative");
    tu_rmtree(dir);

    /* a file name that is not a model name */
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "my model.csv", "global_batch_size,1\n64,1\n", NULL, 0);
    snprintf(pre, sizeof pre, "%s/my model.csv: ", dir);
    assert_err(curve_set_load(&cs, dir, &e), e, pre, "model name");
    tu_rmtree(dir);

    /* a directory that is not there */
    snprintf(pre, sizeof pre, "%s: ", dir);
    assert_err(curve_set_load(&cs, dir, &e), e, pre, "cannot open");
}

static void test_set_load_mixed_sorted(void **state)
{
    char dir[256];
    curve_set cs;
    ef_err e = {0};
    tu_tmpdir(dir, sizeof dir);
    /* file order ("a-b.csv" < "a.json" < "b.csv") is not model order
     * ("a" < "a-b" < "b") */
    tu_write(dir, "b.csv", "global_batch_size,1,2\n32,1,2\n", NULL, 0);
    tu_write(dir, "a-b.csv", "global_batch_size,1\n32,1\n", NULL, 0);
    tu_write(dir, "a.json",
             "{\"model\": \"a\", \"rows\": [{\"batch_size\": 8, "
             "\"throughput\": {\"1\": 1, \"2\": 1.5}}]}", NULL, 0);
    tu_write(dir, "README", "not a curve\n", NULL, 0);
    assert_ok(curve_set_load(&cs, dir, &e), e);
    assert_int_equal(cs.nmodels, 3);
    char list[128];
    assert_string_equal(curve_list_models(&cs, list, sizeof list),
                        "a, a-b, b");
    const curve_model *a = curve_find_model(&cs, "a");
    assert_non_null(a);
    assert_contains(a->path, "a.json");
    USABLE(curve_find_row(a, 8), INT_MAX, 0, 1, 2);
    assert_non_null(curve_find_model(&cs, "a-b"));
    curve_set_free(&cs);
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usable_monotone),
        cmocka_unit_test(test_usable_dip),
        cmocka_unit_test(test_usable_holes),
        cmocka_unit_test(test_usable_cap),
        cmocka_unit_test(test_usable_equal_is_not_usable),
        cmocka_unit_test(test_usable_ends_at_peak),
        cmocka_unit_test(test_tput_and_max_usable),
        cmocka_unit_test(test_tput_table),
        cmocka_unit_test(test_parse_csv_ok),
        cmocka_unit_test(test_parse_csv_header_errors),
        cmocka_unit_test(test_parse_csv_row_errors),
        cmocka_unit_test(test_parse_csv_empty),
        cmocka_unit_test(test_parse_json_ok),
        cmocka_unit_test(test_parse_json_errors),
        cmocka_unit_test(test_set_load_a100),
        cmocka_unit_test(test_set_load_t4),
        cmocka_unit_test(test_set_load_arg),
        cmocka_unit_test(test_set_load_errors),
        cmocka_unit_test(test_set_load_mixed_sorted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
