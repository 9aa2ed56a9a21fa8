/* svg.c: what every efplan chart shares (see svg.h). */
#include "common/svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void svg_open(ef_buf *b, int w, int h)
{
    ef_buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                  "height=\"%d\" viewBox=\"0 0 %d %d\" "
                  "font-family=\"DejaVu Sans, Verdana, sans-serif\" "
                  "font-size=\"12\">\n"
                  "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                  w, h, w, h);
}

void svg_close(ef_buf *b)
{
    ef_buf_put(b, "</svg>\n");
}

/* The length of the well-formed UTF-8 sequence at s that XML allows
 * (no surrogates, no U+FFFE / U+FFFF, at most U+10FFFF), or 0. */
static int utf8_len(const unsigned char *s)
{
    int n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
    if (n == 0 || s[0] > 0xf4)
        return 0;
    unsigned long c = s[0] & (0x3f >> (n - 1));
    for (int k = 1; k < n; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[k] & 0x3f);
    }
    static const unsigned long least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < least[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) ||
        c == 0xfffe || c == 0xffff)
        return 0;
    return n;
}

void svg_esc(ef_buf *b, const char *s)
{
    while (*s) {
        unsigned char c = (unsigned char)*s;
        int n = 1;
        if (c == '<')
            ef_buf_put(b, "&lt;");
        else if (c == '>')
            ef_buf_put(b, "&gt;");
        else if (c == '&')
            ef_buf_put(b, "&amp;");
        else if (c == '"')
            ef_buf_put(b, "&quot;");
        else if (c == '\'')
            ef_buf_put(b, "&apos;");
        else if (c >= 0x20 && c < 0x7f)
            ef_buf_printf(b, "%c", c);
        else if (c >= 0x80) {
            n = utf8_len((const unsigned char *)s);
            if (n > 0) {
                ef_buf_printf(b, "%.*s", n, s);
            } else {
                ef_buf_put(b, "?");
                n = 1;
            }
        }
        s += n;
    }
}

void svg_text(ef_buf *b, double x, double y, const char *attrs,
              const char *fmt, ...)
{
    char s[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    ef_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\"%s%s>", x, y,
                  attrs[0] ? " " : "", attrs);
    svg_esc(b, s);
    ef_buf_put(b, "</text>\n");
}

void svg_ylabel(ef_buf *b, double x, double y, const char *s)
{
    ef_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                  "transform=\"rotate(-90 %.1f %.1f)\">", x, y, x, y);
    svg_esc(b, s);
    ef_buf_put(b, "</text>\n");
}

double svg_text_width(const char *s, double size)
{
    int chars = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            chars++;
    return chars * 0.64 * size;
}

const char *svg_short(const char *s, int max, char *dst, size_t n)
{
    if (max < 4)
        max = 4;
    if ((int)strlen(s) <= max)
        snprintf(dst, n, "%s", s);
    else
        snprintf(dst, n, "%.*s...", max - 3, s);
    return dst;
}

/* Twenty colours, neighbours far apart in hue and lightness. */
static const char *const palette[SVG_NCOLOURS] = {
    "#2f6fd0", "#e0552b", "#2a9a4a", "#8e4fb8", "#e8a317",
    "#138c9e", "#cf2f6e", "#6b7f1a", "#8a5634", "#5252c8",
    "#f07c3c", "#1d7363", "#b0307f", "#78a82a", "#b22a2a",
    "#3b93c9", "#a57d4f", "#6a3d9a", "#c79a00", "#39845a"};

const char *svg_colour(int k)
{
    return palette[(k < 0 ? -k : k) % SVG_NCOLOURS];
}

const char *svg_ink(const char *fill)
{
    unsigned r = 0, g = 0, bl = 0;
    if (fill[0] != '#' || sscanf(fill + 1, "%2x%2x%2x", &r, &g, &bl) != 3)
        return "black";
    return 0.299 * r + 0.587 * g + 0.114 * bl > 160.0 ? "black" : "white";
}

double svg_nice_step(double span, int max_ticks, int integer)
{
    if (max_ticks < 1)
        max_ticks = 1;
    if (!(span > 0))
        return 1;
    double raw = span / max_ticks;
    double mag = pow(10.0, floor(log10(raw)));
    static const double m[] = {1, 2, 5, 10};
    double step = 10 * mag;
    for (int k = 0; k < 4; k++)
        if (m[k] * mag >= raw * (1 - 1e-9)) {
            step = m[k] * mag;
            break;
        }
    if (integer && step < 1)
        step = 1;
    return step;
}

void svg_value_axis(ef_buf *b, double v0, double v1, double x, double y0,
                    double y1, int side, int max_ticks, int integer,
                    int percent, double gx0, double gx1)
{
    double step = svg_nice_step(v1 - v0, max_ticks, integer);
    double k0 = ceil(v0 / step - 1e-9);
    ef_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                  "stroke=\"#444\"/>\n", x, y0, x, y1);
    for (double k = k0;; k++) {
        double v = k * step;
        if (v == 0)
            v = 0; /* not -0 */
        if (v > v1 + step * 1e-9)
            break;
        double y = y0 + (y1 - y0) * (v - v0) / (v1 - v0);
        if (gx1 > gx0)
            ef_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                          "y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n", gx0, y, gx1,
                          y);
        ef_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                      "y2=\"%.1f\" stroke=\"#444\"/>\n", x, y,
                      x + (side < 0 ? -4 : 4), y);
        const char *anchor = side < 0 ? "text-anchor=\"end\""
                                      : "text-anchor=\"start\"";
        double lx = x + (side < 0 ? -7 : 7);
        if (percent)
            svg_text(b, lx, y + 4, anchor, "%g%%", v * 100);
        else
            svg_text(b, lx, y + 4, anchor, "%g", v);
    }
}

/* Tick steps of a time axis, seconds; past the last, whole days. */
static const int64_t time_steps[] = {
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200,
    10800, 21600, 43200, 86400, 172800, 604800};

/* The label of offset 'off' on a relative axis with tick 'step' over
 * 'span' seconds. */
static void rel_label(int64_t off, int64_t step, int64_t span, char *dst,
                      size_t n)
{
    long long o = (long long)off;
    if (span >= 4 * 86400 && o % 86400 == 0)
        snprintf(dst, n, "%lldd", o / 86400);
    else if (span >= 4 * 86400 && o % 3600 == 0)
        snprintf(dst, n, "%lldd%02lldh", o / 86400, o % 86400 / 3600);
    else if (step % 3600 == 0 || (span >= 7200 && o % 3600 == 0))
        snprintf(dst, n, "%lldh", o / 3600);
    else if (step % 60 == 0 && span >= 7200)
        snprintf(dst, n, "%lldh%02lld", o / 3600, o % 3600 / 60);
    else if (step % 60 == 0)
        snprintf(dst, n, "%lldm", o / 60);
    else
        snprintf(dst, n, "%llds", o);
}

void svg_time_axis(ef_buf *b, int64_t t0, int64_t t1, double x0, double x1,
                   double y, double ytop, ef_ht_zone z)
{
    int wall = ef_ht_is_wall(t0) && z != EF_HT_EPOCH;
    int64_t span = t1 > t0 ? t1 - t0 : 1;
    double width = x1 - x0;
    /* at most one label per 'room' pixels */
    int max = (int)(width / (wall ? 75 : 55));
    if (max < 2)
        max = 2;
    int64_t step = 0; /* seconds between ticks */
    for (size_t k = 0; k < sizeof time_steps / sizeof time_steps[0]; k++)
        if (span / time_steps[k] <= max) {
            step = time_steps[k];
            break;
        }
    if (!step)
        step = (int64_t)svg_nice_step((double)span / 86400.0, max, 1) * 86400;
    /* wall clock: round times (UTC); else from t0 */
    int64_t first = wall ? (t0 + step - 1) / step * step : t0;
    char prev_date[16] = ""; /* the date under the previous tick */
    ef_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                  "stroke=\"#444\"/>\n", x0, y, x1, y);
    for (int64_t t = first; t <= t1; t += step) {
        double x = x0 + width * (double)(t - t0) / (double)span;
        if (ytop < y)
            ef_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                          "y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n", x, ytop, x,
                          y);
        ef_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                      "y2=\"%.1f\" stroke=\"#444\"/>\n", x, y, x, y + 4);
        char lab[48];
        if (!wall) {
            rel_label(t - t0, step, span, lab, sizeof lab);
            svg_text(b, x, y + 16, "text-anchor=\"middle\"", "%s", lab);
            continue;
        }
        char iso[48], date[16];
        ef_ht_fmt(t, z, iso, sizeof iso);
        snprintf(date, sizeof date, "%.10s", iso);
        if (step >= 86400) {
            svg_text(b, x, y + 16, "text-anchor=\"middle\"", "%s", date);
            continue;
        }
        svg_text(b, x, y + 16, "text-anchor=\"middle\"", "%.5s", iso + 11);
        if (strcmp(date, prev_date) != 0)
            svg_text(b, x, y + 29, "text-anchor=\"middle\" font-size=\"10\" "
                     "fill=\"#555\"", "%s", date);
        snprintf(prev_date, sizeof prev_date, "%s", date);
    }
    double mid = (x0 + x1) / 2, ty = y + (wall && step < 86400 ? 44 : 32);
    if (!wall) {
        svg_text(b, mid, ty, "text-anchor=\"middle\"", "time from the start");
    } else {
        char iso[48];
        ef_ht_fmt(t0, z, iso, sizeof iso);
        svg_text(b, mid, ty, "text-anchor=\"middle\"", "time (UTC%s)",
                 strcmp(iso + 19, "Z") == 0 ? "" : iso + 19);
    }
}

const char *svg_time_label(int64_t t, int64_t t0, ef_ht_zone z, char *dst,
                           size_t n)
{
    if (ef_ht_is_wall(t0) && z != EF_HT_EPOCH) {
        char iso[48];
        ef_ht_fmt(t, z, iso, sizeof iso);
        snprintf(dst, n, "%.10s %.5s", iso, iso + 11);
    } else {
        char d[32];
        ef_ht_dur(t - t0, d, sizeof d);
        snprintf(dst, n, "%s%s", t >= t0 ? "+" : "", d);
    }
    return dst;
}
