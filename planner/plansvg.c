/* plansvg.c: draw a plan as an SVG chart (see plan.h). */
#include "planner/plan.h"

#include <string.h>

#include "common/util.h"

#define SVG_W 1200
#define SVG_H 600
#define SVG_ML 60
#define SVG_MT 40
#define SVG_MB 40
#define SVG_MAX_RECTS 40000

/* A distinct colour per job index (golden-angle hues). */
static void colour(int i, char *dst, size_t len)
{
    int hue = (int)((i * 137.508) - 360.0 * (int)(i * 137.508 / 360.0));
    snprintf(dst, len, "hsl(%d,65%%,%d%%)", hue, 45 + (i % 3) * 8);
}

static void xml_text(ef_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') ef_buf_printf(b, "&lt;");
        else if (*s == '>') ef_buf_printf(b, "&gt;");
        else if (*s == '&') ef_buf_printf(b, "&amp;");
        else if (*s == '"') ef_buf_printf(b, "&quot;");
        else if ((unsigned char)*s >= 0x20) ef_buf_printf(b, "%c", *s);
    }
}

int plan_write_svg(const plan *p, const char *path, ef_err *e)
{
    ef_buf b = {0};
    int N = p->cl.total_gpus, G = p->cl.gpus_per_node;
    /* An empty plan (no jobs, or none scheduled) still gets a one-slot
     * axis, so its ticks read 0 .. slot rather than 0 0 0 0 0 1. */
    int64_t t0 = p->now, t1 = p->nslots ? p->slots[p->nslots - 1].end
                                        : t0 + (p->opts.slot > 0 ? p->opts.slot
                                                                 : 1);
    /* Cut the time axis when the chart would get too many rectangles. */
    long rects = 0;
    int last = p->nslots;
    for (int s = 0; s < p->nslots; s++) {
        rects += p->slots[s].nalloc;
        if (rects > SVG_MAX_RECTS) {
            last = s;
            t1 = p->slots[s].start;
            break;
        }
    }
    if (t1 <= t0)
        t1 = t0 + 1;
    double pw = SVG_W - SVG_ML - 20, ph = SVG_H - SVG_MT - SVG_MB;
    double xs = pw / (double)(t1 - t0), ys = ph / N;
    ef_buf_printf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
              "height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n",
              SVG_W, SVG_H);
    ef_buf_printf(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    ef_buf_printf(&b, "<text x=\"%d\" y=\"18\" font-size=\"14\">efplan plan: %d "
              "jobs on %s, %d admitted, %d rejected, %d best-effort%s</text>\n",
              SVG_ML, p->njobs, p->cl.name, p->admitted, p->rejected,
              p->best_effort, last < p->nslots ? " (first part of the plan)" : "");
    /* node bands */
    for (int nd = 0; nd < p->cl.nodes; nd++)
        if (nd % 2)
            ef_buf_printf(&b, "<rect x=\"%d\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                      "fill=\"#f2f2f2\"/>\n", SVG_ML,
                      SVG_MT + ph - (nd + 1) * G * ys, pw, G * ys);
    for (int s = 0; s < last; s++) {
        const plan_slot *sl = &p->slots[s];
        double x = SVG_ML + (double)(sl->start - t0) * xs;
        double w = (double)(sl->end - sl->start) * xs;
        for (int a = 0; a < sl->nalloc; a++) {
            const plan_alloc *al = &sl->a[a];
            char col[40];
            colour(al->job, col, sizeof col);
            for (int k = 0; k < al->gpus;) {
                int k2 = k;
                while (k2 + 1 < al->gpus && al->gpu[k2 + 1] == al->gpu[k2] + 1)
                    k2++;
                double y = SVG_MT + ph - (al->gpu[k2] + 1) * ys;
                ef_buf_printf(&b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                          "height=\"%.2f\" fill=\"%s\"><title>", x, y, w,
                          (k2 - k + 1) * ys, col);
                xml_text(&b, p->jobs[al->job].in->id);
                ef_buf_printf(&b, " (%s, %d GPUs)</title></rect>\n",
                          p->jobs[al->job].in->model, al->gpus);
                k = k2 + 1;
            }
        }
    }
    /* deadlines of admitted jobs: ticks above the chart */
    for (int i = 0; i < p->njobs; i++) {
        const plan_job *j = &p->jobs[i];
        if (j->decision != PLAN_ADMITTED || j->in->deadline > t1)
            continue;
        char col[40];
        colour(i, col, sizeof col);
        double x = SVG_ML + (double)(j->in->deadline - t0) * xs;
        ef_buf_printf(&b, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%.2f\" "
                  "stroke=\"%s\" stroke-dasharray=\"3,3\"><title>deadline of ",
                  x, SVG_MT - 8, x, SVG_MT + ph, col);
        xml_text(&b, j->in->id);
        ef_buf_printf(&b, "</title></line>\n");
    }
    /* axes */
    ef_buf_printf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"%.2f\" "
              "fill=\"none\" stroke=\"black\"/>\n", SVG_ML, SVG_MT, pw, ph);
    for (int k = 0; k <= 5; k++) {
        int64_t tt = t0 + (t1 - t0) * k / 5;
        double x = SVG_ML + (double)(tt - t0) * xs;
        ef_buf_printf(&b, "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%lld"
                  "</text>\n", x, SVG_H - SVG_MB + 16, (long long)tt);
    }
    if (p->nslots == 0)
        ef_buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
                      "%s</text>\n", SVG_ML + (int)pw / 2, SVG_MT + (int)ph / 2,
                      p->njobs ? "nothing scheduled" : "no jobs (empty queue)");
    ef_buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time (s)"
              "</text>\n", SVG_ML + (int)pw / 2, SVG_H - 6);
    for (int k = 0; k <= 4; k++) {
        int g = N * k / 4;
        ef_buf_printf(&b, "<text x=\"%d\" y=\"%.2f\" text-anchor=\"end\">%d</text>\n",
                  SVG_ML - 6, SVG_MT + ph - g * ys + 4, g);
    }
    ef_buf_printf(&b, "<text x=\"14\" y=\"%d\" transform=\"rotate(-90 14 %d)\" "
              "text-anchor=\"middle\">GPU</text>\n", SVG_MT + (int)ph / 2,
              SVG_MT + (int)ph / 2);
    ef_buf_printf(&b, "</svg>\n");
    int rc = ef_write_file_atomic(path, b.s, b.n, e);
    free(b.s);
    return rc;
}
