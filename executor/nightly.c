/* nightly.c: what an efplan nightly state folder remembers from night to
 * night, and the night's queue merged from it (see exec.h). */
#include "executor/exec.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "common/util.h"

/* m->apply's object 'key', created empty when missing (an array when
 * 'arr'). */
static json_t *member(json_t *o, const char *key, int arr)
{
    json_t *v = json_object_get(o, key);
    if (!v || (arr ? !json_is_array(v) : !json_is_object(v))) {
        v = arr ? json_array() : json_object();
        json_object_set_new(o, key, v);
    }
    return v;
}

static json_t *nightly(const exec_night *m)
{
    return member(m->apply, "nightly", 0);
}

/* 1 if the array of strings 'arr' holds 's'. */
static int has_str(const json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
        if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
            return 1;
    return 0;
}

/* 1 if the array of objects 'arr' holds one whose "id" is 's'. */
static int has_id(const json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        json_t *id = json_object_get(v, "id");
        if (json_is_string(id) && strcmp(json_string_value(id), s) == 0)
            return 1;
    }
    return 0;
}

static int cmp_json_str(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a),
                  json_string_value(*(json_t *const *)b));
}

/* Sort an array of strings in place. */
static void sort_strs(json_t *arr)
{
    size_t n = json_array_size(arr);
    json_t **v = ef_malloc((n + 1) * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    qsort(v, n, sizeof *v, cmp_json_str);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, v[i]);
    free(v);
}

int exec_night_load(exec_night *m, const char *path, ef_err *e)
{
    memset(m, 0, sizeof *m);
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT) {
        m->apply = json_object();
        return EF_OK;
    }
    if (queue_load(&m->q, path, e) != EF_OK)
        return EF_ERR;
    char *buf;
    size_t len;
    if (ef_read_file(path, &buf, &len, e) != EF_OK)
        return EF_ERR;
    json_t *root = json_loadb(buf, len, 0, NULL);
    free(buf);
    json_t *ap = json_object_get(root, "apply");
    m->apply = ap ? json_deep_copy(ap) : json_object();
    json_decref(root);
    json_t *fin = json_object_get(m->apply, "finished");
    json_t *nt = json_object_get(m->apply, "nightly");
    size_t i;
    json_t *v;
    json_array_foreach(fin, i, v)
        if (!json_is_string(v))
            return ef_fail(e, EF_E_INPUT, "%s: apply.finished[%zu]: expected "
                           "a job id", path, i);
    if ((fin && !json_is_array(fin)) || (nt && !json_is_object(nt)))
        return ef_fail(e, EF_E_INPUT, "%s: apply: not what efplan nightly "
                       "writes (finished: an array, nightly: an object)",
                       path);
    return EF_OK;
}

void exec_night_free(exec_night *m)
{
    queue_free(&m->q);
    json_decref(m->apply);
    memset(m, 0, sizeof *m);
}

char *exec_night_text(const exec_night *m)
{
    return queue_write_json(m->q.jobs, m->q.n, m->apply);
}

static void copy_member(const json_t *o, const char *key, char *dst,
                        size_t len)
{
    const json_t *v = json_object_get(o, key);
    snprintf(dst, len, "%s", json_is_string(v) ? json_string_value(v) : "");
}

void exec_night_last(const exec_night *m, exec_night_info *out)
{
    memset(out, 0, sizeof *out);
    json_t *n = json_object_get(json_object_get(m->apply, "nightly"),
                                "night");
    if (!json_is_object(n))
        return;
    out->has = 1;
    copy_member(n, "plan", out->plan, sizeof out->plan);
    copy_member(n, "jobs", out->jobs, sizeof out->jobs);
    out->start = (int64_t)json_integer_value(json_object_get(n, "start"));
    out->until = (int64_t)json_integer_value(json_object_get(n, "until"));
    out->done = json_is_true(json_object_get(n, "done"));
}

/* The memory's job with id 'id', or NULL. */
static const job *mem_job(const exec_night *m, const char *id)
{
    for (int i = 0; i < m->q.n; i++)
        if (strcmp(m->q.jobs[i].id, id) == 0)
            return &m->q.jobs[i];
    return NULL;
}

static int in_queue(const job_queue *f, const char *id)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->jobs[i].id, id) == 0)
            return 1;
    return 0;
}

void exec_night_merge(const exec_night *m, const job_queue *f,
                      exec_night_merge_res *r)
{
    memset(r, 0, sizeof *r);
    int cap = m->q.n + (f ? f->n : 0) + 1;
    r->jobs = ef_calloc((size_t)cap, sizeof *r->jobs);
    json_t *fin = member(m->apply, "finished", 1);
    json_t *failed = member(m->apply, "failed", 1);
    json_t *ids = member(nightly(m), "queue_ids", 1);
    for (int i = 0; f && i < f->n; i++) {
        const job *in = &f->jobs[i];
        if (has_str(fin, in->id) || has_id(failed, in->id)) {
            if (r->skipped++ == 0)
                snprintf(r->skipped_first, sizeof r->skipped_first, "%s",
                         in->id);
            continue;
        }
        job t = *in;
        const job *old = mem_job(m, in->id);
        if (old) {
            job_advance(&t, old->iterations_done);
            if (t.in_samples && old->samples_done > t.samples_done) {
                t.samples_done = old->samples_done < t.samples
                                     ? old->samples_done : t.samples - 1;
                t.iterations_done = t.samples_done / t.batch;
            }
            t.cur = old->cur;
            t.promised = t.promised || old->promised;
            t.owed = old->owed;
            r->carried++;
        } else {
            r->added++;
        }
        r->jobs[r->n++] = t;
    }
    for (int i = 0; i < m->q.n; i++) {
        const job *old = &m->q.jobs[i];
        if (f && in_queue(f, old->id))
            continue;
        if (f && has_str(ids, old->id)) {
            if (r->dropped++ == 0)
                snprintf(r->dropped_first, sizeof r->dropped_first, "%s",
                         old->id);
            continue;
        }
        r->jobs[r->n++] = *old;
        r->carried++;
    }
}

/* Mark promised every job of m->q that plan p (its jobs by id) admitted:
 * 'admitted' says whether the k-th plan job is, 'id' its id. */
static void mark_promised(exec_night *m, int n, const char *(*id)(const void *,
                          int), int (*admitted)(const void *, int),
                          const void *p)
{
    for (int k = 0; k < n; k++) {
        if (!admitted(p, k))
            continue;
        for (int i = 0; i < m->q.n; i++)
            if (strcmp(m->q.jobs[i].id, id(p, k)) == 0)
                m->q.jobs[i].promised = 1;
    }
}

static const char *plan_id(const void *p, int k)
{
    return ((const plan *)p)->jobs[k].in->id;
}

static int plan_admitted(const void *p, int k)
{
    return ((const plan *)p)->jobs[k].decision == PLAN_ADMITTED;
}

static const char *exec_id(const void *p, int k)
{
    return ((const exec_plan *)p)->jobs[k].id;
}

static int exec_admitted(const void *p, int k)
{
    return ((const exec_plan *)p)->jobs[k].decision == PLAN_ADMITTED;
}

/* Replace m->q by the jobs[0..n) (deep copies, through the queue's own
 * writer and reader). */
static int set_jobs(exec_night *m, const job *jobs, int n, ef_err *e)
{
    char *text = queue_write_json(jobs, n, NULL);
    job_queue q;
    int rc = queue_parse_json(&q, m->q.path ? m->q.path : "queue.json",
                              text, strlen(text), e);
    free(text);
    if (rc != EF_OK) {
        queue_free(&q);
        return EF_ERR;
    }
    queue_free(&m->q);
    m->q = q;
    return EF_OK;
}

void exec_night_begin(exec_night *m, const job_queue *q, const plan *p,
                      const job_queue *f, const char *plan_path,
                      const char *jobs, int64_t start, int64_t until,
                      const char *queue_error)
{
    ef_err e = {0};
    if (set_jobs(m, q->jobs, q->n, &e) == EF_OK)
        mark_promised(m, p->njobs, plan_id, plan_admitted, p);
    json_t *nt = nightly(m);
    if (f) {
        json_t *ids = json_array();
        for (int i = 0; i < f->n; i++)
            json_array_append_new(ids, json_string(f->jobs[i].id));
        sort_strs(ids);
        json_object_set_new(nt, "queue_ids", ids);
    }
    json_object_set_new(nt, "night", json_pack(
        "{s:s,s:s,s:I,s:I,s:b,s:o}", "plan", plan_path, "jobs", jobs,
        "start", (json_int_t)start, "until", (json_int_t)until, "done", 0,
        "queue_error", queue_error ? json_string(queue_error)
                                   : json_null()));
}

int exec_night_close(exec_night *m, const char *state, const exec_plan *p,
                     ef_err *e)
{
    json_t *night = json_object_get(nightly(m), "night");
    if (json_is_object(night))
        json_object_set_new(night, "done", json_true());
    int rc = EF_OK;
    if (state) {
        job_queue q;
        char *buf = NULL;
        size_t len;
        if (queue_load(&q, state, e) != EF_OK ||
            ef_read_file(state, &buf, &len, e) != EF_OK) {
            queue_free(&q);
            rc = EF_ERR;
        } else {
            json_t *root = json_loadb(buf, len, 0, NULL);
            json_t *ap = json_object_get(root, "apply");
            json_t *fin = member(m->apply, "finished", 1);
            json_t *failed = member(m->apply, "failed", 1);
            size_t i;
            json_t *v;
            json_array_foreach(json_object_get(ap, "finished"), i, v)
                if (json_is_string(v) && !has_str(fin, json_string_value(v)))
                    json_array_append(fin, v);
            sort_strs(fin);
            json_array_foreach(json_object_get(ap, "failed"), i, v) {
                json_t *id = json_object_get(v, "id");
                if (json_is_string(id) &&
                    !has_id(failed, json_string_value(id)))
                    json_array_append(failed, v);
            }
            json_decref(root);
            /* keep the memory's name for its queue */
            free(q.path);
            q.path = m->q.path ? ef_strdup(m->q.path) : NULL;
            queue_free(&m->q);
            m->q = q;
        }
        free(buf);
    }
    if (p)
        mark_promised(m, p->njobs, exec_id, exec_admitted, p);
    return rc;
}
