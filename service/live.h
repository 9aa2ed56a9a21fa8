/*
 * live.h: the service's planning state (live_*): the planner's own typed
 * structures (a job queue and a plan driven by plan_point, planner/plan.h)
 * kept at the newest scheduling point, as the simulator's ef policy keeps
 * them, so that an arrival is decided at its point against the
 * reservations held then, without re-planning the queue from its epoch.
 *
 * Time runs on the plan's slot grid. Between points the state runs with
 * the plan's own physics (a dry run): every job in play advances at its
 * curve's throughput on the GPUs its point gave it (reservation plus
 * surplus), first paying the reconfiguration seconds the overhead model
 * charges for its last change (a start, a resize, a migration: the jobs
 * are placed through the slot engine at every point, eng_place), through
 * the slot engine's eng_advance. A point happens where plan_build would
 * have one: where an admitted job's reservation changes, after a
 * completion, at an arrival.
 * A job whose work runs out leaves the state (done by the plan); a
 * rejected or cancelled one too. Only the jobs in play are held: the
 * state's size follows the active jobs, not the history.
 *
 * Same calls, same state: nothing here reads a clock or depends on
 * threads. Not thread-safe: the service calls it under its lock.
 */
#ifndef EF_LIVE_H
#define EF_LIVE_H

#include <stdint.h>

#include "common/err.h"
#include "model/cluster.h"
#include "model/jobs.h"
#include "planner/engine.h"
#include "planner/plan.h"

typedef struct live {
    plan p;          /* driven by plan_point; p.jobs[i].in == &q.jobs[i] */
    job_queue q;     /* its jobs (owned) */
    int qcap;
    int *act, na, acap; /* the jobs in play, as indices */
    char *gone;      /* per job: left the state (qcap entries) */
    int ngone;
    int64_t t;       /* the newest point */
    int due;         /* a point is due at t (a change or a completion
                        reached it) */
    int64_t points;  /* points evaluated since live_start */
    eng x;           /* the slot engine's scratch: the jobs' GPUs are
                        placed at every point (p.jobs[i].pl) */
    int reality;     /* a closed loop reports completions: a job whose
                        work runs out in the state is not done by it */
    int open;        /* the point at t is begun and takes more arrivals
                        (plan_point_more) */
    int unsettled;   /* the GPUs at t are still to hand out and place
                        (live_settle) */
    /* what the jobs held before the point at t, kept when the point was
     * settled for a reader and may take more arrivals: a second
     * settlement starts again from it (stashed: kept, nstash jobs) */
    int stashed, nstash;
    int *stash_job;
    place_set *stash_pl;
    double *stash_owed;
} live;

/* A job whose work ran out at 'end' in the dry run (live_advance). */
typedef void (*live_done_fn)(void *arg, const job *j, int64_t end);

/* live_start: an empty state at point t (on the grid of po->slot) on
 * cluster c with the plan options po (po->now is set to t). Errors:
 * plan_init's. Free with live_free. */
int live_start(live *L, const cluster *c, const plan_opts *po, int64_t t,
               ef_err *e);
void live_free(live *L);

/* live_advance: run the state from its point to 'to' (>= L->t, on the
 * grid), evaluating the points on the way; each job that completes is
 * told to fn (may be NULL) and leaves. The state is then at 'to', with a
 * point there still to evaluate when L->due (live_point does it). */
void live_advance(live *L, int64_t to, live_done_fn fn, void *arg);

/* live_add: append job *jb (moved into the state: *jb is left empty),
 * released at the first point at or after its submit time (the state's
 * point at the earliest). promised: adopted as admitted (an
 * earlier decision: plan_adopt) and in play; else it is decided by the
 * next live_point that lists it. Returns its index. */
int live_add(live *L, job *jb, int promised);

/* live_point: the point at L->t with rel[0..nrel-1] released (indices
 * from live_add), decided (plan_point_begin). Arrivals at a point that
 * is already open and unchanged since are decided against the
 * reservations held there (plan_point_more), as plan_build decides the
 * jobs released at one point: one re-plan of the admitted jobs per
 * point, not one per arrival. Rejected arrivals leave the state. The
 * GPUs at t are handed out and placed, and each job whose GPUs changed
 * charged its reconfiguration seconds, when the state next moves on or
 * live_settle asks. */
void live_point(live *L, const int *rel, int nrel);

/* live_settle: the GPUs of the point at L->t handed out (plan_point_end)
 * and placed through the slot engine, each change charged, if that is
 * still to do: what live_queue and the job's GPUs read. O(jobs in play).
 * Settling twice at one point (more arrivals in between) gives what one
 * settlement after all of them gives. */
void live_settle(live *L);

/* live_find: the index of job 'id' in the state, or -1. O(jobs). */
int live_find(const live *L, const char *id);

/* live_remove: job i leaves the state (cancelled, failed, done as the
 * loop saw it): its reservation is released, it is out of play. The
 * state drops the entries that left once they outnumber the others
 * (indices change then: look jobs up again by id). */
void live_remove(live *L, int i);

/* live_queue: the jobs in play (settled: live_settle) as a queue planned
 * from the state's point
 * (a deep copy, *q, free with queue_free): each with its remaining work
 * as progress (iterations_done; the fraction of an iteration rounded
 * down), its own submit time, "promised" when
 * admitted, the overhead it still owes; plan_build of it with the state's
 * options and now == L->t is the full deadline-order re-plan of the
 * state. adm (heap, q->n entries, may be NULL): 1 for admitted. */
void live_queue(const live *L, job_queue *q, int **adm);

#endif
