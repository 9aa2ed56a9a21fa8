/*
 * svg.h: what every efplan chart shares (svg_*): the document frame, text
 * escaped for XML, a text width estimate (to decide whether a label
 * fits), one palette of job colours and the ink readable on each, and
 * the axes: value axes with "nice" ticks (1, 2, 5 x 10^k) and the time
 * axis (dates and times when the chart is on the wall clock, hours from
 * the start otherwise). The charts themselves live with their data:
 * plan_svg (planner/plansvg.c), sim_svg and cmp_svg
 * (simulator/). Nothing here prints; everything appends to an ef_buf.
 * Output depends only on the arguments (no locale, no clock).
 */
#ifndef EF_SVG_H
#define EF_SVG_H

#include <stdint.h>

#include "common/htime.h"
#include "common/util.h"

/* 's' cut to at most 'max' characters (bytes; a cut one ends in "..."),
 * into dst[0..n); returns dst. For ids in legends. */
const char *svg_short(const char *s, int max, char *dst, size_t n);

/* Colours in the palette (svg_colour): jobs past it are drawn grey. */
#define SVG_NCOLOURS 20

/* The grey of everything not drawn in its own colour ("others"). */
#define SVG_GREY "#c4c4c4"

/* Open a w x h document (sans-serif, font size 12, white background). */
void svg_open(ef_buf *b, int w, int h);

/* Close the document opened by svg_open. */
void svg_close(ef_buf *b);

/* Append 's' as XML character data or attribute text: <, >, &, " and '
 * escaped, control characters (below 0x20, and 0x7f) dropped, each byte
 * that does not start a well-formed UTF-8 character XML allows written
 * as "?" (so a cut or invalid id never makes the document invalid). */
void svg_esc(ef_buf *b, const char *s);

/*
 * svg_text: append <text x y ATTRS>TEXT</text>, TEXT formatted as printf
 * does (at most 511 bytes; longer is cut) and escaped (svg_esc). 'attrs'
 * is raw attribute text written as is ("" for none; never user text).
 */
void svg_text(ef_buf *b, double x, double y, const char *attrs,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* A vertical axis title: 's' (escaped) read bottom to top, centred on
 * (x, y). */
void svg_ylabel(ef_buf *b, double x, double y, const char *s);

/* The width in pixels 's' takes at font size 'size', estimated from its
 * length in characters (UTF-8 continuation bytes not counted), a little
 * wide for sans-serif fonts: a label that fits by this estimate fits. */
double svg_text_width(const char *s, double size);

/* Colour k of the palette (k >= 0; wraps at SVG_NCOLOURS): "#rrggbb",
 * distinct neighbours, dark enough for white text on most. */
const char *svg_colour(int k);

/* "white" or "black": the text colour readable on fill "#rrggbb". */
const char *svg_ink(const char *fill);

/* The smallest "nice" step (1, 2 or 5 x 10^k, k >= 0 when 'integer')
 * that cuts [0, span] into at most 'max_ticks' steps (span > 0,
 * max_ticks >= 1). */
double svg_nice_step(double span, int max_ticks, int integer);

/*
 * svg_value_axis: a vertical axis for values v0..v1 (v1 > v0) drawn from
 * pixel y0 (v0, bottom) up to y1 (v1, top) at x: ticks at multiples of
 * a nice step (at most 'max_ticks'), labels "%g" (with '%' appended when
 * 'percent', the value taken as a fraction then), on the left of x when
 * 'side' < 0, on the right when > 0; light gridlines from gx0 to gx1
 * when gx1 > gx0.
 */
void svg_value_axis(ef_buf *b, double v0, double v1, double x, double y0,
                    double y1, int side, int max_ticks, int integer,
                    int percent, double gx0, double gx1);

/*
 * svg_time_axis: a horizontal time axis for [t0, t1] (t1 > t0) drawn
 * from pixel x0 (t0) to x1 (t1) at y (the bottom of a plot whose top is
 * ytop: gridlines run from ytop to y; none when ytop >= y). When t0 is on
 * the wall clock (ef_ht_is_wall) and 'z' is not EF_HT_EPOCH, ticks fall
 * on round times in UTC and read "HH:MM" (the date "YYYY-MM-DD" below
 * the first one and wherever the day changes), or dates for steps of a
 * day or more, in zone 'z' (ef_ht_fmt); otherwise they read the time
 * from t0: "0h", "2h", ... ("30m", "1h30", "2d" as the span asks). Tick
 * labels stay between x0 - 40 and x1 + 40 (a chart leaves that margin).
 * The axis title under the labels says which: "time (UTC)", "time
 * (UTC+02:00)", "time from the start".
 */
void svg_time_axis(ef_buf *b, int64_t t0, int64_t t1, double x0, double x1,
                   double y, double ytop, ef_ht_zone z);

/* Label time t of a chart whose axis starts at t0 as svg_time_axis does
 * for a lone time: "YYYY-MM-DD HH:MM" on the wall clock (zone 'z'),
 * else the offset from t0 as ef_ht_dur writes it with a "+" ("+8h 05m").
 * Writes dst[0..n) (48 bytes suffice); returns dst. */
const char *svg_time_label(int64_t t, int64_t t0, ef_ht_zone z, char *dst,
                           size_t n);

#endif
