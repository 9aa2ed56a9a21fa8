/*
 * jobs.h: the job queue: what users want trained and by when.
 *
 * Two formats, read (and JSON written) through one field table,
 * job_fields (jobs.c; the README's jobs table lists it):
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

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/err.h"
#include "model/curve.h"
#include "model/placement.h"

/* The fields of a job, in the order of the field table (job_fields
 * below), which is the order the readers read them in. */
typedef enum job_field {
    JF_ID, JF_MODEL, JF_BATCH, JF_ITER, JF_SUBMIT, JF_BEST, JF_DEADLINE,
    JF_DONE, JF_NUMGPU, JF_DURATION, JF_PLACEMENT,
    /* elastic batch (see below) */
    JF_BATCHES, JF_SAMPLES, JF_EPOCHS, JF_DATASET, JF_SAMPLES_DONE,
    /* how to run it (job_run below) */
    JF_COMMAND, JF_WORKDIR, JF_ENV, JF_SIGNAL, JF_GRACE,
    /* a re-plan from reality (efplan serve's loop) */
    JF_PROMISED, JF_OWED, JF_RESTARTS,
    /* how many processes a launch starts (job_run.per_gpu) */
    JF_PROCESSES,
    JF_NFIELDS
} job_field;

/* The kind of value a field holds. */
typedef enum job_ftype {
    JFT_ID,     /* a job id (job_id_check: min..max bytes of UTF-8
                 * without control characters); JSON also an integer >= 0
                 * (kept as its decimal text) */
    JFT_NAME,   /* a string of min..max bytes without control characters */
    JFT_INT,    /* an integer min..max */
    JFT_TIME,   /* seconds min..max; JSON also an ISO-8601 string with a
                 * zone */
    JFT_SIZES,  /* 1..nmax distinct integers min..max: JSON array, CSV
                 * joined by ';' */
    JFT_PLACE,  /* [{"node": n, "gpus": [i, ...]}], GPU indices min..max,
                 * at most nmax GPUs */
    JFT_ARGV,   /* 1..nmax strings of min..max bytes */
    JFT_PATH,   /* a string of min..max bytes */
    JFT_ENV,    /* an object of strings of min..max bytes keyed by
                 * variable names */
    JFT_SIGNAL, /* a signal name ("SIGUSR1", "USR1") or number min..max,
                 * not KILL or STOP */
    JFT_WORD    /* one of the strings 'words' (NULL-terminated), stored
                 * as its index; 'absent' is the index when not given */
} job_ftype;

/* Whether a field must be given, in one format. */
typedef enum job_req {
    JR_NO,      /* optional (CSV: an empty cell is not given) */
    JR_YES,     /* required (CSV: the column, and a non-empty cell) */
    JR_UNLESS,  /* required unless a field of 'unless' is given (CSV: the
                 * column is required unless one of theirs exists) */
    JR_COLUMN   /* CSV: the column is required, a cell may be empty */
} job_req;

/* The C type of the job member a field is stored in (off). */
typedef enum job_ctype {
    JC_NONE,    /* not stored as such (see the readers) */
    JC_INT, JC_LONG, JC_I64, JC_STR
} job_ctype;

/* job_fspec.flags */
#define JFF_JSON    1u  /* a key of a JSON job */
#define JFF_CSV     2u  /* a CSV column */
#define JFF_NULL    4u  /* JSON null means not given */
#define JFF_ZERO    8u  /* 0 passes the reader (check_jobs rejects it with
                         * its own message) although min is 1 */
#define JFF_NULLOUT 16u /* written as null when not given */

/* One field of the efplan-jobs format: the JSON key and CSV column names,
 * the value's type and bounds, whether it is required, and what the docs
 * say about it. Both readers, the writer and the README's field table
 * (checked by tests/unit/test_jobs.c) are driven by these. */
typedef struct job_fspec {
    job_field f;          /* its index in job_fields */
    const char *key;      /* JSON key */
    const char *csv[2];   /* CSV column names (spellings); NULL: none */
    job_ftype type;
    int64_t min, max;     /* the bounds the type says */
    int64_t nmax;         /* SIZES, ARGV, PLACE: the most items */
    int64_t absent;       /* INT, SIGNAL: the value that means not given */
    job_req req_json, req_csv;
    unsigned unless;      /* JR_UNLESS: bits 1u << job_field */
    const char *what;     /* JR_UNLESS, a CSV row without the column: */
    const char *alt;      /* what is missing, its alternatives in words */
    unsigned flags;       /* JFF_* */
    const char *expect;   /* CSV messages: what a valid cell is */
    const char *dflt;     /* docs: what leaving it out means */
    const char *doc;      /* docs: what it is, one line */
    job_ctype ctype;      /* the job member it is stored in, at off */
    size_t off;
    const char *const *words; /* WORD: the strings it may be */
} job_fspec;

/* The most bytes of one command argument or one env value: what efplan
 * apply passes on as one string (a longer one is an input error). */
#define JOB_RUN_STR_MAX 4095

/* The field table, indexed by job_field. */
extern const job_fspec job_fields[JF_NFIELDS];

/*
 * job_id_check: the job id rule, the one every reader applies (CSV and
 * JSON queues, state.json, submit's --job, the plan file): 1 to
 * JOB_ID_MAX bytes of valid UTF-8 without control characters (C0, DEL,
 * C1: ef_is_control), so that an id is safe to print on a terminal and to
 * write back as JSON. Returns NULL when s[0..n) is a valid id, else what
 * is wrong: "empty", "too long", "not valid UTF-8" or "contains a control
 * character"; messages add "(expected " JOB_ID_RULE ")". An integer id
 * of a JSON queue is its decimal text, which follows the rule.
 */
#define JOB_ID_MAX 255
#define JOB_ID_RULE "1 to 255 bytes of UTF-8 text without control characters"
const char *job_id_check(const char *s, size_t n);

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
    int max_restarts; /* relaunches after failures (efplan serve's loop);
                         -1 when absent: the service's --max-restarts */
    int per_gpu;      /* "processes": 0 "per_node" (the command runs once
                         per node and starts the node's processes itself,
                         as torchrun does), 1 "per_gpu" (the executor
                         starts one process per GPU) */
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
     * continues from reality (cur.n == 0: not running) */
    placement cur;
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
    int64_t epochs, dataset_size; /* as given; 0 when the work is not in
                                   * epochs (samples = their product) */
    job_run run;              /* how to run it (JSON only) */
    /* 1: admitted by an earlier decision (JSON "promised"; efplan serve's
     * re-plan from reality sets it). The planner admits such a job at
     * its release without deciding it again: it may be flagged at risk,
     * never rejected or demoted (plan.h). */
    int promised;
    /* seconds of reconfiguration overhead it still has to pay before it
     * makes progress (JSON "overhead_owed"; a re-plan from reality) */
    int64_t owed;
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

/* 1 iff field f of job j is given (so the writer writes it): the work
 * and its progress in the form the job gave them (iterations and
 * iterations_done, samples and samples_done, or epochs, dataset_size
 * and samples_done), id, model, batch_size and submit_time always, an
 * integer when it is not the field's 'absent' value, a string when set,
 * a list when not empty. best_effort (CSV only) never: deadline says it. */
int job_has(const job *j, job_field f);

/* Load a queue from a .json or .csv file (other extensions: sniffed).
 * Errors name file:line:col (CSV, JSON syntax) or the JSON path. An empty
 * queue ("jobs": [], or a CSV header line without rows) is valid: q->n == 0
 * and q->jobs may be NULL. */
int queue_load(job_queue *q, const char *path, ef_err *e);

/* What "now" means in the JSON time strings of queues parsed after this
 * call (submit_time, deadline: "now+8h", ef_ht_parse; a JSON job without
 * submit_time is submitted at it): Unix seconds, or -1 (the default) to
 * refuse relative times (and require submit_time). The CLI sets it from --now
 * or the wall clock; efplan serve refuses them (its queue is read and
 * written over days: a reference taken once would go stale). One value
 * per process. */
void queue_set_now(int64_t now);

/* Parse from a buffer (used by queue_load and the fuzzer). */
int queue_parse_csv(job_queue *q, const char *path, const char *buf,
                    size_t len, ef_err *e);
int queue_parse_json(job_queue *q, const char *path, const char *buf,
                     size_t len, ef_err *e);
/* queue_from_json: the same from a value already parsed (borrowed; the
 * service's request bodies and stored rows): no text on the way. */
int queue_from_json(job_queue *q, const char *path, const json_t *root,
                    ef_err *e);

/*
 * job_to_json: job j as a JSON object of the efplan-jobs format (a new
 * reference, for the caller to decref): every field that job_has, by
 * its key, with times as integer seconds, the deadline as null when
 * there is none, env as an object, checkpoint_signal by name (a number
 * when it has none) and placement in the order given, consecutive GPUs
 * of one node in one {"node", "gpus"} entry. Reading it
 * back gives the same values. Keys come out sorted when dumped with
 * JSON_SORT_KEYS (queue_write_json does).
 */
json_t *job_to_json(const job *j);

/*
 * queue_write_json: jobs[0..n-1] as an efplan-jobs v1 file: {"format":
 * "efplan-jobs", "jobs": [job_to_json of each], "version": 1} plus
 * "apply": the report efplan apply adds to its state file, when 'apply'
 * is not NULL (borrowed; the readers accept it and ignore it). Returns
 * heap text (free it) with one-space indents, keys sorted and a final
 * newline: the same jobs give the same bytes.
 */
char *queue_write_json(const job *jobs, int n, const json_t *apply);

/* Record that job j has done 'done' iterations at j->batch (what a
 * progress file counts): its progress becomes the larger of what it was
 * and that, kept short of the whole work (a job in a queue is never
 * finished). Work in samples: samples_done becomes at least done x
 * batch, and iterations_done follows it. */
void job_advance(job *j, int64_t done);

/* The most seconds a job's work left may take at the slowest usable
 * size of its curve (about 31,700 years): a bound on the work/throughput
 * ratio, so that no accepted job keeps a planner or simulator loop busy
 * without end, and every slot's progress is far above the rounding of
 * the work left (the README's input section states it). */
#define JOB_MAX_ALONE_SECONDS 1e12

/* Point every job at its curve row. Fails on an unknown model (listing
 * the known ones), a batch size without a row (listing the known rows),
 * or work left that takes more than JOB_MAX_ALONE_SECONDS at the slowest
 * usable size of its row (an elastic job: in samples, at each accepted
 * batch size), naming the field that gives the work. */
int queue_resolve(job_queue *q, const curve_set *cs, ef_err *e);

/* Write where field 'f' of job i came from into dst:
 * "file:line:col: column" (CSV) or "file: jobs[i].key" (JSON). */
const char *queue_where(const job_queue *q, int i, job_field f, char *dst,
                        size_t len);

/* The name of signal number 'sig' as apply accepts it ("SIGTERM"), or
 * NULL for a number without a name. */
const char *job_signal_name(int sig);

void queue_free(job_queue *q);

/* job_copy: *dst becomes a deep copy of *src (its own strings, batch
 * lists, placement, command and env; curve rows shared, as they belong
 * to the curve set). Free it as queue_free frees a job (a queue of it). */
void job_copy(job *dst, const job *src);

/* job_free: free what job j owns (as queue_free frees each job of a
 * queue) and empty it in place; j itself is the caller's. */
void job_free(job *j);

/* 1 iff job j may change its batch size (accepts two or more). */
int job_elastic(const job *j);

/* Work left of job j in samples (elastic accounting): samples -
 * samples_done when declared in samples, else (iterations -
 * iterations_done) x batch. */
double job_samples_left(const job *j);

#endif
