/* cmd_jobs.c: "efplan jobs", "efplan show", "efplan cancel": the job
 * queue of efplan serve, through its API (service/client.h). */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "service/client.h"
#include "service/token.h"

#define CONN_HELP                                                           \
    "  --server URL      the server, http:// or https:// (default:\n"      \
    "                    $EFPLAN_SERVER)\n"                                 \
    "  --token-file F    the token on F's first line; F must be a regular\n" \
    "                    file only its owner may use (chmod 600) (default:\n" \
    "                    $EFPLAN_TOKEN)\n"                                  \
    "  --json            print the server's JSON answer as received\n"     \
    "\n"                                                                    \
    "Exit codes: 0 ok, 2 usage error, 3 refused by the server (HTTP 400,\n" \
    "404, 409, 413, ...), 5 server error or server not reachable, 8 the\n"  \
    "token is refused (HTTP 401, 403).\n"

void help_jobs(void)
{
    printf(
        "Usage: efplan jobs [--all] [--state S] [--json] [--server URL]\n"
        "                   [--token-file F]\n"
        "\n"
        "List jobs of efplan serve in submission order: yours, or with --all\n"
        "every user's (operators only). One row per job: id, owner, state,\n"
        "decision, the GPUs it holds now, deadline and planned end (UTC, or\n"
        "- for none) and at-risk for an admitted job the plan may no longer\n"
        "finish in time.\n"
        "\n"
        "  --all             every user's jobs (an operator's token)\n"
        "  --state S         only jobs in state S: queued, running, done,\n"
        "                    failed, cancelled or rejected\n"
        CONN_HELP);
    cli_help_shared(0);
}

void help_show(void)
{
    printf(
        "Usage: efplan show ID [--json] [--server URL] [--token-file F]\n"
        "\n"
        "Show one job of efplan serve: decision, state, progress, the GPUs\n"
        "and nodes it holds, planned end against its deadline (the slack),\n"
        "why it is at risk, and its history. Yours only, unless the token\n"
        "is an operator's.\n"
        "\n"
        CONN_HELP);
    cli_help_shared(0);
}

void help_cancel(void)
{
    printf(
        "Usage: efplan cancel ID [--json] [--server URL] [--token-file F]\n"
        "\n"
        "Cancel a job of efplan serve: it stops, its reservation is freed\n"
        "and the plan is made again. Yours only, unless the token is an\n"
        "operator's. A job that has ended cannot be cancelled (HTTP 409).\n"
        "\n"
        CONN_HELP);
    cli_help_shared(0);
}

/* The options every client command takes; 'extra' more of its own. */
typedef struct conn_args {
    const char *server;
    const char *token_file;
    int json;
} conn_args;

enum { O_SERVER = 1000, O_TOKEN_FILE, O_JSON, O_ALL, O_STATE, O_REASON };

#define CONN_OPTS                                                           \
    {"server", required_argument, NULL, O_SERVER},                         \
    {"token-file", required_argument, NULL, O_TOKEN_FILE},                 \
    {"json", no_argument, NULL, O_JSON},                                   \
    {"help", no_argument, NULL, 'h'}

/* Apply a connection option; 1 when 'o' was one. */
static int conn_option(int o, conn_args *a)
{
    switch (o) {
    case O_SERVER: a->server = optarg; return 1;
    case O_TOKEN_FILE: a->token_file = optarg; return 1;
    case O_JSON: a->json = 1; return 1;
    default: return 0;
    }
}

typedef int (*fmt_fn)(const char *server, const char *body, size_t len,
                      ef_buf *out, ef_err *e);

/* Ask (with 'body', a JSON text, or NULL), then print the answer: raw
 * with --json, else as 'fmt' writes it. */
static int ask_with(const char *cmd, const conn_args *a, const char *method,
                    const char *path, const char *body, fmt_fn fmt)
{
    cl_conn c;
    char tok[TOKEN_TEXT_MAX + 1];
    int rc = cli_remote_open(cmd, a->server, a->token_file, &c, tok,
                             sizeof tok);
    if (rc != 0)
        return rc;
    cl_resp r;
    rc = cli_remote_call(&c, method, path, body, body ? strlen(body) : 0,
                         &r);
    if (rc == 0) {
        if (a->json) {
            rc = cli_remote_raw(&r);
        } else {
            ef_buf out = {0};
            ef_err e = {0};
            ef_buf_put(&out, "");
            if (fmt(c.server, r.body, r.len, &out, &e) != EF_OK)
                rc = cli_fail(&e);
            else if (cli_write_out("-", out.s, out.n, &e) != EF_OK)
                rc = cli_fail(&e);
            free(out.s);
        }
        cl_resp_free(&r);
    }
    memset(tok, 0, sizeof tok);
    cli_remote_close();
    return rc;
}

static int ask(const char *cmd, const conn_args *a, const char *method,
               const char *path, fmt_fn fmt)
{
    return ask_with(cmd, a, method, path, NULL, fmt);
}

static const char *const states[] = {"queued", "running", "done", "failed",
                                     "cancelled", "rejected"};
#define NSTATES ((int)(sizeof states / sizeof states[0]))

int cmd_jobs(int argc, char **argv)
{
    static const struct option opts[] = {
        {"all", no_argument, NULL, O_ALL},
        {"state", required_argument, NULL, O_STATE},
        CONN_OPTS,
        {NULL, 0, NULL, 0}};
    conn_args a = {0};
    int all = 0;
    const char *state = NULL;
    int o;
    opterr = 0;
    optind = 1;
    while ((o = cli_getopt("jobs", argc, argv, opts, 0, NULL)) != -1) {
        if (conn_option(o, &a))
            continue;
        switch (o) {
        case O_ALL: all = 1; break;
        case O_STATE: state = optarg; break;
        case 'h': help_jobs(); return 0;
        default: return cli_option_error("jobs", o, argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("jobs", "unexpected argument \"%s\"",
                               argv[optind]);
    if (state) {
        int ok = 0;
        for (int i = 0; i < NSTATES; i++)
            ok |= strcmp(state, states[i]) == 0;
        if (!ok) {
            char q[128];
            const char *s = ef_suggest(state, states, NSTATES);
            return cli_usage_error("jobs", "--state: \"%s\" is not a state "
                                   "(%s%s%sone of queued, running, done, "
                                   "failed, cancelled, rejected)",
                                   ef_quote(state, q, sizeof q),
                                   s ? "did you mean \"" : "", s ? s : "",
                                   s ? "\"? " : "");
        }
    }
    char path[128];
    snprintf(path, sizeof path, "/v1/jobs%s%s%s%s", all ? "?all=1" : "",
             state ? (all ? "&" : "?") : "", state ? "state=" : "",
             state ? state : "");
    return ask("jobs", &a, "GET", path, cl_fmt_jobs);
}

/* The options of a command that takes the connection's only (show,
 * cancel, node): -1 when they parsed (optind at the first operand), else
 * the exit code (help printed, or an option error). */
static int conn_only(const char *cmd, int argc, char **argv,
                     void (*help)(void), conn_args *a)
{
    static const struct option opts[] = {CONN_OPTS, {NULL, 0, NULL, 0}};
    int o;
    opterr = 0;
    optind = 1;
    while ((o = cli_getopt(cmd, argc, argv, opts, 0, NULL)) != -1) {
        if (conn_option(o, a))
            continue;
        if (o == 'h') {
            help();
            return 0;
        }
        return cli_option_error(cmd, o, argv[optind - 1]);
    }
    return -1;
}

/* show and cancel: one job id, then the request. */
static int one_job(const char *cmd, int argc, char **argv,
                   void (*help)(void), const char *method, fmt_fn fmt)
{
    conn_args a = {0};
    int rc0 = conn_only(cmd, argc, argv, help, &a);
    if (rc0 >= 0)
        return rc0;
    if (optind >= argc)
        return cli_usage_error(cmd, "which job? (efplan %s ID)", cmd);
    if (optind + 1 < argc) {
        char q[128];
        return cli_usage_error(cmd, "one job id, not two (\"%s\" after the "
                               "id)", ef_quote(argv[optind + 1], q,
                                               sizeof q));
    }
    ef_err e = {0};
    char *path = cl_job_path(argv[optind], &e);
    if (!path)
        return cli_usage_error(cmd, "%s", e.msg);
    int rc = ask(cmd, &a, method, path, fmt);
    free(path);
    return rc;
}

int cmd_show(int argc, char **argv)
{
    return one_job("show", argc, argv, help_show, "GET", cl_fmt_job);
}

int cmd_cancel(int argc, char **argv)
{
    return one_job("cancel", argc, argv, help_cancel, "DELETE",
                   cl_fmt_cancel);
}

void help_replan(void)
{
    printf(
        "Usage: efplan replan [--json] [--server URL] [--token-file F]\n"
        "\n"
        "Re-plan efplan serve's queue now (POST /v1/replan; an operator's\n"
        "token), as its daily --replan-at does: with the loop, from what it\n"
        "last saw run (jobs at risk are counted); without it, the queue\n"
        "planned afresh, kept only if no promise breaks. Prints the plan's\n"
        "version, whether it changed, the admitted jobs, the jobs at risk,\n"
        "and the snapshot written.\n"
        "\n"
        CONN_HELP);
    cli_help_shared(0);
}

int cmd_replan(int argc, char **argv)
{
    conn_args a = {0};
    int rc0 = conn_only("replan", argc, argv, help_replan, &a);
    if (rc0 >= 0)
        return rc0;
    if (optind < argc) {
        char q[128];
        return cli_usage_error("replan", "replan takes no argument (\"%s\")",
                               ef_quote(argv[optind], q, sizeof q));
    }
    return ask_with("replan", &a, "POST", "/v1/replan", "{}",
                    cl_fmt_replan);
}

void help_node(void)
{
    printf(
        "Usage: efplan node list [--json] [--server URL] [--token-file F]\n"
        "       efplan node drain NODE [--reason TEXT] [...]\n"
        "       efplan node undrain NODE [...]\n"
        "\n"
        "The nodes of efplan serve's cluster. list: each node's number, name\n"
        "(from serve's --nodes, or Slurm), state (up, drained by an operator,\n"
        "or down as the cluster reports it), since when and why, and how\n"
        "many the plan uses. drain NODE (an operator's token): the node, by\n"
        "number (from 0) or name (gpu07), gets no more work; the loop\n"
        "re-plans on the other nodes at once and moves what runs there\n"
        "(checkpoint, restart elsewhere); admitted jobs that cannot be saved\n"
        "on what is left are flagged at risk. undrain NODE gives it back.\n"
        "Operator's guide: docs/operator.md.\n"
        "\n"
        "  --reason TEXT     drain: why (one line, up to 200 bytes), stored\n"
        "                    and shown by list as \"drained by NAME: TEXT\"\n"
        CONN_HELP);
    cli_help_shared(0);
}

int cmd_node(int argc, char **argv)
{
    conn_args a = {0};
    const char *reason = NULL;
    static const struct option opts[] = {
        CONN_OPTS, {"reason", required_argument, NULL, O_REASON},
        {NULL, 0, NULL, 0}};
    int o;
    opterr = 0;
    optind = 1;
    while ((o = cli_getopt("node", argc, argv, opts, 0, NULL)) != -1) {
        if (conn_option(o, &a))
            continue;
        if (o == 'h') {
            help_node();
            return 0;
        }
        if (o == O_REASON) {
            reason = optarg;
            continue;
        }
        return cli_option_error("node", o, argv[optind - 1]);
    }
    if (optind >= argc)
        return cli_usage_error("node", "what? (efplan node list, drain N or "
                               "undrain N)");
    const char *what = argv[optind];
    if (reason && strcmp(what, "drain") != 0)
        return cli_usage_error("node", "--reason goes with drain");
    if (strcmp(what, "list") == 0) {
        if (optind + 1 < argc)
            return cli_usage_error("node", "list takes no argument");
        return ask("node", &a, "GET", "/v1/nodes", cl_fmt_nodes);
    }
    if (strcmp(what, "drain") && strcmp(what, "undrain")) {
        char q[128];
        return cli_usage_error("node", "%s: expected list, drain or undrain",
                               ef_quote(what, q, sizeof q));
    }
    if (optind + 2 != argc)
        return cli_usage_error("node", "%s takes one node (its number or "
                               "name)", what);
    const char *n = argv[optind + 1];
    size_t nl = strlen(n);
    if (nl == 0 || nl > 100 || strspn(n, "abcdefghijklmnopqrstuvwxyz"
                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789._-") != nl) {
        char q[128];
        return cli_usage_error("node", "%s: expected a node number from 0 "
                               "or a node name (letters, digits, '.', '_', "
                               "'-'; up to 100)", ef_quote(n, q, sizeof q));
    }
    char path[160];
    snprintf(path, sizeof path, "/v1/nodes/%s/%s", n, what);
    char *body = NULL;
    if (reason) {
        ef_err e = {0};
        body = cl_json_object1("reason", reason, &e);
        if (!body)
            return cli_usage_error("node", "--reason: %s", e.msg);
    }
    int rc = ask_with("node", &a, "POST", path, body, cl_fmt_drain);
    free(body);
    return rc;
}
