/* dendro.c - the dendrogram as text and as SVG (Fig. 8 of the paper). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define LIST_MAX 16 /* ranks listed for a merge in the text form */

/* Leaves under id, in tree order, into out (at most cap). */
static uint32_t leaves(const cl_dendrogram *d, uint32_t id, uint32_t *out, uint32_t cap, uint32_t *stack)
{
    uint32_t sp = 0, k = 0;
    stack[sp++] = id;
    while (sp && k < cap) {
        uint32_t x = stack[--sp];
        if (x < d->n) {
            out[k++] = x;
            continue;
        }
        stack[sp++] = d->merges[x - d->n].right; /* left is visited first */
        stack[sp++] = d->merges[x - d->n].left;
    }
    return k;
}

static int by_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

int cl_dendrogram_text(const cl_dendrogram *d, double scale, FILE *out)
{
    uint32_t *stack = malloc(((size_t)d->n + 2) * sizeof *stack), buf[LIST_MAX];
    if (!stack)
        return -1;
    fprintf(out, "# dendrogram of %u ranks: complete linkage, Manhattan distance (Equation 1)\n"
                 "# ids below %u are ranks, id %u+s is the cluster of merge s; height in ns and in %% "
                 "of the mean computation per rank (%.0f ns)\n"
                 "# %6s %8s %8s %7s %14s %9s  ranks\n",
            d->n, d->n, d->n, scale, "merge", "left", "right", "size", "height_ns", "height_%");
    for (uint32_t s = 0; d->n && s + 1 < d->n; s++) {
        const cl_merge *m = &d->merges[s];
        char ranks[LIST_MAX * 12 + 8] = "...";
        if (m->size <= LIST_MAX) {
            uint32_t k = leaves(d, d->n + s, buf, LIST_MAX, stack);
            qsort(buf, k, sizeof *buf, by_u32);
            char *r = cl_format_ranks(buf, k);
            snprintf(ranks, sizeof ranks, "%s", r ? r : "?");
            free(r);
        }
        if (isfinite(m->height))
            fprintf(out, "  %6u %8u %8u %7u %14.1f %8.3f%%  %s\n", s, m->left, m->right, m->size,
                    m->height, scale > 0 ? 100 * m->height / scale : 0.0, ranks);
        else
            fprintf(out, "  %6u %8u %8u %7u %14s %9s  %s\n", s, m->left, m->right, m->size, "inf",
                    "inf", ranks);
    }
    free(stack);
    return ferror(out) ? -1 : 0;
}

/* ---- SVG ------------------------------------------------------------------------------ */

typedef struct svg {
    FILE *out;
    const cl_dendrogram *d;
    double *x;        /* by id: leaves, then merges */
    double top, base, inf_y, hmax;
} svg;

static double y_of(const svg *s, double h)
{
    if (!isfinite(h))
        return s->inf_y;
    return s->base - (s->hmax > 0 ? h / s->hmax : 0) * (s->base - s->top);
}

static double node_y(const svg *s, uint32_t id)
{
    return id < s->d->n ? s->base : y_of(s, s->d->merges[id - s->d->n].height);
}

static void draw_merges(svg *s)
{
    uint32_t n = s->d->n;
    for (uint32_t k = 0; n && k + 1 < n; k++) {
        const cl_merge *m = &s->d->merges[k];
        double xl = s->x[m->left], xr = s->x[m->right], y = y_of(s, m->height);
        s->x[n + k] = (xl + xr) / 2;
        fprintf(s->out, "<path d=\"M%.1f %.1fV%.1fH%.1fV%.1f\" class=\"%s\"/>\n", xl, node_y(s, m->left),
                y, xr, node_y(s, m->right), isfinite(m->height) ? "m" : "inf");
    }
}

static void draw_axis(const svg *s, double scale, double left)
{
    fprintf(s->out, "<path d=\"M%.1f %.1fV%.1f\" class=\"ax\"/>\n", left, s->base, s->top);
    for (int t = 0; t <= 4; t++) {
        double h = s->hmax * t / 4, y = y_of(s, h);
        fprintf(s->out, "<path d=\"M%.1f %.1fh-4\" class=\"ax\"/><text x=\"%.1f\" y=\"%.1f\" "
                        "text-anchor=\"end\">%.3g%%</text>\n",
                left, y, left - 6, y + 4, scale > 0 ? 100 * h / scale : 0.0);
    }
    fprintf(s->out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">&#8734;</text>\n", left - 6,
            s->inf_y + 4);
}

static void put_escaped(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", out);
        else if (*s == '>')
            fputs("&gt;", out);
        else if (*s == '&')
            fputs("&amp;", out);
        else
            fputc(*s, out);
    }
}

int cl_dendrogram_svg(const cl_dendrogram *d, double scale, double cut, const char *title, FILE *out)
{
    uint32_t n = d->n, *order = malloc(((size_t)n + 1) * sizeof *order);
    uint32_t *stack = malloc(((size_t)n + 2) * sizeof *stack);
    svg s = {out, d, calloc(2 * (size_t)n + 1, sizeof(double)), 60, 420, 40, 0};
    if (!order || !stack || !s.x) {
        free(order);
        free(stack);
        free(s.x);
        return -1;
    }
    double dx = n ? fmax(4, fmin(24, 1100.0 / n)) : 1, left = 80, right = left + dx * n;
    double width = fmax(660, right + 90); /* room for the cut's label and the caption */
    uint32_t k = n ? leaves(d, n > 1 ? 2 * n - 2 : 0, order, n, stack) : 0;
    for (uint32_t i = 0; i < k; i++)
        s.x[order[i]] = left + dx * (i + 0.5);
    for (uint32_t m = 0; n && m + 1 < n; m++)
        if (isfinite(d->merges[m].height))
            s.hmax = fmax(s.hmax, d->merges[m].height);
    if (cut > s.hmax)
        s.hmax = cut;
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"500\" "
                 "font-family=\"sans-serif\" font-size=\"11\">\n<style>.m{fill:none;stroke:#246;"
                 "stroke-width:1.2}.inf{fill:none;stroke:#999;stroke-dasharray:4 3}.ax{stroke:#000;"
                 "fill:none}.cut{stroke:#c22;stroke-dasharray:6 3}</style>\n"
                 "<text x=\"%.1f\" y=\"20\" font-size=\"14\">",
            width, left);
    put_escaped(out, title ? title : "dendrogram");
    fputs("</text>\n", out);
    draw_axis(&s, scale, left - 10);
    draw_merges(&s);
    if (cut >= 0)
        fprintf(out, "<path d=\"M%.1f %.1fH%.1f\" class=\"cut\"/><text x=\"%.1f\" y=\"%.1f\" "
                     "fill=\"#c22\">cut %.3g%%</text>\n",
                left - 10, y_of(&s, cut), right + 10, right + 14, y_of(&s, cut) + 4,
                scale > 0 ? 100 * cut / scale : 0.0);
    for (uint32_t i = 0; i < k && n <= 256; i++) /* beyond that the labels overlap */
        fprintf(out, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"end\">%u</text>\n",
                s.x[order[i]] + 4, s.base + 6, order[i]);
    fprintf(out, "<text x=\"%.1f\" y=\"490\">ranks (complete linkage, Manhattan distance; height in %% "
                 "of the mean computation per rank)</text>\n</svg>\n", left);
    free(order);
    free(stack);
    free(s.x);
    return ferror(out) ? -1 : 0;
}
