/* mss.c: Minimum Satisfactory Share with progressive filling (see mss.h). */
#include "planner/mss.h"

#include <math.h>
#include <string.h>

#include "common/err.h"
#include "common/util.h"

void resv_clear(resv *r)
{
    r->n = 0;
    r->real_end = r->end = 0;
}

void resv_free(resv *r)
{
    free(r->s);
    memset(r, 0, sizeof *r);
}

void resv_copy(resv *dst, const resv *src)
{
    if (dst->cap < src->n) {
        dst->cap = src->n;
        dst->s = ef_realloc(dst->s, (size_t)dst->cap * sizeof *dst->s);
    }
    if (src->n)
        memcpy(dst->s, src->s, (size_t)src->n * sizeof *src->s);
    dst->n = src->n;
    dst->real_end = src->real_end;
    dst->end = src->end;
}

static void grow(resv *r)
{
    r->cap = r->cap ? r->cap * 2 : 4;
    r->s = ef_realloc(r->s, (size_t)r->cap * sizeof *r->s);
}

/* Append [a, b) at g GPUs to r (merged with the last segment when it
 * continues it at the same size). Inline: the forward passes call it
 * once per profile piece. */
static inline void push(resv *r, int64_t a, int64_t b, int g)
{
    if (b <= a || g <= 0)
        return;
    if (r->n > 0 && r->s[r->n - 1].end == a && r->s[r->n - 1].gpus == g) {
        r->s[r->n - 1].end = b;
        return;
    }
    if (r->n == r->cap)
        grow(r);
    r->s[r->n].start = a;
    r->s[r->n].end = b;
    r->s[r->n].gpus = g;
    r->n++;
}

void resv_push(resv *r, int64_t a, int64_t b, int g)
{
    push(r, a, b, g);
}

int resv_at(const resv *r, int64_t x)
{
    for (int i = 0; i < r->n; i++)
        if (r->s[i].start <= x && x < r->s[i].end)
            return r->s[i].gpus;
    return 0;
}

int64_t resv_next_change(const resv *r, int64_t t)
{
    for (int k = 0; k < r->n; k++) {
        if (r->s[k].start > t)
            return r->s[k].start;
        if (r->s[k].end > t)
            return r->s[k].end;
    }
    return INT64_MAX;
}

void resv_apply(const resv *r, avail *p, int sign)
{
    for (int i = 0; i < r->n; i++)
        avail_add(p, r->s[i].start, r->s[i].end, sign * r->s[i].gpus);
}

void resv_trim(resv *r, int64_t now)
{
    int o = 0;
    for (int i = 0; i < r->n; i++) {
        if (r->s[i].end <= now)
            continue;
        r->s[o] = r->s[i];
        if (r->s[o].start < now)
            r->s[o].start = now;
        o++;
    }
    r->n = o;
}

/* Largest usable size <= min(q, free), or 0. q is 0 or a usable size
 * (every caller's), so where q GPUs are free that is q itself. */
static int fit(const curve_row *row, int q, int free_gpus)
{
    if (free_gpus >= q)
        return q;
    return curve_max_usable(row, free_gpus);
}

/* The intervals of F from 'now' up to (not including) 'until': a view of
 * F's pieces lo..lo+n-1, the first cut at 'now' and the last at 'until'
 * (iv_a, iv_b, iv_free). Found by binary search, copied nowhere: a job's
 * MSS looks at the stretch from now to its deadline only, however long
 * the profile behind and ahead of it is. */
typedef struct ivals {
    const avail *F;
    int lo, n;
    int64_t now, until;
} ivals;

static void ivals_make(ivals *iv, const avail *F, int64_t now, int64_t until)
{
    iv->F = F;
    iv->now = now;
    iv->until = until;
    iv->lo = 0;
    iv->n = 0;
    if (F->n == 0)
        return;
    /* lo: the first piece that ends after now (the last one never ends);
     * the first piece itself where the profile starts at or after now, as
     * a planner's profile at its point does */
    int lo = 0, hi = F->n == 1 || F->t[1] > now ? 0 : F->n - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (F->t[mid + 1] > now)
            hi = mid;
        else
            lo = mid + 1;
    }
    iv->lo = lo;
    if ((F->t[lo] > now ? F->t[lo] : now) >= until)
        return;
    /* end: the first piece after lo that starts at or after until (every
     * piece after lo starts after now) */
    int a = lo + 1, b = F->n;
    while (a < b) {
        int mid = a + (b - a) / 2;
        if (F->t[mid] >= until)
            b = mid;
        else
            a = mid + 1;
    }
    iv->n = a - lo;
}

static inline int64_t iv_a(const ivals *iv, int k)
{
    int64_t a = iv->F->t[iv->lo + k];
    return a < iv->now ? iv->now : a;
}

static inline int64_t iv_b(const ivals *iv, int k)
{
    int i = iv->lo + k;
    int64_t b = i + 1 < iv->F->n ? iv->F->t[i + 1] : INT64_MAX;
    return b > iv->until ? iv->until : b;
}

static inline int iv_free(const ivals *iv, int k)
{
    return iv->F->free[iv->lo + k];
}

/* Completion inside an interval starting at 'a' with 'rem' iterations
 * left at throughput 'tp': integer real end and slot-aligned end. */
static void finish_at(int64_t a, double rem, double tp, int slot,
                      int64_t *real_end, int64_t *end)
{
    double secs = ceil(rem / tp);
    if (secs < 0)
        secs = 0;
    *real_end = a + (int64_t)secs;
    int64_t d = *real_end - a;
    *end = a + (d + slot - 1) / slot * slot;
    if (*end == a)
        *end = a + slot;
}

/* The forward pass of mss_plan: the work still to plan, and the segment
 * being grown, [sa, sb) at sg GPUs (sg 0: none yet). A piece that
 * continues the segment at the same size extends it here, and it goes to
 * the plan when another starts, so the plan gets exactly the segments
 * push() would have merged, without a store per piece. */
typedef struct fwd {
    double rem;
    int64_t sa, sb;
    int sg;
} fwd;

/* Run [a0, b0) at a GPUs (a > 0, throughput tp): returns 1 when the work
 * ends inside it (the plan in 'out' is then complete: its last segment,
 * its real and slot-aligned ends), else takes its work off and 0. */
static inline int fwd_step(fwd *f, resv *out, int64_t a0, int64_t b0, int a,
                           double tp, int slot, int64_t deadline)
{
    double w = (double)(b0 - a0) * tp;
    int cont = f->sg > 0 && f->sb == a0 && f->sg == a; /* extends it */
    if (w >= f->rem) {
        int64_t re, e;
        finish_at(a0, f->rem, tp, slot, &re, &e);
        if (f->sg > 0 && !cont)
            push(out, f->sa, f->sb, f->sg);
        push(out, cont ? f->sa : a0, e, a);
        out->real_end = re;
        out->end = e;
        ef_assert(re <= deadline);
        return 1;
    }
    f->rem -= w;
    if (b0 <= a0)
        return 0;
    if (cont) {
        f->sb = b0;
    } else {
        if (f->sg > 0)
            push(out, f->sa, f->sb, f->sg);
        f->sa = a0;
        f->sb = b0;
        f->sg = a;
    }
    return 0;
}

/* fit(row, q, f) by the row's tables (fit_g, fit_t: curve_row_ready),
 * its throughput in *tp (tq: q's). */
static inline int ladder_fit(const curve_row *row, int q, double tq, int f,
                             double *tp)
{
    if (f >= q) {
        *tp = tq;
        return q;
    }
    if (f <= 0)
        return 0;
    int l = 31 - __builtin_clz((unsigned)f);
    *tp = row->fit_t[l];
    return row->fit_g[l];
}

/* Where level q alone suffices from, found by mss_plan's backward scan in
 * piece [ak, e) at throughput tp with 'acc' gathered after it: the
 * latest slot boundary in the piece from which level q still makes up
 * 'need' (ak itself when none is). */
static inline int64_t settle(double need, double acc, double tp, int64_t ak,
                             int64_t e, int64_t now, int slot)
{
    double secs = (need - acc) / tp;
    int64_t late = e - (int64_t)ceil(secs);
    int64_t p = late <= ak ? ak : now + (late - now) / slot * slot;
    return p < ak ? ak : p;
}

/* One piece [ak, e) of mss_plan's backward scan at level q (f GPUs free
 * there): if what it adds at fit(row, q, f) makes *acc reach 'need', the
 * point level q suffices from into *p and 1; else its work added to *acc
 * and 0. */
static inline int piece_fills(const curve_row *row, int q, double tq, int f,
                              int64_t ak, int64_t e, int64_t now, int slot,
                              double need, double *acc, int64_t *p)
{
    double tp;
    if (ladder_fit(row, q, tq, f, &tp) == 0)
        return 0;
    double w = (double)(e - ak) * tp;
    if (*acc + w >= need) {
        *p = settle(need, *acc, tp, ak, e, now, slot);
        return 1;
    }
    *acc += w;
    return 0;
}

int mss_plan(const curve_row *row, int max_gpus, double work, int64_t now,
             int64_t deadline, int slot, const avail *F, resv *out)
{
    resv_clear(out);
    if (deadline <= now)
        return 0;
    /* the usable sizes <= max_gpus: a prefix of the row's ladder (the rule
     * that picks them reads the cells in order) */
    const int *lv = row->usable_gpus;
    int nl = 0;
    while (nl < row->nusable && row->usable_gpus[nl] <= max_gpus)
        nl++;
    if (nl == 0)
        return 0;
    double need = work * (1.0 + MSS_MARGIN);
    int64_t dal = ef_align_up(now, deadline, slot);
    ivals iv;
    ivals_make(&iv, F, now, dal);
    /* the view's pieces: piece k is [a(k), b(k)) with fr[k] GPUs free,
     * a(k) = max(ts[k], now), b(k) = min(ts[k + 1], dal) (the last piece of
     * the profile never ends) */
    const int64_t *ts = F->t + iv.lo;
    const int *fr = F->free + iv.lo;
    int n = iv.n;
    int open_end = iv.lo + n >= F->n; /* the last piece is the profile's */
#define PA(k) (ts[k] < now ? now : ts[k])
#define PB(k) ((k) + 1 < n || !open_end ? (ts[(k) + 1] > dal ? dal : ts[(k) + 1]) \
                                        : dal)
    /* Inner pieces, 1 <= k < kin: a(k) = ts[k] (after now) and the piece
     * ends inside the view by the deadline, b(k) = ts[k + 1] <= deadline,
     * so the scans take both from ts directly; the others go through
     * PA/PB and the cut at the deadline. */
    int kin = n - 1;
    while (kin > 0 && ts[kin] > deadline)
        kin--;
    int found = 0, q = 0, prev = 0, kp = 0;
    int64_t p = now;
    /* 1 + twice the relative rounding error of n + 3 operations */
    double slack = 1.0 + (double)(n + 3) * 0x1p-52;
    for (int li = 0; li < nl && !found; li++) {
        q = lv[li];
        double tq = curve_tput(row, q); /* q is usable: where q GPUs are
                                         * free, fit() is q itself */
        double acc = 0;
        int stop = 0;
        for (int k = n - 1; k >= 0 && !found && !stop; k--) {
            int64_t ak, e;
            if (k >= 1 && k < kin) {
                /* The inner pieces k = kin - 1 .. 1, in a loop of their
                 * own: a(k) = ts[k], b(k) = ts[k + 1] <= deadline, and
                 * the hopeless test below on every 8th piece only (it is
                 * a bound: where it holds at any piece the scan fails, so
                 * testing fewer pieces changes no answer, it only scans
                 * on a little longer before giving up). */
                for (; k >= 1; k--) {
                    ak = ts[k];
                    e = ts[k + 1];
                    if ((k & 7) == 0 &&
                        (acc + tq * (double)(e - now)) * slack < need) {
                        stop = 1;
                        break;
                    }
                    if (piece_fills(row, q, tq, fr[k], ak, e, now, slot,
                                    need, &acc, &p)) {
                        kp = k;
                        found = 1;
                        break;
                    }
                }
                if (found || stop)
                    break;
                k = 1; /* piece 0 next, below */
                continue;
            }
            int64_t bk = PB(k);
            ak = PA(k);
            e = bk < deadline ? bk : deadline;
            /* Hopeless: even q in every piece left (no piece does better:
             * the usable ladder's throughputs rise with the size) cannot
             * make up what is missing, so this scan would end without
             * success. 'slack' covers the rounding of the scan's n
             * additions and products and of this test, so the answer is
             * the scan's, exactly. */
            if ((acc + tq * (double)(e - now)) * slack < need)
                break;
            if (piece_fills(row, q, tq, fr[k], ak, e, now, slot, need,
                            &acc, &p)) {
                kp = k; /* p lies in piece k: ak <= p < e */
                found = 1;
                break;
            }
        }
        if (!found)
            prev = q;
    }
    if (!found)
        return 0;
    /* Forward: 'prev' before p, 'q' from p on. With no level below q
     * (prev 0) the pieces before piece kp, which all end by p, run
     * nothing (fit to 0 GPUs): the pass starts at kp, the piece that
     * holds p, and pushes and subtracts exactly what it would have. */
    double tprev = prev ? curve_tput(row, prev) : 0;
    double tq = curve_tput(row, q);
    fwd fw = {need, 0, 0, 0};
    int k = prev ? 0 : kp;
    while (k < n) {
        if (k != kp && k >= 1 && k + 1 < n) {
            /* a run of pieces that are not the view's first or last nor
             * the one that holds p: [ts[k], ts[k + 1]) each, wholly
             * before p up to piece kp (level prev: they end by ts[kp] <=
             * p), wholly after it up to the last piece (level q), as
             * below */
            int end = k < kp ? kp : n - 1, lv_run = k < kp ? prev : q;
            double t_run = k < kp ? tprev : tq;
            for (; k < end; k++) {
                int64_t a0 = ts[k], b0 = ts[k + 1];
                double tp;
                int a = ladder_fit(row, lv_run, t_run, fr[k], &tp);
                if (a == 0)
                    continue;
                /* the common case, fwd_step's without its branches: the
                 * piece continues the segment being grown at the same
                 * size and the work does not end in it */
                double w = (double)(b0 - a0) * tp;
                if (fw.sg == a && fw.sb == a0 && w < fw.rem) {
                    fw.rem -= w;
                    fw.sb = b0;
                    continue;
                }
                if (fwd_step(&fw, out, a0, b0, a, tp, slot, deadline))
                    return 1;
            }
            continue;
        }
        /* an interval that holds p is run as two pieces */
        for (int piece = 0; piece < 2; piece++) {
            int64_t a0 = PA(k), b0 = PB(k);
            if (p > a0 && p < b0) {
                if (piece == 0)
                    b0 = p;
                else
                    a0 = p;
            } else if (piece == 1) {
                break;
            }
            double tp;
            int a = a0 < p ? ladder_fit(row, prev, tprev, fr[k], &tp)
                           : ladder_fit(row, q, tq, fr[k], &tp);
            if (a == 0)
                continue;
            if (fwd_step(&fw, out, a0, b0, a, tp, slot, deadline))
                return 1;
        }
        k++;
    }
#undef PA
#undef PB
    ef_panic("mss_plan: backward fill succeeded but forward plan did not");
}

/* Largest runnable power of two <= min(q, free) (past the peak too). */
static int fit_runnable(const curve_row *row, int q, int free_gpus)
{
    int lim = q < free_gpus ? q : free_gpus;
    for (int l = CURVE_MAX_LEVELS - 1; l >= 0; l--)
        if ((1 << l) <= lim && row->cell[l] > 0)
            return 1 << l;
    return 0;
}

static double tput_runnable(const curve_row *row, int g)
{
    for (int l = 0; l < CURVE_MAX_LEVELS; l++)
        if ((1 << l) == g)
            return row->cell[l];
    return 0;
}

static int64_t fastest(const curve_row *row, int top, int runnable,
                       double work, int64_t now, int slot, const avail *F,
                       resv *out)
{
    if (out)
        resv_clear(out);
    if (top <= 0)
        return -1;
    double rem = work * (1.0 + MSS_MARGIN);
    ivals iv;
    ivals_make(&iv, F, now, INT64_MAX);
    int64_t res = -1;
    for (int k = 0; k < iv.n; k++) {
        int a = runnable ? fit_runnable(row, top, iv_free(&iv, k))
                         : fit(row, top, iv_free(&iv, k));
        if (a == 0)
            continue;
        double tp = runnable ? tput_runnable(row, a) : curve_tput(row, a);
        if (iv_b(&iv, k) == INT64_MAX || (double)(iv_b(&iv, k) - iv_a(&iv, k)) * tp >= rem) {
            int64_t e;
            finish_at(iv_a(&iv, k), rem, tp, slot, &res, &e);
            if (out) {
                push(out, iv_a(&iv, k), e, a);
                out->real_end = res;
                out->end = e;
            }
            break;
        }
        rem -= (double)(iv_b(&iv, k) - iv_a(&iv, k)) * tp;
        if (out)
            push(out, iv_a(&iv, k), iv_b(&iv, k), a);
    }
    if (res < 0 && out)
        resv_clear(out);
    return res;
}

int64_t mss_fastest(const curve_row *row, int max_gpus, double work,
                    int64_t now, int slot, const avail *F, resv *out)
{
    return fastest(row, curve_max_usable(row, max_gpus), 0, work, now, slot,
                   F, out);
}

int64_t mss_fastest_runnable(const curve_row *row, int cap, double work,
                             int64_t now, int slot, const avail *F,
                             resv *out)
{
    return fastest(row, cap, 1, work, now, slot, F, out);
}

int64_t mss_earliest_finish(const curve_row *row, int max_gpus, double work,
                            int64_t now, int slot, const avail *F)
{
    return mss_fastest(row, max_gpus, work, now, slot, F, NULL);
}
