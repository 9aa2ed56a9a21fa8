/* plansvg.c: draw a plan as an SVG chart (see plan_svg in plan.h). */
#include "planner/plan.h"

#include <stdlib.h>
#include <string.h>

#include "common/svg.h"
#include "common/util.h"

#define W 1200
#define ML 96      /* left margin: node labels */
#define MR_PLAIN 44
#define MR_ARROWS 200 /* right margin with deadlines past the axis */
#define TOP 84     /* plot top: title, subtitle, deadline markers */
/* A plan drawn block by block has at most this many jobs with GPU time
 * and this many blocks; larger plans are drawn as stacked bands. */
#define GANTT_MAX_JOBS 60
#define GANTT_MAX_BLOCKS 6000
#define MAX_BINS 300   /* columns of the stacked bands */
#define MAX_REJECTED 12 /* rejected jobs listed by name */

/* A job's GPUs over a stretch of time: GPUs g0..g1 (global ids,
 * consecutive) from t0 to t1. */
typedef struct block {
    int job, g0, g1;
    int64_t t0, t1;
} block;

static int block_cmp(const void *a, const void *b)
{
    const block *x = a, *y = b;
    if (x->job != y->job)
        return x->job < y->job ? -1 : 1;
    if (x->g0 != y->g0)
        return x->g0 < y->g0 ? -1 : 1;
    if (x->g1 != y->g1)
        return x->g1 < y->g1 ? -1 : 1;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

/* A job in the order of colours: most GPU-seconds first, then by id. */
typedef struct ranked {
    double gs;
    const char *id;
    int job;
} ranked;

static int rank_cmp(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->gs != y->gs)
        return x->gs > y->gs ? -1 : 1;
    int c = strcmp(x->id, y->id);
    return c ? c : (x->job > y->job) - (x->job < y->job);
}

/* Every job's GPU blocks, consecutive slots on the same GPUs merged,
 * sorted by job, GPUs and time; *n their count. Stops (returning what it
 * has, *n > max) past 'max' raw pieces. */
static block *collect_blocks(const plan *p, long max, long *n)
{
    long cap = 64, k = 0;
    block *v = ef_malloc((size_t)cap * sizeof *v);
    for (int s = 0; s < p->nslots && k <= max; s++) {
        const plan_slot *sl = &p->slots[s];
        for (int a = 0; a < sl->nalloc; a++) {
            const plan_alloc *al = &sl->a[a];
            for (int i = 0; i < al->gpus;) {
                int i2 = i;
                while (i2 + 1 < al->gpus && al->gpu[i2 + 1] == al->gpu[i2] + 1)
                    i2++;
                if (k == cap) {
                    cap *= 2;
                    v = ef_realloc(v, (size_t)cap * sizeof *v);
                }
                v[k++] = (block){al->job, al->gpu[i], al->gpu[i2], sl->start,
                                 sl->end};
                i = i2 + 1;
            }
        }
    }
    if (k > max) {
        *n = k;
        return v;
    }
    qsort(v, (size_t)k, sizeof *v, block_cmp);
    long m = 0;
    for (long i = 0; i < k; i++) {
        if (m && v[m - 1].job == v[i].job && v[m - 1].g0 == v[i].g0 &&
            v[m - 1].g1 == v[i].g1 && v[m - 1].t1 == v[i].t0)
            v[m - 1].t1 = v[i].t1;
        else
            v[m++] = v[i];
    }
    *n = m;
    return v;
}

/* The fill of job i: its colour, or grey past the palette. */
static const char *fill_of(const int *col, int i)
{
    return col[i] >= 0 ? svg_colour(col[i]) : SVG_GREY;
}

/* 1 iff job i has a deadline the chart marks. */
static int marked(const plan *p, int i)
{
    return p->jobs[i].decision == PLAN_ADMITTED && p->jobs[i].in->has_deadline;
}

/* Draw the blocks: one rectangle per block, labelled "id (N GPUs)" (or
 * the id alone) where the label fits. */
static void draw_blocks(ef_buf *b, const plan *p, const block *v, long n,
                        const int *col, double xof0, double xs, double top,
                        double ys, int64_t t0)
{
    for (long k = 0; k < n; k++) {
        const block *bl = &v[k];
        const plan_job *j = &p->jobs[bl->job];
        double x = xof0 + (double)(bl->t0 - t0) * xs;
        double w = (double)(bl->t1 - bl->t0) * xs;
        double y = top + bl->g0 * ys, h = (bl->g1 - bl->g0 + 1) * ys;
        const char *f = fill_of(col, bl->job);
        char a[48], z[48];
        ef_buf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                      "height=\"%.2f\" fill=\"%s\" stroke=\"white\" "
                      "stroke-width=\"0.6\"><title>", x, y, w, h, f);
        svg_esc(b, j->in->id);
        ef_buf_printf(b, " (");
        svg_esc(b, j->in->model);
        ef_buf_printf(b, "): GPUs %d-%d, %s to %s</title></rect>\n", bl->g0,
                      bl->g1, svg_time_label(bl->t0, t0, EF_HT_EPOCH, a,
                                             sizeof a),
                      svg_time_label(bl->t1, t0, EF_HT_EPOCH, z, sizeof z));
        if (h < 11)
            continue;
        char lab[200];
        int gpus = bl->g1 - bl->g0 + 1;
        snprintf(lab, sizeof lab, "%s (%d GPU%s)", j->in->id, gpus,
                 gpus == 1 ? "" : "s");
        if (svg_text_width(lab, 10) > w - 4)
            snprintf(lab, sizeof lab, "%s", j->in->id);
        if (svg_text_width(lab, 10) > w - 4)
            continue;
        char attrs[96];
        snprintf(attrs, sizeof attrs, "font-size=\"10\" fill=\"%s\"",
                 svg_ink(f));
        svg_text(b, x + 2, y + h / 2 + 3.5, attrs, "%s", lab);
    }
}

/* Stacked bands: GPUs in use per column of time, series 0..K-1 the
 * coloured jobs (bottom up), series K the others. */
static void draw_bands(ef_buf *b, const plan *p, const int *col, int K,
                       double x0, double xs, double top, double ph,
                       int64_t t0, int64_t t1)
{
    int64_t span = t1 - t0;
    int64_t bin = (span + MAX_BINS - 1) / MAX_BINS; /* seconds per column */
    if (bin < 1)
        bin = 1;
    int nb = (int)((span + bin - 1) / bin);
    int ns = K + 1;
    double *v = ef_calloc((size_t)ns * nb, sizeof *v); /* GPU-seconds */
    int *g = ef_calloc((size_t)ns, sizeof *g); /* a slot's GPUs per series */
    for (int s = 0; s < p->nslots; s++) {
        const plan_slot *sl = &p->slots[s];
        memset(g, 0, (size_t)ns * sizeof *g);
        for (int a = 0; a < sl->nalloc; a++) {
            int c = col[sl->a[a].job];
            g[c >= 0 ? c : K] += sl->a[a].gpus;
        }
        int64_t a0 = sl->start > t0 ? sl->start : t0;
        int64_t a1 = sl->end < t1 ? sl->end : t1;
        for (int64_t c = (a0 - t0) / bin; a0 < a1 && c < nb; c++) {
            int64_t c0 = t0 + c * bin, c1 = c0 + bin;
            int64_t o0 = a0 > c0 ? a0 : c0, o1 = a1 < c1 ? a1 : c1;
            if (o1 <= o0)
                break;
            for (int k = 0; k < ns; k++)
                v[(size_t)k * nb + c] += (double)g[k] * (double)(o1 - o0);
        }
    }
    int N = p->cl.total_gpus;
    double *low = ef_calloc((size_t)nb, sizeof *low); /* stack below, GPUs */
    for (int k = 0; k < ns; k++) {
        ef_buf_printf(b, "<path fill=\"%s\" d=\"",
                      k < K ? svg_colour(k) : SVG_GREY);
        for (int c = 0; c < nb; c++) {
            int64_t c1 = t0 + (c + 1) * bin < t1 ? t0 + (c + 1) * bin : t1;
            double len = (double)(c1 - (t0 + c * bin));
            double hi = low[c] + v[(size_t)k * nb + c] / len;
            double xa = x0 + (double)(c * bin) * xs;
            double xz = x0 + (double)(c1 - t0) * xs;
            double y = top + ph - ph * hi / N;
            ef_buf_printf(b, "%s%.1f %.1f L%.1f %.1f ", c ? "L" : "M", xa, y,
                          xz, y);
        }
        for (int c = nb - 1; c >= 0; c--) {
            int64_t c1 = t0 + (c + 1) * bin < t1 ? t0 + (c + 1) * bin : t1;
            double xa = x0 + (double)(c * bin) * xs;
            double xz = x0 + (double)(c1 - t0) * xs;
            double y = top + ph - ph * low[c] / N;
            ef_buf_printf(b, "L%.1f %.1f L%.1f %.1f ", xz, y, xa, y);
        }
        ef_buf_put(b, "Z\"/>\n");
        for (int c = 0; c < nb; c++) {
            int64_t c1 = t0 + (c + 1) * bin < t1 ? t0 + (c + 1) * bin : t1;
            low[c] += v[(size_t)k * nb + c] / (double)(c1 - (t0 + c * bin));
        }
    }
    free(low);
    free(g);
    free(v);
}

/* A histogram strip of the deadlines of the admitted jobs without a
 * colour, at most MAX_BINS columns, in [y, y + h). */
static void deadline_rug(ef_buf *b, const plan *p, const int *col, double x0,
                         double xs, double y, double h, int64_t t0,
                         int64_t t1)
{
    int64_t span = t1 - t0;
    int64_t bin = (span + MAX_BINS - 1) / MAX_BINS; /* seconds per column */
    if (bin < 1)
        bin = 1;
    int nb = (int)((span + bin - 1) / bin), most = 0, total = 0;
    int *cnt = ef_calloc((size_t)nb, sizeof *cnt); /* deadlines per column */
    for (int i = 0; i < p->njobs; i++) {
        int64_t d = p->jobs[i].in->deadline;
        if (!marked(p, i) || col[i] >= 0 || d < t0 || d > t1)
            continue;
        int c = (int)((d - t0) / bin);
        if (c >= nb)
            c = nb - 1;
        cnt[c]++;
        total++;
        if (cnt[c] > most)
            most = cnt[c];
    }
    if (total) {
        char dur[32];
        ef_ht_dur(bin, dur, sizeof dur);
        svg_text(b, x0 - 6, y + h - 2, "text-anchor=\"end\" font-size=\"10\" "
                 "fill=\"#555\"", "deadlines");
        for (int c = 0; c < nb; c++)
            if (cnt[c])
                ef_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                              "height=\"%.1f\" fill=\"#777\"/>\n",
                              x0 + (double)(c * bin) * xs,
                              y + h - h * cnt[c] / most,
                              (double)bin * xs > 1 ? (double)bin * xs : 1,
                              h * cnt[c] / most);
        ef_buf_printf(b, "<title>deadlines of %d other admitted jobs, at most "
                      "%d per %s</title>\n", total, most, dur);
    }
    free(cnt);
}

/* One chart from start to end: what it draws and where. Filled by
 * chart_rank, chart_axis and chart_legend in turn; the draw_* steps
 * only read it. */
typedef struct chart {
    const plan *p;
    ef_ht_zone z;
    int N, G;         /* the cluster's GPUs, GPUs per node */
    int64_t t0;       /* the plan's now: the axis' left end */
    int64_t tend;     /* the plan's end (one slot when it is empty) */
    int64_t t1;       /* the axis' right end */
    int *ord;         /* jobs with GPU time, most GPU-seconds first */
    int *col;         /* per job: its colour, or -1 (grey) */
    int nrun;         /* jobs with GPU time */
    int K;            /* coloured jobs: ord[0 .. K-1] */
    block *blk;       /* the blocks, when drawn block by block */
    long nblk;
    int gantt;        /* 1: block by block; 0: stacked bands */
    int arrows;       /* deadlines past the axis drawn as arrows */
    double x0, x1;    /* the plot's left and right edges, pixels */
    double top;       /* the plot's top */
    double pw, ph;    /* the plot's width and height */
    double xs, ys;    /* pixels per second, per GPU */
    char (*leg)[200]; /* legend entries: coloured jobs, others, marks */
    int nleg;
    int legcols, legrows;
    int nrej;         /* rejected jobs */
    double legy, rejy; /* the legend's and the rejected list's top */
    int H;            /* the picture's height */
} chart;

/* Jobs with GPU time, ranked; the first SVG_NCOLOURS get colours. */
static void chart_rank(chart *c)
{
    const plan *p = c->p;
    c->ord = ef_malloc(((size_t)p->njobs + 1) * sizeof *c->ord);
    c->col = ef_malloc(((size_t)p->njobs + 1) * sizeof *c->col);
    ranked *rk = ef_malloc(((size_t)p->njobs + 1) * sizeof *rk);
    c->nrun = 0;
    for (int i = 0; i < p->njobs; i++) {
        c->col[i] = -1;
        if (p->jobs[i].gpu_seconds > 0)
            rk[c->nrun++] = (ranked){p->jobs[i].gpu_seconds,
                                     p->jobs[i].in->id, i};
    }
    qsort(rk, (size_t)c->nrun, sizeof *rk, rank_cmp);
    for (int r = 0; r < c->nrun; r++)
        c->ord[r] = rk[r].job;
    free(rk);
    c->K = c->nrun < SVG_NCOLOURS ? c->nrun : SVG_NCOLOURS;
    for (int r = 0; r < c->K; r++)
        c->col[c->ord[r]] = r;
}

/* Block by block or in bands, and the axes: the time axis runs to the
 * last deadline when that is not far past the end, else a little past
 * the end, later deadlines as arrows. */
static void chart_axis(chart *c)
{
    const plan *p = c->p;
    c->gantt = c->nrun <= GANTT_MAX_JOBS;
    if (c->gantt) {
        c->blk = collect_blocks(p, 20L * GANTT_MAX_BLOCKS, &c->nblk);
        c->gantt = c->nblk <= GANTT_MAX_BLOCKS;
    }
    int64_t t0 = c->t0, tend = c->tend;
    int64_t last_dl = tend; /* latest deadline the chart marks */
    for (int i = 0; i < p->njobs; i++)
        if (marked(p, i) && (c->gantt || c->col[i] >= 0) &&
            p->jobs[i].in->deadline > last_dl)
            last_dl = p->jobs[i].in->deadline;
    c->t1 = last_dl - t0 <= (tend - t0) * 3 / 2
                ? last_dl + (last_dl - t0) / 50
                : tend + (tend - t0) / 50;
    if (c->t1 <= t0)
        c->t1 = t0 + 1;
    c->arrows = last_dl > c->t1;
    double mr = c->arrows ? MR_ARROWS : MR_PLAIN;
    int N = c->N;
    c->pw = W - ML - mr;
    c->ph = c->gantt ? (N * 14 < 160 ? 160 : N * 14 > 480 ? 480 : N * 14)
                     : 360;
    c->xs = c->pw / (double)(c->t1 - t0);
    c->ys = c->ph / N;
    c->top = TOP;
    c->x0 = ML;
    c->x1 = ML + c->pw;
}

/* The legend's entries and columns, the rejected list's lines, and the
 * picture's height. */
static void chart_legend(chart *c)
{
    const plan *p = c->p;
    int K = c->K;
    c->nleg = K + (c->nrun > K) + 1;
    c->leg = ef_malloc((size_t)c->nleg * sizeof *c->leg);
    double legw = 0; /* widest entry, pixels */
    for (int r = 0; r < K; r++) {
        const plan_job *j = &p->jobs[c->ord[r]];
        char d[48], gh[32], id[32];
        svg_short(j->in->id, 20, id, sizeof id);
        snprintf(gh, sizeof gh, "%.1f GPU-h", j->gpu_seconds / 3600.0);
        if (j->decision == PLAN_BEST_EFFORT)
            snprintf(c->leg[r], sizeof c->leg[r], "%s (%s), %s, best-effort",
                     id, j->in->model, gh);
        else
            snprintf(c->leg[r], sizeof c->leg[r],
                     "%s (%s), %s, deadline %s%s", id, j->in->model, gh,
                     svg_time_label(j->in->deadline, c->t0, c->z, d,
                                    sizeof d),
                     j->at_risk ? ", at risk" : "");
    }
    if (c->nrun > K) {
        double gs = 0;
        for (int r = K; r < c->nrun; r++)
            gs += p->jobs[c->ord[r]].gpu_seconds;
        snprintf(c->leg[K], sizeof c->leg[K], "others: %d jobs, %.1f GPU-h",
                 c->nrun - K, gs / 3600.0);
    }
    snprintf(c->leg[c->nleg - 1], sizeof c->leg[c->nleg - 1],
             "deadline (admitted job)");
    for (int k = 0; k < c->nleg; k++) {
        double w = svg_text_width(c->leg[k], 11);
        if (w > legw)
            legw = w;
    }
    c->legcols = (int)((W - 2 * 24) / (legw + 40));
    if (c->legcols < 1)
        c->legcols = 1;
    if (c->legcols > c->nleg)
        c->legcols = c->nleg;
    c->legrows = (c->nleg + c->legcols - 1) / c->legcols;
    c->nrej = 0;
    for (int i = 0; i < p->njobs; i++)
        c->nrej += p->jobs[i].decision == PLAN_REJECTED;
    int rejlines = c->nrej ? 1 + (c->nrej < MAX_REJECTED ? c->nrej
                                                         : MAX_REJECTED) +
                                 (c->nrej > MAX_REJECTED)
                           : 0;
    double axis_h = 62; /* time axis, its labels and title */
    c->legy = c->top + c->ph + axis_h + 10;
    c->rejy = c->legy + c->legrows * 18 + 14;
    c->H = (int)(c->rejy + rejlines * 16 + 10);
}

/* The title and the subtitle: counts, span, utilisation, how to read. */
static void draw_title(ef_buf *b, const chart *c)
{
    const plan *p = c->p;
    int64_t t0 = c->t0, tend = c->tend;
    svg_text(b, 24, 22, "font-size=\"15\" font-weight=\"bold\"",
             "efplan plan: %d job%s on %s (%d node%s x %d GPUs)", p->njobs,
             p->njobs == 1 ? "" : "s", p->cl.name, p->cl.nodes,
             p->cl.nodes == 1 ? "" : "s", c->G);
    char a[48], dur[32];
    double util = tend > t0 && c->N > 0
                      ? p->used_gpu_seconds / ((double)c->N * (tend - t0))
                      : 0;
    int wall = ef_ht_is_wall(t0) && c->z != EF_HT_EPOCH;
    char from[80] = "";
    if (wall)
        snprintf(from, sizeof from, " from %s%s",
                 svg_time_label(t0, t0, c->z, a, sizeof a),
                 c->z == EF_HT_UTC ? " UTC" : "");
    ef_ht_dur(tend - t0, dur, sizeof dur);
    svg_text(b, 24, 42, "fill=\"#333\"",
             "%d admitted, %d rejected, %d best-effort; plan%s %s long; "
             "GPUs %.1f%% busy%s", p->admitted, p->rejected, p->best_effort,
             from, dur, 100 * util,
             c->gantt ? "" : "; large plan: GPUs in use, stacked by job");
    svg_text(b, 24, 60, "font-size=\"11\" fill=\"#555\"", "%s",
             c->gantt ? "Each GPU is a row, grouped by node; a block is a job "
                        "on its GPUs, labelled where it fits. Dashed lines: "
                        "deadlines."
                      : "Coloured: the jobs with the most GPU-hours; grey: "
                        "all other jobs; white: idle GPUs. Dashed lines: "
                        "deadlines of the coloured jobs.");
}

/* Block by block: node bands and labels (groups of 'every' nodes, a
 * nice step, where a node is too thin for a label), the time axis, the
 * blocks, lines between nodes and the axis title. */
static void draw_gantt(ef_buf *b, const chart *c)
{
    const plan *p = c->p;
    double top = c->top, x0 = c->x0, ph = c->ph;
    double nh = c->G * c->ys; /* a node's height */
    int every = nh >= 13 ? 1
                         : (int)svg_nice_step(p->cl.nodes, (int)(ph / 13), 1);
    for (int nd = 0; nd < p->cl.nodes; nd += every) {
        double y = top + nd * nh;
        int n = nd + every <= p->cl.nodes ? every : p->cl.nodes - nd;
        if ((nd / every) % 2)
            ef_buf_printf(b, "<rect x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" "
                          "height=\"%.2f\" fill=\"#f3f3f3\"/>\n", x0, y,
                          c->pw, n * nh);
        if (every == 1)
            svg_text(b, x0 - 6, y + nh / 2 + 4, "text-anchor=\"end\" "
                     "font-size=\"11\"", "node %d", nd);
        else
            svg_text(b, x0 - 6, y + n * nh / 2 + 4, "text-anchor=\"end\" "
                     "font-size=\"11\"", "%d-%d", nd, nd + n - 1);
    }
    svg_time_axis(b, c->t0, c->t1, x0, c->x1, top + ph, top, c->z);
    draw_blocks(b, p, c->blk, c->nblk, c->col, x0, c->xs, top, c->ys, c->t0);
    for (int nd = every; nd < p->cl.nodes; nd += every)
        ef_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" "
                      "y2=\"%.2f\" stroke=\"#777\" "
                      "stroke-width=\"0.8\"/>\n", x0, top + nd * nh, c->x1,
                      top + nd * nh);
    char yl[64] = "GPUs by node"; /* the axis title */
    if (every > 1)
        snprintf(yl, sizeof yl, "nodes (%d GPUs each)", c->G);
    svg_ylabel(b, 16, top + ph / 2, yl);
}

/* The plot: block by block or stacked bands with their axes, the line
 * at the plan's end, a word when nothing is scheduled, the frame. */
static void draw_plot(ef_buf *b, const chart *c)
{
    const plan *p = c->p;
    double top = c->top, x0 = c->x0, ph = c->ph, pw = c->pw;
    int64_t t0 = c->t0, t1 = c->t1, tend = c->tend;
    if (c->gantt) {
        draw_gantt(b, c);
    } else {
        svg_time_axis(b, t0, t1, x0, c->x1, top + ph, top, c->z);
        draw_bands(b, p, c->col, c->K, x0, c->xs, top, ph, t0,
                   tend < t1 ? tend : t1);
        svg_value_axis(b, 0, c->N, x0, top + ph, top, -1, 8, 1, 0, 0, 0);
        svg_value_axis(b, 0, 1, c->x1, top + ph, top, 1, 5, 0, 1, 0, 0);
        svg_ylabel(b, 16, top + ph / 2, "GPUs in use");
        deadline_rug(b, p, c->col, x0, c->xs, top - 22, 16, t0, t1);
    }
    if (p->nslots && tend < t1)
        ef_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                      "y2=\"%.1f\" stroke=\"#333\"/>\n",
                      x0 + (tend - t0) * c->xs, top,
                      x0 + (tend - t0) * c->xs, top + ph);
    if (p->nslots == 0)
        svg_text(b, x0 + pw / 2, top + ph / 2, "text-anchor=\"middle\" "
                 "font-size=\"14\"", "%s", p->njobs ? "nothing scheduled"
                                                    : "no jobs (empty queue)");
    ef_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                  "height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n", x0, top,
                  pw, ph);
}

/* Deadlines: a dashed line and a triangle above the plot; past the
 * axis, an arrow in the right margin with the job and time (as many as
 * fit, then a note). */
static void draw_deadlines(ef_buf *b, const chart *c)
{
    const plan *p = c->p;
    double top = c->top, x1 = c->x1, ph = c->ph;
    int narrow = 0, maxarrow = (int)(ph / 13); /* arrows drawn, room */
    for (int i = 0; i < p->njobs; i++) {
        if (!marked(p, i) || !(c->gantt || c->col[i] >= 0))
            continue;
        const plan_job *j = &p->jobs[i];
        const char *f = c->col[i] >= 0 ? svg_colour(c->col[i]) : "#888";
        char d[48];
        svg_time_label(j->in->deadline, c->t0, c->z, d, sizeof d);
        if (j->in->deadline > c->t1) {
            if (narrow < maxarrow) {
                double y = top + 8 + narrow * 13;
                ef_buf_printf(b, "<path d=\"M%.1f %.1f l8 -4 l-8 -4 Z\" "
                              "fill=\"%s\"/>\n", x1 + 4, y, f);
                char attrs[64];
                snprintf(attrs, sizeof attrs, "font-size=\"10\" fill=\"%s\"",
                         f);
                char id[32];
                svg_text(b, x1 + 15, y - 0.5, attrs, "%s %s",
                         svg_short(j->in->id, 12, id, sizeof id), d);
            } else if (narrow == maxarrow) {
                svg_text(b, x1 + 4, top + 8 + narrow * 13, "font-size=\"10\"",
                         "more deadlines later");
            }
            narrow++;
            continue;
        }
        double x = c->x0 + (double)((j->in->deadline > c->t0 ? j->in->deadline
                                                             : c->t0) -
                                    c->t0) * c->xs;
        ef_buf_printf(b, "<g><title>deadline of ");
        svg_esc(b, j->in->id);
        ef_buf_printf(b, ": %s</title><line x1=\"%.2f\" y1=\"%.1f\" "
                      "x2=\"%.2f\" y2=\"%.1f\" stroke=\"%s\" "
                      "stroke-width=\"1.2\" stroke-dasharray=\"4,3\"/>"
                      "<path d=\"M%.2f %.1f l-4 -7 l8 0 Z\" fill=\"%s\"/>"
                      "</g>\n", d, x, top, x, top + ph, f, x, top - 1, f);
    }
}

/* The legend: a swatch per coloured job, the others, the deadline mark. */
static void draw_legend(ef_buf *b, const chart *c)
{
    double colw = (W - 2 * 24) / c->legcols; /* a legend column's width */
    for (int k = 0; k < c->nleg; k++) {
        double x = 24 + (k % c->legcols) * colw;
        double y = c->legy + (k / c->legcols) * 18;
        if (k == c->nleg - 1) {
            ef_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                          "y2=\"%.1f\" stroke=\"#555\" stroke-width=\"1.2\" "
                          "stroke-dasharray=\"4,3\"/>\n", x + 6, y - 12, x + 6,
                          y + 2);
        } else {
            ef_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" "
                          "height=\"12\" fill=\"%s\"/>\n", x, y - 10,
                          k < c->K ? svg_colour(k) : SVG_GREY);
        }
        svg_text(b, x + 20, y, "font-size=\"11\"", "%s", c->leg[k]);
    }
}

/* The rejected jobs, at most MAX_REJECTED by name, each with its reason
 * and the earliest deadline that could be promised. */
static void draw_rejected(ef_buf *b, const chart *c)
{
    const plan *p = c->p;
    double rejy = c->rejy;
    if (!c->nrej)
        return;
    svg_text(b, 24, rejy, "font-weight=\"bold\" fill=\"#a00\"",
             "rejected (%d): not admitted, their deadlines cannot be "
             "promised", c->nrej);
    int shown = 0;
    for (int i = 0; i < p->njobs && shown < MAX_REJECTED; i++) {
        const plan_job *j = &p->jobs[i];
        if (j->decision != PLAN_REJECTED)
            continue;
        char d[48] = "";
        if (j->earliest_feasible_deadline >= 0) {
            char t[48];
            snprintf(d, sizeof d, "; earliest deadline possible %s",
                     svg_time_label(j->earliest_feasible_deadline, c->t0,
                                    c->z, t, sizeof t));
        }
        shown++;
        char id[48];
        svg_text(b, 36, rejy + shown * 16, "font-size=\"11\"", "%s (%s): %s%s",
                 svg_short(j->in->id, 40, id, sizeof id), j->in->model,
                 j->reason[0] ? j->reason : "rejected", d);
    }
    if (c->nrej > shown)
        svg_text(b, 36, rejy + (shown + 1) * 16, "font-size=\"11\"",
                 "... and %d more (efplan plan --all lists every job)",
                 c->nrej - shown);
}

void plan_svg(const plan *p, ef_ht_zone z, ef_buf *out)
{
    chart c = {.p = p, .z = z, .N = p->cl.total_gpus,
               .G = p->cl.gpus_per_node, .t0 = p->now};
    c.tend = p->nslots ? p->slots[p->nslots - 1].end
                       : c.t0 + (p->opts.slot > 0 ? p->opts.slot : 1);
    chart_rank(&c);
    chart_axis(&c);
    chart_legend(&c);
    ef_buf b = {0};
    svg_open(&b, W, c.H);
    draw_title(&b, &c);
    draw_plot(&b, &c);
    draw_deadlines(&b, &c);
    draw_legend(&b, &c);
    draw_rejected(&b, &c);
    svg_close(&b);
    free(c.leg);
    free(c.blk);
    free(c.col);
    free(c.ord);
    ef_buf_put(out, b.s);
    free(b.s);
}
