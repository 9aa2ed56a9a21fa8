/* cmd_simulate.c: "efplan simulate": replay a trace through a policy. */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/htime.h"
#include "common/jsonw.h"
#include "common/util.h"
#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "simulator/sim.h"
#include "simulator/simio.h"

void help_simulate(void)
{
    printf(
        "Usage: efplan simulate --trace FILE --cluster SPEC --curves DIR|A100|T4\n"
        "                       --policy P [--slot SECONDS] [--tick SECONDS]\n"
        "                       [--overhead fig12|reference|restart|none]\n"
        "                       [--surplus gain|reference] [--cap usable|reference]\n"
        "                       [--moves net|any] [--speed-factor LO,HI]\n"
        "                       [--restart-cost F] [--physics-seed K] [--learn]\n"
        "                       [--baselines fixed|reference] [--mip-nodes N]\n"
        "                       [--out result.json]\n"
        "                       [--jobs-out jobs.csv] [--svg timeline.svg]\n"
        "                       [--elastic-batch] [--pollux-data DIR]\n"
        "\n"
        "Replay a job trace through a scheduling policy, with reconfiguration\n"
        "overheads and exact work accounting, and report how many deadlines\n"
        "were met. Policies:\n");
    for (int i = 0; i < sim_policy_count(); i++)
        printf("  %-10s %s\n", sim_policy_at(i)->name,
               sim_policy_at(i)->summary);
    printf(
        "\n"
        "  --trace FILE        job trace: CSV (ITP/artifact columns) or JSON\n"
        "  --cluster SPEC      nNgG shorthand (n16g8), or a .csv/.json spec\n"
        "  --curves DIR        curve directory, or a bundled set: A100, T4\n"
        "  --policy P          one of the policies above\n"
        "  --slot SECONDS      slot length: scheduling points fall on slot\n"
        "                      boundaries, at most one per slot (default 60)\n"
        "  --tick SECONDS      also a point every SECONDS (default: only at\n"
        "                      arrivals, completions and plan changes)\n"
        "  --overhead MODEL    fig12 (default): per-model measured costs of\n"
        "                      a resize or migration; reference: the\n"
        "                      reference simulator's generic formula;\n"
        "                      restart: 30 s per start, resume, rescale or\n"
        "                      migration (the Pollux simulator's); none\n"
        "  --surplus MODE      ef policies: gain (default) or reference\n"
        "  --speed-factor LO,HI physics: each model's jobs run at a factor\n"
        "                      of their curve drawn uniformly from [LO, HI]\n"
        "                      (0.01 <= LO <= HI <= 10)\n"
        "                      (seeded by --physics-seed and the model's\n"
        "                      name); policies still plan with the curves\n"
        "  --restart-cost F    physics: every reconfiguration really costs F\n"
        "                      times what the overhead model charges\n"
        "  --physics-seed K    the seed of --speed-factor (default 0)\n"
        "  --learn             ef policies: plan each job at its measured\n"
        "                      speed and restart cost (its own once it has\n"
        "                      run, else its model's over the jobs seen so\n"
        "                      far, else the curve's and the model's)\n"
        "  --moves MODE        ef policies: net (default): a running job\n"
        "                      keeps its GPUs unless a promise needs them\n"
        "                      or a move gains more over its remaining\n"
        "                      work than its restart costs; any: the\n"
        "                      paper's rule (every point re-derives each\n"
        "                      allocation, gross speed-up; --baselines\n"
        "                      reference and --surplus reference imply it)\n"
        "  --cap MODE          baselines' GPU sizes: usable (default: the\n"
        "                      curve's usable sizes, never past its peak) or\n"
        "                      reference (up to min(64, batch), past the peak,\n"
        "                      as the reference implementation does)\n"
        "  --baselines MODE    gandiva, tiresias, themis, chronus, edf-ac,\n"
        "                      ef, ef-noac: fixed (default: the reference's\n"
        "                      defects fixed) or reference (its rules rule\n"
        "                      by rule, keeping the defects that change\n"
        "                      numbers; edf-ac: a newcomer is rejected if\n"
        "                      any job, already-late ones included, would\n"
        "                      miss its deadline; ef: the reference's\n"
        "                      admission, a point's arrivals all or none,\n"
        "                      met judged on the planned end; ef, ef-noac:\n"
        "                      planned without overheads; gandiva,\n"
        "                      tiresias: points at the reference's event\n"
        "                      times, off the slot grid, and its overhead\n"
        "                      rule under --overhead reference; themis: a\n"
        "                      job ends at its lease's end)\n"
        "  --mip-nodes N       chronus: branch-and-bound node budget of each\n"
        "                      MIP solve (default 500); past it a greedy\n"
        "                      answers (counted: solver fallbacks)\n"
        "  --out FILE          write the result (JSON, efplan-sim v1); -: to\n"
        "                      standard output (the summary goes to standard\n"
        "                      error)\n"
        "  --jobs-out FILE     write one CSV row per job\n"
        "  --svg FILE          draw GPUs in use and deadlines met over time\n"
        "                      (- for standard output)\n"
        "  --elastic-batch     ef, ef-noac: jobs with batch_sizes may change\n"
        "                      batch size (work counted in samples); saxena\n"
        "                      always does\n"
        "  --pollux-data DIR   pollux: the goodput measurements (default: the\n"
        "                      bundled inputs/pollux)\n"
        "\n"
        "Exit codes: 0 simulated, 2 usage error, 3 invalid input,\n"
        "5 internal error or an output that cannot be written.\n");
    cli_help_shared(CLI_F_JSON);
}

/* The metrics table of a finished simulation of 'trace'. */
static void print_sim(FILE *f, const sim *s, const char *trace)
{
    sim_metrics m;
    sim_metrics_compute(s, &m);
    char span[64];
    fprintf(f, "simulate %s: %d jobs on %s (%d GPUs), policy %s, slot %d s, "
            "overhead %s\n", trace, m.jobs, s->cl.name, s->cl.total_gpus,
            s->pol->name, s->opts.slot, ovh_name(s->opts.overhead));
    fprintf(f, "  %-34s %d (%d with a deadline, %d best-effort)\n", "jobs",
            m.jobs, m.deadline_jobs, m.best_effort_jobs);
    fprintf(f, "  %-34s %d admitted, %d rejected\n", "admission", m.admitted,
            m.rejected);
    fprintf(f, "  %-34s %d met, %d missed (%d unfinished)\n", "deadlines",
            m.met, m.missed, m.unfinished);
    if (m.at_risk > 0)
        fprintf(f, "  %-34s %d (see the at_risk column of --jobs-out)\n",
                "admitted jobs flagged at risk", m.at_risk);
    fprintf(f, "  %-34s %.4f\n", "deadline ratio (met / deadline jobs)",
            m.deadline_ratio);
    fprintf(f, "  %-34s %.1f (overheads %.1f, idle after completion %.1f)\n",
            "GPU-hours held", m.gpu_hours, m.overhead_gpu_hours,
            m.idle_gpu_hours_after_completion);
    if (m.best_effort_mean_jct >= 0)
        fprintf(f, "  %-34s %s\n", "best-effort mean JCT",
                ef_ht_dur((int64_t)m.best_effort_mean_jct, span,
                          sizeof span));
    fprintf(f, "  %-34s %d rescales, %d migrations, %d preemptions\n",
            "reconfigurations", m.rescales, m.migrations, m.preemptions);
    fprintf(f, "  %-34s mean %.2f, p99 %.0f, max %d\n",
            "restarts per job that ran", m.restarts_mean, m.restarts_p99,
            m.restarts_max);
    if (s->opts.speed_hi > 0 || s->opts.restart_scale > 0)
        fprintf(f, "  %-34s speed %.2f-%.2f of the curve, restarts %.2fx "
                "the model's; planned at %s\n", "physics",
                s->opts.speed_hi > 0 ? s->opts.speed_lo : 1.0,
                s->opts.speed_hi > 0 ? s->opts.speed_hi : 1.0,
                s->opts.restart_scale > 0 ? s->opts.restart_scale : 1.0,
                s->opts.learn ? "the measured speeds and restart costs"
                              : "the curves and the model");
    fprintf(f, "  %-34s %.3f (running jobs' speed-ups over 1 GPU, summed,"
            " / %d GPUs,\n  %-34s averaged over time: 1 = each GPU does a "
            "lone GPU's work)\n", "mean cluster efficiency", m.mean_efficiency,
            s->cl.total_gpus, "");
    if (s->elastic)
        fprintf(f, "  %-34s %d batch changes\n", "elastic batch",
                m.batch_changes);
    if (s->solver_fallbacks > 0)
        fprintf(f, "  %-34s %d\n", "solver fallbacks (greedy answers)",
                s->solver_fallbacks);
    fprintf(f, "  %-34s %d over %s; %.2f s wall\n", "scheduling points",
            s->points, ef_ht_dur(s->end - s->now, span, sizeof span),
            s->wall_seconds);
    ef_lat_summary ls;
    ef_lat_summarise(&s->point_us, &ls);
    fprintf(f, "  %-34s p50 %.1f us, p99 %.1f us, max %.1f us\n",
            "decision time per point", ls.p50, ls.p99, ls.max);
}

/* sim_opts' progress: "simulate: jobs done 120/1000" on a terminal. */
static void progress(void *arg, int done, int total)
{
    (void)arg;
    cli_progress("simulate: jobs done", done, total);
}

/* --json: the metrics of a finished simulation of 'trace' as one object
 * (no wall-clock figures: the same inputs give the same bytes). */
static int sim_json(const sim *s, const char *trace)
{
    sim_metrics m;
    sim_metrics_compute(s, &m);
    jw w;
    jw_init(&w, 1);
    jw_obj(&w, NULL, NULL);
    jw_str(&w, "command", "simulate");
    jw_str(&w, "trace", trace);
    jw_str(&w, "cluster", s->cl.name);
    jw_int(&w, "gpus", s->cl.total_gpus);
    jw_str(&w, "policy", s->pol->name);
    jw_int(&w, "slot_seconds", s->opts.slot);
    jw_str(&w, "overhead", ovh_name(s->opts.overhead));
    jw_int(&w, "jobs", m.jobs);
    jw_int(&w, "deadline_jobs", m.deadline_jobs);
    jw_int(&w, "best_effort_jobs", m.best_effort_jobs);
    jw_int(&w, "admitted", m.admitted);
    jw_int(&w, "rejected", m.rejected);
    jw_int(&w, "met", m.met);
    jw_int(&w, "missed", m.missed);
    jw_int(&w, "unfinished", m.unfinished);
    jw_int(&w, "at_risk", m.at_risk);
    jw_fixed(&w, "deadline_ratio", m.deadline_ratio, 4);
    jw_fixed(&w, "gpu_hours", m.gpu_hours, 3);
    jw_fixed(&w, "overhead_gpu_hours", m.overhead_gpu_hours, 3);
    jw_int(&w, "rescales", m.rescales);
    jw_int(&w, "migrations", m.migrations);
    jw_int(&w, "preemptions", m.preemptions);
    jw_fixed(&w, "mean_cluster_efficiency", m.mean_efficiency, 4);
    jw_int(&w, "scheduling_points", s->points);
    jw_end(&w);
    return cli_json_print(&w);
}

int cli_sim_option(const char *cmd, int o, const char *arg, sim_opts *so)
{
    int64_t v;
    switch (o) {
    case 's':
        return cli_parse_slot(cmd, arg, &so->slot);
    case 'O': {
        int m = ovh_parse(arg);
        if (m < 0)
            return cli_usage_error(cmd, "--overhead: \"%s\" (expected fig12, "
                                   "reference, restart or none)", arg);
        so->overhead = (ovh_mode)m;
        return 0;
    }
    case 'S':
        if (strcmp(arg, "gain") != 0 && strcmp(arg, "reference") != 0)
            return cli_usage_error(cmd, "--surplus: \"%s\" (expected gain or "
                                   "reference)", arg);
        so->surplus_reference = strcmp(arg, "reference") == 0;
        return 0;
    case 'W':
        if (strcmp(arg, "net") != 0 && strcmp(arg, "any") != 0)
            return cli_usage_error(cmd, "--moves: \"%s\" (expected net or "
                                   "any)", arg);
        so->moves_any = strcmp(arg, "any") == 0;
        return 0;
    case 'F': { /* --speed-factor LO,HI or F */
        double lo, hi;
        const char *comma = strchr(arg, ',');
        char first[64];
        snprintf(first, sizeof first, "%.*s",
                 comma ? (int)(comma - arg) : (int)strlen(arg), arg);
        if (ef_parse_double(first, &lo) != EF_NUM_OK ||
            (comma ? ef_parse_double(comma + 1, &hi) : (hi = lo, EF_NUM_OK))
                != EF_NUM_OK ||
            !(lo >= 0.01) || !(hi >= lo) || hi > 10)
            return cli_usage_error(cmd, "--speed-factor: \"%s\" (expected "
                                   "LO,HI with 0.01 <= LO <= HI <= 10, or "
                                   "one factor: 0.6,1.0)", arg);
        so->speed_lo = lo;
        so->speed_hi = hi;
        return 0;
    }
    case 'R': {
        double x;
        if (ef_parse_double(arg, &x) != EF_NUM_OK || !(x > 0) || x > 1000)
            return cli_usage_error(cmd, "--restart-cost: \"%s\" (expected "
                                   "a factor on the overhead model's "
                                   "costs, > 0 and <= 1000: 2)", arg);
        so->restart_scale = x;
        return 0;
    }
    case 'Z':
        if (ef_parse_i64(arg, 0, INT64_MAX, &v) != EF_NUM_OK)
            return cli_usage_error(cmd, "--physics-seed: \"%s\" (expected "
                                   "0 to 2^63-1)", arg);
        so->physics_seed = (uint64_t)v;
        return 0;
    case 'L':
        so->learn = 1;
        return 0;
    case 'C':
        if (strcmp(arg, "usable") != 0 && strcmp(arg, "reference") != 0)
            return cli_usage_error(cmd, "--cap: \"%s\" (expected usable or "
                                   "reference)", arg);
        so->cap_reference = strcmp(arg, "reference") == 0;
        return 0;
    case 'B':
        if (strcmp(arg, "fixed") != 0 && strcmp(arg, "reference") != 0)
            return cli_usage_error(cmd, "--baselines: \"%s\" (expected fixed "
                                   "or reference)", arg);
        so->baselines_reference = strcmp(arg, "reference") == 0;
        return 0;
    case 'M':
        if (ef_parse_i64(arg, 1, 100000000, &v) != EF_NUM_OK)
            return cli_usage_error(cmd, "--mip-nodes: \"%s\" is not a "
                                   "positive number of nodes", arg);
        so->mip_nodes = (int)v;
        return 0;
    case 'E':
        so->elastic_batch = 1;
        return 0;
    case 'P':
        so->pollux_dir = arg;
        return 0;
    default:
        return -1;
    }
}

/* What the command line asks for. */
typedef struct simulate_args {
    const char *trace;    /* --trace */
    const char *cluster;  /* --cluster */
    const char *curves;   /* --curves */
    const char *out;      /* --out: the result file ('-': standard output) */
    const char *jobs_out; /* --jobs-out: the per-job CSV */
    const char *svg;      /* --svg: the timeline ('-': standard output) */
    const sim_policy *pol; /* --policy */
    sim_opts so;          /* the simulation's options */
    int to_stdout;        /* a result output or --json is standard output */
} simulate_args;

/* --policy NAME into *pol: 0, or EXIT_USAGE (printed, with the nearest
 * policy's name when one is near). */
static int policy_option(const char *arg, const sim_policy **pol)
{
    *pol = sim_policy_find(arg);
    if (*pol)
        return 0;
    const char *names[32];
    int n = sim_policy_count();
    for (int i = 0; i < n && i < 32; i++)
        names[i] = sim_policy_at(i)->name;
    const char *sug = ef_suggest(arg, names, n < 32 ? n : 32);
    return cli_usage_error("simulate", "--policy: unknown policy "
                           "\"%s\"%s%s%s (see --help)", arg,
                           sug ? "; did you mean \"" : "",
                           sug ? sug : "", sug ? "\"?" : "");
}

/* One option of the table into *a; 0, or an exit code (printed); 1 for
 * --help (printed). */
static int simulate_option(simulate_args *a, int o, char **argv)
{
    int64_t v;
    switch (o) {
    case 't': a->trace = optarg; break;
    case 'c': a->cluster = optarg; break;
    case 'u': a->curves = optarg; break;
    case 'o': a->out = optarg; break;
    case 'J': a->jobs_out = optarg; break;
    case 'g': a->svg = optarg; break;
    case 'p': return policy_option(optarg, &a->pol);
    case 'k':
        if (ef_parse_i64(optarg, 1, 86400 * 365, &v) != EF_NUM_OK)
            return cli_usage_error("simulate", "--tick: \"%s\" is not a "
                                   "positive number of seconds", optarg);
        a->so.tick = v;
        break;
    case 'h': help_simulate(); return 1;
    default: {
        int rc = cli_sim_option("simulate", o, optarg, &a->so);
        if (rc < 0)
            return cli_option_error("simulate", o, argv[optind - 1]);
        return rc;
    }
    }
    return 0;
}

/* --elastic-batch with policy 'pol', which keeps every batch size: the
 * usage error (printed, naming the policies that change it); EXIT_USAGE. */
static int elastic_batch_error(const sim_policy *pol)
{
    ef_buf l = {0}; /* the policies that change batch sizes */
    int n = 0, k = 0;
    for (int i = 0; i < sim_policy_count(); i++)
        n += sim_policy_elastic_batch(sim_policy_at(i));
    for (int i = 0; i < sim_policy_count(); i++)
        if (sim_policy_elastic_batch(sim_policy_at(i)))
            ef_buf_printf(&l, "%s%s", k++ == 0 ? "" : k == n ? " or " :
                          ", ", sim_policy_at(i)->name);
    int rc = cli_usage_error("simulate", "--elastic-batch: policy %s "
                             "keeps every job's batch size (expected "
                             "%s)", pol->name, l.s);
    free(l.s);
    return rc;
}

/* Parse the command line into *a: -1 when it may go on, else the exit
 * code (printed; 0 for --help). */
static int simulate_parse(int argc, char **argv, simulate_args *a)
{
    static const struct option opts[] = {
        {"trace", required_argument, NULL, 't'},
        {"cluster", required_argument, NULL, 'c'},
        {"curves", required_argument, NULL, 'u'},
        {"policy", required_argument, NULL, 'p'},
        {"slot", required_argument, NULL, 's'},
        {"tick", required_argument, NULL, 'k'},
        {"overhead", required_argument, NULL, 'O'},
        {"surplus", required_argument, NULL, 'S'},
        {"moves", required_argument, NULL, 'W'},
        {"speed-factor", required_argument, NULL, 'F'},
        {"restart-cost", required_argument, NULL, 'R'},
        {"physics-seed", required_argument, NULL, 'Z'},
        {"learn", no_argument, NULL, 'L'},
        {"cap", required_argument, NULL, 'C'},
        {"baselines", required_argument, NULL, 'B'},
        {"mip-nodes", required_argument, NULL, 'M'},
        {"out", required_argument, NULL, 'o'},
        {"jobs-out", required_argument, NULL, 'J'},
        {"svg", required_argument, NULL, 'g'},
        {"elastic-batch", no_argument, NULL, 'E'},
        {"pollux-data", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    sim_opts_default(&a->so);
    int o;
    opterr = 0;
    optind = 1;
    while ((o = cli_getopt("simulate", argc, argv, opts, CLI_F_JSON,
                           NULL)) != -1) {
        int rc = simulate_option(a, o, argv);
        if (rc != 0)
            return rc == 1 ? 0 : rc;
    }
    if (optind < argc)
        return cli_usage_error("simulate", "unexpected argument \"%s\"",
                               argv[optind]);
    if (!a->trace || !a->cluster || !a->curves || !a->pol)
        return cli_usage_error("simulate", "--trace, --cluster, --curves and "
                               "--policy are required");
    static const char *const outs[] = {"--out", "--svg"};
    const char *const out_paths[] = {a->out, a->svg};
    if (cli_stdout_owner("simulate", 2, outs, out_paths, &a->to_stdout) != 0)
        return EXIT_USAGE;
    if (a->so.elastic_batch && !sim_policy_elastic_batch(a->pol))
        return elastic_batch_error(a->pol);
    return -1;
}

/* The output files of the finished simulation *s, --svg then --out (the
 * --jobs-out file is written as it ends). 0, or an exit code (printed). */
static int simulate_files(const simulate_args *a, const sim *s, ef_err *e)
{
    if (a->svg) {
        ef_buf svg = {0};
        sim_svg(s, a->trace, &svg);
        int wr = cli_write_out(a->svg, svg.s, svg.n, e);
        free(svg.s);
        if (wr != EF_OK)
            return cli_fail(e);
    }
    if (a->out) {
        sim_result r;
        size_t n;
        sim_result_from(&r, s, a->trace);
        char *text = sim_result_json(&r, &n);
        sim_result_free(&r);
        int wr = cli_write_out(a->out, text, n, e);
        free(text);
        if (wr != EF_OK)
            return cli_fail(e);
    }
    return 0;
}

/* Say the finished simulation *s: its metrics (table or --json) and the
 * files written, on standard error when standard output holds a result.
 * The exit code. */
static int simulate_say(const simulate_args *a, const sim *s)
{
    FILE *say = a->to_stdout ? stderr : stdout;
    int rc = 0;
    if (cli_cf.json)
        rc = sim_json(s, a->trace);
    else
        print_sim(say, s, a->trace);
    cli_say_wrote(say, a->out);
    cli_say_wrote(say, a->jobs_out);
    cli_say_wrote(say, a->svg);
    return rc;
}

int cmd_simulate(int argc, char **argv)
{
    simulate_args a;
    int rc = simulate_parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    a.so.progress = progress;
    ef_err e = {0};
    cluster c;
    curve_set cs = {0};
    job_queue q = {0};
    sim s = {0};
    if (cli_load_inputs(a.cluster, a.curves, a.trace, &c, &cs, &q, &e) !=
        EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    int ran = sim_run(&s, &q, &c, a.pol, &a.so, &e); /* EF_OK or EF_ERR */
    cli_progress_end();
    if (ran != EF_OK ||
        (a.jobs_out && sim_write_jobs_csv(&s, a.jobs_out, &e) != EF_OK)) {
        rc = cli_fail(&e);
        goto out;
    }
    /* --out -: the result is standard output, the summary goes to
     * standard error; files first, so that a failure prints no result */
    rc = simulate_files(&a, &s, &e);
    if (rc == 0)
        rc = simulate_say(&a, &s);
out:
    sim_free(&s);
    queue_free(&q);
    curve_set_free(&cs);
    return rc;
}
