/* behind.c: what the plan expects a job to have done by a plan time, and
 * the admitted jobs behind it (see exec.h). */
#include "executor/exec.h"

#include <string.h>

/* GPU-seconds job j holds in the slots of p before plan time u. */
static int64_t gpu_seconds(const exec_plan *p, int j, int64_t u)
{
    int64_t g = 0;
    for (int s = 0; s < p->nslots && p->slots[s].start < u; s++) {
        const exec_slot *sl = &p->slots[s];
        int64_t end = sl->end < u ? sl->end : u;
        for (int a = 0; a < sl->nalloc; a++)
            if (sl->a[a].job == j)
                g += (int64_t)sl->a[a].place.n * (end - sl->start);
    }
    return g;
}

int64_t exec_expected(const exec_plan *p, int j, int64_t t)
{
    const exec_job *jb = &p->jobs[j];
    int64_t work = jb->iterations - jb->iterations_done;
    if (jb->planned_end < 0 || work <= 0)
        return jb->iterations_done;
    if (t >= jb->planned_end)
        return jb->iterations;
    int64_t all = gpu_seconds(p, j, jb->planned_end);
    int64_t got = gpu_seconds(p, j, t);
    if (all <= 0 || got <= 0)
        return jb->iterations_done;
    if (got >= all)
        return jb->iterations;
    /* floor(work * got / all), exactly: the product can pass 2^63 (and
     * a double's rounding would give 62 for 90 * 840 / 1200) */
    __extension__ typedef unsigned __int128 u128;
    int64_t d = (int64_t)((u128)work * (u128)got / (u128)all);
    return jb->iterations_done + d;
}

int64_t exec_job_progress(const exec_ctx *x, const exec_replay *r, int j)
{
    const exec_job *jb = &x->p->jobs[j];
    int64_t done = jb->in ? jb->in->iterations_done : jb->iterations_done;
    int64_t prog = exec_read_progress(x, j);
    if (r->jobs[j].progress > done)
        done = r->jobs[j].progress;
    if (prog > done)
        done = prog;
    return done;
}

int exec_behind_list(const exec_ctx *x, const exec_replay *r, int64_t t,
                     exec_behind **out, int *missed)
{
    const exec_plan *p = x->p;
    *out = NULL;
    if (missed)
        *missed = 0;
    if (x->b && x->b->dry)
        return 0;
    int n = 0;
    for (int j = 0; j < p->njobs; j++) {
        const exec_job *jb = &p->jobs[j];
        if (jb->decision != PLAN_ADMITTED ||
            r->jobs[j].status != EXEC_J_PENDING)
            continue;
        int64_t done = exec_job_progress(x, r, j);
        int64_t want = exec_expected(p, j, t);
        int late = jb->deadline >= 0 && jb->deadline <= t &&
                   done < jb->iterations;
        if (done >= want && !late)
            continue;
        if (!*out)
            *out = ef_calloc((size_t)p->njobs, sizeof **out);
        exec_behind *b = &(*out)[n++];
        b->job = j;
        b->done = done;
        b->expected = want;
        b->deadline = jb->deadline;
        b->missed = late;
        if (missed)
            *missed += b->missed;
    }
    return n;
}

void exec_report_free(exec_report *rep)
{
    free(rep->behind);
    memset(rep, 0, sizeof *rep);
}
