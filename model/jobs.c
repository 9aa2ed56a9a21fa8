/* jobs.c: the efplan-jobs format (JSON and CSV job queues): its field
 * table, the readers and checks it drives, and the JSON writer (see
 * jobs.h). */
#include "model/jobs.h"

#include <ctype.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include "common/csv.h"
#include "common/htime.h"
#include "common/jsonin.h"
#include "common/util.h"

/* ---- the field table ---------------------------------------------------- */

#define JB(f) (1u << (f))
#define AT(ct, member) .ctype = (ct), .off = offsetof(job, member)

_Static_assert(JF_NFIELDS <= 32, "job_field bits fit an unsigned");

/* In the order the readers read the fields; the JSON keys in this order
 * are what an unknown-key message lists. */
/* The values of "processes", by job_run.per_gpu. */
static const char *const job_processes_words[] = {"per_node", "per_gpu",
                                                  NULL};

const job_fspec job_fields[JF_NFIELDS] = {
    [JF_ID] = {
        .f = JF_ID, .key = "id", .csv = {"job_id", NULL}, .type = JFT_ID,
        .min = 1, .max = JOB_ID_MAX, .req_json = JR_YES, .req_csv = JR_YES,
        .flags = JFF_JSON | JFF_CSV,
        .expect = JOB_ID_RULE,
        .doc = "the job's name, unique in the queue", AT(JC_STR, id)},
    [JF_MODEL] = {
        .f = JF_MODEL, .key = "model", .csv = {"model_name", NULL},
        .type = JFT_NAME, .min = 1, .max = 255, .req_json = JR_YES,
        .req_csv = JR_YES, .flags = JFF_JSON | JFF_CSV,
        .expect = "a model name",
        .doc = "its curve: a model of the --curves set", AT(JC_STR, model)},
    [JF_BATCH] = {
        .f = JF_BATCH, .key = "batch_size", .csv = {"batch_size", NULL},
        .type = JFT_INT, .min = 1, .max = INT32_MAX, .req_json = JR_UNLESS,
        .req_csv = JR_YES, .unless = JB(JF_BATCHES),
        .flags = JFF_JSON | JFF_CSV,
        .expect = "a positive integer",
        .dflt = "JSON: the smallest of batch_sizes",
        .doc = "the global batch size it runs at (elastic batch off) and "
               "counts iterations at", AT(JC_LONG, batch)},
    [JF_ITER] = {
        .f = JF_ITER, .key = "iterations",
        .csv = {"iteration", "num_iteration"}, .type = JFT_INT, .min = 1,
        .max = EF_MAX_I64, .req_json = JR_UNLESS, .req_csv = JR_UNLESS,
        .unless = JB(JF_SAMPLES) | JB(JF_EPOCHS) | JB(JF_DATASET),
        .what = "work", .alt = "samples, or epochs with dataset_size",
        .flags = JFF_JSON | JFF_CSV | JFF_ZERO,
        .expect = "a positive integer",
        .dflt = "the work is in samples",
        .doc = "the work: training iterations at batch_size",
        AT(JC_I64, iterations)},
    [JF_SUBMIT] = {
        .f = JF_SUBMIT, .key = "submit_time",
        .csv = {"submit_time", "submission_time"}, .type = JFT_TIME,
        .min = 0, .max = EF_MAX_I64, .req_json = JR_NO, .req_csv = JR_YES,
        .flags = JFF_JSON | JFF_CSV, .expect = "a time in seconds >= 0",
        .dflt = "JSON: now (--now, else the wall clock)",
        .doc = "when it is submitted: it starts no earlier",
        AT(JC_I64, submit)},
    [JF_BEST] = {
        .f = JF_BEST, .key = "best_effort", .csv = {"best_effort", NULL},
        .type = JFT_INT, .min = 0, .max = 1, .flags = JFF_CSV,
        .expect = "0 or 1", .dflt = "0",
        .doc = "1: no deadline (the deadline cell is not read)",
        .ctype = JC_NONE},
    [JF_DEADLINE] = {
        .f = JF_DEADLINE, .key = "deadline", .csv = {"ddl", "deadline"},
        .type = JFT_TIME, .min = 0, .max = EF_MAX_I64, .req_csv = JR_COLUMN,
        .flags = JFF_JSON | JFF_CSV | JFF_NULL | JFF_NULLOUT,
        .expect = "a time in seconds, or empty for best-effort",
        .dflt = "best-effort (also null, or an empty cell)",
        .doc = "when it must be done, after submit_time",
        AT(JC_I64, deadline)},
    [JF_DONE] = {
        .f = JF_DONE, .key = "iterations_done",
        .csv = {"iterations_done", NULL}, .type = JFT_INT, .min = 0,
        .max = EF_MAX_I64, .flags = JFF_JSON | JFF_CSV,
        .expect = "iterations >= 0", .dflt = "0",
        .doc = "progress already made, fewer than iterations",
        AT(JC_I64, iterations_done)},
    [JF_NUMGPU] = {
        .f = JF_NUMGPU, .key = "num_gpu", .csv = {"num_gpu", NULL},
        .type = JFT_INT, .min = 0, .max = 1 << 20,
        .flags = JFF_JSON | JFF_CSV, .expect = "a GPU count >= 0",
        .dflt = "0 (unknown)",
        .doc = "GPUs once requested: for reports, never planned on",
        AT(JC_INT, num_gpu)},
    [JF_DURATION] = {
        .f = JF_DURATION, .key = "duration", .csv = {"duration", NULL},
        .type = JFT_INT, .min = 0, .max = EF_MAX_I64,
        .flags = JFF_JSON | JFF_CSV, .expect = "seconds >= 0",
        .dflt = "0 (unknown)", .doc = "how long it once ran: for reports",
        AT(JC_I64, duration)},
    [JF_PLACEMENT] = {
        .f = JF_PLACEMENT, .key = "placement", .type = JFT_PLACE, .min = 0,
        .max = 63, .nmax = 1 << 20, .flags = JFF_JSON | JFF_NULL,
        .dflt = "not running (also null)",
        .doc = "where it runs now (node and GPU indices from 0): a re-plan "
               "that keeps its size keeps it there", .ctype = JC_NONE},
    [JF_BATCHES] = {
        .f = JF_BATCHES, .key = "batch_sizes", .csv = {"batch_sizes", NULL},
        .type = JFT_SIZES, .min = 1, .max = INT32_MAX, .nmax = 64,
        .flags = JFF_JSON | JFF_CSV | JFF_NULL,
        .dflt = "batch_size only (also null, or an empty cell)",
        .doc = "the global batch sizes it accepts (elastic batch), "
               "batch_size among them", .ctype = JC_NONE},
    [JF_SAMPLES] = {
        .f = JF_SAMPLES, .key = "samples", .csv = {"samples", NULL},
        .type = JFT_INT, .min = 1, .max = EF_MAX_I64,
        .flags = JFF_JSON | JFF_CSV,
        .expect = "a positive number of samples",
        .dflt = "the work is in iterations or epochs",
        .doc = "the work in samples, instead of iterations",
        AT(JC_I64, samples)},
    [JF_EPOCHS] = {
        .f = JF_EPOCHS, .key = "epochs", .csv = {"epochs", NULL},
        .type = JFT_INT, .min = 1, .max = 1000000,
        .flags = JFF_JSON | JFF_CSV,
        .expect = "a positive number of epochs",
        .dflt = "the work is in iterations or samples",
        .doc = "the work as epochs x dataset_size samples",
        AT(JC_I64, epochs)},
    [JF_DATASET] = {
        .f = JF_DATASET, .key = "dataset_size",
        .csv = {"dataset_size", NULL}, .type = JFT_INT, .min = 1,
        .max = EF_MAX_I64, .flags = JFF_JSON | JFF_CSV,
        .expect = "a positive number of samples per epoch",
        .dflt = "(only with epochs)",
        .doc = "samples per epoch, with epochs", AT(JC_I64, dataset_size)},
    [JF_SAMPLES_DONE] = {
        .f = JF_SAMPLES_DONE, .key = "samples_done",
        .csv = {"samples_done", NULL}, .type = JFT_INT, .min = 0,
        .max = EF_MAX_I64, .flags = JFF_JSON | JFF_CSV,
        .expect = "samples >= 0", .dflt = "0",
        .doc = "progress when the work is in samples",
        AT(JC_I64, samples_done)},
    [JF_COMMAND] = {
        .f = JF_COMMAND, .key = "command", .type = JFT_ARGV, .min = 1,
        .max = JOB_RUN_STR_MAX, .nmax = 4096, .flags = JFF_JSON,
        .dflt = "none: apply cannot run it",
        .doc = "what efplan apply runs: the program and its arguments (no "
               "shell)", .ctype = JC_NONE},
    [JF_WORKDIR] = {
        .f = JF_WORKDIR, .key = "workdir", .type = JFT_PATH, .min = 1,
        .max = 4095, .flags = JFF_JSON, .dflt = "apply's directory",
        .doc = "the directory it runs in", AT(JC_STR, run.workdir)},
    [JF_ENV] = {
        .f = JF_ENV, .key = "env", .type = JFT_ENV, .min = 0,
        .max = JOB_RUN_STR_MAX, .flags = JFF_JSON, .dflt = "none",
        .doc = "variables added to its environment (not the ones apply "
               "sets)", .ctype = JC_NONE},
    [JF_SIGNAL] = {
        .f = JF_SIGNAL, .key = "checkpoint_signal", .type = JFT_SIGNAL,
        .min = 1, .max = 64, .absent = 0, .flags = JFF_JSON,
        .dflt = "SIGTERM",
        .doc = "what apply sends it to checkpoint and exit",
        AT(JC_INT, run.signal)},
    [JF_GRACE] = {
        .f = JF_GRACE, .key = "grace_seconds", .type = JFT_INT, .min = 0,
        .max = 86400, .absent = -1, .flags = JFF_JSON, .dflt = "30",
        .doc = "seconds from the checkpoint signal to SIGKILL",
        AT(JC_INT, run.grace)},
    [JF_RESTARTS] = {
        .f = JF_RESTARTS, .key = "max_restarts", .type = JFT_INT, .min = 0,
        .max = 100, .absent = -1, .flags = JFF_JSON,
        .dflt = "the service's --max-restarts (2)",
        .doc = "relaunches after a failed attempt, then it is failed (efplan "
               "serve --backend)", AT(JC_INT, run.max_restarts)},
    [JF_PROMISED] = {
        .f = JF_PROMISED, .key = "promised", .type = JFT_INT, .min = 0,
        .max = 1, .absent = 0, .flags = JFF_JSON, .dflt = "0",
        .doc = "1: admitted by an earlier decision; a re-plan keeps it "
               "admitted (at risk if it cannot make it), never rejects it",
        AT(JC_INT, promised)},
    [JF_OWED] = {
        .f = JF_OWED, .key = "overhead_owed", .type = JFT_INT, .min = 0,
        .max = 86400, .absent = 0, .flags = JFF_JSON, .dflt = "0",
        .doc = "seconds of reconfiguration it still pays before it makes "
               "progress (a re-plan from reality)",
        AT(JC_I64, owed)},
    [JF_PROCESSES] = {
        .f = JF_PROCESSES, .key = "processes", .type = JFT_WORD, .min = 0,
        .max = 1, .absent = 0, .flags = JFF_JSON, .dflt = "`per_node`",
        .doc = "`per_node`: the command runs once per node and starts "
               "that node's processes (torchrun); `per_gpu`: efplan starts "
               "one process per GPU, each with its `RANK` and `LOCAL_RANK`",
        AT(JC_INT, run.per_gpu), .words = job_processes_words},
};

static int64_t get_int(const job *j, const job_fspec *s)
{
    const char *p = (const char *)j + s->off;
    switch (s->ctype) {
    case JC_INT: return *(const int *)(const void *)p;
    case JC_LONG: return *(const long *)(const void *)p;
    case JC_I64: return *(const int64_t *)(const void *)p;
    default: ef_panic("field %s is not an integer member", s->key);
    }
}

static void set_int(job *j, const job_fspec *s, int64_t v)
{
    char *p = (char *)j + s->off;
    switch (s->ctype) {
    case JC_INT: *(int *)(void *)p = (int)v; break;
    case JC_LONG: *(long *)(void *)p = (long)v; break;
    case JC_I64: *(int64_t *)(void *)p = v; break;
    case JC_NONE: break; /* read, used by a rule, not kept (best_effort) */
    case JC_STR: ef_panic("field %s is not an integer member", s->key);
    }
}

static char **str_member(job *j, const job_fspec *s)
{
    ef_assert(s->ctype == JC_STR);
    return (char **)(void *)((char *)j + s->off);
}

static const char *get_str(const job *j, const job_fspec *s)
{
    return *str_member((job *)j, s);
}

const char *job_id_check(const char *s, size_t n)
{
    if (n == 0)
        return "empty";
    if (n > JOB_ID_MAX)
        return "too long";
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int l = ef_utf8_char(s + i, n - i, &cp);
        if (l == 0)
            return "not valid UTF-8";
        if (ef_is_control(cp))
            return "contains a control character";
        i += (size_t)l;
    }
    return NULL;
}

int job_has(const job *j, job_field f)
{
    const job_fspec *s = &job_fields[f];
    switch (f) {
    case JF_ID: case JF_MODEL: case JF_BATCH: case JF_SUBMIT:
        return 1;
    case JF_BEST:
        return 0;
    case JF_DEADLINE:
        return j->has_deadline;
    case JF_ITER: case JF_DONE:
        return !j->in_samples;
    case JF_SAMPLES:
        return j->in_samples && j->epochs == 0;
    case JF_SAMPLES_DONE:
        return j->in_samples;
    case JF_PLACEMENT:
        return j->cur.n > 0;
    case JF_BATCHES:
        return j->nbatch > 0;
    case JF_COMMAND:
        return j->run.argv != NULL;
    case JF_ENV:
        return j->run.nenv > 0;
    default:
        break;
    }
    if (s->ctype == JC_STR)
        return get_str(j, s) != NULL;
    return get_int(j, s) != s->absent;
}

/* ---- the queue ---------------------------------------------------------- */

void queue_free(job_queue *q)
{
    for (int i = 0; i < q->n; i++) {
        free(q->jobs[i].id);
        free(q->jobs[i].model);
        placement_free(&q->jobs[i].cur);
        free(q->jobs[i].batches);
        free(q->jobs[i].rows);
        job_run *r = &q->jobs[i].run;
        for (int k = 0; r->argv && k < r->argc; k++)
            free(r->argv[k]);
        free(r->argv);
        for (int k = 0; k < r->nenv; k++)
            free(r->env[k]);
        free(r->env);
        free(r->workdir);
    }
    free(q->jobs);
    free(q->path);
    for (int f = 0; f < JF_NFIELDS; f++)
        free(q->colname[f]);
    memset(q, 0, sizeof *q);
}

static char **copy_strs(char *const *v, int n)
{
    if (!v)
        return NULL;
    char **c = ef_calloc((size_t)n + 1, sizeof *c);
    for (int k = 0; k < n; k++)
        c[k] = v[k] ? ef_strdup(v[k]) : NULL;
    return c;
}

void job_free(job *j)
{
    job_queue one = {0};
    one.jobs = ef_malloc(sizeof *one.jobs);
    one.jobs[0] = *j;
    one.n = 1;
    queue_free(&one);
    memset(j, 0, sizeof *j);
}

void job_copy(job *dst, const job *src)
{
    *dst = *src;
    dst->id = src->id ? ef_strdup(src->id) : NULL;
    dst->model = src->model ? ef_strdup(src->model) : NULL;
    memset(&dst->cur, 0, sizeof dst->cur);
    placement_copy(&dst->cur, &src->cur);
    dst->batches = NULL;
    dst->rows = NULL;
    if (src->nbatch > 0 && src->batches) {
        dst->batches = ef_malloc((size_t)src->nbatch * sizeof *dst->batches);
        memcpy(dst->batches, src->batches,
               (size_t)src->nbatch * sizeof *dst->batches);
    }
    if (src->nbatch > 0 && src->rows) {
        dst->rows = ef_malloc((size_t)src->nbatch * sizeof *dst->rows);
        memcpy(dst->rows, src->rows, (size_t)src->nbatch * sizeof *dst->rows);
    }
    dst->run.argv = copy_strs(src->run.argv, src->run.argc);
    dst->run.env = copy_strs(src->run.env, src->run.nenv);
    dst->run.workdir = src->run.workdir ? ef_strdup(src->run.workdir) : NULL;
}

const char *queue_where(const job_queue *q, int i, job_field f, char *dst,
                        size_t len)
{
    const job *j = &q->jobs[i];
    if (q->is_json)
        snprintf(dst, len, "%s: jobs[%d].%s", q->path, j->index,
                 job_fields[f].key);
    else
        snprintf(dst, len, "%s:%ld:%d: %s", q->path, j->line,
                 j->col[f] > 0 ? j->col[f] : 1,
                 q->colname[f] ? q->colname[f] : job_fields[f].key);
    return dst;
}

int job_elastic(const job *j)
{
    return j->nbatch >= 2;
}

double job_samples_left(const job *j)
{
    if (j->in_samples)
        return (double)(j->samples - j->samples_done);
    return (double)(j->iterations - j->iterations_done) * (double)j->batch;
}

void job_advance(job *j, int64_t done)
{
    if (j->in_samples) {
        int64_t s = done < j->iterations ? done * j->batch : j->samples;
        if (s > j->samples_done)
            j->samples_done = s < j->samples ? s : j->samples - 1;
        j->iterations_done = j->samples_done / j->batch;
        return;
    }
    if (done >= j->iterations)
        done = j->iterations - 1;
    if (done > j->iterations_done)
        j->iterations_done = done;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

/* What both readers do once job i's fields are read: keep the integers
 * (has: which fields were given, v: their values), then the elastic-batch
 * and work-form rules. */
static int job_finish(job_queue *q, int i, unsigned has, const int64_t *v,
                      ef_err *e)
{
    job *j = &q->jobs[i];
    for (int f = 0; f < JF_NFIELDS; f++)
        if ((has & JB(f)) && (job_fields[f].type == JFT_INT ||
                              job_fields[f].type == JFT_TIME))
            set_int(j, &job_fields[f], v[f]);
    j->has_deadline = (has & JB(JF_DEADLINE)) != 0;
    int has_batch = (has & JB(JF_BATCH)) != 0;
    int has_iter = (has & JB(JF_ITER)) != 0;
    int has_samples = (has & JB(JF_SAMPLES)) != 0;
    int has_epochs = (has & JB(JF_EPOCHS)) != 0;
    int has_dataset = (has & JB(JF_DATASET)) != 0;
    char w[600];
    if (j->nbatch > 0) {
        int found = 0;
        for (int k = 0; k < j->nbatch; k++)
            found |= j->batches[k] == j->batch;
        if (has_batch && !found) {
            char list[512];
            size_t n = 0;
            list[0] = 0;
            for (int k = 0; k < j->nbatch && n + 24 < sizeof list; k++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%ld",
                                      k ? ", " : "", j->batches[k]);
            return ef_fail(e, EF_E_INPUT, "%s: batch size %ld is not among "
                           "batch_sizes (%s; expected one of them, the size "
                           "the work in iterations is counted at)",
                           queue_where(q, i, JF_BATCH, w, sizeof w), j->batch,
                           list);
        }
        qsort(j->batches, (size_t)j->nbatch, sizeof *j->batches, cmp_long);
        if (!has_batch)
            j->batch = j->batches[0];
    }
    if (has_epochs != has_dataset)
        return ef_fail(e, EF_E_INPUT, "%s: %s without %s (the work in samples "
                       "is epochs x dataset_size)",
                       queue_where(q, i, has_epochs ? JF_EPOCHS : JF_DATASET,
                                   w, sizeof w),
                       has_epochs ? "epochs" : "dataset_size",
                       has_epochs ? "dataset_size" : "epochs");
    if (has_iter + has_samples + has_epochs > 1)
        return ef_fail(e, EF_E_INPUT, "%s: the work is given twice (%s and "
                       "%s; expected one of iterations, samples, or epochs "
                       "with dataset_size)",
                       queue_where(q, i, has_epochs ? JF_EPOCHS : JF_SAMPLES,
                                   w, sizeof w),
                       has_iter ? "iterations" : "samples",
                       has_epochs ? "epochs" : "samples");
    if (has_epochs) {
        if (j->epochs > EF_MAX_I64 / j->dataset_size)
            return ef_fail(e, EF_E_INPUT, "%s: epochs x dataset_size is too "
                           "large (expected at most %lld samples)",
                           queue_where(q, i, JF_DATASET, w, sizeof w),
                           (long long)EF_MAX_I64);
        j->samples = j->epochs * j->dataset_size;
        has_samples = 1;
    }
    j->in_samples = has_samples;
    if (has_samples && (has & JB(JF_DONE)))
        return ef_fail(e, EF_E_INPUT, "%s: iterations_done with the work in "
                       "samples (expected samples_done)",
                       queue_where(q, i, JF_DONE, w, sizeof w));
    if (!has_samples && (has & JB(JF_SAMPLES_DONE)))
        return ef_fail(e, EF_E_INPUT, "%s: samples_done with the work in "
                       "iterations (expected iterations_done)",
                       queue_where(q, i, JF_SAMPLES_DONE, w, sizeof w));
    if (has_samples) {
        if (j->samples_done >= j->samples)
            return ef_fail(e, EF_E_INPUT, "%s: %lld samples done of %lld (a "
                           "finished job does not belong in the queue; "
                           "expected fewer than samples)",
                           queue_where(q, i, JF_SAMPLES_DONE, w, sizeof w),
                           (long long)j->samples_done, (long long)j->samples);
        j->iterations = (j->samples + j->batch - 1) / j->batch;
        j->iterations_done = j->samples_done / j->batch;
    }
    return EF_OK;
}

static job *push_job(job_queue *q, int *cap)
{
    if (q->n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        q->jobs = ef_realloc(q->jobs, (size_t)*cap * sizeof *q->jobs);
    }
    job *j = &q->jobs[q->n++];
    memset(j, 0, sizeof *j);
    for (int f = 0; f < JF_NFIELDS; f++)
        if (job_fields[f].absent != 0)
            set_int(j, &job_fields[f], job_fields[f].absent);
    return j;
}

/* Checks shared by both formats, run once all jobs are read. */
static int check_jobs(job_queue *q, ef_err *e)
{
    char w[600];
    for (int i = 0; i < q->n; i++) {
        job *j = &q->jobs[i];
        if (j->iterations == 0)
            return ef_fail(e, EF_E_INPUT, "%s: zero iterations (expected a "
                           "positive number of training iterations)",
                           queue_where(q, i, JF_ITER, w, sizeof w));
        if (j->iterations_done >= j->iterations)
            return ef_fail(e, EF_E_INPUT, "%s: %" PRId64 " iterations done of "
                           "%" PRId64 " (a finished job does not belong in the "
                           "queue; expected fewer than iterations)",
                           queue_where(q, i, JF_DONE, w, sizeof w),
                           j->iterations_done, j->iterations);
        if (j->has_deadline && j->deadline <= j->submit) {
            /* as a person reads them (ef_ht_fmt): dates on the wall
             * clock, else the seconds the file holds */
            char d[32], s[32];
            ef_ht_zone z = ef_ht_is_wall(j->submit) ? EF_HT_UTC
                                                    : EF_HT_EPOCH;
            return ef_fail(e, EF_E_INPUT, "%s: deadline %s is %s submit "
                           "time %s (expected a later time)",
                           queue_where(q, i, JF_DEADLINE, w, sizeof w),
                           ef_ht_fmt(j->deadline, z, d, sizeof d),
                           j->deadline == j->submit ? "equal to" : "before",
                           ef_ht_fmt(j->submit, z, s, sizeof s));
        }
    }
    /* Duplicate ids: sort indices by id, compare neighbours. */
    if (q->n < 2)
        return EF_OK;
    int *ix = ef_malloc((size_t)q->n * sizeof *ix);
    for (int i = 0; i < q->n; i++)
        ix[i] = i;
    /* Simple merge sort on ids (stable, so the first occurrence comes
     * first among equals). */
    int *tmp = ef_malloc((size_t)q->n * sizeof *tmp);
    for (int width = 1; width < q->n; width *= 2) {
        for (int lo = 0; lo < q->n; lo += 2 * width) {
            int mid = lo + width < q->n ? lo + width : q->n;
            int hi = lo + 2 * width < q->n ? lo + 2 * width : q->n;
            int a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                tmp[k++] = strcmp(q->jobs[ix[a]].id, q->jobs[ix[b]].id) <= 0
                               ? ix[a++] : ix[b++];
            while (a < mid)
                tmp[k++] = ix[a++];
            while (b < hi)
                tmp[k++] = ix[b++];
        }
        memcpy(ix, tmp, (size_t)q->n * sizeof *ix);
    }
    free(tmp);
    int rc = EF_OK;
    int dup_first = -1, dup_second = -1;
    for (int k = 1; k < q->n; k++)
        if (strcmp(q->jobs[ix[k - 1]].id, q->jobs[ix[k]].id) == 0 &&
            (dup_second < 0 || ix[k] < dup_second)) {
            dup_first = ix[k - 1];
            dup_second = ix[k];
        }
    if (dup_second >= 0) {
        char qid[128];
        const job *f = &q->jobs[dup_first];
        if (q->is_json)
            rc = ef_fail(e, EF_E_INPUT, "%s: duplicate job id \"%s\" (also "
                         "jobs[%d])", queue_where(q, dup_second, JF_ID, w,
                                                  sizeof w),
                         ef_quote(f->id, qid, sizeof qid), f->index);
        else
            rc = ef_fail(e, EF_E_INPUT, "%s: duplicate job id \"%s\" (first "
                         "on line %ld)", queue_where(q, dup_second, JF_ID, w,
                                                     sizeof w),
                         ef_quote(f->id, qid, sizeof qid), f->line);
    }
    free(ix);
    return rc;
}

/* ---- signals and the environment (for efplan apply) ---------------------- */

static const struct {
    const char *name;
    int sig;
} signals[] = {
    {"SIGHUP", SIGHUP}, {"SIGINT", SIGINT}, {"SIGQUIT", SIGQUIT},
    {"SIGUSR1", SIGUSR1}, {"SIGUSR2", SIGUSR2}, {"SIGALRM", SIGALRM},
    {"SIGTERM", SIGTERM}, {"SIGCONT", SIGCONT}, {"SIGWINCH", SIGWINCH},
};
#define NSIGNALS ((int)(sizeof signals / sizeof signals[0]))

const char *job_signal_name(int sig)
{
    for (int i = 0; i < NSIGNALS; i++)
        if (signals[i].sig == sig)
            return signals[i].name;
    return NULL;
}

/* Variables efplan apply sets itself: a job may not set them in "env". */
static const char *const reserved_env[] = {
    "NNODES", "NODE_RANK", "NPROC_PER_NODE", "WORLD_SIZE", "MASTER_ADDR",
    "MASTER_PORT", "CUDA_VISIBLE_DEVICES", "EFPLAN_JOB_ID",
    "EFPLAN_PROGRESS_FILE", "EFPLAN_ATTEMPT", "EFPLAN_ITERATIONS",
    "EFPLAN_BATCH_SIZE"};

static int cmp_env(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- CSV ---------------------------------------------------------------- */

/* Columns of the artifact traces we know and ignore. */
static const char *const csv_ignored[] = {"real_iteration", "real_duration"};

static int csv_int(const job_queue *q, const csv_row *row, int fi,
                   job_field f, int64_t min, int64_t max, int64_t *out,
                   const char *expect, ef_err *e)
{
    char qv[128];
    const char *s = row->f[fi];
    ef_numerr ne = ef_parse_i64(s, min, max, out);
    if (ne == EF_NUM_OK)
        return EF_OK;
    const char *what;
    if (ne == EF_NUM_EMPTY)
        return ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: empty (expected %s)",
                       q->path, row->line, row->col[fi], q->colname[f], expect);
    if (ne == EF_NUM_RANGE) {
        /* Say which side of the range was missed, and give the bound
         * when the number is too large (it is not obvious). */
        int64_t tmp;
        int fits = ef_parse_i64(s, INT64_MIN, INT64_MAX, &tmp) == EF_NUM_OK;
        if (fits && tmp < 0 && min >= 0)
            what = "negative";
        else if (fits && tmp < min)
            what = "too small";
        else if (max <= 1)
            what = "too large"; /* the expectation ("0 or 1") says it all */
        else
            return ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: \"%s\" is too large "
                           "(expected %s, at most %" PRId64 ")", q->path,
                           row->line, row->col[fi], q->colname[f],
                           ef_quote(s, qv, sizeof qv), expect, max);
        return ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: \"%s\" is %s (expected "
                       "%s)", q->path, row->line, row->col[fi], q->colname[f],
                       ef_quote(s, qv, sizeof qv), what, expect);
    }
    double d;
    ef_numerr de = ef_parse_double(s, &d);
    if (de == EF_NUM_NOTFINITE)
        what = "not finite";
    else if (de == EF_NUM_OK)
        what = "not an integer";
    else
        what = "not a number";
    return ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: \"%s\" is %s (expected %s)",
                   q->path, row->line, row->col[fi], q->colname[f],
                   ef_quote(s, qv, sizeof qv), what, expect);
}

/* A string cell of field s: an id by the id rule (job_id_check), a name
 * of min..max bytes without control characters. */
static int csv_str(const job_queue *q, job *j, const job_fspec *s,
                   const csv_row *row, int fi, ef_err *e)
{
    const char *v = row->f[fi];
    size_t n = strlen(v);
    const char *bad = n < (size_t)s->min ? "empty"
                      : n > (size_t)s->max ? "too long" : NULL;
    if (s->type == JFT_ID)
        bad = job_id_check(v, n);
    for (size_t k = 0; k < n && !bad; k++)
        if ((unsigned char)v[k] < 0x20)
            bad = "contains a control character";
    if (bad)
        return ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: %s (expected %s)",
                       q->path, row->line, row->col[fi], q->colname[s->f],
                       bad, s->expect);
    *str_member(j, s) = ef_strdup(v);
    return EF_OK;
}

/* A batch_sizes cell: sizes joined by ';' ("64;128;256"); empty = none. */
static int csv_batches(const job_queue *q, job *j, const csv_row *row,
                       int fi, ef_err *e)
{
    const job_fspec *s = &job_fields[JF_BATCHES];
    const char *cell = row->f[fi];
    char qv[128], tok[64];
    int n = 1;
    for (const char *c = cell; *c; c++)
        n += *c == ';';
    if (n > s->nmax)
        return ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: %d batch sizes "
                       "(expected at most %d)", q->path, row->line,
                       row->col[fi], q->colname[JF_BATCHES], n, (int)s->nmax);
    j->batches = ef_malloc((size_t)n * sizeof *j->batches);
    const char *c = cell;
    for (int k = 0; k < n; k++) {
        size_t l = strcspn(c, ";");
        snprintf(tok, sizeof tok, "%.*s", (int)(l < 63 ? l : 63), c);
        int64_t v;
        if (l > 63 || ef_parse_i64(tok, s->min, s->max, &v) != EF_NUM_OK)
            return ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: item %d \"%s\" is "
                           "not a positive integer (expected batch sizes "
                           "joined by ';', e.g. 64;128;256)", q->path,
                           row->line, row->col[fi], q->colname[JF_BATCHES],
                           k + 1, ef_quote(tok, qv, sizeof qv));
        for (int m = 0; m < j->nbatch; m++)
            if (j->batches[m] == (long)v)
                return ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: %ld appears "
                               "twice (expected distinct batch sizes)",
                               q->path, row->line, row->col[fi],
                               q->colname[JF_BATCHES], (long)v);
        j->batches[j->nbatch++] = (long)v;
        c += l + (c[l] == ';');
    }
    return EF_OK;
}

/* Does the row give (a non-empty cell of) any field of 'mask'? */
static int csv_any(const int *idx, const csv_row *row, unsigned mask)
{
    for (int f = 0; f < JF_NFIELDS; f++)
        if ((mask & JB(f)) && idx[f] >= 0 && row->f[idx[f]][0] != '\0')
            return 1;
    return 0;
}

/* Does the header have a column of any field of 'mask'? */
static int csv_any_column(const int *idx, unsigned mask)
{
    for (int f = 0; f < JF_NFIELDS; f++)
        if ((mask & JB(f)) && idx[f] >= 0)
            return 1;
    return 0;
}

/* The fields of one row (job q->jobs[q->n - 1]), in table order. */
static int csv_job(job_queue *q, const int *idx, const csv_row *row,
                   ef_err *e)
{
    job *j = &q->jobs[q->n - 1];
    unsigned has = 0;
    int64_t v[JF_NFIELDS] = {0};
    for (int f = 0; f < JF_NFIELDS; f++) {
        const job_fspec *s = &job_fields[f];
        if (!(s->flags & JFF_CSV))
            continue;
        if (f == JF_DEADLINE && v[JF_BEST])
            continue; /* best_effort 1: the deadline cell is not read */
        int c = idx[f];
        if (c < 0 || row->f[c][0] == '\0') {
            /* An empty cell is a field not given (pandas writes missing
             * values that way); a required one is reported below. */
            if (s->req_csv != JR_YES &&
                (s->req_csv != JR_UNLESS || csv_any(idx, row, s->unless)))
                continue;
            if (c < 0)
                return ef_fail(e, EF_E_INPUT, "%s:%ld:1: no %s given "
                               "(expected %s, %s)", q->path, row->line,
                               s->what, q->colname[f] ? q->colname[f]
                                                      : s->csv[0], s->alt);
        }
        int rc;
        switch (s->type) {
        case JFT_ID:
        case JFT_NAME:
            rc = csv_str(q, j, s, row, c, e);
            break;
        case JFT_INT:
        case JFT_TIME:
            rc = csv_int(q, row, c, (job_field)f,
                         (s->flags & JFF_ZERO) ? 0 : s->min, s->max, &v[f],
                         s->expect, e);
            break;
        case JFT_SIZES:
            rc = csv_batches(q, j, row, c, e);
            break;
        default:
            ef_panic("field %s: no CSV reader for its type", s->key);
        }
        if (rc != EF_OK)
            return EF_ERR;
        has |= JB(f);
    }
    return job_finish(q, q->n - 1, has, v, e);
}

/* The header line: which column holds which field (idx), the names as
 * spelled, and the required columns there. */
static int csv_header(job_queue *q, const csv_row *row, int *idx,
                      ef_err *e)
{
    char qv[128];
    for (int i = 0; i < row->nf; i++) {
        const job_fspec *s = NULL;
        for (int f = 0; f < JF_NFIELDS && !s; f++)
            for (int k = 0; k < 2; k++)
                if (job_fields[f].csv[k] &&
                    strcmp(row->f[i], job_fields[f].csv[k]) == 0)
                    s = &job_fields[f];
        if (!s)
            continue; /* unknown columns are kept out of the way */
        if (idx[s->f] >= 0)
            return ef_fail(e, EF_E_INPUT, "%s:%ld:%d: duplicated column \"%s\" "
                           "(column %d is \"%s\"; keep one)", q->path,
                           row->line, row->col[i], row->f[i], idx[s->f] + 1,
                           q->colname[s->f]);
        idx[s->f] = i;
        q->colname[s->f] = ef_strdup(row->f[i]);
    }
    for (int f = 0; f < JF_NFIELDS; f++) {
        const job_fspec *s = &job_fields[f];
        if (!(s->flags & JFF_CSV) || s->req_csv == JR_NO || idx[f] >= 0 ||
            (s->req_csv == JR_UNLESS && csv_any_column(idx, s->unless)))
            continue;
        /* Point at a likely misspelling among the unknown columns. */
        const char *hint = NULL;
        int hint_col = 1;
        int n = s->csv[1] ? 2 : 1;
        for (int i = 0; i < row->nf && !hint; i++) {
            int known = 0;
            for (int f2 = 0; f2 < JF_NFIELDS; f2++)
                known |= idx[f2] == i;
            for (size_t g = 0; g < sizeof csv_ignored / sizeof *csv_ignored;
                 g++)
                known |= strcmp(row->f[i], csv_ignored[g]) == 0;
            if (!known && ef_suggest(row->f[i], s->csv, n)) {
                hint = row->f[i];
                hint_col = row->col[i];
            }
        }
        char names[96];
        if (s->csv[1])
            snprintf(names, sizeof names, "\"%s\" or \"%s\"", s->csv[0],
                     s->csv[1]);
        else
            snprintf(names, sizeof names, "\"%s\"", s->csv[0]);
        if (hint)
            return ef_fail(e, EF_E_INPUT, "%s:%ld:%d: missing column %s (is "
                           "\"%s\" a misspelling?)", q->path, row->line,
                           hint_col, names, ef_quote(hint, qv, sizeof qv));
        return ef_fail(e, EF_E_INPUT, "%s:%ld:1: missing column %s", q->path,
                       row->line, names);
    }
    return EF_OK;
}

int queue_parse_csv(job_queue *q, const char *path, const char *buf,
                    size_t len, ef_err *e)
{
    memset(q, 0, sizeof *q);
    q->path = ef_strdup(path);
    csv_reader r;
    csv_row row = {0};
    int idx[JF_NFIELDS];
    int rc, cap = 0, nf;
    for (int f = 0; f < JF_NFIELDS; f++)
        idx[f] = -1;
    csv_open(&r, q->path, buf, len);
    rc = csv_next(&r, &row, e);
    if (rc == 0) {
        rc = ef_fail(e, EF_E_INPUT, "%s: empty file (expected a header line "
                     "such as \"job_id,submit_time,iteration,model_name,ddl,"
                     "batch_size\")", path);
        goto fail;
    }
    if (rc < 0 || csv_header(q, &row, idx, e) != EF_OK)
        goto fail;
    nf = row.nf;
    q->has_num_gpu = idx[JF_NUMGPU] >= 0;
    q->has_duration = idx[JF_DURATION] >= 0;
    while ((rc = csv_next(&r, &row, e)) == 1) {
        if (row.nf != nf) {
            rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %d fields (expected %d, as "
                         "in the header)", path, row.line,
                         row.nf > nf ? row.col[nf] : row.col[row.nf - 1],
                         row.nf, nf);
            goto fail;
        }
        job *j = push_job(q, &cap);
        j->line = row.line;
        j->index = q->n - 1;
        for (int f = 0; f < JF_NFIELDS; f++)
            j->col[f] = idx[f] >= 0 ? row.col[idx[f]] : 0;
        if (csv_job(q, idx, &row, e) != EF_OK)
            goto fail;
    }
    if (rc < 0)
        goto fail;
    /* A header line and no rows is an empty queue (every job done or none
     * submitted): valid, q->n == 0. */
    csv_row_free(&row);
    if (check_jobs(q, e) != EF_OK) {
        queue_free(q);
        return EF_ERR;
    }
    return EF_OK;
fail:
    csv_row_free(&row);
    queue_free(q);
    return EF_ERR;
}

/* ---- JSON --------------------------------------------------------------- */

/* What "now" means in relative times (queue_set_now); -1: refused. */
static int64_t rel_now = -1;

void queue_set_now(int64_t now)
{
    rel_now = now;
}

/* A time: integer seconds, an ISO-8601 string, or "now+8h" (rel_now),
 * min..max. Returns
 * EF_OK or EF_ERR; the key is present (and not null). */
static int json_time(const json_t *o, const job_fspec *s, int64_t *out,
                     const char *file, const char *where, ef_err *e)
{
    json_t *v = json_object_get(o, s->key);
    if (json_is_string(v)) {
        const char *why = NULL, *str = json_string_value(v);
        char qv[128];
        if (strncmp(str, "now", 3) == 0 && rel_now < 0)
            return ef_fail(e, EF_E_INPUT, "%s: %s.%s: \"%s\": a relative "
                           "time is not read here (expected Unix seconds or "
                           "ISO-8601)", file, where, s->key,
                           ef_quote(str, qv, sizeof qv));
        if (str[0] == '+' && ef_ht_parse(str, 0, out, &why) != 0)
            return ef_fail(e, EF_E_INPUT, "%s: %s.%s: \"%s\" is not a "
                           "time: %s", file, where, s->key,
                           ef_quote(str, qv, sizeof qv), why);
        if (strncmp(str, "now", 3) == 0 &&
            ef_ht_parse(str, rel_now, out, &why) != 0)
            return ef_fail(e, EF_E_INPUT, "%s: %s.%s: \"%s\" is not a "
                           "time: %s", file, where, s->key,
                           ef_quote(str, qv, sizeof qv), why);
        if (strncmp(str, "now", 3) != 0 && str[0] != '+' &&
            ef_parse_iso8601(str, out, &why) != EF_OK)
            return ef_fail(e, EF_E_INPUT, "%s: %s.%s: \"%s\" is not an "
                           "ISO-8601 time: %s", file,
                           where, s->key, ef_quote(str, qv, sizeof qv), why);
        if (*out < s->min || *out > s->max)
            return ef_fail(e, EF_E_INPUT, "%s: %s.%s: time before 1970 (expected "
                           "a time in seconds >= 0)", file, where, s->key);
        return EF_OK;
    }
    if (!json_is_integer(v))
        return ef_fail(e, EF_E_INPUT, "%s: %s.%s: expected seconds (an "
                       "integer) or an ISO-8601 string%s, got %s", file, where,
                       s->key, (s->flags & JFF_NULL) ? " or null" : "",
                       jsonin_type(v));
    return jsonin_int(o, s->key, 1, s->min, s->max, out, file, where, e) < 0
               ? EF_ERR : EF_OK;
}

/* "id": a string, or an integer >= 0 kept as its decimal text. */
static int json_id(job *j, const json_t *o, const job_fspec *s,
                   const char *file, const char *where, ef_err *e)
{
    json_t *id = json_object_get(o, s->key);
    const char *str;
    if (json_is_integer(id) && json_integer_value(id) >= 0) {
        char tmp[32];
        snprintf(tmp, sizeof tmp, "%" JSON_INTEGER_FORMAT,
                 json_integer_value(id));
        *str_member(j, s) = ef_strdup(tmp);
        return EF_OK;
    }
    if (!json_is_string(id))
        return ef_fail(e, EF_E_INPUT, "%s: %s.%s: expected a string or a "
                       "non-negative integer, got %s", file, where, s->key,
                       jsonin_type(id));
    str = json_string_value(id);
    const char *why = job_id_check(str, json_string_length(id));
    if (why)
        return ef_fail(e, EF_E_INPUT, "%s: %s.%s: %s (expected %s)", file,
                       where, s->key, why, JOB_ID_RULE);
    *str_member(j, s) = ef_strdup(str);
    return EF_OK;
}

/* A string of s->min..s->max bytes without NUL bytes; 'what' is its
 * path. */
static int json_path_str(const json_t *v, const job_fspec *s,
                         const char *file, const char *what,
                         const char **out, ef_err *e)
{
    if (!json_is_string(v))
        return ef_fail(e, EF_E_INPUT, "%s: %s: expected a string, got %s",
                       file, what, jsonin_type(v));
    size_t n = json_string_length(v);
    if (n < (size_t)s->min || n > (size_t)s->max)
        return ef_fail(e, EF_E_INPUT, "%s: %s: %s (expected %d to %d bytes)",
                       file, what, n ? "too long" : "empty", (int)s->min,
                       (int)s->max);
    if (strlen(json_string_value(v)) != n)
        return ef_fail(e, EF_E_INPUT, "%s: %s: contains a NUL byte", file,
                       what);
    *out = json_string_value(v);
    return EF_OK;
}

/* "placement": [{"node": n, "gpus": [i, ...]}, ...]: where the job runs
 * now, read by the placement module (every file's placement has one
 * reader). Checked against the cluster later, by the planner. */
static int json_placement(job *j, const json_t *pl, const job_fspec *s,
                          const char *file, const char *where, ef_err *e)
{
    char w[128];
    snprintf(w, sizeof w, "%s.placement", where);
    if (json_is_array(pl) && json_array_size(pl) == 0)
        return EF_OK; /* [] as null: not running */
    if (placement_read_json(pl, &j->cur, file, w, e) != EF_OK)
        return EF_ERR;
    if (j->cur.n > s->nmax) {
        placement_free(&j->cur);
        return ef_fail(e, EF_E_INPUT, "%s: %s: too many GPUs", file, w);
    }
    return EF_OK;
}

/* "batch_sizes": [64, 128, ...]. */
static int json_batches(job *j, const json_t *a, const job_fspec *s,
                        const char *file, const char *where, ef_err *e)
{
    if (!json_is_array(a) || json_array_size(a) == 0)
        return ef_fail(e, EF_E_INPUT, "%s: %s.batch_sizes: expected a "
                       "non-empty array of batch sizes such as [64, 128, "
                       "256], got %s", file, where,
                       json_is_array(a) ? "an empty array" : jsonin_type(a));
    if (json_array_size(a) > (size_t)s->nmax)
        return ef_fail(e, EF_E_INPUT, "%s: %s.batch_sizes: %zu batch sizes "
                       "(expected at most %d)", file, where,
                       json_array_size(a), (int)s->nmax);
    j->batches = ef_malloc(json_array_size(a) * sizeof *j->batches);
    size_t k;
    json_t *x;
    json_array_foreach(a, k, x) {
        json_int_t v = json_is_integer(x) ? json_integer_value(x) : 0;
        if (!json_is_integer(x) || v < s->min || v > s->max) {
            char got[48];
            if (json_is_integer(x))
                snprintf(got, sizeof got, "%" JSON_INTEGER_FORMAT, v);
            else
                snprintf(got, sizeof got, "%s", jsonin_type(x));
            return ef_fail(e, EF_E_INPUT, "%s: %s.batch_sizes[%zu]: expected "
                           "a positive integer batch size, got %s", file,
                           where, k, got);
        }
        for (int m = 0; m < j->nbatch; m++)
            if (j->batches[m] == (long)v)
                return ef_fail(e, EF_E_INPUT, "%s: %s.batch_sizes[%zu]: %ld "
                               "appears twice (also batch_sizes[%d]; "
                               "expected distinct batch sizes)", file, where,
                               k, (long)v, m);
        j->batches[j->nbatch++] = (long)v;
    }
    return EF_OK;
}

/* "command": the argv array. */
static int json_argv(job *j, const json_t *v, const job_fspec *s,
                     const char *file, const char *where, ef_err *e)
{
    job_run *r = &j->run;
    char w[512];
    const char *str;
    if (!json_is_array(v) || json_array_size(v) == 0 ||
        json_array_size(v) > (size_t)s->nmax)
        return ef_fail(e, EF_E_INPUT, "%s: %s.command: expected a "
                       "non-empty array of strings (the program and its "
                       "arguments), got %s", file, where,
                       json_is_array(v) ? (json_array_size(v)
                                           ? "too many" : "an empty array")
                                        : jsonin_type(v));
    r->argv = ef_calloc(json_array_size(v) + 1, sizeof *r->argv);
    size_t k;
    json_t *x;
    json_array_foreach(v, k, x) {
        snprintf(w, sizeof w, "%s.command[%zu]", where, k);
        if (json_path_str(x, s, file, w, &str, e) != EF_OK)
            return EF_ERR;
        r->argv[r->argc++] = ef_strdup(str);
    }
    return EF_OK;
}

/* "env": {"NAME": "value"}, kept as sorted "NAME=value" strings; each
 * value a string of s->min..s->max bytes, checked like a command
 * argument. */
static int json_env(job *j, const json_t *v, const job_fspec *s,
                    const char *file, const char *where, ef_err *e)
{
    job_run *r = &j->run;
    char w[512], qv[128];
    if (!json_is_object(v))
        return ef_fail(e, EF_E_INPUT, "%s: %s.env: expected an object of "
                       "strings {\"NAME\": \"value\"}, got %s", file,
                       where, jsonin_type(v));
    r->env = ef_calloc(json_object_size(v) + 1, sizeof *r->env);
    const char *key;
    json_t *x;
    json_object_foreach((json_t *)v, key, x) {
        int ok = key[0] != '\0' && !isdigit((unsigned char)key[0]) &&
                 strlen(key) <= 255;
        for (const char *c = key; *c && ok; c++)
            ok = isalnum((unsigned char)*c) || *c == '_';
        if (!ok)
            return ef_fail(e, EF_E_INPUT, "%s: %s.env: \"%s\" is not a "
                           "variable name (expected letters, digits and "
                           "_, not starting with a digit)", file, where,
                           ef_quote(key, qv, sizeof qv));
        for (size_t k = 0; k < sizeof reserved_env / sizeof *reserved_env;
             k++)
            if (strcmp(key, reserved_env[k]) == 0)
                return ef_fail(e, EF_E_INPUT, "%s: %s.env.%s: set by "
                               "efplan apply for each launch (remove "
                               "it)", file, where, key);
        snprintf(w, sizeof w, "%s.env.%s", where, key);
        const char *val;
        if (json_path_str(x, s, file, w, &val, e) != EF_OK)
            return EF_ERR;
        size_t n = strlen(key) + strlen(val) + 2;
        r->env[r->nenv] = ef_malloc(n);
        snprintf(r->env[r->nenv++], n, "%s=%s", key, val);
    }
    qsort(r->env, (size_t)r->nenv, sizeof *r->env, cmp_env);
    return EF_OK;
}

/* "checkpoint_signal": a name ("SIGUSR1", "USR1") or a number. */
/* A WORD field: one of s->words, stored as its index. */
static int json_word(job *j, const json_t *v, const job_fspec *s,
                     const char *file, const char *where, ef_err *e)
{
    char list[256], qv[128];
    size_t o = 0;
    int n = 0;
    for (; s->words[n]; n++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s\"%s\"",
                              n ? (s->words[n + 1] ? ", " : " or ") : "",
                              s->words[n]);
    if (!json_is_string(v))
        return ef_fail(e, EF_E_INPUT, "%s: %s.%s: expected %s, got %s", file,
                       where, s->key, list, jsonin_type(v));
    const char *w = json_string_value(v);
    for (int k = 0; k < n; k++)
        if (strcmp(w, s->words[k]) == 0) {
            set_int(j, s, k);
            return EF_OK;
        }
    const char *sug = ef_suggest(w, s->words, n);
    if (sug)
        return ef_fail(e, EF_E_INPUT, "%s: %s.%s: unknown value \"%s\" (did "
                       "you mean \"%s\"?)", file, where, s->key,
                       ef_quote(w, qv, sizeof qv), sug);
    return ef_fail(e, EF_E_INPUT, "%s: %s.%s: unknown value \"%s\" "
                   "(expected %s)", file, where, s->key,
                   ef_quote(w, qv, sizeof qv), list);
}

static int json_signal(job *j, const json_t *v, const job_fspec *s,
                       const char *file, const char *where, ef_err *e)
{
    job_run *r = &j->run;
    char qv[128];
    if (json_is_integer(v)) {
        json_int_t n = json_integer_value(v);
        if (n < s->min || n > s->max || n == SIGKILL || n == SIGSTOP)
            return ef_fail(e, EF_E_INPUT, "%s: %s.checkpoint_signal: %"
                           JSON_INTEGER_FORMAT " (expected a signal number "
                           "from %d to %d other than KILL (9) and STOP "
                           "(19))", file, where, n, (int)s->min, (int)s->max);
        r->signal = (int)n;
        return EF_OK;
    }
    if (!json_is_string(v))
        return ef_fail(e, EF_E_INPUT, "%s: %s.checkpoint_signal: expected "
                       "a signal name or number, got %s", file, where,
                       jsonin_type(v));
    const char *name = json_string_value(v);
    char full[64];
    snprintf(full, sizeof full, "%s%s",
             strncmp(name, "SIG", 3) == 0 ? "" : "SIG", name);
    for (int i = 0; i < NSIGNALS && !r->signal; i++)
        if (strcmp(full, signals[i].name) == 0)
            r->signal = signals[i].sig;
    if (r->signal)
        return EF_OK;
    const char *names[NSIGNALS];
    for (int i = 0; i < NSIGNALS; i++)
        names[i] = signals[i].name;
    const char *sug = ef_suggest(full, names, NSIGNALS);
    if (sug)
        return ef_fail(e, EF_E_INPUT, "%s: %s.checkpoint_signal: "
                       "unknown signal \"%s\" (did you mean "
                       "\"%s\"?)", file, where,
                       ef_quote(name, qv, sizeof qv), sug);
    return ef_fail(e, EF_E_INPUT, "%s: %s.checkpoint_signal: "
                   "unknown signal \"%s\" (expected SIGTERM, "
                   "SIGUSR1, SIGUSR2, SIGINT, SIGHUP, SIGQUIT, "
                   "SIGALRM, SIGCONT, SIGWINCH or a number)", file,
                   where, ef_quote(name, qv, sizeof qv));
}

/* Is key k of o given (present, and not a null that means absent)? */
static int json_given(const json_t *o, const job_fspec *s)
{
    const json_t *v = json_object_get(o, s->key);
    return v && !((s->flags & JFF_NULL) && json_is_null(v));
}

/* Is any field of 'mask' given in o? */
static int json_any(const json_t *o, unsigned mask)
{
    for (int f = 0; f < JF_NFIELDS; f++)
        if ((mask & JB(f)) && json_given(o, &job_fields[f]))
            return 1;
    return 0;
}

/* The fields of one JSON job o (q->jobs[q->n - 1], at 'where'), in table
 * order. */
static int json_job(job_queue *q, const json_t *o, const char *where,
                    ef_err *e)
{
    job *j = &q->jobs[q->n - 1];
    const char *file = q->path, *str;
    unsigned has = 0;
    int64_t v[JF_NFIELDS] = {0};
    char w[512];
    for (int f = 0; f < JF_NFIELDS; f++) {
        const job_fspec *s = &job_fields[f];
        if (!(s->flags & JFF_JSON))
            continue;
        json_t *x = json_object_get(o, s->key);
        if (!json_given(o, s) && f == JF_SUBMIT) {
            /* no submit time: submitted now (what "now+8h" counts from),
             * where the reader has a now (the CLI; not efplan serve) */
            if (rel_now < 0)
                return ef_fail(e, EF_E_INPUT, "%s: %s: missing required key "
                               "\"%s\"", file, where, s->key);
            v[f] = rel_now;
            has |= JB(f);
            continue;
        }
        if (!json_given(o, s)) {
            if (s->req_json == JR_YES ||
                (s->req_json == JR_UNLESS && !json_any(o, s->unless)))
                return ef_fail(e, EF_E_INPUT, "%s: %s: missing required key "
                               "\"%s\"", file, where, s->key);
            continue;
        }
        int rc = EF_OK;
        switch (s->type) {
        case JFT_ID:
            rc = json_id(j, o, s, file, where, e);
            break;
        case JFT_NAME: /* jsonin_str: 1..255 bytes (s->min..s->max) */
            rc = jsonin_str(o, s->key, 1, &str, file, where, e) < 0
                     ? EF_ERR : EF_OK;
            if (rc == EF_OK)
                *str_member(j, s) = ef_strdup(str);
            break;
        case JFT_INT:
            if ((s->flags & JFF_ZERO) && json_is_integer(x) &&
                json_integer_value(x) == 0)
                v[f] = 0;
            else if (jsonin_int(o, s->key, 1, s->min, s->max, &v[f], file,
                                where, e) < 0)
                rc = EF_ERR;
            break;
        case JFT_TIME:
            rc = json_time(o, s, &v[f], file, where, e);
            break;
        case JFT_SIZES:
            rc = json_batches(j, x, s, file, where, e);
            break;
        case JFT_PLACE:
            rc = json_placement(j, x, s, file, where, e);
            break;
        case JFT_ARGV:
            rc = json_argv(j, x, s, file, where, e);
            break;
        case JFT_PATH:
            snprintf(w, sizeof w, "%s.%s", where, s->key);
            rc = json_path_str(x, s, file, w, &str, e);
            if (rc == EF_OK)
                *str_member(j, s) = ef_strdup(str);
            break;
        case JFT_ENV:
            rc = json_env(j, x, s, file, where, e);
            break;
        case JFT_SIGNAL:
            rc = json_signal(j, x, s, file, where, e);
            break;
        case JFT_WORD:
            rc = json_word(j, x, s, file, where, e);
            break;
        }
        if (rc != EF_OK)
            return EF_ERR;
        has |= JB(f);
    }
    q->has_num_gpu |= (has & JB(JF_NUMGPU)) != 0;
    q->has_duration |= (has & JB(JF_DURATION)) != 0;
    return job_finish(q, q->n - 1, has, v, e);
}

/* A job that names its GPU count ("gpus", as other schedulers ask):
 * refused with why efplan takes none (EF_E_INPUT), else EF_OK. */
static int gpu_count_key(const json_t *o, const char *path, const char *where,
                         ef_err *e)
{
    static const char *const asked[] = {"gpus", "num_gpus", "n_gpus",
                                        "gpu_count", "ngpus"};
    for (size_t k = 0; k < sizeof asked / sizeof asked[0]; k++)
        if (json_object_get(o, asked[k]))
            return ef_fail(e, EF_E_INPUT,
                           "%s: %s.%s: efplan chooses each job's GPU count "
                           "itself (the fewest GPUs that meet its deadline, "
                           "then spare GPUs where they help most), so a job "
                           "names none: remove \"%s\" (a trace's \"num_gpu\", "
                           "the count a job asked for elsewhere, is read for "
                           "the baselines and changes nothing efplan decides)",
                           path, where, asked[k], asked[k]);
    return EF_OK;
}

int queue_from_json(job_queue *q, const char *path, const json_t *root,
                    ef_err *e)
{
    static const char *const top_keys[] = {"format", "version", "jobs",
                                           "apply"};
    const char *keys[JF_NFIELDS];
    int nkeys = 0;
    for (int f = 0; f < JF_NFIELDS; f++)
        if (job_fields[f].flags & JFF_JSON)
            keys[nkeys++] = job_fields[f].key;
    memset(q, 0, sizeof *q);
    q->path = ef_strdup(path);
    q->is_json = 1;
    int cap = 0;
    char where[64], qv[128];
    if (!json_is_object(root)) {
        ef_fail(e, EF_E_INPUT, "%s: expected an object {\"jobs\": [...]}, got "
                "%s", path, jsonin_type(root));
        goto fail;
    }
    if (jsonin_check_keys(root, top_keys, 4, path, "", e) != EF_OK)
        goto fail;
    /* "apply": the report efplan apply adds to the state file it writes
     * (finished and failed jobs); the planner does not read it. */
    json_t *ap = json_object_get(root, "apply");
    if (ap && !json_is_object(ap)) {
        ef_fail(e, EF_E_INPUT, "%s: apply: expected an object (written by "
                "efplan apply), got %s", path, jsonin_type(ap));
        goto fail;
    }
    const char *fmt;
    int has = jsonin_str(root, "format", 0, &fmt, path, "", e);
    if (has < 0)
        goto fail;
    if (has && strcmp(fmt, "efplan-jobs") != 0) {
        ef_fail(e, EF_E_INPUT, "%s: format: \"%s\" (expected \"efplan-jobs\")",
                path, ef_quote(fmt, qv, sizeof qv));
        goto fail;
    }
    int64_t ver;
    if (jsonin_int(root, "version", 0, 1, 1, &ver, path, "", e) < 0)
        goto fail;
    json_t *arr = json_object_get(root, "jobs");
    if (!arr) {
        ef_fail(e, EF_E_INPUT, "%s: missing required key \"jobs\"", path);
        goto fail;
    }
    if (!json_is_array(arr)) {
        ef_fail(e, EF_E_INPUT, "%s: jobs: expected an array, got %s", path,
                jsonin_type(arr));
        goto fail;
    }
    /* "jobs": [] is an empty queue: valid, q->n == 0. */
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o) {
        snprintf(where, sizeof where, "jobs[%zu]", i);
        if (!json_is_object(o)) {
            ef_fail(e, EF_E_INPUT, "%s: %s: expected an object, got %s", path,
                    where, jsonin_type(o));
            goto fail;
        }
        if (gpu_count_key(o, path, where, e) != EF_OK ||
            jsonin_check_keys(o, keys, nkeys, path, where, e) != EF_OK)
            goto fail;
        job *j = push_job(q, &cap);
        j->index = (int)i;
        j->line = (long)i;
        if (json_job(q, o, where, e) != EF_OK)
            goto fail;
    }
    if (check_jobs(q, e) != EF_OK) {
        queue_free(q);
        return EF_ERR;
    }
    return EF_OK;
fail:
    queue_free(q);
    return EF_ERR;
}

int queue_parse_json(job_queue *q, const char *path, const char *buf,
                     size_t len, ef_err *e)
{
    json_t *root = jsonin_parse(path, buf, len, e);
    if (!root) {
        memset(q, 0, sizeof *q);
        return EF_ERR;
    }
    int rc = queue_from_json(q, path, root, e);
    json_decref(root);
    return rc;
}

/* ---- the JSON writer ---------------------------------------------------- */

/* The value of field s of job j, for job_to_json. */
static json_t *field_json(const job *j, const job_fspec *s)
{
    const job_run *r = &j->run;
    json_t *a;
    switch (s->type) {
    case JFT_ID:
    case JFT_NAME:
    case JFT_PATH:
        return json_string(get_str(j, s));
    case JFT_INT:
    case JFT_TIME:
        return json_integer((json_int_t)get_int(j, s));
    case JFT_SIZES:
        a = json_array();
        for (int k = 0; k < j->nbatch; k++)
            json_array_append_new(a, json_integer(j->batches[k]));
        return a;
    case JFT_PLACE:
        a = json_array();
        for (int k = 0; k < j->cur.n;) {
            json_t *g = json_array();
            int node = j->cur.node[k];
            while (k < j->cur.n && j->cur.node[k] == node)
                json_array_append_new(g, json_integer(j->cur.gpu[k++]));
            json_array_append_new(a, json_pack("{s:i,s:o}", "node", node,
                                               "gpus", g));
        }
        return a;
    case JFT_ARGV:
        a = json_array();
        for (int k = 0; k < r->argc; k++)
            json_array_append_new(a, json_string(r->argv[k]));
        return a;
    case JFT_ENV:
        a = json_object();
        for (int k = 0; k < r->nenv; k++) {
            const char *eq = strchr(r->env[k], '=');
            char *key = ef_strndup(r->env[k], (size_t)(eq - r->env[k]));
            json_object_set_new(a, key, json_string(eq + 1));
            free(key);
        }
        return a;
    case JFT_SIGNAL: {
        const char *n = job_signal_name(r->signal);
        return n ? json_string(n) : json_integer(r->signal);
    }
    case JFT_WORD:
        return json_string(s->words[get_int(j, s)]);
    }
    ef_panic("field %s: no writer for its type", s->key);
}

json_t *job_to_json(const job *j)
{
    json_t *o = json_object();
    for (int f = 0; f < JF_NFIELDS; f++) {
        const job_fspec *s = &job_fields[f];
        if (!(s->flags & JFF_JSON))
            continue;
        if (job_has(j, (job_field)f))
            json_object_set_new(o, s->key, field_json(j, s));
        else if (s->flags & JFF_NULLOUT)
            json_object_set_new(o, s->key, json_null());
    }
    return o;
}

char *queue_write_json(const job *jobs, int n, const json_t *apply)
{
    json_t *arr = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, job_to_json(&jobs[i]));
    json_t *root = json_pack("{s:s,s:o,s:i}", "format", "efplan-jobs",
                             "jobs", arr, "version", 1);
    if (apply)
        json_object_set(root, "apply", (json_t *)apply);
    char *s = json_dumps(root, JSON_INDENT(1) | JSON_SORT_KEYS);
    json_decref(root);
    ef_assert(s != NULL);
    ef_buf out = {0};
    ef_buf_put(&out, s);
    ef_buf_put(&out, "\n");
    free(s);
    return out.s;
}

/* ---- loading and resolving ---------------------------------------------- */

int queue_load(job_queue *q, const char *path, ef_err *e)
{
    char *buf;
    size_t len;
    memset(q, 0, sizeof *q);
    if (ef_read_file(path, &buf, &len, e) != EF_OK)
        return EF_ERR;
    size_t l = strlen(path);
    int js;
    if (l > 5 && strcmp(path + l - 5, ".json") == 0)
        js = 1;
    else if (l > 4 && strcmp(path + l - 4, ".csv") == 0)
        js = 0;
    else {
        size_t i = ef_bom_len(buf, len);
        while (i < len && isspace((unsigned char)buf[i]))
            i++;
        js = i < len && (buf[i] == '{' || buf[i] == '[');
    }
    int rc = js ? queue_parse_json(q, path, buf, len, e)
                : queue_parse_csv(q, path, buf, len, e);
    free(buf);
    return rc;
}

/* EF_ERR (with 'e') if job i's 'left' work (iterations, or samples when
 * 'samples') takes more than JOB_MAX_ALONE_SECONDS at the slowest usable
 * size of 'row' (its first: the ladder's throughput rises). */
static int too_slow(const job_queue *q, int i, const curve_row *row,
                    double left, int samples, ef_err *e)
{
    const job *j = &q->jobs[i];
    double tp = row->usable_tput[0];
    if (samples)
        tp *= (double)row->batch;
    if (left <= tp * JOB_MAX_ALONE_SECONDS)
        return EF_OK;
    char w[600];
    job_field f = !j->in_samples ? JF_ITER
                  : j->epochs > 0 ? JF_EPOCHS : JF_SAMPLES;
    return ef_fail(e, EF_E_INPUT, "%s: %.0f %s left take %.3g s at the "
                   "slowest usable size of %s batch size %ld (%d GPU%s, %g "
                   "iterations/s; expected at most %.0e s, about 31,700 "
                   "years)",
                   queue_where(q, i, f, w, sizeof w), left,
                   samples ? "samples" : "iterations", left / tp, j->model,
                   row->batch, row->usable_gpus[0],
                   row->usable_gpus[0] > 1 ? "s" : "", row->usable_tput[0],
                   JOB_MAX_ALONE_SECONDS);
}

/* No curve row of model m for batch size b at 'where': the error, with
 * the nearest batch sizes it has and how to measure the missing one. */
static int no_row(const char *where, const curve_model *m, long b, ef_err *e)
{
    long lo = -1, hi = -1;
    for (int k = 0; k < m->nrows; k++) {
        long x = m->rows[k].batch;
        if (x < b && (lo < 0 || x > lo))
            lo = x;
        if (x > b && (hi < 0 || x < hi))
            hi = x;
    }
    char near[64];
    if (lo >= 0 && hi >= 0)
        snprintf(near, sizeof near, "%ld and %ld", lo, hi);
    else
        snprintf(near, sizeof near, "%ld", lo >= 0 ? lo : hi);
    return ef_fail(e, EF_E_INPUT, "%s: %s has no curve row for batch size %ld "
                   "(nearest: %s; measure it on GPUs with efplan profile "
                   "--model %s --batch %ld: docs/profiling.md)",
                   where, m->name, b, near, m->name, b);
}

int queue_resolve(job_queue *q, const curve_set *cs, ef_err *e)
{
    char w[600], list[1024], qv[128];
    for (int i = 0; i < q->n; i++) {
        job *j = &q->jobs[i];
        const curve_model *m = curve_find_model(cs, j->model);
        if (!m)
            return ef_fail(e, EF_E_INPUT, "%s: unknown model \"%s\" (curves in "
                           "%s have: %s)", queue_where(q, i, JF_MODEL, w, sizeof w),
                           ef_quote(j->model, qv, sizeof qv), cs->dir,
                           curve_list_models(cs, list, sizeof list));
        j->curve = curve_find_row(m, j->batch);
        if (!j->curve)
            return no_row(queue_where(q, i, JF_BATCH, w, sizeof w), m,
                          j->batch, e);
        if (too_slow(q, i, j->curve, j->iterations - j->iterations_done, 0,
                     e) != EF_OK)
            return EF_ERR;
        if (j->nbatch == 0)
            continue;
        free(j->rows);
        j->rows = ef_malloc((size_t)j->nbatch * sizeof *j->rows);
        for (int k = 0; k < j->nbatch; k++) {
            j->rows[k] = curve_find_row(m, j->batches[k]);
            if (!j->rows[k])
                return no_row(queue_where(q, i, JF_BATCHES, w, sizeof w), m,
                              j->batches[k], e);
            if (job_elastic(j) &&
                too_slow(q, i, j->rows[k], job_samples_left(j), 1, e) != EF_OK)
                return EF_ERR;
        }
    }
    return EF_OK;
}
