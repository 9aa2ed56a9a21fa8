/*
 * plan.h: the planner core: job queue + curves + cluster -> a time-slotted
 * plan with an admission answer per job and a placement per slot.
 *
 * The plan is what the ElasticFlow scheduler does over a known queue when
 * every job runs at its curve's throughput and pays the reconfiguration
 * costs of opts.overhead (model/overhead.h). Time is cut into slots of
 * 'slot' seconds from 'now'; decisions happen only at slot boundaries.
 *
 * The promise (promise.h): at every scheduling point, every admitted job's
 * reservation, run from the GPUs it holds and the overhead it owes,
 * completes its remaining work by its deadline with every cost the plan
 * makes it pay (its own changes, the surplus step and the step back, an
 * allowance for forced migrations).
 *
 * At a boundary t that is a scheduling point (arrivals, completions, a
 * change in some reservation), the planner
 *   1. re-plans every admitted deadline job that is not at risk by
 *      overhead-aware MSS in deadline order against an empty cluster;
 *      when that fails, keeps each previous reservation that still
 *      covers its job, re-plans from what is left those that fell behind,
 *      keeps one that covers only if its job is not moved (marked 'tight':
 *      placement holds it), and flags the rest at risk; at-risk jobs are
 *      planned apart, after the others, with what they leave;
 *      while a job placement must not move (tight, at risk) holds part
 *      of a node, that node is no whole node for anyone: the pieces of
 *      every reservation of a node's size or more (whole nodes, place.h)
 *      are planned against the GPUs of the other nodes too (plan.c,
 *      "whole nodes"), and a kept reservation that counts on such a node
 *      is planned again (or its job flagged at risk);
 *      A job the queue marks "promised" (jobs.h: admitted by an
 *      earlier decision, e.g. efplan serve re-planning from reality) and
 *      released by the plan's now is in play from the first point as
 *      admitted: it is re-planned here, flagged at risk if it cannot be
 *      saved, and never decided again (not rejected, not demoted);
 *   2. decides each job released at t (submit time <= t), in submit
 *      order: a deadline job is admitted iff its MSS plan fits the
 *      capacity left by the reservations of already admitted jobs, or
 *      the admitted jobs and this one, re-planned afresh by MSS in
 *      deadline order, all keep the promise (then those new reservations
 *      are kept); otherwise it is rejected with the earliest deadline it
 *      could finish by (the planner's bound; opts.earliest_point: the
 *      point's exact one); a job without deadline is best-effort
 *      (opts.admission_reference: the reference implementation's rule
 *      instead, see plan_opts);
 *   3. with opts.moves == MOVES_NET (the default), lets every job in
 *      play that held more GPUs just before t than its reservation gives
 *      it keep them (the same GPU count and batch; deadline order, then
 *      best-effort jobs by id), where the GPUs are free after every
 *      reservation and its promise survives it: a running job changes
 *      only when a promise needs its GPUs or a move pays for itself;
 *      then gives the GPUs free in slot [t, t+slot) away one usable-size
 *      step at a time to the job with the largest throughput gain per
 *      added GPU (best-effort jobs included; --surplus reference keeps the
 *      reference implementation's order instead); under MOVES_NET a step
 *      that would change a job still running as it was counts its restart
 *      (the overhead model's cost C of the change): over its remaining
 *      work W the step's throughput is W / (W / tput + C), and a step
 *      that does not beat the throughput it has is not taken, nor one
 *      that does not pay for C before the reservations next free GPUs
 *      (pt_rise: it grows once then instead of twice); an admitted job
 *      takes a step only if its promise survives it;
 *   4. places the slot's allocations by the buddy rule (place.h).
 * Between points the allocation stays as it is. Jobs complete at the
 * exact time their work runs out; they hold their GPUs to the end of that
 * slot.
 */
#ifndef EF_PLAN_H
#define EF_PLAN_H

#include <stdint.h>

#include "common/err.h"
#include "common/htime.h"
#include "common/util.h"
#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "model/overhead.h"
#include "planner/mss.h"
#include "planner/place.h"

typedef enum plan_decision {
    PLAN_PENDING = 0,   /* not yet released (internal) */
    PLAN_ADMITTED,
    PLAN_REJECTED,
    PLAN_BEST_EFFORT
} plan_decision;

typedef enum plan_surplus {
    SURPLUS_GAIN = 0,   /* largest throughput gain per added GPU (paper) */
    SURPLUS_REFERENCE   /* 0-GPU jobs first, then largest GPU-time increase */
} plan_surplus;

/* When a running job's GPUs may change (step 3 of a point). */
typedef enum plan_moves {
    MOVES_NET = 0,      /* a running job keeps the GPUs it holds unless a
                           promise needs them (its reservation, or others'
                           reservations taking them), and the surplus step
                           moves it only when the move gains more over its
                           remaining work than its restart costs */
    MOVES_ANY           /* the paper's rule: every point re-derives each
                           allocation from its reservation plus surplus by
                           gross speed-up, whatever the job held */
} plan_moves;

typedef struct plan_opts {
    int slot;              /* seconds, > 0 */
    int64_t now;           /* start of the plan; INT64_MIN = earliest submit */
    plan_surplus surplus;
    plan_moves moves;      /* MOVES_NET by default; only with
                              SURPLUS_GAIN (--surplus reference keeps the
                              reference's rule, MOVES_ANY) */
    int64_t horizon;       /* seconds of slots to keep; 0 = all */
    int no_admission;      /* admit every job; late ones get the fastest
                              plan left (ElasticFlow without admission
                              control, for the simulator's ablation) */
    int admission_reference; /* the reference implementation's admission
                              (the simulator's --baselines reference): a
                              point's deadline arrivals are admitted all
                              or none, and refused whenever any job would
                              miss, an already late one included */
    int elastic_batch;     /* jobs with batch_sizes: MSS and the surplus
                              step choose the batch too (see plan_point) */
    ovh_mode overhead;     /* reconfiguration costs the plan pays and its
                              promises count (promise.h); OVH_NONE by
                              default here, fig12 in efplan plan */
    int64_t deadline_margin; /* seconds (>= 0): every job is planned to
                              finish this long before its deadline, and
                              is at risk when it cannot (efplan serve's
                              loop: what the plan cannot see, a reaction
                              and a restart, comes out of the margin, not
                              the promise); 0 by default */
    int every_slot;        /* tests: plan_build steps through every slot
                              (no stretch run at once), to show that
                              skipping gives the same plan */
    /* NULL, or called by plan_build at every loop step with the jobs
     * done so far (released and finished or refused) and the queue's
     * jobs, for a progress line; it must not touch the plan */
    void (*progress)(void *arg, int done, int total);
    void *progress_arg;
    const unsigned char *withhold; /* offline admission (offline.h): per
                              queue index, 1 = reject the job at its
                              release without an admission test (a job
                              without deadline, promised or under way is
                              never withheld); NULL = none. Must
                              outlive the planning: plan_init keeps it
                              in p->withhold (p->opts.withhold is NULL),
                              plan_build drops it when done */
    const double *order;   /* offline admission: per queue index, a key
                              that orders the jobs released at the same
                              point (ascending; then submit time, queue
                              order); NULL = submit order. Kept and
                              dropped as withhold */
    const int64_t *decide_at; /* offline admission: per queue index, a
                              time at which the job is decided (admitted
                              with a reservation, or rejected) before its
                              release: the first slot boundary at or
                              after max(now, decide_at[i]), at most its
                              release. A job decided early holds no GPUs
                              and gets no surplus before its release; its
                              reservations (at decision and every re-plan)
                              start at its release at the earliest. Jobs
                              are decided in order of decision time, then
                              'order', then release. NULL = at release.
                              Ignored with no_admission and
                              admission_reference. Kept and dropped as
                              withhold */
    const double *restart_scale; /* per queue index, what the job's
                              restarts really cost against the overhead
                              model's charge (measured: the service's
                              closed loop; plan_set_restart_scale); 0 or
                              NULL: the model's. Read by plan_init */
    int earliest_point;    /* a job rejected at a point gets as its
                              earliest_feasible_deadline the point's own
                              earliest deadline (plan_point_earliest's
                              rule: resubmitting it with that deadline at
                              the same point, the state unchanged, is
                              admitted) instead of the planner's bound
                              (efplan serve's answer); 0: the bound */
    const resv *hint;      /* offline admission (the exact step,
                              solver/ilp.h ilp_offline): per queue index,
                              a reservation (n == 0: none) that the job
                              takes when it is decided, before the
                              admission tests, if every GPU of it is free
                              then, every size is usable, it starts at
                              the job's release at the earliest and it
                              delivers the job's remaining work by its
                              deadline with the overheads paid (the
                              promise check); otherwise the tests run as
                              usual. Later points re-plan the job as any
                              other: by MSS when the deadline-order
                              re-plan fits, else it keeps what is left
                              of this reservation. Elastic-batch jobs
                              ignore it. Kept and dropped as withhold */
} plan_opts;

void plan_opts_default(plan_opts *o);

/* 1 if the stability rule is in force under 'o' (moves MOVES_NET with the
 * paper's surplus order and admission): every loop that places a plan's
 * allocations then asks its slot engine to move as few jobs as it can
 * (engine.h eng.least). */
int plan_holds_still(const plan_opts *o);

/* One job's outcome. */
typedef struct plan_job {
    const job *in;
    plan_decision decision;
    double iterations_left;   /* at 'now' */
    int64_t deadline;         /* deadline planned against (INT64_MAX: none);
                                 the queue's, or earlier (simulator) */
    int64_t release;          /* first slot boundary >= submit time */
    int64_t decide;           /* when it is decided: its release, or
                                 earlier (opts.decide_at) */
    int64_t start;            /* first time it held GPUs; -1 if never */
    int64_t planned_end;      /* completion time; -1 if never */
    int64_t earliest_feasible_deadline; /* rejected: earliest admissible; -1 none */
    char reason[160];         /* why rejected */
    int at_risk;              /* admitted, but fell behind its reservation
                                 for causes outside the plan: planned apart
                                 from the others since (see plan_point) */
    char risk[320];           /* why, and since when */
    int tight;                /* admitted; its reservation covers it only if
                                 placement does not move it (no room left
                                 for a migration): placement keeps it */
    int resizes, migrations;
    double gpu_seconds;
    /* internal state while planning */
    int idrank;               /* the id's place among the queue's ids
                                 (strcmp order; ties broken by id) */
    ovh_id ovh;               /* its model's overhead row (ovh_lookup) */
    double oscale;            /* its restarts' measured cost against the
                                 model's (plan_set_restart_scale; 0: 1) */
    double rem;
    resv r;
    int g;
    place_set pl;
    const place_set *where;   /* NULL, or the caller's placement of the job
                                 (plan_set_placement): where it runs */
    int done;
    int held;                 /* GPUs held just before the current point */
    const curve_row *hrow;    /* batch row held then */
    double owed;              /* overhead seconds not yet paid */
    int changed, restarted;   /* OVH_REFERENCE physics: its GPUs changed at
                                 this point; the last slot restarted */
    double overhead_seconds;  /* unproductive seconds paid in the plan */
    /* elastic batch: 'eb' = the job may change batch in this plan; then
     * 'rem' and 'iterations_left' count samples, 'rrow' is the batch of
     * its reservation and 'row' the batch it runs at now (both its own
     * row otherwise) */
    int eb;
    const curve_row *rrow, *row;
    /* what the plan file records (plan_build only, admitted jobs): the
     * GPUs of its allocation its reservation held in each recorded slot,
     * as segments [start, end) with gpus > 0, merged where equal; the
     * rest of the allocation there was surplus */
    resv reserved;
    /* at an open point with whole nodes counted (plan.c): where this job,
     * held on part of a node, is the only job that blocks its node (its
     * own growth onto that node is no conflict), as pieces of one node */
    resv wown;
} plan_job;

/* One allocation of one slot. */
typedef struct plan_alloc {
    int job;    /* index into plan.jobs */
    int gpus;
    int *gpu;   /* 'gpus' global GPU ids, ascending; the slot before's
                   list when the job holds the same GPUs and batch there
                   (slots share lists: read only) */
    long batch; /* elastic-batch job: its batch size here; else 0 */
} plan_alloc;

/* A run of identical consecutive slots [start, end). */
typedef struct plan_slot {
    int64_t start, end;
    int nalloc;
    plan_alloc *a;
} plan_slot;

typedef struct plan {
    plan_opts opts;
    int64_t now;
    cluster cl;
    int njobs;
    plan_job *jobs;          /* in queue (file) order */
    int jcap;                /* entries allocated in jobs, tmp, ord, tmprow */
    int nslots;
    plan_slot *slots;
    /* totals */
    int admitted, rejected, best_effort;
    double promised_gpu_seconds;  /* GPU-seconds of admitted jobs' runs */
    double used_gpu_seconds;      /* GPU-seconds allocated in all slots */
    int64_t end;                  /* end of the last slot */
    int points;                   /* scheduling points evaluated */
    const unsigned char *withhold; /* opts.withhold while plan_build runs;
                                     NULL otherwise */
    const double *order;          /* opts.order, the same way */
    const int64_t *decide_at;     /* opts.decide_at, the same way */
    const resv *hint;             /* opts.hint, the same way */
    int64_t steps;                /* plan_build's loop steps (a slot, or a
                                     stretch of slots run at once) */
    int replan_fallbacks;         /* fresh re-plan failed, old kept */
    int at_risk;                  /* admitted jobs flagged at risk */
    int held_back;                /* the last point held a job's growth
                                     back so that a job with no room for a
                                     migration stays where it is: the next
                                     slot is a point (plan_point) */
    int64_t point_index;          /* the loop's index of the current point
                                     (plan_set_point_index) */
    int migrations, resizes;
    int reserved_known;           /* jobs' 'reserved' recorded (plan_build;
                                     not plan_from_sizes) */
    /* scratch for plan_point: one entry per job */
    resv *tmp;
    int *ord;
    uint64_t *occ;           /* per node: GPUs taken (step 3, holds_still) */
    int occ_built;           /* occ filled for the current point */
    const curve_row **tmprow; /* batch of each tmp (elastic batch) */
    resv ebtmp;
    /* the point begun last (plan_point_begin): at pt_t, the profile the
     * admitted jobs' reservations leave (pt_F), kept so that more jobs
     * released at that point are decided against it (plan_point_more) */
    int pt_open;
    int64_t pt_t;
    avail pt_F;
    int64_t pt_rise;         /* step 3: the next time after pt_t that the
                                reservations free GPUs (pt_F rises), where
                                a running job may grow again; INT64_MAX:
                                none seen */
    /* whole nodes at the open point (plan.c, "whole nodes"): when a job
     * placement must not move (tight, at risk) holds part of a node, the
     * GPUs of the nodes no such job holds part of, over time (pt_Wb),
     * and what the reservations' whole-node pieces leave of them (pt_W);
     * pt_won 0: no node is held so (both unused) */
    int pt_won;
    avail pt_Wb, pt_W;
} plan;

/*
 * plan_build: plan queue 'q' (resolved against curves) on cluster 'c'.
 * Returns EF_OK or EF_ERR: an invalid current placement in the queue
 * (EF_E_INPUT), else internal errors only (every valid queue has a plan,
 * possibly rejecting jobs). Reentrant: plans of different 'p' may be built
 * in parallel.
 * Run time is bounded by the queue's size, not its numbers: a stretch of
 * slots with no arrival, no reservation change and no completion, whose
 * per-slot overhead charges repeat, is run at once with the same bits
 * slot-by-slot stepping gives (common/fsum.h); what is left are the
 * scheduling points themselves (arrivals, completions, reservation
 * changes) and a few slots around each. A plan that reaches past its
 * horizon (twice the latest release or deadline plus every job's work
 * alone at its slowest usable throughput and the overhead model's
 * per-slot share, plus an allowance per point) or past t = 1e15 s
 * (EF_MAX_I64, the largest time efplan keeps) has run away (a job that
 * makes no progress: OVH_REFERENCE charges as long as the slot):
 * EF_E_INTERNAL with a message, and nothing is planned.
 */
int plan_build(plan *p, const job_queue *q, const cluster *c,
               const plan_opts *o, ef_err *e);

/*
 * plan_check_placements: check the jobs' current placements in queue 'q'
 * (JSON "placement") against cluster 'c' as plan_build takes them: every
 * GPU in the cluster, no GPU held by two jobs, each job's GPUs placed by
 * the buddy rule. EF_OK, or EF_E_INPUT with plan_build's message
 * ("FILE: jobs[3].placement: ..."). Allocates nothing that outlives it.
 */
int plan_check_placements(const cluster *c, const job_queue *q, ef_err *e);

/*
 * plan_init: set up 'p' for queue 'q' (resolved) on cluster 'c' without
 * planning: jobs (remaining work, release, deadline), 'now' and scratch.
 * plan_build starts with it; the simulator uses it with plan_point.
 * Errors: slot <= 0 (EF_E_USAGE). Free with plan_free.
 */
int plan_init(plan *p, const job_queue *q, const cluster *c,
              const plan_opts *o, ef_err *e);

/*
 * plan_point: the ElasticFlow decision at one scheduling point t (on the
 * slot grid). act[0..*na-1] are the jobs in play (admitted or best-effort,
 * not finished), as indices into p->jobs; rel[0..nrel-1] the jobs released
 * at t, in submit order. Each job's 'rem' must be its remaining work at t.
 * Steps 1-3 of the header comment: re-plan the admitted jobs, decide the
 * released ones (appending the admitted and best-effort ones to act), then
 * set every 'g' in act to its reservation at t plus its surplus share.
 * act comes back sorted by index. Placement is the caller's.
 *
 * With opts.elastic_batch, a job that accepts several batch sizes is
 * planned in samples: MSS tries each of its batch sizes and keeps the
 * feasible reservation with the fewest GPU-seconds (eb_mss); 'rrow' is
 * that batch and 'row' starts there; the surplus step may, besides adding
 * GPUs at the job's batch, move it to a larger batch at as many GPUs or
 * more (one with 0 GPUs now: to any batch) when that gains more
 * samples/s per added GPU (a move that adds no GPU and gains goes first).
 * Throughput never falls below the reservation's, so promises hold.
 */
void plan_point(plan *p, int64_t t, int *act, int *na, const int *rel,
                int nrel);

/*
 * plan_earliest_search: the search every earliest deadline efplan offers
 * is found by (plan_earliest_doc's full re-plans, the point rule of
 * opts.earliest_point), over a predicate admits(ctx, d, &hint): 1 if a
 * deadline d is admitted, 0 if not (*hint: where the planner says to
 * look next, -1 if nowhere), -1 on an error. 'lo' is a refused deadline
 * (the one asked for); from 'hint' (when above lo; else lo + step) it
 * steps forward, doubling the step, until a deadline is admitted, then
 * bisects between the last refusal and the first admission until they
 * are one second apart. Returns 1 with *out = the deadline found (it is
 * admitted, *out - 1 is refused, and so was every deadline tried below
 * it), 0 when none is found up to EF_MAX_I64 (*out = -1), -1 when the
 * predicate failed.
 */
typedef int (*plan_admits_fn)(void *ctx, int64_t deadline, int64_t *hint);
int plan_earliest_search(int64_t lo, int64_t hint, int64_t step,
                         plan_admits_fn admits, void *ctx, int64_t *out);

/*
 * plan_point in its steps, for a planning state that keeps its point
 * open while more jobs arrive at it (efplan serve: the submissions of one
 * slot are released at the same boundary):
 *   plan_point_begin: steps 1-2 (the admitted jobs re-planned, rel
 *     decided); the point stays open at t.
 *   plan_point_more: step 2 for more jobs released at the open point t,
 *     decided against the reservations held then, after the ones decided
 *     before and in the same order: the decisions plan_point would make
 *     with every released job in one rel. Nothing may change in between
 *     but these decisions and step 3 (no removal, no adoption, no time);
 *     returns 0 and does nothing when the point at t is not open, or
 *     where the plan's admission has no separate decision step
 *     (opts.no_admission, opts.admission_reference): the caller runs a
 *     whole point again.
 *   plan_point_end: step 3 (each job's GPUs at t: its reservation, the
 *     GPUs it holds, the surplus); act sorted by index. Running it again
 *     at the same point after more decisions gives what one plan_point
 *     gives, provided the jobs' placements (plan_set_placement, or the
 *     plan's own) are still those from before the point.
 * plan_point(t, rel) == plan_point_begin(t, rel) + plan_point_end(t).
 */
void plan_point_begin(plan *p, int64_t t, int *act, int *na, const int *rel,
                      int nrel);
int plan_point_more(plan *p, int64_t t, int *act, int *na, const int *rel,
                    int nrel);
void plan_point_end(plan *p, int64_t t, int *act, int na);

/*
 * A loop that drives plan_point with its own physics (the simulator's
 * ef policy; a live controller) tells the planner what happened through
 * these, and never writes into 'struct plan' itself:
 *   plan_set_deadline: plan job i against 'deadline' (earlier than its
 *     own, e.g. less a margin for reconfiguration costs); before its
 *     release.
 *   plan_set_remaining: job i's real remaining work at the next point,
 *     in its unit (iterations; samples for an elastic-batch job).
 *   plan_set_owed: the overhead seconds job i has not yet paid then.
 *   plan_set_restart_scale: what job i's restarts really cost against
 *     the overhead model's charge (measured by the loop; > 0, 1 = the
 *     model's): every promise check, MSS and the stability rule charge
 *     the model's cost times this from then on.
 *   plan_set_point_index: the loop's count of scheduling points before
 *     the next one (OVH_REFERENCE restarts fall on the points whose
 *     index is a multiple of the slot; plan_build counts every slot).
 *   plan_set_placement: the GPUs job i holds before the next point (the
 *     caller's placement, which must stay valid until that point), so
 *     the point holds a job whose promise has no room for a migration
 *     where it is, and under MOVES_NET grows a running job only where no
 *     other job must move for it (plan_point); after the point,
 *     p->held_back says whether the loop must hold another point one
 *     slot later. Without it the plan's own placement counts.
 */
void plan_set_deadline(plan *p, int i, int64_t deadline);
void plan_set_placement(plan *p, int i, const place_set *pl);
void plan_set_remaining(plan *p, int i, double rem);
void plan_set_owed(plan *p, int i, double seconds);
void plan_set_point_index(plan *p, int64_t index);
void plan_set_restart_scale(plan *p, int i, double scale);
void plan_retire(plan *p, int i);

/*
 * A planning state kept between points (efplan serve holds one for its
 * queue) changes its jobs through these, each O(jobs), never by writing
 * into 'struct plan':
 *   plan_add_job: queue q is p's queue with one job appended (q->n ==
 *     p->njobs + 1; q->jobs may have moved: every job's 'in' is pointed
 *     at q again). The new job is set up as plan_init sets one up (its
 *     release on p's slot grid from p->now, nothing decided); the caller
 *     passes it to plan_point as released, or adopts it.
 *   plan_adopt: job i (not decided yet) was admitted by an earlier
 *     decision (the job "promised" of plan_build: a restarted service
 *     taking back its promises): it is admitted, and the caller puts it
 *     in the active list of the next plan_point, which re-plans it (at
 *     risk if it cannot be saved) and never decides it again.
 *   plan_keep_jobs: drop the jobs that left (retired, rejected): p keeps
 *     its jobs from[0..q->n-1] (ascending), in that order, job k now
 *     being q->jobs[k]; the others' reservations and GPU sets are freed.
 *     The caller renumbers its active list the same way.
 */
void plan_add_job(plan *p, const job_queue *q);
void plan_adopt(plan *p, int i);
void plan_keep_jobs(plan *p, const job_queue *q, const int *from);

/*
 * plan_from_sizes: the plan of queue 'q' (resolved) on cluster 'c' in
 * which the caller decided everything: job j is decided dec[j]
 * (PLAN_ADMITTED, PLAN_BEST_EFFORT or PLAN_REJECTED with reason 'why')
 * and wants size[j*T + t] GPUs in slot t of the T slots of o->slot
 * seconds from o->now (usable sizes; an answer of the ILP, solver/ilp.h).
 * The slots run as in plan_build: placed by the buddy rule through the
 * slot engine (re-placed only when a size changes; each placement counts
 * as a point), advanced at the curves' throughput, a job completing at
 * the exact second and holding no GPUs after its last slot; the plan ends
 * after the last slot with any size. Errors: sizes that cannot be placed
 * (EF_E_INTERNAL, 'p' freed), slot <= 0 (EF_E_USAGE).
 */
int plan_from_sizes(plan *p, const job_queue *q, const cluster *c,
                    const plan_opts *o, const plan_decision *dec,
                    const char *why, const int *size, int T, ef_err *e);

void plan_free(plan *p);

/*
 * plan_alone: what job i of queue 'q' (resolved) needs alone on an empty
 * cluster 'c' under options 'o' (the plan's: slot, now, overhead model,
 * elastic batch, deadline margin), from its release: its minimum
 * satisfactory share by the planner's own MSS (overheads paid, as
 * admission asks it) into 'out' (cleared when none meets the deadline,
 * or the job has none), and its fastest finish alone into *fastest (-1:
 * it cannot run). Returns 1 when a reservation meets the deadline, 0 when
 * none does (or the job has no deadline), -1 with 'e' filled when 'o' is
 * invalid. Changes nothing in 'q'.
 */
int plan_alone(const job_queue *q, int i, const cluster *c,
               const plan_opts *o, resv *out, int64_t *fastest, ef_err *e);

/*
 * plan_check: verify a plan against its queue: slots consecutive on the
 * grid, no slot over capacity, no GPU given twice, every allocation a
 * usable size placed by the buddy rule, and every admitted job that is
 * not flagged at risk, run as the slots say at its curve's throughput,
 * done by its deadline (and every job's planned_end matching). Returns EF_OK or EF_ERR with the first
 * violation.
 */
int plan_check(const plan *p, ef_err *e);

/* One job whose promise a plan breaks (plan_check_promise). */
typedef struct plan_broken {
    int job;              /* index into plan.jobs */
    int64_t end;          /* the second its slots complete it; -1: they
                             never do */
    int64_t planned_end;  /* what the plan says (-1: nothing) */
    int64_t deadline;     /* the job's own deadline (-1: none) */
    int bad_end;          /* the slots complete it elsewhere than
                             planned_end */
    int late;             /* admitted, and its end (the slots', or the
                             planned end of a job the plan's slots stop
                             before) is after its deadline or never */
    int at_risk;          /* the plan flags it at risk (declared late) */
} plan_broken;

/*
 * plan_check_promise: plan_check's work and deadline accounting, every
 * job reported instead of the first: the slots are walked as plan_check
 * walks them (overheads of the plan's model, elastic batch sizes), and
 * each job that is not rejected and whose slots complete it elsewhere
 * than its planned_end, or that is admitted and ends after its deadline
 * (or never), is listed in *out (heap, free(); NULL when none; in job
 * order), *n their count. A job the plan's slots stop before (a plan cut
 * at a horizon, or whose planned_end is past the last slot) is judged by
 * its planned_end. At-risk jobs are listed with at_risk set (plan_check
 * passes them). A structural violation (slots, capacity, placement,
 * batch) is EF_ERR with the first one, as plan_check says it; then *out
 * is NULL.
 */
int plan_check_promise(const plan *p, plan_broken **out, int *n, ef_err *e);

/* Write the plan as JSON (format efplan-plan, keys sorted; planio.h) in
 * file version 'version' (0: the default, 2) to 'path' atomically.
 * 'curves' is recorded as given. */
int plan_write_json(const plan *p, const char *path, const char *jobs_path,
                    const char *curves, int version, ef_err *e);

/* Render the plan as JSON, version 2, into a heap string (*out, *len). */
int plan_to_json(const plan *p, const char *jobs_path, const char *curves,
                 char **out, size_t *len);

/*
 * plan_svg: draw plan 'p' as an SVG chart, appended to 'out' (the CLI
 * writes it to a file atomically or to standard output). Time runs across on an
 * axis in dates and times of zone 'z' when the plan is on the wall clock
 * (ef_ht_is_wall; EF_HT_EPOCH: never), else in hours from the start
 * (common/svg.h). A title says the jobs, cluster and decisions; a legend
 * gives each colour's job (id, model, GPU-hours, deadline); every
 * admitted job's deadline is marked (a dashed line; one past the axis,
 * which reaches 1.5 times the plan's length at most, an arrow at the
 * right edge with its time); rejected jobs are listed with their reason
 * (the first 12, then a count). The jobs with the most GPU-seconds (ties:
 * by id) get the palette's colours, the others grey. A plan with at most
 * 60 jobs that hold GPUs and 6000 blocks is drawn GPU by GPU, grouped
 * by node, one block per job per stretch on the same GPUs, labelled
 * "id (N GPUs)" (or "id") where the label fits; a larger one as GPUs in
 * use stacked by job (the coloured ones, then "others"), with the other
 * jobs' deadlines as a histogram strip. The same plan gives the same
 * bytes.
 */
void plan_svg(const plan *p, ef_ht_zone z, ef_buf *out);

#endif
