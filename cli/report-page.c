/* report-page.c - the report's HTML page and its Markdown, written from
 * report.json alone (cmd-report.c gathers the numbers into it), so that the
 * three files always agree.  Plots by report-svg.c. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-page.h"
#include "phantom.h" /* cli_fmt_money */
#include "simmpi.h" /* SIMMPI_THROTTLED_SHARE */
#include "report-svg.h"

const char *report_jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* The unit a time of secs reads best in (s, ms or us), and its factor. */
static double time_unit_of(double secs, const char **unit)
{
    *unit = secs >= 1 ? "s" : secs >= 1e-3 ? "ms" : "us";
    return secs >= 1 ? 1 : secs >= 1e-3 ? 1e3 : 1e6;
}

/* "1.23 s", "45.6 ms", "789 us" */
const char *report_fmt_time(double secs, char *buf, size_t cap)
{
    const char *unit = "s";
    double k = secs == 0 ? 1 : time_unit_of(secs, &unit);
    snprintf(buf, cap, "%.3g %s", secs * k, unit);
    if (secs >= 1000)
        snprintf(buf, cap, "%.0f s", secs);
    return buf;
}

/* "$0.0123", "12.30 EUR", "0.0000404": three significant digits, at least
 * cents, in the currency as cli_fmt_money writes it. */
const char *report_fmt_money(double x, const char *currency, char *buf, size_t cap)
{
    int dec = x > 0 ? 2 - (int)floor(log10(x)) : 2;
    char amount[48];
    snprintf(amount, sizeof amount, "%.*f", dec < 2 ? 2 : dec > 12 ? 12 : dec, x);
    return cli_fmt_money(currency, amount, buf, cap);
}

static const char *currency_of(const json_t *r)
{
    const char *c = report_jstr(r, "currency");
    return c ? c : "";
}

/* ---- the page and the Markdown ------------------------------------------------------ */

static double num(const json_t *o, const char *key) { return json_number_value(json_object_get(o, key)); }

static void esc(FILE *f, const char *s) { svg_escape(f, s ? s : "?"); }

/* Markdown table cell: no '|' or newline breaks the row. */
static void md_cell(FILE *f, const char *s)
{
    for (s = s ? s : "?"; *s; s++)
        if (*s == '|')
            fputs("\\|", f);
        else
            fputc(*s == '\n' ? ' ' : *s, f);
}

/* The configs as one series per platform (time plot: x nodes, y time; cost
 * plot: x time, y cost, priced platforms only); a platform's colour is
 * that of its place among all platforms, the same in every plot. */
typedef struct sset {
    svg_series s[64];
    size_t ns;
    double *x, *y, *nodes;
    double tscale;     /* seconds to the plots' time unit */
    char time_label[48]; /* "predicted run time (ms)" */
} sset;

/* Times in the unit of the longest (1.34 ms reads "1.34", not "0.00134"). */
static void time_unit(sset *ss, const json_t *configs)
{
    double hi = 0;
    size_t i;
    const json_t *c;
    json_array_foreach(configs, i, c) hi = num(c, "time_s") > hi ? num(c, "time_s") : hi;
    const char *unit;
    ss->tscale = time_unit_of(hi, &unit);
    snprintf(ss->time_label, sizeof ss->time_label, "predicted run time (%s)", unit);
}

static void sset_build(sset *ss, const json_t *configs, int cost_plot)
{
    size_t n = json_array_size(configs), i, pidx = 0, cur = (size_t)-1;
    const json_t *c;
    ss->ns = 0;
    time_unit(ss, configs);
    ss->x = calloc(n + 1, sizeof *ss->x);
    ss->y = calloc(n + 1, sizeof *ss->y);
    ss->nodes = calloc(n + 1, sizeof *ss->nodes);
    json_array_foreach(configs, i, c) {
        if (i && strcmp(report_jstr(c, "platform"), report_jstr(json_array_get(configs, i - 1), "platform")) != 0)
            pidx++;
        if (!ss->x || !ss->y || !ss->nodes || (cost_plot && !json_is_true(json_object_get(c, "priced"))))
            continue;
        if (pidx != cur) {
            if (ss->ns == sizeof ss->s / sizeof ss->s[0])
                break;
            cur = pidx;
            ss->s[ss->ns++] = (svg_series){report_jstr(c, "platform"), svg_colour(pidx), 0, ss->x + i, ss->y + i,
                                           cost_plot ? ss->nodes + i : NULL, " n"};
        }
        ss->x[i] = cost_plot ? num(c, "time_s") * ss->tscale : num(c, "nodes");
        ss->y[i] = cost_plot ? num(c, "cost") : num(c, "time_s") * ss->tscale;
        ss->nodes[i] = num(c, "nodes");
        ss->s[ss->ns - 1].n++;
    }
}

static void sset_free(sset *ss)
{
    free(ss->x);
    free(ss->y);
    free(ss->nodes);
}

static svg_scale sset_scale(const sset *ss, int y, int integral)
{
    size_t n = 0;
    for (size_t i = 0; i < ss->ns; i++)
        n += ss->s[i].n;
    double *v = calloc(n + 1, sizeof *v);
    if (!v)
        return integral ? SVG_WHOLE : SVG_LINEAR;
    n = 0;
    for (size_t i = 0; i < ss->ns; i++)
        for (size_t k = 0; k < ss->s[i].n; k++)
            v[n++] = y ? ss->s[i].y[k] : ss->s[i].x[k];
    svg_scale sc = svg_pick_scale(v, n, integral);
    free(v);
    return sc;
}

static const char css[] =
    "body{font-family:'DejaVu Sans',Arial,sans-serif;color:#222;max-width:1000px;margin:24px auto;"
    "padding:0 16px;line-height:1.4}\n"
    "h1{font-size:26px;margin-bottom:4px}h2{font-size:21px;margin-top:36px;border-bottom:1px solid #ccc}\n"
    ".sub{color:#555;margin-top:0}\n"
    ".rec{font-size:21px;font-weight:bold;padding:12px 16px;border-left:8px solid #444444;"
    "background:#f2f2f2}\n"
    "table{border-collapse:collapse;margin:12px 0;font-size:15px}\n"
    "th,td{border:1px solid #bbb;padding:4px 10px;text-align:left}td.n{text-align:right}\n"
    "th{background:#eee}tr.chosen td{font-weight:bold}\n"
    ".warn{padding:8px 16px;border-left:8px solid #b35900;background:#fff3e6}\n"
    "code{font-size:14px;word-break:break-all}td:first-child{white-space:nowrap}\n"
    ".plot{display:block;margin:8px 0}\n" SVG_CSS;

/* The replays whose ranks shared their cores, in one sentence (cap bytes;
 * "" when none): it concerns every prediction, so it stands under the
 * recommendation. */
static void shared_cpu_text(const json_t *r, char *buf, size_t cap)
{
    static const char why[] = " had the CPU only that share of the time while replayed: other work shared the "
                              "node, so their computation holds the turns they waited, and the predictions are "
                              "longer for it. Replay on an idle node, a rank per core.";
    const json_t *runs = json_object_get(json_object_get(json_object_get(r, "provenance"), "replay"), "runs"), *e;
    size_t i, len = 0, room = cap > sizeof why + 8 ? cap - sizeof why - 8 : 0; /* the list's, "..." and all */
    buf[0] = 0;
    json_array_foreach(runs, i, e) {
        const char *who = report_jstr(e, "shared_cpu");
        if (!who)
            continue;
        if (len + strlen(who) + 2 > room) {
            len += (size_t)snprintf(buf + len, cap - len, "; ...");
            break;
        }
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? "; " : "", who);
    }
    if (len)
        snprintf(buf + len, cap - len, "%s", why);
}

/* What the simulation left out of every prediction, in one sentence (cap
 * bytes; "" when nothing). */
static void untraced_text(const json_t *r, char *buf, size_t cap)
{
    char what[1024];
    cli_untraced_text(json_object_get(r, "untraced"), what, sizeof what);
    if (!what[0])
        buf[0] = 0;
    else
        snprintf(buf, cap, "The simulation leaves out calls phantom does not trace: %s. Their time is part of "
                           "the ranks' computation as replayed, the same on every platform, so the "
                           "predictions do not see the network's part in it.", what);
}

static void html_warn(FILE *f, const char *text)
{
    if (!text[0])
        return;
    fputs("<p class=\"warn\">Warning: ", f);
    esc(f, text);
    fputs("</p>\n", f);
}

static void html_head(FILE *f, const json_t *r)
{
    const json_t *tr = json_object_get(json_object_get(r, "provenance"), "trace");
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>phantom report: ", f);
    esc(f, report_jstr(r, "study"));
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>Which machine, how many nodes?</h1>\n"
               "<p class=\"sub\">Predicted by phantom for <code>", css);
    esc(f, report_jstr(tr, "command"));
    fprintf(f, "</code> (%lld ranks), study <code>", (long long)json_integer_value(json_object_get(r, "ranks")));
    esc(f, report_jstr(r, "study"));
    fputs("</code>, report of ", f);
    esc(f, report_jstr(r, "date"));
    fputs(".</p>\n<p class=\"rec\">", f);
    esc(f, report_jstr(json_object_get(r, "recommendation"), "reason"));
    fputs("</p>\n", f);
    char warn[2048];
    shared_cpu_text(r, warn, sizeof warn);
    html_warn(f, warn);
    untraced_text(r, warn, sizeof warn);
    html_warn(f, warn);
}

static void html_time(FILE *f, const json_t *r)
{
    sset ss;
    sset_build(&ss, json_object_get(r, "configs"), 0);
    svg_axis x = {"nodes", sset_scale(&ss, 0, 1), NULL}, y = {ss.time_label, sset_scale(&ss, 1, 0), NULL};
    fputs("<h2>Time</h2>\n<p>Predicted run time against the number of nodes, one line per platform.</p>\n", f);
    svg_lines(f, "Predicted run time against nodes", &x, &y, ss.s, ss.ns);
    sset_free(&ss);
}

/* The Pareto front of the configs, by time, and the recommended point. */
static void html_cost_plot(FILE *f, const json_t *r, const sset *ss)
{
    const json_t *configs = json_object_get(r, "configs"), *c, *rec = json_object_get(r, "recommendation");
    size_t n = json_array_size(configs), i, k = 0;
    double *fx = calloc(n + 1, sizeof *fx), *fy = calloc(n + 1, sizeof *fy);
    json_array_foreach(configs, i, c) if (fx && fy && json_is_true(json_object_get(c, "pareto"))) {
        size_t j = k++;
        for (; j > 0 && fx[j - 1] > num(c, "time_s") * ss->tscale; j--) { /* insertion sort by time */
            fx[j] = fx[j - 1];
            fy[j] = fy[j - 1];
        }
        fx[j] = num(c, "time_s") * ss->tscale;
        fy[j] = num(c, "cost");
    }
    int shown = json_is_true(json_object_get(rec, "priced"));
    svg_front fr = {k, fx, fy, shown ? num(rec, "time_s") * ss->tscale : -1, shown ? num(rec, "cost") : -1};
    const char *cur = currency_of(r);
    char label[64];
    snprintf(label, sizeof label, *cur ? "cost of a run (%s)" : "cost of a run", cur);
    /* a symbol on every tick ("$0.05"); a code ("EUR") in the title only,
     * as the seconds of the time axis: on the ticks it would crowd the title */
    svg_axis x = {ss->time_label, sset_scale(ss, 0, 0), NULL},
             y = {label, sset_scale(ss, 1, 0), *cur && cli_currency_is_symbol(cur) ? cur : NULL};
    svg_scatter(f, "Cost of a run against its time", &x, &y, ss->s, ss->ns, &fr);
    free(fx);
    free(fy);
}

static void html_config_rows(FILE *f, const json_t *r)
{
    const json_t *c, *rec = json_object_get(r, "recommendation");
    size_t i;
    char t[32], m[32];
    json_array_foreach(json_object_get(r, "configs"), i, c) {
        int chosen = strcmp(report_jstr(c, "platform"), report_jstr(rec, "platform")) == 0 && num(c, "nodes") == num(rec, "nodes");
        int pr = json_is_true(json_object_get(c, "priced"));
        fprintf(f, "<tr%s><td>", chosen ? " class=\"chosen\"" : "");
        esc(f, report_jstr(c, "platform"));
        fprintf(f, "</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td><td class=\"n\">%s</td>"
                   "<td class=\"n\">%s</td><td>%s%s</td></tr>\n", num(c, "nodes"), num(c, "ppn"),
                report_fmt_time(num(c, "time_s"), t, sizeof t),
                pr ? report_fmt_money(num(c, "cost"), currency_of(r), m, sizeof m) : "no price",
                json_is_true(json_object_get(c, "pareto")) ? "on the front" : "", chosen ? " (recommended)" : "");
    }
}

static void html_cost(FILE *f, const json_t *r)
{
    sset ss;
    sset_build(&ss, json_object_get(r, "configs"), 1);
    fputs("<h2>Cost</h2>\n<p>Cost of a run (price per node-hour &times; nodes &times; predicted time) against "
          "the predicted time, one point per platform and node count (4 n: 4 nodes).  The Pareto front joins the choices that "
          "no other beats on both time and cost; the ring is the recommended choice.</p>\n", f);
    if (ss.ns)
        html_cost_plot(f, r, &ss);
    else
        fputs("<p><b>No platform file states a price per node-hour: there is nothing to plot.</b></p>\n", f);
    sset_free(&ss);
    fputs("<p class=\"rec\">", f);
    esc(f, report_jstr(json_object_get(r, "recommendation"), "reason"));
    fputs("</p>\n<table><tr><th>platform</th><th>nodes</th><th>ranks per node</th><th>predicted time</th>"
          "<th>cost of a run</th><th>Pareto</th></tr>\n", f);
    html_config_rows(f, r);
    fputs("</table>\n", f);
}

/* The breakdown whose share `key` is largest. */
static const json_t *worst_breakdown(const json_t *r, const char *key)
{
    const json_t *b, *worst = NULL;
    size_t i;
    json_array_foreach(json_object_get(r, "breakdown"), i, b)
        if (!worst || num(b, key) > num(worst, key))
            worst = b;
    return worst;
}

/* When failed polls are a tenth or more of some platform's time, one
 * sentence on the least certain part of the prediction; when waits in
 * successful Tests are a twentieth, one on those; else NULL. */
static const char *poll_note(const json_t *r, char *buf, size_t cap)
{
    const json_t *polls = worst_breakdown(r, "failed_poll_share");
    const json_t *waits = worst_breakdown(r, "test_wait_share");
    size_t len = 0;
    buf[0] = 0;
    if (polls && num(polls, "failed_poll_share") >= 0.1)
        len += (size_t)snprintf(buf, cap, "Tests and Iprobes that found nothing are %.0f%% of the ranks' time on %s.  "
                                "Their number is the recorded run's, set by its timing, not the target's: this part "
                                "of the prediction is the least certain (doc/simmpi.md, section 4).",
                                100 * num(polls, "failed_poll_share"), report_jstr(polls, "platform"));
    if (waits && num(waits, "test_wait_share") >= 0.05 && len < cap)
        snprintf(buf + len, cap - len, "%sOn %s the ranks wait %.0f%% of their time in Tests that the recorded run "
                 "saw succeed, for messages not yet delivered: a program that works between its polls would go on "
                 "working there, so %.0f%% of their time, of their polling loops' later work, is counted as done in "
                 "those waits.", len ? "  " : "", report_jstr(waits, "platform"), 100 * num(waits, "test_wait_share"),
                 100 * num(waits, "test_wait_credit_share"));
    return buf[0] ? buf : NULL;
}

static void html_breakdown(FILE *f, const json_t *r)
{
    const json_t *bd = json_object_get(r, "breakdown"), *b;
    size_t n = json_array_size(bd), i;
    char **labels = calloc(n + 1, sizeof *labels);
    double *share = calloc(3 * n + 1, sizeof *share);
    static const char *const parts[3] = {"computation", "communication", "wait"};
    static const char *const colours[3] = {SVG_COMP, SVG_COMM, SVG_WAIT};
    fputs("<h2>Breakdown</h2>\n<p>Where the time goes, as a share of the ranks' total time (the sum over "
          "ranks): computation, communication (MPI overhead and transfer) and wait (for a partner that has not "
          "arrived).  Each platform at its recommended node count, or at its fastest when it is not the "
          "recommended platform.</p>\n", f);
    json_array_foreach(bd, i, b) if (labels && share) {
        if (asprintf(&labels[i], "%s, %.0f node%s (%s)", report_jstr(b, "platform"), num(b, "nodes"),
                     num(b, "nodes") == 1 ? "" : "s", report_jstr(b, "at")) < 0)
            labels[i] = NULL;
        share[3 * i] = num(b, "comp_share");
        share[3 * i + 1] = num(b, "comm_share");
        share[3 * i + 2] = num(b, "wait_share");
    }
    if (labels && share)
        svg_bars(f, "Computation, communication and wait", "share of the ranks' total time",
                 (const char *const *)labels, n, parts, colours, 3, share);
    for (i = 0; labels && i < n; i++)
        free(labels[i]);
    free(labels);
    free(share);
    char note[800];
    if (poll_note(r, note, sizeof note)) {
        fputs("<p><b>Note.</b> ", f);
        esc(f, note);
        fputs("</p>\n", f);
    }
}

static void html_hot_spots(FILE *f, const json_t *r)
{
    const json_t *hs = json_object_get(r, "hot_spots"), *e;
    size_t i;
    char a[32], b[32];
    fprintf(f, "<h2>Hot spots</h2>\n<p>The top call sites by communication and wait time on %.0f node%s of ",
            num(hs, "nodes"), num(hs, "nodes") == 1 ? "" : "s");
    esc(f, report_jstr(hs, "platform"));
    fputs(" (the recommended choice), summed over ranks.</p>\n<table><tr><th>#</th><th>MPI call</th>"
          "<th>call site</th><th>calls</th><th>communication</th><th>wait</th><th>share of the ranks' time</th>"
          "</tr>\n", f);
    json_array_foreach(json_object_get(hs, "sites"), i, e) {
        fprintf(f, "<tr><td class=\"n\">%zu</td><td>", i + 1);
        esc(f, report_jstr(e, "call"));
        fputs("</td><td><code>", f);
        esc(f, report_jstr(e, "where"));
        fprintf(f, "</code></td><td class=\"n\">%.0f</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                   "<td class=\"n\">%.1f%%</td></tr>\n", num(e, "calls"), report_fmt_time(num(e, "comm_s"), a, sizeof a),
                report_fmt_time(num(e, "wait_s"), b, sizeof b), num(e, "share") * 100);
    }
    fputs("</table>\n", f);
}

static void html_what_if(FILE *f, const json_t *r)
{
    const json_t *e;
    size_t i;
    char a[32], b[32], c[32];
    fputs("<h2>What-if</h2>\n<p>Each platform at each node count it was predicted for, as it is, with "
          "computation twice as fast (computation &times;0.5) and with the network twice as fast (network "
          "&times;0.5), as in PHANTOM Section 8.7.</p>\n<table><tr><th>platform</th><th>nodes</th>"
          "<th>predicted time</th><th>computation &times;0.5</th><th>network &times;0.5</th><th>reading</th>"
          "</tr>\n", f);
    json_array_foreach(json_object_get(r, "what_if"), i, e) {
        fprintf(f, "<tr%s><td>", json_is_true(json_object_get(e, "recommended")) ? " class=\"chosen\"" : "");
        esc(f, report_jstr(e, "platform"));
        fprintf(f, "</td><td class=\"n\">%.0f</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                   "<td class=\"n\">%s</td><td>", num(e, "nodes"), report_fmt_time(num(e, "base_s"), a, sizeof a),
                report_fmt_time(num(e, "comp_half_s"), b, sizeof b), report_fmt_time(num(e, "net_half_s"), c, sizeof c));
        esc(f, report_jstr(e, "reading"));
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (!json_array_size(json_object_get(r, "what_if")))
        fputs("<p>The study has no what-if predictions.</p>\n", f);
}

/* In the study's currency: a platform that does not say its own is taken
 * to mean it (cmd-report.c, study_currency). */
static const char *price_text(const json_t *r, const json_t *platform, char *buf, size_t cap)
{
    if (!json_is_true(json_object_get(platform, "priced")))
        return "no price";
    return report_fmt_money(num(platform, "price_per_node_hour"), currency_of(r), buf, cap);
}

/* The calibration cell: its date and how, and a warning when the node's CPU
 * was paused for part of the time (cpu_share below SIMMPI_THROTTLED_SHARE). */
static const char *calibration_text(const json_t *platform, char *buf, size_t cap)
{
    const char *when = report_jstr(platform, "calibrated");
    double share = num(platform, "cpu_share");
    if (share <= 0 || share >= SIMMPI_THROTTLED_SHARE)
        return when ? when : "not stated";
    snprintf(buf, cap, "%s; WARNING: its CPU ran %.0f%% of the time while calibrated (a quota or a busy node): "
             "communication will take longer than predicted", when ? when : "not stated", 100 * share);
    return buf;
}

static void html_kv(FILE *f, const char *k, const char *v, int code)
{
    fprintf(f, "<tr><th>%s</th><td>%s", k, code ? "<code>" : "");
    esc(f, v);
    fprintf(f, "%s</td></tr>\n", code ? "</code>" : "");
}

static void html_provenance(FILE *f, const json_t *r)
{
    const json_t *pv = json_object_get(r, "provenance"), *tr = json_object_get(pv, "trace"), *e;
    const json_t *rp = json_object_get(pv, "replay");
    size_t i;
    char m[32], cal[400];
    fputs("<h2>Provenance</h2>\n<table>\n", f);
    html_kv(f, "trace", report_jstr(tr, "path"), 1);
    html_kv(f, "recorded on host", report_jstr(tr, "host"), 0);
    html_kv(f, "recorded at", report_jstr(tr, "recorded"), 0);
    html_kv(f, "MPI library", report_jstr(tr, "mpi"), 0);
    html_kv(f, "command line", report_jstr(tr, "command"), 1);
    html_kv(f, "replay", report_jstr(rp, "path"), 1);
    html_kv(f, "report date", report_jstr(r, "date"), 0);
    fputs("</table>\n<p>Ranks replayed on the target node, and for how many iterations of their loop (all: the "
          "whole run):</p>\n<table><tr><th>ranks</th><th>iterations</th><th>mode</th><th>date</th></tr>\n", f);
    json_array_foreach(json_object_get(rp, "runs"), i, e) {
        fputs("<tr><td>", f);
        esc(f, report_jstr(e, "ranks"));
        fputs("</td><td>", f);
        esc(f, report_jstr(e, "iterations"));
        fputs("</td><td>", f);
        esc(f, report_jstr(e, "mode"));
        fputs("</td><td>", f);
        esc(f, report_jstr(e, "date"));
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n<table><tr><th>platform</th><th>file</th><th>price per node-hour</th><th>calibrated</th>"
          "</tr>\n", f);
    json_array_foreach(json_object_get(pv, "platforms"), i, e) {
        fputs("<tr><td>", f);
        esc(f, report_jstr(e, "name"));
        fputs("</td><td><code>", f);
        esc(f, report_jstr(e, "file"));
        fprintf(f, "</code></td><td class=\"n\">%s</td><td>", price_text(r, e, m, sizeof m));
        esc(f, calibration_text(e, cal, sizeof cal));
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

void report_write_html(FILE *f, const json_t *r)
{
    html_head(f, r);
    html_time(f, r);
    html_cost(f, r);
    html_breakdown(f, r);
    html_hot_spots(f, r);
    html_what_if(f, r);
    html_provenance(f, r);
    fputs("<p class=\"sub\">Written by phantom report; the same numbers are in report.json and report.md "
          "beside this page.</p>\n</body>\n</html>\n", f);
}

/* ---- Markdown ---- */

static void md_configs(FILE *f, const json_t *r)
{
    const json_t *c;
    size_t i;
    char t[32], m[32];
    fputs("\n## Time and cost\n\n| platform | nodes | ranks per node | predicted time | cost of a run | Pareto |\n"
          "|---|--:|--:|--:|--:|---|\n", f);
    json_array_foreach(json_object_get(r, "configs"), i, c) {
        fputs("| ", f);
        md_cell(f, report_jstr(c, "platform"));
        fprintf(f, " | %.0f | %.0f | %s | %s | %s |\n", num(c, "nodes"), num(c, "ppn"),
                report_fmt_time(num(c, "time_s"), t, sizeof t),
                json_is_true(json_object_get(c, "priced")) ? report_fmt_money(num(c, "cost"), currency_of(r), m, sizeof m)
                                                           : "no price",
                json_is_true(json_object_get(c, "pareto")) ? "on the front" : "");
    }
}

static void md_breakdown(FILE *f, const json_t *r)
{
    const json_t *b;
    size_t i;
    char x[32], y[32], z[32];
    fputs("\n## Breakdown\n\nShare of the ranks' total time; each platform at its recommended node count, or its "
          "fastest.\n\n| platform | nodes | at | computation | communication | wait |\n|---|--:|---|--:|--:|--:|\n", f);
    json_array_foreach(json_object_get(r, "breakdown"), i, b) {
        fputs("| ", f);
        md_cell(f, report_jstr(b, "platform"));
        fprintf(f, " | %.0f | %s | %s (%.1f%%) | %s (%.1f%%) | %s (%.1f%%) |\n", num(b, "nodes"), report_jstr(b, "at"),
                report_fmt_time(num(b, "comp_s"), x, sizeof x), num(b, "comp_share") * 100,
                report_fmt_time(num(b, "comm_s"), y, sizeof y), num(b, "comm_share") * 100,
                report_fmt_time(num(b, "wait_s"), z, sizeof z), num(b, "wait_share") * 100);
    }
    char note[800];
    if (poll_note(r, note, sizeof note))
        fprintf(f, "\n**Note.** %s\n", note);
}

static void md_hot_spots(FILE *f, const json_t *r)
{
    const json_t *hs = json_object_get(r, "hot_spots"), *e;
    size_t i;
    char a[32], b[32];
    fprintf(f, "\n## Hot spots\n\nTop call sites on %.0f node%s of ", num(hs, "nodes"), num(hs, "nodes") == 1 ? "" : "s");
    md_cell(f, report_jstr(hs, "platform"));
    fputs(" (the recommended choice).\n\n| # | MPI call | call site | calls | communication | wait | share |\n"
          "|--:|---|---|--:|--:|--:|--:|\n", f);
    json_array_foreach(json_object_get(hs, "sites"), i, e) {
        fprintf(f, "| %zu | ", i + 1);
        md_cell(f, report_jstr(e, "call"));
        fputs(" | `", f);
        md_cell(f, report_jstr(e, "where"));
        fprintf(f, "` | %.0f | %s | %s | %.1f%% |\n", num(e, "calls"), report_fmt_time(num(e, "comm_s"), a, sizeof a),
                report_fmt_time(num(e, "wait_s"), b, sizeof b), num(e, "share") * 100);
    }
}

static void md_what_if(FILE *f, const json_t *r)
{
    const json_t *e;
    size_t i;
    char a[32], b[32], c[32];
    fputs("\n## What-if\n\n| platform | nodes | predicted time | computation x0.5 | network x0.5 | reading |\n"
          "|---|--:|--:|--:|--:|---|\n", f);
    json_array_foreach(json_object_get(r, "what_if"), i, e) {
        fputs("| ", f);
        md_cell(f, report_jstr(e, "platform"));
        fprintf(f, " | %.0f | %s | %s | %s | ", num(e, "nodes"), report_fmt_time(num(e, "base_s"), a, sizeof a),
                report_fmt_time(num(e, "comp_half_s"), b, sizeof b), report_fmt_time(num(e, "net_half_s"), c, sizeof c));
        md_cell(f, report_jstr(e, "reading"));
        fputs(" |\n", f);
    }
}

static void md_provenance(FILE *f, const json_t *r)
{
    const json_t *pv = json_object_get(r, "provenance"), *tr = json_object_get(pv, "trace"), *e;
    size_t i;
    char m[32], cal[400];
    fprintf(f, "\n## Provenance\n\n- trace: `%s`, recorded on host %s at %s\n- MPI library: %s\n"
               "- command line: `%s`\n- replay: `%s`\n- report date: %s\n\n| ranks replayed | iterations | mode | "
               "date |\n|---|---|---|---|\n", report_jstr(tr, "path"), report_jstr(tr, "host") ? report_jstr(tr, "host") : "?",
            report_jstr(tr, "recorded") ? report_jstr(tr, "recorded") : "?", report_jstr(tr, "mpi") ? report_jstr(tr, "mpi") : "?",
            report_jstr(tr, "command") ? report_jstr(tr, "command") : "?", report_jstr(json_object_get(pv, "replay"), "path"),
            report_jstr(r, "date"));
    json_array_foreach(json_object_get(json_object_get(pv, "replay"), "runs"), i, e)
        fprintf(f, "| %s | %s | %s | %s |\n", report_jstr(e, "ranks") ? report_jstr(e, "ranks") : "?", report_jstr(e, "iterations"),
                report_jstr(e, "mode") ? report_jstr(e, "mode") : "?", report_jstr(e, "date") ? report_jstr(e, "date") : "?");
    fputs("\n| platform | file | price per node-hour | calibrated |\n|---|---|--:|---|\n", f);
    json_array_foreach(json_object_get(pv, "platforms"), i, e) {
        fputs("| ", f);
        md_cell(f, report_jstr(e, "name"));
        fputs(" | `", f);
        md_cell(f, report_jstr(e, "file"));
        fprintf(f, "` | %s | ", price_text(r, e, m, sizeof m));
        md_cell(f, calibration_text(e, cal, sizeof cal));
        fputs(" |\n", f);
    }
}

static void md_warn(FILE *f, const char *text)
{
    if (text[0])
        fprintf(f, "\n> Warning: %s\n", text);
}

void report_write_md(FILE *f, const json_t *r)
{
    fprintf(f, "# Which machine, how many nodes?\n\nPredicted by phantom for `%s` (%lld ranks), study `%s`, "
               "report of %s.\n\n**%s**\n",
            report_jstr(json_object_get(json_object_get(r, "provenance"), "trace"), "command"),
            (long long)json_integer_value(json_object_get(r, "ranks")), report_jstr(r, "study"), report_jstr(r, "date"),
            report_jstr(json_object_get(r, "recommendation"), "reason"));
    char warn[2048];
    shared_cpu_text(r, warn, sizeof warn);
    md_warn(f, warn);
    untraced_text(r, warn, sizeof warn);
    md_warn(f, warn);
    md_configs(f, r);
    md_breakdown(f, r);
    md_hot_spots(f, r);
    md_what_if(f, r);
    md_provenance(f, r);
}
