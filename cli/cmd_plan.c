/* cmd_plan.c: "efplan plan": plan a job queue and print the summary. */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "planner/offline.h"
#include "planner/plan.h"
#include "planner/planio.h"

void help_plan(void)
{
    printf(
        "Usage: efplan plan --jobs FILE --cluster SPEC --curves DIR|A100|T4\n"
        "                   [--slot SECONDS] [--now T] [--horizon DURATION]\n"
        "                   [--out plan.json] [--svg plan.svg]\n"
        "                   [--surplus gain|reference] [--all]\n"
        "                   [--elastic-batch]\n"
        "                   [--overhead fig12|reference|restart|none]\n"
        "                   [--plan-version 1|2]\n"
        "                   [--admission online|offline] [--offline-plans N]\n"
        "\n"
        "Plan a job queue: admit each job whose deadline can be guaranteed by\n"
        "its minimum satisfactory share (in submit order, against the GPUs\n"
        "promised to the jobs before it), reject the others with the earliest\n"
        "deadline that could be guaranteed, give spare GPUs to the jobs that\n"
        "gain most per added GPU, and place every slot by the buddy rule.\n"
        "\n"
        "  --jobs FILE         job queue: trace CSV or JSON {\"jobs\": [...]}\n"
        "  --cluster SPEC      nNgG shorthand (n16g8), or a .csv/.json spec\n"
        "  --curves DIR        curve directory, or a bundled set: A100, T4\n"
        "  --slot SECONDS      slot length (default 60)\n"
        "  --now T             plan start (default: earliest submit time)\n"
        "  --horizon DURATION  write slots up to now+DURATION only (e.g. 24h,\n"
        "                      90m, 3600); decisions still consider every job\n"
        "  --out FILE          write the plan file (JSON, efplan-plan); -:\n"
        "                      to standard output (the summary goes to\n"
        "                      standard error)\n"
        "  --plan-version N    the plan file's version: 2 (default) lists\n"
        "                      each job's runs of slots on the same GPUs;\n"
        "                      1 lists every slot's allocations (larger)\n"
        "  --svg FILE          draw the plan as an SVG chart\n"
        "  --surplus MODE      gain: largest throughput gain per added GPU\n"
        "                      (default); reference: the reference\n"
        "                      implementation's order, to compare numbers\n"
        "  --all               list every job in the summary (default: 20)\n"
        "  --elastic-batch     jobs with batch_sizes: choose the batch size\n"
        "                      too (least GPU-time share; surplus may move a\n"
        "                      job to a larger batch); work in samples\n"
        "  --overhead MODEL    reconfiguration costs the plan pays and keeps\n"
        "                      its promises under, as simulate models them:\n"
        "                      fig12 (default), reference, restart or none\n"
        "  --admission MODE    online (default): decide each job when it\n"
        "                      arrives, as simulate does; offline: the whole\n"
        "                      queue is known, so leave out the jobs whose\n"
        "                      admission keeps more jobs out (a search over\n"
        "                      plans; never fewer admitted than online)\n"
        "  --offline-plans N   plans the offline search may try (default 200)\n"
        "\n"
        "Exit codes: 0 planned (some jobs may be rejected: see the summary),\n"
        "2 usage error, 3 invalid input, 5 internal error.\n");
}

/* "24h", "90m", "30s", "2d" or plain seconds. */
static int parse_duration(const char *s, int64_t *out)
{
    char num[32];
    size_t l = strlen(s);
    if (l == 0 || l >= sizeof num)
        return -1;
    int64_t mul = 1;
    memcpy(num, s, l + 1);
    switch (num[l - 1]) {
    case 's': mul = 1; num[l - 1] = 0; break;
    case 'm': mul = 60; num[l - 1] = 0; break;
    case 'h': mul = 3600; num[l - 1] = 0; break;
    case 'd': mul = 86400; num[l - 1] = 0; break;
    default: break;
    }
    int64_t v;
    if (ef_parse_i64(num, 1, EF_MAX_I64 / 86400, &v) != EF_NUM_OK)
        return -1;
    *out = v * mul;
    return 0;
}

static void print_summary(FILE *f, const plan *p, int all)
{
    char span[64];
    double cap = (double)(p->end - p->now) * p->cl.total_gpus;
    fprintf(f, "plan     %d jobs on %s (%d GPUs), slots of %d s from %" PRId64
            ", overhead %s\n", p->njobs, p->cl.name, p->cl.total_gpus,
            p->opts.slot, p->now, ovh_name(p->opts.overhead));
    fprintf(f, "  admitted %d, rejected %d, best-effort %d\n", p->admitted,
            p->rejected, p->best_effort);
    if (p->at_risk > 0)
        fprintf(f, "  at risk %d (admitted, fell behind their reservations: "
                "see their reason)\n", p->at_risk);
    fprintf(f, "  GPU-hours promised %.1f, used %.1f; utilisation %.1f%% "
            "over %s\n", p->promised_gpu_seconds / 3600.0,
            p->used_gpu_seconds / 3600.0,
            cap > 0 ? 100.0 * p->used_gpu_seconds / cap : 0.0,
            ef_fmt_duration(p->end - p->now, span, sizeof span));
    fprintf(f, "  scheduling points %d, resizes %d, migrations %d, re-plan "
            "fallbacks %d\n", p->points, p->resizes, p->migrations,
            p->replan_fallbacks);
    fprintf(f, "  %-20s %-12s %6s %-11s %10s %10s %8s %10s\n", "job",
            "model", "batch", "decision", "deadline", "end", "slack",
            "earliest");
    int shown = 0;
    for (int i = 0; i < p->njobs; i++) {
        if (!all && shown == 20) {
            fprintf(f, "  ... %d more (--all lists every job)\n",
                    p->njobs - 20);
            break;
        }
        const plan_job *j = &p->jobs[i];
        char dl[24] = "-", en[24] = "-", sl[24] = "-", ea[24] = "-";
        if (j->in->has_deadline)
            snprintf(dl, sizeof dl, "%" PRId64, j->in->deadline);
        if (j->planned_end >= 0)
            snprintf(en, sizeof en, "%" PRId64, j->planned_end);
        if (j->in->has_deadline && j->planned_end >= 0)
            snprintf(sl, sizeof sl, "%" PRId64, j->in->deadline - j->planned_end);
        if (j->earliest_feasible_deadline >= 0)
            snprintf(ea, sizeof ea, "%" PRId64, j->earliest_feasible_deadline);
        const char *d = j->decision == PLAN_ADMITTED ? "admitted"
                        : j->decision == PLAN_REJECTED ? "rejected"
                                                       : "best_effort";
        fprintf(f, "  %-20.20s %-12.12s %6ld %-11s %10s %10s %8s %10s\n",
                j->in->id, j->in->model, j->in->batch, d, dl, en, sl, ea);
        shown++;
    }
}

int cmd_plan(int argc, char **argv)
{
    static const struct option opts[] = {
        {"jobs", required_argument, NULL, 'j'},
        {"cluster", required_argument, NULL, 'c'},
        {"curves", required_argument, NULL, 'u'},
        {"slot", required_argument, NULL, 's'},
        {"now", required_argument, NULL, 'n'},
        {"horizon", required_argument, NULL, 'H'},
        {"out", required_argument, NULL, 'o'},
        {"svg", required_argument, NULL, 'g'},
        {"surplus", required_argument, NULL, 'S'},
        {"all", no_argument, NULL, 'a'},
        {"elastic-batch", no_argument, NULL, 'E'},
        {"overhead", required_argument, NULL, 'O'},
        {"plan-version", required_argument, NULL, 'V'},
        {"admission", required_argument, NULL, 'A'},
        {"offline-plans", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *jobs_path = NULL, *cluster_arg = NULL, *curves_arg = NULL;
    const char *out_path = NULL, *svg_path = NULL;
    int all = 0, o, version = PLAN_V2;
    int offline = 0, offline_plans = OFF_DEFAULT_PLANS; /* --admission */
    plan_opts po;
    plan_opts_default(&po);
    po.overhead = OVH_FIG12;
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        int64_t v;
        switch (o) {
        case 'j': jobs_path = optarg; break;
        case 'c': cluster_arg = optarg; break;
        case 'u': curves_arg = optarg; break;
        case 'o': out_path = optarg; break;
        case 'g': svg_path = optarg; break;
        case 'a': all = 1; break;
        case 's':
            if (cli_parse_slot("plan", optarg, &po.slot) != 0)
                return EXIT_USAGE;
            break;
        case 'n':
            if (cli_parse_now("plan", optarg, &po.now) != 0)
                return EXIT_USAGE;
            break;
        case 'H':
            if (parse_duration(optarg, &v) != 0)
                return cli_usage_error("plan", "--horizon: \"%s\" is not a "
                                       "duration (e.g. 24h, 90m, 3600)", optarg);
            po.horizon = v;
            break;
        case 'S':
            if (strcmp(optarg, "gain") == 0)
                po.surplus = SURPLUS_GAIN;
            else if (strcmp(optarg, "reference") == 0)
                po.surplus = SURPLUS_REFERENCE;
            else
                return cli_usage_error("plan", "--surplus: \"%s\" (expected "
                                       "gain or reference)", optarg);
            break;
        case 'E': po.elastic_batch = 1; break;
        case 'A':
            if (strcmp(optarg, "online") == 0 || strcmp(optarg, "offline") == 0)
                offline = optarg[1] == 'f';
            else
                return cli_usage_error("plan", "--admission: \"%s\" (expected "
                                       "online or offline)", optarg);
            break;
        case 'P':
            if (ef_parse_i64(optarg, 1, 1000000, &v) != EF_NUM_OK)
                return cli_usage_error("plan", "--offline-plans: \"%s\" is not "
                                       "a count from 1 to 1e6", optarg);
            offline_plans = (int)v;
            break;
        case 'V':
            if (cli_parse_plan_version("plan", optarg, &version) != 0)
                return EXIT_USAGE;
            break;
        case 'O': {
            int m = ovh_parse(optarg);
            if (m < 0)
                return cli_usage_error("plan", "--overhead: \"%s\" (expected "
                                       "fig12, reference, restart or none)",
                                       optarg);
            po.overhead = (ovh_mode)m;
            break;
        }
        case 'h': help_plan(); return 0;
        default:
            return cli_option_error("plan", o, argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("plan", "unexpected argument \"%s\"",
                               argv[optind]);
    if (!jobs_path || !cluster_arg || !curves_arg)
        return cli_usage_error("plan", "--jobs, --cluster and --curves are "
                               "required");
    ef_err e = {0};
    cluster c;
    curve_set cs = {0};
    job_queue q = {0};
    plan p = {0};
    off_stats os = {0};
    int rc = 0;
    if (cli_load_inputs(cluster_arg, curves_arg, jobs_path, &c, &cs, &q, &e) !=
        EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    if ((offline ? off_plan(&p, &q, &c, &po, offline_plans, &os, &e)
                 : plan_build(&p, &q, &c, &po, &e)) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    if (plan_check(&p, &e) != EF_OK) {
        ef_prefix(&e, "plan failed its own check: ");
        rc = cli_fail(&e);
        goto out;
    }
    /* --out -: the plan file is standard output, the summary goes to
     * standard error; files first, so that a failure prints no plan */
    int to_stdout = out_path && strcmp(out_path, "-") == 0;
    FILE *say = to_stdout ? stderr : stdout;
    if (svg_path && plan_write_svg(&p, svg_path, &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    if (out_path) {
        plan_doc d;
        size_t n;
        plan_doc_for_file(&d, &p, jobs_path, curves_arg, version);
        char *text = plan_doc_json(&d, &n);
        plan_doc_free(&d);
        int wr = cli_write_out(out_path, text, n, &e);
        free(text);
        if (wr != EF_OK) {
            rc = cli_fail(&e);
            goto out;
        }
    }
    print_summary(say, &p, all);
    if (offline)
        fprintf(say, "offline admission: %d admitted (arrival order: %d), %d "
                "jobs left out, %d plans tried%s\n", p.admitted,
                os.online_admitted, os.withheld, os.plans,
                os.budget_hit ? " (stopped by --offline-plans)" : "");
    if (out_path && !to_stdout)
        fprintf(say, "wrote %s\n", out_path);
    if (svg_path)
        fprintf(say, "wrote %s\n", svg_path);
out:
    plan_free(&p);
    queue_free(&q);
    curve_set_free(&cs);
    return rc;
}
