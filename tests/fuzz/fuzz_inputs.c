/*
 * fuzz_inputs.c: libFuzzer target for every input reader.
 *
 * The first byte of the input chooses the reader and the buffer mode:
 *
 *     sel % 7:  0 queue_parse_csv    1 queue_parse_json
 *               2 curve_parse_csv    3 curve_parse_json
 *               4 cluster_parse_csv  5 cluster_parse_json
 *               6 plan_doc_parse (the plan file, versions 1 and 2)
 *     (sel / 7) % 2:  0 the rest is copied into a buffer of exactly its
 *                     length (so ASan catches any read past len);
 *                     1 into a buffer with a NUL after it, as
 *                     ef_read_file gives.
 *
 * With EFPLAN_FUZZ_READER set to one reader's name (queue_csv,
 * queue_json, curve_csv, curve_json, cluster_csv, cluster_json,
 * plan_json) every
 * input goes to that reader; the first byte still picks the buffer mode,
 * so the seeds of tests/fuzz/corpus/READER/ work in both ways.
 *
 * The rest of the input is the file. What parses is checked against the
 * readers' documented guarantees (a violation is __builtin_trap, which the
 * fuzzer reports as a crash) and freed; what fails must fail with one line
 * of input-error text that starts with the file name. Parsed queues are
 * also resolved against a small fixed curve set (which also checks the
 * work/throughput limit), and queue_where is run on their fields. A plan
 * that parses is checked against what the reader promises (slots
 * consecutive from now, allocations of known jobs inside the cluster, no
 * GPU twice in a slot), written back in both versions and read again:
 * the same plan (plan_doc_equal), each writing its own bytes again.
 *
 * Build and run: make fuzz FUZZ_SECONDS=300 (every reader), make
 * fuzz-each FUZZ_SECONDS=60 (each reader in turn; see tests/fuzz/run.sh).
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/util.h"
#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "planner/planio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                         \
    do {                                                                    \
        if (!(cond))                                                        \
            __builtin_trap();                                               \
    } while (0)

/* ---- a fixed curve set for queue_resolve --------------------------------- */

static curve_set fixed;

static void fixed_init(void)
{
    static const char bert[] = "global_batch_size,1,2,4,8\n"
                               "64,6.0,8.6,10.3,11.0\n"
                               "128,3.5,5.6,8.4,9.9\n";
    static const char gpt2[] = "{\"rows\": [{\"batch_size\": 128, "
                               "\"throughput\": {\"1\": 7.3, \"2\": 11.9, "
                               "\"4\": null, \"8\": 18.7}}]}";
    ef_err e = {0};
    if (fixed.nmodels)
        return;
    fixed.dir = ef_strdup("fixed");
    fixed.models = ef_calloc(2, sizeof *fixed.models);
    if (curve_parse_csv(&fixed.models[0], "bert", "fixed/bert.csv", bert,
                        strlen(bert), &e) != EF_OK ||
        curve_parse_json(&fixed.models[1], "gpt2", "fixed/gpt2.json", gpt2,
                         strlen(gpt2), &e) != EF_OK)
        __builtin_trap();
    fixed.nmodels = 2;
}

/* ---- invariants ------------------------------------------------------------ */

/* An error: an input error, one line of printable text (or UTF-8), that
 * starts with the file name. */
static void check_error(const ef_err *e, const char *path)
{
    CHECK(e->kind == EF_E_INPUT);
    size_t n = strnlen(e->msg, sizeof e->msg);
    CHECK(n > 0 && n < sizeof e->msg);
    CHECK(strncmp(e->msg, path, strlen(path)) == 0);
    for (size_t i = 0; i < n; i++)
        CHECK((unsigned char)e->msg[i] >= 0x20 && e->msg[i] != 0x7f);
}

static void check_row(const curve_row *r)
{
    CHECK(r->batch >= 1 && r->batch <= INT32_MAX);
    for (int i = 0; i < CURVE_MAX_LEVELS; i++) {
        CHECK(isfinite(r->cell[i]) &&
              (r->cell[i] == 0.0 || (r->cell[i] >= CURVE_MIN_TPUT &&
                                     r->cell[i] <= CURVE_MAX_TPUT)));
        CHECK(r->measured[i] == 0 || r->measured[i] == 1);
        CHECK(r->measured[i] || r->cell[i] == 0.0);
    }
    CHECK(r->nusable >= 1 && r->nusable <= CURVE_MAX_LEVELS);
    for (int k = 0; k < r->nusable; k++) {
        int g = r->usable_gpus[k];
        double t = r->usable_tput[k];
        CHECK(ef_is_pow2(g) && g <= (1 << (CURVE_MAX_LEVELS - 1)));
        CHECK(isfinite(t) && t > 0.0);
        if (k > 0) {
            CHECK(g > r->usable_gpus[k - 1]);
            CHECK(t > r->usable_tput[k - 1]);
        }
        CHECK(curve_tput(r, g) == t);
        CHECK(curve_max_usable(r, g) == g);
    }
    /* The ladder is what curve_usable says, also under every cap. */
    int gpus[CURVE_MAX_LEVELS];
    double tput[CURVE_MAX_LEVELS];
    CHECK(curve_usable(r, INT_MAX, gpus, tput) == r->nusable);
    for (int cap = 1; cap <= (1 << (CURVE_MAX_LEVELS - 1)); cap *= 2) {
        int n = curve_usable(r, cap, gpus, tput);
        CHECK(n >= 0 && n <= r->nusable);
        for (int k = 0; k < n; k++)
            CHECK(gpus[k] == r->usable_gpus[k] && gpus[k] <= cap &&
                  tput[k] == r->usable_tput[k]);
        CHECK(n == r->nusable || r->usable_gpus[n] > cap);
        CHECK(curve_max_usable(r, cap) == (n ? gpus[n - 1] : 0));
    }
    /* The first usable size is the first runnable cell, and the last one
     * is the peak. */
    double peak = 0.0;
    int first = -1;
    for (int i = 0; i < CURVE_MAX_LEVELS; i++) {
        if (r->cell[i] > 0.0 && first < 0)
            first = i;
        if (r->cell[i] > peak)
            peak = r->cell[i];
    }
    CHECK(first >= 0 && r->usable_gpus[0] == (1 << first));
    CHECK(r->usable_tput[r->nusable - 1] == peak);
}

static void check_model(const curve_model *m, const char *model)
{
    CHECK(m->name && strcmp(m->name, model) == 0);
    CHECK(m->nrows >= 1 && m->rows);
    for (int i = 0; i < m->nrows; i++) {
        check_row(&m->rows[i]);
        if (i > 0)
            CHECK(m->rows[i].batch > m->rows[i - 1].batch);
        CHECK(curve_find_row(m, m->rows[i].batch) == &m->rows[i]);
    }
    char list[256];
    curve_list_batches(m, list, sizeof list);
    CHECK(strlen(list) < sizeof list);
}

static void check_queue(job_queue *q, const char *path, int is_json)
{
    char w[600];
    CHECK(q->n >= 0 && (q->n == 0 || q->jobs)); /* empty queues are valid */
    CHECK(q->is_json == is_json);
    CHECK(q->path && strcmp(q->path, path) == 0);
    for (int i = 0; i < q->n; i++) {
        const job *j = &q->jobs[i];
        CHECK(j->id && j->id[0] && strlen(j->id) <= 255);
        CHECK(j->model && j->model[0] && strlen(j->model) <= 255);
        CHECK(j->batch >= 1 && j->batch <= INT32_MAX);
        CHECK(j->iterations > 0 && j->iterations <= EF_MAX_I64);
        CHECK(j->iterations_done >= 0 && j->iterations_done < j->iterations);
        CHECK(j->submit >= 0 && j->submit <= EF_MAX_I64);
        CHECK(j->has_deadline == 0 || j->has_deadline == 1);
        if (j->has_deadline)
            CHECK(j->deadline > j->submit && j->deadline <= EF_MAX_I64);
        CHECK(j->num_gpu >= 0 && j->num_gpu <= (1 << 20));
        CHECK(j->duration >= 0 && j->duration <= EF_MAX_I64);
        CHECK(j->curve == NULL);
        if (is_json)
            CHECK(j->index >= i);
        else
            CHECK(j->line >= 2 && (i == 0 || j->line > q->jobs[i - 1].line));
        /* Every field has a place that names the file. */
        if (i < 64 || i == q->n - 1)
            for (int f = 0; f < JF_NFIELDS; f++) {
                queue_where(q, i, (job_field)f, w, sizeof w);
                CHECK(strncmp(w, path, strlen(path)) == 0);
                CHECK(strlen(w) > strlen(path));
            }
    }
    /* Ids are unique (checked pairwise on small queues). */
    if (q->n <= 64)
        for (int a = 0; a < q->n; a++)
            for (int b = a + 1; b < q->n; b++)
                CHECK(strcmp(q->jobs[a].id, q->jobs[b].id) != 0);
    /* Resolve against the fixed curves: either every job gets its row,
     * or one clean error names the file. */
    ef_err e = {0};
    if (queue_resolve(q, &fixed, &e) == EF_OK) {
        for (int i = 0; i < q->n; i++) {
            const job *j = &q->jobs[i];
            CHECK(j->curve && j->curve->batch == j->batch);
            const curve_model *m = curve_find_model(&fixed, j->model);
            CHECK(m && j->curve >= m->rows && j->curve < m->rows + m->nrows);
            /* the work left takes at most JOB_MAX_ALONE_SECONDS alone */
            CHECK((double)(j->iterations - j->iterations_done) <=
                  j->curve->usable_tput[0] * JOB_MAX_ALONE_SECONDS);
        }
    } else {
        check_error(&e, path);
    }
}

static void check_cluster(const cluster *c)
{
    CHECK(c->nodes >= 1);
    CHECK(c->gpus_per_node >= 1 && c->gpus_per_node <= 64 &&
          ef_is_pow2(c->gpus_per_node));
    CHECK((int64_t)c->nodes * c->gpus_per_node == c->total_gpus);
    CHECK(c->total_gpus <= CLUSTER_MAX_GPUS);
    CHECK(c->switches >= 1);
    CHECK(c->cpus_per_node >= 0 && c->mem_per_node >= 0);
    CHECK(c->name[0] == 'n' && strlen(c->name) < sizeof c->name);
}

/* A plan that parsed: what plan_doc_parse promises, and both versions
 * written back read as the same plan. */
static void check_plan(const plan_doc *d, const char *path)
{
    int G = d->cluster.gpus_per_node, N = d->cluster.nodes;
    CHECK(d->version == PLAN_V1 || d->version == PLAN_V2);
    CHECK(G >= 1 && N >= 1 && (int64_t)G * N <= (1 << 20));
    int64_t t = d->now;
    for (int s = 0; s < d->nslots; s++) {
        const plan_doc_slot *sl = &d->slots[s];
        CHECK(sl->start == t && sl->end > sl->start);
        t = sl->end;
        for (int a = 0; a < sl->nalloc; a++) {
            const plan_doc_alloc *al = &sl->a[a];
            CHECK(al->jobi >= 0 && al->jobi < d->njobs);
            CHECK(strcmp(d->jobs[al->jobi].id, al->job) == 0);
            CHECK(al->gpus == al->place.n && al->gpus >= 1);
            for (int k = 0; k < al->place.n; k++)
                CHECK(al->place.node[k] >= 0 && al->place.node[k] < N &&
                      al->place.gpu[k] >= 0 && al->place.gpu[k] < G);
        }
    }
    if (d->version == PLAN_V2)
        CHECK(d->nslot_ends == d->nslots);
    /* each version written reads back as a plan that writes the same
     * bytes again, and the two versions hold the same plan (not d's
     * values: the writer rounds some numbers) */
    plan_doc back[2];
    for (int v = PLAN_V1; v <= PLAN_V2; v++) {
        plan_doc c = *d;
        c.version = v;
        size_t n, n2;
        char *text = plan_doc_json(&c, &n);
        plan_doc *b = &back[v - PLAN_V1];
        ef_err e = {0};
        CHECK(plan_doc_parse(b, path, text, n, &e) == EF_OK);
        CHECK(b->version == v);
        char *again = plan_doc_json(b, &n2);
        CHECK(n2 == n && memcmp(text, again, n) == 0);
        free(again);
        free(text);
    }
    CHECK(plan_doc_equal(&back[0], &back[1]));
    plan_doc_free(&back[0]);
    plan_doc_free(&back[1]);
}

/* ---- entry ----------------------------------------------------------------- */

#define NREADERS 7
static const char *const reader_names[NREADERS] = {
    "queue_csv", "queue_json", "curve_csv", "curve_json", "cluster_csv",
    "cluster_json", "plan_json"};

/* The reader EFPLAN_FUZZ_READER names, or -1 (the first byte chooses);
 * an unknown name traps at the first input. */
static int fixed_reader(void)
{
    static int sel = -2;
    if (sel == -2) {
        const char *v = getenv("EFPLAN_FUZZ_READER");
        sel = -1;
        if (v && *v) {
            for (int k = 0; k < NREADERS; k++)
                if (strcmp(v, reader_names[k]) == 0)
                    sel = k;
            CHECK(sel >= 0);
        }
    }
    return sel;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    fixed_init();
    int sel = fixed_reader() >= 0 ? fixed_reader() : data[0] % NREADERS;
    int with_nul = (data[0] / NREADERS) % 2;
    size_t len = size - 1;
    /* Exact size unless with_nul; malloc(0) may return NULL, so keep one
     * byte then, which the readers must not touch (len is 0). */
    char *buf = malloc(len + (size_t)with_nul + (len == 0));
    if (!buf)
        return 0;
    if (len)
        memcpy(buf, data + 1, len);
    if (with_nul)
        buf[len] = '\0';
    ef_err e = {0};
    switch (sel) {
    case 0:
    case 1: {
        const char *path = sel == 0 ? "fuzz.csv" : "fuzz.json";
        job_queue q;
        int rc = sel == 0 ? queue_parse_csv(&q, path, buf, len, &e)
                          : queue_parse_json(&q, path, buf, len, &e);
        if (rc == EF_OK) {
            check_queue(&q, path, sel == 1);
            queue_free(&q);
        } else {
            CHECK(rc == EF_ERR);
            check_error(&e, path);
            CHECK(q.n == 0 && q.jobs == NULL && q.path == NULL);
        }
        break;
    }
    case 2:
    case 3: {
        const char *path = sel == 2 ? "curves/m.csv" : "curves/m.json";
        curve_model m;
        int rc = sel == 2 ? curve_parse_csv(&m, "m", path, buf, len, &e)
                          : curve_parse_json(&m, "m", path, buf, len, &e);
        if (rc == EF_OK) {
            check_model(&m, "m");
            curve_model_free(&m);
        } else {
            CHECK(rc == EF_ERR);
            check_error(&e, path);
            CHECK(m.rows == NULL && m.name == NULL && m.path == NULL);
        }
        break;
    }
    case 6: {
        const char *path = "plan.json";
        plan_doc d;
        int rc = plan_doc_parse(&d, path, buf, len, &e);
        if (rc == EF_OK) {
            check_plan(&d, path);
            plan_doc_free(&d);
        } else {
            CHECK(rc == EF_ERR);
            check_error(&e, path);
        }
        break;
    }
    default: {
        const char *path = sel == 4 ? "cluster.csv" : "cluster.json";
        cluster c;
        int rc = sel == 4 ? cluster_parse_csv(&c, path, buf, len, &e)
                          : cluster_parse_json(&c, path, buf, len, &e);
        if (rc == EF_OK) {
            check_cluster(&c);
        } else {
            CHECK(rc == EF_ERR);
            check_error(&e, path);
        }
        break;
    }
    }
    free(buf);
    return 0;
}
