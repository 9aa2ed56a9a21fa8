/* simio.c: the simulator's output files (see sim.h). */
#include <math.h>
#include <string.h>

#include "../planner/util.h"
#include "sim.h"

static void num(ef_buf *b, double x)
{
    if (!isfinite(x))
        ef_buf_put(b, "null");
    else if (x == floor(x) && fabs(x) < 1e15)
        ef_buf_printf(b, "%.0f", x);
    else
        ef_buf_printf(b, "%.10g", x);
}

int sim_write_json(const sim *s, const char *trace, const char *path,
                   ef_err *e)
{
    sim_metrics m;
    sim_metrics_compute(s, &m);
    ef_buf b = {0};
    ef_buf_put(&b, "{\n  \"admitted\": ");
    ef_buf_printf(&b, "%d", m.admitted);
    /* elastic batch runs only, so other results keep their bytes */
    if (s->elastic)
        ef_buf_printf(&b, ",\n  \"batch_changes\": %d", m.batch_changes);
    ef_buf_printf(&b, ",\n  \"best_effort_jobs\": %d", m.best_effort_jobs);
    ef_buf_put(&b, ",\n  \"best_effort_mean_jct\": ");
    if (m.best_effort_mean_jct < 0)
        ef_buf_put(&b, "null");
    else
        num(&b, m.best_effort_mean_jct);
    ef_buf_printf(&b, ",\n  \"cluster\": {\"gpus_per_node\": %d, \"nodes\": "
                  "%d, \"total_gpus\": %d}", s->cl.gpus_per_node, s->cl.nodes,
                  s->cl.total_gpus);
    ef_buf_printf(&b, ",\n  \"deadline_jobs\": %d", m.deadline_jobs);
    ef_buf_put(&b, ",\n  \"deadline_ratio\": ");
    num(&b, m.deadline_ratio);
    if (s->elastic)
        ef_buf_put(&b, ",\n  \"elastic_batch\": true");
    ef_buf_put(&b, ",\n  \"format\": \"efplan-sim\",\n  \"gpu_hours\": ");
    num(&b, m.gpu_hours);
    ef_buf_put(&b, ",\n  \"idle_gpu_hours_after_completion\": ");
    num(&b, m.idle_gpu_hours_after_completion);
    ef_buf_printf(&b, ",\n  \"jobs\": %d", m.jobs);
    ef_buf_put(&b, ",\n  \"mean_efficiency\": ");
    num(&b, m.mean_efficiency);
    ef_buf_put(&b, ",\n  \"mean_jct\": ");
    if (m.mean_jct < 0)
        ef_buf_put(&b, "null");
    else
        num(&b, m.mean_jct);
    ef_buf_printf(&b, ",\n  \"met\": %d,\n  \"migrations\": %d,\n  "
                  "\"missed\": %d,\n  \"overhead\": \"%s\"", m.met,
                  m.migrations, m.missed, ovh_name(s->opts.overhead));
    ef_buf_put(&b, ",\n  \"overhead_gpu_hours\": ");
    num(&b, m.overhead_gpu_hours);
    /* the policy's time per scheduling point (varies between runs, like
     * wall_seconds) */
    if (s->elastic)
        ef_buf_printf(&b, ",\n  \"point_us_max\": %.1f,\n  "
                      "\"point_us_mean\": %.1f", s->point_seconds_max * 1e6,
                      s->points ? s->point_seconds_sum * 1e6 / s->points : 0);
    ef_buf_printf(&b, ",\n  \"points\": %d,\n  \"policy\": ", s->points);
    ef_buf_json_str(&b, s->pol->name);
    ef_buf_printf(&b, ",\n  \"preemptions\": %d,\n  \"rejected\": %d,\n  "
                  "\"rescales\": %d,\n  \"slot_seconds\": %d,\n  "
                  "\"solver_fallbacks\": %d,\n  \"tick_seconds"
                  "\": %lld,\n  \"timeline\": [", m.preemptions, m.rejected,
                  m.rescales, s->opts.slot, m.solver_fallbacks,
                  (long long)s->opts.tick);
    for (int k = 0; k < s->ntl; k++) {
        const sim_point *p = &s->tl[k];
        ef_buf_put(&b, k ? ",\n    " : "\n    ");
        ef_buf_put(&b, "{\"efficiency\": ");
        num(&b, p->efficiency);
        ef_buf_printf(&b, ", \"gpus_used\": %d, \"met\": %d, \"running\": %d, "
                      "\"t\": %lld}", p->gpus_used, p->met_so_far, p->running,
                      (long long)p->t);
    }
    ef_buf_put(&b, s->ntl ? "\n  ],\n  \"trace\": " : "],\n  \"trace\": ");
    ef_buf_json_str(&b, trace);
    ef_buf_printf(&b, ",\n  \"unfinished\": %d,\n  \"version\": 1,\n  "
                  "\"wall_seconds\": %.3f\n}\n", m.unfinished, s->wall_seconds);
    int rc = ef_write_file_atomic(path, b.s, b.n, e);
    free(b.s);
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
                   "overhead_seconds,earliest_deadline\n");
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
        ef_buf_put(&b, "\n");
    }
    int rc = ef_write_file_atomic(path, b.s, b.n, e);
    free(b.s);
    return rc;
}

#define W 1200
#define H 560
#define ML 70
#define MR 70
#define MT 40
#define PH 200 /* height of each panel */
#define GAP 60

int sim_write_svg(const sim *s, const char *trace, const char *path,
                  ef_err *e)
{
    ef_buf b = {0};
    int N = s->cl.total_gpus;
    int64_t t0 = s->now, t1 = s->end > s->now ? s->end : s->now + 1;
    double span = (double)(t1 - t0), pw = W - ML - MR;
    sim_metrics m;
    sim_metrics_compute(s, &m);
    ef_buf_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                  "height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n"
                  "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                  W, H);
    ef_buf_printf(&b, "<text x=\"%d\" y=\"20\" font-size=\"14\">", ML);
    ef_buf_put(&b, "efplan simulate: ");
    for (const char *c = trace; *c; c++) {
        if (*c == '<') ef_buf_put(&b, "&lt;");
        else if (*c == '&') ef_buf_put(&b, "&amp;");
        else if ((unsigned char)*c >= 0x20) ef_buf_printf(&b, "%c", *c);
    }
    ef_buf_printf(&b, ", policy %s, %d GPUs: %d of %d deadlines met "
                  "(%.3f)</text>\n", s->pol->name, N, m.met, m.deadline_jobs,
                  m.deadline_ratio);
    /* panel 1: GPUs in use (step line, bucketed to at most 'pw' columns) */
    int y1 = MT, y2 = MT + PH + GAP;
    ef_buf_printf(&b, "<text x=\"%d\" y=\"%d\">GPUs in use (of %d)</text>\n"
                  "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%d\" "
                  "fill=\"none\" stroke=\"#888\"/>\n", ML, y1 - 6, N, ML, y1,
                  pw, PH);
    ef_buf_put(&b, "<polyline fill=\"none\" stroke=\"#2a6fdb\" points=\"");
    for (int k = 0; k < s->ntl; k++) {
        int64_t a = s->tl[k].t, z = k + 1 < s->ntl ? s->tl[k + 1].t : t1;
        double xa = ML + pw * (double)(a - t0) / span;
        double xz = ML + pw * (double)(z - t0) / span;
        double y = y1 + PH - PH * (double)s->tl[k].gpus_used / N;
        ef_buf_printf(&b, "%.1f,%.1f %.1f,%.1f ", xa, y, xz, y);
    }
    ef_buf_put(&b, "\"/>\n");
    /* panel 2: deadlines met so far (cumulative) */
    int total = m.deadline_jobs ? m.deadline_jobs : 1;
    ef_buf_printf(&b, "<text x=\"%d\" y=\"%d\">deadlines met so far (of %d "
                  "deadline jobs)</text>\n<rect x=\"%d\" y=\"%d\" width=\"%.0f\" "
                  "height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n", ML, y2 - 6,
                  m.deadline_jobs, ML, y2, pw, PH);
    ef_buf_put(&b, "<polyline fill=\"none\" stroke=\"#1a9e50\" points=\"");
    for (int k = 0; k < s->ntl; k++) {
        double x = ML + pw * (double)(s->tl[k].t - t0) / span;
        double y = y2 + PH - PH * (double)s->tl[k].met_so_far / total;
        ef_buf_printf(&b, "%.1f,%.1f ", x, y);
    }
    ef_buf_printf(&b, "%.1f,%.1f\"/>\n", ML + pw,
                  y2 + PH - PH * (double)m.met / total);
    for (int k = 0; k <= 4; k++) {
        double x = ML + pw * k / 4;
        ef_buf_printf(&b, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">"
                      "%+.1fh</text>\n", x, y2 + PH + 16,
                      span * k / 4 / 3600.0);
    }
    ef_buf_put(&b, "</svg>\n");
    int rc = ef_write_file_atomic(path, b.s, b.n, e);
    free(b.s);
    return rc;
}
