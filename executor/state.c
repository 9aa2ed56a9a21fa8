/* state.c: the state file apply writes for the next plan (see exec.h). */
#include "exec.h"

#include <string.h>

#include <jansson.h>

#include "../planner/util.h"

static json_t *job_json(const job *in, int64_t done, const exec_place *pl)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(in->id));
    json_object_set_new(o, "model", json_string(in->model));
    json_object_set_new(o, "batch_size", json_integer(in->batch));
    json_object_set_new(o, "iterations", json_integer(in->iterations));
    json_object_set_new(o, "iterations_done", json_integer(done));
    json_object_set_new(o, "submit_time", json_integer(in->submit));
    json_object_set_new(o, "deadline", in->has_deadline
                        ? json_integer(in->deadline) : json_null());
    if (in->num_gpu > 0)
        json_object_set_new(o, "num_gpu", json_integer(in->num_gpu));
    if (in->duration > 0)
        json_object_set_new(o, "duration", json_integer(in->duration));
    if (pl && pl->n) {
        json_t *a = json_array();
        for (int k = 0; k < pl->n;) {
            json_t *g = json_array();
            int node = pl->node[k];
            while (k < pl->n && pl->node[k] == node)
                json_array_append_new(g, json_integer(pl->gpu[k++]));
            json_array_append_new(a, json_pack("{s:i,s:o}", "node", node,
                                               "gpus", g));
        }
        json_object_set_new(o, "placement", a);
    }
    const job_run *r = &in->run;
    if (r->argv) {
        json_t *a = json_array();
        for (int k = 0; k < r->argc; k++)
            json_array_append_new(a, json_string(r->argv[k]));
        json_object_set_new(o, "command", a);
    }
    if (r->workdir)
        json_object_set_new(o, "workdir", json_string(r->workdir));
    if (r->nenv) {
        json_t *env = json_object();
        for (int k = 0; k < r->nenv; k++) {
            const char *eq = strchr(r->env[k], '=');
            char *key = ef_strndup(r->env[k], (size_t)(eq - r->env[k]));
            json_object_set_new(env, key, json_string(eq + 1));
            free(key);
        }
        json_object_set_new(o, "env", env);
    }
    if (r->signal) {
        const char *n = job_signal_name(r->signal);
        json_object_set_new(o, "checkpoint_signal",
                            n ? json_string(n) : json_integer(r->signal));
    }
    if (r->grace >= 0)
        json_object_set_new(o, "grace_seconds", json_integer(r->grace));
    return o;
}

char *exec_state_json(const exec_ctx *x, const exec_replay *r, int complete,
                      int64_t plan_time)
{
    const exec_plan *p = x->p;
    json_t *jobs = json_array(), *failed = json_array(),
           *finished = json_array();
    for (int k = 0; k < p->q.n; k++) {
        const job *in = &p->q.jobs[k];
        int j = exec_plan_find(p, in->id);
        if (j < 0) { /* in the jobs file, not in the plan: unchanged */
            json_array_append_new(jobs, job_json(in, in->iterations_done,
                                                 NULL));
            continue;
        }
        const exec_jjob *jj = &r->jobs[j];
        int64_t done = in->iterations_done;
        int64_t prog = exec_read_progress(x, j);
        if (jj->progress > done)
            done = jj->progress;
        if (prog > done)
            done = prog;
        if (jj->status == EXEC_J_DONE) {
            json_array_append_new(finished, json_string(in->id));
            continue;
        }
        if (done >= in->iterations)
            done = in->iterations - 1;
        if (jj->status == EXEC_J_FAILED) {
            char logp[4096];
            exec_path_log(x, j, jj->attempt, logp, sizeof logp);
            json_array_append_new(failed, json_pack(
                "{s:i,s:s,s:o,s:s,s:s}", "attempt", jj->attempt, "id", in->id,
                "job", job_json(in, done, NULL), "log", logp, "why", jj->why));
            continue;
        }
        json_array_append_new(jobs, job_json(in, done,
                                             jj->had_place ? &jj->place
                                                           : NULL));
    }
    char jpath[4200];
    snprintf(jpath, sizeof jpath, "%s/journal.jsonl", x->state);
    json_t *ap = json_pack("{s:b,s:o,s:o,s:s,s:s,s:I}", "complete", complete,
                           "failed", failed, "finished", finished, "journal",
                           jpath, "plan", p->path, "plan_time",
                           (json_int_t)plan_time);
    json_t *root = json_pack("{s:o,s:s,s:o,s:i}", "apply", ap, "format",
                             "efplan-jobs", "jobs", jobs, "version", 1);
    char *s = json_dumps(root, JSON_INDENT(1) | JSON_SORT_KEYS);
    json_decref(root);
    size_t n = strlen(s);
    char *out = ef_malloc(n + 2);
    memcpy(out, s, n);
    out[n] = '\n';
    out[n + 1] = '\0';
    free(s);
    return out;
}
