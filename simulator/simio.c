/* simio.c: the simulator's output files (see sim.h). */
#include "simulator/simio.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "common/util.h"

/* ---- the result file -------------------------------------------------------- */

/* "timeline": one point a line, like jw_block_arr but [] when empty */
static const jw_style list_style = {"[\n    ", ",\n    ", "\n  ]", "[]",
                                    ": "};

#define COUNT .min = 0, .max = INT32_MAX
#define PT(k, kd, m) JF_F(k, kd, JF_REQ, sim_result_point, m)
static const jf_field point_fields[] = {
    {PT("efficiency", JF_G10, efficiency)},
    {PT("gpus_used", JF_INT, gpus_used), COUNT},
    {PT("met", JF_INT, met), COUNT},
    {PT("running", JF_INT, running), COUNT},
    {PT("t", JF_I64, t), .min = -EF_MAX_I64, .max = EF_MAX_I64},
};
static const jf_table point_table = JF_TABLE(sim_result_point,
                                             &jw_inline_obj, point_fields);

#define CL(k, m) JF_F(k, JF_INT, JF_REQ, sim_result_cluster, m)
static const jf_field cluster_fields[] = {
    {CL("gpus_per_node", gpus_per_node), .min = 1, .max = 64},
    {CL("nodes", nodes), .min = 1, .max = 1 << 20},
    {CL("total_gpus", total_gpus), .min = 1, .max = 1 << 20},
};
static const jf_table cluster_table = JF_TABLE(sim_result_cluster,
                                               &jw_inline_obj, cluster_fields);

#define LAT(k, m) JF_F(k, JF_FIXED, JF_REQ, sim_result_lat, m), .dec = 1
static const jf_field lat_fields[] = {
    {LAT("max", max)},
    {LAT("mean", mean)},
    {LAT("p50", p50)},
    {LAT("p99", p99)},
};
static const jf_table lat_table = JF_TABLE(sim_result_lat, &jw_inline_obj,
                                           lat_fields);

#define R(k, kd, m) JF_F(k, kd, JF_REQ, sim_result, m)
#define EB(k, kd, m) JF_F(k, kd, 0, sim_result, m), \
    .cond = offsetof(sim_result, elastic_batch) + 1
static const jf_field result_fields[] = {
    {R("admitted", JF_INT, admitted), COUNT},
    {R("at_risk", JF_INT, at_risk), COUNT},
    {EB("batch_changes", JF_INT, batch_changes), COUNT},
    {R("best_effort_jobs", JF_INT, best_effort_jobs), COUNT},
    {R("best_effort_mean_jct", JF_G10, best_effort_mean_jct)},
    {R("cluster", JF_OBJ, cluster), .sub = &cluster_table},
    {R("deadline_jobs", JF_INT, deadline_jobs), COUNT},
    {R("deadline_ratio", JF_G10, deadline_ratio)},
    {JF_F("elastic_batch", JF_FLAG, 0, sim_result, elastic_batch)},
    {.key = "format", .kind = JF_CONST, .sval = "efplan-sim",
     .hint = "a result written by efplan simulate --out"},
    {R("gpu_hours", JF_G10, gpu_hours)},
    {R("idle_gpu_hours_after_completion", JF_G10,
       idle_gpu_hours_after_completion)},
    {R("jobs", JF_INT, jobs), COUNT},
    {JF_F("learn", JF_FLAG, JF_OPT, sim_result, learn)},
    {R("mean_efficiency", JF_G10, mean_efficiency)},
    {R("mean_jct", JF_G10, mean_jct)},
    {R("met", JF_INT, met), COUNT},
    {R("migrations", JF_INT, migrations), COUNT},
    {R("missed", JF_INT, missed), COUNT},
    {R("overhead", JF_STR, overhead)},
    {R("overhead_gpu_hours", JF_G10, overhead_gpu_hours)},
    {R("point_us", JF_OBJ, point_us), .sub = &lat_table},
    {R("points", JF_INT, points), COUNT},
    {R("policy", JF_STR, policy)},
    {R("preemptions", JF_INT, preemptions), COUNT},
    {R("rejected", JF_INT, rejected), COUNT},
    {R("rescales", JF_INT, rescales), COUNT},
    {JF_F("restart_scale", JF_G10, JF_OPT, sim_result, restart_scale)},
    {JF_F("restarts_max", JF_INT, JF_OPT, sim_result, restarts_max), COUNT},
    {JF_F("restarts_mean", JF_G10, JF_OPT, sim_result, restarts_mean)},
    {JF_F("restarts_p99", JF_G10, JF_OPT, sim_result, restarts_p99)},
    {R("slot_seconds", JF_INT, slot_seconds), .min = 1, .max = 86400},
    {R("solver_fallbacks", JF_INT, solver_fallbacks), COUNT},
    {JF_F("speed_hi", JF_G10, JF_OPT, sim_result, speed_hi)},
    {JF_F("speed_lo", JF_G10, JF_OPT, sim_result, speed_lo)},
    {R("tick_seconds", JF_I64, tick_seconds), .min = 0, .max = EF_MAX_I64},
    {R("timeline", JF_ARR, timeline), .cnt = offsetof(sim_result, ntimeline),
     .sub = &point_table, .style = &list_style},
    {R("trace", JF_STR, trace)},
    {R("unfinished", JF_INT, unfinished), COUNT},
    {.key = "version", .kind = JF_CONST, .min = 1},
    {R("wall_seconds", JF_FIXED, wall_seconds), .dec = 3},
};
static const jf_table result_table = JF_TABLE(sim_result, &jw_block_obj,
                                              result_fields);

/* A mean that may not exist (< 0): NaN, written null. */
static double mean_or_none(double x)
{
    return x < 0 ? NAN : x;
}

void sim_result_from(sim_result *r, const sim *s, const char *trace)
{
    sim_metrics m;
    sim_metrics_compute(s, &m);
    memset(r, 0, sizeof *r);
    r->admitted = m.admitted;
    r->at_risk = m.at_risk;
    r->best_effort_jobs = m.best_effort_jobs;
    r->best_effort_mean_jct = mean_or_none(m.best_effort_mean_jct);
    r->cluster.gpus_per_node = s->cl.gpus_per_node;
    r->cluster.nodes = s->cl.nodes;
    r->cluster.total_gpus = s->cl.total_gpus;
    r->deadline_jobs = m.deadline_jobs;
    r->deadline_ratio = m.deadline_ratio;
    /* elastic batch runs only, so other results keep their bytes */
    r->elastic_batch = s->elastic != 0;
    r->batch_changes = m.batch_changes;
    /* the policy's time per scheduling point (varies between runs, like
     * wall_seconds) */
    ef_lat_summary ls;
    ef_lat_summarise(&s->point_us, &ls);
    r->point_us = (sim_result_lat){ls.max, ls.mean, ls.p50, ls.p99};
    r->gpu_hours = m.gpu_hours;
    r->idle_gpu_hours_after_completion = m.idle_gpu_hours_after_completion;
    r->jobs = m.jobs;
    r->mean_efficiency = m.mean_efficiency;
    r->mean_jct = mean_or_none(m.mean_jct);
    r->met = m.met;
    r->migrations = m.migrations;
    r->missed = m.missed;
    r->overhead = ovh_name(s->opts.overhead);
    r->overhead_gpu_hours = m.overhead_gpu_hours;
    r->points = s->points;
    r->policy = s->pol->name;
    r->preemptions = m.preemptions;
    r->rejected = m.rejected;
    r->rescales = m.rescales;
    r->restarts_mean = m.restarts_mean;
    r->restarts_p99 = m.restarts_p99;
    r->restarts_max = m.restarts_max;
    r->speed_lo = s->opts.speed_hi > 0 ? s->opts.speed_lo : 0;
    r->speed_hi = s->opts.speed_hi;
    r->restart_scale = s->opts.restart_scale;
    r->learn = s->opts.learn;
    r->slot_seconds = s->opts.slot;
    r->solver_fallbacks = m.solver_fallbacks;
    r->tick_seconds = s->opts.tick;
    r->ntimeline = s->ntl;
    r->timeline = jf_alloc(&r->arena, (size_t)s->ntl * sizeof *r->timeline);
    for (int k = 0; k < s->ntl; k++) {
        const sim_sample *p = &s->tl[k];
        sim_result_point *q = &r->timeline[k];
        q->efficiency = p->efficiency;
        q->gpus_used = p->gpus_used;
        q->met = p->met_so_far;
        q->running = p->running;
        q->t = p->t;
    }
    r->trace = trace;
    r->unfinished = m.unfinished;
    r->wall_seconds = s->wall_seconds;
}

char *sim_result_json(const sim_result *r, size_t *len)
{
    jw w;
    jw_init(&w, 0);
    jf_write(&w, NULL, &result_table, r, 0);
    ef_buf_put(&w.b, "\n");
    return jw_take(&w, len);
}

int sim_result_parse(sim_result *r, const char *path, const char *buf,
                     size_t len, ef_err *e)
{
    memset(r, 0, sizeof *r);
    int rc = jf_parse(&result_table, r, "a simulation result (format "
                      "efplan-sim)", path, buf, len, &r->arena, e);
    if (rc != EF_OK)
        sim_result_free(r);
    return rc;
}

static int parse_any(void *r, const char *path, const char *buf, size_t len,
                     ef_err *e)
{
    return sim_result_parse(r, path, buf, len, e);
}

int sim_result_load(sim_result *r, const char *path, ef_err *e)
{
    memset(r, 0, sizeof *r);
    return jf_load(path, parse_any, r, e);
}

int sim_result_equal(const sim_result *a, const sim_result *b)
{
    return jf_equal(&result_table, a, b);
}

void sim_result_free(sim_result *r)
{
    jf_arena_free(&r->arena);
    memset(r, 0, sizeof *r);
}

int sim_write_json(const sim *s, const char *trace, const char *path,
                   ef_err *e)
{
    sim_result r;
    size_t n;
    sim_result_from(&r, s, trace);
    char *text = sim_result_json(&r, &n);
    sim_result_free(&r);
    int rc = ef_write_file_atomic(path, text, n, e);
    free(text);
    return rc;
}

static const char *state_name(sim_state st)
{
    switch (st) {
    case SJ_DONE: return "done";
    case SJ_REJECTED: return "rejected";
    case SJ_ACTIVE: return "unfinished";
    default: return "never_released";
    }
}

/* A CSV field: quoted when it holds a comma, quote or line break. */
static void csv_field(ef_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        ef_buf_put(b, s);
        return;
    }
    ef_buf_put(b, "\"");
    for (; *s; s++) {
        if (*s == '"')
            ef_buf_put(b, "\"\"");
        else
            ef_buf_printf(b, "%c", *s);
    }
    ef_buf_put(b, "\"");
}

int sim_write_jobs_csv(const sim *s, const char *path, ef_err *e)
{
    ef_buf b = {0};
    ef_buf_put(&b, "id,model,batch_size,submit,start,end,deadline,met,state,"
                   "rescales,migrations,preemptions,gpu_seconds,"
                   "overhead_seconds,earliest_deadline,at_risk\n");
    for (int i = 0; i < s->n; i++) {
        const sim_job *j = &s->jobs[i];
        csv_field(&b, j->in->id);
        ef_buf_put(&b, ",");
        csv_field(&b, j->in->model);
        ef_buf_printf(&b, ",%ld,%lld,", j->in->batch, (long long)j->in->submit);
        if (j->start >= 0)
            ef_buf_printf(&b, "%lld", (long long)j->start);
        ef_buf_put(&b, ",");
        if (j->end >= 0)
            ef_buf_printf(&b, "%.3f", j->end);
        ef_buf_put(&b, ",");
        if (!j->best_effort)
            ef_buf_printf(&b, "%lld", (long long)j->in->deadline);
        ef_buf_printf(&b, ",%s,%s,%d,%d,%d,%.1f,%.3f,",
                      j->best_effort ? "" : (j->met ? "1" : "0"),
                      state_name(j->state), j->rescales, j->migrations,
                      j->preemptions, j->gpu_seconds, j->overhead_seconds);
        if (j->earliest_deadline >= 0)
            ef_buf_printf(&b, "%lld", (long long)j->earliest_deadline);
        ef_buf_put(&b, ",");
        if (j->risk)
            csv_field(&b, j->risk);
        ef_buf_put(&b, "\n");
    }
    int rc = ef_write_file_atomic(path, b.s, b.n, e);
    free(b.s);
    return rc;
}
