/*
 * promise.h: what an admitted job's reservation really delivers once
 * reconfiguration costs are paid (prm_*): the planner's promise check.
 *
 * The invariant the planner keeps at every scheduling point t, for every
 * admitted job: run from the GPUs it holds at t (and the overhead it
 * still owes), its reservation (or the path the planner is about to give
 * it: a surplus slot, then the reservation) completes its remaining work
 * by its deadline after paying every cost under the overhead model in
 * force (model/overhead.h):
 *   - OVH_FIG12, OVH_RESTART: ovh_charge at every change of GPU count or
 *     batch along the path (a start after a gap, a resize), plus an
 *     allowance of 'migrations' migrations at the path's largest size,
 *     for moves forced by other jobs' placement (at most one per point;
 *     each point checks anew).
 *   - OVH_REFERENCE: a point at every slot boundary while the job holds
 *     GPUs (the simulator's points all fall on the slot grid, at most one
 *     per slot, so this bounds them), each charged ovh_reference: cached
 *     when its GPUs did not change, uncached at a change; plus, at the
 *     path's highest throughput, every restart (and the uncached point
 *     after it) the point indexes from index0 on can hold, the uncached
 *     point after a restart at index0 - 1, and the uncached points of
 *     'migrations' forced moves.
 *   - OVH_NONE: the work at the curve's throughput.
 * An overhead replaces the one still owed (as the slot engine charges
 * it); work counts only up to the deadline. Costs are lost work: seconds
 * without progress times the throughput of the size being paid for.
 */
#ifndef EF_PROMISE_H
#define EF_PROMISE_H

#include <stdint.h>

#include "model/curve.h"
#include "model/overhead.h"
#include "planner/mss.h"

/* The physics the check assumes. */
typedef struct prm_model {
    ovh_mode mode;
    int total_gpus;     /* OVH_REFERENCE: 256+ GPUs cost more */
    int slot;           /* seconds between possible points */
    int restart_every;  /* OVH_REFERENCE: a restart at every point whose
                           index is a multiple of this (not 0) */
    int64_t index0;     /* OVH_REFERENCE: the index of the point at t */
    int migrations;     /* forced migrations allowed for (FIG12/RESTART) */
} prm_model;

/* One stretch of a path: 'gpus' at batch row 'row' over [a, b). */
typedef struct prm_piece {
    int64_t a, b;
    int gpus;
    const curve_row *row;
} prm_piece;

/* Where a job stands at the start of a path. */
typedef struct prm_start {
    int64_t t;              /* the point */
    int gpus;               /* GPUs held just before t (0: none) */
    const curve_row *row;   /* batch row held (NULL when none) */
    double owed;            /* overhead seconds still unpaid at t */
    ovh_id model;           /* the job's model's overhead row (ovh_lookup) */
    int samples;            /* work counted in samples (elastic batch) */
    double scale;           /* what its restarts really cost against the
                               model's charge (FIG12, RESTART): measured
                               (plan_set_restart_scale); 0 or 1: the
                               model's */
} prm_start;

/*
 * prm_work: the work a job gets by 'deadline' along pieces p[0..n-1]
 * (ascending, not overlapping, each a >= s->t; time between pieces or
 * before the first holds no GPUs), starting as 's' says, under 'm'.
 * Allowances are subtracted. Never negative.
 */
double prm_work(const prm_model *m, const prm_start *s, const prm_piece *p,
                int n, int64_t deadline);

/*
 * prm_resv_work: prm_work along reservation 'r' at batch row 'row' from
 * max(from, s->t), preceded by the piece 'head' if not NULL (head->b
 * must be <= the first reserved second used, i.e. 'from').
 */
double prm_resv_work(const prm_model *m, const prm_start *s,
                     const prm_piece *head, const resv *r,
                     const curve_row *row, int64_t from, int64_t deadline);

/*
 * prm_finish: the first whole second at which 'work' is done along
 * reservation 'r' at 'row' from s->t under 'm' (allowances included), or
 * -1 when the reservation does not deliver it.
 */
int64_t prm_finish(const prm_model *m, const prm_start *s, const resv *r,
                   const curve_row *row, double work);

#endif
