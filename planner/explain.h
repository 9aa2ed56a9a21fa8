/*
 * explain.h: why a job of a plan got what it got (efplan explain, and
 * efplan serve's GET /v1/jobs/{id}/explain). Prefix xpl_.
 *
 * From a plan file (planio.h) and, for a rejected job, the curves it
 * names, xpl_build gathers for one job:
 *   - its decision, deadline, planned end and slack, at-risk reason;
 *   - the intervals where it held GPUs, compressed where nothing changes:
 *     how many of them its reservation (minimum satisfactory share) held
 *     and how many were surplus, and what the other jobs reserved and
 *     held then (the plan file's "reserved" member; unknown, -1, for a
 *     file that lacks it);
 *   - rejected: the admitted jobs promised GPUs between its submit time
 *     and its deadline (reserved there; in a file without "reserved":
 *     holding any), each with the GPU-seconds it holds and reserves
 *     there, by the amount promised (reserved when known, else held;
 *     ties by id), and what it would need alone on the cluster: its
 *     minimum satisfactory share by the planner's own MSS (plan_alone)
 *     and its fastest finish alone.
 * xpl_text says it in short sentences a person acts on; xpl_json writes
 * the same as one JSON object (format efplan-explain, keys sorted) and
 * xpl_parse reads it back (efplan explain --server prints the server's
 * answer with xpl_text). One field table per object owns that format.
 *
 * Ownership: an xpl's strings and arrays live in its arena; free the
 * whole with xpl_free.
 */
#ifndef EF_EXPLAIN_H
#define EF_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/htime.h"
#include "common/jfield.h"
#include "model/curve.h"
#include "planner/mss.h"
#include "planner/planio.h"

/* An interval [start, end) where the job held GPUs and nothing in the
 * numbers below changed. */
typedef struct xpl_iv {
    int64_t start, end;
    int gpus;            /* the job's allocation */
    int reserved;        /* of them, its reservation's (the rest surplus);
                            -1: the plan file does not say */
    int others_reserved; /* GPUs other admitted jobs' reservations held;
                            -1: the plan file does not say */
    int others_held;     /* GPUs other jobs held (reserved or not) */
} xpl_iv;

/* An admitted job holding GPUs in a rejected job's window. */
typedef struct xpl_holder {
    const char *id;
    int64_t deadline;
    double gpu_seconds;           /* held in the window */
    double reserved_gpu_seconds;  /* reserved in the window; NaN unknown */
} xpl_holder;

typedef struct xpl {
    const char *id, *model;
    int decision;               /* plan_decision */
    int at_risk;
    const char *reason;         /* the plan's reason; NULL none */
    int64_t now;                /* the plan's now */
    int cluster_gpus, slot_seconds;
    int64_t submit_time;
    int64_t deadline;           /* -1: none (best-effort) */
    int64_t start, planned_end; /* -1: never */
    int64_t slack;              /* PLAN_NO_SLACK: none */
    int64_t earliest_feasible_deadline; /* -1: none */
    double gpu_seconds;         /* its allocation over the plan */
    double reserved_gpu_seconds; /* of it reserved; NaN unknown */
    int niv;
    xpl_iv *iv;                 /* in time order */
    int nresv;
    seg *resv;                  /* its reservation over time (admitted,
                                   known): where reserved > 0, merged */
    /* rejected: the window [window_start, window_end) from its submit
     * time (the plan's now if later) to its deadline; -1, -1 otherwise */
    int64_t window_start, window_end;
    double window_gpu_seconds;  /* the cluster's GPU-seconds there */
    double window_promised;     /* the holders' amounts (reserved when
                                   known, else held), summed */
    int nholders;
    xpl_holder *holders;
    /* rejected: alone on the cluster (plan_alone); has_alone 0: not
     * computed */
    int has_alone;
    int alone_ok;               /* a reservation meets the deadline */
    int nneed;
    seg *need;                  /* that reservation (alone_ok) */
    double need_gpu_seconds;
    int64_t fastest_alone;      /* -1: it cannot run */
    const char *explanation;    /* xpl_json: the text, in UTC */
    jf_arena arena;
} xpl;

/*
 * xpl_build: explain job 'id' of plan 'd' into *x (zeroed first). The
 * curves for a rejected job's needs: 'cs' when not NULL, else loaded
 * from 'curves' when not NULL, else from the name the plan records.
 * Errors (EF_ERR, *x empty): an id the plan does not hold (EF_E_INPUT:
 * "no job \"ID\" in PLAN (did you mean \"X\"?)", 'label' naming the
 * plan), curves that cannot be read or do not fit the queue (their
 * error, prefixed by where the name came from). x borrows nothing from
 * d: free it with xpl_free.
 */
int xpl_build(xpl *x, const plan_doc *d, const char *label, const char *id,
              const curve_set *cs, const char *curves, ef_err *e);

/*
 * xpl_build_rejected: explain a job that plan 'd' does not hold because
 * it was rejected (efplan serve keeps rejected jobs out of its plan): the
 * job object 'job_json' (efplan-jobs, submit_time and deadline set), its
 * 'reason' (NULL: none) and 'earliest' feasible deadline (-1: none), as
 * the admission answer gave them. The holders are d's admitted jobs in
 * its window, what it needs alone is plan_alone's on d's queue plus this
 * job (curves 'cs'). Errors: a job object the queue reader refuses,
 * curves that do not fit it (EF_E_INPUT); then *x is empty.
 */
int xpl_build_rejected(xpl *x, const plan_doc *d, const char *label,
                       const char *job_json, const char *reason,
                       int64_t earliest, const curve_set *cs, ef_err *e);

/* The explanation of x as lines of text (heap, NUL-terminated; *len its
 * length when not NULL): times as zone 'z' shows them (ef_ht_fmt; Unix
 * seconds for a plan off the wall clock), durations by ef_ht_dur. At
 * most 'max_iv' intervals are listed (0: all), the rest counted. */
char *xpl_text(const xpl *x, ef_ht_zone z, int max_iv, size_t *len);

/* x as one JSON object (heap, ends with a newline): format
 * efplan-explain, version 1, every member above with times in Unix
 * seconds and "explanation" the text in UTC, every interval. */
char *xpl_json(const xpl *x, size_t *len);

/* Read xpl_json's text (len bytes; 'path' names it in messages) into
 * *x, checking every member. EF_E_INPUT on any problem; then *x is
 * empty. Free with xpl_free. */
int xpl_parse(xpl *x, const char *path, const char *buf, size_t len,
              ef_err *e);

void xpl_free(xpl *x);

#endif
