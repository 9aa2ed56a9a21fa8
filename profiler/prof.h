/*
 * prof.h: the profiler's CPU side: model presets, the performance model of
 * one data-parallel training step, its least-squares fit to measured
 * cells, and the filling of a throughput curve (1, 2, 4, ... GPUs) from
 * measured and modelled cells.
 *
 * THE MODEL. A job of global batch B on k GPUs (k a power of two) runs
 * steps of
 *
 *   time(B, k) = step_s + sample_s * B / k                (compute)
 *              + [k > 1] * ( 2 (k-1) / k * bytes * s_per_byte(k)
 *                          + steps(k) * hop_s )          (all-reduce)
 *
 * seconds, and its throughput is 1 / time iterations per second. 'bytes'
 * are the gradient bytes (parameters x bytes per parameter); s_per_byte(k)
 * is the inverse bus bandwidth of the slowest link the ring crosses: the
 * bandwidth term is the ring all-reduce's 2(k-1)/k x bytes. The
 * placement is the buddy rule's: k <= gpus_per_node GPUs sit inside one
 * node (intra-node bandwidth), a larger k takes k / gpus_per_node whole
 * nodes (inter-node bandwidth). hop_s is a latency per step of the
 * all-reduce: steps(k) = log2(k) by default (tree-like latency, as NCCL's
 * trees have for small messages), or 2(k-1) for a pure ring
 * (PROF_LAT_RING). benchmarks/results/profiler.md shows why log2: fitted
 * to 1..8 GPUs of the published A100 tables, the ring's linear latency
 * predicts the 16..64-GPU cells far worse.
 *
 * THE FIT. time is linear in the five parameters, so they are fitted by
 * non-negative least squares on relative time errors (each cell weighs
 * as much as any other), solved exactly by trying every subset of free
 * parameters. A parameter no measured cell can tell apart (inter-node
 * bandwidth when no cell spans two nodes, say) keeps the value the caller
 * gave, or the fit reports it as missing. Deterministic: no threads, a
 * fixed order.
 */
#ifndef EF_PROF_H
#define EF_PROF_H

#include "common/err.h"
#include "model/curve.h"

/* A model preset: public figures (sources in prof.c and README.md). */
typedef struct prof_preset {
    const char *name;
    double params;            /* number of trainable parameters */
    double flops_per_sample;  /* forward FLOPs per sample (2 per MAC) */
    const char *assumption;   /* input size the FLOPs assume */
    const char *source;       /* where the figures come from */
} prof_preset;

/* The presets, in name order; *n gets their count. */
const prof_preset *prof_presets(int *n);

/* The preset called 'name', or NULL. */
const prof_preset *prof_preset_find(const char *name);

/* The five parameters of the model, in seconds (see above). */
enum {
    PROF_P_STEP = 0,  /* step_s: fixed seconds per step */
    PROF_P_SAMPLE,    /* sample_s: compute seconds per sample, one GPU */
    PROF_P_INTRA,     /* s_per_byte inside a node (1 / bus bandwidth) */
    PROF_P_INTER,     /* s_per_byte across nodes */
    PROF_P_HOP,       /* hop_s: latency per all-reduce step */
    PROF_NPARAMS
};

/* Names of the parameters as written in the provenance JSON. */
const char *prof_param_name(int p);

/* How the all-reduce latency grows with k. */
typedef enum prof_latency {
    PROF_LAT_TREE = 0,  /* log2(k) steps */
    PROF_LAT_RING       /* 2(k-1) steps */
} prof_latency;

typedef struct prof_model {
    double p[PROF_NPARAMS];
    prof_latency latency;
    double bytes;        /* gradient bytes all-reduced per step */
    int gpus_per_node;   /* a power of two */
} prof_model;

/* Seconds per step of global batch 'batch' on 'gpus' GPUs. */
double prof_step_time(const prof_model *m, long batch, int gpus);

/* Iterations per second, 1 / prof_step_time. */
double prof_tput(const prof_model *m, long batch, int gpus);

/* One measured (or published) cell. */
typedef struct prof_obs {
    long batch;
    int gpus;
    double tput; /* iterations/s, > 0 */
} prof_obs;

/* How the fit went. */
typedef struct prof_fit_info {
    int fitted[PROF_NPARAMS];  /* 1 = fitted from cells */
    int given[PROF_NPARAMS];   /* 1 = not identifiable; caller's value kept */
    int missing[PROF_NPARAMS]; /* 1 = not identifiable and no value given */
    int nobs;
    double median_rel_err;     /* over the cells fitted, of throughput */
    double max_rel_err;
} prof_fit_info;

/*
 * prof_fit: fit the parameters of 'm' to 'n' cells. On entry m->bytes and
 * m->gpus_per_node are set; m->p[i] holds a value for every parameter
 * with given[i] = 1 (used only when the cells cannot determine it; pass
 * given = NULL for none). Every cell needs gpus a power of two, batch >=
 * gpus and tput > 0 (else EF_E_INPUT naming the cell). Parameters are
 * tried in the order sample, intra, inter, step, hop and fitted when
 * their column adds to the rank of those before. One the cells cannot
 * determine keeps its given value; with none, step and hop are taken as
 * 0, and a bandwidth is set to 0 and reported in info->missing
 * (prof_fill then refuses the cells that need it). Errors: no cells
 * (EF_E_INPUT).
 */
int prof_fit(prof_model *m, const int *given, const prof_obs *obs, int n,
             prof_fit_info *info, ef_err *e);

/* Relative error |model - obs| / obs of one cell's throughput. */
double prof_rel_err(const prof_model *m, const prof_obs *o);

/* Where a cell of a filled curve comes from. */
typedef enum prof_src {
    PROF_SRC_NONE = 0,     /* not runnable: more GPUs than samples */
    PROF_SRC_MEASURED,     /* measured (or taken from the input table) */
    PROF_SRC_MODELLED,     /* predicted by the fitted model */
    PROF_SRC_REFUSED       /* the fit was too poor or incomplete to fill it */
} prof_src;

const char *prof_src_name(prof_src s);

/* Per-cell spread of a measurement over repeats (all 0 when not measured). */
typedef struct prof_spread {
    int repeats;
    double min, max;     /* iterations/s */
    double rel_spread;   /* (max - min) / median */
    double busbw_gbps;   /* all-reduce bus bandwidth, Gbit/s (0: none) */
} prof_spread;

/* A filled curve for one model: rows of batch sizes, columns of 2^0 ..
 * 2^(nlevels-1) GPUs. */
typedef struct prof_curve {
    int nrows, nlevels;
    long *batch;                       /* [nrows], ascending */
    double (*cell)[CURVE_MAX_LEVELS];  /* it/s; 0 = empty */
    prof_src (*src)[CURVE_MAX_LEVELS];
    prof_spread (*spread)[CURVE_MAX_LEVELS];
    int accepted;        /* 1 if modelled cells were filled */
    double threshold;    /* the largest accepted max_rel_err */
    char reason[256];    /* why modelled cells were refused ("" if accepted) */
} prof_curve;

/*
 * prof_fill: build the curve of the batch sizes 'batch[0..nbatch)'
 * (ascending, distinct, > 0) over 1, 2, ..., max_gpus GPUs (a power of two
 * <= 2^(CURVE_MAX_LEVELS-1)). Cells present in 'obs' (matched by batch and
 * gpus) are measured; a cell with more GPUs than samples is not runnable;
 * every other cell is modelled from the fitted 'm' when the fit is
 * accepted: info->max_rel_err <= threshold and no parameter the cell needs
 * is missing. Otherwise the cell is refused (left empty) and c->reason
 * says why. 'spread' (parallel to obs, may be NULL) is copied into the
 * measured cells. Free with prof_curve_free.
 */
void prof_fill(prof_curve *c, const prof_model *m, const prof_fit_info *info,
               double threshold, const long *batch, int nbatch,
               int max_gpus, const prof_obs *obs, const prof_spread *spread,
               int nobs);

void prof_curve_free(prof_curve *c);

/* Write the curve as the planner's CSV (curve.h): header
 * "global_batch_size,1,2,4,...", empty cells for anything not measured or
 * modelled. Atomic (temp + rename). */
int prof_write_csv(const prof_curve *c, const char *path, ef_err *e);

/* Write the curve as the planner's curve JSON (curve.h): {"model": ...,
 * "rows": [{"batch_size": B, "throughput": {"1": x, "2": null, ...}}]},
 * null for anything not measured or modelled. Atomic. */
int prof_write_curve_json(const prof_curve *c, const char *model,
                          const char *path, ef_err *e);

/* What the provenance JSON says about where the numbers come from. */
typedef struct prof_provenance {
    const char *model;          /* model name */
    int preset;                 /* 1 if the figures are a preset's */
    double params, flops_per_sample, bytes_per_param;
    const char *origin;         /* "measured" or "fit to FILE" */
    const char *gpu_name;       /* NULL when not measured */
    int driver_version, runtime_version, nccl_version, gpus_visible;
    int repeats, warmup, steps; /* 0 when not measured */
} prof_provenance;

/*
 * prof_write_json: the provenance file (keys sorted, atomic):
 *   {"cells": [{"batch_size", "gpus", "iterations_per_second" (null when
 *     empty), "source", and for measured cells "repeats", "min", "max",
 *     "relative_spread", "busbw_gbps", "model_relative_error"}],
 *    "fit": {"accepted", "threshold", "median_relative_error",
 *            "max_relative_error", "reason", "parameters": {...},
 *            "fitted": [...], "given": [...], "missing": [...]},
 *    "format": "efplan-profile", "gpu": {...} | null, "measurement": {...},
 *    "model": {...}, "origin", "gpus_per_node", "gradient_bytes",
 *    "version": 1}
 */
int prof_write_json(const prof_curve *c, const prof_model *m,
                    const prof_fit_info *info, const prof_provenance *pv,
                    const char *path, ef_err *e);

/* Median of v[0..n) (n >= 1); v is reordered. */
double prof_median(double *v, int n);

/* The model's parameters before a fit: gradient 'bytes' (> 0),
 * 'gpus_per_node' (a power of two) and the latency form, every parameter
 * 0, and the figures the caller knows, marked in given[] for prof_fit
 * (used where the cells cannot determine them): the intra- and inter-node
 * bus bandwidths in Gbit/s (<= 0: unknown) and the all-reduce latency per
 * step in microseconds (< 0: unknown). */
void prof_model_init(prof_model *m, int given[PROF_NPARAMS], double bytes,
                     int gpus_per_node, prof_latency latency,
                     double intra_gbps, double inter_gbps, double latency_us);

/* The number of cells of 'c' refused (PROF_SRC_REFUSED). */
int prof_curve_refused(const prof_curve *c);

/* Error statistics of a set of cells (relative errors of throughput). */
typedef struct prof_err_stats {
    int n;          /* cells */
    double median;  /* 0 when n == 0 */
    double worst;   /* the largest; 0 when n == 0 */
} prof_err_stats;

/* The statistics of v[0..n) (n >= 0); v is sorted ascending. */
void prof_err_stats_of(double *v, int n, prof_err_stats *s);

/*
 * A curve table (curve.h) as a fit to it and its comparison use it:
 * 'cells' are its published cells that a fit can use (measured, a
 * positive throughput, no more GPUs than samples), rows in table order,
 * GPU counts ascending within a row; those with gpus <= fit_gpus are
 * fitted, the others are predicted.
 */
typedef struct prof_table {
    prof_obs *cells;   /* [ncells] */
    int *fitted;       /* [ncells]: 1 fitted, 0 predicted */
    int ncells;
    prof_obs *fit;     /* [nfit]: the fitted cells, in order (prof_fit) */
    int nfit;
    long *batch;       /* [nbatch]: the table's batch sizes (prof_fill) */
    int nbatch;
    int widest;        /* GPUs of the table's widest column (a column
                          counts even if its cells are empty); 0: none */
} prof_table;

/* Fill 't' from curve model 'cm' with the cells of up to 'fit_gpus' GPUs
 * fitted (INT_MAX: all). Free with prof_table_free. */
void prof_table_of(prof_table *t, const curve_model *cm, int fit_gpus);
void prof_table_free(prof_table *t);

/* Fitted model 'm' against every cell of a table: per cell, in the
 * table's order, the model's throughput and its relative error
 * (prof_rel_err); the statistics over the fitted and over the predicted
 * cells. */
typedef struct prof_table_errs {
    double *modelled;  /* [ncells], it/s */
    double *rel_err;   /* [ncells] */
    prof_err_stats fitted, predicted;
} prof_table_errs;

/* Compare 'm' with the cells of 't' into 'x' (free with
 * prof_table_errs_free). */
void prof_table_errors(const prof_table *t, const prof_model *m,
                       prof_table_errs *x);
void prof_table_errs_free(prof_table_errs *x);

#endif
