/* test_hold.c: the loop's hold rule (service/hold.h): which running jobs
 * whose GPUs a re-plan changes keep them. Each case is one the loop met
 * in benchmarks/loop_waves.sh and loop_vs_blind.sh, on one node of 8
 * GPUs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "service/hold.h"

/* GPUs [from, from + n) of node 0 (n == 0: nothing). */
typedef struct gp {
    int node[8], gpu[8];
    placement p;
} gp;

static const placement *gpus(gp *g, int from, int n)
{
    for (int k = 0; k < n; k++) {
        g->node[k] = 0;
        g->gpu[k] = from + k;
    }
    g->p = (placement){n, n ? g->node : NULL, n ? g->gpu : NULL, 0};
    return &g->p;
}

/* A running admitted job on 'place' the plan moves to 'want'. */
static hold_job running(const placement *place, const placement *want,
                        int run_seen)
{
    return (hold_job){1, 1, place, want, 0, 0, 0, 0, run_seen, 1};
}

/* A job not running (idle) the plan starts on 'want'. */
static hold_job idle(const placement *want, int need)
{
    static const placement none = {0, NULL, NULL, 0};
    return (hold_job){0, 1, &none, want, need, 0, 0, 0, 0, need > 0};
}

/* An attempt that has not shown progress is not stopped for another
 * job's surplus (the other waits), but is for a promise. */
static void test_before_progress(void **state)
{
    (void)state;
    gp a0, a1, b1;
    hold_job j[2] = {running(gpus(&a0, 0, 4), gpus(&a1, 0, 2), 0),
                     idle(gpus(&b1, 2, 2), 0)};
    char hold[2];
    hold_rule(j, 2, hold);
    assert_int_equal(hold[0], 1);
    assert_int_equal(hold_taker(j, 2, hold, 0), -1);
    j[1].need = 2; /* b's reservation takes them */
    hold_rule(j, 2, hold);
    assert_int_equal(hold[0], 0);
    assert_int_equal(hold_taker(j, 2, hold, 0), 1);
}

/* A shrink or a move whose GPUs nobody takes is not made; a growth the
 * job must make is. */
static void test_nobody_takes(void **state)
{
    (void)state;
    gp a0, a1, c0, c1, d0, d1;
    hold_job j[3] = {running(gpus(&a0, 0, 4), gpus(&a1, 0, 2), 1),
                     running(gpus(&c0, 4, 2), gpus(&c1, 6, 2), 1),
                     running(gpus(&d0, 6, 2), gpus(&d1, 4, 4), 1)};
    char hold[3];
    /* c moves onto d's GPUs and d grows onto c's: neither must, so both
     * stay (each would wait for the other), and a's shrink frees GPUs
     * nobody takes */
    hold_rule(j, 3, hold);
    assert_int_equal(hold[0], 1);
    assert_int_equal(hold[1], 1);
    assert_int_equal(hold[2], 1);
    /* d's promise needs its growth: it is made, and c, whose GPUs d
     * takes (d's reservation), gives way */
    j[2].must_change = 1;
    j[2].need = 4;
    hold_rule(j, 3, hold);
    assert_int_equal(hold[0], 1);
    assert_int_equal(hold[1], 0);
    assert_int_equal(hold[2], 0);
    assert_int_equal(hold_taker(j, 3, hold, 1), 2);
}

/* An admitted job that has progressed is not stopped for another's
 * surplus; a best-effort one is (the plan's choice between two gains);
 * one that ends sooner than its restart would take is not, even for a
 * promise. */
static void test_surplus_and_promise(void **state)
{
    (void)state;
    gp a0, a1, b1;
    hold_job j[2] = {running(gpus(&a0, 0, 8), gpus(&a1, 0, 4), 1),
                     idle(gpus(&b1, 4, 4), 0)};
    char hold[2];
    hold_rule(j, 2, hold);
    assert_int_equal(hold[0], 1);
    j[0].admitted = 0; /* best-effort */
    hold_rule(j, 2, hold);
    assert_int_equal(hold[0], 0);
    j[0].admitted = 1;
    j[1].need = 4;
    j[0].ends_soon = 1;
    hold_rule(j, 2, hold);
    assert_int_equal(hold[0], 1);
    j[0].ends_soon = 0;
    hold_rule(j, 2, hold);
    assert_int_equal(hold[0], 0);
}

/* A job the plan cannot keep where it runs (a drained node) is always
 * changed, and a job not held whose new GPUs a held job keeps stays
 * where it is instead of being stopped to wait. */
static void test_must_and_blocked(void **state)
{
    (void)state;
    gp a0, a1, b0, b1;
    hold_job j[2] = {running(gpus(&a0, 0, 2), gpus(&a1, 2, 2), 0),
                     running(gpus(&b0, 2, 2), gpus(&b1, 4, 4), 1)};
    j[0].must = 1;
    j[0].must_change = 1;
    char hold[2];
    /* b grows for the gain (must_change) onto free GPUs: made; a must
     * move onto b's: b gives way only for a promise (a's need) */
    j[1].must_change = 1;
    hold_rule(j, 2, hold);
    assert_int_equal(hold[0], 0);
    assert_int_equal(hold[1], 0);
    /* b's growth would take GPUs 4-7, and c stays on them (no promise
     * takes c's): b stays too */
    gp c0, c1;
    hold_job k[3] = {j[0], j[1], running(gpus(&c0, 4, 4), gpus(&c1, 6, 2),
                                         1)};
    k[0].want = gpus(&a1, 0, 2); /* a moves elsewhere */
    char h3[3];
    hold_rule(k, 3, h3);
    assert_int_equal(h3[2], 1);
    assert_int_equal(h3[1], 1);
    assert_int_equal(h3[0], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_before_progress),
        cmocka_unit_test(test_nobody_takes),
        cmocka_unit_test(test_surplus_and_promise),
        cmocka_unit_test(test_must_and_blocked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
