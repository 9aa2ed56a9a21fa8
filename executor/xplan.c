/* xplan.c: read a plan file and its jobs file for apply (see exec.h). */
#include "executor/exec.h"

#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"

int exec_place_nodes(const exec_place *pl, int *nodes)
{
    int k = 0;
    for (int i = 0; i < pl->n; i++)
        if (k == 0 || nodes[k - 1] != pl->node[i])
            nodes[k++] = pl->node[i];
    return k;
}

const char *exec_place_gpus(const exec_place *pl, int node, char *dst,
                            size_t len)
{
    size_t o = 0;
    dst[0] = '\0';
    for (int i = 0; i < pl->n && o < len; i++)
        if (pl->node[i] == node)
            o += (size_t)snprintf(dst + o, len - o, "%s%d", o ? "," : "",
                                  pl->gpu[i]);
    return dst;
}

const char *exec_place_str(const exec_place *pl, char *dst, size_t len)
{
    size_t o = 0;
    dst[0] = '\0';
    if (pl->n == 0) {
        snprintf(dst, len, "nowhere");
        return dst;
    }
    for (int i = 0; i < pl->n && o < len;) {
        int node = pl->node[i];
        char g[512];
        exec_place_gpus(pl, node, g, sizeof g);
        o += (size_t)snprintf(dst + o, len - o, "%snode %d GPUs %s",
                              o ? "; " : "", node, g);
        while (i < pl->n && pl->node[i] == node)
            i++;
    }
    return dst;
}

static void free_slots(exec_plan *p)
{
    for (int s = 0; s < p->nslots; s++) {
        for (int a = 0; a < p->slots[s].nalloc; a++)
            exec_place_free(&p->slots[s].a[a].place);
        free(p->slots[s].a);
    }
    free(p->slots);
    p->slots = NULL;
    p->nslots = 0;
}

void exec_plan_free(exec_plan *p)
{
    free_slots(p);
    for (int j = 0; j < p->njobs; j++)
        free(p->jobs[j].id);
    free(p->jobs);
    free(p->path);
    free(p->jobs_file);
    queue_free(&p->q);
    memset(p, 0, sizeof *p);
}

int exec_plan_find(const exec_plan *p, const char *id)
{
    int lo = 0, hi = p->njobs - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(p->jobs[mid].id, id);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

int exec_plan_slot_at(const exec_plan *p, int64_t t)
{
    int lo = 0, hi = p->nslots - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (t < p->slots[mid].start)
            hi = mid - 1;
        else if (t >= p->slots[mid].end)
            lo = mid + 1;
        else
            return mid;
    }
    return -1;
}

static int cmp_job(const void *a, const void *b)
{
    return strcmp(((const exec_job *)a)->id, ((const exec_job *)b)->id);
}

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

void exec_plan_hash(const char *buf, size_t len, char out[17])
{
    snprintf(out, 17, "%016" PRIx64, fnv1a(buf, len));
}

/* File and Slurm name for a job id: [A-Za-z0-9_.-] kept, others '_', at
 * most 48 bytes; when anything was changed (or the id starts with '.'),
 * '~' and 32 bits of the id's hash are added. An id kept as is never
 * holds '~', so it cannot meet a changed one; two changed ids meet only
 * when their first 48 bytes map alike and their hashes collide, which
 * check_safe_names refuses. */
static void safe_name(const char *id, char *dst, size_t len)
{
    size_t n = strlen(id), o = 0;
    int changed = n > 48 || id[0] == '.';
    for (size_t i = 0; i < n && o + 1 < len && o < 48; i++) {
        char c = id[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
        dst[o++] = ok ? c : '_';
        changed |= !ok;
    }
    dst[o] = '\0';
    if (changed)
        snprintf(dst + o, len - o, "~%08x",
                 (unsigned)(fnv1a(id, n) & 0xffffffffu));
}

/* qsort: exec_job pointers by safe name, then id. */
static int cmp_safe(const void *a, const void *b)
{
    const exec_job *ja = *(const exec_job *const *)a;
    const exec_job *jb = *(const exec_job *const *)b;
    int c = strcmp(ja->safe, jb->safe);
    return c ? c : strcmp(ja->id, jb->id);
}

/* EF_OK when no two jobs of p (sorted by id) share a safe name, else
 * EF_E_INPUT naming the first such pair (in safe-name, then id order). */
static int check_safe_names(const exec_plan *p, ef_err *e)
{
    const exec_job **v = ef_malloc(((size_t)p->njobs + 1) * sizeof *v);
    for (int k = 0; k < p->njobs; k++)
        v[k] = &p->jobs[k];
    qsort(v, (size_t)p->njobs, sizeof *v, cmp_safe);
    int rc = EF_OK;
    for (int k = 1; k < p->njobs && rc == EF_OK; k++) {
        const exec_job *a = v[k - 1], *b = v[k];
        if (strcmp(a->safe, b->safe) == 0)
            rc = ef_fail(e, EF_E_INPUT, "%s: jobs \"%s\" and \"%s\" would "
                         "share the file and Slurm name \"%s\" (an id longer "
                         "than 48 bytes, or with bytes other than letters, "
                         "digits, '_', '.' and '-', is cut to 48 bytes plus "
                         "a 32-bit hash; rename one)", p->path, a->id, b->id,
                         a->safe);
    }
    free(v);
    return rc;
}

/* Sort p's jobs by id, check their safe names (each set by safe_name)
 * and give each its MASTER_PORT: 29500 + hash mod 1000, probing upward
 * past ports given to jobs earlier in id order, so ports are unique and
 * stable. */
static int name_jobs(exec_plan *p, ef_err *e)
{
    qsort(p->jobs, (size_t)p->njobs, sizeof *p->jobs, cmp_job);
    if (check_safe_names(p, e) != EF_OK)
        return EF_ERR;
    for (int k = 0; k < p->njobs; k++) {
        int port = 29500 + (int)(fnv1a(p->jobs[k].id,
                                       strlen(p->jobs[k].id)) % 1000);
        for (int again = 1; again;) {
            again = 0;
            for (int m = 0; m < k; m++)
                if (p->jobs[m].port == port) {
                    port = port + 1 > 30499 + p->njobs ? 29500 : port + 1;
                    again = 1;
                }
        }
        p->jobs[k].port = port;
    }
    return EF_OK;
}

int exec_plan_of_queue(exec_plan *p, const char *path, job_queue *q,
                       int nodes, int gpus_per_node, int slot, ef_err *e)
{
    memset(p, 0, sizeof *p);
    p->path = ef_strdup(path);
    p->nodes = nodes;
    p->gpus_per_node = gpus_per_node;
    p->slot_seconds = slot;
    p->jobs_file = ef_strdup("");
    p->q = *q;
    memset(q, 0, sizeof *q);
    p->njobs = p->q.n;
    p->jobs = ef_calloc((size_t)(p->njobs ? p->njobs : 1), sizeof *p->jobs);
    for (int i = 0; i < p->njobs; i++) {
        const job *in = &p->q.jobs[i];
        exec_job *j = &p->jobs[i];
        j->id = ef_strdup(in->id);
        j->iterations = in->iterations;
        j->iterations_done = in->iterations_done;
        j->planned_end = -1;
        j->batch_size = in->batch;
        j->deadline = in->has_deadline ? in->deadline : -1;
        j->decision = PLAN_PENDING; /* the service knows; apply only */
        j->in = in;
        safe_name(j->id, j->safe, sizeof j->safe);
    }
    if (name_jobs(p, e) != EF_OK) {
        exec_plan_free(p);
        return EF_ERR;
    }
    return EF_OK;
}

int exec_plan_parse(exec_plan *p, const char *path, const char *buf,
                    size_t len, ef_err *e)
{
    memset(p, 0, sizeof *p);
    plan_doc d;
    if (plan_doc_parse(&d, path, buf, len, e) != EF_OK)
        return EF_ERR;
    p->path = ef_strdup(path);
    exec_plan_hash(buf, len, p->hash);
    p->nodes = d.cluster.nodes;
    p->gpus_per_node = d.cluster.gpus_per_node;
    p->now = d.now;
    p->slot_seconds = d.slot_seconds;
    p->jobs_file = ef_strdup(d.jobs_file);
    p->njobs = d.njobs;
    p->jobs = ef_calloc((size_t)(d.njobs ? d.njobs : 1), sizeof *p->jobs);
    for (int i = 0; i < d.njobs; i++) {
        const plan_doc_job *dj = &d.jobs[i];
        exec_job *j = &p->jobs[i];
        j->id = ef_strdup(dj->id);
        j->iterations = dj->iterations;
        j->iterations_done = dj->iterations_done;
        j->planned_end = dj->planned_end;
        j->deadline = dj->deadline;
        j->decision = (plan_decision)dj->decision;
        j->batch_size = dj->batch_size;
        safe_name(j->id, j->safe, sizeof j->safe);
    }
    if (name_jobs(p, e) != EF_OK) {
        plan_doc_free(&d);
        exec_plan_free(p);
        return EF_ERR;
    }
    p->nslots = d.nslots;
    p->slots = ef_calloc((size_t)(d.nslots ? d.nslots : 1), sizeof *p->slots);
    p->end = p->now;
    for (int s = 0; s < d.nslots; s++) {
        const plan_doc_slot *ds = &d.slots[s];
        exec_slot *sl = &p->slots[s];
        sl->start = ds->start;
        sl->end = ds->end;
        sl->nalloc = ds->nalloc;
        sl->a = ef_calloc((size_t)ds->nalloc + 1, sizeof *sl->a);
        for (int a = 0; a < ds->nalloc; a++) {
            sl->a[a].job = exec_plan_find(p, ds->a[a].job);
            exec_place_copy(&sl->a[a].place, &ds->a[a].place);
        }
        p->end = sl->end;
    }
    plan_doc_free(&d);
    return EF_OK;
}

int exec_plan_attach_jobs(exec_plan *p, const char *jobs_path, ef_err *e)
{
    char *found = NULL; /* the plan's jobs_file, found (heap) */
    const char *use = jobs_path;
    if (!use) {
        if (p->jobs_file[0] == '\0')
            return ef_fail(e, EF_E_INPUT, "%s: jobs_file is empty (pass --jobs "
                           "FILE)", p->path);
        use = found = plan_jobs_file_find(p->path, p->jobs_file);
        if (!use)
            return ef_fail(e, EF_E_INPUT, "%s: jobs_file \"%s\" not found, "
                           "beside the plan file nor here (the plan was made "
                           "from it; pass --jobs FILE)", p->path,
                           p->jobs_file);
    }
    queue_free(&p->q);
    int rc = queue_load(&p->q, use, e);
    free(found);
    if (rc != EF_OK)
        return EF_ERR;
    for (int k = 0; k < p->q.n; k++) {
        int j = exec_plan_find(p, p->q.jobs[k].id);
        if (j < 0)
            continue;
        if (p->jobs[j].in)
            return ef_fail(e, EF_E_INPUT, "%s: job \"%s\" twice", p->q.path,
                           p->jobs[j].id);
        p->jobs[j].in = &p->q.jobs[k];
    }
    for (int j = 0; j < p->njobs; j++) {
        if (!p->jobs[j].in)
            return ef_fail(e, EF_E_INPUT, "%s: job \"%s\" of plan %s is not in "
                           "it (pass the jobs file the plan was made from with "
                           "--jobs)", p->q.path, p->jobs[j].id,
                           p->path);
        if (p->jobs[j].in->iterations != p->jobs[j].iterations)
            return ef_fail(e, EF_E_INPUT, "%s: job \"%s\" has %" PRId64
                           " iterations, the plan says %" PRId64 " (not the "
                           "jobs file the plan was made from?)", p->q.path,
                           p->jobs[j].id, p->jobs[j].in->iterations,
                           p->jobs[j].iterations);
    }
    return EF_OK;
}

int exec_plan_load(exec_plan *p, const char *path, const char *jobs_path,
                   ef_err *e)
{
    char *buf;
    size_t len;
    memset(p, 0, sizeof *p);
    if (ef_read_file(path, &buf, &len, e) != EF_OK)
        return EF_ERR;
    int rc = exec_plan_parse(p, path, buf, len, e);
    free(buf);
    if (rc != EF_OK)
        return EF_ERR;
    if (exec_plan_attach_jobs(p, jobs_path, e) != EF_OK) {
        exec_plan_free(p);
        return EF_ERR;
    }
    return EF_OK;
}
