/* xplan.c: read a plan file and its jobs file for apply (see exec.h). */
#include "exec.h"

#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "../planner/jsonin.h"
#include "../planner/util.h"

void exec_place_free(exec_place *pl)
{
    free(pl->node);
    free(pl->gpu);
    memset(pl, 0, sizeof *pl);
}

void exec_place_copy(exec_place *dst, const exec_place *src)
{
    exec_place_free(dst);
    dst->n = src->n;
    if (src->n) {
        dst->node = ef_malloc((size_t)src->n * sizeof *dst->node);
        dst->gpu = ef_malloc((size_t)src->n * sizeof *dst->gpu);
        memcpy(dst->node, src->node, (size_t)src->n * sizeof *dst->node);
        memcpy(dst->gpu, src->gpu, (size_t)src->n * sizeof *dst->gpu);
    }
}

int exec_place_equal(const exec_place *a, const exec_place *b)
{
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (a->node[i] != b->node[i] || a->gpu[i] != b->gpu[i])
            return 0;
    return 1;
}

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

/* File and Slurm name for a job id: [A-Za-z0-9_.-] kept, others '_'; a
 * hash is added when anything was changed, so two ids never collide. */
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

/* A placement [{"gpus": [...], "node": n}] into pl (sorted), checked. */
static int read_place(const exec_plan *p, const json_t *arr, exec_place *pl,
                      const char *file, const char *where, ef_err *e)
{
    if (!json_is_array(arr) || json_array_size(arr) == 0)
        return ef_fail(e, EF_E_INPUT, "%s: %s.placement: expected a non-empty "
                       "array", file, where);
    size_t k, total = 0;
    json_t *el;
    json_array_foreach(arr, k, el) {
        json_t *g = json_object_get(el, "gpus");
        if (!json_is_object(el) || !json_is_array(g))
            return ef_fail(e, EF_E_INPUT, "%s: %s.placement[%zu]: expected "
                           "{\"gpus\": [...], \"node\": n}", file, where, k);
        total += json_array_size(g);
    }
    if (total == 0 || total > (size_t)p->nodes * (size_t)p->gpus_per_node)
        return ef_fail(e, EF_E_INPUT, "%s: %s.placement: %zu GPUs (the "
                       "cluster has %d)", file, where, total,
                       p->nodes * p->gpus_per_node);
    pl->node = ef_malloc(total * sizeof *pl->node);
    pl->gpu = ef_malloc(total * sizeof *pl->gpu);
    json_array_foreach(arr, k, el) {
        char w[256];
        snprintf(w, sizeof w, "%s.placement[%zu]", where, k);
        int64_t node;
        if (jsonin_int(el, "node", 1, 0, p->nodes - 1, &node, file, w, e) < 0)
            return EF_ERR;
        size_t m;
        json_t *x;
        json_array_foreach(json_object_get(el, "gpus"), m, x) {
            if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                json_integer_value(x) >= p->gpus_per_node)
                return ef_fail(e, EF_E_INPUT, "%s: %s.gpus[%zu]: expected a "
                               "GPU index from 0 to %d", file, w, m,
                               p->gpus_per_node - 1);
            int nd = (int)node, g = (int)json_integer_value(x);
            /* insertion into (node, gpu) order; duplicates rejected */
            int i = pl->n;
            while (i > 0 && (pl->node[i - 1] > nd ||
                             (pl->node[i - 1] == nd && pl->gpu[i - 1] > g))) {
                pl->node[i] = pl->node[i - 1];
                pl->gpu[i] = pl->gpu[i - 1];
                i--;
            }
            if (i > 0 && pl->node[i - 1] == nd && pl->gpu[i - 1] == g)
                return ef_fail(e, EF_E_INPUT, "%s: %s.gpus: GPU %d twice",
                               file, w, g);
            pl->node[i] = nd;
            pl->gpu[i] = g;
            pl->n++;
        }
    }
    return EF_OK;
}

static int parse_jobs(exec_plan *p, json_t *arr, const char *file,
                      ef_err *e)
{
    if (!json_is_array(arr))
        return ef_fail(e, EF_E_INPUT, "%s: jobs: expected an array", file);
    p->njobs = (int)json_array_size(arr);
    p->jobs = ef_calloc((size_t)(p->njobs ? p->njobs : 1), sizeof *p->jobs);
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o) {
        char w[64];
        snprintf(w, sizeof w, "jobs[%zu]", i);
        exec_job *j = &p->jobs[i];
        const char *id;
        int64_t end = -1;
        if (!json_is_object(o))
            return ef_fail(e, EF_E_INPUT, "%s: %s: expected an object", file,
                           w);
        if (jsonin_str(o, "id", 1, &id, file, w, e) < 0)
            return EF_ERR;
        j->id = ef_strdup(id);
        if (jsonin_int(o, "iterations", 1, 1, EF_MAX_I64, &j->iterations,
                       file, w, e) < 0 ||
            jsonin_int(o, "iterations_done", 1, 0, EF_MAX_I64,
                       &j->iterations_done, file, w, e) < 0)
            return EF_ERR;
        json_t *pe = json_object_get(o, "planned_end");
        if (pe && !json_is_null(pe) &&
            jsonin_int(o, "planned_end", 1, 0, EF_MAX_I64, &end, file, w,
                       e) < 0)
            return EF_ERR;
        j->planned_end = end;
        safe_name(j->id, j->safe, sizeof j->safe);
    }
    qsort(p->jobs, (size_t)p->njobs, sizeof *p->jobs, cmp_job);
    for (int k = 1; k < p->njobs; k++)
        if (strcmp(p->jobs[k - 1].id, p->jobs[k].id) == 0)
            return ef_fail(e, EF_E_INPUT, "%s: jobs: job \"%s\" twice", file,
                           p->jobs[k].id);
    /* MASTER_PORT: 29500 + hash mod 1000, probing upward past ports given
     * to jobs earlier in id order, so ports are unique and stable. */
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

static int parse_slots(exec_plan *p, json_t *arr, const char *file,
                       ef_err *e)
{
    if (!json_is_array(arr))
        return ef_fail(e, EF_E_INPUT, "%s: slots: expected an array", file);
    p->nslots = (int)json_array_size(arr);
    p->slots = ef_calloc((size_t)(p->nslots ? p->nslots : 1),
                         sizeof *p->slots);
    int total = p->nodes * p->gpus_per_node;
    char *owner = ef_malloc((size_t)total);
    int64_t t = p->now;
    size_t s;
    json_t *o;
    json_array_foreach(arr, s, o) {
        char w[64];
        snprintf(w, sizeof w, "slots[%zu]", s);
        exec_slot *sl = &p->slots[s];
        json_t *al = json_object_get(o, "allocations");
        if (!json_is_object(o) || !json_is_array(al)) {
            free(owner);
            return ef_fail(e, EF_E_INPUT, "%s: %s: expected {\"allocations\": "
                           "[...], \"end\": T, \"start\": T}", file, w);
        }
        if (jsonin_int(o, "start", 1, 0, EF_MAX_I64, &sl->start, file, w,
                       e) < 0 ||
            jsonin_int(o, "end", 1, 0, EF_MAX_I64, &sl->end, file, w, e) < 0) {
            free(owner);
            return EF_ERR;
        }
        if (sl->start != t || sl->end <= sl->start) {
            free(owner);
            return ef_fail(e, EF_E_INPUT, "%s: %s: [%" PRId64 ", %" PRId64 ") "
                           "does not follow the previous slot (expected start %"
                           PRId64 ")", file, w, sl->start, sl->end, t);
        }
        t = sl->end;
        memset(owner, 0, (size_t)total);
        sl->a = ef_calloc(json_array_size(al) + 1, sizeof *sl->a);
        size_t k;
        json_t *x;
        json_array_foreach(al, k, x) {
            char wa[160];
            const char *id;
            snprintf(wa, sizeof wa, "%s.allocations[%zu]", w, k);
            if (!json_is_object(x) ||
                jsonin_str(x, "job", 1, &id, file, wa, e) < 0) {
                free(owner);
                return json_is_object(x) ? EF_ERR
                       : ef_fail(e, EF_E_INPUT, "%s: %s: expected an object",
                                 file, wa);
            }
            int j = exec_plan_find(p, id);
            if (j < 0) {
                free(owner);
                return ef_fail(e, EF_E_INPUT, "%s: %s.job: \"%s\" is not in "
                               "jobs", file, wa, id);
            }
            exec_alloc *a = &sl->a[sl->nalloc++];
            a->job = j;
            if (read_place(p, json_object_get(x, "placement"), &a->place,
                           file, wa, e) != EF_OK) {
                free(owner);
                return EF_ERR;
            }
            for (int m = 0; m < a->place.n; m++) {
                int gid = a->place.node[m] * p->gpus_per_node + a->place.gpu[m];
                if (owner[gid]) {
                    free(owner);
                    return ef_fail(e, EF_E_INPUT, "%s: %s: node %d GPU %d is "
                                   "given to two jobs", file, wa,
                                   a->place.node[m], a->place.gpu[m]);
                }
                owner[gid] = 1;
            }
        }
    }
    free(owner);
    p->end = t;
    return EF_OK;
}

int exec_plan_parse(exec_plan *p, const char *path, const char *buf,
                    size_t len, ef_err *e)
{
    memset(p, 0, sizeof *p);
    p->path = ef_strdup(path);
    snprintf(p->hash, sizeof p->hash, "%016" PRIx64, fnv1a(buf, len));
    json_t *root = jsonin_parse(path, buf, len, e);
    if (!root)
        goto fail;
    const char *fmt, *jf;
    int64_t v;
    json_t *cl = json_object_get(root, "cluster");
    if (!json_is_object(root) ||
        jsonin_str(root, "format", 1, &fmt, path, "", e) < 0)
        goto fail_msg;
    if (strcmp(fmt, "efplan-plan") != 0) {
        ef_fail(e, EF_E_INPUT, "%s: format: \"%s\" (expected \"efplan-plan\": "
                "a plan written by efplan plan --out)", path, fmt);
        goto fail;
    }
    if (jsonin_int(root, "version", 1, 1, 1, &v, path, "", e) < 0)
        goto fail;
    if (!json_is_object(cl)) {
        ef_fail(e, EF_E_INPUT, "%s: cluster: expected an object", path);
        goto fail;
    }
    if (jsonin_int(cl, "nodes", 1, 1, 1 << 20, &v, path, "cluster", e) < 0)
        goto fail;
    p->nodes = (int)v;
    if (jsonin_int(cl, "gpus_per_node", 1, 1, 64, &v, path, "cluster", e) < 0)
        goto fail;
    p->gpus_per_node = (int)v;
    if ((int64_t)p->nodes * p->gpus_per_node > (1 << 20)) {
        ef_fail(e, EF_E_INPUT, "%s: cluster: too many GPUs", path);
        goto fail;
    }
    if (jsonin_int(root, "now", 1, 0, EF_MAX_I64, &p->now, path, "", e) < 0 ||
        jsonin_int(root, "slot_seconds", 1, 1, 86400, &v, path, "", e) < 0)
        goto fail;
    p->slot_seconds = (int)v;
    json_t *jfv = json_object_get(root, "jobs_file");
    if (!json_is_string(jfv)) {
        ef_fail(e, EF_E_INPUT, "%s: jobs_file: expected a string", path);
        goto fail;
    }
    jf = json_string_value(jfv);
    p->jobs_file = ef_strdup(jf);
    if (parse_jobs(p, json_object_get(root, "jobs"), path, e) != EF_OK ||
        parse_slots(p, json_object_get(root, "slots"), path, e) != EF_OK)
        goto fail;
    json_decref(root);
    return EF_OK;
fail_msg:
    ef_fail(e, EF_E_INPUT, "%s: expected a plan file (format efplan-plan)",
            path);
fail:
    json_decref(root);
    exec_plan_free(p);
    return EF_ERR;
}

int exec_plan_attach_jobs(exec_plan *p, const char *jobs_path, ef_err *e)
{
    char alt[4096];
    const char *use = jobs_path;
    struct stat st;
    if (!use) {
        if (p->jobs_file[0] == '\0')
            return ef_fail(e, EF_E_INPUT, "%s: jobs_file is empty (pass --jobs "
                           "FILE)", p->path);
        use = p->jobs_file;
        if (stat(use, &st) != 0 && p->jobs_file[0] != '/') {
            const char *slash = strrchr(p->path, '/');
            if (slash) {
                snprintf(alt, sizeof alt, "%.*s/%s", (int)(slash - p->path),
                         p->path, p->jobs_file);
                if (stat(alt, &st) == 0)
                    use = alt;
            }
        }
        if (stat(use, &st) != 0)
            return ef_fail(e, EF_E_INPUT, "%s: jobs_file \"%s\" not found (the "
                           "plan was made from it; pass --jobs FILE)", p->path,
                           p->jobs_file);
    }
    queue_free(&p->q);
    if (queue_load(&p->q, use, e) != EF_OK)
        return EF_ERR;
    for (int k = 0; k < p->q.n; k++) {
        int j = exec_plan_find(p, p->q.jobs[k].id);
        if (j < 0)
            continue;
        if (p->jobs[j].in)
            return ef_fail(e, EF_E_INPUT, "%s: job \"%s\" twice", use,
                           p->jobs[j].id);
        p->jobs[j].in = &p->q.jobs[k];
    }
    for (int j = 0; j < p->njobs; j++) {
        if (!p->jobs[j].in)
            return ef_fail(e, EF_E_INPUT, "%s: job \"%s\" of plan %s is not in "
                           "it (pass the jobs file the plan was made from with "
                           "--jobs)", use, p->jobs[j].id, p->path);
        if (p->jobs[j].in->iterations != p->jobs[j].iterations)
            return ef_fail(e, EF_E_INPUT, "%s: job \"%s\" has %" PRId64
                           " iterations, the plan says %" PRId64 " (not the "
                           "jobs file the plan was made from?)", use,
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
