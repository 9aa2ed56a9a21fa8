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

/* The walk behind prm_work and prm_finish: work by 'deadline' (less the
 * allowance); with 'fin', also the first second at which 'target' work is
 * done (-1 if never). */
static double walk(const prm_model *m, const prm_start *s, const prm_piece *p,
                   int n, int64_t deadline, double target, int64_t *fin)
{
    int S = m->slot > 0 ? m->slot : 1;
    double tpmax = 0;
    int gmax = 0;
    int64_t last = s->t;      /* end of the last piece that counts */
    for (int k = 0; k < n; k++) {
        int64_t a = p[k].a > s->t ? p[k].a : s->t;
        int64_t b = p[k].b < deadline ? p[k].b : deadline;
        if (b <= a || p[k].gpus <= 0)
            continue;
        double tp = tput(s, p[k].row, p[k].gpus);
        if (tp > tpmax)
            tpmax = tp;
        if (p[k].gpus > gmax)
            gmax = p[k].gpus;
        last = b;
    }
    int64_t slots = (last - s->t + S - 1) / S; /* slots the path spans */
    double allow = allowance(m, s, gmax, tpmax, slots);
    double goal = target + allow;
    double work = 0;        /* work done so far along the path */
    double owed = s->owed;  /* overhead seconds not yet paid */
    int held = s->gpus;     /* GPUs held before the current piece */
    const curve_row *hrow = s->row;
    int64_t cur = s->t;     /* end of what has been walked */
    if (fin)
        *fin = -1;
    for (int k = 0; k < n; k++) {
        int64_t a = p[k].a > cur ? p[k].a : cur;
        int64_t b = p[k].b < deadline ? p[k].b : deadline;
        if (a > cur && held > 0) { /* a gap: the job is stopped */
            held = 0;
            owed = 0;
        }
        if (b <= a || p[k].gpus <= 0) {
            if (p[k].b > cur)
                cur = p[k].b;
            continue;
        }
        int g = p[k].gpus;
        const curve_row *row = p[k].row;
        int rebatch = held > 0 && row != hrow;
        int change = g != held || rebatch;
        double tp = tput(s, row, g), len = (double)(b - a), prod, c1 = 0,
               base = 0;
        if (m->mode == OVH_REFERENCE) {
            base = ovh_reference(g, 1, 0, m->total_gpus);
            c1 = ovh_reference(g, !change, 0, m->total_gpus);
            prod = ref_prod(len, c1, base, S);
        } else {
            if (change)
                owed = prm_scale(s) *
                       ovh_charge_id(m->mode, s->model, held, g, 0, rebatch);
            c1 = owed < len ? owed : len;
            prod = len - c1;
            owed -= c1;
        }
        if (fin && *fin < 0 && tp > 0 && work + prod * tp >= goal) {
            double x = (goal - work) / tp;
            if (x < 0)
                x = 0;
            double off = m->mode == OVH_REFERENCE ? ref_time(x, c1, base, S)
                                                  : c1 + x;
            *fin = a + (int64_t)ceil(off - 1e-9);
        }
        work += prod * tp;
        held = g;
        hrow = row;
        cur = b;
    }
    work -= allow;
    return work > 0 ? work : 0;
}

/* walk() without a target, in one pass (the promise checks' hot path):
 * each piece in order through wstep(), which does both of walk()'s
 * passes for it: the first's largest size, throughput and last second
 * (the allowance, which only a walk looking for a finish needs before
 * the second pass, is taken off at the end by wdone()) and the second's
 * work. The same terms summed in the same order; one throughput per
 * piece; a reservation's pieces read in place, not copied. */
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

/* always inline: a call per piece cost as much as the step itself */
static inline __attribute__((always_inline)) void
wstep(wstate *w, const prm_model *m, const prm_start *s, int64_t pa,
      int64_t pb, int g, const curve_row *row, int64_t deadline)
{
    int64_t b = pb < deadline ? pb : deadline;
    double tp = 0;
    /* walk()'s first pass: the pieces that count from s->t */
    if (g > 0 && b > (pa > s->t ? pa : s->t)) {
        tp = tput(s, row, g);
        if (tp > w->tpmax)
            w->tpmax = tp;
        if (g > w->gmax)
            w->gmax = g;
        w->last = b;
    }
    /* its second pass (tp is set wherever it counts work: a >= s->t) */
    int64_t a = pa > w->cur ? pa : w->cur;
    if (a > w->cur && w->held > 0) { /* a gap: the job is stopped */
        w->held = 0;
        w->owed = 0;
    }
    if (b <= a || g <= 0) {
        if (pb > w->cur)
            w->cur = pb;
        return;
    }
    int rebatch = w->held > 0 && row != w->hrow;
    int change = g != w->held || rebatch;
    double len = (double)(b - a), prod;
    if (m->mode == OVH_REFERENCE) {
        double base = ovh_reference(g, 1, 0, m->total_gpus);
        double c1 = ovh_reference(g, !change, 0, m->total_gpus);
        prod = ref_prod(len, c1, base, m->slot > 0 ? m->slot : 1);
    } else {
        if (change)
            w->owed = prm_scale(s) * charge(m->mode, s->model, w->held, g,
                                            0, rebatch);
        double c1 = w->owed < len ? w->owed : len;
        prod = len - c1;
        w->owed -= c1;
    }
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
        wstep(&w, m, s, p[k].a, p[k].b, p[k].gpus, p[k].row, deadline);
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
        wstep(&w, m, s, head->a, head->b, head->gpus, head->row, deadline);
    for (int i = 0; i < r->n; i++) {
        const seg *g = &r->s[i];
        if (g->end > from)
            wstep(&w, m, s, g->start > from ? g->start : from, g->end,
                  g->gpus, row, deadline);
    }
    return wdone(&w, m, s);
}

int64_t prm_finish(const prm_model *m, const prm_start *s, const resv *r,
                   const curve_row *row, double work)
{
    prm_piece buf[16];
    int n;
    prm_piece *p = pieces(NULL, r, row, s->t, &n, buf, 16);
    int64_t fin;
    (void)walk(m, s, p, n, INT64_MAX, work, &fin);
    if (p != buf)
        free(p);
    return fin;
}
