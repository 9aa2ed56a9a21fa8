/* efplan.c: the efplan command: dispatch to subcommands, help, errors. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/path.h"
#include "common/util.h"
#include "executor/exec.h"
#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "planner/offline.h"
#include "planner/planio.h"
#include "solver/ilp.h"

static const cli_command commands[] = {
    {"apply", "run a plan on a cluster, slot by slot (local, slurm, dry-run)",
     cmd_apply, help_apply, NULL},
    {"cancel", "cancel a job on efplan serve", cmd_cancel, help_cancel, NULL},
    {"compare", "simulate traces x policies in parallel; one table",
     cmd_compare, help_compare, NULL},
    {"explain", "why a job got the GPUs it got: reserved, surplus, who "
     "holds the cluster", cmd_explain, help_explain, NULL},
    {"gen-trace", "write a synthetic job trace (the artifact's distributions)",
     cmd_gentrace, help_gentrace, NULL},
    {"jobs", "list jobs on efplan serve: state, decision, GPUs, deadlines",
     cmd_jobs, help_jobs, NULL},
    {"nightly", "one run per night: merge the queue, plan keeping promises, "
     "apply until the next night", cmd_nightly, help_nightly, NULL},
    {"node", "list, drain or undrain the nodes of efplan serve's cluster",
     cmd_node, help_node, "list drain undrain"},
    {"oracle", "compare the greedy plan with the exact ILP optimum (GLPK)",
     cmd_oracle, help_oracle, NULL},
    {"plan", "plan a job queue: admission, GPU shares, placement per slot",
     cmd_plan, help_plan, NULL},
    {"profile", "measure throughput curves on GPUs, or fit the model to a "
     "table", cmd_profile, help_profile, NULL},
    {"replan", "re-plan efplan serve's queue now (an operator's token)",
     cmd_replan, help_replan, NULL},
    {"serve", "run the queue service: an HTTP API users submit to (SQLite "
     "store)", cmd_serve, help_serve, NULL},
    {"show", "show one job on efplan serve: progress, placement, history",
     cmd_show, help_show, NULL},
    {"simulate", "replay a trace through a policy; deadlines met, metrics",
     cmd_simulate, help_simulate, NULL},
    {"submit", "submit one job to a plan file or to efplan serve",
     cmd_submit, help_submit, NULL},
    {"token", "add, list, limit or revoke the service's tokens (--db FILE)",
     cmd_token, help_token, "add limits list revoke"},
    {"validate", "check input files and print what was read", cmd_validate,
     help_validate, NULL},
};
#define NCOMMANDS ((int)(sizeof commands / sizeof commands[0]))

const cli_command *cli_commands(int *n)
{
    *n = NCOMMANDS;
    return commands;
}

int cli_fail(const ef_err *e)
{
    fprintf(stderr, "efplan: error: %s\n", e->msg);
    switch (e->kind) {
    case EF_E_USAGE: return EXIT_USAGE;
    case EF_E_INPUT: return EXIT_INPUT;
    case EF_E_INFEASIBLE: return EXIT_INFEASIBLE;
    default: return EXIT_INTERNAL;
    }
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "efplan: error: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'efplan %s%s--help'.\n", cmd ? cmd : "",
            cmd ? " " : "");
    return EXIT_USAGE;
}

int cli_load_inputs(const char *cluster_arg, const char *curves_arg,
                    const char *jobs_path, cluster *c, curve_set *cs,
                    job_queue *q, ef_err *e)
{
    if (cluster_from_arg(c, cluster_arg, e) != EF_OK ||
        curve_set_load_arg(cs, curves_arg, e) != EF_OK ||
        queue_load(q, jobs_path, e) != EF_OK ||
        queue_resolve(q, cs, e) != EF_OK)
        return EF_ERR;
    return EF_OK;
}

int cli_write_out(const char *path, const char *data, size_t len, ef_err *e)
{
    if (strcmp(path, "-") != 0)
        return ef_write_file_atomic(path, data, len, e);
    if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0)
        return ef_fail(e, EF_E_INTERNAL, "standard output: write failed: %s",
                       strerror(errno));
    return EF_OK;
}

int cli_stdout_owner(const char *cmd, int n, const char *const *names,
                     const char *const *paths, int *taken)
{
    const char *first = cli_cf.json ? "--json" : NULL; /* stdout's owner */
    for (int k = 0; k < n; k++) {
        if (!paths[k] || strcmp(paths[k], "-") != 0)
            continue;
        if (first)
            return cli_usage_error(cmd, "%s and %s - both write standard "
                                   "output: give one of them a file",
                                   first, names[k]);
        first = names[k];
    }
    *taken = first != NULL;
    return 0;
}

int cli_parse_slot(const char *cmd, const char *arg, int *slot)
{
    int64_t v;
    if (ef_parse_i64(arg, 1, 86400, &v) != EF_NUM_OK)
        return cli_usage_error(cmd, "--slot: \"%s\" is not a number of "
                               "seconds from 1 to 86400", arg);
    *slot = (int)v;
    return 0;
}

int cli_parse_plan_version(const char *cmd, const char *arg, int *v)
{
    if (strcmp(arg, "1") == 0)
        *v = PLAN_V1;
    else if (strcmp(arg, "2") == 0)
        *v = PLAN_V2;
    else
        return cli_usage_error(cmd, "--plan-version: \"%s\" is not a plan "
                               "file version (1: a list of slots; 2: runs, "
                               "the default)", arg);
    return 0;
}

/* The --sbatch-arg words of the command line (cli_slurm_option). */
static const char **slurm_args;

int cli_slurm_option(const char *cmd, int o, const char *arg,
                     struct exec_slurm_opts *so)
{
    static const char *const names[] = {"partition", "account", "qos",
                                        "sbatch-arg"};
    if (o < CLI_O_PARTITION || o > CLI_O_SBATCH_ARG)
        return -1;
    const char *name = names[o - CLI_O_PARTITION];
    if (o != CLI_O_SBATCH_ARG && (!arg[0] || strpbrk(arg, " \t\r\n")))
        return cli_usage_error(cmd, "--%s: \"%s\" (expected a Slurm name: "
                               "not empty, no blanks)", name, arg);
    switch (o) {
    case CLI_O_PARTITION: so->partition = arg; break;
    case CLI_O_ACCOUNT: so->account = arg; break;
    case CLI_O_QOS: so->qos = arg; break;
    default: {
        ef_err e = {0};
        if (exec_slurm_check_arg(arg, &e) != EF_OK)
            return cli_usage_error(cmd, "%s", e.msg);
        /* file-scope: still reachable when a usage error returns */
        slurm_args = ef_realloc(slurm_args, (size_t)(so->nargs + 1) *
                                                sizeof *slurm_args);
        slurm_args[so->nargs++] = arg;
        so->args = slurm_args;
    }
    }
    return 0;
}

int cli_slurm_only(const char *cmd, const struct exec_slurm_opts *so,
                   const char *backend, int dry)
{
    if (!exec_slurm_opts_any(so) ||
        (backend && (strcmp(backend, "slurm") == 0 ||
                     (dry && strcmp(backend, "dry-run") == 0))))
        return 0;
    return cli_usage_error(cmd, "--partition, --account, --qos and "
                           "--sbatch-arg go with --backend slurm%s (given: "
                           "%s)", dry ? " or dry-run" : "",
                           backend ? backend : "no --backend");
}

void cli_slurm_free(struct exec_slurm_opts *so)
{
    free(slurm_args);
    slurm_args = NULL;
    so->args = NULL;
    so->nargs = 0;
}

void cli_offline_default(cli_offline *of)
{
    of->plans = OFF_DEFAULT_PLANS;
    of->exact = ILP_OFFLINE_BINARIES;
}

int cli_offline_option(const char *cmd, int o, const char *arg,
                       cli_offline *of)
{
    int64_t v; /* the count given */
    switch (o) {
    case CLI_O_OFFLINE_PLANS:
        if (ef_parse_i64(arg, 1, 1000000, &v) != EF_NUM_OK)
            return cli_usage_error(cmd, "--offline-plans: \"%s\" is not a "
                                   "count from 1 to 1e6", arg);
        of->plans = (int)v;
        return 0;
    case CLI_O_OFFLINE_EXACT:
        if (ef_parse_i64(arg, 0, 100000000, &v) != EF_NUM_OK)
            return cli_usage_error(cmd, "--offline-exact: \"%s\" is not a "
                                   "count from 0 to 1e8", arg);
        of->exact = (long)v;
        return 0;
    default:
        return -1;
    }
}

static void help_main(FILE *out)
{
    fprintf(out,
        "efplan %s: " CLI_TAGLINE "\n"
        "\n"
        "Usage: efplan COMMAND [OPTIONS]\n"
        "       efplan help COMMAND\n"
        "\n"
        "Commands:\n", EFPLAN_VERSION);
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
        "\n"
        "Every command: -q/--quiet, -v/--verbose, --time-zone utc|local|epoch,\n"
        "--json (the summary as JSON, where the command has one); '-' is\n"
        "standard input or output; times read may be now+8h.\n"
        "\n"
        "Exit codes: 0 ok, 2 usage error, 3 invalid input, 4 infeasible,\n"
        "5 internal error, 6 profile built without CUDA, 7 no GPU,\n"
        "8 the server refused the token, 9 apply: an admitted job is not\n"
        "done by its deadline, 10 the server's per-user limit (HTTP 429).\n"
        "Each command's help says what its codes\n"
        "mean there.\n");
    ef_data_from from;
    const char *data = ef_datadir_found(&from);
    fprintf(out, "Bundled inputs: %s (%s)\n", data,
            from == EF_DATA_ENV ? "$EFPLAN_DATA"
            : from == EF_DATA_BESIDE ? "found beside the executable"
                                     : "built in");
}

static const cli_command *find(const char *name)
{
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static int unknown(const char *name)
{
    const char *names[NCOMMANDS];
    for (int i = 0; i < NCOMMANDS; i++)
        names[i] = commands[i].name;
    char q[128];
    const char *s = ef_suggest(name, names, NCOMMANDS);
    if (s)
        return cli_usage_error(NULL, "unknown command \"%s\" (did you mean "
                               "\"%s\"?)", ef_quote(name, q, sizeof q), s);
    return cli_usage_error(NULL, "unknown command \"%s\"",
                           ef_quote(name, q, sizeof q));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        help_main(stderr);
        return EXIT_USAGE;
    }
    const char *c = argv[1];
    if (strcmp(c, "--help") == 0 || strcmp(c, "-h") == 0) {
        help_main(stdout);
        return 0;
    }
    if (strcmp(c, "--man") == 0 || strcmp(c, "--bash-completion") == 0)
        return cli_generate(c + 2); /* build time: cli/manpage.c */
    if (strcmp(c, "--version") == 0) {
        printf("efplan %s\n", EFPLAN_VERSION);
        return 0;
    }
    if (strcmp(c, "help") == 0) {
        if (argc < 3) {
            help_main(stdout);
            return 0;
        }
        const cli_command *cmd = find(argv[2]);
        if (!cmd)
            return unknown(argv[2]);
        cmd->help();
        return 0;
    }
    const cli_command *cmd = find(c);
    if (!cmd)
        return unknown(c);
    return cmd->run(argc - 1, argv + 1);
}
