/* slurm.c: the Slurm backend (see exec.h).
 *
 * One attempt = one batch job: sbatch --parsable with --nodelist,
 * --gres=gpu:N (N GPUs per node), --time, the shared cluster's options
 * (exec_slurm_opts) and a job name that encodes the plan, the job and
 * the attempt ("efp-HASH8-JOB-A"), so that a restarted executor finds
 * what it launched. The batch script (run/JOB.A.sbatch) sets the launch
 * environment, picks the rendezvous port on its node, runs the command
 * (through srun on several nodes or processes), forwards the checkpoint
 * signal to it, and writes the exit status to run/JOB.A.rc: the state
 * directory must be on a file system the nodes share. Checkpoint =
 * scancel --batch --signal=SIG; stop = scancel. Slurm cannot resize a
 * running job, so a resize or migration is checkpoint, stop, and a new
 * batch job with the new shape. What runs is read back with squeue, asked
 * for the jobs of this user and of the accounts it submitted as (sbatch
 * --uid) only; which GPUs Slurm gave a running attempt with
 * scontrol show job -d (the placed hook); node addresses and a
 * partition's nodes with sinfo.
 */
#include "executor/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

typedef struct sq_job {
    long id;
    char *name;
    char state[32];
} sq_job;

/* A running attempt whose GPUs were asked for (slurm_placed), and when. */
typedef struct sq_asked {
    long id;
    double at;
} sq_asked;

typedef struct slurm_priv {
    sq_job *jobs;
    int n;
    double at;      /* wall time of the last squeue, 0 = never */
    char **addr;    /* per node of the table: its NodeAddr (sinfo %o), or
                       NULL: its name */
    int naddr;
    sq_asked *asked;
    int nasked;
    long *uids;     /* the accounts other than ours whose jobs squeue
                       lists: those attempts run as (sbatch --uid) */
    int nuids;
} slurm_priv;

static void sq_clear(slurm_priv *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->jobs[i].name);
    free(s->jobs);
    s->jobs = NULL;
    s->n = 0;
}

/* One line of a command's output for an error message. */
static const char *first_line(char *out)
{
    char *nl = strchr(out, '\n');
    while (nl && nl[1] == '\0') {
        *nl = '\0';
        nl = strchr(out, '\n');
    }
    if (nl)
        *nl = '\0';
    return out[0] ? out : "(no output)";
}

static int cmd_fail(ef_err *e, const char *what, int rc, char *out)
{
    if (rc < 0)
        return ef_fail(e, EF_E_INTERNAL, "slurm: %s: %s (is Slurm installed "
                       "and in PATH?)", what, first_line(out));
    return ef_fail(e, EF_E_INTERNAL, "slurm: %s failed (exit %d): %s", what,
                   rc, first_line(out));
}

/* Count attempt r's account among those whose jobs squeue lists (a job
 * submitted with sbatch --uid is its user's, not ours): a new one has
 * squeue read afresh. */
static void sq_user(exec_ctx *x, const exec_run *r)
{
    slurm_priv *s = x->priv;
    if (!r->user || r->user->uid == getuid())
        return;
    for (int i = 0; i < s->nuids; i++)
        if (s->uids[i] == (long)r->user->uid)
            return;
    s->uids = ef_realloc(s->uids, (size_t)(s->nuids + 1) * sizeof *s->uids);
    s->uids[s->nuids++] = (long)r->user->uid;
    s->at = 0;
}

/* What runs, at most every 0.3 s (or when 'force'): squeue for the jobs of
 * this user and of the accounts its attempts run as only (--user=UID,...;
 * every state, so that one just ended is still seen), one "ID STATE NAME"
 * line each, read whatever the size of its answer. Only this plan's
 * attempts are kept: names "efp-HASH8-...". */
static int sq_refresh(exec_ctx *x, int force, ef_err *e)
{
    slurm_priv *s = x->priv;
    if (!force && s->at > 0 && ef_mono_seconds() - s->at < 0.3)
        return EF_OK;
    ef_buf user = {0};
    ef_buf_printf(&user, "--user=%ld", (long)getuid());
    for (int i = 0; i < s->nuids; i++)
        ef_buf_printf(&user, ",%ld", s->uids[i]);
    char *argv[] = {"squeue", "--noheader", user.s, "--states=all",
                    "--format=%A %T %j", NULL};
    ef_buf out = {0};
    int rc = exec_run_capture(argv, &out, 0);
    if (rc != 0) {
        /* the error text went to stderr: run again for it, merged */
        free(out.s);
        out = (ef_buf){0};
        int rc2 = exec_run_capture(argv, &out, 1);
        free(user.s);
        int r = cmd_fail(e, "squeue", rc2 ? rc2 : rc, out.s);
        free(out.s);
        return r;
    }
    free(user.s);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "efp-%.8s-", x->p->hash);
    size_t pl = strlen(prefix);
    sq_clear(s);
    int cap = 0;
    for (char *l = out.s, *nl; l && *l; l = nl) {
        nl = strchr(l, '\n');
        if (nl)
            *nl++ = '\0';
        char *sp = strchr(l, ' ');
        char *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
        if (!sp2 || strncmp(sp2 + 1, prefix, pl) != 0)
            continue; /* not one of this plan's attempts */
        char *end;
        long id = strtol(l, &end, 10);
        if (end != sp || id <= 0)
            continue;
        if (s->n == cap) {
            cap = cap ? 2 * cap : 16;
            s->jobs = ef_realloc(s->jobs, (size_t)cap * sizeof *s->jobs);
        }
        sq_job *q = &s->jobs[s->n++];
        q->id = id;
        q->name = ef_strdup(sp2 + 1);
        snprintf(q->state, sizeof q->state, "%.*s", (int)(sp2 - sp - 1),
                 sp + 1);
    }
    free(out.s);
    s->at = ef_mono_seconds();
    return EF_OK;
}

static void job_name(const exec_ctx *x, int j, int a, char *dst, size_t len)
{
    snprintf(dst, len, "efp-%.8s-%s-%d", x->p->hash, x->p->jobs[j].safe, a);
}

/* sbatch reads --output as a filename pattern: '%' starts a replacement
 * symbol ("%%" is one '%'), and a backslash anywhere turns replacement off
 * and is dropped. So a state directory whose path holds a backslash
 * cannot be named there: EF_E_INPUT. */
static int state_path_ok(const exec_ctx *x, ef_err *e)
{
    if (strchr(x->state, '\\'))
        return ef_fail(e, EF_E_INPUT, "%s: the state directory's path holds "
                       "a backslash, which sbatch --output cannot name (use "
                       "another --state)", x->state);
    return EF_OK;
}

/* "--output=" and the pattern that names 'path' exactly (state_path_ok:
 * no backslash), into dst. */
static void output_arg(const char *path, ef_buf *dst)
{
    ef_buf_put(dst, "--output=");
    for (const char *c = path; *c; c++)
        ef_buf_printf(dst, *c == '%' ? "%%%%" : "%c", *c);
}

/* The address of node table entry k: its NodeAddr when sinfo gave one,
 * else its name (into tmp when the table has none). */
static const char *node_addr(const exec_ctx *x, int k, char *tmp, size_t len)
{
    const slurm_priv *s = x->priv;
    if (s && k >= 0 && k < s->naddr && s->addr[k])
        return s->addr[k];
    return exec_nodes_name(&x->nodes, k, tmp, len);
}

/* The address after 'name' on its "NAME ADDR" line of 'lines' (sinfo's
 * answer), or NULL when no line names it. */
static const char *sinfo_addr(const char *lines, const char *name)
{
    size_t nl = strlen(name);
    for (const char *l = lines; l && *l;) {
        const char *end = strchr(l, '\n');
        size_t ll = end ? (size_t)(end - l) : strlen(l);
        if (ll > nl && strncmp(l, name, nl) == 0 && l[nl] == ' ')
            return l + nl + 1;
        l = end ? end + 1 : NULL;
    }
    return NULL;
}

/* The node table (without --nodes: sinfo's nodes, or the --partition's,
 * sorted), each node's NodeAddr (MASTER_ADDR: node names need not
 * resolve), and with --partition, a check that it holds every node the
 * plan names. With --nodes FILE and no partition, a sinfo that fails
 * leaves the names as addresses. */
static int read_sinfo(exec_ctx *x, ef_err *e)
{
    slurm_priv *s = x->priv;
    const char *part = x->slurm.partition;
    ef_buf out = {0}, pa = {0};
    if (part)
        ef_buf_printf(&pa, "--partition=%s", part);
    char *argv[] = {"sinfo", "-h", "-N", "-o", "%N %o", pa.s, NULL};
    int rc = exec_run_capture(argv, &out, 1);
    if (rc != 0) {
        int r = EF_OK;
        if (!x->nodes_file || part)
            r = cmd_fail(e, part ? "sinfo -h -N -o '%N %o' --partition (the "
                         "partition's nodes)" : "sinfo -h -N -o '%N %o' (node "
                         "names; or pass --nodes FILE)", rc, out.s);
        free(out.s);
        free(pa.s);
        return r;
    }
    free(pa.s);
    /* the names: the first word of each line */
    ef_buf names = {0};
    for (char *l = out.s; l && *l;) {
        char *end = strchr(l, '\n');
        size_t ll = end ? (size_t)(end - l) : strlen(l);
        size_t w = strcspn(l, " \n");
        ef_buf_printf(&names, "%.*s\n", (int)(w < ll ? w : ll), l);
        l = end ? end + 1 : NULL;
    }
    if (part && (!names.s || !names.s[0])) {
        free(out.s);
        free(names.s);
        return ef_fail(e, EF_E_INPUT, "--partition %s: Slurm lists no node "
                       "in it (sinfo --partition=%s: no such partition?)",
                       part, part);
    }
    exec_nodes pn = {0};
    rc = exec_nodes_parse(&pn, part ? "sinfo --partition" : "sinfo",
                          names.s ? names.s : (char *)"", 1, e);
    free(names.s);
    if (rc == EF_OK && !x->nodes_file) {
        x->nodes = pn;
        memset(&pn, 0, sizeof pn);
        rc = exec_nodes_check(&x->nodes, x->p, e);
    } else if (rc == EF_OK && part) {
        /* every plan node named in the file must be in the partition:
         * sbatch would refuse each launch with "Requested node
         * configuration is not available" */
        for (int k = 0; k < x->p->nodes && k < x->nodes.n && rc == EF_OK;
             k++) {
            int in = 0;
            for (int m = 0; m < pn.n && !in; m++)
                in = strcmp(pn.name[m], x->nodes.name[k]) == 0;
            if (!in) {
                ef_buf has = {0};
                for (int m = 0; m < pn.n && m < 8; m++)
                    ef_buf_printf(&has, "%s%s", m ? ", " : "", pn.name[m]);
                rc = ef_fail(e, EF_E_INPUT, "%s: node %s (plan node %d) is "
                             "not in partition %s (its nodes: %s%s): sbatch "
                             "could not place a job there", x->nodes.src,
                             x->nodes.name[k], k, part, has.s ? has.s : "",
                             pn.n > 8 ? ", ..." : "");
                free(has.s);
            }
        }
    }
    exec_nodes_free(&pn);
    if (rc == EF_OK) {
        s->addr = ef_calloc((size_t)x->nodes.n + 1, sizeof *s->addr);
        s->naddr = x->nodes.n;
        for (int k = 0; k < x->nodes.n; k++) {
            const char *a = sinfo_addr(out.s, x->nodes.name[k]);
            size_t al = a ? strcspn(a, " \n") : 0;
            if (al > 0 && al < 256)
                s->addr[k] = ef_strndup(a, al);
        }
    }
    free(out.s);
    return rc;
}

static int slurm_prepare(exec_ctx *x, ef_err *e)
{
    x->priv = ef_calloc(1, sizeof(slurm_priv));
    if (state_path_ok(x, e) != EF_OK)
        return EF_ERR;
    if (read_sinfo(x, e) != EF_OK)
        return EF_ERR;
    return sq_refresh(x, 1, e);
}

/* sinfo's state of every node: DOWN, DRAIN (drained or draining),
 * FAIL, MAINT, or not responding ('*'), is unusable. */
static int slurm_nodes_down(exec_ctx *x, char *down, char (*why)[16],
                            ef_err *e)
{
    ef_buf out = {0};
    char *argv[] = {"sinfo", "-h", "-N", "-o", "%N %t", NULL};
    int rc = exec_run_capture(argv, &out, 1);
    if (rc != 0) {
        int r = cmd_fail(e, "sinfo -h -N -o '%N %t' (node states)", rc,
                         out.s);
        free(out.s);
        return r;
    }
    for (int k = 0; k < x->nodes.n; k++) {
        down[k] = 0;
        why[k][0] = '\0';
    }
    char *save = NULL;
    for (char *ln = strtok_r(out.s ? out.s : (char *)"", "\n", &save); ln;
         ln = strtok_r(NULL, "\n", &save)) {
        char name[256], st[32];
        if (sscanf(ln, "%255s %31s", name, st) != 2)
            continue;
        int bad = strncmp(st, "down", 4) == 0 || strncmp(st, "drain", 5) == 0
                  || strncmp(st, "drng", 4) == 0 ||
                  strncmp(st, "fail", 4) == 0 ||
                  strncmp(st, "maint", 5) == 0 || strchr(st, '*') != NULL;
        for (int k = 0; k < x->nodes.n; k++)
            if (strcmp(x->nodes.name[k], name) == 0 && bad && !down[k]) {
                down[k] = 1;
                snprintf(why[k], 16, "%.15s", st);
            }
    }
    free(out.s);
    return EF_OK;
}

static void slurm_release(exec_ctx *x)
{
    slurm_priv *s = x->priv;
    if (s) {
        sq_clear(s);
        for (int k = 0; k < s->naddr; k++)
            free(s->addr[k]);
        free(s->addr);
        free(s->asked);
        free(s->uids);
        free(s);
        x->priv = NULL;
    }
}

/* Processes per node of attempt r: its GPUs per node for a job whose
 * "processes" is "per_gpu", else 1. */
static int tasks_per_node(const exec_ctx *x, const exec_run *r, int nn)
{
    const exec_job *jb = &x->p->jobs[r->job];
    return jb->in && jb->in->run.per_gpu ? r->place->n / (nn ? nn : 1) : 1;
}

/* 1 when 'word' is --gres=VALUE whose resources are none of GPUs
 * ("nvme:1", "fpga,license"): efplan merges it into its --gres=gpu:N. */
static int gres_other(const char *word)
{
    if (strncmp(word, "--gres=", 7) != 0 || !word[7])
        return 0;
    for (const char *r = word + 7; *r;) {
        size_t l = strcspn(r, ",");
        if (l == 0 || (strncmp(r, "gpu", 3) == 0 &&
                       (l == 3 || r[3] == ':')))
            return 0;
        r += l + (r[l] == ',');
    }
    return 1;
}

/* 1 when attempt r runs as another account than the executor's (root
 * only: sbatch --uid). */
static int as_other(const exec_run *r)
{
    return r->user && r->user->uid != geteuid();
}

/* argv of the sbatch command for attempt r (heap strings). */
static char **sbatch_argv(exec_ctx *x, const exec_run *r, const char *script)
{
    int *nodes = ef_malloc((size_t)(r->place->n + 1) * sizeof *nodes);
    int nn = exec_place_nodes(r->place, nodes);
    ef_buf nl = {0};
    char tmp[64], name[256], logp[4096];
    for (int k = 0; k < nn; k++) {
        ef_buf_put(&nl, k ? "," : "");
        ef_buf_put(&nl, exec_nodes_name(&x->nodes, nodes[k], tmp, sizeof tmp));
    }
    free(nodes);
    long minutes = (long)((r->wall_limit + 59) / 60);
    if (minutes < 1)
        minutes = 1;
    job_name(x, r->job, r->attempt, name, sizeof name);
    exec_path_log(x, r->job, r->attempt, logp, sizeof logp);
    const exec_slurm_opts *so = &x->slurm;
    char **v = ef_calloc(24 + (size_t)so->nargs, sizeof *v);
    int n = 0;
    char buf[8192];
    v[n++] = ef_strdup("sbatch");
    /* the operator's words first: one that wants a value it lacks takes
     * efplan's next option as it, and sbatch says what is wrong (never
     * the script's path) */
    ef_buf gres = {0}; /* efplan's --gres=gpu:N and the operator's others */
    ef_buf_printf(&gres, "--gres=gpu:%d", r->place->n / (nn ? nn : 1));
    for (int k = 0; k < so->nargs; k++) {
        if (gres_other(so->args[k]))
            ef_buf_printf(&gres, ",%s", so->args[k] + 7);
        else
            v[n++] = ef_strdup(so->args[k]);
    }
    v[n++] = ef_strdup("--parsable");
    snprintf(buf, sizeof buf, "--job-name=%s", name);
    v[n++] = ef_strdup(buf);
    if (so->partition) {
        snprintf(buf, sizeof buf, "--partition=%s", so->partition);
        v[n++] = ef_strdup(buf);
    }
    if (so->account) {
        snprintf(buf, sizeof buf, "--account=%s", so->account);
        v[n++] = ef_strdup(buf);
    }
    if (so->qos) {
        snprintf(buf, sizeof buf, "--qos=%s", so->qos);
        v[n++] = ef_strdup(buf);
    }
    snprintf(buf, sizeof buf, "--nodes=%d", nn);
    v[n++] = ef_strdup(buf);
    snprintf(buf, sizeof buf, "--nodelist=%s", nl.s);
    v[n++] = ef_strdup(buf);
    snprintf(buf, sizeof buf, "--ntasks-per-node=%d",
             tasks_per_node(x, r, nn));
    v[n++] = ef_strdup(buf);
    v[n++] = gres.s;
    snprintf(buf, sizeof buf, "--time=%ld", minutes);
    v[n++] = ef_strdup(buf);
    if (as_other(r)) {
        /* the job's own account, and none of the service's environment
         * (the script sets the job's) */
        snprintf(buf, sizeof buf, "--uid=%ld", (long)r->user->uid);
        v[n++] = ef_strdup(buf);
        snprintf(buf, sizeof buf, "--gid=%ld", (long)r->user->gid);
        v[n++] = ef_strdup(buf);
        v[n++] = ef_strdup("--export=NONE");
    }
    if (r->user) {
        char dir[4000];
        snprintf(buf, sizeof buf, "--chdir=%s",
                 exec_path_job(x, r->job, dir, sizeof dir));
        v[n++] = ef_strdup(buf);
    }
    ef_buf out = {0};
    output_arg(logp, &out);
    v[n++] = out.s;
    v[n++] = ef_strdup("--open-mode=append");
    v[n++] = ef_strdup(script);
    free(nl.s);
    return v;
}

const char *exec_slurm_sbatch_line(exec_ctx *x, const exec_run *r, char *dst,
                                   size_t len)
{
    ef_err e = {0};
    if (state_path_ok(x, &e) != EF_OK) {
        snprintf(dst, len, "(none: %s)", e.msg);
        return dst;
    }
    char script[4096];
    exec_path_run(x, r->job, r->attempt, "sbatch", script, sizeof script);
    char **v = sbatch_argv(x, r, script);
    ef_buf b = {0};
    for (int k = 0; v[k]; k++) {
        ef_buf_put(&b, k ? " " : "");
        ef_sh_word(&b, v[k]);
    }
    exec_strv_free(v);
    snprintf(dst, len, "%s", b.s);
    free(b.s);
    return dst;
}

/* What the batch script of one attempt is made of (exec_slurm_script). */
typedef struct script_of {
    const exec_job *jb; /* the job */
    const job_run *jr;  /* its command and workdir */
    int *nodes;         /* the plan nodes the attempt runs on (heap), */
    int nn;             /* how many */
    int tasks;          /* processes per node (tasks_per_node) */
    int wrap;           /* several nodes or processes: started by srun */
    int sig;            /* the job's checkpoint signal */
} script_of;

/* The environment the script exports for attempt r (heap strings, free
 * with exec_strv_free): the launch environment with MASTER_ADDR the
 * first node's address, in the job's account's (exec_user_env) when it
 * runs as one. */
static char **script_env(exec_ctx *x, const exec_run *r, int node0)
{
    char tmp[64];
    const char *master = node_addr(x, node0, tmp, sizeof tmp);
    char **env = exec_launch_env(x, r, 0, -1, master, 0);
    if (r->user) {
        char **whole = exec_user_env(r->user, env);
        exec_strv_free(env);
        env = whole;
    }
    return env;
}

/* The rc file of attempt r into rcp (len bytes): the run directory's, or
 * the job's own directory's when the script runs as the job's user
 * (exec_read_rc looks there too). */
static void script_rc_path(exec_ctx *x, const exec_run *r, char *rcp,
                           size_t len)
{
    exec_path_run(x, r->job, r->attempt, "rc", rcp, len);
    if (as_other(r)) {
        char dir[4000];
        snprintf(rcp, len, "%s/%d.rc",
                 exec_path_job(x, r->job, dir, sizeof dir), r->attempt);
    }
}

/* The script's first lines: who it is, and efplan_done N: the exit
 * status N to the rc file 'rcp' (through a temporary file beside it;
 * both paths hold the state directory, any bytes: quoted like every
 * other word), and exit N. */
static void script_head(ef_buf *b, const exec_ctx *x, const exec_run *r,
                        const script_of *so, const char *rcp)
{
    ef_buf_printf(b, "#!/bin/sh\n# efplan apply: job %s, attempt %d, plan "
                  "%s\n", so->jb->safe, r->attempt, x->p->hash);
    char rct[4200];
    snprintf(rct, sizeof rct, "%s.tmp", rcp);
    ef_buf_put(b, "efplan_done() {\n    printf 'exit %d\\n' \"$1\" > ");
    ef_sh_quote(b, rct);
    ef_buf_put(b, " && mv -f -- ");
    ef_sh_quote(b, rct);
    ef_buf_put(b, " ");
    ef_sh_quote(b, rcp);
    ef_buf_put(b, "\n    exit \"$1\"\n}\n");
}

/* The checkpoint signal, from the first line on: forwarded to the
 * command once it runs, or as soon as it does when it came first.
 * Through srun (several nodes or processes) it goes to the tasks
 * through scancel --signal (no --batch: every step but this script's):
 * srun takes a SIGTERM for "kill the step", not one to pass on. */
static void script_trap(ef_buf *b, const script_of *so)
{
    const char *sname = job_signal_name(so->sig);
    char snum[16];
    snprintf(snum, sizeof snum, "%d", so->sig);
    if (so->wrap)
        ef_buf_printf(b, "efplan_child= efplan_sig= efplan_early=\n"
                      "trap 'efplan_sig=1; if [ -n \"$efplan_child\" ]; then "
                      "scancel --signal=%s \"$SLURM_JOB_ID\" 2>/dev/null; "
                      "else efplan_early=1; fi' %d\n",
                      sname ? sname + 3 : snum, so->sig);
    else
        ef_buf_printf(b, "efplan_child= efplan_sig= efplan_early=\n"
                      "trap 'efplan_sig=1; if [ -n \"$efplan_child\" ]; then "
                      "kill -%d \"$efplan_child\" 2>/dev/null; else "
                      "efplan_early=1; fi' %d\n", so->sig, so->sig);
}

/* The environment 'env' (NAME=VALUE strings) as export lines. */
static void script_exports(ef_buf *b, char **env)
{
    for (int k = 0; env[k]; k++) {
        const char *eq = strchr(env[k], '=');
        ef_buf_printf(b, "export %.*s=", (int)(eq - env[k]), env[k]);
        ef_sh_quote(b, eq + 1);
        ef_buf_put(b, "\n");
    }
}

/* The rendezvous is on the node this script runs on: Slurm's first
 * node of the job, SLURM_NODEID 0 (the order of slurm.conf, which
 * need not be the plan's): its address, as sinfo gave it. Only on
 * several nodes. */
static void script_master_addr(ef_buf *b, const exec_ctx *x,
                               const script_of *so)
{
    if (so->nn <= 1)
        return;
    ef_buf_put(b, "case ${SLURMD_NODENAME:-} in\n");
    for (int k = 0; k < so->nn; k++) {
        char t2[64];
        ef_buf_put(b, "    ");
        ef_sh_quote(b, exec_nodes_name(&x->nodes, so->nodes[k], t2,
                                       sizeof t2));
        ef_buf_put(b, ") MASTER_ADDR=");
        ef_sh_quote(b, node_addr(x, so->nodes[k], t2, sizeof t2));
        ef_buf_put(b, " ;;\n");
    }
    ef_buf_put(b, "esac\n");
}

/* Its port, probed on this node as exec_pick_port probes the local
 * host: from the job's port + (attempt - 1) upward, wrapping in
 * 29500..30499 + jobs, the first that nothing listens on (state 0A
 * in /proc/net/tcp and tcp6); r->port when the caller chose one */
static void script_port(ef_buf *b, const exec_ctx *x, const exec_run *r,
                        const script_of *so)
{
    int lo = 29500, span = 30499 + x->p->njobs - lo + 1;
    int first = r->port > 0 ? r->port
                : lo + ((so->jb->port - lo) + (r->attempt > 1
                                               ? r->attempt - 1 : 0)) % span;
    int tries = r->port > 0 ? 1 : 512;
    ef_buf_printf(b, "efplan_nets=\n"
                  "for efplan_f in /proc/net/tcp /proc/net/tcp6; do\n"
                  "    [ -r \"$efplan_f\" ] && efplan_nets=\"$efplan_nets "
                  "$efplan_f\"\n"
                  "done\n"
                  "MASTER_PORT=$(awk -v lo=%d -v span=%d -v first=%d "
                  "-v tries=%d 'FNR > 1 && $4 == \"0A\" "
                  "{ n = split($2, a, \":\"); used[toupper(a[n])] = 1 }\n"
                  "    END { p = first; for (k = 0; k < tries; k++) { "
                  "p = lo + (first - lo + k) %% span;\n"
                  "        if (!(sprintf(\"%%04X\", p) in used)) { print p; "
                  "exit } } print first }' $efplan_nets < /dev/null)\n"
                  "[ -n \"$MASTER_PORT\" ] || MASTER_PORT=%d\n"
                  "PET_MASTER_ADDR=$MASTER_ADDR PET_MASTER_PORT=$MASTER_PORT\n"
                  "export MASTER_ADDR MASTER_PORT PET_MASTER_ADDR "
                  "PET_MASTER_PORT\n"
                  "printf 'efplan: rendezvous %%s:%%s\\n' \"$MASTER_ADDR\" "
                  "\"$MASTER_PORT\"\n", lo, span, first, tries, first);
}

/* The job's workdir, then its command, started in the background: on
 * several nodes or processes through srun, each with its ranks from
 * Slurm's (one process per GPU: torchrun's per-process ones), and not at
 * all when the checkpoint signal came first. Ends mid-line (the " &"
 * follows). */
static void script_command(ef_buf *b, const exec_run *r,
                           const script_of *so)
{
    const job_run *jr = so->jr;
    if (jr->workdir) {
        ef_buf_put(b, "cd ");
        ef_sh_quote(b, jr->workdir);
        ef_buf_put(b, " || efplan_done 127\n");
    }
    if (so->wrap) {
        ef_buf_printf(b, "[ -z \"$efplan_early\" ] || efplan_done %d\n",
                      128 + so->sig);
        ef_buf_printf(b, "srun --nodes=\"$SLURM_NNODES\" --ntasks-per-node=%d "
                      "sh -c 'NODE_RANK=$SLURM_NODEID; PET_NODE_RANK="
                      "$SLURM_NODEID; export NODE_RANK PET_NODE_RANK; ",
                      so->tasks);
        /* a process per GPU (per_gpu, or one GPU per node): its
         * torchrun ranks, Slurm's task ids in block order */
        if (so->tasks > 1 || r->place->n == so->nn)
            ef_buf_printf(b, "GROUP_RANK=$SLURM_NODEID; RANK=$SLURM_PROCID; "
                          "LOCAL_RANK=$SLURM_LOCALID; LOCAL_WORLD_SIZE=%d; "
                          "export GROUP_RANK RANK LOCAL_RANK "
                          "LOCAL_WORLD_SIZE; ", so->tasks);
        ef_buf_put(b, "exec \"$@\"' efplan-node");
    }
    for (int k = 0; k < jr->argc; k++) {
        ef_buf_put(b, (k || so->wrap) ? " " : "");
        ef_sh_quote(b, jr->argv[k]);
    }
}

/* Its exit status: a wait that the trapped signal interrupts returns
 * above 128 before the command has ended, so wait again while a
 * signal came and the status is above 128. That second wait returns
 * the status when the first was interrupted, and 127 (no such child:
 * dash, bash in POSIX mode) or the same status (bash otherwise) when
 * the first had it already; so 127 keeps the first. (A command that
 * exits 127 right after an interrupted wait is recorded as killed by
 * the signal.) */
static void script_wait(ef_buf *b, const script_of *so)
{
    ef_buf_printf(b, " &\nefplan_child=$!\n"
                  "if [ -n \"$efplan_early\" ]; then kill -%d "
                  "\"$efplan_child\" 2>/dev/null; fi\n"
                  "wait \"$efplan_child\"; efplan_rc=$?\n"
                  "while [ -n \"$efplan_sig\" ] && [ \"$efplan_rc\" -gt 128 ]; "
                  "do\n"
                  "    efplan_sig=\n"
                  "    wait \"$efplan_child\" 2>/dev/null; efplan_st=$?\n"
                  "    [ \"$efplan_st\" -eq 127 ] && break\n"
                  "    efplan_rc=$efplan_st\n"
                  "done\n"
                  "efplan_done \"$efplan_rc\"\n", so->sig);
}

char *exec_slurm_script(exec_ctx *x, const exec_run *r)
{
    script_of so; /* the job, its nodes, processes and signal */
    so.jb = &x->p->jobs[r->job];
    so.jr = &so.jb->in->run;
    so.nodes = ef_malloc((size_t)(r->place->n + 1) * sizeof *so.nodes);
    so.nn = exec_place_nodes(r->place, so.nodes);
    so.tasks = tasks_per_node(x, r, so.nn);
    so.wrap = so.nn > 1 || so.tasks > 1;
    char **env = script_env(x, r, so.nodes[0]); /* what it exports */
    char rcp[4096]; /* the attempt's rc file */
    script_rc_path(x, r, rcp, sizeof rcp);
    so.sig = exec_job_signal(x->p, r->job);
    ef_buf b = {0}; /* the script */
    script_head(&b, x, r, &so, rcp);
    script_trap(&b, &so);
    script_exports(&b, env);
    exec_strv_free(env);
    script_master_addr(&b, x, &so);
    free(so.nodes);
    script_port(&b, x, r, &so);
    script_command(&b, r, &so);
    script_wait(&b, &so);
    return b.s;
}

static int write_script(exec_ctx *x, const exec_run *r, const char *path,
                        ef_err *e)
{
    char *s = exec_slurm_script(x, r);
    int rc = ef_write_file_atomic(path, s, strlen(s), e);
    free(s);
    if (rc == EF_OK)
        chmod(path, 0755);
    return rc;
}

static int slurm_launch(exec_ctx *x, exec_run *r, ef_err *e)
{
    const exec_job *jb = &x->p->jobs[r->job];
    if (!jb->in->run.argv)
        return ef_fail(e, EF_E_INPUT, "%s: job \"%s\" has no \"command\" (add "
                       "one to run it)", x->p->q.path, jb->id);
    if (as_other(r) && geteuid() != 0)
        return ef_fail(e, EF_E_INPUT, "job \"%s\" is to run as %s (uid %ld), "
                       "and this process (uid %ld) cannot submit as another "
                       "user (sbatch --uid): run efplan serve as root", jb->id,
                       r->user->name, (long)r->user->uid, (long)geteuid());
    if (exec_make_job_dir(x, r->job, r->user, e) != EF_OK)
        return EF_ERR;
    sq_user(x, r);
    char script[4096];
    exec_path_run(x, r->job, r->attempt, "sbatch", script, sizeof script);
    if (write_script(x, r, script, e) != EF_OK)
        return EF_ERR;
    char **v = sbatch_argv(x, r, script);
    char out[4096];
    int rc = exec_run_cmd(v, out, sizeof out, 1);
    exec_strv_free(v);
    if (rc != 0)
        return cmd_fail(e, "sbatch", rc, out);
    long id = strtol(out, NULL, 10);
    if (id <= 0)
        return ef_fail(e, EF_E_INTERNAL, "slurm: sbatch --parsable printed "
                       "\"%.80s\" (expected a job id)", first_line(out));
    snprintf(r->handle, sizeof r->handle, "%ld", id);
    ((slurm_priv *)x->priv)->at = 0; /* read squeue afresh */
    return EF_OK;
}

static const sq_job *sq_find_id(const slurm_priv *s, long id)
{
    for (int i = 0; i < s->n; i++)
        if (s->jobs[i].id == id)
            return &s->jobs[i];
    return NULL;
}

static int active(const char *state)
{
    static const char *const act[] = {"PENDING", "RUNNING", "CONFIGURING",
                                      "COMPLETING", "SUSPENDED", "REQUEUED",
                                      "RESIZING", "SIGNALING", "STAGE_OUT"};
    for (size_t i = 0; i < sizeof act / sizeof *act; i++)
        if (strcmp(state, act[i]) == 0)
            return 1;
    return 0;
}

static int slurm_poll(exec_ctx *x, const exec_run *r, exec_pstatus *st,
                      ef_err *e)
{
    if (exec_read_rc(x, r, 1, st))
        return EF_OK;
    sq_user(x, r);
    if (sq_refresh(x, 0, e) != EF_OK)
        return EF_ERR;
    const sq_job *q = sq_find_id(x->priv, strtol(r->handle, NULL, 10));
    if (q && active(q->state)) {
        st->state = EXEC_P_RUNNING;
        return EF_OK;
    }
    if (exec_read_rc(x, r, 1, st))
        return EF_OK;
    /* Not listed as active: ask for this job alone before calling it
     * gone (a controller shutting down may answer squeue with less). */
    char out[8192], idarg[160];
    snprintf(idarg, sizeof idarg, "%s", r->handle);
    char *argv[] = {"scontrol", "show", "job", "-o", idarg, NULL};
    int rc = exec_run_cmd(argv, out, sizeof out, 1);
    if (rc != 0 && !strstr(out, "Invalid job id"))
        return cmd_fail(e, "scontrol show job", rc, out);
    const char *js = rc == 0 ? strstr(out, "JobState=") : NULL;
    char state[32] = "";
    if (js)
        sscanf(js + 9, "%31[A-Z_]", state);
    if (state[0] && active(state)) {
        st->state = EXEC_P_RUNNING;
        return EF_OK;
    }
    if (exec_read_rc(x, r, 1, st))
        return EF_OK;
    st->state = EXEC_P_GONE;
    return EF_OK;
}

static int scancel(const exec_run *r, const char *sigopt, ef_err *e)
{
    char out[4096];
    char *argv[5] = {"scancel", NULL, NULL, NULL, NULL};
    int n = 1;
    char sig[64];
    if (sigopt) {
        argv[n++] = "--batch";
        snprintf(sig, sizeof sig, "--signal=%s", sigopt);
        argv[n++] = sig;
    }
    argv[n++] = (char *)r->handle;
    int rc = exec_run_cmd(argv, out, sizeof out, 1);
    /* A job that ended between our last look and this call is already
     * what we asked for: the controller either forgot it ("Invalid job
     * id") or is finishing it ("already completing or completed"). */
    if (rc != 0 && (strstr(out, "Invalid job id") ||
                    strstr(out, "already completing or completed")))
        return EF_OK;
    if (rc != 0)
        return cmd_fail(e, "scancel", rc, out);
    return EF_OK;
}

static int slurm_signal(exec_ctx *x, const exec_run *r, int sig, ef_err *e)
{
    long id = strtol(r->handle, NULL, 10);
    if (id <= 0)
        return EF_OK;
    /* Only a running job can take a checkpoint signal: a pending one is
     * cancelled, and one in transition (CONFIGURING, COMPLETING), which
     * scancel would retry on for minutes, is left to the forced stop. */
    sq_user(x, r);
    if (sq_refresh(x, 1, e) != EF_OK)
        return EF_ERR;
    const sq_job *q = sq_find_id(x->priv, id);
    if (!q)
        return EF_OK;
    if (strcmp(q->state, "PENDING") == 0)
        return scancel(r, NULL, e);
    if (strcmp(q->state, "RUNNING") != 0)
        return EF_OK;
    char s[16];
    const char *name = job_signal_name(sig);
    if (name)
        snprintf(s, sizeof s, "%s", name + 3);
    else
        snprintf(s, sizeof s, "%d", sig);
    return scancel(r, s, e);
}

static int slurm_stop(exec_ctx *x, const exec_run *r, ef_err *e)
{
    if (strtol(r->handle, NULL, 10) <= 0)
        return EF_OK;
    return scancel(r, NULL, e);
}

static int slurm_find(exec_ctx *x, exec_run *r, ef_err *e)
{
    char name[256];
    job_name(x, r->job, r->attempt, name, sizeof name);
    sq_user(x, r);
    if (sq_refresh(x, 1, e) != EF_OK)
        return EF_ERR;
    const slurm_priv *s = x->priv;
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->jobs[i].name, name) == 0) {
            snprintf(r->handle, sizeof r->handle, "%ld", s->jobs[i].id);
            return 1;
        }
    exec_pstatus st;
    /* it ran and ended while nobody watched */
    if (exec_read_rc(x, r, 1, &st)) {
        snprintf(r->handle, sizeof r->handle, "0");
        return 1;
    }
    return 0;
}

/* ---- where Slurm put an attempt's GPUs -------------------------------- */

/* The GPU indices of one "GRES=" value of scontrol show job -d (e.g.
 * "gpu:2(IDX:4-5)", "gpu:a100:4(IDX:0,2-4),mps:100(0/100)") into
 * idx[] (room for 64, each below 64); their count, or -1 when it names
 * none. */
static int gres_indices(const char *v, size_t len, int *idx)
{
    int n = 0, seen = 0;
    for (size_t i = 0; i < len; i++) {
        if (!((i == 0 || v[i - 1] == ',') && len - i > 4 &&
              strncmp(v + i, "gpu", 3) == 0 && (v[i + 3] == ':' ||
                                                v[i + 3] == '(')))
            continue;
        const char *p = memchr(v + i, '(', len - i);
        if (!p || (size_t)(v + len - p) < 6 || strncmp(p, "(IDX:", 5) != 0)
            continue;
        p += 5;
        const char *end = memchr(p, ')', (size_t)(v + len - p));
        if (!end)
            return -1;
        seen = 1;
        while (p < end) {
            char *q;
            long a = strtol(p, &q, 10), b = a;
            if (q == p || a < 0 || a > 63)
                return -1;
            if (*q == '-') {
                p = q + 1;
                b = strtol(p, &q, 10);
                if (q == p || b < a || b > 63)
                    return -1;
            }
            for (long k = a; k <= b; k++) {
                if (n >= 64)
                    return -1;
                idx[n++] = (int)k;
            }
            p = q;
            if (p < end && *p != ',')
                return -1;
            if (p < end)
                p++;
        }
        i = (size_t)(end - v);
    }
    return seen ? n : -1;
}

/* The node names of a "Nodes=" value: one name, or a host list
 * ("node[1-2]"), which scontrol show hostnames expands. Into *out, one
 * name a line. */
static int node_names(const char *expr, ef_buf *out, ef_err *e)
{
    if (!strpbrk(expr, "[,")) {
        ef_buf_printf(out, "%s\n", expr);
        return EF_OK;
    }
    char *argv[] = {"scontrol", "show", "hostnames", (char *)expr, NULL};
    int rc = exec_run_capture(argv, out, 1);
    if (rc != 0)
        return cmd_fail(e, "scontrol show hostnames", rc, out->s);
    return EF_OK;
}

/* Sort (node, gpu) pairs by node, then GPU. */
static void sort_pairs(exec_place *pl)
{
    for (int i = 1; i < pl->n; i++)
        for (int k = i; k > 0 && (pl->node[k] < pl->node[k - 1] ||
                                  (pl->node[k] == pl->node[k - 1] &&
                                   pl->gpu[k] < pl->gpu[k - 1])); k--) {
            int t = pl->node[k];
            pl->node[k] = pl->node[k - 1];
            pl->node[k - 1] = t;
            t = pl->gpu[k];
            pl->gpu[k] = pl->gpu[k - 1];
            pl->gpu[k - 1] = t;
        }
}

/*
 * The per-node entries of scontrol show job -d -o (one line): after
 * "JOB_GRES=...", entries "Nodes=EXPR CPU_IDs=... Mem=... GRES=VALUE" up
 * to " MinCPUsNode=". Each occurrence of " JOB_GRES=" is tried in turn
 * (a value of another field may hold that text) and the first whose
 * entries name exactly the nodes and GPU counts of attempt r wins: 1 and
 * *real; 0 when none does.
 */
static int parse_placed(exec_ctx *x, const exec_run *r, const char *text,
                        exec_place *real, ef_err *e)
{
    const exec_place *want = r->place;
    for (const char *at = strstr(text, " JOB_GRES="); at;
         at = strstr(at + 1, " JOB_GRES=")) {
        const char *stop = strstr(at, " MinCPUsNode=");
        if (!stop)
            break;
        exec_place got = {0, ef_malloc(sizeof(int) * (size_t)(want->n + 64)),
                          ef_malloc(sizeof(int) * (size_t)(want->n + 64)),
                          want->batch};
        int ok = 1, any = 0;
        const char *p = at + 1;
        while (ok && p < stop) {
            const char *nd = strstr(p, " Nodes=");
            if (!nd || nd >= stop)
                break;
            nd += 7;
            size_t nl = strcspn(nd, " ");
            const char *g = strstr(nd, " GRES=");
            if (!g || g >= stop) {
                ok = 0;
                break;
            }
            g += 6;
            size_t gl = strcspn(g, " ");
            int idx[64];
            int ni = gres_indices(g, gl, idx);
            char *expr = ef_strndup(nd, nl);
            ef_buf names = {0};
            if (ni < 0) {
                ok = 0;
            } else if (node_names(expr, &names, e) != EF_OK) {
                free(expr);
                free(names.s);
                placement_free(&got);
                return EF_ERR;
            }
            free(expr);
            for (char *l = names.s; ok && l && *l;) {
                char *end = strchr(l, '\n');
                if (end)
                    *end = '\0';
                int k = -1;
                for (int m = 0; m < x->nodes.n && k < 0; m++)
                    if (strcmp(x->nodes.name[m], l) == 0)
                        k = m;
                if (l[0] && (k < 0 || got.n + ni > want->n)) {
                    ok = 0;
                } else if (l[0]) {
                    for (int q = 0; q < ni; q++) {
                        got.node[got.n] = k;
                        got.gpu[got.n++] = idx[q];
                    }
                    any = 1;
                }
                l = end ? end + 1 : NULL;
            }
            free(names.s);
            p = g + gl;
        }
        sort_pairs(&got);
        for (int k = 1; ok && k < got.n; k++)
            ok = got.node[k] != got.node[k - 1] || got.gpu[k] != got.gpu[k - 1];
        if (ok && any && exec_place_same_shape(&got, want)) {
            *real = got;
            return 1;
        }
        placement_free(&got);
    }
    return 0;
}

static int slurm_placed(exec_ctx *x, const exec_run *r, exec_place *real,
                        ef_err *e)
{
    memset(real, 0, sizeof *real);
    long id = strtol(r->handle, NULL, 10);
    if (id <= 0)
        return 0;
    sq_user(x, r);
    if (sq_refresh(x, 0, e) != EF_OK)
        return EF_ERR;
    slurm_priv *s = x->priv;
    const sq_job *q = sq_find_id(s, id);
    if (!q || strcmp(q->state, "RUNNING") != 0)
        return 0;
    /* at most every 5 s per attempt */
    double now = ef_mono_seconds();
    int a = 0;
    while (a < s->nasked && s->asked[a].id != id)
        a++;
    if (a < s->nasked && now - s->asked[a].at < 5)
        return 0;
    if (a == s->nasked) {
        s->asked = ef_realloc(s->asked, (size_t)(a + 1) * sizeof *s->asked);
        s->nasked++;
        s->asked[a].id = id;
    }
    s->asked[a].at = now;
    char idarg[160];
    snprintf(idarg, sizeof idarg, "%ld", id);
    char *argv[] = {"scontrol", "show", "job", "-d", "-o", idarg, NULL};
    ef_buf out = {0};
    int rc = exec_run_capture(argv, &out, 1);
    if (rc != 0) {
        int r2 = strstr(out.s ? out.s : "", "Invalid job id")
                     ? 0 : cmd_fail(e, "scontrol show job -d", rc, out.s);
        free(out.s);
        return r2;
    }
    rc = parse_placed(x, r, out.s ? out.s : "", real, e);
    free(out.s);
    if (rc == 1) { /* known: forget the attempt */
        s->asked[a] = s->asked[--s->nasked];
    }
    return rc;
}

/* ---- the options of a shared cluster ------------------------------------ */

int exec_slurm_opts_any(const exec_slurm_opts *o)
{
    return o->partition || o->account || o->qos || o->nargs > 0;
}

int exec_slurm_check_arg(const char *word, ef_err *e)
{
    static const char *const fromplan = "efplan sets it from the plan";
    static const char *const own = "efplan has an option of that name";
    static const char *const one = "sbatch would not submit one batch job "
                                   "and print its id";
    static const struct {
        const char *name, *why;
        int family; /* NAME-anything too */
    } owned[] = {
        {"job-name", "efplan names each attempt (it finds them by name)", 0},
        {"nodes", fromplan, 0}, {"nodelist", fromplan, 0},
        {"ntasks", fromplan, 1}, {"gres", fromplan, 0},
        {"gpus", fromplan, 1}, {"time", fromplan, 0},
        {"output", "efplan writes the attempt's log there", 0},
        {"error", "efplan writes the attempt's log to --output", 0},
        {"open-mode", "efplan appends to the attempt's log", 0},
        {"parsable", "efplan reads the job id from it", 0},
        {"partition", own, 0}, {"account", own, 0}, {"qos", own, 0},
        {"array", one, 0}, {"wrap", one, 0}, {"test-only", one, 0},
        {"wait", one, 0}, {"help", one, 0}, {"usage", one, 0},
        {"version", one, 0}};
    /* short options: efplan's (J N w n t o e p A q G a W h V), and
     * those that take a value: the rest of the word */
    static const char owned_short[] = "JNwntoepAqGaWhV";
    static const char with_value[] = "aAbBcCdDeFGiJkLmMnNopqStwx";
    if (word[0] != '-' || !word[1] || strcmp(word, "--") == 0)
        return ef_fail(e, EF_E_USAGE, "--sbatch-arg \"%s\": expected one "
                       "sbatch option word (\"--name=value\", \"--flag\" or "
                       "\"-Xvalue\"; a value goes in the same word: "
                       "--mem=4G, not --mem 4G)", word);
    if (word[1] == '-') {
        const char *name = word + 2;
        size_t nl = strcspn(name, "=");
        size_t bl = strcspn(name, " \t\n");
        if (bl < nl) /* "--mem 4G": an option and its value, apart */
            return ef_fail(e, EF_E_USAGE, "--sbatch-arg \"%s\": an option "
                           "and its value in one word with a blank between "
                           "(sbatch would get it as one word, no option "
                           "it knows); write --sbatch-arg=--%.*s=%s",
                           word, (int)bl, name, name + bl +
                           strspn(name + bl, " \t\n"));
        if (gres_other(word))
            return EF_OK; /* merged into efplan's --gres=gpu:N */
        for (size_t k = 0; k < sizeof owned / sizeof *owned; k++) {
            size_t ol = strlen(owned[k].name);
            /* sbatch takes a prefix of a name; every --ntasks-*, --gpus-*
             * is efplan's too (--gres-flags is not) */
            int hit = (nl <= ol && strncmp(owned[k].name, name, nl) == 0) ||
                      (owned[k].family && nl > ol && name[ol] == '-' &&
                       strncmp(owned[k].name, name, ol) == 0);
            if (hit)
                return ef_fail(e, EF_E_USAGE, "--sbatch-arg \"%s\": --%.*s "
                               "is efplan's (%s)%s", word, (int)nl, name,
                               owned[k].why, strcmp(owned[k].name, "gres")
                               ? "" : "; resources other than GPUs may be "
                               "given as --gres=NAME[:COUNT],... and are "
                               "added to efplan's --gres=gpu:N");
        }
        return EF_OK;
    }
    if (word[2] == ' ' || word[2] == '\t')
        return ef_fail(e, EF_E_USAGE, "--sbatch-arg \"%s\": an option "
                       "and its value in one word with a blank between "
                       "(sbatch would get it as one word); write "
                       "--sbatch-arg=-%c%s", word, word[1],
                       word + 2 + strspn(word + 2, " \t"));
    for (const char *c = word + 1; *c; c++) {
        if (strchr(owned_short, *c))
            return ef_fail(e, EF_E_USAGE, "--sbatch-arg \"%s\": -%c is "
                           "efplan's (it sets the job's name, nodes, tasks, "
                           "GPUs, time, log, partition, account or qos; or "
                           "sbatch would not submit one job)", word, *c);
        if (strchr(with_value, *c))
            break; /* the rest of the word is its value */
    }
    return EF_OK;
}

const exec_backend exec_backend_slurm = {
    .name = "slurm",
    .prepare = slurm_prepare,
    .launch = slurm_launch,
    .signal = slurm_signal,
    .poll = slurm_poll,
    .stop = slurm_stop,
    .find = slurm_find,
    .release = slurm_release,
    .nodes_down = slurm_nodes_down,
    .placed = slurm_placed,
};
