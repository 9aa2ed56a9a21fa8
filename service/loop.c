/* loop.c: the closed loop of efplan serve (see loop.h). */
#define _GNU_SOURCE 1
#include "service/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common/htime.h"
#include "common/util.h"
#include "executor/exec.h"
#include "model/overhead.h"
#include "service/hold.h"
#include "service/store.h"
#include "service/token.h"

/* A job's state in the loop (the table in loop.h). */
typedef enum lj_state {
    LJ_IDLE = 0,
    LJ_RUNNING,
    LJ_STOPPING,
    LJ_DONE,
    LJ_FAILED
} lj_state;

static const char *const lj_names[] = {"idle", "running", "stopping", "done",
                                       "failed"};

/* One job as the loop runs it. */
typedef struct lj {
    char *id;
    lj_state st;
    int admitted;          /* a promise: lag counts */
    int attempt;           /* the current (or last) attempt's number */
    placement place;       /* where the current attempt runs, as the
                              planner counts it */
    placement real;        /* where the cluster says it runs, when it
                              picks the GPUs itself (n == 0: not known) */
    char handle[128];      /* its backend handle */
    int64_t started;       /* plan time of its launch */
    int64_t progress;      /* iterations done, as last read */
    int64_t iterations;
    int restarts;          /* failed attempts so far */
    int port_retries;      /* attempts that could not bind their
                              rendezvous port (not failures) */
    int warned;            /* the attempt a world-size warning was given
                              for (0: none) */
    int reported;          /* done/failed: told to the service already */
    placement want;        /* what the plan gives it now */
    double stop_wall;      /* stopping: wall time of the signal */
    int killed;            /* stopping: SIGKILL sent */
    placement prev;        /* the attempt stopped last, and when */
    int64_t prev_t;        /* (a relaunch at that moment is a resize or
                              a migration: what the dry run charges) */
    char why[1200];        /* failed: why, with its log */
    /* lag: progress p0 at plan time t0, planned speed rate (it/s) */
    int64_t p0, t0;
    double rate;
    int lagged;            /* a lag event since t0 */
    /* speed: measured progress over what the curve gives, since the
     * attempt's overhead was paid (p_run at t_run); 1 until measured */
    double speed;
    int64_t p_run, t_run;
    int64_t ovh_until;     /* the launch's overhead is paid by then (its
                              model's charge) */
    int run_seen;          /* progress moved since the launch: the speed
                              is measured from that moment (startup and
                              restore are the overhead's) */
    int speed_own;         /* its speed was measured once at least (else
                              the re-plan takes its model's, learned) */
    int measured;          /* the current attempt's speed was measured
                              (learned into the store when it ends) */
    double speed_base;     /* its speed over its earlier attempts ... */
    double speed_w;        /* ... and the plan seconds it was measured on */
    double speed_dt;       /* plan seconds the current attempt's speed was
                              measured on (0: not yet) */
    double noted;          /* the speed last told to the service as
                              running (svc_note_speed; 0: none) */
    int need;              /* GPUs its promise needs now (the re-plan's
                              reservation) */
    int must;              /* the plan cannot keep it where it runs: it
                              must move (or stop) */
    double pspeed;         /* the speed the re-plan planned it at (of its
                              curve's) */
    double rscale;         /* its restarts' measured cost over the
                              model's (1: none measured) */
    int64_t held_v;        /* the plan version a change of it was held
                              for (counted once) */
    int held_att;          /* ... the attempt and the plan's wish it was */
    placement held_want;   /* last said for */
    double stop_s;         /* plan seconds the last stop took, from the
                              signal to the exit (0: none to count) */
    double restart_s;      /* ... counted in the current launch's restart */
    /* dry-run physics: progress as a real number, advanced to dry_t */
    double dry_prog;
    int64_t dry_t;
    double dry_owed;       /* overhead seconds not yet paid */
    const job *in;         /* the job (xp.q), for curves and commands */
} lj;

struct loop {
    svc *s;
    loop_opts o;
    const exec_backend *b; /* NULL: dry-run */
    exec_ctx x;
    exec_plan xp;          /* the jobs the backends see (x.p) */
    lj *jobs;              /* sorted by id, the order of xp.jobs */
    int n;
    int lockfd;
    int64_t version;       /* plan version the loop last acted on */
    int64_t seen;          /* plan version its job list was last read at */
    int64_t next;          /* plan time of the next slot boundary */
    int need;              /* a re-plan is due */
    int urgent;            /* ... now, not at the next slot boundary (the
                              first one while jobs run, an operator's
                              re-plan, a node the cluster reports down or
                              back) */
    int deferred;          /* 'next' was set a slot after an event that
                              came while nothing ran (tick) */
    int ran;               /* a job ran after the last tick's act */
    int freed;             /* a job completed in this tick (its GPUs
                              are free) */
    int other;             /* an event other than a submission came since
                              the last re-plan (a drain, a cancel, ...) */
    char why[512];         /* why (events, joined) */
    int slot, ovh;         /* the plan's slot seconds, overhead model */
    int still;             /* the plan holds running jobs still (--moves
                              net): so does act (hold_rule) */
    loop_stats stats;
    pthread_t th;
    pthread_mutex_t mu;    /* guards 'wake' and 'quit' */
    pthread_cond_t cv;
    int wake, quit, started;
    int hurry;             /* a stop or a start is pending (act) */
    int notified;          /* svc_set_notify points at this loop */
    double nodes_wall;     /* wall time nodes() last asked the cluster */
    char woken[200];       /* why the service woke the loop (under mu) */
    /* the loop's own state (everything above but mu's) is the loop
     * thread's; a tick holds 'tmu' and the service's lock, and lets the
     * service's lock go while the cluster answers (in_tick: a backend
     * call runs unlocked, cluster_call) */
    pthread_mutex_t tmu;
    int in_tick;
};

/* ---- small helpers ----------------------------------------------------------- */

/* Around a backend call inside a tick: the service's lock is let go
 * while the cluster answers (a Slurm controller that does not answer
 * stalls the loop, never the API: submissions, reads, /healthz); what
 * the service changes meanwhile, the loop sees at its next tick (the
 * plan's version). */
static void cluster_call(loop *L)
{
    if (L->in_tick)
        svc_unlock(L->s);
}

static void cluster_done(loop *L)
{
    if (L->in_tick)
        svc_lock(L->s);
}

static void say(loop *L, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(loop *L, const char *fmt, ...)
{
    if (!L->o.say)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    L->o.say(L->o.arg, line);
}

/* Note an event: a re-plan is due, and why. */
static void event(loop *L, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void event(loop *L, const char *fmt, ...)
{
    char w[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w, sizeof w, fmt, ap);
    va_end(ap);
    size_t n = strlen(L->why);
    if (n + strlen(w) + 3 < sizeof L->why)
        snprintf(L->why + n, sizeof L->why - n, "%s%s", n ? "; " : "", w);
    L->need = 1;
}

static int find_job(const loop *L, const char *id)
{
    return exec_plan_find(&L->xp, id); /* L->jobs is in xp's order */
}


/* The attempt run of job j for the backend. */
static exec_run run_of(const loop *L, int j)
{
    exec_run r;
    memset(&r, 0, sizeof r);
    r.job = j;
    r.attempt = L->jobs[j].attempt;
    r.place = &L->jobs[j].place;
    /* Slurm --time: a week of plan time; the loop stops it long before */
    r.wall_limit = 7 * 86400.0 / (L->o.scale > 0 ? L->o.scale : 1);
    if (r.wall_limit < 60)
        r.wall_limit = 60;
    snprintf(r.handle, sizeof r.handle, "%s", L->jobs[j].handle);
    return r;
}

/* Planned speed of job j on 'g' GPUs (its batch's curve), it/s. */
static double speed_of(const lj *j, int g)
{
    return j->in && j->in->curve ? curve_tput(j->in->curve, g) : 0;
}

/* ---- the one state change ------------------------------------------------------ */

/* Write attempt row 'a' of job j with state 'as' (result and why when
 * ended). */
static int put_attempt(loop *L, const lj *j, store_astate as,
                       const char *result, const char *why, int64_t now,
                       ef_err *e)
{
    char *pt = placement_json(&j->place);
    json_t *pv = json_loads(pt, 0, NULL);
    free(pt);
    json_t *o = json_object();
    json_object_set_new(o, "batch", json_integer(j->place.batch));
    json_object_set_new(o, "placement", pv ? pv : json_array());
    if (j->real.n) {
        char *rt = placement_json(&j->real);
        json_t *rv = json_loads(rt, 0, NULL);
        free(rt);
        json_object_set_new(o, "real", rv ? rv : json_array());
    }
    char *ptxt = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    store_attempt a = {(char *)j->id, j->attempt, as, ptxt,
                       (char *)j->handle, j->started,
                       as == STORE_A_ENDED ? now : -1, (char *)result,
                       (char *)why};
    int rc = store_attempt_put(svc_store(L->s), &a, e);
    free(ptxt);
    return rc;
}

/*
 * lj_set: move job j to state 'to' (loop.h's table), writing its attempt
 * row first: 'result' is the ended row's result (NULL: not ended), 'why'
 * one line for the row and the log. The only place a job's state
 * changes.
 */
static int lj_set(loop *L, int j, lj_state to, const char *result,
                  const char *why, int64_t now, ef_err *e)
{
    lj *J = &L->jobs[j];
    store_astate as = to == LJ_RUNNING ? STORE_A_RUNNING
                      : to == LJ_STOPPING ? STORE_A_STOPPING
                                          : STORE_A_ENDED;
    if (L->b && J->attempt > 0 &&
        put_attempt(L, J, as, result, why, now, e) != EF_OK)
        return EF_ERR;
    /* what users see: running while an attempt runs, queued between */
    if (to == LJ_RUNNING || (to == LJ_IDLE && J->st != LJ_IDLE))
        if (store_job_update_live(svc_store(L->s), J->id,
                                  to == LJ_RUNNING ? "running" : "queued",
                                  J->progress, now, e) < 0)
            return EF_ERR;
    say(L, "%s: %s -> %s (attempt %d): %s", J->id, lj_names[J->st],
        lj_names[to], J->attempt, why);
    J->st = to;
    if (to == LJ_IDLE || to == LJ_DONE || to == LJ_FAILED) {
        placement_free(&J->place);
        placement_free(&J->real);
        J->handle[0] = '\0';
        J->killed = 0;
    }
    return EF_OK;
}

/* ---- the job set ------------------------------------------------------------- */

static void lj_free(lj *j)
{
    free(j->id);
    placement_free(&j->place);
    placement_free(&j->real);
    placement_free(&j->want);
    placement_free(&j->prev);
    placement_free(&j->held_want);
}

/* The attempts job j had (store): its highest number and failures. */
static int lj_history(loop *L, lj *j, ef_err *e)
{
    store_attempt *rows = NULL;
    int n = 0;
    if (store_attempts_list(svc_store(L->s), j->id, 0, &rows, &n, e) !=
        EF_OK)
        return EF_ERR;
    for (int i = 0; i < n; i++) {
        if (rows[i].attempt > j->attempt)
            j->attempt = rows[i].attempt;
        /* an attempt that ended done (the service stopped before its
         * re-plan told the store): the job is done, not run again */
        if (rows[i].result && strcmp(rows[i].result, "done") == 0)
            j->st = LJ_DONE;
        j->restarts += rows[i].result &&
                       (strcmp(rows[i].result, "failed") == 0 ||
                        strcmp(rows[i].result, "lost") == 0);
    }
    store_attempts_free(rows, n);
    return EF_OK;
}

/*
 * refresh: the job set from the service: every live job, plus the jobs
 * the loop still runs or has to report. Jobs keep their state by id;
 * new ones start idle with their attempt history. The backends' exec_plan
 * is made again for the new set.
 */
static int refresh_with(loop *L, const char *const *also, int nalso,
                        ef_err *e)
{
    /* extra: ids of jobs with an attempt or a report pending, and 'also' */
    const char **extra = ef_malloc(((size_t)L->n + (size_t)nalso + 1) *
                                   sizeof *extra);
    int nx = 0;
    for (int i = 0; i < nalso; i++)
        extra[nx++] = also[i];
    for (int i = 0; i < L->n; i++)
        if (L->jobs[i].st == LJ_RUNNING || L->jobs[i].st == LJ_STOPPING ||
            ((L->jobs[i].st == LJ_DONE || L->jobs[i].st == LJ_FAILED) &&
             !L->jobs[i].reported))
            extra[nx++] = L->jobs[i].id;
    job_queue q;
    int *adm = NULL;
    int rc = svc_loop_jobs(L->s, extra, nx, &q, &adm, e);
    free(extra);
    if (rc != EF_OK)
        return EF_ERR;
    /* the curves, for the dry physics and the planned speeds */
    ef_err re = {0};
    (void)queue_resolve(&q, svc_curves(L->s), &re);
    int *admid = adm; /* adm[k] belongs to q.jobs[k] before the move */
    exec_plan np;
    const cluster *c = svc_cluster(L->s);
    char **ids = ef_malloc(((size_t)q.n + 1) * sizeof *ids);
    for (int k = 0; k < q.n; k++)
        ids[k] = ef_strdup(q.jobs[k].id);
    int nq = q.n;
    if (exec_plan_of_queue(&np, "the service's queue", &q, c->nodes,
                           c->gpus_per_node, L->slot, e) != EF_OK) {
        for (int k = 0; k < nq; k++)
            free(ids[k]);
        free(ids);
        free(admid);
        return EF_ERR;
    }
    /* the Slurm job names' tag: this service's run directory */
    uint64_t h = 1469598103934665603ULL;
    for (const char *c2 = L->x.state ? L->x.state : ""; *c2; c2++) {
        h ^= (unsigned char)*c2;
        h *= 1099511628211ULL;
    }
    snprintf(np.hash, sizeof np.hash, "%016" PRIx64, h);
    lj *nj = ef_calloc((size_t)np.njobs + 1, sizeof *nj);
    /* moved[i]: old entry i lives on in nj (its strings and arrays) */
    char *moved = ef_calloc((size_t)L->n + 1, 1);
    for (int k = 0; k < np.njobs; k++) {
        const char *id = np.jobs[k].id;
        int old = find_job(L, id);
        if (old >= 0) {
            nj[k] = L->jobs[old];
            moved[old] = 1;
        } else {
            nj[k].id = ef_strdup(id);
            nj[k].st = LJ_IDLE;
            nj[k].progress = np.jobs[k].iterations_done;
            nj[k].dry_prog = (double)nj[k].progress;
            nj[k].speed = 1;
            if (lj_history(L, &nj[k], e) != EF_OK) {
                /* keep going with what is known */
                say(L, "%s: attempt history: %s", id, e->msg);
            }
        }
        nj[k].in = np.jobs[k].in;
        nj[k].iterations = np.jobs[k].iterations;
        if (old < 0 && nj[k].st == LJ_DONE) {
            nj[k].progress = nj[k].iterations;
            say(L, "%s: its attempt %d ended done: done", id,
                nj[k].attempt);
        }
        for (int m = 0; m < nq; m++)
            if (strcmp(ids[m], id) == 0)
                nj[k].admitted = admid[m];
    }
    for (int k = 0; k < nq; k++)
        free(ids[k]);
    free(ids);
    free(admid);
    for (int i = 0; i < L->n; i++)
        if (!moved[i])
            lj_free(&L->jobs[i]);
    free(moved);
    free(L->jobs);
    exec_plan_free(&L->xp);
    L->xp = np;
    L->jobs = nj;
    L->n = np.njobs;
    L->x.p = &L->xp;
    return EF_OK;
}

static int refresh(loop *L, ef_err *e)
{
    return refresh_with(L, NULL, 0, e);
}

/* ---- observe ------------------------------------------------------------------ */

/* Dry-run physics: advance job J to plan time now at its curve's speed
 * on its GPUs, paying what it owes first. */
static void dry_advance(lj *J, int64_t now)
{
    if (now <= J->dry_t)
        return;
    double dt = (double)(now - J->dry_t);
    J->dry_t = now;
    double pay = J->dry_owed < dt ? J->dry_owed : dt;
    J->dry_owed -= pay;
    J->dry_prog += speed_of(J, J->place.n) * (dt - pay);
    if (J->dry_prog > (double)J->iterations)
        J->dry_prog = (double)J->iterations;
    J->progress = (int64_t)J->dry_prog;
}

/* Job J's restart budget: its own max_restarts, else the loop's. */
static int max_restarts(const loop *L, const lj *J)
{
    return J->in && J->in->run.max_restarts >= 0 ? J->in->run.max_restarts
                                                 : L->o.max_restarts;
}

/* How many times a job is relaunched because its rendezvous port was
 * taken (exec_log_addr_in_use) before that is a failure like another. */
#define LOOP_PORT_RETRIES 3

/* Warn, once per attempt (event "world_size", the attempt's log, the
 * service log), when job j's attempt does not run the world its
 * allocation is (exec_world_check: its command with world 0, else what
 * it reported). */
static int world_warn(loop *L, int j, int world, int64_t now, ef_err *e)
{
    lj *J = &L->jobs[j];
    if (!L->b || J->warned == J->attempt)
        return EF_OK;
    exec_run r = run_of(L, j);
    char msg[512];
    if (!exec_world_check(&L->x, &r, world, msg, sizeof msg))
        return EF_OK;
    J->warned = J->attempt;
    exec_log_note(&L->x, j, J->attempt, msg);
    say(L, "warning: %s", msg);
    json_t *d = json_object();
    json_object_set_new(d, "attempt", json_integer(J->attempt));
    json_object_set_new(d, "gpus", json_integer(J->place.n));
    json_object_set_new(d, "message", json_string(msg));
    if (world > 0)
        json_object_set_new(d, "world", json_integer(world));
    char *dt = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(d);
    int rc = svc_loop_event(L->s, J->id, "world_size", dt, now, e);
    free(dt);
    return rc;
}

/* Who submitted job J ("" when the store does not say). */
static void owner_of(loop *L, const lj *J, char *dst, size_t len)
{
    ef_err e = {0};
    store_job row;
    dst[0] = '\0';
    if (store_job_get(svc_store(L->s), J->id, &row, &e) == 1) {
        snprintf(dst, len, "%s", row.owner);
        store_job_free(&row);
    }
}

/* Learn what job J's launch cost (a real backend): from its last stop's
 * signal to its exit, then from the launch to its first progress,
 * against what its model charges for that start (STORE learned: the
 * planner charges the model's cost times it for the model's next jobs).
 * A store error is said, not fatal. */
static void learn_restart(loop *L, lj *J, int64_t now)
{
    if (!L->b || !J->in)
        return;
    double c = (double)(J->ovh_until - J->started);
    double took = (double)(now - J->started) + J->restart_s;
    if (c <= 0 || took <= 0)
        return;
    char owner[128];
    owner_of(L, J, owner, sizeof owner);
    ef_err e = {0};
    if (store_learn(svc_store(L->s), J->in->model, owner, 1, took / c,
                    &e) != EF_OK)
        say(L, "error: learning %s's restart cost: %s", J->id, e.msg);
}

/* Learn job J's speed over its curve as its attempt ends, where it was
 * measured (a real backend). */
static void learn_speed(loop *L, lj *J)
{
    if (!L->b || !J->in || !J->measured)
        return;
    char owner[128];
    owner_of(L, J, owner, sizeof owner);
    ef_err e = {0};
    if (store_learn(svc_store(L->s), J->in->model, owner, 0, J->speed,
                    &e) != EF_OK)
        say(L, "error: learning %s's speed: %s", J->id, e.msg);
    J->measured = 0;
    svc_note_speed(L->s, J->id, J->in->model, owner, 0); /* now a run */
    J->noted = 0;
}

/* Job J's attempt ended: what its speed was measured on counts from now
 * on as its earlier attempts'. */
static void speed_fold(lj *J)
{
    if (J->speed_dt <= 0)
        return;
    J->speed_base = J->speed;
    J->speed_w += J->speed_dt;
    J->speed_dt = 0;
}

/* The attempt of job j ended by itself (st) or was lost. */
static int ended(loop *L, int j, const exec_pstatus *st, int64_t now,
                 ef_err *e)
{
    lj *J = &L->jobs[j];
    int ok = st->state == EXEC_P_EXITED && st->code == 0;
    int complete = J->progress >= J->iterations;
    char logp[4096] = "";
    if (L->b)
        exec_path_log(&L->x, j, J->attempt, logp, sizeof logp);
    char how[64];
    if (st->state == EXEC_P_GONE)
        snprintf(how, sizeof how, "lost (no exit status)");
    else if (st->sig)
        snprintf(how, sizeof how, "signal %d", st->sig);
    else
        snprintf(how, sizeof how, "exit %d", st->code);
    learn_speed(L, J);
    speed_fold(J);
    if (J->st == LJ_STOPPING) {
        /* asked to stop: it checkpointed (or was killed) */
        J->stop_s = (double)(now - J->prev_t);
        char w[160];
        snprintf(w, sizeof w, "stopped (%s), %" PRId64 " of %" PRId64
                 " iterations", how, J->progress, J->iterations);
        int fin = complete || (ok && J->progress >= J->iterations);
        if (lj_set(L, j, fin ? LJ_DONE : LJ_IDLE, fin ? "done" : "stopped",
                   w, now, e) != EF_OK)
            return EF_ERR;
        if (fin) {
            L->stats.done++;
            event(L, "%s done", J->id);
            L->freed = 1;
        }
        return EF_OK;
    }
    if (ok || complete) {
        /* exit 0 is done: the job says its work is complete */
        J->progress = J->iterations;
        char w[160];
        snprintf(w, sizeof w, "done (%s)", how);
        if (lj_set(L, j, LJ_DONE, "done", w, now, e) != EF_OK)
            return EF_ERR;
        L->stats.done++;
        event(L, "%s done", J->id);
        L->freed = 1;
        return EF_OK;
    }
    if (L->b && st->state == EXEC_P_EXITED &&
        J->port_retries < LOOP_PORT_RETRIES &&
        exec_log_addr_in_use(&L->x, j, J->attempt)) {
        /* its rendezvous port was taken: launched again on another, and
         * no restart is spent on it */
        J->port_retries++;
        char w[600];
        snprintf(w, sizeof w, "%s: the address was in use (log %.400s); "
                 "relaunched with another port", how, logp);
        if (lj_set(L, j, LJ_IDLE, "port_in_use", w, now, e) != EF_OK)
            return EF_ERR;
        json_t *d = json_object();
        json_object_set_new(d, "attempt", json_integer(J->attempt));
        json_object_set_new(d, "how", json_string(how));
        json_object_set_new(d, "log", json_string(logp));
        json_object_set_new(d, "reason", json_string("address in use"));
        char *dt = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(d);
        int rc = svc_loop_event(L->s, J->id, "port_retry", dt, now, e);
        free(dt);
        event(L, "%s relaunches (port in use)", J->id);
        return rc;
    }
    J->restarts++;
    int fail = J->restarts > max_restarts(L, J);
    char w[sizeof J->why];
    snprintf(w, sizeof w, "%s at %" PRId64 " of %" PRId64 " iterations; "
             "log %.900s; %s", how, J->progress, J->iterations,
             logp[0] ? logp : "(none)",
             fail ? "no restart left: failed" : "relaunched");
    const char *res = st->state == EXEC_P_GONE ? "lost" : "failed";
    if (lj_set(L, j, fail ? LJ_FAILED : LJ_IDLE, res, w, now, e) != EF_OK)
        return EF_ERR;
    json_t *d = json_object();
    json_object_set_new(d, "attempt", json_integer(J->attempt));
    json_object_set_new(d, "how", json_string(how));
    json_object_set_new(d, "log", json_string(logp));
    json_object_set_new(d, "progress", json_integer(J->progress));
    json_object_set_new(d, "restarts", json_integer(J->restarts));
    char *dt = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(d);
    int rc = svc_loop_event(L->s, J->id, fail ? "exit" : "restart", dt, now,
                            e);
    free(dt);
    if (fail) {
        snprintf(J->why, sizeof J->why, "%s", w);
        L->stats.failed++;
    } else {
        L->stats.restarts++;
    }
    event(L, "%s %s", J->id, fail ? "failed" : "restarts");
    return rc;
}

/* Where the cluster put running attempt r of job j, when it picks the
 * GPUs itself (exec_backend.placed) and has not said yet. Where the
 * planner can take it (exec_place_follow: the node's attempts all known,
 * buddy blocks), the jobs there count as where they really are (their
 * attempt rows say so), and a re-plan starts from that at once; the log
 * says when it is not the plan's. */
static int placed(loop *L, int j, const exec_run *r, int64_t now, ef_err *e)
{
    lj *J = &L->jobs[j];
    if (!L->b->placed || J->st != LJ_RUNNING || J->real.n > 0)
        return EF_OK;
    placement real = {0};
    cluster_call(L);
    int k = L->b->placed(&L->x, r, &real, e);
    cluster_done(L);
    if (k <= 0)
        return k < 0 ? EF_ERR : EF_OK;
    J->real = real;
    int differs = !placement_equal(&J->real, &J->place);
    placement *m = ef_calloc((size_t)L->n + 1, sizeof *m);
    placement *rl = ef_calloc((size_t)L->n + 1, sizeof *rl);
    char *live = ef_calloc((size_t)L->n + 1, 1), *ch = ef_calloc((size_t)L->n
                                                                  + 1, 1);
    for (int i = 0; i < L->n; i++) {
        live[i] = L->jobs[i].st == LJ_RUNNING ||
                  L->jobs[i].st == LJ_STOPPING;
        placement_copy(&m[i], &L->jobs[i].place);
        rl[i] = L->jobs[i].real; /* borrowed */
    }
    const cluster *c = svc_cluster(L->s);
    exec_place_follow(L->n, m, rl, live, c->nodes, c->gpus_per_node, ch);
    char got[512], planned[512];
    if (differs)
        say(L, "%s: attempt %d: the cluster placed it on %s, not the plan's "
            "%s%s", J->id, J->attempt, exec_place_str(&J->real, got,
                                                       sizeof got),
            exec_place_str(&J->place, planned, sizeof planned),
            ch[j] ? "" : "; counted where the plan has it until every "
            "attempt on its node is known and each is a buddy block");
    int any = 0, rc = EF_OK;
    for (int i = 0; i < L->n; i++) {
        if (ch[i]) {
            say(L, "%s: attempt %d: counted where the cluster runs it: %s",
                L->jobs[i].id, L->jobs[i].attempt,
                exec_place_str(&m[i], got, sizeof got));
            any = 1;
            /* the plan follows at the next boundary; until then what it
             * wants of the job is where it runs (same counts per node),
             * so no tick moves it back */
            if (exec_place_same_shape(&L->jobs[i].want, &m[i]))
                placement_copy(&L->jobs[i].want, &m[i]);
            placement_copy(&L->jobs[i].place, &m[i]);
            if (rc == EF_OK)
                rc = put_attempt(L, &L->jobs[i], L->jobs[i].st == LJ_RUNNING
                                 ? STORE_A_RUNNING : STORE_A_STOPPING, NULL,
                                 "launched; placed by the cluster", now, e);
        }
        placement_free(&m[i]);
    }
    if (any)
        event(L, "jobs run on other GPUs than planned (the cluster's)");
    free(m);
    free(rl);
    free(live);
    free(ch);
    return rc;
}

/* observe: poll every attempt that runs, read progress, handle ends. */
static int observe(loop *L, int64_t now, ef_err *e)
{
    if (L->b)
        while (waitpid(-1, NULL, WNOHANG) > 0) /* the local monitors */
            ;
    for (int j = 0; j < L->n; j++) {
        lj *J = &L->jobs[j];
        if (J->st != LJ_RUNNING && J->st != LJ_STOPPING)
            continue;
        exec_pstatus st = {EXEC_P_RUNNING, 0, 0};
        if (!L->b) {
            dry_advance(J, now);
            if (J->st == LJ_STOPPING || J->progress >= J->iterations)
                st.state = EXEC_P_EXITED;
        } else {
            exec_run r = run_of(L, j);
            cluster_call(L);
            int prc = L->b->poll(&L->x, &r, &st, e);
            cluster_done(L);
            if (prc != EF_OK ||
                (st.state == EXEC_P_RUNNING && placed(L, j, &r, now, e) !=
                                                   EF_OK))
                return EF_ERR;
            int64_t p = exec_read_progress(&L->x, j);
            if (p > J->progress)
                J->progress = p < J->iterations ? p : J->iterations;
            int world = exec_read_world(&L->x, j, J->attempt);
            if (world > 0 && J->st == LJ_RUNNING &&
                world_warn(L, j, world, now, e) != EF_OK)
                return EF_ERR;
        }
        if (st.state != EXEC_P_RUNNING) {
            if (ended(L, j, &st, now, e) != EF_OK)
                return EF_ERR;
            continue;
        }
        if (J->st == LJ_STOPPING && !J->killed && L->b) {
            const exec_plan *p = &L->xp;
            if (ef_mono_seconds() - J->stop_wall > exec_job_grace(p, j)) {
                exec_run r = run_of(L, j);
                say(L, "%s: grace of %d s over: killed", J->id,
                    exec_job_grace(p, j));
                cluster_call(L);
                int src = L->b->stop(&L->x, &r, e);
                cluster_done(L);
                if (src != EF_OK)
                    return EF_ERR;
                J->killed = 1;
            }
        }
    }
    return EF_OK;
}

/* Measure job J's speed against its curve over its current attempt,
 * from its first progress after the launch, once a slot (at least 30 s)
 * has run since. */
static void measure(loop *L, lj *J, int64_t now)
{
    if (J->st != LJ_RUNNING)
        return;
    if (!J->run_seen) {
        if (J->progress > J->p_run) {
            J->run_seen = 1;
            J->p_run = J->progress;
            J->t_run = now;
            learn_restart(L, J, now);
        }
        return;
    }
    int64_t dt = now - J->t_run;
    double c = speed_of(J, J->place.n);
    if (c <= 0 || dt < 30 || dt < L->slot)
        return;
    double f = (double)(J->progress - J->p_run) / (c * (double)dt);
    if (f > 1)
        f = 1; /* never planned faster than its curve */
    if (f < 0.01)
        f = 0.01;
    /* over all of its own attempts, each weighed by the time measured
     * on it: one short attempt does not swing its plan */
    J->speed_dt = (double)dt;
    J->speed = J->speed_w > 0
                   ? (J->speed_base * J->speed_w + f * (double)dt) /
                         (J->speed_w + (double)dt)
                   : f;
    J->measured = 1;
    J->speed_own = 1;
    /* what a submission of its model learns now (told again when it
     * moved by a percent) */
    if (L->b && J->in && fabs(J->speed - J->noted) >= 0.01) {
        J->noted = J->speed;
        char owner[128];
        owner_of(L, J, owner, sizeof owner);
        svc_note_speed(L->s, J->id, J->in->model, owner, J->speed);
    }
}


/* lag: running admitted jobs behind what their plan expects. */
static int lag(loop *L, int64_t now, ef_err *e)
{
    for (int j = 0; j < L->n; j++) {
        lj *J = &L->jobs[j];
        measure(L, J, now);
        if (J->st != LJ_RUNNING || !J->admitted || J->lagged ||
            J->rate <= 0 || !J->run_seen)
            continue;
        /* from the later of the last re-plan and its first progress */
        int64_t t0 = J->t0, p0 = J->p0;
        if (J->t_run > t0) {
            t0 = J->t_run;
            p0 = J->p_run;
        }
        int64_t dt = now - t0;
        if (dt < L->slot || dt < 30)
            continue; /* as long as measure() needs for a speed */
        double planned = J->rate * (double)dt;
        double got = (double)(J->progress - p0);
        if (got >= planned * (1.0 - L->o.lag))
            continue;
        J->lagged = 1;
        L->stats.lag++;
        json_t *d = json_object();
        json_object_set_new(d, "expected", json_integer(p0 +
                                                        (json_int_t)planned));
        json_object_set_new(d, "progress", json_integer(J->progress));
        json_object_set_new(d, "since", json_integer(t0));
        char *dt_ = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(d);
        int rc = svc_loop_event(L->s, J->id, "lag", dt_, now, e);
        free(dt_);
        if (rc != EF_OK)
            return EF_ERR;
        char t0s[48];
        event(L, "%s lags (%" PRId64 " of %.0f iterations planned since %s)",
              J->id, J->progress, (double)p0 + planned,
              ef_ht_at(t0, L->o.zone, t0s, sizeof t0s));
    }
    return EF_OK;
}

/* nodes: the nodes the cluster reports unusable (the Slurm backend's
 * sinfo), every 2 s of wall time: marked down (or up again) in the
 * store, an event for the re-plan. */
static int nodes(loop *L, int64_t now, ef_err *e)
{
    if (!L->b || !L->b->nodes_down || L->x.nodes.n == 0)
        return EF_OK;
    double w = ef_mono_seconds();
    if (w - L->nodes_wall < 2.0)
        return EF_OK;
    L->nodes_wall = w;
    int n = L->x.nodes.n;
    char *down = ef_calloc((size_t)n, 1);
    char (*why)[16] = ef_calloc((size_t)n, sizeof *why);
    cluster_call(L);
    int rc = L->b->nodes_down(&L->x, down, why, e);
    cluster_done(L);
    const cluster *c = svc_cluster(L->s);
    for (int k = 0; rc == EF_OK && k < n && k < c->nodes; k++) {
        char w2[128];
        snprintf(w2, sizeof w2, "the cluster reports %s %s", L->x.nodes.name[k],
                 down[k] ? why[k] : "up");
        int ch = svc_node_seen(L->s, k, down[k], w2, now, e);
        if (ch < 0)
            rc = EF_ERR;
        else if (ch) {
            event(L, "node %d (%s) %s", k, L->x.nodes.name[k],
                  down[k] ? why[k] : "back up");
            L->urgent = 1;
        }
    }
    free(down);
    free(why);
    return rc;
}

/* ---- replan --------------------------------------------------------------------- */

static int replan(loop *L, int64_t now, ef_err *e)
{
    svc_obs *obs = ef_calloc((size_t)L->n + 1, sizeof *obs);
    placement *want = ef_calloc((size_t)L->n + 1, sizeof *want);
    int *needs = ef_calloc((size_t)L->n + 1, sizeof *needs);
    for (int j = 0; j < L->n; j++) {
        lj *J = &L->jobs[j];
        svc_obs *o = &obs[j];
        o->id = J->id;
        o->progress = J->progress;
        o->state = J->st == LJ_RUNNING ? SVC_OBS_RUNNING
                   : J->st == LJ_DONE ? SVC_OBS_DONE
                   : J->st == LJ_FAILED ? SVC_OBS_FAILED
                                        : SVC_OBS_WAITING;
        o->iterations = J->iterations;
        o->speed = J->speed;
        J->rscale = 1;
        if (J->in && J->st != LJ_DONE && J->st != LJ_FAILED) {
            store_learnt lr;
            svc_learned(L->s, J->id, J->in->model, &lr);
            /* not measured yet: its model's speed, as learned */
            if (!J->speed_own && lr.speed_runs > 0)
                o->speed = lr.speed;
            if (lr.restart_runs > 0 && lr.restart > 0)
                J->rscale = lr.restart;
        }
        J->pspeed = o->speed > 0 && o->speed < 1 ? o->speed : 1;
        /* the overhead it still pays: the dry run knows it; a real job,
         * until it shows progress, what its model charged at the launch */
        if (J->st == LJ_RUNNING)
            o->owed = !L->b ? J->dry_owed
                      : !J->run_seen && J->ovh_until > now
                          ? (double)(J->ovh_until - now) : 0;
        if (J->st == LJ_RUNNING)
            o->place = J->place; /* borrowed */
        if (J->st == LJ_FAILED)
            o->why = J->why;
    }
    svc_loop_res res;
    char why[600];
    snprintf(why, sizeof why, "loop: %s", L->why[0] ? L->why : "slot");
    int rc = svc_loop_replan(L->s, obs, L->n, now, why, want, needs, &res,
                             e);
    free(obs);
    if (rc != EF_OK) {
        for (int j = 0; j < L->n; j++)
            placement_free(&want[j]);
        free(want);
        free(needs);
        return EF_ERR;
    }
    L->stats.replans++;
    L->version = res.version;
    L->seen = res.version;
    L->next = res.next;
    L->deferred = 0;
    L->other = 0;
    L->need = 0;
    for (int j = 0; j < L->n; j++) {
        lj *J = &L->jobs[j];
        if (J->st == LJ_DONE || J->st == LJ_FAILED)
            J->reported = 1;
        placement_free(&J->want);
        J->want = want[j];
        J->need = needs[j] & ~SVC_NEED_MOVE;
        J->must = (needs[j] & SVC_NEED_MOVE) != 0;
        /* the lag anchor: from here, at the speed of what it will hold */
        J->p0 = J->progress;
        J->t0 = now;
        J->lagged = 0;
        J->rate = J->st == LJ_RUNNING && placement_equal(&J->place, &J->want)
                      ? speed_of(J, J->place.n) * J->speed : 0;
    }
    free(want);
    free(needs);
    char nows[48];
    if (L->why[0])
        say(L, "re-planned at %s (plan v%" PRId64 "): %s%s",
            ef_ht_at(now, L->o.zone, nows, sizeof nows), res.version, L->why,
            res.at_risk ? "; jobs at risk in it" : "");
    if (res.newly_at_risk)
        say(L, "at risk now: %s (efplan show ID says why and its earliest "
            "finish)", res.newly[0] ? res.newly : "?");
    L->why[0] = '\0';
    return EF_OK;
}

/* ---- act ------------------------------------------------------------------------- */

/* start_stop: stop job j's attempt for its change (cause: why it is
 * made, for the log and the attempt row). */
static int start_stop(loop *L, int j, const char *cause, int64_t now,
                      ef_err *e)
{
    lj *J = &L->jobs[j];
    const char *kind = J->want.n == 0 ? "its allocation ended"
                       : J->want.n != J->place.n ? "resize"
                       : J->want.batch != J->place.batch ? "batch change"
                                                         : "migrate";
    char w[320];
    snprintf(w, sizeof w, "%s: %s", kind, cause);
    if (lj_set(L, j, LJ_STOPPING, NULL, w, now, e) != EF_OK)
        return EF_ERR;
    J->stop_wall = ef_mono_seconds();
    placement_copy(&J->prev, &J->place);
    J->prev_t = now;
    L->stats.stops++;
    if (L->b) {
        exec_run r = run_of(L, j);
        cluster_call(L);
        int rc = L->b->signal(&L->x, &r, exec_job_signal(&L->xp, j), e);
        cluster_done(L);
        if (rc != EF_OK)
            return EF_ERR;
    }
    return EF_OK;
}

/* Who job 'id' runs as (loop_opts.job_user set): its owner's Unix
 * account (efplan token add --unix-user), else the job user; a service
 * that is not root cannot switch users and runs a job without an account
 * as itself, and only while one user (not an operator) holds tokens.
 * Never root: EF_E_INPUT (the job fails at once, the message says why). */
static int job_account(loop *L, const char *id, exec_user *u, ef_err *e)
{
    store *st = svc_store(L->s);
    char acct[TOKEN_UNIX_MAX + 8] = "";
    store_job row;
    int got = store_job_get(st, id, &row, e);
    if (got < 0)
        return EF_ERR;
    if (got) {
        int m = store_user_unix(st, row.owner, acct, sizeof acct, e);
        store_job_free(&row);
        if (m < 0)
            return EF_ERR;
    }
    if (geteuid() != 0) {
        int64_t users = 0;
        if (store_users_count(st, &users, e) != EF_OK)
            return EF_ERR;
        if (users > 1)
            return ef_fail(e, EF_E_INPUT, "job \"%s\" not run: this service "
                           "(uid %ld) cannot run jobs as their owners, and "
                           "%lld users hold tokens (run efplan serve as root, "
                           "or with --single-user if every job may act as "
                           "the service)", id, (long)geteuid(),
                           (long long)users);
        if (!acct[0])
            return exec_user_self(u, e);
    }
    if (!acct[0])
        snprintf(acct, sizeof acct, "%s", L->o.job_user);
    if (exec_user_lookup(acct, u, e) != EF_OK)
        return EF_ERR;
    if (u->uid == 0)
        return ef_fail(e, EF_E_INPUT, "job \"%s\" not run: it would run as "
                       "%s (uid 0); map its owner to an unprivileged account "
                       "(efplan token add NAME --unix-user USER)", id,
                       u->name);
    return EF_OK;
}

static int launch(loop *L, int j, int64_t now, ef_err *e)
{
    lj *J = &L->jobs[j];
    J->attempt++;
    placement_copy(&J->place, &J->want);
    placement_free(&J->real);
    J->started = now;
    J->handle[0] = '\0';
    char pt[512];
    exec_place_str(&J->place, pt, sizeof pt);
    if (L->b) {
        if (put_attempt(L, J, STORE_A_INTENDED, NULL, "launch", now, e) !=
            EF_OK)
            return EF_ERR;
        exec_run r = run_of(L, j);
        exec_user acct;
        int rc = EF_OK;
        if (L->o.job_user) {
            rc = job_account(L, J->id, &acct, e);
            r.user = &acct;
        }
        if (rc == EF_OK) {
            cluster_call(L);
            rc = L->b->launch(&L->x, &r, e);
            cluster_done(L);
        }
        if (rc != EF_OK) {
            ef_err e2 = {0};
            char w[EF_ERR_LEN + 32];
            snprintf(w, sizeof w, "launch failed: %s", e->msg);
            J->restarts++;
            int fail = e->kind == EF_E_INPUT ||
                       J->restarts > max_restarts(L, J);
            lj_set(L, j, fail ? LJ_FAILED : LJ_IDLE, "failed", w, now, &e2);
            if (fail) {
                snprintf(J->why, sizeof J->why, "%s", w);
                L->stats.failed++;
            }
            event(L, "%s could not be launched", J->id);
            return EF_OK;
        }
        snprintf(J->handle, sizeof J->handle, "%s", r.handle);
    } else {
        snprintf(J->handle, sizeof J->handle, "dry:%s:%d", J->id, J->attempt);
        J->dry_t = now;
        J->dry_prog = (double)J->progress;
        /* what the simulator charges: a resize or a migration when it
         * was stopped at this very moment, else a start */
        int g0 = J->prev_t == now ? J->prev.n : 0;
        int moved = g0 == J->place.n && !placement_equal(&J->prev,
                                                         &J->place);
        int rebatch = g0 > 0 && J->prev.batch != J->place.batch;
        if (g0 == J->place.n && J->prev.batch != J->place.batch)
            moved = 0;
        J->dry_owed = ovh_charge((ovh_mode)L->ovh, J->in ? J->in->model : "",
                                 g0, J->place.n, moved, rebatch);
    }
    char w[600];
    snprintf(w, sizeof w, "launched on %s%s", pt,
             J->place.batch ? " (elastic batch)" : "");
    L->stats.launches++;
    /* the overhead its model pays before the lag counts */
    J->p0 = J->progress;
    J->t0 = now + (int64_t)ceil(ovh_charge((ovh_mode)L->ovh,
                                           J->in ? J->in->model : "", 0,
                                           J->place.n, 0, 0));
    J->ovh_until = J->t0;
    J->rate = speed_of(J, J->place.n) * J->speed;
    J->lagged = 0;
    J->p_run = J->progress;
    J->t_run = now;
    J->run_seen = 0;
    J->measured = 0;
    J->restart_s = J->stop_s; /* a relaunch after a stop pays both */
    J->stop_s = 0;
    if (lj_set(L, j, LJ_RUNNING, NULL, w, now, e) != EF_OK)
        return EF_ERR;
    return world_warn(L, j, 0, now, e);
}

/* 1 if running job J's attempt is past its start: it showed progress,
 * or it has run longer than a start of its model is measured to take
 * (the model's charge times its restarts' measured cost) and reports
 * none (a job that writes no progress file). */
static int started(const lj *J, int64_t now)
{
    return J->run_seen ||
           (double)(now - J->started) >=
               (double)(J->ovh_until - J->started) *
                   (J->rscale > 0 ? J->rscale : 1.0);
}

/* The plan time at which running job J ends on 'g' GPUs from 'now', at
 * the speed it is planned at, after 'extra' more seconds of overhead
 * (what its start still owes is added). */
static double finish_on(const loop *L, const lj *J, int g, double extra,
                        int64_t now)
{
    double tp = speed_of(J, g) * J->pspeed;
    if (tp <= 0)
        return INFINITY;
    double owed = !J->run_seen && J->ovh_until > now
                      ? (double)(J->ovh_until - now) : 0;
    (void)L;
    return (double)now + owed + extra +
           (double)(J->iterations - J->progress) / tp;
}

/* 1 if running job J's change must be made: the plan can no longer have
 * it where it runs (must: a drained or down node, cancelled); or its
 * promise grows it (its reservation is more than it holds) onto GPUs
 * another job holds (the plan shares them between the two); or it grows
 * and that ends it sooner than staying, its measured restart cost
 * counted, where its promise needs that (on what it holds it would miss
 * its deadline less the margin and a slot) or, once it has made
 * progress, where the plan grows it for the gain alone. Any other change
 * (a shrink, a move, its allocation's end; a growth onto free GPUs it
 * does not need) is one the hold rule may keep from happening. */
static int must_change(const loop *L, const lj *J, int64_t now)
{
    if (J->must)
        return 1;
    if (J->want.n <= J->place.n)
        return 0;
    int promise = J->need > J->place.n;
    /* its promise's growth takes GPUs another job holds: the plan's
     * sharing between them, made as planned (staying would leave the
     * other's plan short) */
    for (int k = 0; promise && k < L->n; k++) {
        const lj *K = &L->jobs[k];
        if (K != J && (K->st == LJ_RUNNING || K->st == LJ_STOPPING) &&
            hold_wants(&J->want, &K->place))
            return 1;
    }
    if (!promise && !started(J, now))
        return 0;
    double c = ovh_charge((ovh_mode)L->ovh, J->in ? J->in->model : "",
                          J->place.n, J->want.n, 0, 0) * J->rscale;
    double stay = finish_on(L, J, J->place.n, 0, now);
    if (finish_on(L, J, J->want.n, c, now) >= stay)
        return 0; /* the restart costs more than the growth gains */
    if (!promise)
        return 1;
    /* (a slot to spare beyond the margin: what it holds is re-planned
     * once a slot, and its speed measured as it goes) */
    int64_t margin = L->o.margin >= 0 ? L->o.margin : L->slot;
    return !J->admitted || !J->in || !J->in->has_deadline ||
           stay + (double)L->slot > (double)(J->in->deadline - margin);
}

/* 1 if running job J ends where it runs sooner than a restart of it
 * would take (its model's charge for its change, times what its restarts
 * were measured to cost): a job that needs its GPUs gets them then at
 * once (act launches it as they are freed), and stopping J would cost it
 * more than the time it has left. */
static int ends_soon(const loop *L, const lj *J, int64_t now)
{
    if (!started(J, now))
        return 0;
    double c = ovh_charge((ovh_mode)L->ovh, J->in ? J->in->model : "",
                          J->place.n, J->want.n > 0 ? J->want.n
                                                    : J->place.n,
                          J->want.n == J->place.n, 0) * J->rscale;
    return finish_on(L, J, J->place.n, 0, now) - (double)now <= c;
}

/* The loop's jobs as the hold rule (hold.h) sees them (heap, L->n + 1). */
static hold_job *hold_jobs(const loop *L, int64_t now)
{
    hold_job *h = ef_calloc((size_t)L->n + 1, sizeof *h);
    for (int j = 0; j < L->n; j++) {
        const lj *J = &L->jobs[j];
        int run = J->st == LJ_RUNNING;
        int ch = run && !placement_equal(&J->place, &J->want);
        h[j] = (hold_job){run, J->st != LJ_DONE && J->st != LJ_FAILED,
                          &J->place, &J->want, J->need, J->must,
                          ch && must_change(L, J, now),
                          ch && ends_soon(L, J, now), started(J, now),
                          J->admitted};
    }
    return h;
}

/* Why running job j's change is made (hold_rule kept it not): into
 * buf. */
static void cause_of(const loop *L, const hold_job *hj, const char *hold,
                     int j, char *buf, size_t len)
{
    const lj *J = &L->jobs[j];
    if (J->must) {
        snprintf(buf, len, "the plan cannot keep it where it runs");
        return;
    }
    if (hj[j].must_change) {
        if (J->need > J->place.n)
            snprintf(buf, len, "its promise needs %d GPUs", J->need);
        else
            snprintf(buf, len, "growing gains more than its restart costs");
        return;
    }
    int k = hold_taker(hj, L->n, hold, j);
    if (k >= 0 && L->jobs[k].need > 0)
        snprintf(buf, len, "%s's promise needs its GPUs", L->jobs[k].id);
    else if (k >= 0)
        snprintf(buf, len, "%s gains more from its GPUs", L->jobs[k].id);
    else
        snprintf(buf, len, "the plan's"); /* --moves any */
}

/* Why the hold rule keeps running job j where it runs: into buf. */
static void hold_why(const loop *L, const hold_job *hj, const char *hold,
                     int j, char *buf, size_t len)
{
    const lj *J = &L->jobs[j];
    for (int k = 0; k < L->n; k++) {
        const lj *K = &L->jobs[k];
        if (k == j || K->st == LJ_DONE || K->st == LJ_FAILED ||
            !hold_wants(&K->want, &J->place))
            continue;
        if (hold[k])
            snprintf(buf, len, "%s, which would take its GPUs, is kept "
                     "too", K->id);
        else if (K->need > 0)
            snprintf(buf, len, "it ends sooner than its restart would "
                     "take; %s waits for its GPUs", K->id);
        else
            snprintf(buf, len, "%s would take its GPUs for no promise, and "
                     "it %s", K->id, hj[j].run_seen ? "has one" : "has "
                     "not made progress yet");
        return;
    }
    if (J->want.n > J->place.n && !hj[j].run_seen)
        snprintf(buf, len, "it has not made progress yet, and no promise "
                 "needs it to grow");
    else if (J->want.n > J->place.n)
        snprintf(buf, len, "growing would not end it sooner than staying, "
                 "its restart counted%s", J->need > J->place.n ? ", or it "
                 "ends in time where it runs" : "");
    else
        snprintf(buf, len, "no other job needs its GPUs");
}

/* act: stop what the plan moves or ends (but what the hold rule keeps),
 * start what it gives where the GPUs are free. */
static int act(loop *L, int64_t now, ef_err *e)
{
    char *hold = ef_calloc((size_t)L->n + 1, 1);
    hold_job *hj = hold_jobs(L, now);
    if (L->still) /* (--moves any: every change the plan makes is made) */
        hold_rule(hj, L->n, hold);
    for (int j = 0; j < L->n; j++) {
        lj *J = &L->jobs[j];
        if (J->st != LJ_RUNNING || placement_equal(&J->place, &J->want))
            continue;
        /* a cluster that picks the GPUs inside a node (Slurm) cannot
         * move a job between them: on the same nodes with the same
         * counts it stays, counted where the plan has it */
        if (L->b && L->b->placed && J->want.n &&
            exec_place_same_shape(&J->place, &J->want)) {
            placement_copy(&J->place, &J->want);
            if (put_attempt(L, J, STORE_A_RUNNING, NULL, "launched; the plan "
                            "moved it inside its nodes: the cluster's GPUs",
                            now, e) != EF_OK) {
                free(hold);
                free(hj);
                return EF_ERR;
            }
            continue;
        }
        if (hold[j]) {
            if (J->held_v != L->version) {
                /* once per plan: the lag counts at what it holds; said
                 * when what the plan wants of it differs from the last
                 * time it was held (not every slot it stays so) */
                char got[256], planned[256];
                J->held_v = L->version;
                L->stats.holds++;
                J->rate = speed_of(J, J->place.n) * J->speed;
                int same = J->held_att == J->attempt &&
                           placement_equal(&J->held_want, &J->want);
                J->held_att = J->attempt;
                placement_copy(&J->held_want, &J->want);
                if (!same) {
                    char why[200];
                    hold_why(L, hj, hold, j, why, sizeof why);
                    say(L, "%s: kept on %s, not moved to %s: %s", J->id,
                        exec_place_str(&J->place, got, sizeof got),
                        J->want.n ? exec_place_str(&J->want, planned,
                                                   sizeof planned)
                                  : "nothing",
                        why);
                }
            }
            continue;
        }
        char cause[160];
        cause_of(L, hj, hold, j, cause, sizeof cause);
        if (start_stop(L, j, cause, now, e) != EF_OK) {
            free(hold);
            free(hj);
            return EF_ERR;
        }
    }
    free(hold);
    free(hj);
    const cluster *c = svc_cluster(L->s);
    int N = c->nodes * c->gpus_per_node;
    char *busy = ef_calloc((size_t)N + 1, 1);
    for (int j = 0; j < L->n; j++) {
        const lj *J = &L->jobs[j];
        if (J->st != LJ_RUNNING && J->st != LJ_STOPPING)
            continue;
        /* 1: being freed (a stop under way), 2: kept by a running job */
        for (int k = 0; k < J->place.n; k++)
            busy[J->place.node[k] * c->gpus_per_node + J->place.gpu[k]] =
                J->st == LJ_STOPPING ? 1 : 2;
    }
    int rc = EF_OK;
    L->hurry = 0;
    for (int j = 0; j < L->n; j++)
        L->hurry |= L->jobs[j].st == LJ_STOPPING;
    for (int j = 0; j < L->n && rc == EF_OK; j++) {
        lj *J = &L->jobs[j];
        if (J->st != LJ_IDLE || J->want.n == 0)
            continue;
        int free_ = 1, freeing = 0;
        for (int k = 0; k < J->want.n; k++) {
            char b = busy[J->want.node[k] * c->gpus_per_node +
                          J->want.gpu[k]];
            free_ &= b == 0;
            freeing |= b == 1;
        }
        if (!free_) {
            /* its GPUs are still being freed (look again soon), or a
             * job the hold rule keeps has them (the next re-plan) */
            L->hurry |= freeing;
            continue;
        }
        rc = launch(L, j, now, e);
        if (rc == EF_OK && J->st == LJ_RUNNING)
            for (int k = 0; k < J->place.n; k++)
                busy[J->place.node[k] * c->gpus_per_node +
                     J->place.gpu[k]] = 1;
    }
    free(busy);
    return rc;
}

/* ---- the tick ---------------------------------------------------------------------- */

static int tick(loop *L, int64_t now, ef_err *e)
{
    L->x.now = now;
    L->stats.ticks++;
    /* what the service told (under mu: loop_wake writes it) */
    char woken[sizeof L->woken];
    pthread_mutex_lock(&L->mu);
    snprintf(woken, sizeof woken, "%s", L->woken);
    L->woken[0] = '\0';
    pthread_mutex_unlock(&L->mu);
    if (woken[0] && L->version >= 0)
        event(L, "%s", woken);
    if (strstr(woken, SVC_WHY_OPERATOR))
        L->urgent = 1;
    if (woken[0] && strcmp(woken, "a submission") != 0)
        L->other = 1;
    /* another version than the loop's own: read the jobs once per
     * version (and say so once), re-plan at the next boundary */
    int64_t v = svc_version(L->s);
    if (v != L->version && v != L->seen) {
        if (L->version >= 0 && !woken[0])
            event(L, "the plan changed (v%" PRId64 ")", v);
        if (refresh(L, e) != EF_OK)
            return EF_ERR;
        L->seen = v;
        L->need = 1;
    }
    if (observe(L, now, e) != EF_OK || lag(L, now, e) != EF_OK ||
        nodes(L, now, e) != EF_OK)
        return EF_ERR;
    /* a slot boundary re-plans while jobs are live, and after the events
     * since the last one: the submissions, completions, failures and lags
     * of one slot lead to one set of changes at its end, not one each
     * (a running job moves at most once a slot); urgent ones at once */
    int live = 0, running = 0;
    for (int j = 0; j < L->n; j++) {
        live |= L->jobs[j].st != LJ_DONE && L->jobs[j].st != LJ_FAILED;
        running |= L->jobs[j].st == LJ_RUNNING;
    }
    /* the first re-plan at once while jobs run (adopted after a restart:
     * the plan must follow them) */
    if (L->version < 0 && running)
        L->urgent = 1;
    /* the last running job ended: its GPUs go to the others at once */
    if (!running && L->ran)
        L->urgent = 1;
    /* a job completed while others wait for GPUs: its GPUs are
     * re-planned at once, so a waiting job starts on what the plan gives
     * it now, not on its wish of before (GPUs a kept job may still hold)
     * and then is moved at the next boundary */
    for (int j = 0; j < L->n && L->freed && !L->urgent; j++)
        L->urgent = L->jobs[j].st == LJ_IDLE && L->jobs[j].want.n > 0;
    L->freed = 0;
    /* (an event in the very second of a boundary belongs to it: the
     * planner releases a job submitted then at that boundary) */
    int boundary = now >= L->next;
    int same_second = !L->deferred && L->next != INT64_MIN &&
                      now == L->next - L->slot;
    /* while nothing runs, any other event re-plans at once (a drained
     * node leaves the plan before the next submission is decided) */
    if (!running && L->other)
        L->urgent = 1;
    /* and there is nothing to move, but the jobs that come together (a
     * start-up, a script's submissions) start together: at the boundary
     * where the planner releases them (svc_release_at), not the first at
     * once on every GPU and moved when the next one comes */
    if (!running && L->need && !L->urgent && !L->deferred &&
        now >= L->next) {
        L->next = svc_release_at(L->s, now);
        L->deferred = 1;
        boundary = now >= L->next;
    }
    if ((L->need && (L->urgent || boundary || same_second)) ||
        (boundary && live)) {
        L->urgent = 0;
        if (replan(L, now, e) != EF_OK)
            return EF_ERR;
        /* the re-plan's own version: no refresh for it, but its job set
         * may have lost the jobs it reported */
        if (refresh(L, e) != EF_OK)
            return EF_ERR;
    }
    int rc = act(L, now, e);
    L->ran = 0;
    for (int j = 0; j < L->n; j++)
        L->ran |= L->jobs[j].st == LJ_RUNNING;
    return rc;
}

static void *thread_main(void *arg)
{
    loop *L = arg;
    for (;;) {
        pthread_mutex_lock(&L->mu);
        if (!L->quit && !L->wake) {
            double p = L->o.poll > 0 ? L->o.poll : 0.2;
            /* while a job is being stopped or waits for GPUs being
             * freed, look again soon: a resize is a stop then a start,
             * and the GPUs must not idle between them */
            if (L->hurry && p > 0.02)
                p = 0.02;
            struct timespec ts;
            ef_abstime_in(&ts, p);
            pthread_cond_timedwait(&L->cv, &L->mu, &ts);
        }
        int quit = L->quit;
        L->wake = 0;
        pthread_mutex_unlock(&L->mu);
        if (quit)
            break;
        pthread_mutex_lock(&L->tmu);
        svc_lock(L->s);
        L->in_tick = 1;
        ef_err e = {0};
        if (tick(L, svc_now(L->s), &e) != EF_OK) {
            say(L, "error: %s (retrying at the next tick)", e.msg);
            L->need = 1;
        }
        L->in_tick = 0;
        svc_unlock(L->s);
        pthread_mutex_unlock(&L->tmu);
    }
    return NULL;
}

/* ---- start and stop ------------------------------------------------------------------ */

void loop_opts_default(loop_opts *o)
{
    memset(o, 0, sizeof *o);
    o->backend = "local";
    o->poll = 0.2;
    o->max_restarts = 2;
    o->lag = 0.1;
    o->scale = 1;
    o->margin = -1;
    o->at = -1;
}


/* Adopt what a previous service left: the live attempt rows. */
static int adopt(loop *L, int64_t now, ef_err *e)
{
    store_attempt *rows = NULL;
    int n = 0;
    if (store_attempts_list(svc_store(L->s), NULL, 1, &rows, &n, e) != EF_OK)
        return EF_ERR;
    int rc = EF_OK;
    for (int i = 0; i < n && rc == EF_OK; i++) {
        int j = find_job(L, rows[i].job);
        if (j < 0) {
            say(L, "%s: attempt %d of a job the service no longer has: left "
                "alone", rows[i].job, rows[i].attempt);
            continue;
        }
        lj *J = &L->jobs[j];
        J->attempt = rows[i].attempt;
        J->started = rows[i].started;
        json_t *pv = json_loads(rows[i].place, 0, NULL);
        ef_err pe = {0};
        placement_free(&J->place);
        if (placement_read_json(json_object_get(pv, "placement"), &J->place,
                                "the store", "attempts.place", &pe) != EF_OK)
            memset(&J->place, 0, sizeof J->place);
        J->place.batch = (long)json_integer_value(json_object_get(pv,
                                                                  "batch"));
        placement_free(&J->real);
        if (json_object_get(pv, "real") &&
            placement_read_json(json_object_get(pv, "real"), &J->real,
                                "the store", "attempts.place.real", &pe) !=
                EF_OK)
            memset(&J->real, 0, sizeof J->real);
        J->real.batch = J->place.batch;
        json_decref(pv);
        snprintf(J->handle, sizeof J->handle, "%s", rows[i].handle);
        if (!L->b) {
            /* a dry run keeps nothing running across a restart */
            rc = lj_set(L, j, LJ_IDLE, "stopped", "dry run restarted", now, e);
            continue;
        }
        exec_run r = run_of(L, j);
        if (rows[i].state == STORE_A_INTENDED) {
            int found = L->b->find(&L->x, &r, e);
            if (found < 0) {
                rc = EF_ERR;
                break;
            }
            if (!found) {
                rc = lj_set(L, j, LJ_IDLE, "not_launched", "its launch was "
                            "intended when the service stopped, and it was "
                            "never launched", now, e);
                continue;
            }
            snprintf(J->handle, sizeof J->handle, "%s", r.handle);
            J->st = LJ_IDLE;
            rc = lj_set(L, j, LJ_RUNNING, NULL, "adopted after a restart",
                        now, e);
        } else if (rows[i].state == STORE_A_RUNNING) {
            J->st = LJ_RUNNING;
            say(L, "%s: adopted attempt %d, running", J->id, J->attempt);
        } else {
            J->st = LJ_STOPPING;
            J->stop_wall = ef_mono_seconds();
            say(L, "%s: adopted attempt %d, being stopped: signal sent again",
                J->id, J->attempt);
            rc = L->b->signal(&L->x, &r, exec_job_signal(&L->xp, j), e);
        }
        J->rate = 0; /* no lag until the first re-plan */
        J->p_run = J->progress;
        J->t_run = now; /* its speed is measured afresh */
        J->run_seen = 0;
    }
    store_attempts_free(rows, n);
    return rc;
}

int loop_start(loop **out, svc *s, const loop_opts *o, ef_err *e)
{
    *out = NULL;
    loop *L = ef_calloc(1, sizeof *L);
    L->s = s;
    L->o = *o;
    L->lockfd = -1;
    L->version = -1;
    L->seen = -1;
    L->next = INT64_MIN;
    pthread_mutex_init(&L->mu, NULL);
    pthread_mutex_init(&L->tmu, NULL);
    pthread_cond_init(&L->cv, NULL);
    if (strcmp(o->backend, "dry-run") == 0) {
        L->b = NULL;
    } else {
        L->b = exec_backend_find(o->backend);
        if (!L->b || L->b->dry) {
            ef_fail(e, EF_E_USAGE, "--backend %s: expected local, slurm or "
                    "dry-run", o->backend);
            goto fail;
        }
    }
    svc_lock(s);
    const cluster *c = svc_cluster(s);
    L->slot = svc_slot(s);
    L->ovh = svc_overhead(s);
    L->still = svc_holds_still(s);
    svc_set_margin(s, o->margin >= 0 ? o->margin : L->slot);
    L->x.b = L->b;
    L->x.scale = o->scale > 0 ? o->scale : 1;
    L->x.nodes_file = o->nodes_file;
    L->x.slurm = o->slurm;
    L->x.end = INT64_MAX;
    int rc = EF_OK;
    if (L->b) {
        /* the run directory: created, locked for this service */
        if (!o->state) {
            rc = ef_fail(e, EF_E_USAGE, "the loop needs a run directory");
        }
        char real[PATH_MAX], path[PATH_MAX + 64];
        if (rc == EF_OK)
            rc = exec_state_dirs(o->state, real, e);
        if (rc == EF_OK) {
            snprintf(path, sizeof path, "%s/lock", real);
            L->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
            if (L->lockfd < 0)
                rc = ef_fail(e, EF_E_INPUT, "%s: %s", path, strerror(errno));
            else if (flock(L->lockfd, LOCK_EX | LOCK_NB) != 0)
                rc = ef_fail(e, EF_E_INPUT, "%s: another efplan serve or "
                             "apply is using this run directory", o->state);
        }
        if (rc == EF_OK)
            L->x.state = ef_strdup(real);
    }
    /* the nodes' names, also for the dry run (its node names) */
    if (rc == EF_OK && o->nodes_file)
        rc = exec_nodes_load(&L->x.nodes, o->nodes_file, e);
    if (rc == EF_OK && L->x.nodes.n > 0 && L->x.nodes.n < c->nodes)
        rc = ef_fail(e, EF_E_INPUT, "%s: %d node names for a cluster of %d "
                     "nodes", L->x.nodes.src, L->x.nodes.n, c->nodes);
    /* the jobs, and those a killed service still had attempts of (a job
     * cancelled just before: it must be stopped, not left running) */
    if (rc == EF_OK) {
        store_attempt *la = NULL;
        int nla = 0;
        rc = store_attempts_list(svc_store(s), NULL, 1, &la, &nla, e);
        const char **ids = ef_malloc(((size_t)nla + 1) * sizeof *ids);
        for (int i = 0; i < nla; i++)
            ids[i] = la[i].job;
        if (rc == EF_OK)
            rc = refresh_with(L, ids, nla, e);
        free(ids);
        store_attempts_free(la, nla);
    }
    if (rc == EF_OK && L->b)
        rc = L->b->prepare(&L->x, e);
    if (rc == EF_OK) /* node drain gpu07: the names --nodes or Slurm gave */
        svc_set_node_names(s, L->x.nodes.name, L->x.nodes.n);
    if (rc == EF_OK)
        rc = adopt(L, o->at >= 0 ? o->at : svc_now(s), e);
    svc_unlock(s);
    if (rc != EF_OK)
        goto fail;
    svc_set_notify(s, loop_wake, L);
    L->notified = 1;
    L->need = 1;
    snprintf(L->why, sizeof L->why, "the loop started");
    if (o->manual) {
        *out = L;
        return EF_OK;
    }
    if (pthread_create(&L->th, NULL, thread_main, L) != 0) {
        svc_set_notify(s, NULL, NULL);
        L->notified = 0;
        ef_fail(e, EF_E_INTERNAL, "cannot start the loop's thread");
        goto fail;
    }
    L->started = 1;
    say(L, "loop: backend %s, run directory %s, %d job%s", o->backend,
        L->x.state ? L->x.state : "(none: dry run)", L->n,
        L->n == 1 ? "" : "s");
    *out = L;
    return EF_OK;
fail:
    loop_stop(L);
    return EF_ERR;
}

void loop_wake(void *arg, const char *why)
{
    loop *L = arg;
    pthread_mutex_lock(&L->mu);
    L->wake = 1;
    /* the reasons, for the next tick's re-plan */
    size_t n = strlen(L->woken);
    if (why && n + strlen(why) + 3 < sizeof L->woken && !strstr(L->woken,
                                                               why))
        snprintf(L->woken + n, sizeof L->woken - n, "%s%s", n ? ", " : "",
                 why);
    else if (!why && n == 0)
        snprintf(L->woken, sizeof L->woken, "woken");
    pthread_cond_signal(&L->cv);
    pthread_mutex_unlock(&L->mu);
}

void loop_stop(loop *L)
{
    if (!L)
        return;
    if (L->started) {
        pthread_mutex_lock(&L->mu);
        L->quit = 1;
        pthread_cond_signal(&L->cv);
        pthread_mutex_unlock(&L->mu);
        pthread_join(L->th, NULL);
    }
    if (L->notified) {
        svc_lock(L->s);
        svc_set_notify(L->s, NULL, NULL);
        svc_unlock(L->s);
    }
    if (L->b && L->b->release && L->x.p)
        L->b->release(&L->x);
    for (int i = 0; i < L->n; i++)
        lj_free(&L->jobs[i]);
    free(L->jobs);
    exec_plan_free(&L->xp);
    exec_nodes_free(&L->x.nodes);
    free(L->x.state);
    if (L->lockfd >= 0)
        close(L->lockfd);
    pthread_cond_destroy(&L->cv);
    pthread_mutex_destroy(&L->mu);
    pthread_mutex_destroy(&L->tmu);
    free(L);
}

int loop_tick_at(loop *L, int64_t now, int *pending, ef_err *e)
{
    pthread_mutex_lock(&L->tmu);
    svc_lock(L->s);
    L->in_tick = 1;
    int rc = tick(L, now, e);
    L->in_tick = 0;
    if (pending)
        *pending = L->hurry || L->need;
    svc_unlock(L->s);
    pthread_mutex_unlock(&L->tmu);
    return rc;
}

void loop_get_stats(loop *L, loop_stats *st)
{
    pthread_mutex_lock(&L->tmu);
    *st = L->stats;
    pthread_mutex_unlock(&L->tmu);
}
