/* planio.c: the plan file: its field tables, writer and reader (see
 * planio.h), and the checker (see plan.h). */
#define _GNU_SOURCE 1 /* qsort_r */
#include "planner/planio.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fsum.h"
#include "common/jsonin.h"
#include "common/path.h"
#include "common/util.h"
#include "planner/ebatch.h"

/* ---- the tables ------------------------------------------------------------ */

const char *const plan_decision_names[4] = {"pending", "admitted",
                                            "rejected", "best_effort"};
#define decision_names plan_decision_names
static const char *const surplus_names[] = {"gain", "reference"};
static const char *const moves_names[] = {"net", "any"};

const char *plan_decision_name(plan_decision d)
{
    return decision_names[d];
}

#define TIME_MAX EF_MAX_I64

static const jf_field seg_fields[] = {
    {JF_F("end", JF_I64, JF_REQ, seg, end), .min = 0, .max = TIME_MAX},
    {JF_F("gpus", JF_INT, JF_REQ, seg, gpus), .min = 1, .max = 1 << 20},
    {JF_F("start", JF_I64, JF_REQ, seg, start), .min = 0, .max = TIME_MAX},
};
static const jf_table seg_table = JF_TABLE(seg, &jw_inline_obj, seg_fields);

#define JOB(k, kd, fl, m) JF_F(k, kd, fl, plan_doc_job, m)
#define EB .cond = offsetof(plan_doc_job, eb) + 1

static const jf_field entry_fields[] = {
    {JOB("at_risk", JF_FLAG, 0, at_risk)},
    {JOB("batch_size", JF_LONG, JF_REQ | PLAN_F_JOB, batch_size), .min = 1,
     .max = INT32_MAX},
    {JOB("batch_sizes", JF_LONGS, JF_NONEMPTY | PLAN_F_JOB, batch_sizes),
     .cnt = offsetof(plan_doc_job, nbatch), EB, .min = 1, .max = INT32_MAX,
     .style = &jw_inline_arr},
    {JOB("deadline", JF_I64, JF_REQ | JF_NULLABLE | PLAN_F_JOB, deadline),
     .nul = -1, .min = 0, .max = TIME_MAX},
    {JOB("decision", JF_ENUM, JF_REQ, decision), .names = decision_names,
     .nnames = 4},
    {JOB("earliest_feasible_deadline", JF_I64, JF_REQ | JF_NULLABLE,
         earliest_feasible_deadline), .nul = -1, .min = 0, .max = TIME_MAX},
    {JOB("gpu_seconds", JF_FIXED, JF_REQ, gpu_seconds), .dec = 0},
    {JOB("id", JF_STR, JF_REQ | JF_NONEMPTY | PLAN_F_JOB, id), .maxlen = 255},
    {JOB("iterations", JF_I64, JF_REQ | PLAN_F_ITER, iterations), .min = 1,
     .max = TIME_MAX},
    {JOB("iterations_done", JF_I64, JF_REQ | PLAN_F_ITER, iterations_done),
     .min = 0, .max = TIME_MAX},
    {JOB("iterations_left", JF_FIXED, JF_REQ, iterations_left), .dec = 0},
    {JOB("migrations", JF_INT, JF_REQ, migrations), .min = 0,
     .max = INT32_MAX},
    {JOB("model", JF_STR, JF_REQ | JF_NONEMPTY | PLAN_F_JOB, model),
     .maxlen = 255},
    {JOB("placement", JF_CUSTOM, JF_OPT | PLAN_F_JOB, place),
     .custom = &placement_kind},
    {JOB("planned_end", JF_I64, JF_REQ | JF_NULLABLE, planned_end),
     .nul = -1, .min = 0, .max = TIME_MAX},
    {JOB("promised", JF_INT, JF_OPT | PLAN_F_JOB, promised), .min = 0,
     .max = 1},
    {JOB("reason", JF_STR, JF_OPT, reason)},
    {JOB("reserved", JF_ARR, 0, reserved), .sub = &seg_table,
     .cnt = offsetof(plan_doc_job, nreserved),
     .cond = offsetof(plan_doc_job, has_reserved) + 1,
     .style = &jw_inline_arr},
    {JOB("resizes", JF_INT, JF_REQ, resizes), .min = 0, .max = INT32_MAX},
    {JOB("samples", JF_FIXED, PLAN_F_JOB, samples), EB, .dec = 0},
    {JOB("samples_done", JF_FIXED, PLAN_F_JOB, samples_done), EB, .dec = 0},
    {JOB("samples_left", JF_FIXED, 0, samples_left), EB, .dec = 0},
    {JOB("slack", JF_I64, JF_REQ | JF_NULLABLE, slack), .nul = PLAN_NO_SLACK,
     .min = -TIME_MAX, .max = TIME_MAX},
    {JOB("start", JF_I64, JF_REQ | JF_NULLABLE, start), .nul = -1, .min = 0,
     .max = TIME_MAX},
    {JOB("submit_time", JF_I64, JF_REQ | PLAN_F_JOB, submit_time), .min = 0,
     .max = TIME_MAX},
};
static const jf_table job_table = JF_TABLE(plan_doc_job, &jw_inline_obj,
                                           entry_fields);

static const jf_field alloc_fields[] = {
    {JF_F("batch_size", JF_LONG, JF_OPT, plan_doc_alloc, place.batch),
     .min = 1, .max = INT32_MAX},
    {JF_F("gpus", JF_INT, JF_REQ, plan_doc_alloc, gpus), .min = 1,
     .max = 1 << 20},
    {JF_F("job", JF_STR, JF_REQ | JF_NONEMPTY, plan_doc_alloc, job),
     .maxlen = 255},
    {JF_F("placement", JF_CUSTOM, JF_REQ, plan_doc_alloc, place),
     .custom = &placement_kind},
};
static const jf_table alloc_table = JF_TABLE(plan_doc_alloc, &jw_inline_obj,
                                             alloc_fields);

static const jf_field slot_fields[] = {
    {JF_F("allocations", JF_ARR, JF_REQ, plan_doc_slot, a),
     .cnt = offsetof(plan_doc_slot, nalloc), .sub = &alloc_table,
     .style = &jw_inline_arr},
    {JF_F("end", JF_I64, JF_REQ, plan_doc_slot, end), .min = 0,
     .max = TIME_MAX},
    {JF_F("start", JF_I64, JF_REQ, plan_doc_slot, start), .min = 0,
     .max = TIME_MAX},
};
static const jf_table slot_table = JF_TABLE(plan_doc_slot, &jw_inline_obj,
                                            slot_fields);

static const jf_field cluster_fields[] = {
    {JF_F("gpus_per_node", JF_INT, JF_REQ, plan_doc_cluster, gpus_per_node),
     .min = 1, .max = 64},
    {JF_F("nodes", JF_INT, JF_REQ, plan_doc_cluster, nodes), .min = 1,
     .max = 1 << 20},
};
static const jf_table cluster_table = JF_TABLE(plan_doc_cluster,
                                               &jw_inline_obj, cluster_fields);

#define SUM(k, kd, m) JF_F(k, kd, JF_REQ, plan_doc_summary, m)
#define COUNT .min = 0, .max = INT32_MAX
static const jf_field summary_fields[] = {
    {SUM("admitted", JF_INT, admitted), COUNT},
    {JF_F("at_risk", JF_INT, JF_OPT, plan_doc_summary, at_risk), COUNT},
    {SUM("best_effort", JF_INT, best_effort), COUNT},
    {SUM("end", JF_I64, end), .min = 0, .max = TIME_MAX},
    {SUM("migrations", JF_INT, migrations), COUNT},
    {SUM("promised_gpu_hours", JF_FIXED, promised_gpu_hours), .dec = 3},
    {SUM("rejected", JF_INT, rejected), COUNT},
    {SUM("replan_fallbacks", JF_INT, replan_fallbacks), COUNT},
    {SUM("resizes", JF_INT, resizes), COUNT},
    {SUM("scheduling_points", JF_INT, scheduling_points), COUNT},
    {SUM("used_gpu_hours", JF_FIXED, used_gpu_hours), .dec = 3},
    {SUM("utilisation", JF_FIXED, utilisation), .dec = 6},
};
static const jf_table summary_table = JF_TABLE(plan_doc_summary,
                                               &jw_inline_obj, summary_fields);

static const jf_field run_fields[] = {
    {JF_F("batch_size", JF_LONG, JF_OPT, plan_doc_run, place.batch),
     .min = 1, .max = INT32_MAX},
    {JF_F("end", JF_I64, JF_REQ, plan_doc_run, end), .min = 0,
     .max = TIME_MAX},
    {JF_F("gpus", JF_INT, JF_REQ, plan_doc_run, gpus), .min = 1,
     .max = 1 << 20},
    {JF_F("job", JF_STR, JF_REQ | JF_NONEMPTY, plan_doc_run, job),
     .maxlen = 255},
    {JF_F("placement", JF_CUSTOM, JF_REQ, plan_doc_run, place),
     .custom = &placement_kind},
    {JF_F("start", JF_I64, JF_REQ, plan_doc_run, start), .min = 0,
     .max = TIME_MAX},
};
static const jf_table run_table = JF_TABLE(plan_doc_run, &jw_inline_obj,
                                           run_fields);

/* The top level: the members both versions share, in key order around
 * the version's own (TOP_HEAD before "runs"/"slot_seconds", TOP_TAIL
 * after "slots"/"slot_seconds"). */
#define TOP(k, kd, fl, m) JF_F(k, kd, fl, plan_doc, m)
#define TOP_HEAD                                                            \
    {TOP("cluster", JF_OBJ, JF_REQ, cluster), .sub = &cluster_table},       \
    {TOP("curves", JF_STR, JF_REQ, curves)},                                \
    {TOP("deadline_margin", JF_I64, JF_OPT, deadline_margin), .min = 0,     \
     .max = 86400 * 365},                                                   \
    {TOP("elastic_batch", JF_FLAG, 0, elastic_batch)},                      \
    {.key = "format", .kind = JF_CONST, .sval = "efplan-plan",              \
     .hint = "a plan written by efplan plan --out"},                        \
    {TOP("jobs", JF_ARR, JF_REQ, jobs), .cnt = offsetof(plan_doc, njobs),   \
     .sub = &job_table, .style = &jw_block_arr},                            \
    {TOP("jobs_file", JF_STR, JF_REQ, jobs_file)},                          \
    {TOP("node_map", JF_LONGS, JF_OPT, node_map),                           \
     .cnt = offsetof(plan_doc, nnode_map), .min = 0, .max = 1 << 20,        \
     .style = &jw_inline_arr},                                              \
    {TOP("moves", JF_ENUM, JF_OPT, moves), .names = moves_names,            \
     .nnames = 2},                                                          \
    {TOP("now", JF_I64, JF_REQ, now), .min = 0, .max = TIME_MAX},           \
    {TOP("overhead", JF_STR, JF_OPT, overhead)}
#define TOP_TAIL                                                            \
    {TOP("summary", JF_OBJ, JF_REQ, summary), .sub = &summary_table},       \
    {TOP("surplus", JF_ENUM, JF_REQ, surplus), .names = surplus_names,      \
     .nnames = 2}
#define TOP_SLOT_SECONDS                                                    \
    {TOP("slot_seconds", JF_INT, JF_REQ, slot_seconds), .min = 1,           \
     .max = 86400}

static const jf_field top_fields[] = {
    TOP_HEAD,
    TOP_SLOT_SECONDS,
    {TOP("slots", JF_ARR, JF_REQ, slots), .cnt = offsetof(plan_doc, nslots),
     .sub = &slot_table, .style = &jw_block_arr},
    TOP_TAIL,
    {.key = "version", .kind = JF_CONST, .min = PLAN_V1},
};
static const jf_table top_table = JF_TABLE(plan_doc, &jw_block_obj,
                                          top_fields);

static const jf_field top_fields_v2[] = {
    TOP_HEAD,
    {TOP("runs", JF_ARR, JF_REQ, runs), .cnt = offsetof(plan_doc, nruns),
     .sub = &run_table, .style = &jw_block_arr},
    {TOP("slot_ends", JF_LONGS, JF_REQ, slot_ends),
     .cnt = offsetof(plan_doc, nslot_ends), .min = 0, .max = TIME_MAX,
     .style = &jw_inline_arr},
    TOP_SLOT_SECONDS,
    TOP_TAIL,
    {.key = "version", .kind = JF_CONST, .min = PLAN_V2},
};
static const jf_table top_table_v2 = JF_TABLE(plan_doc, &jw_block_obj,
                                             top_fields_v2);

/* ---- plan -> document -------------------------------------------------------- */

static int64_t time_or_null(int64_t t)
{
    return t < 0 ? -1 : t;
}

static void job_doc(plan_doc_job *d, const plan_job *j, int reserved_known)
{
    const job *in = j->in;
    d->batch_size = in->batch;
    d->eb = j->eb;
    if (j->eb) {
        d->nbatch = in->nbatch;
        d->batch_sizes = in->batches;
        d->samples = in->in_samples ? (double)in->samples
                                    : (double)in->iterations * in->batch;
        d->samples_done = in->in_samples
                              ? (double)in->samples_done
                              : (double)in->iterations_done * in->batch;
        d->samples_left = j->iterations_left;
    }
    d->deadline = in->has_deadline ? time_or_null(in->deadline) : -1;
    d->decision = j->decision;
    d->earliest_feasible_deadline = time_or_null(j->earliest_feasible_deadline);
    d->gpu_seconds = j->gpu_seconds;
    d->id = in->id;
    d->iterations = in->iterations;
    d->iterations_done = in->iterations_done;
    /* an elastic-batch job counts samples; its iterations are at
     * batch_size */
    d->iterations_left = j->eb ? ceil(j->iterations_left / (double)in->batch)
                               : j->iterations_left;
    d->migrations = j->migrations;
    d->model = in->model;
    d->planned_end = time_or_null(j->planned_end);
    d->reason = j->reason[0] ? j->reason : j->at_risk ? j->risk : NULL;
    d->resizes = j->resizes;
    d->slack = in->has_deadline && j->planned_end >= 0
                   ? in->deadline - j->planned_end : PLAN_NO_SLACK;
    d->start = time_or_null(j->start);
    d->submit_time = in->submit;
    d->promised = in->promised;
    d->at_risk = j->at_risk;
    d->place = in->cur;
    if (reserved_known && j->decision == PLAN_ADMITTED) {
        d->has_reserved = 1;
        d->nreserved = j->reserved.n;
        d->reserved = j->reserved.s;
    }
}

/* Everything of plan p's document but its slots and runs. */
static void doc_head(plan_doc *d, const plan *p, const char *jobs_path,
                     const char *curves)
{
    memset(d, 0, sizeof *d);
    d->cluster.gpus_per_node = p->cl.gpus_per_node;
    d->cluster.nodes = p->cl.nodes;
    d->curves = curves ? curves : "";
    d->elastic_batch = p->opts.elastic_batch != 0;
    d->deadline_margin = p->opts.deadline_margin;
    d->njobs = p->njobs;
    d->jobs = jf_alloc(&d->arena, (size_t)p->njobs * sizeof *d->jobs);
    for (int i = 0; i < p->njobs; i++)
        job_doc(&d->jobs[i], &p->jobs[i], p->reserved_known);
    d->jobs_file = jobs_path ? jobs_path : "";
    d->now = p->now;
    d->slot_seconds = p->opts.slot;
    plan_doc_summary *m = &d->summary;
    double span = (double)(p->end - p->now) * p->cl.total_gpus;
    m->admitted = p->admitted;
    m->at_risk = p->at_risk;
    m->best_effort = p->best_effort;
    m->end = p->end;
    m->migrations = p->migrations;
    m->promised_gpu_hours = p->promised_gpu_seconds / 3600.0;
    m->rejected = p->rejected;
    m->replan_fallbacks = p->replan_fallbacks;
    m->resizes = p->resizes;
    m->scheduling_points = p->points;
    m->used_gpu_hours = p->used_gpu_seconds / 3600.0;
    m->utilisation = span > 0 ? p->used_gpu_seconds / span : 0.0;
    d->surplus = p->opts.surplus;
    d->moves = p->opts.moves;
    d->overhead = ovh_name(p->opts.overhead);
    d->version = PLAN_V2;
}

/* The placement of plan GPU list gpu[0..n-1] (global ids), from d's
 * arena. */
static placement doc_place(plan_doc *d, const int *gpu, int n, long batch)
{
    int G = d->cluster.gpus_per_node;
    placement pl = {n, jf_alloc(&d->arena, (size_t)n * sizeof(int)),
                    jf_alloc(&d->arena, (size_t)n * sizeof(int)), batch};
    for (int k = 0; k < n; k++) {
        pl.node[k] = gpu[k] / G;
        pl.gpu[k] = gpu[k] % G;
    }
    return pl;
}

/* ---- runs (version 2) ----------------------------------------------------- */

/* Each job's last run while a document's runs are made: where it ends
 * (-1: none), its size and batch, the plan GPU list it holds (for
 * runs_of_plan) and its index in d->runs (once made). */
typedef struct run_last {
    int64_t end;
    int gpus;
    long batch;
    const int *list;
    int run;
} run_last;

/* A run_last per job, none yet (heap: free it). */
static run_last *runs_last(int njobs)
{
    run_last *l = ef_calloc((size_t)(njobs ? njobs : 1), sizeof *l);
    for (int i = 0; i < njobs; i++)
        l[i].end = -1;
    return l;
}

/* 1 if an allocation of 'gpus' GPUs at batch 'batch' in the slot that
 * starts at 'start' may continue the job's last run l: that run ends at
 * 'start' at the same size and batch (the GPUs are the caller's to
 * compare). */
static int run_goes_on(const run_last *l, int64_t start, int gpus,
                       long batch)
{
    return l->end == start && l->gpus == gpus && l->batch == batch;
}

/* l is now a run up to 'end' of 'gpus' GPUs at 'batch'. */
static void run_mark(run_last *l, int64_t end, int gpus, long batch)
{
    l->end = end;
    l->gpus = gpus;
    l->batch = batch;
}

/* Open a new run at d->runs[d->nruns] for job jobi (id 'id', last run
 * l) over [start, end); its placement is the caller's to set. */
static plan_doc_run *run_new(plan_doc *d, run_last *l, int jobi,
                             const char *id, int64_t start, int64_t end,
                             int gpus, long batch)
{
    plan_doc_run *r = &d->runs[d->nruns];
    *r = (plan_doc_run){.end = end, .gpus = gpus, .job = id,
                        .start = start, .jobi = jobi};
    l->run = d->nruns++;
    run_mark(l, end, gpus, batch);
    return r;
}

/* Room for 'total' runs and 'nslots' slot ends in d (from arena a). */
static void runs_begin(plan_doc *d, jf_arena *a, size_t total, int nslots)
{
    d->runs = jf_alloc(a, (total ? total : 1) * sizeof *d->runs);
    d->nruns = 0;
    d->nslot_ends = nslots;
    d->slot_ends = jf_alloc(a, (size_t)(nslots ? nslots : 1) *
                                   sizeof *d->slot_ends);
}

/* Plan p's slots as d's runs (version 2) directly, without the slots of
 * a document: the writer's way, whose memory grows with the runs. The
 * same runs as encode_runs gives of the document's slots: a job's run
 * goes on while it holds the same GPUs (the same list, which record
 * shares, or one of the same content) and batch. Two passes: the first
 * counts the runs, the second makes them. */
static void runs_of_plan(plan_doc *d, const plan *p)
{
    run_last *last = runs_last(p->njobs);
    size_t count = 0;          /* runs (pass 0 counts them) */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            for (int i = 0; i < p->njobs; i++)
                last[i].end = -1;
            runs_begin(d, &d->arena, count, p->nslots);
        }
        for (int s = 0; s < p->nslots; s++) {
            const plan_slot *sl = &p->slots[s];
            for (int k = 0; k < sl->nalloc; k++) {
                const plan_alloc *al = &sl->a[k];
                run_last *l = &last[al->job];
                if (run_goes_on(l, sl->start, al->gpus, al->batch) &&
                    (l->list == al->gpu ||
                     memcmp(l->list, al->gpu,
                            (size_t)al->gpus * sizeof(int)) == 0)) {
                    l->end = sl->end;
                    if (pass == 1)
                        d->runs[l->run].end = sl->end;
                    continue;
                }
                l->list = al->gpu;
                if (pass == 0) {
                    run_mark(l, sl->end, al->gpus, al->batch);
                    count++;
                    continue;
                }
                run_new(d, l, al->job, p->jobs[al->job].in->id, sl->start,
                        sl->end, al->gpus, al->batch)->place =
                    doc_place(d, al->gpu, al->gpus, al->batch);
            }
            if (pass == 1)
                d->slot_ends[s] = (long)sl->end;
        }
    }
    free(last);
}

void plan_doc_from_plan(plan_doc *d, const plan *p, const char *jobs_path,
                        const char *curves)
{
    doc_head(d, p, jobs_path, curves);
    d->nslots = p->nslots;
    d->slots = jf_alloc(&d->arena, (size_t)p->nslots * sizeof *d->slots);
    /* a GPU list the plan's slots share (plan.c's record) is turned into
     * one placement the document's slots share */
    const int **lastl = ef_calloc((size_t)(p->njobs ? p->njobs : 1),
                                  sizeof *lastl);
    placement *lastp = ef_calloc((size_t)(p->njobs ? p->njobs : 1),
                                 sizeof *lastp);
    for (int s = 0; s < p->nslots; s++) {
        const plan_slot *sl = &p->slots[s];
        plan_doc_slot *ds = &d->slots[s];
        ds->start = sl->start;
        ds->end = sl->end;
        ds->nalloc = sl->nalloc;
        ds->a = jf_alloc(&d->arena, (size_t)sl->nalloc * sizeof *ds->a);
        for (int a = 0; a < sl->nalloc; a++) {
            const plan_alloc *al = &sl->a[a];
            plan_doc_alloc *da = &ds->a[a];
            da->gpus = al->gpus;
            da->job = p->jobs[al->job].in->id;
            da->jobi = al->job;
            if (lastl[al->job] != al->gpu) {
                lastl[al->job] = al->gpu;
                lastp[al->job] = doc_place(d, al->gpu, al->gpus, 0);
            }
            da->place = lastp[al->job];
            da->place.batch = al->batch;
        }
    }
    free(lastl);
    free(lastp);
}

void plan_doc_for_file(plan_doc *d, const plan *p, const char *jobs_path,
                       const char *curves, int version)
{
    if (version == PLAN_V1) {
        plan_doc_from_plan(d, p, jobs_path, curves);
        d->version = PLAN_V1;
        return;
    }
    doc_head(d, p, jobs_path, curves);
    runs_of_plan(d, p);
    d->runs_only = 1;
}

void plan_doc_free(plan_doc *d)
{
    jf_arena_free(&d->arena);
    memset(d, 0, sizeof *d);
}

/* d's slots as version 2 runs and slot ends, allocated from a (the
 * placements are d's): a job's run goes on into the next slot while it
 * holds the same GPUs and batch there. The runs come in (start, job)
 * order since each slot lists its allocations in the jobs' order. */
static void encode_runs(plan_doc *d, jf_arena *a)
{
    size_t total = 0;          /* allocations over all slots */
    for (int s = 0; s < d->nslots; s++)
        total += (size_t)d->slots[s].nalloc;
    runs_begin(d, a, total, d->nslots);
    run_last *last = runs_last(d->njobs);
    for (int s = 0; s < d->nslots; s++) {
        const plan_doc_slot *sl = &d->slots[s];
        d->slot_ends[s] = (long)sl->end;
        for (int k = 0; k < sl->nalloc; k++) {
            const plan_doc_alloc *al = &sl->a[k];
            run_last *l = &last[al->jobi];
            if (run_goes_on(l, sl->start, al->gpus, al->place.batch) &&
                placement_equal(&d->runs[l->run].place, &al->place)) {
                d->runs[l->run].end = l->end = sl->end;
                continue;
            }
            run_new(d, l, al->jobi, al->job, sl->start, sl->end, al->gpus,
                    al->place.batch)->place = al->place;
        }
    }
    free(last);
}

char *plan_doc_json(const plan_doc *d, size_t *len)
{
    jw w;
    jw_init(&w, 0);
    if (d->version == PLAN_V1) {
        ef_assert(!d->runs_only);
        jf_write(&w, NULL, &top_table, d, 0);
    } else if (d->runs_only) {
        jf_write(&w, NULL, &top_table_v2, d, 0);
    } else {
        plan_doc t = *d;       /* d with its runs; t.arena holds them */
        memset(&t.arena, 0, sizeof t.arena);
        encode_runs(&t, &t.arena);
        jf_write(&w, NULL, &top_table_v2, &t, 0);
        jf_arena_free(&t.arena);
    }
    ef_buf_put(&w.b, "\n");
    return jw_take(&w, len);
}

int plan_doc_equal(const plan_doc *a, const plan_doc *b)
{
    return jf_equal(&top_table, a, b);
}

int plan_to_json(const plan *p, const char *jobs_path, const char *curves,
                 char **out, size_t *len)
{
    plan_doc d;
    plan_doc_for_file(&d, p, jobs_path, curves, PLAN_V2);
    *out = plan_doc_json(&d, len);
    plan_doc_free(&d);
    return EF_OK;
}

int plan_write_json(const plan *p, const char *path, const char *jobs_path,
                    const char *curves, int version, ef_err *e)
{
    plan_doc d;
    size_t n;
    plan_doc_for_file(&d, p, jobs_path, curves, version ? version : PLAN_V2);
    char *s = plan_doc_json(&d, &n);
    plan_doc_free(&d);
    int rc = ef_write_file_atomic(path, s, n, e);
    free(s);
    return rc;
}

/* ---- reading ------------------------------------------------------------------ */

/* A job id and its index, sorted by id for lookups. */
typedef struct id_index {
    const char *id;
    int i;
} id_index;

static int cmp_id(const void *a, const void *b)
{
    return strcmp(((const id_index *)a)->id, ((const id_index *)b)->id);
}

static int find_id(const plan_doc *d, const id_index *ord, const char *id)
{
    int lo = 0, hi = d->njobs - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(ord[mid].id, id);
        if (c == 0)
            return ord[mid].i;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Does batch size b belong to job j? */
static int accepts(const plan_doc_job *j, long b)
{
    for (int k = 0; k < j->nbatch; k++)
        if (j->batch_sizes[k] == b)
            return 1;
    return 0;
}

static int check_alloc(plan_doc *d, const id_index *ord, plan_doc_alloc *a,
                       char *owner, int *seen, int s, const char *file,
                       const char *w, ef_err *e)
{
    int G = d->cluster.gpus_per_node, N = d->cluster.nodes;
    char q[128];
    a->jobi = find_id(d, ord, a->job);
    if (a->jobi < 0)
        return ef_fail(e, EF_E_INPUT, "%s: %s.job: \"%s\" is not in jobs",
                       file, w, ef_quote(a->job, q, sizeof q));
    const plan_doc_job *j = &d->jobs[a->jobi];
    if (seen[a->jobi] == s + 1)
        return ef_fail(e, EF_E_INPUT, "%s: %s.job: \"%s\" has two "
                       "allocations in this slot", file, w, a->job);
    seen[a->jobi] = s + 1;
    if (a->gpus != a->place.n)
        return ef_fail(e, EF_E_INPUT, "%s: %s: gpus is %d but the placement "
                       "has %d GPUs", file, w, a->gpus, a->place.n);
    if (a->place.batch && !(j->eb && accepts(j, a->place.batch)))
        return ef_fail(e, EF_E_INPUT, "%s: %s.batch_size: %ld is not one of "
                       "job \"%s\"'s batch_sizes", file, w, a->place.batch,
                       j->id);
    for (int m = 0; m < a->place.n; m++) {
        int nd = a->place.node[m], g = a->place.gpu[m];
        if (nd >= N || g >= G)
            return ef_fail(e, EF_E_INPUT, "%s: %s.placement: node %d GPU %d "
                           "is outside the cluster (%d nodes of %d GPUs)",
                           file, w, nd, g, N, G);
        size_t gid = (size_t)nd * (size_t)G + (size_t)g;
        if (owner[gid])
            return ef_fail(e, EF_E_INPUT, "%s: %s: node %d GPU %d is given to "
                           "two jobs", file, w, nd, g);
        owner[gid] = 1;
    }
    return EF_OK;
}

static int cmp_run(const void *a, const void *b, void *ctx)
{
    const plan_doc_run *r = ctx;
    int i = *(const int *)a, k = *(const int *)b;
    const plan_doc_run *x = &r[i], *y = &r[k];
    if (x->jobi != y->jobi)
        return x->jobi < y->jobi ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (i > k) - (i < k);
}

static int cmp_alloc_job(const void *a, const void *b)
{
    const plan_doc_alloc *x = a, *y = b;
    return (x->jobi > y->jobi) - (x->jobi < y->jobi);
}

/* The slot of 'starts' (n ascending times) that starts at t, or -1. */
static int slot_at(const int64_t *starts, int n, int64_t t)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (starts[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && starts[lo] == t ? lo : -1;
}

/* The most allocations a version 2 file may cut into (a few runs can
 * stand for slots x jobs of them). */
#define MAX_CUT ((size_t)1 << 28)

/* A version 2 file's runs cut into its slots (planio.h): each run checked
 * (a job of the file, on slot boundaries, its GPU count its placement's,
 * not over another run of its job), then listed in every slot it covers,
 * in the jobs' order; a cut allocation remembers its run (its 'run'), so
 * that what check_doc finds in a slot names the run. */
static int cut_runs(plan_doc *d, const id_index *ord, const char *file,
                    ef_err *e)
{
    int ns = d->nslot_ends;    /* slots */
    int64_t *starts = ef_malloc((size_t)(ns ? ns : 1) * sizeof *starts);
    int *first = ef_malloc((size_t)(d->nruns ? d->nruns : 1) * sizeof *first);
    int *last = ef_malloc((size_t)(d->nruns ? d->nruns : 1) * sizeof *last);
    int *byjob = ef_malloc((size_t)(d->nruns ? d->nruns : 1) *
                           sizeof *byjob); /* runs by (job, start) */
    int *fill = ef_calloc((size_t)ns + 1, sizeof *fill); /* per slot */
    char q[128];
    int rc = EF_OK;
    for (int s = 0; s < ns && rc == EF_OK; s++) {
        starts[s] = s ? d->slot_ends[s - 1] : d->now;
        if (d->slot_ends[s] <= starts[s])
            rc = ef_fail(e, EF_E_INPUT, "%s: slot_ends[%d]: %ld is not after "
                         "%" PRId64 " (expected ascending slot ends after "
                         "now)", file, s, d->slot_ends[s], starts[s]);
    }
    size_t total = 0;          /* allocations cut */
    for (int k = 0; k < d->nruns && rc == EF_OK; k++) {
        plan_doc_run *r = &d->runs[k];
        r->jobi = find_id(d, ord, r->job);
        first[k] = slot_at(starts, ns, r->start);
        last[k] = r->end > r->start ? slot_at(starts, ns, r->end) : -1;
        if (last[k] < 0 && ns > 0 && r->end == d->slot_ends[ns - 1])
            last[k] = ns;
        if (r->jobi < 0)
            rc = ef_fail(e, EF_E_INPUT, "%s: runs[%d].job: \"%s\" is not in "
                         "jobs", file, k, ef_quote(r->job, q, sizeof q));
        else if (r->end <= r->start)
            rc = ef_fail(e, EF_E_INPUT, "%s: runs[%d]: [%" PRId64 ", %"
                         PRId64 ") is empty (expected start < end)", file, k,
                         r->start, r->end);
        else if (first[k] < 0)
            rc = ef_fail(e, EF_E_INPUT, "%s: runs[%d].start: %" PRId64 " is "
                         "not the start of a slot (now or a slot end)", file,
                         k, r->start);
        else if (last[k] < 0)
            rc = ef_fail(e, EF_E_INPUT, "%s: runs[%d].end: %" PRId64 " is not "
                         "a slot end (slot_ends)", file, k, r->end);
        else if (r->gpus != r->place.n)
            rc = ef_fail(e, EF_E_INPUT, "%s: runs[%d]: gpus is %d but the "
                         "placement has %d GPUs", file, k, r->gpus,
                         r->place.n);
        if (rc != EF_OK)
            break;
        total += (size_t)(last[k] - first[k]);
        if (total > MAX_CUT)
            rc = ef_fail(e, EF_E_INPUT, "%s: runs: more than %zu allocations "
                         "over all slots (at most %zu)", file, total,
                         MAX_CUT);
        byjob[k] = k;
    }
    if (rc == EF_OK) {
        qsort_r(byjob, (size_t)d->nruns, sizeof *byjob, cmp_run, d->runs);
        for (int i = 1; i < d->nruns && rc == EF_OK; i++) {
            const plan_doc_run *a = &d->runs[byjob[i - 1]];
            const plan_doc_run *b = &d->runs[byjob[i]];
            if (a->jobi == b->jobi && a->end > b->start)
                rc = ef_fail(e, EF_E_INPUT, "%s: runs[%d]: starts at %" PRId64
                             " but job \"%s\" holds GPUs up to %" PRId64
                             " in runs[%d] (expected one run of a job at a "
                             "time)", file, byjob[i], b->start,
                             ef_quote(b->job, q, sizeof q), a->end,
                             byjob[i - 1]);
        }
    }
    if (rc == EF_OK) {
        for (int k = 0; k < d->nruns; k++)
            for (int s = first[k]; s < last[k]; s++)
                fill[s]++;
        d->nslots = ns;
        d->slots = jf_alloc(&d->arena, (size_t)(ns ? ns : 1) *
                                           sizeof *d->slots);
        for (int s = 0; s < ns; s++) {
            plan_doc_slot *sl = &d->slots[s];
            sl->start = starts[s];
            sl->end = d->slot_ends[s];
            sl->a = jf_alloc(&d->arena, (size_t)(fill[s] ? fill[s] : 1) *
                                            sizeof *sl->a);
            fill[s] = 0;
        }
        for (int i = 0; i < d->nruns; i++) {
            int k = byjob[i];
            const plan_doc_run *r = &d->runs[k];
            for (int s = first[k]; s < last[k]; s++)
                d->slots[s].a[d->slots[s].nalloc++] = (plan_doc_alloc){
                    .gpus = r->gpus, .job = r->job, .place = r->place,
                    .jobi = r->jobi, .run = k + 1};
        }
    }
    free(starts);
    free(first);
    free(last);
    free(byjob);
    free(fill);
    return rc;
}

/* What the file promises as a whole (the tables check each member). */
static int check_doc(plan_doc *d, const char *file, ef_err *e)
{
    int G = d->cluster.gpus_per_node, N = d->cluster.nodes;
    char q[64]; /* the overhead name as an error message may show it */
    if (d->overhead && ovh_parse(d->overhead) < 0)
        return ef_fail(e, EF_E_INPUT, "%s: overhead: \"%s\" is not an "
                       "overhead model (fig12, reference, restart or none)",
                       file, ef_quote(d->overhead, q, sizeof q));
    if ((int64_t)N * G > (1 << 20))
        return ef_fail(e, EF_E_INPUT, "%s: cluster: too many GPUs (%d nodes "
                       "of %d; at most 2^20)", file, N, G);
    for (int i = 0; i < d->njobs; i++) {
        const char *why = job_id_check(d->jobs[i].id, strlen(d->jobs[i].id));
        if (why)
            return ef_fail(e, EF_E_INPUT, "%s: jobs[%d].id: %s (expected %s)",
                           file, i, why, JOB_ID_RULE);
    }
    if (d->nnode_map && d->nnode_map != N)
        return ef_fail(e, EF_E_INPUT, "%s: node_map: %d entries for %d plan "
                       "nodes (expected one per node)", file, d->nnode_map,
                       N);
    for (int k = 1; k < d->nnode_map; k++)
        if (d->node_map[k] <= d->node_map[k - 1])
            return ef_fail(e, EF_E_INPUT, "%s: node_map[%d]: %ld after %ld "
                           "(expected ascending, distinct node indices)",
                           file, k, d->node_map[k], d->node_map[k - 1]);
    for (int i = 0; i < d->njobs; i++) {
        const plan_doc_job *j = &d->jobs[i];
        for (int k = 0; k < j->nreserved; k++)
            if (j->reserved[k].end <= j->reserved[k].start ||
                (k > 0 && j->reserved[k].start < j->reserved[k - 1].end))
                return ef_fail(e, EF_E_INPUT, "%s: jobs[%d].reserved[%d]: "
                               "[%" PRId64 ", %" PRId64 ") (expected "
                               "non-empty segments in time order, none "
                               "overlapping)", file, i, k,
                               j->reserved[k].start, j->reserved[k].end);
    }
    for (int i = 0; i < d->njobs; i++)
        if (d->jobs[i].eb && !d->elastic_batch)
            return ef_fail(e, EF_E_INPUT, "%s: jobs[%d].batch_sizes: an "
                           "elastic-batch job in a plan without "
                           "\"elastic_batch\": true", file, i);
    id_index *ord = ef_malloc((size_t)(d->njobs + 1) * sizeof *ord);
    int *seen = ef_calloc((size_t)d->njobs + 1, sizeof *seen);
    char *owner = ef_malloc((size_t)N * (size_t)G);
    int rc = EF_OK;
    for (int i = 0; i < d->njobs; i++)
        ord[i] = (id_index){d->jobs[i].id, i};
    qsort(ord, (size_t)d->njobs, sizeof *ord, cmp_id);
    for (int k = 1; k < d->njobs && rc == EF_OK; k++)
        if (strcmp(ord[k - 1].id, ord[k].id) == 0)
            rc = ef_fail(e, EF_E_INPUT, "%s: jobs: job \"%s\" twice", file,
                         ord[k].id);
    if (rc == EF_OK && d->version == PLAN_V2)
        rc = cut_runs(d, ord, file, e);
    int64_t t = d->now;
    for (int s = 0; s < d->nslots && rc == EF_OK; s++) {
        plan_doc_slot *sl = &d->slots[s];
        char w[64];
        snprintf(w, sizeof w, "slots[%d]", s);
        if (sl->start != t || sl->end <= sl->start) {
            rc = ef_fail(e, EF_E_INPUT, "%s: %s: [%" PRId64 ", %" PRId64 ") "
                         "does not follow the previous slot (expected start %"
                         PRId64 ")", file, w, sl->start, sl->end, t);
            break;
        }
        t = sl->end;
        memset(owner, 0, (size_t)N * (size_t)G);
        for (int a = 0; a < sl->nalloc && rc == EF_OK; a++) {
            char wa[160];
            int run = sl->a[a].run;
            if (run)
                snprintf(wa, sizeof wa, "runs[%d] (in [%" PRId64 ", %" PRId64
                         "))", run - 1, sl->start, sl->end);
            else
                snprintf(wa, sizeof wa, "%s.allocations[%d]", w, a);
            rc = check_alloc(d, ord, &sl->a[a], owner, seen, s, file, wa, e);
        }
        /* a version 1 slot in the jobs' order, as a version 2 file's runs
         * are cut (one job an allocation a slot: the order is total) */
        if (rc == EF_OK && d->version == PLAN_V1 && sl->nalloc > 1)
            qsort(sl->a, (size_t)sl->nalloc, sizeof *sl->a, cmp_alloc_job);
    }
    free(ord);
    free(seen);
    free(owner);
    return rc;
}

int plan_doc_parse(plan_doc *d, const char *path, const char *buf,
                   size_t len, ef_err *e)
{
    static const char what[] = "a plan file (format efplan-plan)";
    memset(d, 0, sizeof *d);
    json_t *root = jsonin_parse(path, buf, len, e);
    if (!root)
        return EF_ERR;
    int rc = EF_OK;
    const jf_table *t = &top_table; /* the version's table */
    d->version = PLAN_V1;
    if (!json_is_object(root)) {
        rc = ef_fail(e, EF_E_INPUT, "%s: expected %s, got %s", path, what,
                     jsonin_type(root));
    } else {
        const json_t *f = json_object_get(root, "format");
        const json_t *v = json_object_get(root, "version");
        if (json_is_string(f) &&
            strcmp(json_string_value(f), "efplan-plan") == 0 &&
            json_is_integer(v)) {
            json_int_t n = json_integer_value(v);
            if (n == PLAN_V2) {
                t = &top_table_v2;
                d->version = PLAN_V2;
            } else if (n != PLAN_V1) {
                rc = ef_fail(e, EF_E_INPUT, "%s: version: %" JSON_INTEGER_FORMAT
                             " is not a plan file version this efplan reads "
                             "(expected 1 or 2)", path, n);
            }
        }
    }
    if (rc == EF_OK) {
        jf_ctx c = {path, &d->arena, e};
        rc = jf_read(t, root, d, &c, "");
    }
    json_decref(root);
    if (rc == EF_OK)
        rc = check_doc(d, path, e);
    if (rc != EF_OK)
        plan_doc_free(d);
    return rc;
}

static int parse_any(void *d, const char *path, const char *buf, size_t len,
                     ef_err *e)
{
    return plan_doc_parse(d, path, buf, len, e);
}

int plan_doc_load(plan_doc *d, const char *path, ef_err *e)
{
    memset(d, 0, sizeof *d);
    return jf_load(path, parse_any, d, e);
}

char *plan_doc_queue_json(const plan_doc *d, const char *extra)
{
    jw w;
    jw_init(&w, 0);
    jw_obj(&w, NULL, &jw_inline_obj);
    jw_arr(&w, "jobs", &jw_inline_arr);
    for (int i = 0; i < d->njobs; i++)
        jf_write(&w, NULL, &job_table, &d->jobs[i],
                 d->jobs[i].eb ? PLAN_F_JOB : PLAN_F_JOB | PLAN_F_ITER);
    if (extra)
        jw_elems(&w, extra, strlen(extra), 1);
    jw_end(&w);
    jw_end(&w);
    return jw_take(&w, NULL);
}

int plan_unix_time(int64_t now)
{
    return now >= PLAN_UNIX_MIN;
}

void plan_doc_opts(const plan_doc *d, plan_opts *o)
{
    plan_opts_default(o);
    o->now = d->now;
    o->slot = d->slot_seconds;
    o->surplus = d->surplus == SURPLUS_REFERENCE ? SURPLUS_REFERENCE
                                                 : SURPLUS_GAIN;
    o->moves = d->moves == MOVES_ANY ? MOVES_ANY : MOVES_NET;
    o->elastic_batch = d->elastic_batch;
    o->overhead = d->overhead ? (ovh_mode)ovh_parse(d->overhead) : OVH_NONE;
    o->deadline_margin = d->deadline_margin;
}

static int cmp_gpu(const void *a, const void *b);

/* ---- the plan a file holds, for the checker ------------------------------- */

int plan_doc_plan(plan *p, job_queue *q, const plan_doc *d,
                  const curve_set *cs, const char *label, ef_err *e)
{
    memset(p, 0, sizeof *p);
    memset(q, 0, sizeof *q);
    char *qt = plan_doc_queue_json(d, NULL);
    int rc = queue_parse_json(q, label, qt, strlen(qt), e);
    free(qt);
    cluster c;
    plan_opts o;
    plan_doc_opts(d, &o);
    if (rc != EF_OK || queue_resolve(q, cs, e) != EF_OK ||
        cluster_init(&c, 1, d->cluster.nodes, d->cluster.gpus_per_node,
                     label, e) != EF_OK ||
        plan_init(p, q, &c, &o, e) != EF_OK) {
        plan_free(p);
        queue_free(q);
        return EF_ERR;
    }
    for (int i = 0; i < d->njobs; i++) {
        plan_job *j = &p->jobs[i];
        const plan_doc_job *dj = &d->jobs[i];
        j->decision = (plan_decision)dj->decision;
        j->at_risk = dj->at_risk;
        j->planned_end = dj->planned_end;
        p->admitted += j->decision == PLAN_ADMITTED;
        p->rejected += j->decision == PLAN_REJECTED;
        p->best_effort += j->decision == PLAN_BEST_EFFORT;
    }
    int G = d->cluster.gpus_per_node;
    p->nslots = d->nslots;
    p->slots = ef_calloc((size_t)(d->nslots ? d->nslots : 1),
                         sizeof *p->slots);
    for (int s = 0; s < d->nslots; s++) {
        const plan_doc_slot *ds = &d->slots[s];
        plan_slot *sl = &p->slots[s];
        sl->start = ds->start;
        sl->end = ds->end;
        sl->nalloc = ds->nalloc;
        sl->a = ef_calloc((size_t)(ds->nalloc ? ds->nalloc : 1),
                          sizeof *sl->a);
        for (int k = 0; k < ds->nalloc; k++) {
            const plan_doc_alloc *da = &ds->a[k];
            plan_alloc *al = &sl->a[k];
            al->job = da->jobi;
            al->gpus = da->place.n;
            al->batch = da->place.batch;
            al->gpu = ef_malloc((size_t)(da->place.n ? da->place.n : 1) *
                                sizeof *al->gpu);
            for (int g = 0; g < da->place.n; g++)
                al->gpu[g] = da->place.node[g] * G + da->place.gpu[g];
            qsort(al->gpu, (size_t)al->gpus, sizeof *al->gpu, cmp_gpu);
        }
        p->end = ds->end;
    }
    if (d->nslots == 0)
        p->end = d->now;
    return EF_OK;
}

/* ---- checker --------------------------------------------------------------- */

static int cmp_gpu(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* What plan_check follows for each job as it walks the slots. */
typedef struct chk_job {
    double rem;          /* work left */
    int64_t end;         /* completion; -1 not yet */
    int64_t last;        /* end of the last slot it ran in; -1 none */
    int g;               /* GPUs it held there */
    const int *gpu;      /* which ones */
    int *own;            /* its current placement's ids (the queue's),
                            owned; NULL if none */
    long batch;          /* at which batch (0: its own) */
    double owed;         /* overhead seconds not yet paid */
    int restarted;       /* OVH_REFERENCE: its last slot was a restart */
} chk_job;

/* plan_check's walk over the slots [x, end) of one allocation of g GPUs
 * at throughput tp, taken at once where it can be: if the job completes
 * in none of the next K >= 2 slots (judged with room for rounding) and
 * their charges repeat (OVH_REFERENCE: x is not the slot of a change;
 * the other models: nothing owed), walk them with the bits slot-by-slot
 * walking gives (common/fsum.h) and return K; else 0. */
static int64_t chk_jump(chk_job *c, ovh_mode om, double tp, int g, int N,
                        int S, int64_t now, int64_t x, int64_t end,
                        int at_change)
{
    if (at_change || (om != OVH_REFERENCE && c->owed != 0))
        return 0;
    int64_t K = (end - x) / S;
    double d = tp * S;
    double ulp = ldexp(1.0, ilogb(c->rem) - 52);
    double q = (c->rem - d) / (d + 2 * ulp);
    int64_t safe = q >= 9e15 ? INT64_MAX : (int64_t)floor(q) - 1;
    if (safe < K)
        K = safe;
    if (K < 2)
        return 0;
    if (om != OVH_REFERENCE) {
        c->rem = ef_fsum_add(c->rem, -(tp * (double)S), K);
        return K;
    }
    ovh_ref_seq seq;
    ovh_ref_slots((x - now) / S, K, S, c->restarted, &seq);
    double charge[3], drem[3];
    charge[OVH_REF_CACHED] = ovh_reference(g, 1, 0, N);
    charge[OVH_REF_FRESH] = ovh_reference(g, 0, 0, N);
    charge[OVH_REF_RESTART] = ovh_reference(g, 0, 1, N);
    for (int k = 0; k < 3; k++)
        drem[k] = -(tp * (S - (charge[k] < S ? charge[k] : S)));
    ovh_ref_add(&c->rem, &seq, drem);
    ovh_ref_kind last = seq.ntail ? seq.tail[seq.ntail - 1].kind
                        : seq.reps ? seq.body[seq.nbody - 1].kind
                                   : seq.head[seq.nhead - 1].kind;
    c->owed = charge[last] - (charge[last] < S ? charge[last] : S);
    c->restarted = seq.last_restart;
    return K;
}

/* plan_check's walk of every slot: the structure (first violation: EF_ERR)
 * and each job's progress into cj[i].end. */
static int check_walk(const plan *p, chk_job *cj, ef_err *e)
{
    int N = p->cl.total_gpus, S = p->opts.slot;
    ovh_mode om = p->opts.overhead;
    int *owner = ef_malloc((size_t)N * sizeof *owner);
    int rc = EF_OK;
    for (int i = 0; i < p->njobs; i++) {
        const placement *cur = &p->jobs[i].in->cur;
        cj[i].rem = p->jobs[i].iterations_left;
        cj[i].end = cj[i].last = -1;
        if (cur->n > 0) { /* running at now: a kept size is no start */
            cj[i].own = ef_malloc((size_t)cur->n * sizeof *cj[i].own);
            for (int k = 0; k < cur->n; k++)
                cj[i].own[k] = cur->node[k] * p->cl.gpus_per_node +
                               cur->gpu[k];
            qsort(cj[i].own, (size_t)cur->n, sizeof *cj[i].own, cmp_gpu);
            cj[i].last = p->now;
            cj[i].g = cur->n;
            cj[i].gpu = cj[i].own;
            /* what its last change still costs it (the queue's
             * overhead_owed), as the planner starts from it */
            cj[i].owed = (double)p->jobs[i].in->owed;
            cj[i].batch = p->jobs[i].eb ? p->jobs[i].in->curve->batch : 0;
        }
    }
    int64_t t = p->now;
    for (int s = 0; s < p->nslots && rc == EF_OK; s++) {
        const plan_slot *sl = &p->slots[s];
        if (sl->start != t || sl->end <= sl->start ||
            (sl->start - p->now) % S) {
            rc = ef_fail(e, EF_E_INTERNAL, "slot %d: [%lld, %lld) is not the "
                         "next run of slots after %lld", s,
                         (long long)sl->start, (long long)sl->end, (long long)t);
            break;
        }
        t = sl->end;
        int used = 0;
        for (int k = 0; k < N; k++)
            owner[k] = -1;
        for (int a = 0; a < sl->nalloc && rc == EF_OK; a++) {
            const plan_alloc *al = &sl->a[a];
            const plan_job *j = &p->jobs[al->job];
            used += al->gpus;
            place_set ps = {al->gpus, al->gpu};
            /* the batch the allocation runs at (elastic batch) */
            const curve_row *row = j->in->curve;
            for (int b = 0; al->batch && b < j->in->nbatch; b++)
                if (j->in->batches[b] == al->batch)
                    row = j->in->rows[b];
            if (al->batch && (!j->eb || row->batch != al->batch))
                rc = ef_fail(e, EF_E_INTERNAL, "slot %d: job %s runs at batch "
                             "size %ld, not one it accepts", s, j->in->id,
                             al->batch);
            else if (curve_tput(row, al->gpus) <= 0)
                rc = ef_fail(e, EF_E_INTERNAL, "slot %d: job %s gets %d GPUs, "
                             "not a usable size", s, j->in->id, al->gpus);
            else if (!place_is_buddy(&p->cl, &ps))
                rc = ef_fail(e, EF_E_INTERNAL, "slot %d: job %s placement "
                             "breaks the buddy rule", s, j->in->id);
            else if (j->decision == PLAN_REJECTED)
                rc = ef_fail(e, EF_E_INTERNAL, "slot %d: rejected job %s runs",
                             s, j->in->id);
            else if (sl->start < j->release)
                rc = ef_fail(e, EF_E_INTERNAL, "slot %d: job %s runs before its "
                             "release %lld", s, j->in->id,
                             (long long)j->release);
            else if (cj[al->job].end >= 0)
                rc = ef_fail(e, EF_E_INTERNAL, "slot %d: job %s runs after it "
                             "completed", s, j->in->id);
            for (int k = 0; k < al->gpus && rc == EF_OK; k++) {
                if (owner[al->gpu[k]] >= 0)
                    rc = ef_fail(e, EF_E_INTERNAL, "slot %d: GPU %d given to "
                                 "two jobs", s, al->gpu[k]);
                owner[al->gpu[k]] = al->job;
            }
            if (rc != EF_OK)
                break;
            /* progress, slot by slot, with the overheads the plan's model
             * charges for what changed since the job's last slot */
            chk_job *c = &cj[al->job];
            double tp = al->batch ? eb_tput(row, al->gpus, 1)
                                  : curve_tput(j->in->curve, al->gpus);
            int g0 = c->last == sl->start ? c->g : 0;
            int moved = g0 == al->gpus &&
                        memcmp(c->gpu, al->gpu, (size_t)g0 * sizeof(int));
            int rebatch = g0 > 0 && c->batch != al->batch;
            int change = g0 != al->gpus || moved || rebatch;
            if (g0 == 0)
                c->owed = 0;
            if (change && (om == OVH_FIG12 || om == OVH_RESTART)) {
                double cost = ovh_charge(om, j->in->model, g0, al->gpus,
                                         moved, rebatch);
                if (cost > 0)
                    c->owed = cost;
            }
            for (int64_t x = sl->start; x < sl->end; x += S) {
                int64_t jump = chk_jump(c, om, tp, al->gpus, N, S, p->now, x,
                                        sl->end, change && x == sl->start);
                if (jump > 0) {
                    x += (jump - 1) * S;
                    continue;
                }
                if (om == OVH_REFERENCE) {
                    int64_t k = (x - p->now) / S;
                    int restart = k > 0 && k % S == 0;
                    int fresh = (change && x == sl->start) || c->restarted;
                    c->owed = ovh_reference(al->gpus, restart ? 0 : !fresh,
                                            restart, N);
                    c->restarted = restart;
                }
                double pay = c->owed < S ? c->owed : S;
                double prod = S - pay;
                if (c->rem <= tp * prod) {
                    c->end = x + (int64_t)ceil(pay + c->rem / tp);
                    c->rem = 0;
                    if (x + S < sl->end)
                        rc = ef_fail(e, EF_E_INTERNAL, "slot %d: job %s holds "
                                     "GPUs past the slot it completes in", s,
                                     j->in->id);
                    break;
                }
                c->rem -= tp * prod;
                c->owed -= pay;
            }
            c->last = sl->end;
            c->g = al->gpus;
            c->gpu = al->gpu;
            c->batch = al->batch;
        }
        if (rc == EF_OK && used > N)
            rc = ef_fail(e, EF_E_INTERNAL, "slot %d: %d GPUs used of %d", s,
                         used, N);
    }
    free(owner);
    return rc;
}

int plan_check_promise(const plan *p, plan_broken **out, int *n, ef_err *e)
{
    chk_job *cj = ef_calloc((size_t)(p->njobs ? p->njobs : 1), sizeof *cj);
    int rc = check_walk(p, cj, e);
    int truncated = p->opts.horizon > 0;
    *out = NULL;
    *n = 0;
    for (int i = 0; i < p->njobs && rc == EF_OK; i++) {
        const plan_job *j = &p->jobs[i];
        if (j->decision == PLAN_REJECTED)
            continue;
        /* a plan cut at a horizon (or a file that ends before the job's
         * planned end) holds only the start of the job's run: its planned
         * end is all there is to check */
        int cut = cj[i].end < 0 &&
                  (truncated || (j->planned_end > p->end && p->nslots > 0));
        int64_t end = cut ? j->planned_end : cj[i].end;
        int bad_end = !cut && cj[i].end != j->planned_end;
        int late = j->decision == PLAN_ADMITTED && j->in->has_deadline &&
                   (end < 0 || end > j->in->deadline);
        if (cut && truncated && !late)
            continue;
        if (!bad_end && !late)
            continue;
        *out = ef_realloc(*out, (size_t)(*n + 1) * sizeof **out);
        (*out)[(*n)++] = (plan_broken){i, cj[i].end, j->planned_end,
                                       j->in->has_deadline ? j->in->deadline
                                                           : -1,
                                       bad_end, late, j->at_risk};
    }
    for (int i = 0; i < p->njobs; i++)
        free(cj[i].own);
    free(cj);
    if (rc != EF_OK) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

int plan_check(const plan *p, ef_err *e)
{
    plan_broken *b;
    int n;
    if (plan_check_promise(p, &b, &n, e) != EF_OK)
        return EF_ERR;
    int rc = EF_OK;
    for (int k = 0; k < n && rc == EF_OK; k++) {
        const plan_job *j = &p->jobs[b[k].job];
        if (b[k].bad_end)
            rc = ef_fail(e, EF_E_INTERNAL, "job %s: slots complete it at %lld, "
                         "planned_end says %lld", j->in->id,
                         (long long)b[k].end, (long long)b[k].planned_end);
        else if (!b[k].at_risk)
            rc = ef_fail(e, EF_E_INTERNAL, "job %s: admitted but completes at "
                         "%lld after its deadline %lld", j->in->id,
                         (long long)b[k].end, (long long)b[k].deadline);
    }
    free(b);
    return rc;
}

char *plan_jobs_file_for(const char *plan_path, const char *jobs_path)
{
    if (!jobs_path || !jobs_path[0] || strcmp(plan_path, "-") == 0)
        return ef_strdup(jobs_path ? jobs_path : "");
    char *r = ef_path_from_file(jobs_path, plan_path);
    return r ? r : ef_strdup(jobs_path);
}

char *plan_jobs_file_find(const char *plan_path, const char *jf)
{
    struct stat st;
    if (!jf || !jf[0])
        return NULL;
    char *beside = ef_path_beside(plan_path, jf);
    if (stat(beside, &st) == 0)
        return beside;
    free(beside);
    return stat(jf, &st) == 0 ? ef_strdup(jf) : NULL;
}

char *plan_jobs_file_moved(const char *from, const char *jf, const char *to)
{
    if (!jf || !jf[0] || jf[0] == '/' || strcmp(to, "-") == 0)
        return ef_strdup(jf ? jf : "");
    char *found = plan_jobs_file_find(from, jf);
    char *r = found ? ef_path_between(found, to) : NULL;
    free(found);
    return r ? r : ef_strdup(jf);
}
