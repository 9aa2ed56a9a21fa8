/*
 * testplanio.h: what the plan-file test programs share (after
 * testplan.h): planning a JSON queue on the bundled A100 curves.
 */
#ifndef EF_TESTPLANIO_H
#define EF_TESTPLANIO_H

#include <string.h>

#include "model/cluster.h"
#include "model/jobs.h"
#include "planner/plan.h"
#include "testplan.h"

/* A planned queue: the queue, its cluster, the options and the plan. */
typedef struct tp_planned {
    job_queue q;
    cluster c;
    plan_opts o;
    plan p;
} tp_planned;

/* Default options into t->o (set what a test needs, then tp_plan). */
static inline void tp_opts(tp_planned *t)
{
    memset(t, 0, sizeof *t);
    plan_opts_default(&t->o);
}

/* Plan the JSON queue 'json' (resolved against g_curves) on a cluster of
 * 'nodes' nodes of 8 GPUs with options t->o. EF_OK (free with
 * tp_planned_free) or the first error. */
static inline int tp_plan(tp_planned *t, const char *json, long nodes,
                          ef_err *e)
{
    if (queue_parse_json(&t->q, "q.json", json, strlen(json), e) != EF_OK)
        return EF_ERR;
    if (queue_resolve(&t->q, &g_curves, e) != EF_OK ||
        cluster_init(&t->c, 1, nodes, 8, "cluster", e) != EF_OK ||
        plan_build(&t->p, &t->q, &t->c, &t->o, e) != EF_OK) {
        queue_free(&t->q);
        return EF_ERR;
    }
    return EF_OK;
}

static inline void tp_planned_free(tp_planned *t)
{
    plan_free(&t->p);
    queue_free(&t->q);
}

#endif
