/* report-svg.c - line chart, scatter with a front and stacked bars as inline
 * SVG for `phantom report` (see report-svg.h). */
#include "report-svg.h"
#include "phantom.h" /* cli_currency_is_symbol */

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Okabe & Ito, "Color Universal Design" (2002): distinguishable with every
 * common colour vision deficiency.  Yellow last: it is faint on white. */
static const char *const palette[SVG_NCOLOURS] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                                  "#000000", "#56B4E9", "#F0E442"};

const char *svg_colour(size_t i) { return palette[i % SVG_NCOLOURS]; }

enum { W = 780, H = 400, ML = 110, MR = 190, MT = 44, MB = 64, MAXTICKS = 32 };

void svg_escape(FILE *f, const char *s)
{
    for (; s && *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
}

/* ---- scales and ticks ---------------------------------------------------------------- */

typedef struct axis_map {
    svg_scale kind;
    double lo, hi;  /* data range shown, in data units */
    double p0, p1;  /* pixels of lo and hi */
    double tick[MAXTICKS];
    int nticks;
} axis_map;

static double fwd(svg_scale k, double v)
{
    return k == SVG_LOG2 ? log2(v) : k == SVG_LOG10 ? log10(v) : v;
}

static double to_px(const axis_map *a, double v)
{
    double t0 = fwd(a->kind, a->lo), t1 = fwd(a->kind, a->hi);
    return a->p0 + (fwd(a->kind, v) - t0) / (t1 - t0) * (a->p1 - a->p0);
}

svg_scale svg_pick_scale(const double *v, size_t n, int integral)
{
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(v[i] > 0))
            return integral ? SVG_WHOLE : SVG_LINEAR;
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    if (!n || hi < (integral ? 4 : 10) * lo)
        return integral ? SVG_WHOLE : SVG_LINEAR;
    return integral ? SVG_LOG2 : SVG_LOG10;
}

/* 1, 2 or 5 times a power of ten, near x (Heckbert, Graphics Gems, 1990). */
static double nice(double x)
{
    double e = floor(log10(x)), f = x / pow(10, e);
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * pow(10, e);
}

static void ticks_linear(axis_map *a, double lo, double hi, int whole)
{
    lo = lo > 0 ? 0 : lo; /* amounts read best from zero */
    if (hi <= lo)
        hi = lo + (lo != 0 ? fabs(lo) : 1);
    double step = nice((hi - lo) / 5);
    if (whole && step < 1)
        step = 1;
    a->lo = floor(lo / step) * step;
    a->hi = ceil(hi / step - 1e-9) * step;
    for (double t = a->lo; t <= a->hi + step / 2 && a->nticks < MAXTICKS; t += step)
        a->tick[a->nticks++] = fabs(t) < step / 1e6 ? 0 : t;
}

static void ticks_log2(axis_map *a, double lo, double hi)
{
    int e0 = (int)floor(log2(lo) + 1e-9), e1 = (int)ceil(log2(hi) - 1e-9);
    if (e1 <= e0)
        e1 = e0 + 1;
    int step = (e1 - e0 + 9) / 10;
    a->lo = ldexp(1, e0);
    a->hi = ldexp(1, e1);
    for (int e = e0; e <= e1 && a->nticks < MAXTICKS; e += step)
        a->tick[a->nticks++] = ldexp(1, e);
}

/* Ticks at 1, 2, 5 x 10^k over up to three decades, else at powers of ten;
 * the range snaps to the ticks around the data. */
static void ticks_log10(axis_map *a, double lo, double hi)
{
    int e0 = (int)floor(log10(lo) + 1e-9), e1 = (int)ceil(log10(hi) - 1e-9);
    if (e1 <= e0)
        e1 = e0 + 1;
    static const double m125[] = {1, 2, 5}, m1[] = {1};
    const double *m = e1 - e0 <= 3 ? m125 : m1;
    int nm = e1 - e0 <= 3 ? 3 : 1;
    double cand[MAXTICKS * 2];
    int n = 0;
    for (int e = e0; e <= e1; e++)
        for (int i = 0; i < nm && n < MAXTICKS * 2; i++)
            cand[n++] = m[i] * pow(10, e);
    int first = 0, last = n - 1;
    while (first + 1 < n && cand[first + 1] <= lo * (1 + 1e-9))
        first++;
    while (last > first + 1 && cand[last - 1] >= hi * (1 - 1e-9))
        last--;
    a->lo = cand[first];
    a->hi = cand[last];
    for (int i = first; i <= last && a->nticks < MAXTICKS; i++)
        a->tick[a->nticks++] = cand[i];
}

static void axis_fit(axis_map *a, svg_scale kind, double lo, double hi, double p0, double p1)
{
    a->kind = kind;
    a->p0 = p0;
    a->p1 = p1;
    a->nticks = 0;
    if ((kind == SVG_LOG2 || kind == SVG_LOG10) && lo > 0)
        (kind == SVG_LOG2 ? ticks_log2 : ticks_log10)(a, lo, hi);
    else {
        a->kind = kind == SVG_WHOLE ? SVG_WHOLE : SVG_LINEAR;
        ticks_linear(a, lo, hi, kind == SVG_WHOLE);
    }
}

static void data_range(const svg_series *s, size_t ns, int y, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < ns; i++)
        for (size_t k = 0; k < s[i].n; k++) {
            double v = y ? s[i].y[k] : s[i].x[k];
            *lo = v < *lo ? v : *lo;
            *hi = v > *hi ? v : *hi;
        }
    if (*lo > *hi)
        *lo = *hi = 1;
}

/* ---- drawing ------------------------------------------------------------------------------- */

/* Decimals that show every tick exactly: 0.00002, not 2e-05. */
static int tick_decimals(const axis_map *a)
{
    int d = 0;
    for (int i = 0; i < a->nticks && d < 12; i++) {
        double v = fabs(a->tick[i]) * pow(10, d);
        if (fabs(v - round(v)) > 1e-6 * (v > 1 ? v : 1)) {
            d++;
            i = -1;
        }
    }
    return d;
}

static void tick_label(FILE *f, const svg_axis *ax, const axis_map *a, double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.*f", tick_decimals(a), v);
    if (ax->unit && cli_currency_is_symbol(ax->unit)) /* "$2", "€2", but "2 s" */
        fprintf(f, "%s%s", ax->unit, buf);
    else
        fprintf(f, "%s%s%s", buf, ax->unit ? " " : "", ax->unit ? ax->unit : "");
}

static void open_svg(FILE *f, const char *title, int w, int h)
{
    fprintf(f, "<svg class=\"plot\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
               "aria-label=\"", w, h, w, h);
    svg_escape(f, title);
    fprintf(f, "\">\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n"
               "<text x=\"%d\" y=\"24\" class=\"title\">", w, h, ML);
    svg_escape(f, title);
    fputs("</text>\n", f);
}

static int is_log(const axis_map *a) { return a->kind == SVG_LOG2 || a->kind == SVG_LOG10; }

static void draw_axes(FILE *f, const axis_map *xa, const axis_map *ya, const svg_axis *x,
                      const svg_axis *y)
{
    for (int i = 0; i < ya->nticks; i++) {
        double py = to_px(ya, ya->tick[i]);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"grid\"/>"
                   "<text x=\"%d\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">", ML, py, W - MR, py,
                ML - 6, py + 4);
        tick_label(f, y, ya, ya->tick[i]);
        fputs("</text>\n", f);
    }
    for (int i = 0; i < xa->nticks; i++) {
        double px = to_px(xa, xa->tick[i]);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/>"
                   "<text x=\"%.1f\" y=\"%d\" class=\"tick\" text-anchor=\"middle\">", px, MT, px, H - MB,
                px, H - MB + 18);
        tick_label(f, x, xa, xa->tick[i]);
        fputs("</text>\n", f);
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>"
               "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n",
            ML, H - MB, W - MR, H - MB, ML, MT, ML, H - MB);
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"label\" text-anchor=\"middle\">", (ML + W - MR) / 2, H - 16);
    svg_escape(f, x->label);
    fprintf(f, "%s</text>\n<text x=\"18\" y=\"%d\" class=\"label\" text-anchor=\"middle\" "
               "transform=\"rotate(-90 18 %d)\">", is_log(xa) ? " (log scale)" : "",
            (MT + H - MB) / 2, (MT + H - MB) / 2);
    svg_escape(f, y->label);
    fprintf(f, "%s</text>\n", is_log(ya) ? " (log scale)" : "");
}

/* Legend entry k at the right of the plot: a swatch drawn by the caller's kind. */
static void legend_text(FILE *f, int k, const char *text)
{
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"legend\">", W - MR + 42, MT + 14 + 24 * k);
    svg_escape(f, text);
    fputs("</text>\n", f);
}

static void legend_series(FILE *f, int k, const svg_series *s, int line)
{
    int y = MT + 9 + 24 * k, x = W - MR + 12;
    if (line)
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"4\"/>",
                x, y, x + 24, y, s->colour);
    fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"6\" fill=\"%s\"/>", x + 12, y, s->colour);
    legend_text(f, k, s->name);
}

static void fit_axes(axis_map *xa, axis_map *ya, const svg_axis *x, const svg_axis *y,
                     const svg_series *s, size_t ns)
{
    double lo, hi;
    data_range(s, ns, 0, &lo, &hi);
    axis_fit(xa, x->scale, lo, hi, ML + 16, W - MR - 16);
    data_range(s, ns, 1, &lo, &hi);
    axis_fit(ya, y->scale, lo, hi, H - MB, MT);
}

void svg_lines(FILE *f, const char *title, const svg_axis *x, const svg_axis *y, const svg_series *s,
               size_t ns)
{
    axis_map xa, ya;
    fit_axes(&xa, &ya, x, y, s, ns);
    open_svg(f, title, W, H);
    draw_axes(f, &xa, &ya, x, y);
    for (size_t i = 0; i < ns; i++) {
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"4\" points=\"", s[i].colour);
        for (size_t k = 0; k < s[i].n; k++)
            fprintf(f, "%s%.1f,%.1f", k ? " " : "", to_px(&xa, s[i].x[k]), to_px(&ya, s[i].y[k]));
        fputs("\"/>\n", f);
        for (size_t k = 0; k < s[i].n; k++)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"%s\"/>\n", to_px(&xa, s[i].x[k]),
                    to_px(&ya, s[i].y[k]), s[i].colour);
        legend_series(f, (int)i, &s[i], 1);
    }
    fputs("</svg>\n", f);
}

static void draw_front(FILE *f, const axis_map *xa, const axis_map *ya, const svg_front *fr, int k)
{
    if (fr->n) {
        fputs("<polyline fill=\"none\" stroke=\"#000000\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\" "
              "points=\"", f);
        for (size_t i = 0; i < fr->n; i++)
            fprintf(f, "%s%.1f,%.1f", i ? " " : "", to_px(xa, fr->x[i]), to_px(ya, fr->y[i]));
        fputs("\"/>\n", f);
        int y = MT + 9 + 24 * k, x = W - MR + 12;
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000000\" stroke-width=\"1.5\" "
                   "stroke-dasharray=\"6 4\"/>", x, y, x + 24, y);
        legend_text(f, k, "Pareto front");
    }
    if (fr->hx >= 0) {
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"12\" fill=\"none\" stroke=\"#000000\" "
                   "stroke-width=\"2.5\"/>\n", to_px(xa, fr->hx), to_px(ya, fr->hy));
        int y = MT + 9 + 24 * (k + 1), x = W - MR + 24;
        fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"8\" fill=\"none\" stroke=\"#000000\" "
                   "stroke-width=\"2\"/>", x, y);
        legend_text(f, k + 1, "recommended");
    }
}

/* A point's tag, a few characters of 12 px type: its box, left to right
 * and top to bottom in pixels. */
typedef struct tag_box {
    double x0, x1, y0, y1;
} tag_box;

static int boxes_meet(const tag_box *a, const tag_box *b)
{
    return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* Where a tag may go round its point, in the order tried. */
static const struct tag_place {
    double dx, dy; /* the text's anchor from the point */
    int end;       /* anchored at its end: left of the point */
} tag_places[] = {{10, -8, 0}, {10, 18, 0}, {-10, -8, 1}, {-10, 18, 1}};

static tag_box tag_box_at(double px, double py, size_t c, double w)
{
    double x = px + tag_places[c].dx, y = py + tag_places[c].dy;
    return (tag_box){tag_places[c].end ? x - w : x, tag_places[c].end ? x : x + w, y - 12, y + 3};
}

/* Writes the tag of the point at (px, py) at the first of four places
 * round it (above right, below right, above left, below left) that meets
 * no tag placed before, so that two platforms' points at nearly one time
 * and cost keep both their node counts readable; where all four meet one,
 * above right.  placed[*n] gets its box; placed NULL (out of memory): above
 * right, whatever is there. */
static void place_tag(FILE *f, double px, double py, const char *text, tag_box *placed, size_t *n)
{
    const size_t nplaces = sizeof tag_places / sizeof tag_places[0];
    double w = 7.0 * (double)strlen(text) + 2; /* 12 px type: at most 7 px a character */
    size_t c = 0;
    for (; placed && c < nplaces; c++) {
        tag_box b = tag_box_at(px, py, c, w);
        size_t k = 0;
        while (k < *n && !boxes_meet(&b, &placed[k]))
            k++;
        if (k == *n)
            break;
    }
    if (c == nplaces)
        c = 0;
    if (placed)
        placed[(*n)++] = tag_box_at(px, py, c, w);
    const struct tag_place *at = &tag_places[c];
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tag\"%s>%s</text>", px + at->dx, py + at->dy,
            at->end ? " text-anchor=\"end\"" : "", text);
}

void svg_scatter(FILE *f, const char *title, const svg_axis *x, const svg_axis *y, const svg_series *s,
                 size_t ns, const svg_front *front)
{
    axis_map xa, ya;
    fit_axes(&xa, &ya, x, y, s, ns);
    open_svg(f, title, W, H);
    draw_axes(f, &xa, &ya, x, y);
    size_t npoints = 0, ntags = 0;
    for (size_t i = 0; i < ns; i++)
        npoints += s[i].n;
    tag_box *placed = calloc(npoints ? npoints : 1, sizeof *placed);
    for (size_t i = 0; i < ns; i++) {
        for (size_t k = 0; k < s[i].n; k++) {
            double px = to_px(&xa, s[i].x[k]), py = to_px(&ya, s[i].y[k]);
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"7\" fill=\"%s\"/>", px, py, s[i].colour);
            if (s[i].tag) {
                char text[64];
                snprintf(text, sizeof text, "%g%s", s[i].tag[k], s[i].tag_unit ? s[i].tag_unit : "");
                place_tag(f, px, py, text, placed, &ntags);
            }
            fputc('\n', f);
        }
        legend_series(f, (int)i, &s[i], 0);
    }
    free(placed);
    draw_front(f, &xa, &ya, front, (int)ns);
    fputs("</svg>\n", f);
}

/* ---- stacked bars ---------------------------------------------------------------------------- */

enum { BAR_H = 30, BAR_GAP = 30, BAR_ML = ML };

static void bar_segments(FILE *f, int y, const char *label, const char *const *parts,
                         const char *const *colours, size_t nparts, const double *share)
{
    double x = BAR_ML, span = W - MR - BAR_ML;
    for (size_t p = 0; p < nparts; p++) {
        double w = share[p] * span;
        if (w <= 0)
            continue;
        fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>", x, y, w,
                BAR_H, colours[p]);
        svg_escape(f, label);
        fputs(": ", f);
        svg_escape(f, parts[p]);
        fprintf(f, " %.1f%%</title></rect>", share[p] * 100);
        if (share[p] >= 0.08)
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"inbar\" text-anchor=\"middle\">%.0f%%</text>",
                    x + w / 2, y + BAR_H / 2 + 5, share[p] * 100);
        x += w;
    }
    fputc('\n', f);
}

int svg_bars_height(size_t nbars) { return MT + (int)nbars * (BAR_H + BAR_GAP) + 50; }
int svg_width(void) { return W; }

void svg_file_begin(FILE *f, int w, int h)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n"
               "<style>\n" SVG_CSS "</style>\n", w, h, w, h);
}

void svg_file_end(FILE *f) { fputs("</svg>\n", f); }

void svg_bars(FILE *f, const char *title, const char *xlabel, const char *const *labels, size_t nbars,
              const char *const *parts, const char *const *colours, size_t nparts,
              const double *share)
{
    int h = svg_bars_height(nbars);
    open_svg(f, title, W, h);
    int base = MT + (int)nbars * (BAR_H + BAR_GAP);
    for (int t = 0; t <= 4; t++) {
        double px = BAR_ML + t / 4.0 * (W - MR - BAR_ML);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/>"
                   "<text x=\"%.1f\" y=\"%d\" class=\"tick\" text-anchor=\"middle\">%d%%</text>\n",
                px, MT, px, base, px, base + 18, t * 25);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"label\" text-anchor=\"middle\">", (BAR_ML + W - MR) / 2,
            base + 40);
    svg_escape(f, xlabel);
    fputs("</text>\n", f);
    for (size_t b = 0; b < nbars; b++) {
        int y = MT + BAR_GAP + (int)b * (BAR_H + BAR_GAP);
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"tick\">", BAR_ML, y - 6);
        svg_escape(f, labels[b]);
        fputs("</text>", f);
        bar_segments(f, y, labels[b], parts, colours, nparts, share + b * nparts);
    }
    for (size_t p = 0; p < nparts; p++) {
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"24\" height=\"14\" fill=\"%s\"/>", W - MR + 12,
                MT + 2 + 24 * (int)p, colours[p]);
        legend_text(f, (int)p, parts[p]);
    }
    fputs("</svg>\n", f);
}
