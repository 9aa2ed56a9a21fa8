/*
 * overhead.h: what a job pays, in unproductive seconds, when its GPU
 * count or GPU set changes (ovh_*). One model for every policy.
 *
 *   OVH_FIG12 (default): per model, from the measured costs of the
 *     ElasticFlow paper's Fig. 12 (1->2, 2->1, 8->16, 16->8 GPUs and an
 *     8-GPU migration, seconds). A scale-up to g GPUs costs the 1->2 value
 *     when max(old, new) <= 2, the 8->16 value when it is >= 16, and in
 *     between is interpolated linearly in log2 of the larger count; a
 *     scale-down likewise from 2->1 and 16->8; a move to another GPU set
 *     of the same size costs the migration value. A start or a resume
 *     after preemption (0 -> g) costs the scale-up to g. deepspeech2 uses
 *     bert's numbers (the paper prints them equal); models the figure
 *     does not cover use its "ef" row (a generic average).
 *   OVH_REFERENCE: the reference simulator's generic formula, charged at
 *     every scheduling point to every job holding GPUs: 2 s (7 s on
 *     clusters of 256 GPUs or more) if its GPU set was seen before (a
 *     cache shared by all jobs, emptied every 'slot'-th point), else that
 *     plus 2 * (log2 g + 1) s, plus 27 s (47 s on >= 256 GPUs) at
 *     restart points.
 *   OVH_RESTART: a flat OVH_RESTART_SECONDS (30 s) without progress at
 *     every start, resume, rescale and migration: the re-allocation cost
 *     of the Pollux simulator, for every policy.
 *   OVH_NONE: no overhead.
 */
#ifndef EF_OVERHEAD_H
#define EF_OVERHEAD_H

#include <stdint.h>

typedef enum ovh_mode {
    OVH_FIG12 = 0,
    OVH_REFERENCE,
    OVH_NONE,
    OVH_RESTART
} ovh_mode;

#define OVH_RESTART_SECONDS 30.0

/* Parse "fig12", "reference", "restart" or "none"; -1 if unknown. */
int ovh_parse(const char *s);
const char *ovh_name(ovh_mode m);

/* A model's row of the Fig. 12 table (the generic row for a model it
 * does not name), looked up once by name. The *_id functions below take
 * it instead of the name: the planner's promise checks charge changes
 * per reservation piece, and a lookup by name there was a tenth of a
 * simulation's time. Each name function is its _id function of
 * ovh_lookup(model). */
typedef int ovh_id;
ovh_id ovh_lookup(const char *model);

/* OVH_FIG12 cost of going from g0 to g1 GPUs (g0 may be 0: a start), or
 * of a migration when g0 == g1 and 'moved'. 0 when nothing changes. */
double ovh_change(const char *model, int g0, int g1, int moved);
double ovh_change_id(ovh_id id, int g0, int g1, int moved);

/* Largest single OVH_FIG12 cost of a model (for planning margins). */
double ovh_max(const char *model);

/* What a policy should expect a change from g0 to g1 GPUs (or a
 * migration) to cost under mode 'm': ovh_change for OVH_FIG12,
 * OVH_RESTART_SECONDS for OVH_RESTART (0 when nothing changes or g1 is
 * 0), and 0 for OVH_NONE and OVH_REFERENCE (charged per point). */
double ovh_expect(ovh_mode m, const char *model, int g0, int g1, int moved);
double ovh_expect_id(ovh_mode m, ovh_id id, int g0, int g1, int moved);

/* Largest single cost ovh_expect can return for a model (margins). */
double ovh_expect_max(ovh_mode m, const char *model);

/*
 * ovh_charge: what one job pays at a point under OVH_FIG12 or
 * OVH_RESTART when it goes from g0 to g1 GPUs, 'moved' (same count on
 * other GPUs) and/or 'rebatch' (its batch size changed, a restart at g1).
 * A rebatch without a size change costs what a migration does. 0 when
 * nothing changes, when g1 is 0, and for the other modes (OVH_REFERENCE
 * charges per point: ovh_reference). The simulator charges exactly this,
 * and the planner's promises (planner/promise.h) count it.
 */
double ovh_charge(ovh_mode m, const char *model, int g0, int g1, int moved,
                  int rebatch);
double ovh_charge_id(ovh_mode m, ovh_id id, int g0, int g1, int moved,
                     int rebatch);

/* The reference formula for one job at one point. */
double ovh_reference(int g, int cached, int restart, int total_gpus);

/* What OVH_REFERENCE charges a job at one slot that holds the same GPUs
 * as the slot before: a restart, uncached after a restart, else cached
 * (ovh_reference(g, 0, 1, N), (g, 0, 0, N), (g, 1, 0, N)). */
typedef enum ovh_ref_kind {
    OVH_REF_CACHED,
    OVH_REF_FRESH,
    OVH_REF_RESTART
} ovh_ref_kind;

typedef struct ovh_ref_run {
    ovh_ref_kind kind;
    int64_t count;      /* slots in a row */
} ovh_ref_run;

/* A stretch of slots as runs: head once, body 'reps' times, tail once. */
typedef struct ovh_ref_seq {
    ovh_ref_run head[2], body[3], tail[3];
    int nhead, nbody, ntail;
    int64_t reps;
    int last_restart;   /* 1 if the stretch's last slot is a restart */
} ovh_ref_seq;

/*
 * ovh_ref_slots: the charge kinds of slots k0 .. k0+n-1 (slot indexes
 * from the plan's start; k0 >= 0, n >= 1) for a job that runs on the
 * same GPUs through all of them: a restart at every index that is a
 * positive multiple of 'every' (>= 1), uncached at the slot after a
 * restart ('prev_restart': slot k0 - 1 was one), cached otherwise. So a
 * loop over the stretch can apply each run at once instead of each slot.
 */
void ovh_ref_slots(int64_t k0, int64_t n, int64_t every, int prev_restart,
                   ovh_ref_seq *s);

/* ovh_ref_add: add, to *x, add[kind] once for every slot of seq (its
 * runs in order), with exactly the bits a slot-by-slot loop of additions
 * gives (common/fsum.h). The planner's stretch skip and plan_check both
 * advance their sums with it. */
void ovh_ref_add(double *x, const ovh_ref_seq *seq, const double *add);

/* The reference's cache of GPU sets seen (hashes of sorted id lists). */
typedef struct ovh_cache {
    uint64_t *h;
    int n, cap;
} ovh_cache;

/* 1 if the set was in the cache (else it is added). */
int ovh_cache_seen(ovh_cache *c, const int *gpu, int g);
void ovh_cache_clear(ovh_cache *c);
void ovh_cache_free(ovh_cache *c);

#endif
