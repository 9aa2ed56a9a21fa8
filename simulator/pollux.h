/*
 * pollux.h: the allocation step of the pollux policy (px_*), exposed so
 * that tests can compare it with an exhaustive search.
 */
#ifndef EF_POLLUX_H
#define EF_POLLUX_H

/*
 * px_allocate: give each of nc jobs c[k] in [1, cmax[k]] GPUs, sum <= N,
 * to minimise sum_k cost[k * (N + 1) + c[k]] (cost[k][g]: the job's term
 * of the objective at g GPUs; pollux uses 1 / speedup, i.e. the p-mean
 * with p = -1). Deterministic greedy: every job starts at 1 GPU; then, while
 * GPUs are free, the (job, count) with the largest cost decrease per added
 * GPU is applied (ties: fewer GPUs, then lower k), if positive; then local
 * search: the single-GPU move (from a job or the free pool to another job)
 * that lowers the sum most, while one does (at most 4N moves). Not always
 * optimal on non-convex costs (test_pollux.c measures the gap).
 * Returns EF_ERR (nothing set) if nc > N or a cmax is outside [1, N].
 */
int px_allocate(int nc, int N, const int *cmax, const double *cost, int *c);

#endif
