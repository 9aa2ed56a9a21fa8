/* cmd_oracle.c: "efplan oracle": the greedy plan beside the exact ILP. */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/jsonw.h"
#include "common/util.h"
#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "planner/offline.h"
#include "planner/plan.h"
#include "planner/planio.h"
#include "solver/ilp.h"

/* --method auto runs the exact ILP too up to this many binaries. */
#define ORACLE_AUTO_BINARIES 50000L

/* What --method asks for. */
enum { M_AUTO, M_EXACT, M_RELAXED, M_BOTH };

void help_oracle(void)
{
    printf(
        "Usage: efplan oracle --jobs FILE --cluster SPEC --curves DIR|A100|T4\n"
        "                     [--slot SECONDS] [--now T] [--time-limit SEC]\n"
        "                     [--node-limit N] [--must-admit ID[,ID...]]\n"
        "                     [--no-warm-start] [--write-lp model.lp]\n"
        "                     [--method auto|exact|relaxed|both]\n"
        "                     [--windows N] [--offline-plans N]\n"
        "                     [--offline-exact BINARIES]\n"
        "                     [--out result.json] [--plan-out ilp-plan.json]\n"
        "\n"
        "How far is the greedy planner from the best possible admission?\n"
        "Plan the queue greedily (as 'efplan plan') and solve the same\n"
        "instance exactly as a time-indexed integer program with GLPK: most\n"
        "deadline jobs admitted, then least GPU-time. Prints both and the gap\n"
        "with the solver's real status: optimal; feasible (a limit was\n"
        "reached: best solution and upper bound); no_incumbent (a limit was\n"
        "reached before any solution: the bound still holds); infeasible\n"
        "(the --must-admit jobs cannot all be guaranteed). Best-effort jobs\n"
        "are outside the comparison. The exact ILP proves small instances\n"
        "(about 12 jobs x 24 slots in seconds). At real size (hundreds of\n"
        "jobs, a day of 60 s slots) the bound comes from the LP of a\n"
        "time-aggregated model (solver/ilp.h proves it a bound): no plan can\n"
        "admit more jobs, and none admitting as many as greedy uses fewer\n"
        "GPU-hours. The offline admission ('efplan plan --admission\n"
        "offline') is shown beside greedy's arrival order.\n"
        "\n"
        "  --jobs FILE         job queue: trace CSV or JSON {\"jobs\": [...]}\n"
        "  --cluster SPEC      nNgG shorthand (n16g8), or a .csv/.json spec\n"
        "  --curves DIR        curve directory, or a bundled set: A100, T4\n"
        "  --slot SECONDS      slot length (default 60)\n"
        "  --now T             start (default: earliest submit time)\n"
        "  --time-limit SEC    stop each solve after SEC seconds (default 10\n"
        "                      for the exact ILP, 60 for the relaxation;\n"
        "                      0 = none); results then depend on the machine\n"
        "  --node-limit N      stop after N branch-and-cut subproblems\n"
        "                      (reproducible; default none)\n"
        "  --must-admit IDS    these jobs must be admitted (comma-separated)\n"
        "  --no-warm-start     do not start the solver from the greedy plan\n"
        "  --write-lp FILE     write the model (CPLEX LP format: glpsol, CBC,\n"
        "                      HiGHS read it): the exact ILP's when it runs,\n"
        "                      else the relaxation's\n"
        "  --method M          exact: the time-indexed ILP; relaxed: only the\n"
        "                      aggregated LP bound (any size); both; auto\n"
        "                      (default): the bound, and the exact ILP too\n"
        "                      when it has at most 50,000 binaries\n"
        "  --windows N         time windows of the relaxation (default 360;\n"
        "                      more is tighter and slower)\n"
        "  --offline-plans N   plans the offline admission may try (default\n"
        "                      200; 1 = arrival order only)\n"
        "  --offline-exact B   the offline admission's exact step runs on\n"
        "                      models of at most B binaries (default 5000;\n"
        "                      0 = the search alone), as in 'efplan plan'\n"
        "  --out FILE          write the result (JSON, efplan-oracle v2)\n"
        "  --plan-out FILE     write the ILP's schedule as a plan file\n"
        "\n"
        "Exit codes: 0 optimal or feasible, 2 usage error, 3 invalid input,\n"
        "4 infeasible, no incumbent, or no bound (the JSON is still written),\n"
        "5 internal error (a GLPK failure, a write failure).\n");
    cli_help_shared(CLI_F_JSON);
}

/* Mark the jobs named in a comma-separated list; usage error if unknown. */
static int parse_must(const char *list, const job_queue *q, int *must)
{
    const char *s = list;
    while (*s) {
        const char *c = strchr(s, ',');
        size_t l = c ? (size_t)(c - s) : strlen(s);
        int found = 0;
        for (int j = 0; j < q->n; j++)
            if (strlen(q->jobs[j].id) == l &&
                memcmp(q->jobs[j].id, s, l) == 0) {
                must[j] = 1;
                found = 1;
            }
        if (!found) {
            char id[256], qt[128];
            snprintf(id, sizeof id, "%.*s", (int)(l < 255 ? l : 255), s);
            return cli_usage_error("oracle", "--must-admit: no job \"%s\" in "
                                   "the queue", ef_quote(id, qt, sizeof qt));
        }
        if (!c)
            break;
        s = c + 1;
    }
    return 0;
}

/* The greedy, offline and relaxation lines, and the relaxation's gap
 * when the exact ILP did not run. */
static void print_bound(const plan *g, const plan *off, const off_stats *os,
                        const ilp_relaxed *x, const ilp_result *r,
                        const job_queue *q)
{
    if (!r)
        printf("oracle   %d jobs (%d with deadline) on %s (%d GPUs), %d "
               "slots of %d s from %" PRId64 "\n", q->n, x->deadline_jobs,
               g->cl.name, g->cl.total_gpus, x->nslots, x->slot, x->now);
    printf("  greedy (arrival order) admits %d jobs, %.2f GPU-hours\n",
           g->admitted, g->promised_gpu_seconds / 3600.0);
    printf("  offline admission admits %d jobs, %.2f GPU-hours (%d plans "
           "tried, %d jobs left out%s)\n", off->admitted,
           off->promised_gpu_seconds / 3600.0, os->plans, os->withheld,
           os->budget_hit ? "; stopped by --offline-plans" : "");
    char ex[160]; /* what its exact step did */
    ilp_offline_text(os, ex, sizeof ex);
    printf("    %s\n", ex);
    if (!x)
        return;
    switch (x->status) {
    case ILP_OPTIMAL:
        printf("  relaxed bound: at most %d jobs admissible (LP %.3f over "
               "%d windows, %d rows, %d columns, %.2f s)\n", x->bound,
               x->lp_value, x->windows, x->rows, x->cols, x->seconds);
        if (x->gpu_seconds_bound >= 0)
            printf("  relaxed bound: admitting %d jobs takes at least %.2f "
                   "GPU-hours\n", x->gpu_for, x->gpu_seconds_bound / 3600.0);
        break;
    case ILP_NO_INCUMBENT:
        printf("  relaxed bound: the LP was stopped by the time limit after "
               "%.2f s (%d windows); only the trivial bound %d holds\n",
               x->seconds, x->windows, x->bound);
        break;
    default:
        printf("  relaxed bound: the --must-admit jobs cannot all be "
               "admitted together\n");
        break;
    }
    if (!r && x->status != ILP_INFEASIBLE)
        printf("  gap: greedy admits %d, offline %d; no plan admits more than "
               "%d (greedy's gap at most %d, offline's at most %d)\n",
               g->admitted, off->admitted, x->bound, x->bound - g->admitted,
               x->bound - off->admitted);
}

static void print_result(const plan *g, const ilp_result *r, const job_queue *q)
{
    char buf[64];
    printf("oracle   %d jobs (%d with deadline) on %s (%d GPUs), %d slots of "
           "%d s from %" PRId64 "\n", q->n, r->deadline_jobs, g->cl.name,
           g->cl.total_gpus, r->nslots, r->slot, r->now);
    printf("  model  %d rows, %d binaries; %d jobs cannot finish even alone; "
           "warm start %s\n", r->rows, r->binaries, r->hopeless,
           r->warm_start > 0 ? "accepted" : r->warm_start < 0 ? "rejected"
                                                             : "not used");
    printf("  %-7s %-13s %8s %6s %10s %8s %8s\n", "", "status", "admitted",
           "bound", "GPU-hours", "nodes", "seconds");
    printf("  %-7s %-13s %8d %6s %10.2f %8s %8s\n", "greedy", "-", g->admitted,
           "-", g->promised_gpu_seconds / 3600.0, "-", "-");
    char adm[16] = "-", bnd[16] = "-", gh[24] = "-";
    if (r->admit) {
        snprintf(adm, sizeof adm, "%d", r->admitted);
        snprintf(gh, sizeof gh, "%.2f", r->gpu_seconds / 3600.0);
    }
    if (r->status != ILP_INFEASIBLE)
        snprintf(bnd, sizeof bnd, "%d", r->bound);
    snprintf(buf, sizeof buf, "%.2f", r->seconds);
    printf("  %-7s %-13s %8s %6s %10s %8ld %8s\n", "ilp",
           ilp_status_name(r->status), adm, bnd, gh, r->nodes, buf);
    if (r->lp_bound >= 0)
        printf("  LP relaxation bound: %d admitted\n", r->lp_bound);
    if (r->admit && r->gpu_status == ILP_FEASIBLE)
        printf("  GPU-time not proven least: at least %.2f GPU-hours for %d "
               "jobs\n", r->gpu_seconds_bound / 3600.0, r->admitted);
    if (r->limit_hit)
        printf("  stopped by the %s limit\n",
               r->limit_hit == 1 ? "time" : "node");
    switch (r->status) {
    case ILP_OPTIMAL:
        printf("  gap: the optimum admits %d, greedy %d (%d more)\n",
               r->admitted, g->admitted, r->admitted - g->admitted);
        break;
    case ILP_FEASIBLE:
        if (r->bound == r->admitted)
            printf("  gap: the optimum admits %d (proven), greedy %d (%d "
                   "more)\n", r->admitted, g->admitted,
                   r->admitted - g->admitted);
        else
            printf("  gap: not proven; the best found admits %d, at most %d "
                   "possible; greedy %d (gap at most %d)\n", r->admitted,
                   r->bound, g->admitted, r->bound - g->admitted);
        break;
    case ILP_NO_INCUMBENT:
        printf("  gap: no solution found; at most %d admissible; greedy %d "
               "(gap at most %d)\n", r->bound, g->admitted,
               r->bound - g->admitted);
        break;
    default:
        printf("  the --must-admit jobs cannot all be admitted together\n");
        break;
    }
}

int cmd_oracle(int argc, char **argv)
{
    static const struct option opts[] = {
        {"jobs", required_argument, NULL, 'j'},
        {"cluster", required_argument, NULL, 'c'},
        {"curves", required_argument, NULL, 'u'},
        {"slot", required_argument, NULL, 's'},
        {"now", required_argument, NULL, 'n'},
        {"time-limit", required_argument, NULL, 't'},
        {"node-limit", required_argument, NULL, 'N'},
        {"must-admit", required_argument, NULL, 'm'},
        {"no-warm-start", no_argument, NULL, 'W'},
        {"write-lp", required_argument, NULL, 'l'},
        {"out", required_argument, NULL, 'o'},
        {"plan-out", required_argument, NULL, 'p'},
        {"method", required_argument, NULL, 'M'},
        {"windows", required_argument, NULL, 'w'},
        CLI_OFFLINE_OPTIONS,
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *jobs_path = NULL, *cluster_arg = NULL, *curves_arg = NULL;
    const char *out_path = NULL, *plan_path = NULL, *must_arg = NULL;
    int warm = 1, o, method = M_AUTO, time_set = 0;
    cli_offline of; /* --offline-plans, --offline-exact */
    cli_offline_default(&of);
    plan_opts po;
    ilp_opts io;
    plan_opts_default(&po);
    ilp_opts_default(&io);
    io.time_limit = 10;
    opterr = 0;
    optind = 1;
    while ((o = cli_getopt("oracle", argc, argv, opts, CLI_F_JSON,
                           NULL)) != -1) {
        int64_t v;
        double d;
        switch (o) {
        case 'j': jobs_path = optarg; break;
        case 'c': cluster_arg = optarg; break;
        case 'u': curves_arg = optarg; break;
        case 'o': out_path = optarg; break;
        case 'p': plan_path = optarg; break;
        case 'l': io.write_lp = optarg; break;
        case 'm': must_arg = optarg; break;
        case 'W': warm = 0; break;
        case 's':
            if (cli_parse_slot("oracle", optarg, &po.slot) != 0)
                return EXIT_USAGE;
            break;
        case 'n':
            if (cli_parse_now("oracle", optarg, &po.now) != 0)
                return EXIT_USAGE;
            break;
        case 't':
            if (ef_parse_double(optarg, &d) != EF_NUM_OK || d < 0 || d > 1e6)
                return cli_usage_error("oracle", "--time-limit: \"%s\" is not "
                                       "a number of seconds from 0 to 1e6",
                                       optarg);
            io.time_limit = d;
            time_set = 1;
            break;
        case 'M':
            if (strcmp(optarg, "auto") == 0)
                method = M_AUTO;
            else if (strcmp(optarg, "exact") == 0)
                method = M_EXACT;
            else if (strcmp(optarg, "relaxed") == 0)
                method = M_RELAXED;
            else if (strcmp(optarg, "both") == 0)
                method = M_BOTH;
            else
                return cli_usage_error("oracle", "--method: \"%s\" (expected "
                                       "auto, exact, relaxed or both)",
                                       optarg);
            break;
        case 'w':
            if (ef_parse_i64(optarg, 1, 100000, &v) != EF_NUM_OK)
                return cli_usage_error("oracle", "--windows: \"%s\" is not "
                                       "a count from 1 to 100000", optarg);
            io.windows = (int)v;
            break;
        case 'N':
            if (ef_parse_i64(optarg, 1, 1000000000, &v) != EF_NUM_OK)
                return cli_usage_error("oracle", "--node-limit: \"%s\" is not "
                                       "a count from 1 to 1e9", optarg);
            io.node_limit = (long)v;
            break;
        case 'h': help_oracle(); return 0;
        default: {
            int rc = cli_offline_option("oracle", o, optarg, &of);
            if (rc >= 0) {
                if (rc != 0)
                    return rc;
                break;
            }
            return cli_option_error("oracle", o, argv[optind - 1]);
        }
        }
    }
    if (optind < argc)
        return cli_usage_error("oracle", "unexpected argument \"%s\"",
                               argv[optind]);
    if (!jobs_path || !cluster_arg || !curves_arg)
        return cli_usage_error("oracle", "--jobs, --cluster and --curves are "
                               "required");
    ef_err e = {0};
    cluster c;
    curve_set cs = {0};
    job_queue q = {0};
    plan g = {0}, ip = {0}, off = {0};
    off_stats os = {0};
    ilp_result r = {0};
    ilp_relaxed rx = {0};
    int run_exact = method == M_EXACT || method == M_BOTH;
    int run_relaxed = method != M_EXACT;
    ef_buf b = {0};
    int *must = NULL, rc = 0;
    if (cli_load_inputs(cluster_arg, curves_arg, jobs_path, &c, &cs, &q, &e) !=
        EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    if (must_arg) {
        must = ef_calloc((size_t)q.n + 1, sizeof *must);
        if ((rc = parse_must(must_arg, &q, must)) != 0)
            goto out;
        io.must = must;
    }
    if (plan_build(&g, &q, &c, &po, &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    io.slot = po.slot;
    io.now = g.now;
    io.warm = warm ? &g : NULL;
    /* test hook (tests/e2e/oracle.sh): provoke a GLPK fatal error */
    const char *fault = getenv("EFPLAN_ILP_FAULT");
    if (fault && strcmp(fault, "glpk") == 0)
        io.fault = ILP_FAULT_GLPK;
    if (ilp_offline(&off, &q, &c, &po, of.plans, of.exact, ILP_OFFLINE_NODES,
                    &os, &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    if (run_relaxed) {
        ilp_opts ro = io;
        if (!time_set)
            ro.time_limit = 60;
        /* --write-lp: this model; the exact ILP, if it runs, replaces it */
        if (ilp_relax(&q, &c, &ro, &rx, &e) != EF_OK) {
            rc = cli_fail(&e);
            goto out;
        }
        if (method == M_AUTO && rx.status != ILP_INFEASIBLE &&
            rx.exact_binaries <= ORACLE_AUTO_BINARIES)
            run_exact = 1;
    }
    if (run_exact && ilp_solve(&q, &c, &io, &r, &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    if (plan_path && r.admit) {
        if (ilp_to_plan(&r, &q, &c, &ip, &e) != EF_OK) {
            rc = cli_fail(&e);
            goto out;
        }
        if (plan_check(&ip, &e) != EF_OK) {
            ef_prefix(&e, "the ILP plan failed its check: ");
            rc = cli_fail(&e);
            goto out;
        }
        char *jf = plan_jobs_file_for(plan_path, jobs_path); /* planio.h */
        int wr = plan_write_json(&ip, plan_path, jf, curves_arg, 0, &e);
        free(jf);
        if (wr != EF_OK) {
            rc = cli_fail(&e);
            goto out;
        }
    }
    if (out_path) {
        ilp_report_json(run_exact ? &r : NULL, run_relaxed ? &rx : NULL, &g,
                        &off, &os, &q, jobs_path, &b);
        if (ef_write_file_atomic(out_path, b.s, b.n, &e) != EF_OK) {
            rc = cli_fail(&e);
            goto out;
        }
    }
    /* --json: the efplan-oracle document is standard output's data,
     * notes go to standard error */
    FILE *say = cli_cf.json ? stderr : stdout;
    if (cli_cf.json) {
        if (!b.n)
            ilp_report_json(run_exact ? &r : NULL, run_relaxed ? &rx : NULL,
                            &g, &off, &os, &q, jobs_path, &b);
        if (cli_write_out("-", b.s, b.n, &e) != EF_OK) {
            rc = cli_fail(&e);
            goto out;
        }
    } else {
        if (run_exact)
            print_result(&g, &r, &q);
        print_bound(&g, &off, &os, run_relaxed ? &rx : NULL,
                    run_exact ? &r : NULL, &q);
    }
    if (plan_path && !run_exact)
        fprintf(say, "the relaxation has no schedule: %s not written "
                "(--plan-out needs the exact ILP)\n", plan_path);
    else if (plan_path && !r.admit)
        fprintf(say, "no ILP solution: %s not written\n", plan_path);
    else if (plan_path && !cli_cf.quiet)
        fprintf(say, "wrote %s\n", plan_path);
    if (io.write_lp && !cli_cf.quiet)
        fprintf(say, "wrote %s\n", io.write_lp);
    if (out_path && !cli_cf.quiet)
        fprintf(say, "wrote %s\n", out_path);
    if (run_exact &&
        (r.status == ILP_INFEASIBLE || r.status == ILP_NO_INCUMBENT))
        rc = EXIT_INFEASIBLE;
    if (!run_exact && rx.status != ILP_OPTIMAL)
        rc = EXIT_INFEASIBLE;
out:
    free(b.s);
    free(must);
    ilp_result_free(&r);
    plan_free(&ip);
    plan_free(&off);
    plan_free(&g);
    queue_free(&q);
    curve_set_free(&cs);
    return rc;
}
