/*
 * engine.h: the slot engine (eng_*): the one step every efplan loop takes
 * at a scheduling point and over the time that follows it.
 *
 *   1. eng_place: take the wanted allocation of every job in play (a GPU
 *      count, or GPU ids the caller chose itself), check it against the
 *      cluster, place it by the buddy rule (place.h) keeping jobs on the
 *      GPUs they hold, and say what each job's change is: kept, started,
 *      resized, migrated or stopped.
 *   2. eng_advance: run one job for a stretch of wall time: first the
 *      unproductive seconds its last change costs, then work at the given
 *      speed, to the exact moment its work runs out.
 *
 * The engine knows no curve, no policy and no clock: the physics is the
 * caller's. The planner (plan_build, plan_from_sizes) advances jobs at
 * their curve's throughput with no overhead; the simulator at its
 * policy's speed with the overhead model's costs; a live controller would
 * advance them by the progress the jobs report. What is counted (resizes,
 * migrations, preemptions, GPU-seconds) is counted from what the engine
 * returns, the same way by every caller. plan_check (plan.h) re-derives a
 * plan without the engine on purpose.
 */
#ifndef EF_ENGINE_H
#define EF_ENGINE_H

#include "common/err.h"
#include "model/cluster.h"
#include "planner/place.h"

/* What happened to one job's GPUs at a point. */
typedef enum eng_change {
    ENG_KEEP = 0,  /* same GPUs (or none before and none now) */
    ENG_START,     /* none before, some now */
    ENG_RESIZE,    /* held some, holds another count now */
    ENG_MIGRATE,   /* same count, other GPUs */
    ENG_STOP       /* held some, none now (preempted or finished) */
} eng_change;

/* One job's wanted allocation at a point, and what came of it. */
typedef struct eng_alloc {
    const char *id;      /* unique; breaks placement ties */
    int want;            /* GPUs from this point on (0: none) */
    const int *pin;      /* the caller's own GPU ids for 'want' (ascending),
                            or NULL: placed by the buddy rule */
    double share;        /* pinned jobs: fraction of wall time they compute
                            on their GPUs, in (0,1]; 0 means 1 */
    place_set *pl;       /* in: the GPUs held; out: the GPUs held from now
                            on (the engine frees the old set) */
    eng_change change;   /* out */
    int keep;            /* 1: hold it on its GPUs if its size is unchanged
                            even when others must move for it (its promise
                            has no room for a migration; place.h) */
} eng_alloc;

/* Scratch for one cluster, reused from point to point. */
typedef struct eng {
    cluster cl;
    int cap;             /* allocations the scratch holds */
    int *want;           /* per allocation */
    place_set *prev, *out;
    const char **ids;
    char *keep;          /* per allocation: eng_alloc.keep */
    int *owner;          /* per GPU: place_slot's scratch */
    double *load;        /* per GPU: pinned shares */
    int least;           /* 1: when the jobs cannot all stay, move as few
                            as can be (place_slot_hold); 0 (eng_init):
                            the paper's placement */
} eng;

/* eng_init: scratch for up to 'cap' allocations per call on cluster 'c'.
 * Free with eng_free. */
void eng_init(eng *x, const cluster *c, int cap);
void eng_free(eng *x);

/*
 * eng_place: apply the wanted allocations a[0..n-1] (n <= cap).
 * If any running allocation is pinned, every running one must be: pins
 * are checked (ids in range and ascending, each GPU's shares summing to
 * at most 1) and taken as they are. Otherwise the wants are placed by the
 * buddy rule (total at most the cluster, powers of two, whole nodes past
 * one node), each job preferring the GPUs it holds. On success each
 * a[k].pl holds the new set and a[k].change says what changed; returns
 * EF_OK. On failure nothing changes and 'e' says why (EF_E_INTERNAL: a
 * wanted allocation the caller should never have asked for).
 */
int eng_place(eng *x, eng_alloc *a, int n, ef_err *e);

/*
 * eng_advance: run one job for 'dt' wall seconds: first the unproductive
 * seconds *ovh_left (as many as fit), then work at 'tp' units per
 * second (> 0). *ov gets the unproductive seconds spent. Returns 1 when
 * the work *rem runs out within dt: then *rem = 0 and *used = the
 * productive seconds it took (the job ends ov + used after the start);
 * else 0, with *rem and *ovh_left lowered.
 */
int eng_advance(double *rem, double *ovh_left, double tp, double dt,
                double *ov, double *used);

#endif
