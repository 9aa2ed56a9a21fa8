/*
 * testplan.h: what the planner test programs share: the bundled A100
 * curves loaded once per group (tp_setup / tp_teardown, in g_curves) and
 * a small seeded generator (tp_seed / tp_rnd) so random instances are the
 * same on every machine.
 */
#ifndef EF_TESTPLAN_H
#define EF_TESTPLAN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/curve.h"

static curve_set g_curves;

static inline int tp_setup(void **state)
{
    (void)state;
    const char *root = getenv("EFPLAN_ROOT");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/inputs/curves/A100", root ? root : ".");
    ef_err e;
    return curve_set_load(&g_curves, dir, &e) == EF_OK ? 0 : -1;
}

static inline int tp_teardown(void **state)
{
    (void)state;
    curve_set_free(&g_curves);
    return 0;
}

static uint64_t tp_rng_state;

static inline void tp_seed(uint64_t s)
{
    tp_rng_state = s;
}

static inline uint32_t tp_rnd(void)
{
    tp_rng_state = tp_rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(tp_rng_state >> 33);
}

#endif
