/* report-svg.h - the plots of `phantom report` (inline in its HTML page) and
 * of `phantom predict --svg` (a file of its own): small, self-contained SVG
 * (no scripts, no fonts, no network).
 *
 * Three kinds: a line chart (one line per series), a scatter with a front
 * (points, and a dashed line through the points on the front) and
 * horizontal stacked bars of shares.  Axes are linear or logarithmic with
 * "nice" ticks; colours come from a fixed colour-blind-safe palette
 * (Okabe and Ito), so that a test can look for them in a screenshot.
 */
#ifndef PHANTOM_REPORT_SVG_H
#define PHANTOM_REPORT_SVG_H

#include <stddef.h>
#include <stdio.h>

/* The palette: series i gets svg_colour(i) ("#rrggbb"). */
#define SVG_NCOLOURS 7
const char *svg_colour(size_t i);
/* Colours of the parts of the stacked bars, apart from the series colours 0 and 1. */
#define SVG_COMP "#56B4E9"
#define SVG_COMM "#D55E00"
#define SVG_WAIT "#999999"

/* The plots' style rules (classes title, tick, label, legend, inbar, tag,
 * grid, axis), for a page's style sheet or a standalone file's. */
#define SVG_CSS                                                                                           \
    ".plot text{fill:#222;font-family:'DejaVu Sans',Arial,sans-serif}\n"                                 \
    ".title{font-size:16px;font-weight:bold}.tick{font-size:13px}.label{font-size:14px}"                  \
    ".legend{font-size:14px}.inbar{font-size:13px}.tag{font-size:12px}\n"                                 \
    ".grid{stroke:#dddddd;stroke-width:1}.axis{stroke:#333333;stroke-width:1.5}\n"

/* SVG_WHOLE: linear, ticks at whole numbers only (node counts) */
typedef enum { SVG_LINEAR, SVG_LOG2, SVG_LOG10, SVG_WHOLE } svg_scale;

typedef struct svg_axis {
    const char *label;
    svg_scale scale;
    const char *unit; /* appended to tick labels ("s", "EUR"; one without letters, "$", is put in front), or NULL */
} svg_axis;

typedef struct svg_series {
    const char *name; /* legend text */
    const char *colour;
    size_t n;
    const double *x, *y;
    const double *tag;    /* svg_scatter: a number written by each point, or NULL */
    const char *tag_unit; /* after the tag */
} svg_series;

/* The scale that reads best for values v[n]: log base 2 for integral ones
 * (node counts) spanning a factor of 4 or more, log base 10 for others
 * spanning a factor of 10 or more, else linear (SVG_WHOLE for integral
 * ones: no tick at half a node). */
svg_scale svg_pick_scale(const double *v, size_t n, int integral);

/* One line per series, with markers, axes, ticks and a legend. */
void svg_lines(FILE *f, const char *title, const svg_axis *x, const svg_axis *y, const svg_series *s,
               size_t ns);

/* Points per series; the front (fx, fy sorted by x, nf points) joined by a
 * dashed line, and the point (hx, hy) ringed as the choice (hx < 0: none). */
typedef struct svg_front {
    size_t n;
    const double *x, *y;
    double hx, hy;
} svg_front;
void svg_scatter(FILE *f, const char *title, const svg_axis *x, const svg_axis *y, const svg_series *s,
                 size_t ns, const svg_front *front);

/* Horizontal bars, one per label, each split into nparts shares (share[b *
 * nparts + p], summing to at most 1) coloured colours[p], with a legend;
 * xlabel under the percent axis.  Each part's rectangle has a title (a
 * tooltip): "LABEL: PART NN.N%". */
void svg_bars(FILE *f, const char *title, const char *xlabel, const char *const *labels, size_t nbars,
              const char *const *parts, const char *const *colours, size_t nparts,
              const double *share);
/* The height svg_bars draws nbars bars in (its width: svg_width). */
int svg_bars_height(size_t nbars);
int svg_width(void);

/* A plot as a file of its own: the XML declaration and an outer <svg> of
 * w x h with the namespace and SVG_CSS, then the plot, then the end. */
void svg_file_begin(FILE *f, int w, int h);
void svg_file_end(FILE *f);

/* Writes s with &, <, > and " escaped. */
void svg_escape(FILE *f, const char *s);

#endif
