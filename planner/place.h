/*
 * place.h: buddy placement of one slot's allocations on nodes and GPUs.
 *
 * Rule: a job of g <= gpus_per_node GPUs sits inside one node on an
 * aligned block (GPUs [k*g, (k+1)*g) of that node); a larger job takes
 * g / gpus_per_node whole nodes. A move costs the job a migration, so
 * placement tries, in turn:
 *   1. every job whose size is unchanged keeps exactly its GPUs, the
 *      others are placed around them (largest first);
 *   1b. (place_slot_hold with 'least') every unchanged job is held but
 *      those in the way of a job that found no room, fewest GPUs first;
 *   2. (place_slot_keep) only the jobs marked 'keep' are held in place;
 *   3. all jobs are placed largest first, so every block already taken
 *      is aligned to the current size: the free space of every node is a
 *      union of aligned blocks, and this never fails while the total fits
 *      (no fragmentation). Within that order each job prefers the GPUs it
 *      held in the previous slot (same GPUs when its size is unchanged, a
 *      block inside or around its old one when it resized).
 * The first attempt that places every job wins.
 */
#ifndef EF_PLACE_H
#define EF_PLACE_H

#include "model/cluster.h"

/* A job's GPUs: global GPU ids node * gpus_per_node + index, ascending. */
typedef struct place_set {
    int g;
    int *gpu; /* g entries */
} place_set;

/*
 * place_slot: place n jobs with sizes want[i] (powers of two; 0 = not
 * running) given their previous sets prev[i] (prev[i].g == 0 if none).
 * ids[i] breaks ties deterministically. Writes out[i] (allocating
 * out[i].gpu; free with place_set_free). 'owner' is scratch of
 * c->total_gpus ints. Returns EF_OK, or EF_ERR when the sizes exceed the
 * cluster or are not placeable by the rule. Reentrant.
 */
int place_slot(const cluster *c, int n, const int *want, const place_set *prev,
               const char *const *ids, place_set *out, int *owner);

/* place_slot with keep[i] = 1 for the jobs attempt 2 holds in place (an
 * admitted job whose promise has no room for a migration); keep may be
 * NULL (then it is place_slot). */
int place_slot_keep(const cluster *c, int n, const int *want,
                    const place_set *prev, const char *const *ids,
                    const char *keep, place_set *out, int *owner);

/* place_slot_keep with, when 'least' is set, an attempt between 1 and 2
 * that moves as few jobs as it can: every unchanged job held in place
 * but those in the way of a job that found no room (the held jobs whose
 * GPUs, fewest first, free an aligned block for it; jobs marked keep
 * stay), repeated until all fit or nothing more can be unheld. */
int place_slot_hold(const cluster *c, int n, const int *want,
                    const place_set *prev, const char *const *ids,
                    const char *keep, int least, place_set *out, int *owner);

/* 1 if place_slot_hold (with 'least' as given) places the sizes
 * want[0..n-1] with every job marked in 'keep' (not NULL) whose size is
 * unchanged on exactly the GPUs it holds (its attempts 1, 1b or 2), else
 * 0. Places nothing. */
int place_holds_keep(const cluster *c, int n, const int *want,
                     const place_set *prev, const char *const *ids,
                     const char *keep, int least, int *owner);

void place_set_free(place_set *s);

/* 1 if 's' follows the buddy rule on cluster c. */
int place_is_buddy(const cluster *c, const place_set *s);

#endif
