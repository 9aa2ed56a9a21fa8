/*
 * test_admission_bruteforce.c: the planner's admission answers against a
 * brute-force search on tiny instances.
 *
 * Each instance: one node of 4 (or 8) GPUs, 60 s slots, 2 to 4 deadline
 * jobs all submitted at t=0 (so all are decided at t=0 in queue order),
 * deadlines within 8 slots. For every rejected job r, with A the jobs
 * admitted before it, a depth-first search over the slots decides whether
 * ANY schedule (each job a usable size or 0 in each slot, sizes summing to
 * at most N, work counted up to each deadline) finishes A and r. A
 * rejected job for which such a schedule exists is an "MSS miss"; each
 * miss is classified:
 *   greedy   r alone, taking the largest usable size that fits the
 *            capacity left by A's reservations in every slot, makes its
 *            deadline (MSS should then admit it: a bug if ever > 0);
 *   edf      MSS re-planned over A+r in deadline order from an empty
 *            cluster admits all: plan.h step 2 admits such a job, so
 *            this must stay 0;
 *   order    some other order of MSS over A+r admits all;
 *   shape    no MSS order fits: only a schedule outside MSS's shape
 *            (least level, two levels, largest usable size that fits)
 *            does.
 * The final admitted set must be feasible (asserted), and the decisions
 * the test recomputes with mss_plan (against the reservations made, then
 * in deadline order) must equal plan_build's (asserted).
 * benchmarks/results/admission_bruteforce.md explains the counts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cluster.h"
#include "model/curve.h"
#include "model/jobs.h"
#include "planner/avail.h"
#include "planner/mss.h"
#include "planner/plan.h"
#include "testplan.h"

#define BF_SLOT 60
#define BF_MAXJ 4
#define BF_MAXS 8
#define BF_SEEDS 1000
#define BF_NODE_LIMIT 2000000L
#define BF_SHOW 2 /* examples printed per kind of miss */

/* ---- instances ------------------------------------------------------------ */

static void make_instance(job_queue *q, uint64_t seed, int N)
{
    tp_seed(seed * 2654435761ULL + 12345);
    int n = 2 + (int)(tp_rnd() % 3);
    memset(q, 0, sizeof *q);
    q->path = strdup("bruteforce");
    q->is_json = 1;
    q->n = n;
    q->jobs = calloc((size_t)n, sizeof *q->jobs);
    for (int i = 0; i < n; i++) {
        job *j = &q->jobs[i];
        const curve_model *m =
            &g_curves.models[tp_rnd() % (uint32_t)g_curves.nmodels];
        const curve_row *r = &m->rows[tp_rnd() % (uint32_t)m->nrows];
        char id[16];
        snprintf(id, sizeof id, "j%d", i);
        j->id = strdup(id);
        j->model = strdup(m->name);
        j->batch = r->batch;
        j->curve = r;
        j->submit = 0;
        j->index = i;
        j->has_deadline = 1;
        j->deadline = 60 + (int64_t)(tp_rnd() % 421); /* 60 .. 480 s */
        /* work: a fraction of what a random usable size does by then */
        int gs[CURVE_MAX_LEVELS];
        double tp[CURVE_MAX_LEVELS];
        int nu = curve_usable(r, N, gs, tp);
        double t = tp[tp_rnd() % (uint32_t)nu];
        double f = 0.25 + (tp_rnd() % 1000) / 1000.0 * 0.85;
        j->iterations = (int64_t)(f * (double)j->deadline * t) + 1;
    }
}

/* ---- brute force ------------------------------------------------------------ */

typedef struct bf {
    int m, N, nslots;
    int nl[BF_MAXJ];               /* usable sizes (index 0 = size 0) */
    int g[BF_MAXJ][CURVE_MAX_LEVELS + 1];
    double tp[BF_MAXJ][CURVE_MAX_LEVELS + 1];
    double eff[BF_MAXJ];           /* best iterations per GPU-second */
    int64_t d[BF_MAXJ];
    double need[BF_MAXJ];
    int len[BF_MAXS][BF_MAXJ];     /* seconds of slot s that count for k */
    /* per slot: the maximal configurations (level index per job) */
    int ncfg[BF_MAXS];
    unsigned char (*cfg[BF_MAXS])[BF_MAXJ];
    int same_prev[BF_MAXS];        /* slot s has the same len as s-1 */
    long nodes;
    int path[BF_MAXS];             /* config index chosen per slot */
    int found_path[BF_MAXS];
} bf;

static void bf_enum(bf *b, int s, int k, int used, unsigned char *cur,
                    int *cap)
{
    if (k == b->m) {
        /* maximal: no alive job can step up within what is left */
        for (int i = 0; i < b->m; i++) {
            if (b->len[s][i] == 0 || cur[i] + 1 >= b->nl[i])
                continue;
            if (used - b->g[i][cur[i]] + b->g[i][cur[i] + 1] <= b->N)
                return;
        }
        if (b->ncfg[s] == *cap) {
            *cap = *cap ? *cap * 2 : 64;
            b->cfg[s] = realloc(b->cfg[s], (size_t)*cap * sizeof *b->cfg[s]);
        }
        memcpy(b->cfg[s][b->ncfg[s]++], cur, BF_MAXJ);
        return;
    }
    if (b->len[s][k] == 0) {
        cur[k] = 0;
        bf_enum(b, s, k + 1, used, cur, cap);
        return;
    }
    for (int l = b->nl[k] - 1; l >= 0; l--) {
        if (used + b->g[k][l] > b->N)
            continue;
        cur[k] = (unsigned char)l;
        bf_enum(b, s, k + 1, used + b->g[k][l], cur, cap);
    }
}

/* Jobs 'idx' (m of them) of q on N GPUs. */
static void bf_init(bf *b, const job_queue *q, const int *idx, int m, int N)
{
    memset(b, 0, sizeof *b);
    b->m = m;
    b->N = N;
    int64_t dmax = 0;
    for (int k = 0; k < m; k++) {
        const job *j = &q->jobs[idx[k]];
        int gs[CURVE_MAX_LEVELS];
        double tp[CURVE_MAX_LEVELS];
        int nu = curve_usable(j->curve, N, gs, tp);
        b->nl[k] = nu + 1;
        b->g[k][0] = 0;
        b->tp[k][0] = 0;
        for (int l = 0; l < nu; l++) {
            b->g[k][l + 1] = gs[l];
            b->tp[k][l + 1] = tp[l];
            if (tp[l] / gs[l] > b->eff[k])
                b->eff[k] = tp[l] / gs[l];
        }
        b->d[k] = j->deadline;
        b->need[k] = (double)(j->iterations - j->iterations_done) *
                     (1.0 + MSS_MARGIN);
        if (j->deadline > dmax)
            dmax = j->deadline;
    }
    b->nslots = (int)((dmax + BF_SLOT - 1) / BF_SLOT);
    assert_true(b->nslots <= BF_MAXS);
    for (int s = 0; s < b->nslots; s++) {
        int64_t a = (int64_t)s * BF_SLOT, e = a + BF_SLOT;
        b->same_prev[s] = s > 0;
        for (int k = 0; k < m; k++) {
            int64_t end = e < b->d[k] ? e : b->d[k];
            b->len[s][k] = end > a ? (int)(end - a) : 0;
            if (s > 0 && b->len[s][k] != b->len[s - 1][k])
                b->same_prev[s] = 0;
        }
        unsigned char cur[BF_MAXJ] = {0};
        int cap = 0;
        bf_enum(b, s, 0, 0, cur, &cap);
    }
}

static void bf_free(bf *b)
{
    for (int s = 0; s < BF_MAXS; s++)
        free(b->cfg[s]);
}

/* Can the work left be done in slots s.. ? (bounds only) */
static int bf_hopeless(const bf *b, int s, const double *rem)
{
    for (int k = 0; k < b->m; k++) {
        if (rem[k] <= 0)
            continue;
        double most = 0;
        for (int t = s; t < b->nslots; t++)
            most += b->tp[k][b->nl[k] - 1] * b->len[t][k];
        if (most < rem[k])
            return 1;
    }
    /* GPU-seconds: the jobs due by each deadline D need at least
     * rem / eff GPU-seconds before D */
    for (int i = 0; i < b->m; i++) {
        double want = 0, have = 0;
        for (int k = 0; k < b->m; k++)
            if (rem[k] > 0 && b->d[k] <= b->d[i])
                want += rem[k] / b->eff[k];
        for (int t = s; t < b->nslots; t++) {
            int64_t a = (int64_t)t * BF_SLOT, e = a + BF_SLOT;
            if (e > b->d[i])
                e = b->d[i];
            if (e > a)
                have += (double)b->N * (double)(e - a);
        }
        if (want > have * (1 + 1e-12))
            return 1;
    }
    return 0;
}

/* 1 feasible, 0 not, -1 node limit hit. */
static int bf_dfs(bf *b, int s, const double *rem, int lo)
{
    int done = 1;
    for (int k = 0; k < b->m; k++)
        if (rem[k] > 0)
            done = 0;
    if (done) {
        memcpy(b->found_path, b->path, sizeof b->path);
        for (int t = s; t < BF_MAXS; t++)
            b->found_path[t] = -1;
        return 1;
    }
    if (s == b->nslots || bf_hopeless(b, s, rem))
        return 0;
    if (++b->nodes > BF_NODE_LIMIT)
        return -1;
    int unknown = 0;
    for (int c = b->same_prev[s] ? lo : 0; c < b->ncfg[s]; c++) {
        double r2[BF_MAXJ];
        for (int k = 0; k < b->m; k++)
            r2[k] = rem[k] - b->tp[k][b->cfg[s][c][k]] * b->len[s][k];
        b->path[s] = c;
        int v = bf_dfs(b, s + 1, r2, c);
        if (v == 1)
            return 1;
        if (v < 0)
            unknown = 1;
    }
    return unknown ? -1 : 0;
}

/* Re-check a schedule the search found: capacity and work. */
static void bf_verify(const bf *b)
{
    double work[BF_MAXJ] = {0};
    for (int s = 0; s < b->nslots; s++) {
        int c = b->found_path[s], used = 0;
        if (c < 0)
            break;
        for (int k = 0; k < b->m; k++) {
            int l = b->cfg[s][c][k];
            used += b->g[k][l];
            work[k] += b->tp[k][l] * b->len[s][k];
        }
        assert_true(used <= b->N);
    }
    for (int k = 0; k < b->m; k++)
        assert_true(work[k] >= b->need[k]);
}

static int bf_feasible(bf *b)
{
    b->nodes = 0;
    int v = bf_dfs(b, 0, b->need, 0);
    if (v == 1)
        bf_verify(b);
    return v;
}

/* ---- MSS side ----------------------------------------------------------------- */

/* MSS over jobs idx[0..m) in that order from an empty cluster: all fit? */
static int mss_all(const job_queue *q, const int *idx, int m, int N)
{
    avail F;
    avail_init(&F, 0, N);
    resv r = {0};
    int ok = 1;
    for (int k = 0; k < m && ok; k++) {
        const job *j = &q->jobs[idx[k]];
        ok = mss_plan(j->curve, N, (double)(j->iterations - j->iterations_done),
                      0, j->deadline, BF_SLOT, &F, &r);
        if (ok)
            resv_apply(&r, &F, -1);
    }
    resv_free(&r);
    avail_free(&F);
    return ok;
}

/* MSS over idx[0..m) in deadline order (ties: queue order) from an empty
 * cluster. If all fit, store each job's reservation in rv[job], set *F
 * to the resulting profile and return 1; else change nothing, return 0. */
static int edf_commit(const job_queue *q, const int *idx, int m, int N,
                      avail *F, resv *rv)
{
    int ord[BF_MAXJ];
    memcpy(ord, idx, (size_t)m * sizeof *ord);
    for (int a = 1; a < m; a++)
        for (int b = a; b > 0; b--) {
            const job *x = &q->jobs[ord[b]], *y = &q->jobs[ord[b - 1]];
            if (x->deadline < y->deadline ||
                (x->deadline == y->deadline && ord[b] < ord[b - 1])) {
                int t = ord[b]; ord[b] = ord[b - 1]; ord[b - 1] = t;
            }
        }
    avail Fn;
    avail_init(&Fn, 0, N);
    resv tmp[BF_MAXJ];
    memset(tmp, 0, sizeof tmp);
    int ok = 1;
    for (int k = 0; k < m && ok; k++) {
        const job *j = &q->jobs[ord[k]];
        ok = mss_plan(j->curve, N, (double)(j->iterations - j->iterations_done),
                      0, j->deadline, BF_SLOT, &Fn, &tmp[k]);
        if (ok)
            resv_apply(&tmp[k], &Fn, -1);
    }
    if (ok) {
        for (int k = 0; k < m; k++)
            resv_copy(&rv[ord[k]], &tmp[k]);
        avail_copy(F, &Fn);
    }
    for (int k = 0; k < m; k++)
        resv_free(&tmp[k]);
    avail_free(&Fn);
    return ok;
}

/* Some order of idx admits all (m <= 4: all permutations). */
static int mss_any_order(const job_queue *q, int *idx, int m, int N, int k)
{
    if (k == m)
        return mss_all(q, idx, m, N);
    for (int i = k; i < m; i++) {
        int t = idx[k]; idx[k] = idx[i]; idx[i] = t;
        int ok = mss_any_order(q, idx, m, N, k + 1);
        t = idx[k]; idx[k] = idx[i]; idx[i] = t;
        if (ok)
            return 1;
    }
    return 0;
}

/* Largest usable size that fits F in every slot: finishes by deadline? */
static int greedy_fits(const job *j, const avail *F, int N)
{
    double rem = (double)(j->iterations - j->iterations_done) *
                 (1.0 + MSS_MARGIN);
    for (int64_t a = 0; a < j->deadline; a += BF_SLOT) {
        int fr = avail_at(F, a);
        int g = curve_max_usable(j->curve, fr < N ? fr : N);
        int64_t e = a + BF_SLOT < j->deadline ? a + BF_SLOT : j->deadline;
        if (g > 0)
            rem -= curve_tput(j->curve, g) * (double)(e - a);
    }
    return rem <= 0;
}

/* ---- printing ------------------------------------------------------------------- */

static void show_job(const job_queue *q, int i, int N, const char *what)
{
    const job *j = &q->jobs[i];
    int gs[CURVE_MAX_LEVELS];
    double tp[CURVE_MAX_LEVELS];
    int nu = curve_usable(j->curve, N, gs, tp);
    char lad[256];
    size_t o = 0;
    lad[0] = '\0';
    for (int l = 0; l < nu && o < sizeof lad - 32; l++) {
        int w = snprintf(lad + o, sizeof lad - o, "%s%d:%.3f", l ? " " : "",
                         gs[l], tp[l]);
        if (w < 0)
            break;
        o += (size_t)w;
    }
    print_message("    %-3s %-8s %-17s b%-4ld iters %-6lld deadline %-4lld "
                  "ladder {%s}\n", j->id, what, j->model, j->batch,
                  (long long)j->iterations, (long long)j->deadline, lad);
}

static void show_resv(const job *j, const resv *r)
{
    print_message("      MSS reservation of %s:", j->id);
    for (int i = 0; i < r->n; i++)
        print_message(" [%lld,%lld)x%d", (long long)r->s[i].start,
                      (long long)r->s[i].end, r->s[i].gpus);
    print_message(" (planned end %lld)\n", (long long)r->real_end);
}

static void show_bf(const bf *b, const job_queue *q, const int *idx)
{
    print_message("      brute-force schedule (GPUs per slot):\n");
    for (int k = 0; k < b->m; k++) {
        print_message("        %-3s", q->jobs[idx[k]].id);
        for (int s = 0; s < b->nslots; s++) {
            int c = b->found_path[s];
            int g = c < 0 || b->len[s][k] == 0 ? 0 : b->g[k][b->cfg[s][c][k]];
            print_message(" %d", g);
        }
        print_message("\n");
    }
}

static void show_plan(const plan *p)
{
    print_message("      plan slots:");
    for (int s = 0; s < p->nslots; s++) {
        print_message(" [%lld,%lld)", (long long)p->slots[s].start,
                      (long long)p->slots[s].end);
        for (int a = 0; a < p->slots[s].nalloc; a++)
            print_message("%s%sx%d", a ? "," : " ",
                          p->jobs[p->slots[s].a[a].job].in->id,
                          p->slots[s].a[a].gpus);
    }
    print_message("\n");
}

/* ---- the test --------------------------------------------------------------------- */

enum { K_GREEDY, K_EDF, K_ORDER, K_SHAPE, K_N };
static const char *kind_name[K_N] = {"greedy", "edf", "order", "shape"};

static int cmp_deadline(const void *x, const void *y)
{
    /* ties as plan.c's edf_less: deadline, submit (all 0), id (= index) */
    const job *a = *(const job *const *)x, *b = *(const job *const *)y;
    if (a->deadline != b->deadline)
        return a->deadline < b->deadline ? -1 : 1;
    return strcmp(a->id, b->id);
}

static void test_admission_bruteforce(void **state)
{
    (void)state;
    long instances = 0, admitted = 0, rejected = 0, alone = 0, checked = 0;
    long missed = 0, bad_sets = 0, unknown = 0, kinds[K_N] = {0};
    long miss_n[BF_MAXJ + 1] = {0}, rej_n[BF_MAXJ + 1] = {0};
    for (uint64_t seed = 1; seed <= BF_SEEDS; seed++) {
        int N = seed % 4 == 0 ? 8 : 4;
        job_queue q;
        make_instance(&q, seed, N);
        cluster c;
        assert_int_equal(cluster_init(&c, 1, 1, N, "t", NULL), EF_OK);
        plan_opts o;
        plan_opts_default(&o);
        o.slot = BF_SLOT;
        o.surplus = SURPLUS_GAIN;
        plan p;
        ef_err e = {0};
        assert_int_equal(plan_build(&p, &q, &c, &o, &e), EF_OK);
        if (plan_check(&p, &e) != EF_OK)
            fail_msg("seed %llu: %s", (unsigned long long)seed, e.msg);
        instances++;

        /* the decisions at t=0, recomputed in queue order */
        avail F;
        avail_init(&F, 0, N);
        resv rv[BF_MAXJ];
        memset(rv, 0, sizeof rv);
        int adm[BF_MAXJ], na = 0;
        for (int i = 0; i < q.n; i++) {
            const job *j = &q.jobs[i];
            avail Fbefore;
            avail_init(&Fbefore, 0, N);
            avail_copy(&Fbefore, &F);
            int ok = mss_plan(j->curve, N, (double)j->iterations, 0,
                              j->deadline, BF_SLOT, &F, &rv[i]);
            if (ok)
                resv_apply(&rv[i], &F, -1);
            else {
                /* second chance (plan.h step 2): the admitted jobs and
                 * this one re-planned by MSS in deadline order */
                int idx2[BF_MAXJ];
                memcpy(idx2, adm, (size_t)na * sizeof *idx2);
                idx2[na] = i;
                ok = edf_commit(&q, idx2, na + 1, N, &F, rv);
            }
            assert_int_equal(p.jobs[i].decision,
                             ok ? PLAN_ADMITTED : PLAN_REJECTED);
            if (ok) {
                adm[na++] = i;
                admitted++;
                avail_free(&Fbefore);
                continue;
            }
            rejected++;
            rej_n[q.n]++;
            /* hopeless alone: brute force with r alone (must agree) */
            bf b;
            int only = i;
            bf_init(&b, &q, &only, 1, N);
            int v = bf_feasible(&b);
            bf_free(&b);
            /* one job: the largest size in every slot is optimal */
            avail empty;
            avail_init(&empty, 0, N);
            assert_int_equal(v, greedy_fits(j, &empty, N));
            avail_free(&empty);
            if (v == 0) {
                alone++;
                avail_free(&Fbefore);
                continue;
            }
            checked++;
            int idx[BF_MAXJ];
            memcpy(idx, adm, (size_t)na * sizeof *idx);
            idx[na] = i;
            bf_init(&b, &q, idx, na + 1, N);
            v = bf_feasible(&b);
            if (v < 0) {
                unknown++;
            } else if (v == 1) {
                missed++;
                miss_n[q.n]++;
                int kd;
                if (greedy_fits(j, &Fbefore, N)) {
                    kd = K_GREEDY;
                } else {
                    const job *jp[BF_MAXJ];
                    for (int k = 0; k <= na; k++)
                        jp[k] = &q.jobs[idx[k]];
                    qsort(jp, (size_t)na + 1, sizeof *jp, cmp_deadline);
                    int ed[BF_MAXJ];
                    for (int k = 0; k <= na; k++)
                        ed[k] = jp[k]->index;
                    int perm[BF_MAXJ];
                    memcpy(perm, idx, sizeof perm);
                    kd = mss_all(&q, ed, na + 1, N) ? K_EDF
                         : mss_any_order(&q, perm, na + 1, N, 0) ? K_ORDER
                                                                 : K_SHAPE;
                }
                if (kinds[kd]++ < BF_SHOW) {
                    print_message("  miss (%s) seed %llu, %d GPUs, slot %d s:"
                                  "\n", kind_name[kd],
                                  (unsigned long long)seed, N, BF_SLOT);
                    for (int k = 0; k < q.n; k++)
                        show_job(&q, k, N, k == i ? "REJECTED"
                                 : p.jobs[k].decision == PLAN_ADMITTED
                                     ? "admitted" : "rejected");
                    for (int k = 0; k < na; k++)
                        show_resv(&q.jobs[adm[k]], &rv[adm[k]]);
                    show_plan(&p);
                    show_bf(&b, &q, idx);
                }
            }
            bf_free(&b);
            avail_free(&Fbefore);
        }
        /* the admitted set is feasible (a planner bug otherwise) */
        if (na > 0) {
            bf b;
            bf_init(&b, &q, adm, na, N);
            int v = bf_feasible(&b);
            bf_free(&b);
            if (v == 0) {
                bad_sets++;
                print_error("seed %llu: admitted set infeasible\n",
                            (unsigned long long)seed);
            } else if (v < 0) {
                unknown++;
            }
        }
        for (int i = 0; i < q.n; i++)
            resv_free(&rv[i]);
        avail_free(&F);
        plan_free(&p);
        queue_free(&q);
    }
    print_message("admission vs brute force: %ld instances, %ld jobs "
                  "admitted, %ld rejected (%ld infeasible even alone), "
                  "%ld rejected jobs checked, %ld MSS missed (greedy %ld, "
                  "edf %ld, order %ld, shape %ld), %ld admitted sets "
                  "infeasible, %ld undecided (node limit)\n", instances,
                  admitted, rejected, alone, checked, missed, kinds[K_GREEDY],
                  kinds[K_EDF], kinds[K_ORDER], kinds[K_SHAPE], bad_sets,
                  unknown);
    print_message("  by queue length: rejected/missed 2 jobs %ld/%ld, "
                  "3 jobs %ld/%ld, 4 jobs %ld/%ld\n", rej_n[2], miss_n[2],
                  rej_n[3], miss_n[3], rej_n[4], miss_n[4]);
    assert_int_equal(bad_sets, 0);
    assert_int_equal(kinds[K_GREEDY], 0);
    assert_int_equal(kinds[K_EDF], 0);
    assert_int_equal(unknown, 0);
    assert_true(checked > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admission_bruteforce),
    };
    return cmocka_run_group_tests_name("admission_bruteforce", tests, tp_setup,
                                       tp_teardown);
}
