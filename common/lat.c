/* lat.c: latency records (see lat.h). */
#include "common/lat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

void ef_lat_init(ef_lat *l, size_t window)
{
    memset(l, 0, sizeof *l);
    l->window = window;
}

void ef_lat_add(ef_lat *l, double x)
{
    l->count++;
    l->sum += x;
    if (x > l->max)
        l->max = x;
    if (l->window && l->n == l->window) {
        l->v[l->next] = x;
        l->next = (l->next + 1) % l->window;
        return;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        if (l->window && l->cap > l->window)
            l->cap = l->window;
        l->v = ef_realloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = x;
    if (l->window)
        l->next = l->n % l->window;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank q-quantile of n sorted values. */
static double rank(const double *v, size_t n, double q)
{
    size_t k = (size_t)ceil(q * (double)n);
    return v[k ? k - 1 : 0];
}

void ef_lat_summarise(const ef_lat *l, ef_lat_summary *s)
{
    memset(s, 0, sizeof *s);
    s->count = l->count;
    if (l->count == 0)
        return;
    s->mean = l->sum / (double)l->count;
    s->max = l->max;
    double *c = ef_malloc(l->n * sizeof *c);
    memcpy(c, l->v, l->n * sizeof *c);
    qsort(c, l->n, sizeof *c, cmp_double);
    s->p50 = rank(c, l->n, 0.50);
    s->p99 = rank(c, l->n, 0.99);
    s->top = c[l->n - 1];
    free(c);
}

void ef_lat_free(ef_lat *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}
