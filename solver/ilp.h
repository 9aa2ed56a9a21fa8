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
 * finds nothing in time. Then glp_intopt (Gomory and MIR cuts on) runs
 * from that basis with a callback that offers the warm start (the greedy
 * plan's schedule of its admitted jobs, if given; phase 1's solution in
 * phase 2) as an incumbent, counts subproblem selections for a
 * deterministic node budget shared by both phases (glp_ios_terminate),
 * and tracks the best open bound. A GLPK fatal error is caught
 * (glp_error_hook + longjmp) and returned as an internal error; GLPK
 * never prints and never aborts. GLPK keeps process-wide state: run one
 * ilp_solve at a time; it frees GLPK's environment when done.
 */
#ifndef EF_ILP_H
#define EF_ILP_H

#include <stdint.h>

#include "common/err.h"
#include "common/util.h"
#include "model/cluster.h"
#include "model/jobs.h"
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

/*
 * ilp_report_json: the oracle's answer as JSON (format efplan-oracle,
 * version 1, keys sorted) appended to 'out': the greedy plan 'greedy'
 * (admitted count, ids, GPU-seconds of its admitted jobs) beside the ILP
 * result 'r' (status, admitted or null, bound, LP bound, GPU-seconds,
 * nodes, seconds, warm start, model size) and "gap_jobs" = bound -
 * greedy admitted (null when infeasible). 'greedy' must be the plan of
 * the same queue and grid. Every value but "seconds" is reproducible.
 */
void ilp_report_json(const ilp_result *r, const plan *greedy,
                     const job_queue *q, const char *jobs_path, ef_buf *out);

#endif
