/* proc.c: helpers the backends share: paths in the state directory, the
 * launch environment, progress and rc files, a job's checkpoint signal
 * and grace, running a command (see exec.h). */
#define _DEFAULT_SOURCE 1
#define _GNU_SOURCE 1
#include "executor/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <limits.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grp.h>
#include <pwd.h>

#include "common/util.h"

const char *exec_path_job(const exec_ctx *x, int j, char *dst, size_t len)
{
    snprintf(dst, len, "%s/jobs/%s", x->state, x->p->jobs[j].safe);
    return dst;
}

const char *exec_path_log(const exec_ctx *x, int j, int a, char *dst,
                          size_t len)
{
    snprintf(dst, len, "%s/jobs/%s/%d.log", x->state, x->p->jobs[j].safe, a);
    return dst;
}

const char *exec_path_progress(const exec_ctx *x, int j, char *dst,
                               size_t len)
{
    snprintf(dst, len, "%s/jobs/%s/progress", x->state, x->p->jobs[j].safe);
    return dst;
}

const char *exec_path_checkpoints(const exec_ctx *x, int j, char *dst,
                                  size_t len)
{
    snprintf(dst, len, "%s/jobs/%s/checkpoints", x->state,
             x->p->jobs[j].safe);
    return dst;
}

const char *exec_path_run(const exec_ctx *x, int j, int a, const char *ext,
                          char *dst, size_t len)
{
    snprintf(dst, len, "%s/run/%s.%d.%s", x->state, x->p->jobs[j].safe, a,
             ext);
    return dst;
}

int64_t exec_read_progress(const exec_ctx *x, int j)
{
    if (x->b && x->b->dry)
        return -1; /* its jobs finish as planned; a real apply's files are
                    * none of its business */
    char path[4096], buf[64];
    exec_path_progress(x, j, path, sizeof path);
    int n = exec_read_small(path, buf, sizeof buf);
    if (n <= 0)
        return -1;
    size_t k = 0;
    while (k < (size_t)n && buf[k] >= '0' && buf[k] <= '9')
        k++;
    if (k == 0)
        return -1;
    buf[k] = '\0';
    int64_t v;
    if (ef_parse_i64(buf, 0, EF_MAX_I64, &v) != EF_NUM_OK)
        return -1;
    return v;
}

void exec_strv_free(char **v)
{
    for (int i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static void push(char ***v, int *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Append one "KEY=VALUE" (printf-style, whole: never cut) to *v. */
static void push(char ***v, int *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int l = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = ef_malloc((size_t)l + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)l + 1, fmt, ap);
    va_end(ap);
    *v = ef_realloc(*v, (size_t)(*n + 2) * sizeof **v);
    (*v)[(*n)++] = s;
    (*v)[*n] = NULL;
}

char **exec_launch_env(const exec_ctx *x, const exec_run *r, int node_rank,
                       int local_rank, const char *master_addr, int cvd)
{
    const exec_job *jb = &x->p->jobs[r->job];
    char **v = NULL;
    int n = 0;
    int *nodes = ef_malloc((size_t)(r->place->n + 1) * sizeof *nodes);
    int nn = exec_place_nodes(r->place, nodes);
    int node = nodes[node_rank < nn ? node_rank : 0];
    free(nodes);
    int nproc = r->place->n / (nn ? nn : 1);
    int port = r->port > 0 ? r->port : jb->port;
    char g[1024], path[4096];
    for (int k = 0; jb->in && k < jb->in->run.nenv; k++)
        push(&v, &n, "%s", jb->in->run.env[k]);
    push(&v, &n, "NNODES=%d", nn);
    push(&v, &n, "NODE_RANK=%d", node_rank);
    push(&v, &n, "NPROC_PER_NODE=%d", nproc);
    push(&v, &n, "WORLD_SIZE=%d", r->place->n);
    push(&v, &n, "MASTER_ADDR=%s", master_addr);
    push(&v, &n, "MASTER_PORT=%d", port);
    /* what torchrun reads as its options' defaults */
    push(&v, &n, "PET_NNODES=%d", nn);
    push(&v, &n, "PET_NODE_RANK=%d", node_rank);
    push(&v, &n, "PET_NPROC_PER_NODE=%d", nproc);
    push(&v, &n, "PET_MASTER_ADDR=%s", master_addr);
    push(&v, &n, "PET_MASTER_PORT=%d", port);
    /* one process per GPU: this process's place in the world */
    if (local_rank >= 0 || nproc == 1) {
        int lr = local_rank >= 0 ? local_rank : 0;
        push(&v, &n, "RANK=%d", node_rank * nproc + lr);
        push(&v, &n, "LOCAL_RANK=%d", lr);
        push(&v, &n, "LOCAL_WORLD_SIZE=%d", nproc);
        push(&v, &n, "GROUP_RANK=%d", node_rank);
    }
    if (cvd)
        push(&v, &n, "CUDA_VISIBLE_DEVICES=%s",
             exec_place_gpus(r->place, node, g, sizeof g));
    push(&v, &n, "EFPLAN_JOB_ID=%s", jb->id);
    push(&v, &n, "EFPLAN_PROGRESS_FILE=%s",
         exec_path_progress(x, r->job, path, sizeof path));
    push(&v, &n, "EFPLAN_CHECKPOINT_DIR=%s",
         exec_path_checkpoints(x, r->job, path, sizeof path));
    push(&v, &n, "EFPLAN_ATTEMPT=%d", r->attempt);
    push(&v, &n, "EFPLAN_ITERATIONS=%" PRId64, jb->iterations);
    push(&v, &n, "EFPLAN_BATCH_SIZE=%ld",
         r->place->batch ? r->place->batch : jb->batch_size);
    return v;
}

int exec_run_capture(char *const *argv, ef_buf *out, int merge)
{
    ef_buf_put(out, "");
    int fds[2];
    if (pipe(fds) != 0) {
        ef_buf_printf(out, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        ef_buf_printf(out, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 1);
        int dn = open("/dev/null", O_RDWR);
        if (merge)
            dup2(fds[1], 2);
        else if (dn >= 0)
            dup2(dn, 2);
        if (dn >= 0)
            dup2(dn, 0);
        execvp(argv[0], argv);
        dprintf(fds[1], "cannot run %s: %s", argv[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    for (;;) {
        ef_buf_grow(out, 65536);
        ssize_t n = read(fds[0], out->s + out->n, 65536);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        out->n += (size_t)n;
        out->s[out->n] = '\0';
    }
    close(fds[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 128 + WTERMSIG(st);
}

int exec_run_cmd(char *const *argv, char *out, size_t outlen, int merge)
{
    ef_buf b = {0};
    int rc = exec_run_capture(argv, &b, merge);
    snprintf(out, outlen, "%s", b.s);
    free(b.s);
    return rc;
}

int exec_read_rc(const exec_ctx *x, const exec_run *r, int shell,
                 exec_pstatus *st)
{
    char path[4096], buf[64];
    exec_path_run(x, r->job, r->attempt, "rc", path, sizeof path);
    if (exec_read_small(path, buf, sizeof buf) < 0) {
        /* a Slurm job run as its owner writes it in its own directory */
        char dir[4000];
        snprintf(path, sizeof path, "%s/%d.rc",
                 exec_path_job(x, r->job, dir, sizeof dir), r->attempt);
        if (exec_read_small(path, buf, sizeof buf) < 0)
            return 0;
    }
    int v;
    if (sscanf(buf, "exit %d", &v) == 1) {
        st->code = v;
        st->sig = shell && v > 128 ? v - 128 : 0;
    } else if (sscanf(buf, "signal %d", &v) == 1) {
        st->code = 128 + v;
        st->sig = v;
    } else
        return 0;
    st->state = EXEC_P_EXITED;
    return 1;
}

int exec_job_signal(const exec_plan *p, int j)
{
    int s = p->jobs[j].in ? p->jobs[j].in->run.signal : 0;
    return s ? s : SIGTERM;
}

int exec_job_grace(const exec_plan *p, int j)
{
    int g = p->jobs[j].in ? p->jobs[j].in->run.grace : -1;
    return g >= 0 ? g : 30;
}

/* Open 'path' for reading if it is a regular file (no link followed at
 * its last step, never waiting on a FIFO): the fd, or -1. The files of a
 * job's directory are its user's: what they point at is not read. */
static int open_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
                  O_NOCTTY);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    return fd;
}

int exec_read_small(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    int fd = open_regular(path);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return (int)n;
}

int exec_make_dir(const char *path, ef_err *e)
{
    return exec_make_dir_mode(path, 0755, e);
}

int exec_make_dir_mode(const char *path, mode_t mode, ef_err *e)
{
    if (mkdir(path, mode) != 0 && errno != EEXIST)
        return ef_fail(e, EF_E_INPUT, "%s: cannot create the directory: %s",
                       path, strerror(errno));
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return ef_fail(e, EF_E_INPUT, "%s: not a directory", path);
    /* ours: exactly 'mode' (a directory made before, or by the umask) */
    if (st.st_uid == geteuid() && (st.st_mode & 07777) != mode &&
        chmod(path, mode) != 0)
        return ef_fail(e, EF_E_INPUT, "%s: cannot set mode %04o: %s", path,
                       (unsigned)mode, strerror(errno));
    return EF_OK;
}

int exec_state_dirs(const char *dir, char *real, ef_err *e)
{
    /* the state directory and jobs/ can be passed through (a job reaches
     * its own directory) but not listed; run/ is the executor's alone */
    if (exec_make_dir_mode(dir, 0711, e) != EF_OK)
        return EF_ERR;
    if (!realpath(dir, real))
        return ef_fail(e, EF_E_INPUT, "%s: %s", dir, strerror(errno));
    static const struct { const char *name; mode_t mode; } sub[] = {
        {"run", 0700}, {"jobs", 0711}};
    char path[PATH_MAX + 64];
    for (size_t k = 0; k < sizeof sub / sizeof *sub; k++) {
        snprintf(path, sizeof path, "%s/%s", real, sub[k].name);
        if (exec_make_dir_mode(path, sub[k].mode, e) != EF_OK)
            return EF_ERR;
    }
    return EF_OK;
}

int exec_make_checkpoints(const exec_ctx *x, int j, ef_err *e)
{
    return exec_make_job_dir(x, j, NULL, e);
}

int exec_make_job_dir(const exec_ctx *x, int j, const exec_user *u,
                      ef_err *e)
{
    char dir[4096], ck[4200];
    exec_path_job(x, j, dir, sizeof dir);
    exec_path_checkpoints(x, j, ck, sizeof ck);
    int other = u && u->uid != geteuid();
    int made = mkdir(dir, 0700) == 0;
    if (!made && errno != EEXIST)
        return ef_fail(e, EF_E_INPUT, "%s: cannot create the job's "
                       "directory: %s", dir, strerror(errno));
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return ef_fail(e, EF_E_INPUT, "%s: not a directory", dir);
    uid_t want = other ? u->uid : geteuid();
    if (!made && st.st_uid != want)
        return ef_fail(e, EF_E_INPUT, "%s: the job's directory belongs to uid "
                       "%ld, and the job runs as uid %ld (%s): not used (move "
                       "it away to start the job afresh)", dir,
                       (long)st.st_uid, (long)want,
                       u ? u->name : "the executor");
    if (!other) {
        if ((st.st_mode & 07777) != 0700 && chmod(dir, 0700) != 0)
            return ef_fail(e, EF_E_INPUT, "%s: cannot set mode 0700: %s",
                           dir, strerror(errno));
        return exec_make_dir_mode(ck, 0700, e);
    }
    if (!made)
        return EF_OK; /* its user's: what is inside is theirs to keep */
    /* new, and still ours: its checkpoints directory, then both theirs */
    if ((mkdir(ck, 0700) != 0 && errno != EEXIST) ||
        chown(ck, u->uid, u->gid) != 0 || chown(dir, u->uid, u->gid) != 0)
        return ef_fail(e, EF_E_INTERNAL, "%s: cannot give the job's "
                       "directory to %s (uid %ld): %s", dir, u->name,
                       (long)u->uid, strerror(errno));
    return EF_OK;
}

/* ---- who a job runs as ------------------------------------------------- */

/* Fill u from a passwd entry. */
static int user_fill(const struct passwd *pw, exec_user *u, ef_err *e)
{
    memset(u, 0, sizeof *u);
    if (strlen(pw->pw_name) >= sizeof u->name ||
        strlen(pw->pw_dir) >= sizeof u->home ||
        strlen(pw->pw_shell) >= sizeof u->shell)
        return ef_fail(e, EF_E_INPUT, "Unix user %s: a name, home or shell "
                       "too long", pw->pw_name);
    snprintf(u->name, sizeof u->name, "%s", pw->pw_name);
    snprintf(u->home, sizeof u->home, "%s", pw->pw_dir);
    snprintf(u->shell, sizeof u->shell, "%s",
             pw->pw_shell[0] ? pw->pw_shell : "/bin/sh");
    u->uid = pw->pw_uid;
    u->gid = pw->pw_gid;
    int ng = EXEC_USER_GROUPS;
    if (getgrouplist(pw->pw_name, pw->pw_gid, u->groups, &ng) < 0)
        ng = EXEC_USER_GROUPS; /* more than we keep: the first ones */
    u->ngroups = ng;
    return EF_OK;
}

int exec_user_lookup(const char *name, exec_user *u, ef_err *e)
{
    struct passwd pw, *res = NULL;
    char buf[16384];
    int rc = getpwnam_r(name, &pw, buf, sizeof buf, &res);
    if (rc != 0 || !res)
        return ef_fail(e, EF_E_INPUT, "Unix user \"%s\": %s", name,
                       rc ? strerror(rc) : "no such account on this host");
    return user_fill(res, u, e);
}

int exec_user_self(exec_user *u, ef_err *e)
{
    struct passwd pw, *res = NULL;
    char buf[16384];
    uid_t me = geteuid();
    int rc = getpwuid_r(me, &pw, buf, sizeof buf, &res);
    if (rc == 0 && res)
        return user_fill(res, u, e);
    memset(u, 0, sizeof *u);
    snprintf(u->name, sizeof u->name, "%ld", (long)me);
    snprintf(u->home, sizeof u->home, "/");
    snprintf(u->shell, sizeof u->shell, "/bin/sh");
    u->uid = me;
    u->gid = getegid();
    return EF_OK;
}

char **exec_user_env(const exec_user *u, char *const *add)
{
    char **v = NULL;
    int n = 0;
    const char *keys[] = {"PATH", "HOME", "USER", "LOGNAME", "SHELL"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        int given = 0;
        size_t kl = strlen(keys[k]);
        for (int a = 0; add && add[a] && !given; a++)
            given = strncmp(add[a], keys[k], kl) == 0 && add[a][kl] == '=';
        if (given)
            continue;
        switch (k) {
        case 0: push(&v, &n, "PATH=/usr/local/bin:/usr/bin:/bin"); break;
        case 1: push(&v, &n, "HOME=%s", u->home); break;
        case 2: push(&v, &n, "USER=%s", u->name); break;
        case 3: push(&v, &n, "LOGNAME=%s", u->name); break;
        default: push(&v, &n, "SHELL=%s", u->shell); break;
        }
    }
    for (int a = 0; add && add[a]; a++)
        push(&v, &n, "%s", add[a]);
    return v;
}

int exec_user_become(const exec_user *u)
{
    if (u->uid == geteuid() && u->gid == getegid())
        return 0;
    if (setgroups((size_t)u->ngroups, u->groups) != 0 ||
        setgid(u->gid) != 0 || setuid(u->uid) != 0)
        return -1;
    /* for good: no way back */
    if (getuid() != u->uid || geteuid() != u->uid || getgid() != u->gid ||
        (u->uid != 0 && setuid(0) == 0))
        return -1;
    return 0;
}

/* ---- rendezvous --------------------------------------------------------- */

int exec_port_free(int port)
{
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc;
    if (fd >= 0) {
        int off = 0;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
        struct sockaddr_in6 a6;
        memset(&a6, 0, sizeof a6);
        a6.sin6_family = AF_INET6;
        a6.sin6_addr = in6addr_any;
        a6.sin6_port = htons((uint16_t)port);
        rc = bind(fd, (struct sockaddr *)&a6, sizeof a6);
    } else {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return 1; /* cannot tell: let the job try */
        struct sockaddr_in a4;
        memset(&a4, 0, sizeof a4);
        a4.sin_family = AF_INET;
        a4.sin_addr.s_addr = htonl(INADDR_ANY);
        a4.sin_port = htons((uint16_t)port);
        rc = bind(fd, (struct sockaddr *)&a4, sizeof a4);
    }
    close(fd);
    return rc == 0;
}

int exec_pick_port(const exec_ctx *x, const exec_run *r)
{
    const exec_job *jb = &x->p->jobs[r->job];
    int lo = 29500, hi = 30499 + x->p->njobs; /* xplan.c's range */
    int span = hi - lo + 1;
    int first = lo + ((jb->port - lo) + (r->attempt > 1 ? r->attempt - 1 : 0))
                         % span;
    for (int k = 0; k < 512 && k < span; k++) {
        int port = lo + (first - lo + k) % span;
        if (exec_port_free(port))
            return port;
    }
    return jb->port;
}

/* Case-insensitive strstr. */
static const char *find_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return hay;
    return NULL;
}

int exec_log_addr_in_use(const exec_ctx *x, int j, int a)
{
    char path[4096];
    exec_path_log(x, j, a, path, sizeof path);
    int fd = open_regular(path);
    if (fd < 0)
        return 0;
    enum { TAIL = 65536 };
    char *buf = ef_malloc(TAIL + 1);
    off_t size = lseek(fd, 0, SEEK_END);
    off_t from = size > TAIL ? size - TAIL : 0;
    ssize_t n = size < 0 ? -1 : pread(fd, buf, TAIL, from);
    close(fd);
    int found = 0;
    if (n > 0) {
        for (ssize_t k = 0; k < n; k++)
            if (buf[k] == '\0')
                buf[k] = ' ';
        buf[n] = '\0';
        found = find_nocase(buf, "address already in use") ||
                find_nocase(buf, "EADDRINUSE") ||
                find_nocase(buf, "errno: 98");
    }
    free(buf);
    return found;
}

void exec_log_note(const exec_ctx *x, int j, int a, const char *line)
{
    char path[4096];
    exec_path_log(x, j, a, path, sizeof path);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
                  O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        dprintf(fd, "efplan: %s\n", line);
    close(fd);
}

/* ---- world size --------------------------------------------------------- */

/* The number after "KEY=" in text s (a decimal 1..2^20), or 0. */
static int token_num(const char *s, const char *key)
{
    const char *w = s;
    size_t kl = strlen(key);
    while ((w = strstr(w, key)) != NULL) {
        if ((w == s || w[-1] == ' ') && w[kl] == '=')
            break;
        w += kl;
    }
    if (!w)
        return 0;
    char num[16];
    size_t k = 0;
    for (w += kl + 1; k + 1 < sizeof num && w[k] >= '0' && w[k] <= '9'; k++)
        num[k] = w[k];
    num[k] = '\0';
    int64_t v;
    if (k == 0 || ef_parse_i64(num, 1, 1 << 20, &v) != EF_NUM_OK)
        return 0;
    return (int)v;
}

int exec_read_world(const exec_ctx *x, int j, int attempt)
{
    if (x->b && x->b->dry)
        return 0;
    char path[4096], buf[160];
    exec_path_progress(x, j, path, sizeof path);
    if (exec_read_small(path, buf, sizeof buf) <= 0)
        return 0;
    if (token_num(buf, "attempt") != attempt)
        return 0; /* an earlier attempt's line, or none said */
    return token_num(buf, "world");
}

/* torchrun's options that take no value (both spellings). */
static int torchrun_flag(const char *a)
{
    static const char *const flags[] = {
        "--standalone", "--no-python", "--no_python", "--run-path",
        "--run_path", "--module", "-m", NULL};
    for (int k = 0; flags[k]; k++)
        if (strcmp(a, flags[k]) == 0)
            return 1;
    return 0;
}

/* The fixed number option 'opt' (e.g. "--nnodes") of torchrun's argv[from..]
 * says, as "--opt N" or "--opt=N"; -1 when absent or not one number (a
 * range such as "1:4", or "gpu"/"auto" for --nproc-per-node). torchrun's
 * own options end at the training script: the first word that is not an
 * option or the value of one ("--x V": an option without '=' that is not
 * a flag takes the next word as its value). */
static int torchrun_opt(char *const *argv, int from, const char *opt)
{
    size_t ol = strlen(opt);
    for (int k = from; argv[k]; k++) {
        const char *v = NULL;
        if (argv[k][0] != '-')
            return -1; /* the training script: its own options follow */
        if (strcmp(argv[k], opt) == 0)
            v = argv[k + 1];
        else if (strncmp(argv[k], opt, ol) == 0 && argv[k][ol] == '=')
            v = argv[k] + ol + 1;
        else if (!strchr(argv[k], '=') && !torchrun_flag(argv[k]) &&
                 argv[k + 1])
            k++; /* another option's value */
        if (v) {
            int64_t n;
            return ef_parse_i64(v, 1, 1 << 20, &n) == EF_NUM_OK ? (int)n : -1;
        }
    }
    return -1;
}

/* Index of the first torchrun option in argv: after "torchrun", or after
 * "-m torch.distributed.run" of a python; -1 when argv is not one. */
static int torchrun_args(char *const *argv)
{
    if (!argv || !argv[0])
        return -1;
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    if (strcmp(base, "torchrun") == 0)
        return 1;
    if (strncmp(base, "python", 6) != 0)
        return -1;
    for (int k = 1; argv[k] && argv[k + 1]; k++)
        if (strcmp(argv[k], "-m") == 0)
            return strcmp(argv[k + 1], "torch.distributed.run") == 0 ? k + 2
                                                                      : -1;
    return -1;
}

int exec_world_check(const exec_ctx *x, const exec_run *r, int world,
                     char *msg, size_t len)
{
    const exec_job *jb = &x->p->jobs[r->job];
    int *nodes = ef_malloc((size_t)(r->place->n + 1) * sizeof *nodes);
    int nn = exec_place_nodes(r->place, nodes);
    free(nodes);
    int nproc = r->place->n / (nn ? nn : 1);
    if (world > 0) {
        if (world == r->place->n)
            return 0;
        snprintf(msg, len, "job %s attempt %d runs world size %d on an "
                 "allocation of %d GPUs (%d node%s x %d): it does not use "
                 "what the plan gives it (a fixed --nproc-per-node or world "
                 "size in its command?)", jb->id, r->attempt, world,
                 r->place->n, nn, nn == 1 ? "" : "s", nproc);
        return 1;
    }
    char *const *argv = jb->in ? jb->in->run.argv : NULL;
    int from = torchrun_args(argv);
    if (from < 0)
        return 0;
    int np = torchrun_opt(argv, from, "--nproc-per-node");
    if (np < 0)
        np = torchrun_opt(argv, from, "--nproc_per_node");
    int nnodes = torchrun_opt(argv, from, "--nnodes");
    if ((np < 0 || np == nproc) && (nnodes < 0 || nnodes == nn))
        return 0;
    char what[96] = "";
    size_t o = 0;
    if (np >= 0 && np != nproc)
        o += (size_t)snprintf(what, sizeof what, "--nproc-per-node %d", np);
    if (nnodes >= 0 && nnodes != nn)
        snprintf(what + o, sizeof what - o, "%s--nnodes %d", o ? " and " : "",
                 nnodes);
    snprintf(msg, len, "job %s attempt %d: its torchrun command fixes %s but "
             "the allocation is %d node%s x %d GPUs: it will run another "
             "world size than planned (leave those options out: efplan sets "
             "PET_NNODES and PET_NPROC_PER_NODE)", jb->id, r->attempt, what,
             nn, nn == 1 ? "" : "s", nproc);
    return 1;
}
