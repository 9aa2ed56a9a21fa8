/*
 * submit.h: admit one new job into an existing plan file (what efplan
 * submit answers), keeping every promise the plan made.
 *
 * The contract:
 * - The new job arrives at its submit_time, which may not be earlier
 *   than the plan's "now" (a job cannot be placed in the plan's past: an
 *   input error). Its default is the plan's current time: the caller's
 *   current time on the plan's clock (efplan submit --now) when given,
 *   else, for a plan in Unix time (plan_unix_time), the wall clock the
 *   caller read; either only when later than "now", which it is
 *   otherwise. The library never reads the clock itself.
 * - The plan's queue, as the plan file holds it (every job member the
 *   file records, through its reader: batch ranges and samples too),
 *   plus the new job is planned again with the plan's cluster, curves,
 *   slot, surplus mode and elastic-batch mode.
 * - The new job is admitted only if its deadline is guaranteed AND every
 *   job the old plan admitted is admitted by the new plan, whatever its
 *   submit time (a job submitted later than the new one, already
 *   promised in the plan file, counts as much as an earlier one), and
 *   no such job that the old plan had on time is at risk in the new one
 *   (a job marked "promised" is always admitted: plan.h).
 *   When the plan file's admitted set is one that planning again in
 *   arrival order cannot hold (a plan of the offline admission:
 *   planner/offline.h), or the new job does not fit that way, a second
 *   plan is made in which every job the old plan admitted is offered
 *   its old allocation as its reservation (plan_opts.hint: taken where
 *   the promise check holds), decided before the others, and the new
 *   job is decided by the usual test against what is left; its answer
 *   counts when it keeps the contract (efplan serve, whose queue is
 *   planned online, does not make it: plan_submit_doc).
 *   Otherwise it is rejected and 'broken' names the first such job in
 *   queue order. Old jobs the plan did not admit (rejected, best-effort)
 *   were promised nothing; since admitted jobs stay admitted, the only
 *   change they can see is becoming admitted (listed in 'changes').
 * - A job whose id is that of a job the plan rejected is a
 *   resubmission: it takes that job's place in the queue (and in the
 *   jobs file when committed) instead of being refused as a duplicate;
 *   a job of the id of an admitted or best-effort job is refused.
 * - A rejected job's answer carries 'earliest': a deadline E that is
 *   admitted under the same rule, with E - 1 refused (both are planned;
 *   E - 1 is at least the deadline asked for, which was refused). It is
 *   found by stepping forward from the planner's own hint with a doubling
 *   step and bisecting to the second between the last refusal and the
 *   first admission. Admission is not monotone in the deadline in
 *   general: the planner is greedy, and a later deadline moves the new
 *   job in the deadline order and moves its reservation (placed as late
 *   as it can go), which changes how the jobs after it are planned; a
 *   deadline can therefore be refused while deadlines on both sides of
 *   it are admitted. So E is the earliest
 *   admissible deadline in this sense: E is admitted, E - 1 is refused,
 *   and every deadline the search planned below E was refused; a deadline
 *   further below E that the search never planned may still be admitted.
 *   Measured on test_submit's 166 random rejections: 3 had an admitted
 *   deadline below E - 1 (by 16 to 1,514 s), and 5 of 3,320 deadlines
 *   probed above E were refused.
 */
#ifndef EF_SUBMIT_H
#define EF_SUBMIT_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "planner/plan.h"
#include "planner/planio.h"

/* Where the new job's submit_time came from. */
typedef enum plan_submit_from {
    PLAN_SUBMIT_GIVEN,    /* the job gave it */
    PLAN_SUBMIT_PLAN_NOW, /* the plan's "now" */
    PLAN_SUBMIT_NOW,      /* the caller's current time (--now) */
    PLAN_SUBMIT_WALL      /* the wall clock (a plan in Unix time) */
} plan_submit_from;

/* The current time, for the new job's default submit_time: 'now' the
 * caller's current time on the plan's clock (-1: not given), 'wall' the
 * wall clock in Unix seconds, rounded down (-1: not known), used only
 * for a plan in Unix time and when 'now' is not given. */
typedef struct plan_submit_clock {
    int64_t now, wall;
} plan_submit_clock;

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
    const char *reason;       /* rejected by the planner: its reason; with
                                 no earliest deadline for a job that can
                                 run, why none ("no deadline can be
                                 guaranteed: ...") */
    int64_t earliest;         /* rejected: the earliest deadline that can
                                 be guaranteed; -1: none found */
    int ni;                   /* the new job's index in q and p: the last,
                                 or a resubmission's (a job of its id that
                                 the plan rejected: it takes that job's
                                 place in the queue) */
    const char *never_broken; /* no earliest deadline: the job whose
                                 promise the last deadline tried would
                                 break (NULL: the planner refused it) */
    char why[256];            /* the reason's text when it says why no
                                 deadline can be guaranteed */
    int64_t submit_time;      /* the new job's submit_time, and */
    plan_submit_from submit_from; /* where it came from */
    int nchanges;             /* accepted: old jobs whose decision */
    plan_change *changes;     /* changes (never from admitted), in queue
                                 order */
    /* the jobs file the plan names, where the new job is appended
     * (plan_submit_commit): resolved as efplan apply resolves it (as
     * written, else next to the plan); NULL when the plan names none
     * (empty jobs_file). jobs_csv: it is a CSV trace, which cannot hold
     * a command or env: left as it is. Heap. */
    char *jobs_path;
    int jobs_csv;
    /* the plan of the queue with the new job (its last job), checked by
     * plan_check; accepted: what to write back with plan_write_json
     * (jobs_file and curves as the old plan recorded them, curves
     * replaced by the override when one was given) */
    plan p;
    const char *jobs_file, *curves;
    /* owned inputs of p; 'old' the plan submitted to: &doc, or the
     * caller's (plan_submit_doc) */
    plan_doc doc;
    const plan_doc *old;
    job_queue q;
    curve_set cs;
    cluster c;
    plan_opts po;
    /* plan_submit only (a plan file): a second plan that keeps the old
     * plan's allocations (the contract above); built on first use */
    int keep_runs;
    resv *hint;   /* per queue job: its old allocation (admitted ones) */
    int64_t *dec; /* per queue job: when it is decided */
    double *key;  /* per queue job: its order at that time */
    int nhint;    /* queue jobs the arrays cover */
} plan_submit_res;

/*
 * plan_submit: read the plan file at 'plan_path' and decide the job given
 * as JSON text 'job_json' (a job object as in a JSON queue) under the
 * contract above. A job without submit_time gets the plan's current
 * time: the later of the plan's "now" and the time 'clk' gives (its
 * 'now', else its 'wall' for a plan in Unix time); 'clk' NULL: the
 * plan's "now". 'curves' replaces the curves the plan names when not
 * NULL. Fills *r (free with plan_submit_free, also after an error);
 * r->submit_time and r->submit_from say which submit_time the job got.
 * Writes nothing, reads no clock and takes no lock: a caller that commits
 * takes the plan's lock first (the CLI: ef_lock_file on PLAN.lock around
 * plan_submit and plan_submit_commit). Errors: the plan file or curves
 * (EF_E_INPUT, file and JSON path; curves the plan names: "PLAN: curves:
 * ..."), the job ("--job: jobs[0].x: ...",
 * EF_E_INPUT; a submit_time before the plan's now is one), the plan's
 * jobs file missing or not a job queue (EF_E_INPUT), a failed re-plan or
 * self-check (EF_E_INTERNAL). A rejection is not an error: r->decision
 * says it.
 */
int plan_submit(const char *plan_path, const char *job_json,
                const char *curves, const plan_submit_clock *clk,
                plan_submit_res *r, ef_err *e);
void plan_submit_free(plan_submit_res *r);

/*
 * plan_submit_doc: plan_submit of a plan held in memory, already read:
 * 'd' (borrowed: it must outlive *r; r->jobs_file and r->curves point
 * into it), named 'label' in messages, with the curves already loaded
 * 'cs' (borrowed: r->q and r->p point into it while they live; r->cs
 * stays empty). The same contract and answer, but no jobs file is looked
 * up (r->jobs_path stays NULL), no plan text is parsed and no curve is
 * read: a caller that keeps the queue itself (efplan serve) stores the
 * job, and writes r->p with plan_to_json.
 */
int plan_submit_doc(const char *label, const plan_doc *d,
                    const char *job_json, const curve_set *cs,
                    const plan_submit_clock *clk, plan_submit_res *r,
                    ef_err *e);

/*
 * plan_submit_commit: write an accepted answer (r->decision not
 * PLAN_REJECTED): first the new job, with every field it was given
 * (command, env, batch range, ...), into the jobs file r->jobs_path
 * under its own lock (JOBS.lock, ef_lock_file), rewritten atomically as
 * an efplan-jobs v1 file (keys sorted; an "apply" report it held is
 * kept; a job of the same id that the plan does not hold, left by an
 * interrupted submit, is replaced); then the plan file at 'plan_path',
 * atomically. No jobs file (NULL) or a CSV one: the plan file only.
 * The caller holds the plan's lock. Errors: EF_E_INPUT (the jobs file
 * no longer parses), EF_E_INTERNAL (cannot write, cannot lock).
 */
int plan_submit_commit(plan_submit_res *r, const char *plan_path, ef_err *e);

/*
 * plan_earliest_doc: the earliest deadline of job 'i' of plan 'd', which
 * the plan rejected: the one rule efplan uses wherever it offers a
 * deadline (explain, plan --earliest, submit's answer): what plan_submit
 * answers when the job is submitted again into d as it stands (its
 * submit_time the later of its own and the plan's now, every old promise
 * kept, the plan's own runs offered as a plan file's are), so that
 * resubmitting it with that deadline is admitted. *out = that deadline;
 * the job's own deadline when resubmitting it unchanged is admitted; -1
 * when no deadline is (then *why, if not NULL, gets the reason, in a
 * buffer of 'whylen' bytes). Curves 'cs' must fit d's queue. Errors: as
 * plan_submit_doc's (EF_E_INPUT, EF_E_INTERNAL).
 */
int plan_earliest_doc(const char *label, const plan_doc *d, int i,
                      const curve_set *cs, int64_t *out, char *why,
                      size_t whylen, ef_err *e);

/*
 * plan_earliest_all: plan_earliest_doc for every job plan p rejected, in
 * p itself (earliest_feasible_deadline; the reason too where no deadline
 * can be guaranteed for a job that can run), so that the plan offers the
 * deadlines explain and submit do; 'curves' the name the plan records,
 * 'cs' the curves its queue was resolved against. Each rejected job costs
 * a search of full re-plans (about 20 to 60). Errors: plan_earliest_doc's;
 * p is then unchanged.
 */
int plan_earliest_all(plan *p, const curve_set *cs, const char *curves,
                      ef_err *e);

#endif
