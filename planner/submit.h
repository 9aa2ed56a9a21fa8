/*
 * submit.h: admit one new job into an existing plan file (what efplan
 * submit answers).
 *
 * The plan's queue, as the plan file holds it (every job member the file
 * records, through its reader: batch ranges and samples too), plus the
 * new job is planned again with the plan's cluster, curves, slot,
 * surplus mode and elastic-batch mode. The new job is admitted only if
 * its deadline is guaranteed and every job that had been admitted by the
 * time it arrives (submitted no later than it) stays admitted: a promise
 * is never broken. Jobs submitted after it were promised nothing yet;
 * their decisions may change. When the job is rejected, the earliest
 * deadline that would be admitted without breaking a promise is searched
 * (from the planner's answer, stepping forward with a doubling step, then
 * bisecting to the second).
 */
#ifndef EF_SUBMIT_H
#define EF_SUBMIT_H

#include <stdint.h>

#include "common/err.h"
#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "planner/plan.h"
#include "planner/planio.h"

/* A job of the old plan whose decision the new job changes. */
typedef struct plan_change {
    const char *id;
    plan_decision from, to;
} plan_change;

typedef struct plan_submit_res {
    /* the answer */
    plan_decision decision;   /* of the new job: PLAN_ADMITTED,
                                 PLAN_BEST_EFFORT or PLAN_REJECTED */
    const char *broken;       /* rejected because the job whose id this is
                                 would lose its promise; NULL otherwise */
    const char *reason;       /* rejected by the planner: its reason */
    int64_t earliest;         /* rejected: the earliest deadline that can
                                 be guaranteed; -1: none found */
    int nchanges;             /* accepted: later jobs whose decision */
    plan_change *changes;     /* changes, in queue order */
    /* the plan of the queue with the new job (its last job), checked by
     * plan_check; accepted: what to write back with plan_write_json
     * (jobs_file and curves as the old plan recorded them, curves
     * replaced by the override when one was given) */
    plan p;
    const char *jobs_file, *curves;
    /* owned inputs of p */
    plan_doc doc;
    job_queue q;
    curve_set cs;
    cluster c;
    plan_opts po;
} plan_submit_res;

/*
 * plan_submit: read the plan file at 'plan_path' and decide the job given
 * as JSON text 'job_json' (a job object as in a JSON queue; submit_time
 * defaults to the plan's "now"). 'curves' replaces the curves the plan
 * names when not NULL. Fills *r (free with plan_submit_free, also after
 * an error). Writes nothing. Errors: the plan file or curves
 * (EF_E_INPUT, file and JSON path), the job ("--job: jobs[0].x: ...",
 * EF_E_INPUT), a failed re-plan or self-check (EF_E_INTERNAL). A
 * rejection is not an error: r->decision says it.
 */
int plan_submit(const char *plan_path, const char *job_json,
                const char *curves, plan_submit_res *r, ef_err *e);
void plan_submit_free(plan_submit_res *r);

#endif
