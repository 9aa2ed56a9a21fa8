/*
 * avail.h: the GPUs still available over future time (avail_*), as a
 * step function over sorted breakpoints. free[i] holds on [t[i], t[i+1]); the
 * last value holds forever after t[n-1]. No two neighbouring pieces hold
 * the same value (the pieces a planner scans are the profile's changes). Admitted jobs' reservations are
 * subtracted from it; the MSS planner reads it.
 */
#ifndef EF_AVAIL_H
#define EF_AVAIL_H

#include <stdint.h>

typedef struct avail {
    int64_t *t;
    int *free;
    int n;
    int cap;
} avail;

/* Start with 'total' GPUs free from 'now' on. */
void avail_init(avail *p, int64_t now, int total);
void avail_free(avail *p);
void avail_copy(avail *dst, const avail *src);

/* Free GPUs at time x (x >= t[0]). */
int avail_at(const avail *p, int64_t x);

/* Add 'delta' free GPUs over [a, b) (b may be INT64_MAX), inserting
 * breakpoints as needed, then merge equal neighbours. */
void avail_add(avail *p, int64_t a, int64_t b, int delta);

/* Smallest free value over [a, b). */
int avail_min(const avail *p, int64_t a, int64_t b);

/* The first breakpoint after x where more GPUs are free than at x
 * (x >= t[0]); INT64_MAX when none comes. */
int64_t avail_next_rise(const avail *p, int64_t x);

#endif
