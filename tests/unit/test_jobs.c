/* test_jobs.c: the job queue from trace CSV or JSON (planner/jobs.h). */
#include "testutil.h"

#include "../../planner/jobs.h"

static int parse_csv(job_queue *q, const char *csv, ef_err *e)
{
    return queue_parse_csv(q, "t.csv", csv, strlen(csv), e);
}

static int parse_json(job_queue *q, const char *js, ef_err *e)
{
    return queue_parse_json(q, "t.json", js, strlen(js), e);
}

static void check_same_jobs(const job_queue *a, const job_queue *b,
                            const char *file, int line)
{
    if (a->n != b->n) {
        print_error("    %d jobs vs %d\n", a->n, b->n);
        _fail(file, line);
    }
    for (int i = 0; i < a->n; i++) {
        const job *x = &a->jobs[i], *y = &b->jobs[i];
        if (strcmp(x->id, y->id) || strcmp(x->model, y->model) ||
            x->batch != y->batch || x->iterations != y->iterations ||
            x->iterations_done != y->iterations_done ||
            x->submit != y->submit || x->has_deadline != y->has_deadline ||
            (x->has_deadline && x->deadline != y->deadline) ||
            x->num_gpu != y->num_gpu || x->duration != y->duration ||
            x->line != y->line) {
            print_error("    job %d differs (%s vs %s)\n", i, x->id, y->id);
            _fail(file, line);
        }
    }
}
#define assert_same_jobs(a, b) check_same_jobs((a), (b), __FILE__, __LINE__)

#define ROWS "j1,10,100,bert,500,64\nj2,20,200,gpt2,,128\n"

/* ---- CSV ---------------------------------------------------------------- */

static void test_csv_basic(void **state)
{
    job_queue q;
    ef_err e = {0};
    assert_ok(parse_csv(&q, "job_id,submit_time,iteration,model_name,ddl,"
                            "batch_size\n" ROWS, &e), e);
    assert_int_equal(q.n, 2);
    assert_int_equal(q.is_json, 0);
    assert_string_equal(q.path, "t.csv");
    const job *j = &q.jobs[0];
    assert_string_equal(j->id, "j1");
    assert_string_equal(j->model, "bert");
    assert_int_equal(j->batch, 64);
    assert_true(j->iterations == 100);
    assert_true(j->iterations_done == 0);
    assert_true(j->submit == 10);
    assert_int_equal(j->has_deadline, 1);
    assert_true(j->deadline == 500);
    assert_int_equal(j->line, 2);
    assert_null(j->curve);
    /* an empty deadline cell means best-effort */
    j = &q.jobs[1];
    assert_string_equal(j->id, "j2");
    assert_int_equal(j->has_deadline, 0);
    assert_int_equal(j->line, 3);
    /* no num_gpu / duration columns */
    assert_int_equal(q.has_num_gpu, 0);
    assert_int_equal(q.has_duration, 0);
    assert_int_equal(j->num_gpu, 0);
    assert_true(j->duration == 0);
    queue_free(&q);
}

static void test_csv_spellings_identical(void **state)
{
    job_queue a, b, c;
    ef_err e = {0};
    assert_ok(parse_csv(&a, "job_id,submit_time,iteration,model_name,ddl,"
                            "batch_size\n" ROWS, &e), e);
    assert_ok(parse_csv(&b, "job_id,submission_time,num_iteration,model_name,"
                            "deadline,batch_size\n" ROWS, &e), e);
    assert_same_jobs(&a, &b);
    /* other column orders, unknown columns ignored */
    assert_ok(parse_csv(&c, "extra,batch_size,model_name,real_iteration,ddl,"
                            "iteration,submit_time,job_id,foo\n"
                            "X,64,bert,999,500,100,10,j1,zz\n"
                            "Y,128,gpt2,1,,200,20,j2,\n", &e), e);
    assert_same_jobs(&a, &c);
    queue_free(&a);
    queue_free(&b);
    queue_free(&c);
}

static void test_csv_best_effort_and_extras(void **state)
{
    job_queue q;
    ef_err e = {0};
    assert_ok(parse_csv(&q, "job_id,submit_time,iteration,model_name,ddl,"
                            "batch_size,num_gpu,duration,best_effort,"
                            "iterations_done\n"
                            "a,0,100,bert,500,64,8,3600,1,0\n"
                            "b,0,100,bert,500,64,2,60,0,99\n"
                            "c,0,100,bert,,64,0,0,0,0\n", &e), e);
    assert_int_equal(q.n, 3);
    assert_int_equal(q.has_num_gpu, 1);
    assert_int_equal(q.has_duration, 1);
    assert_int_equal(q.jobs[0].has_deadline, 0); /* best_effort=1 wins */
    assert_int_equal(q.jobs[0].num_gpu, 8);
    assert_true(q.jobs[0].duration == 3600);
    assert_int_equal(q.jobs[1].has_deadline, 1);
    assert_true(q.jobs[1].deadline == 500);
    assert_int_equal(q.jobs[1].num_gpu, 2);
    assert_true(q.jobs[1].duration == 60);
    assert_true(q.jobs[1].iterations_done == 99);
    assert_int_equal(q.jobs[2].has_deadline, 0);
    queue_free(&q);
}

static void csv_bad(const char *csv, const char *pre, const char *sub,
                    const char *file, int line)
{
    job_queue q;
    ef_err e = {0};
    int rc = parse_csv(&q, csv, &e);
    tu_err(rc, &e, EF_E_INPUT, pre, sub, file, line);
    if (rc == EF_OK)
        queue_free(&q);
}
#define CSV_BAD(csv, pre, sub) csv_bad((csv), (pre), (sub), __FILE__, __LINE__)

#define HA "job_id,submit_time,iteration,model_name,ddl,batch_size\n"
#define HB "job_id,submission_time,num_iteration,model_name,deadline," \
           "batch_size\n"

static void test_csv_value_errors(void **state)
{
    /* columns of "j1,10,100,bert,500,64": 1, 4, 7, 11, 16, 20 */
    CSV_BAD(HA "j1,10,0,bert,500,64\n", "t.csv:2:7: iteration: ",
            "zero iterations");
    /* the column is named as the file spells it */
    CSV_BAD(HB "j1,10,0,bert,500,64\n", "t.csv:2:7: num_iteration: ",
            "zero iterations");
    CSV_BAD(HA "j1,10,-0,bert,500,64\n", "t.csv:2:7: iteration: ",
            "zero iterations");
    CSV_BAD(HA "j1,10,100,bert,10,64\n", "t.csv:2:16: ddl: ",
            "deadline 10 is equal to submit time 10");
    CSV_BAD(HB "j1,10,100,bert,5,64\n", "t.csv:2:16: deadline: ",
            "deadline 5 is before submit time 10");
    CSV_BAD(HA "j1,10,99999999999999999999,bert,500,64\n",
            "t.csv:2:7: iteration: \"99999999999999999999\" is ", "too large");
    CSV_BAD(HA "j1,10,1000000000000001,bert,500,64\n",
            "t.csv:2:7: iteration: ", "too large");
    CSV_BAD(HA "j1,9223372036854775808,100,bert,500,64\n",
            "t.csv:2:4: submit_time: ", "too large");
    CSV_BAD(HA "j1,-5,100,bert,500,64\n", "t.csv:2:4: submit_time: ",
            "negative");
    CSV_BAD(HA "j1,1.5,100,bert,500,64\n", "t.csv:2:4: submit_time: ",
            "not an integer");
    CSV_BAD(HA "j1,abc,100,bert,500,64\n", "t.csv:2:4: submit_time: ",
            "not a number");
    CSV_BAD(HA "j1,10,inf,bert,500,64\n", "t.csv:2:7: iteration: ",
            "not finite");
    CSV_BAD(HA "j1,10,,bert,500,64\n", "t.csv:2:7: iteration: ", "empty");
    CSV_BAD(HA "j1,10,100,bert,500,0\n", "t.csv:2:20: batch_size: ", NULL);
    CSV_BAD(HA "j1,10,100,bert,500,2147483648\n", "t.csv:2:20: batch_size: ",
            "too large");
    CSV_BAD(HA "j1,10,100,bert,soon,64\n", "t.csv:2:16: ddl: ", NULL);
    CSV_BAD(HA ",10,100,bert,500,64\n", "t.csv:2:1: job_id: ", "empty");
    CSV_BAD(HA "j1,10,100,,500,64\n", "t.csv:2:11: model_name: ", "empty");
    CSV_BAD("job_id,submit_time,iteration,model_name,ddl,batch_size,"
            "best_effort\nj1,10,100,bert,500,64,2\n",
            "t.csv:2:23: best_effort: ", "0 or 1");
    CSV_BAD("job_id,submit_time,iteration,model_name,ddl,batch_size,"
            "iterations_done\nj1,10,100,bert,500,64,100\n",
            "t.csv:2:23: iterations_done: ", "100 iterations done of 100");
    CSV_BAD("job_id,submit_time,iteration,model_name,ddl,batch_size,"
            "num_gpu\nj1,10,100,bert,500,64,-1\n",
            "t.csv:2:23: num_gpu: ", "negative");
}

static void test_csv_duplicate_ids(void **state)
{
    CSV_BAD(HA "j1,10,100,bert,500,64\nj2,10,100,bert,500,64\n"
               "j1,10,100,bert,500,64\n",
            "t.csv:4:1: job_id: duplicate job id \"j1\"", "line 2");
    /* the earliest repeat is reported, against its first occurrence */
    CSV_BAD(HA "b,1,1,m,5,1\na,1,1,m,5,1\nb,1,1,m,5,1\na,1,1,m,5,1\n",
            "t.csv:4:1: job_id: duplicate job id \"b\"", "line 2");
    CSV_BAD(HA "x,1,1,m,5,1\nx,1,1,m,5,1\nx,1,1,m,5,1\n",
            "t.csv:3:1: job_id: duplicate job id \"x\"", "line 2");
}

static void test_csv_structure_errors(void **state)
{
    CSV_BAD("job_id,submit_time,iteration,model_name,batch_size\n"
            "j1,10,100,bert,64\n",
            "t.csv:1:1: missing column \"ddl\" or \"deadline\"", NULL);
    CSV_BAD("job_id,submit_time,iteration,model_name,dedline,batch_size\n"
            "j1,10,100,bert,500,64\n",
            "t.csv:1:41: missing column \"ddl\" or \"deadline\"",
            "\"dedline\"");
    CSV_BAD("job_id,submit_time,iteration,model_name,ddl,batch_size,"
            "deadline\nj1,10,100,bert,500,64,500\n",
            "t.csv:1:56: duplicated column \"deadline\"", "ddl");
    CSV_BAD(HA "j1,10,100,bert,500\n", "t.csv:2:16: ",
            "5 fields (expected 6");
    CSV_BAD(HA "j1,10,100,bert,500,64,7\n", "t.csv:2:23: ",
            "7 fields (expected 6");
    CSV_BAD("", "t.csv: ", "empty");
    CSV_BAD(HA "j1,10,100,\"bert,500,64\n", "t.csv:2:", NULL);
}

/* ---- JSON --------------------------------------------------------------- */

static void test_json_basic(void **state)
{
    job_queue q;
    ef_err e = {0};
    assert_ok(parse_json(&q,
        "{\"format\": \"efplan-jobs\", \"version\": 1, \"jobs\": [\n"
        " {\"id\": \"a\", \"model\": \"bert\", \"batch_size\": 64,"
        "  \"iterations\": 10, \"submit_time\": \"2021-03-04T00:00:00Z\","
        "  \"deadline\": \"2021-03-04T03:00:00+01:00\"},\n"
        " {\"id\": 7, \"model\": \"gpt2\", \"batch_size\": 128,"
        "  \"iterations\": 20, \"iterations_done\": 5, \"submit_time\": 30,"
        "  \"deadline\": null, \"num_gpu\": 4, \"duration\": 100},\n"
        " {\"id\": \"c\", \"model\": \"bert\", \"batch_size\": 64,"
        "  \"iterations\": 1, \"submit_time\": 0}]}\n", &e), e);
    assert_int_equal(q.n, 3);
    assert_int_equal(q.is_json, 1);
    const job *j = &q.jobs[0];
    assert_string_equal(j->id, "a");
    assert_true(j->submit == 1614816000);
    assert_int_equal(j->has_deadline, 1);
    assert_true(j->deadline == 1614816000 + 7200);
    assert_int_equal(j->index, 0);
    j = &q.jobs[1];
    assert_string_equal(j->id, "7");
    assert_string_equal(j->model, "gpt2");
    assert_int_equal(j->batch, 128);
    assert_true(j->iterations == 20);
    assert_true(j->iterations_done == 5);
    assert_true(j->submit == 30);
    assert_int_equal(j->has_deadline, 0); /* null: best-effort */
    assert_int_equal(j->num_gpu, 4);
    assert_true(j->duration == 100);
    assert_int_equal(j->index, 1);
    assert_int_equal(q.jobs[2].has_deadline, 0); /* absent: best-effort */
    assert_int_equal(q.has_num_gpu, 1);
    assert_int_equal(q.has_duration, 1);
    queue_free(&q);
}

static void json_bad(const char *js, const char *pre, const char *sub,
                     const char *file, int line)
{
    job_queue q;
    ef_err e = {0};
    int rc = parse_json(&q, js, &e);
    tu_err(rc, &e, EF_E_INPUT, pre, sub, file, line);
    if (rc == EF_OK)
        queue_free(&q);
}
#define JSON_BAD(js, pre, sub) json_bad((js), (pre), (sub), __FILE__, __LINE__)

#define J1(extra) \
    "{\"jobs\": [{\"id\": \"a\", \"model\": \"bert\", \"batch_size\": 64, " \
    extra "}]}"

static void test_json_errors(void **state)
{
    JSON_BAD(J1("\"iteration\": 10, \"submit_time\": 0"),
             "t.json: jobs[0]: unknown key \"iteration\"",
             "did you mean \"iterations\"?");
    JSON_BAD(J1("\"iterations\": 10, \"iterations_done\": 10, "
                "\"submit_time\": 0"),
             "t.json: jobs[0].iterations_done: ",
             "10 iterations done of 10");
    JSON_BAD(J1("\"iterations\": 10, \"iterations_done\": 11, "
                "\"submit_time\": 0"),
             "t.json: jobs[0].iterations_done: ", NULL);
    JSON_BAD(J1("\"iterations\": 0, \"submit_time\": 0"),
             "t.json: jobs[0].iterations: ", "zero iterations");
    JSON_BAD(J1("\"iterations\": -3, \"submit_time\": 0"),
             "t.json: jobs[0].iterations: ", NULL);
    JSON_BAD(J1("\"iterations\": 10, \"submit_time\": 100, \"deadline\": 50"),
             "t.json: jobs[0].deadline: ", "before submit time");
    JSON_BAD(J1("\"iterations\": 10, \"submit_time\": "
                "\"2021-03-04T01:00:00Z\", \"deadline\": "
                "\"2021-03-04T02:00:00+01:00\""),
             "t.json: jobs[0].deadline: ", "equal to submit time");
    JSON_BAD(J1("\"iterations\": 10, \"submit_time\": 0, "
                "\"deadline\": \"2021-03-04T00:00:00\""),
             "t.json: jobs[0].deadline: \"2021-03-04T00:00:00\" is not an "
             "ISO-8601 time", "zone");
    JSON_BAD(J1("\"iterations\": 10, \"submit_time\": \"2021-03-04\""),
             "t.json: jobs[0].submit_time: ", "ISO-8601");
    JSON_BAD(J1("\"iterations\": 10, \"submit_time\": "
                "\"1969-12-31T23:59:59Z\""),
             "t.json: jobs[0].submit_time: ", "1970");
    JSON_BAD(J1("\"iterations\": 10, \"submit_time\": null"),
             "t.json: jobs[0].submit_time: ", "null");
    JSON_BAD(J1("\"iterations\": 10, \"submit_time\": 1.5"),
             "t.json: jobs[0].submit_time: ", NULL);
    JSON_BAD(J1("\"iterations\": 10, \"submit_time\": 0, \"deadline\": true"),
             "t.json: jobs[0].deadline: ", NULL);
    JSON_BAD(J1("\"iterations\": 10"),
             "t.json: jobs[0]: ", "missing required key \"submit_time\"");
    JSON_BAD("{\"jobs\": [{\"id\": \"a\", \"batch_size\": 64, "
             "\"iterations\": 10, \"submit_time\": 0}]}",
             "t.json: jobs[0]: ", "missing required key \"model\"");
    JSON_BAD("{\"jobs\": [{\"id\": -1, \"model\": \"m\", \"batch_size\": 64, "
             "\"iterations\": 10, \"submit_time\": 0}]}",
             "t.json: jobs[0].id: ", NULL);
    JSON_BAD("{\"jobs\": [{\"id\": \"\", \"model\": \"m\", \"batch_size\": 64, "
             "\"iterations\": 10, \"submit_time\": 0}]}",
             "t.json: jobs[0].id: ", "empty");
    JSON_BAD("{\"format\": \"jobs\", \"jobs\": []}", "t.json: format: ",
             "efplan-jobs");
    JSON_BAD("{\"version\": 2, \"jobs\": []}", "t.json: version: ", NULL);
    JSON_BAD("{\"jobs\": 5}", "t.json: jobs: ", "array");
    JSON_BAD("{\"jobs\": null}", "t.json: jobs: ", "array");
    JSON_BAD("{\"jobs\": {}}", "t.json: jobs: ", "array");
    JSON_BAD("{\"job\": []}", "t.json: unknown key \"job\"", NULL);
    JSON_BAD("{}", "t.json: ", "missing required key \"jobs\"");
    JSON_BAD("[]", "t.json: ", "object");
    JSON_BAD("{\"jobs\": [1]}", "t.json: jobs[0]: ", "object");
    JSON_BAD("{\"jobs\": [", "t.json:1:", "JSON syntax");
}

static void test_json_duplicate_ids(void **state)
{
    JSON_BAD("{\"jobs\": [\n"
             "{\"id\": \"a\", \"model\": \"m\", \"batch_size\": 1, "
             "\"iterations\": 1, \"submit_time\": 0},\n"
             "{\"id\": \"b\", \"model\": \"m\", \"batch_size\": 1, "
             "\"iterations\": 1, \"submit_time\": 0},\n"
             "{\"id\": \"a\", \"model\": \"m\", \"batch_size\": 1, "
             "\"iterations\": 1, \"submit_time\": 0}]}",
             "t.json: jobs[2].id: duplicate job id \"a\"", "jobs[0]");
    /* an integer id and the same digits as a string are one id */
    JSON_BAD("{\"jobs\": [\n"
             "{\"id\": 1, \"model\": \"m\", \"batch_size\": 1, "
             "\"iterations\": 1, \"submit_time\": 0},\n"
             "{\"id\": \"1\", \"model\": \"m\", \"batch_size\": 1, "
             "\"iterations\": 1, \"submit_time\": 0}]}",
             "t.json: jobs[1].id: duplicate job id \"1\"", "jobs[0]");
}

/* ---- queue_where -------------------------------------------------------- */

static void test_where(void **state)
{
    job_queue q;
    ef_err e = {0};
    char w[256];
    assert_ok(parse_csv(&q, HB ROWS, &e), e);
    assert_string_equal(queue_where(&q, 0, JF_SUBMIT, w, sizeof w),
                        "t.csv:2:4: submission_time");
    assert_string_equal(queue_where(&q, 0, JF_ITER, w, sizeof w),
                        "t.csv:2:7: num_iteration");
    assert_string_equal(queue_where(&q, 1, JF_DEADLINE, w, sizeof w),
                        "t.csv:3:16: deadline");
    assert_string_equal(queue_where(&q, 1, JF_BATCH, w, sizeof w),
                        "t.csv:3:17: batch_size");
    /* a field without a column: column 1, JSON-style name */
    assert_string_equal(queue_where(&q, 1, JF_DONE, w, sizeof w),
                        "t.csv:3:1: iterations_done");
    queue_free(&q);

    assert_ok(parse_json(&q, "{\"jobs\": [\n"
                             "{\"id\": \"a\", \"model\": \"m\", "
                             "\"batch_size\": 1, \"iterations\": 1, "
                             "\"submit_time\": 0},\n"
                             "{\"id\": \"b\", \"model\": \"m\", "
                             "\"batch_size\": 1, \"iterations\": 1, "
                             "\"submit_time\": 0}]}", &e), e);
    assert_string_equal(queue_where(&q, 1, JF_DEADLINE, w, sizeof w),
                        "t.json: jobs[1].deadline");
    assert_string_equal(queue_where(&q, 0, JF_ITER, w, sizeof w),
                        "t.json: jobs[0].iterations");
    assert_string_equal(queue_where(&q, 0, JF_SUBMIT, w, sizeof w),
                        "t.json: jobs[0].submit_time");
    assert_string_equal(queue_where(&q, 1, JF_MODEL, w, sizeof w),
                        "t.json: jobs[1].model");
    queue_free(&q);
}

/* ---- queue_resolve ------------------------------------------------------ */

static void load_a100(curve_set *cs)
{
    char dir[4096];
    ef_err e = {0};
    tu_path(dir, sizeof dir, "inputs/curves/A100");
    assert_ok(curve_set_load(cs, dir, &e), e);
}

/* An empty queue (every job done, or none submitted) is valid in both
 * formats: n == 0, and it resolves against any curves. */
static void test_empty_queue(void **state)
{
    static const char *const csv[] = {HA, HA "\n\n", HA "\r\n"};
    static const char *const js[] = {
        "{\"jobs\": []}",
        "{\"format\": \"efplan-jobs\", \"version\": 1, \"jobs\": []}",
        "{\"apply\": {\"complete\": true, \"finished\": [\"a\"]}, "
        "\"jobs\": []}"};
    curve_set cs;
    load_a100(&cs);
    for (size_t k = 0; k < 3; k++) {
        job_queue q;
        ef_err e = {0};
        assert_ok(parse_csv(&q, csv[k], &e), e);
        assert_int_equal(q.n, 0);
        assert_int_equal(q.is_json, 0);
        assert_ok(queue_resolve(&q, &cs, &e), e);
        queue_free(&q);
        assert_ok(parse_json(&q, js[k], &e), e);
        assert_int_equal(q.n, 0);
        assert_int_equal(q.is_json, 1);
        assert_ok(queue_resolve(&q, &cs, &e), e);
        queue_free(&q);
    }
    curve_set_free(&cs);
}

static void test_resolve(void **state)
{
    curve_set cs;
    job_queue q;
    ef_err e = {0};
    load_a100(&cs);

    assert_ok(parse_csv(&q, HA "j1,10,100,bert,500,64\n"
                               "j2,10,100,gpt2,500,128\n", &e), e);
    assert_ok(queue_resolve(&q, &cs, &e), e);
    const curve_model *bert = curve_find_model(&cs, "bert");
    assert_ptr_equal(q.jobs[0].curve, curve_find_row(bert, 64));
    assert_non_null(q.jobs[1].curve);
    assert_int_equal(q.jobs[1].curve->batch, 128);
    queue_free(&q);

    /* unknown model: lists the known ones */
    assert_ok(parse_csv(&q, HA "j1,10,100,bert,500,64\n"
                               "j2,10,100,bertt,500,64\n", &e), e);
    assert_err(queue_resolve(&q, &cs, &e), e,
               "t.csv:3:11: model_name: unknown model \"bertt\"",
               "bert, deepspeech2, gpt2, inception3, resnet50, "
               "resnet50_cifar10, vgg16");
    queue_free(&q);

    /* missing batch size: lists the known ones */
    assert_ok(parse_csv(&q, HA "j1,10,100,bert,500,32\n", &e), e);
    assert_err(queue_resolve(&q, &cs, &e), e,
               "t.csv:2:20: batch_size: bert has no curve row for batch "
               "size 32", "(known batch sizes: 64, 128)");
    queue_free(&q);

    /* JSON positions */
    assert_ok(parse_json(&q, "{\"jobs\": [{\"id\": \"a\", \"model\": \"ncf\","
                             " \"batch_size\": 64, \"iterations\": 10, "
                             "\"submit_time\": 0}]}", &e), e);
    assert_err(queue_resolve(&q, &cs, &e), e,
               "t.json: jobs[0].model: unknown model \"ncf\"", "vgg16");
    assert_contains(e.msg, cs.dir);
    queue_free(&q);
    assert_ok(parse_json(&q, "{\"jobs\": [{\"id\": \"a\", \"model\": \"vgg16\","
                             " \"batch_size\": 3, \"iterations\": 10, "
                             "\"submit_time\": 0}]}", &e), e);
    assert_err(queue_resolve(&q, &cs, &e), e,
               "t.json: jobs[0].batch_size: vgg16 has no curve row for "
               "batch size 3", "known batch sizes: ");
    queue_free(&q);
    curve_set_free(&cs);
}

/* ---- queue_load --------------------------------------------------------- */

static void test_load_cluster09(void **state)
{
    char path[4096];
    job_queue q;
    ef_err e = {0};
    tu_path(path, sizeof path, "inputs/traces/itp/cluster09.csv");
    assert_ok(queue_load(&q, path, &e), e);
    assert_int_equal(q.n, 11134);
    assert_int_equal(q.is_json, 0);
    assert_int_equal(q.has_num_gpu, 1);
    assert_int_equal(q.has_duration, 1);
    const job *j = &q.jobs[0];
    assert_string_equal(j->id, "4bb42dcf-d655-0689-6a5f-1b7f5562a1cb");
    assert_true(j->submit == 2816);
    assert_true(j->iterations == 3344);
    assert_string_equal(j->model, "vgg16");
    assert_int_equal(j->has_deadline, 1);
    assert_true(j->deadline == 4324);
    assert_int_equal(j->batch, 256);
    assert_int_equal(j->num_gpu, 1);
    assert_true(j->duration == 2546);
    assert_int_equal(q.jobs[q.n - 1].line, 11135);
    queue_free(&q);
}

static void test_load_sample_json(void **state)
{
    char path[4096];
    job_queue q;
    curve_set cs;
    ef_err e = {0};
    tu_path(path, sizeof path, "inputs/jobs/sample.json");
    assert_ok(queue_load(&q, path, &e), e);
    assert_int_equal(q.is_json, 1);
    assert_true(q.n > 0);
    assert_string_equal(q.jobs[0].id, "j00");
    load_a100(&cs);
    assert_ok(queue_resolve(&q, &cs, &e), e);
    for (int i = 0; i < q.n; i++)
        assert_non_null(q.jobs[i].curve);
    queue_free(&q);
    curve_set_free(&cs);
}

static void test_load_sniffs_and_errors(void **state)
{
    char dir[256], path[512], pre[600];
    job_queue q;
    ef_err e = {0};
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "queue", "\xEF\xBB\xBF\n  " J1("\"iterations\": 10, "
             "\"submit_time\": 0"), path, sizeof path);
    assert_ok(queue_load(&q, path, &e), e);
    assert_int_equal(q.is_json, 1);
    assert_int_equal(q.n, 1);
    queue_free(&q);
    tu_write(dir, "queue.txt", HA ROWS, path, sizeof path);
    assert_ok(queue_load(&q, path, &e), e);
    assert_int_equal(q.is_json, 0);
    assert_int_equal(q.n, 2);
    queue_free(&q);
    /* errors carry the path the file was opened with */
    tu_write(dir, "bad.csv", HA "j1,10,0,bert,500,64\n", path, sizeof path);
    snprintf(pre, sizeof pre, "%s:2:7: iteration: ", path);
    assert_err(queue_load(&q, path, &e), e, pre, "zero iterations");
    tu_write(dir, "bad.json", "{\"jobs\": 3}", path, sizeof path);
    snprintf(pre, sizeof pre, "%s: jobs: ", path);
    assert_err(queue_load(&q, path, &e), e, pre, "array");
    snprintf(path, sizeof path, "%s/none.csv", dir);
    snprintf(pre, sizeof pre, "%s: ", path);
    assert_err(queue_load(&q, path, &e), e, pre, NULL);
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_basic),
        cmocka_unit_test(test_csv_spellings_identical),
        cmocka_unit_test(test_csv_best_effort_and_extras),
        cmocka_unit_test(test_csv_value_errors),
        cmocka_unit_test(test_csv_duplicate_ids),
        cmocka_unit_test(test_csv_structure_errors),
        cmocka_unit_test(test_json_basic),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_json_duplicate_ids),
        cmocka_unit_test(test_where),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_load_cluster09),
        cmocka_unit_test(test_load_sample_json),
        cmocka_unit_test(test_load_sniffs_and_errors),
        cmocka_unit_test(test_empty_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
