/*
 * retain.h: retention of efplan serve (ret_*): the store does not grow
 * forever.
 *
 * - Jobs that ended (done, failed, cancelled, rejected, or planned-done
 *   in a service without a backend) longer ago than 'keep' (efplan serve
 *   --keep, default 30d) are deleted with their events and attempts
 *   (store_prune_jobs); so are the service's own events older than that.
 *   A job with an attempt the loop has not ended is kept. A job's "ended"
 *   time is its last change of state (the store's 'updated').
 * - The plan history keeps its newest 'keep_plans' versions (efplan serve
 *   --keep-plans, default 100; the current plan is never pruned), and the
 *   snapshot directory (DB.plans/: POST /v1/replan and the daily re-plan)
 *   its newest 'keep_plans' files.
 *
 * Off the submission path: a thread of its own (ret_start) runs a step
 * every 'period' wall seconds (efplan serve: a minute of the service's
 * clock, at least one wall second); a step deletes in batches of 'batch' jobs,
 * one store transaction each (a kill leaves whole batches), taking the
 * service's lock for one batch at a time, so a submission waits for one
 * batch at most. Times are the service's clock (svc_now). What a step
 * pruned is logged in one line through 'say'.
 */
#ifndef EF_RETAIN_H
#define EF_RETAIN_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/htime.h"
#include "service/store.h"
#include "service/svc.h"

#define RET_KEEP_DEFAULT (30 * 86400)
#define RET_KEEP_PLANS_DEFAULT 100
#define RET_BATCH_DEFAULT 200

typedef struct ret_opts {
    int64_t keep;        /* seconds an ended job is kept (0: forever) */
    int keep_plans;      /* plan versions and snapshot files kept (0: all) */
    int batch;           /* jobs per transaction (0: RET_BATCH_DEFAULT) */
    double period;       /* wall seconds between steps (0: 1) */
    void (*say)(void *arg, const char *line); /* NULL: silent */
    void *arg;
    ef_ht_zone zone;     /* how the log shows times (ef_ht_at) */
} ret_opts;

typedef struct ret ret;

/* ret_step: one pass at service time 'now': batches until nothing is
 * left to prune, then the plan history and the snapshot files. *p (may
 * be NULL) gets what it deleted, plus p->plans counting the snapshot
 * files too; logs one line when it deleted anything. Takes svc_lock per
 * batch: call without it. Errors: the store's (what committed stays). */
int ret_step(svc *s, const ret_opts *o, int64_t now, store_pruned *p,
             ef_err *e);

/* Start the thread (nothing to do when keep and keep_plans are 0: *R
 * NULL). Errors: EF_E_INTERNAL when the thread cannot start. */
int ret_start(ret **R, svc *s, const ret_opts *o, ef_err *e);
/* Stop it (after the step under way); NULL: nothing. */
void ret_stop(ret *R);

/* A retention period as a person writes it: "30d", "12h", "90m", "45s",
 * "forever" (0), into dst (n bytes; 32 suffice). Returns dst. */
const char *ret_keep_text(int64_t secs, char *dst, size_t n);
/* Parse one: N followed by s, m, h, d or w (also combined: "1d12h"), a
 * bare number of seconds, "forever" or "0" (none): 0 with *secs, or -1
 * (malformed, or over 100 years). */
int ret_keep_parse(const char *arg, int64_t *secs);

#endif
