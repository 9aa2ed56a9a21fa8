/* cmd_apply.c: "efplan apply": run a plan on a cluster, slot by slot. */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/jsonw.h"
#include "common/util.h"
#include "executor/exec.h"

void help_apply(void)
{
    printf(
        "Usage: efplan apply PLAN [--backend local|slurm|dry-run]\n"
        "                    [--until TIME | --slots K] [--time-scale F]\n"
        "                    [--follow-jobs]\n"
        "                    [--state DIR] [--jobs FILE] [--nodes FILE]\n"
        "                    [--partition P] [--account A] [--qos Q]\n"
        "                    [--sbatch-arg ARG ...]\n"
        "\n"
        "Apply a plan file (efplan plan --out): at each slot boundary start,\n"
        "keep, resize, migrate or stop jobs so that what runs matches the\n"
        "slot. A resize or migration is a checkpoint (the job's\n"
        "checkpoint_signal, SIGTERM by default, then grace_seconds) and a\n"
        "restart with the new GPUs. Every action is journalled in the state\n"
        "directory before and after it happens: run the same command again\n"
        "after a crash or kill and it resumes (nothing launched twice).\n"
        "A new version of the plan file (efplan submit while it runs) is\n"
        "followed from the next tick when it keeps every job of the one\n"
        "applied (a \"plan\" record in the journal).\n"
        "\n"
        "  --backend B       local: processes on this host (one-node plans,\n"
        "                    default); slurm: sbatch/scancel/squeue;\n"
        "                    dry-run: print each slot's actions, the exact\n"
        "                    launches and stops; run and write nothing\n"
        "  --until TIME      stop applying at plan time TIME (seconds or\n"
        "                    ISO-8601); what still runs is checkpointed\n"
        "  --slots K         stop after the first K slots of the plan file\n"
        "  --time-scale F    run the plan clock F times faster (tests, demos)\n"
        "  --follow-jobs     the plan clock follows the jobs (demos, a first\n"
        "                    run): it runs as --time-scale says but waits for\n"
        "                    a running job behind its plan (its progress\n"
        "                    file), so a slow machine stretches the clock\n"
        "                    instead of missing deadlines; local and dry-run\n"
        "                    backends\n"
        "  --state DIR       journal, logs, progress files and state.json\n"
        "                    (default: PLAN without .json, plus .state)\n"
        "  --jobs FILE       the jobs file, if not where the plan says\n"
        "  --nodes FILE      node names, one a line: the k-th names plan node\n"
        "                    k-1 (spaces trimmed; empty and # lines skipped;\n"
        "                    it must name every node of the plan). Default:\n"
        "                    Slurm: sinfo's nodes (--partition's), sorted;\n"
        "                    dry-run: node0, node1, ...\n"
        "\n"
        "A shared Slurm cluster (--backend slurm; the dry run shows them in its\n"
        "sbatch lines):\n"
        "  --partition P     sbatch --partition=P; without --nodes the plan's\n"
        "                    nodes are P's; a plan node not in P is an error\n"
        "                    before anything runs (exit 3)\n"
        "  --account A       sbatch --account=A\n"
        "  --qos Q           sbatch --qos=Q\n"
        "  --sbatch-arg ARG  one more sbatch word, as is (repeatable; no\n"
        "                    shell): --name=value or -Xvalue, e.g.\n"
        "                    --sbatch-arg=--mem=16G; what efplan sets is\n"
        "                    refused (--nodelist, --gres, --job-name,\n"
        "                    --output, --nodes, --ntasks*, --gpus*, --time,\n"
        "                    --parsable, ...: exit 2)\n"
        "Slurm picks the GPUs inside a node (--gres is a count): a move the\n"
        "plan makes inside the same nodes is no restart there, the journal\n"
        "records where Slurm put each attempt (\"placed\"), and state.json\n"
        "has the jobs where they ran. MASTER_ADDR is the NodeAddr of the\n"
        "job's first node in Slurm's order, MASTER_PORT a port free there.\n"
        "\n"
        "Each launch gets NNODES, NODE_RANK, NPROC_PER_NODE, WORLD_SIZE,\n"
        "MASTER_ADDR, MASTER_PORT, CUDA_VISIBLE_DEVICES, EFPLAN_JOB_ID,\n"
        "EFPLAN_PROGRESS_FILE (write completed iterations there),\n"
        "EFPLAN_ATTEMPT, EFPLAN_ITERATIONS and EFPLAN_BATCH_SIZE (the slot's\n"
        "batch size in an elastic-batch plan, else the job's). At the end,\n"
        "DIR/state.json is a job queue for the next 'efplan plan --jobs'.\n"
        "\n"
        "At the end it lists the admitted jobs behind their plan: fewer\n"
        "iterations done than the plan expects by the time apply stopped\n"
        "(its work spread over the GPU-seconds its slots give it up to its\n"
        "planned end), with their deadlines.\n"
        "\n"
        "Exit codes: 0 applied (or already applied; jobs behind their plan\n"
        "but with their deadline ahead are listed), 2 usage error, 3 invalid\n"
        "plan, jobs, --nodes file or state directory (or another apply holds\n"
        "it or the plan), 4 applied but some job failed (see state.json;\n"
        "before 9), 5 the cluster failed or cannot be reached (the journal\n"
        "is intact: run again to resume), 9 applied but an admitted job is\n"
        "not done by its deadline (its deadline is at or before the plan\n"
        "time apply stopped at).\n");
    cli_help_shared(CLI_F_JSON);
}


/* The admitted jobs behind their plan, one line each, and a count. */
static void print_behind(const exec_plan *p, const exec_report *rep)
{
    char at[40]; /* the plan time, as --time-zone says */
    cli_time(rep->plan_time, rep->plan_time, at, sizeof at);
    for (int k = 0; k < rep->nbehind; k++) {
        const exec_behind *b = &rep->behind[k];
        const exec_job *jb = &p->jobs[b->job];
        char dl[96], t[40];
        if (b->deadline < 0)
            snprintf(dl, sizeof dl, "no deadline");
        else if (b->missed)
            snprintf(dl, sizeof dl, "deadline %s passed: missed",
                     cli_time(b->deadline, rep->plan_time, t, sizeof t));
        else
            snprintf(dl, sizeof dl, "deadline %s ahead",
                     cli_time(b->deadline, rep->plan_time, t, sizeof t));
        printf("behind: %s: %" PRId64 " of %" PRId64 " iterations done, %"
               PRId64 " expected by t=%s; %s\n", jb->id, b->done,
               jb->iterations, b->expected, at, dl);
    }
    if (rep->nbehind)
        printf("%d admitted job(s) behind their plan at t=%s, %d "
               "not done by their deadline\n", rep->nbehind, at,
               rep->missed);
}

/* --json: what the run did, as one object. Returns cli_json_print's. */
static int report_json(const char *plan_path, const exec_plan *p,
                       const exec_report *rep)
{
    jw w;
    jw_init(&w, 1);
    jw_obj(&w, NULL, NULL);
    jw_str(&w, "command", "apply");
    jw_str(&w, "plan", plan_path);
    jw_bool(&w, "already_done", rep->already_done);
    jw_bool(&w, "complete", rep->complete);
    jw_int(&w, "launched", rep->launched);
    jw_int(&w, "done", rep->done);
    jw_int(&w, "failed", rep->failed);
    jw_int(&w, "not_done", rep->pending);
    jw_int(&w, "plan_time", rep->plan_time);
    jw_int(&w, "missed", rep->missed);
    jw_str(&w, "state_file", rep->state_file);
    jw_arr(&w, "behind", NULL);
    for (int k = 0; k < rep->nbehind; k++) {
        const exec_behind *b = &rep->behind[k];
        jw_obj(&w, NULL, NULL);
        jw_str(&w, "id", p->jobs[b->job].id);
        jw_int(&w, "done", b->done);
        jw_int(&w, "iterations", p->jobs[b->job].iterations);
        jw_int(&w, "expected", b->expected);
        if (b->deadline >= 0)
            jw_int(&w, "deadline", b->deadline);
        else
            jw_null(&w, "deadline");
        jw_bool(&w, "missed", b->missed);
        jw_end(&w);
    }
    jw_end(&w);
    jw_end(&w);
    return cli_json_print(&w);
}

/* What the command line asks for. */
typedef struct apply_args {
    exec_opts eo;       /* the executor's options */
    const char *plan;   /* the plan file */
    const char *jobs;   /* --jobs: instead of the plan's jobs file */
    int has_until;      /* --until was given */
    char state[4096];   /* the default state directory: PLAN without
                           .json, plus .state */
} apply_args;

/* One option of the table (not a Slurm one) into *a; 0, or an exit code
 * (printed); 1 for --help (printed). */
static int apply_option(apply_args *a, int o, char **argv)
{
    int64_t v;
    switch (o) {
    case 'b':
        if (cli_backend_option("apply", optarg))
            return EXIT_USAGE;
        a->eo.backend = optarg;
        break;
    case 'u':
        if (ef_parse_i64(optarg, 0, EF_MAX_I64, &v) != EF_NUM_OK &&
            ef_parse_iso8601(optarg, &v, NULL) != EF_OK)
            return cli_usage_error("apply", "--until: \"%s\" is not a time "
                                   "(seconds or ISO-8601)", optarg);
        a->eo.until = v;
        a->has_until = 1;
        break;
    case 'k':
        if (ef_parse_i64(optarg, 1, 1 << 30, &v) != EF_NUM_OK)
            return cli_usage_error("apply", "--slots: \"%s\" is not a "
                                   "positive number of slots", optarg);
        a->eo.slots = (int)v;
        break;
    case 'f':
        if (cli_scale_option("apply", optarg, &a->eo.scale))
            return EXIT_USAGE;
        break;
    case 'F': a->eo.follow = 1; break;
    case 's': a->eo.state = optarg; break;
    case 'j': a->jobs = optarg; break;
    case 'n': a->eo.nodes_file = optarg; break;
    case 'h': help_apply(); return 1;
    default:
        return cli_option_error("apply", o, argv[optind - 1]);
    }
    return 0;
}

/* After the options: the operands and the options together. -1 when it
 * may go on, else EXIT_USAGE (printed). With --json the progress lines
 * go to standard error. */
static int apply_usage(apply_args *a, int argc, char **argv)
{
    exec_opts *eo = &a->eo;
    if (optind >= argc)
        return cli_usage_error("apply", "a plan file is required");
    if (optind + 1 < argc)
        return cli_usage_error("apply", "unexpected argument \"%s\"",
                               argv[optind + 1]);
    if (a->has_until && eo->slots)
        return cli_usage_error("apply", "--until and --slots exclude each "
                               "other");
    if (cli_cf.json && strcmp(eo->backend, "dry-run") == 0)
        return cli_usage_error("apply", "--json: a dry run prints its "
                               "actions, not a summary");
    if (cli_cf.json) /* standard output carries the summary only */
        eo->out = cli_say_err;
    if (eo->follow && strcmp(eo->backend, "slurm") == 0)
        return cli_usage_error("apply", "--follow-jobs: not with --backend "
                               "slurm (the cluster's clock is real: its "
                               "jobs' --time limits and deadlines run on "
                               "the wall clock); use it with the local "
                               "backend");
    if (cli_slurm_only("apply", &eo->slurm, eo->backend, 1) != 0)
        return EXIT_USAGE;
    return -1;
}

/* Parse the command line into *a: -1 when it may go on, else the exit
 * code (printed; 0 for --help). The state directory defaults to PLAN
 * without .json, plus .state (in a->state). */
static int apply_parse(int argc, char **argv, apply_args *a)
{
    static const struct option opts[] = {
        CLI_SLURM_OPTIONS,
        {"backend", required_argument, NULL, 'b'},
        {"until", required_argument, NULL, 'u'},
        {"slots", required_argument, NULL, 'k'},
        {"time-scale", required_argument, NULL, 'f'},
        {"follow-jobs", no_argument, NULL, 'F'},
        {"state", required_argument, NULL, 's'},
        {"jobs", required_argument, NULL, 'j'},
        {"nodes", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    exec_opts_default(&a->eo);
    a->eo.say = cli_say_err;
    a->eo.out = cli_say_out;
    int o;
    opterr = 0;
    optind = 1;
    while ((o = cli_getopt("apply", argc, argv, opts, CLI_F_JSON,
                           "sbatch-arg")) != -1) {
        int so = cli_slurm_option("apply", o, optarg, &a->eo.slurm);
        if (so > 0)
            return so;
        if (so == 0)
            continue;
        int rc = apply_option(a, o, argv);
        if (rc != 0)
            return rc == 1 ? 0 : rc;
    }
    int rc = apply_usage(a, argc, argv);
    if (rc >= 0)
        return rc;
    a->plan = argv[optind];
    if (!a->eo.state) {
        size_t l = strlen(a->plan);
        if (l > 5 && strcmp(a->plan + l - 5, ".json") == 0)
            l -= 5;
        snprintf(a->state, sizeof a->state, "%.*s.state", (int)l, a->plan);
        a->eo.state = a->state;
    }
    return -1;
}

/* What the apply of plan p did (rep): the --json summary, else (not a
 * dry run) its lines. The exit code: 4 when a job failed, else 9 when
 * one is not done by its deadline, else 0 (or cli_json_print's). */
static int apply_say(const apply_args *a, const exec_plan *p,
                     const exec_report *rep)
{
    int rc = 0;
    if (cli_cf.json) {
        rc = report_json(a->plan, p, rep);
        if (rc == 0 && rep->failed)
            rc = EXIT_INFEASIBLE;
        else if (rc == 0 && rep->missed)
            rc = EXIT_MISSED;
        return rc;
    }
    if (strcmp(a->eo.backend, "dry-run") == 0)
        return 0;
    if (rep->already_done)
        printf("%s: already applied (journal %s): nothing to do\n",
               a->plan, rep->journal);
    else
        printf("%s: %s; %d launch(es); jobs: %d done, %d failed, %d not "
               "done\n", a->plan,
               rep->complete ? "applied to its end" : "window applied",
               rep->launched, rep->done, rep->failed, rep->pending);
    print_behind(p, rep);
    if (!rep->already_done)
        printf("wrote %s\n", rep->state_file);
    if (rep->failed)
        rc = EXIT_INFEASIBLE;
    else if (rep->missed)
        rc = EXIT_MISSED;
    return rc;
}

/* Load the plan a names and apply it (exec_apply); say what was done.
 * The exit code. */
static int apply_plan_file(apply_args *a)
{
    ef_err e = {0};
    exec_plan p; /* the plan, with its jobs */
    if (exec_plan_load(&p, a->plan, a->jobs, &e) != EF_OK)
        return cli_fail(&e);
    /* An empty plan (empty queue) is a normal night: say so, then apply it
     * anyway, so that the journal and state.json (an empty queue) exist
     * for the next plan. */
    if (p.njobs == 0 && !cli_cf.json)
        printf("%s: the plan has no jobs (empty queue): nothing to run\n",
               a->plan);
    exec_report rep; /* what the apply did */
    int rc;
    a->eo.zone = cli_cf.zone; /* --time-zone, now parsed */
    if (exec_apply(&p, &a->eo, &rep, &e) != EF_OK) {
        rc = cli_fail(&e);
        if (rc == EXIT_INTERNAL && strcmp(a->eo.backend, "dry-run") != 0)
            fprintf(stderr, "efplan: the journal %s is intact: run the same "
                    "command again to resume\n", rep.journal);
    } else {
        rc = apply_say(a, &p, &rep);
    }
    exec_report_free(&rep);
    exec_plan_free(&p);
    return rc;
}

int cmd_apply(int argc, char **argv)
{
    apply_args a;
    int rc = apply_parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    rc = apply_plan_file(&a);
    cli_slurm_free(&a.eo.slurm);
    return rc;
}
