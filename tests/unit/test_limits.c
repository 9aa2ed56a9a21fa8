/* test_limits.c: efplan serve's per-user limits (service/limits.h) and
 * retention (service/retain.h): the limits' words and precedence, the
 * queued and rate checks with their 429 bodies and Retry-After on the
 * service's clock, the retention periods' words, and one retention step
 * over a store (ended jobs older than the period, the plan history and
 * the snapshot files). */
#include "testutil.h"

#include <jansson.h>

#include "model/overhead.h"
#include "service/limits.h"
#include "service/retain.h"
#include "service/store.h"
#include "service/svc.h"
#include "service/token.h"

#define T0 1800000000LL

static char dir[256];

static int setup(void **state)
{
    (void)state;
    tu_tmpdir(dir, sizeof dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmtree(dir);
    return 0;
}

static void test_words(void **state)
{
    (void)state;
    int64_t v;
    assert_int_equal(lim_parse("12", 0, &v), 0);
    assert_int_equal(v, 12);
    assert_int_equal(lim_parse("30/min", 1, &v), 0);
    assert_int_equal(v, 30);
    assert_int_equal(lim_parse("30/min", 0, &v), -1); /* not a rate */
    assert_int_equal(lim_parse("none", 0, &v), 0);
    assert_int_equal(v, STORE_LIMIT_NONE);
    assert_int_equal(lim_parse("default", 1, &v), 0);
    assert_int_equal(v, STORE_LIMIT_SERVICE);
    const char *bad[] = {"", "0", "-3", "1e3", "5/h", "/min", "x",
                         "1000000001"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        assert_int_equal(lim_parse(bad[k], 1, &v), -1);
    char t[32];
    assert_string_equal(lim_text(STORE_LIMIT_SERVICE, 0, t, sizeof t), "-");
    assert_string_equal(lim_text(STORE_LIMIT_NONE, 1, t, sizeof t), "none");
    assert_string_equal(lim_text(9, 1, t, sizeof t), "9/min");
    assert_string_equal(lim_text(9, 0, t, sizeof t), "9");
    /* retention periods */
    int64_t s;
    assert_int_equal(ret_keep_parse("30d", &s), 0);
    assert_int_equal(s, 30 * 86400);
    assert_int_equal(ret_keep_parse("1d12h", &s), 0);
    assert_int_equal(s, 36 * 3600);
    assert_int_equal(ret_keep_parse("90m", &s), 0);
    assert_int_equal(s, 5400);
    assert_int_equal(ret_keep_parse("2w", &s), 0);
    assert_int_equal(s, 14 * 86400);
    assert_int_equal(ret_keep_parse("3600", &s), 0);
    assert_int_equal(s, 3600);
    assert_int_equal(ret_keep_parse("forever", &s), 0);
    assert_int_equal(s, 0);
    assert_int_equal(ret_keep_parse("0", &s), 0);
    assert_int_equal(s, 0);
    const char *kb[] = {"", "3x", "-1d", "+1d", "d", "now", "1000000w"};
    for (size_t k = 0; k < sizeof kb / sizeof *kb; k++)
        assert_int_equal(ret_keep_parse(kb[k], &s), -1);
    assert_string_equal(ret_keep_text(30 * 86400, t, sizeof t), "30d");
    assert_string_equal(ret_keep_text(7200, t, sizeof t), "2h");
    assert_string_equal(ret_keep_text(600, t, sizeof t), "10m");
    assert_string_equal(ret_keep_text(61, t, sizeof t), "61s");
    assert_string_equal(ret_keep_text(0, t, sizeof t), "forever");
}

/* The 429 body of r: its error object's members checked. */
static void check_429(const svc_reply *r, const char *limit, int64_t value,
                      int retry, const char *says)
{
    assert_int_equal(r->status, 429);
    assert_int_equal(r->retry_after, retry);
    json_error_t je;
    json_t *v = json_loads(r->body, 0, &je);
    assert_non_null(v);
    json_t *er = json_object_get(v, "error");
    assert_string_equal(json_string_value(json_object_get(er, "limit")),
                        limit);
    assert_int_equal(json_integer_value(json_object_get(er, "value")), value);
    assert_int_equal(json_integer_value(json_object_get(er, "retry_after")),
                     retry);
    assert_int_equal(json_integer_value(json_object_get(er, "status")), 429);
    assert_contains(json_string_value(json_object_get(er, "message")), says);
    json_decref(v);
    assert_keys_sorted(r->body);
}

static store_job mkjob(const char *id, const char *owner, const char *state,
                       int64_t t)
{
    store_job j = {
        .id = (char *)id, .owner = (char *)owner,
        .body = (char *)"{}", .request = (char *)"{}",
        .decision = (char *)"admitted", .answer = (char *)"{}",
        .state = (char *)state, .submitted = t, .updated = t, .seq = -1};
    return j;
}

/* The service's limits and a token's: which applies, the queued count
 * from the store, the rate over the last minute of the service's clock,
 * Retry-After in wall seconds at the clock's scale. */
static void test_check(void **state)
{
    (void)state;
    char path[512];
    tu_join(path, sizeof path, dir, "l.db");
    store *st;
    ef_err e = {0};
    assert_ok(store_open(&st, path, &e), e);
    lim *L = lim_new(2, 3);
    store_ident al = {.id = "a", .name = "alice"};
    store_ident bo = {.id = "b", .name = "bob", .max_queued = 5,
                      .max_rate = STORE_LIMIT_NONE};
    int64_t q, r;
    int own;
    lim_of(L, &al, &q, &r, &own);
    assert_true(q == 2 && r == 3 && own == 0);
    lim_of(L, &bo, &q, &r, &own);
    assert_true(q == 5 && r == 0 && own == 3);
    svc_reply rep = {0};
    assert_int_equal(lim_check(L, st, &al, T0, 1, 60, &rep), 0);
    /* queued: two of alice's live, one ended: at the limit */
    store_job j[4] = {mkjob("a1", "alice", "queued", T0),
                      mkjob("a2", "alice", "running", T0),
                      mkjob("a3", "alice", "done", T0),
                      mkjob("b1", "bob", "queued", T0)};
    for (int k = 0; k < 4; k++)
        assert_ok(store_job_insert(st, &j[k], &e), e);
    assert_int_equal(lim_check(L, st, &al, T0, 1, 60, &rep), 1);
    check_429(&rep, "max_queued", 2, 60, "user alice has 2 jobs queued or "
              "running: the limit is 2 (max_queued, the service's)");
    svc_reply_free(&rep);
    /* a clock ten times the wall's: a slot is 6 wall seconds */
    assert_int_equal(lim_check(L, st, &al, T0, 10, 60, &rep), 1);
    assert_int_equal(rep.retry_after, 6);
    svc_reply_free(&rep);
    /* bob's own: 5 queued, no rate */
    for (int k = 0; k < 10; k++)
        lim_note(L, "bob", T0 + k);
    assert_int_equal(lim_check(L, st, &bo, T0 + 10, 1, 60, &rep), 0);
    /* the rate: carol's three in the minute, the oldest at T0 + 5 */
    store_ident ca = {.id = "c", .name = "carol"};
    lim_note(L, "carol", T0 + 5);
    lim_note(L, "carol", T0 + 20);
    assert_int_equal(lim_check(L, st, &ca, T0 + 30, 1, 60, &rep), 0);
    lim_note(L, "carol", T0 + 30);
    assert_int_equal(lim_check(L, st, &ca, T0 + 40, 1, 60, &rep), 1);
    check_429(&rep, "max_submit_rate", 3, 25, "user carol made 3 "
              "submissions in the last minute: the limit is 3 a minute "
              "(max_submit_rate, the service's); retry in 25 s");
    svc_reply_free(&rep);
    /* at a scale of 100, 25 plan seconds are 1 wall second (at least 1) */
    assert_int_equal(lim_check(L, st, &ca, T0 + 40, 100, 60, &rep), 1);
    assert_int_equal(rep.retry_after, 1);
    svc_reply_free(&rep);
    /* the oldest leaves the minute at T0 + 65 */
    assert_int_equal(lim_check(L, st, &ca, T0 + 64, 1, 60, &rep), 1);
    svc_reply_free(&rep);
    assert_int_equal(lim_check(L, st, &ca, T0 + 65, 1, 60, &rep), 0);
    /* a token of carol's with its own rate, over the service's */
    store_ident c2 = {.id = "d", .name = "carol", .max_rate = 10};
    assert_int_equal(lim_check(L, st, &c2, T0 + 40, 1, 60, &rep), 0);
    c2.max_rate = 2;
    assert_int_equal(lim_check(L, st, &c2, T0 + 66, 1, 60, &rep), 1);
    assert_contains(rep.body, "this token's");
    svc_reply_free(&rep);
    lim_free(L);
    /* no limits: nothing refused */
    L = lim_new(0, 0);
    assert_int_equal(lim_check(L, st, &al, T0, 1, 60, &rep), 0);
    lim_free(L);
    store_close(st);
}

static int nfiles(const char *d)
{
    DIR *dp = opendir(d);
    if (!dp)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL)
        n += de->d_name[0] != '.';
    closedir(dp);
    return n;
}

static int lines;
static void count_say(void *arg, const char *line)
{
    (void)arg;
    assert_contains(line, "retention: pruned ");
    lines++;
}

/* One retention step over a service's store: the ended jobs older than
 * the period go, the rest stay; the plan history and the snapshot files
 * keep their newest N; a step with nothing to do says nothing. */
static void test_step(void **state)
{
    (void)state;
    char db[512], snap[600];
    tu_join(db, sizeof db, dir, "r.db");
    svc_config c = {.db = db, .cluster = "n2g8", .curves = "A100",
                    .slot = 60, .overhead = OVH_FIG12, .keep = 3600};
    svc *s;
    ef_err e = {0};
    assert_ok(svc_open(&s, &c, T0, &e), e);
    store *st = svc_store(s);
    char id[16];
    for (int k = 0; k < 450; k++) {
        snprintf(id, sizeof id, "old%d", k);
        store_job j = mkjob(id, "alice", k % 2 ? "done" : "rejected",
                            T0 - 7200);
        assert_ok(store_job_insert(st, &j, &e), e);
        assert_ok(store_event_add(st, id, T0 - 7200, "submitted", NULL, &e),
                  e);
    }
    store_job recent = mkjob("new", "alice", "cancelled", T0 - 60);
    store_job live = mkjob("live", "alice", "queued", T0 - 7200);
    assert_ok(store_job_insert(st, &recent, &e), e);
    assert_ok(store_job_insert(st, &live, &e), e);
    snprintf(snap, sizeof snap, "%s", svc_snapdir(s));
    assert_int_equal(mkdir(snap, 0700), 0);
    for (int v = 1; v <= 12; v++) {
        char name[64];
        snprintf(name, sizeof name, "plan-20270101T0000%02dZ-v%d.json", v / 4,
                 v);
        tu_write(snap, name, "{}", NULL, 0);
    }
    char other[700];
    tu_write(snap, "notes.txt", "kept", other, sizeof other);
    int64_t ver0 = svc_version(s);
    for (int v = 1; v <= 5; v++)
        assert_ok(store_plan_put(st, ver0 + 100 + v, T0, "replan", 0, "{}",
                                 &e), e);
    ret_opts o = {.keep = 3600, .keep_plans = 3, .batch = 100,
                  .say = count_say};
    store_pruned p;
    lines = 0;
    assert_ok(ret_step(s, &o, T0, &p, &e), e);
    assert_int_equal(p.jobs, 450);
    assert_int_equal(p.events, 450);
    assert_int_equal(lines, 1);
    store_job g;
    assert_int_equal(store_job_get(st, "old7", &g, &e), 0);
    assert_int_equal(store_job_get(st, "new", &g, &e), 1);
    store_job_free(&g);
    assert_int_equal(store_job_get(st, "live", &g, &e), 1);
    store_job_free(&g);
    /* 12 snapshots, 3 kept, the newest; notes.txt stays */
    assert_int_equal(nfiles(snap), 4);
    char f[700];
    snprintf(f, sizeof f, "%s/plan-20270101T000003Z-v12.json", snap);
    assert_int_equal(access(f, F_OK), 0);
    snprintf(f, sizeof f, "%s/plan-20270101T000002Z-v11.json", snap);
    assert_int_equal(access(f, F_OK), 0);
    snprintf(f, sizeof f, "%s/plan-20270101T000002Z-v9.json", snap);
    assert_int_equal(access(f, F_OK), -1);
    assert_int_equal(access(other, F_OK), 0);
    /* nothing left: no line */
    assert_ok(ret_step(s, &o, T0, &p, &e), e);
    assert_int_equal(p.jobs + p.events + p.plans, 0);
    assert_int_equal(lines, 1);
    /* the 404 of a pruned job says it may have been pruned */
    svc_reply r;
    store_ident al = {.id = "a", .name = "alice"};
    svc_show(s, &al, "old7", T0, &r);
    assert_int_equal(r.status, 404);
    assert_contains(r.body, "unknown, or it ended more than 1h ago and was "
                    "pruned (efplan serve --keep 1h)");
    svc_reply_free(&r);
    /* later, the cancelled one is older than the period too */
    assert_ok(ret_step(s, &o, T0 + 3600, &p, &e), e);
    assert_int_equal(p.jobs, 1);
    svc_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words),
        cmocka_unit_test_setup_teardown(test_check, setup, teardown),
        cmocka_unit_test_setup_teardown(test_step, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
