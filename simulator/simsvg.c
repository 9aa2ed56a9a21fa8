/* simsvg.c: the simulation's chart, sim_svg (see sim.h). */
#include "simulator/sim.h"

#include <stdlib.h>

#include "common/svg.h"
#include "common/util.h"

#define W 1200
#define ML 80   /* left margin: the count axis */
#define MR 80   /* right margin: the percent axis */
#define TOP 92  /* first panel's top: title, subtitle, legend */
#define PH 200  /* a panel's height */
#define GAP 96  /* between panels: time axis and the next panel's title */

/* One panel: a frame at 'top', a count axis 0..max on the left (integer
 * ticks) and 0..100% of max on the right, a title above, the axes
 * titled 'left' and 'right'. */
static void panel(ef_buf *b, double top, int max, const char *title,
                  const char *left, const char *right)
{
    double x0 = ML, x1 = W - MR;
    svg_text(b, x0, top - 8, "font-weight=\"bold\"", "%s", title);
    svg_value_axis(b, 0, max > 0 ? max : 1, x0, top + PH, top, -1, 6, 1, 0,
                   x0, x1);
    svg_value_axis(b, 0, 1, x1, top + PH, top, 1, 5, 0, 1, 0, 0);
    svg_ylabel(b, 18, top + PH / 2.0, left);
    svg_ylabel(b, W - 14, top + PH / 2.0, right);
}

void sim_svg(const sim *s, const char *trace, ef_buf *out)
{
    ef_buf b = {0};
    int N = s->cl.total_gpus;
    int64_t t0 = s->now, t1 = s->end > s->now ? s->end : s->now + 1;
    double span = (double)(t1 - t0), pw = W - ML - MR;
    sim_metrics m;
    sim_metrics_compute(s, &m);
    int y1 = TOP, y2 = TOP + PH + GAP; /* the panels' tops */
    int H = y2 + PH + 60;
    svg_open(&b, W, H);
    svg_text(&b, 24, 22, "font-size=\"15\" font-weight=\"bold\"",
             "efplan simulate: %s, policy %s, %s (%d GPUs)", trace,
             s->pol->name, s->cl.name, N);
    char dur[32];
    ef_ht_dur(t1 - t0, dur, sizeof dur);
    svg_text(&b, 24, 42, "fill=\"#333\"", "%d jobs: %d of %d deadlines met "
             "(ratio %.3f), %d admitted, %d rejected; %s simulated; %.1f "
             "GPU-hours", m.jobs, m.met, m.deadline_jobs, m.deadline_ratio,
             m.admitted, m.rejected, dur, m.gpu_hours);
    /* legend */
    ef_buf_printf(&b, "<rect x=\"24\" y=\"52\" width=\"14\" height=\"12\" "
                  "fill=\"#2a6fdb\" fill-opacity=\"0.35\" "
                  "stroke=\"#2a6fdb\"/>\n"
                  "<line x1=\"300\" y1=\"58\" x2=\"314\" y2=\"58\" "
                  "stroke=\"#1a9e50\" stroke-width=\"2\"/>\n");
    svg_text(&b, 44, 62, "font-size=\"11\"", "GPUs in use (top panel)");
    svg_text(&b, 320, 62, "font-size=\"11\"",
             "deadline jobs completed by their deadline so far (bottom)");

    /* panel 1: GPUs in use, a step area */
    panel(&b, y1, N, "GPUs in use", "GPUs", "% of the cluster");
    svg_time_axis(&b, t0, t1, ML, ML + pw, y1 + PH, y1, EF_HT_UTC);
    ef_buf_printf(&b, "<path fill=\"#2a6fdb\" fill-opacity=\"0.35\" "
                  "stroke=\"#2a6fdb\" stroke-width=\"1\" d=\"M%d %d ", ML,
                  y1 + PH);
    for (int k = 0; k < s->ntl; k++) {
        int64_t a = s->tl[k].t, z = k + 1 < s->ntl ? s->tl[k + 1].t : t1;
        double xa = ML + pw * (double)(a - t0) / span;
        double xz = ML + pw * (double)(z - t0) / span;
        double y = y1 + PH - PH * (double)s->tl[k].gpus_used / N;
        ef_buf_printf(&b, "L%.1f %.1f L%.1f %.1f ", xa, y, xz, y);
    }
    ef_buf_printf(&b, "L%.1f %d Z\"/>\n", ML + pw, y1 + PH);
    ef_buf_printf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%d\" "
                  "fill=\"none\" stroke=\"#444\"/>\n", ML, y1, pw, PH);

    /* panel 2: deadlines met so far (cumulative) */
    int total = m.deadline_jobs ? m.deadline_jobs : 1;
    char t2[96];
    snprintf(t2, sizeof t2, "Deadlines met so far (of %d deadline jobs)",
             m.deadline_jobs);
    panel(&b, y2, total, t2, "jobs", "% of deadline jobs");
    svg_time_axis(&b, t0, t1, ML, ML + pw, y2 + PH, y2, EF_HT_UTC);
    ef_buf_put(&b, "<polyline fill=\"none\" stroke=\"#1a9e50\" "
               "stroke-width=\"2\" points=\"");
    for (int k = 0; k < s->ntl; k++) {
        double x = ML + pw * (double)(s->tl[k].t - t0) / span;
        double y = y2 + PH - PH * (double)s->tl[k].met_so_far / total;
        ef_buf_printf(&b, "%.1f,%.1f ", x, y);
    }
    ef_buf_printf(&b, "%.1f,%.1f\"/>\n", ML + pw,
                  y2 + PH - PH * (double)m.met / total);
    ef_buf_printf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%d\" "
                  "fill=\"none\" stroke=\"#444\"/>\n", ML, y2, pw, PH);
    svg_close(&b);
    ef_buf_put(out, b.s);
    free(b.s);
}
