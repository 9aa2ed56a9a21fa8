/* cmd_submit.c: "efplan submit": admit one new job against a plan file. */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "planner/planio.h"
#include "planner/submit.h"

void help_submit(void)
{
    printf(
        "Usage: efplan submit --plan plan.json --job JSON [--curves DIR]\n"
        "\n"
        "Ask whether one new job can be admitted into an existing plan. The\n"
        "plan's queue plus the new job is planned again with the plan's\n"
        "cluster, curves, slot and surplus mode. The job is admitted only if\n"
        "its deadline is guaranteed and every job admitted before it arrives\n"
        "stays admitted; then the plan file is rewritten atomically (jobs\n"
        "submitted later are decided when they arrive; changes to their\n"
        "decisions are listed). Otherwise the\n"
        "answer says why, with the earliest deadline that could be\n"
        "guaranteed, and the plan file is left untouched.\n"
        "\n"
        "  --plan FILE     plan written by 'efplan plan --out'\n"
        "  --job JSON      the job, as in a JSON queue: {\"id\", \"model\",\n"
        "                  \"batch_size\", \"iterations\", \"deadline\",\n"
        "                  \"submit_time\" (default: the plan's start)}\n"
        "  --curves DIR    curves to use instead of the ones the plan names\n"
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
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *plan_path = NULL, *job_arg = NULL, *curves_arg = NULL;
    int o;
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (o) {
        case 'p': plan_path = optarg; break;
        case 'j': job_arg = optarg; break;
        case 'u': curves_arg = optarg; break;
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

    ef_err e = {0};
    plan_submit_res r;
    int rc = 0;
    if (plan_submit(plan_path, job_arg, curves_arg, &r, &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    const plan_job *nw = &r.p.jobs[r.p.njobs - 1];
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
    if (plan_write_json(&r.p, plan_path, r.jobs_file, r.curves, &e) !=
        EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    for (int k = 0; k < r.nchanges; k++) {
        if (k == 0)
            printf("note: jobs submitted later change decision:\n");
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
out:
    plan_submit_free(&r);
    return rc;
}
