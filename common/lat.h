/*
 * lat.h: latency records: how long each decision of a kind took (a
 * simulator scheduling point, an admission of efplan serve), and their
 * p50, p99, max and mean.
 *
 * A record keeps every value when its window is 0 (a simulation's points:
 * the run ends), or only the last 'window' values for the quantiles when
 * it is not (a service that runs for months); count, sum and max always
 * cover every value added. Quantiles are nearest-rank over the values
 * kept: the smallest value v such that at least q of them are <= v.
 * Times vary from run to run: what a record says goes to members that
 * readers know not to compare (simulate's "point_us", the service's
 * metrics), never into a plan.
 */
#ifndef EF_LAT_H
#define EF_LAT_H

#include <stddef.h>

typedef struct ef_lat {
    double *v;        /* values kept (a ring when window > 0) */
    size_t n;         /* values kept, <= cap */
    size_t cap;       /* allocated */
    size_t window;    /* 0: keep all; else the last 'window' values */
    size_t next;      /* ring: where the next value goes */
    long count;       /* values added */
    double sum, max;  /* over every value added */
} ef_lat;

typedef struct ef_lat_summary {
    long count;
    double mean, max;  /* over every value added; 0 when count is 0 */
    double p50, p99;   /* over the values kept; 0 when none */
    double top;        /* the largest value kept (max when window is 0) */
} ef_lat_summary;

/* An empty record keeping the last 'window' values (0: all). */
void ef_lat_init(ef_lat *l, size_t window);

/* Add one value (any unit; >= 0). */
void ef_lat_add(ef_lat *l, double x);

/* The summary of what l holds (sorts a copy; l is not changed). */
void ef_lat_summarise(const ef_lat *l, ef_lat_summary *s);

void ef_lat_free(ef_lat *l);

#endif
