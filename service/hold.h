/*
 * hold.h: the loop's hold rule (hold_*): which running jobs whose GPUs a
 * re-plan changes keep them instead. A stop costs a job its checkpoint,
 * its exit, a new start-up and a rendezvous, so the closed loop
 * (service/loop.c) makes a change only where it pays:
 *   - a change the job must make (hold_job.must_change: the plan cannot
 *     keep it where it runs; its promise needs it to grow, onto GPUs
 *     another job holds or because on what it holds it would miss; a
 *     growth that ends it sooner than staying, its restart counted);
 *   - a change another job needs (hold_taker): a job not held whose plan
 *     takes some of its GPUs, where that job's promise needs GPUs now
 *     (its reservation) and this one does not end sooner than its restart
 *     would take, or where this one is best-effort and has made progress
 *     (the plan's choice between two jobs' gains). An admitted job is not
 *     stopped for another's surplus, and an attempt that has not shown
 *     its first progress only for a promise: stopping it wastes its whole
 *     start.
 * Anything else (a shrink or a move whose GPUs nobody takes, a growth
 * that does not pay) is held. Releases are applied until nothing changes;
 * then a job none takes from is held again, and so is one whose new GPUs
 * include a held job's (it could not start there), until nothing changes:
 * a job is stopped only for a change it must make or for the job that
 * takes its GPUs. Pure: same jobs, same answer.
 */
#ifndef EF_HOLD_H
#define EF_HOLD_H

#include "model/placement.h"

/* One job of the loop as the rule sees it. */
typedef struct hold_job {
    int running;          /* an attempt runs (not being stopped) */
    int live;             /* not done or failed (its plan counts) */
    const placement *place; /* where it runs (running) */
    const placement *want;  /* what the plan gives it now */
    int need;             /* GPUs its promise needs now (its reservation;
                             0: best-effort, at risk, none) */
    int must;             /* the plan cannot keep it where it runs */
    int must_change;      /* its change must be made (see above) */
    int ends_soon;        /* it ends where it runs sooner than a restart
                             would take */
    int run_seen;         /* its attempt has shown progress */
    int admitted;         /* a promise (not best-effort) */
} hold_job;

/* 1 if a's wanted GPUs and b's current ones share one. */
int hold_wants(const placement *want, const placement *place);

/* hold_taker: the job (index) that takes job j's GPUs for a reason the
 * rule gives way to, promises first, given the holds so far; -1: none.
 * O(n x GPUs). */
int hold_taker(const hold_job *jobs, int n, const char *hold, int j);

/* hold_rule: hold[j] (n entries) = 1 for each running job whose change the
 * loop does not make. O(n^3 x GPUs) at worst. */
void hold_rule(const hold_job *jobs, int n, char *hold);

#endif
