/*
 * goodput.h: the goodput model of an elastic job that adapts its batch
 * size (gp_*), as the Pollux scheduler and simulator use it; read from
 * the measurements in inputs/pollux/<application>/:
 *
 *   placements.csv  placement,local_bsz,step_time,sync_time
 *                   'placement' = GPUs per node as digits ("4", "144");
 *                   up to 4 nodes of up to 4 GPUs.
 *   scalability.csv num_nodes,num_replicas,local_bsz,step_time,sync_time
 *                   6 to 16 nodes.
 *   validation-B.csv progress,iteration,metric,grad_sqr,grad_var
 *                   one row per epoch of a run at global batch B:
 *                   gradient statistics and the progress reached at the
 *                   end of the epoch. The smallest B is the initial batch
 *                   size, the largest the largest batch allowed.
 *
 * Model (the ground truth of the simulation):
 *   - Step time of a placement at local batch b: the measured rows of
 *     that placement (digits sorted ascending), linear in b between
 *     measured sizes (clamped to the measured range). Placements the
 *     table does not have (more than 4 nodes, or over 4 GPUs on a node)
 *     use the fitted model below.
 *   - Fitted model (Pollux's form): compute c = ac + bc * b; network
 *     n = ar + br * (r - 2) on one node with r > 1 replicas, an + bn *
 *     (r - 2) across nodes, 0 for one replica; step = (c^g + n^g)^(1/g).
 *     ac, bc: least squares on the one-GPU rows; ar, br and an, bn: least
 *     squares of sync_time on the single- and multi-node rows (slopes and
 *     intercepts clamped at >= 0); g: the value in [1, 10] (step 0.05)
 *     with the least squared log error over all multi-GPU rows.
 *   - Gradient accumulation: s extra micro-steps of (step - sync) each.
 *   - Statistical efficiency at global batch B in epoch e: gain =
 *     (var + sqr) / (var / scale + sqr), scale = B / initial batch, with
 *     sqr and var of epoch e interpolated linearly in B between the
 *     validation runs (clamped to their range).
 *   - Goodput = gain / (step + s * (step - sync)) in progress units per
 *     second; the sample rate is B / (the same time).
 *   - Progress at the end of epoch e: the initial batch run's 'progress'
 *     column; training is complete at the last row's progress.
 */
#ifndef EF_GOODPUT_H
#define EF_GOODPUT_H

#include "common/err.h"

/* The measured rows of one placement, ascending local batch. */
typedef struct gp_place {
    char key[12];
    int n;
    double *bsz, *step, *sync;
} gp_place;

typedef struct gp_app {
    char name[32];
    int nplace;
    gp_place *place;        /* sorted by key */
    double min_local, max_local; /* measured local batch range */
    double ac, bc, ar, br, an, bn, gamma; /* fitted model */
    int nval;               /* validation runs, ascending batch */
    double *vbatch;
    int nepoch;             /* rows used from each run (the fewest) */
    double *vsqr, *vvar;    /* [run * nepoch + epoch] */
    double *progress;       /* end of each epoch, initial batch run */
    double init_batch, max_batch;
} gp_app;

/* One configuration of a job on a placement. */
typedef struct gp_config {
    double batch;           /* global batch size */
    double local;           /* per replica and micro-step */
    int accum;              /* extra accumulation micro-steps */
    double seconds;         /* time of one optimiser step */
    double goodput;         /* progress per second */
    double samples;         /* samples per second */
} gp_config;

/*
 * gp_app_load: read application 'name' from directory 'dir' (dir/name/
 * placements.csv, scalability.csv, validation-*.csv) and fit the model.
 * Errors (EF_E_INPUT) name the file, line and column: a missing file or
 * column, a number that is not finite and positive where it must be, a
 * validation run with no rows, fewer than two one-GPU rows to fit.
 * Free with gp_app_free (also after an error).
 */
int gp_app_load(gp_app *a, const char *dir, const char *name, ef_err *e);
void gp_app_free(gp_app *a);

/*
 * gp_step: step and sync time (seconds) of one micro-step at local batch
 * 'local' on the placement per_node[0..nn-1] (GPUs on each node used,
 * any order, each >= 1). Measured where the placement was measured,
 * fitted otherwise (see above).
 */
void gp_step(const gp_app *a, const int *per_node, int nn, double local,
             double *step, double *sync);

/* Fitted-model step time for nodes/replicas (exposed for tests). */
double gp_step_fitted(const gp_app *a, int nodes, int replicas,
                      double local, double *sync);

/* Statistical efficiency of global batch B in epoch e (clamped). */
double gp_gain(const gp_app *a, double batch, int epoch);

/* Epoch a job is in at 'progress' (0-based; nepoch-1 at most), and the
 * progress that completes training. */
int gp_epoch(const gp_app *a, double progress);
double gp_goal(const gp_app *a);

/*
 * gp_best: the configuration with the highest goodput on the placement
 * per_node[0..nn-1] in epoch e: among 50 global batch sizes spaced
 * geometrically from max(initial batch, replicas x smallest local batch)
 * to the largest batch, each run with the fewest accumulation steps that
 * keep the local batch within the measured range (integer local batch).
 * Ties: the smaller batch. Returns 0 with *out zeroed when no batch fits
 * (replicas x smallest local batch > largest batch), else 1.
 */
int gp_best(const gp_app *a, const int *per_node, int nn, int epoch,
            gp_config *out);

/*
 * gp_best_packed: gp_best on the packed placement of g GPUs on nodes of
 * 'gpn' GPUs (floor(g / gpn) full nodes and one with the rest).
 */
int gp_best_packed(const gp_app *a, int g, int gpn, int epoch,
                   gp_config *out);

#endif
