/* cmd-report.c - `phantom report STUDY`: the instance-selection report of a
 * study made by `phantom run` (doc/study-format.md): predicted time against
 * node count, cost against time with its Pareto front and a recommendation,
 * where the time goes, the hot call sites, the what-ifs of PHANTOM 8.7 and
 * where the numbers come from.
 *
 * Reads study.json, the prediction files it lists, the trace's and the
 * replay's meta.json; gathers every number into report.json first, and
 * report-page.c writes the HTML page and the Markdown from it.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "phantom.h"
#include "report-page.h"
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
    "to fewer nodes, then to the platform name.  Prices in two currencies (the\n"
    "platform files' currency keys) are not compared.\n"
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
    double cpu_share; /* during calibration; 0: not measured */
    char currency[SIMMPI_CURRENCY_MAX]; /* the platform's; "" if unsaid */
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
    const char *currency; /* what the priced platforms say their prices are in; "" if none says */
    pred *rec, *fastest;
    const char *basis;
    char reason[768];
} study;

static const char *const step_name[] = {"", "record", "cluster", "record --log", "replay", "predict"};

/* msg ("FILE: what is wrong") and the step of `phantom run` that makes FILE. */
static int step_failed(const char *msg, int step)
{
    return cli_error("report", "%s; run `phantom run` again (step %d, %s)", msg, step, step_name[step]);
}

static int step_error(const char *file, const char *what, int step)
{
    char msg[sizeof ((ph_err *)NULL)->msg + 1024];
    snprintf(msg, sizeof msg, "%s: %s", file, what);
    return step_failed(msg, step);
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

/* path's JSON, or NULL and err->msg: "PATH: missing" or ph_json_load's. */
static json_t *load_json(const char *path, ph_err *err)
{
    if (access(path, F_OK) != 0) {
        snprintf(err->msg, sizeof err->msg, "%s: missing", path);
        return NULL;
    }
    return ph_json_load(path, err);
}

/* No study.json at path: say what s->dir is instead (a trace, given for its
 * study, or nothing of phantom's) and how to make what was meant. */
static int no_study(const study *s, const char *path)
{
    const char *why = ph_not_dir(s->dir); /* said as the other verbs say it of a trace */
    if (why)
        return cli_error("report", "%s: not a study directory (%s); make one with `phantom run -o DIR ...`",
                         s->dir, why);
    char *meta = study_path(s, "meta.json");
    int rc;
    if (meta && access(meta, F_OK) == 0)
        rc = cli_error("report", "%s: missing: %s is a trace, not a study; `phantom predict %s --platform FILE` "
                       "predicts it, `phantom run -o DIR ...` makes a study", path, s->dir, s->dir);
    else
        rc = cli_error("report", "%s: missing: %s is not a study; make one with `phantom run -o %s ...`",
                       path, s->dir, s->dir);
    free(meta);
    return rc;
}

static int load_study(study *s)
{
    char *path = study_path(s, "study.json");
    ph_err err;
    int rc = CLI_OK;
    if (!path)
        return cli_error("report", "out of memory");
    if (access(path, F_OK) != 0)
        rc = no_study(s, path);
    else if (!(s->sj = ph_json_load(path, &err))) /* there: load_json would look again */
        rc = cli_error("report", "%s", err.msg);
    else if (!json_is_array(json_object_get(s->sj, "predictions")) || !report_jstr(s->sj, "replay") ||
             !report_jstr(s->sj, "trace"))
        rc = cli_error("report", "%s: not a phantom study (no \"predictions\", \"trace\" or \"replay\")", path);
    free(path);
    return rc;
}

/* DIR/meta.json of the study's key (the trace, the replay) into *out. */
static int load_meta(study *s, const char *key, int step, json_t **out)
{
    char *dir = study_path(s, report_jstr(s->sj, key)), *path = NULL;
    ph_err err;
    if (dir && asprintf(&path, "%s/meta.json", dir) < 0)
        path = NULL;
    free(dir);
    if (!path)
        return cli_error("report", "out of memory");
    *out = load_json(path, &err);
    int rc = *out ? CLI_OK : step_failed(err.msg, step);
    free(path);
    return rc;
}

/* A prediction older than its platform file or the replay is stale. */
static int check_fresh(study *s, const pred *p)
{
    char *replay = study_path(s, report_jstr(s->sj, "replay")), *meta = NULL, what[1024];
    int rc = CLI_OK;
    if (asprintf(&meta, "%s/meta.json", replay) < 0)
        meta = NULL;
    long long tp = cli_mtime_ns(p->path);
    if (tp >= 0) {
        if (cli_mtime_ns(p->platform_file) > tp) {
            snprintf(what, sizeof what, "stale: older than its platform file %s", p->platform_file);
            rc = step_error(p->path, what, 5);
        } else if (cli_mtime_ns(meta) > tp) {
            snprintf(what, sizeof what, "stale: older than the replay %s", meta);
            rc = step_error(p->path, what, 5);
        }
    }
    free(replay);
    free(meta);
    return rc;
}

/* Price, currency and calibration from the prediction, else from the
 * platform file (predictions from before phantom predict wrote them). */
static int platform_facts(pred *p)
{
    json_t *price = json_object_get(p->doc, "price_per_node_hour");
    if (json_is_number(price)) {
        const char *cur = report_jstr(p->doc, "currency");
        if (cur && !simmpi_currency_ok(cur)) /* the page shows it as it is */
            return step_error(p->path, "\"currency\" is not a currency (doc/platform-format.md)", 5);
        p->price = json_number_value(price);
        p->calibrated = report_jstr(p->doc, "calibrated");
        p->cpu_share = json_number_value(json_object_get(p->doc, "cpu_share"));
        snprintf(p->currency, sizeof p->currency, "%s", cur ? cur : "");
        return CLI_OK;
    }
    simmpi_platform pf;
    ph_err err;
    if (p->platform_file && simmpi_platform_load(p->platform_file, &pf, &err) == 0) {
        p->price = pf.price_per_node_hour;
        p->cpu_share = pf.cpu_share;
        snprintf(p->currency, sizeof p->currency, "%s", pf.currency);
        if (pf.calibrated[0])
            p->calibrated = p->calib_own = strdup(pf.calibrated);
    }
    return CLI_OK;
}

static int fill_pred(study *s, const json_t *e, pred *p)
{
    const json_t *wi = json_object_get(e, "what_if");
    p->platform = report_jstr(e, "platform");
    p->file = report_jstr(e, "file");
    p->platform_file = report_jstr(e, "platform_file");
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
    ph_err err;
    p->path = study_path(s, p->file);
    if (!(p->doc = load_json(p->path, &err)))
        return step_failed(err.msg, 5);
    if (!json_is_number(json_object_get(p->doc, "predicted_s")))
        return step_error(p->path, "no \"predicted_s\": not the output of phantom predict --json", 5);
    p->time = json_number_value(json_object_get(p->doc, "predicted_s"));
    p->cost = json_number_value(json_object_get(p->doc, "cost"));
    if (!p->platform_file)
        p->platform_file = report_jstr(p->doc, "platform_file");
    rc = platform_facts(p);
    return rc == CLI_OK ? check_fresh(s, p) : rc;
}

static int by_platform_nodes(const void *a, const void *b)
{
    const pred *x = *(pred *const *)a, *y = *(pred *const *)b;
    int c = strcmp(x->platform, y->platform);
    return c ? c : (x->nodes > y->nodes) - (x->nodes < y->nodes);
}

/* The one currency of the priced platforms that say theirs (a file that
 * does not say is taken to mean it): costs in two cannot be compared. */
static int study_currency(study *s)
{
    const pred *first = NULL;
    s->currency = "";
    for (size_t i = 0; i < s->nbase; i++) {
        const pred *p = s->base[i];
        if (!(p->price > 0) || !p->currency[0])
            continue;
        if (first && strcmp(p->currency, first->currency) != 0)
            return cli_error("report", "%s prices in %s, %s in %s: costs in two currencies cannot be "
                             "compared (set one currency in both; doc/platform-format.md)",
                             first->platform_file ? first->platform_file : first->platform, first->currency,
                             p->platform_file ? p->platform_file : p->platform, p->currency);
        first = first ? first : p;
        s->currency = first->currency;
    }
    return CLI_OK;
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
    return study_currency(s);
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

/* "4 nodes of ib-qdr" */
static const char *fmt_choice(const pred *p, char *buf, size_t cap)
{
    snprintf(buf, cap, "%lld node%s of %s", (long long)p->nodes, p->nodes == 1 ? "" : "s", p->platform);
    return buf;
}

static void say_deadline(study *s, pred *met)
{
    char c[160], f[160], t[32], m[32], d[32];
    report_fmt_time(s->o->deadline, d, sizeof d);
    if (met) {
        s->rec = met;
        s->basis = "deadline";
        snprintf(s->reason, sizeof s->reason, "Rent %s: the cheapest choice (%s a run) that meets the "
                 "deadline of %s, with a predicted time of %s.", fmt_choice(met, c, sizeof c),
                 report_fmt_money(met->cost, s->currency, m, sizeof m), d, report_fmt_time(met->time, t, sizeof t));
        return;
    }
    s->rec = s->fastest;
    s->basis = "deadline missed";
    snprintf(s->reason, sizeof s->reason, "Rent %s: no choice meets the deadline of %s, and this is "
             "the fastest (%s, %s a run).", fmt_choice(s->rec, f, sizeof f), d,
             report_fmt_time(s->rec->time, t, sizeof t), report_fmt_money(s->rec->cost, s->currency, m, sizeof m));
}

static void say_within(study *s, pred *p)
{
    char c[160], f[160], t[32], tf[32], m[32];
    s->rec = p;
    s->basis = "within";
    if (p == s->fastest)
        snprintf(s->reason, sizeof s->reason, "Rent %s: the fastest choice (%s), and the cheapest "
                 "within %g%% of it (%s a run).", fmt_choice(p, c, sizeof c),
                 report_fmt_time(p->time, t, sizeof t), s->o->within, report_fmt_money(p->cost, s->currency, m, sizeof m));
    else
        snprintf(s->reason, sizeof s->reason, "Rent %s: the cheapest choice (%s a run) whose predicted "
                 "time, %s, is within %g%% of the fastest (%s on %s).", fmt_choice(p, c, sizeof c),
                 report_fmt_money(p->cost, s->currency, m, sizeof m), report_fmt_time(p->time, t, sizeof t), s->o->within,
                 report_fmt_time(s->fastest->time, tf, sizeof tf), fmt_choice(s->fastest, f, sizeof f));
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
                 fmt_choice(s->rec, c, sizeof c), report_fmt_time(s->rec->time, t, sizeof t));
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
        json_t *e = json_pack("{s:s, s:s?, s:f, s:b, s:s?}", "name", p->platform, "file", p->platform_file,
                              "price_per_node_hour", p->price, "priced", priced(p), "calibrated", p->calibrated);
        json_object_set_new(e, "currency", p->currency[0] ? json_string(p->currency) : json_null());
        json_object_set_new(e, "cpu_share", p->cpu_share > 0 ? json_real(p->cpu_share) : json_null());
        json_array_append_new(a, e);
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
    /* of that, failed polls (charged as many times as the recording polled)
     * and waits in Tests the recording saw succeed (0 in predictions from
     * before phantom predict reported them) */
    const json_t *sim = json_object_get(p->doc, "simulator");
    double polls = json_number_value(json_object_get(sim, "failed_poll_share"));
    double test_wait = json_number_value(json_object_get(sim, "test_wait_share"));
    double credit = json_number_value(json_object_get(sim, "test_wait_credit_share"));
    return json_pack("{s:s, s:I, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "platform", p->platform,
                     "nodes", p->nodes, "at", at, "comp_s", comp, "comm_s", comm, "wait_s", wait, "comp_share",
                     comp / d, "comm_share", comm / d, "wait_share", wait / d, "failed_poll_share", polls,
                     "test_wait_share", test_wait, "test_wait_credit_share", credit);
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
        const char *where = report_jstr(v[i], "where"), *call = report_jstr(v[i], "call");
        json_array_append_new(a, json_pack("{s:s, s:s, s:I, s:f, s:f, s:f}", "where", where ? where : "?", "call",
                                           call ? call : "?", "calls",
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

/* "rank 0 (39%), rank 1 (52%)": the ranks whose replay shared their cores
 * (phantom replay's shared_cpu, doc/replay.md "A busy node"), the first
 * eight and how many more; "" for none. */
static void shared_text(const json_t *per_rank, char *buf, size_t cap)
{
    enum { SHOWN = 8 };
    size_t i, len = 0, n = 0;
    json_t *r;
    buf[0] = 0;
    json_array_foreach(per_rank, i, r) {
        if (!json_is_true(json_object_get(r, "shared_cpu")) || n++ >= SHOWN || len >= cap)
            continue;
        len += (size_t)snprintf(buf + len, cap - len, "%srank %lld (%.0f%%)", len ? ", " : "",
                                (long long)json_integer_value(json_object_get(r, "rank")),
                                100 * json_number_value(json_object_get(r, "cpu_busy")));
    }
    if (n > SHOWN && len < cap)
        snprintf(buf + len, cap - len, " and %zu more", n - SHOWN);
}

static json_t *replay_json(const study *s)
{
    json_t *runs = json_array(), *r;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(s->replay_meta, "replay"), "replays"), i, r) {
        char it[1024], shared[1024];
        iterations_text(json_object_get(r, "per_rank"), it, sizeof it);
        shared_text(json_object_get(r, "per_rank"), shared, sizeof shared);
        json_array_append_new(runs, json_pack("{s:s?, s:s?, s:s?, s:s, s:s?}", "ranks", report_jstr(r, "ranks"),
                                              "mode", report_jstr(r, "mode"), "date", report_jstr(r, "date"),
                                              "iterations", it, "shared_cpu", shared[0] ? shared : NULL));
    }
    return json_pack("{s:s, s:o}", "path", report_jstr(s->sj, "replay"), "runs", runs);
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
    return json_pack("{s:{s:s, s:s?, s:s?, s:s?, s:s?}, s:o, s:o}", "trace", "path", report_jstr(s->sj, "trace"),
                     "host", report_jstr(tm, "host"), "mpi", report_jstr(json_object_get(tm, "mpi"), "library"), "command",
                     report_jstr(tm, "command"), "recorded", report_jstr(tm, "start_time"), "replay", replay_json(s),
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
    json_object_set_new(s->out, "currency", s->currency[0] ? json_string(s->currency) : json_null());
    json_object_set_new(s->out, "configs", configs_json(s));
    json_object_set_new(s->out, "recommendation", rec_json(s));
    json_object_set_new(s->out, "breakdown", breakdown_json(s));
    json_object_set_new(s->out, "hot_spots", hot_spots_json(s));
    json_object_set_new(s->out, "what_if", what_if_json(s));
    json_object_set_new(s->out, "provenance", provenance_json(s));
    /* one trace behind every prediction: the first's list (none from a phantom before it) */
    const json_t *untraced = s->nbase ? json_object_get(s->base[0]->doc, "untraced") : NULL;
    json_object_set_new(s->out, "untraced", json_is_array(untraced) ? json_deep_copy(untraced) : json_array());
}

/* ---- writing --------------------------------------------------------------------------------------------- */

typedef void (*writer)(FILE *f, const json_t *r);

static void write_json(FILE *f, const json_t *r)
{
    ph_json_dumpf(r, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', f);
}

typedef struct page {
    writer w;
    const json_t *r;
} page;

static int write_page(FILE *f, const void *ctx)
{
    const page *p = ctx;
    p->w(f, p->r);
    return 0;
}

/* Never half a file (ph_file_save). */
static int write_file(const char *path, writer w, const json_t *r)
{
    page p = {w, r};
    ph_err err;
    return ph_file_save(path, write_page, &p, &err) < 0 ? cli_error("report", "%s", err.msg) : CLI_OK;
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
    static const writer w[3] = {report_write_html, report_write_md, write_json};
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
