/*
 * pol_ef.c: the ElasticFlow policies of the simulator.
 *   ef       ElasticFlow: admission control by minimum satisfactory share,
 *            progressive filling, surplus by largest throughput gain per
 *            added GPU, buddy placement: the planner core's plan_point
 *            (planner/plan.h) at every scheduling point, fed with the
 *            jobs' real remaining work.
 *   ef-noac  The same without admission control: every job is admitted;
 *            one that cannot make its deadline gets the fastest plan the
 *            capacity left allows ("EDF + elastic scaling" in the paper's
 *            ablation).
 * The planner models the simulation's overhead model itself (plan_opts
 * .overhead, planner/promise.h): every admitted job's reservation covers
 * its remaining work with every reconfiguration cost paid, at every
 * point, from the GPUs it holds and the overhead it still owes (both
 * told to the planner here). A job the planner flags at risk is reported
 * (sim_flag_at_risk).
 * --baselines reference (ef only) restores the reference implementation's
 * admission instead (plan_opts.admission_reference: a point's arrivals
 * all or none, vetoed by any late job, planned without overheads) and
 * its metric: an admitted job counts as met iff its last plan's
 * overhead-free end is by its deadline.
 */
#define _GNU_SOURCE 1 /* qsort_r */
#include <string.h>

#include "common/util.h"
#include "planner/plan.h"
#include "simulator/sim.h"

/* What --learn has measured of one model (over its jobs so far) or one
 * job: work done against what its curve would have done in the same
 * productive seconds; overhead paid against what the model charged. */
typedef struct ef_meas {
    double done, curve, paid, model;
} ef_meas;

typedef struct ef_state {
    plan p;
    int *act;
    int na;
    /* --learn: each job's model (index into 'models', ordered by name)
     * and what was counted of it at the last point */
    int *model_of;
    ef_meas *models, *seen;
} ef_state;

static int cmp_model(const void *a, const void *b, void *ctx)
{
    const sim *s = ctx;
    return strcmp(s->jobs[*(const int *)a].in->model,
                  s->jobs[*(const int *)b].in->model);
}

/* --learn: number the trace's models by name (the same models, the same
 * numbers, whatever the job order). */
static void learn_init(ef_state *st, const sim *s)
{
    int n = s->n, *ord = ef_malloc((size_t)(n ? n : 1) * sizeof *ord), m = -1;
    for (int i = 0; i < n; i++)
        ord[i] = i;
    qsort_r(ord, (size_t)n, sizeof *ord, cmp_model, (void *)s);
    st->model_of = ef_malloc((size_t)(n ? n : 1) * sizeof *st->model_of);
    for (int k = 0; k < n; k++) {
        if (k == 0 || cmp_model(&ord[k - 1], &ord[k], (void *)s) != 0)
            m++;
        st->model_of[ord[k]] = m;
    }
    st->models = ef_calloc((size_t)(m + 2), sizeof *st->models);
    st->seen = ef_calloc((size_t)(n ? n : 1), sizeof *st->seen);
    free(ord);
}

/* --learn: add what job i did since the last point to its model. */
static void learn_count(ef_state *st, const sim_job *j, int i)
{
    ef_meas *sn = &st->seen[i], *md = &st->models[st->model_of[i]];
    md->done += j->work_done - sn->done;
    md->curve += j->work_curve - sn->curve;
    md->paid += j->ovh_paid - sn->paid;
    md->model += j->ovh_model - sn->model;
    *sn = (ef_meas){j->work_done, j->work_curve, j->ovh_paid, j->ovh_model};
}

/* --learn: job i's speed over its curve and restarts' cost over the
 * model's, as measured: its own where it has run (a slot's work at
 * least) or paid a restart, else its model's, else 1. */
static void learn_job(const ef_state *st, const sim *s, int i, double *speed,
                      double *scale)
{
    const sim_job *j = &s->jobs[i];
    const ef_meas *md = &st->models[st->model_of[i]];
    double tp1 = sim_tput(j, j->in->curve->usable_gpus[0]);
    *speed = j->work_curve > tp1 * s->opts.slot && j->work_done > 0
                 ? j->work_done / j->work_curve
             : md->curve > 0 && md->done > 0 ? md->done / md->curve
                                               : 1.0;
    *scale = j->ovh_model > 0 ? j->ovh_paid / j->ovh_model
             : md->model > 0  ? md->paid / md->model
                              : 1.0;
}

static void *init_common(sim *s, int noac, ef_err *e)
{
    ef_state *st = ef_calloc(1, sizeof *st);
    plan_opts po;
    plan_opts_default(&po);
    po.slot = s->opts.slot;
    po.now = s->now;
    po.no_admission = noac;
    po.surplus = s->opts.surplus_reference ? SURPLUS_REFERENCE : SURPLUS_GAIN;
    /* --baselines reference keeps the reference's rule (ef-noac too) */
    po.moves = s->opts.moves_any || s->opts.baselines_reference ? MOVES_ANY
                                                                : MOVES_NET;
    po.elastic_batch = s->opts.elastic_batch;
    /* --baselines reference: the reference's admission, which plans
     * without overheads */
    po.admission_reference = s->opts.baselines_reference && !noac;
    /* the reference's planner (ef_sim_allocation, algorithms.md §2.3,
     * §2.5) has no overhead term, in ef and ef-noac alike: under
     * --baselines reference both plan without overheads (they are still
     * charged, §4.1 step 10) */
    po.overhead = s->opts.baselines_reference ? OVH_NONE : s->opts.overhead;
    if (po.elastic_batch)
        sim_use_elastic_batch(s); /* work of such jobs in samples */
    /* the stability rule's placement: move as few jobs as can be */
    s->place_least = plan_holds_still(&po);
    if (plan_init(&st->p, s->q, &s->cl, &po, e) != EF_OK) {
        free(st);
        return NULL;
    }
    st->act = ef_malloc((size_t)(s->n ? s->n : 1) * sizeof *st->act);
    if (s->opts.learn)
        learn_init(st, s);
    return st;
}

static void *init_ef(sim *s, ef_err *e) { return init_common(s, 0, e); }
static void *init_noac(sim *s, ef_err *e) { return init_common(s, 1, e); }

static void fini(void *v)
{
    ef_state *st = v;
    plan_free(&st->p);
    free(st->act);
    free(st->model_of);
    free(st->models);
    free(st->seen);
    free(st);
}

/* Tell the planner job i's remaining work: as the curve counts it, or
 * with --learn at its measured speed (the work it has left divided by
 * its speed factor) with its measured restart cost. */
static void plan_learned(ef_state *st, const sim *s, int i)
{
    double speed = 1.0, scale = 1.0;
    if (st->models)
        learn_job(st, s, i, &speed, &scale);
    plan_set_remaining(&st->p, i, s->jobs[i].rem / speed);
    if (st->models)
        plan_set_restart_scale(&st->p, i, scale);
}

static int64_t point(sim *s, void *v, int64_t t, const int *rel, int nrel)
{
    ef_state *st = v;
    plan *p = &st->p;
    /* forget finished jobs; take the real remaining work */
    int keep = 0;
    for (int k = 0; st->models && k < st->na; k++)
        learn_count(st, &s->jobs[st->act[k]], st->act[k]);
    for (int k = 0; k < st->na; k++) {
        int i = st->act[k];
        if (s->jobs[i].state != SJ_ACTIVE) {
            plan_retire(p, i);
            continue;
        }
        plan_learned(st, s, i);
        plan_set_owed(p, i, s->jobs[i].ovh_left);
        plan_set_placement(p, i, &s->jobs[i].pl);
        st->act[keep++] = i;
    }
    st->na = keep;
    for (int r = 0; r < nrel; r++)
        plan_learned(st, s, rel[r]);
    plan_set_point_index(p, s->points);
    plan_point(p, t, st->act, &st->na, rel, nrel);
    for (int r = 0; r < nrel; r++) {
        const plan_job *j = &p->jobs[rel[r]];
        if (j->decision == PLAN_ADMITTED || j->decision == PLAN_BEST_EFFORT)
            sim_admit(s, rel[r]);
        else
            sim_reject(s, rel[r], j->earliest_feasible_deadline, j->reason);
    }
    /* a job's growth held back for a job that must not move: its
     * promise is checked again at the next slot */
    int64_t wake = p->held_back ? t + p->opts.slot : INT64_MAX;
    for (int k = 0; k < st->na; k++) {
        const plan_job *j = &p->jobs[st->act[k]];
        if (j->at_risk)
            sim_flag_at_risk(s, st->act[k], j->risk);
        /* the reference judges its ElasticFlow on the planned,
         * overhead-free end of a job's last plan (reference_runs.md) */
        if (p->opts.admission_reference && j->decision == PLAN_ADMITTED)
            s->jobs[st->act[k]].due = j->r.n > 0 && j->r.real_end <=
                                      j->in->deadline ? INT64_MAX : -1;
        s->jobs[st->act[k]].want = j->g;
        s->jobs[st->act[k]].keep = j->tight || j->at_risk;
        if (j->eb)
            s->jobs[st->act[k]].want_row = j->row;
        if (j->decision == PLAN_ADMITTED) {
            int64_t w = resv_next_change(&j->r, t);
            if (w < wake)
                wake = w;
        }
    }
    return wake;
}

const sim_policy sim_policy_ef = {
    "ef", "ElasticFlow: MSS admission, progressive filling, surplus, buddy "
    "placement", init_ef, point, fini};
const sim_policy sim_policy_ef_noac = {
    "ef-noac", "ElasticFlow without admission control (EDF + elastic "
    "scaling)", init_noac, point, fini};
