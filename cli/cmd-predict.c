/* cmd-predict.c - `phantom predict TRACE --platform FILE|NAME`: the predicted run
 * time of the traced application on a target platform (SIM-MPI, Zhai et
 * al., Section 6), with where the time goes: computation, MPI overhead,
 * transfer and synchronisation wait, per rank, per MPI function and per
 * call site.
 *
 * The simulator is simmpi/ (API in simmpi/simmpi.h); this verb reads the
 * options, builds the rank-to-node map and prints the result.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cluster.h"
#include "phantom.h"
#include "rep_vectors.h"
#include "report-svg.h"
#include "simmpi.h"

extern const ph_verb cmd_predict;

static const char usage[] =
    "usage: phantom predict TRACE --platform FILE|NAME [options]\n"
    "\n"
    "Predict how long the application traced in TRACE runs on the platform\n"
    "described by FILE.  Every rank replays its communication sequence on a\n"
    "virtual clock; its computation units come from a computation vector\n"
    "(by default the gaps between MPI calls measured on the host, less the\n"
    "recorder's own part of each gap, which it timed at MPI_Init; before\n"
    "MPI_Init, the process's start-up, as the host's CPU time); messages\n"
    "cost what the platform's LogGP parameters say, eager below its eager\n"
    "limit and rendezvous above; collectives run as the point-to-point\n"
    "messages of the algorithm Open MPI 4.1 would choose.\n"
    "\n"
    "Prints the predicted run time, each rank's finish time and where the\n"
    "time went: computation, MPI overhead, transfer (waiting for data in\n"
    "flight) and syn (waiting for a partner that had not yet arrived), per\n"
    "MPI function and per call site.\n"
    "\n"
    "options:\n"
    "  --platform FILE     the target platform (doc/platform-format.md), or the name\n"
    "                      of a bundled one (ib-qdr, 10gbe-cloud, ...); required\n"
    "  --comp NAME         computation vector: host (the trace's own gaps; default),\n"
    "                      or NAME measured by `phantom replay` (TRACE/replay/NAME),\n"
    "                      or a replay directory (a NAME with a '/') of another\n"
    "                      recording of the same job\n"
    "  --groups FILE       every rank computes as its group's representative\n"
    "                      (groups.json from `phantom cluster` for this trace);\n"
    "                      with --comp NAME, ranks replayed themselves keep theirs\n"
    "  --ppn N             ranks per node (default: the platform's cores_per_node)\n"
    "  --map POLICY        rank placement: block (default), cyclic, or a FILE\n"
    "                      naming each rank's node, a word per rank in rank order\n"
    "  --what-if comp=X    multiply every computation unit by X (e.g. 0.5)\n"
    "  --what-if net=Y     multiply every network cost (o_s, o_r, L, o', G, o_poll,\n"
    "                      o_iprobe) by Y\n"
    "  --threads N         threads, N - 1 of them decoding traces ahead; 0: all\n"
    "                      online cores (default 1: where measured, a decoding\n"
    "                      thread cost more than it saved; the prediction is the\n"
    "                      same for any N)\n"
    "  --top N             call sites to show (default 10)\n"
    "  --json              one JSON document instead of tables\n"
    "  --svg FILE          also draw where each rank's time goes (computation,\n"
    "                      overhead, transfer, syn) as a chart, an SVG file; past\n"
    "                      32 ranks a bar is the mean of a range of ranks; '-':\n"
    "                      the chart on standard output, instead of the tables\n"
    "  --no-progress       no progress bar (shown on a terminal's stderr when the\n"
    "                      simulation takes more than a second)\n"
    "  --strict-order      handle every event in (time, rank) order, no rank\n"
    "                      running ahead of deliveries, and build every\n"
    "                      collective's rounds afresh: slower, the same\n"
    "                      prediction (for checking just that)\n"
    "  --queue KIND        the event queue: auto (a heap while fewer than 32,768\n"
    "                      events are pending, then a radix heap; default),\n"
    "                      heap or radix: the same prediction\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit status: 0, or 1 when the trace cannot be simulated (a deadlock\n"
    "prints one line per stuck rank), 2 for a usage error.\n";

typedef struct popts {
    const char *trace, *platform, *comp, *map, *groups;
    uint32_t ppn, threads, top;
    double comp_scale, net_scale;
    int json, no_progress, strict_order, queue;
    const char *svg;
    FILE *svg_out; /* opened before the simulation: a bad path fails at once */
    char platform_path[PATH_MAX]; /* --platform's file (cli_platform_file) */
} popts;

/* --svg -: the chart is the output, the tables are left out */
static int svg_to_stdout(const popts *o) { return o->svg && strcmp(o->svg, "-") == 0; }

/* ---- options ------------------------------------------------------------------------ */

static int parse_factor(const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno || !isfinite(x) || x < 0)
        return -1;
    *out = x;
    return 0;
}

static int parse_what_if(const char *arg, popts *o)
{
    if (strncmp(arg, "comp=", 5) == 0 && parse_factor(arg + 5, &o->comp_scale) == 0)
        return 0;
    if (strncmp(arg, "net=", 4) == 0 && parse_factor(arg + 4, &o->net_scale) == 0)
        return 0;
    return cli_usage_error("predict", "--what-if: '%s' is not comp=X or net=Y (X, Y >= 0)", arg);
}

static int parse_args(int argc, char **argv, popts *o)
{
    static const struct option longopts[] = {
        {"platform", required_argument, NULL, 'p'}, {"comp", required_argument, NULL, 'c'},
        {"groups", required_argument, NULL, 'g'},   {"ppn", required_argument, NULL, 'n'},
        {"map", required_argument, NULL, 'm'},      {"what-if", required_argument, NULL, 'w'},
        {"threads", required_argument, NULL, 't'},  {"top", required_argument, NULL, 'T'},
        {"json", no_argument, NULL, 'j'},           {"help", no_argument, NULL, 'h'},
        {"no-progress", no_argument, NULL, 'P'},    {"strict-order", no_argument, NULL, 'S'},
        {"queue", required_argument, NULL, 'Q'},    {"svg", required_argument, NULL, 'G'},
        {NULL, 0, NULL, 0}};
    for (int c; (c = cli_getopt("predict", argc, argv, ":h", longopts)) != -1;) {
        switch (c) {
        case 'h': return cli_help(&cmd_predict) == CLI_OK ? -2 : CLI_ERR;
        case 'p': o->platform = optarg; break;
        case 'c': o->comp = optarg; break;
        case 'g': o->groups = optarg; break;
        case 'm': o->map = optarg; break;
        case 'w':
            if (parse_what_if(optarg, o) != CLI_OK)
                return CLI_USAGE;
            break;
        case 'j': o->json = 1; break;
        case 'G': o->svg = optarg; break;
        case 'P': o->no_progress = 1; break;
        case 'S': o->strict_order = 1; break;
        case 'Q':
            if ((o->queue = simmpi_queue_named(optarg)) < 0)
                return cli_usage_error("predict", "--queue: '%s' is not auto, heap or radix", optarg);
            break;
        case 'n':
        case 't':
        case 'T': {
            uint32_t *dst = c == 'n' ? &o->ppn : c == 't' ? &o->threads : &o->top;
            const char *opt = c == 'n' ? "--ppn" : c == 't' ? "--threads" : "--top";
            if (cli_u32_option("predict", opt, optarg, c == 'n' ? 1 : 0, 1u << 24, dst) != CLI_OK)
                return CLI_USAGE;
            break;
        }
        default: return CLI_USAGE;
        }
    }
    if (cli_trace_arg("predict", argc, argv, &o->trace) != CLI_OK)
        return CLI_USAGE;
    if (!o->platform)
        return cli_usage_error("predict", "no platform given (--platform FILE|NAME)");
    if (cli_platform_file("predict", "--platform", o->platform, o->platform_path, sizeof o->platform_path) != CLI_OK)
        return CLI_ERR;
    o->platform = o->platform_path;
    if (svg_to_stdout(o) && o->json)
        return cli_usage_error("predict", "--svg - and --json both write to standard output");
    return CLI_OK;
}

/* ---- rank placement ------------------------------------------------------------------- */

static int map_is_file(const popts *o) { return ph_map_kind(o->map) == PH_MAP_FILE; }

/* *out: each rank's node, or NULL for block placement (the simulator's own). */
static int build_map(const popts *o, uint32_t n, uint32_t ppn, uint32_t **out)
{
    *out = NULL;
    if (ph_map_kind(o->map) == PH_MAP_BLOCK)
        return CLI_OK;
    uint32_t *node_of = malloc((n ? n : 1) * sizeof *node_of);
    if (!node_of)
        return cli_error("predict", "out of memory");
    ph_err err = {0};
    if (ph_node_map(o->map, n, ppn, node_of, &err) < 0) {
        free(node_of);
        return cli_error("predict", "--map %s", err.msg);
    }
    *out = node_of;
    return CLI_OK;
}

/* ---- progress on a terminal ---------------------------------------------------------------- */

/* A one-line bar on stderr, redrawn in place at most 4 times a second once
 * the simulation has run for a second, and erased at the end.  The
 * percentage appears when the source has counted the trace's events. */
typedef struct progress {
    struct timespec start;
    double delay;  /* seconds before the first redraw (PHANTOM_PROGRESS_DELAY, default 1) */
    double last;   /* elapsed seconds at the last redraw */
    int shown;     /* characters of the bar on the screen */
} progress;

static double elapsed(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static int term_width(void)
{
    struct winsize ws;
    return ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20 ? ws.ws_col : 80;
}

/* "12.3M" */
static const char *count_str(double n, char *buf, size_t cap)
{
    if (n >= 1e9)
        snprintf(buf, cap, "%.2fG", n / 1e9);
    else if (n >= 1e6)
        snprintf(buf, cap, "%.1fM", n / 1e6);
    else
        snprintf(buf, cap, "%.0fk", n / 1e3);
    return buf;
}

/* "42 s", "3:07", "1:02:03" */
static const char *dur_str(double secs, char *buf, size_t cap)
{
    unsigned long t = (unsigned long)(secs + 0.5);
    if (t < 60)
        snprintf(buf, cap, "%lu s", t);
    else if (t < 3600)
        snprintf(buf, cap, "%lu:%02lu", t / 60, t % 60);
    else
        snprintf(buf, cap, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
    return buf;
}

/* At most 78 columns: "simulating  36% [#######             ] 2.0M/5.4M events  2.0M/s  1 s, 2 s left" */
static void draw_bar(const simmpi_progress *p, double secs, char *line, size_t cap)
{
    char ev[16], tot[16], rate[16], el[32], left[32];
    double r = (double)p->events / secs;
    count_str((double)p->events, ev, sizeof ev);
    count_str(r, rate, sizeof rate);
    dur_str(secs, el, sizeof el);
    if (!p->total) {
        snprintf(line, cap, "simulating: %s events  %s/s  %s  (counting the trace's events)", ev, rate, el);
        return;
    }
    uint64_t done = p->events < p->total ? p->events : p->total;
    double f = (double)done / (double)p->total;
    int width = 20, fill = (int)(f * width);
    snprintf(line, cap, "simulating %3.0f%% [%.*s%*s] %s/%s events  %s/s  %s, %s left", floor(f * 100),
             fill, "####################", width - fill, "", ev,
             count_str((double)p->total, tot, sizeof tot), rate, el,
             dur_str(r > 0 ? (double)(p->total - done) / r : 0, left, sizeof left));
}

static void on_progress(void *ctx, const simmpi_progress *p)
{
    progress *pr = ctx;
    double secs = elapsed(&pr->start);
    if (secs < pr->delay || secs - pr->last < 0.25)
        return;
    pr->last = secs;
    char line[256];
    draw_bar(p, secs, line, sizeof line);
    int w = term_width() - 1, n = (int)strlen(line); /* never wrap: \r must reach the start */
    if (n > w)
        n = w;
    fprintf(stderr, "\r%.*s%*s", n, line, pr->shown > n ? pr->shown - n : 0, "");
    fflush(stderr);
    pr->shown = n > pr->shown ? n : pr->shown;
}

static void progress_end(progress *pr)
{
    if (pr->shown)
        fprintf(stderr, "\r%*s\r", pr->shown, "");
}

/* ---- output -------------------------------------------------------------------------------------- */

typedef struct report {
    const popts *o;
    ph_trace *t;
    const cli_sites *sites; /* for cli_site_label */
    const simmpi_platform *pf;
    const simmpi_result *res;
    uint32_t ppn;
    uint64_t probe_ns; /* taken off each host gap */
    json_t *untraced; /* cli_untraced_json: what the simulation left out */
} report;

static double secs(simtime t) { return (double)t / 1e12; }
static simtime comm_of(const simmpi_breakdown *b) { return b->ovh + b->xfer + b->syn; }

static double cost_of(const report *r)
{
    return r->pf->price_per_node_hour * r->res->nnodes * secs(r->res->total) / 3600.0;
}

/* The longest start-up before MPI_Init (0: the trace has none) and its rank. */
static simtime longest_startup(const simmpi_result *res, uint32_t *rank)
{
    simtime most = 0;
    for (uint32_t i = 0; i < res->nranks; i++)
        if (res->startup[i] > most)
            most = res->startup[i], *rank = i;
    return most;
}

static void print_startup(const simmpi_result *res)
{
    uint32_t rank = 0;
    simtime most = longest_startup(res, &rank);
    char b[32];
    if (most)
        printf("start-up before MPI_Init: up to %s (rank %u), in the computation\n",
               simmpi_fmt_time(most, b, sizeof b), rank);
}

static void print_header(const report *r)
{
    char a[32], b[32];
    const simmpi_result *res = r->res;
    printf("trace %s: %u ranks on %u node%s of %s (", ph_trace_dir(r->t), res->nranks, res->nnodes,
           res->nnodes == 1 ? "" : "s", r->pf->name);
    if (map_is_file(r->o))
        printf("placed by %s, %s model)\n", r->o->map, r->pf->network_model);
    else
        printf("%u rank%s per node, %s model)\n", r->ppn, r->ppn == 1 ? "" : "s", r->pf->network_model);
    if (r->o->comp_scale != 1.0 || r->o->net_scale != 1.0)
        printf("what-if: computation x %g, network x %g\n", r->o->comp_scale, r->o->net_scale);
    if (r->pf->noise_period)
        printf("CPU noise: pauses of %s, %.4g a second per %s\n", simmpi_fmt_time(r->pf->noise_pause, b, sizeof b),
               1e12 / (double)r->pf->noise_period, r->pf->noise_sync_node ? "node" : "rank");
    printf("predicted run time: %s", simmpi_fmt_time(res->total, a, sizeof a));
    if (res->measured_ns)
        printf("   (measured on the host: %s)", simmpi_fmt_time(res->measured_ns * 1000, b, sizeof b));
    printf("\n");
    print_startup(res);
    if (r->pf->price_per_node_hour > 0) {
        /* four decimals for money, significant digits for a short run's fraction of a cent */
        double cost = cost_of(r);
        char c[32], p[32], cm[64], pm[64];
        snprintf(c, sizeof c, cost >= 0.01 || cost == 0 ? "%.4f" : "%.3g", cost);
        snprintf(p, sizeof p, "%g", r->pf->price_per_node_hour);
        printf("cost: %s (%u node%s at %s per node-hour)\n", cli_fmt_money(r->pf->currency, c, cm, sizeof cm),
               res->nnodes, res->nnodes == 1 ? "" : "s", cli_fmt_money(r->pf->currency, p, pm, sizeof pm));
    }
}

/* One table row; eol 0 leaves the line open for more columns. */
static void row(const char *label, uint64_t calls, simtime total, const simmpi_breakdown *b, int comp,
                int eol)
{
    char t0[32], t1[32], t2[32], t3[32], t4[32];
    printf("%-24s %9llu %13s %13s %13s %13s %13s%s", label, (unsigned long long)calls,
           simmpi_fmt_time(total, t0, sizeof t0), comp ? simmpi_fmt_time(b->comp, t1, sizeof t1) : "",
           simmpi_fmt_time(b->ovh, t2, sizeof t2), simmpi_fmt_time(b->xfer, t3, sizeof t3),
           simmpi_fmt_time(b->syn, t4, sizeof t4), eol ? "\n" : "");
}

static void rank_row(const simmpi_result *res, uint32_t i, const char *what)
{
    const simmpi_rank_result *rr = &res->ranks[i];
    char label[48];
    snprintf(label, sizeof label, "%u%s%s", i, what, rr->complete ? "" : " (incomplete)");
    row(label, rr->b.calls, rr->finish, &rr->b, 1, 1);
}

static void print_ranks(const report *r)
{
    const simmpi_result *res = r->res;
    printf("\n%-24s %9s %13s %13s %13s %13s %13s\n", "rank", "calls", "finish", "comp", "overhead",
           "transfer", "syn");
    simmpi_breakdown sum = {0};
    uint32_t first = 0, last = 0; /* the ranks that finish first and last (the lowest of equals) */
    for (uint32_t i = 0; i < res->nranks; i++) {
        const simmpi_rank_result *rr = &res->ranks[i];
        if (res->nranks <= 64)
            rank_row(res, i, "");
        first = rr->finish < res->ranks[first].finish ? i : first;
        last = rr->finish > res->ranks[last].finish ? i : last;
        sum.calls += rr->b.calls;
        sum.comp += rr->b.comp;
        sum.ovh += rr->b.ovh;
        sum.xfer += rr->b.xfer;
        sum.syn += rr->b.syn;
    }
    if (res->nranks > 64) { /* too many to list: the two that bound the spread */
        rank_row(res, last, " (finishes last)");
        rank_row(res, first, " (finishes first)");
    }
    row("all ranks (sum)", sum.calls, sum.comp + sum.ovh + sum.xfer + sum.syn, &sum, 1, 1);
    if (res->nranks > 64)
        printf("(every rank: --json)\n");
}

static void print_ops(const report *r)
{
    printf("\n%-24s %9s %13s %13s %13s %13s %13s\n", "MPI function", "calls", "comm", "", "overhead",
           "transfer", "syn");
    for (unsigned op = 0; op < PH_OP_LIMIT; op++) {
        const simmpi_breakdown *b = &r->res->ops[op];
        if (b->calls && ph_op(op))
            row(ph_op(op)->name, b->calls, comm_of(b), b, 0, 1);
    }
}

static const simmpi_breakdown *sort_sites;
static int by_comm_desc(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    simtime ca = comm_of(&sort_sites[a]), cb = comm_of(&sort_sites[b]);
    if (ca != cb)
        return ca > cb ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Sites with calls, most communication time first; *n of them. */
static uint32_t *sites_sorted(const simmpi_result *res, uint32_t *n)
{
    uint32_t *ids = malloc((res->nsites + 1) * sizeof *ids), k = 0;
    for (uint32_t i = 0; ids && i < res->nsites; i++)
        if (res->sites[i].calls)
            ids[k++] = i;
    sort_sites = res->sites;
    if (ids)
        qsort(ids, k, sizeof *ids, by_comm_desc);
    *n = k;
    return ids;
}

static void print_sites(const report *r)
{
    uint32_t n, top = r->o->top;
    uint32_t *ids = sites_sorted(r->res, &n);
    if (!ids || !n || !top) {
        free(ids);
        return;
    }
    /* where last: a C++ name does not fit a column */
    printf("\n%-24s %9s %13s %13s %13s %13s %13s  %-16s %s\n", "call site (top by comm)", "calls", "comm",
           "", "overhead", "transfer", "syn", "MPI call", "where");
    for (uint32_t i = 0; i < n && i < top; i++) {
        char id[16], where[512];
        snprintf(id, sizeof id, "%u", ids[i]);
        cli_site_label(r->sites, ids[i], where, sizeof where);
        const simmpi_breakdown *b = &r->res->sites[ids[i]];
        row(id, b->calls, comm_of(b), b, 0, 0);
        printf("  %-16s %s\n", cli_site_call(r->res->site_op[ids[i]]), where);
    }
    free(ids);
}

static void print_colls(const report *r)
{
    int first = 1;
    for (int c = 0; c < SIMMPI_NCOLL; c++)
        for (int a = 0; a < SIMMPI_ALG_LIMIT; a++) {
            uint64_t n = r->res->coll_calls[c][a];
            if (!n)
                continue;
            printf("%s%s %s x%llu", first ? "\ncollective algorithms: " : ", ",
                   simmpi_coll_name((simmpi_coll)c), simmpi_alg_name((simmpi_coll)c, a),
                   (unsigned long long)n);
            first = 0;
        }
    if (!first)
        printf("\n");
}

/* The ranks' time blocked in Tests the recorded run saw succeed: the
 * simulation had not delivered their messages yet.  A program that works
 * between its polls would have gone on working instead: the simulator
 * counts that much of its polling loop's later work as done in the wait
 * (res->test_wait_credit), where the loop has any left. */
static simtime test_wait(const simmpi_result *res)
{
    simtime t = 0;
    for (uint16_t op = 0; op < PH_OP_LIMIT; op++) {
        const ph_op_info *info = ph_op(op);
        if (!info || info->kind < PH_K_TEST || info->kind > PH_K_TESTSOME)
            continue;
        t += res->ops[op].xfer + res->ops[op].syn;
    }
    return t;
}

static double ranks_time(const simmpi_result *res)
{
    double all = 0;
    for (uint32_t i = 0; i < res->nranks; i++)
        all += (double)res->ranks[i].finish;
    return all;
}

/* t as a share of the ranks' summed time: waits in successful Tests, the
 * polling work counted as done in them, failed polls. */
static double share_of(const simmpi_result *res, simtime t)
{
    double all = ranks_time(res);
    return all > 0 ? (double)t / all : 0;
}

static double test_wait_share(const simmpi_result *res) { return share_of(res, test_wait(res)); }
static double poll_share(const simmpi_result *res) { return share_of(res, res->failed_poll_time); }

/* A polling program's prediction rests on how often the recorded run polled
 * in vain: say so when that is a tenth of the ranks' time or more; and on
 * where its Tests succeeded: say so when their waits are a twentieth. */
static void print_poll_note(const simmpi_result *res)
{
    double waited = test_wait_share(res);
    if (waited >= 0.05) {
        char t[32], c[32];
        printf("\nnote: in Tests that the recorded run saw succeed, the ranks waited %s, %.0f%% of their time,\n"
               "for messages the simulation had not delivered yet; a program that works between its polls\n"
               "would have gone on working there, and %s of their polling loops' later work (computation\n"
               "and failed polls) is counted as done in those waits (doc/simmpi.md section 4)\n",
               simmpi_fmt_time(test_wait(res), t, sizeof t), 100 * waited,
               simmpi_fmt_time(res->test_wait_credit, c, sizeof c));
    }
    double share = poll_share(res);
    if (share < 0.1)
        return;
    char t[32];
    printf("\nnote: %llu Tests and Iprobes that found nothing cost %s, %.0f%% of the ranks' time; their number\n"
           "is the recorded run's, set by its timing, not the target's (doc/simmpi.md section 4)\n",
           (unsigned long long)res->failed_polls, simmpi_fmt_time(res->failed_poll_time, t, sizeof t), 100 * share);
    if (res->folded_polls)
        printf("(%llu more cost nothing: the simulation had completed their requests or delivered their message)\n",
               (unsigned long long)res->folded_polls);
}

static void print_tables(const report *r)
{
    print_header(r);
    print_ranks(r);
    print_ops(r);
    print_sites(r);
    print_colls(r);
    if (r->res->unmatched_sends)
        printf("\nwarning: %llu messages were sent but never received\n",
               (unsigned long long)r->res->unmatched_sends);
    if (r->res->unsimulated_colls)
        printf("\nnote: %llu collective calls on intercommunicators were not simulated (a Gatherv,\n"
               "Scatterv or Allgatherv whose group's sizes no event of the other group holds, or a\n"
               "Scan): they cost nothing here (doc/simmpi.md section 5)\n",
               (unsigned long long)r->res->unsimulated_colls);
    print_poll_note(r->res);
}

static json_t *bd_json(const simmpi_breakdown *b, int comp)
{
    json_t *o = json_pack("{s:I, s:I, s:I, s:I}", "calls", (json_int_t)b->calls, "overhead_ps",
                          (json_int_t)b->ovh, "transfer_ps", (json_int_t)b->xfer, "syn_ps",
                          (json_int_t)b->syn);
    if (comp)
        json_object_set_new(o, "comp_ps", json_integer((json_int_t)b->comp));
    return o;
}

static json_t *ranks_json(const simmpi_result *res)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < res->nranks; i++) {
        const simmpi_rank_result *rr = &res->ranks[i];
        const simmpi_breakdown *b = &rr->b;
        /* one json_pack a rank: at 65,536 ranks, a second object merged in
         * and four separate sets took 0.14 s more (1,950 against 1,806 ms) */
        json_array_append_new(
            a, json_pack("{s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b}", "rank", (json_int_t)i,
                         "finish_ps", (json_int_t)rr->finish, "finish_s", secs(rr->finish), "calls",
                         (json_int_t)b->calls, "overhead_ps", (json_int_t)b->ovh, "transfer_ps",
                         (json_int_t)b->xfer, "syn_ps", (json_int_t)b->syn, "comp_ps", (json_int_t)b->comp,
                         "startup_ps", (json_int_t)res->startup[i], "events", (json_int_t)rr->events,
                         "measured_ns", (json_int_t)rr->measured_ns, "complete", rr->complete));
    }
    return a;
}

static json_t *ops_sites_json(const report *r, json_t **sites)
{
    json_t *ops = json_object();
    for (unsigned op = 0; op < PH_OP_LIMIT; op++)
        if (r->res->ops[op].calls && ph_op(op))
            json_object_set_new(ops, ph_op(op)->name, bd_json(&r->res->ops[op], 0));
    uint32_t n;
    uint32_t *ids = sites_sorted(r->res, &n);
    *sites = json_array();
    for (uint32_t i = 0; ids && i < n; i++) {
        char where[512];
        cli_site_label(r->sites, ids[i], where, sizeof where);
        json_t *o = json_pack("{s:I, s:s, s:s}", "id", (json_int_t)ids[i], "call",
                              cli_site_call(r->res->site_op[ids[i]]), "where", where);
        json_object_update_new(o, bd_json(&r->res->sites[ids[i]], 0));
        json_array_append_new(*sites, o);
    }
    free(ids);
    return ops;
}

static json_t *colls_json(const simmpi_result *res)
{
    json_t *o = json_object();
    for (int c = 0; c < SIMMPI_NCOLL; c++) {
        json_t *algs = NULL;
        for (int a = 0; a < SIMMPI_ALG_LIMIT; a++)
            if (res->coll_calls[c][a]) {
                if (!algs)
                    algs = json_object();
                json_object_set_new(algs, simmpi_alg_name((simmpi_coll)c, a),
                                    json_integer((json_int_t)res->coll_calls[c][a]));
            }
        if (algs)
            json_object_set_new(o, simmpi_coll_name((simmpi_coll)c), algs);
    }
    return o;
}

static int print_json(const report *r)
{
    const simmpi_result *res = r->res;
    json_t *sites, *ops = ops_sites_json(r, &sites);
    json_t *doc = json_pack(
        "{s:s, s:s, s:I, s:I, s:I, s:{s:f, s:f}, s:I, s:f, s:I, s:f}", "trace", ph_trace_dir(r->t),
        "platform", r->pf->name, "nranks", (json_int_t)res->nranks, "nnodes",
        (json_int_t)res->nnodes, "ppn", (json_int_t)(map_is_file(r->o) ? 0 : r->ppn), "what_if", "comp",
        r->o->comp_scale, "net", r->o->net_scale, "predicted_ps", (json_int_t)res->total, "predicted_s",
        secs(res->total), "measured_ns", (json_int_t)res->measured_ns, "cost", cost_of(r));
    json_object_set_new(doc, "platform_file", json_string(r->o->platform));
    json_object_set_new(doc, "map", json_string(r->o->map ? r->o->map : "block"));
    json_object_set_new(doc, "host_probe_gap_ns", json_integer((json_int_t)r->probe_ns));
    uint32_t longest = 0;
    json_object_set_new(doc, "startup_ps", json_integer((json_int_t)longest_startup(res, &longest)));
    json_object_set_new(doc, "price_per_node_hour", json_real(r->pf->price_per_node_hour));
    json_object_set_new(doc, "currency", r->pf->currency[0] ? json_string(r->pf->currency) : json_null());
    json_object_set_new(doc, "calibrated", r->pf->calibrated[0] ? json_string(r->pf->calibrated) : json_null());
    json_object_set_new(doc, "cpu_share", r->pf->cpu_share > 0 ? json_real(r->pf->cpu_share) : json_null());
    json_object_set_new(doc, "noise", !r->pf->noise_period ? json_null()
                                      : json_pack("{s:I, s:f, s:s}", "pause_ps", (json_int_t)r->pf->noise_pause,
                                                  "per_second", 1e12 / (double)r->pf->noise_period, "sync",
                                                  r->pf->noise_sync_node ? "node" : "rank"));
    json_object_set_new(doc, "ranks", ranks_json(res));
    json_object_set_new(doc, "ops", ops);
    json_object_set_new(doc, "sites", sites);
    json_object_set_new(doc, "collectives", colls_json(res));
    json_object_set(doc, "untraced", r->untraced);
    json_object_set_new(doc, "simulator",
                        json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:f, s:I, s:f}", "events", (json_int_t)res->events,
                                  "messages", (json_int_t)res->messages, "heap_events",
                                  (json_int_t)res->heap_events, "unmatched_messages",
                                  (json_int_t)res->unmatched_sends, "unsimulated_collective_calls",
                                  (json_int_t)res->unsimulated_colls, "failed_polls",
                                  (json_int_t)res->failed_polls, "failed_poll_ps",
                                  (json_int_t)res->failed_poll_time, "failed_poll_share", poll_share(res),
                                  "folded_polls", (json_int_t)res->folded_polls, "test_wait_ps",
                                  (json_int_t)test_wait(res), "test_wait_share", test_wait_share(res),
                                  "test_wait_credit_ps", (json_int_t)res->test_wait_credit,
                                  "test_wait_credit_share", share_of(res, res->test_wait_credit)));
    int rc = ph_json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    putchar('\n');
    json_decref(doc);
    return rc == 0 ? CLI_OK : CLI_ERR;
}

/* A deadlock: one line per stuck rank, then failure.  In a recording that
 * ends early (a killed job) ranks wait on ones whose streams stopped,
 * which is not the program's deadlock: the lines say so. */
static int report_stuck(const report *r)
{
    char why[96] = "deadlock";
    uint8_t *stuck = calloc(r->res->nranks, 1); /* a deadlock can hold every rank of millions */
    for (uint32_t i = 0; stuck && i < r->res->nstuck; i++)
        stuck[r->res->stuck[i].rank] = 1;
    for (uint32_t i = 0; stuck && i < r->res->nranks && !strcmp(why, "deadlock"); i++)
        if (!r->res->ranks[i].complete && !stuck[i])
            snprintf(why, sizeof why, "the recording ends early (rank %u's stream has no end record)", i);
    free(stuck);
    for (uint32_t i = 0; i < r->res->nstuck; i++) {
        const simmpi_stuck *s = &r->res->stuck[i];
        char where[512], t[32];
        cli_site_label(r->sites, s->site, where, sizeof where);
        fprintf(stderr, "phantom predict: %s: %s: rank %u blocked in %s at %s since %s, %s\n",
                ph_trace_dir(r->t), why, s->rank, ph_op(s->op) ? ph_op(s->op)->name : "?", where,
                simmpi_fmt_time(s->since, t, sizeof t), s->what);
    }
    return CLI_ERR;
}

/* ---- the chart (--svg) ------------------------------------------------------------------------------ */

/* Bars drawn at most: more ranks share bars, each a range of ranks. */
#define SVG_MAX_BARS 32

/* Each bar's four parts as shares of the predicted run time, so that the
 * rank that finishes last fills its bar and the others show how much
 * sooner they finish; a range of ranks gets their mean. */
static void bar_shares(const simmpi_result *res, uint32_t first, uint32_t last, double *share)
{
    double sum[4] = {0, 0, 0, 0};
    for (uint32_t i = first; i <= last; i++) {
        const simmpi_breakdown *b = &res->ranks[i].b;
        sum[0] += (double)b->comp, sum[1] += (double)b->ovh, sum[2] += (double)b->xfer, sum[3] += (double)b->syn;
    }
    double whole = (double)(last - first + 1) * (double)(res->total ? res->total : 1);
    for (int p = 0; p < 4; p++)
        share[p] = sum[p] / whole;
}

static int write_svg(const report *r, FILE *f)
{
    static const char *const parts[4] = {"computation", "MPI overhead", "transfer", "syn"};
    static const char *const colours[4] = {SVG_COMP, "#E69F00", SVG_COMM, SVG_WAIT};
    const simmpi_result *res = r->res;
    uint32_t nb = res->nranks < SVG_MAX_BARS ? res->nranks : SVG_MAX_BARS;
    char(*labels)[40] = calloc(nb, sizeof *labels);
    const char **lp = calloc(nb, sizeof *lp);
    double *share = calloc((size_t)nb * 4, sizeof *share);
    int rc = CLI_OK;
    if (!labels || !lp || !share)
        rc = cli_error("predict", "--svg %s: out of memory", r->o->svg);
    for (uint32_t b = 0; rc == CLI_OK && b < nb; b++) {
        uint32_t first = (uint32_t)((uint64_t)res->nranks * b / nb);
        uint32_t last = (uint32_t)((uint64_t)res->nranks * (b + 1) / nb) - 1;
        if (first == last)
            snprintf(labels[b], sizeof labels[b], "rank %u", first);
        else
            snprintf(labels[b], sizeof labels[b], "ranks %u-%u", first, last);
        lp[b] = labels[b];
        bar_shares(res, first, last, share + 4 * (size_t)b);
    }
    if (rc == CLI_OK) {
        char title[200], t[32];
        snprintf(title, sizeof title, "Predicted run time %s on %s: where each rank's time goes",
                 simmpi_fmt_time(res->total, t, sizeof t), r->pf->name);
        svg_file_begin(f, svg_width(), svg_bars_height(nb));
        svg_bars(f, title,
                 nb == res->nranks ? "share of the predicted run time"
                                   : "share of the predicted run time (a bar: the mean of its ranks)",
                 lp, nb, parts, colours, 4, share);
        svg_file_end(f);
        if (fflush(f) != 0 || ferror(f))
            rc = cli_error("predict", "--svg %s: cannot write: %s", r->o->svg, strerror(errno));
    }
    free(labels);
    free(lp);
    free(share);
    return rc;
}

/* ---- the verb --------------------------------------------------------------------------------------- */

/* --threads, where 0 means every online core. */
static uint32_t threads_of(const popts *o)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return o->threads ? o->threads : n > 0 ? (uint32_t)n : 1;
}

/* A replay of another recording (--comp DIR) fits only if every replayed
 * rank had as many events there as here: else its units are another job's. */
static int check_replay_events(const popts *o, const simmpi_result *res, const rep_vectors *v)
{
    for (uint32_t i = 0; v && i < res->nranks; i++) {
        int64_t rec = rep_vectors_recorded(v, i);
        if (rec >= 0 && (uint64_t)rec != res->ranks[i].events)
            return cli_error("predict", "--comp %s: rank %u was replayed from a recording of %lld "
                             "events, this trace has %llu: not a replay of this job",
                             o->comp, i, (long long)rec, (unsigned long long)res->ranks[i].events);
    }
    return CLI_OK;
}

/* Whether msg starts with a path inside the trace directory ("DIR/rank-000003.evt: ..."). */
static int names_trace_file(const ph_trace *t, const char *msg)
{
    const char *dir = ph_trace_dir(t);
    size_t n = strlen(dir);
    return strncmp(msg, dir, n) == 0 && msg[n] == '/';
}

/* One-sided communication, MPI-IO and the like are passed through and only
 * counted: their time is in the computation around them, not simulated on
 * the target's network, which a user of the prediction must know. */
static void warn_untraced(const ph_trace *t, const json_t *untraced)
{
    char what[1024];
    cli_untraced_text(untraced, what, sizeof what);
    if (what[0])
        cli_warn("predict", "%s: the simulation leaves out %s: their time is part of the ranks' "
                            "computation, as measured (doc/simmpi.md, section 4)", ph_trace_dir(t), what);
}

static int simulate(const popts *o, ph_trace *t, simmpi_options *so, const rep_vectors *replayed)
{
    simmpi_source src;
    ph_err err;
    if (simmpi_source_trace(t, threads_of(o), &src, &err) < 0)
        return cli_error("predict", "%s", err.msg);
    const char *delay = getenv("PHANTOM_PROGRESS_DELAY");
    progress pr = {.delay = delay && *delay ? atof(delay) : 1.0, .last = -1.0};
    clock_gettime(CLOCK_MONOTONIC, &pr.start);
    if (!o->no_progress && isatty(2)) {
        so->progress = on_progress;
        so->progress_ctx = &pr;
        simmpi_source_trace_count(&src); /* no count, no percentage: not an error */
    }
    simmpi_result *res;
    int rc = simmpi_run(so, &src, &res, &err);
    progress_end(&pr);
    simmpi_source_trace_close(&src);
    if (rc < 0 && names_trace_file(t, err.msg)) /* the reader's errors name their file */
        return cli_error("predict", "%s", err.msg);
    if (rc < 0) /* the simulation's name no file: the trace's */
        return cli_error("predict", "%s: %s", ph_trace_dir(t), err.msg);
    cli_sites *sites = cli_sites_new(t);
    /* the streams' ends, which the simulation read (a deadlock's report has no use for them) */
    json_t *untraced = res->nstuck ? json_array() : cli_untraced_json(t, (double)res->measured_ns * res->nranks);
    if (!sites || !untraced) {
        cli_sites_free(sites);
        json_decref(untraced);
        simmpi_result_free(res);
        return cli_error("predict", "out of memory");
    }
    warn_untraced(t, untraced);
    report r = {.o = o, .t = t, .sites = sites, .pf = &so->platform, .res = res, .ppn = so->ppn,
                .probe_ns = so->host_probe_ns, .untraced = untraced};
    if (res->nstuck)
        rc = report_stuck(&r);
    else if ((rc = check_replay_events(o, res, replayed)) == CLI_OK && o->json)
        rc = print_json(&r);
    else if (rc == CLI_OK && !svg_to_stdout(o))
        print_tables(&r);
    if (rc == CLI_OK && o->svg_out)
        rc = write_svg(&r, o->svg_out);
    cli_sites_free(sites);
    json_decref(untraced);
    simmpi_result_free(res);
    return rc == 0 ? cli_flush_stdout("predict") : rc;
}

/* ---- representatives (--groups) -------------------------------------------------------- */

/* PHANTOM's representative replay: each rank's computation units are its
 * representative's.  The cluster stage groups only ranks with as many calls,
 * so unit k exists for both; a rank that is its own representative keeps its
 * exact host times. */
typedef struct rep_comp {
    cl_trace_data *d;
    uint32_t *rep_of;
    double probe_ns; /* the recorder's part of each gap, as the host vector loses it */
} rep_comp;

static simtime rep_unit(void *ctx, uint32_t rank, uint64_t k, uint64_t host_ns)
{
    const rep_comp *rc = ctx;
    uint32_t rep = rc->rep_of[rank];
    const cl_rank *r = &rc->d->r[rep];
    if (rep == rank || k == 0 || k - 1 >= r->dim) /* unit k is the gap before event k */
        return simmpi_ps_of_ns(host_ns);
    return simmpi_ps_of_ns_f(r->vec[k - 1] - rc->probe_ns); /* negative: 0 */
}

static int load_groups(const popts *o, ph_trace *t, rep_comp *rc, simmpi_options *so)
{
    ph_err err;
    uint32_t n = ph_trace_nranks(t);
    rc->d = cl_load(o->trace, (int)threads_of(o), &err);
    rc->rep_of = malloc(n * sizeof *rc->rep_of);
    if (!rc->d || !rc->rep_of)
        return cli_error("predict", "%s", rc->d ? "out of memory" : err.msg);
    cl_identity id = {o->trace, ph_trace_meta(t, "start_time"), n, rc->d->fingerprint};
    if (cl_plan_check(o->groups, &id, NULL, rc->rep_of, &err) < 0)
        return cli_error("predict", "%s", err.msg);
    rc->probe_ns = (double)so->host_probe_ns;
    so->comp = (simmpi_comp_source){rep_unit, rc, "group representatives"};
    return CLI_OK;
}

/* ---- replayed vectors (--comp NAME) --------------------------------------------------- */

/* Units measured by `phantom replay TRACE --name NAME` (replay/rep_vectors.h);
 * with --groups, a rank that was not replayed itself takes its
 * representative's (a replayed subgroup measures every rank in it). */
typedef struct replay_comp {
    rep_vectors *v;
    const uint32_t *rep_of;
} replay_comp;

static simtime replay_unit(void *ctx, uint32_t rank, uint64_t k, uint64_t host_ns)
{
    const replay_comp *rc = ctx;
    return simmpi_ps_of_ns(rep_vectors_unit(rc->v, rep_vectors_source(rc->v, rank, rc->rep_of), k, host_ns));
}

static int load_replay(const popts *o, ph_trace *t, const uint32_t *rep_of, replay_comp *rc,
                       simmpi_options *so)
{
    ph_err err;
    rc->rep_of = rep_of;
    rc->v = rep_vectors_open(t, o->comp, &err);
    if (!rc->v)
        return cli_error("predict", "--comp %s: %s", o->comp, err.msg);
    char *missing = rep_vectors_missing(rc->v, ph_trace_nranks(t), rep_of);
    if (missing) {
        cli_error("predict", "--comp %s: ranks %s have no replayed vector%s", o->comp, missing,
                  rep_of ? " (their representatives were not replayed)" : " (replay them, or give --groups)");
        free(missing);
        return CLI_ERR;
    }
    if (rep_vectors_stand_in(rc->v, t, ph_trace_nranks(t), rep_of, &err) < 0)
        return cli_error("predict", "%s", err.msg);
    char *raw = rep_vectors_raw(rc->v);
    if (raw) { /* still usable: only call-dense programs are off by much */
        cli_warn("predict", "--comp %s: ranks %s were replayed by an older phantom, whose units hold about 30 ns "
                 "a call of the replayer's own work; replay them again", o->comp, raw);
        free(raw);
    }
    so->comp = (simmpi_comp_source){replay_unit, rc, o->comp};
    return CLI_OK;
}

/* Closes the chart's file; removes it unless it holds a chart (rc OK). */
static int svg_close(popts *o, int rc)
{
    if (!o->svg_out || o->svg_out == stdout) /* stdout: flushed and checked at the end */
        return rc;
    if (fclose(o->svg_out) != 0 && rc == CLI_OK)
        rc = cli_error("predict", "--svg %s: cannot write: %s", o->svg, strerror(errno));
    if (rc != CLI_OK)
        unlink(o->svg);
    return rc;
}

static int run(int argc, char **argv)
{
    popts o = {.top = 10, .threads = 1, .comp_scale = 1.0, .net_scale = 1.0};
    int rc = parse_args(argc, argv, &o);
    if (rc != CLI_OK)
        return rc == -2 ? CLI_OK : rc;
    simmpi_options so;
    ph_err err;
    simmpi_options_default(&so);
    so.comp_scale = o.comp_scale;
    so.strict_order = o.strict_order;
    so.queue = o.queue;
    if (simmpi_platform_load(o.platform, &so.platform, &err) < 0)
        return cli_error("predict", "%s", err.msg);
    if (so.platform.network_defaults)
        cli_warn("predict", "%s " SIMMPI_NETWORK_DEFAULTS_WARNING, o.platform);
    if (o.svg && !(o.svg_out = svg_to_stdout(&o) ? stdout : fopen(o.svg, "w")))
        return cli_error("predict", "--svg %s: cannot write: %s", o.svg, strerror(errno));
    if (o.net_scale != 1.0)
        simmpi_platform_scale_net(&so.platform, o.net_scale);
    ph_trace *t = ph_trace_open(o.trace, &err);
    if (!t)
        return svg_close(&o, cli_error("predict", "%s", err.msg));
    /* The recorder's part of each gap is not the program's computation, nor
     * is the replayer's part of a replayed one: `phantom replay` took that
     * off, and scales the host's units (these) by replayed over recorded,
     * each without its tool's part. */
    int replayed_units = o.comp && strcmp(o.comp, "host") != 0;
    so.host_probe_ns = ph_trace_probe_gap_ns(t);
    ph_heap_huge_pages(ph_trace_nranks(t)); /* spares a large run most page faults */
    so.ppn = o.ppn ? o.ppn : so.platform.cores_per_node;
    uint32_t *node_of = NULL;
    rc = build_map(&o, ph_trace_nranks(t), so.ppn, &node_of);
    so.node_of = node_of;
    rep_comp reps = {NULL, NULL, 0};
    if (rc == CLI_OK && o.groups)
        rc = load_groups(&o, t, &reps, &so);
    replay_comp replayed = {NULL, NULL};
    if (rc == CLI_OK && replayed_units)
        rc = load_replay(&o, t, reps.rep_of, &replayed, &so);
    if (rc == CLI_OK)
        rc = simulate(&o, t, &so, replayed.v);
    rep_vectors_close(replayed.v);
    cl_trace_data_free(reps.d);
    free(reps.rep_of);
    free(node_of);
    ph_trace_close(t);
    return svg_close(&o, rc);
}

const ph_verb cmd_predict = {"predict", "predict the run time on a target platform (SIM-MPI)",
                             usage, run};
