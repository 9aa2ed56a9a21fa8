/*
 * published.h: the deadline ratios the ElasticFlow paper publishes
 * (pub_*), so that efplan compare can print them beside its own numbers.
 * Source: the paper's figures as stored in its public artifact's plotting
 * scripts (Fig. 8(a), 8(b), 9), with the artifact's cluster sizes.
 */
#ifndef EF_PUBLISHED_H
#define EF_PUBLISHED_H

/* The published ratio of 'policy' (efplan's policy names: ef, ef-noac,
 * edf, edf-ac, and later baselines) on the trace whose file name stem is
 * 'trace' (e.g. "cluster01") with 'gpus' GPUs; -1 when none. 'figure'
 * (if not NULL) gets the figure's name. */
double pub_ratio(const char *trace, int gpus, const char *policy,
                 const char **figure);

/* The artifact's cluster for a trace of Fig. 8 (e.g. "n64g8" for
 * cluster01); NULL when the trace is not one of them. */
const char *pub_cluster(const char *trace);

#endif
