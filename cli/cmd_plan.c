/* cmd_plan.c: "efplan plan": plan a job queue and print the summary. */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/htime.h"
#include "common/jsonw.h"
#include "common/util.h"
#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "planner/offline.h"
#include "planner/plan.h"
#include "planner/planio.h"
#include "planner/submit.h"
#include "solver/ilp.h"

void help_plan(void)
{
    printf(
        "Usage: efplan plan --jobs FILE --cluster SPEC --curves DIR|A100|T4\n"
        "                   [--slot SECONDS] [--now T] [--horizon DURATION]\n"
        "                   [--out plan.json] [--svg plan.svg]\n"
        "                   [--surplus gain|reference] [--moves net|any] [--all]\n"
        "                   [--elastic-batch]\n"
        "                   [--overhead fig12|reference|restart|none]\n"
        "                   [--plan-version 1|2] [--earliest exact|none]\n"
        "                   [--admission online|offline] [--offline-plans N]\n"
        "                   [--offline-exact BINARIES]\n"
        "\n"
        "Plan a job queue: admit each job whose deadline can be guaranteed by\n"
        "its minimum satisfactory share (in submit order, against the GPUs\n"
        "promised to the jobs before it), reject the others (--earliest exact:\n"
        "with the earliest deadline each would be admitted with), give spare\n"
        "GPUs to the jobs that gain most per added GPU, and place every slot\n"
        "by the buddy rule.\n"
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
        "  --svg FILE          draw the plan as an SVG chart (- for standard\n"
        "                      output)\n"
        "  --surplus MODE      gain: largest throughput gain per added GPU\n"
        "                      (default); reference: the reference\n"
        "                      implementation's order, to compare numbers\n"
        "  --moves MODE        net (default): a running job keeps its GPUs\n"
        "                      unless a promise needs them or a move gains\n"
        "                      more over its remaining work than its\n"
        "                      restart costs (the overhead model's);\n"
        "                      any: the paper's rule, every point\n"
        "                      re-derives each allocation\n"
        "  --all               list every job in the summary (default: 20)\n"
        "  --elastic-batch     jobs with batch_sizes: choose the batch size\n"
        "                      too (least GPU-time share; surplus may move a\n"
        "                      job to a larger batch); work in samples\n"
        "  --overhead MODEL    reconfiguration costs the plan pays and keeps\n"
        "                      its promises under, as simulate models them:\n"
        "                      fig12 (default), reference, restart or none\n"
        "  --admission MODE    online (default): decide each job when it\n"
        "                      arrives, as simulate does; offline: the whole\n"
        "                      queue is known, so search for a better set:\n"
        "                      leave out jobs whose admission keeps more\n"
        "                      out, then decide every job at the start in a\n"
        "                      searched order (none runs before its submit\n"
        "                      time); each try a full plan, never fewer\n"
        "                      admitted than online; then, when the queue\n"
        "                      is small, the exact ILP's set of jobs with\n"
        "                      its schedule as their reservations\n"
        "  --earliest MODE     none (default): no earliest deadline for a\n"
        "                      rejected job (efplan explain PLAN ID gives\n"
        "                      it); exact: each rejected job's earliest\n"
        "                      deadline, the one efplan explain and submit\n"
        "                      offer (resubmitting it with that deadline is\n"
        "                      admitted), found by re-planning: about 20 to\n"
        "                      60 plans a rejected job\n"
        "  --offline-plans N   plans the offline search may try (default 200)\n"
        "  --offline-exact B   the exact step runs when its model has at most\n"
        "                      B binaries (default 5000, about a dozen jobs\n"
        "                      over 24 slots; 0 = never); reproducible: a\n"
        "                      node limit, no clock\n"
        "\n"
        "Exit codes: 0 planned (some jobs may be rejected: see the summary),\n"
        "2 usage error, 3 invalid input, 5 internal error.\n");
    cli_help_shared(CLI_F_JSON);
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

/* plan_opts' progress: "plan: jobs done 120/1000" on a terminal. */
static void progress(void *arg, int done, int total)
{
    (void)arg;
    cli_progress("plan: jobs done", done, total);
}

/* The most GPUs each job holds in any slot of 'p', into mx[0..njobs). */
static void max_gpus(const plan *p, int *mx)
{
    for (int i = 0; i < p->njobs; i++)
        mx[i] = 0;
    for (int s = 0; s < p->nslots; s++)
        for (int k = 0; k < p->slots[s].nalloc; k++) {
            const plan_alloc *a = &p->slots[s].a[k];
            if (a->gpus > mx[a->job])
                mx[a->job] = a->gpus;
        }
}

/* Why job j has its decision, in a few words: the planner's reason for
 * a rejection, the risk of an admitted job that fell behind, else "-". */
static const char *why(const plan_job *j)
{
    if (j->decision == PLAN_REJECTED && j->reason[0])
        return j->reason;
    if (j->at_risk && j->risk[0])
        return j->risk;
    if (j->decision == PLAN_BEST_EFFORT)
        return "no deadline: runs on GPUs left over";
    return "-";
}

static const char *decision_word(const plan_job *j)
{
    return j->decision == PLAN_ADMITTED   ? "admitted"
           : j->decision == PLAN_REJECTED ? "rejected"
                                          : "best_effort";
}

static void print_summary(FILE *f, const plan *p, int all)
{
    char span[64], t0[40];
    double cap = (double)(p->end - p->now) * p->cl.total_gpus;
    fprintf(f, "plan     %d jobs on %s (%d GPUs), slots of %d s from %s"
            ", overhead %s\n", p->njobs, p->cl.name, p->cl.total_gpus,
            p->opts.slot, cli_time(p->now, p->now, t0, sizeof t0),
            ovh_name(p->opts.overhead));
    fprintf(f, "  admitted %d, rejected %d, best-effort %d\n", p->admitted,
            p->rejected, p->best_effort);
    if (p->at_risk > 0)
        fprintf(f, "  at risk %d (admitted, fell behind their reservations: "
                "see their reason)\n", p->at_risk);
    fprintf(f, "  GPU-hours promised %.1f, used %.1f; utilisation %.1f%% "
            "over %s\n", p->promised_gpu_seconds / 3600.0,
            p->used_gpu_seconds / 3600.0,
            cap > 0 ? 100.0 * p->used_gpu_seconds / cap : 0.0,
            ef_ht_dur(p->end - p->now, span, sizeof span));
    fprintf(f, "  scheduling points %d, resizes %d, migrations %d, re-plan "
            "fallbacks %d\n", p->points, p->resizes, p->migrations,
            p->replan_fallbacks);
    int n = all || p->njobs <= 20 ? p->njobs : 20; /* rows listed */
    int idw = 3, mw = 5; /* widths of the id and model columns */
    for (int i = 0; i < n; i++) {
        int l = (int)strlen(p->jobs[i].in->id);
        int m = (int)strlen(p->jobs[i].in->model);
        idw = l > idw ? l : idw;
        mw = m > mw ? m : mw;
    }
    ef_ht_zone z = cli_zone(p->now);
    /* the times' width: seconds, a synthetic clock's offsets, dates */
    int tw = z == EF_HT_EPOCH ? 10 : !ef_ht_is_wall(p->now) ? 12
           : z == EF_HT_UTC ? 20 : 25;
    int *mx = ef_malloc((size_t)(p->njobs ? p->njobs : 1) * sizeof *mx);
    max_gpus(p, mx);
    fprintf(f, "  %-*s %-*s %6s %4s %-11s %*s %*s %8s %*s  %s\n", idw, "job",
            mw, "model", "batch", "GPUs", "decision", tw, "deadline", tw,
            "end", "slack", tw, "earliest", "reason");
    for (int i = 0; i < n; i++) {
        const plan_job *j = &p->jobs[i];
        char dl[40] = "-", en[40] = "-", sl[40] = "-", ea[40] = "-";
        if (j->in->has_deadline)
            cli_time(j->in->deadline, p->now, dl, sizeof dl);
        if (j->planned_end >= 0)
            cli_time(j->planned_end, p->now, en, sizeof en);
        if (j->in->has_deadline && j->planned_end >= 0)
            ef_ht_dur(j->in->deadline - j->planned_end, sl, sizeof sl);
        if (j->earliest_feasible_deadline >= 0)
            cli_time(j->earliest_feasible_deadline, p->now, ea, sizeof ea);
        fprintf(f, "  %-*s %-*s %6ld %4d %-11s %*s %*s %8s %*s  %s\n", idw,
                j->in->id, mw, j->in->model, j->in->batch, mx[i],
                decision_word(j), tw, dl, tw, en, sl, tw, ea, why(j));
    }
    if (n < p->njobs)
        fprintf(f, "  ... %d more (--all lists every job)\n", p->njobs - n);
    if (n > 0)
        fprintf(f, "  (GPUs: the most the job holds in any slot; slack: "
                "deadline - end; earliest: the\n   earliest deadline a "
                "rejected job is admitted with: --earliest exact, or "
                "explain)\n");
    free(mx);
}

/* The summary as one JSON object (--json): the totals and every job. */
static int summary_json(const plan *p, const char *out_path)
{
    jw w;
    jw_init(&w, 1);
    jw_obj(&w, NULL, NULL);
    jw_str(&w, "command", "plan");
    jw_str(&w, "cluster", p->cl.name);
    jw_int(&w, "gpus", p->cl.total_gpus);
    jw_int(&w, "slot_seconds", p->opts.slot);
    jw_int(&w, "now", p->now);
    jw_int(&w, "end", p->end);
    jw_str(&w, "overhead", ovh_name(p->opts.overhead));
    jw_int(&w, "admitted", p->admitted);
    jw_int(&w, "rejected", p->rejected);
    jw_int(&w, "best_effort", p->best_effort);
    jw_int(&w, "at_risk", p->at_risk);
    jw_fixed(&w, "promised_gpu_hours", p->promised_gpu_seconds / 3600.0, 3);
    jw_fixed(&w, "used_gpu_hours", p->used_gpu_seconds / 3600.0, 3);
    jw_int(&w, "scheduling_points", p->points);
    jw_int(&w, "resizes", p->resizes);
    jw_int(&w, "migrations", p->migrations);
    if (out_path)
        jw_str(&w, "out", out_path);
    else
        jw_null(&w, "out");
    int *mx = ef_malloc((size_t)(p->njobs ? p->njobs : 1) * sizeof *mx);
    max_gpus(p, mx);
    jw_arr(&w, "jobs", NULL);
    for (int i = 0; i < p->njobs; i++) {
        const plan_job *j = &p->jobs[i];
        jw_obj(&w, NULL, NULL);
        jw_str(&w, "id", j->in->id);
        jw_str(&w, "model", j->in->model);
        jw_int(&w, "batch", j->in->batch);
        jw_int(&w, "max_gpus", mx[i]);
        jw_str(&w, "decision", decision_word(j));
        if (j->in->has_deadline)
            jw_int(&w, "deadline", j->in->deadline);
        else
            jw_null(&w, "deadline");
        if (j->planned_end >= 0)
            jw_int(&w, "planned_end", j->planned_end);
        else
            jw_null(&w, "planned_end");
        if (j->earliest_feasible_deadline >= 0)
            jw_int(&w, "earliest_feasible_deadline",
                   j->earliest_feasible_deadline);
        else
            jw_null(&w, "earliest_feasible_deadline");
        jw_str(&w, "reason", strcmp(why(j), "-") ? why(j) : "");
        jw_end(&w);
    }
    jw_end(&w);
    jw_end(&w);
    free(mx);
    return cli_json_print(&w);
}

/* What `efplan plan` was asked for. */
typedef struct plan_args {
    const char *jobs_path, *cluster_arg, *curves_arg;
    const char *out_path, *svg_path;
    int all;         /* --all: list every job */
    int version;     /* --plan-version */
    int offline;     /* --admission offline */
    int exact;       /* --earliest exact */
    int to_stdout;   /* a plan output or --json is standard output */
    cli_offline of;  /* --offline-plans, --offline-exact */
    plan_opts po;
} plan_args;

/* One option of `plan` (o, its argument optarg) into a: -1 when taken,
 * else the exit code to return (0 after --help). */
static int plan_option(int o, char **argv, plan_args *a)
{
    int64_t v;
    plan_opts *po = &a->po;
    switch (o) {
    case 'j': a->jobs_path = optarg; return -1;
    case 'c': a->cluster_arg = optarg; return -1;
    case 'u': a->curves_arg = optarg; return -1;
    case 'o': a->out_path = optarg; return -1;
    case 'g': a->svg_path = optarg; return -1;
    case 'a': a->all = 1; return -1;
    case 's':
        return cli_parse_slot("plan", optarg, &po->slot) != 0 ? EXIT_USAGE
                                                               : -1;
    case 'n':
        return cli_parse_now("plan", optarg, &po->now) != 0 ? EXIT_USAGE : -1;
    case 'H':
        if (parse_duration(optarg, &v) != 0)
            return cli_usage_error("plan", "--horizon: \"%s\" is not a "
                                   "duration (e.g. 24h, 90m, 3600)", optarg);
        po->horizon = v;
        return -1;
    case 'S':
        if (strcmp(optarg, "gain") == 0)
            po->surplus = SURPLUS_GAIN;
        else if (strcmp(optarg, "reference") == 0)
            po->surplus = SURPLUS_REFERENCE;
        else
            return cli_usage_error("plan", "--surplus: \"%s\" (expected "
                                   "gain or reference)", optarg);
        return -1;
    case 'W':
        if (strcmp(optarg, "net") == 0)
            po->moves = MOVES_NET;
        else if (strcmp(optarg, "any") == 0)
            po->moves = MOVES_ANY;
        else
            return cli_usage_error("plan", "--moves: \"%s\" (expected "
                                   "net or any)", optarg);
        return -1;
    case 'E': po->elastic_batch = 1; return -1;
    case 'e':
        if (strcmp(optarg, "exact") != 0 && strcmp(optarg, "none") != 0)
            return cli_usage_error("plan", "--earliest: \"%s\" (expected "
                                   "exact or none)", optarg);
        a->exact = optarg[0] == 'e';
        return -1;
    case 'A':
        if (strcmp(optarg, "online") != 0 && strcmp(optarg, "offline") != 0)
            return cli_usage_error("plan", "--admission: \"%s\" (expected "
                                   "online or offline)", optarg);
        a->offline = optarg[1] == 'f';
        return -1;
    case 'V':
        return cli_parse_plan_version("plan", optarg, &a->version) != 0
                   ? EXIT_USAGE
                   : -1;
    case 'O': {
        int m = ovh_parse(optarg);
        if (m < 0)
            return cli_usage_error("plan", "--overhead: \"%s\" (expected "
                                   "fig12, reference, restart or none)",
                                   optarg);
        po->overhead = (ovh_mode)m;
        return -1;
    }
    case 'h': help_plan(); return 0;
    default: {
        int rc = cli_offline_option("plan", o, optarg, &a->of);
        if (rc >= 0)
            return rc != 0 ? rc : -1;
        return cli_option_error("plan", o, argv[optind - 1]);
    }
    }
}

/* The command line of `plan` into a: -1 to go on, else the exit code. */
static int plan_parse(int argc, char **argv, plan_args *a)
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
        {"moves", required_argument, NULL, 'W'},
        {"all", no_argument, NULL, 'a'},
        {"elastic-batch", no_argument, NULL, 'E'},
        {"overhead", required_argument, NULL, 'O'},
        {"plan-version", required_argument, NULL, 'V'},
        {"admission", required_argument, NULL, 'A'},
        {"earliest", required_argument, NULL, 'e'},
        CLI_OFFLINE_OPTIONS,
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    a->version = PLAN_V2;
    cli_offline_default(&a->of);
    plan_opts_default(&a->po);
    a->po.overhead = OVH_FIG12;
    opterr = 0;
    optind = 1;
    int o;
    while ((o = cli_getopt("plan", argc, argv, opts, CLI_F_JSON, NULL)) != -1) {
        int rc = plan_option(o, argv, a);
        if (rc >= 0)
            return rc;
    }
    if (optind < argc)
        return cli_usage_error("plan", "unexpected argument \"%s\"",
                               argv[optind]);
    if (!a->jobs_path || !a->cluster_arg || !a->curves_arg)
        return cli_usage_error("plan", "--jobs, --cluster and --curves are "
                               "required");
    static const char *const outs[] = {"--out", "--svg"};
    const char *const out_paths[] = {a->out_path, a->svg_path};
    if (cli_stdout_owner("plan", 2, outs, out_paths, &a->to_stdout) != 0)
        return EXIT_USAGE;
    return -1;
}

/* The plan's files: the SVG chart, then the plan file (files first, so
 * that a failure prints no plan). */
static int plan_write(const plan_args *a, const plan *p, ef_err *e)
{
    if (a->svg_path) {
        ef_buf svg = {0};
        plan_svg(p, cli_zone(p->now), &svg);
        int wr = cli_write_out(a->svg_path, svg.s, svg.n, e);
        free(svg.s);
        if (wr != EF_OK)
            return EF_ERR;
    }
    if (a->out_path) {
        plan_doc d;
        size_t n;
        /* the jobs file as the plan file records it (planio.h) */
        char *jf = plan_jobs_file_for(a->out_path, a->jobs_path);
        plan_doc_for_file(&d, p, jf, a->curves_arg, a->version);
        char *text = plan_doc_json(&d, &n);
        plan_doc_free(&d);
        free(jf);
        int wr = cli_write_out(a->out_path, text, n, e);
        free(text);
        if (wr != EF_OK)
            return EF_ERR;
    }
    return EF_OK;
}

/* What `plan` says when done: the summary (or its JSON), the offline
 * admission's line, the files written. --out -: the plan file is
 * standard output, the summary goes to standard error. */
static int plan_say(const plan_args *a, const plan *p, const off_stats *os)
{
    FILE *say = a->to_stdout ? stderr : stdout;
    int rc = 0;
    if (cli_cf.json)
        rc = summary_json(p, a->out_path);
    else
        print_summary(say, p, a->all || cli_cf.verbose);
    if (a->offline && !cli_cf.quiet) {
        char ex[160]; /* what the exact step did */
        ilp_offline_text(os, ex, sizeof ex);
        fprintf(cli_cf.json ? stderr : say, "offline admission: %d admitted "
                "(arrival order: %d), %d jobs left out, %d plans tried%s; %s\n",
                p->admitted, os->online_admitted, os->withheld, os->plans,
                os->budget_hit ? " (stopped by --offline-plans)" : "", ex);
    }
    cli_say_wrote(say, a->out_path);
    cli_say_wrote(say, a->svg_path);
    return rc;
}

int cmd_plan(int argc, char **argv)
{
    plan_args a;
    int rc = plan_parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    ef_err e = {0};
    cluster c;
    curve_set cs = {0};
    job_queue q = {0};
    plan p = {0};
    off_stats os = {0};
    if (cli_load_inputs(a.cluster_arg, a.curves_arg, a.jobs_path, &c, &cs, &q,
                        &e) != EF_OK)
        goto fail;
    a.po.progress = progress;
    /* EF_OK or EF_ERR */
    int built = a.offline ? ilp_offline(&p, &q, &c, &a.po, a.of.plans,
                                        a.of.exact, ILP_OFFLINE_NODES, &os, &e)
                          : plan_build(&p, &q, &c, &a.po, &e);
    cli_progress_end();
    if (built != EF_OK)
        goto fail;
    if (plan_check(&p, &e) != EF_OK) {
        ef_prefix(&e, "plan failed its own check: ");
        goto fail;
    }
    /* the rejected jobs' earliest deadlines by the one rule (submit.h), or
     * none: never the planner's bound, which is another number */
    for (int i = 0; !a.exact && i < p.njobs; i++)
        if (p.jobs[i].decision == PLAN_REJECTED)
            p.jobs[i].earliest_feasible_deadline = -1;
    if (a.exact && p.rejected > 0 &&
        plan_earliest_all(&p, &cs, a.curves_arg, &e) != EF_OK)
        goto fail;
    if (plan_write(&a, &p, &e) != EF_OK)
        goto fail;
    rc = plan_say(&a, &p, &os);
    goto out;
fail:
    rc = cli_fail(&e);
out:
    plan_free(&p);
    queue_free(&q);
    curve_set_free(&cs);
    return rc;
}
