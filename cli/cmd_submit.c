/* cmd_submit.c: "efplan submit": admit one new job against a plan file. */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/util.h"
#include "planner/planio.h"
#include "planner/submit.h"

void help_submit(void)
{
    printf(
        "Usage: efplan submit --plan plan.json --job JSON [--curves DIR]\n"
        "                     [--now T]\n"
        "\n"
        "Ask whether one new job can be admitted into an existing plan. The\n"
        "plan's queue plus the new job is planned again with the plan's\n"
        "cluster, curves, slot and surplus mode. The job is admitted only if\n"
        "its deadline is guaranteed and every job the plan admitted stays\n"
        "admitted, whatever its submit time: a promise is never broken. Then\n"
        "the job (every field: command, env, batch range) is added to the\n"
        "jobs file the plan names and the plan file is rewritten, both\n"
        "atomically, under a lock (PLAN.lock), so concurrent submits land one\n"
        "after the other. Otherwise the answer says why, with the earliest\n"
        "deadline that would be admitted (the second before it is not), and\n"
        "nothing is written.\n"
        "\n"
        "  --plan FILE     plan written by 'efplan plan --out'\n"
        "  --job JSON      the job, as in a JSON queue: {\"id\", \"model\",\n"
        "                  \"batch_size\", \"iterations\", \"deadline\",\n"
        "                  \"submit_time\"}; submit_time defaults to the\n"
        "                  plan's current time: its now, or, when later,\n"
        "                  --now, or (a plan in Unix time, now >= 10^9,\n"
        "                  without --now) the wall clock; never earlier\n"
        "                  than the plan's now\n"
        "  --curves DIR    curves to use instead of the ones the plan names\n"
        "  --now T         the current time on the plan's clock (seconds or\n"
        "                  ISO-8601), instead of the wall clock\n"
        "\n"
        "Exit codes: 0 admitted (or best-effort), 4 rejected, 2 usage error,\n"
        "3 invalid input, 5 internal error.\n");
}

int cmd_submit(int argc, char **argv)
{
    static const struct option opts[] = {
        {"plan", required_argument, NULL, 'p'},
        {"job", required_argument, NULL, 'j'},
        {"curves", required_argument, NULL, 'u'},
        {"now", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *plan_path = NULL, *job_arg = NULL, *curves_arg = NULL;
    plan_submit_clock clk = {.now = -1, .wall = -1};
    int o;
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (o) {
        case 'p': plan_path = optarg; break;
        case 'j': job_arg = optarg; break;
        case 'u': curves_arg = optarg; break;
        case 'n':
            if (cli_parse_now("submit", optarg, &clk.now) != 0)
                return EXIT_USAGE;
            break;
        case 'h': help_submit(); return 0;
        default:
            return cli_option_error("submit", o, argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("submit", "unexpected argument \"%s\"",
                               argv[optind]);
    if (!plan_path || !job_arg)
        return cli_usage_error("submit", "--plan and --job are required");

    if (clk.now < 0) { /* the wall clock, for a plan in Unix time */
        struct timespec ts;
        if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && ts.tv_sec >= 0)
            clk.wall = (int64_t)ts.tv_sec;
    }
    ef_err e = {0};
    plan_submit_res r;
    int rc = 0;
    /* read, decide and write under the plan's lock */
    size_t ln = strlen(plan_path) + 8;
    char *lock_path = ef_malloc(ln);
    snprintf(lock_path, ln, "%s.lock", plan_path);
    int lock = ef_lock_file(lock_path, &e);
    free(lock_path);
    if (lock < 0)
        return cli_fail(&e);
    if (plan_submit(plan_path, job_arg, curves_arg, &clk, &r, &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    const plan_job *nw = &r.p.jobs[r.p.njobs - 1];
    if (r.submit_from == PLAN_SUBMIT_NOW || r.submit_from == PLAN_SUBMIT_WALL)
        printf("submit_time: %" PRId64 " (%s; the plan's now is %" PRId64
               ")\n", r.submit_time, r.submit_from == PLAN_SUBMIT_NOW ?
               "--now" : "the wall clock", r.doc.now);
    if (r.decision == PLAN_REJECTED) {
        if (r.broken)
            printf("rejected: %s would break the promise made to job %s\n",
                   nw->in->id, r.broken);
        else
            printf("rejected: %s: %s\n", nw->in->id, r.reason);
        if (r.earliest >= 0)
            printf("earliest deadline that can be guaranteed: %" PRId64 "\n",
                   r.earliest);
        else
            printf("no deadline can be guaranteed for this job\n");
        rc = EXIT_INFEASIBLE;
        goto out;
    }
    if (plan_submit_commit(&r, plan_path, &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    for (int k = 0; k < r.nchanges; k++) {
        if (k == 0)
            printf("note: jobs the plan had not admitted change "
                   "decision:\n");
        printf("  %s: %s -> %s\n", r.changes[k].id,
               plan_decision_name(r.changes[k].from),
               plan_decision_name(r.changes[k].to));
    }
    if (r.decision == PLAN_ADMITTED)
        printf("admitted: %s, planned end %" PRId64 " (slack %" PRId64 " s); "
               "%s rewritten\n", nw->in->id, nw->planned_end,
               nw->in->deadline - nw->planned_end, plan_path);
    else
        printf("best_effort: %s, planned end %" PRId64 "; %s rewritten\n",
               nw->in->id, nw->planned_end, plan_path);
    if (r.jobs_path && !r.jobs_csv)
        printf("added %s to the jobs file %s\n", nw->in->id, r.jobs_path);
    else if (r.jobs_path)
        printf("note: the jobs file %s is a CSV trace (no command, env): "
               "not changed; apply this plan with --jobs FILE holding %s\n",
               r.jobs_path, nw->in->id);
    else
        printf("note: the plan names no jobs file: apply this plan with "
               "--jobs FILE holding %s\n", nw->in->id);
out:
    plan_submit_free(&r);
    ef_unlock_file(lock);
    return rc;
}
