/*
 * sim.h: the trace simulator (sim_*): replays a job trace through a
 * scheduling policy with the effects a plan meets on a real cluster, and
 * measures how many deadlines were met.
 *
 * The event loop (sim_run):
 *   - Time is cut into slots of 'slot' seconds from the earliest submit
 *     time; scheduling points fall on slot boundaries, at most one per
 *     slot (a policy may ask for the reference's event times instead:
 *     sim_points). There is a point at the first boundary at or after each
 *     arrival, after each completion, whenever the policy asks for one
 *     (e.g. a reservation changes size), and every 'tick' seconds if set.
 *   - At a point the policy decides the released jobs (admit or reject)
 *     and sets the GPU count every active job gets until the next point
 *     (a usable size of its curve, see curve.h; total <= cluster). The
 *     loop then places the jobs through the slot engine (engine.h: the
 *     step the planner takes too) by the buddy rule, keeping each
 *     on its GPUs where it can.
 *   - A job whose GPU count or GPU set changed pays an overhead (see
 *     overhead.h): unproductive seconds at the start of the new
 *     configuration. Rescales (count changed while running), migrations
 *     (same count, other GPUs), preemptions and resumes are counted.
 *   - Exact accounting: a job's remaining iterations fall by
 *     throughput x productive time; it completes at the exact moment they
 *     reach zero, and its deadline is met iff that time <= its deadline.
 *     Its GPUs stay idle until the next point (reported as idle GPU-hours
 *     after completion, not hidden).
 *
 * Two optional extensions for policies that do not fit the buddy model
 * (the fixed-size baselines, see README "Simulating policies"):
 *   - time share: a policy may set a job's 'share' in (0,1]: the fraction
 *     of wall time the job computes on its GPUs (time slicing: several
 *     jobs take turns on the same GPUs). Progress and the completion time
 *     scale by it; 0 (the default) means 1. Capacity counts want x share.
 *   - own placement: a policy may set 'pin' of every job it runs to the
 *     GPU ids it chose (ascending, 'want' of them, valid until the next
 *     point). Then the loop does not place by the buddy rule; it checks
 *     that every GPU's shares sum to at most 1. Either every running job
 *     is pinned or none.
 *   - own speed: a policy with its own performance model (pollux: any
 *     GPU count, its own batch size) may set 'rate' of a job it runs: the
 *     job's progress in its work unit (iterations of its trace batch) per
 *     productive second at 'want' GPUs, and 'rate_one' its rate on one
 *     GPU (for the efficiency timeline). The loop then skips the
 *     runnable-size check (the job must be pinned) and advances the job at
 *     'rate' instead of its curve. 0 (the default) means the curve.
 * Policies that set none of these behave exactly as before (share 1,
 * buddy, the curve's throughput).
 */
#ifndef EF_SIM_H
#define EF_SIM_H

#include <stdint.h>

#include "common/err.h"
#include "common/lat.h"
#include "common/util.h"
#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "planner/place.h"
#include "model/overhead.h"

typedef enum sim_state {
    SJ_WAITING = 0, /* not released yet */
    SJ_ACTIVE,      /* admitted (or best-effort), not finished */
    SJ_DONE,
    SJ_REJECTED
} sim_state;

/* The longest reason and risk a job keeps (bytes; longer ones are cut). */
#define SIM_REASON_MAX 119
#define SIM_RISK_MAX 199

typedef struct sim_job {
    const job *in;
    sim_state state;
    ovh_id ovh;           /* its model's overhead row (ovh_lookup) */
    int best_effort;      /* no deadline */
    int64_t release;      /* first point at or after submit */
    double rem;           /* iterations left */
    int want;             /* the policy's answer at the current point */
    double share;         /* time share in (0,1] of 'want' (0: 1) */
    const int *pin;       /* the policy's own GPU ids for 'want', or NULL */
    int keep;             /* the policy asks placement to hold the job on
                             its GPUs if its size is unchanged (eng_alloc) */
    int g;                /* GPUs held now */
    place_set pl;         /* which ones */
    double ovh_left;      /* unproductive seconds left of this config */
    int64_t start;        /* first time it held GPUs; -1 never */
    double end;           /* exact completion time; -1 not finished */
    int met;
    int rescales, migrations, preemptions;
    double gpu_seconds;   /* held, including idle tails */
    double overhead_seconds;
    int64_t earliest_deadline; /* rejected: earliest admissible; -1 none */
    int64_t due;          /* the job counts as met iff it ends by 'due':
                             its deadline, unless the policy changed it
                             (--baselines reference: chronus judges
                             accepted jobs by their lease-floored deadline;
                             ef by its last plan's end: INT64_MAX or -1) */
    /* why it was rejected (sim_reject: at most SIM_REASON_MAX bytes; NULL
     * while not rejected) and why its policy flagged it at risk
     * (sim_flag_at_risk: at most SIM_RISK_MAX bytes; NULL: not flagged);
     * on the heap, since few jobs have either (sim_free frees them) */
    char *reason;
    char *risk;
    /* elastic batch (see sim_use_elastic_batch): 'eb' = this job's work
     * is counted in samples ('rem') and it may change batch; 'row' is the
     * batch it runs at (its own row otherwise); 'want_row' the policy's
     * choice at the current point (NULL: keep 'row') */
    int eb;
    const curve_row *row;
    const curve_row *want_row;
    int batch_changes;    /* batch changed while it held GPUs */
    double rate;          /* own speed (see above); 0: the curve's */
    double factor;        /* physics: its real speed over its curve's */
    double work_curve;    /* work its productive seconds would have done
                             at its curve's speed (what it did: work_done) */
    double work_done;
    double ovh_model;     /* overhead seconds the model charged its
                             changes, and what they really cost */
    double ovh_paid;
    double rate_one;
} sim_job;

/* One scheduling point, for the timeline. */
typedef struct sim_sample {
    int64_t t;
    int gpus_used;
    int running;
    int met_so_far;       /* deadline jobs completed in time up to t */
    double efficiency;    /* sum of tput(g)/tput(1) over running jobs / N */
} sim_sample;

typedef struct sim sim;

/*
 * Which jobs --overhead reference charges at a point, and how: the
 * reference simulator applies its formula (ovh_reference) per policy
 * (../shared/reference/algorithms.md §4.4, "Policies that apply the
 * model"; §8.5 lists it as a defect: efplan's one model charges every
 * policy the first way, and a policy's init picks another only under
 * --baselines reference):
 *   SIM_REF_CHARGE_CACHED  every job holding GPUs at every point, cached
 *                          when its GPU set was seen before (ef, ef-noac,
 *                          edf-ac in the reference; the default for all)
 *   SIM_REF_CHARGE_FULL    every job holding GPUs, never cached, at the
 *                          points with arrivals while more arrivals are
 *                          to come (the reference's Gandiva: its rounds
 *                          are its arrivals, §6.3, and it sets overheads
 *                          only while events remain; restarts count
 *                          those rounds only)
 *   SIM_REF_CHARGE_START   a job that starts or resumes, uncached, and
 *                          every job holding GPUs at a restart point (the
 *                          reference's Tiresias, dlas-gpu)
 */
/*
 * Where the points fall (sim.points_at; a policy's init may pick one
 * other than the grid, under --baselines reference only):
 *   SIM_POINTS_GRID     on the slot grid (sim.h's loop, the default)
 *   SIM_POINTS_EVENTS   at the events' own times: a job is released at
 *                       its submit time, and a completion or the
 *                       policy's wake makes a point at its time or a slot
 *                       after the point before, whichever is later (the
 *                       reference's Tiresias, algorithms.md §6.4)
 *   SIM_POINTS_BATCHED  as SIM_POINTS_EVENTS, but arrivals are batched
 *                       as the reference's event list is (§4.3): an
 *                       arrival less than a slot after the point is
 *                       handled a slot after it, with every arrival up to
 *                       then, unless no later arrival time remains (a
 *                       lone last event keeps its time); a completion
 *                       makes no point (the reference's Gandiva, which
 *                       notices completions at its next round, §6.3: the
 *                       policy's wake makes its rounds after the last
 *                       arrival)
 */
typedef enum sim_points {
    SIM_POINTS_GRID = 0,
    SIM_POINTS_EVENTS,
    SIM_POINTS_BATCHED
} sim_points;

typedef enum sim_ref_charge {
    SIM_REF_CHARGE_CACHED = 0,
    SIM_REF_CHARGE_FULL,
    SIM_REF_CHARGE_START
} sim_ref_charge;

/*
 * A scheduling policy: one module (pol_*.c) behind this interface.
 *   init: build the policy's state for simulation 's' (NULL + e on error).
 *   point: at scheduling point t, rel[0..nrel-1] are the jobs released
 *     now (submit order). Decide each with sim_admit / sim_reject, and set
 *     'want' of every SJ_ACTIVE job. Return the next time > t at which it
 *     needs a point even if nothing else happens (INT64_MAX: none).
 *   fini: free the state.
 * Policies read s->jobs, s->act (the active jobs, ascending index),
 * s->cl, s->opts; they never write anything but states via sim_admit /
 * sim_reject, the 'want' fields, optionally 'share', 'pin', 'rate' and
 * 'rate_one' (see the extensions above), 'due' (only ever earlier than the
 * deadline) and s->solver_fallbacks.
 */
typedef struct sim_policy {
    const char *name;
    const char *summary;
    void *(*init)(sim *s, ef_err *e);
    int64_t (*point)(sim *s, void *st, int64_t t, const int *rel, int nrel);
    void (*fini)(void *st);
} sim_policy;

typedef struct sim_opts {
    int slot;             /* seconds, > 0 */
    int64_t tick;         /* periodic point every 'tick' s (0: none) */
    ovh_mode overhead;
    int surplus_reference;/* ef: the reference's surplus order */
    int moves_any;        /* ef: the paper's rule, every point re-derives
                             each allocation (plan_opts.moves MOVES_ANY);
                             0: MOVES_NET, running jobs held still */
    int cap_reference;    /* baselines: the reference's GPU cap
                             min(64, batch, largest runnable column), past
                             the curve's peak (default: usable sizes) */
    int timeline;         /* keep the per-point timeline */
    /* physics that differs from the planner's model (--speed-factor,
     * --restart-cost): each model's jobs run at a speed factor drawn
     * uniformly from [speed_lo, speed_hi] (seeded by physics_seed and the
     * model's name; 0 and 0: 1), and every reconfiguration really
     * costs restart_scale times what the overhead model charges (0: 1) */
    double speed_lo, speed_hi;
    uint64_t physics_seed;
    double restart_scale;
    int learn;            /* ef: plan each job at its measured speed and
                             restart cost (its own once it has run, else
                             its model's from the jobs seen so far; the
                             curve's and the model's before any) */
    int elastic_batch;    /* ef: choose among the jobs' batch sizes too */
    int baselines_reference; /* baselines: keep the reference's defects
                             that change numbers (README: gandiva,
                             tiresias, themis, chronus; edf-ac: any job
                             planned to miss, late ones included, rejects
                             a newcomer; ef: the reference's admission and
                             metric, pol_ef.c) */
    int mip_nodes;        /* policies that solve a MIP (chronus): branch-
                             and-bound node budget per solve; past it the
                             policy falls back to a greedy answer
                             (counted in solver_fallbacks); 0: default */
    const char *pollux_dir; /* pollux: the goodput data (goodput.h);
                             NULL: the bundled inputs/pollux */
    int64_t max_points;   /* the runaway bound; 0: SIM_MAX_POINTS(jobs)
                             (tests set a small one) */
    /* NULL, or called at every scheduling point with the jobs done so far
     * (released and no longer running) and the trace's jobs, for a
     * progress line; it must not touch the simulation */
    void (*progress)(void *arg, int done, int total);
    void *progress_arg;
} sim_opts;

void sim_opts_default(sim_opts *o);

struct sim {
    sim_opts opts;
    const sim_policy *pol;
    int place_least;      /* set by the policy's init: placement moves as
                             few jobs as it can (engine.h eng.least) */
    sim_ref_charge ref_charge; /* set by the policy's init: which jobs
                             OVH_REFERENCE charges at a point (below) */
    int ref_rounds;       /* OVH_REFERENCE: the points its rule charged
                             (sim_ref_charge), which a restart counts */
    int released_now, released_left; /* arrivals at this point, and
                             those still to come */
    sim_points points_at; /* set by the policy's init: where points
                             fall (below) */
    const job_queue *q;
    cluster cl;
    int n;
    sim_job *jobs;        /* queue order */
    int *act;             /* active jobs, ascending index */
    int nact;
    int64_t now;          /* first point */
    int64_t t;            /* current point */
    /* results */
    int points;
    sim_sample *tl;
    int ntl, captl;
    double idle_after_completion; /* GPU-seconds */
    double overhead_gpu_seconds;
    double wall_seconds;
    int64_t end;          /* time of the last point */
    ovh_cache cache;      /* OVH_REFERENCE */
    int elastic;          /* sim_use_elastic_batch was called */
    ef_lat point_us;      /* microseconds in policy->point, per point
                             (the decision time; varies between runs) */
    int solver_fallbacks; /* decisions where a policy's exact solver did
                             not finish and its greedy answer was used */
};

/*
 * sim_use_elastic_batch: for policies that change batch sizes; call from
 * init. Every job that accepts two or more batch sizes (job_elastic) then
 * counts its work in samples (job_samples_left), runs at cell(b, g) x b
 * samples/s at the batch b of its 'row', and the policy may set
 * 'want_row' to one of its rows (j->in->rows) along with 'want'. A batch
 * change at an unchanged GPU count costs a restart (the overhead model's
 * migration cost). Other jobs are unaffected.
 */
void sim_use_elastic_batch(sim *s);

/* Admit released job i (deadline or best-effort). */
void sim_admit(sim *s, int i);
/* Reject released job i; 'earliest' the earliest deadline that would
 * have been admitted (-1 unknown); 'why' one line. */
void sim_reject(sim *s, int i, int64_t earliest, const char *why);
/* Flag admitted job i at risk of missing its deadline, 'why' one line
 * (the first flag is kept). */
void sim_flag_at_risk(sim *s, int i, const char *why);

/* The most scheduling points sim_run evaluates for n jobs before it
 * stops as a runaway: far more than any run of the bundled traces needs
 * (at most about 160 per job, 54,152 in all), enough for a job that
 * trains 2 years alone at 60 s slots under a policy that decides every
 * slot (longer: a longer --slot). */
#define SIM_MAX_POINTS(n) (((int64_t)1 << 20) + (int64_t)4096 * (n))

/*
 * sim_run: simulate queue 'q' (resolved against its curves) on cluster
 * 'c' with policy 'pol'. Fills 's' (free with sim_free). Errors: a policy
 * that breaks the rules (non-usable size, over capacity: EF_E_INTERNAL);
 * a runaway: more than SIM_MAX_POINTS(q->n) points (opts.max_points
 * when set), or a point past
 * t = 1e15 s (EF_MAX_I64, the largest time efplan keeps), stops the run
 * with EF_E_INTERNAL and a message (a policy that wakes every slot on a
 * job that needs more time than that), rather than a hang.
 * Reentrant: different simulations may run in parallel.
 */
int sim_run(sim *s, const job_queue *q, const cluster *c,
            const sim_policy *pol, const sim_opts *o, ef_err *e);
void sim_free(sim *s);

/* Policy registry: by name (NULL if unknown), and the list. */
const sim_policy *sim_policy_find(const char *name);
int sim_policy_count(void);
const sim_policy *sim_policy_at(int i);

/* 1 if policy 'p' changes jobs' batch sizes under sim_opts.elastic_batch
 * (ef, ef-noac; saxena always does), else 0 (it keeps every job's). */
int sim_policy_elastic_batch(const sim_policy *p);

/* Summary metrics of a finished simulation. */
typedef struct sim_metrics {
    int jobs, deadline_jobs, best_effort_jobs, admitted, rejected;
    int met, missed, unfinished;
    int at_risk;                 /* admitted jobs flagged at risk */
    double deadline_ratio;
    double gpu_hours, idle_gpu_hours_after_completion, overhead_gpu_hours;
    double best_effort_mean_jct; /* < 0 if none */
    double mean_jct;             /* completed jobs; < 0 if none */
    int rescales, migrations, preemptions;
    double mean_efficiency;      /* time-weighted over the timeline */
    int batch_changes;           /* elastic batch: batch changed while running */
    /* restarts per job that ran (its rescales, migrations, preemptions
     * and batch changes): mean, p99 (nearest rank), max */
    double restarts_mean, restarts_p99;
    int restarts_max;
    int solver_fallbacks;        /* see sim.solver_fallbacks */
} sim_metrics;

void sim_metrics_compute(const sim *s, sim_metrics *m);

/* Throughput of a job at g GPUs: its curve's cell (0 when g is not a
 * runnable power of two). Policies give usable sizes (curve.h); only the
 * reference-compatible baseline cap may go past a curve's peak. */
double sim_tput(const sim_job *j, int g);

/* Throughput of a job at g GPUs relative to one GPU (Fig. 10's measure). */
double sim_speedup(const sim_job *j, int g);

/*
 * Outputs: the result JSON (format efplan-sim v1, keys sorted) and the
 * per-job rows as CSV, written atomically; sim_svg appends the SVG
 * timeline (GPUs in use, deadlines met; simsvg.c) to 'out'.
 */
int sim_write_json(const sim *s, const char *trace, const char *path,
                   ef_err *e);
int sim_write_jobs_csv(const sim *s, const char *path, ef_err *e);
void sim_svg(const sim *s, const char *trace, ef_buf *out);

#endif
