/* state.c: the state file apply writes for the next plan (see exec.h). */
#include "executor/exec.h"

#include <string.h>

#include <jansson.h>

#include "common/util.h"

/* Job 'in' as the next plan gets it: its progress at least 'done'
 * iterations, its placement 'pl' when the executor knows where it runs
 * (NULL: not running) or as given when 'keep_place'. A shallow copy: it
 * borrows the strings and arrays of 'in' and 'pl'. */
static job state_job(const job *in, int64_t done, const exec_place *pl,
                     int keep_place)
{
    job t = *in;
    job_advance(&t, done);
    if (!keep_place) {
        t.cur = pl ? *pl : (placement){0, NULL, NULL, 0};
    }
    return t;
}

/* Jobs the jobs file holds now that it did not hold when apply read it
 * (an `efplan submit` while apply ran adds them there): read the file
 * again into *later (empty when it is unreadable or names no new job) and
 * return how many of its jobs are new, marking them in (*isnew)[i]. */
static int submitted_since(const exec_plan *p, job_queue *later, char **isnew)
{
    memset(later, 0, sizeof *later);
    *isnew = NULL;
    ef_err e = {0};
    if (!p->q.path || !p->q.path[0] || queue_load(later, p->q.path, &e) !=
                                             EF_OK) {
        queue_free(later);
        memset(later, 0, sizeof *later);
        return 0;
    }
    const char **ids = ef_malloc(((size_t)p->q.n + 1) * sizeof *ids);
    for (int k = 0; k < p->q.n; k++)
        ids[k] = p->q.jobs[k].id;
    qsort(ids, (size_t)p->q.n, sizeof *ids, ef_cmp_strp);
    *isnew = ef_calloc((size_t)later->n + 1, 1);
    int m = 0;
    for (int i = 0; i < later->n; i++) {
        const char *id = later->jobs[i].id;
        if (!bsearch(&id, ids, (size_t)p->q.n, sizeof *ids, ef_cmp_strp)) {
            (*isnew)[i] = 1;
            m++;
        }
    }
    free(ids);
    return m;
}

/* Where each job that ran when apply ended is, for the next plan (heap
 * array, one per plan job; n == 0: not running): its launch's
 * placement, or where the cluster put it when it picks the GPUs itself
 * and the next plan can take that (exec_place_follow); one the planner
 * would refuse (not a buddy placement, or a GPU another job holds:
 * jobs kept on their nodes while the plan moved them inside one) is
 * left out, and the next plan places that job afresh. */
static exec_place *end_places(const exec_ctx *x, const exec_replay *r)
{
    const exec_plan *p = x->p;
    int n = p->njobs;
    exec_place *m = ef_calloc((size_t)n + 1, sizeof *m);
    exec_place *real = ef_calloc((size_t)n + 1, sizeof *real);
    char *live = ef_calloc((size_t)n + 1, 1);
    for (int j = 0; j < n; j++) {
        const exec_jjob *jj = &r->jobs[j];
        live[j] = jj->had_place && jj->status == EXEC_J_PENDING;
        if (!live[j])
            continue;
        exec_place_copy(&m[j], &jj->place);
        real[j] = jj->real; /* borrowed */
    }
    exec_place_follow(n, m, real, live, p->nodes, p->gpus_per_node, NULL);
    int G = p->gpus_per_node > 0 ? p->gpus_per_node : 1;
    char *held = ef_calloc((size_t)p->nodes * (size_t)G + 1, 1);
    for (int j = 0; j < n; j++) {
        int ok = m[j].n > 0 && exec_place_is_buddy(&m[j], p->nodes, G);
        for (int k = 0; ok && k < m[j].n; k++)
            ok = !held[m[j].node[k] * G + m[j].gpu[k]];
        for (int k = 0; ok && k < m[j].n; k++)
            held[m[j].node[k] * G + m[j].gpu[k]] = 1;
        if (!ok)
            exec_place_free(&m[j]);
    }
    free(held);
    free(real);
    free(live);
    return m;
}

char *exec_state_json(const exec_ctx *x, const exec_replay *r, int complete,
                      int64_t plan_time)
{
    const exec_plan *p = x->p;
    json_t *failed = json_array(), *finished = json_array();
    job_queue later;
    char *isnew;
    int nlater = submitted_since(p, &later, &isnew);
    job *jobs = ef_malloc(((size_t)p->q.n + (size_t)nlater + 1) *
                          sizeof *jobs);
    int n = 0;
    exec_place *at_end = end_places(x, r);
    for (int k = 0; k < p->q.n; k++) {
        const job *in = &p->q.jobs[k];
        int j = exec_plan_find(p, in->id);
        if (j < 0) { /* in the jobs file, not in the plan: unchanged */
            jobs[n++] = state_job(in, in->iterations_done, NULL, 1);
            continue;
        }
        const exec_jjob *jj = &r->jobs[j];
        int64_t done = exec_job_progress(x, r, j);
        if (jj->status == EXEC_J_DONE) {
            json_array_append_new(finished, json_string(in->id));
            continue;
        }
        if (jj->status == EXEC_J_FAILED) {
            char logp[4096];
            job t = state_job(in, done, NULL, 0);
            exec_path_log(x, j, jj->attempt, logp, sizeof logp);
            json_array_append_new(failed, json_pack(
                "{s:i,s:s,s:o,s:s,s:s}", "attempt", jj->attempt, "id", in->id,
                "job", job_to_json(&t), "log", logp, "why", jj->why));
            continue;
        }
        jobs[n++] = state_job(in, done, at_end[j].n ? &at_end[j] : NULL, 0);
    }
    /* submitted while apply ran: for the next plan, as given */
    for (int i = 0; i < later.n; i++)
        if (isnew[i])
            jobs[n++] = state_job(&later.jobs[i],
                                  later.jobs[i].iterations_done, NULL, 1);
    /* admitted jobs behind their plan at plan_time */
    json_t *behind = json_array();
    exec_behind *bh;
    int nb = exec_behind_list(x, r, plan_time, &bh, NULL);
    for (int k = 0; k < nb; k++)
        json_array_append_new(behind, json_pack(
            "{s:o,s:I,s:I,s:s,s:b}", "deadline", bh[k].deadline >= 0
                ? json_integer((json_int_t)bh[k].deadline) : json_null(),
            "done", (json_int_t)bh[k].done, "expected",
            (json_int_t)bh[k].expected, "id", p->jobs[bh[k].job].id,
            "missed", bh[k].missed));
    free(bh);
    char jpath[4200];
    snprintf(jpath, sizeof jpath, "%s/journal.jsonl", x->state);
    json_t *ap = json_pack("{s:o,s:b,s:o,s:o,s:s,s:s,s:I}", "behind", behind,
                           "complete", complete, "failed", failed,
                           "finished", finished, "journal", jpath, "plan",
                           p->path, "plan_time", (json_int_t)plan_time);
    char *out = queue_write_json(jobs, n, ap);
    json_decref(ap);
    for (int j = 0; j < p->njobs; j++)
        exec_place_free(&at_end[j]);
    free(at_end);
    free(jobs);
    free(isnew);
    queue_free(&later);
    return out;
}
