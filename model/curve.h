/*
 * curve.h: throughput curves, one per (model, global batch size).
 *
 * A curve set is a directory with one file per model, either
 *   - CSV in the ElasticFlow artifact layout: header
 *     "global_batch_size,1,2,4,...", one row per global batch size, cells
 *     = iterations per second of the whole job at that GPU count; or
 *   - JSON: {"model": "bert", "rows": [{"batch_size": 64,
 *            "throughput": {"1": 6.03, "2": 8.64, "64": null}}]}
 *     ("model" is optional and must equal the file name's stem).
 * The model name is the file name without its extension. Empty cells,
 * "nan", 0 and JSON null mean "not runnable at that size"; any other
 * cell is at least CURVE_MIN_TPUT (a slower one is an input error, so
 * that no accepted curve makes a job's work stop shrinking) and at most
 * CURVE_MAX_TPUT (a faster one is an input error, so that a cell times
 * any time or batch size efplan keeps stays finite).
 *
 * THE USABLE-SIZE RULE (every planner, solver and simulator module uses
 * curve_usable() and nothing else to decide which GPU counts a job may get):
 *
 *   A GPU count g is usable for a (model, batch) iff g is a power of two,
 *   its cell is runnable, and its throughput is strictly higher than the
 *   throughput of every smaller runnable count.
 *
 * So the usable sizes form a ladder of strictly increasing throughput that
 * ends at the curve's peak: efplan never plans a size that is slower than
 * (or as fast as) a smaller one, never plans past the peak, and skips holes
 * and dips (T4 ncf: 1 and 4 GPUs are usable, 2 is not). A curve whose row
 * has no runnable cell is an input error.
 */
#ifndef EF_CURVE_H
#define EF_CURVE_H

#include "common/err.h"

/* GPU counts are 2^0 .. 2^(CURVE_MAX_LEVELS-1). */
#define CURVE_MAX_LEVELS 16

/* The slowest runnable cell, iterations/s (one iteration in about 11.6
 * days); the README's input section states it. */
#define CURVE_MIN_TPUT 1e-6

/* The fastest cell, iterations/s: a cell times any time efplan keeps
 * (at most 1e15 s) times any batch size (below 2^31) stays far below
 * DBL_MAX, and one cell over another at most 1e15. The README's input
 * section states it. */
#define CURVE_MAX_TPUT 1e9

typedef struct curve_row {
    long batch;                         /* global batch size */
    double cell[CURVE_MAX_LEVELS];      /* it/s at 2^i GPUs; 0 = not runnable */
    int measured[CURVE_MAX_LEVELS];     /* 1 if the file has a column 2^i */
    int nusable;                        /* the ladder of usable sizes */
    int usable_gpus[CURVE_MAX_LEVELS];
    double usable_tput[CURVE_MAX_LEVELS];
    double utput[CURVE_MAX_LEVELS];     /* it/s at 2^i GPUs if usable, else 0
                                         * (curve_tput's table) */
    int fit_g[31];                      /* the largest usable size <= 2^l
                                         * (0: none), so for f > 0 free GPUs
                                         * fit_g[ilog2 f] (the planner's
                                         * fit by table) */
    double fit_t[31];                   /* its it/s (0: none) */
    long line;                          /* source line (CSV) or row index (JSON) */
} curve_row;

typedef struct curve_model {
    char *name;
    char *path;
    curve_row *rows; /* sorted by batch */
    int nrows;
} curve_model;

typedef struct curve_set {
    char *dir;
    curve_model *models; /* sorted by name */
    int nmodels;
} curve_set;

/*
 * curve_usable: the usable sizes of 'row' that are <= max_gpus (pass a
 * large number for no cap), ascending, written to gpus[] and tput[] (each
 * CURVE_MAX_LEVELS long; either may be NULL). Returns how many.
 */
int curve_usable(const curve_row *row, int max_gpus, int *gpus, double *tput);

/* Fill row's ladder from its cells: nusable, usable_gpus, usable_tput
 * (curve_usable with no cap) and the tables utput, fit_g and fit_t.
 * Returns nusable. Every row is made ready this way once its cells are
 * set. */
int curve_row_ready(curve_row *row);

/* Throughput of 'row' at a usable size g; 0 if g is not usable. A table
 * lookup (utput): the planner's promise checks call it per piece. */
static inline double curve_tput(const curve_row *row, int g)
{
    /* usable sizes are powers of two below 2^CURVE_MAX_LEVELS */
    if (g <= 0 || (g & (g - 1)) != 0 || g >= (1 << CURVE_MAX_LEVELS))
        return 0.0;
    return row->utput[__builtin_ctz((unsigned)g)];
}

/* Largest usable size <= max_gpus, or 0 if none. */
int curve_max_usable(const curve_row *row, int max_gpus);

/* Load every *.csv and *.json file of 'dir' (other files, e.g. LICENSE,
 * are ignored). Errors: missing directory, no curve file, two files for
 * one model, and anything curve_parse_* rejects. */
int curve_set_load(curve_set *cs, const char *dir, ef_err *e);
void curve_set_free(curve_set *cs);

/* Load curves named on the command line: a directory path, or the name
 * of a bundled set ("A100", "T4") under ef_datadir()/curves/. */
int curve_set_load_arg(curve_set *cs, const char *arg, ef_err *e);

/* Parse one model from a buffer (used by curve_set_load and the fuzzer).
 * 'path' appears in messages; 'model' is the model name. */
int curve_parse_csv(curve_model *m, const char *model, const char *path,
                    const char *buf, size_t len, ef_err *e);
int curve_parse_json(curve_model *m, const char *model, const char *path,
                     const char *buf, size_t len, ef_err *e);
void curve_model_free(curve_model *m);

/* Lookups; NULL when absent. */
const curve_model *curve_find_model(const curve_set *cs, const char *name);
const curve_row *curve_find_row(const curve_model *m, long batch);

/* Write "a, b, c" (the known model names, or the batch sizes of a model)
 * into dst, for error messages. */
const char *curve_list_models(const curve_set *cs, char *dst, size_t len);
const char *curve_list_batches(const curve_model *m, char *dst, size_t len);

#endif
