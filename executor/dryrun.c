/* dryrun.c: the dry-run backend: runs nothing and prints, through
 * exec_ctx.out, what the apply loop would have a cluster do (see exec.h).
 *
 * The loop drives it like any backend (exec_backend.dry: its journal in
 * memory, its clock from slot boundary to slot boundary). It prints each
 * slot's header when the slot changes something; each stop, resize and
 * migration as the local and the Slurm backends would carry it out (the
 * checkpoint signal, the grace, the forced stop); each launch with the
 * environment and command per node (MASTER_ADDR the job's first node, as
 * in --nodelist) and the exact sbatch line; each job's completion where
 * the plan has it (jobs are assumed to finish as planned); and the stops
 * at the end of the window. Words are quoted with ef_sh_word.
 */
#include "executor/exec.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"

typedef struct dry_priv {
    exec_act *act;   /* per job: its action in the step announced last */
    int *stopped;    /* per job: the attempt that got its checkpoint signal */
    int *sig;        /* ... and that signal */
} dry_priv;

static void outf(const exec_ctx *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void outf(const exec_ctx *x, const char *fmt, ...)
{
    if (!x->out)
        return;
    char buf[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    x->out(x->arg, buf);
}

static int dry_prepare(exec_ctx *x, ef_err *e)
{
    const exec_plan *p = x->p;
    dry_priv *d = ef_calloc(1, sizeof *d);
    size_t n = (size_t)p->njobs + 1;
    d->act = ef_calloc(n, sizeof *d->act);
    d->stopped = ef_calloc(n, sizeof *d->stopped);
    d->sig = ef_calloc(n, sizeof *d->sig);
    x->priv = d;
    outf(x, "dry-run of %s: %d jobs, %d slots from %" PRId64 " to %" PRId64
         " (applying until %" PRId64 "); nothing is run", p->path, p->njobs,
         p->nslots, p->now, p->end, x->end);
    return EF_OK;
}

static void dry_release(exec_ctx *x)
{
    dry_priv *d = x->priv;
    if (!d)
        return;
    free(d->act);
    free(d->stopped);
    free(d->sig);
    free(d);
    x->priv = NULL;
}

static void dry_announce(exec_ctx *x, int s, const exec_action *act, int n)
{
    dry_priv *d = x->priv;
    int changes = 0;
    for (int k = 0; k < n; k++) {
        d->act[act[k].job] = act[k].act;
        changes += act[k].act != EXEC_KEEP;
    }
    if (s < 0)
        outf(x, "end of dry-run at %" PRId64 "%s", x->now,
             n ? ": checkpoint and stop what still runs" : "");
    else if (changes)
        outf(x, "slot %d [%" PRId64 ", %" PRId64 ")", s, x->p->slots[s].start,
             x->p->slots[s].end);
}

/* "KEY=VALUE" as a sh assignment: KEY (a variable name) bare, the value
 * quoted. */
static void put_assignment(ef_buf *b, const char *kv)
{
    const char *eq = strchr(kv, '=');
    size_t kl = eq ? (size_t)(eq - kv) : strlen(kv);
    ef_buf_printf(b, "%.*s=", (int)kl, kv);
    if (eq && eq[1])
        ef_sh_word(b, eq + 1);
}

static int dry_launch(exec_ctx *x, exec_run *r, ef_err *e)
{
    const exec_job *jb = &x->p->jobs[r->job];
    const exec_place *pl = r->place;
    char where[512], tmp[64];
    outf(x, "  start %s attempt %d on %s", jb->id, r->attempt,
         exec_place_str(pl, where, sizeof where));
    int *nodes = ef_malloc((size_t)(pl->n + 1) * sizeof *nodes);
    int nn = exec_place_nodes(pl, nodes);
    const char *master = exec_nodes_name(&x->nodes, nodes[0], tmp, sizeof tmp);
    /* one line per process: a node's, or with "per_gpu" each GPU's */
    int per = jb->in->run.per_gpu ? pl->n / (nn ? nn : 1) : 1;
    for (int proc = 0; proc < nn * per; proc++) {
        int rank = proc / per;
        ef_buf b = {0};
        char **env = exec_launch_env(x, r, rank,
                                     jb->in->run.per_gpu ? proc % per : -1,
                                     master, 1);
        for (int k = 0; env[k]; k++) {
            ef_buf_put(&b, k ? " " : "");
            put_assignment(&b, env[k]);
        }
        exec_strv_free(env);
        if (jb->in->run.workdir) {
            ef_buf_put(&b, " (in ");
            ef_sh_word(&b, jb->in->run.workdir);
            ef_buf_put(&b, ")");
        }
        ef_buf_put(&b, " --");
        if (!jb->in->run.argv)
            ef_buf_put(&b, " (no command: add \"command\" to the job)");
        for (int k = 0; k < jb->in->run.argc; k++) {
            ef_buf_put(&b, " ");
            ef_sh_word(&b, jb->in->run.argv[k]);
        }
        if (jb->in->run.per_gpu)
            outf(x, "    node %d process %d: %s", nodes[rank], proc % per,
                 b.s);
        else
            outf(x, "    node %d: %s", nodes[rank], b.s);
        free(b.s);
    }
    free(nodes);
    char line[16384];
    outf(x, "    slurm: %s", exec_slurm_sbatch_line(x, r, line, sizeof line));
    snprintf(r->handle, sizeof r->handle, "dry-run");
    return EF_OK;
}

static int dry_signal(exec_ctx *x, const exec_run *r, int sig, ef_err *e)
{
    dry_priv *d = x->priv;
    const exec_job *jb = &x->p->jobs[r->job];
    exec_act a = d->act[r->job] == EXEC_KEEP ? EXEC_STOP : d->act[r->job];
    int grace = exec_job_grace(x->p, r->job);
    const char *sn = job_signal_name(sig);
    char h[160];
    snprintf(h, sizeof h, "<id of %.8s-%s-%d>", x->p->hash, jb->safe,
             r->attempt);
    outf(x, "  %s %s%s", exec_act_name(a), jb->id,
         a == EXEC_STOP ? "" : ": checkpoint, stop, start again");
    outf(x, "    local: kill -%s -PGID; after %d s kill -KILL -PGID",
         sn ? sn + 3 : "?", grace);
    outf(x, "    slurm: scancel --batch --signal=%s %s; after %d s scancel %s",
         sn ? sn + 3 : "?", h, grace, h);
    d->stopped[r->job] = r->attempt;
    d->sig[r->job] = sig;
    return EF_OK;
}

/* A signalled attempt has checkpointed and exited; any other runs until
 * the plan says the job completes. */
static int dry_poll(exec_ctx *x, const exec_run *r, exec_pstatus *st,
                    ef_err *e)
{
    dry_priv *d = x->priv;
    const exec_job *jb = &x->p->jobs[r->job];
    memset(st, 0, sizeof *st);
    if (d->stopped[r->job] == r->attempt) {
        st->state = EXEC_P_EXITED;
        st->sig = d->sig[r->job];
        st->code = 128 + st->sig;
    } else if (jb->planned_end >= 0 && jb->planned_end <= x->now) {
        outf(x, "  (%s completes at %" PRId64 " as planned: it exits and its "
             "GPUs stay idle to the slot's end)", jb->id, jb->planned_end);
        st->state = EXEC_P_EXITED;
    } else
        st->state = EXEC_P_RUNNING;
    return EF_OK;
}

static int dry_stop(exec_ctx *x, const exec_run *r, ef_err *e)
{
    return EF_OK;
}

static int dry_find(exec_ctx *x, exec_run *r, ef_err *e)
{
    return 0; /* nothing was launched */
}

const exec_backend exec_backend_dryrun = {
    .name = "dry-run",
    .dry = 1,
    .prepare = dry_prepare,
    .launch = dry_launch,
    .signal = dry_signal,
    .poll = dry_poll,
    .stop = dry_stop,
    .find = dry_find,
    .announce = dry_announce,
    .release = dry_release,
};
