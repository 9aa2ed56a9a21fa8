/*
 * cluster.h: the GPU cluster a plan runs on.
 *
 * Three spellings, all giving nodes x gpus_per_node:
 *   - the shorthand "n16g8" (16 nodes of 8 GPUs);
 *   - the ElasticFlow artifact spec CSV (header
 *     "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,mem_p_node"
 *     and one row; nodes = num_switch x num_node_p_switch);
 *   - JSON {"nodes": N, "gpus_per_node": G, "switches": S (optional)}.
 * gpus_per_node must be a power of two (buddy placement), at most 64;
 * nodes at least 1; at most 1,048,576 GPUs in all.
 */
#ifndef EF_CLUSTER_H
#define EF_CLUSTER_H

#include <stddef.h>

#include "common/err.h"

#define CLUSTER_MAX_GPUS (1 << 20)

typedef struct cluster {
    char name[64];      /* "n16g8" form, for output */
    int switches;
    int nodes;          /* total nodes */
    int gpus_per_node;
    int total_gpus;
    int cpus_per_node;  /* informative; 0 when unknown */
    long mem_per_node;  /* informative (GB); 0 when unknown */
} cluster;

/* Read a cluster from an argument: a shorthand "nNgG", or the path of a
 * .csv or .json spec. A bare name like "n16g8" that is also a file in the
 * current directory is read as the file. */
int cluster_from_arg(cluster *c, const char *arg, ef_err *e);

/* Parse a spec from a buffer; 'path' appears in messages. */
int cluster_parse_csv(cluster *c, const char *path, const char *buf,
                      size_t len, ef_err *e);
int cluster_parse_json(cluster *c, const char *path, const char *buf,
                       size_t len, ef_err *e);

/* Fill a cluster from counts, checking the limits above. 'where' names
 * the source in messages. */
int cluster_init(cluster *c, int switches, long nodes, long gpus_per_node,
                 const char *where, ef_err *e);

#endif
