/*
 * baselines.h: what the fixed-size baseline policies share (bl_*), and
 * their solvers, exposed so that tests can check them on hand-solvable
 * instances. The policies themselves are pol_gandiva.c, pol_tiresias.c,
 * pol_themis.c and pol_chronus.c (registered in policy.c).
 *
 * The fixed-size baselines run every job at the GPU count its trace
 * requested (job->num_gpu). In the ElasticFlow traces a job's iterations
 * equal its duration x the curve's throughput at that count, so running
 * the iterations at that count is the same work as the duration; times
 * below ("seconds left", "executed seconds") are at that count.
 */
#ifndef EF_BASELINES_H
#define EF_BASELINES_H

#include "simulator/sim.h"

/*
 * bl_fixed_size: the GPU count job j requested, if the simulation can
 * run it: a power of two with a runnable cell of the job's curve, at most
 * the cluster. Otherwise 0, and *why (if not NULL) says what is wrong
 * (a static string), for sim_reject.
 */
int bl_fixed_size(const sim *s, const sim_job *j, const char **why);

/*
 * bl_admit: decide job i, released now, the way every fixed-size baseline
 * does: admitted (sim_admit) at the GPU count it requested, which is
 * returned, or rejected (sim_reject with bl_fixed_size's reason) when it
 * cannot run, and 0 returned.
 */
int bl_admit(sim *s, int i);

/* Seconds of computation left for job j at g GPUs (rem / throughput). */
double bl_seconds_left(const sim_job *j, int g);

/* Seconds job j has computed so far at g GPUs. */
double bl_seconds_done(const sim_job *j, int g);

/*
 * The reference's Gandiva (pol_gandiva_ref.c), which pol_gandiva.c runs
 * under --baselines reference: a sim_policy's init, point and fini.
 */
void *bl_gandiva_ref_init(sim *s);
int64_t bl_gandiva_ref_point(sim *s, void *st, int64_t t, const int *rel,
                             int nrel);
void bl_gandiva_ref_fini(void *st);

/*
 * bl_themis_solve: Themis's max-min finish-time fairness over one lease.
 * Job i (of n) needs g[i] GPUs, has waited age[i] s since submission,
 * has rt[i] s of work left at g[i] GPUs and an ideal (isolated) finish
 * time tiso[i] > 0. With a fraction x[i] in [0,1] of the lease,
 *     rho_i(x) = (age[i] + rt[i] / x[i]) / tiso[i].
 * Finds rho = min over x of max_i rho_i subject to sum x[i] g[i] <= N,
 * by bisection on rho: for a candidate rho each job needs
 * x_i = rt[i] / (rho tiso[i] - age[i]) (at most 1), and rho is feasible
 * iff those x_i fit in N. Writes the x of the answer (the smallest that
 * reach it) to x[] and the answer to *rho. Deterministic: a fixed number
 * of bisection steps, sums in index order. Returns the number of
 * bisection steps taken: 0 when the answer is the lowest rho any x can
 * reach, max_i (age[i] + rt[i]) / tiso[i] (every job at x = 1), which
 * then leaves room in N or fits it exactly.
 */
int bl_themis_solve(int n, const int *g, const double *age,
                    const double *rt, const double *tiso, int N, double *x,
                    double *rho);

/*
 * bl_themis_centre: the same program, answered the way the reference's
 * interior-point solver (ECOS through cvxpy, algorithms.md 6.5) answers
 * it. Same inputs, outputs and *rho as bl_themis_solve. Where the budget
 * binds at the optimum (bisection steps > 0) the optimal x is unique:
 * bl_themis_solve's. Otherwise rho is max_i (age[i] + rt[i]) / tiso[i]
 * (the worst job at x = 1) and every x with l_i <= x_i <= 1 and
 * sum x_i g_i <= N is optimal, l_i the smallest x_i reaching rho; what
 * is written then is the analytic centre of that face, where the
 * solver's central path ends: jobs with l_i = 1 at 1, the others
 * maximising
 *     sum_i [1.5 ln(x_i - l_i) + ln(1 - x_i)] + ln(N - sum_i g_i x_i).
 * The weights are the barrier terms the cvxpy program has on that face,
 * as ECOS weighs its cones (a second-order cone half a linear one): per
 * job the epigraph row t >= rho_i, the cone x_i s_i >= 1/tput_i of 1/x's
 * epigraph s_i, x_i >= 0 and x_i <= 1; maximised over s_i, the first two
 * give 1.5 ln(x_i - l_i) - ln x_i, which x_i >= 0 cancels. A solver's
 * last iterate lies inside the face but not at its centre (no closed
 * form); both favour jobs of few GPUs, which the corner does not
 * (benchmarks/results/reference_mode.md). Found by bisection on the
 * budget's multiplier, each x_i then in closed form; deterministic, sums
 * in index order. Returns 1 when it wrote the centre, 0 when it wrote
 * bl_themis_solve's x.
 */
int bl_themis_centre(int n, const int *g, const double *age,
                     const double *rt, const double *tiso, int N, double *x,
                     double *rho);

/*
 * bl_lease_mip: Chronus's lease-block selection problem, solved with
 * GLPK. n jobs; job j needs r[j] more leases of g[j] GPUs, and may use
 * leases 0 .. m[j]-1 (0 = the lease starting now). Leases 0..h-1 are
 * individual binary variables; the rest of each job's window is one
 * integer "tail" block, limited by one capacity constraint per distinct
 * window end (the work that must be done by then fits N per lease).
 * Capacity N per lease. Objective: maximise 10 per job granted all its
 * leases, plus (sign +1) or minus (sign -1) the GPUs used in lease 0
 * divided by N (use the current lease as much as possible, or defer
 * guaranteed work and leave it to others).
 * Output: run[j] = 1 if job j runs in lease 0, ok[j] = 1 if it is granted
 * all its leases; plan[j*h + l] = 1 if it runs in lease l < h (plan may
 * be NULL). 'node_budget' caps GLPK's branch-and-bound nodes, and
 * 'seconds' its time when > 0 (0: none, so the answer depends on the
 * inputs only; what Chronus passes); if the search does not prove
 * optimality within them, the greedy packer answers instead.
 * Capacity rows that cannot bind (their columns at their upper bounds
 * fit) are not given to GLPK: its presolve would remove them first,
 * with no other effect, so the answer is the same (see baselines.c).
 * Returns 0 when the MIP answered, 1 when the greedy did (a fallback).
 */
int bl_lease_mip(int n, const int *g, const int *r, const int *m, int h,
                 int N, int sign, int node_budget, double seconds, int *run,
                 int *ok, int *plan);

/*
 * bl_lease_greedy: the greedy packer the MIP falls back on, same inputs
 * and outputs: jobs by (slack m - r, then more GPUs, then index) each take
 * r leases with room, latest first (sign -1) or earliest first (sign +1);
 * a job that does not fit is not granted (ok 0) and takes nothing.
 */
void bl_lease_greedy(int n, const int *g, const int *r, const int *m, int h,
                     int N, int sign, int *run, int *ok, int *plan);

#endif
