/*
 * offline.h: offline admission (off_*): which jobs of a queue known in
 * full at planning time to admit, so that more are admitted than
 * arrival order admits.
 *
 * plan_build decides each deadline job when it arrives (online: ElasticFlow's
 * contract, and what the simulator replays). When the whole queue is known
 * in advance (a nightly batch), an early job that fits may block two later
 * ones, or the first of a burst may block the pair behind it. off_plan
 * searches over sets of jobs to leave out ("withhold", plan_opts.withhold)
 * and over the order in which jobs released at the same point are decided
 * (plan_opts.order), and lets plan_build do everything else, so every plan
 * it considers is a plan of the planner, with its promises, and passes
 * plan_check:
 *   1. the online plan (nothing withheld, submit order) is the first
 *      incumbent; then the plan that decides the jobs of one point in
 *      order of their least GPU-seconds (their cost: work at the most
 *      efficient usable size) replaces it if better, and that order is
 *      kept for every later try;
 *   2. a move is one plan_build: withhold one more admitted job, or admit
 *      again one withheld job; it is taken when it is better: more jobs
 *      admitted, or as many with a lower total cost of the admitted jobs
 *      (a strict lexicographic improvement: the search cannot cycle);
 *      the first better move is taken and the search starts over;
 *   3. the moves of a round, in order: every withheld job given back (by
 *      queue index), then every admitted deadline job (not promised, not
 *      under way) whose run overlaps the window [release, deadline) of
 *      some rejected deadline job that could finish alone on the cluster
 *      (mss_earliest_finish against an empty cluster, overheads aside:
 *      a job too slow even alone gains nothing), the costliest first (ties by queue
 *      index); when none is better, pairs of the first 12 withhold moves;
 *      a round without a better move ends the search, and so does the
 *      budget of plan_build calls;
 *   4. then, if some rejected deadline job could finish alone and the
 *      budget allows, a second search where every job is decided at the
 *      plan's start (plan_opts.decide_at; each reservation still starts
 *      at the job's release at the earliest) and nothing is withheld, in
 *      an order (plan_opts.order) that is searched: the best of three
 *      first orders (deadline; latest release first; shortest window
 *      first, each then by deadline), then moves of one job: a rejected
 *      one to an earlier place (the first place first), then an admitted
 *      one to a later place (the last first); the first better move is
 *      taken (better as in 2) and the moves start over. Its plan
 *      replaces the incumbent when it is better. Deciding every job at
 *      the start lets a job released later take its share before an
 *      earlier one shapes its reservation around it (on the oracle
 *      study, the jobs of a late window first); each such plan re-plans
 *      every admitted job at every point, about ten times the cost of an
 *      online plan at a thousand jobs.
 * Hence the result never admits fewer jobs than the online plan, and the
 * same inputs give the same plan (no clock, no threads in the choice).
 * What no choice of withheld jobs and decision order can reach (a set
 * that MSS reservations cannot hold although a schedule exists) is left
 * to the exact step of solver/ilp.h (ilp_offline), which calls off_plan
 * first and fills the exact_* members of off_stats.
 */
#ifndef EF_OFFLINE_H
#define EF_OFFLINE_H

#include "common/err.h"
#include "model/cluster.h"
#include "model/jobs.h"
#include "planner/plan.h"

/* Why the exact step did not run (off_stats.exact_skip). */
enum {
    OFF_SKIP_NONE = 0, /* it ran */
    OFF_SKIP_OFF,      /* turned off (or no admission test to help) */
    OFF_SKIP_NOTHING,  /* every rejected job is one no plan admits */
    OFF_SKIP_MODEL,    /* the ILP cannot model the queue (ilp_binaries -1) */
    OFF_SKIP_SIZE      /* the model is larger than the limit */
};

/* The default budget of plan_build calls. */
#define OFF_DEFAULT_PLANS 200

typedef struct off_stats {
    int online_admitted; /* the online plan's admitted count */
    int plans;           /* plan_build calls, the online plan included */
    int withheld;        /* jobs left out in the returned plan */
    int moves;           /* improving moves taken */
    int early;           /* 1: the plan decides every job at its start
                            (phase 2 of the search) */
    int budget_hit;      /* 1: the budget stopped the search */
    /* the exact step (solver/ilp.h ilp_offline; off_plan leaves these
       at their "not run" values) */
    int exact;           /* -1 not run (exact_skip says why); 0 run, its
                            plan not better (or the relaxed bound already
                            met); 1 the plan is the exact step's */
    int exact_skip;      /* why it did not run: OFF_SKIP_* */
    int exact_status;    /* ilp_status of the solve; -1 not run */
    int exact_admitted;  /* the ILP's admitted count; -1 not run */
    long exact_binaries; /* binaries of the model; -1 not counted */
    int exact_bound;     /* the relaxed bound (ilp_relax) the step checks
                            first: when the plan meets it the ILP is not
                            solved (exact 0, exact_status -1); -1 none */
} off_stats;

/*
 * off_plan: the offline admission plan of queue 'q' (resolved) on
 * cluster 'c' with the planner options 'o' (o->withhold must be NULL) and
 * at most 'max_plans' plan_build calls (>= 1; 1 = the online plan). On
 * EF_OK, 'p' holds the best plan found (free with plan_free), which has
 * passed plan_check, and 'st' (may be NULL) what the search did; the
 * jobs it withholds are rejected with a reason that says so. Errors:
 * those of plan_build (then 'p' holds nothing to free); a plan that fails
 * plan_check (EF_E_INTERNAL).
 */
int off_plan(plan *p, const job_queue *q, const cluster *c,
             const plan_opts *o, int max_plans, off_stats *st, ef_err *e);

/*
 * off_guided: the offline admission seeded by a priority per job, 'prio'
 * (q->n entries; the oracle gives the relaxed LP's admission a[j] in
 * [0, 1], solver/ilp.h ilp_opts.lp_admit): the jobs are ranked by
 * priority (highest first), then cost (least GPU-seconds at the most
 * efficient usable size), deadline and queue index. Seeds, each one
 * plan_build: the deadline jobs of priority below 1/2 withheld (but
 * promised ones and those under way), the others decided at release in
 * the ranking's order within a point; the same decided at the plan's
 * start in the ranking's order (decide_at, as off_plan's phase 2);
 * nothing withheld, every job decided at the start in the ranking's
 * order. The best (off_better's order) is the incumbent; then rounds of
 * give-back moves: each withheld job, in the ranking's order, admitted
 * again, kept when better; until a round gains nothing or 'max_plans'
 * plan_build calls (>= 1) are spent. So the LP's rounding is repaired
 * by the planner's own promise check: every plan it considers is
 * plan_build's. On EF_OK 'p' holds the best plan (it passed plan_check)
 * and 'st' (may be NULL) what the search did (online_admitted -1, the
 * exact step not run). No clock: the same inputs give the same plan.
 * Errors: those of plan_build and plan_check ('p' then holds nothing).
 */
int off_guided(plan *p, const job_queue *q, const cluster *c,
               const plan_opts *o, const double *prio, int max_plans,
               off_stats *st, ef_err *e);

/*
 * off_better: 1 if plan 't' is better than plan 'inc' (the same queue):
 * more jobs admitted, or as many with a lower total cost of the admitted
 * jobs (each job's GPU-seconds at its most efficient usable size), the
 * order off_plan's search improves by.
 */
int off_better(const plan *t, const plan *inc);

/*
 * off_open: how many deadline jobs plan 'p' rejects that could finish by
 * their deadline alone on the cluster (overheads aside): 0 means no
 * other choice of jobs admits more.
 */
int off_open(const plan *p);

#endif
