/* report-page.h - the report's HTML page and Markdown (report-page.c), and
 * the number formats the report's sentences share with them. */
#ifndef PHANTOM_REPORT_PAGE_H
#define PHANTOM_REPORT_PAGE_H

#include <jansson.h>
#include <stdio.h>

/* The page (self-contained: inline CSS and SVG, no scripts) and the
 * Markdown, from report.json's document r. */
void report_write_html(FILE *f, const json_t *r);
void report_write_md(FILE *f, const json_t *r);

/* "1.23 s", "45.6 ms", "789 us" */
const char *report_fmt_time(double secs, char *buf, size_t cap);
/* "$0.0123", "12.30 EUR": three significant digits, at least cents, in
 * currency (a platform's, "" if unsaid) */
const char *report_fmt_money(double x, const char *currency, char *buf, size_t cap);
/* The string at key, or NULL. */
const char *report_jstr(const json_t *o, const char *key);

#endif
