/*
 * planio.h: the plan file (format efplan-plan), read and written by one
 * module through one field table per object: the top level, a job entry,
 * a slot, an allocation, a run and a placement (planio.c).
 *
 * Two versions, both read, either written:
 *   1  "slots": every slot (a stretch of identical consecutive slots)
 *      lists every allocation in it, job by job in the jobs' order (the
 *      reader takes them in any order and keeps them in that one);
 *   2  (written by default) "slot_ends": where each such slot ends, and
 *      "runs": each job's allocations as runs {job, start, end, gpus,
 *      placement[, batch_size]}, a run as long as the job keeps the same
 *      GPUs (and batch) over consecutive slots, in (start, job) order.
 *      The file grows with the plan's decisions, not with slots x jobs.
 * A version 2 file is read into the same plan_doc as the version 1 file
 * of the same plan: its runs are cut back into the slots (plan_doc_equal
 * holds between the two), so every reader sees one shape.
 *
 * plan_doc is the file's value, member for member. plan_write_json and
 * plan_to_json (plan.h) turn a plan into a plan_doc and write it;
 * plan_doc_parse / plan_doc_load read one back, checking every member
 * (types, ranges, unknown keys) and what the file promises as a whole:
 * known and distinct job ids, slots consecutive from "now", placements
 * inside the cluster and of "gpus" GPUs, no GPU given twice in a slot, a
 * batch size only for an elastic-batch job and one it accepts. Whoever
 * reads a plan (apply's exec_plan, submit) reads it here.
 *
 * Ownership: a plan_doc's strings and arrays live in its arena; free the
 * whole with plan_doc_free.
 */
#ifndef EF_PLANIO_H
#define EF_PLANIO_H

#include <stdint.h>

#include "common/err.h"
#include "common/jfield.h"
#include "model/jobs.h"
#include "model/placement.h"
#include "planner/plan.h"

/* Name of a decision in the plan file ("admitted", ...). */
const char *plan_decision_name(plan_decision d);
/* Those names by plan_decision value (a field table's JF_ENUM). */
extern const char *const plan_decision_names[4];

/* Flags of the job-entry fields (plan_doc_queue_json's mask): a member of
 * the job as the queue gave it (efplan-jobs key of the same name), and
 * the work counted in iterations (iterations, iterations_done: a job
 * member too unless the entry has the work in samples). */
#define PLAN_F_JOB  JF_USER
#define PLAN_F_ITER (JF_USER << 1)

typedef struct plan_doc_job {
    long batch_size;
    int nbatch;
    long *batch_sizes;       /* elastic jobs (eb) */
    int64_t deadline;        /* -1: null (best-effort) */
    int decision;            /* plan_decision */
    int64_t earliest_feasible_deadline; /* -1: null */
    double gpu_seconds;
    const char *id;
    int64_t iterations, iterations_done;
    double iterations_left;
    int migrations;
    const char *model;
    int64_t planned_end;     /* -1: null */
    const char *reason;      /* why rejected, or why an admitted job is at
                             risk; NULL: none */
    int resizes;
    double samples, samples_done, samples_left; /* elastic jobs (eb) */
    int64_t slack;           /* PLAN_NO_SLACK: null */
    int64_t start;           /* -1: null */
    int64_t submit_time;
    int eb;                  /* an elastic-batch job: batch_sizes and the
                                samples members are there */
    int promised;            /* "promised": 1, the queue's: admitted by an
                                earlier decision (jobs.h) */
    int at_risk;             /* "at_risk": true: admitted, and the plan
                                cannot make its deadline any more; 'reason'
                                says why, planned_end its earliest finish */
    placement place;         /* "placement", the queue's: where it ran at
                                the plan's now (n == 0: nowhere) */
    /* "reserved" (optional; absent: unknown, as in files of earlier
     * efplan and plans efplan did not decide, the ILP's): for an admitted
     * job, the GPUs of its allocation that its reservation (minimum
     * satisfactory share) held, as segments {start, end, gpus} in time
     * order, gpus > 0; the rest of its allocation was surplus */
    int has_reserved;        /* the member is there (maybe empty) */
    int nreserved;
    seg *reserved;
} plan_doc_job;

#define PLAN_NO_SLACK INT64_MIN

typedef struct plan_doc_alloc {
    int gpus;
    const char *job;
    placement place;        /* "placement", and "batch_size" in
                                place.batch */
    int jobi;                /* read: index of the job in plan_doc.jobs */
    int run;                 /* read from a version 2 file: 1 + the index
                                of the run it was cut from; else 0 */
} plan_doc_alloc;

/* One run of a version 2 file: job 'job' holds the GPUs of 'place' (and
 * batch place.batch) in every slot of [start, end). */
typedef struct plan_doc_run {
    int64_t end;
    int gpus;
    const char *job;
    placement place;
    int64_t start;
    int jobi;                /* read: index of the job in plan_doc.jobs */
} plan_doc_run;

typedef struct plan_doc_slot {
    int nalloc;
    plan_doc_alloc *a;
    int64_t end, start;
} plan_doc_slot;

typedef struct plan_doc_summary {
    int admitted, best_effort;
    int at_risk;                  /* admitted jobs flagged at risk (0: the
                                     key is left out) */
    int64_t end;
    int migrations;
    double promised_gpu_hours;
    int rejected, replan_fallbacks, resizes, scheduling_points;
    double used_gpu_hours, utilisation;
} plan_doc_summary;

#define PLAN_V1 1
#define PLAN_V2 2

typedef struct plan_doc_cluster {
    int gpus_per_node, nodes;
} plan_doc_cluster;

typedef struct plan_doc {
    plan_doc_cluster cluster;
    const char *curves;
    int elastic_batch;
    int njobs;
    plan_doc_job *jobs;           /* in file order */
    const char *jobs_file;
    int64_t now;
    int slot_seconds;
    int nslots;
    plan_doc_slot *slots;
    plan_doc_summary summary;
    int surplus;                  /* plan_surplus */
    int moves;                    /* plan_moves: "moves" (optional,
                                     written only when "any"; absent:
                                     "net") */
    const char *overhead;         /* ovh_name; NULL (absent): "none" */
    int64_t deadline_margin;      /* "deadline_margin" (optional, 0): jobs
                                     planned to finish this long before
                                     their deadlines (plan_opts) */
    /* "node_map" (optional): the cluster's node index of each plan node,
     * when the plan runs on part of a cluster (efplan serve with drained
     * nodes: plan node k is the cluster's node node_map[k]); absent: the
     * same numbers */
    int nnode_map;
    long *node_map;
    int version;                  /* PLAN_V1 or PLAN_V2: as read; what
                                     plan_doc_json writes (0: PLAN_V2) */
    /* version 2 only, written and read by planio.c (slots hold the same
     * plan): the runs, and each slot's end */
    int nruns;
    plan_doc_run *runs;
    int nslot_ends;
    long *slot_ends;
    int runs_only;                /* plan_doc_for_file's version 2 document:
                                     the runs hold the plan, slots is
                                     empty (for writing only) */
    jf_arena arena;               /* owns every string and array */
} plan_doc;

/* The plan file as written: plan 'p' with the jobs file and curves it
 * records ("" when NULL). d borrows p's strings (ids, models, reasons,
 * batch sizes) and jobs_path and curves: use it while they live. Free
 * with plan_doc_free. */
void plan_doc_from_plan(plan_doc *d, const plan *p, const char *jobs_path,
                        const char *curves);

/* The document plan_write_json writes: version 1, plan_doc_from_plan's;
 * version 2, the runs made from p's slots directly (runs_only: no slots,
 * so its memory grows with the runs; only for plan_doc_json). The same
 * text as plan_doc_from_plan's document written in that version. */
void plan_doc_for_file(plan_doc *d, const plan *p, const char *jobs_path,
                       const char *curves, int version);

/* The file text of d (heap; *len its length) in version d->version
 * (0: PLAN_V2): keys sorted, the plan file's layout (one line per job and
 * per slot, or per run). */
char *plan_doc_json(const plan_doc *d, size_t *len);

/* Read plan JSON from a buffer ('path' names it in messages), checking
 * all that the header comment lists. EF_E_INPUT with file and JSON path
 * on any problem; then *d is empty. Free with plan_doc_free. */
int plan_doc_parse(plan_doc *d, const char *path, const char *buf,
                   size_t len, ef_err *e);

/* plan_doc_parse of the file at 'path'. */
int plan_doc_load(plan_doc *d, const char *path, ef_err *e);

void plan_doc_free(plan_doc *d);

/* 1 if a and b hold the same value, member for member. */
int plan_doc_equal(const plan_doc *a, const plan_doc *b);

/* The plan's jobs as the queue gave them: {"jobs": [...]} (efplan-jobs,
 * heap text) with every job member the plan file holds (the PLAN_F_JOB
 * fields: the work in samples for an elastic job, else in iterations),
 * then 'extra' (the text of one more job object) when not NULL. For
 * queue_parse_json: a re-plan of a plan's queue plans the same jobs. */
char *plan_doc_queue_json(const plan_doc *d, const char *extra);

/* A plan in Unix time: one whose "now" is at least PLAN_UNIX_MIN (10^9
 * s, 2001-09-09T01:46:40Z) counts its times in Unix seconds, so its
 * clock is the wall clock (efplan apply runs it on real time at
 * --time-scale 1; efplan submit defaults a new job's submit_time to the
 * wall clock when that is later than "now"). A smaller "now" is a clock
 * of its own (seconds from a trace's start). */
#define PLAN_UNIX_MIN 1000000000LL

/* The jobs_file rule. A plan file records the jobs file it was made
 * from relative to the plan file's own directory (or absolute, as it was
 * given), so apply, submit and validate --plan find it from any
 * directory, and a directory holding both can be moved. Plans written by
 * an older efplan recorded it relative to the directory they were made
 * in: they are still read from there. */

/* What a plan file written to 'plan_path' records for the queue read
 * from 'jobs_path' (as named on the command line): ef_path_from_file
 * (e.g. "../q.json" for q.json and plans/p.json); 'jobs_path' as given
 * when it is absolute, when the plan goes to standard output
 * ('plan_path' "-": there is no file to be relative to) or when a
 * directory cannot be resolved; "" for NULL or "". Heap; free(). */
char *plan_jobs_file_for(const char *plan_path, const char *jobs_path);

/* The file to open for the jobs_file 'jf' that the plan file at
 * 'plan_path' records: 'jf' taken from the plan file's directory when
 * that names an existing file, else 'jf' from the current directory (a
 * plan of an older efplan, used where it was made) when that exists;
 * NULL when neither exists or 'jf' is empty. Heap; free(). */
char *plan_jobs_file_find(const char *plan_path, const char *jf);

/* What a copy of the plan file at 'from' (recording 'jf'), written to
 * 'to', records: 'jf' found (plan_jobs_file_find) and named from the
 * directory of 'to' (ef_path_between); 'jf' itself when it is absolute
 * or empty, when 'to' is "-" or when it cannot be found. Heap. */
char *plan_jobs_file_moved(const char *from, const char *jf, const char *to);

/* 1 if a plan whose "now" is 'now' is in Unix time (above), else 0. */
int plan_unix_time(int64_t now);

/* The plan options the file records: now, slot, surplus, moves, elastic batch,
 * overhead model (horizon 0: the file does not say). */
void plan_doc_opts(const plan_doc *d, plan_opts *o);

/*
 * plan_doc_plan: the plan file 'd' as a struct plan for plan_check and
 * plan_check_promise (plan.h), built from the file alone (the planner
 * decides nothing): its jobs as a queue 'q' (plan_doc_queue_json,
 * resolved against 'cs'; the plan's jobs point into it), its cluster,
 * options (plan_doc_opts), each job's decision, at_risk and planned_end,
 * and its slots with their GPUs (plan node * gpus_per_node + GPU) and
 * batch sizes. 'label' names the file in messages. Free both with
 * plan_free and queue_free. Errors: a job the curves lack (EF_E_INPUT);
 * then both are empty.
 */
int plan_doc_plan(plan *p, job_queue *q, const plan_doc *d,
                  const curve_set *cs, const char *label, ef_err *e);

#endif
