/* cmd_nightly.c: "efplan nightly": one run per night, from a timer: merge
 * the users' queue with what the state folder remembers, plan from now
 * keeping earlier promises, apply until the next night, remember. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/util.h"
#include "executor/exec.h"
#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "planner/plan.h"
#include "planner/planio.h"

void help_nightly(void)
{
    printf(
        "Usage: efplan nightly --queue FILE --state DIR --cluster SPEC\n"
        "                      --curves DIR|A100|T4\n"
        "                      [--backend local|slurm|dry-run] [--until TIME]\n"
        "                      [--now T] [--time-scale F] [--slot SECONDS]\n"
        "                      [--overhead fig12|reference|restart|none]\n"
        "                      [--surplus gain|reference] [--elastic-batch]\n"
        "                      [--nodes FILE] [--partition P] [--account A]\n"
        "                      [--qos Q] [--sbatch-arg ARG ...]\n"
        "\n"
        "One run per night, for a timer: take DIR's lock, merge the users'\n"
        "queue FILE (by job id) with what DIR remembers of every earlier\n"
        "night (each job's progress and placement, its promise, the jobs\n"
        "finished or failed), plan from now with every earlier promise kept\n"
        "(a job admitted on an earlier night stays admitted: at worst it is\n"
        "flagged at risk), write the night's plan, jobs file and chart as\n"
        "DIR/plans/DATE.json, DATE.jobs.json and DATE.svg (DATE the night's\n"
        "start; a second night of one date gets DATE.2, ...: never\n"
        "overwritten; DIR/tonight.json links to the plan), apply it until\n"
        "--until, and write what the next night needs, DIR/queue.json,\n"
        "atomically, whatever the exit code.\n"
        "\n"
        "  --queue FILE      the users' queue (JSON or CSV): a job added is\n"
        "                    planned, a job removed is dropped (stopped if it\n"
        "                    runs), a job edited is planned as edited\n"
        "  --state DIR       the state folder (created): queue.json, plans/,\n"
        "                    apply/ (the journal, logs, progress files,\n"
        "                    checkpoints and state.json of every night)\n"
        "  --cluster SPEC    nNgG shorthand (n16g8), or a .csv/.json spec\n"
        "  --curves DIR      curve directory, or a bundled set: A100, T4\n"
        "  --backend B       local (default), slurm or dry-run (plans and\n"
        "                    prints the night's actions; remembers nothing:\n"
        "                    nothing in DIR is written; the plan is made in\n"
        "                    a private folder under $TMPDIR, removed after)\n"
        "  --until TIME      stop applying at plan time TIME (seconds,\n"
        "                    ISO-8601 or now+DURATION from the night's\n"
        "                    start); default: the next night's start, 24 h\n"
        "                    on, plus 30 minutes for the next run to take\n"
        "                    over (what still runs then is checkpointed)\n"
        "  --now T           the plan time of DIR's first night (default:\n"
        "                    the wall clock); later nights read DIR's clock\n"
        "  --time-scale F    DIR's clock runs F times faster (tests, demos);\n"
        "                    its first night only, like --now\n"
        "  --slot, --overhead, --surplus, --elastic-batch: as efplan plan\n"
        "  --nodes, --partition, --account, --qos, --sbatch-arg: as efplan\n"
        "                    apply\n"
        "\n"
        "A run that finds the previous night's run still applying asks it to\n"
        "hand over (DIR/handover) and waits for it: it leaves its jobs\n"
        "running, and the new plan keeps every job whose allocation stays\n"
        "the same where it runs. SIGTERM hands over too (systemctl restart\n"
        "by the timer units make install puts in SYSTEMDDIR). A run killed and run again resumes its\n"
        "night from DIR's journal: nothing is launched twice. A queue FILE\n"
        "that cannot be read (a typo in a hand edit, a truncated write)\n"
        "never stops the cluster: the error is printed with its\n"
        "file:line:col, the night plans DIR's own jobs (every promise kept\n"
        "running) and applies them, and exits 3.\n"
        "\n"
        "During the day, efplan submit --plan DIR/tonight.json --job JSON\n"
        "answers by the usual rule and the running night picks the new plan\n"
        "up at its next tick.\n"
        "\n"
        "Exit codes (what the night did, as efplan apply says it): 0 the\n"
        "night was applied, 2 usage error, 3 invalid input (the queue FILE:\n"
        "the night still ran on DIR's jobs; or the cluster, curves, DIR),\n"
        "4 applied but some job failed (DIR/apply/state.json lists it), 5\n"
        "the cluster failed or cannot be reached, or the previous run did\n"
        "not hand over (run the same command again), 9 applied but an\n"
        "admitted job is not done by its deadline.\n");
    cli_help_shared(0);
}

typedef struct night_args {
    const char *queue, *state, *cluster, *curves, *until;
    int now_given, scale_given;
    int dry;              /* --backend dry-run: DIR is not written */
    int64_t now;
    plan_opts po;
    exec_opts eo;
} night_args;


static char handover_path[PATH_MAX + 16];
static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
    (void)sig;
    got_term = 1;
}

/* exec_opts.handover: the next run asks for DIR/handover, or SIGTERM
 * came (a timer's restart, systemctl stop: the jobs keep running). */
static int want_handover(void *arg)
{
    (void)arg;
    return got_term || access(handover_path, F_OK) == 0;
}

static int always(void *arg)
{
    (void)arg;
    return 1;
}

/* Parse the command line into *a. Returns 0 or the usage exit code
 * (printed); -1 after --help. */
static int parse(int argc, char **argv, night_args *a)
{
    static const struct option opts[] = {
        CLI_SLURM_OPTIONS,
        {"queue", required_argument, NULL, 'Q'},
        {"state", required_argument, NULL, 'd'},
        {"cluster", required_argument, NULL, 'c'},
        {"curves", required_argument, NULL, 'u'},
        {"backend", required_argument, NULL, 'b'},
        {"until", required_argument, NULL, 'U'},
        {"now", required_argument, NULL, 'n'},
        {"time-scale", required_argument, NULL, 'f'},
        {"slot", required_argument, NULL, 's'},
        {"overhead", required_argument, NULL, 'O'},
        {"surplus", required_argument, NULL, 'S'},
        {"elastic-batch", no_argument, NULL, 'E'},
        {"nodes", required_argument, NULL, 'N'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int o;
    opterr = 0;
    optind = 1;
    while ((o = cli_getopt("nightly", argc, argv, opts, 0, "sbatch-arg")) !=
           -1) {
        int so = cli_slurm_option("nightly", o, optarg, &a->eo.slurm);
        if (so >= 0) {
            if (so == 0)
                continue;
            return so;
        }
        switch (o) {
        case 'Q': a->queue = optarg; break;
        case 'd': a->state = optarg; break;
        case 'c': a->cluster = optarg; break;
        case 'u': a->curves = optarg; break;
        case 'U': a->until = optarg; break;
        case 'N': a->eo.nodes_file = optarg; break;
        case 'E': a->po.elastic_batch = 1; break;
        case 'b':
            if (cli_backend_option("nightly", optarg))
                return EXIT_USAGE;
            a->eo.backend = optarg;
            break;
        case 'n':
            if (cli_parse_now("nightly", optarg, &a->now) != 0)
                return EXIT_USAGE;
            a->now_given = 1;
            break;
        case 'f':
            if (cli_scale_option("nightly", optarg, &a->eo.scale))
                return EXIT_USAGE;
            a->scale_given = 1;
            break;
        case 's':
            if (cli_parse_slot("nightly", optarg, &a->po.slot) != 0)
                return EXIT_USAGE;
            break;
        case 'S':
            if (strcmp(optarg, "gain") == 0)
                a->po.surplus = SURPLUS_GAIN;
            else if (strcmp(optarg, "reference") == 0)
                a->po.surplus = SURPLUS_REFERENCE;
            else
                return cli_usage_error("nightly", "--surplus: \"%s\" "
                                       "(expected gain or reference)",
                                       optarg);
            break;
        case 'O': {
            int m = ovh_parse(optarg);
            if (m < 0)
                return cli_usage_error("nightly", "--overhead: \"%s\" "
                                       "(expected fig12, reference, restart "
                                       "or none)", optarg);
            a->po.overhead = (ovh_mode)m;
            break;
        }
        case 'h': help_nightly(); return -1;
        default:
            return cli_option_error("nightly", o, argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("nightly", "unexpected argument \"%s\"",
                               argv[optind]);
    if (!a->queue || !a->state || !a->cluster || !a->curves)
        return cli_usage_error("nightly", "--queue, --state, --cluster and "
                               "--curves are required");
    if (cli_slurm_only("nightly", &a->eo.slurm, a->eo.backend, 1) != 0)
        return EXIT_USAGE;
    return 0;
}

/* Take DIR's lock (DIR/lock), asking a run that holds it to hand over
 * (DIR/handover) and waiting for it (at most 'wait' seconds). Returns
 * the descriptor, or -1 with *e filled. */
static int lock_state(const char *dir, double wait, ef_err *e)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        ef_fail(e, EF_E_INPUT, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        char mine[32];
        snprintf(mine, sizeof mine, "%ld\n", (long)getpid());
        if (ef_write_file_atomic(handover_path, mine, strlen(mine), e) !=
            EF_OK) {
            close(fd);
            return -1;
        }
        if (!cli_cf.quiet)
            fprintf(stderr, "nightly: %s is held by a running night (pid "
                    "%s): asking it to hand over\n", dir,
                    pid[0] ? pid : "unknown");
        int got = 0;
        for (double waited = 0; waited < wait; waited += 0.05) {
            if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
                got = 1;
                break;
            }
            struct timespec ts = {0, 50000000};
            nanosleep(&ts, NULL);
        }
        if (!got) {
            close(fd);
            unlink(handover_path);
            ef_fail(e, EF_E_INTERNAL, "%s: the running night (pid %s) did "
                    "not hand over within %g s; run again", dir,
                    pid[0] ? pid : "unknown", wait);
            return -1;
        }
    }
    unlink(handover_path);
    char line[32];
    int n = snprintf(line, sizeof line, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)n, 0) != n) {
        /* the pid is for messages only */
    }
    return fd;
}

/* The date of plan time t (UTC) as YYYY-MM-DD. */
static void date_of(int64_t t, char *dst, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(dst, len, "%Y-%m-%d", &tm);
}

/* PLANS/NAME for the night starting at 'now', NAME its date (then
 * DATE.2, DATE.3, ...: the first of whose .json, .jobs.json and .svg
 * none exists), into base (without extension). */
static void night_name(const char *plans, int64_t now, char *base,
                       size_t len)
{
    char date[32];
    date_of(now, date, sizeof date);
    for (int k = 1;; k++) {
        char f[PATH_MAX + 160];
        if (k == 1)
            snprintf(base, len, "%s/%s", plans, date);
        else
            snprintf(base, len, "%s/%s.%d", plans, date, k);
        int taken = 0;
        static const char *const ext[] = {".json", ".jobs.json", ".svg"};
        for (int x = 0; x < 3; x++) {
            snprintf(f, sizeof f, "%s%s", base, ext[x]);
            taken |= access(f, F_OK) == 0;
        }
        if (!taken)
            return;
    }
}

/* Write the memory m to DIR/queue.json atomically. */
static int remember(const exec_night *m, const char *dir, ef_err *e)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/queue.json", dir);
    char *text = exec_night_text(m);
    int rc = ef_write_file_atomic(path, text, strlen(text), e);
    free(text);
    return rc;
}

/* DIR/tonight.json -> plans/NAME.json (a link replaced atomically). */
static void link_tonight(const char *dir, const char *plan_path)
{
    char tmp[PATH_MAX + 32], to[PATH_MAX + 16];
    const char *slash = strrchr(plan_path, '/');
    char rel[PATH_MAX + 256];
    snprintf(rel, sizeof rel, "plans/%s", slash ? slash + 1 : plan_path);
    snprintf(tmp, sizeof tmp, "%s/.tonight.%ld", dir, (long)getpid());
    snprintf(to, sizeof to, "%s/tonight.json", dir);
    unlink(tmp);
    if (symlink(rel, tmp) == 0 && rename(tmp, to) != 0)
        unlink(tmp);
}

/* Plan the night: the merged queue at jobs_path, written by the caller,
 * planned from a->po.now; plan file and chart at base.json / base.svg. */
static int plan_night(night_args *a, const char *base, const char *jobs_path,
                      plan *p, job_queue *q, curve_set *cs, cluster *c,
                      ef_err *e)
{
    if (cli_load_inputs(a->cluster, a->curves, jobs_path, c, cs, q, e) !=
        EF_OK)
        return EF_ERR;
    if (plan_build(p, q, c, &a->po, e) != EF_OK)
        return EF_ERR;
    if (plan_check(p, e) != EF_OK) {
        ef_prefix(e, "plan failed its own check: ");
        e->kind = EF_E_INTERNAL;
        return EF_ERR;
    }
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s.json", base);
    plan_doc d;
    size_t n;
    char *jf = plan_jobs_file_for(path, jobs_path);
    plan_doc_for_file(&d, p, jf, a->curves, PLAN_V2);
    char *text = plan_doc_json(&d, &n);
    plan_doc_free(&d);
    free(jf);
    int rc = ef_write_file_atomic(path, text, n, e);
    free(text);
    if (rc != EF_OK)
        return EF_ERR;
    ef_buf svg = {0};
    plan_svg(p, cli_zone(p->now), &svg);
    snprintf(path, sizeof path, "%s.svg", base);
    rc = ef_write_file_atomic(path, svg.s, svg.n, e);
    free(svg.s);
    return rc;
}

/* The clock of DIR's journal, when it has one: *now its plan time now
 * (rounded down), *scale its speed; 1 returned. 0 when none. */
static int state_clock(const char *apply_dir, int64_t *now, double *scale)
{
    exec_look lk;
    ef_err e2 = {0};
    if (exec_state_look(apply_dir, &lk, &e2) != EF_OK || !lk.begun)
        return 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double wall = (double)ts.tv_sec + ts.tv_nsec / 1e9;
    *now = (int64_t)floor((double)lk.anchor_plan +
                          (wall - lk.anchor_wall) * lk.scale);
    *scale = lk.scale;
    return 1;
}

/* Apply plan_path (with its jobs file) as the night's, into *rep; *p
 * holds the plan as applied last (exec_apply follows new versions). */
static int apply_night(night_args *a, const char *plan_path, exec_plan *p,
                       exec_report *rep, ef_err *e)
{
    memset(rep, 0, sizeof *rep);
    memset(p, 0, sizeof *p);
    if (exec_plan_load(p, plan_path, NULL, e) != EF_OK)
        return EF_ERR;
    return exec_apply(p, &a->eo, rep, e);
}

/* A night that a killed run left open past its window: let the apply
 * settle it (adopt what was launched, write state.json) and hand over at
 * once, then close it in the memory. */
static void close_stale(night_args *a, exec_night *m, const char *dir,
                        const exec_night_info *last)
{
    exec_opts keep = a->eo;
    keep.handover = always;
    keep.say = NULL;
    night_args b = *a;
    b.eo = keep;
    exec_plan p;
    exec_report rep;
    ef_err e = {0};
    int rc = apply_night(&b, last->plan, &p, &rep, &e);
    if (rc != EF_OK && !cli_cf.quiet)
        fprintf(stderr, "nightly: the night of %s could not be settled: %s\n",
                last->plan, e.msg);
    ef_err e2 = {0};
    exec_night_close(m, rep.state_written ? rep.state_file : NULL,
                     rc == EF_OK ? &p : NULL, &e2);
    remember(m, dir, &e2);
    exec_report_free(&rep);
    exec_plan_free(&p);
}

/* The night's exit code from apply's report (as efplan apply's). */
static int night_code(const exec_report *rep)
{
    if (rep->failed)
        return EXIT_INFEASIBLE;
    if (rep->missed)
        return EXIT_MISSED;
    return 0;
}

/* A dry run's folder for the night's plan, jobs file and chart, which
 * it applies and then removes (dry_dir_remove): $TMPDIR (or /tmp)
 * /efplan-nightly-XXXXXX, private to this user. */
static int dry_dir(char *out, size_t len, ef_err *e)
{
    const char *t = getenv("TMPDIR");
    if (!t || !t[0])
        t = "/tmp";
    if ((size_t)snprintf(out, len, "%s/efplan-nightly-XXXXXX", t) >= len ||
        !mkdtemp(out)) {
        int err = errno;
        out[0] = '\0';
        return ef_fail(e, EF_E_INTERNAL, "nightly --backend dry-run: a folder "
                       "for the night's plan under %s: %s", t,
                       strerror(err));
    }
    return EF_OK;
}

/* Remove dry_dir's folder and the night's files in it. */
static void dry_dir_remove(const char *d)
{
    DIR *dd = opendir(d);
    if (dd) {
        struct dirent *x;
        while ((x = readdir(dd)) != NULL) {
            if (strcmp(x->d_name, ".") == 0 || strcmp(x->d_name, "..") == 0)
                continue;
            char f[PATH_MAX + 300];
            snprintf(f, sizeof f, "%s/%s", d, x->d_name);
            unlink(f);
        }
        closedir(dd);
    }
    rmdir(d);
}

/* Start a new night: read the users' queue, merge, plan, remember.
 * The night's files go to 'plans' (DIR/plans; a dry run's private
 * folder, and DIR/tonight.json and DIR/queue.json are left as they
 * are). plan_path gets the night's plan; *qerr 1 when the queue could
 * not be read (printed). Returns 0 or the exit code (printed). */
static int new_night(night_args *a, exec_night *m, const char *dir,
                     const char *plans, int64_t now, int64_t until,
                     char *plan_path, size_t plen, int *qerr)
{
    ef_err e = {0}, qe = {0};
    job_queue f = {0};
    int have_f = queue_load(&f, a->queue, &qe) == EF_OK;
    if (!have_f) {
        queue_free(&f);
        memset(&f, 0, sizeof f);
    }
    char base[PATH_MAX + 64], jobs_path[PATH_MAX + 96];
    night_name(plans, now, base, sizeof base);
    snprintf(jobs_path, sizeof jobs_path, "%s.jobs.json", base);
    snprintf(plan_path, plen, "%s.json", base);
    plan p = {0};
    job_queue q = {0};
    curve_set cs = {0};
    cluster c;
    memset(&c, 0, sizeof c);
    int rc = 0;
    for (int pass = 0; pass < 2; pass++) {
        exec_night_merge_res mr;
        exec_night_merge(m, have_f ? &f : NULL, &mr);
        char *text = queue_write_json(mr.jobs, mr.n, NULL);
        int wr = ef_write_file_atomic(jobs_path, text, strlen(text), &e);
        free(text);
        free(mr.jobs);
        if (wr != EF_OK) {
            rc = cli_fail(&e);
            goto out;
        }
        plan_free(&p);
        queue_free(&q);
        curve_set_free(&cs);
        memset(&p, 0, sizeof p);
        if (plan_night(a, base, jobs_path, &p, &q, &cs, &c, &e) == EF_OK) {
            if (have_f && !cli_cf.quiet)
                printf("nightly: queue %s: %d job(s): %d new, %d carried "
                       "over; %d removed%s%s%s, %d finished or failed "
                       "before%s%s%s\n", a->queue, mr.n, mr.added,
                       mr.carried, mr.dropped, mr.dropped ? " (" : "",
                       mr.dropped_first,
                       mr.dropped > 1 ? ", ...)" : mr.dropped ? ")" : "",
                       mr.skipped, mr.skipped ? " (" : "", mr.skipped_first,
                       mr.skipped > 1 ? ", ...)" : mr.skipped ? ")" : "");
            break;
        }
        if (!have_f || e.kind != EF_E_INPUT) {
            /* not the users' queue: DIR's, or ours; the message names the
             * merged file (its jobs[N]), kept for the operator to read */
            if (e.kind == EF_E_INPUT)
                ef_prefix(&e, "%s/queue.json (what the state folder "
                          "remembers) cannot be planned; in the queue it "
                          "was merged into, ", dir);
            rc = cli_fail(&e);
            goto out;
        }
        /* a job of the users' queue the planner cannot take (an unknown
         * model, ...) is the queue's error, when DIR's jobs alone plan */
        qe = e;
        have_f = 0;
    }
    if (!have_f) {
        *qerr = 1;
        fprintf(stderr, "efplan: error: %s\n", qe.msg);
        fprintf(stderr, "nightly: the queue cannot be used: this night "
                "plans the %d job(s) %s/queue.json holds (every promise "
                "kept running); fix the queue for the next night\n", m->q.n,
                dir);
    }
    if (!cli_cf.quiet) {
        char t0[40], t1[40];
        printf("nightly: plan %s%s: %d job(s) from %s: admitted %d, "
               "rejected %d, best-effort %d%s\n", plan_path,
               a->dry ? " (dry run: removed at its end)" : "",
               p.njobs,
               cli_time(p.now, p.now, t0, sizeof t0), p.admitted, p.rejected,
               p.best_effort, p.at_risk ? " (some at risk)" : "");
        printf("nightly: applying it until %s\n",
               cli_time(until, p.now, t1, sizeof t1));
    }
    exec_night_begin(m, &q, &p, have_f ? &f : NULL, plan_path, jobs_path,
                     now, until, *qerr ? qe.msg : NULL);
    if (!a->dry) {
        link_tonight(dir, plan_path);
        if (remember(m, dir, &e) != EF_OK)
            rc = cli_fail(&e);
    }
out:
    plan_free(&p);
    queue_free(&q);
    curve_set_free(&cs);
    queue_free(&f);
    return rc;
}

int cmd_nightly(int argc, char **argv)
{
    night_args a;
    memset(&a, 0, sizeof a);
    plan_opts_default(&a.po);
    a.po.overhead = OVH_FIG12;
    exec_opts_default(&a.eo);
    a.eo.say = cli_say_err;
    a.eo.out = cli_say_out;
    int rc = parse(argc, argv, &a);
    if (rc != 0) {
        cli_slurm_free(&a.eo.slurm);
        return rc < 0 ? 0 : rc;
    }
    a.eo.zone = cli_cf.zone;
    ef_err e = {0};
    char dir[PATH_MAX], apply_dir[PATH_MAX + 16], plans[PATH_MAX + 16];
    plans[0] = '\0';
    int lock = -1, qerr = 0;
    exec_night m;
    memset(&m, 0, sizeof m);
    a.dry = strcmp(a.eo.backend, "dry-run") == 0;
    if (exec_make_dir(a.state, &e) != EF_OK || !realpath(a.state, dir)) {
        rc = cli_fail(&e);
        goto out;
    }
    snprintf(apply_dir, sizeof apply_dir, "%s/apply", dir);
    snprintf(plans, sizeof plans, "%s/plans", dir);
    snprintf(handover_path, sizeof handover_path, "%s/handover", dir);
    if (a.dry ? dry_dir(plans, sizeof plans, &e) != EF_OK
            : exec_make_dir(plans, &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    if (!a.dry && (lock = lock_state(dir, 600, &e)) < 0) {
        rc = cli_fail(&e);
        goto out;
    }
    char mem[PATH_MAX + 16];
    snprintf(mem, sizeof mem, "%s/queue.json", dir);
    if (exec_night_load(&m, mem, &e) != EF_OK) {
        rc = cli_fail(&e);
        goto out;
    }
    /* the clock: DIR's, once its first night began */
    int64_t now;
    double scale;
    if (state_clock(apply_dir, &now, &scale)) {
        if (a.now_given || a.scale_given) {
            rc = cli_usage_error("nightly", "--now and --time-scale start "
                                 "the clock of %s on its first night; it "
                                 "runs already (%g times the wall clock): "
                                 "leave them out", dir, scale);
            goto out;
        }
        a.eo.scale = scale;
    } else {
        now = a.now_given ? a.now : cli_wall_now();
    }
    a.po.now = now;
    a.eo.state = apply_dir;
    a.eo.takeover = 1;
    a.eo.handover = want_handover;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    if (!a.dry)
        sigaction(SIGTERM, &sa, NULL);
    exec_night_info last;
    exec_night_last(&m, &last);
    char plan_path[PATH_MAX + 96];
    int64_t until;
    if (!a.dry && last.has && !last.done && now < last.until &&
        access(last.plan, F_OK) == 0) {
        /* a run of this night was stopped before its end: resume it */
        snprintf(plan_path, sizeof plan_path, "%s", last.plan);
        until = last.until;
        if (!cli_cf.quiet)
            printf("nightly: resuming the night of %s (a run of it stopped "
                   "before its end)\n", plan_path);
    } else {
        if (!a.dry && last.has && !last.done)
            close_stale(&a, &m, dir, &last);
        until = now + 86400 + 1800;
        if (a.until) {
            const char *why;
            if (ef_ht_parse(a.until, now, &until, &why) != 0) {
                rc = cli_usage_error("nightly", "--until: \"%s\": %s",
                                     a.until, why);
                goto out;
            }
        }
        rc = new_night(&a, &m, dir, plans, now, until, plan_path,
                       sizeof plan_path,
                       &qerr);
        if (rc != 0)
            goto out;
    }
    a.eo.until = until;
    exec_plan p;
    exec_report rep;
    int arc = apply_night(&a, plan_path, &p, &rep, &e);
    if (arc != EF_OK) {
        rc = cli_fail(&e);
        if (rc == EXIT_INTERNAL && !a.dry)
            fprintf(stderr, "efplan: the journal %s is intact: run the same "
                    "command again to resume\n", rep.journal);
    } else {
        rc = night_code(&rep);
    }
    if (!a.dry) {
        ef_err e2 = {0};
        if (exec_night_close(&m, rep.state_written ? rep.state_file : NULL,
                             p.njobs || arc == EF_OK ? &p : NULL, &e2) !=
            EF_OK)
            fprintf(stderr, "efplan: warning: %s\n", e2.msg);
        if (remember(&m, dir, &e2) != EF_OK) {
            int r2 = cli_fail(&e2);
            rc = rc ? rc : r2;
        }
    }
    if (arc == EF_OK && !a.dry && !cli_cf.quiet) {
        printf("nightly: %s: %s; %d launch(es); jobs: %d done, %d failed, "
               "%d not done\n", p.path,
               rep.handed_over ? "handed over to the next night"
               : rep.complete  ? "applied to its end"
                               : "window applied",
               rep.launched, rep.done, rep.failed, rep.pending);
        printf("wrote %s\n", mem);
    }
    exec_report_free(&rep);
    exec_plan_free(&p);
    if (qerr && (rc == 0 || rc == EXIT_INFEASIBLE || rc == EXIT_MISSED))
        rc = EXIT_INPUT;
out:
    if (a.dry && plans[0])
        dry_dir_remove(plans);
    exec_night_free(&m);
    if (lock >= 0)
        close(lock);
    cli_slurm_free(&a.eo.slurm);
    return rc;
}
