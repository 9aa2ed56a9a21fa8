/*
 * ebatch.h: elastic batch size (eb_*): jobs that accept several global
 * batch sizes (jobs.h "batch_sizes") and count their work in samples.
 *
 * A job is elastic in a run when the run enables it (plan/simulate
 * --elastic-batch, the simulator's saxena policy) and the job accepts two
 * or more batch sizes (job_elastic). Its work is then tracked in samples
 * and its throughput at (batch b, g GPUs) is the curve's cell(b, g) x b
 * samples/s; GPU counts are still the usable sizes of curve.h, per batch
 * row. Every other job keeps one batch size and counts iterations, as it
 * always did: these functions give exactly the old numbers for it.
 */
#ifndef EF_EBATCH_H
#define EF_EBATCH_H

#include <stdint.h>

#include "model/curve.h"
#include "model/jobs.h"
#include "planner/avail.h"
#include "planner/mss.h"

/* The curve rows job j may run at in a run with elastic batch 'on':
 * its accepted batch sizes' rows when it is elastic there, else its one
 * row. Writes *rows (not owned) and returns how many (>= 1). */
int eb_rows(const job *j, int on, const curve_row *const **rows);

/* Throughput of 'row' at a usable size g in the job's work unit:
 * samples/s (cell x batch) when 'samples', else iterations/s (the cell).
 * 0 when g is not usable for the row. */
static inline double eb_tput(const curve_row *row, int g, int samples)
{
    double t = curve_tput(row, g);
    return samples ? t * (double)row->batch : t;
}

/*
 * eb_min_config: job j's smallest configuration with elastic batch 'on':
 * the smallest usable size <= max_gpus over its rows, at the row with the
 * highest throughput at that size (ties: the smaller batch). Writes *g
 * and returns the row; NULL (and *g = 0) when no size fits.
 */
const curve_row *eb_min_config(const job *j, int on, int max_gpus, int *g);

/* GPU-seconds a reservation holds (its segments, slot-aligned). */
double eb_gpu_seconds(const resv *r);

/*
 * eb_mss: MSS (mss_plan) over the job's rows: for each row, plan 'work'
 * (in the job's unit: samples when elastic, else iterations) and keep the
 * feasible plan with the fewest GPU-seconds (ties: the smaller batch).
 * For a job that is not elastic this is mss_plan on its row. Fills 'out'
 * (using 'tmp' as scratch) and returns the row, or NULL when no row can
 * make the deadline ('out' cleared).
 */
const curve_row *eb_mss(const job *j, int on, int max_gpus, double work,
                        int64_t now, int64_t deadline, int slot,
                        const avail *F, resv *out, resv *tmp);

/*
 * eb_fastest: mss_fastest over the job's rows: the plan that completes
 * earliest (ties: the smaller batch). Fills 'out' if not NULL ('tmp'
 * scratch) and *row; returns the completion time or -1 when the job
 * cannot run at all.
 */
int64_t eb_fastest(const job *j, int on, int max_gpus, double work,
                   int64_t now, int slot, const avail *F, resv *out,
                   resv *tmp, const curve_row **row);

#endif
