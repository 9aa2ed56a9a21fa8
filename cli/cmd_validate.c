/* cmd_validate.c: "efplan validate": read inputs, check them, summarise. */
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
#include "planner/plan.h"
#include "planner/planio.h"

void help_validate(void)
{
    printf(
        "Usage: efplan validate [--jobs FILE] [--cluster SPEC] [--curves DIR]\n"
        "                       [--plan FILE [--out FILE] [--plan-version N]]\n"
        "\n"
        "Read each input given, check it strictly, and print what was read.\n"
        "With --jobs and --curves, every job's model and batch size must have\n"
        "a curve row; with --jobs and --cluster, every job's placement must\n"
        "fit the cluster as plan takes it. At least one option is required.\n"
        "\n"
        "  --jobs FILE      job queue: trace CSV or JSON {\"jobs\": [...]}\n"
        "  --cluster SPEC   nNgG shorthand (n16g8), or a .csv/.json spec\n"
        "  --curves DIR     curve directory, or a bundled set: A100, T4\n"
        "  --plan FILE      a plan file (efplan-plan, version 1 or 2)\n"
        "  --out FILE       write the plan read back in --plan-version N\n"
        "                   (2, runs, by default; 1, a list of slots, for\n"
        "                   readers of version 1); -: standard output\n"
        "  -h, --help       this text\n"
        "\n"
        "With --plan, the plan's promise is checked as the planner's own\n"
        "check does it: its slots are run at the curves' throughput with the\n"
        "overheads of its model and its elastic batch sizes, and every job\n"
        "whose slots end it elsewhere than its planned_end, or admitted and\n"
        "ending after its deadline, is listed with its planned end, where\n"
        "the slots end it and its deadline (--curves: other curves than the\n"
        "ones the plan names).\n"
        "\n"
        "Exit codes: 0 valid, 2 usage error, 3 invalid input (a plan whose\n"
        "slots end a job elsewhere than its planned_end included), 9 the plan\n"
        "breaks its promise (an admitted job ends after its deadline, flagged\n"
        "at risk by the plan or not).\n");
    cli_help_shared(CLI_F_JSON);
}

static int cmp_model_batch(const void *a, const void *b, void *ctx)
{
    const job *jobs = ctx;
    const job *x = &jobs[*(const int *)a], *y = &jobs[*(const int *)b];
    int c = strcmp(x->model, y->model);
    if (c)
        return c;
    if (x->batch != y->batch)
        return x->batch < y->batch ? -1 : 1;
    return *(const int *)a - *(const int *)b;
}

static void print_curves(const curve_set *cs, int cap)
{
    int rows = 0;
    for (int i = 0; i < cs->nmodels; i++)
        rows += cs->models[i].nrows;
    printf("curves   %s: %d models, %d batch sizes\n", cs->dir, cs->nmodels,
           rows);
    printf("  %-18s %7s  %s\n", "model", "batch", "usable GPU counts (it/s)");
    for (int i = 0; i < cs->nmodels; i++) {
        const curve_model *m = &cs->models[i];
        for (int r = 0; r < m->nrows; r++) {
            int g[CURVE_MAX_LEVELS];
            double t[CURVE_MAX_LEVELS];
            int n = curve_usable(&m->rows[r], cap, g, t);
            printf("  %-18s %7ld ", m->name, m->rows[r].batch);
            for (int k = 0; k < n; k++)
                printf(" %d (%.3g)", g[k], t[k]);
            if (n == 0)
                printf(" none within %d GPUs", cap);
            printf("\n");
        }
    }
}

static void print_jobs(const job_queue *q, int cap, int have_curves)
{
    int best = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int i = 0; i < q->n; i++) {
        best += !q->jobs[i].has_deadline;
        if (q->jobs[i].submit < lo)
            lo = q->jobs[i].submit;
        if (q->jobs[i].submit > hi)
            hi = q->jobs[i].submit;
    }
    char span[64], t1[40], t2[40];
    printf("jobs     %s: %d jobs (%d with a deadline, %d best-effort)\n",
           q->path, q->n, q->n - best, best);
    if (q->n == 0)
        printf("  empty queue: nothing to plan (valid)\n");
    else
        printf("  submit times  %s .. %s%s (span %s)\n",
               cli_time(lo, lo, t1, sizeof t1), cli_time(hi, lo, t2,
                                                          sizeof t2),
               cli_zone(lo) == EF_HT_EPOCH ? " s" : "",
               ef_ht_dur(hi - lo, span, sizeof span));
    int gpuh = q->has_num_gpu && q->has_duration;
    double total = 0;
    int *ix = ef_malloc((size_t)q->n * sizeof *ix);
    for (int i = 0; i < q->n; i++)
        ix[i] = i;
    qsort_r(ix, (size_t)q->n, sizeof *ix, cmp_model_batch, q->jobs);
    printf("  %-18s %7s %7s %12s", "model", "batch", "jobs",
           gpuh ? "GPU-hours" : "");
    if (have_curves)
        printf(" %9s", "too-tight");
    printf("\n");
    int tight_all = 0;
    for (int a = 0; a < q->n;) {
        int b = a;
        double h = 0;
        int tight = 0;
        while (b < q->n && strcmp(q->jobs[ix[b]].model, q->jobs[ix[a]].model) == 0 &&
               q->jobs[ix[b]].batch == q->jobs[ix[a]].batch) {
            const job *j = &q->jobs[ix[b]];
            h += (double)j->num_gpu * (double)j->duration / 3600.0;
            if (have_curves && j->has_deadline) {
                /* Even alone on the cluster at its fastest usable size,
                 * can the job make its deadline? */
                int g = curve_max_usable(j->curve, cap);
                double t = g ? curve_tput(j->curve, g) : 0;
                double need = t > 0 ? (double)(j->iterations -
                                               j->iterations_done) / t : 1e300;
                if (need > (double)(j->deadline - j->submit))
                    tight++;
            }
            b++;
        }
        total += h;
        tight_all += tight;
        printf("  %-18s %7ld %7d", q->jobs[ix[a]].model, q->jobs[ix[a]].batch,
               b - a);
        if (gpuh)
            printf(" %12.1f", h);
        else
            printf(" %12s", "");
        if (have_curves)
            printf(" %9d", tight);
        printf("\n");
        a = b;
    }
    free(ix);
    printf("  %-18s %7s %7d", "total", "", q->n);
    if (gpuh)
        printf(" %12.1f", total);
    else
        printf(" %12s", "");
    if (have_curves)
        printf(" %9d", tight_all);
    printf("\n");
    if (gpuh)
        printf("  GPU-hours = requested num_gpu x duration (for reference; "
               "efplan chooses GPU counts itself)\n");
    if (have_curves)
        printf("  too-tight = deadline shorter than the job's run time at its "
               "fastest usable size%s\n", cap < (1 << 20) ? " on this cluster"
                                                           : "");
}

/* --json: what queue q holds, as member "jobs" of w's open object. */
static void jobs_json(jw *w, const job_queue *q)
{
    int best = 0;
    int64_t lo = 0, hi = 0;
    for (int i = 0; i < q->n; i++) {
        best += !q->jobs[i].has_deadline;
        if (i == 0 || q->jobs[i].submit < lo)
            lo = q->jobs[i].submit;
        if (i == 0 || q->jobs[i].submit > hi)
            hi = q->jobs[i].submit;
    }
    jw_obj(w, "jobs", NULL);
    jw_str(w, "path", q->path);
    jw_int(w, "jobs", q->n);
    jw_int(w, "with_deadline", q->n - best);
    jw_int(w, "best_effort", best);
    if (q->n) {
        jw_int(w, "first_submit", lo);
        jw_int(w, "last_submit", hi);
    } else {
        jw_null(w, "first_submit");
        jw_null(w, "last_submit");
    }
    jw_end(w);
}

/* The promise check of plan file 'd' read from 'path' (curves: 'curves',
 * NULL for the ones it names): plan_check_promise over the plan it holds.
 * Prints a line per broken job to 'say' (or, with 'w', writes member
 * "promise"). Returns 0 when no job breaks it, EXIT_MISSED when an
 * admitted job ends after its deadline (or never; flagged at risk by the
 * plan or not: the promise is broken all the same), EXIT_INPUT when a job only ends elsewhere than its
 * planned_end, or -1 with 'e' filled when the plan cannot be checked. */
static int check_promise(const plan_doc *d, const char *path,
                         const char *curves, FILE *say, jw *w, ef_err *e)
{
    curve_set cs = {0};
    job_queue q;
    plan p;
    const char *cname = curves ? curves : d->curves;
    if (curve_set_load_arg(&cs, cname, e) != EF_OK) {
        if (!curves)
            ef_prefix(e, "%s: curves: ", path);
        return -1;
    }
    if (plan_doc_plan(&p, &q, d, &cs, path, e) != EF_OK) {
        curve_set_free(&cs);
        return -1;
    }
    plan_broken *b = NULL;
    int n = 0, rc = 0, late = 0, off = 0, risky = 0, admitted = 0;
    if (plan_check_promise(&p, &b, &n, e) != EF_OK) {
        /* the structure: slots, capacity, placement, batch sizes */
        ef_prefix(e, "%s: ", path);
        e->kind = EF_E_INPUT;
        rc = -1;
    }
    for (int i = 0; i < p.njobs; i++)
        admitted += p.jobs[i].decision == PLAN_ADMITTED;
    if (w && rc == 0) {
        jw_obj(w, "promise", NULL);
        jw_int(w, "admitted", admitted);
        jw_arr(w, "broken", NULL);
    }
    for (int k = 0; k < n; k++) {
        const plan_job *j = &p.jobs[b[k].job];
        late += b[k].late;
        off += b[k].bad_end;
        risky += b[k].late && b[k].at_risk;
        if (w) {
            jw_obj(w, NULL, NULL);
            jw_str(w, "id", j->in->id);
            jw_int(w, "planned_end", b[k].planned_end);
            if (b[k].end >= 0)
                jw_int(w, "slots_end", b[k].end);
            else
                jw_null(w, "slots_end");
            if (b[k].deadline >= 0)
                jw_int(w, "deadline", b[k].deadline);
            else
                jw_null(w, "deadline");
            jw_bool(w, "late", b[k].late);
            jw_bool(w, "at_risk", b[k].at_risk);
            jw_end(w);
            continue;
        }
        char ends[64];
        if (b[k].end >= 0)
            snprintf(ends, sizeof ends, "its slots end it at %lld",
                     (long long)b[k].end);
        else
            snprintf(ends, sizeof ends, "its slots never end it");
        fprintf(say, "  job %s: planned end %lld, %s, deadline %lld%s%s\n",
                j->in->id, (long long)b[k].planned_end, ends,
                (long long)b[k].deadline,
                b[k].late ? " (admitted, ends after its deadline)" : "",
                b[k].at_risk ? " (the plan flags it at risk)" : "");
    }
    if (w && rc == 0) {
        jw_end(w);
        jw_int(w, "late", late);
        jw_int(w, "wrong_end", off);
        jw_int(w, "at_risk_late", risky);
        jw_end(w);
    }
    if (rc == 0 && !w)
        fprintf(say, "promise  %d admitted job%s checked (overhead %s, "
                "elastic batch %s): %d end%s after the deadline (%d of them "
                "flagged at risk), %d end%s elsewhere than planned_end\n",
                admitted, admitted == 1 ? "" : "s",
                ovh_name(p.opts.overhead), p.opts.elastic_batch ? "on" : "off",
                late, late == 1 ? "s" : "", risky, off, off == 1 ? "s" : "");
    if (rc == 0 && late)
        rc = EXIT_MISSED;
    else if (rc == 0 && off)
        rc = EXIT_INPUT;
    free(b);
    plan_free(&p);
    queue_free(&q);
    curve_set_free(&cs);
    return rc;
}

/* --plan: read the plan file at 'path', print what it holds (or, with
 * 'w', write it as member "plan" of w's open object), check its promise
 * (check_promise; its verdict into *verdict) and write it back to 'out'
 * (when not NULL) in version 'version'. */
static int validate_plan(const char *path, const char *out, int version,
                         const char *curves, jw *w, int *verdict, ef_err *e)
{
    plan_doc d;
    *verdict = 0;
    if (plan_doc_load(&d, path, e) != EF_OK)
        return EF_ERR;
    long allocs = 0;           /* allocations over all slots */
    for (int s = 0; s < d.nslots; s++)
        allocs += d.slots[s].nalloc;
    const plan_doc_summary *m = &d.summary;
    FILE *say = (out && strcmp(out, "-") == 0) || w ? stderr : stdout;
    if (w) {
        jw_obj(w, "plan", NULL);
        jw_str(w, "path", path);
        jw_int(w, "version", d.version);
        jw_int(w, "jobs", d.njobs);
        jw_int(w, "admitted", m->admitted);
        jw_int(w, "rejected", m->rejected);
        jw_int(w, "best_effort", m->best_effort);
        jw_int(w, "slots", d.nslots);
        jw_int(w, "allocations", allocs);
        jw_end(w);
    } else {
        fprintf(say, "plan     %s: version %d, %d jobs (%d admitted, %d "
                "rejected, %d best-effort), %d slots, %ld allocations", path,
                d.version, d.njobs, m->admitted, m->rejected, m->best_effort,
                d.nslots, allocs);
        if (d.version == PLAN_V2)
            fprintf(say, " in %d runs", d.nruns);
        fprintf(say, "\n");
    }
    int rc = EF_OK;
    *verdict = check_promise(&d, path, curves, say, w, e);
    if (*verdict < 0) {
        plan_doc_free(&d);
        return EF_ERR;
    }
    if (out) {
        size_t n;
        d.version = version;
        /* the jobs file as the copy at 'out' records it */
        char *jf = plan_jobs_file_moved(path, d.jobs_file, out);
        d.jobs_file = jf;
        char *text = plan_doc_json(&d, &n);
        free(jf);
        rc = cli_write_out(out, text, n, e);
        free(text);
        if (rc == EF_OK && say == stdout && !cli_cf.quiet)
            fprintf(say, "wrote %s (version %d)\n", out, version);
    }
    plan_doc_free(&d);
    return rc;
}

/* What the command line asks for. */
typedef struct validate_args {
    const char *jobs;    /* --jobs */
    const char *cluster; /* --cluster */
    const char *curves;  /* --curves */
    const char *plan;    /* --plan: a plan file, checked alone */
    const char *out;     /* --out: the plan written back ('-': standard
                            output) */
    int version;         /* --plan-version: the version written back */
    int version_given;   /* --plan-version was given */
} validate_args;

/* One option of the table into *a; 0, or an exit code (printed); 1 for
 * --help (printed). */
static int validate_option(validate_args *a, int o, char **argv)
{
    switch (o) {
    case 'j': a->jobs = optarg; break;
    case 'c': a->cluster = optarg; break;
    case 'u': a->curves = optarg; break;
    case 'p': a->plan = optarg; break;
    case 'o': a->out = optarg; break;
    case 'V':
        if (cli_parse_plan_version("validate", optarg, &a->version) != 0)
            return EXIT_USAGE;
        a->version_given = 1;
        break;
    case 'h': help_validate(); return 1;
    default:
        return cli_option_error("validate", o, argv[optind - 1]);
    }
    return 0;
}

/* Parse the command line into *a: -1 when it may go on, else the exit
 * code (printed; 0 for --help). */
static int validate_parse(int argc, char **argv, validate_args *a)
{
    static const struct option opts[] = {
        {"jobs", required_argument, NULL, 'j'},
        {"cluster", required_argument, NULL, 'c'},
        {"curves", required_argument, NULL, 'u'},
        {"plan", required_argument, NULL, 'p'},
        {"out", required_argument, NULL, 'o'},
        {"plan-version", required_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    a->version = PLAN_V2;
    int o;
    opterr = 0;
    optind = 1;
    while ((o = cli_getopt("validate", argc, argv, opts, CLI_F_JSON,
                           NULL)) != -1) {
        int rc = validate_option(a, o, argv);
        if (rc != 0)
            return rc == 1 ? 0 : rc;
    }
    if (optind < argc)
        return cli_usage_error("validate", "unexpected argument \"%s\"",
                               argv[optind]);
    if (!a->jobs && !a->cluster && !a->curves && !a->plan)
        return cli_usage_error("validate", "nothing to validate (give --jobs, "
                               "--cluster, --curves or --plan)");
    if ((a->out || a->version_given) && !a->plan)
        return cli_usage_error("validate", "%s needs --plan (the plan file "
                               "to write back)", a->out ? "--out"
                                                        : "--plan-version");
    if (a->plan && (a->jobs || a->cluster))
        return cli_usage_error("validate", "--plan is checked alone (a plan "
                               "file records its own cluster and jobs; "
                               "--curves may name other curves)");
    if (cli_cf.json && a->out && strcmp(a->out, "-") == 0)
        return cli_usage_error("validate", "--json and --out - both write "
                               "standard output: give --out a file");
    return -1;
}

/* --plan: check the plan file (validate_plan) and say the verdict: with
 * --json as w's summary (w, open, freed either way), else "ok" or the
 * broken promise on standard error. The exit code. */
static int validate_plan_file(const validate_args *a, jw *w)
{
    ef_err e = {0};
    int verdict; /* check_promise's: 0, EXIT_MISSED or another exit code */
    if (validate_plan(a->plan, a->out, a->version, a->curves,
                      cli_cf.json ? w : NULL, &verdict, &e) != EF_OK) {
        jw_free(w);
        return cli_fail(&e);
    }
    jw_bool(w, "ok", verdict == 0);
    jw_end(w);
    if (cli_cf.json) {
        int rc = cli_json_print(w);
        return rc ? rc : verdict;
    }
    jw_free(w);
    if (verdict) {
        fflush(stdout); /* the jobs above come first, also in a pipe */
        fprintf(stderr, "efplan: error: %s: %s (the jobs above)\n",
                a->plan, verdict == EXIT_MISSED
                    ? "the plan breaks its promise: an admitted job "
                      "ends after its deadline"
                    : "a job's slots end it elsewhere than its "
                      "planned_end");
        return verdict;
    }
    if (!a->out || strcmp(a->out, "-") != 0)
        printf("ok: inputs are valid\n");
    return 0;
}

/* The inputs of a check without --plan, those given. */
typedef struct validate_inputs {
    cluster c;    /* --cluster's */
    curve_set cs; /* --curves' */
    job_queue q;  /* --jobs' (resolved against cs when --curves is given) */
    int cap;      /* the cluster's GPUs; 1 << 20 without --cluster */
} validate_inputs;

/* Read the inputs a names into *in. 0, or an exit code (printed). */
static int inputs_load(const validate_args *a, validate_inputs *in)
{
    ef_err e = {0};
    if (a->cluster) {
        if (cluster_from_arg(&in->c, a->cluster, &e) != EF_OK)
            return cli_fail(&e);
        in->cap = in->c.total_gpus;
    }
    if (a->curves && curve_set_load_arg(&in->cs, a->curves, &e) != EF_OK)
        return cli_fail(&e);
    if (a->jobs) {
        if (queue_load(&in->q, a->jobs, &e) != EF_OK ||
            (a->curves && queue_resolve(&in->q, &in->cs, &e) != EF_OK) ||
            (a->cluster && plan_check_placements(&in->c, &in->q, &e) !=
                               EF_OK))
            return cli_fail(&e);
    }
    return 0;
}

/* --json without --plan: what the inputs hold, into w's open summary,
 * printed. Returns cli_json_print's. */
static int inputs_json(const validate_args *a, const validate_inputs *in,
                       jw *w)
{
    if (a->cluster) {
        jw_obj(w, "cluster", NULL);
        jw_str(w, "name", in->c.name);
        jw_int(w, "nodes", in->c.nodes);
        jw_int(w, "gpus_per_node", in->c.gpus_per_node);
        jw_int(w, "gpus", in->c.total_gpus);
        jw_end(w);
    }
    if (a->curves) {
        int rows = 0; /* batch sizes over all models */
        for (int i = 0; i < in->cs.nmodels; i++)
            rows += in->cs.models[i].nrows;
        jw_obj(w, "curves", NULL);
        jw_str(w, "dir", in->cs.dir);
        jw_int(w, "models", in->cs.nmodels);
        jw_int(w, "batch_sizes", rows);
        jw_end(w);
    }
    if (a->jobs)
        jobs_json(w, &in->q);
    jw_end(w);
    return cli_json_print(w);
}

/* Without --plan: read and check the inputs given, and say what they
 * hold (the text, or with --json w's summary; w freed). The exit code. */
static int validate_inputs_run(const validate_args *a, jw *w)
{
    validate_inputs in; /* the inputs read */
    memset(&in.cs, 0, sizeof in.cs);
    memset(&in.q, 0, sizeof in.q);
    in.cap = 1 << 20;
    int rc = inputs_load(a, &in);
    if (rc == 0 && cli_cf.json) {
        rc = inputs_json(a, &in, w);
    } else if (rc == 0) {
        if (a->cluster)
            printf("cluster  %s: %d node%s x %d GPUs = %d GPUs\n",
                   in.c.name, in.c.nodes, in.c.nodes == 1 ? "" : "s",
                   in.c.gpus_per_node, in.c.total_gpus);
        if (a->curves)
            print_curves(&in.cs, in.cap);
        if (a->jobs)
            print_jobs(&in.q, in.cap, a->curves != NULL);
        printf("ok: inputs are valid\n");
    }
    jw_free(w);
    queue_free(&in.q);
    curve_set_free(&in.cs);
    return rc;
}

int cmd_validate(int argc, char **argv)
{
    validate_args a;
    int rc = validate_parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    jw w; /* --json: the summary */
    jw_init(&w, 1);
    jw_obj(&w, NULL, NULL);
    jw_str(&w, "command", "validate");
    if (a.plan)
        return validate_plan_file(&a, &w);
    jw_bool(&w, "ok", 1);
    return validate_inputs_run(&a, &w);
}
