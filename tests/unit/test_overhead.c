/*
 * test_overhead.c: ovh_ref_slots (model/overhead.h) against the slot
 * loop it stands for: for every start index, length, restart period and
 * previous slot, the runs (head once, body 'reps' times, tail once)
 * expand to the kind the loop gives each slot (a restart at every
 * positive multiple of the period, uncached after a restart, else
 * cached), and the last slot's restart flag matches.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/overhead.h"

/* Expand runs into kinds[at..]; returns the new end. */
static int64_t expand(const ovh_ref_run *r, int n, int64_t reps,
                      ovh_ref_kind *kinds, int64_t at, int64_t cap)
{
    for (int64_t i = 0; i < reps; i++)
        for (int k = 0; k < n; k++) {
            assert_true(r[k].count >= 1);
            for (int64_t c = 0; c < r[k].count; c++) {
                assert_true(at < cap);
                kinds[at++] = r[k].kind;
            }
        }
    return at;
}

static void test_against_loop(void **state)
{
    (void)state;
    enum { CAP = 200 };
    ovh_ref_kind want[CAP], got[CAP];
    for (int64_t every = 1; every <= 9; every++)
        for (int64_t k0 = 0; k0 <= 40; k0++)
            for (int64_t n = 1; n <= 60; n++)
                for (int prev = 0; prev <= 1; prev++) {
                    int pr = prev, last = 0;
                    for (int64_t i = 0; i < n; i++) {
                        int64_t k = k0 + i;
                        int restart = k > 0 && k % every == 0;
                        want[i] = restart ? OVH_REF_RESTART
                                  : pr    ? OVH_REF_FRESH
                                          : OVH_REF_CACHED;
                        pr = restart;
                        last = restart;
                    }
                    ovh_ref_seq s;
                    ovh_ref_slots(k0, n, every, prev, &s);
                    int64_t at = expand(s.head, s.nhead, 1, got, 0, CAP);
                    at = expand(s.body, s.nbody, s.reps, got, at, CAP);
                    at = expand(s.tail, s.ntail, 1, got, at, CAP);
                    assert_int_equal(at, n);
                    for (int64_t i = 0; i < n; i++)
                        if (got[i] != want[i])
                            fail_msg("every %lld k0 %lld n %lld prev %d: "
                                     "slot %lld is kind %d, expected %d",
                                     (long long)every, (long long)k0,
                                     (long long)n, prev, (long long)i,
                                     got[i], want[i]);
                    assert_int_equal(s.last_restart, last);
                }
}

/* A long stretch is a few runs, whatever its length. */
static void test_long_stretch(void **state)
{
    (void)state;
    ovh_ref_seq s;
    ovh_ref_slots(7, 1000000000000LL, 60, 0, &s);
    assert_true(s.nhead <= 2 && s.nbody <= 3 && s.ntail <= 3);
    assert_int_equal(s.reps, (1000000000000LL - 53) / 60);
    assert_int_equal(s.body[0].kind, OVH_REF_RESTART);
    assert_int_equal(s.body[1].kind, OVH_REF_FRESH);
    assert_int_equal(s.body[2].count, 58);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_loop),
        cmocka_unit_test(test_long_stretch),
    };
    return cmocka_run_group_tests_name("overhead", tests, NULL, NULL);
}
