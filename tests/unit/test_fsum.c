/*
 * test_fsum.c: ef_fsum_repeat and ef_fsum_add (common/fsum.h) give the
 * bits the plain loop of additions gives: seeded random cases over every
 * scale, sign and run shape, ties (amounts that are odd multiples of half
 * an ulp), binade crossings and fixed points; long runs are checked
 * against splitting them (the same value however the additions are cut
 * into calls) and against exact integer sums.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "common/fsum.h"

static uint64_t rs = 88172645463325252ULL;

static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

static double unit(void)
{
    return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0);
}

static double naive(double x, const ef_fsum_run *r, int n, int64_t reps)
{
    for (int64_t i = 0; i < reps; i++)
        for (int k = 0; k < n; k++)
            for (int64_t c = 0; c < r[k].count; c++)
                x += r[k].add;
    return x;
}

static void same_bits(double got, double want, const char *what, int i)
{
    if (memcmp(&got, &want, sizeof got) != 0)
        fail_msg("case %d (%s): got %a, the loop gives %a", i, what, got,
                 want);
}

/* 30,000 random cases against the loop. */
static void test_random_against_loop(void **state)
{
    (void)state;
    for (int it = 0; it < 30000; it++) {
        ef_fsum_run r[3];
        int n = 1 + (int)(rnd() % 3);
        double sign = rnd() % 2 ? 1 : -1;
        double scale = ldexp(1.0, (int)(rnd() % 60) - 20);
        double x = unit() * scale * (rnd() % 4 == 0 ? -1 : 1);
        int kind = (int)(rnd() % 6);
        if (rnd() % 5 == 0)
            x = 0;
        for (int k = 0; k < n; k++) {
            double c;
            int e = ilogb(x == 0 ? 1 : x);
            switch (kind) {
            case 0: c = unit() * scale * 1e-3; break;
            case 1: c = unit() * scale * 1e-12; break;   /* near stagnation */
            case 2: /* odd multiples of half an ulp of x: ties */
                c = ldexp((double)(rnd() % 64) + 0.5,
                          e - 52 - (int)(rnd() % 3));
                break;
            case 3: c = unit() * scale; break;
            case 4: c = ldexp(1.0, (int)(rnd() % 40) - 30); break;
            default: c = floor(unit() * 100); break;    /* integers */
            }
            if (rnd() % 7 == 0)
                c = 0;
            r[k].add = sign * c;
            r[k].count = rnd() % 4 == 0 ? (int64_t)(rnd() % 40)
                                        : 1 + (int64_t)(rnd() % 3);
        }
        int64_t reps = rnd() % 2 ? (int64_t)(rnd() % 100)
                                 : (int64_t)(rnd() % 3000);
        same_bits(ef_fsum_repeat(x, r, n, reps), naive(x, r, n, reps),
                  "repeat", it);
        ef_fsum_run one = {r[0].add, 1};
        same_bits(ef_fsum_add(x, r[0].add, reps), naive(x, &one, 1, reps),
                  "add", it);
    }
}

/* The shapes the planner uses: work left falling by (S - overhead) x
 * throughput per slot in a period of S slots, GPU-seconds growing. */
static void test_planner_shapes(void **state)
{
    (void)state;
    ef_fsum_run per[3] = {{-(60 - 49.0) * 0.37, 1},
                          {-(60 - 12.0) * 0.37, 1},
                          {-(60 - 2.0) * 0.37, 58}};
    same_bits(ef_fsum_repeat(1e9, per, 3, 20000),
              naive(1e9, per, 3, 20000), "period", 0);
    same_bits(ef_fsum_add(12252704.0, -60 * 10.98694501596299, 18000),
              naive(12252704.0, &(ef_fsum_run){-60 * 10.98694501596299, 1},
                    1, 18000), "work", 1);
    /* integer sums stay exact below 2^53 */
    assert_true(ef_fsum_add(0, 480.0, 1000000000000LL) == 480e12);
    ef_fsum_run gs[3] = {{480, 1}, {120, 1}, {1920, 1}};
    assert_true(ef_fsum_repeat(60, gs, 3, 1000000000LL) ==
                60 + 2520e9);
}

/* Long runs (where the loop would take hours): however they are cut
 * into calls, the value is the same, and past 2^53 the rounding shows. */
static void test_long_runs_split(void **state)
{
    (void)state;
    for (int it = 0; it < 200; it++) {
        double x = unit() * ldexp(1.0, (int)(rnd() % 50));
        double c = (rnd() % 2 ? 1 : -1) * unit() *
                   ldexp(1.0, -(int)(rnd() % 20));
        int64_t n = (int64_t)(rnd() % 1000000000000LL);
        int64_t a = (int64_t)(rnd() % (uint64_t)(n + 1));
        double whole = ef_fsum_add(x, c, n);
        double cut = ef_fsum_add(ef_fsum_add(x, c, a), c, n - a);
        same_bits(whole, cut, "split", it);
    }
    /* 2^53 + 1 is a tie, rounded to even: 2^53, a fixed point */
    double big = ldexp(1.0, 53);
    same_bits(ef_fsum_add(big, 1.0, 1000000000000LL), big, "fixed", 0);
    /* 2^53 + 3 is a tie too, rounded to 2^53 + 4: +4 per addition */
    same_bits(ef_fsum_add(big, 3.0, 1000), big + 4000, "ties", 0);
    same_bits(ef_fsum_add(big, 3.0, 1000), naive(big,
              &(ef_fsum_run){3.0, 1}, 1, 1000), "ties", 1);
    /* a stretch that crosses many binades */
    same_bits(ef_fsum_add(1.0, 1e-3, 100000), naive(1.0,
              &(ef_fsum_run){1e-3, 1}, 1, 100000), "binades", 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_loop),
        cmocka_unit_test(test_planner_shapes),
        cmocka_unit_test(test_long_runs_split),
    };
    return cmocka_run_group_tests_name("fsum", tests, NULL, NULL);
}
