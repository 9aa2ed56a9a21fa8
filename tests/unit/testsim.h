/*
 * testsim.h: what the simulator test programs share (after testplan.h):
 * toy curve sets parsed from inline CSV, loading a queue from CSV text,
 * seeded generated queues, running one simulation, and finding a job by
 * id. Every helper fails the current test (cmocka) on an error.
 */
#ifndef EF_TESTSIM_H
#define EF_TESTSIM_H

#include <string.h>

#include "model/cluster.h"
#include "model/jobs.h"
#include "simulator/gen.h"
#include "simulator/sim.h"
#include "testplan.h"

/* Parse n toy models (names[i] from csv[i]) into cs, backed by models[]
 * (n entries, free with ts_toy_free). Returns 0, or -1 on a parse error. */
static inline int ts_toy(curve_set *cs, curve_model *models, int n,
                         const char *const *names, const char *const *csv)
{
    ef_err e;
    for (int i = 0; i < n; i++) {
        char path[64];
        snprintf(path, sizeof path, "%s.csv", names[i]);
        if (curve_parse_csv(&models[i], names[i], path, csv[i],
                            strlen(csv[i]), &e) != EF_OK)
            return -1;
    }
    cs->models = models;
    cs->nmodels = n;
    cs->dir = (char *)"toy";
    return 0;
}

static inline void ts_toy_free(curve_model *models, int n)
{
    for (int i = 0; i < n; i++)
        curve_model_free(&models[i]);
}

/* Load a queue from CSV text and resolve it against cs. */
static inline void ts_load(job_queue *q, const char *csv, const curve_set *cs)
{
    ef_err e;
    assert_int_equal(queue_parse_csv(q, "t.csv", csv, strlen(csv), &e), EF_OK);
    assert_int_equal(queue_resolve(q, cs, &e), EF_OK);
}

/* A generated queue on the bundled A100 curves (g_curves, tp_setup). */
static inline void ts_gen(job_queue *q, const gen_opts *go)
{
    ef_buf b = {0};
    ef_err e;
    assert_int_equal(gen_trace(go, &g_curves, &b, &e), EF_OK);
    ts_load(q, b.s, &g_curves);
    free(b.s);
}

/* Simulate q on cluster 'cl' with policy 'pol' and options o. */
static inline void ts_run(sim *s, const job_queue *q, const char *cl,
                          const char *pol, const sim_opts *o)
{
    cluster c;
    ef_err e;
    assert_int_equal(cluster_from_arg(&c, cl, &e), EF_OK);
    const sim_policy *p = sim_policy_find(pol);
    assert_non_null(p);
    if (sim_run(s, q, &c, p, o, &e) != EF_OK)
        fail_msg("%s: %s", pol, e.msg);
}

/* The simulated job with this id (fails the test if there is none). */
static inline const sim_job *ts_job(const sim *s, const char *id)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->jobs[i].in->id, id) == 0)
            return &s->jobs[i];
    fail_msg("no job %s", id);
    return NULL;
}

#endif
