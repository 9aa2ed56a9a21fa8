/* avail.c: free GPUs over time, a step function (see avail.h). */
#include "planner/avail.h"

#include <string.h>

#include "common/err.h"

void avail_init(avail *p, int64_t now, int total)
{
    p->cap = 16;
    p->t = ef_malloc((size_t)p->cap * sizeof *p->t);
    p->free = ef_malloc((size_t)p->cap * sizeof *p->free);
    p->n = 1;
    p->t[0] = now;
    p->free[0] = total;
}

void avail_free(avail *p)
{
    free(p->t);
    free(p->free);
    memset(p, 0, sizeof *p);
}

void avail_copy(avail *dst, const avail *src)
{
    if (dst->cap < src->n) {
        dst->cap = src->cap;
        dst->t = ef_realloc(dst->t, (size_t)dst->cap * sizeof *dst->t);
        dst->free = ef_realloc(dst->free, (size_t)dst->cap * sizeof *dst->free);
    }
    memcpy(dst->t, src->t, (size_t)src->n * sizeof *src->t);
    memcpy(dst->free, src->free, (size_t)src->n * sizeof *src->free);
    dst->n = src->n;
}

/* Index of the step containing x: the last i with t[i] <= x. */
static int find(const avail *p, int64_t x)
{
    int lo = 0, hi = p->n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (p->t[mid] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int avail_at(const avail *p, int64_t x)
{
    ef_assert(x >= p->t[0]);
    return p->free[find(p, x)];
}

/* Ensure a breakpoint at x (x > t[0]); return its index. */
static int split(avail *p, int64_t x)
{
    int i = find(p, x);
    if (p->t[i] == x)
        return i;
    if (p->n == p->cap) {
        p->cap *= 2;
        p->t = ef_realloc(p->t, (size_t)p->cap * sizeof *p->t);
        p->free = ef_realloc(p->free, (size_t)p->cap * sizeof *p->free);
    }
    memmove(p->t + i + 2, p->t + i + 1, (size_t)(p->n - i - 1) * sizeof *p->t);
    memmove(p->free + i + 2, p->free + i + 1,
            (size_t)(p->n - i - 1) * sizeof *p->free);
    p->t[i + 1] = x;
    p->free[i + 1] = p->free[i];
    p->n++;
    return i + 1;
}

/* Remove breakpoint i (i > 0): piece i joins piece i - 1. */
static void join(avail *p, int i)
{
    memmove(p->t + i, p->t + i + 1, (size_t)(p->n - i - 1) * sizeof *p->t);
    memmove(p->free + i, p->free + i + 1,
            (size_t)(p->n - i - 1) * sizeof *p->free);
    p->n--;
}

void avail_add(avail *p, int64_t a, int64_t b, int delta)
{
    if (a < p->t[0])
        a = p->t[0];
    if (b <= a || delta == 0)
        return;
    int ia = split(p, a);
    int ib = b == INT64_MAX ? p->n : split(p, b);
    for (int i = ia; i < ib; i++)
        p->free[i] += delta;
    /* merge equal neighbours: no two were equal before (every change
     * comes through here), and the pieces in [ia, ib) moved together, so
     * only the two edges of the range can have become equal */
    if (ib < p->n && p->free[ib] == p->free[ib - 1])
        join(p, ib);
    if (ia > 0 && p->free[ia] == p->free[ia - 1])
        join(p, ia);
}

int avail_min(const avail *p, int64_t a, int64_t b)
{
    int i = find(p, a);
    int m = p->free[i];
    for (i++; i < p->n && p->t[i] < b; i++)
        if (p->free[i] < m)
            m = p->free[i];
    return m;
}

int64_t avail_next_rise(const avail *p, int64_t x)
{
    int i = find(p, x);
    int f = p->free[i];
    for (i++; i < p->n; i++)
        if (p->free[i] > f)
            return p->t[i];
    return INT64_MAX;
}
