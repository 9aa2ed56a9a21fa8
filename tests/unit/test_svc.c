/* test_svc.c: the queue service without HTTP (service/svc.h): admission
 * answers, idempotent retries, ownership, cancel, re-plan, durability
 * across a reopen, and the promise through many submissions. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "model/overhead.h"
#include "planner/plan.h"
#include "service/store.h"
#include "service/token.h"
#include "service/svc.h"
#include "testutil.h"

/* A fixed wall clock: a slot boundary well after 2001 (Unix time). */
#define T0 1800000000LL

typedef struct fx {
    char dir[256], db[512];
    svc *s;
    store_ident alice, bob, op;
} fx;

static void open_svc(fx *f, int64_t now)
{
    svc_config c = {.db = f->db, .cluster = "n2g8", .curves = "A100",
                    .slot = 60, .overhead = OVH_FIG12};
    ef_err e = {0};
    assert_ok(svc_open(&f->s, &c, now, &e), e);
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    tu_tmpdir(f->dir, sizeof f->dir);
    tu_join(f->db, sizeof f->db, f->dir, "s.db");
    open_svc(f, T0);
    char tok[TOKEN_TEXT_MAX + 1];
    ef_err e = {0};
    store *st = svc_store(f->s);
    assert_ok(store_token_add(st, "alice", 0, T0, tok, sizeof tok, &f->alice,
                              &e), e);
    assert_ok(store_token_add(st, "bob", 0, T0, tok, sizeof tok, &f->bob, &e),
              e);
    assert_ok(store_token_add(st, "ops", 1, T0, tok, sizeof tok, &f->op, &e),
              e);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    svc_close(f->s);
    assert_int_equal(tu_rmtree(f->dir), 0);
    free(f);
    return 0;
}

/* A job body: 'iters' iterations of resnet50 at 64, deadline 'dl' (-1:
 * none). */
static char *jobtext(const char *id, long iters, int64_t dl)
{
    static char b[512];
    if (dl < 0)
        snprintf(b, sizeof b, "{\"id\": \"%s\", \"model\": \"resnet50\", "
                 "\"batch_size\": 64, \"iterations\": %ld}", id, iters);
    else
        snprintf(b, sizeof b, "{\"id\": \"%s\", \"model\": \"resnet50\", "
                 "\"batch_size\": 64, \"iterations\": %ld, \"deadline\": "
                 "%lld}", id, iters, (long long)dl);
    return b;
}

/* Submit and parse the answer; *status gets the code. */
static json_t *submit(fx *f, const store_ident *who, const char *body,
                      int64_t now, int *status)
{
    svc_reply r;
    svc_submit(f->s, who, body, strlen(body), now, &r);
    *status = r.status;
    if (r.status == 500)
        print_message("500: %s", r.body);
    json_t *v = json_loads(r.body, 0, NULL);
    assert_non_null(v);
    svc_reply_free(&r);
    return v;
}

static const char *sget(const json_t *v, const char *k)
{
    const json_t *x = json_object_get(v, k);
    return json_is_string(x) ? json_string_value(x) : "";
}

static void test_submit_retry_conflict(void **state)
{
    fx *f = *state;
    int st;
    json_t *a = submit(f, &f->alice, jobtext("a1", 2000, T0 + 3600), T0 + 5,
                       &st);
    assert_int_equal(st, 201);
    assert_string_equal(sget(a, "decision"), "admitted");
    assert_true(json_integer_value(json_object_get(a, "planned_end")) <=
                T0 + 3600);
    assert_int_equal(json_integer_value(json_object_get(a, "submit_time")),
                     T0 + 5);
    char *first = json_dumps(a, JSON_SORT_KEYS);
    /* the same body again, later, keys in another order: the first answer */
    json_t *b = submit(f, &f->alice,
                       "{\"iterations\": 2000, \"deadline\": 1800003600, "
                       "\"model\": \"resnet50\", \"id\": \"a1\", "
                       "\"batch_size\": 64}", T0 + 500, &st);
    assert_int_equal(st, 200);
    char *second = json_dumps(b, JSON_SORT_KEYS);
    assert_string_equal(first, second);
    free(first);
    free(second);
    json_decref(b);
    /* another body: 409; another user's id: 409 */
    json_t *c = submit(f, &f->alice, jobtext("a1", 2001, T0 + 3600), T0 + 6, &st);
    assert_int_equal(st, 409);
    json_decref(c);
    c = submit(f, &f->bob, jobtext("a1", 2000, T0 + 3600), T0 + 6, &st);
    assert_int_equal(st, 409);
    assert_contains(json_string_value(json_object_get(
                        json_object_get(c, "error"), "message")),
                    "another user");
    json_decref(c);
    json_decref(a);
}

static void test_bad_input(void **state)
{
    fx *f = *state;
    static const struct {
        const char *body, *path, *msg;
    } cases[] = {
        {"{\"id\": \"x\"", NULL, "request body:1:"},
        {"[1]", NULL, "expected a job object"},
        {"{\"id\": \"u\", \"user\": \"bob\", \"model\": \"resnet50\"}", "user",
         "not accepted from a client"},
        {"{\"id\": \"s\", \"submit_time\": 5}", "submit_time", "server sets"},
        {"{\"model\": \"resnet50\"}", "id", "missing"},
        {"{\"id\": \"a\\u0001b\"}", "id", "control character"},
        {"{\"id\": \"k\", \"model\": \"resnet50\", \"batch_size\": 64, "
         "\"iterations\": 10, \"deadlin\": 5}", "deadlin", "deadlin"},
        {"{\"id\": \"n\", \"model\": \"resnet50\", \"batch_size\": 64, "
         "\"iterations\": -3}", "iterations", "iterations"},
        {"{\"id\": \"m\", \"model\": \"nosuchmodel\", \"batch_size\": 64, "
         "\"iterations\": 3}", "model", "nosuchmodel"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int st;
        json_t *v = submit(f, &f->alice, cases[i].body, T0, &st);
        const json_t *er = json_object_get(v, "error");
        if (st != 400 || !er)
            fail_msg("case %zu: status %d", i, st);
        assert_int_equal(json_integer_value(json_object_get(er, "status")),
                         400);
        assert_contains(sget(er, "message"), cases[i].msg);
        if (cases[i].path)
            assert_string_equal(sget(er, "path"), cases[i].path);
        json_decref(v);
    }
    /* nothing was stored */
    svc_reply r;
    svc_list(f->s, &f->op, 1, NULL, T0, &r);
    assert_int_equal(r.status, 200);
    assert_contains(r.body, "{\"jobs\":[]}");
    svc_reply_free(&r);
}

static void test_owners(void **state)
{
    fx *f = *state;
    int st;
    json_decref(submit(f, &f->alice, jobtext("a", 100000, T0 + 36000), T0,
                       &st));
    assert_int_equal(st, 201);
    json_decref(submit(f, &f->bob, jobtext("b", 1000, T0 + 7200), T0, &st));
    assert_int_equal(st, 201);
    svc_reply r;
    svc_show(f->s, &f->bob, "a", T0, &r);
    assert_int_equal(r.status, 403);
    svc_reply_free(&r);
    svc_cancel(f->s, &f->bob, "a", T0, &r);
    assert_int_equal(r.status, 403);
    svc_reply_free(&r);
    svc_show(f->s, &f->bob, "nope", T0, &r);
    assert_int_equal(r.status, 404);
    svc_reply_free(&r);
    svc_list(f->s, &f->bob, 0, NULL, T0, &r);
    assert_not_contains(r.body, "\"id\":\"a\"");
    assert_contains(r.body, "\"id\":\"b\"");
    svc_reply_free(&r);
    svc_list(f->s, &f->bob, 1, NULL, T0, &r);
    assert_int_equal(r.status, 403);
    svc_reply_free(&r);
    svc_list(f->s, &f->op, 1, NULL, T0, &r);
    assert_contains(r.body, "\"id\":\"a\"");
    assert_contains(r.body, "\"id\":\"b\"");
    svc_reply_free(&r);
    svc_list(f->s, &f->op, 1, "bogus", T0, &r);
    assert_int_equal(r.status, 400);
    svc_reply_free(&r);
    /* the show view: decision, GPUs now, history */
    svc_show(f->s, &f->op, "a", T0 + 30, &r);
    assert_int_equal(r.status, 200);
    json_t *v = json_loads(r.body, 0, NULL);
    assert_string_equal(sget(v, "decision"), "admitted");
    assert_string_equal(sget(v, "owner"), "alice");
    /* a service that only plans shows what the plan does now */
    assert_string_equal(sget(v, "state"), "planned-running");
    assert_true(json_integer_value(json_object_get(v, "gpus")) > 0);
    assert_true(json_array_size(json_object_get(v, "placement")) > 0);
    assert_int_equal(json_array_size(json_object_get(v, "history")), 1);
    json_decref(v);
    svc_reply_free(&r);
    /* cancel frees the reservation; a second cancel is a conflict */
    svc_cancel(f->s, &f->alice, "a", T0 + 60, &r);
    assert_int_equal(r.status, 200);
    assert_contains(r.body, "\"reservation_freed\":true");
    svc_reply_free(&r);
    svc_cancel(f->s, &f->alice, "a", T0 + 60, &r);
    assert_int_equal(r.status, 409);
    svc_reply_free(&r);
    svc_show(f->s, &f->alice, "a", T0 + 120, &r);
    assert_contains(r.body, "\"state\":\"cancelled\"");
    assert_contains(r.body, "\"gpus\":0");
    svc_reply_free(&r);
    /* the plan no longer holds it; the queue export has b only */
    int64_t ver;
    svc_plan(f->s, &r, &ver);
    assert_not_contains(r.body, "\"id\": \"a\"");
    assert_int_equal(ver, 4);
    svc_reply_free(&r);
    svc_queue(f->s, &f->op, &r);
    assert_contains(r.body, "\"efplan-jobs\"");
    assert_contains(r.body, "\"b\"");
    assert_not_contains(r.body, "\"a\"");
    svc_reply_free(&r);
}

static void test_reject_then_earliest(void **state)
{
    fx *f = *state;
    int st;
    /* far more work than 16 GPUs do in ten minutes */
    json_t *a = submit(f, &f->alice, jobtext("big", 400000, T0 + 600), T0, &st);
    assert_int_equal(st, 201);
    assert_string_equal(sget(a, "decision"), "rejected");
    json_int_t efd = json_integer_value(
        json_object_get(a, "earliest_feasible_deadline"));
    assert_true(efd > T0 + 600);
    assert_true(sget(a, "reason")[0] != '\0');
    json_decref(a);
    /* the same id, at the deadline offered: admitted */
    a = submit(f, &f->alice, jobtext("big", 400000, efd), T0, &st);
    assert_int_equal(st, 201);
    assert_string_equal(sget(a, "decision"), "admitted");
    json_decref(a);
    /* a best-effort job */
    a = submit(f, &f->bob, jobtext("be", 1000, -1), T0, &st);
    assert_int_equal(st, 201);
    assert_string_equal(sget(a, "decision"), "best_effort");
    json_decref(a);
}

/* GET /v1/jobs/{id}/explain without HTTP: an admitted job's reserved
 * and surplus GPUs, a rejected job (kept out of the plan) with the
 * admitted job that holds the cluster, ownership and unknown ids. */
static void test_explain(void **state)
{
    fx *f = *state;
    int st;
    /* resnet50 at 64 runs as fast on 8 GPUs as on 16: two such jobs
     * hold the 16 GPUs to their deadline, a third fits only alone */
    json_decref(submit(f, &f->alice, jobtext("a", 75000, T0 + 3600), T0,
                       &st));
    assert_int_equal(st, 201);
    json_decref(submit(f, &f->bob, jobtext("b", 75000, T0 + 3600), T0, &st));
    json_t *b = submit(f, &f->alice, jobtext("big", 75000, T0 + 3600), T0,
                       &st);
    assert_string_equal(sget(b, "decision"), "rejected");
    json_decref(b);
    svc_reply r;
    svc_explain(f->s, &f->alice, "a", &r);
    assert_int_equal(r.status, 200);
    json_t *v = json_loads(r.body, 0, NULL);
    assert_non_null(v);
    assert_string_equal(sget(v, "format"), "efplan-explain");
    assert_string_equal(sget(v, "decision"), "admitted");
    assert_true(json_array_size(json_object_get(v, "intervals")) > 0);
    assert_true(json_array_size(json_object_get(v, "reservation")) > 0);
    assert_contains(sget(v, "explanation"), "a is admitted: its deadline");
    json_decref(v);
    svc_reply_free(&r);
    svc_explain(f->s, &f->alice, "big", &r);
    assert_int_equal(r.status, 200);
    v = json_loads(r.body, 0, NULL);
    assert_string_equal(sget(v, "decision"), "rejected");
    const json_t *h = json_object_get(v, "holders");
    assert_int_equal(json_array_size(h), 2); /* a and b, by id */
    assert_string_equal(sget(json_array_get(h, 0), "id"), "a");
    assert_string_equal(sget(json_array_get(h, 1), "id"), "b");
    assert_true(json_is_true(json_object_get(v, "alone_ok")));
    assert_true(json_integer_value(json_object_get(
                    json_array_get(h, 0), "reserved_gpu_seconds")) > 0);
    assert_true(json_integer_value(json_object_get(
                    v, "earliest_feasible_deadline")) > T0 + 3600);
    assert_contains(sget(v, "explanation"), "big is rejected");
    json_decref(v);
    svc_reply_free(&r);
    svc_explain(f->s, &f->bob, "a", &r);
    assert_int_equal(r.status, 403);
    svc_reply_free(&r);
    svc_explain(f->s, &f->op, "nope", &r);
    assert_int_equal(r.status, 404);
    svc_reply_free(&r);
}

/* Many submissions over time: every job ever admitted is admitted by the
 * final plan and planned to end by its deadline; a reopened service
 * answers the same. */
static void test_promise_and_reopen(void **state)
{
    fx *f = *state;
    uint64_t x = 12345;
    int nadm = 0;
    char ids[120][16];
    int64_t dls[120];
    for (int i = 0; i < 120; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int64_t now = T0 + i * 37;
        long it = 500 + (long)(x >> 33) % 20000;
        int64_t dl = now + 600 + (int64_t)((x >> 20) % 20000);
        char id[16];
        snprintf(id, sizeof id, "p%03d", i);
        int st;
        json_t *a = submit(f, i % 2 ? &f->alice : &f->bob, jobtext(id, it, dl),
                           now, &st);
        assert_int_equal(st, 201);
        if (strcmp(sget(a, "decision"), "admitted") == 0) {
            snprintf(ids[nadm], sizeof ids[nadm], "%s", id);
            dls[nadm++] = dl;
        }
        json_decref(a);
    }
    assert_true(nadm > 10);
    assert_true(nadm < 120);
    svc_reply r;
    svc_replan(f->s, &f->alice, T0 + 9000, &r);
    assert_int_equal(r.status, 403);
    svc_reply_free(&r);
    svc_replan(f->s, &f->op, T0 + 9000, &r);
    assert_int_equal(r.status, 200);
    assert_contains(r.body, "\"snapshot\":");
    svc_reply_free(&r);
    /* views from the plan as submitted and as reopened are the same,
     * but for what the reopened service's planning state ran past: its
     * state ("planned-done") and that event in the history */
    char *views[120] = {0};
    json_int_t ends[120] = {0};
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < nadm; k++) {
            svc_show(f->s, &f->op, ids[k], T0 + 300, &r);
            json_t *pv = json_loads(r.body, 0, NULL);
            if (pass > 0)
                assert_string_equal(sget(pv, "state"), "planned-done");
            json_object_del(pv, "history");
            json_object_del(pv, "state");
            /* the end the state ran to (no placement, work left in
             * fractions) and the full plan's may differ by seconds */
            json_int_t pe = json_integer_value(json_object_get(
                pv, "planned_end"));
            if (pass == 0)
                ends[k] = pe;
            else
                assert_true(pe >= ends[k] - 60 && pe <= ends[k] + 60);
            json_object_del(pv, "planned_end");
            char *vt = json_dumps(pv, JSON_SORT_KEYS);
            json_decref(pv);
            if (pass == 0)
                views[k] = vt;
            else {
                assert_string_equal(views[k], vt);
                free(vt);
            }
            svc_reply_free(&r);
            svc_show(f->s, &f->op, ids[k], T0, &r);
            json_t *v = json_loads(r.body, 0, NULL);
            assert_string_equal(sget(v, "decision"), "admitted");
            assert_true(json_integer_value(json_object_get(v, "planned_end"))
                        <= dls[k]);
            json_decref(v);
            svc_reply_free(&r);
        }
        int64_t v1;
        svc_plan(f->s, &r, &v1);
        char *before = r.body;
        r.body = NULL;
        svc_reply_free(&r);
        svc_close(f->s);
        open_svc(f, T0 + 99999);
        int64_t v2;
        svc_plan(f->s, &r, &v2);
        assert_int_equal(v1, v2);
        assert_string_equal(before, r.body);
        free(before);
        svc_reply_free(&r);
    }
    for (int k = 0; k < nadm; k++)
        free(views[k]);
    /* another cluster is refused */
    svc_config c = {.db = f->db, .cluster = "n4g8", .curves = "A100",
                    .slot = 60};
    svc *other = NULL;
    ef_err e = {0};
    assert_int_equal(svc_open(&other, &c, T0, &e), EF_ERR);
    assert_int_equal(e.kind, EF_E_USAGE);
    assert_contains(e.msg, "planned on 2 nodes");
}

static void test_metrics(void **state)
{
    fx *f = *state;
    int st;
    json_decref(submit(f, &f->alice, jobtext("m1", 1000, T0 + 7200), T0, &st));
    json_decref(submit(f, &f->alice, jobtext("m1", 1000, T0 + 7200), T0, &st));
    svc_observe_submit(f->s, 0.004);
    svc_reply r;
    svc_metrics(f->s, &r);
    assert_int_equal(r.status, 200);
    assert_contains(r.body, "efplan_submissions_total{decision=\"admitted\"} "
                            "1\n");
    assert_contains(r.body, "efplan_submission_retries_total 1\n");
    assert_contains(r.body, "efplan_jobs{state=\"queued\"} 1\n");
    assert_contains(r.body, "efplan_submit_latency_seconds_bucket{le="
                            "\"0.005\"} 1\n");
    assert_contains(r.body, "efplan_submit_latency_seconds_count 1\n");
    assert_not_contains(r.body, "quantile");
    assert_contains(r.body, "efplan_promised_gpu_seconds ");
    assert_contains(r.body, "# TYPE efplan_replan_seconds histogram\n");
    assert_contains(r.body, "# TYPE efplan_point_seconds histogram\n");
    svc_reply_free(&r);
    /* a new plan keeps the record */
    json_decref(submit(f, &f->alice, jobtext("m2", 1000, T0 + 7200), T0, &st));
    svc_metrics(f->s, &r);
    assert_contains(r.body, "efplan_submissions_total{decision=\"admitted\"} "
                            "2\n");
    assert_contains(r.body, "efplan_submit_latency_seconds_sum 0.004000\n");
    svc_reply_free(&r);
    svc_health(f->s, T0 + 7, &r);
    assert_contains(r.body, "\"status\":\"ok\"");
    assert_contains(r.body, "\"time\":1800000007");
    assert_contains(r.body, "\"epoch\":1800000000");
    assert_contains(r.body, "\"version\":\"");
    svc_reply_free(&r);
}

/* The job view of 'id' (operator), parsed. */
static json_t *view(fx *f, const char *id, int64_t now)
{
    svc_reply r;
    svc_show(f->s, &f->op, id, now, &r);
    assert_int_equal(r.status, 200);
    json_t *v = json_loads(r.body, 0, NULL);
    svc_reply_free(&r);
    assert_non_null(v);
    return v;
}

/* The re-plan from reality (svc_loop_replan): real progress moves the
 * plan's now and each job's iterations_done; a job far behind (slow:
 * speed 0.1) becomes at risk, with an event and a reason naming its
 * earliest finish, and is never rejected; a done job leaves the plan (its
 * state done, an event); a drained node leaves the cluster: the plan has
 * a node_map, nothing is placed there, a job running there loses its
 * placement (it must move: SVC_NEED_MOVE); a job running elsewhere keeps
 * its GPUs; each job's need is its reservation now (none for a
 * best-effort job or one at risk); the state is kept across a reopen. */
static void noted(void *arg, const char *why)
{
    assert_non_null(why);
    (*(int *)arg)++;
}

/* The re-plan from reality plans with the planning lock let go: a
 * submission that comes meanwhile is answered, and the re-plan keeps its
 * plan, the new job joining the planning state as it was decided (the
 * state's version one past the stored plan's, so readers plan it afresh
 * with the job in it); a drain meanwhile (another kind of change) makes
 * it plan again holding the lock; a re-plan during which nothing comes
 * plans once. */
typedef struct apart_fx {
    fx *f;
    int calls, st;
} apart_fx;

static void apart_submit(void *arg)
{
    apart_fx *a = arg;
    if (a->calls++ == 0)
        json_decref(submit(a->f, &a->f->alice, jobtext("d", 2000, T0 + 9000),
                           T0 + 600, &a->st));
}

static void apart_drain(void *arg)
{
    apart_fx *a = arg;
    if (a->calls++ == 0) {
        svc_reply r;
        svc_node_drain(a->f->s, &a->f->op, "1", 1, NULL, 0, T0 + 720, &r);
        a->st = r.status;
        svc_reply_free(&r);
    }
}

/* svc_loop_replan of obs[0..n-1] at 'at' as the loop makes it (under the
 * lock), with hook fn(arg) while it plans apart; its result. */
static svc_loop_res replan_with(fx *f, void (*fn)(void *), void *arg,
                                const svc_obs *obs, int n, int64_t at)
{
    placement want[4];
    svc_loop_res res;
    ef_err e = {0};
    assert_true(n <= 4);
    svc_set_apart_hook(f->s, fn, arg);
    svc_lock(f->s);
    assert_ok(svc_loop_replan(f->s, obs, n, at, "test", want, NULL, &res,
                              &e), e);
    svc_unlock(f->s);
    svc_set_apart_hook(f->s, NULL, NULL);
    for (int k = 0; k < n; k++)
        placement_free(&want[k]);
    return res;
}

static void test_replan_apart(void **state)
{
    fx *f = *state;
    int st;
    svc_set_notify(f->s, noted, &(int){0});
    json_decref(submit(f, &f->alice, jobtext("a", 20000, T0 + 7200), T0, &st));
    assert_int_equal(st, 201);
    int n0[8] = {0, 0, 0, 0, 0, 0, 0, 0}, g0[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    svc_obs obs[1] = {
        {"a", SVC_OBS_RUNNING, 1000, 20000, {8, n0, g0, 0}, NULL, 0, 1}};
    apart_fx a = {f, 0, 0};
    /* (a second job, done as the loop saw it: it leaves the state, and
     * the jobs that join it are the ones submitted meanwhile only) */
    json_decref(submit(f, &f->alice, jobtext("z", 100, T0 + 7200), T0, &st));
    assert_int_equal(st, 201);
    svc_obs obs2[2] = {
        obs[0], {"z", SVC_OBS_DONE, 100, 100, {0, NULL, NULL, 0}, NULL, 0, 1}};
    int64_t v0 = svc_version(f->s);
    svc_loop_res res = replan_with(f, apart_submit, &a, obs2, 2, T0 + 600);
    assert_int_equal(a.st, 201);   /* answered while the re-plan planned */
    assert_int_equal(a.calls, 1);
    assert_int_equal(res.version, v0 + 2); /* after the submission's */
    assert_int_equal(svc_version(f->s), v0 + 3); /* d joined the state */
    svc_reply hr;
    svc_health(f->s, T0 + 600, &hr);
    assert_contains(hr.body, "\"jobs\":2"); /* a and d; z is done */
    svc_reply_free(&hr);
    svc_reply r;
    svc_plan(f->s, &r, &(int64_t){0});
    assert_contains(r.body, "\"id\": \"d\"");
    svc_reply_free(&r);
    json_t *v = view(f, "d", T0 + 600);
    assert_string_equal(sget(v, "state"), "queued");
    json_decref(v);
    /* nothing comes: one planning, the next version */
    v0 = svc_version(f->s);
    res = replan_with(f, apart_submit, &a, obs, 1, T0 + 660);
    assert_int_equal(a.calls, 2);
    assert_int_equal(res.version, v0 + 1);
    /* a node drained meanwhile: planned again, holding the lock, on the
     * node left (the plan's node map) */
    apart_fx b = {f, 0, 0};
    (void)replan_with(f, apart_drain, &b, obs, 1, T0 + 720);
    assert_int_equal(b.st, 200);
    assert_int_equal(b.calls, 1);
    svc_plan(f->s, &r, &(int64_t){0});
    json_t *pv = json_loads(r.body, 0, NULL);
    svc_reply_free(&r);
    assert_int_equal(json_array_size(json_object_get(pv, "node_map")), 1);
    json_decref(pv);
}

static void test_loop_replan(void **state)
{
    fx *f = *state;
    int st, notes = 0;
    /* without a loop, a drain is refused */
    svc_reply r0;
    svc_node_drain(f->s, &f->op, "1", 1, NULL, 0, T0, &r0);
    assert_int_equal(r0.status, 409);
    assert_contains(r0.body, "--backend");
    svc_reply_free(&r0);
    svc_set_notify(f->s, noted, &notes);
    json_decref(submit(f, &f->alice, jobtext("a", 20000, T0 + 7200), T0, &st));
    assert_int_equal(st, 201);
    json_decref(submit(f, &f->alice, jobtext("b", 2000, T0 + 7200), T0, &st));
    assert_int_equal(st, 201);
    json_decref(submit(f, &f->alice, jobtext("c", 2000, -1), T0, &st));
    assert_int_equal(st, 201);
    /* a runs on node 0, b on node 1, c has not started */
    int n0[8] = {0, 0, 0, 0, 0, 0, 0, 0}, g0[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int n1[4] = {1, 1, 1, 1}, g1[4] = {0, 1, 2, 3};
    svc_obs obs[3] = {
        {"a", SVC_OBS_RUNNING, 1000, 20000, {8, n0, g0, 0}, NULL, 0, 1},
        {"b", SVC_OBS_RUNNING, 500, 2000, {4, n1, g1, 0}, NULL, 0, 1},
        {"c", SVC_OBS_WAITING, 0, 2000, {0, NULL, NULL, 0}, NULL, 0, 1},
    };
    placement want[3];
    int need[3];
    svc_loop_res res;
    ef_err e = {0};
    svc_lock(f->s);
    assert_ok(svc_loop_replan(f->s, obs, 3, T0 + 600, "test", want, need,
                              &res, &e), e);
    svc_unlock(f->s);
    assert_int_equal(res.at_risk, 0);
    assert_int_equal(res.next, T0 + 660);
    /* a keeps node 0 where its size is kept; what a promise needs of
     * a job is its reservation now, no more than it gets; c has none */
    assert_true(want[0].n > 0);
    for (int k = 0; k < 3; k++) /* (a's deadline is far: none now) */
        assert_true(need[k] >= 0 && need[k] <= want[k].n);
    assert_int_equal(need[2], 0);
    assert_int_equal(need[1] & SVC_NEED_MOVE, 0);
    for (int k = 0; k < 3; k++)
        placement_free(&want[k]);
    json_t *v = view(f, "a", T0 + 600);
    assert_int_equal(json_integer_value(json_object_get(v, "iterations_done")),
                     1000);
    assert_string_equal(sget(v, "state"), "running");
    json_decref(v);
    svc_reply r;
    svc_plan(f->s, &r, &(int64_t){0});
    json_t *pv = json_loads(r.body, 0, NULL);
    svc_reply_free(&r);
    assert_int_equal(json_integer_value(json_object_get(pv, "now")), T0 + 600);
    assert_null(json_object_get(pv, "node_map"));
    json_decref(pv);

    /* a turns out very slow, b is done, node 1 is drained */
    svc_node_drain(f->s, &f->alice, "1", 1, NULL, 0, T0 + 1200, &r);
    assert_int_equal(r.status, 403);
    svc_reply_free(&r);
    svc_node_drain(f->s, &f->op, "7", 1, NULL, 0, T0 + 1200, &r);
    assert_int_equal(r.status, 404);
    svc_reply_free(&r);
    /* by name, with a reason: a bad body is 400, an unknown name 404
     * naming the cluster's names */
    char *names[2] = {"gpu01", "gpu02"};
    svc_set_node_names(f->s, names, 2);
    const char *bad = "{\"reason\": 3}";
    svc_node_drain(f->s, &f->op, "gpu02", 1, bad, strlen(bad), T0 + 1200, &r);
    assert_int_equal(r.status, 400);
    assert_contains(r.body, "reason: expected a string");
    svc_reply_free(&r);
    const char *why = "{\"reason\": \"DIMM errors\"}";
    svc_node_drain(f->s, &f->op, "gpu09", 1, why, strlen(why), T0 + 1200, &r);
    assert_int_equal(r.status, 404);
    assert_contains(r.body, "named gpu01 to gpu02");
    svc_reply_free(&r);
    svc_node_drain(f->s, &f->op, "gpu02", 1, why, strlen(why), T0 + 1200, &r);
    assert_int_equal(r.status, 200);
    assert_contains(r.body, "\"name\":\"gpu02\",\"node\":1");
    svc_reply_free(&r);
    svc_nodes(f->s, &r);
    assert_contains(r.body, "\"why\":\"drained by ops: DIMM errors\"");
    assert_contains(r.body, "\"name\":\"gpu01\"");
    svc_reply_free(&r);
    assert_true(notes >= 1); /* the loop is told */
    svc_node_drain(f->s, &f->op, "0", 1, NULL, 0, T0 + 1200, &r);
    assert_int_equal(r.status, 409); /* the last usable node */
    svc_reply_free(&r);
    obs[0].progress = 1200;
    obs[0].speed = 0.05;
    /* b still runs on the drained node: it must move; a, at risk, has
     * no promise that outranks another's GPUs */
    svc_lock(f->s);
    assert_ok(svc_loop_replan(f->s, obs, 3, T0 + 1200, "test", want, need,
                              &res, &e), e);
    svc_unlock(f->s);
    assert_int_equal(res.at_risk, 1);
    assert_int_equal(res.newly_at_risk, 1);
    assert_int_equal(need[0], 0);
    assert_true(need[1] & SVC_NEED_MOVE);
    for (int k = 0; k < 3; k++)
        placement_free(&want[k]);
    obs[1].state = SVC_OBS_DONE;
    obs[1].progress = 2000;
    svc_lock(f->s);
    assert_ok(svc_loop_replan(f->s, obs, 3, T0 + 1200, "test", want, NULL,
                              &res, &e), e);
    svc_unlock(f->s);
    assert_int_equal(res.at_risk, 1);
    assert_int_equal(res.newly_at_risk, 0);
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < want[k].n; i++)
            assert_int_equal(want[k].node[i], 0);
        placement_free(&want[k]);
    }
    v = view(f, "a", T0 + 1200);
    assert_true(json_is_true(json_object_get(v, "at_risk")));
    assert_string_equal(sget(v, "decision"), "admitted");
    assert_contains(sget(v, "risk"), "earliest finish");
    int risk_events = 0;
    size_t i;
    json_t *h;
    json_array_foreach(json_object_get(v, "history"), i, h)
        risk_events += strcmp(sget(h, "kind"), "at_risk") == 0;
    assert_int_equal(risk_events, 1);
    json_decref(v);
    v = view(f, "b", T0 + 1200);
    assert_string_equal(sget(v, "state"), "done");
    json_decref(v);
    svc_plan(f->s, &r, &(int64_t){0});
    pv = json_loads(r.body, 0, NULL);
    svc_reply_free(&r);
    json_t *nm = json_object_get(pv, "node_map");
    assert_int_equal(json_array_size(nm), 1);
    assert_int_equal(json_integer_value(json_array_get(nm, 0)), 0);
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(pv, "cluster"), "nodes")), 1);
    json_decref(pv);

    /* reopened: the same plan and map; a is back on time when fast */
    svc_close(f->s);
    open_svc(f, T0 + 1300);
    obs[0].speed = 1;
    obs[0].progress = 19000;
    svc_lock(f->s);
    assert_ok(svc_loop_replan(f->s, obs, 3, T0 + 1300, "test", want, NULL,
                              &res, &e), e);
    svc_unlock(f->s);
    assert_int_equal(res.at_risk, 0);
    for (int k = 0; k < 3; k++)
        placement_free(&want[k]);
    v = view(f, "a", T0 + 1300);
    assert_false(json_is_true(json_object_get(v, "at_risk")));
    assert_true(json_is_null(json_object_get(v, "risk")));
    json_decref(v);
    svc_nodes(f->s, &r);
    assert_int_equal(r.status, 200);
    assert_contains(r.body, "drained by ops");
    svc_reply_free(&r);
}

/* A model the loop has measured running at half its curve's speed: a new
 * job of it is planned at that speed (its earliest deadline about twice as
 * far) and its answer says so; before any measurement, the curve's. */
static void test_learned_speed(void **state)
{
    fx *f = *state;
    int st;
    json_t *a = submit(f, &f->alice, jobtext("x1", 200000, T0 + 60), T0, &st);
    assert_int_equal(st, 201);
    assert_string_equal(sget(a, "decision"), "rejected");
    assert_null(json_object_get(a, "speed_note"));
    json_int_t e1 = json_integer_value(json_object_get(
        a, "earliest_feasible_deadline"));
    json_decref(a);
    ef_err e = {0};
    svc_lock(f->s);
    for (int k = 0; k < 3; k++)
        assert_ok(store_learn(svc_store(f->s), "resnet50", "bob", 0, 0.5, &e),
                  e);
    svc_unlock(f->s);
    a = submit(f, &f->alice, jobtext("x2", 200000, T0 + 60), T0, &st);
    assert_int_equal(st, 201);
    assert_string_equal(sget(a, "decision"), "rejected");
    assert_string_equal(sget(a, "speed_note"), "planned at 50% of the "
                        "curve: measured on 3 earlier runs of resnet50");
    json_int_t e2 = json_integer_value(json_object_get(
        a, "earliest_feasible_deadline"));
    json_decref(a);
    assert_true(e1 > T0 && e2 - T0 > (e1 - T0) * 3 / 2);
    /* --learn off: what was measured is kept, not planned with */
    svc_close(f->s);
    svc_config c = {.db = f->db, .cluster = "n2g8", .curves = "A100",
                    .slot = 60, .overhead = OVH_FIG12, .learn_off = 1};
    assert_ok(svc_open(&f->s, &c, T0, &e), e);
    a = submit(f, &f->alice, jobtext("x3", 200000, T0 + 60), T0, &st);
    assert_int_equal(st, 201);
    assert_null(json_object_get(a, "speed_note"));
    assert_int_equal(json_integer_value(json_object_get(
                         a, "earliest_feasible_deadline")), e1);
    json_decref(a);
    store_learnt lr;
    assert_ok(store_learned(svc_store(f->s), "resnet50", "alice", &lr, &e),
              e);
    assert_int_equal(lr.speed_runs, 3);
}

/* Attempts the loop still runs count for a new job of their model as
 * runs measured so far (svc_note_speed): one measured at half its curve's
 * speed plans the next submission at half, the answer saying how many
 * are still running; with the store's ended runs folded in by the same
 * smoothing; forgotten when it ends; the user's own runs first once they
 * are enough. */
static void test_running_speed(void **state)
{
    fx *f = *state;
    int st;
    svc_lock(f->s);
    svc_note_speed(f->s, "r1", "resnet50", "bob", 0.5);
    svc_unlock(f->s);
    json_t *a = submit(f, &f->alice, jobtext("x1", 200000, T0 + 60), T0, &st);
    assert_int_equal(st, 201);
    assert_string_equal(sget(a, "speed_note"), "planned at 50% of the "
                        "curve: measured on 1 earlier run of resnet50 (1 of "
                        "them still running)");
    json_decref(a);
    /* an ended run at 0.9 first, then the running one: 0.9 + 0.3 x -0.4 */
    ef_err e = {0};
    svc_lock(f->s);
    assert_ok(store_learn(svc_store(f->s), "resnet50", "carol", 0, 0.9, &e),
              e);
    svc_unlock(f->s);
    a = submit(f, &f->alice, jobtext("x2", 200000, T0 + 60), T0, &st);
    assert_true(fabs(json_real_value(json_object_get(a, "planned_speed")) -
                     0.78) < 1e-9);
    assert_non_null(strstr(sget(a, "speed_note"), "on 2 earlier runs"));
    json_decref(a);
    /* alice's own two running attempts at 0.6 and 0.8 win over the model's
     * three runs (ids in order: 0.6, then 0.6 + 0.3 x 0.2) */
    svc_lock(f->s);
    svc_note_speed(f->s, "a2", "resnet50", "alice", 0.8);
    svc_note_speed(f->s, "a1", "resnet50", "alice", 0.7);
    svc_note_speed(f->s, "a1", "resnet50", "alice", 0.6); /* updated */
    svc_unlock(f->s);
    a = submit(f, &f->alice, jobtext("x3", 200000, T0 + 60), T0, &st);
    assert_true(fabs(json_real_value(json_object_get(a, "planned_speed")) -
                     0.66) < 1e-9);
    assert_non_null(strstr(sget(a, "speed_note"), "by this user (2 of them "
                                                  "still running)"));
    json_decref(a);
    /* ended: forgotten (the loop learns them into the store then) */
    svc_lock(f->s);
    svc_note_speed(f->s, "a1", "resnet50", "alice", 0);
    svc_note_speed(f->s, "a2", "resnet50", "alice", 0);
    svc_note_speed(f->s, "r1", "resnet50", "bob", 0);
    svc_note_speed(f->s, "r1", "resnet50", "bob", 0); /* twice: no-op */
    svc_unlock(f->s);
    a = submit(f, &f->alice, jobtext("x4", 200000, T0 + 60), T0, &st);
    assert_string_equal(sget(a, "speed_note"), "planned at 90% of the "
                        "curve: measured on 1 earlier run of resnet50");
    json_decref(a);
}

/* serve --moves any: a new store's plan keeps the paper's rule, and so
 * does the store once reopened without it. */
static void test_moves_any(void **state)
{
    fx *f = *state;
    svc_close(f->s);
    f->s = NULL;
    char db[600];
    tu_join(db, sizeof db, f->dir, "any.db");
    svc_config c = {.db = db, .cluster = "n2g8", .curves = "A100",
                    .slot = 60, .overhead = OVH_FIG12, .moves = MOVES_ANY};
    ef_err e = {0};
    for (int k = 0; k < 2; k++) {
        assert_ok(svc_open(&f->s, &c, T0, &e), e);
        svc_reply r;
        int64_t v;
        svc_plan(f->s, &r, &v);
        assert_int_equal(r.status, 200);
        assert_contains(r.body, "\"moves\": \"any\"");
        svc_reply_free(&r);
        svc_close(f->s);
        c.moves = MOVES_NET; /* a store keeps its plan's */
    }
    open_svc(f, T0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_submit_retry_conflict, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_owners, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reject_then_earliest, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_promise_and_reopen, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_explain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replan_apart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loop_replan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_learned_speed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_running_speed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_moves_any, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
