/* test_submit.c: one new job against a plan file (planner/submit.h), and
 * the plan file's locks (planner/planlock.h). */
#define _GNU_SOURCE 1 /* symlink */
#include "testutil.h"

#include <unistd.h>

#include "planner/planio.h"
#include "planner/planlock.h"
#include "planner/submit.h"
#include "testplanio.h"

static const char *Q_CHANGE =
    "{\"jobs\": ["
    "{\"id\": \"c\", \"model\": \"resnet50\", \"batch_size\": 128, "
    "\"iterations\": 60000, \"submit_time\": 600, \"deadline\": 6000},"
    "{\"id\": \"s\", \"model\": \"bert\", \"batch_size\": 64, "
    "\"iterations\": 2000, \"submit_time\": 0, \"deadline\": 20000}]}";

static const char *Q_EB; /* below */

/* The plan files the tests submit into (plan_submit writes nothing):
 * Q_CHANGE planned, and Q_EB planned with elastic batch, in one scratch
 * directory for the group. */
static char g_dir[256], g_plan[512], g_plan_eb[512];

static int make_plan(const char *queue, int elastic, const char *name,
                     char *path, size_t len)
{
    tp_planned t;
    ef_err e = {0};
    tp_opts(&t);
    t.o.elastic_batch = elastic;
    if (tp_plan(&t, queue, 1, &e) != EF_OK)
        return -1;
    tu_join(path, len, g_dir, name);
    int rc = plan_write_json(&t.p, path, "q.json", "A100", 0, &e);
    tp_planned_free(&t);
    return rc == EF_OK ? 0 : -1;
}

static int setup(void **state)
{
    if (tp_setup(state) != 0)
        return -1;
    tu_tmpdir(g_dir, sizeof g_dir);
    char jf[512];
    tu_write(g_dir, "q.json", Q_CHANGE, jf, sizeof jf);
    return make_plan(Q_CHANGE, 0, "plan.json", g_plan, sizeof g_plan) ||
           make_plan(Q_EB, 1, "plan-eb.json", g_plan_eb, sizeof g_plan_eb);
}

static int teardown(void **state)
{
    tu_rmtree(g_dir);
    return tp_teardown(state);
}

#define Y(deadline)                                                         \
    "{\"id\": \"y\", \"model\": \"resnet50\", \"batch_size\": 128, "        \
    "\"iterations\": 60000, \"submit_time\": 0, \"deadline\": " deadline "}"

/* A job submitted later than the new one but admitted by the plan keeps
 * its promise: the new job is rejected, naming it (it used to be
 * admitted and c listed as admitted -> rejected). */
static void test_keeps_promise(void **state)
{
    (void)state;
    const char *path = g_plan;
    plan_submit_res r;
    ef_err e = {0};
    assert_ok(plan_submit(path, Y("5000"), NULL, NULL, &r, &e), e);
    assert_int_equal(r.decision, PLAN_REJECTED);
    assert_non_null(r.broken);
    assert_string_equal(r.broken, "c");
    assert_true(r.earliest > 5000);
    assert_string_equal(r.p.jobs[r.p.njobs - 1].in->id, "y");
    assert_string_equal(r.jobs_file, "q.json");
    assert_string_equal(r.curves, "A100");
    plan_submit_free(&r);
    /* best-effort: no deadline, no change, submitted at the plan's now */
    assert_ok(plan_submit(path, "{\"id\": \"z\", \"model\": \"bert\", "
                          "\"batch_size\": 64, \"iterations\": 10}", NULL,
                          NULL, &r, &e), e);
    assert_int_equal(r.decision, PLAN_BEST_EFFORT);
    assert_int_equal(r.nchanges, 0);
    assert_true(r.p.jobs[r.p.njobs - 1].in->submit == r.doc.now);
    plan_submit_free(&r);
}

/* Rejected with the earliest deadline that is admitted: that deadline
 * is, the second before it is not. */
static void test_reject_earliest(void **state)
{
    (void)state;
    const char *path = g_plan;
    char text[512];
    plan_submit_res r;
    ef_err e = {0};
    assert_ok(plan_submit(path, Y("3000"), NULL, NULL, &r, &e), e);
    assert_int_equal(r.decision, PLAN_REJECTED);
    assert_contains(r.reason, "deadline too tight");
    int64_t best = r.earliest;
    assert_true(best > 3000);
    /* the job as submitted: its deadline is back after the search */
    assert_true(r.p.jobs[r.p.njobs - 1].in->deadline == 3000);
    plan_submit_free(&r);
    snprintf(text, sizeof text, Y("%lld"), (long long)best);
    assert_ok(plan_submit(path, text, NULL, NULL, &r, &e), e);
    assert_int_equal(r.decision, PLAN_ADMITTED);
    plan_submit_free(&r);
    snprintf(text, sizeof text, Y("%lld"), (long long)best - 1);
    assert_ok(plan_submit(path, text, NULL, NULL, &r, &e), e);
    assert_int_equal(r.decision, PLAN_REJECTED);
    plan_submit_free(&r);
}

static const char *Q_EB =
    "{\"jobs\": ["
    "{\"id\": \"a\", \"model\": \"resnet50\", \"batch_sizes\": [64, 128, "
    "256], \"samples\": 3200000, \"submit_time\": 0, \"deadline\": 4000},"
    "{\"id\": \"b\", \"model\": \"bert\", \"batch_sizes\": [64, 128], "
    "\"samples\": 1000000, \"samples_done\": 4000, \"submit_time\": 0, "
    "\"deadline\": 6000},"
    "{\"id\": \"c\", \"model\": \"resnet50\", \"batch_size\": 128, "
    "\"iterations\": 8000, \"iterations_done\": 100, \"submit_time\": 300, "
    "\"deadline\": 9000},"
    "{\"id\": \"d\", \"model\": \"vgg16\", \"batch_sizes\": [64, 128], "
    "\"batch_size\": 128, \"iterations\": 20000, \"submit_time\": 600, "
    "\"deadline\": null}]}";

/* The defect of issue 14: a submit into an elastic-batch plan lost every
 * job's batch range and samples, so the old jobs were planned at their
 * fixed batch size (planned ends moved, promises broke). A job submitted
 * after the plan's end must leave every old job as it was. */
static void test_elastic_keeps_jobs(void **state)
{
    (void)state;
    const char *path = g_plan_eb;
    plan_doc before;
    ef_err e = {0};
    assert_ok(plan_doc_load(&before, path, &e), e);
    assert_true(before.elastic_batch);
    plan_submit_res r;
    assert_ok(plan_submit(path, "{\"id\": \"z\", \"model\": \"bert\", "
                          "\"batch_size\": 64, \"iterations\": 10, "
                          "\"submit_time\": 90000}", NULL, NULL, &r, &e),
              e);
    assert_int_equal(r.decision, PLAN_BEST_EFFORT);
    assert_int_equal(r.nchanges, 0);
    assert_true(r.po.elastic_batch);
    plan_doc after;
    plan_doc_from_plan(&after, &r.p, r.jobs_file, r.curves);
    assert_int_equal(after.njobs, before.njobs + 1);
    int elastic = 0;
    for (int i = 0; i < before.njobs; i++) {
        const plan_doc_job *x = &before.jobs[i], *y = &after.jobs[i];
        assert_string_equal(x->id, y->id);
        assert_int_equal(x->eb, y->eb);
        assert_int_equal(x->nbatch, y->nbatch);
        for (int k = 0; k < x->nbatch; k++)
            assert_true(x->batch_sizes[k] == y->batch_sizes[k]);
        assert_true(x->planned_end == y->planned_end);
        assert_true(x->samples == y->samples);
        assert_true(x->samples_done == y->samples_done);
        assert_true(x->iterations == y->iterations &&
                    x->iterations_done == y->iterations_done);
        assert_true(x->gpu_seconds == y->gpu_seconds);
        assert_int_equal(x->decision, y->decision);
        elastic += x->eb;
    }
    assert_int_equal(elastic, 3);
    /* and the slots up to the old end are the old slots */
    for (int s = 0; s < before.nslots; s++) {
        assert_true(before.slots[s].start == after.slots[s].start);
        assert_int_equal(before.slots[s].nalloc, after.slots[s].nalloc);
        for (int a = 0; a < before.slots[s].nalloc; a++)
            assert_true(placement_equal(&before.slots[s].a[a].place,
                                         &after.slots[s].a[a].place));
    }
    plan_doc_free(&after);
    plan_doc_free(&before);
    plan_submit_free(&r);
}

/* A small deterministic generator (no wall time, no libc rand). */
static uint64_t g_rng;
static int64_t rnd(int64_t lo, int64_t hi)
{
    g_rng = g_rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (int64_t)((g_rng >> 33) % (uint64_t)(hi - lo + 1));
}

/* One random job object: a model and batch the A100 curves have, work
 * of minutes to hours, a deadline (or none, one in six) from tight to
 * loose. */
static void rnd_job(char *dst, size_t len, const char *id, int64_t submit)
{
    static const char *const models[] = {"resnet50", "bert", "vgg16"};
    static const int batch[] = {128, 64, 128};
    int m = (int)rnd(0, 2);
    int64_t iters = rnd(1000, 60000);
    char ddl[32];
    if (rnd(0, 5) == 0)
        snprintf(ddl, sizeof ddl, "null");
    else
        snprintf(ddl, sizeof ddl, "%lld",
                 (long long)(submit + rnd(300, 9000)));
    snprintf(dst, len, "{\"id\": \"%s\", \"model\": \"%s\", "
             "\"batch_size\": %d, \"iterations\": %lld, "
             "\"submit_time\": %lld, \"deadline\": %s}", id, models[m],
             batch[m], (long long)iters, (long long)submit, ddl);
}

/* Submit 'text' into 'path' and check the contract: no job the plan
 * admitted loses its admission when the answer is not a rejection.
 * Returns the decision. */
static plan_decision submit_checked(const char *path, const char *text,
                                    int64_t *earliest)
{
    plan_submit_res r;
    ef_err e = {0};
    assert_ok(plan_submit(path, text, NULL, NULL, &r, &e), e);
    plan_decision d = r.decision;
    if (d != PLAN_REJECTED)
        for (int i = 0; i < r.doc.njobs; i++)
            if (r.doc.jobs[i].decision == PLAN_ADMITTED)
                assert_int_equal(r.p.jobs[i].decision, PLAN_ADMITTED);
    if (earliest)
        *earliest = r.earliest;
    plan_submit_free(&r);
    return d;
}

/* Over 300 seeded random plans (3 to 8 jobs on 8 or 16 GPUs, arrivals
 * spread over an hour, a random slot, each overhead model) and two
 * random submissions each,
 * submitted at a random time from the plan's now on: no admitted job's
 * decision changes; a rejection's earliest deadline E is admitted and
 * E - 1 refused. Accepted answers are committed, then a second job is
 * submitted into the result: promises made by a submit are kept too. */
static void test_property(void **state)
{
    (void)state;
    char queue[4096], job_text[512], path[512], id[16];
    int rejected = 0, admitted = 0, with_earliest = 0;
    tu_join(path, sizeof path, g_dir, "prop.json");
    for (int c = 0; c < 300; c++) {
        g_rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t)c;
        int n = (int)rnd(3, 8);
        size_t off = (size_t)snprintf(queue, sizeof queue, "{\"jobs\": [");
        for (int i = 0; i < n; i++) {
            snprintf(id, sizeof id, "j%d", i);
            rnd_job(job_text, sizeof job_text, id, i == 0 ? 0 : rnd(0, 3600));
            off += (size_t)snprintf(queue + off, sizeof queue - off, "%s%s",
                                    i ? ", " : "", job_text);
        }
        snprintf(queue + off, sizeof queue - off, "]}");
        tp_planned t;
        ef_err e = {0};
        tp_opts(&t);
        t.o.slot = (int)rnd(1, 5) * 60;
        t.o.overhead = (ovh_mode)rnd(0, 3); /* every overhead model */
        assert_ok(tp_plan(&t, queue, rnd(1, 2), &e), e);
        assert_ok(plan_write_json(&t.p, path, "q.json", "A100", 0, &e), e);
        tp_planned_free(&t);
        for (int k = 0; k < 2; k++) {
            snprintf(id, sizeof id, "new%d", k);
            rnd_job(job_text, sizeof job_text, id, rnd(0, 3600));
            int64_t best = -1;
            plan_decision d = submit_checked(path, job_text, &best);
            if (d != PLAN_REJECTED) {
                admitted++;
                plan_submit_res r;
                assert_ok(plan_submit(path, job_text, NULL, NULL, &r, &e), e);
                assert_ok(plan_submit_commit(&r, path, &e), e);
                plan_submit_free(&r);
                continue;
            }
            rejected++;
            if (best < 0)
                continue;
            with_earliest++;
            /* the same job at E, and at E - 1 */
            char *dl = strstr(job_text, "\"deadline\": ");
            assert_non_null(dl);
            snprintf(dl, sizeof job_text - (size_t)(dl - job_text),
                     "\"deadline\": %lld}", (long long)best);
            assert_int_equal(submit_checked(path, job_text, NULL),
                             PLAN_ADMITTED);
            snprintf(dl, sizeof job_text - (size_t)(dl - job_text),
                     "\"deadline\": %lld}", (long long)best - 1);
            assert_int_equal(submit_checked(path, job_text, NULL),
                             PLAN_REJECTED);
        }
    }
    /* the generator reaches every branch */
    assert_true(admitted > 50 && rejected > 50 && with_earliest > 50);
}

/* Plan Q_CHANGE from 'now' and write it to g_dir/name (its path into
 * path[0..len-1]). */
static void write_plan_at(char *path, size_t len, const char *name,
                          int64_t now)
{
    ef_err e = {0};
    tp_planned t;
    tp_opts(&t);
    t.o.now = now;
    assert_ok(tp_plan(&t, Q_CHANGE, 1, &e), e);
    tu_join(path, len, g_dir, name);
    assert_ok(plan_write_json(&t.p, path, "q.json", "A100", 0, &e), e);
    tp_planned_free(&t);
}

static void test_errors(void **state)
{
    (void)state;
    const char *path = g_plan;
    char bad[512];
    plan_submit_res r;
    ef_err e = {0};
    assert_err(plan_submit(path, "{\"id\": ", NULL, NULL, &r, &e), e,
               "--job:1:", "JSON syntax");
    plan_submit_free(&r);
    assert_err(plan_submit(path, "[1]", NULL, NULL, &r, &e), e,
               "--job: expected an object", NULL);
    plan_submit_free(&r);
    assert_err(plan_submit(path, "{\"id\": \"x\", \"batch_size\": 64, "
                           "\"iterations\": 5}", NULL, NULL, &r, &e), e,
               "--job: jobs[0]: missing required key \"model\"", NULL);
    plan_submit_free(&r);
    /* the id rule (job_id_check): no DEL, no C1 control (CSI) */
    assert_err(plan_submit(path, "{\"id\": \"a\\u007fb\", \"model\": "
                           "\"bert\", \"batch_size\": 64, \"iterations\": 5}",
                           NULL, NULL, &r, &e), e,
               "--job: jobs[0].id: contains a control character (expected "
               "1 to 255 bytes of UTF-8 text without control characters)",
               NULL);
    plan_submit_free(&r);
    assert_err(plan_submit(path, "{\"id\": \"\\u009b31m\", \"model\": "
                           "\"bert\", \"batch_size\": 64, \"iterations\": 5}",
                           NULL, NULL, &r, &e), e,
               "--job: jobs[0].id: contains a control character", NULL);
    plan_submit_free(&r);
    /* a job id the plan has already: named against --job and the plan's
     * job (the plan file's name follows) */
    assert_err(plan_submit(path, "{\"id\": \"c\", \"model\": \"bert\", "
                           "\"batch_size\": 64, \"iterations\": 5}", NULL,
                           NULL, &r, &e), e,
               "--job: jobs[0].id: duplicate job id \"c\" (", path);
    plan_submit_free(&r);
    /* a submit_time in the plan's past (a plan whose now is 600) */
    char p600[512];
    write_plan_at(p600, sizeof p600, "now600.json", 600);
    assert_err(plan_submit(p600, "{\"id\": \"x\", \"model\": \"bert\", "
                           "\"batch_size\": 64, \"iterations\": 5, "
                           "\"submit_time\": 599}", NULL, NULL, &r, &e), e,
               "--job: jobs[0].submit_time: 599 is before the plan's now 600",
               NULL);
    plan_submit_free(&r);
    assert_ok(plan_submit(p600, "{\"id\": \"x\", \"model\": \"bert\", "
                          "\"batch_size\": 64, \"iterations\": 5}", NULL,
                          NULL, &r, &e), e);
    assert_true(r.p.jobs[r.p.njobs - 1].in->submit == 600);
    plan_submit_free(&r);
    /* not a plan file */
    tu_write(g_dir, "q.json", Q_CHANGE, bad, sizeof bad);
    assert_err(plan_submit(bad, Y("5000"), NULL, NULL, &r, &e), e, bad,
               "missing required key \"format\"");
    plan_submit_free(&r);
}

/* A plan file with a bad member is an input error naming the file and
 * the JSON path (a bad slot_seconds once exited 2 without the file; a
 * surplus not gain or reference once passed), and curves the plan names
 * that cannot be loaded say they come from the plan. */
static void test_bad_plan_members(void **state)
{
    (void)state;
    char *text;
    size_t len;
    ef_err e = {0};
    assert_ok(ef_read_file(g_plan, &text, &len, &e), e);
    static const struct {
        const char *from, *to, *want;
    } bad[] = {
        {"\"slot_seconds\": 60", "\"slot_seconds\": 0",
         "slot_seconds: 0 is out of range (expected 1..86400)"},
        {"\"slot_seconds\": 60", "\"slot_seconds\": -60",
         "slot_seconds: -60 is out of range"},
        {"\"slot_seconds\": 60", "\"slot_seconds\": 86401",
         "slot_seconds: 86401 is out of range"},
        {"\"slot_seconds\": 60", "\"slot_seconds\": 60.5",
         "slot_seconds: expected an integer, got 60.5"},
        {"\"slot_seconds\": 60", "\"slot_seconds\": \"60\"",
         "slot_seconds: expected an integer, got a string"},
        {"\"slot_seconds\": 60", "\"slot_seconds\": null",
         "slot_seconds: expected an integer, got null"},
        {"\"slot_seconds\": 60,", "",
         "missing required key \"slot_seconds\""},
        {"\"surplus\": \"gain\"", "\"surplus\": \"bogus\"",
         "surplus: \"bogus\" (expected one of \"gain\", \"reference\")"},
        {"\"curves\": \"A100\"", "\"curves\": \"no-such-curves\"",
         "curves: no-such-curves: not a directory of curves"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        const char *at = strstr(text, bad[k].from);
        assert_non_null(at);
        ef_buf b = {0};
        ef_buf_printf(&b, "%.*s%s%s", (int)(at - text), text, bad[k].to,
                      at + strlen(bad[k].from));
        char path[512], pre[600];
        tu_write(g_dir, "bad-member.json", b.s, path, sizeof path);
        free(b.s);
        snprintf(pre, sizeof pre, "%s: ", path);
        plan_submit_res r;
        assert_err(plan_submit(path, Y("90000"), NULL, NULL, &r, &e), e, pre,
                   bad[k].want);
        plan_submit_free(&r);
    }
    free(text);
}

/* The default submit_time is the plan's current time: its now; a later
 * --now (clk.now); for a plan in Unix time the wall clock (clk.wall)
 * when later and no --now; never before the plan's now. A submit_time
 * the job gives is kept. */
static void test_default_submit_time(void **state)
{
    (void)state;
    static const char *BE = "{\"id\": \"x\", \"model\": \"bert\", "
                            "\"batch_size\": 64, \"iterations\": 5}";
    static const char *BE_700 = "{\"id\": \"x\", \"model\": \"bert\", "
                                "\"batch_size\": 64, \"iterations\": 5, "
                                "\"submit_time\": 700}";
    const int64_t U = 1700000000; /* 2023-11-14T22:13:20Z */
    static const struct {
        int unix_plan;
        int64_t now, wall;
        int given;
        int64_t want;
        plan_submit_from from;
    } c[] = {
        /* a plan on its own clock (now 600): the wall clock is not its */
        {0, -1, -1, 0, 600, PLAN_SUBMIT_PLAN_NOW},
        {0, -1, 2000000000, 0, 600, PLAN_SUBMIT_PLAN_NOW},
        {0, 900, 2000000000, 0, 900, PLAN_SUBMIT_NOW},
        {0, 100, -1, 0, 600, PLAN_SUBMIT_PLAN_NOW},
        {0, 600, -1, 0, 600, PLAN_SUBMIT_PLAN_NOW},
        {0, 900, -1, 1, 700, PLAN_SUBMIT_GIVEN},
        /* a plan in Unix time (now U): the wall clock when later */
        {1, -1, -1, 0, U, PLAN_SUBMIT_PLAN_NOW},
        {1, -1, U + 500, 0, U + 500, PLAN_SUBMIT_WALL},
        {1, -1, U - 500, 0, U, PLAN_SUBMIT_PLAN_NOW},
        {1, -1, U, 0, U, PLAN_SUBMIT_PLAN_NOW},
        {1, U + 100, U + 500, 0, U + 100, PLAN_SUBMIT_NOW},
        {1, U - 100, U + 500, 0, U, PLAN_SUBMIT_PLAN_NOW},
    };
    char p600[512], pu[512];
    ef_err e = {0};
    write_plan_at(p600, sizeof p600, "default600.json", 600);
    write_plan_at(pu, sizeof pu, "default-unix.json", U);
    assert_false(plan_unix_time(600));
    assert_false(plan_unix_time(PLAN_UNIX_MIN - 1));
    assert_true(plan_unix_time(PLAN_UNIX_MIN));
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        plan_submit_res r;
        plan_submit_clock clk = {.now = c[k].now, .wall = c[k].wall};
        const char *path = c[k].unix_plan ? pu : p600;
        const char *text = c[k].given ? BE_700 : BE;
        assert_ok(plan_submit(path, text, NULL, &clk, &r, &e), e);
        const job *nj = r.p.jobs[r.p.njobs - 1].in;
        if (nj->submit != c[k].want || r.submit_time != c[k].want ||
            r.submit_from != c[k].from)
            fail_msg("case %zu: submit_time %lld (%lld, from %d), expected "
                     "%lld from %d", k, (long long)nj->submit,
                     (long long)r.submit_time, (int)r.submit_from,
                     (long long)c[k].want, (int)c[k].from);
        plan_submit_free(&r);
    }
    /* no clock at all: the plan's now */
    plan_submit_res r;
    assert_ok(plan_submit(pu, BE, NULL, NULL, &r, &e), e);
    assert_true(r.submit_time == U && r.submit_from == PLAN_SUBMIT_PLAN_NOW);
    plan_submit_free(&r);
}

/* The plan's mutex and apply's claim: a claim names its state directory
 * to whoever asks (through any path to the plan), a second claim is
 * refused naming the first, and the name stays when the claim ends. */
static void test_plan_locks(void **state)
{
    (void)state;
    char dir[256], pf[512], lnk[512], other[512], got[4096];
    ef_err e = {0};
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "p.json", "{}", pf, sizeof pf);
    tu_join(lnk, sizeof lnk, dir, "link.json");
    assert_int_equal(symlink(pf, lnk), 0);
    int live = -1;
    /* never applied */
    assert_ok(plan_apply_holder(pf, got, sizeof got, &live, &e), e);
    assert_true(live == 0 && got[0] == '\0');
    int denied = -1;
    int mx = plan_lock(lnk, &denied, &e);
    assert_true(mx >= 0);
    assert_int_equal(denied, 0);
    char lk[600];
    tu_join(lk, sizeof lk, dir, "p.json.lock"); /* the real path's */
    assert_int_equal(access(lk, F_OK), 0);
    tu_join(lk, sizeof lk, dir, "link.json.lock");
    assert_int_equal(access(lk, F_OK), -1);
    int claim = plan_apply_claim(pf, "/srv/p.state", &e);
    assert_true(claim >= 0);
    plan_unlock(mx);
    assert_ok(plan_apply_holder(lnk, got, sizeof got, &live, &e), e);
    assert_int_equal(live, 1);
    assert_string_equal(got, "/srv/p.state");
    /* a second apply of the plan */
    mx = plan_lock(pf, NULL, &e);
    assert_true(mx >= 0);
    assert_int_equal(plan_apply_claim(lnk, "/srv/other", &e), -1);
    assert_int_equal(e.kind, EF_E_INPUT);
    assert_contains(e.msg, "another efplan apply is applying this plan "
                           "(state directory /srv/p.state)");
    plan_unlock(mx);
    /* the claim ends: free, the last state directory still named; the
     * next claim replaces it */
    plan_unlock(claim);
    assert_ok(plan_apply_holder(pf, got, sizeof got, &live, &e), e);
    assert_int_equal(live, 0);
    assert_string_equal(got, "/srv/p.state");
    claim = plan_apply_claim(pf, "/x", &e);
    assert_true(claim >= 0);
    plan_unlock(claim);
    assert_ok(plan_apply_holder(pf, got, sizeof got, &live, &e), e);
    assert_string_equal(got, "/x");
    /* a directory this user cannot write: denied (unless root) */
    tu_join(other, sizeof other, dir, "ro");
    assert_int_equal(mkdir(other, 0555), 0);
    tu_join(lk, sizeof lk, other, "q.json");
    if (geteuid() != 0) {
        assert_int_equal(plan_lock(lk, &denied, &e), -1);
        assert_int_equal(denied, 1);
        assert_int_equal(e.kind, EF_E_INTERNAL);
    }
    chmod(other, 0755);
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keeps_promise),
        cmocka_unit_test(test_reject_earliest),
        cmocka_unit_test(test_elastic_keeps_jobs),
        cmocka_unit_test(test_property),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_bad_plan_members),
        cmocka_unit_test(test_default_submit_time),
        cmocka_unit_test(test_plan_locks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
