/* cmd_compare.c: "efplan compare": a grid of simulations, one table. */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/jsonw.h"
#include "common/util.h"
#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "simulator/compare.h"
#include "simulator/published.h"
#include "simulator/sim.h"

#define MAX_ITEMS 64

void help_compare(void)
{
    printf(
        "Usage: efplan compare --traces A,B,... --policies P,Q,...\n"
        "                      [--cluster SPEC|artifact]\n"
        "                      [--cluster-for TRACE=SPEC ...]\n"
        "                      [--curves DIR|A100|T4] [--slot SECONDS]\n"
        "                      [--overhead fig12|reference|restart|none]\n"
        "                      [--cap usable|reference] [--surplus gain|reference]\n"
        "                      [--moves net|any]\n"
        "                      [--baselines fixed|reference] [--mip-nodes N]\n"
        "                      [--elastic-batch] [--pollux-data DIR]\n"
        "                      [--out results.json] [--markdown table.md]\n"
        "                      [--svg chart.svg]\n"
        "\n"
        "Simulate every trace with every policy (in parallel: OMP_NUM_THREADS;\n"
        "results do not depend on the thread count) and print one table: rows\n"
        "traces, columns policies, cells deadline ratios, with the number the\n"
        "ElasticFlow paper publishes for that trace, cluster size and policy\n"
        "in parentheses where it has one. A second table gives wall seconds.\n"
        "\n"
        "  --traces LIST       comma-separated trace files (no empty item)\n"
        "  --policies LIST     comma-separated policies (no empty item; see\n"
        "                      efplan simulate --help)\n"
        "  --cluster SPEC      cluster for every trace (default: artifact, the\n"
        "                      paper's size for its traces: cluster01 n64g8...)\n"
        "  --cluster-for T=S   cluster S for the trace whose file stem is T\n"
        "                      (a trace of --traces; once per trace)\n"
        "  --curves DIR        curves (default A100)\n"
        "  --slot, --overhead, --cap, --surplus, --moves, --baselines,\n"
        "  --mip-nodes, --elastic-batch, --pollux-data\n"
        "                      as for efplan simulate\n"
        "  --out FILE          every cell's metrics as JSON (efplan-compare v1)\n"
        "  --markdown FILE     the tables as Markdown\n"
        "  --svg FILE          (- for standard output) a bar chart of the\n"
        "                      deadline ratios: a group of\n"
        "                      bars per trace, a bar per policy, its value on\n"
        "                      top, the published number marked where known\n"
        "\n"
        "Exit codes: 0 done, 2 usage error, 3 invalid input, 5 internal error.\n");
    cli_help_shared(CLI_F_JSON);
}

/* cmp_grid's progress: "compare: cells 12/54" on a terminal. */
static void progress(void *arg, int done, int total)
{
    (void)arg;
    cli_progress("compare: simulations done", done, total);
}

/* 1 iff policies a and b give the same numbers on every trace of r. */
static int same_cells(const cmp_result *r, int a, int b)
{
    int np = r->npolicies;
    for (int i = 0; i < r->ntraces; i++) {
        const cmp_cell *x = &r->cells[i * np + a], *y = &r->cells[i * np + b];
        if (x->met != y->met || x->admitted != y->admitted ||
            x->rejected != y->rejected ||
            x->deadline_ratio != y->deadline_ratio)
            return 0;
    }
    return 1;
}

/* Policy p's group: the first policy with the same numbers (p itself
 * when none before it has them). */
static int group_of(const cmp_result *r, int p)
{
    for (int a = 0; a < p; a++)
        if (same_cells(r, a, p))
            return a;
    return p;
}

/* A note under the tables for each set of policies whose numbers are the
 * same on every trace, with what the numbers show of why. */
static void same_note(const cmp_result *r, FILE *f)
{
    int np = r->npolicies;
    for (int a = 0; a < np; a++) {
        if (group_of(r, a) != a)
            continue;
        int n = 0, all1 = 1, all0 = 1;
        for (int p = a; p < np; p++)
            n += group_of(r, p) == a;
        if (n < 2)
            continue;
        for (int i = 0; i < r->ntraces; i++) {
            double v = r->cells[i * np + a].deadline_ratio;
            all1 &= v == 1.0;
            all0 &= v == 0.0;
        }
        fprintf(f, "\nNote: ");
        for (int p = a, k = 0; p < np; p++)
            if (group_of(r, p) == a)
                fprintf(f, "%s%s", k++ == 0 ? "" : k == n ? " and " : ", ",
                        r->cells[p].policy);
        fprintf(f, " give identical results (deadlines met, admitted, "
                "rejected) on %s: %s\n",
                r->ntraces == 1 ? "this trace" : "every trace",
                all1 ? "each meets every deadline, so the cluster is not "
                       "the bottleneck here"
                : all0 ? "none meets any deadline"
                       : r->ntraces == 1
                             ? "they meet the same deadlines' count; this "
                               "trace does not tell them apart"
                             : "they meet the same deadlines' count; these "
                               "traces do not tell them apart");
    }
}

/* --json: the grid's cells (no wall seconds: they vary) as one object. */
static int grid_json(const cmp_result *r)
{
    jw w;
    jw_init(&w, 1);
    jw_obj(&w, NULL, NULL);
    jw_str(&w, "command", "compare");
    jw_int(&w, "slot_seconds", r->slot);
    jw_str(&w, "overhead", ovh_name(r->overhead));
    jw_arr(&w, "cells", NULL);
    for (int k = 0; k < r->ntraces * r->npolicies; k++) {
        const cmp_cell *c = &r->cells[k];
        jw_obj(&w, NULL, NULL);
        jw_str(&w, "trace", c->trace);
        jw_str(&w, "policy", c->policy);
        jw_str(&w, "cluster", c->cluster);
        jw_int(&w, "gpus", c->gpus);
        jw_int(&w, "admitted", c->admitted);
        jw_int(&w, "rejected", c->rejected);
        jw_int(&w, "deadline_jobs", c->deadline_jobs);
        jw_int(&w, "met", c->met);
        jw_fixed(&w, "deadline_ratio", c->deadline_ratio, 4);
        if (c->published >= 0)
            jw_fixed(&w, "published", c->published, 3);
        else
            jw_null(&w, "published");
        jw_str(&w, "same_results_as",
               r->cells[group_of(r, k % r->npolicies)].policy);
        jw_end(&w);
    }
    jw_end(&w);
    jw_end(&w);
    return cli_json_print(&w);
}

/* Split the comma list 'arg' of option 'opt' (naming 'what' its items
 * are) into buf (of len bytes) and out[0..max). Returns the count, or -1
 * after printing a usage error that names the value: an empty item
 * ("ef,,edf", a leading or trailing comma), more than max items, a list
 * longer than buf. */
static int split(const char *opt, const char *what, const char *arg,
                 char *buf, size_t len, char **out, int max)
{
    if (strlen(arg) >= len) {
        cli_usage_error("compare", "%s: the list is too long (at most %zu "
                        "bytes)", opt, len - 1);
        return -1;
    }
    memcpy(buf, arg, strlen(arg) + 1);
    int n = 0;
    char *tok = buf;
    for (;;) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        if (tok[0] == '\0') {
            cli_usage_error("compare", "%s: \"%s\" has an empty item "
                            "(expected %s, comma-separated)", opt, arg, what);
            return -1;
        }
        if (n == max) {
            cli_usage_error("compare", "%s: more than %d %s", opt, max,
                            what);
            return -1;
        }
        out[n++] = tok;
        if (!comma)
            return n;
        tok = comma + 1;
    }
}

/* What `efplan compare` was asked for. */
typedef struct cmp_args {
    char *tr[MAX_ITEMS];  /* --traces, split in tbuf */
    char *po[MAX_ITEMS];  /* --policies, split in pbuf */
    char *fk[MAX_ITEMS];  /* --cluster-for: a trace's file stem ... */
    char *fv[MAX_ITEMS];  /* ... and its cluster */
    char tbuf[4096], pbuf[1024];
    int nt, np, nf;
    const char *cluster_arg, *curves_arg;
    const char *out_path, *md_path, *svg_path;
    int to_stdout;        /* an output or --json is standard output */
    const sim_policy *pols[MAX_ITEMS];
    sim_opts so;
} cmp_args;

/* One option of `compare` into a: -1 when taken, else the exit code. */
static int compare_option(int o, char **argv, cmp_args *a)
{
    switch (o) {
    case 't':
        a->nt = split("--traces", "trace files", optarg, a->tbuf,
                      sizeof a->tbuf, a->tr, MAX_ITEMS);
        return a->nt < 0 ? EXIT_USAGE : -1;
    case 'p':
        a->np = split("--policies", "policies", optarg, a->pbuf,
                      sizeof a->pbuf, a->po, MAX_ITEMS);
        return a->np < 0 ? EXIT_USAGE : -1;
    case 'c': a->cluster_arg = optarg; return -1;
    case 'f': {
        char *eq = strchr(optarg, '=');
        if (!eq || eq == optarg || !eq[1] || a->nf == MAX_ITEMS)
            return cli_usage_error("compare", "--cluster-for: \"%s\" is "
                                   "not TRACE=SPEC", optarg);
        *eq = 0;
        a->fk[a->nf] = optarg;
        a->fv[a->nf++] = eq + 1;
        return -1;
    }
    case 'u': a->curves_arg = optarg; return -1;
    case 'o': a->out_path = optarg; return -1;
    case 'm': a->md_path = optarg; return -1;
    case 'g': a->svg_path = optarg; return -1;
    case 'h': help_compare(); return 0;
    default: {
        int rc = cli_sim_option("compare", o, optarg, &a->so);
        if (rc < 0)
            return cli_option_error("compare", o, argv[optind - 1]);
        return rc > 0 ? rc : -1;
    }
    }
}

/* Every --cluster-for names a trace of --traces, once; every policy is
 * known (a->pols). -1 when so, else the exit code. */
static int compare_check(cmp_args *a)
{
    for (int k = 0; k < a->nf; k++) {
        int found = 0;
        for (int i = 0; i < a->nt && !found; i++) {
            char stem[CMP_STEM_LEN];
            cmp_stem(a->tr[i], stem, sizeof stem);
            found = strcmp(a->fk[k], stem) == 0;
        }
        if (!found)
            return cli_usage_error("compare", "--cluster-for %s=%s: no trace "
                                   "of --traces has the file stem \"%s\"",
                                   a->fk[k], a->fv[k], a->fk[k]);
        for (int m = 0; m < k; m++)
            if (strcmp(a->fk[m], a->fk[k]) == 0)
                return cli_usage_error("compare", "--cluster-for: trace "
                                       "\"%s\" is given twice (%s and %s)",
                                       a->fk[k], a->fv[m], a->fv[k]);
    }
    for (int k = 0; k < a->np; k++) {
        a->pols[k] = sim_policy_find(a->po[k]);
        if (!a->pols[k])
            return cli_usage_error("compare", "--policies: unknown policy "
                                   "\"%s\" (see efplan simulate --help)",
                                   a->po[k]);
    }
    return -1;
}

/* The command line of `compare` into a: -1 to go on, else the exit
 * code. */
static int compare_parse(int argc, char **argv, cmp_args *a)
{
    static const struct option opts[] = {
        {"traces", required_argument, NULL, 't'},
        {"policies", required_argument, NULL, 'p'},
        {"cluster", required_argument, NULL, 'c'},
        {"cluster-for", required_argument, NULL, 'f'},
        {"curves", required_argument, NULL, 'u'},
        {"slot", required_argument, NULL, 's'},
        {"overhead", required_argument, NULL, 'O'},
        {"cap", required_argument, NULL, 'C'},
        {"baselines", required_argument, NULL, 'B'},
        {"mip-nodes", required_argument, NULL, 'M'},
        {"elastic-batch", no_argument, NULL, 'E'},
        {"pollux-data", required_argument, NULL, 'P'},
        {"surplus", required_argument, NULL, 'S'},
        {"moves", required_argument, NULL, 'W'},
        {"out", required_argument, NULL, 'o'},
        {"markdown", required_argument, NULL, 'm'},
        {"svg", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    a->cluster_arg = "artifact";
    a->curves_arg = "A100";
    sim_opts_default(&a->so);
    opterr = 0;
    optind = 1;
    int o;
    while ((o = cli_getopt("compare", argc, argv, opts, CLI_F_JSON,
                           "cluster-for")) != -1) {
        int rc = compare_option(o, argv, a);
        if (rc >= 0)
            return rc;
    }
    if (optind < argc)
        return cli_usage_error("compare", "unexpected argument \"%s\"",
                               argv[optind]);
    if (a->nt <= 0 || a->np <= 0)
        return cli_usage_error("compare", "--traces and --policies are "
                               "required");
    static const char *const outs[] = {"--markdown", "--svg"};
    const char *const out_paths[] = {a->md_path, a->svg_path};
    if (cli_stdout_owner("compare", 2, outs, out_paths, &a->to_stdout) != 0)
        return EXIT_USAGE;
    return compare_check(a);
}

/* The curves, and each trace's queue and cluster (--cluster-for's, else
 * --cluster's; "artifact": the size the trace was published with). -1
 * when loaded, else the exit code (after saying why). */
static int compare_load(const cmp_args *a, curve_set *cs, job_queue *q,
                        cluster *cl)
{
    ef_err e = {0};
    if (curve_set_load_arg(cs, a->curves_arg, &e) != EF_OK)
        return cli_fail(&e);
    for (int i = 0; i < a->nt; i++) {
        char stem[CMP_STEM_LEN];
        cmp_stem(a->tr[i], stem, sizeof stem);
        const char *spec = a->cluster_arg;
        for (int k = 0; k < a->nf; k++)
            if (strcmp(a->fk[k], stem) == 0)
                spec = a->fv[k];
        if (strcmp(spec, "artifact") == 0) {
            spec = pub_cluster(stem);
            if (!spec)
                return cli_usage_error("compare", "no artifact cluster size "
                                       "is known for %s: give --cluster or "
                                       "--cluster-for %s=SPEC", a->tr[i],
                                       stem);
        }
        if (cluster_from_arg(&cl[i], spec, &e) != EF_OK ||
            queue_load(&q[i], a->tr[i], &e) != EF_OK ||
            queue_resolve(&q[i], cs, &e) != EF_OK)
            return cli_fail(&e);
    }
    return -1;
}

/* The grid's tables (to standard output, or to standard error when it
 * carries --markdown - or --svg -; JSON with --json) and its files. */
static int compare_out(const cmp_args *a, const cmp_result *r)
{
    ef_err e = {0};
    int rc = 0;
    ef_buf md = {0};
    cmp_tables(r, &md);
    if (cli_cf.json) {
        rc = grid_json(r);
    } else {
        FILE *say = a->to_stdout ? stderr : stdout;
        fputs(md.s, say);
        same_note(r, say);
    }
    if (rc == 0 && a->md_path &&
        cli_write_out(a->md_path, md.s, md.n, &e) != EF_OK)
        rc = cli_fail(&e);
    free(md.s);
    if (rc == 0 && a->out_path && cmp_write_json(r, a->out_path, &e) != EF_OK)
        rc = cli_fail(&e);
    if (rc == 0 && a->svg_path) {
        ef_buf svg = {0};
        cmp_svg(r, &svg);
        if (cli_write_out(a->svg_path, svg.s, svg.n, &e) != EF_OK)
            rc = cli_fail(&e);
        free(svg.s);
    }
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    cmp_args a;
    memset(&a, 0, sizeof a);
    int rc = compare_parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    curve_set cs = {0};
    job_queue q[MAX_ITEMS];
    cluster cl[MAX_ITEMS];
    cmp_result r = {0};
    memset(q, 0, sizeof q);
    rc = compare_load(&a, &cs, q, cl);
    if (rc < 0) {
        ef_err e = {0};
        cmp_grid g = {a.nt, a.np, (const char *const *)a.tr, q, cl, a.pols,
                      a.so, progress, NULL};
        progress(NULL, 0, a.nt * a.np); /* the run's start */
        if (cmp_run(&g, &r, &e) != EF_OK) {
            rc = cli_fail(&e);
        } else {
            cli_progress_end();
            rc = compare_out(&a, &r);
        }
    }
    for (int i = 0; i < a.nt; i++)
        queue_free(&q[i]);
    curve_set_free(&cs);
    cmp_result_free(&r);
    return rc;
}
