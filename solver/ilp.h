/*
 * ilp.h: the exact ILP oracle (ilp_*): the planning problem as a
 * time-indexed mixed-integer program solved by GLPK, to measure how far
 * the greedy planner (plan.h) is from the best possible admission.
 *
 * THE MODEL. Time is cut into slots of 'slot' seconds from 'now'
 * (slot t = [now + t*S, now + (t+1)*S)), up to the slot holding the last
 * deadline. Only jobs with a deadline are in the model; a job j has
 *   - a binary a[j]: "j is admitted";
 *   - a binary x[j,k,t] for each usable size k (curve_usable, capped at
 *     the cluster size) and each slot t with release_j <= start_t <
 *     deadline_j (release = first slot boundary >= submit time, as in
 *     the planner): "j runs on k GPUs in slot t".
 * Rows:
 *   one[j,t]:  sum_k x[j,k,t] - a[j] <= 0   (one size per slot, and only
 *              if admitted: the tight form that links sizes to admission)
 *   cap[t]:    sum_{j,k} k * x[j,k,t] <= N  (GPUs of the cluster)
 *   work[j]:   sum_{k,t} c[j,k,t] * x[j,k,t] - a[j] >= 0, with
 *              c = min(1, tput_k * min(S, deadline_j - start_t) / W_j)
 *              and W_j = remaining iterations * (1 + MSS_MARGIN): the
 *              slot holding the deadline counts only up to the deadline;
 *              the work is divided by W_j so every row has the scale 1,
 *              and capping a coefficient at 1 keeps the same integer
 *              points (any x = 1 with c >= 1 alone covers a[j] <= 1) while
 *              tightening the LP relaxation.
 *   gpu[j]:    sum_{k,t} k * x[j,k,t] - L_j * a[j] >= 0, L_j the fewest
 *              GPU-slots of any mix of sizes that does the work (a valid
 *              cut that rounds up the LP's fractional GPU-time).
 * Objective, lexicographic, in two solves:
 *   phase 1: maximise sum_j a[j] (the admitted count);
 *   phase 2: with the row sum_j a[j] >= (phase 1's proven optimum),
 *            minimise the GPU-slots sum_{j,k,t} k * x[j,k,t] (GPU-seconds
 *            = GPU-slots * S: a job holds its GPUs to the end of a slot,
 *            as in the planner).
 *   Phase 2 runs only when phase 1 is proven optimal, from phase 1's
 *   solution. --write-lp writes ONE model with the weighted objective
 *       max sum_j a[j] - sum_{j,k,t} k * x[j,k,t] / (N*T + 1)
 *   whose optimum is the same lexicographic optimum, so other solvers can
 *   cross-check it in one run. Proof: the GPU-slots U of any feasible
 *   point are at most N*T (the cap rows), so the penalty U/(N*T+1) lies
 *   in [0, 1). Admitted counts are integers: if solution A admits more
 *   jobs than B, then obj(A) > adm(A) - 1 >= adm(B) >= obj(B), so no
 *   saving in GPU-time ever buys back a job; between equal counts the
 *   objective orders by GPU-time alone.
 * Jobs that cannot finish by their deadline even alone on the cluster at
 * their largest size in every allowed slot keep a[j] fixed at 0 (no
 * x columns). Best-effort jobs are outside the model: they are neither
 * counted nor given GPUs (at run time they only take GPUs nobody was
 * promised, so they never change what can be admitted).
 *
 * SOLVING. Phase 1's LP relaxation is solved first (glp_simplex): its
 * value bounds the admitted count (floor of it) even when branch-and-cut
 * finds nothing in time. Then glp_intopt runs
 * from that basis (Gomory and MIR cuts only on models of at most
 * ILP_CUTS_BINARIES) with a callback that offers the warm start (a
 * plan's schedule of its admitted jobs, if given: efplan oracle gives
 * the best of its plans; phase 1's solution in phase 2) as an
 * incumbent, counts subproblem selections for a
 * deterministic node budget shared by both phases (glp_ios_terminate),
 * and tracks the best open bound. A GLPK fatal error is caught
 * (glp_error_hook + longjmp) and returned as an internal error; GLPK
 * never prints and never aborts. GLPK keeps process-wide state: run one
 * ilp_solve (or ilp_relax) at a time; it frees GLPK's environment when
 * done.
 *
 * THE BOUND AT REAL SIZE (ilp_relax). The time-indexed model has
 * sum_j (slots of j) * (sizes of j) binaries: 500 jobs over a day of
 * 60 s slots is millions, out of reach. ilp_relax solves instead the LP
 * of a time-aggregated model whose optimum is >= the time-indexed ILP's
 * optimum (so floor of it bounds the admitted count of every schedule
 * the exact model allows, hence of every plan efplan can make).
 *   Windows. Cut [0, T) at the boundaries B = {0, T} u {t0_j, t1_j - 1,
 *   t1_j} (release, deadline slot, end of every candidate job); when B
 *   has more than 'windows' + 1 points, keep 'windows' + 1 of them evenly
 *   spread by index (0 and T always). Window w = [b_w, b_{w+1}), L_w
 *   slots. For job j, l[j,w] = |[t0_j, t1_j) n w| slots (0: no column).
 *   Columns (continuous): a[j] in [0, 1]; y[j,k,w] >= 0 for usable k and
 *   every window w with l[j,w] > 0: "slots of w in which j runs on k".
 *   Rows:
 *     one[j,w]:  sum_k y[j,k,w] - l[j,w] a[j] <= 0
 *     cap[w]:    sum_{j,k} k y[j,k,w] <= N L_w
 *     work[j]:   sum_{k,w} C[j,k,w] y[j,k,w] - a[j] >= 0, with
 *                C[j,k,w] = max over the slots t of j in w of c[j,k,t]
 *                (the exact model's coefficient: the full-slot one,
 *                or the deadline slot's when that is j's only slot in w)
 *     gpu[j]:    sum_{k,w} k y[j,k,w] - L_j a[j] >= 0 (L_j as above)
 *   with a[j] fixed as in the exact model (hopeless: 0; must-admit: 1).
 *   Valid inequalities (issue 37; ilp.c relax_cuts has each proof): a
 *   job whose window is too short for its work on fewer than k GPUs
 *   runs on at least k for a number of whole slots; per window, a job's
 *   runs and the runs on more than N - s GPUs never share a slot (the
 *   conflict rows, added in rounds where the optimum violates them).
 *   Each is a sum of inequalities every integer point of the exact
 *   model satisfies, so the proof below still holds with them.
 *   Objective: max sum_j a[j].
 * Proof that it is a relaxation. Take any feasible point (a, x) of the
 * exact model and set y[j,k,w] = sum_{t in w} x[j,k,t]. Each aggregated
 * row is implied by the exact rows: one[j,w] is the sum of one[j,t] over
 * j's l[j,w] slots in w (each <= a[j]); cap[w] is the sum of the L_w rows
 * cap[t] of w (a sum of valid inequalities is valid); work[j] holds
 * because every c[j,k,t] <= C[j,k,w] and x >= 0, so the aggregated work
 * is >= the exact work >= a[j]; gpu[j] is the same sum. Relaxing the
 * binaries to [0, 1] only enlarges the set, the objective is unchanged,
 * so LP* >= ILP* and, counts being integers, floor(LP* + 1e-6) >= ILP*
 * (the 1e-6 only absorbs the solver's tolerance; a computed LP value is
 * never below the true one by more). Coarsening the windows (merging
 * two) is again a sum of rows, so every 'windows' setting is a bound,
 * the finest the tightest. With every boundary kept, each job's slots
 * cover a window wholly or not at all and have one coefficient in it
 * (the deadline slot is a window of its own), so spreading any LP point
 * evenly over a window's slots is a point of the time-indexed LP: the
 * aggregated LP is then exactly the time-indexed one (with the valid
 * inequalities, tighter). Why the exact model already bounds every
 * efplan plan, with the modelling choices the planner makes:
 *   - overheads (model/overhead.h) only take work away: a plan that pays
 *     them runs sizes whose overhead-free work is at least its own, so
 *     its sizes are a feasible point of the overhead-free model;
 *   - the usable-size rule (model/curve.h): a plan only runs usable
 *     sizes (the planner and plan_check enforce it); a schedule that ran
 *     a non-usable size k could run the largest usable size below it
 *     instead, with fewer GPUs and at least the throughput, so allowing
 *     only usable sizes loses no admissible set; non-concave curves need
 *     no concave hull: the columns are the sizes themselves;
 *   - the promise, MSS's one-shape reservations and the buddy placement
 *     only restrict a plan further; the planner's own margin (1e-9) is
 *     in W_j; release on the slot grid and holding GPUs to the end of a
 *     slot are the planner's own rules.
 * The second bound, on GPU-time. Every job j alone needs at least
 * F_j GPU-slots within its deadline: the larger of L_j and the rounded-up
 * optimum of  min sum_k k z_k s.t. sum_k z_k <= D_j (its slots),
 * sum_k r_k z_k >= W_j (r_k the full-slot work), z >= 0, of which every
 * schedule of j is a point (z_k = its slots on k GPUs). The gpu[j] rows
 * use F_j (still valid, and tighter than L_j). So a schedule admitting a
 * set A of at least m jobs (m = the warm plan's admitted count, else
 * floor(LP*)) uses at least sum_{j in A} F_j >= the m least F_j (the
 * must-admit jobs' always counted): the "job floors" bound, in closed
 * form. When the model has at most ILP_RELAX_GPU_COLS columns, the LP
 * min sum k y with the row sum_j a[j] >= m is solved too (a lower bound
 * by the relaxation argument; it is never below the job floors, since
 * the gpu rows are in it) and the larger is kept. Times S, as
 * GPU-seconds (GPU-slots are whole, so LP values are rounded up).
 */
#ifndef EF_ILP_H
#define EF_ILP_H

#include <stdint.h>

#include "common/err.h"
#include "common/util.h"
#include "model/cluster.h"
#include "model/jobs.h"
#include "planner/offline.h"
#include "planner/plan.h"

typedef enum ilp_status {
    ILP_OPTIMAL = 0,  /* proven optimum (admitted count, then GPU-time) */
    ILP_FEASIBLE,     /* a limit was reached with an incumbent: see bound
                         (bound == admitted: the count is proven, the
                         GPU-time is not) */
    ILP_NO_INCUMBENT, /* a limit was reached before any integer solution */
    ILP_INFEASIBLE    /* no schedule admits the --must-admit jobs */
} ilp_status;

/* Test hooks that provoke failures on purpose (ilp_opts.fault). */
typedef enum ilp_fault {
    ILP_FAULT_NONE = 0,
    ILP_FAULT_GLPK     /* make a bad GLPK call: a GLPK fatal error */
} ilp_fault;

typedef struct ilp_opts {
    int slot;            /* seconds, > 0 */
    int64_t now;         /* model start; INT64_MIN = earliest submit */
    double time_limit;   /* seconds for LP + branch-and-cut; 0 = none */
    long node_limit;     /* subproblems selected; 0 = none (reproducible) */
    const char *write_lp;/* write the model in CPLEX LP format, or NULL */
    const plan *warm;    /* greedy plan on the same slot grid, or NULL */
    const int *must;     /* per job: 1 = must be admitted; or NULL */
    int windows;         /* ilp_relax: most windows; 0 = ILP_RELAX_WINDOWS */
    double *lp_admit;    /* ilp_relax: NULL, or q->n entries that get each
                            job's a[j] in the count LP's optimum of the
                            pass reported, or where that one was solved by
                            the interior-point method of the last pass
                            the simplex method solved (0 outside the model; all 0
                            when no LP was solved): the LP-guided
                            admission's priorities (offline.h off_guided) */
    int no_cuts;         /* ilp_relax: 1 = without the valid inequalities
                            of tight deadlines and conflicts (the model
                            before issue 37: a test and ablation hook) */
    struct ilp_result *lp_sched; /* ilp_relax: NULL, or (free with
                            ilp_result_free; zeroed or a previous result)
                            the count LP's optimum of the pass lp_admit
                            is from as whole slots: admit (a[j] >= 1/2), size
                            (njobs x nslots GPUs), admitted, now, slot,
                            nslots; status and bounds not set. A rounding,
                            not a schedule: ilp_hint_plan makes a plan of
                            it. Untouched when no LP was solved */
    int lp_method;       /* ilp_relax: ILP_LP_AUTO (0: the simplex
                            method, the interior-point method for a large
                            refined pass, ILP_RELAX_IPT_ROWS), or a test
                            hook: ILP_LP_SIMPLEX, ILP_LP_INTERIOR (every
                            LP) */
    ilp_fault fault;     /* test hook; ILP_FAULT_NONE in production */
} ilp_opts;

void ilp_opts_default(ilp_opts *o);

typedef struct ilp_result {
    ilp_status status;
    int64_t now;
    int slot;
    int njobs;          /* jobs of the queue */
    int nslots;         /* T: slots in the model */
    int deadline_jobs;  /* jobs with a deadline (the model's candidates) */
    int hopeless;       /* deadline jobs that cannot finish even alone */
    int rows, cols, binaries;
    /* incumbent (status optimal or feasible) */
    int admitted;
    double gpu_seconds; /* GPU-seconds of the admitted jobs' slots */
    int *admit;         /* njobs entries: 1 = admitted */
    int *size;          /* njobs * nslots: GPUs of job j in slot t */
    /* bounds */
    int bound;          /* upper bound on admitted jobs (= admitted when
                           optimal); the deadline-job count when nothing
                           better is known */
    int lp_bound;       /* the LP relaxation's bound on admitted; -1 if the
                           LP did not finish */
    ilp_status gpu_status; /* phase 2: ILP_OPTIMAL (least GPU-time for this
                           count proven), ILP_FEASIBLE (stopped by a
                           limit), ILP_NO_INCUMBENT (did not run) */
    double gpu_seconds_bound; /* phase 2's lower bound on GPU-seconds; -1 */
    long nodes;         /* subproblems selected */
    int warm_start;     /* 1 accepted, 0 not offered, -1 rejected by GLPK */
    int limit_hit;      /* 1 time limit, 2 node limit, 0 none */
    double seconds;     /* wall time of the solve (not reproducible) */
} ilp_result;

/*
 * ilp_solve: build the model for queue 'q' (resolved against curves) on
 * cluster 'c' and solve it. Fills 'r' (free with ilp_result_free) and
 * returns EF_OK for every status above. Errors: EF_E_USAGE (bad slot, a
 * must-admit job without deadline), EF_E_INTERNAL (the --write-lp file
 * cannot be written, as every output through ef_write_file_with; a GLPK
 * failure, caught; a solution that fails the exact re-check of its
 * work). On EF_ERR 'r' holds nothing to free.
 */
int ilp_solve(const job_queue *q, const cluster *c, const ilp_opts *o,
              ilp_result *r, ef_err *e);

void ilp_result_free(ilp_result *r);

/*
 * ilp_binaries: the binaries ilp_solve's model of queue 'q' on cluster
 * 'c' would have under o->slot, o->now and o->must (the x and a columns,
 * as ilp_result.binaries; counted without GLPK, past ILP_MAX_BINARIES
 * too), or -1 when ilp_solve would refuse
 * the queue for another reason (bad slot, a deadline too far on the
 * grid, a must-admit job without deadline).
 */
long ilp_binaries(const job_queue *q, const cluster *c, const ilp_opts *o);

/* Branch-and-cut generates Gomory and MIR cuts only on models of at
 * most this many binaries (the oracle study's instances have a few
 * thousand); above it their root round costs more than it saves. */
#define ILP_CUTS_BINARIES 20000L

/* efplan oracle's default node budget for the exact ILP (no clock: the
 * same inputs give the same answer on any machine). */
#define ILP_ORACLE_NODES 500L

/* ilp_offline's defaults: the exact step runs on models of at most this
 * many binaries (a dozen jobs over a day of 24 slots have about 1,000),
 * each solve within this many branch-and-bound subproblems (no clock:
 * the same queue gives the same plan). */
#define ILP_OFFLINE_BINARIES 5000L
#define ILP_OFFLINE_NODES 3000L

/*
 * ilp_offline: the offline admission (planner/offline.h off_plan) with an
 * exact step: when the search's plan still rejects a deadline job that
 * could finish alone (off_open) and the time-indexed model has at most
 * 'max_binaries' binaries (0: no exact step), first the relaxed bound
 * (ilp_relax, default passes, no time limit: milliseconds at this size)
 * is computed: when the plan meets it nothing can admit more and the
 * step ends. Otherwise the model is solved
 * (warm-started with that plan, within 'node_limit' subproblems, no time
 * limit) and, when its solution admits more jobs, the plan is built
 * again by plan_build with every job decided at the plan's start, the
 * ILP's jobs first, each given its slots in the solution as its
 * reservation (plan_opts.hint: taken only where the GPUs are free and
 * the promise check, overheads paid, holds; the planner re-plans it as
 * any other job afterwards), then the others by the usual admission
 * test. That plan replaces the search's when better (off_better); it
 * passes plan_check. The ILP ignores reconfiguration costs, so under an
 * overhead model a reservation that changes size often may not pay them:
 * then that job goes through the usual test and the step may gain
 * nothing. 'st' (may be NULL) gets off_plan's statistics and the exact
 * step's. Errors: those of off_plan, ilp_solve (EF_E_INTERNAL: GLPK) and
 * plan_build; on error 'p' holds nothing to free.
 */
int ilp_offline(plan *p, const job_queue *q, const cluster *c,
                const plan_opts *o, int max_plans, long max_binaries,
                long node_limit, off_stats *st, ef_err *e);

/*
 * ilp_hint_plan: the plan of a schedule 'r' (an ILP solution, or
 * ilp_opts.lp_sched's rounding of the relaxed LP): plan_build with every
 * job decided at r->now (which must be the plan's start), r's admitted
 * jobs first (in deadline order, then the others), each offered its
 * slots in r as its reservation (plan_opts.hint), which it takes only if
 * every GPU of it is free and the promise check, overheads paid, holds;
 * otherwise, and for the other jobs, the usual admission test. So the
 * plan is the planner's own whatever r holds: it passes plan_check
 * (checked by the callers). Into 't' (free with plan_free). Errors:
 * plan_build's.
 */
int ilp_hint_plan(plan *t, const ilp_result *r, const job_queue *q,
                  const cluster *c, const plan_opts *o, ef_err *e);

/* ilp_offline_text: what the exact step did, as one line for a person
 * ("exact step: ..."), into buf (n bytes, always terminated). */
void ilp_offline_text(const off_stats *s, char *buf, size_t n);

/* ilp_relax's finest default: its second pass keeps up to this many
 * windows, refining the first pass's 60 where their capacity binds (on
 * an overloaded day of 265 jobs on 32 GPUs, 200 refined windows give the
 * bound of all 424 boundaries, 181 where 60 give 200, in 31 s where all
 * 424 take ten minutes). */
#define ILP_RELAX_WINDOWS 200

/* The refined pass of ilp_relax stops each LP after this many simplex
 * iterations times the model's rows (then the first pass's bound
 * stands): a limit that does not depend on the machine, unlike a clock,
 * and that costs about the same time at any size (an iteration's cost
 * grows with the rows): 4e8 is 28,000 iterations of a 14,000-row model,
 * about 25 s on the 2-core development machine. */
#define ILP_RELAX_WORK 4e8

/* The second LP (GPU-time) runs only up to this many columns: GLPK's
 * simplex takes minutes on it at real size, where the job floors give
 * the GPU-time bound instead. */
#define ILP_RELAX_GPU_COLS 50000

/* ilp_opts.lp_method. The refined pass of ilp_relax (ILP_RELAX_WORK) is
 * solved by GLPK's interior-point method instead of the simplex method
 * where its model has more than ILP_RELAX_IPT_ROWS rows: there the
 * simplex method, without a basis to start from, needs tens of thousands
 * of iterations each a pass over every row, and was stopped by the
 * budget on every overloaded day of 265 jobs or more measured but one
 * (cluster08 day 20, 687 jobs on 64 GPUs: 19,623 rows, 20,384
 * iterations, 45 s, the refined bound lost), where the interior-point
 * method solves it in about 10 s. The one it finished (cluster08 day 23,
 * 13,023 rows) took 24 s, the interior-point method 4.4 s to the same
 * optimum, but there the refined pass's vertex guides the LP-guided
 * admission to 406 where the first pass's guides it to 405: so 14,000
 * rows, which keeps the simplex method there. Its value is the bound its
 * prices prove (valid whatever their accuracy: ilp.c relax_dual_bound);
 * such a pass adds no rounds of conflict rows (each would be a whole
 * solve; on the days measured they moved the LP by under 1e-5); where
 * the method stops short of the optimum, the prices of the point it
 * reached still prove a bound, kept with limit_hit 2 (cluster05 day 21:
 * 298.815 where the first pass gave 299.182). Its optimum, an interior point of the optimal face, does not
 * guide the LP-guided admission (ilp_opts.lp_admit): a vertex guides
 * better (cluster08 day 18: the LP-guided plan admitted 167 from the
 * interior point, 177 from the first pass's vertex; cluster01 day 15:
 * 227 against 235). */
#define ILP_RELAX_IPT_ROWS 14000
enum { ILP_LP_AUTO = 0, ILP_LP_SIMPLEX, ILP_LP_INTERIOR };

/* The configuration LP (ilp_config.h) runs only where 200 rounds of
 * column generation take at most this much pricing work (jobs x sizes x
 * (N + 1) per window priced; no clock), so only on small models: its
 * restricted LPs grow every round, and on a day of 63 jobs on 64 GPUs
 * (105 windows) 100 rounds took 32 s and were far from done. Where it
 * matters most, a few dozen jobs of which one is several percent of the
 * count, it finishes in well under a second. */
#define ILP_RELAX_CFG_WORK 4e7

typedef struct ilp_relaxed {
    ilp_status status;  /* ILP_OPTIMAL: the LP was solved, 'bound' holds;
                           ILP_NO_INCUMBENT: a limit stopped it ('bound' =
                           the candidates, the trivial bound);
                           ILP_INFEASIBLE: the must-admit jobs cannot be
                           admitted together (bound -1) */
    int64_t now;
    int slot;
    int njobs, nslots, deadline_jobs, hopeless;
    int windows;        /* windows of the aggregated model */
    int rows, cols;
    long exact_binaries; /* binaries the time-indexed model would have */
    double lp_value;    /* LP optimum (admitted jobs, fractional); -1 */
    int bound;          /* most jobs any schedule admits */
    int gpu_for;        /* the count m of the GPU-time bound */
    double gpu_seconds_bound; /* least GPU-seconds to admit gpu_for
                           jobs; -1 when the count LP was not solved */
    int gpu_lp;         /* 1: gpu_seconds_bound from the second LP; 0:
                           from the job floors alone */
    int limit_hit;      /* bits: 1 the time limit stopped an LP, 2 the
                           iteration budget (ILP_RELAX_WORK) did; 0 none */
    long lp_iters;      /* simplex iterations of every pass (reproducible) */
    int cuts;           /* valid inequalities in the reported pass's model
                           (tight-deadline rows and conflict rows) */
    int first_bound;    /* the first pass's bound (60 windows; what this
                           bound was before its refined pass); -1 when
                           o->windows asked for one pass, or none */
    double cfg_value;   /* the configuration LP's bound on the count
                           (ilp_config.h), its Lagrangian bound when its
                           rounds ran out; -1 not run (o->no_cuts, the LP
                           unsolved, o->warm already at the bound, or a
                           model over ILP_RELAX_CFG_WORK) */
    int cfg_rounds;     /* its rounds of column generation */
    int cfg_done;       /* 1: it finished (cfg_value is its LP optimum) */
    int ipt;            /* 1: the reported pass's LP was solved by the
                           interior-point method (ILP_LP_AUTO) */
    double seconds;     /* wall time (not reproducible) */
} ilp_relaxed;

/*
 * ilp_relax: the LP bound of the time-aggregated model (header comment)
 * for queue 'q' (resolved) on cluster 'c': o->slot, now, time_limit,
 * write_lp (this model, with its admitted-count objective), warm (the
 * plan whose admitted count the GPU-time bound is for; may be NULL),
 * must, windows, lp_admit and fault are read; node_limit is not.
 * o->windows > 0: one pass with that many windows, spread evenly.
 * o->windows 0: two passes: 60 windows, then, unless the first kept
 * every boundary or its bound is o->warm's admitted count (a feasible
 * count, so no bound is lower), the refined pass: the first pass's
 * boundaries plus every candidate boundary inside a window whose
 * capacity row binds in its optimum (nonzero dual), up to
 * ILP_RELAX_WINDOWS windows, each LP within ILP_RELAX_WORK (iterations
 * times rows: no clock; a pass stopped by it leaves the first one's
 * bound); a refined pass of more than ILP_RELAX_IPT_ROWS rows is
 * solved by the interior-point method instead (ILP_LP_AUTO),
 * without rounds of conflict rows, its LP value the bound its prices
 * prove (r->ipt), and lp_admit and lp_sched then come from the last
 * pass solved by the simplex method (a vertex). Any set of boundaries aggregates the exact model validly (the
 * header's proof), so both passes are bounds. In each pass whose count
 * LP is solved, unless o->no_cuts or o->warm already admits its bound,
 * the configuration LP over the same windows (ilp_config.h: which sizes
 * fit in one slot together) runs too where it is small enough
 * (ILP_RELAX_CFG_WORK); the pass's bound is the least of both (its
 * cfg_value, cfg_rounds, cfg_done). 'r' is the pass with the
 * least bound, with the largest GPU-time bound of the passes, limit_hit
 * if any pass was stopped, first_bound, the iterations of both and the
 * total seconds; --write-lp holds the last pass's model. o->time_limit
 * (0 none) stops them too, and then the answer depends on the machine.
 * Fills 'r' (owns nothing) and returns EF_OK for every status. Errors:
 * as ilp_solve, but no limit on the exact model's size.
 */
int ilp_relax(const job_queue *q, const cluster *c, const ilp_opts *o,
              ilp_relaxed *r, ef_err *e);

/* "optimal", "feasible", "no_incumbent", "infeasible". */
const char *ilp_status_name(ilp_status s);

/*
 * ilp_to_plan: the incumbent of 'r' (status optimal or feasible) as a
 * plan in the planner's format: admitted jobs run as the solution says,
 * other deadline jobs are rejected, best-effort jobs get nothing. The
 * sizes run through the planner's slot loop (plan_from_sizes, plan.h):
 * placed by the buddy rule by the slot engine, advanced and completed as
 * plan_build does, consecutive equal slots merged. The result passes
 * plan_check. 'q' and 'c' must be those given
 * to ilp_solve. Returns EF_ERR (EF_E_INFEASIBLE) without an incumbent.
 */
int ilp_to_plan(const ilp_result *r, const job_queue *q, const cluster *c,
                plan *p, ef_err *e);

/* Everything the oracle holds for its answer. */
typedef struct ilp_report {
    const ilp_result *ilp;      /* the exact ILP, or NULL (not run) */
    const ilp_relaxed *relaxed; /* the relaxed bound, or NULL (not run) */
    const plan *greedy;         /* arrival order; never NULL */
    const plan *offline;        /* the offline admission, or NULL */
    const off_stats *os;        /* its search, or NULL */
    const plan *guided;         /* the LP-guided admission (offline.h
                                   off_guided), or NULL (not run) */
    const off_stats *gs;        /* its search, or NULL */
    const int *must;            /* per job 1 = must be admitted, or NULL */
    const job_queue *q;         /* the queue of every plan above */
    const char *jobs_path;      /* for the document */
} ilp_report;

/* The oracle's verdict: where the optimum lies. */
typedef struct ilp_verdict {
    int infeasible;     /* the --must-admit jobs cannot be admitted together */
    int answer;         /* 1: a plan admits 'lower' and an LP bounds the
                           count by 'upper' (so lower <= optimum <= upper);
                           0: no answer (infeasible, or no LP was solved) */
    int proven;         /* answer and lower == upper: the optimum */
    int lower;          /* the most jobs a plan found admits (one that
                           admits every must job); -1 none */
    int upper;          /* the least bound from a solved LP; -1 none */
    const char *best;   /* which admits 'lower': "greedy", "offline",
                           "guided", "ilp" (the first of these to reach
                           it), "none" */
    const plan *best_plan; /* that plan; NULL for "ilp" and "none" */
} ilp_verdict;

/*
 * ilp_verdict_of: the verdict of 'rp'. The optimum is the most deadline
 * jobs any schedule of the time-indexed model admits (every efplan plan
 * is one, header comment): each plan found is a lower bound (with
 * --must-admit, only a plan that admits every must job), every solved
 * LP's bound an upper one. Pure; fills 'v'.
 */
void ilp_verdict_of(const ilp_report *rp, ilp_verdict *v);

/* ilp_verdict_admits: 1 if the verdict's best answer admits job j. */
int ilp_verdict_admits(const ilp_report *rp, const ilp_verdict *v, int j);

/*
 * ilp_report_json: the oracle's answer as JSON (format efplan-oracle,
 * version 3, keys sorted) appended to 'out': "method" (exact, relaxed or
 * both: which of the exact ILP and the relaxation were run; at least one
 * is not NULL), the greedy plan (admitted count, ids, GPU-seconds of its
 * admitted jobs), "offline" and "guided" (the offline and the LP-guided
 * admission's plans with their searches, or null), "relaxed" (or null)
 * and "ilp" (or null) as the results hold them, "bound" = the least of
 * the known bounds and "gap_jobs" = bound - greedy admitted (both null
 * when infeasible), and "verdict" (ilp_verdict_of): "answer" (proven,
 * range, no_bound or infeasible), "lower", "upper", "gap_jobs" (upper -
 * lower), "greedy_within" (upper - greedy's count), "best" and the ids
 * of the jobs the best answer admits that greedy rejects
 * ("gained_jobs") and the other way round ("given_up_jobs"). Version 3
 * added "guided", "verdict", "relaxed.lp_iterations" and the relaxed
 * "limit" value "iterations". The plans must be of the same queue and
 * grid. Every value but the "seconds" is reproducible.
 */
void ilp_report_json(const ilp_report *rp, ef_buf *out);

#endif
