/* test_jobs.c: the job queue from trace CSV or JSON (model/jobs.h). */
#include "testutil.h"

#include <signal.h>
#include <time.h>

#include "common/util.h"
#include "model/jobs.h"

static int parse_csv(job_queue *q, const char *csv, ef_err *e)
{
    return queue_parse_csv(q, "t.csv", csv, strlen(csv), e);
}

static int parse_json(job_queue *q, const char *js, ef_err *e)
{
    return queue_parse_json(q, "t.json", js, strlen(js), e);
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The name of the first value in which jobs x and y differ (every field
 * of the format, as read), or NULL. Where they came from (line, index,
 * col) is not a value. */
static const char *job_diff(const job *x, const job *y)
{
    const job_run *r = &x->run, *u = &y->run;
    if (!same_str(x->id, y->id))
        return "id";
    if (!same_str(x->model, y->model))
        return "model";
    if (x->batch != y->batch)
        return "batch_size";
    if (x->iterations != y->iterations ||
        x->iterations_done != y->iterations_done)
        return "iterations";
    if (x->submit != y->submit)
        return "submit_time";
    if (x->has_deadline != y->has_deadline ||
        (x->has_deadline && x->deadline != y->deadline))
        return "deadline";
    if (x->num_gpu != y->num_gpu || x->duration != y->duration)
        return "num_gpu/duration";
    if (!placement_equal(&x->cur, &y->cur))
        return "placement";
    if (x->nbatch != y->nbatch)
        return "batch_sizes";
    for (int k = 0; k < x->nbatch; k++)
        if (x->batches[k] != y->batches[k])
            return "batch_sizes";
    if (x->in_samples != y->in_samples || x->samples != y->samples ||
        x->samples_done != y->samples_done)
        return "samples";
    if (x->epochs != y->epochs || x->dataset_size != y->dataset_size)
        return "epochs";
    if ((r->argv == NULL) != (u->argv == NULL) || r->argc != u->argc)
        return "command";
    for (int k = 0; k < r->argc; k++)
        if (!same_str(r->argv[k], u->argv[k]))
            return "command";
    if (!same_str(r->workdir, u->workdir))
        return "workdir";
    if (r->nenv != u->nenv)
        return "env";
    for (int k = 0; k < r->nenv; k++)
        if (!same_str(r->env[k], u->env[k]))
            return "env";
    if (r->signal != u->signal)
        return "checkpoint_signal";
    if (r->grace != u->grace)
        return "grace_seconds";
    if (r->max_restarts != u->max_restarts)
        return "max_restarts";
    if (r->per_gpu != u->per_gpu)
        return "processes";
    if (x->promised != y->promised)
        return "promised";
    if (x->owed != y->owed)
        return "overhead_owed";
    return NULL;
}

/* Same jobs in the same order; with 'lines', from the same lines too. */
static void check_same_jobs(const job_queue *a, const job_queue *b,
                            int lines, const char *file, int line)
{
    if (a->n != b->n) {
        print_error("    %d jobs vs %d\n", a->n, b->n);
        _fail(file, line);
    }
    for (int i = 0; i < a->n; i++) {
        const job *x = &a->jobs[i], *y = &b->jobs[i];
        const char *d = job_diff(x, y);
        if (d || (lines && x->line != y->line)) {
            print_error("    job %d (%s vs %s) differs in %s\n", i, x->id,
                        y->id, d ? d : "line");
            _fail(file, line);
        }
    }
}
#define assert_same_jobs(a, b) \
    check_same_jobs((a), (b), 1, __FILE__, __LINE__)
#define assert_same_values(a, b) \
    check_same_jobs((a), (b), 0, __FILE__, __LINE__)

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

/* A job with command argument 'arg' and env value 'val' (NAME). */
static char *run_job(size_t arg, size_t val)
{
    ef_buf b = {0};
    ef_buf_put(&b, "{\"jobs\": [{\"id\": \"a\", \"model\": \"m\", "
               "\"batch_size\": 64, \"iterations\": 10, \"submit_time\": 0, "
               "\"command\": [\"run\", \"");
    for (size_t k = 0; k < arg; k++)
        ef_buf_put(&b, "x");
    ef_buf_put(&b, "\"], \"env\": {\"NAME\": \"");
    for (size_t k = 0; k < val; k++)
        ef_buf_put(&b, "v");
    ef_buf_put(&b, "\"}}]}");
    return b.s;
}

/* One limit for what apply passes on as one string: a command argument
 * and an env value hold at most 4095 bytes, and a longer one is the same
 * error naming the job and the argument or variable (env values used to
 * be cut to 8184 bytes at launch, without a word). */
static void test_run_string_limit(void **state)
{
    (void)state;
    job_queue q;
    ef_err e = {0};
    char *t = run_job(4095, 4095);
    assert_ok(parse_json(&q, t, &e), e);
    assert_int_equal(strlen(q.jobs[0].run.argv[1]), 4095);
    assert_int_equal(strlen(q.jobs[0].run.env[0]), 5 + 4095);
    queue_free(&q);
    free(t);
    static const struct {
        size_t arg, val;
        const char *msg;
    } bad[] = {
        {4096, 0, "t.json: jobs[0].command[1]: too long (expected 1 to 4095 "
                  "bytes)"},
        {1, 4096, "t.json: jobs[0].env.NAME: too long (expected 0 to 4095 "
                  "bytes)"},
        {1, 9000, "t.json: jobs[0].env.NAME: too long (expected 0 to 4095 "
                  "bytes)"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        t = run_job(bad[k].arg, bad[k].val);
        assert_err(parse_json(&q, t, &e), e, bad[k].msg, NULL);
        free(t);
    }
    t = run_job(1, 0); /* an empty value is a value */
    assert_ok(parse_json(&q, t, &e), e);
    assert_string_equal(q.jobs[0].run.env[0], "NAME=");
    queue_free(&q);
    free(t);
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
        ("{\"apply\": {\"complete\": true, \"finished\": [\"a\"]}, "
         "\"jobs\": []}")};
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

    /* missing batch size: the nearest it has, how to measure it */
    assert_ok(parse_csv(&q, HA "j1,10,100,bert,500,32\n", &e), e);
    assert_err(queue_resolve(&q, &cs, &e), e,
               "t.csv:2:20: batch_size: bert has no curve row for batch "
               "size 32", "(nearest: 64; measure it on GPUs with efplan "
               "profile --model bert --batch 32: docs/profiling.md)");
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
               "batch size 3", "(nearest: 64; ");
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

/* ---- the field table and the writer ------------------------------------- */

static void test_field_table(void **state)
{
    int njson = 0;
    for (int f = 0; f < JF_NFIELDS; f++) {
        const job_fspec *s = &job_fields[f];
        assert_int_equal(s->f, f);
        assert_non_null(s->key);
        assert_non_null(s->doc);
        assert_true(s->flags & (JFF_JSON | JFF_CSV));
        /* a CSV column says what a valid cell is; a JSON-only field has
         * no column */
        if (s->flags & JFF_CSV) {
            assert_non_null(s->csv[0]);
            if (s->type == JFT_INT || s->type == JFT_TIME ||
                s->type == JFT_ID || s->type == JFT_NAME)
                assert_non_null(s->expect);
        } else {
            assert_null(s->csv[0]);
            assert_int_equal(s->req_csv, JR_NO);
        }
        if (!(s->flags & JFF_JSON))
            assert_int_equal(s->req_json, JR_NO);
        njson += (s->flags & JFF_JSON) != 0;
        /* optional fields say what leaving them out means */
        if (s->req_json != JR_YES || s->req_csv != JR_YES)
            assert_non_null(s->dflt);
        assert_int_equal(s->unless != 0, s->req_json == JR_UNLESS ||
                                             s->req_csv == JR_UNLESS);
        if (s->req_csv == JR_UNLESS) {
            assert_non_null(s->what);
            assert_non_null(s->alt);
        }
        /* names are unique across the table */
        for (int g = 0; g < f; g++) {
            assert_string_not_equal(s->key, job_fields[g].key);
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++)
                    if (s->csv[a] && job_fields[g].csv[b])
                        assert_string_not_equal(s->csv[a],
                                                job_fields[g].csv[b]);
        }
    }
    assert_int_equal(njson, JF_NFIELDS - 1); /* all but best_effort */
}

/* The row of field s in the jobs table of docs/inputs.md, rendered from the table. */
static void doc_row(const job_fspec *s, char *dst, size_t len)
{
    char csv[96] = "-", val[160], req[300], unl[96] = "";
    size_t o = 0;
    if (s->csv[0])
        snprintf(csv, sizeof csv, "`%s`%s%s%s", s->csv[0],
                 s->csv[1] ? ", `" : "", s->csv[1] ? s->csv[1] : "",
                 s->csv[1] ? "`" : "");
    switch (s->type) {
    case JFT_ID:
        snprintf(val, sizeof val, "UTF-8 string of %lld..%lld bytes "
                 "without control characters, or integer >= 0",
                 (long long)s->min, (long long)s->max);
        break;
    case JFT_NAME:
    case JFT_PATH:
        snprintf(val, sizeof val, "string of %lld..%lld bytes",
                 (long long)s->min, (long long)s->max);
        break;
    case JFT_INT:
        if (s->max == EF_MAX_I64)
            snprintf(val, sizeof val, "integer >= %lld", (long long)s->min);
        else
            snprintf(val, sizeof val, "integer %lld..%lld",
                     (long long)s->min, (long long)s->max);
        break;
    case JFT_TIME:
        snprintf(val, sizeof val, "seconds >= %lld, or ISO-8601 (JSON)",
                 (long long)s->min);
        break;
    case JFT_SIZES:
        snprintf(val, sizeof val, "1..%lld distinct integers %lld..%lld "
                 "(CSV: joined by `;`)", (long long)s->nmax,
                 (long long)s->min, (long long)s->max);
        break;
    case JFT_PLACE:
        snprintf(val, sizeof val, "`[{\"node\": n, \"gpus\": [i, ...]}]`, "
                 "GPU indices %lld..%lld", (long long)s->min,
                 (long long)s->max);
        break;
    case JFT_ARGV:
        snprintf(val, sizeof val, "1..%lld strings of %lld..%lld bytes",
                 (long long)s->nmax, (long long)s->min, (long long)s->max);
        break;
    case JFT_ENV:
        snprintf(val, sizeof val, "object of strings of %lld..%lld bytes",
                 (long long)s->min, (long long)s->max);
        break;
    case JFT_SIGNAL:
        snprintf(val, sizeof val, "signal name, or number %lld..%lld; not "
                 "KILL or STOP", (long long)s->min, (long long)s->max);
        break;
    case JFT_WORD: {
        size_t w = (size_t)snprintf(val, sizeof val, "one of");
        for (int k = 0; s->words[k]; k++)
            w += (size_t)snprintf(val + w, sizeof val - w, "%s `%s`",
                                  k ? "," : "", s->words[k]);
        break;
    }
    }
    for (int f = 0; f < JF_NFIELDS; f++)
        if (s->unless & (1u << f))
            o += (size_t)snprintf(unl + o, sizeof unl - o, "%s`%s`",
                                  o ? ", " : "", job_fields[f].key);
    const char *words[] = {"no", "yes", "unless ", "the column"};
    char rj[128], rc[128];
    snprintf(rj, sizeof rj, "%s%s", words[s->req_json],
             s->req_json == JR_UNLESS ? unl : "");
    snprintf(rc, sizeof rc, "%s%s", words[s->req_csv],
             s->req_csv == JR_UNLESS ? unl : "");
    if (!(s->flags & JFF_CSV) || strcmp(rj, rc) == 0)
        snprintf(req, sizeof req, "%s", rj);
    else if (!(s->flags & JFF_JSON))
        snprintf(req, sizeof req, "%s", rc);
    else
        snprintf(req, sizeof req, "JSON: %s; CSV: %s", rj, rc);
    snprintf(dst, len, "| `%s` | %s | %s%s | %s | %s | %s |", s->key, csv,
             val, (s->flags & JFF_NULL) ? ", or null" : "", req,
             s->dflt ? s->dflt : "-", s->doc);
}

/* The jobs table of docs/inputs.md is the field table: one row per field, in
 * table order, each as doc_row renders it. */
static void test_inputs_doc_lists_fields(void **state)
{
    static const char head[] = "| field | CSV column | value | required | "
                               "left out | meaning |";
    char path[4096], row[1024], want[JF_NFIELDS * 1024];
    char *text;
    size_t len, o = 0;
    ef_err e = {0};
    tu_path(path, sizeof path, "docs/inputs.md");
    assert_ok(ef_read_file(path, &text, &len, &e), e);
    o += (size_t)snprintf(want + o, sizeof want - o, "%s\n|---|---|---|---|"
                          "---|---|\n", head);
    for (int f = 0; f < JF_NFIELDS; f++) {
        doc_row(&job_fields[f], row, sizeof row);
        o += (size_t)snprintf(want + o, sizeof want - o, "%s\n", row);
    }
    const char *at = strstr(text, head);
    int ok = at && strncmp(at, want, o) == 0 && at[o] != '|';
    if (!ok) {
        print_error("    docs/inputs.md's jobs table should read:\n");
        for (char *l = strtok(want, "\n"); l; l = strtok(NULL, "\n"))
            print_error("%s\n", l);
    }
    free(text);
    assert_true(ok);
}

static void test_write_json(void **state)
{
    job_queue q;
    ef_err e = {0};
    assert_ok(parse_json(&q,
        "{\"jobs\": [{\"id\": 7, \"model\": \"bert\", \"batch_sizes\": [128, "
        "64], \"epochs\": 2, \"dataset_size\": 1000, \"submit_time\": "
        "\"1970-01-01T00:01:00Z\", \"placement\": [{\"node\": 1, \"gpus\": "
        "[2, 3]}, {\"node\": 1, \"gpus\": [4]}], \"command\": [\"a b\"], "
        "\"env\": {\"Z\": \"1\", \"A\": \"\"}, \"checkpoint_signal\": "
        "\"USR1\", \"grace_seconds\": 0, \"num_gpu\": 0},"
        " {\"id\": \"b\", \"model\": \"gpt2\", \"batch_size\": 64, "
        "\"iterations\": 10, \"submit_time\": 0, \"deadline\": 50, "
        "\"checkpoint_signal\": 33, \"duration\": 9}]}", &e), e);
    char *s = queue_write_json(q.jobs, q.n, NULL);
    assert_string_equal(s,
        "{\n \"format\": \"efplan-jobs\",\n \"jobs\": [\n  {\n"
        "   \"batch_size\": 64,\n   \"batch_sizes\": [\n    64,\n    128\n"
        "   ],\n   \"checkpoint_signal\": \"SIGUSR1\",\n   \"command\": [\n"
        "    \"a b\"\n   ],\n   \"dataset_size\": 1000,\n"
        "   \"deadline\": null,\n   \"env\": {\n    \"A\": \"\",\n"
        "    \"Z\": \"1\"\n   },\n   \"epochs\": 2,\n"
        "   \"grace_seconds\": 0,\n   \"id\": \"7\",\n   \"model\": \"bert\",\n"
        "   \"placement\": [\n    {\n     \"gpus\": [\n      2,\n      3,\n"
        "      4\n     ],\n     \"node\": 1\n    }\n   ],\n"
        "   \"samples_done\": 0,\n   \"submit_time\": 60\n  },\n  {\n"
        "   \"batch_size\": 64,\n   \"checkpoint_signal\": 33,\n"
        "   \"deadline\": 50,\n   \"duration\": 9,\n   \"id\": \"b\",\n"
        "   \"iterations\": 10,\n   \"iterations_done\": 0,\n"
        "   \"model\": \"gpt2\",\n   \"submit_time\": 0\n  }\n ],\n"
        " \"version\": 1\n}\n");
    free(s);
    /* the state file's "apply" report rides along */
    json_t *ap = json_pack("{s:b}", "complete", 1);
    s = queue_write_json(NULL, 0, ap);
    assert_string_equal(s, "{\n \"apply\": {\n  \"complete\": true\n },\n"
                           " \"format\": \"efplan-jobs\",\n \"jobs\": [],\n"
                           " \"version\": 1\n}\n");
    json_decref(ap);
    free(s);
    queue_free(&q);
}

static void test_advance(void **state)
{
    job_queue q;
    ef_err e = {0};
    assert_ok(parse_json(&q, "{\"jobs\": ["
        "{\"id\": \"i\", \"model\": \"m\", \"batch_size\": 10, \"iterations\":"
        " 100, \"iterations_done\": 20, \"submit_time\": 0},"
        "{\"id\": \"s\", \"model\": \"m\", \"batch_size\": 10, \"samples\":"
        " 995, \"samples_done\": 205, \"submit_time\": 0}]}", &e), e);
    job *a = &q.jobs[0], *b = &q.jobs[1];
    job_advance(a, 10); /* never backwards */
    assert_true(a->iterations_done == 20);
    job_advance(a, 50);
    assert_true(a->iterations_done == 50);
    job_advance(a, 100); /* never finished */
    assert_true(a->iterations_done == 99);
    assert_true(b->iterations == 100 && b->iterations_done == 20);
    job_advance(b, 20); /* 200 samples < 205 done: unchanged */
    assert_true(b->samples_done == 205 && b->iterations_done == 20);
    job_advance(b, 30);
    assert_true(b->samples_done == 300 && b->iterations_done == 30);
    job_advance(b, 99);
    assert_true(b->samples_done == 990 && b->iterations_done == 99);
    job_advance(b, 100);
    assert_true(b->samples_done == 994 && b->iterations_done == 99);
    queue_free(&q);
}

/* ---- round trip over generated queues ------------------------------------ */

static uint64_t rng = 1;

static uint64_t rnd(void) /* xorshift64* */
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ULL;
}

static int64_t rnd_in(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static int chance(int pct)
{
    return (int)(rnd() % 100) < pct;
}

/* Random text of 1..max bytes: letters, digits, spaces, quotes,
 * backslashes, commas, semicolons, UTF-8; no control characters, no
 * space at either end (CSV trims those). */
static char *rnd_text(int max)
{
    static const char *const parts[] = {
        "a", "Z", "7", "_", "-", " ", "\"", "\\", ",", ";", "/", "\xc3\xa9",
        "\xe2\x82\xac", "{", "}", "'", "="};
    int n = (int)rnd_in(1, max);
    char *s = malloc((size_t)n * 4 + 2);
    size_t o = 0;
    s[o++] = 'x';
    for (int k = 1; k < n; k++) {
        const char *p = parts[rnd() % (sizeof parts / sizeof *parts)];
        memcpy(s + o, p, strlen(p));
        o += strlen(p);
    }
    if (s[o - 1] == ' ')
        s[o - 1] = 'y';
    s[o] = '\0';
    return s;
}

static int cmp_long_t(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

static int cmp_str_t(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A time as JSON: seconds, or (sometimes) ISO-8601 in UTC or with an
 * offset. */
static json_t *rnd_time(int64_t t, int *iso)
{
    if (!chance(30))
        return json_integer(t);
    int off = chance(50) ? 0 : (int)rnd_in(-12, 12) * 3600 + 30 * 60;
    time_t local = (time_t)(t + off);
    struct tm tm;
    char buf[64], zone[16];
    gmtime_r(&local, &tm);
    if (off == 0)
        snprintf(zone, sizeof zone, "Z");
    else
        snprintf(zone, sizeof zone, "%c%02d:%02d", off < 0 ? '-' : '+',
                 abs(off) / 3600, abs(off) % 3600 / 60);
    snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d%s",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, zone);
    (*iso)++;
    return json_string(buf);
}

/* Job i of a generated queue: its JSON (*o) and the job the reader must
 * make of it (*x). Uses every field, in every form the format allows. */
typedef struct gen_stats {
    int iso, int_id, no_batch, null_deadline, nulls, sig_names;
} gen_stats;

static void gen_json_job(int i, json_t **out, job *x, gen_stats *st)
{
    json_t *o = json_object();
    char buf[64];
    memset(x, 0, sizeof *x);
    x->run.grace = -1;
    x->run.max_restarts = -1;
    if (chance(20)) {
        json_object_set_new(o, "id", json_integer(100000 + i));
        snprintf(buf, sizeof buf, "%d", 100000 + i);
        x->id = strdup(buf);
        st->int_id++;
    } else {
        char *t = rnd_text(30);
        size_t n = strlen(t) + 32;
        x->id = malloc(n);
        snprintf(x->id, n, "job-%d-%s", i, t);
        free(t);
        json_object_set_new(o, "id", json_string(x->id));
    }
    x->model = chance(5) ? strdup("m") : rnd_text(chance(5) ? 80 : 20);
    json_object_set_new(o, "model", json_string(x->model));
    /* batch sizes */
    if (chance(45)) {
        int nb = (int)rnd_in(1, 6);
        x->batches = malloc((size_t)nb * sizeof *x->batches);
        json_t *a = json_array();
        while (x->nbatch < nb) {
            long b = (long)rnd_in(1, chance(10) ? INT32_MAX : 4096);
            int dup = 0;
            for (int k = 0; k < x->nbatch; k++)
                dup |= x->batches[k] == b;
            if (dup)
                continue;
            x->batches[x->nbatch++] = b;
            json_array_append_new(a, json_integer(b));
        }
        json_object_set_new(o, "batch_sizes", a);
        x->batch = x->batches[rnd() % (uint64_t)nb];
        qsort(x->batches, (size_t)nb, sizeof *x->batches, cmp_long_t);
        if (chance(30)) {
            x->batch = x->batches[0];
            st->no_batch++;
        } else
            json_object_set_new(o, "batch_size", json_integer(x->batch));
    } else {
        if (chance(5))
            json_object_set_new(o, "batch_sizes", json_null());
        x->batch = (long)rnd_in(1, chance(10) ? INT32_MAX : 1024);
        json_object_set_new(o, "batch_size", json_integer(x->batch));
    }
    /* the work and its progress */
    int form = (int)(rnd() % 3);
    if (form == 0) {
        x->iterations = rnd_in(1, chance(10) ? EF_MAX_I64 : 100000);
        json_object_set_new(o, "iterations", json_integer(x->iterations));
        if (chance(60)) {
            x->iterations_done = rnd_in(0, x->iterations - 1);
            json_object_set_new(o, "iterations_done",
                                json_integer(x->iterations_done));
        }
    } else {
        x->in_samples = 1;
        if (form == 1) {
            x->samples = rnd_in(1, chance(10) ? EF_MAX_I64 : 10000000);
            json_object_set_new(o, "samples", json_integer(x->samples));
        } else {
            x->epochs = rnd_in(1, 1000000);
            x->dataset_size = rnd_in(1, 1000000);
            x->samples = x->epochs * x->dataset_size;
            json_object_set_new(o, "epochs", json_integer(x->epochs));
            json_object_set_new(o, "dataset_size",
                                json_integer(x->dataset_size));
        }
        if (chance(60)) {
            x->samples_done = rnd_in(0, x->samples - 1);
            json_object_set_new(o, "samples_done",
                                json_integer(x->samples_done));
        }
        x->iterations = (x->samples + x->batch - 1) / x->batch;
        x->iterations_done = x->samples_done / x->batch;
    }
    /* times */
    x->submit = rnd_in(0, 2000000000);
    json_object_set_new(o, "submit_time", rnd_time(x->submit, &st->iso));
    int d = (int)(rnd() % 3);
    if (d == 1) {
        json_object_set_new(o, "deadline", json_null());
        st->null_deadline++;
    } else if (d == 2) {
        x->has_deadline = 1;
        x->deadline = x->submit + rnd_in(1, 10000000);
        json_object_set_new(o, "deadline", rnd_time(x->deadline, &st->iso));
    }
    if (chance(50)) {
        x->num_gpu = (int)rnd_in(0, 1 << 20);
        json_object_set_new(o, "num_gpu", json_integer(x->num_gpu));
    }
    if (chance(50)) {
        x->duration = rnd_in(0, EF_MAX_I64);
        json_object_set_new(o, "duration", json_integer(x->duration));
    }
    /* where it runs */
    if (chance(40)) {
        /* distinct nodes and GPUs, ascending: as the reader keeps them */
        int ng = (int)rnd_in(1, 3), node = (int)rnd_in(0, (1 << 20) - 4);
        json_t *a = json_array();
        x->cur.node = malloc(64 * sizeof(int));
        x->cur.gpu = malloc(64 * sizeof(int));
        for (int g = 0; g < ng; g++, node++) {
            int m = (int)rnd_in(1, 8), gpu = (int)rnd_in(0, 7);
            json_t *gp = json_array();
            for (int k = 0; k < m; k++, gpu += (int)rnd_in(1, 7)) {
                json_array_append_new(gp, json_integer(gpu));
                x->cur.node[x->cur.n] = node;
                x->cur.gpu[x->cur.n++] = gpu;
            }
            json_array_append_new(a, json_pack("{s:i,s:o}", "node", node,
                                               "gpus", gp));
        }
        json_object_set_new(o, "placement", a);
    } else if (chance(10)) {
        json_object_set_new(o, "placement", json_null());
        st->nulls++;
    }
    /* how to run it */
    if (chance(60)) {
        int n = (int)rnd_in(1, 5);
        json_t *a = json_array();
        x->run.argv = calloc((size_t)n + 1, sizeof *x->run.argv);
        for (int k = 0; k < n; k++) {
            x->run.argv[x->run.argc++] = rnd_text(40);
            json_array_append_new(a, json_string(x->run.argv[k]));
        }
        json_object_set_new(o, "command", a);
    }
    if (chance(40)) {
        x->run.workdir = rnd_text(60);
        json_object_set_new(o, "workdir", json_string(x->run.workdir));
    }
    if (chance(50)) {
        static const char *const names[] = {
            "A", "B_2", "_x", "OMP_NUM_THREADS", "NCCL_DEBUG", "z9", "PATH"};
        json_t *env = json_object();
        int n = (int)rnd_in(1, 4);
        x->run.env = calloc((size_t)n + 1, sizeof *x->run.env);
        for (int k = 0; k < n; k++) {
            const char *key = names[rnd() % (sizeof names / sizeof *names)];
            if (json_object_get(env, key))
                continue;
            char *v = chance(20) ? strdup("") : rnd_text(20);
            size_t len = strlen(key) + strlen(v) + 2;
            x->run.env[x->run.nenv] = malloc(len);
            snprintf(x->run.env[x->run.nenv++], len, "%s=%s", key, v);
            json_object_set_new(env, key, json_string(v));
            free(v);
        }
        qsort(x->run.env, (size_t)x->run.nenv, sizeof *x->run.env,
              cmp_str_t);
        json_object_set_new(o, "env", env);
    }
    if (chance(50)) {
        static const struct {
            const char *name;
            int sig;
        } sigs[] = {{"SIGUSR1", SIGUSR1}, {"USR2", SIGUSR2},
                    {"SIGTERM", SIGTERM}, {"HUP", SIGHUP},
                    {"SIGWINCH", SIGWINCH}, {NULL, 33}, {NULL, 64},
                    {NULL, 1}, {NULL, SIGUSR1}};
        int k = (int)(rnd() % (sizeof sigs / sizeof *sigs));
        x->run.signal = sigs[k].sig;
        json_object_set_new(o, "checkpoint_signal",
                            sigs[k].name ? json_string(sigs[k].name)
                                         : json_integer(sigs[k].sig));
        st->sig_names += sigs[k].name != NULL;
    }
    if (chance(50)) {
        x->run.grace = (int)rnd_in(0, 86400);
        json_object_set_new(o, "grace_seconds", json_integer(x->run.grace));
    }
    if (chance(30)) {
        x->promised = 1;
        json_object_set_new(o, "promised", json_integer(1));
    }
    if (chance(30)) {
        x->run.max_restarts = (int)rnd_in(0, 100);
        json_object_set_new(o, "max_restarts",
                            json_integer(x->run.max_restarts));
    }
    if (chance(30)) {
        x->owed = rnd_in(1, 86400);
        json_object_set_new(o, "overhead_owed", json_integer(x->owed));
    }
    if (chance(40)) {
        /* "per_node" is the default: read, and not written back */
        x->run.per_gpu = chance(60);
        json_object_set_new(o, "processes", json_string(x->run.per_gpu
                                                            ? "per_gpu"
                                                            : "per_node"));
    }
    *out = o;
}

/* Write q, read it back, write again: the same values, the same bytes. */
static void round_trip(const job_queue *q, int *uses)
{
    job_queue b;
    ef_err e = {0};
    char *t1 = queue_write_json(q->jobs, q->n, NULL);
    assert_ok(queue_parse_json(&b, "w.json", t1, strlen(t1), &e), e);
    assert_same_values(q, &b);
    char *t2 = queue_write_json(b.jobs, b.n, NULL);
    assert_string_equal(t1, t2);
    for (int i = 0; i < b.n; i++)
        for (int f = 0; f < JF_NFIELDS; f++)
            uses[f] += job_has(&b.jobs[i], (job_field)f);
    free(t1);
    free(t2);
    queue_free(&b);
}

static void test_round_trip_json(void **state)
{
    int uses[JF_NFIELDS] = {0};
    gen_stats st = {0};
    rng = 0x9e3779b97f4a7c15ULL;
    for (int round = 0; round < 300; round++) {
        job_queue want = {0}, a;
        ef_err e = {0};
        json_t *arr = json_array();
        want.n = (int)rnd_in(0, 12);
        want.jobs = calloc((size_t)want.n + 1, sizeof *want.jobs);
        for (int i = 0; i < want.n; i++) {
            json_t *o;
            gen_json_job(round * 100 + i, &o, &want.jobs[i], &st);
            json_array_append_new(arr, o);
        }
        json_t *root = json_pack("{s:o}", "jobs", arr);
        if (chance(50)) {
            json_object_set_new(root, "format", json_string("efplan-jobs"));
            json_object_set_new(root, "version", json_integer(1));
        }
        char *text = json_dumps(root, chance(50) ? JSON_COMPACT : 0);
        json_decref(root);
        assert_ok(queue_parse_json(&a, "gen.json", text, strlen(text), &e),
                  e);
        assert_same_values(&want, &a); /* the reader read what was meant */
        round_trip(&a, uses);
        free(text);
        queue_free(&a);
        queue_free(&want);
    }
    /* every field the writer writes was written, in every form */
    for (int f = 0; f < JF_NFIELDS; f++)
        if (job_fields[f].flags & JFF_JSON) {
            if (uses[f] == 0)
                print_error("    field %s never used\n", job_fields[f].key);
            assert_true(uses[f] > 0);
        }
    assert_true(st.iso > 0 && st.int_id > 0 && st.no_batch > 0 &&
                st.null_deadline > 0 && st.nulls > 0 && st.sig_names > 0);
}

/* A CSV cell for text s: quoted, quotes doubled. */
static void csv_text(ef_buf *b, const char *s)
{
    ef_buf_put(b, "\"");
    for (const char *c = s; *c; c++)
        ef_buf_put(b, *c == '"' ? "\"\"" : (char[2]){*c, 0});
    ef_buf_put(b, "\"");
}

static void test_round_trip_csv(void **state)
{
    /* the columns; the first six are required */
    static const job_field cols[] = {
        JF_ID, JF_SUBMIT, JF_ITER, JF_MODEL, JF_DEADLINE, JF_BATCH,
        JF_NUMGPU, JF_DURATION, JF_BEST, JF_DONE, JF_BATCHES, JF_SAMPLES,
        JF_EPOCHS, JF_DATASET, JF_SAMPLES_DONE};
    enum { NC = sizeof cols / sizeof *cols };
    int uses[JF_NFIELDS] = {0};
    rng = 12345;
    for (int round = 0; round < 200; round++) {
        int have[NC], order[NC];
        for (int c = 0; c < NC; c++) {
            have[c] = c < 6 || chance(60);
            order[c] = c;
        }
        for (int c = NC - 1; c > 0; c--) { /* shuffle the columns */
            int k = (int)(rnd() % (uint64_t)(c + 1)), t = order[c];
            order[c] = order[k];
            order[k] = t;
        }
        ef_buf b = {0};
        int first = 1;
        for (int k = 0; k < NC; k++) {
            const job_fspec *s = &job_fields[cols[order[k]]];
            if (!have[order[k]])
                continue;
            ef_buf_printf(&b, "%s%s", first ? "" : ",",
                          s->csv[s->csv[1] && chance(50) ? 1 : 0]);
            first = 0;
        }
        ef_buf_put(&b, ",real_iteration\r\n");
        job_queue want = {0}, a;
        want.n = (int)rnd_in(0, 10);
        want.jobs = calloc((size_t)want.n + 1, sizeof *want.jobs);
        for (int i = 0; i < want.n; i++) {
            job *x = &want.jobs[i];
            char id[64];
            x->run.grace = -1;
            x->run.max_restarts = -1;
            snprintf(id, sizeof id, "r%d-%d", round, i);
            x->id = strdup(id);
            x->model = rnd_text(20);
            int64_t v[JF_NFIELDS] = {0};
            int set[JF_NFIELDS] = {0};
            /* the work: samples or epochs when their columns exist */
            int form = have[11] && chance(40) ? 1
                       : have[12] && have[13] && chance(40) ? 2 : 0;
            if (have[10] && chance(60)) {
                int nb = (int)rnd_in(1, 4);
                x->batches = malloc((size_t)nb * sizeof *x->batches);
                while (x->nbatch < nb) {
                    long bs = (long)rnd_in(1, 2048);
                    int dup = 0;
                    for (int k = 0; k < x->nbatch; k++)
                        dup |= x->batches[k] == bs;
                    if (!dup)
                        x->batches[x->nbatch++] = bs;
                }
                x->batch = x->batches[rnd() % (uint64_t)nb];
            } else
                x->batch = (long)rnd_in(1, 4096);
            v[JF_BATCH] = x->batch;
            set[JF_BATCH] = 1;
            x->submit = v[JF_SUBMIT] = rnd_in(0, 2000000000);
            set[JF_SUBMIT] = 1;
            if (form == 0) {
                x->iterations = v[JF_ITER] = rnd_in(1, 1000000);
                set[JF_ITER] = 1;
                if (have[9] && chance(50)) {
                    x->iterations_done = v[JF_DONE] =
                        rnd_in(0, x->iterations - 1);
                    set[JF_DONE] = 1;
                }
            } else {
                x->in_samples = 1;
                if (form == 1) {
                    x->samples = v[JF_SAMPLES] = rnd_in(1, 100000000);
                    set[JF_SAMPLES] = 1;
                } else {
                    x->epochs = v[JF_EPOCHS] = rnd_in(1, 1000);
                    x->dataset_size = v[JF_DATASET] = rnd_in(1, 100000);
                    x->samples = x->epochs * x->dataset_size;
                    set[JF_EPOCHS] = set[JF_DATASET] = 1;
                }
                if (have[14] && chance(50)) {
                    x->samples_done = v[JF_SAMPLES_DONE] =
                        rnd_in(0, x->samples - 1);
                    set[JF_SAMPLES_DONE] = 1;
                }
                x->iterations = (x->samples + x->batch - 1) / x->batch;
                x->iterations_done = x->samples_done / x->batch;
            }
            int best = have[8] && chance(30);
            if (have[8] && (best || chance(50))) {
                v[JF_BEST] = best;
                set[JF_BEST] = 1;
            }
            if (chance(60)) {
                v[JF_DEADLINE] = x->submit + rnd_in(1, 1000000);
                set[JF_DEADLINE] = 1;
                x->has_deadline = !best;
                x->deadline = best ? 0 : v[JF_DEADLINE];
            }
            if (have[6] && chance(70)) {
                x->num_gpu = (int)(v[JF_NUMGPU] = rnd_in(0, 64));
                set[JF_NUMGPU] = 1;
            }
            if (have[7] && chance(70)) {
                x->duration = v[JF_DURATION] = rnd_in(0, 100000);
                set[JF_DURATION] = 1;
            }
            first = 1;
            for (int k = 0; k < NC; k++) {
                int c = order[k];
                job_field f = cols[c];
                if (!have[c])
                    continue;
                ef_buf_put(&b, first ? "" : ",");
                first = 0;
                if (f == JF_ID)
                    csv_text(&b, x->id);
                else if (f == JF_MODEL)
                    csv_text(&b, x->model);
                else if (f == JF_BATCHES)
                    for (int m = 0; m < x->nbatch; m++)
                        ef_buf_printf(&b, "%s%ld", m ? ";" : "",
                                      x->batches[m]);
                else if (set[f])
                    ef_buf_printf(&b, "%lld", (long long)v[f]);
            }
            ef_buf_printf(&b, ",%d\r\n", i);
            if (x->nbatch)
                qsort(x->batches, (size_t)x->nbatch, sizeof *x->batches,
                      cmp_long_t);
        }
        ef_err e = {0};
        assert_ok(queue_parse_csv(&a, "gen.csv", b.s, b.n, &e), e);
        assert_same_values(&want, &a);
        round_trip(&a, uses);
        queue_free(&a);
        queue_free(&want);
        free(b.s);
    }
    for (int f = 0; f < JF_NFIELDS; f++)
        if ((job_fields[f].flags & JFF_CSV) && f != JF_BEST)
            assert_true(uses[f] > 0);
}

/* JSON times relative to "now" (queue_set_now): resolved against the
 * reference set, refused without one */
static void test_json_relative_times(void **state)
{
    (void)state;
    const char *js = "{\"jobs\": [{\"id\": \"a\", \"model\": \"bert\", "
                     "\"batch_size\": 64, \"iterations\": 10, "
                     "\"submit_time\": \"now-1h\", "
                     "\"deadline\": \"now+8h\"}]}";
    job_queue q;
    ef_err e = {0};
    queue_set_now(1748908800);
    assert_ok(queue_parse_json(&q, "r.json", js, strlen(js), &e), e);
    assert_int_equal(q.jobs[0].submit, 1748908800 - 3600);
    assert_int_equal(q.jobs[0].deadline, 1748908800 + 8 * 3600);
    queue_free(&q);
    queue_set_now(-1);
    assert_err(queue_parse_json(&q, "r.json", js, strlen(js), &e), e,
               "r.json: jobs[0].submit_time: \"now-1h\": a relative time "
               "is not read here", NULL);
    /* no submit_time: submitted now where there is a now, else refused */
    const char *nos = "{\"jobs\": [{\"id\": \"a\", \"model\": \"bert\", "
                      "\"batch_size\": 64, \"iterations\": 10}]}";
    queue_set_now(1748908800);
    assert_ok(queue_parse_json(&q, "n.json", nos, strlen(nos), &e), e);
    assert_int_equal(q.jobs[0].submit, 1748908800);
    queue_free(&q);
    queue_set_now(-1);
    assert_err(queue_parse_json(&q, "n.json", nos, strlen(nos), &e), e,
               "n.json: jobs[0]: missing required key \"submit_time\"", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_relative_times),
        cmocka_unit_test(test_csv_basic),
        cmocka_unit_test(test_csv_spellings_identical),
        cmocka_unit_test(test_csv_best_effort_and_extras),
        cmocka_unit_test(test_csv_value_errors),
        cmocka_unit_test(test_csv_duplicate_ids),
        cmocka_unit_test(test_csv_structure_errors),
        cmocka_unit_test(test_json_basic),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_run_string_limit),
        cmocka_unit_test(test_json_duplicate_ids),
        cmocka_unit_test(test_where),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_load_cluster09),
        cmocka_unit_test(test_load_sample_json),
        cmocka_unit_test(test_load_sniffs_and_errors),
        cmocka_unit_test(test_empty_queue),
        cmocka_unit_test(test_field_table),
        cmocka_unit_test(test_inputs_doc_lists_fields),
        cmocka_unit_test(test_write_json),
        cmocka_unit_test(test_advance),
        cmocka_unit_test(test_round_trip_json),
        cmocka_unit_test(test_round_trip_csv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
