/* promise.c: the overhead-aware promise check (see promise.h). */
#include "planner/promise.h"

#include <math.h>
#include <stdlib.h>

#include "common/util.h"
#include "planner/ebatch.h"

static inline double tput(const prm_start *s, const curve_row *row, int g)
{
    return row && g > 0 ? eb_tput(row, g, s->samples) : 0;
}

/* ovh_charge_id through a memo per thread: the promise checks ask the
 * same few hundred charges (a handful of models, the usable sizes, a
 * change or not) millions of times, and the charge is a pure function of
 * its arguments, so an entry whose key holds all of them holds exactly
 * what the call returns. Direct-mapped (an entry is replaced by the next
 * charge that maps to it); arguments the key cannot hold (sizes of 2^20
 * GPUs or more, a model id past 255, flags other than 0 and 1) go
 * straight to the call. */
typedef struct charge_memo {
    uint64_t key; /* charge_key()'s, 0: empty */
    double v;
} charge_memo;

#define CHARGE_MEMO 1024 /* entries, a power of two */

static _Thread_local charge_memo charge_memo_tab[CHARGE_MEMO];

/* mode, model, g0, g1, moved, rebatch in 63 bits with the top one set;
 * 0 when they do not fit */
static inline uint64_t charge_key(ovh_mode mode, ovh_id model, int g0,
                                  int g1, int moved, int rebatch)
{
    if ((unsigned)mode > 7 || (unsigned)model > 255 ||
        (unsigned)g0 >= 1u << 20 || (unsigned)g1 >= 1u << 20 ||
        (unsigned)moved > 1 || (unsigned)rebatch > 1)
        return 0;
    return 1ull << 63 | (uint64_t)mode << 50 | (uint64_t)model << 42 |
           (uint64_t)g0 << 22 | (uint64_t)g1 << 2 | (uint64_t)moved << 1 |
           (uint64_t)rebatch;
}

static inline double charge(ovh_mode mode, ovh_id model, int g0, int g1,
                            int moved, int rebatch)
{
    uint64_t k = charge_key(mode, model, g0, g1, moved, rebatch);
    if (k == 0)
        return ovh_charge_id(mode, model, g0, g1, moved, rebatch);
    uint64_t h = k * 0x9E3779B97F4A7C15ull;
    charge_memo *c = &charge_memo_tab[h >> 54]; /* the top 10 bits */
    if (c->key != k)
        *c = (charge_memo){k, ovh_charge_id(mode, model, g0, g1, moved,
                                            rebatch)};
    return c->v;
}

/* The factor on the model's charges for this job (prm_start.scale). */
static inline double prm_scale(const prm_start *s)
{
    return s->scale > 0 ? s->scale : 1.0;
}

/* The allowance, in work, for what the path cannot foresee: forced
 * migrations (FIG12, RESTART) or restarts (REFERENCE) at the path's
 * largest size and highest throughput, the path spanning 'slots' slots
 * from its point. */
static inline double allowance(const prm_model *m, const prm_start *s,
                               int gmax, double tpmax, int64_t slots)
{
    if (gmax <= 0)
        return 0;
    if (m->mode == OVH_FIG12 || m->mode == OVH_RESTART)
        return m->migrations * prm_scale(s) *
               charge(m->mode, s->model, gmax, gmax, 1, 0) * tpmax;
    if (m->mode != OVH_REFERENCE)
        return 0;
    int64_t every = m->restart_every > 0 ? m->restart_every : 1;
    /* restarts at the points i0 .. i0 + slots - 1 whose index is a
     * multiple of 'every' (not 0), each with the uncached point after
     * it; a restart at i0 - 1 leaves only its uncached point, at i0 */
    int64_t lo = m->index0 > 1 ? m->index0 : 1;
    int64_t hi = m->index0 + slots - 1;
    int64_t restarts = hi >= lo ? hi / every - (lo - 1) / every : 0;
    int before = m->index0 - 1 > 0 && (m->index0 - 1) % every == 0;
    double base = ovh_reference(gmax, 1, 0, m->total_gpus);
    double moved = ovh_reference(gmax, 0, 0, m->total_gpus) - base;
    double extra = ovh_reference(gmax, 0, 1, m->total_gpus) - base + moved;
    return ((double)restarts * extra + (before + m->migrations) * moved) *
           tpmax;
}

/* OVH_REFERENCE: productive seconds over 'len' seconds from a slot
 * boundary when the first point costs c1 and every later one 'base'. */
static double ref_prod(double len, double c1, double base, int S)
{
    double l0 = len < S ? len : S;
    double prod = l0 > c1 ? l0 - c1 : 0;
    double rest = len - l0;
    double nfull = floor(rest / S), part = rest - nfull * S;
    if (S > base)
        prod += nfull * (S - base);
    if (part > base)
        prod += part - base;
    return prod;
}

/* OVH_REFERENCE: seconds from the piece's start until 'x' productive
 * seconds are done (x <= ref_prod of the piece). */
static double ref_time(double x, double c1, double base, int S)
{
    double p0 = S > c1 ? S - c1 : 0;
    if (x <= p0)
        return c1 + x;
    x -= p0;
    double pf = S - base;
    double k = ceil(x / pf) - 1;
    if (k < 0)
        k = 0;
    return S + k * S + base + (x - k * pf);
}

/* The walk along a path's pieces, one piece at a time through wstep():
 * for each piece, what counts towards the allowance (the path's largest
 * size, highest throughput and last second from s->t: the allowance is
 * taken off at the end by wdone()) and the work it does, its overheads
 * paid. prm_work's and prm_resv_work's walks are one pass (the promise
 * checks' hot path; a reservation's pieces read in place, not copied);
 * prm_finish's walk runs it twice, the first pass for the allowance its
 * target includes. */
typedef struct wstate {
    double tpmax;
    int gmax;
    int64_t last;
    double work, owed;
    int held;
    const curve_row *hrow;
    int64_t cur;
} wstate;

static inline void wbegin(wstate *w, const prm_start *s)
{
    *w = (wstate){0, 0, s->t, 0, s->owed, s->gpus, s->row, s->t};
}

/* What wstep() did with one piece, for a walk looking for the second its
 * target is reached: the piece counted from 'a', at throughput 'tp', its
 * productive seconds 'prod', the first point's overhead 'c1' and (for
 * OVH_REFERENCE) every later point's 'base'. */
typedef struct wpiece {
    int counted;
    int64_t a;
    double tp, prod, c1, base;
} wpiece;

/* One piece [pa, pb) at g GPUs and batch row (out, when given, says what
 * it did). Always inline: a call per piece cost as much as the step
 * itself, and the hot path's out is NULL. */
static inline __attribute__((always_inline)) void
wstep(wstate *w, const prm_model *m, const prm_start *s, int64_t pa,
      int64_t pb, int g, const curve_row *row, int64_t deadline,
      wpiece *out)
{
    int64_t b = pb < deadline ? pb : deadline;
    double tp = 0;
    /* towards the allowance: the pieces that count from s->t */
    if (g > 0 && b > (pa > s->t ? pa : s->t)) {
        tp = tput(s, row, g);
        if (tp > w->tpmax)
            w->tpmax = tp;
        if (g > w->gmax)
            w->gmax = g;
        w->last = b;
    }
    /* the work (tp is set wherever it counts work: a >= s->t) */
    int64_t a = pa > w->cur ? pa : w->cur;
    if (a > w->cur && w->held > 0) { /* a gap: the job is stopped */
        w->held = 0;
        w->owed = 0;
    }
    if (b <= a || g <= 0) {
        if (pb > w->cur)
            w->cur = pb;
        if (out)
            out->counted = 0;
        return;
    }
    int rebatch = w->held > 0 && row != w->hrow;
    int change = g != w->held || rebatch;
    double len = (double)(b - a), prod, c1, base = 0;
    if (m->mode == OVH_REFERENCE) {
        base = ovh_reference(g, 1, 0, m->total_gpus);
        c1 = ovh_reference(g, !change, 0, m->total_gpus);
        prod = ref_prod(len, c1, base, m->slot > 0 ? m->slot : 1);
    } else {
        if (change)
            w->owed = prm_scale(s) * charge(m->mode, s->model, w->held, g,
                                            0, rebatch);
        c1 = w->owed < len ? w->owed : len;
        prod = len - c1;
        w->owed -= c1;
    }
    if (out)
        *out = (wpiece){1, a, tp, prod, c1, base};
    w->work += prod * tp;
    w->held = g;
    w->hrow = row;
    w->cur = b;
}

static inline double wdone(const wstate *w, const prm_model *m,
                           const prm_start *s)
{
    int S = m->slot > 0 ? m->slot : 1;
    int64_t slots = (w->last - s->t + S - 1) / S;
    double work = w->work - allowance(m, s, w->gmax, w->tpmax, slots);
    return work > 0 ? work : 0;
}

double prm_work(const prm_model *m, const prm_start *s, const prm_piece *p,
                int n, int64_t deadline)
{
    wstate w;
    wbegin(&w, s);
    for (int k = 0; k < n; k++)
        wstep(&w, m, s, p[k].a, p[k].b, p[k].gpus, p[k].row, deadline,
              NULL);
    return wdone(&w, m, s);
}

/* Pieces of 'head' (if any) and of r from 'from' on, at 'row'. */
static prm_piece *pieces(const prm_piece *head, const resv *r,
                         const curve_row *row, int64_t from, int *n,
                         prm_piece *buf, int nbuf)
{
    int need = r->n + 1;
    prm_piece *p = need <= nbuf ? buf
                                : ef_malloc((size_t)need * sizeof *p);
    int k = 0;
    if (head && head->b > head->a)
        p[k++] = *head;
    for (int i = 0; i < r->n; i++) {
        if (r->s[i].end <= from)
            continue;
        p[k].a = r->s[i].start > from ? r->s[i].start : from;
        p[k].b = r->s[i].end;
        p[k].gpus = r->s[i].gpus;
        p[k].row = row;
        k++;
    }
    *n = k;
    return p;
}

/* prm_work along the pieces pieces() lists, read in place */
double prm_resv_work(const prm_model *m, const prm_start *s,
                     const prm_piece *head, const resv *r,
                     const curve_row *row, int64_t from, int64_t deadline)
{
    if (from < s->t)
        from = s->t;
    wstate w;
    wbegin(&w, s);
    if (head && head->b > head->a)
        wstep(&w, m, s, head->a, head->b, head->gpus, head->row, deadline,
              NULL);
    for (int i = 0; i < r->n; i++) {
        const seg *g = &r->s[i];
        if (g->end > from)
            wstep(&w, m, s, g->start > from ? g->start : from, g->end,
                  g->gpus, row, deadline, NULL);
    }
    return wdone(&w, m, s);
}

/* prm_finish's walk: the first second at which 'target' work (plus the
 * allowance of the whole path) is done along p[0..n-1], or -1 if never. */
static int64_t walk_finish(const prm_model *m, const prm_start *s,
                           const prm_piece *p, int n, double target)
{
    int S = m->slot > 0 ? m->slot : 1;
    wstate w;
    wbegin(&w, s); /* the first pass: the allowance */
    for (int k = 0; k < n; k++)
        wstep(&w, m, s, p[k].a, p[k].b, p[k].gpus, p[k].row, INT64_MAX,
              NULL);
    int64_t slots = (w.last - s->t + S - 1) / S; /* slots the path spans */
    double goal = target + allowance(m, s, w.gmax, w.tpmax, slots);
    wbegin(&w, s);
    for (int k = 0; k < n; k++) {
        wpiece r;
        double before = w.work; /* work done before this piece */
        wstep(&w, m, s, p[k].a, p[k].b, p[k].gpus, p[k].row, INT64_MAX, &r);
        if (!r.counted || r.tp <= 0 || before + r.prod * r.tp < goal)
            continue;
        double x = (goal - before) / r.tp;
        if (x < 0)
            x = 0;
        double off = m->mode == OVH_REFERENCE ? ref_time(x, r.c1, r.base, S)
                                              : r.c1 + x;
        return r.a + (int64_t)ceil(off - 1e-9);
    }
    return -1;
}

int64_t prm_finish(const prm_model *m, const prm_start *s, const resv *r,
                   const curve_row *row, double work)
{
    prm_piece buf[16];
    int n;
    prm_piece *p = pieces(NULL, r, row, s->t, &n, buf, 16);
    int64_t fin = walk_finish(m, s, p, n, work);
    if (p != buf)
        free(p);
    return fin;
}
