/*
 * pol_tiresias.c: the Tiresias baseline (Gu et al., NSDI'19), discretised
 * two-dimensional least-attained-service (2D-LAS) as the ElasticFlow
 * artifact configures it (its "dlas-gpu" with GPU-time):
 *   - every job runs at its requested GPU count; its attained service is
 *     executed seconds x GPUs;
 *   - three queues Q0 > Q1 > Q2; a job enters at the tail of Q0 and moves
 *     to the tail of the next queue when its service crosses 3250 GPU-s
 *     (Q0 -> Q1) or 7200 GPU-s (Q1 -> Q2); no starvation promotion;
 *   - at every point the queues are scanned in order (within a queue,
 *     running jobs first, then waiting ones, each in arrival order): a job
 *     runs if its GPUs fit in what is left, else it is skipped (backfill);
 *     a running job that no longer fits is preempted;
 *   - placement: the loop's buddy placement, which keeps a job of up to a
 *     node on one node and larger jobs on whole nodes (consolidated) and
 *     never fails while the GPUs fit, so the consolidation is never
 *     relaxed; a job keeps its GPUs while it runs;
 *   - a point is requested when a running job will cross a threshold.
 * Deviations from the reference (algorithms.md 6.4, 8.10): the crossing
 * time is limit / GPUs - executed seconds (the reference computes
 * (limit - executed) / GPUs, mixing units); completions are exact; the
 * overhead model is the simulator's (charged on start, resume and
 * migration), not the reference's restart-round formula.
 */
#define _GNU_SOURCE 1 /* qsort_r */
#include <math.h>
#include <string.h>

#include "common/util.h"
#include "simulator/baselines.h"

#define NQ 3
static const double limits[NQ - 1] = {3250, 7200};

typedef struct tst {
    int *level;
    int64_t *seq;  /* position in its queue (smaller = earlier) */
    int64_t next_seq;
    int *g;
    int *ord;
} tst;

static void *init(sim *s, ef_err *e)
{
    (void)e;
    tst *st = ef_calloc(1, sizeof *st);
    /* the reference charges its formula when a job (re)starts and to
     * every running job on restart rounds (algorithms.md §4.4, §6.4) */
    if (s->opts.baselines_reference)
        s->ref_charge = SIM_REF_CHARGE_START;
    /* and decides at its events' own times: an arrival at once, an end
     * or a queue crossing at least a slot after the last decision
     * (algorithms.md §6.4, "Events considered") */
    if (s->opts.baselines_reference)
        s->points_at = SIM_POINTS_EVENTS;
    size_t n = (size_t)(s->n ? s->n : 1);
    st->level = ef_calloc(n, sizeof *st->level);
    st->seq = ef_calloc(n, sizeof *st->seq);
    st->g = ef_calloc(n, sizeof *st->g);
    st->ord = ef_malloc(n * sizeof *st->ord);
    return st;
}

static void fini(void *v)
{
    tst *st = v;
    free(st->level);
    free(st->seq);
    free(st->g);
    free(st->ord);
    free(st);
}

static int cmp_queue(const void *a, const void *b, void *ctx)
{
    const tst *st = ctx;
    int x = *(const int *)a, y = *(const int *)b;
    if (st->level[x] != st->level[y])
        return st->level[x] - st->level[y];
    if (st->seq[x] != st->seq[y])
        return st->seq[x] < st->seq[y] ? -1 : 1;
    return x - y;
}

static int64_t point(sim *s, void *v, int64_t t, const int *rel, int nrel)
{
    tst *st = v;
    int N = s->cl.total_gpus;
    /* demotions, in queue order */
    int m = 0;
    for (int k = 0; k < s->nact; k++)
        st->ord[m++] = s->act[k];
    qsort_r(st->ord, (size_t)m, sizeof *st->ord, cmp_queue, st);
    for (int k = 0; k < m; k++) {
        int i = st->ord[k];
        double svc = bl_seconds_done(&s->jobs[i], st->g[i]) * st->g[i];
        int moved = 0;
        while (st->level[i] < NQ - 1 && svc >= limits[st->level[i]]) {
            st->level[i]++;
            moved = 1;
        }
        if (moved)
            st->seq[i] = st->next_seq++;
    }
    for (int r = 0; r < nrel; r++) {
        int i = rel[r];
        int g = bl_admit(s, i);
        if (!g)
            continue;
        st->g[i] = g;
        st->level[i] = 0;
        st->seq[i] = st->next_seq++;
    }
    m = 0;
    for (int k = 0; k < s->nact; k++)
        st->ord[m++] = s->act[k];
    qsort_r(st->ord, (size_t)m, sizeof *st->ord, cmp_queue, st);
    int free_gpus = N;
    for (int k = 0; k < m; k++) {
        sim_job *j = &s->jobs[st->ord[k]];
        int g = st->g[st->ord[k]];
        j->want = g <= free_gpus ? g : 0;
        free_gpus -= j->want;
    }
    /* running jobs keep their place ahead of waiting ones in each queue */
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < m; k++) {
            int i = st->ord[k];
            if ((s->jobs[i].want > 0) == (pass == 0))
                st->seq[i] = st->next_seq++;
        }
    /* the next threshold crossing of a running job */
    int64_t wake = INT64_MAX;
    for (int k = 0; k < m; k++) {
        int i = st->ord[k];
        const sim_job *j = &s->jobs[i];
        if (j->want == 0 || st->level[i] >= NQ - 1)
            continue;
        double done = bl_seconds_done(j, st->g[i]);
        double left = s->opts.baselines_reference
                          ? (limits[st->level[i]] - done) / st->g[i]
                          : limits[st->level[i]] / st->g[i] - done;
        if (left < 0)
            left = 0;
        double ovh = j->ovh_left;
        if (j->g != j->want)
            ovh = ovh_expect_id(s->opts.overhead, j->ovh, j->g, j->want, 0);
        double w = (double)t + left + ovh;
        if (w < 9e15 && (int64_t)ceil(w) < wake)
            wake = (int64_t)ceil(w);
    }
    return wake;
}

const sim_policy sim_policy_tiresias = {
    "tiresias", "Tiresias: requested GPU counts, discretised 2D-LAS on "
    "GPU-time (3 queues), preemption", init, point, fini};
