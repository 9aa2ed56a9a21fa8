/* cmd_oracle.c: "efplan oracle": the greedy plan beside the offline and
 * LP-guided admissions, the relaxed bound and the exact ILP; its text is
 * cli/cmd_oracle_text.c. */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_oracle.h"
#include "common/jsonw.h"
#include "common/util.h"
#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "planner/offline.h"
#include "planner/plan.h"
#include "planner/planio.h"
#include "solver/ilp.h"

/* --method auto runs the exact ILP too up to this many binaries (the
 * bundled sample's 43,036 are past it: there the answer is the plans'
 * and the relaxed bound's). */
#define ORACLE_AUTO_BINARIES 10000L

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
        "How far from the best possible admission are efplan's plans?\n"
        "Plan the queue greedily (as 'efplan plan'), with the offline\n"
        "admission ('efplan plan --admission offline') and with an admission\n"
        "guided by the relaxed LP (its jobs first, then the planner's own\n"
        "promise check and search), and bound the most jobs any schedule\n"
        "can admit: the LP of a time-aggregated model (solver/ilp.h proves it\n"
        "a bound), and on small models the exact time-indexed ILP (GLPK,\n"
        "warm-started from the best plan). The answer: the optimum lies\n"
        "between the best plan's count and the least bound, how far each\n"
        "plan is from it, and the jobs the best plan admits that greedy\n"
        "rejects. Best-effort jobs are outside the comparison. No limit is a\n"
        "clock unless --time-limit is given: the same inputs give the same\n"
        "answer on any machine.\n"
        "\n"
        "  --jobs FILE         job queue: trace CSV or JSON {\"jobs\": [...]}\n"
        "  --cluster SPEC      nNgG shorthand (n16g8), or a .csv/.json spec\n"
        "  --curves DIR        curve directory, or a bundled set: A100, T4\n"
        "  --slot SECONDS      slot length (default 60)\n"
        "  --now T             start (default: earliest submit time)\n"
        "  --time-limit SEC    stop each solve after SEC seconds as well\n"
        "                      (default none); the answer then depends on\n"
        "                      the machine\n"
        "  --node-limit N      stop the exact ILP after N branch-and-bound\n"
        "                      subproblems (default 500)\n"
        "  --must-admit IDS    these jobs must be admitted (comma-separated)\n"
        "  --no-warm-start     do not start the solver from the best plan\n"
        "  --write-lp FILE     write the model (CPLEX LP format: glpsol, CBC,\n"
        "                      HiGHS read it): the exact ILP's when it runs,\n"
        "                      else the relaxation's\n"
        "  --method M          exact: the time-indexed ILP; relaxed: only the\n"
        "                      aggregated LP bound (any size); both; auto\n"
        "                      (default): the bound, and the exact ILP too\n"
        "                      when it has at most 10,000 binaries\n"
        "  --windows N         one pass of the relaxation with N time windows\n"
        "                      (default: 60, then up to 200 refined where the\n"
        "                      capacity binds, within a fixed LP budget)\n"
        "  --offline-plans N   plans the offline and the LP-guided admissions\n"
        "                      may each try (default 200; 1 = arrival order)\n"
        "  --offline-exact B   the offline admission's exact step runs on\n"
        "                      models of at most B binaries (default 5000;\n"
        "                      0 = the search alone), as in 'efplan plan'\n"
        "  --out FILE          write the result (JSON, efplan-oracle v3)\n"
        "  --plan-out FILE     write the best plan found (a plan file)\n"
        "\n"
        "Exit codes: 0 an answer (a plan and a bound: the optimum between\n"
        "them), 2 usage error, 3 invalid input, 4 no answer: the\n"
        "--must-admit jobs cannot all be admitted (or no plan found admits\n"
        "them all), or every LP was stopped by --time-limit (the JSON is\n"
        "still written, no plan file), 5\n"
        "internal error (a GLPK failure, a write failure).\n");
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


/* What the command line asks for. */
typedef struct oracle_args {
    const char *jobs, *cluster, *curves, *out, *plan_out, *must;
    int warm, method;
    cli_offline of;
    plan_opts po;
    ilp_opts io;
} oracle_args;

/* Everything one run holds (freed by oracle_free). */
typedef struct oracle_run {
    cluster c;
    curve_set cs;
    job_queue q;
    plan g, off, gd, ip;
    off_stats os, gs;
    ilp_result r;
    ilp_result lps; /* the relaxed LP's optimum in whole slots */
    ilp_relaxed rx;
    int *must;
    double *lpa;   /* the relaxed LP's a[j] */
    int run_exact, run_relaxed, have_gd;
} oracle_run;

static void oracle_free(oracle_run *x)
{
    free(x->must);
    free(x->lpa);
    ilp_result_free(&x->r);
    ilp_result_free(&x->lps);
    plan_free(&x->ip);
    plan_free(&x->gd);
    plan_free(&x->off);
    plan_free(&x->g);
    queue_free(&x->q);
    curve_set_free(&x->cs);
}

/* The report of run x. */
static ilp_report oracle_report(const oracle_run *x, const char *jobs_path)
{
    ilp_report rp = {
        x->run_exact ? &x->r : NULL, x->run_relaxed ? &x->rx : NULL, &x->g,
        &x->off, &x->os, x->have_gd ? &x->gd : NULL, &x->gs, x->must, &x->q,
        jobs_path};
    return rp;
}

/* The LP's optimum in whole slots (ilp_opts.lp_sched) offered to the
 * planner as reservations (ilp_hint_plan): it replaces the LP-guided
 * plan when better (off_better), one more plan of its search. Returns
 * 0 or an exit code (printed). */
static int oracle_rounded(oracle_args *a, oracle_run *x, ef_err *e)
{
    plan t;
    if (ilp_hint_plan(&t, &x->lps, &x->q, &x->c, &a->po, e) != EF_OK)
        return cli_fail(e);
    x->gs.plans++;
    if (!off_better(&t, &x->gd)) {
        plan_free(&t);
        return 0;
    }
    if (plan_check(&t, e) != EF_OK) {
        plan_free(&t);
        ef_prefix(e, "the LP's rounded plan failed its check: ");
        return cli_fail(e);
    }
    plan_free(&x->gd);
    x->gd = t;
    x->gs.withheld = 0; /* it leaves nothing out: every job decided */
    x->gs.early = 1;    /* at the plan's start */
    return 0;
}

/* The planner's side: greedy, the relaxed bound (with each job's LP
 * admission), the offline admission, the LP-guided one. Returns 0 or an
 * exit code (printed). */
static int oracle_plans(oracle_args *a, oracle_run *x, ef_err *e)
{
    if (plan_build(&x->g, &x->q, &x->c, &a->po, e) != EF_OK)
        return cli_fail(e);
    a->io.slot = a->po.slot;
    a->io.now = x->g.now;
    a->io.warm = a->warm ? &x->g : NULL;
    /* test hook (tests/e2e/oracle.sh): provoke a GLPK fatal error */
    const char *fault = getenv("EFPLAN_ILP_FAULT");
    if (fault && strcmp(fault, "glpk") == 0)
        a->io.fault = ILP_FAULT_GLPK;
    if (x->run_relaxed) {
        ilp_opts ro = a->io;
        x->lpa = ef_calloc((size_t)x->q.n + 1, sizeof *x->lpa);
        ro.lp_admit = x->lpa;
        ro.lp_sched = &x->lps;
        ro.node_limit = 0;
        /* --write-lp: this model; the exact ILP, if it runs, replaces it */
        if (ilp_relax(&x->q, &x->c, &ro, &x->rx, e) != EF_OK)
            return cli_fail(e);
    }
    if (ilp_offline(&x->off, &x->q, &x->c, &a->po, a->of.plans, a->of.exact,
                    ILP_OFFLINE_NODES, &x->os, e) != EF_OK)
        return cli_fail(e);
    /* the LP-guided admission, when the bound leaves room */
    if (x->run_relaxed && x->rx.status == ILP_OPTIMAL &&
        x->off.admitted < x->rx.bound && off_open(&x->off) > 0) {
        if (off_guided(&x->gd, &x->q, &x->c, &a->po, x->lpa, a->of.plans,
                       &x->gs, e) != EF_OK)
            return cli_fail(e);
        x->have_gd = 1;
        int rc = x->lps.admit ? oracle_rounded(a, x, e) : 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The exact ILP, when asked for (or, with auto, when the model is
 * small), warm-started from the best plan so far. Returns 0 or an exit
 * code (printed). */
static int oracle_exact(oracle_args *a, oracle_run *x, ef_err *e)
{
    if (a->method == M_AUTO && x->rx.status != ILP_INFEASIBLE &&
        x->rx.exact_binaries <= ORACLE_AUTO_BINARIES)
        x->run_exact = 1;
    if (!x->run_exact)
        return 0;
    if (a->warm) {
        const plan *w = &x->g; /* the best plan that admits the musts */
        const plan *cand[2] = {&x->off, x->have_gd ? &x->gd : NULL};
        for (int i = 0; i < 2; i++) {
            int ok = cand[i] && cand[i]->admitted > w->admitted;
            for (int j = 0; ok && x->must && j < x->q.n; j++)
                ok = !x->must[j] ||
                     cand[i]->jobs[j].decision == PLAN_ADMITTED;
            if (ok)
                w = cand[i];
        }
        a->io.warm = w;
    }
    if (ilp_solve(&x->q, &x->c, &a->io, &x->r, e) != EF_OK)
        return cli_fail(e);
    return 0;
}

/* --plan-out: the best answer's plan (the ILP's schedule through the
 * planner's slot loop when it admits the most). Returns 0 or an exit
 * code (printed); *wrote says whether a file was written. */
static int oracle_plan_out(const oracle_args *a, oracle_run *x,
                           const ilp_verdict *v, ef_err *e)
{
    const plan *p = v->best_plan;
    if (!p && strcmp(v->best, "ilp") == 0) {
        if (ilp_to_plan(&x->r, &x->q, &x->c, &x->ip, e) != EF_OK)
            return cli_fail(e);
        if (plan_check(&x->ip, e) != EF_OK) {
            ef_prefix(e, "the ILP plan failed its check: ");
            return cli_fail(e);
        }
        p = &x->ip;
    }
    if (!p)
        return 0;
    char *jf = plan_jobs_file_for(a->plan_out, a->jobs); /* planio.h */
    int wr = plan_write_json(p, a->plan_out, jf, a->curves, 0, e);
    free(jf);
    return wr == EF_OK ? 0 : cli_fail(e);
}

/* Write what was asked for and say it; the exit code. */
static int oracle_output(const oracle_args *a, oracle_run *x, ef_err *e)
{
    ilp_report rp = oracle_report(x, a->jobs);
    ilp_verdict v;
    ilp_verdict_of(&rp, &v);
    ef_buf b = {0};
    int rc = 0;
    if (a->plan_out && v.answer && (rc = oracle_plan_out(a, x, &v, e)))
        return rc;
    if (a->out) {
        ilp_report_json(&rp, &b);
        if (ef_write_file_atomic(a->out, b.s, b.n, e) != EF_OK) {
            free(b.s);
            return cli_fail(e);
        }
    }
    /* --json: the efplan-oracle document is standard output's data,
     * notes go to standard error */
    FILE *say = cli_cf.json ? stderr : stdout;
    if (cli_cf.json) {
        if (!b.n)
            ilp_report_json(&rp, &b);
        if (cli_write_out("-", b.s, b.n, e) != EF_OK) {
            free(b.s);
            return cli_fail(e);
        }
    } else {
        cmd_oracle_text(&rp);
    }
    free(b.s);
    if (a->plan_out && !v.answer)
        fprintf(say, "no answer: %s not written\n", a->plan_out);
    else if (a->plan_out && !cli_cf.quiet)
        fprintf(say, "wrote %s (%s, %d jobs admitted)\n", a->plan_out,
                v.best, v.lower);
    cli_say_wrote(say, a->io.write_lp);
    cli_say_wrote(say, a->out);
    return v.answer ? 0 : EXIT_INFEASIBLE;
}

/* The run: inputs, plans, bound, exact ILP, outputs. */
static int oracle_main(oracle_args *a)
{
    ef_err e = {0};
    oracle_run x;
    memset(&x, 0, sizeof x);
    x.run_exact = a->method == M_EXACT || a->method == M_BOTH;
    x.run_relaxed = a->method != M_EXACT;
    int rc = 0;
    if (cli_load_inputs(a->cluster, a->curves, a->jobs, &x.c, &x.cs, &x.q,
                        &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    if (a->must) {
        x.must = ef_calloc((size_t)x.q.n + 1, sizeof *x.must);
        if ((rc = parse_must(a->must, &x.q, x.must)) != 0)
            goto out;
        a->io.must = x.must;
    }
    if ((rc = oracle_plans(a, &x, &e)) != 0 ||
        (rc = oracle_exact(a, &x, &e)) != 0)
        goto out;
    rc = oracle_output(a, &x, &e);
out:
    oracle_free(&x);
    return rc;
}

/* One option of the table; 0, or an exit code (printed); 1 for --help. */
static int oracle_option(int o, oracle_args *a, char **argv)
{
    int64_t v;
    double d;
    switch (o) {
    case 'j': a->jobs = optarg; break;
    case 'c': a->cluster = optarg; break;
    case 'u': a->curves = optarg; break;
    case 'o': a->out = optarg; break;
    case 'p': a->plan_out = optarg; break;
    case 'l': a->io.write_lp = optarg; break;
    case 'm': a->must = optarg; break;
    case 'W': a->warm = 0; break;
    case 's':
        return cli_parse_slot("oracle", optarg, &a->po.slot) != 0
                   ? EXIT_USAGE : 0;
    case 'n':
        return cli_parse_now("oracle", optarg, &a->po.now) != 0 ? EXIT_USAGE
                                                                 : 0;
    case 't':
        if (ef_parse_double(optarg, &d) != EF_NUM_OK || d < 0 || d > 1e6)
            return cli_usage_error("oracle", "--time-limit: \"%s\" is not "
                                   "a number of seconds from 0 to 1e6",
                                   optarg);
        a->io.time_limit = d;
        break;
    case 'M':
        if (strcmp(optarg, "auto") == 0)
            a->method = M_AUTO;
        else if (strcmp(optarg, "exact") == 0)
            a->method = M_EXACT;
        else if (strcmp(optarg, "relaxed") == 0)
            a->method = M_RELAXED;
        else if (strcmp(optarg, "both") == 0)
            a->method = M_BOTH;
        else
            return cli_usage_error("oracle", "--method: \"%s\" (expected "
                                   "auto, exact, relaxed or both)", optarg);
        break;
    case 'w':
        if (ef_parse_i64(optarg, 1, 100000, &v) != EF_NUM_OK)
            return cli_usage_error("oracle", "--windows: \"%s\" is not "
                                   "a count from 1 to 100000", optarg);
        a->io.windows = (int)v;
        break;
    case 'N':
        if (ef_parse_i64(optarg, 1, 1000000000, &v) != EF_NUM_OK)
            return cli_usage_error("oracle", "--node-limit: \"%s\" is not "
                                   "a count from 1 to 1e9", optarg);
        a->io.node_limit = (long)v;
        break;
    case 'h': help_oracle(); return 1;
    default: {
        int rc = cli_offline_option("oracle", o, optarg, &a->of);
        if (rc >= 0)
            return rc;
        return cli_option_error("oracle", o, argv[optind - 1]);
    }
    }
    return 0;
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
    oracle_args a;
    memset(&a, 0, sizeof a);
    a.warm = 1;
    a.method = M_AUTO;
    cli_offline_default(&a.of);
    plan_opts_default(&a.po);
    ilp_opts_default(&a.io);
    a.io.node_limit = ILP_ORACLE_NODES; /* no clock by default */
    opterr = 0;
    optind = 1;
    int o;
    while ((o = cli_getopt("oracle", argc, argv, opts, CLI_F_JSON,
                           NULL)) != -1) {
        int rc = oracle_option(o, &a, argv);
        if (rc != 0)
            return rc == 1 ? 0 : rc;
    }
    if (optind < argc)
        return cli_usage_error("oracle", "unexpected argument \"%s\"",
                               argv[optind]);
    if (!a.jobs || !a.cluster || !a.curves)
        return cli_usage_error("oracle", "--jobs, --cluster and --curves are "
                               "required");
    return oracle_main(&a);
}
