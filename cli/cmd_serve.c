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
#include <time.h>

#include "cli/cli.h"
#include "common/util.h"
#include "model/jobs.h"
#include "model/overhead.h"
#include "service/http.h"
#include "service/loop.h"
#include "service/svc.h"

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
        "                    [--backend local|slurm|dry-run [--nodes FILE]\n"
        "                     [--run-dir DIR] [--time-scale S]\n"
        "                     [--max-restarts N] [--lag FRACTION]\n"
        "                     [--deadline-margin SECONDS]\n"
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
        "                     (default 30; then 408)\n"
        "  --quiet            no line per request on stderr\n"
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
        "  --partition P, --account A, --qos Q, --sbatch-arg ARG (repeatable)\n"
        "                     --backend slurm on a shared cluster: as efplan\n"
        "                     apply passes them to sbatch (efplan help apply)\n"
        "\n"
        "SIGINT or SIGTERM stops it after the requests under way.\n"
        "Exit codes: 0 stopped by a signal, 2 usage error (also: the store\n"
        "was planned on another cluster or curves), 3 invalid input, 5\n"
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

int cmd_serve(int argc, char **argv)
{
    enum { O_TLS_CERT = 256, O_TLS_KEY, O_INSECURE, O_PORT_FILE, O_REPLAN_AT,
           O_REQ_TIMEOUT, O_QUIET, O_BACKEND, O_NODES, O_RUNDIR, O_SCALE,
           O_RESTARTS, O_LAG, O_MARGIN };
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
        {"quiet", no_argument, NULL, O_QUIET},
        {"backend", required_argument, NULL, O_BACKEND},
        {"nodes", required_argument, NULL, O_NODES},
        {"run-dir", required_argument, NULL, O_RUNDIR},
        {"time-scale", required_argument, NULL, O_SCALE},
        {"max-restarts", required_argument, NULL, O_RESTARTS},
        {"lag", required_argument, NULL, O_LAG},
        {"deadline-margin", required_argument, NULL, O_MARGIN},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    svc_config sc = {.slot = 60, .overhead = OVH_FIG12};
    srv_config hc = {.log = log_line};
    const char *port_file = NULL;
    int replan_at = -1;
    loop_opts lo;
    loop_opts_default(&lo);
    lo.backend = NULL;
    lo.say = log_line;
    int o;
    opterr = 0;
    while ((o = cli_getopt("serve", argc, argv, opts, 0, "sbatch-arg")) != -1) {
        int so = cli_slurm_option("serve", o, optarg, &lo.slurm);
        if (so > 0)
            return so;
        if (so == 0)
            continue;
        switch (o) {
        case 'd': sc.db = optarg; break;
        case 'c': sc.cluster = optarg; break;
        case 'u': sc.curves = optarg; break;
        case 'l': hc.listen = optarg; break;
        case 's':
            if (cli_parse_slot("serve", optarg, &sc.slot) != 0)
                return EXIT_USAGE;
            break;
        case 'O': {
            int m = ovh_parse(optarg);
            if (m < 0)
                return cli_usage_error("serve", "--overhead: \"%s\" (expected "
                                       "fig12, reference, restart or none)",
                                       optarg);
            sc.overhead = m;
            break;
        }
        case O_REPLAN_AT:
            replan_at = parse_hhmm(optarg);
            if (replan_at < 0)
                return cli_usage_error("serve", "--replan-at: \"%s\" "
                                       "(expected HH:MM, UTC, e.g. 02:30)",
                                       optarg);
            break;
        case O_TLS_CERT: hc.tls_cert = optarg; break;
        case O_TLS_KEY: hc.tls_key = optarg; break;
        case O_INSECURE: hc.insecure_listen = 1; break;
        case O_PORT_FILE: port_file = optarg; break;
        case O_REQ_TIMEOUT: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 3600)
                return cli_usage_error("serve", "--request-timeout: \"%s\" "
                                       "(expected 1 to 3600 seconds)",
                                       optarg);
            hc.request_timeout = (int)v;
            break;
        }
        case O_QUIET: hc.log = log_quiet; break;
        case O_BACKEND:
            if (strcmp(optarg, "local") && strcmp(optarg, "slurm") &&
                strcmp(optarg, "dry-run"))
                return cli_usage_error("serve", "--backend: \"%s\" (expected "
                                       "local, slurm or dry-run)", optarg);
            lo.backend = optarg;
            break;
        case O_NODES: lo.nodes_file = optarg; break;
        case O_RUNDIR: lo.state = optarg; break;
        case O_SCALE: {
            char *end;
            double v = strtod(optarg, &end);
            if (*end || !(v >= 0.001 && v <= 1e6))
                return cli_usage_error("serve", "--time-scale: \"%s\" "
                                       "(expected 0.001 to 1000000)", optarg);
            sc.scale = v;
            lo.scale = v;
            break;
        }
        case O_RESTARTS: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 0 || v > 1000)
                return cli_usage_error("serve", "--max-restarts: \"%s\" "
                                       "(expected 0 to 1000)", optarg);
            lo.max_restarts = (int)v;
            break;
        }
        case O_LAG: {
            char *end;
            double v = strtod(optarg, &end);
            if (*end || !(v > 0 && v < 1))
                return cli_usage_error("serve", "--lag: \"%s\" (expected a "
                                       "fraction between 0 and 1)", optarg);
            lo.lag = v;
            break;
        }
        case O_MARGIN: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 0 || v > 86400 * 30)
                return cli_usage_error("serve", "--deadline-margin: \"%s\" "
                                       "(expected 0 to 2592000 seconds)",
                                       optarg);
            lo.margin = v;
            break;
        }
        case 'h': help_serve(); return EXIT_OK_;
        default: return cli_option_error("serve", o, argv[optind - 1]);
        }
    }
    if (cli_cf.quiet) /* -q, as --quiet */
        hc.log = log_quiet;
    /* no relative times in the queue a server keeps (model/jobs.h) */
    queue_set_now(-1);
    if (optind < argc)
        return cli_usage_error("serve", "unexpected argument \"%s\"",
                               argv[optind]);
    if (!sc.db || !sc.cluster || !sc.curves)
        return cli_usage_error("serve", "--db, --cluster and --curves are "
                               "required");
    if (!lo.backend && (lo.nodes_file || lo.state))
        return cli_usage_error("serve", "--nodes and --run-dir go with "
                               "--backend");
    if (cli_slurm_only("serve", &lo.slurm, lo.backend, 0) != 0)
        return EXIT_USAGE;
    lo.zone = cli_zone(EF_HT_WALL_MIN); /* --time-zone */
    char rundir[4200];
    if (lo.backend && !lo.state) {
        snprintf(rundir, sizeof rundir, "%s.run", sc.db);
        lo.state = rundir;
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
    if (svc_open(&sv, &sc, (int64_t)time(NULL), &e) != EF_OK)
        return cli_fail(&e);
    loop *lp = NULL;
    if (lo.backend && loop_start(&lp, sv, &lo, &e) != EF_OK) {
        svc_close(sv);
        return cli_fail(&e);
    }
    srv *hs = NULL;
    if (srv_start(&hs, sv, &hc, &e) != EF_OK) {
        loop_stop(lp);
        svc_close(sv);
        return cli_fail(&e);
    }
    char msg[600];
    /* the address as given, with the port it got */
    const char *la = hc.listen ? hc.listen : "127.0.0.1:8470";
    int hl = (int)(strrchr(la, ':') - la);
    snprintf(msg, sizeof msg, "listening on %s://%.*s:%d, store %s",
             hc.tls_cert ? "https" : "http", hl, la, srv_port(hs), sc.db);
    log_line(NULL, msg);
    if (port_file) {
        char txt[32];
        snprintf(txt, sizeof txt, "%d\n", srv_port(hs));
        if (ef_write_file_atomic(port_file, txt, strlen(txt), &e) != EF_OK) {
            srv_stop(hs);
            loop_stop(lp);
            svc_close(sv);
            return cli_fail(&e);
        }
    }
    /* the day (Unix days) of the last daily re-plan: none is owed for a
     * time of day already past when the service starts */
    int64_t t0 = (int64_t)time(NULL);
    int64_t last_day = t0 / 86400 - (t0 % 86400 < replan_at ? 1 : 0);
    for (;;) {
        struct timespec ts = {1, 0};
        int sig = sigtimedwait(&stop, NULL, &ts);
        if (sig == SIGINT || sig == SIGTERM) {
            snprintf(msg, sizeof msg, "%s: stopping", strsignal(sig));
            log_line(NULL, msg);
            break;
        }
        if (replan_at < 0)
            continue;
        int64_t now = (int64_t)time(NULL);
        if (now / 86400 > last_day && now % 86400 >= replan_at) {
            last_day = now / 86400;
            svc_reply r;
            svc_replan(sv, NULL, svc_now(sv), &r);
            snprintf(msg, sizeof msg, "daily re-plan: %d %.*s", r.status,
                     (int)strcspn(r.body, "\n"), r.body);
            log_line(NULL, msg);
            svc_reply_free(&r);
        }
    }
    srv_stop(hs);
    if (lp) {
        loop_stats ls;
        loop_get_stats(lp, &ls);
        snprintf(msg, sizeof msg, "loop: %d re-plans, %d launches, %d stops, "
                 "%d restarts, %d failed, %d done, %d lags since it started; "
                 "what runs keeps running (a restart adopts it)", ls.replans,
                 ls.launches, ls.stops, ls.restarts, ls.failed, ls.done,
                 ls.lag);
        log_line(NULL, msg);
    }
    loop_stop(lp); /* the jobs keep running: a restart adopts them */
    svc_close(sv);
    cli_slurm_free(&lo.slurm);
    return EXIT_OK_;
}
