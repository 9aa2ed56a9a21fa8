/* cmd_serve.c: "efplan serve": the queue service's daemon. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/util.h"
#include "model/jobs.h"
#include "model/overhead.h"
#include "planner/plan.h"
#include "service/http.h"
#include "service/limits.h"
#include "service/loop.h"
#include "service/retain.h"
#include "service/store.h"
#include "service/svc.h"
#include "service/token.h"

void help_serve(void)
{
    printf(
        "Usage: efplan serve --db FILE --cluster SPEC --curves DIR|A100|T4\n"
        "                    [--listen HOST:PORT] [--slot SECONDS]\n"
        "                    [--overhead fig12|reference|restart|none]\n"
        "                    [--replan-at HH:MM] [--tls-cert PEM --tls-key "
        "PEM]\n"
        "                    [--insecure-listen] [--port-file FILE] "
        "[--quiet]\n"
        "                    [--keep DURATION] [--keep-plans N]\n"
        "                    [--max-queued N] [--max-submit-rate N]\n"
        "                    [--backend local|slurm|dry-run [--nodes FILE]\n"
        "                     [--run-dir DIR] [--time-scale S]\n"
        "                     [--max-restarts N] [--lag FRACTION]\n"
        "                     [--job-user USER | --single-user]\n"
        "                     [--deadline-margin SECONDS]\n"
        "                     [--moves net|any] [--learn on|off]\n"
        "                     [--partition P] [--account A] [--qos Q]\n"
        "                     [--sbatch-arg ARG ...]]\n"
        "\n"
        "Run the queue service: the one durable source of truth of a job\n"
        "queue, which users submit to over HTTP (efplan submit --server,\n"
        "efplan jobs, show, cancel; or curl). Every submission is decided as\n"
        "efplan submit decides it: admitted only if its deadline is\n"
        "guaranteed and every job admitted before stays admitted. Answers\n"
        "are given after the change is on disk (SQLite, WAL, synchronous).\n"
        "The API is in README.md (\"Service\") and service/api.json.\n"
        "\n"
        "  --db FILE          the store (SQLite; created if absent, mode 0600)\n"
        "  --cluster SPEC     the cluster: nNgG, or a .csv/.json spec\n"
        "  --move-cluster     a store planned on another cluster moves to\n"
        "                     --cluster: jobs kept, every promise checked\n"
        "                     again there, the jobs it no longer holds for\n"
        "                     flagged at risk (logged; their event at_risk)\n"
        "  --curves DIR       throughput curves: a directory, A100 or T4\n"
        "  --listen ADDR      where to listen (default 127.0.0.1:8470; port 0:\n"
        "                     any free port, see --port-file). An address\n"
        "                     that is not loopback needs --tls-cert/--tls-key\n"
        "                     or --insecure-listen\n"
        "  --slot SECONDS     the plan's slot (default 60; a new store only)\n"
        "  --overhead MODEL   reconfiguration costs the plan keeps promises\n"
        "                     under (default fig12; a new store only)\n"
        "  --replan-at HH:MM  re-plan the whole queue daily at this UTC time,\n"
        "                     keeping every promise (POST /v1/replan does it\n"
        "                     now); each writes a dated plan snapshot into\n"
        "                     FILE.plans/\n"
        "  --tls-cert PEM     serve HTTPS with this certificate chain\n"
        "  --tls-key PEM      and this private key\n"
        "  --insecure-listen  allow plain HTTP on a non-loopback address\n"
        "  --port-file FILE   once listening, write the port there (atomic)\n"
        "  --request-timeout S  a request must arrive whole within S seconds\n"
        "                     of its head (default 30; then 408)\n"
        "  --header-timeout S a connection must send a request's head within\n"
        "                     S seconds (default 10; then it is closed)\n"
        "  --max-waiting N    connections waiting for a request (default 128);\n"
        "                     over it the one waiting longest is closed\n"
        "  --per-token N      requests under way per token (default 8; then\n"
        "                     429)\n"
        "  --quiet            no line per request on stderr\n"
        "\n"
        "Retention and limits (docs/service-scale.md):\n"
        "  --keep DURATION    delete jobs that ended (done, failed, cancelled,\n"
        "                     rejected) longer ago than this, with their\n"
        "                     events (default 30d; 90m, 12h, 2w, ...; forever\n"
        "                     or 0: keep all)\n"
        "  --keep-plans N     plan versions and snapshot files kept, newest\n"
        "                     first (default 100; 0: all)\n"
        "  --max-queued N     a user's jobs queued or running at once\n"
        "                     (default 1000; none: no limit)\n"
        "  --max-submit-rate N  a user's submissions per minute (default 600;\n"
        "                     none: no limit). Over either: HTTP 429 with\n"
        "                     Retry-After. A token's own limits come first\n"
        "                     (efplan token add --max-queued ...)\n"
        "\n"
        "The closed loop (without --backend the service only plans):\n"
        "  --backend B        run the plan on the cluster: local processes,\n"
        "                     slurm, or dry-run (nothing runs; jobs advance at\n"
        "                     their curve's speed). At every slot boundary and\n"
        "                     every event (submission, completion, failure,\n"
        "                     lag, drained node) it re-plans from the jobs'\n"
        "                     real progress and changes only what changed\n"
        "  --nodes FILE       the cluster's node names, one a line (slurm:\n"
        "                     default sinfo's)\n"
        "  --run-dir DIR      logs, progress and run files (default\n"
        "                     FILE.run next to the store)\n"
        "  --time-scale S     S plan seconds per wall second (default 1; for\n"
        "                     tests and demos: the service's clock)\n"
        "  --max-restarts N   relaunches of a failed job (default 2), then it\n"
        "                     is failed with its log\n"
        "  --lag FRACTION     a job this far behind its planned progress is\n"
        "                     re-planned at once (default 0.1)\n"
        "  --deadline-margin S  plan admitted jobs to end S seconds before\n"
        "                     their deadlines (default: one slot): what the\n"
        "                     plan cannot see (a reaction, a restart) comes\n"
        "                     out of it, and a job that cannot make it is\n"
        "                     flagged at risk while its deadline is ahead\n"
        "  --moves MODE       net (default): a running job keeps its GPUs\n"
        "                     unless a promise needs them or the move gains\n"
        "                     more over its remaining work than its restart\n"
        "                     costs; any: the paper's rule, every re-plan\n"
        "                     re-derives each allocation (for comparison; a\n"
        "                     new store only: a store keeps its plan's)\n"
        "  --learn on|off     on (default): plan each model's jobs at the\n"
        "                     speed and restart cost the loop measured of it\n"
        "                     (the store keeps them); off: measure and keep\n"
        "                     them, plan at the curve and the overhead model\n"
        "                     (for comparison)\n"
        "  --job-user USER    the Unix account that runs the jobs of a token\n"
        "                     without one (efplan token add --unix-user);\n"
        "                     default nobody. A job of a token with one runs\n"
        "                     as that account. Switching users needs root: a\n"
        "                     service that is not root runs every job as\n"
        "                     itself and refuses to start while more than one\n"
        "                     user (not an operator) holds tokens\n"
        "  --single-user      every job runs as the service, in its\n"
        "                     environment: every job can act as the service\n"
        "                     (read and change the store, the other jobs)\n"
        "  --partition P, --account A, --qos Q, --sbatch-arg ARG (repeatable)\n"
        "                     --backend slurm on a shared cluster: as efplan\n"
        "                     apply passes them to sbatch (efplan help apply)\n"
        "\n"
        "SIGINT or SIGTERM stops it after the requests under way.\n"
        "Exit codes: 0 stopped by a signal, 2 usage error (also: the store\n"
        "was planned on other curves, or on another cluster without\n"
        "--move-cluster), 3 invalid input, 5\n"
        "internal error (cannot listen, store failure).\n");
    cli_help_shared(0);
}

/* One log line on stderr, with its time as --time-zone says (UTC by
 * default; the loop's own times in the line follow the same zone). */
static void log_line(void *arg, const char *line)
{
    (void)arg;
    int64_t t = (int64_t)time(NULL);
    char ts[48];
    fprintf(stderr, "%s efplan serve: %s\n", cli_time(t, t, ts, sizeof ts),
            line);
}

static void log_quiet(void *arg, const char *line)
{
    (void)arg;
    if (strncmp(line, "http: ", 6) == 0)
        log_line(NULL, line);
}

/* "HH:MM" into seconds after midnight; -1 when malformed. */
static int parse_hhmm(const char *s)
{
    int h, m;
    char tail;
    if (strlen(s) != 5 || sscanf(s, "%2d:%2d%c", &h, &m, &tail) != 2 ||
        s[2] != ':' || h < 0 || h > 23 || m < 0 || m > 59)
        return -1;
    return h * 3600 + m * 60;
}

/* What the command line asks for. */
typedef struct serve_args {
    svc_config sc;
    srv_config hc;
    loop_opts lo;
    const char *port_file;
    int replan_at;        /* seconds after midnight UTC; -1: none */
    int single_user;
    const char *job_user; /* --job-user (NULL: nobody) */
    ret_opts ro;          /* --keep, --keep-plans */
} serve_args;

enum { O_TLS_CERT = 256, O_TLS_KEY, O_INSECURE, O_PORT_FILE, O_REPLAN_AT,
       O_REQ_TIMEOUT, O_QUIET, O_BACKEND, O_NODES, O_RUNDIR, O_SCALE,
       O_RESTARTS, O_LAG, O_MARGIN, O_HEAD_TIMEOUT, O_MAX_WAITING,
       O_PER_TOKEN, O_JOB_USER, O_SINGLE_USER, O_MOVE, O_MOVES, O_LEARN,
       O_KEEP, O_KEEP_PLANS, O_MAX_QUEUED, O_MAX_RATE };

/* A whole number option in lo..hi: 0 with *v, else the usage error's
 * exit code. */
static int int_opt(const char *opt, const char *arg, long lo, long hi,
                   const char *unit, int *v)
{
    char *end;
    errno = 0;
    long x = strtol(arg, &end, 10);
    if (errno || end == arg || *end || x < lo || x > hi)
        return cli_usage_error("serve", "%s: \"%s\" (expected %ld to %ld%s)",
                               opt, arg, lo, hi, unit);
    *v = (int)x;
    return 0;
}

/* One option of serve's table: -1 when taken, else the exit code. */
static int serve_option(serve_args *a, int o, const char *arg)
{
    int rc = 0;
    switch (o) {
    case 'd': a->sc.db = arg; break;
    case 'c': a->sc.cluster = arg; break;
    case 'u': a->sc.curves = arg; break;
    case 'l': a->hc.listen = arg; break;
    case 's':
        if (cli_parse_slot("serve", arg, &a->sc.slot) != 0)
            return EXIT_USAGE;
        break;
    case 'O': {
        int m = ovh_parse(arg);
        if (m < 0)
            return cli_usage_error("serve", "--overhead: \"%s\" (expected "
                                   "fig12, reference, restart or none)", arg);
        a->sc.overhead = m;
        break;
    }
    case O_REPLAN_AT:
        a->replan_at = parse_hhmm(arg);
        if (a->replan_at < 0)
            return cli_usage_error("serve", "--replan-at: \"%s\" (expected "
                                   "HH:MM, UTC, e.g. 02:30)", arg);
        break;
    case O_TLS_CERT: a->hc.tls_cert = arg; break;
    case O_TLS_KEY: a->hc.tls_key = arg; break;
    case O_INSECURE: a->hc.insecure_listen = 1; break;
    case O_PORT_FILE: a->port_file = arg; break;
    case O_REQ_TIMEOUT:
        rc = int_opt("--request-timeout", arg, 1, 3600, " seconds",
                     &a->hc.request_timeout);
        break;
    case O_HEAD_TIMEOUT:
        rc = int_opt("--header-timeout", arg, 1, 3600, " seconds",
                     &a->hc.header_timeout);
        break;
    case O_MAX_WAITING:
        rc = int_opt("--max-waiting", arg, 1, 512, "", &a->hc.max_pending);
        break;
    case O_PER_TOKEN:
        rc = int_opt("--per-token", arg, 1, 1000, "", &a->hc.per_token);
        break;
    case O_QUIET: a->hc.log = log_quiet; break;
    case O_BACKEND:
        if (cli_backend_option("serve", arg))
            return EXIT_USAGE;
        a->lo.backend = arg;
        break;
    case O_NODES: a->lo.nodes_file = arg; break;
    case O_RUNDIR: a->lo.state = arg; break;
    case O_SCALE:
        if (cli_scale_option("serve", arg, &a->sc.scale))
            return EXIT_USAGE;
        a->lo.scale = a->sc.scale;
        break;
    case O_RESTARTS:
        rc = int_opt("--max-restarts", arg, 0, 1000, "",
                     &a->lo.max_restarts);
        break;
    case O_LAG: {
        char *end;
        double v = strtod(arg, &end);
        if (*end || !(v > 0 && v < 1))
            return cli_usage_error("serve", "--lag: \"%s\" (expected a "
                                   "fraction between 0 and 1)", arg);
        a->lo.lag = v;
        break;
    }
    case O_MARGIN: {
        int v = 0;
        rc = int_opt("--deadline-margin", arg, 0, 86400 * 30, " seconds", &v);
        if (rc == 0)
            a->lo.margin = v;
        break;
    }
    case O_JOB_USER: {
        const char *why = token_unix_user_check(arg);
        if (why)
            return cli_usage_error("serve", "--job-user \"%s\": %s (%s)", arg,
                                   why, TOKEN_UNIX_RULE);
        a->job_user = arg;
        break;
    }
    case O_SINGLE_USER: a->single_user = 1; break;
    case O_MOVE: a->sc.move_cluster = 1; break;
    case O_MOVES:
        if (strcmp(arg, "net") != 0 && strcmp(arg, "any") != 0)
            return cli_usage_error("serve", "--moves: \"%s\" (expected net "
                                   "or any)", arg);
        a->sc.moves = strcmp(arg, "any") == 0 ? MOVES_ANY : MOVES_NET;
        break;
    case O_LEARN:
        if (strcmp(arg, "on") != 0 && strcmp(arg, "off") != 0)
            return cli_usage_error("serve", "--learn: \"%s\" (expected on "
                                   "or off)", arg);
        a->sc.learn_off = strcmp(arg, "off") == 0;
        break;
    case O_KEEP:
        if (ret_keep_parse(arg, &a->ro.keep) != 0)
            return cli_usage_error("serve", "--keep: \"%s\" (expected a "
                                   "duration: N with s, m, h, d or w, e.g. "
                                   "30d or 12h; or forever)", arg);
        a->sc.keep = a->ro.keep;
        break;
    case O_KEEP_PLANS:
        rc = int_opt("--keep-plans", arg, 0, 1000000, "", &a->ro.keep_plans);
        break;
    case O_MAX_QUEUED:
    case O_MAX_RATE: {
        int64_t v;
        const char *opt = o == O_MAX_QUEUED ? "--max-queued"
                                            : "--max-submit-rate";
        if (strcmp(arg, "default") == 0 ||
            lim_parse(arg, o == O_MAX_RATE, &v) != 0)
            return cli_usage_error("serve", "%s: \"%s\" (expected 1 to "
                                   "1000000000%s, or none)", opt, arg,
                                   o == O_MAX_RATE ? " a minute" : "");
        *(o == O_MAX_QUEUED ? &a->sc.max_queued : &a->sc.max_rate) =
            v > 0 ? v : 0;
        break;
    }
    case 'h': help_serve(); return EXIT_OK_;
    default: return -2;
    }
    return rc ? rc : -1;
}

/* The log line of a store moved to another cluster (--move-cluster). */
static void log_moved(const serve_args *a, svc *sv)
{
    svc_move_res m;
    svc_moved(sv, &m);
    char msg[800];
    if (!m.moved) {
        if (a->sc.move_cluster)
            log_line(NULL, "--move-cluster: the store is planned on this "
                     "cluster already: nothing to move");
        return;
    }
    snprintf(msg, sizeof msg, "moved the store from %d node(s) of %d GPUs "
             "to %d of %d (--cluster %s): %d job(s) kept, %d promise(s) "
             "checked again, %d at risk%s%s (plan version %" PRId64 ")",
             m.from_nodes, m.from_gpus, m.to_nodes, m.to_gpus,
             a->sc.cluster, m.kept, m.admitted, m.at_risk,
             m.at_risk ? ": " : "", m.at_risk_ids, m.version);
    log_line(NULL, msg);
}

/* Parse the command line into *a: -1 when it may go on, else the exit
 * code. */
static int serve_parse(int argc, char **argv, serve_args *a)
{
    static const struct option opts[] = {
        CLI_SLURM_OPTIONS,
        {"db", required_argument, NULL, 'd'},
        {"cluster", required_argument, NULL, 'c'},
        {"curves", required_argument, NULL, 'u'},
        {"listen", required_argument, NULL, 'l'},
        {"slot", required_argument, NULL, 's'},
        {"overhead", required_argument, NULL, 'O'},
        {"replan-at", required_argument, NULL, O_REPLAN_AT},
        {"tls-cert", required_argument, NULL, O_TLS_CERT},
        {"tls-key", required_argument, NULL, O_TLS_KEY},
        {"insecure-listen", no_argument, NULL, O_INSECURE},
        {"port-file", required_argument, NULL, O_PORT_FILE},
        {"request-timeout", required_argument, NULL, O_REQ_TIMEOUT},
        {"header-timeout", required_argument, NULL, O_HEAD_TIMEOUT},
        {"max-waiting", required_argument, NULL, O_MAX_WAITING},
        {"per-token", required_argument, NULL, O_PER_TOKEN},
        {"quiet", no_argument, NULL, O_QUIET},
        {"backend", required_argument, NULL, O_BACKEND},
        {"nodes", required_argument, NULL, O_NODES},
        {"run-dir", required_argument, NULL, O_RUNDIR},
        {"time-scale", required_argument, NULL, O_SCALE},
        {"max-restarts", required_argument, NULL, O_RESTARTS},
        {"lag", required_argument, NULL, O_LAG},
        {"deadline-margin", required_argument, NULL, O_MARGIN},
        {"job-user", required_argument, NULL, O_JOB_USER},
        {"single-user", no_argument, NULL, O_SINGLE_USER},
        {"move-cluster", no_argument, NULL, O_MOVE},
        {"moves", required_argument, NULL, O_MOVES},
        {"learn", required_argument, NULL, O_LEARN},
        {"keep", required_argument, NULL, O_KEEP},
        {"keep-plans", required_argument, NULL, O_KEEP_PLANS},
        {"max-queued", required_argument, NULL, O_MAX_QUEUED},
        {"max-submit-rate", required_argument, NULL, O_MAX_RATE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int o;
    opterr = 0;
    while ((o = cli_getopt("serve", argc, argv, opts, 0, "sbatch-arg")) != -1) {
        int so = cli_slurm_option("serve", o, optarg, &a->lo.slurm);
        if (so > 0)
            return so;
        if (so == 0)
            continue;
        int rc = serve_option(a, o, optarg);
        if (rc == -2)
            return cli_option_error("serve", o, argv[optind - 1]);
        if (rc >= 0)
            return rc;
    }
    if (cli_cf.quiet) /* -q, as --quiet */
        a->hc.log = log_quiet;
    if (optind < argc)
        return cli_usage_error("serve", "unexpected argument \"%s\"",
                               argv[optind]);
    if (!a->sc.db || !a->sc.cluster || !a->sc.curves)
        return cli_usage_error("serve", "--db, --cluster and --curves are "
                               "required");
    if (!a->lo.backend && (a->lo.nodes_file || a->lo.state))
        return cli_usage_error("serve", "--nodes and --run-dir go with "
                               "--backend");
    if (a->single_user && a->job_user)
        return cli_usage_error("serve", "--job-user and --single-user: one "
                               "or the other (--single-user runs every job "
                               "as the service)");
    if ((a->single_user || a->job_user) &&
        (!a->lo.backend || strcmp(a->lo.backend, "dry-run") == 0))
        return cli_usage_error("serve", "--job-user and --single-user go "
                               "with --backend local or slurm (the jobs "
                               "that run)");
    if (cli_slurm_only("serve", &a->lo.slurm, a->lo.backend, 0) != 0)
        return EXIT_USAGE;
    a->lo.zone = cli_zone(EF_HT_WALL_MIN); /* --time-zone */
    a->ro.zone = a->lo.zone;
    /* retention runs once a minute of the service's clock, at most once
     * a wall second */
    double sc = a->sc.scale > 0 ? a->sc.scale : 1;
    a->ro.period = 60 / sc < 1 ? 1 : 60 / sc;
    return -1;
}

/* Who the jobs run as, checked before anything listens: the job user
 * exists and is not root (as root), or (not root) the store holds at most
 * one user that is not an operator. -1 when it may go on, else the exit
 * code (the message printed). */
static int serve_users(serve_args *a, svc *sv)
{
    if (!a->lo.backend || strcmp(a->lo.backend, "dry-run") == 0 ||
        a->single_user)
        return -1;
    ef_err e = {0};
    a->lo.job_user = a->job_user ? a->job_user : "nobody";
    if (geteuid() == 0) {
        exec_user u;
        if (exec_user_lookup(a->lo.job_user, &u, &e) != EF_OK)
            return cli_usage_error("serve", "--job-user %s: %s (create the "
                                   "account, or name another)",
                                   a->lo.job_user, e.msg);
        if (u.uid == 0)
            return cli_usage_error("serve", "--job-user %s is uid 0: jobs "
                                   "would run as root (name an unprivileged "
                                   "account)", a->lo.job_user);
        return -1;
    }
    int64_t users = 0;
    svc_lock(sv);
    int rc = store_users_count(svc_store(sv), &users, &e);
    svc_unlock(sv);
    if (rc != EF_OK)
        return cli_fail(&e);
    if (users > 1)
        return cli_usage_error("serve", "--backend %s: %lld users hold tokens "
                               "in %s, and this service (uid %ld, not root) "
                               "cannot run their jobs as their own accounts: "
                               "every job would act as the service (read the "
                               "store, the others' jobs). Run it as root with "
                               "efplan token add NAME --unix-user USER, or "
                               "give --single-user to accept that",
                               a->lo.backend, (long long)users, a->sc.db,
                               (long)geteuid());
    return -1;
}

/* Serve until SIGINT or SIGTERM, re-planning daily at a->replan_at. */
static void serve_wait(serve_args *a, svc *sv, const sigset_t *stop)
{
    char msg[600];
    /* the day (Unix days) of the last daily re-plan: none is owed for a
     * time of day already past when the service starts */
    int64_t t0 = (int64_t)time(NULL);
    int64_t last_day = t0 / 86400 - (t0 % 86400 < a->replan_at ? 1 : 0);
    for (;;) {
        struct timespec ts = {1, 0};
        int sig = sigtimedwait(stop, NULL, &ts);
        if (sig == SIGINT || sig == SIGTERM) {
            snprintf(msg, sizeof msg, "%s: stopping", strsignal(sig));
            log_line(NULL, msg);
            return;
        }
        if (a->replan_at < 0)
            continue;
        int64_t now = (int64_t)time(NULL);
        if (now / 86400 > last_day && now % 86400 >= a->replan_at) {
            last_day = now / 86400;
            svc_reply r;
            svc_replan(sv, NULL, svc_now(sv), &r);
            snprintf(msg, sizeof msg, "daily re-plan: %d %.*s", r.status,
                     (int)strcspn(r.body, "\n"), r.body);
            log_line(NULL, msg);
            svc_reply_free(&r);
        }
    }
}

/* Log what the loop did, then stop it (what runs keeps running). */
static void serve_stop_loop(loop *lp)
{
    if (lp) {
        loop_stats ls;
        loop_get_stats(lp, &ls);
        char msg[600];
        snprintf(msg, sizeof msg, "loop: %d re-plans, %d launches, %d stops "
                 "(%d changes kept: the hold rule), %d restarts, %d failed, "
                 "%d done, %d lags since it started; what runs keeps running "
                 "(a restart adopts it)", ls.replans, ls.launches, ls.stops,
                 ls.holds, ls.restarts, ls.failed, ls.done, ls.lag);
        log_line(NULL, msg);
    }
    loop_stop(lp); /* the jobs keep running: a restart adopts them */
}

int cmd_serve(int argc, char **argv)
{
    serve_args a;
    memset(&a, 0, sizeof a);
    a.sc.slot = 60;
    a.sc.overhead = OVH_FIG12;
    a.hc.log = log_line;
    a.replan_at = -1;
    loop_opts_default(&a.lo);
    a.lo.backend = NULL;
    a.lo.say = log_line;
    a.ro.keep = a.sc.keep = RET_KEEP_DEFAULT;
    a.ro.keep_plans = RET_KEEP_PLANS_DEFAULT;
    a.ro.say = log_line;
    a.sc.max_queued = 1000;
    a.sc.max_rate = 600;
    int rc = serve_parse(argc, argv, &a);
    if (rc >= 0) {
        cli_slurm_free(&a.lo.slurm);
        return rc;
    }
    /* no relative times in the queue a server keeps (model/jobs.h) */
    queue_set_now(-1);
    /* what the service makes is its own: the store, its snapshots, the
     * run directory's files (a job's directory is given to its user) */
    umask(077);
    char rundir[4200];
    if (a.lo.backend && !a.lo.state) {
        snprintf(rundir, sizeof rundir, "%s.run", a.sc.db);
        a.lo.state = rundir;
    }
    /* the signals that stop it are taken by sigtimedwait below: blocked
     * before any thread starts, so every thread inherits the mask */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    ef_err e = {0};
    svc *sv = NULL;
    loop *lp = NULL;
    srv *hs = NULL;
    ret *rt = NULL;
    if (svc_open(&sv, &a.sc, (int64_t)time(NULL), &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    rc = serve_users(&a, sv);
    if (rc >= 0)
        goto out;
    log_moved(&a, sv);
    if ((a.lo.backend && loop_start(&lp, sv, &a.lo, &e) != EF_OK) ||
        ret_start(&rt, sv, &a.ro, &e) != EF_OK ||
        srv_start(&hs, sv, &a.hc, &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    char msg[600];
    /* the address as given, with the port it got */
    const char *la = a.hc.listen ? a.hc.listen : "127.0.0.1:8470";
    int hl = (int)(strrchr(la, ':') - la);
    snprintf(msg, sizeof msg, "listening on %s://%.*s:%d, store %s",
             a.hc.tls_cert ? "https" : "http", hl, la, srv_port(hs), a.sc.db);
    log_line(NULL, msg);
    if (a.port_file) {
        char txt[32];
        snprintf(txt, sizeof txt, "%d\n", srv_port(hs));
        if (ef_write_file_atomic(a.port_file, txt, strlen(txt), &e) !=
            EF_OK) {
            rc = cli_fail(&e);
            goto out;
        }
    }
    serve_wait(&a, sv, &stop);
    rc = EXIT_OK_;
out:
    srv_stop(hs);
    ret_stop(rt);
    if (rc == EXIT_OK_)
        serve_stop_loop(lp);
    else
        loop_stop(lp);
    svc_close(sv);
    cli_slurm_free(&a.lo.slurm);
    return rc;
}
