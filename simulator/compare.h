/*
 * compare.h: a grid of simulations, traces x policies (cmp_*), and the
 * one owner of its result: the efplan-compare file (read and written here,
 * through one field table) and the Markdown tables "efplan compare"
 * prints.
 *
 * The grid runs its cells in parallel (OpenMP: OMP_NUM_THREADS threads);
 * each cell is an independent sim_run whose result lands at its own index,
 * so the result does not depend on the thread count (wall seconds aside).
 *
 * The efplan-compare v1 file (keys sorted, one cell per line):
 *   {"cells": [{"admitted", "cluster", "deadline_jobs", "deadline_ratio",
 *     "gpus", "met", "migrations", "policy", "published" (null: none),
 *     "rejected", "rescales", "solver_fallbacks", "trace",
 *     "wall_seconds"}, ...],
 *    "format": "efplan-compare", "overhead", "slot_seconds", "version": 1}
 * The cells are the grid, trace-major: every trace's row of policies in
 * turn.
 */
#ifndef EF_COMPARE_H
#define EF_COMPARE_H

#include "common/err.h"
#include "common/util.h"
#include "model/cluster.h"
#include "model/jobs.h"
#include "model/overhead.h"
#include "simulator/sim.h"

/* Room for a trace's file stem (cmp_stem), terminator included: a longer
 * stem is cut to CMP_STEM_LEN - 1 bytes. */
#define CMP_STEM_LEN 128

/* One cell of the grid: one trace simulated with one policy. */
typedef struct cmp_cell {
    char *trace;          /* the trace's path as given (owned) */
    char *policy;         /* the policy's name (owned) */
    char *cluster;        /* the cluster's name, "n16g8" form (owned) */
    int gpus;             /* the cluster's GPUs */
    int admitted, rejected, deadline_jobs, met;
    int migrations, rescales, solver_fallbacks;
    double deadline_ratio;
    double published;     /* the ElasticFlow paper's ratio; < 0: none */
    double wall_seconds;  /* varies between runs */
} cmp_cell;

/* A grid's result. */
typedef struct cmp_result {
    int ntraces, npolicies;
    cmp_cell *cells;      /* [ntraces * npolicies]: cells[i * npolicies + p] */
    int slot;             /* seconds */
    ovh_mode overhead;
    /* the run's other settings, for the tables' caption only: not in the
     * file (cmp_parse leaves them 0) */
    int cap_reference, surplus_reference, baselines_reference;
} cmp_result;

/* What a grid simulates: every trace with every policy. */
typedef struct cmp_grid {
    int ntraces, npolicies;            /* >= 1 each */
    const char *const *traces;         /* [ntraces] paths, for the result */
    const job_queue *queues;           /* [ntraces], resolved (queue_resolve) */
    const cluster *clusters;           /* [ntraces]: trace i's cluster */
    const sim_policy *const *policies; /* [npolicies] */
    sim_opts opts;                     /* the same for every cell */
    /* NULL, or called after each finished cell with the count done so
     * far and the total, one call at a time (from any thread); for a
     * progress line: it must not touch the grid */
    void (*progress)(void *arg, int done, int total);
    void *progress_arg;
} cmp_grid;

/* The file name stem of 'path' (no directory, no last extension) into
 * dst[0..len); returns dst. The name "efplan compare" matches traces by
 * (--cluster-for) and looks the published numbers up with. */
const char *cmp_stem(const char *path, char *dst, size_t len);

/*
 * cmp_run: simulate every cell of 'g' (in parallel) into 'r' (free with
 * cmp_result_free), with each cell's published ratio (pub_ratio of the
 * trace's stem, the cluster's GPUs and the policy). Returns EF_OK, or
 * EF_ERR with 'e' the error of the first failing cell in grid order (then
 * 'r' is left empty). The same inputs give the same result whatever the
 * thread count, wall seconds aside.
 */
int cmp_run(const cmp_grid *g, cmp_result *r, ef_err *e);

/* Free what 'r' owns and zero it. */
void cmp_result_free(cmp_result *r);

/*
 * cmp_tables: append to 'out' the Markdown text "efplan compare" prints:
 * a caption with the settings; a table of deadline ratios (rows traces,
 * columns policies, the published number in parentheses where there is
 * one); a table of wall seconds with admitted / rejected jobs; and a line
 * naming every cell with solver fallbacks, if any.
 */
void cmp_tables(const cmp_result *r, ef_buf *out);

/* Append the efplan-compare file of 'r' (see above) to 'out'. */
void cmp_json(const cmp_result *r, ef_buf *out);

/* Write the efplan-compare file of 'r' to 'path' atomically. Errors: the
 * write (EF_E_INTERNAL, naming the path). */
int cmp_write_json(const cmp_result *r, const char *path, ef_err *e);

/*
 * cmp_svg: draw the deadline ratios of 'r' as an SVG bar chart, appended
 * to 'out': a group of bars per trace (named by its file stem,
 * with its cluster), a bar per policy in the palette's colours (common/
 * svg.h) with its ratio on top, the published ratio as a black mark
 * where there is one; a ratio axis 0..1 with ticks, a legend. The same
 * result gives the same bytes (wall seconds are not drawn).
 */
void cmp_svg(const cmp_result *r, ef_buf *out);

/*
 * cmp_parse: read an efplan-compare file from buf[0..len) ('file' names it
 * in messages) into 'r' (free with cmp_result_free; left empty on error).
 * Every key is required and no other is allowed; the cells must form a
 * grid (trace-major: each row one trace, cluster and GPU count, each
 * column one policy); where several shapes fit, the one with fewest
 * policies is taken. Errors (EF_E_INPUT): JSON syntax (file:line:col), a
 * wrong format or version, a missing, unknown or out-of-range key, no
 * cells, cells that are not a grid.
 */
int cmp_parse(cmp_result *r, const char *file, const char *buf, size_t len,
              ef_err *e);

/* cmp_parse of the file at 'path'. Errors also: the file cannot be read
 * (EF_E_INPUT). */
int cmp_read(cmp_result *r, const char *path, ef_err *e);

#endif
