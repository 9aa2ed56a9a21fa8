/* proc.c: helpers the backends share: paths in the state directory, the
 * launch environment, progress and rc files, a job's checkpoint signal
 * and grace, running a command (see exec.h). */
#include "executor/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"

const char *exec_path_log(const exec_ctx *x, int j, int a, char *dst,
                          size_t len)
{
    snprintf(dst, len, "%s/logs/%s.%d.log", x->state, x->p->jobs[j].safe, a);
    return dst;
}

const char *exec_path_progress(const exec_ctx *x, int j, char *dst,
                               size_t len)
{
    snprintf(dst, len, "%s/progress/%s", x->state, x->p->jobs[j].safe);
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
                       const char *master_addr, int cvd)
{
    const exec_job *jb = &x->p->jobs[r->job];
    char **v = NULL;
    int n = 0;
    int *nodes = ef_malloc((size_t)(r->place->n + 1) * sizeof *nodes);
    int nn = exec_place_nodes(r->place, nodes);
    int node = nodes[node_rank < nn ? node_rank : 0];
    free(nodes);
    char g[1024], prog[4096];
    for (int k = 0; jb->in && k < jb->in->run.nenv; k++)
        push(&v, &n, "%s", jb->in->run.env[k]);
    push(&v, &n, "NNODES=%d", nn);
    push(&v, &n, "NODE_RANK=%d", node_rank);
    push(&v, &n, "NPROC_PER_NODE=%d", r->place->n / (nn ? nn : 1));
    push(&v, &n, "WORLD_SIZE=%d", r->place->n);
    push(&v, &n, "MASTER_ADDR=%s", master_addr);
    push(&v, &n, "MASTER_PORT=%d", jb->port);
    if (cvd)
        push(&v, &n, "CUDA_VISIBLE_DEVICES=%s",
             exec_place_gpus(r->place, node, g, sizeof g));
    push(&v, &n, "EFPLAN_JOB_ID=%s", jb->id);
    push(&v, &n, "EFPLAN_PROGRESS_FILE=%s",
         exec_path_progress(x, r->job, prog, sizeof prog));
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
    if (exec_read_small(path, buf, sizeof buf) < 0)
        return 0;
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

int exec_read_small(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return (int)n;
}
