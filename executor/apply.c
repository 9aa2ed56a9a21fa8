/* apply.c: the apply loop, crash recovery, and the choice of backend (see
 * exec.h). The dry run is a backend too (dryrun.c): this loop drives it. */
#define _GNU_SOURCE 1
#include "executor/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "planner/planlock.h"

void exec_opts_default(exec_opts *o)
{
    memset(o, 0, sizeof *o);
    o->backend = "local";
    o->until = -1;
    o->scale = 1;
    o->poll = 0.2;
    o->zone = EF_HT_UTC;
}

typedef struct apply {
    exec_plan *p;
    const exec_opts *o;
    exec_ctx x;
    exec_replay r;
    exec_journal jn;
    exec_report *rep;
    int64_t t;        /* plan time of the current tick (also x.now) */
    int64_t dry_clock;/* a dry backend's plan clock */
    /* the clock that follows the jobs (exec_replay.follow): plan time
     * fclock at wall time fwall, held at or before fhold (the next slot
     * boundary, until that slot is applied) */
    double fclock, fwall;
    int64_t fhold;
    /* taking over a journal that follows another plan (open_state) */
    int switching;
    char from_plan[4096], from_hash[17];
    int from_idle;    /* nothing of that plan may run (exec_look) */
    char *from_copy;  /* the state directory's copy of it (heap), when */
    size_t from_len;  /* it holds that version */
    /* the plan file as last seen (follow_plan) */
    int seen_ok;
    struct stat seen;
    char refused[17]; /* a version said not to be followed */
} apply;

static void say(const apply *A, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void say(const apply *A, const char *fmt, ...)
{
    if (!A->o->say || A->x.b->dry)
        return;
    char buf[2048], when[32]; /* the line; the tick's time as shown */
    int n = snprintf(buf, sizeof buf, "apply: t=%s ",
                     ef_ht_fmt(A->t, A->o->zone, when, sizeof when));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    A->o->say(A->o->arg, buf);
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    if (s <= 0)
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The latest plan time, from 'from' up to 'hi', by which running job j
 * is expected (exec_expected) to have done no more than 'done'
 * iterations; 'from' when it is behind already. exec_expected does not
 * fall as time goes on: a bisection. */
static int64_t follow_job(const exec_plan *p, int j, int64_t done,
                          int64_t from, int64_t hi)
{
    if (exec_expected(p, j, from) > done)
        return from;
    int64_t lo = from; /* expected(lo) <= done < expected(hi + 1) */
    if (exec_expected(p, j, hi) <= done)
        return hi;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (exec_expected(p, j, mid) <= done)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The followed clock's limit now: the hold (the next slot boundary),
 * and for every running job neither done nor failed, the plan time its
 * measured progress has reached. */
static double follow_cap(const apply *A)
{
    const exec_plan *p = A->p;
    int64_t from = (int64_t)floor(A->fclock), cap = A->fhold;
    if (cap <= from)
        return A->fclock;
    for (int j = 0; j < p->njobs; j++) {
        const exec_jjob *jj = &A->r.jobs[j];
        if (!jj->running || jj->status != EXEC_J_PENDING)
            continue;
        int64_t done = exec_job_progress(&A->x, &A->r, j);
        int64_t t = follow_job(p, j, done, from, cap);
        if (t < cap)
            cap = t;
        if (cap <= from)
            return A->fclock;
    }
    return (double)cap;
}

/* Plan time now, as a real number. On the followed clock (--follow-jobs)
 * it runs at the scale from where it was, up to follow_cap, and never
 * goes back. */
static double plan_clock(apply *A)
{
    const exec_replay *r = &A->r;
    if (A->x.b->dry)
        return (double)A->dry_clock;
    if (!r->follow)
        return (double)r->anchor_plan +
               (wall_now() - r->anchor_wall) * r->scale;
    double w = wall_now();
    double t = A->fclock + (w - A->fwall) * r->scale;
    double cap = follow_cap(A);
    if (t > cap)
        t = cap;
    if (t > A->fclock)
        A->fclock = t;
    A->fwall = w;
    return A->fclock;
}

/* Where the followed clock starts (exec_replay.follow): the plan's now,
 * or on a resume the start of the last slot applied when later (the jobs'
 * progress files carry it on from there at the scale's pace). */
static void follow_start(apply *A)
{
    int64_t t = A->p->now;
    if (A->r.last_slot > t)
        t = A->r.last_slot;
    A->fclock = (double)t;
    A->fwall = wall_now();
    A->fhold = t;
}

/* The current tick is at plan time t. */
static void tick(apply *A, int64_t t)
{
    A->t = t;
    A->x.now = t;
}

static void reap(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

/* ---- journal records ----------------------------------------------------- */

static int put(apply *A, const exec_rec *rec, ef_err *e)
{
    if (A->x.b->dry) {
        /* a dry backend's journal is only in memory */
        char *s = exec_rec_json(rec);
        int rc = exec_replay_record(&A->r, A->p, s, e);
        free(s);
        return rc;
    }
    return exec_journal_put(&A->jn, &A->r, A->p, rec, e);
}

static exec_run run_of(const apply *A, int j)
{
    exec_run run;
    memset(&run, 0, sizeof run);
    run.job = j;
    run.attempt = A->r.jobs[j].attempt;
    run.place = &A->r.jobs[j].place;
    snprintf(run.handle, sizeof run.handle, "%s", A->r.jobs[j].handle);
    return run;
}

/* ---- job events ---------------------------------------------------------- */

/* How many times a job is launched again because its rendezvous port was
 * taken (exec_log_addr_in_use) before that counts as its failure. */
#define PORT_RETRIES 3

/* Warn, once per attempt (journal "warning", the attempt's log, a
 * progress line), when job j's running attempt does not run the world
 * its allocation is: what its command fixes (world 0) or what it
 * reported (exec_world_check). */
static int world_warn(apply *A, int j, int world, ef_err *e)
{
    exec_jjob *jj = &A->r.jobs[j];
    if (A->x.b->dry || jj->warned == jj->attempt)
        return EF_OK;
    exec_run run = run_of(A, j);
    char msg[512];
    if (!exec_world_check(&A->x, &run, world, msg, sizeof msg))
        return EF_OK;
    exec_log_note(&A->x, j, run.attempt, msg);
    say(A, "warning: %s", msg);
    return put(A, &(exec_rec){.ev = EXEC_R_WARNING, .job = A->p->jobs[j].id,
                              .attempt = run.attempt, .msg = msg}, e);
}

/* The attempt of job j ended by itself with status st. */
static int job_exited(apply *A, int j, const exec_pstatus *st, ef_err *e)
{
    const exec_job *jb = &A->p->jobs[j];
    int a = A->r.jobs[j].attempt;
    int64_t prog = exec_read_progress(&A->x, j);
    char why[64], logp[4096];
    exec_path_log(&A->x, j, a, logp, sizeof logp);
    if (st->state == EXEC_P_GONE)
        snprintf(why, sizeof why, "lost (no exit status)");
    else if (st->sig)
        snprintf(why, sizeof why, "signal %d", st->sig);
    else
        snprintf(why, sizeof why, "exit %d", st->code);
    int ok = st->state == EXEC_P_EXITED && st->code == 0;
    if (!ok && st->state == EXEC_P_EXITED &&
        A->r.jobs[j].retries < PORT_RETRIES &&
        exec_log_addr_in_use(&A->x, j, a)) {
        /* its rendezvous port was taken: launched again on another */
        if (put(A, &(exec_rec){.ev = EXEC_R_EXIT, .job = jb->id,
                               .attempt = a, .code = st->code, .why = why,
                               .result = EXEC_RESULT_RETRY, .log = logp,
                               .progress = prog}, e) != EF_OK)
            return EF_ERR;
        say(A, "%s attempt %d: %s, its log says the address was in use: "
            "launching it again with another port", jb->id, a, why);
        return EF_OK;
    }
    if (put(A, &(exec_rec){.ev = EXEC_R_EXIT, .job = jb->id, .attempt = a,
                           .code = st->state == EXEC_P_GONE ? -1 : st->code,
                           .why = why, .result = ok ? EXEC_RESULT_DONE
                                                    : EXEC_RESULT_FAILED,
                           .log = logp, .progress = prog}, e) != EF_OK)
        return EF_ERR;
    if (ok)
        say(A, "done %s (attempt %d exited 0)", jb->id, a);
    else
        say(A, "FAILED %s attempt %d: %s; log %s (not relaunched)", jb->id, a,
            why, logp);
    return EF_OK;
}

/* Checkpoint and stop the running attempts of jobs[0..n-1]: send each its
 * checkpoint signal, wait up to its grace for it to exit, then stop what
 * is left by force. 'why' goes to the journal. */
static int stop_jobs(apply *A, const int *jobs, int n, const char *why,
                     ef_err *e)
{
    if (n == 0)
        return EF_OK;
    int *left = ef_malloc((size_t)n * sizeof *left);
    double start = wall_now(), grace = 0;
    int rc = EF_OK;
    for (int k = 0; k < n && rc == EF_OK; k++) {
        int j = jobs[k];
        exec_run run = run_of(A, j);
        if (put(A, &(exec_rec){.ev = EXEC_R_STOP, .job = A->p->jobs[j].id,
                               .attempt = run.attempt, .why = why}, e) !=
                EF_OK ||
            A->x.b->signal(&A->x, &run, exec_job_signal(A->p, j), e) != EF_OK)
            rc = EF_ERR;
        left[k] = 1;
        if (exec_job_grace(A->p, j) > grace)
            grace = exec_job_grace(A->p, j);
    }
    int forced = 0, remaining = n;
    while (rc == EF_OK && remaining > 0) {
        reap();
        for (int k = 0; k < n && rc == EF_OK; k++) {
            if (!left[k])
                continue;
            exec_run run = run_of(A, jobs[k]);
            exec_pstatus st;
            if (A->x.b->poll(&A->x, &run, &st, e) != EF_OK) {
                rc = EF_ERR;
                break;
            }
            if (st.state == EXEC_P_RUNNING)
                continue;
            left[k] = 0;
            remaining--;
            int j = jobs[k];
            int64_t prog = exec_read_progress(&A->x, j);
            char how[64];
            if (st.state == EXEC_P_GONE)
                snprintf(how, sizeof how, "killed");
            else if (st.sig)
                snprintf(how, sizeof how, "signal %d", st.sig);
            else
                snprintf(how, sizeof how, "exit %d", st.code);
            if (put(A, &(exec_rec){.ev = EXEC_R_STOPPED,
                                   .job = A->p->jobs[j].id,
                                   .attempt = run.attempt, .why = why,
                                   .how = how, .progress = prog}, e) != EF_OK)
                rc = EF_ERR;
            else if (prog >= A->p->jobs[j].iterations &&
                     put(A, &(exec_rec){.ev = EXEC_R_DONE,
                                        .job = A->p->jobs[j].id,
                                        .progress = prog}, e) != EF_OK)
                rc = EF_ERR;
        }
        if (rc != EF_OK || remaining == 0)
            break;
        double waited = wall_now() - start;
        if (!forced && waited >= grace) {
            for (int k = 0; k < n && rc == EF_OK; k++)
                if (left[k]) {
                    exec_run run = run_of(A, jobs[k]);
                    say(A, "%s did not stop within %g s of its checkpoint "
                        "signal: killing it", A->p->jobs[jobs[k]].id, grace);
                    rc = A->x.b->stop(&A->x, &run, e);
                }
            forced = 1;
        } else if (forced && waited >= grace + 60) {
            rc = ef_fail(e, EF_E_INTERNAL, "%d job(s) still running 60 s after "
                         "being stopped (first: %s)", remaining,
                         A->p->jobs[jobs[0]].id);
        }
        sleep_s(0.02);
    }
    free(left);
    return rc;
}

/* End of the run of slots from s in which job j keeps placement pl: how
 * long a launch lasts in the plan (the Slurm --time). */
static int64_t shape_end(const exec_plan *p, int j, int s,
                         const exec_place *pl)
{
    int k = s;
    for (int m = s + 1; m < p->nslots; m++) {
        int same = 0;
        for (int q = 0; q < p->slots[m].nalloc && !same; q++)
            same = p->slots[m].a[q].job == j &&
                   exec_place_equal(&p->slots[m].a[q].place, pl);
        if (!same)
            break;
        k = m;
    }
    return p->slots[k].end;
}

/* Launch the next attempt of job j where slot s places it. */
static int launch(apply *A, int j, int s, const exec_place *pl, ef_err *e)
{
    const exec_job *jb = &A->p->jobs[j];
    int a = A->r.jobs[j].attempt + 1;
    int64_t until = shape_end(A->p, j, s, pl);
    if (put(A, &(exec_rec){.ev = EXEC_R_START, .job = jb->id, .attempt = a,
                           .place = *pl, .slot = A->p->slots[s].start,
                           .at = wall_now()}, e) != EF_OK)
        return EF_ERR;
    exec_run run = run_of(A, j);
    run.wall_limit = (double)(until - A->t) / A->r.scale +
                     exec_job_grace(A->p, j) + 60;
    if (A->x.b->launch(&A->x, &run, e) != EF_OK) {
        ef_err e2 = {0};
        put(A, &(exec_rec){.ev = EXEC_R_START_FAILED, .job = jb->id,
                           .attempt = a, .why = e->msg}, &e2);
        return EF_ERR;
    }
    if (put(A, &(exec_rec){.ev = EXEC_R_STARTED, .job = jb->id, .attempt = a,
                           .handle = run.handle}, e) != EF_OK)
        return EF_ERR;
    char where[512];
    say(A, "start %s attempt %d on %s", jb->id, a,
        exec_place_str(pl, where, sizeof where));
    A->rep->launched++;
    return world_warn(A, j, 0, e);
}

/* After a crash: settle launches and stops whose outcome is unknown. */
static int settle(apply *A, ef_err *e)
{
    for (int j = 0; j < A->p->njobs; j++) {
        exec_jjob *jj = &A->r.jobs[j];
        if (jj->start_in_doubt) {
            /* a launch forked just before the executor died leaves its
             * trace (pid file, Slurm job) within moments: give it 0.25 s
             * from the intent before looking */
            sleep_s(jj->start_at + 0.25 - wall_now() < 0.25
                    ? jj->start_at + 0.25 - wall_now() : 0.25);
            exec_run run = run_of(A, j);
            int f = A->x.b->find(&A->x, &run, e);
            if (f < 0)
                return EF_ERR;
            exec_rec o = {.ev = EXEC_R_STARTED, .job = A->p->jobs[j].id,
                          .attempt = run.attempt, .handle = run.handle,
                          .adopted = 1};
            if (f) {
                say(A, "adopt %s attempt %d (launched before a restart)",
                    A->p->jobs[j].id, run.attempt);
            } else {
                o.ev = EXEC_R_START_FAILED;
                o.why = "not launched: the executor stopped first";
            }
            if (put(A, &o, e) != EF_OK)
                return EF_ERR;
        }
        if (jj->stop_in_doubt) {
            int one = j;
            if (stop_jobs(A, &one, 1, "resume", e) != EF_OK)
                return EF_ERR;
        }
    }
    return EF_OK;
}

/* Where the cluster put running attempt run of job j, when its backend
 * picks the GPUs (exec_backend.placed) and has not said yet: journalled
 * ("placed"), and said when they are not the plan's. */
static int note_placed(apply *A, int j, const exec_run *run, ef_err *e)
{
    exec_jjob *jj = &A->r.jobs[j];
    if (!A->x.b->placed || jj->real.n > 0)
        return EF_OK;
    exec_place real = {0};
    int k = A->x.b->placed(&A->x, run, &real, e);
    if (k <= 0)
        return k < 0 ? EF_ERR : EF_OK;
    int differs = !exec_place_equal(&real, &jj->place);
    int rc = put(A, &(exec_rec){.ev = EXEC_R_PLACED, .job = A->p->jobs[j].id,
                                .attempt = run->attempt, .place = real,
                                .differs = differs}, e);
    if (rc == EF_OK && differs) {
        char got[512], planned[512];
        say(A, "%s attempt %d: %s placed it on %s, not the plan's %s (the "
            "cluster picks the GPUs inside a node)", A->p->jobs[j].id,
            run->attempt, A->x.b->name, exec_place_str(&real, got,
                                                       sizeof got),
            exec_place_str(&jj->place, planned, sizeof planned));
    }
    exec_place_free(&real);
    return rc;
}

/* Poll every running attempt; record exits; stop jobs whose progress file
 * says their work is done. */
static int poll_all(apply *A, ef_err *e)
{
    reap();
    for (int j = 0; j < A->p->njobs; j++) {
        if (!A->r.jobs[j].running)
            continue;
        exec_run run = run_of(A, j);
        exec_pstatus st;
        if (A->x.b->poll(&A->x, &run, &st, e) != EF_OK)
            return EF_ERR;
        if (st.state != EXEC_P_RUNNING) {
            if (job_exited(A, j, &st, e) != EF_OK)
                return EF_ERR;
            continue;
        }
        if (note_placed(A, j, &run, e) != EF_OK)
            return EF_ERR;
        int64_t prog = exec_read_progress(&A->x, j);
        int world = exec_read_world(&A->x, j, A->r.jobs[j].attempt);
        if (world > 0 && world_warn(A, j, world, e) != EF_OK)
            return EF_ERR;
        if (prog >= A->p->jobs[j].iterations) {
            say(A, "%s reports %" PRId64 " of %" PRId64 " iterations: "
                "stopping it", A->p->jobs[j].id, prog,
                A->p->jobs[j].iterations);
            int one = j;
            if (stop_jobs(A, &one, 1, "done", e) != EF_OK)
                return EF_ERR;
            if (A->r.jobs[j].status != EXEC_J_DONE &&
                put(A, &(exec_rec){.ev = EXEC_R_DONE, .job = A->p->jobs[j].id,
                                   .progress = prog}, e) != EF_OK)
                return EF_ERR;
        }
    }
    return EF_OK;
}

/* Make the cluster match slot s. */
static int apply_slot(apply *A, int s, ef_err *e)
{
    const exec_plan *p = A->p;
    const exec_slot *sl = &p->slots[s];
    exec_place *cur = ef_calloc((size_t)p->njobs + 1, sizeof *cur);
    exec_place *want = ef_calloc((size_t)p->njobs + 1, sizeof *want);
    exec_action *act = ef_calloc((size_t)p->njobs + 1, sizeof *act);
    int *stops = ef_calloc((size_t)p->njobs + 1, sizeof *stops);
    for (int j = 0; j < p->njobs; j++)
        if (A->r.jobs[j].running)
            cur[j] = A->r.jobs[j].place; /* shallow: not freed here */
    for (int a = 0; a < sl->nalloc; a++) {
        int j = sl->a[a].job;
        if (A->r.jobs[j].status == EXEC_J_PENDING)
            want[j] = sl->a[a].place;
    }
    /* a cluster that picks the GPUs inside a node (Slurm) cannot be
     * moved between them: the same nodes and counts are kept, not
     * migrated */
    for (int j = 0; A->x.b->placed && j < p->njobs; j++)
        if (cur[j].n && want[j].n && exec_place_same_shape(&cur[j], &want[j]))
            cur[j] = want[j];
    int n = exec_diff(cur, want, p->njobs, act), nstop = 0, rc = EF_OK;
    if (A->x.b->announce)
        A->x.b->announce(&A->x, s, act, n);
    char line[2048];
    size_t o = 0;
    line[0] = '\0';
    for (int k = 0; k < n; k++) {
        if (act[k].act == EXEC_KEEP)
            continue;
        int j = act[k].job;
        o += (size_t)snprintf(line + o, o < sizeof line ? sizeof line - o : 0,
                              "%s%s %s", o ? ", " : "",
                              exec_act_name(act[k].act), p->jobs[j].id);
        if (act[k].act == EXEC_RESIZE && cur[j].n != want[j].n &&
            o < sizeof line)
            o += (size_t)snprintf(line + o, sizeof line - o, " %d->%d GPUs",
                                  cur[j].n, want[j].n);
        if (act[k].act == EXEC_RESIZE && cur[j].batch != want[j].batch &&
            o < sizeof line)
            o += (size_t)snprintf(line + o, sizeof line - o, " batch "
                                  "%ld->%ld", cur[j].batch, want[j].batch);
        if (act[k].act != EXEC_START)
            stops[nstop++] = j;
    }
    char from[32], to[32]; /* the slot's bounds as shown */
    ef_ht_fmt(sl->start, A->o->zone, from, sizeof from);
    ef_ht_fmt(sl->end, A->o->zone, to, sizeof to);
    if (o)
        say(A, "slot %d of %d [%s, %s): %s", s + 1, p->nslots, from, to,
            line);
    if (stop_jobs(A, stops, nstop, nstop ? "plan" : "", e) != EF_OK)
        rc = EF_ERR;
    for (int k = 0; k < n && rc == EF_OK; k++) {
        exec_act a = act[k].act;
        if (a == EXEC_START || a == EXEC_RESIZE || a == EXEC_MIGRATE)
            rc = launch(A, act[k].job, s, &want[act[k].job], e);
    }
    free(cur);
    free(want);
    free(act);
    free(stops);
    if (rc == EF_OK && A->r.last_slot != sl->start) {
        int running = 0;
        for (int j = 0; j < p->njobs; j++)
            running += A->r.jobs[j].running;
        rc = put(A, &(exec_rec){.ev = EXEC_R_SLOT, .start = sl->start,
                                .running = running}, e);
        say(A, "slot %d of %d [%s, %s): %d job(s) running", s + 1,
            p->nslots, from, to, running);
    }
    return rc;
}


static int write_state(apply *A, int complete, ef_err *e)
{
    char *s = exec_state_json(&A->x, &A->r, complete, A->t);
    int rc = ef_write_file_atomic(A->rep->state_file, s, strlen(s), e);
    free(s);
    if (rc == EF_OK)
        A->rep->state_written = 1;
    return rc;
}

static void count(apply *A)
{
    A->rep->done = A->rep->failed = A->rep->pending = 0;
    for (int j = 0; j < A->p->njobs; j++) {
        exec_jstatus st = A->r.jobs[j].status;
        if (st == EXEC_J_DONE)
            A->rep->done++;
        else if (st == EXEC_J_FAILED)
            A->rep->failed++;
        else
            A->rep->pending++;
    }
}

/* Check before anything runs: every job the window gives GPUs has a
 * command. */
static int check_commands(const exec_plan *p, int64_t end_t, ef_err *e)
{
    for (int s = 0; s < p->nslots && p->slots[s].start < end_t; s++)
        for (int a = 0; a < p->slots[s].nalloc; a++) {
            const exec_job *jb = &p->jobs[p->slots[s].a[a].job];
            if (!jb->in->run.argv)
                return ef_fail(e, EF_E_INPUT, "%s: job \"%s\" has no "
                               "\"command\" (the plan runs it from %" PRId64
                               "; add a command array to the job)",
                               p->q.path, jb->id, p->slots[s].start);
        }
    return EF_OK;
}

static int64_t window_end(const exec_plan *p, const exec_opts *o)
{
    int64_t end_t = p->end;
    if (o->until >= 0 && o->until < end_t)
        end_t = o->until;
    if (o->slots > 0 && o->slots < p->nslots &&
        p->slots[o->slots - 1].end < end_t)
        end_t = p->slots[o->slots - 1].end;
    return end_t;
}

/* ---- apply --------------------------------------------------------------- */

/* 1 when nothing is left to do before plan time end_t: no attempt runs,
 * and every job neither done nor failed has no allocation in a slot that
 * ends after now (a real backend only: a dry one's jobs finish as
 * planned, on its own clock). */
static int nothing_left(const apply *A, int64_t end_t)
{
    const exec_plan *p = A->p;
    if (A->x.b->dry)
        return 0;
    for (int j = 0; j < p->njobs; j++)
        if (A->r.jobs[j].running || A->r.jobs[j].start_in_doubt ||
            A->r.jobs[j].stop_in_doubt)
            return 0;
    for (int s = 0; s < p->nslots; s++) {
        if (p->slots[s].end <= A->t || p->slots[s].start >= end_t)
            continue;
        for (int a = 0; a < p->slots[s].nalloc; a++)
            if (A->r.jobs[p->slots[s].a[a].job].status == EXEC_J_PENDING)
                return 0;
    }
    return 1;
}

static int follow_plan(apply *A, int64_t *end_t, ef_err *e);

/* The loop, tick by tick, up to plan time *end_t (which a new version
 * of the plan file moves: follow_plan), or until another run takes over
 * (exec_opts.handover). */
static int run_loop(apply *A, int64_t *end_p, ef_err *e)
{
    const exec_plan *p = A->p;
    for (;;) {
        int64_t end_t = *end_p;
        tick(A, (int64_t)floor(plan_clock(A)));
        if (!A->x.b->dry && A->o->handover && A->o->handover(A->o->arg)) {
            A->rep->handed_over = 1;
            say(A, "another run takes over: leaving what runs running");
            return EF_OK;
        }
        if (!A->x.b->dry && follow_plan(A, end_p, e) != EF_OK)
            return EF_ERR;
        end_t = *end_p;
        A->x.end = end_t;
        if (poll_all(A, e) != EF_OK)
            return EF_ERR;
        if (A->t >= end_t)
            return EF_OK;
        if (nothing_left(A, end_t)) {
            char until[32]; /* end_t as shown */
            say(A, "nothing left to run before %s: every job with a slot "
                "ahead is done or failed",
                ef_ht_fmt(end_t, A->o->zone, until, sizeof until));
            return EF_OK;
        }
        int s = exec_plan_slot_at(p, A->t);
        int64_t next = end_t;
        if (s >= 0) {
            if (apply_slot(A, s, e) != EF_OK)
                return EF_ERR;
            if (p->slots[s].end < next)
                next = p->slots[s].end;
        } else if (p->nslots && A->t < p->slots[0].start) {
            next = p->slots[0].start;
        }
        if (A->x.b->dry) { /* nothing runs: on to the next boundary */
            A->dry_clock = next;
            continue;
        }
        A->fhold = next; /* the followed clock: up to the next boundary */
        double wait = ((double)next - plan_clock(A)) / A->r.scale;
        if (wait > A->o->poll)
            wait = A->o->poll;
        sleep_s(wait > 0.005 ? wait : 0.005);
    }
}

const exec_backend *exec_backend_find(const char *name)
{
    static const exec_backend *const all[] = {
        &exec_backend_local, &exec_backend_slurm, &exec_backend_dryrun};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        if (strcmp(name, all[k]->name) == 0)
            return all[k];
    return NULL;
}

/* The state directory 'given' as a real run names it (open_state: created,
 * then its real path), for the dry run, which creates nothing: its real
 * path when it exists; else its parent's real path and its last name;
 * else (the real run could not create it) 'given' made absolute against
 * the current directory. Heap. */
static char *state_path_as_run(const char *given)
{
    char real[PATH_MAX];
    if (realpath(given, real))
        return ef_strdup(real);
    size_t n = strlen(given);
    while (n > 1 && given[n - 1] == '/')
        n--;
    char *g = ef_strndup(given, n);
    char *slash = strrchr(g, '/');
    const char *base = slash ? slash + 1 : g;
    char *parent = slash ? ef_strndup(g, (size_t)(slash - g)) : ef_strdup(".");
    ef_buf b = {0};
    if (realpath(parent[0] ? parent : "/", real))
        ef_buf_printf(&b, "%s%s%s", real, strcmp(real, "/") ? "/" : "",
                      base);
    else if (g[0] == '/' || !getcwd(real, sizeof real))
        ef_buf_put(&b, g);
    else
        ef_buf_printf(&b, "%s/%s", real, g);
    free(parent);
    free(g);
    return b.s;
}

/* The error for a state directory whose journal *lk was begun with
 * another plan: what is safe to do, never another --state while attempts
 * of that plan may still run (they would be launched a second time). */
static int foreign_journal(const apply *A, const exec_look *lk, ef_err *e)
{
    const char *dir = A->o->state;
    const exec_plan *p = A->p;
    char head[8800];
    snprintf(head, sizeof head, "%s: its journal belongs to another plan "
             "(hash %s; %s is %s)", dir, lk->hash, p->path, p->hash);
    if (lk->ended || (lk->known && lk->running == 0))
        return ef_fail(e, EF_E_INPUT, "%s, %s: nothing it launched still "
                       "runs. Apply this plan with a state directory of its "
                       "own (--state NEWDIR); to carry that plan's progress "
                       "over, plan again from %s/state.json first", head,
                       lk->ended ? "applied to its end"
                                 : "stopped before its end", A->x.state);
    if (lk->known)
        return ef_fail(e, EF_E_INPUT, "%s, not applied to its end, and %d "
                       "attempt(s) it launched may still run (first: %s): "
                       "another --state would launch them a second time. "
                       "Resume that plan from the copy the state directory "
                       "keeps: efplan apply %s --state %s --backend %s%s%s "
                       "(add --until 0 to stop them now), then plan again "
                       "from %s/state.json", head, lk->running, lk->first,
                       lk->copy, A->x.state, lk->backend,
                       p->q.path ? " --jobs " : "",
                       p->q.path ? p->q.path : "", A->x.state);
    return ef_fail(e, EF_E_INPUT, "%s, not applied to its end, and attempts "
                   "it launched may still run (the state directory keeps no "
                   "copy of that plan): another --state could launch them a "
                   "second time. Put back the plan file it was begun with "
                   "(hash %s), run the same apply again (add --until 0 to "
                   "stop what runs now), then plan again from "
                   "%s/state.json", head, lk->hash, A->x.state);
}

/* With the plan's mutex held: the plan file still holds the bytes p was
 * read from (else EF_E_INPUT), and the state directory keeps a copy of
 * them (DIR/plan.json, written when missing or another). */
static int check_plan_file(const apply *A, ef_err *e)
{
    const exec_plan *p = A->p;
    char *buf, hash[17], *old = NULL, copy[PATH_MAX + 16], oh[17] = "";
    size_t len, olen;
    if (ef_read_file(p->path, &buf, &len, e) != EF_OK)
        return EF_ERR;
    exec_plan_hash(buf, len, hash);
    if (strcmp(hash, p->hash) != 0) {
        free(buf);
        return ef_fail(e, EF_E_INPUT, "%s: the plan file changed after apply "
                       "read it (hash %s, now %s: rewritten by efplan submit "
                       "or plan?); nothing was done: run apply again",
                       p->path, p->hash, hash);
    }
    snprintf(copy, sizeof copy, "%s/plan.json", A->x.state);
    ef_err e2 = {0};
    if (access(copy, F_OK) == 0 &&
        ef_read_file(copy, &old, &olen, &e2) == EF_OK)
        exec_plan_hash(old, olen, oh);
    free(old);
    int rc = EF_OK;
    if (strcmp(oh, hash) != 0)
        rc = ef_write_file_atomic(copy, buf, len, e);
    free(buf);
    return rc;
}

/* With the plan's mutex held: EF_OK unless the last apply of this plan
 * file (any version of it: a submit rewrites it) used another state
 * directory and stopped before the plan's end
 * with attempts that may still run (killed): this apply would launch
 * them a second time (EF_E_INPUT, saying to resume that one). A live
 * apply is plan_apply_claim's to refuse. */
static int other_apply_running(const apply *A, ef_err *e)
{
    char prev[PATH_MAX];
    int live;
    exec_look lk;
    ef_err e2 = {0};
    if (plan_apply_holder(A->p->path, prev, sizeof prev, &live, &e2) !=
            EF_OK || live || !prev[0] || strcmp(prev, A->x.state) == 0 ||
        exec_state_look(prev, &lk, &e2) != EF_OK || !lk.begun ||
        lk.ended || !lk.known || lk.running == 0)
        return EF_OK; /* (of this plan file, whatever its version: the
                       * state directory that follows it resumes it) */
    return ef_fail(e, EF_E_INPUT, "%s: its last apply (state directory %s) "
                   "stopped before the plan's end and %d attempt(s) it "
                   "launched may still run (first: %s): applying it with "
                   "another state directory would launch them a second "
                   "time. Resume that apply: efplan apply %s --state %s "
                   "--backend %s (add --until 0 to stop them now)",
                   A->p->path, prev, lk.running, lk.first, A->p->path, prev,
                   lk.backend);
}

/* Claim plan p for this apply (planlock.h) into *claim (-1: not taken, a
 * plan in a directory this user cannot write), check the file and keep
 * its copy. */
static int claim_plan(apply *A, int *claim, ef_err *e)
{
    int denied = 0;
    *claim = -1;
    int mx = plan_lock(A->p->path, &denied, e);
    if (mx < 0) {
        if (!denied)
            return EF_ERR;
        memset(e, 0, sizeof *e); /* nobody here can rewrite it either */
        return check_plan_file(A, e);
    }
    int rc = other_apply_running(A, e);
    if (rc == EF_OK) {
        *claim = plan_apply_claim(A->p->path, A->x.state, e);
        rc = *claim < 0 ? EF_ERR : check_plan_file(A, e);
    }
    plan_unlock(mx);
    return rc;
}

/* rep's behind list at plan time t (rep->plan_time). */
static void report_behind(apply *A, int64_t t)
{
    free(A->rep->behind);
    A->rep->plan_time = t;
    A->rep->nbehind = exec_behind_list(&A->x, &A->r, t, &A->rep->behind,
                                       &A->rep->missed);
}

/* 1 if paths a and b name one file (their real paths; as given when
 * one does not resolve). */
static int same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!a[0] || !b[0])
        return 0;
    if (!realpath(a, ra))
        snprintf(ra, sizeof ra, "%s", a);
    if (!realpath(b, rb))
        snprintf(rb, sizeof rb, "%s", b);
    return strcmp(ra, rb) == 0;
}

/* Journal that the apply follows plan np from now on (a "plan" record),
 * keep its bytes buf[0..len) as the state directory's copy, replay the
 * journal against it and make it the plan applied: *A->p becomes np
 * (taken; the old one freed). */
static int switch_plan(apply *A, exec_plan *np, const char *buf, size_t len,
                       ef_err *e)
{
    char copy[PATH_MAX + 16];
    char *rec = exec_rec_json(&(exec_rec){.ev = EXEC_R_PLAN,
                                          .plan = np->path,
                                          .hash = np->hash});
    int rc = exec_journal_append(&A->jn, NULL, NULL, rec, e);
    free(rec);
    snprintf(copy, sizeof copy, "%s/plan.json", A->x.state);
    if (rc == EF_OK && buf)
        rc = ef_write_file_atomic(copy, buf, len, e);
    exec_replay nr;
    if (rc == EF_OK &&
        exec_journal_replay(A->rep->journal, np, &nr, e) != EF_OK) {
        ef_prefix(e, "internal: following %s: ", np->path);
        e->kind = EF_E_INTERNAL;
        rc = EF_ERR;
    }
    if (rc != EF_OK) {
        exec_plan_free(np);
        return EF_ERR;
    }
    exec_replay_free(&A->r);
    A->r = nr;
    exec_plan_free(A->p);
    *A->p = *np;
    memset(np, 0, sizeof *np);
    A->rep->followed++;
    return EF_OK;
}

/* 1 when plan np may replace p: the same cluster and slot length, and
 * every job of p in np. Else 0 with why in msg. */
static int successor(const exec_plan *p, const exec_plan *np, char *msg,
                     size_t len)
{
    if (np->nodes != p->nodes || np->gpus_per_node != p->gpus_per_node ||
        np->slot_seconds != p->slot_seconds) {
        snprintf(msg, len, "another cluster or slot length (%dx%d GPUs, "
                 "%d s slots; applying %dx%d, %d s)", np->nodes,
                 np->gpus_per_node, np->slot_seconds, p->nodes,
                 p->gpus_per_node, p->slot_seconds);
        return 0;
    }
    for (int j = 0; j < p->njobs; j++)
        if (exec_plan_find(np, p->jobs[j].id) < 0) {
            snprintf(msg, len, "job \"%.200s\" is not in it", p->jobs[j].id);
            return 0;
        }
    return 1;
}

/* Taking over: checkpoint and stop the attempts of plan old's jobs that
 * this plan lacks (*n of them), on a context of the earlier plan (the
 * backend prepared on it and released); count the others kept. */
static int stop_removed(apply *A, exec_plan *old, int *n, ef_err *e)
{
    apply O;
    memset(&O, 0, sizeof O);
    O.p = old;
    O.o = A->o;
    O.rep = A->rep;
    O.x = A->x;
    O.x.p = old;
    O.x.priv = NULL;
    O.jn = A->jn; /* shared: A closes it */
    O.fclock = A->fclock; /* the followed clock goes on where it is */
    O.fwall = A->fwall;
    O.fhold = A->fhold;
    *n = 0;
    if (exec_journal_replay(A->rep->journal, old, &O.r, e) != EF_OK)
        return EF_ERR;
    int *gone = ef_calloc((size_t)old->njobs + 1, sizeof *gone), rc = EF_OK;
    for (int j = 0; j < old->njobs; j++) {
        const exec_jjob *jj = &O.r.jobs[j];
        if (!jj->running && !jj->start_in_doubt && !jj->stop_in_doubt)
            continue;
        if (exec_plan_find(A->p, old->jobs[j].id) < 0)
            gone[(*n)++] = j;
        else
            A->rep->kept++;
    }
    if (*n) {
        tick(&O, (int64_t)floor(plan_clock(&O)));
        rc = O.x.b->prepare(&O.x, e);
        if (rc == EF_OK)
            rc = settle(&O, e);
        for (int k = 0; rc == EF_OK && k < *n; k++)
            say(&O, "%s is not in %s: checkpointing and stopping it",
                old->jobs[gone[k]].id, A->p->path);
        if (rc == EF_OK)
            rc = stop_jobs(&O, gone, *n, "removed", e);
        if (O.x.b->release)
            O.x.b->release(&O.x);
        if (rc != EF_OK)
            e->kind = EF_E_INTERNAL;
    }
    A->rep->removed = *n;
    free(gone);
    exec_replay_free(&O.r);
    return rc;
}

/* Take over the journal of the plan A->from_plan (hash A->from_hash):
 * stop the attempts of its jobs that this plan lacks (stop_removed),
 * journal the switch and replay the journal against this plan. */
static int take_over(apply *A, ef_err *e)
{
    exec_plan old;
    ef_err le = {0};
    int n = 0, loaded = 0;
    if (exec_plan_load(&old, A->from_plan, NULL, &le) == EF_OK) {
        loaded = strcmp(old.hash, A->from_hash) == 0;
        if (!loaded) {
            snprintf(le.msg, sizeof le.msg, "the file holds another version "
                     "(hash %s)", old.hash);
            exec_plan_free(&old);
        }
    }
    if (!loaded && A->from_copy) {
        /* an earlier version of a file rewritten since (a submit): the
         * state directory's copy, with the jobs file of this version,
         * which holds every job of the earlier one */
        ef_err ce = {0};
        if (exec_plan_parse(&old, A->from_plan, A->from_copy, A->from_len,
                            &ce) == EF_OK) {
            loaded = exec_plan_attach_jobs(&old, A->p->q.path, &ce) == EF_OK;
            if (!loaded) {
                exec_plan_free(&old);
                snprintf(le.msg, sizeof le.msg, "%s", ce.msg);
            }
        }
    }
    if (!loaded && !A->from_idle)
        return ef_fail(e, EF_E_INPUT, "%s: cannot take over the plan its "
                       "journal follows (%s, hash %s), whose attempts may "
                       "still run: %s. Put that plan file back, or resume "
                       "it: efplan apply %s --state %s", A->o->state,
                       A->from_plan, A->from_hash, le.msg, A->from_plan,
                       A->x.state);
    if (loaded) {
        int rc = stop_removed(A, &old, &n, e);
        exec_plan_free(&old);
        if (rc != EF_OK)
            return EF_ERR;
    }
    char *rec = exec_rec_json(&(exec_rec){.ev = EXEC_R_PLAN,
                                          .plan = A->p->path,
                                          .hash = A->p->hash});
    int rc = exec_journal_append(&A->jn, NULL, NULL, rec, e);
    free(rec);
    exec_replay_free(&A->r);
    if (rc == EF_OK &&
        exec_journal_replay(A->rep->journal, A->p, &A->r, e) != EF_OK)
        rc = EF_ERR;
    if (rc == EF_OK) {
        A->rep->followed++;
        tick(A, (int64_t)floor(plan_clock(A)));
        say(A, "taking over from %s: %d attempt(s) run on, %d stopped (not "
            "in %s)", A->from_plan, A->rep->kept, n, A->p->path);
    }
    return rc;
}

/* At a tick: when the plan file changed since last seen (a submit
 * rewrote it), follow its new version if it is a successor (under the
 * plan's mutex, so that a submit's jobs file and plan are read
 * together); *end_t follows the window. */
static int follow_plan(apply *A, int64_t *end_t, ef_err *e)
{
    struct stat st;
    if (stat(A->p->path, &st) != 0)
        return EF_OK; /* gone: the version in hand goes on */
    if (A->seen_ok && st.st_ino == A->seen.st_ino &&
        st.st_size == A->seen.st_size &&
        st.st_mtim.tv_sec == A->seen.st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == A->seen.st_mtim.tv_nsec)
        return EF_OK;
    A->seen = st;
    A->seen_ok = 1;
    ef_err le = {0};
    int mx = plan_lock(A->p->path, NULL, &le);
    char *buf = NULL, hash[17];
    size_t len;
    int rc = EF_OK;
    if (ef_read_file(A->p->path, &buf, &len, &le) != EF_OK)
        goto out;
    exec_plan_hash(buf, len, hash);
    if (strcmp(hash, A->p->hash) == 0 || strcmp(hash, A->refused) == 0)
        goto out;
    exec_plan np;
    char why[EF_ERR_LEN + 8];
    if (exec_plan_parse(&np, A->p->path, buf, len, &le) != EF_OK) {
        snprintf(why, sizeof why, "%s", le.msg);
    } else if (exec_plan_attach_jobs(&np, A->p->q.path, &le) != EF_OK) {
        snprintf(why, sizeof why, "%s", le.msg);
        exec_plan_free(&np);
    } else if (!successor(A->p, &np, why, sizeof why)) {
        exec_plan_free(&np);
    } else if (check_commands(&np, window_end(&np, A->o), &le) != EF_OK) {
        snprintf(why, sizeof why, "%s", le.msg);
        exec_plan_free(&np);
    } else {
        rc = switch_plan(A, &np, buf, len, e);
        if (rc == EF_OK) {
            say(A, "following the new version of %s (hash %s): %d job(s)",
                A->p->path, A->p->hash, A->p->njobs);
            *end_t = window_end(A->p, A->o);
        }
        goto out;
    }
    snprintf(A->refused, sizeof A->refused, "%s", hash);
    say(A, "%s changed (hash %s) but cannot be followed: %s; applying the "
        "version in hand", A->p->path, hash, why);
out:
    free(buf);
    plan_unlock(mx);
    return rc;
}

/* A real backend's state directory: create it and its subdirectories,
 * lock it (*lock, -1 if not), replay its journal into A->r and check that
 * the journal is this plan's, applied with this backend. */
static int open_state(apply *A, int *lock, ef_err *e)
{
    const exec_opts *o = A->o;
    const exec_plan *p = A->p;
    exec_report *rep = A->rep;
    char real[PATH_MAX], path[PATH_MAX + 64];
    if (exec_state_dirs(o->state, real, e) != EF_OK)
        return EF_ERR;
    snprintf(path, sizeof path, "%s/lock", real);
    *lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (*lock < 0)
        return ef_fail(e, EF_E_INPUT, "%s: %s", path, strerror(errno));
    if (flock(*lock, LOCK_EX | LOCK_NB) != 0)
        return ef_fail(e, EF_E_INPUT, "%s: another efplan apply is using this "
                       "state directory", o->state);
    A->x.state = ef_strdup(real);
    snprintf(rep->journal, sizeof rep->journal, "%s/journal.jsonl", real);
    snprintf(rep->state_file, sizeof rep->state_file, "%s/state.json", real);
    /* a journal of another plan is read on its own terms (its job ids
     * need not be this plan's) before it is replayed against this one */
    exec_look lk;
    if (exec_state_look(real, &lk, e) != EF_OK)
        return EF_ERR;
    if (lk.begun && strcmp(lk.hash, p->hash) != 0) {
        if (!o->takeover && !same_file(lk.plan, p->path))
            return foreign_journal(A, &lk, e);
        if (strcmp(lk.backend, A->x.b->name) != 0)
            return ef_fail(e, EF_E_INPUT, "%s: its journal was applied with "
                           "--backend %s; take it over with the same "
                           "backend", o->state, lk.backend);
        A->switching = 1; /* taken over once the journal is open */
        A->from_idle = lk.ended || (lk.known && lk.running == 0);
        /* its copy, read before this plan's replaces it (claim_plan):
         * the file itself may hold a newer version by now */
        char *buf;
        size_t len;
        char hash[17];
        ef_err ce = {0};
        if (ef_read_file(lk.copy, &buf, &len, &ce) == EF_OK) {
            exec_plan_hash(buf, len, hash);
            if (strcmp(hash, lk.hash) == 0) {
                A->from_copy = buf;
                A->from_len = len;
            } else {
                free(buf);
            }
        }
        snprintf(A->from_plan, sizeof A->from_plan, "%s", lk.plan);
        snprintf(A->from_hash, sizeof A->from_hash, "%s", lk.hash);
        exec_replay_init(&A->r, p);
        A->r.begun = 1;
        return EF_OK;
    }
    if (exec_journal_replay(rep->journal, p, &A->r, e) != EF_OK)
        return EF_ERR;
    if (A->r.begun && strcmp(A->r.backend, A->x.b->name) != 0)
        return ef_fail(e, EF_E_INPUT, "%s: this plan was applied with "
                       "--backend %s; resume it with the same backend",
                       o->state, A->r.backend);
    return EF_OK;
}

/* The run A of plan p with options o and backend b, before anything is
 * opened: the report rep, the backend's context, the window's end
 * (A->x.end), a dry backend's clock at the plan's start. */
static void apply_init(apply *A, exec_plan *p, const exec_opts *o,
                       exec_report *rep, const exec_backend *b)
{
    memset(A, 0, sizeof *A);
    A->p = p;
    A->o = o;
    A->rep = rep;
    A->x.p = p;
    A->x.b = b;
    A->x.scale = o->scale;
    A->x.nodes_file = o->nodes_file;
    A->x.slurm = o->slurm;
    A->x.out = o->out;
    A->x.arg = o->arg;
    A->x.end = window_end(p, o);
    A->dry_clock = p->now;
}

/* The node file, when given (loaded and checked against the plan), and
 * the state: a dry backend's as it would run, with an empty replay; a
 * real backend's directory, locked (*lock) and its journal replayed
 * (open_state). EF_OK or EF_ERR (e filled). */
static int apply_open(apply *A, int *lock, ef_err *e)
{
    const exec_opts *o = A->o;
    if (o->nodes_file &&
        (exec_nodes_load(&A->x.nodes, o->nodes_file, e) != EF_OK ||
         exec_nodes_check(&A->x.nodes, A->p, e) != EF_OK))
        return EF_ERR;
    if (A->x.b->dry) {
        A->x.state = state_path_as_run(o->state);
        exec_replay_init(&A->r, A->p);
        return EF_OK;
    }
    return open_state(A, lock, e) != EF_OK ? EF_ERR : EF_OK;
}

/* A journal that already ended: the report says so, with the jobs
 * behind their plan at its end. */
static void apply_was_done(apply *A)
{
    A->rep->already_done = 1;
    A->rep->complete = 1;
    count(A);
    report_behind(A, A->p->end);
}

/* Journal the run's start: a "begin" record anchoring the plan clock (a
 * plan in Unix time at scale 1: the wall clock itself), or, when the
 * journal has begun, a "resume" record at the current tick. EF_OK or
 * EF_ERR (e filled). */
static int apply_mark_start(apply *A, ef_err *e)
{
    const exec_plan *p = A->p;
    const exec_opts *o = A->o;
    if (A->r.begun) {
        tick(A, (int64_t)floor(plan_clock(A)));
        say(A, "resuming from %s (%d records)", A->rep->journal,
            A->r.records);
        return put(A, &(exec_rec){.ev = EXEC_R_RESUME, .time = A->t}, e) !=
                       EF_OK ? EF_ERR : EF_OK;
    }
    double aw = wall_now(); /* the clock's anchor: wall time aw */
    int64_t ap = p->now;    /* is plan time ap */
    if (o->scale == 1 && plan_unix_time(p->now)) {
        aw = 0; /* Unix times: the plan clock is the wall clock */
        ap = 0;
    }
    if (put(A, &(exec_rec){.ev = EXEC_R_BEGIN, .plan = p->path,
                           .hash = p->hash, .backend = A->x.b->name,
                           .anchor_wall = aw, .anchor_plan = ap,
                           .scale = o->scale,
                           .follow = o->follow && !A->x.b->dry}, e) != EF_OK)
        return EF_ERR;
    follow_start(A);
    return EF_OK;
}

/* Start (or resume) the run up to plan time end_t: a real backend claims
 * the plan (*claim), checks the commands, opens the journal and takes a
 * journal of another plan over; then the start is journalled and the
 * clock read. EF_OK or EF_ERR (e filled). */
static int apply_start(apply *A, int64_t end_t, int *claim, ef_err *e)
{
    follow_start(A);
    if (!A->x.b->dry &&
        (claim_plan(A, claim, e) != EF_OK ||
         check_commands(A->p, end_t, e) != EF_OK ||
         exec_journal_open(&A->jn, A->rep->journal, e) != EF_OK ||
         (A->switching && take_over(A, e) != EF_OK)))
        return EF_ERR;
    if (apply_mark_start(A, e) != EF_OK)
        return EF_ERR;
    tick(A, (int64_t)floor(plan_clock(A)));
    if (A->r.follow)
        say(A, "the plan's clock follows the jobs: it waits for a job "
            "behind its plan, so a slow machine stretches the clock "
            "instead of missing a deadline");
    return EF_OK;
}

/* The window is over at plan time end_t: checkpoint and stop what still
 * runs (said, and announced to the backend). EF_OK or EF_ERR (e
 * filled). */
static int apply_stop_at_end(apply *A, int64_t end_t, ef_err *e)
{
    const exec_plan *p = A->p;
    tick(A, end_t);
    int *left = ef_calloc((size_t)p->njobs + 1, sizeof *left); /* jobs */
    int n = 0; /* how many run */
    exec_action *stops = ef_calloc((size_t)p->njobs + 1, sizeof *stops);
    char win[32]; /* the window's end as shown */
    for (int j = 0; j < p->njobs; j++)
        if (A->r.jobs[j].running) {
            stops[n].act = EXEC_STOP;
            stops[n].job = j;
            left[n++] = j;
        }
    if (n)
        say(A, "end of the window at %s: stopping %d job(s)",
            ef_ht_fmt(end_t, A->o->zone, win, sizeof win), n);
    if (A->x.b->announce)
        A->x.b->announce(&A->x, -1, stops, n);
    int rc = stop_jobs(A, left, n, "end", e);
    free(stops);
    free(left);
    return rc;
}

/* The run ended at plan time end_t, everything stopped: the report, then
 * the state file, then (the plan applied to its end) the journal's "end"
 * record. EF_OK or EF_ERR (e filled). */
static int apply_finish(apply *A, int64_t end_t, ef_err *e)
{
    A->rep->complete = end_t == A->p->end;
    count(A);
    report_behind(A, end_t);
    /* the state file first, then the journal's end: a state file that
     * could not be written leaves the plan open, so that the rerun
     * finishes it and writes the file (instead of "already applied") */
    if (!A->x.b->dry && write_state(A, A->rep->complete, e) != EF_OK) {
        ef_err e2 = {0};
        put(A, &(exec_rec){.ev = EXEC_R_ERROR, .msg = e->msg}, &e2);
        return EF_ERR;
    }
    if (A->rep->complete &&
        put(A, &(exec_rec){.ev = EXEC_R_END, .time = A->t}, e) != EF_OK)
        return EF_ERR;
    return EF_OK;
}

/* After the backend failed (e): keep what is known: the journal says
 * what was done (an "error" record); the state file is rewritten; jobs
 * keep running until the next apply. */
static void apply_backend_error(apply *A, const ef_err *e)
{
    ef_err e2 = {0};
    if (A->jn.path)
        put(A, &(exec_rec){.ev = EXEC_R_ERROR, .msg = e->msg}, &e2);
    count(A);
    report_behind(A, A->t);
    if (!A->x.b->dry)
        write_state(A, 0, &e2);
}

/* The run from its start (or where its journal ends) to the window's
 * end *end_t, which a new version of the plan file moves, or to a
 * handover. EF_OK or EF_ERR (e filled). */
static int apply_run(apply *A, int64_t *end_t, int *claim, ef_err *e)
{
    if (apply_start(A, *end_t, claim, e) != EF_OK)
        return EF_ERR;
    if (A->x.b->prepare(&A->x, e) != EF_OK || settle(A, e) != EF_OK ||
        run_loop(A, end_t, e) != EF_OK) {
        apply_backend_error(A, e);
        return EF_ERR;
    }
    if (A->rep->handed_over) {
        /* what runs goes on under the next run: no stops, no end */
        count(A);
        report_behind(A, A->t);
        return write_state(A, 0, e) != EF_OK ? EF_ERR : EF_OK;
    }
    if (apply_stop_at_end(A, *end_t, e) != EF_OK) {
        apply_backend_error(A, e);
        return EF_ERR;
    }
    return apply_finish(A, *end_t, e);
}

/* What the run A holds, released: the backend's, the journal, the
 * replay, the node table, the state directory's lock and the plan's
 * claim (-1: not held). */
static void apply_release(apply *A, int lock, int claim)
{
    if (A->x.b->release)
        A->x.b->release(&A->x);
    exec_journal_close(&A->jn);
    exec_replay_free(&A->r);
    exec_nodes_free(&A->x.nodes);
    free(A->x.state);
    free(A->from_copy);
    if (lock >= 0)
        close(lock);
    plan_unlock(claim);
}

int exec_apply(exec_plan *p, const exec_opts *o, exec_report *rep,
               ef_err *e)
{
    memset(rep, 0, sizeof *rep);
    const exec_backend *b = exec_backend_find(o->backend);
    if (!b)
        return ef_fail(e, EF_E_USAGE, "unknown backend \"%s\" (expected local, "
                       "slurm or dry-run)", o->backend);
    apply A; /* the run */
    apply_init(&A, p, o, rep, b);
    int64_t end_t = A.x.end; /* the window's end (a new version moves it) */
    int lock = -1;  /* the state directory's lock, when held */
    int claim = -1; /* the plan's claim (planlock.h), when held */
    int rc = apply_open(&A, &lock, e);
    if (rc == EF_OK && A.r.ended)
        apply_was_done(&A);
    else if (rc == EF_OK)
        rc = apply_run(&A, &end_t, &claim, e);
    apply_release(&A, lock, claim);
    return rc;
}
