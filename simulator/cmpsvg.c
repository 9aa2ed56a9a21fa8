/* cmpsvg.c: the compare grid's chart, cmp_svg (see compare.h). */
#include "simulator/compare.h"

#include <stdlib.h>

#include "common/svg.h"
#include "common/util.h"

#define ML 80      /* left margin: the ratio axis */
#define MR 30
#define TOP 130    /* plot top: title, subtitle, a legend of one row */
#define PH 300     /* plot height */
#define BAR 30     /* a bar's width */
#define BGAP 4     /* between bars of a group */
#define GGAP 44    /* between groups */
#define MIN_W 720

void cmp_svg(const cmp_result *r, ef_buf *out)
{
    ef_buf b = {0};
    int nt = r->ntraces, np = r->npolicies;
    double gw = np * (BAR + BGAP) - BGAP; /* a group's width */
    double pw = nt * (gw + GGAP);          /* the plot's width */
    int W = (int)(ML + pw + MR) > MIN_W ? (int)(ML + pw + MR) : MIN_W;
    double x0 = ML + (W - ML - MR - pw) / 2; /* first group's left, less
                                                 half a gap */
    /* the legend: a swatch per policy, in rows as wide as the chart */
    double *lx = ef_malloc((size_t)np * sizeof *lx); /* entries' left */
    int *lrow = ef_malloc((size_t)np * sizeof *lrow); /* entries' row */
    double lx0 = 24; /* where the next entry goes */
    int rows = 1;
    for (int p = 0; p < np; p++) {
        double w = svg_text_width(r->cells[p].policy, 11) + 34;
        if (lx0 + w > W - 24 && lx0 > 24) {
            rows++;
            lx0 = 24;
        }
        lx[p] = lx0;
        lrow[p] = rows - 1;
        lx0 += w;
    }
    int top = TOP + 18 * (rows - 1); /* the plot's top */
    int H = top + PH + 70;
    int has_pub = 0;
    for (int k = 0; k < nt * np; k++)
        has_pub |= r->cells[k].published >= 0;
    svg_open(&b, W, H);
    svg_text(&b, 24, 22, "font-size=\"15\" font-weight=\"bold\"",
             "efplan compare: deadline-satisfactory ratio by policy and "
             "trace");
    svg_text(&b, 24, 42, "fill=\"#333\"", "%d trace%s x %d polic%s; slot "
             "%d s, overhead %s", nt, nt == 1 ? "" : "s", np,
             np == 1 ? "y" : "ies", r->slot, ovh_name(r->overhead));
    svg_text(&b, 24, 58, "font-size=\"11\" fill=\"#555\"", "A bar: the "
             "deadline jobs done by their deadline, over all deadline jobs "
             "of the trace.");
    for (int p = 0; p < np; p++) {
        double y = 72 + 18 * lrow[p];
        ef_buf_printf(&b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" "
                      "height=\"12\" fill=\"%s\"/>\n", lx[p], y,
                      svg_colour(p));
        svg_text(&b, lx[p] + 19, y + 10, "font-size=\"11\"", "%s",
                 r->cells[p].policy);
    }
    free(lx);
    free(lrow);
    if (has_pub) {
        double y = 100 + 18 * (rows - 1);
        ef_buf_printf(&b, "<line x1=\"24\" y1=\"%.1f\" x2=\"40\" "
                      "y2=\"%.1f\" stroke=\"black\" stroke-width=\"2.5\"/>\n",
                      y, y);
        svg_text(&b, 46, y + 4, "font-size=\"11\"",
                 "the number the ElasticFlow paper publishes for that trace, "
                 "cluster and policy");
    }
    double xl = ML, xr = W - MR, ybot = top + PH; /* plot frame */
    svg_value_axis(&b, 0, 1, xl, ybot, top, -1, 5, 0, 0, xl, xr);
    svg_ylabel(&b, 20, top + PH / 2.0, "deadline-satisfactory ratio");
    for (int t = 0; t < nt; t++) {
        double gx = x0 + GGAP / 2.0 + t * (gw + GGAP); /* group's left */
        for (int p = 0; p < np; p++) {
            const cmp_cell *c = &r->cells[t * np + p];
            double v = c->deadline_ratio < 0 ? 0 : c->deadline_ratio > 1
                                                       ? 1
                                                       : c->deadline_ratio;
            double x = gx + p * (BAR + BGAP), h = PH * v;
            ef_buf_printf(&b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" "
                          "height=\"%.1f\" fill=\"%s\"><title>", x, ybot - h,
                          BAR, h, svg_colour(p));
            svg_esc(&b, c->policy);
            ef_buf_printf(&b, " on ");
            svg_esc(&b, c->trace);
            ef_buf_printf(&b, ": %d of %d deadlines met</title></rect>\n",
                          c->met, c->deadline_jobs);
            svg_text(&b, x + BAR / 2.0, ybot - h - 4,
                     "text-anchor=\"middle\" font-size=\"10\"", "%.2f",
                     c->deadline_ratio);
            if (c->published >= 0) {
                double py = ybot - PH * (c->published > 1 ? 1
                                                          : c->published);
                ef_buf_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                              "y2=\"%.1f\" stroke=\"black\" "
                              "stroke-width=\"2.5\"><title>published: %.3f"
                              "</title></line>\n", x - 2, py, x + BAR + 2, py,
                              c->published);
            }
        }
        char stem[CMP_STEM_LEN], s[64];
        cmp_stem(r->cells[t * np].trace, stem, sizeof stem);
        svg_short(stem, (int)((gw + GGAP - 4) / 7), s, sizeof s);
        svg_text(&b, gx + gw / 2, ybot + 18, "text-anchor=\"middle\"", "%s",
                 s);
        svg_text(&b, gx + gw / 2, ybot + 33, "text-anchor=\"middle\" "
                 "font-size=\"10\" fill=\"#555\"", "%s, %d GPUs",
                 r->cells[t * np].cluster, r->cells[t * np].gpus);
    }
    ef_buf_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                  "stroke=\"#444\"/>\n", xl, ybot, xr, ybot);
    svg_text(&b, (xl + xr) / 2, ybot + 56, "text-anchor=\"middle\"",
             "trace (cluster)");
    svg_close(&b);
    ef_buf_put(out, b.s);
    free(b.s);
}
