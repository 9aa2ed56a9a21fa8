/*
 * mss.h: Minimum Satisfactory Share by progressive filling.
 *
 * A reservation is what an admitted job is promised: GPU counts over
 * slot-aligned segments of time that complete its remaining work by its
 * deadline against the GPUs still available over time (avail.h).
 *
 * mss_plan follows ElasticFlow's planner: try the job's usable sizes in
 * ascending order; for level q, fill backward from the deadline with
 * min(q, free) (rounded down to a usable size) in each interval of the
 * profile. The first level whose filling reaches the work wins, and the
 * committed plan is two-level: the level below q until the latest
 * breakpoint p from which q alone suffices, then q. Work in the interval
 * that holds the deadline counts only up to the deadline. The least
 * level that suffices is the job's minimum satisfactory share.
 */
#ifndef EF_MSS_H
#define EF_MSS_H

#include <stdint.h>

#include "model/curve.h"
#include "planner/avail.h"

/* Relative safety margin on work: plans aim for work x (1 + MSS_MARGIN)
 * so that summing per-slot progress can never fall short by rounding. */
#define MSS_MARGIN 1e-9

typedef struct seg {
    int64_t start, end; /* [start, end) on the slot grid */
    int gpus;
} seg;

typedef struct resv {
    seg *s;
    int n, cap;
    int64_t real_end; /* planned completion (integer seconds) */
    int64_t end;      /* slot-aligned end of the last segment */
} resv;

void resv_clear(resv *r);
void resv_free(resv *r);
void resv_copy(resv *dst, const resv *src);
/* Append [a, b) at g GPUs to r, merged with the last segment when it
 * continues it at the same size; nothing when b <= a or g <= 0. Segments
 * must come in time order. */
void resv_push(resv *r, int64_t a, int64_t b, int g);
/* GPUs reserved at time x. */
int resv_at(const resv *r, int64_t x);
/* Earliest time > t at which r's GPU count changes (INT64_MAX: never). */
int64_t resv_next_change(const resv *r, int64_t t);
/* Add (delta = -1) or give back (+1) a reservation to a profile. */
void resv_apply(const resv *r, avail *p, int sign);
/* Drop every part of r before 'now'. */
void resv_trim(resv *r, int64_t now);

/*
 * mss_plan: plan 'work' iterations of 'row' from 'now' (on the slot grid)
 * to finish by 'deadline' against profile 'F', using usable sizes
 * <= max_gpus. On success fills 'out' and returns 1; returns 0 when even
 * the largest usable size cannot make it ('out' is then cleared).
 */
int mss_plan(const curve_row *row, int max_gpus, double work, int64_t now,
             int64_t deadline, int slot, const avail *F, resv *out);

/*
 * mss_earliest_finish: the earliest completion (integer seconds) of
 * 'work' iterations when the job takes, in every interval of F from
 * 'now', the largest usable size that fits. This is the earliest
 * deadline mss_plan can accept against F. Returns -1 when the job cannot
 * run at all (no usable size fits the capacity left after F's last
 * breakpoint).
 */
int64_t mss_earliest_finish(const curve_row *row, int max_gpus, double work,
                            int64_t now, int slot, const avail *F);

/*
 * mss_fastest: the plan behind mss_earliest_finish: in every interval of F
 * from 'now' the largest usable size that fits, until the work is done.
 * Fills 'out' (if not NULL) and returns the completion time, or -1 (and
 * 'out' cleared) when the job cannot run at all. Elastic EDF plans every
 * job this way, and late jobs without admission control get this plan.
 */
int64_t mss_fastest(const curve_row *row, int max_gpus, double work,
                    int64_t now, int slot, const avail *F, resv *out);

/*
 * mss_fastest_runnable: the same over every runnable power of two up to
 * 'cap' (a cell with throughput > 0), past the curve's peak too: the
 * reference implementation's EDF, kept to compare numbers with it.
 */
int64_t mss_fastest_runnable(const curve_row *row, int cap, double work,
                             int64_t now, int slot, const avail *F,
                             resv *out);

#endif
