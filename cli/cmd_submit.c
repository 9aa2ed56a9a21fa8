/* cmd_submit.c: "efplan submit": admit one new job against a plan file. */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "../planner/cluster.h"
#include "../planner/curve.h"
#include "../planner/jobs.h"
#include "../planner/jsonin.h"
#include "../planner/plan.h"
#include "../planner/util.h"
#include "cli.h"

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

static const char *const copy_keys[] = {"id", "model", "batch_size",
                                        "iterations", "iterations_done",
                                        "submit_time", "deadline"};

/* The id of a job that had been admitted by the time the new job arrives
 * (submitted no later than it) and that the new plan no longer admits;
 * NULL when every promise holds. Jobs submitted after the new job were
 * promised nothing yet: they are decided when they arrive. */
static const char *broken_promise(const plan *p, json_t *old_jobs)
{
    size_t i;
    json_t *pj;
    const job *nw = p->jobs[p->njobs - 1].in;
    json_array_foreach(old_jobs, i, pj) {
        json_t *d = json_object_get(pj, "decision");
        if (p->jobs[i].in->submit <= nw->submit && json_is_string(d) &&
            strcmp(json_string_value(d), "admitted") == 0 &&
            p->jobs[i].decision != PLAN_ADMITTED)
            return p->jobs[i].in->id;
    }
    return NULL;
}

/* Plan the queue with the new (last) job's deadline set to 'deadline':
 * 1 if it is admitted and no promise breaks, 0 if not (*hint = the
 * planner's earliest feasible deadline then), -1 on an internal error. */
static int admissible(job_queue *q, const cluster *c, const plan_opts *po,
                      json_t *old_jobs, int64_t deadline, int64_t *hint)
{
    plan p2;
    ef_err e = {0};
    job *qj = &q->jobs[q->n - 1];
    qj->deadline = deadline;
    qj->has_deadline = 1;
    if (plan_build(&p2, q, c, po, &e) != EF_OK) {
        cli_fail(&e);
        return -1;
    }
    int ok = p2.jobs[p2.njobs - 1].decision == PLAN_ADMITTED &&
             !broken_promise(&p2, old_jobs);
    *hint = p2.jobs[p2.njobs - 1].earliest_feasible_deadline;
    plan_free(&p2);
    return ok;
}

/* Print the later jobs whose decision the new job changes. */
static void print_changes(const plan *p, json_t *old_jobs)
{
    size_t i;
    json_t *pj;
    int k = 0;
    json_array_foreach(old_jobs, i, pj) {
        const char *d = json_string_value(json_object_get(pj, "decision"));
        const char *nd = p->jobs[i].decision == PLAN_ADMITTED ? "admitted"
                         : p->jobs[i].decision == PLAN_REJECTED ? "rejected"
                                                                : "best_effort";
        if (d && strcmp(d, nd) != 0) {
            if (k++ == 0)
                printf("note: jobs submitted later change decision:\n");
            printf("  %s: %s -> %s\n", p->jobs[i].in->id, d, nd);
        }
    }
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
    int rc = 0;
    char *buf = NULL, *qtext = NULL;
    size_t len;
    json_t *root = NULL, *nj = NULL, *arr = NULL;
    job_queue q = {0}, one = {0};
    curve_set cs = {0};
    plan p = {0};
    cluster c;
    if (ef_read_file(plan_path, &buf, &len, &e) != EF_OK ||
        !(root = jsonin_parse(plan_path, buf, len, &e))) {
        rc = cli_fail(&e);
        goto out;
    }
    json_t *fmt = json_object_get(root, "format");
    json_t *cl = json_object_get(root, "cluster");
    json_t *jobs = json_object_get(root, "jobs");
    json_t *jnow = json_object_get(root, "now");
    json_t *jslot = json_object_get(root, "slot_seconds");
    json_t *jsur = json_object_get(root, "surplus");
    json_t *jcur = json_object_get(root, "curves");
    if (!json_is_string(fmt) || strcmp(json_string_value(fmt), "efplan-plan") ||
        !json_is_object(cl) || !json_is_array(jobs) || !json_is_integer(jnow) ||
        !json_is_integer(jslot) || !json_is_string(jsur) ||
        !json_is_string(jcur)) {
        ef_fail(&e, EF_E_INPUT, "%s: not an efplan plan file (expected format "
                "\"efplan-plan\" with cluster, jobs, now, slot_seconds, curves "
                "and surplus)", plan_path);
        rc = cli_fail(&e);
        goto out;
    }
    /* The new job, checked alone first so errors name --job. */
    {
        json_error_t je;
        nj = json_loads(job_arg, JSON_REJECT_DUPLICATES, &je);
        if (!nj) {
            ef_fail(&e, EF_E_INPUT, "--job:%d:%d: JSON syntax: %s", je.line,
                    je.column, je.text);
            rc = cli_fail(&e);
            goto out;
        }
        if (!json_is_object(nj)) {
            ef_fail(&e, EF_E_INPUT, "--job: expected an object, got %s",
                    jsonin_type(nj));
            rc = cli_fail(&e);
            goto out;
        }
        if (!json_object_get(nj, "submit_time"))
            json_object_set(nj, "submit_time", jnow);
        json_t *wrap = json_pack("{s:[O]}", "jobs", nj);
        char *t = json_dumps(wrap, 0);
        json_decref(wrap);
        int r = queue_parse_json(&one, "--job", t, strlen(t), &e);
        free(t);
        if (r != EF_OK) {
            rc = cli_fail(&e);
            goto out;
        }
    }
    /* The plan's queue plus the new job. */
    arr = json_array();
    size_t i;
    json_t *pj;
    json_array_foreach(jobs, i, pj) {
        json_t *cp = json_object();
        for (size_t k = 0; k < sizeof copy_keys / sizeof *copy_keys; k++) {
            json_t *v = json_object_get(pj, copy_keys[k]);
            if (v && !(strcmp(copy_keys[k], "iterations_done") == 0 &&
                       json_integer_value(v) == 0))
                json_object_set(cp, copy_keys[k], v);
        }
        json_array_append_new(arr, cp);
    }
    json_array_append(arr, nj);
    {
        json_t *wrap = json_pack("{s:O}", "jobs", arr);
        qtext = json_dumps(wrap, 0);
        json_decref(wrap);
    }
    if (queue_parse_json(&q, plan_path, qtext, strlen(qtext), &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    int64_t nodes = 0, gpn = 0;
    if (jsonin_int(cl, "nodes", 1, 1, INT32_MAX, &nodes, plan_path, "cluster",
                   &e) < 0 ||
        jsonin_int(cl, "gpus_per_node", 1, 1, 64, &gpn, plan_path, "cluster",
                   &e) < 0 ||
        cluster_init(&c, 1, (long)nodes, (long)gpn, plan_path, &e) != EF_OK ||
        curve_set_load_arg(&cs, curves_arg ? curves_arg
                                           : json_string_value(jcur), &e) != EF_OK ||
        queue_resolve(&q, &cs, &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    plan_opts po;
    plan_opts_default(&po);
    po.now = json_integer_value(jnow);
    po.slot = (int)json_integer_value(jslot);
    po.surplus = strcmp(json_string_value(jsur), "reference") == 0
                     ? SURPLUS_REFERENCE : SURPLUS_GAIN;
    po.elastic_batch = json_is_true(json_object_get(root, "elastic_batch"));
    if (plan_build(&p, &q, &c, &po, &e) != EF_OK ||
        plan_check(&p, &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    const plan_job *nw = &p.jobs[p.njobs - 1];
    const char *broken = broken_promise(&p, jobs);
    if (nw->decision == PLAN_REJECTED || broken) {
        if (broken)
            printf("rejected: %s would break the promise made to job %s\n",
                   nw->in->id, broken);
        else
            printf("rejected: %s: %s\n", nw->in->id, nw->reason);
        /* The earliest deadline that is admitted without breaking any
         * promise: start from the planner's answer and step forward,
         * doubling the step, until a deadline is accepted. */
        job *qj = &q.jobs[q.n - 1];
        int64_t cand = nw->earliest_feasible_deadline, step = po.slot;
        if (qj->has_deadline && cand < 0 && broken)
            cand = qj->deadline + step;
        int found = 0;
        int64_t lo = -1; /* largest deadline known to fail */
        for (int tries = 0; tries < 40 && cand >= 0 && !found; tries++) {
            int64_t hint;
            int ok = admissible(&q, &c, &po, jobs, cand, &hint);
            if (ok < 0) {
                rc = EXIT_INTERNAL;
                goto out;
            }
            if (ok) {
                found = 1;
            } else {
                lo = cand;
                cand = hint > cand ? hint : cand + step;
                step *= 2;
            }
        }
        /* Narrow down between the last failure and the first success. */
        for (int tries = 0; found && lo >= 0 && cand - lo > 1 && tries < 24;
             tries++) {
            int64_t mid = lo + (cand - lo) / 2, hint;
            int ok = admissible(&q, &c, &po, jobs, mid, &hint);
            if (ok < 0) {
                rc = EXIT_INTERNAL;
                goto out;
            }
            if (ok)
                cand = mid;
            else
                lo = mid;
        }
        if (found)
            printf("earliest deadline that can be guaranteed: %" PRId64 "\n",
                   cand);
        else
            printf("no deadline can be guaranteed for this job\n");
        rc = EXIT_INFEASIBLE;
        goto out;
    }
    const char *jobs_file = json_string_value(json_object_get(root, "jobs_file"));
    if (plan_write_json(&p, plan_path, jobs_file ? jobs_file : "",
                        curves_arg ? curves_arg : json_string_value(jcur),
                        &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    print_changes(&p, jobs);
    if (nw->decision == PLAN_ADMITTED)
        printf("admitted: %s, planned end %" PRId64 " (slack %" PRId64 " s); "
               "%s rewritten\n", nw->in->id, nw->planned_end,
               nw->in->deadline - nw->planned_end, plan_path);
    else
        printf("best_effort: %s, planned end %" PRId64 "; %s rewritten\n",
               nw->in->id, nw->planned_end, plan_path);
out:
    plan_free(&p);
    queue_free(&q);
    queue_free(&one);
    curve_set_free(&cs);
    json_decref(arr);
    json_decref(nj);
    json_decref(root);
    free(qtext);
    free(buf);
    return rc;
}
