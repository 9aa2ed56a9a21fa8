/*
 * prof_measure.h: measure the synthetic data-parallel step (prof_gpu.h)
 * on 1, 2, 4, ... GPUs of this machine for a model and a list of global
 * batch sizes: warm-up steps, then repeats of timed steps; the cell is the
 * median throughput over the repeats, with its spread, and the bus
 * bandwidth of the gradient all-reduce timed on its own.
 */
#ifndef EF_PROF_MEASURE_H
#define EF_PROF_MEASURE_H

#include "profiler/prof.h"
#include "profiler/prof_gpu.h"

typedef struct prof_measure_opts {
    double flops_per_sample;  /* forward FLOPs; a step does 3x per sample */
    double grad_bytes;        /* bytes all-reduced per step */
    const long *batch;        /* global batch sizes */
    int nbatch;
    int max_gpus;             /* measure k = 1, 2, 4, ... <= this */
    int repeats, warmup, steps;
    /* called after each cell (may be NULL); for progress output */
    void (*progress)(void *arg, long batch, int gpus, double tput,
                     double rel_spread);
    void *arg;
} prof_measure_opts;

typedef struct prof_measured {
    prof_obs *obs;         /* n cells, in (gpus, batch) order */
    prof_spread *spread;   /* parallel to obs */
    int n;
    int max_gpus;          /* the largest k measured */
    prof_gpu_env env;
} prof_measured;

/*
 * prof_measure: run the measurement. k goes up to the largest power of
 * two <= min(o->max_gpus, GPUs visible); a batch smaller than k is
 * skipped. Returns PROF_GPU_OK with 'out' filled (free with
 * prof_measured_free), or the status of the first failing GPU call with
 * its message in e (what was measured before stays in 'out').
 */
prof_gpu_status prof_measure(const prof_measure_opts *o, prof_measured *out,
                             ef_err *e);

void prof_measured_free(prof_measured *m);

/* Median, min, max and relative spread of v[0..n) (n >= 1; reordered). */
void prof_stats(double *v, int n, prof_spread *s, double *median);

#endif
