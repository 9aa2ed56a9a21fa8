/* cmd_explain.c: "efplan explain ID": why a job of a plan got what it got
 * (planner/explain.h), from a plan file or from efplan serve. */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/htime.h"
#include "common/util.h"
#include "planner/explain.h"
#include "planner/planio.h"
#include "service/client.h"
#include "service/token.h"

/* Intervals the text lists unless --all. */
#define EXPLAIN_IV 20

void help_explain(void)
{
    printf(
        "Usage: efplan explain ID --plan FILE [--curves DIR|A100|T4]\n"
        "                      [--all] [shared options]\n"
        "       efplan explain ID --server URL [--token-file F] [--all]\n"
        "                      [shared options]\n"
        "\n"
        "Why job ID got what it got, in short sentences:\n"
        "  admitted     the GPUs its reservation (minimum satisfactory share)\n"
        "               holds over time, what it got on top as surplus, its\n"
        "               planned end against its deadline (the slack);\n"
        "  at risk      why, and how late it is planned to end;\n"
        "  best-effort  that it runs only on GPUs no admitted job reserved,\n"
        "               and what it got;\n"
        "  rejected     the admitted jobs holding the cluster between its\n"
        "               submit time and its deadline, each with the GPU-hours\n"
        "               promised to it there, what it would need alone, and\n"
        "               the earliest deadline efplan can guarantee.\n"
        "Then the intervals where it holds GPUs: reserved + surplus, what the\n"
        "other jobs reserve and hold, and the idle GPUs.\n"
        "\n"
        "  --plan FILE        a plan file (efplan plan --out)\n"
        "  --curves DIR       the curves for a rejected job's needs (default:\n"
        "                     the ones the plan file names)\n"
        "  --server URL       ask efplan serve instead (default:\n"
        "                     $EFPLAN_SERVER when --plan is not given)\n"
        "  --token-file F     the token on F's first line (default:\n"
        "                     $EFPLAN_TOKEN)\n"
        "  --all              list every interval (default: the first %d)\n"
        "With --json the explanation is one JSON object (format\n"
        "efplan-explain; times in Unix seconds). A plan not on the wall clock\n"
        "shows seconds (t=N s) whatever --time-zone says.\n"
        "\n"
        "A plan file written before efplan recorded reservations has no\n"
        "\"reserved\" member: the reserved/surplus split is then left out.\n"
        "\n"
        "Exit codes: 0 explained, 2 usage error, 3 no such job (the closest\n"
        "id is suggested), an unreadable plan or curves, or refused by the\n"
        "server, 5 internal error or server not reachable, 8 the token is\n"
        "refused.\n", EXPLAIN_IV);
    cli_help_shared(CLI_F_JSON);
}

enum { O_PLAN = 1000, O_CURVES, O_SERVER, O_TOKEN_FILE, O_ALL };

/* Print x as text (or its JSON with 'json'). */
static int print_xpl(const xpl *x, int json, ef_ht_zone z, int all)
{
    size_t n;
    char *s = json ? xpl_json(x, &n)
                   : xpl_text(x, z, all ? 0 : EXPLAIN_IV, &n);
    ef_err e = {0};
    int rc = cli_write_out("-", s, n, &e) == EF_OK ? 0 : cli_fail(&e);
    free(s);
    return rc;
}

/* Ask efplan serve for GET /v1/jobs/ID/explain. */
static int remote(const char *id, const char *server, const char *token_file,
                  int json, ef_ht_zone z, int all)
{
    ef_err e = {0};
    char *jp = cl_job_path(id, &e);
    if (!jp)
        return cli_usage_error("explain", "%s", e.msg);
    ef_buf path = {0};
    ef_buf_printf(&path, "%s/explain", jp);
    free(jp);
    cl_conn c;
    char tok[TOKEN_TEXT_MAX + 1];
    int rc = cli_remote_open("explain", server, token_file, &c, tok,
                             sizeof tok);
    if (rc != 0) {
        free(path.s);
        return rc;
    }
    cl_resp r;
    rc = cli_remote_call(&c, "GET", path.s, NULL, 0, &r);
    free(path.s);
    if (rc == 0) {
        if (json) {
            rc = cli_remote_raw(&r);
        } else {
            xpl x;
            if (xpl_parse(&x, c.server, r.body, r.len, &e) != EF_OK) {
                rc = cli_fail(&e);
            } else {
                rc = print_xpl(&x, 0, z, all);
                xpl_free(&x);
            }
        }
        cl_resp_free(&r);
    }
    memset(tok, 0, sizeof tok);
    cli_remote_close();
    return rc;
}

int cmd_explain(int argc, char **argv)
{
    static const struct option opts[] = {
        {"plan", required_argument, NULL, O_PLAN},
        {"curves", required_argument, NULL, O_CURVES},
        {"server", required_argument, NULL, O_SERVER},
        {"token-file", required_argument, NULL, O_TOKEN_FILE},
        {"all", no_argument, NULL, O_ALL},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *plan_path = NULL, *curves = NULL, *server = NULL,
               *token_file = NULL;
    int all = 0, o;
    opterr = 0;
    optind = 1;
    while ((o = cli_getopt("explain", argc, argv, opts, CLI_F_JSON, NULL)) !=
           -1) {
        switch (o) {
        case O_PLAN: plan_path = optarg; break;
        case O_CURVES: curves = optarg; break;
        case O_SERVER: server = optarg; break;
        case O_TOKEN_FILE: token_file = optarg; break;
        case O_ALL: all = 1; break;
        case 'h': help_explain(); return 0;
        default: return cli_option_error("explain", o, argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error("explain", "which job? (efplan explain ID "
                               "--plan FILE)");
    if (optind + 1 < argc) {
        char q[128];
        return cli_usage_error("explain", "one job id, not two (\"%s\" after "
                               "the id)", ef_quote(argv[optind + 1], q,
                                                   sizeof q));
    }
    const char *id = argv[optind];
    int json = cli_cf.json;     /* --json: the object, not the sentences */
    ef_ht_zone z = cli_cf.zone; /* --time-zone (xpl_text keeps seconds for
                                   a plan not on the wall clock) */
    if (plan_path && (server || token_file))
        return cli_usage_error("explain", "--plan or --server, not both");
    if (!plan_path && curves)
        return cli_usage_error("explain", "--curves goes with --plan (the "
                               "server uses its own curves)");
    const char *env = getenv("EFPLAN_SERVER");
    if (!plan_path && !server && !(env && env[0]))
        return cli_usage_error("explain", "which plan? give --plan FILE, or "
                               "--server URL (or EFPLAN_SERVER) for a job of "
                               "efplan serve");
    if (!plan_path)
        return remote(id, server, token_file, json, z, all);
    ef_err e = {0};
    plan_doc d;
    if (plan_doc_load(&d, plan_path, &e) != EF_OK)
        return cli_fail(&e);
    xpl x;
    int rc;
    if (xpl_build(&x, &d, plan_path, id, NULL, curves, &e) != EF_OK) {
        rc = cli_fail(&e);
    } else {
        rc = print_xpl(&x, json, z, all);
        xpl_free(&x);
    }
    plan_doc_free(&d);
    return rc;
}
