/* cmd_submit.c: "efplan submit": admit one new job against a plan file. */
#define _GNU_SOURCE 1
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "cli/cli.h"
#include "common/jsonw.h"
#include "common/util.h"
#include "executor/exec.h"
#include "planner/planio.h"
#include "planner/planlock.h"
#include "planner/submit.h"
#include "service/client.h"
#include "service/token.h"

void help_submit(void)
{
    printf(
        "Usage: efplan submit --plan plan.json --job JSON [--curves DIR]\n"
        "                     [--now T] [--json]\n"
        "       efplan submit [--server URL] [--token-file F] [--json]\n"
        "                     JOB | --job JSON\n"
        "\n"
        "With --plan: ask whether one new job can be admitted into an\n"
        "existing plan. The plan's queue plus the new job is planned again\n"
        "with the plan's cluster, curves, slot and surplus mode. The job is\n"
        "admitted only if its deadline is guaranteed and every job the plan\n"
        "admitted stays admitted, whatever its submit time: a promise is\n"
        "never broken. Then the job (every field: command, env, batch\n"
        "range) is added to the jobs file the plan names and the plan file\n"
        "is rewritten, both atomically, under a lock (PLAN.lock), so\n"
        "concurrent submits land one after the other. While efplan apply\n"
        "(or efplan nightly) applies the plan, the job is planned from the\n"
        "apply's clock (its submit_time is at least the apply's plan time\n"
        "now) and the apply follows the rewritten plan at its next tick:\n"
        "an admitted job starts at the slot boundary the plan gives it.\n"
        "A rejection\n"
        "says why, with the earliest deadline that would be admitted (the\n"
        "second before it is not), and nothing is written. A job with the\n"
        "id of a job the plan rejected is a resubmission: it takes that\n"
        "job's place (efplan explain names the same earliest deadline).\n"
        "\n"
        "  --plan FILE     plan written by 'efplan plan --out'\n"
        "  --job JSON      the job, as in a JSON queue: {\"id\", \"model\",\n"
        "                  \"batch_size\", \"iterations\", \"deadline\",\n"
        "                  \"submit_time\"}; submit_time defaults to the\n"
        "                  plan's current time: its now, or, when later,\n"
        "                  --now, or (a plan in Unix time, now >= 10^9,\n"
        "                  without --now) the wall clock; never earlier\n"
        "                  than the plan's now\n"
        "  --curves DIR    curves to use instead of the ones the plan names\n"
        "  --now T         the current time on the plan's clock (seconds,\n"
        "                  ISO-8601 or now+DURATION), instead of the wall\n"
        "                  clock; times of --job may be relative to it\n"
        "                  (\"deadline\": \"now+8h\")\n"
        "\n"
        "Without --plan: submit the job to efplan serve (POST /v1/jobs),\n"
        "which decides by the same rule against its live plan and keeps the\n"
        "job. JOB is a file holding one job object ('-': standard input), or\n"
        "--job JSON gives it inline; its deadline is Unix seconds, ISO-8601,\n"
        "now+SPAN (made absolute here, from this machine's clock as you\n"
        "submit) or null (best-effort); submit_time is the server's clock.\n"
        "\n"
        "  --server URL    the server, http:// or https:// (default:\n"
        "                  $EFPLAN_SERVER, used only without --plan)\n"
        "  --token-file F  the token on F's first line; F must be a regular\n"
        "                  file only its owner may use (chmod 600)\n"
        "                  (default: $EFPLAN_TOKEN)\n"
        "  --json          the verdict as JSON: the server's answer as\n"
        "                  received; with --plan one object (decision,\n"
        "                  reason, earliest_feasible_deadline, ...)\n"
        "\n"
        "Exit codes: 0 admitted (or best-effort), 4 rejected, 2 usage error,\n"
        "3 invalid input (or refused by the server: HTTP 400, 409, 413),\n"
        "5 internal error (or a server error, or no server reachable),\n"
        "8 the server refused the token (HTTP 401, 403), 10 over a per-user\n"
        "limit of the server (HTTP 429: its message says which and when to\n"
        "retry).\n");
    cli_help_shared(0);
}

/* What a submit decided, as both modes print it: the plan file's (times
 * on the plan's clock) and the server's (Unix time), shown as --time-zone
 * says when 'ref' (the clock's now) is a date (cli_time). 'tail' ends
 * the admitted and best-effort line. */
typedef struct decision_view {
    const char *id;
    plan_decision decision;
    int64_t planned_end, deadline, earliest;
    const char *reason, *broken;
    int64_t ref;
    const char *tail;
} decision_view;

static const char *fmt_t(const decision_view *v, int64_t t, char *dst,
                         size_t len)
{
    return cli_time(t, v->ref, dst, len);
}

/* How a rejection with no earliest deadline reads (the reason may say it
 * already, with why: submit.h). */
#define NO_DEADLINE "no deadline can be guaranteed"

/* The rejection lines. */
static void print_rejected(const decision_view *v)
{
    char t[64], d[32];
    if (v->broken)
        printf("rejected: %s would break the promise made to job %s\n",
               v->id, v->broken);
    else
        printf("rejected: %s: %s\n", v->id,
               v->reason ? v->reason : "no reason given");
    if (v->earliest >= 0 && cli_zone(v->ref) != EF_HT_EPOCH)
        printf("earliest deadline that can be guaranteed: %s (%s after "
               "the deadline asked)\n", fmt_t(v, v->earliest, t, sizeof t),
               ef_ht_dur(v->earliest - v->deadline, d, sizeof d));
    else if (v->earliest >= 0)
        printf("earliest deadline that can be guaranteed: %" PRId64 "\n",
               v->earliest);
    else if (!v->reason || strncmp(v->reason, NO_DEADLINE,
                                   strlen(NO_DEADLINE)) != 0)
        printf("%s for this job\n", NO_DEADLINE); /* one message a case */
}

/* The admitted or best-effort line. */
static void print_accepted(const decision_view *v)
{
    char t[64], d[32];
    if (v->decision == PLAN_ADMITTED)
        printf("admitted: %s, planned end %s (slack %s)%s\n",
               v->id, fmt_t(v, v->planned_end, t, sizeof t),
               ef_ht_dur(v->deadline - v->planned_end, d, sizeof d),
               v->tail);
    else if (v->planned_end >= 0)
        printf("best_effort: %s, planned end %s%s\n", v->id,
               fmt_t(v, v->planned_end, t, sizeof t), v->tail);
    else
        printf("best_effort: %s, not planned to run yet%s\n", v->id,
               v->tail);
}

/* --json of a submit into a plan file: the verdict as one object;
 * 'written': the plan file was rewritten. Returns cli_json_print's. */
static int verdict_json(const decision_view *v, const plan_submit_res *r,
                        const char *plan_path, int written)
{
    jw w;
    jw_init(&w, 1);
    jw_obj(&w, NULL, NULL);
    jw_str(&w, "command", "submit");
    jw_str(&w, "id", v->id);
    jw_str(&w, "decision", plan_decision_name(v->decision));
    jw_str(&w, "reason", v->reason ? v->reason : "");
    if (v->broken)
        jw_str(&w, "breaks_promise_to", v->broken);
    else
        jw_null(&w, "breaks_promise_to");
    jw_int(&w, "submit_time", r->submit_time);
    jw_int(&w, "now", r->doc.now);
    if (v->deadline >= 0 && v->decision != PLAN_BEST_EFFORT)
        jw_int(&w, "deadline", v->deadline);
    else
        jw_null(&w, "deadline");
    if (v->planned_end >= 0)
        jw_int(&w, "planned_end", v->planned_end);
    else
        jw_null(&w, "planned_end");
    if (v->earliest >= 0)
        jw_int(&w, "earliest_feasible_deadline", v->earliest);
    else
        jw_null(&w, "earliest_feasible_deadline");
    jw_str(&w, "plan", plan_path);
    jw_bool(&w, "plan_rewritten", written);
    jw_arr(&w, "changes", NULL);
    for (int k = 0; k < r->nchanges; k++) {
        jw_obj(&w, NULL, NULL);
        jw_str(&w, "id", r->changes[k].id);
        jw_str(&w, "from", plan_decision_name(r->changes[k].from));
        jw_str(&w, "to", plan_decision_name(r->changes[k].to));
        jw_end(&w);
    }
    jw_end(&w);
    jw_end(&w);
    return cli_json_print(&w);
}

/* Read the job of a server submit: the file 'path' ('-': standard
 * input) into *buf (heap), or NULL (printed, *rc the exit code). */
static char *read_job(const char *path, size_t *len, int *rc)
{
    ef_err e = {0};
    char *buf = NULL;
    if (strcmp(path, "-") != 0) {
        if (ef_read_file(path, &buf, len, &e) != EF_OK) {
            *rc = cli_fail(&e);
            return NULL;
        }
        return buf;
    }
    ef_buf b = {0};
    ef_buf_put(&b, "");
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, stdin)) > 0) {
        if (b.n + k > (size_t)CL_JOB_MAX) {
            free(b.s);
            ef_fail(&e, EF_E_INPUT, "standard input: the job is larger "
                    "than %ld MiB", CL_JOB_MAX >> 20);
            *rc = cli_fail(&e);
            return NULL;
        }
        ef_buf_grow(&b, k);
        memcpy(b.s + b.n, chunk, k);
        b.n += k;
        b.s[b.n] = '\0';
    }
    if (ferror(stdin)) {
        free(b.s);
        ef_fail(&e, EF_E_INPUT, "standard input: read failed");
        *rc = cli_fail(&e);
        return NULL;
    }
    *len = b.n;
    return b.s;
}

/* submit to efplan serve: 'job_file' or 'job_arg' (one of them). */
static int submit_server(const char *server_arg, const char *token_file,
                         int json, const char *job_file, const char *job_arg)
{
    ef_err e = {0};
    size_t len = 0;
    char *body;
    const char *name;
    int rc = 0;
    if (job_file) {
        body = read_job(job_file, &len, &rc);
        if (!body)
            return rc;
        name = strcmp(job_file, "-") == 0 ? "standard input" : job_file;
    } else {
        body = ef_strdup(job_arg);
        len = strlen(body);
        name = "--job";
    }
    int64_t deadline;
    /* "now+8h" is now as the user submits: made absolute here, since the
     * server takes no relative times */
    if (cl_job_resolve(name, &body, &len, cli_wall_now(), &e) != EF_OK ||
        cl_job_deadline(name, body, len, &deadline, &e) != EF_OK) {
        free(body);
        return cli_fail(&e);
    }
    cl_conn c;
    char tok[TOKEN_TEXT_MAX + 1];
    rc = cli_remote_open("submit", server_arg, token_file, &c, tok,
                         sizeof tok);
    if (rc != 0) {
        free(body);
        return rc;
    }
    cl_resp r;
    cl_answer a;
    memset(&a, 0, sizeof a);
    rc = cli_remote_call(&c, "POST", "/v1/jobs", body, len, &r);
    memset(tok, 0, sizeof tok);
    free(body);
    if (rc != 0)
        goto out;
    if (cl_answer_read(c.server, r.body, r.len, deadline, &a, &e) != EF_OK) {
        if (json)
            cli_remote_raw(&r);
        rc = cli_fail(&e);
        goto out_resp;
    }
    rc = a.decision == PLAN_REJECTED ? EXIT_INFEASIBLE : 0;
    if (json) {
        int w = cli_remote_raw(&r);
        if (w != 0)
            rc = w;
        goto out_resp;
    }
    char t[64], tail[128] = "";
    if (a.decision == PLAN_ADMITTED && a.deadline >= 0)
        snprintf(tail, sizeof tail, ", deadline %s",
                 cli_time(a.deadline, a.deadline, t, sizeof t));
    decision_view v = {a.id, a.decision, a.planned_end, a.deadline,
                       a.earliest, a.reason, a.broken,
                       a.deadline >= 0 ? a.deadline : EF_HT_WALL_MIN, tail};
    if (a.decision == PLAN_REJECTED)
        print_rejected(&v);
    else
        print_accepted(&v);
    if (a.speed_note)
        printf("%s\n", a.speed_note);
out_resp:
    cl_resp_free(&r);
out:
    cl_answer_free(&a);
    cli_remote_close();
    return rc;
}

/* With the plan's lock held: the clock of the apply that applies (or
 * last applied) the plan at 'plan_path', when its journal follows this
 * plan file and has not ended: *t its plan time now (rounded up), 1
 * returned, 'state' (len bytes) its state directory, *live whether it
 * runs. 0 when there is none (no apply, or one of another file). An
 * apply picks a rewritten plan up at its next tick (executor/exec.h,
 * exec_apply: following the plan file), so a submit while it runs is
 * decided by the usual rule from the apply's clock on. */
static int apply_clock(const char *plan_path, char *state, size_t len,
                       int *live, int64_t *t)
{
    exec_look lk;
    ef_err e2 = {0};
    if (plan_apply_holder(plan_path, state, len, live, &e2) != EF_OK ||
        !state[0] || exec_state_look(state, &lk, &e2) != EF_OK ||
        !lk.begun || lk.ended)
        return 0;
    char a[PATH_MAX], b[PATH_MAX];
    if (!realpath(plan_path, a) || !realpath(lk.plan, b) || strcmp(a, b))
        return 0; /* a plan of another file, or the path moved */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double wall = (double)ts.tv_sec + ts.tv_nsec / 1e9;
    double now = (double)lk.anchor_plan + (wall - lk.anchor_wall) * lk.scale;
    *t = (int64_t)ceil(now);
    return 1;
}

/* What the command line asks for. */
typedef struct submit_args {
    const char *plan;       /* --plan: the plan file (NULL: a server) */
    const char *job;        /* --job: the job as JSON text */
    const char *curves;     /* --curves: instead of the plan's */
    const char *server;     /* --server: the server's URL */
    const char *token_file; /* --token-file: the server's token */
    int json;               /* --json: the verdict as JSON */
    int now_given;          /* --now was given */
    plan_submit_clock clk;  /* --now (clk.now), the wall clock (clk.wall) */
} submit_args;

/* One option of the table into *a; 0, or an exit code (printed); 1 for
 * --help (printed). */
static int submit_option(submit_args *a, int o, char **argv)
{
    switch (o) {
    case 'p': a->plan = optarg; break;
    case 'j': a->job = optarg; break;
    case 'u': a->curves = optarg; break;
    case 'n':
        if (cli_parse_now("submit", optarg, &a->clk.now) != 0)
            return EXIT_USAGE;
        a->now_given = 1;
        break;
    case 's': a->server = optarg; break;
    case 't': a->token_file = optarg; break;
    case 'J': a->json = 1; break;
    case 'h': help_submit(); return 1;
    default:
        return cli_option_error("submit", o, argv[optind - 1]);
    }
    return 0;
}

/* Parse the options into *a: -1 when it may go on, else the exit code
 * (printed; 0 for --help). Leaves optind at the first operand. */
static int submit_parse(int argc, char **argv, submit_args *a)
{
    static const struct option opts[] = {
        {"plan", required_argument, NULL, 'p'},
        {"job", required_argument, NULL, 'j'},
        {"curves", required_argument, NULL, 'u'},
        {"now", required_argument, NULL, 'n'},
        {"server", required_argument, NULL, 's'},
        {"token-file", required_argument, NULL, 't'},
        {"json", no_argument, NULL, 'J'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    a->clk.now = -1;
    a->clk.wall = -1;
    int o;
    opterr = 0;
    optind = 1;
    while ((o = cli_getopt("submit", argc, argv, opts, 0, NULL)) != -1) {
        int rc = submit_option(a, o, argv);
        if (rc != 0)
            return rc == 1 ? 0 : rc;
    }
    if (a->plan && a->server)
        return cli_usage_error("submit", "--plan and --server exclude each "
                               "other: submit into a plan file or to a "
                               "server, not both");
    return -1;
}

/* Whether *a submits to a server: no --plan, and --server or
 * EFPLAN_SERVER. */
static int submit_to_server(const submit_args *a)
{
    const char *env_server = getenv("EFPLAN_SERVER");
    return !a->plan && (a->server || (env_server && env_server[0]));
}

/* A submit to a server: its usage checked against the operands from
 * optind on, then submit_server. The exit code. */
static int submit_remote(const submit_args *a, int argc, char **argv)
{
    if (a->curves || a->now_given)
        return cli_usage_error("submit", "--curves and --now are for "
                               "--plan (a server keeps its own curves "
                               "and clock)");
    if (optind + 1 < argc || (optind < argc && a->job)) {
        char q[128];
        return cli_usage_error("submit", "one job: a file or --job, not "
                               "both (unexpected argument \"%s\")",
                               ef_quote(argv[argc - 1], q, sizeof q));
    }
    if (optind >= argc && !a->job)
        return cli_usage_error("submit", "which job? give a file holding "
                               "one job object ('-': standard input) "
                               "or --job JSON");
    return submit_server(a->server, a->token_file, a->json,
                         optind < argc ? argv[optind] : NULL, a->job);
}

/* The usage of a submit into a plan file: -1 when it may go on, else
 * EXIT_USAGE (printed). */
static int submit_plan_usage(const submit_args *a, int argc, char **argv)
{
    if (optind < argc)
        return cli_usage_error("submit", "unexpected argument \"%s\"",
                               argv[optind]);
    if (a->plan && a->token_file)
        return cli_usage_error("submit", "--token-file is for --server (a "
                               "server), not --plan");
    if (!a->plan || !a->job)
        return cli_usage_error("submit", "--plan and --job are required "
                               "(or --server URL, or EFPLAN_SERVER, to "
                               "submit to a server)");
    return -1;
}

/* With the plan's lock held: when an apply follows the plan (apply_clock),
 * the job is planned from its clock on (a->clk), and (not --json or -q)
 * a note says so. */
static void submit_apply_note(submit_args *a)
{
    char state[PATH_MAX]; /* the apply's state directory */
    int live = 0;         /* whether the apply runs */
    int64_t at = 0;       /* its plan time now */
    if (!apply_clock(a->plan, state, sizeof state, &live, &at))
        return;
    /* the job cannot run before the apply's clock */
    if (a->clk.now < at) {
        a->clk.now = at;
        a->clk.wall = -1;
    }
    if (!a->json && !cli_cf.quiet) {
        char t[40];
        printf("note: efplan apply %s this plan (state directory %s, "
               "plan time %s): the job is planned from there, and the "
               "apply follows the rewritten plan at its next tick\n",
               live ? "is applying" : "stopped before the end of",
               state, cli_time(at, at, t, sizeof t));
    }
}

/* The text of an admitted or best-effort submit, the plan rewritten: the
 * old jobs whose decision changed, the verdict 'v', what became of the
 * jobs file. */
static void submit_say_accepted(const plan_submit_res *r,
                                const decision_view *v)
{
    const plan_job *nw = &r->p.jobs[r->ni];
    for (int k = 0; k < r->nchanges; k++) {
        if (k == 0)
            printf("note: jobs the plan had not admitted change "
                   "decision:\n");
        printf("  %s: %s -> %s\n", r->changes[k].id,
               plan_decision_name(r->changes[k].from),
               plan_decision_name(r->changes[k].to));
    }
    print_accepted(v);
    if (r->jobs_path && !r->jobs_csv)
        printf("%s %s %s the jobs file %s\n",
               r->ni < r->doc.njobs ? "replaced" : "added", nw->in->id,
               r->ni < r->doc.njobs ? "(resubmitted) in" : "to",
               r->jobs_path);
    else if (r->jobs_path)
        printf("note: the jobs file %s is a CSV trace (no command, env): "
               "not changed; apply this plan with --jobs FILE holding %s\n",
               r->jobs_path, nw->in->id);
    else
        printf("note: the plan names no jobs file: apply this plan with "
               "--jobs FILE holding %s\n", nw->in->id);
}

/* With the plan's lock held and the job decided (*r): say where its
 * submit_time came from, write the plan and the jobs file when it is
 * accepted, and say the verdict. The exit code. */
static int submit_verdict(const submit_args *a, plan_submit_res *r,
                          ef_err *e)
{
    const plan_job *nw = &r->p.jobs[r->ni]; /* the new job */
    char t1[40], t2[40];
    if (!a->json && !cli_cf.quiet && (r->submit_from == PLAN_SUBMIT_NOW ||
                                      r->submit_from == PLAN_SUBMIT_WALL))
        printf("submit_time: %s (%s; the plan's now is %s)\n",
               cli_time(r->submit_time, r->doc.now, t1, sizeof t1),
               r->submit_from == PLAN_SUBMIT_NOW ? "--now" : "the wall clock",
               cli_time(r->doc.now, r->doc.now, t2, sizeof t2));
    size_t tn = strlen(a->plan) + 16;
    char *tail = ef_malloc(tn); /* "; PLAN rewritten" */
    snprintf(tail, tn, "; %s rewritten", a->plan);
    decision_view v = {nw->in->id, r->decision, nw->planned_end,
                       nw->in->deadline, r->earliest, r->reason, r->broken,
                       r->doc.now, tail};
    int rc = 0; /* the exit code */
    if (r->decision == PLAN_REJECTED) {
        if (a->json)
            rc = verdict_json(&v, r, a->plan, 0);
        else
            print_rejected(&v);
        rc = rc ? rc : EXIT_INFEASIBLE;
    } else if (plan_submit_commit(r, a->plan, e) != EF_OK) {
        rc = cli_fail(e);
    } else if (a->json) {
        rc = verdict_json(&v, r, a->plan, 1);
    } else {
        submit_say_accepted(r, &v);
    }
    free(tail);
    return rc;
}

/* A submit into the plan file a->plan: read, decide and write under the
 * plan's lock, and never under an apply of the plan
 * (planner/planlock.h). The exit code. */
static int submit_plan(submit_args *a)
{
    if (a->clk.now < 0) { /* the wall clock, for a plan in Unix time */
        struct timespec ts;
        if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && ts.tv_sec >= 0)
            a->clk.wall = (int64_t)ts.tv_sec;
    }
    ef_err e = {0};
    plan_submit_res r; /* the decision, and the plan with the job */
    memset(&r, 0, sizeof r);
    r.earliest = -1;
    int lock = plan_lock(a->plan, NULL, &e); /* the plan's lock */
    if (lock < 0)
        return cli_fail(&e);
    submit_apply_note(a);
    int rc; /* the exit code */
    if (plan_submit(a->plan, a->job, a->curves, &a->clk, &r, &e) != EF_OK)
        rc = cli_fail(&e);
    else
        rc = submit_verdict(a, &r, &e);
    plan_submit_free(&r);
    plan_unlock(lock);
    return rc;
}

int cmd_submit(int argc, char **argv)
{
    submit_args a;
    int rc = submit_parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (submit_to_server(&a))
        return submit_remote(&a, argc, argv);
    rc = submit_plan_usage(&a, argc, argv);
    if (rc >= 0)
        return rc;
    return submit_plan(&a);
}
