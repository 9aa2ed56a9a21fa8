/*
 * cli.h: what the efplan subcommands share: exit codes, error printing,
 * and the command table. The CLI only parses options and prints; all
 * logic lives in the planner/, solver/ and executor/ libraries.
 */
#ifndef EF_CLI_H
#define EF_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"

/* What efplan is, in one line: --help and the man page's NAME. */
#define CLI_TAGLINE "deadline-aware planner for elastic GPU training clusters"

/* Exit codes (documented in README.md). */
#define EXIT_OK_ 0
#define EXIT_USAGE 2      /* bad command line */
#define EXIT_INPUT 3      /* an input is missing or invalid */
#define EXIT_INFEASIBLE 4 /* valid inputs, but no answer exists */
#define EXIT_INTERNAL 5   /* out of memory, write failure, a bug */
#define EXIT_AUTH 8       /* the server refused the token (HTTP 401, 403) */
#define EXIT_MISSED 9     /* apply: an admitted job is not done by its
                             deadline (a failed job's 4 comes first) */
#define EXIT_LIMIT 10     /* the server refused for a per-user limit (HTTP
                             429): retry after the time it says */

/* Print "efplan: error: <msg>" and return the exit code of e->kind. */
int cli_fail(const ef_err *e);

/* Print a usage error with a hint to run --help; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- option conventions (cli/opt.c; README "### Conventions") -------- */

/* The shared options: -q/--quiet (no progress, no notes; only results
 * and errors), -v/--verbose (more detail where a command has it),
 * --time-zone utc|local|epoch (how human outputs show times of a plan
 * on the wall clock), --json (with CLI_F_JSON: the summary as one JSON
 * object on standard output). A command whose own table names one of
 * them keeps its own meaning. */
enum { CLI_O_QUIET = 450, CLI_O_VERBOSE, CLI_O_ZONE, CLI_O_JSON,
       CLI_O_FAILED };
#define CLI_F_JSON 1u

#include "common/htime.h"
typedef struct cli_conf {
    int quiet, verbose, json;
    ef_ht_zone zone; /* --time-zone (default EF_HT_UTC) */
    int zone_given;
} cli_conf;

/* What the shared options of the command line under way set. */
extern cli_conf cli_cf;

/* The paragraph on the shared options, for a command's --help; with
 * CLI_F_JSON in 'flags' it lists --json. */
void cli_help_shared(unsigned flags);

/* --backend's value 'arg' for command 'cmd': 0 when the executor has
 * that backend (exec_backend_find: local, slurm or dry-run), else a
 * usage error (printed; EXIT_USAGE). */
int cli_backend_option(const char *cmd, const char *arg);

/* --time-scale's value 'arg' for command 'cmd' into *out: 0 when it is a
 * number from EXEC_MIN_SCALE to EXEC_MAX_SCALE (plan seconds per wall
 * second, as the journal records it), else a usage error (printed;
 * EXIT_USAGE). */
int cli_scale_option(const char *cmd, const char *arg, double *out);

/* "wrote PATH" on 'say', for an output file a command wrote: nothing
 * when path is NULL or "-" (standard output) or under --quiet. */
void cli_say_wrote(FILE *say, const char *path);

/* getopt_long over the command's table 'opts' (shortopts ":h") plus the
 * shared options, for command 'cmd': returns the next option's code as
 * getopt_long does (optarg set), -1 at the end (optind at the first
 * operand). The shared options are consumed here (cli_cf). On an
 * unknown option (with "did you mean --NAME?" from the table's names),
 * a missing value, a bad --time-zone, or an option given twice whose
 * name is not in the comma-separated list 'repeatable' (NULL: none), the
 * usage error is printed and CLI_O_FAILED returned: the caller returns
 * cli_option_error(cmd, o, ...), which then prints nothing. A parse
 * starts at the first call with a new argv or after the end. */
struct option;
int cli_getopt(const char *cmd, int argc, char **argv,
               const struct option *opts, unsigned flags,
               const char *repeatable);

/* The usage error for getopt_long's answer 'o' (':' missing value, else
 * unknown option) about argument 'arg'; returns EXIT_USAGE. For
 * CLI_O_FAILED (cli_getopt printed the error) it prints nothing. */
int cli_option_error(const char *cmd, int o, const char *arg);

/* The zone to show times of a plan whose clock reads 'ref' in:
 * --time-zone (utc by default), whatever 'ref' is: on a synthetic clock
 * ef_ht_fmt shows its offsets ("+1h 33m 48s") unless --time-zone epoch
 * asks for the seconds. */
ef_ht_zone cli_zone(int64_t ref);

/* Time t as cli_zone(ref) says (ef_ht_fmt) into dst[0..n). Returns dst. */
const char *cli_time(int64_t t, int64_t ref, char *dst, size_t n);

/* The wall clock in Unix seconds (0 if it cannot be read). */
int64_t cli_wall_now(void);

/* 1 iff progress may be drawn: standard error is a terminal and no -q. */
int cli_progress_on(void);

/* Draw "WHAT DONE/TOTAL" on standard error's line when cli_progress_on:
 * nothing in the run's first second (from the first call after
 * cli_progress_end), then at most four times a second (and the last,
 * done == total). */
void cli_progress(const char *what, long done, long total);

/* Clear the progress line, if one was drawn. */
void cli_progress_end(void);

/* --json: write w's document (every container closed; compact writers
 * give one line) and a newline to standard output; w is left empty.
 * Returns 0, or EXIT_INTERNAL (printed) when it cannot be written. */
struct jw;
int cli_json_print(struct jw *w);

/* The Slurm options of apply and serve (--partition P, --account A,
 * --qos Q, --sbatch-arg ARG, repeatable), as getopt_long codes: add
 * CLI_SLURM_OPTIONS to the option table. */
enum { CLI_O_PARTITION = 400, CLI_O_ACCOUNT, CLI_O_QOS, CLI_O_SBATCH_ARG };
#define CLI_SLURM_OPTIONS                                                   \
    {"partition", required_argument, NULL, CLI_O_PARTITION},                \
    {"account", required_argument, NULL, CLI_O_ACCOUNT},                    \
    {"qos", required_argument, NULL, CLI_O_QOS},                            \
    {"sbatch-arg", required_argument, NULL, CLI_O_SBATCH_ARG}

/* Option 'o' with value 'arg' into *so when it is one of the Slurm
 * options: 0, or EXIT_USAGE (printed, naming command 'cmd': an empty
 * value or one with blanks, an --sbatch-arg that exec_slurm_check_arg
 * refuses); -1 when 'o' is none of them. --sbatch-arg words are kept in
 * order in a heap array (cli_slurm_free). */
struct exec_slurm_opts;
int cli_slurm_option(const char *cmd, int o, const char *arg,
                     struct exec_slurm_opts *so);

/* After parsing: EXIT_USAGE (printed) when a Slurm option was given and
 * 'backend' (NULL: none) is not "slurm" (nor "dry-run", whose sbatch
 * lines show them, when 'dry'), else 0. */
int cli_slurm_only(const char *cmd, const struct exec_slurm_opts *so,
                   const char *backend, int dry);

/* Free what cli_slurm_option kept in *so. */
void cli_slurm_free(struct exec_slurm_opts *so);

/* The offline admission's options, which plan and oracle share
 * (--offline-plans N, --offline-exact B), as getopt_long codes: add
 * CLI_OFFLINE_OPTIONS to the option table. */
enum { CLI_O_OFFLINE_PLANS = 410, CLI_O_OFFLINE_EXACT };
#define CLI_OFFLINE_OPTIONS                                                 \
    {"offline-plans", required_argument, NULL, CLI_O_OFFLINE_PLANS},        \
    {"offline-exact", required_argument, NULL, CLI_O_OFFLINE_EXACT}

/* What they set: plan_build calls the search may make, and the largest
 * model of the exact step (solver/ilp.h ilp_offline). */
typedef struct cli_offline {
    int plans;
    long exact;
} cli_offline;

/* The defaults (OFF_DEFAULT_PLANS, ILP_OFFLINE_BINARIES). */
void cli_offline_default(cli_offline *of);

/* Option 'o' with value 'arg' into *of when it is one of the offline
 * options: 0, or EXIT_USAGE (printed, naming command 'cmd': a count out
 * of range); -1 when 'o' is none of them. */
int cli_offline_option(const char *cmd, int o, const char *arg,
                       cli_offline *of);

/* Write the bytes of an output option: to standard output when 'path' is
 * "-" (for the options whose help says so), else to the file 'path'
 * (ef_write_file_atomic: refuses "-" itself, and every target that is
 * not a regular file). Returns EF_OK, or EF_ERR with 'e' filled
 * (EF_E_INTERNAL: standard output cannot be written). */
int cli_write_out(const char *path, const char *data, size_t len, ef_err *e);

/* Standard output holds one thing at most: of a command's 'n' outputs
 * (paths[k] given as option names[k], NULL when not asked for) and, with
 * --json, its summary, at most one may be standard output ("-"). Returns
 * 0 with *taken = 1 when one is (the command's human notes then go to
 * standard error), 0 with *taken = 0 when none is, or EXIT_USAGE
 * (printed, naming command 'cmd' and the two options) when two are. */
int cli_stdout_owner(const char *cmd, int n, const char *const *names,
                     const char *const *paths, int *taken);

/* --slot: 'arg' as a slot length in seconds, 1 to 86400, into *slot.
 * Returns 0, or EXIT_USAGE (printed, naming command 'cmd'). */
int cli_parse_slot(const char *cmd, const char *arg, int *slot);

/* --plan-version: 'arg' as a plan file version (1 or 2, planio.h) into
 * *v. Returns 0, or EXIT_USAGE (printed, naming command 'cmd'). */
int cli_parse_plan_version(const char *cmd, const char *arg, int *v);

/* --now: 'arg' as a time a person typed (ef_ht_parse: Unix seconds,
 * ISO-8601, "now+8h" from the wall clock) into *now. Returns 0, or
 * EXIT_USAGE (printed, naming command 'cmd'). */
int cli_parse_now(const char *cmd, const char *arg, int64_t *now);

/* The inputs of plan, oracle and simulate: the cluster 'cluster_arg'
 * (cluster_from_arg), the curves 'curves_arg' (curve_set_load_arg), and
 * the queue at 'jobs_path' resolved against them. Returns EF_OK, or
 * EF_ERR with 'e' filled; either way the caller frees what was loaded
 * (cs and q start zeroed). */
struct cluster;
struct curve_set;
struct job_queue;
int cli_load_inputs(const char *cluster_arg, const char *curves_arg,
                    const char *jobs_path, struct cluster *c,
                    struct curve_set *cs, struct job_queue *q, ef_err *e);

typedef struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
    void (*help)(void);
    const char *verbs; /* its sub-commands, space-separated ("list drain
                        * undrain"), or NULL: the completion offers them
                        * as the word after the command */
} cli_command;

/* The command table efplan dispatches on (sorted by name); *n its
 * length. */
const cli_command *cli_commands(int *n);

/* The hidden options the build runs (cli/manpage.c): 'what' "man"
 * writes the manual page efplan(1) in roff, "bash-completion" the bash
 * completion script, to standard output, both made from the command
 * table and each command's help text (the options are the --names of
 * its Usage lines and of its option list). Returns the exit code:
 * 0, EXIT_INTERNAL (printed) when the help cannot be captured or
 * standard output cannot be written. */
int cli_generate(const char *what);

int cmd_validate(int argc, char **argv);
void help_validate(void);
int cmd_plan(int argc, char **argv);
void help_plan(void);
int cmd_submit(int argc, char **argv);
void help_submit(void);
int cmd_oracle(int argc, char **argv);
void help_oracle(void);
int cmd_gentrace(int argc, char **argv);
void help_gentrace(void);
int cmd_simulate(int argc, char **argv);
void help_simulate(void);
int cmd_compare(int argc, char **argv);
void help_compare(void);

/* The simulation options simulate and compare share (--slot, --overhead,
 * --surplus, --cap, --baselines, --mip-nodes, --elastic-batch,
 * --pollux-data, by their getopt letters s O S C B M E P): apply option 'o' with value 'arg' to 'so'. Returns 0 when
 * applied, a usage exit code (printed, naming command 'cmd') when the
 * value is bad, -1 when 'o' is not one of them. */
struct sim_opts;
int cli_sim_option(const char *cmd, int o, const char *arg,
                   struct sim_opts *so);
int cmd_profile(int argc, char **argv);
void help_profile(void);

/* Exit codes of "efplan profile" when it cannot measure (README.md). */
#define EXIT_NO_CUDA 6    /* built without CUDA/NCCL */
#define EXIT_NO_GPU 7     /* CUDA built in, but no driver or no GPU */
int cmd_apply(int argc, char **argv);
void help_apply(void);
int cmd_nightly(int argc, char **argv);
void help_nightly(void);
int cmd_serve(int argc, char **argv);
void help_serve(void);
int cmd_jobs(int argc, char **argv);
void help_jobs(void);
int cmd_show(int argc, char **argv);
void help_show(void);
int cmd_cancel(int argc, char **argv);
int cmd_replan(int argc, char **argv);
void help_replan(void);
int cmd_node(int argc, char **argv);
void help_node(void);
void help_cancel(void);

/* ---- the commands that ask efplan serve (cli/remote.c) ---------------- */

struct cl_conn;
struct cl_resp;

/* The server (--server 'server_arg', else EFPLAN_SERVER) and the token
 * (--token-file 'token_file', else EFPLAN_TOKEN; into tok[0..cap)) into
 * *c, and libcurl started (cl_init). Returns 0, or the exit code of the
 * error it printed (EXIT_USAGE: none given or a bad URL; EXIT_INPUT: the
 * token file is refused). The caller calls cli_remote_close. */
int cli_remote_open(const char *cmd, const char *server_arg,
                    const char *token_file, struct cl_conn *c, char *tok,
                    size_t cap);

/* Stop libcurl (cl_cleanup). */
void cli_remote_close(void);

/* One request (cl_request) judged: 0 with *r filled (free with
 * cl_resp_free) when the status is 2xx; else the error is printed,
 * "efplan: error: SERVER: HTTP N: MESSAGE" (cl_status_error) or the
 * transport's, *r is freed and the exit code returned: EXIT_AUTH for
 * 401 and 403, EXIT_INPUT for other 4xx, EXIT_INTERNAL for 5xx, any
 * other status and an unreachable server, EXIT_USAGE for a URL refused. */
int cli_remote_call(const struct cl_conn *c, const char *method,
                    const char *path, const char *body, size_t len,
                    struct cl_resp *r);

/* Write r's body to standard output exactly as received (--json).
 * Returns 0, or EXIT_INTERNAL (printed) when it cannot be written. */
int cli_remote_raw(const struct cl_resp *r);
int cmd_token(int argc, char **argv);
void help_token(void);
int cmd_explain(int argc, char **argv);
void help_explain(void);

/* An executor's line callbacks (exec_opts.say, .out): the line to
 * standard error, or to standard output. */
void cli_say_err(void *arg, const char *line);
void cli_say_out(void *arg, const char *line);

#endif
