/* local.c: the local backend: each attempt is a process group on this
 * host (see exec.h).
 *
 * A launch forks a small monitor (the group leader): it writes
 * run/JOB.A.pid ("pid starttime"; when it cannot, the launch fails and
 * nothing runs), forks the command with the job's environment, output
 * appended to logs/JOB.A.log, and waits for it; then writes run/JOB.A.rc
 * ("exit N" or "signal S"), retrying until it can. Before that it kills
 * what the command left running: the rest of the group, and what left
 * the group (setsid, a daemon), which the monitor gets as the
 * subreaper. A forced stop kills the attempt's processes but the
 * monitor, which then does the same. Every file goes
 * through ef_write_file_atomic. The monitor ignores the
 * checkpoint signals sent to the group, so the exit status is always
 * recorded, even when the executor itself was killed meanwhile: a new
 * executor adopts the attempt from these two files.
 */
#include "executor/exec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

extern char **environ;

/* State letter, parent, process group and start time (clock ticks since
 * boot) of pid (ppid, pgrp: NULL when not wanted); 0 when there is no
 * such process. */
static int proc_stat3(long pid, char *state, long *ppid, long *pgrp,
                      unsigned long long *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (exec_read_small(path, buf, sizeof buf) <= 0)
        return 0;
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    p++;
    /* after "comm)": field 3 (state) is token 1, 4 (ppid) token 2, 5
     * (pgrp) token 3, field 22 (starttime) token 20 */
    int tok = 0;
    char *save = NULL;
    for (char *t = strtok_r(p, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        tok++;
        if (tok == 1)
            *state = t[0];
        if (tok == 2 && ppid)
            *ppid = strtol(t, NULL, 10);
        if (tok == 3 && pgrp)
            *pgrp = strtol(t, NULL, 10);
        if (tok == 20) {
            *start = strtoull(t, NULL, 10);
            return 1;
        }
    }
    return 0;
}

static int proc_stat(long pid, char *state, unsigned long long *start)
{
    return proc_stat3(pid, state, NULL, NULL, start);
}

/* SIGKILL every live process (not a zombie) in process group 'pgrp' but
 * 'except', and every child of 'parent' (> 0; not 'except'): how many
 * were sent it. A process that forks while /proc is read may be missed:
 * the callers look again. */
static int kill_members(long pgrp, long parent, long except)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 1 || pid == except)
            continue;
        char st = 0;
        long pp = 0, pg = 0;
        unsigned long long start = 0;
        if (!proc_stat3(pid, &st, &pp, &pg, &start) || st == 'Z' ||
            st == 'X' || (pg != pgrp && (parent <= 0 || pp != parent)))
            continue;
        if (kill((pid_t)pid, SIGKILL) == 0)
            n++;
    }
    closedir(d);
    return n;
}

/* In the monitor, once the command's processes have ended: what they
 * left running is killed: the rest of its process group (a child in the
 * background) and whatever was handed to the monitor as the subreaper (a
 * child that left the group: setsid, a daemon), until none is left
 * (bounded), each reaped. An attempt that ended holds nothing. */
static void monitor_sweep(void)
{
    long me = (long)getpid();
    for (int round = 0; round < 500; round++) {
        int n = kill_members(me, me, me);
        struct timespec ts = {0, 10000000L};
        if (n)
            nanosleep(&ts, NULL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!n)
            return;
    }
}

static int parse_handle(const char *h, long *pid, unsigned long long *start)
{
    return sscanf(h, "%ld:%llu", pid, start) == 2 && *pid > 1 ? 0 : -1;
}

/* 1 if the attempt's monitor is alive (and not a zombie). */
static int alive(const char *handle)
{
    long pid;
    unsigned long long st0, st;
    char state;
    if (parse_handle(handle, &pid, &st0) != 0)
        return 0;
    if (!proc_stat(pid, &state, &st))
        return 0;
    return st == st0 && state != 'Z' && state != 'X';
}

static int local_prepare(exec_ctx *x, ef_err *e)
{
    int maxnode = 0;
    for (int s = 0; s < x->p->nslots; s++)
        for (int a = 0; a < x->p->slots[s].nalloc; a++) {
            const exec_place *pl = &x->p->slots[s].a[a].place;
            for (int k = 0; k < pl->n; k++)
                if (pl->node[k] > maxnode)
                    maxnode = pl->node[k];
        }
    if (maxnode > 0)
        return ef_fail(e, EF_E_INPUT, "%s: the local backend runs one-node "
                       "plans on this host, and this plan uses node %d (use "
                       "--backend slurm)", x->p->path, maxnode);
    return EF_OK;
}

/* In the monitor: the exit status text to the rc file (ef_write_file_atomic),
 * retried until it is written (10 ms, doubling up to 1 s, between tries):
 * a command that ended must not be taken for lost because the state
 * directory's file system was full for a while. Until then the monitor
 * lives on, so the attempt is seen running; a stop kills it, which is
 * recorded as killed, never as failed. The first failure is noted in the
 * attempt's log. A run directory that is gone (removed: nobody will read
 * the status) ends the retries: the monitor must not outlive it. */
static void monitor_write_rc(const char *rcp, const char *logp,
                             const char *txt)
{
    long ms = 10;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", rcp);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    for (int tries = 0;; tries++) {
        ef_err e = {0};
        if (ef_write_file_atomic(rcp, txt, strlen(txt), &e) == EF_OK)
            return;
        struct stat st;
        if (slash && stat(dir, &st) != 0 && errno == ENOENT)
            return;
        if (tries == 0) {
            int lf = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
                          O_NOFOLLOW | O_NONBLOCK, 0600);
            if (lf >= 0) {
                dprintf(lf, "efplan apply: %s (the command's status, %.*s, "
                        "is kept: retrying)\n", e.msg,
                        (int)strcspn(txt, "\n"), txt);
                close(lf);
            }
        }
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        if (ms < 1000)
            ms = ms * 2 < 1000 ? ms * 2 : 1000;
    }
}

static char **merged_env(char **add)
{
    int n = 0, na = 0;
    while (environ[n])
        n++;
    while (add[na])
        na++;
    char **v = ef_malloc((size_t)(n + na + 1) * sizeof *v);
    int k = 0;
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t kl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        int replaced = 0;
        for (int a = 0; a < na && !replaced; a++)
            replaced = strncmp(add[a], environ[i], kl) == 0 &&
                       add[a][kl] == '=';
        if (!replaced)
            v[k++] = environ[i];
    }
    for (int a = 0; a < na; a++)
        v[k++] = add[a];
    v[k] = NULL;
    return v;
}

/* The most processes one launch starts ("per_gpu": one per GPU). */
#define LOCAL_MAX_PROCS 64

/* The environments of one launch: envs[k] borrows from the executor's
 * own environment and add[k] (no user), or is a whole copy (a user). */
static void free_envs(char ***add, char ***envs, int n, int own)
{
    for (int k = 0; k < n; k++) {
        if (own)
            exec_strv_free(envs[k]);
        else
            free(envs[k]);
        exec_strv_free(add[k]);
    }
}

/* What a child of the monitor needs to start one process of the job. */
typedef struct child_spec {
    const job_run *jr;
    const char *logp;
    char **env;
    const exec_user *user; /* NULL: as the executor */
    const char *note;      /* a line for the log first (NULL: none) */
    const char *jobdir, *ckdir;
} child_spec;

/* In a forked child of the monitor: become the job's user (if it has
 * one: from here on nothing is done with the executor's rights), then
 * the job's command, with its environment, output appended to its log,
 * in its workdir (a user's job: else its own directory). Never
 * returns. */
static void run_command(const child_spec *cs)
{
    const job_run *jr = cs->jr;
    for (int s = 1; s < 32; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (cs->user) {
        if (exec_user_become(cs->user) != 0)
            _exit(126);
        umask(022);
        if (mkdir(cs->ckdir, 0700) != 0 && errno != EEXIST)
            _exit(126);
    }
    /* stdin stays the monitor's /dev/null; output goes to the log */
    int lf = open(cs->logp, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW |
                  O_NONBLOCK, cs->user ? 0600 : 0644);
    if (lf >= 0) {
        fcntl(lf, F_SETFL, O_APPEND);
        if (cs->note)
            dprintf(lf, "efplan: %s\n", cs->note);
        dup2(lf, 1);
        dup2(lf, 2);
        if (lf > 2)
            close(lf);
    }
    const char *wd = jr->workdir ? jr->workdir : cs->user ? cs->jobdir : NULL;
    if (wd && chdir(wd) != 0) {
        dprintf(2, "efplan apply: cannot enter workdir %s: %s\n",
                wd, strerror(errno));
        _exit(127);
    }
    environ = cs->env;
    execvp(jr->argv[0], jr->argv);
    dprintf(2, "efplan apply: cannot run %s: %s\n", jr->argv[0],
            strerror(errno));
    _exit(127);
}

/* In the monitor: wait for the n processes kids[] of one attempt. The
 * first that ends other than with exit 0 gives the attempt's status (or
 * 'failed' says one could not be started, txt holding its status
 * already); the others are then sent SIGTERM, and SIGKILL 'grace'
 * seconds later (the job's grace_seconds: they may be writing their
 * checkpoint) if they still run (a DDP peer left alone waits for ever).
 * All exit 0: the status is exit 0. The status text ("exit N\n" /
 * "signal S\n") goes to txt. */
static void wait_all(pid_t *kids, int n, int failed, int grace, char *txt,
                     size_t len)
{
    int left = n, bad = failed;
    double killed_at = -1;
    if (!bad)
        snprintf(txt, len, "exit 0\n");
    if (failed)
        for (int k = 0; k < n; k++)
            kill(kids[k], SIGTERM);
    killed_at = failed ? ef_mono_seconds() : -1;
    while (left > 0) {
        int status = 0;
        pid_t w = waitpid(-1, &status, killed_at >= 0 ? WNOHANG : 0);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            break;
        if (w == 0) {
            if (ef_mono_seconds() - killed_at > grace)
                for (int k = 0; k < n; k++)
                    if (kids[k] > 0)
                        kill(kids[k], SIGKILL);
            struct timespec ts = {0, 20000000L};
            nanosleep(&ts, NULL);
            continue;
        }
        int k = 0;
        while (k < n && kids[k] != w)
            k++;
        if (k == n)
            continue;
        kids[k] = -1;
        left--;
        int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok && !bad) {
            bad = 1;
            if (WIFSIGNALED(status))
                snprintf(txt, len, "signal %d\n", WTERMSIG(status));
            else
                snprintf(txt, len, "exit %d\n", WEXITSTATUS(status));
            for (int m = 0; m < n; m++)
                if (kids[m] > 0)
                    kill(kids[m], SIGTERM);
            killed_at = ef_mono_seconds();
        }
    }
}

static int local_launch(exec_ctx *x, exec_run *r, ef_err *e)
{
    const exec_job *jb = &x->p->jobs[r->job];
    const job_run *jr = &jb->in->run;
    if (!jr->argv)
        return ef_fail(e, EF_E_INPUT, "%s: job \"%s\" has no \"command\" (add "
                       "one to run it)", x->p->q.path, jb->id);
    char logp[4096], pidp[4096], rcp[4096], jobdir[4096], ckdir[4096];
    exec_path_log(x, r->job, r->attempt, logp, sizeof logp);
    exec_path_run(x, r->job, r->attempt, "pid", pidp, sizeof pidp);
    exec_path_run(x, r->job, r->attempt, "rc", rcp, sizeof rcp);
    exec_path_job(x, r->job, jobdir, sizeof jobdir);
    exec_path_checkpoints(x, r->job, ckdir, sizeof ckdir);
    if (r->user && r->user->uid != geteuid() && geteuid() != 0)
        return ef_fail(e, EF_E_INPUT, "job \"%s\" is to run as %s (uid %ld), "
                       "and this process (uid %ld) cannot switch users: run "
                       "efplan serve as root", jb->id, r->user->name,
                       (long)r->user->uid, (long)geteuid());
    if (exec_make_job_dir(x, r->job, r->user, e) != EF_OK)
        return EF_ERR;
    /* one process, or one per GPU ("per_gpu"); each its own environment */
    int nproc = jr->per_gpu ? r->place->n : 1;
    if (nproc > LOCAL_MAX_PROCS)
        return ef_fail(e, EF_E_INPUT, "%s: job \"%s\" would start %d "
                       "processes (\"per_gpu\"); the local backend starts "
                       "at most %d", x->p->q.path, jb->id, nproc,
                       LOCAL_MAX_PROCS);
    r->port = exec_pick_port(x, r);
    char note[256];
    snprintf(note, sizeof note, "attempt %d: rendezvous 127.0.0.1:%d, %d "
             "GPU%s, %d process%s", r->attempt, r->port, r->place->n,
             r->place->n == 1 ? "" : "s", nproc, nproc == 1 ? "" : "es");
    /* a user's log is theirs: its first process writes the note */
    if (!r->user)
        exec_log_note(x, r->job, r->attempt, note);
    int own = r->user != NULL;
    char **add[LOCAL_MAX_PROCS], **envs[LOCAL_MAX_PROCS];
    for (int k = 0; k < nproc; k++) {
        add[k] = exec_launch_env(x, r, 0, jr->per_gpu ? k : -1, "127.0.0.1",
                                 1);
        envs[k] = own ? exec_user_env(r->user, add[k]) : merged_env(add[k]);
    }
    /* the monitor says over this pipe whether it wrote the pid file: a
     * message when it could not (and runs nothing), end of file when it
     * could */
    int pfd[2];
    if (pipe(pfd) != 0) {
        int err = errno;
        free_envs(add, envs, nproc, own);
        return ef_fail(e, EF_E_INTERNAL, "launch of %s attempt %d: pipe: %s",
                       jb->id, r->attempt, strerror(err));
    }
    fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
    fcntl(pfd[1], F_SETFD, FD_CLOEXEC);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        close(pfd[0]);
        close(pfd[1]);
        free_envs(add, envs, nproc, own);
        return ef_fail(e, EF_E_INTERNAL, "fork: %s", strerror(err));
    }
    if (pid == 0) {
        /* the monitor: keep no descriptor of the executor (its journal,
         * its lock on the state directory) but the pipe's write end */
        setpgid(0, 0);
        for (int fd = 3; fd < 1024; fd++)
            if (fd != pfd[1])
                close(fd);
        char txt[128], st = 0;
        unsigned long long start = 0;
        proc_stat((long)getpid(), &st, &start);
        snprintf(txt, sizeof txt, "%ld %llu\n", (long)getpid(), start);
        ef_err pe = {0};
        if (ef_write_file_atomic(pidp, txt, strlen(txt), &pe) != EF_OK) {
            ssize_t w = write(pfd[1], pe.msg, strlen(pe.msg));
            (void)w;
            free_envs(add, envs, nproc, own);
            _exit(0);
        }
        for (int s = 1; s < 32; s++)
            if (s != SIGKILL && s != SIGSTOP && s != SIGCHLD)
                signal(s, SIG_IGN);
        close(pfd[1]);
        /* what the command daemonizes (leaving its process group) is
         * handed to the monitor when its parent ends, not to init: the
         * sweep finds it */
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        /* the monitor may outlive the executor (kill -9, then a resume):
         * it holds none of the executor's standard streams, so a pipe
         * reading apply's output ends when apply does */
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) {
            dup2(nul, 0);
            dup2(nul, 1);
            dup2(nul, 2);
            if (nul > 2)
                close(nul);
        }
        pid_t kids[LOCAL_MAX_PROCS];
        int nkids = 0;
        for (int k = 0; k < nproc; k++) {
            pid_t g = fork();
            if (g == 0) {
                child_spec cs = {jr, logp, envs[k], r->user,
                                 own && k == 0 ? note : NULL, jobdir, ckdir};
                run_command(&cs);
            }
            if (g < 0)
                break;
            kids[nkids++] = g;
        }
        free_envs(add, envs, nproc, own);
        if (nkids < nproc)
            snprintf(txt, sizeof txt, "exit 126\n");
        if (nkids > 0)
            wait_all(kids, nkids, nkids < nproc, exec_job_grace(x->p, r->job),
                     txt, sizeof txt);
        monitor_sweep();
        monitor_write_rc(rcp, logp, txt);
        _exit(0);
    }
    close(pfd[1]);
    char msg[EF_ERR_LEN];
    size_t got = 0;
    for (;;) {
        ssize_t n = read(pfd[0], msg + got, sizeof msg - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
        if (got == sizeof msg - 1)
            break;
    }
    msg[got] = '\0';
    close(pfd[0]);
    if (got > 0) {
        free_envs(add, envs, nproc, own);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        return ef_fail(e, EF_E_INTERNAL, "launch of %s attempt %d: %s (the "
                       "command was not started)", jb->id, r->attempt, msg);
    }
    setpgid(pid, pid);
    free_envs(add, envs, nproc, own);
    char st = 0;
    unsigned long long start = 0;
    if (!proc_stat((long)pid, &st, &start))
        return ef_fail(e, EF_E_INTERNAL, "launch of %s: the monitor process "
                       "%ld vanished", jb->id, (long)pid);
    snprintf(r->handle, sizeof r->handle, "%ld:%llu", (long)pid, start);
    return EF_OK;
}

static int local_poll(exec_ctx *x, const exec_run *r, exec_pstatus *stt,
                      ef_err *e)
{
    if (exec_read_rc(x, r, 0, stt))
        return EF_OK;
    if (alive(r->handle)) {
        stt->state = EXEC_P_RUNNING;
        return EF_OK;
    }
    /* the monitor writes the rc file just before it exits */
    if (exec_read_rc(x, r, 0, stt))
        return EF_OK;
    /* the monitor was killed (not by a stop: the OOM killer, a user):
     * what runs of its group is killed, or the attempt taken for lost
     * would run on beside the next. Its id is not another group's: a pid
     * still some process's group is not given again, and one given again
     * (another start time) means the group is empty. */
    long pid;
    unsigned long long st0, st1 = 0;
    char state = 0;
    if (parse_handle(r->handle, &pid, &st0) == 0 &&
        (!proc_stat(pid, &state, &st1) || st1 == st0))
        kill_members(pid, 0, 0);
    stt->state = EXEC_P_GONE;
    return EF_OK;
}

static int local_signal(exec_ctx *x, const exec_run *r, int sig, ef_err *e)
{
    long pid;
    unsigned long long st;
    if (!alive(r->handle) || parse_handle(r->handle, &pid, &st) != 0)
        return EF_OK;
    if (kill(-(pid_t)pid, sig) != 0 && errno != ESRCH)
        return ef_fail(e, EF_E_INTERNAL, "kill %s to process group %ld: %s",
                       job_signal_name(sig) ? job_signal_name(sig) : "?", pid,
                       strerror(errno));
    return EF_OK;
}

/* The forced stop: SIGKILL to the attempt's processes but its monitor
 * (its group, and the monitor's children: a command that left the group
 * with setsid), which then kills what they left (monitor_sweep) and
 * records the status ("signal 9"). When nothing but the monitor is left
 * (it retries its rc file), the monitor itself. */
static int local_stop(exec_ctx *x, const exec_run *r, ef_err *e)
{
    long pid;
    unsigned long long st;
    if (!alive(r->handle) || parse_handle(r->handle, &pid, &st) != 0)
        return EF_OK;
    if (kill_members(pid, pid, pid) > 0)
        return EF_OK;
    return local_signal(x, r, SIGKILL, e);
}

static int local_find(exec_ctx *x, exec_run *r, ef_err *e)
{
    char pidp[4096], buf[128];
    exec_path_run(x, r->job, r->attempt, "pid", pidp, sizeof pidp);
    if (exec_read_small(pidp, buf, sizeof buf) < 0)
        return 0;
    long pid;
    unsigned long long st;
    if (sscanf(buf, "%ld %llu", &pid, &st) != 2)
        return 0;
    snprintf(r->handle, sizeof r->handle, "%ld:%llu", pid, st);
    return 1;
}

static void local_release(exec_ctx *x)
{
    (void)x;
}

const exec_backend exec_backend_local = {
    .name = "local",
    .prepare = local_prepare,
    .launch = local_launch,
    .signal = local_signal,
    .poll = local_poll,
    .stop = local_stop,
    .find = local_find,
    .release = local_release,
};
