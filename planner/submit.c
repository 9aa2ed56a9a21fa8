/* submit.c: one new job against a plan file (see submit.h). */
#include "planner/submit.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "common/htime.h"
#include "common/jsonin.h"
#include "common/util.h"

/* The new job's JSON text, with submit_time defaulted to 'dflt' (>=
 * 'now'), checked alone first so that errors name --job; a submit_time
 * before 'now' is refused. *given: 1 if the job gave its submit_time,
 * *submit the submit_time it gets. Heap text, or NULL on error. */
static char *new_job(const char *text, int64_t now, int64_t dflt,
                     int *given, int64_t *submit, ef_err *e)
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
    *given = json_object_get(nj, "submit_time") != NULL;
    if (!*given)
        json_object_set_new(nj, "submit_time", json_integer(dflt));
    char *t = json_dumps(nj, 0);
    json_decref(nj);
    size_t n = strlen(t);
    char *wrap = ef_malloc(n + 16);
    snprintf(wrap, n + 16, "{\"jobs\": [%s]}", t);
    job_queue one = {0};
    int rc = queue_parse_json(&one, "--job", wrap, strlen(wrap), e);
    /* as a person reads them (ef_ht_fmt): dates on the wall clock, else
     * the seconds the job and the plan file hold */
    char t1[32], t2[32];
    ef_ht_zone z = ef_ht_is_wall(now) ? EF_HT_UTC : EF_HT_EPOCH;
    if (rc == EF_OK && one.jobs[0].submit < now)
        rc = ef_fail(e, EF_E_INPUT, "--job: jobs[0].submit_time: %s is "
                     "before the plan's now %s (a job cannot be submitted "
                     "into the plan's past)",
                     ef_ht_fmt(one.jobs[0].submit, z, t1, sizeof t1),
                     ef_ht_fmt(now, z, t2, sizeof t2));
    if (rc == EF_OK)
        *submit = one.jobs[0].submit;
    queue_free(&one);
    free(wrap);
    if (rc != EF_OK) {
        free(t);
        return NULL;
    }
    return t;
}

/* The id of a job the old plan admitted that plan p does not admit, or
 * that p puts at risk when the old plan did not (the first in queue
 * order); NULL when every promise holds. */
static const char *broken_promise(const plan_submit_res *r, const plan *p)
{
    for (int i = 0; i < r->old->njobs; i++)
        if (i != r->ni && r->old->jobs[i].decision == PLAN_ADMITTED &&
            (p->jobs[i].decision != PLAN_ADMITTED ||
             (p->jobs[i].at_risk && !r->old->jobs[i].at_risk)))
            return p->jobs[i].in->id;
    return NULL;
}

/* 1 if plan p answers the new job (its job r->ni) under the contract:
 * admitted (or best-effort) with every promise kept. */
static int acceptable(const plan_submit_res *r, const plan *p)
{
    return p->jobs[r->ni].decision != PLAN_REJECTED &&
           !broken_promise(r, p);
}

/* The old plan's allocations as reservations (plan_opts.hint) for the
 * jobs it admitted, in r->hint (one per queue job, the new one none),
 * with each such job decided at the plan's start before the others
 * (r->dec, r->key); r->nhint = the queue's length. */
static void old_runs(plan_submit_res *r)
{
    const plan_doc *d = r->old;
    int n = r->q.n;
    r->hint = ef_calloc((size_t)n + 1, sizeof *r->hint);
    r->dec = ef_malloc(((size_t)n + 1) * sizeof *r->dec);
    r->key = ef_malloc(((size_t)n + 1) * sizeof *r->key);
    r->nhint = n;
    for (int j = 0; j <= n; j++) {
        int old = j < d->njobs && d->jobs[j].decision == PLAN_ADMITTED;
        r->dec[j] = old ? d->now : INT64_MAX; /* MAX: at its release */
        r->key[j] = old ? 0 : 1;
    }
    for (int s = 0; s < d->nslots; s++)
        for (int a = 0; a < d->slots[s].nalloc; a++) {
            const plan_doc_alloc *al = &d->slots[s].a[a];
            if (al->jobi >= 0 && al->jobi < d->njobs &&
                d->jobs[al->jobi].decision == PLAN_ADMITTED)
                resv_push(&r->hint[al->jobi], d->slots[s].start,
                          d->slots[s].end, al->gpus);
        }
}

/* Plan r->q into 'p': by the planner as the plan was made (each job
 * decided at its release); when that does not answer the new job
 * (acceptable) and the old plan came from a file, once more with every
 * job the old plan admitted offered its old allocation as its
 * reservation (old_runs: taken where the promise check holds), decided
 * before the others, and the new job by the usual test against what is
 * left; that plan is taken when it answers. A plan of the offline
 * admission (planner/offline.h) admits a set that arrival order cannot
 * hold: without its own runs every new job would look as if it broke
 * one of its promises. */
static int replan(plan_submit_res *r, plan *p, ef_err *e)
{
    if (plan_build(p, &r->q, &r->c, &r->po, e) != EF_OK)
        return EF_ERR;
    if (!r->keep_runs || acceptable(r, p))
        return EF_OK;
    if (!r->hint)
        old_runs(r);
    plan_opts po = r->po; /* the plan's options, with the old runs */
    po.hint = r->hint;
    po.decide_at = r->dec;
    po.order = r->key;
    plan t; /* the plan with the old runs */
    if (plan_build(&t, &r->q, &r->c, &po, e) != EF_OK) {
        plan_free(p);
        return EF_ERR;
    }
    if (acceptable(r, &t)) {
        plan_free(p);
        *p = t;
    } else {
        plan_free(&t);
    }
    return EF_OK;
}

/* Plan the queue with the new job's deadline set to 'deadline': 1 if it
 * is admitted and no promise breaks, 0 if not (*hint = the planner's
 * bound then, where to look next, -1 if none; *broken = the promise
 * admitting it would break, if that is why, else NULL), -1 on an
 * error. */
static int admissible(plan_submit_res *r, int64_t deadline, int64_t *hint,
                      const char **broken, ef_err *e)
{
    plan p2;
    job *qj = &r->q.jobs[r->ni];
    qj->deadline = deadline;
    qj->has_deadline = 1;
    if (replan(r, &p2, e) != EF_OK)
        return -1;
    const char *b = broken_promise(r, &p2);
    int ok = p2.jobs[r->ni].decision == PLAN_ADMITTED && !b;
    *hint = p2.jobs[r->ni].earliest_feasible_deadline;
    *broken = b; /* an id of r->q, which outlives p2 */
    plan_free(&p2);
    return ok;
}

/* admissible() as plan_earliest_search's predicate; the last refusal's
 * broken promise kept in r->never_broken. */
typedef struct adm_ctx {
    plan_submit_res *r;
    ef_err *e;
} adm_ctx;

static int adm_pred(void *ctx, int64_t deadline, int64_t *hint)
{
    adm_ctx *c = ctx;
    const char *broken = NULL;
    int ok = admissible(c->r, deadline, hint, &broken, c->e);
    if (ok == 0)
        c->r->never_broken = broken;
    return ok;
}

/* The earliest admissible deadline (submit.h): from the deadline asked
 * for (refused) and the planner's hint, by plan_earliest_search. *out =
 * -1 when none is found up to EF_MAX_I64; EF_ERR on an error. */
static int earliest(plan_submit_res *r, int64_t *out, ef_err *e)
{
    job *qj = &r->q.jobs[r->ni];
    int64_t saved_deadline = qj->deadline;
    int saved_has = qj->has_deadline;
    int64_t lo = qj->has_deadline ? qj->deadline : qj->submit;
    r->never_broken = NULL;
    adm_ctx c = {r, e};
    int found = plan_earliest_search(
        lo, r->p.jobs[r->ni].earliest_feasible_deadline, r->po.slot,
        adm_pred, &c, out);
    if (found == 1)
        r->never_broken = NULL;
    /* the queue's job as it was submitted (r->p points at it) */
    qj->deadline = saved_deadline;
    qj->has_deadline = saved_has;
    return found < 0 ? EF_ERR : EF_OK;
}

/* Find and check the jobs file the plan names, as efplan apply finds it
 * (plan_jobs_file_find). */
static int find_jobs_file(plan_submit_res *r, const char *plan_path,
                          ef_err *e)
{
    const char *jf = r->old->jobs_file;
    if (!jf || jf[0] == '\0')
        return EF_OK;
    char *use = plan_jobs_file_find(plan_path, jf);
    if (!use)
        return ef_fail(e, EF_E_INPUT, "%s: jobs_file \"%s\" not found, beside "
                       "the plan file nor here (submit adds the job to it)",
                       plan_path, jf);
    r->jobs_path = use;
    job_queue q;
    if (queue_load(&q, use, e) != EF_OK) {
        queue_free(&q);
        return EF_ERR;
    }
    queue_free(&q);
    size_t l = strlen(use);
    char *buf = NULL;
    size_t len = 0;
    if (!(l > 5 && strcmp(use + l - 5, ".json") == 0)) {
        if (ef_read_file(use, &buf, &len, e) != EF_OK)
            return EF_ERR;
        size_t i = ef_bom_len(buf, len);
        while (i < len && (buf[i] == ' ' || buf[i] == '\t' ||
                           buf[i] == '\n' || buf[i] == '\r'))
            i++;
        r->jobs_csv = !(i < len && (buf[i] == '{' || buf[i] == '['));
        free(buf);
    }
    return EF_OK;
}

/* The default submit_time (submit.h): the later of the plan's now and
 * the current time 'clk' gives; *from says which. */
static int64_t default_submit(const plan_doc *d, const plan_submit_clock *clk,
                              plan_submit_from *from)
{
    int64_t cur = -1;
    plan_submit_from f = PLAN_SUBMIT_PLAN_NOW;
    if (clk && clk->now >= 0) {
        cur = clk->now;
        f = PLAN_SUBMIT_NOW;
    } else if (clk && clk->wall >= 0 && plan_unix_time(d->now)) {
        cur = clk->wall;
        f = PLAN_SUBMIT_WALL;
    }
    if (cur > d->now) {
        *from = f;
        return cur;
    }
    *from = PLAN_SUBMIT_PLAN_NOW;
    return d->now;
}

/* The queue to plan: plan d's jobs and the new job 'nj' (JSON text):
 * in the place of the job of its id that d rejected (a resubmission:
 * the same job, asked again, keeps its place in the queue), else at the
 * end. *ni = the new job's index; *taken = the index of a job of its id
 * that d did not reject (it cannot be submitted again), else -1. Heap
 * text. */
static char *queue_text(const plan_doc *d, const char *nj, int *ni,
                        int *taken)
{
    *ni = d->njobs;
    *taken = -1;
    json_t *o = json_loads(nj, 0, NULL); /* new_job's own output */
    const char *id = o ? json_string_value(json_object_get(o, "id")) : NULL;
    for (int i = 0; id && i < d->njobs; i++)
        if (strcmp(d->jobs[i].id, id) == 0) {
            if (d->jobs[i].decision == PLAN_REJECTED)
                *ni = i;
            else
                *taken = i;
        }
    if (*ni == d->njobs) {
        json_decref(o);
        return plan_doc_queue_json(d, nj);
    }
    char *all = plan_doc_queue_json(d, NULL);
    json_t *q = json_loads(all, 0, NULL);
    free(all);
    json_array_set(json_object_get(q, "jobs"), (size_t)*ni, o);
    json_decref(o);
    char *t = json_dumps(q, 0);
    json_decref(q);
    return t;
}

/* A rejection with no earliest deadline, of a job that can run (the
 * planner's own reason may name a finish alone on the cluster, which
 * reads as if a later deadline would do): the reason says why instead. */
static void never_reason(plan_submit_res *r)
{
    if (r->earliest >= 0 || r->p.jobs[r->ni].earliest_feasible_deadline < 0)
        return;
    if (r->never_broken)
        snprintf(r->why, sizeof r->why, "no deadline can be guaranteed: at "
                 "every deadline tried, admitting it would break the "
                 "promise made to job %s", r->never_broken);
    else
        snprintf(r->why, sizeof r->why, "no deadline can be guaranteed: "
                 "the planner refuses it at every deadline tried");
    r->reason = r->why;
}

/* plan_submit and plan_submit_doc: the plan doc in *r->old (read from
 * 'label'); 'plan_path' the plan file whose jobs file is looked up, NULL
 * for none; 'cs' curves already loaded (NULL: load 'curves', else the
 * ones the plan names, into r->cs). */
static int submit_doc(plan_submit_res *r, const char *label,
                      const char *plan_path, const char *job_json,
                      const char *curves, const curve_set *cs,
                      const plan_submit_clock *clk, ef_err *e)
{
    const plan_doc *d = r->old;
    plan_submit_from from;
    int64_t dflt = default_submit(d, clk, &from);
    int given = 0;
    char *nj = new_job(job_json, d->now, dflt, &given, &r->submit_time, e);
    if (!nj)
        return EF_ERR;
    r->submit_from = given ? PLAN_SUBMIT_GIVEN : from;
    /* the plan's queue plus the new job (in the place of a job of its id
     * that the plan rejected: a resubmission) */
    int dup;
    char *qt = queue_text(d, nj, &r->ni, &dup);
    free(nj);
    /* the id of a job the plan did not reject: say so here, naming the
     * plan's job, rather than as a duplicate at a jobs[] index of the
     * plan's queue that no file holds */
    if (dup >= 0 && r->ni == d->njobs) {
        char qid[128];
        free(qt);
        return ef_fail(e, EF_E_INPUT, "--job: jobs[0].id: duplicate job id "
                       "\"%s\" (%s: jobs[%d] has it, %s; only the id of a "
                       "job the plan rejected can be submitted again)",
                       ef_quote(d->jobs[dup].id, qid, sizeof qid), label, dup,
                       plan_decision_name(d->jobs[dup].decision));
    }
    int rc = queue_parse_json(&r->q, label, qt, strlen(qt), e);
    free(qt);
    r->curves = curves ? curves : d->curves;
    r->jobs_file = d->jobs_file;
    if (rc != EF_OK ||
        (plan_path && find_jobs_file(r, plan_path, e) != EF_OK) ||
        cluster_init(&r->c, 1, d->cluster.nodes, d->cluster.gpus_per_node,
                     label, e) != EF_OK)
        return EF_ERR;
    /* curves the plan file names: the error says where the name is from */
    if (!cs && curve_set_load_arg(&r->cs, r->curves, e) != EF_OK) {
        if (!curves)
            ef_prefix(e, "%s: curves: ", label);
        return EF_ERR;
    }
    if (queue_resolve(&r->q, cs ? cs : &r->cs, e) != EF_OK)
        return EF_ERR;
    plan_doc_opts(d, &r->po);
    if (replan(r, &r->p, e) != EF_OK)
        return EF_ERR;
    if (plan_check(&r->p, e) != EF_OK)
        return EF_ERR;
    const plan_job *nw = &r->p.jobs[r->ni];
    r->broken = broken_promise(r, &r->p);
    if (nw->decision == PLAN_REJECTED || r->broken) {
        r->decision = PLAN_REJECTED;
        r->reason = nw->reason;
        if (earliest(r, &r->earliest, e) != EF_OK)
            return EF_ERR;
        never_reason(r);
        return EF_OK;
    }
    r->decision = nw->decision;
    /* the plan written back offers no earliest deadline: the planner's
     * bound is another number than the rule's (plan_earliest_doc), and a
     * deadline found against the old plan no longer holds in this one */
    for (int i = 0; i < r->p.njobs; i++)
        if (r->p.jobs[i].decision == PLAN_REJECTED)
            r->p.jobs[i].earliest_feasible_deadline = -1;
    r->changes = ef_calloc((size_t)d->njobs + 1, sizeof *r->changes);
    for (int i = 0; i < d->njobs; i++)
        if (i != r->ni &&
            (int)r->p.jobs[i].decision != d->jobs[i].decision) {
            plan_change *c = &r->changes[r->nchanges++];
            c->id = r->p.jobs[i].in->id;
            c->from = (plan_decision)d->jobs[i].decision;
            c->to = r->p.jobs[i].decision;
        }
    return EF_OK;
}

int plan_submit(const char *plan_path, const char *job_json,
                const char *curves, const plan_submit_clock *clk,
                plan_submit_res *r, ef_err *e)
{
    memset(r, 0, sizeof *r);
    r->earliest = -1;
    r->old = &r->doc;
    r->keep_runs = 1;
    if (plan_doc_load(&r->doc, plan_path, e) != EF_OK)
        return EF_ERR;
    return submit_doc(r, plan_path, plan_path, job_json, curves, NULL, clk,
                      e);
}

int plan_submit_doc(const char *label, const plan_doc *d,
                    const char *job_json, const curve_set *cs,
                    const plan_submit_clock *clk, plan_submit_res *r,
                    ef_err *e)
{
    memset(r, 0, sizeof *r);
    r->earliest = -1;
    r->old = d;
    return submit_doc(r, label, NULL, job_json, NULL, cs, clk, e);
}

/* Append the new job to the jobs file (submit.h), under its lock. */
static int commit_jobs(plan_submit_res *r, ef_err *e)
{
    const char *path = r->jobs_path;
    size_t n = strlen(path) + 8;
    char *lk = ef_malloc(n);
    snprintf(lk, n, "%s.lock", path);
    int fd = ef_lock_file(lk, e);
    free(lk);
    if (fd < 0)
        return EF_ERR;
    job_queue q;
    char *buf = NULL, *out = NULL;
    size_t len = 0;
    json_t *root = NULL;
    int rc = EF_ERR;
    if (queue_load(&q, path, e) != EF_OK ||
        ef_read_file(path, &buf, &len, e) != EF_OK)
        goto out;
    root = json_loadb(buf, len, 0, NULL);
    const json_t *apply = root ? json_object_get(root, "apply") : NULL;
    const job *nw = &r->q.jobs[r->ni];
    job *all = ef_calloc((size_t)q.n + 1, sizeof *all);
    int m = 0, put = 0;
    for (int i = 0; i < q.n; i++) {
        if (strcmp(q.jobs[i].id, nw->id) != 0) {
            all[m++] = q.jobs[i];
        } else if (!put) { /* a resubmission: in its place */
            all[m++] = *nw;
            put = 1;
        }
    }
    if (!put)
        all[m++] = *nw;
    out = queue_write_json(all, m, apply);
    free(all);
    rc = ef_write_file_atomic(path, out, strlen(out), e);
out:
    json_decref(root);
    free(out);
    free(buf);
    queue_free(&q);
    ef_unlock_file(fd);
    return rc;
}

int plan_submit_commit(plan_submit_res *r, const char *plan_path, ef_err *e)
{
    ef_assert(r->decision != PLAN_REJECTED);
    if (r->jobs_path && !r->jobs_csv && commit_jobs(r, e) != EF_OK)
        return EF_ERR;
    return plan_write_json(&r->p, plan_path, r->jobs_file, r->curves,
                           r->doc.version, e);
}

void plan_submit_free(plan_submit_res *r)
{
    plan_free(&r->p);
    for (int j = 0; r->hint && j < r->nhint; j++)
        resv_free(&r->hint[j]);
    free(r->hint);
    free(r->dec);
    free(r->key);
    queue_free(&r->q);
    curve_set_free(&r->cs);
    plan_doc_free(&r->doc);
    free(r->changes);
    free(r->jobs_path);
    memset(r, 0, sizeof *r);
}

int plan_earliest_doc(const char *label, const plan_doc *d, int i,
                      const curve_set *cs, int64_t *out, char *why,
                      size_t whylen, ef_err *e)
{
    ef_assert(i >= 0 && i < d->njobs);
    *out = -1;
    if (why && whylen)
        why[0] = '\0';
    /* the job as the plan holds it, submitted again now */
    char *all = plan_doc_queue_json(d, NULL);
    json_t *q = json_loads(all, 0, NULL);
    free(all);
    json_t *jb = json_array_get(json_object_get(q, "jobs"), (size_t)i);
    ef_assert(jb != NULL);
    json_t *st = json_object_get(jb, "submit_time");
    if (!json_is_integer(st) || json_integer_value(st) < d->now)
        json_object_set_new(jb, "submit_time", json_integer(d->now));
    char *text = json_dumps(jb, 0);
    json_decref(q);
    plan_submit_res r;
    memset(&r, 0, sizeof r);
    r.earliest = -1;
    r.old = d;
    r.keep_runs = 1; /* as plan_submit answers of a plan file */
    int rc = submit_doc(&r, label, NULL, text, NULL, cs, NULL, e);
    free(text);
    if (rc == EF_OK) {
        if (r.decision != PLAN_REJECTED)
            *out = r.q.jobs[r.ni].deadline;
        else
            *out = r.earliest;
        if (*out < 0 && why && whylen && r.reason)
            snprintf(why, whylen, "%s", r.reason);
    }
    r.old = &r.doc; /* d is the caller's */
    plan_submit_free(&r);
    return rc;
}

int plan_earliest_all(plan *p, const curve_set *cs, const char *curves,
                      ef_err *e)
{
    int n = p->njobs, rc = EF_OK;
    int64_t *at = ef_malloc((size_t)(n ? n : 1) * sizeof *at);
    char (*why)[256] = ef_calloc((size_t)(n ? n : 1), sizeof *why);
    plan_doc d;
    plan_doc_from_plan(&d, p, NULL, curves);
    for (int i = 0; i < n && rc == EF_OK; i++) {
        at[i] = p->jobs[i].earliest_feasible_deadline;
        if (p->jobs[i].decision == PLAN_REJECTED)
            rc = plan_earliest_doc("the plan", &d, i, cs, &at[i], why[i],
                                   sizeof why[i], e);
    }
    plan_doc_free(&d); /* it borrowed the reasons rewritten below */
    for (int i = 0; i < n && rc == EF_OK; i++) {
        plan_job *j = &p->jobs[i];
        if (j->decision != PLAN_REJECTED)
            continue;
        j->earliest_feasible_deadline = at[i];
        if (at[i] < 0 && why[i][0])
            snprintf(j->reason, sizeof j->reason, "%s", why[i]);
    }
    free(at);
    free(why);
    return rc;
}
