/*
 * simio.h: the simulation result file (format efplan-sim, version 1), read
 * and written by one module (simio.c) through one field table per object:
 * the result, its cluster and a timeline point.
 *
 * sim_result is the file's value, member for member; sim_write_json
 * (sim.h) turns a finished simulation into one and writes it.
 * sim_result_parse / sim_result_load read a result back, checking every
 * member (types, ranges, unknown keys; batch_changes comes with
 * "elastic_batch": true and only with it).
 *
 * "point_us" is the policy's decision time per scheduling point, in
 * microseconds (common/lat.h: p50, p99, max, mean): like wall_seconds it
 * varies from run to run, the only members that do.
 *
 * Ownership: a sim_result read from a file keeps its strings and its
 * timeline in its arena; free it with sim_result_free.
 */
#ifndef EF_SIMIO_H
#define EF_SIMIO_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/jfield.h"
#include "simulator/sim.h"

typedef struct sim_result_point {
    double efficiency;
    int gpus_used;
    int met;                  /* deadline jobs met up to t */
    int running;
    int64_t t;
} sim_result_point;

typedef struct sim_result_lat {
    double max, mean, p50, p99;
} sim_result_lat;

typedef struct sim_result_cluster {
    int gpus_per_node, nodes, total_gpus;
} sim_result_cluster;

typedef struct sim_result {
    int admitted;
    int at_risk;        /* admitted jobs the policy flagged at risk */
    int batch_changes;        /* elastic batch runs */
    int best_effort_jobs;
    double best_effort_mean_jct;   /* NaN: none (null) */
    sim_result_cluster cluster;
    int deadline_jobs;
    double deadline_ratio;
    int elastic_batch;        /* batch_changes is there */
    double gpu_hours, idle_gpu_hours_after_completion;
    int jobs;
    double mean_efficiency;
    double mean_jct;          /* NaN: none (null) */
    int met, migrations, missed;
    const char *overhead;
    double overhead_gpu_hours;
    sim_result_lat point_us;  /* decision time per point (lat.h) */
    int points;
    const char *policy;
    int preemptions, rejected, rescales, slot_seconds, solver_fallbacks;
    /* restarts per job (sim_metrics; absent in older results: 0) */
    double restarts_mean, restarts_p99;
    int restarts_max;
    /* the physics, when not the model's (absent: none) */
    double speed_lo, speed_hi, restart_scale;
    int learn;
    int64_t tick_seconds;
    int ntimeline;
    sim_result_point *timeline;
    const char *trace;
    int unfinished;
    double wall_seconds;
    jf_arena arena;
} sim_result;

/* The result file of finished simulation s of 'trace' (borrows s's
 * strings and 'trace': use it while they live). Free with
 * sim_result_free. */
void sim_result_from(sim_result *r, const sim *s, const char *trace);

/* The file text of r (heap; *len its length when len is not NULL): keys
 * sorted, one line per member and per timeline point. */
char *sim_result_json(const sim_result *r, size_t *len);

/* Read a result from a buffer ('path' names it in messages). EF_E_INPUT
 * with file and JSON path on any problem; then *r is empty. */
int sim_result_parse(sim_result *r, const char *path, const char *buf,
                     size_t len, ef_err *e);
int sim_result_load(sim_result *r, const char *path, ef_err *e);

/* 1 if a and b hold the same value, member for member. */
int sim_result_equal(const sim_result *a, const sim_result *b);

void sim_result_free(sim_result *r);

#endif
