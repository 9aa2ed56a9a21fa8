/*
 * jobs.h: the job queue: what users want trained and by when.
 *
 * Two formats:
 *   - the ElasticFlow/ITP trace CSV, columns read by name in either
 *     spelling: job_id, submit_time|submission_time,
 *     iteration|num_iteration, model_name, ddl|deadline, batch_size, and
 *     optional num_gpu, duration, best_effort (1 = no deadline). Other
 *     columns (real_iteration, ...) are ignored. An empty deadline cell
 *     also means best-effort.
 *   - JSON: {"jobs": [{"id", "model", "batch_size", "iterations",
 *     "submit_time", "deadline" (null or absent: best-effort),
 *     "iterations_done", "num_gpu", "duration", "placement":
 *     [{"node": n, "gpus": [i, ...]}] (where the job runs now), and how
 *     to run it: "command", "workdir", "env", "checkpoint_signal",
 *     "grace_seconds" (job_run below)}]} with optional
 *     "format": "efplan-jobs" and "version": 1 at the top. Times are
 *     integer seconds or ISO-8601 strings with a zone (converted to Unix
 *     seconds; keep every time of one queue on one clock).
 *
 * Elastic batch (optional, both formats): "batch_sizes" (JSON array; CSV
 * column of sizes joined by ';', e.g. "64;128;256", empty = none) lists
 * the global batch sizes a job accepts; the work may be given as
 * "samples" or "epochs" x "dataset_size" instead of iterations (one form
 * only), with "samples_done" for progress. In JSON "batch_size" may then
 * be left out (the smallest accepted size is taken).
 *
 * num_gpu and duration (what the user once requested, and how long it ran)
 * are kept for reports; the planner never uses the requested GPU count.
 */
#ifndef EF_JOBS_H
#define EF_JOBS_H

#include <stdint.h>

#include "curve.h"
#include "err.h"

/* Fields of a job, for error positions. */
typedef enum job_field {
    JF_ID, JF_SUBMIT, JF_ITER, JF_MODEL, JF_DEADLINE, JF_BATCH,
    JF_NUMGPU, JF_DURATION, JF_BEST, JF_DONE,
    /* elastic batch (see below) */
    JF_BATCHES, JF_SAMPLES, JF_EPOCHS, JF_DATASET, JF_SAMPLES_DONE,
    JF_NFIELDS
} job_field;

/* How to run a job, for efplan apply (executor/): JSON keys "command"
 * (argv array of strings), "workdir" (string), "env" (object of string
 * values), "checkpoint_signal" (a name such as "SIGUSR1" or "USR1", or a
 * number; not KILL or STOP) and "grace_seconds" (0..86400). All optional;
 * the planner ignores them. */
typedef struct job_run {
    char **argv;      /* argc strings then NULL; NULL when no "command" */
    int argc;
    char *workdir;    /* NULL when absent */
    char **env;       /* nenv "KEY=VALUE" strings, sorted by key */
    int nenv;
    int signal;       /* checkpoint signal number; 0 when absent (SIGTERM) */
    int grace;        /* seconds from the signal to SIGKILL; -1 when absent */
} job_run;

typedef struct job {
    char *id;
    char *model;
    long batch;
    int64_t iterations;       /* total work at this batch size, > 0 */
    int64_t iterations_done;  /* progress already made, < iterations */
    int64_t submit;           /* release time, seconds */
    int64_t deadline;         /* valid when has_deadline */
    int has_deadline;         /* 0 = best-effort */
    int num_gpu;              /* requested GPUs (0 if unknown); never planned on */
    int64_t duration;         /* requested run time (0 if unknown) */
    const curve_row *curve;   /* set by queue_resolve */
    /* where the job runs now (JSON "placement"), for a re-plan that
     * continues from reality: ncur (node, gpu) pairs, gpu local to node */
    int ncur;
    int *cur_node;
    int *cur_gpu;
    /* Elastic batch: the global batch sizes the job accepts (ascending,
     * 'batch' among them; nbatch == 0 when it gives none) and their curve
     * rows (set by queue_resolve). A job with two or more is elastic when
     * a run enables it (plan/simulate --elastic-batch, policy saxena);
     * otherwise it runs at 'batch'. */
    int nbatch;
    long *batches;
    const curve_row **rows;
    /* Work in samples: declared ('in_samples': samples, or epochs x
     * dataset_size), else iterations x batch. 'iterations' is then
     * ceil(samples / batch) and 'iterations_done' floor(samples_done /
     * batch), so fixed-batch consumers keep working. */
    int in_samples;
    int64_t samples, samples_done;
    job_run run;              /* how to run it (JSON only) */
    /* where the job came from: CSV line and columns, or JSON index */
    long line;
    int col[JF_NFIELDS];
    int index;
} job;

typedef struct job_queue {
    char *path;
    int is_json;
    job *jobs;       /* in file order */
    int n;
    int has_num_gpu;  /* the input carried requested GPU counts */
    int has_duration;
    char *colname[JF_NFIELDS]; /* CSV column names as spelled in the file */
} job_queue;

/* Load a queue from a .json or .csv file (other extensions: sniffed).
 * Errors name file:line:col (CSV, JSON syntax) or the JSON path. An empty
 * queue ("jobs": [], or a CSV header line without rows) is valid: q->n == 0
 * and q->jobs may be NULL. */
int queue_load(job_queue *q, const char *path, ef_err *e);

/* Parse from a buffer (used by queue_load and the fuzzer). */
int queue_parse_csv(job_queue *q, const char *path, const char *buf,
                    size_t len, ef_err *e);
int queue_parse_json(job_queue *q, const char *path, const char *buf,
                     size_t len, ef_err *e);

/* Point every job at its curve row. Fails on an unknown model (listing
 * the known ones) or a batch size without a row (listing the known rows). */
int queue_resolve(job_queue *q, const curve_set *cs, ef_err *e);

/* Write where field 'f' of job i came from into dst:
 * "file:line:col: column" (CSV) or "file: jobs[i].key" (JSON). */
const char *queue_where(const job_queue *q, int i, job_field f, char *dst,
                        size_t len);

/* The name of signal number 'sig' as apply accepts it ("SIGTERM"), or
 * NULL for a number without a name. */
const char *job_signal_name(int sig);

void queue_free(job_queue *q);

/* 1 iff job j may change its batch size (accepts two or more). */
int job_elastic(const job *j);

/* Work left of job j in samples (elastic accounting): samples -
 * samples_done when declared in samples, else (iterations -
 * iterations_done) x batch. */
double job_samples_left(const job *j);

#endif
