/* cmd-report.c - `phantom report STUDY`: the instance-selection report of a
 * study made by `phantom run` (doc/study-format.md): predicted time against
 * node count, cost against time with its Pareto front and a recommendation,
 * where the time goes, the hot call sites, the what-ifs of PHANTOM 8.7 and
 * where the numbers come from.
 *
 * Reads study.json, the prediction files it lists, the trace's and the
 * replay's meta.json; gathers every number into report.json first, and
 * writes the HTML page (plots by report-svg.c) and the Markdown from it.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "phantom.h"
#include "report-svg.h"
#include "simmpi.h"

extern const ph_verb cmd_report;

static const char usage[] =
    "usage: phantom report STUDY [-o FILE.html] [--json] [--deadline SECS] [--within PCT]\n"
    "\n"
    "Write the report of a study made by `phantom run` (doc/study-format.md):\n"
    "a self-contained HTML page (inline SVG plots, no scripts, no network), and\n"
    "the same content as Markdown and as JSON beside it (FILE.md, FILE.json).\n"
    "\n"
    "It shows the predicted run time against node count per platform; cost\n"
    "(price per node-hour x nodes x time) against time, with the Pareto front\n"
    "and the recommended choice in one sentence; where the time goes\n"
    "(computation, communication, wait); the top call sites; the what-ifs\n"
    "(computation, network twice as fast); and the provenance of the numbers.\n"
    "\n"
    "The recommendation is the cheapest choice whose predicted time is within\n"
    "PCT of the fastest; with --deadline, the cheapest that meets the deadline\n"
    "(the fastest if none does).  Platforms without a price are not compared\n"
    "on cost; with no price at all, the fastest choice is recommended.  Ties go\n"
    "to fewer nodes, then to the platform name.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE   the HTML page (default: STUDY/report.html)\n"
    "  --deadline SECS     recommend the cheapest choice that runs in SECS\n"
    "  --within PCT        recommend the cheapest choice within PCT percent of\n"
    "                      the fastest (default 10)\n"
    "  --json              also print report.json on stdout\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit status: 0; 1 when the study is incomplete or stale (the message names\n"
    "the file and the step of `phantom run` to redo) or a file cannot be\n"
    "written; 2 for a usage error.\n";

typedef struct ropts {
    const char *study, *out;
    double deadline, within; /* deadline < 0: none */
    int json;
} ropts;

typedef struct pred {
    const char *platform, *file, *platform_file; /* borrowed from study.json or doc */
    char *path, *calib_own;
    const char *calibrated; /* NULL: not stated */
    double comp, net, time, cost, price;
    json_int_t nodes, ppn;
    json_t *doc;
    int pareto;
} pred;

typedef struct study {
    const ropts *o;
    char *dir;
    json_t *sj, *trace_meta, *replay_meta, *out;
    pred *p;
    size_t np, nbase;
    pred **base;  /* base predictions (comp 1, net 1), by platform then nodes */
    pred *rec, *fastest;
    const char *basis;
    char reason[768];
} study;

static const char *const step_name[] = {"", "record", "cluster", "record --log", "replay", "predict"};

static int step_error(const char *file, const char *what, int step)
{
    return cli_error("report", "%s: %s; run `phantom run` again (step %d, %s)", file, what, step,
                     step_name[step]);
}

/* ---- options ------------------------------------------------------------------------------------- */

static int parse_number(const char *opt, const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno || !isfinite(x) || x < 0)
        return cli_usage_error("report", "--%s: '%s' is not a number >= 0", opt, v);
    *out = x;
    return CLI_OK;
}

static int parse_args(int argc, char **argv, ropts *o)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"deadline", required_argument, NULL, 'd'},
        {"within", required_argument, NULL, 'w'}, {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    for (int c; (c = cli_getopt("report", argc, argv, ":ho:", longopts)) != -1;) {
        switch (c) {
        case 'h': return cli_help(&cmd_report) == CLI_OK ? -2 : CLI_ERR;
        case 'o': o->out = optarg; break;
        case 'j': o->json = 1; break;
        case 'd':
        case 'w':
            if (parse_number(c == 'd' ? "deadline" : "within", optarg, c == 'd' ? &o->deadline : &o->within))
                return CLI_USAGE;
            break;
        default: return CLI_USAGE;
        }
    }
    if (optind >= argc)
        return cli_usage_error("report", "no study directory given");
    if (optind + 1 < argc)
        return cli_usage_error("report", "unexpected argument '%s'", argv[optind + 1]);
    o->study = argv[optind];
    return CLI_OK;
}

/* ---- reading the study ---------------------------------------------------------------------------- */

/* STUDY/rel, or rel when it is absolute; malloc'd. */
static char *study_path(const study *s, const char *rel)
{
    char *p = NULL;
    int n = rel[0] == '/' ? asprintf(&p, "%s", rel) : asprintf(&p, "%s/%s", s->dir, rel);
    return n < 0 ? NULL : p;
}

static json_t *load_json(const char *path, char *why, size_t cap)
{
    json_error_t e;
    if (access(path, F_OK) != 0) {
        snprintf(why, cap, "missing");
        return NULL;
    }
    json_t *j = json_load_file(path, 0, &e);
    if (!j)
        snprintf(why, cap, "not JSON (line %d: %s)", e.line, e.text);
    return j;
}

static const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static int load_study(study *s)
{
    char *path = study_path(s, "study.json"), why[256];
    s->sj = load_json(path, why, sizeof why);
    int rc = CLI_OK;
    if (!s->sj && strcmp(why, "missing") == 0)
        rc = cli_error("report", "%s: missing: %s is not a study; make one with `phantom run -o %s ...`",
                       path, s->dir, s->dir);
    else if (!s->sj)
        rc = cli_error("report", "%s: %s", path, why);
    else if (!json_is_array(json_object_get(s->sj, "predictions")) || !jstr(s->sj, "replay") ||
             !jstr(s->sj, "trace"))
        rc = cli_error("report", "%s: not a phantom study (no \"predictions\", \"trace\" or \"replay\")", path);
    free(path);
    return rc;
}

/* DIR/meta.json of the study's key (the trace, the replay) into *out. */
static int load_meta(study *s, const char *key, int step, json_t **out)
{
    char *dir = study_path(s, jstr(s->sj, key)), *path = NULL, why[256];
    if (asprintf(&path, "%s/meta.json", dir) < 0)
        path = NULL;
    free(dir);
    if (!path)
        return cli_error("report", "out of memory");
    *out = load_json(path, why, sizeof why);
    int rc = *out ? CLI_OK : step_error(path, why, step);
    free(path);
    return rc;
}

static int mtime_of(const char *path, struct timespec *t)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    *t = st.st_mtim;
    return 0;
}

static int older(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* A prediction older than its platform file or the replay is stale. */
static int check_fresh(study *s, const pred *p)
{
    struct timespec tp, tf, tr;
    char *replay = study_path(s, jstr(s->sj, "replay")), *meta = NULL, what[1024];
    int rc = CLI_OK;
    if (asprintf(&meta, "%s/meta.json", replay) < 0)
        meta = NULL;
    if (mtime_of(p->path, &tp) == 0) {
        if (p->platform_file && mtime_of(p->platform_file, &tf) == 0 && older(&tp, &tf)) {
            snprintf(what, sizeof what, "stale: older than its platform file %s", p->platform_file);
            rc = step_error(p->path, what, 5);
        } else if (meta && mtime_of(meta, &tr) == 0 && older(&tp, &tr)) {
            snprintf(what, sizeof what, "stale: older than the replay %s", meta);
            rc = step_error(p->path, what, 5);
        }
    }
    free(replay);
    free(meta);
    return rc;
}

/* Price and calibration from the prediction, else from the platform file. */
static void platform_facts(pred *p)
{
    json_t *price = json_object_get(p->doc, "price_per_node_hour");
    if (json_is_number(price)) {
        p->price = json_number_value(price);
        p->calibrated = jstr(p->doc, "calibrated");
        return;
    }
    simmpi_platform pf;
    ph_err err;
    if (p->platform_file && simmpi_platform_load(p->platform_file, &pf, &err) == 0) {
        p->price = pf.price_per_node_hour;
        if (pf.calibrated[0])
            p->calibrated = p->calib_own = strdup(pf.calibrated);
    }
}

static int fill_pred(study *s, const json_t *e, pred *p)
{
    const json_t *wi = json_object_get(e, "what_if");
    p->platform = jstr(e, "platform");
    p->file = jstr(e, "file");
    p->platform_file = jstr(e, "platform_file");
    p->nodes = json_integer_value(json_object_get(e, "nodes"));
    p->ppn = json_integer_value(json_object_get(e, "ppn"));
    p->comp = wi ? json_number_value(json_object_get(wi, "comp")) : 1.0;
    p->net = wi ? json_number_value(json_object_get(wi, "net")) : 1.0;
    char *sj = study_path(s, "study.json");
    int rc = CLI_OK;
    if (!p->platform || !p->file || p->nodes < 1)
        rc = step_error(sj, "a prediction without \"platform\", \"file\" or \"nodes\"", 5);
    free(sj);
    if (rc != CLI_OK)
        return rc;
    char why[256];
    p->path = study_path(s, p->file);
    if (!(p->doc = load_json(p->path, why, sizeof why)))
        return step_error(p->path, why, 5);
    if (!json_is_number(json_object_get(p->doc, "predicted_s")))
        return step_error(p->path, "no \"predicted_s\": not the output of phantom predict --json", 5);
    p->time = json_number_value(json_object_get(p->doc, "predicted_s"));
    p->cost = json_number_value(json_object_get(p->doc, "cost"));
    if (!p->platform_file)
        p->platform_file = jstr(p->doc, "platform_file");
    platform_facts(p);
    return check_fresh(s, p);
}

static int by_platform_nodes(const void *a, const void *b)
{
    const pred *x = *(pred *const *)a, *y = *(pred *const *)b;
    int c = strcmp(x->platform, y->platform);
    return c ? c : (x->nodes > y->nodes) - (x->nodes < y->nodes);
}

static int load_preds(study *s)
{
    json_t *list = json_object_get(s->sj, "predictions");
    s->np = json_array_size(list);
    s->p = calloc(s->np + 1, sizeof *s->p);
    s->base = calloc(s->np + 1, sizeof *s->base);
    if (!s->p || !s->base)
        return cli_error("report", "out of memory");
    for (size_t i = 0; i < s->np; i++) {
        int rc = fill_pred(s, json_array_get(list, i), &s->p[i]);
        if (rc != CLI_OK)
            return rc;
        if (s->p[i].comp == 1.0 && s->p[i].net == 1.0)
            s->base[s->nbase++] = &s->p[i];
    }
    if (!s->nbase) {
        char *sj = study_path(s, "study.json");
        step_error(sj, "no base predictions (what_if comp 1, net 1)", 5);
        free(sj);
        return CLI_ERR;
    }
    qsort(s->base, s->nbase, sizeof *s->base, by_platform_nodes);
    return CLI_OK;
}

/* ---- the choice -------------------------------------------------------------------------------------- */

/* Is a better than b on key (time or cost), ties to fewer nodes, then the platform name? */
static int better(const pred *a, const pred *b, int by_cost)
{
    double ka = by_cost ? a->cost : a->time, kb = by_cost ? b->cost : b->time;
    if (ka != kb)
        return ka < kb;
    if (a->nodes != b->nodes)
        return a->nodes < b->nodes;
    return strcmp(a->platform, b->platform) < 0;
}

static int priced(const pred *p) { return p->price > 0; }

/* The best of the base predictions on key among those with priced (if
 * need_price) and time <= limit; NULL if none. */
static pred *best(const study *s, int by_cost, int need_price, double limit)
{
    pred *b = NULL;
    for (size_t i = 0; i < s->nbase; i++) {
        pred *p = s->base[i];
        if ((need_price && !priced(p)) || p->time > limit)
            continue;
        if (!b || better(p, b, by_cost))
            b = p;
    }
    return b;
}

static void mark_pareto(study *s)
{
    for (size_t i = 0; i < s->nbase; i++) {
        pred *p = s->base[i];
        p->pareto = priced(p);
        for (size_t j = 0; p->pareto && j < s->nbase; j++) {
            const pred *q = s->base[j];
            if (priced(q) && q->time <= p->time && q->cost <= p->cost &&
                (q->time < p->time || q->cost < p->cost))
                p->pareto = 0;
        }
    }
}

/* "1.23 s", "45.6 ms", "789 us" */
static const char *fmt_time(double secs, char *buf, size_t cap)
{
    if (secs >= 1 || secs == 0)
        snprintf(buf, cap, "%.3g s", secs);
    else if (secs >= 1e-3)
        snprintf(buf, cap, "%.3g ms", secs * 1e3);
    else
        snprintf(buf, cap, "%.3g us", secs * 1e6);
    if (secs >= 1000)
        snprintf(buf, cap, "%.0f s", secs);
    return buf;
}

/* "$0.0123", "$12.30", "$0.0000404": three significant digits, at least cents. */
static const char *fmt_money(double x, char *buf, size_t cap)
{
    int dec = x > 0 ? 2 - (int)floor(log10(x)) : 2;
    snprintf(buf, cap, "$%.*f", dec < 2 ? 2 : dec > 12 ? 12 : dec, x);
    return buf;
}

/* "4 nodes of ib-qdr" */
static const char *fmt_choice(const pred *p, char *buf, size_t cap)
{
    snprintf(buf, cap, "%lld node%s of %s", (long long)p->nodes, p->nodes == 1 ? "" : "s", p->platform);
    return buf;
}

static void say_deadline(study *s, pred *met)
{
    char c[160], f[160], t[32], m[32], d[32];
    fmt_time(s->o->deadline, d, sizeof d);
    if (met) {
        s->rec = met;
        s->basis = "deadline";
        snprintf(s->reason, sizeof s->reason, "Rent %s: the cheapest choice (%s a run) that meets the "
                 "deadline of %s, with a predicted time of %s.", fmt_choice(met, c, sizeof c),
                 fmt_money(met->cost, m, sizeof m), d, fmt_time(met->time, t, sizeof t));
        return;
    }
    s->rec = s->fastest;
    s->basis = "deadline missed";
    snprintf(s->reason, sizeof s->reason, "Rent %s: no choice meets the deadline of %s, and this is "
             "the fastest (%s, %s a run).", fmt_choice(s->rec, f, sizeof f), d,
             fmt_time(s->rec->time, t, sizeof t), fmt_money(s->rec->cost, m, sizeof m));
}

static void say_within(study *s, pred *p)
{
    char c[160], f[160], t[32], tf[32], m[32];
    s->rec = p;
    s->basis = "within";
    if (p == s->fastest)
        snprintf(s->reason, sizeof s->reason, "Rent %s: the fastest choice (%s), and the cheapest "
                 "within %g%% of it (%s a run).", fmt_choice(p, c, sizeof c),
                 fmt_time(p->time, t, sizeof t), s->o->within, fmt_money(p->cost, m, sizeof m));
    else
        snprintf(s->reason, sizeof s->reason, "Rent %s: the cheapest choice (%s a run) whose predicted "
                 "time, %s, is within %g%% of the fastest (%s on %s).", fmt_choice(p, c, sizeof c),
                 fmt_money(p->cost, m, sizeof m), fmt_time(p->time, t, sizeof t), s->o->within,
                 fmt_time(s->fastest->time, tf, sizeof tf), fmt_choice(s->fastest, f, sizeof f));
}

static void recommend(study *s)
{
    char c[160], t[32];
    mark_pareto(s);
    s->fastest = best(s, 0, 1, INFINITY);
    if (!s->fastest) { /* no prices at all */
        s->rec = s->fastest = best(s, 0, 0, INFINITY);
        s->basis = "unpriced";
        snprintf(s->reason, sizeof s->reason, "Run on %s: the fastest choice (%s); no platform file "
                 "states a price per node-hour, so costs were not compared.",
                 fmt_choice(s->rec, c, sizeof c), fmt_time(s->rec->time, t, sizeof t));
    } else if (s->o->deadline >= 0)
        say_deadline(s, best(s, 1, 1, s->o->deadline));
    else
        say_within(s, best(s, 1, 1, s->fastest->time * (1 + s->o->within / 100)));
}

/* ---- report.json ---------------------------------------------------------------------------------------- */

static json_t *config_json(const pred *p)
{
    return json_pack("{s:s, s:I, s:I, s:f, s:f, s:b, s:b, s:s}", "platform", p->platform, "nodes",
                     p->nodes, "ppn", p->ppn, "time_s", p->time, "cost", p->cost, "priced", priced(p),
                     "pareto", p->pareto, "file", p->file);
}

static json_t *configs_json(const study *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->nbase; i++)
        json_array_append_new(a, config_json(s->base[i]));
    return a;
}

static json_t *platforms_json(const study *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->nbase; i++) {
        const pred *p = s->base[i];
        if (i && strcmp(p->platform, s->base[i - 1]->platform) == 0)
            continue;
        json_array_append_new(a, json_pack("{s:s, s:s?, s:f, s:b, s:s?}", "name", p->platform, "file",
                                           p->platform_file, "price_per_node_hour", p->price, "priced",
                                           priced(p), "calibrated", p->calibrated));
    }
    return a;
}

static json_t *rec_json(const study *s)
{
    json_t *r = config_json(s->rec);
    json_object_del(r, "file");
    json_object_set_new(r, "basis", json_string(s->basis));
    json_object_set_new(r, "reason", json_string(s->reason));
    json_object_set_new(s->out, "fastest", json_pack("{s:s, s:I, s:f}", "platform", s->fastest->platform,
                                                     "nodes", s->fastest->nodes, "time_s", s->fastest->time));
    return r;
}

static double sum_ranks(const pred *p, const char *key)
{
    double t = 0;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(p->doc, "ranks"), i, r) t += json_number_value(json_object_get(r, key));
    return t / 1e12;
}

/* The platform's recommended node count, else its fastest. */
static const pred *platform_pick(const study *s, const char *platform, const char **at)
{
    const pred *b = NULL;
    *at = "recommended";
    if (strcmp(platform, s->rec->platform) == 0)
        return s->rec;
    *at = "fastest";
    for (size_t i = 0; i < s->nbase; i++)
        if (strcmp(s->base[i]->platform, platform) == 0 && (!b || better(s->base[i], b, 0)))
            b = s->base[i];
    return b;
}

static json_t *breakdown_one(const pred *p, const char *at)
{
    double comp = sum_ranks(p, "comp_ps"), comm = sum_ranks(p, "overhead_ps") + sum_ranks(p, "transfer_ps");
    double wait = sum_ranks(p, "syn_ps"), all = comp + comm + wait;
    double d = all > 0 ? all : 1;
    return json_pack("{s:s, s:I, s:s, s:f, s:f, s:f, s:f, s:f, s:f}", "platform", p->platform, "nodes",
                     p->nodes, "at", at, "comp_s", comp, "comm_s", comm, "wait_s", wait, "comp_share",
                     comp / d, "comm_share", comm / d, "wait_share", wait / d);
}

static json_t *breakdown_json(const study *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->nbase; i++) {
        if (i && strcmp(s->base[i]->platform, s->base[i - 1]->platform) == 0)
            continue;
        const char *at;
        const pred *p = platform_pick(s, s->base[i]->platform, &at);
        json_array_append_new(a, breakdown_one(p, at));
    }
    return a;
}

static double site_key(const json_t *site)
{
    return json_number_value(json_object_get(site, "overhead_ps")) +
           json_number_value(json_object_get(site, "transfer_ps")) +
           json_number_value(json_object_get(site, "syn_ps"));
}

static int by_site_time(const void *a, const void *b)
{
    double x = site_key(*(json_t *const *)a), y = site_key(*(json_t *const *)b);
    return (x < y) - (x > y);
}

static json_t *hot_spots_json(const study *s)
{
    json_t *sites = json_object_get(s->rec->doc, "sites"), *a = json_array(), *e;
    size_t n = json_array_size(sites), i;
    json_t **v = calloc(n + 1, sizeof *v);
    json_array_foreach(sites, i, e) v[i] = e;
    if (v)
        qsort(v, n, sizeof *v, by_site_time); /* glibc's qsort is a stable merge sort here */
    double all = sum_ranks(s->rec, "comp_ps") + sum_ranks(s->rec, "overhead_ps") +
                 sum_ranks(s->rec, "transfer_ps") + sum_ranks(s->rec, "syn_ps");
    for (i = 0; v && i < n && i < 10; i++) {
        double comm = (json_number_value(json_object_get(v[i], "overhead_ps")) +
                       json_number_value(json_object_get(v[i], "transfer_ps"))) / 1e12;
        double wait = json_number_value(json_object_get(v[i], "syn_ps")) / 1e12;
        const char *where = jstr(v[i], "where");
        json_array_append_new(a, json_pack("{s:s, s:I, s:f, s:f, s:f}", "where", where ? where : "?", "calls",
                                           json_integer_value(json_object_get(v[i], "calls")), "comm_s", comm,
                                           "wait_s", wait, "share", all > 0 ? (comm + wait) / all : 0));
    }
    free(v);
    return json_pack("{s:s, s:I, s:o}", "platform", s->rec->platform, "nodes", s->rec->nodes, "sites", a);
}

static const pred *what_if_of(const study *s, const pred *b, double comp, double net)
{
    for (size_t i = 0; i < s->np; i++) {
        const pred *p = &s->p[i];
        if (p->comp == comp && p->net == net && p->nodes == b->nodes && p->ppn == b->ppn &&
            strcmp(p->platform, b->platform) == 0)
            return p;
    }
    return NULL;
}

static void what_if_reading(double sc, double sn, char *buf, size_t cap)
{
    if (sc < 0.02 && sn < 0.02)
        snprintf(buf, cap, "neither bound: halving computation saves %.0f%%, halving network costs %.0f%%",
                 sc * 100, sn * 100);
    else if (sc >= sn)
        snprintf(buf, cap, "mostly computation-bound: halving computation saves %.0f%% (the network: %.0f%%)",
                 sc * 100, sn * 100);
    else
        snprintf(buf, cap, "mostly network-bound: halving network costs saves %.0f%% (computation: %.0f%%)",
                 sn * 100, sc * 100);
}

static json_t *what_if_json(const study *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < s->nbase; i++) {
        const pred *b = s->base[i], *c = what_if_of(s, b, 0.5, 1.0), *n = what_if_of(s, b, 1.0, 0.5);
        if (!c || !n)
            continue;
        double sc = b->time > 0 ? 1 - c->time / b->time : 0, sn = b->time > 0 ? 1 - n->time / b->time : 0;
        char reading[256];
        what_if_reading(sc, sn, reading, sizeof reading);
        json_array_append_new(a, json_pack("{s:s, s:I, s:b, s:f, s:f, s:f, s:f, s:f, s:s}", "platform",
                                           b->platform, "nodes", b->nodes, "recommended", b == s->rec,
                                           "base_s", b->time, "comp_half_s", c->time, "net_half_s",
                                           n->time, "comp_saving", sc, "net_saving", sn, "reading", reading));
    }
    return a;
}

/* "all" (loop null: the whole run), "5 of 50", or per rank when they differ. */
static void iterations_text(const json_t *per_rank, char *buf, size_t cap)
{
    size_t i, len = 0;
    json_t *r;
    char first[64] = "", one[64];
    int same = 1;
    buf[0] = 0;
    json_array_foreach(per_rank, i, r) {
        const json_t *loop = json_object_get(r, "loop");
        if (json_is_object(loop))
            snprintf(one, sizeof one, "%lld of %lld",
                     (long long)json_integer_value(json_object_get(loop, "iterations_replayed")),
                     (long long)json_integer_value(json_object_get(loop, "iterations")));
        else
            snprintf(one, sizeof one, "all");
        if (i == 0)
            snprintf(first, sizeof first, "%s", one);
        same &= strcmp(first, one) == 0;
        if (len < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%srank %lld: %s", i ? ", " : "",
                                    (long long)json_integer_value(json_object_get(r, "rank")), one);
    }
    if (same)
        snprintf(buf, cap, "%s", first[0] ? first : "all");
}

static json_t *replay_json(const study *s)
{
    json_t *runs = json_array(), *r;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(s->replay_meta, "replay"), "replays"), i, r) {
        char it[1024];
        iterations_text(json_object_get(r, "per_rank"), it, sizeof it);
        json_array_append_new(runs, json_pack("{s:s?, s:s?, s:s?, s:s}", "ranks", jstr(r, "ranks"), "mode",
                                              jstr(r, "mode"), "date", jstr(r, "date"), "iterations", it));
    }
    return json_pack("{s:s, s:o}", "path", jstr(s->sj, "replay"), "runs", runs);
}

static void now_utc(char *buf, size_t cap)
{
    const char *sde = getenv("SOURCE_DATE_EPOCH"); /* reproducible builds' convention */
    time_t t = sde && *sde ? (time_t)strtoll(sde, NULL, 10) : time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static json_t *provenance_json(const study *s)
{
    const json_t *tm = s->trace_meta;
    return json_pack("{s:{s:s, s:s?, s:s?, s:s?, s:s?}, s:o, s:o}", "trace", "path", jstr(s->sj, "trace"),
                     "host", jstr(tm, "host"), "mpi", jstr(json_object_get(tm, "mpi"), "library"), "command",
                     jstr(tm, "command"), "recorded", jstr(tm, "start_time"), "replay", replay_json(s),
                     "platforms", platforms_json(s));
}

static void build_json(study *s)
{
    char date[32];
    now_utc(date, sizeof date);
    s->out = json_pack("{s:s, s:s, s:s, s:s, s:O?}", "format", "phantom-report", "version", "1.0", "study",
                       s->dir, "date", date, "ranks", json_object_get(s->sj, "ranks"));
    json_object_set_new(s->out, "rule", s->o->deadline >= 0 ? json_pack("{s:f}", "deadline_s", s->o->deadline)
                                                            : json_pack("{s:f}", "within_pct", s->o->within));
    json_object_set_new(s->out, "configs", configs_json(s));
    json_object_set_new(s->out, "recommendation", rec_json(s));
    json_object_set_new(s->out, "breakdown", breakdown_json(s));
    json_object_set_new(s->out, "hot_spots", hot_spots_json(s));
    json_object_set_new(s->out, "what_if", what_if_json(s));
    json_object_set_new(s->out, "provenance", provenance_json(s));
}

/* ---- the page and the Markdown, from report.json ------------------------------------------------------ */

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
} sset;

static void sset_build(sset *ss, const json_t *configs, int cost_plot)
{
    size_t n = json_array_size(configs), i, pidx = 0, cur = (size_t)-1;
    const json_t *c;
    ss->ns = 0;
    ss->x = calloc(n + 1, sizeof *ss->x);
    ss->y = calloc(n + 1, sizeof *ss->y);
    ss->nodes = calloc(n + 1, sizeof *ss->nodes);
    json_array_foreach(configs, i, c) {
        if (i && strcmp(jstr(c, "platform"), jstr(json_array_get(configs, i - 1), "platform")) != 0)
            pidx++;
        if (!ss->x || !ss->y || !ss->nodes || (cost_plot && !json_is_true(json_object_get(c, "priced"))))
            continue;
        if (pidx != cur) {
            if (ss->ns == sizeof ss->s / sizeof ss->s[0])
                break;
            cur = pidx;
            ss->s[ss->ns++] = (svg_series){jstr(c, "platform"), svg_colour(pidx), 0, ss->x + i, ss->y + i,
                                           cost_plot ? ss->nodes + i : NULL, " n"};
        }
        ss->x[i] = cost_plot ? num(c, "time_s") : num(c, "nodes");
        ss->y[i] = cost_plot ? num(c, "cost") : num(c, "time_s");
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
        return SVG_LINEAR;
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
    "code{font-size:14px;word-break:break-all}td:first-child{white-space:nowrap}\n"
    ".plot{display:block;margin:8px 0}.plot text{fill:#222}\n"
    ".title{font-size:16px;font-weight:bold}.tick{font-size:13px}.label{font-size:14px}"
    ".legend{font-size:14px}.inbar{font-size:13px}.tag{font-size:12px}\n"
    ".grid{stroke:#dddddd;stroke-width:1}.axis{stroke:#333333;stroke-width:1.5}\n";

static void html_head(FILE *f, const json_t *r)
{
    const json_t *tr = json_object_get(json_object_get(r, "provenance"), "trace");
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>phantom report: ", f);
    esc(f, jstr(r, "study"));
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>Which machine, how many nodes?</h1>\n"
               "<p class=\"sub\">Predicted by phantom for <code>", css);
    esc(f, jstr(tr, "command"));
    fprintf(f, "</code> (%lld ranks), study <code>", (long long)json_integer_value(json_object_get(r, "ranks")));
    esc(f, jstr(r, "study"));
    fputs("</code>, report of ", f);
    esc(f, jstr(r, "date"));
    fputs(".</p>\n<p class=\"rec\">", f);
    esc(f, jstr(json_object_get(r, "recommendation"), "reason"));
    fputs("</p>\n", f);
}

static void html_time(FILE *f, const json_t *r)
{
    sset ss;
    sset_build(&ss, json_object_get(r, "configs"), 0);
    svg_axis x = {"nodes", sset_scale(&ss, 0, 1), NULL}, y = {"predicted run time (s)", sset_scale(&ss, 1, 0), NULL};
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
        for (; j > 0 && fx[j - 1] > num(c, "time_s"); j--) { /* insertion sort by time */
            fx[j] = fx[j - 1];
            fy[j] = fy[j - 1];
        }
        fx[j] = num(c, "time_s");
        fy[j] = num(c, "cost");
    }
    int shown = json_is_true(json_object_get(rec, "priced"));
    svg_front fr = {k, fx, fy, shown ? num(rec, "time_s") : -1, shown ? num(rec, "cost") : -1};
    svg_axis x = {"predicted run time (s)", sset_scale(ss, 0, 0), NULL},
             y = {"cost of a run ($)", sset_scale(ss, 1, 0), "$"};
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
        int chosen = strcmp(jstr(c, "platform"), jstr(rec, "platform")) == 0 && num(c, "nodes") == num(rec, "nodes");
        int pr = json_is_true(json_object_get(c, "priced"));
        fprintf(f, "<tr%s><td>", chosen ? " class=\"chosen\"" : "");
        esc(f, jstr(c, "platform"));
        fprintf(f, "</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td><td class=\"n\">%s</td>"
                   "<td class=\"n\">%s</td><td>%s%s</td></tr>\n", num(c, "nodes"), num(c, "ppn"),
                fmt_time(num(c, "time_s"), t, sizeof t), pr ? fmt_money(num(c, "cost"), m, sizeof m) : "no price",
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
    esc(f, jstr(json_object_get(r, "recommendation"), "reason"));
    fputs("</p>\n<table><tr><th>platform</th><th>nodes</th><th>ranks per node</th><th>predicted time</th>"
          "<th>cost of a run</th><th>Pareto</th></tr>\n", f);
    html_config_rows(f, r);
    fputs("</table>\n", f);
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
        if (asprintf(&labels[i], "%s, %.0f node%s (%s)", jstr(b, "platform"), num(b, "nodes"),
                     num(b, "nodes") == 1 ? "" : "s", jstr(b, "at")) < 0)
            labels[i] = NULL;
        share[3 * i] = num(b, "comp_share");
        share[3 * i + 1] = num(b, "comm_share");
        share[3 * i + 2] = num(b, "wait_share");
    }
    if (labels && share)
        svg_bars(f, "Computation, communication and wait", (const char *const *)labels, n, parts, colours, 3, share);
    for (i = 0; labels && i < n; i++)
        free(labels[i]);
    free(labels);
    free(share);
}

static void html_hot_spots(FILE *f, const json_t *r)
{
    const json_t *hs = json_object_get(r, "hot_spots"), *e;
    size_t i;
    char a[32], b[32];
    fprintf(f, "<h2>Hot spots</h2>\n<p>The top call sites by communication and wait time on %.0f node%s of ",
            num(hs, "nodes"), num(hs, "nodes") == 1 ? "" : "s");
    esc(f, jstr(hs, "platform"));
    fputs(" (the recommended choice), summed over ranks.</p>\n<table><tr><th>#</th><th>call site</th>"
          "<th>calls</th><th>communication</th><th>wait</th><th>share of the ranks' time</th></tr>\n", f);
    json_array_foreach(json_object_get(hs, "sites"), i, e) {
        fprintf(f, "<tr><td class=\"n\">%zu</td><td><code>", i + 1);
        esc(f, jstr(e, "where"));
        fprintf(f, "</code></td><td class=\"n\">%.0f</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                   "<td class=\"n\">%.1f%%</td></tr>\n", num(e, "calls"), fmt_time(num(e, "comm_s"), a, sizeof a),
                fmt_time(num(e, "wait_s"), b, sizeof b), num(e, "share") * 100);
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
        esc(f, jstr(e, "platform"));
        fprintf(f, "</td><td class=\"n\">%.0f</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                   "<td class=\"n\">%s</td><td>", num(e, "nodes"), fmt_time(num(e, "base_s"), a, sizeof a),
                fmt_time(num(e, "comp_half_s"), b, sizeof b), fmt_time(num(e, "net_half_s"), c, sizeof c));
        esc(f, jstr(e, "reading"));
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (!json_array_size(json_object_get(r, "what_if")))
        fputs("<p>The study has no what-if predictions.</p>\n", f);
}

static const char *price_text(const json_t *platform, char *buf, size_t cap)
{
    if (!json_is_true(json_object_get(platform, "priced")))
        return "no price";
    return fmt_money(num(platform, "price_per_node_hour"), buf, cap);
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
    char m[32];
    fputs("<h2>Provenance</h2>\n<table>\n", f);
    html_kv(f, "trace", jstr(tr, "path"), 1);
    html_kv(f, "recorded on host", jstr(tr, "host"), 0);
    html_kv(f, "recorded at", jstr(tr, "recorded"), 0);
    html_kv(f, "MPI library", jstr(tr, "mpi"), 0);
    html_kv(f, "command line", jstr(tr, "command"), 1);
    html_kv(f, "replay", jstr(rp, "path"), 1);
    html_kv(f, "report date", jstr(r, "date"), 0);
    fputs("</table>\n<p>Ranks replayed on the target node, and for how many iterations of their loop (all: the "
          "whole run):</p>\n<table><tr><th>ranks</th><th>iterations</th><th>mode</th><th>date</th></tr>\n", f);
    json_array_foreach(json_object_get(rp, "runs"), i, e) {
        fputs("<tr><td>", f);
        esc(f, jstr(e, "ranks"));
        fputs("</td><td>", f);
        esc(f, jstr(e, "iterations"));
        fputs("</td><td>", f);
        esc(f, jstr(e, "mode"));
        fputs("</td><td>", f);
        esc(f, jstr(e, "date"));
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n<table><tr><th>platform</th><th>file</th><th>price per node-hour</th><th>calibrated</th>"
          "</tr>\n", f);
    json_array_foreach(json_object_get(pv, "platforms"), i, e) {
        fputs("<tr><td>", f);
        esc(f, jstr(e, "name"));
        fputs("</td><td><code>", f);
        esc(f, jstr(e, "file"));
        fprintf(f, "</code></td><td class=\"n\">%s</td><td>", price_text(e, m, sizeof m));
        esc(f, jstr(e, "calibrated") ? jstr(e, "calibrated") : "not stated");
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void write_html(FILE *f, const json_t *r)
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
        md_cell(f, jstr(c, "platform"));
        fprintf(f, " | %.0f | %.0f | %s | %s | %s |\n", num(c, "nodes"), num(c, "ppn"),
                fmt_time(num(c, "time_s"), t, sizeof t),
                json_is_true(json_object_get(c, "priced")) ? fmt_money(num(c, "cost"), m, sizeof m) : "no price",
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
        md_cell(f, jstr(b, "platform"));
        fprintf(f, " | %.0f | %s | %s (%.1f%%) | %s (%.1f%%) | %s (%.1f%%) |\n", num(b, "nodes"), jstr(b, "at"),
                fmt_time(num(b, "comp_s"), x, sizeof x), num(b, "comp_share") * 100,
                fmt_time(num(b, "comm_s"), y, sizeof y), num(b, "comm_share") * 100,
                fmt_time(num(b, "wait_s"), z, sizeof z), num(b, "wait_share") * 100);
    }
}

static void md_hot_spots(FILE *f, const json_t *r)
{
    const json_t *hs = json_object_get(r, "hot_spots"), *e;
    size_t i;
    char a[32], b[32];
    fprintf(f, "\n## Hot spots\n\nTop call sites on %.0f node%s of ", num(hs, "nodes"), num(hs, "nodes") == 1 ? "" : "s");
    md_cell(f, jstr(hs, "platform"));
    fputs(" (the recommended choice).\n\n| # | call site | calls | communication | wait | share |\n"
          "|--:|---|--:|--:|--:|--:|\n", f);
    json_array_foreach(json_object_get(hs, "sites"), i, e) {
        fprintf(f, "| %zu | `", i + 1);
        md_cell(f, jstr(e, "where"));
        fprintf(f, "` | %.0f | %s | %s | %.1f%% |\n", num(e, "calls"), fmt_time(num(e, "comm_s"), a, sizeof a),
                fmt_time(num(e, "wait_s"), b, sizeof b), num(e, "share") * 100);
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
        md_cell(f, jstr(e, "platform"));
        fprintf(f, " | %.0f | %s | %s | %s | ", num(e, "nodes"), fmt_time(num(e, "base_s"), a, sizeof a),
                fmt_time(num(e, "comp_half_s"), b, sizeof b), fmt_time(num(e, "net_half_s"), c, sizeof c));
        md_cell(f, jstr(e, "reading"));
        fputs(" |\n", f);
    }
}

static void md_provenance(FILE *f, const json_t *r)
{
    const json_t *pv = json_object_get(r, "provenance"), *tr = json_object_get(pv, "trace"), *e;
    size_t i;
    char m[32];
    fprintf(f, "\n## Provenance\n\n- trace: `%s`, recorded on host %s at %s\n- MPI library: %s\n"
               "- command line: `%s`\n- replay: `%s`\n- report date: %s\n\n| ranks replayed | iterations | mode | "
               "date |\n|---|---|---|---|\n", jstr(tr, "path"), jstr(tr, "host") ? jstr(tr, "host") : "?",
            jstr(tr, "recorded") ? jstr(tr, "recorded") : "?", jstr(tr, "mpi") ? jstr(tr, "mpi") : "?",
            jstr(tr, "command") ? jstr(tr, "command") : "?", jstr(json_object_get(pv, "replay"), "path"),
            jstr(r, "date"));
    json_array_foreach(json_object_get(json_object_get(pv, "replay"), "runs"), i, e)
        fprintf(f, "| %s | %s | %s | %s |\n", jstr(e, "ranks") ? jstr(e, "ranks") : "?", jstr(e, "iterations"),
                jstr(e, "mode") ? jstr(e, "mode") : "?", jstr(e, "date") ? jstr(e, "date") : "?");
    fputs("\n| platform | file | price per node-hour | calibrated |\n|---|---|--:|---|\n", f);
    json_array_foreach(json_object_get(pv, "platforms"), i, e) {
        fputs("| ", f);
        md_cell(f, jstr(e, "name"));
        fputs(" | `", f);
        md_cell(f, jstr(e, "file"));
        fprintf(f, "` | %s | ", price_text(e, m, sizeof m));
        md_cell(f, jstr(e, "calibrated") ? jstr(e, "calibrated") : "not stated");
        fputs(" |\n", f);
    }
}

static void write_md(FILE *f, const json_t *r)
{
    fprintf(f, "# Which machine, how many nodes?\n\nPredicted by phantom for `%s` (%lld ranks), study `%s`, "
               "report of %s.\n\n**%s**\n",
            jstr(json_object_get(json_object_get(r, "provenance"), "trace"), "command"),
            (long long)json_integer_value(json_object_get(r, "ranks")), jstr(r, "study"), jstr(r, "date"),
            jstr(json_object_get(r, "recommendation"), "reason"));
    md_configs(f, r);
    md_breakdown(f, r);
    md_hot_spots(f, r);
    md_what_if(f, r);
    md_provenance(f, r);
}

/* ---- writing --------------------------------------------------------------------------------------------- */

typedef void (*writer)(FILE *f, const json_t *r);

static void write_json(FILE *f, const json_t *r)
{
    json_dumpf(r, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', f);
}

/* Writes path through path.tmp, renamed at the end: never half a file. */
static int write_file(const char *path, writer w, const json_t *r)
{
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmp", path) < 0)
        return cli_error("report", "out of memory");
    FILE *f = fopen(tmp, "w");
    int rc = CLI_OK;
    if (!f)
        rc = cli_error("report", "%s: cannot write: %s", path, strerror(errno));
    else {
        w(f, r);
        int bad = ferror(f), e = errno;
        if (fclose(f) != 0 || bad)
            rc = cli_error("report", "%s: cannot write: %s", path, strerror(bad ? e : errno));
        else if (rename(tmp, path) != 0)
            rc = cli_error("report", "%s: cannot rename %s to it: %s", path, tmp, strerror(errno));
        if (rc != CLI_OK)
            remove(tmp);
    }
    free(tmp);
    return rc;
}

/* FILE.html, FILE.md, FILE.json */
static int out_paths(const study *s, char *paths[3])
{
    char *html = s->o->out ? strdup(s->o->out) : study_path(s, "report.html");
    if (!html)
        return cli_error("report", "out of memory");
    size_t n = strlen(html);
    size_t stem = n > 5 && strcmp(html + n - 5, ".html") == 0 ? n - 5
                  : n > 4 && strcmp(html + n - 4, ".htm") == 0 ? n - 4 : n;
    paths[0] = html;
    if (asprintf(&paths[1], "%.*s.md", (int)stem, html) < 0 || asprintf(&paths[2], "%.*s.json", (int)stem, html) < 0)
        return cli_error("report", "out of memory");
    return CLI_OK;
}

static int write_all(study *s)
{
    char *paths[3] = {NULL, NULL, NULL};
    static const writer w[3] = {write_html, write_md, write_json};
    static const char *const what[3] = {"report", "markdown", "json"};
    int rc = out_paths(s, paths);
    for (int i = 0; rc == CLI_OK && i < 3; i++)
        rc = write_file(paths[i], w[i], s->out);
    if (rc == CLI_OK && s->o->json)
        write_json(stdout, s->out);
    for (int i = 0; rc == CLI_OK && i < 3; i++)
        fprintf(s->o->json ? stderr : stdout, "%-8s  %s\n", what[i], paths[i]);
    for (int i = 0; i < 3; i++)
        free(paths[i]);
    return rc == CLI_OK ? cli_flush_stdout("report") : rc;
}

/* ---- the verb ----------------------------------------------------------------------------------------------- */

static void study_free(study *s)
{
    for (size_t i = 0; s->p && i < s->np; i++) {
        json_decref(s->p[i].doc);
        free(s->p[i].path);
        free(s->p[i].calib_own);
    }
    free(s->p);
    free(s->base);
    json_decref(s->sj);
    json_decref(s->trace_meta);
    json_decref(s->replay_meta);
    json_decref(s->out);
    free(s->dir);
}

static int run(int argc, char **argv)
{
    ropts o = {.deadline = -1, .within = 10};
    int rc = parse_args(argc, argv, &o);
    if (rc != CLI_OK)
        return rc == -2 ? CLI_OK : rc;
    study s = {.o = &o, .dir = strdup(o.study)};
    if (!s.dir)
        return cli_error("report", "out of memory");
    for (size_t n = strlen(s.dir); n > 1 && s.dir[n - 1] == '/';)
        s.dir[--n] = 0;
    rc = load_study(&s);
    if (rc == CLI_OK)
        rc = load_meta(&s, "trace", 1, &s.trace_meta);
    if (rc == CLI_OK)
        rc = load_meta(&s, "replay", 4, &s.replay_meta);
    if (rc == CLI_OK)
        rc = load_preds(&s);
    if (rc == CLI_OK) {
        recommend(&s);
        build_json(&s);
        rc = write_all(&s);
    }
    study_free(&s);
    return rc;
}

const ph_verb cmd_report = {"report", "write the instance-selection report of a study (HTML, Markdown, JSON)",
                            usage, run};
