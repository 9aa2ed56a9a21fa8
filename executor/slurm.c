/* slurm.c: the Slurm backend (see exec.h).
 *
 * One attempt = one batch job: sbatch --parsable with --nodelist,
 * --gres=gpu:N (N GPUs per node), --time and a job name that encodes the
 * plan, the job and the attempt ("efp-HASH8-JOB-A"), so that a restarted
 * executor finds what it launched. The batch script (run/JOB.A.sbatch)
 * sets the launch environment, runs the command (through srun on
 * several nodes), forwards the checkpoint signal to it, and writes the
 * exit status to run/JOB.A.rc: the state directory must be on a file
 * system the nodes share. Checkpoint = scancel --batch --signal=SIG; stop
 * = scancel. Slurm cannot resize a running job, so a resize or migration
 * is checkpoint, stop, and a new batch job with the new shape. What runs
 * is read back with squeue, asked for this user's jobs only.
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

typedef struct slurm_priv {
    sq_job *jobs;
    int n;
    double at;      /* wall time of the last squeue, 0 = never */
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

/* What runs, at most every 0.3 s (or when 'force'): squeue for this user's
 * jobs only (--user=UID; every state, so that one just ended is still
 * seen), one "ID STATE NAME" line each, read whatever the size of its
 * answer. Only this plan's attempts are kept: names "efp-HASH8-...". */
static int sq_refresh(exec_ctx *x, int force, ef_err *e)
{
    slurm_priv *s = x->priv;
    if (!force && s->at > 0 && ef_mono_seconds() - s->at < 0.3)
        return EF_OK;
    char user[64];
    snprintf(user, sizeof user, "--user=%ld", (long)getuid());
    char *argv[] = {"squeue", "--noheader", user, "--states=all",
                    "--format=%A %T %j", NULL};
    ef_buf out = {0};
    int rc = exec_run_capture(argv, &out, 0);
    if (rc != 0) {
        /* the error text went to stderr: run again for it, merged */
        free(out.s);
        out = (ef_buf){0};
        int rc2 = exec_run_capture(argv, &out, 1);
        int r = cmd_fail(e, "squeue", rc2 ? rc2 : rc, out.s);
        free(out.s);
        return r;
    }
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

/* Without --nodes: the node table is sinfo's nodes, sorted. */
static int read_sinfo(exec_ctx *x, ef_err *e)
{
    ef_buf out = {0};
    char *argv[] = {"sinfo", "-h", "-N", "-o", "%N", NULL};
    int rc = exec_run_capture(argv, &out, 1);
    if (rc != 0) {
        int r = cmd_fail(e, "sinfo -h -N -o %N (node names; or pass --nodes "
                         "FILE)", rc, out.s);
        free(out.s);
        return r;
    }
    rc = exec_nodes_parse(&x->nodes, "sinfo", out.s, 1, e);
    free(out.s);
    if (rc != EF_OK)
        return EF_ERR;
    return exec_nodes_check(&x->nodes, x->p, e);
}

static int slurm_prepare(exec_ctx *x, ef_err *e)
{
    x->priv = ef_calloc(1, sizeof(slurm_priv));
    if (state_path_ok(x, e) != EF_OK)
        return EF_ERR;
    if (!x->nodes_file && read_sinfo(x, e) != EF_OK)
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
    if (x->priv) {
        sq_clear(x->priv);
        free(x->priv);
        x->priv = NULL;
    }
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
    char **v = ef_calloc(16, sizeof *v);
    int n = 0;
    char buf[8192];
    v[n++] = ef_strdup("sbatch");
    v[n++] = ef_strdup("--parsable");
    snprintf(buf, sizeof buf, "--job-name=%s", name);
    v[n++] = ef_strdup(buf);
    snprintf(buf, sizeof buf, "--nodes=%d", nn);
    v[n++] = ef_strdup(buf);
    snprintf(buf, sizeof buf, "--nodelist=%s", nl.s);
    v[n++] = ef_strdup(buf);
    v[n++] = ef_strdup("--ntasks-per-node=1");
    snprintf(buf, sizeof buf, "--gres=gpu:%d", r->place->n / (nn ? nn : 1));
    v[n++] = ef_strdup(buf);
    snprintf(buf, sizeof buf, "--time=%ld", minutes);
    v[n++] = ef_strdup(buf);
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

char *exec_slurm_script(exec_ctx *x, const exec_run *r)
{
    const exec_job *jb = &x->p->jobs[r->job];
    const job_run *jr = &jb->in->run;
    int *nodes = ef_malloc((size_t)(r->place->n + 1) * sizeof *nodes);
    int nn = exec_place_nodes(r->place, nodes);
    char tmp[64], rcp[4096];
    const char *master = exec_nodes_name(&x->nodes, nodes[0], tmp,
                                         sizeof tmp);
    free(nodes);
    char **env = exec_launch_env(x, r, 0, -1, master, 0);
    exec_path_run(x, r->job, r->attempt, "rc", rcp, sizeof rcp);
    int sig = exec_job_signal(x->p, r->job);
    ef_buf b = {0};
    ef_buf_printf(&b, "#!/bin/sh\n# efplan apply: job %s, attempt %d, plan "
                  "%s\n", jb->safe, r->attempt, x->p->hash);
    /* efplan_done N: the exit status N to the rc file (through a
     * temporary file beside it; both paths hold the state directory, any
     * bytes: quoted like every other word), and exit N */
    char rct[4200];
    snprintf(rct, sizeof rct, "%s.tmp", rcp);
    ef_buf_put(&b, "efplan_done() {\n    printf 'exit %d\\n' \"$1\" > ");
    ef_sh_quote(&b, rct);
    ef_buf_put(&b, " && mv -f -- ");
    ef_sh_quote(&b, rct);
    ef_buf_put(&b, " ");
    ef_sh_quote(&b, rcp);
    ef_buf_put(&b, "\n    exit \"$1\"\n}\n");
    /* The checkpoint signal, from the first line on: forwarded to the
     * command once it runs, or as soon as it does when it came first. */
    ef_buf_printf(&b, "efplan_child= efplan_sig= efplan_early=\n"
                  "trap 'efplan_sig=1; if [ -n \"$efplan_child\" ]; then "
                  "kill -%d \"$efplan_child\" 2>/dev/null; else "
                  "efplan_early=1; fi' %d\n", sig, sig);
    for (int k = 0; env[k]; k++) {
        const char *eq = strchr(env[k], '=');
        ef_buf_printf(&b, "export %.*s=", (int)(eq - env[k]), env[k]);
        ef_sh_quote(&b, eq + 1);
        ef_buf_put(&b, "\n");
    }
    exec_strv_free(env);
    if (jr->workdir) {
        ef_buf_put(&b, "cd ");
        ef_sh_quote(&b, jr->workdir);
        ef_buf_put(&b, " || efplan_done 127\n");
    }
    if (nn > 1)
        ef_buf_put(&b, "srun --nodes=\"$SLURM_NNODES\" --ntasks-per-node=1 "
                   "sh -c 'NODE_RANK=$SLURM_NODEID; export NODE_RANK; exec "
                   "\"$@\"' efplan-node");
    for (int k = 0; k < jr->argc; k++) {
        ef_buf_put(&b, (k || nn > 1) ? " " : "");
        ef_sh_quote(&b, jr->argv[k]);
    }
    /* Its exit status: a wait that the trapped signal interrupts returns
     * above 128 before the command has ended, so wait again while a
     * signal came and the status is above 128. That second wait returns
     * the status when the first was interrupted, and 127 (no such child:
     * dash, bash in POSIX mode) or the same status (bash otherwise) when
     * the first had it already; so 127 keeps the first. (A command that
     * exits 127 right after an interrupted wait is recorded as killed by
     * the signal.) */
    ef_buf_printf(&b, " &\nefplan_child=$!\n"
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
                  "efplan_done \"$efplan_rc\"\n", sig);
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
};
