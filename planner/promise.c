/* promise.c: the overhead-aware promise check (see promise.h). */
#include "planner/promise.h"

#include <math.h>
#include <stdlib.h>

#include "common/util.h"
#include "planner/ebatch.h"

static double tput(const prm_start *s, const curve_row *row, int g)
{
    return row && g > 0 ? eb_tput(row, g, s->samples) : 0;
}

/* The factor on the model's charges for this job (prm_start.scale). */
static double prm_scale(const prm_start *s)
{
    return s->scale > 0 ? s->scale : 1.0;
}

/* The allowance, in work, for what the path cannot foresee: forced
 * migrations (FIG12, RESTART) or restarts (REFERENCE) at the path's
 * largest size and highest throughput, the path spanning 'slots' slots
 * from its point. */
static double allowance(const prm_model *m, const prm_start *s, int gmax,
                        double tpmax, int64_t slots)
{
    if (gmax <= 0)
        return 0;
    if (m->mode == OVH_FIG12 || m->mode == OVH_RESTART)
        return m->migrations * prm_scale(s) *
               ovh_charge_id(m->mode, s->model, gmax, gmax, 1, 0) * tpmax;
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

/* Piece k of a path given as an array p[0..n-1], or as 'head' (if not
 * NULL and not empty) then reservation r at 'row' cut at 'from' (the
 * pieces prm_resv_work walks, as pieces() below lists them): 0 when the
 * path has no such piece (a segment wholly before 'from'). */
static inline int piece_at(const prm_piece *p, const prm_piece *head,
                           const resv *r, const curve_row *row,
                           int64_t from, int k, prm_piece *out)
{
    if (p) {
        *out = p[k];
        return 1;
    }
    if (head) {
        if (k == 0) {
            *out = *head;
            return 1;
        }
        k--;
    }
    const seg *g = &r->s[k];
    if (g->end <= from)
        return 0;
    *out = (prm_piece){g->start > from ? g->start : from, g->end, g->gpus,
                       row};
    return 1;
}

/* walk() without a target, in one pass over the path (the array p[0..n-1]
 * or head and reservation r, as piece_at): the work sums the same terms
 * in the same order, and the allowance, which only the first pass of
 * walk() needs before the second when it looks for a finish, is taken
 * off at the end from the same largest size, throughput and last
 * second. The promise checks' hot path: no copy of the pieces, one
 * throughput per piece. */
static inline double work_pass(const prm_model *m, const prm_start *s,
                               const prm_piece *p, const prm_piece *head,
                               const resv *r, const curve_row *row,
                               int64_t from, int n, int64_t deadline)
{
    int S = m->slot > 0 ? m->slot : 1;
    double tpmax = 0;
    int gmax = 0;
    int64_t last = s->t;
    double work = 0, owed = s->owed;
    int held = s->gpus;
    const curve_row *hrow = s->row;
    int64_t cur = s->t;
    double scale = prm_scale(s);
    for (int k = 0; k < n; k++) {
        prm_piece pc;
        if (!piece_at(p, head, r, row, from, k, &pc))
            continue;
        int g = pc.gpus;
        int64_t b = pc.b < deadline ? pc.b : deadline;
        double tp = 0;
        /* walk()'s first pass: the pieces that count from s->t */
        if (g > 0 && b > (pc.a > s->t ? pc.a : s->t)) {
            tp = tput(s, pc.row, g);
            if (tp > tpmax)
                tpmax = tp;
            if (g > gmax)
                gmax = g;
            last = b;
        }
        /* its second pass */
        int64_t a = pc.a > cur ? pc.a : cur;
        if (a > cur && held > 0) { /* a gap: the job is stopped */
            held = 0;
            owed = 0;
        }
        if (b <= a || g <= 0) {
            if (pc.b > cur)
                cur = pc.b;
            continue;
        }
        int rebatch = held > 0 && pc.row != hrow;
        int change = g != held || rebatch;
        double len = (double)(b - a), prod;
        if (m->mode == OVH_REFERENCE) {
            double base = ovh_reference(g, 1, 0, m->total_gpus);
            double c1 = ovh_reference(g, !change, 0, m->total_gpus);
            prod = ref_prod(len, c1, base, S);
        } else {
            if (change)
                owed = scale * ovh_charge_id(m->mode, s->model, held, g, 0,
                                             rebatch);
            double c1 = owed < len ? owed : len;
            prod = len - c1;
            owed -= c1;
        }
        work += prod * tp;
        held = g;
        hrow = pc.row;
        cur = b;
    }
    int64_t slots = (last - s->t + S - 1) / S;
    work -= allowance(m, s, gmax, tpmax, slots);
    return work > 0 ? work : 0;
}

double prm_work(const prm_model *m, const prm_start *s, const prm_piece *p,
                int n, int64_t deadline)
{
    return work_pass(m, s, p, NULL, NULL, NULL, 0, n, deadline);
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

double prm_resv_work(const prm_model *m, const prm_start *s,
                     const prm_piece *head, const resv *r,
                     const curve_row *row, int64_t from, int64_t deadline)
{
    if (from < s->t)
        from = s->t;
    if (head && head->b <= head->a)
        head = NULL;
    return work_pass(m, s, NULL, head, r, row, from, r->n + (head != NULL),
                     deadline);
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
