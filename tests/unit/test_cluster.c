/* test_cluster.c: cluster specs: shorthand, artifact CSV, JSON
 * (model/cluster.h). */
#include "testutil.h"

#include "model/cluster.h"

static void check_cluster(const cluster *c, int switches, int nodes, int gpn,
                          const char *name, const char *file, int line)
{
    if (c->switches != switches || c->nodes != nodes ||
        c->gpus_per_node != gpn || c->total_gpus != nodes * gpn ||
        strcmp(c->name, name) != 0) {
        print_error("    got %s: %d switches, %d nodes x %d GPUs = %d; "
                    "expected %s: %d, %d x %d = %d\n", c->name, c->switches,
                    c->nodes, c->gpus_per_node, c->total_gpus, name, switches,
                    nodes, gpn, nodes * gpn);
        _fail(file, line);
    }
}
#define assert_cluster(c, s, n, g, name) \
    check_cluster((c), (s), (n), (g), (name), __FILE__, __LINE__)

/* ---- shorthand ---------------------------------------------------------- */

static void test_shorthand_ok(void **state)
{
    cluster c;
    ef_err e = {0};
    assert_ok(cluster_from_arg(&c, "n16g8", &e), e);
    assert_cluster(&c, 1, 16, 8, "n16g8");
    assert_int_equal(c.total_gpus, 128);
    assert_ok(cluster_from_arg(&c, "n1g1", &e), e);
    assert_cluster(&c, 1, 1, 1, "n1g1");
    assert_ok(cluster_from_arg(&c, "n2g64", &e), e);
    assert_cluster(&c, 1, 2, 64, "n2g64");
    /* the largest cluster allowed: 2^20 GPUs */
    assert_ok(cluster_from_arg(&c, "n16384g64", &e), e);
    assert_int_equal(c.total_gpus, CLUSTER_MAX_GPUS);
}

static void test_shorthand_rejects(void **state)
{
    cluster c;
    ef_err e = {0};
    assert_err(cluster_from_arg(&c, "n0g8", &e), e, "n0g8: ", "0 nodes");
    assert_err(cluster_from_arg(&c, "n4g6", &e), e, "n4g6: ",
               "6 GPUs per node");
    assert_contains(e.msg, "power of two");
    assert_err(cluster_from_arg(&c, "n4g128", &e), e, "n4g128: ",
               "128 GPUs per node");
    assert_err(cluster_from_arg(&c, "n4g0", &e), e, "n4g0: ", NULL);
    assert_err(cluster_from_arg(&c, "n16385g64", &e), e, "n16385g64: ",
               "too large");
    assert_err(cluster_from_arg(&c, "x16g8", &e), e, "x16g8: ",
               "not a shorthand");
    assert_err(cluster_from_arg(&c, "n16g", &e), e, "n16g: ", NULL);
    assert_err(cluster_from_arg(&c, "n16g8x", &e), e, "n16g8x: ", NULL);
    assert_err(cluster_from_arg(&c, "N16G8", &e), e, "N16G8: ", NULL);
    assert_err(cluster_from_arg(&c, "n-1g8", &e), e, "n-1g8: ", NULL);
    assert_err(cluster_from_arg(&c, "n99999999999999999999g8", &e), e,
               "n99999999999999999999g8: ", NULL);
    assert_err(cluster_from_arg(&c, "nosuch.csv", &e), e, "nosuch.csv: ",
               NULL);
}

/* ---- artifact CSV ------------------------------------------------------- */

static void test_csv_bundled_n64g8(void **state)
{
    char path[4096];
    tu_path(path, sizeof path, "inputs/clusters/n64g8.csv");
    cluster c;
    ef_err e = {0};
    assert_ok(cluster_from_arg(&c, path, &e), e);
    assert_cluster(&c, 2, 64, 8, "n64g8");
    assert_int_equal(c.total_gpus, 512);
    assert_int_equal(c.cpus_per_node, 64);
    assert_int_equal(c.mem_per_node, 256);
}

static void csv_ok(const char *csv, int s, int n, int g, const char *file,
                   int line)
{
    cluster c;
    ef_err e = {0};
    if (cluster_parse_csv(&c, "c.csv", csv, strlen(csv), &e) != EF_OK) {
        print_error("    unexpected error: %s\n", e.msg);
        _fail(file, line);
    }
    char name[64];
    snprintf(name, sizeof name, "n%dg%d", n, g);
    check_cluster(&c, s, n, g, name, file, line);
}
#define CSV_OK(csv, s, n, g) csv_ok((csv), (s), (n), (g), __FILE__, __LINE__)

static void csv_bad(const char *csv, const char *pre, const char *sub,
                    const char *file, int line)
{
    cluster c;
    ef_err e = {0};
    int rc = cluster_parse_csv(&c, "c.csv", csv, strlen(csv), &e);
    tu_err(rc, &e, EF_E_INPUT, pre, sub, file, line);
}
#define CSV_BAD(csv, pre, sub) csv_bad((csv), (pre), (sub), __FILE__, __LINE__)

#define HDR "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node," \
            "mem_p_node\n"

static void test_csv_forms(void **state)
{
    CSV_OK(HDR "2,32,8,64,256\n", 2, 64, 8);
    CSV_OK(HDR "1,4,8,64,256", 1, 4, 8);
    CSV_OK("\xEF\xBB\xBF" HDR "\r\n3,2,4,0,0\r\n\r\n", 3, 6, 4);
    /* columns in any order; num_switch and the informative ones optional */
    CSV_OK("num_gpu_p_node,num_node_p_switch\n2,5\n", 1, 5, 2);
    CSV_OK("num_node_p_switch,num_switch,num_gpu_p_node\n4,2,1\n", 2, 8, 1);
}

static void test_csv_errors(void **state)
{
    CSV_BAD("num_switch,num_node_p_switch\n1,4\n", "c.csv:1:1: ",
            "missing column \"num_gpu_p_node\"");
    CSV_BAD("num_switch,num_gpu_p_node\n1,4\n", "c.csv:1:1: ",
            "missing column \"num_node_p_switch\"");
    CSV_BAD(HDR "1,4,8,64,256\n1,4,8,64,256\n", "c.csv:3:1: ",
            "more than one cluster row");
    CSV_BAD(HDR "1,4,8\n", "c.csv:2:5: ", "3 fields (expected 5");
    CSV_BAD(HDR "1,4,8,64,256,9\n", "c.csv:2:", "6 fields (expected 5");
    CSV_BAD("num_switches,num_node_p_switch,num_gpu_p_node\n1,4,8\n",
            "c.csv:1:1: ", "unknown column \"num_switches\"");
    CSV_BAD("num_switch,num_node_p_switch,num_gpu_p_node,num_gpu_p_node\n"
            "1,1,1,1\n", "c.csv:1:", "duplicated column");
    CSV_BAD(HDR, "c.csv:2:1: ", "cluster row");
    CSV_BAD("", "c.csv: ", "empty");
    CSV_BAD(HDR "1,4,6,64,256\n", "c.csv:2:5: ", "num_gpu_p_node is 6");
    CSV_BAD(HDR "1,4,128,64,256\n", "c.csv:2:5: ", "num_gpu_p_node is 128");
    CSV_BAD(HDR "1,0,8,64,256\n", "c.csv:2:3: ", "num_node_p_switch");
    CSV_BAD(HDR "0,4,8,64,256\n", "c.csv:2:1: ", "num_switch");
    CSV_BAD(HDR "1,four,8,64,256\n", "c.csv:2:3: ",
            "num_node_p_switch: \"four\"");
    CSV_BAD(HDR "1,-4,8,64,256\n", "c.csv:2:3: ", "num_node_p_switch");
    CSV_BAD(HDR "1,4,8,64,1.5\n", "c.csv:2:", "mem_p_node");
    CSV_BAD(HDR "1,4,8,64,\"25\"6\n", "c.csv:2:", "after a closing quote");
    CSV_BAD(HDR "1024,1024,8,64,256\n", "c.csv: ", "too large");
}

static void test_csv_suggests_column(void **state)
{
    cluster c;
    ef_err e = {0};
    const char *csv = "num_switch,num_nodes_p_switch,num_gpu_p_node\n1,4,8\n";
    assert_err(cluster_parse_csv(&c, "c.csv", csv, strlen(csv), &e), e,
               "c.csv:1:12: unknown column \"num_nodes_p_switch\"",
               "did you mean \"num_node_p_switch\"");
}

/* ---- JSON --------------------------------------------------------------- */

static void test_json_forms(void **state)
{
    cluster c;
    ef_err e = {0};
    const char *js = "{\"nodes\": 4, \"gpus_per_node\": 8}";
    assert_ok(cluster_parse_json(&c, "c.json", js, strlen(js), &e), e);
    assert_cluster(&c, 1, 4, 8, "n4g8");
    js = "{\"nodes\": 64, \"gpus_per_node\": 8, \"switches\": 2, "
         "\"cpus_per_node\": 64, \"mem_per_node\": 256}";
    assert_ok(cluster_parse_json(&c, "c.json", js, strlen(js), &e), e);
    assert_cluster(&c, 2, 64, 8, "n64g8");
    assert_int_equal(c.cpus_per_node, 64);
    assert_int_equal(c.mem_per_node, 256);
}

static void json_bad(const char *js, const char *pre, const char *sub,
                     const char *file, int line)
{
    cluster c;
    ef_err e = {0};
    int rc = cluster_parse_json(&c, "c.json", js, strlen(js), &e);
    tu_err(rc, &e, EF_E_INPUT, pre, sub, file, line);
}
#define JSON_BAD(js, pre, sub) json_bad((js), (pre), (sub), __FILE__, __LINE__)

static void test_json_errors(void **state)
{
    JSON_BAD("{\"nodes\": 4, \"gpus_per_node\": 8, \"gpu_per_node\": 8}",
             "c.json: unknown key \"gpu_per_node\"",
             "did you mean \"gpus_per_node\"");
    JSON_BAD("{\"nodes\": 4, \"gpus\": 8}", "c.json: unknown key \"gpus\"",
             NULL);
    JSON_BAD("{\"nodes\": 4}", "c.json: ",
             "missing required key \"gpus_per_node\"");
    JSON_BAD("{\"gpus_per_node\": 8}", "c.json: ",
             "missing required key \"nodes\"");
    JSON_BAD("{\"nodes\": 0, \"gpus_per_node\": 8}", "c.json: nodes: ",
             NULL);
    JSON_BAD("{\"nodes\": -3, \"gpus_per_node\": 8}", "c.json: nodes: ",
             NULL);
    JSON_BAD("{\"nodes\": 4, \"gpus_per_node\": 6}", "c.json: ",
             "power of two");
    JSON_BAD("{\"nodes\": 4, \"gpus_per_node\": 0}", "c.json: ", NULL);
    JSON_BAD("{\"nodes\": 4.5, \"gpus_per_node\": 8}", "c.json: nodes: ",
             "integer");
    JSON_BAD("{\"nodes\": \"4\", \"gpus_per_node\": 8}", "c.json: nodes: ",
             "integer");
    JSON_BAD("{\"nodes\": 4, \"gpus_per_node\": 8, \"switches\": 0}",
             "c.json: switches: ", NULL);
    JSON_BAD("{\"nodes\": 100000, \"gpus_per_node\": 64}", "c.json: ",
             "too large");
    JSON_BAD("[4, 8]", "c.json: ", "object");
    JSON_BAD("{\"nodes\": 4,}", "c.json:1:", "JSON syntax");
    JSON_BAD("{\"nodes\": 4, \"nodes\": 5, \"gpus_per_node\": 8}",
             "c.json:1:", NULL);
    JSON_BAD("", "c.json: ", "empty");
}

/* ---- files -------------------------------------------------------------- */

static void test_from_arg_files(void **state)
{
    char dir[256], path[512], pre[600];
    cluster c;
    ef_err e = {0};
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "c.json", "{\"nodes\": 3, \"gpus_per_node\": 2}", path,
             sizeof path);
    assert_ok(cluster_from_arg(&c, path, &e), e);
    assert_cluster(&c, 1, 3, 2, "n3g2");
    /* no extension: JSON is recognised by its content */
    tu_write(dir, "spec", "\n  {\"nodes\": 5, \"gpus_per_node\": 4}", path,
             sizeof path);
    assert_ok(cluster_from_arg(&c, path, &e), e);
    assert_cluster(&c, 1, 5, 4, "n5g4");
    tu_write(dir, "spec2", HDR "2,2,2,1,1\n", path, sizeof path);
    assert_ok(cluster_from_arg(&c, path, &e), e);
    assert_cluster(&c, 2, 4, 2, "n4g2");
    /* errors name the file */
    tu_write(dir, "bad.csv", HDR "1,4,8\n", path, sizeof path);
    snprintf(pre, sizeof pre, "%s:2:5: ", path);
    assert_err(cluster_from_arg(&c, path, &e), e, pre, "fields");
    snprintf(path, sizeof path, "%s/missing.json", dir);
    snprintf(pre, sizeof pre, "%s: ", path);
    assert_err(cluster_from_arg(&c, path, &e), e, pre, NULL);
    assert_err(cluster_from_arg(&c, dir, &e), e, dir, "directory");
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shorthand_ok),
        cmocka_unit_test(test_shorthand_rejects),
        cmocka_unit_test(test_csv_bundled_n64g8),
        cmocka_unit_test(test_csv_forms),
        cmocka_unit_test(test_csv_errors),
        cmocka_unit_test(test_csv_suggests_column),
        cmocka_unit_test(test_json_forms),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_from_arg_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
