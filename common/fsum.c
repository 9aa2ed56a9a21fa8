/* fsum.c: repeated floating-point additions in closed form (see fsum.h). */
#include "common/fsum.h"

#include <math.h>
#include <string.h>

#include "common/err.h"

/* Runs of more additions than this are added by ef_fsum_add. */
#define FSUM_SHORT 8

/* The grid of one binade: magnitudes in [lo, hi] are the multiples of
 * u; 'neg' for negative values (the grid mirrored). */
typedef struct grid {
    int e;          /* binade [2^e, 2^(e+1)] */
    double lo, hi, u;
    int neg;
} grid;

/* 1 if the exact value y + c lies in the grid: same sign as the grid's
 * values, magnitude in [lo, hi]. y must lie in it already (then lo - y
 * and hi - y are exact, by Sterbenz's lemma). */
static int in_grid(const grid *G, double y, double c)
{
    if (!G->neg)
        return c >= G->lo - y && c <= G->hi - y;
    return c >= -G->hi - y && c <= -G->lo - y;
}

/* 1 if the magnitude of y is in [lo + u, hi - u]: a run that ends there,
 * moving monotonically from inside the grid, stayed in it. */
static int well_inside(const grid *G, double y)
{
    double a = fabs(y);
    return (y < 0) == G->neg && a >= G->lo + G->u && a <= G->hi - G->u;
}

/* One round with real additions (long runs by ef_fsum_add, which gives
 * the same bits). With G: returns 1 if every addition's exact value
 * stayed in G's grid (judged conservatively for long runs), else 0. */
static int round_once(double *x, const ef_fsum_run *runs, int nruns,
                      const grid *G)
{
    double y = *x;
    int clean = 1;
    for (int k = 0; k < nruns; k++) {
        double c = runs[k].add;
        int64_t n = runs[k].count;
        if (n <= FSUM_SHORT) {
            for (int64_t i = 0; i < n; i++) {
                if (G && clean && !in_grid(G, y, c))
                    clean = 0;
                y += c;
            }
        } else {
            if (G && clean && !in_grid(G, y, c))
                clean = 0;
            y = ef_fsum_add(y, c, n);
            if (G && clean && !well_inside(G, y))
                clean = 0;
        }
    }
    *x = y;
    return G ? clean : 0;
}

/* Bitwise equality (a fixed point of a round: every later round gives
 * the same bits). */
static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

double ef_fsum_repeat(double x, const ef_fsum_run *runs, int nruns,
                      int64_t reps)
{
    int pos = 0, neg = 0;
    ef_assert(isfinite(x) && reps >= 0 && nruns >= 0);
    for (int k = 0; k < nruns; k++) {
        ef_assert(isfinite(runs[k].add) && runs[k].count >= 0);
        pos |= runs[k].add > 0;
        neg |= runs[k].add < 0;
    }
    ef_assert(!(pos && neg));
    while (reps > 0) {
        if (!isnormal(x)) {
            double y = x;
            (void)round_once(&y, runs, nruns, NULL);
            reps--;
            if (same_bits(x, y))
                return y;
            x = y;
            continue;
        }
        grid G;
        G.e = ilogb(x);
        G.lo = ldexp(1.0, G.e);
        G.hi = 2 * G.lo;
        G.u = ldexp(1.0, G.e - 52);
        G.neg = x < 0;
        /* three rounds with real additions; from the end of the first
         * clean one, two rounds move x by a constant (fsum.h) */
        double a = x, b, d;
        int c1 = round_once(&a, runs, nruns, &G);
        reps--;
        if (same_bits(a, x))
            return a;
        if (!c1 || reps == 0) {
            x = a;
            continue;
        }
        b = a;
        int c2 = round_once(&b, runs, nruns, &G);
        reps--;
        if (!c2 || reps == 0) {
            x = b;
            continue;
        }
        d = b;
        int c3 = round_once(&d, runs, nruns, &G);
        reps--;
        if (!c3 || reps == 0) {
            x = d;
            continue;
        }
        /* in the grid, rounds are monotonic: a == d means a fixed point */
        if (same_bits(a, d))
            return d;
        int64_t step = (int64_t)(fabs(d - a) / G.u); /* exact */
        int64_t m = (int64_t)(fabs(d) / G.u);       /* in [2^52, 2^53] */
        int away = fabs(d) > fabs(a);               /* magnitude grows */
        int64_t room = away ? ((INT64_C(1) << 53) - 1) - m
                            : m - ((INT64_C(1) << 52) + 1);
        int64_t t = room > 0 ? room / step : 0;
        if (t > reps / 2)
            t = reps / 2;
        if (t > 0) {
            m = away ? m + t * step : m - t * step;
            double v = ldexp((double)m, G.e - 52);
            d = G.neg ? -v : v;
            reps -= 2 * t;
        }
        x = d;
    }
    return x;
}

double ef_fsum_add(double x, double c, int64_t n)
{
    ef_fsum_run r = {c, 1};
    return ef_fsum_repeat(x, &r, 1, n);
}
