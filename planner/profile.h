/*
 * profile.h: the capacity profile: free GPUs over future time, as a step
 * function over sorted breakpoints. free[i] holds on [t[i], t[i+1]); the
 * last value holds forever after t[n-1]. Admitted jobs' reservations are
 * subtracted from it; the MSS planner reads it.
 */
#ifndef EF_PROFILE_H
#define EF_PROFILE_H

#include <stdint.h>

typedef struct profile {
    int64_t *t;
    int *free;
    int n;
    int cap;
} profile;

/* Start with 'total' GPUs free from 'now' on. */
void profile_init(profile *p, int64_t now, int total);
void profile_free(profile *p);
void profile_copy(profile *dst, const profile *src);

/* Free GPUs at time x (x >= t[0]). */
int profile_at(const profile *p, int64_t x);

/* Add 'delta' free GPUs over [a, b) (b may be INT64_MAX), inserting
 * breakpoints as needed, then merge equal neighbours. */
void profile_add(profile *p, int64_t a, int64_t b, int delta);

/* Smallest free value over [a, b). */
int profile_min(const profile *p, int64_t a, int64_t b);

#endif
