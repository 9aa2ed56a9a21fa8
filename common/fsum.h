/*
 * fsum.h: repeated floating-point additions in closed form (ef_fsum_*).
 *
 * A loop that adds the same amounts to a double over and over (work left
 * falling by throughput x seconds every slot, GPU-seconds growing by
 * GPUs x seconds) gives, after n rounds, a value that depends on the
 * rounding of every single addition. ef_fsum_repeat returns exactly that
 * value, bit for bit, in time that depends on how many binades the value
 * crosses (at most about 2,100), not on n: so a loop can jump over a
 * stretch of a million identical slots and still give the bytes stepping
 * through them would give.
 *
 * Why it is exact: within one binade [2^e, 2^(e+1)] every double is a
 * multiple of u = 2^(e-52), and rounding x + c to nearest, ties to even,
 * moves x by an amount that depends only on c and on the last bit of
 * x/u. So one round of additions moves x by an amount that depends only
 * on that bit; after one round the bit repeats with period 1 or 2, and
 * two rounds move x by a constant. ef_fsum_repeat runs the first rounds
 * of each binade with real additions, measures that constant, jumps as
 * far as the binade allows, and goes on with real additions.
 * Assumes IEEE-754 doubles rounded to nearest (C11 Annex F, the default
 * on every platform efplan builds for) and evaluated in double
 * (FLT_EVAL_METHOD 0: x86-64 SSE2, aarch64).
 */
#ifndef EF_FSUM_H
#define EF_FSUM_H

#include <stdint.h>

/* 'count' additions of 'add' in a row. */
typedef struct ef_fsum_run {
    double add;
    int64_t count;
} ef_fsum_run;

/*
 * ef_fsum_repeat: x after 'reps' rounds, each round adding, in order,
 * runs[0].add runs[0].count times, then runs[1].add runs[1].count times,
 * and so on: the value `for (r < reps) for (k < nruns) for (c < count)
 * x += runs[k].add;` gives, bit for bit. Every add must be finite and
 * all of one sign (zeros allowed); counts >= 0; reps >= 0; x finite.
 * No allocation, no errors (a violated precondition is ef_assert).
 */
double ef_fsum_repeat(double x, const ef_fsum_run *runs, int nruns,
                      int64_t reps);

/* ef_fsum_add: x after n additions of c (one run, one round each). */
double ef_fsum_add(double x, double c, int64_t n);

#endif
