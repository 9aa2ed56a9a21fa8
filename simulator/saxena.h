/*
 * saxena.h: the allocation step of the saxena policy (sax_*), after Saxena
 * et al., "Effective Elastic Scaling of Deep Learning Workloads" (MASCOTS
 * 2020): at each scheduling point a dynamic program over jobs and GPUs
 * picks one configuration (batch size, GPU count) per running job so that
 * the total value is as large as possible with at most 'cap' GPUs.
 *
 * The policy (pol_saxena.c) gives each job one option per usable GPU
 * count g >= its smallest configuration, valued at its best throughput
 * at g over its accepted batch sizes, in samples/s, divided by its
 * throughput at its smallest configuration (so a job at its minimum
 * counts 1 and models with different sample rates are comparable; the
 * sum is the cluster's total speed-up). The DP itself is generic.
 */
#ifndef EF_SAXENA_H
#define EF_SAXENA_H

#include <stddef.h>

#include "model/curve.h"

/* One job's options: GPU counts (ascending, distinct) and their values. */
typedef struct sax_item {
    int nopt;                       /* >= 1 */
    int gpus[CURVE_MAX_LEVELS];
    double value[CURVE_MAX_LEVELS];
} sax_item;

/* Scratch reused between calls (zero-initialise; sax_ws_free). */
typedef struct sax_ws {
    double *f, *g;
    unsigned char *ch;
    size_t nf, nch;
} sax_ws;

/*
 * sax_dp: choose exactly one option per item, using at most 'cap' GPUs in
 * all, to maximise the sum of values. Exact: a knapsack DP over the GPUs
 * beyond every item's smallest option, O(n x (cap - sum of smallest) x
 * options). Writes choice[i] (an option index per item) and returns the
 * best sum; returns -1 and leaves choice alone when even the smallest
 * options exceed cap. Ties: items are decided from the last to the first,
 * and among equal sums the option with fewer GPUs is kept.
 */
double sax_dp(const sax_item *it, int n, int cap, int *choice, sax_ws *ws);

void sax_ws_free(sax_ws *ws);

#endif
