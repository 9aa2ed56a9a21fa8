/* jobs.c: job queue readers and checks (see jobs.h). */
#include "jobs.h"

#include <ctype.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>

#include "csv.h"
#include "jsonin.h"
#include "util.h"

/* JSON key of each field. */
static const char *const json_key[JF_NFIELDS] = {
    "id", "submit_time", "iterations", "model", "deadline", "batch_size",
    "num_gpu", "duration", "best_effort", "iterations_done", "batch_sizes",
    "samples", "epochs", "dataset_size", "samples_done"};

void queue_free(job_queue *q)
{
    for (int i = 0; i < q->n; i++) {
        free(q->jobs[i].id);
        free(q->jobs[i].model);
        free(q->jobs[i].cur_node);
        free(q->jobs[i].cur_gpu);
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

const char *queue_where(const job_queue *q, int i, job_field f, char *dst,
                        size_t len)
{
    const job *j = &q->jobs[i];
    if (q->is_json)
        snprintf(dst, len, "%s: jobs[%d].%s", q->path, j->index, json_key[f]);
    else
        snprintf(dst, len, "%s:%ld:%d: %s", q->path, j->line,
                 j->col[f] > 0 ? j->col[f] : 1,
                 q->colname[f] ? q->colname[f] : json_key[f]);
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

/* Most batch sizes one job may list. */
#define MAX_BATCHES 64

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

/* The elastic-batch and work-form rules shared by both formats, for job
 * i once its fields are read. has_*: which fields the job gave; epochs
 * and dataset: their values (0 = absent). */
static int job_finish(job_queue *q, int i, int has_batch, int has_iter,
                      int has_samples, int64_t epochs, int64_t dataset,
                      int has_done, int has_sdone, ef_err *e)
{
    job *j = &q->jobs[i];
    int has_epochs = epochs > 0, has_dataset = dataset > 0;
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
        if (epochs > EF_MAX_I64 / dataset)
            return ef_fail(e, EF_E_INPUT, "%s: epochs x dataset_size is too "
                           "large (expected at most %lld samples)",
                           queue_where(q, i, JF_DATASET, w, sizeof w),
                           (long long)EF_MAX_I64);
        j->samples = epochs * dataset;
        has_samples = 1;
    }
    j->in_samples = has_samples;
    if (has_samples && has_done)
        return ef_fail(e, EF_E_INPUT, "%s: iterations_done with the work in "
                       "samples (expected samples_done)",
                       queue_where(q, i, JF_DONE, w, sizeof w));
    if (!has_samples && has_sdone)
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
    j->run.grace = -1;
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
        if (j->has_deadline && j->deadline <= j->submit)
            return ef_fail(e, EF_E_INPUT, "%s: deadline %" PRId64 " is %s "
                           "submit time %" PRId64 " (expected a later time)",
                           queue_where(q, i, JF_DEADLINE, w, sizeof w),
                           j->deadline, j->deadline == j->submit ? "equal to"
                           : "before", j->submit);
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

/* ---- CSV ---------------------------------------------------------------- */

typedef struct colspec {
    job_field f;
    const char *names[2];
    int required;
} colspec;

static const colspec csv_cols[] = {
    {JF_ID, {"job_id", NULL}, 1},
    {JF_SUBMIT, {"submit_time", "submission_time"}, 1},
    {JF_ITER, {"iteration", "num_iteration"}, 1},
    {JF_MODEL, {"model_name", NULL}, 1},
    {JF_DEADLINE, {"ddl", "deadline"}, 1},
    {JF_BATCH, {"batch_size", NULL}, 1},
    {JF_NUMGPU, {"num_gpu", NULL}, 0},
    {JF_DURATION, {"duration", NULL}, 0},
    {JF_BEST, {"best_effort", NULL}, 0},
    {JF_DONE, {"iterations_done", NULL}, 0},
    {JF_BATCHES, {"batch_sizes", NULL}, 0},
    {JF_SAMPLES, {"samples", NULL}, 0},
    {JF_EPOCHS, {"epochs", NULL}, 0},
    {JF_DATASET, {"dataset_size", NULL}, 0},
    {JF_SAMPLES_DONE, {"samples_done", NULL}, 0},
};
#define NCOLSPEC ((int)(sizeof csv_cols / sizeof csv_cols[0]))

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

/* A batch_sizes cell: sizes joined by ';' ("64;128;256"); empty = none. */
static int csv_batches(const job_queue *q, job *j, const csv_row *row,
                       int fi, ef_err *e)
{
    const char *s = row->f[fi];
    char qv[128], tok[64];
    if (s[0] == '\0')
        return EF_OK;
    int n = 1;
    for (const char *c = s; *c; c++)
        n += *c == ';';
    if (n > MAX_BATCHES)
        return ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: %d batch sizes "
                       "(expected at most %d)", q->path, row->line,
                       row->col[fi], q->colname[JF_BATCHES], n, MAX_BATCHES);
    j->batches = ef_malloc((size_t)n * sizeof *j->batches);
    const char *c = s;
    for (int k = 0; k < n; k++) {
        size_t l = strcspn(c, ";");
        snprintf(tok, sizeof tok, "%.*s", (int)(l < 63 ? l : 63), c);
        int64_t v;
        if (l > 63 || ef_parse_i64(tok, 1, INT32_MAX, &v) != EF_NUM_OK)
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

/* Non-empty cell of optional column f? */
static int csv_has(const int *idx, const csv_row *row, job_field f)
{
    return idx[f] >= 0 && row->f[idx[f]][0] != '\0';
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
    char qv[128];
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
    if (rc < 0)
        goto fail;
    nf = row.nf;
    long hline = row.line;
    for (int i = 0; i < row.nf; i++) {
        const colspec *cs = NULL;
        for (int k = 0; k < NCOLSPEC && !cs; k++)
            for (int s = 0; s < 2; s++)
                if (csv_cols[k].names[s] &&
                    strcmp(row.f[i], csv_cols[k].names[s]) == 0)
                    cs = &csv_cols[k];
        if (!cs)
            continue; /* unknown columns are kept out of the way */
        if (idx[cs->f] >= 0) {
            rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: duplicated column \"%s\" "
                         "(column %d is \"%s\"; keep one)", path, row.line,
                         row.col[i], row.f[i], idx[cs->f] + 1,
                         q->colname[cs->f]);
            goto fail;
        }
        idx[cs->f] = i;
        q->colname[cs->f] = ef_strdup(row.f[i]);
    }
    for (int k = 0; k < NCOLSPEC; k++) {
        const colspec *cs = &csv_cols[k];
        if (!cs->required || idx[cs->f] >= 0)
            continue;
        if (cs->f == JF_ITER && (idx[JF_SAMPLES] >= 0 || idx[JF_EPOCHS] >= 0))
            continue; /* the work is in samples */
        /* Point at a likely misspelling among the unknown columns. */
        const char *hint = NULL;
        int hint_col = 1;
        for (int i = 0; i < row.nf && !hint; i++) {
            int known = 0;
            for (int k2 = 0; k2 < NCOLSPEC; k2++)
                if (idx[csv_cols[k2].f] == i)
                    known = 1;
            for (size_t g = 0; g < sizeof csv_ignored / sizeof *csv_ignored; g++)
                if (strcmp(row.f[i], csv_ignored[g]) == 0)
                    known = 1;
            int n = cs->names[1] ? 2 : 1;
            if (!known && ef_suggest(row.f[i], cs->names, n)) {
                hint = row.f[i];
                hint_col = row.col[i];
            }
        }
        char names[96];
        if (cs->names[1])
            snprintf(names, sizeof names, "\"%s\" or \"%s\"", cs->names[0],
                     cs->names[1]);
        else
            snprintf(names, sizeof names, "\"%s\"", cs->names[0]);
        if (hint)
            rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: missing column %s (is "
                         "\"%s\" a misspelling?)", path, hline, hint_col,
                         names, ef_quote(hint, qv, sizeof qv));
        else
            rc = ef_fail(e, EF_E_INPUT, "%s:%ld:1: missing column %s", path,
                         hline, names);
        goto fail;
    }
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
        const char *id = row.f[idx[JF_ID]];
        if (id[0] == '\0' || strlen(id) > 255) {
            rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: %s (expected 1 to 255 "
                         "characters)", path, row.line, row.col[idx[JF_ID]],
                         q->colname[JF_ID], id[0] ? "too long" : "empty");
            goto fail;
        }
        j->id = ef_strdup(id);
        const char *model = row.f[idx[JF_MODEL]];
        if (model[0] == '\0') {
            rc = ef_fail(e, EF_E_INPUT, "%s:%ld:%d: %s: empty (expected a model "
                         "name)", path, row.line, row.col[idx[JF_MODEL]],
                         q->colname[JF_MODEL]);
            goto fail;
        }
        j->model = ef_strndup(model, strlen(model) > 255 ? 255 : strlen(model));
        int64_t v;
        /* the work: iterations, or samples, or epochs x dataset_size */
        int hs = csv_has(idx, &row, JF_SAMPLES);
        int64_t ep = 0, ds = 0;
        int hi = idx[JF_ITER] >= 0 &&
                 (row.f[idx[JF_ITER]][0] != '\0' ||
                  !(hs || csv_has(idx, &row, JF_EPOCHS) ||
                    csv_has(idx, &row, JF_DATASET)));
        if (csv_int(q, &row, idx[JF_SUBMIT], JF_SUBMIT, 0, EF_MAX_I64,
                    &j->submit, "a time in seconds >= 0", e) != EF_OK ||
            (hi && csv_int(q, &row, idx[JF_ITER], JF_ITER, 0, EF_MAX_I64,
                           &j->iterations, "a positive integer", e) != EF_OK) ||
            (hs && csv_int(q, &row, idx[JF_SAMPLES], JF_SAMPLES, 1,
                           EF_MAX_I64, &j->samples, "a positive number of "
                           "samples", e) != EF_OK) ||
            (csv_has(idx, &row, JF_EPOCHS) &&
             csv_int(q, &row, idx[JF_EPOCHS], JF_EPOCHS, 1, 1000000, &ep,
                     "a positive number of epochs", e) != EF_OK) ||
            (csv_has(idx, &row, JF_DATASET) &&
             csv_int(q, &row, idx[JF_DATASET], JF_DATASET, 1, EF_MAX_I64, &ds,
                     "a positive number of samples per epoch", e) != EF_OK) ||
            csv_int(q, &row, idx[JF_BATCH], JF_BATCH, 1, INT32_MAX, &v,
                    "a positive integer", e) != EF_OK)
            goto fail;
        j->batch = (long)v;
        if (idx[JF_BATCHES] >= 0 &&
            csv_batches(q, j, &row, idx[JF_BATCHES], e) != EF_OK)
            goto fail;
        if (!hi && !hs && ep == 0 && ds == 0) {
            rc = ef_fail(e, EF_E_INPUT, "%s:%ld:1: no work given (expected "
                         "%s, samples, or epochs with dataset_size)", path,
                         row.line, q->colname[JF_ITER] ? q->colname[JF_ITER]
                                                       : "iteration");
            goto fail;
        }
        int best = 0;
        /* Optional columns may be empty (pandas writes missing values
         * that way): empty means unknown, or 0 for best_effort. */
        if (idx[JF_BEST] >= 0 && row.f[idx[JF_BEST]][0] != '\0') {
            if (csv_int(q, &row, idx[JF_BEST], JF_BEST, 0, 1, &v, "0 or 1",
                        e) != EF_OK)
                goto fail;
            best = (int)v;
        }
        const char *ddl = row.f[idx[JF_DEADLINE]];
        if (!best && ddl[0] != '\0') {
            if (csv_int(q, &row, idx[JF_DEADLINE], JF_DEADLINE, 0, EF_MAX_I64,
                        &j->deadline, "a time in seconds, or empty for "
                        "best-effort", e) != EF_OK)
                goto fail;
            j->has_deadline = 1;
        }
        if (idx[JF_NUMGPU] >= 0 && row.f[idx[JF_NUMGPU]][0] != '\0') {
            if (csv_int(q, &row, idx[JF_NUMGPU], JF_NUMGPU, 0, (1 << 20),
                        &v, "a GPU count >= 0", e) != EF_OK)
                goto fail;
            j->num_gpu = (int)v;
        }
        if (idx[JF_DURATION] >= 0 && row.f[idx[JF_DURATION]][0] != '\0' &&
            csv_int(q, &row, idx[JF_DURATION], JF_DURATION, 0, EF_MAX_I64,
                    &j->duration, "seconds >= 0", e) != EF_OK)
            goto fail;
        if (idx[JF_DONE] >= 0 && row.f[idx[JF_DONE]][0] != '\0' &&
            csv_int(q, &row, idx[JF_DONE], JF_DONE, 0, EF_MAX_I64,
                    &j->iterations_done, "iterations >= 0", e) != EF_OK)
            goto fail;
        if (csv_has(idx, &row, JF_SAMPLES_DONE) &&
            csv_int(q, &row, idx[JF_SAMPLES_DONE], JF_SAMPLES_DONE, 0,
                    EF_MAX_I64, &j->samples_done, "samples >= 0", e) != EF_OK)
            goto fail;
        if (job_finish(q, q->n - 1, 1, hi, hs, ep, ds,
                       csv_has(idx, &row, JF_DONE),
                       csv_has(idx, &row, JF_SAMPLES_DONE), e) != EF_OK) {
            rc = EF_ERR;
            goto fail;
        }
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

/* A time: integer seconds or an ISO-8601 string. Returns 1 if present,
 * 0 if absent or null (when allow_null), EF_ERR on error. */
static int json_time(const json_t *o, const char *key, int required,
                     int allow_null, int64_t *out, const char *file,
                     const char *where, ef_err *e)
{
    json_t *v = json_object_get(o, key);
    if (!v || (allow_null && json_is_null(v))) {
        if (!v && required)
            return ef_fail(e, EF_E_INPUT, "%s: %s: missing required key \"%s\"",
                           file, where, key);
        return 0;
    }
    if (json_is_string(v)) {
        const char *why = NULL;
        char qv[128];
        if (ef_parse_iso8601(json_string_value(v), out, &why) != EF_OK)
            return ef_fail(e, EF_E_INPUT, "%s: %s.%s: \"%s\" is not an "
                           "ISO-8601 time: %s", file, where, key,
                           ef_quote(json_string_value(v), qv, sizeof qv), why);
        if (*out < 0 || *out > EF_MAX_I64)
            return ef_fail(e, EF_E_INPUT, "%s: %s.%s: time before 1970 (expected "
                           "a time in seconds >= 0)", file, where, key);
        return 1;
    }
    if (!json_is_integer(v))
        return ef_fail(e, EF_E_INPUT, "%s: %s.%s: expected seconds (an "
                       "integer) or an ISO-8601 string%s, got %s", file, where,
                       key, allow_null ? " or null" : "", jsonin_type(v));
    return jsonin_int(o, key, 1, 0, EF_MAX_I64, out, file, where, e);
}

/* "placement": [{"node": n, "gpus": [i, ...]}, ...]: where the job runs
 * now. Checked against the cluster later, by the planner. */
static int json_placement(job *j, const json_t *pl, const char *file,
                          const char *where, ef_err *e)
{
    static const char *const keys[] = {"node", "gpus"};
    if (!pl || json_is_null(pl))
        return EF_OK;
    if (!json_is_array(pl))
        return ef_fail(e, EF_E_INPUT, "%s: %s.placement: expected an array "
                       "[{\"node\": n, \"gpus\": [i, ...]}], got %s", file,
                       where, jsonin_type(pl));
    size_t k, total = 0;
    json_t *el;
    json_array_foreach(pl, k, el) {
        char w[96];
        snprintf(w, sizeof w, "%s.placement[%zu]", where, k);
        if (!json_is_object(el))
            return ef_fail(e, EF_E_INPUT, "%s: %s: expected an object, got %s",
                           file, w, jsonin_type(el));
        int64_t node;
        if (jsonin_check_keys(el, keys, 2, file, w, e) != EF_OK ||
            jsonin_int(el, "node", 1, 0, 1 << 20, &node, file, w, e) < 0)
            return EF_ERR;
        json_t *g = json_object_get(el, "gpus");
        if (!json_is_array(g) || json_array_size(g) == 0)
            return ef_fail(e, EF_E_INPUT, "%s: %s.gpus: expected a non-empty "
                           "array of GPU indices", file, w);
        if (json_array_size(g) > 64)
            return ef_fail(e, EF_E_INPUT, "%s: %s.gpus: more than 64 GPUs on "
                           "one node", file, w);
        total += json_array_size(g);
    }
    if (total == 0)
        return EF_OK;
    if (total > (1 << 20))
        return ef_fail(e, EF_E_INPUT, "%s: %s.placement: too many GPUs", file,
                       where);
    j->cur_node = ef_malloc(total * sizeof(int));
    j->cur_gpu = ef_malloc(total * sizeof(int));
    json_array_foreach(pl, k, el) {
        int node = (int)json_integer_value(json_object_get(el, "node"));
        size_t m;
        json_t *x;
        json_array_foreach(json_object_get(el, "gpus"), m, x) {
            if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                json_integer_value(x) > 63)
                return ef_fail(e, EF_E_INPUT, "%s: %s.placement[%zu].gpus[%zu]: "
                               "expected a GPU index from 0 to 63", file, where,
                               k, m);
            j->cur_node[j->ncur] = node;
            j->cur_gpu[j->ncur] = (int)json_integer_value(x);
            j->ncur++;
        }
    }
    return EF_OK;
}

/* "batch_sizes": [64, 128, ...]. Returns 1 if present, 0 if absent or
 * null, EF_ERR on error. */
static int json_batches(job *j, const json_t *o, const char *file,
                        const char *where, ef_err *e)
{
    const json_t *a = json_object_get(o, "batch_sizes");
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_array(a) || json_array_size(a) == 0)
        return ef_fail(e, EF_E_INPUT, "%s: %s.batch_sizes: expected a "
                       "non-empty array of batch sizes such as [64, 128, "
                       "256], got %s", file, where,
                       json_is_array(a) ? "an empty array" : jsonin_type(a));
    if (json_array_size(a) > MAX_BATCHES)
        return ef_fail(e, EF_E_INPUT, "%s: %s.batch_sizes: %zu batch sizes "
                       "(expected at most %d)", file, where,
                       json_array_size(a), MAX_BATCHES);
    j->batches = ef_malloc(json_array_size(a) * sizeof *j->batches);
    size_t k;
    json_t *x;
    json_array_foreach(a, k, x) {
        json_int_t v = json_is_integer(x) ? json_integer_value(x) : 0;
        if (!json_is_integer(x) || v < 1 || v > INT32_MAX) {
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
    return 1;
}

/* ---- how to run a job (for efplan apply) --------------------------------- */

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

/* A string of 1..4095 bytes without NUL bytes; 'what' is its path. */
static int run_string(const json_t *v, const char *file, const char *what,
                      const char **out, ef_err *e)
{
    if (!json_is_string(v))
        return ef_fail(e, EF_E_INPUT, "%s: %s: expected a string, got %s",
                       file, what, jsonin_type(v));
    size_t n = json_string_length(v);
    if (n == 0 || n > 4095)
        return ef_fail(e, EF_E_INPUT, "%s: %s: %s (expected 1 to 4095 bytes)",
                       file, what, n ? "too long" : "empty");
    if (strlen(json_string_value(v)) != n)
        return ef_fail(e, EF_E_INPUT, "%s: %s: contains a NUL byte", file,
                       what);
    *out = json_string_value(v);
    return EF_OK;
}

static int cmp_env(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "command", "workdir", "env", "checkpoint_signal", "grace_seconds". */
static int json_run(job *j, const json_t *o, const char *file,
                    const char *where, ef_err *e)
{
    job_run *r = &j->run;
    char w[512], qv[128];
    const char *s;
    json_t *v = json_object_get(o, "command");
    if (v) {
        if (!json_is_array(v) || json_array_size(v) == 0 ||
            json_array_size(v) > 4096)
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
            if (run_string(x, file, w, &s, e) != EF_OK)
                return EF_ERR;
            r->argv[r->argc++] = ef_strdup(s);
        }
    }
    v = json_object_get(o, "workdir");
    if (v) {
        snprintf(w, sizeof w, "%s.workdir", where);
        if (run_string(v, file, w, &s, e) != EF_OK)
            return EF_ERR;
        r->workdir = ef_strdup(s);
    }
    v = json_object_get(o, "env");
    if (v) {
        if (!json_is_object(v))
            return ef_fail(e, EF_E_INPUT, "%s: %s.env: expected an object of "
                           "strings {\"NAME\": \"value\"}, got %s", file,
                           where, jsonin_type(v));
        r->env = ef_calloc(json_object_size(v) + 1, sizeof *r->env);
        const char *key;
        json_t *x;
        json_object_foreach(v, key, x) {
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
            if (!json_is_string(x))
                return ef_fail(e, EF_E_INPUT, "%s: %s: expected a string, got "
                               "%s", file, w, jsonin_type(x));
            if (strlen(json_string_value(x)) != json_string_length(x))
                return ef_fail(e, EF_E_INPUT, "%s: %s: contains a NUL byte",
                               file, w);
            size_t n = strlen(key) + json_string_length(x) + 2;
            r->env[r->nenv] = ef_malloc(n);
            snprintf(r->env[r->nenv++], n, "%s=%s", key, json_string_value(x));
        }
        qsort(r->env, (size_t)r->nenv, sizeof *r->env, cmp_env);
    }
    v = json_object_get(o, "checkpoint_signal");
    if (v) {
        if (json_is_integer(v)) {
            json_int_t n = json_integer_value(v);
            if (n < 1 || n > 64 || n == SIGKILL || n == SIGSTOP)
                return ef_fail(e, EF_E_INPUT, "%s: %s.checkpoint_signal: %"
                               JSON_INTEGER_FORMAT " (expected a signal number "
                               "from 1 to 64 other than KILL (9) and STOP "
                               "(19))", file, where, n);
            r->signal = (int)n;
        } else if (json_is_string(v)) {
            const char *name = json_string_value(v);
            char full[64];
            snprintf(full, sizeof full, "%s%s",
                     strncmp(name, "SIG", 3) == 0 ? "" : "SIG", name);
            for (int i = 0; i < NSIGNALS && !r->signal; i++)
                if (strcmp(full, signals[i].name) == 0)
                    r->signal = signals[i].sig;
            if (!r->signal) {
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
        } else
            return ef_fail(e, EF_E_INPUT, "%s: %s.checkpoint_signal: expected "
                           "a signal name or number, got %s", file, where,
                           jsonin_type(v));
    }
    int64_t g;
    int hg = jsonin_int(o, "grace_seconds", 0, 0, 86400, &g, file, where, e);
    if (hg < 0)
        return EF_ERR;
    if (hg)
        r->grace = (int)g;
    return EF_OK;
}

int queue_parse_json(job_queue *q, const char *path, const char *buf,
                     size_t len, ef_err *e)
{
    static const char *const top_keys[] = {"format", "version", "jobs",
                                           "apply"};
    memset(q, 0, sizeof *q);
    q->path = ef_strdup(path);
    q->is_json = 1;
    json_t *root = jsonin_parse(path, buf, len, e);
    int cap = 0;
    char where[64], qv[128];
    if (!root)
        goto fail;
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
        static const char *const keys[] = {
            "id", "model", "batch_size", "iterations", "submit_time",
            "deadline", "iterations_done", "num_gpu", "duration",
            "placement", "batch_sizes", "samples", "epochs", "dataset_size",
            "samples_done", "command", "workdir", "env", "checkpoint_signal",
            "grace_seconds"};
        if (jsonin_check_keys(o, keys, 20, path, where, e) != EF_OK)
            goto fail;
        job *j = push_job(q, &cap);
        j->index = (int)i;
        j->line = (long)i;
        json_t *id = json_object_get(o, "id");
        if (!id) {
            ef_fail(e, EF_E_INPUT, "%s: %s: missing required key \"id\"", path,
                    where);
            goto fail;
        }
        if (json_is_integer(id) && json_integer_value(id) >= 0) {
            char tmp[32];
            snprintf(tmp, sizeof tmp, "%" JSON_INTEGER_FORMAT,
                     json_integer_value(id));
            j->id = ef_strdup(tmp);
        } else {
            const char *s;
            if (!json_is_string(id)) {
                ef_fail(e, EF_E_INPUT, "%s: %s.id: expected a string or a "
                        "non-negative integer, got %s", path, where,
                        jsonin_type(id));
                goto fail;
            }
            if (jsonin_str(o, "id", 1, &s, path, where, e) < 0)
                goto fail;
            j->id = ef_strdup(s);
        }
        const char *model;
        if (jsonin_str(o, "model", 1, &model, path, where, e) < 0)
            goto fail;
        j->model = ef_strdup(model);
        int64_t v = 0;
        int hbs = json_batches(j, o, path, where, e);
        if (hbs < 0)
            goto fail;
        int hb = jsonin_int(o, "batch_size", !hbs, 1, INT32_MAX, &v, path,
                            where, e);
        if (hb < 0)
            goto fail;
        j->batch = (long)v;
        /* The work: iterations, samples, or epochs x dataset_size. */
        int64_t ep = 0, ds = 0;
        int hs = jsonin_int(o, "samples", 0, 1, EF_MAX_I64, &j->samples, path,
                            where, e);
        int he = hs < 0 ? -1 : jsonin_int(o, "epochs", 0, 1, 1000000, &ep,
                                          path, where, e);
        int hd2 = he < 0 ? -1 : jsonin_int(o, "dataset_size", 0, 1,
                                           EF_MAX_I64, &ds, path, where, e);
        if (hs < 0 || he < 0 || hd2 < 0)
            goto fail;
        /* Zero iterations is left to check_jobs (a clearer message than
         * a range); anything else must be 1..EF_MAX_I64. */
        json_t *it = json_object_get(o, "iterations");
        int hi = it != NULL;
        if (json_is_integer(it) && json_integer_value(it) == 0)
            j->iterations = 0;
        else if ((hi || !(hs || he || hd2)) &&
                 jsonin_int(o, "iterations", 1, 1, EF_MAX_I64, &j->iterations,
                            path, where, e) < 0)
            goto fail;
        int hdone = jsonin_int(o, "iterations_done", 0, 0, EF_MAX_I64,
                               &j->iterations_done, path, where, e);
        int hsd = hdone < 0 ? -1 : jsonin_int(o, "samples_done", 0, 0,
                                              EF_MAX_I64, &j->samples_done,
                                              path, where, e);
        if (hdone < 0 || hsd < 0 ||
            job_finish(q, q->n - 1, hb, hi, hs, ep, ds, hdone, hsd, e) !=
                EF_OK ||
            json_time(o, "submit_time", 1, 0, &j->submit, path, where, e) < 0)
            goto fail;
        int hd = json_time(o, "deadline", 0, 1, &j->deadline, path, where, e);
        if (hd < 0)
            goto fail;
        j->has_deadline = hd;
        v = 0;
        int hn = jsonin_int(o, "num_gpu", 0, 0, (1 << 20), &v, path, where, e);
        int hdur = hn < 0 ? -1 : jsonin_int(o, "duration", 0, 0, EF_MAX_I64,
                                            &j->duration, path, where, e);
        if (hn < 0 || hdur < 0)
            goto fail;
        j->num_gpu = (int)v;
        q->has_num_gpu |= hn;
        if (json_placement(j, json_object_get(o, "placement"), path, where,
                           e) != EF_OK)
            goto fail;
        q->has_duration |= hdur;
        if (json_run(j, o, path, where, e) != EF_OK)
            goto fail;
    }
    json_decref(root);
    if (check_jobs(q, e) != EF_OK) {
        queue_free(q);
        return EF_ERR;
    }
    return EF_OK;
fail:
    json_decref(root);
    queue_free(q);
    return EF_ERR;
}

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
            return ef_fail(e, EF_E_INPUT, "%s: %s has no curve row for batch "
                           "size %ld (known batch sizes: %s)",
                           queue_where(q, i, JF_BATCH, w, sizeof w), m->name,
                           j->batch, curve_list_batches(m, list, sizeof list));
        if (j->nbatch == 0)
            continue;
        free(j->rows);
        j->rows = ef_malloc((size_t)j->nbatch * sizeof *j->rows);
        for (int k = 0; k < j->nbatch; k++) {
            j->rows[k] = curve_find_row(m, j->batches[k]);
            if (!j->rows[k])
                return ef_fail(e, EF_E_INPUT, "%s: %s has no curve row for "
                               "batch size %ld (known batch sizes: %s)",
                               queue_where(q, i, JF_BATCHES, w, sizeof w),
                               m->name, j->batches[k],
                               curve_list_batches(m, list, sizeof list));
        }
    }
    return EF_OK;
}
