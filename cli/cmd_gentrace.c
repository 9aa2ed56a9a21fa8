/* cmd_gentrace.c: "efplan gen-trace": write a synthetic trace CSV. */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "model/curve.h"
#include "simulator/gen.h"

void help_gentrace(void)
{
    printf(
        "Usage: efplan gen-trace --jobs N --mean-interarrival SECONDS\n"
        "                        --deadline-factor LO HI --seed K\n"
        "                        [--best-effort P] [--duration-scale F]\n"
        "                        [--elastic-batch P]\n"
        "                        [--curves DIR|A100] [--out FILE]\n"
        "\n"
        "Write a synthetic job trace (CSV, the artifact's columns) with the\n"
        "ElasticFlow generator's distributions: requested GPUs 1/2/4/8/16\n"
        "with p .83/.03/.03/.10/.01, 14 (model, batch) templates, durations\n"
        "60*10^U(1,2.5) s (p .8) or 60*10^U(2.5,4) s (p .2), exponential\n"
        "inter-arrival gaps, deadline = submit + U(LO,HI) * duration.\n"
        "The same seed always gives the same bytes.\n"
        "\n"
        "  --jobs N                  number of jobs (1 to 10000000)\n"
        "  --mean-interarrival S     mean gap between arrivals, seconds\n"
        "  --deadline-factor LO HI   deadline factor range, 0 < LO <= HI\n"
        "  --seed K                  random seed (0 to 2^63-1)\n"
        "  --best-effort P           share of jobs without deadline, 0..1\n"
        "                            (default 0)\n"
        "  --duration-scale F        multiply every duration by F (default 1)\n"
        "  --elastic-batch P         share of jobs, 0..1, that accept every\n"
        "                            batch size of their model's templates\n"
        "                            within 2x of the drawn one (a batch_sizes\n"
        "                            column, e.g. 64;128;256; default: none)\n"
        "  --curves DIR              throughputs for iterations (default A100)\n"
        "  --out FILE                write there (default, and -: standard\n"
        "                            output)\n"
        "\n"
        "Exit codes: 0 written, 2 usage error, 3 invalid input, 5 write error.\n");
    cli_help_shared(0);
}

static int parse_pos(const char *s, double lo, double hi, double *out)
{
    return ef_parse_double(s, out) == EF_NUM_OK && *out >= lo && *out <= hi;
}

int cmd_gentrace(int argc, char **argv)
{
    static const struct option opts[] = {
        {"jobs", required_argument, NULL, 'j'},
        {"mean-interarrival", required_argument, NULL, 'm'},
        {"deadline-factor", required_argument, NULL, 'd'},
        {"seed", required_argument, NULL, 's'},
        {"best-effort", required_argument, NULL, 'b'},
        {"duration-scale", required_argument, NULL, 'D'},
        {"elastic-batch", required_argument, NULL, 'E'},
        {"curves", required_argument, NULL, 'u'},
        {"out", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    gen_opts go;
    gen_opts_default(&go);
    const char *curves_arg = "A100", *out_path = NULL;
    int have_jobs = 0, have_gap = 0, have_ddl = 0, have_seed = 0, o;
    opterr = 0;
    optind = 1;
    while ((o = cli_getopt("gen-trace", argc, argv, opts, 0, NULL)) != -1) {
        int64_t v;
        double x;
        switch (o) {
        case 'j':
            if (ef_parse_i64(optarg, 1, 10000000, &v) != EF_NUM_OK)
                return cli_usage_error("gen-trace", "--jobs: \"%s\" is not a "
                                       "count from 1 to 10000000", optarg);
            go.jobs = (int)v;
            have_jobs = 1;
            break;
        case 'm':
            if (!parse_pos(optarg, 1e-3, 1e9, &x))
                return cli_usage_error("gen-trace", "--mean-interarrival: "
                                       "\"%s\" is not a number of seconds "
                                       "from 0.001 to 1e9", optarg);
            go.mean_gap = x;
            have_gap = 1;
            break;
        case 'd':
            if (!parse_pos(optarg, 1e-6, 1e6, &go.ddl_lo) || optind >= argc ||
                !parse_pos(argv[optind], go.ddl_lo, 1e6, &go.ddl_hi))
                return cli_usage_error("gen-trace", "--deadline-factor needs "
                                       "two numbers LO HI with 0 < LO <= HI");
            optind++;
            have_ddl = 1;
            break;
        case 's':
            if (ef_parse_i64(optarg, 0, INT64_MAX, &v) != EF_NUM_OK)
                return cli_usage_error("gen-trace", "--seed: \"%s\" is not a "
                                       "non-negative integer", optarg);
            go.seed = (uint64_t)v;
            have_seed = 1;
            break;
        case 'b':
            if (!parse_pos(optarg, 0, 1, &go.best_effort))
                return cli_usage_error("gen-trace", "--best-effort: \"%s\" is "
                                       "not a share from 0 to 1", optarg);
            break;
        case 'D':
            if (!parse_pos(optarg, 1e-6, 1e6, &go.duration_scale))
                return cli_usage_error("gen-trace", "--duration-scale: \"%s\" "
                                       "is not a positive factor", optarg);
            break;
        case 'E':
            if (!parse_pos(optarg, 0, 1, &go.elastic_batch))
                return cli_usage_error("gen-trace", "--elastic-batch: \"%s\" "
                                       "is not a share from 0 to 1", optarg);
            break;
        case 'u': curves_arg = optarg; break;
        case 'o': out_path = optarg; break;
        case 'h': help_gentrace(); return 0;
        default:
            return cli_option_error("gen-trace", o, argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("gen-trace", "unexpected argument \"%s\"",
                               argv[optind]);
    if (!have_jobs || !have_gap || !have_ddl || !have_seed)
        return cli_usage_error("gen-trace", "--jobs, --mean-interarrival, "
                               "--deadline-factor and --seed are required");
    ef_err e = {0};
    curve_set cs = {0};
    ef_buf b = {0};
    int rc = 0;
    if (curve_set_load_arg(&cs, curves_arg, &e) != EF_OK ||
        gen_trace(&go, &cs, &b, &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    if (cli_write_out(out_path ? out_path : "-", b.s, b.n, &e) != EF_OK)
        rc = cli_fail(&e);
out:
    free(b.s);
    curve_set_free(&cs);
    return rc;
}
