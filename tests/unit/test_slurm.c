/* test_slurm.c: the Slurm backend's own parts (executor/slurm.c, and the
 * placements it reads back): the --sbatch-arg check, where Slurm put an
 * attempt's GPUs (scontrol show job -d, through stand-in commands), the
 * journal's "placed" record and what follows it (exec_place_follow, the
 * state file), the node addresses (MASTER_ADDR), the batch script's
 * rendezvous port probe and its ranks through srun. */
#define _GNU_SOURCE 1 /* setenv, symlink */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <jansson.h>

#include "common/util.h"
#include "executor/exec.h"

/* ---- helpers ---------------------------------------------------------------- */

/* An executable stand-in command 'name' in dir/bin holding 'text'. */
static void stand_in(const char *dir, const char *name, const char *text)
{
    char bin[600], path[700];
    tu_join(bin, sizeof bin, dir, "bin");
    mkdir(bin, 0755);
    tu_write(bin, name, text, path, sizeof path);
    assert_int_equal(chmod(path, 0755), 0);
}

static void rm_rf(const char *path)
{
    char out[256];
    char *argv[] = {"rm", "-rf", "--", (char *)path, NULL};
    assert_int_equal(exec_run_cmd(argv, out, sizeof out, 1), 0);
}

/* A placement from "NODE:GPU NODE:GPU ..." (sorted as given). */
static exec_place pl_of(const char *text)
{
    exec_place p = {0, ef_malloc(64 * sizeof(int)), ef_malloc(64 * sizeof(int)),
                    0};
    for (const char *s = text; *s;) {
        int nd, g, used;
        if (sscanf(s, "%d:%d%n", &nd, &g, &used) != 2)
            break;
        p.node[p.n] = nd;
        p.gpu[p.n++] = g;
        s += used;
        while (*s == ' ')
            s++;
    }
    return p;
}

static void assert_place(const exec_place *p, const char *text)
{
    exec_place w = pl_of(text);
    char a[512], b[512];
    if (!(p->n == w.n && (w.n == 0 || (memcmp(p->node, w.node, (size_t)w.n *
                                                   sizeof(int)) == 0 &&
                                       memcmp(p->gpu, w.gpu, (size_t)w.n *
                                                 sizeof(int)) == 0)))) {
        print_error("    placement %s, expected %s\n",
                    exec_place_str(p, a, sizeof a),
                    exec_place_str(&w, b, sizeof b));
        fail();
    }
    exec_place_free(&w);
}

/* ---- --sbatch-arg ------------------------------------------------------------- */

static void test_check_arg(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "--mem=16G", "--comment=a b", "--exclusive", "--gres-flags=enforce-binding",
        "--time-min=10", "--constraint=a100", "-c4", "-C", "--cpus-per-task=2",
        "--mem-per-gpu=8G", "--reservation=r", "--signal=B:USR1@60",
        "--requeue", "--nice=10", "--wckey=x", "-vvv", "-xnode3",
        "--gres=nvme:1", "--gres=fpga,license:2", "--gres=gpunode:1"};
    static const char *const bad[][2] = {
        {"--nodelist=n1", "--nodelist is efplan's"},
        {"--nodel=n1", "--nodel is efplan's"},
        {"--node=2", "--node is efplan's"},
        {"--nodes", "--nodes is efplan's"},
        {"--gres=gpu:2", "--gres is efplan's"},
        {"--gres=nvme:1,gpu:a100:2", "resources other than GPUs may be"},
        {"--gres=gpu", "--gres is efplan's"},
        {"--gres", "--gres is efplan's"},
        {"--mem 4G", "an option and its value in one word with a blank "
                     "between (sbatch would get it as one word, no option "
                     "it knows); write --sbatch-arg=--mem=4G"},
        {"-c 4", "write --sbatch-arg=-c4"},
        {"--gpus-per-node=2", "--gpus-per-node is efplan's"},
        {"--gpus=4", "--gpus is efplan's"},
        {"--job-name=x", "--job-name is efplan's (efplan names each attempt"},
        {"--output=/tmp/x", "--output is efplan's"},
        {"--error=/tmp/x", "--error is efplan's"},
        {"--ntasks=4", "--ntasks is efplan's"},
        {"--ntasks-per-node=8", "--ntasks-per-node is efplan's"},
        {"--ntasks-per-tres=1", "--ntasks-per-tres is efplan's"},
        {"--time=10", "--time is efplan's"},
        {"--tim=10", "--tim is efplan's"},
        {"--parsable", "--parsable is efplan's"},
        {"--partition=p", "--partition is efplan's (efplan has an option"},
        {"--account=a", "--account is efplan's"},
        {"--qos=q", "--qos is efplan's"},
        {"--array=1-3", "--array is efplan's (sbatch would not submit"},
        {"--wrap=true", "--wrap is efplan's"},
        {"--test-only", "--test-only is efplan's"},
        {"--wait", "--wait is efplan's"},
        {"--help", "--help is efplan's"},
        {"-N2", "-N is efplan's"},
        {"-vN2", "-N is efplan's"},
        {"-wnode1", "-w is efplan's"},
        {"-Jx", "-J is efplan's"},
        {"-t10", "-t is efplan's"},
        {"-pgpu", "-p is efplan's"},
        {"-W", "-W is efplan's"},
        {"4G", "expected one sbatch option word"},
        {"", "expected one sbatch option word"},
        {"-", "expected one sbatch option word"},
        {"--", "expected one sbatch option word"}};
    ef_err e = {0};
    for (size_t k = 0; k < sizeof ok / sizeof *ok; k++) {
        if (exec_slurm_check_arg(ok[k], &e) != EF_OK) {
            print_error("    %s refused: %s\n", ok[k], e.msg);
            fail();
        }
    }
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        memset(&e, 0, sizeof e);
        assert_int_equal(exec_slurm_check_arg(bad[k][0], &e), EF_ERR);
        assert_int_equal(e.kind, EF_E_USAGE);
        char head[128];
        snprintf(head, sizeof head, "--sbatch-arg \"%s\": ", bad[k][0]);
        assert_prefix(e.msg, head);
        assert_contains(e.msg, bad[k][1]);
    }
    /* "-x" takes a value: the rest of the word is a node list, not flags */
    assert_ok(exec_slurm_check_arg("-xNwJ", &e), e);
    exec_slurm_opts so = {0};
    assert_false(exec_slurm_opts_any(&so));
    so.qos = "q";
    assert_true(exec_slurm_opts_any(&so));
}

/* ---- same shape, follow ----------------------------------------------------- */

static void test_follow(void **state)
{
    (void)state;
    exec_place a = pl_of("0:0 0:1 0:2 0:3"), b = pl_of("0:4 0:5 0:6 0:7"),
               c = pl_of("1:0 1:1"), d = pl_of("0:2 0:3 0:4 0:5");
    assert_true(exec_place_same_shape(&a, &b));
    assert_true(exec_place_same_shape(&a, &d));
    assert_false(exec_place_same_shape(&a, &c));
    b.batch = 64;
    assert_false(exec_place_same_shape(&a, &b)); /* another batch size */
    b.batch = 0;
    assert_true(exec_place_is_buddy(&a, 2, 8));
    assert_false(exec_place_is_buddy(&d, 2, 8)); /* 2-5: not aligned */
    exec_place odd = pl_of("0:0 0:2 0:3 0:4");
    assert_false(exec_place_is_buddy(&odd, 2, 8));
    exec_place whole = pl_of("0:0 0:1 0:2 0:3 0:4 0:5 0:6 0:7 1:0 1:1 1:2 "
                             "1:3 1:4 1:5 1:6 1:7");
    assert_true(exec_place_is_buddy(&whole, 2, 8));
    assert_false(exec_place_is_buddy(&whole, 1, 8)); /* outside the cluster */

    /* node 0: x planned 0-3 and y 4-7, Slurm gave them the other way
     * round: both known, both buddy: followed. Node 1: z known (1:2-3),
     * w not yet: node 1 stays as planned. */
    exec_place model[4] = {pl_of("0:0 0:1 0:2 0:3"), pl_of("0:4 0:5 0:6 0:7"),
                           pl_of("1:0 1:1"), pl_of("1:2 1:3")};
    exec_place real[4] = {pl_of("0:4 0:5 0:6 0:7"), pl_of("0:0 0:1 0:2 0:3"),
                          pl_of("1:2 1:3"), {0}};
    model[0].batch = 128;
    char live[4] = {1, 1, 1, 1}, ch[4];
    assert_int_equal(exec_place_follow(4, model, real, live, 2, 8, ch), 2);
    assert_place(&model[0], "0:4 0:5 0:6 0:7");
    assert_true(model[0].batch == 128); /* its batch kept */
    assert_place(&model[1], "0:0 0:1 0:2 0:3");
    assert_place(&model[2], "1:0 1:1");
    assert_true(ch[0] && ch[1] && !ch[2] && !ch[3]);
    /* w known too: node 1 follows */
    real[3] = pl_of("1:0 1:1");
    assert_int_equal(exec_place_follow(4, model, real, live, 2, 8, ch), 2);
    assert_place(&model[2], "1:2 1:3");
    assert_place(&model[3], "1:0 1:1");
    /* a real placement that is no buddy block keeps its node as planned;
     * an attempt that is not live does not count */
    exec_place_free(&real[0]);
    real[0] = pl_of("0:2 0:3 0:4 0:5");
    exec_place_copy(&model[0], &a);
    exec_place_copy(&model[1], &b);
    assert_int_equal(exec_place_follow(4, model, real, live, 2, 8, ch), 0);
    assert_place(&model[0], "0:0 0:1 0:2 0:3");
    live[0] = 0;
    assert_int_equal(exec_place_follow(4, model, real, live, 2, 8, ch), 1);
    assert_place(&model[1], "0:0 0:1 0:2 0:3");
    for (int k = 0; k < 4; k++) {
        exec_place_free(&model[k]);
        exec_place_free(&real[k]);
    }
    exec_place_free(&a);
    exec_place_free(&b);
    exec_place_free(&c);
    exec_place_free(&d);
    exec_place_free(&odd);
    exec_place_free(&whole);
}

/* ---- the journal's placed record, the state file ----------------------------- */

#define PJOB(id)                                                            \
    "{\"batch_size\": 64, \"deadline\": null, \"decision\": \"best_effort\", " \
    "\"earliest_feasible_deadline\": null, \"gpu_seconds\": 240, \"id\": \"" \
    id "\", \"iterations\": 1000, \"iterations_done\": 0, "                 \
    "\"iterations_left\": 1000, \"migrations\": 0, \"model\": \"bert\", "    \
    "\"planned_end\": null, \"resizes\": 0, \"slack\": null, \"start\": 0, " \
    "\"submit_time\": 0}"
#define ALLOC(id, n, gpus, node)                                            \
    "{\"gpus\": " #n ", \"job\": \"" id "\", \"placement\": [{\"gpus\": ["  \
    gpus "], \"node\": " #node "}]}"

/* Two nodes of 8 GPUs, one slot: w (4 GPUs) and x (4) on node 0, y (4)
 * and z (2) on node 1. */
static const char *PLAN4 =
    "{\"cluster\": {\"gpus_per_node\": 8, \"nodes\": 2}, \"curves\": "
    "\"A100\", \"format\": \"efplan-plan\", \"jobs\": [" PJOB("w") ", "
    PJOB("x") ", " PJOB("y") ", " PJOB("z") "], \"jobs_file\": "
    "\"jobs.json\", \"now\": 0, \"slot_seconds\": 60, \"slots\": ["
    "{\"allocations\": [" ALLOC("w", 4, "0, 1, 2, 3", 0) ", "
    ALLOC("x", 4, "4, 5, 6, 7", 0) ", " ALLOC("y", 4, "0, 1, 2, 3", 1) ", "
    ALLOC("z", 2, "4, 5", 1) "], \"end\": 60, \"start\": 0}], "
    "\"summary\": {\"admitted\": 0, \"best_effort\": 4, \"end\": 60, "
    "\"migrations\": 0, \"promised_gpu_hours\": 0, \"rejected\": 0, "
    "\"replan_fallbacks\": 0, \"resizes\": 0, \"scheduling_points\": 1, "
    "\"used_gpu_hours\": 0.2, \"utilisation\": 0.9}, \"surplus\": "
    "\"gain\", \"version\": 1}";

#define QJOB(id)                                                            \
    "{\"id\": \"" id "\", \"model\": \"bert\", \"batch_size\": 64, "        \
    "\"iterations\": 1000, \"submit_time\": 0, \"deadline\": null, "        \
    "\"command\": [\"true\"]}"
static const char *JOBS4 = "{\"jobs\": [" QJOB("w") ", " QJOB("x") ", "
                           QJOB("y") ", " QJOB("z") "]}";

/* Lines of a journal in which each job was started on its plan
 * placement (or at[j] when 'at' is not NULL) and stopped at the end of
 * the window, with the n records placed[] between. */
static void journal_at(ef_buf *b, const char *const *placed, int n,
                       const char *const *at)
{
    static const char *const ids[] = {"w", "x", "y", "z"};
    static const char *const plan_at[] = {
        "[{\"gpus\":[0,1,2,3],\"node\":0}]", "[{\"gpus\":[4,5,6,7],\"node\":0}]",
        "[{\"gpus\":[0,1,2,3],\"node\":1}]", "[{\"gpus\":[4,5],\"node\":1}]"};
    if (!at)
        at = plan_at;
    ef_buf_put(b, "{\"anchor_plan\":0,\"anchor_wall\":0,\"backend\":\"slurm\","
               "\"ev\":\"begin\",\"hash\":\"0123456789abcdef\",\"plan\":"
               "\"plan.json\",\"scale\":1}\n");
    for (int j = 0; j < 4; j++)
        ef_buf_printf(b, "{\"at\":1,\"attempt\":1,\"ev\":\"start\",\"job\":"
                      "\"%s\",\"place\":%s,\"slot\":0}\n{\"attempt\":1,\"ev\":"
                      "\"started\",\"handle\":\"%d\",\"job\":\"%s\"}\n",
                      ids[j], at[j], 10 + j, ids[j]);
    for (int k = 0; k < n; k++)
        ef_buf_printf(b, "%s\n", placed[k]);
    for (int j = 0; j < 4; j++)
        ef_buf_printf(b, "{\"attempt\":1,\"ev\":\"stop\",\"job\":\"%s\",\"why\":"
                      "\"end\"}\n{\"attempt\":1,\"ev\":\"stopped\",\"how\":"
                      "\"exit 0\",\"job\":\"%s\",\"progress\":5,\"why\":"
                      "\"end\"}\n", ids[j], ids[j]);
}

static void journal_of(ef_buf *b, const char *const *placed, int n)
{
    journal_at(b, placed, n, NULL);
}

/* The "placement" of job 'id' in state file text s, compact ("" when
 * it has none). */
static char *state_place(const char *s, const char *id)
{
    json_t *o = json_loads(s, 0, NULL), *jobs = json_object_get(o, "jobs");
    assert_non_null(jobs);
    char *out = ef_strdup("");
    for (size_t k = 0; k < json_array_size(jobs); k++) {
        json_t *j = json_array_get(jobs, k);
        if (strcmp(json_string_value(json_object_get(j, "id")), id) != 0)
            continue;
        json_t *pl = json_object_get(j, "placement");
        if (pl) {
            free(out);
            out = json_dumps(pl, JSON_COMPACT);
        }
    }
    json_decref(o);
    return out;
}

static void test_placed_journal(void **state)
{
    (void)state;
    char dir[256], planf[512], path[600];
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "plan.json", PLAN4, planf, sizeof planf);
    tu_write(dir, "jobs.json", JOBS4, NULL, 0);
    tu_join(path, sizeof path, dir, "journal.jsonl");
    exec_plan p;
    ef_err e = {0};
    assert_ok(exec_plan_load(&p, planf, NULL, &e), e);
    /* Slurm swapped w and x on node 0; on node 1, y went to 4-7 (planned
     * 0-3) and z to 0-1: node 1 is followed too. */
    static const char *const swapped[] = {
        "{\"attempt\":1,\"differs\":true,\"ev\":\"placed\",\"job\":\"w\","
        "\"place\":[{\"gpus\":[4,5,6,7],\"node\":0}]}",
        "{\"attempt\":1,\"differs\":true,\"ev\":\"placed\",\"job\":\"x\","
        "\"place\":[{\"gpus\":[0,1,2,3],\"node\":0}]}",
        "{\"attempt\":1,\"differs\":true,\"ev\":\"placed\",\"job\":\"y\","
        "\"place\":[{\"gpus\":[4,5,6,7],\"node\":1}]}",
        "{\"attempt\":1,\"differs\":true,\"ev\":\"placed\",\"job\":\"z\","
        "\"place\":[{\"gpus\":[0,1],\"node\":1}]}"};
    ef_buf jb = {0};
    journal_of(&jb, swapped, 4);
    tu_write(dir, "journal.jsonl", jb.s, NULL, 0);
    free(jb.s);
    exec_replay r;
    assert_ok(exec_journal_replay(path, &p, &r, &e), e);
    assert_place(&r.jobs[0].real, "0:4 0:5 0:6 0:7");
    assert_place(&r.jobs[0].place, "0:0 0:1 0:2 0:3"); /* the plan's */
    assert_int_equal(r.jobs[0].had_place, 1);
    exec_ctx x;
    memset(&x, 0, sizeof x);
    x.p = &p;
    x.b = &exec_backend_slurm;
    x.state = dir;
    char *s = exec_state_json(&x, &r, 1, 60);
    static const char *const want[][2] = {
        {"w", "[{\"gpus\":[4,5,6,7],\"node\":0}]"},
        {"x", "[{\"gpus\":[0,1,2,3],\"node\":0}]"},
        {"y", "[{\"gpus\":[4,5,6,7],\"node\":1}]"},
        {"z", "[{\"gpus\":[0,1],\"node\":1}]"}};
    for (int k = 0; k < 4; k++) {
        char *got = state_place(s, want[k][0]);
        assert_string_equal(got, want[k][1]);
        free(got);
    }
    free(s);
    exec_replay_free(&r);

    /* node 1: z's placement unknown (no placed record): node 1 keeps the
     * plan's; node 0 follows */
    ef_buf j2 = {0};
    journal_of(&j2, swapped, 3);
    tu_write(dir, "journal.jsonl", j2.s, NULL, 0);
    free(j2.s);
    assert_ok(exec_journal_replay(path, &p, &r, &e), e);
    assert_int_equal(r.jobs[3].real.n, 0);
    s = exec_state_json(&x, &r, 1, 60);
    char *gy = state_place(s, "y"), *gz = state_place(s, "z"),
         *gw = state_place(s, "w");
    assert_string_equal(gw, "[{\"gpus\":[4,5,6,7],\"node\":0}]");
    assert_string_equal(gy, "[{\"gpus\":[0,1,2,3],\"node\":1}]");
    assert_string_equal(gz, "[{\"gpus\":[4,5],\"node\":1}]");
    free(gy);
    free(gz);
    free(gw);
    free(s);
    exec_replay_free(&r);

    /* y really on 2-5 of node 1 (the lowest free ones: not a buddy
     * block): node 1 keeps the plan's placements; a placed record of
     * another attempt changes nothing; a new start forgets the old one */
    static const char *const odd[] = {
        "{\"attempt\":1,\"differs\":true,\"ev\":\"placed\",\"job\":\"y\","
        "\"place\":[{\"gpus\":[2,3,4,5],\"node\":1}]}",
        "{\"attempt\":1,\"differs\":true,\"ev\":\"placed\",\"job\":\"z\","
        "\"place\":[{\"gpus\":[0,1],\"node\":1}]}",
        "{\"attempt\":7,\"ev\":\"placed\",\"job\":\"w\","
        "\"place\":[{\"gpus\":[4,5,6,7],\"node\":0}]}"};
    ef_buf j3 = {0};
    journal_of(&j3, odd, 3);
    tu_write(dir, "journal.jsonl", j3.s, NULL, 0);
    free(j3.s);
    assert_ok(exec_journal_replay(path, &p, &r, &e), e);
    assert_int_equal(r.jobs[0].real.n, 0);
    s = exec_state_json(&x, &r, 1, 60);
    gy = state_place(s, "y");
    gz = state_place(s, "z");
    assert_string_equal(gy, "[{\"gpus\":[0,1,2,3],\"node\":1}]");
    assert_string_equal(gz, "[{\"gpus\":[4,5],\"node\":1}]");
    free(gy);
    free(gz);
    free(s);
    ef_err e2 = {0};
    assert_ok(exec_replay_record(&r, &p, "{\"at\":2,\"attempt\":2,\"ev\":"
                                 "\"start\",\"job\":\"y\",\"place\":[{\"gpus\":"
                                 "[0,1,2,3],\"node\":1}],\"slot\":0}", &e2), e2);
    assert_int_equal(r.jobs[2].real.n, 0);
    exec_replay_free(&r);

    /* what the next plan cannot take is left out: x launched on 3-6 (no
     * buddy block), z on GPUs y holds (the plan moved y inside its node
     * and Slurm kept it); the others keep theirs */
    static const char *const clash[2][4] = {
        {"[{\"gpus\":[0,1,2,3],\"node\":0}]", "[{\"gpus\":[3,4,5,6],\"node\":0}]",
         "[{\"gpus\":[0,1,2,3],\"node\":1}]", "[{\"gpus\":[2,3],\"node\":1}]"},
        /* z on 5-6 of node 1: no GPU of another job, but no buddy block */
        {"[{\"gpus\":[0,1,2,3],\"node\":0}]", "[{\"gpus\":[4,5,6,7],\"node\":0}]",
         "[{\"gpus\":[0,1,2,3],\"node\":1}]", "[{\"gpus\":[5,6],\"node\":1}]"}};
    static const char *const kept[2][4] = {
        {"[{\"gpus\":[0,1,2,3],\"node\":0}]", "",
         "[{\"gpus\":[0,1,2,3],\"node\":1}]", ""},
        {"[{\"gpus\":[0,1,2,3],\"node\":0}]", "[{\"gpus\":[4,5,6,7],\"node\":0}]",
         "[{\"gpus\":[0,1,2,3],\"node\":1}]", ""}};
    static const char *const ids[] = {"w", "x", "y", "z"};
    for (int c = 0; c < 2; c++) {
        ef_buf j5 = {0};
        journal_at(&j5, NULL, 0, clash[c]);
        tu_write(dir, "journal.jsonl", j5.s, NULL, 0);
        free(j5.s);
        assert_ok(exec_journal_replay(path, &p, &r, &e), e);
        s = exec_state_json(&x, &r, 1, 60);
        for (int k = 0; k < 4; k++) {
            char *got = state_place(s, ids[k]);
            assert_string_equal(got, kept[c][k]);
            free(got);
        }
        free(s);
        exec_replay_free(&r);
    }

    /* a journal of before the record (no placed) reads as before */
    ef_buf j4 = {0};
    journal_of(&j4, NULL, 0);
    tu_write(dir, "journal.jsonl", j4.s, NULL, 0);
    free(j4.s);
    assert_ok(exec_journal_replay(path, &p, &r, &e), e);
    s = exec_state_json(&x, &r, 1, 60);
    gw = state_place(s, "w");
    assert_string_equal(gw, "[{\"gpus\":[0,1,2,3],\"node\":0}]");
    free(gw);
    free(s);
    exec_replay_free(&r);
    /* the record's members are checked */
    tu_write(dir, "journal.jsonl", "{\"attempt\":1,\"ev\":\"placed\","
             "\"job\":\"w\"}\n", NULL, 0);
    assert_int_equal(exec_journal_replay(path, &p, &r, &e), EF_ERR);
    assert_contains(e.msg, "journal.jsonl:1: placed: missing required key "
                           "\"place\"");
    exec_plan_free(&p);
    rm_rf(dir);
}

/* ---- where Slurm put it: scontrol show job -d, through stand-ins -------------- */

/* A plan on 2 nodes of 8 GPUs: a on node 1 (4 GPUs), then b on both
 * nodes (16). */
static const char *PLAN2N =
    "{\"cluster\": {\"gpus_per_node\": 8, \"nodes\": 2}, \"curves\": "
    "\"A100\", \"format\": \"efplan-plan\", \"jobs\": [" PJOB("a") ", "
    PJOB("b") "], \"jobs_file\": \"jobs.json\", \"now\": 0, "
    "\"slot_seconds\": 60, \"slots\": [{\"allocations\": ["
    ALLOC("a", 4, "0, 1, 2, 3", 1) "], \"end\": 60, \"start\": 0}, "
    "{\"allocations\": [{\"gpus\": 16, \"job\": \"b\", "
    "\"placement\": [{\"gpus\": [0, 1, 2, 3, 4, 5, 6, 7], \"node\": 0}, "
    "{\"gpus\": [0, 1, 2, 3, 4, 5, 6, 7], \"node\": 1}]}], \"end\": 120, "
    "\"start\": 60}], \"summary\": {\"admitted\": 0, \"best_effort\": 2, "
    "\"end\": 120, \"migrations\": 0, \"promised_gpu_hours\": 0, "
    "\"rejected\": 0, \"replan_fallbacks\": 0, \"resizes\": 0, "
    "\"scheduling_points\": 1, \"used_gpu_hours\": 0.3, \"utilisation\": "
    "1}, \"surplus\": \"gain\", \"version\": 1}";
static const char *JOBS2N = "{\"jobs\": [" QJOB("a") ", " QJOB("b") "]}";

/* What the stand-in scontrol says for "show job -d -o ID": the file
 * dir/job.ID (absent: "Invalid job id"); it logs each call to
 * dir/scontrol.log. "show hostnames node[1-2]" expands the one form the
 * tests use. */
static const char *const SCONTROL =
    "#!/bin/sh\n"
    "d=$(dirname \"$0\")/..\n"
    "echo \"$*\" >> \"$d/scontrol.log\"\n"
    "if [ \"$2\" = hostnames ]; then\n"
    "  case $3 in 'node[1-2]') printf 'node1\\nnode2\\n' ;; *) echo \"$3\" ;; "
    "esac; exit 0; fi\n"
    "f=\"$d/job.$5\"\n"
    "[ -f \"$f\" ] || { echo 'slurm_load_jobs error: Invalid job id "
    "specified' >&2; exit 1; }\n"
    "cat \"$f\"\n";

/* A "scontrol show job -d -o" line with 'detail' as its per-node part
 * (empty: none, a job not running) and 'before' among the fields ahead
 * of it. */
static void job_file(const char *dir, long id, const char *before,
                     const char *detail)
{
    char name[64];
    snprintf(name, sizeof name, "job.%ld", id);
    ef_buf b = {0};
    ef_buf_printf(&b, "JobId=%ld JobName=efp-x Account=acct %s JobState="
                  "RUNNING Partition=ci NodeList=node[1-2] BatchHost=node1 "
                  "NumNodes=2 NtasksPerN:B:S:C=1:0:*:* CoreSpec=* %s "
                  "MinCPUsNode=1 Features=(null) Command=/x JOB_GRES=gpu:8 "
                  "Nodes=node1 CPU_IDs=0 Mem=0 GRES=gpu:8(IDX:0-7) "
                  "WorkDir=/x StdOut=/x/log TresPerNode=gres:gpu:4\n", id,
                  before, detail);
    tu_write(dir, name, b.s, NULL, 0);
    free(b.s);
}

static void test_placed_scontrol(void **state)
{
    (void)state;
    char dir[256], planf[512], st[600], logp[600];
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "plan.json", PLAN2N, planf, sizeof planf);
    tu_write(dir, "jobs.json", JOBS2N, NULL, 0);
    tu_join(st, sizeof st, dir, "state");
    tu_join(logp, sizeof logp, dir, "scontrol.log");
    ef_err e = {0};
    char real[4200];
    assert_ok(exec_state_dirs(st, real, &e), e);
    exec_plan p;
    assert_ok(exec_plan_load(&p, planf, NULL, &e), e);
    ef_buf sq = {0};
    ef_buf_printf(&sq, "#!/bin/sh\nfor i in 11 12 13 14 15 16 17; do "
                  "echo \"$i RUNNING efp-%.8s-a-$i\"; done\n"
                  "echo \"18 PENDING efp-%.8s-a-18\"\n", p.hash, p.hash);
    stand_in(dir, "squeue", sq.s);
    free(sq.s);
    stand_in(dir, "scontrol", SCONTROL);
    stand_in(dir, "sinfo", "#!/bin/sh\nprintf 'node1 10.0.0.1\\nnode2 "
             "10.0.0.2\\n'\n");
    char bin[600];
    tu_join(bin, sizeof bin, dir, "bin");
    char *oldpath = tu_path_prepend(bin);
    exec_ctx x;
    memset(&x, 0, sizeof x);
    x.p = &p;
    x.b = &exec_backend_slurm;
    x.state = real;
    assert_ok(exec_backend_slurm.prepare(&x, &e), e);
    assert_int_equal(x.nodes.n, 2); /* sinfo's, sorted */
    const exec_place *pa = &p.slots[0].a[0].place, *pb =
                                                    &p.slots[1].a[0].place;
    struct {
        long id;
        const exec_place *want;
        const char *before, *detail;
        int known;
        const char *got;
    } cases[] = {
        /* not contiguous, as Slurm gives the lowest free */
        {11, pa, "", "JOB_GRES=gpu:4 Nodes=node2 CPU_IDs=0-3 Mem=0 "
         "GRES=gpu:4(IDX:0,2-4)", 1, "1:0 1:2 1:3 1:4"},
        /* a host list, and a typed GPU among other GRES */
        {12, pb, "", "JOB_GRES=gpu:a100:16 Nodes=node[1-2] CPU_IDs=0 "
         "Mem=0 GRES=gpu:a100:8(IDX:0-7),mps:100(0/100)", 1,
         "0:0 0:1 0:2 0:3 0:4 0:5 0:6 0:7 1:0 1:1 1:2 1:3 1:4 1:5 1:6 1:7"},
        /* a field ahead that holds the same text names other nodes: the
         * entries that name the attempt's own shape win */
        {13, pa, "Comment=x JOB_GRES=gpu:4 Nodes=node1 CPU_IDs=0 Mem=0 "
         "GRES=gpu:4(IDX:4-7) MinCPUsNode=1",
         "JOB_GRES=gpu:4 Nodes=node2 CPU_IDs=1 Mem=0 GRES=gpu:4(IDX:4-7)", 1,
         "1:4 1:5 1:6 1:7"},
        /* no indices (not running yet), a node not in the table, another
         * count, an id Slurm forgot */
        {14, pa, "", "", 0, ""},
        {15, pa, "", "JOB_GRES=gpu:4 Nodes=node9 CPU_IDs=0 Mem=0 "
         "GRES=gpu:4(IDX:0-3)", 0, ""},
        {16, pa, "", "JOB_GRES=gpu:2 Nodes=node2 CPU_IDs=0 Mem=0 "
         "GRES=gpu:2(IDX:0-1)", 0, ""},
        {17, pa, "", NULL, 0, ""},
        /* pending in squeue: Slurm is not asked */
        {18, pa, "", "JOB_GRES=gpu:4 Nodes=node2 CPU_IDs=0 Mem=0 "
         "GRES=gpu:4(IDX:0-3)", 0, ""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        if (cases[k].detail)
            job_file(dir, cases[k].id, cases[k].before, cases[k].detail);
        exec_run r = {.job = cases[k].want == pa ? 0 : 1, .attempt = 1,
                      .place = cases[k].want, .wall_limit = 60};
        snprintf(r.handle, sizeof r.handle, "%ld", cases[k].id);
        exec_place got;
        int rc = exec_backend_slurm.placed(&x, &r, &got, &e);
        if (rc != cases[k].known) {
            print_error("    job %ld: placed %d, expected %d (%s)\n",
                        cases[k].id, rc, cases[k].known, e.msg);
            fail();
        }
        if (rc == 1)
            assert_place(&got, cases[k].got);
        exec_place_free(&got);
    }
    /* asked once each, job 18 never; asked again at once: not asked (at
     * most every 5 s per attempt) */
    exec_run r = {.job = 0, .attempt = 1, .place = pa, .wall_limit = 60};
    snprintf(r.handle, sizeof r.handle, "14");
    exec_place got;
    assert_int_equal(exec_backend_slurm.placed(&x, &r, &got, &e), 0);
    char *text;
    size_t len;
    assert_ok(ef_read_file(logp, &text, &len, &e), e);
    int asks = 0;
    for (const char *q = text; (q = strstr(q, "show job -d -o ")); q++)
        asks++;
    assert_int_equal(asks, 7);
    assert_not_contains(text, "-o 18");
    assert_contains(text, "show hostnames node[1-2]");
    free(text);

    /* MASTER_ADDR is the node's address (sinfo %o), not its name; on
     * several nodes, the address of the node the script runs on */
    exec_run rb = {.job = 1, .attempt = 1, .place = pb, .wall_limit = 60};
    char *script = exec_slurm_script(&x, &rb);
    assert_contains(script, "export MASTER_ADDR='10.0.0.1'\n");
    assert_contains(script, "case ${SLURMD_NODENAME:-} in\n    'node1') "
                            "MASTER_ADDR='10.0.0.1' ;;\n    'node2') "
                            "MASTER_ADDR='10.0.0.2' ;;\nesac\n");
    /* the checkpoint signal reaches srun's tasks through scancel */
    assert_contains(script, "scancel --signal=TERM \"$SLURM_JOB_ID\"");
    free(script);
    exec_run ra = {.job = 0, .attempt = 1, .place = pa, .wall_limit = 60};
    script = exec_slurm_script(&x, &ra);
    assert_contains(script, "export MASTER_ADDR='10.0.0.2'\n");
    assert_not_contains(script, "SLURMD_NODENAME");
    assert_not_contains(script, "scancel");
    assert_contains(script, "kill -15 \"$efplan_child\"");
    free(script);
    exec_backend_slurm.release(&x);
    exec_nodes_free(&x.nodes); /* the caller's (exec_apply frees it) */

    /* --partition: the node table is its nodes; one the plan needs and
     * the partition lacks is an error before anything runs */
    stand_in(dir, "sinfo", "#!/bin/sh\ncase \"$*\" in *--partition=one*) "
             "echo 'node1 10.0.0.1' ;; *--partition=none*) ;; *) printf "
             "'node1 10.0.0.1\\nnode2 10.0.0.2\\n' ;; esac\n");
    x.slurm.partition = "one";
    assert_err(exec_backend_slurm.prepare(&x, &e), e, "sinfo --partition",
               "1 node");
    exec_backend_slurm.release(&x);
    exec_nodes_free(&x.nodes);
    x.slurm.partition = "none";
    assert_err(exec_backend_slurm.prepare(&x, &e), e, "--partition none: ",
               "Slurm lists no node in it");
    exec_backend_slurm.release(&x);
    char nodesf[700];
    tu_write(dir, "nodes.txt", "node2\nnode1\n", nodesf, sizeof nodesf);
    assert_ok(exec_nodes_load(&x.nodes, nodesf, &e), e);
    x.nodes_file = nodesf;
    x.slurm.partition = "one";
    assert_err(exec_backend_slurm.prepare(&x, &e), e, nodesf,
               ": node node2 (plan node 0) is not in partition one (its "
               "nodes: node1)");
    exec_backend_slurm.release(&x);
    exec_nodes_free(&x.nodes);
    tu_path_restore(oldpath);
    exec_plan_free(&p);
    rm_rf(dir);
}

/* ---- the batch script: the rendezvous port, the ranks ------------------------- */

/* A stand-in srun for the batch script's launch: runs "$@" once per task
 * of --nodes x --ntasks-per-node, one after the other, each with Slurm's
 * task variables (block order), waiting for each. */
static const char *const SRUN =
    "#!/bin/sh\n"
    "nodes=1 per=1\n"
    "while [ $# -gt 0 ]; do case $1 in\n"
    "  --nodes=*) nodes=${1#--nodes=}; shift ;;\n"
    "  --ntasks-per-node=*) per=${1#--ntasks-per-node=}; shift ;;\n"
    "  --*) shift ;; *) break ;; esac; done\n"
    "n=0 id=0\n"
    "while [ $n -lt $nodes ]; do l=0\n"
    "  while [ $l -lt $per ]; do\n"
    "    SLURM_NODEID=$n SLURM_PROCID=$id SLURM_LOCALID=$l \"$@\" || exit $?\n"
    "    l=$((l + 1)); id=$((id + 1)); done\n"
    "  n=$((n + 1)); done\n";

/* Listen on TCP port 'port' (all addresses); the socket, or -1. */
static int listen_on(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 1) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void test_script_port_ranks(void **state)
{
    (void)state;
    char dir[256], planf[512], st[600];
    tu_tmpdir(dir, sizeof dir);
    tu_write(dir, "plan.json", PLAN2N, planf, sizeof planf);
    /* a: one node, per_gpu (4 processes); b: two nodes, per node. Each
     * process appends its ranks and ports to DIR/JOB.out */
    char rec[700];
    tu_write(dir, "rec.sh", "printf '%s %s %s %s %s %s %s %s\\n' "
             "\"$NODE_RANK\" \"$PET_NODE_RANK\" \"${RANK:--}\" "
             "\"${LOCAL_RANK:--}\" \"${GROUP_RANK:--}\" "
             "\"${LOCAL_WORLD_SIZE:--}\" \"$MASTER_PORT\" "
             "\"$PET_MASTER_PORT\" >> \"$1.out\"\n", rec, sizeof rec);
    ef_buf jobs = {0};
    ef_buf_printf(&jobs, "{\"jobs\": [{\"id\": \"a\", \"model\": \"bert\", "
                  "\"batch_size\": 64, \"iterations\": 1000, \"submit_time\": "
                  "0, \"deadline\": null, \"processes\": \"per_gpu\", "
                  "\"command\": [\"sh\", \"%s\", \"%s/a\"]}, "
                  "{\"id\": \"b\", \"model\": \"bert\", \"batch_size\": 64, "
                  "\"iterations\": 1000, \"submit_time\": 0, \"deadline\": "
                  "null, \"command\": [\"sh\", \"%s\", \"%s/b\"]}]}",
                  rec, dir, rec, dir);
    tu_write(dir, "jobs.json", jobs.s, NULL, 0);
    free(jobs.s);
    tu_join(st, sizeof st, dir, "state");
    ef_err e = {0};
    char real[4200];
    assert_ok(exec_state_dirs(st, real, &e), e);
    exec_plan p;
    assert_ok(exec_plan_load(&p, planf, NULL, &e), e);
    stand_in(dir, "srun", SRUN);
    char bin[600];
    tu_join(bin, sizeof bin, dir, "bin");
    char *oldpath = tu_path_prepend(bin);
    exec_ctx x;
    memset(&x, 0, sizeof x);
    x.p = &p;
    x.b = &exec_backend_slurm;
    x.state = real;
    const exec_place *pa = &p.slots[0].a[0].place, *pb =
                                                    &p.slots[1].a[0].place;
    /* a's first port (its attempt 2 starts one further) is taken: the
     * probe takes the next free one */
    int first = p.jobs[0].port + 1;
    int fd = listen_on(first);
    if (fd < 0) {
        print_message("    (port %d is taken already: probe not tested)\n",
                      first);
    } else {
        int want = first + 1;
        while (!exec_port_free(want))
            want++;
        exec_run r = {.job = 0, .attempt = 2, .place = pa, .wall_limit = 60};
        char *s = exec_slurm_script(&x, &r);
        char sp[700], out[4096];
        tu_write(dir, "a.sbatch", s, sp, sizeof sp);
        free(s);
        setenv("SLURM_NNODES", "1", 1);
        char *argv[] = {"sh", sp, NULL};
        assert_int_equal(exec_run_cmd(argv, out, sizeof out, 1), 0);
        char line[128];
        snprintf(line, sizeof line, "efplan: rendezvous node1:%d\n", want);
        assert_contains(out, line);
        char *text;
        size_t len;
        char ao[700];
        tu_join(ao, sizeof ao, dir, "a.out");
        assert_ok(ef_read_file(ao, &text, &len, &e), e);
        /* 4 processes on one node: RANK = LOCAL_RANK 0..3, GROUP_RANK 0 */
        ef_buf w = {0};
        for (int k = 0; k < 4; k++)
            ef_buf_printf(&w, "0 0 %d %d 0 4 %d %d\n", k, k, want, want);
        assert_string_equal(text, w.s);
        free(w.s);
        free(text);
        close(fd);
    }
    /* b: two nodes, a process each: NODE_RANK from SLURM_NODEID; one GPU
     * per node would be RANK too, 8 GPUs per node is not */
    exec_run r = {.job = 1, .attempt = 1, .place = pb, .wall_limit = 60};
    char *s = exec_slurm_script(&x, &r);
    char sp[700], out[4096];
    tu_write(dir, "b.sbatch", s, sp, sizeof sp);
    free(s);
    setenv("SLURM_NNODES", "2", 1);
    char *argv[] = {"sh", sp, NULL};
    assert_int_equal(exec_run_cmd(argv, out, sizeof out, 1), 0);
    char *text;
    size_t len;
    char bo[700];
    tu_join(bo, sizeof bo, dir, "b.out");
    assert_ok(ef_read_file(bo, &text, &len, &e), e);
    int port = 0;
    const char *rz = strstr(out, "efplan: rendezvous node0:");
    assert_non_null(rz); /* no sinfo: the first node's name */
    assert_int_equal(sscanf(rz, "efplan: rendezvous node0:%d", &port), 1);
    ef_buf w = {0};
    for (int k = 0; k < 2; k++)
        ef_buf_printf(&w, "%d %d - - - - %d %d\n", k, k, port, port);
    assert_string_equal(text, w.s);
    free(w.s);
    free(text);
    unsetenv("SLURM_NNODES");
    tu_path_restore(oldpath);
    exec_plan_free(&p);
    rm_rf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_arg),
        cmocka_unit_test(test_follow),
        cmocka_unit_test(test_placed_journal),
        cmocka_unit_test(test_placed_scontrol),
        cmocka_unit_test(test_script_port_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
