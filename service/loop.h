/*
 * loop.h: the closed loop (loop_*): efplan serve --backend runs the
 * service's plan on the cluster and re-plans from what really happens.
 *
 * One thread, one tick every loop_opts.poll wall seconds (at once when
 * woken by loop_wake). A tick is four named steps, under the svc lock:
 *   observe  poll every attempt that runs; read each job's progress file.
 *            An exit 0, or progress that reached the job's iterations,
 *            completes the job; any other exit, or an attempt that is gone,
 *            is a failure: the job is relaunched while it has restarts
 *            left (loop_opts.max_restarts; the lost work is its own: the
 *            re-plan takes its real progress), then it is failed with its
 *            log. Each of these is an event (a re-plan follows at once).
 *   lag      a running admitted job whose progress since its last re-plan
 *            (or its launch, after the overhead its model pays) is more
 *            than loop_opts.lag of the planned progress behind, after at
 *            least a quarter of a slot, is an event ("lag").
 *   replan   at every slot boundary of the current plan while jobs are
 *            live, and at the first boundary after an event or a change
 *            of the plan (a submission, a cancel, a drained node): the
 *            events of one slot lead to one set of changes at its end,
 *            so a running job moves at most once a slot (at once: the
 *            first re-plan, an operator's, a node the cluster reports
 *            down or back up): svc_loop_replan with
 *            every job as seen (progress, placement, done or failed): the
 *            same planner core as efplan plan and simulate --policy ef,
 *            planned from now, admitted jobs promised (at risk, with the
 *            reason and the earliest finish, when they cannot be saved).
 *   act      what runs against what the plan gives each job now
 *            (placement and batch): a job whose allocation is unchanged
 *            keeps running; one whose allocation changed or ended gets
 *            its checkpoint signal, 'grace_seconds' to exit, then SIGKILL
 *            (exec.h); a job is launched once every GPU it is given is
 *            free. No GPU ever holds two jobs.
 *
 * A job's state changes in one function (lj_set, loop.c), by this table:
 *
 *   from      to        when                             store attempt row
 *   idle      running   launched on its allocation       intended, running
 *   running   stopping  its allocation changed or ended  stopping
 *   running   done      exit 0 / progress reached        ended "done"
 *   running   idle      failed, restarts left            ended "failed"/"lost"
 *   running   failed    failed, no restart left          ended "failed"/"lost"
 *   stopping  idle      it exited (checkpointed)         ended "stopped"
 *   stopping  done      it exited with its work done     ended "done"
 *
 * Crash safety: the attempt row is written (and fsynced by the store)
 * before every launch and before every stop signal. loop_start adopts
 * what a killed service left: an "intended" attempt is looked for with
 * the backend (found: running; not found: ended "not_launched", never
 * launched twice), a running one is polled, a stopping one gets its
 * signal again. Jobs keep running while the service is down.
 *
 * Backends: local and slurm (executor/exec.h: the same launch
 * environment, progress files, checkpoint signals as efplan apply), and
 * dry-run: nothing runs, every attempt advances at its curve's speed on
 * the service's clock (the simulator's physics: the loop then does what
 * simulate --policy ef does, on the service's clock).
 */
#ifndef EF_LOOP_H
#define EF_LOOP_H

#include "common/err.h"
#include "common/htime.h"
#include "executor/exec.h"
#include "service/svc.h"

typedef struct loop loop;

typedef struct loop_opts {
    const char *backend;    /* "local", "slurm" or "dry-run" */
    const char *state;      /* run directory: run/ and jobs/ (exec.h)
                               (created, locked) */
    const char *nodes_file; /* node names (exec_nodes_load), or NULL */
    const char *job_user;   /* NULL: every job runs as the loop's own
                               process, in its environment (one user).
                               Else each job runs as its owner's Unix
                               account (store_user_unix), or as this
                               account when the owner has none, in a clean
                               environment (exec_user_env); as root only
                               (a loop that is not root runs them as
                               itself, and refuses a job while more than
                               one user holds tokens); never as uid 0 */
    exec_slurm_opts slurm;  /* --backend slurm: partition, account, qos,
                               more sbatch words (executor/exec.h) */
    double poll;            /* wall seconds between ticks (default 0.2) */
    int max_restarts;       /* relaunches after failures, per job (2) */
    double lag;             /* the lag threshold, a fraction (0.1) */
    int64_t margin;         /* deadline margin, plan seconds (-1: one
                               slot): admitted jobs are planned to end
                               this long before their deadlines */
    double scale;           /* plan seconds per wall second (the service's
                               clock), for Slurm time limits */
    /* manual: no thread; the caller drives the loop with loop_tick_at
     * on a clock of its own ('at': the time loop_start adopts at; -1:
     * the service's clock). For tests, and the loop's consistency check
     * against the simulator (dry-run on a virtual clock). */
    int manual;
    int64_t at;
    /* the log (one line, no newline); NULL: none. Its times are shown
     * as 'zone' says (ef_ht_at; zeroed options: Unix seconds). */
    void (*say)(void *arg, const char *line);
    ef_ht_zone zone;
    void *arg;
} loop_opts;

void loop_opts_default(loop_opts *o);

/*
 * loop_start: prepare the backend, lock the run directory, adopt what a
 * previous service left running (see above), and start the thread; it
 * re-plans at its first tick. *L is stopped with loop_stop. Errors:
 * EF_E_USAGE (unknown backend), EF_E_INPUT (run directory locked by
 * another service or unusable, a bad --nodes file), EF_E_INTERNAL (the
 * backend, the store).
 */
int loop_start(loop **L, svc *s, const loop_opts *o, ef_err *e);

/* A manual loop's tick at plan time 'now' (not earlier than the last):
 * *pending (may be NULL) says whether it wants another tick at the same
 * time (a stop or a start, or a re-plan, is pending). */
int loop_tick_at(loop *L, int64_t now, int *pending, ef_err *e);

/* Ask for a tick now and a re-plan, 'why' (one line, may be NULL): for
 * svc_set_notify. */
void loop_wake(void *L, const char *why);

/* Stop the thread and free the loop. Jobs keep running (a restarted
 * service adopts them). NULL: nothing. */
void loop_stop(loop *L);

/* Counters since loop_start (read after loop_stop or for tests). */
typedef struct loop_stats {
    int ticks, replans, launches, stops, restarts, failed, done, lag;
    int holds;  /* changes of a running job's GPUs the loop did not make
                   (no promise needed them: loop.c's hold rule), one per
                   job and plan */
} loop_stats;
void loop_get_stats(loop *L, loop_stats *st);

#endif
