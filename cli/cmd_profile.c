/* cmd_profile.c: "efplan profile": measure a data-parallel step on this
 * machine's GPUs, fit the step-time model, write the curve; or fit the
 * model to a published table and compare (--fit-only). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "common/util.h"
#include "model/curve.h"
#include "profiler/prof.h"
#include "profiler/prof_gpu.h"
#include "profiler/prof_measure.h"

#define MAX_BATCHES 32

void help_profile(void)
{
    printf(
        "Usage: efplan profile --model NAME | --params P --flops-per-sample F\n"
        "                      --batch B [--batch B ...] [--gpus K]\n"
        "                      [--repeats R] [--warmup W] [--steps N]\n"
        "                      [--gpus-per-node G] [--inter-node-gbps X]\n"
        "                      [--intra-node-gbps X] [--latency-us X]\n"
        "                      [--latency-model tree|ring]\n"
        "                      [--max-gpus N] [--max-fit-error E]\n"
        "                      [--out DIR|FILE.csv|FILE.json] [--json FILE]\n"
        "       efplan profile --fit-only --curves DIR|A100|T4 --model NAME\n"
        "                      [--fit-gpus N] [model options, --out, --json]\n"
        "       efplan profile --probe\n"
        "\n"
        "Measure a synthetic data-parallel training step on 1, 2, 4, ... GPUs\n"
        "of this machine (a kernel doing 3 x the model's forward FLOPs per\n"
        "sample x local batch on each GPU, then an NCCL all-reduce of the\n"
        "gradients), fit time(k) = compute(B/k) + ring all-reduce(bytes, k)\n"
        "to the measured cells and fill the other columns up to --max-gpus.\n"
        "--fit-only fits the same model to a published table instead and\n"
        "prints modelled against published cells.\n"
        "\n"
        "  --model NAME          a preset (bert, deepspeech2, gpt2,\n"
        "                        inception3, resnet50, resnet50_cifar10,\n"
        "                        vgg16) or any name with --params and\n"
        "                        --flops-per-sample\n"
        "  --params P            trainable parameters (gradient: P x 4 B)\n"
        "  --flops-per-sample F  forward FLOPs per sample\n"
        "  --bytes-per-param N   gradient bytes per parameter (default 4)\n"
        "  --batch B             a global batch size (repeatable)\n"
        "  --gpus K              measure up to K GPUs (default: all visible)\n"
        "  --repeats R           timed repeats per cell (default 5)\n"
        "  --warmup W            warm-up steps per cell (default 3)\n"
        "  --steps N             steps per timed repeat (default 10)\n"
        "  --gpus-per-node G     GPUs per node for placement (default 8)\n"
        "  --inter-node-gbps X   inter-node bus bandwidth, Gbit/s (needed for\n"
        "                        columns beyond one node unless measured)\n"
        "  --intra-node-gbps X   intra-node bandwidth if no cell measures it\n"
        "  --latency-us X        all-reduce latency per step if no cells\n"
        "                        measure it (default 0)\n"
        "  --latency-model M     tree: log2(k) latency steps (default); ring:\n"
        "                        2(k-1) steps\n"
        "  --max-gpus N          last column of the curve (default 64)\n"
        "  --max-fit-error E     refuse modelled cells when the fit is off by\n"
        "                        more than E (relative) on any measured cell\n"
        "                        (default 0.10)\n"
        "  --out PATH            curve: a directory (PATH/MODEL.csv), .csv or\n"
        "                        .json file, in the format the planner reads\n"
        "  --json FILE           provenance: GPU, versions, repeats, spread,\n"
        "                        fit, and for each cell measured or modelled\n"
        "  --fit-only            fit to --curves instead of measuring\n"
        "  --curves DIR          the table for --fit-only\n"
        "  --fit-gpus N          --fit-only: fit cells with <= N GPUs and\n"
        "                        predict the others (default: all cells)\n"
        "  --probe               print the CUDA runtime, driver, NCCL, GPUs\n"
        "\n"
        "Exit codes: 0 ok (modelled cells may be refused: see the warning),\n"
        "2 usage error, 3 invalid input, 5 internal or GPU error,\n"
        "6 built without CUDA, 7 no CUDA driver or no GPU.\n");
    cli_help_shared(0);
}

typedef struct popts {
    const char *model, *out, *json, *curves;
    double params, flops, bytes_per_param;
    long batch[MAX_BATCHES];
    int nbatch;
    int gpus, repeats, warmup, steps, gpus_per_node, max_gpus, fit_gpus;
    double inter_gbps, intra_gbps, latency_us, max_err;
    int fit_only, probe;
    prof_latency latency;
} popts;

static int gpu_exit(prof_gpu_status st, const ef_err *e)
{
    fprintf(stderr, "efplan: error: %s\n", e->msg);
    switch (st) {
    case PROF_GPU_NOT_BUILT: return EXIT_NO_CUDA;
    case PROF_GPU_NO_DEVICE: return EXIT_NO_GPU;
    default: return EXIT_INTERNAL;
    }
}

static int probe(void)
{
    prof_gpu_env env;
    ef_err e = {0};
    prof_gpu_status st = prof_gpu_probe(&env, &e);
    if (st == PROF_GPU_NOT_BUILT)
        return gpu_exit(st, &e);
    printf("CUDA runtime %d, NCCL %d.%d.%d, driver %d\n", env.runtime_version,
           env.nccl_version / 10000, env.nccl_version / 100 % 100,
           env.nccl_version % 100, env.driver_version);
    if (st != PROF_GPU_OK)
        return gpu_exit(st, &e);
    printf("%d GPU%s visible; GPU 0: %s, %.1f GiB\n", env.ndevices,
           env.ndevices == 1 ? "" : "s", env.name,
           (double)env.memory / (1024.0 * 1024 * 1024));
    return 0;
}

static int parse_pos(const char *opt, const char *s, double *out)
{
    if (ef_parse_double(s, out) != EF_NUM_OK || !(*out > 0))
        return cli_usage_error("profile", "%s: \"%s\" is not a positive "
                               "number", opt, s);
    return 0;
}

static int parse_int(const char *opt, const char *s, int64_t lo, int64_t hi,
                     int *out)
{
    int64_t v;
    if (ef_parse_i64(s, lo, hi, &v) != EF_NUM_OK)
        return cli_usage_error("profile", "%s: \"%s\" is not an integer from "
                               "%lld to %lld", opt, s, (long long)lo,
                               (long long)hi);
    *out = (int)v;
    return 0;
}

static int is_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* A model name usable as a file stem. */
static int good_name(const char *s)
{
    if (!s[0] || strlen(s) > 100 || s[0] == '.')
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.'))
            return 0;
    return 1;
}

/* The directory part of 'path' resolved, or NULL (malloc'd). */
static char *real_dir_of(const char *path)
{
    char *d = ef_strdup(path), *slash = strrchr(d, '/');
    if (!slash) {
        free(d);
        d = ef_strdup(".");
    } else if (slash == d) {
        slash[1] = '\0';
    } else {
        *slash = '\0';
    }
    char *r = realpath(d, NULL);
    free(d);
    return r;
}

/* Write the curve and the provenance as asked. */
static int write_outputs(const popts *o, const prof_curve *c,
                         const prof_model *m, const prof_fit_info *info,
                         const prof_provenance *pv)
{
    ef_err e = {0};
    char *curve_path = NULL;
    int rc = 0;
    if (o->out) {
        if (is_suffix(o->out, ".csv") || is_suffix(o->out, ".json")) {
            curve_path = ef_strdup(o->out);
        } else {
            if (mkdir(o->out, 0777) != 0 && errno != EEXIST) {
                ef_fail(&e, EF_E_INTERNAL, "%s: cannot create the directory: "
                        "%s", o->out, strerror(errno));
                return cli_fail(&e);
            }
            size_t n = strlen(o->out) + strlen(o->model) + 8;
            curve_path = ef_malloc(n);
            snprintf(curve_path, n, "%s/%s.csv", o->out, o->model);
        }
        if (is_suffix(curve_path, ".json"))
            rc = prof_write_curve_json(c, o->model, curve_path, &e);
        else
            rc = prof_write_csv(c, curve_path, &e);
        if (rc != EF_OK) {
            free(curve_path);
            return cli_fail(&e);
        }
        printf("wrote %s\n", curve_path);
    }
    if (o->json) {
        if (prof_write_json(c, m, info, pv, o->json, &e) != EF_OK) {
            free(curve_path);
            return cli_fail(&e);
        }
        printf("wrote %s\n", o->json);
    }
    free(curve_path);
    return 0;
}

static void print_params(const prof_model *m, double flops)
{
    const double *p = m->p;
    printf("model    compute %.3f ms/sample (%.1f TFLOP/s at 3 x forward), "
           "step overhead %.3f ms\n", 1e3 * p[PROF_P_SAMPLE],
           p[PROF_P_SAMPLE] > 0 ? 3 * flops / p[PROF_P_SAMPLE] / 1e12 : 0,
           1e3 * p[PROF_P_STEP]);
}

/* Bandwidths and latency ("?" when no cell determined it and none was
 * given), then the fit error. */
static void print_bw(const prof_model *m, const prof_fit_info *info)
{
    char a[32] = "?", b[32] = "?";
    if (!info->missing[PROF_P_INTRA] && m->p[PROF_P_INTRA] > 0)
        snprintf(a, sizeof a, "%.0f", 8 / m->p[PROF_P_INTRA] / 1e9);
    else if (!info->missing[PROF_P_INTRA])
        snprintf(a, sizeof a, "unlimited");
    if (!info->missing[PROF_P_INTER] && m->p[PROF_P_INTER] > 0)
        snprintf(b, sizeof b, "%.0f", 8 / m->p[PROF_P_INTER] / 1e9);
    else if (!info->missing[PROF_P_INTER])
        snprintf(b, sizeof b, "unlimited");
    printf("         bus bandwidth intra-node %s Gbit/s, inter-node %s "
           "Gbit/s; latency %.1f us x %s\n", a, b, 1e6 * m->p[PROF_P_HOP],
           m->latency == PROF_LAT_RING ? "2(k-1)" : "log2(k)");
    printf("fit      %d cells, median error %.1f%%, worst %.1f%%\n",
           info->nobs, 100 * info->median_rel_err, 100 * info->max_rel_err);
}

static void print_curve(const prof_curve *c)
{
    printf("%8s", "batch");
    for (int l = 0; l < c->nlevels; l++)
        printf(" %10d", 1 << l);
    printf("   (it/s; * = modelled)\n");
    for (int r = 0; r < c->nrows; r++) {
        printf("%8ld", c->batch[r]);
        for (int l = 0; l < c->nlevels; l++) {
            prof_src s = c->src[r][l];
            if (s == PROF_SRC_MEASURED || s == PROF_SRC_MODELLED)
                printf(" %9.3f%c", c->cell[r][l],
                       s == PROF_SRC_MODELLED ? '*' : ' ');
            else
                printf(" %10s", s == PROF_SRC_REFUSED ? "refused" : "-");
        }
        printf("\n");
    }
}

/* Set up the model's figures: a preset, or --params/--flops-per-sample. */
static int model_figures(popts *o, int *preset, const char **src)
{
    const prof_preset *p = prof_preset_find(o->model);
    *preset = 0;
    *src = NULL;
    if (p) {
        if (o->params == 0)
            o->params = p->params;
        if (o->flops == 0)
            o->flops = p->flops_per_sample;
        *preset = o->params == p->params && o->flops == p->flops_per_sample;
        *src = p->source;
    }
    if (o->params == 0 || o->flops == 0) {
        int n;
        const prof_preset *all = prof_presets(&n);
        const char *names[16];
        for (int i = 0; i < n && i < 16; i++)
            names[i] = all[i].name;
        const char *s = ef_suggest(o->model, names, n < 16 ? n : 16);
        char q[128];
        if (s)
            return cli_usage_error("profile", "--model \"%s\" is not a preset "
                                   "(did you mean \"%s\"?); give --params and "
                                   "--flops-per-sample for another model",
                                   ef_quote(o->model, q, sizeof q), s);
        return cli_usage_error("profile", "--model \"%s\" is not a preset: "
                               "give --params and --flops-per-sample",
                               ef_quote(o->model, q, sizeof q));
    }
    return 0;
}

static void model_init(prof_model *m, int given[PROF_NPARAMS], const popts *o)
{
    prof_model_init(m, given, o->params * o->bytes_per_param,
                    o->gpus_per_node, o->latency, o->intra_gbps,
                    o->inter_gbps, o->latency_us);
}

static void warn_refused(const prof_curve *c)
{
    int n = prof_curve_refused(c);
    if (n)
        fprintf(stderr, "efplan: warning: %d modelled cell%s refused (left "
                "empty): %s\n", n, n == 1 ? "" : "s", c->reason);
}

/* --fit-only: fit to a table and compare. */
static int fit_only(popts *o)
{
    ef_err e = {0};
    curve_set cs = {0};
    int rc = 0, preset;
    const char *src;
    prof_table t = {0};
    prof_table_errs x = {0};
    prof_curve c = {0};
    if ((rc = model_figures(o, &preset, &src)) != 0)
        return rc;
    if (curve_set_load_arg(&cs, o->curves, &e) != EF_OK)
        return cli_fail(&e);
    const curve_model *cm = curve_find_model(&cs, o->model);
    if (!cm) {
        char list[512], q[128];
        ef_fail(&e, EF_E_INPUT, "%s: no curve for model \"%s\" (models: %s)",
                cs.dir, ef_quote(o->model, q, sizeof q),
                curve_list_models(&cs, list, sizeof list));
        rc = cli_fail(&e);
        goto out;
    }
    prof_table_of(&t, cm, o->fit_gpus);
    prof_model m;
    int given[PROF_NPARAMS];
    prof_fit_info info;
    model_init(&m, given, o);
    if (prof_fit(&m, given, t.fit, t.nfit, &info, &e) != EF_OK) {
        ef_prefix(&e, "%s: ", cm->path);
        rc = cli_fail(&e);
        goto out;
    }
    prof_fill(&c, &m, &info, o->max_err, t.batch, t.nbatch,
              o->max_gpus ? o->max_gpus : t.widest, t.fit, NULL, t.nfit);
    printf("profile  %s fitted to %s (%d cells with <= %d GPUs), %d GPUs "
           "per node\n", o->model, cm->path, t.nfit,
           o->fit_gpus == INT_MAX ? t.widest : o->fit_gpus, o->gpus_per_node);
    print_params(&m, o->flops);
    print_bw(&m, &info);
    /* modelled against published, every published cell */
    prof_table_errors(&t, &m, &x);
    printf("%8s %6s %12s %12s %8s  %s\n", "batch", "gpus", "published",
           "modelled", "error", "cell");
    for (int k = 0; k < t.ncells; k++)
        printf("%8ld %6d %12.3f %12.3f %7.1f%%  %s\n", t.cells[k].batch,
               t.cells[k].gpus, t.cells[k].tput, x.modelled[k],
               100 * x.rel_err[k], t.fitted[k] ? "fitted" : "predicted");
    if (x.fitted.n)
        printf("in-sample  %d cells: median error %.1f%%, worst %.1f%%\n",
               x.fitted.n, 100 * x.fitted.median, 100 * x.fitted.worst);
    if (x.predicted.n)
        printf("predicted  %d cells: median error %.1f%%, worst %.1f%%\n",
               x.predicted.n, 100 * x.predicted.median,
               100 * x.predicted.worst);
    printf("fill     %s\n", c.accepted ? "accepted" : "refused");
    print_curve(&c);
    warn_refused(&c);
    char origin[4200];
    snprintf(origin, sizeof origin, "fit to %s", cm->path);
    prof_provenance pv = {o->model, preset, o->params, o->flops,
                          o->bytes_per_param, origin, NULL, 0, 0, 0, 0,
                          0, 0, 0};
    rc = write_outputs(o, &c, &m, &info, &pv);
out:
    prof_table_errs_free(&x);
    prof_curve_free(&c);
    prof_table_free(&t);
    curve_set_free(&cs);
    return rc;
}

static void progress(void *arg, long batch, int gpus, double tput,
                     double spread)
{
    (void)arg;
    printf("measured batch %ld on %d GPU%s: %.3f it/s (spread %.1f%%)\n",
           batch, gpus, gpus == 1 ? "" : "s", tput, 100 * spread);
    fflush(stdout);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Measure on this machine's GPUs, fit, fill, write. */
static int measure(popts *o)
{
    ef_err e = {0};
    int rc, preset;
    const char *src;
    if ((rc = model_figures(o, &preset, &src)) != 0)
        return rc;
    if (o->nbatch == 0)
        return cli_usage_error("profile", "--batch is required (one or more "
                               "global batch sizes)");
    qsort(o->batch, (size_t)o->nbatch, sizeof *o->batch, cmp_long);
    for (int i = 1; i < o->nbatch; i++)
        if (o->batch[i] == o->batch[i - 1])
            return cli_usage_error("profile", "--batch %ld given twice",
                                   o->batch[i]);
    prof_measure_opts mo = {o->flops, o->params * o->bytes_per_param,
                            o->batch, o->nbatch, o->gpus, o->repeats,
                            o->warmup, o->steps, progress, NULL};
    prof_measured ms;
    prof_gpu_status st = prof_measure(&mo, &ms, &e);
    if (st != PROF_GPU_OK) {
        prof_measured_free(&ms);
        return gpu_exit(st, &e);
    }
    prof_model m;
    int given[PROF_NPARAMS];
    prof_fit_info info;
    prof_curve c = {0};
    model_init(&m, given, o);
    if (prof_fit(&m, given, ms.obs, ms.n, &info, &e) != EF_OK) {
        prof_measured_free(&ms);
        return cli_fail(&e);
    }
    prof_fill(&c, &m, &info, o->max_err, o->batch, o->nbatch,
              o->max_gpus ? o->max_gpus : 64, ms.obs, ms.spread, ms.n);
    printf("profile  %s on %d x %s (driver %d, CUDA runtime %d, NCCL "
           "%d.%d.%d), measured up to %d GPUs\n", o->model, ms.env.ndevices,
           ms.env.name, ms.env.driver_version, ms.env.runtime_version,
           ms.env.nccl_version / 10000, ms.env.nccl_version / 100 % 100,
           ms.env.nccl_version % 100, ms.max_gpus);
    print_params(&m, o->flops);
    print_bw(&m, &info);
    printf("fill     %s\n", c.accepted ? "accepted" : "refused");
    print_curve(&c);
    warn_refused(&c);
    prof_provenance pv = {o->model, preset, o->params, o->flops,
                          o->bytes_per_param, "measured", ms.env.name,
                          ms.env.driver_version, ms.env.runtime_version,
                          ms.env.nccl_version, ms.env.ndevices, o->repeats,
                          o->warmup, o->steps};
    rc = write_outputs(o, &c, &m, &info, &pv);
    prof_curve_free(&c);
    prof_measured_free(&ms);
    return rc;
}

int cmd_profile(int argc, char **argv)
{
    static const struct option opts[] = {
        {"model", required_argument, NULL, 'm'},
        {"params", required_argument, NULL, 'P'},
        {"flops-per-sample", required_argument, NULL, 'F'},
        {"bytes-per-param", required_argument, NULL, 'y'},
        {"batch", required_argument, NULL, 'b'},
        {"gpus", required_argument, NULL, 'g'},
        {"repeats", required_argument, NULL, 'r'},
        {"warmup", required_argument, NULL, 'w'},
        {"steps", required_argument, NULL, 's'},
        {"gpus-per-node", required_argument, NULL, 'G'},
        {"inter-node-gbps", required_argument, NULL, 'I'},
        {"intra-node-gbps", required_argument, NULL, 'i'},
        {"latency-us", required_argument, NULL, 'L'},
        {"latency-model", required_argument, NULL, 'A'},
        {"max-gpus", required_argument, NULL, 'M'},
        {"max-fit-error", required_argument, NULL, 'E'},
        {"out", required_argument, NULL, 'o'},
        {"json", required_argument, NULL, 'j'},
        {"fit-only", no_argument, NULL, 'f'},
        {"curves", required_argument, NULL, 'u'},
        {"fit-gpus", required_argument, NULL, 'k'},
        {"probe", no_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    popts o;
    memset(&o, 0, sizeof o);
    o.bytes_per_param = 4;
    o.gpus = 64;
    o.repeats = 5;
    o.warmup = 3;
    o.steps = 10;
    o.gpus_per_node = 8;
    o.fit_gpus = INT_MAX;
    o.latency_us = -1;
    o.max_err = 0.10;
    int c, rc = 0;
    int64_t v;
    double d;
    opterr = 0;
    optind = 1;
    while ((c = cli_getopt("profile", argc, argv, opts, 0, "batch")) != -1) {
        switch (c) {
        case 'm': o.model = optarg; break;
        case 'o': o.out = optarg; break;
        case 'j': o.json = optarg; break;
        case 'u': o.curves = optarg; break;
        case 'f': o.fit_only = 1; break;
        case 'p': o.probe = 1; break;
        case 'P': rc = parse_pos("--params", optarg, &o.params); break;
        case 'F': rc = parse_pos("--flops-per-sample", optarg, &o.flops); break;
        case 'y': rc = parse_pos("--bytes-per-param", optarg,
                                 &o.bytes_per_param); break;
        case 'I': rc = parse_pos("--inter-node-gbps", optarg, &o.inter_gbps);
                  break;
        case 'i': rc = parse_pos("--intra-node-gbps", optarg, &o.intra_gbps);
                  break;
        case 'E': rc = parse_pos("--max-fit-error", optarg, &o.max_err); break;
        case 'L':
            if (ef_parse_double(optarg, &d) != EF_NUM_OK || d < 0)
                return cli_usage_error("profile", "--latency-us: \"%s\" is "
                                       "not a number >= 0", optarg);
            o.latency_us = d;
            break;
        case 'A':
            if (strcmp(optarg, "tree") == 0)
                o.latency = PROF_LAT_TREE;
            else if (strcmp(optarg, "ring") == 0)
                o.latency = PROF_LAT_RING;
            else
                return cli_usage_error("profile", "--latency-model: \"%s\" "
                                       "(expected tree or ring)", optarg);
            break;
        case 'b':
            if (ef_parse_i64(optarg, 1, 1L << 30, &v) != EF_NUM_OK)
                return cli_usage_error("profile", "--batch: \"%s\" is not a "
                                       "batch size from 1 to 2^30", optarg);
            if (o.nbatch == MAX_BATCHES)
                return cli_usage_error("profile", "at most %d --batch values",
                                       MAX_BATCHES);
            o.batch[o.nbatch++] = (long)v;
            break;
        case 'g': rc = parse_int("--gpus", optarg, 1, 64, &o.gpus); break;
        case 'r': rc = parse_int("--repeats", optarg, 1, 1000, &o.repeats);
                  break;
        case 'w': rc = parse_int("--warmup", optarg, 0, 100000, &o.warmup);
                  break;
        case 's': rc = parse_int("--steps", optarg, 1, 100000, &o.steps);
                  break;
        case 'G': rc = parse_int("--gpus-per-node", optarg, 1, 1024,
                                 &o.gpus_per_node); break;
        case 'M': rc = parse_int("--max-gpus", optarg, 1,
                                 1 << (CURVE_MAX_LEVELS - 1), &o.max_gpus);
                  break;
        case 'k': rc = parse_int("--fit-gpus", optarg, 1, INT_MAX / 2,
                                 &o.fit_gpus); break;
        case 'h': help_profile(); return 0;
        default: return cli_option_error("profile", c, argv[optind - 1]);
        }
        if (rc)
            return rc;
    }
    if (optind < argc)
        return cli_usage_error("profile", "unexpected argument \"%s\"",
                               argv[optind]);
    if (o.probe)
        return probe();
    if (!ef_is_pow2(o.gpus_per_node))
        return cli_usage_error("profile", "--gpus-per-node: %d is not a power "
                               "of two", o.gpus_per_node);
    if (o.max_gpus && !ef_is_pow2(o.max_gpus))
        return cli_usage_error("profile", "--max-gpus: %d is not a power of "
                               "two", o.max_gpus);
    if (!o.model)
        return cli_usage_error("profile", "--model is required");
    if (!good_name(o.model))
        return cli_usage_error("profile", "--model: \"%s\" is not a model "
                               "name (letters, digits, _ - .)", o.model);
    if (o.json && (is_suffix(o.json, ".csv") ||
                   (o.out && strcmp(o.out, o.json) == 0)))
        return cli_usage_error("profile", "--json: \"%s\" would overwrite or "
                               "look like a curve file", o.json);
    if (o.json && o.out && is_suffix(o.json, ".json") &&
        !is_suffix(o.out, ".csv") && !is_suffix(o.out, ".json")) {
        /* the provenance must not land among the curves, where the
         * planner would read it as one */
        char *a = real_dir_of(o.json), *b = realpath(o.out, NULL);
        int same = a && b && strcmp(a, b) == 0;
        free(a);
        free(b);
        if (same)
            return cli_usage_error("profile", "--json: put the provenance "
                                   "outside the curve directory %s (the "
                                   "planner would read it as a curve)",
                                   o.out);
    }
    if (o.fit_only) {
        if (!o.curves)
            return cli_usage_error("profile", "--fit-only needs --curves");
        if (o.nbatch)
            return cli_usage_error("profile", "--fit-only takes the batch "
                                   "sizes from the table, not --batch");
        return fit_only(&o);
    }
    if (o.curves)
        return cli_usage_error("profile", "--curves goes with --fit-only");
    return measure(&o);
}
