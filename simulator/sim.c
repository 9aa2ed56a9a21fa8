/* sim.c: the simulator's event loop (see sim.h). */
#define _GNU_SOURCE 1 /* qsort_r */
#include "simulator/sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "planner/engine.h"
#include "simulator/gen.h"

void sim_opts_default(sim_opts *o)
{
    memset(o, 0, sizeof *o);
    o->slot = 60;
    o->tick = 0;
    o->overhead = OVH_FIG12;
    o->timeline = 1;
}

void sim_free(sim *s)
{
    for (int i = 0; i < s->n; i++) {
        place_set_free(&s->jobs[i].pl);
        free(s->jobs[i].reason);
        free(s->jobs[i].risk);
    }
    free(s->jobs);
    free(s->act);
    free(s->tl);
    ef_lat_free(&s->point_us);
    ovh_cache_free(&s->cache);
    memset(s, 0, sizeof *s);
}

void sim_admit(sim *s, int i)
{
    sim_job *j = &s->jobs[i];
    ef_assert(j->state == SJ_WAITING);
    j->state = SJ_ACTIVE;
    s->act[s->nact++] = i;
}

/* A copy of the first 'max' bytes of 'text' at most (what snprintf into
 * a buffer of max + 1 bytes kept). */
static char *text_upto(const char *text, size_t max)
{
    return ef_strndup(text, strnlen(text, max));
}

void sim_reject(sim *s, int i, int64_t earliest, const char *why)
{
    sim_job *j = &s->jobs[i];
    ef_assert(j->state == SJ_WAITING);
    j->state = SJ_REJECTED;
    j->earliest_deadline = earliest;
    free(j->reason);
    j->reason = text_upto(why ? why : "", SIM_REASON_MAX);
}

void sim_flag_at_risk(sim *s, int i, const char *why)
{
    sim_job *j = &s->jobs[i];
    ef_assert(j->state == SJ_ACTIVE);
    if (!j->risk)
        j->risk = text_upto(why && why[0] ? why : "at risk", SIM_RISK_MAX);
}

void sim_use_elastic_batch(sim *s)
{
    s->elastic = 1;
    for (int i = 0; i < s->n; i++) {
        sim_job *j = &s->jobs[i];
        if (!job_elastic(j->in))
            continue;
        j->eb = 1;
        j->rem = job_samples_left(j->in);
    }
}

/* Throughput of job j at row r and g GPUs, in the job's work unit. */
static double tput_at(const sim_job *j, const curve_row *r, int g)
{
    if (g <= 0 || (g & (g - 1)) != 0)
        return 0;
    int l = __builtin_ctz((unsigned)g); /* g == 1 << l */
    if (l >= CURVE_MAX_LEVELS)
        return 0;
    return j->eb ? r->cell[l] * (double)r->batch : r->cell[l];
}

double sim_tput(const sim_job *j, int g)
{
    return tput_at(j, j->row ? j->row : j->in->curve, g);
}

/* The speed the loop advances a running job at: the policy's own
 * 'rate' if it set one, else its curve at g GPUs. */
/* The physics stream of a model: FNV-1a of its name, so a model's jobs
 * share their speed factor whatever the trace's order. */
static uint64_t model_stream(const char *model)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *c = (const unsigned char *)model; *c; c++)
        h = (h ^ *c) * 1099511628211ULL;
    return h;
}

static double speed(const sim_job *j, int g)
{
    return (j->rate > 0 ? j->rate : sim_tput(j, g)) * j->factor;
}

double sim_speedup(const sim_job *j, int g)
{
    const curve_row *r = j->in->curve;
    if (g <= 0)
        return 0;
    double one = r->cell[0] > 0 ? r->cell[0]
                                : r->usable_tput[0] / r->usable_gpus[0];
    if (j->eb)
        one *= (double)r->batch;
    return sim_tput(j, g) / one;
}

static int cmp_release(const void *a, const void *b, void *ctx)
{
    const sim *s = ctx;
    const sim_job *x = &s->jobs[*(const int *)a];
    const sim_job *y = &s->jobs[*(const int *)b];
    if (x->release != y->release)
        return x->release < y->release ? -1 : 1;
    if (x->in->submit != y->in->submit)
        return x->in->submit < y->in->submit ? -1 : 1;
    return *(const int *)a - *(const int *)b;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static double share_of(const sim_job *j)
{
    return j->share > 0 ? j->share : 1;
}

static void timeline_add(sim *s, int64_t t, int met)
{
    if (!s->opts.timeline)
        return;
    int used = 0, running = 0;
    double eff = 0;
    for (int k = 0; k < s->nact; k++) {
        const sim_job *j = &s->jobs[s->act[k]];
        if (j->g > 0) {
            used += j->share > 0 && j->share < 1
                        ? (int)lround(j->g * j->share) : j->g;
            running++;
            if (j->rate > 0)
                eff += j->rate_one > 0 ? j->rate / j->rate_one : 0;
            else
                eff += sim_speedup(j, j->g) * share_of(j);
        }
    }
    if (s->ntl == s->captl) {
        s->captl = s->captl ? s->captl * 2 : 1024;
        s->tl = ef_realloc(s->tl, (size_t)s->captl * sizeof *s->tl);
    }
    sim_sample *p = &s->tl[s->ntl++];
    p->t = t;
    p->gpus_used = used;
    p->running = running;
    p->met_so_far = met;
    p->efficiency = eff / s->cl.total_gpus;
}

/* What OVH_REFERENCE charges job j, going from g0 to g1 > 0 GPUs at a
 * point ('restart': a restart point), under the policy's rule
 * (sim_ref_charge; algorithms.md §4.4). */
static double ref_charge(sim *s, sim_job *j, int g0, int g1, int restart)
{
    int N = s->cl.total_gpus;
    switch (s->ref_charge) {
    case SIM_REF_CHARGE_FULL: /* §4.4: "without the cache" */
        return ovh_reference(g1, 0, restart, N);
    case SIM_REF_CHARGE_START: /* §4.4, §6.4 step 3 */
        return g0 == 0 || restart ? ovh_reference(g1, 0, restart, N) : 0;
    case SIM_REF_CHARGE_CACHED:
    default:
        return ovh_reference(g1, ovh_cache_seen(&s->cache, j->pl.gpu, g1),
                             restart, N);
    }
}

/* Check the policy's answers, place them through the slot engine,
 * charge overheads. */
static int apply_point(sim *s, eng *x, eng_alloc *al, ef_err *e)
{
    for (int k = 0; k < s->nact; k++) {
        sim_job *j = &s->jobs[s->act[k]];
        int w = j->want;
        const curve_row *r = j->want_row ? j->want_row : j->row;
        int ok_row = r == j->in->curve;
        for (int b = 0; j->eb && b < j->in->nbatch; b++)
            ok_row |= r == j->in->rows[b];
        if (!ok_row)
            return ef_fail(e, EF_E_INTERNAL, "policy %s gave job %s batch "
                           "size %ld, not one it accepts", s->pol->name,
                           j->in->id, r->batch);
        if (w > 0 && j->rate > 0 && !j->pin)
            return ef_fail(e, EF_E_INTERNAL, "policy %s gave job %s its own "
                           "speed without its GPUs", s->pol->name, j->in->id);
        if (w < 0 || (w > 0 && j->rate <= 0 && tput_at(j, r, w) <= 0))
            return ef_fail(e, EF_E_INTERNAL, "policy %s gave job %s %d GPUs, "
                           "not a runnable size of its curve", s->pol->name,
                           j->in->id, w);
        al[k] = (eng_alloc){j->in->id, w, j->pin, j->share, &j->pl, ENG_KEEP,
                            j->keep};
    }
    if (eng_place(x, al, s->nact, e) != EF_OK)
        return ef_prefix(e, "policy %s at t=%lld: ", s->pol->name,
                         (long long)s->t);
    /* the reference's rounds (algorithms.md §4.4): a restart on every
     * round whose counter is a positive multiple of --scheduling_slot
     * (the slot reused as a count, §8.5); every job holding GPUs pays at
     * every round, cached when its GPU set was seen before (a cache of
     * GPU sets shared by all jobs, emptied after this round's look-ups,
     * so every job pays the uncached cost at the round after a restart);
     * which points are rounds and which jobs pay follow the policy's rule
     * (sim_ref_charge: the reference's Gandiva and Tiresias differ) */
    int round = s->opts.overhead == OVH_REFERENCE &&
                (s->ref_charge != SIM_REF_CHARGE_FULL ||
                 (s->released_now > 0 && s->released_left > 0));
    int restart = round && s->ref_rounds > 0 &&
                  s->ref_rounds % s->opts.slot == 0;
    s->ref_rounds += round;
    for (int k = 0; k < s->nact; k++) {
        sim_job *j = &s->jobs[s->act[k]];
        int g0 = j->g, g1 = j->pl.g;
        eng_change ch = al[k].change;
        int moved = ch == ENG_MIGRATE;
        j->rescales += ch == ENG_RESIZE;
        j->migrations += moved;
        j->preemptions += ch == ENG_STOP;
        const curve_row *r1 = j->want_row ? j->want_row : j->row;
        int rebatch = g0 > 0 && g1 > 0 && r1 != j->row;
        j->batch_changes += rebatch;
        j->row = r1;
        double c = 0;
        if (s->opts.overhead == OVH_FIG12 || s->opts.overhead == OVH_RESTART)
            c = ovh_charge_id(s->opts.overhead, j->ovh, g0, g1, moved,
                              rebatch);
        else if (round && g1 > 0)
            c = ref_charge(s, j, g0, g1, restart);
        if (g1 == 0) {
            j->ovh_left = 0;
        } else if (c > 0) {
            double real = s->opts.restart_scale > 0
                              ? c * s->opts.restart_scale : c;
            j->ovh_model += c;
            j->ovh_paid += real;
            j->ovh_left = real;
        }
        if (g1 > 0 && j->start < 0)
            j->start = s->t;
        j->g = g1;
    }
    if (restart)
        ovh_cache_clear(&s->cache);
    return EF_OK;
}

/* The point an event at time w > s->t makes: the first slot boundary at
 * or after it, or off the grid w itself but at least a slot after the
 * current point (algorithms.md §6.4: "max(now + slot, end)"). */
static int64_t point_at(const sim *s, int64_t w)
{
    if (s->points_at == SIM_POINTS_GRID)
        return ef_align_up(s->now, w, s->opts.slot);
    int64_t lo = s->t + s->opts.slot;
    return w > lo ? w : lo;
}

/* The point the next arrival, arr[ai] (ai < n, arr by release), makes:
 * its release, but under SIM_POINTS_BATCHED a slot after the current
 * point when it comes sooner and a later release time remains
 * (algorithms.md §4.3: "while E[0].time - cur <= slot and len(E) > 1"). */
static int64_t next_release(const sim *s, const int *arr, int ai, int n)
{
    int64_t r = s->jobs[arr[ai]].release, lo = s->t + s->opts.slot;
    if (s->points_at != SIM_POINTS_BATCHED || r > lo)
        return r;
    for (int k = ai + 1; k < n; k++)
        if (s->jobs[arr[k]].release > r)
            return lo;
    return r;
}

/* The point after the current one (s->t), given the arrivals arr[ai..]
 * still to come and the policy's wake: the next arrival, the wake, the
 * tick, a running job's completion, each where point_at puts it; at
 * least a slot on; INT64_MAX when nothing is to come. */
static int64_t next_point(const sim *s, const int *arr, int ai, int64_t wake)
{
    int64_t t = s->t, S = s->opts.slot, next = INT64_MAX;
    if (ai < s->n)
        next = next_release(s, arr, ai, s->n);
    /* (on the grid, point_at(w) <= next whenever w < next) */
    if (wake > t && wake < next && point_at(s, wake) < next)
        next = point_at(s, wake);
    if (s->opts.tick > 0 && s->nact > 0) {
        int64_t tk = ef_align_up(s->now, t + s->opts.tick, S);
        if (tk < next)
            next = tk;
    }
    for (int k = 0; k < s->nact && s->points_at != SIM_POINTS_BATCHED; k++) {
        const sim_job *j = &s->jobs[s->act[k]];
        if (j->g == 0)
            continue;
        double fin = (double)t + j->ovh_left +
                     j->rem / (speed(j, j->g) * share_of(j));
        int64_t f = fin >= 9e15 ? INT64_MAX : (int64_t)ceil(fin);
        if (f < next && point_at(s, f) < next)
            next = point_at(s, f);
    }
    if (next <= t)
        next = t + S;
    return next;
}

int sim_run(sim *s, const job_queue *q, const cluster *c,
            const sim_policy *pol, const sim_opts *o, ef_err *e)
{
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    memset(s, 0, sizeof *s);
    s->opts = *o;
    s->pol = pol;
    s->q = q;
    s->cl = *c;
    int n = q->n, S = o->slot;
    if (S <= 0)
        return ef_fail(e, EF_E_USAGE, "slot must be positive");
    s->n = n;
    s->jobs = ef_calloc((size_t)(n ? n : 1), sizeof *s->jobs);
    s->act = ef_malloc((size_t)(n ? n : 1) * sizeof *s->act);
    int64_t now = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || q->jobs[i].submit < now)
            now = q->jobs[i].submit;
    s->now = s->t = now;
    for (int i = 0; i < n; i++) {
        sim_job *j = &s->jobs[i];
        ef_assert(q->jobs[i].curve != NULL);
        j->in = &q->jobs[i];
        j->ovh = ovh_lookup(j->in->model);
        j->best_effort = !j->in->has_deadline;
        j->release = ef_align_up(now, j->in->submit, S);
        j->rem = (double)(j->in->iterations - j->in->iterations_done);
        j->row = j->in->curve;
        j->start = -1;
        j->end = -1;
        j->earliest_deadline = -1;
        j->due = j->in->deadline;
        j->factor = 1.0;
        if (o->speed_hi > 0) { /* physics: its model's stream */
            gen_rng r;
            gen_rng_init(&r, o->physics_seed, model_stream(j->in->model));
            j->factor = o->speed_lo + (o->speed_hi - o->speed_lo) *
                                          gen_uniform(&r);
        }
    }
    int *arr = ef_malloc((size_t)(n ? n : 1) * sizeof *arr);
    for (int i = 0; i < n; i++)
        arr[i] = i;
    qsort_r(arr, (size_t)n, sizeof *arr, cmp_release, s);
    void *st = pol->init(s, e);
    if (!st) {
        free(arr);
        return EF_ERR;
    }
    if (s->points_at != SIM_POINTS_GRID) { /* released at submit */
        for (int i = 0; i < n; i++)
            s->jobs[i].release = s->jobs[i].in->submit;
        qsort_r(arr, (size_t)n, sizeof *arr, cmp_release, s);
    }
    eng x;
    eng_init(&x, c, n);
    x.least = s->place_least;
    eng_alloc *al = ef_calloc((size_t)(n ? n : 1), sizeof *al);
    int ai = 0, met = 0, rc = EF_OK;
    int64_t t = now;
    int64_t max_points = o->max_points > 0 ? o->max_points : SIM_MAX_POINTS(n);
    while (ai < n || s->nact > 0) {
        if (o->progress)
            o->progress(o->progress_arg, ai - s->nact, n);
        if (s->nact == 0 && s->jobs[arr[ai]].release > t)
            t = s->jobs[arr[ai]].release;
        s->t = t;
        if (s->points >= max_points || t > EF_MAX_I64) {
            int busy = 0;
            for (int k = 0; k < s->nact; k++)
                busy += s->jobs[s->act[k]].g > 0;
            rc = ef_fail(e, EF_E_INTERNAL, "the simulation ran away: policy "
                         "%s at t=%lld after %lld scheduling points (expected "
                         "at most %lld for %d job%s, and times up to 1e15 s), "
                         "%d job%s active, %d running, %d not yet released "
                         "(a job that needs that long at this slot length?)",
                         pol->name, (long long)t, (long long)s->points,
                         (long long)max_points, n, n == 1 ? "" : "s",
                         s->nact, s->nact == 1 ? "" : "s", busy, n - ai);
            goto out;
        }
        int a0 = ai;
        while (ai < n && s->jobs[arr[ai]].release <= t)
            ai++;
        s->released_now = ai - a0;
        s->released_left = n - ai;
        struct timespec p0, p1;
        clock_gettime(CLOCK_MONOTONIC, &p0);
        int64_t wake = pol->point(s, st, t, arr + a0, ai - a0);
        clock_gettime(CLOCK_MONOTONIC, &p1);
        ef_lat_add(&s->point_us, (double)(p1.tv_sec - p0.tv_sec) * 1e6 +
                                     (double)(p1.tv_nsec - p0.tv_nsec) * 1e-3);
        for (int k = a0; k < ai; k++)
            if (s->jobs[arr[k]].state == SJ_WAITING) {
                rc = ef_fail(e, EF_E_INTERNAL, "policy %s left job %s "
                             "undecided", pol->name, s->jobs[arr[k]].in->id);
                goto out;
            }
        ef_sort_ints(s->act, s->nact); /* sorted but for the arrivals */
        if ((rc = apply_point(s, &x, al, e)) != EF_OK)
            goto out;
        s->points++;
        timeline_add(s, t, met);
        int64_t next = next_point(s, arr, ai, wake);
        if (next == INT64_MAX) {
            /* active jobs, none running, nothing to wait for: the policy
             * starves them; stop rather than spin */
            break;
        }
        /* run [t, next) */
        double dt = (double)(next - t);
        int keep = 0;
        for (int k = 0; k < s->nact; k++) {
            sim_job *j = &s->jobs[s->act[k]];
            if (j->g > 0) {
                double tp = speed(j, j->g) * share_of(j), ov, used;
                double rem0 = j->rem;
                int fin = eng_advance(&j->rem, &j->ovh_left, tp, dt, &ov,
                                      &used);
                j->work_done += rem0 - j->rem;
                j->work_curve += (rem0 - j->rem) / j->factor;
                s->overhead_gpu_seconds += j->g * ov;
                j->gpu_seconds += j->g * dt;
                j->overhead_seconds += ov;
                if (fin) {
                    j->end = (double)t + ov + used;
                    j->state = SJ_DONE;
                    j->met = !j->best_effort && j->end <= (double)j->due;
                    met += j->met;
                    s->idle_after_completion += j->g * (dt - ov - used);
                    j->g = 0;
                    place_set_free(&j->pl);
                    continue;
                }
            }
            s->act[keep++] = s->act[k];
        }
        s->nact = keep;
        t = next;
    }
    s->end = t;
    s->t = t;
out:
    pol->fini(st);
    free(arr);
    eng_free(&x);
    free(al);
    clock_gettime(CLOCK_MONOTONIC, &w1);
    s->wall_seconds = (double)(w1.tv_sec - w0.tv_sec) +
                      (double)(w1.tv_nsec - w0.tv_nsec) * 1e-9;
    return rc;
}

/* m's restarts per job, over the jobs that ever held GPUs. */
static void sim_restarts(const sim *s, sim_metrics *m)
{
    int *r = ef_malloc((size_t)(s->n ? s->n : 1) * sizeof *r), k = 0;
    long sum = 0;
    for (int i = 0; i < s->n; i++) {
        const sim_job *j = &s->jobs[i];
        if (j->start < 0)
            continue;
        r[k] = j->rescales + j->migrations + j->preemptions +
               j->batch_changes;
        sum += r[k++];
    }
    qsort(r, (size_t)k, sizeof *r, cmp_int);
    m->restarts_mean = k ? (double)sum / k : 0;
    m->restarts_p99 = k ? r[(int)ceil(0.99 * k) - 1] : 0;
    m->restarts_max = k ? r[k - 1] : 0;
    free(r);
}

void sim_metrics_compute(const sim *s, sim_metrics *m)
{
    memset(m, 0, sizeof *m);
    double be_jct = 0, jct = 0, gs = 0;
    int nbe = 0, ndone = 0;
    for (int i = 0; i < s->n; i++) {
        const sim_job *j = &s->jobs[i];
        m->jobs++;
        if (j->best_effort)
            m->best_effort_jobs++;
        else
            m->deadline_jobs++;
        if (j->state == SJ_REJECTED)
            m->rejected++;
        else if (!j->best_effort)
            m->admitted++;
        if (j->state == SJ_DONE) {
            double c = j->end - (double)j->in->submit;
            jct += c;
            ndone++;
            if (j->best_effort) {
                be_jct += c;
                nbe++;
            } else if (j->met) {
                m->met++;
            } else {
                m->missed++;
            }
        } else if (j->state != SJ_REJECTED) {
            m->unfinished++;
            if (!j->best_effort)
                m->missed++;
        }
        m->at_risk += j->risk != NULL;
        gs += j->gpu_seconds;
        m->rescales += j->rescales;
        m->batch_changes += j->batch_changes;
        m->migrations += j->migrations;
        m->preemptions += j->preemptions;
    }
    sim_restarts(s, m);
    m->overhead_gpu_hours = s->overhead_gpu_seconds / 3600.0;
    m->deadline_ratio = m->deadline_jobs ? (double)m->met / m->deadline_jobs
                                         : 0;
    m->gpu_hours = gs / 3600.0;
    m->idle_gpu_hours_after_completion = s->idle_after_completion / 3600.0;
    m->best_effort_mean_jct = nbe ? be_jct / nbe : -1;
    m->mean_jct = ndone ? jct / ndone : -1;
    double area = 0, span = 0;
    for (int k = 0; k < s->ntl; k++) {
        int64_t b = k + 1 < s->ntl ? s->tl[k + 1].t : s->end;
        area += s->tl[k].efficiency * (double)(b - s->tl[k].t);
        span += (double)(b - s->tl[k].t);
    }
    m->mean_efficiency = span > 0 ? area / span : 0;
    m->solver_fallbacks = s->solver_fallbacks;
}
