/* submit.c: one new job against a plan file (see submit.h). */
#include "planner/submit.h"

#include <string.h>

#include <jansson.h>

#include "common/jsonin.h"
#include "common/util.h"

/* The new job's JSON text, with submit_time defaulted to 'now', checked
 * alone first so that errors name --job. Heap text, or NULL on error. */
static char *new_job(const char *text, int64_t now, ef_err *e)
{
    json_t *nj = jsonin_parse("--job", text, strlen(text), e);
    if (!nj)
        return NULL;
    if (!json_is_object(nj)) {
        ef_fail(e, EF_E_INPUT, "--job: expected an object, got %s",
                jsonin_type(nj));
        json_decref(nj);
        return NULL;
    }
    if (!json_object_get(nj, "submit_time"))
        json_object_set_new(nj, "submit_time", json_integer(now));
    char *t = json_dumps(nj, 0);
    json_decref(nj);
    size_t n = strlen(t);
    char *wrap = ef_malloc(n + 16);
    snprintf(wrap, n + 16, "{\"jobs\": [%s]}", t);
    job_queue one = {0};
    int rc = queue_parse_json(&one, "--job", wrap, strlen(wrap), e);
    queue_free(&one);
    free(wrap);
    if (rc != EF_OK) {
        free(t);
        return NULL;
    }
    return t;
}

/* The id of a job that had been admitted by the time the new (last) job
 * arrives and that plan p no longer admits; NULL when every promise
 * holds. */
static const char *broken_promise(const plan_submit_res *r, const plan *p)
{
    const job *nw = p->jobs[p->njobs - 1].in;
    for (int i = 0; i < r->doc.njobs; i++)
        if (p->jobs[i].in->submit <= nw->submit &&
            r->doc.jobs[i].decision == PLAN_ADMITTED &&
            p->jobs[i].decision != PLAN_ADMITTED)
            return p->jobs[i].in->id;
    return NULL;
}

/* Plan the queue with the new job's deadline set to 'deadline': 1 if it
 * is admitted and no promise breaks, 0 if not (*hint = the planner's
 * earliest feasible deadline then), -1 on an error. */
static int admissible(plan_submit_res *r, int64_t deadline, int64_t *hint,
                      ef_err *e)
{
    plan p2;
    job *qj = &r->q.jobs[r->q.n - 1];
    qj->deadline = deadline;
    qj->has_deadline = 1;
    if (plan_build(&p2, &r->q, &r->c, &r->po, e) != EF_OK)
        return -1;
    int ok = p2.jobs[p2.njobs - 1].decision == PLAN_ADMITTED &&
             !broken_promise(r, &p2);
    *hint = p2.jobs[p2.njobs - 1].earliest_feasible_deadline;
    plan_free(&p2);
    return ok;
}

/* The earliest deadline admitted without breaking a promise: from the
 * planner's answer step forward, doubling the step, until one is
 * accepted; then bisect between the last failure and the first success.
 * -1 when none is found; EF_ERR on an error. */
static int earliest(plan_submit_res *r, int64_t *out, ef_err *e)
{
    const plan_job *nw = &r->p.jobs[r->p.njobs - 1];
    int64_t cand = nw->earliest_feasible_deadline, step = r->po.slot;
    int64_t saved_deadline = nw->in->deadline;
    int saved_has = nw->in->has_deadline;
    if (nw->in->has_deadline && cand < 0 && r->broken)
        cand = nw->in->deadline + step;
    int found = 0, rc = EF_OK;
    int64_t lo = -1; /* largest deadline known to fail */
    for (int tries = 0; tries < 40 && cand >= 0 && !found; tries++) {
        int64_t hint;
        int ok = admissible(r, cand, &hint, e);
        if (ok < 0) {
            rc = EF_ERR;
            break;
        }
        if (ok) {
            found = 1;
        } else {
            lo = cand;
            cand = hint > cand ? hint : cand + step;
            step *= 2;
        }
    }
    for (int tries = 0; rc == EF_OK && found && lo >= 0 && cand - lo > 1 &&
                        tries < 24; tries++) {
        int64_t mid = lo + (cand - lo) / 2, hint;
        int ok = admissible(r, mid, &hint, e);
        if (ok < 0)
            rc = EF_ERR;
        else if (ok)
            cand = mid;
        else
            lo = mid;
    }
    /* the queue's job as it was submitted (r->p points at it) */
    job *qj = &r->q.jobs[r->q.n - 1];
    qj->deadline = saved_deadline;
    qj->has_deadline = saved_has;
    *out = found ? cand : -1;
    return rc;
}

int plan_submit(const char *plan_path, const char *job_json,
                const char *curves, plan_submit_res *r, ef_err *e)
{
    memset(r, 0, sizeof *r);
    r->earliest = -1;
    if (plan_doc_load(&r->doc, plan_path, e) != EF_OK)
        return EF_ERR;
    const plan_doc *d = &r->doc;
    char *nj = new_job(job_json, d->now, e);
    if (!nj)
        return EF_ERR;
    /* the plan's queue plus the new job */
    char *qt = plan_doc_queue_json(d, nj);
    free(nj);
    int rc = queue_parse_json(&r->q, plan_path, qt, strlen(qt), e);
    free(qt);
    r->curves = curves ? curves : d->curves;
    r->jobs_file = d->jobs_file;
    if (rc != EF_OK ||
        cluster_init(&r->c, 1, d->cluster.nodes, d->cluster.gpus_per_node,
                     plan_path, e) != EF_OK ||
        curve_set_load_arg(&r->cs, r->curves, e) != EF_OK ||
        queue_resolve(&r->q, &r->cs, e) != EF_OK)
        return EF_ERR;
    plan_doc_opts(d, &r->po);
    if (plan_build(&r->p, &r->q, &r->c, &r->po, e) != EF_OK ||
        plan_check(&r->p, e) != EF_OK)
        return EF_ERR;
    const plan_job *nw = &r->p.jobs[r->p.njobs - 1];
    r->broken = broken_promise(r, &r->p);
    if (nw->decision == PLAN_REJECTED || r->broken) {
        r->decision = PLAN_REJECTED;
        r->reason = nw->reason;
        return earliest(r, &r->earliest, e);
    }
    r->decision = nw->decision;
    r->changes = ef_calloc((size_t)d->njobs + 1, sizeof *r->changes);
    for (int i = 0; i < d->njobs; i++)
        if ((int)r->p.jobs[i].decision != d->jobs[i].decision) {
            plan_change *c = &r->changes[r->nchanges++];
            c->id = r->p.jobs[i].in->id;
            c->from = (plan_decision)d->jobs[i].decision;
            c->to = r->p.jobs[i].decision;
        }
    return EF_OK;
}

void plan_submit_free(plan_submit_res *r)
{
    plan_free(&r->p);
    queue_free(&r->q);
    curve_set_free(&r->cs);
    plan_doc_free(&r->doc);
    free(r->changes);
    memset(r, 0, sizeof *r);
}
