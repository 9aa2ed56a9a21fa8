/*
 * testgen.h: seeded random oracle instances from the trace generator,
 * shared by test_ilp and test_ilp_relax: tg_queue (a generated queue cut
 * to ~24 slots) and tg_keep_rows (the oracle study's cut). Include after
 * cmocka.h and testplan.h (g_curves).
 */
#ifndef EF_TESTGEN_H
#define EF_TESTGEN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "model/jobs.h"
#include "simulator/gen.h"

/* Keep the header and the first n rows of a generated CSV whose
 * requested duration (column 8) is at most 'maxdur' seconds. */
static inline void tg_keep_rows(ef_buf *b, int n, double maxdur)
{
    ef_buf o = {0};
    char *line = b->s, *nl;
    int row = -1, kept = 0;
    while (line && *line) {
        nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line + 1) : strlen(line);
        const char *f = line;
        for (int k = 0; k < 7 && f; k++) {
            f = memchr(f, ',', len - (size_t)(f - line));
            if (f)
                f++;
        }
        if (row < 0 || (kept < n && f && atof(f) <= maxdur)) {
            ef_buf_printf(&o, "%.*s", (int)len, line);
            kept += row >= 0;
        }
        row++;
        line = nl ? nl + 1 : NULL;
    }
    free(b->s);
    *b = o;
}

/* A generated queue of n jobs, cut to ~24 slots on the returned slot.
 * study != 0: as benchmarks/oracle_study.sh cuts its synthetic instances
 * (40 jobs generated, no best-effort, the first n of at most 5.3 h). */
static inline int tg_queue(job_queue *q, uint64_t seed, int n, double gap,
                           double lo, double hi, int study)
{
    gen_opts go;
    gen_opts_default(&go);
    go.jobs = study ? 40 : n;
    go.mean_gap = gap;
    go.ddl_lo = lo;
    go.ddl_hi = hi;
    go.best_effort = study ? 0 : 0.1;
    go.seed = seed;
    ef_buf b = {0};
    ef_err e;
    assert_int_equal(gen_trace(&go, &g_curves, &b, &e), EF_OK);
    if (study)
        tg_keep_rows(&b, n, 19000);
    memset(q, 0, sizeof *q);
    assert_int_equal(queue_parse_csv(q, "gen.csv", b.s, b.n, &e), EF_OK);
    free(b.s);
    assert_int_equal(queue_resolve(q, &g_curves, &e), EF_OK);
    int64_t span = 0;
    for (int j = 0; j < q->n; j++)
        if (q->jobs[j].deadline > span)
            span = q->jobs[j].deadline;
    int64_t slot = (span + 23) / 24;
    slot = (slot + 59) / 60 * 60;
    return slot < 60 ? 60 : (int)slot;
}

#endif
