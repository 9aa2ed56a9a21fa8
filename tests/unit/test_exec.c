/* test_exec.c: the executor's plan reader, slot diff, journal replay,
 * node table, rc files and the dry-run backend (executor/exec.h). */
#define _GNU_SOURCE 1 /* realpath, symlink, setenv */
#include "testutil.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "common/util.h"
#include "executor/exec.h"

/* A plan file's job entry: id, batch size, iterations done, planned end
 * (a number or null). */
#define JOB(id, batch, done, end)                                           \
    "{\"batch_size\": " #batch ", \"deadline\": 900, \"decision\": "        \
    "\"admitted\", \"earliest_feasible_deadline\": null, \"gpu_seconds\": " \
    "600, \"id\": \"" id "\", \"iterations\": 100, \"iterations_done\": "   \
    #done ", \"iterations_left\": 90, \"migrations\": 0, \"model\": "       \
    "\"bert\", \"planned_end\": " #end ", \"resizes\": 0, \"slack\": null, " \
    "\"start\": 0, \"submit_time\": 0}"
#define TOP_HEAD                                                            \
    "{\"cluster\": {\"gpus_per_node\": 8, \"nodes\": 1}, \"curves\": "      \
    "\"A100\", \"format\": \"efplan-plan\", "
#define TOP_TAIL                                                            \
    ", \"summary\": {\"admitted\": 3, \"best_effort\": 0, \"end\": 480, "   \
    "\"migrations\": 1, \"promised_gpu_hours\": 0.5, \"rejected\": 0, "     \
    "\"replan_fallbacks\": 0, \"resizes\": 2, \"scheduling_points\": 3, "   \
    "\"used_gpu_hours\": 0.6, \"utilisation\": 0.5}, \"surplus\": "         \
    "\"gain\", \"version\": 1}"

/* A 1-node, 8-GPU plan: a on 0-3 then 4-5 then 0-1 (resize, migrate),
 * b from 120 on 0-3, c on 4-7 then 6-7 then gone. */
static const char *PLAN =
    TOP_HEAD "\"jobs\": [" JOB("c", 64, 0, 300) ", " JOB("a", 64, 10, 480)
    ", " JOB("b", 32, 0, null) "],"
    " \"jobs_file\": \"jobs.json\", \"now\": 0, \"slot_seconds\": 60,"
    " \"slots\": ["
    "{\"allocations\": [{\"gpus\": 4, \"job\": \"a\", \"placement\":"
    "  [{\"gpus\": [0, 1, 2, 3], \"node\": 0}]},"
    "  {\"gpus\": 4, \"job\": \"c\", \"placement\":"
    "  [{\"gpus\": [7, 6, 5, 4], \"node\": 0}]}], \"end\": 120, \"start\": 0},"
    "{\"allocations\": [{\"gpus\": 2, \"job\": \"a\", \"placement\":"
    "  [{\"gpus\": [4, 5], \"node\": 0}]},"
    "  {\"gpus\": 4, \"job\": \"b\", \"placement\":"
    "  [{\"gpus\": [0, 1, 2, 3], \"node\": 0}]},"
    "  {\"gpus\": 2, \"job\": \"c\", \"placement\":"
    "  [{\"gpus\": [6, 7], \"node\": 0}]}], \"end\": 300, \"start\": 120},"
    "{\"allocations\": [{\"gpus\": 2, \"job\": \"a\", \"placement\":"
    "  [{\"gpus\": [0, 1], \"node\": 0}]},"
    "  {\"gpus\": 4, \"job\": \"b\", \"placement\":"
    "  [{\"gpus\": [4, 5, 6, 7], \"node\": 0}]}], \"end\": 480, \"start\": 300}"
    "]" TOP_TAIL;

/* PLAN in version 2: the same slots, as runs. */
#define RUN(job, s, e, g, gpus)                                             \
    "{\"end\": " #e ", \"gpus\": " #g ", \"job\": \"" job "\", \"placement\": " \
    "[{\"gpus\": " gpus ", \"node\": 0}], \"start\": " #s "}"
static const char *PLAN_RUNS =
    TOP_HEAD "\"jobs\": [" JOB("c", 64, 0, 300) ", " JOB("a", 64, 10, 480)
    ", " JOB("b", 32, 0, null) "],"
    " \"jobs_file\": \"jobs.json\", \"now\": 0, \"runs\": ["
    RUN("c", 0, 120, 4, "[7, 6, 5, 4]") ", " RUN("a", 0, 120, 4, "[0, 1, 2, 3]")
    ", " RUN("c", 120, 300, 2, "[6, 7]") ", " RUN("a", 120, 300, 2, "[4, 5]")
    ", " RUN("b", 120, 300, 4, "[0, 1, 2, 3]") ", "
    RUN("a", 300, 480, 2, "[0, 1]") ", " RUN("b", 300, 480, 4, "[4, 5, 6, 7]")
    "], \"slot_ends\": [120, 300, 480], \"slot_seconds\": 60"
    TOP_TAIL;

/* An elastic-batch plan: e accepts 64 and 128 and runs at 64 on 2 GPUs,
 * then at 128 on the same GPUs, then at 128 on 4; f keeps its 32. */
static const char *PLAN_EB =
    TOP_HEAD "\"elastic_batch\": true, \"jobs\": ["
    "{\"batch_size\": 64, \"batch_sizes\": [64, 128], \"deadline\": null, "
    "\"decision\": \"best_effort\", \"earliest_feasible_deadline\": null, "
    "\"gpu_seconds\": 600, \"id\": \"e\", \"iterations\": 100, "
    "\"iterations_done\": 0, \"iterations_left\": 100, \"migrations\": 0, "
    "\"model\": \"bert\", \"planned_end\": 360, \"resizes\": 2, "
    "\"samples\": 6400, \"samples_done\": 0, \"samples_left\": 6400, "
    "\"slack\": null, \"start\": 0, \"submit_time\": 0}, "
    JOB("f", 32, 0, 360) "], \"jobs_file\": \"jobs.json\", \"now\": 0, "
    "\"slot_seconds\": 60, \"slots\": ["
    "{\"allocations\": [{\"batch_size\": 64, \"gpus\": 2, \"job\": \"e\", "
    "\"placement\": [{\"gpus\": [0, 1], \"node\": 0}]}, {\"gpus\": 1, "
    "\"job\": \"f\", \"placement\": [{\"gpus\": [4], \"node\": 0}]}], "
    "\"end\": 120, \"start\": 0},"
    "{\"allocations\": [{\"batch_size\": 128, \"gpus\": 2, \"job\": \"e\", "
    "\"placement\": [{\"gpus\": [0, 1], \"node\": 0}]}, {\"gpus\": 1, "
    "\"job\": \"f\", \"placement\": [{\"gpus\": [4], \"node\": 0}]}], "
    "\"end\": 240, \"start\": 120},"
    "{\"allocations\": [{\"batch_size\": 128, \"gpus\": 4, \"job\": \"e\", "
    "\"placement\": [{\"gpus\": [0, 1, 2, 3], \"node\": 0}]}], "
    "\"end\": 360, \"start\": 240}]" TOP_TAIL;

static void load(exec_plan *p)
{
    ef_err e = {0};
    assert_ok(exec_plan_parse(p, "p.json", PLAN, strlen(PLAN), &e), e);
}

static void test_plan_parse(void **state)
{
    (void)state;
    exec_plan p;
    load(&p);
    assert_int_equal(p.njobs, 3);
    /* sorted by id */
    assert_string_equal(p.jobs[0].id, "a");
    assert_string_equal(p.jobs[2].id, "c");
    assert_true(p.jobs[0].iterations_done == 10);
    assert_true(p.jobs[1].planned_end == -1);
    assert_int_equal(p.nslots, 3);
    assert_true(p.end == 480);
    /* allocations in the jobs' order (the file lists a before c; its
     * jobs are c, a, b), placements sorted by GPU */
    const exec_place *c0 = &p.slots[0].a[0].place;
    assert_int_equal(p.slots[0].a[0].job, 2);
    assert_int_equal(p.slots[0].a[1].job, 0);
    assert_int_equal(c0->n, 4);
    assert_int_equal(c0->gpu[0], 4);
    assert_int_equal(c0->gpu[3], 7);
    assert_int_equal(exec_plan_slot_at(&p, 0), 0);
    assert_int_equal(exec_plan_slot_at(&p, 299), 1);
    assert_int_equal(exec_plan_slot_at(&p, 300), 2);
    assert_int_equal(exec_plan_slot_at(&p, 480), -1);
    assert_int_equal(exec_plan_find(&p, "b"), 1);
    assert_int_equal(exec_plan_find(&p, "x"), -1);
    /* distinct, stable ports */
    assert_true(p.jobs[0].port != p.jobs[1].port &&
                p.jobs[1].port != p.jobs[2].port &&
                p.jobs[0].port != p.jobs[2].port);
    assert_true(p.jobs[0].port >= 29500);
    char s[128];
    assert_string_equal(exec_place_str(c0, s, sizeof s), "node 0 GPUs 4,5,6,7");
    exec_plan_free(&p);
}

static void parse_err(const char *text, const char *sub)
{
    exec_plan p;
    ef_err e = {0};
    assert_int_equal(exec_plan_parse(&p, "p.json", text, strlen(text), &e),
                     EF_ERR);
    assert_int_equal(e.kind, EF_E_INPUT);
    assert_contains(e.msg, sub);
}

/* parse_err on 'text' with its one occurrence of 'from' replaced by 'to' */
static void sub_err(const char *text, const char *from, const char *to,
                    const char *sub)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    size_t n = strlen(text), lf = strlen(from), lt = strlen(to);
    char *t = ef_malloc(n - lf + lt + 1);
    memcpy(t, text, (size_t)(at - text));
    memcpy(t + (at - text), to, lt);
    strcpy(t + (at - text) + lt, at + lf);
    parse_err(t, sub);
    free(t);
}

static void test_plan_errors(void **state)
{
    (void)state;
    char *bad = ef_strdup(PLAN);
    /* a GPU given twice in one slot */
    char *x = strstr(bad, "[4, 5, 6, 7]");
    memcpy(x, "[1, 5, 6, 7]", 12);
    parse_err(bad, "slots[2].allocations[1]: node 0 GPU 1 is given to two jobs");
    free(bad);
    bad = ef_strdup(PLAN);
    x = strstr(bad, "\"end\": 300, \"start\": 120");
    memcpy(x, "\"end\": 300, \"start\": 110", 24);
    parse_err(bad, "slots[1]: [110, 300) does not follow");
    free(bad);
    parse_err("{\"format\": \"efplan-jobs\"}", "expected \"efplan-plan\"");
    parse_err("[1]", "expected a plan file");
    /* every member is checked by the plan file's tables; what the file
     * promises as a whole too: {plan, from, to, message} */
    const char *const cases[][4] = {
        {PLAN, "\"jobs_file\"", "\"jobs_fil\"",
         "p.json: unknown key \"jobs_fil\" (did you mean \"jobs_file\"?)"},
        {PLAN, "\"slot_seconds\": 60", "\"slot_seconds\": 0",
         "p.json: slot_seconds: 0 is out of range (expected 1..86400)"},
        {PLAN, "\"decision\": \"admitted\"", "\"decision\": \"maybe\"",
         "p.json: jobs[0].decision: \"maybe\" (expected one of"},
        {PLAN, "\"gpus\": 4, \"job\": \"c\"", "\"gpus\": 2, \"job\": \"c\"",
         "p.json: slots[0].allocations[1]: gpus is 2 but the placement has 4"},
        {PLAN, "[7, 6, 5, 4]", "[7, 6, 5, 9]",
         "p.json: slots[0].allocations[1].placement: node 0 GPU 9 is outside "
         "the cluster (1 nodes of 8 GPUs)"},
        {PLAN, "[7, 6, 5, 4]", "[7, 6, 5, 64]",
         "p.json: slots[0].allocations[1].placement[0].gpus[3]: 64 is out of "
         "range (expected 0..63)"},
        {PLAN, "[7, 6, 5, 4]", "[7, 6, 5, 5]",
         "p.json: slots[0].allocations[1].placement[0].gpus: node 0 GPU 5 "
         "twice"},
        {PLAN, "\"job\": \"c\"", "\"job\": \"zz\"",
         "p.json: slots[0].allocations[1].job: \"zz\" is not in jobs"},
        {PLAN, "\"nodes\": 1}", "\"nodes\": 1, \"x\": 2}",
         "p.json: cluster: unknown key \"x\""},
        {PLAN, ", \"summary\"", ", \"summry\"", "did you mean \"summary\"?"},
        {PLAN, "\"version\": 1", "\"version\": 3",
         "p.json: version: 3 is not a plan file version this efplan reads "
         "(expected 1 or 2)"},
        {PLAN, "\"id\": \"b\"", "\"id\": \"a\"", "p.json: jobs: job \"a\" twice"},
        {PLAN, "\"job\": \"c\", \"placement\":  [{\"gpus\": [6, 7]",
         "\"job\": \"a\", \"placement\":  [{\"gpus\": [6, 7]",
         "p.json: slots[1].allocations[2].job: \"a\" has two allocations in "
         "this slot"},
        /* a batch size only for an elastic-batch job, one it accepts */
        {PLAN, "{\"gpus\": 4, \"job\": \"a\"",
         "{\"batch_size\": 64, \"gpus\": 4, \"job\": \"a\"",
         "slots[0].allocations[0].batch_size: 64 is not one of job \"a\"'s "
         "batch_sizes"},
        {PLAN_EB, "\"batch_size\": 128, \"gpus\": 4",
         "\"batch_size\": 256, \"gpus\": 4",
         "slots[2].allocations[0].batch_size: 256 is not one of"},
        {PLAN_EB, "\"samples_left\": 6400, ", "",
         "p.json: jobs[0]: missing required key \"samples_left\" (it goes "
         "with \"batch_sizes\")"},
        {PLAN_EB, "\"elastic_batch\": true, ", "",
         "p.json: jobs[0].batch_sizes: an elastic-batch job in a plan "
         "without \"elastic_batch\": true"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        sub_err(cases[k][0], cases[k][1], cases[k][2], cases[k][3]);
}

/* PLAN_RUNS, as version 2: read as the same slots as PLAN, and its runs
 * checked. */
static char *v2(const char *from, const char *to)
{
    const char *at = strstr(PLAN_RUNS, "\"version\": 1");
    assert_non_null(at);
    ef_buf b = {0};
    ef_buf_printf(&b, "%.*s\"version\": 2%s", (int)(at - PLAN_RUNS), PLAN_RUNS,
                  at + 12);
    if (from) {
        char *t = b.s;
        const char *f = strstr(t, from);
        assert_non_null(f);
        b = (ef_buf){0};
        ef_buf_printf(&b, "%.*s%s%s", (int)(f - t), t, to, f + strlen(from));
        free(t);
    }
    return b.s;
}

static void test_plan_v2(void **state)
{
    (void)state;
    exec_plan p1, p2;
    ef_err e = {0};
    char *t = v2(NULL, NULL);
    assert_ok(exec_plan_parse(&p1, "p.json", PLAN, strlen(PLAN), &e), e);
    assert_ok(exec_plan_parse(&p2, "p.json", t, strlen(t), &e), e);
    free(t);
    assert_int_equal(p2.nslots, p1.nslots);
    for (int s = 0; s < p1.nslots; s++) {
        assert_int_equal(p2.slots[s].start, p1.slots[s].start);
        assert_int_equal(p2.slots[s].end, p1.slots[s].end);
        assert_int_equal(p2.slots[s].nalloc, p1.slots[s].nalloc);
        for (int k = 0; k < p1.slots[s].nalloc; k++) {
            const exec_alloc *a = &p1.slots[s].a[k];
            int m = 0;
            while (m < p2.slots[s].nalloc && p2.slots[s].a[m].job != a->job)
                m++;
            assert_true(m < p2.slots[s].nalloc);
            char x[128], y[128];
            assert_string_equal(exec_place_str(&a->place, x, sizeof x),
                                exec_place_str(&p2.slots[s].a[m].place, y,
                                               sizeof y));
        }
    }
    exec_plan_free(&p1);
    exec_plan_free(&p2);
    const char *const cases[][3] = {
        {"\"start\": 300}, {\"end\": 480, \"gpus\": 4",
         "\"start\": 310}, {\"end\": 480, \"gpus\": 4",
         "p.json: runs[5].start: 310 is not the start of a slot (now or a "
         "slot end)"},
        {"{\"end\": 480, \"gpus\": 2", "{\"end\": 470, \"gpus\": 2",
         "p.json: runs[5].end: 470 is not a slot end (slot_ends)"},
        {"{\"end\": 120, \"gpus\": 4, \"job\": \"c\"",
         "{\"end\": 0, \"gpus\": 4, \"job\": \"c\"",
         "p.json: runs[0]: [0, 0) is empty (expected start < end)"},
        {"{\"end\": 300, \"gpus\": 2, \"job\": \"a\"",
         "{\"end\": 480, \"gpus\": 2, \"job\": \"a\"",
         "p.json: runs[5]: starts at 300 but job \"a\" holds GPUs up to 480 "
         "in runs[3] (expected one run of a job at a time)"},
        {"[4, 5, 6, 7]", "[1, 5, 6, 7]",
         "p.json: runs[6] (in [300, 480)): node 0 GPU 1 is given to two "
         "jobs"},
        {"[120, 300, 480]", "[120, 100, 480]",
         "p.json: slot_ends[1]: 100 is not after 120 (expected ascending "
         "slot ends after now)"},
        {"\"gpus\": 4, \"job\": \"c\"", "\"gpus\": 3, \"job\": \"c\"",
         "p.json: runs[0]: gpus is 3 but the placement has 4 GPUs"},
        {"\"job\": \"c\"", "\"job\": \"zz\"",
         "p.json: runs[0].job: \"zz\" is not in jobs"},
        {"\"slot_ends\": [120, 300, 480], ", "",
         "p.json: missing required key \"slot_ends\""},
        {"\"runs\": [", "\"slots\": [",
         "p.json: unknown key \"slots\""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        t = v2(cases[k][0], cases[k][1]);
        parse_err(t, cases[k][2]);
        free(t);
    }
}

/* ---- batch sizes ------------------------------------------------------------ */

/* The executor carries an allocation's batch size to the job: a batch
 * change at the same GPUs is a resize, and the job's environment says
 * EFPLAN_BATCH_SIZE (the job's own batch size when the plan names none). */
static void test_batch(void **state)
{
    (void)state;
    exec_plan p;
    ef_err e = {0};
    assert_ok(exec_plan_parse(&p, "p.json", PLAN_EB, strlen(PLAN_EB), &e), e);
    assert_true(p.jobs[0].batch_size == 64 && p.jobs[1].batch_size == 32);
    assert_true(p.slots[0].a[0].place.batch == 64);
    assert_true(p.slots[1].a[0].place.batch == 128);
    assert_true(p.slots[0].a[1].place.batch == 0);
    exec_place cur[2], want[2];
    exec_action act[2];
    for (int j = 0; j < 2; j++) {
        cur[j] = p.slots[0].a[j].place;
        want[j] = p.slots[1].a[j].place;
    }
    assert_int_equal(exec_diff(cur, want, 2, act), 2);
    assert_int_equal(act[0].job, 0);
    assert_int_equal(act[0].act, EXEC_RESIZE);
    assert_int_equal(act[1].act, EXEC_KEEP);
    exec_ctx x;
    memset(&x, 0, sizeof x);
    x.p = &p;
    x.state = "/tmp/efplan-state";
    static const char *const expect[3][2] = {
        {"EFPLAN_BATCH_SIZE=64", "EFPLAN_BATCH_SIZE=32"},
        {"EFPLAN_BATCH_SIZE=128", "EFPLAN_BATCH_SIZE=32"},
        {"EFPLAN_BATCH_SIZE=128", NULL}};
    for (int s = 0; s < p.nslots; s++)
        for (int a = 0; a < p.slots[s].nalloc; a++) {
            exec_run run = {.job = p.slots[s].a[a].job, .attempt = 1,
                            .place = &p.slots[s].a[a].place};
            char **env = exec_launch_env(&x, &run, 0, -1, "127.0.0.1", 1);
            int found = 0;
            for (int k = 0; env[k]; k++)
                found += strcmp(env[k], expect[s][a]) == 0;
            assert_int_equal(found, 1);
            exec_strv_free(env);
        }
    exec_plan_free(&p);
}

/* ---- the slot diff --------------------------------------------------------- */

static exec_place P(int n, const int *gpus, int *nodes_buf, int *gpu_buf)
{
    exec_place pl = {n, nodes_buf, gpu_buf, 0};
    for (int i = 0; i < n; i++) {
        nodes_buf[i] = 0;
        gpu_buf[i] = gpus[i];
    }
    return pl;
}

static void test_diff(void **state)
{
    (void)state;
    int nb[6][8], gb[6][8], mb[6][8], hb[6][8];
    static const int g0123[] = {0, 1, 2, 3}, g45[] = {4, 5},
                     g67[] = {6, 7}, g01[] = {0, 1};
    exec_place cur[6], want[6];
    memset(cur, 0, sizeof cur);
    memset(want, 0, sizeof want);
    /* job 0 keeps 0-3; job 1 resizes 4,5 -> 0,1 (other count? no: same
     * count, other GPUs: migrate); job 2 stops; job 3 starts; job 4
     * resizes 2 -> 4; job 5 neither runs nor is wanted */
    cur[0] = P(4, g0123, nb[0], gb[0]);
    want[0] = P(4, g0123, mb[0], hb[0]);
    cur[1] = P(2, g45, nb[1], gb[1]);
    want[1] = P(2, g01, mb[1], hb[1]);
    cur[2] = P(2, g67, nb[2], gb[2]);
    want[3] = P(2, g67, mb[3], hb[3]);
    cur[4] = P(2, g01, nb[4], gb[4]);
    want[4] = P(4, g0123, mb[4], hb[4]);
    exec_action act[6];
    int n = exec_diff(cur, want, 6, act);
    assert_int_equal(n, 5);
    /* stop halves first (by job), then starts, then keeps */
    assert_int_equal(act[0].job, 1);
    assert_int_equal(act[0].act, EXEC_MIGRATE);
    assert_int_equal(act[1].job, 2);
    assert_int_equal(act[1].act, EXEC_STOP);
    assert_int_equal(act[2].job, 4);
    assert_int_equal(act[2].act, EXEC_RESIZE);
    assert_int_equal(act[3].job, 3);
    assert_int_equal(act[3].act, EXEC_START);
    assert_int_equal(act[4].job, 0);
    assert_int_equal(act[4].act, EXEC_KEEP);
    assert_string_equal(exec_act_name(EXEC_MIGRATE), "migrate");
    /* same GPUs on another node is a migration */
    int n2[4] = {1, 1, 1, 1};
    exec_place other = {4, n2, (int *)g0123, 0};
    exec_place c1[1] = {cur[0]}, w1[1] = {other};
    assert_int_equal(exec_diff(c1, w1, 1, act), 1);
    assert_int_equal(act[0].act, EXEC_MIGRATE);
    /* nothing runs, nothing wanted: no action */
    exec_place none[2];
    memset(none, 0, sizeof none);
    assert_int_equal(exec_diff(none, none, 2, act), 0);
}

/* The diff over the test plan's slots, as apply walks them. */
static void test_diff_plan(void **state)
{
    (void)state;
    exec_plan p;
    load(&p);
    exec_place cur[3], want[3];
    exec_action act[3];
    memset(cur, 0, sizeof cur);
    static const char *expect[3] = {
        "start a, start c",
        "resize a, resize c, start b",
        "migrate a, migrate b, stop c"};
    for (int s = 0; s < p.nslots; s++) {
        memset(want, 0, sizeof want);
        for (int k = 0; k < p.slots[s].nalloc; k++)
            want[p.slots[s].a[k].job] = p.slots[s].a[k].place;
        int n = exec_diff(cur, want, 3, act);
        char line[256];
        size_t o = 0;
        line[0] = '\0';
        for (int k = 0; k < n; k++)
            if (act[k].act != EXEC_KEEP)
                o += (size_t)snprintf(line + o, sizeof line - o, "%s%s %s",
                                      o ? ", " : "",
                                      exec_act_name(act[k].act),
                                      p.jobs[act[k].job].id);
        assert_string_equal(line, expect[s]);
        for (int j = 0; j < 3; j++)
            cur[j] = want[j];
    }
    exec_plan_free(&p);
}

/* Ids longer than 48 bytes, or with other bytes than [A-Za-z0-9_.-], get
 * a file and Slurm name of their first 48 bytes and 32 bits of a hash:
 * two ids sharing those 48 bytes get distinct names, and two whose hash
 * collides too (the pair below, found by search) are refused, naming
 * both, instead of sharing logs, rc files and Slurm jobs. */
#define LONG_A "train-resnet50-imagenet-nightly-sweep-lr-0.1-wd-1e-4-224191"
#define LONG_B "train-resnet50-imagenet-nightly-sweep-lr-0.1-wd-1e-4-816080"
#define LONG_C "train-resnet50-imagenet-nightly-sweep-lr-0.1-wd-1e-4-000001"
#define TWO_JOBS(a, b)                                                      \
    TOP_HEAD "\"jobs\": [" JOB(a, 64, 0, 60) ", " JOB(b, 64, 0, 60) "],"    \
    " \"jobs_file\": \"jobs.json\", \"now\": 0, \"slot_seconds\": 60,"      \
    " \"slots\": [{\"allocations\": [{\"gpus\": 1, \"job\": \"" a "\","     \
    " \"placement\": [{\"gpus\": [0], \"node\": 0}]}, {\"gpus\": 1,"        \
    " \"job\": \"" b "\", \"placement\": [{\"gpus\": [1], \"node\": 0}]}],"  \
    " \"end\": 60, \"start\": 0}]" TOP_TAIL

static void test_safe_names_unique(void **state)
{
    (void)state;
    exec_plan p;
    ef_err e = {0};
    const char *ok = TWO_JOBS(LONG_A, LONG_C);
    assert_ok(exec_plan_parse(&p, "p.json", ok, strlen(ok), &e), e);
    assert_string_not_equal(p.jobs[0].safe, p.jobs[1].safe);
    assert_int_equal(strncmp(p.jobs[0].safe, p.jobs[1].safe, 48), 0);
    exec_plan_free(&p);
    const char *bad = TWO_JOBS(LONG_A, LONG_B);
    assert_err(exec_plan_parse(&p, "p.json", bad, strlen(bad), &e), e,
               "p.json: jobs \"" LONG_A "\" and \"" LONG_B "\" would share "
               "the file and Slurm name ", "; rename one)");
}

/* ---- journal --------------------------------------------------------------- */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_journal_replay(void **state)
{
    (void)state;
    exec_plan p;
    load(&p);
    char dir[] = "/tmp/efplan-test-XXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/journal.jsonl", dir);
    exec_replay r;
    ef_err e = {0};
    /* missing journal: nothing began */
    assert_ok(exec_journal_replay(path, &p, &r, &e), e);
    assert_int_equal(r.begun, 0);
    assert_true(r.last_slot == -1);
    exec_replay_free(&r);
    write_file(path,
        "{\"anchor_plan\":0,\"anchor_wall\":1000.5,\"backend\":\"local\","
        "\"ev\":\"begin\",\"hash\":\"0123456789abcdef\",\"plan\":\"p.json\","
        "\"scale\":300.0}\n"
        /* a: launched, then stopped for a resize, relaunched */
        "{\"at\":1000.5,\"attempt\":1,\"ev\":\"start\",\"job\":\"a\",\"place\":"
        "[{\"gpus\":[0,1,2,3],\"node\":0}],\"slot\":0}\n"
        "{\"attempt\":1,\"ev\":\"started\",\"handle\":\"100:5\",\"job\":\"a\"}\n"
        "{\"at\":1000.5,\"attempt\":1,\"ev\":\"start\",\"job\":\"c\",\"place\":"
        "[{\"gpus\":[4],\"node\":0}],\"slot\":0}\n"
        "{\"attempt\":1,\"ev\":\"started\",\"handle\":\"101:5\",\"job\":\"c\"}\n"
        "{\"ev\":\"slot\",\"running\":2,\"start\":0}\n"
        "{\"attempt\":1,\"ev\":\"stop\",\"job\":\"a\",\"why\":\"plan\"}\n"
        "{\"attempt\":1,\"ev\":\"stopped\",\"how\":\"exit 0\",\"job\":\"a\","
        "\"progress\":42,\"why\":\"plan\"}\n"
        "{\"at\":1001,\"attempt\":2,\"ev\":\"start\",\"job\":\"a\",\"place\":"
        "[{\"gpus\":[5,4],\"node\":0}],\"slot\":120}\n"
        /* c failed */
        "{\"attempt\":1,\"code\":3,\"ev\":\"exit\",\"job\":\"c\",\"log\":\"x\","
        "\"progress\":-1,\"result\":\"failed\",\"why\":\"exit 3\"}\n"
        /* b: a stop intended, outcome never written */
        "{\"at\":1001,\"attempt\":1,\"batch\":64,\"ev\":\"start\",\"job\":\"b\","
        "\"place\":[{\"gpus\":[0],\"node\":0}],\"slot\":120}\n"
        "{\"attempt\":1,\"ev\":\"started\",\"handle\":\"102:9\",\"job\":\"b\"}\n"
        "{\"attempt\":1,\"ev\":\"stop\",\"job\":\"b\",\"why\":\"plan\"}\n"
        "{\"ev\":\"slot\",\"running\":2,\"start\":120}\n"
        /* killed mid-write: a torn record */
        "{\"attempt\":2,\"ev\":\"started\",\"han");
    assert_ok(exec_journal_replay(path, &p, &r, &e), e);
    assert_int_equal(r.begun, 1);
    assert_int_equal(r.ended, 0);
    assert_int_equal(r.torn, 1);
    assert_int_equal(r.records, 14);
    assert_string_equal(r.hash, "0123456789abcdef");
    assert_string_equal(r.backend, "local");
    assert_true(r.scale == 300.0 && r.anchor_wall == 1000.5);
    assert_true(r.last_slot == 120);
    const exec_jjob *a = &r.jobs[0], *b = &r.jobs[1], *c = &r.jobs[2];
    assert_int_equal(a->attempt, 2);
    assert_int_equal(a->start_in_doubt, 1);   /* "started" was torn */
    assert_int_equal(a->running, 0);
    assert_int_equal(a->place.n, 2);
    assert_int_equal(a->place.gpu[0], 4);
    assert_true(a->progress == 42);
    assert_int_equal(a->status, EXEC_J_PENDING);
    assert_int_equal(b->running, 1);
    assert_int_equal(b->stop_in_doubt, 1);
    assert_string_equal(b->handle, "102:9");
    assert_true(b->place.batch == 64 && a->place.batch == 0);
    assert_true(a->start_at == 1001);
    assert_int_equal(c->status, EXEC_J_FAILED);
    assert_int_equal(c->running, 0);
    assert_string_equal(c->why, "exit 3");
    exec_replay_free(&r);

    /* opening for append cuts the torn record; appends then replay */
    exec_journal jn;
    assert_ok(exec_journal_open(&jn, path, &e), e);
    assert_ok(exec_journal_replay(path, &p, &r, &e), e);
    assert_ok(exec_journal_append(&jn, &r, &p, "{\"attempt\":2,\"ev\":"
                                  "\"started\",\"handle\":\"200:1\",\"job\":"
                                  "\"a\",\"adopted\":true}", &e), e);
    assert_int_equal(r.jobs[0].running, 1);
    assert_ok(exec_journal_append(&jn, &r, &p, "{\"ev\":\"end\",\"time\":480}",
                                  &e), e);
    exec_journal_close(&jn);
    exec_replay_free(&r);
    assert_ok(exec_journal_replay(path, &p, &r, &e), e);
    assert_int_equal(r.torn, 0);
    assert_int_equal(r.ended, 1);
    assert_int_equal(r.jobs[0].running, 1);
    assert_string_equal(r.jobs[0].handle, "200:1");
    exec_replay_free(&r);

    /* bad journals: {text, message}: a job the plan lacks, a malformed
     * line, and each record type's members, checked on replay */
    static const char *const bad[][2] = {
        {"{\"ev\":\"end\",\"time\":0}\n{\"at\":0,\"attempt\":1,\"ev\":\"start\","
         "\"job\":\"zz\",\"place\":[{\"gpus\":[0],\"node\":0}],\"slot\":0}\n",
         "journal.jsonl:2: job \"zz\" is not in the plan"},
        {"{\"ev\":\"end\",\"time\":0}\nnot json\n{\"ev\":\"end\"}\n",
         "journal.jsonl:2: not a journal record"},
        {"{\"ev\":\"slot\",\"start\":0}\n",
         "journal.jsonl:1: slot: missing required key \"running\""},
        {"{\"ev\":\"done\",\"job\":\"a\",\"progress\":3,\"handle\":\"x\"}\n",
         "journal.jsonl:1: done: unknown key \"handle\""},
        {"{\"ev\":\"hello\"}\n", "journal.jsonl:1: unknown record \"hello\""},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        write_file(path, bad[k][0]);
        assert_int_equal(exec_journal_replay(path, &p, &r, &e), EF_ERR);
        assert_contains(e.msg, bad[k][1]);
    }
    /* a job this plan lacks is an earlier plan's when a "plan" record
     * follows (it was stopped before the switch); after one it is not */
    write_file(path, "{\"at\":0,\"attempt\":1,\"ev\":\"start\",\"job\":"
               "\"zz\",\"place\":[{\"gpus\":[0],\"node\":0}],\"slot\":0}\n"
               "{\"ev\":\"end\",\"time\":0}\n"
               "{\"ev\":\"plan\",\"hash\":\"0123456789abcdef\",\"plan\":"
               "\"p2.json\"}\n");
    assert_ok(exec_journal_replay(path, &p, &r, &e), e);
    assert_string_equal(r.hash, "0123456789abcdef");
    assert_int_equal(r.plans, 1);
    assert_int_equal(r.ended, 0); /* the new plan is not applied yet */
    exec_replay_free(&r);
    write_file(path, "{\"ev\":\"plan\",\"hash\":\"0123456789abcdef\","
               "\"plan\":\"p2.json\"}\n{\"ev\":\"done\",\"job\":\"zz\","
               "\"progress\":1}\n{\"ev\":\"end\",\"time\":0}\n");
    assert_int_equal(exec_journal_replay(path, &p, &r, &e), EF_ERR);
    assert_contains(e.msg, "journal.jsonl:2: job \"zz\" is not in the plan");
    unlink(path);
    rmdir(dir);
    exec_plan_free(&p);
}

/* The state file is a job queue that keeps every field of each job:
 * batch sizes, the work as given (samples, epochs), command keys, and a
 * job the plan lacks unchanged (placement too); progress is the
 * executor's, in the job's own unit. */
static void test_state_keeps_job_fields(void **state)
{
    (void)state;
    exec_plan p;
    ef_err e = {0};
    load(&p);
    char dir[] = "/tmp/efplan-test-XXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/jobs.json", dir);
    write_file(path,
        "{\"jobs\": ["
        "{\"id\": \"a\", \"model\": \"bert\", \"batch_size\": 64,"
        " \"batch_sizes\": [128, 32, 64], \"iterations\": 100,"
        " \"iterations_done\": 10, \"submit_time\": 0, \"deadline\": 900,"
        " \"command\": [\"train\", \"--x\"], \"env\": {\"K\": \"v\"},"
        " \"checkpoint_signal\": \"USR1\", \"grace_seconds\": 7,"
        " \"workdir\": \"/w\", \"num_gpu\": 4, \"duration\": 60},"
        "{\"id\": \"b\", \"model\": \"bert\", \"batch_size\": 64,"
        " \"batch_sizes\": [64, 128], \"samples\": 6400, \"samples_done\": 64,"
        " \"submit_time\": 0, \"command\": [\"b\"]},"
        "{\"id\": \"c\", \"model\": \"bert\", \"batch_size\": 64,"
        " \"epochs\": 4, \"dataset_size\": 1600, \"samples_done\": 640,"
        " \"submit_time\": \"1970-01-01T00:00:10Z\", \"command\": [\"c\"]},"
        "{\"id\": \"d\", \"model\": \"bert\", \"batch_size\": 64,"
        " \"iterations\": 5, \"submit_time\": 0,"
        " \"placement\": [{\"node\": 0, \"gpus\": [7]}]}]}");
    assert_ok(exec_plan_attach_jobs(&p, path, &e), e);
    exec_jjob jj[3];
    memset(jj, 0, sizeof jj);
    int node[2] = {0, 0}, gpu[2] = {4, 5};
    for (int k = 0; k < 3; k++)
        jj[k].progress = -1;
    jj[0].progress = 42;             /* a runs on GPUs 4, 5 */
    jj[0].had_place = 1;
    jj[0].place = (exec_place){2, node, gpu, 0};
    jj[1].status = EXEC_J_FAILED;    /* b failed */
    jj[1].attempt = 1;
    snprintf(jj[1].why, sizeof jj[1].why, "exit 3");
    jj[2].progress = 30;             /* c: 30 iterations of 64 samples */
    exec_replay r = {.njobs = 3, .jobs = jj};
    exec_ctx x = {.p = &p, .state = dir};
    char *s = exec_state_json(&x, &r, 0, 120);
    job_queue q;
    assert_ok(queue_parse_json(&q, "state.json", s, strlen(s), &e), e);
    assert_int_equal(q.n, 3);
    const job *a = &q.jobs[0], *c = &q.jobs[1], *d = &q.jobs[2];
    assert_string_equal(a->id, "a");
    assert_int_equal(a->nbatch, 3);
    assert_int_equal(a->batches[0], 32);
    assert_true(a->iterations == 100 && a->iterations_done == 42);
    assert_int_equal(a->cur.n, 2);
    assert_int_equal(a->cur.gpu[1], 5);
    assert_int_equal(a->run.argc, 2);
    assert_string_equal(a->run.env[0], "K=v");
    assert_int_equal(a->run.grace, 7);
    assert_string_equal(a->run.workdir, "/w");
    assert_true(a->num_gpu == 4 && a->duration == 60);
    assert_true(a->has_deadline && a->deadline == 900);
    assert_string_equal(c->id, "c");
    assert_true(c->in_samples && c->epochs == 4 && c->dataset_size == 1600);
    assert_true(c->samples_done == 30 * 64 && c->iterations_done == 30);
    assert_true(c->submit == 10);
    assert_string_equal(d->id, "d");
    assert_int_equal(d->cur.n, 1);
    assert_int_equal(d->cur.gpu[0], 7);
    queue_free(&q);
    /* the failed job, as kept for putting back, keeps its fields too */
    json_t *root = json_loads(s, 0, NULL);
    json_t *fj = json_object_get(json_array_get(json_object_get(
        json_object_get(root, "apply"), "failed"), 0), "job");
    assert_non_null(fj);
    json_t *wrap = json_pack("{s:[O]}", "jobs", fj);
    char *t = json_dumps(wrap, 0);
    json_decref(wrap);
    assert_ok(queue_parse_json(&q, "failed.json", t, strlen(t), &e), e);
    assert_int_equal(q.jobs[0].nbatch, 2);
    assert_true(q.jobs[0].in_samples && q.jobs[0].samples == 6400 &&
                q.jobs[0].samples_done == 64);
    queue_free(&q);
    free(t);
    json_decref(root);
    free(s);
    unlink(path);
    rmdir(dir);
    exec_plan_free(&p);
}

/* A job added to the jobs file while apply ran (by hand, or by a submit
 * into another plan of that jobs file: a submit into the plan being
 * applied is refused) reaches the state file, and so the next night's
 * plan; the jobs apply read are written as before. */
static void test_state_carries_submitted(void **state)
{
    (void)state;
    exec_plan p;
    ef_err e = {0};
    load(&p);
    char dir[256], path[512];
    tu_tmpdir(dir, sizeof dir);
    tu_join(path, sizeof path, dir, "jobs.json");
#define SJOB(id) "{\"id\": \"" id "\", \"model\": \"bert\", " \
    "\"batch_size\": 64, \"iterations\": 100, \"submit_time\": 0, " \
    "\"command\": [\"train\"]}"
    write_file(path, "{\"jobs\": [" SJOB("a") ", " SJOB("b") ", " SJOB("c")
                     "]}");
    assert_ok(exec_plan_attach_jobs(&p, path, &e), e);
    /* while apply runs: the jobs file gets one more */
    write_file(path, "{\"jobs\": [" SJOB("a") ", " SJOB("b") ", " SJOB("c")
                     ", {\"id\": \"late\", \"model\": \"bert\", "
                     "\"batch_size\": 64, \"iterations\": 50, "
                     "\"submit_time\": 300, \"deadline\": 9000, "
                     "\"command\": [\"run\", \"it\"]}]}");
#undef SJOB
    exec_jjob jj[3];
    memset(jj, 0, sizeof jj);
    for (int k = 0; k < 3; k++)
        jj[k].progress = -1;
    jj[1].status = EXEC_J_DONE;
    exec_replay r = {.njobs = 3, .jobs = jj};
    exec_ctx x = {.p = &p, .state = dir};
    char *s = exec_state_json(&x, &r, 1, 480);
    job_queue q;
    assert_ok(queue_parse_json(&q, "state.json", s, strlen(s), &e), e);
    assert_int_equal(q.n, 3); /* a, c and the late one; b is done */
    assert_string_equal(q.jobs[0].id, "a");
    assert_string_equal(q.jobs[1].id, "c");
    const job *l = &q.jobs[2];
    assert_string_equal(l->id, "late");
    assert_true(l->iterations == 50 && l->submit == 300);
    assert_true(l->has_deadline && l->deadline == 9000);
    assert_int_equal(l->run.argc, 2);
    assert_string_equal(l->run.argv[1], "it");
    queue_free(&q);
    free(s);
    /* a jobs file gone since: the state holds what apply read */
    unlink(path);
    s = exec_state_json(&x, &r, 1, 480);
    assert_ok(queue_parse_json(&q, "state.json", s, strlen(s), &e), e);
    assert_int_equal(q.n, 2);
    queue_free(&q);
    free(s);
    tu_rmtree(dir);
    exec_plan_free(&p);
}

/* ---- behind the plan ----------------------------------------------------- */

/* What PLAN expects by a time: a (10 of 100 done at now, planned end 480)
 * has 4 GPUs in [0, 120), then 2 to 480: 480 + 360 + 360 = 1200
 * GPU-seconds for its 90 iterations; c (0 of 100, end 300) has 4 then 2:
 * 840; b has no planned end: nothing is promised, its 0 done. */
static void test_expected(void **state)
{
    (void)state;
    exec_plan p;
    load(&p);
    assert_int_equal(exec_expected(&p, 0, -5), 10);
    assert_int_equal(exec_expected(&p, 0, 0), 10);
    assert_int_equal(exec_expected(&p, 0, 60), 10 + 18);   /* 240/1200 */
    assert_int_equal(exec_expected(&p, 0, 120), 10 + 36);  /* 480/1200 */
    assert_int_equal(exec_expected(&p, 0, 300), 10 + 63);  /* 840/1200 */
    assert_int_equal(exec_expected(&p, 0, 479), 10 + 89);  /* 89.85 */
    assert_int_equal(exec_expected(&p, 0, 480), 100);
    assert_int_equal(exec_expected(&p, 0, 100000), 100);
    assert_int_equal(exec_expected(&p, 2, 120), 57);       /* 480/840 */
    assert_int_equal(exec_expected(&p, 2, 210), 57 + 21);  /* 660/840 */
    assert_int_equal(exec_expected(&p, 2, 300), 100);
    assert_int_equal(exec_expected(&p, 1, 0), 0);
    assert_int_equal(exec_expected(&p, 1, 480), 0);
    /* monotone, and never past the iterations */
    int64_t last = 0;
    for (int64_t t = -60; t < 600; t += 7) {
        int64_t v = exec_expected(&p, 0, t);
        assert_true(v >= last && v <= 100);
        last = v;
    }
    exec_plan_free(&p);
}

/* The admitted jobs behind PLAN (every job of it admitted, deadline 900):
 * progress from the journal and the progress files against
 * exec_expected; done and failed jobs are never listed, nor a job the
 * plan did not admit; a deadline at or before the time is missed; the
 * state file carries the list. */
static void test_behind(void **state)
{
    (void)state;
    exec_plan p;
    load(&p);
    char dir[256], pf[4200];
    tu_tmpdir(dir, sizeof dir);
    exec_ctx x = {.p = &p, .b = &exec_backend_local, .state = dir};
    tu_join(pf, sizeof pf, dir, "jobs");
    assert_int_equal(mkdir(pf, 0755), 0);
    ef_err me = {0};
    assert_ok(exec_make_checkpoints(&x, 0, &me), me);
    exec_jjob jj[3];
    memset(jj, 0, sizeof jj);
    for (int k = 0; k < 3; k++)
        jj[k].progress = -1;
    jj[0].progress = 50;
    exec_replay r = {.njobs = 3, .jobs = jj};
    exec_behind *b;
    int missed = -1;
    /* t=300: a 50 < 73 (deadline ahead), c 0 < 100; b promised nothing */
    int n = exec_behind_list(&x, &r, 300, &b, &missed);
    assert_int_equal(n, 2);
    assert_int_equal(missed, 0);
    assert_int_equal(b[0].job, 0);
    assert_true(b[0].done == 50 && b[0].expected == 73);
    assert_true(b[0].deadline == 900 && !b[0].missed);
    assert_int_equal(b[1].job, 2);
    assert_true(b[1].done == 0 && b[1].expected == 100 && !b[1].missed);
    free(b);
    /* the progress file says more than the journal: a is on time */
    exec_path_progress(&x, 0, pf, sizeof pf);
    write_file(pf, "80\n");
    assert_int_equal(exec_job_progress(&x, &r, 0), 80);
    n = exec_behind_list(&x, &r, 300, &b, NULL);
    assert_int_equal(n, 1);
    assert_int_equal(b[0].job, 2);
    free(b);
    /* t=900: every deadline passed; b, not done, missed it too */
    n = exec_behind_list(&x, &r, 900, &b, &missed);
    assert_int_equal(n, 3);
    assert_int_equal(missed, 3);
    assert_true(b[0].missed && b[0].done == 80 && b[0].expected == 100);
    assert_true(b[1].job == 1 && b[1].expected == 0 && b[1].missed);
    free(b);
    /* the state file: apply.behind, keys sorted */
    char *s = exec_state_json(&x, &r, 1, 900);
    assert_keys_sorted(s);
    json_t *root = json_loads(s, 0, NULL);
    json_t *bh = json_object_get(json_object_get(root, "apply"), "behind");
    assert_int_equal(json_array_size(bh), 3);
    json_t *c = json_array_get(bh, 2);
    assert_string_equal(json_string_value(json_object_get(c, "id")), "c");
    assert_int_equal(json_integer_value(json_object_get(c, "done")), 0);
    assert_int_equal(json_integer_value(json_object_get(c, "expected")), 100);
    assert_int_equal(json_integer_value(json_object_get(c, "deadline")), 900);
    assert_true(json_is_true(json_object_get(c, "missed")));
    json_decref(root);
    free(s);
    /* done, failed, not admitted: not listed; a dry run lists nothing */
    jj[0].status = EXEC_J_DONE;
    jj[2].status = EXEC_J_FAILED;
    p.jobs[1].decision = PLAN_BEST_EFFORT;
    assert_int_equal(exec_behind_list(&x, &r, 900, &b, &missed), 0);
    assert_null(b);
    assert_int_equal(missed, 0);
    p.jobs[1].decision = PLAN_ADMITTED;
    jj[0].status = jj[2].status = EXEC_J_PENDING;
    x.b = &exec_backend_dryrun;
    assert_int_equal(exec_behind_list(&x, &r, 900, &b, NULL), 0);
    s = exec_state_json(&x, &r, 1, 300);
    assert_contains(s, "\"behind\": []");
    free(s);
    tu_rmtree(dir);
    exec_plan_free(&p);
}

/* A state directory read on its own terms: the journal's begin and end,
 * and with the copy of its plan, what may still run. */
static void test_state_look(void **state)
{
    (void)state;
    char dir[256], planf[512], jpath[4200];
    tu_tmpdir(dir, sizeof dir);
    exec_look l;
    ef_err e = {0};
    /* no journal */
    assert_ok(exec_state_look(dir, &l, &e), e);
    assert_false(l.begun);
    /* begun, a started, b's launch in doubt; no copy yet: unknown */
    exec_plan p;
    load(&p);
    exec_journal jn;
    exec_replay r;
    exec_replay_init(&r, &p);
    tu_join(jpath, sizeof jpath, dir, "journal.jsonl");
    assert_ok(exec_journal_open(&jn, jpath, &e), e);
    exec_place pl = p.slots[0].a[0].place;
    assert_ok(exec_journal_put(&jn, &r, &p, &(exec_rec){
        .ev = EXEC_R_BEGIN, .plan = "p.json", .hash = p.hash,
        .backend = "local", .scale = 1}, &e), e);
    assert_ok(exec_journal_put(&jn, &r, &p, &(exec_rec){
        .ev = EXEC_R_START, .job = "a", .attempt = 1, .place = pl}, &e), e);
    assert_ok(exec_journal_put(&jn, &r, &p, &(exec_rec){
        .ev = EXEC_R_STARTED, .job = "a", .attempt = 1, .handle = "1"}, &e),
        e);
    assert_ok(exec_journal_put(&jn, &r, &p, &(exec_rec){
        .ev = EXEC_R_START, .job = "b", .attempt = 1, .place = pl}, &e), e);
    assert_ok(exec_state_look(dir, &l, &e), e);
    assert_true(l.begun && !l.ended && !l.known);
    assert_string_equal(l.hash, p.hash);
    assert_string_equal(l.backend, "local");
    /* the copy: a runs, b's launch is in doubt */
    tu_write(dir, "plan.json", PLAN, planf, sizeof planf);
    assert_ok(exec_state_look(dir, &l, &e), e);
    assert_true(l.known);
    assert_int_equal(l.running, 2);
    assert_string_equal(l.first, "a");
    assert_contains(l.copy, "/plan.json");
    /* a copy of another plan (other bytes) is not that plan's */
    tu_write(dir, "plan.json", PLAN_EB, NULL, 0);
    assert_ok(exec_state_look(dir, &l, &e), e);
    assert_true(l.begun && !l.known && l.running == 0);
    tu_write(dir, "plan.json", PLAN, NULL, 0);
    /* both stopped, then the end */
    assert_ok(exec_journal_put(&jn, &r, &p, &(exec_rec){
        .ev = EXEC_R_START_FAILED, .job = "b", .attempt = 1, .why = "x"}, &e),
        e);
    assert_ok(exec_journal_put(&jn, &r, &p, &(exec_rec){
        .ev = EXEC_R_STOP, .job = "a", .attempt = 1, .why = "end"}, &e), e);
    assert_ok(exec_state_look(dir, &l, &e), e);
    assert_int_equal(l.running, 1); /* a's stop is in doubt */
    assert_ok(exec_journal_put(&jn, &r, &p, &(exec_rec){
        .ev = EXEC_R_STOPPED, .job = "a", .attempt = 1, .why = "end",
        .how = "exit 0", .progress = 7}, &e), e);
    assert_ok(exec_state_look(dir, &l, &e), e);
    assert_true(l.known && !l.ended && l.running == 0 && !l.first[0]);
    assert_ok(exec_journal_put(&jn, &r, &p, &(exec_rec){
        .ev = EXEC_R_END, .time = 480}, &e), e);
    assert_ok(exec_state_look(dir, &l, &e), e);
    assert_true(l.ended);
    exec_journal_close(&jn);
    exec_replay_free(&r);
    /* a malformed journal is an error naming it */
    write_file(jpath, "{\"ev\": \"begin\"}\n");
    assert_err(exec_state_look(dir, &l, &e), e, jpath, ":1: ");
    tu_rmtree(dir);
    exec_plan_free(&p);
}

/* ---- the node table ------------------------------------------------------ */

static void test_nodes(void **state)
{
    (void)state;
    exec_nodes t;
    ef_err e = {0};
    char text[] = "  alpha \n\n# a comment\n\tbeta\r\ngamma";
    assert_ok(exec_nodes_parse(&t, "n.txt", text, 0, &e), e);
    assert_int_equal(t.n, 3);
    assert_int_equal(t.lines, 5);
    assert_string_equal(t.name[0], "alpha");
    assert_string_equal(t.name[1], "beta");
    assert_string_equal(t.name[2], "gamma");
    char tmp[32];
    assert_string_equal(exec_nodes_name(&t, 1, tmp, sizeof tmp), "beta");
    /* a 1-node plan is covered; a 3-node plan too */
    exec_plan p;
    load(&p);
    assert_ok(exec_nodes_check(&t, &p, &e), e);
    exec_nodes_free(&t);
    assert_int_equal(t.n, 0);
    /* no table: node<N> */
    assert_string_equal(exec_nodes_name(&t, 7, tmp, sizeof tmp), "node7");
    /* a plan of 2 nodes, a table of 1 */
    char one[] = "# the only one\nonly\n";
    assert_ok(exec_nodes_parse(&t, "n.txt", one, 0, &e), e);
    p.nodes = 2;
    assert_err(exec_nodes_check(&t, &p, &e), e,
               "n.txt: 1 node name in 2 lines for a plan of 2 nodes: plan "
               "node 1 has no name", NULL);
    exec_nodes_free(&t);
    exec_plan_free(&p);
    /* a name twice in a file: an error naming both lines */
    char dup[] = "a\nb\n a\n";
    assert_err(exec_nodes_parse(&t, "n.txt", dup, 0, &e), e,
               "n.txt:3: node \"a\" is already plan node 0 (line 1)", NULL);
    assert_int_equal(t.n, 0);
    char bad[] = "a\nb c\n";
    assert_err(exec_nodes_parse(&t, "n.txt", bad, 0, &e), e,
               "n.txt:2: node name \"b c\" holds ' '", NULL);
    /* a host list on a line: its names in order, then the next line */
    char range[] = "node[1-3]\nx,y[08-10]\n";
    assert_ok(exec_nodes_parse(&t, "n.txt", range, 0, &e), e);
    assert_int_equal(t.n, 7);
    assert_string_equal(t.name[0], "node1");
    assert_string_equal(t.name[2], "node3");
    assert_string_equal(t.name[3], "x");
    assert_string_equal(t.name[4], "y08");
    assert_string_equal(t.name[6], "y10");
    exec_nodes_free(&t);
    char dup2[] = "gpu02\ngpu[01-03]\n";
    assert_err(exec_nodes_parse(&t, "n.txt", dup2, 0, &e), e,
               "n.txt:2: node \"gpu02\" is already plan node 0 (line 1)",
               NULL);
    char badr[] = "gpu[04-01]\n";
    assert_err(exec_nodes_parse(&t, "n.txt", badr, 0, &e), e,
               "n.txt:1: \"gpu[04-01]\" is not a host list: a range whose "
               "first number is above its last", NULL);
    /* sinfo lists one name a line: a bracket there is an error */
    char sl[] = "node[1-4]\n";
    assert_err(exec_nodes_parse(&t, "sinfo", sl, 1, &e), e,
               "sinfo:1: node name \"node[1-4]\" holds '['", NULL);
    /* --nodes LIST: a host list that names no file */
    assert_ok(exec_nodes_load(&t, "gpu[01-02],cpu7", &e), e);
    assert_int_equal(t.n, 3);
    assert_string_equal(t.src, "--nodes (no such file: a host list)");
    assert_string_equal(t.name[1], "gpu02");
    assert_string_equal(t.name[2], "cpu7");
    exec_nodes_free(&t);
    /* sinfo's listing: a node once per partition; sorted */
    char sinfo[] = "n3\nn1\n  n0\nn1\nn0\n";
    assert_ok(exec_nodes_parse(&t, "sinfo", sinfo, 1, &e), e);
    assert_int_equal(t.n, 3);
    assert_string_equal(t.name[0], "n0");
    assert_string_equal(t.name[2], "n3");
    exec_nodes_free(&t);
    /* a missing file */
    assert_err(exec_nodes_load(&t, "/nonexistent/nodes", &e), e,
               "/nonexistent/nodes", NULL);
}

/* exec_hostlist: Slurm's host lists */
static void test_hostlist(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out; /* out: the names, space-separated, or the
                                 error */
    } cases[] = {
        {"gpu07", "gpu07"},
        {"gpu[01-04]", "gpu01 gpu02 gpu03 gpu04"},
        {"gpu[1-2,7],cpu3", "gpu1 gpu2 gpu7 cpu3"},
        {"r[1-2]-g[8-10]", "r1-g8 r1-g9 r1-g10 r2-g8 r2-g9 r2-g10"},
        {"n[098-101]", "n098 n099 n100 n101"},
        {"a,b", "a b"},
        {"", "an empty host list"},
        {"gpu[01-04", "a '[' without its ']' (or brackets inside brackets)"},
        {"gpu]1[", "a ']' without its '['"},
        {"gpu[a-b]", "a range holds something other than digits"},
        {"gpu[3-1]", "a range whose first number is above its last"},
        {"gpu[-1]", "a range needs numbers of 1 to 9 digits (\"01-04\")"},
        {"a,,b", "an empty name in a host list (two commas, or one at an "
                 "end)"},
        {"a b", "a blank or '#' in a host list"},
        {"n[0-99999999]", "over 65536 names"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char **names = NULL;
        int n = 0;
        const char *why = NULL;
        int rc = exec_hostlist(cases[i].in, &names, &n, &why);
        ef_buf b = {0};
        ef_buf_put(&b, "");
        if (rc == EF_OK)
            for (int k = 0; k < n; k++)
                ef_buf_printf(&b, "%s%s", k ? " " : "", names[k]);
        else
            ef_buf_put(&b, why);
        assert_string_equal(b.s, cases[i].out);
        for (int k = 0; k < n; k++)
            free(names[k]);
        free(names);
        free(b.s);
    }
}

/* ---- rc files ------------------------------------------------------------ */

static void test_read_rc(void **state)
{
    (void)state;
    exec_plan p;
    load(&p);
    char dir[256], sub[512];
    tu_tmpdir(dir, sizeof dir);
    tu_join(sub, sizeof sub, dir, "run");
    assert_int_equal(mkdir(sub, 0755), 0);
    exec_ctx x;
    memset(&x, 0, sizeof x);
    x.p = &p;
    x.state = dir;
    exec_place pl = {0, NULL, NULL, 0};
    exec_run r = {.job = 0, .attempt = 2, .place = &pl};
    exec_pstatus st;
    assert_int_equal(exec_read_rc(&x, &r, 0, &st), 0); /* no file yet */
    static const struct {
        const char *text;
        int shell, read, code, sig;
    } cases[] = {
        {"exit 0\n", 0, 1, 0, 0},     {"exit 3\n", 1, 1, 3, 0},
        {"exit 137\n", 1, 1, 137, 9}, /* the batch script's $? */
        {"exit 137\n", 0, 1, 137, 0}, /* the local monitor's exit code */
        {"signal 15\n", 0, 1, 143, 15},
        {"", 0, 0, 0, 0},             {"garbage\n", 1, 0, 0, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        tu_write(sub, "a.2.rc", cases[k].text, NULL, 0);
        memset(&st, 0, sizeof st);
        assert_int_equal(exec_read_rc(&x, &r, cases[k].shell, &st),
                         cases[k].read);
        if (!cases[k].read)
            continue;
        assert_int_equal(st.state, EXEC_P_EXITED);
        assert_int_equal(st.code, cases[k].code);
        assert_int_equal(st.sig, cases[k].sig);
    }
    tu_rmtree(sub);
    tu_rmtree(dir);
    exec_plan_free(&p);
}

/* ---- the dry run --------------------------------------------------------- */

/* 2 nodes x 2 GPUs: a on node 1 in [0, 60) and done at 50; b on node 0,
 * then on both nodes (a resize) in [60, 120). */
static const char *PLAN2 =
    "{\"cluster\": {\"gpus_per_node\": 2, \"nodes\": 2}, \"curves\": "
    "\"A100\", \"format\": \"efplan-plan\", \"jobs\": ["
    JOB("a", 64, 0, 50) ", " JOB("b", 64, 0, null) "],"
    " \"jobs_file\": \"jobs.json\", \"now\": 0, \"slot_seconds\": 60,"
    " \"slots\": ["
    "{\"allocations\": [{\"gpus\": 2, \"job\": \"a\", \"placement\":"
    "  [{\"gpus\": [0, 1], \"node\": 1}]},"
    "  {\"gpus\": 2, \"job\": \"b\", \"placement\":"
    "  [{\"gpus\": [0, 1], \"node\": 0}]}], \"end\": 60, \"start\": 0},"
    "{\"allocations\": [{\"gpus\": 4, \"job\": \"b\", \"placement\":"
    "  [{\"gpus\": [0, 1], \"node\": 0}, {\"gpus\": [0, 1], \"node\": 1}]}],"
    "  \"end\": 120, \"start\": 60}"
    "]" TOP_TAIL;

static const char *JOBS2 =
    "{\"jobs\": ["
    "{\"id\": \"a\", \"model\": \"bert\", \"batch_size\": 64,"
    " \"iterations\": 100, \"submit_time\": 0, \"deadline\": 600,"
    " \"command\": [\"train\", \"it's\"]},"
    "{\"id\": \"b\", \"model\": \"bert\", \"batch_size\": 64,"
    " \"iterations\": 100, \"submit_time\": 0, \"deadline\": 600,"
    " \"env\": {\"NOTE\": \"b's\"}, \"command\": [\"train\"]}]}";

/* The dry run's lines, one string. */
static void collect(void *arg, const char *line)
{
    ef_buf *b = arg;
    ef_buf_put(b, line);
    ef_buf_put(b, "\n");
}

/* Every launch's MASTER_ADDR is the first node of its --nodelist. */
static void check_master(const char *out, int expect_launches)
{
    int launches = 0;
    char master[64] = "";
    for (const char *l = out; *l; l = strchr(l, '\n') + 1) {
        const char *m = strstr(l, "MASTER_ADDR=");
        const char *nl = strchr(l, '\n');
        if (m && m < nl)
            sscanf(m, "MASTER_ADDR=%63[^ \n]", master);
        const char *s = strstr(l, "--nodelist=");
        if (s && s < nl) {
            char first[64] = "";
            sscanf(s, "--nodelist=%63[^, \n]", first);
            assert_string_equal(master, first);
            launches++;
            master[0] = '\0';
        }
    }
    assert_int_equal(launches, expect_launches);
}

static void test_dry_run(void **state)
{
    (void)state;
    char dir[256], planf[512], nodes[512], st[512];
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "plan.json", PLAN2, planf, sizeof planf);
    tu_write(dir, "jobs.json", JOBS2, NULL, 0);
    tu_join(st, sizeof st, dir, "plan.state");
    exec_plan p;
    ef_err e = {0};
    assert_ok(exec_plan_load(&p, planf, NULL, &e), e);
    exec_opts o;
    exec_opts_default(&o);
    o.backend = "dry-run";
    o.state = st;
    ef_buf out = {0};
    o.out = collect;
    o.arg = &out;
    exec_report rep;

    /* a node file naming one node, for a plan that uses node 1: a clear
     * error before anything is printed (it used to read past the table) */
    tu_write(dir, "one.txt", "only-node\n", nodes, sizeof nodes);
    o.nodes_file = nodes;
    assert_err(exec_apply(&p, &o, &rep, &e), e, nodes,
               ": 1 node name in 1 line for a plan of 2 nodes: plan node 1 "
               "has no name");
    assert_null(out.s);

    /* without --nodes: node<N>, MASTER_ADDR as in --nodelist */
    o.nodes_file = NULL;
    assert_ok(exec_apply(&p, &o, &rep, &e), e);
    assert_true(rep.complete);
    check_master(out.s, 3);
    assert_contains(out.s, "MASTER_ADDR=node1 MASTER_PORT=");
    assert_contains(out.s, "--nodelist=node1 ");
    assert_not_contains(out.s, "127.0.0.1");
    /* the loop's actions: starts, a's planned completion, b's resize */
    assert_contains(out.s, "slot 0 [0, 60)\n  start a attempt 1 on node 1 "
                           "GPUs 0,1\n");
    assert_contains(out.s, "  (a completes at 50 as planned: it exits and "
                           "its GPUs stay idle to the slot's end)\nslot 1 "
                           "[60, 120)\n  resize b: checkpoint, stop, start "
                           "again\n    local: kill -TERM -PGID; after 30 s "
                           "kill -KILL -PGID\n");
    assert_contains(out.s, "  start b attempt 2 on node 0 GPUs 0,1; node 1 "
                           "GPUs 0,1\n");
    /* quoted by ef_sh_word: the value of an assignment, an argument */
    assert_contains(out.s, " NOTE='b'\\''s' NNODES=");
    assert_contains(out.s, " -- train 'it'\\''s'\n");
    /* b still runs at the end of the plan: stopped */
    assert_contains(out.s, "end of dry-run at 120: checkpoint and stop what "
                           "still runs\n  stop b\n");
    /* nothing written */
    assert_int_equal(tu_count_entries(dir), 3);
    free(out.s);
    memset(&out, 0, sizeof out);

    /* with names: trimmed, and MASTER_ADDR still agrees */
    tu_write(dir, "two.txt", " head-a \n# spare\nhead-b\n", nodes,
             sizeof nodes);
    o.nodes_file = nodes;
    o.slots = 1;
    assert_ok(exec_apply(&p, &o, &rep, &e), e);
    assert_false(rep.complete);
    check_master(out.s, 2);
    assert_contains(out.s, "--nodelist=head-b ");
    assert_contains(out.s, "  (a completes at 50 as planned: it exits and "
                           "its GPUs stay idle to the slot's end)\nend of "
                           "dry-run at 60: checkpoint and stop what still "
                           "runs\n  stop b\n");
    assert_not_contains(out.s, "slot 1 ");
    free(out.s);
    exec_report_free(&rep);
    exec_plan_free(&p);
    tu_rmtree(dir);
}

/* ---- the Slurm batch script and every byte ------------------------------- */

/* Run argv (no shell) in the test's environment; its output (merged) into
 * out for messages. Returns its exit status (exec_run_cmd). */
static int run_argv(char *const *argv, char *out, size_t len)
{
    return exec_run_cmd(argv, out, len, 1);
}

/* Remove a scratch tree (its names may hold any byte) and check it is
 * gone. */
static void rm_rf(const char *path)
{
    assert_int_equal(tu_rmtree(path), 0);
}

/* The shells a generated script must run under, as argv prefixes: dash,
 * bash --posix, and bash invoked as sh (a symlink named sh in dir/bash-sh,
 * which puts bash in POSIX mode). Fills pre[k] (up to 2 words and NULL)
 * and name[k]; returns how many were found. */
static int test_shells(const char *dir, char *pre[][3], const char **name,
                       char *link, size_t len)
{
    static const char *const dashes[] = {"/bin/dash", "/usr/bin/dash"};
    static const char *const bashes[] = {"/bin/bash", "/usr/bin/bash"};
    const char *dash = NULL, *bash = NULL;
    for (int k = 0; k < 2; k++) {
        if (!dash && access(dashes[k], X_OK) == 0)
            dash = dashes[k];
        if (!bash && access(bashes[k], X_OK) == 0)
            bash = bashes[k];
    }
    int n = 0;
    if (dash) {
        pre[n][0] = (char *)dash;
        pre[n][1] = NULL;
        name[n++] = "dash";
    } else
        print_message("    (dash not installed: not tested under dash)\n");
    if (bash) {
        pre[n][0] = (char *)bash;
        pre[n][1] = "--posix";
        pre[n][2] = NULL;
        name[n++] = "bash --posix";
        char d[512];
        tu_join(d, sizeof d, dir, "bash-sh");
        assert_int_equal(mkdir(d, 0755), 0);
        tu_join(link, len, d, "sh");
        assert_int_equal(symlink(bash, link), 0);
        pre[n][0] = link;
        pre[n][1] = NULL;
        name[n++] = "bash as sh";
    } else
        print_message("    (bash not installed: not tested under bash)\n");
    return n;
}

/* pre + more (NULL-terminated) as one argv, then run it. */
static int run_shell(char *const *pre, char *const *more, char *out,
                     size_t len)
{
    char *argv[16];
    int n = 0;
    for (int k = 0; pre[k]; k++)
        argv[n++] = pre[k];
    for (int k = 0; more[k]; k++)
        argv[n++] = more[k];
    argv[n] = NULL;
    return run_argv(argv, out, len);
}

/* The file at dir/name holds exactly want (n bytes). */
static void assert_file_is(const char *dir, const char *name,
                           const char *want, size_t n, const char *shell)
{
    char path[4096];
    char *buf;
    size_t len;
    ef_err e = {0};
    tu_join(path, sizeof path, dir, name);
    assert_ok(ef_read_file(path, &buf, &len, &e), e);
    if (len != n || memcmp(buf, want, n) != 0) {
        size_t k = 0;
        while (k < len && k < n && buf[k] == want[k])
            k++;
        print_error("    %s: %s: %zu bytes, expected %zu; first difference "
                    "at byte %zu\n", shell, name, len, n, k);
        fail();
    }
    free(buf);
}

/* The words sh reads from 'text' (eval "set -- TEXT" under the shell
 * pre, in 'dir'), each byte for byte: heap, NULL-terminated, into
 * *words. */
static int sh_words(char *const *pre, const char *text, const char *dir,
                    char ***words)
{
    char outf[4200], out[4096];
    tu_join(outf, sizeof outf, dir, "words");
    char *more[] = {"-c", "o=$2; cd \"$3\" || exit 1; eval \"set -- $1\"; "
                    "printf '%s\\0' \"$@\" > \"$o\"", "words", (char *)text,
                    outf, (char *)dir, NULL};
    if (run_shell(pre, more, out, sizeof out) != 0) {
        print_error("    %s: eval failed: %s\n", pre[0], out);
        fail();
    }
    char *buf;
    size_t len;
    ef_err e = {0};
    assert_ok(ef_read_file(outf, &buf, &len, &e), e);
    int n = 0;
    *words = ef_calloc(len + 1, sizeof **words);
    for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
        (*words)[n++] = ef_strdup(buf + i);
    free(buf);
    return n;
}

/* What the test job's command writes, relative to its working directory:
 * its first two arguments, an env value, its job id, progress file, rank
 * and working directory, each byte for byte. */
static const char *const REPORT =
    "printf %s \"$1\" > arg1; printf %s \"$2\" > arg2; "
    "printf %s \"$V1\" > env1; printf %s \"$EFPLAN_JOB_ID\" > id; "
    "printf %s \"$EFPLAN_PROGRESS_FILE\" > prog; "
    "printf %s \"$NODE_RANK\" > rank; pwd -P > wd";

/* A fresh state directory with its subdirectories. */
static void make_state(const char *st)
{
    char real[4200];
    ef_err e = {0};
    assert_ok(exec_state_dirs(st, real, &e), e);
}

/* Every byte 1..255 in the strings that reach the batch script: the state
 * directory (its rc, log and progress paths), the job id, an env value,
 * the command's arguments and its workdir. The script passes sh -n and
 * runs under dash, bash --posix and bash as sh (one node, and several
 * through a stand-in srun), and every string arrives byte for byte; the
 * exit status reaches the rc file. */
static void test_slurm_script_every_byte(void **state)
{
    (void)state;
    char all[256], noslash[256];
    size_t na = 0, ns = 0;
    for (int c = 1; c < 256; c++) {
        all[na++] = (char)c;
        if (c != '/')
            noslash[ns++] = (char)c;
    }
    all[na] = noslash[ns] = '\0';
    char dir[256], planf[512], st[4096], bin[512], srun[600];
    char link[600], out[8192];
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "plan.json", PLAN2, planf, sizeof planf);
    tu_write(dir, "jobs.json", JOBS2, NULL, 0);
    /* the state directory: one name of every byte but '/' */
    tu_join(st, sizeof st, dir, noslash);
    make_state(st);
    /* a stand-in srun: drops its options, runs the rest as node 0 */
    tu_join(bin, sizeof bin, dir, "bin");
    assert_int_equal(mkdir(bin, 0755), 0);
    tu_write(bin, "srun", "#!/bin/sh\nwhile [ $# -gt 0 ]; do case $1 in "
             "--*) shift ;; *) break ;; esac; done\nSLURM_NODEID=0 exec "
             "\"$@\"\n", srun, sizeof srun);
    assert_int_equal(chmod(srun, 0755), 0);
    char *oldpath = tu_path_prepend(bin);

    exec_plan p;
    ef_err e = {0};
    assert_ok(exec_plan_load(&p, planf, NULL, &e), e);
    /* job a: every byte in its id, an env value, arguments, workdir */
    free(p.jobs[0].id);
    p.jobs[0].id = ef_strdup(all);
    job *in = (job *)p.jobs[0].in;
    exec_strv_free(in->run.argv);
    in->run.argc = 6;
    in->run.argv = ef_calloc(7, sizeof *in->run.argv);
    in->run.argv[0] = ef_strdup("sh");
    in->run.argv[1] = ef_strdup("-c");
    in->run.argv[2] = ef_strdup(REPORT);
    in->run.argv[3] = ef_strdup("report");
    in->run.argv[4] = ef_strdup(all);
    in->run.argv[5] = ef_strdup("");
    exec_strv_free(in->run.env);
    in->run.nenv = 1;
    in->run.env = ef_calloc(2, sizeof *in->run.env);
    ef_buf kv = {0};
    ef_buf_printf(&kv, "V1=%s", all);
    in->run.env[0] = kv.s;
    free(in->run.workdir);
    in->run.workdir = ef_strdup(st);
    char realst[4096];
    assert_non_null(realpath(st, realst));
    strcat(realst, "\n");

    exec_ctx x;
    memset(&x, 0, sizeof x);
    x.p = &p;
    x.b = &exec_backend_slurm;
    x.state = st;
    char *pre[3][3];
    const char *name[3];
    int nsh = test_shells(dir, pre, name, link, sizeof link);
    /* one node (slot 0: node 1), then two (b's placement in slot 1) */
    const exec_place *places[2] = {&p.slots[0].a[0].place,
                                   &p.slots[1].a[0].place};
    char prog[4200];
    exec_path_progress(&x, 0, prog, sizeof prog);
    for (int pl = 0; pl < 2; pl++) {
        exec_run r = {.job = 0, .attempt = 1 + pl, .place = places[pl],
                      .wall_limit = 60};
        char script[4200], rcp[4200];
        exec_path_run(&x, 0, r.attempt, "sbatch", script, sizeof script);
        exec_path_run(&x, 0, r.attempt, "rc", rcp, sizeof rcp);
        char *text = exec_slurm_script(&x, &r);
        FILE *f = fopen(script, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        free(text);
        for (int k = 0; k < nsh; k++) {
            char *check[] = {"-n", script, NULL};
            if (run_shell(pre[k], check, out, sizeof out) != 0) {
                print_error("    %s -n: %s\n", name[k], out);
                fail();
            }
            unlink(rcp);
            char *go[] = {script, NULL};
            int rc = run_shell(pre[k], go, out, sizeof out);
            if (rc != 0) {
                print_error("    %s (%d nodes): exit %d: %s\n", name[k],
                            pl + 1, rc, out);
                fail();
            }
            assert_file_is(st, "arg1", all, na, name[k]);
            assert_file_is(st, "arg2", "", 0, name[k]);
            assert_file_is(st, "env1", all, na, name[k]);
            assert_file_is(st, "id", all, na, name[k]);
            assert_file_is(st, "prog", prog, strlen(prog), name[k]);
            assert_file_is(st, "rank", "0", 1, name[k]);
            assert_file_is(st, "wd", realst, strlen(realst), name[k]);
            exec_pstatus ps;
            memset(&ps, 0, sizeof ps);
            assert_int_equal(exec_read_rc(&x, &r, 1, &ps), 1);
            assert_int_equal(ps.code, 0);
        }
    }

    /* the dry run's lines: each node's environment and command, and the
     * sbatch line, read back by sh word for word */
    ef_buf dry = {0};
    x.out = collect;
    x.arg = &dry;
    exec_run r2 = {.job = 0, .attempt = 1, .place = places[1],
                   .wall_limit = 60};
    assert_ok(exec_backend_dryrun.launch(&x, &r2, &e), e);
    ef_buf wd = {0};
    ef_buf_put(&wd, " (in ");
    ef_sh_word(&wd, st);
    ef_buf_put(&wd, ") --");
    for (int rank = 0; rank < 2; rank++) {
        char head[32];
        snprintf(head, sizeof head, "\n    node %d: ", rank);
        const char *l = strstr(dry.s, head);
        assert_non_null(l);
        l += strlen(head);
        const char *in_wd = strstr(l, wd.s);
        assert_non_null(in_wd);
        /* the words without " (in DIR)": the environment, --, argv */
        const char *end = strstr(in_wd, rank ? "\n    slurm: "
                                              : "\n    node 1: ");
        assert_non_null(end);
        ef_buf line = {0};
        ef_buf_printf(&line, "%.*s --%.*s", (int)(in_wd - l), l,
                      (int)(end - in_wd - (ptrdiff_t)wd.n), in_wd + wd.n);
        char **env = exec_launch_env(&x, &r2, rank, -1, "node0", 1);
        for (int k = 0; k < nsh; k++) {
            char **w;
            int n = sh_words(pre[k], line.s, dir, &w), m = 0;
            for (; env[m]; m++) {
                assert_true(m < n);
                assert_string_equal(w[m], env[m]);
            }
            assert_true(m + 1 + in->run.argc == n);
            assert_string_equal(w[m], "--");
            for (int a = 0; a < in->run.argc; a++)
                assert_string_equal(w[m + 1 + a], in->run.argv[a]);
            exec_strv_free(w);
        }
        exec_strv_free(env);
        free(line.s);
    }
    free(wd.s);
    /* this state directory holds a backslash: sbatch --output cannot name
     * it, so the Slurm backend refuses it and the dry run says so */
    assert_contains(dry.s, "    slurm: (none: ");
    assert_contains(dry.s, ": the state directory's path holds a backslash, "
                           "which sbatch --output cannot name (use another "
                           "--state))\n");
    free(dry.s);
    x.nodes_file = "given";
    assert_err(exec_backend_slurm.prepare(&x, &e), e, st,
               ": the state directory's path holds a backslash");
    exec_backend_slurm.release(&x);
    /* without the backslash: the sbatch line names the log and the script
     * exactly ('%' is "%%" in the --output pattern) */
    char st2[4096], nobs[256];
    size_t nb = 0;
    for (size_t k = 0; k < ns; k++)
        if (noslash[k] != '\\')
            nobs[nb++] = noslash[k];
    nobs[nb] = '\0';
    tu_join(st2, sizeof st2, dir, nobs);
    x.state = st2;
    char line[16384], logp[4200], script[4200];
    exec_slurm_sbatch_line(&x, &r2, line, sizeof line);
    exec_path_log(&x, 0, 1, logp, sizeof logp);
    exec_path_run(&x, 0, 1, "sbatch", script, sizeof script);
    for (int k = 0; k < nsh; k++) {
        char **w;
        int n = sh_words(pre[k], line, dir, &w), seen = 0;
        assert_true(n > 2);
        assert_string_equal(w[0], "sbatch");
        assert_string_equal(w[n - 1], script);
        for (int i = 0; i < n; i++) {
            if (strncmp(w[i], "--output=", 9) != 0)
                continue;
            /* the file sbatch opens: "%%" is '%' */
            ef_buf f = {0};
            for (const char *c = w[i] + 9; *c; c++) {
                ef_buf_printf(&f, "%c", *c);
                if (*c == '%') {
                    assert_int_equal(c[1], '%');
                    c++;
                }
            }
            assert_string_equal(f.s, logp);
            free(f.s);
            seen++;
        }
        assert_int_equal(seen, 1);
        exec_strv_free(w);
    }
    tu_path_restore(oldpath);
    exec_plan_free(&p);
    rm_rf(dir);
}

/* Start argv (no shell) with its output to dir/log; its pid. */
static pid_t spawn(char *const *argv, const char *dir)
{
    char log[4200];
    tu_join(log, sizeof log, dir, "spawn.log");
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(argv[0], argv);
        _exit(126);
    }
    return pid;
}

/* Wait for pid, polling: at most about 20 s (then kill it and fail); its
 * wait status into *st. */
static void wait_bounded(pid_t pid, int *st)
{
    for (int k = 0; k < 4000; k++) {
        pid_t w = waitpid(pid, st, WNOHANG);
        if (w == pid)
            return;
        assert_true(w == 0);
        usleep(5000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, st, 0);
    print_error("    pid %ld did not end\n", (long)pid);
    fail();
}

/* Wait (polling, at most about 20 s) for the file at path to exist. */
static void wait_file(const char *path)
{
    for (int k = 0; k < 4000; k++) {
        if (access(path, F_OK) == 0)
            return;
        usleep(5000);
    }
    print_error("    %s never appeared\n", path);
    fail();
}

/* The batch script keeps its command's exit status, under dash, bash
 * --posix and bash as sh: exit 0 and 3, killed by a signal, and the
 * checkpoint signal sent to the script while it waits (forwarded to the
 * command, which then exits 5 from its handler, or dies of the signal);
 * the rc file says what the script itself exits with. */
static void test_slurm_script_status(void **state)
{
    (void)state;
    char dir[256], planf[512], st[512], link[600], out[4096];
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "plan.json", PLAN2, planf, sizeof planf);
    tu_write(dir, "jobs.json", JOBS2, NULL, 0);
    tu_join(st, sizeof st, dir, "state");
    make_state(st);
    char ready[600];
    tu_join(ready, sizeof ready, st, "ready");
    exec_plan p;
    ef_err e = {0};
    assert_ok(exec_plan_load(&p, planf, NULL, &e), e);
    job *in = (job *)p.jobs[0].in;
    free(in->run.workdir);
    in->run.workdir = ef_strdup(st);
    exec_ctx x;
    memset(&x, 0, sizeof x);
    x.p = &p;
    x.b = &exec_backend_slurm;
    x.state = st;
    char *pre[3][3];
    const char *name[3];
    int nsh = test_shells(dir, pre, name, link, sizeof link);
    /* {the command's sh -c text, checkpoint signal (0: none sent), the
     * exit status expected} */
    static const struct {
        const char *cmd;
        int sig, code;
    } cases[] = {
        {"exit 0", 0, 0},
        {"exit 3", 0, 3},
        {"kill -9 $$", 0, 137},
        {"trap 'exit 5' USR1; : > ready; while :; do sleep 0.01; done",
         SIGUSR1, 5},
        {": > ready; exec sleep 30", SIGTERM, 128 + SIGTERM},
    };
    int attempt = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int k = 0; k < nsh; k++) {
            exec_strv_free(in->run.argv);
            in->run.argc = 3;
            in->run.argv = ef_calloc(4, sizeof *in->run.argv);
            in->run.argv[0] = ef_strdup("sh");
            in->run.argv[1] = ef_strdup("-c");
            in->run.argv[2] = ef_strdup(cases[c].cmd);
            in->run.signal = cases[c].sig;
            exec_run r = {.job = 0, .attempt = ++attempt,
                          .place = &p.slots[0].a[0].place, .wall_limit = 60};
            char script[4200];
            exec_path_run(&x, 0, r.attempt, "sbatch", script, sizeof script);
            char *text = exec_slurm_script(&x, &r);
            FILE *f = fopen(script, "w");
            assert_non_null(f);
            fputs(text, f);
            fclose(f);
            free(text);
            char *check[] = {"-n", script, NULL};
            if (run_shell(pre[k], check, out, sizeof out) != 0) {
                print_error("    %s -n: %s\n", name[k], out);
                fail();
            }
            unlink(ready);
            char *argv[8];
            int n = 0;
            for (int w = 0; pre[k][w]; w++)
                argv[n++] = pre[k][w];
            argv[n++] = script;
            argv[n] = NULL;
            pid_t pid = spawn(argv, dir);
            if (cases[c].sig) {
                wait_file(ready);
                assert_int_equal(kill(pid, cases[c].sig), 0);
            }
            int ws;
            wait_bounded(pid, &ws);
            exec_pstatus ps;
            memset(&ps, 0, sizeof ps);
            if (!WIFEXITED(ws) || WEXITSTATUS(ws) != cases[c].code ||
                exec_read_rc(&x, &r, 1, &ps) != 1 ||
                ps.code != cases[c].code) {
                print_error("    %s, command \"%s\": script %s %d, rc file "
                            "code %d (expected %d)\n", name[k], cases[c].cmd,
                            WIFEXITED(ws) ? "exit" : "signal",
                            WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws),
                            ps.code, cases[c].code);
                fail();
            }
            if (cases[c].code > 128)
                assert_int_equal(ps.sig, cases[c].code - 128);
        }
    exec_plan_free(&p);
    rm_rf(dir);
}

/* ---- the local backend and apply when a write fails ---------------------- */

/* PLAN's jobs, each with a command that exits 0 (in the state directory
 * 'dir', where it leaves a file named after its job). */
static void write_plan_jobs(const char *dir, const char *state_dir)
{
    ef_buf b = {0};
    ef_buf_put(&b, "{\"jobs\": [");
    static const char *const ids[] = {"a", "b", "c"};
    for (int k = 0; k < 3; k++) {
        ef_buf_printf(&b, "%s{\"id\": \"%s\", \"model\": \"bert\", "
                      "\"batch_size\": 64, \"iterations\": 100, "
                      "\"submit_time\": 0, \"deadline\": 900, \"workdir\": ",
                      k ? ", " : "", ids[k]);
        ef_buf_json_str(&b, state_dir);
        ef_buf_printf(&b, ", \"command\": [\"sh\", \"-c\", \": > ran-$1\", "
                      "\"sh\", \"%s\"]}", ids[k]);
    }
    ef_buf_put(&b, "]}");
    tu_write(dir, "jobs.json", b.s, NULL, 0);
    free(b.s);
}


/* The value of KEY in env (NULL-terminated "KEY=VALUE"), or NULL. */
static const char *env_get(char **env, const char *key)
{
    size_t kl = strlen(key);
    for (int k = 0; env[k]; k++)
        if (strncmp(env[k], key, kl) == 0 && env[k][kl] == '=')
            return env[k] + kl + 1;
    return NULL;
}

/* What a launch tells its processes (PLAN2: b on 2 nodes x 2 GPUs in its
 * second slot), the rendezvous port pick, the "address in use" test of a
 * log, the world size a job reports and the torchrun options it fixes,
 * and the journal's warning and retry records. */
static void test_launch_contract(void **state)
{
    (void)state;
    char dir[256], planf[512], st[600];
    tu_tmpdir(dir, sizeof dir);
    tu_join(st, sizeof st, dir, "state");
    make_state(st);
    tu_write(dir, "plan.json", PLAN2, planf, sizeof planf);
    tu_write(dir, "jobs.json", JOBS2, NULL, 0);
    exec_plan p;
    ef_err e = {0};
    assert_ok(exec_plan_load(&p, planf, NULL, &e), e);
    exec_ctx x;
    memset(&x, 0, sizeof x);
    x.p = &p;
    x.state = st;
    int b = exec_plan_find(&p, "b");
    exec_run r = {.job = b, .attempt = 2, .place = &p.slots[1].a[0].place,
                  .port = 29777};
    /* a per-node process of node rank 1: torchrun's variables, no RANK */
    char **env = exec_launch_env(&x, &r, 1, -1, "n0", 1);
    assert_string_equal(env_get(env, "PET_NNODES"), "2");
    assert_string_equal(env_get(env, "PET_NODE_RANK"), "1");
    assert_string_equal(env_get(env, "PET_NPROC_PER_NODE"), "2");
    assert_string_equal(env_get(env, "PET_MASTER_ADDR"), "n0");
    assert_string_equal(env_get(env, "PET_MASTER_PORT"), "29777");
    assert_string_equal(env_get(env, "MASTER_PORT"), "29777");
    assert_string_equal(env_get(env, "WORLD_SIZE"), "4");
    assert_null(env_get(env, "RANK"));
    assert_null(env_get(env, "LOCAL_RANK"));
    char ck[4200];
    snprintf(ck, sizeof ck, "%s/jobs/b/checkpoints", st);
    assert_string_equal(env_get(env, "EFPLAN_CHECKPOINT_DIR"), ck);
    exec_strv_free(env);
    /* process 1 of node rank 1 of a per-GPU launch: global rank 3 */
    env = exec_launch_env(&x, &r, 1, 1, "n0", 1);
    assert_string_equal(env_get(env, "RANK"), "3");
    assert_string_equal(env_get(env, "LOCAL_RANK"), "1");
    assert_string_equal(env_get(env, "LOCAL_WORLD_SIZE"), "2");
    assert_string_equal(env_get(env, "GROUP_RANK"), "1");
    exec_strv_free(env);
    /* one GPU per node: a per-node process is the GPU's, RANK = node */
    int a = exec_plan_find(&p, "a");
    exec_place one = {0};
    placement_copy(&one, &p.slots[0].a[0].place);
    one.n = 1;
    exec_run ra = {.job = a, .attempt = 1, .place = &one};
    env = exec_launch_env(&x, &ra, 0, -1, "n1", 1);
    assert_string_equal(env_get(env, "RANK"), "0");
    assert_string_equal(env_get(env, "LOCAL_RANK"), "0");
    assert_string_equal(env_get(env, "MASTER_PORT"),
                        (snprintf(ck, sizeof ck, "%d", p.jobs[a].port), ck));
    exec_strv_free(env);

    /* the port pick skips a port something listens on */
    ra.attempt = 3;
    int port = exec_pick_port(&x, &ra);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_ANY)};
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        listen(fd, 1) == 0) {
        assert_false(exec_port_free(port));
        int other = exec_pick_port(&x, &ra);
        assert_int_not_equal(other, port);
        assert_true(exec_port_free(other));
    }
    if (fd >= 0)
        close(fd);

    /* "address in use" in the log's tail, any case; other text is not */
    char logp[4200], path[4300];
    exec_path_log(&x, b, 2, logp, sizeof logp);
    assert_ok(exec_make_checkpoints(&x, b, &e), e);
    tu_write(st, "jobs/b/2.log", "step 1\nRuntimeError: ... (errno: 98 - "
             "Address already in use)\n", NULL, 0);
    assert_true(exec_log_addr_in_use(&x, b, 2));
    tu_write(st, "jobs/b/2.log", "bind failed: EADDRINUSE\n", NULL, 0);
    assert_true(exec_log_addr_in_use(&x, b, 2));
    tu_write(st, "jobs/b/2.log", "Traceback: out of memory\n", NULL, 0);
    assert_false(exec_log_addr_in_use(&x, b, 2));
    assert_false(exec_log_addr_in_use(&x, b, 7)); /* no log */

    /* a world size counts for the attempt that wrote it only */
    tu_write(st, "jobs/b/progress", "12 world=8 attempt=2\n", NULL, 0);
    assert_int_equal(exec_read_progress(&x, b), 12);
    assert_int_equal(exec_read_world(&x, b, 2), 8);
    assert_int_equal(exec_read_world(&x, b, 3), 0);
    tu_write(st, "jobs/b/progress", "12\n", NULL, 0);
    assert_int_equal(exec_read_world(&x, b, 2), 0);
    char msg[512];
    assert_true(exec_world_check(&x, &r, 8, msg, sizeof msg));
    assert_non_null(strstr(msg, "job b attempt 2 runs world size 8 on an "
                                "allocation of 4 GPUs (2 nodes x 2)"));
    assert_false(exec_world_check(&x, &r, 4, msg, sizeof msg));
    /* a torchrun command: what it fixes against the attempt's shape */
    job *in = (job *)p.jobs[b].in;
    char **saved = in->run.argv;
    int saved_c = in->run.argc;
    struct {
        char *argv[10];
        int warn;
    } cases[] = {
        {{"torchrun", "train.py", NULL}, 0},
        {{"/usr/bin/torchrun", "--nproc-per-node", "2", "--nnodes=2",
          "t.py", NULL}, 0},
        {{"torchrun", "--nproc_per_node=4", "t.py", NULL}, 1},
        {{"torchrun", "--nnodes", "1", "t.py", NULL}, 1},
        {{"torchrun", "--nnodes=1:4", "t.py", "--nnodes", "1", NULL}, 0},
        {{"python3", "-m", "torch.distributed.run", "--nproc-per-node", "8",
          "t.py", NULL}, 1},
        {{"python3", "t.py", "--nproc-per-node", "8", NULL}, 0},
        {{"sh", "-c", "torchrun --nproc-per-node 8 t.py", NULL}, 0},
        /* other options' values are not the script */
        {{"torchrun", "--redirects", "2", "--tee", "2", "--nproc_per_node",
          "4", "t.py", NULL}, 1},
        {{"torchrun", "--standalone", "--nnodes", "1", "t.py", NULL}, 1},
        {{"torchrun", "--redirects", "2", "t.py", "--nnodes", "1", NULL}, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        in->run.argv = cases[c].argv;
        int n = 0;
        while (cases[c].argv[n])
            n++;
        in->run.argc = n;
        if (exec_world_check(&x, &r, 0, msg, sizeof msg) != cases[c].warn)
            fail_msg("case %zu: expected %s", c,
                     cases[c].warn ? "a warning" : "none");
        if (cases[c].warn)
            assert_non_null(strstr(msg, "its torchrun command fixes"));
    }
    in->run.argv = saved;
    in->run.argc = saved_c;

    /* the journal: a warning is replayed as given once, a retry keeps the
     * job pending */
    snprintf(path, sizeof path, "%s/journal.jsonl", st);
    exec_journal jn;
    exec_replay rp;
    exec_replay_init(&rp, &p);
    assert_ok(exec_journal_open(&jn, path, &e), e);
    exec_place pl = p.slots[1].a[0].place;
    assert_ok(exec_journal_put(&jn, &rp, &p, &(exec_rec){.ev = EXEC_R_START,
              .job = "b", .attempt = 1, .place = pl, .slot = 60, .at = 1},
              &e), e);
    assert_ok(exec_journal_put(&jn, &rp, &p, &(exec_rec){.ev = EXEC_R_STARTED,
              .job = "b", .attempt = 1, .handle = "h"}, &e), e);
    assert_ok(exec_journal_put(&jn, &rp, &p, &(exec_rec){.ev = EXEC_R_WARNING,
              .job = "b", .attempt = 1, .msg = "world 8"}, &e), e);
    assert_ok(exec_journal_put(&jn, &rp, &p, &(exec_rec){.ev = EXEC_R_EXIT,
              .job = "b", .attempt = 1, .code = 1, .why = "exit 1",
              .result = EXEC_RESULT_RETRY, .log = logp, .progress = 3}, &e),
              e);
    exec_journal_close(&jn);
    exec_replay rr;
    assert_ok(exec_journal_replay(path, &p, &rr, &e), e);
    assert_int_equal(rr.jobs[b].status, EXEC_J_PENDING);
    assert_int_equal(rr.jobs[b].retries, 1);
    assert_int_equal(rr.jobs[b].warned, 1);
    assert_int_equal(rr.jobs[b].running, 0);
    exec_replay_free(&rr);
    exec_replay_free(&rp);
    placement_free(&one);
    exec_plan_free(&p);
}

/* The local monitor's writes are checked. Its rc file cannot be written
 * (a directory stands at its path): the attempt, whose command exited 0,
 * stays running (never "lost") until the write succeeds, then exits 0.
 * Its pid file cannot be written: the launch fails, naming the file, and
 * the command is not started. */
static void test_local_write_fails(void **state)
{
    (void)state;
    char dir[256], planf[512], st[600], rcp[4200], pidp[4200], ran[700];
    tu_tmpdir(dir, sizeof dir);
    tu_join(st, sizeof st, dir, "state");
    make_state(st);
    tu_write(dir, "plan.json", PLAN, planf, sizeof planf);
    write_plan_jobs(dir, st);
    exec_plan p;
    ef_err e = {0};
    assert_ok(exec_plan_load(&p, planf, NULL, &e), e);
    exec_ctx x;
    memset(&x, 0, sizeof x);
    x.p = &p;
    x.b = &exec_backend_local;
    x.state = st;
    assert_ok(exec_backend_local.prepare(&x, &e), e);
    exec_run r = {.job = 0, .attempt = 1, .place = &p.slots[0].a[0].place,
                  .wall_limit = 60};
    exec_path_run(&x, 0, 1, "rc", rcp, sizeof rcp);
    assert_int_equal(mkdir(rcp, 0755), 0);
    assert_ok(exec_backend_local.launch(&x, &r, &e), e);
    tu_join(ran, sizeof ran, st, "ran-a");
    wait_file(ran);
    exec_pstatus ps;
    for (int k = 0; k < 100; k++) {
        assert_ok(exec_backend_local.poll(&x, &r, &ps, &e), e);
        assert_int_equal(ps.state, EXEC_P_RUNNING);
        usleep(10000);
    }
    assert_int_equal(rmdir(rcp), 0);
    for (int k = 0; k < 4000; k++) {
        assert_ok(exec_backend_local.poll(&x, &r, &ps, &e), e);
        if (ps.state != EXEC_P_RUNNING)
            break;
        usleep(5000);
    }
    assert_int_equal(ps.state, EXEC_P_EXITED);
    assert_int_equal(ps.code, 0);
    assert_int_equal(ps.sig, 0);
    /* the pid file */
    exec_run r2 = {.job = 1, .attempt = 1, .place = &p.slots[1].a[1].place,
                   .wall_limit = 60};
    exec_path_run(&x, 1, 1, "pid", pidp, sizeof pidp);
    assert_int_equal(mkdir(pidp, 0755), 0);
    assert_err_kind(exec_backend_local.launch(&x, &r2, &e), e,
                    EF_E_INTERNAL, "launch of b attempt 1: ", pidp);
    assert_contains(e.msg, "(the command was not started)");
    tu_join(ran, sizeof ran, st, "ran-b");
    assert_int_equal(access(ran, F_OK), -1);
    exec_backend_local.release(&x);
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    exec_plan_free(&p);
    rm_rf(dir);
}

/* 1 while process 'pid' lives (a zombie does not). */
static int proc_lives(const char *pidfile)
{
    char buf[64] = "";
    FILE *f = fopen(pidfile, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    long pid = strtol(buf, NULL, 10);
    assert_true(pid > 1);
    char path[64], st[512] = "";
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    n = fread(st, 1, sizeof st - 1, f);
    fclose(f);
    st[n] = '\0';
    const char *p = strrchr(st, ')');
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* Poll attempt r until it ends (bounded): its status. */
static exec_pstatus poll_end(exec_ctx *x, const exec_run *r)
{
    exec_pstatus ps = {EXEC_P_RUNNING, 0, 0};
    ef_err e = {0};
    for (int k = 0; k < 4000; k++) {
        assert_ok(exec_backend_local.poll(x, r, &ps, &e), e);
        if (ps.state != EXEC_P_RUNNING)
            break;
        usleep(5000);
    }
    return ps;
}

/* What an attempt leaves running is stopped with it. a exits 0 at once,
 * leaving a child in its process group and a daemon (setsid: another
 * session); b ignores SIGTERM, with the same two: the checkpoint signal
 * changes nothing, the forced stop kills it, and its status is "signal
 * 9" (not lost: its monitor lives to record it). c's monitor is killed
 * while c runs: c is lost, and its processes are killed as that is
 * seen; c's attempt 2 leaves the group (setsid) and ignores SIGTERM: the
 * forced stop ends it. Once each attempt has ended, nothing of it
 * runs. */
static void test_local_leftovers(void **state)
{
    (void)state;
    char dir[256], planf[512], st[600], pf[700];
    tu_tmpdir(dir, sizeof dir);
    tu_join(st, sizeof st, dir, "state");
    make_state(st);
    tu_write(dir, "plan.json", PLAN, planf, sizeof planf);
    /* $1: the job; each leftover writes its pid to st/JOB.bg, st/JOB.dm */
    static const char *const cmd[] = {
        /* a */ "sleep 300 & echo $! >$1.bg; "
                "setsid sh -c 'echo $$ >$0.dm; exec sleep 300' $1 & "
                "while [ ! -s $1.dm ]; do sleep 0.01; done; exit 0",
        /* b */ "trap '' TERM; sleep 300 & echo $! >$1.bg; "
                "setsid sh -c 'echo $$ >$0.dm; exec sleep 300' $1 & "
                "while [ ! -s $1.dm ]; do sleep 0.01; done; "
                ": >$1.up; wait",
        /* c */ "if [ $EFPLAN_ATTEMPT = 2 ]; then exec setsid sh -c "
                "'trap \"\" TERM; echo $$ >$0.sd; "
                "while :; do sleep 0.05; done' $1; fi; "
                "sleep 300 & echo $! >$1.bg; : >$1.up; wait"};
    static const char *const ids[] = {"a", "b", "c"};
    ef_buf b = {0};
    ef_buf_put(&b, "{\"jobs\": [");
    for (int k = 0; k < 3; k++) {
        ef_buf_printf(&b, "%s{\"id\": \"%s\", \"model\": \"bert\", "
                      "\"batch_size\": 64, \"iterations\": 100, "
                      "\"submit_time\": 0, \"deadline\": 900, "
                      "\"grace_seconds\": 0, \"workdir\": ", k ? ", " : "",
                      ids[k]);
        ef_buf_json_str(&b, st);
        ef_buf_put(&b, ", \"command\": [\"sh\", \"-c\", ");
        ef_buf_json_str(&b, cmd[k]);
        ef_buf_printf(&b, ", \"sh\", \"%s\"]}", ids[k]);
    }
    ef_buf_put(&b, "]}");
    tu_write(dir, "jobs.json", b.s, NULL, 0);
    free(b.s);
    exec_plan p;
    ef_err e = {0};
    assert_ok(exec_plan_load(&p, planf, NULL, &e), e);
    exec_ctx x;
    memset(&x, 0, sizeof x);
    x.p = &p;
    x.b = &exec_backend_local;
    x.state = st;
    assert_ok(exec_backend_local.prepare(&x, &e), e);
    int ja = exec_plan_find(&p, "a"), jb = exec_plan_find(&p, "b");
    /* a: exit 0, its leftovers gone when its status is there */
    exec_run ra = {.job = ja, .attempt = 1, .place = &p.slots[0].a[0].place,
                   .wall_limit = 60};
    assert_ok(exec_backend_local.launch(&x, &ra, &e), e);
    exec_pstatus ps = poll_end(&x, &ra);
    assert_int_equal(ps.state, EXEC_P_EXITED);
    assert_int_equal(ps.code, 0);
    tu_join(pf, sizeof pf, st, "a.bg");
    assert_false(proc_lives(pf));
    tu_join(pf, sizeof pf, st, "a.dm");
    assert_false(proc_lives(pf));
    /* b: the checkpoint signal is ignored; the forced stop ends it all */
    exec_run rb = {.job = jb, .attempt = 1, .place = &p.slots[1].a[1].place,
                   .wall_limit = 60};
    assert_ok(exec_backend_local.launch(&x, &rb, &e), e);
    tu_join(pf, sizeof pf, st, "b.up");
    wait_file(pf);
    assert_ok(exec_backend_local.signal(&x, &rb, SIGTERM, &e), e);
    usleep(100000);
    assert_ok(exec_backend_local.poll(&x, &rb, &ps, &e), e);
    assert_int_equal(ps.state, EXEC_P_RUNNING);
    assert_ok(exec_backend_local.stop(&x, &rb, &e), e);
    ps = poll_end(&x, &rb);
    assert_int_equal(ps.state, EXEC_P_EXITED);
    assert_int_equal(ps.sig, SIGKILL);
    tu_join(pf, sizeof pf, st, "b.bg");
    assert_false(proc_lives(pf));
    tu_join(pf, sizeof pf, st, "b.dm");
    assert_false(proc_lives(pf));
    /* c: its monitor killed (not a stop): lost, and nothing of it runs */
    int jc = exec_plan_find(&p, "c");
    exec_run rc = {.job = jc, .attempt = 1, .place = &p.slots[0].a[1].place,
                   .wall_limit = 60};
    assert_ok(exec_backend_local.launch(&x, &rc, &e), e);
    tu_join(pf, sizeof pf, st, "c.up");
    wait_file(pf);
    pid_t mon = (pid_t)strtol(rc.handle, NULL, 10);
    assert_int_equal(kill(mon, SIGKILL), 0);
    assert_int_equal(waitpid(mon, NULL, 0), mon);
    assert_ok(exec_backend_local.poll(&x, &rc, &ps, &e), e);
    assert_int_equal(ps.state, EXEC_P_GONE);
    tu_join(pf, sizeof pf, st, "c.bg");
    for (int k = 0; k < 200 && proc_lives(pf); k++)
        usleep(5000); /* (SIGKILL is delivered, not waited for) */
    assert_false(proc_lives(pf));
    /* c's attempt 2 leaves the group itself (setsid) and ignores
     * SIGTERM: the forced stop still ends it */
    rc.attempt = 2;
    assert_ok(exec_backend_local.launch(&x, &rc, &e), e);
    tu_join(pf, sizeof pf, st, "c.sd");
    wait_file(pf);
    assert_ok(exec_backend_local.stop(&x, &rc, &e), e);
    ps = poll_end(&x, &rc);
    assert_int_equal(ps.state, EXEC_P_EXITED);
    assert_int_equal(ps.sig, SIGKILL);
    assert_false(proc_lives(pf));
    exec_backend_local.release(&x);
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    exec_plan_free(&p);
    rm_rf(dir);
}

/* state.json cannot be written at the end of the plan (a directory stands
 * at its path): apply fails, and the journal is not closed (no "end"), so
 * the rerun finishes the plan and writes state.json instead of saying it
 * was already applied; the run after that does. */
static void test_apply_state_write_fails(void **state)
{
    (void)state;
    char dir[256], planf[512], st[600], sj[700];
    tu_tmpdir(dir, sizeof dir);
    tu_join(st, sizeof st, dir, "state");
    tu_write(dir, "plan.json", PLAN, planf, sizeof planf);
    write_plan_jobs(dir, st);
    exec_plan p;
    ef_err e = {0};
    assert_ok(exec_plan_load(&p, planf, NULL, &e), e);
    assert_int_equal(mkdir(st, 0755), 0);
    tu_join(sj, sizeof sj, st, "state.json");
    assert_int_equal(mkdir(sj, 0755), 0);
    exec_opts o;
    exec_opts_default(&o);
    o.state = st;
    o.scale = 48000; /* the plan's 480 s in 10 ms */
    o.poll = 0.002;
    exec_report rep;
    assert_err_kind(exec_apply(&p, &o, &rep, &e), e, EF_E_INTERNAL, sj,
                    NULL);
    exec_report_free(&rep);
    exec_replay r;
    assert_ok(exec_journal_replay(rep.journal, &p, &r, &e), e);
    assert_int_equal(r.ended, 0);
    exec_replay_free(&r);
    assert_int_equal(rmdir(sj), 0);
    assert_ok(exec_apply(&p, &o, &rep, &e), e);
    assert_int_equal(rep.already_done, 0);
    assert_true(rep.complete);
    char *text;
    size_t len;
    assert_ok(ef_read_file(sj, &text, &len, &e), e);
    assert_contains(text, "\"complete\": true");
    free(text);
    assert_ok(exec_journal_replay(rep.journal, &p, &r, &e), e);
    assert_int_equal(r.ended, 1);
    exec_replay_free(&r);
    exec_report_free(&rep);
    assert_ok(exec_apply(&p, &o, &rep, &e), e);
    assert_int_equal(rep.already_done, 1);
    exec_report_free(&rep);
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    exec_plan_free(&p);
    rm_rf(dir);
}

/* ---- squeue on a busy cluster -------------------------------------------- */

/* apply asks squeue for this user's jobs only (and those of the accounts
 * its attempts run as) and reads its answer whatever its size: a stand-in squeue on PATH that prints more than
 * 1.2 MB of other jobs (in the format asked for: --json or --format),
 * with this plan's attempt last and one of another plan's, is read to its
 * end: the attempt is found by its name and polled as running. */
static void test_squeue_busy(void **state)
{
    (void)state;
    char dir[256], planf[512], st[600], bin[512], fake[700], args[700];
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "plan.json", PLAN2, planf, sizeof planf);
    tu_write(dir, "jobs.json", JOBS2, NULL, 0);
    tu_join(st, sizeof st, dir, "state");
    make_state(st);
    tu_join(bin, sizeof bin, dir, "bin");
    assert_int_equal(mkdir(bin, 0755), 0);
    tu_join(args, sizeof args, dir, "squeue.args");
    exec_plan p;
    ef_err e = {0};
    assert_ok(exec_plan_load(&p, planf, NULL, &e), e);
    char name[128];
    snprintf(name, sizeof name, "efp-%.8s-a-1", p.hash);
    ef_buf sh = {0};
    ef_buf_printf(&sh, "#!/bin/sh\nprintf '%%s\\n' \"$@\" > '%s'\n"
        "for a; do [ \"$a\" = --json ] && exec awk 'BEGIN {\n"
        "  printf \"{\\\"jobs\\\": [\"\n"
        "  for (i = 1; i <= 12000; i++)\n"
        "    printf \"{\\\"job_id\\\": %%d, \\\"name\\\": \\\"a job of "
        "someone else %%d, padded to be long enough\\\", \\\"job_state\\\": "
        "\\\"RUNNING\\\", \\\"user_name\\\": \\\"user%%d\\\"}, \", i, i, "
        "i %% 50\n"
        "  printf \"{\\\"job_id\\\": 999998, \\\"name\\\": "
        "\\\"efp-deadbeef-a-1\\\", \\\"job_state\\\": \\\"RUNNING\\\"}, \"\n"
        "  printf \"{\\\"job_id\\\": 999999, \\\"name\\\": \\\"%s\\\", "
        "\\\"job_state\\\": \\\"RUNNING\\\"}]}\\n\" }'\n"
        "done\n"
        "awk 'BEGIN {\n"
        "  for (i = 1; i <= 22000; i++)\n"
        "    printf \"%%d RUNNING a job of someone else %%d, padded to be "
        "long\\n\", i, i\n"
        "  print \"999998 RUNNING efp-deadbeef-a-1\"\n"
        "  print \"999999 RUNNING %s\" }'\n", args, name, name);
    tu_write(bin, "squeue", sh.s, fake, sizeof fake);
    free(sh.s);
    assert_int_equal(chmod(fake, 0755), 0);
    char *oldpath = tu_path_prepend(bin);

    exec_ctx x;
    memset(&x, 0, sizeof x);
    x.p = &p;
    x.b = &exec_backend_slurm;
    x.state = st;
    x.nodes_file = "given"; /* no sinfo */
    assert_ok(exec_backend_slurm.prepare(&x, &e), e);
    exec_run r = {.job = 0, .attempt = 1, .place = &p.slots[0].a[0].place,
                  .wall_limit = 60};
    assert_int_equal(exec_backend_slurm.find(&x, &r, &e), 1);
    assert_string_equal(r.handle, "999999");
    exec_pstatus ps;
    assert_ok(exec_backend_slurm.poll(&x, &r, &ps, &e), e);
    assert_int_equal(ps.state, EXEC_P_RUNNING);
    /* asked for this user's jobs only */
    char *text, user[64];
    size_t len;
    assert_ok(ef_read_file(args, &text, &len, &e), e);
    snprintf(user, sizeof user, "\n--user=%ld\n", (long)getuid());
    assert_contains(text, user);
    free(text);
    /* an attempt that runs as another account (efplan serve as root:
     * sbatch --uid) is that account's job in Slurm: squeue is asked for
     * its jobs too, at once, and again after (none twice) */
    exec_user other = {.uid = getuid() + 4242, .gid = getgid()};
    snprintf(other.name, sizeof other.name, "someone");
    exec_run ro = r;
    ro.user = &other;
    for (int k = 0; k < 2; k++) {
        assert_int_equal(exec_backend_slurm.find(&x, &ro, &e), 1);
        assert_ok(ef_read_file(args, &text, &len, &e), e);
        snprintf(user, sizeof user, "\n--user=%ld,%ld\n", (long)getuid(),
                 (long)other.uid);
        assert_contains(text, user);
        free(text);
    }
    exec_backend_slurm.release(&x);
    tu_path_restore(oldpath);
    exec_plan_free(&p);
    rm_rf(dir);
}

/* An squeue that fails (the controller down), asked for the jobs of two
 * accounts (an attempt that runs as another one): an error naming squeue
 * and its own message, from its second run with stderr merged (the
 * --user=... word outlives the first run). */
static void test_squeue_fails(void **state)
{
    (void)state;
    char dir[256], planf[512], st[600], bin[512], fake[700];
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "plan.json", PLAN2, planf, sizeof planf);
    tu_write(dir, "jobs.json", JOBS2, NULL, 0);
    tu_join(st, sizeof st, dir, "state");
    make_state(st);
    tu_join(bin, sizeof bin, dir, "bin");
    assert_int_equal(mkdir(bin, 0755), 0);
    /* (up while prepare asks for this user's jobs alone) */
    tu_write(bin, "squeue", "#!/bin/sh\ncase $2 in *,*) ;; *) exit 0 ;; esac\n"
             "echo 'squeue: error: Unable to contact slurm controller "
             "('\"$2\"')' >&2\nexit 1\n", fake, sizeof fake);
    assert_int_equal(chmod(fake, 0755), 0);
    char *oldpath = tu_path_prepend(bin);
    exec_plan p;
    ef_err e = {0};
    assert_ok(exec_plan_load(&p, planf, NULL, &e), e);
    exec_ctx x;
    memset(&x, 0, sizeof x);
    x.p = &p;
    x.b = &exec_backend_slurm;
    x.state = st;
    x.nodes_file = "given"; /* no sinfo */
    assert_ok(exec_backend_slurm.prepare(&x, &e), e);
    exec_user other = {.uid = getuid() + 4242, .gid = getgid()};
    snprintf(other.name, sizeof other.name, "someone");
    exec_run r = {.job = 0, .attempt = 1, .place = &p.slots[0].a[0].place,
                  .wall_limit = 60, .user = &other};
    assert_int_equal(exec_backend_slurm.find(&x, &r, &e), EF_ERR);
    char want[160];
    snprintf(want, sizeof want, "squeue failed (exit 1): squeue: error: "
             "Unable to contact slurm controller (--user=%ld,%ld)",
             (long)getuid(), (long)other.uid);
    assert_contains(e.msg, want);
    exec_backend_slurm.release(&x);
    tu_path_restore(oldpath);
    exec_plan_free(&p);
    rm_rf(dir);
}

/* ---- scancel of a job that already ended ------------------------------------ */

/* A job that ends between apply's last look and its scancel is what the
 * stop asked for: a stand-in scancel that answers as Slurm does for a job
 * the controller already forgot ("Invalid job id specified", exit 1) or is
 * finishing lets the stop succeed; any other failure is still an error
 * that names scancel and its message. */
static void test_scancel_ended(void **state)
{
    (void)state;
    static const char *const answers[] = {
        "scancel: error: Kill job error on job id 3: Invalid job id specified",
        "scancel: error: Kill job error on job id 3: Job/step already "
        "completing or completed",
        "scancel: error: Unable to contact slurm controller"};
    char dir[256], bin[512], fake[700];
    tu_tmpdir(dir, sizeof dir);
    tu_join(bin, sizeof bin, dir, "bin");
    assert_int_equal(mkdir(bin, 0755), 0);
    char *oldpath = tu_path_prepend(bin);
    for (int i = 0; i < 3; i++) {
        ef_buf sh = {0};
        ef_buf_printf(&sh, "#!/bin/sh\necho '%s' >&2\nexit 1\n", answers[i]);
        tu_write(bin, "scancel", sh.s, fake, sizeof fake);
        free(sh.s);
        assert_int_equal(chmod(fake, 0755), 0);
        exec_ctx x;
        memset(&x, 0, sizeof x);
        exec_run r = {.job = 0, .attempt = 1};
        snprintf(r.handle, sizeof r.handle, "3");
        ef_err e = {0};
        int rc = exec_backend_slurm.stop(&x, &r, &e);
        if (i < 2) {
            assert_ok(rc, e);
        } else {
            assert_int_equal(rc, EF_ERR);
            assert_contains(e.msg, "scancel");
            assert_contains(e.msg, "Unable to contact");
        }
    }
    tu_path_restore(oldpath);
    rm_rf(dir);
}

/* ---- journal records round trip ------------------------------------------- */

static uint64_t rng = 88172645463325252ULL;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* Every record type, with generated members: written, read back, equal,
 * and written again to the same bytes. */
static void test_journal_roundtrip(void **state)
{
    (void)state;
    static const char *const words[] = {"a", "plan \"x\".json", "exit 3",
                                        "end", "\u00e9t\u00e9\n\t", ""};
    int node[8], gpu[8];
    for (int it = 0; it < 400; it++) {
        exec_rec r;
        memset(&r, 0, sizeof r);
        r.ev = (exec_rtype)(it % EXEC_R_COUNT);
        r.job = (rnd() % 2) ? "job-1" : "b";
        r.attempt = (int)(rnd() % 9);
        r.place.n = 1 + (int)(rnd() % 8);
        for (int k = 0; k < r.place.n; k++) {
            node[k] = k / 4;
            gpu[k] = k % 4;
        }
        r.place.node = node;
        r.place.gpu = gpu;
        r.place.batch = (rnd() % 2) ? 0 : 32 << (rnd() % 4);
        r.slot = rnd() % 100000;
        r.at = 1.7e9 + rnd() / 7.0;
        r.handle = words[rnd() % 6];
        r.adopted = (int)(rnd() % 2);
        r.why = words[rnd() % 6];
        r.how = words[rnd() % 6];
        r.progress = (int64_t)(rnd() % 5000) - 1;
        r.code = (int)(rnd() % 200) - 1;
        r.result = (exec_result)(rnd() % 2);
        r.log = words[rnd() % 6];
        r.plan = words[rnd() % 6];
        r.hash = "0123456789abcdef";
        r.backend = (rnd() % 2) ? "local" : "slurm";
        r.anchor_wall = rnd() / 3.0;
        r.scale = 1 + rnd() % 300;
        r.anchor_plan = rnd();
        r.start = rnd() % 100000;
        r.running = (int)(rnd() % 10);
        r.time = rnd();
        r.msg = words[rnd() % 6];
        r.differs = (int)(rnd() % 2);
        char *t1 = exec_rec_json(&r);
        exec_rec back;
        jf_arena a = {0};
        ef_err e = {0};
        assert_ok(exec_rec_parse(t1, &back, &a, &e), e);
        assert_true(exec_rec_equal(&r, &back));
        char *t2 = exec_rec_json(&back);
        assert_string_equal(t1, t2);
        free(t1);
        free(t2);
        jf_arena_free(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_parse),
        cmocka_unit_test(test_plan_errors),
        cmocka_unit_test(test_plan_v2),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_diff_plan),
        cmocka_unit_test(test_safe_names_unique),
        cmocka_unit_test(test_journal_replay),
        cmocka_unit_test(test_state_keeps_job_fields),
        cmocka_unit_test(test_state_carries_submitted),
        cmocka_unit_test(test_expected),
        cmocka_unit_test(test_behind),
        cmocka_unit_test(test_state_look),
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_hostlist),
        cmocka_unit_test(test_read_rc),
        cmocka_unit_test(test_dry_run),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_journal_roundtrip),
        cmocka_unit_test(test_slurm_script_every_byte),
        cmocka_unit_test(test_slurm_script_status),
        cmocka_unit_test(test_local_write_fails),
        cmocka_unit_test(test_local_leftovers),
        cmocka_unit_test(test_launch_contract),
        cmocka_unit_test(test_apply_state_write_fails),
        cmocka_unit_test(test_squeue_busy),
        cmocka_unit_test(test_squeue_fails),
        cmocka_unit_test(test_scancel_ended),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
