/* cmd-cluster.c - `phantom cluster TRACE`: the representative ranks and the
 * iterations to replay (PHANTOM Section 5).
 *
 * Reads every rank's computation vector and communication sequence, groups
 * the ranks (cluster/cluster.h does the work), and writes the plan as
 * groups.json with a summary for people.  The verb only parses options,
 * chooses the library calls and prints.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "phantom.h"

static const char usage[] =
    "usage: phantom cluster TRACE [--threshold X | -k K] [--method M] [--ppn N] [--map M]\n"
    "                             [-o FILE] [--dendrogram FILE] [--json] [--check FILE]\n"
    "\n"
    "Group the ranks of TRACE by their computation (the gaps between MPI calls,\n"
    "compared with the Manhattan distance, infinite between different numbers of\n"
    "calls) and choose what to replay: one representative per group (the member\n"
    "closest to the group's mean) with the ranks on its node, and how many\n"
    "iterations of the loop (Equation 2).  Writes groups.json and prints a summary.\n"
    "\n"
    "options:\n"
    "  -t, --threshold X       cut the dendrogram at distance X: a percentage of the\n"
    "                          mean computation per rank (5%, the default) or a time\n"
    "                          (250us, 2ms, 1s)\n"
    "  -k, --groups K          make exactly K groups instead\n"
    "  -m, --method M          hierarchical (complete linkage, the default), kmeans\n"
    "                          (needs -k), or commseq (one group per communication\n"
    "                          sequence: when the host cannot run the target's scale)\n"
    "      --partition P       what keeps ranks apart: dims (different numbers of\n"
    "                          calls, Equation 1; the default) or commseq (also\n"
    "                          different communication sequences)\n"
    "  -p, --ppn N             processes per node on the target (default 1)\n"
    "      --map M             ranks to nodes: block (default), cyclic, or a FILE\n"
    "                          naming each rank's node, one per line in rank order\n"
    "  -i, --iter-threshold P  k% of Equation 2 for partial replay of iterations\n"
    "                          (default: the threshold's percentage, else 5%)\n"
    "  -o, --output FILE       where to write the plan (default TRACE/groups.json)\n"
    "      --dendrogram FILE   also write the dendrogram: SVG if FILE ends in .svg,\n"
    "                          else text ('-': standard output)\n"
    "      --json              print the plan as JSON instead of the summary\n"
    "      --check FILE        check that FILE is a plan made from TRACE; write nothing\n"
    "  -j, --threads N         threads (default: one per CPU)\n"
    "  -h, --help              show this help\n";

#define DEFAULT_PCT 5.0

extern const ph_verb cmd_cluster; /* defined at the end; also declared in phantom.h once registered */

typedef struct opts {
    const char *trace, *output, *dendro, *check;
    double threshold_pct, threshold_ns; /* one of them is given (< 0: not) */
    double iter_pct;
    uint32_t k, ppn, threads;
    int json, explicit_cut;
    cl_method m; /* m.map: the --map policy */
} opts;

typedef struct run {
    opts *o;
    cl_trace_data *d;
    cl_points pts;
    uint64_t *part;
    uint32_t *dim, *label, *rep, *node, ngroups, nparts;
    const float **vec;
    double *radius;
    cl_cut_stats cut;
    int used_fastcut;
    double cut_height; /* the threshold that gave -k groups (< 0: from the dendrogram) */
    cl_plan *plan;
    cl_identity id;
    ph_trace *t;
} run;

/* ---- options ------------------------------------------------------------------------- */

/* "5%", "5" (percent) or "250us", "2ms", "1s", "100ns" (a time). */
static int parse_threshold(const char *s, double *pct, double *ns)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0) || !isfinite(v))
        return -1;
    static const struct { const char *unit; double ns; } units[] = {
        {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
    *pct = *ns = -1;
    if (!*end || strcmp(end, "%") == 0) {
        *pct = v;
        return 0;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i].unit) == 0) {
            *ns = v * units[i].ns;
            return 0;
        }
    return -1;
}

static int parse_pct(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0) || !isfinite(v) || (*end && strcmp(end, "%") != 0))
        return -1;
    *out = v;
    return 0;
}

static int set_method(opts *o, const char *m)
{
    static const char *const names[] = {"hierarchical", "kmeans", "commseq"};
    for (size_t i = 0; i < 3; i++)
        if (strcmp(m, names[i]) == 0) {
            o->m.method = names[i];
            return 0;
        }
    return cli_usage_error("cluster", "--method: '%s' is not hierarchical, kmeans or commseq", m);
}

static int set_map(opts *o, const char *m)
{
    o->m.map = m;
    return 0;
}

static int set_partition(opts *o, const char *p)
{
    if (strcmp(p, "commseq") != 0 && strcmp(p, "dims") != 0)
        return cli_usage_error("cluster", "--partition: '%s' is not commseq or dims", p);
    o->m.partition = strcmp(p, "dims") == 0 ? "dims" : "commseq";
    return 0;
}

static int option(opts *o, int c, const char *arg)
{
    switch (c) {
    case 't':
        o->explicit_cut = 1;
        if (parse_threshold(arg, &o->threshold_pct, &o->threshold_ns) < 0)
            return cli_usage_error("cluster", "--threshold: '%s' is not a percentage (5%%) or a time (2ms)", arg);
        return 0;
    case 'k':
        o->explicit_cut = 1;
        if (cli_u32_option("cluster", "-k", arg, 0, UINT32_MAX, &o->k) != CLI_OK)
            return CLI_USAGE;
        if (o->k == 0)
            return cli_usage_error("cluster", "-k: cannot make 0 groups");
        return 0;
    case 'm': return set_method(o, arg);
    case 'P': return set_partition(o, arg);
    case 'p':
        return cli_u32_option("cluster", "--ppn", arg, 1, UINT32_MAX, &o->ppn);
    case 'M': return set_map(o, arg);
    case 'i':
        if (parse_pct(arg, &o->iter_pct) < 0)
            return cli_usage_error("cluster", "--iter-threshold: '%s' is not a percentage", arg);
        return 0;
    case 'o': o->output = arg; return 0;
    case 'D': o->dendro = arg; return 0;
    case 'J': o->json = 1; return 0;
    case 'C': o->check = arg; return 0;
    case 'j':
        return cli_u32_option("cluster", "--threads", arg, 1, 64, &o->threads);
    default: return CLI_USAGE;
    }
}

static int check_combination(opts *o)
{
    if (o->k && (o->threshold_pct >= 0 || o->threshold_ns >= 0))
        return cli_usage_error("cluster", "give --threshold or -k, not both");
    if (strcmp(o->m.method, "kmeans") == 0 && !o->k)
        return cli_usage_error("cluster", "--method kmeans needs -k: k-means cannot choose the number of groups");
    if (strcmp(o->m.method, "commseq") == 0 && o->explicit_cut)
        return cli_usage_error("cluster", "--method commseq groups by communication sequence alone: "
                               "--threshold and -k do not apply");
    if (strcmp(o->m.method, "commseq") == 0) /* the sequences themselves keep ranks apart */
        o->m.partition = "commseq";
    if (!o->k && o->threshold_pct < 0 && o->threshold_ns < 0)
        o->threshold_pct = DEFAULT_PCT;
    if (o->iter_pct < 0)
        o->iter_pct = o->threshold_pct >= 0 ? o->threshold_pct : DEFAULT_PCT;
    o->m.k = o->k;
    o->m.ppn = o->ppn;
    o->m.iter_pct = o->iter_pct;
    return 0;
}

static int parse(opts *o, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"threshold", required_argument, NULL, 't'}, {"groups", required_argument, NULL, 'k'},
        {"method", required_argument, NULL, 'm'},    {"partition", required_argument, NULL, 'P'},
        {"ppn", required_argument, NULL, 'p'},       {"map", required_argument, NULL, 'M'},
        {"iter-threshold", required_argument, NULL, 'i'}, {"output", required_argument, NULL, 'o'},
        {"dendrogram", required_argument, NULL, 'D'}, {"json", no_argument, NULL, 'J'},
        {"check", required_argument, NULL, 'C'},     {"threads", required_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},            {NULL, 0, NULL, 0}};
    *o = (opts){.threshold_pct = -1, .threshold_ns = -1, .iter_pct = -1, .ppn = 1,
                .m = {.method = "hierarchical", .partition = "dims", .map = "block"}};
    for (int c; (c = cli_getopt("cluster", argc, argv, ":ht:k:m:p:i:o:j:", longopts)) != -1;) {
        if (c == 'h')
            return cli_help(&cmd_cluster) == CLI_OK ? -1 : CLI_ERR;
        int rc = c == '?' ? CLI_USAGE : option(o, c, optarg);
        if (rc)
            return rc;
    }
    if (cli_trace_arg("cluster", argc, argv, &o->trace) != CLI_OK)
        return CLI_USAGE;
    if (o->output && strcmp(o->output, "-") == 0)
        o->json = 1; /* the plan is the output: no summary mixed in */
    return check_combination(o);
}

/* ---- reading and grouping ------------------------------------------------------------------ */

static int load(run *r)
{
    ph_err err;
    if (!(r->t = ph_trace_open(r->o->trace, &err)))
        return cli_error("cluster", "%s", err.msg);
    if (!(r->d = cl_load(r->o->trace, (int)r->o->threads, &err)))
        return cli_error("cluster", "%s", err.msg);
    uint32_t n = r->d->n, incomplete = 0;
    for (uint32_t i = 0; i < n; i++)
        incomplete += !r->d->r[i].complete;
    if (incomplete)
        cli_warn("cluster", "%s: %u of %u ranks have no end record (the job was killed or recording "
                 "stopped); their vectors are what was recorded", r->o->trace, incomplete, n);
    r->part = malloc(n * sizeof *r->part);
    r->dim = malloc(n * sizeof *r->dim);
    r->vec = malloc(n * sizeof *r->vec);
    r->label = malloc(n * sizeof *r->label);
    r->rep = malloc(n * sizeof *r->rep);
    r->node = malloc(n * sizeof *r->node);
    r->radius = malloc(n * sizeof *r->radius);
    if (!r->part || !r->dim || !r->vec || !r->label || !r->rep || !r->node || !r->radius)
        return cli_error("cluster", "out of memory for %u ranks", n);
    int dims = strcmp(r->o->m.partition, "dims") == 0;
    for (uint32_t i = 0; i < n; i++) {
        r->dim[i] = r->d->r[i].dim;
        r->part[i] = dims ? r->d->r[i].dim : r->d->r[i].sig;
        r->vec[i] = r->d->r[i].vec;
    }
    r->pts = (cl_points){n, r->dim, r->part, r->vec};
    r->nparts = cl_count_parts(&r->pts);
    r->id = (cl_identity){r->o->trace, ph_trace_meta(r->t, "start_time"), n, r->d->fingerprint};
    return CLI_OK;
}

static double threshold_ns(const run *r)
{
    return r->o->threshold_ns >= 0 ? r->o->threshold_ns : r->o->threshold_pct / 100 * r->d->mean_total;
}

/* Hierarchical: the exact threshold cut unless the dendrogram is wanted anyway. */
static int group_hierarchical(run *r, cl_dendrogram *dg)
{
    ph_err err;
    int g;
    if (dg && r->o->k)
        g = cl_cut_count(dg, r->o->k, r->label, &err);
    else if (dg)
        g = (int)cl_cut_height(dg, threshold_ns(r), r->label);
    else if (r->o->k)
        g = cl_count_cut(&r->pts, r->o->k, (int)r->o->threads, r->label, &r->cut_height, &r->cut, &err);
    else {
        g = cl_threshold_cut(&r->pts, threshold_ns(r), (int)r->o->threads, r->label, &r->cut, &err);
        r->used_fastcut = 1;
    }
    if (g < 0)
        return cli_error("cluster", "%s: %s", r->o->trace, err.msg);
    r->ngroups = (uint32_t)g;
    return CLI_OK;
}

static int group(run *r, cl_dendrogram *dg)
{
    ph_err err;
    const char *m = r->o->m.method;
    int g;
    if (strcmp(m, "hierarchical") == 0)
        return group_hierarchical(r, dg);
    if (strcmp(m, "kmeans") == 0)
        g = cl_kmeans(&r->pts, r->o->k, 0x5eed, r->label, &err);
    else
        g = (int)cl_group_by_part(r->pts.n, r->part, r->label);
    if (g < 0)
        return cli_error("cluster", "%s: %s", r->o->trace, err.msg);
    r->ngroups = (uint32_t)g;
    return CLI_OK;
}

static int write_dendrogram(run *r, const cl_dendrogram *dg)
{
    const char *path = r->o->dendro;
    size_t len = strlen(path);
    int svg = len > 4 && strcmp(path + len - 4, ".svg") == 0;
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f)
        return cli_error("cluster", "%s: cannot create: %s", path, strerror(errno));
    double cut = threshold_ns(r);
    if (r->o->k) { /* the line between the last merge made and the first not made */
        uint32_t made = r->d->n - r->ngroups;
        double lo = made ? dg->merges[made - 1].height : 0;
        double hi = made + 1 < r->d->n ? dg->merges[made].height : lo;
        cut = isfinite(hi) ? (lo + hi) / 2 : -1;
    }
    char title[512];
    snprintf(title, sizeof title, "%s: %u ranks, complete linkage", r->o->trace, r->d->n);
    int rc = svg ? cl_dendrogram_svg(dg, r->d->mean_total, cut, title, f)
                 : cl_dendrogram_text(dg, r->d->mean_total, f);
    if (f != stdout && fclose(f) != 0)
        rc = -1;
    return rc < 0 ? cli_error("cluster", "%s: cannot write: %s", path, strerror(errno ? errno : EIO)) : CLI_OK;
}

static int make_plan(run *r)
{
    ph_err err;
    if (cl_representatives(&r->pts, r->label, r->ngroups, (int)r->o->threads, r->rep, r->radius, &err) < 0)
        return cli_error("cluster", "%s", err.msg);
    int nodes = ph_node_map(r->o->m.map, r->d->n, r->o->ppn, r->node, &err);
    if (nodes < 0)
        return cli_error("cluster", "--map: %s", err.msg);
    if (ph_map_kind(r->o->m.map) == PH_MAP_FILE) /* the node sizes come from the file */
        r->o->m.ppn = 0;
    r->plan = cl_plan_build(r->d, r->label, r->ngroups, r->rep, r->radius, r->node, (uint32_t)nodes,
                            r->o->iter_pct / 100, &err);
    if (!r->plan)
        return cli_error("cluster", "%s", err.msg);
    r->o->m.threshold_ns = r->o->k || strcmp(r->o->m.method, "hierarchical") ? -1 : threshold_ns(r);
    r->o->m.threshold_pct = r->d->mean_total > 0 ? 100 * threshold_ns(r) / r->d->mean_total : 0;
    return CLI_OK;
}

/* ---- the summary ------------------------------------------------------------------------------ */

static const char *fmt_ns(double ns, char *buf, size_t cap)
{
    if (ns >= 1e9)
        snprintf(buf, cap, "%.3f s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(buf, cap, "%.3f ms", ns / 1e6);
    else if (ns >= 1e3)
        snprintf(buf, cap, "%.3f us", ns / 1e3);
    else
        snprintf(buf, cap, "%.0f ns", ns);
    return buf;
}

static double pct_of(double part, double whole) { return whole > 0 ? 100 * part / whole : 0; }

/* A rank list cut to fit a column; the full one is in the JSON. */
static void ranks_cell(const uint32_t *r, uint32_t n, char *buf, size_t cap)
{
    char *s = cl_format_ranks(r, n);
    if (s && strlen(s) < cap)
        snprintf(buf, cap, "%s", s);
    else
        snprintf(buf, cap, "%.*s...", (int)cap - 4, s ? s : "");
    free(s);
}

static const char *plural(uint32_t n) { return n == 1 ? "" : "s"; }

static void print_grouping(const run *r)
{
    char b[32];
    const opts *o = r->o;
    uint32_t g = r->ngroups;
    if (strcmp(o->m.method, "commseq") == 0) {
        printf("grouping: one group per communication sequence: %u group%s\n", g, plural(g));
    } else if (strcmp(o->m.method, "kmeans") == 0) {
        printf("grouping: k-means (Manhattan distance) into %u group%s\n", g, plural(g));
    } else if (o->k) {
        printf("grouping: complete linkage (Manhattan distance) cut into %u group%s\n", g, plural(g));
        if (r->cut_height > 0 && isfinite(r->cut_height))
            printf("  (the cut at %.3g%% of the mean computation, %s, gives them)\n",
                   pct_of(r->cut_height, r->d->mean_total), fmt_ns(r->cut_height, b, sizeof b));
    } else {
        printf("grouping: complete linkage (Manhattan distance) cut at %.3g%% of the mean computation "
               "(%s): %u group%s\n", o->m.threshold_pct, fmt_ns(threshold_ns(r), b, sizeof b), g, plural(g));
        if (r->used_fastcut)
            printf("  %u of %u components settled by bounds; %llu exact distances, %llu pairs pruned\n",
                   r->cut.certified, r->cut.components, (unsigned long long)r->cut.pairs_exact,
                   (unsigned long long)r->cut.pairs_pruned);
    }
}

static void print_method(const run *r)
{
    char a[32];
    const opts *o = r->o;
    int dims = strcmp(o->m.partition, "dims") == 0;
    printf("trace %s: %u ranks in %u %sclass%s, mean computation %s per rank\n", o->trace, r->d->n,
           r->nparts, dims ? "" : "communication ", r->nparts == 1 ? "" : "es",
           fmt_ns(r->d->mean_total, a, sizeof a));
    if (dims)
        printf("  (classes by number of calls: ranks in different classes are never grouped)\n");
    print_grouping(r);
}

static void print_groups(const run *r)
{
    const cl_plan *pl = r->plan;
    printf("\n%5s %6s %6s %8s %7s %9s  %-24s %s\n", "group", "size", "rep", "radius", "period",
           "replay", "members", "replay ranks");
    for (uint32_t g = 0; g < pl->ngroups; g++) {
        const cl_group *gr = &pl->groups[g];
        char mem[25], rep[64], it[32];
        ranks_cell(gr->members, gr->nmembers, mem, sizeof mem);
        ranks_cell(gr->replay, gr->nreplay, rep, sizeof rep);
        snprintf(it, sizeof it, "%llu/%llu", (unsigned long long)gr->it.replay_iterations,
                 (unsigned long long)gr->it.iterations);
        printf("%5u %6u %6u %7.2f%% %7llu %9s  %-24s %s\n", g, gr->nmembers, gr->rep,
               pct_of(gr->radius, pl->mean_total), (unsigned long long)gr->period.period,
               gr->it.iterations >= 2 ? it : "all", mem, rep);
    }
    if (ph_map_kind(r->o->m.map) == PH_MAP_FILE)
        printf("(replay ranks: the representative's node in %s)\n", r->o->m.map);
    else
        printf("(replay ranks: the representative's node, %u per node, %s mapping)\n", r->o->ppn, r->o->m.map);
}

static void print_iterations(const run *r)
{
    const cl_group *g = cl_plan_main_group(r->plan);
    char a[32], b[32], c[32];
    if (!g)
        return;
    const cl_iter_plan *it = &g->it;
    printf("\niterations: group %u's representative (rank %u)", (uint32_t)(g - r->plan->groups), g->rep);
    if (it->iterations < 2) {
        printf(" has no repeating pattern: replay it in full\n");
        return;
    }
    printf(" repeats %llu events %llu times from event %llu\n", (unsigned long long)g->period.period,
           (unsigned long long)it->iterations, (unsigned long long)g->period.start);
    printf("  Equation 2: consecutive iterations differ by %s in all, L = %.3g%% of the mean "
           "computation = %s: ", fmt_ns(it->similarity, a, sizeof a), r->o->iter_pct,
           fmt_ns(it->limit, b, sizeof b));
    if (it->partial)
        printf("replay %llu of %llu iterations (extrapolation error %s)\n",
               (unsigned long long)it->replay_iterations, (unsigned long long)it->iterations,
               fmt_ns(it->extrapolation_error, c, sizeof c));
    else
        printf("too different, replay all %llu\n", (unsigned long long)it->iterations);
}

#define RUNS_SHOWN 8

static void print_runs(const run *r)
{
    const cl_plan *pl = r->plan;
    printf("replay runs (one per node with a representative):");
    for (uint32_t k = 0; k < pl->nruns && k < RUNS_SHOWN; k++) {
        uint32_t *ranks = malloc(pl->nranks * sizeof *ranks), n = 0;
        for (uint32_t x = 0; ranks && x < pl->nranks; x++)
            if (pl->node_of[x] == pl->runs[k].node)
                ranks[n++] = x;
        char cell[64], it[40] = "all iterations";
        ranks_cell(ranks, n, cell, sizeof cell);
        if (pl->runs[k].iterations != CL_ALL)
            snprintf(it, sizeof it, "%llu iteration%s", (unsigned long long)pl->runs[k].iterations,
                     pl->runs[k].iterations == 1 ? "" : "s");
        printf("%s %s (%s)", k ? "," : "", cell, it);
        free(ranks);
    }
    if (pl->nruns > RUNS_SHOWN)
        printf(", and %u more (see the plan)", pl->nruns - RUNS_SHOWN);
    printf("\n");
}

static void print_summary(const run *r)
{
    const cl_plan *pl = r->plan;
    char a[32], b[32];
    print_method(r);
    print_groups(r);
    print_iterations(r);
    printf("\n");
    print_runs(r);
    printf("saving: replay %u of %u ranks in %u of %u node runs, %s of %s computation: %.1f%% saved\n",
           pl->replayed_ranks, pl->nranks, pl->nruns, pl->nnodes, fmt_ns(pl->work_plan, a, sizeof a),
           fmt_ns(pl->work_full, b, sizeof b), 100 - pct_of(pl->work_plan, pl->work_full));
}

/* ---- the verb ------------------------------------------------------------------------------------ */

static int check_only(run *r)
{
    ph_err err;
    if (cl_plan_check(r->o->check, &r->id, NULL, NULL, &err) < 0)
        return cli_error("cluster", "%s", err.msg);
    printf("%s: a plan for %s (%u ranks)\n", r->o->check, r->o->trace, r->d->n);
    return CLI_OK;
}

static int write_plan(run *r, char *defpath, size_t cap)
{
    ph_err err;
    const char *out = r->o->output;
    if (!out) {
        snprintf(defpath, cap, "%s/groups.json", r->o->trace);
        out = defpath;
    }
    if (r->o->json && strcmp(out, "-") != 0 && cl_plan_write(r->plan, &r->id, &r->o->m, "-", &err) < 0)
        return cli_error("cluster", "%s", err.msg);
    if (cl_plan_write(r->plan, &r->id, &r->o->m, out, &err) < 0)
        return cli_error("cluster", "%s", err.msg);
    if (!r->o->json && strcmp(out, "-") != 0)
        printf("plan: %s\n", out);
    return CLI_OK;
}

static int steps(run *r)
{
    int rc = load(r);
    if (rc != CLI_OK || r->o->check)
        return rc != CLI_OK ? rc : check_only(r);
    cl_dendrogram *dg = NULL;
    ph_err err;
    if (r->o->dendro && !(dg = cl_hierarchical(&r->pts, (int)r->o->threads, &err)))
        return cli_error("cluster", "%s", err.msg);
    rc = group(r, dg);
    if (rc == CLI_OK && r->o->dendro)
        rc = write_dendrogram(r, dg);
    cl_dendrogram_free(dg);
    if (rc == CLI_OK)
        rc = make_plan(r);
    if (rc == CLI_OK && !r->o->json)
        print_summary(r);
    char defpath[4200];
    if (rc == CLI_OK)
        rc = write_plan(r, defpath, sizeof defpath);
    return rc;
}

static int run_cluster(int argc, char **argv)
{
    opts o;
    int rc = parse(&o, argc, argv);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    run r = {.o = &o, .cut_height = -1};
    rc = steps(&r);
    if (rc == CLI_OK)
        rc = cli_flush_stdout("cluster");
    cl_plan_free(r.plan);
    cl_trace_data_free(r.d);
    ph_trace_close(r.t);
    free(r.part);
    free(r.dim);
    free(r.vec);
    free(r.label);
    free(r.rep);
    free(r.node);
    free(r.radius);
    return rc;
}

const ph_verb cmd_cluster = {"cluster", "group ranks and choose the representatives and iterations to replay",
                             usage, run_cluster};
